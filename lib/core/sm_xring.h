/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_XRING_H
#define SM_XRING_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "sm_common.h"

/*
 * Single-producer single-consumer ring of cross-shard messages, one per
 * ordered pair of shards (the N x N matrix). Messages travel by value, so
 * sending one allocates nothing.
 *
 * Written by hand rather than taken from DPDK's rte_ring: the default build
 * does not link DPDK, and a by-value SPSC ring with staged publication is a
 * few dozen lines. The producer stages messages into free slots and makes a
 * whole batch visible with one release store (sm_xring_publish); each side
 * caches the other's index so the shared line is read only when the cached
 * view runs out. Producer and consumer indexes live on separate cache lines.
 */

struct sm_xmsg {
	void (*fn)(void *arg); /* runs on the receiving shard */
	void *arg;
	void (*done)(void *arg); /* when set, runs back on the sender after fn */
	uint32_t from;		 /* sending shard */
	uint32_t flags;		 /* SM_XMSG_* */
};

#define SM_XMSG_REPLY 0x1u /* this is the done() leg: run done(arg), send nothing back */

struct sm_xring {
	/* shared indexes, each on its own line: the other side reads them */
	uint32_t tail SM_CACHE_ALIGNED; /* published by the producer */
	uint32_t head SM_CACHE_ALIGNED; /* released by the consumer */
	/* producer-private */
	uint32_t staged SM_CACHE_ALIGNED; /* written but not yet published */
	uint32_t head_cache;		  /* producer's view of head */
	/* consumer-private */
	uint32_t tail_cache SM_CACHE_ALIGNED; /* consumer's view of tail */
	/* read-only after init */
	uint32_t mask SM_CACHE_ALIGNED;
	struct sm_xmsg *slots;
};

/* Allocate a ring of @capacity slots (a power of two >= 2). */
int
sm_xring_create(struct sm_xring **r, uint32_t capacity);

void
sm_xring_destroy(struct sm_xring *r);

static inline uint32_t
sm_xring_capacity(const struct sm_xring *r)
{
	return r->mask + 1;
}

/* Producer: stage @m without publishing; false when the ring is full. */
static inline bool
sm_xring_stage(struct sm_xring *r, const struct sm_xmsg *m)
{
	uint32_t cap = r->mask + 1;

	if (r->staged - r->head_cache == cap) {
		r->head_cache = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
		if (r->staged - r->head_cache == cap)
			return false;
	}
	r->slots[r->staged & r->mask] = *m;
	r->staged++;
	return true;
}

/* Producer: number of staged, unpublished messages. */
static inline uint32_t
sm_xring_unpublished(const struct sm_xring *r)
{
	return r->staged - r->tail;
}

/* Producer: make every staged message visible to the consumer. */
static inline void
sm_xring_publish(struct sm_xring *r)
{
	__atomic_store_n(&r->tail, r->staged, __ATOMIC_RELEASE);
}

/* Consumer: true when no published message is waiting. */
static inline bool
sm_xring_empty(struct sm_xring *r)
{
	if (r->head != r->tail_cache)
		return false;
	r->tail_cache = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	return r->head == r->tail_cache;
}

/* Consumer: move up to @n published messages into @out; returns the count. */
static inline uint32_t
sm_xring_dequeue_burst(struct sm_xring *r, struct sm_xmsg *out, uint32_t n)
{
	uint32_t avail = r->tail_cache - r->head;
	uint32_t i;

	if (avail < n) {
		r->tail_cache = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
		avail = r->tail_cache - r->head;
	}
	if (n > avail)
		n = avail;
	if (n == 0)
		return 0; /* leave the shared line alone */
	for (i = 0; i < n; i++)
		out[i] = r->slots[(r->head + i) & r->mask];
	__atomic_store_n(&r->head, r->head + n, __ATOMIC_RELEASE);
	return n;
}

#endif /* SM_XRING_H */
