/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sm_net.h first, outside the guard: it includes this header at its end for
 * its inline calls, so whichever of the two a file includes first, the
 * driver struct is defined before those calls.
 */
#include "sm_net.h"

#ifndef SM_NET_DRIVER_H
#define SM_NET_DRIVER_H

#include <stdio.h>

/*
 * The driver interface of lib/net: what a network driver (in drivers/net)
 * implements and the helpers it calls. Protocols use sm_net.h only; this
 * header is theirs to ignore.
 */

/* A driver: one implementation of the transport interface. */
struct sm_net_driver {
	const char *name;
	/* Probe once at start, before shards exist; -errno and a message that
	 * names cause and fix when the driver cannot run on this machine. */
	int (*probe)(char *err, size_t errlen);
	/* Per-shard setup and teardown, on the shard thread. */
	int (*shard_init)(const struct sm_net_config *cfg);
	void (*shard_fini)(void);
	int (*listen)(const struct sm_listen_opts *o, struct sm_listener **l);
	void (*listener_close)(struct sm_listener *l);
	int (*connect)(const struct sm_connect_opts *o, struct sm_conn **c);
	int (*send)(struct sm_conn *c, const struct sm_iov *iov, unsigned n);
	void (*close)(struct sm_conn *c);
	/* Bytes that arrived but have not reached received() yet. */
	long (*rx_pending)(struct sm_conn *c);
	/*
	 * Stop (@paused) or restart calling received() for @c. Called by
	 * lib/net when c->rx_paused goes from 0 to nonzero and back. After a
	 * restart the driver delivers what it held from the next poll round
	 * on, never from inside this call.
	 */
	void (*set_rx_paused)(struct sm_conn *c, bool paused);
	/*
	 * Optional: counters of the driver's own (a userspace TCP stack's
	 * retransmissions, a NIC's drops). counters() returns how many and
	 * their descriptions; counters_read() fills vals[0..n) for @shard and
	 * may run on any thread (the driver publishes them with relaxed
	 * stores, as lib/core's counters are).
	 */
	unsigned (*counters)(const struct sm_net_counter **desc);
	void (*counters_read)(unsigned shard, uint64_t *vals);
	/*
	 * Optional: hand the sending half of @c's TLS session to the kernel
	 * (setsockopt TCP_ULP "tls", then SOL_TLS TLS_TX with @info, Linux's
	 * crypto info). Called by lib/tls once nothing is queued on @c; from
	 * then on what is sent is plaintext that the kernel frames. Returns 0,
	 * -ENOPROTOOPT/-ENOENT when the kernel has no TLS, or another -errno.
	 */
	int (*ktls_tx)(struct sm_conn *c, const void *info, size_t len);
	/*
	 * Optional: the NIC's own view, on a control path (a /stats or
	 * /metrics request, any shard): with @prometheus, extra metric
	 * families (a NIC's extended statistics by name); otherwise text as
	 * testpmd's "show port stats" and "show port xstats" print it.
	 */
	void (*port_report)(FILE *f, bool prometheus);
};

/* Register a driver by name; -EEXIST when the name is taken. */
/* Register a driver by name; -EEXIST when the name is taken. */
int
sm_net_register(const struct sm_net_driver *d);

/*
 * A FIFO of views for drivers (send queues, data held while receiving is
 * paused): a ring that grows by doubling. Pushing takes a reference on the
 * view's segment and merges a view that continues the last one in the same
 * segment (sm_conn_send_copy's appends), so one queued entry covers many
 * small replies.
 */
struct sm_iovq {
	struct sm_iov *v;
	uint32_t head, len, cap;
	size_t bytes; /* bytes in the queue */
};

/* Append @n views (empty ones skipped); 0 or -ENOMEM with nothing appended. */
int
sm_iovq_push(struct sm_iovq *q, const struct sm_iov *iov, unsigned n);

/* The @i-th view from the front (i < q->len). */
static inline struct sm_iov *
sm_iovq_at(struct sm_iovq *q, uint32_t i)
{
	return &q->v[(q->head + i) & (q->cap - 1)];
}

/* Drop @bytes from the front, releasing the views that were wholly consumed. */
void
sm_iovq_consume(struct sm_iovq *q, size_t bytes);

/* Release every view and the ring. */
void
sm_iovq_fini(struct sm_iovq *q);

/*
 * For drivers, after c->send_queued changed: pause receiving above the
 * shard's max_unsent_bytes, resume once at most half of it is left.
 */
void
sm_conn_unsent_changed(struct sm_conn *c);

/* For drivers: every queued byte has left; drop the tail buffer (idle connections hold none). */
void
sm_conn_tx_idle(struct sm_conn *c);

/* For drivers, when a connection is freed: release what lib/net keeps for it. */
void
sm_conn_net_fini(struct sm_conn *c);

#endif /* SM_NET_DRIVER_H */
