/* SPDX-License-Identifier: BSD-3-Clause */
/* lib/bench: the cassandra-stress report layout, byte for byte. */

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sm_bench_cs.h"

/* What a print function wrote, as a NUL-terminated string the caller frees. */
struct capture {
	char *buf;
	size_t len;
	FILE *f;
};

static FILE *
cap_open(struct capture *c)
{
	c->buf = NULL;
	c->len = 0;
	c->f = open_memstream(&c->buf, &c->len);
	assert_non_null(c->f);
	return c->f;
}

static char *
cap_close(struct capture *c)
{
	fclose(c->f);
	return c->buf;
}

static void
test_header(void **state)
{
	struct capture c;
	char *s;

	(void)state;
	sm_cs_print_header(cap_open(&c));
	s = cap_close(&c);
	assert_string_equal(s,
			    "type       total ops,    op/s,    pk/s,   row/s,    mean,     med,"
			    "     .95,     .99,    .999,     max,   time,   stderr, errors,  gc: #,"
			    "  max ms,  sum ms,  sdv ms,      mb\n");
	free(s);
}

static void
test_interval_row(void **state)
{
	/* The row of reference/stress.md 2.4. */
	const struct sm_cs_interval iv = {
		.type = "total",
		.total_ops = 281763,
		.op_s = 28176,
		.pk_s = 28176,
		.row_s = 28176,
		.mean_ms = 0.3,
		.med_ms = 0.2,
		.p95_ms = 1.7,
		.p99_ms = 2.2,
		.p999_ms = 3.7,
		.max_ms = 29.0,
		.time_s = 10.0,
		.stderr_ = 0.01234,
		.errors = 0,
	};
	struct capture c;
	char *s;

	(void)state;
	sm_cs_print_interval(cap_open(&c), &iv);
	s = cap_close(&c);
	assert_string_equal(s,
			    "total,        281763,   28176,   28176,   28176,     0.3,     0.2,"
			    "     1.7,     2.2,     3.7,    29.0,   10.0,  0.01234,      0,      0,"
			    "       0,       0,       0,       0\n");
	free(s);
}

static void
test_interval_row_per_op_and_nan(void **state)
{
	/* A per-op row of a mixed run; the first interval's stderr is NaN in Java. */
	const struct sm_cs_interval iv = {
		.type = "READ",
		.total_ops = 12,
		.op_s = 12.5, /* HALF_UP: 13, where C's printf gives 12 */
		.pk_s = 12.5,
		.row_s = 62.5,
		.mean_ms = 0.25, /* HALF_UP: 0.3 */
		.med_ms = 0.05,
		.p95_ms = 1234.56,
		.p99_ms = 1234.56,
		.p999_ms = 1234.56,
		.max_ms = 1234.56,
		.time_s = 1.0,
		.stderr_ = NAN,
		.errors = 3,
	};
	struct capture c;
	char *s;

	(void)state;
	sm_cs_print_interval(cap_open(&c), &iv);
	s = cap_close(&c);
	assert_string_equal(s,
			    "READ,             12,      13,      13,      63,     0.3,     0.1,"
			    "  1234.6,  1234.6,  1234.6,  1234.6,    1.0,      NaN,      3,      0,"
			    "       0,       0,       0,       0\n");
	free(s);
}

