/* SPDX-License-Identifier: BSD-3-Clause */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sm_clock.h"
#include "sm_task.h"

#define RUN_LOG_MAX 256
static int run_log[RUN_LOG_MAX];
static unsigned run_n;

struct ttask {
	struct sm_task t;
	int id;
	struct sm_task_queue *q;
	struct sm_task *push_on_run; /* queued from inside the callback */
	uint64_t spin_ns;
};

static void
on_run(void *arg)
{
	struct ttask *tt = arg;
	uint64_t start;

	assert_false(tt->t.queued);
	if (run_n < RUN_LOG_MAX)
		run_log[run_n++] = tt->id;
	if (tt->push_on_run != NULL)
		assert_true(sm_task_queue_push(tt->q, tt->push_on_run));
	if (tt->spin_ns > 0) {
		/* Busy work standing in for a long task; nothing is asserted on speed. */
		start = sm_now_ns();
		while (sm_now_ns() - start < tt->spin_ns)
			;
	}
}

static void
tt_init(struct ttask *tt, int id, struct sm_task_queue *q)
{
	memset(tt, 0, sizeof(*tt));
	tt->id = id;
	tt->q = q;
	sm_task_init(&tt->t, on_run, tt);
}

static int
setup(void **state)
{
	(void)state;
	run_n = 0;
	return 0;
}

static void
test_fifo(void **state)
{
	struct sm_task_queue q;
	struct ttask tt[50];
	int i;

	(void)state;
	sm_task_queue_init(&q);
	assert_true(sm_task_queue_empty(&q));
	for (i = 0; i < 50; i++) {
		tt_init(&tt[i], i, &q);
		assert_true(sm_task_queue_push(&q, &tt[i].t));
	}
	assert_int_equal(q.len, 50);
	assert_int_equal(sm_task_queue_run(&q, 1000000000ull), 50);
	assert_true(sm_task_queue_empty(&q));
	assert_int_equal(q.len, 0);
	for (i = 0; i < 50; i++)
		assert_int_equal(run_log[i], i);
}

static void
test_double_push_refused(void **state)
{
	struct sm_task_queue q;
	struct ttask a, b;

	(void)state;
	sm_task_queue_init(&q);
	tt_init(&a, 1, &q);
	tt_init(&b, 2, &q);
	assert_true(sm_task_queue_push(&q, &a.t));
	assert_true(sm_task_queue_push(&q, &b.t));
	assert_false(sm_task_queue_push(&q, &a.t));
	assert_int_equal(q.len, 2);
	assert_int_equal(sm_task_queue_run(&q, 1000000000ull), 2);
	assert_int_equal(run_n, 2);
	/* Once run it may be queued again. */
	assert_true(sm_task_queue_push(&q, &a.t));
	assert_int_equal(sm_task_queue_run(&q, 1000000000ull), 1);
	assert_int_equal(run_n, 3);
}

static void
test_push_during_run(void **state)
{
	struct sm_task_queue q;
	struct ttask a, b, c;

	(void)state;
	sm_task_queue_init(&q);
	tt_init(&a, 1, &q);
	tt_init(&b, 2, &q);
	tt_init(&c, 3, &q);
	/* c is queued by a while the queue runs, behind b. */
	a.push_on_run = &c.t;
	assert_true(sm_task_queue_push(&q, &a.t));
	assert_true(sm_task_queue_push(&q, &b.t));
	assert_int_equal(sm_task_queue_run(&q, 1000000000ull), 3);
	assert_int_equal(run_log[0], 1);
	assert_int_equal(run_log[1], 2);
	assert_int_equal(run_log[2], 3);
	assert_true(sm_task_queue_empty(&q));
}

static void
test_quota_stops_run(void **state)
{
	static struct ttask tt[100];
	struct sm_task_queue q;
	unsigned n, i;

	(void)state;
	sm_task_queue_init(&q);
	for (i = 0; i < 100; i++) {
		tt_init(&tt[i], (int)i, &q);
		tt[i].spin_ns = 1000000; /* 1 ms each, 100 ms in all */
		assert_true(sm_task_queue_push(&q, &tt[i].t));
	}
	n = sm_task_queue_run(&q, 3000000); /* 3 ms quota */
	assert_true(n >= 1);
	assert_true(n < 100);
	/* The rest stays queued, in order, for the next round. */
	assert_int_equal(q.len, 100 - n);
	assert_ptr_equal(q.head, &tt[n].t);
	for (i = 0; i < 100; i++)
		tt[i].spin_ns = 0;
	assert_int_equal(sm_task_queue_run(&q, 1000000000ull), 100 - n);
	for (i = 0; i < 100; i++)
		assert_int_equal(run_log[i], (int)i);
}

static void
test_quota_zero_runs_one(void **state)
{
	struct sm_task_queue q;
	struct ttask a;

	(void)state;
	sm_task_queue_init(&q);
	tt_init(&a, 1, &q);
	assert_true(sm_task_queue_push(&q, &a.t));
	assert_int_equal(sm_task_queue_run(&q, 0), 1);
	assert_int_equal(run_n, 1);
	/* An empty queue runs nothing. */
	assert_int_equal(sm_task_queue_run(&q, 0), 0);
}

/* A task that polls: it queues itself again and yields, so one run runs it once. */
static void
on_poll(void *arg)
{
	struct ttask *tt = arg;

	if (run_n < RUN_LOG_MAX)
		run_log[run_n++] = tt->id;
	assert_true(sm_task_queue_push(tt->q, &tt->t));
	sm_task_queue_yield(tt->q);
}

static void
test_yield_ends_run(void **state)
{
	struct sm_task_queue q;
	struct ttask a, b;

	(void)state;
	sm_task_queue_init(&q);
	tt_init(&a, 1, &q);
	tt_init(&b, 2, &q);
	sm_task_init(&b.t, on_poll, &b);
	assert_true(sm_task_queue_push(&q, &a.t));
	assert_true(sm_task_queue_push(&q, &b.t));
	/* a, then b once (it yields), although the quota would allow more */
	assert_int_equal(sm_task_queue_run(&q, UINT64_MAX), 2);
	assert_int_equal(run_n, 2);
	assert_int_equal(run_log[0], 1);
	assert_int_equal(run_log[1], 2);
	assert_false(sm_task_queue_empty(&q));
	assert_int_equal(sm_task_queue_run(&q, UINT64_MAX), 1);
	assert_int_equal(run_n, 3);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_fifo, setup),
		cmocka_unit_test_setup(test_double_push_refused, setup),
		cmocka_unit_test_setup(test_push_during_run, setup),
		cmocka_unit_test_setup(test_quota_stops_run, setup),
		cmocka_unit_test_setup(test_quota_zero_runs_one, setup),
		cmocka_unit_test_setup(test_yield_ends_run, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
