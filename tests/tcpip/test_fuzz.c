/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/tcpip against hostile frames: a deterministic mutation fuzzer.
 *
 * A model peer drives several flows towards two listening ports: SYNs,
 * handshakes, data, FINs, RSTs, random flags and options, with sequence
 * and acknowledgement numbers that are right (learnt from what the stack
 * sends), near, or random, plus ARP and ICMP. A share of the frames is
 * then damaged (bytes flipped, truncated, extended, or replaced by
 * garbage), and the checksums are often recomputed so the damage reaches
 * TCP's logic instead of dying at the checksum check. The application
 * side accepts, consumes or holds data, sends, closes and aborts at
 * random, and time jumps forward in small and large steps.
 *
 * It asserts what must hold whatever arrives: nothing crashes or leaks
 * (the ASan+UBSan build runs this too), every frame the stack sends is
 * well formed with correct checksums, callbacks arrive in a legal order,
 * and afterwards a clean peer still completes a handshake and moves data
 * through the same stack. SM_TCPIP_FUZZ_SEED=N reruns one seed;
 * SM_TCPIP_FUZZ_ITERS sets the frame count.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sm_random.h"
#include "tcpip_test.h"

#if defined(__SANITIZE_ADDRESS__)
#define FUZZ_DEFAULT_ITERS 60000
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FUZZ_DEFAULT_ITERS 60000
#endif
#endif
#ifndef FUZZ_DEFAULT_ITERS
#define FUZZ_DEFAULT_ITERS 400000
#endif

#define NFLOWS 8
#define PEER_PORT0 40000
#define MAX_CONNS 64

/* What the peer knows of one flow, learnt from the stack's segments. */
struct flow {
	uint16_t sport, dport;
	uint32_t snd_nxt; /* the peer's next sequence number */
	uint32_t rcv_nxt; /* the stack's next sequence number, as last seen */
	bool synced;	  /* the stack answered a SYN on this flow */
};

struct fuzz {
	struct sm_tcpip *s;
	uint64_t rng, now;
	unsigned offloads;
	struct flow flows[NFLOWS];
	struct sm_tcp_conn *conns[MAX_CONNS];
	unsigned nconns;
	bool hold;
	/* what the checks saw */
	uint64_t frames_out, accepted, closed, bytes_in, eofs;
	/* the clean flow at the end */
	uint16_t clean_port;
	uint32_t clean_iss;
	uint8_t clean_rx[4096];
	size_t clean_rxlen;
	struct sm_tcp_conn *clean_conn;
};

static uint64_t
rnd(struct fuzz *z)
{
	return sm_splitmix64(&z->rng);
}

static unsigned
pick(struct fuzz *z, unsigned n)
{
	return (unsigned)(rnd(z) % n);
}

static struct flow *
flow_of(struct fuzz *z, uint16_t port)
{
	if (port < PEER_PORT0 || port >= PEER_PORT0 + NFLOWS)
		return NULL;
	return &z->flows[port - PEER_PORT0];
}

/*
 * Every frame the stack sends must be well formed: a known EtherType, a
 * correct IPv4 header and TCP or ICMP checksum (unless offloaded), and
 * lengths that fit the frame.
 */
static int
fz_tx(void *ctx, const void *frame, size_t len)
{
	struct fuzz *z = ctx;
	const uint8_t *f = frame, *ip = f + 14, *th;
	uint16_t tl, hl;
	struct flow *fl;

	z->frames_out++;
	assert_true(t_frame_ok(f, len, z->offloads));
	if (t_rd16(f + 12) != 0x0800 || ip[9] != 6)
		return 0;
	th = ip + 20;
	tl = (uint16_t)(t_rd16(ip + 2) - 20);
	hl = (uint16_t)((th[12] >> 4) * 4);
	/* Learn the flow's numbers from what the stack says. */
	fl = flow_of(z, t_rd16(th + 2));
	if (fl != NULL && t_rd32(ip + 16) == T_IP_PEER) {
		uint32_t seq = t_rd32(th + 4), dlen = tl - hl;

		fl->rcv_nxt = seq + dlen + ((th[13] & (F_SYN | F_FIN)) ? 1 : 0);
		if (th[13] & F_ACK)
			fl->snd_nxt = t_rd32(th + 8);
		if (th[13] & F_SYN)
			fl->synced = true;
	}
	if (t_rd16(th + 2) == z->clean_port && (th[13] & F_SYN))
		z->clean_iss = t_rd32(th + 4);
	return 0;
}

