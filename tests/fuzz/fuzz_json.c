/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: lib/alternator's JSON reader and writer, and the
 * attribute-value validation on top.
 *
 * The input is a JSON text. Whatever it is, the parse either fails with a
 * message and no tokens, or every accessor works on every token, and then:
 *   - rejecting duplicate keys never accepts what the plain parse refuses;
 *   - the document written back through the writer (strings unescaped and
 *     escaped again) parses, with as many tokens, and writing that one back
 *     gives the same bytes (the writer's output is a fixed point);
 *   - the input's bytes written as one string are valid JSON (the writer
 *     escapes anything);
 *   - when the root is an object, each member validated as a DynamoDB
 *     attribute value either fails with a message or yields canonical JSON
 *     that validates again to the same bytes.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "alt_priv.h"
#include "fuzz.h"
#include "sm_json.h"

static struct sm_json_doc doc, dup_doc, again;
static struct sm_json_out out, out2, canon, canon2;
static struct alt_op op;

/* Read every token of @tok's subtree through the accessors; returns tokens seen. */
static uint32_t
walk(const struct sm_json_doc *d, int tok, bool unique_keys, unsigned depth)
{
	enum sm_json_type t = sm_json_type(d, tok);
	struct sm_bytes span = sm_json_span(d, tok), s;
	uint32_t seen = 1, n = 0;
	char *buf;
	int64_t i64;
	bool b;
	int k, v, rc;

	FUZZ_CHECK(t != SM_JSON_NONE && depth <= SM_JSON_MAX_DEPTH);
	FUZZ_CHECK(span.len > 0 && (const char *)span.p >= d->text &&
		   (const char *)span.p + span.len <= d->text + d->len);
	switch (t) {
	case SM_JSON_OBJECT:
		for (k = sm_json_first(d, tok); k >= 0; k = sm_json_next(d, k), n++) {
			FUZZ_CHECK(sm_json_type(d, k) == SM_JSON_STRING);
			v = sm_json_member_value(d, k);
			FUZZ_CHECK(v > k);
			seen += walk(d, k, unique_keys, depth + 1);
			seen += walk(d, v, unique_keys, depth + 1);
			buf = sm_malloc(sm_json_span(d, k).len);
			FUZZ_CHECK(buf != NULL);
			FUZZ_CHECK(sm_json_str(d, k, buf, sm_json_span(d, k).len, &s) == 0);
			rc = sm_json_getn(d, tok, (const char *)s.p, s.len);
			FUZZ_CHECK(rc >= 0 && (!unique_keys || rc == v));
			sm_free(buf);
		}
		FUZZ_CHECK(n == sm_json_count(d, tok));
		break;
	case SM_JSON_ARRAY:
		for (k = sm_json_first(d, tok); k >= 0; k = sm_json_next(d, k), n++)
			seen += walk(d, k, unique_keys, depth + 1);
		FUZZ_CHECK(n == sm_json_count(d, tok));
		break;
	case SM_JSON_STRING:
		buf = sm_malloc(span.len);
		FUZZ_CHECK(buf != NULL);
		FUZZ_CHECK(sm_json_str(d, tok, buf, span.len, &s) == 0);
		FUZZ_CHECK(s.len + 2 <= span.len);
		FUZZ_CHECK(sm_json_str_eqn(d, tok, (const char *)s.p, s.len));
		FUZZ_CHECK(sm_json_str_has_escapes(d, tok) || s.len + 2 == span.len);
		sm_free(buf);
		break;
	case SM_JSON_NUMBER:
		rc = sm_json_i64(d, tok, &i64);
		FUZZ_CHECK(rc == 0 || rc == -EINVAL || rc == -ERANGE);
		break;
	case SM_JSON_TRUE:
	case SM_JSON_FALSE:
		FUZZ_CHECK(sm_json_bool(d, tok, &b) == 0 && b == (t == SM_JSON_TRUE));
		break;
	default:
		FUZZ_CHECK(sm_json_bool(d, tok, &b) == -EINVAL);
		break;
	}
	return seen;
}

