/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Attribute value validation (alt_value.c): sets refuse duplicates by value,
 * in request order of the errors, at any size; set equality ignores order.
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

#define MSG_DUP "One or more parameter values were invalid: Input collection contains duplicates"

void
alt_value_shard_fini(void);

static struct alt_op *op;

static int
setup(void **state)
{
	(void)state;
	if (sm_mem_thread_init() < 0)
		return -1;
	op = sm_calloc(1, sizeof(*op));
	return op == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	(void)state;
	sm_free(op);
	alt_value_shard_fini();
	sm_mem_thread_fini();
	return 0;
}

/* Validate the attribute value @json; 0 or -EINVAL with op->errmsg. */
static int
validate(const char *json)
{
	struct sm_json_doc d;
	struct sm_json_out o;
	int rc;

	sm_json_doc_init(&d);
	sm_json_out_init(&o);
	if (sm_json_parse(&d, json, strlen(json), 0) != 0)
		fail_msg("not JSON: %.80s: %s", json, d.err);
	op->errmsg[0] = '\0';
	rc = alt_value_write(op, &d, 0, &o, false, "Item");
	sm_json_out_release(&o);
	sm_json_doc_release(&d);
	return rc;
}

static void
valid(const char *json)
{
	if (validate(json) != 0)
		fail_msg("%.80s refused: %s", json, op->errmsg);
}

static void
invalid(const char *json, const char *msg)
{
	if (validate(json) != -EINVAL)
		fail_msg("%.80s accepted", json);
	if (strstr(op->errmsg, msg) == NULL)
		fail_msg("%.80s: '%s' lacks '%s'", json, op->errmsg, msg);
}

static void
test_set_duplicates(void **state)
{
	(void)state;
	valid("{\"SS\":[\"a\",\"b\",\"ab\"]}");
	invalid("{\"SS\":[\"a\",\"b\",\"a\"]}", MSG_DUP);
	invalid("{\"SS\":[\"b\",\"a\",\"b\"]}", MSG_DUP);
	/* strings compare unescaped */
	invalid("{\"SS\":[\"\\u0061\",\"a\"]}", MSG_DUP);
	invalid("{\"SS\":[\"x\\/y\",\"x/y\"]}", MSG_DUP);
	valid("{\"SS\":[\"\\u0061\",\"\\u0062\",\"A\"]}");
	/* numbers compare by value */
	valid("{\"NS\":[\"1\",\"10\",\"0.1\",\"-1\"]}");
	invalid("{\"NS\":[\"1\",\"1.0\"]}", MSG_DUP);
	invalid("{\"NS\":[\"1\",\"10E-1\"]}", MSG_DUP);
	invalid("{\"NS\":[\"1.0\",\"2\",\"0.1E1\"]}", MSG_DUP);
	invalid("{\"NS\":[\"0\",\"-0\"]}", MSG_DUP);
	invalid("{\"NS\":[\"100\",\"1E2\"]}", MSG_DUP);
	/* binary sets by their base64 text */
	valid("{\"BS\":[\"AAE=\",\"AAI=\"]}");
	invalid("{\"BS\":[\"AAE=\",\"AAI=\",\"AAE=\"]}", MSG_DUP);
	/* the first problem in request order is the one reported */
	invalid("{\"NS\":[\"1\",\"x\",\"1\"]}", "numeric value");
	invalid("{\"NS\":[\"1\",\"1\",\"x\"]}", MSG_DUP);
	invalid("{\"SS\":[\"a\",\"a\",1]}", MSG_DUP);
	invalid("{\"SS\":[\"a\",1,\"a\"]}", "elements must be strings");
	invalid("{\"BS\":[\"AAE=\",\"!!\",\"AAE=\"]}", "invalid base64");
	/* inside lists and maps too */
	invalid("{\"L\":[{\"S\":\"x\"},{\"M\":{\"a\":{\"NS\":[\"5\",\"5.00\"]}}}]}", MSG_DUP);
}

/* One set element's text: @pre, a number (zero-padded to @width), @suf. */
struct elem_fmt {
	const char *pre, *suf;
	int width;
};

