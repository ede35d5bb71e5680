/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_TEST_RNG_H
#define SM_TEST_RNG_H

/*
 * Deterministic pseudo-random numbers for unit tests (splitmix64, Steele,
 * Lea and Flood): a fixed seed gives the same sequence on every run, so a
 * failure reproduces.
 */

#include <stdint.h>

static inline uint64_t
sm_test_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

#endif /* SM_TEST_RNG_H */
