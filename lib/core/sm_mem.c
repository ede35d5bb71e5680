/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sm_common.h"
#include "sm_mem.h"
#include "sm_stats.h"

#ifdef SM_USE_MIMALLOC
#include <mimalloc.h>
#else
#include <malloc.h>
#endif

/*
 * Counting: every successful allocation adds the block's usable size (what
 * the backend really handed out, so mem_in_use matches the heap's view) and
 * every free subtracts it, on the calling thread's counter block.
 */
static inline struct sm_sw_stats *
sm_mem_stats(void)
{
	if (SM_UNLIKELY(sm_tls_stats == NULL))
		return sm_stats_fallback_attach();
	return sm_tls_stats;
}

/* The calling thread's allocation limit: its budget, or no limit. */
static __thread int64_t sm_mem_limit = INT64_MAX;

/* Would @size more bytes pass the calling shard's budget? One compare. */
static inline bool
sm_mem_over_budget(size_t size)
{
	const struct sm_sw_stats *st = sm_mem_stats();

	return SM_UNLIKELY(st->mem_in_use + (int64_t)SM_MIN(size, (size_t)INT64_MAX / 4) >
			   sm_mem_limit);
}

void
sm_mem_set_budget(size_t bytes)
{
	bytes = SM_MIN(bytes, (size_t)INT64_MAX / 2);
	sm_mem_stats()->mem_budget = (int64_t)bytes;
	sm_mem_limit = bytes != 0 ? (int64_t)bytes : INT64_MAX;
}

size_t
sm_mem_budget(void)
{
	return (size_t)sm_mem_stats()->mem_budget;
}

static inline void
sm_mem_count_alloc(size_t usable)
{
	struct sm_sw_stats *st = sm_mem_stats();

	st->allocs++;
	st->bytes_allocated += usable;
	st->mem_in_use += (int64_t)usable;
}

static inline void
sm_mem_count_free(size_t usable)
{
	struct sm_sw_stats *st = sm_mem_stats();

	st->frees++;
	st->mem_in_use -= (int64_t)usable;
}

#ifdef SM_USE_MIMALLOC

static __thread mi_heap_t *sm_heap;

int
sm_mem_thread_init(void)
{
	sm_mem_stats();
	if (sm_heap != NULL)
		return 0;
	/*
	 * Decommit freed memory at once, not 25 ms later: mimalloc 2.0 only
	 * carries out a delayed decommit when the heap is busy again, so after
	 * a burst (1,000 hostile connections: 900 MiB) RSS stayed at 150-230
	 * MiB with 8 MiB in use; with 0 it falls back to 36 MiB, and the
	 * write loads ran as fast (docs/benchmarks.md, "Hostile clients").
	 */
	mi_option_set(mi_option_decommit_delay, 0);
	sm_heap = mi_heap_new();
	return sm_heap == NULL ? -ENOMEM : 0;
}

void
sm_mem_thread_fini(void)
{
	if (sm_heap == NULL)
		return;
	/* mi_heap_delete, not destroy: blocks still live move to the default heap. */
	mi_heap_delete(sm_heap);
	sm_heap = NULL;
}

void
sm_mem_collect(void)
{
	if (sm_heap != NULL)
		mi_heap_collect(sm_heap, true);
}

static inline void *
sm_backend_malloc(size_t size)
{
	return sm_heap != NULL ? mi_heap_malloc(sm_heap, size) : mi_malloc(size);
}

static inline void *
sm_backend_calloc(size_t n, size_t size)
{
	return sm_heap != NULL ? mi_heap_calloc(sm_heap, n, size) : mi_calloc(n, size);
}

static inline void *
sm_backend_realloc(void *p, size_t size)
{
	return sm_heap != NULL ? mi_heap_realloc(sm_heap, p, size) : mi_realloc(p, size);
}

static inline void
sm_backend_free(void *p)
{
	mi_free(p);
}

static inline size_t
sm_backend_usable(const void *p)
{
	return mi_usable_size(p);
}

#else /* glibc */

int
sm_mem_thread_init(void)
{
	sm_mem_stats();
	return 0;
}

void
sm_mem_thread_fini(void)
{
}

void
sm_mem_collect(void)
{
	/* The glibc heap is the sanitizers' build: their allocator owns the
	 * memory, and glibc's malloc_trim() walks arenas it never set up. */
}

static inline void *
sm_backend_malloc(size_t size)
{
	return malloc(size);
}

static inline void *
sm_backend_calloc(size_t n, size_t size)
{
	return calloc(n, size);
}

static inline void *
sm_backend_realloc(void *p, size_t size)
{
	return realloc(p, size);
}

static inline void
sm_backend_free(void *p)
{
	free(p);
}

static inline size_t
sm_backend_usable(const void *p)
{
	/* glibc's prototype takes a non-const pointer but does not write. */
	return malloc_usable_size((void *)(uintptr_t)p);
}

#endif

void *
sm_malloc(size_t size)
{
	void *p;

	if (sm_mem_over_budget(size))
		return NULL;
	p = sm_backend_malloc(size);

	if (p != NULL)
		sm_mem_count_alloc(sm_backend_usable(p));
	return p;
}

void *
sm_calloc(size_t n, size_t size)
{
	void *p;

	if (size != 0 && n > SIZE_MAX / size)
		return NULL;
	if (sm_mem_over_budget(n * size))
		return NULL;
	p = sm_backend_calloc(n, size);

	if (p != NULL)
		sm_mem_count_alloc(sm_backend_usable(p));
	return p;
}

/*
 * realloc(NULL, n) counts as one alloc. With an old block, a successful call
 * counts one free of the old block and one alloc of the new one, whether the
 * block moved or grew in place, so bytes_allocated grows by the new usable
 * size and mem_in_use by the difference. A failed call counts nothing (the
 * old block is untouched). realloc(p, 0) frees p, is counted as a free, and
 * returns NULL.
 */
