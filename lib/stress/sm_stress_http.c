/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DynamoDB-over-HTTP client connection (see sm_stress_http.h).
 *
 * Written here rather than with libcurl: curl's multi interface would bring
 * its own event loop and sockets, and the load must run on the shard's
 * reactor and network driver (io_uring or DPDK) like everything else. What
 * a load generator needs from HTTP is small: a fixed request shape and
 * Content-Length responses.
 */

#include "sm_stress_http.h"
#include "sm_tls.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sm_core.h"
#include "sm_net.h"

#define RX_MAX (16u << 20) /* a larger response is refused */
#define HEAD_MAX 16384u	   /* status line and headers */

struct pending {
	sm_httpc_cb cb;
	void *arg;
};

struct sm_httpc {
	struct sm_conn *conn;
	struct sm_httpc_opts o;
	char host[80];
	bool open;
	bool failed; /* a protocol error closed it: report -EPROTO */
	struct pending *fifo;
	unsigned head, count, cap;
	char *rx;
	size_t rx_len, rx_cap;
};

static void
fail_all(struct sm_httpc *h, int err)
{
	while (h->count > 0) {
		struct pending p = h->fifo[h->head];

		h->head = (h->head + 1) % h->cap;
		h->count--;
		p.cb(p.arg, err, 0, NULL, 0);
	}
}

static void
destroy(struct sm_httpc *h)
{
	sm_free(h->fifo);
	sm_free(h->rx);
	sm_free(h);
}

static void
protocol_error(struct sm_httpc *h)
{
	h->failed = true;
	fail_all(h, -EPROTO);
	sm_conn_close(h->conn);
}

static bool
header_is(const char *line, size_t len, const char *name, const char **value, size_t *vlen)
{
	size_t n = strlen(name);

	if (len <= n || line[n] != ':' || strncasecmp(line, name, n) != 0)
		return false;
	line += n + 1;
	len -= n + 1;
	while (len > 0 && (*line == ' ' || *line == '\t')) {
		line++;
		len--;
	}
	while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	*value = line;
	*vlen = len;
	return true;
}

/*
 * One response at @p (@len bytes available): 0 when incomplete, its total
 * length when complete (status and body filled), -EPROTO when malformed.
 */
static long
parse_response(const char *p, size_t len, int *status, const char **body, size_t *body_len,
	       bool *close_after)
{
	const char *end = memmem(p, SM_MIN(len, (size_t)HEAD_MAX), "\r\n\r\n", 4), *line, *next;
	unsigned long cl = 0;
	bool have_cl = false;
	size_t head;

	if (end == NULL)
		return len >= HEAD_MAX ? -EPROTO : 0;
	head = (size_t)(end - p) + 4;
	if (head < 16 || memcmp(p, "HTTP/1.", 7) != 0 || p[8] != ' ' || p[9] < '1' || p[9] > '5' ||
	    p[10] < '0' || p[10] > '9' || p[11] < '0' || p[11] > '9')
		return -EPROTO;
	*status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
	*close_after = p[7] == '0';
	line = (const char *)memchr(p, '\n', head) + 1;
	while (line < end) {
		const char *v;
		size_t vlen, llen;

		next = memchr(line, '\n', (size_t)(end + 2 - line));
		if (next == NULL)
			break;
		llen = (size_t)(next - line);
		if (llen > 0 && line[llen - 1] == '\r')
			llen--;
		if (header_is(line, llen, "Content-Length", &v, &vlen)) {
			char num[24], *e;

			if (vlen == 0 || vlen >= sizeof(num))
				return -EPROTO;
			memcpy(num, v, vlen);
			num[vlen] = '\0';
			cl = strtoul(num, &e, 10);
			if (*e != '\0' || num[0] == '-' || cl > RX_MAX)
				return -EPROTO;
			have_cl = true;
		} else if (header_is(line, llen, "Transfer-Encoding", &v, &vlen)) {
			return -EPROTO; /* chunked: not produced by DynamoDB endpoints */
		} else if (header_is(line, llen, "Connection", &v, &vlen)) {
			*close_after = vlen == 5 && strncasecmp(v, "close", 5) == 0;
		}
		line = next + 1;
	}
	if (!have_cl)
		return -EPROTO;
	if (len - head < cl)
		return 0;
	*body = p + head;
	*body_len = cl;
	return (long)(head + cl);
}

