/* SPDX-License-Identifier: BSD-3-Clause */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sm_common.h"
#include "sm_mem.h"
#include "sm_stats.h"

#ifdef SM_USE_MIMALLOC
#include <mimalloc.h>
#define usable_size(p) mi_usable_size(p)
#else
#include <malloc.h>
#define usable_size(p) malloc_usable_size(p)
#endif

/* The calling thread's counters, attached the way sm_mem attaches them. */
static struct sm_sw_stats
snap(void)
{
	struct sm_sw_stats s;

	sm_sw_stats_read(sm_stats_fallback_attach(), &s);
	return s;
}

static int
setup(void **state)
{
	(void)state;
	return sm_mem_thread_init();
}

static int
teardown(void **state)
{
	(void)state;
	sm_mem_thread_fini();
	return 0;
}

static void
test_attach(void **state)
{
	(void)state;
	assert_non_null(sm_stats_fallback_attach());
	assert_ptr_equal(sm_stats_fallback_attach(), sm_tls_stats);
}

/* Past the budget allocations fail; sm_mem_pressure() comes first; 0 lifts it. */
static void
test_budget(void **state)
{
	int64_t used = snap().mem_in_use;
	void *p, *q, *r;

	(void)state;
	sm_mem_set_budget((size_t)(used > 0 ? used : 0) + (64u << 20));
	assert_int_equal(sm_mem_budget(), (size_t)(used > 0 ? used : 0) + (64u << 20));
	assert_false(sm_mem_pressure());
	p = sm_malloc(32u << 20);
	assert_non_null(p);
	assert_false(sm_mem_pressure());
	q = sm_malloc(30u << 20); /* within the last 4 MiB: writes would be refused */
	assert_non_null(q);
	assert_true(sm_mem_pressure());
	assert_null(sm_malloc(8u << 20));
	assert_null(sm_malloc(3u << 20));
	assert_null(sm_calloc(1, 8u << 20));
	assert_null(sm_realloc(q, 40u << 20));
	assert_null(sm_calloc(SIZE_MAX / 2, 4)); /* overflow, not a huge block */
	r = sm_realloc(q, 1u << 20); /* shrinking always fits */
	assert_non_null(r);
	assert_false(sm_mem_pressure());
	sm_free(r);
	sm_free(p);
	sm_mem_set_budget(0);
	assert_int_equal(sm_mem_budget(), 0);
	assert_false(sm_mem_pressure());
	p = sm_malloc(80u << 20);
	assert_non_null(p);
	sm_free(p);
}

static void
test_malloc_free_counted(void **state)
{
	struct sm_sw_stats a, b, c;
	size_t u;
	char *p;

	(void)state;
	a = snap();
	p = sm_malloc(100);
	assert_non_null(p);
	memset(p, 1, 100);
	u = usable_size(p);
	assert_true(u >= 100);
	b = snap();
	assert_int_equal(b.allocs - a.allocs, 1);
	assert_int_equal(b.frees - a.frees, 0);
	assert_int_equal(b.bytes_allocated - a.bytes_allocated, u);
	assert_int_equal(b.mem_in_use - a.mem_in_use, (int64_t)u);

	sm_free(p);
	c = snap();
	assert_int_equal(c.allocs - b.allocs, 0);
	assert_int_equal(c.frees - b.frees, 1);
	assert_int_equal(c.bytes_allocated, b.bytes_allocated);
	assert_int_equal(c.mem_in_use, a.mem_in_use);
}

static void
test_calloc_counted_and_zeroed(void **state)
{
	struct sm_sw_stats a, b;
	unsigned char *p;
	size_t i, u;

	(void)state;
	a = snap();
	p = sm_calloc(10, 33);
	assert_non_null(p);
	for (i = 0; i < 330; i++)
		assert_int_equal(p[i], 0);
	u = usable_size(p);
	b = snap();
	assert_int_equal(b.allocs - a.allocs, 1);
	assert_int_equal(b.bytes_allocated - a.bytes_allocated, u);
	assert_int_equal(b.mem_in_use - a.mem_in_use, (int64_t)u);
	sm_free(p);
	assert_int_equal(snap().mem_in_use, a.mem_in_use);
}

