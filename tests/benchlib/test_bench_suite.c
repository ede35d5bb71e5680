/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/bench: shardmark bench's figures and report without children: the
 * result reader on each load's JSON, /metrics parsing, the server's per-op
 * figures, the table rows and the suite's CSV.
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

#include <cmocka.h>

#include "sm_bench_suite.h"

static int
read_fig(enum sm_bench_load_kind kind, const char *json, struct sm_bench_figures *f)
{
	memset(f, 0, sizeof(*f));
	return sm_bench_read_figures(kind, json, strlen(json), f);
}

static void
test_reader_echo_and_stress(void **state)
{
	struct sm_bench_figures f;

	(void)state;
	assert_int_equal(read_fig(SM_BENCH_ECHO,
				  "{\"total\": {\"requests_per_s\": 1200.5, \"allocs_per_op\": 0, "
				  "\"tasks_per_op\": 2, \"instructions_per_op\": null, "
				  "\"cycles_per_op\": 900}}",
				  &f),
			 0);
	assert_true(f.rate == 1200.5 && f.mad == -1 && f.hops == -1);
	assert_true(f.tasks == 2 && f.insns == -1 && f.cycles == 900);

	/* a key inside a nested object is not the top level's */
	assert_int_equal(read_fig(SM_BENCH_STRESS,
				  "{\"settings\": {\"ops_per_s\": 1, \"ops\": [1, 2]}, "
				  "\"ops_per_s\": 5000, \"ops\": 10000, \"errors\": 3, "
				  "\"client_cpu_s\": 2, \"routing\": {\"misrouted\": 7}, "
				  "\"service_time\": {\"p50_ms\": 0.5, \"p99_ms\": 4}}",
				  &f),
			 0);
	assert_true(f.rate == 5000 && f.ops == 10000 && f.errors == 3 && f.misrouted == 7);
	assert_true(f.p50_ms == 0.5 && f.p99_ms == 4);
	assert_true(fabs(f.client_us_per_op - 200) < 1e-9); /* client_cpu_s without busy */
	assert_int_equal(read_fig(SM_BENCH_STRESS,
				  "{\"ops_per_s\": 1, \"ops\": 100, \"client_cpu_s\": 9, "
				  "\"client_busy_s\": 1}",
				  &f),
			 0);
	assert_true(fabs(f.client_us_per_op - 10000) < 1e-9); /* busy wins */
	assert_true(f.p50_ms == -1 && f.misrouted == 0);
}

static void
test_reader_refuses_what_is_no_result(void **state)
{
	static const char *const bad[] = {
		"", "not json", "[1, 2]", "{\"stats\": ", "{\"stats\": {}}",
		"{\"stats\": {\"median tps\": \"fast\"}}", "{\"total\": 5}",
	};
	struct sm_bench_figures f;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(read_fig(i < 6 ? SM_BENCH_PSQ : SM_BENCH_ECHO, bad[i], &f),
				 -EINVAL);
	assert_int_equal(read_fig(SM_BENCH_STRESS, "{\"ops\": 3}", &f), -EINVAL);
}

static const char metrics[] =
	"# HELP shardmark_requests_total requests\n"
	"shardmark_requests_total{shard=\"0\"} 100\n"
	"shardmark_requests_total{shard=\"1\"} 300\n"
	"shardmark_hops_total{shard=\"1\"} 30\n"
	"shardmark_tasks_run_total{shard=\"0\"} 400\n"
	"shardmark_allocs_total{shard=\"0\"} 8\n"
	"shardmark_perf_cycles_total{shard=\"0\"} 1000\n"
	"shardmark_perf_cycles_total{shard=\"1\"} 3000\n"
	"shardmark_requests_total{shard=\"999\"} 1\n"
	"shardmark_requests_total_other{shard=\"5\"} 1\n";

static void
test_metrics_delta_and_server_per_op(void **state)
{
	struct sm_bench_server_counters a, b;
	struct sm_bench_figures f;
	char text[sizeof(metrics)];
	char none[] = "# nothing of ours\nother_total 5\n";

	(void)state;
	memcpy(text, metrics, sizeof(metrics));
	assert_int_equal(sm_bench_parse_metrics(text, &b), 0);
	assert_int_equal(b.nshards, 2); /* shard 999 is dropped, not indexed */
	assert_true(b.requests[0] == 100 && b.requests[1] == 300 && b.hops[1] == 30);
	assert_true(b.insns[0] == -1 && b.insns[1] == -1); /* no PMU: absent */
	assert_true(b.cycles[1] == 3000);
	assert_int_equal(sm_bench_parse_metrics(none, &a), -EIO);

	memset(&a, 0, sizeof(a));
	a.nshards = 2;
	a.requests[1] = 100;
	a.insns[0] = a.insns[1] = -1;
	memset(&f, 0, sizeof(f));
	sm_bench_counters_delta(&f.srv, &a, &b);
	assert_true(f.srv.requests[1] == 200 && f.srv.insns[0] == -1 && f.srv.cycles[0] == 1000);
	f.ops = 100;
	sm_bench_server_per_op(&f);
	assert_true(f.hops == 0.3 && f.tasks == 4 && fabs(f.allocs - 0.08) < 1e-9);
	assert_true(f.insns == -1 && f.cycles == 40 && f.mad == -1);
}

