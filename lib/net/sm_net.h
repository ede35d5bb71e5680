/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_NET_H
#define SM_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

/*
 * The transport interface that protocols see.
 *
 * A driver moves bytes for connections; protocols never see sockets, rings or
 * mbufs. Received data arrives as an array of buffer views (struct sm_iov)
 * into driver-owned segments: the io_uring driver's provided-buffer ring
 * slots, or DPDK mbufs. A protocol that wants to keep bytes past the callback
 * takes a reference on the segment instead of copying; a segment goes back
 * to its driver when its last reference is dropped. Sends take an array of
 * views too, so a reply can point into request buffers or into protocol-owned
 * segments (sm_sendbuf) without a copy; the driver holds references until the
 * bytes have left.
 *
 * Every callback runs on the shard that owns the connection. Listening is
 * process-wide: sm_net_listen() on the control shard, and each accepted
 * connection is delivered on the shard chosen by the placement policy (the
 * io_uring driver accepts on shard 0 and hands the socket off; a packet
 * driver with a per-shard TCP stack accepts where the flow hashes).
 *
 * What a driver implements, and the helpers drivers call, are in
 * sm_net_driver.h.
 */

struct sm_bufseg {
	uint32_t refcnt;
	void (*release)(struct sm_bufseg *seg); /* called when refcnt drops to 0 */
};

static inline void
sm_bufseg_get(struct sm_bufseg *seg)
{
	seg->refcnt++;
}

static inline void
sm_bufseg_put(struct sm_bufseg *seg)
{
	if (--seg->refcnt == 0)
		seg->release(seg);
}

/* A view of @len bytes at @base inside @seg (NULL: static memory). */
struct sm_iov {
	struct sm_bufseg *seg;
	const char *base;
	size_t len;
};

/* A protocol-owned send segment with @cap bytes of room in data[]. */
struct sm_sendbuf {
	struct sm_bufseg seg;
	size_t cap;
	size_t len;
	char data[];
};

/* A send buffer with refcnt 1 (from a per-shard pool up to 16 KiB). */
struct sm_sendbuf *
sm_sendbuf_new(size_t cap);

/* A send buffer holding a copy of @len bytes at @p, refcnt 1; NULL without memory. */
struct sm_sendbuf *
sm_sendbuf_dup(const void *p, size_t len);


struct sm_conn;
struct sm_listener;
struct sm_net_driver;

/* What a protocol implements; every callback runs on the connection's shard. */
struct sm_proto_ops {
	const char *name;
	/* A connection accepted for a listener; set c->ctx. <0 refuses it. */
	int (*accepted)(struct sm_conn *c, void *listen_ctx);
	/* An outgoing connection finished connecting (err < 0: it failed and
	 * closed() will not follow). */
	void (*connected)(struct sm_conn *c, int err);
	/* Bytes arrived, in order, as @n views. Take references to keep them. */
	void (*received)(struct sm_conn *c, const struct sm_iov *iov, unsigned n);
	/* Every queued byte has been sent (optional: flow control). */
	void (*drained)(struct sm_conn *c);
	/* The shard is draining (SIGTERM): finish in-flight requests, then
	 * close. Optional; without it the connection is closed gracefully at
	 * once (queued replies are still sent). */
	void (*drain)(struct sm_conn *c);
	/* The connection is gone (peer closed, error, or sm_conn_close done);
	 * @err is 0 or -errno. The conn pointer is invalid afterwards. */
	void (*closed)(struct sm_conn *c, int err);
};

/*
 * Why a connection's receiving is paused (struct sm_conn.rx_paused bits).
 * While any bit is set, received() is not called: what arrives waits in the
 * kernel's socket buffer or the userspace stack's window (a few bytes that
 * were already on their way are held by the driver), so the peer is slowed by
 * TCP flow control instead of the server buffering without bound.
 */
