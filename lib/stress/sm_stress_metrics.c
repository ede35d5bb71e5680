/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The loader's live metrics: what `shardmark stress` (and ycsb,
 * scylla-bench) serve on /metrics while they run, in Prometheus text
 * format, per client shard and op type. A scrape reads the counters the
 * shards keep anyway for their reports, without locks and without a word
 * to them: the per-operation path does not change, and a value read in
 * the middle of an update is at worst one operation stale.
 */

#include <inttypes.h>
#include <stdio.h>

#include "sm_stress_run.h"
#include "sm_stress_run_priv.h"

/* Histogram bounds in seconds, 100 us to 10 s (Prometheus's default buckets, finer low). */
static const double bounds_s[] = { 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
				   0.025,  0.05,    0.1,    0.25,  0.5,	   1,	  2.5,
				   5,	   10 };

static const char *const phase_names[] = {
	[SM_STRESS_PH_CONTROL] = "control", [SM_STRESS_PH_CONNECT] = "connect",
	[SM_STRESS_PH_WARMUP] = "warmup",   [SM_STRESS_PH_SETTLE] = "settle",
	[SM_STRESS_PH_MEASURE] = "measure", [SM_STRESS_PH_DRAIN] = "drain",
	[SM_STRESS_PH_DONE] = "done",
};

/* One histogram's buckets, count and sum, walking its counts once. */
static void
hist_lines(FILE *f, unsigned shard, const char *op, const char *kind, const struct sm_hdr *h)
{
	int64_t cum = 0;
	double sum = 0;
	unsigned b = 0;
	int32_t i;

	for (i = 0; i < h->counts_len; i++) {
		int64_t n = SM_READ_ONCE(h->counts[i]);
		double v;

		if (n == 0)
			continue;
		v = (double)sm_hdr_value_at_index(h, i) / 1e9;
		for (; b < SM_ARRAY_SIZE(bounds_s) && v > bounds_s[b]; b++)
			fprintf(f,
				"shardmark_stress_latency_seconds_bucket{shard=\"%u\",op=\"%s\","
				"latency=\"%s\",le=\"%g\"} %" PRId64 "\n",
				shard, op, kind, bounds_s[b], cum);
		cum += n;
		sum += v * (double)n;
	}
	for (; b < SM_ARRAY_SIZE(bounds_s); b++)
		fprintf(f,
			"shardmark_stress_latency_seconds_bucket{shard=\"%u\",op=\"%s\",latency="
			"\"%s\",le=\"%g\"} %" PRId64 "\n",
			shard, op, kind, bounds_s[b], cum);
	fprintf(f,
		"shardmark_stress_latency_seconds_bucket{shard=\"%u\",op=\"%s\",latency=\"%s\","
		"le=\"+Inf\"} %" PRId64 "\n"
		"shardmark_stress_latency_seconds_count{shard=\"%u\",op=\"%s\",latency=\"%s\"} "
		"%" PRId64 "\n"
		"shardmark_stress_latency_seconds_sum{shard=\"%u\",op=\"%s\",latency=\"%s\"} %.9f\n",
		shard, op, kind, cum, shard, op, kind, cum, shard, op, kind, sum);
}

static void
quantile_lines(FILE *f, unsigned shard, const char *op, const char *kind, const struct sm_hdr *h)
{
	static const double q[] = { 0.5, 0.95, 0.99, 0.999 };
	unsigned k;

	if (SM_READ_ONCE(h->total_count) == 0)
		return; /* no value yet: absent rather than a made-up 0 */
	for (k = 0; k < SM_ARRAY_SIZE(q); k++)
		fprintf(f,
			"shardmark_stress_latency_quantile_seconds{shard=\"%u\",op=\"%s\","
			"latency=\"%s\",quantile=\"%g\"} %.9f\n",
			shard, op, kind, q[k],
			(double)sm_hdr_value_at_percentile(h, q[k] * 100) / 1e9);
}

