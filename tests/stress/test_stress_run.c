/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The stress run engine's pieces that need no server: the protocol ops
 * table each API selects, the engine's own limits, the statements CQL
 * prepares, the interval row and final report from synthetic per-shard
 * histograms (merged, never averaged; response or service time as -rate
 * asks), and `stress merge` of synthetic HDR logs.
 */

#include <errno.h>
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

#include "sm_stress.h"
#include "sm_stress_run_priv.h"

#define MS 1000000ll

struct fixture {
	struct sm_stress_settings s;
	struct sm_stress_run *r;
	FILE *text, *csv;
	char json[64];
};

/* Split @buf at spaces into @argv (at most 32 words); the count. */
static int
split(char *buf, char **argv)
{
	char *tok, *save = NULL;
	int argc = 0;

	for (tok = strtok_r(buf, " ", &save); tok != NULL && argc < 32;
	     tok = strtok_r(NULL, " ", &save))
		argv[argc++] = tok;
	return argc;
}

/* Parse @args (space-separated) and create a run of @nshards over them. */
static void
fixture_up(struct fixture *f, const char *args, unsigned nshards)
{
	char buf[512], *argv[32], err[256];
	struct sm_stress_run_opts o;
	int argc, fd;
	unsigned i, k;

	memset(f, 0, sizeof(*f));
	snprintf(f->json, sizeof(f->json), "/tmp/test_stress_run_XXXXXX");
	fd = mkstemp(f->json);
	assert_true(fd >= 0);
	close(fd);
	snprintf(buf, sizeof(buf), "%s -log json=%s", args, f->json);
	argc = split(buf, argv);
	assert_int_equal(sm_stress_settings_parse(argc, argv, &f->s, err, sizeof(err)), 0);
	assert_int_equal(sm_stress_run_check(&f->s, err, sizeof(err)), 0);
	f->text = tmpfile();
	f->csv = tmpfile();
	assert_non_null(f->text);
	assert_non_null(f->csv);
	memset(&o, 0, sizeof(o));
	o.s = &f->s;
	o.nshards = nshards;
	o.text_log = f->text;
	o.csv_log = f->csv;
	assert_int_equal(sm_stress_run_create(&o, &f->r), 0);
	/* What sm_stress_shard_init() does on each shard, without the network. */
	for (i = 0; i < nshards; i++) {
		f->r->sh[i].id = i;
		f->r->sh[i].nworkers = f->s.rate.threads / nshards + 1;
		for (k = 0; k < SM_STRESS_NR_OPS; k++)
			assert_int_equal(sm_stress_stats_init(&f->r->sh[i].st[k]), 0);
	}
}

static void
fixture_down(struct fixture *f)
{
	sm_stress_run_destroy(f->r);
	fclose(f->text);
	fclose(f->csv);
	unlink(f->json);
	sm_stress_settings_free(&f->s);
}