#define SM_RX_PAUSE_UNSENT 1u /* the driver: unsent bytes above max_unsent_bytes */
#define SM_RX_PAUSE_PROTO 2u  /* the protocol: too much of its own work in flight */

/* The part of a connection that protocols may read and set. */
struct sm_conn {
	const struct sm_net_driver *drv;
	const struct sm_proto_ops *proto;
	void *ctx; /* the protocol's state */
	unsigned shard;
	bool closing;
	unsigned rx_paused; /* SM_RX_PAUSE_* bits; change with sm_conn_pause_rx/resume_rx */
	size_t send_queued; /* bytes queued but not yet sent */
	/* lib/net's: the partly filled buffer sm_conn_send_copy() appends to */
	struct sm_sendbuf *tx_tail;
	struct sockaddr_storage peer;
	struct sockaddr_storage local;
};

enum sm_placement {
	SM_PLACE_BALANCED, /* the shard with the fewest active connections */
	SM_PLACE_SRC_PORT, /* shard = client source port % shards (shard-aware port) */
	SM_PLACE_SHARD,	   /* every connection on shard @shard of the options */
};

struct sm_listen_opts {
	const char *addr; /* numeric IPv4 or IPv6 address; NULL: 0.0.0.0 */
	uint16_t port;
	int backlog; /* 0: 1024 */
	enum sm_placement placement;
	unsigned shard; /* SM_PLACE_SHARD */
	const struct sm_proto_ops *proto;
	void *ctx; /* passed to accepted() on every shard: read-only */
};

struct sm_connect_opts {
	const char *addr; /* numeric address of the server */
	uint16_t port;
	/* Source port rule: when src_port_mod > 0, the local port p satisfies
	 * p % src_port_mod == src_port_rem (ScyllaDB's shard-aware port picks
	 * the shard from it). 0: any port. */
	uint16_t src_port_mod;
	uint16_t src_port_rem;
	const struct sm_proto_ops *proto;
	void *ctx; /* initial c->ctx */
};

struct sm_net_config {
	unsigned rx_buffers;	 /* provided receive buffers per shard; 0: 1024 */
	unsigned rx_buffer_size; /* bytes each; 0: 16384 */
	unsigned max_conns;	 /* per shard; 0: 65536 */
	/* Unsent bytes past which a connection is not read until half of them
	 * have left (back-pressure on clients that do not read their replies);
	 * 0: SM_NET_DEFAULT_MAX_UNSENT. */
	size_t max_unsent_bytes;
};

#define SM_NET_DEFAULT_MAX_UNSENT (256u << 10)

/* One of a driver's own per-shard counters, for /metrics. */
struct sm_net_counter {
	const char *name; /* Prometheus name after "shardmark_net_", e.g. "tcp_retransmits_total" */
	const char *help;
};


/* A registered driver, or NULL. */
const struct sm_net_driver *
sm_net_find(const char *name);

/* Select the process's driver (before the shards start). -ENOENT if unknown. */
int
sm_net_use(const char *name);

/* The selected driver, or NULL. */
const struct sm_net_driver *
sm_net_driver(void);

/* Per-shard driver setup with @cfg (NULL for defaults), on each shard thread. */
int
sm_net_shard_init(const struct sm_net_config *cfg);
void
sm_net_shard_fini(void);

/*
 * Listen on o->addr:o->port with the selected driver. Call on the control
 * shard. Returns -EADDRINUSE, -EACCES, ... synchronously so the caller can
 * name the port and the fix.
 */
int
sm_net_listen(const struct sm_listen_opts *o, struct sm_listener **l);

/* Stop accepting; established connections are not affected. */
void
sm_net_listener_close(struct sm_listener *l);

/* Open a connection from the calling shard; completion via proto->connected. */
int
sm_net_connect(const struct sm_connect_opts *o, struct sm_conn **c);


/*
 * Copy @len bytes into send buffers and queue them. Small replies share a
 * buffer: the bytes go after the previous copy's in the connection's tail
 * buffer while it has room, so a queued reply holds about its own size, not
 * a whole buffer (a client that pipelines thousands of requests and reads
 * nothing costs its replies' bytes, bounded by max_unsent_bytes).
 */
