/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>

#include "sm_common.h"
#include "sm_mem.h"
#include "sm_timer.h"

#define SM_TIMER_HEAP_INITIAL 64u

/* Heap order: earlier deadline first, then earlier arming (FIFO). */
static inline bool
sm_timer_before(const struct sm_timer *a, const struct sm_timer *b)
{
	if (a->expires_ms != b->expires_ms)
		return a->expires_ms < b->expires_ms;
	return a->seq < b->seq;
}

static inline void
sm_timer_heap_set(struct sm_timer_heap *h, uint32_t i, struct sm_timer *t)
{
	h->v[i] = t;
	t->heap_idx = i;
}

static void
sm_timer_sift_up(struct sm_timer_heap *h, uint32_t i)
{
	struct sm_timer *t = h->v[i];
	uint32_t parent;

	while (i > 0) {
		parent = (i - 1) / 2;
		if (!sm_timer_before(t, h->v[parent]))
			break;
		sm_timer_heap_set(h, i, h->v[parent]);
		i = parent;
	}
	sm_timer_heap_set(h, i, t);
}

static void
sm_timer_sift_down(struct sm_timer_heap *h, uint32_t i)
{
	struct sm_timer *t = h->v[i];
	uint32_t child;

	for (;;) {
		/* 64-bit math: 2 * i + 1 must not wrap for a large heap. */
		uint64_t c = 2 * (uint64_t)i + 1;

		if (c >= h->len)
			break;
		child = (uint32_t)c;
		if (child + 1 < h->len && sm_timer_before(h->v[child + 1], h->v[child]))
			child++;
		if (!sm_timer_before(h->v[child], t))
			break;
		sm_timer_heap_set(h, i, h->v[child]);
		i = child;
	}
	sm_timer_heap_set(h, i, t);
}

/* Remove the armed timer at slot @i and mark it idle. */
static void
sm_timer_heap_remove_at(struct sm_timer_heap *h, uint32_t i)
{
	struct sm_timer *t = h->v[i];
	struct sm_timer *last;

	h->len--;
	if (i != h->len) {
		last = h->v[h->len];
		sm_timer_heap_set(h, i, last);
		/* The moved timer may belong above or below slot i. */
		if (i > 0 && sm_timer_before(last, h->v[(i - 1) / 2]))
			sm_timer_sift_up(h, i);
		else
			sm_timer_sift_down(h, i);
	}
	h->v[h->len] = NULL;
	t->heap_idx = SM_TIMER_IDLE;
}

void
sm_timer_heap_init(struct sm_timer_heap *h)
{
	h->v = NULL;
	h->len = 0;
	h->cap = 0;
	h->seq = 0;
}

void
sm_timer_heap_fini(struct sm_timer_heap *h)
{
	uint32_t i;

	/* Timers still armed must not point into a freed heap. */
	for (i = 0; i < h->len; i++)
		h->v[i]->heap_idx = SM_TIMER_IDLE;
	sm_free(h->v);
	sm_timer_heap_init(h);
}

static int
sm_timer_heap_grow(struct sm_timer_heap *h)
{
	uint32_t cap = h->cap == 0 ? SM_TIMER_HEAP_INITIAL : h->cap * 2;
	struct sm_timer **v;

	/* heap_idx must stay below SM_TIMER_IDLE, which marks idle timers. */
	if (h->cap >= SM_TIMER_IDLE / 2)
		return -ENOMEM;
	v = sm_realloc(h->v, (size_t)cap * sizeof(*v));
	if (v == NULL)
		return -ENOMEM;
	h->v = v;
	h->cap = cap;
	return 0;
}

int
sm_timer_heap_add(struct sm_timer_heap *h, struct sm_timer *t, uint64_t expires_ms)
{
	int ret;

	if (sm_timer_armed(t))
		sm_timer_heap_remove_at(h, t->heap_idx);
	if (h->len == h->cap) {
		ret = sm_timer_heap_grow(h);
		if (ret < 0)
			return ret;
	}
	t->expires_ms = expires_ms;
	t->seq = h->seq++;
	h->v[h->len] = t;
	h->len++;
	sm_timer_sift_up(h, h->len - 1);
	return 0;
}

bool
sm_timer_heap_del(struct sm_timer_heap *h, struct sm_timer *t)
{
	if (!sm_timer_armed(t))
		return false;
	sm_timer_heap_remove_at(h, t->heap_idx);
	return true;
}

uint64_t
sm_timer_heap_next(const struct sm_timer_heap *h)
{
	return h->len == 0 ? UINT64_MAX : h->v[0]->expires_ms;
}

/*
 * The earliest due timer armed before @seq_limit in the subtree at @i, or
 * NULL. Subtrees whose root is not due are skipped, so this visits only due
 * timers and their children.
 */
static struct sm_timer *
sm_timer_find_old_due(const struct sm_timer_heap *h, uint32_t i, uint64_t now_ms,
		      uint64_t seq_limit)
{
	struct sm_timer *t, *l, *r;
	uint64_t c;

	if (i >= h->len)
		return NULL;
	t = h->v[i];
	if (t->expires_ms > now_ms)
		return NULL;
	if (t->seq < seq_limit)
		return t; /* every timer below sorts after it */
	c = 2 * (uint64_t)i + 1;
	if (c >= h->len)
		return NULL;
	l = sm_timer_find_old_due(h, (uint32_t)c, now_ms, seq_limit);
	r = sm_timer_find_old_due(h, (uint32_t)c + 1, now_ms, seq_limit);
	if (l == NULL)
		return r;
	if (r == NULL)
		return l;
	return sm_timer_before(l, r) ? l : r;
}

/*
 * Only timers armed before this call started may fire (seq below the value
 * at entry); a callback that re-arms for <= @now_ms gets a newer seq and
 * waits for the next call. Such a timer can sit at the top of the heap ahead
 * of older due ones, so in that (rare) case the older ones are searched for.
 */
unsigned
sm_timer_heap_expire(struct sm_timer_heap *h, uint64_t now_ms)
{
	uint64_t seq_limit = h->seq;
	struct sm_timer *t;
	unsigned fired = 0;

	while (h->len > 0 && h->v[0]->expires_ms <= now_ms) {
		t = h->v[0];
		if (t->seq >= seq_limit) {
			t = sm_timer_find_old_due(h, 0, now_ms, seq_limit);
			if (t == NULL)
				break;
		}
		/* Idle before the call, so the callback may re-arm or free it. */
		sm_timer_heap_remove_at(h, t->heap_idx);
		fired++;
		t->fn(t->arg);
	}
	return fired;
}
