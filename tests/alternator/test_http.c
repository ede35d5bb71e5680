/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP/1.1 connections, in three layers:
 *
 *  - the head parser and the chunked decoder over byte buffers, split at
 *    every position, and their bad inputs;
 *  - the connection layer on a fake driver (no sockets): pipelined streams
 *    delivered in every two-piece split and byte by byte, zero-copy bodies,
 *    responses kept in request order when the handler answers out of order,
 *    100-continue, the error answers, persistence rules, a client that
 *    vanishes with requests in flight, draining, and zero allocations per
 *    request in the steady state;
 *  - end to end over loopback with the io_uring driver and the runtime (when
 *    the build links the driver): a blocking client speaks HTTP to
 *    sm_http_proto_ops with a handler that answers some requests later from
 *    a timer.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <arpa/inet.h>
#include <cmocka.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sm_core.h"
#include "sm_http.h"
#include "sm_net.h"

#if __has_include("sm_net_uring.h")
#include "sm_net_uring.h"
#define HAVE_URING 1
#endif

static bool
str_is(struct sm_http_str s, const char *lit)
{
	return s.len == strlen(lit) && memcmp(s.p, lit, s.len) == 0;
}

#define assert_str(s, lit)                                                                         \
	do {                                                                                       \
		struct sm_http_str s_ = (s);                                                       \
		if (!str_is(s_, (lit)))                                                            \
			fail_msg("%s is \"%.*s\", expected \"%s\"", #s, (int)s_.len, s_.p, (lit)); \
	} while (0)

/* ---- the head parser ---- */

static const char post_head[] = "POST /path/x?a=b&c HTTP/1.1\r\n"
				"Host: example.com\r\n"
				"X-Amz-Target:  DynamoDB_20120810.PutItem \t\r\n"
				"Content-Length: 12\r\n"
				"content-length: 12\r\n"
				"Connection: Upgrade, keep-alive\r\n"
				"Empty:\r\n"
				"\r\n";

static void
test_parse_fields(void **state)
{
	char buf[sizeof(post_head) + 16];
	struct sm_http_head h;
	size_t n = strlen(post_head);

	(void)state;
	memcpy(buf, post_head, n);
	memcpy(buf + n, "BODY", 4);
	assert_int_equal(sm_http_parse_head(buf, n + 4, 16384, &h), (int)n);
	assert_int_equal(h.method, SM_HTTP_POST);
	assert_str(h.method_text, "POST");
	assert_str(h.target, "/path/x?a=b&c");
	assert_str(h.path, "/path/x");
	assert_str(h.query, "a=b&c");
	assert_int_equal(h.version, 11);
	assert_int_equal(h.nfields, 6);
	assert_true(h.has_length);
	assert_int_equal(h.content_length, 12);
	assert_false(h.chunked);
	assert_true(h.keep_alive);
	assert_false(h.expect_continue);
	assert_str(*sm_http_head_field(&h, "x-amz-target"), "DynamoDB_20120810.PutItem");
	assert_str(*sm_http_head_field(&h, "HOST"), "example.com");
	assert_str(*sm_http_head_field(&h, "empty"), "");
	assert_null(sm_http_head_field(&h, "x-amz-targe"));
	assert_null(sm_http_head_field(&h, "authorization"));
	assert_str(h.fields[0].name, "Host");
}

static void
test_parse_every_prefix(void **state)
{
	struct sm_http_head h;
	size_t n = strlen(post_head), k;

	(void)state;
	for (k = 0; k < n; k++)
		if (sm_http_parse_head(post_head, k, 16384, &h) != -EAGAIN)
			fail_msg("prefix of %zu bytes: not -EAGAIN", k);
	assert_int_equal(sm_http_parse_head(post_head, n, 16384, &h), (int)n);
	assert_int_equal(sm_http_parse_head(post_head, n, n, &h), (int)n);
	/* a limit that cuts the head: too large, not incomplete */
	assert_int_equal(sm_http_parse_head(post_head, n, n - 1, &h), -EMSGSIZE);
	assert_int_equal(h.status, 431);
	assert_int_equal(sm_http_parse_head(post_head, n - 1, n - 1, &h), -EMSGSIZE);
	assert_int_equal(sm_http_parse_head(post_head, n - 2, n - 1, &h), -EAGAIN);
}

static int
parse_str(const char *s, struct sm_http_head *h)
{
	return sm_http_parse_head(s, strlen(s), 16384, h);
}

static void
test_parse_versions_and_targets(void **state)
{
	struct sm_http_head h;

	(void)state;
	assert_true(parse_str("GET / HTTP/1.0\r\n\r\n", &h) > 0);
	assert_int_equal(h.version, 10);
	assert_false(h.keep_alive);
	assert_false(h.has_length);
	assert_true(parse_str("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", &h) > 0);
	assert_true(h.keep_alive);
	assert_true(parse_str("GET / HTTP/1.0\r\nExpect: 100-continue\r\n\r\n", &h) > 0);
	assert_false(h.expect_continue); /* a 1.0 client gets no 100 */
	assert_true(parse_str("GET / HTTP/1.1\r\nConnection: close\r\n\r\n", &h) > 0);
	assert_false(h.keep_alive);
	assert_true(parse_str("GET / HTTP/1.1\r\nconnection: keep-alive,CLOSE\r\n\r\n", &h) > 0);
	assert_false(h.keep_alive);
	assert_true(parse_str("GET / HTTP/1.2\r\n\r\n", &h) > 0);
	assert_int_equal(h.version, 11);
	assert_true(h.keep_alive); /* no Host: allowed */
	assert_true(parse_str("PUT /x HTTP/1.1\r\nExpect: 100-Continue\r\n"
			      "Content-Length: 3\r\n\r\n",
			      &h) > 0);
	assert_true(h.expect_continue);
	assert_int_equal(h.method, SM_HTTP_PUT);
	assert_true(parse_str("POST / HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n", &h) > 0);
	assert_true(h.chunked);
	assert_true(parse_str("POST / HTTP/1.1\r\nTransfer-Encoding: ,chunked , \r\n\r\n", &h) > 0);
	assert_true(h.chunked);
	assert_true(parse_str("BREW /pot HTTP/1.1\r\n\r\n", &h) > 0);
	assert_int_equal(h.method, SM_HTTP_OTHER);
	assert_str(h.method_text, "BREW");
	assert_true(parse_str("GET /?q HTTP/1.1\r\n\r\n", &h) > 0);
	assert_str(h.path, "/");
	assert_str(h.query, "q");
	assert_true(parse_str("GET http://host:8000/p/q?x=1 HTTP/1.1\r\n\r\n", &h) > 0);
	assert_str(h.path, "/p/q");
	assert_str(h.query, "x=1");
	assert_true(parse_str("GET HTTPS://host HTTP/1.1\r\n\r\n", &h) > 0);
	assert_str(h.path, "/");
	assert_str(h.query, "");
	assert_true(parse_str("GET http://host?y HTTP/1.1\r\n\r\n", &h) > 0);
	assert_str(h.path, "/");
	assert_str(h.query, "y");
	assert_true(parse_str("OPTIONS * HTTP/1.1\r\n\r\n", &h) > 0);
	assert_int_equal(h.method, SM_HTTP_OPTIONS);
	assert_str(h.path, "*");
	assert_true(parse_str("CONNECT host:443 HTTP/1.1\r\n\r\n", &h) > 0);
	assert_str(h.path, "host:443");
	assert_true(parse_str("POST / HTTP/1.1\r\nContent-Length: 18446744073709551615\r\n\r\n",
			      &h) > 0);
	assert_int_equal(h.content_length, UINT64_MAX);
	assert_true(parse_str("GET / HTTP/1.1\r\nX: caf\xc3\xa9\r\n\r\n", &h) > 0); /* obs-text */
}

static void
test_parse_bad(void **state)
{
	static const struct {
		const char *in;
		int ret;
		int status;
	} cases[] = {
		{ "GET / HTTP/1.1\n\n", -EINVAL, 400 },
		{ "GET / HTTP/1.1\r\nHost: a\n\r\n", -EINVAL, 400 },
		{ "GET / HTTP/1.1\r\nHost: a\r\n\n", -EINVAL, 400 },
		{ "GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", -EINVAL, 400 },
		{ "GET / HTTP/1.1\r\n\tfolded\r\n\r\n", -EINVAL, 400 },
		{ "GET / HTTP/1.1\r\nHost : a\r\n\r\n", -EINVAL, 400 },
		{ "GET / HTTP/1.1\r\n: a\r\n\r\n", -EINVAL, 400 },
		{ "GET / HTTP/1.1\r\nBad Header\r\n\r\n", -EINVAL, 400 },
		{ "GET / HTTP/1.1\r\nNoColon\r\n\r\n", -EINVAL, 400 },
		{ "G(T / HTTP/1.1\r\n\r\n", -EINVAL, 400 },
		{ "GET  / HTTP/1.1\r\n\r\n", -EINVAL, 400 },
		{ "GET / HTTP/1.1 \r\n\r\n", -EINVAL, 400 },
		{ "GET /a b HTTP/1.1\r\n\r\n", -EINVAL, 400 },
		{ "GET /\x7f HTTP/1.1\r\n\r\n", -EINVAL, 400 },
		{ "GET / HTTX/1.1\r\n\r\n", -EINVAL, 400 },
		{ "GET / HTTP/1.10\r\n\r\n", -EINVAL, 400 },
		{ "GET /\r\n\r\n", -EINVAL, 400 },
		{ "\r\nGET / HTTP/1.1\r\n\r\n", -EINVAL, 400 },
		{ "GET p HTTP/1.1\r\n\r\n", -EINVAL, 400 },
		{ "GET * HTTP/1.1\r\n\r\n", -EINVAL, 400 },
		{ "GET http:/// HTTP/1.1\r\n\r\n", -EINVAL, 400 },
		{ "GET / HTTP/2.0\r\n\r\n", -EPROTONOSUPPORT, 505 },
		{ "GET / HTTP/0.9\r\n\r\n", -EPROTONOSUPPORT, 505 },
		{ "GET / HTTP/1.1\r\nX: a\x01"
		  "b\r\n\r\n",
		  -EINVAL, 400 },
		{ "GET / HTTP/1.1\r\nX: a\rb\r\n\r\n", -EINVAL, 400 },
		{ "GET / HTTP/1.1\r\nX: a\x7f\r\n\r\n", -EINVAL, 400 },
		{ "POST / HTTP/1.1\r\nContent-Length: 1x\r\n\r\n", -EINVAL, 400 },
		{ "POST / HTTP/1.1\r\nContent-Length:\r\n\r\n", -EINVAL, 400 },
		{ "POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", -EINVAL, 400 },
		{ "POST / HTTP/1.1\r\nContent-Length: +1\r\n\r\n", -EINVAL, 400 },
		{ "POST / HTTP/1.1\r\nContent-Length: 18446744073709551616\r\n\r\n", -EINVAL, 400 },
		{ "POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n", -EINVAL,
		  400 },
		{ "POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", -EINVAL,
		  400 },
		{ "POST / HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\n", -EINVAL, 400 },
		{ "POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
		  -EINVAL, 400 },
		{ "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 0\r\n\r\n",
		  -EINVAL, 400 },
		{ "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", -ENOSYS, 501 },
		{ "POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", -ENOSYS, 501 },
		{ "POST / HTTP/1.1\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", -EINVAL, 400 },
		{ "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: "
		  "gzip\r\n\r\n",
		  -EINVAL, 400 },
		{ "POST / HTTP/1.1\r\nTransfer-Encoding: \r\n\r\n", -EINVAL, 400 },
		{ "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", -EINVAL, 400 },
	};
	struct sm_http_head h;
	unsigned i;
	int ret;

	(void)state;
	for (i = 0; i < SM_ARRAY_SIZE(cases); i++) {
		ret = parse_str(cases[i].in, &h);
		if (ret != cases[i].ret || h.status != cases[i].status || h.error == NULL)
			fail_msg("case %u (%s): ret %d status %d, expected %d %d", i, cases[i].in,
				 ret, h.status, cases[i].ret, cases[i].status);
	}
}

static void
test_parse_limits(void **state)
{
	char buf[8192];
	struct sm_http_head h;
	size_t n;
	int i;

	(void)state;
	/* a head that does not end within the limit */
	memset(buf, 0, sizeof(buf));
	n = (size_t)snprintf(buf, sizeof(buf), "GET / HTTP/1.1\r\nX-Long: %0300d\r\n\r\n", 0);
	assert_int_equal(sm_http_parse_head(buf, n, 256, &h), -EMSGSIZE);
	assert_int_equal(h.status, 431);
	assert_int_equal(sm_http_parse_head(buf, 200, 256, &h), -EAGAIN);
	assert_int_equal(sm_http_parse_head(buf, n, n, &h), (int)n);
	/* SM_HTTP_MAX_FIELDS fields pass, one more is 431 */
	n = (size_t)snprintf(buf, sizeof(buf), "GET / HTTP/1.1\r\n");
	for (i = 0; i < SM_HTTP_MAX_FIELDS; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "F%d: %d\r\n", i, i);
	memcpy(buf + n, "\r\n", 2);
	assert_int_equal(sm_http_parse_head(buf, n + 2, sizeof(buf), &h), (int)n + 2);
	assert_int_equal(h.nfields, SM_HTTP_MAX_FIELDS);
	assert_str(*sm_http_head_field(&h, "f63"), "63");
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, "One: more\r\n\r\n");
	assert_int_equal(sm_http_parse_head(buf, n, sizeof(buf), &h), -EMSGSIZE);
	assert_int_equal(h.status, 431);
}

