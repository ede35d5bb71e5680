/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/stress: the capacity search's decisions on synthetic measurements:
 * cassandra-stress's thread ramp and its stop rule, the rate steps, the
 * bisection near the edge and the answer.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sm_stress_search.h"

/* A synthetic server: p99 grows past the knee at @knee ops/s; it keeps up below @cap. */
struct model {
	uint64_t knee, cap;
};

static struct sm_stress_step
measure(const struct model *md, uint64_t rate, unsigned threads)
{
	struct sm_stress_step m;

	memset(&m, 0, sizeof(m));
	m.threads = threads;
	m.target = rate;
	m.achieved = (double)(rate < md->cap ? rate : md->cap);
	m.pct_ms = rate <= md->knee ? 1.0 : 1.0 + (double)(rate - md->knee) / 100.0;
	m.p99_ms = m.pct_ms;
	return m;
}

static void
run_rate(struct sm_stress_search *s, const struct model *md)
{
	unsigned guard = 0;

	for (;;) {
		struct sm_stress_step m = measure(md, s->next_rate, s->next_threads);

		assert_true(++guard <= SM_STRESS_SEARCH_MAX_STEPS);
		if (!sm_stress_search_record(s, &m))
			break;
	}
}

static struct sm_stress_search_opts
rate_opts(uint64_t start, uint64_t step, uint64_t max, uint64_t res)
{
	struct sm_stress_search_opts o = {
		.kind = SM_STRESS_SEARCH_RATE,
		.percentile = 99,
		.bound_ns = 2000000, /* 2 ms: the model passes up to knee + 100 */
		.start = start,
		.step = step,
		.max = max,
		.resolution = res,
		.min_achieved = 90,
	};

	return o;
}

/* Steps up to the first failure, then bisects to within the resolution. */
static void
test_rate_steps_then_bisects(void **state)
{
	struct sm_stress_search_opts o = rate_opts(1000, 1000, 100000, 50);
	struct model md = { .knee = 4300, .cap = 1000000 };
	struct sm_stress_search s;
	const struct sm_stress_step *a;
	uint64_t lo = 0, hi = UINT64_MAX;
	unsigned i, nsteps = 0;

	(void)state;
	sm_stress_search_init(&s, &o, 64);
	assert_int_equal(s.next_rate, 1000);
	assert_int_equal(s.next_threads, 64);
	run_rate(&s, &md);
	/* 1000..5000 in steps: 1000-4000 pass, 5000 (p99 8 ms) fails */
	for (i = 0; i < s.n && !s.steps[i].bisect; i++) {
		assert_int_equal(s.steps[i].target, 1000 * (i + 1));
		nsteps++;
	}
	assert_int_equal(nsteps, 5);
	assert_false(s.steps[4].pass);
	for (i = 0; i < 4; i++)
		assert_true(s.steps[i].pass);
	/* every bisection step lies inside the bracket the earlier ones left */
	lo = 4000;
	hi = 5000;
	for (i = nsteps; i < s.n; i++) {
		assert_true(s.steps[i].bisect);
		assert_true(s.steps[i].target > lo && s.steps[i].target < hi);
		if (s.steps[i].pass)
			lo = s.steps[i].target;
		else
			hi = s.steps[i].target;
	}
	assert_true(hi - lo <= 50);
	a = sm_stress_search_answer(&s);
	assert_non_null(a);
	assert_int_equal(a->target, lo);
	/* the true edge is 4400 (p99 = 2 ms): the answer is within resolution below it */
	assert_true(a->target <= 4400 && a->target + 50 >= 4400);
	assert_true(s.done);
}

/* Everything passes up to max=: the answer is max, and max is tried even off the step grid. */
static void
test_rate_all_pass_ends_at_max(void **state)
{
	struct sm_stress_search_opts o = rate_opts(1000, 3000, 8000, 100);
	struct model md = { .knee = 1000000, .cap = 1000000 };
	struct sm_stress_search s;
	const uint64_t want[] = { 1000, 4000, 7000, 8000 };
	unsigned i;

	(void)state;
	sm_stress_search_init(&s, &o, 10);
	run_rate(&s, &md);
	assert_int_equal(s.n, 4);
	for (i = 0; i < 4; i++) {
		assert_int_equal(s.steps[i].target, want[i]);
		assert_true(s.steps[i].pass);
	}
	assert_int_equal(sm_stress_search_answer(&s)->target, 8000);
}

/* The first step fails: bisect below start; too slow for any: no answer. */
static void
test_rate_first_step_fails(void **state)
{
	struct sm_stress_search_opts o = rate_opts(10000, 10000, 100000, 500);
	struct model md = { .knee = 2000, .cap = 1000000 };
	struct model none = { .knee = 0, .cap = 1000000 };
	struct sm_stress_search s;
	const struct sm_stress_step *a;

	(void)state;
	sm_stress_search_init(&s, &o, 10);
	run_rate(&s, &md);
	assert_false(s.steps[0].pass);
	assert_true(s.steps[1].bisect);
	assert_int_equal(s.steps[1].target, 5000);
	a = sm_stress_search_answer(&s);
	assert_non_null(a);
	assert_true(a->target <= 2100 && a->target + 500 >= 2100);

	/* p99 above the bound at every rate: the bisection runs down and gives up */
	o.bound_ns = 500000;
	sm_stress_search_init(&s, &o, 10);
	run_rate(&s, &none);
	assert_null(sm_stress_search_answer(&s));
	assert_true(s.n < SM_STRESS_SEARCH_MAX_STEPS);
}

