/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_STORE_H
#define SM_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sm_build_config.h"
#include "sm_commitlog.h"
#include "sm_schema.h"
#include "sm_tablets.h"
#include "sm_token.h"
#include "sm_types.h"
#include "sm_uuid.h"

/*
 * lib/store: per-shard in-memory tables with Cassandra's write semantics,
 * the API that the CQL and Alternator endpoints share.
 *
 * Ownership: a partition's token is Murmur3 of its key (the raw value for
 * one component, the legacy composite form for several); its shard is
 * ScyllaDB's biased-token-round-robin with ignore_msb 12. A shard stores
 * only the partitions it owns. A request submitted on another shard travels
 * to the owner through the cross-shard rings and back (a "hop").
 *
 * Values are CQL-serialized bytes (sm_types.h). Timestamps are microseconds
 * since the epoch; TTLs and "now" are seconds.
 */

/*
 * Longest encoded partition key, and clustering key: room for DynamoDB's
 * 2048-byte hash and 1024-byte sort keys (Cassandra allows more; nothing
 * here needs it).
 */
#define SM_MAX_KEY_BYTES 2560

#define SM_TS_NOW INT64_MIN	 /* use the server clock (microseconds) */
#define SM_TTL_DEFAULT INT32_MIN /* use the table's default_time_to_live */

/* A partition key or a clustering key prefix, as its components. */
struct sm_key {
	unsigned n;
	struct sm_bytes part[SM_MAX_KEY_PARTS];
};

/* The bytes of @k's components together. */
static inline size_t
sm_key_size(const struct sm_key *k)
{
	size_t n = 0;
	unsigned i;

	for (i = 0; i < k->n; i++)
		n += k->part[i].len;
	return n;
}

/* One end of a clustering slice: a prefix (n == 0: unbounded). */
struct sm_ck_bound {
	struct sm_key prefix;
	bool inclusive;
};

struct sm_ck_range {
	struct sm_ck_bound start;
	struct sm_ck_bound end;
};

enum sm_cell_op_kind {
	SM_CELL_SET,	     /* value, or a whole collection that replaces the old one */
	SM_CELL_DELETE,	     /* tombstone the cell (a whole collection) */
	SM_CELL_COUNTER_ADD, /* value: 8-byte delta */
	SM_CELL_APPEND,	     /* list append, set add, map put: value is a serialized collection */
	SM_CELL_PREPEND,     /* list prepend: value is a serialized list */
	SM_CELL_REMOVE,	     /* list remove values, set remove, map remove keys: a list or set */
	SM_CELL_SET_ELEM,    /* map[key] = value; list[index] = value (key: 4-byte index) */
	SM_CELL_DELETE_ELEM, /* DELETE map[key] or list[index] */
};

struct sm_cell_op {
	uint16_t col; /* column id */
	uint8_t kind; /* enum sm_cell_op_kind */
	bool null;    /* SET to null: a tombstone */
	struct sm_bytes key;
	struct sm_bytes value;
};

enum sm_mutation_flags {
	SM_MUT_ROW_MARKER = 1u << 0,	   /* INSERT: the row exists even with null cells */
	SM_MUT_DELETE_ROW = 1u << 1,	   /* row tombstone at ck */
	SM_MUT_DELETE_PARTITION = 1u << 2, /* partition tombstone */
	SM_MUT_DELETE_RANGE = 1u << 3,	   /* range tombstone over @range */
	/* a materialized view's row, written whole: what the row held before
	 * (marker, cells, row tombstone) goes first (sm_index.h) */
	SM_MUT_REPLACE_ROW = 1u << 4,
};

/* Every change to one partition of one table, at one timestamp and TTL. */
struct sm_mutation {
	const struct sm_table *table;
	struct sm_key pk;
	struct sm_key ck;	  /* full clustering key for row and regular-cell ops */
	struct sm_ck_range range; /* SM_MUT_DELETE_RANGE */
	int64_t ts;		  /* microseconds, or SM_TS_NOW */
	int32_t ttl;		  /* seconds, 0 none, or SM_TTL_DEFAULT */
	uint32_t flags;
	const struct sm_cell_op *ops;
	unsigned nops;
};

/* One selected cell of a row. */
struct sm_cell_view {
	bool present;
	struct sm_bytes value; /* a non-frozen collection: its live elements, serialized */
	int64_t writetime;     /* microseconds */
	int32_t ttl;	       /* seconds left, 0 when the cell does not expire */
};

