/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: DynamoDB expressions, parsed (sm_ddb_expr_*.c) and
 * evaluated against a fuzzed item (alt_eval.c).
 *
 * Input: one byte, the expression's text up to a NUL byte, then a JSON
 * request: {"Key": {"pk": ...}, "ExpressionAttributeNames": {...},
 * "ExpressionAttributeValues": {...}, "Item": {...}, "Expected": {...},
 * "AttributeUpdates": {...}, "AttributesToGet": [...]}, where Item stands
 * for what the store holds (the harness convention; DynamoDB has no such
 * member here). The first byte picks the kind (bits 0-2, modulo 5) and
 * whether the table has a sort key "sk" (bit 3).
 *
 * What must hold: the parse fails with a message or succeeds, and then
 * also succeeds without the placeholder maps and passes the check again;
 * every placeholder it lists is used. When the request's values and the
 * item are valid attribute values (the endpoint refuses the request, and
 * the store holds nothing else, otherwise), evaluation fails with a
 * message or gives a result, and an update's new item and a projection
 * are valid JSON made of valid attribute values.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "alt_priv.h"
#include "fuzz.h"

static struct alt_op op;
static struct sm_json_doc item;
static struct sm_json_out item_out, canon;
static char col_pk_name[] = "pk", col_sk_name[] = "sk";
static struct sm_column col_pk = { .name = col_pk_name }, col_sk = { .name = col_sk_name };

static void
op_init(void)
{
	unsigned i;

	sm_mem_thread_init();
	sm_json_doc_init(&op.doc);
	sm_json_doc_init(&op.idoc);
	sm_json_out_init(&op.out);
	sm_json_out_init(&op.item);
	sm_json_out_init(&op.nitem);
	sm_json_out_init(&op.scratch);
	for (i = 0; i < ALT_TMP_DOCS; i++) {
		sm_json_doc_init(&op.tmp[i]);
		sm_json_out_init(&op.tmpout[i]);
	}
	sm_json_doc_init(&item);
	sm_json_out_init(&item_out);
	sm_json_out_init(&canon);
}

/* What sm_alternator.c's op_get() resets between requests. */
static void
op_reset(const char *body, size_t len, bool sort_key)
{
	op.cond = op.update = op.proj = op.filter = op.keycond = NULL;
	op.names_tok = op.values_tok = op.atg_tok = -1;
	op.ntmp = 0;
	op.keys.len = op.vals.len = op.last.len = op.names.len = op.inflated.len = 0;
	/* as alt_op.c's reset: remembered names point into op.names, emptied above */
	op.nresolved = 0;
	if (op.name_memo_n > 0) {
		memset(op.name_memo, 0, op.name_memo_cap * sizeof(*op.name_memo));
		op.name_memo_n = 0;
	}
	op.errmsg[0] = '\0';
	op.body = body;
	op.body_len = len;
	op.root = -1;
	sm_json_out_reset(&op.out);
	sm_json_out_reset(&op.nitem);
	sm_json_out_reset(&op.scratch);
	memset(&op.tab, 0, sizeof(op.tab));
	op.tab.hash = &col_pk;
	op.tab.range = sort_key ? &col_sk : NULL;
}

/* True when @tok is a valid attribute value (canonical form into @o when given). */
static bool
valid_value(const struct sm_json_doc *d, int tok, struct sm_json_out *o)
{
	struct sm_json_out *w = o != NULL ? o : &canon;
	int rc;

	if (o == NULL)
		sm_json_out_reset(&canon);
	op.errmsg[0] = '\0';
	rc = alt_value_write(&op, d, tok, w, false, "fuzz");
	FUZZ_CHECK(rc == 0 || (rc == -EINVAL && op.errmsg[0] != '\0') || rc == -ENOMEM);
	return rc == 0;
}

/* True when every member of object @obj (missing: true) is a valid value. */
static bool
valid_members(const struct sm_json_doc *d, int obj)
{
	int k;

	if (obj < 0)
		return true;
	if (sm_json_type(d, obj) != SM_JSON_OBJECT)
		return false;
	for (k = sm_json_first(d, obj); k >= 0; k = sm_json_next(d, k))
		if (!valid_value(d, sm_json_member_value(d, k), NULL))
			return false;
	return true;
}

