/* SPDX-License-Identifier: BSD-3-Clause */
/* lib/core's small shared primitives: run on every shard, byte order, random numbers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sm_core.h"

#define NSHARDS 3

struct fanout {
	unsigned ran[NSHARDS]; /* written by each shard, read after all_done */
	unsigned runs;
	unsigned all_done_calls;
	unsigned ran_before_done;
	int submit_ret;
};

static struct fanout fan;

static void
fanout_run(void *arg)
{
	struct fanout *f = arg;

	__atomic_add_fetch(&f->ran[sm_shard_id()], 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&f->runs, 1, __ATOMIC_RELAXED);
}

static void
fanout_second_done(void *arg)
{
	struct fanout *f = arg;

	f->all_done_calls++;
	sm_runtime_stop();
}

static void
fanout_done(void *arg)
{
	struct fanout *f = arg;

	f->all_done_calls++;
	f->ran_before_done = __atomic_load_n(&f->runs, __ATOMIC_RELAXED);
	/* A second round from within the callback, without one at the end. */
	f->submit_ret = sm_submit_to_all(fanout_run, f, fanout_second_done);
}

static int
fanout_shard_init(unsigned shard, void *arg)
{
	if (shard == 0)
		return sm_submit_to_all(fanout_run, arg, fanout_done);
	return 0;
}

static void
test_submit_to_all(void **state)
{
	struct sm_runtime_opts o = {
		.smp = NSHARDS,
		.overprovisioned = true,
		.idle_poll_us = 0,
		.shard_init = fanout_shard_init,
		.arg = &fan,
	};
	char err[256];
	unsigned i;

	(void)state;
	memset(&fan, 0, sizeof(fan));
	assert_int_equal(sm_runtime_run(&o, err, sizeof(err)), 0);
	/* all_done saw every shard's run, and ran once per round. */
	assert_int_equal(fan.ran_before_done, NSHARDS);
	assert_int_equal(fan.all_done_calls, 2);
	assert_int_equal(fan.submit_ret, 0);
	for (i = 0; i < NSHARDS; i++)
		assert_int_equal(fan.ran[i], 2);
}

/* ---- the stall detector and the scheduling latency ---- */

static struct {
	struct sm_task stall;
	struct sm_timer after;
	uint64_t stalls_seen;
	uint64_t sched_samples;
} stl;

static void
stall_after(void *arg)
{
	unsigned b;

	(void)arg;
	stl.stalls_seen = sm_tls_stats->stalls;
	for (b = 0; b < SM_SCHED_LAT_BUCKETS; b++)
		stl.sched_samples += sm_tls_stats->sched_lat[b];
	sm_runtime_stop();
}

/*
 * A task that hogs its shard for 80 ms, 8 times the threshold, and longer
 * until the stall has been reported (up to 10 s): on a loaded machine the
 * watchdog thread may not run within 80 ms.
 */
static void
stall_spin(void *arg)
{
	uint64_t start = sm_now_ns(), now;

	(void)arg;
	do
		now = sm_now_ns();
	while (now < start + 80 * 1000000ull ||
	       (SM_READ_ONCE(sm_tls_stats->stalls) == 0 && now < start + 10000 * 1000000ull));
	sm_timer_init(&stl.after, stall_after, NULL);
	sm_timer_arm(&stl.after, 20);
}

static int
stall_shard_init(unsigned shard, void *arg)
{
	(void)arg;
	if (shard == 1) {
		sm_task_init(&stl.stall, stall_spin, NULL);
		sm_task_schedule(&stl.stall);
	}
	return 0;
}

static void
test_stall_detector(void **state)
{
	struct sm_runtime_opts o = {
		.smp = 2,
		.overprovisioned = true,
		.blocked_notify_ms = 10,
		.shard_init = stall_shard_init,
	};
	char err[256], log[8192], path[] = "/tmp/test_stall_XXXXXX";
	int fd = mkstemp(path), saved = dup(STDERR_FILENO);
	ssize_t got;

	(void)state;
	assert_true(fd >= 0 && saved >= 0);
	unlink(path);
	memset(&stl, 0, sizeof(stl));
	/* The report is a log line on stderr: catch it in a file. */
	dup2(fd, STDERR_FILENO);
	assert_int_equal(sm_runtime_run(&o, err, sizeof(err)), 0);
	dup2(saved, STDERR_FILENO);
	close(saved);
	got = pread(fd, log, sizeof(log) - 1, 0);
	close(fd);
	assert_true(got > 0);
	log[got] = '\0';
	fprintf(stderr, "%s", log);
	assert_int_equal(stl.stalls_seen, 1);
	assert_true(stl.sched_samples >= 1);
	assert_non_null(strstr(log, "Reactor stalled for "));
	assert_non_null(strstr(log, " ms on shard 1, in task "));
	assert_non_null(strstr(log, "(blocked_reactor_notify_ms 10). Backtrace: "));
}

