/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_HDR_H
#define SM_HDR_H

/*
 * HdrHistogram in C: the bucket layout, percentile and statistics
 * definitions, compressed "V2" encoding and interval log format of the Java
 * reference (org.HdrHistogram, as used by cassandra-stress), so that logs we
 * write open in HistogramLogProcessor and hdrh, and logs they write merge
 * here. Debian packages no C HdrHistogram, hence this one.
 *
 * The counts array has the same layout as HdrHistogram's (same
 * sub_bucket_count, unit_magnitude, counts_len for the same lowest, highest
 * and significant figures), which is what makes the encoding compatible.
 *
 * A histogram is single-writer: one per shard, recorded without locks or
 * allocation, merged with sm_hdr_add() at report time. Percentiles of a
 * merged run come from the merged counts, never from averaging per-shard
 * percentiles.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sm_common.h"

/*
 * Ratio by which the log writer divides a histogram's max for the
 * Interval_Max column: HistogramLogWriter's default (nanoseconds recorded,
 * milliseconds shown), which is what cassandra-stress logs carry.
 */
#define SM_HDR_LOG_MAX_RATIO 1000000.0

struct sm_hdr {
	int64_t lowest;	  /* lowest discernible value, >= 1 */
	int64_t highest;  /* highest trackable value; larger values are clamped to it */
	int32_t sig_figs; /* significant decimal digits kept, 1..5 */
	/* bucket layout, derived exactly as HdrHistogram does */
	int32_t unit_magnitude;
	int32_t sub_bucket_half_count_magnitude;
	int32_t sub_bucket_half_count;
	int32_t sub_bucket_count;
	int32_t bucket_count;
	int32_t counts_len;
	int64_t sub_bucket_mask;
	/* recorded state */
	int64_t total_count;
	int64_t min;	  /* smallest non-zero value recorded, INT64_MAX when none */
	int64_t max;	  /* largest value recorded, 0 when none */
	int64_t overflow; /* counts recorded above highest, clamped to highest */
	int64_t *counts;
};

/*
 * Initialise @h to track values in [0, @highest] with @sig_figs significant
 * digits, values below @lowest (>= 1) being indistinguishable from each
 * other. The counts array is allocated here, once, so that recording never
 * allocates. Returns 0, -EINVAL when @lowest < 1, @sig_figs is outside 1..5,
 * @highest < 2 * @lowest or the layout would not fit in 64 bits, or -ENOMEM.
 */
int
sm_hdr_init(struct sm_hdr *h, int64_t lowest, int64_t highest, int sig_figs);

/* Free the counts of @h (initialised or zeroed) and zero it. */
void
sm_hdr_fini(struct sm_hdr *h);

/* Forget everything recorded in @h, keeping its range and allocation. */
void
sm_hdr_reset(struct sm_hdr *h);

/*
 * Index in @h->counts of the bucket holding @v (0 <= @v <= @h->highest):
 * HdrHistogram_c's counts_index_for(), the bucket found from the count of
 * leading zeros so that recording costs no loop and no division. The OR
 * with sub_bucket_mask keeps the argument of clz non-zero.
 */
static inline int32_t
sm_hdr_index(const struct sm_hdr *h, int64_t v)
{
	int32_t bucket = 63 - __builtin_clzll((uint64_t)v | (uint64_t)h->sub_bucket_mask) -
			 h->unit_magnitude - h->sub_bucket_half_count_magnitude;
	int32_t sub = (int32_t)(v >> (bucket + h->unit_magnitude));

	return ((bucket + 1) << h->sub_bucket_half_count_magnitude) + sub -
	       h->sub_bucket_half_count;
}

/*
 * Record @n occurrences of @v in @h: O(1), no allocation, no lock (one
 * writer per histogram). A negative @v or @n is rejected with false. A @v
 * above @h->highest is not lost: it is counted at @h->highest and the @n
 * added to @h->overflow, so totals stay right and the clamping is visible.
 */
static inline bool
sm_hdr_record_n(struct sm_hdr *h, int64_t v, int64_t n)
{
	int64_t nz;

	if (SM_UNLIKELY((v | n) < 0))
		return false;
	if (SM_UNLIKELY(v > h->highest)) {
		v = h->highest;
		h->overflow += n;
	}
	h->counts[sm_hdr_index(h, v)] += n;
	h->total_count += n;
	h->max = v > h->max ? v : h->max;
	/* zero is not a candidate minimum, as in HdrHistogram's minNonZeroValue */
	nz = v != 0 ? v : INT64_MAX;
	h->min = nz < h->min ? nz : h->min;
	return true;
}

/* Record one occurrence of @v in @h; see sm_hdr_record_n(). */
static inline bool
sm_hdr_record(struct sm_hdr *h, int64_t v)
{
	return sm_hdr_record_n(h, v, 1);
}

/*
 * Add every count of @src into @dst, as HdrHistogram's add(): counts are
 * added index by index when both share a bucket layout, else each non-empty
 * bucket of @src is re-recorded into @dst at its lowest equivalent value.
 * Counts in buckets above the one holding @dst->highest are clamped to it
 * (sm_hdr_record_n()) and @src->overflow carries over. Returns how many
 * counts of @src this call clamped, 0 when @dst covers @src's range.
 */
int64_t
sm_hdr_add(struct sm_hdr *dst, const struct sm_hdr *src);

/*
 * Lowest value counted at index @i (0 <= @i < @h->counts_len) of
 * @h->counts: the inverse of sm_hdr_index(), for walking non-empty buckets.
 */
