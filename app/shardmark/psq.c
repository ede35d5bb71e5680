/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shardmark perf-simple-query: ScyllaDB's in-process simple-query benchmark
 * (test/perf/perf_simple_query.cc), with its CQL frontend and the Alternator
 * frontend it had until 2025 (--alternator MODE).
 *
 * Same work: keyspace ks, table cf ("KEY" blob, "C0".."C4" blob of 34 bytes,
 * counters with --counters, "CC" map<blob, blob> with --collection), the
 * same prepared statements through the CQL executor, the same 8-byte
 * big-endian keys, drawn by each shard from the keys it owns
 * (--shard-aware, the default). The Alternator frontend sends the same
 * UpdateItem/GetItem/DeleteItem JSON requests to the executor (JSON parsing
 * and the JSON answer included, no HTTP). No network, as in ScyllaDB.
 *
 * Workers are tasks on each shard's reactor (--concurrency per shard), each
 * keeping one request in flight. An iteration lasts one second
 * (--duration iterations) or --operations-per-shard requests; per-op
 * figures are the sum over shards of counter deltas divided by the
 * requests done, as ScyllaDB computes them.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/utsname.h>
#include <time.h>

#if __has_include(<valgrind/callgrind.h>)
/* Instruction counts without a PMU: tests/bench/insns-per-op.sh runs this
 * under callgrind with collection off, and the measured iterations turn it on. */
#include <valgrind/callgrind.h>
#define MEASURE_ON() CALLGRIND_TOGGLE_COLLECT
#define MEASURE_OFF() CALLGRIND_TOGGLE_COLLECT
#else
#define MEASURE_ON() ((void)0)
#define MEASURE_OFF() ((void)0)
#endif

#include "app.h"
#include "sm_alternator.h"
#include "sm_bench.h"
#include "sm_cql_exec.h"
#include "sm_cql_proto.h"
#include "sm_cql_system.h"
#include "sm_store.h"

#define MAX_ITERATIONS 256
#define VALUE_LEN 34

/* write_gsi: writes to a table with a GSI on C0 (perf-alternator's);
 * write_ttl: writes with an expiration attribute to a table with TTL on it. */
enum psq_mode { MODE_READ, MODE_WRITE, MODE_DELETE, MODE_WRITE_RMW, MODE_WRITE_GSI, MODE_WRITE_TTL };

static const char *const mode_names[] = {
	[MODE_READ] = "read",		[MODE_WRITE] = "write",
	[MODE_DELETE] = "delete",	[MODE_WRITE_RMW] = "write_rmw",
	[MODE_WRITE_GSI] = "write_gsi", [MODE_WRITE_TTL] = "write_ttl",
};

struct psq_worker {
	struct psq_shard *sh;
	unsigned idx;
	struct sm_task task;
	uint8_t body[64]; /* CQL EXECUTE body */
	size_t body_len;
	char json[1024]; /* Alternator request */
	size_t json_len;
	const char *alt_op;
	bool populating;
};

struct psq_shard {
	/* read by shard 0 */
	uint64_t ops;
	uint64_t errors;
	unsigned active;
	/* the shard's own */
	bool running;
	uint64_t target; /* ops for this phase, 0: until stopped */
	uint64_t issued;
	struct psq_worker *workers;
	unsigned nworkers;
	uint64_t *keys;
	unsigned nkeys;
	uint64_t rng;
	struct sm_cql_conn *conn;
	char errmsg[256];
	bool populate;	   /* this phase writes every owned key once */
	unsigned next_key; /* population cursor */
} SM_CACHE_ALIGNED;

struct psq_ctx {
	struct sm_config cfg;
	/* options, ScyllaDB's names and defaults */
	uint64_t seed;
	bool seed_given;
	unsigned partitions;
	bool write, del, counters;
	unsigned collection;
	unsigned duration;
	uint64_t ops_per_shard;
	unsigned concurrency;
	bool single_key;
	bool shard_aware;
	uint16_t cl;
	const char *cl_name;
	bool stop_on_error;
	const char *timeout;
	const char *json_path;
	bool alternator;
	enum sm_alt_isolation iso;
	const char *iso_name;
	const char *workload;
	enum psq_mode mode;
	int64_t expiration; /* write_ttl's expiration attribute */
	/* runtime */
	unsigned nshards;
	struct psq_shard *shards;
	struct sm_cql_cluster cluster;
	struct sm_cql_exec_config exec_cfg;
	struct sm_cql_service svc;
	struct sm_alternator_config alt_cfg;
	uint8_t stmt_id[16];
	uint8_t populate_id[16];
	struct sm_task control;
	int step;
	unsigned iter;
	struct sm_timer idle_timer; /* polls for idle workers */
	struct sm_timer sec_timer;  /* ends a one-second iteration */
	struct sm_shard_snapshot *s0, *s1;
	uint64_t *ops0, *err0, *ops_first;
	uint64_t t0;
	struct sm_bench_result results[MAX_ITERATIONS];
	struct sm_shard_snapshot *shard_first, *shard_last; /* the whole measurement */
	uint64_t *shard_ops;
	int result;
	char setup_err[512];
	/* shard 0's setup requests */
	struct sm_cql_conn *ctl_conn;
	char ctl_text[2048];
	uint8_t ctl_body[4096];
};

static struct psq_ctx *psq;

/* ---- values ---- */

static const char *
value_hex(unsigned col)
{
	/* Five fixed 34-byte values, as ScyllaDB's C0..C4 (their bytes do not matter). */
	static char hex[5][2 * VALUE_LEN + 3];
	unsigned i;

	if (hex[col][0] == '\0') {
		uint64_t x = 0x9e3779b97f4a7c15ull * (col + 1);

		hex[col][0] = '0';
		hex[col][1] = 'x';
		for (i = 0; i < VALUE_LEN; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			snprintf(hex[col] + 2 + 2 * i, 3, "%02x", (unsigned)(x & 0xff));
		}
	}
	return hex[col];
}

static uint64_t
rng_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

static void
put_be64(uint8_t *p, uint64_t v)
{
	unsigned i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (56 - 8 * i));
}

/* The owner of key @seq under the frontend's key encoding. */
static unsigned
owner_of(uint64_t seq)
{
	struct sm_key k;
	uint8_t b[8];
	char text[24];

	k.n = 1;
	if (psq->alternator) {
		snprintf(text, sizeof(text), "%" PRIu64, seq);
		k.part[0].p = (const uint8_t *)text;
		k.part[0].len = (uint32_t)strlen(text);
	} else {
		put_be64(b, seq);
		k.part[0].p = b;
		k.part[0].len = 8;
	}
	return sm_key_shard(&k);
}

/* ---- requests ---- */

static void
worker_issue(void *arg);

static uint64_t
pick_key(struct psq_shard *sh, struct psq_worker *w)
{
	if (w->populating)
		return sh->keys[sh->next_key++];
	if (psq->single_key)
		return 0;
	if (psq->shard_aware && sh->nkeys > 0)
		return sh->keys[rng_next(&sh->rng) % sh->nkeys];
	return rng_next(&sh->rng) % psq->partitions;
}

static void
op_done(struct psq_worker *w, bool ok, const char *msg, size_t len)
{
	struct psq_shard *sh = w->sh;

	sh->ops++;
	if (!ok) {
		sh->errors++;
		if (sh->errmsg[0] == '\0')
			snprintf(sh->errmsg, sizeof(sh->errmsg), "%.*s", (int)SM_MIN(len, 200u),
				 msg);
	}
	/* Next request from a task: a local request may complete inline. */
	sm_task_schedule(&w->task);
}

