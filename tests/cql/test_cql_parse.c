/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sm_core.h"
#include "sm_cql_parse.h"

static char errbuf[256];

/*
 * Parse @text from an exactly-sized heap copy (no NUL), so that ASan catches
 * any read past the length.
 */
static int
parse(const char *text, struct sm_cql_stmt **out)
{
	size_t n = strlen(text);
	char *copy = malloc(n ? n : 1);
	int rc;

	assert_non_null(copy);
	memcpy(copy, text, n);
	rc = sm_cql_parse(copy, n, out, errbuf, sizeof(errbuf));
	free(copy);
	return rc;
}

static struct sm_cql_stmt *
ok(const char *text)
{
	struct sm_cql_stmt *s = NULL;
	int rc = parse(text, &s);

	if (rc != 0)
		fail_msg("parse of <%s> failed: %d %s", text, rc, errbuf);
	assert_non_null(s);
	return s;
}

static void
bad(const char *text, int want_rc, const char *want_msg)
{
	struct sm_cql_stmt *s = (struct sm_cql_stmt *)1;
	int rc = parse(text, &s);

	if (rc != want_rc)
		fail_msg("<%s>: rc %d (%s), want %d", text, rc, errbuf, want_rc);
	assert_null(s);
	if (want_msg != NULL && strstr(errbuf, want_msg) == NULL)
		fail_msg("<%s>: message '%s' lacks '%s'", text, errbuf, want_msg);
}

static void
check_all_ok(const char *const *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		sm_cql_stmt_free(ok(v[i]));
}

/* ---- DDL ---- */

static void
test_use(void **state)
{
	struct sm_cql_stmt *s;

	(void)state;
	s = ok("USE ks");
	assert_int_equal(s->kind, SM_CQL_USE);
	assert_string_equal(s->use.ks, "ks");
	sm_cql_stmt_free(s);
	s = ok("use \"MyKs\";");
	assert_string_equal(s->use.ks, "MyKs");
	assert_int_equal(s->src.len, 10); /* without the ';' */
	sm_cql_stmt_free(s);
	s = ok("USE \"a\"\"b\"");
	assert_string_equal(s->use.ks, "a\"b");
	sm_cql_stmt_free(s);
}

static void
test_create_keyspace(void **state)
{
	struct sm_cql_stmt *s;
	struct sm_cql_create_keyspace *k;

	(void)state;
	s = ok("CREATE KEYSPACE IF NOT EXISTS scylla_bench WITH REPLICATION = "
	       "{'class':'SimpleStrategy','replication_factor':3}");
	k = &s->create_keyspace;
	assert_int_equal(s->kind, SM_CQL_CREATE_KEYSPACE);
	assert_true(k->if_not_exists);
	assert_string_equal(k->ks, "scylla_bench");
	assert_int_equal(k->nreplication, 2);
	assert_string_equal(k->replication[0].key, "class");
	assert_string_equal(k->replication[0].value, "SimpleStrategy");
	assert_string_equal(k->replication[1].value, "3");
	assert_true(k->durable_writes);
	sm_cql_stmt_free(s);

	s = ok("CREATE KEYSPACE IF NOT EXISTS ks WITH replication={'class': "
	       "'NetworkTopologyStrategy'}");
	assert_int_equal(s->create_keyspace.nreplication, 1);
	sm_cql_stmt_free(s);

	s = ok("create keyspace ks with replication = {'class': 'NetworkTopologyStrategy', "
	       "'dc1': 3} and durable_writes = false;");
	k = &s->create_keyspace;
	assert_false(k->durable_writes);
	assert_int_equal(k->nprops, 2);
	assert_string_equal(k->props[0].value, "{'class': 'NetworkTopologyStrategy', 'dc1': 3}");
	sm_cql_stmt_free(s);

	bad("CREATE KEYSPACE ks WITH durable_writes = true", -EINVAL, "replication");
	bad("CREATE KEYSPACE ks WITH replication = {'class': 'x'} AND durable_writes = 7", -EINVAL,
	    "durable_writes");
	bad("CREATE KEYSPACE ks WITH replication = {'class': 'x'} AND replication = {}", -EINVAL,
	    "Multiple");
	s = ok("DROP KEYSPACE IF EXISTS ks");
	assert_int_equal(s->kind, SM_CQL_DROP_KEYSPACE);
	assert_true(s->drop_keyspace.if_exists);
	sm_cql_stmt_free(s);
	s = ok("DROP KEYSPACE ks");
	assert_false(s->drop_keyspace.if_exists);
	sm_cql_stmt_free(s);
}

static void
test_create_table(void **state)
{
	struct sm_cql_stmt *s;
	struct sm_cql_create_table *t;

	(void)state;
	s = ok("CREATE TABLE ks.cf (\"KEY\" blob PRIMARY KEY, \"C0\" blob, \"C1\" blob, "
	       "\"C2\" blob, \"C3\" blob, \"C4\" blob)");
	t = &s->create_table;
	assert_int_equal(s->kind, SM_CQL_CREATE_TABLE);
	assert_string_equal(t->table.ks, "ks");
	assert_string_equal(t->table.name, "cf");
	assert_int_equal(t->ncols, 6);
	assert_string_equal(t->cols[0].name, "KEY");
	assert_string_equal(t->cols[0].type, "blob");
	assert_int_equal(t->npk, 1);
	assert_string_equal(t->pk[0], "KEY");
	assert_int_equal(t->nck, 0);
	sm_cql_stmt_free(s);

	s = ok("CREATE TABLE IF NOT EXISTS scylla_bench.test (pk bigint, ck bigint, v blob, "
	       "PRIMARY KEY(pk, ck)) WITH compression = { }");
	t = &s->create_table;
	assert_true(t->if_not_exists);
	assert_int_equal(t->npk, 1);
	assert_int_equal(t->nck, 1);
	assert_string_equal(t->ck[0], "ck");
	assert_int_equal(t->nprops, 1);
	assert_string_equal(t->props[0].key, "compression");
	assert_string_equal(t->props[0].value, "{ }");
	assert_non_null(t->props[0].map);
	assert_int_equal(t->props[0].nmap, 0);
	sm_cql_stmt_free(s);

	s = ok("CREATE TABLE t (a int, b text, c timeuuid, d double, s int static, "
	       "m map<text, int>, l list<frozen<set<bigint>>>, tu frozen<tuple<int, text>>, "
	       "PRIMARY KEY ((a, b), c, d)) WITH CLUSTERING ORDER BY (c DESC, d ASC) AND "
	       "default_time_to_live = 3600 AND compaction = {'class': "
	       "'SizeTieredCompactionStrategy'} AND comment = 'it''s' AND COMPACT STORAGE");
	t = &s->create_table;
	assert_int_equal(t->npk, 2);
	assert_string_equal(t->pk[1], "b");
	assert_int_equal(t->nck, 2);
	assert_true(t->cols[4].is_static);
	assert_string_equal(t->cols[5].type, "map<text, int>");
	assert_string_equal(t->cols[6].type, "list<frozen<set<bigint>>>");
	assert_string_equal(t->cols[7].type, "frozen<tuple<int, text>>");
	assert_int_equal(t->nclustering_order, 2);
	assert_true(t->clustering_order[0].desc);
	assert_false(t->clustering_order[1].desc);
	assert_true(t->has_default_ttl);
	assert_int_equal(t->default_ttl, 3600);
	assert_true(t->compact_storage);
	assert_int_equal(t->nprops, 3);
	assert_string_equal(t->props[1].map[0].value, "SizeTieredCompactionStrategy");
	assert_string_equal(t->props[2].value, "it's");
	sm_cql_stmt_free(s);

	s = ok("CREATE TABLE test_counters (pk bigint, ck bigint, c1 counter, c2 counter, "
	       "PRIMARY KEY (pk, ck))");
	assert_string_equal(s->create_table.cols[2].type, "counter");
	sm_cql_stmt_free(s);
	s = ok("CREATE TABLE IF NOT EXISTS ks.cf0 (pk blob primary key, c0 blob, c1 blob)");
	sm_cql_stmt_free(s);

	bad("CREATE TABLE t (a int PRIMARY KEY, b int, PRIMARY KEY (b))", -EINVAL,
	    "Multiple PRIMARY KEYs");
	bad("CREATE TABLE t (a int, b int)", -EINVAL, "No PRIMARY KEY");
	/* a bad default_time_to_live is the server's to refuse (cql_table_props()) */
	s = ok("CREATE TABLE t (a int PRIMARY KEY) WITH default_time_to_live = -1");
	assert_false(s->create_table.has_default_ttl);
	sm_cql_stmt_free(s);
	bad("CREATE TABLE t (a int PRIMARY KEY) WITH compaction = {'class': 'x', 'class': 'y'}",
	    -EBADMSG, "Multiple definition for property class");
	bad("CREATE TABLE t (a int PRIMARY KEY) WITH caching = {'keys': ALL}", -EBADMSG,
	    "Invalid property value");

	s = ok("DROP TABLE IF EXISTS ks.t");
	assert_int_equal(s->kind, SM_CQL_DROP_TABLE);
	assert_true(s->drop_table.if_exists);
	sm_cql_stmt_free(s);
	s = ok("TRUNCATE TABLE scylla_bench.test");
	assert_int_equal(s->kind, SM_CQL_TRUNCATE);
	assert_string_equal(s->truncate.table.name, "test");
	sm_cql_stmt_free(s);
	s = ok("truncate t");
	assert_null(s->truncate.table.ks);
	sm_cql_stmt_free(s);
	s = ok("ALTER TABLE t ADD x int");
	assert_int_equal(s->kind, SM_CQL_ALTER_TABLE);
	assert_int_equal(s->alter_table.kind, SM_CQL_ALTER_ADD);
	assert_int_equal(s->alter_table.ncols, 1);
	sm_cql_stmt_free(s);
	s = ok("ALTER TABLE t ADD (x int, y set<text> static)");
	assert_int_equal(s->alter_table.ncols, 2);
	assert_true(s->alter_table.cols[1].is_static);
	sm_cql_stmt_free(s);
	s = ok("ALTER TABLE ks.t DROP (x, y) USING TIMESTAMP 20000");
	assert_int_equal(s->alter_table.kind, SM_CQL_ALTER_DROP);
	assert_int_equal(s->alter_table.ncols, 2);
	assert_string_equal(s->alter_table.cols[1].name, "y");
	assert_non_null(s->alter_table.timestamp);
	sm_cql_stmt_free(s);
	s = ok("ALTER TABLE t ALTER x TYPE blob");
	assert_int_equal(s->alter_table.kind, SM_CQL_ALTER_TYPE_OF);
	assert_string_equal(s->alter_table.cols[0].type, "blob");
	sm_cql_stmt_free(s);
	s = ok("ALTER TABLE t RENAME a TO b AND c TO d");
	assert_int_equal(s->alter_table.kind, SM_CQL_ALTER_RENAME);
	assert_int_equal(s->alter_table.nrenames, 2);
	assert_string_equal(s->alter_table.to[1], "d");
	sm_cql_stmt_free(s);
	s = ok("ALTER TABLE t WITH default_time_to_live = 10 AND comment = 'c'");
	assert_int_equal(s->alter_table.kind, SM_CQL_ALTER_WITH);
	assert_int_equal(s->alter_table.nprops, 2);
	assert_true(s->alter_table.has_default_ttl);
	assert_int_equal(s->alter_table.default_ttl, 10);
	sm_cql_stmt_free(s);
	s = ok("ALTER KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', "
	       "'replication_factor': 2} AND durable_writes = false");
	assert_int_equal(s->kind, SM_CQL_ALTER_KEYSPACE);
	assert_int_equal(s->alter_keyspace.nreplication, 2);
	assert_true(s->alter_keyspace.has_durable_writes);
	assert_false(s->alter_keyspace.durable_writes);
	sm_cql_stmt_free(s);
	bad("ALTER KEYSPACE ks WITH WITH durable_writes = true", -EBADMSG, NULL);
	bad("ALTER TABLE t FOO x", -EBADMSG, NULL);
}

