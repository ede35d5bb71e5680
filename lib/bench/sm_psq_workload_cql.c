/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perf-simple-query's CQL frontend (sm_psq_workload.h): ScyllaDB's keyspace
 * ks and table cf ("KEY" blob, "C0".."C4" blob of 34 bytes, counters with
 * counters, "CC" map<blob, blob> with collection), the same prepared
 * statements through the CQL executor over a local connection per shard,
 * the same 8-byte big-endian keys.
 */

#include <errno.h>
#include <string.h>

#include "sm_cql.h"
#include "sm_psq_workload.h"
#include "sm_store.h"

/* Shard 0's setup: one request at a time on its own connection. */
static struct {
	struct sm_psq *p;
	struct sm_cql_conn *conn;
	struct sm_task task;
	int step;
	int16_t stream;
	int status;
	char msg[512];
	uint8_t id[16]; /* of the last PREPARE */
	uint8_t populate_id[16];
	uint8_t stmt_id[16];
	uint8_t body[4096];
} ctl;

static unsigned
cql_owner_of(const struct sm_psq *p, uint64_t seq)
{
	struct sm_table t;
	struct sm_key k;
	uint8_t b[8];

	sm_put_be64(b, seq);
	k.n = 1;
	k.part[0].p = b;
	k.part[0].len = 8;
	if (!p->prm.tablets)
		return sm_key_shard(&k);
	/* the tablet map the server gives ks.cf (sm_tablets.h): made before the table is */
	memset(&t, 0, sizeof(t));
	sm_table_set_tablets(&t, sm_tablets_count(p->prm.initial_tablets, p->nshards));
	return sm_table_key_shard(&t, &k);
}

/* A measured request's reply, on the worker's shard: stream = worker. */
static void
cql_reply(void *ctx, const uint8_t *frame, size_t len)
{
	struct sm_psq_shard *sh = ctx;
	struct sm_cql_frame_header h;
	const char *reason;
	unsigned idx;

	if (sm_cql_frame_header_parse(frame, len, true, &h, &reason) < 0 || h.stream < 0 ||
	    (unsigned)h.stream >= sh->nworkers)
		return;
	idx = (unsigned)h.stream;
	/* An ERROR body: code, then the message as a [string]. */
	if (h.opcode == SM_CQL_OP_ERROR && len >= SM_CQL_HEADER_LEN + 6)
		sm_psq_op_done(&sh->workers[idx], false, (const char *)frame + SM_CQL_HEADER_LEN + 6,
			       len - SM_CQL_HEADER_LEN - 6);
	else
		sm_psq_op_done(&sh->workers[idx], h.opcode == SM_CQL_OP_RESULT, "unexpected reply",
			       16);
}

/* The workers' task: EXECUTE the prepared statement with the next key. */
static void
cql_issue(void *arg)
{
	struct sm_psq_worker *w = arg;
	struct sm_psq_shard *sh = w->sh;
	uint64_t seq;

	if (sm_psq_idle(w))
		return;
	seq = sm_psq_next_key(w);
	/*
	 * One store for every way the key was chosen: copied into each of
	 * them, GCC no longer folds the byte stores into one bswap (35
	 * instructions an op more under tests/bench/insns-per-op.sh).
	 */
	__asm__("" : "+r"(seq));
	/* the key is the last 8 bytes of the EXECUTE body */
	sm_put_be64(w->req + w->req_len - 8, seq);
	if (w->populating) {
		memcpy(w->req + 2, ctl.populate_id, 16);
		sm_cql_local_request(sh->wl, (int16_t)w->idx, SM_CQL_OP_EXECUTE, w->req,
				     w->req_len);
		memcpy(w->req + 2, ctl.stmt_id, 16);
		return;
	}
	sm_cql_local_request(sh->wl, (int16_t)w->idx, SM_CQL_OP_EXECUTE, w->req, w->req_len);
}

/*
 * EXECUTE <id> at the consistency level with one [bytes] value of 8 bytes,
 * with SKIP_METADATA as drivers send it for a statement whose result
 * metadata they got at PREPARE (the Java and Python drivers do).
 */
static void
build_execute(struct sm_psq_worker *w, uint16_t cl)
{
	uint8_t *p = w->req;

	*p++ = 0;
	*p++ = 16;
	memcpy(p, ctl.stmt_id, 16);
	p += 16;
	*p++ = (uint8_t)(cl >> 8);
	*p++ = (uint8_t)cl;
	*p++ = SM_CQL_QF_VALUES | SM_CQL_QF_SKIP_METADATA;
	*p++ = 0;
	*p++ = 1;
	*p++ = 0;
	*p++ = 0;
	*p++ = 0;
	*p++ = 8;
	memset(p, 0, 8);
	p += 8;
	w->req_len = (size_t)(p - w->req);
}

