/* SPDX-License-Identifier: BSD-3-Clause */
/* lib/bench: ScyllaDB's statistics and result line formats. */

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sm_bench.h"

static void
test_stats_scylla_definitions(void **state)
{
	/* perf.cc: median = sorted[n/2] (upper middle), MAD = sorted |x - mean| [n/2],
	 * sample standard deviation. */
	const double v[] = { 10, 40, 20, 30 };
	struct sm_bench_stats s;

	(void)state;
	sm_bench_stats(v, 4, &s);
	assert_true(fabs(s.mean - 25) < 1e-9);
	assert_true(fabs(s.median - 30) < 1e-9); /* upper middle of 10 20 30 40 */
	assert_true(fabs(s.mad - 15) < 1e-9);	 /* |x-25| = 15 5 5 15 -> 5 5 15 15, [2] */
	assert_true(fabs(s.stdev - sqrt(500.0 / 3)) < 1e-9);
	assert_true(s.min == 10 && s.max == 40);
	assert_true(v[0] == 10 && v[1] == 40); /* input untouched */
}

static void
test_stats_single(void **state)
{
	const double v[] = { 7 };
	struct sm_bench_stats s;

	(void)state;
	sm_bench_stats(v, 1, &s);
	assert_true(s.mean == 7 && s.median == 7 && s.mad == 0 && s.stdev == 0);
	assert_true(s.min == 7 && s.max == 7);
}

static char *
print_to_string(const struct sm_bench_result *r)
{
	static char buf[512];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	assert_non_null(f);
	sm_bench_print_result(f, r);
	fclose(f);
	return buf;
}

static void
test_result_line(void **state)
{
	struct sm_bench_result r = {
		.tps = 262650.014,
		.allocs_per_op = 64.1,
		.logallocs_per_op = 0,
		.tasks_per_op = 14.1,
		.insns_per_op = 35720,
		.cycles_per_op = 17240,
		.insns_ok = true,
		.cycles_ok = true,
		.errors = 0,
	};

	(void)state;
	/* ScyllaDB's own example line, character for character */
	assert_string_equal(print_to_string(&r),
			    "262650.01 tps ( 64.1 allocs/op,   0.0 logallocs/op,  14.1 tasks/op,   "
			    "35720 insns/op,   17240 cycles/op,        0 errors)\n");
	r.insns_ok = r.cycles_ok = false;
	r.errors = 3;
	assert_string_equal(
		print_to_string(&r),
		"262650.01 tps ( 64.1 allocs/op,   0.0 logallocs/op,  14.1 tasks/op,     "
		"n/a insns/op,     n/a cycles/op,        3 errors)\n");
}

static void
test_summary_block(void **state)
{
	struct sm_bench_stats s = { 1.5, 0.25, 2, 0.5, 3, 1 };
	char buf[512];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	(void)state;
	assert_non_null(f);
	sm_bench_print_stats(f, "throughput", &s, true);
	sm_bench_print_stats(f, "instructions_per_op", &s, false);
	fclose(f);
	assert_string_equal(buf, "throughput:\n\tmean=   1.50 standard-deviation=0.25\n"
				 "\tmedian= 2.00 median-absolute-deviation=0.50\n"
				 "\tmaximum=3.00 minimum=1.00\ninstructions_per_op: n/a\n");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stats_scylla_definitions),
		cmocka_unit_test(test_stats_single),
		cmocka_unit_test(test_result_line),
		cmocka_unit_test(test_summary_block),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
