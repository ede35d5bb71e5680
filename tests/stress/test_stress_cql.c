/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The stress CQL client against the real shardmark CQL server (store,
 * system tables, executor, listeners) running in the same process with two
 * shards, over loopback, plus a fake server for malformed answers.
 *
 * One event-driven script on shard 0 walks the steps: SUPPORTED and the
 * sharding keys; the shard-aware port (SCYLLA_SHARD == source port % 2);
 * DDL; PREPARE (ids, bind count, pk indexes, result columns); 1000 INSERTs
 * with 128 in flight (-EBUSY at the limit, stream ids reused); 1000 SELECTs
 * checking the cell bytes, with and without SKIP_METADATA; a QUERY with
 * values; a full scan in one big frame; USE; paging with the full
 * parameters; an EXECUTE with a client timestamp; error responses
 * (0x2200); a ring built from system.local; LZ4 (also across
 * authentication); PasswordAuthenticator (right, wrong and missing
 * credentials); a server that closes with requests in flight (each fails
 * exactly once, before closed()); a fake server's malformed frame
 * (-EPROTO), bad version, pushed EVENT and connection-level ERROR, and
 * TABLETS_ROUTING_V1 (asked for at STARTUP when offered; a custom payload
 * reaches the callback); a
 * refused connect; close during connect; close with requests in flight
 * (-ECANCELED); the shard's drain (-ESHUTDOWN).
 *
 * Behaviour only: nothing here measures time. A watchdog ends a stuck run.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <arpa/inet.h>
#include <cmocka.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sm_core.h"
#include "sm_cql_conn.h"
#include "sm_cql_exec.h"
#include "sm_cql_system.h"
#include "sm_net.h"
#include "sm_net_uring.h"
#include "sm_store.h"
#include "sm_stress_cql.h"
#include "sm_stress_ring.h"
#include "sm_stress_tablets.h"

#define NKEYS 1000
#define WINDOW 128
#define SMALL_FRAME 4096
#define NDROP 50
#define USER "cassandra"
#define PASSWORD "s3cret"

/* ---- the server ---- */

static uint16_t port_plain, port_aware, port_auth, port_small, port_fake, port_dead;
static struct sm_cql_cluster view;
static struct sm_cql_exec_config exec_cfg;
static struct sm_cql_service svc_plain, svc_auth, svc_small;

/* ---- failures ---- */

static int failures;
static char failure_text[512];
static int step;
static bool finished;

static void
finish(void);

static void
failed(int line, const char *what)
{
	if (failures++ == 0)
		snprintf(failure_text, sizeof(failure_text), "step %d, line %d: %s", step, line,
			 what);
	finish();
}

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			failed(__LINE__, #cond);                                                   \
			return;                                                                    \
		}                                                                                  \
	} while (0)

/* ---- test data ---- */

static void
key_of(unsigned i, uint8_t k[8])
{
	uint64_t v = i;
	int b;

	for (b = 7; b >= 0; b--, v >>= 8)
		k[b] = (uint8_t)v;
}

static uint8_t value_buf[NKEYS][3000];

static struct sm_bytes
value_of(unsigned i)
{
	uint32_t len = (i * 37u) % 3000u + 1u, j;

	for (j = 0; j < len; j++)
		value_buf[i][j] = (uint8_t)(i + j * 7u);
	return (struct sm_bytes){ value_buf[i], len };
}

static bool
bytes_eq(struct sm_bytes a, struct sm_bytes b)
{
	return a.p != NULL && b.p != NULL && a.len == b.len && memcmp(a.p, b.p, a.len) == 0;
}

/* ---- the script ---- */

static struct sm_cqlc *main_c, *aware[2], *lz4_c, *drop_c, *fake_c, *other_c, *drain_c;
static unsigned drained, drained_shutdown;
static struct sm_cqlc_prepared ins, sel;
static unsigned issued, done, ready_count, pending;
static unsigned drop_calls[NDROP + 1], drop_closed, drop_failed, close_cancelled;
static int fake_mode;
static struct sm_timer watchdog;
static char needle_incorrect[] = "incorrect";
static char needle_required[] = "requires authentication";
static struct sm_task next_task;

enum {
	FAKE_GARBAGE_RESULT = 1,
	FAKE_BAD_VERSION,
	FAKE_CONN_ERROR,
	FAKE_TABLETS,
};

static void
next_step(void);

/* Steps advance from a task, never inside the callback that finished one. */
static void
advance(void)
{
	step++;
	sm_task_schedule(&next_task);
}

static void
finish(void)
{
	if (finished)
		return;
	finished = true;
	sm_timer_cancel(&watchdog);
	sm_runtime_stop();
}

static void
on_watchdog(void *arg)
{
	(void)arg;
	failed(__LINE__, "watchdog: the script stalled");
}

static void
cqlc_opts(struct sm_cqlc_opts *o, uint16_t port, void (*ready)(struct sm_cqlc *, int, void *),
	  void *ctx)
{
	memset(o, 0, sizeof(*o));
	o->addr = "127.0.0.1";
	o->port = port;
	o->ready = ready;
	o->ctx = ctx;
	o->max_inflight = WINDOW;
}

/* Step 0: SUPPORTED on the plain port. */
static void
main_ready(struct sm_cqlc *c, int err, void *ctx)
{
	const struct sm_cqlc_info *in = sm_cqlc_info(c);

	(void)ctx;
	CHECK(err == 0);
	CHECK(sm_cqlc_is_ready(c));
	CHECK(in->scylla);
	CHECK(in->nr_shards == 2);
	CHECK(in->shard < 2);
	CHECK(in->shard_aware_port == port_aware);
	CHECK(in->ignore_msb == 12);
	CHECK(strcmp(in->algorithm, "biased-token-round-robin") == 0);
	CHECK(strstr(in->partitioner, "Murmur3Partitioner") != NULL);
	CHECK(in->lz4_offered && !in->lz4 && !in->auth);
	CHECK(strcmp(in->cql_version, "3.3.1") == 0);
	CHECK(sm_cqlc_inflight(c) == 0 && sm_cqlc_max_inflight(c) == WINDOW);
	advance();
}

