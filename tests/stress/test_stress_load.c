/* SPDX-License-Identifier: BSD-3-Clause */
/* Keys, values, populations and pacing of the stress load. */

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sm_stress_load.h"

static void
test_keys_deterministic_and_printable(void **state)
{
	uint8_t a[SM_STRESS_KEY_LEN], b[SM_STRESS_KEY_LEN];
	unsigned i, k, same = 0;

	(void)state;
	for (i = 0; i < 1000; i++) {
		sm_stress_key(i, a);
		sm_stress_key(i, b);
		assert_memory_equal(a, b, sizeof(a));
		for (k = 0; k < SM_STRESS_KEY_LEN; k++)
			assert_true((a[k] >= '0' && a[k] <= '9') || (a[k] >= 'A' && a[k] <= 'Z'));
		sm_stress_key(i + 1, b);
		same += memcmp(a, b, sizeof(a)) == 0;
	}
	assert_int_equal(same, 0);
}

static void
test_values_depend_on_key_and_column(void **state)
{
	uint8_t a[34], b[34], c[34];

	(void)state;
	sm_stress_value(7, 0, a, sizeof(a));
	sm_stress_value(7, 0, b, sizeof(b));
	assert_memory_equal(a, b, sizeof(a));
	sm_stress_value(7, 1, c, sizeof(c));
	assert_memory_not_equal(a, c, sizeof(a));
	sm_stress_value(8, 0, c, sizeof(c));
	assert_memory_not_equal(a, c, sizeof(a));
	/* A shorter value is a prefix of the longer one. */
	sm_stress_value(7, 0, c, 5);
	assert_memory_equal(a, c, 5);
}

static void
test_seq_shards_interleave_and_cover(void **state)
{
	struct sm_stress_dist d = { .kind = SM_STRESS_DIST_SEQ, .min = 1, .max = 10 };
	struct sm_stress_cursor c[3];
	struct sm_rand r;
	unsigned seen[11] = { 0 }, s, i;
	uint64_t v;

	(void)state;
	sm_rand_seed(&r, 1);
	for (s = 0; s < 3; s++)
		assert_int_equal(sm_stress_cursor_init(&c[s], &d, true, s, 3), 0);
	/* 10 keys over 3 shards: each key once per pass, then wrap. */
	for (i = 0; i < 4; i++) {
		for (s = 0; s < 3; s++) {
			if (i * 3 + s < 10) {
				assert_true(sm_stress_cursor_next(&c[s], &r, &v));
				seen[v]++;
			}
		}
	}
	for (i = 1; i <= 10; i++)
		assert_int_equal(seen[i], 1);
	assert_true(sm_stress_cursor_next(&c[1], &r, &v));
	assert_int_equal(v, 1);

	/* no-wrap: a shard stops at the end of its share. */
	assert_int_equal(sm_stress_cursor_init(&c[0], &d, false, 0, 3), 0);
	for (i = 0; i < 4; i++)
		assert_true(sm_stress_cursor_next(&c[0], &r, &v));
	assert_int_equal(v, 10);
	assert_false(sm_stress_cursor_next(&c[0], &r, &v));

	d.min = 5;
	d.max = 4;
	assert_int_equal(sm_stress_cursor_init(&c[0], &d, true, 0, 1), -EINVAL);
}

