/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Alternator endpoint: HTTP requests in, operations dispatched by
 * X-Amz-Target, DynamoDB-shaped answers out.
 */

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <zlib.h>

#include <nettle/hmac.h>
#include <nettle/sha2.h>

#include "alt_priv.h"


int
sm_alt_isolation_parse(const char *s, enum sm_alt_isolation *out)
{
	static const char *const ok[] = {
		"f",	  "forbid",	    "forbid_rmw", "a",
		"always", "always_use_lwt", "o",	  "only_rmw_uses_lwt",
		"u",	  "unsafe",	    "unsafe_rmw"
	};
	unsigned i;

	for (i = 0; i < SM_ARRAY_SIZE(ok); i++)
		if (strcmp(s, ok[i]) == 0)
			break;
	if (i == SM_ARRAY_SIZE(ok))
		return -EINVAL;
	/* ScyllaDB looks at the first character only. */
	switch (s[0]) {
	case 'f':
		*out = SM_ALT_FORBID_RMW;
		return 0;
	case 'a':
		*out = SM_ALT_LWT_ALWAYS;
		return 0;
	case 'o':
		*out = SM_ALT_LWT_RMW_ONLY;
		return 0;
	default:
		*out = SM_ALT_UNSAFE_RMW;
		return 0;
	}
}

/* ---- dispatch ---- */

struct alt_operation {
	const char *name;
	alt_op_fn fn;
};

static const struct alt_operation operations[] = {
	{ "CreateTable", alt_create_table },
	{ "DeleteTable", alt_delete_table },
	{ "DescribeTable", alt_describe_table },
	{ "ListTables", alt_list_tables },
	{ "UpdateTable", alt_update_table },
	{ "TagResource", alt_tag_resource },
	{ "UntagResource", alt_untag_resource },
	{ "ListTagsOfResource", alt_list_tags },
	{ "DescribeEndpoints", alt_describe_endpoints },
	{ "PutItem", alt_put_item },
	{ "GetItem", alt_get_item },
	{ "DeleteItem", alt_delete_item },
	{ "UpdateItem", alt_update_item },
	{ "Query", alt_query },
	{ "Scan", alt_scan },
	{ "BatchWriteItem", alt_batch_write },
	{ "BatchGetItem", alt_batch_get },
	{ "UpdateTimeToLive", alt_update_ttl },
	{ "DescribeTimeToLive", alt_describe_ttl },
	{ "DescribeContinuousBackups", alt_describe_continuous_backups },
	/* DynamoDBStreams_20120810.<Op> comes to the same endpoint: the prefix is not read */
	{ "ListStreams", alt_list_streams },
	{ "DescribeStream", alt_describe_stream },
	{ "GetShardIterator", alt_get_shard_iterator },
	{ "GetRecords", alt_get_records },
};

/* Each operation's latency histogram (alt_metrics.c), found by name once. */
static int8_t op_latency_kind[SM_ARRAY_SIZE(operations)];
static const char *op_names[SM_ARRAY_SIZE(operations)];
static pthread_once_t op_tables_once = PTHREAD_ONCE_INIT;

_Static_assert(SM_ARRAY_SIZE(operations) <= ALT_MAX_OPERATIONS, "raise ALT_MAX_OPERATIONS");

static void
op_tables_init(void)
{
	unsigned i;

	for (i = 0; i < SM_ARRAY_SIZE(operations); i++) {
		op_latency_kind[i] = (int8_t)alt_metrics_latency_kind(operations[i].name);
		op_names[i] = operations[i].name;
	}
}

void
sm_alternator_format_metrics(FILE *f, unsigned nshards)
{
	pthread_once(&op_tables_once, op_tables_init);
	alt_metrics_format(f, nshards, op_names, SM_ARRAY_SIZE(operations));
}

static const struct alt_operation *
find_operation(const char *name, size_t len)
{
	unsigned i;

	for (i = 0; i < SM_ARRAY_SIZE(operations); i++)
		if (strlen(operations[i].name) == len && memcmp(operations[i].name, name, len) == 0)
			return &operations[i];
	return NULL;
}

/* The top-level members every operation looks at, found in one pass. */
static const struct sm_json_key run_keys[] = {
	SM_JSON_KEY("ExpressionAttributeNames"),    SM_JSON_KEY("AttributesToGet"),
	SM_JSON_KEY("ExpressionAttributeValues"),   SM_JSON_KEY("ReturnConsumedCapacity"),
	SM_JSON_KEY("ReturnItemCollectionMetrics"), SM_JSON_KEY("ConsistentRead"),
	SM_JSON_KEY("TableName"),		    SM_JSON_KEY("Key"),
};

