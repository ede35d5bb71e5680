/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TCPIP_TEST_H
#define TCPIP_TEST_H

/*
 * Helpers for the lib/tcpip tests: a capturing tx callback, a frame
 * builder and parser for the test's side of the wire. They use their own
 * naive RFC 1071 checksum, so the library is never checked against itself.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sm_tcpip.h"

#define T_MAX_FRAMES 256
#define T_FRAME_MAX 9100

static const uint8_t t_mac_us[6] = { 0x02, 0, 0, 0, 0, 0x01 };
static const uint8_t t_mac_peer[6] = { 0x02, 0, 0, 0, 0, 0x02 };
#define T_IP_US 0x0a000001u   /* 10.0.0.1 */
#define T_IP_PEER 0x0a000002u /* 10.0.0.2 */
#define T_MASK 0xffffff00u
#define T_MS 1000000ull
#define T_SEC 1000000000ull

struct t_frame {
	uint8_t b[T_FRAME_MAX];
	size_t len;
};

struct t_cap {
	struct t_frame f[T_MAX_FRAMES];
	unsigned n, head;
};

static inline uint16_t
t_rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t
t_rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void
t_wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void
t_wr32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* RFC 1071 section 4.1, word by word in network order. */
static inline uint32_t
t_sum(const uint8_t *p, size_t len, uint32_t sum)
{
	while (len > 1) {
		sum += (uint32_t)(p[0] << 8 | p[1]);
		p += 2;
		len -= 2;
	}
	if (len)
		sum += (uint32_t)(p[0] << 8);
	return sum;
}

static inline uint16_t
t_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static inline uint32_t
t_pseudo(uint32_t src, uint32_t dst, uint8_t proto, uint16_t len)
{
	uint8_t ph[12];

	t_wr32(ph, src);
	t_wr32(ph + 4, dst);
	ph[8] = 0;
	ph[9] = proto;
	t_wr16(ph + 10, len);
	return t_sum(ph, 12, 0);
}

static inline int
t_tx(void *ctx, const void *frame, size_t len)
{
	struct t_cap *cap = ctx;
	struct t_frame *f;

	if (cap->n - cap->head >= T_MAX_FRAMES || len > T_FRAME_MAX)
		abort();
	f = &cap->f[cap->n++ % T_MAX_FRAMES];
	memcpy(f->b, frame, len);
	f->len = len;
	return 0;
}

static inline unsigned
t_pending(const struct t_cap *cap)
{
	return cap->n - cap->head;
}

static inline struct t_frame *
t_pop(struct t_cap *cap)
{
	if (cap->head == cap->n)
		return NULL;
	return &cap->f[cap->head++ % T_MAX_FRAMES];
}

/* Ethernet + IPv4 header around an L4 payload already at f + 34; returns the frame length. */
static inline size_t
t_ip_frame(uint8_t *f, const uint8_t *dmac, const uint8_t *smac, uint32_t sip, uint32_t dip,
	   uint8_t proto, uint16_t l4len)
{
	uint8_t *ip = f + 14;
	size_t len;

	memcpy(f, dmac, 6);
	memcpy(f + 6, smac, 6);
	t_wr16(f + 12, 0x0800);
	ip[0] = 0x45;
	ip[1] = 0;
	t_wr16(ip + 2, (uint16_t)(20 + l4len));
	t_wr16(ip + 4, 0x1234);
	t_wr16(ip + 6, 0x4000);
	ip[8] = 64;
	ip[9] = proto;
	t_wr16(ip + 10, 0);
	t_wr32(ip + 12, sip);
	t_wr32(ip + 16, dip);
	t_wr16(ip + 10, t_fold(t_sum(ip, 20, 0)));
	len = 34 + l4len;
	if (len < 60) {
		memset(f + len, 0, 60 - len);
		len = 60;
	}
	return len;
}

struct t_seg {
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t wnd;
	const uint8_t *opt;
	unsigned optlen;
	const void *data;
	size_t dlen;
};

#define F_FIN 0x01
#define F_SYN 0x02
#define F_RST 0x04
#define F_PSH 0x08
#define F_ACK 0x10

/* A TCP frame from the peer to the stack. */
static inline size_t
t_tcp_frame(uint8_t *f, const struct t_seg *s)
{
	uint8_t *th = f + 34;
	uint16_t len = (uint16_t)(20 + s->optlen + s->dlen);

	t_wr16(th, s->sport);
	t_wr16(th + 2, s->dport);
	t_wr32(th + 4, s->seq);
	t_wr32(th + 8, s->ack);
	th[12] = (uint8_t)(((20 + s->optlen) / 4) << 4);
	th[13] = s->flags;
	t_wr16(th + 14, s->wnd);
	t_wr16(th + 16, 0);
	t_wr16(th + 18, 0);
	if (s->optlen)
		memcpy(th + 20, s->opt, s->optlen);
	if (s->dlen)
		memcpy(th + 20 + s->optlen, s->data, s->dlen);
	t_wr16(th + 16, t_fold(t_sum(th, len, t_pseudo(T_IP_PEER, T_IP_US, 6, len))));
	return t_ip_frame(f, t_mac_us, t_mac_peer, T_IP_PEER, T_IP_US, 6, len);
}

