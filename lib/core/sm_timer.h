/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_TIMER_H
#define SM_TIMER_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Timers with millisecond resolution, kept in a per-shard binary min-heap.
 * The timer struct is intrusive and records its heap slot, so cancel is
 * O(log n) with no search and arming allocates only when the heap grows.
 */
struct sm_timer {
	uint64_t expires_ms;
	void (*fn)(void *arg);
	void *arg;
	uint32_t heap_idx; /* SM_TIMER_IDLE when not armed */
	uint64_t seq;	   /* insertion order: equal deadlines fire FIFO */
};

#define SM_TIMER_IDLE UINT32_MAX

struct sm_timer_heap {
	struct sm_timer **v;
	uint32_t len;
	uint32_t cap;
	uint64_t seq;
};

static inline void
sm_timer_init(struct sm_timer *t, void (*fn)(void *arg), void *arg)
{
	t->expires_ms = 0;
	t->fn = fn;
	t->arg = arg;
	t->heap_idx = SM_TIMER_IDLE;
	t->seq = 0;
}

static inline bool
sm_timer_armed(const struct sm_timer *t)
{
	return t->heap_idx != SM_TIMER_IDLE;
}

void
sm_timer_heap_init(struct sm_timer_heap *h);
void
sm_timer_heap_fini(struct sm_timer_heap *h);

/* Arm @t to fire at absolute time @expires_ms (re-arms if already armed). */
int
sm_timer_heap_add(struct sm_timer_heap *h, struct sm_timer *t, uint64_t expires_ms);

/* Disarm @t; returns false when it was not armed. */
bool
sm_timer_heap_del(struct sm_timer_heap *h, struct sm_timer *t);

/* Earliest deadline, or UINT64_MAX when no timer is armed. */
uint64_t
sm_timer_heap_next(const struct sm_timer_heap *h);

/*
 * Fire every timer due at @now_ms, earliest first. A callback may re-arm its
 * own timer or arm others; a timer re-armed for a time <= @now_ms fires on the
 * next call, never in a loop. Returns the number fired.
 */
unsigned
sm_timer_heap_expire(struct sm_timer_heap *h, uint64_t now_ms);

/* Arm @t on the calling shard to fire @delay_ms from now. */
int
sm_timer_arm(struct sm_timer *t, uint64_t delay_ms);

/* Cancel @t on the calling shard; false when it was not armed. */
bool
sm_timer_cancel(struct sm_timer *t);

#endif /* SM_TIMER_H */
