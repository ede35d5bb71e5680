/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/tcpip TCP from packet vectors: the test plays the peer, builds every
 * segment by hand and checks every segment the stack sends (flags,
 * sequence and acknowledgement numbers, windows, options, payload bytes,
 * checksums) at times the test chooses. Covers passive and active open,
 * data both ways with delayed ACKs, retransmission with RFC 6298 timing and
 * Karn's rule, NewReno fast retransmit and partial ACKs, out-of-order
 * segments, a full receive window and zero-window probing, RST and SYN
 * handling with RFC 5961 challenge ACKs, FIN in both orders, simultaneous
 * close and TIME_WAIT, and zero-copy receive through recv_ref().
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "tcpip_test.h"

#define PORT 80
#define PPORT 40000 /* the peer's port */
#define PISN 1000u  /* the peer's initial sequence number */

struct h {
	struct t_cap cap; /* first: the tx callback's ctx */
	struct sm_tcpip *s;
	uint64_t now;
	struct sm_tcp_conn *conn;
	uint32_t iss;
	int accepted, connected, connected_err, closed, closed_err, eof, writable;
	bool hold; /* do not consume in recv */
	uint8_t rx[1 << 18];
	size_t rxlen;
	/* zero-copy: the frame being input with a ref, and what recv_ref() saw */
	const uint8_t *frame;
	size_t frame_len;
	int recv_calls, ref_calls;
};

static int
cb_accepted(void *ctx, struct sm_tcp_conn *c)
{
	struct h *h = ctx;

	h->accepted++;
	h->conn = c;
	return 0;
}

static void
cb_connected(void *ctx, struct sm_tcp_conn *c, int err)
{
	struct h *h = ctx;

	h->connected++;
	h->connected_err = err;
	if (err < 0)
		h->conn = NULL;
	else
		h->conn = c;
}

static void
cb_recv(void *ctx, struct sm_tcp_conn *c, const void *data, size_t len)
{
	struct h *h = ctx;

	if (len == 0) {
		h->eof++;
		return;
	}
	assert_true(h->rxlen + len <= sizeof(h->rx));
	memcpy(h->rx + h->rxlen, data, len);
	h->rxlen += len;
	if (!h->hold)
		sm_tcp_consume(c, len, h->now);
}

/* Counts copied deliveries apart from zero-copy ones. */
static void
cb_recv_counted(void *ctx, struct sm_tcp_conn *c, const void *data, size_t len)
{
	struct h *h = ctx;

	if (len > 0)
		h->recv_calls++;
	cb_recv(ctx, c, data, len);
}

/* A zero-copy view must point into the frame being input, with its ref. */
static void
cb_recv_ref(void *ctx, struct sm_tcp_conn *c, const void *data, size_t len, void *ref)
{
	struct h *h = ctx;
	const uint8_t *p = data;

	assert_ptr_equal(ref, h->frame);
	assert_true(p >= h->frame && p + len <= h->frame + h->frame_len);
	assert_true(len > 0);
	h->ref_calls++;
	cb_recv(ctx, c, data, len);
}

static void
cb_writable(void *ctx, struct sm_tcp_conn *c)
{
	struct h *h = ctx;

	(void)c;
	h->writable++;
}

static void
cb_closed(void *ctx, struct sm_tcp_conn *c, int err)
{
	struct h *h = ctx;

	(void)c;
	h->closed++;
	h->closed_err = err;
	h->conn = NULL;
}

static const struct sm_tcpip_ops h_ops = {
	.tx = t_tx,
	.accepted = cb_accepted,
	.connected = cb_connected,
	.recv = cb_recv,
	.writable = cb_writable,
	.closed = cb_closed,
};

static const struct sm_tcpip_ops h_ops_zc = {
	.tx = t_tx,
	.accepted = cb_accepted,
	.connected = cb_connected,
	.recv = cb_recv_counted,
	.recv_ref = cb_recv_ref,
	.writable = cb_writable,
	.closed = cb_closed,
};

static struct h *
h_new_ops(const struct sm_tcpip_config *tweak, const struct sm_tcpip_ops *ops)
{
	struct h *h = calloc(1, sizeof(*h));
	struct sm_tcpip_config cfg = { 0 };

	if (tweak)
		cfg = *tweak;
	memcpy(cfg.mac, t_mac_us, 6);
	cfg.ip = T_IP_US;
	cfg.netmask = T_MASK;
	cfg.ops = ops;
	cfg.ctx = h;
	memcpy(cfg.secret, "0123456789abcdef", 16);
	assert_int_equal(sm_tcpip_create(&cfg, &h->s), 0);
	assert_int_equal(sm_tcpip_arp_add(h->s, T_IP_PEER, t_mac_peer), 0);
	h->now = 1000 * T_SEC;
	return h;
}

static struct h *
h_new_cfg(const struct sm_tcpip_config *tweak)
{
	return h_new_ops(tweak, &h_ops);
}

static struct h *
h_new(void)
{
	return h_new_cfg(NULL);
}

static void
h_free(struct h *h)
{
	sm_tcpip_destroy(h->s);
	free(h);
}

/*
 * The peer sends one segment; with @keep, in a frame the driver keeps
 * (sm_tcpip_input_ref), so in-order payload may arrive through recv_ref().
 */
static void
h_in_frame(struct h *h, bool keep, uint32_t seq, uint32_t ack, uint8_t flags, uint16_t wnd,
	   const void *data, size_t dlen)
{
	uint8_t f[T_FRAME_MAX];
	struct t_seg s = { .sport = PPORT,
			   .dport = PORT,
			   .seq = seq,
			   .ack = ack,
			   .flags = flags,
			   .wnd = wnd,
			   .data = data,
			   .dlen = dlen };
	size_t len = t_tcp_frame(f, &s);

	if (!keep) {
		sm_tcpip_input(h->s, f, len, h->now);
		return;
	}
	h->frame = f;
	h->frame_len = len;
	sm_tcpip_input_ref(h->s, f, len, h->now, f);
	h->frame = NULL;
}

#define h_in(h, ...) h_in_frame(h, false, __VA_ARGS__)
#define h_in_ref(h, ...) h_in_frame(h, true, __VA_ARGS__)

static void
h_in_opts(struct h *h, uint16_t sport, uint16_t dport, uint32_t seq, uint32_t ack, uint8_t flags,
	  uint16_t wnd, const uint8_t *opt, unsigned optlen)
{
	uint8_t f[T_FRAME_MAX];
	struct t_seg s = { .sport = sport,
			   .dport = dport,
			   .seq = seq,
			   .ack = ack,
			   .flags = flags,
			   .wnd = wnd,
			   .opt = opt,
			   .optlen = optlen };

	sm_tcpip_input(h->s, f, t_tcp_frame(f, &s), h->now);
}

/* The next segment the stack sent, parsed and checksum-verified. */
static struct t_out
h_out(struct h *h)
{
	struct t_frame *f = t_pop(&h->cap);
	struct t_out o;

	assert_non_null(f);
	assert_memory_equal(f->b, t_mac_peer, 6);
	o = t_parse(f);
	assert_true(o.ok);
	return o;
}

/* A macro so a failure names the test's line. */
#define h_none(h) assert_int_equal(t_pending(&(h)->cap), 0)

static void
h_poll(struct h *h, uint64_t t)
{
	h->now = t;
	sm_tcpip_poll(h->s, t);
}

