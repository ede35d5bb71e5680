/* SPDX-License-Identifier: BSD-3-Clause */
/* The driver-side view queue of lib/net: references, merging, consumption. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sm_core.h"
#include "sm_net.h"
#include "sm_net_driver.h"

struct tseg {
	struct sm_bufseg seg;
	int released;
	char data[64];
};

static void
tseg_release(struct sm_bufseg *seg)
{
	sm_container_of(seg, struct tseg, seg)->released++;
}

static void
tseg_init(struct tseg *t)
{
	memset(t, 0, sizeof(*t));
	t->seg.refcnt = 1;
	t->seg.release = tseg_release;
}

/* Views continuing the last one in the same segment merge: one reference. */
static void
test_merge_and_consume(void **state)
{
	struct tseg a, b;
	struct sm_iovq q = { 0 };
	struct sm_iov v;

	(void)state;
	tseg_init(&a);
	tseg_init(&b);
	v = (struct sm_iov){ &a.seg, a.data, 10 };
	assert_int_equal(sm_iovq_push(&q, &v, 1), 0);
	v = (struct sm_iov){ &a.seg, a.data + 10, 5 }; /* continues: merged */
	assert_int_equal(sm_iovq_push(&q, &v, 1), 0);
	v = (struct sm_iov){ &a.seg, a.data + 20, 5 }; /* a gap: its own entry */
	assert_int_equal(sm_iovq_push(&q, &v, 1), 0);
	v = (struct sm_iov){ &b.seg, b.data, 0 }; /* empty: skipped */
	assert_int_equal(sm_iovq_push(&q, &v, 1), 0);
	v = (struct sm_iov){ NULL, "static", 6 }; /* no segment: never merged */
	assert_int_equal(sm_iovq_push(&q, &v, 1), 0);
	assert_int_equal(q.len, 3);
	assert_int_equal(q.bytes, 26);
	assert_int_equal(a.seg.refcnt, 3);
	assert_int_equal(sm_iovq_at(&q, 0)->len, 15);
	sm_iovq_consume(&q, 12); /* part of the first */
	assert_int_equal(q.len, 3);
	assert_ptr_equal(sm_iovq_at(&q, 0)->base, a.data + 12);
	sm_iovq_consume(&q, 3); /* the rest of it: its reference goes */
	assert_int_equal(q.len, 2);
	assert_int_equal(a.seg.refcnt, 2);
	sm_iovq_consume(&q, 7); /* the second and one byte of the static one */
	assert_int_equal(q.len, 1);
	assert_int_equal(q.bytes, 4);
	assert_memory_equal(sm_iovq_at(&q, 0)->base, "atic", 4);
	sm_iovq_fini(&q);
	assert_int_equal(a.seg.refcnt, 1);
	assert_int_equal(b.seg.refcnt, 1);
	assert_int_equal(a.released, 0);
	assert_null(q.v);
}

/* The ring wraps and grows without losing order or references. */
static void
test_wrap_and_grow(void **state)
{
	struct tseg a;
	struct sm_iovq q = { 0 };
	struct sm_iov v;
	unsigned i, round;

	(void)state;
	tseg_init(&a);
	for (round = 0; round < 5; round++) {
		for (i = 0; i < 40; i++) {
			v = (struct sm_iov){ &a.seg, a.data + (i % 2) * 32, 1 };
			assert_int_equal(sm_iovq_push(&q, &v, 1), 0);
		}
		for (i = 0; i < 30; i++) {
			assert_ptr_equal(sm_iovq_at(&q, 0)->base, a.data + (i % 2) * 32);
			sm_iovq_consume(&q, 1);
		}
		sm_iovq_consume(&q, q.bytes);
		assert_int_equal(q.len, 0);
		assert_int_equal(a.seg.refcnt, 1);
	}
	sm_iovq_fini(&q);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_and_consume),
		cmocka_unit_test(test_wrap_and_grow),
	};

	sm_mem_thread_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