/* A row as a read returns it; valid during the sink callback only. */
struct sm_row_view {
	const struct sm_table *table;
	int64_t token;
	const struct sm_key *pk;
	const struct sm_key *ck;	  /* n == 0: a partition with only static cells */
	const struct sm_cell_view *cells; /* one per selected column */
	unsigned ncells;
	struct sm_cell_view marker; /* sm_select.marker: the live row marker, its value empty */
};

/* Return < 0 to stop the read (the error is the read's result). */
struct sm_row_sink {
	int (*row)(void *ctx, const struct sm_row_view *r);
	void *ctx;
};

/*
 * Where a read stopped, to resume on any shard: a global position (token,
 * partition key, clustering key of the last row returned) that does not
 * depend on which shard served the previous page.
 */
#define SM_PAGING_MAX (22 + 2 * SM_MAX_KEY_BYTES)
struct sm_paging {
	uint32_t len;
	uint8_t data[SM_PAGING_MAX];
};

struct sm_select {
	const struct sm_table *table;
	bool range;			  /* token range scan instead of one partition */
	struct sm_key pk;		  /* single partition */
	int64_t token_start;		  /* range: tokens > start (INT64_MIN: from the first) */
	int64_t token_end;		  /* range: tokens <= end (INT64_MAX: to the last) */
	const struct sm_ck_range *ranges; /* clustering slices in order; none: every row */
	unsigned nranges;
	bool reversed;	      /* opposite of clustering order */
	const uint16_t *cols; /* selected column ids (any kind) */
	/*
	 * NULL, or one per column: the element (map key, set element, or a
	 * user type's 2-byte field index) of a non-frozen collection or user
	 * type whose own cell the row's view shows instead of the whole column
	 * (p NULL: the whole column), for WRITETIME(m[k]) and TTL(u.f)
	 */
	const struct sm_bytes *col_keys;
	unsigned ncols;
	uint32_t limit;		      /* rows, 0: none */
	uint32_t per_partition_limit; /* 0: none */
	bool resume;		      /* continue from @paging */
	/* fill in the rows' marker: a direct sm_ptable_read() or scan of
	 * the store's own (a materialized view's images); sm_store_submit()
	 * clears it */
	bool marker;
	struct sm_paging paging;      /* in: where to resume; out: where it stopped */
	int32_t now;		      /* seconds, 0: the current time */
	struct sm_row_sink sink;
	/* out */
	uint32_t rows; /* rows returned */
	bool more;     /* stopped by limit with rows left: @paging is set */
};

enum sm_cond_op {
	SM_COND_EQ,
	SM_COND_NE,
	SM_COND_LT,
	SM_COND_LE,
	SM_COND_GT,
	SM_COND_GE,
	SM_COND_IN,
	SM_COND_CONTAINS,     /* a collection's element (a map's value) equals value */
	SM_COND_CONTAINS_KEY, /* a map has the key value */
};

/* IF col op value: null compares equal only to null; <, <=, >, >= on null
 * are false, and so is CONTAINS on a null collection. An element condition
 * (map key or list index) when has_elem. */
struct sm_condition {
	uint16_t col;
	uint8_t op; /* enum sm_cond_op */
	bool has_elem;
	struct sm_bytes elem;
	bool null;
	struct sm_bytes value;
	const struct sm_bytes *in; /* SM_COND_IN values; a len of UINT32_MAX is null */
	unsigned nin;
};

enum sm_cas_kind {
	SM_CAS_IF_NOT_EXISTS,
	SM_CAS_IF_EXISTS,
	SM_CAS_IF,
	SM_CAS_CUSTOM, /* decide() judges the pre-image and may rewrite the mutation */
};

