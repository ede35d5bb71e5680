/* SPDX-License-Identifier: BSD-3-Clause */
/* lib/config: option tables (sm_opt.h), each type's store and its messages. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sm_opt.h"

struct opts {
	bool flag;
	unsigned n;
	uint64_t big;
	const char *text;
	const char *path;
};

/* A table as a command writes one: (name, type, offset, min, max). */
struct row {
	const char *name;
	enum sm_opt_type type;
	size_t offset;
	uint64_t min, max;
};

#define ROW(name, type, field, min, max)                                                           \
	{ name, SM_OPT_##type, SM_OPT_OFFSET(type, struct opts, field), min, max }

static const struct row rows[] = {
	ROW("--flag", BOOL, flag, 0, 0),      ROW("--n", UINT, n, 1, 100),
	ROW("--big", U64, big, 0, UINT64_MAX / 2), ROW("--text", STRING, text, 0, 0),
	ROW("--path", OUTPUT, path, 0, 0),
};

static int
set(struct opts *o, const char *name, const char *value, char *err, size_t errlen)
{
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (strcmp(rows[i].name, name) == 0)
			return sm_opt_store(name, rows[i].type, rows[i].min, rows[i].max, value,
					    (char *)o + rows[i].offset, err, errlen);
	return -1;
}

static void
test_typed_rows_land_at_their_offset(void **state)
{
	struct opts o = { 0 };
	char err[256] = "";

	(void)state;
	assert_int_equal(set(&o, "--flag", NULL, err, sizeof(err)), 0);
	assert_true(o.flag); /* a bare flag is true */
	assert_int_equal(set(&o, "--n", "100", err, sizeof(err)), 0);
	assert_int_equal(o.n, 100);
	assert_int_equal(set(&o, "--big", "9223372036854775807", err, sizeof(err)), 0);
	assert_true(o.big == UINT64_MAX / 2);
	assert_int_equal(set(&o, "--text", "5s", err, sizeof(err)), 0);
	assert_string_equal(o.text, "5s");
	assert_int_equal(set(&o, "--path", "out.json", err, sizeof(err)), 0);
	assert_string_equal(o.path, "out.json");
	/* neighbours untouched by each store */
	assert_true(o.flag && o.n == 100);
}

static void
test_bool_spellings(void **state)
{
	static const char *const yes[] = { "1", "true", "TRUE", "yes", "On" };
	static const char *const no[] = { "0", "false", "No", "off" };
	struct opts o = { 0 };
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		o.flag = false;
		assert_int_equal(set(&o, "--flag", yes[i], err, sizeof(err)), 0);
		assert_true(o.flag);
	}
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		o.flag = true;
		assert_int_equal(set(&o, "--flag", no[i], err, sizeof(err)), 0);
		assert_false(o.flag);
	}
	o.flag = true;
	assert_int_equal(set(&o, "--flag", "maybe", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "--flag: expected true or false (1 or 0), got 'maybe'");
	assert_true(o.flag); /* unchanged */
}

static void
test_integer_bounds_and_messages(void **state)
{
	static const char *const bad[] = { "0", "101", "-1", "x", "", "5x", "99999999999999999999" };
	struct opts o = { .n = 7 };
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(set(&o, "--n", bad[i], err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "--n: expected an integer from 1 to 100, got '"));
		assert_int_equal(o.n, 7);
	}
	assert_int_equal(set(&o, "--big", "9223372036854775808", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "--big: expected an integer from 0 to 9223372036854775807, got "
				 "'9223372036854775808'");
}

static void
test_unsigned_row_clamps_to_unsigned(void **state)
{
	struct opts o = { 0 };
	char err[256];

	(void)state;
	/* a row's max above UINT32_MAX cannot wrap an unsigned field */
	assert_int_equal(sm_opt_store("--n", SM_OPT_UINT, 0, UINT64_MAX, "4294967296", &o.n, err,
				      sizeof(err)),
			 -EINVAL);
	assert_int_equal(sm_opt_store("--n", SM_OPT_UINT, 0, UINT64_MAX, "4294967295", &o.n, err,
				      sizeof(err)),
			 0);
	assert_true(o.n == UINT32_MAX);
}

static void
test_strings_ignored_and_setter_rows(void **state)
{
	struct opts o = { .text = "x" };
	char err[256];

	(void)state;
	/* an empty string unsets (--timeout ""), an output path stays as typed */
	assert_int_equal(set(&o, "--text", "", err, sizeof(err)), 0);
	assert_null(o.text);
	assert_int_equal(set(&o, "--path", "", err, sizeof(err)), 0);
	assert_string_equal(o.path, "");
	assert_int_equal(sm_opt_store("--flush", SM_OPT_IGNORED, 0, 0, NULL, NULL, err,
				      sizeof(err)),
			 0);
	/* a setter row is not the table's to store */
	assert_int_equal(sm_opt_store("--cl", SM_OPT_FN, 0, 0, "ONE", &o, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "--cl"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_typed_rows_land_at_their_offset),
		cmocka_unit_test(test_bool_spellings),
		cmocka_unit_test(test_integer_bounds_and_messages),
		cmocka_unit_test(test_unsigned_row_clamps_to_unsigned),
		cmocka_unit_test(test_strings_ignored_and_setter_rows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
