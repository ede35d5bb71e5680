/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_INDEX_H
#define SM_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sm_schema.h"

/*
 * CQL secondary indexes as ScyllaDB builds them (index/
 * secondary_index_manager.cc, db/view/view.cc): each index is a view table
 * "<index>_index" in the base table's keyspace. A global index is
 * partitioned by the indexed value, its rows clustered by (idx_token, the
 * base key columns the view key lacks), so it lives on the shard that owns
 * the value's token and lists base rows in token order. A local index
 * ((pk), v) is partitioned by the base partition key and clustered by
 * (v, the base clustering columns), on the base partition's shard.
 *
 * The store keeps every index up to date on the base partition's shard:
 * a write to an indexed table reads the indexed cells of the rows it
 * touches before and after applying, then writes the view rows that
 * changed (the old one deleted at the write's timestamp, the new one with
 * the indexed cell's timestamp and TTL, so it expires with it) before the
 * write is answered. This covers INSERT, UPDATE, DELETE (row, cell, range,
 * partition), TTL, LWT and BATCH alike, since they all reach the store as
 * mutations.
 */

/* The view table's options that say which index it is. */
#define SM_INDEX_OPT_NAME "cql:index"	      /* the index name */
#define SM_INDEX_OPT_BASE "cql:index_base"    /* the base table, same keyspace */
#define SM_INDEX_OPT_TARGET "cql:index_target" /* the base column */
#define SM_INDEX_OPT_LOCAL "cql:index_local"   /* "1": a local index */
#define SM_INDEX_OPT_FN "cql:index_fn"	       /* "full", or "": the value */
#define SM_INDEX_TOKEN_COL "idx_token"
#define SM_INDEX_VIEW_SUFFIX "_index"

struct sm_index_def {
	const char *ks;
	const char *table;
	const char *name;   /* NULL or "": <table>_<column>_idx */
	const char *column; /* the base column, as stored */
	const char *fn;	    /* NULL, or "keys", "values", "entries", "full" */
	bool local;	    /* ((pk), column) */
	bool if_not_exists;
};

/*
 * CREATE INDEX: the view table, with ScyllaDB's checks and messages
 * (cql3/statements/create_index_statement.cc). 0 and *next, 1 for an IF
 * NOT EXISTS no-op, -errno with the message (-ENOENT no table or column,
 * -EEXIST the index or an index on the same column exists, -EINVAL an
 * invalid request).
 */
int
sm_catalog_create_index(const struct sm_catalog *cur, const struct sm_index_def *def,
			struct sm_catalog **next, char *err, size_t errlen);

/* DROP INDEX [IF EXISTS] ks.name: 0, 1 (IF EXISTS no-op) or -ENOENT with the message. */
int
sm_catalog_drop_index(const struct sm_catalog *cur, const char *ks, const char *name,
		      bool if_exists, struct sm_catalog **next, char *err, size_t errlen);

/* DROP TABLE that also drops the table's indexes (as ScyllaDB does). */
int
sm_catalog_drop_table_indexed(const struct sm_catalog *cur, const char *ks, const char *table,
			      bool if_exists, struct sm_catalog **next, char *err, size_t errlen);

/* What an index view says about its index. */
struct sm_index_info {
	const char *name;
	const char *base;
	const struct sm_column *target; /* in the base table */
	bool local;
};

/* True when @t is an index's view table (hidden from system_schema.tables). */
bool
sm_table_is_index(const struct sm_table *t);

/* @view's index, resolved against @base: 0, or -EINVAL when it is no index of @base. */
int
sm_index_info(const struct sm_table *view, const struct sm_table *base, struct sm_index_info *out);

/* The @i-th index view of @base in keyspace @k (i from 0), or NULL past the last. */
const struct sm_table *
sm_index_nth(const struct sm_keyspace *k, const struct sm_table *base, unsigned i);

/* The view of index @name in keyspace @k, or NULL. */
const struct sm_table *
sm_index_by_name(const struct sm_keyspace *k, const char *name);

/*
 * Fill @view's rows from @base's existing rows: every shard scans its own
 * partitions in bounded steps (a task each, so no shard stalls) and writes
 * the view rows. done(arg, result) runs on the calling shard when every
 * shard is through (result 0 or -errno).
 */
int
sm_index_backfill(const struct sm_table *view, void (*done)(void *arg, int result), void *arg);

/*
 * CQL materialized views (ScyllaDB's cql3/statements/create_view_statement.cc,
 * db/view/view.cc): a view is a table of its own whose rows the store
 * keeps as a copy of the base rows, keyed by the view's primary key (every
 * base key column, and at most one base regular column). Each base row has
 * at most one view row; both are written on the base partition's shard
 * (the view row is replaced as a whole from the base row's post-image, so
 * a view row that moved away and back carries no stale tombstone: the
 * outcome of ScyllaDB's shadowable tombstone).
 */
#define SM_VIEW_OPT_BASE "cql:view_base"   /* the base table, same keyspace */
#define SM_VIEW_OPT_ALL "cql:view_all"	   /* "1": SELECT * */
#define SM_VIEW_OPT_WHERE "cql:view_where" /* the WHERE clause, as CQL text */
#define SM_VIEW_MAX_PER_TABLE 8u

struct sm_view_def {
	const char *ks;
	const char *name;
	const char *base_ks; /* NULL: ks */
	const char *base;
	bool if_not_exists;
	bool star;
	const char *const *cols; /* selected columns (not star) */
	unsigned ncols;
	const char *const *not_null; /* IS NOT NULL columns */
	unsigned nnot_null;
	const char *const *pk;
	unsigned npk;
	const char *const *ck;
	const bool *ck_desc; /* one per ck */
	unsigned nck;
	const struct sm_option *options; /* checked WITH options */
	unsigned noptions;
	int32_t default_ttl;
};

/* True when @t is a materialized view (hidden from system_schema.tables). */
bool
sm_table_is_mv(const struct sm_table *t);

/* The base table's name of view @t, or NULL when @t is no materialized view. */
const char *
sm_view_base(const struct sm_table *t);

/* The @i-th materialized view of @base in keyspace @k (i from 0), or NULL past the last. */
const struct sm_table *
sm_view_nth(const struct sm_keyspace *k, const struct sm_table *base, unsigned i);

/*
 * CREATE MATERIALIZED VIEW with ScyllaDB's checks and messages. 0 and
 * *next, 1 for an IF NOT EXISTS no-op, -errno with the message (-ENOENT
 * no keyspace or base, -EEXIST the name is taken, -EINVAL invalid).
 */
int
sm_catalog_create_view(const struct sm_catalog *cur, const struct sm_view_def *def,
		       struct sm_catalog **next, char *err, size_t errlen);

/* DROP MATERIALIZED VIEW [IF EXISTS]: 0, 1 (IF EXISTS no-op) or -errno with the message. */
int
sm_catalog_drop_view(const struct sm_catalog *cur, const char *ks, const char *name,
		     bool if_exists, struct sm_catalog **next, char *err, size_t errlen);

/*
 * Fill materialized view @view from its base's existing rows, in bounded
 * steps on every shard, as sm_index_backfill().
 */
int
sm_view_backfill(const struct sm_table *view, void (*done)(void *arg, int result), void *arg);

#endif /* SM_INDEX_H */