/* Step 1: the shard-aware port puts connection s on shard s. */
static void
aware_ready(struct sm_cqlc *c, int err, void *ctx)
{
	unsigned s = (unsigned)(uintptr_t)ctx;
	char local[64];
	const char *colon;

	CHECK(err == 0);
	CHECK(sm_cqlc_info(c)->scylla);
	CHECK(sm_cqlc_info(c)->shard == s);
	sm_cqlc_local_addr(c, local, sizeof(local));
	colon = strrchr(local, ':');
	CHECK(colon != NULL && (unsigned)atoi(colon + 1) % 2 == s);
	if (++ready_count == 2) {
		sm_cqlc_close(aware[0]);
		sm_cqlc_close(aware[1]);
		aware[0] = aware[1] = NULL;
		advance();
	}
}

static void
schema_done(void *arg, const struct sm_cqlc_result *r)
{
	(void)arg;
	CHECK(r->kind == SM_CQLC_SCHEMA_CHANGE);
	CHECK(r->resp->u.result.u.schema_change.change == SM_CQL_CHANGE_CREATED);
	advance();
}

static void
prepared(void *arg, const struct sm_cqlc_result *r)
{
	struct sm_cqlc_prepared *p = arg;

	CHECK(r->kind == SM_CQLC_PREPARED);
	CHECK(r->prepared.id_len == 16);
	*p = r->prepared;
	if (p == &ins) {
		CHECK(p->nbind == 2 && p->npk == 1 && p->pk[0] == 0 && p->ncols == 0);
	} else {
		CHECK(p->nbind == 1 && p->npk == 1 && p->pk[0] == 0 && p->ncols == 2);
	}
	if (--pending == 0)
		advance();
}

static int
issue_insert(unsigned i);

static void
insert_done(void *arg, const struct sm_cqlc_result *r)
{
	(void)arg;
	CHECK(r->kind == SM_CQLC_VOID);
	done++;
	/* The window refills from the callback: stream ids are reused. */
	if (issued < NKEYS)
		CHECK(issue_insert(issued++) == 0);
	if (done == NKEYS) {
		CHECK(sm_cqlc_inflight(main_c) == 0);
		advance();
	}
}

static int
issue_insert(unsigned i)
{
	uint8_t k[8];
	struct sm_bytes v[2];

	key_of(i, k);
	v[0] = (struct sm_bytes){ k, 8 };
	v[1] = value_of(i);
	return sm_cqlc_execute(main_c, sm_cqlc_prepared_id(&ins), SM_CQL_LOCAL_ONE, v, 2, 0,
			       insert_done, NULL);
}

static int
issue_select(unsigned i);

static void
select_done(void *arg, const struct sm_cqlc_result *r)
{
	unsigned i = (unsigned)(uintptr_t)arg;
	struct sm_cqlc_rows_iter it;
	struct sm_bytes cells[2];
	uint8_t k[8];

	CHECK(r->kind == SM_CQLC_ROWS);
	CHECK(r->nrows == 1 && r->ncols == 2);
	/* SKIP_METADATA (odd keys) leaves the column specs out. */
	CHECK(((r->resp->u.result.u.rows.meta.flags & SM_CQL_META_NO_METADATA) != 0) == (i & 1));
	key_of(i, k);
	sm_cqlc_rows_iter(&it, r);
	CHECK(sm_cqlc_rows_next(&it, cells, 2));
	CHECK(bytes_eq(cells[0], (struct sm_bytes){ k, 8 }));
	CHECK(bytes_eq(cells[1], value_of(i)));
	CHECK(!sm_cqlc_rows_next(&it, cells, 2));
	done++;
	if (issued < NKEYS)
		CHECK(issue_select(issued++) == 0);
	if (done == NKEYS)
		advance();
}

static int
issue_select(unsigned i)
{
	uint8_t k[8];
	struct sm_bytes v;

	key_of(i, k);
	v = (struct sm_bytes){ k, 8 };
	return sm_cqlc_execute(main_c, sm_cqlc_prepared_id(&sel), SM_CQL_ONE, &v, 1,
			       (i & 1) ? SM_CQLC_SKIP_METADATA : 0, select_done,
			       (void *)(uintptr_t)i);
}

/* A whole-table scan: 1000 rows in one frame of about 1.5 MB. */
static void
scan_done(void *arg, const struct sm_cqlc_result *r)
{
	struct sm_cqlc_rows_iter it;
	struct sm_bytes cells[1];
	bool seen[NKEYS] = { false };
	unsigned rows = 0, i;
	uint64_t key;

	(void)arg;
	CHECK(r->kind == SM_CQLC_ROWS);
	CHECK(r->nrows == NKEYS && r->ncols == 2);
	sm_cqlc_rows_iter(&it, r);
	/* Fewer cells than columns: the rest of each row is skipped. */
	while (sm_cqlc_rows_next(&it, cells, 1)) {
		CHECK(cells[0].len == 8);
		for (key = 0, i = 0; i < 8; i++)
			key = key << 8 | cells[0].p[i];
		CHECK(key < NKEYS && !seen[key]);
		seen[key] = true;
		rows++;
	}
	CHECK(rows == NKEYS);
	if (--pending == 0)
		advance();
}

static void
query_values_done(void *arg, const struct sm_cqlc_result *r)
{
	struct sm_cqlc_rows_iter it;
	struct sm_bytes cell;

	(void)arg;
	CHECK(r->kind == SM_CQLC_ROWS && r->nrows == 1 && r->ncols == 1);
	sm_cqlc_rows_iter(&it, r);
	CHECK(sm_cqlc_rows_next(&it, &cell, 1));
	CHECK(bytes_eq(cell, value_of(7)));
	if (--pending == 0)
		advance();
}

