/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: lib/tcpip, frames in through the stack.
 *
 * The model is tests/tcpip/test_fuzz.c's, with the input choosing what its
 * PRNG chose there. Byte 0 sets the stack up (bit 0: checksum offloads,
 * bit 1: zero-copy delivery, bit 2: the application holds what arrives);
 * then each command byte picks, in its low three bits:
 *   0 a raw frame: a 16-bit length, that many bytes;
 *   1 a TCP segment of a model peer on one of eight flows: flags, sequence
 *     and acknowledgement numbers right (learnt from what the stack sends),
 *     off by a delta, or raw, window, options and payload from the input;
 *   2 an ARP request or reply;  3 an ICMP message;
 *   4 an application move (send, close, abort, consume, connect out);
 *   5 the clock moving on (by milliseconds, or 70 s), timers run;
 *   6 a byte of a frame built by 1-3 damaged;  7 unlisten or listen again.
 * Bit 7 of a frame command recomputes the checksums after the damage (bit 6
 * of command 6), so it reaches TCP instead of the checksum check.
 *
 * What must hold whatever arrives: every frame the stack sends is well
 * formed (t_frame_ok), callbacks come with legal errors, bytes delivered
 * are readable, and at the end, once the application let go and timers
 * ran out, no connection is left, a clean peer still gets through a
 * handshake and 2000 bytes, and destroying the stack leaks nothing.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "fuzz.h"
#include "tcpip_test.h"

#define NFLOWS 8
#define PEER_PORT0 40000
#define CLEAN_PORT 50000
#define MAX_CONNS 64

struct flow {
	uint16_t sport, dport;
	uint32_t snd_nxt; /* the peer's next sequence number */
	uint32_t rcv_nxt; /* the stack's next sequence number, as last seen */
};

struct model {
	struct sm_tcpip *s;
	uint64_t now;
	unsigned offloads;
	bool zero_copy, hold;
	struct flow flows[NFLOWS];
	struct sm_tcp_conn *conns[MAX_CONNS];
	unsigned nconns;
	uint8_t f[T_FRAME_MAX + 64]; /* the last frame built */
	size_t flen;
	uint64_t bytes_in;
	/* the clean peer at the end */
	uint32_t clean_iss;
	uint8_t clean_rx[2048];
	size_t clean_rxlen;
	struct sm_tcp_conn *clean_conn;
};

static struct model m;
static int trace = -1; /* FUZZ_TRACE=1: print every segment both ways (triage) */

static void
trace_seg(const char *dir, const uint8_t *f, size_t len)
{
	const uint8_t *ip = f + 14, *th = f + 34;

	if (len < 54 || t_rd16(f + 12) != 0x0800 || ip[9] != 6) {
		fprintf(stderr, "%s frame of %zu bytes, type %04x\n", dir, len,
			len >= 14 ? t_rd16(f + 12) : 0);
		return;
	}
	fprintf(stderr, "%s %u > %u flags %02x seq %u ack %u wnd %u len %u\n", dir, t_rd16(th),
		t_rd16(th + 2), th[13], t_rd32(th + 4), t_rd32(th + 8), t_rd16(th + 14),
		t_rd16(ip + 2) - 20u - (th[12] >> 4) * 4u);
}

static int
tx(void *ctx, const void *frame, size_t len)
{
	const uint8_t *f = frame, *ip = f + 14, *th = f + 34;
	unsigned port;

	(void)ctx;
	if (trace)
		trace_seg("out", f, len);
	FUZZ_CHECK(t_frame_ok(f, len, m.offloads));
	if (t_rd16(f + 12) != 0x0800 || ip[9] != 6 || t_rd32(ip + 16) != T_IP_PEER)
		return 0;
	port = t_rd16(th + 2);
	if (port >= PEER_PORT0 && port < PEER_PORT0 + NFLOWS) {
		struct flow *fl = &m.flows[port - PEER_PORT0];
		uint32_t dlen = t_rd16(ip + 2) - 20u - (th[12] >> 4) * 4u;

		fl->rcv_nxt = t_rd32(th + 4) + dlen + ((th[13] & (F_SYN | F_FIN)) ? 1 : 0);
		if (th[13] & F_ACK)
			fl->snd_nxt = t_rd32(th + 8);
	}
	if (port == CLEAN_PORT && (th[13] & F_SYN))
		m.clean_iss = t_rd32(th + 4);
	return 0;
}

static void
forget(struct sm_tcp_conn *c)
{
	unsigned i;

	for (i = 0; i < m.nconns; i++)
		if (m.conns[i] == c) {
			m.conns[i] = m.conns[--m.nconns];
			return;
		}
}

