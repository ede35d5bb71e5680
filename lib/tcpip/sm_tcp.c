/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TCP (RFC 9293) for one shard: a connection table keyed by the 4-tuple,
 * passive and active open with MSS and window scaling (RFC 7323), a send
 * ring and a receive ring per connection with out-of-order ranges, the
 * RFC 6298 retransmission timer with Karn's rule, RFC 5681 congestion
 * control with NewReno fast retransmit and recovery (RFC 6582), delayed
 * ACKs, zero-window probing, FIN handling with TIME_WAIT, and the RFC 5961
 * defences against blind RST, SYN and ACK injection.
 *
 * Not implemented: SACK, timestamps/PAWS, SYN cookies (a bounded SYN
 * queue instead), Nagle (every send goes out at once, like TCP_NODELAY),
 * urgent data.
 */

#include <errno.h>
#include <string.h>

#include "sm_mem.h"
#include "sm_tcpip_priv.h"

enum tcp_state {
	TCP_CLOSED,
	TCP_SYN_SENT,
	TCP_SYN_RCVD,
	TCP_ESTABLISHED,
	TCP_FIN_WAIT_1,
	TCP_FIN_WAIT_2,
	TCP_CLOSE_WAIT,
	TCP_CLOSING,
	TCP_LAST_ACK,
	TCP_TIME_WAIT,
};

static const char *const state_names[] = {
	[TCP_CLOSED] = "CLOSED",	 [TCP_SYN_SENT] = "SYN_SENT",
	[TCP_SYN_RCVD] = "SYN_RCVD",	 [TCP_ESTABLISHED] = "ESTABLISHED",
	[TCP_FIN_WAIT_1] = "FIN_WAIT_1", [TCP_FIN_WAIT_2] = "FIN_WAIT_2",
	[TCP_CLOSE_WAIT] = "CLOSE_WAIT", [TCP_CLOSING] = "CLOSING",
	[TCP_LAST_ACK] = "LAST_ACK",	 [TCP_TIME_WAIT] = "TIME_WAIT",
};

#define DEFAULT_MSS 536 /* RFC 9293 3.7.1, when the peer sends no MSS option */
#define MAX_WSCALE 14
#define CHALLENGE_ACK_LIMIT 1000 /* per second per stack, RFC 5961 section 7 */
#define NS_PER_SEC 1000000000ull
#define EPHEMERAL_LO 49152u
#define EPHEMERAL_N 16384u

struct ooo_range {
	uint32_t start, end;
};

struct sm_tcp_conn {
	struct sm_tcp_conn *hnext;	 /* hash chain */
	struct sm_tcp_conn *next, *prev; /* s->all, or s->dead once destroyed */
	struct sm_tcpip *s;
	void *user;
	uint32_t lip, rip;
	uint16_t lport, rport;
	uint32_t hash;
	enum tcp_state state;
	struct tcp_listener *listener; /* while SYN_RCVD from a passive open */
	bool app_closed;	       /* sm_tcp_close(): no more sends */
	bool app_gone;		       /* no more callbacks */
	bool fin_rcvd;
	bool ooo_fin; /* a FIN arrived beyond a hole, at ooo_fin_seq */
	bool want_writable;
	bool persist; /* t_rtx is the persist timer */
	bool in_input;
	bool ack_now;
	bool timing;
	bool have_rtt;
	bool in_recovery;
	bool ws_ok; /* both SYNs carried window scale */
	bool dead;  /* destroyed, waiting for sm_tcp_reap() */
	uint8_t snd_ws, rcv_ws;
	uint16_t mss;

	/* send side: data bytes [sbuf_seq, sbuf_seq + snd_len) are in sbuf */
	uint32_t iss, snd_una, snd_nxt, snd_max;
	uint32_t snd_wnd, max_snd_wnd, snd_wl1, snd_wl2;
	uint32_t sbuf_seq, snd_len, sbuf_size;
	uint8_t *sbuf;

	/* receive side: consumed < delivered <= rcv_nxt, in sequence space */
	uint32_t irs, rcv_nxt, rcv_dlv, rcv_cons, rcv_adv;
	uint32_t rbuf_size;
	uint8_t *rbuf;
	struct ooo_range ooo[TCP_OOO_MAX];
	unsigned nooo;
	uint32_t ooo_fin_seq;

	/* timers: absolute ns, 0 = off */
	uint64_t t_rtx, t_dack, t_tw;
	unsigned backoff, retries;
	unsigned probes; /* zero-window probes since the peer last said anything */
	uint64_t srtt, rttvar, rto;
	uint32_t rtt_seq;
	uint64_t rtt_start;

	/* congestion control, bytes */
	uint32_t cwnd, ssthresh, recover;
	unsigned dupacks, unacked;
};

/* A parsed segment. */
struct seg {
	uint32_t seq, ack;
	uint16_t wnd, mss;
	uint8_t flags, ws;
	bool has_mss, has_ws;
	const uint8_t *data;
	uint32_t dlen;
	bool zc; /* the in-order payload goes to recv_ref() as a view of the frame */
};

static void
tcp_output(struct sm_tcp_conn *c);
static void
tcp_send_ack(struct sm_tcp_conn *c);

/* ---- helpers ---- */

static inline uint64_t
now_of(const struct sm_tcp_conn *c)
{
	return c->s->now;
}

static void
set_timer(struct sm_tcp_conn *c, uint64_t *t, uint64_t when)
{
	if (when == 0)
		when = 1; /* 0 means off */
	*t = when;
	if (when < c->s->next_timer)
		c->s->next_timer = when;
}

static uint64_t
rto_eff(const struct sm_tcp_conn *c)
{
	uint64_t r = c->rto;

	for (unsigned i = 0; i < c->backoff && r < c->s->cfg.rto_max_ns; i++)
		r <<= 1;
	return r < c->s->cfg.rto_max_ns ? r : c->s->cfg.rto_max_ns;
}

static void
arm_rtx(struct sm_tcp_conn *c)
{
	c->persist = false;
	set_timer(c, &c->t_rtx, now_of(c) + rto_eff(c));
}

static uint32_t
conn_hash(const struct sm_tcpip *s, uint32_t rip, uint16_t rport, uint16_t lport)
{
	/* Seeded from the secret so peers cannot aim collisions at one bucket. */
	uint64_t h = ((uint64_t)rip << 32 | (uint32_t)rport << 16 | lport);

	h ^= sm_get_be32(s->cfg.secret) | (uint64_t)sm_get_be32(s->cfg.secret + 4) << 32;
	h *= 0x9e3779b97f4a7c15ull;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return (uint32_t)h;
}

static struct sm_tcp_conn *
conn_lookup(const struct sm_tcpip *s, uint32_t rip, uint16_t rport, uint16_t lport)
{
	uint32_t h = conn_hash(s, rip, rport, lport);

	for (struct sm_tcp_conn *c = s->buckets[h & (s->nbuckets - 1)]; c; c = c->hnext)
		if (c->rip == rip && c->rport == rport && c->lport == lport)
			return c;
	return NULL;
}

static struct tcp_listener *
listener_find(struct sm_tcpip *s, uint16_t port)
{
	for (unsigned i = 0; i < MAX_LISTENERS; i++)
		if (s->listeners[i].port == port)
			return &s->listeners[i];
	return NULL;
}

/* RFC 6528: M + F(4-tuple, secret), M a 4 us clock. */
static uint32_t
isn_gen(const struct sm_tcpip *s, uint32_t rip, uint16_t rport, uint16_t lport)
{
	uint8_t t[12];

	sm_put_be32(t, s->cfg.ip);
	sm_put_be32(t + 4, rip);
	sm_put_be16(t + 8, lport);
	sm_put_be16(t + 10, rport);
	return (uint32_t)(s->now / 4000) + (uint32_t)sm_tcpip_siphash(s->cfg.secret, t, sizeof(t));
}

