/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shardmark stress: the cassandra-stress compatible load on the shard
 * runtime (lib/stress for the pieces, this file for the run).
 *
 * Every client shard owns its connections, workers, random generator,
 * population cursor, pacing and histograms; nothing on a request path is
 * shared. Shard 0 also runs the control plane: a control connection learns
 * the ring (system.local, system.peers) and the server's sharding
 * (SUPPORTED), creates the schema, then every shard connects, a warm-up
 * runs unrecorded, and the measured run reports every interval by asking
 * each shard for its interval histograms (two per shard, flipped by the
 * request) and merging them: percentiles are never averaged.
 *
 * A "worker" is one of cassandra-stress's threads: one operation in flight
 * at a time. Open-loop rates (-rate fixed= / throttle=) give every
 * operation a due time on the shard's schedule; latency from the due time
 * (response time) corrects for coordinated omission, latency from the send
 * (service time) does not; both are recorded, and fixed= reports the first,
 * throttle= the second, as cassandra-stress does.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app.h"
#include "sm_bench_cs.h"
#include "sm_hdr.h"
#include "sm_json.h"
#include "sm_stress.h"
#include "sm_stress_cql.h"
#include "sm_stress_http.h"
#include "sm_stress_load.h"
#include "sm_stress_ring.h"

#define MAX_COLS 64
#define MAX_HOSTS 64
#define MAX_ERR_CODES 16
#define HDR_LOWEST 1000		    /* 1 us: finer than any network round trip */
#define HDR_HIGHEST 3600000000000ll /* 1 hour in ns */
#define HDR_SIGFIGS 3
#define POLL_MS 20
#define SPIN_NS 1000000 /* a due time closer than 1 ms is waited for by polling */
#define PRINTF_LIKE(a, b) __attribute__((format(printf, a, b)))

enum phase {
	PH_CONTROL,
	PH_CONNECT,
	PH_WARMUP,
	PH_MEASURE,
	PH_DRAIN,
	PH_DONE,
};

struct err_count {
	int32_t code; /* CQL error code, HTTP status (>= 100, < 600), or -errno */
	uint64_t n;
};

struct op_stats {
	uint64_t ops, partitions, rows, errors;
	struct sm_hdr rt[2], st[2]; /* interval histograms: [active], [the other] */
	struct sm_hdr rt_total, st_total;
};

struct sshard;

struct sconn {
	struct sshard *sh;
	struct sm_cqlc *cql;
	struct sm_httpc *http;
	unsigned host;
	unsigned server_shard; /* SCYLLA_SHARD, or UINT32_MAX when unknown */
	bool ready;
	bool failed;
	unsigned prepared; /* statements prepared so far */
	struct sm_cqlc_prepared stmt[SM_STRESS_NR_OPS];
};

struct worker {
	struct sshard *sh;
	unsigned idx;
	enum sm_stress_op op;
	uint64_t key_index;
	uint64_t due_ns, start_ns;
	unsigned tries;
	bool busy;
	uint8_t key[SM_STRESS_KEY_LEN];
	struct sm_bytes vals[MAX_COLS + 1];
	uint8_t *buf; /* cell bytes of a write */
	char *json;   /* Alternator request body */
	size_t json_cap;
	struct worker *next_idle;
};

struct sshard {
	unsigned id;
	struct sm_rand rng;
	uint64_t ring_rng, rr;
	struct sm_stress_cursor cursor;
	struct sm_stress_pace pace;
	struct worker *workers;
	unsigned nworkers, busy;
	struct worker *idle;
	struct sconn *conns; /* [host][slot] */
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
	struct op_stats st[SM_STRESS_NR_OPS];
	struct err_count errs[MAX_ERR_CODES];
	uint64_t misrouted, routed, validation_failures;
	double cpu0, cpu1; /* thread CPU seconds at measure start and end */
	/* the reactor's busy and idle-polling time at measure start and end (ns) */
	uint64_t busy0, busy1, idle0, idle1;
	bool failed_run;
	struct sm_json_doc json_doc;
} SM_CACHE_ALIGNED;

struct stress_ctx {
	struct sm_stress_settings s;
	struct sm_config cfg;
	unsigned nshards;
	struct sshard *sh;
	enum sm_stress_op ops[SM_STRESS_NR_OPS];
	/* the same, in name order: cassandra-stress prints op types from a TreeMap */
	enum sm_stress_op ops_by_name[SM_STRESS_NR_OPS];
	double cum[SM_STRESS_NR_OPS]; /* cumulative ratio weights */
	unsigned nops;
	unsigned ncols;
	uint64_t n_ops_total;
	/* learned on shard 0 before any other shard connects; read-only after */
	struct sm_ring ring;
	bool ring_ok;
	const char *addrs[MAX_HOSTS];
	char addr_buf[MAX_HOSTS][SM_RING_NAME_MAX];
	unsigned nhosts;
	bool scylla;
	unsigned nr_shards, ignore_msb;
	uint16_t shard_port;
	bool use_shard_port;
	char stmt_text[SM_STRESS_NR_OPS][1024];
	/* control */
	enum phase phase;
	struct sm_cqlc *ctl;
	struct sm_httpc *ctl_http;
	unsigned ctl_step;
	struct sm_timer timer;
	uint64_t phase_start_ns, measure_start_ns, last_tick_ns;
	double measure_start_epoch;
	unsigned acks;
	uint64_t progress_ops, progress_ns; /* watchdog: completions seen, and when */
	uint64_t last_ops[SM_STRESS_NR_OPS + 1];
	uint64_t last_errors;
	struct op_stats merged[SM_STRESS_NR_OPS];
	struct sm_hdr tmp_rt, tmp_st;
	double rate_sum, rate_sq; /* per-interval row rates for stderr */
	unsigned rate_n;
	FILE *hdr_log, *text_log, *csv_log;
	unsigned csv_interval; /* the interval being reported, from 1 */
	bool failure;
	int result;
	char msg[512];
};

static struct stress_ctx *sx;

/* ---- small helpers ---- */

static double
thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The calling shard's reactor time so far: rounds with work, and idle polling (ns). */
static void
reactor_time(uint64_t *busy, uint64_t *idle)
{
	const struct sm_sw_stats *st = sm_shard_stats(sm_shard_id());

	*busy = st->busy_ns;
	*idle = st->idle_ns;
}

/* Print to stdout and, with -log file=, to the file too. */
static void PRINTF_LIKE(1, 2) out(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	if (sx != NULL && sx->text_log != NULL) {
		va_start(ap, fmt);
		vfprintf(sx->text_log, fmt, ap);
		va_end(ap);
	}
}

static void
count_error(struct sshard *sh, int32_t code)
{
	unsigned i;

	for (i = 0; i < MAX_ERR_CODES; i++) {
		if (sh->errs[i].n == 0 || sh->errs[i].code == code) {
			sh->errs[i].code = code;
			sh->errs[i].n++;
			return;
		}
	}
	sh->errs[MAX_ERR_CODES - 1].n++; /* more distinct codes than slots */
}

static const char *
error_name(int32_t code, char *buf, size_t len)
{
	if (code < 0)
		snprintf(buf, len, "client: %s", strerror(-code));
	else if (code >= 100 && code < 600)
		snprintf(buf, len, "HTTP %d", code);
	else if (code == 0x7fffffff)
		snprintf(buf, len, "read validation failed");
	else if (code == 0x7ffffffe)
		snprintf(buf, len, "read validation failed: no such row");
	else
		snprintf(buf, len, "CQL error 0x%04x%s", (unsigned)code,
			 code == 0x1000	  ? " (Unavailable)"
			 : code == 0x1001 ? " (Overloaded)"
			 : code == 0x1100 ? " (Write_timeout)"
			 : code == 0x1200 ? " (Read_timeout)"
			 : code == 0x2200 ? " (Invalid)"
			 : code == 0x2500 ? " (Unprepared)"
					  : "");
	return buf;
}

#define VALIDATION_ERROR 0x7fffffff   /* a row with other values than its key makes */
#define VALIDATION_MISSING 0x7ffffffe /* no row at all: the key was never written */

static bool
is_write(enum sm_stress_op op)
{
	return op == SM_STRESS_OP_WRITE || op == SM_STRESS_OP_COUNTER_WRITE;
}

/* Bytes of cell @col of key @i: deterministic, so a read can check it. */
static uint32_t
cell_size(uint64_t i, unsigned col)
{
	const struct sm_stress_dist *d = &sx->s.col.size;
	uint64_t h;

	if (d->kind == SM_STRESS_DIST_FIXED || d->max <= d->min)
		return (uint32_t)d->min;
	h = (i + 1) * 0x9e3779b97f4a7c15ull ^ ((uint64_t)col * 0xbf58476d1ce4e5b9ull);
	h ^= h >> 31;
	return (uint32_t)(d->min + h % (d->max - d->min + 1));
}

static int
stats_init(struct op_stats *o)
{
	if (sm_hdr_init(&o->rt[0], HDR_LOWEST, HDR_HIGHEST, HDR_SIGFIGS) < 0 ||
	    sm_hdr_init(&o->rt[1], HDR_LOWEST, HDR_HIGHEST, HDR_SIGFIGS) < 0 ||
	    sm_hdr_init(&o->st[0], HDR_LOWEST, HDR_HIGHEST, HDR_SIGFIGS) < 0 ||
	    sm_hdr_init(&o->st[1], HDR_LOWEST, HDR_HIGHEST, HDR_SIGFIGS) < 0 ||
	    sm_hdr_init(&o->rt_total, HDR_LOWEST, HDR_HIGHEST, HDR_SIGFIGS) < 0 ||
	    sm_hdr_init(&o->st_total, HDR_LOWEST, HDR_HIGHEST, HDR_SIGFIGS) < 0)
		return -ENOMEM;
	return 0;
}

static void
stats_fini(struct op_stats *o)
{
	sm_hdr_fini(&o->rt[0]);
	sm_hdr_fini(&o->rt[1]);
	sm_hdr_fini(&o->st[0]);
	sm_hdr_fini(&o->st[1]);
	sm_hdr_fini(&o->rt_total);
	sm_hdr_fini(&o->st_total);
}

static void
stats_reset(struct op_stats *o)
{
	o->ops = o->partitions = o->rows = o->errors = 0;
	sm_hdr_reset(&o->rt[0]);
	sm_hdr_reset(&o->rt[1]);
	sm_hdr_reset(&o->st[0]);
	sm_hdr_reset(&o->st[1]);
	sm_hdr_reset(&o->rt_total);
	sm_hdr_reset(&o->st_total);
}

/* ---- statements and requests ---- */

static void
build_statements(void)
{
	const char *ks = sx->s.schema.keyspace;
	char set[768], sel[64];
	size_t off = 0;
	unsigned c;

	for (c = 0; c < sx->ncols; c++)
		off += (size_t)snprintf(set + off, sizeof(set) - off, "%s\"C%u\" = ?",
					c ? ", " : "", c);
	snprintf(sx->stmt_text[SM_STRESS_OP_WRITE], sizeof(sx->stmt_text[0]),
		 "UPDATE %s.%s SET %s WHERE key = ?", ks, sx->s.schema.table, set);
	off = 0;
	for (c = 0; c < sx->ncols; c++)
		off += (size_t)snprintf(set + off, sizeof(set) - off, "%s\"C%u\" = \"C%u\" + ?",
					c ? ", " : "", c, c);
	snprintf(sx->stmt_text[SM_STRESS_OP_COUNTER_WRITE], sizeof(sx->stmt_text[0]),
		 "UPDATE %s.%s SET %s WHERE key = ?", ks, sx->s.schema.counter_table, set);
	snprintf(sel, sizeof(sel), "SELECT *");
	snprintf(sx->stmt_text[SM_STRESS_OP_READ], sizeof(sx->stmt_text[0]),
		 "%s FROM %s.%s WHERE key = ?", sel, ks, sx->s.schema.table);
	snprintf(sx->stmt_text[SM_STRESS_OP_COUNTER_READ], sizeof(sx->stmt_text[0]),
		 "%s FROM %s.%s WHERE key = ?", sel, ks, sx->s.schema.counter_table);
}

static void
fill_write_values(struct worker *w)
{
	uint8_t *p = w->buf;
	unsigned c;

	if (w->op == SM_STRESS_OP_COUNTER_WRITE) {
		for (c = 0; c < sx->ncols; c++) {
			const struct sm_stress_dist *d = &sx->s.counter_add;
			uint64_t add = d->min;
			unsigned b;

			if (d->max > d->min)
				add += sm_rand_below(&w->sh->rng, d->max - d->min + 1);
			for (b = 0; b < 8; b++)
				p[b] = (uint8_t)(add >> (56 - 8 * b));
			w->vals[c] = (struct sm_bytes){ p, 8 };
			p += 8;
		}
	} else {
		for (c = 0; c < sx->ncols; c++) {
			uint32_t len = cell_size(w->key_index, c);

			sm_stress_value(w->key_index, c, p, len);
			w->vals[c] = (struct sm_bytes){ p, len };
			p += len;
		}
	}
	w->vals[sx->ncols] = (struct sm_bytes){ w->key, SM_STRESS_KEY_LEN };
}

