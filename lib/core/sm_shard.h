/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_SHARD_H
#define SM_SHARD_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "sm_clock.h"
#include "sm_stats.h"
#include "sm_task.h"
#include "sm_timer.h"

/*
 * Shards and their reactors.
 *
 * sm_runtime_run() starts one thread per shard, pinned to one CPU of the
 * cpuset, with its heap and counters created on that thread. The calling
 * thread becomes shard 0, the control shard. Each shard then runs its reactor
 * loop:
 *
 *   run ready tasks until the task quota is spent;
 *   poll, in this fixed order: inbound cross-shard rings, registered pollers
 *     (the network driver's completions), timers;
 *   when nothing was found, spin for idle_poll_us, then block in the waiter
 *     (the driver's io_uring wait, or poll(2) on the shard's eventfd) until a
 *     completion, the next timer, or a wakeup from another shard.
 *
 * Going to sleep is race-free: the shard publishes "sleeping", re-checks its
 * inbound rings, and only then blocks; a sender publishes its messages, then
 * checks "sleeping" and writes the sleeper's eventfd (a full fence on both
 * sides, so one of the two always sees the other).
 *
 * SIGINT and SIGTERM start a drain: stop hooks run on every shard (listeners
 * close), then each shard leaves its loop once nothing holds it (in-flight
 * requests, connections flushing) or drain_timeout_ms passes. SIGUSR1 runs
 * the on_usr1 callback on shard 0.
 */

struct sm_runtime_opts {
	unsigned smp;		   /* 0: one shard per CPU in the cpuset */
	const char *cpuset;	   /* "0-3,8": NULL for every CPU we may use */
	bool overprovisioned;	   /* run unpinned; allows smp > CPUs */
	unsigned task_quota_us;	   /* 0: 500 us, Seastar's default */
	unsigned idle_poll_us;	   /* spin this long before blocking; 0 blocks at once */
	unsigned xring_size;	   /* slots per cross-shard ring; 0: 1024 */
	unsigned drain_timeout_ms; /* 0: 10000 */
	/* Log a loop round longer than this, with a backtrace (Seastar's
	 * --blocked-reactor-notify-ms); 0: no stall detector. */
	unsigned blocked_notify_ms;
	unsigned blocked_reports_per_minute; /* 0: 5, Seastar's default */
	/* Runs on every shard thread before its loop starts (setup services). */
	int (*shard_init)(unsigned shard, void *arg);
	/* Runs on every shard thread after its loop ended (tear down). */
	void (*shard_fini)(unsigned shard, void *arg);
	void *arg;
	/* Runs on shard 0 when SIGUSR1 arrives (may be NULL). */
	void (*on_usr1)(void *arg);
};

/*
 * Run the shards until they stop. Returns 0 after a clean stop, or -errno
 * with a message naming the cause and the fix in @err (bad cpuset, more
 * shards than CPUs, a shard_init failure, ...).
 */
int
sm_runtime_run(const struct sm_runtime_opts *opts, char *err, size_t errlen);

/*
 * Parse a CPU list ("0-3,8,10-11") into @cpus (a bitmap of @ncpus bits,
 * zeroed first). Returns the number of CPUs in the list or -EINVAL.
 */
int
sm_cpuset_parse(const char *list, uint8_t *cpus, unsigned ncpus);

/* This thread's shard id, or 0 outside a shard thread. */
unsigned
sm_shard_id(void);

/* Number of shards in the running runtime (0 before it starts). */
unsigned
sm_shard_count(void);

/* The time the calling shard's current reactor round began (ms, monotonic). */
extern __thread uint64_t sm_loop_now_ms;

/*
 * Monotonic milliseconds, read once per reactor round: for deadlines that
 * protocols note per request (idle and request timeouts) without a clock
 * read each. Off a shard thread, the clock itself.
 */
static inline uint64_t
sm_shard_now_ms(void)
{
	return sm_loop_now_ms != 0 ? sm_loop_now_ms : sm_now_ms();
}

/* True on a shard thread. */
bool
sm_on_shard(void);

/* CPU the shard is pinned to, or -1 when running unpinned. */
int
sm_shard_cpu(unsigned shard);