static struct sm_tcpip_stats
h_stats(struct h *h)
{
	struct sm_tcpip_stats st;

	sm_tcpip_stats(h->s, &st);
	return st;
}

static const uint8_t syn_opts_ws7[] = { 2, 4, 0x05, 0xb4, 1, 3, 3, 7 }; /* MSS 1460, WS 7 */
static const uint8_t syn_opts_nows[] = { 2, 4, 0x05, 0xb4 };

/*
 * Passive open on PORT: the peer's SYN with window scale 7 (or none), our
 * SYN-ACK checked, the peer's ACK advertising @wnd (in its scaled units).
 */
static void
h_accept(struct h *h, bool ws, uint16_t wnd)
{
	struct t_out o;

	assert_int_equal(sm_tcp_listen(h->s, PORT), 0);
	h_in_opts(h, PPORT, PORT, PISN, 0, F_SYN, 65535, ws ? syn_opts_ws7 : syn_opts_nows,
		  ws ? sizeof(syn_opts_ws7) : sizeof(syn_opts_nows));
	o = h_out(h);
	assert_int_equal(o.flags, F_SYN | F_ACK);
	assert_int_equal(o.sport, PORT);
	assert_int_equal(o.dport, PPORT);
	assert_int_equal(o.ack, PISN + 1);
	assert_int_equal(o.mss, 1460);
	assert_int_equal(o.dlen, 0);
	h->iss = o.seq;
	h_none(h);
	assert_int_equal(h->accepted, 0);
	h_in(h, PISN + 1, h->iss + 1, F_ACK, wnd, NULL, 0);
	assert_int_equal(h->accepted, 1);
	assert_non_null(h->conn);
	assert_string_equal(sm_tcp_state_name(h->conn), "ESTABLISHED");
	h_none(h);
}

static void
fill(uint8_t *b, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(i * 7 + seed + (i >> 8));
}

/* ---- open ---- */

static void
test_passive_open(void **state)
{
	struct h *h = h_new();

	(void)state;
	h_accept(h, true, 512);
	/* The SYN-ACK offered scale 2 (128 KiB buffer): checked through the next ACK's window. */
	uint8_t d[10] = { 0 };
	h_in(h, PISN + 1, h->iss + 1, F_ACK | F_PSH, 512, d, sizeof(d));
	h_poll(h, h->now + 40 * T_MS);
	struct t_out o = h_out(h);
	assert_int_equal(o.ack, PISN + 11);
	assert_int_equal(o.wnd, (128 * 1024) >> 2);
	struct sm_tcpip_stats st = h_stats(h);
	assert_int_equal(st.tcp_passive_opens, 1);
	assert_int_equal(st.tcp_conns, 1);
	h_free(h);
}

static void
test_passive_open_no_wscale(void **state)
{
	struct h *h = h_new();
	struct t_out o;

	(void)state;
	assert_int_equal(sm_tcp_listen(h->s, PORT), 0);
	assert_int_equal(sm_tcp_listen(h->s, PORT), -EADDRINUSE);
	h_in_opts(h, PPORT, PORT, PISN, 0, F_SYN, 65535, syn_opts_nows, sizeof(syn_opts_nows));
	o = h_out(h);
	assert_int_equal(o.flags, F_SYN | F_ACK);
	assert_int_equal(o.ws, -1); /* RFC 7323: no option unless the SYN had one */
	assert_int_equal(o.wnd, 65535);
	/* A retransmitted SYN gets the same SYN-ACK again. */
	h_in_opts(h, PPORT, PORT, PISN, 0, F_SYN, 65535, syn_opts_nows, sizeof(syn_opts_nows));
	struct t_out o2 = h_out(h);
	assert_int_equal(o2.flags, F_SYN | F_ACK);
	assert_int_equal(o2.seq, o.seq);
	/* Lost SYN-ACKs are retransmitted on the RTO. */
	h_poll(h, h->now + T_SEC);
	o2 = h_out(h);
	assert_int_equal(o2.flags, F_SYN | F_ACK);
	assert_int_equal(o2.seq, o.seq);
	h_free(h);
}

/*
 * A simultaneous open (RFC 9293 figure 8): our SYN crosses the peer's, we
 * answer with a SYN-ACK, its ACK completes our connect(). The stack took
 * that ACK for a passive open's and called accepted() for a connection the
 * application had opened itself (found by fuzz_tcpip: the application then
 * held it twice); a reset or a timeout before the ACK must say so through
 * connected(), not closed().
 */
static void
test_simultaneous_open(void **state)
{
	static const uint8_t opts[] = { 2, 4, 0x05, 0xb4 };
	struct h *h = h_new();
	struct sm_tcp_conn *c;
	struct t_out o;

	(void)state;
	assert_int_equal(sm_tcp_connect(h->s, T_IP_PEER, PPORT, PORT, h, h->now, &c), 0);
	h->iss = h_out(h).seq;
	h_in_opts(h, PPORT, PORT, PISN, 0, F_SYN, 65535, opts, sizeof(opts));
	o = h_out(h);
	assert_int_equal(o.flags, F_SYN | F_ACK);
	assert_int_equal(o.seq, h->iss);
	assert_int_equal(o.ack, PISN + 1);
	assert_string_equal(sm_tcp_state_name(c), "SYN_RCVD");
	assert_int_equal(h->connected, 0);
	h_in(h, PISN + 1, h->iss + 1, F_ACK, 65535, NULL, 0);
	assert_int_equal(h->connected, 1);
	assert_int_equal(h->connected_err, 0);
	assert_int_equal(h->accepted, 0);
	assert_ptr_equal(h->conn, c);
	assert_string_equal(sm_tcp_state_name(c), "ESTABLISHED");
	assert_int_equal(h_stats(h).tcp_passive_opens, 0);
	assert_int_equal(sm_tcp_send(c, "hi", 2, h->now), 2);
	assert_int_equal(h_out(h).dlen, 2);
	sm_tcp_abort(c, h->now);
	h_out(h); /* its RST */

	/* Reset after the SYNs crossed: refused, told by connected(). */
	assert_int_equal(sm_tcp_connect(h->s, T_IP_PEER, PPORT, PORT, h, h->now, &c), 0);
	h->iss = h_out(h).seq;
	h_in_opts(h, PPORT, PORT, PISN, 0, F_SYN, 65535, opts, sizeof(opts));
	h_out(h);
	h_in(h, PISN + 1, 0, F_RST, 0, NULL, 0);
	assert_int_equal(h->connected, 2);
	assert_int_equal(h->connected_err, -ECONNREFUSED);
	assert_int_equal(h->closed, 0);
	assert_int_equal(h_stats(h).tcp_conns, 0);

	/*
	 * Closed while the SYNs crossed: the FIN goes once the handshake is
	 * done, and the close runs its course (FIN_WAIT_1, FIN_WAIT_2 and its
	 * timeout). The connection stayed ESTABLISHED with its FIN acked and
	 * no timer: for good (found by fuzz_tcpip).
	 */
	assert_int_equal(sm_tcp_connect(h->s, T_IP_PEER, PPORT, PORT, h, h->now, &c), 0);
	h->iss = h_out(h).seq;
	h_in_opts(h, PPORT, PORT, PISN, 0, F_SYN, 65535, opts, sizeof(opts));
	h_out(h);
	assert_int_equal(sm_tcp_close(c, h->now), 0);
	h_none(h);
	h_in(h, PISN + 1, h->iss + 1, F_ACK, 65535, NULL, 0);
	o = h_out(h);
	assert_int_equal(o.flags, F_FIN | F_ACK);
	assert_int_equal(o.seq, h->iss + 1);
	assert_string_equal(sm_tcp_state_name(c), "FIN_WAIT_1");
	h_in(h, PISN + 1, h->iss + 2, F_ACK, 65535, NULL, 0);
	assert_string_equal(sm_tcp_state_name(c), "FIN_WAIT_2");
	h_poll(h, h->now + 61 * T_SEC); /* FIN_WAIT_2 gives up after time_wait_ns */
	assert_int_equal(h_stats(h).tcp_conns, 0);
	h_free(h);
}