/* ---- the chunked decoder ---- */

static const char chunked_body[] = "3;ext=1;q=\"x y\"\r\nabc\r\n"
				   "10 ; e\r\n0123456789abcdef\r\n"
				   "0A\r\nABCDEFGHIJ\r\n"
				   "0\r\nTrailer: x\r\nOther:\r\n\r\n";
static const char chunked_decoded[] = "abc0123456789abcdefABCDEFGHIJ";

/* Decode @in fed in pieces ending at @cuts; returns the consumed total or -errno. */
static ssize_t
decode_pieces(const char *in, size_t len, const size_t *cuts, unsigned ncuts, uint64_t max,
	      char *out, size_t *outlen)
{
	struct sm_http_chunked d;
	struct sm_http_str data;
	size_t pos = 0, end;
	unsigned c;
	ssize_t n;

	sm_http_chunked_init(&d, max, 1024);
	*outlen = 0;
	for (c = 0; c <= ncuts && !d.done; c++) {
		end = c < ncuts ? cuts[c] : len;
		while (pos < end && !d.done) {
			n = sm_http_chunked_decode(&d, in + pos, end - pos, &data);
			if (n < 0)
				return n;
			if (n == 0)
				return -EIO; /* no progress */
			if (data.len > 0) {
				if (data.p < in + pos || data.p + data.len > in + pos + n)
					return -EFAULT;
				memcpy(out + *outlen, data.p, data.len);
				*outlen += data.len;
			}
			pos += (size_t)n;
		}
	}
	return d.done ? (ssize_t)pos : -EAGAIN;
}

static void
test_chunked_splits(void **state)
{
	size_t len = strlen(chunked_body), outlen, i, j, cuts[2048];
	char in[512], out[512];
	ssize_t n;

	(void)state;
	memcpy(in, chunked_body, len);
	memcpy(in + len, "NEXT", 4);
	n = decode_pieces(in, len + 4, NULL, 0, 1000, out, &outlen);
	assert_int_equal(n, (ssize_t)len);
	assert_int_equal(outlen, strlen(chunked_decoded));
	assert_memory_equal(out, chunked_decoded, outlen);
	for (i = 1; i < len; i++) {
		cuts[0] = i;
		n = decode_pieces(in, len + 4, cuts, 1, 1000, out, &outlen);
		if (n != (ssize_t)len || outlen != strlen(chunked_decoded) ||
		    memcmp(out, chunked_decoded, outlen) != 0)
			fail_msg("split at %zu: %zd", i, n);
		for (j = i + 1; j < len; j += 7) {
			cuts[1] = j;
			n = decode_pieces(in, len + 4, cuts, 2, 1000, out, &outlen);
			if (n != (ssize_t)len || outlen != strlen(chunked_decoded))
				fail_msg("split at %zu and %zu: %zd", i, j, n);
		}
	}
	for (i = 0; i < len; i++)
		cuts[i] = i + 1;
	n = decode_pieces(in, len + 4, cuts, (unsigned)len, 1000, out, &outlen);
	assert_int_equal(n, (ssize_t)len);
	assert_memory_equal(out, chunked_decoded, outlen);
	/* an empty body, and exactly max_body */
	n = decode_pieces("0\r\n\r\n", 5, NULL, 0, 0, out, &outlen);
	assert_int_equal(n, 5);
	assert_int_equal(outlen, 0);
	n = decode_pieces(in, len, NULL, 0, strlen(chunked_decoded), out, &outlen);
	assert_int_equal(n, (ssize_t)len);
	n = decode_pieces(in, len, NULL, 0, strlen(chunked_decoded) - 1, out, &outlen);
	assert_int_equal(n, -EFBIG);
	/* incomplete */
	n = decode_pieces(in, len - 1, NULL, 0, 1000, out, &outlen);
	assert_int_equal(n, -EAGAIN);
}

