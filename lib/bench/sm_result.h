/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_RESULT_H
#define SM_RESULT_H

/*
 * A benchmark result read back from what shardmark wrote: the JSON of
 * stress (-log json=F), perf-simple-query (--json-result F) and bench
 * (--json F), and stress's HDR interval log (-log hdrfile=F), which is
 * where the per-interval data lives (the stress JSON holds totals only).
 * One struct sm_result is one run, possibly read from several files (a
 * stress JSON and its HDR log); the report and compare commands work on
 * this shape, not on the files.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sm_hdr.h"

#define SM_RESULT_MAX_KV 256 /* bench: every load's settings */
#define SM_RESULT_MAX_METRICS 128
#define SM_RESULT_MAX_SERIES 16
#define SM_RESULT_MAX_BARS 24
#define SM_RESULT_MAX_SHARDS 256
#define SM_RESULT_MAX_SOURCES 4

enum sm_result_kind {
	SM_RESULT_NONE,
	SM_RESULT_STRESS, /* stress -log json= and/or -log hdrfile= */
	SM_RESULT_PSQ,	  /* perf-simple-query --json-result */
	SM_RESULT_BENCH,  /* bench --json */
};

struct sm_result_kv {
	char key[64];
	char val[160];
};

/*
 * One figure of a run. @samples (per interval or per iteration) when the
 * files have them, else a summary: @value alone, or with @sd over @n
 * iterations (perf-simple-query's median and MAD).
 */
struct sm_result_metric {
	char name[80];
	char unit[16];
	bool higher_better;
	double value;
	double sd; /* < 0: unknown */
	double n;  /* iterations behind @sd */
	double *samples;
	unsigned nsamples;
	int series; /* >= 0: a latency percentile of series[@series] (bootstrap) */
	double pct; /* with @series: the percentile */
};

/*
 * One op type's intervals from an HDR log: per interval its start
 * (seconds from the log's first interval), length, throughput and
 * latency figures, and its non-empty buckets (value, count) so that
 * intervals can be resampled and merged without a full counts array each.
 */
struct sm_result_series {
	char name[48];	    /* op type ("write"); the log's tag less its -st/-rt */
	bool response_time; /* the -rt tag (from the intended start) */
	unsigned n, cap;
	double *t, *len, *ops_s, *mean_ms, *p50_ms, *p99_ms, *p999_ms, *max_ms;
	uint32_t *off; /* n + 1 offsets into @val and @cnt */
	int64_t *val, *cnt;
	size_t nb, nb_cap;
	struct sm_hdr total; /* every interval merged */
};

/* Per-shard counters of one kind ("server requests per op"), for bars. */
struct sm_result_bars {
	char name[80];
	unsigned n;
	double v[SM_RESULT_MAX_SHARDS];
};

/* A file a run was read from, kept whole: a report carries it to add revisions later. */
struct sm_result_source {
	char name[256]; /* the file's name as given */
	char *text;
	size_t len;
};

struct sm_result {
	enum sm_result_kind kind;
	char label[96];	  /* the first file's name, less its directory and extension */
	char version[48]; /* shardmark's version, "" when the files do not say */
	struct sm_result_kv settings[SM_RESULT_MAX_KV], machine[SM_RESULT_MAX_KV];
	unsigned nsettings, nmachine;
	struct sm_result_metric metric[SM_RESULT_MAX_METRICS];
	unsigned nmetric;
	struct sm_result_series series[SM_RESULT_MAX_SERIES];
	unsigned nseries;
	struct sm_result_bars bars[SM_RESULT_MAX_BARS];
	unsigned nbars;
	struct sm_result_source src[SM_RESULT_MAX_SOURCES];
	unsigned nsrc;
};

/* Zero @r for sm_result_read(). */
void
sm_result_init(struct sm_result *r);

/* Free what sm_result_read() allocated in @r and zero it. */
void
sm_result_fini(struct sm_result *r);

/*
 * Add the file at @path to @r: a JSON result (stress, perf-simple-query or
 * bench, told apart by their keys) or an HDR interval log (a first line
 * starting with '#' or "Tag="). A stress JSON and its HDR log make one run
 * when read into the same @r. Returns 0, or -EINVAL (not a result, or a
 * second JSON of another kind), -ENOENT/-EIO or -ENOMEM, with the reason
 * in @err (@errlen bytes).
 */
int
sm_result_read(struct sm_result *r, const char *path, char *err, size_t errlen);

/*
 * Same, from @len bytes in memory (either kind, told apart as above) that
 * came from a file called @name; the text is kept in @r->src.
 */
int
sm_result_read_text(struct sm_result *r, const char *name, const char *text, size_t len, char *err,
		    size_t errlen);

/* JSON only, from memory (for tests); @name labels the run; nothing kept. */
int
sm_result_read_json(struct sm_result *r, const char *name, const char *text, size_t len, char *err,
		    size_t errlen);

/*
 * Whether @r ran at a fixed or throttled rate, which is when response time
 * (from the intended start) differs from service time; true when the
 * files do not say (an HDR log alone).
 */
bool
sm_result_rated(const struct sm_result *r);

/* The metric of @r called @name, or NULL. */
const struct sm_result_metric *
sm_result_metric_find(const struct sm_result *r, const char *name);

/*
 * Add one interval of op type @name to @r's series (created on first
 * use): what the HDR log reader does per line, exported for tests that
 * build runs. Returns 0, -ENOSPC (too many series) or -ENOMEM.
 */
int
sm_result_add_interval(struct sm_result *r, const char *name, bool response_time, double start_s,
		       double length_s, const struct sm_hdr *h);

/*
 * Derive the per-interval metrics (throughput, mean, p50, p99, p99.9,
 * max per series) from @r's series; called by sm_result_read() after an
 * HDR log, and by tests after sm_result_add_interval(). Returns 0 or -ENOMEM.
 */
int
sm_result_derive(struct sm_result *r);

/*
 * Read the runs named by @args[0..@nargs) into @runs (at most @max, each
 * sm_result_init()ed here; sm_result_fini() them all, even on error): an
 * argument "A.json,A.hdr" is one run of those files, and consecutive
 * arguments with the same name less directory and extension ("a.json
 * a.hdr") are one run too; a stress JSON given without a log takes the
 * HDR log of the same name beside it (a.json: a.hdr) when there is one.
 * Returns the number of runs, or -errno with the reason in @err.
 */
int
sm_result_load_args(struct sm_result *runs, unsigned max, char *const *args, unsigned nargs,
		    char *err, size_t errlen);

#endif /* SM_RESULT_H */