/* Check a read's row against the values the key generates: 0, or the error code. */
static int32_t
check_row(const struct worker *w, const struct sm_cqlc_result *r)
{
	struct sm_cqlc_rows_iter it;
	struct sm_bytes cells[MAX_COLS + 1];
	uint8_t want[4096];
	unsigned c;

	if (r->nrows == 0)
		return VALIDATION_MISSING;
	if (r->nrows != 1 || r->ncols < sx->ncols + 1)
		return VALIDATION_ERROR;
	if (w->op == SM_STRESS_OP_COUNTER_READ)
		return 0; /* counters accumulate: any value is right */
	sm_cqlc_rows_iter(&it, r);
	if (!sm_cqlc_rows_next(&it, cells, SM_ARRAY_SIZE(cells)))
		return VALIDATION_ERROR;
	if (cells[0].len != SM_STRESS_KEY_LEN || memcmp(cells[0].p, w->key, SM_STRESS_KEY_LEN))
		return VALIDATION_ERROR;
	for (c = 0; c < sx->ncols; c++) {
		uint32_t len = cell_size(w->key_index, c);

		if (len > sizeof(want) || cells[c + 1].len != len)
			return VALIDATION_ERROR;
		sm_stress_value(w->key_index, c, want, len);
		if (memcmp(cells[c + 1].p, want, len) != 0)
			return VALIDATION_ERROR;
	}
	return 0;
}

static void
worker_finish(struct worker *w, int32_t err_code, uint64_t rows);
static void
worker_send(struct worker *w);
static void
pump(void *arg);

/* ---- CQL path ---- */

static struct sconn *
route(struct worker *w, int64_t token)
{
	struct sshard *sh = w->sh;
	unsigned host = 0, slot, plan[MAX_HOSTS], n, i;
	struct sconn *c;

	if (sx->s.route.token_aware && sx->ring_ok) {
		static const enum sm_ring_ordering ord[] = {
			[SM_STRESS_ORDER_RANDOM] = SM_RING_RANDOM,
			[SM_STRESS_ORDER_TOPOLOGICAL] = SM_RING_TOPOLOGICAL,
			[SM_STRESS_ORDER_NEUTRAL] = SM_RING_NEUTRAL,
		};

		n = sm_ring_plan(&sx->ring, token, ord[sx->s.route.ordering], &sh->ring_rng,
				 &sh->rr, NULL, plan, SM_ARRAY_SIZE(plan));
		host = n > 0 ? plan[0] : 0;
	} else {
		host = (unsigned)(sh->rr++ % sx->nhosts);
	}
	if (sx->use_shard_port && sx->s.route.token_aware)
		slot = sm_ring_shard_of(token, sx->nr_shards, sx->ignore_msb);
	else
		slot = (unsigned)(sh->rr++ % sh->conns_per_host);
	c = &sh->conns[host * sh->conns_per_host + slot % sh->conns_per_host];
	/* A connection that failed: any ready one of the same host, then any. */
	for (i = 0; !c->ready && i < sh->conns_per_host * sx->nhosts; i++)
		c = &sh->conns[(host * sh->conns_per_host + slot + i) %
			       (sh->conns_per_host * sx->nhosts)];
	if (sx->scylla && c->server_shard != UINT32_MAX) {
		sh->routed++;
		if (c->server_shard != sm_ring_shard_of(token, sx->nr_shards, sx->ignore_msb))
			sh->misrouted++;
	}
	return c;
}

static void
cql_done(void *arg, const struct sm_cqlc_result *r)
{
	struct worker *w = arg;

	if (r->kind == SM_CQLC_FAILED) {
		worker_finish(w, r->err, 0);
		return;
	}
	if (r->kind == SM_CQLC_ERROR) {
		worker_finish(w, r->error_code, 0);
		return;
	}
	if (is_write(w->op)) {
		worker_finish(w, 0, 1);
		return;
	}
	if (!sx->s.errors.skip_read_validation) {
		int32_t bad = check_row(w, r);

		if (bad != 0) {
			worker_finish(w, bad, 0);
			return;
		}
	}
	worker_finish(w, 0, r->nrows);
}

static void
cql_send(struct worker *w)
{
	int64_t token = sm_ring_token_of(w->key, SM_STRESS_KEY_LEN);
	struct sconn *c = route(w, token);
	const struct sm_bytes *vals = w->vals;
	unsigned n;
	int ret;

	if (is_write(w->op)) {
		fill_write_values(w);
		n = sx->ncols + 1;
	} else {
		w->vals[sx->ncols] = (struct sm_bytes){ w->key, SM_STRESS_KEY_LEN };
		vals = &w->vals[sx->ncols];
		n = 1;
	}
	if (!c->ready) {
		worker_finish(w, -ENOTCONN, 0);
		return;
	}
	ret = sm_cqlc_execute(c->cql, sm_cqlc_prepared_id(&c->stmt[w->op]), (uint16_t)sx->s.cl,
			      vals, n, SM_CQLC_SKIP_METADATA, cql_done, w);
	if (ret < 0)
		worker_finish(w, ret, 0);
}

/* ---- Alternator path ---- */

static size_t
b64(const uint8_t *p, size_t n, char *o)
{
	static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i, k = 0;

	for (i = 0; i + 2 < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];

		o[k++] = t[v >> 18];
		o[k++] = t[(v >> 12) & 63];
		o[k++] = t[(v >> 6) & 63];
		o[k++] = t[v & 63];
	}
	if (i < n) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);

		o[k++] = t[v >> 18];
		o[k++] = t[(v >> 12) & 63];
		o[k++] = i + 1 < n ? t[(v >> 6) & 63] : '=';
		o[k++] = '=';
	}
	return k;
}

static int32_t
alt_check_item(struct worker *w, const char *body, size_t len)
{
	struct sm_json_doc *d = &w->sh->json_doc;
	char want[8192], name[16];
	uint8_t val[4096];
	int item, attr, b;
	unsigned c;

	if (sm_json_parse(d, body, len, 0) < 0)
		return VALIDATION_ERROR;
	item = sm_json_get(d, sm_json_root(d), "Item");
	if (item < 0)
		return VALIDATION_MISSING; /* GetItem of a key never put: {} */
	for (c = 0; c < sx->ncols; c++) {
		uint32_t n = cell_size(w->key_index, c);
		size_t wl;

		if (n > sizeof(val))
			return VALIDATION_ERROR;
		snprintf(name, sizeof(name), "C%u", c);
		attr = sm_json_get(d, item, name);
		b = attr >= 0 ? sm_json_get(d, attr, "B") : -1;
		if (b < 0)
			return VALIDATION_ERROR;
		sm_stress_value(w->key_index, c, val, n);
		wl = b64(val, n, want);
		if (!sm_json_str_eqn(d, b, want, wl))
			return VALIDATION_ERROR;
	}
	return 0;
}

static void
alt_done(void *arg, int err, int status, const char *body, size_t len)
{
	struct worker *w = arg;

	if (err < 0) {
		worker_finish(w, err, 0);
		return;
	}
	if (status != 200) {
		worker_finish(w, status, 0);
		return;
	}
	if (w->op == SM_STRESS_OP_READ && !sx->s.errors.skip_read_validation) {
		int32_t bad = alt_check_item(w, body, len);

		if (bad != 0) {
			worker_finish(w, bad, 0);
			return;
		}
	}
	worker_finish(w, 0, 1);
}

static void
alt_send(struct worker *w)
{
	struct sshard *sh = w->sh;
	struct sconn *c;
	const char *op;
	char *p = w->json, *end = w->json + w->json_cap;
	uint8_t val[4096];
	unsigned i, c0, n = sh->conns_per_host * sx->nhosts;
	int ret;

	/* One request in flight per connection: the worker's own on some host. */
	c = &sh->conns[(unsigned)(sh->rr++ % sx->nhosts) * sh->conns_per_host + w->idx];
	for (i = 0; !c->ready && i < n; i++)
		c = &sh->conns[(w->idx + i) % n];
	if (!c->ready || sm_httpc_inflight(c->http) > 0) {
		worker_finish(w, -ENOTCONN, 0);
		return;
	}
	p += snprintf(p, (size_t)(end - p),
		      "{\"TableName\":\"%s\",\"%s\":{\"key\":{\"S\":\"%.*s\"}}", sx->s.schema.table,
		      w->op == SM_STRESS_OP_READ || sx->s.mode.alt_op != SM_STRESS_ALT_PUT ? "Key"
											   : "Item",
		      SM_STRESS_KEY_LEN, (const char *)w->key);
	if (w->op == SM_STRESS_OP_READ) {
		op = "GetItem";
		p += snprintf(p, (size_t)(end - p), ",\"ConsistentRead\":%s}",
			      sx->s.cl == SM_STRESS_CL_ONE || sx->s.cl == SM_STRESS_CL_LOCAL_ONE
				      ? "false"
				      : "true");
	} else if (sx->s.mode.alt_op == SM_STRESS_ALT_PUT) {
		op = "PutItem";
		p--; /* reopen the Item object */
		for (c0 = 0; c0 < sx->ncols; c0++) {
			uint32_t len = cell_size(w->key_index, c0);

			sm_stress_value(w->key_index, c0, val, len);
			p += snprintf(p, (size_t)(end - p), ",\"C%u\":{\"B\":\"", c0);
			p += b64(val, len, p);
			p += snprintf(p, (size_t)(end - p), "\"}");
		}
		p += snprintf(p, (size_t)(end - p), "}}");
	} else {
		op = "UpdateItem";
		p += snprintf(p, (size_t)(end - p), ",\"UpdateExpression\":\"SET ");
		for (c0 = 0; c0 < sx->ncols; c0++)
			p += snprintf(p, (size_t)(end - p), "%sC%u = :c%u", c0 ? ", " : "", c0, c0);
		p += snprintf(p, (size_t)(end - p), "\"");
		if (sx->s.mode.alt_op == SM_STRESS_ALT_UPDATE_CONDITIONAL)
			/* perf-alternator's write_rmw condition: a read-modify-write */
			p += snprintf(p, (size_t)(end - p),
				      ",\"ConditionExpression\":\"(NOT attribute_exists(C%u)) OR "
				      "size(C0) <= :max\"",
				      sx->ncols);
		p += snprintf(p, (size_t)(end - p), ",\"ExpressionAttributeValues\":{");
		for (c0 = 0; c0 < sx->ncols; c0++) {
			uint32_t len = cell_size(w->key_index, c0);

			sm_stress_value(w->key_index, c0, val, len);
			p += snprintf(p, (size_t)(end - p), "%s\":c%u\":{\"B\":\"", c0 ? "," : "",
				      c0);
			p += b64(val, len, p);
			p += snprintf(p, (size_t)(end - p), "\"}");
		}
		if (sx->s.mode.alt_op == SM_STRESS_ALT_UPDATE_CONDITIONAL)
			p += snprintf(p, (size_t)(end - p), ",\":max\":{\"N\":\"100000\"}");
		p += snprintf(p, (size_t)(end - p), "}}");
	}
	ret = sm_httpc_post(c->http, op, w->json, (size_t)(p - w->json), alt_done, w);
	if (ret < 0)
		worker_finish(w, ret, 0);
}

/* ---- workers and pacing (every shard) ---- */

static enum sm_stress_op
pick_op(struct sshard *sh)
{
	double x;
	unsigned i;

	if (sx->nops == 1)
		return sx->ops[0];
	x = (double)(sm_rand_next(&sh->rng) >> 11) / 9007199254740992.0 *
	    sx->cum[sx->nops - 1];
	for (i = 0; i + 1 < sx->nops && x >= sx->cum[i]; i++)
		;
	return sx->ops[i];
}

static void
worker_send(struct worker *w)
{
	w->start_ns = sm_now_ns();
	if (sx->s.mode.api == SM_STRESS_API_ALTERNATOR)
		alt_send(w);
	else
		cql_send(w);
}

static void
schedule_pump(struct sshard *sh)
{
	if (!sh->pump_queued) {
		sh->pump_queued = true;
		sm_task_schedule(&sh->pump_task);
	}
}

