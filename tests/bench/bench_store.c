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
 */

#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
		b.ddl.kind = SM_DDL_CREATE_TABLE;
		b.ddl.table.ks = "ks";
		b.ddl.table.name = "cf";
		b.ddl.table.cols = cf_cols;
		b.ddl.table.ncols = SM_ARRAY_SIZE(cf_cols);
		break;
	case 2:
		b.ddl.kind = SM_DDL_CREATE_TABLE;
		b.ddl.table.ks = "ks";
		b.ddl.table.name = "cf_counter";
		b.ddl.table.cols = cnt_cols;
		b.ddl.table.ncols = SM_ARRAY_SIZE(cnt_cols);
		break;
	default:
		b.cf = sm_catalog_table(sm_store_catalog(), "ks", "cf");
		b.cnt = sm_catalog_table(sm_store_catalog(), "ks", "cf_counter");
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

static int
run(unsigned shards, unsigned ops)
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
	for (s = 0; s < 2; s++) {
		b.keys[s] = malloc((size_t)KEY_LEN * ops);
		if (b.keys[s] == NULL) {
			fprintf(stderr, "bench_store: out of memory for %u keys\n", ops);
			return 1;
		}
	}
	printf("\nbench_store: %u shard%s%s on %u CPUs, %u ops per kind, one in flight from "
	       "shard 0, idle_poll_us %u\n",
	       shards, shards > 1 ? "s" : "", o.overprovisioned ? " (overprovisioned)" : "",
	       cpus_allowed(), ops, o.idle_poll_us);
	printf("%-12s %-9s %7s %9s %9s %9s %8s %9s %9s %9s\n", "kind", "partition", "ops",
	       "allocs/op", "frees/op", "tasks/op", "hops/op", "xmsgs/op", "ns/op", "sleeps/op");
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
				"  without arguments: 1 shard, then 2 shards, 20000 ops\n");
		return argc > 3 ? 2 : 0;
	}
	if (argc > 1 && parse_uint(argv[1], "shard count", &shards) < 0)
		return 2;
	if (argc > 2 && parse_uint(argv[2], "ops per kind", &ops) < 0)
		return 2;
	if (shards != 0)
		return run(shards, ops);
	ret |= run(1, ops);
	ret |= run(2, ops);
	return ret;
}