static void
test_active_open(void **state)
{
	struct h *h = h_new();
	struct sm_tcp_conn *c;
	struct t_out o;
	static const uint8_t opts[] = { 2, 4, 0x03, 0xe8, 1, 3, 3, 3 }; /* MSS 1000, WS 3 */
	uint8_t data[3000];

	(void)state;
	assert_int_equal(sm_tcp_connect(h->s, T_IP_PEER, PPORT, PORT, h, h->now, &c), 0);
	o = h_out(h);
	assert_int_equal(o.flags, F_SYN);
	assert_int_equal(o.sport, PORT);
	assert_int_equal(o.dport, PPORT);
	assert_int_equal(o.mss, 1460);
	assert_int_equal(o.ws, 2);
	h->iss = o.seq;
	assert_int_equal(sm_tcp_send(c, "x", 1, h->now), -ENOTCONN);
	/* The SYN-ACK: MSS 1000 and scale 3 from the peer. */
	h_in_opts(h, PPORT, PORT, 5000, h->iss + 1, F_SYN | F_ACK, 100, opts, sizeof(opts));
	assert_int_equal(h->connected, 1);
	assert_int_equal(h->connected_err, 0);
	o = h_out(h);
	assert_int_equal(o.flags, F_ACK);
	assert_int_equal(o.seq, h->iss + 1);
	assert_int_equal(o.ack, 5001);
	h_none(h);
	/* A window of 100 units of 8 bytes: the first segment is 800 bytes, not the MSS. */
	h_in_opts(h, PPORT, PORT, 5001, h->iss + 1, F_ACK, 100, NULL, 0);
	fill(data, sizeof(data), 1);
	assert_int_equal(sm_tcp_send(c, data, sizeof(data), h->now), 3000);
	o = h_out(h);
	assert_int_equal(o.dlen, 800);
	assert_memory_equal(o.data, data, 800);
	h_none(h);
	/* A larger window: segments are limited by the peer's MSS of 1000. */
	h_in_opts(h, PPORT, PORT, 5001, h->iss + 801, F_ACK, 1000, NULL, 0);
	o = h_out(h);
	assert_int_equal(o.seq, h->iss + 801);
	assert_int_equal(o.dlen, 1000);
	assert_memory_equal(o.data, data + 800, 1000);
	o = h_out(h);
	assert_int_equal(o.dlen, 1000);
	o = h_out(h);
	assert_int_equal(o.dlen, 200);
	assert_true(o.flags & F_PSH);
	assert_memory_equal(o.data, data + 2800, 200);
	h_free(h);
}

static void
test_active_refused_and_timeout(void **state)
{
	struct sm_tcpip_config cfg = { .syn_retries = 2 };
	struct h *h = h_new_cfg(&cfg);
	struct sm_tcp_conn *c;
	struct t_out o;
	uint64_t t0 = h->now;

	(void)state;
	assert_int_equal(sm_tcp_connect(h->s, T_IP_PEER, PPORT, PORT, h, h->now, &c), 0);
	h->iss = h_out(h).seq;
	/* A RST that does not acknowledge our SYN is ignored (RFC 5961 3.2 / RFC 9293). */
	h_in(h, 0, 0, F_RST, 0, NULL, 0);
	/* An ACK of something else gets a RST carrying that ACK as its sequence number. */
	h_in(h, 77, h->iss + 5, F_ACK, 0, NULL, 0);
	o = h_out(h);
	assert_int_equal(o.flags, F_RST);
	assert_int_equal(o.seq, h->iss + 5);
	assert_int_equal(h->connected, 0);
	h_in(h, 0, h->iss + 1, F_RST | F_ACK, 0, NULL, 0);
	assert_int_equal(h->connected, 1);
	assert_int_equal(h->connected_err, -ECONNREFUSED);
	assert_int_equal(h_stats(h).tcp_conns, 0);

	/* No answer at all: SYNs at 0, 1 s, 3 s, then give up at 7 s. */
	assert_int_equal(sm_tcp_connect(h->s, T_IP_PEER, PPORT, PORT + 1, h, t0, &c), 0);
	uint32_t iss = h_out(h).seq;
	h_poll(h, t0 + T_SEC - 1);
	h_none(h);
	h_poll(h, t0 + T_SEC);
	o = h_out(h);
	assert_int_equal(o.flags, F_SYN);
	assert_int_equal(o.seq, iss);
	h_poll(h, t0 + 3 * T_SEC - 1);
	h_none(h);
	h_poll(h, t0 + 3 * T_SEC);
	assert_int_equal(h_out(h).flags, F_SYN);
	h_poll(h, t0 + 7 * T_SEC);
	h_none(h);
	assert_int_equal(h->connected, 2);
	assert_int_equal(h->connected_err, -ETIMEDOUT);
	assert_int_equal(h_stats(h).tcp_conns, 0);
	h_free(h);
}

static void
test_no_listener_rst_and_backlog(void **state)
{
	struct sm_tcpip_config cfg = { .syn_backlog = 2 };
	struct h *h = h_new_cfg(&cfg);
	struct t_out o;

	(void)state;
	/* Closed port: RST|ACK acknowledging the SYN. */
	h_in_opts(h, PPORT, 81, 4242, 0, F_SYN, 65535, NULL, 0);
	o = h_out(h);
	assert_int_equal(o.flags, F_RST | F_ACK);
	assert_int_equal(o.seq, 0);
	assert_int_equal(o.ack, 4243);
	/* A RST to a closed port gets nothing. */
	h_in_opts(h, PPORT, 81, 4242, 0, F_RST, 0, NULL, 0);
	h_none(h);
	/* The SYN queue holds two half-open connections; the third SYN is dropped. */
	assert_int_equal(sm_tcp_listen(h->s, PORT), 0);
	for (uint16_t p = 0; p < 3; p++)
		h_in_opts(h, (uint16_t)(PPORT + p), PORT, 1, 0, F_SYN, 65535, NULL, 0);
	assert_int_equal(t_pending(&h->cap), 2);
	assert_int_equal(h_stats(h).tcp_syn_dropped, 1);
	/* Completing one frees its slot. */
	o = h_out(h);
	h_in_opts(h, o.dport, PORT, 2, o.seq + 1, F_ACK, 65535, NULL, 0);
	assert_int_equal(h->accepted, 1);
	h_out(h);
	h_in_opts(h, PPORT + 2, PORT, 1, 0, F_SYN, 65535, NULL, 0);
	assert_int_equal(h_out(h).flags, F_SYN | F_ACK);
	h_free(h);
}