/*
 * A read found no row: the keys it draws were never written (cassandra-
 * stress's usual first step is `write` over the same population). Say so,
 * and the write that fills the range.
 */
static void
missing_text(char *buf, size_t len, const struct worker *w)
{
	const struct sm_stress_dist *d = &sx->s.pop.dist;
	const char *write = w->op == SM_STRESS_OP_COUNTER_READ ? "counter_write" : "write";
	const char *kind = d->kind == SM_STRESS_DIST_SEQ	 ? "seq="
			   : d->kind == SM_STRESS_DIST_UNIFORM	 ? "dist=UNIFORM("
			   : d->kind == SM_STRESS_DIST_GAUSSIAN ? "dist=GAUSSIAN("
								 : "dist=FIXED(";

	snprintf(buf, len,
		 "read validation failed on %s: no row for key %" PRIu64 " after %u tries: the "
		 "keys this read draws (-pop %s%" PRIu64 "..%" PRIu64 "%s) were never written: "
		 "write them first, with the same -pop: shardmark stress %s n=%" PRIu64
		 " -pop seq=%" PRIu64 "..%" PRIu64 " (and the same -node, -port, -mode), or add "
		 "-errors ignore to go on",
		 sm_stress_op_name(w->op), w->key_index, w->tries + 1, kind, d->min, d->max,
		 d->kind == SM_STRESS_DIST_SEQ ? "" : ")", write, d->max - d->min + 1, d->min,
		 d->max);
}

static void
worker_finish(struct worker *w, int32_t err_code, uint64_t rows)
{
	struct sshard *sh = w->sh;
	uint64_t end = sm_now_ns();
	struct op_stats *o = &sh->st[w->op];

	if (err_code != 0 && w->tries < sx->s.errors.retries && !sh->stopping) {
		/* The clock keeps running from the first try, as in cassandra-stress. */
		w->tries++;
		if (sx->s.mode.api == SM_STRESS_API_ALTERNATOR)
			alt_send(w);
		else
			cql_send(w);
		return;
	}
	if (sh->recording) {
		if (err_code != 0) {
			o->errors++;
			count_error(sh, err_code);
			if (err_code == VALIDATION_ERROR || err_code == VALIDATION_MISSING)
				sh->validation_failures++;
		} else {
			o->ops++;
			o->partitions++;
			o->rows += rows;
			sm_hdr_record(&o->rt[sh->active], (int64_t)(end - w->due_ns));
			sm_hdr_record(&o->st[sh->active], (int64_t)(end - w->start_ns));
			sm_hdr_record(&o->rt_total, (int64_t)(end - w->due_ns));
			sm_hdr_record(&o->st_total, (int64_t)(end - w->start_ns));
		}
	}
	if (err_code != 0 && !sx->s.errors.ignore && !sh->failed_run) {
		char name[96];

		sh->failed_run = true;
		if (err_code == VALIDATION_MISSING)
			missing_text(sh->fail_text, sizeof(sh->fail_text), w);
		else
			snprintf(sh->fail_text, sizeof(sh->fail_text),
				 "%s on %s after %u tries (add -errors ignore to go on)",
				 error_name(err_code, name, sizeof(name)), sm_stress_op_name(w->op),
				 w->tries + 1);
	}
	w->busy = false;
	sh->busy--;
	sh->completed++;
	w->next_idle = sh->idle;
	sh->idle = w;
	schedule_pump(sh);
}

/* Start as many operations as the workers, the quota and the schedule allow. */
static void
pump(void *arg)
{
	struct sshard *sh = arg;
	uint64_t now = sm_now_ns(), started;

	sh->pump_queued = false;
	started = sh->started;
	while (sh->idle != NULL && !sh->stopping && !sh->failed_run) {
		struct worker *w = sh->idle;
		uint64_t due;

		if (sh->quota != 0 && sh->started >= sh->quota)
			break;
		if (sh->pace.interval_ns > 0) {
			due = sh->pace.start_ns +
			      (uint64_t)((double)sh->pace.issued * sh->pace.interval_ns);
			if (due > now) {
				if (due - now > SPIN_NS) {
					sm_timer_arm(&sh->pump_timer, (due - now) / 1000000);
				} else {
					/* poll until it is due: idle, not work */
					if (sh->started == started)
						sm_shard_note_idle();
					schedule_pump(sh);
				}
				return;
			}
			sm_stress_pace_next(&sh->pace);
		} else {
			due = now;
		}
		if (!sm_stress_cursor_next(&sh->cursor, &sh->rng, &w->key_index)) {
			sh->quota = sh->started; /* -pop no-wrap: this shard's keys are used up */
			break;
		}
		sh->idle = w->next_idle;
		w->busy = true;
		w->tries = 0;
		w->due_ns = due;
		w->op = pick_op(sh);
		sm_stress_key(w->key_index, w->key);
		sh->busy++;
		sh->started++;
		worker_send(w);
	}
	if (sh->busy == 0 &&
	    (sh->stopping || sh->failed_run || (sh->quota != 0 && sh->started >= sh->quota)))
		SM_WRITE_ONCE(sh->done, true);
}

static void
pump_timer_fired(void *arg)
{
	pump(arg);
}

/* ---- phases on each shard (run by messages from shard 0) ---- */

static void
shard_start_phase(void *arg)
{
	struct sshard *sh = &sx->sh[sm_shard_id()];
	enum phase ph = (enum phase)(uintptr_t)arg;
	uint64_t total, workers = sx->s.rate.threads, i;
	unsigned k;

	sh->stopping = false;
	sh->failed_run = false;
	SM_WRITE_ONCE(sh->done, false);
	sh->started = sh->completed = 0;
	if (ph == PH_WARMUP) {
		total = sx->s.warmup_ops * sx->nops;
		workers = SM_MIN((uint64_t)sx->s.warmup_threads, workers);
		sh->recording = false;
	} else {
		total = sx->s.n_ops;
		sh->recording = true;
		for (k = 0; k < SM_STRESS_NR_OPS; k++)
			stats_reset(&sh->st[k]);
		memset(sh->errs, 0, sizeof(sh->errs));
		sh->misrouted = sh->routed = sh->validation_failures = 0;
		sh->active = 0;
		sh->cpu0 = thread_cpu_s();
		reactor_time(&sh->busy0, &sh->idle0);
	}
	sh->quota = total / sx->nshards + (sh->id < total % sx->nshards ? 1 : 0);
	if (total != 0 && sh->quota == 0)
		sh->stopping = true; /* fewer operations than shards: none for this one */
	sm_stress_cursor_init(&sh->cursor, &sx->s.pop.dist, sx->s.pop.wrap, sh->id, sx->nshards);
	sm_stress_pace_init(&sh->pace, (double)sx->s.rate.ops_per_s, sx->nshards, sm_now_ns());
	/* This shard's share of the workers (cassandra-stress's threads). */
	sh->idle = NULL;
	workers = workers / sx->nshards + (sh->id < workers % sx->nshards ? 1 : 0);
	for (i = 0; i < workers && i < sh->nworkers; i++) {
		sh->workers[i].next_idle = sh->idle;
		sh->idle = &sh->workers[i];
	}
	if (workers == 0 || sh->stopping) {
		SM_WRITE_ONCE(sh->done, true);
		return;
	}
	schedule_pump(sh);
}

static void
shard_stop(void *arg)
{
	struct sshard *sh = &sx->sh[sm_shard_id()];

	(void)arg;
	sh->stopping = true;
	sm_timer_cancel(&sh->pump_timer);
	if (sh->busy == 0)
		SM_WRITE_ONCE(sh->done, true);
}

/* Flip the interval histograms: shard 0 reads the other one afterwards. */
static void
shard_flip(void *arg)
{
	struct sshard *sh = &sx->sh[sm_shard_id()];
	unsigned k, next = sh->active ^ 1;

	(void)arg;
	for (k = 0; k < SM_STRESS_NR_OPS; k++) {
		sm_hdr_reset(&sh->st[k].rt[next]);
		sm_hdr_reset(&sh->st[k].st[next]);
	}
	sh->active = next;
	sh->cpu1 = thread_cpu_s();
	reactor_time(&sh->busy1, &sh->idle1);
}

/* ---- connections (every shard) ---- */

static void
conn_prepare_next(struct sconn *c);

static void
conn_failed(struct sconn *c, int err, const char *why)
{
	struct sshard *sh = c->sh;

	if (c->failed)
		return;
	c->failed = true;
	if (err == -ESHUTDOWN) {
		/* The runtime is stopping: not a connection failure. */
		c->ready = false;
		return;
	}
	c->ready = false;
	if (sh->first_err == 0) {
		sh->first_err = err;
		snprintf(sh->first_err_text, sizeof(sh->first_err_text), "%.64s:%u: %.400s",
			 sx->addrs[c->host],
			 sx->s.mode.api == SM_STRESS_API_ALTERNATOR ? sx->s.alternator_port
			 : sx->use_shard_port			    ? sx->shard_port
								    : sx->s.native_port,
			 why);
	}
	SM_WRITE_ONCE(sh->nfailed, sh->nfailed + 1);
}

static void
prepared_cb(void *arg, const struct sm_cqlc_result *r)
{
	struct sconn *c = arg;

	if (r->kind != SM_CQLC_PREPARED) {
		char why[400];

		snprintf(why, sizeof(why), "PREPARE %s: %.*s", sx->stmt_text[sx->ops[c->prepared]],
			 r->kind == SM_CQLC_ERROR ? (int)r->error_message.len : 20,
			 r->kind == SM_CQLC_ERROR ? (const char *)r->error_message.p
						  : "no response");
		conn_failed(c, -EINVAL, why);
		return;
	}
	c->stmt[sx->ops[c->prepared]] = r->prepared;
	c->prepared++;
	conn_prepare_next(c);
}

static void
conn_prepare_next(struct sconn *c)
{
	int ret;

	if (c->prepared == sx->nops) {
		c->ready = true;
		SM_WRITE_ONCE(c->sh->nready, c->sh->nready + 1);
		return;
	}
	ret = sm_cqlc_prepare(c->cql, sx->stmt_text[sx->ops[c->prepared]], prepared_cb, c);
	if (ret < 0)
		conn_failed(c, ret, "cannot send PREPARE");
}

static void
cql_ready(struct sm_cqlc *cql, int err, void *ctx)
{
	struct sconn *c = ctx;

	if (err < 0) {
		conn_failed(c, err, sm_cqlc_error_text(cql));
		return;
	}
	c->server_shard = sm_cqlc_info(cql)->scylla ? sm_cqlc_info(cql)->shard : UINT32_MAX;
	conn_prepare_next(c);
}

static void
cql_closed(struct sm_cqlc *cql, int err, void *ctx)
{
	struct sconn *c = ctx;

	c->ready = false;
	if (!c->sh->stopping)
		conn_failed(c, err, sm_cqlc_error_text(cql));
}

static void
http_ready(struct sm_httpc *h, int err, void *ctx)
{
	struct sconn *c = ctx;

	if (err < 0) {
		c->http = NULL; /* freed by the client after a failed connect */
		conn_failed(c, err, strerror(-err));
		return;
	}
	(void)h;
	c->ready = true;
	SM_WRITE_ONCE(c->sh->nready, c->sh->nready + 1);
}

static void
http_closed(struct sm_httpc *h, int err, void *ctx)
{
	struct sconn *c = ctx;

	(void)h;
	c->http = NULL;
	c->ready = false;
	if (!c->sh->stopping)
		conn_failed(c, err < 0 ? err : -ECONNRESET, "connection closed by the server");
}

static void
shard_connect(void *arg)
{
	struct sshard *sh = &sx->sh[sm_shard_id()];
	unsigned h, k;
	int ret;

	(void)arg;
	for (h = 0; h < sx->nhosts; h++) {
		for (k = 0; k < sh->conns_per_host; k++) {
			struct sconn *c = &sh->conns[h * sh->conns_per_host + k];

			c->sh = sh;
			c->host = h;
			c->server_shard = UINT32_MAX;
			if (sx->s.mode.api == SM_STRESS_API_ALTERNATOR) {
				struct sm_httpc_opts o = {
					.addr = sx->addrs[h],
					.port = sx->s.alternator_port,
					.max_inflight = 1,
					.ready = http_ready,
					.closed = http_closed,
					.ctx = c,
				};

				ret = sm_httpc_open(&o, &c->http);
			} else {
				struct sm_cqlc_opts o = {
					.addr = sx->addrs[h],
					.port = sx->use_shard_port ? sx->shard_port
								   : sx->s.native_port,
					.src_port_mod =
						sx->use_shard_port ? (uint16_t)sx->nr_shards : 0,
					.src_port_rem = (uint16_t)k,
					.user = sx->s.mode.user,
					.password = sx->s.mode.password,
					.lz4 = sx->s.mode.compression == SM_STRESS_COMPRESSION_LZ4,
					.max_inflight = SM_MAX(sh->nworkers + 8, 128u),
					.ready = cql_ready,
					.closed = cql_closed,
					.ctx = c,
				};

				ret = sm_cqlc_connect(&o, &c->cql);
			}
			if (ret < 0) {
				c->cql = NULL;
				c->http = NULL;
				conn_failed(c, ret, strerror(-ret));
			}
		}
	}
}

