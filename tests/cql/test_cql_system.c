/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The system tables: the cluster description (address parsing, host ids,
 * tokens, errors), then, on a one-shard runtime with a user keyspace and
 * tables created through the store, the rows of system.local, peers,
 * peers_v2 and the system_schema tables: content, key order, single
 * partition reads, clustering slices, limits, reversed, empty tables, sink
 * errors and allocation-free warm reads.
 *
 * Checks on the shard count failures (CHECK) and print them; the test
 * asserts after the runtime returned.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sm_core.h"
#include "sm_cql_system.h"

/* ---- the cluster description ---- */

static void
check_uuid(const struct sm_uuid *u, const char *want)
{
	char text[SM_UUID_STRLEN + 1];

	sm_uuid_format(u, text, sizeof(text));
	assert_string_equal(text, want);
}

static void
test_cluster_tokens(void **state)
{
	struct sm_cql_cluster a, b;
	char err[256];
	unsigned i;

	(void)state;
	assert_int_equal(sm_cql_cluster_init(&a, "c1", "10.0.0.2", 9042, " 10.0.0.3 ,10.0.0.1:9043",
					     err, sizeof(err)),
			 0);
	assert_string_equal(a.cluster_name, "c1");
	assert_string_equal(a.data_center, "datacenter1");
	assert_string_equal(a.rack, "rack1");
	assert_int_equal(a.npeers, 2);
	assert_string_equal(a.self.address, "10.0.0.2");
	assert_int_equal(a.self.port, 9042);
	assert_string_equal(a.peers[0].address, "10.0.0.3");
	assert_int_equal(a.peers[0].port, 9042); /* the native port by default */
	assert_string_equal(a.peers[1].address, "10.0.0.1");
	assert_int_equal(a.peers[1].port, 9043);
	/* Ring order 10.0.0.1, .2, .3: the ring split in three, the last at the top. */
	assert_true(a.peers[1].token == INT64_C(-3074457345618258603));
	assert_true(a.self.token == INT64_C(3074457345618258602));
	assert_true(a.peers[0].token == INT64_MAX);
	/* Java's UUID.nameUUIDFromBytes("address:port"). */
	check_uuid(&a.self.host_id, "5d925525-b86b-3e61-9293-367407344148");
	check_uuid(&a.peers[1].host_id, "3ecc9354-c269-3cb3-91b3-41a1e68e6d96");

	/* Node 10.0.0.1:9043's view of the same group agrees on everything. */
	assert_int_equal(sm_cql_cluster_init(&b, NULL, "10.0.0.1", 9043,
					     "10.0.0.3:9042,10.0.0.2:9042", err, sizeof(err)),
			 0);
	assert_string_equal(b.cluster_name, "Test Cluster");
	assert_true(b.self.token == a.peers[1].token);
	assert_memory_equal(&b.self.host_id, &a.peers[1].host_id, sizeof(b.self.host_id));
	for (i = 0; i < 2; i++) {
		const struct sm_cql_node *n = &b.peers[i];
		const struct sm_cql_node *m =
			strcmp(n->address, "10.0.0.2") == 0 ? &a.self : &a.peers[0];

		assert_true(n->token == m->token);
		assert_memory_equal(&n->host_id, &m->host_id, sizeof(n->host_id));
	}
	sm_cql_cluster_free(&a);
	sm_cql_cluster_free(&b);

	/* Alone: one token at the top of the ring; no peers array. */
	assert_int_equal(sm_cql_cluster_init(&a, "c", "127.0.0.1", 9042, "", err, sizeof(err)), 0);
	assert_int_equal(a.npeers, 0);
	assert_null(a.peers);
	assert_true(a.self.token == INT64_MAX);
	sm_cql_cluster_free(&a);
	assert_int_equal(sm_cql_cluster_init(&a, "c", "127.0.0.1", 9042, NULL, err, sizeof(err)),
			 0);
	sm_cql_cluster_free(&a);

	/* IPv6, bracketed with a port or bare; IPv4 sorts first; same address, two ports. */
	assert_int_equal(sm_cql_cluster_init(&a, "c", "::1", 9050,
					     "[fd00::2]:9042, fd00::1,, 10.0.0.9, ::1:9051", err,
					     sizeof(err)),
			 0);
	assert_int_equal(a.npeers, 4);
	assert_string_equal(a.self.address, "::1");
	check_uuid(&a.self.host_id, "67a0bf58-5c72-39d7-819a-a63009b62383");
	assert_string_equal(a.peers[0].address, "fd00::2");
	assert_int_equal(a.peers[0].port, 9042);
	assert_string_equal(a.peers[1].address, "fd00::1");
	assert_int_equal(a.peers[1].port, 9050);
	/* "::1:9051" has many colons: it is the address ::0.1.144.81, not ::1 port 9051. */
	assert_string_equal(a.peers[3].address, "::0.1.144.81");
	/* 10.0.0.9 < ::1 < ::0.1.144.81 < fd00::1 < fd00::2 */
	assert_true(a.peers[2].token < a.self.token);
	assert_true(a.self.token < a.peers[3].token);
	assert_true(a.peers[3].token < a.peers[1].token);
	assert_true(a.peers[1].token < a.peers[0].token);
	assert_true(a.peers[0].token == INT64_MAX);
	sm_cql_cluster_free(&a);
}