static char *
report(void (*fn)(FILE *, const struct sm_bench_figures *), const struct sm_bench_figures *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	fn(out, f);
	fclose(out);
	return buf;
}

static void
row(FILE *out, const struct sm_bench_figures *f)
{
	sm_bench_print_row(out, "cql-read", f);
}

static void
stress(FILE *out, const struct sm_bench_figures *f)
{
	sm_bench_print_stress_details(out, "stress-cql-write", f);
}

static void
test_table_rows(void **state)
{
	struct sm_bench_figures f = { .rate = 1656603.4, .mad = 12, .allocs = 0, .tasks = 1,
				      .insns = 4713, .cycles = -1, .hops = 0 };
	char *s;

	(void)state;
	s = report(row, &f);
	assert_string_equal(s, "cql-read                            1656603        12      0.000 "
			       "     1.000       4713        n/a      0.000\n");
	free(s);
	f.mad = -1;
	f.hops = -1;
	s = report(row, &f);
	assert_non_null(strstr(s, "1656603         -"));
	assert_non_null(strstr(s, "n/a          -\n"));
	free(s);

	memset(&f, 0, sizeof(f));
	f.rate = 94728;
	f.p50_ms = 0.424;
	f.p99_ms = 4.841;
	f.client_us_per_op = 0.36;
	f.ops = 100;
	f.srv.nshards = 1;
	f.srv.requests[0] = 102;
	f.srv.allocs[0] = 800;
	f.srv.insns[0] = f.srv.cycles[0] = -1;
	s = report(stress, &f);
	assert_string_equal(s, "stress-cql-write                      94728     0.424     4.841 "
			       "        0.36         0          0\n"
			       "    server shard 0          102      1.020      0.000      0.000 "
			       "     8.000        n/a        n/a\n");
	free(s);
	s = report(sm_bench_json_server, &f);
	assert_string_equal(s, ", \"server_per_shard\": [{\"shard\": 0, \"requests\": 102, "
			       "\"hops\": 0, \"tasks\": 0, \"allocs\": 800, \"instructions\": "
			       "null, \"cycles\": null}]");
	free(s);
}

static void
test_suite_csv(void **state)
{
	char rows[] = "interval,seconds,type,ops_per_s,errors,unknown\n"
		      "1,1.002,read,1589412.845,0,x\n"
		      "2,2.004,read,1500000.000\n";
	struct sm_bench_figures f = { .rate = 1000, .allocs = 0.5, .tasks = 2, .insns = -1,
				      .cycles = 300 };
	char *buf = NULL, *line;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	(void)state;
	sm_bench_csv_header(out);
	sm_bench_csv_append(out, "cql-read", rows);
	sm_bench_csv_echo(out, "echo", 5, &f);
	fclose(out);
	line = strtok(buf, "\n");
	assert_string_equal(line, "load,interval,seconds,type,total_ops,ops_per_s,partitions_per_s,"
				  "rows_per_s,mean_ms,p50_ms,p95_ms,p99_ms,p999_ms,max_ms,"
				  "allocs_per_op,logallocs_per_op,tasks_per_op,insns_per_op,"
				  "cycles_per_op,errors");
	/* each column by its name; a column the load has not stays empty */
	assert_string_equal(strtok(NULL, "\n"),
			    "cql-read,1,1.002,read,,1589412.845,,,,,,,,,,,,,,0");
	assert_string_equal(strtok(NULL, "\n"), "cql-read,2,2.004,read,,1500000.000,,,,,,,,,,,,,,");
	assert_string_equal(strtok(NULL, "\n"),
			    "echo,1,5,total,,1000.000,,,,,,,,,0.500000,,2.000000,,300.000,0");
	assert_null(strtok(NULL, "\n"));
	free(buf);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reader_echo_and_stress),
		cmocka_unit_test(test_reader_refuses_what_is_no_result),
		cmocka_unit_test(test_metrics_delta_and_server_per_op),
		cmocka_unit_test(test_table_rows),
		cmocka_unit_test(test_suite_csv),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