static void
test_uniform_and_gaussian_stay_in_range(void **state)
{
	struct sm_stress_dist du = { .kind = SM_STRESS_DIST_UNIFORM, .min = 1, .max = 10 };
	/* cassandra-stress's GAUSSIAN(1..1000001): mean mid-range, stdev (max-min)/2/3 */
	struct sm_stress_dist dg = { .kind = SM_STRESS_DIST_GAUSSIAN,
				     .min = 1,
				     .max = 1000001,
				     .mean = 500001,
				     .stdev = 1000000.0 / 2 / 3 };
	struct sm_stress_cursor u, g;
	struct sm_rand r;
	double sum = 0, sq = 0;
	unsigned i, hist[10] = { 0 };
	const unsigned n = 100000;
	uint64_t v;

	(void)state;
	sm_rand_seed(&r, 42);
	assert_int_equal(sm_stress_cursor_init(&u, &du, true, 0, 1), 0);
	for (i = 0; i < n; i++) {
		assert_true(sm_stress_cursor_next(&u, &r, &v));
		assert_true(v >= 1 && v <= 10);
		hist[v - 1]++;
	}
	for (i = 0; i < 10; i++)
		assert_true(hist[i] > n / 10 * 9 / 10 && hist[i] < n / 10 * 11 / 10);

	assert_int_equal(sm_stress_cursor_init(&g, &dg, true, 0, 1), 0);
	for (i = 0; i < n; i++) {
		assert_true(sm_stress_cursor_next(&g, &r, &v));
		assert_true(v >= 1 && v <= 1000001);
		sum += (double)v;
		sq += (double)v * (double)v;
	}
	assert_true(fabs(sum / n - 500001) < 3000);
	assert_true(fabs(sqrt(sq / n - (sum / n) * (sum / n)) - 166667) < 3000);
}

static void
test_rng_below_is_unbiased_and_bounded(void **state)
{
	struct sm_rand a, b;
	unsigned i;

	(void)state;
	sm_rand_seed(&a, 9);
	sm_rand_seed(&b, 9);
	for (i = 0; i < 1000; i++)
		assert_int_equal(sm_rand_next(&a), sm_rand_next(&b));
	for (i = 0; i < 10000; i++)
		assert_true(sm_rand_below(&a, 3) < 3);
	sm_rand_seed(&b, 10);
	assert_int_not_equal(sm_rand_next(&a), sm_rand_next(&b));
}

static void
test_pacing(void **state)
{
	struct sm_stress_pace p;

	(void)state;
	/* 1000 ops/s over 2 shards: each shard one op every 2 ms. */
	sm_stress_pace_init(&p, 1000, 2, 5000);
	assert_int_equal(sm_stress_pace_next(&p), 5000);
	assert_int_equal(sm_stress_pace_next(&p), 5000 + 2000000);
	assert_int_equal(sm_stress_pace_next(&p), 5000 + 4000000);
	sm_stress_pace_init(&p, 0, 2, 5000);
	assert_int_equal(sm_stress_pace_next(&p), 5000);
	assert_int_equal(sm_stress_pace_next(&p), 5000);
}

/* The engine asks when the next operation is due; asking does not count it. */
static void
test_pacing_next_due(void **state)
{
	struct sm_stress_pace p;

	(void)state;
	sm_stress_pace_init(&p, 1000, 2, 5000);
	assert_int_equal(sm_stress_pace_next_due(&p, 0), 5000);
	assert_int_equal(sm_stress_pace_next_due(&p, 99999999), 5000);
	assert_int_equal(sm_stress_pace_next(&p), 5000);
	assert_int_equal(sm_stress_pace_next_due(&p, 0), 5000 + 2000000);
	assert_int_equal(sm_stress_pace_next(&p), 5000 + 2000000);
	/* A schedule that fell behind stays behind: due times do not move. */
	assert_int_equal(sm_stress_pace_next_due(&p, 1000000000), 5000 + 4000000);
	/* Unpaced: every operation is due now, whatever the count. */
	sm_stress_pace_init(&p, 0, 2, 5000);
	assert_int_equal(sm_stress_pace_next_due(&p, 123), 123);
	sm_stress_pace_next(&p);
	assert_int_equal(sm_stress_pace_next_due(&p, 456), 456);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keys_deterministic_and_printable),
		cmocka_unit_test(test_values_depend_on_key_and_column),
		cmocka_unit_test(test_seq_shards_interleave_and_cover),
		cmocka_unit_test(test_uniform_and_gaussian_stay_in_range),
		cmocka_unit_test(test_rng_below_is_unbiased_and_bounded),
		cmocka_unit_test(test_pacing),
		cmocka_unit_test(test_pacing_next_due),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
