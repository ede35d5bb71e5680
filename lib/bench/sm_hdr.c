/* SPDX-License-Identifier: BSD-3-Clause */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ZLIB_CONST
#include <zlib.h>

#include "sm_byteorder.h"
#include "sm_hdr.h"
#include "sm_mem.h"

/*
 * HdrHistogram's encoding cookies. The 0xf0 nibble carries a word size (V2
 * writes 0x10) and is ignored when matching, as every implementation does.
 */
#define V0_COMPRESSED_COOKIE 0x1c849309u
#define V1_COMPRESSED_COOKIE 0x1c849302u
#define V2_ENCODING_COOKIE 0x1c849303u
#define V2_COMPRESSED_COOKIE 0x1c849304u
#define COOKIE_BASE(c) ((c) & ~0xf0u)
#define V2_WORD_SIZE 0x10u

/*
 * V2 payload header: cookie, payload length, normalizing index offset,
 * significant figures (4 bytes each), lowest, highest, integer to double
 * conversion ratio (8 bytes each), all big-endian. The compressed wrapper
 * is a cookie and the DEFLATE length.
 */
#define V2_HEADER_LEN 40
#define WRAPPER_LEN 8
#define LEB128_MAX 9				    /* 8 groups of 7 bits, then a full byte */
#define RATIO_ONE_BITS UINT64_C(0x3ff0000000000000) /* 1.0 */

#define SECONDS_PER_YEAR (365 * 24 * 3600.0)

int
sm_hdr_init(struct sm_hdr *h, int64_t lowest, int64_t highest, int sig_figs)
{
	int64_t single_unit = 2, limit;
	int32_t mag = 0;
	int i;

	memset(h, 0, sizeof(*h));
	if (lowest < 1 || sig_figs < 1 || sig_figs > 5 || highest / 2 < lowest)
		return -EINVAL;
	/*
	 * Sub-buckets enough for single-unit resolution up to 2 * 10^sig_figs:
	 * the reference's ceil(log2(2 * 10^sig_figs)) and floor(log2(lowest)),
	 * in integers (no power of 10 here is a power of 2, so they agree).
	 */
	for (i = 0; i < sig_figs; i++)
		single_unit *= 10;
	while ((INT64_C(1) << mag) < single_unit)
		mag++;
	h->sub_bucket_half_count_magnitude = (mag > 1 ? mag : 1) - 1;
	h->unit_magnitude = 63 - __builtin_clzll((uint64_t)lowest);
	if (h->unit_magnitude + h->sub_bucket_half_count_magnitude > 61)
		return -EINVAL;
	h->sub_bucket_count = 1 << (h->sub_bucket_half_count_magnitude + 1);
	h->sub_bucket_half_count = h->sub_bucket_count / 2;
	h->sub_bucket_mask = ((int64_t)h->sub_bucket_count - 1) << h->unit_magnitude;
	/* buckets_needed_to_cover_value(): each bucket doubles the range */
	limit = (int64_t)h->sub_bucket_count << h->unit_magnitude;
	h->bucket_count = 1;
	while (limit <= highest) {
		h->bucket_count++;
		if (limit > INT64_MAX / 2)
			break;
		limit <<= 1;
	}
	h->counts_len = (h->bucket_count + 1) * h->sub_bucket_half_count;
	h->lowest = lowest;
	h->highest = highest;
	h->sig_figs = sig_figs;
	h->min = INT64_MAX;
	h->counts = sm_calloc((size_t)h->counts_len, sizeof(int64_t));
	if (h->counts == NULL) {
		memset(h, 0, sizeof(*h));
		return -ENOMEM;
	}
	return 0;
}

void
sm_hdr_fini(struct sm_hdr *h)
{
	sm_free(h->counts);
	memset(h, 0, sizeof(*h));
}

void
sm_hdr_reset(struct sm_hdr *h)
{
	memset(h->counts, 0, (size_t)h->counts_len * sizeof(int64_t));
	h->total_count = 0;
	h->min = INT64_MAX;
	h->max = 0;
	h->overflow = 0;
}

static int32_t
bucket_of(const struct sm_hdr *h, int64_t v)
{
	return 63 - __builtin_clzll((uint64_t)v | (uint64_t)h->sub_bucket_mask) -
	       h->unit_magnitude - h->sub_bucket_half_count_magnitude;
}

