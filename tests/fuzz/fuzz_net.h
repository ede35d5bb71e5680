/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FUZZ_NET_H
#define FUZZ_NET_H

/*
 * A fake transport for the protocol harnesses: one connection whose sends
 * go to a callback and whose receive buffers are exact-size heap copies of
 * pieces of the input, so ASan sees any read past a view or any use of a
 * buffer after its last reference went. Every buffer reference taken must
 * come back by the end of the input (fuzz_segs_live).
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "sm_core.h"
#include "sm_net.h"

struct fuzz_conn {
	struct sm_conn c; /* first: the driver casts */
	bool close_called;
	/* every byte the protocol sends, in order */
	void (*on_send)(struct fuzz_conn *f, const uint8_t *p, size_t len);
};

static __thread long fuzz_segs_live;

static int
fuzz_send(struct sm_conn *c, const struct sm_iov *iov, unsigned n)
{
	struct fuzz_conn *f = (struct fuzz_conn *)c;
	unsigned i;

	if (c->closing)
		return -EPIPE;
	for (i = 0; i < n; i++)
		if (f->on_send != NULL)
			f->on_send(f, (const uint8_t *)iov[i].base, iov[i].len);
	return 0;
}

static void
fuzz_close(struct sm_conn *c)
{
	c->closing = true;
	((struct fuzz_conn *)c)->close_called = true;
}

static int
fuzz_shard_init(const struct sm_net_config *cfg)
{
	(void)cfg;
	return 0;
}

static void
fuzz_shard_fini(void)
{
}

static long
fuzz_rx_pending(struct sm_conn *c)
{
	(void)c;
	return 0;
}

static const struct sm_net_driver fuzz_driver = {
	.name = "fuzz",
	.shard_init = fuzz_shard_init,
	.shard_fini = fuzz_shard_fini,
	.send = fuzz_send,
	.close = fuzz_close,
	.rx_pending = fuzz_rx_pending,
};

/* Select the fake driver and set up the calling thread's send buffers. */
static inline void
fuzz_net_init(void)
{
	sm_mem_thread_init();
	if (sm_net_find("fuzz") == NULL && sm_net_register(&fuzz_driver) < 0)
		abort();
	if (sm_net_use("fuzz") < 0 || sm_net_shard_init(NULL) < 0)
		abort();
}

/* The connection is gone (after closed()): what a driver frees with it. */
static inline void
fuzz_conn_fini(struct fuzz_conn *f)
{
	sm_conn_net_fini(&f->c);
}

struct fuzz_seg {
	struct sm_bufseg seg;
	char data[];
};

static void
fuzz_seg_release(struct sm_bufseg *s)
{
	fuzz_segs_live--;
	free(sm_container_of(s, struct fuzz_seg, seg));
}

/*
 * Deliver @len bytes at @p to @proto as receive buffers of at most @piece
 * bytes each (0: one buffer), @per_call views per received() call, as a
 * driver does. Stops when the protocol closed the connection.
 */
static inline void
fuzz_deliver(struct fuzz_conn *f, const struct sm_proto_ops *proto, const uint8_t *p, size_t len,
	     size_t piece, unsigned per_call)
{
	struct fuzz_seg *segs[4];
	struct sm_iov iov[4];
	unsigned n, i;

	if (piece == 0)
		piece = len;
	if (per_call == 0 || per_call > 4)
		per_call = 1;
	while (len > 0 && !f->c.closing) {
		for (n = 0; n < per_call && len > 0; n++) {
			size_t k = piece < len ? piece : len;

			segs[n] = malloc(sizeof(struct fuzz_seg) + k);
			if (segs[n] == NULL)
				abort();
			segs[n]->seg.refcnt = 1;
			segs[n]->seg.release = fuzz_seg_release;
			memcpy(segs[n]->data, p, k);
			fuzz_segs_live++;
			iov[n] = (struct sm_iov){ &segs[n]->seg, segs[n]->data, k };
			p += k;
			len -= k;
		}
		proto->received(&f->c, iov, n);
		for (i = 0; i < n; i++)
			sm_bufseg_put(&segs[i]->seg);
	}
}

#endif /* FUZZ_NET_H */
