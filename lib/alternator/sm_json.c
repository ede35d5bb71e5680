/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sm_json.h"
#include "sm_mem.h"

/*
 * Tokenizing is Debian's jsmn (libjsmn-dev 1.1.0, header-only, MIT): no
 * allocation, tokens written into our array, and a parse that ran out of
 * tokens resumes where it stopped once the array has grown. Options:
 *   JSMN_STATIC        the implementation is private to this file, so no
 *                      other file needs to agree on the options below;
 *   JSMN_STRICT        only JSON's primitives, no primitive keys;
 *   JSMN_PARENT_LINKS  a closing bracket walks up parents (O(depth)); without
 *                      it jsmn scans back over every earlier token, which is
 *                      quadratic on an array of many objects.
 *
 * What jsmn does not do, and validate() below does in one pass over the
 * tokens: strict mode still accepts "[1 2]", "[1,]", "{\"a\"}", "{} {}" and
 * "[1,,2]" (it ignores separators), raw control characters and invalid UTF-8
 * in strings, lone surrogate escapes, and any primitive made of
 * [-0-9a-z...]; it has no depth limit; and it gives no position or reason.
 * Its tokens do carry exact offsets, so checking the bytes between
 * consecutive tokens, each token's contents and the tree shape is enough for
 * the full RFC 8259 grammar. The same pass links siblings, which makes
 * navigation skip nested values in O(1).
 */
#define JSMN_STATIC
#define JSMN_STRICT
#define JSMN_PARENT_LINKS
#include <jsmn.h>

/*
 * A token is jsmn's; validate() gives its fields new meanings so the
 * document needs one array, not two:
 *   type    enum sm_json_type (stored in jsmn's enum field)
 *   start   the first byte: '{', '[', the primitive's first byte, or for a
 *           string the byte after its opening quote
 *   end     one past the last byte; for a string, its closing quote
 *   size    members (object) or elements (array); for a string the
 *           TOK_ESCAPED and TOK_KEY bits
 *   parent  the next sibling, or -1 (see sm_json_next())
 */
struct sm_json_tok {
	jsmntok_t j;
};

#define TOK_ESCAPED 0x1
#define TOK_KEY 0x2

/*
 * Look-up tables of one parse: for each large container a run of token
 * indices in ent[] (an object's keys in key_order(), an array's elements in
 * order), found through at[container] = 1 + the run's start. at[] is
 * cleared on the first use after a parse, so a parse that looks nothing up
 * in a large container pays nothing.
 */
struct sm_json_index {
	uint32_t *at;
	uint32_t capat;
	uint32_t *ent;
	size_t nent, capent;
	bool live; /* at[0..ntok) belongs to the current parse */
};

#define tok_type(t) ((enum sm_json_type)(t)->type)
#define set_tok_type(t, v) ((t)->type = (jsmntype_t)(v))

static int
fail(struct sm_json_doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int
fail(struct sm_json_doc *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->err, sizeof(d->err), fmt, ap);
	va_end(ap);
	d->ntok = 0;
	return -EINVAL;
}

/* Jackson's wording for a byte that does not belong where it is. */
static int
fail_char(struct sm_json_doc *d, size_t off, const char *why)
{
	unsigned c;

	if (off >= d->len)
		return fail(d, "Unexpected end-of-input: %s", why);
	c = (unsigned char)d->text[off];
	if (c >= 0x20 && c < 0x7f)
		return fail(d, "Unexpected character ('%c' (code %u)): %s at %zu", (int)c, c,
			    why, off);
	return fail(d, "Unexpected character (code 0x%02x): %s at %zu", c, why, off);
}

static inline bool
is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static size_t
skip_ws(const char *s, size_t i, size_t end)
{
	while (i < end && is_ws(s[i]))
		i++;
	return i;
}

/*
 * The length of the valid UTF-8 sequence at @s (at most @n bytes), or 0.
 * Strict, as RFC 3629's table: no overlongs, no surrogates, nothing past
 * U+10FFFF.
 */
