/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CQL secondary indexes in the catalog (sm_index.h): the view table each
 * index is (its name, key layout and types, as ScyllaDB's
 * create_view_for_index()), default names, IF [NOT] EXISTS, ScyllaDB's
 * refusals, DROP INDEX, and DROP TABLE taking the indexes along.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sm_core.h"
#include "sm_index.h"
#include "sm_store.h"

static struct sm_catalog *cat; /* the current snapshot of each test */
static char err[512];

/* Replace the current snapshot with @next. */
static void
advance(struct sm_catalog *next)
{
	assert_non_null(next);
	sm_catalog_put(cat);
	cat = next;
}

static int
setup(void **state)
{
	static char k_class[] = "class", v_class[] = "SimpleStrategy";
	static char k_rf[] = "replication_factor", v_rf[] = "1";
	const struct sm_option repl[] = { { k_class, v_class }, { k_rf, v_rf } };
	const struct sm_keyspace_def kd = { "ks", repl, 2, true, false };
	const struct sm_column_def t_cols[] = {
		{ "p", "int", SM_COL_PARTITION, false },	{ "c", "text", SM_COL_CLUSTERING, true },
		{ "s", "int", SM_COL_STATIC, false },		{ "v", "bigint", SM_COL_REGULAR, false },
		{ "m", "map<int, text>", SM_COL_REGULAR, false }, { "fl", "frozen<list<int>>", SM_COL_REGULAR, false },
		{ "d", "duration", SM_COL_REGULAR, false },
	};
	const struct sm_column_def u_cols[] = {
		{ "a", "int", SM_COL_PARTITION, false },
		{ "b", "int", SM_COL_PARTITION, false },
		{ "w", "int", SM_COL_REGULAR, false },
	};
	const struct sm_column_def n_cols[] = {
		{ "k", "int", SM_COL_PARTITION, false },
		{ "n", "counter", SM_COL_REGULAR, false },
	};
	const struct sm_table_def defs[] = {
		{ "ks", "t", t_cols, SM_ARRAY_SIZE(t_cols), NULL, 0, 0, false },
		{ "ks", "u", u_cols, SM_ARRAY_SIZE(u_cols), NULL, 0, 0, false },
		{ "ks", "n", n_cols, SM_ARRAY_SIZE(n_cols), NULL, 0, 0, false },
	};
	struct sm_catalog *next;
	unsigned i;

	(void)state;
	cat = sm_catalog_new();
	assert_non_null(cat);
	assert_int_equal(sm_catalog_create_keyspace(cat, &kd, false, &next, err, sizeof(err)), 0);
	advance(next);
	for (i = 0; i < SM_ARRAY_SIZE(defs); i++) {
		if (sm_catalog_create_table(cat, &defs[i], false, &next, err, sizeof(err)) != 0)
			fail_msg("create table: %s", err);
		advance(next);
	}
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	sm_catalog_put(cat);
	cat = NULL;
	return 0;
}

/* CREATE INDEX: its result, with the message in err. */
static int
create(const char *table, const char *name, const char *col, const char *fn, bool local,
       bool if_not_exists)
{
	const struct sm_index_def def = { "ks", table, name, col, fn, local, if_not_exists };
	struct sm_catalog *next = NULL;
	int ret;

	err[0] = '\0';
	ret = sm_catalog_create_index(cat, &def, &next, err, sizeof(err));
	if (ret == 0)
		advance(next);
	else
		assert_null(next);
	return ret;
}

static void
refused(const char *table, const char *col, const char *fn, bool local, const char *msg)
{
	assert_true(create(table, NULL, col, fn, local, false) < 0);
	if (strstr(err, msg) == NULL)
		fail_msg("CREATE INDEX ON %s(%s%s%s): '%s', want '%s'", table, fn ? fn : "", col,
			 fn ? ")" : "", err, msg);
}

