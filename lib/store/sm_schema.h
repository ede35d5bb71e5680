/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_SCHEMA_H
#define SM_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sm_types.h"
#include "sm_uuid.h"

/*
 * The schema catalog: keyspaces and tables.
 *
 * A catalog is an immutable snapshot. A DDL statement builds a new snapshot
 * from the current one (sharing the unchanged keyspace and table objects,
 * which are reference counted) with a new schema_version. The store applies
 * every DDL on shard 0 and then installs the new snapshot on every shard in
 * the same order, so all shards see the same sequence of versions.
 *
 * Column order in a table is the schema order drivers expect: partition key
 * columns, clustering columns, static columns, then regular columns, each
 * group in definition order (regular and static columns sorted by name, as
 * Cassandra does).
 */

/* Most components in a partition or clustering key. */
#define SM_MAX_KEY_PARTS 16

/*
 * Most columns in a table: column ids are 16-bit (cell ops, conditions and
 * selections carry them). ScyllaDB has no hard limit (docs/reference/
 * limits.rst: "hundreds" per table as a soft one); CREATE TABLE refuses a
 * wider table with a message naming this one.
 */
#define SM_MAX_COLUMNS 65535u

/*
 * Longest keyspace, table and column name: ScyllaDB's schema::NAME_LENGTH
 * (Cassandra 3's was 48), which leaves room for the suffixes of CDC tables.
 */
#define SM_NAME_MAX 207u

enum sm_col_kind {
	SM_COL_PARTITION,
	SM_COL_CLUSTERING,
	SM_COL_STATIC,
	SM_COL_REGULAR,
};

struct sm_column {
	char *name;
	const struct sm_type *type;
	enum sm_col_kind kind;
	uint16_t id;  /* index in table->cols */
	uint16_t pos; /* index within its kind: key component, or cell slot */
	bool desc;    /* clustering column in descending order */
};

/* A WITH option or a replication option, kept as given. */
struct sm_option {
	char *key;
	char *value;
};

/* A column ALTER TABLE ... DROP removed (system_schema.dropped_columns). */
struct sm_dropped_column {
	char *name;
	const struct sm_type *type;
	enum sm_col_kind kind;
	int64_t time_us; /* the drop's timestamp */
};

struct sm_table {
	uint32_t refs;
	struct sm_uuid id;
	char *ks;
	char *name;
	struct sm_column *cols;
	uint16_t ncols;
	/* by name, for wide tables only (NULL: a scan is cheaper):
	 * open addressing, id + 1 per slot, 0 empty */
	uint16_t *col_index;
	uint32_t col_index_mask;
	uint16_t npk;
	uint16_t nck;
	uint16_t nstatic;
	uint16_t nregular;
	bool counter;	     /* a counter table: every regular column is a counter */
	int32_t default_ttl; /* seconds, 0 none */
	uint32_t slot;	     /* index of the table's per-shard storage */
	struct sm_option *options;
	unsigned noptions;
	struct sm_dropped_column *dropped; /* one per name, the latest drop */
	unsigned ndropped;
	/* tablets (sm_tablets.h): 0, the vnode ring; else a power of two */
	uint32_t tablet_count;
	uint8_t tablet_bits; /* log2(tablet_count) */
};

struct sm_keyspace {
	uint32_t refs;
	char *name;
	struct sm_option *replication; /* expanded: NetworkTopologyStrategy per DC */
	unsigned nreplication;
	bool durable_writes;
	struct sm_table **tables;
	unsigned ntables;
	const struct sm_type **types; /* user types (SM_TYPE_UDT), in creation order */
	unsigned ntypes;
	/* tablets = {'enabled': true}: its tables are stored by tablets */
	bool tablets;
	uint32_t initial_tablets; /* tablets = {'initial': N}; 0: from the shard count */
};

struct sm_catalog {
	uint32_t refs;
	struct sm_uuid version;
	uint32_t next_slot; /* next free table storage slot */
	struct sm_keyspace **ks;
	unsigned nks;
};