static void
cql_reply(void *ctx, const uint8_t *frame, size_t len)
{
	struct psq_shard *sh = ctx;
	struct sm_cql_frame_header h;
	const char *reason;
	unsigned idx;

	if (sm_cql_frame_header_parse(frame, len, true, &h, &reason) < 0 || h.stream < 0 ||
	    (unsigned)h.stream >= sh->nworkers)
		return;
	idx = (unsigned)h.stream;
	/* An ERROR body: code, then the message as a [string]. */
	if (h.opcode == SM_CQL_OP_ERROR && len >= SM_CQL_HEADER_LEN + 6)
		op_done(&sh->workers[idx], false, (const char *)frame + SM_CQL_HEADER_LEN + 6,
			len - SM_CQL_HEADER_LEN - 6);
	else
		op_done(&sh->workers[idx], h.opcode == SM_CQL_OP_RESULT, "unexpected reply", 16);
}

static void
alt_reply(void *ctx, int status, const char *json, size_t len)
{
	op_done(ctx, status == 200, json, len);
}

static void
build_alt(struct psq_worker *w, uint64_t seq, bool write)
{
	char v[VALUE_LEN + 1];
	int n;

	memset(v, 'x', VALUE_LEN);
	v[VALUE_LEN] = '\0';
	if (psq->mode == MODE_WRITE_TTL) {
		/* an hour ahead: the scanner reads every item, deletes none */
		w->alt_op = "UpdateItem";
		n = snprintf(
			w->json, sizeof(w->json),
			"{\"TableName\":\"alternator_table\",\"Key\":{\"p\":{\"S\":\"%" PRIu64
			"\"}},\"UpdateExpression\":\"set C0 = :C0, C1 = :C1, C2 = :C2, C3 = :C3, "
			"C4 = :C4, expiration = :e\",\"ExpressionAttributeValues\":{\":C0\":{\"S\":"
			"\"%s\"},\":C1\":{\"S\":\"%s\"},\":C2\":{\"S\":\"%s\"},\":C3\":{\"S\":"
			"\"%s\"},\":C4\":{\"S\":\"%s\"},\":e\":{\"N\":\"%lld\"}},"
			"\"ReturnValues\":\"NONE\"}",
			seq, v, v, v, v, v, (long long)psq->expiration);
	} else if (write || psq->mode == MODE_WRITE || psq->mode == MODE_WRITE_GSI) {
		w->alt_op = "UpdateItem";
		n = snprintf(
			w->json, sizeof(w->json),
			"{\"TableName\":\"alternator_table\",\"Key\":{\"p\":{\"S\":\"%" PRIu64
			"\"}},\"UpdateExpression\":\"set C0 = :C0, C1 = :C1, C2 = :C2, C3 = :C3, "
			"C4 = :C4\",\"ExpressionAttributeValues\":{\":C0\":{\"S\":\"%s\"},"
			"\":C1\":{\"S\":\"%s\"},\":C2\":{\"S\":\"%s\"},\":C3\":{\"S\":\"%s\"},"
			"\":C4\":{\"S\":\"%s\"}},\"ReturnValues\":\"NONE\"}",
			seq, v, v, v, v, v);
	} else if (psq->mode == MODE_WRITE_RMW) {
		/* perf-alternator's write_rmw: a condition makes it read-modify-write */
		w->alt_op = "UpdateItem";
		n = snprintf(w->json, sizeof(w->json),
			     "{\"TableName\":\"alternator_table\",\"Key\":{\"p\":{\"S\":\"%" PRIu64
			     "\"}},\"UpdateExpression\":\"set C0 = :C0, C1 = :C1\","
			     "\"ConditionExpression\":\"(NOT attribute_exists(C2)) OR size(C3) <= "
			     ":val1\",\"ExpressionAttributeValues\":{\":C0\":{\"S\":\"%s\"},"
			     "\":C1\":{\"S\":\"%s\"},\":val1\":{\"N\":\"100\"}},"
			     "\"ReturnValues\":\"NONE\"}",
			     seq, v, v);
	} else if (psq->mode == MODE_DELETE) {
		w->alt_op = "DeleteItem";
		n = snprintf(w->json, sizeof(w->json),
			     "{\"TableName\":\"alternator_table\",\"Key\":{\"p\":{\"S\":\"%" PRIu64
			     "\"}},\"ReturnValues\":\"NONE\"}",
			     seq);
	} else {
		w->alt_op = "GetItem";
		n = snprintf(w->json, sizeof(w->json),
			     "{\"TableName\":\"alternator_table\",\"Key\":{\"p\":{\"S\":\"%" PRIu64
			     "\"}},\"ConsistentRead\":false,\"ReturnConsumedCapacity\":\"TOTAL\"}",
			     seq);
	}
	w->json_len = (size_t)n;
}

static void
worker_issue(void *arg)
{
	struct psq_worker *w = arg;
	struct psq_shard *sh = w->sh;
	uint64_t seq;

	if (!sh->running || (psq->stop_on_error && sh->errors > 0) ||
	    (sh->target != 0 && sh->issued >= sh->target) ||
	    (w->populating && sh->next_key >= sh->nkeys)) {
		/* shard 0 polls for every shard idle */
		__atomic_sub_fetch(&sh->active, 1, __ATOMIC_RELEASE);
		return;
	}
	sh->issued++;
	seq = pick_key(sh, w);
	if (psq->alternator) {
		build_alt(w, seq, w->populating);
		if (sm_alternator_execute(w->alt_op, w->json, w->json_len, alt_reply, w) < 0)
			op_done(w, false, "out of memory", 13);
		return;
	}
	/* the key is the last 8 bytes of the EXECUTE body */
	put_be64(w->body + w->body_len - 8, seq);
	if (w->populating) {
		memcpy(w->body + 2, psq->populate_id, 16);
		sm_cql_local_request(sh->conn, (int16_t)w->idx, SM_CQL_OP_EXECUTE, w->body,
				     w->body_len);
		memcpy(w->body + 2, psq->stmt_id, 16);
		return;
	}
	sm_cql_local_request(sh->conn, (int16_t)w->idx, SM_CQL_OP_EXECUTE, w->body, w->body_len);
}

/*
 * EXECUTE <id> at the consistency level with one [bytes] value of 8 bytes,
 * with SKIP_METADATA as drivers send it for a statement whose result
 * metadata they got at PREPARE (the Java and Python drivers do).
 */
static void
build_execute(struct psq_worker *w)
{
	uint8_t *p = w->body;

	*p++ = 0;
	*p++ = 16;
	memcpy(p, psq->stmt_id, 16);
	p += 16;
	*p++ = (uint8_t)(psq->cl >> 8);
	*p++ = (uint8_t)psq->cl;
	*p++ = SM_CQL_QF_VALUES | SM_CQL_QF_SKIP_METADATA;
	*p++ = 0;
	*p++ = 1;
	*p++ = 0;
	*p++ = 0;
	*p++ = 0;
	*p++ = 8;
	memset(p, 0, 8);
	p += 8;
	w->body_len = (size_t)(p - w->body);
}

/* ---- phases on each shard ---- */

struct phase {
	bool populate;
	uint64_t target;
};

