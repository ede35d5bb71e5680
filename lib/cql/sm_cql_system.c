/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The system tables' definitions and reads.
 *
 * The definitions live in a private catalog per shard. A select has
 * sm_cql_system_rows.c fill a per-shard scratch area with the rows of the
 * partitions it can touch, sorts them into key order and walks them the
 * way the store walks a partition: clustering slices, reversed,
 * per-partition limit, limit. The scratch area only grows, so a warm read
 * allocates nothing.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nettle/md5.h>

#include "sm_core.h"
#include "cql_system_priv.h"

#define SCHEMA_GC_GRACE 604800 /* system_schema: 7 days, as Scylla */

/* Seconds at the first shard's init: one value for every shard. */
static int32_t gossip_generation;

static __thread struct sys_state *st;

bool
sm_cql_system_keyspace(const char *ks)
{
	return ks != NULL && (strcmp(ks, SYS_KS) == 0 || strcmp(ks, SCHEMA_KS) == 0);
}

/* ---- the table definitions ---- */

#define PK SM_COL_PARTITION
#define CK SM_COL_CLUSTERING
#define RG SM_COL_REGULAR

static const struct sm_column_def local_cols[] = {
	[LOCAL_KEY] = { "key", "text", PK, false },
	[LOCAL_BOOTSTRAPPED] = { "bootstrapped", "text", RG, false },
	[LOCAL_BROADCAST_ADDRESS] = { "broadcast_address", "inet", RG, false },
	[LOCAL_CLUSTER_NAME] = { "cluster_name", "text", RG, false },
	[LOCAL_CQL_VERSION] = { "cql_version", "text", RG, false },
	[LOCAL_DATA_CENTER] = { "data_center", "text", RG, false },
	[LOCAL_GOSSIP_GENERATION] = { "gossip_generation", "int", RG, false },
	[LOCAL_HOST_ID] = { "host_id", "uuid", RG, false },
	[LOCAL_LISTEN_ADDRESS] = { "listen_address", "inet", RG, false },
	[LOCAL_NATIVE_PROTOCOL_VERSION] = { "native_protocol_version", "text", RG, false },
	[LOCAL_PARTITIONER] = { "partitioner", "text", RG, false },
	[LOCAL_RACK] = { "rack", "text", RG, false },
	[LOCAL_RELEASE_VERSION] = { "release_version", "text", RG, false },
	[LOCAL_RPC_ADDRESS] = { "rpc_address", "inet", RG, false },
	[LOCAL_SCHEMA_VERSION] = { "schema_version", "uuid", RG, false },
	[LOCAL_SCYLLA_CPU_SHARDING_ALGORITHM] = { "scylla_cpu_sharding_algorithm", "text", RG,
						  false },
	[LOCAL_SCYLLA_MSB_IGNORE] = { "scylla_msb_ignore", "int", RG, false },
	[LOCAL_SCYLLA_NR_SHARDS] = { "scylla_nr_shards", "int", RG, false },
	[LOCAL_SUPPORTED_FEATURES] = { "supported_features", "text", RG, false },
	[LOCAL_THRIFT_VERSION] = { "thrift_version", "text", RG, false },
	[LOCAL_TOKENS] = { "tokens", "set<text>", RG, false },
	[LOCAL_TRUNCATED_AT] = { "truncated_at", "map<uuid, blob>", RG, false },
};

static const struct sm_column_def peers_cols[] = {
	[PEERS_PEER] = { "peer", "inet", PK, false },
	[PEERS_DATA_CENTER] = { "data_center", "text", RG, false },
	[PEERS_HOST_ID] = { "host_id", "uuid", RG, false },
	[PEERS_PREFERRED_IP] = { "preferred_ip", "inet", RG, false },
	[PEERS_RACK] = { "rack", "text", RG, false },
	[PEERS_RELEASE_VERSION] = { "release_version", "text", RG, false },
	[PEERS_RPC_ADDRESS] = { "rpc_address", "inet", RG, false },
	[PEERS_SCHEMA_VERSION] = { "schema_version", "uuid", RG, false },
	[PEERS_SUPPORTED_FEATURES] = { "supported_features", "text", RG, false },
	[PEERS_TOKENS] = { "tokens", "set<text>", RG, false },
};