/* The data center name the catalog expands replication_factor into. */
#define SM_DATACENTER "datacenter1"

/* An empty catalog with a fresh version; NULL when out of memory. */
struct sm_catalog *
sm_catalog_new(void);

/* Reference counting; the last put frees the snapshot and what only it uses. */
void
sm_catalog_get(struct sm_catalog *c);
void
sm_catalog_put(struct sm_catalog *c);

const struct sm_keyspace *
sm_catalog_keyspace(const struct sm_catalog *c, const char *ks);
const struct sm_table *
sm_catalog_table(const struct sm_catalog *c, const char *ks, const char *table);
/* Keep a table's definition alive past the catalog that holds it. */
void
sm_table_get(const struct sm_table *t);
void
sm_table_put(const struct sm_table *t);

/* Column by name, or NULL. */
const struct sm_column *
sm_table_column(const struct sm_table *t, const char *name);

/* The user type @name of keyspace @k (case-sensitive, as stored), or NULL. */
const struct sm_type *
sm_keyspace_type(const struct sm_keyspace *k, const char *name);

/* A keyspace to create: replication options as given ('class' included). */
struct sm_keyspace_def {
	const char *name;
	const struct sm_option *replication;
	unsigned nreplication;
	bool durable_writes;
	bool wide_names; /* DynamoDB's naming (255 chars, '.', '-'), not CQL's */
	bool tablets;	  /* NetworkTopologyStrategy only (else -EINVAL) */
	uint32_t initial_tablets; /* 0: from the shard count; at most SM_TABLETS_MAX */
};

struct sm_column_def {
	const char *name;
	const char *type; /* CQL type syntax: "int", "map<text, int>" */
	enum sm_col_kind kind;
	bool desc; /* clustering only */
};

struct sm_table_def {
	const char *ks;
	const char *name;
	const struct sm_column_def *cols; /* partition and clustering columns in key order */
	unsigned ncols;
	const struct sm_option *options; /* WITH options other than CLUSTERING ORDER */
	unsigned noptions;
	int32_t default_ttl;
	bool wide_names; /* DynamoDB's naming (255 chars, '.', '-'), not CQL's */
	const struct sm_uuid *id; /* NULL: a new one; set: the commitlog's replay */
};

/*
 * DDL: each returns 0 and a new snapshot in *next (the caller installs it
 * and puts the old one), 1 when IF [NOT] EXISTS made it a no-op (*next is
 * NULL), or -errno with a Cassandra-style message in @err: -EEXIST
 * (already exists), -ENOENT (keyspace or table does not exist), -EINVAL
 * (invalid definition: bad type, no primary key, counter mixed with
 * non-counter, duplicate column, ...), -ENAMETOOLONG (CREATE KEYSPACE: an
 * invalid name).
 */
int
sm_catalog_create_keyspace(const struct sm_catalog *cur, const struct sm_keyspace_def *def,
			   bool if_not_exists, struct sm_catalog **next, char *err, size_t errlen);
int
sm_catalog_drop_keyspace(const struct sm_catalog *cur, const char *ks, bool if_exists,
			 struct sm_catalog **next, char *err, size_t errlen);
int
sm_catalog_create_table(const struct sm_catalog *cur, const struct sm_table_def *def,
			bool if_not_exists, struct sm_catalog **next, char *err, size_t errlen);
int
sm_catalog_drop_table(const struct sm_catalog *cur, const char *ks, const char *table,
		      bool if_exists, struct sm_catalog **next, char *err, size_t errlen);

/*
 * User types (sm_schema_alter.c), with ScyllaDB's checks and messages
 * (cql3/statements/{create,alter,drop}_type_statement.cc). Field types are
 * CQL type syntax resolved in the type's keyspace. Returns as the DDL
 * above: 0 and *next, 1 for an IF [NOT] EXISTS no-op, or -errno (-EEXIST,
 * -ENOENT, -EINVAL) with the message.
 */
struct sm_type_def {
	const char *ks;
	const char *name;
	const char *const *field_names;
	const char *const *field_types;
	unsigned nfields;
};