static void
expect_einval(const char *listen, uint16_t port, const char *peers, const char *needle)
{
	struct sm_cql_cluster cl;
	char err[256] = "";

	assert_int_equal(sm_cql_cluster_init(&cl, "c", listen, port, peers, err, sizeof(err)),
			 -EINVAL);
	if (strstr(err, needle) == NULL)
		fail_msg("message '%s' lacks '%s'", err, needle);
	assert_null(cl.peers);
	assert_int_equal(cl.npeers, 0);
}

static void
test_cluster_errors(void **state)
{
	(void)state;
	expect_einval("10.0.0.1", 9042, "10.0.0.2,10.0.0.1", "'10.0.0.1' is this node");
	expect_einval("10.0.0.1", 9042, "10.0.0.1:9042", "remove it from peers");
	expect_einval("10.0.0.1", 9042, "10.0.0.2, 10.0.0.2:9042",
		      "'10.0.0.2:9042' is listed twice");
	expect_einval("10.0.0.1", 9042, "10.0.0.300", "'10.0.0.300' is not a numeric");
	expect_einval("10.0.0.1", 9042, "db2.example.com:9042",
		      "'db2.example.com' is not a numeric");
	expect_einval("10.0.0.1", 9042, "10.0.0.2:0", "port '0'");
	expect_einval("10.0.0.1", 9042, "10.0.0.2:99999", "port '99999'");
	expect_einval("10.0.0.1", 9042, "10.0.0.2:", "port ''");
	expect_einval("10.0.0.1", 9042, "[fd00::1", "[address]:port");
	expect_einval("10.0.0.1", 9042, "[fd00::1]x", "[address]:port");
	expect_einval("10.0.0.1", 9042, "0.0.0.0", "unspecified");
	expect_einval("localhost", 9042, "", "listen_address 'localhost'");
	expect_einval(NULL, 9042, "", "listen_address");
	expect_einval("0.0.0.0", 9042, "10.0.0.2", "listen_address 0.0.0.0 cannot name");
	expect_einval("10.0.0.1", 0, "", "native_transport_port 0");
}

/* ---- the tables on a running shard ---- */

static unsigned fails;

static void __attribute__((format(printf, 2, 3))) check_failed(int line, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;

	if (fails++ >= 30)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "test_cql_system.c:%d: check failed: %s\n", line, msg);
}

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond))                                                                       \
			check_failed(__LINE__, "(" #cond ") " __VA_ARGS__);                        \
	} while (0)

/* Rows a select returned, each as its cells' CQL literals joined by " | ". */
#define MAX_ROWS 400
#define ROW_LEN 512
struct collected {
	const uint16_t *cols;
	unsigned n;
	char rows[MAX_ROWS][ROW_LEN];
};

static struct collected got;

static int
collect(void *ctx, const struct sm_row_view *r)
{
	struct collected *c = ctx;
	char *b;
	size_t off = 0;
	unsigned i;

	if (c->n == MAX_ROWS)
		return -ENOSPC;
	b = c->rows[c->n];
	b[0] = '\0';
	for (i = 0; i < r->ncells && off < ROW_LEN - 1; i++) {
		const struct sm_column *col = &r->table->cols[c->cols[i]];

		if (i > 0)
			off += (size_t)snprintf(b + off, ROW_LEN - off, " | ");
		if (off >= ROW_LEN - 1)
			break;
		if (r->cells[i].present)
			off += sm_value_format(col->type, r->cells[i].value, b + off,
					       ROW_LEN - off);
		else
			off += (size_t)snprintf(b + off, ROW_LEN - off, "null");
		CHECK(r->cells[i].writetime == 0 && r->cells[i].ttl == 0);
	}
	c->n++;
	return 0;
}