/* ---- SELECT ---- */

static void
test_select(void **state)
{
	struct sm_cql_stmt *s;
	struct sm_cql_select *q;

	(void)state;
	s = ok("SELECT m[1], m[1..2], m[..'b'], s[3..] FROM t");
	q = &s->select;
	assert_true(q->sels[0].subscript);
	assert_false(q->sels[0].slice);
	assert_non_null(q->sels[0].sub);
	assert_true(q->sels[1].slice);
	assert_non_null(q->sels[1].sub_to);
	assert_null(q->sels[2].sub);
	assert_non_null(q->sels[2].sub_to);
	assert_null(q->sels[3].sub_to);
	sm_cql_stmt_free(s);
	bad("SELECT m[] FROM t", -EBADMSG, NULL);
	s = ok("SELECT m['1']['a'], u.a[1].b FROM t");
	q = &s->select;
	assert_int_equal(q->sels[0].kind, SM_CQL_SEL_POSTFIX);
	assert_true(q->sels[0].subscript);
	assert_int_equal(q->sels[0].args[0].kind, SM_CQL_SEL_COLUMN);
	assert_true(q->sels[0].args[0].subscript);
	assert_int_equal(q->sels[1].kind, SM_CQL_SEL_POSTFIX);
	assert_string_equal(q->sels[1].fields[0], "b");
	assert_int_equal(q->sels[1].args[0].kind, SM_CQL_SEL_POSTFIX);
	assert_true(q->sels[1].args[0].subscript);
	assert_int_equal(q->sels[1].args[0].args[0].nfields, 1);
	sm_cql_stmt_free(s);
	s = ok("select \"C0\", \"C1\", \"C2\", \"C3\", \"C4\" from cf where \"KEY\" = ?");
	q = &s->select;
	assert_int_equal(s->kind, SM_CQL_SELECT);
	assert_int_equal(q->nsels, 5);
	assert_string_equal(q->sels[0].column, "C0");
	assert_int_equal(q->nwhere, 1);
	assert_string_equal(q->where[0].cols[0], "KEY");
	assert_int_equal(q->where[0].value->kind, SM_CQL_TERM_BIND);
	assert_int_equal(s->nbinds, 1);
	assert_string_equal(s->binds[0].column, "KEY");
	assert_int_equal(s->binds[0].role, SM_CQL_BIND_VALUE);
	assert_int_equal(s->binds[0].clause, SM_CQL_CLAUSE_WHERE);
	{
		const char *pk[] = { "KEY" };
		uint16_t idx[1];

		assert_true(sm_cql_pk_indexes(s, pk, 1, idx));
		assert_int_equal(idx[0], 0);
	}
	sm_cql_stmt_free(s);

	s = ok("SELECT pk, ck, v FROM scylla_bench.test WHERE pk = ? AND ck >= ? AND ck < ? "
	       "ORDER BY ck DESC PER PARTITION LIMIT 2 LIMIT 100 ALLOW FILTERING BYPASS CACHE "
	       "USING TIMEOUT 10ms");
	q = &s->select;
	assert_int_equal(q->nwhere, 3);
	assert_int_equal(q->where[1].op, SM_CQL_OP_GE);
	assert_int_equal(q->where[2].op, SM_CQL_OP_LT);
	assert_int_equal(q->norder, 1);
	assert_true(q->order[0].desc);
	assert_string_equal(q->per_partition_limit->text, "2");
	assert_string_equal(q->limit->text, "100");
	assert_true(q->allow_filtering);
	assert_true(q->bypass_cache);
	assert_string_equal(q->timeout->text, "10ms");
	assert_int_equal(s->nbinds, 3);
	assert_int_equal(s->binds[2].op, SM_CQL_OP_LT);
	sm_cql_stmt_free(s);

	s = ok("SELECT DISTINCT pk FROM t WHERE pk IN (?, ?, 3) LIMIT ?");
	q = &s->select;
	assert_true(q->distinct);
	assert_int_equal(q->where[0].op, SM_CQL_OP_IN);
	assert_int_equal(q->where[0].nin, 3);
	assert_int_equal(s->nbinds, 3);
	assert_int_equal(s->binds[1].op, SM_CQL_OP_IN);
	assert_int_equal(s->binds[2].role, SM_CQL_BIND_LIMIT);
	assert_int_equal(s->binds[2].clause, SM_CQL_CLAUSE_OPTION);
	sm_cql_stmt_free(s);

	s = ok("SELECT COUNT(*), count(1), WRITETIME(v), ttl(v), v AS x, token(pk), "
	       "blobAsText(v), system.now() FROM t WHERE ck IN ?");
	q = &s->select;
	assert_int_equal(q->nsels, 8);
	assert_int_equal(q->sels[0].kind, SM_CQL_SEL_COUNT);
	assert_int_equal(q->sels[1].kind, SM_CQL_SEL_COUNT);
	assert_int_equal(q->sels[2].kind, SM_CQL_SEL_WRITETIME);
	assert_string_equal(q->sels[2].column, "v");
	assert_int_equal(q->sels[2].src.len, strlen("WRITETIME(v)"));
	assert_int_equal(q->sels[3].kind, SM_CQL_SEL_TTL);
	assert_string_equal(q->sels[4].alias, "x");
	assert_int_equal(q->sels[5].kind, SM_CQL_SEL_FUNCTION);
	assert_string_equal(q->sels[5].name, "token");
	assert_int_equal(q->sels[5].nargs, 1);
	assert_string_equal(q->sels[6].name, "blobastext");
	assert_string_equal(q->sels[7].ks, "system");
	assert_int_equal(s->binds[0].role, SM_CQL_BIND_IN_LIST);
	assert_non_null(q->where[0].value);
	sm_cql_stmt_free(s);

	s = ok("SELECT * FROM t WHERE token(a, b) > ? AND token(a, b) <= 100");
	q = &s->select;
	assert_true(q->star);
	assert_int_equal(q->where[0].kind, SM_CQL_REL_TOKEN);
	assert_int_equal(q->where[0].ncols, 2);
	assert_int_equal(s->binds[0].role, SM_CQL_BIND_TOKEN);
	assert_int_equal(s->binds[0].ncolumns, 2);
	sm_cql_stmt_free(s);

	s = ok("SELECT * FROM t WHERE pk = 1 AND (c1, c2) > (?, ?) AND (c1, c2) < ? AND "
	       "(c1, c2) IN ((1, 2), (?, 4)) AND (c1, c2) IN ? AND (c1,c2) IN (?)");
	q = &s->select;
	assert_int_equal(q->where[1].kind, SM_CQL_REL_TUPLE);
	assert_int_equal(q->where[1].value->kind, SM_CQL_TERM_TUPLE);
	assert_int_equal(s->nbinds, 6);
	assert_int_equal(s->binds[0].role, SM_CQL_BIND_VALUE);
	assert_string_equal(s->binds[0].column, "c1");
	assert_string_equal(s->binds[1].column, "c2");
	assert_ptr_equal(s->binds[1].parent, q->where[1].value);
	assert_int_equal(s->binds[2].role, SM_CQL_BIND_TUPLE);
	assert_int_equal(s->binds[3].role, SM_CQL_BIND_VALUE);
	assert_string_equal(s->binds[3].column, "c1");
	assert_int_equal(s->binds[4].role, SM_CQL_BIND_TUPLE_IN);
	assert_int_equal(s->binds[5].role, SM_CQL_BIND_TUPLE);
	sm_cql_stmt_free(s);

	s = ok("SELECT * FROM t WHERE s CONTAINS ? AND m CONTAINS KEY ? AND m['k'] = 1 "
	       "ALLOW FILTERING");
	q = &s->select;
	assert_int_equal(q->where[0].op, SM_CQL_OP_CONTAINS);
	assert_int_equal(q->where[1].op, SM_CQL_OP_CONTAINS_KEY);
	assert_int_equal(q->where[2].kind, SM_CQL_REL_ELEM);
	assert_int_equal(s->binds[0].role, SM_CQL_BIND_ELEM);
	assert_int_equal(s->binds[1].role, SM_CQL_BIND_KEY);
	sm_cql_stmt_free(s);

	bad("SELECT COUNT(2) FROM t", -EINVAL, "COUNT(2)");
	bad("SELECT * FROM t LIMIT 0", -EINVAL, "LIMIT");
	s = ok("SELECT JSON * FROM t");
	assert_true(s->select.json);
	assert_true(s->select.star);
	sm_cql_stmt_free(s);
	s = ok("INSERT INTO t JSON '{\"a\": 1}' DEFAULT UNSET IF NOT EXISTS USING TTL 5");
	assert_non_null(s->insert.json);
	assert_true(s->insert.json_unset);
	assert_true(s->insert.if_not_exists);
	sm_cql_stmt_free(s);
	s = ok("INSERT INTO t JSON ?");
	assert_int_equal(s->binds[0].role, SM_CQL_BIND_JSON);
	sm_cql_stmt_free(s);
	bad("INSERT INTO t JSON 1", -EBADMSG, NULL);
	bad("INSERT INTO t JSON '{}' DEFAULT FOO", -EBADMSG, NULL);
	s = ok("SELECT json FROM t");
	assert_false(s->select.json);
	assert_string_equal(s->select.sels[0].column, "json");
	sm_cql_stmt_free(s);
}