static void
phase_start(void *arg)
{
	const struct phase *ph = arg;
	struct psq_shard *sh = &psq->shards[sm_shard_id()];
	unsigned i;

	sh->running = true;
	sh->target = ph->target;
	sh->issued = 0;
	sh->populate = ph->populate;
	sh->next_key = 0;
	for (i = 0; i < sh->nworkers; i++) {
		sh->workers[i].populating = ph->populate;
		sm_task_schedule(&sh->workers[i].task);
	}
}

static void
phase_stop(void *arg)
{
	(void)arg;
	psq->shards[sm_shard_id()].running = false;
}

static bool
all_idle(void)
{
	unsigned i;

	for (i = 0; i < psq->nshards; i++)
		if (__atomic_load_n(&psq->shards[i].active, __ATOMIC_ACQUIRE) != 0)
			return false;
	return true;
}

static void
broadcast(void (*fn)(void *), void *arg)
{
	unsigned i;

	for (i = 0; i < psq->nshards; i++)
		sm_submit_to(i, fn, arg, NULL);
}

/*
 * Start a phase on every shard. Shard 0 marks every worker busy before the
 * messages leave, so that it cannot see a shard idle that has not started.
 */
static void
start_phase(struct phase *ph)
{
	unsigned i;

	for (i = 0; i < psq->nshards; i++)
		__atomic_store_n(&psq->shards[i].active, psq->shards[i].nworkers, __ATOMIC_RELEASE);
	broadcast(phase_start, ph);
}

/* ---- setup on shard 0: schema and prepared statements ---- */

static void
control_step(void *arg);

static int16_t ctl_stream;
static int ctl_status;
static char ctl_msg[512];
static uint8_t ctl_id[16];

static void
ctl_cql_reply(void *ctx, const uint8_t *frame, size_t len)
{
	struct sm_cql_frame_header h;
	struct sm_cql_response resp;
	const char *reason;

	(void)ctx;
	ctl_status = -EIO;
	ctl_msg[0] = '\0';
	if (sm_cql_frame_header_parse(frame, len, true, &h, &reason) == 0 &&
	    sm_cql_response_decode(&h, frame + SM_CQL_HEADER_LEN, len - SM_CQL_HEADER_LEN, 0, &resp,
				   &reason) == 0) {
		if (resp.opcode == SM_CQL_OP_ERROR) {
			snprintf(ctl_msg, sizeof(ctl_msg), "%.*s", (int)resp.u.error.message.len,
				 (const char *)resp.u.error.message.p);
		} else {
			ctl_status = 0;
			if (resp.u.result.kind == SM_CQL_RESULT_PREPARED &&
			    resp.u.result.u.prepared.id.len == 16)
				memcpy(ctl_id, resp.u.result.u.prepared.id.p, 16);
		}
	}
	sm_task_schedule(&psq->control);
}

static void
ctl_alt_reply(void *ctx, int status, const char *json, size_t len)
{
	(void)ctx;
	ctl_status = status == 200 ? 0 : -EIO;
	snprintf(ctl_msg, sizeof(ctl_msg), "%.*s", (int)SM_MIN(len, 400u), json);
	sm_task_schedule(&psq->control);
}

static void
ctl_query(const char *text)
{
	size_t len = strlen(text);
	uint8_t *p = psq->ctl_body;

	snprintf(psq->ctl_text, sizeof(psq->ctl_text), "%s", text);
	p[0] = (uint8_t)(len >> 24);
	p[1] = (uint8_t)(len >> 16);
	p[2] = (uint8_t)(len >> 8);
	p[3] = (uint8_t)len;
	memcpy(p + 4, text, len);
	p += 4 + len;
	*p++ = 0;
	*p++ = SM_CQL_QUORUM;
	*p++ = 0;
	sm_cql_local_request(psq->ctl_conn, ctl_stream++, SM_CQL_OP_QUERY, psq->ctl_body,
			     (size_t)(p - psq->ctl_body));
}

static void
ctl_prepare(const char *text)
{
	size_t len = strlen(text);
	uint8_t *p = psq->ctl_body;

	snprintf(psq->ctl_text, sizeof(psq->ctl_text), "%s", text);
	p[0] = (uint8_t)(len >> 24);
	p[1] = (uint8_t)(len >> 16);
	p[2] = (uint8_t)(len >> 8);
	p[3] = (uint8_t)len;
	memcpy(p + 4, text, len);
	sm_cql_local_request(psq->ctl_conn, ctl_stream++, SM_CQL_OP_PREPARE, psq->ctl_body,
			     len + 4);
}

static void
statement_text(char *buf, size_t len, bool populate)
{
	const char *t = psq->timeout;
	char using[96] = "", cc[64] = "", ccv[4096] = "";
	size_t off = 0;
	unsigned i;

	if (t != NULL)
		snprintf(using, sizeof(using), "USING TIMEOUT %s ", t);
	if (psq->collection > 0) {
		snprintf(cc, sizeof(cc), ", \"CC\"");
		off = (size_t)snprintf(ccv, sizeof(ccv), ", \"CC\" = {");
		for (i = 0; i < psq->collection && off < sizeof(ccv) - 128; i++)
			off += (size_t)snprintf(ccv + off, sizeof(ccv) - off, "%s0x%016x: %s",
						i ? ", " : "", i, value_hex(0));
		snprintf(ccv + off, sizeof(ccv) - off, "}");
	}
	if (psq->counters && (populate || psq->mode == MODE_WRITE)) {
		snprintf(buf, len,
			 "UPDATE ks.cf %sSET \"C0\" = \"C0\" + 1,\"C1\" = \"C1\" + 2,\"C2\" = "
			 "\"C2\" + "
			 "3,\"C3\" = \"C3\" + 4,\"C4\" = \"C4\" + 5 WHERE \"KEY\" = ?",
			 using);
	} else if (populate || psq->mode == MODE_WRITE) {
		snprintf(buf, len,
			 "UPDATE ks.cf %sSET \"C0\" = %s,\"C1\" = %s,\"C2\" = %s,\"C3\" = "
			 "%s,\"C4\" = "
			 "%s%s WHERE \"KEY\" = ?",
			 using, value_hex(0), value_hex(1), value_hex(2), value_hex(3),
			 value_hex(4), ccv);
	} else if (psq->mode == MODE_DELETE) {
		snprintf(buf, len,
			 "DELETE \"C0\", \"C1\", \"C2\", \"C3\", \"C4\"%s FROM ks.cf %sWHERE "
			 "\"KEY\" = ?",
			 cc, using);
	} else {
		snprintf(buf, len,
			 "select \"C0\", \"C1\", \"C2\", \"C3\", \"C4\"%s from ks.cf where \"KEY\" "
			 "= ?%s%s",
			 cc, t ? " using timeout " : "", t ? t : "");
	}
}

/* ---- measurement on shard 0 ---- */

static double
per_op(uint64_t d, uint64_t ops)
{
	return ops ? (double)d / (double)ops : 0;
}

static void
snap_all(struct sm_shard_snapshot *s, uint64_t *ops, uint64_t *errs)
{
	unsigned i;

	for (i = 0; i < psq->nshards; i++) {
		sm_shard_snapshot(i, &s[i]);
		ops[i] = SM_READ_ONCE(psq->shards[i].ops);
		if (errs)
			errs[i] = SM_READ_ONCE(psq->shards[i].errors);
	}
}