static void
conn_forget(struct fuzz *z, struct sm_tcp_conn *c)
{
	for (unsigned i = 0; i < z->nconns; i++)
		if (z->conns[i] == c) {
			z->conns[i] = z->conns[--z->nconns];
			return;
		}
}

static int
fz_accepted(void *ctx, struct sm_tcp_conn *c)
{
	struct fuzz *z = ctx;
	uint16_t rport;

	sm_tcp_tuple(c, NULL, NULL, NULL, &rport);
	if (rport == z->clean_port) {
		z->clean_conn = c;
		return 0;
	}
	if (z->nconns == MAX_CONNS || pick(z, 20) == 0)
		return -1; /* refused now and then: the stack resets it */
	z->accepted++;
	z->conns[z->nconns++] = c;
	return 0;
}

static void
fz_recv(void *ctx, struct sm_tcp_conn *c, const void *data, size_t len)
{
	struct fuzz *z = ctx;

	if (c == z->clean_conn) {
		if (len > 0 && z->clean_rxlen + len <= sizeof(z->clean_rx)) {
			memcpy(z->clean_rx + z->clean_rxlen, data, len);
			z->clean_rxlen += len;
		}
		sm_tcp_consume(c, len, z->now);
		return;
	}
	if (len == 0) {
		z->eofs++;
		return;
	}
	/* Touch every byte: the view must be readable (ASan checks it). */
	for (size_t i = 0; i < len; i++)
		z->bytes_in += ((const uint8_t *)data)[i] != 0;
	if (!z->hold)
		sm_tcp_consume(c, len, z->now);
}

static void
fz_recv_ref(void *ctx, struct sm_tcp_conn *c, const void *data, size_t len, void *ref)
{
	(void)ref;
	fz_recv(ctx, c, data, len);
}

static void
fz_closed(void *ctx, struct sm_tcp_conn *c, int err)
{
	struct fuzz *z = ctx;

	assert_true(err == 0 || err == -ECONNRESET || err == -ETIMEDOUT);
	if (c == z->clean_conn)
		z->clean_conn = NULL;
	z->closed++;
	conn_forget(z, c);
}

static void
fz_connected(void *ctx, struct sm_tcp_conn *c, int err)
{
	(void)ctx;
	(void)c;
	(void)err;
}

static const struct sm_tcpip_ops fz_ops = {
	.tx = fz_tx,
	.accepted = fz_accepted,
	.connected = fz_connected,
	.recv = fz_recv,
	.recv_ref = fz_recv_ref,
	.closed = fz_closed,
};

/* A sequence number that is right, near, or anything. */
static uint32_t
near(struct fuzz *z, uint32_t v)
{
	switch (pick(z, 4)) {
	case 0:
	case 1:
		return v;
	case 2:
		return v + (uint32_t)(pick(z, 131072)) - 65536u;
	default:
		return (uint32_t)rnd(z);
	}
}