/* Lowest value counted at index @i: HdrHistogram_c's hdr_value_at_index(). */
static int64_t
value_at_index(const struct sm_hdr *h, int32_t i)
{
	int32_t bucket = (i >> h->sub_bucket_half_count_magnitude) - 1;
	int32_t sub = (i & (h->sub_bucket_half_count - 1)) + h->sub_bucket_half_count;

	/* the first sub_bucket_count indexes are all bucket 0, from sub-bucket 0 */
	if (bucket < 0) {
		sub -= h->sub_bucket_half_count;
		bucket = 0;
	}
	return (int64_t)sub << (bucket + h->unit_magnitude);
}

int64_t
sm_hdr_value_at_index(const struct sm_hdr *h, int32_t i)
{
	return value_at_index(h, i);
}

int64_t
sm_hdr_lowest_equivalent(const struct sm_hdr *h, int64_t v)
{
	int32_t bucket;

	if (v < 0)
		v = 0;
	bucket = bucket_of(h, v);
	return (v >> (bucket + h->unit_magnitude)) << (bucket + h->unit_magnitude);
}

static int64_t
range_size(const struct sm_hdr *h, int64_t v)
{
	return INT64_C(1) << (bucket_of(h, v < 0 ? 0 : v) + h->unit_magnitude);
}

int64_t
sm_hdr_highest_equivalent(const struct sm_hdr *h, int64_t v)
{
	/* unsigned: the bucket holding INT64_MAX ends exactly at 2^63 */
	return (int64_t)((uint64_t)sm_hdr_lowest_equivalent(h, v) + (uint64_t)range_size(h, v) - 1);
}

static int64_t
median_equivalent(const struct sm_hdr *h, int64_t v)
{
	return sm_hdr_lowest_equivalent(h, v) + (range_size(h, v) >> 1);
}

int64_t
sm_hdr_count_at(const struct sm_hdr *h, int64_t v)
{
	int32_t i;

	if (v < 0)
		return 0;
	i = sm_hdr_index(h, v);
	return i < h->counts_len ? h->counts[i] : 0;
}

int64_t
sm_hdr_add(struct sm_hdr *dst, const struct sm_hdr *src)
{
	int64_t before = dst->overflow, sum = 0, clamped;
	int32_t i = 0, direct;

	if (dst->unit_magnitude == src->unit_magnitude &&
	    dst->sub_bucket_half_count_magnitude == src->sub_bucket_half_count_magnitude) {
		/*
		 * Same layout, so an index means the same values in both: add
		 * the counts directly up to dst's highest and take src's exact
		 * min and max; what lies beyond is re-recorded (and clamped)
		 * below.
		 */
		direct = sm_hdr_index(dst, dst->highest) + 1;
		if (direct > src->counts_len)
			direct = src->counts_len;
		for (; i < direct; i++) {
			dst->counts[i] += src->counts[i];
			sum += src->counts[i];
		}
		dst->total_count += sum;
		if (sum > 0) {
			dst->max = SM_MAX(dst->max, SM_MIN(src->max, dst->highest));
			if (src->min <= dst->highest)
				dst->min = SM_MIN(dst->min, src->min);
		}
	}
	for (; i < src->counts_len; i++)
		if (src->counts[i] > 0)
			sm_hdr_record_n(dst, value_at_index(src, i), src->counts[i]);
	clamped = dst->overflow - before;
	dst->overflow += src->overflow;
	return clamped;
}

int64_t
sm_hdr_value_at_percentile(const struct sm_hdr *h, double p)
{
	/* one ulp down so that fp error in p * total never skips a count */
	double req = nextafter(p, -INFINITY);
	int64_t target, run = 0, v;
	int32_t i;

	if (!(req > 0))
		req = 0;
	if (req > 100)
		req = 100;
	target = (int64_t)ceil(req * (double)h->total_count / 100.0);
	if (target < 1)
		target = 1;
	for (i = 0; i < h->counts_len; i++) {
		run += h->counts[i];
		if (run >= target) {
			v = value_at_index(h, i);
			return p == 0.0 ? sm_hdr_lowest_equivalent(h, v)
					: sm_hdr_highest_equivalent(h, v);
		}
	}
	return 0;
}

