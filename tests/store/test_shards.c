/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The store on a real runtime with two shards: schema changes reaching every
 * shard, partition ownership and hops, range scans paged across shards
 * without loss or duplicates, compare-and-set linearizability under
 * concurrent clients, and the allocation-free overwrite and read paths.
 *
 * Checks inside shard callbacks never call cmocka: they count failures
 * (CHECK) and print the first few; each test asserts after the runtime
 * returned.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sm_core.h"
#include "sm_store.h"

#define NSHARDS 2
#define WINDOW 32
#define WATCHDOG_MS 240000

/* ---- failures recorded on shards, asserted after the run ---- */

static unsigned fails;

static void __attribute__((format(printf, 2, 3))) check_failed(int line, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (__atomic_fetch_add(&fails, 1, __ATOMIC_RELAXED) >= 20)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "test_shards.c:%d: shard %u: check failed: %s\n", line, sm_shard_id(), msg);
}

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond))                                                                       \
			check_failed(__LINE__, "(" #cond ") " __VA_ARGS__);                        \
	} while (0)

/* ---- values ---- */

static uint32_t
be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void
put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* The int held by a 4-byte cell, or -1 when absent or malformed. */
static int64_t
cell_int(const struct sm_cell_view *c)
{
	if (!c->present || c->value.len != 4)
		return -1;
	return (int64_t)be32(c->value.p);
}

static int64_t
key_int(const struct sm_key *k, unsigned i)
{
	if (k->n <= i || k->part[i].len != 4)
		return -1;
	return (int64_t)be32(k->part[i].p);
}

/* A one-component int partition key over @buf (4 bytes, kept by the caller). */
static void
int_key(struct sm_key *k, uint8_t *buf, uint32_t v)
{
	put32(buf, v);
	k->n = 1;
	k->part[0].p = buf;
	k->part[0].len = 4;
}

static unsigned
owner_of_int(uint32_t v)
{
	struct sm_key k;
	uint8_t buf[4];

	int_key(&k, buf, v);
	return sm_key_shard(&k);
}

static int64_t
token_of_int(uint32_t v)
{
	struct sm_key k;
	uint8_t buf[4];

	int_key(&k, buf, v);
	return sm_key_token(&k);
}

/* ---- the scenario: steps on one shard, jobs on any ---- */

static unsigned scenario_shard;
static void (*scenario_step)(int step);
static int step;
static struct sm_task step_task;
static struct sm_timer watchdog;
static bool finished;
static unsigned jobs_pending;

static void
step_run(void *arg)
{
	(void)arg;
	scenario_step(step);
}

/* Go to the next step (on the scenario shard). */
static void
advance(void)
{
	step++;
	sm_task_schedule(&step_task);
}

static void
finish(void)
{
	finished = true;
	sm_runtime_stop();
}

static void
watchdog_fired(void *arg)
{
	(void)arg;
	CHECK(false, "scenario stuck at step %d", step);
	finish();
}

static void
job_finished(void *arg)
{
	(void)arg;
	if (--jobs_pending == 0)
		advance();
}

/* A job that ran on some shard is complete: tell the scenario shard. */
static void
job_done(void)
{
	CHECK(sm_submit_to(scenario_shard, job_finished, NULL, NULL) == 0);
}

/* Run fn(arg) on every shard as a job; each calls job_done() when it ends. */
static void
jobs_on_all(void (*fn)(void *arg), void *arg)
{
	unsigned i;

	jobs_pending = sm_shard_count();
	for (i = 0; i < sm_shard_count(); i++)
		CHECK(sm_submit_to(i, fn, arg, NULL) == 0);
}

static int
shard_init(unsigned shard, void *arg)
{
	int ret;

	(void)arg;
	ret = sm_store_shard_init();
	if (ret < 0)
		return ret;
	if (shard == scenario_shard) {
		sm_task_init(&step_task, step_run, NULL);
		sm_task_schedule(&step_task);
		sm_timer_init(&watchdog, watchdog_fired, NULL);
		sm_timer_arm(&watchdog, WATCHDOG_MS);
	}
	return 0;
}

static void
shard_fini(unsigned shard, void *arg)
{
	(void)arg;
	if (shard == scenario_shard)
		sm_timer_cancel(&watchdog);
	sm_store_shard_fini();
}

static void
run_scenario(void (*fn)(int step), unsigned on_shard)
{
	struct sm_runtime_opts o = {
		.smp = NSHARDS,
		.overprovisioned = true,
		.idle_poll_us = 50,
		.drain_timeout_ms = 10000,
		.shard_init = shard_init,
		.shard_fini = shard_fini,
	};
	char err[256];
	int ret;

	fails = 0;
	step = 0;
	finished = false;
	jobs_pending = 0;
	scenario_step = fn;
	scenario_shard = on_shard;
	ret = sm_runtime_run(&o, err, sizeof(err));
	if (ret < 0)
		fail_msg("runtime: %s", err);
	assert_true(finished);
	assert_int_equal(fails, 0);
}

/* ---- schema ---- */

/* sm_option holds char *: writable strings keep -Wwrite-strings quiet. */
static char o_class[] = "class", o_simple[] = "SimpleStrategy";
static char o_rf[] = "replication_factor", o_one[] = "1";
static const struct sm_option repl[] = {
	{ o_class, o_simple },
	{ o_rf, o_one },
};

/* t: (pk int, ck int, v int), c: (pk int, v int), m: (pk int, ck int, n int, v blob) */
static const struct sm_column_def t_cols[] = {
	{ "pk", "int", SM_COL_PARTITION, false },
	{ "ck", "int", SM_COL_CLUSTERING, false },
	{ "v", "int", SM_COL_REGULAR, false },
};
static const struct sm_column_def c_cols[] = {
	{ "pk", "int", SM_COL_PARTITION, false },
	{ "v", "int", SM_COL_REGULAR, false },
};
static const struct sm_column_def m_cols[] = {
	{ "pk", "int", SM_COL_PARTITION, false },
	{ "ck", "int", SM_COL_CLUSTERING, false },
	{ "v", "blob", SM_COL_REGULAR, false },
	{ "n", "int", SM_COL_REGULAR, false },
};

static struct sm_ddl_req ddl;

static void
ddl_done(struct sm_ddl_req *r)
{
	CHECK(sm_shard_id() == r->origin, "DDL done on shard %u, submitted on %u", sm_shard_id(),
	      r->origin);
	advance();
}

static void
ddl_submit(enum sm_ddl_kind kind, bool if_exists, const char *ks, const char *table)
{
	memset(&ddl, 0, sizeof(ddl));
	ddl.kind = kind;
	ddl.if_exists = if_exists;
	ddl.done = ddl_done;
	switch (kind) {
	case SM_DDL_CREATE_KEYSPACE:
		ddl.ks.name = ks;
		ddl.ks.replication = repl;
		ddl.ks.nreplication = SM_ARRAY_SIZE(repl);
		ddl.ks.durable_writes = true;
		break;
	case SM_DDL_CREATE_TABLE:
		ddl.table.ks = ks;
		ddl.table.name = table;
		if (strcmp(table, "c") == 0) {
			ddl.table.cols = c_cols;
			ddl.table.ncols = SM_ARRAY_SIZE(c_cols);
		} else if (strcmp(table, "m") == 0) {
			ddl.table.cols = m_cols;
			ddl.table.ncols = SM_ARRAY_SIZE(m_cols);
		} else {
			ddl.table.cols = t_cols;
			ddl.table.ncols = SM_ARRAY_SIZE(t_cols);
		}
		break;
	default:
		ddl.ks_name = ks;
		ddl.table_name = table;
		break;
	}
	sm_store_ddl(&ddl);
}

static const struct sm_table *
table_here(const char *name)
{
	return sm_catalog_table(sm_store_catalog(), "ks", name);
}

static uint16_t
col_id(const struct sm_table *t, const char *name)
{
	const struct sm_column *c = sm_table_column(t, name);

	return c != NULL ? c->id : 0;
}

/* ---- per-shard probes of the catalog ---- */

struct probe {
	struct sm_uuid version;
	bool has_ks;
	bool has_table;
	const struct sm_table *table;
};

static struct probe probes[NSHARDS];
static const char *probe_table;
static unsigned probes_pending;

static void
probe_fn(void *arg)
{
	struct probe *p = arg;
	const struct sm_catalog *c = sm_store_catalog();

	p->version = c->version;
	p->has_ks = sm_catalog_keyspace(c, "ks") != NULL;
	p->table = sm_catalog_table(c, "ks", probe_table);
	p->has_table = p->table != NULL;
}

