/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CQL connections over real sockets: the runtime and the io_uring driver
 * serve sm_cql_proto_ops with a test executor, and a client thread speaks
 * the protocol with blocking sockets: OPTIONS/SUPPORTED, STARTUP/READY,
 * requests before STARTUP, pipelined requests, a frame sent byte by byte,
 * LZ4, the version downgrade error, an oversized frame, garbage, and a
 * client that vanishes mid-frame.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <arpa/inet.h>
#include <cmocka.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sm_core.h"
#include "sm_cql_conn.h"
#include "sm_net.h"
#include "sm_net_uring.h"

#define MAX_FRAME (1u << 20)

static uint16_t port;
static int failures;
static char failure_text[512];
static unsigned executed;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			if (failures++ == 0)                                                       \
				snprintf(failure_text, sizeof(failure_text), "%s:%d: %s",          \
					 __FILE__, __LINE__, #cond);                               \
			goto out;                                                                  \
		}                                                                                  \
	} while (0)

/* ---- the test executor: QUERY -> Void, anything else -> Invalid ---- */

static void
exec_request(void *ctx, struct sm_cql_req *req)
{
	struct sm_cql_buf b;

	(void)ctx;
	__atomic_add_fetch(&executed, 1, __ATOMIC_RELAXED);
	if (req->hdr.opcode != SM_CQL_OP_QUERY) {
		sm_cql_reply_error(req, SM_CQL_ERR_INVALID, "test executor: QUERY only");
		return;
	}
	sm_cql_buf_init(&b);
	sm_cql_enc_result_void(&b, req->hdr.stream);
	sm_cql_reply(req, &b);
	sm_cql_buf_release(&b);
}

static const struct sm_cql_executor exec = { .request = exec_request };
static const struct sm_cql_service svc = { .max_frame = MAX_FRAME, .exec = &exec };

/* ---- a blocking client ---- */

static int
client_connect(void)
{
	struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct timeval tv = { .tv_sec = 10 };

	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&in, sizeof(in)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static bool
send_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n > 0) {
		ssize_t w = send(fd, b, n, MSG_NOSIGNAL);

		if (w <= 0)
			return false;
		b += w;
		n -= (size_t)w;
	}
	return true;
}

static bool
recv_all(int fd, void *p, size_t n)
{
	uint8_t *b = p;

	while (n > 0) {
		ssize_t r = recv(fd, b, n, 0);

		if (r <= 0)
			return false;
		b += r;
		n -= (size_t)r;
	}
	return true;
}

/* Read one response frame into @body (decompressed when @lz4). */
static bool
read_frame(int fd, struct sm_cql_frame_header *h, struct sm_cql_buf *body, bool lz4)
{
	uint8_t hdr[SM_CQL_HEADER_LEN];
	const char *reason;
	uint8_t *raw;
	bool ok;

	if (!recv_all(fd, hdr, sizeof(hdr)) ||
	    sm_cql_frame_header_parse(hdr, sizeof(hdr), true, h, &reason) != 0)
		return false;
	raw = malloc(h->length ? h->length : 1);
	ok = recv_all(fd, raw, h->length);
	sm_cql_buf_reset(body);
	if (ok && lz4 && (h->flags & SM_CQL_FLAG_COMPRESSION))
		ok = sm_cql_lz4_decompress(body, raw, h->length, MAX_FRAME) == 0;
	else if (ok)
		sm_cql_write_raw(body, raw, h->length);
	free(raw);
	return ok;
}

static bool
read_response(int fd, struct sm_cql_frame_header *h, struct sm_cql_buf *body,
	      struct sm_cql_response *r, bool lz4)
{
	const char *reason;

	return read_frame(fd, h, body, lz4) &&
	       sm_cql_response_decode(h, body->p, body->len, 0, r, &reason) == 0;
}

static bool
at_eof(int fd)
{
	uint8_t b;

	return recv(fd, &b, 1, 0) == 0;
}

static void
startup_frame(struct sm_cql_buf *b, int16_t stream, const char *compression)
{
	struct sm_bytes kv[4] = { sm_cql_str("CQL_VERSION"), sm_cql_str("3.0.0"),
				  sm_cql_str("COMPRESSION"),
				  sm_cql_str(compression ? compression : "") };
	struct sm_cql_strmap m = { .kv = kv, .n = compression ? 2 : 1 };

	sm_cql_enc_startup(b, stream, &m);
}

