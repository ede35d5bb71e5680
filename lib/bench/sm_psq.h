/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_PSQ_H
#define SM_PSQ_H

/*
 * perf-simple-query's harness: ScyllaDB's in-process simple-query benchmark
 * (test/perf/perf_simple_query.cc) without its frontend. Workers are tasks
 * on each shard's reactor (concurrency per shard), each keeping one request
 * in flight; a phase populates every key a shard owns, then iterations of
 * one second (or of ops_per_shard requests) are measured, and per-op
 * figures are the sum over shards of counter deltas divided by the
 * requests done, as ScyllaDB computes them.
 *
 * The frontend is a workload (struct sm_psq_workload): it owns the key
 * encoding, the setup (schema, prepared statements) and the request a
 * worker sends. The CQL and Alternator workloads are in
 * sm_psq_workload_cql.c and sm_psq_workload_alternator.c, a library of
 * their own (sm_psq_workloads) because they drive the executors: this
 * harness depends on lib/core and the rest of lib/bench only.
 *
 * One run at a time per process: the harness keeps its instance in a
 * static pointer, as the reactor callbacks take no context.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sm_bench.h"
#include "sm_core.h"

#define SM_PSQ_MAX_ITERATIONS 256
#define SM_PSQ_VALUE_LEN 34 /* ScyllaDB's C0..C4 values */

/*
 * write_gsi: writes to a table with a GSI on C0 (perf-alternator's);
 * write_ttl: writes with an expiration attribute to a table with TTL on;
 * write_stream: write's UpdateItem to a table with a NEW_AND_OLD_IMAGES
 * stream, C0 changing every request so that each leaves a record (CDC's cost).
 * write_index: CQL writes to a table with a secondary index on C0.
 * write_view: CQL writes to a table with a materialized view keyed by C0.
 */
enum sm_psq_mode {
	SM_PSQ_READ,
	SM_PSQ_WRITE,
	SM_PSQ_DELETE,
	SM_PSQ_WRITE_RMW,
	SM_PSQ_WRITE_GSI,
	SM_PSQ_WRITE_TTL,
	SM_PSQ_WRITE_STREAM,
	SM_PSQ_WRITE_INDEX,
	SM_PSQ_WRITE_VIEW,
};

/* "read", "write", "delete", "write_rmw", "write_gsi", "write_ttl", "write_stream",
 * "write_index", "write_view". */
const char *
sm_psq_mode_name(enum sm_psq_mode mode);

/* The mode called @name; -EINVAL when none is. */
int
sm_psq_mode_parse(const char *name, enum sm_psq_mode *mode);

/* The run's parameters: ScyllaDB's options, names and defaults. */
struct sm_psq_params {
	uint64_t seed;	 /* of each shard's key choice */
	unsigned partitions; /* keys */
	bool counters;	 /* counter columns */
	unsigned collection; /* cells of a map<blob, blob> column, 0: none */
	unsigned duration;   /* one-second iterations */
	uint64_t ops_per_shard; /* 0: iterations of a second, else one of this many */
	unsigned concurrency;	/* workers per shard */
	bool single_key;	/* always key 0 */
	bool shard_aware;	/* a shard draws only keys it owns */
	bool stop_on_error;
	uint16_t cl;	     /* CQL consistency of the measured requests */
	const char *timeout; /* CQL USING TIMEOUT, NULL: none */
	enum sm_psq_mode mode;
	bool tablets;		 /* CQL: ks created with tablets = {'enabled': true} */
	unsigned initial_tablets; /* ... and 'initial': N; 0: the server's default */
	const char *write_isolation; /* Alternator's, for the JSON result; NULL: CQL */
	FILE *csv;		     /* a row per iteration, NULL: none */
	FILE *out;		     /* progress and one line per iteration */
};

struct sm_psq;
struct sm_psq_shard;

/* One worker: a task that sends the next request when the last is answered. */
struct sm_psq_worker {
	struct sm_psq_shard *sh;
	unsigned idx; /* the CQL stream */
	struct sm_task task;
	bool populating;
	const char *op; /* Alternator operation */
	size_t req_len;
	uint8_t req[1024]; /* the request, built by the workload */
};

struct sm_psq_shard {
	/* read by shard 0 */
	uint64_t ops;
	uint64_t errors;
	unsigned active;
	/* the shard's own */
	struct sm_psq *p;
	bool running;
	uint64_t target; /* ops for this phase, 0: until stopped */
	uint64_t issued;
	struct sm_psq_worker *workers;
	unsigned nworkers;
	uint64_t *keys;
	unsigned nkeys;
	uint64_t rng;
	void *wl; /* the workload's per-shard state (CQL: the local connection) */
	char errmsg[256];
	unsigned next_key; /* population cursor */
} SM_CACHE_ALIGNED;

/*
 * A frontend. Every call runs on the shard it names; setup runs on shard
 * 0 after every shard's init and ends with sm_psq_setup_done() or
 * sm_psq_setup_fail(), from any later task of shard 0.
 */
struct sm_psq_workload {
	const char *name; /* "cql", "alternator": the result's frontend */
	/* The shard that owns key @seq under this frontend's key encoding and @p's table. */
	unsigned (*owner_of)(const struct sm_psq *p, uint64_t seq);
	/* The workload's shard state (sm_psq_shard.wl), or NULL: none. */
	int (*shard_init)(struct sm_psq *p, unsigned shard);
	void (*shard_fini)(struct sm_psq *p, unsigned shard);
	void (*setup)(struct sm_psq *p);
	/*
	 * The workers' task: unless sm_psq_idle(), send sm_psq_next_key();
	 * the answer calls sm_psq_op_done(). A task of the workload's own, so
	 * that the request path has no call more than the executor's.
	 */
	void (*issue)(void *worker);
};

