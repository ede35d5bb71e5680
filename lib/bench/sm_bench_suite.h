/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_BENCH_SUITE_H
#define SM_BENCH_SUITE_H

/*
 * shardmark bench's figures and report: each load's child writes a JSON
 * result (perf-simple-query's, bench echo's, stress's); the suite reads
 * the figures back from it, with a served instance's /metrics counters for
 * the stress loads, and prints a row per load, the stress details, the
 * loads' CSV rows in one set of columns and the JSON of the server's
 * counters. Running the children is the app's (app/shardmark/bench.c).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum sm_bench_load_kind { SM_BENCH_PSQ, SM_BENCH_ECHO, SM_BENCH_STRESS };

#define SM_BENCH_MAX_SERVER_SHARDS 256

/* A served instance's counters from /metrics, per shard. */
struct sm_bench_server_counters {
	unsigned nshards;
	double requests[SM_BENCH_MAX_SERVER_SHARDS], hops[SM_BENCH_MAX_SERVER_SHARDS];
	double tasks[SM_BENCH_MAX_SERVER_SHARDS], allocs[SM_BENCH_MAX_SERVER_SHARDS];
	/* < 0: unavailable */
	double insns[SM_BENCH_MAX_SERVER_SHARDS], cycles[SM_BENCH_MAX_SERVER_SHARDS];
};

/* One load's figures, read back from its JSON result. */
struct sm_bench_figures {
	double rate; /* median tps, requests/s for echo, client ops/s for stress */
	double mad;  /* < 0: not measured */
	double allocs, tasks;
	double insns, cycles; /* < 0: n/a */
	double hops;	      /* < 0: not counted by this load */
	/* stress: the client's view, and the server's counter deltas */
	double p50_ms, p99_ms, client_us_per_op, ops, errors, misrouted;
	struct sm_bench_server_counters srv;
};

/*
 * Read a load's figures from its JSON result @text (@len bytes): for
 * perf-simple-query the median iteration's stats and the per-shard hops,
 * for echo its "total", for stress the client's rate, latencies, busy
 * time per op and misrouted requests (the server's per-op figures come
 * from sm_bench_server_per_op()). A figure the result lacks or gives as
 * null is -1 (n/a). 0, or -EINVAL when the text is not JSON or has no
 * rate; -ENOMEM.
 */
int
sm_bench_read_figures(enum sm_bench_load_kind kind, const char *text, size_t len,
		      struct sm_bench_figures *f);

/*
 * Parse a /metrics page (Prometheus text, modified in place) into @c:
 * shardmark's requests, hops, tasks, allocations, instructions and cycles
 * per shard (shards at or above SM_BENCH_MAX_SERVER_SHARDS are dropped;
 * an absent perf counter is -1). 0, or -EIO when no shard was found.
 */
int
sm_bench_parse_metrics(char *text, struct sm_bench_server_counters *c);

/* @d = @b - @a, shard by shard (a perf counter absent from either: -1). */
void
sm_bench_counters_delta(struct sm_bench_server_counters *d,
			const struct sm_bench_server_counters *a,
			const struct sm_bench_server_counters *b);

/* A stress load's per-op figures: the server's counter deltas over its ops. */
void
sm_bench_server_per_op(struct sm_bench_figures *f);

/* The table's header line (after an empty line), then one row per load. */
void
sm_bench_print_header(FILE *out);
void
sm_bench_print_row(FILE *out, const char *load, const struct sm_bench_figures *f);

/* The stress table's header, then per load its client line and server shards. */
void
sm_bench_print_stress_header(FILE *out);
void
sm_bench_print_stress_details(FILE *out, const char *load, const struct sm_bench_figures *f);

/* ", \"server_per_shard\": [...]": a stress load's server counters in the suite's JSON. */
void
sm_bench_json_server(FILE *out, const struct sm_bench_figures *f);

/* --csv: the suite's columns (load, interval, seconds, type, ..., errors). */
void
sm_bench_csv_header(FILE *out);

/*
 * Append the rows of a load's CSV @text (modified in place; perf-simple-query
 * --csv, stress -log csv=) to @out, each column found by its name: "load"
 * is @load, a column the load has not is left empty.
 */
void
sm_bench_csv_append(FILE *out, const char *load, char *text);

/* echo has no intervals: one row for the whole measurement. */
void
sm_bench_csv_echo(FILE *out, const char *load, unsigned duration,
		  const struct sm_bench_figures *f);

#endif /* SM_BENCH_SUITE_H */