static void
query_frame(struct sm_cql_buf *b, int16_t stream)
{
	struct sm_cql_params params = { .consistency = SM_CQL_ONE };

	sm_cql_enc_query(b, stream, sm_cql_str("SELECT * FROM system.local"), &params);
}

static bool
error_with(const struct sm_cql_response *r, int32_t code, const char *needle)
{
	return r->opcode == SM_CQL_OP_ERROR && r->u.error.code == code &&
	       memmem(r->u.error.message.p, r->u.error.message.len, needle, strlen(needle)) != NULL;
}

static void *
client_main(void *arg)
{
	struct sm_cql_frame_header h;
	struct sm_cql_response r;
	struct sm_cql_buf out, in;
	struct sm_cql_strlist vals;
	struct sm_bytes v;
	int fd = -1, i;
	size_t k;

	(void)arg;
	sm_cql_buf_init(&out);
	sm_cql_buf_init(&in);

	/* OPTIONS, a request before STARTUP, STARTUP, pipelined queries. */
	fd = client_connect();
	CHECK(fd >= 0);
	sm_cql_enc_options(&out, 1);
	CHECK(send_all(fd, out.p, out.len));
	CHECK(read_response(fd, &h, &in, &r, false));
	CHECK(r.opcode == SM_CQL_OP_SUPPORTED && h.stream == 1);
	CHECK(sm_cql_multimap_get(&r.u.supported, "COMPRESSION", &vals));
	CHECK(sm_cql_multimap_get(&r.u.supported, "SCYLLA_NR_SHARDS", &vals));
	CHECK(sm_cql_multimap_get(&r.u.supported, "SCYLLA_SHARDING_IGNORE_MSB", &vals));
	CHECK(sm_cql_multimap_get(&r.u.supported, "CQL_VERSION", &vals) && vals.n == 1);
	sm_cql_buf_reset(&out);
	query_frame(&out, 2);
	CHECK(send_all(fd, out.p, out.len));
	CHECK(read_response(fd, &h, &in, &r, false));
	CHECK(error_with(&r, SM_CQL_ERR_PROTOCOL, "expecting STARTUP"));
	sm_cql_buf_reset(&out);
	startup_frame(&out, 3, NULL);
	CHECK(send_all(fd, out.p, out.len));
	CHECK(read_response(fd, &h, &in, &r, false));
	CHECK(r.opcode == SM_CQL_OP_READY && h.stream == 3);
	sm_cql_buf_reset(&out);
	for (i = 10; i < 20; i++)
		query_frame(&out, (int16_t)i);
	sm_cql_enc_prepare(&out, 20, sm_cql_str("SELECT 1"));
	CHECK(send_all(fd, out.p, out.len));
	for (i = 10; i < 20; i++) {
		CHECK(read_response(fd, &h, &in, &r, false));
		CHECK(r.opcode == SM_CQL_OP_RESULT && h.stream == i);
	}
	CHECK(read_response(fd, &h, &in, &r, false));
	CHECK(error_with(&r, SM_CQL_ERR_INVALID, "QUERY only") && h.stream == 20);
	/* A frame dribbled byte by byte. */
	sm_cql_buf_reset(&out);
	query_frame(&out, 21);
	for (k = 0; k < out.len; k++)
		CHECK(send_all(fd, out.p + k, 1));
	CHECK(read_response(fd, &h, &in, &r, false));
	CHECK(r.opcode == SM_CQL_OP_RESULT && h.stream == 21);
	close(fd);

	/* LZ4: the READY is plain, then both directions are compressed. */
	fd = client_connect();
	CHECK(fd >= 0);
	sm_cql_buf_reset(&out);
	startup_frame(&out, 1, "lz4");
	CHECK(send_all(fd, out.p, out.len));
	CHECK(read_response(fd, &h, &in, &r, false));
	CHECK(r.opcode == SM_CQL_OP_READY);
	sm_cql_buf_reset(&out);
	query_frame(&out, 2);
	{
		struct sm_cql_buf scratch;

		sm_cql_buf_init(&scratch);
		CHECK(sm_cql_frame_compress(&out, 0, &scratch) == 0);
		sm_cql_buf_release(&scratch);
	}
	CHECK(send_all(fd, out.p, out.len));
	CHECK(read_response(fd, &h, &in, &r, true));
	CHECK(r.opcode == SM_CQL_OP_RESULT && h.stream == 2);
	close(fd);

	/* An unknown compression is refused, the connection stays. */
	fd = client_connect();
	CHECK(fd >= 0);
	sm_cql_buf_reset(&out);
	startup_frame(&out, 1, "snappy");
	CHECK(send_all(fd, out.p, out.len));
	CHECK(read_response(fd, &h, &in, &r, false));
	CHECK(error_with(&r, SM_CQL_ERR_PROTOCOL, "compression"));
	close(fd);

	/* Protocol v5: the downgrade error on the same stream, then EOF. */
	fd = client_connect();
	CHECK(fd >= 0);
	sm_cql_buf_reset(&out);
	sm_cql_enc_options(&out, 7);
	out.p[0] = 0x05;
	CHECK(send_all(fd, out.p, out.len));
	CHECK(read_response(fd, &h, &in, &r, false));
	CHECK(error_with(&r, SM_CQL_ERR_PROTOCOL, "Invalid or unsupported protocol version") &&
	      h.stream == 7);
	CHECK(at_eof(fd));
	close(fd);

	/* A frame over the limit: an error before any body is read, then EOF. */
	fd = client_connect();
	CHECK(fd >= 0);
	sm_cql_buf_reset(&out);
	query_frame(&out, 3);
	v.len = htonl(MAX_FRAME + 10);
	memcpy(out.p + 5, &v.len, 4);
	CHECK(send_all(fd, out.p, SM_CQL_HEADER_LEN));
	CHECK(read_response(fd, &h, &in, &r, false));
	CHECK(error_with(&r, SM_CQL_ERR_PROTOCOL, "too big"));
	CHECK(at_eof(fd));
	close(fd);

	/* Garbage (a response direction byte): a protocol error, then EOF. */
	fd = client_connect();
	CHECK(fd >= 0);
	CHECK(send_all(fd, "\x84GARBAGE-GARBAGE", 16));
	CHECK(read_response(fd, &h, &in, &r, false));
	CHECK(r.opcode == SM_CQL_OP_ERROR && r.u.error.code == SM_CQL_ERR_PROTOCOL);
	CHECK(at_eof(fd));
	close(fd);

	/* A client vanishing mid-frame; the next one is served. */
	fd = client_connect();
	CHECK(fd >= 0);
	sm_cql_buf_reset(&out);
	query_frame(&out, 3);
	CHECK(send_all(fd, out.p, out.len - 5));
	close(fd);
	fd = client_connect();
	CHECK(fd >= 0);
	sm_cql_buf_reset(&out);
	sm_cql_enc_options(&out, 4);
	CHECK(send_all(fd, out.p, out.len));
	CHECK(read_response(fd, &h, &in, &r, false));
	CHECK(r.opcode == SM_CQL_OP_SUPPORTED);
out:
	if (fd >= 0)
		close(fd);
	sm_cql_buf_release(&out);
	sm_cql_buf_release(&in);
	sm_runtime_stop();
	return NULL;
}