static size_t
make_tcp(struct fuzz *z, uint8_t *f)
{
	static const uint8_t flag_sets[] = {
		F_SYN,	       F_ACK,	      F_ACK | F_PSH, F_ACK | F_FIN,	    F_RST,
		F_RST | F_ACK, F_SYN | F_ACK, F_FIN,	     F_SYN | F_FIN | F_RST, 0,
	};
	uint8_t opt[40], data[1460];
	struct flow *fl = &z->flows[pick(z, NFLOWS)];
	struct t_seg sg = { .sport = fl->sport, .dport = fl->dport };
	unsigned i;

	sg.flags = pick(z, 4) == 0 ? (uint8_t)rnd(z) : flag_sets[pick(z, sizeof(flag_sets))];
	if (!fl->synced && pick(z, 2) == 0) {
		fl->snd_nxt = (uint32_t)rnd(z);
		sg.flags = F_SYN;
	}
	sg.seq = sg.flags == F_SYN ? fl->snd_nxt : near(z, fl->snd_nxt);
	sg.ack = near(z, fl->rcv_nxt);
	sg.wnd = pick(z, 8) == 0 ? 0 : (uint16_t)rnd(z);
	if (pick(z, 3) == 0) {
		sg.optlen = 4 * (1 + pick(z, 10));
		for (i = 0; i < sg.optlen; i++)
			opt[i] = pick(z, 3) == 0 ? (uint8_t)pick(z, 5) : (uint8_t)rnd(z);
		sg.opt = opt;
	}
	if ((sg.flags & F_ACK) && pick(z, 2) == 0) {
		sg.dlen = 1 + pick(z, pick(z, 4) == 0 ? 1400 : 200);
		if (sg.dlen + sg.optlen > 1460)
			sg.dlen = 1460 - sg.optlen;
		for (i = 0; i < sg.dlen; i++)
			data[i] = (uint8_t)(i * 13 + 1);
		sg.data = data;
	}
	/* The peer's model moves on as if the stack took it. */
	if (sg.seq == fl->snd_nxt)
		fl->snd_nxt += (uint32_t)sg.dlen + ((sg.flags & (F_SYN | F_FIN)) ? 1 : 0);
	if (sg.flags & F_RST)
		fl->synced = false;
	return t_tcp_frame(f, &sg);
}

