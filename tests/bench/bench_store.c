/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_store: the cost of each store operation, per operation, on the
 * perf-simple-query schema (ks.cf: "KEY" blob primary key, "C0".."C4" blob
 * of 34 bytes; ks.cf_counter with counters "C0".."C4").
 *
 *   bench_store [shards] [ops per kind]
 *
 * Without arguments it runs one shard, then two, with 20,000 operations per
 * kind. Shard 0 submits every operation, one at a time: first on
 * partitions it owns (no hop), then on partitions shard 1 owns (one hop
 * there and back). The counters are the sums over all shards of the
 * per-shard software counters (allocations, frees, tasks run, store hops,
 * cross-shard messages sent), divided by the operation count; ns/op is wall
 * time on shard 0. Timing belongs here, never in tests.
 *
 *   bench_store mem [max partitions]
 *
 * One shard: the bytes of memory each partition takes (sm_mem's in-use
 * counter before and after a fill, so the index's share counts too) for
 * cassandra-stress's standard1 (10-byte key, five 34-byte cells), a wide
 * partition (1,000 clustering rows of one 34-byte cell) and a row of
 * collections (a map of 10 text entries and a set of 10 ints); then the
 * standard1 insert and read rates as the table grows to 0.1, 1 and 5
 * million partitions (and 20 million when the maximum allows: default 5
 * million). The rates are of the last 100,000 inserts before each level
 * and of 200,000 reads of random partitions at it, per second of the
 * shard thread's CPU time (CLOCK_THREAD_CPUTIME_ID: what other processes
 * on a shared machine take of the CPU does not count).
 */

#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sm_core.h"
#include "sm_store.h"

#define NCOLS 5
#define VAL_LEN 34
#define KEY_LEN 8
#define SCAN_PAGE 100
#define IDLE_POLL_US 1000

enum kind {
	K_INSERT,
	K_OVERWRITE,
	K_READ,
	K_CAS_NEW,
	K_CAS,
	K_COUNTER_NEW,
	K_COUNTER,
	K_SCAN,
	K_DELETE,
	K__COUNT
};

static const char *const kind_name[K__COUNT] = {
	"insert",      "overwrite", "read",
	"cas new",     /* first LWT on the partition: creates its Paxos state */
	"cas",	       /* UPDATE ... IF EXISTS again */
	"counter new", /* first increment: creates the partition */
	"counter",     "scan 100",  "delete",
};

struct counters {
	uint64_t allocs, frees, tasks, hops, xmsgs, sleeps;
};

static struct {
	unsigned shards;
	unsigned ops;
	/* keys[s]: ops partition keys owned by shard s, 8-byte big-endian */
	uint8_t *keys[2];
	const struct sm_table *cf, *cnt;
	/* the phase: kind, and whose partitions (0: shard 0's, 1: shard 1's) */
	unsigned kind, mode;
	unsigned i;
	bool pending, in_submit;
	unsigned errors;
	char first_err[200];
	uint64_t rows, bad_rows;
	struct sm_store_req req;
	struct sm_cell_op cell[NCOLS];
	uint8_t vals[NCOLS][VAL_LEN];
	uint8_t delta[8];
	uint16_t cols[1 + NCOLS];
	struct counters c0;
	uint64_t t0;
	struct sm_task phase_task;
	struct sm_ddl_req ddl;
	unsigned ddl_step;
	int failed;
	/* bench_store mem */
	bool mem;
	uint64_t mem_max;
	const struct sm_table *wide, *coll;
} b;

/* ---- counters ---- */

static void
counters_now(struct counters *c)
{
	struct sm_sw_stats st;
	unsigned i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < sm_shard_count(); i++) {
		sm_sw_stats_read(sm_shard_stats(i), &st);
		c->allocs += st.allocs;
		c->frees += st.frees;
		c->tasks += st.tasks_run;
		c->hops += st.hops;
		c->xmsgs += st.xmsg_sent;
		c->sleeps += st.sleeps;
	}
}

