/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * scylla-bench's command line and output pieces (sm_stress_sb.h): Go's
 * time.Duration.String() and results.Round() as its tables print them.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sm_stress.h"
#include "sm_stress_sb.h"

static void
test_go_durations(void **state)
{
	char b[32];

	(void)state;
	assert_string_equal(sm_stress_sb_duration(0, 0, b, sizeof(b)), "0s");
	assert_string_equal(sm_stress_sb_duration(999, 0, b, sizeof(b)), "999ns");
	assert_string_equal(sm_stress_sb_duration(456000, 0, b, sizeof(b)), "456µs");
	assert_string_equal(sm_stress_sb_duration(1500, 0, b, sizeof(b)), "1.5µs");
	assert_string_equal(sm_stress_sb_duration(13548303, 0, b, sizeof(b)), "13.548303ms");
	assert_string_equal(sm_stress_sb_duration(2000000000, 0, b, sizeof(b)), "2s");
	assert_string_equal(sm_stress_sb_duration(62500000000ll, 0, b, sizeof(b)), "1m2.5s");
	assert_string_equal(sm_stress_sb_duration(3600000000000ll, 0, b, sizeof(b)), "1h0m0s");
	/* results.Round(): 1-10 ms one decimal, 10 ms-1 s whole ms, > 1 s tenths */
	assert_string_equal(sm_stress_sb_duration(8234567, 1, b, sizeof(b)), "8.2ms");
	assert_string_equal(sm_stress_sb_duration(13548303, 1, b, sizeof(b)), "14ms");
	assert_string_equal(sm_stress_sb_duration(456789, 1, b, sizeof(b)), "457µs");
	assert_string_equal(sm_stress_sb_duration(1049999999, 1, b, sizeof(b)), "1s");
	assert_string_equal(sm_stress_sb_duration(10250000000ll, 1, b, sizeof(b)), "10.3s");
}

static int
parse(struct sm_stress_settings *s, char *err, size_t errlen, ...)
{
	char *argv[32];
	va_list ap;
	int argc = 0;

	va_start(ap, errlen);
	while (argc < 32 && (argv[argc] = va_arg(ap, char *)) != NULL)
		argc++;
	va_end(ap);
	return sm_stress_sb_parse(argc, argv, s, err, errlen);
}

static void
test_flags(void **state)
{
	struct sm_stress_settings s;
	char err[400];

	(void)state;
	assert_int_equal(parse(&s, err, sizeof(err), "-mode", "write", "-workload=sequential",
			       "-partition-count", "10", "-clustering-row-count", "20",
			       "-rows-per-request", "3", "--concurrency", "4", "-nodes", "127.0.0.1",
			       "-consistency-level", "one", NULL),
			 0);
	assert_int_equal(s.cmd, SM_STRESS_CMD_SB);
	/* ceil(20 / 3) = 7 requests per partition, each row once */
	assert_int_equal(s.n_ops, 70);
	assert_int_equal(s.rate.threads, 4);
	assert_int_equal(s.cl, SM_STRESS_CL_ONE);
	assert_string_equal(sm_stress_op_name(SM_STRESS_OP_USER0), "write");
	assert_string_equal(s.schema.keyspace, "scylla_bench");
	sm_stress_settings_free(&s);
	assert_int_equal(parse(&s, err, sizeof(err), "-mode", "read", "-workload", "uniform",
			       "-duration", "1m30s", "-max-rate", "1000", NULL),
			 0);
	assert_int_equal(s.duration_ns, 90000000000ull);
	assert_int_equal(s.rate.ops_per_s, 1000);
	sm_stress_settings_free(&s);
	assert_int_equal(parse(&s, err, sizeof(err), "-mode", "read", "-clustering-row-size",
			       "uniform:10..20", NULL),
			 0);
	sm_stress_settings_free(&s);
	assert_int_equal(parse(&s, err, sizeof(err), "-mode", "write", "-duration", "5x", NULL),
			 -EINVAL);
	assert_non_null(strstr(err, "-duration 5x"));
	assert_int_equal(parse(&s, err, sizeof(err), "-mode", "write", "-rows-per-request", "0",
			       NULL),
			 -EINVAL);
	assert_int_equal(parse(&s, err, sizeof(err), "-mode", "write", "-clustering-row-size",
			       "pareto:1", NULL),
			 -EINVAL);
	assert_int_equal(parse(&s, err, sizeof(err), "-mode", "write", "-consistency-level",
			       "most", NULL),
			 -EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_go_durations),
		cmocka_unit_test(test_flags),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