/* A select to run: @cols a comma-separated list or "*"; @pk NULL for every partition. */
struct query {
	const char *ks, *table, *cols, *pk;
	const char *start[2], *end[2]; /* a clustering slice of text prefixes */
	bool start_excl, end_excl;
	uint32_t limit, per_partition_limit;
	bool reversed;
};

static uint16_t col_ids[64];

/* Run @q, collecting into got; returns the select's result. */
static int
run(const struct query *q, struct sm_select *sel)
{
	const struct sm_table *t = sm_cql_system_table(q->ks, q->table);
	struct sm_ck_range rg;
	char cols[512], *tok, *save;
	unsigned n = 0, i;

	memset(sel, 0, sizeof(*sel));
	memset(&rg, 0, sizeof(rg));
	got.n = 0;
	got.cols = col_ids;
	if (t == NULL) {
		CHECK(false, "no table %s.%s", q->ks, q->table);
		return -ENOENT;
	}
	if (strcmp(q->cols, "*") == 0) {
		for (n = 0; n < t->ncols; n++)
			col_ids[n] = (uint16_t)n;
	} else {
		snprintf(cols, sizeof(cols), "%s", q->cols);
		for (tok = strtok_r(cols, ",", &save); tok != NULL;
		     tok = strtok_r(NULL, ",", &save)) {
			const struct sm_column *c = sm_table_column(t, tok);

			CHECK(c != NULL, "no column %s in %s", tok, q->table);
			col_ids[n++] = c != NULL ? c->id : 0;
		}
	}
	sel->table = t;
	sel->range = q->pk == NULL;
	sel->token_start = INT64_MIN;
	sel->token_end = INT64_MAX;
	if (q->pk != NULL) {
		sel->pk.n = 1;
		sel->pk.part[0].p = (const uint8_t *)q->pk;
		sel->pk.part[0].len = (uint32_t)strlen(q->pk);
	}
	for (i = 0; i < 2; i++) {
		if (q->start[i] != NULL) {
			rg.start.prefix.part[i].p = (const uint8_t *)q->start[i];
			rg.start.prefix.part[i].len = (uint32_t)strlen(q->start[i]);
			rg.start.prefix.n = i + 1;
		}
		if (q->end[i] != NULL) {
			rg.end.prefix.part[i].p = (const uint8_t *)q->end[i];
			rg.end.prefix.part[i].len = (uint32_t)strlen(q->end[i]);
			rg.end.prefix.n = i + 1;
		}
	}
	rg.start.inclusive = !q->start_excl;
	rg.end.inclusive = !q->end_excl;
	if (q->start[0] != NULL || q->end[0] != NULL) {
		sel->ranges = &rg;
		sel->nranges = 1;
	}
	sel->reversed = q->reversed;
	sel->cols = col_ids;
	sel->ncols = n;
	sel->limit = q->limit;
	sel->per_partition_limit = q->per_partition_limit;
	sel->sink.row = collect;
	sel->sink.ctx = &got;
	sel->more = true; /* must come back false */
	return sm_cql_system_select(sel);
}

/* Run @q and compare its rows with @want (NULL-terminated). */
static void
expect_rows(int line, const struct query *q, const char *const *want)
{
	struct sm_select sel;
	unsigned n = 0, i;
	int ret = run(q, &sel);

	while (want[n] != NULL)
		n++;
	if (ret != 0 || got.n != n || sel.rows != n || sel.more) {
		check_failed(line, "%s.%s: result %d, %u rows (sel.rows %u, more %d), want %u",
			     q->ks, q->table, ret, got.n, sel.rows, sel.more, n);
		for (i = 0; i < got.n; i++)
			fprintf(stderr, "    got  %s\n", got.rows[i]);
		return;
	}
	for (i = 0; i < n; i++)
		if (strcmp(got.rows[i], want[i]) != 0)
			check_failed(line, "%s.%s row %u:\n    got  %s\n    want %s", q->ks,
				     q->table, i, got.rows[i], want[i]);
}

#define EXPECT(q, ...) expect_rows(__LINE__, q, (const char *const[]){ __VA_ARGS__, NULL })
#define EXPECT_NONE(q) expect_rows(__LINE__, q, (const char *const[]){ NULL })