/*
 * Build {"<type>":[...]} of @n elements @f(i); @dup (NULL: none) adds
 * element 0 again at the end, written as @dup(0).
 */
static char *
big_set(const char *type, struct elem_fmt f, const struct elem_fmt *dup, unsigned n)
{
	size_t cap = (size_t)n * 48 + 64, len = 0;
	char *s = malloc(cap);
	unsigned i;

	assert_non_null(s);
	len += (size_t)snprintf(s, cap, "{\"%s\":[", type);
	for (i = 0; i < n + (dup != NULL); i++) {
		const struct elem_fmt *e = i < n ? &f : dup;

		len += (size_t)snprintf(s + len, cap - len, "%s\"%s%0*u%s\"", i ? "," : "", e->pre,
					e->width, i < n ? i : 0, e->suf);
	}
	snprintf(s + len, cap - len, "]}");
	return s;
}

static void
test_large_sets(void **state)
{
	static const struct {
		const char *type;
		struct elem_fmt f, dup;
	} v[] = {
		{ "SS", { "s", "", 0 }, { "s", "", 0 } },
		{ "SS", { "\\u00e9", "", 0 }, { "\u00e9", "", 0 } },
		{ "NS", { "", "", 0 }, { "", ".000", 0 } },
		{ "NS", { "-", ".5", 0 }, { "-", "5E-1", 0 } },
		{ "BS", { "", "", 8 }, { "", "", 8 } },
	};
	unsigned i;
	char *s;

	(void)state;
	for (i = 0; i < SM_ARRAY_SIZE(v); i++) {
		s = big_set(v[i].type, v[i].f, NULL, 20000);
		valid(s);
		free(s);
		s = big_set(v[i].type, v[i].f, &v[i].dup, 20000);
		invalid(s, MSG_DUP);
		free(s);
	}
}

static bool
equal(const char *a, const char *b)
{
	struct sm_json_doc da, db;
	bool r;

	sm_json_doc_init(&da);
	sm_json_doc_init(&db);
	assert_int_equal(sm_json_parse(&da, a, strlen(a), 0), 0);
	assert_int_equal(sm_json_parse(&db, b, strlen(b), 0), 0);
	r = alt_value_equal(op, (struct alt_val){ &da, 0 }, (struct alt_val){ &db, 0 });
	sm_json_doc_release(&da);
	sm_json_doc_release(&db);
	return r;
}

static void
test_set_equality(void **state)
{
	char *a, *b;

	(void)state;
	assert_true(equal("{\"SS\":[\"a\",\"b\"]}", "{\"SS\":[\"b\",\"a\"]}"));
	assert_false(equal("{\"SS\":[\"a\",\"b\"]}", "{\"SS\":[\"a\",\"c\"]}"));
	assert_false(equal("{\"SS\":[\"a\",\"b\"]}", "{\"SS\":[\"a\"]}"));
	assert_true(equal("{\"NS\":[\"1\",\"2\"]}", "{\"NS\":[\"2.0\",\"10E-1\"]}"));
	assert_false(equal("{\"NS\":[\"1\",\"2\"]}", "{\"NS\":[\"2\",\"3\"]}"));
	assert_false(equal("{\"NS\":[\"1\"]}", "{\"SS\":[\"1\"]}"));
	assert_true(equal("{\"BS\":[\"AAE=\",\"AAI=\"]}", "{\"BS\":[\"AAI=\",\"AAE=\"]}"));
	assert_true(equal("{\"SS\":[\"\\u0061\"]}", "{\"SS\":[\"a\"]}"));
	a = big_set("SS", (struct elem_fmt){ "k", "", 0 }, NULL, 20000);
	b = big_set("SS", (struct elem_fmt){ "k", "", 0 }, NULL, 20000);
	assert_true(equal(a, b));
	b[strlen(b) - 4] = 'x'; /* the last element differs */
	assert_false(equal(a, b));
	free(a);
	free(b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set_duplicates),
		cmocka_unit_test(test_large_sets),
		cmocka_unit_test(test_set_equality),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
