/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cassandra-stress's distributions (sm_stress_dist.h) and user profiles
 * (sm_stress_profile.h): parsing, the shapes of the samples, the CREATE
 * TABLE scan, bind markers, ops(...) and -insert.
 */

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sm_stress_dist.h"
#include "sm_stress_profile.h"

static struct sm_stress_xdist
dist(const char *spec)
{
	struct sm_stress_xdist d;
	char err[300];

	if (sm_stress_xdist_parse(spec, &d, err, sizeof(err)) != 0)
		fail_msg("%s: %s", spec, err);
	return d;
}

static void
test_dist_parse_every_kind(void **state)
{
	struct sm_stress_xdist d;
	char err[300];

	(void)state;
	d = dist("FIXED(34)");
	assert_int_equal(d.kind, SM_STRESS_XD_FIXED);
	assert_int_equal(d.min, 34);
	d = dist("uniform(1..10k)");
	assert_int_equal(d.kind, SM_STRESS_XD_UNIFORM);
	assert_int_equal(d.max, 10000);
	d = dist("gaussian(1..1000,5)");
	assert_true(fabs(d.stdev - 999.0 / 2 / 5) < 1e-9);
	d = dist("NORMAL(0..100,20,3)");
	assert_true(d.mean == 20 && d.stdev == 3);
	d = dist("exp(1..100)");
	assert_int_equal(d.kind, SM_STRESS_XD_EXP);
	/* mean = span / (ln(span) / 2), OptionDistribution's ExpFactory */
	assert_true(fabs(d.mean - 99 / (0.5 * log(99))) < 1e-9);
	d = dist("extreme(1..1000,1.5)");
	assert_int_equal(d.kind, SM_STRESS_XD_EXTREME);
	assert_true(fabs(d.scale - 999 / pow(0.5 * log(999), 1 / 1.5)) < 1e-9);
	assert_int_equal(dist("weibull(1..1000,2)").kind, SM_STRESS_XD_EXTREME);
	d = dist("QEXTR(1..1000,2,10)");
	assert_int_equal(d.kind, SM_STRESS_XD_QEXTREME);
	assert_int_equal(d.quantas, 10);
	d = dist("~exp(1..10)");
	assert_true(d.inverted);
	assert_int_equal(dist("seq(1..5)").kind, SM_STRESS_XD_SEQ);
	/* min == max is FIXED, as cassandra-stress's factories make it */
	assert_int_equal(dist("uniform(7..7)").kind, SM_STRESS_XD_FIXED);
	assert_int_equal(sm_stress_xdist_parse("pareto(1..3)", &d, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "unknown distribution"));
	assert_int_equal(sm_stress_xdist_parse("uniform(9..1)", &d, err, sizeof(err)), -EINVAL);
	assert_int_equal(sm_stress_xdist_parse("uniform(1-9)", &d, err, sizeof(err)), -EINVAL);
	assert_int_equal(sm_stress_xdist_parse("extreme(1..9)", &d, err, sizeof(err)), -EINVAL);
	assert_int_equal(sm_stress_xdist_parse("uniform", &d, err, sizeof(err)), -EINVAL);
	assert_int_equal(sm_stress_xdist_parse("fixed(1,2,3,4,5)", &d, err, sizeof(err)),
			 -EINVAL);
}

/* Sample @n values of @spec: all in range; their mean, and the share at the low end. */
static double
sample(const char *spec, unsigned n, double *low_share)
{
	struct sm_stress_xdist d = dist(spec);
	struct sm_rand r;
	double sum = 0;
	unsigned i, low = 0;

	sm_rand_seed(&r, 42);
	for (i = 0; i < n; i++) {
		int64_t v = sm_stress_xdist_next(&d, &r, i);

		assert_true(v >= d.min && v <= d.max);
		sum += (double)v;
		low += v < d.min + (d.max - d.min) / 10;
	}
	*low_share = (double)low / n;
	return sum / n;
}

