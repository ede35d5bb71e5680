/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Echo service. A frame that arrives whole inside one receive buffer is sent
 * back as a view of that buffer (no copy, no allocation); a frame split
 * across buffers is gathered into a send buffer, so receive buffers go back
 * to the driver at once and a slow sender cannot pin them.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "echo.h"
#include "sm_core.h"

struct echo_conn {
	const struct sm_echo_service *svc;
	uint8_t hdr[4];
	uint32_t hdr_len;	/* header bytes gathered */
	uint32_t frame_len;	/* payload length of the frame being gathered */
	struct sm_sendbuf *acc; /* the frame being gathered, header included */
	bool draining;		/* close once the frame in progress is answered */
};

static __thread struct sm_pool echo_pool;
static __thread bool echo_pool_ready;

static int
echo_accepted(struct sm_conn *c, void *listen_ctx)
{
	struct echo_conn *e;

	if (!echo_pool_ready) {
		if (sm_pool_init(&echo_pool, "echo-conn", sizeof(*e), 64) < 0)
			return -ENOMEM;
		echo_pool_ready = true;
	}
	e = sm_pool_get(&echo_pool);
	if (e == NULL)
		return -ENOMEM;
	memset(e, 0, sizeof(*e));
	e->svc = listen_ctx;
	c->ctx = e;
	return 0;
}

static void
echo_closed(struct sm_conn *c, int err)
{
	struct echo_conn *e = c->ctx;

	(void)err;
	if (e->acc != NULL)
		sm_bufseg_put(&e->acc->seg);
	sm_pool_put(&echo_pool, e);
}

static void
send_error(struct sm_conn *c, uint32_t len, uint32_t max)
{
	char msg[160];
	uint8_t frame[8 + sizeof(msg)];
	uint32_t mark = htonl(SM_ECHO_ERROR_MARK), n;

	n = (uint32_t)snprintf(msg, sizeof(msg),
			       "frame too large: %u bytes, the limit is %u (echo_max_frame)", len,
			       max);
	n = SM_MIN(n, (uint32_t)sizeof(msg) - 1);
	memcpy(frame, &mark, 4);
	mark = htonl(n);
	memcpy(frame + 4, &mark, 4);
	memcpy(frame + 8, msg, n);
	sm_conn_send_copy(c, frame, 8 + n);
	sm_conn_close(c);
}

static void
frame_done(void)
{
	SM_STAT_INC(requests);
}

/* Send the gathered frame once it is complete. */
static void
gather_finish(struct sm_conn *c, struct echo_conn *e)
{
	struct sm_iov out;

	if (e->acc->len < (size_t)e->frame_len + 4)
		return;
	out.seg = &e->acc->seg;
	out.base = e->acc->data;
	out.len = e->acc->len;
	sm_conn_send(c, &out, 1);
	sm_bufseg_put(&e->acc->seg);
	e->acc = NULL;
	frame_done();
}

/* Parse one receive buffer; returns false once the connection is closing. */
static bool
echo_consume(struct sm_conn *c, struct echo_conn *e, const struct sm_iov *v)
{
	const char *p = v->base;
	size_t left = v->len;

	while (left > 0) {
		if (e->acc != NULL) {
			/* Gathering a split frame. */
			size_t want = e->frame_len + 4 - e->acc->len;
			size_t n = SM_MIN(want, left);

			memcpy(e->acc->data + e->acc->len, p, n);
			e->acc->len += n;
			p += n;
			left -= n;
			gather_finish(c, e);
			continue;
		}
		if (e->hdr_len == 0 && left >= 4) {
			uint32_t len;

			memcpy(&len, p, 4);
			len = ntohl(len);
			if (len > e->svc->max_frame) {
				send_error(c, len, e->svc->max_frame);
				return false;
			}
			if (left >= (size_t)len + 4) {
				/* Whole frame in this buffer: send a view of it. */
				struct sm_iov out = { .seg = v->seg, .base = p, .len = len + 4 };

				sm_conn_send(c, &out, 1);
				frame_done();
				p += len + 4;
				left -= len + 4;
				continue;
			}
			e->frame_len = len;
		} else {
			/* A header split across buffers. */
			size_t n = SM_MIN((size_t)(4 - e->hdr_len), left);

			memcpy(e->hdr + e->hdr_len, p, n);
			e->hdr_len += (uint32_t)n;
			p += n;
			left -= n;
			if (e->hdr_len < 4)
				continue;
			memcpy(&e->frame_len, e->hdr, 4);
			e->frame_len = ntohl(e->frame_len);
			e->hdr_len = 0;
			if (e->frame_len > e->svc->max_frame) {
				send_error(c, e->frame_len, e->svc->max_frame);
				return false;
			}
			e->acc = sm_sendbuf_new((size_t)e->frame_len + 4);
			if (e->acc == NULL)
				goto nomem;
			memcpy(e->acc->data, e->hdr, 4);
			e->acc->len = 4;
			gather_finish(c, e); /* a zero-length frame is complete */
			continue;
		}
		/* Header in this buffer, payload continues in the next ones. */
		e->acc = sm_sendbuf_new((size_t)e->frame_len + 4);
		if (e->acc == NULL)
			goto nomem;
		e->acc->len = 0;
	}
	return true;
nomem:
	SM_WARN("echo: out of memory for a %u-byte frame: closing the connection", e->frame_len);
	sm_conn_close(c);
	return false;
}

static bool
frame_in_progress(const struct echo_conn *e)
{
	return e->acc != NULL || e->hdr_len > 0;
}

static void
echo_received(struct sm_conn *c, const struct sm_iov *iov, unsigned n)
{
	struct echo_conn *e = c->ctx;
	unsigned i;

	for (i = 0; i < n; i++)
		if (!echo_consume(c, e, &iov[i]))
			return;
	if (e->draining && !frame_in_progress(e))
		sm_conn_close(c);
}

/*
 * Shutdown: a request counts as in flight once its first byte has reached
 * us, even if it still sits in the socket buffer; answer it, then close.
 * An idle connection closes at once.
 */
static void
echo_drain(struct sm_conn *c)
{
	struct echo_conn *e = c->ctx;

	if (frame_in_progress(e) || sm_conn_rx_pending(c) > 0)
		e->draining = true;
	else
		sm_conn_close(c);
}

void
sm_echo_shard_fini(void)
{
	if (echo_pool_ready) {
		sm_pool_destroy(&echo_pool);
		echo_pool_ready = false;
	}
}

const struct sm_proto_ops sm_echo_proto = {
	.name = "echo",
	.accepted = echo_accepted,
	.received = echo_received,
	.drain = echo_drain,
	.closed = echo_closed,
};