/*
 * Run fn(arg) on @shard; when @done is set, done(arg) runs back on the
 * calling shard afterwards. Messages to one shard run in order. Submitting to
 * one's own shard queues to the same path (it never runs inline). Messages are
 * batched and published at the end of the poll round or every 16 messages.
 * Returns 0, or -ENOMEM when the overflow backlog cannot grow.
 */
int
sm_submit_to(unsigned shard, void (*fn)(void *arg), void *arg, void (*done)(void *arg));

/*
 * Run fn(arg) on every shard, the calling one included (queued, as
 * sm_submit_to()); when all have run, all_done(arg) runs once on the calling
 * shard (Seastar's invoke_on_all, DPDK's rte_eal_mp_remote_launch then
 * wait). For control-plane steps (phases, schema changes, stop): with
 * @all_done it allocates a counter, freed when the last reply is in (so the
 * runtime must outlive the replies); without, it is sm_submit_to() to each
 * shard. Returns 0; -ENOMEM when nothing could be sent (fn ran nowhere,
 * all_done does not run); or another negative errno when some shards could
 * not be reached, in which case all_done still runs once after the others.
 */
int
sm_submit_to_all(void (*fn)(void *arg), void *arg, void (*all_done)(void *arg));

/* Publish every staged cross-shard message now and wake sleeping targets. */
void
sm_xmsg_flush(void);

/* A poller runs each round after the cross-shard rings; returns work done. */
struct sm_poller {
	const char *name;
	unsigned (*poll)(void *ctx);
	void *ctx;
};

/* Register a poller on the calling shard (at most 8, run in order added). */
int
sm_shard_add_poller(const struct sm_poller *p);

/*
 * The blocking call of the calling shard. A network driver installs its own
 * so that the reactor sleeps in one place (its io_uring wait) and wakes for
 * completions, timers and cross-shard wakeups alike. wait() must return when
 * the shard's wakeup eventfd (sm_shard_wakeup_fd) becomes readable, and must
 * drain it. @timeout_ns < 0 means no timeout.
 */
struct sm_waiter {
	int (*wait)(void *ctx, int64_t timeout_ns);
	void *ctx;
};

void
sm_shard_set_waiter(const struct sm_waiter *w);

/* The calling shard's wakeup eventfd. */
int
sm_shard_wakeup_fd(void);

/* The calling shard's software counters (also sm_tls_stats on the shard). */
struct sm_sw_stats *
sm_shard_stats(unsigned shard);

/* Snapshot shard @shard's counters (software and perf); any thread. */
void
sm_shard_snapshot(unsigned shard, struct sm_shard_snapshot *snap);

/* A hook run on each shard when the drain starts; intrusive, no allocation. */
struct sm_stop_hook {
	struct sm_stop_hook *next;
	void (*fn)(void *arg);
	void *arg;
};

/* Register @h on the calling shard. */
void
sm_shard_on_stop(struct sm_stop_hook *h);

/* Unregister @h from the calling shard (no-op when not registered). */
void
sm_shard_remove_stop_hook(struct sm_stop_hook *h);

/*
 * A hook run on the calling shard when it goes idle, at most once a second,
 * before freed memory is handed back to the kernel: caches trim themselves
 * there, so what a burst took goes back after it. Intrusive, no allocation.
 */
struct sm_idle_hook {
	struct sm_idle_hook *next;
	void (*fn)(void *arg);
	void *arg;
};

/* Register @h on the calling shard. */
void
sm_shard_on_idle(struct sm_idle_hook *h);

/* Unregister @h from the calling shard (no-op when not registered). */
void
sm_shard_remove_idle_hook(struct sm_idle_hook *h);

/*
 * Keep the calling shard's reactor running through a drain (an in-flight
 * request, a connection still flushing). Every hold is paired with a release.
 */
void
sm_shard_hold(void);
void
sm_shard_release(void);

/*
 * Called by a task that found nothing to do yet and queued itself again
 * (polling for a due time closer than a timer can wait): it is not work
 * (its round counts as idle polling in busy_ns and idle_ns), and the task
 * run ends after it, so the reactor polls its I/O before it runs again.
 */
void
sm_shard_note_idle(void);

/* True once the drain has started on the calling shard. */
bool
sm_shard_stopping(void);

/* Ask every shard to drain and the runtime to return; callable from any shard. */
void
sm_runtime_stop(void);

#endif /* SM_SHARD_H */