static void
iteration_result(uint64_t wall_ns, struct sm_bench_result *r)
{
	uint64_t ops = 0, allocs = 0, tasks = 0, insns = 0, cycles = 0, errs = 0, o;
	bool insns_ok = true, cycles_ok = true;
	unsigned i;
	uint64_t errs_now;

	for (i = 0; i < psq->nshards; i++) {
		o = SM_READ_ONCE(psq->shards[i].ops) - psq->ops0[i];
		errs_now = SM_READ_ONCE(psq->shards[i].errors);
		ops += o;
		errs += errs_now - psq->err0[i];
		allocs += psq->s1[i].sw.allocs - psq->s0[i].sw.allocs;
		tasks += psq->s1[i].sw.tasks_run - psq->s0[i].sw.tasks_run;
		insns_ok = insns_ok && psq->s0[i].perf_ok[SM_PERF_INSTRUCTIONS] &&
			   psq->s1[i].perf_ok[SM_PERF_INSTRUCTIONS];
		cycles_ok = cycles_ok && psq->s0[i].perf_ok[SM_PERF_CYCLES] &&
			    psq->s1[i].perf_ok[SM_PERF_CYCLES];
		insns += psq->s1[i].perf[SM_PERF_INSTRUCTIONS] -
			 psq->s0[i].perf[SM_PERF_INSTRUCTIONS];
		cycles += psq->s1[i].perf[SM_PERF_CYCLES] - psq->s0[i].perf[SM_PERF_CYCLES];
	}
	memset(r, 0, sizeof(*r));
	r->tps = wall_ns ? (double)ops * 1e9 / (double)wall_ns : 0;
	r->allocs_per_op = per_op(allocs, ops);
	r->logallocs_per_op = 0; /* no log-structured allocator here: truly none */
	r->tasks_per_op = per_op(tasks, ops);
	r->insns_ok = insns_ok;
	r->cycles_ok = cycles_ok;
	r->insns_per_op = per_op(insns, ops);
	r->cycles_per_op = per_op(cycles, ops);
	r->errors = errs;
}

static void
print_summary(void)
{
	double v[MAX_ITERATIONS];
	struct sm_bench_stats st;
	unsigned i, n = psq->iter;

	for (i = 0; i < n; i++)
		v[i] = psq->results[i].tps;
	sm_bench_stats(v, n, &st);
	printf("\n");
	sm_bench_print_stats(stdout, "throughput", &st, true);
	for (i = 0; i < n; i++)
		v[i] = psq->results[i].insns_per_op;
	sm_bench_stats(v, n, &st);
	sm_bench_print_stats(stdout, "instructions_per_op", &st, psq->results[0].insns_ok);
	for (i = 0; i < n; i++)
		v[i] = psq->results[i].cycles_per_op;
	sm_bench_stats(v, n, &st);
	sm_bench_print_stats(stdout, "cpu_cycles_per_op", &st, psq->results[0].cycles_ok);
	printf("\n");
}

/* Why the instruction counter is unavailable, from shard 0's snapshot. */
static void
perf_reason(char *buf, size_t len)
{
	struct sm_perf p;
	unsigned k;

	memset(&p, 0, sizeof(p));
	for (k = 0; k < SM_PERF_NR; k++) {
		p.fd[k] = psq->shard_first[0].perf_ok[k] ? 0 : -1;
		p.err[k] = psq->shard_first[0].perf_err[k];
	}
	if (sm_perf_unavailable_reason(&p, SM_PERF_INSTRUCTIONS, buf, len) == NULL)
		snprintf(buf, len, "the counter could not be read in every iteration");
}

/* The per-shard table over the whole measurement (our addition). */
static void
print_shards(void)
{
	static const enum sm_perf_counter hw[] = { SM_PERF_INSTRUCTIONS, SM_PERF_CYCLES,
						   SM_PERF_CACHE_MISSES, SM_PERF_BRANCH_MISSES };
	char reason[200];
	unsigned i, k;
	bool any_na = false;

	printf("%-6s %12s %12s %9s %9s %10s %10s %10s %10s %9s\n", "shard", "ops", "tps",
	       "allocs/op", "tasks/op", "insns/op", "cycles/op", "cmiss/op", "bmiss/op", "hops/op");
	for (i = 0; i < psq->nshards; i++) {
		const struct sm_shard_snapshot *a = &psq->shard_first[i], *b = &psq->shard_last[i];
		uint64_t ops = psq->shard_ops[i];
		double secs = (double)(b->when_ns - a->when_ns) / 1e9;

		printf("%-6u %12" PRIu64 " %12.0f %9.3f %9.3f", i, ops, secs > 0 ? ops / secs : 0,
		       per_op(b->sw.allocs - a->sw.allocs, ops),
		       per_op(b->sw.tasks_run - a->sw.tasks_run, ops));
		for (k = 0; k < SM_ARRAY_SIZE(hw); k++) {
			if (a->perf_ok[hw[k]] && b->perf_ok[hw[k]])
				printf(" %10.1f", per_op(b->perf[hw[k]] - a->perf[hw[k]], ops));
			else {
				printf(" %10s", "n/a");
				any_na = true;
			}
		}
		printf(" %9.3f\n", per_op(b->sw.hops - a->sw.hops, ops));
	}
	if (any_na) {
		perf_reason(reason, sizeof(reason));
		printf("n/a: the hardware counters cannot be read here: %s\n", reason);
	}
}