/* The view's key columns, "name type" each, separated by ", ". */
static const char *
layout(const struct sm_table *v)
{
	static char buf[512];
	char type[128];
	size_t at = 0;
	unsigned i;

	buf[0] = '\0';
	for (i = 0; i < (unsigned)v->npk + v->nck; i++) {
		sm_type_name(v->cols[i].type, type, sizeof(type));
		at += (size_t)snprintf(buf + at, sizeof(buf) - at, "%s%s%s %s", i ? ", " : "",
				       i < v->npk ? "" : "ck:", v->cols[i].name, type);
	}
	return buf;
}

static void
test_global_layout(void **state)
{
	const struct sm_table *base, *v;
	struct sm_index_info info;

	(void)state;
	assert_int_equal(create("t", NULL, "v", NULL, false, false), 0);
	base = sm_catalog_table(cat, "ks", "t");
	v = sm_catalog_table(cat, "ks", "t_v_idx_index");
	assert_non_null(v);
	assert_true(sm_table_is_index(v));
	assert_false(sm_table_is_index(base));
	assert_string_equal(layout(v), "v bigint, ck:idx_token bigint, ck:p int, ck:c text");
	assert_true(v->cols[3].desc); /* the base's clustering order */
	assert_int_equal(sm_index_info(v, base, &info), 0);
	assert_string_equal(info.name, "t_v_idx");
	assert_ptr_equal(info.target, sm_table_column(base, "v"));
	assert_false(info.local);
	assert_ptr_equal(sm_index_nth(sm_catalog_keyspace(cat, "ks"), base, 0), v);
	assert_null(sm_index_nth(sm_catalog_keyspace(cat, "ks"), base, 1));
	assert_ptr_equal(sm_index_by_name(sm_catalog_keyspace(cat, "ks"), "t_v_idx"), v);
	/* a static column's index has no clustering columns of the base */
	assert_int_equal(create("t", "si", "s", NULL, false, false), 0);
	assert_string_equal(layout(sm_catalog_table(cat, "ks", "si_index")),
			    "s int, ck:idx_token bigint, ck:p int");
	/* a key column is not repeated */
	assert_int_equal(create("t", "ci", "c", NULL, false, false), 0);
	assert_string_equal(layout(sm_catalog_table(cat, "ks", "ci_index")),
			    "c text, ck:idx_token bigint, ck:p int");
	assert_int_equal(create("u", "ai", "a", NULL, false, false), 0);
	assert_string_equal(layout(sm_catalog_table(cat, "ks", "ai_index")),
			    "a int, ck:idx_token bigint, ck:b int");
}

static void
test_local_and_collections(void **state)
{
	(void)state;
	assert_int_equal(create("t", "lv", "v", NULL, true, false), 0);
	assert_string_equal(layout(sm_catalog_table(cat, "ks", "lv_index")),
			    "p int, ck:v bigint, ck:c text");
	assert_int_equal(create("t", "mk", "m", "keys", false, false), 0);
	assert_string_equal(layout(sm_catalog_table(cat, "ks", "mk_index")),
			    "coll_value int, ck:idx_token bigint, ck:p int, ck:c text");
	/* a plain target on a map indexes its values */
	assert_int_equal(create("t", "mv", "m", NULL, false, false), 0);
	assert_string_equal(layout(sm_catalog_table(cat, "ks", "mv_index")),
			    "coll_value text, ck:idx_token bigint, ck:p int, ck:c text");
	assert_true(create("t", "mv2", "m", "values", false, false) < 0);
	assert_non_null(strstr(err, "is a duplicate of existing index mv"));
	assert_int_equal(create("t", "me", "m", "entries", false, false), 0);
	assert_string_equal(layout(sm_catalog_table(cat, "ks", "me_index")),
			    "coll_value frozen<tuple<int, text>>, ck:idx_token bigint, ck:p int, "
			    "ck:c text");
	assert_int_equal(create("t", "ff", "fl", "full", false, false), 0);
	assert_string_equal(layout(sm_catalog_table(cat, "ks", "ff_index")),
			    "fl frozen<list<int>>, ck:idx_token bigint, ck:p int, ck:c text");
}