/* ---- schema ---- */

static char o_class[] = "class", o_simple[] = "SimpleStrategy";
static char o_rf[] = "replication_factor", o_one[] = "1";
static const struct sm_option repl[] = { { o_class, o_simple }, { o_rf, o_one } };

static const struct sm_column_def cf_cols[] = {
	{ "KEY", "blob", SM_COL_PARTITION, false }, { "C0", "blob", SM_COL_REGULAR, false },
	{ "C1", "blob", SM_COL_REGULAR, false },    { "C2", "blob", SM_COL_REGULAR, false },
	{ "C3", "blob", SM_COL_REGULAR, false },    { "C4", "blob", SM_COL_REGULAR, false },
};
static const struct sm_column_def cnt_cols[] = {
	{ "KEY", "blob", SM_COL_PARTITION, false }, { "C0", "counter", SM_COL_REGULAR, false },
	{ "C1", "counter", SM_COL_REGULAR, false }, { "C2", "counter", SM_COL_REGULAR, false },
	{ "C3", "counter", SM_COL_REGULAR, false }, { "C4", "counter", SM_COL_REGULAR, false },
};
static const struct sm_column_def wide_cols[] = {
	{ "pk", "blob", SM_COL_PARTITION, false },
	{ "ck", "int", SM_COL_CLUSTERING, false },
	{ "v", "blob", SM_COL_REGULAR, false },
};
static const struct sm_column_def coll_cols[] = {
	{ "pk", "blob", SM_COL_PARTITION, false },
	{ "m", "map<text, text>", SM_COL_REGULAR, false },
	{ "s", "set<int>", SM_COL_REGULAR, false },
};

static void
bench_fail(const char *what, const char *msg)
{
	fprintf(stderr, "bench_store: %s: %s\n", what, msg);
	b.failed = 1;
	sm_runtime_stop();
}

static void
phase_begin(void);
static void
mem_task_fn(void *arg);

static void
ddl_table(const char *name, const struct sm_column_def *cols, unsigned ncols)
{
	b.ddl.kind = SM_DDL_CREATE_TABLE;
	b.ddl.table.ks = "ks";
	b.ddl.table.name = name;
	b.ddl.table.cols = cols;
	b.ddl.table.ncols = ncols;
}

static void
ddl_next(struct sm_ddl_req *r)
{
	if (r != NULL && r->result < 0) {
		bench_fail("schema", r->err);
		return;
	}
	memset(&b.ddl, 0, sizeof(b.ddl));
	b.ddl.done = ddl_next;
	switch (b.ddl_step++) {
	case 0:
		b.ddl.kind = SM_DDL_CREATE_KEYSPACE;
		b.ddl.ks.name = "ks";
		b.ddl.ks.replication = repl;
		b.ddl.ks.nreplication = SM_ARRAY_SIZE(repl);
		b.ddl.ks.durable_writes = true;
		break;
	case 1:
		ddl_table("cf", cf_cols, SM_ARRAY_SIZE(cf_cols));
		break;
	case 2:
		ddl_table("cf_counter", cnt_cols, SM_ARRAY_SIZE(cnt_cols));
		break;
	case 3:
		ddl_table("wide", wide_cols, SM_ARRAY_SIZE(wide_cols));
		break;
	case 4:
		ddl_table("coll", coll_cols, SM_ARRAY_SIZE(coll_cols));
		break;
	default:
		b.cf = sm_catalog_table(sm_store_catalog(), "ks", "cf");
		b.cnt = sm_catalog_table(sm_store_catalog(), "ks", "cf_counter");
		b.wide = sm_catalog_table(sm_store_catalog(), "ks", "wide");
		b.coll = sm_catalog_table(sm_store_catalog(), "ks", "coll");
		if (b.mem) {
			sm_task_init(&b.phase_task, mem_task_fn, NULL);
			sm_task_schedule(&b.phase_task);
			return;
		}
		/* The tables live until the runtime ends: no DDL follows. */
		b.kind = 0;
		b.mode = 0;
		sm_task_schedule(&b.phase_task);
		return;
	}
	sm_store_ddl(&b.ddl);
}