static void
invalid_done(void *arg, const struct sm_cqlc_result *r)
{
	(void)arg;
	CHECK(r->kind == SM_CQLC_ERROR);
	CHECK(r->error_code == SM_CQL_ERR_INVALID);
	CHECK(r->error_message.len > 0);
	CHECK(r->resp != NULL && r->resp->opcode == SM_CQL_OP_ERROR);
	if (--pending == 0)
		advance();
}

/* system.local into a ring: one host owning every token. */
static void
local_done(void *arg, const struct sm_cqlc_result *r)
{
	struct sm_ring_repl repl = { .strategy = SM_RING_SIMPLE, .rf = 1 };
	struct sm_cqlc_rows_iter it;
	struct sm_bytes cells[4];
	unsigned out[2];
	struct sm_ring ring;
	int ret;

	(void)arg;
	CHECK(r->kind == SM_CQLC_ROWS && r->nrows == 1 && r->ncols == 4);
	sm_cqlc_rows_iter(&it, r);
	CHECK(sm_cqlc_rows_next(&it, cells, 4));
	sm_ring_init(&ring);
	ret = sm_ring_add_host_cells(&ring, cells[0].p, cells[0].len, cells[1].p, cells[1].len,
				     cells[2].p, cells[2].len, cells[3].p, cells[3].len);
	if (ret == 0)
		ret = sm_ring_build(&ring, &repl, cells[1].len ? ring.hosts[0].dc : NULL);
	if (ret == 0)
		ret = (int)sm_ring_replicas(&ring, sm_ring_token_of("key1", 4), out, 2) - 1;
	if (ret != 0 || strcmp(ring.hosts[0].addr, "127.0.0.1") != 0 || out[0] != 0) {
		sm_ring_free(&ring);
		CHECK(!"system.local builds a ring of 127.0.0.1");
	}
	sm_ring_free(&ring);
	if (--pending == 0)
		advance();
}

static void
peers_done(void *arg, const struct sm_cqlc_result *r)
{
	(void)arg;
	CHECK(r->kind == SM_CQLC_ROWS && r->nrows == 0 && r->ncols == 4);
	if (--pending == 0)
		advance();
}

/* LZ4: a point read and the big scan, compressed both ways. */
static void
lz4_select_done(void *arg, const struct sm_cqlc_result *r)
{
	struct sm_cqlc_rows_iter it;
	struct sm_bytes cells[2];

	(void)arg;
	CHECK(r->kind == SM_CQLC_ROWS && r->nrows == 1);
	sm_cqlc_rows_iter(&it, r);
	CHECK(sm_cqlc_rows_next(&it, cells, 2));
	CHECK(bytes_eq(cells[1], value_of(5)));
	if (--pending == 0)
		advance();
}

static void
lz4_ready(struct sm_cqlc *c, int err, void *ctx)
{
	uint8_t k[8];
	struct sm_bytes v = { k, 8 };

	(void)ctx;
	CHECK(err == 0);
	CHECK(sm_cqlc_info(c)->lz4);
	key_of(5, k);
	pending = 2;
	CHECK(sm_cqlc_execute(c, sm_cqlc_prepared_id(&sel), SM_CQL_ONE, &v, 1, 0, lz4_select_done,
			      NULL) == 0);
	CHECK(sm_cqlc_query(c, "SELECT k, v FROM ks.t", SM_CQL_ONE, NULL, 0, scan_done, NULL) == 0);
}

/* Authentication: right, wrong, then missing credentials. */
static void
auth_query_done(void *arg, const struct sm_cqlc_result *r)
{
	(void)arg;
	CHECK(r->kind == SM_CQLC_ROWS && r->nrows == 1);
	advance();
}

static void
auth_ready(struct sm_cqlc *c, int err, void *ctx)
{
	(void)ctx;
	CHECK(err == 0);
	CHECK(sm_cqlc_info(c)->auth);
	CHECK(sm_cqlc_query(c, "SELECT cluster_name FROM system.local", SM_CQL_ONE, NULL, 0,
			    auth_query_done, NULL) == 0);
}

static void
auth_refused(struct sm_cqlc *c, int err, void *ctx)
{
	const char *needle = ctx;

	CHECK(err == -EACCES);
	CHECK(!sm_cqlc_is_ready(c));
	CHECK(strstr(sm_cqlc_error_text(c), needle) != NULL);
	CHECK(sm_cqlc_query(c, "SELECT 1", SM_CQL_ONE, NULL, 0, NULL, NULL) == -ENOTCONN);
	advance();
}

/* The server closes a connection with NDROP + 1 requests in flight. */
static void
drop_check_done(void)
{
	unsigned i;

	if (drop_closed != 1 || drop_failed < NDROP)
		return;
	for (i = 0; i <= NDROP; i++)
		CHECK(drop_calls[i] == 1);
	CHECK(sm_cqlc_inflight(drop_c) == 0);
	CHECK(!sm_cqlc_is_ready(drop_c));
	CHECK(sm_cqlc_execute(drop_c, sm_cqlc_prepared_id(&ins), SM_CQL_ONE, NULL, 0, 0, NULL,
			      NULL) == -ENOTCONN);
	advance();
}

static void
drop_request_done(void *arg, const struct sm_cqlc_result *r)
{
	unsigned i = (unsigned)(uintptr_t)arg;

	drop_calls[i]++;
	CHECK(drop_calls[i] == 1);
	CHECK(drop_closed == 0); /* requests complete before closed() */
	if (i == 0) {
		/* The oversized frame: the server's error, unless a reset beat it. */
		CHECK((r->kind == SM_CQLC_ERROR && r->error_code == SM_CQL_ERR_PROTOCOL) ||
		      (r->kind == SM_CQLC_FAILED && r->err == -ECONNRESET));
	} else {
		CHECK(r->kind == SM_CQLC_FAILED && r->err == -ECONNRESET && r->resp == NULL);
		drop_failed++;
	}
}

