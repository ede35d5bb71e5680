/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The run of `shardmark stress` on the shard runtime: what a caller (the
 * app) wires together after sm_stress_settings_parse().
 *
 * Shard 0 runs the control plane: a control connection learns the ring
 * (system.local, system.peers) and the server's sharding (SUPPORTED),
 * creates the schema, then every shard connects, a warm-up runs
 * unrecorded, and the measured run reports every interval by asking each
 * shard for its interval histograms (two per shard, flipped by the
 * request) and merging them: percentiles are never averaged.
 *
 * Open-loop rates (-rate fixed= / throttle=) give every operation a due
 * time on the shard's schedule; latency from the due time (response time)
 * corrects for coordinated omission, latency from the send (service time)
 * does not; both are recorded, and fixed= reports the first, throttle= the
 * second, as cassandra-stress does.
 *
 * Use: sm_stress_run_check(), sm_stress_run_create(), then sm_runtime_run()
 * with sm_stress_shard_init/fini as the shard callbacks and the run as
 * their argument; after it returns, sm_stress_run_measured() and
 * sm_stress_run_report(), then sm_stress_run_destroy(). One run at a time
 * per process, as the runtime.
 */
#ifndef SM_STRESS_RUN_H
#define SM_STRESS_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "sm_net.h"
#include "sm_stress.h"

struct sm_stress_run;

struct sm_tls_ctx;

struct sm_stress_run_opts {
	/* The parsed settings, copied (not their strings: they must outlive the run). */
	const struct sm_stress_settings *s;
	unsigned nshards;	  /* client shards the runtime will start */
	struct sm_net_config net; /* each shard's network driver settings */
	/* Open output files, or NULL: -log hdrfile=, csv=, file=; the caller closes them. */
	FILE *hdr_log, *csv_log, *text_log;
	/* -transport's TLS credentials, or NULL for plain TCP; the caller frees them after. */
	struct sm_tls_ctx *tls;
};

/*
 * Check what the engine itself limits in @s (columns, cell size, a non-empty
 * op mix) before anything runs: 0, or -EINVAL with the message in @err.
 */
int
sm_stress_run_check(const struct sm_stress_settings *s, char *err, size_t errlen);

/* Set up a run of @o; 0, or -ENOMEM. */
int
sm_stress_run_create(const struct sm_stress_run_opts *o, struct sm_stress_run **out);

/* sm_runtime_opts' shard callbacks; @arg is the run. */
int
sm_stress_shard_init(unsigned shard, void *arg);
void
sm_stress_shard_fini(unsigned shard, void *arg);

/* The measured phase ran and ended (the run's results can be reported). */
bool
sm_stress_run_measured(const struct sm_stress_run *r);

/* The run saw a failure: an operation that failed every try, a stall. */
bool
sm_stress_run_failed(const struct sm_stress_run *r);

/* Why an operation failed every try (the first shard that had one), or NULL. */
const char *
sm_stress_run_fail_text(const struct sm_stress_run *r);

/*
 * Print the final report (our additions, then cassandra-stress's results
 * block) to stdout and -log file=, and write -log json=.
 */
void
sm_stress_run_report(struct sm_stress_run *r);

/*
 * The run's live metrics in Prometheus text format (sm_stress_metrics.c):
 * per client shard and op type, operations, errors, latency histograms
 * and quantiles, in flight, the rate target, the phase. Call on a shard of
 * the run (a scrape); nothing when no run is set up.
 */
void
sm_stress_metrics_write(FILE *f);

/* Release @r (NULL is fine); the files in its opts stay open. */
void
sm_stress_run_destroy(struct sm_stress_run *r);

/* Write the header row of -log csv= to @f. */
void
sm_stress_csv_header(FILE *f);

/*
 * `shardmark stress merge`: the HDR interval logs of several loaders,
 * summed tag by tag (bucket by bucket: percentiles are never averaged).
 */
struct sm_stress_merge;

/* An empty merge; NULL when out of memory. */
struct sm_stress_merge *
sm_stress_merge_new(void);

/* Add the log in @f: 0, or -errno with the reason in @err. */
int
sm_stress_merge_read(struct sm_stress_merge *m, FILE *f, char *err, size_t errlen);

/* Print one row per tag: count, rate, latency percentiles (ms), seconds spanned. */
void
sm_stress_merge_print(FILE *f, const struct sm_stress_merge *m);

/* Release @m (NULL is fine). */
void
sm_stress_merge_free(struct sm_stress_merge *m);

/*
 * Whether the logs read ran at the same time: 0 when their wall-clock spans
 * share a moment (or fewer than two logs had intervals), -ERANGE with the
 * two logs that do not (by position, from 1) and their spans in @err.
 */
int
sm_stress_merge_check(const struct sm_stress_merge *m, char *err, size_t errlen);

#endif /* SM_STRESS_RUN_H */
