/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * io_uring network driver.
 *
 * One ring per shard, created on the pinned shard thread with
 * SINGLE_ISSUER|DEFER_TASKRUN (completions are processed only when this
 * thread enters the kernel, so they never interrupt a task), falling back to
 * COOP_TASKRUN. TASKRUN_FLAG tells us in shared memory when the kernel has
 * completions waiting, so an idle poll costs no syscall; one
 * io_uring_enter per poll round both submits everything queued in the round
 * and reaps completions.
 *
 * Receive: one multishot recv per connection, filling buffers from a
 * per-shard provided-buffer ring. A buffer is handed to the protocol as a
 * view (sm_iov over an sm_bufseg) and returns to the ring when its last
 * reference goes. When the ring runs dry the recv ends with -ENOBUFS; the
 * connection waits on a "starved" list until buffers come back.
 *
 * A protocol that holds receive buffers (a request waiting for its reply)
 * could drain the ring for everyone; above three quarters of the ring out,
 * received bytes are copied into send buffers and the ring slot goes back at
 * once. A connection that finds the ring dry (-ENOBUFS) or whose receiving
 * is paused keeps a poll for POLLERR|POLLHUP armed, so a peer that resets
 * it meanwhile is noticed and the connection freed: without it, starved
 * connections whose requests held the last buffers waited for each other
 * forever.
 *
 * Back-pressure: while c->rx_paused is set (unsent replies above
 * max_unsent_bytes, or the protocol asked), the multishot recv is cancelled
 * and what was already on its way is held in its ring slots (copied only
 * when the ring runs low); the rest waits in the kernel's socket buffer and
 * TCP slows the peer.
 *
 * Send: a per-connection queue of views; one sendmsg in flight per
 * connection covering up to SEND_IOV_MAX views, so replies produced in one
 * round leave in one syscall-free SQE; short writes resume where they ended.
 *
 * Accept errors (EMFILE, ENFILE, ENOMEM) pause the listener with an
 * exponential back-off from 10 ms to 1 s and a log line at most every 10 s:
 * re-arming at once spun a CPU and logged 70 MB/s under a low fd limit.
 *
 * Connection placement: shard 0 owns each listening socket and its
 * multishot accept, and hands accepted sockets to the chosen shard over the
 * cross-shard rings (Seastar's posix stack does the same). SO_REUSEPORT is
 * not used: the kernel's 4-tuple hash gives no control over placement,
 * which both the balanced policy and the CQL shard-aware port
 * (client port % shards) need, and Seastar measured heavy imbalance with it.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <linux/tls.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "sm_core.h"
#include "sm_net.h"
#include "sm_net_driver.h"
#include "sm_net_uring.h"

#define RING_ENTRIES 1024
#define CQ_ENTRIES 8192
#define BUF_GROUP 0
#define SEND_IOV_MAX 64
#define MAX_LISTENERS 16
#define ACCEPT_BACKLOG 1024
#define CQE_BATCH 256
#define ACCEPT_BACKOFF_MIN_MS 10
#define ACCEPT_BACKOFF_MAX_MS 1000
#define ACCEPT_LOG_INTERVAL_MS 10000
/* A closing connection whose peer does not take the rest of its bytes is reset after this. */
#define CLOSE_LINGER_MS 30000

enum op_kind {
	OP_ACCEPT = 1,
	OP_RECV,
	OP_SEND,
	OP_CONNECT,
	OP_WAKE,
	OP_CANCEL,
	OP_WATCH, /* POLLERR|POLLHUP on a connection that has no recv armed */
};
#define OP_MASK 0xfull

struct rx_buf {
	struct sm_bufseg seg;
	uint16_t bid;
};

struct uconn {
	struct sm_conn c;   /* first: the protocol's view */
	struct uconn *prev; /* shard's connection list */
	struct uconn *next;
	struct uconn *flush_next; /* on the shard's send flush list */
	struct uconn *starved_next;
	int fd;
	int err;       /* first error, reported to closed() */
	unsigned refs; /* SQEs in flight, list memberships, callbacks running */
	bool dying;    /* tear down when refs reaches 0 */
	bool send_inflight;
	bool on_flush_list;
	bool starved;
	bool connecting;
	bool attached;	  /* the protocol accepted it: closed() is owed */
	bool accepted;	  /* server side, counted for placement */
	bool recv_armed;  /* a (multishot) recv is in flight */
	bool recv_cancel; /* ... and a cancel for it has been sent */
	bool watch_armed; /* the POLLERR|POLLHUP poll is in flight */
	bool eof_held;	  /* the peer's FIN came while paused: close after held */
	bool on_resume_list;
	struct uconn *resume_next;
	struct sm_iovq sq;   /* views to send */
	struct sm_iovq held; /* bytes received while paused, copied */
	struct sm_timer linger; /* closing with bytes still queued */
	struct iovec iov[SEND_IOV_MAX];
	struct msghdr msg;
};

struct sm_listener {
	uint32_t refs; /* shard 0's, plus one per connection being handed off */
	int fd;
	unsigned idx;
	bool closing;
	bool accept_armed;
	bool backing_off; /* an accept error paused it: the timer re-arms */
	struct sm_listen_opts opts;
	unsigned rr; /* round-robin cursor for ties */
	unsigned backoff_ms;
	struct sm_timer backoff;
	struct sm_ratelimit log_rl;
};

struct uring_shard {
	struct io_uring ring;
	bool check_taskrun; /* TASKRUN_FLAG set: the kernel flags pending work */
	struct sm_net_config cfg;
	/* provided receive buffers */
	struct io_uring_buf_ring *br;
	size_t br_bytes;
	char *bufs;
	size_t bufs_bytes;
	struct rx_buf *rxb;
	unsigned buf_mask;
	unsigned bufs_out; /* handed to the kernel's receives or to protocols */
	int br_pending;	   /* buffers added but not yet published */
	/* connections */
	struct sm_pool conn_pool;
	struct uconn *conns;
	struct uconn *flush_head;
	struct uconn **flush_tail;
	struct uconn *starved;
	struct uconn *resumed; /* resumed connections with held data or no recv */
	unsigned nconns;
	/* cross-shard wakeup read */
	uint64_t wake_val;
	bool wake_armed;
	struct sm_stop_hook stop_hook;
	uint16_t port_cursor;
	uint64_t *counters; /* this shard's row of uring_counters_v (UC_*) */
};

static __thread struct uring_shard *us;

/* Listeners live on shard 0; the table is read by other shards when a
 * hand-off arrives (index and fd travel in the message). */
static struct sm_listener *listeners[MAX_LISTENERS];
/* Accepted connections closed per shard: written by the owner, read by
 * shard 0 for balanced placement. */
static uint64_t accepted_closed[SM_MAX_SHARDS];
/* Accepted connections placed per shard, over every listener: shard 0
 * only. It must count what accepted_closed counts: a per-listener count
 * minus every listener's closes underflowed once another listener's
 * connections had closed on a shard, and that shard was never picked. */
static uint64_t accepted_assigned[SM_MAX_SHARDS];

static const struct sm_net_driver uring_driver;

/*
 * The driver's own counters (shardmark_net_*): what each io_uring_enter(2)
 * carried, and where the kernel's side ran short. Written by the owning
 * shard, read by /metrics on any (relaxed), as lib/core's counters.
 */
enum {
	UC_SQES,	/* submission queue entries handed to the kernel */
	UC_CQES,	/* completions reaped */
	UC_SENDS,	/* sendmsg operations */
	UC_SHORT_SENDS, /* sends the kernel took only part of (the rest goes again) */
	UC_RECVS,	/* receive completions that carried data */
	UC_RX_NOBUFS,	/* receives that found the buffer ring empty (starvation) */
	UC_NR,
};

static const struct sm_net_counter uring_counter_desc[UC_NR] = {
	[UC_SQES] = { "uring_sqes_total",
		      "Submission queue entries handed to the kernel (per io_enters_total: what "
		      "one io_uring_enter carried)." },
	[UC_CQES] = { "uring_cqes_total", "Completions reaped." },
	[UC_SENDS] = { "uring_sends_total", "sendmsg operations (one per connection per round)." },
	[UC_SHORT_SENDS] = { "uring_short_sends_total",
			     "Sends the kernel took only part of: the socket buffer was full." },
	[UC_RECVS] = { "uring_recvs_total", "Receive completions that carried data." },
	[UC_RX_NOBUFS] = { "uring_rx_buffer_starvation_total",
			   "Receives that found the provided-buffer ring empty (ENOBUFS): raise "
			   "rx_buffers." },
};

static uint64_t uring_counters_v[SM_MAX_SHARDS][UC_NR] SM_CACHE_ALIGNED;

#define UC_INC(c, n) (us->counters[c] += (n))

static unsigned
uring_counters(const struct sm_net_counter **desc)
{
	*desc = uring_counter_desc;
	return UC_NR;
}

static void
uring_counters_read(unsigned shard, uint64_t *vals)
{
	unsigned i;

	for (i = 0; i < UC_NR; i++)
		vals[i] = SM_READ_ONCE(uring_counters_v[shard % SM_MAX_SHARDS][i]);
}

static inline uint64_t
op_data(void *obj, enum op_kind kind)
{
	return (uint64_t)(uintptr_t)obj | kind;
}

/* Get an SQE, flushing the SQ to the kernel when it is full. */
static struct io_uring_sqe *
get_sqe(void)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&us->ring);

	if (SM_UNLIKELY(sqe == NULL)) {
		UC_INC(UC_SQES, (unsigned)SM_MAX(io_uring_submit(&us->ring), 0));
		SM_STAT_INC(io_enters);
		sqe = io_uring_get_sqe(&us->ring);
	}
	return sqe;
}

