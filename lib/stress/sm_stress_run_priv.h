/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private to lib/stress's run engine (sm_stress_run.c, sm_stress_worker.c,
 * sm_stress_report.c and the protocols' sm_stress_cql_ops.c and
 * sm_stress_http_ops.c): the run's state, one struct per client shard, its
 * connections and workers, and the per-protocol ops table through which
 * the engine talks CQL or Alternator without asking which.
 *
 * A "worker" is one of cassandra-stress's threads: one operation in flight
 * at a time. Every client shard owns its connections, workers, random
 * generator, population cursor, pacing and histograms; nothing on a
 * request path is shared. Shard 0 also runs the control plane.
 */
#ifndef SM_STRESS_RUN_PRIV_H
#define SM_STRESS_RUN_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sm_core.h"
#include "sm_hdr.h"
#include "sm_json.h"
#include "sm_net.h"
#include "sm_stress.h"
#include "sm_stress_cql.h"
#include "sm_stress_http.h"
#include "sm_stress_load.h"
#include "sm_stress_profile.h"
#include "sm_stress_ycsb.h"
#include "sm_stress_ring.h"
#include "sm_stress_tablets.h"

#define SM_STRESS_MAX_COLS 64
#define SM_STRESS_MAX_HOSTS 64
/* Tablets a client shard's map holds over all tables (about 7 MiB at most). */
#define SM_STRESS_MAX_TABLETS 65536
#define SM_STRESS_MAX_ERR_CODES 16
#define SM_STRESS_HDR_LOWEST 1000	      /* 1 us: finer than any network round trip */
#define SM_STRESS_HDR_HIGHEST 3600000000000ll /* 1 hour in ns */
#define SM_STRESS_HDR_SIGFIGS 3
#define SM_STRESS_POLL_MS 20
/* a connection's setup: tries in all, and the pause between two */
#define SM_STRESS_CONN_SETUP_TRIES 3
#define SM_STRESS_CONN_REDIAL_MS 200

/* Error codes of our own, beside CQL's codes, HTTP statuses and -errno. */
#define SM_STRESS_VALIDATION_ERROR 0x7fffffff	/* a row with other values than its key makes */
#define SM_STRESS_VALIDATION_MISSING 0x7ffffffe /* no row at all: the key was never written */

/* sm_stress_worker.nparts of an operation that met no partition (a token range page) */
#define SM_STRESS_NPARTS_NONE UINT32_MAX

#define SM_STRESS_PRINTF_LIKE(a, b) __attribute__((format(printf, a, b)))

enum sm_stress_phase {
	SM_STRESS_PH_CONTROL,
	SM_STRESS_PH_CONNECT,
	SM_STRESS_PH_WARMUP,
	SM_STRESS_PH_SETTLE, /* a search step's unrecorded start at its rate */
	SM_STRESS_PH_MEASURE,
	SM_STRESS_PH_DRAIN,
	SM_STRESS_PH_DONE,
};

struct sm_stress_err_count {
	int32_t code; /* CQL error code, HTTP status (>= 100, < 600), or -errno */
	uint64_t n;
};

struct sm_stress_op_stats {
	uint64_t ops, partitions, rows, errors;
	struct sm_hdr rt[2], st[2]; /* interval histograms: [active], [the other] */
	struct sm_hdr rt_total, st_total;
};

struct sm_stress_shard;

/* The routing counters of a run, summed over the client shards. */
struct sm_stress_routing {
	uint64_t routed, misrouted; /* requests whose connection's server shard is known, and
				     * of those, the ones on another shard than the owner's */
	uint64_t by_tablets, by_ring, tablet_payloads; /* as in struct sm_stress_shard */
	uint64_t learned, malformed, refused;	       /* tablets, over the whole run */
	uint64_t tablets;			       /* held at the end */
	const char *why;			       /* a malformed payload's fault */
};

