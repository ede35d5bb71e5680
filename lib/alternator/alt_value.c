/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Attribute values: validation with DynamoDB's rules and messages, the
 * canonical JSON the store keeps, comparison, and the key columns' bytes.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nettle/base64.h>

#include "alt_priv.h"

#define MAX_DEPTH 32

/* Two scratch strings per shard, so two values can be compared. */
static __thread struct {
	char *p;
	size_t cap;
} sbuf[2];

void
alt_value_shard_fini(void);

void
alt_value_shard_fini(void)
{
	unsigned i;

	for (i = 0; i < 2; i++) {
		sm_free(sbuf[i].p);
		sbuf[i].p = NULL;
		sbuf[i].cap = 0;
	}
}

static char *
scratch(unsigned slot, size_t n)
{
	char *p;
	size_t cap;

	if (sbuf[slot].cap >= n + 1)
		return sbuf[slot].p;
	cap = sbuf[slot].cap ? sbuf[slot].cap : 256;
	while (cap < n + 1)
		cap *= 2;
	p = sm_realloc(sbuf[slot].p, cap);
	if (p == NULL)
		return NULL;
	sbuf[slot].p = p;
	sbuf[slot].cap = cap;
	return p;
}

int
alt_bytes_reserve(struct alt_bytes *b, size_t n)
{
	size_t cap;
	uint8_t *p;

	if (b->cap - b->len >= n)
		return 0;
	cap = b->cap ? b->cap : 1024;
	while (cap - b->len < n)
		cap *= 2;
	p = sm_realloc(b->p, cap);
	if (p == NULL)
		return -ENOMEM;
	b->p = p;
	b->cap = cap;
	return 0;
}

uint8_t *
alt_bytes_put(struct alt_bytes *b, const void *p, size_t n)
{
	uint8_t *d;

	if (b->cap - b->len < n)
		return NULL; /* reserved up front: growing would move live views */
	d = b->p + b->len;
	if (n)
		memcpy(d, p, n);
	b->len += n;
	return d;
}

int
alt_value_type(const struct sm_json_doc *d, int tok, char type[5], int *payload)
{
	int k;
	struct sm_bytes s;

	if (sm_json_type(d, tok) != SM_JSON_OBJECT || sm_json_count(d, tok) != 1)
		return -EINVAL;
	k = sm_json_first(d, tok);
	s = sm_json_span(d, k);
	if (s.len < 3 || s.len > 6) /* "S" .. "NULL" with quotes */
		return -EINVAL;
	memcpy(type, s.p + 1, s.len - 2);
	type[s.len - 2] = '\0';
	*payload = sm_json_member_value(d, k);
	return 0;
}

/* The string payload's bytes in scratch slot @slot when it has escapes. */
static int
str_slot(const struct sm_json_doc *d, int tok, unsigned slot, struct sm_bytes *out)
{
	struct sm_bytes raw = sm_json_span(d, tok);
	char *buf;

	if (sm_json_type(d, tok) != SM_JSON_STRING)
		return -EINVAL;
	if (!sm_json_str_has_escapes(d, tok))
		return sm_json_str(d, tok, NULL, 0, out);
	buf = scratch(slot, raw.len);
	if (buf == NULL)
		return -ENOMEM;
	return sm_json_str(d, tok, buf, raw.len + 1, out);
}

int
alt_payload_str(struct alt_op *op, const struct sm_json_doc *d, int tok, struct sm_bytes *out)
{
	(void)op;
	return str_slot(d, tok, 0, out);
}

/* Decode base64 @s into @dst (room for BASE64_DECODE_LENGTH); its length or -EINVAL. */
static long
b64_decode(struct sm_bytes s, uint8_t *dst)
{
	struct base64_decode_ctx ctx;
	size_t n = 0;

	if (s.len % 4 != 0)
		return -EINVAL;
	base64_decode_init(&ctx);
	if (!base64_decode_update(&ctx, &n, dst, s.len, (const char *)s.p) ||
	    !base64_decode_final(&ctx))
		return -EINVAL;
	return (long)n;
}

static int
binary_slot(const struct sm_json_doc *d, int tok, unsigned slot, struct sm_bytes *out)
{
	struct sm_bytes s;
	uint8_t *dst;
	long n;
	int ret;

	ret = str_slot(d, tok, slot, &s);
	if (ret < 0)
		return ret;
	/* Decode in place after the text (the scratch holds both). */
	dst = (uint8_t *)scratch(slot ^ 1, BASE64_DECODE_LENGTH(s.len) + 1);
	if (dst == NULL)
		return -ENOMEM;
	n = b64_decode(s, dst);
	if (n < 0)
		return -EINVAL;
	out->p = dst;
	out->len = (uint32_t)n;
	return 0;
}

int
alt_payload_binary(struct alt_op *op, const struct sm_json_doc *d, int tok, struct sm_bytes *out)
{
	struct sm_bytes s;
	uint8_t *dst;
	long n;
	int ret;

	ret = str_slot(d, tok, 0, &s);
	if (ret < 0)
		return ret;
	if (op->keys.cap - op->keys.len < BASE64_DECODE_LENGTH(s.len) + 1)
		return -ENOSPC;
	dst = op->keys.p + op->keys.len;
	n = b64_decode(s, dst);
	if (n < 0)
		return -EINVAL;
	op->keys.len += (size_t)n;
	out->p = dst;
	out->len = (uint32_t)n;
	return 0;
}

