/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_MEM_H
#define SM_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sm_shard.h"
#include "sm_stats.h"

/*
 * Per-shard memory.
 *
 * Every project allocation goes through sm_malloc() and friends so that each
 * shard counts its own allocations (allocs/op in the benchmarks). The backend
 * is a mimalloc heap per shard thread (mi_heap_t: thread-local, lock-free,
 * first-touch NUMA-local on the pinned thread), or glibc malloc when built
 * for sanitizers so ASan sees every object. Memory may be freed by another
 * shard; the free is counted on the freeing shard, so a shard's mem_in_use can
 * go below zero while the sum over shards stays exact.
 */

/* Create the calling thread's heap; called by each shard thread at start. */
int
sm_mem_thread_init(void);

/* Release the calling thread's heap (objects still live move to the default heap). */
void
sm_mem_thread_fini(void);

/*
 * The calling shard's memory budget (Seastar's --memory split per shard):
 * above @bytes of mem_in_use, allocations fail (NULL, then the caller's
 * -ENOMEM path: an error to the client, never the OOM killer); 0 turns the
 * budget off. Writes are refused earlier, at sm_mem_pressure(), so that
 * the requests and replies of reads and deletes still find memory.
 */
void
sm_mem_set_budget(size_t bytes);

/* The calling shard's budget in bytes; 0: none. */
size_t
sm_mem_budget(void);

/*
 * True when the calling shard has used all but the last sixteenth of its
 * budget (at least 4 MiB kept back): stop taking on data (refuse writes)
 * until deletes or drops bring it down.
 */
static inline bool
sm_mem_pressure(void)
{
	const struct sm_sw_stats *st = sm_tls_stats;
	int64_t keep;

	if (st == NULL || st->mem_budget == 0)
		return false;
	keep = SM_MAX(st->mem_budget / 16, (int64_t)4 << 20);
	return st->mem_in_use > st->mem_budget - keep;
}


/*
 * Give the calling shard's free memory back to the kernel (mimalloc keeps
 * freed pages in the heap until asked). The reactor calls it when the shard
 * goes idle, at most once a second, so RSS falls after a burst.
 */
void
sm_mem_collect(void);

void *
sm_malloc(size_t size);
void *
sm_calloc(size_t n, size_t size);
void *
sm_realloc(void *p, size_t size);
void
sm_free(void *p);
/*
 * The bytes @p may use: at least what was asked for, and the backend's
 * rounding on top (mimalloc's size class). A block that grows in place
 * into it (lib/store's packed rows) costs nothing more: mem_in_use already
 * counts the usable size.
 */
size_t
sm_usable_size(const void *p);
char *
sm_strdup(const char *s);

/*
 * Fixed-size object pool, owned by one shard (no locks). Objects come from
 * slabs; a slab is one counted allocation, so a warm pool serves gets and
 * puts with zero allocations.
 */
struct sm_pool {
	struct sm_idle_hook idle; /* sm_pool_trim_when_idle(): the calling shard's hook */
	bool idle_armed;
	const char *name;
	size_t obj_size;
	unsigned per_slab;
	void *free_list;
	void *slabs;	   /* singly linked through the slab header */
	uint64_t in_use;   /* objects handed out */
	uint64_t capacity; /* objects in all slabs */
};

/* Prepare @p for objects of @obj_size, preallocating @prealloc of them. */
int
sm_pool_init(struct sm_pool *p, const char *name, size_t obj_size, unsigned prealloc);

/* An object, or NULL when memory is exhausted. Grows by one slab when empty. */
void *
sm_pool_get(struct sm_pool *p);

/* Return @obj to the pool it came from (same shard). */
void
sm_pool_put(struct sm_pool *p, void *obj);

/*
 * When no object is in use, free every slab but the first: what a burst of
 * connections took goes back.
 */
void
sm_pool_trim(struct sm_pool *p);

/* Trim @p each time the calling shard goes idle (until sm_pool_destroy()). */
void
sm_pool_trim_when_idle(struct sm_pool *p);

/* Free every slab; objects still in use become invalid. */
void
sm_pool_destroy(struct sm_pool *p);

#endif /* SM_MEM_H */