/* Parse the body and run @o. */
static void
run(struct alt_op *op, const struct alt_operation *o)
{
	int ret, tok[SM_ARRAY_SIZE(run_keys)];

	ret = sm_json_parse(&op->doc, op->body, op->body_len, 0);
	if (ret == -ENOMEM) {
		alt_fail(op, "InternalServerError", "out of memory parsing the request");
		return;
	}
	if (ret < 0) {
		alt_fail(op, "SerializationException", "%s", op->doc.err);
		return;
	}
	op->root = sm_json_root(&op->doc);
	if (sm_json_type(&op->doc, op->root) != SM_JSON_OBJECT) {
		alt_fail(op, "ValidationException", "Request content must be an object");
		return;
	}
	sm_json_getv(&op->doc, op->root, run_keys, SM_ARRAY_SIZE(run_keys), tok);
	op->names_tok = tok[0];
	op->atg_tok = tok[1];
	op->values_tok = tok[2];
	op->cap_tok = tok[3];
	op->icm_tok = tok[4];
	op->consistent_tok = tok[5];
	op->table_tok = tok[6];
	op->key_tok = tok[7];
	if (SM_UNLIKELY(op->atg_tok >= 0) && alt_check_attributes_to_get(op, op->atg_tok) < 0) {
		alt_fail(op, "ValidationException", "%s", op->errmsg);
		return;
	}
	if (alt_capacity_parse(op) < 0)
		return;
	op->fn = o->fn;
	o->fn(op);
}

/* Count the operation (failed ones too, as ScyllaDB) and time it from here. */
static inline void
count_operation(struct alt_op *op, const struct alt_operation *o)
{
	unsigned i = (unsigned)(o - operations);

	ALT_STAT_INC(ops[i]);
	op->lat_kind = op_latency_kind[i];
	op->op_row = (int)i;
}

/* ---- Content-Encoding ---- */

/*
 * Inflate a gzip or deflate (zlib) body into op->inflated, at most the
 * HTTP layer's body limit; the op then reads that. zlib (Debian's zlib1g)
 * does the work. 0, or the op was answered.
 */
static int
inflate_body(struct alt_op *op, const struct sm_http_str *enc)
{
	size_t limit = SM_HTTP_DEFAULT_MAX_BODY;
	z_stream z;
	int ret;

	memset(&z, 0, sizeof(z));
	/* 15 + 32: zlib or gzip header, detected */
	if (inflateInit2(&z, 15 + 32) != Z_OK) {
		alt_fail(op, "InternalServerError", "cannot start decompression");
		return -ENOMEM;
	}
	z.next_in = (Bytef *)(uintptr_t)op->body;
	z.avail_in = (uInt)op->body_len;
again:
	do {
		if (op->inflated.cap - op->inflated.len < 4096 &&
		    (op->inflated.len >= limit ||
		     alt_bytes_reserve(&op->inflated, op->inflated.cap ? op->inflated.cap : 16384) <
			     0)) {
			inflateEnd(&z);
			if (op->inflated.len >= limit)
				alt_fail(op, "PayloadTooLarge",
					 "Request content length limit of %zu bytes exceeded",
					 limit);
			else
				alt_fail(op, "InternalServerError", "out of memory");
			return -E2BIG;
		}
		z.next_out = op->inflated.p + op->inflated.len;
		z.avail_out = (uInt)(op->inflated.cap - op->inflated.len);
		ret = inflate(&z, Z_NO_FLUSH);
		op->inflated.len = op->inflated.cap - z.avail_out;
	} while (ret == Z_OK);
	if (ret == Z_STREAM_END && z.avail_in > 0 && inflateReset(&z) == Z_OK)
		goto again; /* gzip members concatenated are one stream (RFC 1952) */
	inflateEnd(&z);
	if (ret != Z_STREAM_END) {
		/* DynamoDB answers a body that does not decompress with a 500 */
		alt_fail(op, "InternalServerError", "Malformed %.*s request body",
			 (int)SM_MIN(enc->len, 16u), enc->p);
		return -EINVAL;
	}
	op->body = (const char *)op->inflated.p;
	op->body_len = op->inflated.len;
	return 0;
}

/* ---- SigV4 (alternator_enforce_authorization) ---- */

static void
hex(const uint8_t *d, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[d[i] >> 4];
		out[2 * i + 1] = digits[d[i] & 15];
	}
	out[2 * n] = '\0';
}