static size_t
make_arp(struct fuzz *z, uint8_t *f)
{
	uint8_t *a = f + 14;

	memcpy(f, pick(z, 2) ? t_mac_us : (const uint8_t[6]){ 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
	       6);
	memcpy(f + 6, t_mac_peer, 6);
	t_wr16(f + 12, 0x0806);
	t_wr16(a, 1);
	t_wr16(a + 2, 0x0800);
	a[4] = 6;
	a[5] = 4;
	t_wr16(a + 6, (uint16_t)(1 + pick(z, 2)));
	for (int i = 0; i < 6; i++)
		a[8 + i] = (uint8_t)rnd(z);
	a[8] &= 0xfe; /* unicast sender */
	/* Senders from all over the subnet and beyond: the ARP cache evicts. */
	t_wr32(a + 14, pick(z, 2) ? T_IP_PEER : (T_IP_US & T_MASK) | (uint32_t)pick(z, 256));
	memset(a + 18, 0, 6);
	t_wr32(a + 24, pick(z, 4) ? T_IP_US : (uint32_t)rnd(z));
	memset(f + 42, 0, 18);
	return 60;
}

static size_t
make_icmp(struct fuzz *z, uint8_t *f)
{
	uint8_t *m = f + 34;
	uint16_t l4 = (uint16_t)(8 + pick(z, 1400));

	m[0] = pick(z, 4) ? 8 : (uint8_t)rnd(z);
	m[1] = 0;
	for (unsigned i = 4; i < l4; i++)
		m[i] = (uint8_t)i;
	t_wr16(m + 2, 0);
	t_wr16(m + 2, t_fold(t_sum(m, l4, 0)));
	return t_ip_frame(f, t_mac_us, t_mac_peer, T_IP_PEER, T_IP_US, 1, l4);
}

/* Damage a frame (or not), often keeping its checksums right. */
static size_t
mutate(struct fuzz *z, uint8_t *f, size_t len)
{
	unsigned k;

	switch (pick(z, 10)) {
	case 0: /* flip bytes anywhere */
	case 1:
		for (k = 1 + pick(z, 8); k > 0; k--)
			f[pick(z, (unsigned)len)] ^= (uint8_t)(1 + pick(z, 255));
		break;
	case 2: /* flip bytes in the IP and TCP headers */
		for (k = 1 + pick(z, 4); k > 0 && len > 14; k--)
			f[14 + pick(z, (unsigned)(len - 14 < 60 ? len - 14 : 60))] ^=
				(uint8_t)rnd(z);
		break;
	case 3: /* truncate */
		len = pick(z, (unsigned)len + 1);
		break;
	case 4: /* extend with garbage past the IP length */
		for (k = pick(z, 64); k > 0 && len < T_FRAME_MAX; k--)
			f[len++] = (uint8_t)rnd(z);
		break;
	case 5: /* garbage */
		len = pick(z, 200);
		for (k = 0; k < len; k++)
			f[k] = (uint8_t)rnd(z);
		if (len >= 6 && pick(z, 2))
			memcpy(f, t_mac_us, 6);
		break;
	default:
		return len;
	}
	if (pick(z, 3) != 0)
		t_fix_checksums(f, len);
	return len;
}

/* The application side's moves on the connections it holds. */
static void
app_step(struct fuzz *z)
{
	static const uint8_t msg[3000] = { 1 };
	struct sm_tcp_conn *c;

	if (z->nconns == 0)
		return;
	c = z->conns[pick(z, z->nconns)];
	switch (pick(z, 12)) {
	case 0:
		sm_tcp_send(c, msg, 1 + pick(z, sizeof(msg)), z->now);
		break;
	case 1:
		conn_forget(z, c); /* closed() may still come: that is legal */
		sm_tcp_close(c, z->now);
		break;
	case 2:
		conn_forget(z, c);
		sm_tcp_abort(c, z->now);
		break;
	case 3:
		sm_tcp_consume(c, sm_tcp_unconsumed(c), z->now);
		break;
	default:
		break;
	}
}

static void
clock_step(struct fuzz *z)
{
	switch (pick(z, 50)) {
	case 0:
		z->now += 70 * T_SEC; /* past TIME_WAIT and every retransmission */
		break;
	case 1:
		z->now += (uint64_t)pick(z, 3000) * T_MS;
		break;
	default:
		z->now += (uint64_t)pick(z, 50) * T_MS;
	}
	if (sm_tcpip_next_timer(z->s) <= z->now)
		sm_tcpip_poll(z->s, z->now);
}

/* A clean peer on a fresh port: handshake, 2000 bytes in, an ACK for all. */
static void
clean_exchange(struct fuzz *z)
{
	static const uint8_t syn_opts[] = { 2, 4, 0x05, 0xb4 };
	uint8_t f[T_FRAME_MAX], data[2000];
	struct t_seg sg = { .sport = z->clean_port,
			    .dport = 80,
			    .seq = 7000,
			    .flags = F_SYN,
			    .wnd = 65535,
			    .opt = syn_opts,
			    .optlen = sizeof(syn_opts) };
	size_t i;

	z->hold = false;
	z->clean_iss = 0;
	/* The fuzzed ARP traffic left the peer's entry anything: pin it. */
	assert_int_equal(sm_tcpip_arp_add(z->s, T_IP_PEER, t_mac_peer), 0);
	sm_tcpip_input(z->s, f, t_tcp_frame(f, &sg), z->now);
	assert_true(z->clean_iss != 0);
	sg = (struct t_seg){ .sport = z->clean_port,
			     .dport = 80,
			     .seq = 7001,
			     .ack = z->clean_iss + 1,
			     .flags = F_ACK,
			     .wnd = 65535 };
	sm_tcpip_input(z->s, f, t_tcp_frame(f, &sg), z->now);
	assert_non_null(z->clean_conn);
	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 31 + 7);
	sg.flags = F_ACK | F_PSH;
	sg.data = data;
	sg.dlen = 1000;
	sm_tcpip_input(z->s, f, t_tcp_frame(f, &sg), z->now);
	sg.seq += 1000;
	sg.data = data + 1000;
	sm_tcpip_input_ref(z->s, f, t_tcp_frame(f, &sg), z->now, f);
	assert_int_equal(z->clean_rxlen, sizeof(data));
	assert_memory_equal(z->clean_rx, data, sizeof(data));
	assert_string_equal(sm_tcp_state_name(z->clean_conn), "ESTABLISHED");
}

static uint64_t
env_u64(const char *name, uint64_t dflt)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : dflt;
}