/* Cassandra 4's: PRIMARY KEY ((peer), peer_port). */
static const struct sm_column_def peers_v2_cols[] = {
	[PV2_PEER] = { "peer", "inet", PK, false },
	[PV2_PEER_PORT] = { "peer_port", "int", CK, false },
	[PV2_DATA_CENTER] = { "data_center", "text", RG, false },
	[PV2_HOST_ID] = { "host_id", "uuid", RG, false },
	[PV2_NATIVE_ADDRESS] = { "native_address", "inet", RG, false },
	[PV2_NATIVE_PORT] = { "native_port", "int", RG, false },
	[PV2_PREFERRED_IP] = { "preferred_ip", "inet", RG, false },
	[PV2_PREFERRED_PORT] = { "preferred_port", "int", RG, false },
	[PV2_RACK] = { "rack", "text", RG, false },
	[PV2_RELEASE_VERSION] = { "release_version", "text", RG, false },
	[PV2_SCHEMA_VERSION] = { "schema_version", "uuid", RG, false },
	[PV2_SUPPORTED_FEATURES] = { "supported_features", "text", RG, false },
	[PV2_TOKENS] = { "tokens", "set<text>", RG, false },
};

static const struct sm_column_def keyspaces_cols[] = {
	[KS_KEYSPACE_NAME] = { "keyspace_name", "text", PK, false },
	[KS_DURABLE_WRITES] = { "durable_writes", "boolean", RG, false },
	[KS_REPLICATION] = { "replication", "frozen<map<text, text>>", RG, false },
};

#define TABLE_OPTION_COLS(name_col)                                                                \
	[TB_KEYSPACE_NAME] = { "keyspace_name", "text", PK, false },                               \
	[TB_TABLE_NAME] = { name_col, "text", CK, false },                                         \
	[TB_BLOOM_FILTER_FP_CHANCE] = { "bloom_filter_fp_chance", "double", RG, false },           \
	[TB_CACHING] = { "caching", "frozen<map<text, text>>", RG, false },                        \
	[TB_COMMENT] = { "comment", "text", RG, false },                                           \
	[TB_COMPACTION] = { "compaction", "frozen<map<text, text>>", RG, false },                  \
	[TB_COMPRESSION] = { "compression", "frozen<map<text, text>>", RG, false },                \
	[TB_CRC_CHECK_CHANCE] = { "crc_check_chance", "double", RG, false },                       \
	[TB_DCLOCAL_READ_REPAIR_CHANCE] = { "dclocal_read_repair_chance", "double", RG, false },   \
	[TB_DEFAULT_TIME_TO_LIVE] = { "default_time_to_live", "int", RG, false },                  \
	[TB_EXTENSIONS] = { "extensions", "frozen<map<text, blob>>", RG, false },                  \
	[TB_GC_GRACE_SECONDS] = { "gc_grace_seconds", "int", RG, false },                          \
	[TB_ID] = { "id", "uuid", RG, false },                                                     \
	[TB_MAX_INDEX_INTERVAL] = { "max_index_interval", "int", RG, false },                      \
	[TB_MEMTABLE_FLUSH_PERIOD_IN_MS] = { "memtable_flush_period_in_ms", "int", RG, false },    \
	[TB_MIN_INDEX_INTERVAL] = { "min_index_interval", "int", RG, false },                      \
	[TB_READ_REPAIR_CHANCE] = { "read_repair_chance", "double", RG, false },                   \
	[TB_SPECULATIVE_RETRY] = { "speculative_retry", "text", RG, false }

static const struct sm_column_def tables_cols[] = {
	TABLE_OPTION_COLS("table_name"),
	[TB_FLAGS] = { "flags", "frozen<set<text>>", RG, false },
};

static const struct sm_column_def views_cols[] = {
	TABLE_OPTION_COLS("view_name"),
	[VW_BASE_TABLE_ID] = { "base_table_id", "uuid", RG, false },
	[VW_BASE_TABLE_NAME] = { "base_table_name", "text", RG, false },
	[VW_INCLUDE_ALL_COLUMNS] = { "include_all_columns", "boolean", RG, false },
	[VW_WHERE_CLAUSE] = { "where_clause", "text", RG, false },
};

