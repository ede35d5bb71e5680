/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_TABLETS_H
#define SM_TABLETS_H

/*
 * Tablets: a table of a keyspace created with tablets = {'enabled': true}
 * splits the token ring into tablet_count (a power of two) contiguous
 * ranges, as ScyllaDB's tablet_map does (locator/tablets.cc,
 * dht/token.hh's compaction_group_of() and last_token_of_compaction_group()):
 * tablet i holds the tokens whose unbiased value (token + 2^63) has i in its
 * top log2(tablet_count) bits, so tablet i ends at
 * bias(((i + 1) << (64 - bits)) - 1), the last one at INT64_MAX. Each tablet
 * lives on one shard, i % nr_shards (round-robin; tablets never migrate), and
 * has this node as its one replica.
 *
 * Every path that picks the shard of a partition goes through
 * sm_table_shard_of_token(): the tablet's shard for such tables, ScyllaDB's
 * vnode sharding (sm_shard_of_token()) for the others.
 */

#include <stdbool.h>
#include <stdint.h>

#include "sm_schema.h"
#include "sm_token.h"

/* Most tablets a table may have ({'initial': N} above it is refused): bounds system.tablets. */
#define SM_TABLETS_MAX 4096u

/*
 * Tablets per shard of a table whose keyspace gave no 'initial': ScyllaDB
 * sizes a new table from the shard count too (tablets_initial_scale_factor);
 * a small multiple keeps each shard owning several disjoint ranges.
 */
#define SM_TABLETS_PER_SHARD 4u

/*
 * The tablet count of a new table of a tablets keyspace: @initial rounded
 * up to a power of two, or SM_TABLETS_PER_SHARD * @nr_shards rounded up when
 * @initial is 0; at least 1, at most SM_TABLETS_MAX.
 */
uint32_t
sm_tablets_count(uint32_t initial, unsigned nr_shards);

/*
 * The shard count tables are sized for while the runtime is not up yet
 * (the commitlog's schema replay): the app sets it to the --smp it will
 * start; sm_shard_count() wins once shards run. 0 forgets it.
 */
void
sm_tablets_set_shard_hint(unsigned nr_shards);

/* sm_shard_count() when shards run, else the hint, else 1. */
unsigned
sm_tablets_shard_count(void);

/* Set @t's tablet_count and tablet_bits for @count (a power of two; 0: vnodes). */
void
sm_table_set_tablets(struct sm_table *t, uint32_t count);

/* The tablet of @token in @t (a tablets table). */
static inline uint32_t
sm_tablet_of_token(const struct sm_table *t, int64_t token)
{
	uint64_t u = (uint64_t)token ^ (1ull << 63); /* unbiased: INT64_MIN is 0 */

	/* two shifts: one tablet (bits 0) must give 0, and a shift by 64 is undefined */
	return (uint32_t)((u >> 1) >> (63 - t->tablet_bits));
}

/* The last token of tablet @i of @t; its first (exclusive) is the previous one's, or INT64_MIN. */
int64_t
sm_tablet_last_token(const struct sm_table *t, uint32_t i);

/* The shard that stores tablet @i among @nr_shards (>= 1). */
static inline unsigned
sm_tablet_shard(uint32_t i, unsigned nr_shards)
{
	return i % nr_shards;
}

/* The shard that owns @token of table @t among @nr_shards (>= 1). */
static inline unsigned
sm_table_shard_of_token(const struct sm_table *t, int64_t token, unsigned nr_shards)
{
	if (__builtin_expect(t->tablet_count == 0, 1))
		return sm_shard_of_token(token, nr_shards, SM_SHARDING_IGNORE_MSB);
	return sm_tablet_shard(sm_tablet_of_token(t, token), nr_shards);
}

#endif /* SM_TABLETS_H */