/* ---- keys ---- */

static void
make_keys(void)
{
	unsigned n = b.shards > 1 ? 2 : 1, have[2] = { 0, 0 };
	uint64_t v;

	for (v = 0; have[0] < b.ops || (n > 1 && have[1] < b.ops); v++) {
		uint8_t kb[KEY_LEN];
		struct sm_key k = { .n = 1 };
		unsigned s, j;

		for (j = 0; j < KEY_LEN; j++)
			kb[j] = (uint8_t)(v >> (56 - 8 * j));
		k.part[0].p = kb;
		k.part[0].len = KEY_LEN;
		s = sm_key_shard(&k);
		if (s < n && have[s] < b.ops)
			memcpy(b.keys[s] + (size_t)KEY_LEN * have[s]++, kb, KEY_LEN);
	}
}

static void
key_of(struct sm_key *k, unsigned i)
{
	k->n = 1;
	k->part[0].p = b.keys[b.mode] + (size_t)KEY_LEN * i;
	k->part[0].len = KEY_LEN;
}

/* ---- one operation ---- */

static int
count_row(void *ctx, const struct sm_row_view *r)
{
	(void)ctx;
	b.rows++;
	if (r->ncells != 1 + NCOLS || !r->cells[1].present || r->cells[1].value.len != VAL_LEN)
		b.bad_rows++;
	return 0;
}

/* Set up the request fields that stay the same for the whole phase. */
static void
phase_setup(void)
{
	struct sm_store_req *r = &b.req;
	unsigned c;

	memset(r, 0, sizeof(*r));
	memset(b.cell, 0, sizeof(b.cell));
	for (c = 0; c <= NCOLS; c++)
		b.cols[c] = (uint16_t)c; /* KEY, C0..C4 in schema order */
	for (c = 0; c < NCOLS; c++) {
		b.cell[c].col = (uint16_t)(1 + c);
		b.cell[c].kind = SM_CELL_SET;
		b.cell[c].value.p = b.vals[c];
		b.cell[c].value.len = VAL_LEN;
	}
	switch (b.kind) {
	case K_INSERT:
	case K_OVERWRITE:
	case K_DELETE:
		r->kind = SM_REQ_MUTATE;
		r->mut.table = b.cf;
		r->mut.ts = SM_TS_NOW;
		r->mut.ttl = SM_TTL_DEFAULT;
		if (b.kind == K_DELETE) {
			r->mut.flags = SM_MUT_DELETE_PARTITION;
		} else {
			r->mut.flags = SM_MUT_ROW_MARKER;
			r->mut.ops = b.cell;
			r->mut.nops = NCOLS;
		}
		break;
	case K_COUNTER_NEW:
	case K_COUNTER:
		for (c = 0; c < NCOLS; c++) {
			b.cell[c].kind = SM_CELL_COUNTER_ADD;
			b.cell[c].value.p = b.delta;
			b.cell[c].value.len = 8;
		}
		memset(b.delta, 0, sizeof(b.delta));
		b.delta[7] = 1;
		r->kind = SM_REQ_MUTATE;
		r->mut.table = b.cnt;
		r->mut.ts = SM_TS_NOW;
		r->mut.ttl = SM_TTL_DEFAULT;
		r->mut.ops = b.cell;
		r->mut.nops = NCOLS;
		break;
	case K_READ:
	case K_SCAN:
		r->kind = SM_REQ_SELECT;
		r->sel.table = b.cf;
		r->sel.cols = b.cols;
		r->sel.ncols = 1 + NCOLS;
		r->sel.sink.row = count_row;
		if (b.kind == K_SCAN) {
			r->sel.range = true;
			r->sel.token_end = INT64_MAX;
			r->sel.limit = SCAN_PAGE;
		}
		break;
	case K_CAS_NEW:
	case K_CAS:
		/* UPDATE cf SET "C0" = ? WHERE "KEY" = ? IF EXISTS */
		r->kind = SM_REQ_CAS;
		r->cas.mut.table = b.cf;
		r->cas.mut.ts = SM_TS_NOW;
		r->cas.mut.ttl = SM_TTL_DEFAULT;
		r->cas.mut.ops = b.cell;
		r->cas.mut.nops = 1;
		r->cas.kind = SM_CAS_IF_EXISTS;
		break;
	}
}

