/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "sm_xring.h"

static void
msg_make(struct sm_xmsg *m, uintptr_t n)
{
	m->fn = NULL;
	m->arg = (void *)n;
	m->done = NULL;
	m->from = (uint32_t)(n * 7);
	m->flags = (uint32_t)(n & 1);
}

static void
msg_check(const struct sm_xmsg *m, uintptr_t n)
{
	assert_int_equal((uintptr_t)m->arg, n);
	assert_int_equal(m->from, (uint32_t)(n * 7));
	assert_int_equal(m->flags, (uint32_t)(n & 1));
}

static void
test_capacity(void **state)
{
	struct sm_xring *r = NULL;
	uint32_t caps[] = { 2, 4, 1024, 65536 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		assert_int_equal(sm_xring_create(&r, caps[i]), 0);
		assert_non_null(r);
		assert_int_equal(sm_xring_capacity(r), caps[i]);
		assert_true(sm_xring_empty(r));
		assert_int_equal(sm_xring_unpublished(r), 0);
		/* The producer and consumer indexes must not share a cache line. */
		assert_int_equal((uintptr_t)r % SM_CACHE_LINE, 0);
		sm_xring_destroy(r);
	}
}

static void
test_invalid_capacity(void **state)
{
	struct sm_xring *r = (struct sm_xring *)(uintptr_t)0x1;
	uint32_t bad[] = { 0, 1, 3, 6, 1000, UINT32_MAX };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(sm_xring_create(&r, bad[i]), -EINVAL);
		/* Untouched on failure. */
		assert_ptr_equal(r, (struct sm_xring *)(uintptr_t)0x1);
	}
	assert_int_equal(sm_xring_create(NULL, 8), -EINVAL);
	sm_xring_destroy(NULL);
}

static void
test_stage_invisible_until_publish(void **state)
{
	struct sm_xring *r;
	struct sm_xmsg m, out[8];

	(void)state;
	assert_int_equal(sm_xring_create(&r, 8), 0);
	msg_make(&m, 1);
	assert_true(sm_xring_stage(r, &m));
	msg_make(&m, 2);
	assert_true(sm_xring_stage(r, &m));
	assert_int_equal(sm_xring_unpublished(r), 2);

	assert_true(sm_xring_empty(r));
	assert_int_equal(sm_xring_dequeue_burst(r, out, 8), 0);

	sm_xring_publish(r);
	assert_int_equal(sm_xring_unpublished(r), 0);
	assert_false(sm_xring_empty(r));
	sm_xring_destroy(r);
}

static void
test_publish_dequeue_order(void **state)
{
	struct sm_xring *r;
	struct sm_xmsg m, out[16];
	uintptr_t i;

	(void)state;
	assert_int_equal(sm_xring_create(&r, 16), 0);
	for (i = 0; i < 10; i++) {
		msg_make(&m, i);
		assert_true(sm_xring_stage(r, &m));
	}
	sm_xring_publish(r);

	/* Partial bursts keep FIFO order across calls. */
	assert_int_equal(sm_xring_dequeue_burst(r, out, 3), 3);
	for (i = 0; i < 3; i++)
		msg_check(&out[i], i);
	assert_int_equal(sm_xring_dequeue_burst(r, out, 16), 7);
	for (i = 0; i < 7; i++)
		msg_check(&out[i], i + 3);
	assert_true(sm_xring_empty(r));
	assert_int_equal(sm_xring_dequeue_burst(r, out, 16), 0);
	sm_xring_destroy(r);
}

static void
test_full_refuses_stage(void **state)
{
	struct sm_xring *r;
	struct sm_xmsg m, out[4];
	uintptr_t i;

	(void)state;
	assert_int_equal(sm_xring_create(&r, 4), 0);
	for (i = 0; i < 4; i++) {
		msg_make(&m, i);
		assert_true(sm_xring_stage(r, &m));
	}
	msg_make(&m, 99);
	/* Full counts staged messages too, published or not. */
	assert_false(sm_xring_stage(r, &m));
	sm_xring_publish(r);
	assert_false(sm_xring_stage(r, &m));

	/* One slot freed by the consumer is one slot for the producer. */
	assert_int_equal(sm_xring_dequeue_burst(r, out, 1), 1);
	msg_check(&out[0], 0);
	assert_true(sm_xring_stage(r, &m));
	assert_false(sm_xring_stage(r, &m));
	sm_xring_publish(r);
	assert_int_equal(sm_xring_dequeue_burst(r, out, 4), 4);
	msg_check(&out[0], 1);
	msg_check(&out[1], 2);
	msg_check(&out[2], 3);
	msg_check(&out[3], 99);
	sm_xring_destroy(r);
}