static void
on_received(struct sm_conn *c, const struct sm_iov *iov, unsigned n)
{
	struct sm_httpc *h = c->ctx;
	size_t add = 0, off = 0;
	unsigned i;

	for (i = 0; i < n; i++)
		add += iov[i].len;
	if (h->rx_len + add > RX_MAX + HEAD_MAX) {
		protocol_error(h);
		return;
	}
	if (h->rx_len + add > h->rx_cap) {
		size_t cap = h->rx_cap ? h->rx_cap : 4096;
		char *q;

		while (cap < h->rx_len + add)
			cap *= 2;
		q = sm_realloc(h->rx, cap);
		if (q == NULL) {
			protocol_error(h);
			return;
		}
		h->rx = q;
		h->rx_cap = cap;
	}
	for (i = 0; i < n; i++) {
		memcpy(h->rx + h->rx_len, iov[i].base, iov[i].len);
		h->rx_len += iov[i].len;
	}
	while (off < h->rx_len) {
		const char *body = NULL;
		size_t body_len = 0;
		bool close_after = false;
		int status = 0;
		long used = parse_response(h->rx + off, h->rx_len - off, &status, &body, &body_len,
					   &close_after);
		struct pending p;

		if (used == 0)
			break;
		if (used < 0 || h->count == 0) {
			protocol_error(h); /* malformed, or a response nobody asked for */
			return;
		}
		p = h->fifo[h->head];
		h->head = (h->head + 1) % h->cap;
		h->count--;
		off += (size_t)used;
		p.cb(p.arg, 0, status, body, body_len);
		if (close_after) {
			fail_all(h, -ECONNRESET);
			sm_conn_close(h->conn);
			h->rx_len = 0;
			return;
		}
	}
	if (off > 0) {
		memmove(h->rx, h->rx + off, h->rx_len - off);
		h->rx_len -= off;
	}
}

static void
on_connected(struct sm_conn *c, int err)
{
	struct sm_httpc *h = c->ctx;

	if (err < 0) {
		h->o.ready(h, err, h->o.ctx);
		destroy(h);
		return;
	}
	h->open = true;
	h->o.ready(h, 0, h->o.ctx);
}

static void
on_closed(struct sm_conn *c, int err)
{
	struct sm_httpc *h = c->ctx;

	h->open = false;
	fail_all(h, h->failed ? -EPROTO : err < 0 ? err : -ECONNRESET);
	if (h->o.closed != NULL)
		h->o.closed(h, h->failed ? -EPROTO : err, h->o.ctx);
	destroy(h);
}

static void
on_drain(struct sm_conn *c)
{
	sm_conn_close(c);
}

static const struct sm_proto_ops httpc_proto = {
	.name = "stress-http",
	.connected = on_connected,
	.received = on_received,
	.drain = on_drain,
	.closed = on_closed,
};

int
sm_httpc_open(const struct sm_httpc_opts *o, struct sm_httpc **out)
{
	struct sm_connect_opts co = { .addr = o->addr, .port = o->port, .proto = &httpc_proto };
	struct sm_httpc *h;
	int ret;

	h = sm_calloc(1, sizeof(*h));
	if (h == NULL)
		return -ENOMEM;
	h->o = *o;
	h->cap = o->max_inflight ? o->max_inflight : 1;
	h->fifo = sm_calloc(h->cap, sizeof(*h->fifo));
	if (h->fifo == NULL) {
		destroy(h);
		return -ENOMEM;
	}
	snprintf(h->host, sizeof(h->host), strchr(o->addr, ':') ? "[%s]:%u" : "%s:%u", o->addr,
		 o->port);
	co.ctx = h;
	ret = o->tls != NULL ? sm_tls_connect(o->tls, &co, &h->conn) : sm_net_connect(&co, &h->conn);
	if (ret < 0) {
		destroy(h);
		return ret;
	}
	*out = h;
	return 0;
}

int
sm_httpc_post(struct sm_httpc *h, const char *op, const char *body, size_t len, sm_httpc_cb cb,
	      void *arg)
{
	struct sm_sendbuf *b;
	struct sm_iov v;
	int n, ret;

	if (!h->open || h->conn->closing)
		return -EPIPE;
	if (h->count == h->cap)
		return -EBUSY;
	b = sm_sendbuf_new(len + 256 + strlen(op) + strlen(h->host));
	if (b == NULL)
		return -ENOMEM;
	n = snprintf(b->data, b->cap,
		     "POST / HTTP/1.1\r\nHost: %s\r\nX-Amz-Target: DynamoDB_20120810.%s\r\n"
		     "Content-Type: application/x-amz-json-1.0\r\nContent-Length: %zu\r\n\r\n",
		     h->host, op, len);
	if (n < 0 || (size_t)n + len > b->cap) {
		sm_bufseg_put(&b->seg);
		return -EINVAL;
	}
	memcpy(b->data + n, body, len);
	b->len = (size_t)n + len;
	v.seg = &b->seg;
	v.base = b->data;
	v.len = b->len;
	ret = sm_conn_send(h->conn, &v, 1);
	sm_bufseg_put(&b->seg);
	if (ret < 0)
		return ret;
	h->fifo[(h->head + h->count) % h->cap] = (struct pending){ cb, arg };
	h->count++;
	return 0;
}

unsigned
sm_httpc_inflight(const struct sm_httpc *h)
{
	return h->count;
}

void
sm_httpc_close(struct sm_httpc *h)
{
	fail_all(h, -ECONNRESET);
	sm_conn_close(h->conn);
}