static void
write_json(void)
{
	struct sm_bench_stats st;
	const struct sm_bench_result *med;
	double v[MAX_ITERATIONS];
	unsigned i, n = psq->iter, best = 0;
	struct utsname un;
	char cpu[128];
	char date[32];
	time_t now = time(NULL);
	FILE *f;

	f = fopen(psq->json_path, "w");
	if (f == NULL) {
		fprintf(stderr, "shardmark perf-simple-query: cannot write %s: %s\n",
			psq->json_path, strerror(errno));
		return;
	}
	for (i = 0; i < n; i++)
		v[i] = psq->results[i].tps;
	sm_bench_stats(v, n, &st);
	/* median_by_throughput: the iteration whose tps is the median */
	for (i = 0; i < n; i++)
		if (psq->results[i].tps == st.median)
			best = i;
	med = &psq->results[best];
	sm_app_cpu_model(cpu, sizeof(cpu));
	uname(&un);
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S", gmtime(&now));
	fprintf(f, "{\n  \"parameters\": {\n");
	fprintf(f,
		"    \"concurrency\": %u,\n    \"partitions\": %u,\n    \"cpus\": %u,\n"
		"    \"duration\": %u,\n    \"concurrency,partitions,cpus,duration\": "
		"\"%u,%u,%u,%u\"",
		psq->concurrency, psq->partitions, psq->nshards, psq->duration, psq->concurrency,
		psq->partitions, psq->nshards, psq->duration);
	if (psq->collection)
		fprintf(f, ",\n    \"collection\": %u", psq->collection);
	fprintf(f, "\n  },\n  \"stats\": {\n");
	fprintf(f,
		"    \"allocs_per_op\": %.6f,\n    \"logallocs_per_op\": %.6f,\n"
		"    \"tasks_per_op\": %.6f,\n",
		med->allocs_per_op, med->logallocs_per_op, med->tasks_per_op);
	if (med->insns_ok)
		fprintf(f, "    \"instructions_per_op\": %.6f,\n", med->insns_per_op);
	else
		fprintf(f, "    \"instructions_per_op\": null,\n");
	if (med->cycles_ok)
		fprintf(f, "    \"cpu_cycles_per_op\": %.6f,\n", med->cycles_per_op);
	else
		fprintf(f, "    \"cpu_cycles_per_op\": null,\n");
	fprintf(f,
		"    \"mad tps\": %.6f,\n    \"max tps\": %.6f,\n    \"median tps\": %.6f,\n"
		"    \"min tps\": %.6f\n  },\n",
		st.mad, st.max, st.median, st.min);
	fprintf(f,
		"  \"test_properties\": {\n    \"type\": \"%s%s\",\n    \"frontend\": "
		"\"%s\"%s%s%s\n  },\n",
		mode_names[psq->mode], psq->counters ? "_counters" : "", psq->alternator ? "alternator" : "cql",
		psq->alternator ? ",\n    \"write_isolation\": \"" : "",
		psq->alternator ? psq->iso_name : "", psq->alternator ? "\"" : "");
	fprintf(f,
		"  \"versions\": {\n    \"shardmark\": {\n      \"version\": \"%s\",\n"
		"      \"run_date_time\": \"%s\"\n    }\n  },\n",
		SM_VERSION, date);
	fprintf(f, "  \"per_shard\": [\n");
	for (i = 0; i < psq->nshards; i++) {
		const struct sm_shard_snapshot *a = &psq->shard_first[i], *b = &psq->shard_last[i];
		uint64_t ops = psq->shard_ops[i];

		fprintf(f,
			"    {\"shard\": %u, \"ops\": %" PRIu64 ", \"allocs_per_op\": %.6f, "
			"\"tasks_per_op\": %.6f, \"hops_per_op\": %.6f, \"instructions_per_op\": ",
			i, ops, per_op(b->sw.allocs - a->sw.allocs, ops),
			per_op(b->sw.tasks_run - a->sw.tasks_run, ops),
			per_op(b->sw.hops - a->sw.hops, ops));
		if (a->perf_ok[SM_PERF_INSTRUCTIONS] && b->perf_ok[SM_PERF_INSTRUCTIONS])
			fprintf(f, "%.6f}",
				per_op(b->perf[SM_PERF_INSTRUCTIONS] -
					       a->perf[SM_PERF_INSTRUCTIONS],
				       ops));
		else
			fprintf(f, "null}");
		fprintf(f, "%s\n", i + 1 < psq->nshards ? "," : "");
	}
	fprintf(f,
		"  ],\n  \"machine\": {\n    \"cpu\": \"%s\",\n    \"kernel\": \"%s %s\",\n"
		"    \"shards\": %u,\n    \"network_stack\": \"none (in-process)\"\n  }\n}\n",
		cpu, un.sysname, un.release, psq->nshards);
	fclose(f);
}

static void
finish(int result)
{
	psq->result = result;
	broadcast(phase_stop, NULL);
	sm_runtime_stop();
}

enum {
	S_CREATE,	 /* keyspace (CQL) or table (Alternator) */
	S_CREATE_TABLE,	 /* CQL table */
	S_PREP_POPULATE, /* prepare the population statement */
	S_PREP_MEASURE,	 /* prepare the measured statement */
	S_POPULATE,	 /* start the population */
	S_POPULATED,	 /* population idle */
	S_ITER_START,	 /* start an iteration */
	S_ITER_STOPPING, /* the second is over: stop the workers */
	S_ITER_END,	 /* workers idle: one result line */
};

static void
control_next(int state)
{
	psq->step = state;
	sm_task_schedule(&psq->control);
}

/* Poll (every millisecond) until every shard's workers are idle. */
static void
wait_idle(void *arg)
{
	int next = (int)(intptr_t)arg;

	if (!all_idle()) {
		sm_timer_arm(&psq->idle_timer, 1);
		return;
	}
	control_next(next);
}

static void
arm_idle(int next)
{
	psq->idle_timer.arg = (void *)(intptr_t)next;
	sm_timer_arm(&psq->idle_timer, 1);
}

static void
second_over(void *arg)
{
	(void)arg;
	control_next(S_ITER_STOPPING);
}

static bool
setup_failed(const char *what)
{
	if (ctl_status == 0)
		return false;
	snprintf(psq->setup_err, sizeof(psq->setup_err), "%s: %.400s", what, ctl_msg);
	finish(SM_EXIT_FAIL);
	return true;
}