/* ---- data ---- */

static void
test_data_both_ways(void **state)
{
	/*
	 * 64 KiB: the SYN-ACK's 65535 is then the whole window, so the first
	 * read does not make a window update worth sending (it would with
	 * 128 KiB, as Linux's rule also says).
	 */
	struct sm_tcpip_config cfg = { .rcv_buf = 65536 };
	struct h *h = h_new_cfg(&cfg);
	uint8_t d[3000], e[3000];
	struct t_out o;

	(void)state;
	h_accept(h, true, 512); /* 512 << 7 = 64 KiB */
	fill(d, sizeof(d), 3);
	/* One segment: the ACK is delayed by 40 ms. */
	h_in(h, PISN + 1, h->iss + 1, F_ACK, 512, d, 100);
	assert_int_equal(h->rxlen, 100);
	assert_memory_equal(h->rx, d, 100);
	h_none(h);
	assert_true(sm_tcpip_next_timer(h->s) == h->now + 40 * T_MS);
	h_poll(h, h->now + 40 * T_MS - 1);
	h_none(h);
	h_poll(h, h->now + 1);
	o = h_out(h);
	assert_int_equal(o.flags, F_ACK);
	assert_int_equal(o.ack, PISN + 101);
	assert_int_equal(h_stats(h).tcp_delayed_acks, 1);
	/* Two segments: the second is acknowledged at once. */
	h_in(h, PISN + 101, h->iss + 1, F_ACK, 512, d + 100, 1000);
	h_none(h);
	h_in(h, PISN + 1101, h->iss + 1, F_ACK, 512, d + 1100, 1000);
	o = h_out(h);
	assert_int_equal(o.ack, PISN + 2101);
	assert_int_equal(h->rxlen, 2100);
	assert_memory_equal(h->rx, d, 2100);

	/* Our data: 1460 + 1460 + 80 within the initial window of 3 segments. */
	fill(e, sizeof(e), 9);
	assert_int_equal(sm_tcp_send(h->conn, e, sizeof(e), h->now), 3000);
	o = h_out(h);
	assert_int_equal(o.seq, h->iss + 1);
	assert_int_equal(o.ack, PISN + 2101);
	assert_int_equal(o.dlen, 1460);
	assert_memory_equal(o.data, e, 1460);
	o = h_out(h);
	assert_int_equal(o.seq, h->iss + 1461);
	assert_int_equal(o.dlen, 1460);
	assert_memory_equal(o.data, e + 1460, 1460);
	o = h_out(h);
	assert_int_equal(o.seq, h->iss + 2921);
	assert_int_equal(o.dlen, 80);
	assert_true(o.flags & F_PSH);
	assert_memory_equal(o.data, e + 2920, 80);
	h_none(h);
	/* Data piggybacks the peer's ACK; ours is delayed again. */
	h_in(h, PISN + 2101, h->iss + 3001, F_ACK, 512, d + 2100, 900);
	assert_int_equal(h->rxlen, 3000);
	assert_memory_equal(h->rx, d, 3000);
	h_poll(h, h->now + 40 * T_MS);
	assert_int_equal(h_out(h).ack, PISN + 3001);
	/* Everything acknowledged: no timer is left but the stack has none pending. */
	h_poll(h, h->now + 100 * T_SEC);
	h_none(h);
	h_free(h);
}

static void
test_retransmission_rto(void **state)
{
	struct sm_tcpip_config cfg = { .rto_min_ns = 10 * T_MS };
	struct h *h = h_new_cfg(&cfg);
	uint8_t d[100];
	struct t_out o;
	uint64_t t;

	(void)state;
	assert_int_equal(sm_tcp_listen(h->s, PORT), 0);
	h_in_opts(h, PPORT, PORT, PISN, 0, F_SYN, 65535, syn_opts_ws7, sizeof(syn_opts_ws7));
	h->iss = h_out(h).seq;
	/* The handshake's RTT is 100 ms: SRTT 100, RTTVAR 50, RTO = 100 + 4 * 50 = 300 ms. */
	h->now += 100 * T_MS;
	h_in(h, PISN + 1, h->iss + 1, F_ACK, 512, NULL, 0);
	fill(d, sizeof(d), 5);
	t = h->now;
	assert_int_equal(sm_tcp_send(h->conn, d, 100, t), 100);
	o = h_out(h);
	assert_int_equal(o.dlen, 100);
	h_poll(h, t + 300 * T_MS - 1);
	h_none(h);
	h_poll(h, t + 300 * T_MS);
	o = h_out(h);
	assert_int_equal(o.seq, h->iss + 1);
	assert_int_equal(o.dlen, 100);
	assert_memory_equal(o.data, d, 100);
	/* Backed off: the next one 600 ms later. */
	h_poll(h, t + 900 * T_MS - 1);
	h_none(h);
	h_poll(h, t + 900 * T_MS);
	assert_int_equal(h_out(h).dlen, 100);
	/* The ACK after the retransmission gives no RTT sample (Karn): RTO stays 300 ms. */
	h->now = t + 1000 * T_MS;
	h_in(h, PISN + 1, h->iss + 101, F_ACK, 512, NULL, 0);
	h_none(h);
	t = h->now;
	assert_int_equal(sm_tcp_send(h->conn, d, 10, t), 10);
	h_out(h);
	h_poll(h, t + 300 * T_MS - 1);
	h_none(h);
	h_poll(h, t + 300 * T_MS);
	o = h_out(h);
	assert_int_equal(o.seq, h->iss + 101);
	assert_int_equal(o.dlen, 10);
	struct sm_tcpip_stats st = h_stats(h);
	assert_int_equal(st.tcp_timeouts, 3);
	assert_int_equal(st.tcp_retransmits, 3);
	h_free(h);
}

static void
test_retransmission_gives_up(void **state)
{
	struct sm_tcpip_config cfg = { .max_retries = 3 };
	struct h *h = h_new_cfg(&cfg);

	(void)state;
	h_accept(h, true, 512);
	assert_int_equal(sm_tcp_send(h->conn, "hello", 5, h->now), 5);
	h_out(h);
	for (int i = 0; i < 3; i++) {
		h_poll(h, sm_tcpip_next_timer(h->s));
		assert_int_equal(h_out(h).dlen, 5);
	}
	h_poll(h, sm_tcpip_next_timer(h->s));
	struct t_out o = h_out(h);
	assert_int_equal(o.flags, F_RST | F_ACK);
	assert_int_equal(h->closed, 1);
	assert_int_equal(h->closed_err, -ETIMEDOUT);
	assert_int_equal(h_stats(h).tcp_conns, 0);
	h_free(h);
}

/*
 * An RTO resends what was sent, not a full segment past it: the peer's
 * window took 255 bytes, so 255 go again. Resending up to the MSS went past
 * the window and left snd_nxt beyond snd_max; the ACK of the 255 then
 * stopped the timer with data still to send, and the connection hung
 * (found by tests/fuzz/fuzz_tcpip).
 */