static struct sm_cql_cluster cluster;

static void
uuid_text(const struct sm_uuid *u, char *buf)
{
	sm_uuid_format(u, buf, SM_UUID_STRLEN + 1);
}

static void
check_local_and_peers(void)
{
	const struct sm_catalog *cat = sm_store_catalog();
	const struct sm_cql_node *p1 = &cluster.peers[1], *p3 = &cluster.peers[0];
	char self_id[40], id1[40], id3[40], ver[40], want[3][512];
	struct query q = { .ks = "system", .table = "local", .pk = "local" };

	uuid_text(&cluster.self.host_id, self_id);
	uuid_text(&p1->host_id, id1);
	uuid_text(&p3->host_id, id3);
	uuid_text(&cat->version, ver);

	q.cols = "key,cluster_name,release_version,partitioner,cql_version,native_protocol_version,"
		 "data_center,rack,rpc_address,listen_address,broadcast_address,tokens,host_id,"
		 "schema_version,bootstrapped,scylla_nr_shards,truncated_at";
	snprintf(want[0], sizeof(want[0]),
		 "'local' | 'sm test' | '3.0.8' | 'org.apache.cassandra.dht.Murmur3Partitioner' | "
		 "'3.3.1' | '4' | 'datacenter1' | 'rack1' | '10.0.0.2' | '10.0.0.2' | '10.0.0.2' | "
		 "{'%" PRId64 "'} | %s | %s | 'COMPLETED' | 1 | null",
		 cluster.self.token, self_id, ver);
	EXPECT(&q, want[0]);

	/* Every column, and the gossip generation is a plausible time. */
	q.cols = "*";
	{
		struct sm_select sel;

		CHECK(run(&q, &sel) == 0 && got.n == 1 && sel.ncols == 22);
		CHECK(strncmp(got.rows[0], "'local' | 'COMPLETED' | '10.0.0.2' | 'sm test' | ",
			      49) == 0,
		      "%s", got.rows[0]);
	}
	q.cols = "gossip_generation";
	run(&q, &(struct sm_select){ 0 });
	CHECK(got.n == 1 && atol(got.rows[0]) > 1600000000, "gossip_generation %s", got.rows[0]);
	q.pk = "remote";
	EXPECT_NONE(&q);

	/* Peers in address order; their schema version is ours. */
	q = (struct query){ .ks = "system",
			    .table = "peers",
			    .cols = "peer,data_center,host_id,rack,release_version,rpc_address,"
				    "schema_version,tokens,preferred_ip" };
	snprintf(want[0], sizeof(want[0]),
		 "'10.0.0.1' | 'datacenter1' | %s | 'rack1' | '3.0.8' | '10.0.0.1' | %s | "
		 "{'%" PRId64 "'} | null",
		 id1, ver, p1->token);
	snprintf(want[1], sizeof(want[1]),
		 "'10.0.0.3' | 'datacenter1' | %s | 'rack1' | '3.0.8' | '10.0.0.3' | %s | "
		 "{'%" PRId64 "'} | null",
		 id3, ver, p3->token);
	EXPECT(&q, want[0], want[1]);

	q = (struct query){
		.ks = "system",
		.table = "peers_v2",
		.cols = "peer,peer_port,native_address,native_port,host_id,schema_version"
	};
	snprintf(want[0], sizeof(want[0]), "'10.0.0.1' | 9043 | '10.0.0.1' | 9043 | %s | %s", id1,
		 ver);
	snprintf(want[1], sizeof(want[1]), "'10.0.0.3' | 9042 | '10.0.0.3' | 9042 | %s | %s", id3,
		 ver);
	EXPECT(&q, want[0], want[1]);
	/* Reversed only reverses clustering order: partitions keep theirs. */
	q.reversed = true;
	EXPECT(&q, want[0], want[1]);
}

