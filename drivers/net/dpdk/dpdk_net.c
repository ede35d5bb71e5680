/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DPDK network driver: poll-mode drivers under one lib/tcpip stack per shard.
 *
 * EAL and the port are set up once in probe(), before the shards exist:
 * one RX/TX queue pair per shard (fewer when the device has fewer queues:
 * the shards past the queue count receive what is steered to them and
 * transmit through shard (id % queues)), one mbuf pool per shard. Each
 * shard then creates its own stack (same MAC and IPv4 address on every
 * shard) and a poller that moves received frames into it, runs its timers
 * and flushes the frames it produced in one tx burst per round.
 *
 * Steering: a TCP segment belongs to the shard given by the flow's owner
 * function: the listener's placement for segments to a listening port
 * (client source port % shards for the shard-aware port, a fixed shard, or
 * the flow hash), otherwise the flow hash. The flow hash is Toeplitz over
 * (source IP, destination IP, source port, destination port) with the
 * well-known 40-byte key, and owner = (hash % RETA_SIZE) % shards; when
 * the NIC has RSS with a programmable key and a RETA, it is programmed with
 * the same key and a round-robin table so the NIC's choice is ours and the
 * mbuf's hash is used as is. Whatever lands on the wrong queue (no RSS, as
 * on net_tap, whose queue the kernel picks; a placement rule the NIC cannot
 * know) goes to the owner over the cross-shard rings as the mbuf itself.
 * Outgoing connections pick a source port whose replies hash to the
 * connecting shard. ARP goes to every shard (each stack keeps its own
 * cache); ICMP and everything else stays where it arrived.
 *
 * Buffers: receive is zero-copy. Every pool reserves an sm_bufseg in each
 * mbuf's private area, so an mbuf is a reference-counted segment that
 * protocols hold like an io_uring buffer; a frame goes into the stack with
 * sm_tcpip_input_ref() and in-order payload reaches the protocol as a view
 * into the mbuf, which returns to its pool when the last view is dropped.
 * The stack copies only what it must reorder (data behind a hole), and the
 * driver copies that into pooled 16 KiB buffers. Past ZC_HELD_MAX mbufs
 * held by protocols on a shard, frames go the copying way, so a protocol
 * that keeps many small views cannot starve the RX queue of mbufs. Bytes
 * are consumed at once either way: the window is the stack's buffer, as
 * the kernel's is for io_uring. Sends are copied into the stack's send
 * ring (it must keep them for retransmission).
 *
 * Threads: shards are our threads, not EAL lcores. EAL gets "--lcores
 * 0@(every CPU we may use)" so it starts no worker threads and leaves the
 * main thread's affinity alone (the runtime pins it as shard 0), and every
 * other shard registers itself with rte_thread_register(): it gets an lcore
 * id, hence mempool caches, without EAL owning the thread. The reactor never
 * blocks for long: there are no RX interrupts, so its wait is capped.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_version.h>

#include "dpdk_priv.h"
#include "dpdk_rss.h"
#include "sm_core.h"
#include "sm_net.h"
#include "sm_net_driver.h"
#include "sm_net_dpdk.h"
#include "sm_tcpip.h"

#define BURST 32
#define TX_BATCH 256
#define RX_DESC 1024
#define TX_DESC 1024
#define POOL_MBUFS 8191
#define ZC_HELD_MAX (POOL_MBUFS / 4) /* mbufs protocols may hold per shard */
#define POOL_CACHE 256
#define MAX_LISTENERS 16
#define WAIT_CAP_NS 200000 /* longest sleep: no RX interrupts */
#define MAX_EAL_ARGS 96
#define DELAY_SLOTS 512
#define FRAME_MAX 9216

struct sm_listener {
	uint16_t port;
	bool open;
	struct sm_listen_opts opts;
};

/* Process-wide state: written before the shards start, then read-only
 * (but for the listener table, which shard 0 writes). */
static struct {
	char *args;
	char *default_ip;
	unsigned shards;
	bool configured;
	bool eal_up;
	bool port_up;
	struct dpdk_opts o;
	uint16_t port;
	unsigned nq;
	bool hw_hash; /* the NIC's RSS hash is ours (same key, TCP 4-tuple) */
	uint8_t mac[6];
	uint16_t mtu;
	unsigned tx_offloads;
	struct rte_mempool *pools[SM_MAX_SHARDS];
	bool faults; /* any fault injection configured */
} g;

static struct sm_listener listeners[MAX_LISTENERS];
static unsigned nlisteners;
/* Listener index + 1 per TCP port, for steering; never cleared, so that
 * connections keep their shard after the listener closes. */
static uint8_t port_listener[65536];

/* What the private area of each of our mbufs holds: the mbuf as a segment. */
struct mbuf_seg {
	struct sm_bufseg seg;
	bool counted; /* in ds->zc_held */
};

#define MBUF_PRIV_SIZE RTE_ALIGN(sizeof(struct mbuf_seg), RTE_MBUF_PRIV_ALIGN)

struct dconn {
	struct sm_conn c; /* first: the protocol's view */
	struct dconn *prev, *next;
	struct sm_tcp_conn *tc;
	struct sm_listener *l;
	/* views that sm_tcp_send() has not taken yet */
	struct sm_iovq sq;
	/* bytes received while paused (copied, not consumed: the window shrinks) */
	struct sm_iovq held;
	struct dconn *resume_next;
	bool on_resume_list;
	bool eof_held;	 /* the peer's FIN came after held bytes */
	unsigned busy;	 /* our callbacks on the stack running */
	bool attached;	 /* closed() is owed to the protocol */
	bool connecting; /* connected() is owed */
	bool fin_sent;	 /* sm_tcp_close() called */
	bool gone;	 /* the stack forgot tc: free once not busy */
	int err;
};

/* Fault injection state of one path on one shard. */
struct fault_path {
	const struct dpdk_fault *cfg;
	struct rte_mbuf *held; /* reorder: goes out after the next frame */
	struct rte_mbuf *delayed[DELAY_SLOTS];
	uint64_t due[DELAY_SLOTS];
	unsigned dhead, dlen;
};

struct dpdk_shard {
	unsigned id;
	int queue; /* -1: none, transmit through tx_shard */
	unsigned tx_shard;
	struct rte_mempool *pool;
	struct sm_tcpip *stack;
	struct sm_pool conn_pool;
	struct dconn *conns;
	struct dconn *resumed; /* resumed connections with held bytes */
	unsigned nconns;
	struct rte_mbuf *txq[TX_BATCH];
	unsigned ntx;
	uint64_t now; /* time of the current poll round */
	uint64_t rng;
	struct sm_rand dice; /* fault injection's */
	struct fault_path frx, ftx;
	struct sm_stop_hook stop_hook;
	uint16_t port_cursor;
	uint64_t tx_dropped, fwd_dropped, steered;
	/* this shard's queue as the driver saw it (testpmd's per-queue view) */
	uint64_t q_rx_pkts, q_rx_bytes, q_tx_pkts, q_tx_bytes;
	uint64_t rx_polls, rx_polls_empty;
	uint64_t rx_burst_hist[6]; /* bursts of 1, 2-3, 4-7, 8-15, 16-31, 32 (BURST) */
	uint64_t published_at; /* when counters_publish() last ran */
	unsigned zc_held;      /* mbufs protocols hold views of */
	uint8_t scratch[FRAME_MAX];
};

static __thread struct dpdk_shard *ds;

static const struct sm_net_driver dpdk_driver;

static inline uint64_t
now_ns(void)
{
	return sm_now_ns();
}

/* ---- steering ---- */

static inline uint32_t
flow_hash(uint32_t sip, uint32_t dip, uint16_t sport, uint16_t dport)
{
	return dpdk_flow_hash(dpdk_rss_key, sip, dip, sport, dport);
}

static inline unsigned
hash_owner(uint32_t h)
{
	return dpdk_hash_owner(h, g.shards);
}

#define OWNER_ALL UINT32_MAX
#define OWNER_HERE (UINT32_MAX - 1)

/* The shard that owns frame @m (OWNER_ALL: every shard, OWNER_HERE: this one). */
static unsigned
steer(struct rte_mbuf *m)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m), ihl, sip, dip, h;
	uint16_t ethertype, sport, dport, frag;
	struct sm_listener *l;
	unsigned li;

	if (g.shards == 1 || len < 14)
		return OWNER_HERE;
	ethertype = (uint16_t)(p[12] << 8 | p[13]);
	if (ethertype == 0x0806)
		return OWNER_ALL;
	if (ethertype != 0x0800 || len < 34 || p[23] != 6 /* TCP */)
		return OWNER_HERE;
	ihl = (uint32_t)(p[14] & 0xf) * 4;
	frag = (uint16_t)((p[20] << 8 | p[21]) & 0x3fff);
	if (frag != 0 || len < 14 + ihl + 4)
		return OWNER_HERE;
	memcpy(&sip, p + 26, 4);
	memcpy(&dip, p + 30, 4);
	sport = (uint16_t)(p[14 + ihl] << 8 | p[15 + ihl]);
	dport = (uint16_t)(p[16 + ihl] << 8 | p[17 + ihl]);
	li = port_listener[dport];
	if (li != 0) {
		l = &listeners[li - 1];
		if (l->opts.placement == SM_PLACE_SRC_PORT)
			return sport % g.shards;
		if (l->opts.placement == SM_PLACE_SHARD)
			return l->opts.shard < g.shards ? l->opts.shard : 0;
	}
	if (g.hw_hash && (m->ol_flags & RTE_MBUF_F_RX_RSS_HASH))
		h = m->hash.rss;
	else
		h = flow_hash(ntohl(sip), ntohl(dip), sport, dport);
	return hash_owner(h);
}

/* ---- transmit ---- */