static void
drop_closed_cb(struct sm_cqlc *c, int err, void *ctx)
{
	(void)ctx;
	CHECK(c == drop_c);
	CHECK(err == -ECONNRESET);
	CHECK(strstr(sm_cqlc_error_text(c), "closed") != NULL ||
	      strstr(sm_cqlc_error_text(c), "broke") != NULL);
	drop_closed++;
	drop_check_done();
}

static void
drop_ready(struct sm_cqlc *c, int err, void *ctx)
{
	static char big[SMALL_FRAME + 100];
	uint8_t k[8];
	struct sm_bytes v[2];
	unsigned i;

	(void)ctx;
	CHECK(err == 0);
	/* First in the stream, so the server stops reading there. */
	memset(big, 'x', sizeof(big) - 1);
	memcpy(big, "SELECT ", 7);
	CHECK(sm_cqlc_query(c, big, SM_CQL_ONE, NULL, 0, drop_request_done, (void *)0) == 0);
	for (i = 1; i <= NDROP; i++) {
		key_of(i, k);
		v[0] = (struct sm_bytes){ k, 8 };
		v[1] = (struct sm_bytes){ (const uint8_t *)"v", 1 };
		CHECK(sm_cqlc_execute(c, sm_cqlc_prepared_id(&ins), SM_CQL_ONE, v, 2, 0,
				      drop_request_done, (void *)(uintptr_t)i) == 0);
	}
	CHECK(sm_cqlc_inflight(c) == NDROP + 1);
}

/* Malformed answers from the fake server. */
static unsigned fake_failed, fake_closed;

static void
fake_request_done(void *arg, const struct sm_cqlc_result *r)
{
	(void)arg;
	CHECK(r->kind == SM_CQLC_FAILED && r->err == -EPROTO);
	CHECK(fake_closed == 0);
	fake_failed++;
}

static void
fake_closed_cb(struct sm_cqlc *c, int err, void *ctx)
{
	(void)ctx;
	CHECK(err == -EPROTO);
	CHECK(fake_failed == 3 && sm_cqlc_inflight(c) == 0);
	CHECK(strstr(sm_cqlc_error_text(c), "not speaking CQL v4") != NULL);
	fake_closed++;
	advance();
}

static void
fake_ready(struct sm_cqlc *c, int err, void *ctx)
{
	unsigned i;

	(void)ctx;
	CHECK(err == 0);
	/* A server without the Scylla keys. */
	CHECK(!sm_cqlc_info(c)->scylla && sm_cqlc_info(c)->nr_shards == 0);
	CHECK(sm_cqlc_info(c)->shard_aware_port == 0);
	for (i = 0; i < 3; i++)
		CHECK(sm_cqlc_query(c, "SELECT 1", SM_CQL_ONE, NULL, 0, fake_request_done, NULL) ==
		      0);
}

/* An EVENT, a reply, then a connection-level ERROR on a stream nobody uses. */
static unsigned fake2_void;

static void
fake2_request_done(void *arg, const struct sm_cqlc_result *r)
{
	if (arg != NULL) {
		CHECK(r->kind == SM_CQLC_VOID);
		fake2_void++;
	} else {
		CHECK(r->kind == SM_CQLC_FAILED && r->err == -ECONNRESET);
		fake_failed++;
	}
}

static void
fake2_closed_cb(struct sm_cqlc *c, int err, void *ctx)
{
	(void)ctx;
	CHECK(err == -ECONNRESET);
	CHECK(fake2_void == 1 && fake_failed == 1);
	CHECK(strstr(sm_cqlc_error_text(c), "connection error 0x000a: test says bye") != NULL);
	fake_closed++;
	advance();
}

static void
fake2_ready(struct sm_cqlc *c, int err, void *ctx)
{
	(void)ctx;
	CHECK(err == 0);
	/* Streams 0 and 1: the fake answers only stream 1. */
	CHECK(sm_cqlc_query(c, "SELECT 0", SM_CQL_ONE, NULL, 0, fake2_request_done, NULL) == 0);
	CHECK(sm_cqlc_query(c, "SELECT 1", SM_CQL_ONE, NULL, 0, fake2_request_done, c) == 0);
}

static void
fake_bad_version_ready(struct sm_cqlc *c, int err, void *ctx)
{
	(void)ctx;
	CHECK(err == -EPROTO);
	CHECK(strstr(sm_cqlc_error_text(c), "version") != NULL);
	advance();
}

/* TABLETS_ROUTING_V1 offered: asked for at STARTUP; a custom payload reaches the callback. */
static bool fake_startup_tablets;

static void
fake_tablets_done(void *arg, const struct sm_cqlc_result *r)
{
	struct sm_bytes v;

	(void)arg;
	CHECK(r->kind == SM_CQLC_VOID && r->resp != NULL);
	CHECK(r->resp->custom_payload.n == 1);
	CHECK(sm_tablets_payload(&r->resp->custom_payload, &v));
	CHECK(v.len == 4 && memcmp(v.p, "\x00\x00\x00\x08", 4) == 0);
	advance();
}

static void
fake_tablets_ready(struct sm_cqlc *c, int err, void *ctx)
{
	(void)ctx;
	CHECK(err == 0);
	CHECK(sm_cqlc_info(c)->tablets);
	CHECK(fake_startup_tablets);
	CHECK(sm_cqlc_query(c, "SELECT 1", SM_CQL_ONE, NULL, 0, fake_tablets_done, NULL) == 0);
}

static void
refused_ready(struct sm_cqlc *c, int err, void *ctx)
{
	(void)ctx;
	CHECK(err == -ECONNREFUSED);
	CHECK(strstr(sm_cqlc_error_text(c), "connecting") != NULL);
	advance();
}

