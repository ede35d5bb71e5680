/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Projections of items (alt_eval.c): what tests/fuzz/fuzz_expr found.
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
static struct sm_json_out out;

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
	sm_json_out_init(&out);
	sm_json_doc_init(&op.doc);
	return sm_mem_thread_init();
}

static int
teardown(void **state)
{
	(void)state;
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
		cmocka_unit_test(test_projection_of_missing_paths),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
