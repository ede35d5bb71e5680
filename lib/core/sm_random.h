/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_RANDOM_H
#define SM_RANDOM_H

/*
 * Pseudo-random numbers: xoshiro256** (fast, 2^256 period, passes BigCrush)
 * seeded through splitmix64, as its authors advise; a generator is plain
 * state, so each shard (or each stream that must be reproducible) owns one
 * and no draw takes a lock. sm_shard_rand() is the calling shard's own,
 * as DPDK's rte_rand() keeps one state per lcore. Not for secrets.
 */

#include <stdint.h>

struct sm_rand {
	uint64_t s[4];
};

/*
 * splitmix64: advance *@x and return a well-mixed 64-bit value. Also a good
 * hash of a counter (keys from population indexes).
 */
static inline uint64_t
sm_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Seed @r from @seed; equal seeds give equal sequences. */
void
sm_rand_seed(struct sm_rand *r, uint64_t seed);

/* The next 64 random bits. */
static inline uint64_t
sm_rand_next(struct sm_rand *r)
{
	uint64_t *s = r->s;
	uint64_t x = s[1] * 5, t = s[1] << 17, out = ((x << 7) | (x >> 57)) * 9;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = (s[3] << 45) | (s[3] >> 19);
	return out;
}

/* A uniform integer in [0, n) without modulo bias (Lemire's method); n > 0. */
uint64_t
sm_rand_below(struct sm_rand *r, uint64_t n);

/* A uniform double in [0, 1), 53 random bits. */
static inline double
sm_rand_double(struct sm_rand *r)
{
	return (double)(sm_rand_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/*
 * The calling thread's generator (each shard's reactor is one thread),
 * seeded on first use from getrandom() and the thread's shard id.
 */
struct sm_rand *
sm_shard_rand(void);

#endif /* SM_RANDOM_H */