static void
check_keyspaces(void)
{
	struct query q = { .ks = "system_schema",
			   .table = "keyspaces",
			   .cols = "keyspace_name,durable_writes,replication" };

	EXPECT(&q,
	       "'ks' | true | {'class': 'org.apache.cassandra.locator.SimpleStrategy', "
	       "'replication_factor': '1'}",
	       "'nts' | false | {'class': 'org.apache.cassandra.locator.NetworkTopologyStrategy', "
	       "'datacenter1': '3'}",
	       "'system' | true | {'class': 'org.apache.cassandra.locator.LocalStrategy'}",
	       "'system_schema' | true | {'class': 'org.apache.cassandra.locator.LocalStrategy'}");
	q.pk = "nts";
	EXPECT(&q,
	       "'nts' | false | {'class': 'org.apache.cassandra.locator.NetworkTopologyStrategy', "
	       "'datacenter1': '3'}");
	q.pk = "missing";
	EXPECT_NONE(&q);
	q.pk = NULL;
	q.limit = 1;
	q.cols = "keyspace_name";
	EXPECT(&q, "'ks'");
}

#define COLS_OF_KS_T                                                                               \
	"'t' | 'ck' | 'clustering' | 0 | 'desc' | 'text' | 0x636b",                                \
		"'t' | 'pk' | 'partition_key' | 0 | 'none' | 'int' | 0x706b",                      \
		"'t' | 's' | 'static' | -1 | 'none' | 'int' | 0x73",                               \
		"'t' | 'v' | 'regular' | -1 | 'none' | 'map<text, int>' | 0x76"

static void
check_columns(void)
{
	struct query q = { .ks = "system_schema",
			   .table = "columns",
			   .cols = "table_name,column_name,kind,position,clustering_order,type,"
				   "column_name_bytes",
			   .pk = "ks" };

	/* A keyspace: its tables, each's columns by name. */
	EXPECT(&q, "'c' | 'n' | 'regular' | -1 | 'none' | 'counter' | 0x6e",
	       "'c' | 'pk' | 'partition_key' | 0 | 'none' | 'int' | 0x706b", COLS_OF_KS_T);
	/* A table: table_name = 't' (a one-component slice). */
	q.start[0] = q.end[0] = "t";
	EXPECT(&q, COLS_OF_KS_T);
	q.start[0] = q.end[0] = "u";
	EXPECT_NONE(&q);
	/* table_name = 't' AND column_name > 'ck' */
	q.start[0] = q.end[0] = "t";
	q.start[1] = "ck";
	q.start_excl = true;
	EXPECT(&q, "'t' | 'pk' | 'partition_key' | 0 | 'none' | 'int' | 0x706b",
	       "'t' | 's' | 'static' | -1 | 'none' | 'int' | 0x73",
	       "'t' | 'v' | 'regular' | -1 | 'none' | 'map<text, int>' | 0x76");
	/* ... AND column_name <= 's', reversed */
	q.end[1] = "s";
	q.reversed = true;
	EXPECT(&q, "'t' | 's' | 'static' | -1 | 'none' | 'int' | 0x73",
	       "'t' | 'pk' | 'partition_key' | 0 | 'none' | 'int' | 0x706b");
	/* limit and per-partition limit */
	q = (struct query){ .ks = "system_schema",
			    .table = "columns",
			    .cols = "keyspace_name,table_name,column_name",
			    .pk = "ks",
			    .limit = 2 };
	EXPECT(&q, "'ks' | 'c' | 'n'", "'ks' | 'c' | 'pk'");
	q.reversed = true;
	q.limit = 3;
	EXPECT(&q, "'ks' | 't' | 'v'", "'ks' | 't' | 's'", "'ks' | 't' | 'pk'");
	q = (struct query){ .ks = "system_schema",
			    .table = "columns",
			    .cols = "keyspace_name,table_name,column_name",
			    .per_partition_limit = 1 };
	EXPECT(&q, "'ks' | 'c' | 'n'", "'system' | 'local' | 'bootstrapped'",
	       "'system_schema' | 'aggregates' | 'aggregate_name'");
	q.limit = 2;
	EXPECT(&q, "'ks' | 'c' | 'n'", "'system' | 'local' | 'bootstrapped'");

	/* The system tables describe themselves. */
	q = (struct query){ .ks = "system_schema",
			    .table = "columns",
			    .cols = "column_name,kind,position,clustering_order,type",
			    .pk = "system",
			    .start = { "peers_v2" },
			    .end = { "peers_v2" } };
	EXPECT(&q, "'data_center' | 'regular' | -1 | 'none' | 'text'",
	       "'host_id' | 'regular' | -1 | 'none' | 'uuid'",
	       "'native_address' | 'regular' | -1 | 'none' | 'inet'",
	       "'native_port' | 'regular' | -1 | 'none' | 'int'",
	       "'peer' | 'partition_key' | 0 | 'none' | 'inet'",
	       "'peer_port' | 'clustering' | 0 | 'asc' | 'int'",
	       "'preferred_ip' | 'regular' | -1 | 'none' | 'inet'",
	       "'preferred_port' | 'regular' | -1 | 'none' | 'int'",
	       "'rack' | 'regular' | -1 | 'none' | 'text'",
	       "'release_version' | 'regular' | -1 | 'none' | 'text'",
	       "'schema_version' | 'regular' | -1 | 'none' | 'uuid'",
	       "'supported_features' | 'regular' | -1 | 'none' | 'text'",
	       "'tokens' | 'regular' | -1 | 'none' | 'set<text>'");
	q.pk = "system_schema";
	q.start[0] = q.end[0] = "functions";
	q.cols = "column_name,kind,position,type";
	EXPECT(&q, "'argument_names' | 'regular' | -1 | 'frozen<list<text>>'",
	       "'argument_types' | 'clustering' | 1 | 'frozen<list<text>>'",
	       "'body' | 'regular' | -1 | 'text'",
	       "'called_on_null_input' | 'regular' | -1 | 'boolean'",
	       "'function_name' | 'clustering' | 0 | 'text'",
	       "'keyspace_name' | 'partition_key' | 0 | 'text'",
	       "'language' | 'regular' | -1 | 'text'", "'return_type' | 'regular' | -1 | 'text'");
}