static void
op_done(struct sm_store_req *r);

static void
op_prep(unsigned i)
{
	struct sm_store_req *r = &b.req;
	unsigned c;

	/* New values, same sizes: a different byte per operation. */
	for (c = 0; c < NCOLS; c++)
		b.vals[c][0] = (uint8_t)(i + b.kind + c);
	switch (b.kind) {
	case K_READ:
		key_of(&r->sel.pk, i);
		break;
	case K_SCAN: {
		struct sm_key k;

		/* A page that starts at this partition. */
		key_of(&k, i);
		r->sel.token_start = sm_key_token(&k) - 1;
		break;
	}
	case K_CAS_NEW:
	case K_CAS:
		key_of(&r->cas.mut.pk, i);
		break;
	default:
		key_of(&r->mut.pk, i);
		break;
	}
	r->done = op_done;
}

static void
phase_end(void);

static void
issue(void)
{
	while (b.i < b.ops) {
		op_prep(b.i++);
		b.pending = true;
		b.in_submit = true;
		sm_store_submit(&b.req);
		b.in_submit = false;
		if (b.pending)
			return; /* it hopped: op_done goes on */
	}
	phase_end();
}

static void
op_done(struct sm_store_req *r)
{
	bool ok = r->result == 0;

	if (ok && r->kind == SM_REQ_CAS && !r->cas.applied)
		ok = false;
	if (!ok && b.errors++ == 0)
		snprintf(b.first_err, sizeof(b.first_err), "%s: %d %s%s", kind_name[b.kind],
			 r->result, r->err,
			 r->kind == SM_REQ_CAS && r->result == 0 ? " not applied" : "");
	b.pending = false;
	if (!b.in_submit)
		issue();
}

/* ---- phases ---- */

static void
phase_begin(void)
{
	phase_setup();
	b.i = 0;
	b.rows = 0;
	b.bad_rows = 0;
	counters_now(&b.c0);
	b.t0 = sm_now_ns();
	issue();
}

static void
phase_task_fn(void *arg)
{
	(void)arg;
	phase_begin();
}

static void
phase_end(void)
{
	uint64_t ns = sm_now_ns() - b.t0;
	double n = b.ops;
	struct counters c1;

	counters_now(&c1);
	printf("%-12s %-9s %7u %9.3f %9.3f %9.3f %8.3f %9.3f %9.0f %9.3f\n", kind_name[b.kind],
	       b.mode == 0 ? "owner" : "non-owner", b.ops, (c1.allocs - b.c0.allocs) / n,
	       (c1.frees - b.c0.frees) / n, (c1.tasks - b.c0.tasks) / n, (c1.hops - b.c0.hops) / n,
	       (c1.xmsgs - b.c0.xmsgs) / n, ns / n, (c1.sleeps - b.c0.sleeps) / n);
	if (b.errors > 0) {
		fprintf(stderr, "bench_store: %u failed operations, the first: %s\n", b.errors,
			b.first_err);
		b.failed = 1;
	}
	if (b.kind == K_READ && b.rows != b.ops) {
		fprintf(stderr, "bench_store: reads returned %" PRIu64 " rows for %u keys\n",
			b.rows, b.ops);
		b.failed = 1;
	}
	if (b.bad_rows > 0) {
		fprintf(stderr, "bench_store: %" PRIu64 " rows with a wrong shape\n", b.bad_rows);
		b.failed = 1;
	}
	b.errors = 0;
	/* Next: the same kind on the other shard's partitions, then the next
	 * kind. From a task, so the stack unwinds between phases. */
	if (b.mode == 0 && b.shards > 1) {
		b.mode = 1;
	} else {
		b.mode = 0;
		b.kind++;
	}
	if (b.kind == K__COUNT || b.failed) {
		sm_runtime_stop();
		return;
	}
	sm_task_schedule(&b.phase_task);
}