struct sm_stress_conn {
	struct sm_stress_shard *sh;
	struct sm_cqlc *cql;
	struct sm_httpc *http;
	unsigned host;
	unsigned server_shard; /* SCYLLA_SHARD, or UINT32_MAX when unknown */
	bool ready;
	bool failed;
	unsigned setup_tries;	 /* connection setups that failed before it was ready */
	struct sm_timer redial; /* the next setup try, after a pause */
	unsigned prepared;	 /* statements prepared so far */
	struct sm_cqlc_prepared stmt[SM_STRESS_NR_OPS];
	/* user mode: the profile column of each result column, 0xff for none */
	uint8_t colmap[SM_STRESS_NR_OPS][SM_STRESS_PROFILE_MAX_COLS];
};

struct sm_stress_worker {
	struct sm_stress_shard *sh;
	unsigned idx;
	enum sm_stress_op op;
	uint64_t key_index;
	uint64_t due_ns, start_ns;
	unsigned tries;
	bool busy;
	uint8_t key[SM_STRESS_KEY_LEN];
	struct sm_bytes vals[SM_STRESS_MAX_COLS + 1];
	uint8_t *buf; /* cell bytes of a write */
	char *json;   /* Alternator request body */
	size_t json_cap;
	struct sm_stress_worker *next_idle;
	uint32_t nparts; /* partitions the operation wrote or read; 0: one; SM_STRESS_NPARTS_NONE */
	void *user;	 /* user mode's request state (sm_stress_user.c) */
	struct sm_stress_conn *conn; /* user mode: where the operation went */
	bool routed_ok; /* counted as reaching the owner's shard (routed, not misrouted) */
};

struct sm_stress_shard {
	unsigned id;
	struct sm_rand rng;
	uint64_t ring_rng, rr;
	struct sm_stress_cursor cursor;
	struct sm_stress_pace pace;
	struct sm_stress_worker *workers;
	unsigned nworkers, busy;
	struct sm_stress_worker *idle;
	struct sm_stress_conn *conns; /* [host][slot] */
	unsigned conns_per_host;
	unsigned nready, nfailed;
	int first_err;
	char first_err_text[600]; /* the first connection error */
	char fail_text[400];	  /* why the run failed (an op failed every try) */
	/* the phase's quota: operations to start, 0 = until told to stop */
	uint64_t quota, started, completed;
	bool stopping;
	bool done; /* every started op completed after stopping (read by shard 0) */
	struct sm_timer pump_timer;
	struct sm_task pump_task;
	bool pump_queued;
	bool recording;
	unsigned active; /* which interval histogram is being written */
	struct sm_stress_op_stats st[SM_STRESS_NR_OPS];
	struct sm_stress_err_count errs[SM_STRESS_MAX_ERR_CODES];
	uint64_t misrouted, routed, validation_failures;
	/* tablets: requests routed by a tablet and by the ring, and the answers
	 * that carried a tablets-routing-v1 payload (misrouted, as the server says) */
	uint64_t by_tablets, by_ring, tablet_payloads;
	/* the shard's tablet map, and the table (its index there) of each op's
	 * statement, -1 when not known; every connection prepares the same ones */
	struct sm_tablets tablets;
	int16_t op_table[SM_STRESS_NR_OPS];
	unsigned tablets_held; /* the map's size when the shard ended, for the report */
	const char *tablet_why; /* why the first malformed payload was refused */
	uint64_t lwt_applied[SM_STRESS_NR_OPS], lwt_not_applied[SM_STRESS_NR_OPS];
	uint64_t last_written; /* -pop read-lookback: the highest seed a write took */
	/* user mode's token_range_queries: the phase (a worker's range is of one) and
	 * each entry's ranges this shard has handed out in it */
	uint32_t phase_gen;
	uint64_t trq_next[SM_STRESS_PROFILE_MAX_QUERIES];
	double cpu0, cpu1; /* thread CPU seconds at measure start and end */
	/* the reactor's busy and idle-polling time at measure start and end (ns) */
	uint64_t busy0, busy1, idle0, idle1;
	struct sm_sw_stats rx0, rx1; /* the reactor's counters at the measurement's ends */
	bool failed_run;
	struct sm_json_doc json_doc;
} SM_CACHE_ALIGNED;