static size_t
utf8_seq(const unsigned char *s, size_t n)
{
	unsigned c = s[0], lo = 0x80, hi = 0xbf;

	if (c < 0x80)
		return 1;
	if (c < 0xc2 || c > 0xf4)
		return 0;
	if (c < 0xe0)
		return n >= 2 && (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c < 0xf0) {
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
		if (n < 3 || s[1] < lo || s[1] > hi || (s[2] & 0xc0) != 0x80)
			return 0;
		return 3;
	}
	if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (n < 4 || s[1] < lo || s[1] > hi || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
		return 0;
	return 4;
}

static int
hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The four hex digits at s[i..i+4) (before @end) into *@cp; false when there are not four. */
static bool
hex4(const unsigned char *s, size_t i, size_t end, uint32_t *cp)
{
	uint32_t v = 0;
	int h, k;

	if (i > end || end - i < 4)
		return false;
	for (k = 0; k < 4; k++) {
		h = hexval(s[i + k]);
		if (h < 0)
			return false;
		v = v << 4 | (uint32_t)h;
	}
	*cp = v;
	return true;
}

static size_t
utf8_put(char *out, uint32_t cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/*
 * Check a string's contents from @i up to @end, or with @to_quote up to its
 * first unescaped '"' (for diagnosing a string jsmn refused). Sets *@escaped
 * when it has escapes.
 */
static int
check_string(struct sm_json_doc *d, size_t i, size_t end, bool to_quote, bool *escaped)
{
	const unsigned char *s = (const unsigned char *)d->text;
	uint32_t cp, lo;
	size_t m;
	unsigned c;

	*escaped = false;
	while (i < end) {
		c = s[i];
		if (c >= 0x20 && c < 0x80 && c != '\\' && c != '"') {
			i++;
			continue;
		}
		if (c == '"') {
			if (to_quote)
				return 0;
			return fail(d, "Unexpected '\"' inside a string at %zu", i);
		}
		if (c < 0x20)
			return fail(d,
				    "Illegal unquoted character ((CTRL-CHAR, code %u)): has to be "
				    "escaped using backslash to be included in string value at "
				    "offset %zu",
				    c, i);
		if (c >= 0x80) {
			m = utf8_seq(s + i, end - i);
			if (m == 0)
				return fail(d, "Invalid UTF-8 %s byte 0x%02x at %zu",
					    c < 0xc2 || c > 0xf4 ? "start" : "middle", c, i);
			i += m;
			continue;
		}
		/* A backslash. */
		*escaped = true;
		if (i + 1 >= end)
			return fail(d, "Unexpected end-of-input in character escape sequence");
		switch (s[i + 1]) {
		case '"':
		case '\\':
		case '/':
		case 'b':
		case 'f':
		case 'n':
		case 'r':
		case 't':
			i += 2;
			break;
		case 'u':
			if (!hex4(s, i + 2, end, &cp))
				return fail(
					d,
					"Unexpected character in \\u escape: expected 4 hex-digits "
					"for character escape sequence at %zu",
					i);
			if (cp >= 0xdc00 && cp <= 0xdfff)
				return fail(d, "Unpaired low surrogate \\u%04x at %zu", cp,
					    i);
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (end - i < 12 || s[i + 6] != '\\' || s[i + 7] != 'u' ||
				    !hex4(s, i + 8, end, &lo) || lo < 0xdc00 || lo > 0xdfff)
					return fail(
						d,
						"Unpaired high surrogate \\u%04x (expected a low "
						"surrogate \\udc00-\\udfff to follow) at "
						"%zu",
						cp, i);
				i += 12;
			} else {
				i += 6;
			}
			break;
		default:
			c = s[i + 1];
			if (c >= 0x20 && c < 0x7f)
				return fail(d,
					    "Unrecognized character escape '%c' (code %u) at "
					    "offset %zu",
					    (int)c, c, i);
			return fail(d, "Unrecognized character escape (code 0x%02x) at %zu",
				    c, i);
		}
	}
	if (to_quote)
		return fail(d, "Unexpected end-of-input in a string value");
	return 0;
}

/*
 * Decode one character of a validated string at s[*i]: a raw byte is copied
 * as is (UTF-8 sequences byte by byte), an escape becomes its UTF-8.
 */
static size_t
decode_one(const char *s, size_t *i, char out[4])
{
	const unsigned char *u = (const unsigned char *)s;
	uint32_t cp = 0, lo = 0;
	size_t k = *i;

	if (s[k] != '\\') {
		out[0] = s[k];
		*i = k + 1;
		return 1;
	}
	*i = k + 2;
	switch (s[k + 1]) {
	case 'b':
		out[0] = '\b';
		return 1;
	case 'f':
		out[0] = '\f';
		return 1;
	case 'n':
		out[0] = '\n';
		return 1;
	case 'r':
		out[0] = '\r';
		return 1;
	case 't':
		out[0] = '\t';
		return 1;
	case 'u':
		hex4(u, k + 2, k + 6, &cp);
		*i = k + 6;
		if (cp >= 0xd800 && cp <= 0xdbff) {
			hex4(u, k + 8, k + 12, &lo);
			cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			*i = k + 12;
		}
		return utf8_put(out, cp);
	default: /* '"', '\\', '/' */
		out[0] = s[k + 1];
		return 1;
	}
}

/* RFC 8259: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?; *@integer when neither part follows. */
static bool
number_ok(const char *s, size_t n, bool *integer)
{
	size_t i = 0, k;

	*integer = true;
	if (i < n && s[i] == '-')
		i++;
	if (i >= n)
		return false;
	if (s[i] == '0') {
		i++;
	} else if (s[i] >= '1' && s[i] <= '9') {
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
	} else {
		return false;
	}
	if (i < n && s[i] == '.') {
		*integer = false;
		k = ++i;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
		if (i == k)
			return false;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		*integer = false;
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		k = i;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
		if (i == k)
			return false;
	}
	return i == n;
}

static int
check_primitive(struct sm_json_doc *d, jsmntok_t *t)
{
	const char *s = d->text + t->start;
	size_t n = (size_t)(t->end - t->start);
	bool integer;

	if (n == 4 && memcmp(s, "true", 4) == 0)
		set_tok_type(t, SM_JSON_TRUE);
	else if (n == 5 && memcmp(s, "false", 5) == 0)
		set_tok_type(t, SM_JSON_FALSE);
	else if (n == 4 && memcmp(s, "null", 4) == 0)
		set_tok_type(t, SM_JSON_NULL);
	else if (number_ok(s, n, &integer))
		set_tok_type(t, SM_JSON_NUMBER);
	else
		return fail(
			d,
			"Unrecognized token '%.*s%s': was expecting (JSON String, Number, Array, "
			"Object or token 'null', 'true' or 'false') at %d",
			n > 32 ? 32 : (int)n, s, n > 32 ? "..." : "", t->start);
	t->size = 0;
	return 0;
}

/* Only whitespace in text[from, to), or whitespace, @sep, whitespace when @sep is not 0. */
static int
check_gap(struct sm_json_doc *d, size_t from, size_t to, char sep, const char *why)
{
	size_t p;

	if (to < from)
		return fail(d, "Malformed JSON at %zu", to);
	p = skip_ws(d->text, from, to);
	if (sep != 0) {
		if (p == to || d->text[p] != sep)
			return fail_char(d, p, why);
		p = skip_ws(d->text, p + 1, to);
	}
	if (p != to)
		return fail_char(d, p, why);
	return 0;
}

/* Compare two string tokens unescaped (the key policy of SM_JSON_REJECT_DUP_KEYS). */
struct dstream {
	const char *s;
	size_t i, end, n, k;
	char buf[4];
};

static int
ds_next(struct dstream *ds)
{
	if (ds->k == ds->n) {
		if (ds->i >= ds->end)
			return -1;
		ds->n = decode_one(ds->s, &ds->i, ds->buf);
		ds->k = 0;
	}
	return (unsigned char)ds->buf[ds->k++];
}

/* Two string tokens' unescaped bytes in order: <0, 0 or >0, as memcmp() and then length. */
static int
tok_str_cmp(const char *text, const jsmntok_t *a, const jsmntok_t *b)
{
	struct dstream x = { .s = text, .i = (size_t)a->start, .end = (size_t)a->end };
	struct dstream y = { .s = text, .i = (size_t)b->start, .end = (size_t)b->end };
	size_t na = (size_t)(a->end - a->start), nb = (size_t)(b->end - b->start);
	int c, e;

	if (!(a->size & TOK_ESCAPED) && !(b->size & TOK_ESCAPED)) {
		c = memcmp(text + a->start, text + b->start, na < nb ? na : nb);
		return c ? c : (na > nb) - (na < nb);
	}
	do {
		c = ds_next(&x);
		e = ds_next(&y);
		if (c != e)
			return c < e ? -1 : 1; /* the end (-1) sorts first */
	} while (c >= 0);
	return 0;
}

static bool
tok_str_eq(const char *text, const jsmntok_t *a, const jsmntok_t *b)
{
	if (!(a->size & TOK_ESCAPED) && !(b->size & TOK_ESCAPED) &&
	    a->end - a->start != b->end - b->start)
		return false;
	return tok_str_cmp(text, a, b) == 0;
}

/* Key tokens by unescaped text, then position (qsort_r() with the document's tokens). */
static int
key_order(const void *x, const void *y, void *arg)
{
	const struct sm_json_doc *d = arg;
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	int c = tok_str_cmp(d->text, &d->tok[a].j, &d->tok[b].j);

	return c ? c : (a > b) - (a < b);
}

/* The @n keys of object @obj, in @keys, sorted by key_order(). */
static void
sorted_keys(const struct sm_json_doc *d, int obj, uint32_t n, uint32_t *keys)
{
	uint32_t i = 0;
	int k;

	for (k = obj + 1; k >= 0 && i < n; k = d->tok[k].j.parent)
		keys[i++] = (uint32_t)k;
	qsort_r(keys, i, sizeof(*keys), key_order, (void *)(uintptr_t)d);
}

/*
 * The duplicate that the pairwise search reports: of the keys written again
 * the first, and its first repeat. Sorted, not pairwise: thousands of keys
 * are cheap to send.
 */
static int
check_dup_keys(struct sm_json_doc *d, jsmntok_t *t, int obj, uint32_t n)
{
	uint32_t *keys, i, first = UINT32_MAX, repeat = 0, run = 0;
	int a, b;

	if (n <= 8) {
		for (a = obj + 1; a >= 0; a = t[a].parent)
			for (b = t[a].parent; b >= 0; b = t[b].parent)
				if (tok_str_eq(d->text, &t[a], &t[b]))
					goto dup;
		return 0;
	}
	keys = sm_malloc((size_t)n * sizeof(*keys));
	if (keys == NULL) {
		snprintf(d->err, sizeof(d->err), "Out of memory checking an object of %u keys", n);
		return -ENOMEM;
	}
	sorted_keys(d, obj, n, keys);
	for (i = 1; i < n; i++) {
		if (tok_str_cmp(d->text, &t[keys[i - 1]], &t[keys[i]]) != 0) {
			run = i;
			continue;
		}
		/* keys[run] is where this key first appears, keys[run + 1] its first repeat */
		if (i == run + 1 && keys[run] < first) {
			first = keys[run];
			repeat = keys[i];
		}
	}
	sm_free(keys);
	if (first == UINT32_MAX)
		return 0;
	b = (int)repeat;
dup:
	return fail(d, "Duplicate field '%.*s' at %d",
		    t[b].end - t[b].start > 64 ? 64 : t[b].end - t[b].start, d->text + t[b].start,
		    t[b].start - 1);
}

/* An open array or object during validate(). */
struct frame {
	int tok;
	int last;    /* the previous child, or -1 */
	int lastkey; /* object: the previous member's key, or -1 */
	uint32_t n;  /* children so far (an object counts keys and values) */
	size_t pos;  /* where the gap before the next child starts */
};

static int
close_frame(struct sm_json_doc *d, jsmntok_t *t, struct frame *f, unsigned flags)
{
	jsmntok_t *c = &t[f->tok];
	size_t close = (size_t)c->end - 1, p;
	bool obj = tok_type(c) == SM_JSON_OBJECT;

	p = skip_ws(d->text, f->pos, close);
	if (obj && (f->n & 1)) {
		if (p < close && d->text[p] == ':')
			return fail_char(d, close, "expected a value");
		return fail_char(d, p, "was expecting a colon to separate field name and value");
	}
	if (p < close) {
		if (d->text[p] == ',' && f->n > 0 && skip_ws(d->text, p + 1, close) == close)
			return fail_char(d, close,
					 obj ? "was expecting double-quote to start field name"
					     : "expected a value");
		return fail_char(d, p,
				 obj ? "was expecting comma to separate OBJECT entries"
				     : "was expecting comma to separate ARRAY entries");
	}
	c->size = (int)(obj ? f->n / 2 : f->n);
	if (obj && (flags & SM_JSON_REJECT_DUP_KEYS) && c->size > 1)
		return check_dup_keys(d, t, f->tok, (uint32_t)c->size);
	return 0;
}

/* Check @n tokens as described at the top of this file and give their fields our meanings. */
static int
validate(struct sm_json_doc *d, uint32_t n, unsigned flags)
{
	jsmntok_t *t = &d->tok[0].j;
	struct frame st[SM_JSON_MAX_DEPTH], *f;
	size_t from, to, root_end = 0;
	bool obj, escaped;
	jsmntype_t jt;
	int depth = 0, rc;
	uint32_t i;

	for (i = 0; i < n; i++) {
		jsmntok_t *k = &t[i];

		jt = k->type;
		if (k->start < 0 || k->end < k->start)
			return fail(d, "Malformed JSON at %zu", (size_t)d->len);
		from = jt == JSMN_STRING ? (size_t)k->start - 1 : (size_t)k->start;
		to = jt == JSMN_STRING ? (size_t)k->end + 1 : (size_t)k->end;
		if (i == 0) {
			rc = check_gap(d, 0, from, 0, "expected a value");
			if (rc != 0)
				return rc;
		}
		/* Close the containers this token is past. */
		while (depth > 0 && (size_t)k->start >= (size_t)t[st[depth - 1].tok].end) {
			rc = close_frame(d, t, &st[depth - 1], flags);
			if (rc != 0)
				return rc;
			depth--;
			if (depth > 0)
				st[depth - 1].pos = (size_t)t[st[depth].tok].end;
		}
		if (i > 0 && depth == 0)
			return fail_char(d, from, "expected end-of-input after the JSON value");
		if (depth > 0) {
			f = &st[depth - 1];
			obj = tok_type(&t[f->tok]) == SM_JSON_OBJECT;
			if (f->n == 0)
				rc = check_gap(
					d, f->pos, from, 0,
					obj ? "was expecting double-quote to start field name"
					    : "expected a value");
			else if (obj && (f->n & 1))
				rc = check_gap(
					d, f->pos, from, ':',
					"was expecting a colon to separate field name and value");
			else
				rc = check_gap(
					d, f->pos, from, ',',
					obj ? "was expecting comma to separate OBJECT entries"
					    : "was expecting comma to separate ARRAY entries");
			if (rc != 0)
				return rc;
			if (obj && !(f->n & 1)) {
				if (jt != JSMN_STRING)
					return fail_char(
						d, from,
						"was expecting double-quote to start field name");
				if (f->lastkey >= 0) {
					t[f->lastkey].parent = (int)i;
					t[f->last].parent = (int)i;
				}
				f->lastkey = (int)i;
			} else if (!obj && f->last >= 0) {
				t[f->last].parent = (int)i;
			}
			f->last = (int)i;
			f->n++;
		}
		k->parent = -1;
		switch (jt) {
		case JSMN_OBJECT:
		case JSMN_ARRAY:
			if (depth == SM_JSON_MAX_DEPTH)
				return fail(d,
					    "Max nested level reached: %d at %zu: "
					    "arrays and objects nest too deeply",
					    SM_JSON_MAX_DEPTH, from);
			set_tok_type(k, jt == JSMN_OBJECT ? SM_JSON_OBJECT : SM_JSON_ARRAY);
			st[depth] = (struct frame){
				.tok = (int)i, .last = -1, .lastkey = -1, .n = 0, .pos = from + 1
			};
			depth++;
			continue;
		case JSMN_STRING:
			rc = check_string(d, (size_t)k->start, (size_t)k->end, false, &escaped);
			if (rc != 0)
				return rc;
			k->size = escaped ? TOK_ESCAPED : 0;
			if (depth > 0 && tok_type(&t[st[depth - 1].tok]) == SM_JSON_OBJECT &&
			    (st[depth - 1].n & 1))
				k->size |= TOK_KEY;
			set_tok_type(k, SM_JSON_STRING);
			break;
		case JSMN_PRIMITIVE:
			rc = check_primitive(d, k);
			if (rc != 0)
				return rc;
			break;
		default:
			return fail(d, "Malformed JSON at %zu", from);
		}
		if (depth > 0)
			st[depth - 1].pos = to;
		else
			root_end = to;
	}
	while (depth > 0) {
		rc = close_frame(d, t, &st[depth - 1], flags);
		if (rc != 0)
			return rc;
		depth--;
		if (depth > 0)
			st[depth - 1].pos = (size_t)t[st[depth].tok].end;
		else
			root_end = (size_t)t[0].end;
	}
	return check_gap(d, root_end, d->len, 0, "expected end-of-input after the JSON value");
}

/* Turn a jsmn failure into a message with a position and a reason. */
static int
jsmn_fail(struct sm_json_doc *d, const jsmn_parser *p, int r, int ntok)
{
	const jsmntok_t *t = &d->tok[0].j;
	const char *nul = memchr(d->text, '\0', d->len);
	size_t pos = p->pos, k;
	bool escaped;
	char c;
	int i;

	/* jsmn stops at a NUL byte as at the end of the input. */
	if (nul != NULL)
		return fail(d, "Illegal character ((CTRL-CHAR, code 0)) at %zu",
			    (size_t)(nul - d->text));
	if (r == JSMN_ERROR_PART) {
		if (pos < d->len && d->text[pos] == '"') {
			if (check_string(d, pos + 1, d->len, true, &escaped) != 0)
				return -EINVAL;
			return fail(d, "Unexpected end-of-input in a string value");
		}
		for (i = ntok - 1; i >= 0; i--)
			if (t[i].start != -1 && t[i].end == -1)
				return fail(d,
					    "Unexpected end-of-input: expected close marker for %s",
					    t[i].type == JSMN_OBJECT ? "OBJECT" : "ARRAY");
		return fail(d, "Unexpected end-of-input");
	}
	if (pos >= d->len)
		return fail(d, "Unexpected end-of-input");
	c = d->text[pos];
	if (c == '}' || c == ']')
		return fail(d, "Unexpected close marker '%c' at %zu", c, pos);
	if (ntok > 0 && t[0].end != -1 &&
	    pos >= (size_t)t[0].end + (t[0].type == JSMN_STRING ? 1 : 0))
		return fail_char(d, pos, "expected end-of-input after the JSON value");
	if (c == '"') {
		/* jsmn rewinds to the opening quote of a string with a bad escape. */
		if (check_string(d, pos + 1, d->len, true, &escaped) != 0)
			return -EINVAL;
		return fail_char(d, pos, "was expecting comma or a close marker");
	}
	if (c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' || c == 'n') {
		/* A byte jsmn refuses in a primitive? */
		for (k = pos; k < d->len && !is_ws(d->text[k]) && !strchr(",]}", d->text[k]); k++)
			if ((unsigned char)d->text[k] < 0x20 || (unsigned char)d->text[k] >= 0x7f)
				return fail_char(d, k, "not valid in a JSON literal or number");
	}
	if (c == '{' || c == '[' || c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' ||
	    c == 'n') {
		/* A value where a key is due, or a second value after a key's value. */
		if (p->toksuper >= 0 && t[p->toksuper].type == JSMN_OBJECT)
			return fail_char(d, pos, "was expecting double-quote to start field name");
		return fail_char(d, pos, "was expecting comma to separate OBJECT entries");
	}
	if (p->toksuper >= 0 && t[p->toksuper].type == JSMN_OBJECT)
		return fail_char(d, pos, "was expecting double-quote to start field name");
	return fail_char(d, pos,
			 "expected a valid value (JSON String, Number, Array, Object or "
			 "token 'null', 'true' or 'false')");
}

/* Room for more tokens: double, but never past @len (each token owns at least one byte). */
static int
grow(struct sm_json_doc *d, size_t len)
{
	size_t cap = d->cap > 0 ? (size_t)d->cap * 2 : 64;
	struct sm_json_tok *t;

	if (cap > len + 1)
		cap = len + 1;
	if (cap <= d->cap)
		cap = (size_t)d->cap + 1;
	if (cap > UINT32_MAX / 2)
		return -ENOMEM;
	t = sm_realloc(d->tok, cap * sizeof(*t));
	if (t == NULL)
		return -ENOMEM;
	d->tok = t;
	d->cap = (uint32_t)cap;
	return 0;
}

void
sm_json_doc_init(struct sm_json_doc *d)
{
	memset(d, 0, sizeof(*d));
}

void
sm_json_doc_release(struct sm_json_doc *d)
{
	if (d->index != NULL) {
		sm_free(d->index->at);
		sm_free(d->index->ent);
		sm_free(d->index);
	}
	sm_free(d->tok);
	sm_json_doc_init(d);
}

/* The offset where nesting first passes SM_JSON_MAX_DEPTH, or -1. Linear. */
static int
depth_prescan(const char *text, size_t len)
{
	bool in_str = false, esc = false;
	unsigned depth = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		char c = text[i];

		if (in_str) {
			if (esc)
				esc = false;
			else if (c == '\\')
				esc = true;
			else if (c == '"')
				in_str = false;
			continue;
		}
		if (c == '"') {
			in_str = true;
		} else if (c == '{' || c == '[') {
			if (++depth > SM_JSON_MAX_DEPTH)
				return (int)i;
		} else if ((c == '}' || c == ']') && depth > 0) {
			depth--;
		}
	}
	return -1;
}

