/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The stack object and layers 2-3: Ethernet dispatch, ARP (RFC 826) with a
 * small cache and a queue of frames waiting for resolution, IPv4 (RFC 791,
 * no options honoured, fragments dropped: TCP's MSS keeps our own traffic
 * unfragmented) and ICMP echo (RFC 792).
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sm_mem.h"
#include "sm_tcpip_priv.h"

static const uint8_t bcast_mac[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

static void
tx_frame(struct sm_tcpip *s, const uint8_t *frame, size_t len)
{
	/* Pad to the Ethernet minimum so what tx() gets is a valid frame. */
	if (len < 60) {
		if (frame != s->txbuf)
			memmove(s->txbuf, frame, len);
		memset(s->txbuf + len, 0, 60 - len);
		frame = s->txbuf;
		len = 60;
	}
	s->st.tx_frames++;
	if (s->ops.tx(s->cfg.ctx, frame, len) < 0)
		s->st.tx_errors++;
}

static void
eth_fill(struct sm_tcpip *s, uint8_t *f, const uint8_t *dst, uint16_t type)
{
	memcpy(f, dst, 6);
	memcpy(f + 6, s->cfg.mac, 6);
	sm_put_be16(f + 12, type);
}

/* ---- ARP ---- */

static int
arp_index(const struct sm_tcpip *s, uint32_t ip)
{
	for (int i = 0; i < ARP_CACHE_SIZE; i++)
		if (s->arp[i].ip == ip)
			return i;
	return -1;
}

static struct arp_entry *
arp_find(struct sm_tcpip *s, uint32_t ip)
{
	int i = arp_index(s, ip);

	return i < 0 ? NULL : &s->arp[i];
}

static void
arp_drop_pending(struct sm_tcpip *s, struct arp_entry *e)
{
	for (unsigned i = 0; i < e->npending; i++) {
		sm_free(e->pending[i].frame);
		s->st.arp_pending_dropped++;
	}
	e->npending = 0;
}

/* A slot for @ip: a free one, else the least recently used non-permanent one. */
static struct arp_entry *
arp_alloc(struct sm_tcpip *s, uint32_t ip)
{
	struct arp_entry *victim = NULL;

	for (unsigned i = 0; i < ARP_CACHE_SIZE; i++) {
		struct arp_entry *e = &s->arp[i];

		if (e->ip == 0) {
			victim = e;
			break;
		}
		if (!e->permanent && (victim == NULL || e->used < victim->used))
			victim = e;
	}
	if (victim == NULL)
		return NULL;
	arp_drop_pending(s, victim);
	memset(victim, 0, sizeof(*victim));
	victim->ip = ip;
	victim->used = s->now;
	return victim;
}

static void
arp_send(struct sm_tcpip *s, uint16_t op, const uint8_t *tha, uint32_t tip)
{
	uint8_t *f = s->txbuf, *a = f + ETH_HDR_LEN;

	eth_fill(s, f, op == 1 ? bcast_mac : tha, ETH_TYPE_ARP);
	sm_put_be16(a, 1); /* Ethernet */
	sm_put_be16(a + 2, ETH_TYPE_IPV4);
	a[4] = 6;
	a[5] = 4;
	sm_put_be16(a + 6, op);
	memcpy(a + 8, s->cfg.mac, 6);
	sm_put_be32(a + 14, s->cfg.ip);
	if (op == 1)
		memset(a + 18, 0, 6);
	else
		memcpy(a + 18, tha, 6);
	sm_put_be32(a + 24, tip);
	if (op == 1)
		s->st.arp_requests_sent++;
	else
		s->st.arp_replies_sent++;
	tx_frame(s, f, ETH_HDR_LEN + 28);
}

/* Set @e's deadline; arp_next stays a lower bound of every entry's (exact after arp_timers). */
static void
arp_arm(struct sm_tcpip *s, struct arp_entry *e, uint64_t when)
{
	e->expires = when;
	if (!e->permanent && when < s->arp_next)
		s->arp_next = when;
}

static void
arp_resolved(struct sm_tcpip *s, struct arp_entry *e, const uint8_t *mac)
{
	memcpy(e->mac, mac, 6);
	e->resolved = true;
	e->tries = 0;
	arp_arm(s, e, s->now + ARP_TTL_NS);
	/* The queued frames were built with our MAC and type; only the destination is missing. */
	for (unsigned i = 0; i < e->npending; i++) {
		memcpy(e->pending[i].frame, mac, 6);
		tx_frame(s, e->pending[i].frame, e->pending[i].len);
		sm_free(e->pending[i].frame);
	}
	e->npending = 0;
}

static void
arp_input(struct sm_tcpip *s, const uint8_t *a, size_t len)
{
	uint32_t spa, tpa;
	uint16_t op;
	struct arp_entry *e;

	if (len < 28 || sm_get_be16(a) != 1 || sm_get_be16(a + 2) != ETH_TYPE_IPV4 || a[4] != 6 || a[5] != 4) {
		s->st.rx_drop_eth++;
		return;
	}
	op = sm_get_be16(a + 6);
	spa = sm_get_be32(a + 14);
	tpa = sm_get_be32(a + 24);
	/* RFC 826 merge: refresh a known sender, learn it when the packet is for us. */
	e = spa != 0 ? arp_find(s, spa) : NULL;
	if (e != NULL && !e->permanent)
		arp_resolved(s, e, a + 8);
	if (tpa != s->cfg.ip)
		return;
	if (e == NULL && spa != 0 && ((spa ^ s->cfg.ip) & s->cfg.netmask) == 0) {
		e = arp_alloc(s, spa);
		if (e != NULL)
			arp_resolved(s, e, a + 8);
	}
	if (op == 1)
		arp_send(s, 2, a + 8, spa);
}

int
sm_tcpip_arp_add(struct sm_tcpip *s, uint32_t ip, const uint8_t mac[6])
{
	struct arp_entry *e;

	if (ip == 0)
		return -EINVAL;
	sm_tcpip_enter(s, s->now);
	e = arp_find(s, ip);
	if (e == NULL)
		e = arp_alloc(s, ip);
	if (e != NULL) {
		e->permanent = true;
		arp_resolved(s, e, mac);
	}
	sm_tcpip_leave(s);
	return e != NULL ? 0 : -ENOSPC;
}

bool
sm_tcpip_arp_lookup(const struct sm_tcpip *s, uint32_t ip, uint8_t mac[6])
{
	int i = arp_index(s, ip);

	if (i < 0 || !s->arp[i].resolved)
		return false;
	memcpy(mac, s->arp[i].mac, 6);
	return true;
}

static void
arp_timers(struct sm_tcpip *s, uint64_t now)
{
	if (now < s->arp_next)
		return;
	s->arp_next = UINT64_MAX;
	for (unsigned i = 0; i < ARP_CACHE_SIZE; i++) {
		struct arp_entry *e = &s->arp[i];

		if (e->ip == 0 || e->permanent)
			continue;
		if (now < e->expires) {
			arp_arm(s, e, e->expires);
			continue;
		}
		if (e->tries >= ARP_MAX_TRIES) {
			/* Unanswered: forget it; TCP will retry and ask again. */
			arp_drop_pending(s, e);
			memset(e, 0, sizeof(*e));
			continue;
		}
		/*
		 * Resolved entries that aged out keep their MAC while we ask
		 * again, so traffic does not stall for a round trip.
		 */
		e->tries++;
		arp_arm(s, e, now + ARP_RETRY_NS);
		arp_send(s, 1, NULL, e->ip);
	}
}

/* ---- IPv4 ---- */

void
sm_tcpip_ip_output(struct sm_tcpip *s, uint32_t dst, uint8_t proto, uint16_t l4len)
{
	uint8_t *f = s->txbuf, *ip = f + ETH_HDR_LEN;
	uint16_t total = (uint16_t)(IP_HDR_LEN + l4len);
	uint32_t hop = dst;
	struct arp_entry *e;

	if (((dst ^ s->cfg.ip) & s->cfg.netmask) != 0) {
		if (s->cfg.gateway == 0) {
			s->st.tx_errors++;
			return;
		}
		hop = s->cfg.gateway;
	}
	ip[0] = 0x45;
	ip[1] = 0;
	sm_put_be16(ip + 2, total);
	sm_put_be16(ip + 4, s->ip_id++);
	sm_put_be16(ip + 6, 0x4000); /* DF: we never fragment, the MSS fits the MTU */
	ip[8] = 64;
	ip[9] = proto;
	sm_put_be16(ip + 10, 0);
	sm_put_be32(ip + 12, s->cfg.ip);
	sm_put_be32(ip + 16, dst);
	if (!(s->cfg.offloads & SM_TCPIP_OFFLOAD_TX_CSUM)) {
		uint16_t c = sm_inet_csum(ip, IP_HDR_LEN);

		memcpy(ip + 10, &c, 2);
	}

	e = arp_find(s, hop);
	if (e != NULL && e->resolved) {
		e->used = s->now;
		eth_fill(s, f, e->mac, ETH_TYPE_IPV4);
		tx_frame(s, f, ETH_HDR_LEN + total);
		return;
	}
	if (e == NULL) {
		e = arp_alloc(s, hop);
		if (e == NULL) {
			s->st.arp_pending_dropped++;
			return;
		}
	}
	eth_fill(s, f, bcast_mac, ETH_TYPE_IPV4);
	if (e->npending < ARP_PENDING_MAX) {
		uint8_t *copy = sm_malloc(ETH_HDR_LEN + total);

		if (copy != NULL) {
			memcpy(copy, f, ETH_HDR_LEN + total);
			e->pending[e->npending].frame = copy;
			e->pending[e->npending].len = (uint16_t)(ETH_HDR_LEN + total);
			e->npending++;
		} else {
			s->st.arp_pending_dropped++;
		}
	} else {
		s->st.arp_pending_dropped++;
	}
	if (e->tries == 0) {
		/* First miss: ask now; arp_timers() repeats every second. */
		e->tries = 1;
		arp_arm(s, e, s->now + ARP_RETRY_NS);
		arp_send(s, 1, NULL, hop);
	}
}

static void
icmp_input(struct sm_tcpip *s, uint32_t src, const uint8_t *m, uint16_t len)
{
	uint8_t *out = s->txbuf + ETH_HDR_LEN + IP_HDR_LEN;
	uint16_t c;

	if (len < 8 || len > s->mtu - IP_HDR_LEN) {
		s->st.rx_drop_ip++;
		return;
	}
	if (!(s->cfg.offloads & SM_TCPIP_OFFLOAD_RX_CSUM) && sm_inet_csum(m, len) != 0) {
		s->st.rx_bad_csum++;
		return;
	}
	if (m[0] != 8 || m[1] != 0)
		return; /* only echo requests need an answer */
	memcpy(out, m, len);
	out[0] = 0;
	out[2] = out[3] = 0;
	c = sm_inet_csum(out, len); /* NICs offload TCP/UDP, not ICMP */
	memcpy(out + 2, &c, 2);
	s->st.icmp_echo_replies++;
	sm_tcpip_ip_output(s, src, IP_PROTO_ICMP, len);
}

static void
ipv4_input(struct sm_tcpip *s, const uint8_t *ip, size_t len)
{
	unsigned hlen;
	uint16_t total;
	uint32_t src, dst;

	if (len < IP_HDR_LEN || (ip[0] >> 4) != 4)
		goto drop;
	hlen = (ip[0] & 0xf) * 4u;
	total = sm_get_be16(ip + 2);
	if (hlen < IP_HDR_LEN || total < hlen || total > len)
		goto drop;
	if (!(s->cfg.offloads & SM_TCPIP_OFFLOAD_RX_CSUM) && sm_inet_csum(ip, hlen) != 0) {
		s->st.rx_bad_csum++;
		return;
	}
	src = sm_get_be32(ip + 12);
	dst = sm_get_be32(ip + 16);
	if (dst != s->cfg.ip)
		goto drop;
	if (sm_get_be16(ip + 6) & 0x3fff) {
		/* MF or a fragment offset: reassembly is not implemented. */
		s->st.rx_frags++;
		return;
	}
	/* total, not len: Ethernet pads short frames. */
	switch (ip[9]) {
	case IP_PROTO_TCP:
		sm_tcp_input(s, src, dst, ip + hlen, (uint16_t)(total - hlen));
		return;
	case IP_PROTO_ICMP:
		icmp_input(s, src, ip + hlen, (uint16_t)(total - hlen));
		return;
	default:
		goto drop;
	}
drop:
	s->st.rx_drop_ip++;
}

/* ---- the stack object ---- */

void
sm_tcpip_input(struct sm_tcpip *s, const void *frame, size_t len, uint64_t now_ns)
{
	sm_tcpip_input_ref(s, frame, len, now_ns, NULL);
}

void
sm_tcpip_input_ref(struct sm_tcpip *s, const void *frame, size_t len, uint64_t now_ns, void *ref)
{
	const uint8_t *f = frame;
	void *outer_ref = s->rx_ref; /* a callback may feed this stack a frame */

	sm_tcpip_enter(s, now_ns);
	s->rx_ref = ref;
	s->st.rx_frames++;
	if (len < ETH_HDR_LEN || (memcmp(f, s->cfg.mac, 6) != 0 && memcmp(f, bcast_mac, 6) != 0)) {
		s->st.rx_drop_eth++;
		goto out;
	}
	switch (sm_get_be16(f + 12)) {
	case ETH_TYPE_ARP:
		arp_input(s, f + ETH_HDR_LEN, len - ETH_HDR_LEN);
		break;
	case ETH_TYPE_IPV4:
		ipv4_input(s, f + ETH_HDR_LEN, len - ETH_HDR_LEN);
		break;
	default:
		s->st.rx_drop_eth++;
	}
out:
	s->rx_ref = outer_ref;
	sm_tcpip_leave(s);
}

void
sm_tcpip_poll(struct sm_tcpip *s, uint64_t now_ns)
{
	sm_tcpip_enter(s, now_ns);
	arp_timers(s, s->now);
	sm_tcp_timers(s, s->now);
	sm_tcpip_leave(s);
}

uint64_t
sm_tcpip_next_timer(const struct sm_tcpip *s)
{
	/* Called every poll round: a cached bound, not a scan of the ARP cache. */
	return SM_TCPIP_MIN(s->next_timer, s->arp_next);
}

void
sm_tcpip_stats(const struct sm_tcpip *s, struct sm_tcpip_stats *out)
{
	*out = s->st;
}

static bool
pow2(uint32_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

int
sm_tcpip_create(const struct sm_tcpip_config *cfg, struct sm_tcpip **out)
{
	struct sm_tcpip *s;
	int rc;

	if (cfg == NULL || cfg->ops == NULL || cfg->ops->tx == NULL || cfg->ip == 0)
		return -EINVAL;
	if (cfg->mtu != 0 && (cfg->mtu < 576 || cfg->mtu > 9000))
		return -EINVAL;
	if ((cfg->snd_buf != 0 && (!pow2(cfg->snd_buf) || cfg->snd_buf < 4096)) ||
	    (cfg->rcv_buf != 0 && (!pow2(cfg->rcv_buf) || cfg->rcv_buf < 4096)) ||
	    cfg->snd_buf > (1u << 30) || cfg->rcv_buf > (1u << 30))
		return -EINVAL;

	s = sm_calloc(1, sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	s->cfg = *cfg;
	s->ops = *cfg->ops;
	s->cfg.ops = &s->ops;
	s->mtu = cfg->mtu ? cfg->mtu : 1500;
	s->arp_next = UINT64_MAX;
#define DEF(f, v)                                                                                  \
	do {                                                                                       \
		if (s->cfg.f == 0)                                                                 \
			s->cfg.f = (v);                                                            \
	} while (0)
	DEF(max_conns, 4096);
	DEF(syn_backlog, 128);
	DEF(snd_buf, 128 * 1024);
	DEF(rcv_buf, 128 * 1024);
	DEF(rto_min_ns, 1000000000ull);
	DEF(rto_max_ns, 60000000000ull);
	DEF(rto_init_ns, 1000000000ull);
	DEF(delack_ns, 40000000ull);
	DEF(time_wait_ns, 60000000000ull);
	DEF(max_retries, 12);
	DEF(syn_retries, 5);
#undef DEF
	s->txbuf = sm_malloc(ETH_HDR_LEN + s->mtu);
	if (s->txbuf == NULL) {
		rc = -ENOMEM;
		goto err_free_stack;
	}
	rc = sm_tcp_init(s);
	if (rc < 0)
		goto err_free_txbuf;
	*out = s;
	return 0;

err_free_txbuf:
	sm_free(s->txbuf);
err_free_stack:
	sm_free(s);
	return rc;
}

void
sm_tcpip_destroy(struct sm_tcpip *s)
{
	if (s == NULL)
		return;
	sm_tcp_fini(s);
	for (unsigned i = 0; i < ARP_CACHE_SIZE; i++)
		for (unsigned j = 0; j < s->arp[i].npending; j++)
			sm_free(s->arp[i].pending[j].frame);
	sm_free(s->txbuf);
	sm_free(s);
}