/* ---- setup on shard 0: schema and prepared statements ---- */

static void
ctl_reply(void *ctx, const uint8_t *frame, size_t len)
{
	struct sm_cql_frame_header h;
	struct sm_cql_response resp;
	const char *reason;

	(void)ctx;
	ctl.status = -EIO;
	ctl.msg[0] = '\0';
	if (sm_cql_frame_header_parse(frame, len, true, &h, &reason) == 0 &&
	    sm_cql_response_decode(&h, frame + SM_CQL_HEADER_LEN, len - SM_CQL_HEADER_LEN, 0, &resp,
				   &reason) == 0) {
		if (resp.opcode == SM_CQL_OP_ERROR) {
			snprintf(ctl.msg, sizeof(ctl.msg), "%.*s", (int)resp.u.error.message.len,
				 (const char *)resp.u.error.message.p);
		} else {
			ctl.status = 0;
			if (resp.u.result.kind == SM_CQL_RESULT_PREPARED &&
			    resp.u.result.u.prepared.id.len == 16)
				memcpy(ctl.id, resp.u.result.u.prepared.id.p, 16);
		}
	}
	sm_task_schedule(&ctl.task);
}

/* QUERY (with a consistency and no flags) or PREPARE of @text. */
static void
ctl_send(uint8_t opcode, const char *text)
{
	size_t len = strlen(text);
	uint8_t *p = ctl.body;

	sm_put_be32(p, (uint32_t)len);
	memcpy(p + 4, text, len);
	p += 4 + len;
	if (opcode == SM_CQL_OP_QUERY) {
		*p++ = 0;
		*p++ = SM_CQL_QUORUM;
		*p++ = 0;
	}
	sm_cql_local_request(ctl.conn, ctl.stream++, opcode, ctl.body, (size_t)(p - ctl.body));
}