int
sm_json_parse(struct sm_json_doc *d, const char *text, size_t len, unsigned flags)
{
	jsmn_parser p;
	size_t start, k;
	jsmntok_t *t;
	int r, rc;
	char c;

	d->text = text;
	d->len = len;
	d->ntok = 0;
	d->flags = flags;
	d->err[0] = '\0';
	if (d->index != NULL)
		d->index->live = false;
	if (len >= (size_t)INT_MAX)
		return fail(d, "Request body of %zu bytes is too large to parse", len);
	start = skip_ws(text, 0, len);
	if (start == len)
		return fail(d, "No content to map due to end-of-input");
	/*
	 * Bound the nesting before jsmn sees the text: its close-bracket search
	 * makes deep documents quadratic (200,000 levels took minutes), and
	 * nothing deeper than SM_JSON_MAX_DEPTH is valid anyway.
	 */
	rc = depth_prescan(text, len);
	if (rc >= 0)
		return fail(d, "Max nested level reached: %d at %d",
			    SM_JSON_MAX_DEPTH, rc);
	if (d->cap == 0) {
		rc = grow(d, len);
		if (rc != 0)
			goto nomem;
	}
	c = text[start];
	if (c != '{' && c != '[' && c != '"') {
		/*
		 * A scalar root: jsmn's strict mode wants a delimiter after a
		 * primitive and reports one at the end of input as truncated.
		 */
		if (c == '}' || c == ']')
			return fail(d, "Unexpected close marker '%c' at %zu", c, start);
		for (k = start; k < len && !is_ws(text[k]); k++)
			;
		t = &d->tok[0].j;
		t->type = JSMN_PRIMITIVE;
		t->start = (int)start;
		t->end = (int)k;
		t->size = 0;
		t->parent = -1;
		r = 1;
	} else {
		jsmn_init(&p);
		for (;;) {
			r = jsmn_parse(&p, text, len, &d->tok[0].j, d->cap);
			if (r != JSMN_ERROR_NOMEM)
				break;
			rc = grow(d, len);
			if (rc != 0)
				goto nomem;
		}
		if (r < 0)
			return jsmn_fail(d, &p, r, (int)p.toknext);
		if (r == 0)
			return fail(d, "No content to map due to end-of-input");
	}
	rc = validate(d, (uint32_t)r, flags);
	if (rc != 0)
		return rc;
	d->ntok = (uint32_t)r;
	return 0;
nomem:
	snprintf(d->err, sizeof(d->err), "Out of memory parsing a JSON body of %zu bytes", len);
	return -ENOMEM;
}