int64_t
sm_hdr_min(const struct sm_hdr *h)
{
	if (h->total_count == 0 || h->counts[0] > 0)
		return 0;
	return sm_hdr_lowest_equivalent(h, h->min);
}

int64_t
sm_hdr_max(const struct sm_hdr *h)
{
	return h->max == 0 ? 0 : sm_hdr_highest_equivalent(h, h->max);
}

double
sm_hdr_mean(const struct sm_hdr *h)
{
	double sum = 0;
	int32_t i;

	if (h->total_count == 0)
		return 0;
	for (i = 0; i < h->counts_len; i++)
		if (h->counts[i] > 0)
			sum += (double)h->counts[i] *
			       (double)median_equivalent(h, value_at_index(h, i));
	return sum / (double)h->total_count;
}

double
sm_hdr_stddev(const struct sm_hdr *h)
{
	double mean = sm_hdr_mean(h), sq = 0, d;
	int32_t i;

	if (h->total_count == 0)
		return 0;
	for (i = 0; i < h->counts_len; i++) {
		if (h->counts[i] > 0) {
			d = (double)median_equivalent(h, value_at_index(h, i)) - mean;
			sq += d * d * (double)h->counts[i];
		}
	}
	return sqrt(sq / (double)h->total_count);
}

/* ---- compressed V2 encoding ---- */

/* ZigZag LEB128 as the reference's ZigZagEncoding: the 9th byte keeps all 8 bits. */
static size_t
zz_put(uint8_t *p, int64_t v)
{
	uint64_t u = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
	size_t n = 0;

	while (n < LEB128_MAX - 1 && u >= 0x80) {
		p[n++] = (uint8_t)(u | 0x80);
		u >>= 7;
	}
	p[n++] = (uint8_t)u;
	return n;
}

static int
zz_get(const uint8_t *p, size_t len, size_t *pos, int64_t *v)
{
	uint64_t u = 0, b;
	int i;

	for (i = 0; i < LEB128_MAX; i++) {
		if (*pos >= len)
			return -EINVAL;
		b = p[(*pos)++];
		if (i == LEB128_MAX - 1) {
			u |= b << 56;
			break;
		}
		u |= (b & 0x7f) << (7 * i);
		if (!(b & 0x80))
			break;
	}
	*v = (int64_t)((u >> 1) ^ (0 - (u & 1)));
	return 0;
}

static int
encode(const struct sm_hdr *h, uint8_t **out, size_t *outlen)
{
	int32_t limit = h->counts_len, i = 0;
	uint8_t *raw, *buf = NULL;
	int64_t c, zeros;
	size_t n = V2_HEADER_LEN;
	uLongf zlen;
	int rc = -ENOMEM;

	/*
	 * Counts up to the last non-empty one, at least one: where the
	 * reference stops (the index of its max), so the bytes are the same.
	 */
	while (limit > 1 && h->counts[limit - 1] == 0)
		limit--;
	raw = sm_malloc(V2_HEADER_LEN + (size_t)limit * LEB128_MAX);
	if (raw == NULL)
		return -ENOMEM;
	while (i < limit) {
		c = h->counts[i++];
		zeros = 0;
		if (c == 0)
			for (zeros = 1; i < limit && h->counts[i] == 0; i++)
				zeros++;
		/* the reference writes a lone zero as a count, longer runs as -length */
		n += zz_put(raw + n, zeros > 1 ? -zeros : c);
	}
	sm_put_be32(raw, V2_ENCODING_COOKIE | V2_WORD_SIZE);
	sm_put_be32(raw + 4, (uint32_t)(n - V2_HEADER_LEN));
	sm_put_be32(raw + 8, 0); /* normalizing index offset: we never shift */
	sm_put_be32(raw + 12, (uint32_t)h->sig_figs);
	sm_put_be64(raw + 16, (uint64_t)h->lowest);
	sm_put_be64(raw + 24, (uint64_t)h->highest);
	sm_put_be64(raw + 32, RATIO_ONE_BITS);

	zlen = compressBound(n);
	buf = sm_malloc(WRAPPER_LEN + zlen);
	if (buf == NULL)
		goto free_raw;
	/* best compression, as HistogramLogWriter: same zlib, same bytes */
	if (compress2(buf + WRAPPER_LEN, &zlen, raw, n, Z_BEST_COMPRESSION) != Z_OK)
		goto free_buf;
	sm_put_be32(buf, V2_COMPRESSED_COOKIE | V2_WORD_SIZE);
	sm_put_be32(buf + 4, (uint32_t)zlen);
	*out = buf;
	*outlen = WRAPPER_LEN + zlen;
	buf = NULL;
	rc = 0;
free_buf:
	sm_free(buf);
free_raw:
	sm_free(raw);
	return rc;
}