static uint32_t
rcv_space(const struct sm_tcp_conn *c)
{
	if (c->rbuf == NULL && c->state != TCP_SYN_RCVD && c->state != TCP_SYN_SENT)
		return 0;
	return c->rbuf_size - (c->rcv_nxt - c->rcv_cons);
}

/* The window field to send, with receiver-side silly-window avoidance. */
static uint16_t
rcv_window(struct sm_tcp_conn *c, bool syn)
{
	uint32_t space = rcv_space(c), edge = c->rcv_nxt + space, wnd, field;
	uint32_t thresh = SM_TCPIP_MIN(c->rbuf_size / 2, (uint32_t)c->s->mtu - 40);

	if (syn) {
		field = SM_TCPIP_MIN(space, 65535u);
		c->rcv_adv = c->rcv_nxt + field;
		return (uint16_t)field;
	}
	/* Hold the old right edge until it can move by a useful amount (RFC 1122 4.2.3.3). */
	if (SEQ_GEQ(c->rcv_adv, c->rcv_nxt) && SEQ_LT(edge, c->rcv_adv + thresh))
		wnd = c->rcv_adv - c->rcv_nxt;
	else
		wnd = space;
	field = SM_TCPIP_MIN(wnd >> c->rcv_ws, 65535u);
	if (SEQ_GT(c->rcv_nxt + (field << c->rcv_ws), c->rcv_adv))
		c->rcv_adv = c->rcv_nxt + (field << c->rcv_ws);
	return (uint16_t)field;
}

/* ---- segment transmission ---- */

/*
 * Build and send one segment. Data comes from the send ring (two pieces
 * when it wraps); options only on SYNs.
 */
static void
tcp_xmit(struct sm_tcpip *s, uint32_t rip, uint16_t lport, uint16_t rport, uint32_t seq,
	 uint32_t ack, uint8_t flags, uint16_t wnd, const uint8_t *opt, unsigned optlen,
	 const uint8_t *d1, uint32_t n1, const uint8_t *d2, uint32_t n2)
{
	uint8_t *th = s->txbuf + ETH_HDR_LEN + IP_HDR_LEN;
	uint16_t len = (uint16_t)(TCP_HDR_LEN + optlen + n1 + n2);
	uint64_t sum;
	uint16_t c;

	sm_put_be16(th, lport);
	sm_put_be16(th + 2, rport);
	sm_put_be32(th + 4, seq);
	sm_put_be32(th + 8, ack);
	th[12] = (uint8_t)(((TCP_HDR_LEN + optlen) / 4) << 4);
	th[13] = flags;
	sm_put_be16(th + 14, wnd);
	sm_put_be16(th + 16, 0);
	sm_put_be16(th + 18, 0);
	if (optlen)
		memcpy(th + TCP_HDR_LEN, opt, optlen);
	if (n1)
		memcpy(th + TCP_HDR_LEN + optlen, d1, n1);
	if (n2)
		memcpy(th + TCP_HDR_LEN + optlen + n1, d2, n2);
	sum = sm_tcpip_pseudo_sum(s->cfg.ip, rip, IP_PROTO_TCP, len);
	if (s->cfg.offloads & SM_TCPIP_OFFLOAD_TX_CSUM) {
		/* The NIC adds the segment to the pseudo-header sum we leave here. */
		c = (uint16_t)~sm_inet_csum_fold(sum);
	} else {
		c = sm_inet_csum_fold(sm_inet_csum_partial(th, len, sum));
	}
	memcpy(th + 16, &c, 2);
	s->st.tcp_segs_out++;
	if (flags & TH_RST)
		s->st.tcp_rst_sent++;
	sm_tcpip_ip_output(s, rip, IP_PROTO_TCP, len);
}

static unsigned
syn_options(const struct sm_tcp_conn *c, uint8_t *opt, bool offer_ws)
{
	uint16_t mss = (uint16_t)(c->s->mtu - 40);

	opt[0] = 2;
	opt[1] = 4;
	sm_put_be16(opt + 2, mss);
	if (!offer_ws)
		return 4;
	opt[4] = 1; /* NOP keeps the header 32-bit aligned */
	opt[5] = 3;
	opt[6] = 3;
	opt[7] = c->rcv_ws;
	return 8;
}

/* Send a segment of the connection: @len data bytes from @seq, plus @flags. */
static void
tcp_send_seg(struct sm_tcp_conn *c, uint32_t seq, uint32_t len, uint8_t flags)
{
	const uint8_t *d1 = NULL, *d2 = NULL;
	uint32_t n1 = 0, n2 = 0;
	uint8_t opt[8] = { 0 };
	unsigned optlen = 0;
	bool syn = flags & TH_SYN;

	if (len) {
		uint32_t idx = (seq - c->iss - 1) & (c->sbuf_size - 1);

		d1 = c->sbuf + idx;
		n1 = SM_TCPIP_MIN(len, c->sbuf_size - idx);
		d2 = c->sbuf;
		n2 = len - n1;
	}
	if (syn)
		optlen = syn_options(c, opt, c->ws_ok);
	flags |= TH_ACK;
	tcp_xmit(c->s, c->rip, c->lport, c->rport, seq, c->rcv_nxt, flags, rcv_window(c, syn), opt,
		 optlen, d1, n1, d2, n2);
	/* Every segment carries the ACK, so a pending delayed ACK is sent. */
	c->t_dack = 0;
	c->unacked = 0;
	c->ack_now = false;
}

static void
tcp_send_syn(struct sm_tcp_conn *c)
{
	/* SYN_SENT sends a bare SYN, SYN_RCVD (passive or simultaneous) a SYN-ACK. */
	if (c->state == TCP_SYN_SENT) {
		uint8_t opt[8];
		unsigned optlen = syn_options(c, opt, true);

		tcp_xmit(c->s, c->rip, c->lport, c->rport, c->iss, 0, TH_SYN, rcv_window(c, true),
			 opt, optlen, NULL, 0, NULL, 0);
	} else {
		tcp_send_seg(c, c->iss, 0, TH_SYN | TH_ACK);
	}
}

static void
tcp_send_ack(struct sm_tcp_conn *c)
{
	/* snd_max, not snd_nxt: after an RTO snd_nxt goes back, the peer's window does not. */
	tcp_send_seg(c, c->snd_max, 0, TH_ACK);
}

static void
challenge_ack(struct sm_tcp_conn *c)
{
	struct sm_tcpip *s = c->s;

	if (s->now - s->challenge_window >= NS_PER_SEC) {
		s->challenge_window = s->now;
		s->challenge_count = 0;
	}
	if (s->challenge_count++ >= CHALLENGE_ACK_LIMIT)
		return;
	s->st.tcp_challenge_acks++;
	tcp_send_ack(c);
}

/* RST in answer to a segment that belongs to no connection (RFC 9293 3.10.7.1). */
static void
tcp_reply_rst(struct sm_tcpip *s, uint32_t rip, uint16_t lport, uint16_t rport, const struct seg *g)
{
	uint32_t seglen = g->dlen + !!(g->flags & TH_SYN) + !!(g->flags & TH_FIN);

	if (g->flags & TH_RST)
		return;
	if (g->flags & TH_ACK)
		tcp_xmit(s, rip, lport, rport, g->ack, 0, TH_RST, 0, NULL, 0, NULL, 0, NULL, 0);
	else
		tcp_xmit(s, rip, lport, rport, 0, g->seq + seglen, TH_RST | TH_ACK, 0, NULL, 0,
			 NULL, 0, NULL, 0);
}

/* ---- connection life cycle ---- */

