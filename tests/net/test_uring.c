/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The runtime and the io_uring driver together, in-process over loopback:
 * cross-shard submit with replies, timers on shards, source-port placement
 * for client connections and the shard-aware listener, zero-copy echo
 * through buffer views, and recovery when the provided-buffer ring runs dry.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <arpa/inet.h>
#include <cmocka.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sm_core.h"
#include "sm_net.h"
#include "sm_net_uring.h"

#define SHARDS 3
#define CONNS_PER_SHARD 8
#define PAYLOAD 100000

/* ---- shared results: written by shards, checked after the run ---- */

struct results {
	unsigned xmsg_ran[SHARDS];
	unsigned xmsg_done;
	unsigned xmsg_wrong_shard;
	unsigned timer_fired;
	unsigned timer_early;
	unsigned accepted_on[SHARDS];
	unsigned accepted_wrong_shard;
	unsigned client_port_wrong;
	unsigned echoed_ok;
	unsigned echoed_bad;
	unsigned closed_server;
	unsigned retained_max;
	int connect_err;
	unsigned api_errors; /* calls that failed inside shards (no cmocka there) */
};

static struct results res;
static uint16_t test_port;
static char payload[PAYLOAD];

static void
bump(unsigned *x)
{
	__atomic_fetch_add(x, 1, __ATOMIC_RELAXED);
}

static uint16_t
port_of(const struct sockaddr_storage *ss)
{
	return ntohs(((const struct sockaddr_in *)ss)->sin_port);
}

static uint16_t
free_port(void)
{
	struct sockaddr_in in = { .sin_family = AF_INET };
	socklen_t len = sizeof(in);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&in, sizeof(in)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&in, &len), 0);
	close(fd);
	return ntohs(in.sin_port);
}

/* ---- server: echo by sending the received views back ---- */

static int
srv_accepted(struct sm_conn *c, void *ctx)
{
	(void)ctx;
	bump(&res.accepted_on[sm_shard_id()]);
	if (port_of(&c->peer) % sm_shard_count() != sm_shard_id())
		bump(&res.accepted_wrong_shard);
	return 0;
}

static void
srv_received(struct sm_conn *c, const struct sm_iov *iov, unsigned n)
{
	sm_conn_send(c, iov, n);
}

static void
srv_closed(struct sm_conn *c, int err)
{
	(void)c;
	(void)err;
	bump(&res.closed_server);
}

static const struct sm_proto_ops srv_proto = {
	.name = "test-echo",
	.accepted = srv_accepted,
	.received = srv_received,
	.closed = srv_closed,
};

/* ---- client: send PAYLOAD bytes, check the echo, close ---- */

struct client {
	struct sm_conn *c;
	size_t got;
	bool bad;
	/* views retained to starve the buffer ring (starvation test) */
	struct sm_bufseg *held[64];
	unsigned nheld;
};

static struct client clients[SHARDS][CONNS_PER_SHARD];
static unsigned clients_left; /* the run stops when this reaches 0 */
static bool retain_mode;

static void
client_connected(struct sm_conn *c, int err)
{
	struct sm_iov v = { .seg = NULL, .base = payload, .len = PAYLOAD };

	if (err < 0) {
		res.connect_err = err;
		if (__atomic_sub_fetch(&clients_left, 1, __ATOMIC_ACQ_REL) == 0)
			sm_runtime_stop();
		return;
	}
	if (port_of(&c->local) % sm_shard_count() != sm_shard_id())
		bump(&res.client_port_wrong);
	if (sm_conn_send(c, &v, 1) < 0)
		bump(&res.api_errors);
}

static void
release_held(struct client *cl)
{
	unsigned i;

	for (i = 0; i < cl->nheld; i++)
		sm_bufseg_put(cl->held[i]);
	cl->nheld = 0;
}

static void
client_received(struct sm_conn *c, const struct sm_iov *iov, unsigned n)
{
	struct client *cl = c->ctx;
	unsigned i;

	for (i = 0; i < n; i++) {
		if (cl->got + iov[i].len > PAYLOAD ||
		    memcmp(payload + cl->got, iov[i].base, iov[i].len) != 0)
			cl->bad = true;
		cl->got += iov[i].len;
		if (retain_mode && cl->nheld < SM_ARRAY_SIZE(cl->held)) {
			/* Keep the buffer: the ring (4 buffers) runs dry. */
			sm_bufseg_get(iov[i].seg);
			cl->held[cl->nheld++] = iov[i].seg;
			if (cl->nheld > res.retained_max)
				res.retained_max = cl->nheld;
		}
	}
	/* Give the buffers back in bunches so the recv is re-armed later. */
	if (retain_mode && cl->nheld >= 4)
		release_held(cl);
	if (cl->got >= PAYLOAD)
		sm_conn_close(c);
}

static void
client_closed(struct sm_conn *c, int err)
{
	struct client *cl = c->ctx;

	(void)err;
	release_held(cl);
	if (cl->got == PAYLOAD && !cl->bad)
		bump(&res.echoed_ok);
	else
		bump(&res.echoed_bad);
	if (__atomic_sub_fetch(&clients_left, 1, __ATOMIC_ACQ_REL) == 0)
		sm_runtime_stop();
}

static const struct sm_proto_ops client_proto = {
	.name = "test-client",
	.connected = client_connected,
	.received = client_received,
	.closed = client_closed,
};