static void
test_rto_resends_only_what_was_sent(void **state)
{
	struct h *h = h_new();
	uint8_t d[1000];
	struct t_out o;

	(void)state;
	h_accept(h, false, 255);
	fill(d, sizeof(d), 3);
	assert_int_equal(sm_tcp_send(h->conn, d, sizeof(d), h->now), sizeof(d));
	o = h_out(h);
	assert_int_equal(o.dlen, 255);
	h_none(h);
	h_poll(h, sm_tcpip_next_timer(h->s));
	o = h_out(h);
	assert_int_equal(o.seq, h->iss + 1);
	assert_int_equal(o.dlen, 255);
	assert_memory_equal(o.data, d, 255);
	h_none(h);
	/* The window opens with the ACK: the rest goes, under a timer. */
	h_in(h, PISN + 1, h->iss + 256, F_ACK, 65535, NULL, 0);
	o = h_out(h);
	assert_int_equal(o.seq, h->iss + 256);
	assert_int_equal(o.dlen, 745);
	assert_memory_equal(o.data, d + 255, 745);
	assert_true(sm_tcpip_next_timer(h->s) != UINT64_MAX);
	h_free(h);
}

static void
test_fast_retransmit_newreno(void **state)
{
	struct h *h = h_new();
	uint8_t d[6 * 1460];
	struct t_out o;
	uint32_t base;

	(void)state;
	h_accept(h, true, 512);
	/* Grow cwnd from 3 to 6 segments: three segments acknowledged one by one. */
	fill(d, sizeof(d), 11);
	assert_int_equal(sm_tcp_send(h->conn, d, 3 * 1460, h->now), 3 * 1460);
	for (int i = 0; i < 3; i++)
		h_out(h);
	for (uint32_t i = 1; i <= 3; i++)
		h_in(h, PISN + 1, h->iss + 1 + i * 1460, F_ACK, 512, NULL, 0);
	h_none(h);
	base = h->iss + 1 + 3 * 1460;
	/* S0..S5 go out together. */
	assert_int_equal(sm_tcp_send(h->conn, d, sizeof(d), h->now), (long)sizeof(d));
	for (uint32_t i = 0; i < 6; i++) {
		o = h_out(h);
		assert_int_equal(o.seq, base + i * 1460);
		assert_int_equal(o.dlen, 1460);
	}
	h_none(h);
	/* S1 and S3 are lost. S0 is acknowledged, S2, S4 and S5 make three duplicate ACKs. */
	h_in(h, PISN + 1, base + 1460, F_ACK, 512, NULL, 0);
	h_in(h, PISN + 1, base + 1460, F_ACK, 512, NULL, 0);
	h_in(h, PISN + 1, base + 1460, F_ACK, 512, NULL, 0);
	h_none(h);
	h_in(h, PISN + 1, base + 1460, F_ACK, 512, NULL, 0);
	o = h_out(h);
	assert_int_equal(o.seq, base + 1460);
	assert_int_equal(o.dlen, 1460);
	assert_memory_equal(o.data, d + 1460, 1460);
	h_none(h);
	/* The retransmitted S1 arrives: a partial ACK up to S3, which is retransmitted at once. */
	h_in(h, PISN + 1, base + 3 * 1460, F_ACK, 512, NULL, 0);
	o = h_out(h);
	assert_int_equal(o.seq, base + 3 * 1460);
	assert_int_equal(o.dlen, 1460);
	assert_memory_equal(o.data, d + 3 * 1460, 1460);
	h_none(h);
	/* Full ACK: recovery ends, nothing outstanding, no timer fires later. */
	h_in(h, PISN + 1, base + 6 * 1460, F_ACK, 512, NULL, 0);
	h_poll(h, h->now + 100 * T_SEC);
	h_none(h);
	struct sm_tcpip_stats st = h_stats(h);
	assert_int_equal(st.tcp_fast_retransmits, 1);
	assert_int_equal(st.tcp_retransmits, 2);
	assert_int_equal(st.tcp_timeouts, 0);
	h_free(h);
}

static void
test_out_of_order(void **state)
{
	struct h *h = h_new();
	uint8_t d[4000];
	struct t_out o;

	(void)state;
	h_accept(h, true, 512);
	fill(d, sizeof(d), 17);
	/* Segments 2 and 4 first: each is held and answered by a duplicate ACK at once. */
	h_in(h, PISN + 1001, h->iss + 1, F_ACK, 512, d + 1000, 1000);
	o = h_out(h);
	assert_int_equal(o.ack, PISN + 1);
	h_in(h, PISN + 3001, h->iss + 1, F_ACK, 512, d + 3000, 1000);
	o = h_out(h);
	assert_int_equal(o.ack, PISN + 1);
	assert_int_equal(h->rxlen, 0);
	assert_int_equal(h_stats(h).tcp_ooo_segs, 2);
	/* Segment 1 fills the first hole: 2000 bytes delivered, ACK at once. */
	h_in(h, PISN + 1, h->iss + 1, F_ACK, 512, d, 1000);
	o = h_out(h);
	assert_int_equal(o.ack, PISN + 2001);
	assert_int_equal(h->rxlen, 2000);
	/* A duplicate of segment 2 changes nothing but is acknowledged. */
	h_in(h, PISN + 1001, h->iss + 1, F_ACK, 512, d + 1000, 1000);
	o = h_out(h);
	assert_int_equal(o.ack, PISN + 2001);
	/* Segment 3 overlapping segment 2 by 500 bytes fills the last hole. */
	h_in(h, PISN + 1501, h->iss + 1, F_ACK, 512, d + 1500, 1500);
	o = h_out(h);
	assert_int_equal(o.ack, PISN + 4001);
	assert_int_equal(h->rxlen, 4000);
	assert_memory_equal(h->rx, d, 4000);
	h_none(h);
	h_free(h);
}

/*
 * In-order payload goes to recv_ref() as a view of the frame; data beyond a
 * hole is copied into the ring and delivered after the segment that fills
 * it; the window counts zero-copy bytes until they are consumed.
 */
static void
test_zero_copy_receive(void **state)
{
	struct sm_tcpip_config cfg = { .rcv_buf = 8192 };
	struct h *h = h_new_ops(&cfg, &h_ops_zc);
	uint8_t d[6000];
	struct t_out o;

	(void)state;
	h_accept(h, true, 512);
	fill(d, sizeof(d), 41);
	/* In order, with a ref: delivered uncopied. */
	h_in_ref(h, PISN + 1, h->iss + 1, F_ACK, 512, d, 1000);
	assert_int_equal(h->ref_calls, 1);
	assert_int_equal(h->recv_calls, 0);
	assert_int_equal(h_stats(h).tcp_rx_zerocopy_bytes, 1000);
	/* Without a ref the same stack copies. */
	h_in(h, PISN + 1001, h->iss + 1, F_ACK, 512, d + 1000, 1000);
	assert_int_equal(h->recv_calls, 1);
	h_poll(h, h->now + 40 * T_MS); /* the delayed ACK */
	o = h_out(h);
	assert_int_equal(o.ack, PISN + 2001);
	/* Beyond a hole: held in the ring, nothing delivered. */
	h_in_ref(h, PISN + 3001, h->iss + 1, F_ACK, 512, d + 3000, 1000);
	o = h_out(h);
	assert_int_equal(o.ack, PISN + 2001);
	assert_int_equal(h->rxlen, 2000);
	assert_int_equal(h->ref_calls, 1);
	/* The filling segment goes uncopied, then the held bytes from the ring. */
	h_in_ref(h, PISN + 2001, h->iss + 1, F_ACK, 512, d + 2000, 1000);
	assert_int_equal(h->ref_calls, 2);
	assert_int_equal(h->recv_calls, 2);
	o = h_out(h);
	assert_int_equal(o.ack, PISN + 4001);
	assert_int_equal(h->rxlen, 4000);
	assert_memory_equal(h->rx, d, 4000);
	assert_int_equal(h_stats(h).tcp_rx_zerocopy_bytes, 2000);
	/* Unconsumed zero-copy bytes shrink the window like copied ones. */
	h->hold = true;
	h_in_ref(h, PISN + 4001, h->iss + 1, F_ACK, 512, d + 4000, 1460);
	h_in_ref(h, PISN + 5461, h->iss + 1, F_ACK, 512, d + 5460, 540);
	assert_int_equal(h->ref_calls, 4);
	assert_int_equal(sm_tcp_unconsumed(h->conn), 2000);
	h_poll(h, h->now + 40 * T_MS);
	o = h_out(h);
	assert_int_equal(o.ack, PISN + 6001);
	assert_int_equal(o.wnd, (8192 - 2000));
	assert_int_equal(h_stats(h).tcp_rx_zerocopy_bytes, 4000);
	/* Consuming gives the space back (no update: the peer has plenty). */
	sm_tcp_consume(h->conn, 2000, h->now);
	assert_int_equal(sm_tcp_unconsumed(h->conn), 0);
	assert_memory_equal(h->rx, d, 6000);
	h_none(h);
	h_free(h);
}