static void
tx_flush(struct dpdk_shard *s)
{
	uint16_t sent;

	uint64_t bytes = 0;
	unsigned i;

	if (s->ntx == 0 || s->queue < 0)
		return;
	/* Sent mbufs belong to the PMD after the burst: count before, less what stays. */
	for (i = 0; i < s->ntx; i++)
		bytes += rte_pktmbuf_pkt_len(s->txq[i]);
	sent = rte_eth_tx_burst(g.port, (uint16_t)s->queue, s->txq, (uint16_t)s->ntx);
	for (i = sent; i < s->ntx; i++)
		bytes -= rte_pktmbuf_pkt_len(s->txq[i]);
	s->q_tx_pkts += sent;
	s->q_tx_bytes += bytes;
	if (sent < s->ntx)
		memmove(s->txq, s->txq + sent, (s->ntx - sent) * sizeof(s->txq[0]));
	s->ntx -= sent;
}

/* Queue @m on this shard's TX queue (the shard has one). */
static void
tx_enqueue(struct dpdk_shard *s, struct rte_mbuf *m)
{
	if (s->ntx == TX_BATCH)
		tx_flush(s);
	if (s->ntx == TX_BATCH) {
		/* The device is not keeping up: drop, TCP retransmits. */
		s->tx_dropped++;
		rte_pktmbuf_free(m);
		return;
	}
	s->txq[s->ntx++] = m;
	if (s->ntx >= BURST)
		tx_flush(s);
}

static void
tx_remote(void *arg)
{
	tx_enqueue(ds, arg);
}

/* Send @m out: through our queue, or the queue of our tx shard. */
static void
tx_out(struct rte_mbuf *m)
{
	if (ds->queue >= 0) {
		tx_enqueue(ds, m);
		return;
	}
	if (sm_submit_to(ds->tx_shard, tx_remote, m, NULL) < 0) {
		ds->fwd_dropped++;
		rte_pktmbuf_free(m);
	}
}

/* ---- fault injection ---- */

static inline double
rand_pct(struct dpdk_shard *s)
{
	/* per shard: the fault dice of one shard never touch another's state */
	return sm_rand_double(&s->dice) * 100.0;
}

static struct rte_mbuf *
mbuf_copy(struct rte_mbuf *m)
{
	struct rte_mbuf *c = rte_pktmbuf_alloc(ds->pool);
	uint32_t len = rte_pktmbuf_pkt_len(m);
	const void *src;
	void *dst;

	if (c == NULL)
		return NULL;
	dst = rte_pktmbuf_append(c, (uint16_t)len);
	if (dst == NULL) {
		rte_pktmbuf_free(c);
		return NULL;
	}
	/* rte_pktmbuf_read() copies only a segmented frame; for a contiguous
	 * one it returns a pointer into @m and leaves @dst untouched. */
	src = rte_pktmbuf_read(m, 0, len, dst);
	if (src != NULL && src != dst)
		memcpy(dst, src, len);
	c->ol_flags = m->ol_flags & RTE_MBUF_F_RX_RSS_HASH;
	c->hash.rss = m->hash.rss;
	return c;
}

/*
 * Pass @m through the faults of path @fp, calling @emit for what goes on
 * (now, twice, or later). Without faults configured this is never called.
 */
static void
fault_apply(struct fault_path *fp, struct rte_mbuf *m, void (*emit)(struct rte_mbuf *m))
{
	const struct dpdk_fault *f = fp->cfg;
	struct rte_mbuf *dup = NULL, *held;

	if (f->drop > 0 && rand_pct(ds) < f->drop) {
		rte_pktmbuf_free(m);
		return;
	}
	if (f->dup > 0 && rand_pct(ds) < f->dup)
		dup = mbuf_copy(m);
	if (f->delay > 0 && rand_pct(ds) < f->delay && fp->dlen < DELAY_SLOTS) {
		unsigned slot = (fp->dhead + fp->dlen) % DELAY_SLOTS;

		fp->delayed[slot] = m;
		fp->due[slot] = ds->now + g.o.delay_ns;
		fp->dlen++;
		m = NULL;
	} else if (f->reorder > 0 && fp->held == NULL && rand_pct(ds) < f->reorder) {
		fp->held = m;
		m = NULL;
	}
	if (m != NULL) {
		emit(m);
		if (fp->held != NULL) {
			held = fp->held;
			fp->held = NULL;
			emit(held);
		}
	}
	if (dup != NULL)
		emit(dup);
}

/* Release delayed frames that are due, and a held one that waited a round. */
static unsigned
fault_tick(struct fault_path *fp, void (*emit)(struct rte_mbuf *m), bool release_held)
{
	unsigned n = 0;

	while (fp->dlen > 0 && fp->due[fp->dhead] <= ds->now) {
		struct rte_mbuf *m = fp->delayed[fp->dhead];

		fp->dhead = (fp->dhead + 1) % DELAY_SLOTS;
		fp->dlen--;
		emit(m);
		n++;
	}
	if (release_held && fp->held != NULL) {
		struct rte_mbuf *m = fp->held;

		fp->held = NULL;
		emit(m);
		n++;
	}
	return n;
}

static void
fault_flush(struct fault_path *fp)
{
	while (fp->dlen > 0) {
		rte_pktmbuf_free(fp->delayed[fp->dhead]);
		fp->dhead = (fp->dhead + 1) % DELAY_SLOTS;
		fp->dlen--;
	}
	if (fp->held != NULL)
		rte_pktmbuf_free(fp->held);
	fp->held = NULL;
}

/* ---- the stack's transmit callback ---- */

static void
tx_emit(struct rte_mbuf *m)
{
	tx_out(m);
}

static int
stack_tx(void *ctx, const void *frame, size_t len)
{
	struct dpdk_shard *s = ctx;
	struct rte_mbuf *m = rte_pktmbuf_alloc(s->pool);
	char *p;

	if (m == NULL)
		return -ENOBUFS;
	p = rte_pktmbuf_append(m, (uint16_t)len);
	if (p == NULL) {
		rte_pktmbuf_free(m);
		return -EMSGSIZE;
	}
	memcpy(p, frame, len);
	if (g.faults)
		fault_apply(&s->ftx, m, tx_emit);
	else
		tx_out(m);
	return 0;
}

/* ---- receive ---- */

static void
mbuf_seg_release(struct sm_bufseg *seg)
{
	struct mbuf_seg *ms = (struct mbuf_seg *)seg;

	if (ms->counted && ds != NULL)
		ds->zc_held--;
	rte_pktmbuf_free((struct rte_mbuf *)((char *)seg - sizeof(struct rte_mbuf)));
}

static void
deliver(struct rte_mbuf *m)
{
	const void *frame;
	uint32_t len = rte_pktmbuf_pkt_len(m);
	struct mbuf_seg *ms;

	if (len > FRAME_MAX) {
		rte_pktmbuf_free(m);
		return;
	}
	if (m->nb_segs == 1 && rte_pktmbuf_priv_size(m->pool) >= MBUF_PRIV_SIZE &&
	    ds->zc_held < ZC_HELD_MAX) {
		/* Our reference for the call; protocols add theirs. */
		ms = rte_mbuf_to_priv(m);
		ms->seg.refcnt = 1;
		ms->seg.release = mbuf_seg_release;
		ms->counted = false;
		sm_tcpip_input_ref(ds->stack, rte_pktmbuf_mtod(m, const void *), len, ds->now,
				   &ms->seg);
		if (ms->seg.refcnt > 1) {
			ms->counted = true;
			ds->zc_held++;
		}
		sm_bufseg_put(&ms->seg);
		return;
	}
	frame = rte_pktmbuf_read(m, 0, len, ds->scratch);
	if (frame != NULL)
		sm_tcpip_input(ds->stack, frame, len, ds->now);
	rte_pktmbuf_free(m);
}

static void
rx_remote(void *arg)
{
	ds->now = now_ns();
	deliver(arg);
}

static void
rx_dispatch(struct rte_mbuf *m)
{
	unsigned owner = steer(m), i;

	if (owner == OWNER_HERE || owner == ds->id) {
		deliver(m);
		return;
	}
	if (owner == OWNER_ALL) {
		for (i = 0; i < g.shards; i++) {
			struct rte_mbuf *c;

			if (i == ds->id)
				continue;
			c = mbuf_copy(m);
			if (c != NULL && sm_submit_to(i, rx_remote, c, NULL) < 0)
				rte_pktmbuf_free(c);
		}
		deliver(m);
		return;
	}
	if (sm_submit_to(owner, rx_remote, m, NULL) < 0) {
		ds->fwd_dropped++;
		rte_pktmbuf_free(m);
		return;
	}
	ds->steered++;
}

/* ---- counters for /metrics ---- */

enum {
	C_RX_FRAMES,
	C_TX_FRAMES,
	C_RX_DROPPED,
	C_RX_BAD_CSUM,
	C_TX_DROPPED,
	C_STEERED,
	C_STEER_DROPPED,
	C_ZEROCOPY,
	C_SEGS_IN,
	C_SEGS_OUT,
	C_RETRANSMITS,
	C_FAST_RETRANSMITS,
	C_TIMEOUTS,
	C_OOO,
	C_DUP,
	C_RST_SENT,
	C_RST_RCVD,
	C_CHALLENGE_ACKS,
	C_WINDOW_PROBES,
	C_SYN_DROPPED,
	C_ARP_DROPPED,
	C_NIC_MISSED,
	C_NIC_RX_ERRORS,
	C_NIC_TX_ERRORS,
	C_NIC_NOMBUF,
	C_Q_RX_PKTS,
	C_Q_RX_BYTES,
	C_Q_TX_PKTS,
	C_Q_TX_BYTES,
	C_NICQ_RX_PKTS,
	C_NICQ_RX_BYTES,
	C_NICQ_TX_PKTS,
	C_NICQ_TX_BYTES,
	C_NICQ_ERRORS,
	C_RX_POLLS,
	C_RX_POLLS_EMPTY,
	C_RX_BURST_1,
	C_RX_BURST_2,
	C_RX_BURST_4,
	C_RX_BURST_8,
	C_RX_BURST_16,
	C_RX_BURST_32,
	C_NR,
};