static void
control_step(void *arg)
{
	static struct phase ph;
	static bool ttl_asked;
	char text[8192];
	struct sm_bench_result *r;
	unsigned s, i;

	(void)arg;
	switch (psq->step) {
	case S_CREATE:
		if (psq->alternator) {
			psq->step = S_PREP_MEASURE; /* no statements to prepare */
			snprintf(psq->ctl_text, sizeof(psq->ctl_text),
				 "{\"AttributeDefinitions\":[{\"AttributeName\":\"p\","
				 "\"AttributeType\":\"S\"}%s],\"TableName\":\"alternator_table\","
				 "\"BillingMode\":\"PAY_PER_REQUEST\",\"KeySchema\":[{"
				 "\"AttributeName\":\"p\",\"KeyType\":\"HASH\"}]%s}",
				 psq->mode == MODE_WRITE_GSI
					 ? ",{\"AttributeName\":\"C0\",\"AttributeType\":\"S\"}"
					 : "",
				 psq->mode == MODE_WRITE_GSI
					 ? ",\"GlobalSecondaryIndexes\":[{\"IndexName\":\"C0_index\","
					   "\"KeySchema\":[{\"AttributeName\":\"C0\",\"KeyType\":"
					   "\"HASH\"}],\"Projection\":{\"ProjectionType\":\"ALL\"}}]"
					 : "");
			sm_alternator_execute("CreateTable", psq->ctl_text, strlen(psq->ctl_text),
					      ctl_alt_reply, NULL);
			return;
		}
		psq->step = S_CREATE_TABLE;
		ctl_query("CREATE KEYSPACE ks WITH replication = {'class': "
			  "'org.apache.cassandra.locator.NetworkTopologyStrategy', "
			  "'replication_factor': 1}");
		return;
	case S_CREATE_TABLE:
		if (setup_failed("CREATE KEYSPACE"))
			return;
		psq->step = S_PREP_POPULATE;
		snprintf(text, sizeof(text),
			 "CREATE TABLE ks.cf (\"KEY\" blob PRIMARY KEY, \"C0\" %s, \"C1\" %s, "
			 "\"C2\" "
			 "%s, \"C3\" %s, \"C4\" %s%s)",
			 psq->counters ? "counter" : "blob", psq->counters ? "counter" : "blob",
			 psq->counters ? "counter" : "blob", psq->counters ? "counter" : "blob",
			 psq->counters ? "counter" : "blob",
			 psq->collection ? ", \"CC\" map<blob, blob>" : "");
		ctl_query(text);
		return;
	case S_PREP_POPULATE:
		if (setup_failed("CREATE TABLE"))
			return;
		psq->step = S_PREP_MEASURE;
		statement_text(text, sizeof(text), true);
		ctl_prepare(text);
		return;
	case S_PREP_MEASURE:
		if (setup_failed(psq->alternator ? (ttl_asked ? "UpdateTimeToLive" : "CreateTable")
						 : "PREPARE (population)"))
			return;
		if (psq->alternator && psq->mode == MODE_WRITE_TTL && !ttl_asked) {
			ttl_asked = true;
			snprintf(psq->ctl_text, sizeof(psq->ctl_text),
				 "{\"TableName\":\"alternator_table\",\"TimeToLiveSpecification\":"
				 "{\"AttributeName\":\"expiration\",\"Enabled\":true}}");
			sm_alternator_execute("UpdateTimeToLive", psq->ctl_text,
					      strlen(psq->ctl_text), ctl_alt_reply, NULL);
			return;
		}
		if (psq->alternator) {
			control_next(S_POPULATE);
			return;
		}
		memcpy(psq->populate_id, ctl_id, 16);
		psq->step = S_POPULATE;
		statement_text(text, sizeof(text), false);
		ctl_prepare(text);
		return;
	case S_POPULATE:
		if (!psq->alternator) {
			if (setup_failed("PREPARE"))
				return;
			memcpy(psq->stmt_id, ctl_id, 16);
		}
		for (s = 0; s < psq->nshards; s++)
			for (i = 0; i < psq->shards[s].nworkers; i++)
				build_execute(&psq->shards[s].workers[i]);
		if (psq->mode == MODE_WRITE) {
			control_next(S_ITER_START);
			return;
		}
		printf("Creating %u partitions...\n", psq->partitions);
		fflush(stdout);
		ph.populate = true;
		ph.target = 0;
		start_phase(&ph);
		arm_idle(S_POPULATED);
		return;
	case S_POPULATED:
		for (s = 0; s < psq->nshards; s++) {
			if (psq->shards[s].errors > 0) {
				snprintf(psq->setup_err, sizeof(psq->setup_err), "populating: %s",
					 psq->shards[s].errmsg);
				finish(SM_EXIT_FAIL);
				return;
			}
		}
		control_next(S_ITER_START);
		return;
	case S_ITER_START:
		snap_all(psq->s0, psq->ops0, psq->err0);
		if (psq->iter == 0) {
			memcpy(psq->shard_first, psq->s0, sizeof(*psq->s0) * psq->nshards);
			memcpy(psq->ops_first, psq->ops0, sizeof(*psq->ops0) * psq->nshards);
		}
		psq->t0 = sm_now_ns();
		MEASURE_ON();
		ph.populate = false;
		ph.target = psq->ops_per_shard;
		start_phase(&ph);
		if (psq->ops_per_shard == 0)
			sm_timer_arm(&psq->sec_timer, 1000);
		else
			arm_idle(S_ITER_END);
		return;
	case S_ITER_STOPPING:
		broadcast(phase_stop, NULL);
		arm_idle(S_ITER_END);
		return;
	case S_ITER_END:
		MEASURE_OFF();
		snap_all(psq->s1, psq->shard_ops, NULL);
		r = &psq->results[psq->iter];
		iteration_result(sm_now_ns() - psq->t0, r);
		sm_bench_print_result(stdout, r);
		fflush(stdout);
		memcpy(psq->shard_last, psq->s1, sizeof(*psq->s1) * psq->nshards);
		for (s = 0; s < psq->nshards; s++)
			psq->shard_ops[s] -= psq->ops_first[s];
		psq->iter++;
		if (r->errors > 0 && psq->stop_on_error) {
			for (s = 0; s < psq->nshards; s++)
				if (psq->shards[s].errmsg[0])
					snprintf(psq->setup_err, sizeof(psq->setup_err),
						 "a request failed (--stop-on-error): %s",
						 psq->shards[s].errmsg);
			finish(SM_EXIT_FAIL);
			return;
		}
		if (psq->iter >= (psq->ops_per_shard ? 1u : psq->duration)) {
			finish(SM_EXIT_OK);
			return;
		}
		control_next(S_ITER_START);
		return;
	}
}

/* ---- shards ---- */

static int
psq_shard_init(unsigned shard, void *arg)
{
	struct psq_shard *sh = &psq->shards[shard];
	uint64_t seq;
	unsigned i, n = 0;
	int ret;

	(void)arg;
	ret = sm_store_shard_init();
	if (ret == 0)
		ret = sm_cql_system_shard_init(&psq->cluster);
	if (ret == 0)
		ret = sm_cql_exec_shard_init(&psq->exec_cfg);
	if (ret == 0)
		ret = sm_alternator_shard_init(&psq->alt_cfg);
	if (ret < 0)
		return ret;
	sh->rng = (psq->seed + shard) * 0x9e3779b97f4a7c15ull | 1;
	/* The keys this shard owns: it draws from them (--shard-aware) and populates them. */
	sh->keys = sm_calloc(psq->partitions + 1, sizeof(*sh->keys));
	sh->workers = sm_calloc(psq->concurrency, sizeof(*sh->workers));
	if (sh->keys == NULL || sh->workers == NULL)
		return -ENOMEM;
	for (seq = 0; seq < psq->partitions; seq++)
		if (owner_of(seq) == shard)
			sh->keys[n++] = seq;
	sh->nkeys = n;
	sh->nworkers = psq->concurrency;
	for (i = 0; i < sh->nworkers; i++) {
		sh->workers[i].sh = sh;
		sh->workers[i].idx = i;
		sm_task_init(&sh->workers[i].task, worker_issue, &sh->workers[i]);
	}
	sh->conn = sm_cql_local_conn(&psq->svc, cql_reply, sh);
	if (sh->conn == NULL)
		return -ENOMEM;
	if (shard == 0) {
		psq->ctl_conn = sm_cql_local_conn(&psq->svc, ctl_cql_reply, NULL);
		if (psq->ctl_conn == NULL)
			return -ENOMEM;
		sm_task_init(&psq->control, control_step, NULL);
		sm_timer_init(&psq->idle_timer, wait_idle, NULL);
		sm_timer_init(&psq->sec_timer, second_over, NULL);
		psq->step = S_CREATE;
		sm_task_schedule(&psq->control);
	}
	return 0;
}

static void
psq_shard_fini(unsigned shard, void *arg)
{
	struct psq_shard *sh = &psq->shards[shard];

	(void)arg;
	if (shard == 0 && psq->ctl_conn != NULL) {
		sm_timer_cancel(&psq->idle_timer);
		sm_timer_cancel(&psq->sec_timer);
		sm_cql_local_conn_close(psq->ctl_conn);
	}
	if (sh->conn != NULL)
		sm_cql_local_conn_close(sh->conn);
	sm_free(sh->keys);
	sm_free(sh->workers);
	sm_cql_shard_fini();
	sm_cql_exec_shard_fini();
	sm_alternator_shard_fini();
	sm_cql_system_shard_fini();
	sm_store_shard_fini();
}

/* ---- options ---- */

static int
u64_opt(const char *name, const char *v, uint64_t min, uint64_t max, uint64_t *out, char *err,
	size_t errlen)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(v, &end, 10);
	if (errno || end == v || *end != '\0' || v[0] == '-' || x < min || x > max) {
		snprintf(err, errlen, "%s: expected an integer from %llu to %llu, got '%s'", name,
			 (unsigned long long)min, (unsigned long long)max, v);
		return -EINVAL;
	}
	*out = x;
	return 0;
}

static int
uint_opt(const char *name, const char *v, unsigned min, unsigned max, unsigned *out, char *err,
	 size_t errlen)
{
	uint64_t x;
	int ret = u64_opt(name, v, min, max, &x, err, errlen);

	if (ret == 0)
		*out = (unsigned)x;
	return ret;
}