/* ---- bench_store mem: bytes per partition, rates as the table grows ---- */

#define MEM_KEY_LEN 10 /* cassandra-stress's keys */
#define WIDE_PARTS 100
#define WIDE_ROWS 1000
#define COLL_PARTS 100000
#define COLL_ELEMS 10
#define RATE_WRITES 100000
#define RATE_READS 200000

static int64_t
mem_in_use(void)
{
	struct sm_sw_stats st;

	sm_sw_stats_read(sm_shard_stats(0), &st);
	return st.mem_in_use;
}

static void
mem_done(struct sm_store_req *r)
{
	if (r->result < 0 && b.errors++ == 0)
		snprintf(b.first_err, sizeof(b.first_err), "%d %s", r->result, r->err);
	b.pending = false;
}

/* Run @r on this, the only, shard: it completes before submit returns. */
static void
mem_submit(struct sm_store_req *r)
{
	r->done = mem_done;
	b.pending = true;
	sm_store_submit(r);
	if (b.pending && b.errors++ == 0)
		snprintf(b.first_err, sizeof(b.first_err), "a request did not complete in place");
}

/* Partition key @i: 10 bytes, as a 2-byte prefix and @i big-endian. */
static void
mem_key(uint8_t kb[MEM_KEY_LEN], struct sm_key *k, uint64_t i)
{
	unsigned j;

	kb[0] = 'K';
	kb[1] = '0';
	for (j = 0; j < 8; j++)
		kb[2 + j] = (uint8_t)(i >> (56 - 8 * j));
	k->n = 1;
	k->part[0].p = kb;
	k->part[0].len = MEM_KEY_LEN;
}

/* INSERT into @t at partition @i (row @ck when not NULL) of b.cell[0..@nops). */
static void
mem_mutate(const struct sm_table *t, uint64_t i, const struct sm_key *ck, unsigned nops)
{
	struct sm_store_req *r = &b.req;
	uint8_t kb[MEM_KEY_LEN];

	memset(r, 0, sizeof(*r));
	r->kind = SM_REQ_MUTATE;
	r->mut.table = t;
	mem_key(kb, &r->mut.pk, i);
	if (ck != NULL)
		r->mut.ck = *ck;
	r->mut.ts = SM_TS_NOW;
	r->mut.ttl = SM_TTL_DEFAULT;
	r->mut.flags = SM_MUT_ROW_MARKER;
	r->mut.ops = b.cell;
	r->mut.nops = nops;
	mem_submit(r);
}

static void
mem_insert_std(uint64_t i)
{
	unsigned c;

	for (c = 0; c < NCOLS; c++) {
		b.cell[c].col = (uint16_t)(1 + c);
		b.cell[c].kind = SM_CELL_SET;
		b.cell[c].null = false;
		b.cell[c].value.p = b.vals[c];
		b.cell[c].value.len = VAL_LEN;
		memset(b.vals[c], (int)(i + c), VAL_LEN);
	}
	mem_mutate(b.cf, i, NULL, NCOLS);
}