static const struct sm_net_counter counter_desc[C_NR] = {
	[C_RX_FRAMES] = { "rx_frames_total", "Frames the shard's TCP/IP stack received." },
	[C_TX_FRAMES] = { "tx_frames_total", "Frames the shard's TCP/IP stack sent." },
	[C_RX_DROPPED] = { "rx_dropped_total",
			   "Received frames dropped: not for us, malformed, or IP fragments." },
	[C_RX_BAD_CSUM] = { "rx_bad_checksum_total", "Received frames with a bad checksum." },
	[C_TX_DROPPED] = { "tx_dropped_total",
			   "Frames dropped because the TX queue stayed full (TCP retransmits)." },
	[C_STEERED] = { "rx_steered_total",
			"Frames this shard received for another shard and forwarded to it "
			"(no RSS, or a placement rule the NIC cannot know)." },
	[C_STEER_DROPPED] = { "steer_dropped_total",
			      "Frames lost because a cross-shard ring was full." },
	[C_ZEROCOPY] = { "rx_zerocopy_bytes_total",
			 "TCP payload delivered to protocols as views of the mbufs, uncopied." },
	[C_SEGS_IN] = { "tcp_segments_in_total", "TCP segments received." },
	[C_SEGS_OUT] = { "tcp_segments_out_total", "TCP segments sent." },
	[C_RETRANSMITS] = { "tcp_retransmits_total", "TCP segments retransmitted." },
	[C_FAST_RETRANSMITS] = { "tcp_fast_retransmits_total",
				 "Fast retransmissions (three duplicate ACKs, NewReno)." },
	[C_TIMEOUTS] = { "tcp_timeouts_total", "Retransmission timer expiries." },
	[C_OOO] = { "tcp_out_of_order_total", "TCP segments received beyond a hole." },
	[C_DUP] = { "tcp_duplicates_total", "TCP segments received that held nothing new." },
	[C_RST_SENT] = { "tcp_resets_sent_total", "TCP resets sent." },
	[C_RST_RCVD] = { "tcp_resets_received_total", "TCP resets received." },
	[C_CHALLENGE_ACKS] = { "tcp_challenge_acks_total", "RFC 5961 challenge ACKs sent." },
	[C_WINDOW_PROBES] = { "tcp_window_probes_total", "Zero-window probes sent." },
	[C_SYN_DROPPED] = { "tcp_syn_dropped_total", "SYNs dropped with the SYN queue full." },
	[C_ARP_DROPPED] = { "arp_pending_dropped_total",
			    "Frames dropped while waiting for an ARP reply." },
	[C_NIC_MISSED] = { "nic_rx_missed_total",
			   "Port-wide (on shard 0 only): frames the NIC dropped because an RX "
			   "queue was full (rte_eth_stats imissed)." },
	[C_NIC_RX_ERRORS] = { "nic_rx_errors_total",
			      "Port-wide (on shard 0 only): erroneous received frames (ierrors)." },
	[C_NIC_TX_ERRORS] = { "nic_tx_errors_total",
			      "Port-wide (on shard 0 only): failed transmissions (oerrors)." },
	[C_NIC_NOMBUF] = { "nic_rx_nombuf_total", "Port-wide (on shard 0 only): RX mbuf allocation "
						  "failures (rx_nombuf)." },
	[C_Q_RX_PKTS] = { "queue_rx_packets_total",
			  "Packets the shard's RX queue delivered (rte_eth_rx_burst)." },
	[C_Q_RX_BYTES] = { "queue_rx_bytes_total", "Bytes of those packets." },
	[C_Q_TX_PKTS] = { "queue_tx_packets_total",
			  "Packets the shard's TX queue took (rte_eth_tx_burst)." },
	[C_Q_TX_BYTES] = { "queue_tx_bytes_total", "Bytes of those packets." },
	[C_NICQ_RX_PKTS] = { "nic_queue_rx_packets_total",
			     "The NIC's own count for the shard's RX queue (q_ipackets; 0 where "
			     "the PMD keeps none)." },
	[C_NICQ_RX_BYTES] = { "nic_queue_rx_bytes_total", "The NIC's q_ibytes for the queue." },
	[C_NICQ_TX_PKTS] = { "nic_queue_tx_packets_total", "The NIC's q_opackets for the queue." },
	[C_NICQ_TX_BYTES] = { "nic_queue_tx_bytes_total", "The NIC's q_obytes for the queue." },
	[C_NICQ_ERRORS] = { "nic_queue_rx_errors_total",
			    "The NIC's q_errors for the queue (dropped on receive)." },
	[C_RX_POLLS] = { "rx_polls_total", "RX bursts polled." },
	[C_RX_POLLS_EMPTY] = { "rx_polls_empty_total",
			       "RX bursts that returned nothing (idle polling of the queue)." },
	[C_RX_BURST_1] = { "rx_bursts_1_total", "RX bursts of 1 packet." },
	[C_RX_BURST_2] = { "rx_bursts_2_3_total", "RX bursts of 2 to 3 packets." },
	[C_RX_BURST_4] = { "rx_bursts_4_7_total", "RX bursts of 4 to 7 packets." },
	[C_RX_BURST_8] = { "rx_bursts_8_15_total", "RX bursts of 8 to 15 packets." },
	[C_RX_BURST_16] = { "rx_bursts_16_31_total", "RX bursts of 16 to 31 packets." },
	[C_RX_BURST_32] = { "rx_bursts_32_total", "RX bursts of 32 packets (full: the queue had more)." },
};

/* The NIC's per-queue counts, read by shard 0 with the port's, by queue. */
static struct {
	uint64_t ipackets, ibytes, opackets, obytes, errors;
} SM_CACHE_ALIGNED nicq[RTE_ETHDEV_QUEUE_STAT_CNTRS];
static int queue_of_shard[SM_MAX_SHARDS];

/* Each shard's counters as last published, read by /metrics on any shard. */
static struct {
	uint64_t v[C_NR];
} SM_CACHE_ALIGNED published[SM_MAX_SHARDS];

#define PUBLISH_NS 10000000ull /* 10 ms: fresh enough for a scrape, cheap for the poller */

/* Copy this shard's counters where other threads read them (relaxed stores). */
static void
counters_publish(void)
{
	struct sm_tcpip_stats st;
	struct rte_eth_stats es;
	uint64_t v[C_NR];
	unsigned i;

	sm_tcpip_stats(ds->stack, &st);
	memset(v, 0, sizeof(v));
	v[C_RX_FRAMES] = st.rx_frames;
	v[C_TX_FRAMES] = st.tx_frames;
	v[C_RX_DROPPED] = st.rx_drop_eth + st.rx_drop_ip + st.rx_frags;
	v[C_RX_BAD_CSUM] = st.rx_bad_csum;
	v[C_TX_DROPPED] = ds->tx_dropped + st.tx_errors;
	v[C_STEERED] = ds->steered;
	v[C_STEER_DROPPED] = ds->fwd_dropped;
	v[C_ZEROCOPY] = st.tcp_rx_zerocopy_bytes;
	v[C_SEGS_IN] = st.tcp_segs_in;
	v[C_SEGS_OUT] = st.tcp_segs_out;
	v[C_RETRANSMITS] = st.tcp_retransmits;
	v[C_FAST_RETRANSMITS] = st.tcp_fast_retransmits;
	v[C_TIMEOUTS] = st.tcp_timeouts;
	v[C_OOO] = st.tcp_ooo_segs;
	v[C_DUP] = st.tcp_dup_segs;
	v[C_RST_SENT] = st.tcp_rst_sent;
	v[C_RST_RCVD] = st.tcp_rst_rcvd;
	v[C_CHALLENGE_ACKS] = st.tcp_challenge_acks;
	v[C_WINDOW_PROBES] = st.tcp_window_probes;
	v[C_SYN_DROPPED] = st.tcp_syn_dropped;
	v[C_ARP_DROPPED] = st.arp_pending_dropped;
	if (ds->id == 0 && rte_eth_stats_get(g.port, &es) == 0) {
		v[C_NIC_MISSED] = es.imissed;
		v[C_NIC_RX_ERRORS] = es.ierrors;
		v[C_NIC_TX_ERRORS] = es.oerrors;
		v[C_NIC_NOMBUF] = es.rx_nombuf;
		for (i = 0; i < RTE_ETHDEV_QUEUE_STAT_CNTRS && i < g.nq; i++) {
			__atomic_store_n(&nicq[i].ipackets, es.q_ipackets[i], __ATOMIC_RELAXED);
			__atomic_store_n(&nicq[i].ibytes, es.q_ibytes[i], __ATOMIC_RELAXED);
			__atomic_store_n(&nicq[i].opackets, es.q_opackets[i], __ATOMIC_RELAXED);
			__atomic_store_n(&nicq[i].obytes, es.q_obytes[i], __ATOMIC_RELAXED);
			__atomic_store_n(&nicq[i].errors, es.q_errors[i], __ATOMIC_RELAXED);
		}
	}
	v[C_Q_RX_PKTS] = ds->q_rx_pkts;
	v[C_Q_RX_BYTES] = ds->q_rx_bytes;
	v[C_Q_TX_PKTS] = ds->q_tx_pkts;
	v[C_Q_TX_BYTES] = ds->q_tx_bytes;
	v[C_RX_POLLS] = ds->rx_polls;
	v[C_RX_POLLS_EMPTY] = ds->rx_polls_empty;
	for (i = 0; i < 6; i++)
		v[C_RX_BURST_1 + i] = ds->rx_burst_hist[i];
	for (i = 0; i < C_NR; i++)
		__atomic_store_n(&published[ds->id].v[i], v[i], __ATOMIC_RELAXED);
	ds->published_at = ds->now;
}

static unsigned
dpdk_counters(const struct sm_net_counter **desc)
{
	*desc = counter_desc;
	return C_NR;
}

static void
dpdk_counters_read(unsigned shard, uint64_t *vals)
{
	unsigned i;
	int q;

	for (i = 0; i < C_NR; i++)
		vals[i] = shard < SM_MAX_SHARDS
				  ? __atomic_load_n(&published[shard].v[i], __ATOMIC_RELAXED)
				  : 0;
	q = shard < SM_MAX_SHARDS ? queue_of_shard[shard] : -1;
	if (q >= 0 && q < RTE_ETHDEV_QUEUE_STAT_CNTRS) {
		vals[C_NICQ_RX_PKTS] = __atomic_load_n(&nicq[q].ipackets, __ATOMIC_RELAXED);
		vals[C_NICQ_RX_BYTES] = __atomic_load_n(&nicq[q].ibytes, __ATOMIC_RELAXED);
		vals[C_NICQ_TX_PKTS] = __atomic_load_n(&nicq[q].opackets, __ATOMIC_RELAXED);
		vals[C_NICQ_TX_BYTES] = __atomic_load_n(&nicq[q].obytes, __ATOMIC_RELAXED);
		vals[C_NICQ_ERRORS] = __atomic_load_n(&nicq[q].errors, __ATOMIC_RELAXED);
	}
}