static void
shard_close(void *arg)
{
	struct sshard *sh = &sx->sh[sm_shard_id()];
	unsigned i;

	(void)arg;
	sh->stopping = true;
	sm_timer_cancel(&sh->pump_timer);
	for (i = 0; sh->conns != NULL && i < sh->conns_per_host * sx->nhosts; i++) {
		if (sh->conns[i].cql != NULL)
			sm_cqlc_close(sh->conns[i].cql);
		sh->conns[i].cql = NULL;
		if (sh->conns[i].http != NULL)
			sm_httpc_close(sh->conns[i].http);
		sh->conns[i].ready = false;
	}
}

/* ---- control plane (shard 0) ---- */

static void
control_step(void);
static void
finish(int result);

static void
control_fail(const char *fmt, ...) PRINTF_LIKE(1, 2);

static void
control_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sx->msg, sizeof(sx->msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "shardmark stress: %s\n", sx->msg);
	finish(SM_EXIT_FAIL);
}

static void
broadcast(void (*fn)(void *), void *arg, void (*done)(void *))
{
	unsigned i;

	for (i = 0; i < sx->nshards; i++)
		sm_submit_to(i, fn, arg, done);
}

static void
stop_all(void *arg)
{
	(void)arg;
	shard_close(NULL);
}

static void
finish(int result)
{
	sx->result = result;
	sx->phase = PH_DONE;
	sm_timer_cancel(&sx->timer);
	if (sx->ctl != NULL) {
		sm_cqlc_close(sx->ctl);
		sx->ctl = NULL;
	}
	if (sx->ctl_http != NULL) {
		sm_httpc_close(sx->ctl_http);
		sx->ctl_http = NULL;
	}
	broadcast(stop_all, NULL, NULL);
	sm_runtime_stop();
}

static int
add_host_addr(const char *addr)
{
	unsigned i;

	for (i = 0; i < sx->nhosts; i++)
		if (strcmp(sx->addrs[i], addr) == 0)
			return (int)i;
	if (sx->nhosts == MAX_HOSTS)
		return -ENOSPC;
	snprintf(sx->addr_buf[sx->nhosts], sizeof(sx->addr_buf[0]), "%s", addr);
	sx->addrs[sx->nhosts] = sx->addr_buf[sx->nhosts];
	return (int)sx->nhosts++;
}

static void
rows_to_ring(const struct sm_cqlc_result *r, bool local)
{
	struct sm_cqlc_rows_iter it;
	struct sm_bytes cells[4];
	char addr[64];

	sm_cqlc_rows_iter(&it, r);
	while (sm_cqlc_rows_next(&it, cells, 4)) {
		int ret;

		if (cells[0].p == NULL || (cells[0].len != 4 && cells[0].len != 16))
			continue;
		inet_ntop(cells[0].len == 4 ? AF_INET : AF_INET6, cells[0].p, addr, sizeof(addr));
		if (local && (strcmp(addr, "0.0.0.0") == 0 || strcmp(addr, "::") == 0))
			snprintf(addr, sizeof(addr), "%s", sx->s.nodes.hosts[0]);
		ret = sm_ring_add_host_cells(&sx->ring, cells[0].p, cells[0].len, cells[1].p,
					     cells[1].p ? cells[1].len : 0, cells[2].p,
					     cells[2].p ? cells[2].len : 0, cells[3].p,
					     cells[3].p ? cells[3].len : 0);
		if (ret >= 0 && local && strcmp(sx->ring.hosts[ret].addr, addr) != 0)
			snprintf(sx->ring.hosts[ret].addr, sizeof(sx->ring.hosts[ret].addr), "%s",
				 addr);
	}
}

static void
ctl_cb(void *arg, const struct sm_cqlc_result *r)
{
	(void)arg;
	if (r->kind == SM_CQLC_FAILED) {
		control_fail("control connection to %s:%u: %s", sx->s.nodes.hosts[0],
			     sx->s.native_port, sm_cqlc_error_text(sx->ctl));
		return;
	}
	if (r->kind == SM_CQLC_ERROR) {
		control_fail("step %u of the setup failed: %.*s (error 0x%04x)", sx->ctl_step,
			     (int)r->error_message.len, (const char *)r->error_message.p,
			     (unsigned)r->error_code);
		return;
	}
	if (sx->ctl_step == 1)
		rows_to_ring(r, true);
	else if (sx->ctl_step == 2)
		rows_to_ring(r, false);
	sx->ctl_step++;
	control_step();
}

static void
ctl_ready(struct sm_cqlc *c, int err, void *ctx)
{
	const struct sm_cqlc_info *in = sm_cqlc_info(c);

	(void)ctx;
	if (err < 0) {
		control_fail("cannot connect to %s:%u: %s (%s)", sx->s.nodes.hosts[0],
			     sx->s.native_port, sm_cqlc_error_text(c),
			     err == -EACCES ? "check -mode user= password="
					    : "check -node and -port native=");
		return;
	}
	sx->scylla = in->scylla;
	sx->nr_shards = in->nr_shards;
	sx->ignore_msb = in->ignore_msb;
	sx->shard_port = in->shard_aware_port;
	sx->ctl_step = 1;
	control_step();
}

static void
ctl_http_ready(struct sm_httpc *h, int err, void *ctx)
{
	(void)h;
	(void)ctx;
	if (err < 0) {
		sx->ctl_http = NULL;
		control_fail("cannot connect to Alternator at %s:%u: %s (check -node and -port "
			     "alternator=)",
			     sx->s.nodes.hosts[0], sx->s.alternator_port, strerror(-err));
		return;
	}
	sx->ctl_step = 1;
	control_step();
}

static void
ctl_http_cb(void *arg, int err, int status, const char *body, size_t len)
{
	(void)arg;
	if (err < 0) {
		control_fail("Alternator control request failed: %s", strerror(-err));
		return;
	}
	/* An existing table is fine: the run reuses it. */
	if (status != 200 && !(len > 0 && memmem(body, len, "ResourceInUseException", 22))) {
		control_fail("CreateTable on %s:%u answered HTTP %d: %.*s", sx->s.nodes.hosts[0],
			     sx->s.alternator_port, status, (int)SM_MIN(len, (size_t)300), body);
		return;
	}
	sx->ctl_step++;
	control_step();
}

static void
build_ring(void)
{
	struct sm_ring_dc_rf dcs[SM_STRESS_MAX_KV];
	struct sm_ring_repl repl = { .strategy = SM_RING_SIMPLE, .rf = sx->s.schema.factor };
	unsigned i, n = 0;

	if (sx->ring.nhosts == 0)
		return;
	if (strstr(sx->s.schema.strategy, "NetworkTopology") != NULL) {
		repl.strategy = SM_RING_NETWORK_TOPOLOGY;
		for (i = 0; i < sx->s.schema.n_repl; i++) {
			unsigned rf = (unsigned)strtoul(sx->s.schema.repl[i].value, NULL, 10);

			dcs[n].dc = strcmp(sx->s.schema.repl[i].key, "replication_factor") == 0
					    ? NULL
					    : sx->s.schema.repl[i].key;
			dcs[n++].rf = rf;
		}
		if (n == 0) {
			dcs[n].dc = NULL;
			dcs[n++].rf = sx->s.schema.factor ? sx->s.schema.factor : 1;
		}
		repl.dcs = dcs;
		repl.ndcs = n;
	} else if (strstr(sx->s.schema.strategy, "Everywhere") != NULL) {
		repl.rf = sx->ring.nhosts;
	}
	if (repl.rf == 0)
		repl.rf = 1;
	sx->ring_ok = sm_ring_build(&sx->ring, &repl, sx->s.nodes.datacenter) == 0;
	if (!sx->ring_ok)
		out("warning: token-aware routing is off: %s\n", sx->ring.err);
}

static void
start_connect(void)
{
	unsigned i;

	if (sx->ring_ok) {
		for (i = 0; i < sx->ring.nhosts; i++)
			add_host_addr(sx->ring.hosts[i].addr);
	}
	if (sx->nhosts == 0)
		for (i = 0; i < sx->s.nodes.n; i++)
			add_host_addr(sx->s.nodes.hosts[i]);
	if (sx->s.mode.api == SM_STRESS_API_CQL) {
		sx->use_shard_port = sx->scylla && sx->s.route.shard_aware && sx->shard_port != 0 &&
				     sx->nr_shards > 0;
		for (i = 0; i < sx->nhosts; i++) {
			if (sx->ring_ok && i < sx->ring.nhosts)
				out("Datacenter: %s; Host: /%s; Rack: %s\n", sx->ring.hosts[i].dc,
				    sx->addrs[i], sx->ring.hosts[i].rack);
			else
				out("Host: /%s\n", sx->addrs[i]);
		}
		if (sx->use_shard_port)
			out("Routing: %s, shard-aware: %u %s per host through port %u "
			    "(source port %% %u picks the shard)\n",
			    sx->s.route.token_aware ? "token-aware" : "round-robin", sx->nr_shards,
			    sx->nr_shards == 1 ? "shard" : "shards", sx->shard_port, sx->nr_shards);
		else if (!sx->scylla)
			out("Routing: %s; the server does not advertise ScyllaDB's sharding "
			    "(SCYLLA_NR_SHARDS): not shard-aware\n",
			    sx->s.route.token_aware ? "token-aware only" : "round-robin");
		else
			out("Routing: %s, not shard-aware (%s)\n",
			    sx->s.route.token_aware ? "token-aware" : "round-robin",
			    !sx->s.route.shard_aware ? "-route no-shard-aware"
						     : "no shard-aware port advertised");
	}
	for (i = 0; i < sx->nshards; i++) {
		struct sshard *sh = &sx->sh[i];

		sh->conns_per_host =
			sx->s.mode.api == SM_STRESS_API_ALTERNATOR ? SM_MAX(1u, sh->nworkers)
			: sx->use_shard_port
				? sx->nr_shards
				: SM_MAX(1u, (sx->s.mode.connections_per_host + sx->nshards - 1) /
						     sx->nshards);
		sh->conns = calloc((size_t)sh->conns_per_host * sx->nhosts, sizeof(*sh->conns));
		if (sh->conns == NULL) {
			control_fail("out of memory");
			return;
		}
	}
	sx->phase = PH_CONNECT;
	broadcast(shard_connect, NULL, NULL);
	sm_timer_arm(&sx->timer, POLL_MS);
}

