/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * YCSB's generators and command line (sm_stress_ycsb.h), checked against
 * YCSB's own published values: the first key a YCSB load writes is
 * user6284781860667377211, ScrambledZipfianGenerator's ZETAN is zeta over
 * 10^10 items with theta 0.99, and Gray et al.'s zipfian gives item 0 the
 * probability 1/zeta(n) and item 1 0.5^theta/zeta(n).
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
#include "sm_stress_ycsb.h"

static void
test_fnvhash64_and_key_names(void **state)
{
	char key[48];

	(void)state;
	assert_true(sm_ycsb_fnvhash64(0) == 6284781860667377211ll);
	assert_true(sm_ycsb_fnvhash64(1) == 8517097267634966620ll);
	assert_true(sm_ycsb_fnvhash64(12345) == 1792800413050876852ll);
	assert_true(sm_ycsb_fnvhash64(-1) == 8289690350564177859ll);
	/* the first record of every YCSB load with insertorder=hashed */
	sm_ycsb_key_name(0, false, 1, key, sizeof(key));
	assert_string_equal(key, "user6284781860667377211");
	sm_ycsb_key_name(42, true, 1, key, sizeof(key));
	assert_string_equal(key, "user42");
	sm_ycsb_key_name(42, true, 6, key, sizeof(key));
	assert_string_equal(key, "user000042");
}

static void
test_zetan_is_zeta_of_ten_billion_items(void **state)
{
	const double theta = SM_YCSB_ZIPFIAN_CONSTANT, n = 1e10, m = 1e6;
	/* the first 10^6 terms exactly, the rest by the midpoint integral */
	double z = sm_ycsb_zeta(0, (int64_t)m, theta, 0) +
		   (pow(n + 0.5, 1 - theta) - pow(m + 0.5, 1 - theta)) / (1 - theta);

	(void)state;
	assert_true(fabs(z - SM_YCSB_SCRAMBLED_ZETAN) < 1e-4);
	assert_true(SM_YCSB_SCRAMBLED_ITEM_COUNT == 10000000000000000ll);
}

static void
test_zipfian_head_probabilities(void **state)
{
	struct sm_ycsb_zipf z;
	struct sm_rand r;
	const int64_t items = 1000;
	const unsigned n = 1000000;
	double zeta = sm_ycsb_zeta(0, items, 0.99, 0);
	unsigned i, c0 = 0, c1 = 0, c2 = 0;

	(void)state;
	sm_ycsb_zipf_init(&z, 0, items - 1, 0.99, 0);
	assert_true(fabs(z.zetan - zeta) < 1e-12);
	sm_rand_seed(&r, 7);
	for (i = 0; i < n; i++) {
		int64_t v = sm_ycsb_zipf_next(&z, &r, items);

		assert_true(v >= 0 && v < items);
		c0 += v == 0;
		c1 += v == 1;
		c2 += v == 2;
	}
	assert_true(fabs((double)c0 / n - 1 / zeta) < 0.002);
	assert_true(fabs((double)c1 / n - pow(0.5, 0.99) / zeta) < 0.002);
	assert_true(c0 > c1 && c1 > c2); /* item 0 most popular, then 1, then 2 */
}

static void
test_scrambled_zipfian_hot_keys(void **state)
{
	struct sm_ycsb_zipf z;
	struct sm_rand r;
	const int64_t min = 0, max = 99999, items = max - min + 1;
	const unsigned n = 1000000;
	int64_t hot0 = min + sm_ycsb_fnvhash64(0) % items, hot1 = min + sm_ycsb_fnvhash64(1) % items;
	unsigned i, c0 = 0, c1 = 0;

	(void)state;
	sm_ycsb_scrambled_init(&z);
	sm_rand_seed(&r, 11);
	for (i = 0; i < n; i++) {
		int64_t v = sm_ycsb_scrambled_next(&z, &r, min, max);

		assert_true(v >= min && v <= max);
		c0 += v == hot0;
		c1 += v == hot1;
	}
	/* the zipfian's item 0 lands on fnvhash64(0) % items: 1 / ZETAN of the draws */
	assert_true(fabs((double)c0 / n - 1 / SM_YCSB_SCRAMBLED_ZETAN) < 0.002);
	assert_true(fabs((double)c1 / n - pow(0.5, 0.99) / SM_YCSB_SCRAMBLED_ZETAN) < 0.002);
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
	return sm_stress_ycsb_parse(argc, argv, s, err, errlen);
}