/* ---- receive buffers ---- */

static void
rx_buf_release(struct sm_bufseg *seg)
{
	struct rx_buf *b = sm_container_of(seg, struct rx_buf, seg);

	io_uring_buf_ring_add(us->br, us->bufs + (size_t)b->bid * us->cfg.rx_buffer_size,
			      us->cfg.rx_buffer_size, b->bid, us->buf_mask, us->br_pending);
	us->br_pending++;
	us->bufs_out--;
}

static void
rx_bufs_publish(void)
{
	if (us->br_pending > 0) {
		io_uring_buf_ring_advance(us->br, us->br_pending);
		us->br_pending = 0;
	}
}

static int
rx_bufs_setup(void)
{
	struct io_uring_buf_reg reg;
	unsigned n = us->cfg.rx_buffers, i;
	int ret;

	/* liburing 2.3 has no io_uring_setup_buf_ring: map and register the
	 * ring ourselves (page aligned, as the kernel requires). */
	us->br_bytes = (size_t)n * sizeof(struct io_uring_buf);
	us->br = mmap(NULL, us->br_bytes, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1,
		      0);
	if (us->br == MAP_FAILED) {
		us->br = NULL;
		return -errno;
	}
	/* Touched first on the pinned shard thread: NUMA-local pages. */
	us->bufs_bytes = (size_t)n * us->cfg.rx_buffer_size;
	us->bufs = mmap(NULL, us->bufs_bytes, PROT_READ | PROT_WRITE,
			MAP_ANONYMOUS | MAP_PRIVATE | MAP_POPULATE, -1, 0);
	if (us->bufs == MAP_FAILED) {
		us->bufs = NULL;
		ret = -errno;
		goto unmap_ring;
	}
	us->rxb = sm_calloc(n, sizeof(*us->rxb));
	if (us->rxb == NULL) {
		ret = -ENOMEM;
		goto unmap_bufs;
	}
	io_uring_buf_ring_init(us->br);
	memset(&reg, 0, sizeof(reg));
	reg.ring_addr = (unsigned long)us->br;
	reg.ring_entries = n;
	reg.bgid = BUF_GROUP;
	ret = io_uring_register_buf_ring(&us->ring, &reg, 0);
	if (ret < 0)
		goto free_desc;
	us->buf_mask = io_uring_buf_ring_mask(n);
	for (i = 0; i < n; i++) {
		us->rxb[i].bid = (uint16_t)i;
		us->rxb[i].seg.release = rx_buf_release;
		io_uring_buf_ring_add(us->br, us->bufs + (size_t)i * us->cfg.rx_buffer_size,
				      us->cfg.rx_buffer_size, (uint16_t)i, us->buf_mask, (int)i);
	}
	io_uring_buf_ring_advance(us->br, (int)n);
	return 0;
free_desc:
	sm_free(us->rxb);
	us->rxb = NULL;
unmap_bufs:
	munmap(us->bufs, us->bufs_bytes);
	us->bufs = NULL;
unmap_ring:
	munmap(us->br, us->br_bytes);
	us->br = NULL;
	return ret;
}

/* ---- connections ---- */