static struct sm_tcp_conn *
conn_new(struct sm_tcpip *s, uint32_t rip, uint16_t rport, uint16_t lport)
{
	struct sm_tcp_conn *c;
	uint32_t b;

	if (s->nconns >= s->cfg.max_conns)
		return NULL;
	c = sm_calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->s = s;
	c->lip = s->cfg.ip;
	c->rip = rip;
	c->rport = rport;
	c->lport = lport;
	c->hash = conn_hash(s, rip, rport, lport);
	c->sbuf_size = s->cfg.snd_buf;
	c->rbuf_size = s->cfg.rcv_buf;
	c->rto = s->cfg.rto_init_ns;
	c->mss = DEFAULT_MSS;
	c->iss = isn_gen(s, rip, rport, lport);
	c->snd_una = c->snd_nxt = c->snd_max = c->iss;
	c->sbuf_seq = c->iss + 1;
	c->recover = c->iss;
	c->ssthresh = UINT32_MAX;
	while (c->rcv_ws < MAX_WSCALE && (c->rbuf_size >> c->rcv_ws) > 65535)
		c->rcv_ws++;

	b = c->hash & (s->nbuckets - 1);
	c->hnext = s->buckets[b];
	s->buckets[b] = c;
	c->next = s->all;
	if (s->all)
		s->all->prev = c;
	s->all = c;
	s->nconns++;
	s->st.tcp_conns = s->nconns;
	return c;
}

static int
conn_alloc_buffers(struct sm_tcp_conn *c)
{
	if (c->sbuf == NULL)
		c->sbuf = sm_malloc(c->sbuf_size);
	if (c->rbuf == NULL)
		c->rbuf = sm_malloc(c->rbuf_size);
	return c->sbuf != NULL && c->rbuf != NULL ? 0 : -ENOMEM;
}

static void
conn_free_buffers(struct sm_tcp_conn *c)
{
	sm_free(c->sbuf);
	sm_free(c->rbuf);
	c->sbuf = c->rbuf = NULL;
}

/* Unlink @c and queue it for freeing when the outermost call returns. */
static void
conn_destroy(struct sm_tcp_conn *c)
{
	struct sm_tcpip *s = c->s;
	struct sm_tcp_conn **pp;

	if (c->dead)
		return;
	for (pp = &s->buckets[c->hash & (s->nbuckets - 1)]; *pp; pp = &(*pp)->hnext) {
		if (*pp == c) {
			*pp = c->hnext;
			break;
		}
	}
	/* Keep c->next: a timer walk standing on @c continues from it. */
	if (c->prev)
		c->prev->next = c->next;
	else
		s->all = c->next;
	if (c->next)
		c->next->prev = c->prev;
	if (c->listener) {
		c->listener->syn_rcvd--;
		c->listener = NULL;
	}
	conn_free_buffers(c);
	c->state = TCP_CLOSED;
	c->dead = true;
	c->app_gone = true;
	c->t_rtx = c->t_dack = c->t_tw = 0;
	c->prev = s->dead; /* the dead list is chained through prev */
	s->dead = c;
	s->nconns--;
	s->st.tcp_conns = s->nconns;
}

void
sm_tcp_reap(struct sm_tcpip *s)
{
	while (s->dead) {
		struct sm_tcp_conn *c = s->dead;

		s->dead = c->prev;
		sm_free(c);
	}
}

static void
notify_closed(struct sm_tcp_conn *c, int err)
{
	if (c->app_gone)
		return;
	c->app_gone = true;
	if (c->s->ops.closed)
		c->s->ops.closed(c->s->cfg.ctx, c, err);
}

/*
 * An active open that has not completed: SYN_SENT, or SYN_RCVD after a
 * simultaneous open (a passive open's SYN_RCVD is unknown to the
 * application until accepted(), so app_gone is set for it).
 */
static bool
active_opening(const struct sm_tcp_conn *c)
{
	return c->state == TCP_SYN_SENT || (c->state == TCP_SYN_RCVD && !c->app_gone);
}

/* The peer reset, or we gave up: tell the application and free. */
static void
conn_fail(struct sm_tcp_conn *c, int err)
{
	if (active_opening(c)) {
		if (!c->app_gone && c->s->ops.connected) {
			c->app_gone = true;
			/* RFC 9293 3.10.7.3: a reset active open was refused. */
			c->s->ops.connected(c->s->cfg.ctx, c,
					    err == -ECONNRESET ? -ECONNREFUSED : err);
		}
	} else {
		notify_closed(c, err);
	}
	conn_destroy(c);
}

static void
enter_time_wait(struct sm_tcp_conn *c)
{
	c->state = TCP_TIME_WAIT;
	c->t_rtx = 0;
	c->persist = false;
	set_timer(c, &c->t_tw, now_of(c) + c->s->cfg.time_wait_ns);
	/* Nothing more to send or deliver: give the memory back now. */
	conn_free_buffers(c);
	notify_closed(c, 0);
}

/* ---- RTT and congestion control ---- */

static void
rtt_sample(struct sm_tcp_conn *c, uint64_t r)
{
	const struct sm_tcpip_config *cfg = &c->s->cfg;
	uint64_t rto;

	/* RFC 6298 2.2 and 2.3, with alpha 1/8 and beta 1/4. */
	if (!c->have_rtt) {
		c->srtt = r;
		c->rttvar = r / 2;
		c->have_rtt = true;
	} else {
		uint64_t d = c->srtt > r ? c->srtt - r : r - c->srtt;

		c->rttvar = (3 * c->rttvar + d) / 4;
		c->srtt = (7 * c->srtt + r) / 8;
	}
	rto = c->srtt + 4 * c->rttvar;
	if (rto < cfg->rto_min_ns)
		rto = cfg->rto_min_ns;
	if (rto > cfg->rto_max_ns)
		rto = cfg->rto_max_ns;
	c->rto = rto;
}

static uint32_t
flight(const struct sm_tcp_conn *c)
{
	return c->snd_max - c->snd_una;
}

/*
 * Resend the first unacknowledged segment: only bytes sent before (up to
 * snd_max), which the peer's window took then; anything past them is new
 * data, which tcp_output() sends within the window and counts in snd_max.
 * Returns the data bytes resent.
 */
static uint32_t
retransmit_una(struct sm_tcp_conn *c)
{
	uint32_t data_end = c->sbuf_seq + c->snd_len;
	uint32_t sent_end = SEQ_LT(c->snd_max, data_end) ? c->snd_max : data_end;
	uint32_t len = SEQ_LT(c->snd_una, sent_end) ? sent_end - c->snd_una : 0;
	uint8_t flags = TH_ACK;

	if (len > c->mss)
		len = c->mss;
	if (c->app_closed && c->snd_una + len == data_end && SEQ_GT(c->snd_max, data_end))
		flags |= TH_FIN;
	c->s->st.tcp_retransmits++;
	c->timing = false; /* Karn: no RTT sample from a retransmitted range */
	tcp_send_seg(c, c->snd_una, len, flags);
	return len;
}

/* ---- output ---- */

static bool
can_send_data(const struct sm_tcp_conn *c)
{
	switch (c->state) {
	case TCP_ESTABLISHED:
	case TCP_CLOSE_WAIT:
	case TCP_FIN_WAIT_1:
	case TCP_CLOSING:
	case TCP_LAST_ACK:
		return true;
	default:
		return false;
	}
}

/* Send what the send and congestion windows allow, then the FIN. */
static void
tcp_output(struct sm_tcp_conn *c)
{
	uint32_t data_end, wnd, fl, avail, usable, len;
	bool fin;

	if (!can_send_data(c))
		return;
	data_end = c->sbuf_seq + c->snd_len;
	wnd = SM_TCPIP_MIN(c->snd_wnd, c->cwnd);
	for (;;) {
		fl = c->snd_nxt - c->snd_una;
		avail = SEQ_LT(c->snd_nxt, data_end) ? data_end - c->snd_nxt : 0;
		usable = wnd > fl ? wnd - fl : 0;
		len = SM_TCPIP_MIN(SM_TCPIP_MIN(avail, usable), c->mss);
		fin = c->app_closed && SEQ_LEQ(c->snd_nxt, data_end) &&
		      c->snd_nxt + len == data_end;
		if (len == 0 && !fin)
			break;
		/* Sender silly-window avoidance: no runt while more data waits for window. */
		if (len < c->mss && len < avail && fl > 0)
			break;
		if (!c->timing && SEQ_GEQ(c->snd_nxt, c->snd_max) && len > 0) {
			c->timing = true;
			c->rtt_seq = c->snd_nxt;
			c->rtt_start = now_of(c);
		}
		tcp_send_seg(c, c->snd_nxt, len,
			     TH_ACK | (fin ? TH_FIN : 0) |
				     (len && c->snd_nxt + len == data_end ? TH_PSH : 0));
		c->snd_nxt += len + fin;
		if (SEQ_GT(c->snd_nxt, c->snd_max))
			c->snd_max = c->snd_nxt;
		if (c->t_rtx == 0 || c->persist)
			arm_rtx(c);
		if (fin)
			break;
	}
	/* Zero window with data waiting and nothing in flight to elicit an ACK: probe. */
	if (c->snd_wnd == 0 && SEQ_LT(c->snd_nxt, data_end) && c->snd_max == c->snd_una &&
	    c->t_rtx == 0) {
		c->persist = true;
		set_timer(c, &c->t_rtx, now_of(c) + rto_eff(c));
	}
}

