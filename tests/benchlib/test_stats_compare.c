/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/bench: run-to-run comparison (sm_stats_compare.c) and the result
 * reader (sm_result_read.c). Synthetic runs are drawn from a seeded
 * generator, so every assertion sees the same numbers on every machine.
 */

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sm_hdr.h"
#include "sm_random.h"
#include "sm_result.h"
#include "sm_stats_compare.h"

#define CONF 0.99
#define RESAMPLES 200
#define INTERVALS 30
#define OPS_PER_INTERVAL 2000

static double
normal(struct sm_rand *r)
{
	double u = sm_rand_double(r), v = sm_rand_double(r);

	return sqrt(-2 * log(u > 0 ? u : 1e-300)) * cos(2 * M_PI * v);
}

/*
 * A synthetic stress run: @INTERVALS one-second intervals whose throughput
 * is @ops_s with AR(1) noise (phi 0.5, as a loaded machine drifts), and
 * latencies log-normal around @lat_ns. Per-interval op counts follow the
 * throughput; each interval's histogram holds OPS_PER_INTERVAL samples
 * (the shape, not the count, is what percentiles see).
 */
static void
synth_run(struct sm_result *r, struct sm_rand *rng, double ops_s, double lat_ns)
{
	struct sm_hdr h;
	double noise = 0;
	unsigned i, k;

	sm_result_init(r);
	r->kind = SM_RESULT_STRESS;
	snprintf(r->label, sizeof(r->label), "synthetic");
	assert_int_equal(sm_hdr_init(&h, 1000, 1000000000, 2), 0);
	for (i = 0; i < INTERVALS; i++) {
		double rate;
		int64_t ops;

		noise = 0.5 * noise + normal(rng) * 0.05;
		rate = ops_s * (1 + noise);
		ops = (int64_t)rate;
		sm_hdr_reset(&h);
		for (k = 0; k < OPS_PER_INTERVAL; k++)
			sm_hdr_record(&h, (int64_t)(lat_ns * exp(0.5 * normal(rng))));
		/* scale the counts so that total_count / length is the throughput */
		{
			int32_t b;
			int64_t total = 0;

			for (b = 0; b < h.counts_len; b++) {
				h.counts[b] = h.counts[b] * ops / OPS_PER_INTERVAL;
				total += h.counts[b];
			}
			h.total_count = total;
		}
		assert_int_equal(sm_result_add_interval(r, "WRITE", false, i, 1.0, &h), 0);
	}
	sm_hdr_fini(&h);
	assert_int_equal(sm_result_derive(r), 0);
}

static const struct sm_result_metric *
metric(const struct sm_result *r, const char *name)
{
	const struct sm_result_metric *m = sm_result_metric_find(r, name);

	assert_non_null(m);
	return m;
}

static void
compare(const struct sm_result *a, const struct sm_result *b, const char *name, uint64_t seed,
	struct sm_stats_cmp *o)
{
	assert_int_equal(sm_stats_compare_metric(a, metric(a, name), b, metric(b, name), CONF,
						 RESAMPLES, seed, o),
			 0);
}

static void
test_t_distribution(void **state)
{
	(void)state;
	/* tables: t(0.975; 10) = 2.228, t(0.995; 22) = 2.819, t(0.975; 1) = 12.706 */
	assert_true(fabs(sm_stats_t_quantile(0.975, 10) - 2.2281) < 1e-3);
	assert_true(fabs(sm_stats_t_quantile(0.995, 22) - 2.8188) < 1e-3);
	assert_true(fabs(sm_stats_t_quantile(0.975, 1) - 12.7062) < 1e-2);
	assert_true(fabs(sm_stats_t_cdf(0, 5) - 0.5) < 1e-12);
	assert_true(fabs(sm_stats_t_cdf(-2, 5) + sm_stats_t_cdf(2, 5) - 1) < 1e-12);
}

