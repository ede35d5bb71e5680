/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/bench: the echo load's rows and JSON result without a run: per-shard
 * deltas, the total, and the result read back by the suite's reader.
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

#include "sm_bench_echo.h"
#include "sm_bench_suite.h"

/* Two shards measured over 2 s: 1000 and 3000 requests, a PMU on shard 0 only. */
static void
fill_run(struct sm_bench_echo *b)
{
	static const struct sm_bench_echo_params prm = { .duration_s = 2, .warmup_s = 1,
							 .conns = 8, .size = 64, .pipeline = 4 };
	unsigned i;

	assert_int_equal(sm_bench_echo_init(b, &prm, 2), 0);
	for (i = 0; i < 2; i++) {
		b->done0[i] = 10;
		b->done1[i] = 10 + 1000 * (2 * i + 1);
		b->s0[i].when_ns = 1000000000ull;
		b->s1[i].when_ns = 3000000000ull;
		b->s1[i].sw.allocs = 500;
		b->s1[i].sw.tasks_run = 2000;
		b->s1[i].sw.io_enters = 100;
		b->s0[i].cpu = (int)i;
		b->s0[i].perf_ok[SM_PERF_INSTRUCTIONS] = i == 0;
		b->s1[i].perf_ok[SM_PERF_INSTRUCTIONS] = i == 0;
		b->s1[i].perf[SM_PERF_INSTRUCTIONS] = 7000;
		b->s0[i].perf_err[SM_PERF_CYCLES] = -ENOENT;
	}
}

static void
test_rows_and_total(void **state)
{
	static struct sm_bench_echo b;
	struct sm_bench_echo_row r, total;
	unsigned i;

	(void)state;
	fill_run(&b);
	memset(&total, 0, sizeof(total));
	for (i = 0; i < 2; i++) {
		sm_bench_echo_row(&b, i, &r);
		assert_true(r.ops == 1000 * (2 * i + 1));
		assert_true(r.secs == 2 && r.allocs == 500 && r.tasks == 2000);
		assert_int_equal(r.perf_ok[SM_PERF_INSTRUCTIONS], i == 0);
		sm_bench_echo_row_add(&total, &r);
	}
	assert_true(total.ops == 4000 && total.secs == 2 && total.io_enters == 200);
	/* a counter one shard could not read is n/a in the total */
	assert_false(total.perf_ok[SM_PERF_INSTRUCTIONS]);
	sm_bench_echo_free(&b);
}

static void
test_json_result_read_back(void **state)
{
	static struct sm_bench_echo b;
	struct sm_bench_figures f;
	char path[] = "/tmp/test-echo-XXXXXX", err[256], text[1 << 15];
	size_t len;
	FILE *in;
	int fd;

	(void)state;
	fill_run(&b);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(sm_bench_echo_write_json(&b, path, "uring", err, sizeof(err)), 0);
	in = fopen(path, "r");
	assert_non_null(in);
	len = fread(text, 1, sizeof(text) - 1, in);
	fclose(in);
	unlink(path);
	text[len] = '\0';
	assert_non_null(strstr(text, "\"network_stack\": \"uring\""));
	assert_non_null(strstr(text, "{\"shard\": 1, \"cpu\": 1, \"requests\": 3000, "));
	assert_non_null(strstr(text, "\"unavailable\": {"));
	memset(&f, 0, sizeof(f));
	assert_int_equal(sm_bench_read_figures(SM_BENCH_ECHO, text, len, &f), 0);
	assert_true(f.rate == 2000); /* 4000 requests in 2 s */
	assert_true(fabs(f.allocs - 0.25) < 1e-9 && fabs(f.tasks - 1) < 1e-9);
	assert_true(f.insns == -1 && f.hops == -1 && f.mad == -1);
	assert_int_equal(sm_bench_echo_write_json(&b, "/nonexistent/e.json", "uring", err,
						  sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "cannot write /nonexistent/e.json"));
	sm_bench_echo_free(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_and_total),
		cmocka_unit_test(test_json_result_read_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
