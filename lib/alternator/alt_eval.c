/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Expression evaluation over items. An item is a JSON object text of
 * attribute values, parsed once (sm_json); paths walk it, computed values
 * are written as JSON into temporary documents, and an update builds the
 * new item's JSON text.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alt_priv.h"

/* ---- per-op storage ---- */

/* A block of kept strings beyond op->names: blocks never move either. */
struct alt_kept {
	struct alt_kept *next;
	size_t len, cap;
	uint8_t data[];
};

#define KEPT_BLOCK 16384u

/*
 * A NUL-terminated copy of @n bytes in op->names (reserved: never moves),
 * or once that is full in a block of its own: a request may name more
 * than any reservation (thousands of ExpressionAttributeNames keys), and a
 * NULL here read as "out of memory" or as a missing attribute.
 */
static __attribute__((noinline)) const char *
keep_slow(struct alt_op *op, const void *p, size_t n)
{
	struct alt_kept *k = op->kept;
	uint8_t *d;

	if (op->names.p == NULL && alt_bytes_reserve(&op->names, KEPT_BLOCK) < 0)
		return NULL;
	if (op->names.cap - op->names.len >= n + 1) {
		d = op->names.p + op->names.len;
		op->names.len += n + 1;
	} else {
		if (k == NULL || k->cap - k->len < n + 1) {
			k = sm_malloc(sizeof(*k) + SM_MAX(n + 1, KEPT_BLOCK));
			if (k == NULL)
				return NULL;
			k->len = 0;
			k->cap = SM_MAX(n + 1, KEPT_BLOCK);
			k->next = op->kept;
			op->kept = k;
		}
		d = k->data + k->len;
		k->len += n + 1;
	}
	if (n > 0)
		memcpy(d, p, n);
	d[n] = '\0';
	return (const char *)d;
}

const char *
alt_keep_str(struct alt_op *op, const void *p, size_t n)
{
	uint8_t *d;

	if (SM_UNLIKELY(op->names.p == NULL || op->names.cap - op->names.len <= n))
		return keep_slow(op, p, n);
	d = op->names.p + op->names.len;
	op->names.len += n + 1;
	memcpy(d, p, n);
	d[n] = '\0';
	return (const char *)d;
}

/*
 * An attribute name may hold NULs (DynamoDB allows any character): UpdateItem
 * keeps its names as C strings, so a NUL is kept as the two bytes C0 80 that
 * no valid UTF-8 input holds, and the JSON writer turns back into \u0000.
 */
static const char *
alt_keep_name(struct alt_op *op, const void *p, size_t n)
{
	const uint8_t *s = p;
	size_t nul = 0, i, j;
	const char *kept;
	uint8_t *d;

	for (i = 0; i < n; i++)
		nul += s[i] == 0;
	if (SM_LIKELY(nul == 0))
		return alt_keep_str(op, p, n);
	op->names_nul = true;
	d = sm_malloc(n + nul);
	if (d == NULL)
		return NULL;
	for (i = 0, j = 0; i < n; i++) {
		if (s[i] != 0) {
			d[j++] = s[i];
			continue;
		}
		d[j++] = 0xc0;
		d[j++] = 0x80;
	}
	kept = alt_keep_str(op, d, j);
	sm_free(d);
	return kept;
}

/* The name alt_keep_name() kept, back with its NULs, in place; returns its length. */
size_t
alt_name_unkeep(uint8_t *p, size_t n)
{
	size_t i, j;

	for (i = 0, j = 0; i < n; i++, j++) {
		if (p[i] == 0xc0 && i + 1 < n && p[i + 1] == 0x80) {
			p[j] = 0;
			i++;
		} else {
			p[j] = p[i];
		}
	}
	return j;
}

int
alt_keep_reserve(struct alt_op *op, size_t n)
{
	if (op->names.len > 0 || op->kept != NULL)
		return 0;
	return alt_bytes_reserve(&op->names, n);
}

void
alt_keep_release(struct alt_op *op)
{
	struct alt_kept *k;

	while ((k = op->kept) != NULL) {
		op->kept = k->next;
		sm_free(k);
	}
}

int
alt_tmp_doc(struct alt_op *op, struct sm_json_out **o, struct sm_json_doc **d)
{
	unsigned i = op->ntmp++ % ALT_TMP_DOCS;

	*o = &op->tmpout[i];
	*d = &op->tmp[i];
	sm_json_out_reset(*o);
	return 0;
}

/* Parse what @o holds into @d; the value at token 0. */
static int
tmp_parse(struct sm_json_out *o, struct sm_json_doc *d)
{
	if (o->err != 0)
		return o->err;
	return sm_json_parse(d, o->p, o->len, 0);
}

void
alt_op_free_exprs(struct alt_op *op)
{
	sm_ddb_expr_free(op->cond);
	sm_ddb_expr_free(op->update);
	sm_ddb_expr_free(op->proj);
	sm_ddb_expr_free(op->filter);
	sm_ddb_expr_free(op->keycond);
	op->cond = op->update = op->proj = op->filter = op->keycond = NULL;
}

/* ---- placeholders ---- */

/* Resolutions of one request before they are remembered. */
#define MEMO_AFTER 32u