/* A run: parameters, shards and the measured iterations. */
struct sm_psq {
	struct sm_psq_params prm;
	const struct sm_psq_workload *wl;
	void *wl_arg; /* the workload's configuration (CQL: its service) */
	unsigned nshards;
	struct sm_psq_shard *shards;
	int result; /* 0, or -EIO when a request or the setup failed */
	char setup_err[512];
	/* the measurement, for the printed and written results */
	unsigned iter;
	struct sm_bench_result results[SM_PSQ_MAX_ITERATIONS];
	struct sm_shard_snapshot *shard_first, *shard_last; /* the whole measurement */
	uint64_t *shard_ops;
	/* shard 0's control */
	struct sm_task control;
	int step;
	struct sm_timer idle_timer; /* polls for idle workers */
	struct sm_timer sec_timer;  /* ends a one-second iteration */
	struct sm_shard_snapshot *s0, *s1;
	uint64_t *ops0, *err0, *ops_first;
	uint64_t t0, measure_t0;
};

/*
 * Prepare @p for a run on @nshards shards with workload @wl (and its
 * @wl_arg): 0 or -ENOMEM. @p is the process's one run until sm_psq_free().
 */
int
sm_psq_init(struct sm_psq *p, const struct sm_psq_params *prm, const struct sm_psq_workload *wl,
	    void *wl_arg, unsigned nshards);

void
sm_psq_free(struct sm_psq *p);

/*
 * On each shard, after its executors: its keys, workers and the workload's
 * shard state; shard 0 then starts the setup. 0 or -errno. The fini
 * undoes it, before the executors' fini.
 */
int
sm_psq_shard_init(struct sm_psq *p, unsigned shard);
void
sm_psq_shard_fini(struct sm_psq *p, unsigned shard);

/* The setup is done: population and the iterations follow. */
void
sm_psq_setup_done(struct sm_psq *p);

/* The setup failed at @what with the server's @msg: the run ends. */
void
sm_psq_setup_fail(struct sm_psq *p, const char *what, const char *msg);

/* The key choice's xorshift64 (ScyllaDB's tool draws uniformly, too). */
static inline uint64_t
sm_psq_rng(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

/*
 * True when the phase is over for worker @w: it goes idle (shard 0 polls
 * for every shard idle). Called first in the workload's issue().
 */
static inline bool
sm_psq_idle(struct sm_psq_worker *w)
{
	struct sm_psq_shard *sh = w->sh;
	const struct sm_psq_params *prm = &sh->p->prm;

	if (!sh->running || (prm->stop_on_error && sh->errors > 0) ||
	    (sh->target != 0 && sh->issued >= sh->target) ||
	    (w->populating && sh->next_key >= sh->nkeys)) {
		__atomic_sub_fetch(&sh->active, 1, __ATOMIC_RELEASE);
		return true;
	}
	return false;
}

/* The next key for worker @w, after !sm_psq_idle(w). */
static inline uint64_t
sm_psq_next_key(struct sm_psq_worker *w)
{
	struct sm_psq_shard *sh = w->sh;
	const struct sm_psq_params *prm = &sh->p->prm;

	sh->issued++;
	if (w->populating)
		return sh->keys[sh->next_key++];
	if (prm->single_key)
		return 0;
	if (prm->shard_aware && sh->nkeys > 0)
		return sh->keys[sm_psq_rng(&sh->rng) % sh->nkeys];
	return sm_psq_rng(&sh->rng) % prm->partitions;
}

/*
 * A request of @w was answered: counted, its error (@msg, @len) kept when
 * it is the shard's first, and the worker's next request scheduled as a
 * task (a local request may complete inline).
 */
static inline void
sm_psq_op_done(struct sm_psq_worker *w, bool ok, const char *msg, size_t len)
{
	struct sm_psq_shard *sh = w->sh;

	sh->ops++;
	if (!ok) {
		sh->errors++;
		if (sh->errmsg[0] == '\0')
			snprintf(sh->errmsg, sizeof(sh->errmsg), "%.*s", (int)SM_MIN(len, 200u),
				 msg);
	}
	sm_task_schedule(&w->task);
}

/* Five fixed 34-byte values as "0x..." CQL blobs, as ScyllaDB's C0..C4. */
const char *
sm_psq_value_hex(unsigned col);

/* --csv: the header line, then sm_psq_csv_row() after each iteration. */
void
sm_psq_csv_header(FILE *f);
void
sm_psq_csv_row(FILE *f, enum sm_psq_mode mode, unsigned interval, double seconds,
	       const struct sm_bench_result *r);

/*
 * Write the JSON result of a finished run to @path, in ScyllaDB's layout
 * (parameters, stats of the median iteration, test_properties, versions)
 * with our per_shard and machine (@cpu) objects. 0, or -EIO with the
 * cause in @err.
 */
int
sm_psq_write_json(const struct sm_psq *p, const char *path, const char *cpu, char *err,
		  size_t errlen);

/* @d per op over @ops, 0 when no op was done. */
static inline double
sm_psq_per_op(uint64_t d, uint64_t ops)
{
	return ops ? (double)d / (double)ops : 0;
}

#endif /* SM_PSQ_H */
