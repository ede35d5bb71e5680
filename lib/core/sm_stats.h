/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_STATS_H
#define SM_STATS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "sm_common.h"

/*
 * Per-shard counters.
 *
 * Software counters are plain uint64_t written only by the owning shard (no
 * atomic read-modify-write on the hot path); other threads read them with
 * relaxed loads (SM_READ_ONCE), as Seastar's alloc_stats and Redis's zmalloc
 * do. The block is cache-line aligned so shards never share a line.
 *
 * Hardware and kernel software events come from perf_event_open(2) on the
 * shard thread, user space only. A counter that cannot be opened keeps the
 * errno of the failure and is reported as unavailable with that reason, never
 * as 0: a VM without a PMU has no "instructions".
 */

/* Scheduling-latency buckets: up to 1 us, then powers of two to 2^20 us, then more. */
#define SM_SCHED_LAT_BUCKETS 22

struct sm_sw_stats {
	uint64_t tasks_run; /* tasks executed by the reactor */
	uint64_t polls;	    /* reactor poll rounds */
	uint64_t allocs;    /* sm_malloc and friends, pool slab growth */
	uint64_t frees;
	uint64_t bytes_allocated; /* cumulative bytes handed out */
	int64_t mem_in_use;	  /* bytes allocated minus freed on this shard */
	uint64_t xmsg_sent;	  /* cross-shard messages sent (requests and replies) */
	uint64_t xmsg_recv;
	uint64_t bytes_in; /* network payload received */
	/* of which the driver copied in user space before protocols saw them
	 * (DPDK: what the TCP stack had to reorder; io_uring: 0, the
	 * kernel's copy into the provided buffers is not ours to count) */
	uint64_t bytes_in_copied;
	uint64_t bytes_out;    /* network payload sent */
	uint64_t conns_opened; /* connections that became active on this shard */
	uint64_t conns_closed;
	uint64_t io_enters;    /* io_uring_enter(2) calls (or driver equivalent) */
	uint64_t sleeps;       /* times the reactor blocked */
	uint64_t wakeups_sent; /* eventfd writes to wake another shard */
	uint64_t timers_fired;
	uint64_t requests; /* protocol requests completed (echo frames, CQL, HTTP) */
	uint64_t hops;	   /* store requests forwarded to the owning shard */
	uint64_t requests_forwarded; /* CQL requests sent to the group member owning them */
	/* defences against clients that misbehave */
	uint64_t rx_pauses;	 /* connections paused: their unsent replies passed the bound */
	uint64_t conns_timed_out; /* connections closed by an idle, header or frame timeout */
	uint64_t requests_timed_out; /* requests answered with a timeout error */
	uint64_t accept_errors;	 /* accept(2) failures (EMFILE, ENFILE, ENOMEM, ...) */
	uint64_t writes_refused; /* writes refused because the memory budget is full */
	int64_t mem_budget;	 /* this shard's memory budget in bytes; 0: none */
	/*
	 * The reactor's own clock: time in rounds that found work (busy),
	 * in rounds that found none and spun (idle polling, CPU spent on
	 * nothing), and blocked in the waiter (asleep, no CPU).
	 */
	uint64_t busy_ns;
	uint64_t idle_ns;
	uint64_t sleep_ns;
	uint64_t stalls; /* loop rounds longer than blocked_reactor_notify_ms */
	/*
	 * Scheduling latency: how long the oldest ready task waited before the
	 * reactor ran it (once per task run: the wait of the task at the head
	 * of the queue). Bucket k counts waits in (2^(k-1), 2^k] microseconds,
	 * bucket 0 those up to 1 us, the last one everything longer.
	 */
	uint64_t sched_lat[SM_SCHED_LAT_BUCKETS];
	uint64_t sched_lat_sum_ns;
} SM_CACHE_ALIGNED;

/* The histogram bucket of a scheduling latency of @ns. */
static inline unsigned
sm_sched_lat_bucket(uint64_t ns)
{
	uint64_t us = ns / 1000;
	unsigned b = us <= 1 ? 0 : 64 - (unsigned)__builtin_clzll(us - 1);

	return b < SM_SCHED_LAT_BUCKETS - 1 ? b : SM_SCHED_LAT_BUCKETS - 1;
}

/*
 * The upper bound in microseconds of the bucket holding quantile @q (0..1)
 * of @st's scheduling latencies; 0 when none were counted, UINT64_MAX when
 * it is the last, open, bucket.
 */
uint64_t
sm_sched_lat_quantile_us(const struct sm_sw_stats *st, double q);

/*
 * Request latency histograms as ScyllaDB exports them (its
 * time_estimated_histogram: approx_exponential_histogram from 512 us to
 * 33.5 s, four buckets per power of two), so that its dashboards' quantiles
 * read ours: bucket 0 holds what is under 512 us, bucket i of 1..64 what is
 * under sm_lat_hist_bound(i), bucket 65 the rest.
 */
#define SM_LAT_HIST_BUCKETS 66

static inline unsigned
sm_lat_hist_bucket(uint64_t us)
{
	unsigned k;

	if (us < 512)
		return 0;
	k = 63 - (unsigned)__builtin_clzll(us);
	if (k >= 25)
		return SM_LAT_HIST_BUCKETS - 1;
	return (k - 9) * 4 + (unsigned)((us >> (k - 2)) & 3) + 1;
}