/* All of @f's contents, NUL-terminated, in @buf. */
static const char *
slurp(FILE *f, char *buf, size_t len)
{
	size_t n;

	fflush(f);
	rewind(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	return buf;
}

/* The number after "@key": in @text, searched after @from when given. */
static double
json_num(const char *text, const char *from, const char *key)
{
	const char *p = from != NULL ? strstr(text, from) : text;
	char k[64];

	assert_non_null(p);
	snprintf(k, sizeof(k), "\"%s\": ", key);
	p = strstr(p, k);
	assert_non_null(p);
	return strtod(p + strlen(k), NULL);
}

/* @n latencies of @ns on shard @i's op @op: response @rt, service @st. */
static void
record(struct sm_stress_run *r, unsigned i, enum sm_stress_op op, unsigned slot, int64_t rt,
       int64_t st, unsigned n)
{
	struct sm_stress_op_stats *o = &r->sh[i].st[op];
	unsigned k;

	for (k = 0; k < n; k++) {
		sm_hdr_record(&o->rt[slot], rt);
		sm_hdr_record(&o->st[slot], st);
		sm_hdr_record(&o->rt_total, rt);
		sm_hdr_record(&o->st_total, st);
	}
	o->ops += n;
	o->partitions += n;
	o->rows += n;
}

static void
test_ops_table_by_api(void **state)
{
	const struct sm_stress_proto_ops *t[] = {
		sm_stress_proto_of(SM_STRESS_API_CQL),
		sm_stress_proto_of(SM_STRESS_API_ALTERNATOR),
	};
	unsigned i;

	(void)state;
	assert_ptr_equal(t[0], &sm_stress_cql_ops);
	assert_ptr_equal(t[1], &sm_stress_http_ops);
	assert_string_equal(t[0]->name, "cql");
	assert_string_equal(t[1]->name, "alternator");
	for (i = 0; i < SM_ARRAY_SIZE(t); i++) {
		/* What the engine calls without asking. */
		assert_non_null(t[i]->ctl_open);
		assert_non_null(t[i]->ctl_step);
		assert_non_null(t[i]->ctl_close);
		assert_non_null(t[i]->ctl_port);
		assert_non_null(t[i]->conns_per_host);
		assert_non_null(t[i]->conn_port);
		assert_non_null(t[i]->connect);
		assert_non_null(t[i]->send);
		assert_non_null(t[i]->close);
	}
	/*
	 * Only CQL plans routing and reports it; both prepare (CQL its
	 * statements, Alternator a workload's state: YCSB's dynamodb binding).
	 */
	assert_non_null(t[0]->prepare);
	assert_non_null(t[0]->plan);
	assert_non_null(t[0]->report_routing);
	assert_non_null(t[1]->prepare);
	assert_null(t[1]->plan);
	assert_null(t[1]->report_routing);
}

static void
test_cql_run_prepares_and_plans(void **state)
{
	struct fixture f;

	(void)state;
	fixture_up(&f,
		   "write n=1000 -rate threads=4 -col n=FIXED(2) -mode native cql3 "
		   "connectionsPerHost=8 -port native=9999",
		   2);
	assert_ptr_equal(f.r->proto, &sm_stress_cql_ops);
	assert_string_equal(f.r->stmt_text[SM_STRESS_OP_WRITE],
			    "UPDATE keyspace1.standard1 SET \"C0\" = ?, \"C1\" = ? WHERE key = ?");
	assert_string_equal(f.r->stmt_text[SM_STRESS_OP_READ],
			    "SELECT * FROM keyspace1.standard1 WHERE key = ?");
	assert_string_equal(
		f.r->stmt_text[SM_STRESS_OP_COUNTER_WRITE],
		"UPDATE keyspace1.counter1 SET \"C0\" = \"C0\" + ?, \"C1\" = \"C1\" + ? "
		"WHERE key = ?");
	assert_int_equal(f.r->proto->ctl_port(), 9999);
	assert_int_equal(f.r->proto->conn_port(), 9999);
	/* 8 connections per host over 2 shards; a shard-aware port takes one per server shard. */
	assert_int_equal(f.r->proto->conns_per_host(&f.r->sh[0]), 4);
	f.r->use_shard_port = true;
	f.r->shard_port = 19999;
	f.r->nr_shards = 3;
	assert_int_equal(f.r->proto->conns_per_host(&f.r->sh[0]), 3);
	assert_int_equal(f.r->proto->conn_port(), 19999);
	assert_int_equal(f.r->proto->ctl_port(), 9999);
	fixture_down(&f);
}

static void
test_alternator_run_connects_per_worker(void **state)
{
	struct fixture f;

	(void)state;
	fixture_up(&f, "write n=1000 -rate threads=9 -mode alternator -port alternator=8123", 2);
	assert_ptr_equal(f.r->proto, &sm_stress_http_ops);
	assert_int_equal(f.r->proto->ctl_port(), 8123);
	assert_int_equal(f.r->proto->conn_port(), 8123);
	/* One request in flight per connection: one per worker (9 / 2 + 1). */
	assert_int_equal(f.r->proto->conns_per_host(&f.r->sh[0]), 5);
	fixture_down(&f);
}

static void
test_check_limits(void **state)
{
	static const struct {
		const char *args, *want;
	} bad[] = {
		{ "write n=10 -col n=FIXED(65)", "-col n= must be FIXED(N) with N from 1 to 64" },
		{ "write n=10 -col n=UNIFORM(1..5)",
		  "-col n= must be FIXED(N) with N from 1 to 64" },
		{ "write n=10 -col size=FIXED(5000)",
		  "-col size= above 4096 bytes is not supported" },
	};
	struct sm_stress_settings s;
	char buf[128], *argv[32], err[256];
	unsigned i;
	int argc;

	(void)state;
	for (i = 0; i < SM_ARRAY_SIZE(bad); i++) {
		snprintf(buf, sizeof(buf), "%s", bad[i].args);
		argc = split(buf, argv);
		memset(&s, 0, sizeof(s));
		assert_int_equal(sm_stress_settings_parse(argc, argv, &s, err, sizeof(err)), 0);
		assert_int_equal(sm_stress_run_check(&s, err, sizeof(err)), -EINVAL);
		assert_string_equal(err, bad[i].want);
		/* The op mix is what the engine needs; an empty one is refused. */
		memset(s.ratio, 0, sizeof(s.ratio));
		s.col.count =
			(struct sm_stress_dist){ .kind = SM_STRESS_DIST_FIXED, .min = 5, .max = 5 };
		s.col.size.max = 34;
		assert_int_equal(sm_stress_run_check(&s, err, sizeof(err)), -EINVAL);
		assert_string_equal(err, "the op mix is empty: give a ratio(...) weight");
		sm_stress_settings_free(&s);
	}
}

/* Two shards' histograms make one interval row: counts add, percentiles come from the sum. */
static void
test_interval_row_merges_shards(void **state)
{
	unsigned interval, i;
	char buf[4096], type[16];
	unsigned long total;
	double secs, op_s, pk_s, row_s, mean, p50, p95, p99, p999, max;
	struct fixture f;

	(void)state;
	fixture_up(&f, "write n=1000 -rate threads=4", 2);
	for (i = 0; i < 2; i++)
		f.r->sh[i].active = 0; /* shard 0 reads the other one, [1] */
	record(f.r, 0, SM_STRESS_OP_WRITE, 1, 9 * MS, 2 * MS, 300);
	record(f.r, 1, SM_STRESS_OP_WRITE, 1, 9 * MS, 4 * MS, 100);
	f.r->last_tick_ns = sm_now_ns();
	f.r->measure_start_ns = f.r->last_tick_ns;
	sm_stress_report_interval();
	slurp(f.csv, buf, sizeof(buf));
	assert_int_equal(sscanf(buf, "%u,%lf,%15[^,],%lu,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf",
				&interval, &secs, type, &total, &op_s, &pk_s, &row_s, &mean, &p50,
				&p95, &p99, &p999, &max),
			 13);
	assert_int_equal(interval, 1);
	assert_string_equal(type, "total");
	assert_int_equal(total, 400);
	/* No -rate limit: service time. 300 x 2 ms and 100 x 4 ms: median 2, p99 4, mean 2.5. */
	assert_true(fabs(p50 - 2.0) < 0.01);
	assert_true(fabs(p99 - 4.0) < 0.01);
	assert_true(fabs(mean - 2.5) < 0.01);
	fixture_down(&f);
}

/* The final report from synthetic shards: totals, the loader's busy time per op, JSON. */
static void
test_final_report_and_json(void **state)
{
	char text[8192], json[8192];
	struct fixture f;
	FILE *j;
	unsigned i;

	(void)state;
	fixture_up(&f, "write n=1000 -rate threads=4 fixed=1000/s", 2);
	for (i = 0; i < 2; i++) {
		struct sm_stress_shard *sh = &f.r->sh[i];

		record(f.r, i, SM_STRESS_OP_WRITE, 0, 5 * MS, 1 * MS, 500);
		sh->busy0 = 1000000000ull;
		sh->busy1 = sh->busy0 + 250000000ull; /* 0.25 s each: 0.5 s for 1000 ops */
		sh->idle1 = sh->idle0 + 100000000ull;
		sh->cpu0 = 1.0;
		sh->cpu1 = 1.5;
	}
	f.r->sh[1].errs[0] = (struct sm_stress_err_count){ .code = 0x1001, .n = 3 };
	f.r->sh[1].st[SM_STRESS_OP_WRITE].errors = 3;
	f.r->measure_start_ns = 1000000000ull;
	f.r->last_tick_ns = 3000000000ull; /* a 2 s run */
	f.r->phase = SM_STRESS_PH_DONE;
	assert_true(sm_stress_run_measured(f.r));
	assert_false(sm_stress_run_failed(f.r));
	assert_null(sm_stress_run_fail_text(f.r));
	sm_stress_run_report(f.r);
	slurp(f.text, text, sizeof(text));
	assert_non_null(strstr(text, "Client: 2 shards, 4 threads; loader CPU 1.00 s for 1000 ops: "
				     "busy 0.50 s = 500.00 us/op"));
	assert_non_null(strstr(text, "Routing: shard of each request unknown"));
	assert_non_null(strstr(text, "Errors: 3 x CQL error 0x1001 (Overloaded)"));
	/* fixed= corrects coordinated omission: the results show response time (5 ms). */
	assert_non_null(strstr(text, "Latency median            :    5.0 ms"));
	assert_non_null(strstr(text, "Total errors              :          3"));
	j = fopen(f.json, "r");
	assert_non_null(j);
	slurp(j, json, sizeof(json));
	fclose(j);
	assert_non_null(strstr(json, "\"api\": \"cql\""));
	assert_non_null(strstr(json, "\"rate\": {\"kind\": \"fixed\", \"ops_per_s\": 1000}"));
	assert_int_equal((int)json_num(json, NULL, "ops"), 1000);
	assert_int_equal((int)json_num(json, NULL, "errors"), 3);
	assert_true(fabs(json_num(json, NULL, "seconds") - 2.0) < 1e-9);
	assert_true(fabs(json_num(json, NULL, "client_busy_us_per_op") - 500.0) < 1e-9);
	assert_true(fabs(json_num(json, NULL, "client_idle_s") - 0.2) < 1e-9);
	assert_true(fabs(json_num(json, "\n  \"service_time\"", "p50_ms") - 1.0) < 0.01);
	assert_true(fabs(json_num(json, "\n  \"response_time\"", "p50_ms") - 5.0) < 0.01);
	assert_non_null(strstr(json,
			       "{\"code\": 4097, \"what\": \"CQL error 0x1001 (Overloaded)\", "
			       "\"count\": 3}"));
	fixture_down(&f);
}

/* The routing lines with tablets: the shards' counts add, each in its place. */
static void
test_report_tablets(void **state)
{
	char text[8192], json[8192];
	struct fixture f;
	FILE *j;
	unsigned i;

	(void)state;
	fixture_up(&f, "write n=1000 -rate threads=4", 2);
	f.r->scylla = f.r->tablets_offered = f.r->tablets = true;
	for (i = 0; i < 2; i++) {
		struct sm_stress_shard *sh = &f.r->sh[i];

		record(f.r, i, SM_STRESS_OP_WRITE, 0, 1 * MS, 1 * MS, 500);
		sh->routed = 500;
		sh->misrouted = 3 + i;
		sh->by_tablets = 490 - i;
		sh->by_ring = 10 + i;
		sh->tablet_payloads = 3 + i;
		sh->tablets.st.learned = 8 + i;
		sh->tablets_held = 8;
		sh->tablets.st.malformed = i;
		sh->tablets.st.refused = 2 * i;
		sh->tablet_why = i ? "a negative shard" : NULL;
	}
	f.r->measure_start_ns = 1000000000ull;
	f.r->last_tick_ns = 2000000000ull;
	f.r->phase = SM_STRESS_PH_DONE;
	sm_stress_run_report(f.r);
	slurp(f.text, text, sizeof(text));
	assert_non_null(strstr(text, "Routing: 7 of 1000 requests went to a connection"));
	assert_non_null(strstr(text, "Tablets: 979 requests routed by tablets, 21 by the ring, 7 "
				     "misrouted (answered with a tablets-routing-v1 payload); 17 "
				     "tablets learned, 16 held\n"));
	assert_non_null(strstr(text, "Tablets: 1 malformed tablets-routing-v1 payloads ignored (a "
				     "negative shard)\n"));
	assert_non_null(strstr(text, "Tablets: 2 tablets not kept: the map holds at most 65536 "
				     "per client shard"));
	j = fopen(f.json, "r");
	assert_non_null(j);
	slurp(j, json, sizeof(json));
	fclose(j);
	assert_non_null(strstr(json, "\"tablets\": true, \"by_tablets\": 979, \"by_ring\": 21, "
				     "\"tablet_misrouted\": 7, \"tablets_learned\": 17, "
				     "\"tablets_malformed\": 1, \"tablets_refused\": 2}"));
	fixture_down(&f);

	/* offered but not used, and not offered */
	fixture_up(&f, "write n=1000 -rate threads=4 -route none", 1);
	f.r->scylla = f.r->tablets_offered = true;
	record(f.r, 0, SM_STRESS_OP_WRITE, 0, 1 * MS, 1 * MS, 10);
	f.r->phase = SM_STRESS_PH_DONE;
	sm_stress_run_report(f.r);
	slurp(f.text, text, sizeof(text));
	assert_non_null(strstr(text, "Tablets: not used (routing is not token-aware)"));
	fixture_down(&f);
	fixture_up(&f, "write n=1000 -rate threads=4", 1);
	f.r->scylla = true;
	record(f.r, 0, SM_STRESS_OP_WRITE, 0, 1 * MS, 1 * MS, 10);
	f.r->phase = SM_STRESS_PH_DONE;
	sm_stress_run_report(f.r);
	slurp(f.text, text, sizeof(text));
	assert_non_null(strstr(text, "Tablets: the server did not offer TABLETS_ROUTING_V1"));
	fixture_down(&f);
}

/* Two loaders' HDR logs: counts add per tag, the span runs from the first start to the last end. */
static void
test_merge_logs(void **state)
{
	struct sm_stress_merge *m = sm_stress_merge_new();
	FILE *a = tmpfile(), *b = tmpfile(), *out = tmpfile();
	struct sm_hdr h;
	char buf[2048], tag[32], err[512];
	const char *row;
	long count;
	double rate, mean, med, p95, p99, p999, max, secs;
	unsigned k;

	(void)state;
	assert_non_null(m);
	assert_int_equal(
		sm_hdr_init(&h, SM_STRESS_HDR_LOWEST, SM_STRESS_HDR_HIGHEST, SM_STRESS_HDR_SIGFIGS),
		0);
	for (k = 0; k < 100; k++)
		sm_hdr_record(&h, 1 * MS);
	assert_int_equal(sm_hdr_log_write_header(a, "loader a", 0), 0);
	assert_int_equal(sm_hdr_log_write(a, "WRITE-st", 0, 1, &h), 0);
	sm_hdr_reset(&h);
	for (k = 0; k < 300; k++)
		sm_hdr_record(&h, 3 * MS);
	assert_int_equal(sm_hdr_log_write_header(b, "loader b", 0), 0);
	assert_int_equal(sm_hdr_log_write(b, "WRITE-st", 1, 1, &h), 0);
	rewind(a);
	rewind(b);
	assert_int_equal(sm_stress_merge_read(m, a, err, sizeof(err)), 0);
	assert_int_equal(sm_stress_merge_read(m, b, err, sizeof(err)), 0);
	/* [0, 1] then [1, 2]: one after the other, not together */
	assert_int_equal(sm_stress_merge_check(m, err, sizeof(err)), -ERANGE);
	assert_non_null(strstr(err, "did not run at the same time"));
	assert_non_null(strstr(err, "--allow-disjoint"));
	sm_stress_merge_print(out, m);
	slurp(out, buf, sizeof(buf));
	row = strstr(buf, "\nWRITE-st");
	assert_non_null(row);
	assert_int_equal(sscanf(row + 1, "%31s %ld %lf %lf %lf %lf %lf %lf %lf %lf", tag, &count,
				&rate, &mean, &med, &p95, &p99, &p999, &max, &secs),
			 10);
	assert_int_equal(count, 400);
	assert_true(fabs(secs - 2.0) < 0.01);
	assert_true(fabs(rate - 200.0) < 0.5);
	assert_true(fabs(med - 3.0) < 0.01);
	assert_true(fabs(mean - 2.5) < 0.01);
	sm_hdr_fini(&h);
	sm_stress_merge_free(m);
	fclose(a);
	fclose(b);
	fclose(out);
	/* Overlapping logs pass the check. */
	m = sm_stress_merge_new();
	a = tmpfile();
	b = tmpfile();
	assert_int_equal(
		sm_hdr_init(&h, SM_STRESS_HDR_LOWEST, SM_STRESS_HDR_HIGHEST, SM_STRESS_HDR_SIGFIGS),
		0);
	sm_hdr_record(&h, 1 * MS);
	assert_int_equal(sm_hdr_log_write_header(a, "loader a", 0), 0);
	assert_int_equal(sm_hdr_log_write(a, "WRITE-st", 0, 2, &h), 0);
	assert_int_equal(sm_hdr_log_write_header(b, "loader b", 0), 0);
	assert_int_equal(sm_hdr_log_write(b, "WRITE-st", 1, 2, &h), 0);
	rewind(a);
	rewind(b);
	assert_int_equal(sm_stress_merge_read(m, a, err, sizeof(err)), 0);
	assert_int_equal(sm_stress_merge_read(m, b, err, sizeof(err)), 0);
	assert_int_equal(sm_stress_merge_check(m, err, sizeof(err)), 0);
	sm_hdr_fini(&h);
	sm_stress_merge_free(m);
	fclose(a);
	fclose(b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ops_table_by_api),
		cmocka_unit_test(test_cql_run_prepares_and_plans),
		cmocka_unit_test(test_alternator_run_connects_per_worker),
		cmocka_unit_test(test_check_limits),
		cmocka_unit_test(test_interval_row_merges_shards),
		cmocka_unit_test(test_final_report_and_json),
		cmocka_unit_test(test_report_tablets),
		cmocka_unit_test(test_merge_logs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