static void
test_chunked_bad(void **state)
{
	static const struct {
		const char *in;
		uint64_t max;
		ssize_t ret;
	} cases[] = {
		{ "x\r\n", 100, -EINVAL },
		{ "\r\n", 100, -EINVAL },
		{ ";e\r\n", 100, -EINVAL },
		{ "3\nabc\r\n0\r\n\r\n", 100, -EINVAL },
		{ "3\r\nabcX\r\n0\r\n\r\n", 100, -EINVAL },
		{ "3\r\nabc\rX0\r\n\r\n", 100, -EINVAL },
		{ "3x\r\nabc\r\n0\r\n\r\n", 100, -EINVAL },
		{ "3;a\x01\r\nabc\r\n0\r\n\r\n", 100, -EINVAL },
		{ "3\r\nabc\r\n0\r\n folded\r\n\r\n", 100, -EINVAL },
		{ "3\r\nabc\r\n0\r\nT: x\n\r\n", 100, -EINVAL },
		{ "3\r\nabc\r\n0\r\nT: x\r\n\n", 100, -EINVAL },
		{ "3\r\nabc\r\n0\r\n\n", 100, -EINVAL },
		{ "3\r\nabc\r\n0\r\nT: \x01\r\n\r\n", 100, -EINVAL },
		{ "b\r\n", 10, -EFBIG },
		{ "5\r\n12345\r\n6\r\n", 10, -EFBIG },
		{ "ffffffffffffffffffff\r\n", UINT64_MAX, -EFBIG },
		{ "10000000000000000\r\n", UINT64_MAX, -EFBIG },
	};
	char out[256], longext[6000];
	size_t outlen;
	unsigned i;
	ssize_t n;

	(void)state;
	for (i = 0; i < SM_ARRAY_SIZE(cases); i++) {
		n = decode_pieces(cases[i].in, strlen(cases[i].in), NULL, 0, cases[i].max, out,
				  &outlen);
		if (n != cases[i].ret)
			fail_msg("case %u: %zd, expected %zd", i, n, cases[i].ret);
	}
	/* extensions over the line limit, trailers over max_trailer (1024 here) */
	memset(longext, 'e', sizeof(longext));
	memcpy(longext, "1;", 2);
	memcpy(longext + 5000, "\r\nx\r\n0\r\n\r\n", 11);
	assert_int_equal(decode_pieces(longext, strlen(longext), NULL, 0, 100, out, &outlen),
			 -EINVAL);
	memset(longext, 't', sizeof(longext));
	memcpy(longext, "0\r\nT: ", 6);
	memcpy(longext + 2000, "\r\n\r\n", 5);
	assert_int_equal(decode_pieces(longext, strlen(longext), NULL, 0, 100, out, &outlen),
			 -EINVAL);
}

/* ---- the connection layer on a fake driver ---- */

struct fconn {
	struct sm_conn c; /* first: the driver casts */
	char *out;
	size_t out_len, out_cap;
	bool close_called;
};

/*
 * Every response head carries a Date line (its value changes): check its
 * shape and drop it from the @n bytes at @p, so the expected texts stay
 * exact; the length left.
 */
static size_t
drop_date(char *p, size_t n)
{
	char *end = p + n, *d, *e;
	size_t cut;

	while ((d = memmem(p, (size_t)(end - p), "\r\nDate: ", 8)) != NULL) {
		e = memmem(d + 2, (size_t)(end - d - 2), "\r\n", 2);
		assert_non_null(e);
		/* "Date: Tue, 01 Dec 2026 14:44:10 GMT" */
		assert_int_equal(e - (d + 2), 35);
		assert_memory_equal(e - 4, " GMT", 4);
		cut = (size_t)(e - d);
		memmove(d + 2, e + 2, (size_t)(end - e - 2));
		end -= cut;
		n -= cut;
		p = d + 2;
	}
	return n;
}

static int
fake_send(struct sm_conn *c, const struct sm_iov *iov, unsigned n)
{
	struct fconn *f = (struct fconn *)c;
	unsigned i;

	if (c->closing)
		return -EPIPE;
	for (i = 0; i < n; i++) {
		if (f->out_len + iov[i].len > f->out_cap) {
			f->out_cap = (f->out_len + iov[i].len) * 2;
			f->out = realloc(f->out, f->out_cap); /* not sm_malloc: not counted */
			assert_non_null(f->out);
		}
		memcpy(f->out + f->out_len, iov[i].base, iov[i].len);
		f->out_len += iov[i].len;
		f->out_len = f->out_len - iov[i].len +
			     drop_date(f->out + f->out_len - iov[i].len, iov[i].len);
	}
	return 0;
}

static void
fake_close(struct sm_conn *c)
{
	c->closing = true;
	((struct fconn *)c)->close_called = true;
}

static int
fake_shard_init(const struct sm_net_config *cfg)
{
	(void)cfg;
	return 0;
}

static void
fake_shard_fini(void)
{
}

static const struct sm_net_driver fake_driver = {
	.name = "fake",
	.shard_init = fake_shard_init,
	.shard_fini = fake_shard_fini,
	.send = fake_send,
	.close = fake_close,
};

/* Receive buffers: counted, so a test can see every reference come back. */
struct tseg {
	struct sm_bufseg seg;
	char data[];
};

static int segs_live;

static void
tseg_release(struct sm_bufseg *s)
{
	segs_live--;
	free(sm_container_of(s, struct tseg, seg));
}

/* The handler: echo, or hold requests for the test to answer. */
static bool hold_mode;
static struct sm_http_req *held[64];
static unsigned nheld, dispatched;
static const char *last_body_p;
static size_t last_body_len;

static void
echo(struct sm_http_req *req)
{
	const struct sm_http_str *t = sm_http_header(req, "x-amz-target");
	struct sm_http_buf *b = sm_http_req_body_buf(req);
	char pre[512];
	int n;

	n = snprintf(pre, sizeof(pre), "%.*s %.*s t=%.*s len=%zu:", (int)req->head.method_text.len,
		     req->head.method_text.p, (int)req->head.target.len, req->head.target.p,
		     t ? (int)t->len : 1, t ? t->p : "-", req->body.len);
	if (sm_http_buf_append(b, pre, (size_t)n) < 0 ||
	    sm_http_buf_append(b, req->body.p, req->body.len) < 0) {
		sm_http_reply(req, 500, NULL, NULL, 0);
		return;
	}
	sm_http_reply_buf(req, 200, "text/plain");
}

static void
answer(struct sm_http_req *req)
{
	static const struct sm_iov parts[2] = { { NULL, "ab", 2 }, { NULL, "cd", 2 } };

	if (str_is(req->head.path, "/copy")) {
		sm_http_reply(req, 201, "application/json", "{}", 2);
	} else if (str_is(req->head.path, "/iov")) {
		req->reply_headers = "X-A: 1\r\nX-B: 2\r\n";
		sm_http_reply_iov(req, 200, NULL, parts, 2);
	} else if (str_is(req->head.path, "/nocontent")) {
		sm_http_reply(req, 204, NULL, "ignored", 7);
	} else {
		echo(req);
	}
}

static void
fake_request(void *ctx, struct sm_http_req *req)
{
	(void)ctx;
	dispatched++;
	last_body_p = req->body.p;
	last_body_len = req->body.len;
	assert_non_null(req->body.p);
	if (hold_mode) {
		assert_true(nheld < SM_ARRAY_SIZE(held));
		held[nheld++] = req;
		return;
	}
	answer(req);
}