static void
test_realloc_counted(void **state)
{
	struct sm_sw_stats a, b, c, d;
	size_t u1, u2;
	char *p, *q;

	(void)state;
	/* realloc(NULL, n) is one alloc. */
	a = snap();
	p = sm_realloc(NULL, 24);
	assert_non_null(p);
	memcpy(p, "0123456789", 11);
	u1 = usable_size(p);
	b = snap();
	assert_int_equal(b.allocs - a.allocs, 1);
	assert_int_equal(b.frees - a.frees, 0);
	assert_int_equal(b.mem_in_use - a.mem_in_use, (int64_t)u1);

	/* With an old block: one free of it plus one alloc of the result. */
	q = sm_realloc(p, 100000);
	assert_non_null(q);
	assert_string_equal(q, "0123456789");
	u2 = usable_size(q);
	c = snap();
	assert_int_equal(c.allocs - b.allocs, 1);
	assert_int_equal(c.frees - b.frees, 1);
	assert_int_equal(c.bytes_allocated - b.bytes_allocated, u2);
	assert_int_equal(c.mem_in_use - a.mem_in_use, (int64_t)u2);

	/* realloc(p, 0) frees. */
	assert_null(sm_realloc(q, 0));
	d = snap();
	assert_int_equal(d.allocs - c.allocs, 0);
	assert_int_equal(d.frees - c.frees, 1);
	assert_int_equal(d.mem_in_use, a.mem_in_use);
}

static void
test_strdup_counted(void **state)
{
	struct sm_sw_stats a, b;
	char *s;

	(void)state;
	a = snap();
	s = sm_strdup("shardmark");
	assert_non_null(s);
	assert_string_equal(s, "shardmark");
	b = snap();
	assert_int_equal(b.allocs - a.allocs, 1);
	assert_int_equal(b.mem_in_use - a.mem_in_use, (int64_t)usable_size(s));
	sm_free(s);
	assert_int_equal(snap().mem_in_use, a.mem_in_use);
}

static void
test_free_null_uncounted(void **state)
{
	struct sm_sw_stats a, b;

	(void)state;
	a = snap();
	sm_free(NULL);
	b = snap();
	assert_memory_equal(&a, &b, sizeof(a));
}

struct xfree {
	void *p;
	size_t usable;
	struct sm_sw_stats before, after;
};

static void *
free_on_other_thread(void *arg)
{
	struct xfree *x = arg;

	sm_mem_thread_init();
	x->before = snap();
	sm_free(x->p);
	x->after = snap();
	sm_mem_thread_fini();
	return NULL;
}