static const struct sm_column_def columns_cols[] = {
	[COL_KEYSPACE_NAME] = { "keyspace_name", "text", PK, false },
	[COL_TABLE_NAME] = { "table_name", "text", CK, false },
	[COL_COLUMN_NAME] = { "column_name", "text", CK, false },
	[COL_CLUSTERING_ORDER] = { "clustering_order", "text", RG, false },
	[COL_COLUMN_NAME_BYTES] = { "column_name_bytes", "blob", RG, false },
	[COL_KIND] = { "kind", "text", RG, false },
	[COL_POSITION] = { "position", "int", RG, false },
	[COL_TYPE] = { "type", "text", RG, false },
};

/* What ALTER TABLE ... DROP removed (sm_cql_system_rows.c gen_dropped_columns()). */
static const struct sm_column_def dropped_columns_cols[] = {
	{ "keyspace_name", "text", PK, false }, { "table_name", "text", CK, false },
	{ "column_name", "text", CK, false },	{ "dropped_time", "timestamp", RG, false },
	{ "type", "text", RG, false },
};

static const struct sm_column_def types_cols[] = {
	{ "keyspace_name", "text", PK, false },
	{ "type_name", "text", CK, false },
	{ "field_names", "frozen<list<text>>", RG, false },
	{ "field_types", "frozen<list<text>>", RG, false },
};

/* The tables below are always empty; drivers need their column metadata. */
static const struct sm_column_def functions_cols[] = {
	{ "keyspace_name", "text", PK, false },
	{ "function_name", "text", CK, false },
	{ "argument_types", "frozen<list<text>>", CK, false },
	{ "argument_names", "frozen<list<text>>", RG, false },
	{ "body", "text", RG, false },
	{ "called_on_null_input", "boolean", RG, false },
	{ "language", "text", RG, false },
	{ "return_type", "text", RG, false },
};

static const struct sm_column_def aggregates_cols[] = {
	{ "keyspace_name", "text", PK, false },
	{ "aggregate_name", "text", CK, false },
	{ "argument_types", "frozen<list<text>>", CK, false },
	{ "final_func", "text", RG, false },
	{ "initcond", "text", RG, false },
	{ "return_type", "text", RG, false },
	{ "state_func", "text", RG, false },
	{ "state_type", "text", RG, false },
};

static const struct sm_column_def indexes_cols[] = {
	{ "keyspace_name", "text", PK, false },
	{ "table_name", "text", CK, false },
	{ "index_name", "text", CK, false },
	{ "kind", "text", RG, false },
	{ "options", "frozen<map<text, text>>", RG, false },
};

static const struct sm_column_def triggers_cols[] = {
	{ "keyspace_name", "text", PK, false },
	{ "table_name", "text", CK, false },
	{ "trigger_name", "text", CK, false },
	{ "options", "frozen<map<text, text>>", RG, false },
};

/* ScyllaDB's own system tables, which its drivers and tools read to know it (docs/dev/
 * system_keyspace.md): rows in sm_cql_system_rows.c */
static const struct sm_column_def scylla_local_cols[] = {
	{ "key", "text", PK, false },
	{ "value", "text", RG, false },
};

static const struct sm_column_def versions_cols[] = {
	{ "key", "text", PK, false },	     { "build_id", "text", RG, false },
	{ "build_mode", "text", RG, false }, { "compatible_version", "text", RG, false },
	{ "version", "text", RG, false },
};

/*
 * ScyllaDB's system.tablets (replica/tablets.cc make_tablets_schema()): one
 * partition per tablets table, a row per tablet. The replica sets are
 * list<frozen<tuple<uuid, int>>> there; frozen here, where every system
 * column is a single cell (the same bytes on the wire).
 */
