/* SPDX-License-Identifier: BSD-3-Clause */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sm_timer.h"

/* Fired timers record their id here, in firing order. */
#define LOG_MAX 20000
static int fired_log[LOG_MAX];
static unsigned fired_n;

struct ttimer {
	struct sm_timer t;
	int id;
	struct sm_timer_heap *h;
	uint64_t rearm_at; /* re-arm from the callback when non-zero */
	unsigned calls;
};

static void
on_fire(void *arg)
{
	struct ttimer *tt = arg;

	assert_false(sm_timer_armed(&tt->t));
	tt->calls++;
	if (fired_n < LOG_MAX)
		fired_log[fired_n++] = tt->id;
	if (tt->rearm_at != 0)
		assert_int_equal(sm_timer_heap_add(tt->h, &tt->t, tt->rearm_at), 0);
}

static void
tt_init(struct ttimer *tt, int id, struct sm_timer_heap *h)
{
	memset(tt, 0, sizeof(*tt));
	tt->id = id;
	tt->h = h;
	sm_timer_init(&tt->t, on_fire, tt);
}

static int
setup(void **state)
{
	(void)state;
	fired_n = 0;
	return 0;
}

static void
test_order_by_deadline(void **state)
{
	struct sm_timer_heap h;
	struct ttimer tt[5];
	uint64_t when[5] = { 50, 10, 40, 20, 30 };
	int i;

	(void)state;
	sm_timer_heap_init(&h);
	assert_int_equal(sm_timer_heap_next(&h), UINT64_MAX);
	for (i = 0; i < 5; i++) {
		tt_init(&tt[i], i, &h);
		assert_false(sm_timer_armed(&tt[i].t));
		assert_int_equal(sm_timer_heap_add(&h, &tt[i].t, when[i]), 0);
		assert_true(sm_timer_armed(&tt[i].t));
	}
	assert_int_equal(sm_timer_heap_next(&h), 10);

	assert_int_equal(sm_timer_heap_expire(&h, 9), 0);
	assert_int_equal(sm_timer_heap_expire(&h, 25), 2);
	assert_int_equal(sm_timer_heap_next(&h), 30);
	assert_int_equal(sm_timer_heap_expire(&h, 1000), 3);
	assert_int_equal(sm_timer_heap_next(&h), UINT64_MAX);

	assert_int_equal(fired_n, 5);
	assert_int_equal(fired_log[0], 1);
	assert_int_equal(fired_log[1], 3);
	assert_int_equal(fired_log[2], 4);
	assert_int_equal(fired_log[3], 2);
	assert_int_equal(fired_log[4], 0);
	for (i = 0; i < 5; i++)
		assert_false(sm_timer_armed(&tt[i].t));
	sm_timer_heap_fini(&h);
}

static void
test_fifo_equal_deadlines(void **state)
{
	struct sm_timer_heap h;
	struct ttimer tt[100];
	int i;

	(void)state;
	sm_timer_heap_init(&h);
	for (i = 0; i < 100; i++) {
		tt_init(&tt[i], i, &h);
		assert_int_equal(sm_timer_heap_add(&h, &tt[i].t, 7), 0);
	}
	assert_int_equal(sm_timer_heap_expire(&h, 7), 100);
	for (i = 0; i < 100; i++)
		assert_int_equal(fired_log[i], i);
	sm_timer_heap_fini(&h);
}