static void
mem_read_std(uint64_t i)
{
	struct sm_store_req *r = &b.req;
	uint8_t kb[MEM_KEY_LEN];
	unsigned c;

	memset(r, 0, sizeof(*r));
	for (c = 0; c <= NCOLS; c++)
		b.cols[c] = (uint16_t)c;
	r->kind = SM_REQ_SELECT;
	r->sel.table = b.cf;
	mem_key(kb, &r->sel.pk, i);
	r->sel.cols = b.cols;
	r->sel.ncols = 1 + NCOLS;
	r->sel.sink.row = count_row;
	mem_submit(r);
}

static void
be32_put(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* INSERT INTO wide (pk, ck, v) VALUES (@i, @row, 34 bytes) */
static void
mem_insert_wide(uint64_t i, uint32_t row)
{
	uint8_t ckb[4];
	struct sm_key ck = { .n = 1 };

	be32_put(ckb, row);
	ck.part[0].p = ckb;
	ck.part[0].len = 4;
	memset(&b.cell[0], 0, sizeof(b.cell[0]));
	b.cell[0].col = 2;
	b.cell[0].kind = SM_CELL_SET;
	b.cell[0].value.p = b.vals[0];
	b.cell[0].value.len = VAL_LEN;
	mem_mutate(b.wide, i, &ck, 1);
}

/*
 * INSERT INTO coll (pk, m, s) VALUES (@i, {10 entries of an 8-byte key and
 * a 16-byte value}, {10 ints}): whole collections, serialized.
 */
static void
mem_insert_coll(uint64_t i)
{
	static uint8_t mv[4 + COLL_ELEMS * (4 + 8 + 4 + 16)], sv[4 + COLL_ELEMS * (4 + 4)];
	size_t mo = 4, so = 4;
	unsigned e;

	be32_put(mv, COLL_ELEMS);
	be32_put(sv, COLL_ELEMS);
	for (e = 0; e < COLL_ELEMS; e++) {
		be32_put(mv + mo, 8);
		snprintf((char *)mv + mo + 4, 9, "key%05u", e);
		be32_put(mv + mo + 12, 16);
		memset(mv + mo + 16, 'a' + (int)((i + e) % 26), 16);
		mo += 4 + 8 + 4 + 16;
		be32_put(sv + so, 4);
		be32_put(sv + so + 4, (uint32_t)(i * COLL_ELEMS + e));
		so += 8;
	}
	memset(b.cell, 0, 2 * sizeof(b.cell[0]));
	b.cell[0].col = 1;
	b.cell[0].kind = SM_CELL_SET;
	b.cell[0].value.p = mv;
	b.cell[0].value.len = (uint32_t)mo;
	b.cell[1].col = 2;
	b.cell[1].kind = SM_CELL_SET;
	b.cell[1].value.p = sv;
	b.cell[1].value.len = (uint32_t)so;
	mem_mutate(b.coll, i, NULL, 2);
}

/* The calling thread's CPU time in ns. */
static uint64_t
cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double
mem_rate(uint64_t n, uint64_t ns)
{
	return ns ? n * 1e6 / (double)ns : 0; /* thousands per second */
}

static void
mem_task_fn(void *arg)
{
	static const uint64_t levels[] = { 100000, 1000000, 5000000, 20000000 };
	struct counters c0, c1;
	uint64_t i, n = 0, t0, rng = 0x9E3779B97F4A7C15ull;
	int64_t m0;
	unsigned l, row;

	(void)arg;
	printf("\nbench_store mem: 1 shard; data per partition: standard1 %u bytes (key %u + "
	       "5 x %u), wide %u rows x (4 + %u), collections %u map entries of 8 + 16 and %u "
	       "set ints\n",
	       MEM_KEY_LEN + NCOLS * VAL_LEN, MEM_KEY_LEN, VAL_LEN, WIDE_ROWS, VAL_LEN, COLL_ELEMS,
	       COLL_ELEMS);
	printf("%-24s %10s %14s %12s %10s\n", "table", "partitions", "bytes/partition", "bytes/row",
	       "allocs/p");
	/* The wide partitions and the collections first: they stay small. */
	m0 = mem_in_use();
	counters_now(&c0);
	for (i = 0; i < WIDE_PARTS; i++)
		for (row = 0; row < WIDE_ROWS; row++)
			mem_insert_wide(i, row);
	counters_now(&c1);
	printf("%-24s %10u %14.1f %12.1f %10.2f\n", "wide (1,000 rows)", WIDE_PARTS,
	       (double)(mem_in_use() - m0) / WIDE_PARTS,
	       (double)(mem_in_use() - m0) / (WIDE_PARTS * WIDE_ROWS),
	       (double)(c1.allocs - c0.allocs - (c1.frees - c0.frees)) / WIDE_PARTS);
	m0 = mem_in_use();
	counters_now(&c0);
	for (i = 0; i < COLL_PARTS; i++)
		mem_insert_coll(i);
	counters_now(&c1);
	printf("%-24s %10u %14.1f %12s %10.2f\n", "collections (map+set)", COLL_PARTS,
	       (double)(mem_in_use() - m0) / COLL_PARTS, "-",
	       (double)(c1.allocs - c0.allocs - (c1.frees - c0.frees)) / COLL_PARTS);
	m0 = mem_in_use();
	counters_now(&c0);
	printf("%-24s %10s %14s %12s %10s %12s %12s\n", "standard1", "partitions",
	       "bytes/partition", "", "allocs/p", "insert k/cpus", "read k/cpus");
	for (l = 0; l < SM_ARRAY_SIZE(levels) && levels[l] <= b.mem_max && !b.errors; l++) {
		uint64_t wns, rns;

		for (; n < levels[l] - RATE_WRITES; n++)
			mem_insert_std(n);
		t0 = cpu_ns();
		for (; n < levels[l]; n++)
			mem_insert_std(n);
		wns = cpu_ns() - t0;
		counters_now(&c1);
		b.rows = 0;
		b.bad_rows = 0;
		t0 = cpu_ns();
		for (i = 0; i < RATE_READS; i++) {
			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			mem_read_std(rng % n);
		}
		rns = cpu_ns() - t0;
		printf("%-24s %10" PRIu64 " %14.1f %12s %10.2f %12.1f %12.1f\n", "", n,
		       (double)(mem_in_use() - m0) / (double)n, "",
		       (double)(c1.allocs - c0.allocs - (c1.frees - c0.frees)) / (double)n,
		       mem_rate(RATE_WRITES, wns), mem_rate(RATE_READS, rns));
		if (b.rows != RATE_READS || b.bad_rows) {
			fprintf(stderr, "bench_store: %" PRIu64 " good rows of %u reads\n",
				b.rows - b.bad_rows, RATE_READS);
			b.failed = 1;
			break;
		}
	}
	if (l < SM_ARRAY_SIZE(levels))
		printf("(levels above %" PRIu64 " partitions skipped: give a larger maximum)\n",
		       b.mem_max);
	if (b.errors) {
		fprintf(stderr, "bench_store: %u failed operations, the first: %s\n", b.errors,
			b.first_err);
		b.failed = 1;
	}
	sm_runtime_stop();
}

/* ---- runtime ---- */

static int
shard_init(unsigned shard, void *arg)
{
	int ret;

	(void)arg;
	ret = sm_store_shard_init();
	if (ret < 0)
		return ret;
	if (shard == 0) {
		make_keys();
		sm_task_init(&b.phase_task, phase_task_fn, NULL);
		b.ddl_step = 0;
		ddl_next(NULL);
	}
	return 0;
}

static void
shard_fini(unsigned shard, void *arg)
{
	(void)shard;
	(void)arg;
	sm_store_shard_fini();
}

/* The CPUs this process may use, read before the first run: the runtime
 * pins the calling thread as shard 0 and leaves it pinned. */
static cpu_set_t allowed;

static unsigned
cpus_allowed(void)
{
	return (unsigned)CPU_COUNT(&allowed);
}

/* @mem_max: bench_store mem up to that many partitions; 0: the per-op table. */
static int
run(unsigned shards, unsigned ops, uint64_t mem_max)
{
	struct sm_runtime_opts o = {
		.smp = shards,
		.overprovisioned = shards > cpus_allowed(),
		/* Shards sharing a CPU must not spin: the spinner holds the
		 * CPU the other shard needs to answer. */
		.idle_poll_us = shards > cpus_allowed() ? 0 : IDLE_POLL_US,
		.shard_init = shard_init,
		.shard_fini = shard_fini,
	};
	char err[256];
	unsigned s;
	int ret;

	memset(&b, 0, sizeof(b));
	b.shards = shards;
	b.ops = ops;
	b.mem = mem_max != 0;
	b.mem_max = mem_max;
	for (s = 0; s < 2; s++) {
		b.keys[s] = malloc((size_t)KEY_LEN * ops);
		if (b.keys[s] == NULL) {
			fprintf(stderr, "bench_store: out of memory for %u keys\n", ops);
			return 1;
		}
	}
	if (!b.mem) {
		printf("\nbench_store: %u shard%s%s on %u CPUs, %u ops per kind, one in flight "
		       "from shard 0, idle_poll_us %u\n",
		       shards, shards > 1 ? "s" : "", o.overprovisioned ? " (overprovisioned)" : "",
		       cpus_allowed(), ops, o.idle_poll_us);
		printf("%-12s %-9s %7s %9s %9s %9s %8s %9s %9s %9s\n", "kind", "partition", "ops",
		       "allocs/op", "frees/op", "tasks/op", "hops/op", "xmsgs/op", "ns/op",
		       "sleeps/op");
	}
	ret = sm_runtime_run(&o, err, sizeof(err));
	/* Unpin this thread again for the next run. */
	sched_setaffinity(0, sizeof(allowed), &allowed);
	for (s = 0; s < 2; s++)
		free(b.keys[s]);
	if (ret < 0) {
		fprintf(stderr, "bench_store: %s\n", err);
		return 1;
	}
	return b.failed;
}

static int
parse_uint(const char *s, const char *what, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || *end != '\0' || v == 0 || v > 100000000) {
		fprintf(stderr, "bench_store: bad %s '%s': give a positive number\n", what, s);
		return -EINVAL;
	}
	*out = (unsigned)v;
	return 0;
}

