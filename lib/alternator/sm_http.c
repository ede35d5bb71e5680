/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP/1.1 server connections: request heads and bodies out of receive
 * views, dispatch to the handler, responses flushed in request order.
 *
 * A head or body that lies whole in one receive buffer is used in place and
 * the request keeps a reference on that buffer; one split across buffers is
 * gathered into a send buffer (copy), so receive buffers go back to the
 * driver at once and a slow client cannot pin them. The parser is strict
 * where leniency lets two parsers disagree on framing (bare LF, obs-fold,
 * Content-Length with Transfer-Encoding, conflicting lengths): those get 400.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "sm_core.h"
#include "sm_http.h"

#define MAX_CHUNK_LINE 4096 /* chunk size plus extensions */
#define HEAD_ROOM 200	    /* status line, Date, Content-Length, Connection, blank line */

static const char empty_body[1];

/* ---- parsing ---- */

static inline unsigned char
lower(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c;
}

static inline bool
is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/* RFC 9110 5.6.2 tchar */
static inline bool
is_tchar(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c))
		return true;
	switch (c) {
	case '!':
	case '#':
	case '$':
	case '%':
	case '&':
	case '\'':
	case '*':
	case '+':
	case '-':
	case '.':
	case '^':
	case '_':
	case '`':
	case '|':
	case '~':
		return true;
	default:
		return false;
	}
}

/* field-vchar, SP, HTAB (obs-text included) */
static inline bool
is_field_char(unsigned char c)
{
	return c == '\t' || (c >= 0x20 && c != 0x7f);
}

static inline bool
is_ows(char c)
{
	return c == ' ' || c == '\t';
}

/* @p[0..n) equals the lowercase literal @lit, ignoring case. */
static bool
str_ieq(const char *p, size_t n, const char *lit)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (lit[i] == '\0' || lower((unsigned char)p[i]) != (unsigned char)lit[i])
			return false;
	return lit[n] == '\0';
}

static int
bad(struct sm_http_head *h, int ret, int status, const char *why)
{
	h->status = status;
	h->error = why;
	return ret;
}

static void
head_reset(struct sm_http_head *h)
{
	h->method = SM_HTTP_OTHER;
	h->method_text = (struct sm_http_str){ empty_body, 0 };
	h->target = h->method_text;
	h->path = h->method_text;
	h->query = h->method_text;
	h->version = 11;
	h->keep_alive = false;
	h->chunked = false;
	h->has_length = false;
	h->expect_continue = false;
	h->content_length = 0;
	h->nfields = 0;
	h->status = 0;
	h->error = NULL;
}

static const struct {
	const char *name;
	size_t len;
	enum sm_http_method m;
} methods[] = {
	{ "GET", 3, SM_HTTP_GET },	 { "POST", 4, SM_HTTP_POST },
	{ "HEAD", 4, SM_HTTP_HEAD },	 { "PUT", 3, SM_HTTP_PUT },
	{ "DELETE", 6, SM_HTTP_DELETE }, { "OPTIONS", 7, SM_HTTP_OPTIONS },
	{ "PATCH", 5, SM_HTTP_PATCH },	 { "CONNECT", 7, SM_HTTP_CONNECT },
	{ "TRACE", 5, SM_HTTP_TRACE },
};

/* Split an origin-form target @p[0..n) into path and query. */
static void
split_origin(struct sm_http_head *h, const char *p, size_t n)
{
	const char *q = memchr(p, '?', n);

	if (q == NULL) {
		h->path = (struct sm_http_str){ p, n };
		h->query = (struct sm_http_str){ p + n, 0 };
		return;
	}
	h->path = (struct sm_http_str){ p, (size_t)(q - p) };
	h->query = (struct sm_http_str){ q + 1, n - (size_t)(q + 1 - p) };
}

static int
parse_target(struct sm_http_head *h)
{
	const char *t = h->target.p, *end = t + h->target.len, *r;
	size_t skip;

	if (t[0] == '/') {
		split_origin(h, t, h->target.len);
		return 0;
	}
	if (h->target.len == 1 && t[0] == '*') {
		if (h->method != SM_HTTP_OPTIONS)
			return bad(h, -EINVAL, 400, "request target * is only for OPTIONS");
		h->path = h->target;
		h->query = (struct sm_http_str){ end, 0 };
		return 0;
	}
	if (h->method == SM_HTTP_CONNECT) {
		h->path = h->target;
		h->query = (struct sm_http_str){ end, 0 };
		return 0;
	}
	/* absolute-form: http://authority[/path][?query] */
	if (h->target.len > 7 && str_ieq(t, 7, "http://"))
		skip = 7;
	else if (h->target.len > 8 && str_ieq(t, 8, "https://"))
		skip = 8;
	else
		return bad(h, -EINVAL, 400, "malformed request target");
	for (r = t + skip; r < end && *r != '/' && *r != '?'; r++)
		;
	if (r == t + skip)
		return bad(h, -EINVAL, 400, "request target without a host");
	if (r < end && *r == '/') {
		split_origin(h, r, (size_t)(end - r));
		return 0;
	}
	h->path = (struct sm_http_str){ "/", 1 };
	if (r < end)
		h->query = (struct sm_http_str){ r + 1, (size_t)(end - r - 1) };
	else
		h->query = (struct sm_http_str){ end, 0 };
	return 0;
}

/* method SP request-target SP HTTP-version, in @p[0..e) */
static int
parse_request_line(struct sm_http_head *h, const char *p, const char *e)
{
	const char *q = p, *t, *v;
	unsigned i;

	while (q < e && is_tchar((unsigned char)*q))
		q++;
	if (q == p || q == e || *q != ' ')
		return bad(h, -EINVAL, 400, "malformed request line");
	h->method_text = (struct sm_http_str){ p, (size_t)(q - p) };
	for (i = 0; i < SM_ARRAY_SIZE(methods); i++) {
		if (methods[i].len == h->method_text.len &&
		    memcmp(methods[i].name, p, methods[i].len) == 0) {
			h->method = methods[i].m;
			break;
		}
	}
	t = ++q;
	while (q<e && * q> 0x20 && *q < 0x7f)
		q++;
	if (q == t || q == e || *q != ' ')
		return bad(h, -EINVAL, 400, "malformed request target");
	h->target = (struct sm_http_str){ t, (size_t)(q - t) };
	v = q + 1;
	if (e - v != 8 || memcmp(v, "HTTP/", 5) != 0 || !is_digit((unsigned char)v[5]) ||
	    v[6] != '.' || !is_digit((unsigned char)v[7]))
		return bad(h, -EINVAL, 400, "malformed HTTP version");
	if (v[5] != '1')
		return bad(h, -EPROTONOSUPPORT, 505, "only HTTP/1.0 and HTTP/1.1 are supported");
	h->version = v[7] == '0' ? 10 : 11;
	return parse_target(h);
}

