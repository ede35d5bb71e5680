/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * adversarial: what a hostile client's worst input costs each parser and
 * validator, per KB. Every input class is built (untimed) at its configured
 * limit and at 1/64, 1/16 and 1/4 of it, then fed to the component the way
 * the server feeds it; a flat row of microseconds per KB is a linear
 * component. The project's target: no input within the configured limits
 * holds a shard longer than 10 ms per 100 KB, i.e. 100 us/KB.
 *
 *   adversarial [--json FILE] [--max-bytes N] [--min-ms N] [--only SUBSTR]
 *
 * --max-bytes caps every size (the smoke test runs with a small one);
 * --min-ms is how long each size repeats for its best time (default 30).
 * No server: the libraries are called directly, on this thread. Timing is
 * measured here and never asserted (tests/bench/meson.build runs it as a
 * benchmark, and as a test only to see it run).
 */

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alt_priv.h"
#include "sm_core.h"
#include "sm_cql_parse.h"
#include "sm_cql_proto.h"
#include "sm_cql_value.h"
#include "sm_ddb_expr.h"
#include "sm_http.h"
#include "sm_json.h"
#include "sm_types.h"

#define KB 1024.0
#define MIB (1u << 20)
#define CQL_FRAME_LIMIT (256u * MIB) /* native_transport_max_frame_size */
#define HTTP_BODY_LIMIT (16u * MIB)  /* Alternator's request_content_length_limit */
#define HTTP_HEAD_LIMIT (16u << 10)
#define ITEM_LIMIT ALT_MAX_ITEM_BYTES

void
alt_value_shard_fini(void);

/* ---- a growable text ---- */

struct buf {
	char *p;
	size_t len, cap;
};

static void
need(struct buf *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 4096;

	if (b->cap - b->len > n)
		return;
	while (cap - b->len <= n)
		cap *= 2;
	b->p = realloc(b->p, cap);
	if (b->p == NULL) {
		fprintf(stderr, "adversarial: out of memory for a %zu-byte input\n", cap);
		exit(1);
	}
	b->cap = cap;
}