static const struct sm_column_def tablets_cols[] = {
	{ "table_id", "uuid", PK, false },
	{ "tablet_count", "int", SM_COL_STATIC, false },
	{ "keyspace_name", "text", SM_COL_STATIC, false },
	{ "table_name", "text", SM_COL_STATIC, false },
	{ "last_token", "bigint", CK, false },
	{ "replicas", "frozen<list<frozen<tuple<uuid, int>>>>", RG, false },
	{ "new_replicas", "frozen<list<frozen<tuple<uuid, int>>>>", RG, false },
	{ "stage", "text", RG, false },
	{ "transition", "text", RG, false },
	{ "session", "uuid", RG, false },
	{ "resize_type", "text", SM_COL_STATIC, false },
	{ "resize_seq_number", "bigint", SM_COL_STATIC, false },
};

/* db/schema_tables.cc scylla_keyspaces(): a row per keyspace with tablets */
static const struct sm_column_def scylla_keyspaces_cols[] = {
	{ "keyspace_name", "text", PK, false },
	{ "storage_type", "text", RG, false },
	{ "storage_options", "frozen<map<text, text>>", RG, false },
	{ "initial_tablets", "int", RG, false },
};

#define SYSTAB(ks_, name_, comment_, gc_, cols_)                                                   \
	{                                                                                          \
		.ks = ks_, .name = name_, .comment = comment_, .gc_grace = gc_, .cols = cols_,     \
		.ncols = SM_ARRAY_SIZE(cols_)                                                      \
	}

/* Scylla's comments; gc_grace_seconds 0 for system (Cassandra), 7 days for system_schema. */
static const struct systab_def systab_defs[SYS_NTABLES] = {
	[SYS_LOCAL] = SYSTAB(SYS_KS, "local", "information about the local node", 0, local_cols),
	[SYS_PEERS] = SYSTAB(SYS_KS, "peers", "information about known peers in the cluster", 0,
			     peers_cols),
	[SYS_PEERS_V2] = SYSTAB(SYS_KS, "peers_v2", "information about known peers in the cluster",
				0, peers_v2_cols),
	[SYS_KEYSPACES] = SYSTAB(SCHEMA_KS, "keyspaces", "keyspace definitions", SCHEMA_GC_GRACE,
				 keyspaces_cols),
	[SYS_TABLES] =
		SYSTAB(SCHEMA_KS, "tables", "table definitions", SCHEMA_GC_GRACE, tables_cols),
	[SYS_COLUMNS] =
		SYSTAB(SCHEMA_KS, "columns", "column definitions", SCHEMA_GC_GRACE, columns_cols),
	[SYS_DROPPED_COLUMNS] = SYSTAB(SCHEMA_KS, "dropped_columns", "dropped column registry",
				       SCHEMA_GC_GRACE, dropped_columns_cols),
	[SYS_TYPES] = SYSTAB(SCHEMA_KS, "types", "user defined type definitions", SCHEMA_GC_GRACE,
			     types_cols),
	[SYS_FUNCTIONS] = SYSTAB(SCHEMA_KS, "functions", "user defined function definitions",
				 SCHEMA_GC_GRACE, functions_cols),
	[SYS_AGGREGATES] = SYSTAB(SCHEMA_KS, "aggregates", "user defined aggregate definitions",
				  SCHEMA_GC_GRACE, aggregates_cols),
	[SYS_VIEWS] = SYSTAB(SCHEMA_KS, "views", "view definitions", SCHEMA_GC_GRACE, views_cols),
	[SYS_INDEXES] = SYSTAB(SCHEMA_KS, "indexes", "secondary index definitions", SCHEMA_GC_GRACE,
			       indexes_cols),
	[SYS_TRIGGERS] = SYSTAB(SCHEMA_KS, "triggers", "trigger definitions", SCHEMA_GC_GRACE,
				triggers_cols),
	[SYS_SCYLLA_LOCAL] = SYSTAB(SYS_KS, "scylla_local",
				    "Scylla specific information about the local node", 0,
				    scylla_local_cols),
	[SYS_VERSIONS] = SYSTAB(SYS_KS, "versions", "Version information", 0, versions_cols),
	[SYS_TABLETS] = SYSTAB(SYS_KS, "tablets", "", 0, tablets_cols),
	[SYS_SCYLLA_KEYSPACES] =
		SYSTAB(SCHEMA_KS, "scylla_keyspaces", "scylla-specific information for keyspaces",
		       SCHEMA_GC_GRACE, scylla_keyspaces_cols),
};