static const struct sm_http_handler fake_handler = { .request = fake_request };
static struct sm_http_service fake_svc = { .handler = &fake_handler };

static void
fake_begin(void)
{
	sm_stats_fallback_attach();
	if (sm_net_find("fake") == NULL)
		assert_int_equal(sm_net_register(&fake_driver), 0);
	assert_int_equal(sm_net_use("fake"), 0);
	assert_int_equal(sm_net_shard_init(NULL), 0);
	memset(&fake_svc, 0, sizeof(fake_svc));
	fake_svc.handler = &fake_handler;
	hold_mode = false;
	nheld = 0;
	dispatched = 0;
	segs_live = 0;
}

static void
fake_end(void)
{
	assert_int_equal(segs_live, 0);
	sm_http_shard_fini();
	sm_net_shard_fini();
}

static void
conn_open(struct fconn *f)
{
	memset(f, 0, sizeof(*f));
	f->c.drv = &fake_driver;
	f->c.proto = &sm_http_proto_ops;
	assert_int_equal(sm_http_proto_ops.accepted(&f->c, &fake_svc), 0);
}

/* The transport goes away (after a close, or the peer vanished). */
static void
conn_gone(struct fconn *f)
{
	sm_http_proto_ops.closed(&f->c, 0);
	sm_conn_net_fini(&f->c); /* what a driver does when it frees a connection */
	free(f->out);
	f->out = NULL;
}

static struct tseg *
tseg_new(const char *p, size_t n)
{
	struct tseg *t = malloc(sizeof(*t) + n + 1);

	assert_non_null(t);
	t->seg.refcnt = 1;
	t->seg.release = tseg_release;
	memcpy(t->data, p, n);
	segs_live++;
	return t;
}

/* Deliver @n bytes as one receive buffer, as the driver does. */
static void
deliver(struct fconn *f, const char *p, size_t n)
{
	struct tseg *t;
	struct sm_iov v;

	if (f->c.closing || n == 0)
		return;
	t = tseg_new(p, n);
	v = (struct sm_iov){ &t->seg, t->data, n };
	sm_http_proto_ops.received(&f->c, &v, 1);
	sm_bufseg_put(&t->seg);
}

static void
deliver_str(struct fconn *f, const char *s)
{
	deliver(f, s, strlen(s));
}

/* Deliver pieces ending at @cuts as several views in one received() call. */
static void
deliver_views(struct fconn *f, const char *p, size_t n, const size_t *cuts, unsigned ncuts)
{
	struct sm_iov v[8];
	struct tseg *t[8];
	size_t pos = 0, end;
	unsigned i;

	assert_true(ncuts < 8);
	for (i = 0; i <= ncuts; i++) {
		end = i < ncuts ? cuts[i] : n;
		t[i] = tseg_new(p + pos, end - pos);
		v[i] = (struct sm_iov){ &t[i]->seg, t[i]->data, end - pos };
		pos = end;
	}
	sm_http_proto_ops.received(&f->c, v, ncuts + 1);
	for (i = 0; i <= ncuts; i++)
		sm_bufseg_put(&t[i]->seg);
}

/* The echo response for a request, appended to @b. */
static size_t
echo_resp(char *b, const char *method, const char *target, const char *amz, const char *body,
	  size_t blen, bool close)
{
	char text[200];
	int n;

	n = snprintf(text, sizeof(text), "%s %s t=%s len=%zu:", method, target, amz, blen);
	return (size_t)sprintf(b,
			       "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
			       "Content-Length: %zu\r\n%s\r\n%s%.*s",
			       (size_t)n + blen, close ? "Connection: close\r\n" : "", text,
			       (int)blen, body);
}

static void
assert_out(struct fconn *f, const char *expect, size_t len)
{
	if (f->out_len != len || memcmp(f->out, expect, len) != 0)
		fail_msg("output:\n%.*s\n---- expected:\n%.*s", (int)f->out_len,
			 f->out ? f->out : "", (int)len, expect);
}

static const char pipeline[] =
	"GET /a?x=1 HTTP/1.1\r\nHost: h\r\n\r\n"
	"POST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n"
	"X-Amz-Target: DynamoDB_20120810.GetItem\r\n\r\nhello"
	"POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
	"3;ext=1\r\nabc\r\n4\r\ndefg\r\n0\r\nTrailer: x\r\n\r\n"
	"\r\n"
	"HEAD /h HTTP/1.1\r\n\r\n"
	"PUT /copy HTTP/1.1\r\nContent-Length: 0\r\n\r\n"
	"GET /iov HTTP/1.1\r\n\r\n"
	"DELETE /nocontent HTTP/1.1\r\nExpect: 100-continue\r\n\r\n"
	"POST /last HTTP/1.1\r\nContent-Length: 3\r\nConnection: close\r\n\r\nxyz"
	"GET /never HTTP/1.1\r\n\r\n";

static size_t
pipeline_expected(char *b)
{
	size_t n = 0;

	n += echo_resp(b + n, "GET", "/a?x=1", "-", "", 0, false);
	n += echo_resp(b + n, "POST", "/b", "DynamoDB_20120810.GetItem", "hello", 5, false);
	n += echo_resp(b + n, "POST", "/c", "-", "abcdefg", 7, false);
	/* HEAD: the length of the body that GET would send, no body */
	n += (size_t)sprintf(b + n,
			     "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
			     "Content-Length: %zu\r\n\r\n",
			     strlen("HEAD /h t=- len=0:"));
	n += (size_t)sprintf(b + n, "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\n"
				    "Content-Length: 2\r\n\r\n{}");
	n += (size_t)sprintf(b + n, "HTTP/1.1 200 OK\r\nContent-Length: 4\r\nX-A: 1\r\nX-B: 2\r\n"
				    "\r\nabcd");
	n += (size_t)sprintf(b + n, "HTTP/1.1 204 No Content\r\n\r\n");
	n += echo_resp(b + n, "POST", "/last", "-", "xyz", 3, true);
	return n;
}

static void
test_conn_pipeline_splits(void **state)
{
	size_t len = strlen(pipeline), elen, i, j, cuts[2];
	char expect[4096];
	struct fconn f;

	(void)state;
	fake_begin();
	elen = pipeline_expected(expect);

	/* one buffer */
	conn_open(&f);
	deliver(&f, pipeline, len);
	assert_out(&f, expect, elen);
	assert_int_equal(dispatched, 8);
	assert_true(f.close_called);
	conn_gone(&f);
	assert_int_equal(segs_live, 0);

	/* every split into two receive buffers, and some into three views */
	for (i = 1; i < len; i++) {
		dispatched = 0;
		conn_open(&f);
		deliver(&f, pipeline, i);
		deliver(&f, pipeline + i, len - i);
		assert_out(&f, expect, elen);
		assert_int_equal(dispatched, 8);
		conn_gone(&f);
		for (j = i + 1; j < len; j += 13) {
			conn_open(&f);
			cuts[0] = i;
			cuts[1] = j;
			deliver_views(&f, pipeline, len, cuts, 2);
			assert_out(&f, expect, elen);
			conn_gone(&f);
		}
		if (segs_live != 0)
			fail_msg("split at %zu: %d receive buffers not released", i, segs_live);
	}

	/* byte by byte */
	conn_open(&f);
	for (i = 0; i < len; i++)
		deliver(&f, pipeline + i, 1);
	assert_out(&f, expect, elen);
	conn_gone(&f);
	fake_end();
}