static const char b64_alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int
sm_hdr_encode_base64(const struct sm_hdr *h, char **out, size_t *len)
{
	uint8_t *bin;
	size_t n, i, o = 0;
	uint32_t w;
	char *s;
	int rc;

	rc = encode(h, &bin, &n);
	if (rc)
		return rc;
	s = sm_malloc(4 * ((n + 2) / 3) + 1);
	if (s == NULL) {
		sm_free(bin);
		return -ENOMEM;
	}
	for (i = 0; i < n; i += 3) {
		w = (uint32_t)bin[i] << 16;
		if (i + 1 < n)
			w |= (uint32_t)bin[i + 1] << 8;
		if (i + 2 < n)
			w |= bin[i + 2];
		s[o++] = b64_alphabet[w >> 18];
		s[o++] = b64_alphabet[(w >> 12) & 63];
		s[o++] = i + 1 < n ? b64_alphabet[(w >> 6) & 63] : '=';
		s[o++] = i + 2 < n ? b64_alphabet[w & 63] : '=';
	}
	s[o] = '\0';
	sm_free(bin);
	*out = s;
	*len = o;
	return 0;
}

static int
b64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	return c == '/' ? 63 : -1;
}

/* Padding is optional: some writers (hdrhistogram-go) leave it out. */
static int
b64_decode(const char *s, size_t len, uint8_t **out, size_t *outlen)
{
	uint32_t acc = 0;
	size_t i, n = 0;
	uint8_t *buf;
	int bits = 0, v;

	while (len > 0 && s[len - 1] == '=')
		len--;
	if (len % 4 == 1)
		return -EINVAL;
	buf = sm_malloc(len / 4 * 3 + 2);
	if (buf == NULL)
		return -ENOMEM;
	for (i = 0; i < len; i++) {
		v = b64_value(s[i]);
		if (v < 0) {
			sm_free(buf);
			return -EINVAL;
		}
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			buf[n++] = (uint8_t)(acc >> bits);
		}
	}
	*out = buf;
	*outlen = n;
	return 0;
}

/* Fill @h->counts from @plen bytes of zig-zag counts, then rebuild total, min and max. */
static int
fill_counts(struct sm_hdr *h, const uint8_t *p, size_t plen)
{
	int32_t i = 0, min_i = -1, max_i = -1;
	int64_t v, total = 0;
	size_t pos = 0;

	while (pos < plen) {
		if (zz_get(p, plen, &pos, &v))
			return -EINVAL;
		if (v < 0) {
			if (v == INT64_MIN || -v > h->counts_len - i)
				return -EINVAL;
			i += (int32_t)-v;
		} else {
			if (i >= h->counts_len)
				return -EINVAL;
			h->counts[i++] = v;
		}
	}
	/* as HdrHistogram_c's hdr_reset_internal_counters(): bucket-exact min and max */
	for (i = 0; i < h->counts_len; i++) {
		if (h->counts[i] == 0)
			continue;
		if (__builtin_add_overflow(total, h->counts[i], &total))
			return -EINVAL;
		max_i = i;
		if (min_i < 0 && i != 0)
			min_i = i;
	}
	h->total_count = total;
	h->max = max_i < 0 ? 0 : sm_hdr_highest_equivalent(h, value_at_index(h, max_i));
	h->min = min_i < 0 ? INT64_MAX : value_at_index(h, min_i);
	return 0;
}