static void
test_dist_shapes(void **state)
{
	double low, mean;

	(void)state;
	mean = sample("uniform(1..1000)", 100000, &low);
	assert_true(fabs(mean - 500.5) < 5 && fabs(low - 0.1) < 0.01);
	mean = sample("gaussian(1..1000)", 100000, &low);
	assert_true(fabs(mean - 500.5) < 5 && low < 0.01);
	/* EXP and EXTREME favour the low end; ~ mirrors them to the high end */
	mean = sample("exp(1..1000)", 100000, &low);
	/* P(offset < 100) of an exponential of mean 999 / (ln(999) / 2) */
	assert_true(fabs(low - (1 - exp(-100 / (999 / (0.5 * log(999)))))) < 0.01);
	assert_true(mean < 400);
	mean = sample("~exp(1..1000)", 100000, &low);
	assert_true(low < 0.05 && mean > 600);
	/* EXTREME: Weibull(1.5, scale): P(offset < 100) = 1 - exp(-(100 / scale)^1.5) */
	mean = sample("extreme(1..1000,1.5)", 100000, &low);
	assert_true(fabs(low - (1 - exp(-pow(100 / dist("extreme(1..1000,1.5)").scale, 1.5)))) <
		    0.01);
	assert_true(mean > 300 && mean < 500);
	/* QEXTREME: the same quanta, uniform inside each: the same low share */
	mean = sample("qextreme(1..1000,1.5,10)", 100000, &low);
	assert_true(fabs(low - (1 - exp(-pow(100 / dist("extreme(1..1000,1.5)").scale, 1.5)))) <
		    0.02);
	mean = sample("fixed(5)", 10, &low);
	assert_true(mean == 5);
}

static void
test_dist_at_is_deterministic_and_seq_counts(void **state)
{
	struct sm_stress_xdist d = dist("uniform(1..1000000)"), s = dist("seq(10..12)");
	struct sm_rand r;

	(void)state;
	assert_int_equal(sm_stress_xdist_at(&d, 99), sm_stress_xdist_at(&d, 99));
	assert_int_not_equal(sm_stress_xdist_at(&d, 99), sm_stress_xdist_at(&d, 100));
	sm_rand_seed(&r, 1);
	assert_int_equal(sm_stress_xdist_next(&s, &r, 0), 10);
	assert_int_equal(sm_stress_xdist_next(&s, &r, 2), 12);
	assert_int_equal(sm_stress_xdist_next(&s, &r, 3), 10);
}

static void
test_ratio(void **state)
{
	struct sm_stress_ratio rd;
	struct sm_rand r;
	char err[300];
	unsigned i;

	(void)state;
	assert_int_equal(sm_stress_ratio_parse("uniform(1..10)/10", &rd, err, sizeof(err)), 0);
	sm_rand_seed(&r, 3);
	for (i = 0; i < 1000; i++) {
		double v = sm_stress_ratio_next(&rd, &r);

		assert_true(v >= 0.1 && v <= 1.0);
	}
	assert_int_equal(sm_stress_ratio_parse("uniform(1..10)", &rd, err, sizeof(err)), -EINVAL);
	assert_int_equal(sm_stress_ratio_parse("fixed(1)/0", &rd, err, sizeof(err)), -EINVAL);
}

static const char profile_text[] =
	"specname: blog\n"
	"keyspace: stresscql\n"
	"keyspace_definition: |\n"
	"  CREATE KEYSPACE stresscql WITH replication = {'class': 'SimpleStrategy', "
	"'replication_factor': 1};\n"
	"table: posts\n"
	"table_definition: |\n"
	"  CREATE TABLE posts (\n"
	"    body text,\n"
	"    \"Domain\" text,\n"
	"    tags set<text>,\n"
	"    ord int,\n"
	"    published timeuuid,\n"
	"    meta map<text, frozen<list<int>>>,\n"
	"    owner text static,\n"
	"    PRIMARY KEY ((\"Domain\", ord), published)\n"
	"  ) WITH CLUSTERING ORDER BY (published DESC)\n"
	"columnspec:\n"
	"  - name: Domain\n"
	"    size: gaussian(5..100)\n"
	"    population: uniform(1..10M)\n"
	"  - name: published\n"
	"    cluster: fixed(1000)\n"
	"  - name: body\n"
	"    size: ~exp(10..1000)\n"
	"insert:\n"
	"  partitions: uniform(1..5)\n"
	"  select: uniform(1..10)/10\n"
	"  batchtype: UNLOGGED\n"
	"  condition: IF body = NULL\n"
	"queries:\n"
	"  Single:\n"
	"    cql: select * from posts where \"Domain\" = ? and ord = ? and published = ? LIMIT 1\n"
	"    fields: samerow\n"
	"  range:\n"
	"    cql: SELECT body FROM posts WHERE token(\"Domain\", ord) > ? AND published >= ?\n"
	"  upd:\n"
	"    cql: update posts set tags = tags + ? where \"Domain\" = ? and ord = ? and "
	"published = ? if body = 'x'\n"
	"    serialConsistencyLevel: LOCAL_SERIAL\n"
	"  ins:\n"
	"    cql: insert into posts (\"Domain\", ord, published, body) values (?, ?, ?, ?)\n"
	"token_range_queries:\n"
	"  scan:\n"
	"    columns: body\n";