/*
 * What the engine asks of a protocol (CQL or Alternator), as testpmd asks
 * a struct fwd_engine: the control connection's setup on shard 0, then
 * each shard's connections and each operation's request. Each callback
 * reports back through sm_stress_worker_finish(), sm_stress_conn_ready(),
 * sm_stress_conn_failed(), sm_stress_start_connect() and
 * sm_stress_control_fail().
 */
struct sm_stress_proto_ops {
	const char *name; /* "cql", "alternator": the JSON report's "api" */
	/* Before the shards start: build what every connection will need (NULL: none). */
	void (*prepare)(void);
	/* Shard 0: open the control connection, whose callbacks run ctl_step(). */
	int (*ctl_open)(void);
	/* The next setup step (ring, schema); the last calls sm_stress_start_connect(). */
	void (*ctl_step)(void);
	/* Close the control connection if it is open. */
	void (*ctl_close)(void);
	/* The port the control connection uses, for messages. */
	uint16_t (*ctl_port)(void);
	/* After setup, before connecting: pick ports, print hosts and routing (NULL: none). */
	void (*plan)(void);
	/* Connections each shard opens to each host. */
	unsigned (*conns_per_host)(const struct sm_stress_shard *sh);
	/* The port the shards' connections use, for messages. */
	uint16_t (*conn_port)(void);
	/* Open @c, the @slot-th connection to its host; ready or failed later. */
	int (*connect)(struct sm_stress_conn *c, unsigned slot);
	/* Send @w's operation; the reply (or failure) calls sm_stress_worker_finish(). */
	void (*send)(struct sm_stress_worker *w);
	/* Close @c if it is open. */
	void (*close)(struct sm_stress_conn *c);
	/* The final report's routing lines (NULL: none). */
	void (*report_routing)(const struct sm_stress_routing *rt);
};

extern const struct sm_stress_proto_ops sm_stress_cql_ops;
extern const struct sm_stress_proto_ops sm_stress_http_ops;

/* The ops table of protocol @api. */
const struct sm_stress_proto_ops *
sm_stress_proto_of(enum sm_stress_api api);

