/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: the CQL native protocol server side end to end: frame
 * decoding (sm_cql_conn.c, sm_cql_proto.c, LZ4), the statement parser and
 * the executor on a scratch store (lib/store), system tables included.
 *
 * Input: a control byte, then the bytes a client sends (frames, usually
 * STARTUP first). The client sends a frame once the server finished with
 * the one before (so a CREATE is done when the INSERT after it comes), or
 * everything at once with bit 7 (pipelined). The control byte also cuts
 * what is sent into receive buffers (bits 0-2: whole, or pieces of 1 to
 * 4096 bytes; bits 3-4: views per received() call), turns
 * PasswordAuthenticator on (bit 5), and makes the client vanish right
 * after its last frame (bit 6), before the executor's queued work ran.
 *
 * The executor needs a shard: one runtime of one shard runs on a thread of
 * its own for the whole process (LLVMFuzzerInitialize), and each input is
 * handed to it. Its waiter, called only when the shard is idle, is where
 * an input ends: the connection closes, what that queued runs, then the
 * store and the executor's caches are torn down and built again, so every
 * input starts from an empty store (a crash replays from its input alone)
 * and nothing grows across inputs.
 *
 * What must hold: no crash, leak or UBSan report; every response frame the
 * server sends decodes (decompressed when flagged); every receive buffer
 * reference comes back.
 */

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_net.h"
#include "sm_core.h"
#include "sm_cql_conn.h"
#include "sm_cql_exec.h"
#include "sm_cql_system.h"
#include "sm_store.h"

#define MAX_FRAME (256u << 10)