/* A compare-and-set on one row (or the static part of a partition). */
struct sm_cas {
	struct sm_mutation mut;
	enum sm_cas_kind kind;
	union {
		const struct sm_condition *conds; /* SM_CAS_IF */
		/*
		 * SM_CAS_CUSTOM: NULL, or called with decide_ctx on the owning
		 * shard right after the mutation was applied (@cas->ts set), in
		 * the same step: what has to happen with the write and nowhere
		 * else (Alternator's change log). In the union so that a request
		 * stays the size it was (sm_store_req_init() clears it per request).
		 */
		void (*on_applied)(void *ctx, const struct sm_cas *cas);
	};
	unsigned nconds;
	const uint16_t *cols; /* pre-image columns returned through the sink */
	unsigned ncols;
	struct sm_row_sink sink; /* receives the pre-image row (may be absent) */
	/*
	 * SM_CAS_CUSTOM: called on the owning shard inside the Paxos round,
	 * after the sink saw the pre-image (@exists false: no row); returns
	 * whether to apply, and may fill in @cas->mut first (an endpoint whose
	 * conditions the store cannot express: Alternator's expressions).
	 */
	bool (*decide)(void *ctx, bool exists, struct sm_cas *cas);
	void *decide_ctx;
	/*
	 * No Paxos: read, decide and apply in one step on the owning shard,
	 * which runs one task at a time, so no other write to the row comes
	 * between them. For an endpoint that needs the pre-image of every
	 * write (Alternator's secondary indexes) without LWT's cost.
	 */
	bool local;
	/* out */
	bool applied;
	unsigned contention; /* Paxos retries */
	int64_t ts;	     /* applied: the write timestamp (microseconds) */
};

/* A global scan position: which partition, and which row in it. */
struct sm_scan_pos {
	bool started; /* a partition is named below */
	bool partition_done;
	int64_t token;
	uint32_t part_rows; /* rows returned from the named partition */
	uint32_t key_len;
	uint32_t ck_len; /* 0: no row of the partition returned yet */
	uint8_t key[SM_MAX_KEY_BYTES];
	uint8_t ck[SM_MAX_KEY_BYTES];
};

/* A range scan's progress while it travels between shards (private). */
struct sm_scan_state {
	struct sm_scan_pos pos;
	uint32_t budget;
	int32_t now;
	uint64_t known[SM_MAX_SHARDS / 64 + 1]; /* next[] is valid for the shard */
	uint64_t has[SM_MAX_SHARDS / 64 + 1];	/* the shard has a partition at next[] */
	int64_t next[SM_MAX_SHARDS];
};

enum sm_req_kind {
	SM_REQ_MUTATE,
	SM_REQ_SELECT,
	SM_REQ_CAS,
	SM_REQ_SERIAL_SELECT, /* a single-partition read through Paxos */
};

/*
 * A request to the store. sm_store_submit() runs it on the owning shard:
 * inline when that is the calling shard (done() then runs before submit
 * returns), otherwise through the cross-shard rings, done() running back on
 * the calling shard. The sink of a select runs on the shard that reads. A
 * range select visits the shards in token order, hopping only when the next
 * partition lives elsewhere.
 */
struct sm_store_req {
	enum sm_req_kind kind;
	union {
		struct sm_mutation mut;
		struct sm_select sel;
		struct sm_cas cas;
	};
	int result;    /* 0 or -errno */
	char err[160]; /* message when result < 0 */
	unsigned hops; /* cross-shard hops this request took */
	void (*done)(struct sm_store_req *r);
	void *ctx;
	/* private to the store */
	unsigned origin;
	int64_t token; /* the partition key's, found once by sm_store_submit() */
	void *index_job; /* a write to an indexed table: its view writes (sm_index.c) */
	struct sm_scan_state scan;
	/* batch commitlog: waiting for the sync (after scan: req_init leaves it) */
	struct sm_clog_waiter clw;
};

void
sm_store_submit(struct sm_store_req *r);

/*
 * One bounded step of a scan of the calling shard's own partitions of
 * s->table, in token order, without hops: background work that visits
 * every shard's data where it lives (TTL expiry, index backfill). Rows go
 * to s->sink (which must not write to the table: collect, then write) and
 * count against *@budget; *@pos says where to resume (zeroed: from the
 * start; s->token_start and s->token_end bound the tokens). 1 when the
 * budget ran out with rows left, 0 at the end, < 0 on error (-ENOENT: the
 * table has no storage here, it was dropped).
 */
int
sm_store_scan_local(struct sm_select *s, struct sm_scan_pos *pos, uint32_t *budget);

/*
 * Clear @r for a new request of @kind: every field zero except the bytes of
 * sel.paging.data (meaningful only up to sel.paging.len, now 0) and the
 * store's private scan state. A request is several KB because a paging
 * position holds two keys of up to SM_MAX_KEY_BYTES; clearing all of it
 * cost a read about 700 instructions. A SELECT or SERIAL_SELECT gets only
 * its own member of the union cleared: it must stay a read (a write is
 * initialised as SM_REQ_MUTATE and its kind set after).
 */