static int
bool_opt(const char *name, const char *v, bool *out, char *err, size_t errlen)
{
	if (v == NULL || strcmp(v, "1") == 0 || strcasecmp(v, "true") == 0 ||
	    strcasecmp(v, "yes") == 0 || strcasecmp(v, "on") == 0) {
		*out = true;
		return 0;
	}
	if (strcmp(v, "0") == 0 || strcasecmp(v, "false") == 0 || strcasecmp(v, "no") == 0 ||
	    strcasecmp(v, "off") == 0) {
		*out = false;
		return 0;
	}
	snprintf(err, errlen, "%s: expected true or false (1 or 0), got '%s'", name, v);
	return -EINVAL;
}

#define P(ctx) ((struct psq_ctx *)(ctx))

static int
o_seed(void *c, const char *v, char *e, size_t l)
{
	P(c)->seed_given = true;
	return u64_opt("--random-seed", v, 0, UINT32_MAX, &P(c)->seed, e, l);
}
static int
o_partitions(void *c, const char *v, char *e, size_t l)
{
	return uint_opt("--partitions", v, 1, 100000000, &P(c)->partitions, e, l);
}
static int
o_write(void *c, const char *v, char *e, size_t l)
{
	return bool_opt("--write", v, &P(c)->write, e, l);
}
static int
o_delete(void *c, const char *v, char *e, size_t l)
{
	return bool_opt("--delete", v, &P(c)->del, e, l);
}
static int
o_counters(void *c, const char *v, char *e, size_t l)
{
	return bool_opt("--counters", v, &P(c)->counters, e, l);
}
static int
o_collection(void *c, const char *v, char *e, size_t l)
{
	return uint_opt("--collection", v, 0, 100, &P(c)->collection, e, l);
}
static int
o_duration(void *c, const char *v, char *e, size_t l)
{
	return uint_opt("--duration", v, 1, MAX_ITERATIONS, &P(c)->duration, e, l);
}
static int
o_ops(void *c, const char *v, char *e, size_t l)
{
	return u64_opt("--operations-per-shard", v, 1, UINT64_MAX / 2, &P(c)->ops_per_shard, e, l);
}
static int
o_concurrency(void *c, const char *v, char *e, size_t l)
{
	return uint_opt("--concurrency", v, 1, 10000, &P(c)->concurrency, e, l);
}
static int
o_single_key(void *c, const char *v, char *e, size_t l)
{
	return bool_opt("--query-single-key", v, &P(c)->single_key, e, l);
}
static int
o_shard_aware(void *c, const char *v, char *e, size_t l)
{
	return bool_opt("--shard-aware", v, &P(c)->shard_aware, e, l);
}
static int
o_stop_on_error(void *c, const char *v, char *e, size_t l)
{
	return bool_opt("--stop-on-error", v, &P(c)->stop_on_error, e, l);
}
static int
o_cl(void *c, const char *v, char *e, size_t l)
{
	static const char *const names[] = { "ANY",	     "ONE",	    "TWO",
					     "THREE",	     "QUORUM",	    "ALL",
					     "LOCAL_QUORUM", "EACH_QUORUM", "SERIAL",
					     "LOCAL_SERIAL", "LOCAL_ONE" };
	unsigned i;

	for (i = 0; i < SM_ARRAY_SIZE(names); i++) {
		if (strcasecmp(v, names[i]) == 0) {
			P(c)->cl = (uint16_t)i;
			P(c)->cl_name = names[i];
			return 0;
		}
	}
	snprintf(e, l,
		 "--consistency-level: unknown level '%s' (ONE, QUORUM, LOCAL_QUORUM, ALL, ...)",
		 v);
	return -EINVAL;
}
static int
o_timeout(void *c, const char *v, char *e, size_t l)
{
	(void)e;
	(void)l;
	P(c)->timeout = v[0] ? v : NULL;
	return 0;
}
static int
o_json(void *c, const char *v, char *e, size_t l)
{
	(void)e;
	(void)l;
	P(c)->json_path = v;
	return 0;
}
static int
o_alternator(void *c, const char *v, char *e, size_t l)
{
	if (sm_alt_isolation_parse(v, &P(c)->iso) < 0) {
		snprintf(e, l,
			 "Invalid --alternator-write-isolation setting '%s'. Allowed values: {f, "
			 "forbid, "
			 "forbid_rmw, a, always, always_use_lwt, o, only_rmw_uses_lwt, u, unsafe, "
			 "unsafe_rmw}.",
			 v);
		return -EINVAL;
	}
	P(c)->alternator = true;
	P(c)->iso_name = P(c)->iso == SM_ALT_FORBID_RMW	    ? "forbid_rmw"
			 : P(c)->iso == SM_ALT_LWT_ALWAYS   ? "always_use_lwt"
			 : P(c)->iso == SM_ALT_LWT_RMW_ONLY ? "only_rmw_uses_lwt"
							    : "unsafe";
	return 0;
}
static int
o_workload(void *c, const char *v, char *e, size_t l)
{
	unsigned i;

	for (i = 0; i < SM_ARRAY_SIZE(mode_names); i++)
		if (strcmp(v, mode_names[i]) == 0) {
			P(c)->workload = v;
			return 0;
		}
	snprintf(e, l,
		 "--workload: expected read, write, write_rmw, write_gsi, write_ttl or delete, "
		 "got '%s'",
		 v);
	return -EINVAL;
}

/* ScyllaDB options that mean nothing for an in-memory store: accepted, explained. */
static int
o_ignored(void *c, const char *v, char *e, size_t l)
{
	(void)c;
	(void)v;
	(void)e;
	(void)l;
	return 0;
}

static const struct sm_cli_opt psq_opts[] = {
	{ "--random-seed", "N", "seed of the key choice (default: random, printed)", o_seed },
	{ "--partitions", "N", "number of partitions (keys), default 10000", o_partitions },
	{ "--write", NULL, "write (UPDATE) instead of read", o_write },
	{ "--delete", NULL, "delete instead of read (after populating)", o_delete },
	{ "--counters", NULL, "counter columns and counter updates", o_counters },
	{ "--collection", "N", "add a map<blob, blob> column \"CC\" of N cells", o_collection },
	{ "--duration", "N", "number of 1-second iterations, default 5", o_duration },
	{ "--operations-per-shard", "N", "one iteration of exactly N requests per shard", o_ops },
	{ "--concurrency", "N", "workers (requests in flight) per shard, default 100",
	  o_concurrency },
	{ "--query-single-key", NULL, "always use key 0", o_single_key },
	{ "--shard-aware", "BOOL", "each shard draws only keys it owns (default true)",
	  o_shard_aware },
	{ "--consistency-level", "CL", "consistency of the measured requests, default QUORUM",
	  o_cl },
	{ "--stop-on-error", "BOOL", "stop at the first failed request (default true)",
	  o_stop_on_error },
	{ "--timeout", "T", "add USING TIMEOUT T to the statements", o_timeout },
	{ "--json-result", "FILE", "also write the result as JSON", o_json },
	{ "--alternator", "MODE", "Alternator frontend with this write isolation (f, a, o, u ...)",
	  o_alternator },
	{ "--workload", "W",
	  "Alternator: read, write, write_rmw (conditional UpdateItem), write_gsi (a table with "
	  "a GSI), write_ttl (TTL on) or delete",
	  o_workload },
	{ "--flush", NULL, "accepted, no effect: the store is in memory (no memtable flush)",
	  o_ignored },
	{ "--enable-cache", "BOOL", "accepted, no effect: there is no row cache, only memory",
	  o_ignored },
	{ "--enable-index-cache", "BOOL", "accepted, no effect: there are no sstables", o_ignored },
	{ "--bypass-cache", NULL, "accepted, no effect: there is no cache to bypass", o_ignored },
	{ "--memtable-partitions", "N", "accepted, no effect: nothing is flushed", o_ignored },
	{ "--sstable-summary-ratio", "R", "accepted, no effect: there are no sstables", o_ignored },
	{ "--sstable-format", "F", "accepted, no effect: there are no sstables", o_ignored },
	{ "--tablets", NULL, "accepted, no effect: one node, vnode-style ownership", o_ignored },
	{ "--initial-tablets", "N", "accepted, no effect: one node, vnode-style ownership",
	  o_ignored },
};