static void
check_tables(void)
{
	const struct sm_table *t = sm_catalog_table(sm_store_catalog(), "ks", "t");
	const struct sm_table *c = sm_catalog_table(sm_store_catalog(), "ks", "c");
	struct query q = { .ks = "system_schema",
			   .table = "tables",
			   .cols = "keyspace_name,table_name,flags,comment,gc_grace_seconds,"
				   "default_time_to_live,compaction,caching,compression,id,"
				   "speculative_retry,bloom_filter_fp_chance,crc_check_chance,"
				   "read_repair_chance,extensions,max_index_interval",
			   .pk = "ks" };
	char want[2][1024], id[40];

	CHECK(t != NULL && c != NULL);
	if (t == NULL || c == NULL)
		return;
	uuid_text(&c->id, id);
	snprintf(want[0], sizeof(want[0]),
		 "'ks' | 'c' | {'compound', 'counter'} | '' | 864000 | 0 | "
		 "{'class': 'SizeTieredCompactionStrategy'} | "
		 "{'keys': 'ALL', 'rows_per_partition': 'ALL'} | "
		 "{'sstable_compression': 'org.apache.cassandra.io.compress.LZ4Compressor'} | %s | "
		 "'99.0PERCENTILE' | 0.01 | 1.0 | 0.0 | {} | 2048",
		 id);
	uuid_text(&t->id, id);
	/* WITH options given: comment, gc_grace_seconds, a compaction map, a bad caching map. */
	snprintf(want[1], sizeof(want[1]),
		 "'ks' | 't' | {'compound'} | 'it''s t' | 3600 | 86400 | "
		 "{'class': 'LeveledCompactionStrategy', 'sstable_size_in_mb': '160'} | "
		 "{'keys': 'ALL', 'rows_per_partition': 'ALL'} | "
		 "{'sstable_compression': 'org.apache.cassandra.io.compress.LZ4Compressor'} | %s | "
		 "'99.0PERCENTILE' | 0.01 | 1.0 | 0.5 | {} | 2048",
		 id);
	EXPECT(&q, want[0], want[1]);
	q.start[0] = q.end[0] = "t";
	EXPECT(&q, want[1]);

	/* The system tables are listed, with Scylla's name-based ids. */
	q = (struct query){ .ks = "system_schema",
			    .table = "tables",
			    .cols = "table_name,flags,gc_grace_seconds",
			    .pk = "system_schema" };
	EXPECT(&q, "'aggregates' | {'compound'} | 604800", "'columns' | {'compound'} | 604800",
	       "'dropped_columns' | {'compound'} | 604800", "'functions' | {'compound'} | 604800",
	       "'indexes' | {'compound'} | 604800", "'keyspaces' | {'compound'} | 604800",
	       "'scylla_keyspaces' | {'compound'} | 604800", "'tables' | {'compound'} | 604800",
	       "'triggers' | {'compound'} | 604800",
	       "'types' | {'compound'} | 604800", "'views' | {'compound'} | 604800");
	q = (struct query){ .ks = "system_schema",
			    .table = "tables",
			    .cols = "table_name,id,comment",
			    .pk = "system",
			    .start = { "local" },
			    .end = { "local" } };
	EXPECT(&q, "'local' | 7ad54392-bcdd-35a6-8417-4e047860b377 | 'information about the local "
		   "node'");
}