void
sm_store_req_init(struct sm_store_req *r, enum sm_req_kind kind);

/*
 * Schema changes. Run on any shard; the change is applied on shard 0 and
 * installed on every shard before done() runs on the calling shard.
 */
enum sm_ddl_kind {
	SM_DDL_CREATE_KEYSPACE,
	SM_DDL_DROP_KEYSPACE,
	SM_DDL_CREATE_TABLE,
	SM_DDL_DROP_TABLE,
	SM_DDL_TRUNCATE,
	/*
	 * The keyspace @ks when missing and the table @table in it, as one
	 * schema version (an Alternator table): no DROP KEYSPACE can come
	 * between the two. @if_exists applies to the table.
	 */
	SM_DDL_CREATE_KEYSPACE_TABLE,
	/*
	 * Any other change: @apply builds the next snapshot from the current
	 * one on shard 0, with the sm_catalog_*() contract (0 and *next, 1 for
	 * a no-op, or -errno with a message). @apply_arg must stay valid and
	 * unchanged until done() runs.
	 */
	SM_DDL_CATALOG,
};

struct sm_ddl_req {
	enum sm_ddl_kind kind;
	bool if_exists; /* IF EXISTS / IF NOT EXISTS */
	struct sm_keyspace_def ks;
	struct sm_table_def table;
	/* SM_DDL_CREATE_KEYSPACE_TABLE: more tables in the same version (an
	 * Alternator table's index views); one failing fails them all */
	const struct sm_table_def *more_tables;
	unsigned nmore_tables;
	const char *ks_name; /* drop / truncate */
	const char *table_name;
	int (*apply)(const struct sm_catalog *cur, const void *arg, struct sm_catalog **next,
		     char *err, size_t errlen); /* SM_DDL_CATALOG */
	const void *apply_arg;
	/* out */
	int result; /* 0 changed, 1 no-op (IF [NOT] EXISTS), -errno */
	char err[1024]; /* a name of SM_NAME_MAX and more fits */
	struct sm_uuid version; /* schema version after the change */
	void (*done)(struct sm_ddl_req *r);
	void *ctx;
	/* private */
	unsigned origin;
	struct sm_catalog *next;
	unsigned pending;
	struct sm_ddl_req *queue_next;
	uint64_t clog_pos; /* shard 0's commitlog: where the change was logged (0: not) */
	struct sm_clog_waiter clw;
};

void
sm_store_ddl(struct sm_ddl_req *r);

/* Per-shard setup and teardown; call on every shard (after lib/core starts). */
int
sm_store_shard_init(void);
void
sm_store_shard_fini(void);

/*
 * The commitlog (lib/commitlog, sm_store_log.c). Before the shards start,
 * with sm_clog_init() done: rebuild the schema from shard 0's log (its
 * schema changes in order), the first catalog every shard starts from.
 * Returns 0 or -errno (logged).
 */
int
sm_store_log_load_schema(void);

/*
 * On each shard after sm_store_shard_init() and before sm_clog_shard_init():
 * replay the shard's own log into its tables (a progress line per segment,
 * the counts at the end). Returns 0 or -errno (logged).
 */
int
sm_store_log_replay(void);

/* The calling shard's current catalog (valid until the next DDL installs). */
const struct sm_catalog *
sm_store_catalog(void);

/*
 * Run @fn on each shard for every table whose storage a DDL drops there,
 * before it goes (a table's per-shard state goes with it: lib/cql's
 * per-table metrics). One hook; set it before the shards start.
 */
void
sm_store_set_drop_hook(void (*fn)(const struct sm_table *t));

/* Token of a partition key (one component raw, several in composite form). */
int64_t
sm_key_token(const struct sm_key *pk);

/* Owning shard of a partition key with the running shard count. */
unsigned
sm_key_shard(const struct sm_key *pk);

/* The shard that stores @pk of table @t: its tablet's for a tablets table (sm_tablets.h). */
unsigned
sm_table_key_shard(const struct sm_table *t, const struct sm_key *pk);

/* Server clock: microseconds and seconds since the epoch. */
int64_t
sm_store_now_us(void);

#endif /* SM_STORE_H */