struct sm_stress_run {
	struct sm_stress_settings s;
	const struct sm_stress_proto_ops *proto;
	struct sm_net_config net;
	unsigned nshards;
	struct sm_stress_shard *sh;
	enum sm_stress_op ops[SM_STRESS_NR_OPS];
	/* the same, in name order: cassandra-stress prints op types from a TreeMap */
	enum sm_stress_op ops_by_name[SM_STRESS_NR_OPS];
	double cum[SM_STRESS_NR_OPS]; /* cumulative ratio weights */
	/* the statements each connection prepares: ops, and any a workload adds */
	enum sm_stress_op prep[SM_STRESS_NR_OPS];
	unsigned nprep;
	unsigned nops;
	unsigned ncols;
	/* learned on shard 0 before any other shard connects; read-only after */
	struct sm_ring ring;
	bool ring_ok;
	const char *addrs[SM_STRESS_MAX_HOSTS];
	char addr_buf[SM_STRESS_MAX_HOSTS][SM_RING_NAME_MAX];
	unsigned nhosts;
	bool scylla;
	/* tablets-aware routing: the control connection negotiated TABLETS_ROUTING_V1,
	 * the ring (with the hosts' ids) is known and routing is token-aware */
	bool tablets_offered, tablets;
	uint8_t host_id[SM_STRESS_MAX_HOSTS][16]; /* of ring host i (system.local/peers) */
	bool host_id_known[SM_STRESS_MAX_HOSTS];
	/* each host's place in the round-robin plan (the local hosts), -1 for none */
	int plan_pos[SM_STRESS_MAX_HOSTS];
	unsigned nplan;
	unsigned nr_shards, ignore_msb;
	uint16_t shard_port;
	bool use_shard_port;
	struct sm_tls_ctx *tls; /* -transport; NULL: plain TCP */
	char stmt_text[SM_STRESS_NR_OPS][1024];
	/* control */
	enum sm_stress_phase phase;
	struct sm_cqlc *ctl;
	struct sm_httpc *ctl_http;
	unsigned ctl_step;
	struct sm_timer timer;
	uint64_t phase_start_ns, measure_start_ns, last_tick_ns;
	double measure_start_epoch;
	bool flipping;			    /* an interval's flip is out on the shards */
	uint64_t progress_ops, progress_ns; /* watchdog: completions seen, and when */
	uint64_t last_ops[SM_STRESS_NR_OPS + 1];
	uint64_t last_errors;
	struct sm_stress_op_stats merged[SM_STRESS_NR_OPS];
	struct sm_hdr tmp_rt, tmp_st;
	double rate_sum, rate_sq; /* per-interval row rates for stderr */
	unsigned rate_n;
	FILE *hdr_log, *text_log, *csv_log;
	/* stdout is a terminal: a progress line under the interval rows (never in a file) */
	bool progress_tty, progress_shown;
	unsigned csv_interval; /* the interval being reported, from 1 */
	uint64_t hdr_base_ns;  /* the first measured phase's start: -log hdrfile= times */
	/* -rate auto / threads>= / search: the steps so far; NULL for one measured run */
	struct sm_stress_search *search;
	bool failure;
	char msg[512];
};

/*
 * The run in progress: one per process, as the runtime is; set by
 * sm_stress_run_create(). The engine's files call it sx.
 */
extern struct sm_stress_run *sm_stress_run_cur __attribute__((visibility("hidden")));
#define sx sm_stress_run_cur

/* Bytes of cell @col of key @i: deterministic, so a read can check it. */
static inline uint32_t
sm_stress_cell_size(uint64_t i, unsigned col)
{
	const struct sm_stress_dist *d = &sx->s.col.size;
	uint64_t h;

	if (d->kind == SM_STRESS_DIST_FIXED || d->max <= d->min)
		return (uint32_t)d->min;
	h = (i + 1) * 0x9e3779b97f4a7c15ull ^ ((uint64_t)col * 0xbf58476d1ce4e5b9ull);
	h ^= h >> 31;
	return (uint32_t)(d->min + h % (d->max - d->min + 1));
}

/* sm_stress_worker.c: workers, pacing, phases and connections on every shard. */

/* Run the shard's pump soon (once, however often asked before it runs). */
static inline void
sm_stress_schedule_pump(struct sm_stress_shard *sh)
{
	if (!sh->pump_queued) {
		sh->pump_queued = true;
		sm_task_schedule(&sh->pump_task);
	}
}

/* @w is free for the next operation. */
static inline void
sm_stress_worker_idle(struct sm_stress_worker *w)
{
	struct sm_stress_shard *sh = w->sh;

	w->busy = false;
	sh->busy--;
	sh->completed++;
	w->next_idle = sh->idle;
	sh->idle = w;
	sm_stress_schedule_pump(sh);
}

/*
 * @w's operation has nothing left to do in this phase (its token ranges are
 * read): it did not start, and @w starts nothing more until the next phase;
 * the shard is done when every worker is. Called from the pump's send.
 */
void
sm_stress_worker_park(struct sm_stress_worker *w);

/* The operation of @w failed with @err_code: retry it, or count it and free @w. */
void
sm_stress_worker_failed(struct sm_stress_worker *w, int32_t err_code);

/*
 * The operation of @w ended: @err_code 0 (with @rows) or the error. Inline:
 * the protocols' reply callbacks end every operation here, and a success
 * costs no call.
 */