static int
decode(const uint8_t *buf, size_t len, struct sm_hdr *out)
{
	uint8_t head[V2_HEADER_LEN], *payload = NULL;
	z_stream zs;
	uint32_t cookie;
	int32_t zlen, plen;
	int rc, zrc;

	memset(out, 0, sizeof(*out));
	if (len < WRAPPER_LEN)
		return -EINVAL;
	cookie = COOKIE_BASE(sm_get_be32(buf));
	if (cookie == V0_COMPRESSED_COOKIE || cookie == V1_COMPRESSED_COOKIE)
		return -ENOTSUP;
	zlen = (int32_t)sm_get_be32(buf + 4);
	if (cookie != V2_COMPRESSED_COOKIE || zlen < 0 || (size_t)zlen > len - WRAPPER_LEN)
		return -EINVAL;

	memset(&zs, 0, sizeof(zs));
	if (inflateInit(&zs) != Z_OK)
		return -ENOMEM;
	zs.next_in = buf + WRAPPER_LEN;
	zs.avail_in = (uInt)zlen;
	zs.next_out = head;
	zs.avail_out = sizeof(head);
	zrc = inflate(&zs, Z_SYNC_FLUSH);
	rc = -EINVAL;
	if ((zrc != Z_OK && zrc != Z_STREAM_END) || zs.avail_out != 0 ||
	    COOKIE_BASE(sm_get_be32(head)) != V2_ENCODING_COOKIE)
		goto end_inflate;
	/*
	 * The normalizing index offset and conversion ratio are not read: the
	 * counts are in logical index order whatever they say, only
	 * DoubleHistogram sets them, and HdrHistogramJS writes stray bits there.
	 */
	rc = sm_hdr_init(out, (int64_t)sm_get_be64(head + 16), (int64_t)sm_get_be64(head + 24),
			 (int)sm_get_be32(head + 12));
	if (rc)
		goto end_inflate;
	rc = -EINVAL;
	plen = (int32_t)sm_get_be32(head + 4);
	if (plen < 0 || (int64_t)plen > (int64_t)out->counts_len * LEB128_MAX)
		goto fini;
	/* one spare byte: a stream longer than its payload length would fill it */
	payload = sm_malloc((size_t)plen + 1);
	if (payload == NULL) {
		rc = -ENOMEM;
		goto fini;
	}
	zs.next_out = payload;
	zs.avail_out = (uInt)plen + 1;
	if (zrc != Z_STREAM_END)
		zrc = inflate(&zs, Z_FINISH);
	if (zrc != Z_STREAM_END || zs.avail_out != 1)
		goto fini;
	rc = fill_counts(out, payload, (size_t)plen);
fini:
	sm_free(payload);
	if (rc)
		sm_hdr_fini(out);
end_inflate:
	inflateEnd(&zs);
	return rc;
}

int
sm_hdr_decode_base64(const char *b64, size_t len, struct sm_hdr *out)
{
	uint8_t *bin;
	size_t n;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = b64_decode(b64, len, &bin, &n);
	if (rc)
		return rc;
	rc = decode(bin, n, out);
	sm_free(bin);
	return rc;
}

/* ---- interval log ---- */

int
sm_hdr_log_write_header(FILE *f, const char *comment, double start_epoch_s)
{
	time_t t = (time_t)start_epoch_s;
	char date[64] = "";
	struct tm tm;

	/* the date is for people; readers take the number */
	if (gmtime_r(&t, &tm) != NULL)
		strftime(date, sizeof(date), "%a %b %d %H:%M:%S UTC %Y", &tm);
	if (comment != NULL && fprintf(f, "#%s\n", comment) < 0)
		return -EIO;
	if (fprintf(f,
		    "#[Histogram log format version 1.3]\n"
		    "#[StartTime: %.3f (seconds since epoch), %s]\n"
		    "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\","
		    "\"Interval_Compressed_Histogram\"\n",
		    start_epoch_s, date) < 0)
		return -EIO;
	return 0;
}

int
sm_hdr_log_write(FILE *f, const char *tag, double start_s, double length_s, const struct sm_hdr *h)
{
	size_t len;
	char *b64;
	int rc;

	if (tag != NULL && tag[strcspn(tag, ", \t\r\n")] != '\0')
		return -EINVAL;
	rc = sm_hdr_encode_base64(h, &b64, &len);
	if (rc)
		return rc;
	if (tag != NULL && *tag != '\0' && fprintf(f, "Tag=%s,", tag) < 0)
		rc = -EIO;
	else if (fprintf(f, "%.3f,%.3f,%.3f,%s\n", start_s, length_s,
			 (double)sm_hdr_max(h) / SM_HDR_LOG_MAX_RATIO, b64) < 0)
		rc = -EIO;
	sm_free(b64);
	return rc;
}