enum phase {
	P_STARTING, /* the runtime is coming up */
	P_IDLE,	    /* waiting for an input */
	P_PENDING,  /* an input was handed over */
	P_RUNNING,  /* delivered; the executor works until the shard is idle */
	P_CLOSING,  /* the connection closed; what that queued runs */
	P_DONE,	    /* torn down: the fuzzer's thread may go on */
	P_FAILED,   /* the runtime did not start */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static enum phase phase = P_STARTING;
static const uint8_t *in_data;
static size_t in_size;

static struct sm_cql_cluster cluster;
static struct sm_cql_exec_config exec_cfg = { .cluster = &cluster };
static struct sm_cql_service svc;
static struct fuzz_conn conn;
static bool conn_open;
/* what the client has still to send */
static const uint8_t *send_p;
static size_t send_left;
static uint8_t ctl;

/* ---- responses: every frame the server sends must decode ---- */

static struct sm_cql_buf resp, plain;
static bool trace; /* FUZZ_TRACE=1: print every response (triage) */

static void
trace_response(const struct sm_cql_frame_header *h, const struct sm_cql_response *r)
{
	const char *name = sm_cql_opcode_name(h->opcode);

	if (r->opcode == SM_CQL_OP_ERROR)
		fprintf(stderr, "stream %d: ERROR 0x%04x %.*s\n", h->stream, r->u.error.code,
			(int)r->u.error.message.len, (const char *)r->u.error.message.p);
	else
		fprintf(stderr, "stream %d: %s\n", h->stream, name ? name : "?");
}

static void
check_frames(void)
{
	struct sm_cql_frame_header h;
	struct sm_cql_response r;
	const char *reason = NULL;
	size_t off = 0;
	int rc;

	while (resp.len - off >= SM_CQL_HEADER_LEN) {
		rc = sm_cql_frame_header_parse(resp.p + off, resp.len - off, true, &h, &reason);
		FUZZ_CHECK(rc == 0);
		if (resp.len - off < SM_CQL_HEADER_LEN + (size_t)h.length)
			break;
		sm_cql_buf_reset(&plain);
		if (h.flags & SM_CQL_FLAG_COMPRESSION)
			FUZZ_CHECK(sm_cql_lz4_decompress(&plain, resp.p + off + SM_CQL_HEADER_LEN,
							 h.length, 1u << 30) == 0);
		else
			sm_cql_write_raw(&plain, resp.p + off + SM_CQL_HEADER_LEN, h.length);
		FUZZ_CHECK(plain.err == 0);
		rc = sm_cql_response_decode(&h, plain.p, plain.len, 0, &r, &reason);
		if (rc != 0) {
			fprintf(stderr, "undecodable %s response: %s\n",
				sm_cql_opcode_name(h.opcode) ? sm_cql_opcode_name(h.opcode) : "?",
				reason ? reason : "?");
			abort();
		}
		if (trace)
			trace_response(&h, &r);
		off += SM_CQL_HEADER_LEN + h.length;
	}
	/* Keep the partial frame at the front. */
	memmove(resp.p, resp.p + off, resp.len - off);
	resp.len -= off;
}

static void
on_send(struct fuzz_conn *f, const uint8_t *p, size_t len)
{
	(void)f;
	sm_cql_write_raw(&resp, p, len);
	FUZZ_CHECK(resp.err == 0);
	check_frames();
}

/* ---- one input, on the shard ---- */

static void
conn_close(int err)
{
	if (!conn_open)
		return;
	conn_open = false;
	sm_cql_proto_ops.closed(&conn.c, err);
	fuzz_conn_fini(&conn);
}

/* Send the next frame (everything when pipelined); false when all was sent. */
static bool
send_next(void)
{
	static const size_t pieces[8] = { 0, 1, 3, 9, 64, 333, 1024, 4096 };
	size_t n = send_left;

	if (send_left == 0 || !conn_open || conn.c.closing)
		return false;
	if (!(ctl & 128) && send_left >= SM_CQL_HEADER_LEN) {
		uint32_t body = (uint32_t)send_p[5] << 24 | (uint32_t)send_p[6] << 16 |
				(uint32_t)send_p[7] << 8 | send_p[8];

		if (body <= send_left - SM_CQL_HEADER_LEN)
			n = SM_CQL_HEADER_LEN + body;
	}
	fuzz_deliver(&conn, &sm_cql_proto_ops, send_p, n, pieces[ctl & 7], 1 + ((ctl >> 3) & 3));
	send_p += n;
	send_left -= n;
	if (send_left == 0 && (ctl & 64))
		conn_close(-ECONNRESET);
	return true;
}

static void
run_input(void)
{
	ctl = in_size > 0 ? in_data[0] : 0;
	send_p = in_size > 0 ? in_data + 1 : in_data;
	send_left = in_size > 0 ? in_size - 1 : 0;
	svc.auth_user = (ctl & 32) ? "cassandra" : NULL;
	svc.auth_password = (ctl & 32) ? "cassandra" : NULL;
	memset(&conn, 0, sizeof(conn));
	conn.c.drv = &fuzz_driver;
	conn.c.proto = &sm_cql_proto_ops;
	conn.on_send = on_send;
	sm_cql_buf_reset(&resp);
	FUZZ_CHECK(sm_cql_proto_ops.accepted(&conn.c, &svc) == 0);
	conn_open = true;
	send_next();
}

static int
services_init(void)
{
	int ret = sm_store_shard_init();

	if (ret == 0)
		ret = sm_cql_exec_shard_init(&exec_cfg);
	return ret;
}

static void
services_fini(void)
{
	sm_cql_exec_shard_fini();
	sm_store_shard_fini();
}

/* The input is over: an empty store for the next one. */
static void
input_done(void)
{
	FUZZ_CHECK(fuzz_segs_live == 0);
	services_fini();
	sm_cql_shard_fini();
	FUZZ_CHECK(services_init() == 0);
}

static unsigned
poll_input(void *ctx)
{
	bool pending;

	(void)ctx;
	pthread_mutex_lock(&mu);
	pending = phase == P_PENDING;
	if (pending)
		phase = P_RUNNING;
	pthread_mutex_unlock(&mu);
	if (!pending)
		return 0;
	run_input();
	return 1;
}

/* Called only when the shard has nothing left to do. */
static int
idle_wait(void *ctx, int64_t timeout_ns)
{
	(void)ctx;
	(void)timeout_ns;
	pthread_mutex_lock(&mu);
	if (phase == P_RUNNING) {
		pthread_mutex_unlock(&mu);
		if (send_next())
			return 0; /* the server is done with the last frame: the next one */
		pthread_mutex_lock(&mu);
		phase = P_CLOSING;
		pthread_mutex_unlock(&mu);
		conn_close(0);
		return 0; /* run what the close queued */
	}
	if (phase == P_CLOSING) {
		input_done();
		phase = P_DONE;
		pthread_cond_broadcast(&cv);
	}
	while (phase != P_PENDING)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	return 0;
}

static const struct sm_poller poller = { .name = "fuzz", .poll = poll_input };
static const struct sm_waiter waiter = { .wait = idle_wait };

static int
shard_init(unsigned shard, void *arg)
{
	int ret;

	(void)shard;
	(void)arg;
	fuzz_net_init();
	sm_cql_buf_init(&resp);
	sm_cql_buf_init(&plain);
	ret = sm_cql_system_shard_init(&cluster);
	if (ret == 0)
		ret = services_init();
	if (ret == 0)
		ret = sm_shard_add_poller(&poller);
	if (ret < 0)
		return ret;
	sm_shard_set_waiter(&waiter);
	pthread_mutex_lock(&mu);
	phase = P_IDLE;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	return 0;
}

static void *
runtime_main(void *arg)
{
	struct sm_runtime_opts o = {
		.smp = 1,
		.overprovisioned = true, /* unpinned, never spins */
		.shard_init = shard_init,
	};
	char err[256];

	(void)arg;
	if (sm_runtime_run(&o, err, sizeof(err)) < 0) {
		fprintf(stderr, "fuzz_cql: the shard runtime did not start: %s\n", err);
		pthread_mutex_lock(&mu);
		phase = P_FAILED;
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	pthread_t t;
	char err[256];

	(void)argc;
	(void)argv;
	if (sm_cql_cluster_init(&cluster, "fuzz", "127.0.0.1", 9042, NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "fuzz_cql: %s\n", err);
		abort();
	}
	trace = getenv("FUZZ_TRACE") != NULL;
	svc.max_frame = MAX_FRAME;
	svc.exec = &sm_cql_exec;
	svc.node = &cluster;
	FUZZ_CHECK(pthread_create(&t, NULL, runtime_main, NULL) == 0);
	pthread_detach(t);
	pthread_mutex_lock(&mu);
	while (phase == P_STARTING)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	FUZZ_CHECK(phase == P_IDLE);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pthread_mutex_lock(&mu);
	in_data = data;
	in_size = size;
	phase = P_PENDING;
	pthread_cond_broadcast(&cv);
	while (phase != P_DONE)
		pthread_cond_wait(&cv, &mu);
	phase = P_IDLE;
	pthread_mutex_unlock(&mu);
	return 0;
}
