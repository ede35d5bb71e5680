/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_BENCH_ECHO_H
#define SM_BENCH_ECHO_H

/*
 * The echo load's engine (shardmark bench echo), in-process over loopback:
 * every shard runs an equal share of the client connections, each keeping
 * `pipeline` frames in flight to an echo listener; every reply frame is one
 * request. Shard 0 waits for every connection, warms up, then measures
 * the counters of every shard over the duration, printing requests/s each
 * second. A request is the whole round trip, so its counters include both
 * sides: per-op figures are the sum of every shard's deltas divided by the
 * requests done. The caller serves the echo listener (and owns the network
 * setup of each shard); this engine is the clients and the measurement.
 *
 * One run at a time per process, as the reactor's callbacks take no context.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sm_core.h"
#include "sm_net.h"

struct sm_bench_echo_params {
	double duration_s; /* measured */
	double warmup_s;   /* load before measuring */
	unsigned conns;	   /* client connections over all shards */
	unsigned size;	   /* payload bytes per request */
	unsigned pipeline; /* requests in flight per connection */
	unsigned port;	   /* the echo listener's, on 127.0.0.1 */
	FILE *out;	   /* the progress lines */
};

struct sm_bench_echo_conn {
	struct sm_conn *c;
	struct sm_bench_echo_shard *bs;
	uint64_t partial; /* bytes of a reply frame received so far */
};

struct sm_bench_echo_shard {
	uint64_t completed; /* reply frames; read by shard 0 */
	unsigned connected; /* read by shard 0 */
	unsigned failed;    /* read by shard 0 */
	int first_err;
	struct sm_sendbuf *frame; /* the request frame every connection sends */
	struct sm_bench_echo_conn *conns;
	unsigned nconns;
	bool stop;
} SM_CACHE_ALIGNED;

/* A run: its parameters, shards and measurement window. */
struct sm_bench_echo {
	struct sm_bench_echo_params prm;
	unsigned nshards;
	struct sm_bench_echo_shard *shards;
	int result; /* 0, or -EIO when a connection failed */
	/* shard 0's control state */
	struct sm_timer timer;
	uint64_t phase_start_ns;
	unsigned ticks;
	uint64_t last_total;
	bool measuring;
	/* measurement window */
	struct sm_shard_snapshot *s0, *s1;
	uint64_t *done0, *done1;
};

/*
 * Prepare @b for a run of at most @max_shards shards (the runtime's own
 * count is checked at each shard's init): 0 or -ENOMEM.
 */
int
sm_bench_echo_init(struct sm_bench_echo *b, const struct sm_bench_echo_params *prm,
		   unsigned max_shards);
void
sm_bench_echo_free(struct sm_bench_echo *b);

/*
 * On each shard, after its network setup: its connections and request
 * frame. 0 or -errno (-EINVAL when the runtime started another number of
 * shards than @b was sized for).
 */
int
sm_bench_echo_shard_init(struct sm_bench_echo *b, unsigned shard);

/* On shard 0 once the listener is up: every shard connects, the run starts. */
void
sm_bench_echo_start(struct sm_bench_echo *b);

/*
 * On each shard at the end: the frame goes before the shard's network
 * (fini), the connections' state after it, when no callback can reach
 * them any more (release).
 */
void
sm_bench_echo_shard_fini(struct sm_bench_echo *b, unsigned shard);
void
sm_bench_echo_shard_release(struct sm_bench_echo *b, unsigned shard);

/* One shard's (or the total's) figures over the measurement. */
struct sm_bench_echo_row {
	uint64_t ops;
	double secs;
	uint64_t io_enters, allocs, tasks, polls, xmsgs, sleeps, bytes;
	uint64_t perf[SM_PERF_NR];
	bool perf_ok[SM_PERF_NR];
};

/* Shard @i's row; sm_bench_echo_row_add() sums rows into a total (zeroed first). */
void
sm_bench_echo_row(const struct sm_bench_echo *b, unsigned i, struct sm_bench_echo_row *r);
void
sm_bench_echo_row_add(struct sm_bench_echo_row *t, const struct sm_bench_echo_row *r);

/*
 * Write the results of a finished run to @path as JSON (the parameters,
 * each shard's row and the total, every n/a counter with its reason),
 * naming the network driver @stack. 0, or -errno with the cause in @err.
 */
int
sm_bench_echo_write_json(const struct sm_bench_echo *b, const char *path, const char *stack,
			 char *err, size_t errlen);

#endif /* SM_BENCH_ECHO_H */
