/* SPDX-License-Identifier: BSD-3-Clause */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sm_bench_cs.h"

/*
 * The format strings, from cassandra-stress's StressMetrics.java:
 *
 *   HEADFORMAT = "%-10s%10s,%8s,%8s,%8s,%8s,%8s,%8s,%8s,%8s,%8s,%7s,%9s,%7s,%7s,%8s,%8s,%8s,%8s"
 *   ROWFORMAT  = "%-10s%10d,%8.0f,%8.0f,%8.0f,%8.1f,%8.1f,%8.1f,%8.1f,%8.1f,%8.1f,%7.1f,%9.5f,%7d,
 *                 %7.0f,%8.0f,%8.0f,%8.0f,%8.0f"
 *
 * The header's first cell is "type" (no comma); each row's is type + ",".
 */
#define CS_HEADFORMAT                                                                              \
	"%-10s%10s,%8s,%8s,%8s,%8s,%8s,%8s,%8s,%8s,%8s,%7s,%9s,%7s,%7s,%8s,%8s,%8s,%8s\n"

/* Large enough for any double at up to 9 decimals with grouping. */
#define CS_NUM_MAX 512

/*
 * The shortest decimal digits of @a (finite, > 0) that read back as @a, as
 * Java's Double.toString chooses them: digits into @d without a point,
 * trailing zeros dropped; *@e10 is the power of ten of the first digit.
 */
static int
shortest_digits(double a, char *d, int *e10)
{
	char tmp[48], *c;
	int p, k = 0;

	for (p = 1; p <= 17; p++) {
		snprintf(tmp, sizeof(tmp), "%.*e", p - 1, a);
		if (strtod(tmp, NULL) == a)
			break;
	}
	for (c = tmp; *c != '\0' && *c != 'e'; c++)
		if (*c >= '0' && *c <= '9')
			d[k++] = *c;
	*e10 = *c == 'e' ? atoi(c + 1) : 0;
	while (k > 1 && d[k - 1] == '0')
		k--;
	d[k] = '\0';
	return k;
}

/* Insert ',' every three digits of the integer part of @s (in place; @n is its buffer size). */
static void
group_in_place(char *s, size_t n)
{
	char tmp[CS_NUM_MAX];
	const char *src = s;
	char *dst = tmp;
	size_t ndig = 0, i;

	if (*src == '-')
		*dst++ = *src++;
	while (src[ndig] >= '0' && src[ndig] <= '9')
		ndig++;
	for (i = 0; i < ndig; i++) {
		if (i > 0 && (ndig - i) % 3 == 0)
			*dst++ = ',';
		*dst++ = src[i];
	}
	snprintf(dst, sizeof(tmp) - (size_t)(dst - tmp), "%s", src + ndig);
	snprintf(s, n, "%s", tmp);
}

char *
sm_cs_jfmt(char *buf, size_t n, double v, int width, int prec, bool group)
{
	char d[24], num[CS_NUM_MAX], *o = num;
	int nd, e10, top, p, i, start;

	if (isnan(v)) {
		snprintf(buf, n, "%*s", width, "NaN");
		return buf;
	}
	if (isinf(v)) {
		snprintf(buf, n, "%*s", width, v > 0 ? "Infinity" : "-Infinity");
		return buf;
	}
	if (prec < 0)
		prec = 0;
	if (prec > 9)
		prec = 9;
	if (v == 0) {
		d[0] = '0';
		d[1] = '\0';
		nd = 1;
		e10 = 0;
	} else {
		nd = shortest_digits(fabs(v), d, &e10);
	}
	/*
	 * Lay the digits out from 10^top down to 10^-prec, plus one guard digit
	 * at 10^-(prec+1) that decides HALF_UP rounding (Java's applyPrecision
	 * looks only at the first dropped digit of the shortest decimal).
	 */
	top = e10 > 0 ? e10 : 0;
	if (signbit(v))
		*o++ = '-';
	*o++ = '0'; /* room for a carry out of the top digit */
	start = (int)(o - num);
	for (p = top; p >= -(prec + 1); p--) {
		i = e10 - p;
		*o++ = (i >= 0 && i < nd) ? d[i] : '0';
	}
	o--; /* drop the guard digit, carrying if it was >= 5 */
	if (*o >= '5') {
		char *c = o - 1;

		while (*c == '9')
			*c-- = '0';
		(*c)++;
	}
	*o = '\0';
	/* Insert the point before the last @prec digits. */
	if (prec > 0) {
		memmove(o - prec + 1, o - prec, (size_t)prec + 1);
		o[-prec] = '.';
	}
	/* Drop the spare leading zero unless the carry used it. */
	if (num[start - 1] == '0')
		memmove(num + start - 1, num + start, strlen(num + start) + 1);
	if (group)
		group_in_place(num, sizeof(num));
	snprintf(buf, n, "%*s", width, num);
	return buf;
}