/* The system queries of the Python driver (cql.md 3.1). */
static void
test_driver_system_queries(void **state)
{
	static const char *const v[] = {
		"SELECT * FROM system.peers_v2",
		"SELECT * FROM system.local WHERE key='local'",
		"SELECT * FROM system.peers",
		"SELECT * FROM system_schema.keyspaces",
		"SELECT * FROM system_schema.tables",
		"SELECT * FROM system_schema.columns",
		"SELECT * FROM system_schema.types",
		"SELECT * FROM system_schema.functions",
		"SELECT * FROM system_schema.aggregates",
		"SELECT * FROM system_schema.triggers",
		"SELECT * FROM system_schema.indexes",
		"SELECT * FROM system_schema.views",
		"SELECT * FROM system_virtual_schema.keyspaces",
		"SELECT peer, host_id, rpc_address, schema_version FROM system.peers",
		"SELECT schema_version FROM system.local WHERE key='local'",
		"SELECT * FROM system_schema.keyspaces WHERE keyspace_name = 'ks'",
		"SELECT * FROM system_schema.tables WHERE keyspace_name = 'ks' AND table_name = "
		"'t'",
		"SELECT * FROM system_schema.views WHERE keyspace_name = 'ks' AND view_name = 't'",
		"SELECT host_id, peer, peer_port, data_center, rack, native_address, native_port, "
		"release_version, schema_version FROM system.peers_v2",
		"SELECT host_id, cluster_name, data_center, rack, partitioner, release_version, "
		"schema_version FROM system.local WHERE key='local'",
		"SELECT rpc_address FROM system.local WHERE key='local'",
		"USE \"ks\"",
	};
	struct sm_cql_stmt *s;

	(void)state;
	check_all_ok(v, sizeof(v) / sizeof(v[0]));
	s = ok(v[1]);
	assert_string_equal(s->select.table.ks, "system");
	assert_string_equal(s->select.where[0].cols[0], "key");
	assert_string_equal(s->select.where[0].value->text, "local");
	sm_cql_stmt_free(s);
}

/* ---- writes ---- */

static void
test_insert(void **state)
{
	struct sm_cql_stmt *s;
	struct sm_cql_insert *in;
	const char *pk[] = { "pk" };
	uint16_t idx[1];

	(void)state;
	s = ok("INSERT INTO ks.cf0(pk,c0,c1,c2,c3,c4) VALUES (?,0x01,0x02,0x03,0x04,0x05)");
	in = &s->insert;
	assert_int_equal(in->ncols, 6);
	assert_int_equal(in->values[1]->lit, SM_CQL_LIT_BLOB);
	assert_string_equal(in->values[1]->text, "01");
	assert_true(sm_cql_pk_indexes(s, pk, 1, idx));
	assert_int_equal(idx[0], 0);
	assert_int_equal(s->binds[0].clause, SM_CQL_CLAUSE_VALUES);
	assert_string_equal(s->binds[0].column, "pk");
	sm_cql_stmt_free(s);

	s = ok("INSERT INTO t (a, b) VALUES (1, 'x') IF NOT EXISTS USING TTL 10 AND TIMESTAMP ?");
	in = &s->insert;
	assert_true(in->if_not_exists);
	assert_string_equal(in->attrs.ttl->text, "10");
	assert_int_equal(in->attrs.timestamp->kind, SM_CQL_TERM_BIND);
	assert_int_equal(s->binds[0].role, SM_CQL_BIND_TIMESTAMP);
	assert_false(sm_cql_pk_indexes(s, (const char *const[]){ "a" }, 1, idx));
	sm_cql_stmt_free(s);

	s = ok("INSERT INTO t (a, b) VALUES (:x, :\"Y\") USING TTL :ttl");
	assert_int_equal(s->nbinds, 3);
	assert_string_equal(s->binds[0].name, "x");
	assert_string_equal(s->binds[1].name, "Y");
	assert_string_equal(s->binds[2].name, "ttl");
	assert_int_equal(s->binds[2].role, SM_CQL_BIND_TTL);
	assert_int_equal(s->insert.values[1]->bind, 1);
	sm_cql_stmt_free(s);

	bad("INSERT INTO t (a, b) VALUES (1)", -EINVAL, "Unmatched");
	bad("INSERT INTO t (a) VALUES (1) USING TTL -1", -EINVAL, "TTL");
	bad("INSERT INTO t (a) VALUES (1) USING TTL 1 AND TTL 2", -EINVAL, "twice");
}

