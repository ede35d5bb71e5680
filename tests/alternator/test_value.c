/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Attribute values (alt_value.c): validation and the canonical JSON the
 * store keeps, and projections of items (alt_eval.c), for what
 * tests/fuzz/fuzz_json and fuzz_expr found.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "alt_priv.h"

static struct alt_op op;
static struct sm_json_doc doc;
static struct sm_json_out out;

/* Validate the attribute value @json; its canonical form is in out.p. */
static int
validate(const char *json, size_t len)
{
	assert_int_equal(sm_json_parse(&doc, json, len, 0), 0);
	sm_json_out_reset(&out);
	op.errmsg[0] = '\0';
	return alt_value_write(&op, &doc, sm_json_root(&doc), &out, false, "test");
}

static void
assert_dup(const char *json)
{
	assert_int_equal(validate(json, strlen(json)), -EINVAL);
	assert_string_equal(op.errmsg, "One or more parameter values were invalid: Input "
				       "collection contains duplicates");
}

/* A set of @n elements ("1".."n", or as strings), then @last. */
static char *
big_set(const char *type, unsigned n, const char *last)
{
	size_t cap = (size_t)n * 12 + 64, len = 0;
	char *s = malloc(cap);
	unsigned i;

	assert_non_null(s);
	len += (size_t)snprintf(s + len, cap - len, "{\"%s\":[", type);
	for (i = 1; i <= n; i++)
		len += (size_t)snprintf(s + len, cap - len, "\"%u\",", i);
	snprintf(s + len, cap - len, "%s]}", last);
	return s;
}

/*
 * Sets refuse a repeated element, compared as DynamoDB does: numbers by
 * value, strings unescaped, binaries as sent; the order given is kept.
 */
static void
test_set_duplicates(void **state)
{
	static const char ok[] = "{\"NS\":[\"3\",\"1\",\"2.5\"]}";

	(void)state;
	assert_int_equal(validate(ok, strlen(ok)), 0);
	assert_string_equal(out.p, "{\"NS\":[\"3\",\"1\",\"2.5\"]}");
	assert_dup("{\"NS\":[\"1\",\"2\",\"1.0\"]}");
	assert_dup("{\"NS\":[\"-0.5\",\"-5E-1\"]}");
	assert_dup("{\"SS\":[\"\\u0041\",\"b\",\"A\"]}");
	assert_dup("{\"BS\":[\"AA==\",\"AQ==\",\"AA==\"]}");
	assert_int_equal(validate("{\"SS\":[\"a\",\"A\"]}", 16), 0);
}

/*
 * Large sets: each element was compared with every one before it (and a
 * number parsed again each time), so a 400 KB item of one number set held
 * the shard for minutes (found by fuzz_json). Now sorted: n log n.
 */
static void
test_large_set(void **state)
{
	char *s;

	(void)state;
	s = big_set("NS", 30000, "\"0\"");
	assert_int_equal(validate(s, strlen(s)), 0);
	free(s);
	s = big_set("NS", 30000, "\"29999.0\"");
	assert_dup(s);
	free(s);
	s = big_set("SS", 30000, "\"x\"");
	assert_int_equal(validate(s, strlen(s)), 0);
	free(s);
	s = big_set("SS", 30000, "\"\\u0031\"");
	assert_dup(s);
	free(s);
}

/* ProjectionExpression @expr applied to item @item (JSON), compared with @want. */
static void
assert_projection(const char *item, const char *expr, const char *want)
{
	struct sm_json_doc idoc;
	char err[512];

	sm_json_doc_init(&idoc);
	assert_int_equal(sm_json_parse(&op.doc, "{}", 2, 0), 0);
	op.root = 0;
	op.names_tok = op.values_tok = op.atg_tok = -1;
	assert_int_equal(sm_ddb_expr_parse(SM_DDB_PROJECTION, expr, strlen(expr), NULL, &op.proj,
					   err, sizeof(err)),
			 0);
	assert_int_equal(sm_json_parse(&idoc, item, strlen(item), 0), 0);
	sm_json_out_reset(&out);
	assert_int_equal(alt_write_projected(&op, &idoc, sm_json_root(&idoc), &out), 0);
	assert_string_equal(out.p, want);
	sm_ddb_expr_free(op.proj);
	op.proj = NULL;
	sm_json_doc_release(&idoc);
}

/*
 * A path that does not exist in the item projects to nothing, as in
 * ScyllaDB's test_projection_expression_path: a missing member, past the
 * end of a list, a map indexed as a list or the reverse, anything below a
 * number. "n.s" on a number gave {"n":{"N":[]}}, no attribute value at
 * all, and "a.x" an empty map (found by fuzz_expr).
 */
static void
test_projection_of_missing_paths(void **state)
{
	static const char item[] =
		"{\"a\":{\"M\":{\"b\":{\"L\":[{\"N\":\"2\"},{\"N\":\"4\"},{\"M\":{\"x\":"
		"{\"S\":\"hi\"},\"y\":{\"S\":\"yo\"}}}]},\"c\":{\"N\":\"5\"}}},"
		"\"b\":{\"S\":\"hello\"},\"n\":{\"N\":\"5\"}}";
	static const char *const nothing[] = { "x",	    "a.b[3]", "a.x",  "a.x.y",
					       "a.b[3].x",  "a.b.x",  "a[0]", "a.b[0].x",
					       "a.b[0][0]", "n.s",    "n[0]", "b.c" };
	unsigned i;

	(void)state;
	assert_projection(item, "a.b[0]", "{\"a\":{\"M\":{\"b\":{\"L\":[{\"N\":\"2\"}]}}}}");
	assert_projection(item, "a.b[2].y",
			  "{\"a\":{\"M\":{\"b\":{\"L\":[{\"M\":{\"y\":{\"S\":\"yo\"}}}]}}}}");
	for (i = 0; i < SM_ARRAY_SIZE(nothing); i++)
		assert_projection(item, nothing[i], "{}");
	assert_projection(item, "a.x, a.b[0], x, a.b[3].x, n.s",
			  "{\"a\":{\"M\":{\"b\":{\"L\":[{\"N\":\"2\"}]}}}}");
	assert_projection(item, "a.c, b, a.zz",
			  "{\"a\":{\"M\":{\"c\":{\"N\":\"5\"}}},\"b\":{\"S\":\"hello\"}}");
}

static int
setup(void **state)
{
	(void)state;
	sm_json_doc_init(&doc);
	sm_json_out_init(&out);
	sm_json_doc_init(&op.doc);
	return sm_mem_thread_init();
}

static int
teardown(void **state)
{
	(void)state;
	sm_json_doc_release(&doc);
	sm_json_out_release(&out);
	sm_json_doc_release(&op.doc);
	alt_value_shard_fini();
	sm_mem_thread_fini();
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set_duplicates),
		cmocka_unit_test(test_large_set),
		cmocka_unit_test(test_projection_of_missing_paths),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