/* ---------------------------------------------------------------------- */
/* Navigation                                                              */

static inline const jsmntok_t *
tok_at(const struct sm_json_doc *d, int i)
{
	if (i < 0 || (uint32_t)i >= d->ntok)
		return NULL;
	return &d->tok[i].j;
}

int
sm_json_root(const struct sm_json_doc *d)
{
	return d->ntok > 0 ? 0 : -1;
}

enum sm_json_type
sm_json_type(const struct sm_json_doc *d, int tok)
{
	const jsmntok_t *t = tok_at(d, tok);

	return t != NULL ? tok_type(t) : SM_JSON_NONE;
}

const char *
sm_json_type_name(enum sm_json_type t)
{
	switch (t) {
	case SM_JSON_OBJECT:
		return "object";
	case SM_JSON_ARRAY:
		return "array";
	case SM_JSON_STRING:
		return "string";
	case SM_JSON_NUMBER:
		return "number";
	case SM_JSON_TRUE:
	case SM_JSON_FALSE:
		return "boolean";
	case SM_JSON_NULL:
		return "null";
	default:
		return "none";
	}
}

static inline bool
is_container(const jsmntok_t *t)
{
	return t != NULL && (tok_type(t) == SM_JSON_OBJECT || tok_type(t) == SM_JSON_ARRAY);
}