/* What the fields say about framing and the connection, until the end. */
struct field_flags {
	bool te_seen;
	bool conn_close;
	bool conn_keep;
	bool expect;
};

static int
parse_content_length(struct sm_http_head *h, struct sm_http_str v)
{
	uint64_t n = 0;
	size_t i;

	if (v.len == 0)
		return bad(h, -EINVAL, 400, "empty Content-Length");
	for (i = 0; i < v.len; i++) {
		unsigned d = (unsigned char)v.p[i] - '0';

		if (d > 9)
			return bad(h, -EINVAL, 400, "Content-Length is not a number");
		if (n > (UINT64_MAX - d) / 10)
			return bad(h, -EINVAL, 400, "Content-Length is too large");
		n = n * 10 + d;
	}
	if (h->has_length && h->content_length != n)
		return bad(h, -EINVAL, 400, "conflicting Content-Length values");
	h->has_length = true;
	h->content_length = n;
	return 0;
}

/* Call @fn on each element of a comma-separated list, trimmed, skipping empty ones. */
static int
for_each_token(struct sm_http_head *h, struct field_flags *ff, struct sm_http_str v,
	       int (*fn)(struct sm_http_head *h, struct field_flags *ff, const char *p, size_t n))
{
	const char *p = v.p, *end = v.p + v.len, *s, *e;
	int ret;

	while (p < end) {
		s = p;
		while (p < end && *p != ',')
			p++;
		e = p;
		while (s < e && is_ows(*s))
			s++;
		while (e > s && is_ows(e[-1]))
			e--;
		if (e > s) {
			ret = fn(h, ff, s, (size_t)(e - s));
			if (ret < 0)
				return ret;
		}
		if (p < end)
			p++;
	}
	return 0;
}

static int
te_token(struct sm_http_head *h, struct field_flags *ff, const char *p, size_t n)
{
	(void)ff;
	if (h->chunked)
		return bad(h, -EINVAL, 400, "chunked must be the last transfer coding, once");
	if (!str_ieq(p, n, "chunked"))
		return bad(h, -ENOSYS, 501,
			   "transfer codings other than chunked are not supported");
	h->chunked = true;
	return 0;
}

static int
connection_token(struct sm_http_head *h, struct field_flags *ff, const char *p, size_t n)
{
	(void)h;
	if (str_ieq(p, n, "close"))
		ff->conn_close = true;
	else if (str_ieq(p, n, "keep-alive"))
		ff->conn_keep = true;
	return 0;
}

/* field-name ":" OWS field-value OWS, in @p[0..e) */
static int
parse_field(struct sm_http_head *h, struct field_flags *ff, const char *p, const char *e)
{
	const char *q = p, *ve, *r;
	struct sm_http_field *f;

	if (is_ows(*p))
		return bad(h, -EINVAL, 400, "obsolete line folding in a header field");
	while (q < e && is_tchar((unsigned char)*q))
		q++;
	if (q == p || q == e || *q != ':')
		return bad(h, -EINVAL, 400, "malformed header field name");
	if (h->nfields == SM_HTTP_MAX_FIELDS)
		return bad(h, -EMSGSIZE, 431, "too many header fields");
	f = &h->fields[h->nfields++];
	f->name = (struct sm_http_str){ p, (size_t)(q - p) };
	q++;
	while (q < e && is_ows(*q))
		q++;
	ve = e;
	while (ve > q && is_ows(ve[-1]))
		ve--;
	for (r = q; r < ve; r++)
		if (!is_field_char((unsigned char)*r))
			return bad(h, -EINVAL, 400, "invalid character in a header field value");
	f->value = (struct sm_http_str){ q, (size_t)(ve - q) };

	switch (f->name.len) {
	case 14:
		if (str_ieq(f->name.p, 14, "content-length"))
			return parse_content_length(h, f->value);
		break;
	case 17:
		if (str_ieq(f->name.p, 17, "transfer-encoding")) {
			ff->te_seen = true;
			return for_each_token(h, ff, f->value, te_token);
		}
		break;
	case 10:
		if (str_ieq(f->name.p, 10, "connection"))
			return for_each_token(h, ff, f->value, connection_token);
		break;
	case 6:
		if (str_ieq(f->name.p, 6, "expect") &&
		    str_ieq(f->value.p, f->value.len, "100-continue"))
			ff->expect = true;
		break;
	default:
		break;
	}
	return 0;
}

static int
incomplete(struct sm_http_head *h, size_t len, size_t max)
{
	if (len >= max)
		return bad(h, -EMSGSIZE, 431, "request head too large");
	return -EAGAIN;
}

int
sm_http_parse_head(const char *buf, size_t len, size_t max, struct sm_http_head *h)
{
	const char *p = buf, *end = buf + SM_MIN(len, max), *eol;
	struct field_flags ff = { 0 };
	int ret;

	head_reset(h);
	eol = memchr(p, '\n', (size_t)(end - p));
	if (eol == NULL)
		return incomplete(h, len, max);
	if (eol == p || eol[-1] != '\r')
		return bad(h, -EINVAL, 400, "request line not ended by CRLF");
	ret = parse_request_line(h, p, eol - 1);
	if (ret < 0)
		return ret;
	for (p = eol + 1;; p = eol + 1) {
		eol = memchr(p, '\n', (size_t)(end - p));
		if (eol == NULL)
			return incomplete(h, len, max);
		if (eol == p || eol[-1] != '\r')
			return bad(h, -EINVAL, 400, "header line not ended by CRLF");
		if (eol - 1 == p)
			break; /* the blank line */
		ret = parse_field(h, &ff, p, eol - 1);
		if (ret < 0)
			return ret;
	}
	if (ff.te_seen && h->has_length)
		return bad(h, -EINVAL, 400, "both Content-Length and Transfer-Encoding");
	if (ff.te_seen && !h->chunked)
		return bad(h, -EINVAL, 400, "empty Transfer-Encoding");
	if (ff.te_seen && h->version == 10)
		return bad(h, -EINVAL, 400, "Transfer-Encoding in an HTTP/1.0 request");
	h->keep_alive = !ff.conn_close && (h->version == 11 || ff.conn_keep);
	h->expect_continue = ff.expect && h->version == 11;
	return (int)(eol + 1 - buf);
}

