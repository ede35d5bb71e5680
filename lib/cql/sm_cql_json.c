/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CQL values as JSON, for SELECT JSON and toJson(): the forms of ScyllaDB's
 * to_json_string() (types/json_utils.cc), each value walked once, so the
 * output is linear in the value.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "sm_core.h"
#include "cql_json_priv.h"
#include "cql_props_priv.h"
#include "sm_cql_value.h"

void
cql_json_raw(struct sm_cql_buf *out, const char *s, size_t n)
{
	uint8_t *p = sm_cql_buf_append(out, n);

	if (p != NULL && n)
		memcpy(p, s, n);
}

void
cql_json_string(struct sm_cql_buf *out, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, from = 0;
	char esc[6];

	cql_json_raw(out, "\"", 1);
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		cql_json_raw(out, s + from, i - from);
		from = i + 1;
		esc[0] = '\\';
		switch (c) {
		case '"':
		case '\\':
			esc[1] = (char)c;
			cql_json_raw(out, esc, 2);
			break;
		case '\n':
			cql_json_raw(out, "\\n", 2);
			break;
		case '\t':
			cql_json_raw(out, "\\t", 2);
			break;
		case '\r':
			cql_json_raw(out, "\\r", 2);
			break;
		case '\b':
			cql_json_raw(out, "\\b", 2);
			break;
		case '\f':
			cql_json_raw(out, "\\f", 2);
			break;
		default:
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			cql_json_raw(out, esc, 6);
			break;
		}
	}
	cql_json_raw(out, s + from, n - from);
	cql_json_raw(out, "\"", 1);
}

/* A scalar's text form (sm_value_format()), without the quotes of a CQL string literal. */
static void
scalar(struct sm_cql_buf *out, const struct sm_type *t, struct sm_bytes v, bool quote)
{
	char small[128], *buf = small;
	size_t n = sm_value_format(t, v, small, sizeof(small)), at = 0;

	if (n >= sizeof(small)) {
		buf = sm_malloc(n + 1);
		if (buf == NULL) {
			out->err = -ENOMEM;
			return;
		}
		sm_value_format(t, v, buf, n + 1);
	}
	if (n >= 2 && buf[0] == '\'' && buf[n - 1] == '\'') {
		at = 1;
		n -= 2;
	}
	if (quote)
		cql_json_string(out, buf + at, n);
	else
		cql_json_raw(out, buf + at, n);
	if (buf != small)
		sm_free(buf);
}

static uint64_t
be(struct sm_bytes v)
{
	uint64_t x = 0;
	uint32_t i;

	for (i = 0; i < v.len; i++)
		x = x << 8 | v.p[i];
	return x;
}

/* float and double as fmt's "{}" writes them (ScyllaDB's json of floating types) */
static void
floating(struct sm_cql_buf *out, const struct sm_type *t, struct sm_bytes v)
{
	char buf[48];
	double d;

	if (t->kind == SM_TYPE_FLOAT) {
		uint32_t b = (uint32_t)be(v);
		float f;

		memcpy(&f, &b, sizeof(f));
		cql_fmt_float(f, true, buf, sizeof(buf));
	} else {
		uint64_t b = be(v);

		memcpy(&d, &b, sizeof(d));
		cql_fmt_float(d, false, buf, sizeof(buf));
	}
	/* JSON has no NaN or infinities: a string, as ScyllaDB writes them */
	if (strchr(buf, 'n') != NULL)
		cql_json_string(out, buf, strlen(buf));
	else
		cql_json_raw(out, buf, strlen(buf));
}

/* A map key as a JSON object's key: its JSON, as a string unless it is one. */
static void
map_key(struct sm_cql_buf *out, const struct sm_type *t, struct sm_bytes k)
{
	struct sm_cql_buf tmp;

	if (t->kind == SM_TYPE_TEXT || t->kind == SM_TYPE_ASCII) {
		cql_json_string(out, (const char *)k.p, k.len);
		return;
	}
	sm_cql_buf_init(&tmp);
	cql_json_value(&tmp, t, k, false);
	if (tmp.err != 0)
		out->err = tmp.err;
	else if (tmp.len > 0 && tmp.p[0] == '"')
		cql_json_raw(out, (const char *)tmp.p, tmp.len);
	else
		cql_json_string(out, (const char *)tmp.p, tmp.len);
	sm_cql_buf_release(&tmp);
}