int64_t
sm_hdr_value_at_index(const struct sm_hdr *h, int32_t i);

/* Number of recorded values that share the bucket of @v. */
int64_t
sm_hdr_count_at(const struct sm_hdr *h, int64_t v);

/* Smallest value that @h cannot tell apart from @v. */
int64_t
sm_hdr_lowest_equivalent(const struct sm_hdr *h, int64_t v);

/* Largest value that @h cannot tell apart from @v. */
int64_t
sm_hdr_highest_equivalent(const struct sm_hdr *h, int64_t v);

/*
 * Value at percentile @p (0..100) with the Java reference's definition
 * (AbstractHistogram.getValueAtPercentile): the highest equivalent value of
 * the first bucket at which the running count reaches ceil(@p * total / 100)
 * (at least 1), so that at least @p percent of the values are at or below
 * it; the lowest equivalent value for @p == 0; 0 when @h is empty.
 * HdrHistogram_c rounds the count to nearest instead, which can answer one
 * bucket lower; cassandra-stress uses the Java one.
 */
int64_t
sm_hdr_value_at_percentile(const struct sm_hdr *h, double p);

/*
 * Smallest recorded value as HdrHistogram reports it: 0 if the first bucket
 * holds anything or nothing was recorded, else the lowest equivalent value
 * of the smallest non-zero value.
 */
int64_t
sm_hdr_min(const struct sm_hdr *h);

/*
 * Largest recorded value as HdrHistogram reports it: the highest value
 * equivalent to it (so never below the true maximum), or 0 when empty.
 */
int64_t
sm_hdr_max(const struct sm_hdr *h);

/* Mean, each bucket counted at its median equivalent value (as the reference); 0 when empty. */
double
sm_hdr_mean(const struct sm_hdr *h);

/* Population standard deviation over bucket median values (as the reference); 0 when empty. */
double
sm_hdr_stddev(const struct sm_hdr *h);

/*
 * Encode @h in HdrHistogram's compressed V2 form, base64: what
 * Histogram.encodeIntoCompressedByteBuffer + base64 produce, byte for byte
 * (zig-zag LEB128 counts, runs of zeros as negative lengths, DEFLATE at
 * best compression as HistogramLogWriter uses). *@out is malloc'd and
 * NUL-terminated (free it with sm_free()), *@len its length. Returns 0 or
 * -ENOMEM.
 */
int
sm_hdr_encode_base64(const struct sm_hdr *h, char **out, size_t *len);

/*
 * Decode @len bytes of base64 compressed V2 (as any HdrHistogram
 * implementation writes) into @out, which this initialises with the range
 * the encoding carries; the caller sm_hdr_fini()s it. min, max and the total
 * are rebuilt from the counts, so they are bucket-exact, not value-exact.
 * Returns 0, -ENOTSUP for the pre-2015 V0/V1 encodings, -EINVAL for
 * anything malformed, or -ENOMEM.
 */
int
sm_hdr_decode_base64(const char *b64, size_t len, struct sm_hdr *out);

/*
 * Write the head of an interval log as HistogramLogWriter does: "#@comment"
 * when @comment is not NULL, "#[Histogram log format version 1.3]",
 * "#[StartTime: <@start_epoch_s %.3f> (seconds since epoch), <UTC date>]"
 * and the CSV legend. Timestamps given to sm_hdr_log_write() are then
 * seconds since @start_epoch_s, which every reader (the reference's rule:
 * a timestamp more than a year before StartTime is relative to it) adds
 * back. Returns 0 or -EIO.
 */
int
sm_hdr_log_write_header(FILE *f, const char *comment, double start_epoch_s);

/*
 * Append one interval to a log: "[Tag=@tag,]<@start_s>,<@length_s>,<max /
 * SM_HDR_LOG_MAX_RATIO>,<base64 of @h>" with %.3f numbers, as
 * HistogramLogWriter. A NULL or empty @tag writes an untagged line. Returns
 * 0, -EINVAL when @tag holds a comma, space or line break (the reference
 * rejects those too: they would split the line), -ENOMEM or -EIO.
 */
int
sm_hdr_log_write(FILE *f, const char *tag, double start_s, double length_s, const struct sm_hdr *h);

/*
 * Called by sm_hdr_log_read() for each interval: @tag is NULL for an
 * untagged line, @start_s the absolute start (seconds since the epoch when
 * the log says where it starts); @tag and @h are valid only during the
 * call. A non-zero return stops the read and is returned by it.
 */
typedef int (*sm_hdr_log_fn)(const char *tag, double start_s, double length_s,
			     const struct sm_hdr *h, void *arg);

/*
 * Read an interval log (ours, HistogramLogWriter's, jHiccup's,
 * cassandra-stress's) from @f, calling @fn for each interval. Comment lines
 * are skipped except "#[StartTime: " and "#[BaseTime: ", which set how
 * timestamps become absolute as the reference reader does (BaseTime is
 * added when given; otherwise StartTime is, if the first timestamp is more
 * than a year before it; a log with neither is taken as absolute); the
 * legend line is skipped. Returns 0, what @fn returned, -EINVAL for a
 * malformed line with "line N: why" in @err (@errlen bytes, may be 0),
 * -ENOTSUP for a pre-V2 encoding, -ENOMEM or -EIO.
 */
int
sm_hdr_log_read(FILE *f, sm_hdr_log_fn fn, void *arg, char *err, size_t errlen);

#endif /* SM_HDR_H */