static void
test_conn_zero_copy(void **state)
{
	static const char req[] = "POST /z HTTP/1.1\r\nContent-Length: 10\r\n\r\n0123456789";
	size_t len = strlen(req), head = len - 10;
	struct tseg *t, *t1;
	struct sm_iov v;
	struct fconn f;

	(void)state;
	fake_begin();
	hold_mode = true;
	conn_open(&f);
	/* whole in one buffer: the body is a view into it, which stays held */
	t1 = tseg_new(req, len);
	v = (struct sm_iov){ &t1->seg, t1->data, len };
	sm_http_proto_ops.received(&f.c, &v, 1);
	assert_int_equal(nheld, 1);
	assert_ptr_equal(last_body_p, t1->data + head);
	assert_int_equal(t1->seg.refcnt, 3); /* ours, the head's, the body's */
	sm_bufseg_put(&t1->seg);
	/* head in one buffer, the body whole in the next: the head is copied
	 * (its buffer is not pinned while the body is still to come), the body
	 * is a view */
	t = tseg_new(req, head);
	v = (struct sm_iov){ &t->seg, t->data, head };
	sm_http_proto_ops.received(&f.c, &v, 1);
	sm_bufseg_put(&t->seg);
	t = tseg_new(req + head, 10);
	v = (struct sm_iov){ &t->seg, t->data, 10 };
	sm_http_proto_ops.received(&f.c, &v, 1);
	assert_int_equal(nheld, 2);
	assert_ptr_equal(last_body_p, t->data);
	assert_memory_equal(last_body_p, "0123456789", 10);
	sm_bufseg_put(&t->seg);
	/* a body split across buffers is gathered: no receive buffer is kept */
	deliver(&f, req, len - 4);
	deliver(&f, req + len - 4, 4);
	assert_int_equal(nheld, 3);
	assert_memory_equal(last_body_p, "0123456789", 10);
	/* held: the first buffer and the third (the second request's body);
	 * heads whose body had not arrived were copied */
	assert_int_equal(segs_live, 2);
	assert_false(last_body_p >= req && last_body_p < req + len);
	sm_http_reply(held[0], 200, NULL, NULL, 0);
	sm_http_reply(held[1], 200, NULL, NULL, 0);
	sm_http_reply(held[2], 200, NULL, NULL, 0);
	assert_int_equal(segs_live, 0); /* views are released at the reply */
	conn_gone(&f);
	fake_end();
}

static void
test_conn_out_of_order(void **state)
{
	char expect[4096];
	size_t n = 0;
	struct fconn f;

	(void)state;
	fake_begin();
	hold_mode = true;
	conn_open(&f);
	deliver_str(&f, "GET /1 HTTP/1.1\r\n\r\nGET /2 HTTP/1.1\r\n\r\n"
			"POST /3 HTTP/1.1\r\nContent-Length: 1\r\n\r\nx");
	assert_int_equal(nheld, 3);
	held[2]->reply_headers = "X-Order: third\r\n";
	sm_http_reply(held[2], 200, "text/plain", "three", 5);
	assert_int_equal(f.out_len, 0); /* waits for 1 and 2 */
	sm_http_reply(held[1], 404, "text/plain", "two", 3);
	assert_int_equal(f.out_len, 0);
	sm_http_reply(held[0], 200, "text/plain", "one", 3);
	n += (size_t)sprintf(expect + n, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
					 "Content-Length: 3\r\n\r\none");
	n += (size_t)sprintf(expect + n, "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\n"
					 "Content-Length: 3\r\n\r\ntwo");
	n += (size_t)sprintf(expect + n, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
					 "Content-Length: 5\r\nX-Order: third\r\n\r\nthree");
	assert_out(&f, expect, n);
	assert_int_equal(segs_live, 0);
	/* then in order again, mixing answered-at-once and held */
	hold_mode = false;
	deliver_str(&f, "GET /4 HTTP/1.1\r\n\r\n");
	n += echo_resp(expect + n, "GET", "/4", "-", "", 0, false);
	assert_out(&f, expect, n);
	assert_false(f.close_called);
	conn_gone(&f);
	fake_end();
}