/* Java's "%,d" of @v into @buf. */
static char *
group_u64(char *buf, size_t n, uint64_t v)
{
	snprintf(buf, n, "%llu", (unsigned long long)v);
	group_in_place(buf, n);
	return buf;
}

void
sm_cs_print_header(FILE *f)
{
	fprintf(f, CS_HEADFORMAT, "type", "total ops", "op/s", "pk/s", "row/s", "mean", "med",
		".95", ".99", ".999", "max", "time", "stderr", "errors", "gc: #", "max ms",
		"sum ms", "sdv ms", "mb");
}

void
sm_cs_print_interval(FILE *f, const struct sm_cs_interval *iv)
{
	char type[128], b[12][CS_NUM_MAX];

	snprintf(type, sizeof(type), "%s,", iv->type != NULL ? iv->type : "");
	fprintf(f, "%-10s%10llu,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%7llu,%s,%s,%s,%s,%s\n", type,
		(unsigned long long)iv->total_ops,
		sm_cs_jfmt(b[0], CS_NUM_MAX, iv->op_s, 8, 0, false),
		sm_cs_jfmt(b[1], CS_NUM_MAX, iv->pk_s, 8, 0, false),
		sm_cs_jfmt(b[2], CS_NUM_MAX, iv->row_s, 8, 0, false),
		sm_cs_jfmt(b[3], CS_NUM_MAX, iv->mean_ms, 8, 1, false),
		sm_cs_jfmt(b[4], CS_NUM_MAX, iv->med_ms, 8, 1, false),
		sm_cs_jfmt(b[5], CS_NUM_MAX, iv->p95_ms, 8, 1, false),
		sm_cs_jfmt(b[6], CS_NUM_MAX, iv->p99_ms, 8, 1, false),
		sm_cs_jfmt(b[7], CS_NUM_MAX, iv->p999_ms, 8, 1, false),
		sm_cs_jfmt(b[8], CS_NUM_MAX, iv->max_ms, 8, 1, false),
		sm_cs_jfmt(b[9], CS_NUM_MAX, iv->time_s, 7, 1, false),
		sm_cs_jfmt(b[10], CS_NUM_MAX, iv->stderr_, 9, 5, false),
		(unsigned long long)iv->errors,
		/* server GC: count, max ms, sum ms, sdv ms, mb (no JVM: zero) */
		"      0", "       0", "       0", "       0", "       0");
}

/* Which value of an op summary a Results line shows, and how (TimingInterval.getStringValue). */
enum cs_field {
	CS_OP_RATE,
	CS_PK_RATE,
	CS_ROW_RATE,
	CS_MEAN,
	CS_MEDIAN,
	CS_P95,
	CS_P99,
	CS_P999,
	CS_MAX,
	CS_PARTITIONS,
	CS_ERRORS,
};

static char *
field_str(char *buf, size_t n, const struct sm_cs_op_summary *o, enum cs_field fld)
{
	switch (fld) {
	case CS_OP_RATE:
		return sm_cs_jfmt(buf, n, o->op_s, 0, 0, true);
	case CS_PK_RATE:
		return sm_cs_jfmt(buf, n, o->pk_s, 0, 0, true);
	case CS_ROW_RATE:
		return sm_cs_jfmt(buf, n, o->row_s, 0, 0, true);
	case CS_MEAN:
		return sm_cs_jfmt(buf, n, o->mean_ms, 0, 1, true);
	case CS_MEDIAN:
		return sm_cs_jfmt(buf, n, o->med_ms, 0, 1, true);
	case CS_P95:
		return sm_cs_jfmt(buf, n, o->p95_ms, 0, 1, true);
	case CS_P99:
		return sm_cs_jfmt(buf, n, o->p99_ms, 0, 1, true);
	case CS_P999:
		return sm_cs_jfmt(buf, n, o->p999_ms, 0, 1, true);
	case CS_MAX:
		return sm_cs_jfmt(buf, n, o->max_ms, 0, 1, true);
	case CS_PARTITIONS:
		return group_u64(buf, n, o->partitions);
	case CS_ERRORS:
		return group_u64(buf, n, o->errors);
	}
	buf[0] = '\0';
	return buf;
}

static const char *
op_name(const struct sm_cs_op_summary *o)
{
	return o->name != NULL ? o->name : "";
}

/* Does op @a (at index @ia) sort before op @b (at @ib)? By name, then by position. */
static bool
op_before(const struct sm_cs_op_summary *a, unsigned ia, const struct sm_cs_op_summary *b,
	  unsigned ib)
{
	int c = strcmp(op_name(a), op_name(b));

	return c < 0 || (c == 0 && ia < ib);
}

/*
 * TimingIntervals.str(): "[OP: v unit, OP2: v unit]", ops in name order,
 * "[]" with none. Sorted by repeated selection so nothing is allocated and
 * the caller's array stays untouched.
 */
