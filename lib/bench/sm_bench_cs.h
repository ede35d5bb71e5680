/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_BENCH_CS_H
#define SM_BENCH_CS_H

/*
 * The cassandra-stress report layout: the periodic interval table and the
 * final "Results:" block, byte for byte as cassandra-stress prints them, so
 * that the scripts and dashboards which parse cassandra-stress output read
 * `shardmark stress` output unchanged.
 *
 * Pure formatting from numbers: the caller computes rates and percentiles
 * (lib/bench/sm_hdr) and passes them in. Numbers are formatted as Java's
 * java.util.Formatter does (the shortest decimal that reads back as the same
 * double, rounded HALF_UP; "NaN" and "Infinity"; ',' thousands grouping as in
 * the en_US locale), not as C's printf (exact binary value, ties to even),
 * because the two differ on values such as 0.25 at one decimal.
 *
 * Format strings: scylladb/cassandra-stress
 * src/java/org/apache/cassandra/stress/report/StressMetrics.java (HEADFORMAT,
 * ROWFORMAT, summarise()), TimingIntervals.java and TimingInterval.java
 * (getStringValue) for the "[OP: v unit, ...]" brackets; the server GC columns
 * and lines as in the same file before the fork dropped JMX, identical to
 * apache/cassandra tools/stress/src/org/apache/cassandra/stress/report/
 * StressMetrics.java. ScyllaDB has no JVM, so those are always zero.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/*
 * One row of the periodic table. @type is the op type ("WRITE", "READ", ...)
 * or "total". @total_ops and @time_s are cumulative since the start of the
 * measured phase; the rates, latencies (milliseconds) and @errors are for
 * the interval alone; @stderr_ is the standard error of the row-rate mean
 * (cassandra-stress's Uncertainty; NaN is printed as "NaN").
 */
struct sm_cs_interval {
	const char *type;
	uint64_t total_ops;
	double op_s, pk_s, row_s;
	double mean_ms, med_ms, p95_ms, p99_ms, p999_ms, max_ms;
	double time_s;
	double stderr_;
	uint64_t errors;
};

/*
 * The whole-run values of one op type, or of all of them together, for the
 * "Results:" block. Rates are per second over the run, latencies in
 * milliseconds, @partitions and @errors are totals. @name is ignored in the
 * summary's @total.
 */
struct sm_cs_op_summary {
	const char *name;
	double op_s, pk_s, row_s;
	double mean_ms, med_ms, p95_ms, p99_ms, p999_ms, max_ms;
	uint64_t partitions;
	uint64_t errors;
};

/*
 * The final block: the run's totals, each op type's values (any order: they
 * are printed sorted by name, as cassandra-stress's TreeMap keeps them), the
 * measured run time in seconds, and whether any consumer failed (prints
 * "FAILURE" instead of "END"); @no_end: neither, for one run of several
 * (StressAction.runMulti prints END once, after its summary).
 */
struct sm_cs_summary {
	struct sm_cs_op_summary total;
	const struct sm_cs_op_summary *ops;
	unsigned n_ops;
	double time_s;
	bool failure;
	bool no_end;
};

/*
 * Print the table header line once, before the first interval:
 * "type       total ops,    op/s, ... sdv ms,      mb".
 */
void
sm_cs_print_header(FILE *f);

/*
 * Print one table row for @iv in cassandra-stress's ROWFORMAT. The five
 * server GC columns (gc: #, max ms, sum ms, sdv ms, mb) are printed as 0.
 * cassandra-stress prints one row per op type only when there is more than
 * one, then the "total" row; that choice is the caller's.
 */
void
sm_cs_print_interval(FILE *f, const struct sm_cs_interval *iv);

/*
 * Print the "Results:" block of @s exactly as cassandra-stress's summarise():
 * two blank lines, "Results:", the rate, latency, partition and error lines
 * with their "[OP: v unit, ...]" brackets, the server GC lines (zeros, and
 * "NaN ms" for the average, 0/0), "Total operation time      : HH:mm:ss",
 * a blank line, then "END" or "FAILURE".
 */
void
sm_cs_print_results(FILE *f, const struct sm_cs_summary *s);

/*
 * Format @v into @buf (size @n) as Java's String.format("%[,][width].[prec]f")
 * would: HALF_UP rounding of the shortest round-trip decimal, "NaN",
 * "Infinity", and ',' grouping of the integer part when @group. Returns
 * @buf. Exposed for the other cassandra-stress compatible outputs and tests.
 */
char *
sm_cs_jfmt(char *buf, size_t n, double v, int width, int prec, bool group);

#endif /* SM_BENCH_CS_H */