static void
test_conn_continue(void **state)
{
	static const char head[] = "POST /e HTTP/1.1\r\nExpect: 100-continue\r\n"
				   "Content-Length: 4\r\n\r\n";
	static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
	char expect[4096], buf[256];
	size_t n = 0;
	struct fconn f;

	(void)state;
	fake_begin();
	conn_open(&f);
	/* the head alone: invited, then answered */
	deliver_str(&f, head);
	n += (size_t)sprintf(expect + n, "%s", cont);
	assert_out(&f, expect, n);
	deliver_str(&f, "ab");
	deliver_str(&f, "cd");
	n += echo_resp(expect + n, "POST", "/e", "-", "abcd", 4, false);
	assert_out(&f, expect, n);
	/* head and body together: no 100 */
	snprintf(buf, sizeof(buf), "%sabcd", head);
	deliver_str(&f, buf);
	n += echo_resp(expect + n, "POST", "/e", "-", "abcd", 4, false);
	assert_out(&f, expect, n);
	/* a request in flight first: the 100 waits for its response */
	hold_mode = true;
	deliver_str(&f, "GET /first HTTP/1.1\r\n\r\n");
	deliver_str(&f, head);
	assert_int_equal(nheld, 1);
	assert_out(&f, expect, n);
	sm_http_reply(held[0], 200, NULL, "f", 1);
	n += (size_t)sprintf(expect + n, "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nf%s", cont);
	assert_out(&f, expect, n);
	deliver_str(&f, "wxyz");
	assert_int_equal(nheld, 2);
	assert_memory_equal(held[1]->body.p, "wxyz", 4);
	/* the body came before the 100 could go: none is sent */
	deliver_str(&f, "GET /second HTTP/1.1\r\n\r\n");
	deliver_str(&f, head);
	deliver_str(&f, "1234");
	assert_int_equal(nheld, 4);
	sm_http_reply(held[1], 200, NULL, NULL, 0);
	sm_http_reply(held[2], 200, NULL, NULL, 0);
	sm_http_reply(held[3], 200, NULL, NULL, 0);
	n += (size_t)sprintf(expect + n, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
					 "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
					 "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
	assert_out(&f, expect, n);
	conn_gone(&f);
	fake_end();
}

/* Feed @in to a fresh connection; the output must start with @prefix and close. */
static void
expect_error(const char *in, const char *prefix, const char *body_has)
{
	struct fconn f;

	conn_open(&f);
	deliver_str(&f, in);
	deliver_str(&f, "GET /after HTTP/1.1\r\n\r\n");
	if (f.out_len < strlen(prefix) || memcmp(f.out, prefix, strlen(prefix)) != 0 ||
	    memmem(f.out, f.out_len, "Connection: close\r\n", 19) == NULL ||
	    (body_has != NULL && memmem(f.out, f.out_len, body_has, strlen(body_has)) == NULL))
		fail_msg("input %s\noutput:\n%.*s", in, (int)f.out_len, f.out ? f.out : "");
	assert_true(f.close_called);
	conn_gone(&f);
}

static void
test_conn_errors(void **state)
{
	char big[20000];
	struct fconn f;
	size_t n;

	(void)state;
	fake_begin();
	fake_svc.max_header = 256;
	fake_svc.max_body = 1000;
	expect_error("GARBAGE\r\n\r\n", "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\n",
		     "malformed request line");
	expect_error("GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", "HTTP/1.1 400 Bad Request\r\n",
		     "folding");
	expect_error("POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
		     "HTTP/1.1 400 Bad Request\r\n", NULL);
	expect_error("POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\n",
		     "HTTP/1.1 400 Bad Request\r\n", "conflicting");
	expect_error("POST / HTTP/1.1\r\nContent-Length: 5a\r\n\r\n",
		     "HTTP/1.1 400 Bad Request\r\n", NULL);
	expect_error("POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
		     "HTTP/1.1 501 Not Implemented\r\n", NULL);
	expect_error("GET / HTTP/3.0\r\n\r\n", "HTTP/1.1 505 HTTP Version Not Supported\r\n", NULL);
	expect_error("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n",
		     "HTTP/1.1 400 Bad Request\r\n", "chunked");
	/* a head over max_header, whole or arriving in pieces: 431 */
	n = (size_t)snprintf(big, sizeof(big), "GET / HTTP/1.1\r\nX: %0400d\r\n\r\n", 0);
	expect_error(big, "HTTP/1.1 431 Request Header Fields Too Large\r\n", NULL);
	conn_open(&f);
	deliver(&f, big, 100);
	deliver(&f, big + 100, 100);
	assert_int_equal(f.out_len, 0);
	deliver(&f, big + 200, n - 200);
	assert_true(f.close_called);
	assert_non_null(memmem(f.out, f.out_len, "431", 3));
	conn_gone(&f);
	/* a body over max_body: 413 at once, DynamoDB's JSON by default */
	expect_error(
		"POST / HTTP/1.1\r\nContent-Length: 1001\r\nExpect: 100-continue\r\n\r\n",
		"HTTP/1.1 413 Payload Too Large\r\nContent-Type: application/x-amz-json-1.0\r\n",
		"{\"__type\":\"com.amazonaws.dynamodb.v20120810#PayloadTooLarge\","
		"\"message\":\"Request content length limit of 1000 bytes exceeded\"}");
	expect_error("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
		     "3e9\r\n",
		     "HTTP/1.1 413 Payload Too Large\r\n", NULL);
	fake_svc.too_large_type = "text/plain";
	fake_svc.too_large_body = "too big";
	expect_error("POST / HTTP/1.1\r\nContent-Length: 99999\r\n\r\n",
		     "HTTP/1.1 413 Payload Too Large\r\nContent-Type: text/plain\r\n"
		     "Content-Length: 7\r\nConnection: close\r\n\r\ntoo big",
		     NULL);
	/* the default limit is 16 MiB; no 100 Continue is sent for a body over it */
	fake_svc = (struct sm_http_service){ .handler = &fake_handler };
	conn_open(&f);
	deliver_str(&f,
		    "POST / HTTP/1.1\r\nContent-Length: 16777217\r\nExpect: 100-continue\r\n\r\n");
	n = (size_t)sprintf(big, "HTTP/1.1 413 Payload Too Large\r\n"
				 "Content-Type: application/x-amz-json-1.0\r\n"
				 "Content-Length: 129\r\nConnection: close\r\n\r\n"
				 "{\"__type\":\"com.amazonaws.dynamodb.v20120810#PayloadTooLarge\","
				 "\"message\":\"Request content length limit of 16777216 bytes "
				 "exceeded\"}");
	assert_out(&f, big, n);
	assert_true(f.close_called);
	conn_gone(&f);

	/* an error behind a request in flight waits for its response */
	hold_mode = true;
	conn_open(&f);
	deliver_str(&f, "GET /ok HTTP/1.1\r\n\r\nBAD REQUEST\r\n\r\n");
	assert_int_equal(nheld, 1);
	assert_int_equal(f.out_len, 0);
	assert_false(f.close_called);
	sm_http_reply(held[0], 200, NULL, "ok", 2);
	n = (size_t)sprintf(big, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
				 "HTTP/1.1 400 Bad Request\r\n");
	assert_true(f.out_len > n);
	assert_memory_equal(f.out, big, n);
	assert_true(f.close_called);
	conn_gone(&f);
	assert_int_equal(dispatched, 1);
	fake_end();
}

static void
test_conn_persistence(void **state)
{
	char expect[4096];
	struct fconn f;
	size_t n;

	(void)state;
	fake_begin();
	/* Connection: close: the response says so, then the close; the rest is not read */
	conn_open(&f);
	deliver_str(&f, "GET /c HTTP/1.1\r\nConnection: close\r\n\r\nGET /x HTTP/1.1\r\n\r\n");
	n = echo_resp(expect, "GET", "/c", "-", "", 0, true);
	assert_out(&f, expect, n);
	assert_true(f.close_called);
	assert_int_equal(dispatched, 1);
	conn_gone(&f);
	/* HTTP/1.0 closes by default */
	conn_open(&f);
	deliver_str(&f, "GET /a HTTP/1.0\r\n\r\n");
	n = echo_resp(expect, "GET", "/a", "-", "", 0, true);
	assert_out(&f, expect, n);
	assert_true(f.close_called);
	conn_gone(&f);
	/* HTTP/1.0 with keep-alive stays, and says so */
	conn_open(&f);
	deliver_str(&f, "GET /k HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
	deliver_str(&f, "GET /k2 HTTP/1.1\r\n\r\n");
	n = (size_t)sprintf(expect, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
				    "Content-Length: 17\r\nConnection: keep-alive\r\n\r\n"
				    "GET /k t=- len=0:");
	n += echo_resp(expect + n, "GET", "/k2", "-", "", 0, false);
	assert_out(&f, expect, n);
	assert_false(f.close_called);
	conn_gone(&f);
	/* a closing request answered later: earlier ones still go first */
	hold_mode = true;
	conn_open(&f);
	deliver_str(&f, "GET /1 HTTP/1.1\r\n\r\nGET /2 HTTP/1.1\r\nConnection: close\r\n\r\n");
	assert_int_equal(nheld, 2);
	assert_true(held[0]->keep_alive);
	assert_false(held[1]->keep_alive);
	sm_http_reply(held[1], 200, NULL, "2", 1);
	assert_false(f.close_called);
	sm_http_reply(held[0], 200, NULL, "1", 1);
	n = (size_t)sprintf(expect, "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n1"
				    "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nConnection: close\r\n"
				    "\r\n2");
	assert_out(&f, expect, n);
	assert_true(f.close_called);
	conn_gone(&f);
	fake_end();
}

static void
test_conn_vanish(void **state)
{
	struct fconn f;

	(void)state;
	fake_begin();
	hold_mode = true;
	/* two requests with the handler, one half-received body, one half head */
	conn_open(&f);
	deliver_str(&f, "GET /1 HTTP/1.1\r\n\r\nPOST /2 HTTP/1.1\r\nContent-Length: 3\r\n\r\nab");
	assert_int_equal(nheld, 1);
	deliver_str(&f, "c");
	assert_int_equal(nheld, 2);
	deliver_str(&f, "POST /3 HTTP/1.1\r\nContent-Length: 100\r\n\r\n");
	deliver_str(&f, "0123456789");
	assert_int_equal(nheld, 2);
	conn_gone(&f);		    /* the peer is gone */
	assert_true(segs_live > 0); /* the held requests still see their bytes */
	assert_memory_equal(held[0]->head.path.p, "/1", 2);
	assert_memory_equal(held[1]->body.p, "abc", 3);
	sm_http_reply(held[1], 200, NULL, "late", 4);
	sm_http_reply(held[0], 200, NULL, "late", 4);
	assert_int_equal(segs_live, 0);
	/* a head split across buffers, then gone */
	conn_open(&f);
	deliver_str(&f, "GET /x HTTP/1.1\r\nHo");
	conn_gone(&f);
	/* a chunked body half-way, then gone */
	conn_open(&f);
	deliver_str(&f, "POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab");
	conn_gone(&f);
	/* an answered response still queued behind a held one, then gone */
	conn_open(&f);
	deliver_str(&f, "GET /1 HTTP/1.1\r\n\r\nGET /2 HTTP/1.1\r\n\r\n");
	sm_http_reply(held[3], 200, NULL, "2", 1);
	conn_gone(&f);
	sm_http_reply(held[2], 200, NULL, "1", 1);
	fake_end();
}

static void
test_conn_drain(void **state)
{
	struct fconn f;

	(void)state;
	fake_begin();
	/* idle: closes at once */
	conn_open(&f);
	deliver_str(&f, "GET / HTTP/1.1\r\n\r\n");
	sm_http_proto_ops.drain(&f.c);
	assert_true(f.close_called);
	conn_gone(&f);
	/* busy: after the last response */
	hold_mode = true;
	conn_open(&f);
	deliver_str(&f, "GET / HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\nContent-Le");
	sm_http_proto_ops.drain(&f.c);
	assert_false(f.close_called);
	deliver_str(&f, "ngth: 1\r\n\r\nx");
	assert_int_equal(nheld, 2);
	assert_false(held[1]->keep_alive); /* parsed during the drain */
	sm_http_reply(held[0], 200, NULL, NULL, 0);
	assert_false(f.close_called);
	sm_http_reply(held[1], 200, NULL, NULL, 0);
	assert_true(f.close_called);
	assert_non_null(memmem(f.out, f.out_len, "Connection: close", 17));
	conn_gone(&f);
	fake_end();
}

static void
test_conn_no_alloc(void **state)
{
	static const char body[] = "{\"TableName\":\"t\",\"Key\":{\"k\":{\"S\":\"v\"}}}";
	uint64_t before;
	struct fconn f;
	char req[512];
	int i;

	(void)state;
	fake_begin();
	snprintf(req, sizeof(req),
		 "POST / HTTP/1.1\r\nHost: localhost:8000\r\n"
		 "X-Amz-Target: DynamoDB_20120810.GetItem\r\n"
		 "Content-Type: application/x-amz-json-1.0\r\nContent-Length: %zu\r\n\r\n%s",
		 strlen(body), body);
	conn_open(&f);
	for (i = 0; i < 3; i++)
		deliver_str(&f, req);
	before = SM_READ_ONCE(sm_tls_stats->allocs);
	for (i = 0; i < 200; i++) {
		f.out_len = 0;
		deliver_str(&f, req);
		assert_true(f.out_len > 0);
	}
	assert_int_equal(SM_READ_ONCE(sm_tls_stats->allocs) - before, 0);
	assert_int_equal(dispatched, 203);
	conn_gone(&f);
	fake_end();
}

/* ---- end to end over loopback with the io_uring driver ---- */

#ifdef HAVE_URING

static uint16_t port;
static int failures;
static char failure_text[512];
static unsigned e2e_requests;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			if (failures++ == 0)                                                       \
				snprintf(failure_text, sizeof(failure_text), "%s:%d: %s",          \
					 __FILE__, __LINE__, #cond);                               \
			goto out;                                                                  \
		}                                                                                  \
	} while (0)

/* Requests on /slow are answered from a timer, 100 ms later. */
struct slow {
	struct sm_timer t;
	struct sm_http_req *req;
};

static __thread struct slow slow[16];
static __thread unsigned reply_seq;

static void
e2e_reply(struct sm_http_req *req, const char *what)
{
	char hdr[64], body[128];
	int n;

	snprintf(hdr, sizeof(hdr), "X-Seq: %u\r\n", ++reply_seq);
	req->reply_headers = hdr;
	n = snprintf(body, sizeof(body), "%s %.*s", what, (int)req->head.path.len,
		     req->head.path.p);
	sm_http_reply(req, 200, "text/plain", body, (size_t)n);
}

static void
slow_fire(void *arg)
{
	struct slow *s = arg;
	struct sm_http_req *req = s->req;

	s->req = NULL;
	e2e_reply(req, "slow");
	sm_shard_release();
}

static void
e2e_request(void *ctx, struct sm_http_req *req)
{
	unsigned i;

	(void)ctx;
	__atomic_add_fetch(&e2e_requests, 1, __ATOMIC_RELAXED);
	if (req->head.path.len >= 5 && memcmp(req->head.path.p, "/slow", 5) == 0) {
		for (i = 0; i < SM_ARRAY_SIZE(slow); i++) {
			if (slow[i].req != NULL)
				continue;
			slow[i].req = req;
			sm_timer_init(&slow[i].t, slow_fire, &slow[i]);
			sm_shard_hold(); /* the reply is owed even if the shard drains */
			sm_timer_arm(&slow[i].t, 100);
			return;
		}
		sm_http_reply(req, 503, NULL, NULL, 0);
		return;
	}
	if (req->head.path.len >= 5 && memcmp(req->head.path.p, "/fast", 5) == 0) {
		e2e_reply(req, "fast");
		return;
	}
	echo(req);
}

static const struct sm_http_handler e2e_handler = { .request = e2e_request };
static const struct sm_http_service e2e_svc = { .handler = &e2e_handler };

/* A blocking client with a read buffer. */
struct client {
	int fd;
	char buf[65536];
	size_t len;
};

struct resp {
	int status;
	char raw[8192];
	size_t len;
	const char *body;
	size_t blen;
};

static bool
client_connect(struct client *cl)
{
	struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct timeval tv = { .tv_sec = 10 };

	cl->len = 0;
	cl->fd = socket(AF_INET, SOCK_STREAM, 0);
	if (cl->fd < 0)
		return false;
	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(cl->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(cl->fd, (struct sockaddr *)&in, sizeof(in)) < 0) {
		close(cl->fd);
		cl->fd = -1;
		return false;
	}
	return true;
}

static void
client_close(struct client *cl)
{
	if (cl->fd >= 0)
		close(cl->fd);
	cl->fd = -1;
}

static bool
send_all(struct client *cl, const void *p, size_t n)
{
	const char *b = p;

	while (n > 0) {
		ssize_t w = send(cl->fd, b, n, MSG_NOSIGNAL);

		if (w <= 0)
			return false;
		b += w;
		n -= (size_t)w;
	}
	return true;
}

static bool
send_str(struct client *cl, const char *s)
{
	return send_all(cl, s, strlen(s));
}

static bool
fill(struct client *cl)
{
	ssize_t r;

	if (cl->len == sizeof(cl->buf))
		return false;
	r = recv(cl->fd, cl->buf + cl->len, sizeof(cl->buf) - cl->len, 0);
	if (r <= 0)
		return false;
	cl->len += (size_t)r;
	return true;
}

/* Read one whole response (head, and a Content-Length body). */
static bool
read_resp(struct client *cl, struct resp *r)
{
	const char *end, *cl_hdr;
	size_t head, blen = 0;

	while ((end = memmem(cl->buf, cl->len, "\r\n\r\n", 4)) == NULL)
		if (!fill(cl))
			return false;
	head = (size_t)(end + 4 - cl->buf);
	cl_hdr = memmem(cl->buf, head, "\r\nContent-Length: ", 18);
	if (cl_hdr != NULL)
		blen = strtoul(cl_hdr + 18, NULL, 10);
	if (head + blen > sizeof(r->raw) - 1)
		return false;
	while (cl->len < head + blen)
		if (!fill(cl))
			return false;
	memcpy(r->raw, cl->buf, head + blen);
	memmove(cl->buf, cl->buf + head + blen, cl->len - head - blen);
	cl->len -= head + blen;
	r->len = drop_date(r->raw, head + blen);
	head -= head + blen - r->len;
	r->raw[r->len] = '\0';
	r->body = r->raw + head;
	r->blen = blen;
	r->status = (int)strtol(r->raw + 9, NULL, 10);
	return strncmp(r->raw, "HTTP/1.1 ", 9) == 0;
}

static bool
at_eof(struct client *cl)
{
	char b;

	return cl->len == 0 && recv(cl->fd, &b, 1, 0) == 0;
}

static bool
resp_is(const struct resp *r, const char *raw)
{
	return r->len == strlen(raw) && memcmp(r->raw, raw, r->len) == 0;
}

static bool
body_is(const struct resp *r, const char *body)
{
	return r->blen == strlen(body) && memcmp(r->body, body, r->blen) == 0;
}

static bool
has(const struct resp *r, const char *s)
{
	return memmem(r->raw, r->len, s, strlen(s)) != NULL;
}

static void *
client_main(void *arg)
{
	static struct client cl;
	static struct resp r;
	char req[512];
	size_t i, n;

	(void)arg;
	cl.fd = -1;

	/* GET and POST on one connection */
	CHECK(client_connect(&cl));
	CHECK(send_str(&cl, "GET /hello?x=1 HTTP/1.1\r\nHost: localhost\r\n\r\n"));
	CHECK(read_resp(&cl, &r));
	CHECK(resp_is(&r, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 25\r\n"
			  "\r\nGET /hello?x=1 t=- len=0:"));
	CHECK(send_str(&cl, "POST / HTTP/1.1\r\nHost: localhost\r\n"
			    "X-Amz-Target: DynamoDB_20120810.PutItem\r\n"
			    "Content-Type: application/x-amz-json-1.0\r\n"
			    "Content-Length: 15\r\n\r\n{\"TableName\":1}"));
	CHECK(read_resp(&cl, &r));
	CHECK(r.status == 200);
	CHECK(body_is(&r, "POST / t=DynamoDB_20120810.PutItem len=15:{\"TableName\":1}"));

	/* pipelined, the first answered last: responses still in order */
	CHECK(send_str(&cl, "GET /slow/1 HTTP/1.1\r\n\r\n"
			    "GET /fast/2 HTTP/1.1\r\n\r\n"
			    "POST /fast/3 HTTP/1.1\r\nContent-Length: 2\r\n\r\nzz"));
	CHECK(read_resp(&cl, &r));
	CHECK(body_is(&r, "slow /slow/1"));
	CHECK(has(&r, "X-Seq: 3\r\n")); /* the handler answered it third */
	CHECK(read_resp(&cl, &r));
	CHECK(body_is(&r, "fast /fast/2"));
	CHECK(has(&r, "X-Seq: 1\r\n"));
	CHECK(read_resp(&cl, &r));
	CHECK(body_is(&r, "fast /fast/3"));
	CHECK(has(&r, "X-Seq: 2\r\n"));

	/* 100-continue: invited before the body is sent */
	CHECK(send_str(&cl,
		       "PUT /c HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 10\r\n\r\n"));
	CHECK(read_resp(&cl, &r));
	CHECK(resp_is(&r, "HTTP/1.1 100 Continue\r\n\r\n"));
	CHECK(send_str(&cl, "0123456789"));
	CHECK(read_resp(&cl, &r));
	CHECK(body_is(&r, "PUT /c t=- len=10:0123456789"));

	/* a chunked body */
	CHECK(send_str(&cl, "POST /ch HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
			    "4;x=y\r\nwiki\r\n5\r\npedia\r\n0\r\nT: 1\r\n\r\n"));
	CHECK(read_resp(&cl, &r));
	CHECK(body_is(&r, "POST /ch t=- len=9:wikipedia"));

	/* a request dribbled byte by byte */
	n = (size_t)snprintf(req, sizeof(req),
			     "POST /drip HTTP/1.1\r\nContent-Length: 4\r\n\r\ndrip");
	for (i = 0; i < n; i++)
		CHECK(send_all(&cl, req + i, 1));
	CHECK(read_resp(&cl, &r));
	CHECK(body_is(&r, "POST /drip t=- len=4:drip"));

	/* a body bigger than a receive buffer (gathered) */
	{
		static const char pre[] = "POST /big t=- len=40000:";
		static char big[40000 + 128];
		size_t hl =
			(size_t)sprintf(big, "POST /big HTTP/1.1\r\nContent-Length: 40000\r\n\r\n");
		size_t plen = strlen(pre);
		char clen[64];

		memset(big + hl, 'b', 40000);
		CHECK(send_all(&cl, big, hl + 40000));
		/* the echo is bigger than struct resp: read the head and count the body */
		while (memmem(cl.buf, cl.len, "\r\n\r\n", 4) == NULL)
			CHECK(fill(&cl));
		snprintf(clen, sizeof(clen), "Content-Length: %zu\r\n", plen + 40000);
		CHECK(memmem(cl.buf, cl.len, clen, strlen(clen)) != NULL);
		n = (size_t)((char *)memmem(cl.buf, cl.len, "\r\n\r\n", 4) + 4 - cl.buf) + plen +
		    40000;
		while (cl.len < n)
			CHECK(fill(&cl));
		CHECK(memcmp(cl.buf + n - 40000 - plen, pre, plen) == 0);
		for (i = n - 40000; i < n; i++)
			CHECK(cl.buf[i] == 'b');
		memmove(cl.buf, cl.buf + n, cl.len - n);
		cl.len -= n;
	}

	/* Connection: close: the response says so, then EOF */
	CHECK(send_str(&cl, "GET /bye HTTP/1.1\r\nConnection: close\r\n\r\n"));
	CHECK(read_resp(&cl, &r));
	CHECK(has(&r, "\r\nConnection: close\r\n"));
	CHECK(body_is(&r, "GET /bye t=- len=0:"));
	CHECK(at_eof(&cl));
	client_close(&cl);

	/* 413 on a big Content-Length, before any body is sent; then EOF */
	CHECK(client_connect(&cl));
	CHECK(send_str(&cl, "POST / HTTP/1.1\r\nContent-Length: 17000000\r\n\r\n"));
	CHECK(read_resp(&cl, &r));
	CHECK(resp_is(&r, "HTTP/1.1 413 Payload Too Large\r\n"
			  "Content-Type: application/x-amz-json-1.0\r\n"
			  "Content-Length: 129\r\nConnection: close\r\n\r\n"
			  "{\"__type\":\"com.amazonaws.dynamodb.v20120810#PayloadTooLarge\","
			  "\"message\":\"Request content length limit of 16777216 bytes "
			  "exceeded\"}"));
	CHECK(at_eof(&cl));
	client_close(&cl);

	/* malformed: 400 and EOF */
	CHECK(client_connect(&cl));
	CHECK(send_str(&cl, "GET / HTTP/1.1\r\nBad Header\r\n\r\n"));
	CHECK(read_resp(&cl, &r));
	CHECK(r.status == 400);
	CHECK(has(&r, "\r\nConnection: close\r\n"));
	CHECK(at_eof(&cl));
	client_close(&cl);

	/* HTTP/1.0 closes after one response */
	CHECK(client_connect(&cl));
	CHECK(send_str(&cl, "GET /old HTTP/1.0\r\n\r\n"));
	CHECK(read_resp(&cl, &r));
	CHECK(has(&r, "\r\nConnection: close\r\n"));
	CHECK(at_eof(&cl));
	client_close(&cl);

	/* clients vanishing mid-body and with a request in flight */
	CHECK(client_connect(&cl));
	CHECK(send_str(&cl, "POST / HTTP/1.1\r\nContent-Length: 100\r\n\r\n0123456789"));
	client_close(&cl);
	CHECK(client_connect(&cl));
	CHECK(send_str(&cl, "GET /slow/gone HTTP/1.1\r\n\r\n"));
	usleep(20000);
	client_close(&cl);
	usleep(200000); /* the timer answers a connection that is gone */

	/* the next client is served */
	CHECK(client_connect(&cl));
	CHECK(send_str(&cl, "GET /again HTTP/1.1\r\n\r\n"));
	CHECK(read_resp(&cl, &r));
	CHECK(body_is(&r, "GET /again t=- len=0:"));
out:
	client_close(&cl);
	sm_runtime_stop();
	return NULL;
}

static pthread_t client;

static int
shard_init(unsigned shard, void *arg)
{
	struct sm_listen_opts lo = {
		.addr = "127.0.0.1",
		.port = port,
		.proto = &sm_http_proto_ops,
		.ctx = (void *)(uintptr_t)&e2e_svc,
	};
	struct sm_listener *l;
	int ret;

	(void)arg;
	ret = sm_net_shard_init(NULL);
	if (ret < 0 || shard != 0)
		return ret;
	ret = sm_net_listen(&lo, &l);
	if (ret < 0)
		return ret;
	return -pthread_create(&client, NULL, client_main, NULL);
}

static void
shard_fini(unsigned shard, void *arg)
{
	(void)shard;
	(void)arg;
	sm_net_shard_fini();
	sm_http_shard_fini();
}

static uint16_t
free_port(void)
{
	struct sockaddr_in in = { .sin_family = AF_INET };
	socklen_t len = sizeof(in);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	bind(fd, (struct sockaddr *)&in, sizeof(in));
	getsockname(fd, (struct sockaddr *)&in, &len);
	close(fd);
	return ntohs(in.sin_port);
}

static void
test_e2e_uring(void **state)
{
	struct sm_runtime_opts o = {
		.smp = 2,
		.overprovisioned = true,
		.drain_timeout_ms = 3000,
		.shard_init = shard_init,
		.shard_fini = shard_fini,
	};
	char err[256];

	(void)state;
	port = free_port();
	if (sm_net_find("uring") == NULL)
		assert_int_equal(sm_net_uring_register(), 0);
	assert_int_equal(sm_net_use("uring"), 0);
	if (sm_net_driver()->probe(err, sizeof(err)) < 0) {
		print_message("io_uring unavailable: %s\n", err);
		skip();
	}
	if (sm_runtime_run(&o, err, sizeof(err)) < 0)
		fail_msg("runtime: %s", err);
	pthread_join(client, NULL);
	if (failures)
		fail_msg("%d failure(s), first: %s", failures, failure_text);
	assert_int_equal(e2e_requests, 13);
}

#else

static void
test_e2e_uring(void **state)
{
	(void)state;
	print_message("built without the io_uring driver: add sm_uring_dep to "
		      "tests/alternator/meson.build to run the loopback test\n");
	skip();
}

#endif

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_fields),
		cmocka_unit_test(test_parse_every_prefix),
		cmocka_unit_test(test_parse_versions_and_targets),
		cmocka_unit_test(test_parse_bad),
		cmocka_unit_test(test_parse_limits),
		cmocka_unit_test(test_chunked_splits),
		cmocka_unit_test(test_chunked_bad),
		cmocka_unit_test(test_conn_pipeline_splits),
		cmocka_unit_test(test_conn_zero_copy),
		cmocka_unit_test(test_conn_out_of_order),
		cmocka_unit_test(test_conn_continue),
		cmocka_unit_test(test_conn_errors),
		cmocka_unit_test(test_conn_persistence),
		cmocka_unit_test(test_conn_vanish),
		cmocka_unit_test(test_conn_drain),
		cmocka_unit_test(test_conn_no_alloc),
		cmocka_unit_test(test_e2e_uring),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