static void
test_results_write(void **state)
{
	/* The Results block of reference/stress.md 2.4 (java-driver PR #427). */
	const struct sm_cs_op_summary w = {
		.name = "WRITE",
		.op_s = 28232.4,
		.pk_s = 28232.4,
		.row_s = 28232.4,
		.mean_ms = 0.3,
		.med_ms = 0.2,
		.p95_ms = 1.7,
		.p99_ms = 2.2,
		.p999_ms = 3.7,
		.max_ms = 29.0,
		.partitions = 1125000,
		.errors = 0,
	};
	const struct sm_cs_summary sum = {
		.total = w,
		.ops = &w,
		.n_ops = 1,
		.time_s = 39.85,
	};
	struct capture c;
	char *s;

	(void)state;
	sm_cs_print_results(cap_open(&c), &sum);
	s = cap_close(&c);
	assert_string_equal(s, "\n\n"
			       "Results:\n"
			       "Op rate                   :   28,232 op/s  [WRITE: 28,232 op/s]\n"
			       "Partition rate            :   28,232 pk/s  [WRITE: 28,232 pk/s]\n"
			       "Row rate                  :   28,232 row/s [WRITE: 28,232 row/s]\n"
			       "Latency mean              :    0.3 ms [WRITE: 0.3 ms]\n"
			       "Latency median            :    0.2 ms [WRITE: 0.2 ms]\n"
			       "Latency 95th percentile   :    1.7 ms [WRITE: 1.7 ms]\n"
			       "Latency 99th percentile   :    2.2 ms [WRITE: 2.2 ms]\n"
			       "Latency 99.9th percentile :    3.7 ms [WRITE: 3.7 ms]\n"
			       "Latency max               :   29.0 ms [WRITE: 29.0 ms]\n"
			       "Total partitions          :  1,125,000 [WRITE: 1,125,000]\n"
			       "Total errors              :          0 [WRITE: 0]\n"
			       "Total GC count            : 0\n"
			       "Total GC memory           : 0.000 KiB\n"
			       "Total GC time             :    0.0 seconds\n"
			       "Avg GC time               :    NaN ms\n"
			       "StdDev GC time            :    0.0 ms\n"
			       "Total operation time      : 00:00:39\n"
			       "\n"
			       "END\n");
	free(s);
}

static void
test_results_mixed_sorted_failure(void **state)
{
	/* Ops given WRITE first; cassandra-stress's TreeMap prints READ first. */
	const struct sm_cs_op_summary ops[2] = {
		{
			.name = "WRITE",
			.op_s = 2500,
			.pk_s = 2500,
			.row_s = 2500,
			.mean_ms = 0.4,
			.med_ms = 0.3,
			.p95_ms = 0.9,
			.p99_ms = 1.5,
			.p999_ms = 4.1,
			.max_ms = 12.3,
			.partitions = 25000,
			.errors = 0,
		},
		{
			.name = "READ",
			.op_s = 7500,
			.pk_s = 7500,
			.row_s = 7500,
			.mean_ms = 0.5,
			.med_ms = 0.4,
			.p95_ms = 1.1,
			.p99_ms = 2.0,
			.p999_ms = 5.5,
			.max_ms = 1502.25,
			.partitions = 75000,
			.errors = 1234,
		},
	};
	const struct sm_cs_summary sum = {
		.total = {
			.op_s = 10000,
			.pk_s = 10000,
			.row_s = 10000,
			.mean_ms = 0.475,
			.med_ms = 0.4,
			.p95_ms = 1.05,
			.p99_ms = 1.9,
			.p999_ms = 5.2,
			.max_ms = 1502.25,
			.partitions = 100000,
			.errors = 1234,
		},
		.ops = ops,
		.n_ops = 2,
		.time_s = 3725.999,
		.failure = true,
	};
	struct capture c;
	char *s;

	(void)state;
	sm_cs_print_results(cap_open(&c), &sum);
	s = cap_close(&c);
	assert_string_equal(
		s,
		"\n\n"
		"Results:\n"
		"Op rate                   :   10,000 op/s  [READ: 7,500 op/s, WRITE: 2,500 op/s]\n"
		"Partition rate            :   10,000 pk/s  [READ: 7,500 pk/s, WRITE: 2,500 pk/s]\n"
		"Row rate                  :   10,000 row/s [READ: 7,500 row/s, WRITE: 2,500 "
		"row/s]\n"
		"Latency mean              :    0.5 ms [READ: 0.5 ms, WRITE: 0.4 ms]\n"
		"Latency median            :    0.4 ms [READ: 0.4 ms, WRITE: 0.3 ms]\n"
		"Latency 95th percentile   :    1.1 ms [READ: 1.1 ms, WRITE: 0.9 ms]\n"
		"Latency 99th percentile   :    1.9 ms [READ: 2.0 ms, WRITE: 1.5 ms]\n"
		"Latency 99.9th percentile :    5.2 ms [READ: 5.5 ms, WRITE: 4.1 ms]\n"
		"Latency max               : 1502.3 ms [READ: 1,502.3 ms, WRITE: 12.3 ms]\n"
		"Total partitions          :    100,000 [READ: 75,000, WRITE: 25,000]\n"
		"Total errors              :      1,234 [READ: 1,234, WRITE: 0]\n"
		"Total GC count            : 0\n"
		"Total GC memory           : 0.000 KiB\n"
		"Total GC time             :    0.0 seconds\n"
		"Avg GC time               :    NaN ms\n"
		"StdDev GC time            :    0.0 ms\n"
		"Total operation time      : 01:02:05\n"
		"\n"
		"FAILURE\n");
	free(s);
}