static void
test_cancel(void **state)
{
	struct sm_timer_heap h;
	struct ttimer tt[6], idle;
	int i;

	(void)state;
	sm_timer_heap_init(&h);
	for (i = 0; i < 6; i++) {
		tt_init(&tt[i], i, &h);
		assert_int_equal(sm_timer_heap_add(&h, &tt[i].t, 10 + (uint64_t)i * 10), 0);
	}
	assert_true(sm_timer_heap_del(&h, &tt[0].t)); /* head */
	assert_int_equal(sm_timer_heap_next(&h), 20);
	assert_true(sm_timer_heap_del(&h, &tt[5].t)); /* tail (latest) */
	assert_true(sm_timer_heap_del(&h, &tt[2].t)); /* middle */
	assert_false(sm_timer_armed(&tt[2].t));
	assert_false(sm_timer_heap_del(&h, &tt[2].t)); /* already cancelled */

	tt_init(&idle, 99, &h);
	assert_false(sm_timer_heap_del(&h, &idle.t)); /* never armed */

	assert_int_equal(sm_timer_heap_expire(&h, 1000), 3);
	assert_int_equal(fired_log[0], 1);
	assert_int_equal(fired_log[1], 3);
	assert_int_equal(fired_log[2], 4);
	assert_int_equal(tt[0].calls + tt[2].calls + tt[5].calls, 0);
	sm_timer_heap_fini(&h);
}

static void
test_rearm_changes_deadline(void **state)
{
	struct sm_timer_heap h;
	struct ttimer a, b;

	(void)state;
	sm_timer_heap_init(&h);
	tt_init(&a, 1, &h);
	tt_init(&b, 2, &h);
	assert_int_equal(sm_timer_heap_add(&h, &a.t, 10), 0);
	assert_int_equal(sm_timer_heap_add(&h, &b.t, 20), 0);
	/* Re-arming an armed timer moves it, it does not add a second entry. */
	assert_int_equal(sm_timer_heap_add(&h, &a.t, 30), 0);
	assert_int_equal(h.len, 2);
	assert_int_equal(sm_timer_heap_next(&h), 20);
	assert_int_equal(sm_timer_heap_expire(&h, 25), 1);
	assert_int_equal(fired_log[0], 2);
	/* Earlier again. */
	assert_int_equal(sm_timer_heap_add(&h, &a.t, 26), 0);
	assert_int_equal(sm_timer_heap_next(&h), 26);
	assert_int_equal(sm_timer_heap_expire(&h, 26), 1);
	assert_int_equal(a.calls, 1);
	assert_int_equal(sm_timer_heap_next(&h), UINT64_MAX);
	sm_timer_heap_fini(&h);
}

static void
test_rearm_from_callback_fires_once(void **state)
{
	struct sm_timer_heap h;
	struct ttimer a, b, c;

	(void)state;
	sm_timer_heap_init(&h);
	tt_init(&a, 1, &h);
	tt_init(&b, 2, &h);
	tt_init(&c, 3, &h);
	/* a re-arms itself for a time already due, earlier than b's deadline. */
	a.rearm_at = 1;
	assert_int_equal(sm_timer_heap_add(&h, &a.t, 5), 0);
	assert_int_equal(sm_timer_heap_add(&h, &b.t, 8), 0);
	assert_int_equal(sm_timer_heap_add(&h, &c.t, 50), 0);

	/* b is due too and must still fire although the re-armed a sorts first. */
	assert_int_equal(sm_timer_heap_expire(&h, 10), 2);
	assert_int_equal(a.calls, 1);
	assert_int_equal(b.calls, 1);
	assert_int_equal(c.calls, 0);
	assert_true(sm_timer_armed(&a.t));
	assert_int_equal(sm_timer_heap_next(&h), 1);

	/* Next call: a fires again (once), re-arming once more. */
	assert_int_equal(sm_timer_heap_expire(&h, 10), 1);
	assert_int_equal(a.calls, 2);
	a.rearm_at = 0;
	assert_int_equal(sm_timer_heap_expire(&h, 10), 1);
	assert_int_equal(a.calls, 3);
	assert_false(sm_timer_armed(&a.t));
	assert_int_equal(sm_timer_heap_expire(&h, 10), 0);
	sm_timer_heap_fini(&h);
}