/* A step that did not reach its rate, or had errors, fails even with low latency. */
static void
test_rate_achieved_and_errors_fail_a_step(void **state)
{
	struct sm_stress_search_opts o = rate_opts(1000, 1000, 100000, 1000);
	struct model md = { .knee = 1000000, .cap = 2500 };
	struct sm_stress_search s;
	struct sm_stress_step m;

	(void)state;
	sm_stress_search_init(&s, &o, 10);
	run_rate(&s, &md);
	/* 3000 completes 2500 (83 % < 90 %): fails; 2000 passes; resolution 1000 ends it */
	assert_int_equal(sm_stress_search_answer(&s)->target, 2000);

	m = measure(&md, 1000, 10);
	assert_true(sm_stress_search_passes(&o, &m));
	m.errors = 1;
	assert_false(sm_stress_search_passes(&o, &m));
	o.max_errors = 1;
	assert_true(sm_stress_search_passes(&o, &m));
}

/* Run a thread ramp on the op rates @rate[i] of its i-th step; @threads: the counts asked. */
static void
ramp(struct sm_stress_search *s, const struct sm_stress_search_opts *o, const double *rate,
     unsigned n, unsigned *threads)
{
	struct sm_stress_step m;
	unsigned i = 0;

	sm_stress_search_init(s, o, 0);
	do {
		assert_true(i < n);
		threads[i] = s->next_threads;
		memset(&m, 0, sizeof(m));
		m.threads = s->next_threads;
		m.achieved = rate[i++];
	} while (sm_stress_search_record(s, &m));
}

/* StressAction.runMulti: 4, 104, 204, ... never past threads<=. */
static void
test_threads_ramp_bounds(void **state)
{
	struct sm_stress_search_opts o = {
		.kind = SM_STRESS_SEARCH_THREADS,
		.min_threads = 4,
		.max_threads = 1000,
	};
	const unsigned want[] = { 4, 104, 204, 304, 404, 504, 604, 724, 868 };
	const double rate[] = { 1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000 };
	struct sm_stress_search s;
	unsigned threads[9], i;

	(void)state;
	ramp(&s, &o, rate, 9, threads); /* always improving */
	for (i = 0; i < 9; i++)
		assert_int_equal(threads[i], want[i]);
	assert_int_equal(s.n, 9); /* 868 * 1.2 = 1041 > 1000 */
	assert_int_equal(sm_stress_search_answer(&s)->threads, 868);
	assert_true(s.steps[1].improvement == 1.0);
}

/* auto: stop once the mean gain of the last three steps is negative. */
static void
test_threads_auto_stops_without_gain(void **state)
{
	struct sm_stress_search_opts o = {
		.kind = SM_STRESS_SEARCH_THREADS,
		.auto_stop = true,
		.min_threads = 4,
		.max_threads = 100000,
	};
	/* gains: +100 %, +10 %, -5 %, -10 %: the mean of the last three is -1.7 % */
	const double rate[] = { 1000, 2000, 2200, 2090, 1881, 5000 };
	struct sm_stress_search s;
	unsigned threads[6];

	(void)state;
	ramp(&s, &o, rate, 6, threads);
	assert_int_equal(s.n, 5);
	assert_int_equal(sm_stress_search_answer(&s)->threads, 204);

	/* not auto: the same numbers go on (to threads<=) */
	o.auto_stop = false;
	o.max_threads = 504;
	ramp(&s, &o, rate, 6, threads);
	assert_int_equal(s.n, 6);
}

static void
test_percentile_names(void **state)
{
	double d;

	(void)state;
	assert_int_equal(sm_stress_search_parse_percentile("p99", &d), 0);
	assert_true(d == 99);
	assert_int_equal(sm_stress_search_parse_percentile("p999", &d), 0);
	assert_true(d == 99.9);
	assert_int_equal(sm_stress_search_parse_percentile("p99.99", &d), 0);
	assert_true(d == 99.99);
	assert_int_equal(sm_stress_search_parse_percentile("50", &d), 0);
	assert_true(d == 50);
	assert_int_equal(sm_stress_search_parse_percentile("p0", &d), -EINVAL);
	assert_int_equal(sm_stress_search_parse_percentile("p101", &d), -EINVAL);
	assert_int_equal(sm_stress_search_parse_percentile("pp", &d), -EINVAL);
	assert_int_equal(sm_stress_search_parse_percentile("", &d), -EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rate_steps_then_bisects),
		cmocka_unit_test(test_rate_all_pass_ends_at_max),
		cmocka_unit_test(test_rate_first_step_fails),
		cmocka_unit_test(test_rate_achieved_and_errors_fail_a_step),
		cmocka_unit_test(test_threads_ramp_bounds),
		cmocka_unit_test(test_threads_auto_stops_without_gain),
		cmocka_unit_test(test_percentile_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