static inline void
sm_stress_worker_finish(struct sm_stress_worker *w, int32_t err_code, uint64_t rows)
{
	struct sm_stress_shard *sh = w->sh;
	uint64_t end = sm_now_ns();
	struct sm_stress_op_stats *o = &sh->st[w->op];

	if (err_code != 0) {
		sm_stress_worker_failed(w, err_code);
		return;
	}
	if (sh->recording) {
		o->ops++;
		o->partitions += w->nparts == SM_STRESS_NPARTS_NONE ? 0 : w->nparts ? w->nparts : 1;
		o->rows += rows;
		sm_hdr_record(&o->rt[sh->active], (int64_t)(end - w->due_ns));
		sm_hdr_record(&o->st[sh->active], (int64_t)(end - w->start_ns));
		sm_hdr_record(&o->rt_total, (int64_t)(end - w->due_ns));
		sm_hdr_record(&o->st_total, (int64_t)(end - w->start_ns));
	}
	sm_stress_worker_idle(w);
}

/* @c is ready for operations. */
void
sm_stress_conn_ready(struct sm_stress_conn *c);

/* @c failed (@err, @why for the message); -ESHUTDOWN is the runtime stopping. */
void
sm_stress_conn_failed(struct sm_stress_conn *c, int err, const char *why);

/* Set up @o's six histograms (0 or -ENOMEM); release them (safe on a zeroed @o). */
int
sm_stress_stats_init(struct sm_stress_op_stats *o);
void
sm_stress_stats_fini(struct sm_stress_op_stats *o);

/*
 * Messages from shard 0 to every shard (sm_submit_to_all()): start phase
 * @arg (an enum sm_stress_phase) with this shard's quota and workers; stop
 * starting operations; flip the interval histograms and note the CPU and
 * reactor time; connect to every host; close every connection.
 */
void
sm_stress_shard_start_phase(void *arg);
void
sm_stress_shard_stop(void *arg);
void
sm_stress_shard_flip(void *arg);
void
sm_stress_shard_connect(void *arg);
void
sm_stress_shard_close(void *arg);

/* sm_stress_run.c: the control plane on shard 0. */

/* Setup failed: print why, end the run. */
void
sm_stress_control_fail(const char *fmt, ...) SM_STRESS_PRINTF_LIKE(1, 2);

/* Setup is done: every shard connects. */
void
sm_stress_start_connect(void);

/* Shard 0's part of the shard setup: the control connection and timer. */
int
sm_stress_control_start(struct sm_stress_run *r);

/* sm_stress_report.c: what the run prints and writes. */

/* Print to stdout and, with -log file=, to the file too. */
void
sm_stress_out(const char *fmt, ...) SM_STRESS_PRINTF_LIKE(1, 2);

/* Erase the terminal's progress line, if shown, before other output. */
void
sm_stress_progress_clear(void);

/* "HTTP 404", "CQL error 0x1001 (Overloaded)", "client: ..." for an error code. */
const char *
sm_stress_error_name(int32_t code, char *buf, size_t len);

/* Merge the shards' last interval, print and log it. */
void
sm_stress_report_interval(void);

/* A search step ended: print its report (no -log json=), and what it measured into @m. */
void
sm_stress_report_step(struct sm_stress_step *m);

/*
 * The result column names of the PREPARED result @r into @names (room for
 * @cap), views valid during its callback; how many (sm_stress_cql_ops.c).
 */
unsigned
sm_stress_result_names(const struct sm_cqlc_result *r, struct sm_bytes *names, unsigned cap);

/* sm_stress_user.c: cassandra-stress's user mode (s.profile != NULL), for the CQL ops. */

/* The statement texts of the user ops, into stmt_text. */
void
sm_stress_user_prepare(void);

/* The @i-th setup statement (keyspace, table, extra definitions; "" to skip one), or NULL. */
const char *
sm_stress_user_setup_statement(unsigned i);