/* ---- the port report: testpmd's "show port stats" and "show port xstats" ---- */

/* The NIC's extended statistics; NULL names when it has none. */
static int
xstats_get(struct rte_eth_xstat_name **names, uint64_t **vals)
{
	int n = rte_eth_xstats_get_names(g.port, NULL, 0);
	uint64_t *ids = NULL;
	int i;

	*names = NULL;
	*vals = NULL;
	if (n <= 0)
		return 0;
	*names = calloc((size_t)n, sizeof(**names));
	*vals = calloc((size_t)n, sizeof(**vals));
	ids = calloc((size_t)n, sizeof(*ids));
	if (*names == NULL || *vals == NULL || ids == NULL ||
	    rte_eth_xstats_get_names(g.port, *names, (unsigned)n) != n)
		goto fail;
	for (i = 0; i < n; i++)
		ids[i] = (uint64_t)i;
	if (rte_eth_xstats_get_by_id(g.port, ids, *vals, (unsigned)n) != n)
		goto fail;
	free(ids);
	return n;
fail:
	free(ids);
	free(*names);
	free(*vals);
	*names = NULL;
	*vals = NULL;
	return 0;
}

/* Throughput since the last text report, as testpmd's "since last show". */
static struct {
	pthread_mutex_t lock;
	uint64_t ns, ipackets, ibytes, opackets, obytes;
} last_show = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void
report_text(FILE *f, struct rte_eth_xstat_name *names, const uint64_t *vals, int nx)
{
	struct rte_eth_stats es;
	uint64_t now = now_ns(), dt, rx_pps = 0, tx_pps = 0, rx_bps = 0, tx_bps = 0;
	uint64_t v[C_NR];
	unsigned i;
	int k;

	if (!g.port_up || rte_eth_stats_get(g.port, &es) != 0)
		return;
	pthread_mutex_lock(&last_show.lock);
	dt = now - last_show.ns;
	if (last_show.ns != 0 && dt > 0) {
		rx_pps = (es.ipackets - last_show.ipackets) * 1000000000ull / dt;
		tx_pps = (es.opackets - last_show.opackets) * 1000000000ull / dt;
		rx_bps = (es.ibytes - last_show.ibytes) * 8000000000ull / dt;
		tx_bps = (es.obytes - last_show.obytes) * 8000000000ull / dt;
	}
	last_show.ns = now;
	last_show.ipackets = es.ipackets;
	last_show.ibytes = es.ibytes;
	last_show.opackets = es.opackets;
	last_show.obytes = es.obytes;
	pthread_mutex_unlock(&last_show.lock);

	fprintf(f, "\n  ######################## NIC statistics for port %u  ########################\n",
		g.port);
	fprintf(f, "  RX-packets: %-10" PRIu64 " RX-missed: %-10" PRIu64 " RX-bytes:  %" PRIu64 "\n",
		es.ipackets, es.imissed, es.ibytes);
	fprintf(f, "  RX-errors: %" PRIu64 "\n  RX-nombuf:  %-10" PRIu64 "\n", es.ierrors,
		es.rx_nombuf);
	fprintf(f, "  TX-packets: %-10" PRIu64 " TX-errors: %-10" PRIu64 " TX-bytes:  %" PRIu64 "\n",
		es.opackets, es.oerrors, es.obytes);
	fprintf(f, "\n  Throughput (since last show)\n");
	fprintf(f, "  Rx-pps: %12" PRIu64 "          Rx-bps: %12" PRIu64 "\n", rx_pps, rx_bps);
	fprintf(f, "  Tx-pps: %12" PRIu64 "          Tx-bps: %12" PRIu64 "\n", tx_pps, tx_bps);
	fprintf(f, "  ############################################################################\n");

	/* Per queue: the shard's own counts and the NIC's where it keeps them. */
	fprintf(f, "\n  shard queue    rx-packets      rx-bytes    tx-packets      tx-bytes  "
		   "nic-rx-pkts  nic-tx-pkts  empty-polls%%  bursts 1/2-3/4-7/8-15/16-31/32\n");
	for (i = 0; i < g.shards && i < SM_MAX_SHARDS; i++) {
		dpdk_counters_read(i, v);
		fprintf(f,
			"  %5u %5d %13" PRIu64 " %13" PRIu64 " %13" PRIu64 " %13" PRIu64
			" %12" PRIu64 " %12" PRIu64 " %12.1f  %" PRIu64 "/%" PRIu64 "/%" PRIu64
			"/%" PRIu64 "/%" PRIu64 "/%" PRIu64 "\n",
			i, queue_of_shard[i], v[C_Q_RX_PKTS], v[C_Q_RX_BYTES], v[C_Q_TX_PKTS],
			v[C_Q_TX_BYTES], v[C_NICQ_RX_PKTS], v[C_NICQ_TX_PKTS],
			v[C_RX_POLLS] ? 100.0 * (double)v[C_RX_POLLS_EMPTY] / (double)v[C_RX_POLLS]
				      : 0.0,
			v[C_RX_BURST_1], v[C_RX_BURST_2], v[C_RX_BURST_4], v[C_RX_BURST_8],
			v[C_RX_BURST_16], v[C_RX_BURST_32]);
	}
	if (nx > 0) {
		fprintf(f, "\n  ###### NIC extended statistics for port %-2u #########\n", g.port);
		for (k = 0; k < nx; k++)
			fprintf(f, "  %s: %" PRIu64 "\n", names[k].name, vals[k]);
		fprintf(f, "  ###################################################\n");
	}
}

static void
report_prometheus(FILE *f, struct rte_eth_xstat_name *names, const uint64_t *vals, int nx)
{
	int k;

	if (nx <= 0)
		return;
	fprintf(f, "# HELP shardmark_nic_xstat The NIC's extended statistics (rte_eth_xstats), by "
		   "name.\n# TYPE shardmark_nic_xstat untyped\n");
	for (k = 0; k < nx; k++) {
		const char *p;

		fprintf(f, "shardmark_nic_xstat{port=\"%u\",name=\"", g.port);
		for (p = names[k].name; *p != '\0'; p++)
			if (*p != '"' && *p != '\\' && *p != '\n')
				fputc(*p, f);
		fprintf(f, "\"} %" PRIu64 "\n", vals[k]);
	}
}

static void
dpdk_port_report(FILE *f, bool prometheus)
{
	struct rte_eth_xstat_name *names;
	uint64_t *vals;
	int nx;

	if (!g.port_up)
		return;
	nx = xstats_get(&names, &vals);
	if (prometheus)
		report_prometheus(f, names, vals, nx);
	else
		report_text(f, names, vals, nx);
	free(names);
	free(vals);
}

/* ---- the poller and the waiter ---- */

static unsigned
run_resumed(void);

static unsigned
dpdk_poll(void *ctx)
{
	struct rte_mbuf *pkts[BURST];
	unsigned work = 0, i, n;

	(void)ctx;
	ds->now = now_ns();
	if (ds->queue >= 0) {
		n = rte_eth_rx_burst(g.port, (uint16_t)ds->queue, pkts, BURST);
		ds->rx_polls++;
		if (n == 0) {
			ds->rx_polls_empty++;
		} else {
			/* 1, 2-3, 4-7, 8-15, 16-31, 32: the bucket is the bit length less one */
			ds->rx_burst_hist[SM_MIN(31u - (unsigned)__builtin_clz(n), 5u)]++;
			ds->q_rx_pkts += n;
		}
		for (i = 0; i < n; i++) {
			ds->q_rx_bytes += rte_pktmbuf_pkt_len(pkts[i]);
			if (g.faults)
				fault_apply(&ds->frx, pkts[i], rx_dispatch);
			else
				rx_dispatch(pkts[i]);
		}
		work += n;
	}
	if (g.faults) {
		work += fault_tick(&ds->frx, rx_dispatch, work == 0);
		work += fault_tick(&ds->ftx, tx_emit, true);
	}
	if (sm_tcpip_next_timer(ds->stack) <= ds->now) {
		sm_tcpip_poll(ds->stack, ds->now);
		work++;
	}
	work += run_resumed();
	tx_flush(ds);
	if (ds->now - ds->published_at >= PUBLISH_NS)
		counters_publish();
	return work;
}

static int
dpdk_wait(void *ctx, int64_t timeout_ns)
{
	struct pollfd pfd = { .fd = sm_shard_wakeup_fd(), .events = POLLIN };
	struct timespec ts;
	uint64_t v;
	int64_t t = timeout_ns;

	(void)ctx;
	tx_flush(ds);
	/* No RX interrupts: poll the queue again soon. */
	if (t < 0 || t > WAIT_CAP_NS)
		t = WAIT_CAP_NS;
	ts.tv_sec = t / 1000000000;
	ts.tv_nsec = t % 1000000000;
	if (ppoll(&pfd, 1, &ts, NULL) > 0 && (pfd.revents & POLLIN)) {
		if (read(pfd.fd, &v, sizeof(v)) < 0)
			return 0;
	}
	return 0;
}

/* ---- connections ---- */

static void
fill_addrs(struct dconn *d)
{
	struct sockaddr_in *l = (struct sockaddr_in *)&d->c.local;
	struct sockaddr_in *r = (struct sockaddr_in *)&d->c.peer;
	uint32_t lip, rip;
	uint16_t lport, rport;

	sm_tcp_tuple(d->tc, &lip, &lport, &rip, &rport);
	memset(&d->c.local, 0, sizeof(d->c.local));
	memset(&d->c.peer, 0, sizeof(d->c.peer));
	l->sin_family = AF_INET;
	l->sin_addr.s_addr = htonl(lip);
	l->sin_port = htons(lport);
	r->sin_family = AF_INET;
	r->sin_addr.s_addr = htonl(rip);
	r->sin_port = htons(rport);
}