static void
parse_ok(struct sm_stress_profile *p, const char *text)
{
	char err[512];

	if (sm_stress_profile_parse("t.yaml", text, strlen(text), p, err, sizeof(err)) != 0)
		fail_msg("%s", err);
}

static void
test_profile_parse(void **state)
{
	struct sm_stress_profile p;
	const struct sm_stress_pquery *q;

	(void)state;
	parse_ok(&p, profile_text);
	assert_string_equal(p.keyspace, "stresscql");
	assert_string_equal(p.table, "posts");
	assert_int_equal(p.ncols, 7);
	assert_int_equal(p.npk, 2);
	assert_int_equal(p.nck, 1);
	/* key columns first in key order, then the others in table order */
	assert_string_equal(p.cols[0].name, "Domain");
	assert_true(p.cols[0].quoted);
	assert_string_equal(p.cols[1].name, "ord");
	assert_string_equal(p.cols[2].name, "published");
	assert_int_equal(p.cols[2].role, SM_STRESS_COL_CLUSTERING);
	assert_string_equal(p.cols[3].name, "body");
	assert_int_equal(p.cols[4].type->kind, SM_TYPE_SET);
	assert_int_equal(p.cols[5].type->kind, SM_TYPE_MAP);
	assert_int_equal(p.cols[6].role, SM_STRESS_COL_STATIC);
	assert_int_equal(p.cols[0].population.max, 10000000);
	assert_int_equal(p.cols[2].cluster.min, 1000);
	assert_true(p.cols[3].size.inverted);
	/* defaults: size UNIFORM(4..8), population UNIFORM(1..100B), cluster FIXED(1) */
	assert_int_equal(p.cols[1].size.min, 4);
	assert_int_equal(p.cols[1].population.max, 100000000000ll);
	assert_int_equal(p.cols[3].cluster.kind, SM_STRESS_XD_FIXED);
	assert_int_equal(p.insert.partitions.max, 5);
	assert_int_equal(p.insert.batch, SM_STRESS_BATCH_UNLOGGED);
	assert_string_equal(p.insert.condition, "IF body = NULL");
	assert_int_equal(p.nqueries, 4);
	assert_int_equal(p.ntrq, 1);
	assert_string_equal(p.trq[0].columns, "body");

	q = &p.queries[sm_stress_profile_query(&p, "single")];
	assert_string_equal(q->name, "single"); /* lower case, as cassandra-stress reports it */
	assert_true(q->samerow && q->select && q->binds_all_pk && !q->lwt);
	assert_int_equal(q->nbind, 3);
	assert_int_equal(q->bind[0].col, 0);
	assert_int_equal(q->bind[2].col, 2);

	q = &p.queries[sm_stress_profile_query(&p, "range")];
	assert_false(q->samerow); /* multirow is the default */
	assert_int_equal(q->nbind, 2);
	assert_int_equal(q->bind[0].kind, SM_STRESS_BIND_TOKEN);
	assert_int_equal(q->bind[1].col, 2);
	assert_false(q->binds_all_pk);

	q = &p.queries[sm_stress_profile_query(&p, "upd")];
	assert_true(q->lwt && !q->select);
	assert_int_equal(q->serial_cl, 9);
	assert_int_equal(q->nbind, 4);
	assert_int_equal(q->bind[0].col, 4); /* tags = tags + ? */

	q = &p.queries[sm_stress_profile_query(&p, "ins")];
	assert_int_equal(q->nbind, 4);
	assert_int_equal(q->bind[3].col, 3);
	assert_int_equal(sm_stress_profile_query(&p, "nosuch"), -1);
	sm_stress_profile_free(&p);
}