const struct sm_http_str *
sm_http_head_field(const struct sm_http_head *h, const char *name)
{
	size_t n = strlen(name), i;
	unsigned k;

	for (k = 0; k < h->nfields; k++) {
		const struct sm_http_str *f = &h->fields[k].name;

		if (f->len != n)
			continue;
		for (i = 0; i < n; i++)
			if (lower((unsigned char)f->p[i]) != lower((unsigned char)name[i]))
				break;
		if (i == n)
			return &h->fields[k].value;
	}
	return NULL;
}

/* ---- chunked bodies ---- */

enum {
	CK_SIZE0,   /* the first hex digit of a chunk size */
	CK_SIZE,    /* more digits, an extension, or CR */
	CK_EXT,	    /* chunk extensions up to CR */
	CK_SIZE_LF, /* LF after the size line */
	CK_DATA,    /* chunk data */
	CK_DATA_CR, /* CRLF after the data */
	CK_DATA_LF,
	CK_TRAILER0, /* start of a trailer line, or the final CRLF */
	CK_TRAILER,  /* inside a trailer line */
	CK_TRAILER_LF,
	CK_END_LF,
	CK_DONE,
};

void
sm_http_chunked_init(struct sm_http_chunked *d, uint64_t max_body, size_t max_trailer)
{
	memset(d, 0, sizeof(*d));
	d->max_body = max_body;
	d->max_trailer = max_trailer;
	d->state = CK_SIZE0;
}