int
sm_catalog_create_type(const struct sm_catalog *cur, const struct sm_type_def *def,
		       bool if_not_exists, struct sm_catalog **next, char *err, size_t errlen);
int
sm_catalog_drop_type(const struct sm_catalog *cur, const char *ks, const char *name,
		     bool if_exists, struct sm_catalog **next, char *err, size_t errlen);

enum sm_type_alter_kind {
	SM_TYPE_ALTER_ADD,    /* ADD field type */
	SM_TYPE_ALTER_TYPE,   /* ALTER field TYPE type */
	SM_TYPE_ALTER_RENAME, /* RENAME from TO to [AND ...] */
};

struct sm_type_alter {
	enum sm_type_alter_kind kind;
	const char *ks;
	const char *name;
	const char *field; /* ADD, TYPE */
	const char *type;  /* ADD, TYPE */
	const char *const *from, *const *to; /* RENAME */
	unsigned nrenames;
};

/*
 * ALTER TYPE: the type changes, and so does every type and table of the
 * keyspace that uses it (new table objects with the same id and storage
 * slot: the store keeps their data).
 */
int
sm_catalog_alter_type(const struct sm_catalog *cur, const struct sm_type_alter *a,
		      struct sm_catalog **next, char *err, size_t errlen);

/*
 * ALTER TABLE (sm_schema_alter.c), with ScyllaDB's checks and messages
 * (cql3/statements/alter_table_statement.cc). The table gets a new object
 * with the same id and storage slot; the store moves its rows to the new
 * layout, and the cells of a dropped column go with the drop (ScyllaDB
 * drops what its memtables hold the same way: shardmark has no sstables
 * for a DROP ... USING TIMESTAMP to leave newer cells in).
 */
enum sm_table_alter_kind {
	SM_TABLE_ALTER_ADD,	/* cols: name, type, kind (SM_COL_STATIC or _REGULAR) */
	SM_TABLE_ALTER_DROP,	/* cols: names */
	SM_TABLE_ALTER_TYPE,	/* cols[0]: name and its new type */
	SM_TABLE_ALTER_RENAME,	/* from, to */
	SM_TABLE_ALTER_OPTIONS, /* options replace those of the same key */
};

struct sm_table_alter {
	enum sm_table_alter_kind kind;
	const char *ks;
	const char *name;
	const struct sm_column_def *cols;
	unsigned ncols;
	const char *const *from, *const *to;
	unsigned nrenames;
	const struct sm_option *options;
	unsigned noptions;
	bool set_default_ttl;
	int32_t default_ttl;
	int64_t drop_time_us; /* DROP: the dropped_time recorded */
};

/*
 * 0 and *next, 1 when nothing changes (ALTER ... TYPE to the same type), or
 * -errno with the message: -ENOENT (no such table), -EINVAL (an invalid
 * request), -EPROTO (a configuration error: an incompatible type).
 */
int
sm_catalog_alter_table(const struct sm_catalog *cur, const struct sm_table_alter *a,
		       struct sm_catalog **next, char *err, size_t errlen);

/*
 * ALTER KEYSPACE: replication (as CREATE KEYSPACE takes it, 'class'
 * included; NULL keeps the current one) and durable_writes. 0 and *next,
 * or -errno: -ENOENT, -EINVAL (a configuration error).
 */
struct sm_keyspace_alter {
	const char *name;
	const struct sm_option *replication;
	unsigned nreplication;
	bool set_durable_writes;
	bool durable_writes;
	bool set_initial_tablets; /* a tablets keyspace's tablets = {'initial': N} */
	uint32_t initial_tablets;
};

int
sm_catalog_alter_keyspace(const struct sm_catalog *cur, const struct sm_keyspace_alter *a,
			  struct sm_catalog **next, char *err, size_t errlen);

/* Option value by key in an option list, or NULL. */
const char *
sm_option_get(const struct sm_option *o, unsigned n, const char *key);

#endif /* SM_SCHEMA_H */