static void
never_ready(struct sm_cqlc *c, int err, void *ctx)
{
	(void)c;
	(void)err;
	(void)ctx;
	failed(__LINE__, "a connection closed while connecting called ready()");
}

static void
cancelled_done(void *arg, const struct sm_cqlc_result *r)
{
	(void)arg;
	CHECK(r->kind == SM_CQLC_FAILED && r->err == -ECANCELED);
	close_cancelled++;
}

/* USE, paging with the full parameters, an EXECUTE with a client timestamp. */
static uint8_t paging_state[256];
static uint32_t paging_len;

static void
use_done(void *arg, const struct sm_cqlc_result *r)
{
	(void)arg;
	CHECK(r->kind == SM_CQLC_SET_KEYSPACE);
	CHECK(r->keyspace.len == 2 && memcmp(r->keyspace.p, "ks", 2) == 0);
	if (--pending == 0)
		advance();
}

static void
page2_done(void *arg, const struct sm_cqlc_result *r)
{
	(void)arg;
	CHECK(r->kind == SM_CQLC_ROWS && r->nrows == 10);
	if (--pending == 0)
		advance();
}

static void
page1_done(void *arg, const struct sm_cqlc_result *r)
{
	const struct sm_cql_metadata *m;
	struct sm_cql_params params;

	(void)arg;
	CHECK(r->kind == SM_CQLC_ROWS && r->nrows == 10 && r->ncols == 1);
	m = &r->resp->u.result.u.rows.meta;
	CHECK((m->flags & SM_CQL_META_HAS_MORE_PAGES) && m->paging_state.p != NULL);
	/* Views die with the callback: keep a copy of the state. */
	CHECK(m->paging_state.len <= sizeof(paging_state));
	memcpy(paging_state, m->paging_state.p, m->paging_state.len);
	paging_len = m->paging_state.len;
	memset(&params, 0, sizeof(params));
	params.consistency = SM_CQL_ONE;
	params.flags = SM_CQL_QF_PAGE_SIZE | SM_CQL_QF_PAGING_STATE;
	params.page_size = 10;
	params.paging_state = (struct sm_bytes){ paging_state, paging_len };
	CHECK(sm_cqlc_query_params(main_c, sm_cql_str("SELECT k FROM ks.t"), &params, page2_done,
				   NULL) == 0);
}

static void
timestamped_done(void *arg, const struct sm_cqlc_result *r)
{
	(void)arg;
	CHECK(r->kind == SM_CQLC_VOID);
	if (--pending == 0)
		advance();
}

static void
issue_params_requests(void)
{
	struct sm_cql_value vals[2];
	struct sm_cql_params params;
	static uint8_t k[8];

	CHECK(sm_cqlc_query(main_c, "USE ks", SM_CQL_ONE, NULL, 0, use_done, NULL) == 0);
	memset(&params, 0, sizeof(params));
	params.consistency = SM_CQL_ONE;
	params.flags = SM_CQL_QF_PAGE_SIZE;
	params.page_size = 10;
	CHECK(sm_cqlc_query_params(main_c, sm_cql_str("SELECT k FROM ks.t"), &params, page1_done,
				   NULL) == 0);
	key_of(999, k);
	memset(vals, 0, sizeof(vals));
	vals[0].v = (struct sm_bytes){ k, 8 };
	vals[0].state = SM_CQL_VALUE_SET;
	vals[1].v = value_of(999);
	vals[1].state = SM_CQL_VALUE_SET;
	memset(&params, 0, sizeof(params));
	params.consistency = SM_CQL_ONE;
	params.flags = SM_CQL_QF_TIMESTAMP;
	params.timestamp = 1700000000000000LL;
	params.values.v = vals;
	params.values.n = 2;
	CHECK(sm_cqlc_execute_params(main_c, sm_cqlc_prepared_id(&ins), &params, timestamped_done,
				     NULL) == 0);
}

static void
drain_ready(struct sm_cqlc *c, int err, void *ctx)
{
	(void)c;
	(void)ctx;
	CHECK(err == 0);
	advance();
}

static void
drain_closed_cb(struct sm_cqlc *c, int err, void *ctx)
{
	(void)ctx;
	/* The server side may be closed by its own shard's drain first. */
	if (err == -ESHUTDOWN)
		drained_shutdown++;
	else if (err != -ECONNRESET)
		failed(__LINE__, "drain: err is neither -ESHUTDOWN nor -ECONNRESET");
	drained++;
	/* The owner may close from the closed() callback. */
	sm_cqlc_close(c);
	drain_c = NULL;
}

static void
start_connect(struct sm_cqlc **c, const struct sm_cqlc_opts *o)
{
	int ret = sm_cqlc_connect(o, c);

	if (ret < 0)
		failed(__LINE__, strerror(-ret));
}

