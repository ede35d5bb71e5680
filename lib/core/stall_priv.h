/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_STALL_PRIV_H
#define SM_STALL_PRIV_H

/*
 * The reactor stall detector (Seastar's --blocked-reactor-notify-ms), inside
 * lib/core. Each shard counts its loop rounds and says what it is doing (a
 * task, a poller, timers); a watchdog thread looks every half threshold, and
 * when a shard that is not asleep has not started a new round for the
 * threshold, it signals that shard's thread, whose handler takes a backtrace
 * there and then (the stack of the code that is stalling). The shard reports
 * it, with the stall's full length, when it gets back to the top of its
 * loop. Costs the reactor a store per round and per phase, and one per task.
 */

#include <pthread.h>
#include <signal.h>
#include <stdint.h>

#include "sm_log.h"

#define SM_STALL_FRAMES 32

struct sm_stall {
	uint64_t round;		 /* loop rounds started; written by the shard */
	const char *phase;	     /* what the round is doing now ("tasks", a poller's name) */
	void (*const *running)(void *); /* the task queue's running task, while in "tasks" */
	/* taken by the signal handler on the shard's own thread */
	volatile sig_atomic_t caught;
	int nframes;
	void *frames[SM_STALL_FRAMES];
	const char *caught_phase;
	void (*caught_fn)(void *);
	struct sm_ratelimit rl;
};

struct sm_stall_target {
	struct sm_stall *st;
	const int *sleeping; /* the shard's "blocked in its waiter" flag */
	pthread_t thread;
};

/*
 * Start the watchdog over @n shards: a stall is a round longer than
 * @threshold_ms; at most @reports_per_minute are logged (the rest counted).
 * Called once per run, from shard 0 once every shard has started. Returns
 * 0 or -errno (the detector is then off; the run goes on).
 */
int
sm_stall_start(const struct sm_stall_target *targets, unsigned n, unsigned threshold_ms,
	       unsigned reports_per_minute);

/* On each shard thread before its loop: the record the signal handler fills. */
void
sm_stall_thread_init(struct sm_stall *st);

/* Stop the watchdog (after the shards stopped); safe when it never started. */
void
sm_stall_stop(void);

/*
 * On the shard, at the top of its loop, when st->caught: log the stall of
 * @stalled_ns on shard @shard with the backtrace the handler took, and count
 * it (sm_sw_stats.stalls).
 */
void
sm_stall_report(struct sm_stall *st, unsigned shard, uint64_t stalled_ns);

#endif /* SM_STALL_PRIV_H */