uint32_t
sm_json_count(const struct sm_json_doc *d, int tok)
{
	const jsmntok_t *t = tok_at(d, tok);

	return is_container(t) ? (uint32_t)t->size : 0;
}

static bool
str_eqn(const struct sm_json_doc *d, const jsmntok_t *t, const char *s, size_t n)
{
	size_t i = (size_t)t->start, end = (size_t)t->end, j = 0, m;
	char buf[4];

	if (!(t->size & TOK_ESCAPED))
		return end - i == n && memcmp(d->text + i, s, n) == 0;
	/* Escapes only shrink the text. */
	if (n > end - i)
		return false;
	while (i < end) {
		m = decode_one(d->text, &i, buf);
		if (m > n - j || memcmp(buf, s + j, m) != 0)
			return false;
		j += m;
	}
	return j == n;
}

/*
 * The table of container @tok (@n members or elements), built on first use;
 * NULL when memory is short (the caller scans instead). The document is
 * const to its readers, its cache is not.
 */
static const uint32_t *
index_of(const struct sm_json_doc *cd, int tok, uint32_t n)
{
	struct sm_json_doc *d = (struct sm_json_doc *)(uintptr_t)cd;
	struct sm_json_index *ix = d->index;
	size_t cap;
	uint32_t *p, i;
	int k;

	if (ix == NULL) {
		ix = sm_calloc(1, sizeof(*ix));
		if (ix == NULL)
			return NULL;
		d->index = ix;
	}
	if (!ix->live) {
		if (ix->capat < d->ntok) {
			p = sm_realloc(ix->at, (size_t)d->ntok * sizeof(*p));
			if (p == NULL)
				return NULL;
			ix->at = p;
			ix->capat = d->ntok;
		}
		memset(ix->at, 0, (size_t)d->ntok * sizeof(*ix->at));
		ix->nent = 0;
		ix->live = true;
	}
	if (ix->at[tok] != 0)
		return ix->ent + ix->at[tok] - 1;
	if (ix->capent - ix->nent < n) {
		/* at most one entry per token over all tables */
		cap = ix->capent ? ix->capent : 256;
		while (cap - ix->nent < n)
			cap *= 2;
		p = sm_realloc(ix->ent, cap * sizeof(*p));
		if (p == NULL)
			return NULL;
		ix->ent = p;
		ix->capent = cap;
	}
	p = ix->ent + ix->nent;
	if (tok_type(&d->tok[tok].j) == SM_JSON_OBJECT) {
		sorted_keys(d, tok, n, p);
	} else {
		for (k = tok + 1, i = 0; k >= 0 && i < n; k = d->tok[k].j.parent)
			p[i++] = (uint32_t)k;
	}
	ix->at[tok] = (uint32_t)ix->nent + 1;
	ix->nent += n;
	return p;
}