static int
hex_val(unsigned char c)
{
	if (is_digit(c))
		return c - '0';
	c = lower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

ssize_t
sm_http_chunked_decode(struct sm_http_chunked *d, const char *p, size_t len,
		       struct sm_http_str *data)
{
	size_t i = 0, n;
	unsigned char c;
	int v;

	data->p = p;
	data->len = 0;
	while (i < len && d->state != CK_DONE) {
		c = (unsigned char)p[i];
		switch (d->state) {
		case CK_SIZE0:
		case CK_SIZE:
			v = hex_val(c);
			if (v >= 0) {
				uint64_t lim = d->max_body - d->total;

				/* size * 16 + v <= lim, without overflow */
				if ((uint64_t)v > lim || d->size > (lim - (uint64_t)v) / 16)
					return -EFBIG;
				d->size = d->size * 16 + (uint64_t)v;
				d->state = CK_SIZE;
			} else if (d->state == CK_SIZE0) {
				return -EINVAL;
			} else if (c == ';' || is_ows((char)c)) {
				d->state = CK_EXT;
			} else if (c == '\r') {
				d->state = CK_SIZE_LF;
			} else {
				return -EINVAL;
			}
			if (++d->line > MAX_CHUNK_LINE)
				return -EINVAL;
			break;
		case CK_EXT:
			if (c == '\r')
				d->state = CK_SIZE_LF;
			else if (!is_field_char(c))
				return -EINVAL;
			if (++d->line > MAX_CHUNK_LINE)
				return -EINVAL;
			break;
		case CK_SIZE_LF:
			if (c != '\n')
				return -EINVAL;
			d->line = 0;
			d->state = d->size == 0 ? CK_TRAILER0 : CK_DATA;
			break;
		case CK_DATA:
			n = (size_t)SM_MIN(d->size, (uint64_t)(len - i));
			data->p = p + i;
			data->len = n;
			d->size -= n;
			d->total += n;
			if (d->size == 0)
				d->state = CK_DATA_CR;
			return (ssize_t)(i + n);
		case CK_DATA_CR:
			if (c != '\r')
				return -EINVAL;
			d->state = CK_DATA_LF;
			break;
		case CK_DATA_LF:
			if (c != '\n')
				return -EINVAL;
			d->state = CK_SIZE0;
			break;
		case CK_TRAILER0:
			if (c == '\r') {
				d->state = CK_END_LF;
				break;
			}
			if (!is_tchar(c))
				return -EINVAL; /* obs-fold, bare LF, junk */
			d->state = CK_TRAILER;
			/* fallthrough */
		case CK_TRAILER:
			if (c == '\r')
				d->state = CK_TRAILER_LF;
			else if (!is_field_char(c))
				return -EINVAL;
			if (++d->trailer > d->max_trailer)
				return -EINVAL;
			break;
		case CK_TRAILER_LF:
			if (c != '\n')
				return -EINVAL;
			d->state = CK_TRAILER0;
			break;
		case CK_END_LF:
			if (c != '\n')
				return -EINVAL;
			d->state = CK_DONE;
			d->done = true;
			break;
		default:
			return -EINVAL;
		}
		i++;
	}
	return (ssize_t)i;
}

/* ---- connections ---- */

enum req_state {
	REQ_HEAD,    /* the head is arriving (cc->cur, not in the FIFO yet) */
	REQ_BODY,    /* in the FIFO, the body is arriving (cc->cur) */
	REQ_HANDLER, /* with the handler */
	REQ_DONE,    /* answered: the response waits for its turn */
};

enum conn_state {
	ST_HEAD,
	ST_BODY,    /* Content-Length bytes */
	ST_CHUNKED, /* a chunked body */
};

struct sm_http_conn {
	struct sm_conn *c; /* NULL once the transport connection is gone */
	const struct sm_http_service *svc;
	size_t max_header;
	size_t max_body;
	unsigned refs;	  /* the transport's, plus one per request */
	bool stop;	  /* parse nothing more: a close follows the queued responses */
	bool draining;	  /* the shard is stopping: close once idle */
	bool closed_sent; /* sm_conn_close() was called */
	uint8_t st;
	struct sm_http_req *cur; /* the request being received */
	struct sm_sendbuf *hbuf; /* a head split across receive buffers */
	struct sm_sendbuf *body; /* a body being gathered */
	uint64_t need;		 /* Content-Length bytes still to come */
	struct sm_http_chunked ck;
	struct sm_http_req *fifo_head, *fifo_tail; /* requests in order, until sent */
	struct sockaddr_storage peer;
	/* timeouts: one lazily re-armed timer checks both deadlines */
	struct sm_timer timer;
	uint64_t active_ms;    /* bytes last arrived */
	uint64_t req_start_ms; /* the request being received began */
};

static __thread struct sm_pool conn_pool;
static __thread struct sm_pool req_pool;
static __thread bool pools_ready;


const struct sm_http_service *
sm_http_conn_service(const struct sm_http_conn *c)
{
	return c->svc;
}

const struct sockaddr_storage *
sm_http_conn_peer(const struct sm_http_conn *c)
{
	return &c->peer;
}

static void
drop_gather(struct sm_http_conn *cc)
{
	if (cc->hbuf != NULL) {
		sm_bufseg_put(&cc->hbuf->seg);
		cc->hbuf = NULL;
	}
	if (cc->body != NULL) {
		sm_bufseg_put(&cc->body->seg);
		cc->body = NULL;
	}
}

static void
conn_put(struct sm_http_conn *cc)
{
	if (--cc->refs > 0)
		return;
	drop_gather(cc);
	sm_pool_put(&conn_pool, cc);
}

static struct sm_http_req *
req_new(struct sm_http_conn *cc)
{
	struct sm_http_req *req = sm_pool_get(&req_pool);

	if (req == NULL)
		return NULL;
	/* No memset: head.fields is large and the parser fills what it uses. */
	req->conn = cc;
	head_reset(&req->head);
	req->body = (struct sm_http_str){ empty_body, 0 };
	req->keep_alive = false;
	req->reply_headers = NULL;
	req->no_date = false;
	req->state = REQ_HEAD;
	req->want_continue = false;
	req->close_after = false;
	req->nout = 0;
	req->hseg = NULL;
	req->bseg = NULL;
	memset(&req->rbuf, 0, sizeof(req->rbuf));
	req->next = NULL;
	cc->refs++;
	cc->req_start_ms = sm_shard_now_ms();
	return req;
}

/* Drop what the request's views point into: they are invalid after the reply. */
static void
release_input(struct sm_http_req *req)
{
	if (req->hseg != NULL) {
		sm_bufseg_put(req->hseg);
		req->hseg = NULL;
	}
	if (req->bseg != NULL) {
		sm_bufseg_put(req->bseg);
		req->bseg = NULL;
	}
}

static void
req_free(struct sm_http_req *req)
{
	struct sm_http_conn *cc = req->conn;
	unsigned i;

	for (i = 0; i < req->nout; i++)
		if (req->out[i].seg != NULL)
			sm_bufseg_put(req->out[i].seg);
	release_input(req);
	if (req->rbuf.sb != NULL)
		sm_bufseg_put(&req->rbuf.sb->seg);
	sm_pool_put(&req_pool, req);
	conn_put(cc);
}

static void
fifo_append(struct sm_http_conn *cc, struct sm_http_req *req)
{
	req->next = NULL;
	if (cc->fifo_tail != NULL)
		cc->fifo_tail->next = req;
	else
		cc->fifo_head = req;
	cc->fifo_tail = req;
}

static void
close_now(struct sm_http_conn *cc)
{
	cc->stop = true;
	if (cc->c == NULL || cc->closed_sent)
		return;
	cc->closed_sent = true;
	sm_conn_close(cc->c);
}

/* Responses up to this size are copied out of their buffers (see send_response). */
#define SMALL_RESPONSE 4096u

/*
 * A small response is copied into the connection's shared tail buffer and
 * its own buffers (a 16 KiB head buffer, a body buffer) go back at once: a
 * client pipelining thousands of requests without reading then holds about
 * its responses' bytes, not two buffers per response.
 */
static int
send_response(struct sm_conn *c, const struct sm_http_req *r)
{
	size_t total = 0;
	unsigned i;
	int ret = 0;

	for (i = 0; i < r->nout; i++)
		total += r->out[i].len;
	if (total > SMALL_RESPONSE)
		return sm_conn_send(c, r->out, r->nout);
	for (i = 0; i < r->nout && ret == 0; i++)
		ret = sm_conn_send_copy(c, r->out[i].base, r->out[i].len);
	return ret;
}

/*
 * Send the answered requests at the head of the FIFO, in order; then, when
 * the next one waits for its body with Expect: 100-continue, invite it.
 */
static void
flush(struct sm_http_conn *cc)
{
	static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
	static const struct sm_iov cont_iov = { NULL, cont, sizeof(cont) - 1 };
	struct sm_http_req *r;

	cc->refs++; /* closed() may run inside sm_conn_close() */
	while ((r = cc->fifo_head) != NULL && r->state == REQ_DONE) {
		cc->fifo_head = r->next;
		if (cc->fifo_head == NULL)
			cc->fifo_tail = NULL;
		if (cc->c != NULL && !cc->closed_sent) {
			if (send_response(cc->c, r) < 0 || r->close_after)
				close_now(cc);
		}
		req_free(r);
	}
	if (r != NULL && r->want_continue && cc->c != NULL && !cc->closed_sent) {
		r->want_continue = false;
		if (sm_conn_send(cc->c, &cont_iov, 1) < 0)
			close_now(cc);
	}
	if (r == NULL && cc->draining && cc->cur == NULL)
		close_now(cc);
	conn_put(cc);
}

/* ---- responses ---- */

const char *
sm_http_reason(int status)
{
	switch (status) {
	case 100:
		return "Continue";
	case 101:
		return "Switching Protocols";
	case 200:
		return "OK";
	case 201:
		return "Created";
	case 202:
		return "Accepted";
	case 204:
		return "No Content";
	case 206:
		return "Partial Content";
	case 301:
		return "Moved Permanently";
	case 302:
		return "Found";
	case 304:
		return "Not Modified";
	case 307:
		return "Temporary Redirect";
	case 400:
		return "Bad Request";
	case 401:
		return "Unauthorized";
	case 403:
		return "Forbidden";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 408:
		return "Request Timeout";
	case 409:
		return "Conflict";
	case 411:
		return "Length Required";
	case 413:
		return "Payload Too Large";
	case 414:
		return "URI Too Long";
	case 415:
		return "Unsupported Media Type";
	case 417:
		return "Expectation Failed";
	case 429:
		return "Too Many Requests";
	case 431:
		return "Request Header Fields Too Large";
	case 500:
		return "Internal Server Error";
	case 501:
		return "Not Implemented";
	case 503:
		return "Service Unavailable";
	case 505:
		return "HTTP Version Not Supported";
	default:
		return "Unknown";
	}
}

static inline char *
put_str(char *o, const char *s, size_t n)
{
	memcpy(o, s, n);
	return o + n;
}

#define PUT_LIT(o, lit) put_str((o), (lit), sizeof(lit) - 1)

static char *
put_u64(char *o, uint64_t v)
{
	char tmp[20];
	int i = 0;

	do {
		tmp[i++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	while (i > 0)
		*o++ = tmp[--i];
	return o;
}

static bool
status_has_body(int status)
{
	return status >= 200 && status != 204 && status != 304;
}

/* Bytes the head may take at most. */
static size_t
head_room(const struct sm_http_req *req, const char *ctype)
{
	return HEAD_ROOM + (ctype != NULL ? strlen(ctype) : 0) +
	       (req->reply_headers != NULL ? strlen(req->reply_headers) : 0);
}

/* "Date: <IMF-fixdate>\r\n" (RFC 9110 6.6.1; DynamoDB sends it), formatted once a second per shard. */
static const char *
date_line(size_t *len)
{
	static __thread time_t shown = -1;
	static __thread char line[64];
	static __thread size_t n;
	time_t now = time(NULL);
	struct tm tm;

	if (now != shown) {
		gmtime_r(&now, &tm);
		n = strftime(line, sizeof(line), "Date: %a, %d %b %Y %H:%M:%S GMT\r\n", &tm);
		shown = now;
	}
	*len = n;
	return line;
}

/* Write the response head for a body of @len bytes at @o; returns its length. */
static size_t
write_head(const struct sm_http_req *req, char *o, int status, const char *ctype, uint64_t len)
{
	const char *reason = sm_http_reason(status);
	const char *date;
	size_t dlen;
	char *s = o;

	o = PUT_LIT(o, "HTTP/1.1 ");
	o = put_u64(o, (uint64_t)status);
	*o++ = ' ';
	o = put_str(o, reason, strlen(reason));
	o = PUT_LIT(o, "\r\n");
	if (!req->no_date) {
		date = date_line(&dlen);
		o = put_str(o, date, dlen);
	}
	if (ctype != NULL) {
		o = PUT_LIT(o, "Content-Type: ");
		o = put_str(o, ctype, strlen(ctype));
		o = PUT_LIT(o, "\r\n");
	}
	if (status_has_body(status)) {
		o = PUT_LIT(o, "Content-Length: ");
		o = put_u64(o, len);
		o = PUT_LIT(o, "\r\n");
	}
	if (req->close_after)
		o = PUT_LIT(o, "Connection: close\r\n");
	else if (req->head.version == 10)
		o = PUT_LIT(o, "Connection: keep-alive\r\n");
	if (req->reply_headers != NULL)
		o = put_str(o, req->reply_headers, strlen(req->reply_headers));
	o = PUT_LIT(o, "\r\n");
	return (size_t)(o - s);
}

/* The response is in req->out: let go of the request's input, send in turn. */
static void
finish(struct sm_http_req *req)
{
	struct sm_http_conn *cc = req->conn;

	release_input(req);
	if (req->rbuf.sb != NULL) {
		sm_bufseg_put(&req->rbuf.sb->seg);
		memset(&req->rbuf, 0, sizeof(req->rbuf));
	}
	if (req->close_after)
		cc->stop = true;
	req->state = REQ_DONE;
	flush(cc);
}

static void
reply_oom(struct sm_http_req *req)
{
	static const char text[] = "HTTP/1.1 500 Internal Server Error\r\n"
				   "Content-Length: 0\r\nConnection: close\r\n\r\n";

	SM_WARN("http: out of memory for a response: closing the connection");
	req->out[0] = (struct sm_iov){ NULL, text, sizeof(text) - 1 };
	req->nout = 1;
	req->close_after = true;
	finish(req);
}

/* Common start of a reply: false when the connection is gone (req freed). */
static bool
reply_start(struct sm_http_req *req, int *status)
{
	if (req->conn->c == NULL) {
		req_free(req);
		return false;
	}
	if (*status < 100 || *status > 999)
		*status = 500;
	req->close_after = req->close_after || !req->keep_alive;
	return true;
}

static bool
body_sent(const struct sm_http_req *req, int status)
{
	return status_has_body(status) && req->head.method != SM_HTTP_HEAD;
}

/* Head and copies of @v[0..n) in one buffer. */
static void
reply_copy(struct sm_http_req *req, int status, const char *ctype, const struct sm_iov *v,
	   unsigned n)
{
	struct sm_sendbuf *b;
	size_t total = 0, copy;
	unsigned i;

	for (i = 0; i < n; i++)
		total += v[i].len;
	copy = body_sent(req, status) ? total : 0;
	b = sm_sendbuf_new(head_room(req, ctype) + copy);
	if (b == NULL) {
		reply_oom(req);
		return;
	}
	b->len = write_head(req, b->data, status, ctype, total);
	for (i = 0; i < n && copy > 0; i++) {
		if (v[i].len == 0)
			continue; /* an empty view may have no base */
		memcpy(b->data + b->len, v[i].base, v[i].len);
		b->len += v[i].len;
	}
	req->out[0] = (struct sm_iov){ &b->seg, b->data, b->len };
	req->nout = 1;
	finish(req);
}

void
sm_http_reply(struct sm_http_req *req, int status, const char *content_type, const void *body,
	      size_t len)
{
	struct sm_iov v = { NULL, body, len };

	if (!reply_start(req, &status))
		return;
	reply_copy(req, status, content_type, &v, len > 0 ? 1 : 0);
}

void
sm_http_reply_iov(struct sm_http_req *req, int status, const char *content_type,
		  const struct sm_iov *body, unsigned n)
{
	struct sm_sendbuf *h;
	size_t total = 0;
	unsigned i;

	if (!reply_start(req, &status))
		return;
	if (n > SM_HTTP_MAX_BODY_IOV) {
		reply_copy(req, status, content_type, body, n);
		return;
	}
	for (i = 0; i < n; i++)
		total += body[i].len;
	h = sm_sendbuf_new(head_room(req, content_type));
	if (h == NULL) {
		reply_oom(req);
		return;
	}
	h->len = write_head(req, h->data, status, content_type, total);
	req->out[0] = (struct sm_iov){ &h->seg, h->data, h->len };
	req->nout = 1;
	for (i = 0; i < n && body_sent(req, status); i++) {
		if (body[i].len == 0)
			continue;
		if (body[i].seg != NULL)
			sm_bufseg_get(body[i].seg);
		req->out[req->nout++] = body[i];
	}
	finish(req);
}

struct sm_http_buf *
sm_http_req_body_buf(struct sm_http_req *req)
{
	return &req->rbuf;
}

int
sm_http_buf_reserve(struct sm_http_buf *b, size_t n)
{
	size_t need = b->len + n, cap;
	struct sm_sendbuf *nb;

	if (b->sb != NULL && need <= b->cap)
		return 0;
	cap = b->sb != NULL ? b->cap * 2 : 0;
	if (cap < need)
		cap = need;
	nb = sm_sendbuf_new(cap);
	if (nb == NULL)
		return -ENOMEM;
	if (b->len > 0)
		memcpy(nb->data, b->p, b->len);
	if (b->sb != NULL)
		sm_bufseg_put(&b->sb->seg);
	b->sb = nb;
	b->p = nb->data;
	b->cap = nb->cap;
	return 0;
}

int
sm_http_buf_append(struct sm_http_buf *b, const void *data, size_t n)
{
	int ret = sm_http_buf_reserve(b, n);

	if (ret < 0)
		return ret;
	if (n > 0)
		memcpy(b->p + b->len, data, n);
	b->len += n;
	return 0;
}

void
sm_http_reply_buf(struct sm_http_req *req, int status, const char *content_type)
{
	struct sm_http_buf *b = &req->rbuf;
	struct sm_sendbuf *h;

	if (!reply_start(req, &status))
		return;
	h = sm_sendbuf_new(head_room(req, content_type));
	if (h == NULL) {
		reply_oom(req);
		return;
	}
	h->len = write_head(req, h->data, status, content_type, b->len);
	req->out[0] = (struct sm_iov){ &h->seg, h->data, h->len };
	req->nout = 1;
	if (b->sb != NULL && b->len > 0 && body_sent(req, status)) {
		/* the buffer's reference moves to the response */
		req->out[req->nout++] = (struct sm_iov){ &b->sb->seg, b->p, b->len };
		memset(b, 0, sizeof(*b));
	}
	finish(req);
}

/* ---- requests in ---- */

/* Answer the request being received (or a new one) with an error, then close. */
static void
fail_with(struct sm_http_conn *cc, int status, const char *ctype, const char *body, size_t len)
{
	struct sm_http_req *req = cc->cur;

	drop_gather(cc);
	cc->cur = NULL;
	cc->st = ST_HEAD;
	cc->stop = true;
	if (req == NULL && (req = req_new(cc)) == NULL) {
		close_now(cc);
		return;
	}
	if (req->state == REQ_HEAD)
		fifo_append(cc, req);
	req->state = REQ_HANDLER;
	req->keep_alive = false;
	req->want_continue = false;
	req->reply_headers = NULL;
	req->no_date = false;
	release_input(req);
	sm_http_reply(req, status, ctype, body, len);
}

static void
fail(struct sm_http_conn *cc, int status, const char *why)
{
	char text[160];
	int n;

	n = snprintf(text, sizeof(text), "%s\n", why != NULL ? why : sm_http_reason(status));
	fail_with(cc, status, "text/plain", text, (size_t)SM_MIN((size_t)n, sizeof(text) - 1));
}

static void
fail_too_large(struct sm_http_conn *cc)
{
	const struct sm_http_service *svc = cc->svc;
	char text[200];
	int n;

	if (svc->too_large_body != NULL) {
		fail_with(cc, 413, svc->too_large_type, svc->too_large_body,
			  strlen(svc->too_large_body));
		return;
	}
	n = snprintf(text, sizeof(text),
		     "{\"__type\":\"com.amazonaws.dynamodb.v20120810#PayloadTooLarge\","
		     "\"message\":\"Request content length limit of %zu bytes exceeded\"}",
		     cc->max_body);
	fail_with(cc, 413, SM_HTTP_JSON_TYPE, text, (size_t)SM_MIN((size_t)n, sizeof(text) - 1));
}

static void
dispatch(struct sm_http_conn *cc, struct sm_http_req *req)
{
	const struct sm_http_handler *hd = cc->svc->handler;

	cc->cur = NULL;
	cc->st = ST_HEAD;
	req->state = REQ_HANDLER;
	req->want_continue = false;
	if (!req->keep_alive)
		cc->stop = true; /* what follows a closing request is not read */
	SM_STAT_INC(requests);
	hd->request(hd->ctx, req);
}

/* A head is complete; @after bytes follow it in this receive buffer. */
static int
head_done(struct sm_http_conn *cc, struct sm_http_req *req, size_t after)
{
	const struct sm_http_head *h = &req->head;

	req->state = REQ_BODY;
	req->keep_alive = h->keep_alive && !cc->draining;
	fifo_append(cc, req);
	if (h->chunked) {
		sm_http_chunked_init(&cc->ck, cc->max_body, cc->max_header);
		cc->st = ST_CHUNKED;
	} else if (h->content_length > 0) {
		if (h->content_length > cc->max_body) {
			fail_too_large(cc);
			return -1;
		}
		cc->need = h->content_length;
		cc->st = ST_BODY;
	} else {
		dispatch(cc, req);
		return 0;
	}
	if (h->expect_continue && after == 0) {
		req->want_continue = true;
		flush(cc);
	}
	return 0;
}

/* True when the body of @h lies wholly in the @after bytes that follow it. */
static bool
body_is_here(const struct sm_http_head *h, size_t after)
{
	return !h->chunked && h->content_length <= after;
}

/* A complete head of @len bytes at @p whose body is not here yet: parse it again in a copy. */
static ssize_t
copy_head(struct sm_http_conn *cc, struct sm_http_req *req, const char *p, size_t len,
	  size_t after)
{
	struct sm_sendbuf *b = sm_sendbuf_dup(p, len);
	int ret;

	if (b == NULL) {
		fail(cc, 500, "out of memory");
		return -1;
	}
	head_reset(&req->head);
	ret = sm_http_parse_head(b->data, len, cc->max_header, &req->head);
	if (ret != (int)len) {
		/* Cannot happen: the same bytes parsed a moment ago. */
		sm_bufseg_put(&b->seg);
		fail(cc, 500, "request head changed while copied");
		return -1;
	}
	req->hseg = &b->seg;
	return head_done(cc, req, after) < 0 ? -1 : (ssize_t)len;
}

static ssize_t
on_head(struct sm_http_conn *cc, const struct sm_iov *v, const char *p, size_t left)
{
	struct sm_http_req *req;
	size_t skip = 0, old, n;
	int ret;

	if (cc->hbuf == NULL) {
		/* RFC 9112 2.2: empty lines before a request line are ignored. */
		while (skip < left && (p[skip] == '\r' || p[skip] == '\n'))
			skip++;
		if (skip > 0)
			return (ssize_t)skip;
		if (cc->cur == NULL && (cc->cur = req_new(cc)) == NULL) {
			close_now(cc);
			return -1;
		}
		req = cc->cur;
		ret = sm_http_parse_head(p, left, cc->max_header, &req->head);
		if (ret > 0 && !body_is_here(&req->head, left - (size_t)ret)) {
			/* The body is still to come: do not pin the receive buffer
			 * while the client takes its time (or goes away). */
			return copy_head(cc, req, p, (size_t)ret, left - (size_t)ret);
		}
		if (ret > 0) {
			/* the whole request is here: parse in place, keep the buffer */
			if (v->seg != NULL)
				sm_bufseg_get(v->seg);
			req->hseg = v->seg;
			return head_done(cc, req, left - (size_t)ret) < 0 ? -1 : ret;
		}
		if (ret != -EAGAIN) {
			fail(cc, req->head.status, req->head.error);
			return -1;
		}
		cc->hbuf = sm_sendbuf_new(cc->max_header);
		if (cc->hbuf == NULL) {
			fail(cc, 500, "out of memory");
			return -1;
		}
		memcpy(cc->hbuf->data, p, left);
		cc->hbuf->len = left;
		return (ssize_t)left;
	}
	/* Gathering a split head: parse again only when a line completed. */
	req = cc->cur;
	old = cc->hbuf->len;
	n = SM_MIN(left, cc->max_header - old);
	memcpy(cc->hbuf->data + old, p, n);
	cc->hbuf->len += n;
	if (memchr(p, '\n', n) == NULL) {
		if (cc->hbuf->len < cc->max_header)
			return (ssize_t)n;
		fail(cc, 431, "request head too large");
		return -1;
	}
	ret = sm_http_parse_head(cc->hbuf->data, cc->hbuf->len, cc->max_header, &req->head);
	if (ret == -EAGAIN)
		return (ssize_t)n;
	if (ret < 0) {
		fail(cc, req->head.status, req->head.error);
		return -1;
	}
	req->hseg = &cc->hbuf->seg; /* the gather buffer's reference moves */
	cc->hbuf = NULL;
	n = (size_t)ret - old;
	return head_done(cc, req, left - n) < 0 ? -1 : (ssize_t)n;
}

static ssize_t
on_body(struct sm_http_conn *cc, const struct sm_iov *v, const char *p, size_t left)
{
	struct sm_http_req *req = cc->cur;
	size_t n;

	req->want_continue = false; /* the body comes anyway */
	if (cc->body == NULL) {
		if (left >= cc->need) {
			/* the whole body is here: a view, no copy */
			n = (size_t)cc->need;
			if (v->seg != NULL)
				sm_bufseg_get(v->seg);
			req->bseg = v->seg;
			req->body = (struct sm_http_str){ p, n };
			cc->need = 0;
			dispatch(cc, req);
			return (ssize_t)n;
		}
		cc->body = sm_sendbuf_new((size_t)cc->need);
		if (cc->body == NULL) {
			fail(cc, 500, "out of memory");
			return -1;
		}
		cc->body->len = 0;
	}
	n = (size_t)SM_MIN((uint64_t)left, cc->need);
	memcpy(cc->body->data + cc->body->len, p, n);
	cc->body->len += n;
	cc->need -= n;
	if (cc->need == 0) {
		req->bseg = &cc->body->seg;
		req->body = (struct sm_http_str){ cc->body->data, cc->body->len };
		cc->body = NULL;
		dispatch(cc, req);
	}
	return (ssize_t)n;
}

/* Append decoded chunk data, growing the gather buffer (at most max_body). */
static int
body_append(struct sm_http_conn *cc, const char *p, size_t n)
{
	struct sm_sendbuf *b = cc->body, *nb;
	size_t len = b != NULL ? b->len : 0, cap;

	if (b == NULL || len + n > b->cap) {
		cap = b != NULL ? b->cap * 2 : 0;
		cap = SM_MIN(cap, cc->max_body);
		cap = SM_MAX(cap, len + n);
		nb = sm_sendbuf_new(cap);
		if (nb == NULL)
			return -ENOMEM;
		if (len > 0)
			memcpy(nb->data, b->data, len);
		nb->len = len;
		if (b != NULL)
			sm_bufseg_put(&b->seg);
		cc->body = b = nb;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
	return 0;
}

static ssize_t
on_chunked(struct sm_http_conn *cc, const char *p, size_t left)
{
	struct sm_http_req *req = cc->cur;
	struct sm_http_str d;
	ssize_t n;

	req->want_continue = false;
	n = sm_http_chunked_decode(&cc->ck, p, left, &d);
	if (n == -EFBIG) {
		fail_too_large(cc);
		return -1;
	}
	if (n < 0) {
		fail(cc, 400, "malformed chunked body");
		return -1;
	}
	if (d.len > 0 && body_append(cc, d.p, d.len) < 0) {
		fail(cc, 500, "out of memory");
		return -1;
	}
	if (cc->ck.done) {
		if (cc->body != NULL) {
			req->bseg = &cc->body->seg;
			req->body = (struct sm_http_str){ cc->body->data, cc->body->len };
			cc->body = NULL;
		}
		dispatch(cc, req);
	}
	return n;
}

static void
consume(struct sm_http_conn *cc, const struct sm_iov *v)
{
	const char *p = v->base;
	size_t left = v->len;
	ssize_t n;

	while (left > 0 && !cc->stop) {
		if (cc->st == ST_HEAD)
			n = on_head(cc, v, p, left);
		else if (cc->st == ST_BODY)
			n = on_body(cc, v, p, left);
		else
			n = on_chunked(cc, p, left);
		if (n < 0)
			return;
		p += n;
		left -= (size_t)n;
	}
}

/*
 * The connection's timer, armed at accept and re-armed for the next
 * deadline each time it fires: requests never touch the timer heap, they
 * only note their times.
 */
static void
http_timer_fire(void *arg)
{
	struct sm_http_conn *cc = arg;
	const struct sm_http_service *svc = cc->svc;
	uint64_t now = sm_shard_now_ms(), next = UINT64_MAX;
	bool receiving = cc->cur != NULL;
	bool idle = !receiving && cc->fifo_head == NULL;

	if (cc->c == NULL || cc->stop)
		return;
	if (receiving && svc->request_timeout_ms != 0) {
		if (now - cc->req_start_ms >= svc->request_timeout_ms) {
			SM_STAT_INC(conns_timed_out);
			fail(cc, 408, "request timeout: the request did not arrive whole in time");
			return;
		}
		next = cc->req_start_ms + svc->request_timeout_ms;
	}
	if (idle && svc->idle_timeout_ms != 0) {
		if (now - cc->active_ms >= svc->idle_timeout_ms) {
			SM_STAT_INC(conns_timed_out);
			close_now(cc);
			return;
		}
		next = SM_MIN(next, cc->active_ms + svc->idle_timeout_ms);
	}
	if (next == UINT64_MAX) /* busy with the handler: look again later */
		next = now + SM_MAX(svc->request_timeout_ms, svc->idle_timeout_ms);
	sm_timer_arm(&cc->timer, next > now ? next - now : 1);
}

static int
http_accepted(struct sm_conn *c, void *listen_ctx)
{
	const struct sm_http_service *svc = listen_ctx;
	struct sm_http_conn *cc;

	if (svc == NULL || svc->handler == NULL || svc->handler->request == NULL)
		return -EINVAL;
	if (!pools_ready) {
		if (sm_pool_init(&conn_pool, "http-conn", sizeof(*cc), 16) < 0)
			return -ENOMEM;
		if (sm_pool_init(&req_pool, "http-req", sizeof(struct sm_http_req), 32) < 0) {
			sm_pool_destroy(&conn_pool);
			return -ENOMEM;
		}
		pools_ready = true;
		sm_pool_trim_when_idle(&conn_pool);
		sm_pool_trim_when_idle(&req_pool);
	}
	cc = sm_pool_get(&conn_pool);
	if (cc == NULL)
		return -ENOMEM;
	memset(cc, 0, sizeof(*cc));
	cc->c = c;
	cc->svc = svc;
	cc->max_header = svc->max_header ? svc->max_header : SM_HTTP_DEFAULT_MAX_HEADER;
	cc->max_body = svc->max_body ? svc->max_body : SM_HTTP_DEFAULT_MAX_BODY;
	cc->refs = 1;
	cc->st = ST_HEAD;
	cc->peer = c->peer;
	cc->active_ms = sm_shard_now_ms();
	sm_timer_init(&cc->timer, http_timer_fire, cc);
	/* The earlier of the two; a 0 (no limit) wraps to the largest and loses. */
	if (svc->request_timeout_ms != 0 || svc->idle_timeout_ms != 0)
		sm_timer_arm(&cc->timer, SM_MIN(svc->request_timeout_ms - 1u,
						svc->idle_timeout_ms - 1u) + 1u);
	c->ctx = cc;
	return 0;
}

static void
http_received(struct sm_conn *c, const struct sm_iov *iov, unsigned n)
{
	struct sm_http_conn *cc = c->ctx;
	unsigned i;

	cc->refs++;
	cc->active_ms = sm_shard_now_ms();
	for (i = 0; i < n && !cc->stop; i++)
		consume(cc, &iov[i]);
	conn_put(cc);
}

static void
http_drain(struct sm_conn *c)
{
	struct sm_http_conn *cc = c->ctx;

	cc->draining = true;
	if (cc->fifo_head == NULL && cc->cur == NULL)
		close_now(cc);
}

static void
http_closed(struct sm_conn *c, int err)
{
	struct sm_http_conn *cc = c->ctx;
	struct sm_http_req *r, *next;

	(void)err;
	cc->c = NULL;
	cc->stop = true;
	sm_timer_cancel(&cc->timer);
	drop_gather(cc);
	if (cc->cur != NULL && cc->cur->state == REQ_HEAD)
		req_free(cc->cur);
	cc->cur = NULL;
	/* Requests with the handler stay until answered; the rest go now. */
	for (r = cc->fifo_head; r != NULL; r = next) {
		next = r->next;
		r->next = NULL;
		if (r->state != REQ_HANDLER)
			req_free(r);
	}
	cc->fifo_head = NULL;
	cc->fifo_tail = NULL;
	conn_put(cc);
}

void
sm_http_shard_fini(void)
{
	if (!pools_ready)
		return;
	sm_pool_destroy(&conn_pool);
	sm_pool_destroy(&req_pool);
	pools_ready = false;
}

const struct sm_proto_ops sm_http_proto_ops = {
	.name = "http",
	.accepted = http_accepted,
	.received = http_received,
	.drain = http_drain,
	.closed = http_closed,
};