static void
test_autocorrelation_shrinks_sample(void **state)
{
	struct sm_rand rng;
	struct sm_stats_mean iid, ar;
	double v[400], w[400], x = 0, sd_iid;
	unsigned i;

	(void)state;
	sm_rand_seed(&rng, 1);
	for (i = 0; i < 400; i++) {
		v[i] = normal(&rng);
		x = 0.9 * x + normal(&rng);
		w[i] = x;
	}
	sm_stats_mean_of(v, 400, &iid);
	sm_stats_mean_of(w, 400, &ar);
	/* independent samples keep most of their size... */
	assert_true(iid.n_eff > 200 && iid.n_eff <= 400);
	sd_iid = 0;
	for (i = 0; i < 400; i++)
		sd_iid += (v[i] - iid.mean) * (v[i] - iid.mean);
	sd_iid = sqrt(sd_iid / 400);
	assert_true(iid.std_err < 1.5 * sd_iid / sqrt(400));
	/* ...an AR(1) with phi 0.9 is worth about n (1 - phi) / (1 + phi) = 21 */
	assert_true(ar.n_eff < 80);
	assert_true(ar.n_eff > 5);
}

static void
test_known_ten_percent_found(void **state)
{
	struct sm_result a, b;
	struct sm_rand rng;
	struct sm_stats_cmp o;

	(void)state;
	sm_rand_seed(&rng, 42);
	synth_run(&a, &rng, 10000, 500000);
	/* B: 10% more throughput, 10% longer latencies */
	synth_run(&b, &rng, 11000, 550000);

	compare(&a, &b, "WRITE op/s", 7, &o);
	assert_string_equal(o.method, "welch");
	assert_true(o.significant);
	assert_int_equal(o.verdict, SM_VERDICT_BETTER);
	assert_true(o.lo < 0.10 && o.hi > 0.10);
	assert_true(fabs(o.change - 0.10) < 0.04);

	compare(&a, &b, "WRITE p99", 7, &o);
	assert_string_equal(o.method, "bootstrap");
	assert_true(o.significant);
	assert_int_equal(o.verdict, SM_VERDICT_WORSE);
	assert_true(o.lo < 0.10 && o.hi > 0.10);

	compare(&a, &b, "WRITE p50", 7, &o);
	assert_true(o.significant);
	assert_int_equal(o.verdict, SM_VERDICT_WORSE);
	assert_true(fabs(o.change - 0.10) < 0.04);

	compare(&a, &b, "WRITE mean", 7, &o);
	assert_true(o.significant);
	assert_int_equal(o.verdict, SM_VERDICT_WORSE);
	sm_result_fini(&a);
	sm_result_fini(&b);
}

static void
test_same_distribution_no_change(void **state)
{
	static const char *const names[] = { "WRITE op/s", "WRITE mean", "WRITE p50", "WRITE p99" };
	struct sm_result a, b;
	struct sm_rand rng;
	struct sm_stats_cmp o;
	unsigned t, k, flagged = 0, per[4] = { 0 };

	(void)state;
	sm_rand_seed(&rng, 2024);
	for (t = 0; t < 100; t++) {
		bool any = false;

		synth_run(&a, &rng, 10000, 500000);
		synth_run(&b, &rng, 10000, 500000);
		for (k = 0; k < SM_ARRAY_SIZE(names); k++) {
			compare(&a, &b, names[k], 1000 + t, &o);
			any |= o.significant;
			per[k] += o.significant;
		}
		flagged += any;
		sm_result_fini(&a);
		sm_result_fini(&b);
	}
	print_message("same distribution: %u of 100 trials flagged a change (%s %u, %s %u, %s %u, "
		      "%s %u)\n",
		      flagged, names[0], per[0], names[1], per[1], names[2], per[2], names[3],
		      per[3]);
	assert_true(flagged <= 5);
}