static void
test_update(void **state)
{
	struct sm_cql_stmt *s;
	struct sm_cql_update *u;

	(void)state;
	s = ok("UPDATE cf SET \"C0\" = 0x8f75, \"C1\" = 0x222f WHERE \"KEY\" = 0x0000000000000001");
	u = &s->update;
	assert_int_equal(u->nset, 2);
	assert_int_equal(u->set[0].op, SM_CQL_ASSIGN_SET);
	assert_string_equal(u->set[0].col, "C0");
	sm_cql_stmt_free(s);

	s = ok("UPDATE cf SET \"C0\" = \"C0\" + 1, \"C1\" = \"C1\" + ? WHERE \"KEY\" = ?");
	u = &s->update;
	assert_int_equal(u->set[0].op, SM_CQL_ASSIGN_ADD);
	assert_string_equal(u->set[0].value->text, "1");
	assert_int_equal(s->binds[0].role, SM_CQL_BIND_ADD);
	assert_int_equal(s->binds[0].clause, SM_CQL_CLAUSE_SET);
	assert_string_equal(s->binds[0].column, "C1");
	{
		const char *pk[] = { "KEY" };
		uint16_t idx[1];

		assert_true(sm_cql_pk_indexes(s, pk, 1, idx));
		assert_int_equal(idx[0], 1);
	}
	sm_cql_stmt_free(s);

	s = ok("UPDATE t USING TTL 5 AND TIMESTAMP 123 SET l = [1, 2] + l, l = l - [?], "
	       "s = s + {'a'}, m['k'] = ?, l[?] = 'v', c = c -1, n += 2, n -= ?, "
	       "m = {'a': ?, ?: 2} WHERE pk = ? IF EXISTS");
	u = &s->update;
	assert_string_equal(u->attrs.ttl->text, "5");
	assert_int_equal(u->nset, 9);
	assert_int_equal(u->set[0].op, SM_CQL_ASSIGN_PREPEND);
	assert_int_equal(u->set[0].value->kind, SM_CQL_TERM_LIST);
	assert_int_equal(u->set[1].op, SM_CQL_ASSIGN_SUB);
	assert_int_equal(s->binds[0].role, SM_CQL_BIND_SUB_ELEM);
	assert_int_equal(u->set[2].op, SM_CQL_ASSIGN_ADD);
	assert_int_equal(u->set[2].value->kind, SM_CQL_TERM_SET);
	assert_int_equal(u->set[3].op, SM_CQL_ASSIGN_SET_ELEM);
	assert_int_equal(s->binds[1].role, SM_CQL_BIND_ELEM);
	assert_int_equal(s->binds[2].role, SM_CQL_BIND_KEY);
	assert_int_equal(u->set[5].op, SM_CQL_ASSIGN_SUB);
	assert_string_equal(u->set[5].value->text, "1");
	assert_int_equal(u->set[6].op, SM_CQL_ASSIGN_ADD);
	assert_int_equal(u->set[7].op, SM_CQL_ASSIGN_SUB);
	assert_int_equal(s->binds[3].role, SM_CQL_BIND_SUB);
	assert_int_equal(u->set[8].value->kind, SM_CQL_TERM_MAP);
	assert_int_equal(u->set[8].value->nelems, 4);
	assert_int_equal(s->binds[4].role, SM_CQL_BIND_ELEM);
	assert_int_equal(s->binds[5].role, SM_CQL_BIND_KEY);
	assert_ptr_equal(s->binds[5].parent, u->set[8].value);
	assert_int_equal(u->if_kind, SM_CQL_IF_EXISTS);
	sm_cql_stmt_free(s);

	s = ok("UPDATE t SET v = ? + v, w = ? WHERE pk = 1 IF v = 3 AND m['a'] != ? AND x IN (1, "
	       "?)");
	u = &s->update;
	assert_int_equal(u->set[0].op, SM_CQL_ASSIGN_PREPEND);
	assert_int_equal(s->binds[0].role, SM_CQL_BIND_ADD);
	assert_int_equal(s->binds[1].role, SM_CQL_BIND_VALUE);
	assert_int_equal(u->if_kind, SM_CQL_IF_CONDS);
	assert_int_equal(u->nconds, 3);
	assert_int_equal(u->conds[1].kind, SM_CQL_REL_ELEM);
	assert_int_equal(u->conds[1].op, SM_CQL_OP_NE);
	assert_int_equal(s->binds[2].clause, SM_CQL_CLAUSE_IF);
	assert_int_equal(s->binds[2].role, SM_CQL_BIND_ELEM);
	assert_int_equal(u->conds[2].op, SM_CQL_OP_IN);
	sm_cql_stmt_free(s);

	bad("UPDATE t SET v = ? + w WHERE pk = 1", -EINVAL, "X = <value> + X");
	bad("UPDATE t SET v = 1 WHERE pk = 1 IF NOT EXISTS", -EINVAL, NULL);
}

static void
test_delete(void **state)
{
	struct sm_cql_stmt *s;
	struct sm_cql_delete *d;

	(void)state;
	s = ok("DELETE \"C0\", \"C1\" FROM cf WHERE \"KEY\" = ?");
	d = &s->del;
	assert_int_equal(d->ncols, 2);
	assert_string_equal(d->cols[1].col, "C1");
	sm_cql_stmt_free(s);

	s = ok("DELETE FROM t USING TIMESTAMP 5 WHERE pk = ? AND ck = 2 IF EXISTS");
	d = &s->del;
	assert_int_equal(d->ncols, 0);
	assert_string_equal(d->attrs.timestamp->text, "5");
	assert_int_equal(d->if_kind, SM_CQL_IF_EXISTS);
	sm_cql_stmt_free(s);

	s = ok("DELETE m[?], l[1], v FROM t WHERE pk = 1 IF v = 'x'");
	d = &s->del;
	assert_int_equal(d->ncols, 3);
	assert_non_null(d->cols[0].key);
	assert_int_equal(s->binds[0].clause, SM_CQL_CLAUSE_DELETE);
	assert_int_equal(s->binds[0].role, SM_CQL_BIND_KEY);
	assert_string_equal(s->binds[0].column, "m");
	assert_int_equal(d->if_kind, SM_CQL_IF_CONDS);
	sm_cql_stmt_free(s);

	bad("DELETE FROM t USING TTL 5 WHERE pk = 1", -EINVAL, "TTL");
}

static void
test_batch(void **state)
{
	struct sm_cql_stmt *s;
	struct sm_cql_batch_ast *b;

	(void)state;
	s = ok("BEGIN UNLOGGED BATCH USING TIMESTAMP 10\n"
	       "  INSERT INTO t (pk, ck, v) VALUES (?, ?, ?);\n"
	       "  UPDATE t SET v = ? WHERE pk = ? AND ck = 1;\n"
	       "  DELETE FROM t WHERE pk = ?\n"
	       "APPLY BATCH;");
	b = &s->batch;
	assert_int_equal(s->kind, SM_CQL_BATCH);
	assert_int_equal(b->kind, SM_CQL_STMT_BATCH_UNLOGGED);
	assert_string_equal(b->attrs.timestamp->text, "10");
	assert_int_equal(b->nstmts, 3);
	assert_int_equal(s->nbinds, 6);
	assert_int_equal(b->stmts[0]->nbinds, 3);
	assert_ptr_equal(b->stmts[0]->binds, s->binds);
	assert_int_equal(b->stmts[1]->nbinds, 2);
	assert_ptr_equal(b->stmts[1]->binds, s->binds + 3);
	assert_int_equal(b->stmts[1]->binds[0].stmt, 1);
	assert_int_equal(b->stmts[2]->binds[0].stmt, 2);
	assert_int_equal(b->stmts[2]->del.where[0].value->bind, 5);
	sm_cql_stmt_free(s);

	s = ok("BEGIN COUNTER BATCH UPDATE c SET n = n + 1 WHERE pk = 1 APPLY BATCH");
	assert_int_equal(s->batch.kind, SM_CQL_STMT_BATCH_COUNTER);
	sm_cql_stmt_free(s);
	s = ok("begin batch apply batch");
	assert_int_equal(s->batch.kind, SM_CQL_STMT_BATCH_LOGGED);
	assert_int_equal(s->batch.nstmts, 0);
	sm_cql_stmt_free(s);

	bad("BEGIN BATCH SELECT * FROM t APPLY BATCH", -EBADMSG, "'SELECT'");
	bad("BEGIN BATCH INSERT INTO t (a) VALUES (1)", -EBADMSG, "'<EOF>'");
}

/* ---- literals ---- */

static const struct sm_cql_term *
value_of(const struct sm_cql_stmt *s, unsigned i)
{
	return s->insert.values[i];
}