static void
next_step(void)
{
	struct sm_cqlc_opts o;
	struct sm_bytes v;
	uint8_t k[8];
	unsigned i;
	int ret;

	if (finished)
		return;
	switch (step) {
	case 0:
		cqlc_opts(&o, port_plain, main_ready, NULL);
		start_connect(&main_c, &o);
		break;
	case 1:
		for (i = 0; i < 2; i++) {
			cqlc_opts(&o, port_aware, aware_ready, (void *)(uintptr_t)i);
			o.src_port_mod = 2;
			o.src_port_rem = (uint16_t)i;
			start_connect(&aware[i], &o);
		}
		break;
	case 2:
		CHECK(sm_cqlc_query(main_c,
				    "CREATE KEYSPACE ks WITH replication = {'class': "
				    "'SimpleStrategy', 'replication_factor': 1}",
				    SM_CQL_ONE, NULL, 0, schema_done, NULL) == 0);
		break;
	case 3:
		CHECK(sm_cqlc_query(main_c, "CREATE TABLE ks.t (k blob PRIMARY KEY, v blob)",
				    SM_CQL_ONE, NULL, 0, schema_done, NULL) == 0);
		break;
	case 4:
		pending = 2;
		CHECK(sm_cqlc_prepare(main_c, "INSERT INTO ks.t (k, v) VALUES (?, ?)", prepared,
				      &ins) == 0);
		CHECK(sm_cqlc_prepare(main_c, "SELECT k, v FROM ks.t WHERE k = ?", prepared,
				      &sel) == 0);
		CHECK(sm_cqlc_inflight(main_c) == 2);
		break;
	case 5:
		/* Fill the window: the call after the last stream id says -EBUSY. */
		issued = done = 0;
		while ((ret = issue_insert(issued)) == 0)
			issued++;
		CHECK(ret == -EBUSY);
		CHECK(issued == WINDOW && sm_cqlc_inflight(main_c) == WINDOW);
		break;
	case 6:
		issued = done = 0;
		while (issued < WINDOW)
			CHECK(issue_select(issued++) == 0);
		CHECK(issue_select(0) == -EBUSY);
		break;
	case 7:
		/* Rows, a QUERY with values, errors, system tables, in one burst. */
		pending = 9;
		issue_params_requests();
		key_of(7, k);
		v = (struct sm_bytes){ k, 8 };
		CHECK(sm_cqlc_query(main_c, "SELECT k, v FROM ks.t", SM_CQL_ONE, NULL, 0, scan_done,
				    NULL) == 0);
		CHECK(sm_cqlc_query(main_c, "SELECT v FROM ks.t WHERE k = ?", SM_CQL_ONE, &v, 1,
				    query_values_done, NULL) == 0);
		CHECK(sm_cqlc_query(main_c, "SELECT * FROM ks.nope", SM_CQL_ONE, NULL, 0,
				    invalid_done, NULL) == 0);
		CHECK(sm_cqlc_prepare(main_c, "INSERT INTO ks.nope (k) VALUES (?)", invalid_done,
				      NULL) == 0);
		CHECK(sm_cqlc_query(main_c,
				    "SELECT rpc_address, data_center, rack, tokens FROM "
				    "system.local",
				    SM_CQL_ONE, NULL, 0, local_done, NULL) == 0);
		CHECK(sm_cqlc_query(main_c,
				    "SELECT rpc_address, data_center, rack, tokens FROM "
				    "system.peers",
				    SM_CQL_ONE, NULL, 0, peers_done, NULL) == 0);
		break;
	case 8:
		cqlc_opts(&o, port_plain, lz4_ready, NULL);
		o.lz4 = true;
		start_connect(&lz4_c, &o);
		break;
	case 9:
		sm_cqlc_close(lz4_c);
		lz4_c = NULL;
		cqlc_opts(&o, port_auth, auth_ready, NULL);
		o.lz4 = true; /* compression across the authentication exchange */
		o.user = USER;
		o.password = PASSWORD;
		start_connect(&other_c, &o);
		break;
	case 10:
		sm_cqlc_close(other_c);
		cqlc_opts(&o, port_auth, auth_refused, needle_incorrect);
		o.user = USER;
		o.password = "wrong";
		start_connect(&other_c, &o);
		break;
	case 11:
		sm_cqlc_close(other_c);
		cqlc_opts(&o, port_auth, auth_refused, needle_required);
		start_connect(&other_c, &o);
		break;
	case 12:
		sm_cqlc_close(other_c);
		other_c = NULL;
		cqlc_opts(&o, port_small, drop_ready, NULL);
		o.closed = drop_closed_cb;
		start_connect(&drop_c, &o);
		break;
	case 13:
		sm_cqlc_close(drop_c);
		drop_c = NULL;
		fake_mode = FAKE_GARBAGE_RESULT;
		cqlc_opts(&o, port_fake, fake_ready, NULL);
		o.closed = fake_closed_cb;
		start_connect(&fake_c, &o);
		break;
	case 14:
		sm_cqlc_close(fake_c);
		fake_mode = FAKE_CONN_ERROR;
		fake_failed = fake_closed = 0;
		cqlc_opts(&o, port_fake, fake2_ready, NULL);
		o.closed = fake2_closed_cb;
		start_connect(&fake_c, &o);
		break;
	case 15:
		sm_cqlc_close(fake_c);
		fake_mode = FAKE_BAD_VERSION;
		cqlc_opts(&o, port_fake, fake_bad_version_ready, NULL);
		start_connect(&fake_c, &o);
		break;
	case 16:
		sm_cqlc_close(fake_c);
		fake_mode = FAKE_TABLETS;
		fake_startup_tablets = false;
		cqlc_opts(&o, port_fake, fake_tablets_ready, NULL);
		start_connect(&fake_c, &o);
		break;
	case 17:
		sm_cqlc_close(fake_c);
		fake_c = NULL;
		/* Closed while connecting: no callback, nothing left behind. */
		cqlc_opts(&o, port_plain, never_ready, NULL);
		start_connect(&other_c, &o);
		sm_cqlc_close(other_c);
		cqlc_opts(&o, port_dead, refused_ready, NULL);
		start_connect(&other_c, &o);
		break;
	case 18:
		sm_cqlc_close(other_c);
		other_c = NULL;
		/* The owner closes with requests in flight: -ECANCELED, at once. */
		for (i = 0; i < 20; i++) {
			key_of(i, k);
			v = (struct sm_bytes){ k, 8 };
			CHECK(sm_cqlc_execute(main_c, sm_cqlc_prepared_id(&sel), SM_CQL_ONE, &v, 1,
					      0, cancelled_done, NULL) == 0);
		}
		CHECK(sm_cqlc_inflight(main_c) == 20);
		sm_cqlc_close(main_c);
		main_c = NULL;
		CHECK(close_cancelled == 20);
		/* Left open: the shard's drain ends it (-ESHUTDOWN). */
		cqlc_opts(&o, port_plain, drain_ready, NULL);
		o.closed = drain_closed_cb;
		start_connect(&drain_c, &o);
		break;
	default:
		finish();
		break;
	}
}