int
sm_conn_send_copy(struct sm_conn *c, const void *data, size_t len);

/* Set @why in c->rx_paused; the first bit stops received() (see SM_RX_PAUSE_*). */
void
sm_conn_pause_rx(struct sm_conn *c, unsigned why);

/* Clear @why; when no bit is left, received() resumes from the next poll round. */
void
sm_conn_resume_rx(struct sm_conn *c, unsigned why);




/*
 * The selected driver's own counters: returns how many and sets *@desc to
 * their descriptions; 0 when it keeps none (io_uring: the kernel's TCP).
 */
unsigned
sm_net_counters(const struct sm_net_counter **desc);

/* Shard @shard's values of the sm_net_counters() counters into vals[]; any thread. */
void
sm_net_counters_read(unsigned shard, uint64_t *vals);

/*
 * The selected driver's counters for @nshards shards in the Prometheus text
 * format (families shardmark_net_*, one sample per shard), into @buf; like
 * snprintf, returns the length the whole text needs. 0 when the driver has
 * none.
 */
size_t
sm_net_format_prometheus(char *buf, size_t len, unsigned nshards);

/*
 * The selected driver's port report into @f (nothing when it has none):
 * Prometheus families (@prometheus) or testpmd-style text; see
 * struct sm_net_driver.port_report.
 */
void
sm_net_port_report(FILE *f, bool prometheus);

/* Format a socket address as "ip:port" into @buf. */
const char *
sm_net_addr_str(const struct sockaddr_storage *ss, char *buf, size_t len);

/* Parse a numeric address and port into @ss; returns its length or -EINVAL. */
int
sm_net_addr_parse(const char *addr, uint16_t port, struct sockaddr_storage *ss);

/*
 * A host name or numeric address to the numeric address in @out
 * ("localhost" -> "127.0.0.1"): numeric ones as they are, names through
 * getaddrinfo(), IPv4 first when a name has both (servers listen on IPv4
 * by default). Returns 0, or -ENOENT with the resolver's reason in @err
 * ("Name or service not known"), or -ENOSPC when @out is too small.
 */
int
sm_net_addr_resolve(const char *host, char *out, size_t len, char *err, size_t errlen);

/*
 * "addr:port" as a URL or a client wants it: "127.0.0.1:9042",
 * "[::1]:9042" (an IPv6 address in brackets). Returns @buf.
 */
const char *
sm_net_hostport(const char *addr, unsigned port, char *buf, size_t len);

/*
 * The calls on a connection's driver, inline: a protocol's every send goes
 * through them. The driver interface they need is in sm_net_driver.h, which
 * protocols do not use otherwise (as DPDK's rte_ethdev.h includes
 * rte_ethdev_core.h for its inline bursts).
 */
#include "sm_net_driver.h"

/*
 * Queue @n views for sending, in order after everything queued before. The
 * driver takes its own references; the caller keeps its own. Returns 0, or
 * -EPIPE when the connection is closing.
 */
static inline int
sm_conn_send(struct sm_conn *c, const struct sm_iov *iov, unsigned n)
{
	return c->drv->send(c, iov, n);
}

/*
 * Close gracefully: stop receiving, send what is queued, then close; the
 * protocol's closed() follows. Safe to call more than once.
 */
static inline void
sm_conn_close(struct sm_conn *c)
{
	c->drv->close(c);
}

/*
 * Bytes that have arrived for @c but not yet been delivered to received()
 * (in the kernel's socket buffer, or the userspace stack's queue). A
 * protocol's drain() uses it to tell an idle connection from one whose
 * request is still arriving. A syscall: not for per-request paths.
 */
static inline long
sm_conn_rx_pending(struct sm_conn *c)
{
	return c->drv->rx_pending(c);
}

#endif /* SM_NET_H */