static void
probe_done(void *arg)
{
	(void)arg;
	if (--probes_pending == 0)
		advance();
}

static void
probe_all(const char *table)
{
	unsigned i;

	probe_table = table;
	probes_pending = NSHARDS;
	memset(probes, 0, sizeof(probes));
	for (i = 0; i < NSHARDS; i++)
		CHECK(sm_submit_to(i, probe_fn, &probes[i], probe_done) == 0);
}

static bool
uuid_eq(const struct sm_uuid *a, const struct sm_uuid *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

/* Every shard on @v, with keyspace ks and table @probe_table as expected. */
static void
check_probes(const struct sm_uuid *v, bool ks, bool table)
{
	unsigned i;

	for (i = 0; i < NSHARDS; i++) {
		CHECK(uuid_eq(&probes[i].version, v), "shard %u has another schema version", i);
		CHECK(probes[i].has_ks == ks, "shard %u keyspace", i);
		CHECK(probes[i].has_table == table, "shard %u table %s", i, probe_table);
	}
	if (table)
		CHECK(probes[0].table == probes[1].table, "shards share the table definition");
}

/* ---- a pipeline of store requests on one shard ---- */

struct slot;

struct pump {
	unsigned total, next, completed, inflight;
	unsigned nfree;
	unsigned freelist[WINDOW];
	bool in_submit;
	const struct sm_table *table;
	/* fill slot->req for request number i */
	void (*prep)(struct pump *p, struct slot *s, unsigned i);
	/* check a completed request */
	void (*check)(struct pump *p, struct slot *s);
	uint64_t remote; /* requests whose owner was another shard */
	uint64_t hops_stat_start;
	struct slot *slots;
};

struct slot {
	struct sm_store_req req;
	struct pump *p;
	unsigned i;
	uint32_t pk;
	unsigned owner;
	uint8_t pkb[4], ckb[4], vb[4];
	struct sm_cell_op ops[2];
	uint16_t cols[4];
	/* what a single-partition select saw */
	unsigned nrows;
	int64_t rpk, rck, rv;
	unsigned rshard;
};

static struct pump pumps[NSHARDS];
static struct slot pump_slots[NSHARDS][WINDOW];

static void
pump_run(struct pump *p);

static void
pump_done(struct sm_store_req *r)
{
	struct slot *s = r->ctx;
	struct pump *p = s->p;

	CHECK(sm_shard_id() == r->origin, "done ran on shard %u, not the submitter %u",
	      sm_shard_id(), r->origin);
	p->check(p, s);
	p->freelist[p->nfree++] = (unsigned)(s - p->slots);
	p->inflight--;
	if (++p->completed == p->total) {
		CHECK(sm_shard_stats(sm_shard_id())->hops - p->hops_stat_start == p->remote,
		      "hops counter %" PRIu64 " for %" PRIu64 " remote requests",
		      sm_shard_stats(sm_shard_id())->hops - p->hops_stat_start, p->remote);
		job_done();
		return;
	}
	/* A local request completes inside submit: the loop there goes on. */
	if (!p->in_submit)
		pump_run(p);
}

static void
pump_run(struct pump *p)
{
	while (p->inflight < WINDOW && p->next < p->total) {
		struct slot *s = &p->slots[p->freelist[--p->nfree]];

		memset(s, 0, sizeof(*s));
		s->p = p;
		s->i = p->next++;
		p->prep(p, s, s->i);
		s->req.done = pump_done;
		s->req.ctx = s;
		p->inflight++;
		p->in_submit = true;
		sm_store_submit(&s->req);
		p->in_submit = false;
	}
}

/* Start @total requests on the calling shard. */
static void
pump_start(const struct sm_table *t, unsigned total,
	   void (*prep)(struct pump *p, struct slot *s, unsigned i),
	   void (*check)(struct pump *p, struct slot *s))
{
	unsigned me = sm_shard_id(), i;
	struct pump *p = &pumps[me];

	memset(p, 0, sizeof(*p));
	p->slots = pump_slots[me];
	for (i = 0; i < WINDOW; i++)
		p->freelist[p->nfree++] = i;
	p->table = t;
	p->total = total;
	p->prep = prep;
	p->check = check;
	p->hops_stat_start = sm_shard_stats(me)->hops;
	if (total == 0) {
		job_done();
		return;
	}
	pump_run(p);
}

/* A write of (pk, ck) v=val into t, noting whether it hops. */
static void
prep_write(struct pump *p, struct slot *s, uint32_t pk, uint32_t ck, uint32_t val)
{
	struct sm_mutation *m = &s->req.mut;

	s->pk = pk;
	s->owner = owner_of_int(pk);
	if (s->owner != sm_shard_id())
		p->remote++;
	s->req.kind = SM_REQ_MUTATE;
	m->table = p->table;
	int_key(&m->pk, s->pkb, pk);
	int_key(&m->ck, s->ckb, ck);
	put32(s->vb, val);
	s->ops[0].col = col_id(p->table, "v");
	s->ops[0].kind = SM_CELL_SET;
	s->ops[0].value.p = s->vb;
	s->ops[0].value.len = 4;
	m->ops = s->ops;
	m->nops = 1;
	m->ts = SM_TS_NOW;
	m->ttl = SM_TTL_DEFAULT;
	m->flags = SM_MUT_ROW_MARKER;
}

static void
check_write(struct pump *p, struct slot *s)
{
	(void)p;
	CHECK(s->req.result == 0, "write pk %u: %d %s", s->pk, s->req.result, s->req.err);
	CHECK(s->req.hops == (s->owner != sm_shard_id() ? 1u : 0u),
	      "write pk %u from shard %u (owner %u): %u hops", s->pk, sm_shard_id(), s->owner,
	      s->req.hops);
}

static int
slot_row(void *ctx, const struct sm_row_view *r)
{
	struct slot *s = ctx;

	s->nrows++;
	s->rshard = sm_shard_id();
	s->rpk = cell_int(&r->cells[0]);
	s->rck = r->ncells > 1 ? cell_int(&r->cells[1]) : -1;
	s->rv = r->ncells > 2 ? cell_int(&r->cells[2]) : -1;
	if (key_int(r->pk, 0) != s->rpk || r->token != sm_key_token(r->pk))
		check_failed(__LINE__, "row view of pk %u: key or token inconsistent", s->pk);
	return 0;
}

/* A single-partition select of every column of t (pk, ck, v). */
static void
prep_read(struct pump *p, struct slot *s, uint32_t pk)
{
	struct sm_select *sel = &s->req.sel;

	s->pk = pk;
	s->owner = owner_of_int(pk);
	if (s->owner != sm_shard_id())
		p->remote++;
	s->req.kind = SM_REQ_SELECT;
	sel->table = p->table;
	int_key(&sel->pk, s->pkb, pk);
	s->cols[0] = col_id(p->table, "pk");
	s->cols[1] = col_id(p->table, "ck");
	s->cols[2] = col_id(p->table, "v");
	sel->cols = s->cols;
	sel->ncols = 3;
	sel->sink.row = slot_row;
	sel->sink.ctx = s;
}

/* ---- range scans, paged, collected in arrays ---- */

struct scanned {
	int64_t token;
	int32_t pk;
	int32_t ck;
	uint8_t shard;
};

#define MAX_SCANNED 400000
static struct scanned scanned[MAX_SCANNED];
static unsigned nscanned;

struct scan_job {
	struct sm_store_req req;
	const struct sm_table *table;
	int64_t token_start, token_end;
	uint32_t limit, per_partition_limit;
	bool alternate; /* submit each page on the next shard */
	unsigned pages;
	unsigned page_rows;   /* rows the sink saw in the current page */
	unsigned short_pages; /* pages with more set but fewer rows than the limit */
	unsigned errors;
	int last_err;
	char last_msg[160];
	uint16_t cols[3];
	unsigned submit_shard[NSHARDS];
	unsigned hops;
};

static struct scan_job sj;

static int
scan_row(void *ctx, const struct sm_row_view *r)
{
	struct scan_job *j = ctx;
	struct scanned *e;

	j->page_rows++;
	if (nscanned >= MAX_SCANNED) {
		check_failed(__LINE__, "more than %u rows scanned", MAX_SCANNED);
		return -E2BIG;
	}
	e = &scanned[nscanned++];
	e->token = r->token;
	e->pk = (int32_t)key_int(r->pk, 0);
	e->ck = (int32_t)(r->ck->n ? key_int(r->ck, 0) : -1);
	e->shard = (uint8_t)sm_shard_id();
	if (r->token != sm_key_token(r->pk))
		check_failed(__LINE__, "row of pk %d: token %" PRId64 " is not the key's", e->pk,
			     r->token);
	if (cell_int(&r->cells[0]) != e->pk || cell_int(&r->cells[1]) != e->ck)
		check_failed(__LINE__, "row of pk %d: selected key columns differ", e->pk);
	return 0;
}

static void
scan_page(void *arg);

static void
scan_done(struct sm_store_req *r)
{
	struct scan_job *j = r->ctx;
	unsigned next;

	j->pages++;
	j->hops += r->hops;
	if (r->result < 0) {
		j->errors++;
		j->last_err = r->result;
		snprintf(j->last_msg, sizeof(j->last_msg), "%s", r->err);
		job_done();
		return;
	}
	CHECK(r->sel.rows == j->page_rows, "page %u: rows %u, sink saw %u", j->pages, r->sel.rows,
	      j->page_rows);
	CHECK(j->limit == 0 || r->sel.rows <= j->limit, "page of %u rows", r->sel.rows);
	if (r->sel.more && j->limit != 0 && r->sel.rows != j->limit)
		j->short_pages++;
	if (!r->sel.more) {
		job_done();
		return;
	}
	next = j->alternate ? (sm_shard_id() + 1) % sm_shard_count() : sm_shard_id();
	CHECK(sm_submit_to(next, scan_page, j, NULL) == 0);
}

/* Issue the next page on the calling shard. */
static void
scan_page(void *arg)
{
	struct scan_job *j = arg;
	struct sm_select *s = &j->req.sel;
	bool resume = j->pages > 0;

	j->submit_shard[sm_shard_id()]++;
	j->req.kind = SM_REQ_SELECT;
	j->req.done = scan_done;
	j->req.ctx = j;
	s->range = true;
	s->table = j->table;
	s->token_start = j->token_start;
	s->token_end = j->token_end;
	s->limit = j->limit;
	s->per_partition_limit = j->per_partition_limit;
	s->cols = j->cols;
	s->ncols = 2;
	s->sink.row = scan_row;
	s->sink.ctx = j;
	s->resume = resume; /* the paging state of the previous page is in s->paging */
	j->page_rows = 0;
	sm_store_submit(&j->req);
}

/* Scan [token_start, token_end] of t into scanned[] as a job. */
static void
scan_start(const struct sm_table *t, int64_t token_start, int64_t token_end, uint32_t limit,
	   uint32_t ppl, bool alternate)
{
	memset(&sj, 0, sizeof(sj));
	nscanned = 0;
	sj.table = t;
	sj.token_start = token_start;
	sj.token_end = token_end;
	sj.limit = limit;
	sj.per_partition_limit = ppl;
	sj.alternate = alternate;
	sj.cols[0] = col_id(t, "pk");
	sj.cols[1] = col_id(t, "ck");
	jobs_pending = 1;
	scan_page(&sj);
}

static void
check_scan_ok(const char *what)
{
	CHECK(sj.errors == 0, "%s: %u failed pages, last %d %s", what, sj.errors, sj.last_err,
	      sj.last_msg);
	CHECK(sj.short_pages == 0, "%s: %u pages shorter than the limit with more rows", what,
	      sj.short_pages);
}

/* ======== a. schema changes from shard 1 ======== */

static struct sm_uuid v_prev;
static const struct sm_table *dropped; /* a reference kept across DROP TABLE */
static struct slot a_slot[4];
static unsigned a_pending;

static void
a_req_done(struct sm_store_req *r)
{
	(void)r;
	if (--a_pending == 0)
		advance();
}

/* Writes and reads on the dropped table, one per owning shard, from shard 1. */
static void
a_requests_on_dropped(void)
{
	uint32_t pk0 = 0, pk1 = 0;
	unsigned i;

	while (owner_of_int(pk0) != 0)
		pk0++;
	while (owner_of_int(pk1) != 1)
		pk1++;
	a_pending = 4;
	for (i = 0; i < 4; i++) {
		struct slot *s = &a_slot[i];
		struct pump p = { .table = dropped };

		memset(s, 0, sizeof(*s));
		if (i < 2)
			prep_write(&p, s, i ? pk1 : pk0, 0, 1);
		else
			prep_read(&p, s, i == 3 ? pk1 : pk0);
		s->req.done = a_req_done;
		s->req.ctx = s;
		sm_store_submit(&s->req);
	}
}

static void
a_check_dropped_requests(void)
{
	unsigned i;

	for (i = 0; i < 4; i++) {
		struct slot *s = &a_slot[i];

		CHECK(s->req.result == -ENOENT, "request %u on a dropped table: %d", i,
		      s->req.result);
		CHECK(strstr(s->req.err, "unconfigured table") != NULL,
		      "request %u on a dropped table: message '%s'", i, s->req.err);
		CHECK(s->nrows == 0);
	}
}

static void
prep_a_write(struct pump *p, struct slot *s, unsigned i)
{
	prep_write(p, s, i, 0, i);
}

static void
a_write_job(void *arg)
{
	(void)arg;
	pump_start(table_here("t"), 200, prep_a_write, check_write);
}

static void
expect_ddl(int result, const char *msg_part)
{
	CHECK(ddl.result == result, "DDL %d: result %d (%s), expected %d", (int)ddl.kind,
	      ddl.result, ddl.err, result);
	if (result < 0)
		CHECK(msg_part != NULL && strstr(ddl.err, msg_part) != NULL,
		      "DDL error message '%s' lacks '%s'", ddl.err, msg_part ? msg_part : "");
	if (result < 0)
		print_message("  DDL error as expected: %s\n", ddl.err);
}

/* A changing DDL moved the version; a no-op or an error left it. */
static void
expect_version(bool changed)
{
	const struct sm_uuid *now = &sm_store_catalog()->version;

	CHECK(uuid_eq(&ddl.version, now), "done() reports another version than installed");
	if (changed)
		CHECK(!uuid_eq(&ddl.version, &v_prev), "DDL %d did not change the version",
		      (int)ddl.kind);
	else
		CHECK(uuid_eq(&ddl.version, &v_prev), "DDL %d changed the version", (int)ddl.kind);
	v_prev = *now;
}

static void
scenario_ddl(int st)
{
	switch (st) {
	case 0:
		CHECK(sm_shard_id() == 1);
		v_prev = sm_store_catalog()->version;
		ddl_submit(SM_DDL_CREATE_KEYSPACE, false, "ks", NULL);
		return;
	case 1:
		expect_ddl(0, NULL);
		expect_version(true);
		probe_all("t");
		return;
	case 2:
		check_probes(&v_prev, true, false);
		ddl_submit(SM_DDL_CREATE_TABLE, false, "ks", "t");
		return;
	case 3:
		expect_ddl(0, NULL);
		expect_version(true);
		probe_all("t");
		return;
	case 4:
		check_probes(&v_prev, true, true);
		ddl_submit(SM_DDL_CREATE_TABLE, true, "ks", "t");
		return;
	case 5:
		expect_ddl(1, NULL);
		expect_version(false);
		ddl_submit(SM_DDL_CREATE_KEYSPACE, true, "ks", NULL);
		return;
	case 6:
		expect_ddl(1, NULL);
		expect_version(false);
		ddl_submit(SM_DDL_CREATE_TABLE, false, "ks", "t");
		return;
	case 7:
		expect_ddl(-EEXIST, "already exists");
		expect_version(false);
		ddl_submit(SM_DDL_CREATE_KEYSPACE, false, "ks", NULL);
		return;
	case 8:
		expect_ddl(-EEXIST, "already exists");
		expect_version(false);
		ddl_submit(SM_DDL_DROP_TABLE, false, "ks", "nope");
		return;
	case 9:
		expect_ddl(-ENOENT, "nope");
		expect_version(false);
		ddl_submit(SM_DDL_DROP_TABLE, true, "ks", "nope");
		return;
	case 10:
		expect_ddl(1, NULL);
		expect_version(false);
		ddl_submit(SM_DDL_CREATE_TABLE, false, "nok", "t");
		return;
	case 11:
		expect_ddl(-ENOENT, "does not exist");
		expect_version(false);
		ddl_submit(SM_DDL_TRUNCATE, false, "ks", "nope");
		return;
	case 12:
		expect_ddl(-ENOENT, "nope");
		expect_version(false);
		/* 200 rows spread over both shards, then TRUNCATE. */
		jobs_pending = 1;
		a_write_job(NULL);
		return;
	case 13:
		scan_start(table_here("t"), INT64_MIN, INT64_MAX, 0, 0, false);
		return;
	case 14:
		check_scan_ok("before truncate");
		CHECK(nscanned == 200, "%u rows before TRUNCATE", nscanned);
		ddl_submit(SM_DDL_TRUNCATE, false, "ks", "t");
		return;
	case 15:
		expect_ddl(0, NULL);
		/* TRUNCATE changes data, not the schema (as in Cassandra). */
		expect_version(false);
		scan_start(table_here("t"), INT64_MIN, INT64_MAX, 0, 0, true);
		return;
	case 16:
		check_scan_ok("after truncate");
		CHECK(nscanned == 0, "%u rows after TRUNCATE", nscanned);
		/* Keep the definition alive to send requests after the drop. */
		dropped = table_here("t");
		sm_table_get(dropped);
		ddl_submit(SM_DDL_DROP_TABLE, false, "ks", "t");
		return;
	case 17:
		expect_ddl(0, NULL);
		expect_version(true);
		probe_all("t");
		return;
	case 18:
		check_probes(&v_prev, true, false);
		a_requests_on_dropped();
		return;
	case 19:
		a_check_dropped_requests();
		scan_start(dropped, INT64_MIN, INT64_MAX, 0, 0, false);
		return;
	case 20:
		CHECK(sj.errors == 1 && sj.last_err == -ENOENT &&
			      strstr(sj.last_msg, "unconfigured table") != NULL,
		      "scan of a dropped table: %d '%s'", sj.last_err, sj.last_msg);
		sm_table_put(dropped);
		dropped = NULL;
		/* The same name again: new, empty storage. */
		ddl_submit(SM_DDL_CREATE_TABLE, false, "ks", "t");
		return;
	case 21:
		expect_ddl(0, NULL);
		expect_version(true);
		scan_start(table_here("t"), INT64_MIN, INT64_MAX, 0, 0, true);
		return;
	case 22:
		check_scan_ok("recreated");
		CHECK(nscanned == 0, "%u rows in a recreated table", nscanned);
		ddl_submit(SM_DDL_DROP_KEYSPACE, false, "ks", NULL);
		return;
	case 23:
		expect_ddl(0, NULL);
		expect_version(true);
		probe_all("t");
		return;
	case 24:
		check_probes(&v_prev, false, false);
		ddl_submit(SM_DDL_DROP_KEYSPACE, false, "ks", NULL);
		return;
	case 25:
		expect_ddl(-ENOENT, "non existing keyspace");
		expect_version(false);
		ddl_submit(SM_DDL_DROP_KEYSPACE, true, "ks", NULL);
		return;
	case 26:
		expect_ddl(1, NULL);
		expect_version(false);
		finish();
		return;
	}
}

static void
test_ddl_reaches_every_shard(void **state)
{
	(void)state;
	run_scenario(scenario_ddl, 1);
}

/* Concurrent DDL from both shards: queued on shard 0, each applied once. */
static struct sm_ddl_req cddl[NSHARDS];
static struct sm_uuid cddl_seen[NSHARDS];

static void
cddl_done(struct sm_ddl_req *r)
{
	unsigned me = sm_shard_id();

	CHECK(me == r->origin);
	CHECK(r->result == 0, "concurrent CREATE TABLE on shard %u: %d %s", me, r->result, r->err);
	cddl_seen[me] = r->version;
	job_done();
}

static void
cddl_job(void *arg)
{
	static const char *names[NSHARDS] = { "t0", "t1" };
	unsigned me = sm_shard_id();
	struct sm_ddl_req *r = &cddl[me];

	(void)arg;
	memset(r, 0, sizeof(*r));
	r->kind = SM_DDL_CREATE_TABLE;
	r->table.ks = "ks";
	r->table.name = names[me];
	r->table.cols = t_cols;
	r->table.ncols = SM_ARRAY_SIZE(t_cols);
	r->done = cddl_done;
	sm_store_ddl(r);
}

static void
scenario_concurrent_ddl(int st)
{
	switch (st) {
	case 0:
		ddl_submit(SM_DDL_CREATE_KEYSPACE, false, "ks", NULL);
		return;
	case 1:
		expect_ddl(0, NULL);
		jobs_on_all(cddl_job, NULL);
		return;
	case 2:
		CHECK(!uuid_eq(&cddl_seen[0], &cddl_seen[1]), "two DDLs, one version");
		probe_all("t0");
		return;
	case 3:
		check_probes(&probes[0].version, true, true);
		probe_all("t1");
		return;
	case 4:
		check_probes(&probes[0].version, true, true);
		finish();
		return;
	}
}

static void
test_concurrent_ddl(void **state)
{
	(void)state;
	run_scenario(scenario_concurrent_ddl, 0);
}

/* ======== b. ownership and hops ======== */

#define B_PARTS 1000

static unsigned b_owned[NSHARDS];	/* partitions each shard owns */
static unsigned b_read_remote[NSHARDS]; /* reads that hopped, per submitting shard */

static void
prep_b_write(struct pump *p, struct slot *s, unsigned i)
{
	/* Partition pk = 2i + shard: shard 0 and 1 write alternate ones. */
	uint32_t pk = 2 * i + sm_shard_id();

	prep_write(p, s, pk, 7, pk * 3 + 1);
}

static void
b_write_job(void *arg)
{
	(void)arg;
	pump_start(table_here("t"), B_PARTS / NSHARDS, prep_b_write, check_write);
}

static void
prep_b_read(struct pump *p, struct slot *s, unsigned i)
{
	prep_read(p, s, i);
}

static void
check_b_read(struct pump *p, struct slot *s)
{
	unsigned me = sm_shard_id();

	(void)p;
	CHECK(s->req.result == 0, "read pk %u: %d %s", s->pk, s->req.result, s->req.err);
	CHECK(s->nrows == 1 && s->req.sel.rows == 1, "read pk %u on shard %u: %u rows", s->pk, me,
	      s->nrows);
	CHECK(s->rpk == s->pk && s->rck == 7 && s->rv == s->pk * 3 + 1,
	      "read pk %u: got pk %" PRId64 " ck %" PRId64 " v %" PRId64, s->pk, s->rpk, s->rck,
	      s->rv);
	/* The sink runs where the data is: on the owner. */
	CHECK(s->rshard == s->owner, "pk %u read on shard %u, owner %u", s->pk, s->rshard,
	      s->owner);
	CHECK(s->req.hops == (s->owner != me ? 1u : 0u), "read pk %u from shard %u: %u hops", s->pk,
	      me, s->req.hops);
	if (s->req.hops)
		b_read_remote[me]++;
}

static void
b_read_job(void *arg)
{
	(void)arg;
	pump_start(table_here("t"), B_PARTS, prep_b_read, check_b_read);
}

static void
scenario_ownership(int st)
{
	unsigned i, n;
	uint8_t seen[B_PARTS];

	switch (st) {
	case 0:
		ddl_submit(SM_DDL_CREATE_KEYSPACE, false, "ks", NULL);
		return;
	case 1:
		ddl_submit(SM_DDL_CREATE_TABLE, false, "ks", "t");
		return;
	case 2:
		expect_ddl(0, NULL);
		memset(b_owned, 0, sizeof(b_owned));
		memset(b_read_remote, 0, sizeof(b_read_remote));
		for (i = 0; i < B_PARTS; i++)
			b_owned[owner_of_int(i)]++;
		CHECK(b_owned[0] > 300 && b_owned[1] > 300, "owners %u/%u", b_owned[0], b_owned[1]);
		jobs_on_all(b_write_job, NULL);
		return;
	case 3:
		jobs_on_all(b_read_job, NULL);
		return;
	case 4:
		/* Each shard reads every partition: it hops for those it does
		 * not own. */
		for (i = 0; i < NSHARDS; i++)
			CHECK(b_read_remote[i] == B_PARTS - b_owned[i], "shard %u: %u remote reads",
			      i, b_read_remote[i]);
		scan_start(table_here("t"), INT64_MIN, INT64_MAX, 0, 0, false);
		return;
	case 5:
		check_scan_ok("ownership scan");
		CHECK(nscanned == B_PARTS, "%u rows", nscanned);
		memset(seen, 0, sizeof(seen));
		n = 0;
		for (i = 0; i < nscanned; i++) {
			const struct scanned *e = &scanned[i];

			if (e->pk < 0 || e->pk >= B_PARTS || seen[e->pk]++) {
				CHECK(false, "bad or repeated pk %d", e->pk);
				continue;
			}
			/* A shard stores only the partitions it owns. */
			CHECK(e->shard == owner_of_int((uint32_t)e->pk), "pk %d stored on shard %u",
			      e->pk, e->shard);
			n += e->shard == 0;
		}
		CHECK(n == b_owned[0], "shard 0 holds %u of its %u partitions", n, b_owned[0]);
		finish();
		return;
	}
}

static void
test_ownership_and_hops(void **state)
{
	(void)state;
	run_scenario(scenario_ownership, 0);
}

/* ======== c. paging across shards ======== */

#define C_PARTS 100000
#define C_PAGE 997

static int64_t c_tokens[C_PARTS];

static unsigned
c_rows_of(uint32_t pk)
{
	return 1 + pk % 3;
}

/* Request i of shard s: its partitions are those with pk % NSHARDS == s,
 * every row of each, one mutation per row. */
struct c_map {
	uint32_t pk, ck;
};

static struct c_map *c_map[NSHARDS];
static unsigned c_nmap[NSHARDS];

static void
prep_c_write(struct pump *p, struct slot *s, unsigned i)
{
	const struct c_map *m = &c_map[sm_shard_id()][i];

	prep_write(p, s, m->pk, m->ck, m->pk ^ m->ck);
}

static void
c_write_job(void *arg)
{
	unsigned me = sm_shard_id();

	(void)arg;
	pump_start(table_here("t"), c_nmap[me], prep_c_write, check_write);
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* After the deletion phase: partitions pk % 10 == 0 are deleted, row 1 of
 * pk % 10 == 1 and row 0 of 3-row pk % 10 == 2 are deleted. */
static bool c_deleted;

/* Expected live clustering keys of @pk in order; returns how many. */
static unsigned
c_expect(uint32_t pk, int32_t *cks)
{
	unsigned rows = c_rows_of(pk), n = 0, ck;

	if (c_deleted && pk % 10 == 0)
		return 0;
	for (ck = 0; ck < rows; ck++) {
		if (c_deleted && pk % 10 == 1 && ck == 1)
			continue;
		if (c_deleted && pk % 10 == 2 && rows == 3 && ck == 0)
			continue;
		cks[n++] = (int32_t)ck;
	}
	return n;
}

/*
 * The scan in scanned[] against brute force over (start, end]: every
 * partition with live rows in the range exactly once, in token order, each
 * with its first min(rows, ppl) live rows in clustering order.
 */
static void
c_verify(const char *what, int64_t start, int64_t end, uint32_t ppl)
{
	static uint8_t seen[C_PARTS];
	unsigned i, expect_parts = 0, got_parts = 0, bad = 0, want = 0, at = 0;
	uint64_t expect_rows = 0;
	int64_t prev_token = INT64_MIN;
	int32_t cur_pk = -1, cks[3];

	memset(seen, 0, sizeof(seen));
	for (i = 0; i < C_PARTS; i++) {
		if (c_tokens[i] > start && c_tokens[i] <= end) {
			unsigned n = c_expect(i, cks);

			if (ppl && ppl < n)
				n = ppl;
			expect_parts += n > 0;
			expect_rows += n;
		}
	}
	for (i = 0; i < nscanned && bad < 5; i++) {
		const struct scanned *e = &scanned[i];

		if (e->token < prev_token) {
			CHECK(false, "%s: row %u: token %" PRId64 " after %" PRId64, what, i,
			      e->token, prev_token);
			bad++;
		}
		prev_token = e->token;
		if (e->token <= start || e->token > end) {
			CHECK(false, "%s: token %" PRId64 " outside the range", what, e->token);
			bad++;
		}
		if (e->pk < 0 || e->pk >= C_PARTS) {
			CHECK(false, "%s: pk %d", what, e->pk);
			bad++;
			continue;
		}
		if (e->pk != cur_pk) {
			if (cur_pk >= 0 && at != want) {
				CHECK(false, "%s: pk %d returned %u rows, expected %u", what,
				      cur_pk, at, want);
				bad++;
			}
			if (seen[e->pk]++) {
				CHECK(false, "%s: pk %d returned twice (not contiguous)", what,
				      e->pk);
				bad++;
			}
			got_parts++;
			cur_pk = e->pk;
			at = 0;
			want = c_expect((uint32_t)e->pk, cks);
			if (ppl && ppl < want)
				want = ppl;
		}
		if (at >= want || e->ck != cks[at]) {
			CHECK(false, "%s: pk %d: row %u has ck %d, expected %d", what, e->pk, at,
			      e->ck, at < want ? cks[at] : -1);
			bad++;
		}
		at++;
		if (e->token != c_tokens[e->pk]) {
			CHECK(false, "%s: pk %d token", what, e->pk);
			bad++;
		}
	}
	if (cur_pk >= 0)
		CHECK(at == want, "%s: last pk %d returned %u rows, expected %u", what, cur_pk, at,
		      want);
	CHECK(got_parts == expect_parts, "%s: %u distinct partitions, expected %u", what, got_parts,
	      expect_parts);
	CHECK(nscanned == expect_rows, "%s: %u rows, expected %" PRIu64, what, nscanned,
	      expect_rows);
	print_message("  %s: %u rows of %u partitions in %u pages, %u hops\n", what, nscanned,
		      got_parts, sj.pages, sj.hops);
}

/* Deletions: c_map[s] lists them with ck UINT32_MAX for a partition. */
static void
prep_c_delete(struct pump *p, struct slot *s, unsigned i)
{
	const struct c_map *m = &c_map[sm_shard_id()][i];

	prep_write(p, s, m->pk, m->ck, 0);
	s->req.mut.ops = NULL;
	s->req.mut.nops = 0;
	if (m->ck == UINT32_MAX) {
		s->req.mut.ck.n = 0;
		s->req.mut.flags = SM_MUT_DELETE_PARTITION;
	} else {
		s->req.mut.flags = SM_MUT_DELETE_ROW;
	}
}

static void
c_delete_job(void *arg)
{
	unsigned me = sm_shard_id();

	(void)arg;
	pump_start(table_here("t"), c_nmap[me], prep_c_delete, check_write);
}

/* Single-partition paging: each 3-row partition of a sample read one row
 * per page, the pages submitted on alternating shards. */
#define C_SP_PARTS 64

static struct {
	struct sm_store_req req;
	uint8_t pkb[4];
	uint16_t cols[2];
	uint32_t pk;
	unsigned nparts, page, rows, errors, bad;
	int32_t got[4];
} csp;

static void
csp_page(void *arg);

static int
csp_row(void *ctx, const struct sm_row_view *r)
{
	(void)ctx;
	if (csp.rows < 4)
		csp.got[csp.rows] = (int32_t)key_int(r->ck, 0);
	csp.rows++;
	return 0;
}

static void
csp_done(struct sm_store_req *r)
{
	unsigned next = (sm_shard_id() + 1) % sm_shard_count();

	if (r->result < 0)
		csp.errors++;
	CHECK(r->sel.rows <= 1, "single-partition page of %u rows", r->sel.rows);
	CHECK(r->sel.more == (csp.rows < 3), "pk %u after %u rows: more %d", csp.pk, csp.rows,
	      r->sel.more);
	if (r->result == 0 && r->sel.more && csp.rows < 4) {
		csp.page++;
		CHECK(sm_submit_to(next, csp_page, NULL, NULL) == 0);
		return;
	}
	if (csp.rows != 3 || csp.got[0] != 0 || csp.got[1] != 1 || csp.got[2] != 2)
		csp.bad++;
	/* Next 3-row partition. */
	if (++csp.nparts == C_SP_PARTS) {
		job_done();
		return;
	}
	csp.pk += 3;
	csp.page = 0;
	csp.rows = 0;
	CHECK(sm_submit_to(next, csp_page, NULL, NULL) == 0);
}

static void
csp_page(void *arg)
{
	struct sm_select *s = &csp.req.sel;

	(void)arg;
	csp.req.kind = SM_REQ_SELECT;
	csp.req.done = csp_done;
	s->range = false;
	s->table = table_here("t");
	int_key(&s->pk, csp.pkb, csp.pk);
	csp.cols[0] = col_id(s->table, "pk");
	csp.cols[1] = col_id(s->table, "ck");
	s->cols = csp.cols;
	s->ncols = 2;
	s->limit = 1;
	s->resume = csp.page > 0;
	s->sink.row = csp_row;
	sm_store_submit(&csp.req);
}

static int64_t c_sub_start, c_sub_end, c_edge_start, c_edge_end;

static void
scenario_paging(int st)
{
	static int64_t sorted[C_PARTS];
	unsigned i, s;

	switch (st) {
	case 0:
		ddl_submit(SM_DDL_CREATE_KEYSPACE, false, "ks", NULL);
		return;
	case 1:
		ddl_submit(SM_DDL_CREATE_TABLE, false, "ks", "t");
		return;
	case 2:
		expect_ddl(0, NULL);
		for (s = 0; s < NSHARDS; s++)
			c_nmap[s] = 0;
		for (i = 0; i < C_PARTS; i++) {
			unsigned ck, sh = i % NSHARDS;

			c_tokens[i] = token_of_int(i);
			for (ck = 0; ck < c_rows_of(i); ck++)
				c_map[sh][c_nmap[sh]++] = (struct c_map){ i, ck };
		}
		jobs_on_all(c_write_job, NULL);
		return;
	case 3:
		/* The whole ring, 997-row pages, each page on the other shard. */
		scan_start(table_here("t"), INT64_MIN, INT64_MAX, C_PAGE, 0, true);
		return;
	case 4:
		check_scan_ok("full scan");
		CHECK(sj.pages > 100 && sj.submit_shard[0] > 0 && sj.submit_shard[1] > 0,
		      "%u pages", sj.pages);
		c_verify("full scan", INT64_MIN, INT64_MAX, 0);
		/* A sub-range between two partitions' tokens. */
		memcpy(sorted, c_tokens, sizeof(sorted));
		qsort(sorted, C_PARTS, sizeof(sorted[0]), cmp_i64);
		c_sub_start = sorted[C_PARTS / 5];
		c_sub_end = sorted[C_PARTS / 5 * 3];
		/* A narrow one whose ends are partitions' tokens: start
		 * excluded, end included. */
		c_edge_start = sorted[40000];
		c_edge_end = sorted[40050];
		scan_start(table_here("t"), c_sub_start, c_sub_end, C_PAGE, 0, true);
		return;
	case 5:
		check_scan_ok("sub-range");
		c_verify("sub-range", c_sub_start, c_sub_end, 0);
		scan_start(table_here("t"), c_sub_start - 1000, c_sub_end + 1000, C_PAGE, 0, false);
		return;
	case 6:
		check_scan_ok("sub-range, one submitter");
		c_verify("sub-range, one submitter", c_sub_start - 1000, c_sub_end + 1000, 0);
		scan_start(table_here("t"), c_edge_start, c_edge_end, 0, 0, false);
		return;
	case 7:
		check_scan_ok("edges");
		CHECK(sj.pages == 1);
		c_verify("edges, no limit", c_edge_start, c_edge_end, 0);
		scan_start(table_here("t"), c_edge_start, c_edge_end, 7, 0, true);
		return;
	case 8:
		check_scan_ok("edges paged");
		c_verify("edges, 7-row pages", c_edge_start, c_edge_end, 0);
		scan_start(table_here("t"), c_edge_start, c_edge_start, 10, 0, true);
		return;
	case 9:
		CHECK(nscanned == 0 && sj.pages == 1, "an empty range returned %u rows", nscanned);
		scan_start(table_here("t"), INT64_MIN, INT64_MAX, C_PAGE, 2, true);
		return;
	case 10:
		check_scan_ok("per_partition_limit 2");
		c_verify("full scan, per_partition_limit 2", INT64_MIN, INT64_MAX, 2);
		scan_start(table_here("t"), c_sub_start, c_sub_end, 100, 1, true);
		return;
	case 11:
		check_scan_ok("per_partition_limit 1");
		c_verify("sub-range, per_partition_limit 1, 100-row pages", c_sub_start, c_sub_end,
			 1);
		/* A page size that ends pages inside 3-row partitions often. */
		scan_start(table_here("t"), c_sub_start, c_sub_end, 2, 2, true);
		return;
	case 12:
		check_scan_ok("per_partition_limit 2, 2-row pages");
		c_verify("sub-range, per_partition_limit 2, 2-row pages", c_sub_start, c_sub_end,
			 2);
		memset(&csp, 0, sizeof(csp));
		csp.pk = 2; /* pk % 3 == 2: three rows */
		jobs_pending = 1;
		csp_page(NULL);
		return;
	case 13:
		CHECK(csp.errors == 0 && csp.bad == 0 && csp.nparts == C_SP_PARTS,
		      "single-partition paging: %u errors, %u bad partitions", csp.errors, csp.bad);
		/* Delete partitions and rows, then scan again. */
		for (s = 0; s < NSHARDS; s++)
			c_nmap[s] = 0;
		for (i = 0; i < C_PARTS; i++) {
			unsigned sh = i % NSHARDS;

			if (i % 10 == 0)
				c_map[sh][c_nmap[sh]++] = (struct c_map){ i, UINT32_MAX };
			else if (i % 10 == 1 && c_rows_of(i) >= 2)
				c_map[sh][c_nmap[sh]++] = (struct c_map){ i, 1 };
			else if (i % 10 == 2 && c_rows_of(i) == 3)
				c_map[sh][c_nmap[sh]++] = (struct c_map){ i, 0 };
		}
		c_deleted = true;
		jobs_on_all(c_delete_job, NULL);
		return;
	case 14:
		scan_start(table_here("t"), INT64_MIN, INT64_MAX, C_PAGE, 0, true);
		return;
	case 15:
		check_scan_ok("after deletions");
		c_verify("full scan after deletions", INT64_MIN, INT64_MAX, 0);
		scan_start(table_here("t"), c_sub_start, c_sub_end, 3, 1, true);
		return;
	case 16:
		check_scan_ok("after deletions, per_partition_limit 1");
		c_verify("sub-range after deletions, per_partition_limit 1, 3-row pages",
			 c_sub_start, c_sub_end, 1);
		scan_start(table_here("t"), INT64_MIN, INT64_MAX, 5, 2, true);
		return;
	case 17:
		check_scan_ok("after deletions, per_partition_limit 2");
		c_verify("full scan after deletions, per_partition_limit 2, 5-row pages", INT64_MIN,
			 INT64_MAX, 2);
		finish();
		return;
	}
}

static void
test_paging_across_shards(void **state)
{
	unsigned s;

	(void)state;
	c_deleted = false;
	for (s = 0; s < NSHARDS; s++) {
		c_map[s] = calloc(C_PARTS * 3, sizeof(struct c_map));
		assert_non_null(c_map[s]);
	}
	run_scenario(scenario_paging, 0);
	for (s = 0; s < NSHARDS; s++)
		free(c_map[s]);
}

/* ======== d. compare-and-set linearizability ======== */

#define D_CLIENTS_PER_SHARD 4
#define D_CLIENTS (D_CLIENTS_PER_SHARD * NSHARDS)
#define D_INCREMENTS 1000
#define D_TOTAL (D_CLIENTS * D_INCREMENTS)

struct d_op {
	uint32_t read, wrote;
	int64_t pre;	 /* the pre-image value returned with it */
	uint16_t client; /* who */
};

static struct d_op d_hist[D_TOTAL + 64];
static unsigned d_nhist;
static unsigned d_not_applied;
static unsigned d_errors;
static unsigned d_contention;

struct d_client {
	struct sm_store_req req;
	struct sm_task task;
	unsigned id;
	unsigned applied;
	uint32_t x;	   /* the value we believe is current */
	int64_t last_seen; /* the newest value this client observed */
	int64_t pre;	   /* pre-image value in the last reply, -1: none */
	uint8_t pkb[4], xb[4], nb[4];
	struct sm_cell_op op;
	struct sm_condition cond;
	uint16_t col;
};

static struct d_client d_clients[D_CLIENTS];
/* SM_CAS_CUSTOM instead of IF v = x: decide() increments what it read. */
static bool d_custom;
static unsigned d_done_on[NSHARDS];
static const struct sm_table *d_table;

static int
d_pre_row(void *ctx, const struct sm_row_view *r)
{
	struct d_client *c = ctx;

	c->pre = cell_int(&r->cells[0]);
	return 0;
}

/* Runs on the owner inside the Paxos round: write pre-image + 1. */
static bool
d_decide(void *ctx, bool exists, struct sm_cas *cas)
{
	struct d_client *c = ctx;

	(void)cas;
	if (!exists || c->pre < 0)
		return false;
	c->x = (uint32_t)c->pre;
	put32(c->nb, c->x + 1);
	return true;
}

/* Fill @req with UPDATE c SET v = x + 1 WHERE pk = 0 IF v = x (or the
 * initial INSERT ... IF NOT EXISTS when @insert). */
static void
d_prep(struct d_client *c, bool insert)
{
	struct sm_cas *cas = &c->req.cas;

	memset(&c->req, 0, sizeof(c->req));
	c->req.kind = SM_REQ_CAS;
	c->req.ctx = c;
	cas->mut.table = d_table;
	int_key(&cas->mut.pk, c->pkb, 0);
	c->col = col_id(d_table, "v");
	put32(c->xb, c->x);
	put32(c->nb, insert ? c->x : c->x + 1);
	memset(&c->op, 0, sizeof(c->op));
	c->op.col = c->col;
	c->op.kind = SM_CELL_SET;
	c->op.value.p = c->nb;
	c->op.value.len = 4;
	cas->mut.ops = &c->op;
	cas->mut.nops = 1;
	cas->mut.ts = SM_TS_NOW;
	cas->mut.ttl = SM_TTL_DEFAULT;
	cas->cols = &c->col;
	cas->ncols = 1;
	cas->sink.row = d_pre_row;
	cas->sink.ctx = c;
	if (insert) {
		cas->kind = SM_CAS_IF_NOT_EXISTS;
		cas->mut.flags = SM_MUT_ROW_MARKER;
		return;
	}
	if (d_custom) {
		cas->kind = SM_CAS_CUSTOM;
		cas->decide = d_decide;
		cas->decide_ctx = c;
		return;
	}
	memset(&c->cond, 0, sizeof(c->cond));
	c->cond.col = c->col;
	c->cond.op = SM_COND_EQ;
	c->cond.value.p = c->xb;
	c->cond.value.len = 4;
	cas->kind = SM_CAS_IF;
	cas->conds = &c->cond;
	cas->nconds = 1;
}

static void
d_cas_done(struct sm_store_req *r);

static void
d_issue(void *arg)
{
	struct d_client *c = arg;

	c->pre = -1;
	d_prep(c, false);
	c->req.done = d_cas_done;
	sm_store_submit(&c->req);
}

static void
d_client_done(void *arg)
{
	(void)arg;
	if (++d_done_on[sm_shard_id()] == D_CLIENTS_PER_SHARD)
		job_done();
}

static void
d_cas_done(struct sm_store_req *r)
{
	struct d_client *c = r->ctx;
	unsigned idx;

	if (r->cas.contention)
		__atomic_fetch_add(&d_contention, r->cas.contention, __ATOMIC_RELAXED);
	if (r->result < 0) {
		/* Contention timeouts would be retried; a single replica
		 * running rounds to completion should have none. */
		__atomic_fetch_add(&d_errors, 1, __ATOMIC_RELAXED);
		check_failed(__LINE__, "client %u: CAS %d %s", c->id, r->result, r->err);
		sm_task_schedule(&c->task);
		return;
	}
	if (r->cas.applied) {
		idx = __atomic_fetch_add(&d_nhist, 1, __ATOMIC_RELAXED);
		if (idx < SM_ARRAY_SIZE(d_hist))
			d_hist[idx] = (struct d_op){ c->x, c->x + 1, c->pre, (uint16_t)c->id };
		CHECK(c->pre == (int64_t)c->x, "client %u: applied IF v = %u, pre-image %" PRId64,
		      c->id, c->x, c->pre);
		CHECK((int64_t)c->x >= c->last_seen,
		      "client %u: applied over %u after seeing %" PRId64, c->id, c->x,
		      c->last_seen);
		c->x++;
		c->last_seen = c->x;
		if (++c->applied == D_INCREMENTS) {
			d_client_done(NULL);
			return;
		}
	} else {
		__atomic_fetch_add(&d_not_applied, 1, __ATOMIC_RELAXED);
		CHECK(c->pre >= 0, "client %u: not applied without a pre-image", c->id);
		CHECK(c->pre != (int64_t)c->x, "client %u: not applied though v = %u", c->id, c->x);
		/* Reads move forward for one client (real-time order). */
		CHECK(c->pre >= c->last_seen, "client %u: saw %" PRId64 " after %" PRId64, c->id,
		      c->pre, c->last_seen);
		if (c->pre >= 0) {
			c->x = (uint32_t)c->pre;
			c->last_seen = c->pre;
		}
	}
	/* Next try from a task: a local CAS completes inside submit. */
	sm_task_schedule(&c->task);
}

static void
d_clients_job(void *arg)
{
	unsigned me = sm_shard_id(), k;

	(void)arg;
	for (k = 0; k < D_CLIENTS_PER_SHARD; k++) {
		struct d_client *c = &d_clients[me * D_CLIENTS_PER_SHARD + k];

		memset(c, 0, sizeof(*c));
		c->id = me * D_CLIENTS_PER_SHARD + k;
		sm_task_init(&c->task, d_issue, c);
		sm_task_schedule(&c->task);
	}
}

/* The initial insert and the final reads, from the scenario shard. */
static struct d_client d_ctl;
static int64_t d_final[2 * NSHARDS];
static unsigned d_final_rows[2 * NSHARDS];
static struct sm_store_req d_reads[2 * NSHARDS];
static uint8_t d_pk0[4];
static uint16_t d_read_col;

static void
d_ctl_done(struct sm_store_req *r)
{
	(void)r;
	advance();
}

static int
d_read_row(void *ctx, const struct sm_row_view *r)
{
	unsigned i = (unsigned)(uintptr_t)ctx;

	d_final_rows[i]++;
	d_final[i] = cell_int(&r->cells[0]);
	return 0;
}

static void
d_read_done(struct sm_store_req *r)
{
	CHECK(r->result == 0, "final read: %d %s", r->result, r->err);
	job_done();
}

/* A plain and a serial read of v on the calling shard. */
static void
d_read_job(void *arg)
{
	unsigned me = sm_shard_id(), k;

	(void)arg;
	for (k = 0; k < 2; k++) {
		unsigned i = me * 2 + k;
		struct sm_store_req *r = &d_reads[i];

		memset(r, 0, sizeof(*r));
		r->kind = k ? SM_REQ_SERIAL_SELECT : SM_REQ_SELECT;
		r->sel.table = d_table;
		int_key(&r->sel.pk, d_pk0, 0);
		r->sel.cols = &d_read_col;
		r->sel.ncols = 1;
		r->sel.sink.row = d_read_row;
		r->sel.sink.ctx = (void *)(uintptr_t)i;
		r->done = d_read_done;
		sm_store_submit(r);
	}
}

static void
scenario_cas(int st)
{
	switch (st) {
	case 0:
		ddl_submit(SM_DDL_CREATE_KEYSPACE, false, "ks", NULL);
		return;
	case 1:
		ddl_submit(SM_DDL_CREATE_TABLE, false, "ks", "c");
		return;
	case 2:
		expect_ddl(0, NULL);
		d_table = table_here("c");
		d_read_col = col_id(d_table, "v");
		memset(&d_ctl, 0, sizeof(d_ctl));
		d_ctl.x = 0;
		d_ctl.pre = -1;
		d_prep(&d_ctl, true);
		d_ctl.req.done = d_ctl_done;
		sm_store_submit(&d_ctl.req);
		return;
	case 3:
		CHECK(d_ctl.req.result == 0 && d_ctl.req.cas.applied, "initial insert: %d %s",
		      d_ctl.req.result, d_ctl.req.err);
		CHECK(d_ctl.pre == -1, "a pre-image before the row existed");
		/* The same insert again is not applied and shows v = 0. */
		d_ctl.pre = -1;
		d_prep(&d_ctl, true);
		d_ctl.req.done = d_ctl_done;
		sm_store_submit(&d_ctl.req);
		return;
	case 4:
		CHECK(d_ctl.req.result == 0 && !d_ctl.req.cas.applied && d_ctl.pre == 0,
		      "second insert: %d applied %d pre %" PRId64, d_ctl.req.result,
		      d_ctl.req.cas.applied, d_ctl.pre);
		d_nhist = 0;
		d_not_applied = 0;
		d_errors = 0;
		d_contention = 0;
		memset(d_done_on, 0, sizeof(d_done_on));
		jobs_on_all(d_clients_job, NULL);
		return;
	case 5:
		jobs_on_all(d_read_job, NULL);
		/* Each job ends twice: a plain and a serial read. */
		jobs_pending = 2 * NSHARDS;
		return;
	case 6:
		finish();
		return;
	}
}

static int
cmp_op(const void *a, const void *b)
{
	const struct d_op *x = a, *y = b;

	return x->read < y->read ? -1 : x->read > y->read;
}

static void
check_cas_history(void);

static void
test_cas_linearizable(void **state)
{
	(void)state;
	d_custom = false;
	check_cas_history();
}

/* The same increments with the verdict computed in the round (SM_CAS_CUSTOM,
 * as Alternator's condition expressions need): every one applies. */
static void
test_cas_custom_linearizable(void **state)
{
	(void)state;
	d_custom = true;
	check_cas_history();
	assert_int_equal(d_not_applied, 0);
	d_custom = false;
}

static void
check_cas_history(void)
{
	unsigned i;

	memset(d_final, 0xff, sizeof(d_final));
	memset(d_final_rows, 0, sizeof(d_final_rows));
	run_scenario(scenario_cas, 0);
	print_message("  %u applied, %u not applied, %u contention retries, %u errors\n", d_nhist,
		      d_not_applied, d_contention, d_errors);
	assert_int_equal(d_errors, 0);
	assert_int_equal(d_nhist, D_TOTAL);
	/* Every applied read-modify-write saw the previous one's result: the
	 * (read, wrote) pairs form one chain 0 -> 1 -> ... -> D_TOTAL. */
	qsort(d_hist, d_nhist, sizeof(d_hist[0]), cmp_op);
	for (i = 0; i < d_nhist; i++) {
		if (d_hist[i].read != i || d_hist[i].wrote != i + 1 || d_hist[i].pre != (int64_t)i)
			fail_msg("history: op %u by client %u read %u wrote %u pre-image %" PRId64,
				 i, d_hist[i].client, d_hist[i].read, d_hist[i].wrote,
				 d_hist[i].pre);
	}
	for (i = 0; i < 2 * NSHARDS; i++) {
		assert_int_equal(d_final_rows[i], 1);
		assert_int_equal(d_final[i], D_TOTAL);
	}
}

/* ======== e. allocation-free overwrite and read ======== */

#define E_WARM 16
#define E_OPS 1000

struct e_result {
	uint32_t pk;
	uint64_t overwrite_allocs, overwrite_frees;
	uint64_t read_allocs, read_frees;
	unsigned write_errors, read_errors, bad_rows;
	unsigned overwrites_done, reads_done;
};

static struct e_result e_res[NSHARDS];
static const struct sm_table *e_table;

struct e_ctx {
	struct sm_store_req req;
	struct e_result *res;
	uint8_t pkb[4], ckb[4], nb[4];
	uint8_t vb[40];
	struct sm_cell_op ops[2];
	uint16_t cols[4];
	bool done;
	unsigned rows;
	uint32_t want_n;
	uint8_t want_v[40];
	bool row_ok;
};

static struct e_ctx e_ctx[NSHARDS];

static void
e_done(struct sm_store_req *r)
{
	struct e_ctx *c = r->ctx;

	c->done = true;
}

static int
e_row(void *ctx, const struct sm_row_view *r)
{
	struct e_ctx *c = ctx;

	c->rows++;
	c->row_ok = r->ncells == 4 && cell_int(&r->cells[0]) == c->res->pk &&
		    cell_int(&r->cells[1]) == 1 && cell_int(&r->cells[2]) == c->want_n &&
		    r->cells[3].present && r->cells[3].value.len == sizeof(c->want_v) &&
		    memcmp(r->cells[3].value.p, c->want_v, sizeof(c->want_v)) == 0;
	return 0;
}

/* Overwrite n and v of (pk, ck 1) on the owner: inline, done() before return. */
static int
e_overwrite(struct e_ctx *c, uint32_t seq)
{
	struct sm_mutation *m = &c->req.mut;
	unsigned i;

	memset(m, 0, sizeof(*m));
	c->req.kind = SM_REQ_MUTATE;
	c->req.done = e_done;
	c->req.ctx = c;
	m->table = e_table;
	int_key(&m->pk, c->pkb, c->res->pk);
	int_key(&m->ck, c->ckb, 1);
	put32(c->nb, seq);
	for (i = 0; i < sizeof(c->vb); i++)
		c->vb[i] = (uint8_t)(seq * 31 + i);
	c->ops[0] = (struct sm_cell_op){ .col = col_id(e_table, "n"),
					 .kind = SM_CELL_SET,
					 .value = { c->nb, 4 } };
	c->ops[1] = (struct sm_cell_op){ .col = col_id(e_table, "v"),
					 .kind = SM_CELL_SET,
					 .value = { c->vb, sizeof(c->vb) } };
	m->ops = c->ops;
	m->nops = 2;
	m->ts = SM_TS_NOW;
	m->ttl = SM_TTL_DEFAULT;
	m->flags = SM_MUT_ROW_MARKER;
	c->done = false;
	sm_store_submit(&c->req);
	c->want_n = seq;
	memcpy(c->want_v, c->vb, sizeof(c->vb));
	return c->done ? c->req.result : -EINPROGRESS;
}

static int
e_read(struct e_ctx *c)
{
	struct sm_select *s = &c->req.sel;

	c->req.kind = SM_REQ_SELECT;
	c->req.done = e_done;
	c->req.ctx = c;
	memset(s, 0, sizeof(*s));
	s->table = e_table;
	int_key(&s->pk, c->pkb, c->res->pk);
	c->cols[0] = col_id(e_table, "pk");
	c->cols[1] = col_id(e_table, "ck");
	c->cols[2] = col_id(e_table, "n");
	c->cols[3] = col_id(e_table, "v");
	s->cols = c->cols;
	s->ncols = 4;
	s->sink.row = e_row;
	s->sink.ctx = c;
	c->rows = 0;
	c->row_ok = false;
	c->done = false;
	sm_store_submit(&c->req);
	if (!c->done)
		return -EINPROGRESS;
	if (c->req.result == 0 && (c->rows != 1 || !c->row_ok))
		return -EBADMSG;
	return c->req.result;
}

static void
e_job(void *arg)
{
	unsigned me = sm_shard_id(), i;
	struct e_result *res = &e_res[me];
	struct e_ctx *c = &e_ctx[me];
	struct sm_sw_stats *st = sm_shard_stats(me);
	uint64_t a0, f0;
	uint32_t pk = 0;

	(void)arg;
	memset(res, 0, sizeof(*res));
	memset(c, 0, sizeof(*c));
	c->res = res;
	while (owner_of_int(pk) != me)
		pk++;
	res->pk = pk;
	/* Warm-up: create the partition, the row, the cells, scratch space. */
	for (i = 0; i < E_WARM; i++) {
		if (e_overwrite(c, i) != 0)
			res->write_errors++;
		if (e_read(c) != 0)
			res->read_errors++;
	}
	a0 = st->allocs;
	f0 = st->frees;
	for (i = 0; i < E_OPS; i++) {
		if (e_overwrite(c, E_WARM + i) != 0)
			res->write_errors++;
		else
			res->overwrites_done++;
	}
	res->overwrite_allocs = st->allocs - a0;
	res->overwrite_frees = st->frees - f0;
	a0 = st->allocs;
	f0 = st->frees;
	for (i = 0; i < E_OPS; i++) {
		int ret = e_read(c);

		if (ret == -EBADMSG)
			res->bad_rows++;
		else if (ret != 0)
			res->read_errors++;
		else
			res->reads_done++;
	}
	res->read_allocs = st->allocs - a0;
	res->read_frees = st->frees - f0;
	job_done();
}

static void
scenario_memory(int st)
{
	switch (st) {
	case 0:
		ddl_submit(SM_DDL_CREATE_KEYSPACE, false, "ks", NULL);
		return;
	case 1:
		ddl_submit(SM_DDL_CREATE_TABLE, false, "ks", "m");
		return;
	case 2:
		expect_ddl(0, NULL);
		e_table = table_here("m");
		jobs_on_all(e_job, NULL);
		return;
	case 3:
		finish();
		return;
	}
}

static void
test_memory_discipline(void **state)
{
	unsigned s;

	(void)state;
	run_scenario(scenario_memory, 0);
	for (s = 0; s < NSHARDS; s++) {
		const struct e_result *r = &e_res[s];

		print_message("  shard %u pk %u: %d overwrites: %" PRIu64 " allocs %" PRIu64
			      " frees; %d reads: %" PRIu64 " allocs %" PRIu64 " frees\n",
			      s, r->pk, E_OPS, r->overwrite_allocs, r->overwrite_frees, E_OPS,
			      r->read_allocs, r->read_frees);
		assert_int_equal(r->write_errors, 0);
		assert_int_equal(r->read_errors, 0);
		assert_int_equal(r->bad_rows, 0);
		assert_int_equal(r->overwrites_done, E_OPS);
		assert_int_equal(r->reads_done, E_OPS);
		assert_int_equal(r->overwrite_allocs, 0);
		assert_int_equal(r->overwrite_frees, 0);
		assert_int_equal(r->read_allocs, 0);
		assert_int_equal(r->read_frees, 0);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ddl_reaches_every_shard),
		cmocka_unit_test(test_concurrent_ddl),
		cmocka_unit_test(test_ownership_and_hops),
		cmocka_unit_test(test_paging_across_shards),
		cmocka_unit_test(test_cas_linearizable),
		cmocka_unit_test(test_cas_custom_linearizable),
		cmocka_unit_test(test_memory_discipline),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