int
main(int argc, char **argv)
{
	unsigned shards = 0, ops = 20000;
	int ret = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0) {
		CPU_ZERO(&allowed);
		CPU_SET(0, &allowed);
	}
	if (argc > 3 || (argc > 1 && strcmp(argv[1], "--help") == 0)) {
		fprintf(stderr, "usage: bench_store [shards] [ops per kind]\n"
				"       bench_store mem [max partitions]\n"
				"  without arguments: 1 shard, then 2 shards, 20000 ops\n"
				"  mem: bytes per partition, and rates at 0.1, 1, 5 (and 20) "
				"million partitions up to the maximum (default 5000000)\n");
		return argc > 3 ? 2 : 0;
	}
	if (argc > 1 && strcmp(argv[1], "mem") == 0) {
		if (argc > 2 && parse_uint(argv[2], "max partitions", &ops) < 0)
			return 2;
		return run(1, 0, argc > 2 ? ops : 5000000);
	}
	if (argc > 1 && parse_uint(argv[1], "shard count", &shards) < 0)
		return 2;
	if (argc > 2 && parse_uint(argv[2], "ops per kind", &ops) < 0)
		return 2;
	if (shards != 0)
		return run(shards, ops, 0);
	ret |= run(1, ops, 0);
	ret |= run(2, ops, 0);
	return ret;
}
