/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_TCPIP_PRIV_H
#define SM_TCPIP_PRIV_H

/* lib/tcpip internals shared by its files; not installed, not for other libraries. */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "sm_byteorder.h"
#include "sm_tcpip.h"

#define ETH_HDR_LEN 14
#define ETH_TYPE_IPV4 0x0800
#define ETH_TYPE_ARP 0x0806
#define IP_HDR_LEN 20
#define IP_PROTO_ICMP 1
#define IP_PROTO_TCP 6
#define TCP_HDR_LEN 20
#define TCP_OPT_SPACE 40

#define TH_FIN 0x01
#define TH_SYN 0x02
#define TH_RST 0x04
#define TH_PSH 0x08
#define TH_ACK 0x10

#define ARP_CACHE_SIZE 32
#define ARP_PENDING_MAX 4 /* frames queued per unresolved neighbour */
#define ARP_RETRY_NS 1000000000ull
#define ARP_MAX_TRIES 3
#define ARP_TTL_NS (300ull * 1000000000ull)
#define MAX_LISTENERS 16
#define TCP_OOO_MAX 8 /* out-of-order ranges held per connection */

#define SM_TCPIP_MIN(a, b) ((a) < (b) ? (a) : (b))
#define SM_TCPIP_MAX(a, b) ((a) > (b) ? (a) : (b))

/* Sequence-number comparisons modulo 2^32 (RFC 9293 3.4). */
#define SEQ_LT(a, b) ((int32_t)((uint32_t)(a) - (uint32_t)(b)) < 0)
#define SEQ_LEQ(a, b) ((int32_t)((uint32_t)(a) - (uint32_t)(b)) <= 0)
#define SEQ_GT(a, b) SEQ_LT(b, a)
#define SEQ_GEQ(a, b) SEQ_LEQ(b, a)

struct arp_entry {
	uint32_t ip; /* 0: free */
	uint8_t mac[6];
	bool resolved, permanent;
	uint8_t tries;
	uint64_t expires; /* resolved: when to re-resolve; else: next request */
	uint64_t used;	  /* for eviction */
	unsigned npending;
	struct {
		uint8_t *frame;
		uint16_t len;
	} pending[ARP_PENDING_MAX];
};

struct tcp_listener {
	uint16_t port; /* 0: free */
	unsigned syn_rcvd;
};

struct sm_tcpip {
	struct sm_tcpip_config cfg;
	struct sm_tcpip_ops ops;
	struct sm_tcpip_stats st;
	uint16_t mtu;
	uint16_t ip_id;
	uint8_t *txbuf; /* one frame: ETH + mtu */
	void *rx_ref;	/* the frame being input is the caller's to keep (zero-copy) */

	struct arp_entry arp[ARP_CACHE_SIZE];
	uint64_t arp_next; /* no ARP deadline before this (UINT64_MAX: none) */

	/* TCP */
	struct tcp_listener listeners[MAX_LISTENERS];
	struct sm_tcp_conn **buckets; /* chained by 4-tuple */
	uint32_t nbuckets;	      /* power of two */
	struct sm_tcp_conn *all;      /* every live connection, for timers */
	struct sm_tcp_conn *dead;     /* freed when the outermost call returns */
	unsigned nconns;
	unsigned depth; /* API nesting, so callbacks never see freed memory */
	uint16_t next_eport;
	uint64_t next_timer; /* cached earliest deadline, UINT64_MAX none */
	uint64_t challenge_window;
	unsigned challenge_count; /* RFC 5961 section 7 rate limit */
	uint64_t now;
};

/* Checksum of the IPv4 pseudo-header (addresses in host order). */
uint64_t
sm_tcpip_pseudo_sum(uint32_t src, uint32_t dst, uint8_t proto, uint16_t len);

/*
 * Send an IPv4 datagram whose L4 part is already at s->txbuf + ETH_HDR_LEN +
 * IP_HDR_LEN (@l4len bytes): fill the IP and Ethernet headers and transmit,
 * or queue a copy while ARP resolves the next hop.
 */
void
sm_tcpip_ip_output(struct sm_tcpip *s, uint32_t dst, uint8_t proto, uint16_t l4len);

/* TCP entry points for sm_tcpip.c. */
int
sm_tcp_init(struct sm_tcpip *s);
void
sm_tcp_fini(struct sm_tcpip *s);
void
sm_tcp_input(struct sm_tcpip *s, uint32_t src, uint32_t dst, const uint8_t *seg, uint16_t len);
void
sm_tcp_timers(struct sm_tcpip *s, uint64_t now);
void
sm_tcp_reap(struct sm_tcpip *s);

/* Every public entry point brackets its work so frees wait for the outermost return. */
static inline void
sm_tcpip_enter(struct sm_tcpip *s, uint64_t now)
{
	s->depth++;
	if (now > s->now)
		s->now = now;
}

static inline void
sm_tcpip_leave(struct sm_tcpip *s)
{
	if (--s->depth == 0 && s->dead)
		sm_tcp_reap(s);
}

/* SipHash-2-4 of @len bytes under the stack secret (ISNs, ports, table hash). */
uint64_t
sm_tcpip_siphash(const uint8_t key[16], const void *data, size_t len);

#endif /* SM_TCPIP_PRIV_H */