static void
test_full_receive_window(void **state)
{
	struct sm_tcpip_config cfg = { .rcv_buf = 4096 };
	struct h *h = h_new_cfg(&cfg);
	uint8_t d[5000];
	struct t_out o;

	(void)state;
	h->hold = true;
	h_accept(h, true, 512);
	fill(d, sizeof(d), 23);
	h_in(h, PISN + 1, h->iss + 1, F_ACK, 512, d, 1460);
	h_in(h, PISN + 1461, h->iss + 1, F_ACK, 512, d + 1460, 1460);
	o = h_out(h);
	assert_int_equal(o.ack, PISN + 2921);
	assert_int_equal(o.wnd, 4096 - 2920); /* no scaling with a 4 KiB buffer */
	h_in(h, PISN + 2921, h->iss + 1, F_ACK, 512, d + 2920, 1176);
	h_poll(h, h->now + 40 * T_MS);
	o = h_out(h);
	assert_int_equal(o.ack, PISN + 4097);
	assert_int_equal(o.wnd, 0);
	assert_int_equal(h->rxlen, 4096);
	assert_int_equal(sm_tcp_unconsumed(h->conn), 4096);
	/* Beyond a full window: dropped, answered with the same ACK and window 0. */
	h_in(h, PISN + 4097, h->iss + 1, F_ACK, 512, d + 4096, 100);
	o = h_out(h);
	assert_int_equal(o.ack, PISN + 4097);
	assert_int_equal(o.wnd, 0);
	assert_int_equal(h->rxlen, 4096);
	/* Consuming a little does not announce a silly window. */
	sm_tcp_consume(h->conn, 100, h->now);
	h_none(h);
	/* Consuming enough sends a window update. */
	sm_tcp_consume(h->conn, 2000, h->now);
	o = h_out(h);
	assert_int_equal(o.ack, PISN + 4097);
	assert_int_equal(o.wnd, 2100);
	h_in(h, PISN + 4097, h->iss + 1, F_ACK, 512, d + 4096, 900);
	assert_int_equal(h->rxlen, 4996);
	assert_memory_equal(h->rx, d, 4996);
	h_free(h);
}

static void
test_zero_window_probe(void **state)
{
	struct h *h = h_new();
	uint8_t d[3000];
	struct t_out o;
	uint64_t t;

	(void)state;
	/* No window scaling: the peer's windows are plain bytes. */
	assert_int_equal(sm_tcp_listen(h->s, PORT), 0);
	h_in_opts(h, PPORT, PORT, PISN, 0, F_SYN, 1000, syn_opts_nows, sizeof(syn_opts_nows));
	h->iss = h_out(h).seq;
	h_in(h, PISN + 1, h->iss + 1, F_ACK, 1000, NULL, 0);
	fill(d, sizeof(d), 29);
	assert_int_equal(sm_tcp_send(h->conn, d, sizeof(d), h->now), 3000);
	o = h_out(h);
	assert_int_equal(o.dlen, 1000);
	h_none(h);
	/* The peer takes it and closes its window. */
	t = h->now;
	h_in(h, PISN + 1, h->iss + 1001, F_ACK, 0, NULL, 0);
	h_none(h);
	/* Probes at 1 s, then 2 s later: an old sequence number, no data. */
	h_poll(h, t + T_SEC);
	o = h_out(h);
	assert_int_equal(o.seq, h->iss + 1000);
	assert_int_equal(o.dlen, 0);
	assert_int_equal(o.flags, F_ACK);
	h_poll(h, t + 3 * T_SEC - 1);
	h_none(h);
	h_poll(h, t + 3 * T_SEC);
	assert_int_equal(h_out(h).seq, h->iss + 1000);
	assert_int_equal(h_stats(h).tcp_window_probes, 2);
	/* The window reopens: the rest flows. */
	h_in(h, PISN + 1, h->iss + 1001, F_ACK, 5000, NULL, 0);
	o = h_out(h);
	assert_int_equal(o.seq, h->iss + 1001);
	assert_int_equal(o.dlen, 1460);
	assert_memory_equal(o.data, d + 1000, 1460);
	o = h_out(h);
	assert_int_equal(o.dlen, 540);
	assert_memory_equal(o.data, d + 2460, 540);
	h_none(h);
	h_free(h);
}

/*
 * A peer that answers probes with a zero window keeps the connection; one
 * that stops answering is given up like one that stops acknowledging data
 * (found by the fuzzer: otherwise the connection lived forever).
 */
static void
test_zero_window_silent_peer_gives_up(void **state)
{
	struct sm_tcpip_config cfg = { .max_retries = 3 };
	struct h *h = h_new_cfg(&cfg);
	uint8_t d[2000];
	struct t_out o;
	unsigned probes = 0;

	(void)state;
	h_accept(h, false, 1000); /* no window scaling: the peer's 1000 is bytes */
	fill(d, sizeof(d), 31);
	assert_int_equal(sm_tcp_send(h->conn, d, sizeof(d), h->now), 2000);
	assert_int_equal(h_out(h).dlen, 1000);
	h_in(h, PISN + 1, h->iss + 1001, F_ACK, 0, NULL, 0);
	/* Answered probes: as many as it takes, the connection stays. */
	for (int i = 0; i < 6; i++) {
		h_poll(h, sm_tcpip_next_timer(h->s));
		o = h_out(h);
		assert_int_equal(o.dlen, 0);
		h_in(h, PISN + 1, h->iss + 1001, F_ACK, 0, NULL, 0);
	}
	assert_int_equal(h->closed, 0);
	/* Silence: max_retries more probes, then RST and -ETIMEDOUT. */
	while (h->closed == 0) {
		h_poll(h, sm_tcpip_next_timer(h->s));
		o = h_out(h);
		if (o.flags & F_RST)
			break;
		probes++;
	}
	assert_int_equal(probes, 3);
	assert_int_equal(o.flags, F_RST | F_ACK);
	assert_int_equal(h->closed, 1);
	assert_int_equal(h->closed_err, -ETIMEDOUT);
	assert_int_equal(h_stats(h).tcp_conns, 0);
	h_free(h);
}