static void
test_results_no_ops(void **state)
{
	const struct sm_cs_summary sum = { .total = { .op_s = NAN }, .time_s = 90000 };
	struct capture c;
	char *s;

	(void)state;
	sm_cs_print_results(cap_open(&c), &sum);
	s = cap_close(&c);
	assert_non_null(strstr(s, "Op rate                   :      NaN op/s  []\n"));
	assert_non_null(strstr(s, "Total errors              :          0 []\n"));
	/* HH is total hours, not wrapped at a day. */
	assert_non_null(strstr(s, "Total operation time      : 25:00:00\n"));
	free(s);
}

static void
test_java_number_format(void **state)
{
	char b[64];

	(void)state;
	/* HALF_UP on the shortest decimal, unlike C's round-half-even on the binary value. */
	assert_string_equal(sm_cs_jfmt(b, sizeof(b), 0.25, 0, 1, false), "0.3");
	assert_string_equal(sm_cs_jfmt(b, sizeof(b), 0.15, 0, 1, false), "0.2");
	assert_string_equal(sm_cs_jfmt(b, sizeof(b), 2.5, 0, 0, false), "3");
	assert_string_equal(sm_cs_jfmt(b, sizeof(b), 1.005, 0, 2, false), "1.01");
	assert_string_equal(sm_cs_jfmt(b, sizeof(b), 0.04, 0, 1, false), "0.0");
	assert_string_equal(sm_cs_jfmt(b, sizeof(b), 9.96, 0, 1, false), "10.0");
	assert_string_equal(sm_cs_jfmt(b, sizeof(b), 999999.5, 0, 0, true), "1,000,000");
	assert_string_equal(sm_cs_jfmt(b, sizeof(b), 123.456, 0, 0, true), "123");
	assert_string_equal(sm_cs_jfmt(b, sizeof(b), 1234567.891, 12, 1, true), " 1,234,567.9");
	assert_string_equal(sm_cs_jfmt(b, sizeof(b), -1234.5, 0, 0, true), "-1,235");
	assert_string_equal(sm_cs_jfmt(b, sizeof(b), 0, 9, 5, false), "  0.00000");
	assert_string_equal(sm_cs_jfmt(b, sizeof(b), 1e-7, 0, 5, false), "0.00000");
	assert_string_equal(sm_cs_jfmt(b, sizeof(b), 1.5e20, 0, 0, true),
			    "150,000,000,000,000,000,000");
	assert_string_equal(sm_cs_jfmt(b, sizeof(b), INFINITY, 9, 0, true), " Infinity");
	assert_string_equal(sm_cs_jfmt(b, sizeof(b), -INFINITY, 0, 0, true), "-Infinity");
	assert_string_equal(sm_cs_jfmt(b, sizeof(b), NAN, 6, 1, true), "   NaN");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_interval_row),
		cmocka_unit_test(test_interval_row_per_op_and_nan),
		cmocka_unit_test(test_results_write),
		cmocka_unit_test(test_results_mixed_sorted_failure),
		cmocka_unit_test(test_results_no_ops),
		cmocka_unit_test(test_java_number_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