static struct dconn *
conn_new(void)
{
	struct dconn *d = sm_pool_get(&ds->conn_pool);

	if (d == NULL)
		return NULL;
	memset(d, 0, sizeof(*d));
	d->c.drv = &dpdk_driver;
	d->c.shard = ds->id;
	d->next = ds->conns;
	if (ds->conns != NULL)
		ds->conns->prev = d;
	ds->conns = d;
	ds->nconns++;
	sm_shard_hold();
	return d;
}

static void
conn_free(struct dconn *d)
{
	sm_iovq_fini(&d->sq);
	sm_iovq_fini(&d->held);
	d->c.send_queued = 0;
	sm_conn_net_fini(&d->c);
	if (d->prev != NULL)
		d->prev->next = d->next;
	else
		ds->conns = d->next;
	if (d->next != NULL)
		d->next->prev = d->prev;
	ds->nconns--;
	sm_pool_put(&ds->conn_pool, d);
	sm_shard_release();
}

/* The stack is done with the connection: tell the protocol, free it when idle. */
static void
conn_gone(struct dconn *d, int err)
{
	if (d->gone)
		return;
	d->gone = true;
	d->tc = NULL;
	d->c.closing = true;
	if (d->attached) {
		d->attached = false;
		SM_STAT_INC(conns_closed);
		d->c.proto->closed(&d->c, d->err != 0 ? d->err : err);
	}
	if (d->busy == 0)
		conn_free(d);
}

static void
conn_abort(struct dconn *d, int err)
{
	if (d->gone)
		return;
	if (d->err == 0)
		d->err = err;
	if (d->tc != NULL)
		sm_tcp_abort(d->tc, ds->now);
	conn_gone(d, err);
}

static inline void
conn_enter(struct dconn *d)
{
	d->busy++;
}

static inline void
conn_leave(struct dconn *d)
{
	if (--d->busy == 0 && d->gone)
		conn_free(d);
}

static void
send_fin(struct dconn *d)
{
	if (d->fin_sent || d->gone)
		return;
	d->fin_sent = true;
	sm_tcp_close(d->tc, ds->now);
}

/* Move queued views into the stack's send buffer; true when all went. */
/* Move queued views into the stack's send buffer; true when all went. */
static bool
sq_push(struct dconn *d)
{
	while (d->sq.len > 0 && !d->gone) {
		struct sm_iov *v = sm_iovq_at(&d->sq, 0);
		long n = sm_tcp_send(d->tc, v->base, v->len, ds->now);
		bool all = n >= 0 && (size_t)n == v->len;

		if (n < 0) {
			conn_abort(d, n == -EPIPE ? -EPIPE : (int)n);
			return false;
		}
		SM_STAT_ADD(bytes_out, (uint64_t)n);
		sm_iovq_consume(&d->sq, (size_t)n);
		d->c.send_queued = d->sq.bytes;
		if (!all)
			break;
	}
	sm_conn_unsent_changed(&d->c);
	return d->sq.len == 0;
}

static int
dpdk_send(struct sm_conn *c, const struct sm_iov *iov, unsigned n)
{
	struct dconn *d = (struct dconn *)c;
	unsigned i = 0;
	int ret;

	if (c->closing || d->connecting || d->gone)
		return -EPIPE;
	ds->now = now_ns();
	/* Nothing waiting: hand the bytes straight to the stack. */
	while (d->sq.len == 0 && i < n) {
		long k = sm_tcp_send(d->tc, iov[i].base, iov[i].len, ds->now);

		if (k < 0)
			return -EPIPE;
		SM_STAT_ADD(bytes_out, (uint64_t)k);
		if ((size_t)k < iov[i].len) {
			struct sm_iov rest = { iov[i].seg, iov[i].base + k,
					       iov[i].len - (size_t)k };

			ret = sm_iovq_push(&d->sq, &rest, 1);
			if (ret < 0)
				return ret;
		}
		i++;
	}
	if (i < n) {
		ret = sm_iovq_push(&d->sq, iov + i, n - i);
		if (ret < 0)
			return ret;
	}
	c->send_queued = d->sq.bytes;
	if (d->sq.len == 0)
		sm_conn_tx_idle(c);
	else
		sm_conn_unsent_changed(c);
	return 0;
}

static void
dpdk_close(struct sm_conn *c)
{
	struct dconn *d = (struct dconn *)c;

	if (c->closing)
		return;
	c->closing = true;
	if (d->gone || d->connecting)
		return;
	ds->now = now_ns();
	if (d->sq.len == 0)
		send_fin(d);
	/* else the writable callback sends the FIN after the queue */
}

static long
dpdk_rx_pending(struct sm_conn *c)
{
	struct dconn *d = (struct dconn *)c;

	return d->tc != NULL ? (long)sm_tcp_unconsumed(d->tc) : 0;
}

/* ---- the stack's callbacks ---- */

static int
stack_accepted(void *ctx, struct sm_tcp_conn *tc)
{
	struct sm_listener *l;
	struct dconn *d;
	uint16_t lport;
	unsigned li;
	int ret;

	(void)ctx;
	sm_tcp_tuple(tc, NULL, &lport, NULL, NULL);
	li = __atomic_load_n(&port_listener[lport], __ATOMIC_ACQUIRE);
	if (li == 0 || sm_shard_stopping())
		return -ECONNREFUSED;
	l = &listeners[li - 1];
	if (!__atomic_load_n(&l->open, __ATOMIC_ACQUIRE))
		return -ECONNREFUSED;
	d = conn_new();
	if (d == NULL)
		return -ENOMEM;
	d->tc = tc;
	d->l = l;
	d->c.proto = l->opts.proto;
	fill_addrs(d);
	sm_tcp_set_user(tc, d);
	SM_STAT_INC(conns_opened);
	d->attached = true;
	conn_enter(d);
	ret = d->c.proto->accepted(&d->c, l->opts.ctx);
	if (ret < 0) {
		/* The stack resets it: no closed() for a refused connection. */
		d->attached = false;
		SM_STAT_INC(conns_closed);
		d->gone = true;
		d->tc = NULL;
		conn_leave(d);
		return ret;
	}
	conn_leave(d);
	return d->gone ? -ECONNABORTED : 0;
}

static void
stack_connected(void *ctx, struct sm_tcp_conn *tc, int err)
{
	struct dconn *d = sm_tcp_user(tc);

	(void)ctx;
	if (d == NULL)
		return;
	d->connecting = false;
	if (err < 0) {
		d->tc = NULL;
		d->gone = true;
		d->c.closing = true;
		conn_enter(d);
		d->c.proto->connected(&d->c, err);
		conn_leave(d);
		return;
	}
	fill_addrs(d);
	SM_STAT_INC(conns_opened);
	d->attached = true;
	conn_enter(d);
	d->c.proto->connected(&d->c, 0);
	if (d->c.closing && !d->gone && d->sq.len == 0)
		send_fin(d);
	conn_leave(d);
}

/* Queue @d to get its held bytes at the next poll round. */
static void
resume_list_add(struct dconn *d)
{
	if (d->on_resume_list || d->gone)
		return;
	conn_enter(d);
	d->on_resume_list = true;
	d->resume_next = ds->resumed;
	ds->resumed = d;
}

/*
 * Received bytes while paused (or behind held ones): copied aside and not
 * consumed, so the advertised window closes and the peer stops sending.
 */
static void
hold_rx(struct dconn *d, const void *data, size_t len)
{
	struct sm_sendbuf *b = sm_sendbuf_dup(data, len);
	struct sm_iov v;
	int ret = -ENOMEM;

	if (b != NULL) {
		v = (struct sm_iov){ .seg = &b->seg, .base = b->data, .len = len };
		ret = sm_iovq_push(&d->held, &v, 1);
		sm_bufseg_put(&b->seg);
	}
	if (ret < 0) {
		conn_abort(d, ret);
		return;
	}
	SM_STAT_ADD(bytes_in_copied, (uint64_t)len);
	if (!d->c.rx_paused)
		resume_list_add(d);
}

static void
dpdk_set_rx_paused(struct sm_conn *c, bool paused)
{
	struct dconn *d = (struct dconn *)c;

	/* Pausing needs nothing here: the receive callbacks hold what comes. */
	if (!paused && d->held.len > 0)
		resume_list_add(d);
}

/* Resumed connections: deliver what was held, then give the window back. */
static unsigned
run_resumed(void)
{
	struct dconn *d;
	struct sm_iov v;
	unsigned n = 0;

	while ((d = ds->resumed) != NULL) {
		ds->resumed = d->resume_next;
		d->on_resume_list = false;
		while (d->held.len > 0 && !d->c.rx_paused && !d->gone && !d->c.closing) {
			v = *sm_iovq_at(&d->held, 0);
			sm_bufseg_get(v.seg);
			sm_iovq_consume(&d->held, v.len);
			d->c.proto->received(&d->c, &v, 1);
			sm_bufseg_put(v.seg);
			if (d->tc != NULL)
				sm_tcp_consume(d->tc, v.len, ds->now);
		}
		if (d->held.len == 0 && d->eof_held && !d->gone) {
			d->eof_held = false;
			dpdk_close(&d->c);
		}
		conn_leave(d);
		n++;
	}
	return n;
}

static void
stack_recv(void *ctx, struct sm_tcp_conn *tc, const void *data, size_t len)
{
	struct dconn *d = sm_tcp_user(tc);
	struct sm_iov iov[8];
	struct sm_sendbuf *b;
	const char *p = data;
	size_t left = len;
	unsigned n, i;

	(void)ctx;
	if (d == NULL || d->gone)
		return;
	if (len == 0) {
		/* The peer's FIN: send what is queued, then close. */
		if (d->held.len > 0) {
			d->eof_held = true;
			return;
		}
		conn_enter(d);
		dpdk_close(&d->c);
		conn_leave(d);
		return;
	}
	if (d->c.closing) {
		sm_tcp_consume(tc, len, ds->now);
		return;
	}
	SM_STAT_ADD(bytes_in, (uint64_t)len);
	if (d->c.rx_paused || d->held.len > 0) {
		hold_rx(d, data, len);
		return;
	}
	SM_STAT_ADD(bytes_in_copied, (uint64_t)len);
	conn_enter(d);
	while (left > 0 && !d->gone && !d->c.closing) {
		for (n = 0; n < SM_ARRAY_SIZE(iov) && left > 0; n++) {
			size_t chunk = SM_MIN(left, (size_t)16384);

			b = sm_sendbuf_new(chunk);
			if (b == NULL)
				break;
			memcpy(b->data, p, chunk);
			b->len = chunk;
			iov[n].seg = &b->seg;
			iov[n].base = b->data;
			iov[n].len = chunk;
			p += chunk;
			left -= chunk;
		}
		if (n == 0) {
			conn_abort(d, -ENOMEM);
			break;
		}
		d->c.proto->received(&d->c, iov, n);
		for (i = 0; i < n; i++)
			sm_bufseg_put(iov[i].seg);
	}
	if (d->tc != NULL)
		sm_tcp_consume(tc, len, ds->now);
	conn_leave(d);
}

