/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/bench: perf-simple-query's written results without a run: the JSON
 * result read back by the suite's reader (the round trip shardmark bench
 * makes through a child), the CSV rows, the mode names.
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

#include "sm_bench_suite.h"
#include "sm_psq.h"

static const struct sm_psq_workload fake = { .name = "cql" };

static char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 1 << 16);

	assert_non_null(f);
	assert_non_null(buf);
	*len = fread(buf, 1, (1 << 16) - 1, f);
	fclose(f);
	return buf;
}

/* @p's JSON result, written to a temporary file and read back. */
static char *
write_result(const struct sm_psq *p, const char *cpu, size_t *len)
{
	char path[] = "/tmp/test-psq-XXXXXX", err[256];
	char *text;
	int fd;

	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(sm_psq_write_json(p, path, cpu, err, sizeof(err)), 0);
	text = slurp(path, len);
	unlink(path);
	return text;
}

/* Two shards, three iterations; the median by throughput is the second. */
static void
fill_run(struct sm_psq *p, bool insns_ok)
{
	static const double tps[] = { 1000, 3000, 2000 };
	unsigned i;

	for (i = 0; i < 3; i++) {
		struct sm_bench_result *r = &p->results[i];

		r->tps = tps[i];
		r->allocs_per_op = 0.25 * (i + 1);
		r->tasks_per_op = 1 + i;
		r->insns_ok = insns_ok;
		r->insns_per_op = 5000 + i;
		r->cycles_ok = false;
	}
	p->iter = 3;
	for (i = 0; i < 2; i++) {
		p->shard_ops[i] = 100 * (i + 1); /* 100 and 200 ops */
		p->shard_first[i].sw.hops = 0;
		p->shard_last[i].sw.hops = i == 0 ? 100 : 0; /* 1 hop/op on shard 0 */
		p->shard_last[i].sw.allocs = 50;
		p->shard_first[i].perf_ok[SM_PERF_INSTRUCTIONS] = insns_ok;
		p->shard_last[i].perf_ok[SM_PERF_INSTRUCTIONS] = insns_ok;
		p->shard_last[i].perf[SM_PERF_INSTRUCTIONS] = 700 * (i + 1);
	}
}

static void
test_json_result_round_trip(void **state)
{
	struct sm_psq_params prm = { .partitions = 500, .duration = 3, .concurrency = 10,
				     .mode = SM_PSQ_WRITE, .counters = true };
	static struct sm_psq p;
	struct sm_bench_figures f;
	size_t len;
	char *text;

	(void)state;
	assert_int_equal(sm_psq_init(&p, &prm, &fake, NULL, 2), 0);
	fill_run(&p, true);
	text = write_result(&p, "Test CPU", &len);
	/* ScyllaDB's layout, our additions */
	assert_non_null(strstr(text, "\"concurrency,partitions,cpus,duration\": \"10,500,2,3\""));
	assert_non_null(strstr(text, "\"type\": \"write_counters\""));
	assert_non_null(strstr(text, "\"frontend\": \"cql\""));
	assert_null(strstr(text, "write_isolation"));
	assert_non_null(strstr(text, "\"cpu\": \"Test CPU\""));

	memset(&f, 0, sizeof(f));
	assert_int_equal(sm_bench_read_figures(SM_BENCH_PSQ, text, len, &f), 0);
	assert_true(f.rate == 2000); /* the median tps */
	assert_true(f.mad == 1000);
	assert_true(fabs(f.allocs - 0.75) < 1e-9); /* of the median iteration, the third */
	assert_true(f.tasks == 3);
	assert_true(f.insns == 5002);
	assert_true(f.cycles == -1); /* null: n/a */
	/* hops weighted by each shard's ops: 100 of 300 ops made one hop */
	assert_true(fabs(f.hops - 1.0 / 3) < 1e-6);
	free(text);
	sm_psq_free(&p);
}

static void
test_json_result_without_counters(void **state)
{
	struct sm_psq_params prm = { .partitions = 1, .duration = 1, .concurrency = 1,
				     .mode = SM_PSQ_READ, .write_isolation = "unsafe" };
	static const struct sm_psq_workload alt = { .name = "alternator" };
	static struct sm_psq p;
	struct sm_bench_figures f;
	size_t len;
	char *text;

	(void)state;
	assert_int_equal(sm_psq_init(&p, &prm, &alt, NULL, 2), 0);
	fill_run(&p, false);
	text = write_result(&p, "x", &len);
	assert_non_null(strstr(text, "\"instructions_per_op\": null"));
	assert_non_null(strstr(text, "\"frontend\": \"alternator\",\n    \"write_isolation\": "
				     "\"unsafe\""));
	assert_int_equal(sm_bench_read_figures(SM_BENCH_PSQ, text, len, &f), 0);
	assert_true(f.insns == -1);
	free(text);
	sm_psq_free(&p);
}

static void
test_json_result_unwritable(void **state)
{
	struct sm_psq_params prm = { .partitions = 1, .duration = 1, .concurrency = 1 };
	static struct sm_psq p;
	char err[256];

	(void)state;
	assert_int_equal(sm_psq_init(&p, &prm, &fake, NULL, 1), 0);
	p.iter = 1;
	assert_int_equal(sm_psq_write_json(&p, "/nonexistent/dir/r.json", "x", err, sizeof(err)),
			 -EIO);
	assert_non_null(strstr(err, "cannot write /nonexistent/dir/r.json: "));
	sm_psq_free(&p);
}

static void
test_csv_rows_and_mode_names(void **state)
{
	struct sm_bench_result r = { .tps = 1234.5, .allocs_per_op = 0.5, .tasks_per_op = 1,
				     .insns_ok = true, .insns_per_op = 4713.25, .errors = 2 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	sm_psq_csv_header(f);
	sm_psq_csv_row(f, SM_PSQ_WRITE_RMW, 3, 2.5, &r);
	fclose(f);
	/* n/a counters are empty fields */
	assert_string_equal(buf, "interval,seconds,type,ops_per_s,allocs_per_op,logallocs_per_op,"
				 "tasks_per_op,insns_per_op,cycles_per_op,errors\n"
				 "3,2.500,write_rmw,1234.500,0.500000,0.000000,1.000000,4713.250,,"
				 "2\n");
	free(buf);
	assert_string_equal(sm_psq_mode_name(SM_PSQ_READ), "read");
	assert_string_equal(sm_psq_mode_name(SM_PSQ_WRITE), "write");
	assert_string_equal(sm_psq_mode_name(SM_PSQ_DELETE), "delete");
	/* ScyllaDB's 34-byte values as CQL blobs, fixed from run to run */
	assert_int_equal(strlen(sm_psq_value_hex(4)), 2 + 2 * SM_PSQ_VALUE_LEN);
	assert_memory_equal(sm_psq_value_hex(0), "0x", 2);
	assert_string_not_equal(sm_psq_value_hex(0), sm_psq_value_hex(1));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_result_round_trip),
		cmocka_unit_test(test_json_result_without_counters),
		cmocka_unit_test(test_json_result_unwritable),
		cmocka_unit_test(test_csv_rows_and_mode_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
