/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Capacity search: a run of several measured steps, each at its own
 * concurrency or rate, where what the last steps measured decides the
 * next one. Two kinds:
 *
 *   -rate [auto] threads>=A threads<=B   cassandra-stress's thread ramp
 *       (StressAction.runMulti in scylladb/cassandra-stress): A, A+100, ...
 *       (+100 below 500, x1.2 below 1500, x1.1 above), never above B; with
 *       auto it stops once the average throughput improvement of the last
 *       three steps is below zero (hasAverageImprovement(results, 3, 0)).
 *   -rate search percentile=P bound=T start=R step=S max=M ...
 *       an open-loop (fixed-schedule) search for the highest rate whose
 *       response-time percentile P stays within T, without errors and at
 *       the rate asked for: steps of S from R up to the first step that
 *       fails (or M), then bisection between the last pass and the first
 *       fail down to the resolution, as RFC 2544 section 26.1 searches a
 *       throughput without frame loss.
 *
 * This file is the decision logic alone, on measurements it is given, so
 * it is tested on synthetic ones; the engine (sm_stress_run.c) runs each
 * step and reports back.
 */
#ifndef SM_STRESS_SEARCH_H
#define SM_STRESS_SEARCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define SM_STRESS_SEARCH_MAX_STEPS 64

enum sm_stress_search_kind {
	SM_STRESS_SEARCH_NONE,
	SM_STRESS_SEARCH_THREADS, /* -rate threads>= threads<= [auto] */
	SM_STRESS_SEARCH_RATE,	  /* -rate search ... */
};

struct sm_stress_search_opts {
	enum sm_stress_search_kind kind;
	/* THREADS */
	bool auto_stop; /* auto: stop when throughput stops improving */
	unsigned min_threads, max_threads;
	/* RATE: the bound, and the rates (ops/s) tried */
	double percentile; /* e.g. 99.0 */
	uint64_t bound_ns;
	uint64_t start, step, max, resolution;
	uint64_t settle_ns;	 /* unrecorded time at a step's rate before it is measured */
	uint64_t max_errors;	 /* errors a passing step may have (default 0) */
	unsigned min_achieved;	 /* percent of the target rate a passing step completes */
};

/* What one step measured, and (filled by the search) what it decided. */
struct sm_stress_step {
	unsigned threads;
	uint64_t target; /* ops/s scheduled; 0: closed loop */
	double achieved; /* ops/s completed */
	double seconds;
	uint64_t ops, errors;
	double mean_ms, p50_ms, p95_ms, p99_ms, p999_ms, max_ms;
	double pct_ms; /* the search's percentile */
	/* set by sm_stress_search_record() */
	bool bisect;	    /* RATE: a bisection step, after the first failure */
	bool pass;	    /* RATE: within the bound */
	double improvement; /* THREADS: over the previous step (fraction), 0 for the first */
};

struct sm_stress_search {
	struct sm_stress_search_opts o;
	struct sm_stress_step steps[SM_STRESS_SEARCH_MAX_STEPS];
	unsigned n;
	unsigned threads; /* RATE: the concurrency every step has */
	uint64_t lo, hi;  /* RATE: highest passing and lowest failing rate so far (0: none) */
	bool bisecting, done;
	unsigned next_threads;
	uint64_t next_rate;
};

/*
 * Start a search of @o; @threads is the concurrency of a RATE search. The
 * first step runs at @s->next_threads and @s->next_rate.
 */
void
sm_stress_search_init(struct sm_stress_search *s, const struct sm_stress_search_opts *o,
		      unsigned threads);

/*
 * Record step @m, measured at the concurrency and rate the search asked
 * for. True when another step is to run, at @s->next_threads and
 * @s->next_rate; false when the search is over (its steps are in @s).
 */
bool
sm_stress_search_record(struct sm_stress_search *s, const struct sm_stress_step *m);

/*
 * The answer: RATE, the passing step of the highest rate; THREADS, the
 * step of the highest throughput. NULL when no step passed (or ran).
 */
const struct sm_stress_step *
sm_stress_search_answer(const struct sm_stress_search *s);

/* Whether @m is within @o's bound (RATE): percentile, errors, achieved rate. */
bool
sm_stress_search_passes(const struct sm_stress_search_opts *o, const struct sm_stress_step *m);

/*
 * The summary: THREADS, cassandra-stress's table of one row per thread count
 * ("id, type total ops, op/s, ...", StressMetrics.summarise) and the best
 * one; RATE, the curve sorted by rate and the answer.
 */
void
sm_stress_search_print(FILE *f, const struct sm_stress_search *s);

/* The steps as CSV, one row per step in the order run (header first). */
void
sm_stress_search_csv(FILE *f, const struct sm_stress_search *s);

/* The search as a JSON object's members (no braces): "search", "steps", "answer". */
void
sm_stress_search_json(FILE *f, const struct sm_stress_search *s);

/*
 * "p99", "p99.9", "p999", "99.9" -> 99.9 (p999 is cassandra-stress's
 * ".999" column). 0, or -EINVAL when @v is not a percentile in (0, 100].
 */
int
sm_stress_search_parse_percentile(const char *v, double *out);

#endif /* SM_STRESS_SEARCH_H */