static void
start_clients(void *arg)
{
	unsigned s = sm_shard_id(), i;
	struct sm_connect_opts co = {
		.addr = "127.0.0.1",
		.port = test_port,
		.src_port_mod = (uint16_t)sm_shard_count(),
		.src_port_rem = (uint16_t)s,
		.proto = &client_proto,
	};

	(void)arg;
	for (i = 0; i < CONNS_PER_SHARD; i++) {
		co.ctx = &clients[s][i];
		if (sm_net_connect(&co, &clients[s][i].c) < 0)
			bump(&res.api_errors);
	}
}

/* ---- cross-shard messages and timers ---- */

static unsigned xmsg_token[SHARDS];

static void
xmsg_fn(void *arg)
{
	unsigned *token = arg;

	if ((unsigned)(token - xmsg_token) != sm_shard_id())
		bump(&res.xmsg_wrong_shard);
	bump(&res.xmsg_ran[sm_shard_id()]);
}

static void
xmsg_done(void *arg)
{
	(void)arg;
	if (sm_shard_id() != 0)
		bump(&res.xmsg_wrong_shard);
	res.xmsg_done++;
}

static struct sm_timer timer;
static uint64_t timer_armed_ms;

static void
timer_fn(void *arg)
{
	(void)arg;
	res.timer_fired++;
	if (sm_now_ms() < timer_armed_ms + 20)
		res.timer_early++;
	if (__atomic_sub_fetch(&clients_left, 1, __ATOMIC_ACQ_REL) == 0)
		sm_runtime_stop();
}

static int
shard_init(unsigned shard, void *arg)
{
	struct sm_net_config *nc = arg;
	struct sm_listen_opts lo = {
		.addr = "127.0.0.1",
		.port = test_port,
		.placement = SM_PLACE_SRC_PORT,
		.proto = &srv_proto,
	};
	struct sm_listener *l;
	unsigned i, round;
	int ret;

	ret = sm_net_shard_init(nc);
	if (ret < 0)
		return ret;
	if (shard != 0)
		return 0;
	ret = sm_net_listen(&lo, &l);
	if (ret < 0)
		return ret;
	/* 100 messages to each shard, replies come back to shard 0. */
	for (round = 0; round < 100; round++)
		for (i = 0; i < sm_shard_count(); i++)
			if (sm_submit_to(i, xmsg_fn, &xmsg_token[i], xmsg_done) < 0)
				bump(&res.api_errors);
	sm_timer_init(&timer, timer_fn, NULL);
	timer_armed_ms = sm_now_ms();
	sm_timer_arm(&timer, 20);
	for (i = 0; i < sm_shard_count(); i++)
		sm_submit_to(i, start_clients, NULL, NULL);
	return 0;
}

static void
shard_fini(unsigned shard, void *arg)
{
	(void)shard;
	(void)arg;
	sm_net_shard_fini();
}

static void
run(struct sm_net_config *nc)
{
	struct sm_runtime_opts o = {
		.smp = SHARDS,
		.overprovisioned = true,
		.idle_poll_us = 50,
		.drain_timeout_ms = 5000,
		.shard_init = shard_init,
		.shard_fini = shard_fini,
		.arg = nc,
	};
	char err[256];
	int ret;

	memset(&res, 0, sizeof(res));
	memset(clients, 0, sizeof(clients));
	clients_left = SHARDS * CONNS_PER_SHARD + 1; /* + the timer */
	test_port = free_port();
	if (sm_net_find("uring") == NULL)
		assert_int_equal(sm_net_uring_register(), 0);
	assert_int_equal(sm_net_use("uring"), 0);
	ret = sm_net_driver()->probe(err, sizeof(err));
	if (ret < 0) {
		print_message("io_uring unavailable: %s\n", err);
		skip();
	}
	ret = sm_runtime_run(&o, err, sizeof(err));
	if (ret < 0)
		fail_msg("runtime: %s", err);
}

static void
check_common(void)
{
	unsigned i;

	assert_int_equal(res.connect_err, 0);
	assert_int_equal(res.api_errors, 0);
	for (i = 0; i < SHARDS; i++) {
		assert_int_equal(res.xmsg_ran[i], 100);
		assert_int_equal(res.accepted_on[i], CONNS_PER_SHARD);
	}
	assert_int_equal(res.xmsg_done, 100 * SHARDS);
	assert_int_equal(res.xmsg_wrong_shard, 0);
	assert_int_equal(res.accepted_wrong_shard, 0);
	assert_int_equal(res.client_port_wrong, 0);
	assert_int_equal(res.echoed_bad, 0);
	assert_int_equal(res.echoed_ok, SHARDS * CONNS_PER_SHARD);
	/* Every server-side connection was closed and reported once. */
	assert_int_equal(res.closed_server, SHARDS * CONNS_PER_SHARD);
	assert_int_equal(res.timer_fired, 1);
	assert_int_equal(res.timer_early, 0);
}

static void
test_echo_placement_xmsg_timer(void **state)
{
	struct sm_net_config nc = { 0 };

	(void)state;
	retain_mode = false;
	run(&nc);
	check_common();
}

static void
test_buffer_ring_starvation(void **state)
{
	/* 4 buffers of 512 bytes for 24 connections moving 100 KB each:
	 * receives end with ENOBUFS again and again and must resume. */
	struct sm_net_config nc = { .rx_buffers = 4, .rx_buffer_size = 512 };

	(void)state;
	retain_mode = true;
	run(&nc);
	check_common();
	assert_true(res.retained_max >= 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_echo_placement_xmsg_timer),
		cmocka_unit_test(test_buffer_ring_starvation),
	};
	unsigned i;

	for (i = 0; i < PAYLOAD; i++)
		payload[i] = (char)(i * 7 + i / 251);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