static void
control_step(void)
{
	char q[2048];
	int ret = 0;

	if (sx->s.mode.api == SM_STRESS_API_ALTERNATOR) {
		if (sx->ctl_step == 1) {
			char *p = q;

			p += snprintf(q, sizeof(q),
				      "{\"TableName\":\"%s\",\"BillingMode\":\"PAY_PER_REQUEST\","
				      "\"AttributeDefinitions\":[{\"AttributeName\":\"key\","
				      "\"AttributeType\":\"S\"}],\"KeySchema\":[{\"AttributeName\":"
				      "\"key\",\"KeyType\":\"HASH\"}]}",
				      sx->s.schema.table);
			ret = sm_httpc_post(sx->ctl_http, "CreateTable", q, (size_t)(p - q),
					    ctl_http_cb, NULL);
		} else {
			sm_httpc_close(sx->ctl_http);
			sx->ctl_http = NULL;
			start_connect();
			return;
		}
		if (ret < 0)
			control_fail("Alternator control request: %s", strerror(-ret));
		return;
	}
	switch (sx->ctl_step) {
	case 1:
		ret = sm_cqlc_query(
			sx->ctl, "SELECT rpc_address, data_center, rack, tokens FROM system.local",
			SM_STRESS_CL_ONE, NULL, 0, ctl_cb, NULL);
		break;
	case 2:
		ret = sm_cqlc_query(
			sx->ctl, "SELECT rpc_address, data_center, rack, tokens FROM system.peers",
			SM_STRESS_CL_ONE, NULL, 0, ctl_cb, NULL);
		break;
	case 3: {
		size_t off;
		unsigned i;

		off = (size_t)snprintf(q, sizeof(q),
				       "CREATE KEYSPACE IF NOT EXISTS %s WITH replication = "
				       "{'class': '%s'",
				       sx->s.schema.keyspace, sx->s.schema.strategy);
		for (i = 0; i < sx->s.schema.n_repl; i++)
			off += (size_t)snprintf(q + off, sizeof(q) - off, ", '%s': '%s'",
						sx->s.schema.repl[i].key,
						sx->s.schema.repl[i].value);
		snprintf(q + off, sizeof(q) - off, "} AND durable_writes = true");
		ret = sm_cqlc_query(sx->ctl, q, SM_STRESS_CL_ONE, NULL, 0, ctl_cb, NULL);
		break;
	}
	case 4:
	case 5: {
		bool counter = sx->ctl_step == 5;
		size_t off;
		unsigned c;

		off = (size_t)snprintf(q, sizeof(q),
				       "CREATE TABLE IF NOT EXISTS %s.%s (key blob PRIMARY KEY",
				       sx->s.schema.keyspace,
				       counter ? sx->s.schema.counter_table : sx->s.schema.table);
		for (c = 0; c < sx->ncols; c++)
			off += (size_t)snprintf(q + off, sizeof(q) - off, ", \"C%u\" %s", c,
						counter ? "counter" : "blob");
		snprintf(q + off, sizeof(q) - off, ")");
		ret = sm_cqlc_query(sx->ctl, q, SM_STRESS_CL_ONE, NULL, 0, ctl_cb, NULL);
		break;
	}
	case 6:
	case 7:
		if (sx->s.truncate == SM_STRESS_TRUNCATE_NEVER) {
			sx->ctl_step = 8;
			control_step();
			return;
		}
		snprintf(q, sizeof(q), "TRUNCATE %s.%s", sx->s.schema.keyspace,
			 sx->ctl_step == 6 ? sx->s.schema.table : sx->s.schema.counter_table);
		ret = sm_cqlc_query(sx->ctl, q, SM_STRESS_CL_ALL, NULL, 0, ctl_cb, NULL);
		break;
	default:
		sm_cqlc_close(sx->ctl);
		sx->ctl = NULL;
		build_ring();
		start_connect();
		return;
	}
	if (ret < 0)
		control_fail("control connection: cannot send a request: %s", strerror(-ret));
}

/* ---- reporting (shard 0) ---- */

static void
merge_interval(void)
{
	unsigned i, k;

	for (k = 0; k < SM_STRESS_NR_OPS; k++) {
		struct op_stats *m = &sx->merged[k];

		m->ops = m->partitions = m->rows = m->errors = 0;
		sm_hdr_reset(&m->rt[0]);
		sm_hdr_reset(&m->st[0]);
		for (i = 0; i < sx->nshards; i++) {
			const struct op_stats *o = &sx->sh[i].st[k];
			unsigned prev = sx->sh[i].active ^ 1;

			m->ops += o->ops;
			m->partitions += o->partitions;
			m->rows += o->rows;
			m->errors += o->errors;
			sm_hdr_add(&m->rt[0], &o->rt[prev]);
			sm_hdr_add(&m->st[0], &o->st[prev]);
		}
	}
}

static double
ms(int64_t ns)
{
	return (double)ns / 1e6;
}

/* The histogram cassandra-stress prints: response time for fixed=, else service time. */
static const struct sm_hdr *
shown(const struct op_stats *o, bool total)
{
	if (sx->s.rate.kind == SM_STRESS_RATE_FIXED)
		return total ? &o->rt_total : &o->rt[0];
	return total ? &o->st_total : &o->st[0];
}

static void
interval_row(const char *type, const struct sm_hdr *h, uint64_t total_ops, uint64_t d_ops,
	     uint64_t d_rows, uint64_t d_err, double dt, double elapsed, double stderr_)
{
	struct sm_cs_interval iv = {
		.type = type,
		.total_ops = total_ops,
		.op_s = dt > 0 ? (double)d_ops / dt : 0,
		.pk_s = dt > 0 ? (double)d_ops / dt : 0,
		.row_s = dt > 0 ? (double)d_rows / dt : 0,
		.mean_ms = h->total_count ? sm_hdr_mean(h) / 1e6 : 0,
		.med_ms = ms(sm_hdr_value_at_percentile(h, 50)),
		.p95_ms = ms(sm_hdr_value_at_percentile(h, 95)),
		.p99_ms = ms(sm_hdr_value_at_percentile(h, 99)),
		.p999_ms = ms(sm_hdr_value_at_percentile(h, 99.9)),
		.max_ms = ms(sm_hdr_max(h)),
		.time_s = elapsed,
		.stderr_ = stderr_,
		.errors = d_err,
	};

	sm_cs_print_interval(stdout, &iv);
	if (sx->text_log != NULL)
		sm_cs_print_interval(sx->text_log, &iv);
	if (sx->csv_log != NULL)
		fprintf(sx->csv_log,
			"%u,%.3f,%s,%" PRIu64 ",%.3f,%.3f,%.3f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%" PRIu64
			"\n",
			sx->csv_interval, iv.time_s, iv.type, iv.total_ops, iv.op_s, iv.pk_s, iv.row_s,
			iv.mean_ms, iv.med_ms, iv.p95_ms, iv.p99_ms, iv.p999_ms, iv.max_ms, iv.errors);
}

/* The columns of -log csv=: one row per interval and op type ("total" too). */
#define CSV_HEADER                                                                                 \
	"interval,seconds,type,total_ops,ops_per_s,partitions_per_s,rows_per_s,mean_ms,p50_ms,"     \
	"p95_ms,p99_ms,p999_ms,max_ms,errors\n"

static void
report_interval(void)
{
	uint64_t now = sm_now_ns(), ops = 0, errs = 0, d_ops;
	double dt = (double)(now - sx->last_tick_ns) / 1e9;
	double elapsed = (double)(now - sx->measure_start_ns) / 1e9, mean, stderr_ = 0;
	unsigned k;

	merge_interval();
	sx->csv_interval++;
	sm_hdr_reset(&sx->tmp_rt);
	sm_hdr_reset(&sx->tmp_st);
	for (k = 0; k < SM_STRESS_NR_OPS; k++) {
		struct op_stats *m = &sx->merged[k];

		ops += m->ops;
		errs += m->errors;
		sm_hdr_add(&sx->tmp_rt, &m->rt[0]);
		sm_hdr_add(&sx->tmp_st, &m->st[0]);
	}
	d_ops = ops - sx->last_ops[SM_STRESS_NR_OPS];
	if (dt > 0) {
		double r = (double)d_ops / dt;

		sx->rate_sum += r;
		sx->rate_sq += r * r;
		sx->rate_n++;
		mean = sx->rate_sum / sx->rate_n;
		if (sx->rate_n > 1)
			stderr_ = sqrt(fmax(0, sx->rate_sq / sx->rate_n - mean * mean)) /
				  sqrt((double)sx->rate_n) / (mean > 0 ? mean : 1);
	}
	if (sx->nops > 1) {
		for (k = 0; k < sx->nops; k++) {
			enum sm_stress_op op = sx->ops_by_name[k];
			struct op_stats *m = &sx->merged[op];

			interval_row(sm_stress_op_name(op),
				     sx->s.rate.kind == SM_STRESS_RATE_FIXED ? &m->rt[0]
									     : &m->st[0],
				     m->ops, m->ops - sx->last_ops[op], m->ops - sx->last_ops[op],
				     m->errors, dt, elapsed, stderr_);
			sx->last_ops[op] = m->ops;
		}
	}
	interval_row("total", sx->s.rate.kind == SM_STRESS_RATE_FIXED ? &sx->tmp_rt : &sx->tmp_st,
		     ops, d_ops, d_ops, errs - sx->last_errors, dt, elapsed, stderr_);
	fflush(stdout);
	if (sx->csv_log != NULL)
		fflush(sx->csv_log);
	if (sx->hdr_log != NULL) {
		double start = (double)(sx->last_tick_ns - sx->measure_start_ns) / 1e9;

		for (k = 0; k < sx->nops; k++) {
			char tag[64];
			struct op_stats *m = &sx->merged[sx->ops[k]];

			snprintf(tag, sizeof(tag), "%s-st", sm_stress_op_name(sx->ops[k]));
			sm_hdr_log_write(sx->hdr_log, tag, start, dt, &m->st[0]);
			snprintf(tag, sizeof(tag), "%s-rt", sm_stress_op_name(sx->ops[k]));
			sm_hdr_log_write(sx->hdr_log, tag, start, dt, &m->rt[0]);
		}
	}
	sx->last_ops[SM_STRESS_NR_OPS] = ops;
	sx->last_errors = errs;
	sx->last_tick_ns = now;
}

static void
flip_done(void *arg)
{
	(void)arg;
	if (++sx->acks < sx->nshards)
		return;
	report_interval();
	if (sx->phase == PH_DONE) /* the last interval: print the results */
		sm_runtime_stop();
}

/* ---- control ticks (shard 0) ---- */

static bool
all_done(void)
{
	unsigned i;

	for (i = 0; i < sx->nshards; i++)
		if (!SM_READ_ONCE(sx->sh[i].done))
			return false;
	return true;
}

static bool
any_failed_run(void)
{
	unsigned i;

	for (i = 0; i < sx->nshards; i++)
		if (sx->sh[i].failed_run)
			return true;
	return false;
}

/*
 * True when no operation has completed for requestTimeout while some are in
 * flight: a server that stopped answering must not hang the run.
 */
static bool
stalled(uint64_t now)
{
	uint64_t done = 0, busy = 0;
	unsigned i;

	for (i = 0; i < sx->nshards; i++) {
		done += SM_READ_ONCE(sx->sh[i].completed);
		busy += SM_READ_ONCE(sx->sh[i].busy);
	}
	if (done != sx->progress_ops || busy == 0) {
		sx->progress_ops = done;
		sx->progress_ns = now;
		return false;
	}
	if (now - sx->progress_ns < (uint64_t)sx->s.mode.request_timeout_ms * 1000000ull)
		return false;
	fprintf(stderr,
		"shardmark stress: no operation completed for %u ms with %" PRIu64
		" in flight (-mode requestTimeout=%u): the server stopped answering; ending the "
		"run\n",
		sx->s.mode.request_timeout_ms, busy, sx->s.mode.request_timeout_ms);
	sx->failure = true;
	return true;
}

static void
begin_phase(enum phase ph)
{
	sx->phase = ph;
	sx->phase_start_ns = sm_now_ns();
	sx->progress_ops = UINT64_MAX; /* the shards reset their counts */
	if (ph == PH_MEASURE) {
		unsigned k;

		sx->measure_start_ns = sx->phase_start_ns;
		sx->last_tick_ns = sx->phase_start_ns;
		sx->measure_start_epoch = (double)time(NULL);
		for (k = 0; k <= SM_STRESS_NR_OPS; k++)
			sx->last_ops[k] = 0;
		if (sx->hdr_log != NULL)
			sm_hdr_log_write_header(sx->hdr_log, "Logged with shardmark stress",
						sx->measure_start_epoch);
		for (k = 0; k < sx->nops; k++) {
			if (sx->s.n_ops)
				out("Running %s with %u threads for %" PRIu64 " iteration\n",
				    sm_stress_op_name(sx->ops[k]), sx->s.rate.threads, sx->s.n_ops);
			else
				out("Running %s with %u threads for %.0f seconds\n",
				    sm_stress_op_name(sx->ops[k]), sx->s.rate.threads,
				    (double)sx->s.duration_ns / 1e9);
		}
		sm_cs_print_header(stdout);
		if (sx->text_log != NULL)
			sm_cs_print_header(sx->text_log);
		fflush(stdout);
	}
	broadcast(shard_start_phase, (void *)(uintptr_t)ph, NULL);
	sm_timer_arm(&sx->timer, POLL_MS);
}