static void
test_profile_ops_and_insert_option(void **state)
{
	struct sm_stress_profile p;
	double w[8];
	int what[8];
	char err[300];

	(void)state;
	parse_ok(&p, profile_text);
	assert_int_equal(sm_stress_profile_ops(&p, "insert=1,single=3,RANGE=0.5", w, what, 8,
					       err, sizeof(err)),
			 3);
	assert_int_equal(what[0], -1);
	assert_int_equal(what[1], sm_stress_profile_query(&p, "single"));
	assert_true(w[1] == 3 && w[2] == 0.5);
	assert_int_equal(sm_stress_profile_ops(&p, "scan=1,insert=2", w, what, 8, err,
					       sizeof(err)),
			 2);
	assert_int_equal(what[0], SM_STRESS_PROFILE_TRQ(0));
	assert_string_equal(sm_stress_profile_op_name(&p, what[0]), "scan");
	assert_string_equal(sm_stress_profile_op_name(&p, what[1]), "insert");
	assert_int_equal(p.trq[0].page_size, 5000);
	assert_int_equal(sm_stress_profile_ops(&p, "single=1,single=2", w, what, 8, err,
					       sizeof(err)),
			 -EINVAL);
	assert_int_equal(sm_stress_profile_ops(&p, "nosuch=1", w, what, 8, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(sm_stress_profile_ops(&p, "insert=x", w, what, 8, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(sm_stress_profile_insert_option(&p, "partitions=fixed(3)", err,
							 sizeof(err)),
			 0);
	assert_int_equal(p.insert.partitions.min, 3);
	assert_int_equal(sm_stress_profile_insert_option(&p, "batchtype=LOGGED", err, sizeof(err)),
			 0);
	assert_int_equal(p.insert.batch, SM_STRESS_BATCH_LOGGED);
	assert_int_equal(sm_stress_profile_insert_option(&p, "visits=fixed(2)", err, sizeof(err)),
			 -EINVAL);
	sm_stress_profile_free(&p);
}

static const char udt_text[] =
	"keyspace: k\n"
	"keyspace_definition: |\n"
	"  CREATE KEYSPACE k WITH replication = {'class': 'SimpleStrategy', 'x': 'a;b'};\n"
	"  CREATE TYPE IF NOT EXISTS addr (street text, zip int, tags frozen<set<text>>);\n"
	"extra_definitions:\n"
	"  - CREATE INDEX ON t (name)\n"
	"  - CREATE TYPE k.phone (kind text, number bigint, home frozen<addr>)\n"
	"table: t\n"
	"table_definition: CREATE TABLE t (id int PRIMARY KEY, name text, a addr, "
	"p list<frozen<phone>>, tu frozen<tuple<int, addr>>)\n";

static void
test_profile_user_types(void **state)
{
	struct sm_stress_profile p;
	const struct sm_type *t;

	(void)state;
	parse_ok(&p, udt_text);
	assert_int_equal(p.nudts, 2);
	assert_string_equal(p.udts[0]->name, "addr");
	assert_int_equal(p.udts[0]->nfields, 3);
	assert_int_equal(p.udts[1]->nfields, 3);
	assert_int_equal(p.udts[1]->fields[2]->kind, SM_TYPE_UDT);
	/* the ; inside quotes does not split the keyspace's statement */
	assert_non_null(strstr(p.keyspace_definition, "'a;b'"));
	assert_int_equal(p.n_ks_more, 1);
	/* the keyspace's rest and the types, then the table, then the other definitions */
	assert_non_null(strstr(sm_stress_profile_setup_statement(&p, 0), "TYPE IF NOT EXISTS addr"));
	assert_non_null(strstr(sm_stress_profile_setup_statement(&p, 1), "k.phone"));
	assert_ptr_equal(sm_stress_profile_setup_statement(&p, 2), p.table_definition);
	assert_non_null(strstr(sm_stress_profile_setup_statement(&p, 3), "CREATE INDEX"));
	assert_null(sm_stress_profile_setup_statement(&p, 4));
	t = p.cols[sm_stress_profile_col(&p, "a")].type;
	assert_true(t->kind == SM_TYPE_UDT && !t->frozen);
	t = p.cols[sm_stress_profile_col(&p, "p")].type;
	assert_true(t->kind == SM_TYPE_LIST && t->elem->kind == SM_TYPE_UDT && t->elem->frozen);
	t = p.cols[sm_stress_profile_col(&p, "tu")].type;
	assert_true(t->kind == SM_TYPE_TUPLE && t->fields[1]->kind == SM_TYPE_UDT);
	sm_stress_profile_free(&p);
}

static void
refused(const char *text, const char *why)
{
	struct sm_stress_profile p;
	char err[512];

	assert_int_equal(sm_stress_profile_parse("t.yaml", text, strlen(text), &p, err,
						 sizeof(err)),
			 -EINVAL);
	if (strstr(err, why) == NULL)
		fail_msg("expected '%s' in: %s", why, err);
}

static void
test_profile_errors(void **state)
{
	(void)state;
	refused("keyspace: [", "not valid YAML");
	refused("- a\n", "a YAML mapping");
	refused("keyspace: k\ntable: t\n", "no table_definition");
	refused("keyspace: k\ntable: t\ntable_definition: CREATE TABLE t (a int)\n",
		"no PRIMARY KEY");
	refused("keyspace: k\ntable: t\ntable_definition: CREATE TABLE t (a frozen<addr> "
		"PRIMARY KEY)\n",
		"needs its CREATE TYPE");
	refused("keyspace: k\ntable: t\ntable_definition: CREATE TABLE t (a int PRIMARY KEY)\n"
		"extra_definitions:\n  - CREATE TYPE u (x int, x text)\n",
		"CREATE TYPE u");
	refused("keyspace: k\ntable: t\ntable_definition: CREATE TABLE t (a int PRIMARY KEY)\n"
		"extra_definitions:\n  - CREATE TYPE u (x nosuch)\n",
		"field x");
	refused("keyspace: k\ntable: u\ntable_definition: CREATE TABLE t (a int PRIMARY KEY)\n",
		"creates 't'");
	refused("keyspace: k\ntable: t\ntable_definition: CREATE TABLE t (a int PRIMARY KEY, "
		"PRIMARY KEY (a))\n",
		"more than one PRIMARY KEY");
	refused("keyspace: k\ntable: t\ntable_definition: CREATE TABLE t (a int PRIMARY KEY)\n"
		"bogus: 1\n",
		"unknown key 'bogus'");
	refused("keyspace: k\ntable: t\ntable_definition: CREATE TABLE t (a int PRIMARY KEY)\n"
		"insert:\n  batchtype: COUNTER\n",
		"LOGGED or UNLOGGED");
	refused("keyspace: k\ntable: t\ntable_definition: CREATE TABLE t (a int PRIMARY KEY)\n"
		"insert:\n  visits: fixed(1)\n",
		"unrecognised option 'visits'");
	refused("keyspace: k\ntable: t\ntable_definition: CREATE TABLE t (a int PRIMARY KEY)\n"
		"queries:\n  q:\n    cql: select * from t where b = ?\n",
		"not a column of t");
	refused("keyspace: k\ntable: t\ntable_definition: CREATE TABLE t (a int PRIMARY KEY)\n"
		"queries:\n  q:\n    fields: samerow\n",
		"has no cql");
	refused("keyspace: k\ntable: t\ntable_definition: CREATE TABLE t (a int PRIMARY KEY)\n"
		"queries:\n  q:\n    cql: select * from t where a = ?\n    fields: onerow\n",
		"samerow or multirow");
	refused("keyspace: k\ntable: t\ntable_definition: CREATE TABLE t (a int PRIMARY KEY)\n"
		"columnspec:\n  - name: a\n    cluster: uniform(1..)\n",
		"cluster");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dist_parse_every_kind),
		cmocka_unit_test(test_dist_shapes),
		cmocka_unit_test(test_dist_at_is_deterministic_and_seq_counts),
		cmocka_unit_test(test_ratio),
		cmocka_unit_test(test_profile_parse),
		cmocka_unit_test(test_profile_ops_and_insert_option),
		cmocka_unit_test(test_profile_errors),
		cmocka_unit_test(test_profile_user_types),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