static void
print_brackets(FILE *f, const struct sm_cs_summary *s, enum cs_field fld, const char *unit)
{
	char v[CS_NUM_MAX];
	const struct sm_cs_op_summary *prev = NULL;
	unsigned printed, i, prev_i = 0;

	fputc('[', f);
	for (printed = 0; printed < s->n_ops; printed++) {
		const struct sm_cs_op_summary *best = NULL;
		unsigned best_i = 0;

		for (i = 0; i < s->n_ops; i++) {
			const struct sm_cs_op_summary *o = &s->ops[i];

			if (prev != NULL && !op_before(prev, prev_i, o, i))
				continue;
			if (best == NULL || op_before(o, i, best, best_i)) {
				best = o;
				best_i = i;
			}
		}
		fprintf(f, "%s%s: %s%s%s", printed > 0 ? ", " : "", op_name(best),
			field_str(v, sizeof(v), best, fld), unit[0] != '\0' ? " " : "", unit);
		prev = best;
		prev_i = best_i;
	}
	fputs("]\n", f);
}

void
sm_cs_print_results(FILE *f, const struct sm_cs_summary *s)
{
	const struct sm_cs_op_summary *t = &s->total;
	char v[CS_NUM_MAX];
	uint64_t ms = 0;

	/* println("\n") then println("Results:"): two blank lines before it. */
	fputs("\n\nResults:\n", f);
	fprintf(f, "Op rate                   : %s op/s  ",
		sm_cs_jfmt(v, sizeof(v), t->op_s, 8, 0, true));
	print_brackets(f, s, CS_OP_RATE, "op/s");
	fprintf(f, "Partition rate            : %s pk/s  ",
		sm_cs_jfmt(v, sizeof(v), t->pk_s, 8, 0, true));
	print_brackets(f, s, CS_PK_RATE, "pk/s");
	fprintf(f, "Row rate                  : %s row/s ",
		sm_cs_jfmt(v, sizeof(v), t->row_s, 8, 0, true));
	print_brackets(f, s, CS_ROW_RATE, "row/s");
	fprintf(f, "Latency mean              : %s ms ",
		sm_cs_jfmt(v, sizeof(v), t->mean_ms, 6, 1, false));
	print_brackets(f, s, CS_MEAN, "ms");
	fprintf(f, "Latency median            : %s ms ",
		sm_cs_jfmt(v, sizeof(v), t->med_ms, 6, 1, false));
	print_brackets(f, s, CS_MEDIAN, "ms");
	fprintf(f, "Latency 95th percentile   : %s ms ",
		sm_cs_jfmt(v, sizeof(v), t->p95_ms, 6, 1, false));
	print_brackets(f, s, CS_P95, "ms");
	fprintf(f, "Latency 99th percentile   : %s ms ",
		sm_cs_jfmt(v, sizeof(v), t->p99_ms, 6, 1, false));
	print_brackets(f, s, CS_P99, "ms");
	fprintf(f, "Latency 99.9th percentile : %s ms ",
		sm_cs_jfmt(v, sizeof(v), t->p999_ms, 6, 1, false));
	print_brackets(f, s, CS_P999, "ms");
	fprintf(f, "Latency max               : %s ms ",
		sm_cs_jfmt(v, sizeof(v), t->max_ms, 6, 1, false));
	print_brackets(f, s, CS_MAX, "ms");
	fprintf(f, "Total partitions          : %10s ", group_u64(v, sizeof(v), t->partitions));
	print_brackets(f, s, CS_PARTITIONS, "");
	fprintf(f, "Total errors              : %10s ", group_u64(v, sizeof(v), t->errors));
	print_brackets(f, s, CS_ERRORS, "");
	/*
	 * Server GC over JMX: ScyllaDB has none, so count, memory, time and
	 * deviation are zero and the average is 0/0, which Java prints as NaN.
	 */
	fputs("Total GC count            : 0\n"
	      "Total GC memory           : 0.000 KiB\n"
	      "Total GC time             :    0.0 seconds\n"
	      "Avg GC time               :    NaN ms\n"
	      "StdDev GC time            :    0.0 ms\n",
	      f);
	/* DurationFormatUtils "HH:mm:ss": whole hours (not wrapped at 24), truncated seconds. */
	if (s->time_s > 0 && isfinite(s->time_s))
		ms = (uint64_t)(s->time_s * 1000.0 + 1e-6);
	fprintf(f, "Total operation time      : %02llu:%02llu:%02llu\n",
		(unsigned long long)(ms / 3600000), (unsigned long long)(ms / 60000 % 60),
		(unsigned long long)(ms / 1000 % 60));
	if (!s->no_end)
		fprintf(f, "\n%s\n", s->failure ? "FAILURE" : "END");
}