/* Write @tok's value back through the writer, strings unescaped first. */
static void
rewrite(const struct sm_json_doc *d, int tok, struct sm_json_out *o)
{
	struct sm_bytes span = sm_json_span(d, tok), s;
	char *buf;
	int k;

	switch (sm_json_type(d, tok)) {
	case SM_JSON_OBJECT:
		sm_json_out_obj_begin(o);
		for (k = sm_json_first(d, tok); k >= 0; k = sm_json_next(d, k)) {
			buf = sm_malloc(sm_json_span(d, k).len);
			FUZZ_CHECK(buf != NULL);
			FUZZ_CHECK(sm_json_str(d, k, buf, sm_json_span(d, k).len, &s) == 0);
			sm_json_out_keyn(o, (const char *)s.p, s.len);
			sm_free(buf);
			rewrite(d, sm_json_member_value(d, k), o);
		}
		sm_json_out_obj_end(o);
		break;
	case SM_JSON_ARRAY:
		sm_json_out_arr_begin(o);
		for (k = sm_json_first(d, tok); k >= 0; k = sm_json_next(d, k))
			rewrite(d, k, o);
		sm_json_out_arr_end(o);
		break;
	case SM_JSON_STRING:
		buf = sm_malloc(span.len);
		FUZZ_CHECK(buf != NULL);
		FUZZ_CHECK(sm_json_str(d, tok, buf, span.len, &s) == 0);
		sm_json_out_strn(o, (const char *)s.p, s.len);
		sm_free(buf);
		break;
	case SM_JSON_NUMBER:
		sm_json_out_num(o, (const char *)span.p, span.len);
		break;
	case SM_JSON_TRUE:
		sm_json_out_bool(o, true);
		break;
	case SM_JSON_FALSE:
		sm_json_out_bool(o, false);
		break;
	default:
		sm_json_out_null(o);
		break;
	}
}

/* Validate each member of object @root as an attribute value, twice. */
static void
validate_item(const struct sm_json_doc *d, int root)
{
	int k, rc;

	for (k = sm_json_first(d, root); k >= 0; k = sm_json_next(d, k)) {
		sm_json_out_reset(&canon);
		op.errmsg[0] = '\0';
		rc = alt_value_write(&op, d, sm_json_member_value(d, k), &canon, false, "item");
		if (rc < 0) {
			FUZZ_CHECK(rc == -EINVAL && op.errmsg[0] != '\0');
			continue;
		}
		FUZZ_CHECK(sm_json_parse(&again, canon.p, canon.len, 0) == 0);
		sm_json_out_reset(&canon2);
		FUZZ_CHECK(alt_value_write(&op, &again, sm_json_root(&again), &canon2, false,
					   "item") == 0);
		FUZZ_CHECK(canon2.len == canon.len && memcmp(canon2.p, canon.p, canon.len) == 0);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	uint32_t ntok;
	int rc, rc_dup;

	rc = sm_json_parse(&doc, text, size, 0);
	rc_dup = sm_json_parse(&dup_doc, text, size, SM_JSON_REJECT_DUP_KEYS);
	FUZZ_CHECK(rc == 0 || rc == -EINVAL);
	FUZZ_CHECK(rc_dup == 0 || rc_dup == -EINVAL);
	FUZZ_CHECK(rc == 0 || rc_dup != 0);

	/* Any bytes, written as a string, are one valid JSON string. */
	sm_json_out_reset(&out);
	sm_json_out_strn(&out, text, size);
	FUZZ_CHECK(out.err == 0);
	FUZZ_CHECK(sm_json_parse(&again, out.p, out.len, 0) == 0 &&
		   sm_json_type(&again, 0) == SM_JSON_STRING);

	if (rc != 0) {
		FUZZ_CHECK(doc.ntok == 0 && sm_json_root(&doc) == -1 && doc.err[0] != '\0');
		return 0;
	}
	ntok = walk(&doc, sm_json_root(&doc), rc_dup == 0, 0);
	FUZZ_CHECK(ntok == doc.ntok);

	sm_json_out_reset(&out);
	rewrite(&doc, sm_json_root(&doc), &out);
	FUZZ_CHECK(out.err == 0);
	FUZZ_CHECK(sm_json_parse(&again, out.p, out.len, 0) == 0);
	FUZZ_CHECK(again.ntok == doc.ntok);
	sm_json_out_reset(&out2);
	rewrite(&again, sm_json_root(&again), &out2);
	FUZZ_CHECK(out2.len == out.len && memcmp(out2.p, out.p, out.len) == 0);

	if (sm_json_type(&doc, sm_json_root(&doc)) == SM_JSON_OBJECT)
		validate_item(&doc, sm_json_root(&doc));
	return 0;
}
