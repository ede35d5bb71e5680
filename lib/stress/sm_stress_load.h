/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The load's data: keys, cell values, key populations and pacing.
 *
 * Everything here is per client shard and deterministic: a shard owns its
 * generator state, so no request path shares a random number generator
 * (the lesson of cassandra-stress's shared java.util.Random, 8-20% of its
 * throughput), and the same key index always gives the same key and the
 * same cell values, so a read can check what it got without having kept
 * anything from the write.
 */
#ifndef SM_STRESS_LOAD_H
#define SM_STRESS_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sm_random.h"
#include "sm_stress.h"

/* cassandra-stress's key: 10 printable characters (a blob in standard1). */
#define SM_STRESS_KEY_LEN 10

/* A standard normal deviate (Box-Muller; one of the pair is dropped). */
double
sm_stress_rng_gauss(struct sm_rand *r);

/*
 * The key of population index @i: SM_STRESS_KEY_LEN bytes of [0-9A-Z]
 * drawn from a hash of @i, so keys spread over the token ring whatever the
 * population range.
 */
void
sm_stress_key(uint64_t i, uint8_t out[SM_STRESS_KEY_LEN]);

/*
 * Fill @out with @len bytes of column @col's value for population index
 * @i. Deterministic: a read regenerates it to check the row it got.
 */
void
sm_stress_value(uint64_t i, unsigned col, uint8_t *out, size_t len);

/*
 * One shard's cursor over a distribution (sm_stress.h's struct
 * sm_stress_dist: FIXED, UNIFORM, GAUSSIAN, SEQ). For SEQ the shards
 * interleave: shard s of S takes min + s, min + s + S, ... so together they
 * cover the range once per pass with no shared counter.
 */
struct sm_stress_cursor {
	struct sm_stress_dist dist;
	bool wrap;	 /* SEQ: start over after max */
	uint64_t next;	 /* SEQ: offset of the next value from min */
	uint64_t stride; /* SEQ: the shard count */
};

/* Set up @c over @d for shard @shard of @nshards; -EINVAL for an empty range. */
int
sm_stress_cursor_init(struct sm_stress_cursor *c, const struct sm_stress_dist *d, bool wrap,
		      unsigned shard, unsigned nshards);

/*
 * The next value; false when a SEQ without wrap has passed max (the
 * population is exhausted for this shard).
 */
bool
sm_stress_cursor_next(struct sm_stress_cursor *c, struct sm_rand *r, uint64_t *out);

/*
 * Open-loop pacing for one shard: operation k is due at start + k * interval
 * (interval = nshards / rate seconds, so the shards together keep @rate).
 * Latency measured from the due time, not from when the request was sent,
 * is what corrects for coordinated omission.
 */
struct sm_stress_pace {
	uint64_t start_ns;
	double interval_ns; /* 0: unpaced */
	uint64_t issued;    /* operations given a due time so far */
};

/* Pace @rate ops/s over @nshards shards from @start_ns; @rate 0: unpaced. */
void
sm_stress_pace_init(struct sm_stress_pace *p, double rate, unsigned nshards, uint64_t start_ns);

/*
 * When the next operation is due: start_ns + issued * interval, or @now
 * when unpaced (every operation is due at once). It is not counted: the
 * caller that starts it then calls sm_stress_pace_next(). Inline, as the
 * next one: the pump asks for every operation.
 */
static inline uint64_t
sm_stress_pace_next_due(const struct sm_stress_pace *p, uint64_t now)
{
	if (p->interval_ns <= 0)
		return now;
	return p->start_ns + (uint64_t)((double)p->issued * p->interval_ns);
}

/* The due time of the next operation (start_ns + issued * interval), and count it. */
static inline uint64_t
sm_stress_pace_next(struct sm_stress_pace *p)
{
	uint64_t due = p->start_ns + (uint64_t)((double)p->issued * p->interval_ns);

	p->issued++;
	return due;
}

#endif /* SM_STRESS_LOAD_H */