static void
test_literals(void **state)
{
	struct sm_cql_stmt *s;
	int32_t mo, d;
	int64_t ns;
	char e[128];

	(void)state;
	s = ok("INSERT INTO t (a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q,r,s,u,v,w,x,y) VALUES ("
	       "42, -7, 007, 1.5, -2e10, 1.5E+3, NaN, Infinity, -Infinity, 'it''s', "
	       "$$a'b$$, 0xCAFE, 0x, true, FALSE, null, 123E4567-E89B-12D3-A456-426614174000, "
	       "1h30m, 1mo2d, P1Y2M, PT5S, -10ms, [1, 2], {1: 'a'})");
	assert_int_equal(value_of(s, 0)->lit, SM_CQL_LIT_INT);
	assert_string_equal(value_of(s, 1)->text, "-7");
	assert_string_equal(value_of(s, 2)->text, "007");
	assert_int_equal(value_of(s, 3)->lit, SM_CQL_LIT_FLOAT);
	assert_string_equal(value_of(s, 4)->text, "-2e10");
	assert_int_equal(value_of(s, 5)->lit, SM_CQL_LIT_FLOAT);
	assert_string_equal(value_of(s, 6)->text, "NaN");
	assert_string_equal(value_of(s, 7)->text, "Infinity");
	assert_string_equal(value_of(s, 8)->text, "-Infinity");
	assert_string_equal(value_of(s, 9)->text, "it's");
	assert_int_equal(value_of(s, 9)->len, 4);
	assert_string_equal(value_of(s, 10)->text, "a'b");
	assert_int_equal(value_of(s, 11)->lit, SM_CQL_LIT_BLOB);
	assert_string_equal(value_of(s, 11)->text, "CAFE");
	assert_string_equal(value_of(s, 12)->text, "");
	assert_string_equal(value_of(s, 13)->text, "true");
	assert_string_equal(value_of(s, 14)->text, "false");
	assert_int_equal(value_of(s, 15)->lit, SM_CQL_LIT_NULL);
	assert_int_equal(value_of(s, 16)->lit, SM_CQL_LIT_UUID);
	assert_string_equal(value_of(s, 16)->text, "123e4567-e89b-12d3-a456-426614174000");
	assert_int_equal(value_of(s, 17)->lit, SM_CQL_LIT_DURATION);
	assert_string_equal(value_of(s, 17)->text, "1h30m");
	assert_int_equal(value_of(s, 18)->lit, SM_CQL_LIT_DURATION);
	assert_int_equal(value_of(s, 19)->lit, SM_CQL_LIT_DURATION);
	assert_int_equal(value_of(s, 20)->lit, SM_CQL_LIT_DURATION);
	assert_string_equal(value_of(s, 21)->text, "-10ms");
	assert_int_equal(value_of(s, 22)->kind, SM_CQL_TERM_LIST);
	assert_int_equal(value_of(s, 23)->kind, SM_CQL_TERM_MAP);
	sm_cql_stmt_free(s);

	s = ok("INSERT INTO t (a, b, c, d, e) VALUES ({}, (1, 'x'), now(), "
	       "toTimestamp(now()), uuid())");
	assert_int_equal(value_of(s, 0)->kind, SM_CQL_TERM_SET);
	assert_int_equal(value_of(s, 0)->nelems, 0);
	assert_int_equal(value_of(s, 1)->kind, SM_CQL_TERM_TUPLE);
	assert_int_equal(value_of(s, 2)->kind, SM_CQL_TERM_FUNCTION);
	assert_string_equal(value_of(s, 2)->text, "now");
	assert_string_equal(value_of(s, 3)->text, "totimestamp");
	assert_int_equal(value_of(s, 3)->nelems, 1);
	sm_cql_stmt_free(s);

	s = ok("INSERT INTO t (a) VALUES (blobAsText(?))");
	assert_int_equal(s->binds[0].role, SM_CQL_BIND_FUNCTION_ARG);
	assert_string_equal(s->binds[0].column, "a");
	assert_ptr_equal(s->binds[0].parent, value_of(s, 0));
	sm_cql_stmt_free(s);

	s = ok("INSERT INTO t (a) VALUES ([[?]])");
	assert_int_equal(s->binds[0].role, SM_CQL_BIND_NESTED);
	sm_cql_stmt_free(s);

	s = ok("INSERT INTO t (a) VALUES ('multi\nline')");
	assert_string_equal(value_of(s, 0)->text, "multi\nline");
	sm_cql_stmt_free(s);

	/* a string may hold NUL */
	{
		static const char txt[] = "INSERT INTO t (a) VALUES ('x\0y')";
		struct sm_cql_stmt *st;

		assert_int_equal(sm_cql_parse(txt, sizeof(txt) - 1, &st, e, sizeof(e)), 0);
		assert_int_equal(st->insert.values[0]->len, 3);
		sm_cql_stmt_free(st);
	}

	bad("INSERT INTO t (a) VALUES (1h1h)", -EINVAL, "duration");
	bad("INSERT INTO t (a) VALUES (1m1h)", -EINVAL, "duration");

	assert_int_equal(
		sm_cql_duration_parse("1y2mo3w4d5h6m7s8ms9us10ns", 25, &mo, &d, &ns, e, sizeof(e)),
		0);
	assert_int_equal(mo, 14);
	assert_int_equal(d, 25);
	assert_true(ns == 5 * 3600000000000LL + 6 * 60000000000LL + 7000000000LL + 8000000LL +
				  9000LL + 10LL);
	assert_int_equal(sm_cql_duration_parse("-P1Y2M3DT4H5M6S", 15, &mo, &d, &ns, e, sizeof(e)),
			 0);
	assert_int_equal(mo, -14);
	assert_int_equal(d, -3);
	assert_true(ns == -(4 * 3600LL + 5 * 60 + 6) * 1000000000LL);
	assert_int_equal(sm_cql_duration_parse("P3W", 3, &mo, &d, &ns, e, sizeof(e)), 0);
	assert_int_equal(d, 21);
	assert_int_equal(
		sm_cql_duration_parse("P0001-02-03T04:05:06", 20, &mo, &d, &ns, e, sizeof(e)), 0);
	assert_int_equal(mo, 14);
	assert_int_equal(d, 3);
	assert_int_equal(sm_cql_duration_parse("5\xc2\xb5s", 4, &mo, &d, &ns, e, sizeof(e)), 0);
	assert_true(ns == 5000);
	assert_int_equal(sm_cql_duration_parse("", 0, &mo, &d, &ns, e, sizeof(e)), -EINVAL);
	assert_int_equal(sm_cql_duration_parse("3x", 2, &mo, &d, &ns, e, sizeof(e)), -EINVAL);
	assert_int_equal(
		sm_cql_duration_parse("99999999999999999999y", 21, &mo, &d, &ns, e, sizeof(e)),
		-EINVAL);
	assert_int_equal(sm_cql_duration_parse("300000000y", 10, &mo, &d, &ns, e, sizeof(e)),
			 -EINVAL);
}

static void
test_comments_whitespace(void **state)
{
	struct sm_cql_stmt *s;

	(void)state;
	s = ok("  -- leading comment\n"
	       "/* block\n comment */ SELECT /* inline */ a // trailing\n"
	       "FROM\tt\r\n WHERE a = 1 ;;  -- done");
	assert_int_equal(s->kind, SM_CQL_SELECT);
	assert_string_equal(s->select.table.name, "t");
	sm_cql_stmt_free(s);
	s = ok("sElEcT A, \"A\" FrOm T");
	assert_string_equal(s->select.sels[0].column, "a");
	assert_string_equal(s->select.sels[1].column, "A");
	assert_string_equal(s->select.table.name, "t");
	sm_cql_stmt_free(s);
}

/* ---- errors ---- */

static void
test_errors(void **state)
{
	(void)state;
	bad("SELECT * FROMM t", -EBADMSG, "line 1:9 ");
	bad("SELECT * FROMM t", -EBADMSG, "'FROMM'");
	bad("SELECT * FROM", -EBADMSG, "line 1:13 ");
	bad("SELECT * FROM", -EBADMSG, "'<EOF>'");
	bad("SELECT *\nFROM t\nWHERE a = = 1", -EBADMSG, "line 3:10 ");
	bad("SELECT *\n  FROM t WHERE a = 1 garbage", -EBADMSG, "line 2:21 ");
	bad("INSERT INTO t (a) VALUES ('unterminated", -EBADMSG, "line 1:26 ");
	bad("INSERT INTO t (a) VALUES (1", -EBADMSG, "'<EOF>'");
	bad("/* never closed\nSELECT", -EBADMSG, "line 1:0 ");
	bad("UPDATE t SET WHERE a = 1", -EBADMSG, "'WHERE'");
	bad("SELECT * FROM t WHERE a = 1 AND", -EBADMSG, "'<EOF>'");
	bad("CREATE TABLE t (a int PRIMARY KEY", -EBADMSG, "'<EOF>'");
	bad("SELECT * FROM t WHERE a @ 1", -EBADMSG, "line 1:24 ");
	bad("SELECT * FROM t; SELECT", -EBADMSG, "line 1:17 ");
	bad("FOO bar", -EBADMSG, "'FOO'");
	bad("", -EBADMSG, "<EOF>");
	bad("   -- only a comment", -EBADMSG, "<EOF>");
	bad("SELECT \"\" FROM t", -EBADMSG, NULL);
	bad("SELECT * FROM select", -EBADMSG, "'select'");
	bad("INSERT INTO t (a) VALUES (0xZZ)", -EBADMSG, NULL);
	bad("SELECT * FROM t WHERE é = 1 AND", -EBADMSG, "line 1:");
	/* columns count characters: é is one */
	bad("SELECT \"é\" FROMM t", -EBADMSG, "line 1:11 ");
}

/*
 * Positions stay exact with the column counted incrementally: characters,
 * not bytes (é is one), per line (strings and comments may span lines; a
 * token is reported at the line it starts on), and far into a long line.
 */