static void
next_task_fn(void *arg)
{
	(void)arg;
	next_step();
}

/* ---- a fake CQL server: enough protocol to misbehave on cue ---- */

struct fake {
	struct sm_cql_buf in, out;
};

static int
fake_accepted(struct sm_conn *c, void *listen_ctx)
{
	struct fake *f = calloc(1, sizeof(*f));

	(void)listen_ctx;
	if (f == NULL)
		return -ENOMEM;
	sm_cql_buf_init(&f->in);
	sm_cql_buf_init(&f->out);
	c->ctx = f;
	return 0;
}

static void
fake_reply(struct sm_conn *c, struct fake *f, const struct sm_cql_frame_header *h)
{
	struct sm_bytes ver = sm_cql_str("3.3.1"), empty = sm_cql_str("");
	struct sm_cql_multimap_entry e[2] = {
		{ .key = sm_cql_str("CQL_VERSION"), .values = { .v = &ver, .n = 1 } },
		{ .key = sm_cql_str(SM_TABLETS_STARTUP_KEY), .values = { .v = &empty, .n = 1 } },
	};
	struct sm_cql_multimap mm = { .e = e, .n = fake_mode == FAKE_TABLETS ? 2 : 1 };
	struct sm_bytes payload[2] = { sm_cql_str(SM_TABLETS_PAYLOAD_KEY),
				       { (const uint8_t *)"\x00\x00\x00\x08", 4 } };
	struct sm_cql_bytesmap pm = { .kv = payload, .n = 1 };
	size_t off;
	static const uint8_t bad_rows[] = { 0x84, 0, 0, 0, SM_CQL_OP_RESULT, 0, 0, 0, 5, 0,
					    0,	  0, 2, 0 };
	static const uint8_t v3[] = { 0x83, 0, 0, 0, SM_CQL_OP_SUPPORTED, 0, 0, 0, 0 };

	sm_cql_buf_reset(&f->out);
	switch (h->opcode) {
	case SM_CQL_OP_OPTIONS:
		if (fake_mode == FAKE_BAD_VERSION)
			sm_cql_write_raw(&f->out, v3, sizeof(v3));
		else
			sm_cql_enc_supported(&f->out, h->stream, &mm);
		break;
	case SM_CQL_OP_STARTUP:
		fake_startup_tablets = memmem(f->in.p + SM_CQL_HEADER_LEN, h->length,
					      SM_TABLETS_STARTUP_KEY,
					      strlen(SM_TABLETS_STARTUP_KEY)) != NULL;
		sm_cql_enc_ready(&f->out, h->stream);
		break;
	default:
		if (fake_mode == FAKE_TABLETS) {
			/* RESULT Void with a custom payload, as a misrouted request gets */
			off = sm_cql_frame_begin(&f->out, SM_CQL_VERSION_RESPONSE,
						 SM_CQL_FLAG_CUSTOM_PAYLOAD, h->stream,
						 SM_CQL_OP_RESULT);
			sm_cql_write_bytes_map(&f->out, &pm);
			sm_cql_write_int(&f->out, SM_CQL_RESULT_VOID);
			sm_cql_frame_end(&f->out, off);
			break;
		}
		if (fake_mode == FAKE_CONN_ERROR) {
			struct sm_cql_event ev = { .type = SM_CQL_EVENT_SCHEMA_CHANGE };
			struct sm_cql_error e = { .code = SM_CQL_ERR_PROTOCOL };

			if (h->stream != 1)
				return;
			ev.schema.change = SM_CQL_CHANGE_CREATED;
			ev.schema.target = SM_CQL_TARGET_KEYSPACE;
			ev.schema.keyspace = sm_cql_str("ks2");
			e.message = sm_cql_str("test says bye");
			sm_cql_enc_event(&f->out, &ev);
			sm_cql_enc_result_void(&f->out, h->stream);
			sm_cql_enc_error(&f->out, 5, &e);
			break;
		}
		/* A Rows result cut short: its metadata ends after one byte. */
		sm_cql_write_raw(&f->out, bad_rows, sizeof(bad_rows));
		f->out.p[2] = (uint8_t)((uint16_t)h->stream >> 8);
		f->out.p[3] = (uint8_t)h->stream;
		break;
	}
	sm_conn_send_copy(c, f->out.p, f->out.len);
}

static void
fake_received(struct sm_conn *c, const struct sm_iov *iov, unsigned n)
{
	struct fake *f = c->ctx;
	struct sm_cql_frame_header h;
	const char *reason;
	unsigned i;

	for (i = 0; i < n; i++)
		sm_cql_write_raw(&f->in, iov[i].base, iov[i].len);
	while (f->in.len >= SM_CQL_HEADER_LEN &&
	       sm_cql_frame_header_parse(f->in.p, f->in.len, false, &h, &reason) == 0 &&
	       f->in.len >= SM_CQL_HEADER_LEN + h.length) {
		fake_reply(c, f, &h);
		memmove(f->in.p, f->in.p + SM_CQL_HEADER_LEN + h.length,
			f->in.len - SM_CQL_HEADER_LEN - h.length);
		f->in.len -= SM_CQL_HEADER_LEN + h.length;
	}
}

static void
fake_closed_conn(struct sm_conn *c, int err)
{
	struct fake *f = c->ctx;

	(void)err;
	sm_cql_buf_release(&f->in);
	sm_cql_buf_release(&f->out);
	free(f);
}

static const struct sm_proto_ops fake_ops = {
	.name = "fake-cql",
	.accepted = fake_accepted,
	.received = fake_received,
	.closed = fake_closed_conn,
};

/* ---- the runtime ---- */

static int
listen_on(uint16_t port, enum sm_placement placement, const struct sm_proto_ops *proto, void *ctx)
{
	struct sm_listen_opts lo = {
		.addr = "127.0.0.1",
		.port = port,
		.placement = placement,
		.proto = proto,
		.ctx = ctx,
	};
	struct sm_listener *l;

	return sm_net_listen(&lo, &l);
}

