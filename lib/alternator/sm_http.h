/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_HTTP_H
#define SM_HTTP_H

/*
 * HTTP/1.1 server connections on the transport interface (lib/net), for the
 * Alternator (DynamoDB API) port.
 *
 * The connection parses requests out of receive views and hands each one to
 * a handler, which answers it with one of the sm_http_reply*() calls at once
 * or later (after a hop to another shard and back: replies are made on the
 * connection's shard). Pipelined requests are dispatched
 * in order and their responses leave in request order whatever order the
 * handler answers in: the connection keeps a FIFO of the requests in flight
 * and sends a response only when every earlier one has gone.
 *
 * Memory: a request's head and body are views. A head or body that lies
 * whole in one receive buffer points into it and the request holds a
 * reference on that buffer (no copy); one split across receive buffers, or a
 * chunked body, is gathered into a send buffer. Request structs come from a
 * per-shard pool and response buffers from the send-buffer pool, so a warm
 * connection serves a request of up to 16 KiB with no allocation.
 *
 * Bad input costs no more than the head: a malformed request gets 400 and a
 * head over max_header 431, a Content-Length over max_body 413 before any
 * body is read (no 100 Continue is sent for it); each is followed by a
 * close. A client that disconnects mid-request leaves nothing behind, and
 * requests still with the handler stay valid until answered, then are
 * dropped.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "sm_net.h"

#define SM_HTTP_MAX_FIELDS 64		       /* header fields per request (more: 431) */
#define SM_HTTP_DEFAULT_MAX_HEADER (16u << 10) /* request line + fields + blank line */
#define SM_HTTP_DEFAULT_MAX_BODY (16u << 20)   /* Alternator's request_content_length_limit */
#define SM_HTTP_MAX_BODY_IOV 4		       /* views in one sm_http_reply_iov() */
#define SM_HTTP_JSON_TYPE "application/x-amz-json-1.0" /* DynamoDB's content type */

/* A view of @len bytes at @p (not NUL-terminated). */
struct sm_http_str {
	const char *p;
	size_t len;
};

enum sm_http_method {
	SM_HTTP_OTHER, /* a valid token that is none of the below: see method_text */
	SM_HTTP_GET,
	SM_HTTP_HEAD,
	SM_HTTP_POST,
	SM_HTTP_PUT,
	SM_HTTP_DELETE,
	SM_HTTP_OPTIONS,
	SM_HTTP_PATCH,
	SM_HTTP_CONNECT,
	SM_HTTP_TRACE,
};

struct sm_http_field {
	struct sm_http_str name;  /* as sent; compare case-insensitively */
	struct sm_http_str value; /* without leading and trailing whitespace */
};

/* A parsed request head; every view points into the parsed bytes. */
struct sm_http_head {
	enum sm_http_method method;
	struct sm_http_str method_text;
	struct sm_http_str target; /* the request-target as sent */
	struct sm_http_str path;   /* target up to '?' ("/" of an absolute URI, "*") */
	struct sm_http_str query;  /* after '?', empty when none */
	uint8_t version;	   /* 10 or 11 (HTTP/1.x above 1 counts as 11) */
	bool keep_alive;	   /* 1.1 without "close", 1.0 with "keep-alive" */
	bool chunked;		   /* Transfer-Encoding: chunked */
	bool has_length;	   /* a Content-Length was sent */
	bool expect_continue;	   /* Expect: 100-continue (1.1 only) */
	uint64_t content_length;
	unsigned nfields;
	struct sm_http_field fields[SM_HTTP_MAX_FIELDS];
	/* on failure: the status to answer with and why */
	int status;
	const char *error;
};

/*
 * Parse a request head (request line, header fields, blank line) from
 * @p[0..len), looking at no more than @max bytes. Returns the head's length
 * (the body or next request starts there), -EAGAIN when more bytes are
 * needed, or another -errno with h->status and h->error set: -EMSGSIZE (431:
 * no end within @max bytes, or over SM_HTTP_MAX_FIELDS fields), -ENOSYS (501:
 * a transfer coding other than chunked), -EPROTONOSUPPORT (505: not
 * HTTP/1.x), -EINVAL (400: anything else malformed, including obs-fold,
 * bare LF, a bad or conflicting Content-Length, and Content-Length together
 * with Transfer-Encoding). Host is not required.
 */
int
sm_http_parse_head(const char *p, size_t len, size_t max, struct sm_http_head *h);

/* The first field named @name (case-insensitive), or NULL. */
const struct sm_http_str *
sm_http_head_field(const struct sm_http_head *h, const char *name);

/*
 * A chunked-body decoder that runs across any split of its input: the
 * caller feeds what arrived and copies out the data spans it reports.
 */
struct sm_http_chunked {
	uint64_t max_body; /* decoded bytes allowed */
	uint64_t total;	   /* decoded bytes so far */
	uint64_t size;	   /* the chunk size being read, then its bytes left */
	size_t line;	   /* bytes of the current size line */
	size_t trailer;	   /* trailer bytes so far */
	size_t max_trailer;
	uint8_t state;
	bool done; /* the last chunk and the trailer section have been read */
};

/* Start decoding a body of at most @max_body bytes, trailers of @max_trailer. */
void
sm_http_chunked_init(struct sm_http_chunked *d, uint64_t max_body, size_t max_trailer);