static void
test_wraparound(void **state)
{
	struct sm_xring *r;
	struct sm_xmsg m, out[8];
	uintptr_t sent = 0, recv = 0;
	uint32_t start = UINT32_MAX - 5;
	unsigned cycle, k, batch, got;

	(void)state;
	assert_int_equal(sm_xring_create(&r, 8), 0);
	/* An empty ring may start at any index; start just before the wrap. */
	r->head = r->tail = r->staged = r->head_cache = r->tail_cache = start;

	for (cycle = 0; cycle < 1000; cycle++) {
		batch = 1 + cycle % 8;
		for (k = 0; k < batch; k++) {
			msg_make(&m, sent);
			assert_true(sm_xring_stage(r, &m));
			sent++;
		}
		if (batch == 8) {
			msg_make(&m, 12345);
			assert_false(sm_xring_stage(r, &m));
		}
		sm_xring_publish(r);
		got = sm_xring_dequeue_burst(r, out, 8);
		assert_int_equal(got, batch);
		for (k = 0; k < got; k++)
			msg_check(&out[k], recv++);
		assert_true(sm_xring_empty(r));
	}
	assert_int_equal(sent, recv);
	/* The indexes really did cross UINT32_MAX. */
	assert_true(r->head < start);
	sm_xring_destroy(r);
}

#define XR_MESSAGES 1000000u

struct xr_prod {
	struct sm_xring *r;
	unsigned seed;
};

static void *
xr_producer(void *arg)
{
	struct xr_prod *p = arg;
	struct sm_xmsg m;
	uintptr_t next = 0;
	unsigned batch, k;

	while (next < XR_MESSAGES) {
		batch = 1 + (unsigned)rand_r(&p->seed) % 37;
		for (k = 0; k < batch && next < XR_MESSAGES; k++) {
			msg_make(&m, next);
			while (!sm_xring_stage(p->r, &m)) {
				/* Full: what is staged must become visible or we deadlock. */
				sm_xring_publish(p->r);
				/* Let the consumer run when both share one CPU. */
				sched_yield();
			}
			next++;
		}
		sm_xring_publish(p->r);
	}
	return NULL;
}

static void
test_two_threads(void **state)
{
	struct xr_prod prod;
	struct sm_xmsg out[64];
	pthread_t th;
	uintptr_t expect = 0;
	unsigned seed = 42;
	uint32_t n, k;

	(void)state;
	assert_int_equal(sm_xring_create(&prod.r, 256), 0);
	prod.seed = 7;
	assert_int_equal(pthread_create(&th, NULL, xr_producer, &prod), 0);

	while (expect < XR_MESSAGES) {
		n = sm_xring_dequeue_burst(prod.r, out, 1 + (uint32_t)rand_r(&seed) % 64);
		if (n == 0)
			sched_yield();
		for (k = 0; k < n; k++) {
			/* Mismatch here means loss, duplication or reordering. */
			if ((uintptr_t)out[k].arg != expect)
				fail_msg("message %lu arrived where %lu was expected",
					 (unsigned long)(uintptr_t)out[k].arg,
					 (unsigned long)expect);
			msg_check(&out[k], expect);
			expect++;
		}
	}
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_true(sm_xring_empty(prod.r));
	assert_int_equal(expect, XR_MESSAGES);
	sm_xring_destroy(prod.r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_capacity),
		cmocka_unit_test(test_invalid_capacity),
		cmocka_unit_test(test_stage_invisible_until_publish),
		cmocka_unit_test(test_publish_dequeue_order),
		cmocka_unit_test(test_full_refuses_stage),
		cmocka_unit_test(test_wraparound),
		cmocka_unit_test(test_two_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