static void
test_free_on_other_thread(void **state)
{
	struct sm_sw_stats a, b;
	struct xfree x;
	pthread_t th;

	(void)state;
	x.p = sm_malloc(256);
	assert_non_null(x.p);
	x.usable = usable_size(x.p);
	a = snap();
	assert_int_equal(pthread_create(&th, NULL, free_on_other_thread, &x), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	b = snap();

	/* Counted on the freeing thread, whose mem_in_use goes negative. */
	assert_int_equal(x.after.frees - x.before.frees, 1);
	assert_int_equal(x.after.mem_in_use - x.before.mem_in_use, -(int64_t)x.usable);
	assert_int_equal(x.after.mem_in_use, -(int64_t)x.usable);
	/* ...and not on this one. */
	assert_int_equal(b.frees, a.frees);
	assert_int_equal(b.mem_in_use, a.mem_in_use);
}

static void
test_thread_fini_keeps_live_blocks(void **state)
{
	char *p;

	(void)state;
	/* A block from a heap that is then released stays usable and freeable. */
	p = sm_strdup("survives");
	assert_non_null(p);
	sm_mem_thread_fini();
	assert_string_equal(p, "survives");
	sm_free(p);
	assert_int_equal(sm_mem_thread_init(), 0);
}

struct obj {
	uint64_t a, b, c;
	char name[13];
};

static void
test_pool_reuse_no_allocs(void **state)
{
	struct sm_sw_stats a, b;
	struct sm_pool pool;
	void *objs[64];
	unsigned i, k;

	(void)state;
	assert_int_equal(sm_pool_init(&pool, "obj", sizeof(struct obj), 64), 0);
	assert_true(pool.capacity >= 64);
	assert_true(pool.per_slab >= 8);
	assert_true(pool.obj_size >= sizeof(struct obj));
	assert_int_equal(pool.in_use, 0);

	/* Warm-up done by prealloc: 10,000 cycles allocate nothing. */
	a = snap();
	for (i = 0; i < 10000; i++) {
		for (k = 0; k < 64; k++) {
			objs[k] = sm_pool_get(&pool);
			assert_non_null(objs[k]);
			assert_int_equal((uintptr_t)objs[k] % 16, 0);
			memset(objs[k], 0xa5, sizeof(struct obj));
		}
		assert_int_equal(pool.in_use, 64);
		for (k = 0; k < 64; k++)
			sm_pool_put(&pool, objs[k]);
		assert_int_equal(pool.in_use, 0);
	}
	b = snap();
	assert_int_equal(b.allocs - a.allocs, 0);
	assert_int_equal(b.frees - a.frees, 0);

	/* A put object comes back (LIFO reuse, same memory). */
	objs[0] = sm_pool_get(&pool);
	sm_pool_put(&pool, objs[0]);
	assert_ptr_equal(sm_pool_get(&pool), objs[0]);
	sm_pool_put(&pool, objs[0]);
	sm_pool_destroy(&pool);
}

static void
test_pool_growth_one_alloc_per_slab(void **state)
{
	struct sm_sw_stats a, b, c, d;
	struct sm_pool pool;
	void **objs;
	unsigned i, per;

	(void)state;
	a = snap();
	assert_int_equal(sm_pool_init(&pool, "grow", 100, 0), 0);
	assert_int_equal(pool.capacity, 0);
	assert_int_equal(snap().allocs, a.allocs);
	per = pool.per_slab;
	/* ~64 KiB slabs of 16-byte aligned 112-byte objects. */
	assert_int_equal(pool.obj_size, 112);
	assert_true(per >= 8);
	assert_true((uint64_t)per * pool.obj_size <= 64 * 1024);
	assert_true((uint64_t)(per + 1) * pool.obj_size > 64 * 1024 - 16);

	objs = calloc(2 * (size_t)per + 1, sizeof(*objs));
	assert_non_null(objs);

	b = snap();
	objs[0] = sm_pool_get(&pool);
	assert_non_null(objs[0]);
	c = snap();
	assert_int_equal(c.allocs - b.allocs, 1); /* first slab */
	assert_int_equal(pool.capacity, per);
	assert_int_equal(pool.in_use, 1);

	for (i = 1; i < per; i++)
		objs[i] = sm_pool_get(&pool);
	assert_int_equal(snap().allocs, c.allocs); /* the slab covered them */
	objs[per] = sm_pool_get(&pool);
	d = snap();
	assert_int_equal(d.allocs - c.allocs, 1); /* second slab */
	assert_int_equal(pool.capacity, 2 * (uint64_t)per);
	assert_int_equal(pool.in_use, per + 1);

	for (i = 0; i <= per; i++)
		sm_pool_put(&pool, objs[i]);
	assert_int_equal(pool.in_use, 0);
	assert_int_equal(pool.capacity, 2 * (uint64_t)per);

	sm_pool_destroy(&pool);
	d = snap();
	assert_int_equal(d.frees - a.frees, 2);
	assert_int_equal(d.mem_in_use, a.mem_in_use);
	assert_int_equal(pool.capacity, 0);
	assert_int_equal(pool.in_use, 0);
	assert_null(pool.slabs);
	free(objs);
}

static void
test_pool_small_and_large_objects(void **state)
{
	struct sm_pool small, large;
	void *p, *q;

	(void)state;
	/* Tiny objects still hold the free-list link. */
	assert_int_equal(sm_pool_init(&small, "tiny", 1, 1), 0);
	assert_true(small.obj_size >= sizeof(void *));
	assert_int_equal(small.obj_size % 16, 0);
	p = sm_pool_get(&small);
	q = sm_pool_get(&small);
	assert_non_null(p);
	assert_non_null(q);
	assert_ptr_not_equal(p, q);
	sm_pool_put(&small, p);
	sm_pool_put(&small, q);
	sm_pool_destroy(&small);

	/* Objects bigger than a slab: still at least 8 per slab. */
	assert_int_equal(sm_pool_init(&large, "big", 20000, 1), 0);
	assert_int_equal(large.per_slab, 8);
	assert_int_equal(large.capacity, 8);
	p = sm_pool_get(&large);
	memset(p, 0, 20000);
	sm_pool_put(&large, p);
	sm_pool_destroy(&large);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_attach),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_malloc_free_counted),
		cmocka_unit_test(test_calloc_counted_and_zeroed),
		cmocka_unit_test(test_realloc_counted),
		cmocka_unit_test(test_strdup_counted),
		cmocka_unit_test(test_free_null_uncounted),
		cmocka_unit_test(test_free_on_other_thread),
		cmocka_unit_test(test_thread_fini_keeps_live_blocks),
		cmocka_unit_test(test_pool_reuse_no_allocs),
		cmocka_unit_test(test_pool_growth_one_alloc_per_slab),
		cmocka_unit_test(test_pool_small_and_large_objects),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