/* Token @t's unescaped bytes against @n bytes at @s, as tok_str_cmp(). */
static int
key_cmp(const struct sm_json_doc *d, const jsmntok_t *t, const char *s, size_t n)
{
	struct dstream x = { .s = d->text, .i = (size_t)t->start, .end = (size_t)t->end };
	size_t nt = (size_t)(t->end - t->start), j;
	int c;

	if (!(t->size & TOK_ESCAPED)) {
		c = memcmp(d->text + t->start, s, nt < n ? nt : n);
		return c ? c : (nt > n) - (nt < n);
	}
	for (j = 0;; j++) {
		c = ds_next(&x);
		if (c < 0)
			return j < n ? -1 : 0;
		if (j == n)
			return 1;
		if (c != (unsigned char)s[j])
			return c < (unsigned char)s[j] ? -1 : 1;
	}
}

/* The value of the last key equal to @key among @n sorted @keys, or -1. */
static int
index_find(const struct sm_json_doc *d, const uint32_t *keys, uint32_t n, const char *key,
	   size_t keylen)
{
	uint32_t lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (key_cmp(d, &d->tok[keys[mid]].j, key, keylen) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0 && key_cmp(d, &d->tok[keys[lo - 1]].j, key, keylen) == 0)
		return (int)keys[lo - 1] + 1;
	return -1;
}

int
sm_json_getn(const struct sm_json_doc *d, int obj, const char *key, size_t keylen)
{
	const jsmntok_t *o = tok_at(d, obj);
	const uint32_t *keys;
	int k, found = -1;

	if (o == NULL || tok_type(o) != SM_JSON_OBJECT || o->size == 0)
		return -1;
	if (o->size >= SM_JSON_INDEX_MIN && (keys = index_of(d, obj, (uint32_t)o->size)) != NULL)
		return index_find(d, keys, (uint32_t)o->size, key, keylen);
	for (k = obj + 1; k >= 0; k = d->tok[k].j.parent) {
		const jsmntok_t *t = &d->tok[k].j;

		/* most keys differ in length: no call for them (a request's top level, mostly) */
		if (!(t->size & TOK_ESCAPED) && (size_t)(t->end - t->start) != keylen)
			continue;
		if (str_eqn(d, t, key, keylen)) {
			found = k + 1;
			/* Keys are unique when checked, else the last one wins. */
			if (d->flags & SM_JSON_REJECT_DUP_KEYS)
				break;
		}
	}
	return found;
}