void *
sm_realloc(void *p, size_t size)
{
	size_t old_usable;
	void *q;

	if (p == NULL)
		return sm_malloc(size);
	if (size == 0) {
		sm_free(p);
		return NULL;
	}
	old_usable = sm_backend_usable(p);
	if (size > old_usable && sm_mem_over_budget(size - old_usable))
		return NULL;
	q = sm_backend_realloc(p, size);
	if (q == NULL)
		return NULL;
	sm_mem_count_free(old_usable);
	sm_mem_count_alloc(sm_backend_usable(q));
	return q;
}

size_t
sm_usable_size(const void *p)
{
	return p != NULL ? sm_backend_usable(p) : 0;
}

void
sm_free(void *p)
{
	if (p == NULL)
		return;
	sm_mem_count_free(sm_backend_usable(p));
	sm_backend_free(p);
}

char *
sm_strdup(const char *s)
{
	size_t len = strlen(s) + 1;
	char *d = sm_malloc(len);

	if (d != NULL)
		memcpy(d, s, len);
	return d;
}

/*
 * Pools. A slab is a header followed by per_slab objects; the header keeps
 * the objects 16-byte aligned (malloc returns 16-byte aligned memory). Free
 * objects hold the free-list link in their first word.
 */
#define SM_POOL_ALIGN 16u
#define SM_POOL_SLAB_BYTES (64u * 1024u)
#define SM_POOL_MIN_PER_SLAB 8u

struct sm_pool_slab {
	struct sm_pool_slab *next;
} __attribute__((aligned(SM_POOL_ALIGN)));

/* Add @slab to @p with all its objects free. */
static void
sm_pool_add_slab(struct sm_pool *p, struct sm_pool_slab *slab)
{
	char *obj;
	unsigned i;

	slab->next = p->slabs;
	p->slabs = slab;
	/* Push in reverse so gets hand objects out in address order. */
	obj = (char *)(slab + 1) + (size_t)(p->per_slab - 1) * p->obj_size;
	for (i = 0; i < p->per_slab; i++, obj -= p->obj_size) {
		*(void **)obj = p->free_list;
		p->free_list = obj;
	}
	p->capacity += p->per_slab;
}

static int
sm_pool_grow(struct sm_pool *p)
{
	struct sm_pool_slab *slab;

	slab = sm_malloc(sizeof(*slab) + (size_t)p->per_slab * p->obj_size);
	if (slab == NULL)
		return -ENOMEM;
	sm_pool_add_slab(p, slab);
	return 0;
}

int
sm_pool_init(struct sm_pool *p, const char *name, size_t obj_size, unsigned prealloc)
{
	size_t stride;
	size_t per_slab;
	int ret;

	memset(p, 0, sizeof(*p));
	p->name = name; /* not copied: pool names are string literals */

	stride = SM_MAX(obj_size, sizeof(void *));
	if (stride > SIZE_MAX / 2 / SM_POOL_MIN_PER_SLAB)
		return -EINVAL;
	stride = (stride + SM_POOL_ALIGN - 1) & ~(size_t)(SM_POOL_ALIGN - 1);
	per_slab = (SM_POOL_SLAB_BYTES - sizeof(struct sm_pool_slab)) / stride;
	if (per_slab < SM_POOL_MIN_PER_SLAB)
		per_slab = SM_POOL_MIN_PER_SLAB;
	/* obj_size becomes the stride, so callers see what each object really gets. */
	p->obj_size = stride;
	p->per_slab = (unsigned)per_slab;

	while (p->capacity < prealloc) {
		ret = sm_pool_grow(p);
		if (ret < 0)
			goto free_slabs;
	}
	return 0;

free_slabs:
	sm_pool_destroy(p);
	return ret;
}

void *
sm_pool_get(struct sm_pool *p)
{
	void *obj;

	if (SM_UNLIKELY(p->free_list == NULL) && sm_pool_grow(p) < 0)
		return NULL;
	obj = p->free_list;
	p->free_list = *(void **)obj;
	p->in_use++;
	return obj;
}

void
sm_pool_put(struct sm_pool *p, void *obj)
{
	if (obj == NULL)
		return;
	*(void **)obj = p->free_list;
	p->free_list = obj;
	p->in_use--;
}

/* Free every slab and forget the objects. */
static void
sm_pool_free_slabs(struct sm_pool *p)
{
	struct sm_pool_slab *slab = p->slabs;
	struct sm_pool_slab *next;

	while (slab != NULL) {
		next = slab->next;
		sm_free(slab);
		slab = next;
	}
	p->slabs = NULL;
	p->free_list = NULL;
	p->in_use = 0;
	p->capacity = 0;
}

void
sm_pool_trim(struct sm_pool *p)
{
	struct sm_pool_slab *keep = p->slabs;

	if (p->in_use != 0 || keep == NULL || keep->next == NULL)
		return;
	p->slabs = keep->next;
	sm_pool_free_slabs(p); /* the others */
	sm_pool_add_slab(p, keep);
}

static void
sm_pool_idle(void *arg)
{
	sm_pool_trim(arg);
}

void
sm_pool_trim_when_idle(struct sm_pool *p)
{
	if (p->idle_armed || !sm_on_shard())
		return;
	p->idle.fn = sm_pool_idle;
	p->idle.arg = p;
	sm_shard_on_idle(&p->idle);
	p->idle_armed = true;
}

void
sm_pool_destroy(struct sm_pool *p)
{
	if (p->idle_armed) {
		sm_shard_remove_idle_hook(&p->idle);
		p->idle_armed = false;
	}
	sm_pool_free_slabs(p);
}