/* The request's Item in the store's canonical form, parsed into @item; -1 when none. */
static int
stored_item(int tok, bool *ok)
{
	struct sm_bytes s;
	char *buf;
	int k;

	*ok = true;
	if (tok < 0)
		return -1;
	if (sm_json_type(&op.doc, tok) != SM_JSON_OBJECT) {
		*ok = false;
		return -1;
	}
	sm_json_out_reset(&item_out);
	sm_json_out_obj_begin(&item_out);
	for (k = sm_json_first(&op.doc, tok); k >= 0 && *ok; k = sm_json_next(&op.doc, k)) {
		buf = sm_malloc(sm_json_span(&op.doc, k).len);
		FUZZ_CHECK(buf != NULL);
		FUZZ_CHECK(sm_json_str(&op.doc, k, buf, sm_json_span(&op.doc, k).len, &s) == 0);
		sm_json_out_keyn(&item_out, (const char *)s.p, s.len);
		sm_free(buf);
		*ok = valid_value(&op.doc, sm_json_member_value(&op.doc, k), &item_out);
	}
	sm_json_out_obj_end(&item_out);
	if (!*ok || item_out.err != 0) {
		*ok = false;
		return -1;
	}
	FUZZ_CHECK(sm_json_parse(&item, item_out.p, item_out.len, 0) == 0);
	return sm_json_root(&item);
}

/* What an update or a projection wrote must be an item of valid values. */
static void
check_item_text(const struct sm_json_out *o)
{
	static struct sm_json_doc d;
	int k;

	FUZZ_CHECK(o->err == 0);
	FUZZ_CHECK(sm_json_parse(&d, o->p, o->len, 0) == 0);
	FUZZ_CHECK(sm_json_type(&d, 0) == SM_JSON_OBJECT);
	for (k = sm_json_first(&d, 0); k >= 0; k = sm_json_next(&d, k)) {
		if (!valid_value(&d, sm_json_member_value(&d, k), NULL)) {
			fprintf(stderr, "invalid value written: %.*s: %s\n", (int)o->len, o->p,
				op.errmsg);
			abort();
		}
	}
}

static void
check_eval(int rc)
{
	FUZZ_CHECK(rc == 0 || (rc == -EINVAL && op.errmsg[0] != '\0') || rc == -ENOMEM ||
		   rc == -E2BIG);
}

static void
evaluate(struct sm_ddb_expr *e, const struct sm_ddb_expr_env *env, int itok)
{
	struct sm_ddb_key_cond kc;
	char err[512];
	bool b;
	int rc;

	switch (e->kind) {
	case SM_DDB_KEY_CONDITION:
		rc = sm_ddb_expr_key_condition(e, env, "pk", op.tab.range ? "sk" : NULL, &kc, err,
					       sizeof(err));
		FUZZ_CHECK(rc == 0 || (rc == -EINVAL && err[0] != '\0'));
		if (rc == 0)
			FUZZ_CHECK(kc.pk_value != NULL && sm_ddb_expr_uses(e, kc.pk_value));
		/* fall through: a key condition is a condition too */
	case SM_DDB_CONDITION:
	case SM_DDB_FILTER:
		op.errmsg[0] = '\0';
		check_eval(alt_eval_cond(&op, e->cond, &item, itok, &b));
		break;
	case SM_DDB_UPDATE:
		op.update = e;
		op.errmsg[0] = '\0';
		rc = alt_apply_update(&op, &item, itok);
		check_eval(rc);
		if (rc == 0)
			check_item_text(&op.nitem);
		op.update = NULL;
		break;
	case SM_DDB_PROJECTION:
		op.proj = e;
		sm_json_out_reset(&op.out);
		FUZZ_CHECK(alt_write_projected(&op, &item, itok, &op.out) == 0);
		if (itok >= 0)
			check_item_text(&op.out);
		op.proj = NULL;
		break;
	}
}

/* The legacy parameters: Expected, AttributeUpdates, AttributesToGet. */
static void
legacy(int itok)
{
	int tok, k;
	bool b;

	tok = sm_json_get(&op.doc, op.root, "Expected");
	if (sm_json_type(&op.doc, tok) == SM_JSON_OBJECT) {
		op.errmsg[0] = '\0';
		if (alt_check_expected(&op, tok) == 0)
			check_eval(alt_eval_expected(&op, tok, &item, itok, &b));
	}
	tok = sm_json_get(&op.doc, op.root, "AttributeUpdates");
	if (sm_json_type(&op.doc, tok) == SM_JSON_OBJECT) {
		bool ok = true;

		for (k = sm_json_first(&op.doc, tok); k >= 0 && ok; k = sm_json_next(&op.doc, k)) {
			int spec = sm_json_member_value(&op.doc, k);
			int v = sm_json_get(&op.doc, spec, "Value");

			ok = sm_json_type(&op.doc, spec) == SM_JSON_OBJECT &&
			     (v < 0 || valid_value(&op.doc, v, NULL));
		}
		if (ok) {
			op.errmsg[0] = '\0';
			k = alt_apply_update(&op, &item, itok);
			check_eval(k);
			if (k == 0)
				check_item_text(&op.nitem);
		}
	}
	tok = sm_json_get(&op.doc, op.root, "AttributesToGet");
	if (sm_json_type(&op.doc, tok) == SM_JSON_ARRAY && itok >= 0) {
		op.atg_tok = tok;
		sm_json_out_reset(&op.out);
		FUZZ_CHECK(alt_write_projected(&op, &item, itok, &op.out) == 0);
		check_item_text(&op.out);
		op.atg_tok = -1;
	}
}