static void
check_empty_tables(void)
{
	static const char *const names[] = { "dropped_columns", "types", "functions",
					     "aggregates",	"views", "indexes",
					     "triggers" };
	struct query q = { .ks = "system_schema", .cols = "*" };
	unsigned i;

	for (i = 0; i < SM_ARRAY_SIZE(names); i++) {
		const struct sm_table *t = sm_cql_system_table("system_schema", names[i]);

		CHECK(t != NULL && t->ncols >= 4 && t->npk == 1 &&
			      strcmp(t->cols[0].name, "keyspace_name") == 0,
		      "%s", names[i]);
		q.table = names[i];
		EXPECT_NONE(&q);
	}
	/* What the drivers read from them is there. */
	CHECK(sm_table_column(sm_cql_system_table("system_schema", "views"),
			      "include_all_columns") != NULL);
	CHECK(sm_table_column(sm_cql_system_table("system_schema", "views"), "base_table_name") !=
	      NULL);
	CHECK(sm_table_column(sm_cql_system_table("system_schema", "triggers"), "options") != NULL);
	CHECK(sm_table_column(sm_cql_system_table("system_schema", "aggregates"), "initcond") !=
	      NULL);
	CHECK(sm_cql_system_table("system_schema", "functions")->nck == 2);
	CHECK(sm_cql_system_table("system", "nope") == NULL);
	CHECK(sm_cql_system_table("ks", "t") == NULL);
	CHECK(sm_cql_system_table("system_schema", "local") == NULL);
	CHECK(sm_cql_system_keyspace("system") && sm_cql_system_keyspace("system_schema"));
	CHECK(!sm_cql_system_keyspace("ks") && !sm_cql_system_keyspace("system_auth"));
}

static int
sink_fails(void *ctx, const struct sm_row_view *r)
{
	(void)ctx;
	(void)r;
	return -EIO;
}

static void
check_errors_and_memory(void)
{
	struct query q = { .ks = "system_schema", .table = "columns", .cols = "*" };
	const struct sm_sw_stats *stats = sm_shard_stats(sm_shard_id());
	struct sm_select sel;
	uint64_t allocs;
	unsigned n;

	/* A warm read allocates nothing. */
	CHECK(run(&q, &sel) == 0 && got.n > 100);
	n = got.n;
	allocs = stats->allocs;
	CHECK(run(&q, &sel) == 0 && got.n == n);
	CHECK(stats->allocs == allocs, "%" PRIu64 " allocations", stats->allocs - allocs);

	/* The sink's error ends the read. */
	run(&q, &sel);
	sel.sink.row = sink_fails;
	CHECK(sm_cql_system_select(&sel) == -EIO && sel.rows == 0);

	/* A resumed read has nothing more: the first page had everything. */
	run(&q, &sel);
	sel.resume = true;
	got.n = 0;
	CHECK(sm_cql_system_select(&sel) == 0 && sel.rows == 0 && got.n == 0 && !sel.more);

	/* A table that is not a system table. */
	run(&q, &sel);
	sel.table = sm_catalog_table(sm_store_catalog(), "ks", "t");
	CHECK(sm_cql_system_select(&sel) == -EINVAL);
}

/* ---- the scenario: DDL through the store, then the checks ---- */

static char o_class[] = "class", o_simple[] = "SimpleStrategy", o_nts[] = "NetworkTopologyStrategy";
static char o_rf[] = "replication_factor", o_one[] = "1", o_three[] = "3";
static const struct sm_option repl_simple[] = { { o_class, o_simple }, { o_rf, o_one } };
static const struct sm_option repl_nts[] = { { o_class, o_nts }, { o_rf, o_three } };

static char k_comment[] = "comment", v_comment[] = "it's t";
static char k_gc[] = "gc_grace_seconds", v_gc[] = "3600";
static char k_compaction[] = "compaction",
	    v_compaction[] = "{'class': 'LeveledCompactionStrategy', 'sstable_size_in_mb': 160}";