void
sm_json_getv(const struct sm_json_doc *d, int obj, const struct sm_json_key *keys, unsigned n,
	     int *out)
{
	const jsmntok_t *o = tok_at(d, obj);
	unsigned i;
	int k;

	for (i = 0; i < n; i++)
		out[i] = -1;
	if (o == NULL || tok_type(o) != SM_JSON_OBJECT || o->size == 0)
		return;
	if (o->size >= SM_JSON_INDEX_MIN) {
		for (i = 0; i < n; i++)
			out[i] = sm_json_getn(d, obj, keys[i].s, keys[i].len);
		return;
	}
	for (k = obj + 1; k >= 0; k = d->tok[k].j.parent) {
		const jsmntok_t *t = &d->tok[k].j;
		size_t len = (size_t)(t->end - t->start);
		bool escaped = (t->size & TOK_ESCAPED) != 0;

		for (i = 0; i < n; i++) {
			if (!escaped && len != keys[i].len)
				continue;
			/* the last of a repeated key, as sm_json_getn() */
			if (str_eqn(d, t, keys[i].s, keys[i].len))
				out[i] = k + 1;
		}
	}
}

int
sm_json_get(const struct sm_json_doc *d, int obj, const char *key)
{
	return sm_json_getn(d, obj, key, strlen(key));
}

int
sm_json_first(const struct sm_json_doc *d, int tok)
{
	const jsmntok_t *t = tok_at(d, tok);

	return is_container(t) && t->size > 0 ? tok + 1 : -1;
}

int
sm_json_next(const struct sm_json_doc *d, int tok)
{
	const jsmntok_t *t = tok_at(d, tok);

	return t != NULL ? t->parent : -1;
}

int
sm_json_at(const struct sm_json_doc *d, int arr, uint32_t i)
{
	const jsmntok_t *a = tok_at(d, arr);
	const uint32_t *el;
	int k;

	if (a == NULL || tok_type(a) != SM_JSON_ARRAY || i >= (uint32_t)a->size)
		return -1;
	if (a->size >= SM_JSON_INDEX_MIN && (el = index_of(d, arr, (uint32_t)a->size)) != NULL)
		return (int)el[i];
	for (k = arr + 1; k >= 0 && i > 0; i--)
		k = d->tok[k].j.parent;
	return k;
}

int
sm_json_member_value(const struct sm_json_doc *d, int key_tok)
{
	const jsmntok_t *t = tok_at(d, key_tok);

	if (t == NULL || tok_type(t) != SM_JSON_STRING || !(t->size & TOK_KEY))
		return -1;
	return key_tok + 1;
}

struct sm_bytes
sm_json_span(const struct sm_json_doc *d, int tok)
{
	const jsmntok_t *t = tok_at(d, tok);
	struct sm_bytes b = { NULL, 0 };
	int s, e;

	if (t == NULL)
		return b;
	s = t->start;
	e = t->end;
	if (tok_type(t) == SM_JSON_STRING) {
		s--;
		e++;
	}
	b.p = (const uint8_t *)d->text + s;
	b.len = (uint32_t)(e - s);
	return b;
}

bool
sm_json_str_has_escapes(const struct sm_json_doc *d, int tok)
{
	const jsmntok_t *t = tok_at(d, tok);

	return t != NULL && tok_type(t) == SM_JSON_STRING && (t->size & TOK_ESCAPED);
}

int
sm_json_str(const struct sm_json_doc *d, int tok, char *buf, size_t cap, struct sm_bytes *out)
{
	const jsmntok_t *t = tok_at(d, tok);
	size_t i, end, j = 0;
	const char *bs;
	char tmp[4];
	size_t m;

	if (t == NULL || tok_type(t) != SM_JSON_STRING)
		return -EINVAL;
	i = (size_t)t->start;
	end = (size_t)t->end;
	if (!(t->size & TOK_ESCAPED)) {
		out->p = (const uint8_t *)d->text + i;
		out->len = (uint32_t)(end - i);
		return 0;
	}
	while (i < end) {
		/* Copy the run up to the next escape in one go. */
		bs = memchr(d->text + i, '\\', end - i);
		m = bs != NULL ? (size_t)(bs - (d->text + i)) : end - i;
		if (m > cap - j)
			return -ENOSPC;
		/* m is 0 when the string starts with an escape, and @buf may be NULL
		 * then (a caller probing with cap 0): memcpy(NULL, .., 0) is UB. */
		if (m > 0)
			memcpy(buf + j, d->text + i, m);
		j += m;
		i += m;
		if (i >= end)
			break;
		m = decode_one(d->text, &i, tmp);
		if (m > cap - j)
			return -ENOSPC;
		memcpy(buf + j, tmp, m);
		j += m;
	}
	out->p = (const uint8_t *)buf;
	out->len = (uint32_t)j;
	return 0;
}

bool
sm_json_str_eqn(const struct sm_json_doc *d, int tok, const char *s, size_t n)
{
	const jsmntok_t *t = tok_at(d, tok);

	return t != NULL && tok_type(t) == SM_JSON_STRING && str_eqn(d, t, s, n);
}

bool
sm_json_str_eq(const struct sm_json_doc *d, int tok, const char *s)
{
	return sm_json_str_eqn(d, tok, s, strlen(s));
}

int
sm_json_bool(const struct sm_json_doc *d, int tok, bool *out)
{
	enum sm_json_type ty = sm_json_type(d, tok);

	if (ty != SM_JSON_TRUE && ty != SM_JSON_FALSE)
		return -EINVAL;
	*out = ty == SM_JSON_TRUE;
	return 0;
}

int
sm_json_i64(const struct sm_json_doc *d, int tok, int64_t *out)
{
	const jsmntok_t *t = tok_at(d, tok);
	const char *s;
	size_t i = 0, n;
	bool neg = false, integer;
	uint64_t v = 0, lim, dig;

	if (t == NULL || tok_type(t) != SM_JSON_NUMBER)
		return -EINVAL;
	s = d->text + t->start;
	n = (size_t)(t->end - t->start);
	if (!number_ok(s, n, &integer) || !integer)
		return -EINVAL;
	if (s[0] == '-') {
		neg = true;
		i = 1;
	}
	lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; i < n; i++) {
		dig = (uint64_t)(s[i] - '0');
		if (v > (lim - dig) / 10)
			return -ERANGE;
		v = v * 10 + dig;
	}
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Writer                                                                  */

#define OUT_MIN_CAP 256