/* ---- input ---- */

static void
parse_options(const uint8_t *o, unsigned len, struct seg *g)
{
	while (len > 0) {
		unsigned kind = o[0], olen;

		if (kind == 0)
			break;
		if (kind == 1) {
			o++;
			len--;
			continue;
		}
		if (len < 2 || (olen = o[1]) < 2 || olen > len)
			break;
		if (kind == 2 && olen == 4) {
			g->has_mss = true;
			g->mss = sm_get_be16(o + 2);
		} else if (kind == 3 && olen == 3) {
			g->has_ws = true;
			g->ws = o[2] > MAX_WSCALE ? MAX_WSCALE : o[2];
		}
		o += olen;
		len -= olen;
	}
}

static void
apply_syn_options(struct sm_tcp_conn *c, const struct seg *g)
{
	uint16_t mss = g->has_mss ? g->mss : DEFAULT_MSS;

	if (mss > c->s->mtu - 40)
		mss = (uint16_t)(c->s->mtu - 40);
	if (mss < 64)
		mss = 64;
	c->mss = mss;
	/* RFC 7323 2.2: scaling only when both SYNs carry the option. */
	if (g->has_ws) {
		c->snd_ws = g->ws;
		c->ws_ok = true;
	} else {
		c->ws_ok = false;
		c->snd_ws = 0;
		c->rcv_ws = 0;
	}
	/* RFC 5681 3.1 initial window. */
	c->cwnd = mss > 2190 ? 2u * mss : mss > 1095 ? 3u * mss : 4u * mss;
}

static void
establish_rcv(struct sm_tcp_conn *c, uint32_t irs)
{
	c->irs = irs;
	c->rcv_nxt = c->rcv_dlv = c->rcv_cons = irs + 1;
	c->rcv_adv = c->rcv_nxt;
}

static void
listen_input(struct sm_tcpip *s, struct tcp_listener *l, uint32_t rip, uint16_t rport,
	     uint16_t lport, const struct seg *g)
{
	struct sm_tcp_conn *c;

	if (g->flags & TH_RST)
		return;
	if (g->flags & TH_ACK) {
		tcp_reply_rst(s, rip, lport, rport, g);
		return;
	}
	if ((g->flags & (TH_SYN | TH_FIN)) != TH_SYN)
		return;
	if (l->syn_rcvd >= s->cfg.syn_backlog) {
		s->st.tcp_syn_dropped++;
		return;
	}
	c = conn_new(s, rip, rport, lport);
	if (c == NULL) {
		s->st.tcp_syn_dropped++;
		return;
	}
	c->listener = l;
	l->syn_rcvd++;
	c->state = TCP_SYN_RCVD;
	c->app_gone = true; /* the application sees it at accepted() */
	establish_rcv(c, g->seq);
	apply_syn_options(c, g);
	c->snd_wnd = g->wnd; /* never scaled in a SYN */
	c->max_snd_wnd = c->snd_wnd;
	c->snd_wl1 = g->seq;
	c->snd_wl2 = c->iss;
	tcp_send_syn(c);
	c->snd_nxt = c->snd_max = c->iss + 1;
	c->timing = true;
	c->rtt_seq = c->iss;
	c->rtt_start = s->now;
	arm_rtx(c);
}

static void
syn_sent_input(struct sm_tcp_conn *c, const struct seg *g)
{
	bool ack_ok = false;

	if (g->flags & TH_ACK) {
		if (SEQ_LEQ(g->ack, c->iss) || SEQ_GT(g->ack, c->snd_max)) {
			tcp_reply_rst(c->s, c->rip, c->lport, c->rport, g);
			return;
		}
		ack_ok = true;
	}
	if (g->flags & TH_RST) {
		/* RFC 5961 3.2: only a RST that acknowledges our SYN counts. */
		if (ack_ok) {
			c->s->st.tcp_rst_rcvd++;
			conn_fail(c, -ECONNREFUSED);
		}
		return;
	}
	if (!(g->flags & TH_SYN))
		return;
	establish_rcv(c, g->seq);
	apply_syn_options(c, g);
	c->snd_wnd = g->wnd;
	c->max_snd_wnd = c->snd_wnd;
	c->snd_wl1 = g->seq;
	c->snd_wl2 = g->ack;
	if (!ack_ok) {
		/* Simultaneous open (RFC 9293 figure 8). */
		c->state = TCP_SYN_RCVD;
		tcp_send_syn(c);
		return;
	}
	c->snd_una = g->ack;
	if (c->timing && SEQ_GT(g->ack, c->rtt_seq)) {
		rtt_sample(c, now_of(c) - c->rtt_start);
		c->timing = false;
	}
	c->backoff = c->retries = 0;
	c->t_rtx = 0;
	c->state = TCP_ESTABLISHED;
	/* Data on the SYN-ACK is not taken; the peer sends it again. */
	tcp_send_ack(c);
	if (c->s->ops.connected)
		c->s->ops.connected(c->s->cfg.ctx, c, 0);
	if (c->state != TCP_CLOSED)
		tcp_output(c);
}

/* RFC 9293 3.10.7.4 first check, lenient at the right edge for empty segments like Linux. */
static bool
seq_acceptable(const struct sm_tcp_conn *c, uint32_t seq, uint32_t seglen, uint32_t wnd)
{
	if (seglen == 0)
		return SEQ_GEQ(seq, c->rcv_nxt) && SEQ_LEQ(seq, c->rcv_nxt + wnd);
	if (wnd == 0)
		return seq == c->rcv_nxt; /* "special allowance" for ACKs at a zero window */
	return (SEQ_GEQ(seq, c->rcv_nxt) && SEQ_LT(seq, c->rcv_nxt + wnd)) ||
	       (SEQ_GEQ(seq + seglen - 1, c->rcv_nxt) &&
		SEQ_LT(seq + seglen - 1, c->rcv_nxt + wnd));
}

