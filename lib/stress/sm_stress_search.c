/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The capacity search's decisions and its summary (sm_stress_search.h):
 * which concurrency or rate the next step runs at, from the steps so far.
 */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sm_bench_cs.h"
#include "sm_common.h"
#include "sm_stress_search.h"

/*
 * The thread count after @t, as scylladb/cassandra-stress's
 * StressAction.runMulti steps it (Java's int *= double truncates).
 * Apache Cassandra's stress doubles below 16 and then multiplies by 1.5;
 * the ScyllaDB fork is the tool shardmark stress follows.
 */
static unsigned
next_thread_count(unsigned t)
{
	if (t < 500)
		return t + 100;
	if (t < 1500)
		return (unsigned)(t * 1.2);
	return (unsigned)(t * 1.1);
}

/* StressAction.averageImprovement(results, count): the mean relative op-rate gain. */
static double
average_improvement(const struct sm_stress_search *s, unsigned count)
{
	double sum = 0;
	unsigned i;

	for (i = s->n - count; i < s->n; i++) {
		double prev = s->steps[i - 1].achieved, cur = s->steps[i].achieved;

		sum += prev > 0 ? (cur - prev) / prev : 0;
	}
	return sum / count;
}

void
sm_stress_search_init(struct sm_stress_search *s, const struct sm_stress_search_opts *o,
		      unsigned threads)
{
	memset(s, 0, sizeof(*s));
	s->o = *o;
	s->threads = threads;
	if (o->kind == SM_STRESS_SEARCH_THREADS) {
		s->next_threads = o->min_threads;
		s->next_rate = 0;
	} else {
		s->next_threads = threads;
		s->next_rate = o->start;
	}
}

bool
sm_stress_search_passes(const struct sm_stress_search_opts *o, const struct sm_stress_step *m)
{
	if (m->errors > o->max_errors)
		return false;
	if (m->pct_ms * 1e6 > (double)o->bound_ns)
		return false;
	/* a loader or server that could not keep the schedule did not sustain the rate */
	return m->achieved * 100.0 >= (double)m->target * o->min_achieved;
}

static bool
record_threads(struct sm_stress_search *s)
{
	unsigned next = next_thread_count(s->steps[s->n - 1].threads);

	if (s->n > 1)
		s->steps[s->n - 1].improvement = average_improvement(s, 1);
	/* runMulti: the next count past threads<= ends it; so does no gain over three steps */
	if (next > s->o.max_threads)
		return false;
	if (s->o.auto_stop && s->n >= 4 && average_improvement(s, 3) < 0)
		return false;
	s->next_threads = next;
	return true;
}

static bool
record_rate(struct sm_stress_search *s)
{
	struct sm_stress_step *m = &s->steps[s->n - 1];
	uint64_t rate = m->target, res = s->o.resolution ? s->o.resolution : 1;

	m->bisect = s->bisecting;
	m->pass = sm_stress_search_passes(&s->o, m);
	if (m->pass && rate > s->lo)
		s->lo = rate;
	if (!m->pass && (s->hi == 0 || rate < s->hi))
		s->hi = rate;
	if (!s->bisecting) {
		if (m->pass) {
			if (rate >= s->o.max)
				return false; /* the whole range passes: the answer is max */
			s->next_rate = SM_MIN(rate + s->o.step, s->o.max);
			return true;
		}
		s->bisecting = true;
	}
	/* Bisect (lo, hi): lo passed (0: nothing has), hi failed. */
	if (s->hi <= s->lo || s->hi - s->lo <= res)
		return false;
	s->next_rate = s->lo + (s->hi - s->lo) / 2;
	return s->next_rate > 0;
}

bool
sm_stress_search_record(struct sm_stress_search *s, const struct sm_stress_step *m)
{
	bool more;

	if (s->done || s->n == SM_STRESS_SEARCH_MAX_STEPS)
		return false;
	s->steps[s->n] = *m;
	s->steps[s->n].improvement = 0;
	s->n++;
	more = s->o.kind == SM_STRESS_SEARCH_THREADS ? record_threads(s) : record_rate(s);
	if (s->n == SM_STRESS_SEARCH_MAX_STEPS)
		more = false;
	s->done = !more;
	return more;
}

const struct sm_stress_step *
sm_stress_search_answer(const struct sm_stress_search *s)
{
	const struct sm_stress_step *best = NULL;
	unsigned i;

	for (i = 0; i < s->n; i++) {
		const struct sm_stress_step *m = &s->steps[i];

		if (s->o.kind == SM_STRESS_SEARCH_THREADS) {
			if (best == NULL || m->achieved > best->achieved)
				best = m;
		} else if (m->pass && (best == NULL || m->target > best->target)) {
			best = m;
		}
	}
	return best;
}