static void
test_command_line_and_properties(void **state)
{
	static const char props[] = "# YCSB\nrecordcount=5000\noperationcount=2000\n"
				    "readproportion=0.5\nupdateproportion : 0.5\n"
				    "requestdistribution zipfian\nfieldcount=4\n";
	struct sm_stress_settings s;
	char path[] = "/tmp/sm-test-ycsb-XXXXXX", err[512];
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, props, sizeof(props) - 1), (ssize_t)(sizeof(props) - 1));
	close(fd);
	/* -p overrides the file, even when it comes first */
	assert_int_equal(parse(&s, err, sizeof(err), "run", "cassandra-cql", "-p",
			       "operationcount=300", "-P", path, "-threads", "8", "-target", "100",
			       "-p", "hosts=127.0.0.1", "-p", "port=19999", "-s", NULL),
			 0);
	assert_int_equal(s.cmd, SM_STRESS_CMD_YCSB);
	assert_int_equal(s.n_ops, 300);
	assert_int_equal(s.rate.threads, 8);
	assert_int_equal(s.rate.ops_per_s, 100);
	assert_int_equal(s.native_port, 19999);
	assert_true(s.ratio[SM_STRESS_OP_USER0] == 0.5 && s.ratio[SM_STRESS_OP_USER0 + 1] == 0.5);
	assert_true(s.ratio[SM_STRESS_OP_USER0 + 2] == 0);
	assert_string_equal(sm_stress_op_name(SM_STRESS_OP_USER0), "READ");
	assert_string_equal(sm_stress_op_name(SM_STRESS_OP_USER0 + 4), "READ-MODIFY-WRITE");
	assert_string_equal(s.schema.keyspace, "ycsb");
	assert_int_equal(s.pop.dist.max, 4999);
	sm_stress_settings_free(&s);
	/* load: every record once, inserts only */
	assert_int_equal(parse(&s, err, sizeof(err), "load", "-P", path, NULL), 0);
	assert_int_equal(s.n_ops, 5000);
	assert_true(s.ratio[SM_STRESS_OP_USER0 + 2] == 1 && s.ratio[SM_STRESS_OP_USER0] == 0);
	assert_false(s.pop.wrap);
	sm_stress_settings_free(&s);
	assert_int_equal(parse(&s, err, sizeof(err), "run", "-P", "/nonexistent/w", NULL), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/w"));
	assert_int_equal(parse(&s, err, sizeof(err), "run", "dynamodb", "-P", path, "-p",
			       "dynamodb.endpoint=http://127.0.0.1:8123", NULL),
			 0);
	assert_int_equal(s.mode.api, SM_STRESS_API_ALTERNATOR);
	assert_int_equal(s.alternator_port, 8123);
	sm_stress_settings_free(&s);
	assert_int_equal(parse(&s, err, sizeof(err), "run", "mongodb", "-P", path, NULL), -EINVAL);
	assert_non_null(strstr(err, "mongodb"));
	assert_int_equal(parse(&s, err, sizeof(err), "run", "dynamodb", "-P", path, "-p",
			       "dynamodb.endpoint=https://x:1", NULL),
			 -EINVAL);
	assert_int_equal(parse(&s, err, sizeof(err), "run", "-P", path, "-p",
			       "requestdistribution=pareto", NULL),
			 -EINVAL);
	assert_non_null(strstr(err, "requestdistribution=pareto"));
	assert_int_equal(parse(&s, err, sizeof(err), "run", "-P", path, "-p", "readproportion=x",
			       NULL),
			 -EINVAL);
	assert_int_equal(parse(&s, err, sizeof(err), "run", "-P", path, "-bogus", NULL), -EINVAL);
	assert_non_null(strstr(err, "-bogus"));
	assert_int_equal(parse(&s, err, sizeof(err), "transactions", NULL), -EINVAL);
	unlink(path);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fnvhash64_and_key_names),
		cmocka_unit_test(test_zetan_is_zeta_of_ten_billion_items),
		cmocka_unit_test(test_zipfian_head_probabilities),
		cmocka_unit_test(test_scrambled_zipfian_hot_keys),
		cmocka_unit_test(test_command_line_and_properties),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