/*
 * Decode from @p[0..len). Returns the bytes consumed and sets @data to the
 * body bytes among them (a span inside @p, at most one per call, possibly
 * empty); call again with the rest until it is consumed or d->done (the
 * bytes after the body are not consumed). Returns -EFBIG when the body
 * exceeds max_body (413), -EINVAL on bad framing, an over-long chunk line
 * or trailer section (400).
 */
ssize_t
sm_http_chunked_decode(struct sm_http_chunked *d, const char *p, size_t len,
		       struct sm_http_str *data);

struct sm_http_conn;
struct sm_http_req;

struct sm_http_handler {
	/* Answer with one sm_http_reply*() call, exactly once. */
	void (*request)(void *ctx, struct sm_http_req *req);
	void *ctx;
};

/* The listen context of an HTTP port (read-only, shared by every shard). */
struct sm_http_service {
	size_t max_header; /* request head; 0: SM_HTTP_DEFAULT_MAX_HEADER */
	size_t max_body;   /* request body; 0: SM_HTTP_DEFAULT_MAX_BODY */
	const struct sm_http_handler *handler;
	/* The 413 response: NULL body gives DynamoDB's PayloadTooLarge JSON. */
	const char *too_large_type;
	const char *too_large_body;
	/*
	 * Slow and silent clients: a request whose head and body have not all
	 * arrived request_timeout_ms after its first byte gets 408 and the
	 * close; a connection with no request in progress that sends nothing
	 * for idle_timeout_ms is closed. 0: no limit.
	 */
	unsigned request_timeout_ms;
	unsigned idle_timeout_ms;
};

/* Protocol ops for sm_net_listen(); listen ctx: a struct sm_http_service. */
extern const struct sm_proto_ops sm_http_proto_ops;

/*
 * A growable response body backed by a send buffer (pooled up to 16 KiB):
 * write at p + len after sm_http_buf_reserve(), then advance len.
 */
struct sm_http_buf {
	char *p;
	size_t len;
	size_t cap;
	/* private */
	struct sm_sendbuf *sb;
};

/* A request for the handler; valid until it is answered. */
struct sm_http_req {
	struct sm_http_conn *conn;
	struct sm_http_head head;
	struct sm_http_str body; /* whole (chunked: decoded); never NULL */
	bool keep_alive;	 /* the connection stays open after the reply */
	/* Extra header lines for the reply ("Name: value\r\n" each), copied
	 * when replying; NULL: none. */
	const char *reply_headers;
	bool no_date; /* leave the Date header out of the reply */
	/* private */
	uint8_t state;
	bool want_continue;
	bool close_after;
	unsigned nout;
	struct sm_iov out[1 + SM_HTTP_MAX_BODY_IOV];
	struct sm_bufseg *hseg; /* holds the head's memory */
	struct sm_bufseg *bseg; /* holds the body's memory */
	struct sm_http_buf rbuf;
	struct sm_http_req *next;
};

/* The first request field named @name (case-insensitive), or NULL. */
static inline const struct sm_http_str *
sm_http_header(const struct sm_http_req *req, const char *name)
{
	return sm_http_head_field(&req->head, name);
}

/*
 * Answer @req with @status, a Content-Type of @content_type (NULL: none) and
 * a copy of @body, then release @req. The response leaves after every
 * earlier response of the connection. The status line carries the reason
 * phrase; Content-Length is always sent (except for 1xx, 204 and 304), and
 * "Connection: close" when the connection closes after this response. When
 * the connection is gone, only the release happens.
 */
void
sm_http_reply(struct sm_http_req *req, int status, const char *content_type, const void *body,
	      size_t len);

/*
 * Answer @req with the @n (at most SM_HTTP_MAX_BODY_IOV) views of @body,
 * without copying: references are taken on their segments (a NULL segment
 * must be memory that outlives the connection, e.g. static).
 */
void
sm_http_reply_iov(struct sm_http_req *req, int status, const char *content_type,
		  const struct sm_iov *body, unsigned n);

/* The request's response-body buffer, empty until written. */
struct sm_http_buf *
sm_http_req_body_buf(struct sm_http_req *req);

/* Make room for @n more bytes at b->p + b->len; 0 or -ENOMEM. */
int
sm_http_buf_reserve(struct sm_http_buf *b, size_t n);

/* Append @n bytes; 0 or -ENOMEM. */
int
sm_http_buf_append(struct sm_http_buf *b, const void *data, size_t n);

/* Answer @req with what sm_http_req_body_buf() holds, without copying it. */
void
sm_http_reply_buf(struct sm_http_req *req, int status, const char *content_type);

/* The reason phrase of @status ("OK", "Not Found", ...; "Unknown" when none). */
const char *
sm_http_reason(int status);

/* The service (listen context) the connection came in on. */
const struct sm_http_service *
sm_http_conn_service(const struct sm_http_conn *c);

/* The client's address, as accepted. */
const struct sockaddr_storage *
sm_http_conn_peer(const struct sm_http_conn *c);

/* Free the calling shard's HTTP connection state (after its connections closed). */
void
sm_http_shard_fini(void);

#endif /* SM_HTTP_H */