static void
ack_process(struct sm_tcp_conn *c, const struct seg *g, bool *drop)
{
	uint32_t wnd = (uint32_t)g->wnd << c->snd_ws;
	bool dup;

	*drop = false;
	if (SEQ_GT(g->ack, c->snd_max)) {
		/* Acknowledges what we never sent. */
		tcp_send_ack(c);
		*drop = true;
		return;
	}
	if (SEQ_LT(g->ack, c->snd_una - c->max_snd_wnd)) {
		/* RFC 5961 5.2: too old to be genuine. */
		challenge_ack(c);
		*drop = true;
		return;
	}
	dup = g->ack == c->snd_una && g->dlen == 0 && !(g->flags & (TH_SYN | TH_FIN)) &&
	      wnd == c->snd_wnd && c->snd_max != c->snd_una;
	/* A peer that answers, even with a zero window, is alive (RFC 9293 3.8.6.1). */
	c->probes = 0;

	/* RFC 9293 window update rule. */
	if (SEQ_LT(c->snd_wl1, g->seq) || (c->snd_wl1 == g->seq && SEQ_LEQ(c->snd_wl2, g->ack))) {
		c->snd_wnd = wnd;
		c->snd_wl1 = g->seq;
		c->snd_wl2 = g->ack;
		if (wnd > c->max_snd_wnd)
			c->max_snd_wnd = wnd;
		if (wnd > 0 && c->persist) {
			c->persist = false;
			c->t_rtx = 0;
			c->backoff = 0;
		}
	}

	if (SEQ_GT(g->ack, c->snd_una)) {
		uint32_t acked = g->ack - c->snd_una, data_end = c->sbuf_seq + c->snd_len;
		uint32_t upto = SEQ_LT(g->ack, data_end) ? g->ack : data_end;
		uint32_t freed = SEQ_GT(upto, c->sbuf_seq) ? upto - c->sbuf_seq : 0;

		if (c->timing && SEQ_GT(g->ack, c->rtt_seq)) {
			rtt_sample(c, now_of(c) - c->rtt_start);
			c->timing = false;
		}
		if (c->in_recovery) {
			if (SEQ_GEQ(g->ack, c->recover)) {
				/* Full ACK: leave recovery (RFC 6582 3.2 step 3, option 1). */
				uint32_t fl = c->snd_max - g->ack;

				c->in_recovery = false;
				c->cwnd = SM_TCPIP_MIN(c->ssthresh,
						       SM_TCPIP_MAX(fl, c->mss) + c->mss);
			} else {
				/* Partial ACK: the next hole is lost too; retransmit it now. */
				c->snd_una = g->ack;
				c->sbuf_seq += freed;
				c->snd_len -= freed;
				if (SEQ_LT(c->snd_nxt, g->ack))
					c->snd_nxt = g->ack;
				retransmit_una(c);
				c->cwnd = c->cwnd > acked ? c->cwnd - acked : 0;
				if (acked >= c->mss)
					c->cwnd += c->mss;
				if (c->cwnd < c->mss)
					c->cwnd = c->mss;
				freed = 0;
			}
		} else if (c->cwnd < c->ssthresh) {
			c->cwnd += SM_TCPIP_MIN(acked, (uint32_t)c->mss);
		} else {
			c->cwnd += SM_TCPIP_MAX(1u, (uint32_t)c->mss * c->mss / c->cwnd);
		}
		if (c->cwnd > (1u << 30))
			c->cwnd = 1u << 30;
		c->dupacks = 0;
		c->snd_una = g->ack;
		c->sbuf_seq += freed;
		c->snd_len -= freed;
		if (SEQ_LT(c->snd_nxt, g->ack))
			c->snd_nxt = g->ack;
		c->backoff = 0;
		c->retries = 0;
		/* RFC 6298 5.2 and 5.3. */
		if (c->snd_una == c->snd_max)
			c->t_rtx = 0;
		else
			arm_rtx(c);
	} else if (dup) {
		c->dupacks++;
		if (c->in_recovery) {
			c->cwnd += c->mss; /* each dup ACK: a segment left the network */
		} else if (c->dupacks == 3 && SEQ_GT(g->ack, c->recover)) {
			c->ssthresh = SM_TCPIP_MAX(flight(c) / 2, 2u * c->mss);
			c->recover = c->snd_max;
			c->in_recovery = true;
			c->s->st.tcp_fast_retransmits++;
			retransmit_una(c);
			c->cwnd = c->ssthresh + 3u * c->mss;
			arm_rtx(c);
		}
	}
}

/* Copy in-window data into the receive ring at its sequence position. */
static void
rcv_store(struct sm_tcp_conn *c, uint32_t seq, const uint8_t *d, uint32_t n)
{
	uint32_t idx = (seq - c->irs - 1) & (c->rbuf_size - 1);
	uint32_t n1 = SM_TCPIP_MIN(n, c->rbuf_size - idx);

	memcpy(c->rbuf + idx, d, n1);
	if (n > n1)
		memcpy(c->rbuf, d + n1, n - n1);
}

/* Remember [start, end) beyond a hole; false when the range table is full. */
static bool
ooo_add(struct sm_tcp_conn *c, uint32_t start, uint32_t end)
{
	unsigned i, j;

	for (i = 0; i < c->nooo && SEQ_LT(c->ooo[i].end, start); i++)
		;
	/* ranges [i, j) touch or overlap the new one */
	for (j = i; j < c->nooo && SEQ_LEQ(c->ooo[j].start, end); j++) {
		if (SEQ_LT(c->ooo[j].start, start))
			start = c->ooo[j].start;
		if (SEQ_GT(c->ooo[j].end, end))
			end = c->ooo[j].end;
	}
	if (i == j) {
		if (c->nooo == TCP_OOO_MAX)
			return false;
		memmove(&c->ooo[i + 1], &c->ooo[i], (c->nooo - i) * sizeof(c->ooo[0]));
		c->nooo++;
	} else if (j - i > 1) {
		memmove(&c->ooo[i + 1], &c->ooo[j], (c->nooo - j) * sizeof(c->ooo[0]));
		c->nooo -= j - i - 1;
	}
	c->ooo[i].start = start;
	c->ooo[i].end = end;
	return true;
}

/*
 * Deliver [rcv_dlv, rcv_nxt) as views; false when a callback destroyed @c.
 * A zero-copy segment (@g->zc) is the first part of that range: it goes out
 * as a view of the frame, the rest from the ring.
 */
static bool
deliver(struct sm_tcp_conn *c, const struct seg *g)
{
	struct sm_tcpip *s = c->s;
	uint32_t end = c->rcv_nxt - (c->fin_rcvd ? 1 : 0); /* the FIN is no byte */

	if (g->zc) {
		c->rcv_dlv += g->dlen;
		s->st.tcp_rx_zerocopy_bytes += g->dlen;
		s->ops.recv_ref(s->cfg.ctx, c, g->data, g->dlen, s->rx_ref);
		if (c->dead)
			return false;
	}
	while (c->rcv_dlv != end) {
		uint32_t idx = (c->rcv_dlv - c->irs - 1) & (c->rbuf_size - 1);
		uint32_t n = SM_TCPIP_MIN(end - c->rcv_dlv, c->rbuf_size - idx);

		c->rcv_dlv += n;
		if (c->app_gone || c->app_closed) {
			c->rcv_cons = c->rcv_dlv;
			if (c->app_gone)
				continue;
		}
		if (s->ops.recv)
			s->ops.recv(s->cfg.ctx, c, c->rbuf + idx, n);
		if (c->dead)
			return false;
	}
	return true;
}

static void
fin_received(struct sm_tcp_conn *c)
{
	c->rcv_nxt++;
	c->fin_rcvd = true;
	c->ack_now = true;
	switch (c->state) {
	case TCP_ESTABLISHED:
		c->state = TCP_CLOSE_WAIT;
		break;
	case TCP_FIN_WAIT_1:
		/* Our FIN not yet acknowledged: simultaneous close. */
		c->state = TCP_CLOSING;
		break;
	case TCP_FIN_WAIT_2:
		c->t_tw = 0;
		c->state = TCP_TIME_WAIT;
		break;
	default:
		break;
	}
}

/* Our FIN is acknowledged: advance the closing states; false when @c is gone. */
static bool
fin_acked(struct sm_tcp_conn *c)
{
	switch (c->state) {
	case TCP_FIN_WAIT_1:
		c->state = TCP_FIN_WAIT_2;
		/* Do not wait forever for a peer that never closes (Linux tcp_fin_timeout). */
		set_timer(c, &c->t_tw, now_of(c) + c->s->cfg.time_wait_ns);
		return true;
	case TCP_CLOSING:
		enter_time_wait(c);
		return c->state != TCP_CLOSED;
	case TCP_LAST_ACK:
		notify_closed(c, 0);
		conn_destroy(c);
		return false;
	default:
		return true;
	}
}