/* In-order bytes inside the mbuf whose segment is @ref: the protocol gets the mbuf itself. */
static void
stack_recv_ref(void *ctx, struct sm_tcp_conn *tc, const void *data, size_t len, void *ref)
{
	struct dconn *d = sm_tcp_user(tc);
	struct sm_iov iov = { .seg = ref, .base = data, .len = len };

	(void)ctx;
	if (d == NULL || d->gone)
		return;
	if (d->c.closing) {
		sm_tcp_consume(tc, len, ds->now);
		return;
	}
	SM_STAT_ADD(bytes_in, (uint64_t)len);
	if (d->c.rx_paused || d->held.len > 0) {
		hold_rx(d, data, len);
		return;
	}
	conn_enter(d);
	d->c.proto->received(&d->c, &iov, 1);
	if (d->tc != NULL)
		sm_tcp_consume(tc, len, ds->now);
	conn_leave(d);
}

static void
stack_writable(void *ctx, struct sm_tcp_conn *tc)
{
	struct dconn *d = sm_tcp_user(tc);
	bool had = d != NULL && d->sq.len > 0;

	(void)ctx;
	if (d == NULL || d->gone)
		return;
	conn_enter(d);
	if (sq_push(d) && !d->gone) {
		sm_conn_tx_idle(&d->c);
		if (d->c.closing)
			send_fin(d);
		else if (had && d->c.proto->drained != NULL)
			d->c.proto->drained(&d->c);
	}
	conn_leave(d);
}

static void
stack_closed(void *ctx, struct sm_tcp_conn *tc, int err)
{
	struct dconn *d = sm_tcp_user(tc);

	(void)ctx;
	if (d == NULL)
		return;
	conn_gone(d, err);
}

static const struct sm_tcpip_ops stack_ops = {
	.tx = stack_tx,
	.accepted = stack_accepted,
	.connected = stack_connected,
	.recv = stack_recv,
	.recv_ref = stack_recv_ref,
	.writable = stack_writable,
	.closed = stack_closed,
};

/* ---- listen ---- */

static void
listen_here(struct sm_listener *l)
{
	int ret;

	if (ds == NULL || ds->stack == NULL)
		return;
	ret = sm_tcp_listen(ds->stack, l->port);
	if (ret < 0 && ret != -EADDRINUSE)
		SM_ERR("dpdk: listen on port %u: %s", l->port, strerror(-ret));
}

static void
listen_msg(void *arg)
{
	struct sm_listener *l = arg;

	if (__atomic_load_n(&l->open, __ATOMIC_ACQUIRE))
		listen_here(l);
}

static void
unlisten_msg(void *arg)
{
	struct sm_listener *l = arg;

	if (ds != NULL && ds->stack != NULL && !__atomic_load_n(&l->open, __ATOMIC_ACQUIRE))
		sm_tcp_unlisten(ds->stack, l->port);
}

static int
dpdk_listen(const struct sm_listen_opts *o, struct sm_listener **out)
{
	struct sockaddr_storage ss;
	struct sm_listener *l = NULL;
	unsigned i, li;

	if (sm_net_addr_parse(o->addr, o->port, &ss) < 0)
		return -EINVAL;
	if (ss.ss_family != AF_INET)
		return -EADDRNOTAVAIL;
	{
		uint32_t a = ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr);

		if (a != 0 && a != g.o.ip)
			return -EADDRNOTAVAIL;
	}
	li = port_listener[o->port];
	if (li != 0) {
		l = &listeners[li - 1];
		if (l->open)
			return -EADDRINUSE;
	} else {
		if (nlisteners == MAX_LISTENERS)
			return -ENOSPC;
		l = &listeners[nlisteners++];
	}
	l->port = o->port;
	l->opts = *o;
	l->opts.addr = NULL;
	__atomic_store_n(&l->open, true, __ATOMIC_RELEASE);
	__atomic_store_n(&port_listener[o->port], (uint8_t)(l - listeners + 1), __ATOMIC_RELEASE);
	listen_here(l);
	for (i = 0; i < g.shards; i++)
		if (i != sm_shard_id())
			sm_submit_to(i, listen_msg, l, NULL);
	sm_shard_hold();
	*out = l;
	return 0;
}

static void
dpdk_listener_close(struct sm_listener *l)
{
	unsigned i;

	if (!l->open)
		return;
	__atomic_store_n(&l->open, false, __ATOMIC_RELEASE);
	for (i = 0; i < g.shards; i++) {
		if (i == sm_shard_id())
			unlisten_msg(l);
		else
			sm_submit_to(i, unlisten_msg, l, NULL);
	}
	sm_shard_release();
}

/* ---- connect ---- */

/* A free local port whose replies hash to this shard and that meets @o's rule. */
static int
connect_pick(const struct sm_connect_opts *o, uint32_t rip, struct sm_tcp_conn **tc,
	     struct dconn *d)
{
	uint16_t mod = o->src_port_mod, rem = mod ? o->src_port_rem % mod : 0, p;
	unsigned tries;
	int ret;

	if (ds->port_cursor == 0)
		ds->port_cursor = (uint16_t)(32768 + (ds->rng >> 17) % 28000u);
	for (tries = 0; tries < 28233u; tries++) {
		p = ds->port_cursor;
		ds->port_cursor = (uint16_t)(p + 1 >= 61000 ? 32768 : p + 1);
		if (mod > 0 && p % mod != rem)
			continue;
		if (port_listener[p] != 0)
			continue;
		if (g.shards > 1 && hash_owner(flow_hash(rip, g.o.ip, o->port, p)) != ds->id)
			continue;
		ret = sm_tcp_connect(ds->stack, rip, o->port, p, d, ds->now, tc);
		if (ret != -EADDRINUSE)
			return ret;
	}
	return -EADDRNOTAVAIL;
}

static int
dpdk_connect(const struct sm_connect_opts *o, struct sm_conn **out)
{
	struct sockaddr_storage ss;
	struct dconn *d;
	uint32_t rip;
	int ret;

	if (sm_net_addr_parse(o->addr, o->port, &ss) < 0)
		return -EINVAL;
	if (ss.ss_family != AF_INET)
		return -EAFNOSUPPORT;
	rip = ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr);
	ds->now = now_ns();
	d = conn_new();
	if (d == NULL)
		return -ENOMEM;
	d->c.proto = o->proto;
	d->c.ctx = o->ctx;
	d->c.peer = ss;
	d->connecting = true;
	ret = connect_pick(o, rip, &d->tc, d);
	if (ret < 0) {
		d->gone = true;
		conn_free(d);
		return ret;
	}
	*out = &d->c;
	return 0;
}

/* ---- shard setup ---- */

static void
drain_all(void *arg)
{
	struct dconn *d, *next;
	unsigned i;

	(void)arg;
	if (ds->id == 0)
		for (i = 0; i < nlisteners; i++)
			if (listeners[i].open)
				dpdk_listener_close(&listeners[i]);
	for (d = ds->conns; d != NULL; d = next) {
		next = d->next;
		if (d->c.closing || d->gone)
			continue;
		if (d->attached && d->c.proto->drain != NULL)
			d->c.proto->drain(&d->c);
		else
			dpdk_close(&d->c);
	}
}

static int
dpdk_shard_init(const struct sm_net_config *cfg)
{
	struct sm_poller poller = { .name = "dpdk", .poll = dpdk_poll };
	struct sm_waiter waiter = { .wait = dpdk_wait };
	struct sm_tcpip_config tc;
	unsigned id = sm_shard_id(), i;
	int ret;

	if (!g.port_up || id >= g.shards) {
		SM_ERR("dpdk: shard %u has no queue: the port was set up for %u shards", id,
		       g.shards);
		return -EINVAL;
	}
	/* Shard 0 is EAL's main thread; the others get an lcore id of their own. */
	if (rte_lcore_id() == LCORE_ID_ANY && rte_thread_register() < 0)
		SM_WARN("dpdk: rte_thread_register: %s (no mempool cache on this shard)",
			rte_strerror(rte_errno));
	ds = sm_calloc(1, sizeof(*ds));
	if (ds == NULL)
		return -ENOMEM;
	ds->id = id;
	ds->queue = id < g.nq ? (int)id : -1;
	queue_of_shard[id % SM_MAX_SHARDS] = ds->queue;
	ds->tx_shard = id % g.nq;
	ds->pool = g.pools[id];
	ds->frx.cfg = &g.o.rx;
	ds->ftx.cfg = &g.o.tx;
	if (getrandom(&ds->rng, sizeof(ds->rng), 0) != sizeof(ds->rng) || ds->rng == 0)
		ds->rng = now_ns() | 1;
	sm_rand_seed(&ds->dice, ds->rng);
	memset(&tc, 0, sizeof(tc));
	memcpy(tc.mac, g.mac, 6);
	tc.ip = g.o.ip;
	tc.netmask = g.o.netmask;
	tc.gateway = g.o.gateway;
	tc.mtu = g.mtu;
	tc.ops = &stack_ops;
	tc.ctx = ds;
	tc.max_conns = cfg->max_conns;
	/*
	 * Linux's 200 ms floor rather than RFC 6298's 1 s: on a lab link the
	 * RTT is microseconds, and a loss that fast retransmit cannot repair
	 * (the tail of a request) should cost what it costs on the kernel path.
	 */
	tc.rto_min_ns = 200000000ull;
	if (getrandom(tc.secret, sizeof(tc.secret), 0) != sizeof(tc.secret))
		memcpy(tc.secret, &ds->rng, sizeof(ds->rng));
	ret = sm_tcpip_create(&tc, &ds->stack);
	if (ret < 0) {
		SM_ERR("dpdk: shard %u: TCP/IP stack: %s", id, strerror(-ret));
		goto free_ds;
	}
	ret = sm_pool_init(&ds->conn_pool, "dpdk-conn", sizeof(struct dconn), 64);
	if (ret < 0)
		goto free_stack;
	ret = sm_shard_add_poller(&poller);
	if (ret < 0)
		goto free_pool;
	sm_shard_set_waiter(&waiter);
	ds->stop_hook.fn = drain_all;
	sm_shard_on_stop(&ds->stop_hook);
	/* Listeners opened before this shard's stack existed. */
	for (i = 0; i < MAX_LISTENERS; i++)
		if (__atomic_load_n(&listeners[i].open, __ATOMIC_ACQUIRE))
			listen_here(&listeners[i]);
	return 0;
free_pool:
	sm_pool_destroy(&ds->conn_pool);
free_stack:
	sm_tcpip_destroy(ds->stack);
free_ds:
	sm_free(ds);
	ds = NULL;
	return ret;
}