static void
test_sched_lat_buckets(void **state)
{
	struct sm_sw_stats st;

	(void)state;
	assert_int_equal(sm_sched_lat_bucket(0), 0);
	assert_int_equal(sm_sched_lat_bucket(1999), 0); /* 1 us */
	assert_int_equal(sm_sched_lat_bucket(2000), 1);	 /* (1, 2] us */
	assert_int_equal(sm_sched_lat_bucket(3000), 2);	 /* (2, 4] */
	assert_int_equal(sm_sched_lat_bucket(4000), 2);
	assert_int_equal(sm_sched_lat_bucket(5000), 3);
	assert_int_equal(sm_sched_lat_bucket(1000000000000ull), SM_SCHED_LAT_BUCKETS - 1);
	memset(&st, 0, sizeof(st));
	assert_true(sm_sched_lat_quantile_us(&st, 0.99) == 0);
	st.sched_lat[0] = 98;
	st.sched_lat[4] = 2; /* (8, 16] us */
	assert_true(sm_sched_lat_quantile_us(&st, 0.5) == 1);
	assert_true(sm_sched_lat_quantile_us(&st, 0.99) == 16);
	st.sched_lat[SM_SCHED_LAT_BUCKETS - 1] = 1000;
	assert_true(sm_sched_lat_quantile_us(&st, 0.99) == UINT64_MAX);
}

static void
test_byteorder(void **state)
{
	uint8_t b[8];

	(void)state;
	sm_put_be16(b, 0x1234);
	assert_int_equal(b[0], 0x12);
	assert_int_equal(sm_get_be16(b), 0x1234);
	sm_put_be32(b, 0x89abcdefu);
	assert_int_equal(b[0], 0x89);
	assert_int_equal(b[3], 0xef);
	assert_int_equal(sm_get_be32(b), 0x89abcdefu);
	sm_put_be64(b, 0x0102030405060708ull);
	assert_int_equal(b[0], 1);
	assert_int_equal(b[7], 8);
	assert_true(sm_get_be64(b) == 0x0102030405060708ull);
	sm_put_be_n(b, 0xabcdef, 3);
	assert_int_equal(b[0], 0xab);
	assert_int_equal(b[2], 0xef);
	assert_true(sm_get_be_n(b, 3) == 0xabcdef);
	assert_true(sm_get_be_n(b, 0) == 0);
	/* Unaligned. */
	sm_put_be32(b + 1, 7);
	assert_int_equal(sm_get_be32(b + 1), 7);
}

static void
test_random(void **state)
{
	struct sm_rand a, b;
	uint64_t x = 0, seen = 0;
	unsigned i, counts[10] = { 0 };

	(void)state;
	sm_rand_seed(&a, 42);
	sm_rand_seed(&b, 42);
	for (i = 0; i < 1000; i++)
		assert_true(sm_rand_next(&a) == sm_rand_next(&b));
	sm_rand_seed(&b, 43);
	assert_true(sm_rand_next(&a) != sm_rand_next(&b));
	/* xoshiro256** from splitmix64(0)'s state: the reference's first output. */
	for (i = 0; i < 4; i++)
		a.s[i] = sm_splitmix64(&x);
	assert_true(a.s[0] == 0xe220a8397b1dcdafull);
	for (i = 0; i < 100000; i++) {
		uint64_t v = sm_rand_below(&a, 10);
		double d = sm_rand_double(&a);

		assert_true(v < 10);
		assert_true(d >= 0.0 && d < 1.0);
		counts[v]++;
	}
	for (i = 0; i < 10; i++)
		assert_true(counts[i] > 9000 && counts[i] < 11000);
	for (i = 0; i < 64; i++)
		seen |= sm_rand_next(sm_shard_rand());
	assert_true(seen == UINT64_MAX);
	assert_ptr_equal(sm_shard_rand(), sm_shard_rand());
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_submit_to_all),
		cmocka_unit_test(test_stall_detector),
		cmocka_unit_test(test_sched_lat_buckets),
		cmocka_unit_test(test_byteorder),
		cmocka_unit_test(test_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
