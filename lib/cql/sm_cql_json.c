/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CQL values as JSON, for SELECT JSON and toJson(): the forms of ScyllaDB's
 * to_json_string() (types/json_utils.cc), each value walked once, so the
 * output is linear in the value.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sm_core.h"
#include "cql_json_priv.h"
#include "cql_props_priv.h"

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