static void
test_summary_only_and_none(void **state)
{
	static const char psq_a[] =
		"{\"parameters\": {\"duration\": 10, \"cpus\": 2}, \"stats\": {\"median tps\": "
		"100000, \"mad tps\": 1000, \"allocs_per_op\": 0.5, \"instructions_per_op\": null},"
		" \"test_properties\": {\"type\": \"read\"}, \"versions\": {\"shardmark\": "
		"{\"version\": \"9.9\"}}, \"per_shard\": [{\"shard\": 0, \"ops\": 5, "
		"\"allocs_per_op\": 1}, {\"shard\": 1, \"ops\": 7}], \"machine\": {\"cpu\": "
		"\"X\"}}";
	static const char psq_b[] =
		"{\"parameters\": {\"duration\": 10}, \"stats\": {\"median tps\": 90000, \"mad "
		"tps\": 1000, \"allocs_per_op\": 0.5}}";
	struct sm_result a, b;
	struct sm_stats_cmp o;
	char err[128];

	(void)state;
	sm_result_init(&a);
	sm_result_init(&b);
	assert_int_equal(sm_result_read_json(&a, "a", psq_a, strlen(psq_a), err, sizeof(err)), 0);
	assert_int_equal(sm_result_read_json(&b, "b", psq_b, strlen(psq_b), err, sizeof(err)), 0);
	assert_int_equal(a.kind, SM_RESULT_PSQ);
	assert_string_equal(a.version, "9.9");
	assert_int_equal(a.nbars >= 2, 1);
	assert_string_equal(a.bars[0].name, "server ops");
	assert_int_equal(a.bars[0].n, 2);
	assert_true(a.bars[0].v[1] == 7);
	assert_null(sm_result_metric_find(&a, "insns/op")); /* null: not counted */

	compare(&a, &b, "tps", 1, &o);
	assert_string_equal(o.method, "welch (median/MAD)");
	assert_int_equal(o.verdict, SM_VERDICT_WORSE);
	assert_true(fabs(o.change + 0.10) < 1e-9);

	compare(&a, &b, "allocs/op", 1, &o);
	assert_int_equal(o.verdict, SM_VERDICT_NA);
	sm_result_fini(&a);
	sm_result_fini(&b);
}

static void
test_reader_refuses_nonsense(void **state)
{
	static const char *const bad[] = { "", "[1, 2]", "{\"a\": 1}", "{\"stats\": {",
					   "{\"loads\": [1, 2" };
	struct sm_result r;
	char err[200];
	unsigned i;

	(void)state;
	for (i = 0; i < SM_ARRAY_SIZE(bad); i++) {
		sm_result_init(&r);
		err[0] = 0;
		assert_true(sm_result_read_json(&r, "x", bad[i], strlen(bad[i]), err, sizeof(err)) <
			    0);
		assert_true(err[0] != 0);
		sm_result_fini(&r);
	}
	/* a stress JSON and then a perf-simple-query one are not one run */
	sm_result_init(&r);
	assert_int_equal(
		sm_result_read_json(&r, "s", "{\"ops_by_type\": {}}", 19, err, sizeof(err)), 0);
	assert_true(sm_result_read_json(&r, "p", "{\"stats\": {}, \"parameters\": {}}", 31, err,
					sizeof(err)) < 0);
	sm_result_fini(&r);
}

/* An HDR log written by lib/bench's writer reads back as one series per tag. */
static void
test_hdr_log_round_trip(void **state)
{
	char path[] = "/tmp/sm_stats_compare_XXXXXX";
	struct sm_result r;
	struct sm_hdr h;
	char err[200];
	unsigned i;
	int fd;
	FILE *f;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	assert_int_equal(sm_hdr_init(&h, 1000, 3600000000000ll, 3), 0);
	assert_int_equal(sm_hdr_log_write_header(f, "test", 1700000000.0), 0);
	for (i = 0; i < 5; i++) {
		sm_hdr_reset(&h);
		sm_hdr_record_n(&h, 1000000 * (i + 1), 100 * (i + 1));
		assert_int_equal(sm_hdr_log_write(f, "READ-st", i, 1.0, &h), 0);
		assert_int_equal(sm_hdr_log_write(f, "READ-rt", i, 1.0, &h), 0);
	}
	fclose(f);
	sm_hdr_fini(&h);
	sm_result_init(&r);
	assert_int_equal(sm_result_read(&r, path, err, sizeof(err)), 0);
	unlink(path);
	assert_int_equal(r.nseries, 2);
	assert_string_equal(r.series[0].name, "READ");
	assert_int_equal(r.series[0].n, 5);
	assert_true(fabs(r.series[0].ops_s[2] - 300) < 1e-9);
	assert_true(fabs(r.series[0].p50_ms[4] - 5) < 0.01);
	assert_int_equal(r.series[0].total.total_count, 1500);
	assert_true(fabs(metric(&r, "READ op/s")->value - 300) < 1e-9);
	sm_result_fini(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_t_distribution),
		cmocka_unit_test(test_autocorrelation_shrinks_sample),
		cmocka_unit_test(test_known_ten_percent_found),
		cmocka_unit_test(test_same_distribution_no_change),
		cmocka_unit_test(test_summary_only_and_none),
		cmocka_unit_test(test_reader_refuses_nonsense),
		cmocka_unit_test(test_hdr_log_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