static int
accepted(void *ctx, struct sm_tcp_conn *c)
{
	uint16_t rport;
	unsigned i;

	(void)ctx;
	if (trace)
		fprintf(stderr, "accepted %p\n", (void *)c);
	for (i = 0; i < m.nconns; i++) /* not one the application opened */
		FUZZ_CHECK(m.conns[i] != c);
	sm_tcp_tuple(c, NULL, NULL, NULL, &rport);
	if (rport == CLEAN_PORT) {
		m.clean_conn = c;
		return 0;
	}
	if (m.nconns == MAX_CONNS)
		return -1;
	m.conns[m.nconns++] = c;
	return 0;
}

static void
recv_data(void *ctx, struct sm_tcp_conn *c, const void *data, size_t len)
{
	size_t i;

	(void)ctx;
	if (c == m.clean_conn) {
		if (len > 0 && m.clean_rxlen + len <= sizeof(m.clean_rx)) {
			memcpy(m.clean_rx + m.clean_rxlen, data, len);
			m.clean_rxlen += len;
		}
		sm_tcp_consume(c, len, m.now);
		return;
	}
	for (i = 0; i < len; i++) /* the view must be readable */
		m.bytes_in += ((const uint8_t *)data)[i];
	if (len > 0 && !m.hold)
		sm_tcp_consume(c, len, m.now);
}

static void
recv_ref(void *ctx, struct sm_tcp_conn *c, const void *data, size_t len, void *ref)
{
	FUZZ_CHECK(ref == m.f);
	recv_data(ctx, c, data, len);
}

static void
closed(void *ctx, struct sm_tcp_conn *c, int err)
{
	(void)ctx;
	if (trace)
		fprintf(stderr, "closed %p: %d\n", (void *)c, err);
	FUZZ_CHECK(err == 0 || err == -ECONNRESET || err == -ETIMEDOUT);
	if (c == m.clean_conn)
		m.clean_conn = NULL;
	forget(c);
}

static void
connected(void *ctx, struct sm_tcp_conn *c, int err)
{
	(void)ctx;
	if (trace)
		fprintf(stderr, "connected %p: %d\n", (void *)c, err);
	FUZZ_CHECK(err == 0 || err == -ECONNREFUSED || err == -ETIMEDOUT);
	if (err < 0)
		forget(c);
}

static const struct sm_tcpip_ops ops = {
	.tx = tx,
	.accepted = accepted,
	.connected = connected,
	.recv = recv_data,
	.recv_ref = recv_ref,
	.closed = closed,
};

static void
input(void)
{
	if (trace)
		trace_seg("in ", m.f, m.flen);
	if (m.zero_copy)
		sm_tcpip_input_ref(m.s, m.f, m.flen, m.now, m.f);
	else
		sm_tcpip_input(m.s, m.f, m.flen, m.now);
}

/* A sequence number: right (mode 0), off by a delta, or raw. */
static uint32_t
seq_of(struct fuzz_in *in, unsigned mode, uint32_t right)
{
	switch (mode & 3) {
	case 0:
		return right;
	case 1:
		return right + (uint32_t)(int16_t)fuzz_u16(in);
	case 2:
		return right - 1;
	default:
		return fuzz_u32(in);
	}
}

static void
make_tcp(struct fuzz_in *in)
{
	static uint8_t data[1460];
	uint8_t opt[40];
	struct flow *fl = &m.flows[fuzz_u8(in) % NFLOWS];
	struct t_seg sg = { .sport = fl->sport, .dport = fl->dport };
	uint8_t modes;
	size_t got, i;
	const uint8_t *p;

	sg.flags = fuzz_u8(in);
	modes = fuzz_u8(in);
	if (sg.flags == F_SYN && (modes & 3) == 3)
		fl->snd_nxt = fuzz_u32(in); /* a fresh connection */
	sg.seq = sg.flags == F_SYN ? fl->snd_nxt : seq_of(in, modes, fl->snd_nxt);
	sg.ack = seq_of(in, modes >> 2, fl->rcv_nxt);
	sg.wnd = (modes & 16) ? 0 : fuzz_u16(in);
	if (modes & 32) {
		sg.optlen = 4u * (1u + fuzz_u8(in) % 10);
		p = fuzz_bytes(in, sg.optlen, &got);
		memset(opt, 0, sizeof(opt));
		memcpy(opt, p, got);
		sg.opt = opt;
	}
	if (modes & 64) {
		sg.dlen = fuzz_u16(in) % (1461 - sg.optlen);
		p = fuzz_bytes(in, sg.dlen < 16 ? sg.dlen : 16, &got);
		for (i = 0; i < sg.dlen; i++)
			data[i] = i < got ? p[i] : (uint8_t)(i * 13 + 1);
		sg.data = data;
	}
	/* The peer's model moves on as if the stack took it. */
	if (sg.seq == fl->snd_nxt)
		fl->snd_nxt += (uint32_t)sg.dlen + ((sg.flags & (F_SYN | F_FIN)) ? 1 : 0);
	m.flen = t_tcp_frame(m.f, &sg);
}

