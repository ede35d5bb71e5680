/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A DynamoDB-API client connection for the stress load's Alternator mode:
 * HTTP/1.1 POSTs with X-Amz-Target, pipelined, on one shard.
 *
 * Requests on a connection are answered in order (HTTP/1.1), so a
 * connection keeps a FIFO of callbacks and may have up to max_inflight
 * requests outstanding. Responses must carry Content-Length (DynamoDB and
 * Alternator always do); a chunked or malformed response closes the
 * connection and fails what is in flight. Requests are not signed: the
 * endpoint must accept unsigned requests (Alternator's default,
 * alternator_enforce_authorization: false).
 */
#ifndef SM_STRESS_HTTP_H
#define SM_STRESS_HTTP_H

#include <stddef.h>
#include <stdint.h>

struct sm_httpc;

/*
 * A response: HTTP @status with its body (valid during the call only), or
 * @err < 0 and status 0 when the request got no response (the connection
 * failed or closed: -ECONNRESET, -EPROTO for a response that cannot be
 * parsed).
 */
typedef void (*sm_httpc_cb)(void *arg, int err, int status, const char *body, size_t len);

struct sm_tls_ctx;

struct sm_httpc_opts {
	const char *addr; /* numeric address */
	uint16_t port;
	unsigned max_inflight; /* pipelined requests; 0: 1 */
	struct sm_tls_ctx *tls; /* HTTPS (lib/tls); NULL: plain HTTP */
	/* Connected (err 0) or failed to connect (err < 0, no closed() then). */
	void (*ready)(struct sm_httpc *c, int err, void *ctx);
	/* Gone after being ready: every in-flight callback has run first. */
	void (*closed)(struct sm_httpc *c, int err, void *ctx);
	void *ctx;
};

/* Open a connection from the calling shard; ready() says how it went. */
int
sm_httpc_open(const struct sm_httpc_opts *o, struct sm_httpc **out);

/*
 * POST @body to "/" with X-Amz-Target: DynamoDB_20120810.<@op>. Returns 0
 * (the callback will run exactly once), -EBUSY when max_inflight requests
 * are outstanding, -EPIPE when the connection is not open, -ENOMEM.
 */
int
sm_httpc_post(struct sm_httpc *c, const char *op, const char *body, size_t len, sm_httpc_cb cb,
	      void *arg);

/* Requests sent and not yet answered. */
unsigned
sm_httpc_inflight(const struct sm_httpc *c);

/* Close: in-flight callbacks run with -ECONNRESET, then closed(). */
void
sm_httpc_close(struct sm_httpc *c);

#endif /* SM_STRESS_HTTP_H */
