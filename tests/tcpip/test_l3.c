/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/tcpip below TCP, from packet vectors: the Internet checksum against
 * RFC 1071 and a naive reference, SipHash against its reference vectors,
 * ARP replies, resolution with a pending queue and retries, ICMP echo, and
 * the IPv4 drops (bad checksum, fragments, other hosts, checksum offload).
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sm_tcpip_priv.h"
#include "tcpip_test.h"

static void
test_csum_rfc1071(void **state)
{
	/* RFC 1071 section 3 example: the sum is ddf2, the checksum its complement. */
	static const uint8_t d[] = { 0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7 };
	uint16_t c = sm_inet_csum(d, sizeof(d));
	uint8_t be[2];

	(void)state;
	memcpy(be, &c, 2);
	assert_int_equal(t_rd16(be), 0x220d);
}

static void
test_csum_ipv4_header(void **state)
{
	/* A captured header whose checksum field is b861. */
	uint8_t h[] = { 0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
			0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7 };
	uint16_t c;

	(void)state;
	assert_int_equal(sm_inet_csum(h, sizeof(h)), 0); /* verifies */
	h[10] = h[11] = 0;
	c = sm_inet_csum(h, sizeof(h));
	memcpy(h + 10, &c, 2);
	assert_int_equal(h[10], 0xb8);
	assert_int_equal(h[11], 0x61);
}

static void
test_csum_matches_reference(void **state)
{
	uint8_t buf[2100];
	uint32_t x = 12345;

	(void)state;
	for (size_t i = 0; i < sizeof(buf); i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (uint8_t)(x >> 16);
	}
	/* Every length and start alignment, plus the all-ones carry storm. */
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1)
			memset(buf, 0xff, sizeof(buf));
		for (size_t off = 0; off < 8; off++) {
			for (size_t len = 0; len < 300; len++) {
				uint16_t c = sm_inet_csum(buf + off, len);
				uint8_t be[2];

				memcpy(be, &c, 2);
				assert_int_equal(t_rd16(be), t_fold(t_sum(buf + off, len, 0)));
			}
			uint16_t c = sm_inet_csum(buf + off, 2000);
			uint8_t be[2];

			memcpy(be, &c, 2);
			assert_int_equal(t_rd16(be), t_fold(t_sum(buf + off, 2000, 0)));
		}
	}
	/* Split sums: even pieces, then the rest. */
	uint64_t s = sm_inet_csum_partial(buf, 64, 0);
	s = sm_inet_csum_partial(buf + 64, 1001, s);
	assert_int_equal(sm_inet_csum_fold(s), sm_inet_csum(buf, 1065));
}

static void
test_siphash_vectors(void **state)
{
	uint8_t key[16], msg[15];

	(void)state;
	for (int i = 0; i < 16; i++)
		key[i] = (uint8_t)i;
	for (int i = 0; i < 15; i++)
		msg[i] = (uint8_t)i;
	assert_true(sm_tcpip_siphash(key, msg, 0) == 0x726fdb47dd0e0e31ull);
	assert_true(sm_tcpip_siphash(key, msg, 15) == 0xa129ca6149be45e5ull);
}

/* ---- a stack on 10.0.0.1/24 ---- */

struct env {
	struct t_cap cap;
	struct sm_tcpip *s;
};

static struct sm_tcpip_ops ops = { .tx = t_tx };

static struct env *
env_new_ops(unsigned offloads, const struct sm_tcpip_ops *o)
{
	struct env *e = calloc(1, sizeof(*e));
	struct sm_tcpip_config cfg = { 0 };

	memcpy(cfg.mac, t_mac_us, 6);
	cfg.ip = T_IP_US;
	cfg.netmask = T_MASK;
	cfg.gateway = 0x0a0000feu;
	cfg.ops = o;
	cfg.ctx = &e->cap;
	cfg.offloads = offloads;
	assert_int_equal(sm_tcpip_create(&cfg, &e->s), 0);
	return e;
}