int
sm_stress_search_parse_percentile(const char *v, double *out)
{
	char buf[32], *end;
	const char *p = v;
	double d;

	if (*p == 'p' || *p == 'P') {
		p++;
		/* p999 and p9999 as cassandra-stress's .999 column: 99.9, 99.99 */
		if (strchr(p, '.') == NULL && strncmp(p, "99", 2) == 0 && strlen(p) > 2 &&
		    strlen(p) < sizeof(buf) - 1) {
			snprintf(buf, sizeof(buf), "99.%s", p + 2);
			p = buf;
		}
	}
	if (*p == '\0' || !(*p >= '0' && *p <= '9'))
		return -EINVAL;
	errno = 0;
	d = strtod(p, &end);
	if (*end != '\0' || errno != 0 || !(d > 0 && d <= 100))
		return -EINVAL;
	*out = d;
	return 0;
}

/* ---- the summary ---- */

static void
threads_summary(FILE *f, const struct sm_stress_search *s)
{
	const struct sm_stress_step *best = sm_stress_search_answer(s);
	char id[32];
	int w = 2;
	unsigned i;

	for (i = 0; i < s->n; i++) {
		int len = snprintf(id, sizeof(id), "%u threadCount", s->steps[i].threads);

		w = len > w ? len : w;
	}
	/* StressMetrics.summarise: the id column, then an interval row per run */
	fprintf(f, "%*s, ", w, "id");
	sm_cs_print_header(f);
	for (i = 0; i < s->n; i++) {
		const struct sm_stress_step *m = &s->steps[i];
		struct sm_cs_interval iv = {
			.type = "total",
			.total_ops = m->ops,
			.op_s = m->achieved,
			.pk_s = m->achieved,
			.row_s = m->achieved,
			.mean_ms = m->mean_ms,
			.med_ms = m->p50_ms,
			.p95_ms = m->p95_ms,
			.p99_ms = m->p99_ms,
			.p999_ms = m->p999_ms,
			.max_ms = m->max_ms,
			.time_s = m->seconds,
			.errors = m->errors,
		};

		snprintf(id, sizeof(id), "%u threadCount", m->threads);
		fprintf(f, "%*s, ", w, id);
		sm_cs_print_interval(f, &iv);
	}
	if (best != NULL)
		fprintf(f, "Best: %u threadCount, %.0f op/s (%u steps%s)\n", best->threads,
			best->achieved, s->n,
			s->o.auto_stop && s->n >= 4 && average_improvement(s, 3) < 0
				? "; stopped: no average improvement over the last three"
				: "");
}

static int
by_target(const void *a, const void *b)
{
	const struct sm_stress_step *x = *(const struct sm_stress_step *const *)a;
	const struct sm_stress_step *y = *(const struct sm_stress_step *const *)b;

	return x->target < y->target ? -1 : x->target > y->target;
}

static void
rate_summary(FILE *f, const struct sm_stress_search *s)
{
	const struct sm_stress_step *sorted[SM_STRESS_SEARCH_MAX_STEPS], *best;
	unsigned i;

	for (i = 0; i < s->n; i++)
		sorted[i] = &s->steps[i];
	qsort(sorted, s->n, sizeof(sorted[0]), by_target);
	fprintf(f, "Capacity curve (p%g bound %.3f ms, %u threads, latency from the intended "
		   "start):\n",
		s->o.percentile, (double)s->o.bound_ns / 1e6, s->threads);
	fprintf(f, "%12s %12s %10s %10s %10s %10s %8s  %s\n", "rate", "achieved", "p50_ms",
		"p99_ms", "p99.9_ms", "pct_ms", "errors", "result");
	for (i = 0; i < s->n; i++) {
		const struct sm_stress_step *m = sorted[i];

		fprintf(f, "%12" PRIu64 " %12.0f %10.3f %10.3f %10.3f %10.3f %8" PRIu64 "  %s\n",
			m->target, m->achieved, m->p50_ms, m->p99_ms, m->p999_ms, m->pct_ms,
			m->errors, m->pass ? "pass" : "FAIL");
	}
	best = sm_stress_search_answer(s);
	if (best == NULL)
		fprintf(f, "Answer: none: even %" PRIu64 " ops/s exceeded p%g %.3f ms (lower "
			   "start=)\n",
			s->lo ? s->lo : s->steps[s->n ? s->n - 1 : 0].target, s->o.percentile,
			(double)s->o.bound_ns / 1e6);
	else
		fprintf(f, "Answer: %" PRIu64 " ops/s (p%g %.3f ms <= %.3f ms)%s\n", best->target,
			s->o.percentile, best->pct_ms, (double)s->o.bound_ns / 1e6,
			best->target >= s->o.max ? ": every rate up to max= passed, raise max="
						 : "");
}