static void
dpdk_shard_fini(void)
{
	struct sm_tcpip_stats st;
	struct dconn *d;

	if (ds == NULL)
		return;
	sm_tcpip_stats(ds->stack, &st);
	SM_DEBUG("dpdk: rx %lu tx %lu frames, %lu tx drops, %lu forward drops; tcp: %lu segs in, "
		 "%lu out, %lu retransmits (%lu fast, %lu timeouts), %lu out of order, %lu "
		 "duplicate, %lu delayed ACKs, %lu window probes, %lu bytes received zero-copy",
		 (unsigned long)st.rx_frames, (unsigned long)st.tx_frames,
		 (unsigned long)ds->tx_dropped, (unsigned long)ds->fwd_dropped,
		 (unsigned long)st.tcp_segs_in, (unsigned long)st.tcp_segs_out,
		 (unsigned long)st.tcp_retransmits, (unsigned long)st.tcp_fast_retransmits,
		 (unsigned long)st.tcp_timeouts, (unsigned long)st.tcp_ooo_segs,
		 (unsigned long)st.tcp_dup_segs, (unsigned long)st.tcp_delayed_acks,
		 (unsigned long)st.tcp_window_probes, (unsigned long)st.tcp_rx_zerocopy_bytes);
	/* Leftovers after a drain timeout. */
	while ((d = ds->conns) != NULL) {
		d->busy = 0;
		d->tc = NULL;
		d->gone = false;
		conn_gone(d, -ECONNABORTED);
	}
	tx_flush(ds);
	fault_flush(&ds->frx);
	fault_flush(&ds->ftx);
	while (ds->ntx > 0)
		rte_pktmbuf_free(ds->txq[--ds->ntx]);
	sm_shard_remove_stop_hook(&ds->stop_hook);
	sm_tcpip_destroy(ds->stack);
	sm_pool_destroy(&ds->conn_pool);
	sm_free(ds);
	ds = NULL;
	if (rte_lcore_id() != rte_get_main_lcore() && rte_lcore_id() != LCORE_ID_ANY)
		rte_thread_unregister();
}

/* ---- probe: EAL and the port ---- */

/* "0-3,8" for the CPUs this process may run on. */
static void
cpu_list(char *buf, size_t len)
{
	cpu_set_t set;
	size_t off = 0;
	int c, start = -1;

	buf[0] = '\0';
	if (sched_getaffinity(0, sizeof(set), &set) < 0) {
		snprintf(buf, len, "0");
		return;
	}
	for (c = 0; c <= CPU_SETSIZE; c++) {
		bool in = c < CPU_SETSIZE && CPU_ISSET(c, &set);

		if (in && start < 0)
			start = c;
		if (!in && start >= 0) {
			off += (size_t)snprintf(buf + off, len > off ? len - off : 0, "%s%d",
						off ? "," : "", start);
			if (c - 1 > start)
				off += (size_t)snprintf(buf + off, len > off ? len - off : 0, "-%d",
							c - 1);
			start = -1;
		}
	}
	if (off >= len)
		snprintf(buf, len, "0");
}

static unsigned long
hugepages_reserved(void)
{
	static const char *const paths[] = {
		"/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages",
		"/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages",
	};
	unsigned long total = 0, n;
	size_t i;
	FILE *f;

	for (i = 0; i < SM_ARRAY_SIZE(paths); i++) {
		f = fopen(paths[i], "r");
		if (f == NULL)
			continue;
		if (fscanf(f, "%lu", &n) == 1)
			total += n;
		fclose(f);
	}
	return total;
}

static void
eal_error(int err, char *msg, size_t len)
{
	bool no_huge = dpdk_eal_has(&g.o, "--no-huge");
	bool vdev = dpdk_eal_has(&g.o, "--vdev");

	if (err == EALREADY) {
		snprintf(msg, len, "DPDK EAL is already initialised in this process");
	} else if (geteuid() != 0 && (err == EACCES || err == EPERM || err == ENOTSUP)) {
		snprintf(msg, len,
			 "DPDK EAL refused to start (%s): it needs root (or CAP_SYS_ADMIN, "
			 "CAP_NET_ADMIN and CAP_IPC_LOCK): run shardmark as root",
			 rte_strerror(err));
	} else if (!no_huge && hugepages_reserved() == 0 && (err == EACCES || err == ENOMEM)) {
		snprintf(msg, len,
			 "DPDK EAL refused to start: no hugepages are reserved: run "
			 "deploy/host-prep.sh (or echo 1024 > "
			 "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages), or add "
			 "'--no-huge -m 512' to dpdk_args for tests and demos");
	} else if (err == ENOMEM || err == ENODEV) {
		snprintf(msg, len, "DPDK EAL could not set up memory (%s): %s", rte_strerror(err),
			 no_huge ? "raise -m in dpdk_args or free memory"
				 : "reserve more hugepages (deploy/host-prep.sh) or add "
				   "'--no-huge -m 512' to dpdk_args");
	} else if (err == EINVAL) {
		snprintf(msg, len,
			 "DPDK EAL rejected dpdk_args (see the EAL message above): fix the "
			 "argument it names (EAL options: dpdk-testpmd --help)");
	} else if (err == ENOTSUP && vdev) {
		snprintf(msg, len,
			 "DPDK EAL could not create a device (see the message above): check the "
			 "--vdev arguments in dpdk_args (net_tap needs /dev/net/tun and "
			 "CAP_NET_ADMIN; an interface name may be taken)");
	} else {
		snprintf(msg, len, "DPDK EAL refused to start: %s (see the EAL message above)",
			 rte_strerror(err));
	}
}

static int
eal_start(char *err, size_t errlen)
{
	char *argv[MAX_EAL_ARGS + 8];
	char lcores[320], cpus[256], prefix[64];
	sigset_t sigs, old;
	int argc = 0, i, ret;
	bool user_lcores = false;

	argv[argc++] = (char *)(uintptr_t) "shardmark";
	if (g.o.neal > MAX_EAL_ARGS) {
		snprintf(err, errlen, "dpdk_args: more than %d EAL arguments", MAX_EAL_ARGS);
		return -EINVAL;
	}
	for (i = 0; i < g.o.neal; i++) {
		const char *a = g.o.eal[i];

		if ((a[0] == '-' && (a[1] == 'l' || a[1] == 'c') && a[1] != '\0') ||
		    strncmp(a, "--lcores", 8) == 0)
			user_lcores = true;
		argv[argc++] = g.o.eal[i];
	}
	if (!user_lcores) {
		/* One lcore, the main thread, allowed on all our CPUs: EAL starts
		 * no workers and does not re-pin; the runtime pins shard 0. */
		cpu_list(cpus, sizeof(cpus));
		snprintf(lcores, sizeof(lcores), "--lcores=0@(%s)", cpus);
		argv[argc++] = lcores;
	}
	/*
	 * Several shardmark processes (server and stress over memif) must not
	 * share a runtime directory or a telemetry socket: --in-memory, or
	 * with --no-huge (which is legacy memory, incompatible with it) a
	 * per-process file prefix.
	 */
	if (!dpdk_eal_has(&g.o, "--in-memory") && !dpdk_eal_has(&g.o, "--file-prefix") &&
	    !dpdk_eal_has(&g.o, "--proc-type")) {
		if (dpdk_eal_has(&g.o, "--no-huge")) {
			snprintf(prefix, sizeof(prefix), "--file-prefix=shardmark-%d",
				 (int)getpid());
			argv[argc++] = prefix;
			argv[argc++] = (char *)(uintptr_t) "--no-shconf";
		} else {
			argv[argc++] = (char *)(uintptr_t) "--in-memory";
		}
	}
	if (!dpdk_eal_has(&g.o, "--telemetry") && !dpdk_eal_has(&g.o, "--no-telemetry"))
		argv[argc++] = (char *)(uintptr_t) "--no-telemetry";
	argv[argc] = NULL;
	/*
	 * The runtime takes SIGINT, SIGTERM and SIGUSR1 in its signal thread
	 * and blocks them everywhere else; EAL's threads (interrupts,
	 * multi-process) are created here and inherit our mask, so block them
	 * now or the kernel may deliver SIGTERM to one of them and kill us.
	 */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGUSR1);
	sigaddset(&sigs, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &sigs, &old);
	ret = rte_eal_init(argc, argv);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret < 0) {
		eal_error(rte_errno, err, errlen);
		return -(rte_errno ? rte_errno : EINVAL);
	}
	g.eal_up = true;
	return 0;
}