static void
run_fuzz(uint64_t seed, unsigned offloads, uint64_t iters)
{
	struct fuzz *z = calloc(1, sizeof(*z));
	struct sm_tcpip_config cfg = { 0 };
	struct sm_tcpip_stats st;
	uint8_t f[T_FRAME_MAX + 64];
	uint64_t it;
	size_t len;
	unsigned i;

	assert_non_null(z);
	z->rng = seed;
	z->offloads = offloads;
	z->now = 1000 * T_SEC;
	z->clean_port = 50000;
	for (i = 0; i < NFLOWS; i++) {
		z->flows[i].sport = (uint16_t)(PEER_PORT0 + i);
		z->flows[i].dport = i % 2 ? 81 : 80;
	}
	memcpy(cfg.mac, t_mac_us, 6);
	cfg.ip = T_IP_US;
	cfg.netmask = T_MASK;
	cfg.offloads = offloads;
	cfg.ops = &fz_ops;
	cfg.ctx = z;
	cfg.max_conns = 32; /* small tables: the limits get hit */
	cfg.syn_backlog = 4;
	cfg.rcv_buf = 8192;
	cfg.snd_buf = 8192;
	memcpy(cfg.secret, &seed, sizeof(seed));
	assert_int_equal(sm_tcpip_create(&cfg, &z->s), 0);
	assert_int_equal(sm_tcp_listen(z->s, 80), 0);
	assert_int_equal(sm_tcp_listen(z->s, 81), 0);
	for (it = 0; it < iters; it++) {
		switch (pick(z, 10)) {
		case 0:
			len = make_arp(z, f);
			break;
		case 1:
			len = make_icmp(z, f);
			break;
		default:
			len = make_tcp(z, f);
		}
		len = mutate(z, f, len);
		z->hold = pick(z, 8) == 0;
		if (pick(z, 2))
			sm_tcpip_input_ref(z->s, f, len, z->now, f);
		else
			sm_tcpip_input(z->s, f, len, z->now);
		app_step(z);
		clock_step(z);
	}
	/*
	 * Whatever happened, the stack still serves a clean peer once the
	 * application let go and the half-open connections timed out (the
	 * SYN queue and the table are small on purpose).
	 */
	while (z->nconns > 0)
		sm_tcp_abort(z->conns[--z->nconns], z->now);
	for (i = 0; i < 120; i++) { /* 20 minutes: past every retransmission backoff */
		z->now += 10 * T_SEC;
		sm_tcpip_poll(z->s, z->now);
	}
	sm_tcpip_stats(z->s, &st);
	assert_int_equal(st.tcp_conns, 0);
	clean_exchange(z);
	sm_tcpip_stats(z->s, &st);
	fprintf(stderr,
		"fuzz seed %llu offloads %u: %llu frames in, %llu out; %llu accepted, %llu "
		"closed, %llu bad checksums, %llu dropped; %llu RSTs sent, %llu challenge ACKs\n",
		(unsigned long long)seed, offloads, (unsigned long long)st.rx_frames,
		(unsigned long long)z->frames_out, (unsigned long long)z->accepted,
		(unsigned long long)z->closed, (unsigned long long)st.rx_bad_csum,
		(unsigned long long)(st.rx_drop_eth + st.rx_drop_ip),
		(unsigned long long)st.tcp_rst_sent, (unsigned long long)st.tcp_challenge_acks);
	/* The fuzzer reached the deep paths, not just the checksum check. */
	assert_true(z->accepted > 0 && z->closed > 0 && z->bytes_in > 0 && z->eofs > 0);
	assert_true(st.tcp_rst_sent > 0 && st.tcp_challenge_acks > 0 && st.tcp_ooo_segs > 0);
	assert_true(st.rx_bad_csum > 0 || (offloads & SM_TCPIP_OFFLOAD_RX_CSUM));
	sm_tcpip_destroy(z->s); /* with live connections: nothing may leak */
	free(z);
}

static void
test_fuzz_software_checksums(void **state)
{
	(void)state;
	run_fuzz(env_u64("SM_TCPIP_FUZZ_SEED", 1), 0,
		 env_u64("SM_TCPIP_FUZZ_ITERS", FUZZ_DEFAULT_ITERS));
}

/* With offloads the stack trusts checksums: every damaged byte reaches TCP. */
static void
test_fuzz_offloaded_checksums(void **state)
{
	(void)state;
	run_fuzz(env_u64("SM_TCPIP_FUZZ_SEED", 2),
		 SM_TCPIP_OFFLOAD_RX_CSUM | SM_TCPIP_OFFLOAD_TX_CSUM,
		 env_u64("SM_TCPIP_FUZZ_ITERS", FUZZ_DEFAULT_ITERS));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fuzz_software_checksums),
		cmocka_unit_test(test_fuzz_offloaded_checksums),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