static void
test_send_buffer_full_writable(void **state)
{
	struct sm_tcpip_config cfg = { .snd_buf = 4096 };
	struct h *h = h_new_cfg(&cfg);
	uint8_t d[6000];

	(void)state;
	h_accept(h, true, 512);
	fill(d, sizeof(d), 31);
	assert_int_equal(sm_tcp_send(h->conn, d, sizeof(d), h->now), 4096);
	assert_int_equal(sm_tcp_send(h->conn, d, 10, h->now), 0);
	assert_int_equal(sm_tcp_send_space(h->conn), 0);
	while (t_pending(&h->cap))
		h_out(h);
	h_in(h, PISN + 1, h->iss + 1461, F_ACK, 512, NULL, 0);
	assert_int_equal(h->writable, 1);
	assert_int_equal(sm_tcp_send_space(h->conn), 1460);
	h_free(h);
}

/* ---- RST and SYN, RFC 5961 ---- */

static void
test_rst_exact_resets(void **state)
{
	struct h *h = h_new();

	(void)state;
	h_accept(h, true, 512);
	h_in(h, PISN + 1, 0, F_RST, 0, NULL, 0);
	assert_int_equal(h->closed, 1);
	assert_int_equal(h->closed_err, -ECONNRESET);
	assert_int_equal(h_stats(h).tcp_conns, 0);
	h_none(h);
	/* The tuple is gone: the peer's next ACK meets a RST. */
	h_in(h, PISN + 1, h->iss + 1, F_ACK, 512, NULL, 0);
	struct t_out o = h_out(h);
	assert_int_equal(o.flags, F_RST);
	assert_int_equal(o.seq, h->iss + 1);
	h_free(h);
}

static void
test_rst_in_window_challenge(void **state)
{
	struct h *h = h_new();
	struct t_out o;

	(void)state;
	h_accept(h, true, 512);
	/* In the window but not exact: a challenge ACK, the connection lives. */
	h_in(h, PISN + 1000, 0, F_RST, 0, NULL, 0);
	o = h_out(h);
	assert_int_equal(o.flags, F_ACK);
	assert_int_equal(o.seq, h->iss + 1);
	assert_int_equal(o.ack, PISN + 1);
	assert_int_equal(h->closed, 0);
	/* Outside the window: silently dropped. */
	h_in(h, PISN + 1 + (1u << 20), 0, F_RST, 0, NULL, 0);
	h_in(h, PISN - 5, 0, F_RST, 0, NULL, 0);
	h_none(h);
	/* A SYN on an established connection: challenge ACK too (RFC 5961 4.2). */
	h_in_opts(h, PPORT, PORT, 777777, 0, F_SYN, 65535, NULL, 0);
	o = h_out(h);
	assert_int_equal(o.flags, F_ACK);
	assert_int_equal(o.ack, PISN + 1);
	assert_int_equal(h->closed, 0);
	/* An ACK far behind SND.UNA - MAX.SND.WND: challenge ACK (RFC 5961 5.2). */
	h_in(h, PISN + 1, h->iss - 1000000, F_ACK, 512, NULL, 0);
	o = h_out(h);
	assert_int_equal(o.flags, F_ACK);
	/* An ACK of data never sent: ACK, no state change. */
	h_in(h, PISN + 1, h->iss + 5000, F_ACK, 512, NULL, 0);
	o = h_out(h);
	assert_int_equal(o.seq, h->iss + 1);
	assert_int_equal(h_stats(h).tcp_challenge_acks, 3);
	assert_string_equal(sm_tcp_state_name(h->conn), "ESTABLISHED");
	/* Exact RST still works afterwards. */
	h_in(h, PISN + 1, 0, F_RST, 0, NULL, 0);
	assert_int_equal(h->closed_err, -ECONNRESET);
	h_free(h);
}

static void
test_abort_sends_rst(void **state)
{
	struct h *h = h_new();
	struct t_out o;

	(void)state;
	h_accept(h, true, 512);
	sm_tcp_abort(h->conn, h->now);
	o = h_out(h);
	assert_int_equal(o.flags, F_RST | F_ACK);
	assert_int_equal(o.seq, h->iss + 1);
	assert_int_equal(o.ack, PISN + 1);
	assert_int_equal(h->closed, 0); /* no callback for the application's own abort */
	assert_int_equal(h_stats(h).tcp_conns, 0);
	h_free(h);
}

/* ---- FIN ---- */

static void
test_fin_peer_first(void **state)
{
	struct h *h = h_new();
	struct t_out o;

	(void)state;
	h_accept(h, true, 512);
	/* Data and FIN together: data delivered, then end of stream, ACK at once. */
	h_in(h, PISN + 1, h->iss + 1, F_ACK | F_FIN, 512, "bye", 3);
	assert_int_equal(h->rxlen, 3);
	assert_int_equal(h->eof, 1);
	o = h_out(h);
	assert_int_equal(o.ack, PISN + 5);
	assert_string_equal(sm_tcp_state_name(h->conn), "CLOSE_WAIT");
	/* We may still send, then close. */
	assert_int_equal(sm_tcp_send(h->conn, "ok", 2, h->now), 2);
	o = h_out(h);
	assert_int_equal(o.dlen, 2);
	assert_int_equal(sm_tcp_close(h->conn, h->now), 0);
	o = h_out(h);
	assert_int_equal(o.flags, F_FIN | F_ACK);
	assert_int_equal(o.seq, h->iss + 3);
	assert_string_equal(sm_tcp_state_name(h->conn), "LAST_ACK");
	assert_int_equal(sm_tcp_send(h->conn, "x", 1, h->now), -EPIPE);
	/* A lost FIN is retransmitted. */
	h_in(h, PISN + 5, h->iss + 3, F_ACK, 512, NULL, 0);
	h_poll(h, sm_tcpip_next_timer(h->s));
	o = h_out(h);
	assert_int_equal(o.flags, F_FIN | F_ACK);
	assert_int_equal(o.seq, h->iss + 3);
	h_in(h, PISN + 5, h->iss + 4, F_ACK, 512, NULL, 0);
	assert_int_equal(h->closed, 1);
	assert_int_equal(h->closed_err, 0);
	assert_int_equal(h_stats(h).tcp_conns, 0); /* LAST_ACK ends without TIME_WAIT */
	h_none(h);
	h_free(h);
}