/* ---- per-shard setup ---- */

/* Install the result of a catalog DDL: 0, or -errno. */
static int
cat_step(struct sys_state *s, int ret, struct sm_catalog *next)
{
	if (ret < 0)
		return ret;
	sm_catalog_put(s->cat);
	s->cat = next;
	return 0;
}

static int
define_table(struct sys_state *s, unsigned ti)
{
	const struct systab_def *d = &systab_defs[ti];
	struct systab *tab = &s->tabs[ti];
	char k_comment[] = "comment", k_gc[] = "gc_grace_seconds";
	char v_comment[128], v_gc[16];
	struct sm_option o[2] = { { k_comment, v_comment }, { k_gc, v_gc } };
	struct sm_table_def def = {
		.ks = d->ks,
		.name = d->name,
		.cols = d->cols,
		.ncols = d->ncols,
		.options = o,
		.noptions = SM_ARRAY_SIZE(o),
	};
	struct sm_catalog *next;
	uint8_t digest[MD5_DIGEST_SIZE];
	struct md5_ctx md5;
	struct sm_table *t;
	char err[256];
	unsigned i;
	int ret;

	if (d->ncols > SYS_MAX_COLS)
		return -EINVAL;
	snprintf(v_comment, sizeof(v_comment), "%s", d->comment);
	snprintf(v_gc, sizeof(v_gc), "%d", d->gc_grace);
	ret = sm_catalog_create_table(s->cat, &def, false, &next, err, sizeof(err));
	ret = cat_step(s, ret, next);
	if (ret < 0) {
		SM_ERR("system table %s.%s: %s", d->ks, d->name, err);
		return ret;
	}
	/* Our catalog, so writable: a name-based id as Scylla's generate_legacy_id,
	 * the same on every shard and node. */
	t = (struct sm_table *)(uintptr_t)sm_catalog_table(s->cat, d->ks, d->name);
	md5_init(&md5);
	md5_update(&md5, strlen(d->ks), (const uint8_t *)d->ks);
	md5_update(&md5, strlen(d->name), (const uint8_t *)d->name);
	md5_digest(&md5, sizeof(digest), digest);
	sm_uuid_from_md5(digest, 3, &t->id);
	tab->def = d;
	for (i = 0; i < d->ncols; i++)
		tab->def_of[sm_table_column(t, d->cols[i].name)->id] = (uint8_t)i;
	return 0;
}