/* The upper bound in microseconds of bucket @i (< SM_LAT_HIST_BUCKETS - 1). */
static inline uint64_t
sm_lat_hist_bound(unsigned i)
{
	unsigned k, sub;

	if (i == 0)
		return 512;
	k = 9 + (i - 1) / 4;
	sub = (i - 1) % 4;
	return (1ull << k) + ((uint64_t)(sub + 1) << (k - 2));
}

/* sm_lat_hist_print()'s @shard of a series summed over the shards: no shard label. */
#define SM_LAT_HIST_NO_SHARD UINT32_MAX

/*
 * Print histogram @buckets (SM_LAT_HIST_BUCKETS counts, @sum_us, @count) as
 * the Prometheus lines of @name{@labels,shard="@shard"}: _bucket (cumulative,
 * le in ScyllaDB's format), _sum and _count.
 */
void
sm_lat_hist_print(FILE *f, const char *name, const char *labels, unsigned shard,
		  const uint64_t *buckets, uint64_t sum_us, uint64_t count);

/*
 * Print a summary of histogram @buckets (every shard's together) as
 * @name{@labels,quantile=...} for 0.5, 0.95 and 0.99 (the upper bound of the
 * bucket holding each), then @name_count and @name_sum. ScyllaDB's summaries
 * cover a recent window; these cover the whole run.
 */
void
sm_lat_hist_print_summary(FILE *f, const char *name, const char *labels, const uint64_t *buckets,
			  uint64_t sum_us, uint64_t count);

/* The calling thread's counter block: its shard's, or a private one. */
extern __thread struct sm_sw_stats *sm_tls_stats;

/*
 * For threads that are not shards: point sm_tls_stats at a private block of
 * the calling thread when it is still unset, and return sm_tls_stats. Code
 * that may count on any thread (the allocator) calls this before counting.
 */
struct sm_sw_stats *
sm_stats_fallback_attach(void);

#define SM_STAT_ADD(field, n) (sm_tls_stats->field += (n))
#define SM_STAT_INC(field) SM_STAT_ADD(field, 1)

/*
 * The reactor's view between two readings @a and @b of one shard: busy
 * share of its time (0..1), stalls, and the @q quantile of its scheduling
 * latency in microseconds (as sm_sched_lat_quantile_us).
 */
struct sm_reactor_view {
	double busy_share, sleep_share;
	uint64_t stalls;
	uint64_t sched_p99_us;
};

void
sm_reactor_view(const struct sm_sw_stats *a, const struct sm_sw_stats *b,
		struct sm_reactor_view *out);

/* Copy a counter block with relaxed loads; safe from any thread. */
void
sm_sw_stats_read(const struct sm_sw_stats *src, struct sm_sw_stats *dst);

enum sm_perf_counter {
	SM_PERF_INSTRUCTIONS,
	SM_PERF_CYCLES,
	SM_PERF_CACHE_REFERENCES,
	SM_PERF_CACHE_MISSES,
	SM_PERF_BRANCH_MISSES,
	SM_PERF_TASK_CLOCK,
	SM_PERF_CONTEXT_SWITCHES,
	SM_PERF_PAGE_FAULTS,
	SM_PERF_NR,
};

struct sm_perf {
	int fd[SM_PERF_NR];
	int err[SM_PERF_NR]; /* positive errno of the failed open, 0 when open */
};

/* perf's name of a counter ("instructions", "task-clock", ...). */
const char *
sm_perf_counter_name(enum sm_perf_counter c);

/*
 * Open every counter for the calling thread, user space only. Failures are
 * recorded per counter and are not errors: this always returns 0.
 */
int
sm_perf_open(struct sm_perf *p);

/* Close the counters that are open. */
void
sm_perf_close(struct sm_perf *p);

/*
 * Read counter @c (scaled for multiplexing) into @val. Returns false when the
 * counter is unavailable or the read failed; @val is then left untouched.
 * Safe from any thread.
 */
bool
sm_perf_read(const struct sm_perf *p, enum sm_perf_counter c, uint64_t *val);

/*
 * Why counter @c is unavailable, as "<errno text>: <hint>", written to @buf.
 * Returns @buf, or NULL when the counter is available.
 */
const char *
sm_perf_unavailable_reason(const struct sm_perf *p, enum sm_perf_counter c, char *buf, size_t len);

/* Test hook: replace perf_event_open(2); NULL restores the real syscall. */
typedef int (*sm_perf_open_fn)(void *attr, pid_t pid, int cpu, int group_fd, unsigned long flags);
void
sm_perf_set_open_fn(sm_perf_open_fn fn);

/* A point-in-time copy of one shard's counters. */
struct sm_shard_snapshot {
	unsigned shard;
	int cpu;	  /* pinned CPU, -1 when overprovisioned */
	uint64_t when_ns; /* sm_now_ns() at snapshot */
	struct sm_sw_stats sw;
	uint64_t perf[SM_PERF_NR];
	bool perf_ok[SM_PERF_NR];
	int perf_err[SM_PERF_NR];
};

/*
 * Print a per-shard table of @snap[0..n) to @f, hardware counters shown as
 * n/a with the reason listed once below the table.
 */
void
sm_stats_print_table(FILE *f, const struct sm_shard_snapshot *snap, unsigned n);

/*
 * Write the snapshots in Prometheus text exposition format (every metric
 * carries a shard label) into @buf. Returns the length written, or the length
 * needed when @len is too small (like snprintf).
 */
size_t
sm_stats_format_prometheus(char *buf, size_t len, const struct sm_shard_snapshot *snap, unsigned n);

#endif /* SM_STATS_H */
