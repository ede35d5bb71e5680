/* SPDX-License-Identifier: BSD-3-Clause */
/* The cycle counter's rate, measured once against CLOCK_MONOTONIC. */

#include <pthread.h>
#include <time.h>

#include "sm_clock.h"

uint64_t sm_cycles_ns_mult, sm_cycles_us_mult;

static pthread_once_t calibrate_once = PTHREAD_ONCE_INIT;

static void
calibrate(void)
{
	struct timespec nap = { .tv_sec = 0, .tv_nsec = 10 * 1000 * 1000 };
	uint64_t t0, t1, c0, c1;

#if !defined(__x86_64__)
	sm_cycles_ns_mult = 1ull << 32; /* sm_cycles() is the monotonic clock */
	sm_cycles_us_mult = sm_cycles_ns_mult / 1000;
	return;
#endif
	t0 = sm_now_ns();
	c0 = sm_cycles();
	nanosleep(&nap, NULL);
	t1 = sm_now_ns();
	c1 = sm_cycles();
	if (c1 <= c0 || t1 <= t0) {
		sm_cycles_ns_mult = 0; /* a counter that does not count: latencies read 0 */
		return;
	}
	sm_cycles_ns_mult = (uint64_t)(((unsigned __int128)(t1 - t0) << 32) / (c1 - c0));
	sm_cycles_us_mult = (uint64_t)(((unsigned __int128)(t1 - t0) << 32) / (c1 - c0) / 1000);
}

void
sm_clock_calibrate(void)
{
	pthread_once(&calibrate_once, calibrate);
}