static void
make_arp(struct fuzz_in *in)
{
	uint8_t *a = m.f + 14, b = fuzz_u8(in);
	size_t got;

	memcpy(m.f, (b & 1) ? t_mac_us : (const uint8_t[6]){ 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
	       6);
	memcpy(m.f + 6, t_mac_peer, 6);
	t_wr16(m.f + 12, 0x0806);
	t_wr16(a, 1);
	t_wr16(a + 2, 0x0800);
	a[4] = 6;
	a[5] = 4;
	t_wr16(a + 6, (uint16_t)(1 + ((b >> 1) & 1)));
	memcpy(a + 8, fuzz_bytes(in, 6, &got), got);
	memset(a + 8 + got, 0x22, 6 - got);
	a[8] &= 0xfe; /* unicast sender */
	t_wr32(a + 14, (b & 4) ? T_IP_PEER : (T_IP_US & T_MASK) | fuzz_u8(in));
	memset(a + 18, 0, 6);
	t_wr32(a + 24, (b & 8) ? fuzz_u32(in) : T_IP_US);
	memset(m.f + 42, 0, 18);
	m.flen = 60;
}

static void
make_icmp(struct fuzz_in *in)
{
	uint8_t *p = m.f + 34;
	uint16_t l4 = (uint16_t)(8 + fuzz_u16(in) % 1400);
	unsigned i;

	p[0] = fuzz_u8(in);
	p[1] = fuzz_u8(in);
	for (i = 4; i < l4; i++)
		p[i] = (uint8_t)i;
	t_wr16(p + 2, 0);
	t_wr16(p + 2, t_fold(t_sum(p, l4, 0)));
	m.flen = t_ip_frame(m.f, t_mac_us, t_mac_peer, T_IP_PEER, T_IP_US, 1, l4);
}

static void
app_move(struct fuzz_in *in)
{
	static const uint8_t msg[3000] = { 1 };
	uint8_t what = fuzz_u8(in);
	struct sm_tcp_conn *c;

	if ((what & 7) == 5) {
		if (m.nconns < MAX_CONNS &&
		    sm_tcp_connect(m.s, T_IP_PEER, m.flows[what % NFLOWS].sport,
				   m.flows[what % NFLOWS].dport, NULL, m.now, &c) == 0) {
			if (trace)
				fprintf(stderr, "connecting %p\n", (void *)c);
			m.conns[m.nconns++] = c;
		}
		return;
	}
	if (m.nconns == 0)
		return;
	c = m.conns[fuzz_u8(in) % m.nconns];
	switch (what & 7) {
	case 0:
		sm_tcp_send(c, msg, 1 + fuzz_u16(in) % sizeof(msg), m.now);
		break;
	case 1:
		forget(c); /* closed() may still come: that is legal */
		sm_tcp_close(c, m.now);
		break;
	case 2:
		forget(c);
		sm_tcp_abort(c, m.now);
		break;
	case 3:
		sm_tcp_consume(c, sm_tcp_unconsumed(c), m.now);
		break;
	default:
		m.hold = !m.hold;
		break;
	}
}

static void
clock_step(uint64_t ns)
{
	m.now += ns;
	if (sm_tcpip_next_timer(m.s) <= m.now)
		sm_tcpip_poll(m.s, m.now);
}

/* A clean peer on a fresh port: handshake, 2000 bytes in, all delivered in order. */
static void
clean_exchange(void)
{
	static const uint8_t syn_opts[] = { 2, 4, 0x05, 0xb4 };
	uint8_t data[2000];
	struct t_seg sg = { .sport = CLEAN_PORT,
			    .dport = 80,
			    .seq = 7000,
			    .flags = F_SYN,
			    .wnd = 65535,
			    .opt = syn_opts,
			    .optlen = sizeof(syn_opts) };
	size_t i;

	m.hold = false;
	FUZZ_CHECK(sm_tcpip_arp_add(m.s, T_IP_PEER, t_mac_peer) == 0);
	m.flen = t_tcp_frame(m.f, &sg);
	input();
	FUZZ_CHECK(m.clean_iss != 0);
	sg = (struct t_seg){ .sport = CLEAN_PORT,
			     .dport = 80,
			     .seq = 7001,
			     .ack = m.clean_iss + 1,
			     .flags = F_ACK,
			     .wnd = 65535 };
	m.flen = t_tcp_frame(m.f, &sg);
	input();
	FUZZ_CHECK(m.clean_conn != NULL);
	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 31 + 7);
	sg.flags = F_ACK | F_PSH;
	sg.data = data;
	sg.dlen = 1000;
	m.flen = t_tcp_frame(m.f, &sg);
	input();
	sg.seq += 1000;
	sg.data = data + 1000;
	m.flen = t_tcp_frame(m.f, &sg);
	input();
	FUZZ_CHECK(m.clean_rxlen == sizeof(data) && memcmp(m.clean_rx, data, sizeof(data)) == 0);
	FUZZ_CHECK(strcmp(sm_tcp_state_name(m.clean_conn), "ESTABLISHED") == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct sm_tcpip_config cfg = { 0 };
	struct sm_tcpip_stats st;
	uint8_t setup, c;
	size_t got;
	unsigned i;

	if (trace < 0)
		trace = getenv("FUZZ_TRACE") != NULL;
	memset(&m, 0, sizeof(m));
	setup = fuzz_u8(&in);
	m.offloads = (setup & 1) ? SM_TCPIP_OFFLOAD_RX_CSUM | SM_TCPIP_OFFLOAD_TX_CSUM : 0;
	m.zero_copy = setup & 2;
	m.hold = setup & 4;
	m.now = 1000 * T_SEC;
	for (i = 0; i < NFLOWS; i++) {
		m.flows[i].sport = (uint16_t)(PEER_PORT0 + i);
		m.flows[i].dport = i % 2 ? 81 : 80;
	}
	memcpy(cfg.mac, t_mac_us, 6);
	cfg.ip = T_IP_US;
	cfg.netmask = T_MASK;
	cfg.offloads = m.offloads;
	cfg.ops = &ops;
	cfg.max_conns = 32; /* small tables: the limits get hit */
	cfg.syn_backlog = 4;
	cfg.rcv_buf = 8192;
	cfg.snd_buf = 8192;
	FUZZ_CHECK(sm_tcpip_create(&cfg, &m.s) == 0);
	FUZZ_CHECK(sm_tcp_listen(m.s, 80) == 0 && sm_tcp_listen(m.s, 81) == 0);

	while (in.len > 0) {
		c = fuzz_u8(&in);
		if (trace)
			fprintf(stderr, "command %02x at %llu ms\n", c,
				(unsigned long long)(m.now / T_MS));
		switch (c & 7) {
		case 0:
			m.flen = fuzz_u16(&in) % (T_FRAME_MAX + 1);
			memset(m.f, 0, m.flen);
			memcpy(m.f, fuzz_bytes(&in, m.flen, &got), got);
			break;
		case 1:
			make_tcp(&in);
			break;
		case 2:
			make_arp(&in);
			break;
		case 3:
			make_icmp(&in);
			break;
		case 4:
			app_move(&in);
			continue;
		case 5:
			clock_step((c & 0x80) ? 70 * T_SEC : (uint64_t)fuzz_u16(&in) * T_MS / 8);
			continue;
		case 6:
			if (m.flen > 0)
				m.f[fuzz_u16(&in) % m.flen] ^= fuzz_u8(&in);
			if (c & 0x40)
				t_fix_checksums(m.f, m.flen);
			input();
			continue;
		default:
			if (c & 0x80)
				sm_tcp_listen(m.s, (c & 0x40) ? 81 : 82);
			else
				sm_tcp_unlisten(m.s, 81);
			continue;
		}
		if (c & 0x80)
			t_fix_checksums(m.f, m.flen);
		input();
	}

	/* Let go, run every timer out (20 minutes), then serve a clean peer. */
	while (m.nconns > 0)
		sm_tcp_abort(m.conns[--m.nconns], m.now);
	for (i = 0; i < 120; i++)
		clock_step(10 * T_SEC);
	sm_tcpip_stats(m.s, &st);
	FUZZ_CHECK(st.tcp_conns == 0);
	clean_exchange();
	sm_tcpip_destroy(m.s); /* with a live connection: nothing may leak */
	return 0;
}