static void
statement_text(const struct sm_psq_params *prm, char *buf, size_t len, bool populate)
{
	const char *t = prm->timeout;
	char using[96] = "", cc[64] = "", ccv[4096] = "";
	size_t off = 0;
	unsigned i;

	if (t != NULL)
		snprintf(using, sizeof(using), "USING TIMEOUT %s ", t);
	if (prm->collection > 0) {
		snprintf(cc, sizeof(cc), ", \"CC\"");
		off = (size_t)snprintf(ccv, sizeof(ccv), ", \"CC\" = {");
		for (i = 0; i < prm->collection && off < sizeof(ccv) - 128; i++)
			off += (size_t)snprintf(ccv + off, sizeof(ccv) - off, "%s0x%016x: %s",
						i ? ", " : "", i, sm_psq_value_hex(0));
		snprintf(ccv + off, sizeof(ccv) - off, "}");
	}
	if (prm->counters && (populate || prm->mode == SM_PSQ_WRITE)) {
		snprintf(buf, len,
			 "UPDATE ks.cf %sSET \"C0\" = \"C0\" + 1,\"C1\" = \"C1\" + 2,\"C2\" = "
			 "\"C2\" + "
			 "3,\"C3\" = \"C3\" + 4,\"C4\" = \"C4\" + 5 WHERE \"KEY\" = ?",
			 using);
	} else if (populate || prm->mode == SM_PSQ_WRITE || prm->mode == SM_PSQ_WRITE_INDEX ||
		   prm->mode == SM_PSQ_WRITE_VIEW) {
		snprintf(buf, len,
			 "UPDATE ks.cf %sSET \"C0\" = %s,\"C1\" = %s,\"C2\" = %s,\"C3\" = "
			 "%s,\"C4\" = "
			 "%s%s WHERE \"KEY\" = ?",
			 using, sm_psq_value_hex(0), sm_psq_value_hex(1), sm_psq_value_hex(2),
			 sm_psq_value_hex(3), sm_psq_value_hex(4), ccv);
	} else if (prm->mode == SM_PSQ_DELETE) {
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

enum { C_KEYSPACE, C_TABLE, C_INDEX, C_PREP_POPULATE, C_PREP_MEASURE, C_DONE };

/* The answer to the last request failed: the run ends. */
static bool
ctl_failed(const char *what)
{
	if (ctl.status == 0)
		return false;
	sm_psq_setup_fail(ctl.p, what, ctl.msg);
	return true;
}

/* Shard 0's setup task: checks the last answer, then sends the next request. */
static void
ctl_step(void *arg)
{
	const struct sm_psq_params *prm = &ctl.p->prm;
	const char *type = prm->counters ? "counter" : "blob";
	char text[8192];
	unsigned s, i;

	(void)arg;
	switch (ctl.step++) {
	case C_KEYSPACE:
		i = (unsigned)snprintf(text, sizeof(text),
				       "CREATE KEYSPACE ks WITH replication = {'class': "
				       "'org.apache.cassandra.locator.NetworkTopologyStrategy', "
				       "'replication_factor': 1}");
		if (prm->tablets)
			snprintf(text + i, sizeof(text) - i,
				 " AND tablets = {'enabled': true, 'initial': %u}",
				 prm->initial_tablets);
		ctl_send(SM_CQL_OP_QUERY, text);
		return;
	case C_TABLE:
		if (ctl_failed("CREATE KEYSPACE"))
			return;
		snprintf(text, sizeof(text),
			 "CREATE TABLE ks.cf (\"KEY\" blob PRIMARY KEY, \"C0\" %s, \"C1\" %s, "
			 "\"C2\" %s, \"C3\" %s, \"C4\" %s%s)",
			 type, type, type, type, type,
			 prm->collection ? ", \"CC\" map<blob, blob>" : "");
		ctl_send(SM_CQL_OP_QUERY, text);
		return;
	case C_INDEX:
		if (ctl_failed("CREATE TABLE"))
			return;
		if (prm->mode == SM_PSQ_WRITE_INDEX) {
			/* write_index: every write also updates an index on C0 */
			ctl_send(SM_CQL_OP_QUERY, "CREATE INDEX ON ks.cf (\"C0\")");
			return;
		}
		if (prm->mode == SM_PSQ_WRITE_VIEW) {
			/* write_view: every write also replaces its row of a view keyed
			 * by C0 (the columns named: --collection's map has no place in
			 * a view) */
			ctl_send(SM_CQL_OP_QUERY,
				 "CREATE MATERIALIZED VIEW ks.cf_by_c0 AS SELECT \"KEY\", \"C0\", "
				 "\"C1\", \"C2\", \"C3\", \"C4\" FROM ks.cf WHERE \"C0\" IS NOT "
				 "NULL AND \"KEY\" IS NOT NULL PRIMARY KEY (\"C0\", \"KEY\")");
			return;
		}
		ctl.step = C_PREP_MEASURE; /* no index: this call prepares */
		/* fall through */
	case C_PREP_POPULATE:
		if (ctl_failed(prm->mode == SM_PSQ_WRITE_VIEW ? "CREATE MATERIALIZED VIEW"
							      : "CREATE INDEX"))
			return;
		statement_text(prm, text, sizeof(text), true);
		ctl_send(SM_CQL_OP_PREPARE, text);
		return;
	case C_PREP_MEASURE:
		if (ctl_failed("PREPARE (population)"))
			return;
		memcpy(ctl.populate_id, ctl.id, 16);
		statement_text(prm, text, sizeof(text), false);
		ctl_send(SM_CQL_OP_PREPARE, text);
		return;
	case C_DONE:
		if (ctl_failed("PREPARE"))
			return;
		memcpy(ctl.stmt_id, ctl.id, 16);
		/* before any phase starts: the phase's message orders these writes */
		for (s = 0; s < ctl.p->nshards; s++)
			for (i = 0; i < ctl.p->shards[s].nworkers; i++)
				build_execute(&ctl.p->shards[s].workers[i], prm->cl);
		sm_psq_setup_done(ctl.p);
		return;
	}
}

static void
cql_setup(struct sm_psq *p)
{
	ctl.p = p;
	ctl.step = C_KEYSPACE;
	sm_task_schedule(&ctl.task);
}

static int
cql_shard_init(struct sm_psq *p, unsigned shard)
{
	const struct sm_cql_service *svc = p->wl_arg;
	struct sm_psq_shard *sh = &p->shards[shard];

	sh->wl = sm_cql_local_conn(svc, cql_reply, sh);
	if (sh->wl == NULL)
		return -ENOMEM;
	if (shard == 0) {
		ctl.conn = sm_cql_local_conn(svc, ctl_reply, NULL);
		if (ctl.conn == NULL)
			return -ENOMEM;
		sm_task_init(&ctl.task, ctl_step, NULL);
	}
	return 0;
}

static void
cql_shard_fini(struct sm_psq *p, unsigned shard)
{
	struct sm_psq_shard *sh = &p->shards[shard];

	if (shard == 0 && ctl.conn != NULL) {
		sm_cql_local_conn_close(ctl.conn);
		ctl.conn = NULL;
	}
	if (sh->wl != NULL)
		sm_cql_local_conn_close(sh->wl);
	sh->wl = NULL;
}

const struct sm_psq_workload sm_psq_workload_cql = {
	.name = "cql",
	.owner_of = cql_owner_of,
	.shard_init = cql_shard_init,
	.shard_fini = cql_shard_fini,
	.setup = cql_setup,
	.issue = cql_issue,
};
