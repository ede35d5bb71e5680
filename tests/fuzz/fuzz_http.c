/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: lib/alternator's HTTP/1.1 server side (sm_http.c).
 *
 * Input: two control bytes, then the bytes a client sends.
 *   byte 0: how the stream is cut into receive buffers (whole, or pieces of
 *           1 to 1024 bytes, one to four per received() call);
 *   byte 1: the handler's manners and the limits: bits 0-1 pick how the
 *           first request is answered (copied, from the body buffer, as
 *           views, or held and answered later, out of order), bit 2 a small
 *           head limit, bit 3 a small body limit, bit 4 a drain at the end,
 *           bit 5 the peer vanishing before the held requests are answered.
 *
 * The stream goes through the connection (sm_http_proto_ops on a fake
 * transport) and, on its own, through sm_http_parse_head() and the chunked
 * decoder, which must agree with themselves: a head that parses is
 * -EAGAIN for every shorter prefix, its views lie inside it, and a chunked
 * body decodes the same fed whole or byte by byte. The handler reads every
 * byte of every head and body it gets; at the end every receive buffer must
 * have come back.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_net.h"
#include "sm_http.h"

#define MAX_HELD 16
#define CHUNKED_MAX (1u << 16)

static struct sm_http_req *held[MAX_HELD];
static unsigned nheld, nreq;
static uint8_t manners;
static uint64_t touched;

static void
touch(const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		touched += (unsigned char)p[i];
}

static void
answer(struct sm_http_req *req, unsigned how)
{
	static const int statuses[] = { 200, 201, 204, 304, 400, 404, 413, 500, 999, 42 };
	static const struct sm_iov parts[2] = { { NULL, "ab", 2 }, { NULL, "cd", 2 } };
	int status = statuses[(req->body.len + nreq) % SM_ARRAY_SIZE(statuses)];
	struct sm_http_buf *b;

	if (nreq % 3 == 0)
		req->reply_headers = "X-Fuzz: 1\r\n";
	switch (how % 3) {
	case 0:
		sm_http_reply(req, status, (nreq & 1) ? SM_HTTP_JSON_TYPE : NULL, req->body.p,
			      req->body.len);
		return;
	case 1:
		b = sm_http_req_body_buf(req);
		if (sm_http_buf_append(b, req->head.target.p, req->head.target.len) < 0 ||
		    sm_http_buf_append(b, req->body.p, req->body.len) < 0) {
			sm_http_reply(req, 500, NULL, NULL, 0);
			return;
		}
		sm_http_reply_buf(req, status, "text/plain");
		return;
	default:
		sm_http_reply_iov(req, status, NULL, parts, 2);
		return;
	}
}

static void
on_request(void *ctx, struct sm_http_req *req)
{
	const struct sm_http_head *h = &req->head;
	unsigned i, how = (manners & 3) + nreq;

	(void)ctx;
	FUZZ_CHECK(req->body.p != NULL);
	FUZZ_CHECK(h->chunked || !h->has_length || req->body.len == h->content_length);
	touch(h->method_text.p, h->method_text.len);
	touch(h->target.p, h->target.len);
	touch(h->path.p, h->path.len);
	touch(h->query.p, h->query.len);
	for (i = 0; i < h->nfields; i++) {
		touch(h->fields[i].name.p, h->fields[i].name.len);
		touch(h->fields[i].value.p, h->fields[i].value.len);
	}
	touch(req->body.p, req->body.len);
	nreq++;
	if (how % 4 == 3 && nheld < MAX_HELD) {
		held[nheld++] = req;
		return;
	}
	answer(req, how);
}

static const struct sm_http_handler handler = { .request = on_request };

