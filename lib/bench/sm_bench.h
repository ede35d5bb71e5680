/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_BENCH_H
#define SM_BENCH_H

/*
 * lib/bench: what the benchmark commands share: per-iteration results and
 * the statistics ScyllaDB's perf tools print over them (test/perf/perf.cc,
 * aggregated_perf_results), with the same definitions so the numbers
 * compare.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* One iteration, as perf_simple_query's perf_result. */
struct sm_bench_result {
	double tps;
	double allocs_per_op;
	double logallocs_per_op;
	double tasks_per_op;
	double insns_per_op; /* valid when insns_ok */
	double cycles_per_op;
	bool insns_ok, cycles_ok;
	uint64_t errors;
};

/*
 * ScyllaDB's statistics of @n values: the plain mean, the sample standard
 * deviation (n - 1), the median as the element at n / 2 of the sorted
 * values (the upper middle for even n), the median absolute deviation as
 * the element at n / 2 of the sorted |x - mean| (deviation from the mean,
 * as ScyllaDB defines it since 2024), the maximum and the minimum.
 */
struct sm_bench_stats {
	double mean, stdev, median, mad, max, min;
};

/* Statistics of @v[0..n) (n >= 1); @v is left unchanged. */
void
sm_bench_stats(const double *v, unsigned n, struct sm_bench_stats *out);

/*
 * Print the per-iteration line of @r exactly as ScyllaDB formats it:
 * "%.2f tps (%5.1f allocs/op, %5.1f logallocs/op, %5.1f tasks/op, %7.0f
 * insns/op, %7.0f cycles/op, %8u errors)", with "n/a" right-aligned in the
 * field of a counter the machine cannot count.
 */
void
sm_bench_print_result(FILE *f, const struct sm_bench_result *r);

/*
 * Print one summary block ("throughput:" and three tab-indented lines of
 * mean/standard-deviation, median/median-absolute-deviation,
 * maximum/minimum), or "<name>: n/a" when !ok.
 */
void
sm_bench_print_stats(FILE *f, const char *name, const struct sm_bench_stats *s, bool ok);

#endif /* SM_BENCH_H */