/* A worker's request buffers (0 or -ENOMEM); released by the fini (safe when never set up). */
int
sm_stress_user_worker_init(struct sm_stress_worker *w);
void
sm_stress_user_worker_fini(struct sm_stress_worker *w);

/* A token range query of @w with no range left for this shard (@w is to park). */
bool
sm_stress_user_exhausted(struct sm_stress_worker *w);

/* Generate @w's request from its partition seed; the partition's token, to route it. */
int64_t
sm_stress_user_fill(struct sm_stress_worker *w);

/* Send what sm_stress_user_fill() generated on @c; @cb gets the answer. 0 or -errno. */
int
sm_stress_user_issue(struct sm_stress_worker *w, struct sm_stress_conn *c, sm_cqlc_cb cb);

/* @c prepared user op @op (@r the PREPARED result): map its result columns. */
void
sm_stress_user_prepared(struct sm_stress_conn *c, enum sm_stress_op op,
			const struct sm_cqlc_result *r);

/* Check a user op's answer (@rows: the rows it counts): 0 or a validation error code. */
int32_t
sm_stress_user_check(struct sm_stress_worker *w, struct sm_stress_conn *c,
		     const struct sm_cqlc_result *r, uint64_t *rows);

/* An LWT user op's [applied] true and false counts over the shards; false for other ops. */
bool
sm_stress_user_lwt_counts(enum sm_stress_op op, uint64_t *applied, uint64_t *not_applied);

/* The report's lines of the user ops (LWT applied / not applied). */
void
sm_stress_user_report(void);

/*
 * A workload of another tool on this engine (sm_stress_ycsb.c, sm_stress_sb.c):
 * what the CQL and Alternator protocols ask of it, in the user mode's roles.
 */

/* check()/alt_done(): the operation goes on (a second request was sent). */
#define SM_STRESS_YCSB_AGAIN INT32_MIN

struct sm_stress_workload_ops {
	/* statement texts and per-shard state, before the shards start */
	void (*prepare)(void);
	/* the @i-th setup statement, or NULL after the last */
	const char *(*setup_statement)(unsigned i);
	int (*worker_init)(struct sm_stress_worker *w);
	void (*worker_fini)(struct sm_stress_worker *w);
	/* the key of @w's operation, after its op is picked */
	void (*pick)(struct sm_stress_shard *sh, struct sm_stress_worker *w);
	/* generate @w's request; the token to route it by */
	int64_t (*fill)(struct sm_stress_worker *w);
	int (*issue)(struct sm_stress_worker *w, struct sm_stress_conn *c, sm_cqlc_cb cb);
	void (*prepared)(struct sm_stress_conn *c, enum sm_stress_op op,
			 const struct sm_cqlc_result *r);
	/* 0, a validation error, -errno, or SM_STRESS_YCSB_AGAIN (@cb gets the next answer) */
	int32_t (*check)(struct sm_stress_worker *w, struct sm_stress_conn *c,
			 const struct sm_cqlc_result *r, uint64_t *rows, sm_cqlc_cb cb);
	/* the tool's header before the measured run (NULL: none), interval line, final report */
	void (*header)(void);
	void (*status)(double elapsed, uint64_t ops, uint64_t d_ops, double dt);
	void (*report)(const struct sm_stress_op_stats *tot, double secs);
	/* over Alternator (NULL where the tool has no DynamoDB binding) */
	size_t (*alt_create)(char *buf, size_t cap);
	int (*alt_send)(struct sm_stress_worker *w, struct sm_stress_conn *c, sm_httpc_cb cb);
	int32_t (*alt_done)(struct sm_stress_worker *w, int status, const char *body, size_t len,
			    uint64_t *rows, sm_httpc_cb cb);
};

extern const struct sm_stress_workload_ops sm_stress_ycsb_ops;
extern const struct sm_stress_workload_ops sm_stress_sb_ops;

#endif /* SM_STRESS_RUN_PRIV_H */