static void
test_names_and_if_not_exists(void **state)
{
	const struct sm_keyspace *k;

	(void)state;
	assert_int_equal(create("t", NULL, "v", NULL, false, false), 0);
	assert_true(create("t", NULL, "v", NULL, false, false) < 0);
	assert_string_equal(err, "Index t_v_idx_1 is a duplicate of existing index t_v_idx");
	assert_int_equal(create("t", NULL, "v", NULL, false, true), 1);
	assert_int_equal(create("t", "x", "s", NULL, false, false), 0);
	assert_true(create("t", "x", "s", NULL, false, false) < 0);
	assert_string_equal(err, "Index already exists");
	assert_int_equal(create("t", "x", "s", NULL, false, true), 1);
	/* IF NOT EXISTS does not hide a name taken by another index */
	assert_true(create("t", "x", "c", NULL, false, true) < 0);
	assert_string_equal(err, "Index already exists");
	k = sm_catalog_keyspace(cat, "ks");
	assert_null(sm_index_by_name(k, "t_v_idx_1"));
	/* DROP INDEX, then IF EXISTS */
	{
		struct sm_catalog *next;

		assert_int_equal(sm_catalog_drop_index(cat, "ks", "x", false, &next, err,
						       sizeof(err)),
				 0);
		advance(next);
		assert_null(sm_catalog_table(cat, "ks", "x_index"));
		assert_int_equal(sm_catalog_drop_index(cat, "ks", "x", true, &next, err,
						       sizeof(err)),
				 1);
		assert_int_equal(sm_catalog_drop_index(cat, "ks", "x", false, &next, err,
						       sizeof(err)),
				 -ENOENT);
		assert_string_equal(err, "Index 'x' could not be found in any of the tables of "
					 "keyspace 'ks'");
	}
}

static void
test_refusals(void **state)
{
	(void)state;
	refused("t", "nosuch", NULL, false, "No column definition found for column nosuch");
	refused("t", "d", NULL, false, "Secondary indexes are not supported on duration columns");
	refused("n", "n", NULL, false, "Secondary indexes are not supported on counter tables");
	refused("t", "p", NULL, false, "Cannot create secondary index on partition key column p");
	refused("t", "p", NULL, true, "Local indexing based on partition key column is not allowed");
	refused("t", "s", NULL, true, "Local indexes containing static columns are not supported.");
	refused("t", "m", NULL, true, "Local secondary index on collection column m is not implemented");
	refused("t", "fl", NULL, false, "Cannot create index on value of frozen collection column fl");
	refused("t", "fl", "keys", false, "Cannot create index on keys() of frozen collection column fl");
	refused("t", "v", "values", false,
		"Cannot create index on values() of column v; only non-frozen collections support "
		"values() indexes");
	refused("t", "v", "full", false, "full() indexes can only be created on frozen collections");
	refused("t", "m", "full", false, "full() indexes can only be created on frozen collections");
	assert_int_equal(create("nosuch", NULL, "v", NULL, false, false), -ENOENT);
	/* a view is no base of an index */
	assert_int_equal(create("t", NULL, "v", NULL, false, false), 0);
	refused("t_v_idx_index", "v", NULL, false, "not supported on materialized views");
}

static void
test_drop_table_takes_its_indexes(void **state)
{
	struct sm_catalog *next;

	(void)state;
	assert_int_equal(create("t", "a1", "v", NULL, false, false), 0);
	assert_int_equal(create("t", "a2", "s", NULL, false, false), 0);
	assert_int_equal(create("u", "b1", "w", NULL, false, false), 0);
	assert_int_equal(sm_catalog_drop_table_indexed(cat, "ks", "t", false, &next, err,
						       sizeof(err)),
			 0);
	advance(next);
	assert_null(sm_catalog_table(cat, "ks", "t"));
	assert_null(sm_catalog_table(cat, "ks", "a1_index"));
	assert_null(sm_catalog_table(cat, "ks", "a2_index"));
	assert_non_null(sm_catalog_table(cat, "ks", "b1_index"));
	assert_int_equal(sm_catalog_drop_table_indexed(cat, "ks", "t", true, &next, err,
						       sizeof(err)),
			 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_global_layout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_local_and_collections, setup, teardown),
		cmocka_unit_test_setup_teardown(test_names_and_if_not_exists, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_drop_table_takes_its_indexes, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