static int
shard_init(unsigned shard, void *arg)
{
	int ret;

	(void)arg;
	ret = sm_net_shard_init(NULL);
	if (ret == 0)
		ret = sm_store_shard_init();
	if (ret == 0)
		ret = sm_cql_system_shard_init(&view);
	if (ret == 0)
		ret = sm_cql_exec_shard_init(&exec_cfg);
	if (ret < 0 || shard != 0)
		return ret;
	if ((ret = listen_on(port_plain, SM_PLACE_BALANCED, &sm_cql_proto_ops, &svc_plain)) < 0 ||
	    (ret = listen_on(port_aware, SM_PLACE_SRC_PORT, &sm_cql_proto_ops, &svc_plain)) < 0 ||
	    (ret = listen_on(port_auth, SM_PLACE_BALANCED, &sm_cql_proto_ops, &svc_auth)) < 0 ||
	    (ret = listen_on(port_small, SM_PLACE_BALANCED, &sm_cql_proto_ops, &svc_small)) < 0 ||
	    (ret = listen_on(port_fake, SM_PLACE_SHARD, &fake_ops, NULL)) < 0)
		return ret;
	sm_timer_init(&watchdog, on_watchdog, NULL);
	sm_timer_arm(&watchdog, 60000);
	sm_task_init(&next_task, next_task_fn, NULL);
	sm_task_schedule(&next_task);
	return 0;
}

static void
shard_fini(unsigned shard, void *arg)
{
	(void)shard;
	(void)arg;
	sm_net_shard_fini();
	sm_cql_shard_fini();
	sm_cql_exec_shard_fini();
	sm_cql_system_shard_fini();
	sm_store_shard_fini();
}

static uint16_t
free_port(void)
{
	struct sockaddr_in in = { .sin_family = AF_INET };
	socklen_t len = sizeof(in);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	bind(fd, (struct sockaddr *)&in, sizeof(in));
	getsockname(fd, (struct sockaddr *)&in, &len);
	close(fd);
	return ntohs(in.sin_port);
}

static void
test_client_against_server(void **state)
{
	struct sm_runtime_opts o = {
		.smp = 2,
		.overprovisioned = true,
		.drain_timeout_ms = 3000,
		.shard_init = shard_init,
		.shard_fini = shard_fini,
	};
	char err[512];
	unsigned attempt;
	int ret;

	(void)state;
	/*
	 * A port picked here may be taken by another process before we listen
	 * (parallel test runs): then the runtime does not start and we pick
	 * again.
	 */
	for (attempt = 0;; attempt++) {
		port_plain = free_port();
		port_aware = free_port();
		port_auth = free_port();
		port_small = free_port();
		port_fake = free_port();
		port_dead = free_port();
		assert_int_equal(sm_cql_cluster_init(&view, NULL, "127.0.0.1", port_plain, NULL,
						     err, sizeof(err)),
				 0);
		exec_cfg.cluster = &view;
		memset(&svc_plain, 0, sizeof(svc_plain));
		svc_plain.shard_aware_port = port_aware;
		svc_plain.exec = &sm_cql_exec;
		svc_plain.node = &view;
		svc_auth = svc_plain;
		svc_auth.auth_user = USER;
		svc_auth.auth_password = PASSWORD;
		svc_small = svc_plain;
		svc_small.max_frame = SMALL_FRAME;
		ret = sm_runtime_run(&o, err, sizeof(err));
		if (ret < 0 && step == 0 && attempt < 3 && strstr(err, "in use") != NULL) {
			sm_cql_cluster_free(&view);
			continue;
		}
		if (ret < 0)
			fail_msg("runtime: %s", err);
		break;
	}
	sm_cql_cluster_free(&view);
	if (failures)
		fail_msg("%d failure(s), first: %s", failures, failure_text);
	assert_int_equal(step, 19);
	assert_int_equal(close_cancelled, 20);
	assert_int_equal(drop_closed, 1);
	assert_int_equal(drop_failed, NDROP);
	assert_int_equal(fake_failed, 1);
	assert_int_equal(fake_closed, 1);
	assert_int_equal(fake2_void, 1);
	assert_int_equal(drained, 1);
	print_message("drain reached the client first: %s\n", drained_shutdown ? "yes" : "no");
}

/* Options refused before any I/O. */
static void
test_bad_options(void **state)
{
	struct sm_cqlc_opts o;
	struct sm_cqlc *c = NULL;

	(void)state;
	cqlc_opts(&o, 9042, never_ready, NULL);
	o.addr = "not-an-address";
	assert_int_equal(sm_cqlc_connect(&o, &c), -EINVAL);
	cqlc_opts(&o, 9042, never_ready, NULL);
	o.max_inflight = SM_CQLC_MAX_STREAMS + 1;
	assert_int_equal(sm_cqlc_connect(&o, &c), -EINVAL);
	cqlc_opts(&o, 9042, never_ready, NULL);
	o.user = "only-user";
	assert_int_equal(sm_cqlc_connect(&o, &c), -EINVAL);
	cqlc_opts(&o, 9042, NULL, NULL);
	assert_int_equal(sm_cqlc_connect(&o, &c), -EINVAL);
	cqlc_opts(&o, 9042, never_ready, NULL);
	o.src_port_mod = 2;
	o.src_port_rem = 2;
	assert_int_equal(sm_cqlc_connect(&o, &c), -EINVAL);
	assert_null(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_options),
		cmocka_unit_test(test_client_against_server),
	};
	char err[256];

	if (sm_net_find("uring") == NULL && sm_net_uring_register() < 0)
		return 1;
	if (sm_net_use("uring") < 0)
		return 1;
	if (sm_net_driver()->probe(err, sizeof(err)) < 0) {
		fprintf(stderr, "skipped: io_uring is unavailable: %s\n", err);
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