static void
test_fini_disarms(void **state)
{
	struct sm_timer_heap h;
	struct ttimer tt[200];
	int i;

	(void)state;
	sm_timer_heap_init(&h);
	/* 200 > 64 forces at least two growths. */
	for (i = 0; i < 200; i++) {
		tt_init(&tt[i], i, &h);
		assert_int_equal(sm_timer_heap_add(&h, &tt[i].t, (uint64_t)(i * 7919 % 200)), 0);
	}
	assert_true(h.cap >= 200);
	sm_timer_heap_fini(&h);
	for (i = 0; i < 200; i++)
		assert_false(sm_timer_armed(&tt[i].t));
	assert_int_equal(sm_timer_heap_next(&h), UINT64_MAX);
}

/* Random operations checked against a brute-force model. */
#define MODEL_N 300

struct model {
	bool armed;
	uint64_t expires;
	uint64_t order; /* arming order */
};

static void
test_random_against_model(void **state)
{
	static struct ttimer tt[MODEL_N];
	static struct model m[MODEL_N];
	struct sm_timer_heap h;
	uint64_t now = 0, order = 0, best;
	unsigned seed = 12345, op, k, i, nfired, expect_fired;
	int pick;

	(void)state;
	sm_timer_heap_init(&h);
	for (i = 0; i < MODEL_N; i++) {
		tt_init(&tt[i], (int)i, &h);
		m[i].armed = false;
	}

	for (op = 0; op < 10000; op++) {
		k = (unsigned)rand_r(&seed) % MODEL_N;
		switch (rand_r(&seed) % 4) {
		case 0:
		case 1: /* arm or re-arm */
			m[k].expires = now + (uint64_t)(rand_r(&seed) % 50);
			m[k].armed = true;
			m[k].order = order++;
			assert_int_equal(sm_timer_heap_add(&h, &tt[k].t, m[k].expires), 0);
			break;
		case 2: /* cancel */
			assert_int_equal(sm_timer_heap_del(&h, &tt[k].t), m[k].armed);
			m[k].armed = false;
			break;
		case 3: /* advance and expire */
			now += (uint64_t)(rand_r(&seed) % 10);
			expect_fired = 0;
			for (i = 0; i < MODEL_N; i++)
				expect_fired += m[i].armed && m[i].expires <= now;
			fired_n = 0;
			nfired = sm_timer_heap_expire(&h, now);
			assert_int_equal(nfired, expect_fired);
			assert_int_equal(fired_n, expect_fired);
			/* Replay the model: each fired id must be the model's minimum. */
			for (i = 0; i < nfired; i++) {
				unsigned j;

				pick = -1;
				for (j = 0; j < MODEL_N; j++) {
					if (!m[j].armed)
						continue;
					if (pick < 0 || m[j].expires < m[pick].expires ||
					    (m[j].expires == m[pick].expires &&
					     m[j].order < m[pick].order))
						pick = (int)j;
				}
				assert_int_equal(fired_log[i], pick);
				m[pick].armed = false;
			}
			break;
		}

		best = UINT64_MAX;
		for (i = 0; i < MODEL_N; i++) {
			assert_int_equal(sm_timer_armed(&tt[i].t), m[i].armed);
			if (m[i].armed && m[i].expires < best)
				best = m[i].expires;
		}
		assert_int_equal(sm_timer_heap_next(&h), best);
		/* heap_idx is the slot holding the timer; parents sort first. */
		for (i = 0; i < h.len; i++) {
			assert_int_equal(h.v[i]->heap_idx, i);
			if (i > 0)
				assert_true(h.v[(i - 1) / 2]->expires_ms <= h.v[i]->expires_ms);
		}
	}
	sm_timer_heap_fini(&h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_order_by_deadline, setup),
		cmocka_unit_test_setup(test_fifo_equal_deadlines, setup),
		cmocka_unit_test_setup(test_cancel, setup),
		cmocka_unit_test_setup(test_rearm_changes_deadline, setup),
		cmocka_unit_test_setup(test_rearm_from_callback_fires_once, setup),
		cmocka_unit_test_setup(test_fini_disarms, setup),
		cmocka_unit_test_setup(test_random_against_model, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