static void
conn_input(struct sm_tcp_conn *c, struct seg *g)
{
	struct sm_tcpip *s = c->s;
	uint32_t seglen = g->dlen + !!(g->flags & TH_SYN) + !!(g->flags & TH_FIN);
	uint32_t wnd = rcv_space(c), data_end;
	bool drop, had_fin_acked, in_order_data = false, filled = false, fin = false;

	if (c->state == TCP_SYN_SENT) {
		syn_sent_input(c, g);
		return;
	}

	/* RST: RFC 5961 3.2, exact match resets, in window challenges. */
	if (g->flags & TH_RST) {
		if (c->state == TCP_TIME_WAIT)
			return; /* RFC 1337: no TIME_WAIT assassination */
		if (g->seq == c->rcv_nxt) {
			s->st.tcp_rst_rcvd++;
			if (c->state == TCP_SYN_RCVD && c->listener != NULL)
				conn_destroy(c); /* back to listening: nothing to tell */
			else
				conn_fail(c, -ECONNRESET);
		} else if (SEQ_GT(g->seq, c->rcv_nxt) &&
			   SEQ_LT(g->seq, c->rcv_nxt + SM_TCPIP_MAX(wnd, 1u))) {
			challenge_ack(c);
		}
		return;
	}

	/* SYN in a synchronized state: RFC 5961 4.2. */
	if (g->flags & TH_SYN) {
		if (c->state == TCP_SYN_RCVD && g->seq == c->irs && !(g->flags & TH_ACK)) {
			tcp_send_syn(c); /* our SYN-ACK was lost */
			return;
		}
		if (c->state == TCP_TIME_WAIT && !(g->flags & TH_ACK) &&
		    SEQ_GT(g->seq, c->rcv_nxt) && listener_find(s, c->lport) != NULL) {
			/* A new incarnation may take over TIME_WAIT (RFC 1122 4.2.2.13). */
			uint16_t lport = c->lport, rport = c->rport;
			uint32_t rip = c->rip;

			conn_destroy(c);
			listen_input(s, listener_find(s, lport), rip, rport, lport, g);
			return;
		}
		challenge_ack(c);
		return;
	}

	if (!seq_acceptable(c, g->seq, seglen, wnd)) {
		s->st.tcp_dup_segs++;
		if (c->state == TCP_TIME_WAIT && (g->flags & TH_FIN))
			set_timer(c, &c->t_tw, now_of(c) + s->cfg.time_wait_ns);
		tcp_send_ack(c);
		return;
	}

	/* Trim what we already have at the front and what does not fit at the back. */
	if (SEQ_LT(g->seq, c->rcv_nxt)) {
		uint32_t d = c->rcv_nxt - g->seq, cut = SM_TCPIP_MIN(d, g->dlen);

		g->data += cut;
		g->dlen -= cut;
		g->seq += cut;
		if (d > cut) {
			g->flags &= (uint8_t)~TH_FIN; /* the FIN is old too */
			g->seq = c->rcv_nxt;
		}
		s->st.tcp_dup_segs++;
		c->ack_now = true;
	}
	if (g->dlen > 0) {
		uint32_t off = g->seq - c->rcv_nxt;

		if (off + g->dlen > wnd) {
			g->dlen = off < wnd ? wnd - off : 0;
			g->flags &= (uint8_t)~TH_FIN;
			c->ack_now = true;
		}
	}

	if (!(g->flags & TH_ACK))
		return;

	if (c->state == TCP_SYN_RCVD) {
		if (SEQ_LEQ(g->ack, c->snd_una) || SEQ_GT(g->ack, c->snd_max)) {
			tcp_reply_rst(s, c->rip, c->lport, c->rport, g);
			return;
		}
		if (conn_alloc_buffers(c) < 0) {
			tcp_reply_rst(s, c->rip, c->lport, c->rport, g);
			conn_destroy(c);
			return;
		}
		if (c->listener) {
			c->listener->syn_rcvd--;
			c->listener = NULL;
		}
		/* RFC 9293 3.10.4: a CLOSE in SYN-RECEIVED sends its FIN once established. */
		c->state = c->app_closed ? TCP_FIN_WAIT_1 : TCP_ESTABLISHED;
		/* The handshake ACK's window is scaled; take it whatever wl1 says. */
		c->snd_wnd = (uint32_t)g->wnd << c->snd_ws;
		c->max_snd_wnd = c->snd_wnd;
		c->snd_wl1 = g->seq;
		c->snd_wl2 = g->ack;
		if (!c->app_gone) {
			/* A simultaneous open: the application's connect() completed. */
			if (s->ops.connected)
				s->ops.connected(s->cfg.ctx, c, 0);
		} else {
			s->st.tcp_passive_opens++;
			c->app_gone = false;
			if (s->ops.accepted && s->ops.accepted(s->cfg.ctx, c) < 0) {
				sm_tcp_abort(c, s->now);
				return;
			}
		}
		if (c->state == TCP_CLOSED)
			return;
	}

	data_end = c->sbuf_seq + c->snd_len;
	had_fin_acked = c->app_closed && SEQ_GT(c->snd_una, data_end);
	ack_process(c, g, &drop);
	if (drop)
		return;
	if (c->app_closed && !had_fin_acked && SEQ_GT(c->snd_una, data_end) &&
	    SEQ_GT(c->snd_max, data_end)) {
		if (!fin_acked(c))
			return;
	}
	if (c->state == TCP_TIME_WAIT) {
		if (g->flags & TH_FIN) {
			/* The peer did not get our ACK of its FIN. */
			set_timer(c, &c->t_tw, now_of(c) + s->cfg.time_wait_ns);
			tcp_send_ack(c);
		}
		return;
	}

	/* Segment text, in the states that still receive. */
	if (c->state == TCP_ESTABLISHED || c->state == TCP_FIN_WAIT_1 ||
	    c->state == TCP_FIN_WAIT_2) {
		/* FIN_WAIT_2 times out only when the peer falls silent, not while it sends. */
		if (c->state == TCP_FIN_WAIT_2)
			set_timer(c, &c->t_tw, now_of(c) + s->cfg.time_wait_ns);
		if (g->dlen > 0) {
			if (g->seq == c->rcv_nxt) {
				/*
				 * With everything before it delivered, the
				 * segment need not pass through the ring: the
				 * driver keeps the frame and the bytes still
				 * count against the window until consumed.
				 */
				g->zc = s->rx_ref != NULL && s->ops.recv_ref != NULL &&
					c->rcv_dlv == c->rcv_nxt && !c->app_gone && !c->app_closed;
				if (!g->zc)
					rcv_store(c, g->seq, g->data, g->dlen);
				c->rcv_nxt += g->dlen;
				in_order_data = true;
				while (c->nooo > 0 && SEQ_LEQ(c->ooo[0].start, c->rcv_nxt)) {
					if (SEQ_GT(c->ooo[0].end, c->rcv_nxt))
						c->rcv_nxt = c->ooo[0].end;
					memmove(&c->ooo[0], &c->ooo[1],
						(c->nooo - 1) * sizeof(c->ooo[0]));
					c->nooo--;
					filled = true;
				}
			} else {
				/* Beyond a hole: keep it and send a duplicate ACK at once (RFC 5681 4.2). */
				s->st.tcp_ooo_segs++;
				if (ooo_add(c, g->seq, g->seq + g->dlen)) {
					rcv_store(c, g->seq, g->data, g->dlen);
					if (g->flags & TH_FIN) {
						c->ooo_fin = true;
						c->ooo_fin_seq = g->seq + g->dlen;
					}
				}
				g->flags &= (uint8_t)~TH_FIN;
				c->ack_now = true;
			}
		} else if ((g->flags & TH_FIN) && g->seq != c->rcv_nxt) {
			c->ooo_fin = true;
			c->ooo_fin_seq = g->seq;
			g->flags &= (uint8_t)~TH_FIN;
			c->ack_now = true;
		}
		if (g->flags & TH_FIN)
			fin = true;
		else if (c->ooo_fin && c->rcv_nxt == c->ooo_fin_seq && c->nooo == 0)
			fin = true;
		if (filled || (in_order_data && c->nooo > 0))
			c->ack_now = true;
		if (fin) {
			c->ooo_fin = false;
			fin_received(c);
		}
	}

	/* Deliver, then the FIN as a zero-length read. */
	if (!deliver(c, g))
		return;
	if (fin) {
		if (!c->app_gone && s->ops.recv)
			s->ops.recv(s->cfg.ctx, c, NULL, 0);
		if (c->state == TCP_CLOSED)
			return;
		if (c->state == TCP_TIME_WAIT) {
			tcp_send_ack(c);
			enter_time_wait(c);
			return;
		}
	}
	if (c->want_writable && !c->app_closed && c->snd_len < c->sbuf_size) {
		c->want_writable = false;
		if (s->ops.writable)
			s->ops.writable(s->cfg.ctx, c);
		if (c->state == TCP_CLOSED)
			return;
	}

	tcp_output(c);
	if (in_order_data && !c->ack_now) {
		/* RFC 5681 4.2: ACK at least every second segment, else within delack. */
		if (++c->unacked >= 2)
			c->ack_now = true;
		else if (c->t_dack == 0)
			set_timer(c, &c->t_dack, now_of(c) + s->cfg.delack_ns);
	}
	if (c->ack_now)
		tcp_send_ack(c);
}