/* The head parser against itself: prefixes and views. */
static int
check_head(const char *p, size_t len, struct sm_http_head *h)
{
	static struct sm_http_head h2;
	size_t cut[3];
	unsigned i, k;
	int ret;

	ret = sm_http_parse_head(p, len, SM_HTTP_DEFAULT_MAX_HEADER, h);
	if (ret < 0) {
		FUZZ_CHECK(ret == -EAGAIN || (h->status >= 400 && h->error != NULL));
		return ret;
	}
	FUZZ_CHECK(ret > 0 && (size_t)ret <= len);
	/* The path is a view of the head, or the static "/" of an absolute URI. */
	FUZZ_CHECK((h->path.p >= p && h->path.p + h->path.len <= p + ret) ||
		   (h->path.len == 1 && h->path.p[0] == '/'));
	for (k = 0; k < h->nfields; k++)
		FUZZ_CHECK(h->fields[k].value.p >= p &&
			   h->fields[k].value.p + h->fields[k].value.len <= p + ret);
	cut[0] = (size_t)ret - 1;
	cut[1] = (size_t)ret / 2;
	cut[2] = len > 0 ? (unsigned char)p[len - 1] % (size_t)ret : 0;
	for (i = 0; i < 3; i++)
		FUZZ_CHECK(sm_http_parse_head(p, cut[i], SM_HTTP_DEFAULT_MAX_HEADER, &h2) ==
			   -EAGAIN);
	return ret;
}

/* Decode a chunked body fed in pieces of @step bytes; 1 when complete, 0 short, <0 error. */
static int
decode_chunked(const char *p, size_t len, size_t step, char *out, size_t *outlen, size_t *used)
{
	struct sm_http_chunked d;
	struct sm_http_str data;
	size_t off = 0, n;
	ssize_t r;

	sm_http_chunked_init(&d, CHUNKED_MAX, 1024);
	*outlen = 0;
	while (off < len && !d.done) {
		n = SM_MIN(step, len - off);
		while (n > 0 && !d.done) {
			r = sm_http_chunked_decode(&d, p + off, n, &data);
			if (r < 0)
				return (int)r;
			/* No progress without the end would spin the connection forever. */
			FUZZ_CHECK(r > 0 || d.done);
			FUZZ_CHECK((size_t)r <= n);
			FUZZ_CHECK(data.len == 0 ||
				   (data.p >= p + off && data.p + data.len <= p + off + r));
			FUZZ_CHECK(*outlen + data.len <= CHUNKED_MAX);
			memcpy(out + *outlen, data.p, data.len);
			*outlen += data.len;
			off += (size_t)r;
			n -= (size_t)r;
		}
	}
	*used = off;
	return d.done ? 1 : 0;
}

static void
check_chunked(const char *p, size_t len)
{
	static char a[CHUNKED_MAX], b[CHUNKED_MAX];
	size_t alen, blen, aused, bused;
	int ra, rb;

	ra = decode_chunked(p, len, len, a, &alen, &aused);
	rb = decode_chunked(p, len, 1, b, &blen, &bused);
	FUZZ_CHECK(ra == rb);
	if (ra >= 0) {
		FUZZ_CHECK(alen == blen && memcmp(a, b, alen) == 0);
		FUZZ_CHECK(aused == bused);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t pieces[8] = { 0, 1, 2, 7, 16, 100, 333, 1024 };
	static struct sm_http_head head;
	static bool ready;
	struct sm_http_service svc = { .handler = &handler };
	struct fuzz_in in = { data, size };
	struct fuzz_conn f;
	uint8_t cut;
	const char *p;
	size_t len;
	unsigned i;
	int ret;

	if (!ready) {
		fuzz_net_init();
		ready = true;
	}
	cut = fuzz_u8(&in);
	manners = fuzz_u8(&in);
	p = (const char *)in.p;
	len = in.len;

	ret = check_head(p, len, &head);
	if (ret > 0 && head.chunked)
		check_chunked(p + ret, len - (size_t)ret);

	svc.max_header = (manners & 4) ? 256 : 0;
	svc.max_body = (manners & 8) ? 64 : 1u << 20;
	nheld = nreq = 0;
	memset(&f, 0, sizeof(f));
	f.c.drv = &fuzz_driver;
	f.c.proto = &sm_http_proto_ops;
	FUZZ_CHECK(sm_http_proto_ops.accepted(&f.c, &svc) == 0);
	fuzz_deliver(&f, &sm_http_proto_ops, in.p, in.len, pieces[cut & 7], 1 + (cut >> 3) % 4);
	if (manners & 16)
		sm_http_proto_ops.drain(&f.c);
	if (manners & 32)
		sm_http_proto_ops.closed(&f.c, -ECONNRESET);
	/* Held requests answered last first: responses still leave in order. */
	for (i = nheld; i > 0; i--)
		answer(held[i - 1], i);
	if (!(manners & 32))
		sm_http_proto_ops.closed(&f.c, 0);
	fuzz_conn_fini(&f);
	FUZZ_CHECK(fuzz_segs_live == 0);
	return 0;
}
