/* SPDX-License-Identifier: BSD-3-Clause */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sm_bench.h"
#include "sm_mem.h"

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void
sm_bench_stats(const double *v, unsigned n, struct sm_bench_stats *out)
{
	double sorted[256], dev[256], sum = 0, sq = 0;
	unsigned i, m = n < 256 ? n : 256;

	memset(out, 0, sizeof(*out));
	if (n == 0)
		return;
	for (i = 0; i < m; i++) {
		sorted[i] = v[i];
		sum += v[i];
	}
	out->mean = sum / m;
	for (i = 0; i < m; i++) {
		sq += (v[i] - out->mean) * (v[i] - out->mean);
		dev[i] = fabs(v[i] - out->mean);
	}
	out->stdev = m > 1 ? sqrt(sq / (m - 1)) : 0;
	qsort(sorted, m, sizeof(double), cmp_double);
	qsort(dev, m, sizeof(double), cmp_double);
	out->median = sorted[m / 2];
	out->mad = dev[m / 2];
	out->min = sorted[0];
	out->max = sorted[m - 1];
}

static void
field(FILE *f, bool ok, double v, int width)
{
	if (ok)
		fprintf(f, "%*.0f", width, v);
	else
		fprintf(f, "%*s", width, "n/a");
}

void
sm_bench_print_result(FILE *f, const struct sm_bench_result *r)
{
	fprintf(f, "%.2f tps (%5.1f allocs/op, %5.1f logallocs/op, %5.1f tasks/op, ", r->tps,
		r->allocs_per_op, r->logallocs_per_op, r->tasks_per_op);
	field(f, r->insns_ok, r->insns_per_op, 7);
	fprintf(f, " insns/op, ");
	field(f, r->cycles_ok, r->cycles_per_op, 7);
	fprintf(f, " cycles/op, %8llu errors)\n", (unsigned long long)r->errors);
}

void
sm_bench_print_stats(FILE *f, const char *name, const struct sm_bench_stats *s, bool ok)
{
	if (!ok) {
		fprintf(f, "%s: n/a\n", name);
		return;
	}
	fprintf(f,
		"%s:\n\tmean=   %.2f standard-deviation=%.2f\n\tmedian= %.2f "
		"median-absolute-deviation=%.2f\n\tmaximum=%.2f minimum=%.2f\n",
		name, s->mean, s->stdev, s->median, s->mad, s->max, s->min);
}