/* The request has a Key with valid values for pk (and sk): an update can build its item. */
static bool
key_ok(void)
{
	int key = sm_json_get(&op.doc, op.root, "Key");
	int pk = sm_json_get(&op.doc, key, "pk");
	int sk = sm_json_get(&op.doc, key, "sk");

	if (pk < 0 || !valid_value(&op.doc, pk, NULL))
		return false;
	return op.tab.range == NULL || (sk >= 0 && valid_value(&op.doc, sk, NULL));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	struct sm_ddb_expr_env env = { alt_env_name, alt_env_value_type, &op };
	struct sm_ddb_expr *e = NULL, *bare = NULL;
	const char *text, *json = "", *nul;
	size_t tlen, jlen = 0;
	enum sm_ddb_expr_kind kind;
	bool have_req, ok;
	char err[512];
	unsigned i;
	int rc, itok;

	if (!ready) {
		op_init();
		ready = true;
	}
	if (size == 0)
		return 0;
	kind = (enum sm_ddb_expr_kind)((data[0] & 7) % 5);
	text = (const char *)data + 1;
	tlen = size - 1;
	nul = memchr(text, '\0', tlen);
	if (nul != NULL) {
		json = nul + 1;
		jlen = tlen - (size_t)(json - text);
		tlen = (size_t)(nul - text);
	}
	op_reset(json, jlen, data[0] & 8);
	have_req = sm_json_parse(&op.doc, json, jlen, 0) == 0 &&
		   sm_json_type(&op.doc, 0) == SM_JSON_OBJECT;
	if (have_req) {
		op.root = 0;
		op.names_tok = sm_json_get(&op.doc, 0, "ExpressionAttributeNames");
		op.values_tok = sm_json_get(&op.doc, 0, "ExpressionAttributeValues");
	}

	err[0] = '\0';
	rc = sm_ddb_expr_parse(kind, text, tlen, have_req ? &env : NULL, &e, err, sizeof(err));
	FUZZ_CHECK(rc == 0 || ((rc == -EINVAL && err[0] != '\0') || rc == -ENOMEM));
	FUZZ_CHECK((rc == 0) == (e != NULL));
	if (rc == 0) {
		FUZZ_CHECK(e->kind == kind);
		/* The maps only add checks: without them it parses too. */
		FUZZ_CHECK(sm_ddb_expr_parse(kind, text, tlen, NULL, &bare, err, sizeof(err)) == 0);
		FUZZ_CHECK(sm_ddb_expr_check(e, have_req ? &env : NULL, err, sizeof(err)) == 0);
		for (i = 0; i < e->nnames; i++)
			FUZZ_CHECK(sm_ddb_expr_uses(e, e->names[i]));
		for (i = 0; i < e->nvalues; i++)
			FUZZ_CHECK(sm_ddb_expr_uses(e, e->values[i]));
		for (i = 0; i < e->nactions; i++) {
			FUZZ_CHECK(e->actions[i].path.nelems > 0 &&
				   e->actions[i].path.elems[0].name != NULL);
			(void)sm_ddb_path_is_top_level(&e->actions[i].path);
			FUZZ_CHECK(sm_ddb_path_top_name(&e->actions[i].path, NULL) != NULL);
		}
		(void)sm_ddb_expr_update_needs_read(e);
		sm_ddb_expr_free(bare);
	}
	if (!have_req)
		goto out;
	/* The endpoint refuses invalid values; the store holds only valid items. */
	if (!valid_members(&op.doc, op.values_tok))
		goto out;
	itok = stored_item(sm_json_get(&op.doc, 0, "Item"), &ok);
	if (!ok)
		goto out;
	if (!key_ok())
		goto out;
	if (e != NULL) {
		evaluate(e, &env, itok);
		evaluate(e, &env, -1);
	}
	legacy(itok);
out:
	sm_ddb_expr_free(e);
	return 0;
}
