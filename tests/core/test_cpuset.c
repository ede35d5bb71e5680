/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sm_shard.h"

#define NCPUS 64

static bool
has(const uint8_t *set, unsigned cpu)
{
	return set[cpu / 8] & (1u << (cpu % 8));
}

/* Parse @list and check the set equals exactly the @n CPUs in @want. */
static void
check_list(const char *list, const unsigned *want, unsigned n)
{
	uint8_t set[NCPUS / 8];
	unsigned cpu, i, members = 0;
	bool expected;

	memset(set, 0xff, sizeof(set)); /* must be zeroed by the parser */
	assert_int_equal(sm_cpuset_parse(list, set, NCPUS), (int)n);
	for (cpu = 0; cpu < NCPUS; cpu++) {
		expected = false;
		for (i = 0; i < n; i++)
			expected = expected || want[i] == cpu;
		if (has(set, cpu) != expected)
			fail_msg("\"%s\": cpu %u is %s", list, cpu, expected ? "missing" : "extra");
		members += has(set, cpu);
	}
	assert_int_equal(members, n);
}

static void
test_valid(void **state)
{
	static const unsigned a[] = { 0 };
	static const unsigned b[] = { 0, 1, 2, 3 };
	static const unsigned c[] = { 0, 1, 2, 3, 8, 10, 11 };
	static const unsigned d[] = { 63 };
	static const unsigned e[] = { 5, 6, 7, 8, 9, 10 };
	static const unsigned f[] = { 7 };

	(void)state;
	check_list("0", a, 1);
	check_list("0-3", b, 4);
	check_list("0-3,8,10-11", c, 7);
	check_list("63", d, 1);
	check_list("5-10", e, 6);
	check_list("7-7", f, 1);
	check_list("007", f, 1);
}

static void
test_duplicates_counted_once(void **state)
{
	static const unsigned a[] = { 0, 1, 2, 3 };
	static const unsigned b[] = { 4 };

	(void)state;
	check_list("0-3,1,2-3,0", a, 4);
	check_list("4,4,4", b, 1);
	check_list("2-3,0-1", a, 4);
}

static void
test_invalid(void **state)
{
	static const char *const bad[] = {
		"",   "1-", "-1",    "3-1", "a",   "1,,2", "1 2", " 1",	  "1 ",
		"1,", ",1", "1-2-3", "+1",  "0x1", "1\n",  "64",  "0-64", "99999999999999999999",
	};
	uint8_t set[NCPUS / 8];
	size_t i, k;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(set, 0xff, sizeof(set));
		if (sm_cpuset_parse(bad[i], set, NCPUS) != -EINVAL)
			fail_msg("\"%s\" was accepted", bad[i]);
		/* No half-parsed set is left behind. */
		for (k = 0; k < sizeof(set); k++)
			assert_int_equal(set[k], 0);
	}
	assert_int_equal(sm_cpuset_parse(NULL, set, NCPUS), -EINVAL);
}

static void
test_ncpus_bound(void **state)
{
	uint8_t set[2];

	(void)state;
	/* 10 CPUs: a 2-byte map; the bound is exclusive. */
	assert_int_equal(sm_cpuset_parse("0-9", set, 10), 10);
	assert_int_equal(set[0], 0xff);
	assert_int_equal(set[1], 0x03);
	assert_int_equal(sm_cpuset_parse("10", set, 10), -EINVAL);
	assert_int_equal(sm_cpuset_parse("9-10", set, 10), -EINVAL);
	assert_int_equal(sm_cpuset_parse("0", set, 0), -EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_duplicates_counted_once),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_ncpus_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