static void
test_error_positions(void **state)
{
	size_t cap = 64 << 10, n = 0, i, col = 0;
	char *txt = malloc(cap), want[32];

	(void)state;
	bad("SELECT * FROM t WHERE a IN ('ééé', 'x') FROMM", -EBADMSG, "line 1:40 ");
	bad("SELECT * FROM t WHERE a = 'x\ny' AND b = = 1", -EBADMSG, "line 2:11 ");
	bad("SELECT * FROM t WHERE a = 'a\nb' FROMM", -EBADMSG, "line 2:3 ");
	bad("SELECT * FROM t WHERE a = 1 'x\ny'", -EBADMSG, "line 1:28 ");
	bad("SELECT * FROM t WHERE a = 1 'é\nb' 'c\nd'", -EBADMSG, "line 1:28 ");
	bad("SELECT *\nFROM t WHERE a = 'é' AND b = 'unterminated", -EBADMSG, "line 2:29 ");
	bad("SELECT * /* é\n é */ FROMM t", -EBADMSG, "line 2:6 ");
	bad("SELECT * FROM t WHERE \"é\" = 'é' AND é", -EBADMSG, "line 1:");
	bad("SELECT é FROM t", -EBADMSG, "line 1:7 ");
	bad("SELECT * FROM t WHERE a = $$é\né$$ FROMM", -EBADMSG, "line 2:4 ");

	/* 4,000 tokens on one line with multi-byte characters, then the error */
	assert_non_null(txt);
	n += (size_t)snprintf(txt, cap, "SELECT * FROM t WHERE a IN (");
	for (i = 0; i < 2000; i++)
		n += (size_t)snprintf(txt + n, cap - n, "'é€%zu',", i);
	n += (size_t)snprintf(txt + n, cap - n, "1) ");
	for (i = 0; i < n; i++)
		col += ((unsigned char)txt[i] & 0xc0) != 0x80;
	n += (size_t)snprintf(txt + n, cap - n, "garbage");
	snprintf(want, sizeof(want), "line 1:%zu ", col);
	bad(txt, -EBADMSG, want);
	/* ... and the same after a newline */
	memmove(txt + 1, txt, n + 1);
	txt[0] = '\n';
	snprintf(want, sizeof(want), "line 2:%zu ", col);
	bad(txt, -EBADMSG, want);
	free(txt);
}

/* A property written twice is refused, naming the first key to repeat. */
static void
test_duplicate_properties(void **state)
{
	size_t cap = 256 << 10, n = 0, i;
	char *txt = malloc(cap);
	struct sm_cql_stmt *s;

	(void)state;
	bad("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy'} AND "
	    "durable_writes = true AND durable_writes = false",
	    -EINVAL, "Multiple definitions for property 'durable_writes'");
	bad("CREATE TABLE t (a int PRIMARY KEY) WITH a = 1 AND b = 2 AND b = 3 AND a = 4", -EINVAL,
	    "Multiple definitions for property 'b'");
	bad("CREATE TABLE t (a int PRIMARY KEY) WITH c = 1 AND COMPACT STORAGE AND C = 2", -EINVAL,
	    "Multiple definitions for property 'c'");
	sm_cql_stmt_free(ok("CREATE TABLE t (a int PRIMARY KEY) WITH \"C\" = 1 AND c = 2"));

	/* thousands of distinct ones parse; one repeat at the end is still found */
	assert_non_null(txt);
	n += (size_t)snprintf(txt, cap, "CREATE TABLE t (a int PRIMARY KEY) WITH p0 = 0");
	for (i = 1; i < 5000; i++)
		n += (size_t)snprintf(txt + n, cap - n, " AND p%zu = %zu", i, i);
	assert_int_equal(sm_cql_parse(txt, n, &s, errbuf, sizeof(errbuf)), 0);
	assert_int_equal(s->create_table.nprops, 5000);
	sm_cql_stmt_free(s);
	n += (size_t)snprintf(txt + n, cap - n, " AND p4321 = 1");
	assert_int_equal(sm_cql_parse(txt, n, &s, errbuf, sizeof(errbuf)), -EINVAL);
	assert_non_null(strstr(errbuf, "Multiple definitions for property 'p4321'"));
	free(txt);
}

static void
test_unsupported(void **state)
{
	(void)state;
	bad("CREATE CUSTOM INDEX i ON t (v)", -ENOTSUP, "not supported by shardmark: CREATE CUSTOM INDEX");
	bad("CREATE INDEX i ON t (v) USING 'org.x'", -ENOTSUP, "CUSTOM INDEX");
	bad("CREATE INDEX i ON t (a, b)", -ENOTSUP, "several columns");
	bad("CREATE MATERIALIZED VIEW v AS SELECT * FROM t WHERE a = 1 PRIMARY KEY (a)", -ENOTSUP,
	    "WHERE restriction other than IS NOT NULL");
	bad("CREATE FUNCTION f() RETURNS int", -ENOTSUP, "FUNCTION");
	bad("CREATE OR REPLACE FUNCTION f()", -ENOTSUP, "FUNCTION");
	bad("CREATE ROLE r", -ENOTSUP, "ROLE");
	bad("CREATE USER u", -ENOTSUP, "ROLE");
	bad("GRANT SELECT ON ks TO r", -ENOTSUP, "GRANT");
	bad("REVOKE SELECT ON ks FROM r", -ENOTSUP, "REVOKE");
	bad("LIST ROLES", -ENOTSUP, "LIST");
	bad("CREATE TABLE t (a frozen<ks.udt> PRIMARY KEY, b ks.x.y)", -EBADMSG, NULL);
	bad("SELECT * FROM t WHERE a LIKE 'x'", -ENOTSUP, "LIKE");
}

/* CREATE / DROP / ALTER MATERIALIZED VIEW (ScyllaDB's Cql.g createViewStatement). */
static void
test_create_view(void **state)
{
	struct sm_cql_stmt *s;

	(void)state;
	s = ok("CREATE MATERIALIZED VIEW IF NOT EXISTS ks.v AS SELECT a, \"B\" FROM t WHERE a IS "
	       "NOT NULL AND c IS NOT NULL PRIMARY KEY ((a, b), c) WITH CLUSTERING ORDER BY (c "
	       "DESC) AND comment = 'x'");
	assert_int_equal(s->kind, SM_CQL_CREATE_VIEW);
	assert_true(s->create_view.if_not_exists);
	assert_string_equal(s->create_view.view.ks, "ks");
	assert_string_equal(s->create_view.view.name, "v");
	assert_null(s->create_view.base.ks);
	assert_string_equal(s->create_view.base.name, "t");
	assert_false(s->create_view.star);
	assert_int_equal(s->create_view.ncols, 2);
	assert_string_equal(s->create_view.cols[1], "B");
	assert_int_equal(s->create_view.nnot_null, 2);
	assert_string_equal(s->create_view.not_null[1], "c");
	assert_int_equal(s->create_view.key.npk, 2);
	assert_int_equal(s->create_view.key.nck, 1);
	assert_int_equal(s->create_view.key.nclustering_order, 1);
	assert_true(s->create_view.key.clustering_order[0].desc);
	assert_int_equal(s->create_view.key.nprops, 1);
	sm_cql_stmt_free(s);
	s = ok("CREATE MATERIALIZED VIEW v AS SELECT * FROM t PRIMARY KEY (a)");
	assert_true(s->create_view.star);
	assert_int_equal(s->create_view.nnot_null, 0);
	sm_cql_stmt_free(s);
	s = ok("DROP MATERIALIZED VIEW IF EXISTS ks.v");
	assert_int_equal(s->kind, SM_CQL_DROP_VIEW);
	assert_true(s->drop_view.if_exists);
	assert_string_equal(s->drop_view.table.name, "v");
	sm_cql_stmt_free(s);
	s = ok("ALTER MATERIALIZED VIEW ks.v WITH comment = 'x' AND gc_grace_seconds = 1");
	assert_int_equal(s->kind, SM_CQL_ALTER_TABLE);
	assert_true(s->alter_table.view);
	assert_int_equal(s->alter_table.kind, SM_CQL_ALTER_WITH);
	assert_int_equal(s->alter_table.nprops, 2);
	sm_cql_stmt_free(s);
	bad("CREATE MATERIALIZED VIEW v AS SELECT * FROM t WHERE a IS NOT 1 PRIMARY KEY (a)",
	    -EBADMSG, NULL);
	bad("CREATE MATERIALIZED VIEW v AS SELECT * FROM t", -EBADMSG, NULL);
	bad("CREATE MATERIALIZED VIEW v AS SELECT a AS b FROM t PRIMARY KEY (a)", -EINVAL,
	    "Cannot use alias when defining a materialized view");
	bad("CREATE MATERIALIZED VIEW v AS SELECT f(a) FROM t PRIMARY KEY (a)", -EINVAL,
	    "Cannot use general expressions");
	bad("CREATE MATERIALIZED VIEW v AS SELECT * FROM t WHERE a = ? PRIMARY KEY (a)", -EINVAL,
	    "Cannot use query parameters in CREATE MATERIALIZED VIEW statements");
	bad("ALTER MATERIALIZED VIEW v ADD x int", -EBADMSG, NULL);
}

