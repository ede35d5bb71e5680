/* SPDX-License-Identifier: BSD-3-Clause */
/* Tablets of a table: counts and token ranges (sm_tablets.h). */

#include "sm_tablets.h"

#include "sm_core.h"

static unsigned shard_hint;

void
sm_tablets_set_shard_hint(unsigned nr_shards)
{
	shard_hint = nr_shards;
}

unsigned
sm_tablets_shard_count(void)
{
	if (sm_shard_count() != 0)
		return sm_shard_count();
	return shard_hint != 0 ? shard_hint : 1;
}

uint32_t
sm_tablets_count(uint32_t initial, unsigned nr_shards)
{
	uint64_t want = initial != 0 ? initial : (uint64_t)SM_TABLETS_PER_SHARD * nr_shards;
	uint32_t n = 1;

	if (want > SM_TABLETS_MAX)
		want = SM_TABLETS_MAX;
	while (n < want)
		n <<= 1;
	return n;
}

void
sm_table_set_tablets(struct sm_table *t, uint32_t count)
{
	uint8_t bits = 0;

	while (bits < 31 && (1u << bits) < count)
		bits++;
	t->tablet_count = count;
	t->tablet_bits = count != 0 ? bits : 0;
}

int64_t
sm_tablet_last_token(const struct sm_table *t, uint32_t i)
{
	if (i + 1 >= t->tablet_count)
		return INT64_MAX;
	return (int64_t)((((uint64_t)(i + 1) << (64 - t->tablet_bits)) - 1) ^ (1ull << 63));
}