int
sm_cql_system_shard_init(const struct sm_cql_cluster *cl)
{
	/* LocalStrategy: the catalog accepts it and keeps it as given. */
	char k_class[] = "class", v_local[] = "LocalStrategy";
	struct sm_option local = { k_class, v_local };
	struct sm_keyspace_def ks = { .replication = &local,
				      .nreplication = 1,
				      .durable_writes = true };
	const char *names[] = { SYS_KS, SCHEMA_KS };
	struct sm_catalog *next;
	int32_t zero = 0, now = (int32_t)time(NULL);
	struct sys_state *s;
	char err[256];
	unsigned i;
	int ret = -ENOMEM;

	__atomic_compare_exchange_n(&gossip_generation, &zero, now, false, __ATOMIC_RELAXED,
				    __ATOMIC_RELAXED);
	s = sm_calloc(1, sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	s->cl = cl;
	s->gossip_generation = __atomic_load_n(&gossip_generation, __ATOMIC_RELAXED);
	s->bcap = 16384;
	s->rcap = 64;
	s->buf = sm_malloc(s->bcap);
	s->rows = sm_malloc(s->rcap * sizeof(*s->rows));
	s->cat = sm_catalog_new();
	if (s->buf == NULL || s->rows == NULL || s->cat == NULL)
		goto fail;
	for (i = 0; i < SM_ARRAY_SIZE(names); i++) {
		ks.name = names[i];
		ret = sm_catalog_create_keyspace(s->cat, &ks, false, &next, err, sizeof(err));
		ret = cat_step(s, ret, next);
		if (ret < 0) {
			SM_ERR("system keyspace %s: %s", names[i], err);
			goto fail;
		}
	}
	for (i = 0; i < SYS_NTABLES; i++) {
		ret = define_table(s, i);
		if (ret < 0)
			goto fail;
	}
	/* Table pointers last: the catalog snapshot changed with every table. */
	for (i = 0; i < SYS_NTABLES; i++)
		s->tabs[i].t = sm_catalog_table(s->cat, systab_defs[i].ks, systab_defs[i].name);
	st = s;
	return 0;
fail:
	sm_catalog_put(s->cat);
	sm_free(s->rows);
	sm_free(s->buf);
	sm_free(s);
	return ret == -ENOMEM || ret == 0 ? -ENOMEM : ret;
}

void
sm_cql_system_shard_fini(void)
{
	struct sys_state *s = st;

	if (s == NULL)
		return;
	st = NULL;
	sm_catalog_put(s->cat);
	sm_free(s->cells);
	sm_free(s->rows);
	sm_free(s->buf);
	sm_free(s);
}

const struct sm_table *
sm_cql_system_table(const char *ks, const char *name)
{
	unsigned i;

	if (st == NULL || ks == NULL || name == NULL)
		return NULL;
	for (i = 0; i < SYS_NTABLES; i++)
		if (strcmp(systab_defs[i].ks, ks) == 0 && strcmp(systab_defs[i].name, name) == 0)
			return st->tabs[i].t;
	return NULL;
}

/* ---- select ---- */

static int
key_part_cmp(const struct sys_state *s, const struct sys_row *a, const struct sys_row *b,
	     unsigned id)
{
	const struct sm_column *col = &s->tab->t->cols[id];
	unsigned d = s->tab->def_of[id];
	int c = sm_value_compare(col->type, sys_cell_bytes(s, a, d), sys_cell_bytes(s, b, d));

	return col->desc ? -c : c;
}

/* Partition key, then clustering key in clustering order. */
static int
row_cmp(const void *x, const void *y)
{
	const struct sm_table *t = st->tab->t;
	unsigned i;
	int c;

	for (i = 0; i < (unsigned)t->npk + t->nck; i++) {
		c = key_part_cmp(st, x, y, i);
		if (c != 0)
			return c;
	}
	return 0;
}

static bool
same_partition(const struct sys_state *s, const struct sys_row *a, const struct sys_row *b)
{
	unsigned i;

	for (i = 0; i < s->tab->t->npk; i++)
		if (key_part_cmp(s, a, b, i) != 0)
			return false;
	return true;
}

static void
row_key(const struct sys_state *s, const struct sys_row *r, unsigned first, unsigned n,
	struct sm_key *k)
{
	unsigned i;

	k->n = n;
	for (i = 0; i < n; i++)
		k->part[i] = sys_cell_bytes(s, r, s->tab->def_of[first + i]);
}

/* The store's slice test: the row's clustering prefix against a bound. */
static int
ck_cmp_prefix(const struct sm_table *t, const struct sm_key *ck, const struct sm_key *b)
{
	unsigned n = SM_MIN(ck->n, b->n), i;

	for (i = 0; i < n; i++) {
		const struct sm_column *col = &t->cols[t->npk + i];
		int c = sm_value_compare(col->type, ck->part[i], b->part[i]);

		if (c != 0)
			return col->desc ? -c : c;
	}
	return 0;
}

static bool
after_start(const struct sm_table *t, const struct sm_key *ck, const struct sm_ck_bound *b)
{
	int c;

	if (b->prefix.n == 0)
		return true;
	c = ck_cmp_prefix(t, ck, &b->prefix);
	return c > 0 || (c == 0 && b->inclusive);
}

static bool
before_end(const struct sm_table *t, const struct sm_key *ck, const struct sm_ck_bound *b)
{
	int c;

	if (b->prefix.n == 0)
		return true;
	c = ck_cmp_prefix(t, ck, &b->prefix);
	return c < 0 || (c == 0 && b->inclusive);
}

static int
emit_row(struct sys_state *s, struct sm_select *sel, const struct sys_row *r,
	 const struct sm_key *pk, const struct sm_key *ck)
{
	struct sm_row_view rv = {
		.table = sel->table,
		.token = sm_key_token(pk),
		.pk = pk,
		.ck = ck,
		.cells = s->cells,
		.ncells = sel->ncols,
	};
	unsigned i;
	int ret;

	for (i = 0; i < sel->ncols; i++) {
		unsigned d = s->tab->def_of[sel->cols[i]];

		s->cells[i].present = r->c[d].len != SYS_NULL;
		s->cells[i].value = sys_cell_bytes(s, r, d);
		s->cells[i].writetime = 0;
		s->cells[i].ttl = 0;
	}
	ret = sel->sink.row(sel->sink.ctx, &rv);
	if (ret < 0)
		return ret;
	sel->rows++;
	return 0;
}

/*
 * Rows [@first, @end) of one partition through the slices. Returns 1 when
 * the limit is reached, 0 when the partition is done, or the sink's error.
 */
static int
emit_partition(struct sys_state *s, struct sm_select *sel, unsigned first, unsigned end)
{
	static const struct sm_ck_range all = { { { 0 }, true }, { { 0 }, true } };
	const struct sm_table *t = s->tab->t;
	const struct sm_ck_range *ranges = sel->nranges ? sel->ranges : &all;
	unsigned nranges = sel->nranges ? sel->nranges : 1, ri, k;
	uint32_t part_left = sel->per_partition_limit ? sel->per_partition_limit : UINT32_MAX;
	struct sm_key pk, ck;
	int ret;

	row_key(s, &s->rows[first], 0, t->npk, &pk);
	for (ri = 0; ri < nranges; ri++) {
		const struct sm_ck_range *rg = &ranges[sel->reversed ? nranges - 1 - ri : ri];

		for (k = 0; k < end - first; k++) {
			const struct sys_row *r = &s->rows[sel->reversed ? end - 1 - k : first + k];

			row_key(s, r, t->npk, t->nck, &ck);
			if (!sel->reversed) {
				if (!after_start(t, &ck, &rg->start))
					continue;
				if (!before_end(t, &ck, &rg->end))
					break;
			} else {
				if (!before_end(t, &ck, &rg->end))
					continue;
				if (!after_start(t, &ck, &rg->start))
					break;
			}
			if (sel->limit != 0 && sel->rows >= sel->limit)
				return 1;
			if (part_left == 0)
				return 0;
			ret = emit_row(s, sel, r, &pk, &ck);
			if (ret < 0)
				return ret;
			part_left--;
		}
	}
	return 0;
}

void
sm_cql_system_set_view(const struct sm_cql_cluster *cl)
{
	if (st != NULL && cl != NULL)
		st->cl = cl;
}

int
sm_cql_system_select(struct sm_select *sel)
{
	struct sys_state *s = st;
	unsigned i, j;
	int ret = 0;

	sel->rows = 0;
	sel->more = false;
	if (s == NULL)
		return -EINVAL;
	for (i = 0; i < SYS_NTABLES && s->tabs[i].t != sel->table; i++)
		;
	/* A resumed read: the first page already had everything. */
	if (i == SYS_NTABLES || sel->resume)
		return i == SYS_NTABLES ? -EINVAL : 0;
	for (j = 0; j < sel->ncols; j++)
		if (sel->cols[j] >= sel->table->ncols)
			return -EINVAL;
	if (sel->ncols > s->ccap) {
		struct sm_cell_view *c = sm_realloc(s->cells, sel->ncols * sizeof(*c));

		if (c == NULL)
			return -ENOMEM;
		s->cells = c;
		s->ccap = sel->ncols;
	}
	s->tab = &s->tabs[i];
	s->sel = sel;
	s->nrows = 0;
	s->blen = 0;
	s->err = 0;
	cql_system_generate(s, (enum sys_table_index)i);
	if (s->err != 0)
		return s->err;
	qsort(s->rows, s->nrows, sizeof(*s->rows), row_cmp);
	for (i = 0; i < s->nrows && ret == 0; i = j) {
		for (j = i + 1; j < s->nrows && same_partition(s, &s->rows[i], &s->rows[j]); j++)
			;
		ret = emit_partition(s, sel, i, j);
	}
	return ret < 0 ? ret : 0;
}