/* Room for @extra more bytes and the terminating NUL; false after a failure. */
static bool
out_reserve(struct sm_json_out *o, size_t extra)
{
	size_t want, cap;
	char *p;

	if (o->err != 0)
		return false;
	if (o->p != NULL && extra < o->cap - o->len)
		return true;
	if (extra > SIZE_MAX / 4 - o->len) {
		o->err = -ENOMEM;
		return false;
	}
	want = o->len + extra + 1;
	cap = o->cap > 0 ? o->cap : OUT_MIN_CAP;
	while (cap < want)
		cap *= 2;
	p = sm_realloc(o->p, cap);
	if (p == NULL) {
		o->err = -ENOMEM;
		return false;
	}
	o->p = p;
	o->cap = cap;
	return true;
}

static void
out_put(struct sm_json_out *o, const char *s, size_t n)
{
	if (n == 0 || !out_reserve(o, n))
		return; /* nothing to add; @s may be NULL then */
	memcpy(o->p + o->len, s, n);
	o->len += n;
	o->p[o->len] = '\0';
}

static void
out_ch(struct sm_json_out *o, char c)
{
	if (!out_reserve(o, 1))
		return;
	o->p[o->len++] = c;
	o->p[o->len] = '\0';
}

/* Before a key or a value: the comma that separates it from the previous one. */
static inline void
out_sep(struct sm_json_out *o)
{
	if (o->comma)
		out_ch(o, ',');
}

static void
out_escaped(struct sm_json_out *o, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, run, m;
	char esc[6];
	unsigned c;

	out_ch(o, '"');
	while (i < n) {
		run = i;
		while (i < n && u[i] >= 0x20 && u[i] < 0x80 && u[i] != '"' && u[i] != '\\')
			i++;
		if (i > run)
			out_put(o, s + run, i - run);
		if (i >= n)
			break;
		c = u[i];
		if (c >= 0x80) {
			m = utf8_seq(u + i, n - i);
			if (m > 0) {
				out_put(o, s + i, m);
				i += m;
			} else if (c == 0xc0 && i + 1 < n && u[i + 1] == 0x80) {
				/* a NUL kept in a C string (alt_keep_name()), as Java's modified UTF-8 */
				out_put(o, "\\u0000", 6);
				i += 2;
			} else {
				out_put(o, "\\ufffd", 6);
				i++;
			}
			continue;
		}
		switch (c) {
		case '"':
			out_put(o, "\\\"", 2);
			break;
		case '\\':
			out_put(o, "\\\\", 2);
			break;
		case '\b':
			out_put(o, "\\b", 2);
			break;
		case '\f':
			out_put(o, "\\f", 2);
			break;
		case '\n':
			out_put(o, "\\n", 2);
			break;
		case '\r':
			out_put(o, "\\r", 2);
			break;
		case '\t':
			out_put(o, "\\t", 2);
			break;
		default:
			esc[0] = '\\';
			esc[1] = 'u';
			esc[2] = '0';
			esc[3] = '0';
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 0xf];
			out_put(o, esc, 6);
			break;
		}
		i++;
	}
	out_ch(o, '"');
}

void
sm_json_out_init(struct sm_json_out *o)
{
	memset(o, 0, sizeof(*o));
}

void
sm_json_out_release(struct sm_json_out *o)
{
	sm_free(o->p);
	sm_json_out_init(o);
}

void
sm_json_out_reset(struct sm_json_out *o)
{
	o->len = 0;
	o->err = 0;
	o->comma = false;
	if (o->p != NULL)
		o->p[0] = '\0';
}

void
sm_json_out_obj_begin(struct sm_json_out *o)
{
	out_sep(o);
	out_ch(o, '{');
	o->comma = false;
}

void
sm_json_out_obj_end(struct sm_json_out *o)
{
	out_ch(o, '}');
	o->comma = true;
}

void
sm_json_out_arr_begin(struct sm_json_out *o)
{
	out_sep(o);
	out_ch(o, '[');
	o->comma = false;
}

void
sm_json_out_arr_end(struct sm_json_out *o)
{
	out_ch(o, ']');
	o->comma = true;
}

void
sm_json_out_keyn(struct sm_json_out *o, const char *key, size_t n)
{
	out_sep(o);
	out_escaped(o, key, n);
	out_ch(o, ':');
	o->comma = false;
}

void
sm_json_out_key(struct sm_json_out *o, const char *key)
{
	sm_json_out_keyn(o, key, strlen(key));
}

void
sm_json_out_strn(struct sm_json_out *o, const char *s, size_t n)
{
	out_sep(o);
	out_escaped(o, s, n);
	o->comma = true;
}

void
sm_json_out_str(struct sm_json_out *o, const char *s)
{
	sm_json_out_strn(o, s, strlen(s));
}

void
sm_json_out_raw(struct sm_json_out *o, const char *json, size_t n)
{
	out_sep(o);
	out_put(o, json, n);
	o->comma = true;
}

void
sm_json_out_num(struct sm_json_out *o, const char *text, size_t n)
{
	sm_json_out_raw(o, text, n);
}

void
sm_json_out_u64(struct sm_json_out *o, uint64_t v)
{
	char buf[24];
	size_t i = sizeof(buf);

	do {
		buf[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	sm_json_out_raw(o, buf + i, sizeof(buf) - i);
}

void
sm_json_out_i64(struct sm_json_out *o, int64_t v)
{
	char buf[24];
	size_t i = sizeof(buf);
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

	do {
		buf[--i] = (char)('0' + u % 10);
		u /= 10;
	} while (u != 0);
	if (v < 0)
		buf[--i] = '-';
	sm_json_out_raw(o, buf + i, sizeof(buf) - i);
}

void
sm_json_out_bool(struct sm_json_out *o, bool v)
{
	if (v)
		sm_json_out_raw(o, "true", 4);
	else
		sm_json_out_raw(o, "false", 5);
}

void
sm_json_out_null(struct sm_json_out *o)
{
	sm_json_out_raw(o, "null", 4);
}
