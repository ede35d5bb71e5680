/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdbool.h>
#include <sys/random.h>
#include <time.h>

#include "sm_random.h"
#include "sm_shard.h"

void
sm_rand_seed(struct sm_rand *r, uint64_t seed)
{
	unsigned i;

	for (i = 0; i < 4; i++)
		r->s[i] = sm_splitmix64(&seed);
}

uint64_t
sm_rand_below(struct sm_rand *r, uint64_t n)
{
	unsigned __int128 m = (unsigned __int128)sm_rand_next(r) * n;
	uint64_t low = (uint64_t)m, floor;

	if (low < n) {
		floor = -n % n;
		while (low < floor) {
			m = (unsigned __int128)sm_rand_next(r) * n;
			low = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}

static __thread struct sm_rand shard_rand;
static __thread bool shard_rand_seeded;

struct sm_rand *
sm_shard_rand(void)
{
	if (!shard_rand_seeded) {
		uint64_t seed = 0;
		struct timespec ts;

		/* getrandom() fails only before the pool is ready: the clock will do. */
		if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed)) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			seed = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		}
		sm_rand_seed(&shard_rand, seed ^ ((uint64_t)sm_shard_id() << 56));
		shard_rand_seeded = true;
	}
	return &shard_rand;
}