static void
control_tick(void *arg)
{
	uint64_t now = sm_now_ns();
	unsigned i, ready = 0, failed = 0, want = 0;

	(void)arg;
	switch (sx->phase) {
	case PH_CONTROL:
		if (now - sx->phase_start_ns > 30ull * 1000000000ull) {
			control_fail("%s:%u did not complete the setup (handshake, ring, schema) "
				     "within 30 s",
				     sx->s.nodes.hosts[0],
				     sx->s.mode.api == SM_STRESS_API_ALTERNATOR
					     ? sx->s.alternator_port
					     : sx->s.native_port);
			return;
		}
		sm_timer_arm(&sx->timer, 200);
		return;
	case PH_CONNECT:
		for (i = 0; i < sx->nshards; i++) {
			ready += SM_READ_ONCE(sx->sh[i].nready);
			failed += SM_READ_ONCE(sx->sh[i].nfailed);
			want += sx->sh[i].conns_per_host * sx->nhosts;
		}
		if (failed > 0) {
			for (i = 0; i < sx->nshards; i++)
				if (sx->sh[i].first_err != 0)
					break;
			control_fail("%u of %u connections failed: %s", failed, want,
				     i < sx->nshards ? sx->sh[i].first_err_text : "?");
			return;
		}
		if (ready < want) {
			if (now - sx->phase_start_ns > 30ull * 1000000000ull) {
				control_fail("only %u of %u connections ready after 30 s", ready,
					     want);
				return;
			}
			sm_timer_arm(&sx->timer, POLL_MS);
			return;
		}
		if (sx->s.warmup_ops > 0 && !sx->s.no_warmup) {
			out("Warming up %s with %" PRIu64 " iterations...\n",
			    sx->nops > 1 ? "the op mix" : sm_stress_op_name(sx->ops[0]),
			    sx->s.warmup_ops * sx->nops);
			fflush(stdout);
			begin_phase(PH_WARMUP);
		} else {
			begin_phase(PH_MEASURE);
		}
		return;
	case PH_WARMUP:
		if (stalled(now)) {
			sx->phase = PH_DONE;
			sm_runtime_stop();
			return;
		}
		if (any_failed_run()) {
			sx->failure = true;
			begin_phase(PH_DRAIN);
			return;
		}
		if (!all_done()) {
			sm_timer_arm(&sx->timer, POLL_MS);
			return;
		}
		begin_phase(PH_MEASURE);
		return;
	case PH_MEASURE:
		if (any_failed_run() && !sx->failure) {
			sx->failure = true;
			broadcast(shard_stop, NULL, NULL);
		}
		if (sx->s.duration_ns && now - sx->measure_start_ns >= sx->s.duration_ns &&
		    !sx->sh[0].stopping) {
			broadcast(shard_stop, NULL, NULL);
		}
		if (sx->acks >= sx->nshards && (all_done() || stalled(now))) {
			sx->phase = PH_DONE;
			sm_timer_cancel(&sx->timer);
			sx->acks = 0;
			broadcast(shard_flip, NULL, flip_done);
			return;
		}
		if (now - sx->last_tick_ns >= (uint64_t)sx->s.log.interval_ms * 1000000ull &&
		    sx->acks >= sx->nshards) {
			sx->acks = 0;
			broadcast(shard_flip, NULL, flip_done);
		}
		sm_timer_arm(&sx->timer, POLL_MS);
		return;
	case PH_DRAIN:
		if (!all_done() && !stalled(now)) {
			sm_timer_arm(&sx->timer, POLL_MS);
			return;
		}
		sx->phase = PH_DONE;
		sm_runtime_stop();
		return;
	default:
		return;
	}
}

/* ---- shard setup ---- */

static int
stress_shard_init(unsigned shard, void *arg)
{
	struct stress_ctx *c = arg;
	struct sshard *sh = &c->sh[shard];
	struct sm_net_config nc;
	size_t buf = 0;
	unsigned i, k;
	int ret;

	sm_app_net_config(&c->cfg, &nc);
	ret = sm_net_shard_init(&nc);
	if (ret < 0)
		return ret;
	sh->id = shard;
	sm_rand_seed(&sh->rng, 0x5eed0000ull + shard);
	sh->ring_rng = 0x9e3779b97f4a7c15ull * (shard + 1);
	sm_json_doc_init(&sh->json_doc);
	sm_timer_init(&sh->pump_timer, pump_timer_fired, sh);
	sm_task_init(&sh->pump_task, pump, sh);
	for (k = 0; k < SM_STRESS_NR_OPS; k++)
		if (stats_init(&sh->st[k]) < 0)
			return -ENOMEM;
	sh->nworkers = c->s.rate.threads / c->nshards + 1;
	sh->workers = calloc(sh->nworkers, sizeof(*sh->workers));
	if (sh->workers == NULL)
		return -ENOMEM;
	for (k = 0; k < c->ncols; k++)
		buf += SM_MAX((uint64_t)8, c->s.col.size.max);
	for (i = 0; i < sh->nworkers; i++) {
		struct worker *w = &sh->workers[i];

		w->sh = sh;
		w->idx = i;
		w->buf = malloc(buf + 8);
		w->json_cap = 512 + c->ncols * (32 + (size_t)c->s.col.size.max * 4 / 3 + 4);
		w->json = malloc(w->json_cap);
		if (w->buf == NULL || w->json == NULL)
			return -ENOMEM;
	}
	if (shard != 0)
		return 0;
	sm_timer_init(&c->timer, control_tick, NULL);
	c->phase = PH_CONTROL;
	c->phase_start_ns = sm_now_ns();
	sm_timer_arm(&c->timer, 200);
	c->acks = c->nshards;
	if (c->s.mode.api == SM_STRESS_API_ALTERNATOR) {
		struct sm_httpc_opts o = {
			.addr = c->s.nodes.hosts[0],
			.port = c->s.alternator_port,
			.max_inflight = 1,
			.ready = ctl_http_ready,
			.ctx = c,
		};

		ret = sm_httpc_open(&o, &c->ctl_http);
	} else {
		struct sm_cqlc_opts o = {
			.addr = c->s.nodes.hosts[0],
			.port = c->s.native_port,
			.user = c->s.mode.user,
			.password = c->s.mode.password,
			.max_inflight = 8,
			.ready = ctl_ready,
			.ctx = c,
		};

		ret = sm_cqlc_connect(&o, &c->ctl);
	}
	if (ret < 0) {
		fprintf(stderr, "shardmark stress: cannot connect to %s: %s\n", c->s.nodes.hosts[0],
			strerror(-ret));
		return ret;
	}
	return 0;
}

static void
stress_shard_fini(unsigned shard, void *arg)
{
	struct stress_ctx *c = arg;
	struct sshard *sh = &c->sh[shard];
	unsigned i;

	shard_close(NULL);
	if (shard == 0 && c->ctl != NULL) {
		sm_cqlc_close(c->ctl);
		c->ctl = NULL;
	}
	sm_net_shard_fini();
	for (i = 0; sh->workers != NULL && i < sh->nworkers; i++) {
		free(sh->workers[i].buf);
		free(sh->workers[i].json);
	}
	free(sh->workers);
	sh->workers = NULL;
	sm_json_doc_release(&sh->json_doc);
}

/* ---- final report ---- */

static void
op_summary(struct sm_cs_op_summary *o, const char *name, const struct sm_hdr *h, uint64_t ops,
	   uint64_t rows, uint64_t errors, double secs)
{
	o->name = name;
	o->op_s = secs > 0 ? (double)ops / secs : 0;
	o->pk_s = o->op_s;
	o->row_s = secs > 0 ? (double)rows / secs : 0;
	o->mean_ms = h->total_count ? sm_hdr_mean(h) / 1e6 : 0;
	o->med_ms = ms(sm_hdr_value_at_percentile(h, 50));
	o->p95_ms = ms(sm_hdr_value_at_percentile(h, 95));
	o->p99_ms = ms(sm_hdr_value_at_percentile(h, 99));
	o->p999_ms = ms(sm_hdr_value_at_percentile(h, 99.9));
	o->max_ms = ms(sm_hdr_max(h));
	o->partitions = ops;
	o->errors = errors;
}

static void
json_hist(FILE *f, const struct sm_hdr *h)
{
	fprintf(f,
		"{\"count\": %" PRId64 ", \"mean_ms\": %.4f, \"p50_ms\": %.4f, \"p95_ms\": %.4f, "
		"\"p99_ms\": %.4f, \"p999_ms\": %.4f, \"max_ms\": %.4f}",
		h->total_count, h->total_count ? sm_hdr_mean(h) / 1e6 : 0,
		ms(sm_hdr_value_at_percentile(h, 50)), ms(sm_hdr_value_at_percentile(h, 95)),
		ms(sm_hdr_value_at_percentile(h, 99)), ms(sm_hdr_value_at_percentile(h, 99.9)),
		ms(sm_hdr_max(h)));
}

/*
 * The network driver's own counters (DPDK: its TCP stack's and the NIC's),
 * summed over the client shards into a new array (sm_free it); 0 and NULL
 * when the driver keeps none (io_uring: the kernel's TCP is not ours).
 */
static unsigned
net_counters_sum(unsigned nshards, const struct sm_net_counter **desc, uint64_t **sum)
{
	unsigned n = sm_net_counters(desc), i, k;
	uint64_t *tmp;

	*sum = NULL;
	if (n == 0)
		return 0;
	*sum = sm_calloc(2 * (size_t)n, sizeof(uint64_t));
	if (*sum == NULL)
		return 0;
	tmp = *sum + n;
	for (i = 0; i < nshards; i++) {
		sm_net_counters_read(i, tmp);
		for (k = 0; k < n; k++)
			(*sum)[k] += tmp[k];
	}
	return n;
}

/* The summed counter called @name, or -1 when the driver has none by that name. */
static int64_t
net_counter(const struct sm_net_counter *desc, const uint64_t *sum, unsigned n, const char *name)
{
	unsigned k;

	for (k = 0; k < n; k++)
		if (strcmp(desc[k].name, name) == 0)
			return (int64_t)sum[k];
	return -1;
}