static void
test_fin_we_first_time_wait(void **state)
{
	struct sm_tcpip_config cfg = { .time_wait_ns = 10 * T_SEC };
	struct h *h = h_new_cfg(&cfg);
	struct t_out o;
	uint64_t t;

	(void)state;
	h_accept(h, true, 512);
	assert_int_equal(sm_tcp_send(h->conn, "abc", 3, h->now), 3);
	h_out(h);
	assert_int_equal(sm_tcp_close(h->conn, h->now), 0);
	o = h_out(h);
	assert_int_equal(o.flags, F_FIN | F_ACK);
	assert_int_equal(o.seq, h->iss + 4);
	assert_string_equal(sm_tcp_state_name(h->conn), "FIN_WAIT_1");
	h_in(h, PISN + 1, h->iss + 5, F_ACK, 512, NULL, 0);
	assert_string_equal(sm_tcp_state_name(h->conn), "FIN_WAIT_2");
	h_none(h);
	/* Still receiving in FIN_WAIT_2; then the peer's FIN. */
	h_in(h, PISN + 1, h->iss + 5, F_ACK, 512, "late", 4);
	assert_int_equal(h->rxlen, 4);
	h_in(h, PISN + 5, h->iss + 5, F_ACK | F_FIN, 512, NULL, 0);
	o = h_out(h);
	assert_int_equal(o.flags, F_ACK);
	assert_int_equal(o.ack, PISN + 6);
	assert_int_equal(h->eof, 1);
	assert_int_equal(h->closed, 1);
	assert_int_equal(h->closed_err, 0);
	assert_int_equal(h_stats(h).tcp_conns, 1); /* TIME_WAIT */
	/* The peer lost our ACK: its FIN again is acknowledged again, and 2MSL restarts. */
	h->now += 5 * T_SEC;
	t = h->now;
	h_in(h, PISN + 5, h->iss + 5, F_ACK | F_FIN, 512, NULL, 0);
	o = h_out(h);
	assert_int_equal(o.ack, PISN + 6);
	/* A RST does not end TIME_WAIT (RFC 1337). */
	h_in(h, PISN + 6, 0, F_RST, 0, NULL, 0);
	assert_int_equal(h_stats(h).tcp_conns, 1);
	h_poll(h, t + 10 * T_SEC - 1);
	assert_int_equal(h_stats(h).tcp_conns, 1);
	h_poll(h, t + 10 * T_SEC);
	assert_int_equal(h_stats(h).tcp_conns, 0);
	h_none(h);
	assert_int_equal(h->closed, 1);
	h_free(h);
}

static void
test_fin_simultaneous(void **state)
{
	struct h *h = h_new();
	struct t_out o;

	(void)state;
	h_accept(h, true, 512);
	assert_int_equal(sm_tcp_close(h->conn, h->now), 0);
	o = h_out(h);
	assert_int_equal(o.flags, F_FIN | F_ACK);
	/* The peer's FIN crosses ours: it does not acknowledge our FIN. */
	h_in(h, PISN + 1, h->iss + 1, F_ACK | F_FIN, 512, NULL, 0);
	o = h_out(h);
	assert_int_equal(o.ack, PISN + 2);
	assert_string_equal(sm_tcp_state_name(h->conn), "CLOSING");
	assert_int_equal(h->closed, 0);
	h_in(h, PISN + 2, h->iss + 2, F_ACK, 512, NULL, 0);
	assert_int_equal(h->closed, 1);
	assert_int_equal(h_stats(h).tcp_conns, 1); /* TIME_WAIT */
	h_poll(h, h->now + 60 * T_SEC);
	assert_int_equal(h_stats(h).tcp_conns, 0);
	h_free(h);
}

static void
test_fin_out_of_order(void **state)
{
	struct h *h = h_new();
	uint8_t d[2000];
	struct t_out o;

	(void)state;
	h_accept(h, true, 512);
	fill(d, sizeof(d), 37);
	/* The last segment with the FIN arrives before the first. */
	h_in(h, PISN + 1001, h->iss + 1, F_ACK | F_FIN, 512, d + 1000, 1000);
	o = h_out(h);
	assert_int_equal(o.ack, PISN + 1);
	assert_int_equal(h->eof, 0);
	h_in(h, PISN + 1, h->iss + 1, F_ACK, 512, d, 1000);
	o = h_out(h);
	assert_int_equal(o.ack, PISN + 2002); /* data and FIN */
	assert_int_equal(h->rxlen, 2000);
	assert_memory_equal(h->rx, d, 2000);
	assert_int_equal(h->eof, 1);
	assert_string_equal(sm_tcp_state_name(h->conn), "CLOSE_WAIT");
	h_free(h);
}

static void
test_time_wait_reused_by_new_syn(void **state)
{
	struct h *h = h_new();
	struct t_out o;

	(void)state;
	h_accept(h, true, 512);
	assert_int_equal(sm_tcp_close(h->conn, h->now), 0);
	h_out(h);
	h_in(h, PISN + 1, h->iss + 2, F_ACK | F_FIN, 512, NULL, 0);
	h_out(h);
	assert_int_equal(h_stats(h).tcp_conns, 1);
	/* A SYN above the old sequence space opens a new connection on the same tuple. */
	h->now += T_SEC;
	h_in_opts(h, PPORT, PORT, PISN + 100000, 0, F_SYN, 65535, syn_opts_nows,
		  sizeof(syn_opts_nows));
	o = h_out(h);
	assert_int_equal(o.flags, F_SYN | F_ACK);
	assert_int_equal(o.ack, PISN + 100001);
	h_free(h);
}

static void
test_tx_csum_offload(void **state)
{
	struct sm_tcpip_config cfg = { .offloads = SM_TCPIP_OFFLOAD_TX_CSUM };
	struct h *h = h_new_cfg(&cfg);
	struct t_frame *f;

	(void)state;
	assert_int_equal(sm_tcp_listen(h->s, PORT), 0);
	h_in_opts(h, PPORT, PORT, PISN, 0, F_SYN, 65535, syn_opts_nows, sizeof(syn_opts_nows));
	f = t_pop(&h->cap);
	assert_non_null(f);
	/* IPv4 checksum left 0, TCP checksum holds the folded pseudo-header sum. */
	assert_int_equal(t_rd16(f->b + 24), 0);
	uint16_t tl = (uint16_t)(t_rd16(f->b + 16) - 20);
	uint16_t ph = (uint16_t)~t_fold(t_pseudo(T_IP_US, T_IP_PEER, 6, tl));
	assert_int_equal(t_rd16(f->b + 34 + 16), ph);
	h_free(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_passive_open),
		cmocka_unit_test(test_passive_open_no_wscale),
		cmocka_unit_test(test_active_open),
		cmocka_unit_test(test_active_refused_and_timeout),
		cmocka_unit_test(test_no_listener_rst_and_backlog),
		cmocka_unit_test(test_data_both_ways),
		cmocka_unit_test(test_retransmission_rto),
		cmocka_unit_test(test_retransmission_gives_up),
		cmocka_unit_test(test_simultaneous_open),
		cmocka_unit_test(test_rto_resends_only_what_was_sent),
		cmocka_unit_test(test_fast_retransmit_newreno),
		cmocka_unit_test(test_out_of_order),
		cmocka_unit_test(test_zero_copy_receive),
		cmocka_unit_test(test_full_receive_window),
		cmocka_unit_test(test_zero_window_probe),
		cmocka_unit_test(test_zero_window_silent_peer_gives_up),
		cmocka_unit_test(test_send_buffer_full_writable),
		cmocka_unit_test(test_rst_exact_resets),
		cmocka_unit_test(test_rst_in_window_challenge),
		cmocka_unit_test(test_abort_sends_rst),
		cmocka_unit_test(test_fin_peer_first),
		cmocka_unit_test(test_fin_we_first_time_wait),
		cmocka_unit_test(test_fin_simultaneous),
		cmocka_unit_test(test_fin_out_of_order),
		cmocka_unit_test(test_time_wait_reused_by_new_syn),
		cmocka_unit_test(test_tx_csum_offload),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
