/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQL_SYSTEM_PRIV_H
#define CQL_SYSTEM_PRIV_H

/*
 * Private to sm_cql_system*.c: the per-shard state of the system tables.
 * sm_cql_system.c defines the tables and runs selects over the rows that
 * sm_cql_system_rows.c generates into the state's scratch area.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sm_cql_system.h"

#define SYS_KS "system"
#define SCHEMA_KS "system_schema"

/* Cells of a generated row are indexed by these, each table's column list order. */
enum {
	LOCAL_KEY,
	LOCAL_BOOTSTRAPPED,
	LOCAL_BROADCAST_ADDRESS,
	LOCAL_CLUSTER_NAME,
	LOCAL_CQL_VERSION,
	LOCAL_DATA_CENTER,
	LOCAL_GOSSIP_GENERATION,
	LOCAL_HOST_ID,
	LOCAL_LISTEN_ADDRESS,
	LOCAL_NATIVE_PROTOCOL_VERSION,
	LOCAL_PARTITIONER,
	LOCAL_RACK,
	LOCAL_RELEASE_VERSION,
	LOCAL_RPC_ADDRESS,
	LOCAL_SCHEMA_VERSION,
	LOCAL_SCYLLA_CPU_SHARDING_ALGORITHM,
	LOCAL_SCYLLA_MSB_IGNORE,
	LOCAL_SCYLLA_NR_SHARDS,
	LOCAL_SUPPORTED_FEATURES,
	LOCAL_THRIFT_VERSION,
	LOCAL_TOKENS,
	LOCAL_TRUNCATED_AT,
};

enum {
	PEERS_PEER,
	PEERS_DATA_CENTER,
	PEERS_HOST_ID,
	PEERS_PREFERRED_IP,
	PEERS_RACK,
	PEERS_RELEASE_VERSION,
	PEERS_RPC_ADDRESS,
	PEERS_SCHEMA_VERSION,
	PEERS_SUPPORTED_FEATURES,
	PEERS_TOKENS,
};

enum {
	PV2_PEER,
	PV2_PEER_PORT,
	PV2_DATA_CENTER,
	PV2_HOST_ID,
	PV2_NATIVE_ADDRESS,
	PV2_NATIVE_PORT,
	PV2_PREFERRED_IP,
	PV2_PREFERRED_PORT,
	PV2_RACK,
	PV2_RELEASE_VERSION,
	PV2_SCHEMA_VERSION,
	PV2_SUPPORTED_FEATURES,
	PV2_TOKENS,
};

enum {
	KS_KEYSPACE_NAME,
	KS_DURABLE_WRITES,
	KS_REPLICATION,
};

/* system_schema.tables; views share the option columns. */
enum {
	TB_KEYSPACE_NAME,
	TB_TABLE_NAME,
	TB_BLOOM_FILTER_FP_CHANCE,
	TB_CACHING,
	TB_COMMENT,
	TB_COMPACTION,
	TB_COMPRESSION,
	TB_CRC_CHECK_CHANCE,
	TB_DCLOCAL_READ_REPAIR_CHANCE,
	TB_DEFAULT_TIME_TO_LIVE,
	TB_EXTENSIONS,
	TB_GC_GRACE_SECONDS,
	TB_ID,
	TB_MAX_INDEX_INTERVAL,
	TB_MEMTABLE_FLUSH_PERIOD_IN_MS,
	TB_MIN_INDEX_INTERVAL,
	TB_READ_REPAIR_CHANCE,
	TB_SPECULATIVE_RETRY,
	TB_NOPTIONS,
	TB_FLAGS = TB_NOPTIONS,
	VW_BASE_TABLE_ID = TB_NOPTIONS,
	VW_BASE_TABLE_NAME,
	VW_INCLUDE_ALL_COLUMNS,
	VW_WHERE_CLAUSE,
};

enum {
	COL_KEYSPACE_NAME,
	COL_TABLE_NAME,
	COL_COLUMN_NAME,
	COL_CLUSTERING_ORDER,
	COL_COLUMN_NAME_BYTES,
	COL_KIND,
	COL_POSITION,
	COL_TYPE,
};

enum {
	TY_KEYSPACE_NAME,
	TY_TYPE_NAME,
	TY_FIELD_NAMES,
	TY_FIELD_TYPES,
};

#define SYS_MAX_COLS 24	    /* the widest system table */
#define SYS_NULL UINT32_MAX /* a null cell's length */

/* The tables, in the order of their definitions. */
enum sys_table_index {
	SYS_LOCAL,
	SYS_PEERS,
	SYS_PEERS_V2,
	SYS_KEYSPACES,
	SYS_TABLES,
	SYS_COLUMNS,
	SYS_DROPPED_COLUMNS,
	SYS_TYPES,
	SYS_FUNCTIONS,
	SYS_AGGREGATES,
	SYS_VIEWS,
	SYS_INDEXES,
	SYS_TRIGGERS,
	SYS_SCYLLA_LOCAL,
	SYS_VERSIONS,
	SYS_TABLETS,
	SYS_SCYLLA_KEYSPACES,
	SYS_NTABLES
};

struct systab_def {
	const char *ks;
	const char *name;
	const char *comment;
	int32_t gc_grace;
	const struct sm_column_def *cols;
	unsigned ncols;
};

struct systab {
	const struct systab_def *def;
	const struct sm_table *t;
	uint8_t def_of[SYS_MAX_COLS]; /* column id -> index in def->cols */
};

/* A cell: @len bytes at @off in the scratch buffer, or SYS_NULL. */
struct sys_cell {
	uint32_t off;
	uint32_t len;
};

struct sys_row {
	size_t start; /* scratch buffer length when the row began */
	struct sys_cell c[SYS_MAX_COLS];
};

struct sys_state {
	const struct sm_cql_cluster *cl;
	int32_t gossip_generation;
	struct sm_catalog *cat; /* system and system_schema */
	struct systab tabs[SYS_NTABLES];
	/* the select in progress */
	const struct systab *tab; /* &tabs[table index] */
	const struct sm_select *sel;
	int err;
	/* scratch, reused by every select */
	uint8_t *buf;
	size_t blen, bcap;
	struct sys_row *rows;
	unsigned nrows, rcap;
	struct sm_cell_view *cells;
	unsigned ccap;
};

static inline struct sm_bytes
sys_cell_bytes(const struct sys_state *s, const struct sys_row *r, unsigned col)
{
	struct sm_bytes b = { s->buf, 0 };

	if (r->c[col].len != SYS_NULL) {
		b.p = s->buf + r->c[col].off;
		b.len = r->c[col].len;
	}
	return b;
}

/*
 * Generate the rows of system table @index (s->tab == &s->tabs[@index])
 * into the scratch area, keeping only those of the partition s->sel names
 * when it reads one. Sets s->err when memory runs out.
 */
void
cql_system_generate(struct sys_state *s, enum sys_table_index index);

#endif /* CQL_SYSTEM_PRIV_H */