/* A TCP segment the stack sent, parsed after checking both checksums. */
struct t_out {
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t wnd;
	int mss, ws; /* -1 when absent */
	const uint8_t *data;
	size_t dlen;
	bool ok;
};

static inline struct t_out
t_parse(const struct t_frame *fr)
{
	struct t_out o = { .mss = -1, .ws = -1 };
	const uint8_t *ip = fr->b + 14, *th;
	unsigned hl, tl;
	uint16_t total;

	if (fr->len < 54 || t_rd16(fr->b + 12) != 0x0800 || ip[9] != 6)
		return o;
	if (t_fold(t_sum(ip, 20, 0)) != 0)
		return o;
	total = t_rd16(ip + 2);
	th = ip + 20;
	tl = total - 20u;
	if (t_fold(t_sum(th, tl, t_pseudo(t_rd32(ip + 12), t_rd32(ip + 16), 6, (uint16_t)tl))) != 0)
		return o;
	hl = (th[12] >> 4) * 4u;
	o.sport = t_rd16(th);
	o.dport = t_rd16(th + 2);
	o.seq = t_rd32(th + 4);
	o.ack = t_rd32(th + 8);
	o.flags = th[13];
	o.wnd = t_rd16(th + 14);
	for (unsigned i = 20; i < hl;) {
		if (th[i] == 0)
			break;
		if (th[i] == 1) {
			i++;
			continue;
		}
		if (th[i] == 2)
			o.mss = t_rd16(th + i + 2);
		if (th[i] == 3)
			o.ws = th[i + 2];
		i += th[i + 1];
	}
	o.data = th + hl;
	o.dlen = tl - hl;
	o.ok = true;
	return o;
}

/* Recompute the IPv4 header and TCP/ICMP checksums of a frame that still parses. */
static inline void
t_fix_checksums(uint8_t *f, size_t len)
{
	uint8_t *ip = f + 14;
	unsigned ihl, total;

	if (len < 34 || t_rd16(f + 12) != 0x0800)
		return;
	ihl = (ip[0] & 0xf) * 4u;
	total = t_rd16(ip + 2);
	if (ihl < 20 || total < ihl || 14 + total > len)
		return;
	t_wr16(ip + 10, 0);
	t_wr16(ip + 10, t_fold(t_sum(ip, ihl, 0)));
	if (ip[9] == 6 && total - ihl >= 20) {
		uint8_t *th = ip + ihl;
		uint16_t tl = (uint16_t)(total - ihl);

		t_wr16(th + 16, 0);
		t_wr16(th + 16,
		       t_fold(t_sum(th, tl, t_pseudo(t_rd32(ip + 12), t_rd32(ip + 16), 6, tl))));
	} else if (ip[9] == 1 && total - ihl >= 8) {
		t_wr16(ip + ihl + 2, 0);
		t_wr16(ip + ihl + 2, t_fold(t_sum(ip + ihl, total - ihl, 0)));
	}
}

/*
 * A frame the stack sent is well formed: from our MAC, ARP long enough, or
 * IPv4 from our address with a correct header and TCP or ICMP checksum
 * (unless transmit checksums are offloaded) and lengths that fit the frame.
 */
static inline bool
t_frame_ok(const uint8_t *f, size_t len, unsigned offloads)
{
	const uint8_t *ip = f + 14, *th;
	uint16_t total, tl, hl;
	bool csum = !(offloads & SM_TCPIP_OFFLOAD_TX_CSUM);

	if (len < 14 || len > 14 + 1500 || memcmp(f + 6, t_mac_us, 6) != 0)
		return false;
	if (t_rd16(f + 12) == 0x0806)
		return len >= 42;
	if (t_rd16(f + 12) != 0x0800 || len < 34 || ip[0] != 0x45)
		return false;
	total = t_rd16(ip + 2);
	if (total < 20 || 14u + total > len || t_rd32(ip + 12) != T_IP_US)
		return false;
	if (csum && t_fold(t_sum(ip, 20, 0)) != 0)
		return false;
	if (ip[9] == 1)
		return t_fold(t_sum(ip + 20, total - 20u, 0)) == 0;
	if (ip[9] != 6)
		return false;
	th = ip + 20;
	tl = (uint16_t)(total - 20);
	if (tl < 20)
		return false;
	hl = (uint16_t)((th[12] >> 4) * 4);
	if (hl < 20 || hl > tl)
		return false;
	return !csum || t_fold(t_sum(th, tl, t_pseudo(T_IP_US, t_rd32(ip + 16), 6, tl))) == 0;
}

#endif /* TCPIP_TEST_H */