int
cql_json_value(struct sm_cql_buf *out, const struct sm_type *t, struct sm_bytes v, bool null)
{
	struct sm_coll_iter it;
	struct sm_bytes k, val;
	bool first = true, is_map;
	unsigned i = 0;

	if (null) {
		cql_json_raw(out, "null", 4);
		return out->err;
	}
	switch (t->kind) {
	case SM_TYPE_TEXT:
	case SM_TYPE_ASCII:
		cql_json_string(out, (const char *)v.p, v.len);
		break;
	case SM_TYPE_INT:
	case SM_TYPE_BIGINT:
	case SM_TYPE_SMALLINT:
	case SM_TYPE_TINYINT:
	case SM_TYPE_VARINT:
	case SM_TYPE_DECIMAL:
	case SM_TYPE_COUNTER:
	case SM_TYPE_BOOLEAN:
		if (v.len == 0) /* the empty value of a number */
			cql_json_raw(out, "null", 4);
		else
			scalar(out, t, v, false);
		break;
	case SM_TYPE_FLOAT:
	case SM_TYPE_DOUBLE:
		if (v.len != (t->kind == SM_TYPE_FLOAT ? 4u : 8u))
			cql_json_raw(out, "null", 4);
		else
			floating(out, t, v);
		break;
	case SM_TYPE_LIST:
	case SM_TYPE_SET:
	case SM_TYPE_MAP:
		is_map = t->kind == SM_TYPE_MAP;
		cql_json_raw(out, is_map ? "{" : "[", 1);
		if (sm_coll_iter_init(&it, v) == 0) {
			while (sm_coll_next(&it, &k, is_map ? &val : NULL, is_map)) {
				if (!first)
					cql_json_raw(out, ", ", 2);
				first = false;
				if (is_map) {
					map_key(out, t->elem, k);
					cql_json_raw(out, ": ", 2);
					cql_json_value(out, t->val, val, false);
				} else {
					cql_json_value(out, t->elem, k, false);
				}
			}
		}
		cql_json_raw(out, is_map ? "}" : "]", 1);
		break;
	case SM_TYPE_TUPLE:
	case SM_TYPE_UDT:
		cql_json_raw(out, t->kind == SM_TYPE_UDT ? "{" : "[", 1);
		sm_tuple_iter_init(&it, v);
		for (i = 0; i < t->nfields; i++) {
			bool has = sm_tuple_next(&it, &k);

			if (i > 0)
				cql_json_raw(out, ", ", 2);
			if (t->kind == SM_TYPE_UDT) {
				cql_json_string(out, t->field_names[i], strlen(t->field_names[i]));
				cql_json_raw(out, ": ", 2);
			}
			cql_json_value(out, t->fields[i], k, !has || k.len == SM_FIELD_NULL);
		}
		cql_json_raw(out, t->kind == SM_TYPE_UDT ? "}" : "]", 1);
		break;
	default:
		/* uuid, timeuuid, inet, timestamp, date, time, duration, blob: strings */
		scalar(out, t, v, true);
		break;
	}
	return out->err;
}

/* ---- JSON into values: INSERT JSON (ScyllaDB's from_json_object(), types/json_utils.cc) ---- */

#define JSMN_STATIC
#define JSMN_STRICT
#define JSMN_PARENT_LINKS /* linear: no scan back for each token's parent */
#include <jsmn.h>

struct jctx {
	const char *js;
	const jsmntok_t *tok;
	int ntok;
	struct sm_cql_buf *out;
	char *err;
	size_t errlen;
	unsigned depth;
};

