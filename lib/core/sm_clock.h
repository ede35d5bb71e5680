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

/*
 * A cycle counter for timing requests on hot paths: the TSC on x86-64 (a
 * few instructions where clock_gettime() takes dozens; every CPU this runs
 * on has an invariant TSC, constant_tsc/nonstop_tsc), the monotonic clock
 * elsewhere. sm_cycles_to_ns() converts a difference with the rate
 * sm_clock_calibrate() measured once against the monotonic clock.
 */
#if defined(__x86_64__)
#include <x86intrin.h>
static inline uint64_t
sm_cycles(void)
{
	return __rdtsc();
}
#else
static inline uint64_t
sm_cycles(void)
{
	return sm_now_ns();
}
#endif

/* Nanoseconds and microseconds per cycle, times 2^32 (0 before calibration). */
extern uint64_t sm_cycles_ns_mult, sm_cycles_us_mult;

/* Measure the cycle counter's rate (10 ms, once per process; later calls return at once). */
void
sm_clock_calibrate(void);

static inline uint64_t
sm_cycles_to_ns(uint64_t cycles)
{
	return (uint64_t)(((unsigned __int128)cycles * sm_cycles_ns_mult) >> 32);
}

static inline uint64_t
sm_cycles_to_us(uint64_t cycles)
{
	return (uint64_t)(((unsigned __int128)cycles * sm_cycles_us_mult) >> 32);
}

#endif /* SM_CLOCK_H */