/* CREATE INDEX's targets (ScyllaDB's Cql.g indexIdent) and DROP INDEX. */
static void
test_create_index(void **state)
{
	struct sm_cql_stmt *s;

	(void)state;
	s = ok("CREATE INDEX ON t (v)");
	assert_int_equal(s->kind, SM_CQL_CREATE_INDEX);
	assert_null(s->create_index.name);
	assert_string_equal(s->create_index.table.name, "t");
	assert_string_equal(s->create_index.column, "v");
	assert_null(s->create_index.fn);
	sm_cql_stmt_free(s);
	s = ok("create index if not exists \"Ix\" on ks.t (KEYS(m));");
	assert_true(s->create_index.if_not_exists);
	assert_string_equal(s->create_index.name, "Ix");
	assert_string_equal(s->create_index.table.ks, "ks");
	assert_string_equal(s->create_index.fn, "keys");
	assert_string_equal(s->create_index.column, "m");
	sm_cql_stmt_free(s);
	s = ok("CREATE INDEX i ON t (full(f))");
	assert_string_equal(s->create_index.fn, "full");
	sm_cql_stmt_free(s);
	/* a column may be called values */
	s = ok("CREATE INDEX i ON t (values)");
	assert_null(s->create_index.fn);
	assert_string_equal(s->create_index.column, "values");
	sm_cql_stmt_free(s);
	s = ok("CREATE INDEX i ON t ((p1, p2), v)");
	assert_int_equal(s->create_index.nlocal_pk, 2);
	assert_string_equal(s->create_index.local_pk[1], "p2");
	assert_string_equal(s->create_index.column, "v");
	sm_cql_stmt_free(s);
	s = ok("DROP INDEX IF EXISTS ks.i");
	assert_int_equal(s->kind, SM_CQL_DROP_INDEX);
	assert_true(s->drop_index.if_exists);
	assert_string_equal(s->drop_index.table.ks, "ks");
	assert_string_equal(s->drop_index.table.name, "i");
	sm_cql_stmt_free(s);
	bad("CREATE INDEX ON t", -EBADMSG, NULL);
	bad("CREATE INDEX ON t ((p), )", -EBADMSG, NULL);
	bad("CREATE INDEX ON t (keys(m)", -EBADMSG, NULL);
}

/* CREATE / ALTER / DROP TYPE, user type literals, fields in SELECT, SET and DELETE. */
static void
test_user_types(void **state)
{
	struct sm_cql_stmt *s;
	const struct sm_cql_term *v;

	(void)state;
	s = ok("CREATE TYPE IF NOT EXISTS ks.\"Addr\" (street text, zip frozen<list<int>>, "
	       "o frozen<ks.other>, q \"Quoted\",)");
	assert_int_equal(s->kind, SM_CQL_CREATE_TYPE);
	assert_true(s->create_type.if_not_exists);
	assert_string_equal(s->create_type.name.ks, "ks");
	assert_string_equal(s->create_type.name.name, "Addr");
	assert_int_equal(s->create_type.nfields, 4);
	assert_string_equal(s->create_type.fields[1], "zip");
	assert_string_equal(s->create_type.types[1], "frozen<list<int>>");
	assert_string_equal(s->create_type.types[2], "frozen<ks.other>");
	assert_string_equal(s->create_type.types[3], "\"Quoted\"");
	sm_cql_stmt_free(s);

	s = ok("ALTER TYPE t ADD f tuple<int, text>");
	assert_int_equal(s->kind, SM_CQL_ALTER_TYPE);
	assert_int_equal(s->alter_type.kind, SM_CQL_ALTER_TYPE_ADD);
	assert_string_equal(s->alter_type.field, "f");
	assert_string_equal(s->alter_type.type, "tuple<int, text>");
	sm_cql_stmt_free(s);
	s = ok("ALTER TYPE ks.t RENAME a TO b AND c TO \"D\"");
	assert_int_equal(s->alter_type.kind, SM_CQL_ALTER_TYPE_RENAME);
	assert_int_equal(s->alter_type.nrenames, 2);
	assert_string_equal(s->alter_type.to[1], "D");
	sm_cql_stmt_free(s);
	s = ok("ALTER TYPE t ALTER f TYPE blob");
	assert_int_equal(s->alter_type.kind, SM_CQL_ALTER_TYPE_TYPE);
	sm_cql_stmt_free(s);
	s = ok("DROP TYPE IF EXISTS ks.t");
	assert_int_equal(s->kind, SM_CQL_DROP_TYPE);
	assert_true(s->drop_type.if_exists);
	sm_cql_stmt_free(s);
	bad("ALTER TYPE t DROP f", -EBADMSG, NULL);

	/* {f: v} is a user type literal; {'f': v} and {true: v} stay maps */
	s = ok("INSERT INTO t (k, u) VALUES (1, {a: 1, \"B\": ?, c: {x: ?}})");
	v = s->insert.values[1];
	assert_int_equal(v->kind, SM_CQL_TERM_UDT);
	assert_int_equal(v->nelems, 3);
	assert_string_equal(v->names[1], "B");
	assert_int_equal(v->elems[2]->kind, SM_CQL_TERM_UDT);
	assert_int_equal(s->nbinds, 2);
	assert_int_equal(s->binds[0].role, SM_CQL_BIND_NESTED);
	assert_ptr_equal(s->binds[0].root, v);
	assert_int_equal(s->binds[0].root_role, SM_CQL_BIND_VALUE);
	assert_ptr_equal(s->binds[1].root, v);
	sm_cql_stmt_free(s);
	s = ok("INSERT INTO t (k, m) VALUES (1, {'a': 1, 'b': 2})");
	assert_int_equal(s->insert.values[1]->kind, SM_CQL_TERM_MAP);
	sm_cql_stmt_free(s);
	s = ok("INSERT INTO t (k, m) VALUES (1, {true: 1})");
	assert_int_equal(s->insert.values[1]->kind, SM_CQL_TERM_MAP);
	sm_cql_stmt_free(s);

	s = ok("SELECT u.a, u.b.c AS x, writetime(u.a), ttl(u.b) FROM t");
	assert_string_equal(s->select.sels[0].column, "u");
	assert_string_equal(s->select.sels[0].field, "a");
	assert_int_equal(s->select.sels[1].nfields, 2);
	assert_string_equal(s->select.sels[1].fields[1], "c");
	assert_string_equal(s->select.sels[1].alias, "x");
	assert_int_equal(s->select.sels[2].kind, SM_CQL_SEL_WRITETIME);
	assert_string_equal(s->select.sels[2].field, "a");
	sm_cql_stmt_free(s);

	s = ok("UPDATE t SET u.a = ?, u.b = 2 WHERE k = 1");
	assert_int_equal(s->update.set[0].op, SM_CQL_ASSIGN_SET_FIELD);
	assert_string_equal(s->update.set[0].field, "a");
	assert_int_equal(s->binds[0].role, SM_CQL_BIND_FIELD);
	assert_string_equal(s->binds[0].column, "u");
	assert_string_equal(s->binds[0].field, "a");
	sm_cql_stmt_free(s);
	s = ok("SELECT CAST(v AS text), count(v), sum((int)4) FROM t GROUP BY a, b");
	assert_int_equal(s->select.sels[0].kind, SM_CQL_SEL_CAST);
	assert_string_equal(s->select.sels[0].type, "text");
	assert_int_equal(s->select.sels[0].args[0].kind, SM_CQL_SEL_COLUMN);
	assert_int_equal(s->select.sels[2].args[0].term->kind, SM_CQL_TERM_CAST);
	assert_string_equal(s->select.sels[2].args[0].term->text, "int");
	assert_int_equal(s->select.ngroup_by, 2);
	assert_string_equal(s->select.group_by[1], "b");
	sm_cql_stmt_free(s);
	s = ok("INSERT INTO t (k, b) VALUES (1, (blob)(frozen<list<int>>)?)");
	assert_int_equal(s->insert.values[1]->kind, SM_CQL_TERM_CAST);
	assert_string_equal(s->insert.values[1]->text, "blob");
	assert_string_equal(s->insert.values[1]->elems[0]->text, "frozen<list<int>>");
	assert_int_equal(s->binds[0].role, SM_CQL_BIND_NESTED);
	sm_cql_stmt_free(s);
	s = ok("DELETE u.a, m['k'] FROM t WHERE k = 1");
	assert_string_equal(s->del.cols[0].field, "a");
	assert_null(s->del.cols[1].field);
	sm_cql_stmt_free(s);
}