void
sm_stress_search_print(FILE *f, const struct sm_stress_search *s)
{
	fputs("\n", f);
	if (s->o.kind == SM_STRESS_SEARCH_THREADS)
		threads_summary(f, s);
	else
		rate_summary(f, s);
}

void
sm_stress_search_csv(FILE *f, const struct sm_stress_search *s)
{
	unsigned i;

	fputs("step,phase,threads,target_ops_per_s,achieved_ops_per_s,seconds,ops,errors,mean_ms,"
	      "p50_ms,p99_ms,p999_ms,max_ms,percentile_ms,result\n",
	      f);
	for (i = 0; i < s->n; i++) {
		const struct sm_stress_step *m = &s->steps[i];
		const char *phase = s->o.kind == SM_STRESS_SEARCH_THREADS ? "ramp"
				    : m->bisect				  ? "bisect"
									  : "step";
		const char *res = s->o.kind == SM_STRESS_SEARCH_THREADS ? ""
				  : m->pass				? "pass"
									: "fail";

		fprintf(f,
			"%u,%s,%u,%" PRIu64 ",%.3f,%.3f,%" PRIu64 ",%" PRIu64
			",%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%s\n",
			i + 1, phase, m->threads, m->target, m->achieved, m->seconds, m->ops,
			m->errors, m->mean_ms, m->p50_ms, m->p99_ms, m->p999_ms, m->max_ms,
			m->pct_ms, res);
	}
}

void
sm_stress_search_json(FILE *f, const struct sm_stress_search *s)
{
	const struct sm_stress_step *best = sm_stress_search_answer(s);
	unsigned i;

	if (s->o.kind == SM_STRESS_SEARCH_THREADS)
		fprintf(f,
			"  \"search\": {\"kind\": \"threads\", \"auto\": %s, \"min_threads\": %u, "
			"\"max_threads\": %u},\n",
			s->o.auto_stop ? "true" : "false", s->o.min_threads, s->o.max_threads);
	else
		fprintf(f,
			"  \"search\": {\"kind\": \"rate\", \"percentile\": %g, \"bound_ms\": %.6f, "
			"\"start\": %" PRIu64 ", \"step\": %" PRIu64 ", \"max\": %" PRIu64
			", \"resolution\": %" PRIu64 ", \"settle_s\": %.3f, \"max_errors\": %" PRIu64
			", \"min_achieved_pct\": %u, \"threads\": %u},\n",
			s->o.percentile, (double)s->o.bound_ns / 1e6, s->o.start, s->o.step,
			s->o.max, s->o.resolution, (double)s->o.settle_ns / 1e9, s->o.max_errors,
			s->o.min_achieved, s->threads);
	fputs("  \"steps\": [", f);
	for (i = 0; i < s->n; i++) {
		const struct sm_stress_step *m = &s->steps[i];

		fprintf(f,
			"%s\n    {\"threads\": %u, \"target_ops_per_s\": %" PRIu64
			", \"achieved_ops_per_s\": %.3f, \"seconds\": %.6f, \"ops\": %" PRIu64
			", \"errors\": %" PRIu64 ", \"mean_ms\": %.4f, \"p50_ms\": %.4f, \"p99_ms\": "
			"%.4f, \"p999_ms\": %.4f, \"max_ms\": %.4f, \"percentile_ms\": %.4f",
			i ? "," : "", m->threads, m->target, m->achieved, m->seconds, m->ops,
			m->errors, m->mean_ms, m->p50_ms, m->p99_ms, m->p999_ms, m->max_ms,
			m->pct_ms);
		if (s->o.kind == SM_STRESS_SEARCH_THREADS)
			fprintf(f, ", \"improvement\": %.6f}", m->improvement);
		else
			fprintf(f, ", \"phase\": \"%s\", \"pass\": %s}", m->bisect ? "bisect" : "step",
				m->pass ? "true" : "false");
	}
	fputs("\n  ],\n  \"answer\": ", f);
	if (best == NULL)
		fputs("null", f);
	else if (s->o.kind == SM_STRESS_SEARCH_THREADS)
		fprintf(f, "{\"threads\": %u, \"ops_per_s\": %.3f}", best->threads, best->achieved);
	else
		fprintf(f, "{\"ops_per_s\": %" PRIu64 ", \"percentile_ms\": %.4f}", best->target,
			best->pct_ms);
	fputs("\n", f);
}