static void
hmac(const uint8_t *key, size_t klen, const void *msg, size_t mlen, uint8_t out[32])
{
	struct hmac_sha256_ctx h;

	hmac_sha256_set_key(&h, klen, key);
	hmac_sha256_update(&h, mlen, msg);
	hmac_sha256_digest(&h, SHA256_DIGEST_SIZE, out);
}

/*
 * Append to the @cap-byte @buf holding @len bytes; the length after, at most
 * cap - 1 (the text is cut, and then no signature matches it).
 */
static size_t
append(char *buf, size_t cap, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static size_t
append(char *buf, size_t cap, size_t len, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (len + 1 >= cap)
		return len;
	va_start(ap, fmt);
	w = vsnprintf(buf + len, cap - len, fmt, ap);
	va_end(ap);
	if (w < 0)
		return len;
	return (size_t)w >= cap - len ? cap - 1 : len + (size_t)w;
}

/* The part of "k1=v1, k2=v2" after "@key="; false when absent. */
static bool
auth_param(const struct sm_http_str *a, const char *key, struct sm_http_str *out)
{
	size_t klen = strlen(key), i;

	for (i = 0; i + klen < a->len; i++) {
		if ((i == 0 || a->p[i - 1] == ' ' || a->p[i - 1] == ',') &&
		    memcmp(a->p + i, key, klen) == 0 && a->p[i + klen] == '=') {
			out->p = a->p + i + klen + 1;
			out->len = 0;
			/* components end at a comma or a space (clients write either, #9568) */
			while (out->p + out->len < a->p + a->len && out->p[out->len] != ',' &&
			       out->p[out->len] != ' ')
				out->len++;
			return true;
		}
	}
	return false;
}

/*
 * A header value as SigV4 canonicalizes it: no leading or trailing spaces,
 * runs of spaces and tabs inside as one space.
 */
static size_t
append_trimmed(char *buf, size_t cap, size_t len, const struct sm_http_str *v)
{
	size_t i = 0, n = v != NULL ? v->len : 0;
	bool space = false;

	while (i < n && (v->p[i] == ' ' || v->p[i] == '\t'))
		i++;
	while (n > i && (v->p[n - 1] == ' ' || v->p[n - 1] == '\t'))
		n--;
	for (; i < n && len + 1 < cap; i++) {
		if (v->p[i] == ' ' || v->p[i] == '\t') {
			space = true;
			continue;
		}
		if (space && len + 2 < cap)
			buf[len++] = ' ';
		space = false;
		buf[len++] = v->p[i];
	}
	buf[len] = '\0';
	return len;
}

/* The value of @n decimal digits at @p (checked by the caller). */
static int
digits(const char *p, unsigned n)
{
	int v = 0;

	while (n-- > 0)
		v = v * 10 + (*p++ - '0');
	return v;
}

/*
 * X-Amz-Date within 15 minutes of now, either way, as DynamoDB requires
 * (ScyllaDB's messages: "Signature expired", "Signature not yet current").
 */
static int
check_date(struct alt_op *op, const struct sm_http_str *date)
{
	char d[17], now_s[17];
	struct tm tm;
	time_t t, now = time(NULL);
	unsigned i;

	memset(&tm, 0, sizeof(tm));
	for (i = 0; i < 16 && date->len == 16; i++)
		if (i != 8 && i != 15 && (date->p[i] < '0' || date->p[i] > '9'))
			break;
	if (date->len != 16 || i != 16 || date->p[8] != 'T' || date->p[15] != 'Z') {
		alt_fail(op, "InvalidSignatureException",
			 "X-Amz-Date must be in the ISO8601 basic format YYYYMMDD'T'HHMMSS'Z'");
		return -EINVAL;
	}
	memcpy(d, date->p, 16);
	d[16] = '\0';
	tm.tm_year = digits(d, 4) - 1900;
	tm.tm_mon = digits(d + 4, 2) - 1;
	tm.tm_mday = digits(d + 6, 2);
	tm.tm_hour = digits(d + 9, 2);
	tm.tm_min = digits(d + 11, 2);
	tm.tm_sec = digits(d + 13, 2);
	t = timegm(&tm);
	gmtime_r(&now, &tm);
	strftime(now_s, sizeof(now_s), "%Y%m%dT%H%M%SZ", &tm);
	if (t < now - 15 * 60) {
		alt_fail(op, "InvalidSignatureException",
			 "Signature expired: %s is now earlier than %s (%s - 15 min.)", d, now_s,
			 now_s);
		return -EACCES;
	}
	if (t > now + 15 * 60) {
		alt_fail(op, "InvalidSignatureException",
			 "Signature not yet current: %s is still later than %s (%s + 15 min.)", d,
			 now_s, now_s);
		return -EACCES;
	}
	return 0;
}

/*
 * Verify an AWS Signature Version 4 as DynamoDB clients compute it (the
 * canonical request over the signed headers and the body's SHA-256). 0, or
 * the op was answered with DynamoDB's error.
 */
static int
check_signature(struct alt_op *op, struct sm_http_req *req)
{
	const struct sm_http_str *auth = sm_http_header(req, "authorization");
	const struct sm_http_str *date = sm_http_header(req, "x-amz-date");
	struct sm_http_str cred, signed_h, sig;
	const char *parts[5], *end, *p;
	size_t plen[5], i, n = 0;
	struct sha256_ctx sha;
	uint8_t digest[32], k1[32], k2[32], k3[32], k4[32];
	char body_hex[65], creq_hex[65], sig_hex[65], kbuf[256];
	char *creq = NULL, *sts = NULL;
	size_t clen = 0, cap;

	if (auth == NULL) {
		alt_fail(op, "MissingAuthenticationTokenException",
			 "Request is missing Authentication Token");
		return -EACCES;
	}
	if (auth->len < 17 || memcmp(auth->p, "AWS4-HMAC-SHA256 ", 17) != 0) {
		alt_fail(op, "InvalidSignatureException",
			 "Authorization header requires 'AWS4-HMAC-SHA256' algorithm");
		return -EACCES;
	}
	if (!auth_param(auth, "Credential", &cred) ||
	    !auth_param(auth, "SignedHeaders", &signed_h) || !auth_param(auth, "Signature", &sig) ||
	    date == NULL) {
		alt_fail(op, "InvalidSignatureException",
			 "Authorization header requires Credential, SignedHeaders and Signature, "
			 "and "
			 "the request an X-Amz-Date header");
		return -EACCES;
	}
	/* Credential = key/date/region/service/aws4_request */
	for (p = cred.p, end = cred.p + cred.len; n < 5 && p <= end; n++) {
		const char *slash = memchr(p, '/', (size_t)(end - p));

		parts[n] = p;
		plen[n] = slash ? (size_t)(slash - p) : (size_t)(end - p);
		p += plen[n] + 1;
	}
	if (n != 5 || p <= end) {
		alt_fail(op, "InvalidSignatureException",
			 "Credential should be scoped to a valid region, and have 5 parts");
		return -EACCES;
	}
	if (plen[0] != strlen(alt_cfg->access_key_id) ||
	    memcmp(parts[0], alt_cfg->access_key_id, plen[0]) != 0) {
		alt_fail(op, "UnrecognizedClientException",
			 "The security token included in the request is invalid.");
		return -EACCES;
	}
	if (check_date(op, date) < 0)
		return -EACCES;
	/* The canonical request. */
	cap = 1024 + req->head.path.len + req->head.query.len + signed_h.len * 2;
	for (i = 0; i < req->head.nfields; i++)
		cap += req->head.fields[i].name.len + req->head.fields[i].value.len + 2;
	creq = sm_malloc(cap);
	sts = sm_malloc(512);
	if (creq == NULL || sts == NULL)
		goto nomem;
	sha256_init(&sha);
	sha256_update(&sha, op->body_len, (const uint8_t *)op->body);
	sha256_digest(&sha, sizeof(digest), digest);
	hex(digest, 32, body_hex);
	clen = append(creq, cap, 0, "%.*s\n%.*s\n%.*s\n", (int)req->head.method_text.len,
		      req->head.method_text.p, (int)req->head.path.len, req->head.path.p,
		      (int)req->head.query.len, req->head.query.p);
	for (p = signed_h.p, end = signed_h.p + signed_h.len; p < end;) {
		const char *semi = memchr(p, ';', (size_t)(end - p));
		size_t hl = semi ? (size_t)(semi - p) : (size_t)(end - p);
		char name[128];
		const struct sm_http_str *v;

		if (hl == 0 || hl >= sizeof(name))
			break;
		memcpy(name, p, hl);
		name[hl] = '\0';
		v = sm_http_header(req, name);
		/* a header named twice is written twice: cap counted it once */
		clen = append(creq, cap, clen, "%s:", name);
		clen = append_trimmed(creq, cap, clen, v);
		clen = append(creq, cap, clen, "\n");
		p += hl + 1;
	}
	clen = append(creq, cap, clen, "\n%.*s\n%s", (int)signed_h.len, signed_h.p, body_hex);
	sha256_init(&sha);
	sha256_update(&sha, clen, (const uint8_t *)creq);
	sha256_digest(&sha, sizeof(digest), digest);
	hex(digest, 32, creq_hex);
	n = (size_t)snprintf(sts, 512, "AWS4-HMAC-SHA256\n%.*s\n%.*s/%.*s/%.*s/%.*s\n%s",
			     (int)date->len, date->p, (int)plen[1], parts[1], (int)plen[2],
			     parts[2], (int)plen[3], parts[3], (int)plen[4], parts[4], creq_hex);
	/* The signing key: HMAC chain over date, region, service, "aws4_request". */
	snprintf(kbuf, sizeof(kbuf), "AWS4%s", alt_cfg->secret_access_key);
	hmac((const uint8_t *)kbuf, strlen(kbuf), parts[1], plen[1], k1);
	hmac(k1, 32, parts[2], plen[2], k2);
	hmac(k2, 32, parts[3], plen[3], k3);
	hmac(k3, 32, parts[4], plen[4], k4);
	hmac(k4, 32, sts, SM_MIN(n, (size_t)511), digest);
	hex(digest, 32, sig_hex);
	sm_free(creq);
	sm_free(sts);
	if (sig.len != 64 || memcmp(sig.p, sig_hex, 64) != 0) {
		/* ScyllaDB's type for a wrong secret (test_authorization.py test_wrong_password) */
		alt_fail(op, "UnrecognizedClientException",
			 "The request signature we calculated does not match the signature you "
			 "provided. Check your AWS Secret Access Key and signing method.");
		return -EACCES;
	}
	return 0;
nomem:
	sm_free(creq);
	sm_free(sts);
	alt_fail(op, "InternalServerError", "out of memory");
	return -ENOMEM;
}

/* ---- CORS ---- */

#define CORS_HEADERS                                                                               \
	"Access-Control-Allow-Origin: *\r\n"                                                       \
	"Access-Control-Expose-Headers: x-amzn-RequestId,x-amzn-ErrorType,x-amz-id-2,"             \
	"x-amzn-ErrorMessage,Date\r\n"

/*
 * A preflight (OPTIONS with Origin): what the client asks to send is
 * allowed, its requested method and headers echoed back (ScyllaDB's
 * server.cc does the same).
 */
static void
cors_preflight(struct sm_http_req *req)
{
	const struct sm_http_str *m = sm_http_header(req, "access-control-request-method");
	const struct sm_http_str *h = sm_http_header(req, "access-control-request-headers");
	char buf[1400]; /* room for all of it: a cut line would break the head */
	int n;

	n = snprintf(buf, sizeof(buf), CORS_HEADERS "Access-Control-Max-Age: 86400\r\n");
	if (m != NULL && n < (int)sizeof(buf))
		n += snprintf(buf + n, sizeof(buf) - (size_t)n,
			      "Access-Control-Allow-Methods: %.*s\r\n",
			      (int)SM_MIN(m->len, 256u), m->p);
	if (h != NULL && n < (int)sizeof(buf))
		n += snprintf(buf + n, sizeof(buf) - (size_t)n,
			      "Access-Control-Allow-Headers: %.*s\r\n",
			      (int)SM_MIN(h->len, 768u), h->p);
	req->reply_headers = buf; /* copied by the reply */
	sm_http_reply(req, 200, NULL, NULL, 0);
}

static void
handle_http(void *ctx, struct sm_http_req *req)
{
	const struct sm_http_str *target, *host, *enc;
	const struct alt_operation *o;
	struct alt_op *op;
	const char *dot;
	char msg[300];

	(void)ctx;
	if (SM_UNLIKELY(sm_http_header(req, "origin") != NULL)) {
		/* CORS, as DynamoDB answers it: only to requests that name an Origin */
		if (req->head.method == SM_HTTP_OPTIONS) {
			cors_preflight(req);
			return;
		}
		req->reply_headers = CORS_HEADERS;
	}
	if (req->head.method == SM_HTTP_GET) {
		if (req->head.path.len == 1 && req->head.path.p[0] == '/') {
			host = sm_http_header(req, "host");
			snprintf(msg, sizeof(msg), "healthy: %.*s",
				 host ? (int)SM_MIN(host->len, 256u) : 0, host ? host->p : "");
			sm_http_reply(req, 200, "text/plain", msg, strlen(msg));
			return;
		}
		if (req->head.path.len == 11 && memcmp(req->head.path.p, "/localnodes", 11) == 0) {
			alt_localnodes(req);
			return;
		}
		sm_http_reply(req, 404, "text/plain", "Not Found", 9);
		return;
	}
	if (req->head.method == SM_HTTP_OPTIONS) {
		sm_http_reply(req, 200, NULL, NULL, 0);
		return;
	}
	op = alt_op_get();
	if (op == NULL) {
		sm_http_reply(req, 500, SM_HTTP_JSON_TYPE,
			      "{\"__type\":\"" ALT_ERR_PREFIX "InternalServerError\","
			      "\"message\":\"out of memory\"}",
			      strlen("{\"__type\":\"" ALT_ERR_PREFIX "InternalServerError\","
				     "\"message\":\"out of memory\"}"));
		return;
	}
	op->req = req;
	op->body = req->body.p;
	op->body_len = req->body.len;
	op->start_cycles = sm_cycles();
	ALT_STAT_INC(total_operations);
	if (req->head.method != SM_HTTP_POST) {
		alt_fail(op, "ValidationException", "Unsupported method %.*s",
			 (int)SM_MIN(req->head.method_text.len, 32u), req->head.method_text.p);
		return;
	}
	target = sm_http_header(req, "x-amz-target");
	dot = target ? memchr(target->p, '.', target->len) : NULL;
	if (target == NULL) {
		alt_fail(op, "UnknownOperationException", "Missing X-Amz-Target header");
		return;
	}
	o = dot ? find_operation(dot + 1, target->len - (size_t)(dot + 1 - target->p)) : NULL;
	if (o == NULL) {
		ALT_STAT_INC(unsupported_operations);
		alt_fail(op, "UnknownOperationException", "Unsupported operation %.*s",
			 (int)SM_MIN(target->len, 128u), target->p);
		return;
	}
	count_operation(op, o);
	if (alt_cfg->enforce_authorization && check_signature(op, req) < 0)
		return;
	enc = sm_http_header(req, "content-encoding");
	if (enc != NULL && enc->len > 0 &&
	    !(enc->len == 8 && strncasecmp(enc->p, "identity", 8) == 0)) {
		if (!(enc->len == 4 && strncasecmp(enc->p, "gzip", 4) == 0) &&
		    !(enc->len == 7 && strncasecmp(enc->p, "deflate", 7) == 0)) {
			alt_fail(op, "InternalServerError", "Unsupported Content-Encoding %.*s",
				 (int)SM_MIN(enc->len, 32u), enc->p);
			return;
		}
		if (inflate_body(op, enc) < 0)
			return;
	}
	run(op, o);
}

const struct sm_http_handler sm_alternator_handler = {
	.request = handle_http,
};

int
sm_alternator_execute(const char *opname, const char *body, size_t len,
		      void (*done)(void *ctx, int status, const char *json, size_t len), void *ctx)
{
	const struct alt_operation *o = find_operation(opname, strlen(opname));
	struct alt_op *op;

	op = alt_op_get();
	if (op == NULL)
		return -ENOMEM;
	op->local_done = done;
	op->local_ctx = ctx;
	op->body = body;
	op->body_len = len;
	op->start_cycles = sm_cycles();
	if (o == NULL) {
		ALT_STAT_INC(total_operations);
		ALT_STAT_INC(unsupported_operations);
		alt_fail(op, "UnknownOperationException", "Unsupported operation %s", opname);
		return 0;
	}
	/* the service's own requests (TTL expiry) are no client's operations: ScyllaDB's
	 * expiration deletes are counted by scylla_expiration_items_deleted only */
	if (!alt_stream_service) {
		ALT_STAT_INC(total_operations);
		count_operation(op, o);
	}
	run(op, o);
	return 0;
}

int
sm_alternator_shard_init(const struct sm_alternator_config *cfg)
{
	alt_cfg = cfg;
	pthread_once(&op_tables_once, op_tables_init);
	alt_metrics_shard_init(sm_shard_id());
	alt_op_shard_init();
	alt_ttl_shard_init();
	return 0;
}

void
sm_alternator_shard_fini(void)
{
	alt_ttl_shard_fini();
	alt_stream_shard_fini();
	alt_system_shard_fini();
	alt_op_shard_fini();
	alt_index_shard_fini();
	alt_meta_shard_fini();
	sm_http_shard_fini();
}