static void
final_report(void)
{
	struct sm_cs_op_summary per[SM_STRESS_NR_OPS];
	struct sm_cs_summary sum;
	struct sm_hdr all_rt, all_st;
	struct op_stats tot[SM_STRESS_NR_OPS];
	struct err_count errs[MAX_ERR_CODES * 4];
	uint64_t ops = 0, rows = 0, errors = 0, misrouted = 0, routed = 0, bad = 0;
	double secs = (double)(sx->last_tick_ns - sx->measure_start_ns) / 1e9, cpu = 0;
	double busy = 0, idle = 0;
	unsigned i, k, e, nerr = 0, nnet;
	const struct sm_net_counter *net_desc = NULL;
	uint64_t *net_sum;
	char name[96];

	memset(&sum, 0, sizeof(sum));
	memset(errs, 0, sizeof(errs));
	if (sm_hdr_init(&all_rt, HDR_LOWEST, HDR_HIGHEST, HDR_SIGFIGS) < 0 ||
	    sm_hdr_init(&all_st, HDR_LOWEST, HDR_HIGHEST, HDR_SIGFIGS) < 0)
		return;
	for (k = 0; k < sx->nops; k++) {
		enum sm_stress_op op = sx->ops[k];

		memset(&tot[k], 0, sizeof(tot[k]));
		sm_hdr_init(&tot[k].rt_total, HDR_LOWEST, HDR_HIGHEST, HDR_SIGFIGS);
		sm_hdr_init(&tot[k].st_total, HDR_LOWEST, HDR_HIGHEST, HDR_SIGFIGS);
		for (i = 0; i < sx->nshards; i++) {
			const struct op_stats *o = &sx->sh[i].st[op];

			tot[k].ops += o->ops;
			tot[k].rows += o->rows;
			tot[k].errors += o->errors;
			sm_hdr_add(&tot[k].rt_total, &o->rt_total);
			sm_hdr_add(&tot[k].st_total, &o->st_total);
		}
		sm_hdr_add(&all_rt, &tot[k].rt_total);
		sm_hdr_add(&all_st, &tot[k].st_total);
		ops += tot[k].ops;
		rows += tot[k].rows;
		errors += tot[k].errors;
		op_summary(&per[k], sm_stress_op_name(op), shown(&tot[k], true), tot[k].ops,
			   tot[k].rows, tot[k].errors, secs);
	}
	for (i = 0; i < sx->nshards; i++) {
		const struct sshard *sh = &sx->sh[i];

		misrouted += sh->misrouted;
		routed += sh->routed;
		bad += sh->validation_failures;
		cpu += sh->cpu1 - sh->cpu0;
		busy += (double)(sh->busy1 - sh->busy0) / 1e9;
		idle += (double)(sh->idle1 - sh->idle0) / 1e9;
		for (e = 0; e < MAX_ERR_CODES && sh->errs[e].n; e++) {
			for (k = 0; k < nerr && errs[k].code != sh->errs[e].code; k++)
				;
			if (k == nerr && nerr < SM_ARRAY_SIZE(errs))
				errs[nerr++].code = sh->errs[e].code;
			if (k < nerr)
				errs[k].n += sh->errs[e].n;
		}
	}
	/* Our additions, before cassandra-stress's block so parsers of it still work. */
	out("\n");
	/*
	 * Busy time is what the operations cost the loader; idle polling is
	 * the reactor spinning for the next due time or reply, which a
	 * throttled rate makes large and which is no cost per operation.
	 */
	out("Client: %u %s, %u threads; loader CPU %.2f s for %" PRIu64
	    " ops: busy %.2f s = %.2f us/op (%.0f ops per busy CPU-second), idle polling "
	    "%.2f s\n",
	    sx->nshards, sx->nshards == 1 ? "shard" : "shards", sx->s.rate.threads, cpu, ops,
	    busy, ops ? busy * 1e6 / (double)ops : 0, busy > 0 ? (double)ops / busy : 0, idle);
	if (secs > 0 && busy / (secs * sx->nshards) > 0.9)
		out("WARNING: the client shards were busy %.0f%% of the run: the load generator, "
		    "not the server, may be the limit (add -shards or more loaders)\n",
		    100 * busy / (secs * sx->nshards));
	if (sx->s.mode.api == SM_STRESS_API_CQL) {
		if (sx->scylla)
			out("Routing: %" PRIu64 " of %" PRIu64
			    " requests went to a connection whose server shard does not own the "
			    "key (cross-shard hops on the server)\n",
			    misrouted, routed);
		else
			out("Routing: shard of each request unknown (not a ScyllaDB-extended "
			    "server)\n");
	}
	nnet = net_counters_sum(sx->nshards, &net_desc, &net_sum);
	if (nnet > 0)
		out("Network (%s, this loader): %" PRId64 " TCP retransmissions (%" PRId64
		    " timeouts), %" PRId64 " out-of-order segments, %" PRId64
		    " frames steered to another shard, %" PRId64 " missed by the NIC\n",
		    sm_net_driver()->name,
		    net_counter(net_desc, net_sum, nnet, "tcp_retransmits_total"),
		    net_counter(net_desc, net_sum, nnet, "tcp_timeouts_total"),
		    net_counter(net_desc, net_sum, nnet, "tcp_out_of_order_total"),
		    net_counter(net_desc, net_sum, nnet, "rx_steered_total"),
		    net_counter(net_desc, net_sum, nnet, "nic_rx_missed_total"));
	if (sx->s.rate.kind != SM_STRESS_RATE_NONE) {
		out("Latency from the intended start (response time, corrects coordinated "
		    "omission): mean %.3f ms, p99 %.3f ms, max %.3f ms\n",
		    all_rt.total_count ? sm_hdr_mean(&all_rt) / 1e6 : 0,
		    ms(sm_hdr_value_at_percentile(&all_rt, 99)), ms(sm_hdr_max(&all_rt)));
		out("Latency from the send (service time): mean %.3f ms, p99 %.3f ms, max %.3f "
		    "ms\n",
		    all_st.total_count ? sm_hdr_mean(&all_st) / 1e6 : 0,
		    ms(sm_hdr_value_at_percentile(&all_st, 99)), ms(sm_hdr_max(&all_st)));
		out("(cassandra-stress prints the %s for -rate %s=)\n",
		    sx->s.rate.kind == SM_STRESS_RATE_FIXED ? "first" : "second",
		    sx->s.rate.kind == SM_STRESS_RATE_FIXED ? "fixed" : "throttle");
	}
	for (k = 0; k < nerr; k++)
		out("Errors: %" PRIu64 " x %s\n", errs[k].n,
		    error_name(errs[k].code, name, sizeof(name)));
	if (bad > 0)
		out("Read validation: %" PRIu64
		    " rows did not hold the values their key generates\n",
		    bad);
	if (!sx->s.log.no_summary) {
		op_summary(&sum.total, "total",
			   sx->s.rate.kind == SM_STRESS_RATE_FIXED ? &all_rt : &all_st, ops, rows,
			   errors, secs);
		sum.ops = per;
		sum.n_ops = sx->nops;
		sum.time_s = secs;
		sum.failure = sx->failure;
		sm_cs_print_results(stdout, &sum);
		if (sx->text_log != NULL)
			sm_cs_print_results(sx->text_log, &sum);
	}
	if (sx->s.log.json != NULL) {
		FILE *f = fopen(sx->s.log.json, "w");

		if (f == NULL) {
			fprintf(stderr, "shardmark stress: cannot write %s: %s\n", sx->s.log.json,
				strerror(errno));
		} else {
			fprintf(f,
				"{\n  \"command\": \"stress %s\",\n  \"version\": \"%s\",\n"
				"  \"api\": \"%s\",\n  \"client_shards\": %u,\n  \"threads\": %u,\n"
				"  \"rate\": {\"kind\": \"%s\", \"ops_per_s\": %" PRIu64 "},\n"
				"  \"seconds\": %.6f,\n  \"ops\": %" PRIu64
				",\n  \"rows\": %" PRIu64 ",\n  \"errors\": %" PRIu64
				",\n  \"ops_per_s\": %.3f,\n"
				"  \"client_cpu_s\": %.6f,\n  \"ops_per_client_cpu_s\": %.3f,\n"
				"  \"client_busy_s\": %.6f,\n  \"client_idle_s\": %.6f,\n"
				"  \"client_busy_us_per_op\": %.3f,\n"
				"  \"routing\": {\"scylla\": %s, \"shard_aware\": %s, "
				"\"token_aware\": "
				"%s, \"routed\": %" PRIu64 ", \"misrouted\": %" PRIu64 "},\n"
				"  \"read_validation_failures\": %" PRIu64
				",\n  \"failure\": %s,\n",
				sm_stress_cmd_name(sx->s.cmd), SM_VERSION,
				sx->s.mode.api == SM_STRESS_API_CQL ? "cql" : "alternator",
				sx->nshards, sx->s.rate.threads,
				sx->s.rate.kind == SM_STRESS_RATE_FIXED	     ? "fixed"
				: sx->s.rate.kind == SM_STRESS_RATE_THROTTLE ? "throttle"
									     : "none",
				sx->s.rate.ops_per_s, secs, ops, rows, errors,
				secs > 0 ? (double)ops / secs : 0, cpu,
				cpu > 0 ? (double)ops / cpu : 0, busy, idle,
				ops ? busy * 1e6 / (double)ops : 0, sx->scylla ? "true" : "false",
				sx->use_shard_port ? "true" : "false",
				sx->s.route.token_aware && sx->ring_ok ? "true" : "false", routed,
				misrouted, bad, sx->failure ? "true" : "false");
			fprintf(f, "  \"errors_by_code\": [");
			for (k = 0; k < nerr; k++)
				fprintf(f,
					"%s{\"code\": %d, \"what\": \"%s\", \"count\": %" PRIu64
					"}",
					k ? ", " : "", errs[k].code,
					error_name(errs[k].code, name, sizeof(name)), errs[k].n);
			fprintf(f, "],\n  \"network\": {");
			if (nnet > 0)
				fprintf(f, "\"driver\": \"%s\"", sm_net_driver()->name);
			for (k = 0; k < nnet; k++)
				fprintf(f, ", \"%s\": %" PRIu64, net_desc[k].name, net_sum[k]);
			fprintf(f, "},\n  \"ops_by_type\": {");
			for (k = 0; k < sx->nops; k++) {
				fprintf(f,
					"%s\n    \"%s\": {\"ops\": %" PRIu64 ", \"rows\": %" PRIu64
					", \"errors\": %" PRIu64 ", \"ops_per_s\": %.3f, "
					"\"service_time\": ",
					k ? "," : "", sm_stress_op_name(sx->ops[k]), tot[k].ops,
					tot[k].rows, tot[k].errors, per[k].op_s);
				json_hist(f, &tot[k].st_total);
				fprintf(f, ", \"response_time\": ");
				json_hist(f, &tot[k].rt_total);
				fprintf(f, "}");
			}
			fprintf(f, "\n  },\n  \"service_time\": ");
			json_hist(f, &all_st);
			fprintf(f, ",\n  \"response_time\": ");
			json_hist(f, &all_rt);
			fprintf(f, "\n}\n");
			fclose(f);
		}
	}
	for (k = 0; k < sx->nops; k++) {
		sm_hdr_fini(&tot[k].rt_total);
		sm_hdr_fini(&tot[k].st_total);
	}
	sm_hdr_fini(&all_rt);
	sm_hdr_fini(&all_st);
	sm_free(net_sum);
}

/* ---- entry ---- */

static int
stress_merge(int argc, char **argv);

/*
 * How many of @argv are shardmark configuration options in front of the
 * cassandra-stress command ("--network-stack dpdk --dpdk-args '...' write
 * n=..."): every word that starts with "--", with the value that follows a
 * key that takes one (--config, and every non-bool config key given without
 * "="), so a value may itself start with "--" (--dpdk-args "--no-huge ...").
 * A lone "--" ends them and is counted. Unknown names are counted as bare
 * flags: sm_cli_parse() then refuses them with the nearest key's name.
 * Sets *@help when --help or -h is among them.
 */
static int
leading_options(int argc, char **argv, bool *help)
{
	int i = 0;

	*help = false;
	while (i < argc) {
		const char *a = argv[i];
		bool is_bool = true;

		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			*help = true;
			i++;
			continue;
		}
		if (strncmp(a, "--", 2) != 0)
			break;
		if (a[2] == '\0')
			return i + 1;
		i++;
		if (strchr(a, '=') != NULL)
			continue;
		if (strcmp(a, "--config") == 0 || (sm_config_is_key(a, &is_bool) && !is_bool))
			i++; /* its value, whatever it looks like */
	}
	return i < argc ? i : argc;
}

/*
 * Apply the leading configuration options @argv[0..@n) to @cfg (already
 * holding the defaults) with the parser every subcommand uses. The loader
 * reads no configuration file unless --config names one: the installed file
 * and $SHARDMARK_CONFIG describe the server of this machine, whose
 * network_stack, dpdk_args and addresses must not leak into a load
 * generator, and `shardmark stress` never read them. So when --config is
 * not given, an empty one (/dev/null) stands in for them.
 */