static int __attribute__((format(printf, 2, 3)))
jfail(struct jctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, c->errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* The token after @i's subtree. */
static int
skip(const struct jctx *c, int i)
{
	int n = 1, j = i;

	while (n > 0 && j < c->ntok) {
		n += c->tok[j].size;
		/* an object's key counts as a child whose value is its own child */
		n--;
		j++;
	}
	return j;
}

/* A JSON string's text, unescaped (\uXXXX as UTF-8), into @buf; its length or -EINVAL. */
static long
unescape(struct jctx *c, const jsmntok_t *t, char *buf, size_t cap)
{
	const char *s = c->js + t->start, *e = c->js + t->end;
	size_t o = 0;

	while (s < e) {
		uint32_t cp;

		if (o + 4 > cap)
			return jfail(c, "JSON string too long");
		if (*s != '\\') {
			buf[o++] = *s++;
			continue;
		}
		s++;
		switch (*s) {
		case 'n':
			buf[o++] = '\n';
			break;
		case 't':
			buf[o++] = '\t';
			break;
		case 'r':
			buf[o++] = '\r';
			break;
		case 'b':
			buf[o++] = '\b';
			break;
		case 'f':
			buf[o++] = '\f';
			break;
		case 'u':
			if (e - s < 5 || sscanf(s + 1, "%4x", &cp) != 1)
				return jfail(c, "Invalid JSON string escape");
			s += 4;
			if (cp >= 0xd800 && cp < 0xdc00 && e - s >= 7 && s[1] == '\\' && s[2] == 'u') {
				uint32_t lo;

				if (sscanf(s + 3, "%4x", &lo) == 1 && lo >= 0xdc00 && lo < 0xe000) {
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
					s += 6;
				}
			}
			if (cp < 0x80) {
				buf[o++] = (char)cp;
			} else if (cp < 0x800) {
				buf[o++] = (char)(0xc0 | cp >> 6);
				buf[o++] = (char)(0x80 | (cp & 0x3f));
			} else if (cp < 0x10000) {
				buf[o++] = (char)(0xe0 | cp >> 12);
				buf[o++] = (char)(0x80 | ((cp >> 6) & 0x3f));
				buf[o++] = (char)(0x80 | (cp & 0x3f));
			} else {
				buf[o++] = (char)(0xf0 | cp >> 18);
				buf[o++] = (char)(0x80 | ((cp >> 12) & 0x3f));
				buf[o++] = (char)(0x80 | ((cp >> 6) & 0x3f));
				buf[o++] = (char)(0x80 | (cp & 0x3f));
			}
			break;
		default: /* \" \\ \/ */
			buf[o++] = *s;
			break;
		}
		s++;
	}
	return (long)o;
}

static void
put_be32(struct sm_cql_buf *b, size_t at, uint32_t v)
{
	b->p[at] = (uint8_t)(v >> 24);
	b->p[at + 1] = (uint8_t)(v >> 16);
	b->p[at + 2] = (uint8_t)(v >> 8);
	b->p[at + 3] = (uint8_t)v;
}

static int
jvalue(struct jctx *c, const struct sm_type *t, int i, int *next, bool *null);

/* A scalar from its text (a JSON string's, or a number's): the CQL text form. */
static int
jscalar(struct jctx *c, const struct sm_type *t, const char *s, size_t n, bool string)
{
	struct sm_cql_value_span sp;
	char tn[64];

	sm_type_name(t, tn, sizeof(tn));
	if ((t->kind == SM_TYPE_TEXT || t->kind == SM_TYPE_ASCII) && !string)
		return jfail(c, "Unable to make %s from '%.*s'", tn, (int)(n > 64 ? 64 : n), s);
	if (t->kind == SM_TYPE_BLOB) {
		if (!string || n < 2 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
			return jfail(c, "Value '%.*s' is not a valid blob representation: String "
				     "representation of blob is missing 0x prefix",
				     (int)(n > 64 ? 64 : n), s);
		s += 2;
		n -= 2;
	}
	return sm_cql_value_from_text(t, s, n, c->out, &sp, c->err, c->errlen);
}

/* a list, set or tuple from an array; a tuple's missing trailing fields are null */
static int
jarray(struct jctx *c, const struct sm_type *t, int i, int *next)
{
	size_t start = c->out->len, at;
	unsigned k, n = (unsigned)c->tok[i].size;
	int j = i + 1, ret;
	bool null;

	if (t->kind == SM_TYPE_TUPLE && n > t->nfields)
		return jfail(c, "Tuple contains extra items (expected %u, got %u)", t->nfields, n);
	if (t->kind != SM_TYPE_TUPLE && sm_cql_buf_append(c->out, 4) != NULL)
		put_be32(c->out, start, n);
	for (k = 0; k < (t->kind == SM_TYPE_TUPLE ? t->nfields : n); k++) {
		at = c->out->len;
		if (sm_cql_buf_append(c->out, 4) == NULL)
			return -ENOMEM;
		if (k >= n) {
			put_be32(c->out, at, UINT32_MAX);
			continue;
		}
		ret = jvalue(c, t->kind == SM_TYPE_TUPLE ? t->fields[k] : t->elem, j, &j, &null);
		if (ret < 0)
			return ret;
		if (null && t->kind != SM_TYPE_TUPLE)
			return jfail(c, "Invalid null value in list or set");
		put_be32(c->out, at, null ? UINT32_MAX : (uint32_t)(c->out->len - at - 4));
	}
	*next = j;
	return c->out->err;
}

/* A map's key: its text for text keys, else the JSON inside the string. */
static int
jkey(struct jctx *c, const struct sm_type *kt, int i)
{
	char small[256], *buf = small;
	size_t cap = (size_t)(c->tok[i].end - c->tok[i].start) * 4 + 4;
	long n;
	int ret;

	if (cap > sizeof(small) && (buf = sm_malloc(cap)) == NULL)
		return -ENOMEM;
	n = unescape(c, &c->tok[i], buf, cap > sizeof(small) ? cap : sizeof(small));
	ret = n < 0 ? (int)n : 0;
	if (ret == 0 && (kt->kind == SM_TYPE_TEXT || kt->kind == SM_TYPE_ASCII ||
			 !sm_type_is_collection(kt))) {
		ret = jscalar(c, kt, buf, (size_t)n,
			      kt->kind == SM_TYPE_TEXT || kt->kind == SM_TYPE_ASCII ||
				      kt->kind == SM_TYPE_BLOB || n == 0 || buf[0] != '"');
	} else if (ret == 0) {
		/* a frozen collection as a key: parse the string's JSON */
		ret = cql_json_to_value(kt, buf, (size_t)n, c->out, c->err, c->errlen);
	}
	if (buf != small)
		sm_free(buf);
	return ret;
}

static int
jobject(struct jctx *c, const struct sm_type *t, int i, int *next)
{
	size_t start = c->out->len, at;
	unsigned k, n = (unsigned)c->tok[i].size;
	int j = i + 1, ret;
	bool null;

	if (t->kind == SM_TYPE_UDT) {
		/* the fields in the type's order; what the object lacks is null */
		int *where = sm_calloc(t->nfields ? t->nfields : 1, sizeof(*where));
		unsigned f;

		if (where == NULL)
			return -ENOMEM;
		for (k = 0; k < n && j < c->ntok; k++, j = skip(c, j + 1)) {
			char name[256];
			long len = unescape(c, &c->tok[j], name, sizeof(name) - 1);
			bool quoted = len >= 2 && name[0] == '"' && name[len - 1] == '"';

			if (len < 0) {
				sm_free(where);
				return (int)len;
			}
			for (f = 0; f < t->nfields; f++) {
				const char *fn = t->field_names[f];

				if (quoted ? (size_t)len - 2 == strlen(fn) &&
						     memcmp(name + 1, fn, (size_t)len - 2) == 0
					   : (size_t)len == strlen(fn) &&
						     strncasecmp(name, fn, (size_t)len) == 0)
					break;
			}
			if (f == t->nfields) {
				sm_free(where);
				return jfail(c, "Unknown field %.*s in value of user defined type %s",
					     (int)len, name, t->name);
			}
			where[f] = j + 1;
		}
		*next = j;
		for (f = 0; f < t->nfields; f++) {
			at = c->out->len;
			if (sm_cql_buf_append(c->out, 4) == NULL)
				break;
			null = true;
			if (where[f] != 0) {
				ret = jvalue(c, t->fields[f], where[f], &j, &null);
				if (ret < 0) {
					sm_free(where);
					return ret;
				}
			}
			put_be32(c->out, at, null ? UINT32_MAX : (uint32_t)(c->out->len - at - 4));
		}
		sm_free(where);
		return c->out->err;
	}
	if (t->kind != SM_TYPE_MAP)
		return jfail(c, "Value is not a JSON object for a column of a non-map type");
	if (sm_cql_buf_append(c->out, 4) != NULL)
		put_be32(c->out, start, n);
	for (k = 0; k < n; k++) {
		if (j >= c->ntok)
			return jfail(c, "Invalid JSON");
		at = c->out->len;
		if (sm_cql_buf_append(c->out, 4) == NULL)
			return -ENOMEM;
		ret = jkey(c, t->elem, j);
		if (ret < 0)
			return ret;
		put_be32(c->out, at, (uint32_t)(c->out->len - at - 4));
		at = c->out->len;
		if (sm_cql_buf_append(c->out, 4) == NULL)
			return -ENOMEM;
		ret = jvalue(c, t->val, j + 1, &j, &null);
		if (ret < 0)
			return ret;
		if (null)
			return jfail(c, "Invalid null value in map");
		put_be32(c->out, at, (uint32_t)(c->out->len - at - 4));
	}
	*next = j;
	return c->out->err;
}

static int
jvalue(struct jctx *c, const struct sm_type *t, int i, int *next, bool *null)
{
	const jsmntok_t *tk;
	const char *s;
	size_t n, start = c->out->len;
	int ret;

	*null = false;
	if (i < 0 || i >= c->ntok)
		return jfail(c, "Invalid JSON");
	tk = &c->tok[i];
	s = c->js + tk->start;
	n = (size_t)(tk->end - tk->start);
	if (++c->depth > 64)
		return jfail(c, "JSON nested too deeply");
	*next = i + 1;
	switch (tk->type) {
	case JSMN_PRIMITIVE:
		if (n == 4 && memcmp(s, "null", 4) == 0) {
			*null = true;
			ret = 0;
		} else if (sm_type_is_collection(t) || t->kind == SM_TYPE_TUPLE ||
			   t->kind == SM_TYPE_UDT) {
			ret = jfail(c, "Unable to make a collection, tuple or user type from '%.*s'",
				    (int)(n > 64 ? 64 : n), s);
		} else {
			ret = jscalar(c, t, s, n, false);
		}
		break;
	case JSMN_STRING: {
		char small[256], *buf = small;
		size_t cap = n * 4 + 4;
		long len;

		if (cap > sizeof(small) && (buf = sm_malloc(cap)) == NULL)
			return -ENOMEM;
		len = unescape(c, tk, buf, cap > sizeof(small) ? cap : sizeof(small));
		if (len < 0)
			ret = (int)len;
		else if (sm_type_is_collection(t) || t->kind == SM_TYPE_TUPLE ||
			 t->kind == SM_TYPE_UDT)
			/* a string for a collection: its JSON (Cassandra accepts it) */
			ret = cql_json_to_value(t, buf, (size_t)len, c->out, c->err, c->errlen);
		else
			ret = jscalar(c, t, buf, (size_t)len, true);
		if (buf != small)
			sm_free(buf);
		break;
	}
	case JSMN_ARRAY:
		if (t->kind != SM_TYPE_LIST && t->kind != SM_TYPE_SET && t->kind != SM_TYPE_TUPLE)
			ret = jfail(c, "Value is not a JSON list for a column of a non-list type");
		else
			ret = jarray(c, t, i, next);
		break;
	case JSMN_OBJECT:
		ret = jobject(c, t, i, next);
		break;
	default:
		ret = jfail(c, "Invalid JSON");
		break;
	}
	c->depth--;
	if (ret == 0 && c->out->err == 0 && !*null &&
	    (t->kind == SM_TYPE_SET || t->kind == SM_TYPE_MAP)) {
		/* sorted without duplicates, as every other write stores them */
		long nl = sm_value_normalize_outer(
			t, (struct sm_bytes){ c->out->p + start, (uint32_t)(c->out->len - start) },
			c->out->p + start, c->out->len - start);

		if (nl < 0)
			return nl == -ENOMEM ? -ENOMEM : jfail(c, "Invalid collection in JSON");
		c->out->len = start + (size_t)nl;
	}
	return ret < 0 ? ret : c->out->err;
}

static int
jparse(const char *js, size_t len, jsmntok_t **tok, int *ntok, char *err, size_t errlen)
{
	jsmn_parser p;
	int n;

	jsmn_init(&p);
	n = jsmn_parse(&p, js, len, NULL, 0);
	if (n <= 0) {
		snprintf(err, errlen, "Could not decode JSON string '%.*s'", (int)(len > 80 ? 80 : len),
			 js);
		return -EINVAL;
	}
	*tok = sm_calloc((size_t)n, sizeof(**tok));
	if (*tok == NULL)
		return -ENOMEM;
	jsmn_init(&p);
	*ntok = jsmn_parse(&p, js, len, *tok, (unsigned)n);
	if (*ntok != n) {
		sm_free(*tok);
		*tok = NULL;
		snprintf(err, errlen, "Could not decode JSON string '%.*s'", (int)(len > 80 ? 80 : len),
			 js);
		return -EINVAL;
	}
	return 0;
}

int
cql_json_to_value(const struct sm_type *t, const char *js, size_t len, struct sm_cql_buf *out,
		  char *err, size_t errlen)
{
	struct jctx c = { js, NULL, 0, out, err, errlen, 0 };
	size_t b = 0, e = len;
	jsmntok_t *tok, one;
	int next, ret;
	bool null;

	while (b < e && (js[b] == ' ' || js[b] == '\t' || js[b] == '\r' || js[b] == '\n'))
		b++;
	while (e > b && (js[e - 1] == ' ' || js[e - 1] == '\t' || js[e - 1] == '\r' ||
			 js[e - 1] == '\n'))
		e--;
	if (b < e && js[b] != '{' && js[b] != '[' && js[b] != '"') {
		/* a bare number, boolean or null: strict jsmn takes those only inside */
		memset(&one, 0, sizeof(one));
		one.type = JSMN_PRIMITIVE;
		one.start = (int)b;
		one.end = (int)e;
		c.tok = &one;
		c.ntok = 1;
		ret = jvalue(&c, t, 0, &next, &null);
		return ret == 0 && null ? -ENODATA : ret;
	}
	ret = jparse(js, len, &tok, &c.ntok, err, errlen);
	if (ret < 0)
		return ret;
	c.tok = tok;
	ret = jvalue(&c, t, 0, &next, &null);
	if (ret == 0 && null)
		ret = -ENODATA;
	sm_free(tok);
	return ret;
}

int
cql_json_row(const struct sm_table *t, const char *js, size_t len, struct sm_cql_buf *out,
	     struct cql_json_col *cols, char *err, size_t errlen)
{
	struct jctx c = { js, NULL, 0, out, err, errlen, 0 };
	jsmntok_t *tok;
	int i, ret = 0;
	unsigned k;

	ret = jparse(js, len, &tok, &c.ntok, err, errlen);
	if (ret < 0)
		return ret;
	c.tok = tok;
	if (tok[0].type != JSMN_OBJECT) {
		ret = jfail(&c, "Could not decode JSON string '%.*s': not a JSON object",
			    (int)(len > 80 ? 80 : len), js);
		goto out;
	}
	memset(cols, 0, t->ncols * sizeof(*cols));
	for (k = 0, i = 1; k < (unsigned)tok[0].size && ret == 0 && i < c.ntok; k++) {
		char name[SM_NAME_MAX + 3];
		const struct sm_column *col;
		long n = unescape(&c, &tok[i], name, sizeof(name) - 1);
		size_t at;
		bool null;

		if (n < 0) {
			ret = jfail(&c, "JSON values map contains unrecognized column: %.*s",
				    (int)(tok[i].end - tok[i].start), js + tok[i].start);
			break;
		}
		name[n] = '\0';
		/* a key is a column's name as CQL writes it: quoted keeps its case */
		if (n >= 2 && name[0] == '"' && name[n - 1] == '"') {
			memmove(name, name + 1, (size_t)n - 2);
			name[n - 2] = '\0';
		} else {
			long j;

			for (j = 0; j < n; j++)
				if (name[j] >= 'A' && name[j] <= 'Z')
					name[j] = (char)(name[j] + 32);
		}
		col = sm_table_column(t, name);
		if (col == NULL) {
			ret = jfail(&c, "JSON values map contains unrecognized column: %s", name);
			break;
		}
		at = out->len;
		ret = jvalue(&c, col->type, i + 1, &i, &null);
		if (ret < 0)
			break;
		cols[col->id].present = true;
		cols[col->id].null = null;
		cols[col->id].off = at;
		cols[col->id].len = (uint32_t)(out->len - at);
	}
out:
	sm_free(tok);
	return ret;
}