static struct env *
env_new(unsigned offloads)
{
	return env_new_ops(offloads, &ops);
}

static void
env_free(struct env *e)
{
	sm_tcpip_destroy(e->s);
	free(e);
}

static size_t
arp_frame(uint8_t *f, uint16_t op, const uint8_t *sha, uint32_t spa, const uint8_t *tha,
	  uint32_t tpa, const uint8_t *dmac)
{
	uint8_t *a = f + 14;

	memcpy(f, dmac, 6);
	memcpy(f + 6, sha, 6);
	t_wr16(f + 12, 0x0806);
	t_wr16(a, 1);
	t_wr16(a + 2, 0x0800);
	a[4] = 6;
	a[5] = 4;
	t_wr16(a + 6, op);
	memcpy(a + 8, sha, 6);
	t_wr32(a + 14, spa);
	memcpy(a + 18, tha, 6);
	t_wr32(a + 24, tpa);
	memset(f + 42, 0, 18);
	return 60;
}

static const uint8_t zero_mac[6], bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

static void
test_arp_reply(void **state)
{
	struct env *e = env_new(0);
	uint8_t f[64], expect[64];
	struct t_frame *o;
	uint8_t mac[6];

	(void)state;
	sm_tcpip_input(e->s, f, arp_frame(f, 1, t_mac_peer, T_IP_PEER, zero_mac, T_IP_US, bcast),
		       0);
	o = t_pop(&e->cap);
	assert_non_null(o);
	arp_frame(expect, 2, t_mac_us, T_IP_US, t_mac_peer, T_IP_PEER, t_mac_peer);
	assert_int_equal(o->len, 60);
	assert_memory_equal(o->b, expect, 60);
	/* The requester was learned. */
	assert_true(sm_tcpip_arp_lookup(e->s, T_IP_PEER, mac));
	assert_memory_equal(mac, t_mac_peer, 6);
	/* A request for someone else is not answered. */
	sm_tcpip_input(e->s, f, arp_frame(f, 1, t_mac_peer, T_IP_PEER, zero_mac, 0x0a000003, bcast),
		       0);
	assert_int_equal(t_pending(&e->cap), 0);
	env_free(e);
}

static void
test_icmp_echo(void **state)
{
	struct env *e = env_new(0);
	uint8_t f[200], expect[200], *m = f + 34;
	struct t_frame *o;
	size_t len;

	(void)state;
	sm_tcpip_arp_add(e->s, T_IP_PEER, t_mac_peer);
	m[0] = 8;
	m[1] = 0;
	t_wr16(m + 2, 0);
	t_wr16(m + 4, 0xbeef);
	t_wr16(m + 6, 7);
	for (int i = 0; i < 56; i++)
		m[8 + i] = (uint8_t)i;
	t_wr16(m + 2, t_fold(t_sum(m, 64, 0)));
	len = t_ip_frame(f, t_mac_us, t_mac_peer, T_IP_PEER, T_IP_US, 1, 64);
	sm_tcpip_input(e->s, f, len, 0);
	o = t_pop(&e->cap);
	assert_non_null(o);
	assert_int_equal(o->len, 98);
	/* Same id, sequence and data, type 0, valid checksums, addresses swapped. */
	memcpy(expect + 34, m, 64);
	expect[34] = 0;
	t_wr16(expect + 36, 0);
	t_wr16(expect + 36, t_fold(t_sum(expect + 34, 64, 0)));
	assert_memory_equal(o->b + 34, expect + 34, 64);
	assert_memory_equal(o->b, t_mac_peer, 6);
	assert_memory_equal(o->b + 6, t_mac_us, 6);
	assert_int_equal(t_fold(t_sum(o->b + 14, 20, 0)), 0);
	assert_int_equal(t_rd32(o->b + 14 + 12), T_IP_US);
	assert_int_equal(t_rd32(o->b + 14 + 16), T_IP_PEER);
	assert_int_equal(o->b[14 + 9], 1);

	/* A corrupted request gets nothing. */
	m[20] ^= 1;
	sm_tcpip_input(e->s, f, len, 0);
	assert_int_equal(t_pending(&e->cap), 0);
	struct sm_tcpip_stats st;
	sm_tcpip_stats(e->s, &st);
	assert_int_equal(st.rx_bad_csum, 1);
	assert_int_equal(st.icmp_echo_replies, 1);
	env_free(e);
}