static int
port_start(char *err, size_t errlen)
{
	struct rte_eth_dev_info info;
	struct rte_eth_conf conf;
	struct rte_ether_addr mac;
	uint16_t rxd = RX_DESC, txd = TX_DESC, mtu = 1500;
	unsigned q, i;
	int socket, ret;
	bool rss;

	if (rte_eth_dev_count_avail() == 0) {
		snprintf(err, errlen,
			 "DPDK found no network port: bind a NIC to vfio-pci (dpdk-devbind.py "
			 "--bind=vfio-pci <PCI address>) or add a virtual device to dpdk_args, "
			 "e.g. '--vdev net_tap0,iface=smtap0'");
		return -ENODEV;
	}
	g.port = g.o.port_id;
	if (!rte_eth_dev_is_valid_port(g.port)) {
		snprintf(err, errlen, "DPDK port %u does not exist (%u ports): fix --port-id",
			 g.port, rte_eth_dev_count_avail());
		return -ENODEV;
	}
	ret = rte_eth_dev_info_get(g.port, &info);
	if (ret < 0) {
		snprintf(err, errlen, "DPDK port %u: device info: %s", g.port, strerror(-ret));
		return ret;
	}
	g.nq = SM_MIN(g.shards, SM_MIN((unsigned)info.max_rx_queues, (unsigned)info.max_tx_queues));
	/*
	 * net_memif: the ring count is agreed with the peer at each connect
	 * (the lower of the two sides' queue counts), and a queue past it has
	 * no ring: what is sent there is lost and nothing arrives. The peer
	 * (another shardmark with another smp, a stress client) is unknown
	 * here, so use one queue pair, which every peer has; the other shards
	 * go through shard 0 as on a one-queue NIC.
	 */
	if (strcmp(info.driver_name, "net_memif") == 0)
		g.nq = 1;
	if (g.nq == 0)
		g.nq = 1;
	socket = rte_eth_dev_socket_id(g.port);
	if (socket < 0)
		socket = SOCKET_ID_ANY;
	memset(&conf, 0, sizeof(conf));
	rss = g.nq > 1 && info.reta_size > 0 && info.hash_key_size == sizeof(dpdk_rss_key) &&
	      (info.flow_type_rss_offloads & RTE_ETH_RSS_NONFRAG_IPV4_TCP);
	if (rss) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_key = (uint8_t *)(uintptr_t)dpdk_rss_key;
		conf.rx_adv_conf.rss_conf.rss_key_len = sizeof(dpdk_rss_key);
		conf.rx_adv_conf.rss_conf.rss_hf = RTE_ETH_RSS_NONFRAG_IPV4_TCP;
	}
	ret = rte_eth_dev_configure(g.port, (uint16_t)g.nq, (uint16_t)g.nq, &conf);
	if (ret < 0 && rss) {
		rss = false;
		memset(&conf, 0, sizeof(conf));
		ret = rte_eth_dev_configure(g.port, (uint16_t)g.nq, (uint16_t)g.nq, &conf);
	}
	if (ret < 0) {
		snprintf(err, errlen, "DPDK port %u (%s): configure %u queue pairs: %s", g.port,
			 info.driver_name, g.nq, strerror(-ret));
		return ret;
	}
	rte_eth_dev_adjust_nb_rx_tx_desc(g.port, &rxd, &txd);
	for (i = 0; i < g.shards; i++) {
		char name[RTE_MEMPOOL_NAMESIZE];

		snprintf(name, sizeof(name), "sm_mbuf_%u", i);
		g.pools[i] = rte_pktmbuf_pool_create(name, POOL_MBUFS, POOL_CACHE, MBUF_PRIV_SIZE,
						     RTE_MBUF_DEFAULT_BUF_SIZE, socket);
		if (g.pools[i] == NULL) {
			snprintf(err, errlen,
				 "DPDK: mbuf pool for shard %u (%u mbufs): %s: give EAL more "
				 "memory (-m in dpdk_args, or more hugepages) or run fewer shards",
				 i, POOL_MBUFS, rte_strerror(rte_errno));
			return -ENOMEM;
		}
	}
	for (q = 0; q < g.nq; q++) {
		ret = rte_eth_rx_queue_setup(g.port, (uint16_t)q, rxd, (unsigned)socket, NULL,
					     g.pools[q]);
		if (ret == 0)
			ret = rte_eth_tx_queue_setup(g.port, (uint16_t)q, txd, (unsigned)socket,
						     NULL);
		if (ret < 0) {
			snprintf(err, errlen, "DPDK port %u: queue %u setup: %s", g.port, q,
				 strerror(-ret));
			return ret;
		}
	}
	ret = rte_eth_dev_start(g.port);
	if (ret < 0) {
		snprintf(err, errlen, "DPDK port %u (%s): start: %s", g.port, info.driver_name,
			 strerror(-ret));
		return ret;
	}
	g.port_up = true;
	if (rss) {
		struct rte_eth_rss_reta_entry64 reta[512 / RTE_ETH_RETA_GROUP_SIZE];
		unsigned n = SM_MIN((unsigned)info.reta_size, 512u);

		memset(reta, 0, sizeof(reta));
		for (i = 0; i < n; i++) {
			reta[i / RTE_ETH_RETA_GROUP_SIZE].mask |= 1ull
								  << (i % RTE_ETH_RETA_GROUP_SIZE);
			reta[i / RTE_ETH_RETA_GROUP_SIZE].reta[i % RTE_ETH_RETA_GROUP_SIZE] =
				(uint16_t)((i % DPDK_RETA_SIZE) % g.nq);
		}
		/* The NIC's queue is then our owner for every flow (RETA of
		 * 128 or a multiple, nq == shards); otherwise software steering
		 * still corrects it. */
		g.hw_hash = rte_eth_dev_rss_reta_update(g.port, reta, (uint16_t)n) == 0 &&
			    n % DPDK_RETA_SIZE == 0;
	}
	ret = rte_eth_macaddr_get(g.port, &mac);
	if (ret < 0) {
		snprintf(err, errlen, "DPDK port %u: MAC address: %s", g.port, strerror(-ret));
		return ret;
	}
	memcpy(g.mac, mac.addr_bytes, 6);
	if (rte_eth_dev_get_mtu(g.port, &mtu) < 0 || mtu < 576 || mtu > 9000)
		mtu = 1500;
	g.mtu = mtu;
	SM_INFO("dpdk: port %u (%s) %02x:%02x:%02x:%02x:%02x:%02x, %u queue pair%s for %u "
		"shard%s, %s steering, address %u.%u.%u.%u",
		g.port, info.driver_name, g.mac[0], g.mac[1], g.mac[2], g.mac[3], g.mac[4],
		g.mac[5], g.nq, g.nq == 1 ? "" : "s", g.shards, g.shards == 1 ? "" : "s",
		rss ? "RSS + software" : "software", g.o.ip >> 24, (g.o.ip >> 16) & 0xff,
		(g.o.ip >> 8) & 0xff, g.o.ip & 0xff);
	return 0;
}

static void
dpdk_cleanup(void)
{
	if (g.port_up) {
		rte_eth_dev_stop(g.port);
		rte_eth_dev_close(g.port);
		g.port_up = false;
	}
	if (g.eal_up) {
		char dir[PATH_MAX];

		snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
		rte_eal_cleanup();
		g.eal_up = false;
		/* Our per-process runtime directory: leave nothing behind. */
		if (strstr(dir, "/shardmark-") != NULL)
			rmdir(dir);
	}
}

static int
dpdk_probe(char *err, size_t errlen)
{
	int ret;

	if (g.port_up)
		return 0;
	if (!g.configured) {
		snprintf(err, errlen, "the DPDK driver was not configured (no dpdk_args)");
		return -EINVAL;
	}
	if (g.shards > RTE_MAX_LCORE - 1) {
		snprintf(err, errlen, "DPDK supports at most %d shards (RTE_MAX_LCORE): lower smp",
			 RTE_MAX_LCORE - 1);
		return -EINVAL;
	}
	ret = dpdk_opts_parse(g.args, g.default_ip, &g.o, err, errlen);
	if (ret < 0)
		return ret;
	g.faults = g.o.rx.drop > 0 || g.o.rx.dup > 0 || g.o.rx.reorder > 0 || g.o.rx.delay > 0 ||
		   g.o.tx.drop > 0 || g.o.tx.dup > 0 || g.o.tx.reorder > 0 || g.o.tx.delay > 0;
	ret = eal_start(err, errlen);
	if (ret < 0)
		return ret;
	atexit(dpdk_cleanup);
	ret = port_start(err, errlen);
	if (ret < 0)
		return ret;
	if (g.faults)
		SM_WARN("dpdk: fault injection on: rx drop %g%% dup %g%% reorder %g%% delay %g%%, "
			"tx drop %g%% dup %g%% reorder %g%% delay %g%% (delay %lu us)",
			g.o.rx.drop, g.o.rx.dup, g.o.rx.reorder, g.o.rx.delay, g.o.tx.drop,
			g.o.tx.dup, g.o.tx.reorder, g.o.tx.delay,
			(unsigned long)(g.o.delay_ns / 1000));
	return 0;
}

int
sm_net_dpdk_configure(const struct sm_net_dpdk_opts *o)
{
	char *args = sm_strdup(o->args != NULL ? o->args : "");
	char *ip = sm_strdup(o->default_ipv4 != NULL ? o->default_ipv4 : "");

	if (args == NULL || ip == NULL) {
		sm_free(args);
		sm_free(ip);
		return -ENOMEM;
	}
	sm_free(g.args);
	sm_free(g.default_ip);
	g.args = args;
	g.default_ip = ip;
	g.shards = o->shards > 0 ? o->shards : 1;
	g.configured = true;
	return 0;
}

static const struct sm_net_driver dpdk_driver = {
	.name = "dpdk",
	.probe = dpdk_probe,
	.shard_init = dpdk_shard_init,
	.shard_fini = dpdk_shard_fini,
	.listen = dpdk_listen,
	.listener_close = dpdk_listener_close,
	.connect = dpdk_connect,
	.send = dpdk_send,
	.close = dpdk_close,
	.rx_pending = dpdk_rx_pending,
	.set_rx_paused = dpdk_set_rx_paused,
	.counters = dpdk_counters,
	.counters_read = dpdk_counters_read,
	.port_report = dpdk_port_report,
};

int
sm_net_dpdk_register(void)
{
	return sm_net_register(&dpdk_driver);
}

const char *
sm_net_dpdk_version(void)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), "built with %s", rte_version());
	return buf;
}