void
sm_tcp_input(struct sm_tcpip *s, uint32_t src, uint32_t dst, const uint8_t *th, uint16_t len)
{
	struct sm_tcp_conn *c;
	struct tcp_listener *l;
	struct seg g;
	unsigned hlen;
	uint16_t sport, dport;

	if (len < TCP_HDR_LEN) {
		s->st.rx_drop_ip++;
		return;
	}
	hlen = (th[12] >> 4) * 4u;
	if (hlen < TCP_HDR_LEN || hlen > len) {
		s->st.rx_drop_ip++;
		return;
	}
	if (!(s->cfg.offloads & SM_TCPIP_OFFLOAD_RX_CSUM) &&
	    sm_inet_csum_fold(sm_inet_csum_partial(
		    th, len, sm_tcpip_pseudo_sum(src, dst, IP_PROTO_TCP, len))) != 0) {
		s->st.rx_bad_csum++;
		return;
	}
	s->st.tcp_segs_in++;
	memset(&g, 0, sizeof(g));
	sport = sm_get_be16(th);
	dport = sm_get_be16(th + 2);
	g.seq = sm_get_be32(th + 4);
	g.ack = sm_get_be32(th + 8);
	g.flags = th[13] & 0x3f;
	g.wnd = sm_get_be16(th + 14);
	g.data = th + hlen;
	g.dlen = len - hlen;
	if (g.flags & TH_SYN)
		parse_options(th + TCP_HDR_LEN, hlen - TCP_HDR_LEN, &g);

	c = conn_lookup(s, src, sport, dport);
	if (c != NULL) {
		c->in_input = true;
		conn_input(c, &g);
		c->in_input = false;
		return;
	}
	l = listener_find(s, dport);
	if (l != NULL) {
		listen_input(s, l, src, sport, dport, &g);
		return;
	}
	tcp_reply_rst(s, src, dport, sport, &g);
}

/* ---- timers ---- */

static void
rtx_timeout(struct sm_tcp_conn *c)
{
	const struct sm_tcpip_config *cfg = &c->s->cfg;

	c->t_rtx = 0;
	if (c->persist) {
		/*
		 * A peer that stopped answering probes is gone, as one that
		 * stops acknowledging data is: without this, a client that
		 * closed its window and vanished would hold the connection
		 * (and its buffers) forever.
		 */
		if (++c->probes > cfg->max_retries) {
			tcp_send_seg(c, c->snd_max, 0, TH_RST | TH_ACK);
			conn_fail(c, -ETIMEDOUT);
			return;
		}
		/* Zero-window probe: an old byte's sequence number elicits an ACK with the window. */
		c->s->st.tcp_window_probes++;
		tcp_send_seg(c, c->snd_una - 1, 0, TH_ACK);
		if (rto_eff(c) < cfg->rto_max_ns)
			c->backoff++;
		c->persist = true;
		set_timer(c, &c->t_rtx, now_of(c) + rto_eff(c));
		return;
	}
	c->s->st.tcp_timeouts++;
	if (c->state == TCP_SYN_SENT || c->state == TCP_SYN_RCVD) {
		if (++c->retries > cfg->syn_retries) {
			if (c->state == TCP_SYN_RCVD && c->listener != NULL)
				conn_destroy(c);
			else
				conn_fail(c, -ETIMEDOUT);
			return;
		}
		c->timing = false;
		c->backoff++;
		c->s->st.tcp_retransmits++;
		tcp_send_syn(c);
		arm_rtx(c);
		return;
	}
	if (c->snd_una == c->snd_max)
		return;
	if (++c->retries > cfg->max_retries) {
		tcp_send_seg(c, c->snd_max, 0, TH_RST | TH_ACK);
		conn_fail(c, -ETIMEDOUT);
		return;
	}
	/* RFC 5681 3.1 (4): halve once per loss episode, restart from one segment. */
	if (c->backoff == 0)
		c->ssthresh = SM_TCPIP_MAX(flight(c) / 2, 2u * c->mss);
	c->cwnd = c->mss;
	c->in_recovery = false;
	c->recover = c->snd_max; /* RFC 6582 section 4 */
	c->dupacks = 0;
	c->timing = false;
	if (rto_eff(c) < cfg->rto_max_ns)
		c->backoff++;
	/* Go back N: resend from the first unacknowledged byte as cwnd allows. */
	{
		uint32_t data_end = c->sbuf_seq + c->snd_len;

		c->snd_nxt = c->snd_una + retransmit_una(c);
		if (c->app_closed && c->snd_nxt == data_end && SEQ_GT(c->snd_max, data_end))
			c->snd_nxt++; /* the FIN went with it */
	}
	arm_rtx(c);
}

void
sm_tcp_timers(struct sm_tcpip *s, uint64_t now)
{
	struct sm_tcp_conn *c, *next;

	if (now < s->next_timer)
		return;
	s->next_timer = UINT64_MAX;
	for (c = s->all; c != NULL; c = next) {
		if (c->state != TCP_CLOSED && c->t_tw && c->t_tw <= now) {
			c->t_tw = 0;
			if (c->state == TCP_FIN_WAIT_2)
				notify_closed(c, 0);
			conn_destroy(c);
		}
		if (c->state != TCP_CLOSED && c->t_dack && c->t_dack <= now) {
			c->t_dack = 0;
			s->st.tcp_delayed_acks++;
			tcp_send_ack(c);
		}
		if (c->state != TCP_CLOSED && c->t_rtx && c->t_rtx <= now)
			rtx_timeout(c);
		/* Read next only now: callbacks above may have destroyed it (it stays readable). */
		next = c->next;
		if (c->state == TCP_CLOSED)
			continue;
		if (c->t_tw && c->t_tw < s->next_timer)
			s->next_timer = c->t_tw;
		if (c->t_dack && c->t_dack < s->next_timer)
			s->next_timer = c->t_dack;
		if (c->t_rtx && c->t_rtx < s->next_timer)
			s->next_timer = c->t_rtx;
	}
}

/* ---- API ---- */

int
sm_tcp_init(struct sm_tcpip *s)
{
	uint32_t n = 1;

	while (n < s->cfg.max_conns && n < (1u << 24))
		n <<= 1;
	s->buckets = sm_calloc(n, sizeof(*s->buckets));
	if (s->buckets == NULL)
		return -ENOMEM;
	s->nbuckets = n;
	s->next_timer = UINT64_MAX;
	s->next_eport = (uint16_t)(sm_tcpip_siphash(s->cfg.secret, "eport", 5) % EPHEMERAL_N);
	return 0;
}

void
sm_tcp_fini(struct sm_tcpip *s)
{
	while (s->all) {
		struct sm_tcp_conn *c = s->all;

		s->all = c->next;
		conn_free_buffers(c);
		sm_free(c);
	}
	sm_tcp_reap(s);
	sm_free(s->buckets);
}