static void
test_ipv4_drops(void **state)
{
	struct env *e = env_new(0);
	uint8_t f[200], *m = f + 34;
	struct sm_tcpip_stats st;
	size_t len;

	(void)state;
	sm_tcpip_arp_add(e->s, T_IP_PEER, t_mac_peer);
	memset(m, 0, 8);
	m[0] = 8;
	t_wr16(m + 2, t_fold(t_sum(m, 8, 0)));
	len = t_ip_frame(f, t_mac_us, t_mac_peer, T_IP_PEER, T_IP_US, 1, 8);
	/* Bad header checksum. */
	f[14 + 10] ^= 0xff;
	sm_tcpip_input(e->s, f, len, 0);
	f[14 + 10] ^= 0xff;
	/* A fragment (MF set). */
	f[14 + 6] |= 0x20;
	t_wr16(f + 14 + 10, 0);
	t_wr16(f + 14 + 10, t_fold(t_sum(f + 14, 20, 0)));
	sm_tcpip_input(e->s, f, len, 0);
	/* Another host's address. */
	len = t_ip_frame(f, t_mac_us, t_mac_peer, T_IP_PEER, 0x0a000009, 1, 8);
	sm_tcpip_input(e->s, f, len, 0);
	/* Another MAC. */
	len = t_ip_frame(f, t_mac_peer, t_mac_peer, T_IP_PEER, T_IP_US, 1, 8);
	sm_tcpip_input(e->s, f, len, 0);
	/* Truncated below the IP total length. */
	len = t_ip_frame(f, t_mac_us, t_mac_peer, T_IP_PEER, T_IP_US, 1, 8);
	sm_tcpip_input(e->s, f, 30, 0);
	assert_int_equal(t_pending(&e->cap), 0);
	sm_tcpip_stats(e->s, &st);
	assert_int_equal(st.rx_bad_csum, 1);
	assert_int_equal(st.rx_frags, 1);
	assert_int_equal(st.rx_drop_ip, 2);
	assert_int_equal(st.rx_drop_eth, 1);
	/* The good frame is answered. */
	sm_tcpip_input(e->s, f, len, 0);
	assert_int_equal(t_pending(&e->cap), 1);
	env_free(e);
}

static void
test_rx_csum_offload(void **state)
{
	struct env *e = env_new(SM_TCPIP_OFFLOAD_RX_CSUM | SM_TCPIP_OFFLOAD_TX_CSUM);
	uint8_t f[200], *m = f + 34;
	size_t len;

	(void)state;
	sm_tcpip_arp_add(e->s, T_IP_PEER, t_mac_peer);
	memset(m, 0, 8);
	m[0] = 8;
	len = t_ip_frame(f, t_mac_us, t_mac_peer, T_IP_PEER, T_IP_US, 1, 8);
	t_wr16(f + 14 + 10, 0); /* the NIC checked it, the stack must not */
	sm_tcpip_input(e->s, f, len, 0);
	assert_int_equal(t_pending(&e->cap), 1);
	struct t_frame *o = t_pop(&e->cap);
	/* TX offload: the IPv4 checksum is left for the NIC. */
	assert_int_equal(t_rd16(o->b + 14 + 10), 0);
	env_free(e);
}

struct conn_log {
	int connected_err;
	int nconnected;
};

