/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_CLOCK_H
#define SM_CLOCK_H

#include <stdint.h>
#include <time.h>

/*
 * Monotonic time. clock_gettime(CLOCK_MONOTONIC) goes through the vDSO, so it
 * costs no syscall; the reactor reads it once per batch of tasks, not per task.
 */
static inline uint64_t
sm_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t
sm_now_ms(void)
{
	return sm_now_ns() / 1000000ull;
}

#endif /* SM_CLOCK_H */