static bool
parse_seconds(const char *s, double *out)
{
	char *end;

	*out = strtod(s, &end);
	return end != s && *end == '\0' && isfinite(*out);
}

/*
 * Split "[Tag=<tag>,]<start>,<length>,<max>,<histogram>" in place. Returns
 * NULL or why the line is malformed.
 */
static const char *
parse_interval(char *line, char **tag, double *start, double *length, char **b64)
{
	char *field[4], *p = line;
	double max;
	int k;

	*tag = NULL;
	if (strncmp(p, "Tag=", 4) == 0) {
		p = strchr(p, ',');
		if (p == NULL)
			return "a tag but no interval";
		*p++ = '\0';
		if (line[4] != '\0')
			*tag = line + 4;
	}
	for (k = 0; k < 4; k++) {
		field[k] = p;
		if (k == 3)
			break;
		p = strchr(p, ',');
		if (p == NULL)
			return "expected [Tag=<tag>,]<start>,<length>,<max>,<histogram>";
		*p++ = '\0';
	}
	if (!parse_seconds(field[0], start) || !parse_seconds(field[1], length) ||
	    !parse_seconds(field[2], &max) || *length < 0)
		return "start, length and max must be numbers (length >= 0)";
	*b64 = field[3];
	return NULL;
}

static int
log_error(char *err, size_t errlen, unsigned lineno, const char *why, int rc)
{
	if (errlen > 0)
		snprintf(err, errlen, "line %u: %s", lineno, why);
	return rc;
}

int
sm_hdr_log_read(FILE *f, sm_hdr_log_fn fn, void *arg, char *err, size_t errlen)
{
	double start_time = 0, base_time = 0, ts, length, v;
	bool have_start = false, have_base = false;
	char *line = NULL, *tag, *b64;
	unsigned lineno = 0;
	const char *why;
	struct sm_hdr h;
	size_t cap = 0;
	ssize_t n;
	int rc = 0;

	if (errlen > 0)
		err[0] = '\0';
	while ((n = getline(&line, &cap, f)) >= 0) {
		lineno++;
		/* trailing blanks and CRs occur in logs of other writers */
		while (n > 0 && isspace((unsigned char)line[n - 1]))
			line[--n] = '\0';
		if (n == 0 || line[0] == '"') /* blank, or the legend */
			continue;
		if (line[0] == '#') {
			if (sscanf(line, "#[StartTime: %lf", &v) == 1) {
				start_time = v;
				have_start = true;
			} else if (sscanf(line, "#[BaseTime: %lf", &v) == 1) {
				base_time = v;
				have_base = true;
			} else {
				continue;
			}
			if (!isfinite(v)) {
				rc = log_error(err, errlen, lineno,
					       "StartTime/BaseTime is not a number", -EINVAL);
				goto out;
			}
			continue;
		}
		why = parse_interval(line, &tag, &ts, &length, &b64);
		if (why != NULL) {
			rc = log_error(err, errlen, lineno, why, -EINVAL);
			goto out;
		}
		rc = sm_hdr_decode_base64(b64, strlen(b64), &h);
		if (rc) {
			why = rc == -ENOTSUP
				      ? "V0/V1 histogram encoding (before 2015): not supported"
			      : rc == -ENOMEM ? "out of memory decoding the histogram"
					      : "malformed compressed histogram";
			rc = log_error(err, errlen, lineno, why, rc);
			goto out;
		}
		/* HistogramLogReader's rules for relative and absolute timestamps */
		if (!have_start) {
			start_time = ts;
			have_start = true;
		}
		if (!have_base) {
			base_time = ts < start_time - SECONDS_PER_YEAR ? start_time : 0;
			have_base = true;
		}
		rc = fn(tag, base_time + ts, length, &h, arg);
		sm_hdr_fini(&h);
		if (rc)
			goto out;
	}
	if (ferror(f))
		rc = log_error(err, errlen, lineno + 1, "read error", -EIO);
out:
	free(line); /* getline() allocates with malloc */
	return rc;
}