static void
arm_recv(struct uconn *u)
{
	struct io_uring_sqe *sqe = get_sqe();

	io_uring_prep_recv_multishot(sqe, u->fd, NULL, 0, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = BUF_GROUP;
	io_uring_sqe_set_data64(sqe, op_data(u, OP_RECV));
	u->refs++;
	u->recv_armed = true;
	u->recv_cancel = false;
}

/* Notice a reset while no recv is armed (starved or paused): see the top. */
static void
arm_watch(struct uconn *u)
{
	struct io_uring_sqe *sqe;

	if (u->watch_armed || u->fd < 0 || u->dying)
		return;
	sqe = get_sqe();
	io_uring_prep_poll_add(sqe, u->fd, POLLERR | POLLHUP);
	io_uring_sqe_set_data64(sqe, op_data(u, OP_WATCH));
	u->watch_armed = true;
	u->refs++;
}

static void
conn_abort(struct uconn *u, int err);

/* The peer took none of the last bytes for CLOSE_LINGER_MS: give up on them. */
static void
linger_expired(void *arg)
{
	struct uconn *u = arg;

	SM_STAT_INC(conns_timed_out);
	conn_abort(u, -ETIMEDOUT);
}

static struct uconn *
conn_new(int fd)
{
	struct uconn *u = sm_pool_get(&us->conn_pool);

	if (u == NULL)
		return NULL;
	memset(u, 0, sizeof(*u));
	sm_timer_init(&u->linger, linger_expired, u);
	u->c.drv = &uring_driver;
	u->c.shard = sm_shard_id();
	u->fd = fd;
	u->next = us->conns;
	if (us->conns != NULL)
		us->conns->prev = u;
	us->conns = u;
	us->nconns++;
	sm_shard_hold();
	return u;
}

/* Free the connection: nothing references it any more. */
static void
conn_teardown(struct uconn *u)
{
	if (u->fd >= 0)
		close(u->fd);
	u->fd = -1;
	sm_timer_cancel(&u->linger);
	sm_iovq_fini(&u->sq);
	sm_iovq_fini(&u->held);
	u->c.send_queued = 0;
	if (u->prev != NULL)
		u->prev->next = u->next;
	else
		us->conns = u->next;
	if (u->next != NULL)
		u->next->prev = u->prev;
	us->nconns--;
	if (u->attached) {
		SM_STAT_INC(conns_closed);
		if (u->accepted)
			__atomic_fetch_add(&accepted_closed[u->c.shard], 1, __ATOMIC_RELAXED);
		u->c.proto->closed(&u->c, u->err);
	}
	sm_conn_net_fini(&u->c);
	sm_pool_put(&us->conn_pool, u);
	sm_shard_release();
}

static inline void
conn_get(struct uconn *u)
{
	u->refs++;
}

static inline void
conn_put(struct uconn *u)
{
	if (--u->refs == 0 && u->dying)
		conn_teardown(u);
}

/*
 * End the connection. shutdown(2) sends FIN after the bytes already handed
 * to the kernel and ends the multishot recv (and a send stuck on a full
 * window), so their final completions arrive and drop the last references.
 */
static void
conn_kill(struct uconn *u)
{
	struct uconn **pp;

	if (u->dying)
		return;
	u->dying = true;
	u->c.closing = true;
	if (u->starved) {
		for (pp = &us->starved; *pp != NULL; pp = &(*pp)->starved_next) {
			if (*pp == u) {
				*pp = u->starved_next;
				break;
			}
		}
		u->starved = false;
		u->refs--;
	}
	if (u->fd >= 0 && !u->connecting)
		shutdown(u->fd, SHUT_RDWR);
	if (u->refs == 0)
		conn_teardown(u);
}

/* Stop at once: drop what is queued. */
static void
conn_abort(struct uconn *u, int err)
{
	if (u->err == 0)
		u->err = err;
	conn_kill(u);
}

/* Graceful end, once everything queued has been sent. */
static void
conn_finish_close(struct uconn *u)
{
	conn_kill(u);
}

static void
uring_close(struct sm_conn *c)
{
	struct uconn *u = (struct uconn *)c;

	if (c->closing)
		return;
	c->closing = true;
	if (!u->send_inflight && u->sq.len == 0)
		conn_finish_close(u);
	else /* the last send completion finishes the close, or the linger timer */
		sm_timer_arm(&u->linger, CLOSE_LINGER_MS);
}

static void
flush_list_add(struct uconn *u)
{
	if (u->on_flush_list)
		return;
	conn_get(u);
	u->on_flush_list = true;
	u->flush_next = NULL;
	*us->flush_tail = u;
	us->flush_tail = &u->flush_next;
}

static int
uring_send(struct sm_conn *c, const struct sm_iov *iov, unsigned n)
{
	struct uconn *u = (struct uconn *)c;
	int ret;

	if (c->closing || u->connecting)
		return -EPIPE;
	ret = sm_iovq_push(&u->sq, iov, n);
	if (ret < 0)
		return ret;
	c->send_queued = u->sq.bytes;
	if (!u->send_inflight && u->sq.len > 0)
		flush_list_add(u);
	sm_conn_unsent_changed(c);
	return 0;
}

static void
issue_send(struct uconn *u)
{
	struct io_uring_sqe *sqe;
	uint32_t n = SM_MIN(u->sq.len, (uint32_t)SEND_IOV_MAX), i;

	for (i = 0; i < n; i++) {
		struct sm_iov *v = sm_iovq_at(&u->sq, i);

		u->iov[i].iov_base = (void *)(uintptr_t)v->base;
		u->iov[i].iov_len = v->len;
	}
	memset(&u->msg, 0, sizeof(u->msg));
	u->msg.msg_iov = u->iov;
	u->msg.msg_iovlen = n;
	sqe = get_sqe();
	io_uring_prep_sendmsg(sqe, u->fd, &u->msg, MSG_NOSIGNAL);
	io_uring_sqe_set_data64(sqe, op_data(u, OP_SEND));
	UC_INC(UC_SENDS, 1);
	u->send_inflight = true;
	conn_get(u);
}

static unsigned
flush_sends(void)
{
	unsigned n = 0;
	struct uconn *u;

	while ((u = us->flush_head) != NULL) {
		us->flush_head = u->flush_next;
		if (us->flush_head == NULL)
			us->flush_tail = &us->flush_head;
		u->on_flush_list = false;
		if (!u->dying && !u->send_inflight && u->sq.len > 0) {
			issue_send(u);
			n++;
		}
		conn_put(u);
	}
	return n;
}

/* Bytes the send in flight asked for. */
static size_t
send_len(const struct uconn *u)
{
	size_t n = 0, i;

	for (i = 0; i < u->msg.msg_iovlen; i++)
		n += u->iov[i].iov_len;
	return n;
}

static void
on_send(struct uconn *u, int res)
{
	u->send_inflight = false;
	if (res < 0) {
		conn_abort(u, res);
		goto put;
	}
	SM_STAT_ADD(bytes_out, (uint64_t)res);
	if ((size_t)res < send_len(u))
		UC_INC(UC_SHORT_SENDS, 1);
	sm_iovq_consume(&u->sq, (size_t)res);
	u->c.send_queued = u->sq.bytes;
	if (u->dying)
		goto put;
	sm_conn_unsent_changed(&u->c);
	if (u->sq.len > 0) {
		issue_send(u);
		goto put;
	}
	sm_conn_tx_idle(&u->c);
	if (u->c.closing)
		conn_finish_close(u);
	else if (u->c.proto->drained != NULL)
		u->c.proto->drained(&u->c);
put:
	conn_put(u); /* the send's reference */
}

/* Queue @u to get its held bytes and its recv back at the next poll round. */
static void
resume_list_add(struct uconn *u)
{
	if (u->on_resume_list || u->dying)
		return;
	conn_get(u);
	u->on_resume_list = true;
	u->resume_next = us->resumed;
	us->resumed = u;
}

/* Copy @v into a buffer of our own: the receive ring slot can go back now. */
static int
copy_aside(const struct sm_iov *v, struct sm_iov *out)
{
	struct sm_sendbuf *b = sm_sendbuf_dup(v->base, v->len);

	if (b == NULL)
		return -ENOMEM;
	*out = (struct sm_iov){ .seg = &b->seg, .base = b->data, .len = v->len };
	SM_STAT_ADD(bytes_in_copied, (uint64_t)v->len);
	return 0;
}

/* Received bytes in a ring slot: to the protocol, or aside while paused. */
static void
deliver_rx(struct uconn *u, const struct sm_iov *v)
{
	bool low = us->bufs_out > us->cfg.rx_buffers - us->cfg.rx_buffers / 4;
	struct sm_iov copy;
	int ret;

	if (u->c.rx_paused || u->held.len > 0) {
		/*
		 * Paused, or older bytes still held: keep the order. The ring
		 * slot itself is kept (what the socket held when the pause
		 * came, up to its receive buffer, costs no heap), unless the
		 * ring runs low.
		 */
		if (!low) {
			ret = sm_iovq_push(&u->held, v, 1);
		} else if ((ret = copy_aside(v, &copy)) == 0) {
			ret = sm_iovq_push(&u->held, &copy, 1);
			sm_bufseg_put(copy.seg);
		}
		if (ret < 0)
			conn_abort(u, ret);
		else if (!u->c.rx_paused)
			resume_list_add(u);
		return;
	}
	if (low) {
		/* The ring runs low: the protocol must not hold a slot. */
		if (copy_aside(v, &copy) < 0) {
			conn_abort(u, -ENOMEM);
			return;
		}
		u->c.proto->received(&u->c, &copy, 1);
		sm_bufseg_put(copy.seg);
		return;
	}
	u->c.proto->received(&u->c, v, 1);
}

/* Hand the bytes held while paused to the protocol, oldest first. */
static void
deliver_held(struct uconn *u)
{
	struct sm_iov v;

	while (u->held.len > 0 && !u->c.rx_paused && !u->c.closing && !u->dying) {
		v = *sm_iovq_at(&u->held, 0);
		sm_bufseg_get(v.seg); /* the protocol may pause and we consume */
		sm_iovq_consume(&u->held, v.len);
		u->c.proto->received(&u->c, &v, 1);
		sm_bufseg_put(v.seg);
	}
}

static void
on_recv(struct uconn *u, int res, unsigned flags)
{
	bool more = flags & IORING_CQE_F_MORE;

	/* A finished recv's reference covers the callbacks below; a multishot
	 * one that goes on needs a temporary one. */
	if (more)
		conn_get(u);
	else
		u->recv_armed = false;
	if (res > 0) {
		struct rx_buf *b = &us->rxb[flags >> IORING_CQE_BUFFER_SHIFT];
		struct sm_iov v = {
			.seg = &b->seg,
			.base = us->bufs + (size_t)b->bid * us->cfg.rx_buffer_size,
			.len = (size_t)res,
		};

		b->seg.refcnt = 1;
		us->bufs_out++;
		SM_STAT_ADD(bytes_in, (uint64_t)res);
		UC_INC(UC_RECVS, 1);
		if (!u->c.closing)
			deliver_rx(u, &v);
		sm_bufseg_put(&b->seg);
	} else if (res == -ENOBUFS && !u->c.closing) {
		/* The buffer ring ran dry: wait for buffers to come back. */
		UC_INC(UC_RX_NOBUFS, 1);
		if (!u->c.rx_paused) {
			conn_get(u);
			u->starved = true;
			u->starved_next = us->starved;
			us->starved = u;
		}
		arm_watch(u);
	} else if (res == 0 && !u->c.closing) {
		/* Peer closed its side: send what is queued, then close (after
		 * the protocol has seen what we held for it). */
		if (u->held.len > 0)
			u->eof_held = true;
		else
			uring_close(&u->c);
	} else if (res == -ECANCELED && u->recv_cancel) {
		/* Our pause ended the recv; a resume meanwhile re-arms below. */
	} else if (res < 0 && !u->c.closing) {
		conn_abort(u, res);
	}
	if (!u->recv_armed && (res > 0 || res == -ECANCELED) && !u->c.closing && !u->dying) {
		if (u->c.rx_paused)
			arm_watch(u);
		else if (u->held.len == 0)
			arm_recv(u);
	}
	conn_put(u);
}

static void
uring_set_rx_paused(struct sm_conn *c, bool paused)
{
	struct uconn *u = (struct uconn *)c;
	struct io_uring_sqe *sqe;

	if (u->dying || u->connecting)
		return;
	if (!paused) {
		resume_list_add(u);
		return;
	}
	if (u->recv_armed && !u->recv_cancel) {
		sqe = get_sqe();
		io_uring_prep_cancel64(sqe, op_data(u, OP_RECV), 0);
		io_uring_sqe_set_data64(sqe, op_data(NULL, OP_CANCEL));
		u->recv_cancel = true;
	}
	arm_watch(u);
}

/* Resumed connections: held bytes first, then a recv again. */
static unsigned
run_resumed(void)
{
	unsigned n = 0;
	struct uconn *u;

	while ((u = us->resumed) != NULL) {
		us->resumed = u->resume_next;
		u->on_resume_list = false;
		if (!u->dying && !u->c.rx_paused) {
			deliver_held(u);
			if (!u->dying && !u->c.rx_paused && !u->c.closing && u->held.len == 0) {
				if (u->eof_held) {
					u->eof_held = false;
					uring_close(&u->c);
				} else if (!u->recv_armed && !u->starved) {
					arm_recv(u);
				}
			}
		}
		conn_put(u);
		n++;
	}
	return n;
}

static void
on_watch(struct uconn *u, int res)
{
	u->watch_armed = false;
	/* Reset while nothing else would notice: end it (held bytes go too). */
	if (res > 0 && (res & (POLLERR | POLLHUP)) && !u->dying && !u->recv_armed)
		conn_abort(u, -ECONNRESET);
	conn_put(u);
}

static void
rearm_starved(void)
{
	unsigned free_bufs = us->cfg.rx_buffers - us->bufs_out;
	struct uconn *u;

	/* Re-arm only with some headroom, or the recv fails again at once. */
	while (us->starved != NULL && free_bufs >= us->cfg.rx_buffers / 8) {
		u = us->starved;
		us->starved = u->starved_next;
		u->starved = false;
		if (!u->c.closing && !u->c.rx_paused && !u->recv_armed)
			arm_recv(u);
		conn_put(u);
	}
}

/* ---- accept and hand-off ---- */

static void
set_nodelay(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* On the owning shard: take over an accepted socket. */
static void
adopt(int fd, struct sm_listener *l)
{
	struct uconn *u;
	socklen_t len;

	if (sm_shard_stopping()) {
		close(fd);
		return;
	}
	u = conn_new(fd);
	if (u == NULL) {
		SM_WARN("out of memory: refusing a connection");
		close(fd);
		return;
	}
	u->accepted = true;
	u->c.proto = l->opts.proto;
	set_nodelay(fd);
	len = sizeof(u->c.peer);
	getpeername(fd, (struct sockaddr *)&u->c.peer, &len);
	len = sizeof(u->c.local);
	getsockname(fd, (struct sockaddr *)&u->c.local, &len);
	SM_STAT_INC(conns_opened);
	u->attached = true;
	if (u->c.proto->accepted(&u->c, l->opts.ctx) < 0) {
		u->attached = false;
		SM_STAT_INC(conns_closed);
		__atomic_fetch_add(&accepted_closed[u->c.shard], 1, __ATOMIC_RELAXED);
		conn_abort(u, 0);
		return;
	}
	arm_recv(u);
}

/* Drop a reference; the last one (on any shard) frees the listener. */
static void
listener_put(struct sm_listener *l)
{
	if (__atomic_sub_fetch(&l->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	__atomic_store_n(&listeners[l->idx], NULL, __ATOMIC_RELEASE);
	sm_free(l);
}

static void
adopt_msg(void *arg)
{
	uintptr_t v = (uintptr_t)arg;
	struct sm_listener *l = __atomic_load_n(&listeners[v >> 32], __ATOMIC_ACQUIRE);

	/* The hand-off holds a reference: the listener outlives the message
	 * even when shard 0 has closed it meanwhile. */
	adopt((int)(v & 0xffffffffu), l);
	listener_put(l);
}

static unsigned
place(struct sm_listener *l, int fd)
{
	unsigned n = sm_shard_count(), i, best = 0;
	uint64_t best_load = UINT64_MAX;

	if (l->opts.placement == SM_PLACE_SHARD)
		return l->opts.shard < n ? l->opts.shard : 0;
	if (l->opts.placement == SM_PLACE_SRC_PORT) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		uint16_t port = 0;

		if (getpeername(fd, (struct sockaddr *)&ss, &len) == 0)
			port = ntohs(ss.ss_family == AF_INET6
					     ? ((struct sockaddr_in6 *)&ss)->sin6_port
					     : ((struct sockaddr_in *)&ss)->sin_port);
		return port % n;
	}
	/* Fewest active accepted connections; ties go round-robin. */
	for (i = 0; i < n; i++) {
		unsigned s = (l->rr + i) % n;
		uint64_t load = accepted_assigned[s] -
				__atomic_load_n(&accepted_closed[s], __ATOMIC_RELAXED);

		if (load < best_load) {
			best_load = load;
			best = s;
		}
	}
	l->rr = (best + 1) % n;
	return best;
}

static void
arm_accept(struct sm_listener *l)
{
	struct io_uring_sqe *sqe = get_sqe();

	io_uring_prep_multishot_accept(sqe, l->fd, NULL, NULL, SOCK_CLOEXEC);
	io_uring_sqe_set_data64(sqe, op_data(l, OP_ACCEPT));
	l->accept_armed = true;
}

/* The accept has ended after a close: the port is released now. */
static void
listener_closed(struct sm_listener *l)
{
	close(l->fd);
	l->fd = -1;
	sm_shard_release();
	listener_put(l);
}

static void
accept_backoff_done(void *arg)
{
	struct sm_listener *l = arg;

	l->backing_off = false;
	if (l->accept_armed)
		return; /* the cancelled accept's last completion re-arms or closes */
	if (l->closing)
		listener_closed(l);
	else
		arm_accept(l);
}

/*
 * accept(2) failed: pause the listener (backlog connections wait in the
 * kernel), longer each time in a row, and say so at most every 10 s.
 */
static void
accept_failed(struct sm_listener *l, int res)
{
	struct io_uring_sqe *sqe;
	uint64_t suppressed;
	bool fds = res == -EMFILE || res == -ENFILE;

	SM_STAT_INC(accept_errors);
	l->backoff_ms = l->backoff_ms == 0 ? ACCEPT_BACKOFF_MIN_MS
					   : SM_MIN(l->backoff_ms * 2, ACCEPT_BACKOFF_MAX_MS);
	if (sm_ratelimit_ok(&l->log_rl, ACCEPT_LOG_INTERVAL_MS, &suppressed))
		SM_WARN("accept on port %u: %s%s; pausing accepts for %u ms (%" PRIu64
			" more failures since the last message)",
			l->opts.port, strerror(-res),
			fds ? " (raise the open file limit: ulimit -n, or LimitNOFILE= in systemd)"
			    : "",
			l->backoff_ms, suppressed);
	if (l->accept_armed) {
		sqe = get_sqe();
		io_uring_prep_cancel64(sqe, op_data(l, OP_ACCEPT), 0);
		io_uring_sqe_set_data64(sqe, op_data(NULL, OP_CANCEL));
	}
	l->backing_off = true;
	sm_timer_init(&l->backoff, accept_backoff_done, l);
	if (sm_timer_arm(&l->backoff, l->backoff_ms) < 0)
		l->backing_off = false; /* no timer: retry at once, as before */
}

static void
on_accept(struct sm_listener *l, int res, unsigned flags)
{
	unsigned target;

	if (!(flags & IORING_CQE_F_MORE))
		l->accept_armed = false;
	if (res >= 0)
		l->backoff_ms = 0;
	if (res >= 0) {
		if (l->closing) {
			close(res);
		} else {
			target = place(l, res);
			accepted_assigned[target]++;
			if (target == sm_shard_id())
				adopt(res, l);
			else {
				__atomic_add_fetch(&l->refs, 1, __ATOMIC_RELAXED);
				if (sm_submit_to(
					    target, adopt_msg,
					    (void *)(((uintptr_t)l->idx << 32) | (unsigned)res),
					    NULL) < 0) {
					close(res);
					listener_put(l);
				}
			}
		}
	} else if (res != -ECANCELED && !l->closing && !l->backing_off) {
		accept_failed(l, res);
	}
	if (!l->accept_armed && !l->backing_off) {
		if (l->closing)
			listener_closed(l);
		else
			arm_accept(l);
	}
}

static int
uring_listen(const struct sm_listen_opts *o, struct sm_listener **out)
{
	struct sockaddr_storage ss;
	struct sm_listener *l;
	unsigned idx;
	int fd, one = 1, len, ret;

	for (idx = 0;
	     idx < MAX_LISTENERS && __atomic_load_n(&listeners[idx], __ATOMIC_ACQUIRE) != NULL;
	     idx++)
		;
	if (idx == MAX_LISTENERS)
		return -ENOSPC;
	len = sm_net_addr_parse(o->addr, o->port, &ss);
	if (len < 0)
		return len;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, (socklen_t)len) < 0 ||
	    listen(fd, o->backlog > 0 ? o->backlog : ACCEPT_BACKLOG) < 0) {
		ret = -errno;
		goto close_fd;
	}
	l = sm_calloc(1, sizeof(*l));
	if (l == NULL) {
		ret = -ENOMEM;
		goto close_fd;
	}
	l->refs = 1;
	l->fd = fd;
	l->idx = idx;
	l->opts = *o;
	__atomic_store_n(&listeners[idx], l, __ATOMIC_RELEASE);
	sm_shard_hold();
	arm_accept(l);
	*out = l;
	return 0;
close_fd:
	close(fd);
	return ret;
}

static void
uring_listener_close(struct sm_listener *l)
{
	struct io_uring_sqe *sqe;

	if (l->closing)
		return;
	l->closing = true;
	if (l->backing_off && !l->accept_armed) {
		/* The back-off timer is pending: close now instead. */
		sm_timer_cancel(&l->backoff);
		l->backing_off = false;
	}
	if (!l->accept_armed) {
		listener_closed(l);
		return;
	}
	/* The kernel holds the file while the accept is armed: cancel it;
	 * the accept's final completion frees the listener. */
	sqe = get_sqe();
	io_uring_prep_cancel64(sqe, op_data(l, OP_ACCEPT), 0);
	io_uring_sqe_set_data64(sqe, op_data(NULL, OP_CANCEL));
}

/* ---- connect ---- */

static int
bind_source_port(int fd, int family, uint16_t mod, uint16_t rem)
{
	struct sockaddr_storage ss;
	unsigned tries;
	uint16_t p;

	/*
	 * Walk the ephemeral range in steps of @mod from a per-shard cursor
	 * that starts somewhere different in every process: a fixed start made
	 * back-to-back runs reuse the previous run's 4-tuples, still in
	 * TIME_WAIT on the server.
	 */
	if (us->port_cursor == 0)
		us->port_cursor = (uint16_t)(32768 + ((uint64_t)getpid() * 2654435761u +
						      sm_now_ns() / 1000 + sm_shard_id() * 7919u) %
							     28000u);
	for (tries = 0; tries < 28000u / mod + 1; tries++) {
		p = us->port_cursor;
		p = (uint16_t)(p - p % mod + rem);
		if (p < 32768)
			p = (uint16_t)(p + mod);
		us->port_cursor = (uint16_t)(p + mod >= 61000 ? 32768 : p + mod);
		sm_net_addr_parse(family == AF_INET6 ? "::" : "0.0.0.0", p, &ss);
		if (bind(fd, (struct sockaddr *)&ss,
			 family == AF_INET6 ? sizeof(struct sockaddr_in6)
					    : sizeof(struct sockaddr_in)) == 0)
			return 0;
		if (errno != EADDRINUSE)
			return -errno;
	}
	return -EADDRNOTAVAIL;
}

static int
uring_connect(const struct sm_connect_opts *o, struct sm_conn **out)
{
	struct io_uring_sqe *sqe;
	struct uconn *u;
	int fd, len, ret, one = 1;

	u = NULL;
	len = sm_net_addr_parse(o->addr, o->port, &(struct sockaddr_storage){ 0 });
	if (len < 0)
		return len;
	fd = socket(len == sizeof(struct sockaddr_in6) ? AF_INET6 : AF_INET,
		    SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (o->src_port_mod > 0) {
		ret = bind_source_port(fd, len == sizeof(struct sockaddr_in6) ? AF_INET6 : AF_INET,
				       o->src_port_mod, o->src_port_rem % o->src_port_mod);
		if (ret < 0)
			goto close_fd;
	}
	set_nodelay(fd);
	u = conn_new(fd);
	if (u == NULL) {
		ret = -ENOMEM;
		goto close_fd;
	}
	u->c.proto = o->proto;
	u->c.ctx = o->ctx;
	sm_net_addr_parse(o->addr, o->port, &u->c.peer);
	u->connecting = true;
	sqe = get_sqe();
	io_uring_prep_connect(sqe, fd, (struct sockaddr *)&u->c.peer, (socklen_t)len);
	io_uring_sqe_set_data64(sqe, op_data(u, OP_CONNECT));
	conn_get(u);
	*out = &u->c;
	return 0;
close_fd:
	close(fd);
	return ret;
}

static void
on_connect(struct uconn *u, int res)
{
	socklen_t len = sizeof(u->c.local);

	u->connecting = false;
	if (u->dying)
		goto put;
	if (res < 0) {
		u->c.closing = true;
		u->c.proto->connected(&u->c, res);
		conn_kill(u);
		goto put;
	}
	getsockname(u->fd, (struct sockaddr *)&u->c.local, &len);
	SM_STAT_INC(conns_opened);
	u->attached = true;
	arm_recv(u);
	u->c.proto->connected(&u->c, 0);
put:
	conn_put(u); /* the connect's reference */
}

/* ---- the poller and the waiter ---- */

static void
arm_wake(void)
{
	struct io_uring_sqe *sqe = get_sqe();

	io_uring_prep_read(sqe, sm_shard_wakeup_fd(), &us->wake_val, sizeof(us->wake_val), 0);
	io_uring_sqe_set_data64(sqe, op_data(NULL, OP_WAKE));
	us->wake_armed = true;
}

static void
dispatch(struct io_uring_cqe *cqe)
{
	uint64_t data = io_uring_cqe_get_data64(cqe);
	void *obj = (void *)(uintptr_t)(data & ~OP_MASK);

	switch ((enum op_kind)(data & OP_MASK)) {
	case OP_RECV:
		on_recv(obj, cqe->res, cqe->flags);
		break;
	case OP_SEND:
		on_send(obj, cqe->res);
		break;
	case OP_ACCEPT:
		on_accept(obj, cqe->res, cqe->flags);
		break;
	case OP_CONNECT:
		on_connect(obj, cqe->res);
		break;
	case OP_WAKE:
		us->wake_armed = false;
		break;
	case OP_CANCEL:
		break;
	case OP_WATCH:
		on_watch(obj, cqe->res);
		break;
	}
}

static unsigned
reap(void)
{
	struct io_uring_cqe *cqes[CQE_BATCH];
	unsigned n, i, total = 0;

	do {
		n = io_uring_peek_batch_cqe(&us->ring, cqes, CQE_BATCH);
		for (i = 0; i < n; i++)
			dispatch(cqes[i]);
		io_uring_cq_advance(&us->ring, n);
		total += n;
		UC_INC(UC_CQES, n);
	} while (n == CQE_BATCH);
	return total;
}

static bool
kernel_has_work(void)
{
	unsigned flags = IO_URING_READ_ONCE(*us->ring.sq.kflags);

	return !us->check_taskrun || (flags & (IORING_SQ_TASKRUN | IORING_SQ_CQ_OVERFLOW));
}

/* Once per reactor round: submit what the round queued, reap completions. */
static unsigned
uring_poll(void *ctx)
{
	unsigned work;

	(void)ctx;
	work = flush_sends();
	if (io_uring_sq_ready(&us->ring) > 0 || kernel_has_work()) {
		int sub = io_uring_submit_and_get_events(&us->ring);

		SM_STAT_INC(io_enters);
		if (sub > 0)
			UC_INC(UC_SQES, (unsigned)sub);
	}
	work += reap();
	work += run_resumed();
	work += flush_sends();
	rx_bufs_publish();
	rearm_starved();
	return work;
}

static int
uring_wait(void *ctx, int64_t timeout_ns)
{
	struct __kernel_timespec ts;
	struct io_uring_cqe *cqe;
	int ret;

	(void)ctx;
	flush_sends();
	rx_bufs_publish();
	if (!us->wake_armed)
		arm_wake();
	if (io_uring_cq_ready(&us->ring) > 0)
		return 0;
	if (timeout_ns >= 0) {
		ts.tv_sec = timeout_ns / 1000000000;
		ts.tv_nsec = timeout_ns % 1000000000;
	}
	UC_INC(UC_SQES, io_uring_sq_ready(&us->ring));
	ret = io_uring_submit_and_wait_timeout(&us->ring, &cqe, 1, timeout_ns >= 0 ? &ts : NULL,
					       NULL);
	SM_STAT_INC(io_enters);
	return ret == -ETIME ? 0 : ret;
}

/* ---- setup ---- */

static int
ring_create(struct io_uring *ring, bool *taskrun_flag)
{
	static const unsigned attempts[] = {
		IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
		IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
		0,
	};
	struct io_uring_params p;
	unsigned i;
	int ret = -EINVAL;

	for (i = 0; i < SM_ARRAY_SIZE(attempts); i++) {
		memset(&p, 0, sizeof(p));
		p.flags = attempts[i] | IORING_SETUP_SUBMIT_ALL | IORING_SETUP_CQSIZE;
		p.cq_entries = CQ_ENTRIES;
		ret = io_uring_queue_init_params(RING_ENTRIES, ring, &p);
		if (ret == 0) {
			*taskrun_flag = attempts[i] & IORING_SETUP_TASKRUN_FLAG;
			if (i > 0 && sm_shard_id() == 0)
				SM_INFO("io_uring: %s refused, using %s",
					"SINGLE_ISSUER|DEFER_TASKRUN",
					attempts[i] ? "COOP_TASKRUN" : "default task running");
			return 0;
		}
		if (ret != -EINVAL)
			break;
	}
	return ret;
}

static void
drain_all(void *arg)
{
	struct uconn *u, *next;
	unsigned i;

	(void)arg;
	if (sm_shard_id() == 0)
		for (i = 0; i < MAX_LISTENERS; i++)
			if (listeners[i] != NULL)
				uring_listener_close(listeners[i]);
	for (u = us->conns; u != NULL; u = next) {
		next = u->next;
		if (u->c.closing)
			continue;
		if (u->attached && u->c.proto->drain != NULL)
			u->c.proto->drain(&u->c);
		else
			uring_close(&u->c);
	}
}

static int
uring_shard_init(const struct sm_net_config *cfg)
{
	struct sm_poller poller = { .name = "uring", .poll = uring_poll };
	struct sm_waiter waiter = { .wait = uring_wait };
	int ret;

	us = sm_calloc(1, sizeof(*us));
	if (us == NULL)
		return -ENOMEM;
	us->cfg = *cfg;
	us->counters = uring_counters_v[sm_shard_id() % SM_MAX_SHARDS];
	if (us->cfg.rx_buffers == 0)
		us->cfg.rx_buffers = 1024;
	if (us->cfg.rx_buffer_size == 0)
		us->cfg.rx_buffer_size = 16384;
	if (us->cfg.rx_buffers > 32768 || (us->cfg.rx_buffers & (us->cfg.rx_buffers - 1))) {
		SM_ERR("rx_buffers must be a power of two up to 32768, got %u", us->cfg.rx_buffers);
		ret = -EINVAL;
		goto free_us;
	}
	us->flush_tail = &us->flush_head;
	ret = ring_create(&us->ring, &us->check_taskrun);
	if (ret < 0) {
		SM_ERR("io_uring_queue_init: %s%s", strerror(-ret),
		       ret == -EMFILE || ret == -ENFILE
			       ? ": raise the open file limit (ulimit -n, or LimitNOFILE= in systemd)"
		       : ret == -ENOMEM ? ": raise the locked memory limit (ulimit -l unlimited, or "
					  "LimitMEMLOCK=infinity in systemd)"
					: "");
		goto free_us;
	}
	ret = rx_bufs_setup();
	if (ret < 0) {
		SM_ERR("io_uring provided buffers (%u x %u bytes): %s%s", us->cfg.rx_buffers,
		       us->cfg.rx_buffer_size, strerror(-ret),
		       ret == -ENOMEM ? ": lower rx_buffers or rx_buffer_size" : "");
		goto exit_ring;
	}
	ret = sm_pool_init(&us->conn_pool, "uring-conn", sizeof(struct uconn), 64);
	if (ret < 0)
		goto free_bufs;
	ret = sm_shard_add_poller(&poller);
	if (ret < 0)
		goto free_pool;
	sm_shard_set_waiter(&waiter);
	us->stop_hook.fn = drain_all;
	sm_shard_on_stop(&us->stop_hook);
	sm_pool_trim_when_idle(&us->conn_pool);
	return 0;
free_pool:
	sm_pool_destroy(&us->conn_pool);
free_bufs:
	sm_free(us->rxb);
	munmap(us->bufs, us->bufs_bytes);
	munmap(us->br, us->br_bytes);
exit_ring:
	io_uring_queue_exit(&us->ring);
free_us:
	sm_free(us);
	us = NULL;
	return ret;
}

static void
uring_shard_fini(void)
{
	struct uconn *u;

	if (us == NULL)
		return;
	/* Leftovers after a drain timeout: the ring goes away with their I/O. */
	while ((u = us->conns) != NULL) {
		u->refs = 0;
		u->c.closing = true;
		conn_teardown(u);
	}
	sm_shard_remove_stop_hook(&us->stop_hook);
	io_uring_queue_exit(&us->ring);
	sm_pool_destroy(&us->conn_pool);
	sm_free(us->rxb);
	munmap(us->bufs, us->bufs_bytes);
	munmap(us->br, us->br_bytes);
	sm_free(us);
	us = NULL;
}

static int
uring_probe(char *err, size_t errlen)
{
	struct io_uring ring;
	struct utsname uts;
	unsigned major = 0, minor = 0;
	FILE *f;
	int ret, disabled = 0;

	ret = io_uring_queue_init(8, &ring, 0);
	if (ret < 0) {
		f = fopen("/proc/sys/kernel/io_uring_disabled", "r");
		if (f != NULL) {
			if (fscanf(f, "%d", &disabled) != 1)
				disabled = 0;
			fclose(f);
		}
		if (disabled)
			snprintf(err, errlen,
				 "io_uring is disabled by sysctl kernel.io_uring_disabled=%d: set "
				 "it to 0 (sysctl -w kernel.io_uring_disabled=0)%s",
				 disabled,
				 disabled == 1 ? ", or add this user to kernel.io_uring_group"
					       : "");
		else if (ret == -ENOSYS)
			snprintf(err, errlen,
				 "io_uring is not available in this kernel (ENOSYS): use a "
				 "kernel >= 6.0 with CONFIG_IO_URING");
		else if (ret == -ENOMEM)
			snprintf(err, errlen,
				 "io_uring_setup: out of locked memory: raise RLIMIT_MEMLOCK "
				 "(ulimit -l unlimited, or LimitMEMLOCK=infinity in systemd)");
		else if (ret == -EMFILE || ret == -ENFILE)
			snprintf(err, errlen,
				 "io_uring_setup: %s: raise the open file limit (ulimit -n, or "
				 "LimitNOFILE= in systemd)",
				 strerror(-ret));
		else
			snprintf(err, errlen, "io_uring_setup failed: %s", strerror(-ret));
		return ret;
	}
	io_uring_queue_exit(&ring);
	if (uname(&uts) == 0 && sscanf(uts.release, "%u.%u", &major, &minor) == 2 && major < 6) {
		snprintf(err, errlen,
			 "kernel %s lacks io_uring multishot receive (needs 6.0 or later): "
			 "upgrade the kernel",
			 uts.release);
		return -ENOTSUP;
	}
	return 0;
}

static long
uring_rx_pending(struct sm_conn *c)
{
	struct uconn *u = (struct uconn *)c;
	int n = 0;

	if (u->fd < 0 || ioctl(u->fd, FIONREAD, &n) < 0)
		return 0;
	return n;
}

/*
 * Kernel TLS for the sending half (lib/tls): the ULP first, then the keys.
 * A kernel without the tls module answers ENOENT to the ULP.
 */
static int
uring_ktls_tx(struct sm_conn *c, const void *info, size_t len)
{
	struct uconn *u = (struct uconn *)c;

	if (u->fd < 0 || u->send_inflight || u->sq.bytes > 0)
		return -EBUSY;
	if (setsockopt(u->fd, IPPROTO_TCP, TCP_ULP, "tls", sizeof("tls")) < 0)
		return -errno;
	if (setsockopt(u->fd, SOL_TLS, TLS_TX, info, (socklen_t)len) < 0)
		return -errno;
	return 0;
}

static const struct sm_net_driver uring_driver = {
	.name = "uring",
	.ktls_tx = uring_ktls_tx,
	.counters = uring_counters,
	.counters_read = uring_counters_read,
	.probe = uring_probe,
	.shard_init = uring_shard_init,
	.shard_fini = uring_shard_fini,
	.listen = uring_listen,
	.listener_close = uring_listener_close,
	.connect = uring_connect,
	.send = uring_send,
	.close = uring_close,
	.rx_pending = uring_rx_pending,
	.set_rx_paused = uring_set_rx_paused,
};

int
sm_net_uring_register(void)
{
	return sm_net_register(&uring_driver);
}