int
sm_tcp_listen(struct sm_tcpip *s, uint16_t port)
{
	struct tcp_listener *l;

	if (port == 0)
		return -EINVAL;
	if (listener_find(s, port) != NULL)
		return -EADDRINUSE;
	l = listener_find(s, 0);
	if (l == NULL)
		return -ENOSPC;
	l->port = port;
	l->syn_rcvd = 0;
	return 0;
}

int
sm_tcp_unlisten(struct sm_tcpip *s, uint16_t port)
{
	struct tcp_listener *l = port ? listener_find(s, port) : NULL;

	if (l == NULL)
		return -ENOENT;
	/* Half-open connections of this listener lose their queue slot, not their life. */
	for (struct sm_tcp_conn *c = s->all; c; c = c->next)
		if (c->listener == l)
			c->listener = NULL;
	l->port = 0;
	return 0;
}

int
sm_tcp_connect(struct sm_tcpip *s, uint32_t ip, uint16_t port, uint16_t sport, void *user,
	       uint64_t now_ns, struct sm_tcp_conn **out)
{
	struct sm_tcp_conn *c;
	int rc = 0;

	if (ip == 0 || port == 0)
		return -EINVAL;
	if (((ip ^ s->cfg.ip) & s->cfg.netmask) != 0 && s->cfg.gateway == 0)
		return -ENETUNREACH;
	sm_tcpip_enter(s, now_ns);
	if (sport == 0) {
		for (unsigned i = 0; i < EPHEMERAL_N; i++) {
			uint16_t p = (uint16_t)(EPHEMERAL_LO + (s->next_eport + i) % EPHEMERAL_N);

			if (conn_lookup(s, ip, port, p) == NULL && listener_find(s, p) == NULL) {
				sport = p;
				s->next_eport = (uint16_t)((s->next_eport + i + 1) % EPHEMERAL_N);
				break;
			}
		}
		if (sport == 0) {
			rc = -EADDRNOTAVAIL;
			goto out;
		}
	} else if (conn_lookup(s, ip, port, sport) != NULL) {
		rc = -EADDRINUSE;
		goto out;
	}
	if (s->nconns >= s->cfg.max_conns) {
		rc = -ENFILE;
		goto out;
	}
	c = conn_new(s, ip, port, sport);
	if (c == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	if (conn_alloc_buffers(c) < 0) {
		conn_destroy(c);
		rc = -ENOMEM;
		goto out;
	}
	c->user = user;
	c->state = TCP_SYN_SENT;
	s->st.tcp_active_opens++;
	tcp_send_syn(c);
	c->snd_nxt = c->snd_max = c->iss + 1;
	c->timing = true;
	c->rtt_seq = c->iss;
	c->rtt_start = s->now;
	arm_rtx(c);
	*out = c;
out:
	sm_tcpip_leave(s);
	return rc;
}

long
sm_tcp_send(struct sm_tcp_conn *c, const void *data, size_t len, uint64_t now_ns)
{
	struct sm_tcpip *s = c->s;
	uint32_t space, n, idx, n1;

	if (c->app_closed)
		return -EPIPE;
	if (c->state != TCP_ESTABLISHED && c->state != TCP_CLOSE_WAIT)
		return -ENOTCONN;
	space = c->sbuf_size - c->snd_len;
	n = (uint32_t)SM_TCPIP_MIN((size_t)space, len);
	if (n < len)
		c->want_writable = true;
	if (n == 0)
		return 0;
	sm_tcpip_enter(s, now_ns);
	idx = (c->sbuf_seq + c->snd_len - c->iss - 1) & (c->sbuf_size - 1);
	n1 = SM_TCPIP_MIN(n, c->sbuf_size - idx);
	memcpy(c->sbuf + idx, data, n1);
	if (n > n1)
		memcpy(c->sbuf, (const uint8_t *)data + n1, n - n1);
	c->snd_len += n;
	if (!c->in_input)
		tcp_output(c); /* inside input, the segment's own output step sends it */
	sm_tcpip_leave(s);
	return n;
}

void
sm_tcp_consume(struct sm_tcp_conn *c, size_t len, uint64_t now_ns)
{
	struct sm_tcpip *s = c->s;
	uint32_t avail, adv_left, new_wnd, thresh;

	if (c->state == TCP_CLOSED || c->rbuf == NULL)
		return;
	avail = c->rcv_dlv - c->rcv_cons;
	if (len > avail)
		len = avail;
	c->rcv_cons += (uint32_t)len;
	if (c->state != TCP_ESTABLISHED && c->state != TCP_FIN_WAIT_1 && c->state != TCP_FIN_WAIT_2)
		return;
	/*
	 * Announce the opened window only when the peer is running short of
	 * it, by at least min(buffer / 2, MSS) (receiver SWS avoidance).
	 */
	adv_left = SEQ_GT(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv - c->rcv_nxt : 0;
	new_wnd = rcv_space(c);
	thresh = SM_TCPIP_MIN(c->rbuf_size / 2, (uint32_t)s->mtu - 40);
	if (new_wnd - adv_left < thresh || new_wnd < 2 * adv_left)
		return;
	if (c->in_input) {
		c->ack_now = true;
		return;
	}
	sm_tcpip_enter(s, now_ns);
	tcp_send_ack(c);
	sm_tcpip_leave(s);
}

int
sm_tcp_close(struct sm_tcp_conn *c, uint64_t now_ns)
{
	struct sm_tcpip *s = c->s;

	if (c->state == TCP_CLOSED || c->app_closed)
		return -ENOTCONN;
	sm_tcpip_enter(s, now_ns);
	c->app_closed = true;
	c->want_writable = false;
	c->rcv_cons = c->rcv_dlv;
	switch (c->state) {
	case TCP_SYN_SENT:
		c->app_gone = true;
		conn_destroy(c);
		break;
	case TCP_ESTABLISHED:
		c->state = TCP_FIN_WAIT_1;
		break;
	case TCP_CLOSE_WAIT:
		c->state = TCP_LAST_ACK;
		break;
	default:
		break;
	}
	if (!c->in_input)
		tcp_output(c);
	sm_tcpip_leave(s);
	return 0;
}

void
sm_tcp_abort(struct sm_tcp_conn *c, uint64_t now_ns)
{
	struct sm_tcpip *s = c->s;

	if (c->state == TCP_CLOSED)
		return;
	sm_tcpip_enter(s, now_ns);
	c->app_gone = true;
	if (c->state != TCP_SYN_SENT && c->state != TCP_TIME_WAIT)
		tcp_xmit(s, c->rip, c->lport, c->rport, c->snd_max, c->rcv_nxt, TH_RST | TH_ACK, 0,
			 NULL, 0, NULL, 0, NULL, 0);
	conn_destroy(c);
	sm_tcpip_leave(s);
}

void
sm_tcp_set_user(struct sm_tcp_conn *c, void *user)
{
	c->user = user;
}

void *
sm_tcp_user(const struct sm_tcp_conn *c)
{
	return c->user;
}

size_t
sm_tcp_send_space(const struct sm_tcp_conn *c)
{
	if (c->app_closed || (c->state != TCP_ESTABLISHED && c->state != TCP_CLOSE_WAIT))
		return 0;
	return c->sbuf_size - c->snd_len;
}

size_t
sm_tcp_unconsumed(const struct sm_tcp_conn *c)
{
	return c->rcv_dlv - c->rcv_cons;
}

void
sm_tcp_tuple(const struct sm_tcp_conn *c, uint32_t *lip, uint16_t *lport, uint32_t *rip,
	     uint16_t *rport)
{
	if (lip)
		*lip = c->lip;
	if (lport)
		*lport = c->lport;
	if (rip)
		*rip = c->rip;
	if (rport)
		*rport = c->rport;
}

const char *
sm_tcp_state_name(const struct sm_tcp_conn *c)
{
	return state_names[c->state];
}