static void
test_limits(void **state)
{
	char big[4096];
	size_t i, n = 0;
	struct sm_cql_stmt *s = NULL;

	(void)state;
	n += (size_t)snprintf(big, sizeof(big), "INSERT INTO t (a) VALUES (");
	for (i = 0; i < 100; i++)
		big[n++] = '[';
	for (i = 0; i < 100; i++)
		big[n++] = ']';
	big[n++] = ')';
	assert_int_equal(sm_cql_parse(big, n, &s, errbuf, sizeof(errbuf)), -EINVAL);
	assert_null(s);
	assert_int_equal(sm_cql_parse("USE ks", (size_t)INT32_MAX + 1, &s, errbuf, sizeof(errbuf)),
			 -E2BIG);
	/* Bind markers past 65535: ScyllaDB's message with the whole count;
	 * exactly 65535 parse. A long single line lexes in one pass. */
	{
		size_t cap = 8u << 20, m;
		char *txt = malloc(cap);
		unsigned k;

		assert_non_null(txt);
		for (k = 65535; k <= 70000; k += 70000 - 65535) {
			m = (size_t)snprintf(txt, cap, "SELECT * FROM t WHERE a IN (");
			for (i = 0; i < k; i++)
				m += (size_t)snprintf(txt + m, cap - m, "%s?", i ? "," : "");
			txt[m++] = ')';
			s = NULL;
			if (k == 65535) {
				assert_int_equal(sm_cql_parse(txt, m, &s, errbuf, sizeof(errbuf)), 0);
				assert_int_equal(s->nbinds, 65535);
				sm_cql_stmt_free(s);
			} else {
				assert_int_equal(sm_cql_parse(txt, m, &s, errbuf, sizeof(errbuf)),
						 -EINVAL);
				assert_null(s);
				assert_string_equal(errbuf, "Too many markers(?). 70000 markers exceed "
							    "the allowed maximum of 65535");
			}
		}
		free(txt);
	}
	/* a tiny error buffer still gets a terminated message */
	assert_int_equal(sm_cql_parse("FOO", 3, &s, errbuf, 5), -EBADMSG);
	assert_int_equal(strlen(errbuf), 4);
	assert_int_equal(sm_cql_parse("FOO", 3, &s, NULL, 0), -EBADMSG);
}

/* A big statement: exercises arena growth and large allocations. */
static void
test_large(void **state)
{
	size_t cap = 1 << 20, n = 0, i;
	char *txt = malloc(cap);
	struct sm_cql_stmt *s;

	(void)state;
	assert_non_null(txt);
	n += (size_t)snprintf(txt, cap, "SELECT * FROM t WHERE a IN (");
	for (i = 0; i < 20000; i++)
		n += (size_t)snprintf(txt + n, cap - n, "%s?", i ? "," : "");
	n += (size_t)snprintf(txt + n, cap - n, ") AND b = 0x");
	for (i = 0; i < 200000; i++)
		txt[n++] = 'a';
	assert_int_equal(sm_cql_parse(txt, n, &s, errbuf, sizeof(errbuf)), 0);
	assert_int_equal(s->nbinds, 20000);
	assert_int_equal(s->binds[19999].term->bind, 19999);
	assert_int_equal(s->select.where[1].value->len, 200000);
	sm_cql_stmt_free(s);
	free(txt);
}

/* ---- fuzz ---- */

static const char *const seeds[] = {
	"SELECT pk, ck, v FROM scylla_bench.test WHERE pk = ? AND ck >= ? LIMIT 100",
	"INSERT INTO ks.cf0(pk,c0,c1) VALUES (?,0x01,0x02) IF NOT EXISTS USING TTL 5",
	"UPDATE cf SET \"C0\" = \"C0\" + 1, m['k'] = {1: [2, (3, 'x')]} WHERE \"KEY\" = ? IF a = 1",
	"DELETE m[?], v FROM t USING TIMESTAMP 3 WHERE (a, b) IN ((1, 2), ?) IF EXISTS",
	"BEGIN UNLOGGED BATCH INSERT INTO t (a) VALUES (:x); DELETE FROM t WHERE a = 1 APPLY BATCH",
	"CREATE TABLE IF NOT EXISTS ks.t (a int, b map<text, frozen<list<int>>>, c int static, "
	"PRIMARY KEY ((a), c)) WITH CLUSTERING ORDER BY (c DESC) AND compaction = {'a': 'b'}",
	"CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': "
	"1}",
	"SELECT COUNT(*), writetime(v), f(g(?), 1.5e3) AS x FROM t WHERE token(a) > -9 /* c */ "
	"ALLOW FILTERING BYPASS CACHE USING TIMEOUT 1h30m -- end",
	"INSERT INTO t (a, b, c, d) VALUES ($$x$$, 123e4567-e89b-12d3-a456-426614174000, P1Y2M, "
	"NaN)",
};

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t
rnd(void)
{
	/* xorshift64*: fixed seed, so every run applies the same mutations */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static size_t
mutate(const char *seed, char *out, size_t cap)
{
	static const char frag[][8] = { "(",  ")", "[", "]",  "{",  "}",  "'", "\"", "$$",
					"?",  ":", ",", ";",  "--", "/*", "-", "0x", "AND",
					"IF", "1", "=", "<=", " ",  ".",  "\n" };
	size_t n = strlen(seed), i, k, a, b, la, lb;
	unsigned nmut = 1 + (unsigned)(rnd() % 4);
	char tmp[1024];

	memcpy(out, seed, n);
	for (k = 0; k < nmut && n > 0; k++) {
		switch (rnd() % 5) {
		case 0: /* byte flip */
			out[rnd() % n] ^= (char)(1u << (rnd() % 8));
			break;
		case 1: /* random byte */
			out[rnd() % n] = (char)(rnd() & 0xff);
			break;
		case 2: /* truncation */
			n = rnd() % n;
			break;
		case 3: { /* insert a fragment */
			const char *f = frag[rnd() % (sizeof(frag) / sizeof(frag[0]))];
			size_t fl = strlen(f), at = rnd() % (n + 1);

			if (n + fl >= cap)
				break;
			memmove(out + at + fl, out + at, n - at);
			memcpy(out + at, f, fl);
			n += fl;
			break;
		}
		default: /* swap two space-separated tokens */
			a = rnd() % n;
			b = rnd() % n;
			if (a > b) {
				i = a;
				a = b;
				b = i;
			}
			for (la = 0; a + la < b && out[a + la] != ' '; la++)
				;
			for (lb = 0; b + lb < n && out[b + lb] != ' '; lb++)
				;
			if (la == 0 || lb == 0 || a + la > b || b - a > sizeof(tmp) - lb)
				break;
			/* rebuild [a, b+lb): B, middle, A */
			memcpy(tmp, out + b, lb);
			memcpy(tmp + lb, out + a + la, b - a - la);
			memcpy(tmp + lb + (b - a - la), out + a, la);
			memcpy(out + a, tmp, b - a + lb);
			break;
		}
	}
	return n;
}

static void
test_fuzz(void **state)
{
	char buf[1024];
	unsigned i, nok = 0, nfail = 0;
	struct sm_cql_stmt *s;
	size_t n;
	int rc;

	(void)state;
	for (i = 0; i < 100000; i++) {
		char *copy;

		n = mutate(seeds[i % (sizeof(seeds) / sizeof(seeds[0]))], buf, sizeof(buf));
		copy = malloc(n ? n : 1);
		assert_non_null(copy);
		memcpy(copy, buf, n);
		errbuf[0] = 'x';
		rc = sm_cql_parse(copy, n, &s, errbuf, sizeof(errbuf));
		free(copy);
		if (rc == 0) {
			assert_non_null(s);
			nok++;
			sm_cql_stmt_free(s);
			continue;
		}
		nfail++;
		assert_null(s);
		if (rc != -EBADMSG && rc != -EINVAL && rc != -ENOTSUP)
			fail_msg("iteration %u: rc %d", i, rc);
		assert_true(errbuf[0] != '\0');
		assert_true(strlen(errbuf) < sizeof(errbuf));
	}
	/* both outcomes must occur, or the mutations test nothing */
	assert_true(nok > 1000);
	assert_true(nfail > 1000);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_use),
		cmocka_unit_test(test_create_keyspace),
		cmocka_unit_test(test_create_table),
		cmocka_unit_test(test_select),
		cmocka_unit_test(test_driver_system_queries),
		cmocka_unit_test(test_insert),
		cmocka_unit_test(test_update),
		cmocka_unit_test(test_delete),
		cmocka_unit_test(test_batch),
		cmocka_unit_test(test_literals),
		cmocka_unit_test(test_comments_whitespace),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_error_positions),
		cmocka_unit_test(test_duplicate_properties),
		cmocka_unit_test(test_unsupported),
		cmocka_unit_test(test_create_index),
		cmocka_unit_test(test_create_view),
		cmocka_unit_test(test_user_types),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_large),
		cmocka_unit_test(test_fuzz),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