static void
on_connected(void *ctx, struct sm_tcp_conn *c, int err)
{
	(void)ctx;
	struct conn_log *l = sm_tcp_user(c);

	l->connected_err = err;
	l->nconnected++;
}

static void
test_arp_resolve_pending(void **state)
{
	static const struct sm_tcpip_ops o2 = { .tx = t_tx, .connected = on_connected };
	struct env *e = env_new_ops(0, &o2);
	struct sm_tcp_conn *c;
	struct conn_log log = { 0 };
	struct t_frame *fr;
	uint8_t f[64];
	struct t_out seg;

	(void)state;
	/* The SYN waits for ARP: a broadcast request goes out first. */
	assert_int_equal(sm_tcp_connect(e->s, T_IP_PEER, 80, 5555, &log, 0, &c), 0);
	assert_int_equal(t_pending(&e->cap), 1);
	fr = t_pop(&e->cap);
	assert_memory_equal(fr->b, bcast, 6);
	assert_int_equal(t_rd16(fr->b + 12), 0x0806);
	assert_int_equal(t_rd16(fr->b + 14 + 6), 1);
	assert_int_equal(t_rd32(fr->b + 14 + 24), T_IP_PEER);
	/* Retried every second. */
	sm_tcpip_poll(e->s, T_SEC - 1);
	assert_int_equal(t_pending(&e->cap), 0);
	sm_tcpip_poll(e->s, T_SEC);
	assert_int_equal(t_pending(&e->cap), 1); /* the SYN's own retry queues behind it */
	t_pop(&e->cap);
	/* The reply releases the queued SYNs, addressed to the learned MAC. */
	sm_tcpip_input(e->s, f, arp_frame(f, 2, t_mac_peer, T_IP_PEER, t_mac_us, T_IP_US, t_mac_us),
		       T_SEC + 5 * T_MS);
	assert_int_equal(t_pending(&e->cap), 2);
	fr = t_pop(&e->cap);
	assert_memory_equal(fr->b, t_mac_peer, 6);
	seg = t_parse(fr);
	assert_true(seg.ok);
	assert_int_equal(seg.flags, F_SYN);
	assert_int_equal(seg.sport, 5555);
	assert_int_equal(seg.dport, 80);
	sm_tcp_abort(c, T_SEC + 6 * T_MS);
	env_free(e);
}

static void
test_arp_gives_up(void **state)
{
	struct env *e = env_new(0);
	struct sm_tcp_conn *c;
	struct sm_tcpip_stats st;
	uint8_t mac[6];

	(void)state;
	/* Off-subnet: the gateway is what gets resolved. */
	assert_int_equal(sm_tcp_connect(e->s, 0x08080808, 53, 0, NULL, 0, &c), 0);
	struct t_frame *fr = t_pop(&e->cap);
	assert_int_equal(t_rd32(fr->b + 14 + 24), 0x0a0000fe);
	sm_tcp_abort(c, 0); /* keep TCP's own retries out of the count */
	for (uint64_t t = 1; t <= 3; t++)
		sm_tcpip_poll(e->s, t * T_SEC);
	sm_tcpip_stats(e->s, &st);
	assert_int_equal(st.arp_requests_sent, 3);
	assert_int_equal(st.arp_pending_dropped, 1);
	assert_false(sm_tcpip_arp_lookup(e->s, 0x0a0000fe, mac));
	env_free(e);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_csum_rfc1071),
		cmocka_unit_test(test_csum_ipv4_header),
		cmocka_unit_test(test_csum_matches_reference),
		cmocka_unit_test(test_siphash_vectors),
		cmocka_unit_test(test_arp_reply),
		cmocka_unit_test(test_icmp_echo),
		cmocka_unit_test(test_ipv4_drops),
		cmocka_unit_test(test_rx_csum_offload),
		cmocka_unit_test(test_arp_resolve_pending),
		cmocka_unit_test(test_arp_gives_up),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