static uint32_t
fnv1a(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/*
 * By the placeholder's address: placeholders live in the request's parsed
 * expressions, which outlive every lookup of the request, so equal
 * addresses are the same placeholder (one written twice resolves twice).
 */
static uint32_t
memo_slot(const struct alt_op *op, const char *ref)
{
	uint32_t i = (uint32_t)(((uintptr_t)ref >> 3) * 2654435761u) & (op->name_memo_cap - 1);

	while (op->name_memo[i].ref != NULL && op->name_memo[i].ref != ref)
		i = (i + 1) & (op->name_memo_cap - 1);
	return i;
}

/* Room for one more memo entry, at most half full; 0 or -ENOMEM. */
static int
memo_reserve(struct alt_op *op)
{
	struct alt_name_memo *old = op->name_memo;
	unsigned cap = op->name_memo_cap, i;

	if (2 * (op->name_memo_n + 1) <= cap)
		return 0;
	op->name_memo = sm_calloc(cap ? 2 * cap : 16, sizeof(*op->name_memo));
	if (op->name_memo == NULL) {
		op->name_memo = old;
		return -ENOMEM;
	}
	op->name_memo_cap = cap ? 2 * cap : 16;
	for (i = 0; i < cap; i++)
		if (old[i].ref != NULL)
			op->name_memo[memo_slot(op, old[i].ref)] = old[i];
	sm_free(old);
	return 0;
}

/*
 * Each placeholder is looked up and copied once per request: as a copy per
 * use, a Scan filter on #n filled op->names after a few thousand items and
 * every later item read as lacking the attribute (908 of 12,000 matched).
 */
static __attribute__((noinline)) const char *
resolve_remember(struct alt_op *op, const char *name, struct sm_bytes s)
{
	const char *kept = alt_keep_str(op, s.p, s.len);
	uint32_t i;

	if (kept == NULL || memo_reserve(op) < 0)
		return kept;
	i = memo_slot(op, name);
	op->name_memo[i].ref = name;
	op->name_memo[i].name = kept;
	op->name_memo_n++;
	return kept;
}

const char *
alt_resolve_name(struct alt_op *op, const char *name)
{
	struct sm_bytes s;
	uint32_t i;
	int tok;

	if (name[0] != '#')
		return name;
	if (SM_UNLIKELY(op->name_memo_n > 0)) {
		i = memo_slot(op, name);
		if (op->name_memo[i].ref != NULL)
			return op->name_memo[i].name;
	}
	tok = sm_json_get(&op->doc, op->names_tok, name);
	if (tok < 0 || alt_payload_str(op, &op->doc, tok, &s) < 0)
		return NULL;
	/* The few resolutions of a single-item request are not worth remembering. */
	if (SM_LIKELY(++op->nresolved <= MEMO_AFTER))
		return alt_keep_str(op, s.p, s.len);
	return resolve_remember(op, name, s);
}

const char *
alt_env_name(void *arg, const char *ref)
{
	struct alt_op *op = arg;

	if (op->names_tok < 0)
		return NULL;
	return alt_resolve_name(op, ref);
}

const char *
alt_env_value_type(void *arg, const char *ref)
{
	static const char *const types[] = { "S",  "N",	 "B",  "BOOL", "NULL",
					     "SS", "NS", "BS", "L",    "M" };
	struct alt_op *op = arg;
	char t[5];
	int tok, p;
	unsigned i;

	if (op->values_tok < 0)
		return NULL;
	tok = sm_json_get(&op->doc, op->values_tok, ref);
	if (tok < 0)
		return NULL;
	if (alt_value_type(&op->doc, tok, t, &p) < 0)
		return "";
	for (i = 0; i < SM_ARRAY_SIZE(types); i++)
		if (strcmp(types[i], t) == 0)
			return types[i];
	return "";
}

static const struct sm_ddb_expr_env *
op_env(struct alt_op *op, struct sm_ddb_expr_env *env)
{
	env->name = alt_env_name;
	env->value_type = alt_env_value_type;
	env->arg = op;
	return env;
}

/* Value operand @o as an attribute value of the request, or {NULL, -1}. */
static struct alt_val
const_value(struct alt_op *op, const struct sm_ddb_operand *o)
{
	if (o->kind != SM_DDB_OP_VALUE)
		return (struct alt_val){ NULL, -1 };
	return (struct alt_val){ &op->doc, sm_json_get(&op->doc, op->values_tok, o->value) };
}

/*
 * What DynamoDB refuses in a condition from the request's values alone,
 * whatever the item (a missing attribute, or a short-circuit, would hide it
 * from the evaluation): BETWEEN bounds of two types or in the wrong order,
 * attribute_type() with a type name that is none, or a path where the type
 * name goes. Recursion is bounded by SM_DDB_EXPR_MAX_NESTING (the parser's).
 */
static int
static_check(struct alt_op *op, const char *kind, const struct sm_ddb_cond *c)
{
	static const char *const types[] = { "S",  "N",  "B",  "BOOL", "NULL",
					     "SS", "NS", "BS", "L",    "M" };
	struct alt_val lo, hi, t;
	struct sm_bytes a, b, sb;
	char tl[5], th[5];
	unsigned i;
	int cmp, p;

	switch (c->kind) {
	case SM_DDB_COND_OR:
	case SM_DDB_COND_AND:
		if (static_check(op, kind, c->left) < 0)
			return -EINVAL;
		return static_check(op, kind, c->right);
	case SM_DDB_COND_NOT:
		return static_check(op, kind, c->left);
	case SM_DDB_COND_BETWEEN:
		lo = const_value(op, c->operands[1]);
		hi = const_value(op, c->operands[2]);
		if (lo.tok < 0 || hi.tok < 0 || alt_value_type(lo.d, lo.tok, tl, &p) < 0 ||
		    alt_value_type(hi.d, hi.tok, th, &p) < 0)
			return 0;
		a = sm_json_span(lo.d, lo.tok);
		b = sm_json_span(hi.d, hi.tok);
		if (strcmp(tl, th) != 0) {
			snprintf(op->errmsg, sizeof(op->errmsg),
				 "Invalid %s: The BETWEEN operator requires same data type for lower "
				 "and upper bounds; lower bound operand: AttributeValue: %.*s, upper "
				 "bound operand: AttributeValue: %.*s",
				 kind, (int)SM_MIN(a.len, 64u), (const char *)a.p,
				 (int)SM_MIN(b.len, 64u), (const char *)b.p);
			return -EINVAL;
		}
		if (alt_value_compare(op, lo, hi, &cmp) < 0) {
			snprintf(op->errmsg, sizeof(op->errmsg),
				 "Invalid %s: Incorrect operand type for operator or function; "
				 "operator or function: BETWEEN, operand type: %s",
				 kind, tl);
			return -EINVAL;
		}
		if (cmp > 0) {
			snprintf(op->errmsg, sizeof(op->errmsg),
				 "Invalid %s: The BETWEEN operator requires upper bound to be greater "
				 "than or equal to lower bound; lower bound operand: AttributeValue: "
				 "%.*s, upper bound operand: AttributeValue: %.*s",
				 kind, (int)SM_MIN(a.len, 64u), (const char *)a.p,
				 (int)SM_MIN(b.len, 64u), (const char *)b.p);
			return -EINVAL;
		}
		return 0;
	case SM_DDB_COND_CALL:
		if (c->operands[0]->func != SM_DDB_FN_ATTRIBUTE_TYPE || c->operands[0]->nargs < 2)
			return 0;
		if (c->operands[0]->args[1]->kind != SM_DDB_OP_VALUE) {
			snprintf(op->errmsg, sizeof(op->errmsg),
				 "Invalid %s: Incorrect operand type for operator or function; "
				 "operator or function: attribute_type, operand type: a document path",
				 kind);
			return -EINVAL;
		}
		t = const_value(op, c->operands[0]->args[1]);
		if (t.tok < 0 || alt_value_type(t.d, t.tok, tl, &p) < 0 || strcmp(tl, "S") != 0 ||
		    alt_payload_str(op, t.d, p, &sb) < 0)
			return 0; /* the parser's type checks said it */
		for (i = 0; i < SM_ARRAY_SIZE(types); i++)
			if (strlen(types[i]) == sb.len && memcmp(types[i], sb.p, sb.len) == 0)
				return 0;
		snprintf(op->errmsg, sizeof(op->errmsg),
			 "Invalid %s: Invalid attribute type name found; type: %.*s, valid types: { "
			 "B,NULL,SS,BOOL,L,BS,N,NS,S,M }",
			 kind, (int)SM_MIN(sb.len, 32u), (const char *)sb.p);
		return -EINVAL;
	default:
		return 0;
	}
}

int
alt_parse_expr(struct alt_op *op, const char *member, enum sm_ddb_expr_kind kind,
	       struct sm_ddb_expr **out)
{
	int tok = sm_json_get(&op->doc, op->root, member);
	struct sm_ddb_expr_env env;
	struct sm_bytes text;
	char err[512];
	int ret;

	*out = NULL;
	if (tok < 0)
		return 0;
	if (sm_json_type(&op->doc, tok) != SM_JSON_STRING ||
	    alt_payload_str(op, &op->doc, tok, &text) < 0) {
		alt_fail(op, "ValidationException", "%s must be a string", member);
		return -EINVAL;
	}
	ret = sm_ddb_expr_parse(kind, (const char *)text.p, text.len, op_env(op, &env), out, err,
				sizeof(err));
	if (ret == -ENOMEM) {
		alt_fail(op, "InternalServerError", "out of memory parsing %s", member);
		return ret;
	}
	if (ret < 0) {
		alt_fail(op, "ValidationException", "%s", err);
		return ret;
	}
	if ((kind == SM_DDB_CONDITION || kind == SM_DDB_FILTER) &&
	    static_check(op, sm_ddb_expr_kind_name(kind), (*out)->cond) < 0) {
		alt_fail(op, "ValidationException", "%s", op->errmsg);
		return -EINVAL;
	}
	return 0;
}

/*
 * Every key of ExpressionAttributeNames (@names) or ...Values must be used
 * by some expression. Linear in the keys and the placeholders: the keys go
 * in a hash table that each placeholder marks (a request may hold many).
 */
static int
check_map(struct alt_op *op, int map, bool names)
{
	struct sm_ddb_expr *ex[] = { op->cond, op->update, op->proj, op->filter, op->keycond };
	/* the few keys of most requests on the stack and compared directly; a
	 * hash table only for many */
	const char *keys_small[8], **keys = keys_small;
	bool used_small[8] = { false }, *used = used_small;
	uint32_t *slots = NULL, mask = 0, s;
	unsigned n = 0, count, i, j, nrefs;
	char err[512];
	struct sm_bytes k;
	int e, ret = -ENOMEM;

	if (map < 0)
		return 0;
	if (sm_json_type(&op->doc, map) != SM_JSON_OBJECT) {
		alt_fail(op, "ValidationException", "%s must be a map",
			 names ? "ExpressionAttributeNames" : "ExpressionAttributeValues");
		return -EINVAL;
	}
	count = sm_json_count(&op->doc, map);
	if (count == 0) {
		alt_fail(op, "ValidationException", "ExpressionAttribute%s must not be empty",
			 names ? "Names" : "Values");
		return -EINVAL;
	}
	if (count > SM_ARRAY_SIZE(keys_small)) {
		for (mask = 1; mask < 2 * count; mask <<= 1)
			;
		keys = sm_malloc(count * sizeof(*keys));
		used = sm_calloc(count, sizeof(*used));
		slots = sm_calloc(mask, sizeof(*slots));
		if (keys == NULL || used == NULL || slots == NULL)
			goto nomem;
		mask--;
	}
	for (e = sm_json_first(&op->doc, map); e >= 0 && n < count;
	     e = sm_json_next(&op->doc, e)) {
		if (alt_payload_str(op, &op->doc, e, &k) < 0 ||
		    (keys[n] = alt_keep_str(op, k.p, k.len)) == NULL)
			goto nomem;
		if (names) {
			struct sm_bytes v;
			int vt = sm_json_member_value(&op->doc, e);

			/* what a #name stands for is an attribute name: the same limits */
			if (sm_json_type(&op->doc, vt) == SM_JSON_STRING &&
			    alt_payload_str(op, &op->doc, vt, &v) == 0 &&
			    (v.len == 0 || v.len > ALT_MAX_ATTR_NAME)) {
				char pre[300];

				snprintf(pre, sizeof(pre),
					 "ExpressionAttributeNames contains invalid value for key %.*s: ",
					 (int)SM_MIN(strlen(keys[n]), 255u), keys[n]);
				alt_name_error(op, v.len, pre);
				alt_fail(op, "ValidationException", "%s", op->errmsg);
				ret = -EINVAL;
				goto out;
			}
		}
		if (slots != NULL) {
			for (s = fnv1a(keys[n]) & mask; slots[s] != 0; s = (s + 1) & mask)
				;
			slots[s] = n + 1; /* key index + 1 */
		}
		n++;
	}
	/* few keys: each looked for until found, as sm_ddb_expr_uses() does */
	for (s = 0; s < n && slots == NULL; s++)
		for (i = 0; i < SM_ARRAY_SIZE(ex) && !used[s]; i++)
			used[s] = ex[i] != NULL && sm_ddb_expr_uses(ex[i], keys[s]);
	for (i = 0; i < SM_ARRAY_SIZE(ex) && slots != NULL; i++) {
		const char *const *refs;

		if (ex[i] == NULL)
			continue;
		refs = names ? ex[i]->names : ex[i]->values;
		nrefs = names ? ex[i]->nnames : ex[i]->nvalues;
		for (j = 0; j < nrefs; j++)
			for (s = fnv1a(refs[j]) & mask; slots[s] != 0; s = (s + 1) & mask)
				if (strcmp(keys[slots[s] - 1], refs[j]) == 0)
					used[slots[s] - 1] = true;
	}
	ret = sm_ddb_expr_unused(names, keys, used, n, err, sizeof(err));
	if (ret == -ENOMEM)
		goto nomem;
	if (ret < 0)
		alt_fail(op, "ValidationException", "%s", err);
	goto out;
nomem:
	alt_fail(op, "InternalServerError", "out of memory");
	ret = -ENOMEM;
out:
	if (keys != keys_small) {
		sm_free(keys);
		sm_free(used);
	}
	sm_free(slots);
	return ret;
}

int
alt_check_unused(struct alt_op *op)
{
	bool any = op->cond || op->update || op->proj || op->filter || op->keycond;
	int e;

	if (!any && op->values_tok >= 0) {
		alt_fail(op, "ValidationException",
			 "ExpressionAttributeValues can only be specified when using expressions");
		return -EINVAL;
	}
	if (!any && op->names_tok >= 0) {
		alt_fail(op, "ValidationException",
			 "ExpressionAttributeNames can only be specified when using expressions");
		return -EINVAL;
	}
	if (check_map(op, op->names_tok, true) < 0 || check_map(op, op->values_tok, false) < 0)
		return -EINVAL;
	/* Every value must be a valid attribute value. */
	for (e = op->values_tok >= 0 ? sm_json_first(&op->doc, op->values_tok) : -1; e >= 0;
	     e = sm_json_next(&op->doc, e)) {
		sm_json_out_reset(&op->scratch);
		if (alt_value_write(op, &op->doc, sm_json_member_value(&op->doc, e), &op->scratch,
				    false, "ExpressionAttributeValues") < 0) {
			alt_fail(op, "ValidationException",
				 "ExpressionAttributeValues contains invalid value: %s",
				 op->errmsg);
			return -EINVAL;
		}
	}
	return 0;
}

/* ---- paths and operands ---- */

/* The value at @p in item @itok of @d (-1 when absent). */
static int
resolve_path(struct alt_op *op, const struct sm_json_doc *d, int itok, const struct sm_ddb_path *p)
{
	const char *name;
	char t[5];
	int v, pay;
	unsigned i;

	if (itok < 0)
		return -1;
	name = alt_resolve_name(op, p->elems[0].name);
	if (name == NULL)
		return -1;
	v = sm_json_get(d, itok, name);
	for (i = 1; i < p->nelems && v >= 0; i++) {
		if (alt_value_type(d, v, t, &pay) < 0)
			return -1;
		if (p->elems[i].name != NULL) {
			if (strcmp(t, "M") != 0)
				return -1;
			name = alt_resolve_name(op, p->elems[i].name);
			v = name ? sm_json_get(d, pay, name) : -1;
		} else {
			if (strcmp(t, "L") != 0)
				return -1;
			v = sm_json_at(d, pay, p->elems[i].index);
		}
	}
	return v;
}

static int
write_number(struct alt_op *op, const struct sm_ddb_number *n, struct alt_val *out)
{
	struct sm_json_out *o;
	struct sm_json_doc *d;
	char text[SM_DDB_NUMBER_TEXT_MAX];

	alt_tmp_doc(op, &o, &d);
	sm_ddb_number_format(n, text, sizeof(text));
	sm_json_out_obj_begin(o);
	sm_json_out_key(o, "N");
	sm_json_out_str(o, text);
	sm_json_out_obj_end(o);
	if (tmp_parse(o, d) < 0)
		return -ENOMEM;
	out->d = d;
	out->tok = 0;
	return 0;
}

static int
val_number(struct alt_op *op, struct alt_val v, struct sm_ddb_number *n)
{
	char t[5], err[200];
	struct sm_bytes s;
	int p;

	if (alt_value_type(v.d, v.tok, t, &p) < 0 || strcmp(t, "N") != 0 ||
	    alt_payload_str(op, v.d, p, &s) < 0)
		return -EINVAL;
	return sm_ddb_number_parse((const char *)s.p, s.len, n, err, sizeof(err));
}

/* The evaluation of an operand; *present false when a path is absent. */
/* List @a (payload @pa) then @b's elements, as a new list value in a temporary document. */
static int
concat_lists(struct alt_op *op, struct alt_val a, int pa, struct alt_val b, int pb,
		 struct alt_val *out)
{
	struct sm_json_out *w;
	struct sm_json_doc *wd;
	struct sm_bytes raw;
	int x;

	if (alt_tmp_doc(op, &w, &wd) < 0)
		return -ENOMEM;
	sm_json_out_obj_begin(w);
	sm_json_out_key(w, "L");
	sm_json_out_arr_begin(w);
	for (x = sm_json_first(a.d, pa); x >= 0; x = sm_json_next(a.d, x)) {
		raw = sm_json_span(a.d, x);
		sm_json_out_raw(w, (const char *)raw.p, raw.len);
	}
	for (x = sm_json_first(b.d, pb); x >= 0; x = sm_json_next(b.d, x)) {
		raw = sm_json_span(b.d, x);
		sm_json_out_raw(w, (const char *)raw.p, raw.len);
	}
	sm_json_out_arr_end(w);
	sm_json_out_obj_end(w);
	if (tmp_parse(w, wd) < 0)
		return -ENOMEM;
	out->d = wd;
	out->tok = 0;
	return 0;
}

static int
eval_operand(struct alt_op *op, const struct sm_ddb_operand *o, const struct sm_json_doc *d,
	     int itok, struct alt_val *out, bool *present)
{
	struct alt_val a, b;
	bool pa, pb;
	char ta[5], tb[5], err[200];
	int p, q, ret;

	*present = true;
	switch (o->kind) {
	case SM_DDB_OP_PATH:
		out->d = d;
		out->tok = resolve_path(op, d, itok, &o->path);
		*present = out->tok >= 0;
		return 0;
	case SM_DDB_OP_VALUE:
		out->d = &op->doc;
		out->tok = sm_json_get(&op->doc, op->values_tok, o->value);
		*present = out->tok >= 0;
		return 0;
	case SM_DDB_OP_PLUS:
	case SM_DDB_OP_MINUS: {
		struct sm_ddb_number na, nb, r;

		ret = eval_operand(op, o->args[0], d, itok, &a, &pa);
		if (ret == 0)
			ret = eval_operand(op, o->args[1], d, itok, &b, &pb);
		if (ret < 0)
			return ret;
		if (!pa || !pb) {
			snprintf(op->errmsg, sizeof(op->errmsg),
				 "The provided expression refers to an attribute that does not "
				 "exist "
				 "in the item");
			return -EINVAL;
		}
		if (val_number(op, a, &na) < 0 || val_number(op, b, &nb) < 0) {
			snprintf(op->errmsg, sizeof(op->errmsg),
				 "An operand in the update expression has an incorrect data type");
			return -EINVAL;
		}
		ret = o->kind == SM_DDB_OP_PLUS ? sm_ddb_number_add(&na, &nb, &r, err, sizeof(err))
						: sm_ddb_number_sub(&na, &nb, &r, err, sizeof(err));
		if (ret < 0) {
			snprintf(op->errmsg, sizeof(op->errmsg), "%s", err);
			return -EINVAL;
		}
		return write_number(op, &r, out);
	}
	case SM_DDB_OP_CALL:
		break;
	}
	switch (o->func) {
	case SM_DDB_FN_SIZE: {
		struct sm_ddb_number n;
		struct sm_bytes s;
		int64_t size;

		ret = eval_operand(op, o->args[0], d, itok, &a, &pa);
		if (ret < 0)
			return ret;
		if (!pa || alt_value_type(a.d, a.tok, ta, &p) < 0) {
			*present = false;
			return 0;
		}
		if (strcmp(ta, "S") == 0 && alt_payload_str(op, a.d, p, &s) == 0)
			size = s.len;
		else if (strcmp(ta, "B") == 0 && sm_json_span(a.d, p).len >= 2)
			size = (int64_t)(sm_json_span(a.d, p).len - 2) / 4 *
			       3; /* base64, rounded */
		else if (ta[1] == 'S' || strcmp(ta, "L") == 0 || strcmp(ta, "M") == 0)
			size = sm_json_count(a.d, p);
		else {
			*present = false; /* size() of a number or bool: the condition fails */
			return 0;
		}
		if (strcmp(ta, "B") == 0) {
			struct sm_bytes raw = sm_json_span(a.d, p);
			int pad = 0;

			if (raw.len >= 4 && raw.p[raw.len - 2] == '=')
				pad++;
			if (raw.len >= 5 && raw.p[raw.len - 3] == '=')
				pad++;
			size = (int64_t)(raw.len - 2) / 4 * 3 - pad;
		}
		sm_ddb_number_from_i64(size, &n);
		return write_number(op, &n, out);
	}
	case SM_DDB_FN_IF_NOT_EXISTS:
		ret = eval_operand(op, o->args[0], d, itok, out, present);
		if (ret < 0 || *present)
			return ret;
		return eval_operand(op, o->args[1], d, itok, out, present);
	case SM_DDB_FN_LIST_APPEND: {
		ret = eval_operand(op, o->args[0], d, itok, &a, &pa);
		if (ret == 0)
			ret = eval_operand(op, o->args[1], d, itok, &b, &pb);
		if (ret < 0)
			return ret;
		if (!pa || !pb) {
			snprintf(op->errmsg, sizeof(op->errmsg),
				 "The provided expression refers to an attribute that does not "
				 "exist "
				 "in the item");
			return -EINVAL;
		}
		if (alt_value_type(a.d, a.tok, ta, &p) < 0 ||
		    alt_value_type(b.d, b.tok, tb, &q) < 0 || strcmp(ta, "L") != 0 ||
		    strcmp(tb, "L") != 0) {
			snprintf(op->errmsg, sizeof(op->errmsg),
				 "An operand in the update expression has an incorrect data type");
			return -EINVAL;
		}
		return concat_lists(op, a, p, b, q, out);
	}
	default:
		snprintf(op->errmsg, sizeof(op->errmsg), "function %s is not an operand", o->name);
		return -EINVAL;
	}
}

/* ---- conditions ---- */

static int
eval_call(struct alt_op *op, const struct sm_ddb_operand *c, const struct sm_json_doc *d, int itok,
	  bool *out)
{
	struct alt_val a, b;
	bool pa, pb;
	char ta[5], tb[5];
	struct sm_bytes sb;
	int p, q, ret;

	ret = eval_operand(op, c->args[0], d, itok, &a, &pa);
	if (ret < 0)
		return ret;
	switch (c->func) {
	case SM_DDB_FN_ATTRIBUTE_EXISTS:
		*out = pa;
		return 0;
	case SM_DDB_FN_ATTRIBUTE_NOT_EXISTS:
		*out = !pa;
		return 0;
	default:
		break;
	}
	ret = eval_operand(op, c->args[1], d, itok, &b, &pb);
	if (ret < 0)
		return ret;
	*out = false;
	if (!pa || !pb)
		return 0;
	switch (c->func) {
	case SM_DDB_FN_ATTRIBUTE_TYPE: {
		static const char *const types[] = { "S",  "N",	 "B",  "BOOL", "NULL",
						     "SS", "NS", "BS", "L",    "M" };
		unsigned i;

		if (alt_value_type(b.d, b.tok, tb, &q) < 0 || strcmp(tb, "S") != 0 ||
		    alt_payload_str(op, b.d, q, &sb) < 0) {
			snprintf(op->errmsg, sizeof(op->errmsg),
				 "Invalid ConditionExpression: Incorrect operand type for operator "
				 "or "
				 "function; operator or function: attribute_type, operand type: %s",
				 tb);
			return -EINVAL;
		}
		for (i = 0; i < SM_ARRAY_SIZE(types); i++)
			if (strlen(types[i]) == sb.len && memcmp(types[i], sb.p, sb.len) == 0)
				break;
		if (i == SM_ARRAY_SIZE(types)) {
			snprintf(op->errmsg, sizeof(op->errmsg),
				 "Invalid ConditionExpression: Invalid attribute type name found; "
				 "type: %.*s, valid types: { B,BOOL,BS,L,M,N,NS,NULL,S,SS }",
				 (int)SM_MIN(sb.len, 32u), (const char *)sb.p);
			return -EINVAL;
		}
		*out = alt_value_type(a.d, a.tok, ta, &p) == 0 && strcmp(ta, types[i]) == 0;
		return 0;
	}
	case SM_DDB_FN_BEGINS_WITH:
		*out = alt_value_begins_with(op, a, b);
		return 0;
	case SM_DDB_FN_CONTAINS:
		*out = alt_value_contains(op, a, b);
		return 0;
	default:
		snprintf(op->errmsg, sizeof(op->errmsg), "function %s is not a condition", c->name);
		return -EINVAL;
	}
}

/*
 * A comparison, BETWEEN or IN. Apart from alt_eval_cond() so that its
 * operand arrays (1.7 KB) are not on the stack of every level of an
 * AND/OR chain a request may make hundreds deep.
 */
static int
eval_compare(struct alt_op *op, const struct sm_ddb_cond *c, const struct sm_json_doc *d, int itok,
	     bool *out)
{
	struct alt_val v[SM_DDB_EXPR_MAX_IN + 1];
	bool p[SM_DDB_EXPR_MAX_IN + 1];
	int cmp, ret;
	unsigned i;

	for (i = 0; i < c->noperands && i < SM_ARRAY_SIZE(v); i++) {
		ret = eval_operand(op, c->operands[i], d, itok, &v[i], &p[i]);
		if (ret < 0)
			return ret;
	}
	*out = false;
	if (c->kind == SM_DDB_COND_CMP && c->op == SM_DDB_NE) {
		/* a missing attribute differs from anything, another missing one too */
		*out = !p[0] || !p[1] || !alt_value_equal(op, v[0], v[1]);
		return 0;
	}
	if (!p[0])
		return 0;
	switch (c->kind) {
	case SM_DDB_COND_CMP:
		if (!p[1])
			return 0;
		if (c->op == SM_DDB_EQ) {
			*out = alt_value_equal(op, v[0], v[1]);
			return 0;
		}
		if (c->op == SM_DDB_NE) {
			*out = !alt_value_equal(op, v[0], v[1]);
			return 0;
		}
		if (alt_value_compare(op, v[0], v[1], &cmp) < 0)
			return 0;
		*out = (c->op == SM_DDB_LT && cmp < 0) || (c->op == SM_DDB_LE && cmp <= 0) ||
		       (c->op == SM_DDB_GT && cmp > 0) || (c->op == SM_DDB_GE && cmp >= 0);
		return 0;
	case SM_DDB_COND_BETWEEN:
		/* bounds from the request were checked at parse time (static_check());
		 * from the item, bounds out of order make the condition false */
		if (!p[1] || !p[2])
			return 0;
		if (alt_value_compare(op, v[0], v[1], &cmp) < 0 || cmp < 0)
			return 0;
		if (alt_value_compare(op, v[0], v[2], &cmp) < 0 || cmp > 0)
			return 0;
		*out = true;
		return 0;
	case SM_DDB_COND_IN:
		for (i = 1; i < c->noperands && i < SM_ARRAY_SIZE(v); i++) {
			if (p[i] && alt_value_equal(op, v[0], v[i])) {
				*out = true;
				break;
			}
		}
		return 0;
	default:
		return -EINVAL;
	}
}

int
alt_eval_cond(struct alt_op *op, const struct sm_ddb_cond *c, const struct sm_json_doc *d, int itok,
	      bool *out)
{
	bool l;
	int ret;

	switch (c->kind) {
	case SM_DDB_COND_OR:
	case SM_DDB_COND_AND:
		ret = alt_eval_cond(op, c->left, d, itok, &l);
		if (ret < 0)
			return ret;
		if ((c->kind == SM_DDB_COND_OR && l) || (c->kind == SM_DDB_COND_AND && !l)) {
			*out = l;
			return 0;
		}
		return alt_eval_cond(op, c->right, d, itok, out);
	case SM_DDB_COND_NOT:
		ret = alt_eval_cond(op, c->left, d, itok, &l);
		*out = !l;
		return ret;
	case SM_DDB_COND_CALL:
		return eval_call(op, c->operands[0], d, itok, out);
	default:
		return eval_compare(op, c, d, itok, out);
	}
}

/* ---- projection ---- */

/*
 * The projection as a tree of its paths' elements, built once per request
 * (a Scan projects every item it returns): children in the order their
 * paths were written. Paths neither repeat nor overlap (the parser refuses
 * that), so a node that ends a path has no children.
 */
struct alt_proj_node {
	const char *name; /* resolved attribute name (NULL: a list index, or unresolved) */
	bool is_index;
	uint32_t index;
	bool leaf;
	unsigned child, next; /* first child, next sibling; 0 none (node 0 is the root) */
};

static bool
node_is(const struct alt_proj_node *n, const struct sm_ddb_path_elem *el, const char *name)
{
	if (el->name == NULL)
		return n->is_index && n->index == el->index;
	return !n->is_index && n->name != NULL && name != NULL && strcmp(n->name, name) == 0;
}

static int
proj_build(struct alt_op *op)
{
	const struct sm_ddb_expr *e = op->proj;
	struct alt_proj_node *nodes;
	unsigned need = 1, i, d, cur, c, last;

	for (i = 0; i < e->npaths; i++)
		need += e->paths[i].nelems;
	if (need > op->proj_nodes_cap) {
		nodes = sm_realloc(op->proj_nodes, need * sizeof(*nodes));
		if (nodes == NULL)
			return -ENOMEM;
		op->proj_nodes = nodes;
		op->proj_nodes_cap = need;
	}
	nodes = op->proj_nodes;
	memset(&nodes[0], 0, sizeof(nodes[0]));
	op->nproj_nodes = 1;
	for (i = 0; i < e->npaths; i++) {
		const struct sm_ddb_path *p = &e->paths[i];

		for (d = 0, cur = 0; d < p->nelems; d++, cur = c) {
			const struct sm_ddb_path_elem *el = &p->elems[d];
			const char *name = el->name ? alt_resolve_name(op, el->name) : NULL;

			for (c = nodes[cur].child, last = 0; c != 0; last = c, c = nodes[c].next)
				if (node_is(&nodes[c], el, name))
					break;
			if (c != 0)
				continue;
			c = op->nproj_nodes++;
			memset(&nodes[c], 0, sizeof(nodes[c]));
			nodes[c].name = name;
			nodes[c].is_index = el->name == NULL;
			nodes[c].index = el->index;
			if (last == 0)
				nodes[cur].child = c;
			else
				nodes[last].next = c;
		}
		nodes[cur].leaf = true;
	}
	op->proj_built = e;
	return 0;
}

/* Write value @v restricted to the paths below node @at. */
/* The value node @at selects inside @v (a list element or map member), or -1. */
static int
proj_child(const struct alt_proj_node *n, const struct sm_json_doc *d, const char *t, int pay)
{
	if (!n->is_index)
		return strcmp(t, "M") == 0 && n->name != NULL ? sm_json_get(d, pay, n->name) : -1;
	return strcmp(t, "L") == 0 ? sm_json_at(d, pay, n->index) : -1;
}

/*
 * Does node @at find anything in @v? A path into what is missing, or into
 * a value of another type, finds nothing: DynamoDB then leaves out even the
 * containers on the way (no {"a": {}}). Recursion is bounded by the path
 * depth limit (SM_DDB_EXPR_MAX_PATH).
 */
static bool
proj_matches(const struct alt_proj_node *nodes, const struct sm_json_doc *d, int v, unsigned at)
{
	char t[5];
	unsigned c;
	int pay, x;

	if (nodes[at].leaf)
		return true;
	if (alt_value_type(d, v, t, &pay) < 0)
		return false;
	for (c = nodes[at].child; c != 0; c = nodes[c].next) {
		x = proj_child(&nodes[c], d, t, pay);
		if (x >= 0 && proj_matches(nodes, d, x, c))
			return true;
	}
	return false;
}

static void
proj_write(struct alt_op *op, const struct sm_json_doc *d, int v, unsigned at,
	   struct sm_json_out *o)
{
	const struct alt_proj_node *nodes = op->proj_nodes;
	struct sm_bytes raw;
	char t[5];
	unsigned c;
	int pay, x;

	if (nodes[at].leaf) {
		raw = sm_json_span(d, v);
		sm_json_out_raw(o, (const char *)raw.p, raw.len);
		return;
	}
	if (alt_value_type(d, v, t, &pay) < 0)
		return;
	sm_json_out_obj_begin(o);
	sm_json_out_key(o, t);
	if (strcmp(t, "M") == 0)
		sm_json_out_obj_begin(o);
	else
		sm_json_out_arr_begin(o);
	for (c = nodes[at].child; c != 0; c = nodes[c].next) {
		x = proj_child(&nodes[c], d, t, pay);
		if (x < 0 || !proj_matches(nodes, d, x, c))
			continue;
		if (!nodes[c].is_index)
			sm_json_out_key(o, nodes[c].name);
		proj_write(op, d, x, c, o);
	}
	if (strcmp(t, "M") == 0)
		sm_json_out_obj_end(o);
	else
		sm_json_out_arr_end(o);
	sm_json_out_obj_end(o);
}

int
alt_write_projected(struct alt_op *op, const struct sm_json_doc *d, int itok, struct sm_json_out *o)
{
	int atg = op->atg_tok;
	struct sm_bytes raw, k;
	unsigned c;
	int e, v;

	if (op->proj == NULL && atg < 0) {
		raw = sm_json_span(d, itok);
		sm_json_out_raw(o, (const char *)raw.p, raw.len);
		return o->err;
	}
	sm_json_out_obj_begin(o);
	if (op->proj == NULL) {
		for (e = sm_json_first(&op->doc, atg); e >= 0; e = sm_json_next(&op->doc, e)) {
			if (alt_payload_str(op, &op->doc, e, &k) < 0)
				continue;
			v = sm_json_getn(d, itok, (const char *)k.p, k.len);
			if (v < 0)
				continue;
			sm_json_out_keyn(o, (const char *)k.p, k.len);
			raw = sm_json_span(d, v);
			sm_json_out_raw(o, (const char *)raw.p, raw.len);
		}
		sm_json_out_obj_end(o);
		return o->err;
	}
	if (op->proj_built != op->proj && proj_build(op) < 0)
		return -ENOMEM;
	for (c = op->proj_nodes[0].child; c != 0; c = op->proj_nodes[c].next) {
		const char *name = op->proj_nodes[c].name;

		v = name ? sm_json_get(d, itok, name) : -1;
		if (v < 0 || !proj_matches(op->proj_nodes, d, v, c))
			continue;
		sm_json_out_key(o, name);
		proj_write(op, d, v, c, o);
	}
	sm_json_out_obj_end(o);
	return o->err;
}

/* ---- updates ---- */

/* A top-level attribute of the item being built. */
struct wattr {
	const char *name;
	size_t off, len; /* its JSON in op->scratch */
	bool removed;
	bool changed;
};

/* Per-shard, as many as the widest item updated (DynamoDB bounds only its size). */
static __thread struct wattr *wattrs;
static __thread unsigned wattrs_cap;
static __thread struct alt_change *changes;
static __thread unsigned changes_cap;

void
alt_eval_shard_fini(void)
{
	sm_free(wattrs);
	sm_free(changes);
	wattrs = NULL;
	changes = NULL;
	wattrs_cap = changes_cap = 0;
}

/* Grow a per-shard array of @size-byte items to hold @need; 0 or -ENOMEM. */
static int
shard_grow(void **arr, unsigned *cap, unsigned need, size_t size)
{
	unsigned ncap = SM_MAX(need, *cap ? 2 * *cap : 64u);
	void *p;

	if (need <= *cap)
		return 0;
	p = sm_realloc(*arr, (size_t)ncap * size);
	if (p == NULL)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

/* A new working attribute (wattrs may move: no pointer into it lives across this). */
static inline struct wattr *
wattr_new(unsigned *nw)
{
	if (SM_UNLIKELY(*nw >= wattrs_cap) &&
	    shard_grow((void **)&wattrs, &wattrs_cap, *nw + 1, sizeof(*wattrs)) < 0)
		return NULL;
	return &wattrs[(*nw)++];
}

static struct wattr *
wattr_find(const char *name, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (strcmp(wattrs[i].name, name) == 0)
			return &wattrs[i];
	return NULL;
}

static int
put_scratch(struct alt_op *op, struct alt_val v, size_t *off, size_t *len)
{
	struct sm_bytes raw = sm_json_span(v.d, v.tok);

	*off = op->scratch.len;
	op->scratch.comma = false;
	sm_json_out_raw(&op->scratch, (const char *)raw.p, raw.len);
	op->scratch.comma = false;
	*len = op->scratch.len - *off;
	return op->scratch.err;
}

/*
 * Write value @v of @d with @p[depth..] set to @nv (or removed when @nv.tok
 * < 0) to @o; -EINVAL when the path does not exist in the value.
 */
static int
rewrite(struct alt_op *op, const struct sm_json_doc *d, int v, const struct sm_ddb_path *p,
	unsigned depth, struct alt_val nv, struct sm_json_out *o)
{
	struct sm_bytes raw;
	const char *name = NULL;
	char t[5];
	int pay, x, ret;
	uint32_t k;
	bool found = false;

	if (alt_value_type(d, v, t, &pay) < 0)
		return -EINVAL;
	if (p->elems[depth].name != NULL) {
		if (strcmp(t, "M") != 0)
			return -EINVAL;
		name = alt_resolve_name(op, p->elems[depth].name);
		if (name == NULL)
			return -EINVAL;
	} else if (strcmp(t, "L") != 0) {
		return -EINVAL;
	}
	sm_json_out_obj_begin(o);
	sm_json_out_key(o, t);
	if (name != NULL) {
		sm_json_out_obj_begin(o);
		for (x = sm_json_first(d, pay); x >= 0; x = sm_json_next(d, x)) {
			int val = sm_json_member_value(d, x);

			if (sm_json_str_eq(d, x, name)) {
				found = true;
				if (depth + 1 < p->nelems) {
					sm_json_out_key(o, name);
					ret = rewrite(op, d, val, p, depth + 1, nv, o);
					if (ret < 0)
						return ret;
				} else if (nv.tok >= 0) {
					sm_json_out_key(o, name);
					raw = sm_json_span(nv.d, nv.tok);
					sm_json_out_raw(o, (const char *)raw.p, raw.len);
				}
				continue;
			}
			raw = sm_json_span(d, x);
			sm_json_out_raw(o, (const char *)raw.p, raw.len);
			o->comma = false;
			sm_json_out_raw(o, ":", 1);
			o->comma = false;
			raw = sm_json_span(d, val);
			sm_json_out_raw(o, (const char *)raw.p, raw.len);
		}
		if (!found) {
			if (depth + 1 < p->nelems)
				return -EINVAL;
			if (nv.tok >= 0) {
				sm_json_out_key(o, name);
				raw = sm_json_span(nv.d, nv.tok);
				sm_json_out_raw(o, (const char *)raw.p, raw.len);
			}
		}
		sm_json_out_obj_end(o);
	} else {
		sm_json_out_arr_begin(o);
		for (x = sm_json_first(d, pay), k = 0; x >= 0; x = sm_json_next(d, x), k++) {
			if (k == p->elems[depth].index) {
				found = true;
				if (depth + 1 < p->nelems) {
					ret = rewrite(op, d, x, p, depth + 1, nv, o);
					if (ret < 0)
						return ret;
				} else if (nv.tok >= 0) {
					raw = sm_json_span(nv.d, nv.tok);
					sm_json_out_raw(o, (const char *)raw.p, raw.len);
				}
				continue;
			}
			raw = sm_json_span(d, x);
			sm_json_out_raw(o, (const char *)raw.p, raw.len);
		}
		if (!found) {
			/* SET past the end appends; REMOVE past the end does nothing */
			if (depth + 1 < p->nelems)
				return -EINVAL;
			if (nv.tok >= 0) {
				raw = sm_json_span(nv.d, nv.tok);
				sm_json_out_raw(o, (const char *)raw.p, raw.len);
			}
		}
		sm_json_out_arr_end(o);
	}
	sm_json_out_obj_end(o);
	return o->err;
}

/* ADD and DELETE on a value: numbers add, sets union / difference. */
/* AttributeUpdates ADD of list @v: appended to the list @cur (or the list itself, without). */
static int
add_list(struct alt_op *op, struct alt_val cur, bool have, struct alt_val v, struct alt_val *out)
{
	char tc[5];
	int pc, pv;

	if (!have) {
		*out = v;
		return 0;
	}
	if (alt_value_type(cur.d, cur.tok, tc, &pc) < 0 || strcmp(tc, "L") != 0) {
		snprintf(op->errmsg, sizeof(op->errmsg),
			 "One or more parameter values were invalid: Type mismatch for attribute to "
			 "update");
		return -EINVAL;
	}
	alt_value_type(v.d, v.tok, tc, &pv);
	return concat_lists(op, cur, pc, v, pv, out);
}

static int
add_or_delete(struct alt_op *op, bool add, struct alt_val cur, bool have, struct alt_val v,
	      struct alt_val *out, bool *removed)
{
	char tc[5], tv[5], err[200];
	int pc, pv, x, y;
	struct sm_json_out *w;
	struct sm_json_doc *wd;
	struct alt_set vset, cset;
	struct sm_bytes raw;
	unsigned kept = 0;
	int ret;

	*removed = false;
	if (alt_value_type(v.d, v.tok, tv, &pv) < 0)
		return -EINVAL;
	/* AttributeUpdates' ADD appends a list to a list too (UpdateExpression's does not) */
	if (add && op->update == NULL && strcmp(tv, "L") == 0)
		return add_list(op, cur, have, v, out);
	if (add && strcmp(tv, "N") != 0 && !(tv[1] == 'S' && tv[2] == '\0')) {
		snprintf(op->errmsg, sizeof(op->errmsg),
			 "Invalid UpdateExpression: Incorrect operand type for operator or "
			 "function; "
			 "operator: ADD, operand type: %s",
			 tv);
		return -EINVAL;
	}
	if (!add && !(tv[1] == 'S' && tv[2] == '\0')) {
		snprintf(op->errmsg, sizeof(op->errmsg),
			 "Invalid UpdateExpression: Incorrect operand type for operator or "
			 "function; "
			 "operator: DELETE, operand type: %s",
			 tv);
		return -EINVAL;
	}
	if (!have) {
		if (!add) {
			*removed = true; /* deleting from nothing leaves nothing */
			return 1;
		}
		*out = v;
		return 0;
	}
	if (alt_value_type(cur.d, cur.tok, tc, &pc) < 0 || strcmp(tc, tv) != 0) {
		/* AttributeUpdates (no UpdateExpression) words it DynamoDB's legacy way */
		snprintf(op->errmsg, sizeof(op->errmsg), "%s",
			 op->update == NULL
				 ? "One or more parameter values were invalid: Type mismatch for "
				   "attribute to update"
				 : "An operand in the update expression has an incorrect data type");
		return -EINVAL;
	}
	if (strcmp(tv, "N") == 0) {
		struct sm_ddb_number a, b, r;

		if (val_number(op, cur, &a) < 0 || val_number(op, v, &b) < 0)
			return -EINVAL;
		if (sm_ddb_number_add(&a, &b, &r, err, sizeof(err)) < 0) {
			snprintf(op->errmsg, sizeof(op->errmsg), "%s", err);
			return -EINVAL;
		}
		return write_number(op, &r, out);
	}
	/* union / difference by sorted elements: n log n, whatever the sets' sizes */
	alt_set_init(&vset, tv[0]);
	alt_set_init(&cset, tv[0]);
	ret = alt_set_build(op, &vset, v.d, pv);
	if (ret == 0 && add)
		ret = alt_set_build(op, &cset, cur.d, pc);
	if (ret < 0) {
		alt_set_free(&vset);
		alt_set_free(&cset);
		if (ret == -ENOMEM)
			return ret;
		snprintf(op->errmsg, sizeof(op->errmsg),
			 "An operand in the update expression has an incorrect data type");
		return -EINVAL;
	}
	alt_tmp_doc(op, &w, &wd);
	sm_json_out_obj_begin(w);
	sm_json_out_key(w, tv);
	sm_json_out_arr_begin(w);
	for (x = sm_json_first(cur.d, pc); x >= 0; x = sm_json_next(cur.d, x)) {
		raw = sm_json_span(cur.d, x);
		if (!add && alt_set_has(op, &vset, cur.d, x))
			continue;
		sm_json_out_raw(w, (const char *)raw.p, raw.len);
		kept++;
	}
	if (add) {
		for (y = sm_json_first(v.d, pv); y >= 0; y = sm_json_next(v.d, y)) {
			if (alt_set_has(op, &cset, v.d, y))
				continue;
			raw = sm_json_span(v.d, y);
			sm_json_out_raw(w, (const char *)raw.p, raw.len);
			kept++;
		}
	}
	alt_set_free(&vset);
	alt_set_free(&cset);
	sm_json_out_arr_end(w);
	sm_json_out_obj_end(w);
	if (kept == 0) {
		*removed = true;
		return 1;
	}
	if (tmp_parse(w, wd) < 0)
		return -ENOMEM;
	out->d = wd;
	out->tok = 0;
	return 0;
}

/* Apply one action on the working attributes. */
static int
apply_action(struct alt_op *op, const struct sm_json_doc *d, int itok, enum sm_ddb_action_kind kind,
	     const struct sm_ddb_path *path, const struct sm_ddb_operand *value,
	     struct alt_val given, unsigned *nw)
{
	/* Legacy AttributeUpdates names are literal, "#a" too: only a ref is looked up. */
	const char *top = path->elems[0].ref ? alt_resolve_name(op, path->elems[0].name)
					     : path->elems[0].name;
	struct wattr *w;
	struct alt_val nv = { NULL, -1 }, cur = { NULL, -1 };
	struct sm_json_out *tmpo, *co;
	struct sm_json_doc *tmpd, *cd;
	bool present = true, removed = false;
	int ret;

	if (top == NULL)
		return -EINVAL;
	if (strcmp(top, op->tab.hash->name) == 0 ||
	    (op->tab.range && strcmp(top, op->tab.range->name) == 0)) {
		snprintf(op->errmsg, sizeof(op->errmsg),
			 "One or more parameter values were invalid: Cannot update attribute %s. "
			 "This "
			 "attribute is part of the key",
			 top);
		return -EINVAL;
	}
	if (value != NULL) {
		ret = eval_operand(op, value, d, itok, &nv, &present);
		if (ret < 0)
			return ret;
		if (!present) {
			snprintf(op->errmsg, sizeof(op->errmsg),
				 "The provided expression refers to an attribute that does not "
				 "exist "
				 "in the item");
			return -EINVAL;
		}
	} else if (given.tok >= 0) {
		nv = given;
	}
	w = wattr_find(top, *nw);
	if (w == NULL) {
		w = wattr_new(nw);
		if (w == NULL)
			return -ENOMEM;
		w->name = top;
		w->removed = true;
		w->changed = false;
		w->off = w->len = 0;
	}
	/* the attribute's current working value, parsed */
	if (!w->removed) {
		alt_tmp_doc(op, &co, &cd);
		sm_json_out_raw(co, op->scratch.p + w->off, w->len);
		if (tmp_parse(co, cd) < 0)
			return -ENOMEM;
		cur.d = cd;
		cur.tok = 0;
	}
	if (kind == SM_DDB_ADD || kind == SM_DDB_DELETE) {
		struct alt_val at = cur;
		bool have = !w->removed;

		if (path->nelems > 1) {
			at.tok = -1;
			if (have) {
				struct sm_ddb_path sub = { path->elems, path->nelems };
				struct sm_json_out *io;
				struct sm_json_doc *id;

				/* wrap as an item {top: value} to reuse resolve_path */
				alt_tmp_doc(op, &io, &id);
				sm_json_out_obj_begin(io);
				sm_json_out_key(io, top);
				sm_json_out_raw(io, op->scratch.p + w->off, w->len);
				sm_json_out_obj_end(io);
				if (tmp_parse(io, id) < 0)
					return -ENOMEM;
				at.d = id;
				at.tok = resolve_path(op, id, 0, &sub);
			}
			have = at.tok >= 0;
		}
		ret = add_or_delete(op, kind == SM_DDB_ADD, at, have, nv, &nv, &removed);
		if (ret < 0)
			return ret;
		if (removed) {
			if (path->nelems == 1) {
				w->removed = true;
				w->changed = true;
				return 0;
			}
			nv.tok = -1;
		}
	}
	if (kind == SM_DDB_REMOVE)
		nv.tok = -1;
	if (path->nelems == 1) {
		w->changed = true;
		if (nv.tok < 0) {
			w->removed = true;
			return 0;
		}
		w->removed = false;
		return put_scratch(op, nv, &w->off, &w->len);
	}
	/*
	 * nested: rewrite the top-level value. A path through what is missing or
	 * of another type is an error, for REMOVE as for SET; only an item that
	 * does not exist takes any REMOVE (DynamoDB's
	 * test_nested_attribute_remove_from_missing_item).
	 */
	if (w->removed) {
		if (kind == SM_DDB_REMOVE && itok < 0)
			return 0;
		snprintf(op->errmsg, sizeof(op->errmsg),
			 "The document path provided in the update expression is invalid for "
			 "update");
		return -EINVAL;
	}
	alt_tmp_doc(op, &tmpo, &tmpd);
	ret = rewrite(op, cd, 0, path, 1, nv, tmpo);
	if (ret < 0) {
		if (ret == -ENOMEM)
			return ret;
		snprintf(op->errmsg, sizeof(op->errmsg),
			 "The document path provided in the update expression is invalid for "
			 "update");
		return -EINVAL;
	}
	if (tmp_parse(tmpo, tmpd) < 0)
		return -ENOMEM;
	w->changed = true;
	return put_scratch(op, (struct alt_val){ tmpd, 0 }, &w->off, &w->len);
}

/* ---- nested actions on one attribute, in one pass ---- */

/*
 * Each nested action rewrote (and parsed again) the whole attribute it is
 * in, so 400 actions in 4 KB on a 400 KB map made a request cost a second.
 * Paths in one expression never overlap, so the SET and REMOVE actions on
 * one attribute that touch only what the item already has (every step but
 * the last exists, a list index is inside the list, no ADD or DELETE) give
 * the same result in any order: they are applied in one rewrite. Anything
 * else (a path that does not exist, an index past the end, a value that
 * fails) goes the old way, one action at a time, with its error in its
 * place.
 */
struct nested {
	const struct sm_ddb_action *a;
	const char *names[SM_DDB_EXPR_MAX_PATH]; /* resolved; NULL for an index */
	const char *last;			 /* names[the last element] */
	size_t off, len;			 /* SET: the new value's JSON in op->scratch */
	unsigned order;				 /* in the expression */
	bool done;				 /* written by rewrite_many() */
};

static __thread unsigned nested_depth; /* the element rewrite_many() sorts by */

static const char *
nested_name(const struct nested *n)
{
	return n->names[nested_depth];
}

static int
nested_cmp(const void *x, const void *y)
{
	const struct nested *a = *(struct nested *const *)x, *b = *(struct nested *const *)y;
	const struct sm_ddb_path_elem *ea = &a->a->path.elems[nested_depth];
	const struct sm_ddb_path_elem *eb = &b->a->path.elems[nested_depth];
	int c;

	if (ea->name == NULL)
		c = (ea->index > eb->index) - (ea->index < eb->index);
	else
		c = strcmp(nested_name(a), nested_name(b));
	return c ? c : (a->order > b->order) - (a->order < b->order);
}

static int
order_cmp(const void *x, const void *y)
{
	const struct nested *a = *(struct nested *const *)x, *b = *(struct nested *const *)y;

	return (a->order > b->order) - (a->order < b->order);
}

/* Write value @v of @d with the @n actions (all at @depth below it) applied, to @o. */
static int
rewrite_many(struct alt_op *op, const struct sm_json_doc *d, int v, struct nested **acts,
	     unsigned n, unsigned depth, struct sm_json_out *o)
{
	struct sm_bytes raw, key;
	unsigned i, j, lo, hi, mid;
	char t[5];
	int pay, x, val, ret, c;
	uint32_t k;
	bool map;

	if (alt_value_type(d, v, t, &pay) < 0)
		return -EINVAL;
	map = strcmp(t, "M") == 0;
	nested_depth = depth;
	qsort(acts, n, sizeof(*acts), nested_cmp);
	sm_json_out_obj_begin(o);
	sm_json_out_key(o, t);
	if (map)
		sm_json_out_obj_begin(o);
	else
		sm_json_out_arr_begin(o);
	for (x = sm_json_first(d, pay), k = 0; x >= 0; x = sm_json_next(d, x), k++) {
		val = map ? sm_json_member_value(d, x) : x;
		/* the actions on this member or element: a run of the sorted ones */
		lo = 0;
		hi = n;
		if (map && alt_payload_str(op, d, x, &key) < 0)
			return -EINVAL;
		while (lo < hi) {
			mid = lo + (hi - lo) / 2;
			nested_depth = depth;
			if (map) {
				const char *nm = nested_name(acts[mid]);
				size_t nl = strlen(nm);

				c = memcmp(nm, key.p, SM_MIN(nl, (size_t)key.len));
				c = c ? c : (nl > key.len) - (nl < key.len);
			} else {
				uint32_t ix = acts[mid]->a->path.elems[depth].index;

				c = (ix > k) - (ix < k);
			}
			if (c < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (j = lo; j < n; j++) {
			nested_depth = depth;
			if (map ? strlen(nested_name(acts[j])) != key.len ||
					    memcmp(nested_name(acts[j]), key.p, key.len) != 0
				: acts[j]->a->path.elems[depth].index != k)
				break;
		}
		if (j == lo) {
			raw = sm_json_span(d, x);
			sm_json_out_raw(o, (const char *)raw.p, raw.len);
			if (map) {
				o->comma = false;
				sm_json_out_raw(o, ":", 1);
				o->comma = false;
				raw = sm_json_span(d, val);
				sm_json_out_raw(o, (const char *)raw.p, raw.len);
			}
			continue;
		}
		if (acts[lo]->a->path.nelems == depth + 1) {
			/* the path ends here: no other one passes (paths do not overlap) */
			acts[lo]->done = true;
			if (acts[lo]->a->kind == SM_DDB_REMOVE)
				continue;
			if (map)
				sm_json_out_key(o, acts[lo]->last);
			sm_json_out_raw(o, op->scratch.p + acts[lo]->off, acts[lo]->len);
			continue;
		}
		if (map) {
			nested_depth = depth;
			sm_json_out_key(o, nested_name(acts[lo]));
		}
		ret = rewrite_many(op, d, val, acts + lo, j - lo, depth + 1, o);
		if (ret < 0)
			return ret;
		nested_depth = depth;
	}
	if (map) {
		/* SETs of keys the map lacks come last, in the order written */
		qsort(acts, n, sizeof(*acts), order_cmp);
		for (i = 0; i < n; i++) {
			if (acts[i]->done || acts[i]->a->path.nelems != depth + 1)
				continue;
			acts[i]->done = true;
			if (acts[i]->a->kind == SM_DDB_REMOVE)
				continue;
			sm_json_out_key(o, acts[i]->last);
			sm_json_out_raw(o, op->scratch.p + acts[i]->off, acts[i]->len);
		}
		sm_json_out_obj_end(o);
	} else {
		sm_json_out_arr_end(o);
	}
	sm_json_out_obj_end(o);
	return o->err;
}

/* Whether nested action @a can join the one-pass rewrite of value @v (see above). */
static bool
nested_fits(struct alt_op *op, const struct sm_json_doc *d, int v, const struct sm_ddb_action *a)
{
	const struct sm_ddb_path *p = &a->path;
	const char *name;
	unsigned i;
	char t[5];
	int pay;

	if (a->kind != SM_DDB_SET && a->kind != SM_DDB_REMOVE)
		return false;
	for (i = 1; i < p->nelems; i++) {
		if (alt_value_type(d, v, t, &pay) < 0 ||
		    strcmp(t, p->elems[i].name != NULL ? "M" : "L") != 0)
			return false;
		if (p->elems[i].name != NULL) {
			name = alt_resolve_name(op, p->elems[i].name);
			if (name == NULL)
				return false;
			v = sm_json_get(d, pay, name);
			if (v < 0)
				return i + 1 == p->nelems; /* a new key is fine at the end */
		} else {
			v = sm_json_at(d, pay, p->elems[i].index);
			if (v < 0)
				return false;
		}
	}
	return true;
}

/*
 * Apply the nested SET and REMOVE actions @acts[0..n) on attribute @w in one
 * rewrite when they all fit; 1 when done, 0 when they must go one by one.
 */
static int
apply_nested(struct alt_op *op, const struct sm_json_doc *d, int itok, struct wattr *w,
	     struct nested *acts, unsigned n)
{
	struct sm_json_doc cur;
	struct sm_json_out *o;
	struct sm_json_doc *od;
	struct nested **ptrs = NULL;
	struct alt_val nv;
	bool present;
	unsigned i;
	int ret = 0;

	if (w == NULL || w->removed)
		return 0;
	/* the values first, each kept in scratch: evaluating one may reuse another's document */
	for (i = 0; i < n; i++) {
		const struct sm_ddb_path *p = &acts[i].a->path;
		unsigned k;

		if (p->nelems > SM_DDB_EXPR_MAX_PATH)
			return 0;
		for (k = 0; k < p->nelems; k++) {
			acts[i].names[k] = NULL;
			if (p->elems[k].name != NULL &&
			    (acts[i].names[k] = alt_resolve_name(op, p->elems[k].name)) == NULL)
				return 0;
		}
		acts[i].last = acts[i].names[p->nelems - 1];
		if (acts[i].a->kind != SM_DDB_SET)
			continue;
		if (eval_operand(op, acts[i].a->value, d, itok, &nv, &present) < 0 || !present)
			return 0;
		ret = put_scratch(op, nv, &acts[i].off, &acts[i].len);
		if (ret < 0)
			return ret;
	}
	sm_json_doc_init(&cur);
	ret = sm_json_parse(&cur, op->scratch.p + w->off, w->len, 0);
	if (ret < 0)
		goto out;
	for (i = 0; i < n; i++)
		if (!nested_fits(op, &cur, 0, acts[i].a))
			goto out; /* ret 0: one by one */
	ptrs = sm_malloc((size_t)n * sizeof(*ptrs));
	if (ptrs == NULL) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		acts[i].done = false;
		ptrs[i] = &acts[i];
	}
	alt_tmp_doc(op, &o, &od);
	ret = rewrite_many(op, &cur, 0, ptrs, n, 1, o);
	if (ret == 0) {
		/* the old value stays where it is in scratch; the new one follows */
		w->changed = true;
		w->off = op->scratch.len;
		op->scratch.comma = false;
		sm_json_out_raw(&op->scratch, o->p, o->len);
		op->scratch.comma = false;
		w->len = op->scratch.len - w->off;
		ret = op->scratch.err ? op->scratch.err : 1;
	}
out:
	sm_free(ptrs);
	sm_json_doc_release(&cur);
	return ret;
}

static int
top_order(const void *x, const void *y)
{
	const struct nested *a = x, *b = y;
	int c = strcmp(a->last, b->last);

	return c ? c : (a->order > b->order) - (a->order < b->order);
}

/*
 * Apply, up front, every group of two or more nested SET and REMOVE actions
 * on one attribute that apply_nested() can take in one pass; *@batched
 * (NULL: none) marks the actions done so. REMOVE of a list index stays out
 * (they run last, highest first); more than 64 of those and nothing is
 * batched, as the extra ones shift indices in order.
 */
static int
group_nested(struct alt_op *op, const struct sm_json_doc *d, int itok, unsigned nw, bool **batched)
{
	const struct sm_ddb_expr *e = op->update;
	struct nested *cand;
	unsigned i, j, n = 0, nir = 0;
	int ret = 0;

	*batched = NULL;
	for (i = 0; i < e->nactions; i++) {
		const struct sm_ddb_path *p = &e->actions[i].path;

		if (p->nelems > 1 && p->elems[p->nelems - 1].name == NULL &&
		    e->actions[i].kind == SM_DDB_REMOVE)
			nir++;
		else if (p->nelems > 1)
			n++;
	}
	if (n < 2 || nir > 64)
		return 0;
	cand = sm_calloc(n, sizeof(*cand));
	*batched = sm_calloc(e->nactions, sizeof(**batched));
	if (cand == NULL || *batched == NULL) {
		sm_free(cand);
		return -ENOMEM;
	}
	for (i = 0, n = 0; i < e->nactions; i++) {
		const struct sm_ddb_path *p = &e->actions[i].path;

		if (p->nelems < 2 ||
		    (p->elems[p->nelems - 1].name == NULL && e->actions[i].kind == SM_DDB_REMOVE))
			continue;
		cand[n].a = &e->actions[i];
		cand[n].order = i;
		/* grouped by the top-level name, for now kept in last */
		cand[n].last = alt_resolve_name(op, p->elems[0].name);
		if (cand[n].last == NULL)
			continue; /* undefined: its own action reports it */
		n++;
	}
	qsort(cand, n, sizeof(*cand), top_order);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && strcmp(cand[j].last, cand[i].last) == 0; j++)
			;
		if (j - i < 2)
			continue;
		ret = apply_nested(op, d, itok, wattr_find(cand[i].last, nw), cand + i, j - i);
		if (ret < 0)
			break;
		if (ret == 1) {
			unsigned k;

			for (k = i; k < j; k++)
				(*batched)[cand[k].order] = true;
		}
		ret = 0;
	}
	sm_free(cand);
	return ret;
}

static __thread unsigned last_nw;

int
alt_update_changes(struct alt_op *op, const struct alt_change **out)
{
	unsigned i, n = 0;

	if (shard_grow((void **)&changes, &changes_cap, last_nw, sizeof(*changes)) < 0)
		return -ENOMEM;
	for (i = 0; i < last_nw; i++) {
		if (!wattrs[i].changed)
			continue;
		changes[n].name = wattrs[i].name;
		changes[n].json = op->scratch.p + wattrs[i].off;
		changes[n].len = wattrs[i].len;
		changes[n].removed = wattrs[i].removed;
		n++;
	}
	*out = changes;
	return (int)n;
}

/* The order of element actions: SETs by rising index, then REMOVEs by falling index. */
static bool
set_before(const struct sm_ddb_action *a, const struct sm_ddb_action *b)
{
	uint32_t ia = a->path.elems[a->path.nelems - 1].index;
	uint32_t ib = b->path.elems[b->path.nelems - 1].index;

	if (a->kind != b->kind)
		return a->kind == SM_DDB_SET;
	return a->kind == SM_DDB_SET ? ia < ib : ia > ib;
}

int
alt_apply_update(struct alt_op *op, const struct sm_json_doc *d, int itok)
{
	int au = sm_json_get(&op->doc, op->root, "AttributeUpdates");
	unsigned nw = 0, i;
	struct sm_bytes k;
	bool *batched = NULL;
	int e, ret;

	sm_json_out_reset(&op->scratch);
	op->names_nul = false;
	/* Names are copied into op->names: make room now, before any is kept. */
	if (alt_keep_reserve(op, (itok >= 0 ? sm_json_span(d, itok).len : 0) +
						  op->body_len + 4096) < 0)
		return -ENOMEM;
	/* Start from the old item's attributes. */
	for (e = itok >= 0 ? sm_json_first(d, itok) : -1; e >= 0; e = sm_json_next(d, e)) {
		struct wattr *w;
		const char *name;

		if (alt_payload_str(op, d, e, &k) < 0 ||
		    (name = alt_keep_name(op, k.p, k.len)) == NULL)
			return -ENOMEM;
		if (strcmp(name, op->tab.hash->name) == 0 ||
		    (op->tab.range && strcmp(name, op->tab.range->name) == 0))
			continue;
		w = wattr_new(&nw);
		if (w == NULL)
			return -ENOMEM;
		w->name = name;
		w->removed = false;
		w->changed = false;
		ret = put_scratch(op, (struct alt_val){ d, sm_json_member_value(d, e) }, &w->off,
				  &w->len);
		if (ret < 0)
			return ret;
	}
	if (op->update != NULL) {
		const struct sm_ddb_action *ir_small[16], **idx_removes = ir_small;
		unsigned nir = 0, j;

		/* every REMOVE of a list element, however many (at most one per action) */
		if (op->update->nactions > SM_ARRAY_SIZE(ir_small)) {
			idx_removes = sm_malloc(op->update->nactions * sizeof(*idx_removes));
			if (idx_removes == NULL) {
				ret = -ENOMEM;
				goto out;
			}
		}

		ret = group_nested(op, d, itok, nw, &batched);
		if (ret < 0)
			goto out;
		for (i = 0; i < op->update->nactions; i++) {
			const struct sm_ddb_action *a = &op->update->actions[i];

			if (batched != NULL && batched[i])
				continue;

			/*
			 * List indexes in REMOVE name the original item's elements: take
			 * them out last, highest index first, so that one removal does not
			 * shift the next.
			 */
			if (a->path.nelems > 1 && a->path.elems[a->path.nelems - 1].name == NULL &&
			    (a->kind == SM_DDB_REMOVE || a->kind == SM_DDB_SET)) {
				idx_removes[nir++] = a;
				continue;
			}
			ret = apply_action(op, d, itok, a->kind, &a->path, a->value,
					   (struct alt_val){ NULL, -1 }, &nw);
			if (ret < 0) {
				if (idx_removes != ir_small)
					sm_free(idx_removes);
				goto out;
			}
		}
		/*
		 * Element SETs go first, by rising index: several appended past
		 * the end land in index order, as DynamoDB documents. Then the
		 * REMOVEs, by falling index. Insertion sort: stable, and these
		 * are at most the actions of a 4 KB expression.
		 */
		for (i = 1; i < nir; i++) {
			const struct sm_ddb_action *x = idx_removes[i];

			for (j = i; j > 0 && set_before(x, idx_removes[j - 1]); j--)
				idx_removes[j] = idx_removes[j - 1];
			idx_removes[j] = x;
		}
		for (i = 0, ret = 0; i < nir && ret == 0; i++)
			ret = apply_action(op, d, itok, idx_removes[i]->kind, &idx_removes[i]->path,
					   idx_removes[i]->value, (struct alt_val){ NULL, -1 },
					   &nw);
		if (idx_removes != ir_small)
			sm_free(idx_removes);
		if (ret < 0)
			goto out;
	} else if (au >= 0) {
		for (e = sm_json_first(&op->doc, au); e >= 0; e = sm_json_next(&op->doc, e)) {
			int spec = sm_json_member_value(&op->doc, e);
			int act = sm_json_get(&op->doc, spec, "Action");
			int val = sm_json_get(&op->doc, spec, "Value");
			struct sm_ddb_path_elem pe;
			struct sm_ddb_path path = { &pe, 1 };
			enum sm_ddb_action_kind kind = SM_DDB_SET;
			const char *name;

			if (alt_payload_str(op, &op->doc, e, &k) < 0 ||
			    (name = alt_keep_name(op, k.p, k.len)) == NULL) {
				ret = -ENOMEM;
				goto out;
			}
			pe.name = name;
			pe.ref = false;
			pe.index = 0;
			if (act < 0 || sm_json_str_eq(&op->doc, act, "PUT"))
				kind = SM_DDB_SET;
			else if (sm_json_str_eq(&op->doc, act, "DELETE"))
				kind = val >= 0 ? SM_DDB_DELETE : SM_DDB_REMOVE;
			else if (sm_json_str_eq(&op->doc, act, "ADD"))
				kind = SM_DDB_ADD;
			else {
				snprintf(op->errmsg, sizeof(op->errmsg),
					 "1 validation error detected: Value at "
					 "'attributeUpdates.%s.member.action' failed to satisfy "
					 "constraint: "
					 "Member must satisfy enum value set: [ADD, PUT, DELETE]",
					 name);
				ret = -EINVAL;
				goto out;
			}
			if ((kind == SM_DDB_SET || kind == SM_DDB_ADD) && val < 0) {
				snprintf(op->errmsg, sizeof(op->errmsg),
					 "One or more parameter values were invalid: Only DELETE "
					 "action "
					 "is allowed when no attribute value is specified");
				ret = -EINVAL;
				goto out;
			}
			ret = apply_action(op, d, itok, kind, &path, NULL,
					   (struct alt_val){ &op->doc, val }, &nw);
			if (ret < 0)
				goto out;
		}
	}
	/* The new item: key attributes, then the working attributes. */
	sm_json_out_reset(&op->nitem);
	sm_json_out_obj_begin(&op->nitem);
	sm_json_out_key(&op->nitem, op->tab.hash->name);
	{
		int kv = sm_json_get(&op->doc, sm_json_get(&op->doc, op->root, "Key"),
				     op->tab.hash->name);
		struct sm_bytes raw = sm_json_span(&op->doc, kv);

		sm_json_out_raw(&op->nitem, (const char *)raw.p, raw.len);
		if (op->tab.range != NULL) {
			kv = sm_json_get(&op->doc, sm_json_get(&op->doc, op->root, "Key"),
					 op->tab.range->name);
			raw = sm_json_span(&op->doc, kv);
			sm_json_out_key(&op->nitem, op->tab.range->name);
			sm_json_out_raw(&op->nitem, (const char *)raw.p, raw.len);
		}
	}
	for (i = 0; i < nw; i++) {
		if (wattrs[i].removed)
			continue;
		sm_json_out_key(&op->nitem, wattrs[i].name);
		sm_json_out_raw(&op->nitem, op->scratch.p + wattrs[i].off, wattrs[i].len);
	}
	sm_json_out_obj_end(&op->nitem);
	ret = op->nitem.err ? op->nitem.err : op->scratch.err;
out:
	sm_free(batched);
	last_nw = nw;
	return ret;
}