static void
put(struct buf *b, const void *p, size_t n)
{
	need(b, n);
	memcpy(b->p + b->len, p, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void
puts_(struct buf *b, const char *s)
{
	put(b, s, strlen(s));
}

static void
putf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
putf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	need(b, (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

static void
put_be16(struct buf *b, uint16_t v)
{
	uint8_t x[2] = { (uint8_t)(v >> 8), (uint8_t)v };

	put(b, x, 2);
}

static void
put_be32(struct buf *b, uint32_t v)
{
	uint8_t x[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };

	put(b, x, 4);
}

/*
 * Append @unit (its %u, once or twice: the repetition's number) and @sep
 * while @b stays within @size bytes with @tail after it, at least once.
 */
static void
repeat(struct buf *b, size_t size, const char *unit, const char *sep, const char *tail)
{
	size_t sl = strlen(sep), tl = strlen(tail), n;
	char one[128];
	unsigned i;

	for (i = 0;; i++) {
		/* the unit is one of this file's literals */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
		n = (size_t)snprintf(one, sizeof(one), unit, i, i);
#pragma GCC diagnostic pop
		if (i > 0 && b->len + sl + n + tl > size)
			break;
		if (i > 0)
			puts_(b, sep);
		put(b, one, n);
	}
	puts_(b, tail);
}

/* @head, then repeat() up to @size. */
static void
fill(struct buf *b, size_t size, const char *head, const char *unit, const char *sep,
     const char *tail)
{
	b->len = 0;
	puts_(b, head);
	repeat(b, size, unit, sep, tail);
}

/*
 * @head, then units of @open x @depth, @leaf, @close x @depth separated by
 * commas while they fit in @size bytes with @tail (at least one), then @tail.
 */
static void
side_by_side(struct buf *b, size_t size, const char *head, const char *open, unsigned depth,
	     const char *leaf, const char *close, const char *tail)
{
	size_t unit = depth * (strlen(open) + strlen(close)) + strlen(leaf) + 1;
	unsigned i, n;

	b->len = 0;
	puts_(b, head);
	for (n = 0; n == 0 || b->len + unit + strlen(tail) <= size; n++) {
		if (n > 0)
			puts_(b, ",");
		for (i = 0; i < depth; i++)
			puts_(b, open);
		puts_(b, leaf);
		for (i = 0; i < depth; i++)
			puts_(b, close);
	}
	puts_(b, tail);
}

/* ---- the classes ---- */

struct cls {
	const char *component;
	const char *input;
	size_t limit;		/* the configured limit the largest input is sized to */
	const char *limit_what; /* which limit */
	void (*build)(struct buf *b, size_t size);
	int (*run)(const struct buf *b); /* 0 when the component answered as it must */
};

static char err[1024];

/* -- CQL frames: a BATCH of statements with as many [value]s as fit -- */

static void
b_cql_frame_batch(struct buf *b, size_t size)
{
	unsigned nstmt = 0, nval;

	b->len = 0;
	put(b, "\0\0\0", 3); /* type LOGGED, then the count, patched below */
	while (b->len + 16 < size && nstmt < 65535) {
		put(b, "\1", 1); /* prepared */
		put_be16(b, 4);
		put(b, "idid", 4);
		/* empty values, 4 bytes each, up to 65,535 a statement */
		nval = (unsigned)SM_MIN((size - b->len - 8) / 4, 65535u);
		put_be16(b, (uint16_t)nval);
		need(b, (size_t)nval * 4);
		memset(b->p + b->len, 0, (size_t)nval * 4);
		b->len += (size_t)nval * 4;
		nstmt++;
	}
	b->p[1] = (char)(nstmt >> 8);
	b->p[2] = (char)nstmt;
	put_be16(b, 1); /* consistency ONE */
	put(b, "\0", 1);
}

static int
r_cql_frame_batch(const struct buf *b)
{
	struct sm_cql_frame_header h = { .version = 4, .opcode = SM_CQL_OP_BATCH };
	struct sm_cql_request req;
	struct sm_cql_batch_stmt st;
	struct sm_cql_iter it, vi;
	struct sm_cql_value v;
	const char *why;
	uint64_t n = 0;

	h.length = (uint32_t)b->len;
	if (sm_cql_request_decode(&h, (const uint8_t *)b->p, b->len, 0, &req, &why) != 0)
		return -1;
	/* the executor walks every statement and value */
	sm_cql_batch_iter(&it, &req.u.batch);
	while (sm_cql_batch_next(&it, &st)) {
		sm_cql_values_iter(&vi, &st.values);
		while (sm_cql_values_next(&vi, &v))
			n++;
	}
	return n > 0 ? 0 : -1;
}

/* -- CQL statements: the lexer and the parser -- */

static int
parse_ok(const struct buf *b)
{
	struct sm_cql_stmt *s;
	int rc = sm_cql_parse(b->p, b->len, &s, err, sizeof(err));

	if (rc == 0)
		sm_cql_stmt_free(s);
	return rc;
}

/* The reported stall: every token on one line (an IN list of 1s). */
static void
b_cql_tokens(struct buf *b, size_t size)
{
	fill(b, size, "SELECT * FROM t WHERE a IN (", "1", ",", ")");
}

/* Strings of multi-byte characters, and the error at the line's end: the column must be exact. */
static void
b_cql_utf8_error(struct buf *b, size_t size)
{
	fill(b, size, "SELECT * FROM t WHERE a IN (", "'\xc3\xa9\xe2\x82\xac'", ",", ") garbage");
}

static int
r_cql_error(const struct buf *b)
{
	return parse_ok(b) == -EBADMSG && strstr(err, "line 1:") != NULL ? 0 : -1;
}

/* List literals nested NEST_LISTS deep (the deepest type there is), many side by side. */
#define NEST_LISTS 15

static void
b_cql_nested(struct buf *b, size_t size)
{
	side_by_side(b, size, "INSERT INTO t (a) VALUES ([", "[", NEST_LISTS - 1, "1,2", "]", "])");
}

/* A map literal of many entries. */
static void
b_cql_map(struct buf *b, size_t size)
{
	fill(b, size, "INSERT INTO t (a) VALUES ({", "%u: 'v'", ", ", "})");
}

/* BEGIN BATCH with statements up to the 65,535 a batch may hold. */
static void
b_cql_batch(struct buf *b, size_t size)
{
	unsigned i;

	b->len = 0;
	puts_(b, "BEGIN UNLOGGED BATCH ");
	for (i = 0; b->len + 48 < size && i < 65535; i++)
		putf(b, "INSERT INTO ks.t (a, b) VALUES (%u, ?); ", i);
	puts_(b, "APPLY BATCH");
}

/* One identifier as long as the statement, quoted, with doubled quotes. */
static void
b_cql_ident(struct buf *b, size_t size)
{
	b->len = 0;
	puts_(b, "SELECT \"");
	while (b->len + 12 < size)
		puts_(b, b->len % 64 ? "x" : "\"\"");
	puts_(b, "\" FROM t");
}

/* WITH a = 1 AND b = 2 ...: the repeated-property check. */
static void
b_cql_props(struct buf *b, size_t size)
{
	fill(b, size, "CREATE TABLE t (a int PRIMARY KEY) WITH ", "p%u = 1", " AND ", "");
}

/* -- CQL values: literals converted for their column, bound collections normalised -- */

static int
convert(const struct buf *b, const char *type)
{
	const struct sm_type *t;
	struct sm_cql_stmt *s;
	struct sm_cql_value_span span;
	struct sm_cql_buf out;
	int rc;

	rc = sm_cql_parse(b->p, b->len, &s, err, sizeof(err));
	if (rc != 0)
		return rc;
	if (sm_type_parse(type, &t, err, sizeof(err)) != 0) {
		sm_cql_stmt_free(s);
		return -EINVAL;
	}
	sm_cql_buf_init(&out);
	rc = sm_cql_term_to_value(s->insert.values[0], t, "a", NULL, &out, &span, err, sizeof(err));
	sm_cql_buf_release(&out);
	sm_type_free(t);
	sm_cql_stmt_free(s);
	return rc;
}

/* A set literal, every element twice, out of order. */
static void
b_cql_set_dups(struct buf *b, size_t size)
{
	unsigned i;

	b->len = 0;
	puts_(b, "INSERT INTO t (a) VALUES ({");
	for (i = 0; b->len + 24 < size; i++)
		putf(b, "%s%u", i ? "," : "", (i / 2 * 7919u) % 1000003u);
	puts_(b, "})");
}

static int
r_cql_set_dups(const struct buf *b)
{
	return convert(b, "set<int>");
}

static int
r_cql_nested_value(const struct buf *b)
{
	char type[512];
	size_t n = 0;
	unsigned i;

	n += (size_t)snprintf(type + n, sizeof(type) - n, "list<");
	for (i = 1; i < NEST_LISTS; i++)
		n += (size_t)snprintf(type + n, sizeof(type) - n, "frozen<list<");
	n += (size_t)snprintf(type + n, sizeof(type) - n, "int");
	for (i = 1; i < NEST_LISTS; i++)
		n += (size_t)snprintf(type + n, sizeof(type) - n, ">>");
	snprintf(type + n, sizeof(type) - n, ">");
	return convert(b, type);
}

static int
r_cql_map_value(const struct buf *b)
{
	return convert(b, "map<int, text>");
}

/* A varint literal of the 10,000 digits accepted, then spaces: the digits' cost per KB of text. */
static void
b_cql_varint(struct buf *b, size_t size)
{
	size_t i, digits = SM_MIN(size > 40 ? size - 40 : 1, (size_t)SM_CQL_MAX_NUMBER_DIGITS);

	b->len = 0;
	puts_(b, "INSERT INTO t (a) VALUES (");
	for (i = 0; i < digits; i++)
		puts_(b, i ? "7" : "1");
	while (b->len + 1 < size)
		puts_(b, " ");
	puts_(b, ")");
}

static int
r_cql_varint(const struct buf *b)
{
	return convert(b, "varint");
}

/* A bound frozen<set<blob>> of short elements, each twice, as a driver may send it. */
static void
b_cql_bound_set(struct buf *b, size_t size)
{
	unsigned i, n = (unsigned)((size - 4) / 12);

	b->len = 0;
	put_be32(b, n);
	for (i = 0; i < n; i++) {
		put_be32(b, 8);
		put_be32(b, (i / 2) * 2654435761u);
		put_be32(b, i / 2);
	}
}

static const struct sm_type *set_blob;

static int
r_cql_bound_set(const struct buf *b)
{
	const struct sm_type *t = set_blob;
	uint8_t *out = malloc(b->len);
	struct sm_bytes v = { (const uint8_t *)b->p, (uint32_t)b->len };
	long n;

	if (out == NULL || sm_value_validate(t, v, err, sizeof(err)) != 0) {
		free(out);
		return -1;
	}
	n = sm_value_normalize(t, v, out, b->len);
	free(out);
	return n > 0 ? 0 : -1;
}

/*
 * A bound frozen<set<decimal>> of two equal numbers: 1, and 1 written as
 * 10^k with scale k, the unscaled value @size / 2 bytes. Telling them apart
 * means computing 1 * 10^k: quadratic in k (see docs/benchmarks.md).
 */
static void
b_cql_decimals(struct buf *b, size_t size)
{
	size_t nbytes = size / 2 > 16 ? size / 2 - 16 : 1, nl = nbytes / 4 + 2, used = 1, i;
	uint32_t *limbs = calloc(nl, sizeof(*limbs));
	uint64_t carry;
	unsigned k = 0, bytes;

	limbs[0] = 1;
	/* multiply by 10^9 while the value stays under nbytes - 1 bytes (a sign byte ahead) */
	while ((used + 1) * 4 + 1 < nbytes) {
		for (i = 0, carry = 0; i < used; i++) {
			carry += (uint64_t)limbs[i] * 1000000000u;
			limbs[i] = (uint32_t)carry;
			carry >>= 32;
		}
		if (carry)
			limbs[used++] = (uint32_t)carry;
		k += 9;
	}
	bytes = (unsigned)used * 4 + 1;
	b->len = 0;
	put_be32(b, 2);
	put_be32(b, 5); /* 1: scale 0, unscaled 0x01 */
	put_be32(b, 0);
	put(b, "\1", 1);
	put_be32(b, 4 + bytes);
	put_be32(b, k);
	put(b, "\0", 1);
	for (i = used; i-- > 0;)
		put_be32(b, limbs[i]);
	free(limbs);
}

static const struct sm_type *set_dec;

static int
r_cql_decimals(const struct buf *b)
{
	uint8_t *out = malloc(b->len);
	struct sm_bytes v = { (const uint8_t *)b->p, (uint32_t)b->len };
	long n;

	if (out == NULL || sm_value_validate(set_dec, v, err, sizeof(err)) != 0) {
		free(out);
		return -1;
	}
	n = sm_value_normalize(set_dec, v, out, b->len);
	free(out);
	/* equal: one element is left */
	return n > 0 && out != NULL && n < (long)b->len / 2 ? 0 : -1;
}

/* -- HTTP -- */

/* 64 header fields (the most taken) sharing the 16 KB head. */
static void
b_http_head(struct buf *b, size_t size)
{
	size_t per = size > 200 ? (size - 100) / 64 : 1;
	unsigned i;
	size_t k;

	b->len = 0;
	puts_(b, "POST / HTTP/1.1\r\n");
	for (i = 0; i < 64 && b->len + per + 8 < size; i++) {
		putf(b, "X-H%u: ", i);
		for (k = 8; k < per; k++)
			puts_(b, "v");
		puts_(b, "\r\n");
	}
	puts_(b, "\r\n");
}

static int
r_http_head(const struct buf *b)
{
	struct sm_http_head h;

	return sm_http_parse_head(b->p, b->len, HTTP_HEAD_LIMIT, &h) == (int)b->len ? 0 : -1;
}

/* The same head arriving a line at a time: parsed again at every line's end, as on_head() does. */
static int
r_http_head_split(const struct buf *b)
{
	struct sm_http_head h;
	const char *p = b->p, *nl;
	int rc = -EAGAIN;

	while ((nl = memchr(p, '\n', (size_t)(b->p + b->len - p))) != NULL) {
		p = nl + 1;
		rc = sm_http_parse_head(b->p, (size_t)(p - b->p), HTTP_HEAD_LIMIT, &h);
	}
	return rc == (int)b->len ? 0 : -1;
}

/* A chunked body of one-byte chunks. */
static void
b_http_chunked(struct buf *b, size_t size)
{
	b->len = 0;
	while (b->len + 16 < size)
		puts_(b, "1;e=x\r\nx\r\n");
	puts_(b, "0\r\n\r\n");
}

static int
r_http_chunked(const struct buf *b)
{
	struct sm_http_chunked d;
	struct sm_http_str data;
	size_t off = 0, got = 0;
	ssize_t n;
	char *body = malloc(b->len);

	sm_http_chunked_init(&d, HTTP_BODY_LIMIT, HTTP_HEAD_LIMIT);
	while (body != NULL && off < b->len && !d.done) {
		n = sm_http_chunked_decode(&d, b->p + off, b->len - off, &data);
		if (n <= 0)
			break;
		memcpy(body + got, data.p, data.len);
		got += data.len;
		off += (size_t)n;
	}
	free(body);
	return d.done ? 0 : -1;
}

/* Small requests pipelined back to back, each with a body. */
static void
b_http_pipelined(struct buf *b, size_t size)
{
	b->len = 0;
	while (b->len + 80 < size)
		puts_(b, "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\n{}");
}

static int
r_http_pipelined(const struct buf *b)
{
	struct sm_http_head h;
	size_t off = 0;
	int n;

	while (off < b->len) {
		n = sm_http_parse_head(b->p + off, b->len - off, HTTP_HEAD_LIMIT, &h);
		if (n <= 0)
			return -1;
		off += (size_t)n + h.content_length;
	}
	return 0;
}

/* -- JSON -- */

static struct sm_json_doc jdoc;

static int
r_json(const struct buf *b)
{
	return sm_json_parse(&jdoc, b->p, b->len, 0);
}

/* Arrays and objects 79 deep (80 is the limit), side by side. */
static void
b_json_deep(struct buf *b, size_t size)
{
	side_by_side(b, size, "[", "{\"a\":[", 39, "1", "]}", "]");
}

/* One string of escapes. */
static void
b_json_escapes(struct buf *b, size_t size)
{
	b->len = 0;
	puts_(b, "[\"");
	while (b->len + 16 < size)
		puts_(b, "\\u00e9\\n\\\"\\ud83d\\ude00");
	puts_(b, "\"]");
}

/* The string's value too, as Alternator reads a payload. */
static int
r_json_escapes(const struct buf *b)
{
	struct sm_bytes s;
	char *out = malloc(b->len);
	int rc = sm_json_parse(&jdoc, b->p, b->len, 0);

	if (rc == 0)
		rc = sm_json_str(&jdoc, 1, out, b->len, &s);
	free(out);
	return rc;
}

/* An object of many members, every one then looked up (as ExpressionAttributeValues are). */
static void
b_json_members(struct buf *b, size_t size)
{
	fill(b, size, "{", "\":v%u\":1", ",", "}");
}

static int
r_json_lookups(const struct buf *b)
{
	char key[24];
	unsigned i, n;

	if (sm_json_parse(&jdoc, b->p, b->len, 0) != 0)
		return -1;
	n = sm_json_count(&jdoc, 0);
	for (i = 0; i < n; i++) {
		snprintf(key, sizeof(key), ":v%u", i);
		if (sm_json_get(&jdoc, 0, key) < 0)
			return -1;
	}
	return 0;
}

/* One key repeated (the last counts), looked up as often as it is written. */
static void
b_json_dup_keys(struct buf *b, size_t size)
{
	fill(b, size, "{", "\"k\":%u", ",", "}");
}

static int
r_json_dup_lookups(const struct buf *b)
{
	unsigned i, n;

	if (sm_json_parse(&jdoc, b->p, b->len, 0) != 0)
		return -1;
	n = sm_json_count(&jdoc, 0);
	for (i = 0; i < n; i++)
		if (sm_json_get(&jdoc, 0, "k") < 0)
			return -1;
	return 0;
}

/* -- DynamoDB expressions (4 KB), with the request's maps -- */

/*
 * The maps, as JSON, for the environment: {"#n0":"a0", ...} and
 * {":v0":{"<type>": ...}, ...}; resolved names are copied into a pool that
 * each parse empties, stable while it runs, as Alternator's are.
 */
static struct sm_json_doc names_doc, values_doc;
static struct buf names_json, values_json, name_pool;
static const char *value_type = "N";

static const char *
env_name(void *arg, const char *ref)
{
	struct sm_bytes s;
	int t = sm_json_get(&names_doc, 0, ref);
	size_t at = name_pool.len;

	(void)arg;
	/* the pool never moves: names handed out stay valid */
	if (t < 0 || name_pool.cap - at <= sm_json_span(&names_doc, t).len + 1)
		return NULL;
	if (sm_json_str(&names_doc, t, name_pool.p + at, name_pool.cap - at - 1, &s) != 0)
		return NULL;
	if ((const char *)s.p != name_pool.p + at)
		memcpy(name_pool.p + at, s.p, s.len);
	name_pool.p[at + s.len] = '\0';
	name_pool.len += s.len + 1;
	return name_pool.p + at;
}

static const char *
env_value_type(void *arg, const char *ref)
{
	(void)arg;
	return sm_json_get(&values_doc, 0, ref) >= 0 ? value_type : NULL;
}

static void
maps(unsigned nnames, unsigned nvalues, const char *type)
{
	unsigned i;

	value_type = type;
	names_json.len = values_json.len = 0;
	puts_(&names_json, "{");
	for (i = 0; i < nnames; i++)
		putf(&names_json, "%s\"#n%u\":\"a%u\"", i ? "," : "", i, i);
	puts_(&names_json, "}");
	puts_(&values_json, "{");
	for (i = 0; i < nvalues; i++)
		putf(&values_json, "%s\":v%u\":{\"%s\":%s}", i ? "," : "", i, type,
		     strcmp(type, "L") == 0 ? "[]" : "\"1\"");
	puts_(&values_json, "}");
	if (sm_json_parse(&names_doc, names_json.p, names_json.len, 0) != 0 ||
	    sm_json_parse(&values_doc, values_json.p, values_json.len, 0) != 0) {
		fprintf(stderr, "adversarial: bad maps\n");
		exit(1);
	}
}

static int
expr(enum sm_ddb_expr_kind kind, const struct buf *b)
{
	struct sm_ddb_expr_env env = { env_name, env_value_type, NULL };
	struct sm_ddb_expr *e;
	int rc;

	name_pool.len = 0;
	need(&name_pool, 1 << 20);
	rc = sm_ddb_expr_parse(kind, b->p, b->len, &env, &e, err, sizeof(err));

	if (rc == 0)
		sm_ddb_expr_free(e);
	return rc;
}

static void
b_expr_chain(struct buf *b, size_t size)
{
	b->len = 0;
	maps(0, 1, "N");
	repeat(b, size, "a%u = :v0", " AND ", "");
}

static int
r_expr_cond(const struct buf *b)
{
	return expr(SM_DDB_CONDITION, b);
}

static void
b_expr_parens(struct buf *b, size_t size)
{
	unsigned i, n;

	b->len = 0;
	maps(0, 1, "N");
	n = (unsigned)SM_MIN((size - 8) / 14, 199u);
	for (i = 0; i < n; i++)
		puts_(b, "(a = :v0 AND ");
	puts_(b, "a = :v0");
	for (i = 0; i < n; i++)
		puts_(b, ")");
	while (b->len + 14 < size)
		puts_(b, " OR a = :v0");
}

/* Every name and value a placeholder of its own: #n0 = :v0 OR ... */
static void
b_expr_placeholders(struct buf *b, size_t size)
{
	unsigned n = (unsigned)(size / 8) + 1;

	b->len = 0;
	maps(n, n, "N");
	repeat(b, size, "#n%u = :v%u", " OR ", "");
}

static void
b_expr_in(struct buf *b, size_t size)
{
	unsigned i;

	b->len = 0;
	maps(0, 100, "N");
	while (b->len + 700 < size) {
		if (b->len > 0)
			puts_(b, " OR ");
		puts_(b, "a IN (");
		for (i = 0; i < 100; i++)
			putf(b, "%s:v%u", i ? "," : "", i);
		puts_(b, ")");
	}
	if (b->len == 0)
		puts_(b, "a IN (:v0)");
}

/* Paths 32 elements long (the limit), as many as fit, none overlapping. */
static void
b_expr_paths(struct buf *b, size_t size)
{
	unsigned i, k;

	b->len = 0;
	maps(0, 0, "N");
	for (i = 0; b->len + 100 < size; i++) {
		putf(b, "%sp%u", i ? ", " : "", i);
		for (k = 1; k < 32; k++)
			puts_(b, k % 2 ? ".m" : "[7]");
	}
	if (b->len == 0)
		puts_(b, "p");
}

static int
r_expr_proj(const struct buf *b)
{
	return expr(SM_DDB_PROJECTION, b);
}

/* A projection of distinct #names: the overlap check resolves and compares every path. */
static void
b_expr_proj_names(struct buf *b, size_t size)
{
	unsigned n = (unsigned)(size / 3) + 1;

	b->len = 0;
	maps(n, 0, "N");
	repeat(b, size, "#n%u", ",", "");
}

/* Nested functions: SET a = list_append(if_not_exists(...), ...) and + chains. */
static void
b_expr_functions(struct buf *b, size_t size)
{
	unsigned i;

	b->len = 0;
	maps(0, 2, "L");
	puts_(b, "SET ");
	for (i = 0; b->len + 80 < size; i++)
		putf(b, "%sa%u = list_append(if_not_exists(l%u, :v0), :v1)", i ? ", " : "", i, i);
	if (i == 0)
		puts_(b, "a = :v0");
}

static int
r_expr_update(const struct buf *b)
{
	return expr(SM_DDB_UPDATE, b);
}

/* -- Alternator item validation (the request's attribute values) -- */

static struct alt_op *op;

static int
r_item(const struct buf *b)
{
	struct sm_json_out o;
	int rc;

	if (sm_json_parse(&jdoc, b->p, b->len, 0) != 0)
		return -1;
	sm_json_out_init(&o);
	rc = alt_value_write(op, &jdoc, 0, &o, false, "Item");
	sm_json_out_release(&o);
	return rc;
}

/* {"M": {"k0": {"S": "v"}, ...}} */
static void
b_item_map(struct buf *b, size_t size)
{
	fill(b, size, "{\"M\":{", "\"k%u\":{\"S\":\"v\"}", ",", "}}");
}

/* Lists and maps 32 deep (DynamoDB's limit), many side by side. */
static void
b_item_deep(struct buf *b, size_t size)
{
	side_by_side(b, size, "{\"L\":[", "{\"M\":{\"a\":{\"L\":[", 15, "{\"N\":\"1\"}", "]}}}",
		     "]}");
}

/* A string set of distinct strings: the duplicate check's worst case is no duplicate. */
static void
b_item_ss(struct buf *b, size_t size)
{
	fill(b, size, "{\"SS\":[", "\"s%u\"", ",", "]}");
}

/* Numbers in every spelling of their value's neighbours: 1, 2.0, 30E-1, ... */
static void
b_item_ns(struct buf *b, size_t size)
{
	unsigned i;

	b->len = 0;
	puts_(b, "{\"NS\":[");
	for (i = 0; b->len + 32 < size; i++)
		putf(b, "%s\"%u%s\"", i ? "," : "", i,
		     i % 3 == 0	  ? ".0"
		     : i % 3 == 1 ? "0E-1"
				  : "");
	puts_(b, "]}");
}

static void
b_item_bs(struct buf *b, size_t size)
{
	fill(b, size, "{\"BS\":[", "\"%08u\"", ",", "]}");
}

/* The duplicate at the very end, found after all the rest (the reported 37 s at 80,000). */
static void
b_item_ss_dup(struct buf *b, size_t size)
{
	b->len = 0;
	puts_(b, "{\"SS\":[");
	repeat(b, size > 20 ? size - 10 : size, "\"s%u\"", ",", ",\"s0\"]}");
}

static int
r_item_dup(const struct buf *b)
{
	return r_item(b) == -EINVAL && strstr(op->errmsg, "duplicates") != NULL ? 0 : -1;
}

/* Two sets and two maps compared in a condition: a = :v. */
static struct buf eq_other;

static void
b_eq_sets(struct buf *b, size_t size)
{
	unsigned i, n = (unsigned)(size / 16) + 1;

	b->len = 0;
	puts_(b, "[{\"NS\":[");
	for (i = 0; i < n; i++)
		putf(b, "%s\"%u.00\"", i ? "," : "", i);
	puts_(b, "]},{\"NS\":[");
	for (i = n; i-- > 0;)
		putf(b, "\"%u\"%s", i, i ? "," : "");
	puts_(b, "]}]");
}

static void
b_eq_maps(struct buf *b, size_t size)
{
	size_t half = size / 2;

	eq_other.len = 0;
	puts_(&eq_other, "{\"M\":{");
	repeat(&eq_other, half, "\"k%u\":{\"N\":\"1\"}", ",", "}}");
	b->len = 0;
	puts_(b, "[");
	put(b, eq_other.p, eq_other.len);
	puts_(b, ",");
	put(b, eq_other.p, eq_other.len);
	puts_(b, "]");
}

static int
r_eq(const struct buf *b)
{
	if (sm_json_parse(&jdoc, b->p, b->len, 0) != 0)
		return -1;
	return alt_value_equal(op, (struct alt_val){ &jdoc, sm_json_at(&jdoc, 0, 0) },
			       (struct alt_val){ &jdoc, sm_json_at(&jdoc, 0, 1) })
		       ? 0
		       : -1;
}

static int
r_ok(const struct buf *b)
{
	return parse_ok(b);
}

static const struct cls classes[] = {
	{ "cql frame", "BATCH: 65,535 stmts, empty [value]s", CQL_FRAME_LIMIT,
	  "native_transport_max_frame_size", b_cql_frame_batch, r_cql_frame_batch },
	{ "cql lexer", "one line of tokens (IN (1,1,...))", CQL_FRAME_LIMIT,
	  "native_transport_max_frame_size", b_cql_tokens, r_ok },
	{ "cql lexer", "multi-byte strings, error at line end", CQL_FRAME_LIMIT,
	  "native_transport_max_frame_size", b_cql_utf8_error, r_cql_error },
	{ "cql parser", "list literals 15 deep, side by side", CQL_FRAME_LIMIT,
	  "native_transport_max_frame_size", b_cql_nested, r_ok },
	{ "cql parser", "map literal of n entries", CQL_FRAME_LIMIT,
	  "native_transport_max_frame_size", b_cql_map, r_ok },
	{ "cql parser", "BATCH of up to 65,535 statements", 65535u * 40,
	  "65,535 statements a batch", b_cql_batch, r_ok },
	{ "cql parser", "one quoted identifier", CQL_FRAME_LIMIT, "native_transport_max_frame_size",
	  b_cql_ident, r_ok },
	{ "cql parser", "WITH p0 = 1 AND p1 = 1 ...", CQL_FRAME_LIMIT,
	  "native_transport_max_frame_size", b_cql_props, r_ok },
	{ "cql value", "set<int> literal, each element twice", CQL_FRAME_LIMIT,
	  "native_transport_max_frame_size", b_cql_set_dups, r_cql_set_dups },
	{ "cql value", "frozen lists nested 15 deep", CQL_FRAME_LIMIT,
	  "native_transport_max_frame_size", b_cql_nested, r_cql_nested_value },
	{ "cql value", "map<int, text> literal", CQL_FRAME_LIMIT, "native_transport_max_frame_size",
	  b_cql_map, r_cql_map_value },
	{ "cql value", "varint literal of 10,000 digits", CQL_FRAME_LIMIT,
	  "native_transport_max_frame_size", b_cql_varint, r_cql_varint },
	{ "cql value", "bound frozen<set<blob>>, dups", CQL_FRAME_LIMIT,
	  "native_transport_max_frame_size", b_cql_bound_set, r_cql_bound_set },
	{ "cql value", "set<decimal>: 1 = 1.000... (residual)", 64u << 10, "see docs/benchmarks.md",
	  b_cql_decimals, r_cql_decimals },
	{ "http", "64 header fields", HTTP_HEAD_LIMIT, "alternator max header", b_http_head,
	  r_http_head },
	{ "http", "64 fields, a line per packet", HTTP_HEAD_LIMIT, "alternator max header",
	  b_http_head, r_http_head_split },
	{ "http", "chunked, 1-byte chunks", HTTP_BODY_LIMIT, "request_content_length_limit",
	  b_http_chunked, r_http_chunked },
	{ "http", "pipelined small requests", HTTP_BODY_LIMIT, "request_content_length_limit",
	  b_http_pipelined, r_http_pipelined },
	{ "json", "arrays/objects 79 deep", HTTP_BODY_LIMIT, "request_content_length_limit",
	  b_json_deep, r_json },
	{ "json", "one string of escapes", HTTP_BODY_LIMIT, "request_content_length_limit",
	  b_json_escapes, r_json_escapes },
	{ "json", "n members, each looked up", HTTP_BODY_LIMIT, "request_content_length_limit",
	  b_json_members, r_json_lookups },
	{ "json", "one key n times, looked up n times", HTTP_BODY_LIMIT,
	  "request_content_length_limit", b_json_dup_keys, r_json_dup_lookups },
	{ "ddb expr", "a0 = :v0 AND a1 = :v0 AND ...", SM_DDB_EXPR_MAX_LEN, "4 KB expression",
	  b_expr_chain, r_expr_cond },
	{ "ddb expr", "parentheses 199 deep, then ORs", SM_DDB_EXPR_MAX_LEN, "4 KB expression",
	  b_expr_parens, r_expr_cond },
	{ "ddb expr", "#n0 = :v0 OR ... (all distinct)", SM_DDB_EXPR_MAX_LEN, "4 KB expression",
	  b_expr_placeholders, r_expr_cond },
	{ "ddb expr", "IN lists of 100 operands", SM_DDB_EXPR_MAX_LEN, "4 KB expression", b_expr_in,
	  r_expr_cond },
	{ "ddb expr", "projection of 32-element paths", SM_DDB_EXPR_MAX_LEN, "4 KB expression",
	  b_expr_paths, r_expr_proj },
	{ "ddb expr", "projection of distinct #names", SM_DDB_EXPR_MAX_LEN, "4 KB expression",
	  b_expr_proj_names, r_expr_proj },
	{ "ddb expr", "SET of nested functions", SM_DDB_EXPR_MAX_LEN, "4 KB expression",
	  b_expr_functions, r_expr_update },
	{ "item", "map of n attributes", HTTP_BODY_LIMIT, "request_content_length_limit",
	  b_item_map, r_item },
	{ "item", "lists and maps 32 deep", HTTP_BODY_LIMIT, "request_content_length_limit",
	  b_item_deep, r_item },
	{ "item", "SS of distinct strings", HTTP_BODY_LIMIT, "request_content_length_limit",
	  b_item_ss, r_item },
	{ "item", "NS in mixed spellings", HTTP_BODY_LIMIT, "request_content_length_limit",
	  b_item_ns, r_item },
	{ "item", "BS of distinct binaries", HTTP_BODY_LIMIT, "request_content_length_limit",
	  b_item_bs, r_item },
	{ "item", "SS, the duplicate last", HTTP_BODY_LIMIT, "request_content_length_limit",
	  b_item_ss_dup, r_item_dup },
	{ "condition", "NS = NS (other spellings)", HTTP_BODY_LIMIT, "request_content_length_limit",
	  b_eq_sets, r_eq },
	{ "condition", "M = M (n attributes)", HTTP_BODY_LIMIT, "request_content_length_limit",
	  b_eq_maps, r_eq },
};

/* ---- measuring ---- */

#define NSIZES 4

struct result {
	size_t bytes[NSIZES];
	double us[NSIZES]; /* best time of one run; < 0: not run */
	bool failed;
};

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void
measure(const struct cls *c, size_t max_bytes, double min_us, struct result *r)
{
	struct buf b = { 0 };
	unsigned s, reps;
	double t0, t, best, spent;
	size_t prev = 0;

	memset(r, 0, sizeof(*r));
	for (s = 0; s < NSIZES; s++) {
		size_t size = c->limit >> (2 * (NSIZES - 1 - s));

		r->us[s] = -1;
		if (size > max_bytes)
			size = max_bytes;
		if (size < 64 || size <= prev)
			continue;
		prev = size;
		c->build(&b, size);
		r->bytes[s] = b.len;
		best = 1e30;
		spent = 0;
		for (reps = 0; reps < 1000 && (reps < 2 || spent < min_us); reps++) {
			t0 = now_us();
			if (c->run(&b) != 0) {
				fprintf(stderr,
					"adversarial: %s / %s at %zu bytes: unexpected answer: "
					"%s\n",
					c->component, c->input, b.len, err);
				r->failed = true;
				break;
			}
			t = now_us() - t0;
			spent += t;
			if (t < best)
				best = t;
		}
		r->us[s] = best;
		if (r->failed)
			break;
	}
	free(b.p);
}

static void
print_row(const struct cls *c, const struct result *r)
{
	char lim[32];
	unsigned s;
	double worst = 0;
	int last = -1;

	if (c->limit >= MIB)
		snprintf(lim, sizeof(lim), "%zu MiB", c->limit / MIB);
	else
		snprintf(lim, sizeof(lim), "%zu KiB", c->limit >> 10);
	printf("%-10s %-38s %8s", c->component, c->input, lim);
	for (s = 0; s < NSIZES; s++) {
		if (r->us[s] < 0 || r->failed) {
			printf(" %9s", "-");
			continue;
		}
		printf(" %9.2f", r->us[s] / (r->bytes[s] / KB));
		/* per 100 KB means little for a few bytes: their fixed cost is microseconds */
		if ((r->bytes[s] >= 4096 || s == NSIZES - 1) &&
		    r->us[s] / (r->bytes[s] / KB) > worst)
			worst = r->us[s] / (r->bytes[s] / KB);
		last = (int)s;
	}
	if (last >= 0)
		printf(" %9zu %9.2f %8.2f%s\n", r->bytes[last], r->us[last] / 1e3, worst / 10,
		       r->failed ? " FAILED" : "");
	else
		printf("%s\n", r->failed ? " FAILED" : "");
}

static void
json_row(FILE *f, const struct cls *c, const struct result *r, bool first)
{
	unsigned s;
	bool any = false;

	fprintf(f,
		"%s\n  {\"component\": \"%s\", \"input\": \"%s\", \"limit_bytes\": %zu, "
		"\"limit\": \"%s\", \"failed\": %s, \"sizes\": [",
		first ? "" : ",", c->component, c->input, c->limit, c->limit_what,
		r->failed ? "true" : "false");
	for (s = 0; s < NSIZES; s++) {
		if (r->us[s] < 0)
			continue;
		fprintf(f, "%s{\"bytes\": %zu, \"us\": %.3f, \"us_per_kb\": %.4f}", any ? ", " : "",
			r->bytes[s], r->us[s], r->us[s] / (r->bytes[s] / KB));
		any = true;
	}
	fprintf(f, "]}");
}

/* ---- whole Alternator requests, in process, on one shard ---- */

/*
 * A request class: @setup (NULL: none) writes the item the request works on,
 * before every run and untimed; @request is timed from sm_alternator_execute()
 * to its answer. Its bytes are the item's and the request's together: what
 * one request makes the shard go through.
 */
struct req_cls {
	const char *component;
	const char *input;
	size_t limit;
	const char *limit_what;
	void (*setup)(struct buf *b, size_t size);
	void (*request)(struct buf *b, size_t size);
	const char *setup_op, *op;
	int status; /* the answer it must get; 0: 200 or a 400 (too large as it grows) */
};

#define TABLE "\"TableName\":\"adv\""

/* PutItem of attributes a0, a1, ... up to @size (the 400 KB item limit). */
static void
rq_put_attrs(struct buf *b, size_t size)
{
	fill(b, size, "{" TABLE ",\"Item\":{\"p\":{\"S\":\"k\"},", "\"a%u\":{\"N\":\"1\"}", ",",
	     "}}");
}

/* An item whose attribute m is a map of @size bytes of members. */
static void
rq_put_map(struct buf *b, size_t size)
{
	fill(b, size, "{" TABLE ",\"Item\":{\"p\":{\"S\":\"k\"},\"m\":{\"M\":{",
	     "\"k%u\":{\"S\":\"x\"}", ",", "}}}}");
}

/* SET m.k0 = :v, m.k1 = :v, ...: as many nested actions as 4 KB holds. */
static void
rq_set_nested(struct buf *b, size_t size)
{
	(void)size;
	b->len = 0;
	puts_(b, "{" TABLE ",\"Key\":{\"p\":{\"S\":\"k\"}},\"UpdateExpression\":\"SET ");
	repeat(b, b->len + 4000, "m.k%u = :v", ", ", "");
	puts_(b, "\",\"ExpressionAttributeValues\":{\":v\":{\"S\":\"y\"}}}");
}

static unsigned ss_count; /* elements of the set rq_put_ss() wrote */

/* An item with a string set of @size bytes. */
static void
rq_put_ss(struct buf *b, size_t size)
{
	size_t i, at;

	b->len = 0;
	puts_(b, "{" TABLE ",\"Item\":{\"p\":{\"S\":\"k\"},\"ss\":{\"SS\":[");
	at = b->len;
	repeat(b, size, "\"s%u\"", ",", "]}}}");
	for (i = at, ss_count = 1; i < b->len; i++)
		ss_count += b->p[i] == ',';
}

/* The same with a 64 KB set, whatever the request's size. */
static void
rq_put_ss_small(struct buf *b, size_t size)
{
	(void)size;
	rq_put_ss(b, 64 << 10);
}

/* ADD to that set a set as large as the body may be: the union is computed before the size check. */
static void
rq_add_ss(struct buf *b, size_t size)
{
	fill(b, size,
	     "{" TABLE ",\"Key\":{\"p\":{\"S\":\"k\"}},\"UpdateExpression\":\"ADD ss :v\","
	     "\"ExpressionAttributeValues\":{\":v\":{\"SS\":[",
	     "\"t%u\"", ",", "]}}}");
}

/* DELETE from a 400 KB set every other element. */
static void
rq_delete_ss(struct buf *b, size_t size)
{
	fill(b, size,
	     "{" TABLE ",\"Key\":{\"p\":{\"S\":\"k\"}},\"UpdateExpression\":\"DELETE ss :v\","
	     "\"ExpressionAttributeValues\":{\":v\":{\"SS\":[",
	     "\"s%u\"", ",", "]}}}");
}

/* A condition comparing the stored set with an equal one written in another order. */
static void
rq_cond_eq(struct buf *b, size_t size)
{
	unsigned n = ss_count; /* the setup ran first */

	(void)size;
	b->len = 0;
	puts_(b, "{" TABLE ",\"Key\":{\"p\":{\"S\":\"k\"}},\"UpdateExpression\":\"SET z = :z\","
		 "\"ConditionExpression\":\"ss = :v\",\"ExpressionAttributeValues\":{\":z\":"
		 "{\"N\":\"1\"},\":v\":{\"SS\":[");
	while (n-- > 0)
		putf(b, "\"s%u\"%s", n, n ? "," : "");
	puts_(b, "]}}}");
}

static const struct req_cls req_classes[] = {
	{ "request", "PutItem, n attributes", ITEM_LIMIT - 4096, "400 KB item", NULL, rq_put_attrs,
	  NULL, "PutItem", 200 },
	{ "request", "UpdateItem, 4 KB of SET m.kN on map m", ITEM_LIMIT - 8192, "400 KB item",
	  rq_put_map, rq_set_nested, "PutItem", "UpdateItem", 200 },
	{ "request", "UpdateItem, ADD a huge SS to a SS", HTTP_BODY_LIMIT,
	  "request_content_length_limit", rq_put_ss_small, rq_add_ss, "PutItem", "UpdateItem", 0 },
	{ "request", "UpdateItem, DELETE half of a SS", ITEM_LIMIT / 2, "400 KB item", rq_put_ss,
	  rq_delete_ss, "PutItem", "UpdateItem", 200 },
	{ "request", "UpdateItem if SS = SS (reordered)", ITEM_LIMIT / 2, "400 KB item", rq_put_ss,
	  rq_cond_eq, "PutItem", "UpdateItem", 200 },
};

static struct {
	const char *only;
	size_t max_bytes;
	double min_us;
	unsigned ci, si, rep;
	size_t size, prev;
	bool timed_phase, failed;
	double t0, spent, best;
	struct buf setup, request;
	struct result r[SM_ARRAY_SIZE(req_classes)];
	bool selected[SM_ARRAY_SIZE(req_classes)];
	struct sm_task task;
	int status;
	char answer[200];
} rb;

static void
rb_done(void *ctx, int status, const char *json, size_t len)
{
	(void)ctx;
	rb.status = status;
	snprintf(rb.answer, sizeof(rb.answer), "%.*s", (int)SM_MIN(len, 150u), json);
	if (rb.timed_phase) {
		double t = now_us() - rb.t0;

		rb.spent += t;
		if (t < rb.best)
			rb.best = t;
	}
	sm_task_schedule(&rb.task);
}

static void
rb_exec(const char *opname, const struct buf *b)
{
	if (sm_alternator_execute(opname, b->p, b->len, rb_done, NULL) < 0) {
		fprintf(stderr, "adversarial: %s: out of memory\n", opname);
		rb.failed = true;
		sm_runtime_stop();
	}
}

/* One step: the next setup, timed request, size or class; stop after the last. */
static void
rb_step(void *arg)
{
	const struct req_cls *c;
	struct result *r;

	(void)arg;
	for (;;) {
		if (rb.ci >= SM_ARRAY_SIZE(req_classes)) {
			sm_runtime_stop();
			return;
		}
		c = &req_classes[rb.ci];
		r = &rb.r[rb.ci];
		if (!rb.selected[rb.ci] || rb.si >= NSIZES || r->failed) {
			rb.ci++;
			rb.si = 0;
			rb.rep = 0;
			rb.prev = 0;
			rb.timed_phase = false;
			continue;
		}
		if (rb.rep == 0 && !rb.timed_phase && rb.status == 0) {
			/* a new size */
			rb.size = c->limit >> (2 * (NSIZES - 1 - rb.si));
			if (rb.size > rb.max_bytes)
				rb.size = rb.max_bytes;
			r->us[rb.si] = -1;
			if (rb.size < 256 || rb.size <= rb.prev) {
				rb.si++;
				continue;
			}
			rb.prev = rb.size;
			if (c->setup != NULL)
				c->setup(&rb.setup, rb.size);
			c->request(&rb.request, rb.size);
			r->bytes[rb.si] = (c->setup != NULL ? rb.setup.len : 0) + rb.request.len;
			rb.best = 1e30;
			rb.spent = 0;
		}
		break;
	}
	if (rb.timed_phase) {
		/* the timed request answered */
		rb.timed_phase = false;
		if (c->status != 0 ? rb.status != c->status
				   : rb.status != 200 && rb.status != 400) {
			fprintf(stderr,
				"adversarial: %s / %s at %zu bytes: status %d, want %d: %s\n",
				c->component, c->input, r->bytes[rb.si], rb.status, c->status,
				rb.answer);
			r->failed = true;
			rb.status = 0;
			sm_task_schedule(&rb.task);
			return;
		}
		rb.status = 0;
		rb.rep++;
		if (rb.rep >= 1000 || (rb.rep >= 2 && rb.spent >= rb.min_us)) {
			r->us[rb.si] = rb.best;
			rb.si++;
			rb.rep = 0;
		}
		sm_task_schedule(&rb.task);
		return;
	}
	if (rb.status == 0 && c->setup != NULL) {
		/* write the item first (its answer comes back here with a status) */
		rb.status = -1;
		rb_exec(c->setup_op, &rb.setup);
		return;
	}
	if (rb.status > 0 && rb.status != 200) {
		fprintf(stderr, "adversarial: %s / %s: the setup got %d: %s\n", c->component,
			c->input, rb.status, rb.answer);
		r->failed = true;
		rb.status = 0;
		sm_task_schedule(&rb.task);
		return;
	}
	rb.status = 0;
	rb.timed_phase = true;
	rb.t0 = now_us();
	rb_exec(c->op, &rb.request);
}

static void
rb_created(void *ctx, int status, const char *json, size_t len)
{
	(void)ctx;
	if (status != 200) {
		fprintf(stderr, "adversarial: CreateTable: %d %.*s\n", status, (int)len, json);
		rb.failed = true;
		sm_runtime_stop();
		return;
	}
	sm_task_schedule(&rb.task);
}

static int
rb_shard_init(unsigned shard, void *arg)
{
	static const struct sm_alternator_config cfg = { .default_isolation = SM_ALT_UNSAFE_RMW };
	static const char create[] =
		"{\"AttributeDefinitions\":[{\"AttributeName\":\"p\",\"AttributeType\":\"S\"}]"
		"," TABLE ",\"BillingMode\":\"PAY_PER_REQUEST\",\"KeySchema\":[{\"AttributeName\":"
		"\"p\",\"KeyType\":\"HASH\"}]}";
	int ret;

	(void)arg;
	ret = sm_store_shard_init();
	if (ret == 0)
		ret = sm_alternator_shard_init(&cfg);
	if (ret < 0 || shard != 0)
		return ret;
	sm_task_init(&rb.task, rb_step, NULL);
	return sm_alternator_execute("CreateTable", create, strlen(create), rb_created, NULL);
}

static void
rb_shard_fini(unsigned shard, void *arg)
{
	(void)shard;
	(void)arg;
	sm_alternator_shard_fini();
	sm_store_shard_fini();
}

/* Run the selected request classes on a one-shard runtime; false when none ran. */
static bool
run_requests(const char *only, size_t max_bytes, double min_us)
{
	struct sm_runtime_opts o = { .smp = 1,
				     .overprovisioned = true,
				     .idle_poll_us = 0,
				     .shard_init = rb_shard_init,
				     .shard_fini = rb_shard_fini };
	char e[256];
	unsigned i;
	bool any = false;

	rb.only = only;
	rb.max_bytes = max_bytes;
	rb.min_us = min_us;
	for (i = 0; i < SM_ARRAY_SIZE(req_classes); i++) {
		rb.selected[i] = only == NULL || strstr(req_classes[i].component, only) != NULL ||
				 strstr(req_classes[i].input, only) != NULL;
		any |= rb.selected[i];
	}
	if (!any)
		return false;
	if (sm_runtime_run(&o, e, sizeof(e)) < 0) {
		fprintf(stderr, "adversarial: %s\n", e);
		rb.failed = true;
	}
	free(rb.setup.p);
	free(rb.request.p);
	return true;
}

static int
usage(void)
{
	fprintf(stderr, "usage: adversarial [--json FILE] [--max-bytes N] [--min-ms N] "
			"[--only SUBSTR]\n");
	return 2;
}

int
main(int argc, char **argv)
{
	const char *json = NULL, *only = NULL;
	size_t max_bytes = SIZE_MAX;
	double min_us = 30e3;
	struct result r;
	FILE *jf = NULL;
	bool first = true, failed = false;
	unsigned i;
	char *end;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 1; i < (unsigned)argc; i++) {
		if (strcmp(argv[i], "--json") == 0 && i + 1 < (unsigned)argc) {
			json = argv[++i];
		} else if (strcmp(argv[i], "--max-bytes") == 0 && i + 1 < (unsigned)argc) {
			max_bytes = strtoull(argv[++i], &end, 10);
			if (*end != '\0' || max_bytes < 64)
				return usage();
		} else if (strcmp(argv[i], "--min-ms") == 0 && i + 1 < (unsigned)argc) {
			min_us = strtod(argv[++i], &end) * 1e3;
			if (*end != '\0' || min_us < 0)
				return usage();
		} else if (strcmp(argv[i], "--only") == 0 && i + 1 < (unsigned)argc) {
			only = argv[++i];
		} else {
			return usage();
		}
	}
	if (sm_mem_thread_init() < 0)
		return 1;
	op = sm_calloc(1, sizeof(*op));
	if (op == NULL)
		return 1;
	if (sm_type_parse("frozen<set<blob>>", &set_blob, err, sizeof(err)) != 0 ||
	    sm_type_parse("frozen<set<decimal>>", &set_dec, err, sizeof(err)) != 0)
		return 1;
	sm_json_doc_init(&jdoc);
	sm_json_doc_init(&names_doc);
	sm_json_doc_init(&values_doc);
	if (json != NULL && (jf = fopen(json, "w")) == NULL) {
		fprintf(stderr, "adversarial: cannot write %s\n", json);
		return 1;
	}
	printf("adversarial: the worst input of each class at its limit L and at L/64, L/16, L/4;\n"
	       "us/KB at each size (flat: linear), the time at the largest, and the worst of the\n"
	       "sizes from 4 KB up as ms per 100 KB, against the target of 10 ms per 100 KB\n");
	printf("%-10s %-38s %8s %9s %9s %9s %9s %9s %9s %8s\n", "component", "input", "limit",
	       "L/64", "L/16", "L/4", "L", "bytes", "ms", "ms/100KB");
	if (jf != NULL)
		fprintf(jf, "{\"benchmark\": \"adversarial\", \"target_ms_per_100kb\": 10, "
			    "\"classes\": [");
	for (i = 0; i < SM_ARRAY_SIZE(classes); i++) {
		const struct cls *c = &classes[i];

		if (only != NULL && strstr(c->component, only) == NULL &&
		    strstr(c->input, only) == NULL)
			continue;
		measure(c, max_bytes, min_us, &r);
		print_row(c, &r);
		failed |= r.failed;
		if (jf != NULL)
			json_row(jf, c, &r, first);
		first = false;
	}
	sm_json_doc_release(&jdoc);
	sm_json_doc_release(&names_doc);
	sm_json_doc_release(&values_doc);
	free(names_json.p);
	free(values_json.p);
	free(eq_other.p);
	free(name_pool.p);
	sm_free(op);
	sm_type_free(set_blob);
	sm_type_free(set_dec);
	alt_value_shard_fini();
	sm_mem_thread_fini();

	/* whole requests: the runtime makes this thread shard 0 */
	if (run_requests(only, max_bytes, min_us)) {
		failed |= rb.failed;
		for (i = 0; i < SM_ARRAY_SIZE(req_classes); i++) {
			const struct req_cls *q = &req_classes[i];
			const struct cls c = { q->component,  q->input, q->limit,
					       q->limit_what, NULL,	NULL };

			if (!rb.selected[i])
				continue;
			print_row(&c, &rb.r[i]);
			failed |= rb.r[i].failed;
			if (jf != NULL)
				json_row(jf, &c, &rb.r[i], first);
			first = false;
		}
	}
	if (jf != NULL) {
		fprintf(jf, "\n]}\n");
		fclose(jf);
	}
	return failed ? 1 : 0;
}