/* ---- validation and canonical form ---- */

static int
bad(struct alt_op *op, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int
bad(struct alt_op *op, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(op->errmsg, sizeof(op->errmsg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int
number_text(struct alt_op *op, const struct sm_json_doc *d, int tok, struct sm_ddb_number *n)
{
	struct sm_bytes s;
	char err[200];
	int ret;

	if (str_slot(d, tok, 0, &s) < 0) {
		op->ser_err = true;
		return bad(op, "%s",
			   "One or more parameter values were invalid: a number must be a "
			   "string");
	}
	ret = sm_ddb_number_parse((const char *)s.p, s.len, n, err, sizeof(err));
	if (ret < 0)
		return bad(op, "%s", err);
	return 0;
}

static int
write_value(struct alt_op *op, const struct sm_json_doc *d, int tok, struct sm_json_out *o,
	    unsigned depth);
static int
bytes_cmp(struct sm_bytes a, struct sm_bytes b)
{
	/* An empty value may come with a NULL pointer: no memcmp of 0 bytes. */
	int c = a.len && b.len ? memcmp(a.p, b.p, SM_MIN(a.len, b.len)) : 0;

	return c ? c : (a.len < b.len ? -1 : a.len > b.len);
}

/* ---- sets: elements sorted once, so duplicates and membership cost n log n ---- */

/* Elements by value only. */
static int
set_value_cmp(const struct alt_set *set, const struct alt_set_elem *x, const struct alt_set_elem *y)
{
	if (set->type == 'N')
		return sm_ddb_number_compare(&x->num, &y->num);
	return bytes_cmp(x->s, y->s);
}

/* By value, then position: a total order, whatever qsort_r() does with ties. */
static int
set_elem_cmp(const void *a, const void *b, void *arg)
{
	const struct alt_set_elem *x = a, *y = b;
	int c = set_value_cmp(arg, x, y);

	return c ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

void
alt_set_init(struct alt_set *set, char type)
{
	memset(set, 0, sizeof(*set));
	set->type = type;
}

void
alt_set_free(struct alt_set *set)
{
	sm_free(set->e);
	sm_free(set->buf);
	alt_set_init(set, set->type);
}

/*
 * The key of element @tok (a JSON string) of a set of @set->type: a number
 * by value (1, 1.0 and 10E-1 are one), S and B by their unescaped text (B
 * is compared as DynamoDB's base64, as written). Escaped text is kept in
 * @keep (room for the token's span) or else in scratch slot 1.
 */
static int
set_key(struct alt_op *op, const struct alt_set *set, const struct sm_json_doc *d, int tok,
	char *keep, struct alt_set_elem *e)
{
	struct sm_bytes raw = sm_json_span(d, tok);

	if (set->type == 'N')
		return number_text(op, d, tok, &e->num);
	if (keep == NULL || !sm_json_str_has_escapes(d, tok))
		return str_slot(d, tok, 1, &e->s);
	return sm_json_str(d, tok, keep, raw.len + 1, &e->s);
}

int
alt_set_add(struct alt_op *op, struct alt_set *set, const struct sm_json_doc *d, int tok)
{
	struct sm_bytes raw = sm_json_span(d, tok), span;
	struct alt_set_elem *e;
	unsigned cap;
	char *keep = NULL;
	int ret;

	if (set->n == set->cap) {
		cap = set->cap ? set->cap * 2 : 16;
		e = sm_realloc(set->e, (size_t)cap * sizeof(*e));
		if (e == NULL)
			return -ENOMEM;
		set->e = e;
		set->cap = cap;
	}
	if (set->type != 'N' && sm_json_str_has_escapes(d, tok)) {
		if (set->buf == NULL) {
			/* the array's text bounds every element's unescaped text */
			span = sm_json_span(d, set->arr);
			set->buf = sm_malloc((size_t)span.len + 1);
			if (set->buf == NULL)
				return -ENOMEM;
		}
		keep = set->buf + set->used;
		set->used += raw.len + 1;
	}
	e = &set->e[set->n];
	ret = set_key(op, set, d, tok, keep, e);
	if (ret < 0)
		return ret;
	e->pos = set->n++;
	return 0;
}

int
alt_set_build(struct alt_op *op, struct alt_set *set, const struct sm_json_doc *d, int arr)
{
	int x, ret;

	set->arr = arr;
	for (x = sm_json_first(d, arr); x >= 0; x = sm_json_next(d, x)) {
		if (sm_json_type(d, x) != SM_JSON_STRING)
			return -EINVAL;
		ret = alt_set_add(op, set, d, x);
		if (ret < 0)
			return ret;
	}
	alt_set_sort(set);
	return 0;
}

void
alt_set_sort(struct alt_set *set)
{
	if (set->n > 1)
		qsort_r(set->e, set->n, sizeof(*set->e), set_elem_cmp, set);
}

/* The position of the first element equal to an earlier one, or -1; sorted first. */
static int
set_first_dup(const struct alt_set *set)
{
	unsigned i, first = UINT32_MAX;

	/* equal values sort by position: the second of a run is where it repeated */
	for (i = 1; i < set->n; i++)
		if (set_value_cmp(set, &set->e[i - 1], &set->e[i]) == 0 &&
		    (i == 1 || set_value_cmp(set, &set->e[i - 2], &set->e[i - 1]) != 0) &&
		    set->e[i].pos < first)
			first = set->e[i].pos;
	return first == UINT32_MAX ? -1 : (int)first;
}

bool
alt_set_has(struct alt_op *op, const struct alt_set *set, const struct sm_json_doc *d, int tok)
{
	struct alt_set_elem key;
	size_t lo = 0, hi = set->n, mid;
	int c;

	if (sm_json_type(d, tok) != SM_JSON_STRING || set_key(op, set, d, tok, NULL, &key) < 0)
		return false;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = set_value_cmp(set, &key, &set->e[mid]);
		if (c == 0)
			return true;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return false;
}

static int
write_set(struct alt_op *op, const struct sm_json_doc *d, int arr, const char *type,
	  struct sm_json_out *o)
{
	char text[SM_DDB_NUMBER_TEXT_MAX];
	struct sm_ddb_number na;
	struct alt_set set;
	struct sm_bytes sa;
	int a, ret = 0;

	if (sm_json_type(d, arr) != SM_JSON_ARRAY)
		return bad(op, "One or more parameter values were invalid: %s must be a list",
			   type);
	if (sm_json_count(d, arr) == 0)
		return bad(op,
			   "One or more parameter values were invalid: An %s set  may not be "
			   "empty",
			   type[0] == 'S'   ? "string"
			   : type[0] == 'N' ? "number"
					    : "binary");
	alt_set_init(&set, type[0]);
	set.arr = arr;
	sm_json_out_arr_begin(o);
	for (a = sm_json_first(d, arr); a >= 0; a = sm_json_next(d, a)) {
		if (sm_json_type(d, a) != SM_JSON_STRING) {
			ret = bad(op,
				  "One or more parameter values were invalid: %s elements must "
				  "be strings",
				  type);
			break;
		}
		if (type[0] == 'N') {
			ret = number_text(op, d, a, &na);
			if (ret < 0)
				break;
		} else if (type[0] == 'B') {
			if (binary_slot(d, a, 0, &sa) < 0) {
				op->ser_err = true;
				ret = bad(op, "%s",
					  "One or more parameter values were invalid: "
					  "invalid base64 in a binary set");
				break;
			}
		}
		ret = alt_set_add(op, &set, d, a);
		if (ret < 0)
			break;
		if (type[0] == 'N') {
			sm_ddb_number_format(&na, text, sizeof(text));
			sm_json_out_str(o, text);
		} else {
			struct sm_bytes raw = sm_json_span(d, a);

			sm_json_out_raw(o, (const char *)raw.p, raw.len);
		}
	}
	/*
	 * Sets hold distinct elements: DynamoDB refuses duplicates. A duplicate
	 * before the first bad element is what an in-order check meets first.
	 */
	if (ret != -ENOMEM) {
		alt_set_sort(&set);
		if (set_first_dup(&set) >= 0)
			ret = bad(op, "%s",
				  "One or more parameter values were invalid: Input "
				  "collection contains duplicates");
	}
	alt_set_free(&set);
	if (ret < 0)
		return ret;
	sm_json_out_arr_end(o);
	return 0;
}

static int
write_value(struct alt_op *op, const struct sm_json_doc *d, int tok, struct sm_json_out *o,
	    unsigned depth)
{
	struct sm_ddb_number n;
	char type[5], text[SM_DDB_NUMBER_TEXT_MAX];
	struct sm_bytes raw, s;
	int p, k, ret;

	if (depth > MAX_DEPTH)
		return bad(op, "%s",
			   "Nesting Levels have exceeded supported limits: Max 32 nesting "
			   "levels");
	if (sm_json_type(d, tok) != SM_JSON_OBJECT)
		return bad(op, "%s", "Supplied AttributeValue is not an object");
	if (sm_json_count(d, tok) == 0)
		return bad(op, "%s",
			   "Supplied AttributeValue is empty, must contain exactly one of "
			   "the supported datatypes");
	if (sm_json_count(d, tok) > 1)
		return bad(op, "%s",
			   "Supplied AttributeValue has more than one datatypes set, must "
			   "contain exactly one of the supported datatypes");
	if (alt_value_type(d, tok, type, &p) < 0)
		return bad(op, "%s", "Supplied AttributeValue has an unknown data type");
	sm_json_out_obj_begin(o);
	sm_json_out_key(o, type);
	if (strcmp(type, "S") == 0) {
		if (sm_json_type(d, p) != SM_JSON_STRING)
			return bad(op, "%s",
				   "One or more parameter values were invalid: S must be a "
				   "string");
		raw = sm_json_span(d, p);
		sm_json_out_raw(o, (const char *)raw.p, raw.len);
	} else if (strcmp(type, "N") == 0) {
		ret = number_text(op, d, p, &n);
		if (ret < 0)
			return ret;
		sm_ddb_number_format(&n, text, sizeof(text));
		sm_json_out_str(o, text);
	} else if (strcmp(type, "B") == 0) {
		if (sm_json_type(d, p) != SM_JSON_STRING || binary_slot(d, p, 0, &s) < 0) {
			op->ser_err = true;
			return bad(op, "%s",
				   "One or more parameter values were invalid: B must be "
				   "base64-encoded binary data");
		}
		raw = sm_json_span(d, p);
		sm_json_out_raw(o, (const char *)raw.p, raw.len);
	} else if (strcmp(type, "BOOL") == 0) {
		bool b;

		if (sm_json_bool(d, p, &b) < 0)
			return bad(op, "%s",
				   "One or more parameter values were invalid: BOOL must "
				   "be true or false");
		sm_json_out_bool(o, b);
	} else if (strcmp(type, "NULL") == 0) {
		bool b = false;

		if (sm_json_bool(d, p, &b) < 0 || !b)
			return bad(op, "%s",
				   "One or more parameter values were invalid: Null "
				   "attribute value types must have the value of true");
		sm_json_out_bool(o, true);
	} else if (strcmp(type, "SS") == 0 || strcmp(type, "NS") == 0 || strcmp(type, "BS") == 0) {
		ret = write_set(op, d, p, type, o);
		if (ret < 0)
			return ret;
	} else if (strcmp(type, "L") == 0) {
		if (sm_json_type(d, p) != SM_JSON_ARRAY)
			return bad(op, "%s",
				   "One or more parameter values were invalid: L must be "
				   "a list");
		sm_json_out_arr_begin(o);
		for (k = sm_json_first(d, p); k >= 0; k = sm_json_next(d, k)) {
			ret = write_value(op, d, k, o, depth + 1);
			if (ret < 0)
				return ret;
		}
		sm_json_out_arr_end(o);
	} else if (strcmp(type, "M") == 0) {
		if (sm_json_type(d, p) != SM_JSON_OBJECT)
			return bad(op, "%s",
				   "One or more parameter values were invalid: M must be "
				   "a map");
		sm_json_out_obj_begin(o);
		for (k = sm_json_first(d, p); k >= 0; k = sm_json_next(d, k)) {
			raw = sm_json_span(d, k);
			/* raw is the quoted key: splice it as a key */
			sm_json_out_raw(o, (const char *)raw.p, raw.len);
			o->comma = false;
			sm_json_out_raw(o, ":", 1);
			o->comma = false;
			ret = write_value(op, d, sm_json_member_value(d, k), o, depth + 1);
			if (ret < 0)
				return ret;
		}
		sm_json_out_obj_end(o);
	} else {
		return bad(op, "Supplied AttributeValue has an unknown data type: %s", type);
	}
	sm_json_out_obj_end(o);
	return o->err;
}

int
alt_value_write(struct alt_op *op, const struct sm_json_doc *d, int tok, struct sm_json_out *o,
		bool key, const char *what)
{
	int ret;

	(void)key;
	(void)what;
	ret = write_value(op, d, tok, o, 0);
	return ret;
}

/* ---- comparison ---- */

int
alt_value_compare(struct alt_op *op, struct alt_val a, struct alt_val b, int *cmp)
{
	char ta[5], tb[5];
	int pa, pb;
	struct sm_ddb_number na, nb;
	struct sm_bytes sa, sb;
	uint8_t *copy;

	if (alt_value_type(a.d, a.tok, ta, &pa) < 0 || alt_value_type(b.d, b.tok, tb, &pb) < 0 ||
	    strcmp(ta, tb) != 0)
		return -EINVAL;
	if (strcmp(ta, "N") == 0) {
		if (number_text(op, a.d, pa, &na) < 0 || number_text(op, b.d, pb, &nb) < 0)
			return -EINVAL;
		*cmp = sm_ddb_number_compare(&na, &nb);
		return 0;
	}
	if (strcmp(ta, "S") == 0) {
		if (str_slot(a.d, pa, 0, &sa) < 0 || str_slot(b.d, pb, 1, &sb) < 0)
			return -EINVAL;
		*cmp = bytes_cmp(sa, sb);
		return 0;
	}
	if (strcmp(ta, "B") == 0) {
		/* Decode a, keep a copy, then decode b (both use the scratch pair). */
		if (binary_slot(a.d, pa, 0, &sa) < 0)
			return -EINVAL;
		copy = sm_malloc(sa.len + 1);
		if (copy == NULL)
			return -ENOMEM;
		memcpy(copy, sa.p, sa.len);
		sa.p = copy;
		if (binary_slot(b.d, pb, 0, &sb) < 0) {
			sm_free(copy);
			return -EINVAL;
		}
		*cmp = bytes_cmp(sa, sb);
		sm_free(copy);
		return 0;
	}
	return -EINVAL;
}

static bool
set_contains(struct alt_op *op, const struct sm_json_doc *d, int arr, const char *type,
	     struct alt_val elem_as_value, const struct sm_json_doc *ed, int etok);

bool
alt_value_equal(struct alt_op *op, struct alt_val a, struct alt_val b)
{
	char ta[5], tb[5];
	int pa, pb, x, y, cmp;
	bool v1, v2;

	if (alt_value_type(a.d, a.tok, ta, &pa) < 0 || alt_value_type(b.d, b.tok, tb, &pb) < 0 ||
	    strcmp(ta, tb) != 0)
		return false;
	if (strcmp(ta, "N") == 0 || strcmp(ta, "S") == 0 || strcmp(ta, "B") == 0)
		return alt_value_compare(op, a, b, &cmp) == 0 && cmp == 0;
	if (strcmp(ta, "BOOL") == 0 || strcmp(ta, "NULL") == 0)
		return sm_json_bool(a.d, pa, &v1) == 0 && sm_json_bool(b.d, pb, &v2) == 0 &&
		       v1 == v2;
	if (ta[1] == 'S') { /* SS, NS, BS: same elements in any order */
		struct alt_set set;
		bool same = true;

		if (sm_json_count(a.d, pa) != sm_json_count(b.d, pb))
			return false;
		alt_set_init(&set, ta[0]);
		if (alt_set_build(op, &set, b.d, pb) < 0)
			same = false;
		for (x = sm_json_first(a.d, pa); same && x >= 0; x = sm_json_next(a.d, x))
			same = alt_set_has(op, &set, a.d, x);
		alt_set_free(&set);
		return same;
	}
	if (strcmp(ta, "L") == 0) {
		if (sm_json_count(a.d, pa) != sm_json_count(b.d, pb))
			return false;
		for (x = sm_json_first(a.d, pa), y = sm_json_first(b.d, pb); x >= 0 && y >= 0;
		     x = sm_json_next(a.d, x), y = sm_json_next(b.d, y))
			if (!alt_value_equal(op, (struct alt_val){ a.d, x },
					     (struct alt_val){ b.d, y }))
				return false;
		return true;
	}
	if (strcmp(ta, "M") == 0) {
		if (sm_json_count(a.d, pa) != sm_json_count(b.d, pb))
			return false;
		for (x = sm_json_first(a.d, pa); x >= 0; x = sm_json_next(a.d, x)) {
			struct sm_bytes k;
			int bv;

			if (str_slot(a.d, x, 0, &k) < 0)
				return false;
			bv = sm_json_getn(b.d, pb, (const char *)k.p, k.len);
			if (bv < 0 ||
			    !alt_value_equal(op,
					     (struct alt_val){ a.d, sm_json_member_value(a.d, x) },
					     (struct alt_val){ b.d, bv }))
				return false;
		}
		return true;
	}
	return false;
}

/* Whether set payload @arr (of @type) has the scalar element string @etok of @ed. */
static bool
set_contains(struct alt_op *op, const struct sm_json_doc *d, int arr, const char *type,
	     struct alt_val unused, const struct sm_json_doc *ed, int etok)
{
	struct sm_ddb_number na, nb;
	struct sm_bytes sa, sb;
	int x;

	(void)unused;
	for (x = sm_json_first(d, arr); x >= 0; x = sm_json_next(d, x)) {
		if (type[0] == 'N') {
			if (number_text(op, d, x, &na) == 0 &&
			    number_text(op, ed, etok, &nb) == 0 &&
			    sm_ddb_number_compare(&na, &nb) == 0)
				return true;
			continue;
		}
		/* S and B elements: equal text is equal value (base64 is canonical here). */
		if (str_slot(d, x, 0, &sa) == 0 && str_slot(ed, etok, 1, &sb) == 0 &&
		    bytes_cmp(sa, sb) == 0)
			return true;
	}
	return false;
}

bool
alt_value_begins_with(struct alt_op *op, struct alt_val a, struct alt_val b)
{
	char ta[5], tb[5];
	struct sm_bytes sa, sb, da, db;
	struct alt_bytes saved;
	uint8_t *x;
	bool r = false;
	int p, q;

	if (alt_value_type(a.d, a.tok, ta, &p) < 0 || alt_value_type(b.d, b.tok, tb, &q) < 0 ||
	    strcmp(ta, tb) != 0)
		return false;
	if (strcmp(ta, "S") == 0)
		/* one scratch slot each: no copy */
		return str_slot(a.d, p, 0, &sa) == 0 && str_slot(b.d, q, 1, &sb) == 0 &&
		       sb.len <= sa.len && memcmp(sa.p, sb.p, sb.len) == 0;
	if (strcmp(ta, "B") != 0)
		return false;
	/* B: a prefix of the decoded bytes (base64 prefixes align on 3-byte groups only) */
	x = sm_malloc(sm_json_span(a.d, p).len + sm_json_span(b.d, q).len + 2);
	if (x == NULL)
		return false;
	saved = op->keys;
	op->keys =
		(struct alt_bytes){ x, 0, sm_json_span(a.d, p).len + sm_json_span(b.d, q).len + 2 };
	if (alt_payload_binary(op, a.d, p, &da) == 0 && alt_payload_binary(op, b.d, q, &db) == 0)
		r = db.len <= da.len && memcmp(da.p, db.p, db.len) == 0;
	op->keys = saved;
	sm_free(x);
	return r;
}

/* For contains(): whether set or list value @set holds scalar value @v. */
bool
alt_value_contains(struct alt_op *op, struct alt_val set, struct alt_val v);

bool
alt_value_contains(struct alt_op *op, struct alt_val set, struct alt_val v)
{
	char ts[5], tv[5];
	int ps, pv, x;
	struct sm_bytes a, b;

	if (alt_value_type(set.d, set.tok, ts, &ps) < 0 || alt_value_type(v.d, v.tok, tv, &pv) < 0)
		return false;
	if (strcmp(ts, "S") == 0 && strcmp(tv, "S") == 0) {
		if (str_slot(set.d, ps, 0, &a) < 0 || str_slot(v.d, pv, 1, &b) < 0)
			return false;
		if (b.len == 0)
			return true;
		return b.len <= a.len && memmem(a.p, a.len, b.p, b.len) != NULL;
	}
	if (strcmp(ts, "B") == 0 && strcmp(tv, "B") == 0) {
		/* compare decoded bytes */
		uint8_t *copy;
		bool found;

		if (binary_slot(set.d, ps, 0, &a) < 0)
			return false;
		copy = sm_malloc(a.len + 1);
		if (copy == NULL)
			return false;
		memcpy(copy, a.p, a.len);
		a.p = copy;
		found = binary_slot(v.d, pv, 0, &b) == 0 &&
			(b.len == 0 || (b.len <= a.len && memmem(a.p, a.len, b.p, b.len) != NULL));
		sm_free(copy);
		return found;
	}
	if (ts[1] == 'S' && ts[0] == tv[0] && tv[1] == '\0')
		return set_contains(op, set.d, ps, ts, (struct alt_val){ NULL, -1 }, v.d, pv);
	if (strcmp(ts, "L") == 0) {
		for (x = sm_json_first(set.d, ps); x >= 0; x = sm_json_next(set.d, x))
			if (alt_value_equal(op, (struct alt_val){ set.d, x }, v))
				return true;
	}
	return false;
}

/* ---- keys ---- */

int
alt_key_part(struct alt_op *op, const struct sm_json_doc *d, int obj, const struct sm_column *c,
	     char type, struct sm_bytes *out)
{
	int v = sm_json_get(d, obj, c->name);

	if (v < 0)
		return bad(op,
			   "One or more parameter values were invalid: Missing the key %s in "
			   "the item",
			   c->name);
	return alt_key_value(op, d, v, c, type, out);
}

int
alt_key_value(struct alt_op *op, const struct sm_json_doc *d, int v, const struct sm_column *c,
	      char type, struct sm_bytes *out)
{
	struct sm_ddb_number n;
	char t[5], err[200];
	struct sm_bytes s;
	int p;
	uint8_t *dst;
	size_t len;

	if (alt_value_type(d, v, t, &p) < 0 || t[1] != '\0' || t[0] != type) {
		snprintf(op->errmsg, sizeof(op->errmsg),
			 "One or more parameter values were invalid: Type mismatch for key %s "
			 "expected: %c actual: %s",
			 c->name, type, alt_value_type(d, v, t, &p) < 0 ? "?" : t);
		return -EINVAL;
	}
	switch (type) {
	case 'S':
		if (str_slot(d, p, 0, &s) < 0)
			return bad(op, "%s",
				   "One or more parameter values were invalid: S must be "
				   "a string");
		if (s.len == 0)
			return bad(op,
				   "One or more parameter values are not valid. The "
				   "AttributeValue for a key attribute cannot contain an empty "
				   "string value. Key: %s",
				   c->name);
		dst = alt_bytes_put(&op->keys, s.p, s.len);
		if (dst == NULL)
			return -ENOSPC;
		out->p = dst;
		out->len = s.len;
		break;
	case 'N':
		if (number_text(op, d, p, &n) < 0)
			return -EINVAL;
		if (op->keys.cap - op->keys.len < SM_DDB_NUMBER_DECIMAL_MAX)
			return -ENOSPC;
		dst = op->keys.p + op->keys.len;
		len = sm_ddb_number_to_decimal(&n, dst, SM_DDB_NUMBER_DECIMAL_MAX);
		op->keys.len += len;
		out->p = dst;
		out->len = (uint32_t)len;
		(void)err;
		break;
	default:
		if (alt_payload_binary(op, d, p, &s) < 0) {
			op->ser_err = true;
			return bad(op, "%s",
				   "One or more parameter values were invalid: B must be "
				   "base64-encoded binary data");
		}
		if (s.len == 0)
			return bad(op,
				   "One or more parameter values are not valid. The "
				   "AttributeValue for a key attribute cannot contain an empty "
				   "binary value. Key: %s",
				   c->name);
		*out = s;
		break;
	}
	if (out->len > (c->kind == SM_COL_PARTITION ? 2048u : 1024u))
		return bad(op,
			   "One or more parameter values were invalid: Size of key %s exceeds "
			   "the limit",
			   c->name);
	return 0;
}

int
alt_item_key(struct alt_op *op, const struct sm_json_doc *d, int obj, bool whole_item,
	     struct sm_key *pk, struct sm_key *ck)
{
	const struct alt_table *t = &op->tab;
	int ret;

	if (sm_json_type(d, obj) != SM_JSON_OBJECT)
		return bad(op, "%s",
			   "One or more parameter values were invalid: the key must be a "
			   "map of attribute values");
	if (!whole_item && sm_json_count(d, obj) != (t->range ? 2u : 1u))
		return bad(op, "%s", "The provided key element does not match the schema");
	pk->n = 1;
	ret = alt_key_part(op, d, obj, t->hash, t->hash_type, &pk->part[0]);
	if (ret < 0)
		return ret;
	ck->n = 0;
	if (t->range != NULL) {
		ck->n = 1;
		ret = alt_key_part(op, d, obj, t->range, t->range_type, &ck->part[0]);
	}
	return ret;
}

int
alt_view_key(struct alt_op *op, const struct sm_json_doc *d, int obj, struct sm_key *pk,
	     struct sm_key *ck)
{
	const struct alt_table *t = &op->tab;
	unsigned i;
	int ret;

	if (sm_json_type(d, obj) != SM_JSON_OBJECT)
		return bad(op, "%s",
			   "One or more parameter values were invalid: the key must be a "
			   "map of attribute values");
	if (sm_json_count(d, obj) != (t->range ? 2u : 1u) + t->nxck)
		return bad(op, "%s", "The provided key element does not match the schema");
	pk->n = 1;
	ret = alt_key_part(op, d, obj, t->hash, t->hash_type, &pk->part[0]);
	ck->n = 0;
	if (ret == 0 && t->range != NULL)
		ret = alt_key_part(op, d, obj, t->range, t->range_type, &ck->part[ck->n++]);
	for (i = 0; ret == 0 && i < t->nxck; i++)
		ret = alt_key_part(op, d, obj, t->xck[i], t->xck_type[i], &ck->part[ck->n++]);
	return ret;
}

void
alt_write_key_value(struct sm_json_out *o, char type, struct sm_bytes v)
{
	struct sm_ddb_number n;
	char text[SM_DDB_NUMBER_TEXT_MAX], err[16];
	char *b64;
	size_t len;

	sm_json_out_obj_begin(o);
	switch (type) {
	case 'S':
		sm_json_out_key(o, "S");
		sm_json_out_strn(o, (const char *)v.p, v.len);
		break;
	case 'N':
		sm_json_out_key(o, "N");
		if (sm_ddb_number_from_decimal(v, &n, err, sizeof(err)) == 0)
			sm_ddb_number_format(&n, text, sizeof(text));
		else
			strcpy(text, "0");
		sm_json_out_str(o, text);
		break;
	default:
		sm_json_out_key(o, "B");
		len = BASE64_ENCODE_RAW_LENGTH(v.len);
		b64 = scratch(1, len);
		if (b64 == NULL) {
			o->err = -ENOMEM;
			break;
		}
		base64_encode_raw(b64, v.len, v.p);
		sm_json_out_strn(o, b64, len);
		break;
	}
	sm_json_out_obj_end(o);
}

void
alt_write_row_item(struct alt_op *op, struct sm_json_out *o, const struct sm_key *pk,
		   const struct sm_key *ck, const struct sm_cell_view *attrs)
{
	const struct alt_table *t = &op->tab;
	struct sm_coll_iter it;
	struct sm_bytes k, v;

	sm_json_out_obj_begin(o);
	sm_json_out_key(o, t->hash->name);
	alt_write_key_value(o, t->hash_type, pk->part[0]);
	if (t->range != NULL && ck != NULL && ck->n > 0) {
		sm_json_out_key(o, t->range->name);
		alt_write_key_value(o, t->range_type, ck->part[0]);
	}
	if (attrs != NULL && attrs->present && sm_coll_iter_init(&it, attrs->value) == 0) {
		while (sm_coll_next(&it, &k, &v, true)) {
			sm_json_out_keyn(o, (const char *)k.p, k.len);
			sm_json_out_raw(o, (const char *)v.p, v.len);
		}
	}
	sm_json_out_obj_end(o);
}

void
alt_write_view_row(struct alt_op *op, struct sm_json_out *o, const struct sm_key *pk,
		   const struct sm_key *ck, const struct sm_cell_view *attrs)
{
	const struct alt_table *t = &op->tab;
	unsigned i, first = t->range != NULL ? 1 : 0;
	struct sm_coll_iter it;
	struct sm_bytes k, v;

	sm_json_out_obj_begin(o);
	sm_json_out_key(o, t->hash->name);
	alt_write_key_value(o, t->hash_type, pk->part[0]);
	if (t->range != NULL && ck->n > 0) {
		sm_json_out_key(o, t->range->name);
		alt_write_key_value(o, t->range_type, ck->part[0]);
	}
	/* the base key attributes in the view's clustering key */
	for (i = 0; i < t->nxck && first + i < ck->n; i++) {
		sm_json_out_key(o, t->xck[i]->name);
		alt_write_key_value(o, t->xck_type[i], ck->part[first + i]);
	}
	if (attrs->present && sm_coll_iter_init(&it, attrs->value) == 0) {
		while (sm_coll_next(&it, &k, &v, true)) {
			sm_json_out_keyn(o, (const char *)k.p, k.len);
			sm_json_out_raw(o, (const char *)v.p, v.len);
		}
	}
	sm_json_out_obj_end(o);
}

void
alt_name_error(struct alt_op *op, size_t len, const char *prefix)
{
	snprintf(op->errmsg, sizeof(op->errmsg),
		 "One or more parameter values were invalid: %s%s", prefix,
		 len == 0 ? "Empty attribute name"
			  : "Attribute name is too large, must be less than 65536 bytes");
}

/* A number's size: a byte per two significant digits, and one (trailing zeros trimmed). */
static size_t
number_size(struct sm_bytes s)
{
	size_t digits = 0, zeros = 0;
	uint32_t i;

	for (i = 0; i < s.len && s.p[i] != 'e' && s.p[i] != 'E'; i++) {
		if (s.p[i] >= '1' && s.p[i] <= '9') {
			digits += zeros + 1;
			zeros = 0;
		} else if (s.p[i] == '0' && digits > 0) {
			zeros++;
		}
	}
	return (digits + 1) / 2 + 1;
}

/* DynamoDB's size of one attribute value (recursion bounded by the 32 levels values may nest). */
static size_t
value_size(struct alt_op *op, const struct sm_json_doc *d, int v)
{
	struct sm_bytes s;
	size_t n = 0;
	char t[5];
	int p, e;

	if (alt_value_type(d, v, t, &p) < 0)
		return sm_json_span(d, v).len;
	switch (t[0]) {
	case 'S':
		if (t[1] == 'S') {
			for (e = sm_json_first(d, p); e >= 0; e = sm_json_next(d, e))
				n += alt_payload_str(op, d, e, &s) == 0 ? s.len : 0;
			return n;
		}
		return alt_payload_str(op, d, p, &s) == 0 ? s.len : 0;
	case 'N':
		if (t[1] == 'S') {
			for (e = sm_json_first(d, p); e >= 0; e = sm_json_next(d, e))
				n += number_size(sm_json_span(d, e));
			return n;
		}
		return number_size(sm_json_span(d, p));
	case 'B':
		if (t[1] == 'S') {
			for (e = sm_json_first(d, p); e >= 0; e = sm_json_next(d, e))
				n += sm_json_span(d, e).len * 3 / 4;
			return n;
		}
		if (t[1] == 'O')
			return 1; /* BOOL */
		return sm_json_span(d, p).len * 3 / 4;
	case 'L':
		for (e = sm_json_first(d, p); e >= 0; e = sm_json_next(d, e))
			n += value_size(op, d, e) + 1;
		return n + 3;
	case 'M':
		for (e = sm_json_first(d, p); e >= 0; e = sm_json_next(d, e))
			n += (alt_payload_str(op, d, e, &s) == 0 ? s.len : 0) +
			     value_size(op, d, sm_json_member_value(d, e)) + 1;
		return n + 3;
	default:
		return 1; /* NULL */
	}
}

size_t
alt_item_size(struct alt_op *op, const struct sm_json_doc *d, int obj)
{
	struct sm_bytes k;
	size_t n = 0;
	int e;

	for (e = sm_json_first(d, obj); e >= 0; e = sm_json_next(d, e))
		n += (alt_payload_str(op, d, e, &k) == 0 ? k.len : 0) +
		     value_size(op, d, sm_json_member_value(d, e));
	return n;
}

static int
span_cmp(const void *a, const void *b)
{
	const struct sm_bytes *x = a, *y = b;
	int c = memcmp(x->p, y->p, SM_MIN(x->len, y->len));

	return c ? c : (int)x->len - (int)y->len;
}

int
alt_check_attributes_to_get(struct alt_op *op, int tok)
{
	struct sm_bytes small[16], *v = small, s;
	unsigned n = 0, i, count = sm_json_count(&op->doc, tok);
	int e, ret = 0;

	if (tok < 0)
		return 0;
	if (sm_json_type(&op->doc, tok) != SM_JSON_ARRAY || count == 0) {
		snprintf(op->errmsg, sizeof(op->errmsg),
			 "1 validation error detected: Value '%s' at 'attributesToGet' failed to "
			 "satisfy constraint: Member must have length greater than or equal to 1",
			 count == 0 ? "[]" : "null");
		return -EINVAL;
	}
	if (count > SM_ARRAY_SIZE(small)) {
		v = sm_malloc(count * sizeof(*v));
		if (v == NULL)
			return -ENOMEM;
	}
	for (e = sm_json_first(&op->doc, tok); e >= 0; e = sm_json_next(&op->doc, e)) {
		if (sm_json_type(&op->doc, e) != SM_JSON_STRING) {
			snprintf(op->errmsg, sizeof(op->errmsg),
				 "AttributesToGet must be a list of strings");
			ret = -EINVAL;
			goto out;
		}
		if (alt_payload_str(op, &op->doc, e, &s) == 0 &&
		    (s.len == 0 || s.len > ALT_MAX_ATTR_NAME)) {
			alt_name_error(op, s.len, "AttributesToGet - ");
			ret = -EINVAL;
			goto out;
		}
		v[n++] = sm_json_span(&op->doc, e);
	}
	/* n log n: a client sets n */
	qsort(v, n, sizeof(*v), span_cmp);
	for (i = 1; i < n; i++) {
		if (span_cmp(&v[i - 1], &v[i]) == 0) {
			snprintf(op->errmsg, sizeof(op->errmsg),
				 "One or more parameter values were invalid: Duplicate value in "
				 "attribute name: %.*s",
				 (int)SM_MIN(v[i].len - 2, 255u), (const char *)v[i].p + 1);
			ret = -EINVAL;
			goto out;
		}
	}
out:
	if (v != small)
		sm_free(v);
	return ret;
}
