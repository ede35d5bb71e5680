/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The tablet map (sm_tablets.h): counts are powers of two, tablets are
 * contiguous ranges that cover the ring in order (ScyllaDB's
 * dht::compaction_group_of() and last_token_of_compaction_group()), token ->
 * tablet -> shard is round-robin, and a table of a tablets keyspace gets its
 * count from the catalog while others keep the vnode sharding.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sm_mem.h"
#include "sm_store.h"

static void
test_counts(void **state)
{
	(void)state;
	/* 'initial' rounded up to a power of two */
	assert_int_equal(sm_tablets_count(1, 4), 1);
	assert_int_equal(sm_tablets_count(5, 4), 8);
	assert_int_equal(sm_tablets_count(8, 4), 8);
	assert_int_equal(sm_tablets_count(9, 1), 16);
	/* none given: a small multiple of the shards, a power of two */
	assert_int_equal(sm_tablets_count(0, 1), SM_TABLETS_PER_SHARD);
	assert_int_equal(sm_tablets_count(0, 3), 16);
	assert_int_equal(sm_tablets_count(0, 0), 1);
	/* capped */
	assert_int_equal(sm_tablets_count(SM_TABLETS_MAX + 1, 1), SM_TABLETS_MAX);
	assert_int_equal(sm_tablets_count(0, 100000), SM_TABLETS_MAX);
}

static void
check_map(uint32_t count, unsigned nshards)
{
	struct sm_table t;
	int64_t first = INT64_MIN;
	uint32_t i;

	memset(&t, 0, sizeof(t));
	sm_table_set_tablets(&t, count);
	assert_int_equal(t.tablet_count, count);
	assert_int_equal(1u << t.tablet_bits, count);
	for (i = 0; i < count; i++) {
		int64_t last = sm_tablet_last_token(&t, i);

		/* (first, last]: both ends of the range map to the tablet, the next token not */
		assert_true(last > first || (i == 0 && count == 1));
		assert_int_equal(sm_tablet_of_token(&t, last), i);
		if (i > 0)
			assert_int_equal(sm_tablet_of_token(&t, first + 1), i);
		assert_int_equal(sm_table_shard_of_token(&t, last, nshards), i % nshards);
		if (i + 1 < count)
			assert_int_equal(sm_tablet_of_token(&t, last + 1), i + 1);
		first = last;
	}
	assert_int_equal(first, INT64_MAX);
	assert_int_equal(sm_tablet_of_token(&t, INT64_MIN), 0);
}

static void
test_ranges(void **state)
{
	static const uint32_t counts[] = { 1, 2, 4, 8, 64, 1024, SM_TABLETS_MAX };
	unsigned i, n;

	(void)state;
	for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		for (n = 1; n <= 5; n++)
			check_map(counts[i], n);
}

static void
test_known_tokens(void **state)
{
	struct sm_table t;

	(void)state;
	memset(&t, 0, sizeof(t));
	sm_table_set_tablets(&t, 8);
	/* what ScyllaDB's system.tablets shows for 8 tablets */
	assert_int_equal(sm_tablet_last_token(&t, 0), -6917529027641081857LL);
	assert_int_equal(sm_tablet_last_token(&t, 3), -1);
	assert_int_equal(sm_tablet_last_token(&t, 4), 2305843009213693951LL);
	assert_int_equal(sm_tablet_last_token(&t, 7), INT64_MAX);
	assert_int_equal(sm_tablet_of_token(&t, -1), 3);
	assert_int_equal(sm_tablet_of_token(&t, 0), 4);
	/* a vnode table keeps ScyllaDB's sharding */
	memset(&t, 0, sizeof(t));
	assert_int_equal(sm_table_shard_of_token(&t, 12345, 7),
			 sm_shard_of_token(12345, 7, SM_SHARDING_IGNORE_MSB));
}

static void
test_catalog(void **state)
{
	char k_class[] = "class", k_rf[] = "replication_factor", v_nts[] = "NetworkTopologyStrategy",
	     v_simple[] = "SimpleStrategy", v_one[] = "1";
	struct sm_option nts[] = { { k_class, v_nts }, { k_rf, v_one } };
	struct sm_option simple[] = { { k_class, v_simple }, { k_rf, v_one } };
	struct sm_column_def cols[] = { { "k", "int", SM_COL_PARTITION, false },
					{ "v", "int", SM_COL_REGULAR, false } };
	struct sm_keyspace_def kd = { .name = "tk", .replication = nts, .nreplication = 2,
				      .durable_writes = true, .tablets = true,
				      .initial_tablets = 5 };
	struct sm_table_def td = { .ks = "tk", .name = "t", .cols = cols, .ncols = 2 };
	struct sm_catalog *c0, *c1, *c2;
	const struct sm_table *t;
	char err[256];

	(void)state;
	c0 = sm_catalog_new();
	assert_non_null(c0);
	assert_int_equal(sm_catalog_create_keyspace(c0, &kd, false, &c1, err, sizeof(err)), 0);
	assert_true(sm_catalog_keyspace(c1, "tk")->tablets);
	assert_int_equal(sm_catalog_keyspace(c1, "tk")->initial_tablets, 5);
	assert_int_equal(sm_catalog_create_table(c1, &td, false, &c2, err, sizeof(err)), 0);
	t = sm_catalog_table(c2, "tk", "t");
	assert_int_equal(t->tablet_count, 8);
	sm_catalog_put(c2);
	sm_catalog_put(c1);

	/* ScyllaDB's locator/simple_strategy.cc validate_options() */
	kd.replication = simple;
	assert_int_equal(sm_catalog_create_keyspace(c0, &kd, false, &c1, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "SimpleStrategy doesn't support tablet replication");

	/* vnodes: no tablets */
	kd.tablets = false;
	assert_int_equal(sm_catalog_create_keyspace(c0, &kd, false, &c1, err, sizeof(err)), 0);
	assert_int_equal(sm_catalog_create_table(c1, &td, false, &c2, err, sizeof(err)), 0);
	assert_int_equal(sm_catalog_table(c2, "tk", "t")->tablet_count, 0);
	sm_catalog_put(c2);
	sm_catalog_put(c1);
	sm_catalog_put(c0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_ranges),
		cmocka_unit_test(test_known_tokens),
		cmocka_unit_test(test_catalog),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