static pthread_t client;

static int
shard_init(unsigned shard, void *arg)
{
	struct sm_listen_opts lo = {
		.addr = "127.0.0.1",
		.port = port,
		.proto = &sm_cql_proto_ops,
		.ctx = (void *)(uintptr_t)&svc,
	};
	struct sm_listener *l;
	int ret;

	(void)arg;
	ret = sm_net_shard_init(NULL);
	if (ret < 0 || shard != 0)
		return ret;
	ret = sm_net_listen(&lo, &l);
	if (ret < 0)
		return ret;
	return -pthread_create(&client, NULL, client_main, NULL);
}

static void
shard_fini(unsigned shard, void *arg)
{
	(void)shard;
	(void)arg;
	sm_net_shard_fini();
	sm_cql_shard_fini();
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
test_cql_connection(void **state)
{
	struct sm_runtime_opts o = {
		.smp = 2,
		.overprovisioned = true,
		.drain_timeout_ms = 3000,
		.shard_init = shard_init,
		.shard_fini = shard_fini,
	};
	char err[256];

	(void)state;
	port = free_port();
	if (sm_net_find("uring") == NULL)
		assert_int_equal(sm_net_uring_register(), 0);
	assert_int_equal(sm_net_use("uring"), 0);
	if (sm_net_driver()->probe(err, sizeof(err)) < 0) {
		print_message("io_uring unavailable: %s\n", err);
		skip();
	}
	if (sm_runtime_run(&o, err, sizeof(err)) < 0)
		fail_msg("runtime: %s", err);
	pthread_join(client, NULL);
	if (failures)
		fail_msg("%d failure(s), first: %s", failures, failure_text);
	assert_int_equal(executed, 13);
}

/* ---- timeouts: a request that waits, a frame that never completes ---- */

/*
 * The "hang" executor keeps a QUERY with the text "hang" and answers it
 * 600 ms later (past the 200 ms request timeout); everything else at once.
 */
static struct sm_cql_req *held_req;
static struct sm_timer late_timer;

static void
late_reply(void *arg)
{
	struct sm_cql_buf b;

	(void)arg;
	sm_cql_buf_init(&b);
	sm_cql_enc_result_void(&b, held_req->hdr.stream);
	sm_cql_reply(held_req, &b); /* timed out already: dropped */
	sm_cql_buf_release(&b);
	held_req = NULL;
}

static void
hang_request(void *ctx, struct sm_cql_req *req)
{
	struct sm_bytes q = req->msg.u.query.query;

	if (req->hdr.opcode == SM_CQL_OP_QUERY && q.len == 4 && memcmp(q.p, "hang", 4) == 0) {
		held_req = req;
		sm_timer_init(&late_timer, late_reply, NULL);
		sm_timer_arm(&late_timer, 600);
		return;
	}
	exec_request(ctx, req);
}

static const struct sm_cql_executor hang_exec = { .request = hang_request };
static const struct sm_cql_service timeout_svc = {
	.max_frame = MAX_FRAME,
	.exec = &hang_exec,
	.timeout_ms = { [SM_CQL_TIMEOUT_OTHER] = 200 },
	.frame_timeout_ms = 300,
};

static void *
timeout_client(void *arg)
{
	struct sm_cql_params params = { .consistency = SM_CQL_ONE };
	struct sm_cql_frame_header h;
	struct sm_cql_response r;
	struct sm_cql_buf out, in;
	int fd = -1;

	(void)arg;
	sm_cql_buf_init(&out);
	sm_cql_buf_init(&in);
	fd = client_connect();
	CHECK(fd >= 0);
	startup_frame(&out, 1, NULL);
	CHECK(send_all(fd, out.p, out.len));
	CHECK(read_response(fd, &h, &in, &r, false) && r.opcode == SM_CQL_OP_READY);
	/* The request that waits gets ReadTimeout (request_timeout_in_ms) on its stream. */
	sm_cql_buf_reset(&out);
	sm_cql_enc_query(&out, 3, sm_cql_str("hang"), &params);
	CHECK(send_all(fd, out.p, out.len));
	CHECK(read_response(fd, &h, &in, &r, false));
	CHECK(h.stream == 3 && error_with(&r, SM_CQL_ERR_READ_TIMEOUT, "request_timeout_in_ms"));
	CHECK(r.u.error.blockfor == 1 && r.u.error.received == 0);
	/* Others go on; after the late reply would have come, the next frame is ours. */
	usleep(700 * 1000);
	sm_cql_buf_reset(&out);
	query_frame(&out, 5);
	CHECK(send_all(fd, out.p, out.len));
	CHECK(read_response(fd, &h, &in, &r, false) && h.stream == 5 &&
	      r.opcode == SM_CQL_OP_RESULT);
	close(fd);
	/* Five bytes of a header, then nothing: a protocol error and the close. */
	fd = client_connect();
	CHECK(fd >= 0);
	CHECK(send_all(fd, "\x04\x00\x00\x01\x07", 5));
	CHECK(read_response(fd, &h, &in, &r, false));
	CHECK(error_with(&r, SM_CQL_ERR_PROTOCOL, "native_transport_frame_timeout_in_ms"));
	CHECK(at_eof(fd));
out:
	if (fd >= 0)
		close(fd);
	sm_cql_buf_release(&out);
	sm_cql_buf_release(&in);
	sm_runtime_stop();
	return NULL;
}

static int
timeout_init(unsigned shard, void *arg)
{
	struct sm_listen_opts lo = {
		.addr = "127.0.0.1",
		.port = port,
		.proto = &sm_cql_proto_ops,
		.ctx = (void *)(uintptr_t)&timeout_svc,
	};
	struct sm_listener *l;
	int ret;

	(void)arg;
	ret = sm_net_shard_init(NULL);
	if (ret < 0 || shard != 0)
		return ret;
	ret = sm_net_listen(&lo, &l);
	if (ret < 0)
		return ret;
	return -pthread_create(&client, NULL, timeout_client, NULL);
}

static void
test_timeouts(void **state)
{
	struct sm_runtime_opts o = {
		.smp = 1,
		.overprovisioned = true,
		.drain_timeout_ms = 3000,
		.shard_init = timeout_init,
		.shard_fini = shard_fini,
	};
	char err[256];

	(void)state;
	failures = 0;
	port = free_port();
	if (sm_net_find("uring") == NULL)
		assert_int_equal(sm_net_uring_register(), 0);
	assert_int_equal(sm_net_use("uring"), 0);
	if (sm_net_driver()->probe(err, sizeof(err)) < 0) {
		print_message("io_uring unavailable: %s\n", err);
		skip();
	}
	if (sm_runtime_run(&o, err, sizeof(err)) < 0)
		fail_msg("runtime: %s", err);
	pthread_join(client, NULL);
	if (failures)
		fail_msg("%d failure(s), first: %s", failures, failure_text);
	assert_null(held_req); /* the late reply ran, and was dropped */
}

/* ---- in-process connections ---- */

static unsigned local_replies;
static uint8_t local_opcodes[4];
static int16_t local_streams[4];

static void
local_reply(void *ctx, const uint8_t *frame, size_t len)
{
	struct sm_cql_frame_header h;
	const char *reason;

	(void)ctx;
	if (len >= SM_CQL_HEADER_LEN && local_replies < 4 &&
	    sm_cql_frame_header_parse(frame, len, true, &h, &reason) == 0 &&
	    h.length + SM_CQL_HEADER_LEN == len) {
		local_opcodes[local_replies] = h.opcode;
		local_streams[local_replies] = h.stream;
	}
	local_replies++;
}

static int
local_init(unsigned shard, void *arg)
{
	static const uint8_t query[] = {
		0, 0, 0, 8, 'S', 'E', 'L', 'E', 'C', 'T', ' ', '1', 0, 1, 0
	};
	struct sm_cql_conn *c;

	(void)shard;
	(void)arg;
	c = sm_cql_local_conn(&svc, local_reply, NULL);
	if (c == NULL)
		return -ENOMEM;
	sm_cql_local_request(c, 7, SM_CQL_OP_QUERY, query, sizeof(query));
	sm_cql_local_request(c, 8, SM_CQL_OP_PREPARE, query, 12);
	sm_cql_local_request(c, 9, SM_CQL_OP_OPTIONS, NULL, 0);
	sm_cql_local_conn_close(c);
	sm_runtime_stop();
	return 0;
}

static void
test_local_connection(void **state)
{
	struct sm_runtime_opts o = {
		.smp = 1,
		.overprovisioned = true,
		.shard_init = local_init,
		.shard_fini = shard_fini,
	};
	char err[256];

	(void)state;
	executed = 0;
	if (sm_runtime_run(&o, err, sizeof(err)) < 0)
		fail_msg("runtime: %s", err);
	/* The executor answered QUERY (Void) and PREPARE (its error), the
	 * connection OPTIONS; every reply went to the callback, on its stream. */
	assert_int_equal(executed, 2);
	assert_int_equal(local_replies, 3);
	assert_int_equal(local_opcodes[0], SM_CQL_OP_RESULT);
	assert_int_equal(local_streams[0], 7);
	assert_int_equal(local_opcodes[1], SM_CQL_OP_ERROR);
	assert_int_equal(local_streams[1], 8);
	assert_int_equal(local_opcodes[2], SM_CQL_OP_SUPPORTED);
	assert_int_equal(local_streams[2], 9);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cql_connection),
		cmocka_unit_test(test_local_connection),
		cmocka_unit_test(test_timeouts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