void
sm_stress_metrics_write(FILE *f)
{
	unsigned i, k;

	if (sx == NULL || sx->sh == NULL)
		return;
	fputs("# HELP shardmark_stress_phase The loader's phase: 1 for the current one\n"
	      "# TYPE shardmark_stress_phase gauge\n",
	      f);
	for (k = 0; k < SM_ARRAY_SIZE(phase_names); k++)
		fprintf(f, "shardmark_stress_phase{phase=\"%s\"} %d\n", phase_names[k],
			(unsigned)sx->phase == k);
	fprintf(f,
		"# HELP shardmark_stress_threads Operations in flight at most (cassandra-stress's "
		"threads), over all client shards\n"
		"# TYPE shardmark_stress_threads gauge\nshardmark_stress_threads %u\n"
		"# HELP shardmark_stress_step The capacity search's step being run (0: no "
		"search)\n"
		"# TYPE shardmark_stress_step gauge\nshardmark_stress_step %u\n",
		sx->s.rate.threads, sx->search != NULL ? sx->search->n + 1 : 0);
	fputs("# HELP shardmark_stress_rate_target_ops_per_second The open-loop rate this "
	      "shard is paced at (0: as fast as the threads go)\n"
	      "# TYPE shardmark_stress_rate_target_ops_per_second gauge\n",
	      f);
	for (i = 0; i < sx->nshards; i++) {
		double iv = *(const volatile double *)&sx->sh[i].pace.interval_ns;

		fprintf(f, "shardmark_stress_rate_target_ops_per_second{shard=\"%u\"} %.3f\n", i,
			iv > 0 ? 1e9 / iv : 0);
	}
	fputs("# HELP shardmark_stress_in_flight Operations sent and not answered\n"
	      "# TYPE shardmark_stress_in_flight gauge\n",
	      f);
	for (i = 0; i < sx->nshards; i++)
		fprintf(f, "shardmark_stress_in_flight{shard=\"%u\"} %u\n", i,
			SM_READ_ONCE(sx->sh[i].busy));
	fputs("# HELP shardmark_stress_ops_total Operations completed in the measured phase\n"
	      "# TYPE shardmark_stress_ops_total counter\n",
	      f);
	for (i = 0; i < sx->nshards; i++)
		for (k = 0; k < sx->nops; k++)
			fprintf(f, "shardmark_stress_ops_total{shard=\"%u\",op=\"%s\"} %" PRIu64 "\n",
				i, sm_stress_op_name(sx->ops[k]),
				SM_READ_ONCE(sx->sh[i].st[sx->ops[k]].ops));
	fputs("# HELP shardmark_stress_errors_total Operations that failed every try\n"
	      "# TYPE shardmark_stress_errors_total counter\n",
	      f);
	for (i = 0; i < sx->nshards; i++)
		for (k = 0; k < sx->nops; k++)
			fprintf(f,
				"shardmark_stress_errors_total{shard=\"%u\",op=\"%s\"} %" PRIu64 "\n",
				i, sm_stress_op_name(sx->ops[k]),
				SM_READ_ONCE(sx->sh[i].st[sx->ops[k]].errors));
	fputs("# HELP shardmark_stress_latency_seconds Latency of the measured phase: from the "
	      "send (service) or the intended start (response)\n"
	      "# TYPE shardmark_stress_latency_seconds histogram\n",
	      f);
	for (i = 0; i < sx->nshards; i++) {
		for (k = 0; k < sx->nops; k++) {
			const struct sm_stress_op_stats *o = &sx->sh[i].st[sx->ops[k]];
			const char *op = sm_stress_op_name(sx->ops[k]);

			hist_lines(f, i, op, "service", &o->st_total);
			hist_lines(f, i, op, "response", &o->rt_total);
		}
	}
	fputs("# HELP shardmark_stress_latency_quantile_seconds Latency percentiles of the "
	      "measured phase so far (HDR histogram)\n"
	      "# TYPE shardmark_stress_latency_quantile_seconds gauge\n",
	      f);
	for (i = 0; i < sx->nshards; i++) {
		for (k = 0; k < sx->nops; k++) {
			const struct sm_stress_op_stats *o = &sx->sh[i].st[sx->ops[k]];
			const char *op = sm_stress_op_name(sx->ops[k]);

			quantile_lines(f, i, op, "service", &o->st_total);
			quantile_lines(f, i, op, "response", &o->rt_total);
		}
	}
}