static char k_caching[] = "caching", v_caching[] = "{'keys': 'ALL'";
static char k_rr[] = "read_repair_chance", v_rr[] = "0.5";
static const struct sm_option t_options[] = {
	{ k_comment, v_comment }, { k_gc, v_gc }, { k_compaction, v_compaction },
	{ k_caching, v_caching }, { k_rr, v_rr },
};

static const struct sm_column_def t_cols[] = {
	{ "pk", "int", SM_COL_PARTITION, false },
	{ "ck", "text", SM_COL_CLUSTERING, true },
	{ "v", "map<text, int>", SM_COL_REGULAR, false },
	{ "s", "int", SM_COL_STATIC, false },
};
static const struct sm_column_def c_cols[] = {
	{ "pk", "int", SM_COL_PARTITION, false },
	{ "n", "counter", SM_COL_REGULAR, false },
};

static struct sm_ddl_req ddl;
static struct sm_task step_task;
static int step;
static bool finished;

static void
ddl_done(struct sm_ddl_req *r)
{
	CHECK(r->result == 0, "DDL step %d: %d %s", step, r->result, r->err);
	step++;
	sm_task_schedule(&step_task);
}

static void
step_run(void *arg)
{
	(void)arg;
	memset(&ddl, 0, sizeof(ddl));
	ddl.done = ddl_done;
	switch (step) {
	case 0:
		ddl.kind = SM_DDL_CREATE_KEYSPACE;
		ddl.ks.name = "ks";
		ddl.ks.replication = repl_simple;
		ddl.ks.nreplication = SM_ARRAY_SIZE(repl_simple);
		ddl.ks.durable_writes = true;
		break;
	case 1:
		ddl.kind = SM_DDL_CREATE_KEYSPACE;
		ddl.ks.name = "nts";
		ddl.ks.replication = repl_nts;
		ddl.ks.nreplication = SM_ARRAY_SIZE(repl_nts);
		ddl.ks.durable_writes = false;
		break;
	case 2: /* created second to check that rows come in name order */
		ddl.kind = SM_DDL_CREATE_TABLE;
		ddl.table.ks = "ks";
		ddl.table.name = "t";
		ddl.table.cols = t_cols;
		ddl.table.ncols = SM_ARRAY_SIZE(t_cols);
		ddl.table.options = t_options;
		ddl.table.noptions = SM_ARRAY_SIZE(t_options);
		ddl.table.default_ttl = 86400;
		break;
	case 3:
		ddl.kind = SM_DDL_CREATE_TABLE;
		ddl.table.ks = "ks";
		ddl.table.name = "c";
		ddl.table.cols = c_cols;
		ddl.table.ncols = SM_ARRAY_SIZE(c_cols);
		break;
	default:
		check_local_and_peers();
		check_keyspaces();
		check_columns();
		check_tables();
		check_empty_tables();
		check_errors_and_memory();
		finished = true;
		sm_runtime_stop();
		return;
	}
	sm_store_ddl(&ddl);
}

static int
shard_init(unsigned shard, void *arg)
{
	int ret;

	(void)shard;
	(void)arg;
	ret = sm_store_shard_init();
	if (ret < 0)
		return ret;
	ret = sm_cql_system_shard_init(&cluster);
	if (ret < 0)
		return ret;
	sm_task_init(&step_task, step_run, NULL);
	sm_task_schedule(&step_task);
	return 0;
}

static void
shard_fini(unsigned shard, void *arg)
{
	(void)shard;
	(void)arg;
	sm_cql_system_shard_fini();
	sm_store_shard_fini();
}

static void
test_tables(void **state)
{
	struct sm_runtime_opts o = {
		.smp = 1,
		.overprovisioned = true,
		.drain_timeout_ms = 10000,
		.shard_init = shard_init,
		.shard_fini = shard_fini,
	};
	char err[256];

	(void)state;
	/* This node is 10.0.0.2:9042; peers[0] is 10.0.0.3, peers[1] 10.0.0.1:9043. */
	assert_int_equal(sm_cql_cluster_init(&cluster, "sm test", "10.0.0.2", 9042,
					     "10.0.0.3,10.0.0.1:9043", err, sizeof(err)),
			 0);
	if (sm_runtime_run(&o, err, sizeof(err)) < 0)
		fail_msg("runtime: %s", err);
	sm_cql_cluster_free(&cluster);
	assert_true(finished);
	assert_int_equal(fails, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cluster_tokens),
		cmocka_unit_test(test_cluster_errors),
		cmocka_unit_test(test_tables),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