static int
alloc_runtime(unsigned n)
{
	psq->nshards = n;
	psq->shards = calloc(n, sizeof(*psq->shards));
	psq->s0 = calloc(n, sizeof(*psq->s0));
	psq->s1 = calloc(n, sizeof(*psq->s1));
	psq->shard_first = calloc(n, sizeof(*psq->shard_first));
	psq->shard_last = calloc(n, sizeof(*psq->shard_last));
	psq->ops0 = calloc(n, sizeof(uint64_t));
	psq->err0 = calloc(n, sizeof(uint64_t));
	psq->ops_first = calloc(n, sizeof(uint64_t));
	psq->shard_ops = calloc(n, sizeof(uint64_t));
	return psq->shards && psq->s0 && psq->s1 && psq->shard_first && psq->shard_last &&
			       psq->ops0 && psq->err0 && psq->ops_first && psq->shard_ops
		       ? 0
		       : -ENOMEM;
}

static void
free_runtime(void)
{
	free(psq->shards);
	free(psq->s0);
	free(psq->s1);
	free(psq->shard_first);
	free(psq->shard_last);
	free(psq->ops0);
	free(psq->err0);
	free(psq->ops_first);
	free(psq->shard_ops);
}

int
sm_cmd_perf_simple_query(int argc, char **argv)
{
	static struct psq_ctx ctx;
	struct sm_runtime_opts ro;
	const char *mode;
	char err[1024];
	unsigned i;
	int ret;

	psq = &ctx;
	sm_config_defaults(&ctx.cfg);
	ctx.partitions = 10000;
	ctx.duration = 5;
	ctx.concurrency = 100;
	ctx.shard_aware = true;
	ctx.stop_on_error = true;
	ctx.cl = SM_CQL_QUORUM;
	ctx.cl_name = "QUORUM";
	ret = sm_cli_parse(
		argc, argv, "perf-simple-query",
		"ScyllaDB's in-process simple-query benchmark: the CQL executor (or, with\n"
		"--alternator MODE, the Alternator executor) driven by --concurrency workers\n"
		"per shard, no network. Prints tps and allocs, tasks, instructions and cycles\n"
		"per op for each 1-second iteration, then median, MAD, max and min, then a\n"
		"per-shard table.",
		&ctx.cfg, psq_opts, SM_ARRAY_SIZE(psq_opts), &ctx, err, sizeof(err));
	if (ret != 0) {
		if (ret < 0)
			fprintf(stderr, "shardmark perf-simple-query: %s\n", err);
		sm_config_free(&ctx.cfg);
		return ret > 0 ? SM_EXIT_OK : SM_EXIT_USAGE;
	}
	if (ctx.collection > 0 && ctx.counters) {
		fprintf(stderr,
			"shardmark perf-simple-query: --collection and --counters are mutually "
			"exclusive\n");
		sm_config_free(&ctx.cfg);
		return SM_EXIT_USAGE;
	}
	if (ctx.workload != NULL && !ctx.alternator) {
		fprintf(stderr, "shardmark perf-simple-query: --workload is for the Alternator "
				"frontend: add --alternator MODE\n");
		sm_config_free(&ctx.cfg);
		return SM_EXIT_USAGE;
	}
	ctx.mode = ctx.write ? MODE_WRITE : ctx.del ? MODE_DELETE : MODE_READ;
	if (ctx.workload != NULL)
		for (i = 0; i < SM_ARRAY_SIZE(mode_names); i++)
			if (strcmp(ctx.workload, mode_names[i]) == 0)
				ctx.mode = (enum psq_mode)i;
	ctx.expiration = (int64_t)time(NULL) + 3600;
	if (!ctx.seed_given) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ctx.seed = (uint64_t)(ts.tv_nsec ^ ts.tv_sec) & UINT32_MAX;
	}
	ret = sm_app_prepare(&ctx.cfg);
	if (ret != 0)
		goto out;
	if (alloc_runtime(sm_app_shard_count(&ctx.cfg)) < 0 ||
	    sm_cql_cluster_init(&ctx.cluster, "shardmark", "127.0.0.1", 9042, NULL, err,
				sizeof(err)) < 0) {
		fprintf(stderr, "shardmark perf-simple-query: out of memory\n");
		ret = SM_EXIT_FAIL;
		goto out;
	}
	ctx.exec_cfg.cluster = &ctx.cluster;
	ctx.svc.exec = &sm_cql_exec;
	ctx.svc.node = &ctx.cluster;
	ctx.alt_cfg.default_isolation = ctx.iso;
	mode = mode_names[ctx.mode];
	printf("random-seed=%llu\n", (unsigned long long)ctx.seed);
	printf("Running test with config: {partitions=%u, concurrency=%u, mode=%s, "
	       "frontend=%s%s%s, "
	       "query_single_key=%s, counters=%s, collection=%u, shard_aware=%s}\n",
	       ctx.partitions, ctx.concurrency, mode, ctx.alternator ? "alternator" : "cql",
	       ctx.alternator ? ", write_isolation=" : "", ctx.alternator ? ctx.iso_name : "",
	       ctx.single_key ? "yes" : "no", ctx.counters ? "yes" : "no", ctx.collection,
	       ctx.shard_aware ? "yes" : "no");
	printf("Disabling auto compaction\n");
	fflush(stdout);
	sm_app_runtime_opts(&ctx.cfg, &ro);
	ro.shard_init = psq_shard_init;
	ro.shard_fini = psq_shard_fini;
	ro.arg = &ctx;
	ctx.result = SM_EXIT_FAIL;
	ret = sm_runtime_run(&ro, err, sizeof(err));
	if (ret < 0) {
		if (strncmp(err, "shard ", 6) != 0)
			fprintf(stderr, "shardmark perf-simple-query: %s\n", err);
		ret = SM_EXIT_FAIL;
		goto out;
	}
	ret = ctx.result;
	if (ctx.iter > 0) {
		if (!ctx.results[0].insns_ok || !ctx.results[0].cycles_ok) {
			char reason[200];

			perf_reason(reason, sizeof(reason));
			printf("insns/op and cycles/op: n/a: %s (tests/bench/insns-per-op.sh "
			       "counts "
			       "instructions under callgrind)\n",
			       reason);
		}
		print_summary();
		print_shards();
		if (ctx.json_path != NULL)
			write_json();
	}
	if (ctx.setup_err[0] != '\0') {
		fprintf(stderr, "shardmark perf-simple-query: %s\n", ctx.setup_err);
		ret = SM_EXIT_FAIL;
	}
out:
	sm_cql_cluster_free(&ctx.cluster);
	free_runtime();
	sm_config_free(&ctx.cfg);
	return ret;
}