static int
apply_leading_options(struct sm_config *cfg, int n, char **argv, char *err, size_t errlen)
{
	char **args = calloc((size_t)n + 2, sizeof(*args));
	bool config = false;
	int i, k = 0, ret;

	if (args == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		if (strcmp(argv[i], "--config") == 0 || strncmp(argv[i], "--config=", 9) == 0)
			config = true;
	if (!config) {
		args[k++] = (char *)(uintptr_t) "--config";
		args[k++] = (char *)(uintptr_t) "/dev/null";
	}
	for (i = 0; i < n; i++)
		if (strcmp(argv[i], "--") != 0 || i != n - 1)
			args[k++] = argv[i];
	ret = sm_cli_parse(k, args, "stress", "", cfg, NULL, 0, NULL, err, errlen);
	free(args);
	return ret;
}

int
sm_cmd_stress(int argc, char **argv)
{
	static struct stress_ctx ctx;
	struct sm_runtime_opts ro;
	char err[1024];
	unsigned k, i;
	int ret, lead;
	bool help, shards_given = false;

	if (argc >= 1 && strcmp(argv[0], "merge") == 0)
		return stress_merge(argc - 1, argv + 1);
	lead = leading_options(argc, argv, &help);
	if (argc == 0 || help) {
		sm_stress_usage(help ? stdout : stderr);
		return help ? SM_EXIT_OK : SM_EXIT_USAGE;
	}
	if (lead == argc) {
		fprintf(stderr, "shardmark stress: give a command (write, read, mixed, "
				"counter_write, counter_read) after the shardmark options, e.g. "
				"shardmark stress --smp 2 write n=100000\n");
		return SM_EXIT_USAGE;
	}
	memset(&ctx, 0, sizeof(ctx));
	sx = &ctx;
	sm_config_defaults(&ctx.cfg);
	if (lead > 0) {
		ret = apply_leading_options(&ctx.cfg, lead, argv, err, sizeof(err));
		if (ret != 0) {
			fprintf(stderr, "shardmark stress: %s\n", err);
			sm_config_free(&ctx.cfg);
			sx = NULL;
			return SM_EXIT_USAGE;
		}
		argc -= lead;
		argv += lead;
	}
	for (i = 0; i < (unsigned)argc; i++)
		if (strcmp(argv[i], "-shards") == 0)
			shards_given = true;
	ret = sm_stress_settings_parse(argc, argv, &ctx.s, err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "shardmark stress: %s\n", err);
		sm_config_free(&ctx.cfg);
		sx = NULL;
		return SM_EXIT_USAGE;
	}
	if (ctx.s.cmd == SM_STRESS_CMD_HELP) {
		ret = SM_EXIT_OK;
		if (ctx.s.help_topic == NULL)
			sm_stress_usage(stdout);
		else if (sm_stress_usage_topic(stdout, ctx.s.help_topic) < 0) {
			fprintf(stderr,
				"shardmark stress: no help on '%s': give a command (write, read, "
				"mixed, counter_write, counter_read) or an option (-pop, -col, -rate, "
				"-schema, -node, -port, -mode, -log, -errors, -route, -shards)\n",
				ctx.s.help_topic);
			ret = SM_EXIT_USAGE;
		}
		goto out_settings;
	}
	{
		/* Every output file can be written, before anything runs. */
		const struct {
			const char *opt, *path;
		} outs[] = {
			{ "-log hdrfile=", ctx.s.log.hdrfile },
			{ "-log file=", ctx.s.log.file },
			{ "-log json=", ctx.s.log.json },
			{ "-log csv=", ctx.s.log.csv },
		};

		for (i = 0; i < SM_ARRAY_SIZE(outs); i++) {
			if (outs[i].path != NULL &&
			    sm_app_check_output(outs[i].opt, outs[i].path, err, sizeof(err)) < 0) {
				fprintf(stderr, "shardmark stress: %s\n", err);
				ret = SM_EXIT_USAGE;
				goto out_settings;
			}
		}
	}
	if (ctx.s.col.count.kind != SM_STRESS_DIST_FIXED || ctx.s.col.count.min == 0 ||
	    ctx.s.col.count.min > MAX_COLS) {
		fprintf(stderr, "shardmark stress: -col n= must be FIXED(N) with N from 1 to %d\n",
			MAX_COLS);
		ret = SM_EXIT_USAGE;
		goto out_settings;
	}
	if (ctx.s.col.size.max > 4096) {
		fprintf(stderr, "shardmark stress: -col size= above 4096 bytes is not supported\n");
		ret = SM_EXIT_USAGE;
		goto out_settings;
	}
	ctx.ncols = (unsigned)ctx.s.col.count.min;
	for (k = 0; k < SM_STRESS_NR_OPS; k++) {
		if (ctx.s.ratio[k] > 0) {
			ctx.cum[ctx.nops] = (ctx.nops ? ctx.cum[ctx.nops - 1] : 0) + ctx.s.ratio[k];
			ctx.ops[ctx.nops++] = (enum sm_stress_op)k;
		}
	}
	memcpy(ctx.ops_by_name, ctx.ops, sizeof(ctx.ops));
	for (k = 1; k < ctx.nops; k++)
		for (i = k; i > 0 && strcmp(sm_stress_op_name(ctx.ops_by_name[i - 1]),
					    sm_stress_op_name(ctx.ops_by_name[i])) > 0;
		     i--) {
			enum sm_stress_op t = ctx.ops_by_name[i];

			ctx.ops_by_name[i] = ctx.ops_by_name[i - 1];
			ctx.ops_by_name[i - 1] = t;
		}
	if (ctx.nops == 0) {
		fprintf(stderr,
			"shardmark stress: the op mix is empty: give a ratio(...) weight\n");
		ret = SM_EXIT_USAGE;
		goto out_settings;
	}
	for (i = 0; i < ctx.s.nodes.n; i++) {
		char addr[64], why[256], *copy;

		/* Names resolve here, once: the client connects to addresses. */
		if (sm_net_addr_resolve(ctx.s.nodes.hosts[i], addr, sizeof(addr), why,
					sizeof(why)) < 0) {
			fprintf(stderr,
				"shardmark stress: -node %s does not resolve (%s): give a name that "
				"resolves or an IPv4 or IPv6 address\n",
				ctx.s.nodes.hosts[i], why);
			ret = SM_EXIT_USAGE;
			goto out_settings;
		}
		if (strcmp(addr, ctx.s.nodes.hosts[i]) == 0)
			continue;
		copy = sm_strdup(addr);
		if (copy == NULL) {
			ret = SM_EXIT_FAIL;
			goto out_settings;
		}
		sm_free(ctx.s.nodes.hosts[i]);
		ctx.s.nodes.hosts[i] = copy;
	}
	build_statements();
	/*
	 * -shards N is the cassandra-stress-style spelling of --smp N: when
	 * both are given, -shards wins (it is the later, more specific one);
	 * without -shards, --smp and --cpuset decide, and with neither the
	 * loader runs one shard per allowed CPU as before.
	 */
	if (shards_given)
		ctx.cfg.smp = ctx.s.shards;
	ret = sm_app_prepare(&ctx.cfg);
	if (ret != 0)
		goto out_settings;
	ctx.nshards = sm_app_shard_count(&ctx.cfg);
	ctx.sh = aligned_alloc(SM_CACHE_LINE, ctx.nshards * sizeof(*ctx.sh));
	if (ctx.sh == NULL) {
		ret = SM_EXIT_FAIL;
		goto out_settings;
	}
	memset(ctx.sh, 0, ctx.nshards * sizeof(*ctx.sh));
	for (k = 0; k < SM_STRESS_NR_OPS; k++)
		if (stats_init(&ctx.merged[k]) < 0) {
			ret = SM_EXIT_FAIL;
			goto out_shards;
		}
	sm_hdr_init(&ctx.tmp_rt, HDR_LOWEST, HDR_HIGHEST, HDR_SIGFIGS);
	sm_hdr_init(&ctx.tmp_st, HDR_LOWEST, HDR_HIGHEST, HDR_SIGFIGS);
	sm_ring_init(&ctx.ring);
	if (ctx.s.log.hdrfile != NULL && (ctx.hdr_log = fopen(ctx.s.log.hdrfile, "w")) == NULL) {
		fprintf(stderr, "shardmark stress: cannot write -log hdrfile=%s: %s\n",
			ctx.s.log.hdrfile, strerror(errno));
		ret = SM_EXIT_USAGE;
		goto out_shards;
	}
	if (ctx.s.log.csv != NULL && (ctx.csv_log = fopen(ctx.s.log.csv, "w")) == NULL) {
		fprintf(stderr, "shardmark stress: cannot write -log csv=%s: %s\n", ctx.s.log.csv,
			strerror(errno));
		ret = SM_EXIT_USAGE;
		goto out_shards;
	}
	if (ctx.csv_log != NULL)
		fputs(CSV_HEADER, ctx.csv_log);
	if (ctx.s.log.file != NULL && (ctx.text_log = fopen(ctx.s.log.file, "w")) == NULL) {
		fprintf(stderr, "shardmark stress: cannot write -log file=%s: %s\n", ctx.s.log.file,
			strerror(errno));
		ret = SM_EXIT_USAGE;
		goto out_shards;
	}
	if (!ctx.s.log.no_settings) {
		sm_stress_settings_print(stdout, &ctx.s);
		if (ctx.text_log != NULL)
			sm_stress_settings_print(ctx.text_log, &ctx.s);
	}
	fflush(stdout);
	sm_app_runtime_opts(&ctx.cfg, &ro);
	ro.shard_init = stress_shard_init;
	ro.shard_fini = stress_shard_fini;
	ro.arg = &ctx;
	ctx.result = SM_EXIT_FAIL;
	ret = sm_runtime_run(&ro, err, sizeof(err));
	if (ret < 0) {
		if (strncmp(err, "shard ", 6) != 0)
			fprintf(stderr, "shardmark stress: %s\n", err);
		ret = SM_EXIT_FAIL;
		goto out_shards;
	}
	if (ctx.phase == PH_DONE && ctx.measure_start_ns != 0) {
		final_report();
		ret = ctx.failure ? SM_EXIT_FAIL : SM_EXIT_OK;
	} else {
		ret = ctx.result == SM_EXIT_OK ? SM_EXIT_FAIL : ctx.result;
	}
	for (i = 0; i < ctx.nshards; i++)
		if (ctx.sh[i].failed_run && ctx.sh[i].fail_text[0]) {
			fprintf(stderr, "shardmark stress: %s\n", ctx.sh[i].fail_text);
			ret = SM_EXIT_FAIL;
			break;
		}
out_shards:
	if (ctx.hdr_log != NULL)
		fclose(ctx.hdr_log);
	if (ctx.text_log != NULL)
		fclose(ctx.text_log);
	if (ctx.csv_log != NULL && fclose(ctx.csv_log) != 0) {
		fprintf(stderr, "shardmark stress: writing -log csv=%s: %s\n", ctx.s.log.csv,
			strerror(errno));
		ret = SM_EXIT_FAIL;
	}
	for (k = 0; k < SM_STRESS_NR_OPS; k++)
		stats_fini(&ctx.merged[k]);
	sm_hdr_fini(&ctx.tmp_rt);
	sm_hdr_fini(&ctx.tmp_st);
	for (i = 0; ctx.sh != NULL && i < ctx.nshards; i++) {
		for (k = 0; k < SM_STRESS_NR_OPS; k++)
			stats_fini(&ctx.sh[i].st[k]);
		free(ctx.sh[i].conns);
	}
	free(ctx.sh);
	sm_ring_free(&ctx.ring);
out_settings:
	sm_config_free(&ctx.cfg);
	sm_stress_settings_free(&ctx.s);
	sx = NULL;
	return ret;
}

/* ---- shardmark stress merge: several loaders' HDR logs, one result ---- */

struct merge_tag {
	char tag[64];
	struct sm_hdr h;
	double first, last;
};

struct merge_ctx {
	struct merge_tag tags[32];
	unsigned n;
};

static int
merge_cb(const char *tag, double start_s, double length_s, const struct sm_hdr *h, void *arg)
{
	struct merge_ctx *m = arg;
	unsigned i;

	if (tag == NULL)
		tag = "(untagged)";
	for (i = 0; i < m->n && strcmp(m->tags[i].tag, tag) != 0; i++)
		;
	if (i == m->n) {
		if (m->n == SM_ARRAY_SIZE(m->tags))
			return -ENOSPC;
		snprintf(m->tags[i].tag, sizeof(m->tags[i].tag), "%s", tag);
		if (sm_hdr_init(&m->tags[i].h, HDR_LOWEST, HDR_HIGHEST, HDR_SIGFIGS) < 0)
			return -ENOMEM;
		m->tags[i].first = start_s;
		m->tags[i].last = start_s + length_s;
		m->n++;
	}
	sm_hdr_add(&m->tags[i].h, h);
	m->tags[i].first = fmin(m->tags[i].first, start_s);
	m->tags[i].last = fmax(m->tags[i].last, start_s + length_s);
	return 0;
}

static int
stress_merge(int argc, char **argv)
{
	struct merge_ctx m;
	char err[256];
	unsigned i;
	int a, ret = SM_EXIT_OK;

	if (argc == 0 || strcmp(argv[0], "--help") == 0) {
		fprintf(argc == 0 ? stderr : stdout,
			"usage: shardmark stress merge FILE.hdr...\n\n"
			"Merge the HDR interval logs (-log hdrfile=) of several loaders that ran "
			"at\n"
			"the same time (for example with disjoint -pop ranges against one "
			"cluster)\n"
			"and print each tag's combined count, rate and latency percentiles. The\n"
			"histograms are added bucket by bucket: percentiles are never averaged.\n");
		return argc == 0 ? SM_EXIT_USAGE : SM_EXIT_OK;
	}
	memset(&m, 0, sizeof(m));
	for (a = 0; a < argc; a++) {
		FILE *f = fopen(argv[a], "r");

		if (f == NULL) {
			fprintf(stderr, "shardmark stress merge: cannot read %s: %s\n", argv[a],
				strerror(errno));
			ret = SM_EXIT_USAGE;
			goto out;
		}
		if (sm_hdr_log_read(f, merge_cb, &m, err, sizeof(err)) < 0) {
			fprintf(stderr, "shardmark stress merge: %s: %s\n", argv[a], err);
			fclose(f);
			ret = SM_EXIT_FAIL;
			goto out;
		}
		fclose(f);
	}
	printf("%-20s %12s %10s %9s %9s %9s %9s %9s %9s %9s\n", "tag", "count", "op/s", "mean",
	       "med", ".95", ".99", ".999", "max", "seconds");
	for (i = 0; i < m.n; i++) {
		const struct sm_hdr *h = &m.tags[i].h;
		double secs = m.tags[i].last - m.tags[i].first;

		printf("%-20s %12" PRId64 " %10.0f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.1f\n",
		       m.tags[i].tag, h->total_count, secs > 0 ? (double)h->total_count / secs : 0,
		       h->total_count ? sm_hdr_mean(h) / 1e6 : 0,
		       ms(sm_hdr_value_at_percentile(h, 50)), ms(sm_hdr_value_at_percentile(h, 95)),
		       ms(sm_hdr_value_at_percentile(h, 99)),
		       ms(sm_hdr_value_at_percentile(h, 99.9)), ms(sm_hdr_max(h)), secs);
	}
	printf("(latencies in ms; op/s is the merged count over the span from the first\n"
	       "interval's start to the last one's end)\n");
out:
	for (i = 0; i < m.n; i++)
		sm_hdr_fini(&m.tags[i].h);
	return ret;
}
