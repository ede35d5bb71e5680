/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ALT_PRIV_H
#define ALT_PRIV_H

/* Private to the Alternator executor (alt_*.c, sm_alternator.c). */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sm_alternator.h"
#include "sm_core.h"
#include "sm_ddb_expr.h"
#include "sm_ddb_number.h"
#include "sm_json.h"
#include "sm_store.h"

#define ALT_KS_PREFIX "alternator_"
#define ALT_ARN_PREFIX "arn:scylla:dynamodb:us-east-1:797456418907:table/"
#define ALT_MAX_TABLE_NAME 222
#define ALT_ATTRS_COL ":attrs"
#define ALT_ERR_PREFIX "com.amazonaws.dynamodb.v20120810#"
/* ScyllaDB's read-only views of system tables: .scylla.alternator.<ks>.<table> */
#define ALT_SYSTEM_PREFIX ".scylla.alternator."
#define ALT_MAX_ITEM_BYTES (400u * 1024)
#define ALT_MAX_KEY_BYTES 1024u
#define ALT_MAX_BATCH_WRITE 25u
#define ALT_MAX_BATCH_GET 100u

/* Table options the endpoint keeps in the catalog (immutable per table). */
#define ALT_OPT_CREATED "alternator:created"
#define ALT_OPT_BILLING "alternator:billing"
#define ALT_OPT_TAGS "alternator:tags"
#define ALT_OPT_THROUGHPUT "alternator:throughput"

/* On an index's view table: the index's definition (alt_index.c), JSON. */
#define ALT_OPT_INDEX "alternator:index"
/* DynamoDB's limits: indexes per table, names of key attributes. */
#define ALT_MAX_GSI 20u
#define ALT_MAX_LSI 5u
#define ALT_MAX_KEY_ATTR_NAME 255u
#define ALT_MAX_ATTR_NAME 65535u

enum alt_projection { ALT_PROJ_ALL, ALT_PROJ_KEYS_ONLY, ALT_PROJ_INCLUDE };

/*
 * A secondary index as ScyllaDB stores it: a view table in the base
 * table's keyspace whose partition key is the index's hash key (a GSI's
 * rows live on the shard that owns that key; an LSI shares the base's
 * partition key, so its rows stay on the base's shard) and whose
 * clustering key is the index's range key, then the base key attributes
 * the index key lacks. Its ":attrs" map holds the projected attributes
 * (an LSI's all of them: reads that ask for more are served from it).
 */
struct alt_index {
	const struct sm_table *vt; /* the view (held by the set) */
	char *name;		   /* IndexName */
	bool lsi;
	bool backfill; /* created by UpdateTable: CREATING until backfilled */
	const struct sm_column *hash, *range; /* vt's columns for the index key */
	char hash_type, range_type;
	const struct sm_column *xck[2]; /* vt's other clustering columns: base keys */
	char xck_type[2];
	unsigned nxck;
	uint16_t attrs_col;
	enum alt_projection proj;
	char **include; /* INCLUDE's NonKeyAttributes */
	unsigned ninclude;
	char *projection; /* the Projection object, as DescribeTable returns it */
};

/* The indexes of one base table in one schema version; reference counted. */
struct alt_index_set {
	unsigned refs;
	const struct sm_catalog *cat; /* held: the version it describes */
	struct sm_uuid base;	      /* the base table's id */
	bool retired;		      /* out of the cache, on the shard's retired list */
	struct alt_index_set *next_retired;
	unsigned n;
	struct alt_index idx[];
};

/* A DynamoDB table as one request sees it. */
struct alt_table {
	const struct sm_table *t; /* the table read or written: the base, or an index's view */
	const struct sm_table *hold; /* held (sm_table_get) until the op ends */
	const char *name;	     /* the DynamoDB table's name */
	const struct sm_column *hash, *range; /* range NULL without a sort key */
	char hash_type, range_type;	      /* 'S', 'N', 'B'; 0 none */
	/* reading an index: its view's clustering columns past the range key */
	const struct sm_column *xck[2];
	char xck_type[2];
	unsigned nxck;
	uint16_t attrs_col;
	enum sm_alt_isolation iso;
	/* enum alt_stream_view of an enabled stream, 0 none; its creation, its id
	 * (set by alt_table_lookup(), not by the _read() variants: writes only) */
	uint8_t stream;
	int64_t stream_ms;
	struct alt_index_set *idx;   /* held; every table has one (n may be 0) */
	const struct alt_index *index; /* reading this index, or NULL */
	struct alt_tstats *ts;	       /* held: the table's counters on this shard, or NULL */
};

/* An attribute value: the {"T": ...} object at @tok of @d. */
struct alt_val {
	const struct sm_json_doc *d;
	int tok;
};

/* A growable byte buffer that must not move while views into it live. */
struct alt_bytes {
	uint8_t *p;
	size_t len, cap;
};

#define ALT_TMP_DOCS 8

struct alt_op;
typedef void (*alt_op_fn)(struct alt_op *op);

/* ReturnConsumedCapacity */
enum alt_cap_mode { ALT_CAP_NONE, ALT_CAP_TOTAL, ALT_CAP_INDEXES };

/* One request in flight: pooled per shard, buffers kept across uses. */
struct alt_op {
	struct sm_http_req *req; /* NULL in-process */
	void (*local_done)(void *ctx, int status, const char *json, size_t len);
	void *local_ctx;
	const char *body;
	size_t body_len;
	struct sm_json_doc doc; /* the request */
	int root;
	struct sm_json_out out;	    /* the response */
	struct sm_json_out item;    /* the item read (JSON object text) */
	struct sm_json_doc idoc;    /* ... parsed */
	bool have_item;		    /* the read found an item */
	struct sm_json_out nitem;   /* the new item (UpdateItem, ReturnValues) */
	struct sm_json_out scratch; /* computed values */
	struct sm_json_doc tmp[ALT_TMP_DOCS];
	struct sm_json_out tmpout[ALT_TMP_DOCS];
	unsigned ntmp;
	struct alt_bytes keys;	   /* key bytes, reserved up front */
	struct alt_bytes vals;	   /* map entries for mutations, reserved up front */
	struct alt_bytes names;	   /* resolved #names and copied strings, NUL-terminated */
	struct alt_kept *kept;	   /* more of them, once names is full (freed with the op) */
	/* each #name resolved once per request (a Scan filter resolves it per item):
	 * open addressing by the placeholder, cap a power of two */
	struct alt_name_memo {
		const char *ref, *name;
	} *name_memo;
	unsigned name_memo_n, name_memo_cap;
	unsigned nresolved; /* #names resolved by this request */
	/* the projection as a tree, built once per request for proj_built (alt_eval.c) */
	struct alt_proj_node *proj_nodes;
	unsigned nproj_nodes, proj_nodes_cap;
	const struct sm_ddb_expr *proj_built;
	struct alt_bytes inflated; /* a gzip or deflate request body, decompressed */
	struct alt_table tab;
	bool have_tab;
	/* expressions of the request */
	struct sm_ddb_expr *cond, *update, *proj, *filter, *keycond;
	int names_tok, values_tok; /* ExpressionAttributeNames/Values or -1 */
	int atg_tok;		   /* AttributesToGet or -1 */
	/* store requests */
	struct sm_store_req *sreqs;
	unsigned nsreqs, sreqs_cap;
	unsigned pending;
	struct sm_cell_op *ops;
	unsigned nops, ops_cap;
	uint16_t read_cols[3];
	unsigned nread_cols;
	bool submitting, completed;
	/* what to do when the store answers */
	alt_op_fn next;
	int first_err;
	char errmsg[256];
	/* per-operation state */
	int rv; /* ReturnValues */
	bool rv_on_fail_all_old;
	bool rmw;
	bool cond_ok;
	bool cond_error;
	bool ser_err; /* errmsg is about JSON types: DynamoDB's SerializationException */
	bool names_nul; /* alt_apply_update() kept a name with a NUL (alt_keep_name()) */
	char cond_err[256];
	int limit;
	bool count_only;
	bool index_projected; /* reading an index: only what it projects */
	int legacy_filter;    /* QueryFilter or ScanFilter, or -1 */
	bool legacy_any;      /* ... joined by ConditionalOperator OR */
	bool forward;
	uint32_t scanned, returned;
	size_t page_bytes; /* read for this page: it ends past ALT_PAGE_BYTES */
	bool page_full;
	bool range_scan;
	int64_t seg_start, seg_end;
	int start_key_tok; /* ExclusiveStartKey or -1 */
	struct sm_key start_pk, start_ck;
	bool skipping;
	struct sm_key last_pk, last_ck;
	bool have_last;
	struct alt_bytes last; /* bytes of last_pk/last_ck */
	struct sm_ck_range range;
	unsigned batch_i;
	bool empty_body;	 /* answer 200 with no body (TagResource, UntagResource) */
	int wkind;		 /* the write being computed (alt_item.c) */
	struct sm_bytes put_map; /* PutItem: the new attrs map, in vals */
	void *batch;		 /* BatchWriteItem: its tables, until the writes are done */
	/* secondary indexes (alt_index.c): a write's view rows, not moving while queued */
	struct alt_bytes vkeys, vvals;
	bool index_bufs; /* they (or vitem) were used: trim them when large */
	struct sm_cell_op *vops;
	unsigned nvops, vops_cap;
	struct sm_json_out vitem; /* PutItem on an indexed table: the new item, canonical */
	bool new_exists;	  /* the written item exists after the write */
	alt_op_fn index_next;	  /* after the view rows are written */
	alt_op_fn fn;		  /* the operation (alt_system.c serves some on system tables) */
	bool stream_service;	  /* the write is the service's (TTL expiry): its stream says so */
	/* ReturnConsumedCapacity, ReturnItemCollectionMetrics (alt_capacity.c) */
	/* the request's ReturnConsumedCapacity, ReturnItemCollectionMetrics, ConsistentRead,
	 * TableName and Key (found with the others by run(): one pass) */
	int cap_tok, icm_tok, consistent_tok, table_tok, key_tok;
	uint8_t cap_mode;     /* enum alt_cap_mode */
	bool icm;	  /* ReturnItemCollectionMetrics SIZE */
	unsigned cap_ti;  /* BatchGetItem: the table being read, and each one's units */
	int cap_spec;	  /* ... its RequestItems entry */
	uint32_t cap_half[ALT_MAX_BATCH_GET];
	/* metrics: when the request began, and its latency histogram (-1: none) */
	uint64_t start_cycles; /* sm_cycles() */
	int lat_kind;
	int op_row; /* the operation's row of sm_alternator.c's table, -1 uncounted */
	struct alt_tstats *ts; /* the request table's counters (held), or NULL */
	struct alt_op *next_free;
};

extern __thread const struct sm_alternator_config *alt_cfg;

/* Two keys with the same components, byte for byte. */
static inline bool
alt_key_eq(const struct sm_key *a, const struct sm_key *b)
{
	unsigned i;

	if (a->n != b->n)
		return false;
	for (i = 0; i < a->n; i++)
		if (a->part[i].len != b->part[i].len ||
		    (a->part[i].len > 0 && memcmp(a->part[i].p, b->part[i].p, a->part[i].len) != 0))
			return false;
	return true;
}

/* ---- ScyllaDB's metrics (alt_metrics.c) ---- */

#define ALT_MAX_OPERATIONS 48 /* rows of sm_alternator.c's operation table, at most */
#define ALT_BATCH_BUCKETS 22
enum alt_lat_kind {
	ALT_LAT_PUT,
	ALT_LAT_GET,
	ALT_LAT_DELETE,
	ALT_LAT_UPDATE,
	ALT_LAT_BATCH_WRITE,
	ALT_LAT_BATCH_GET,
	ALT_LAT_GET_RECORDS,
	ALT_LAT_N
};
enum alt_wcu_kind { ALT_WCU_PUT, ALT_WCU_DELETE, ALT_WCU_UPDATE, ALT_WCU_INDEX, ALT_WCU_N };

/* One shard's counters: only uint64_t (alt_metrics_format() copies them word by word). */
struct alt_stats {
	uint64_t ops[ALT_MAX_OPERATIONS]; /* by row of the operation table, failed ones too */
	uint64_t total_operations, unsupported_operations;
	uint64_t reads_before_write, write_using_lwt, shard_bounce_for_lwt;
	uint64_t requests_blocked_memory, requests_shed;
	uint64_t filtered_rows_read, filtered_rows_matched, filtered_rows_dropped;
	uint64_t rcu_halves; /* read units, in halves (eventually consistent reads) */
	uint64_t wcu[ALT_WCU_N];
	uint64_t batch_items[2]; /* [0] BatchGetItem, [1] BatchWriteItem */
	uint64_t batch_hist[2][ALT_BATCH_BUCKETS];
	uint64_t lat[ALT_LAT_N][SM_LAT_HIST_BUCKETS]; /* successful operations only, as ScyllaDB */
	uint64_t lat_sum_us[ALT_LAT_N], lat_count[ALT_LAT_N];
	uint64_t expiration_scan_passes, expiration_scan_table, expiration_items_deleted;
} SM_CACHE_ALIGNED;

/* The calling shard's block (a private one off the shards). */
extern __thread struct alt_stats *alt_st;

#define ALT_STAT_ADD(field, n) (alt_st->field += (n))
#define ALT_STAT_INC(field) ALT_STAT_ADD(field, 1)

/*
 * One table's counters on one shard (ScyllaDB's per-table stats,
 * scylla_alternator_table_*): the same block as the shard's, written only
 * by its shard, listed for /metrics under a lock taken only to create,
 * free and read blocks. The shard's table metadata holds one reference
 * and every op in flight on the table one more (plain counts: one
 * shard); the last one gone (the table dropped) frees the block.
 */
struct alt_tstats {
	struct alt_stats st;
	uint32_t refs;
	struct sm_uuid id;
	char *ks, *cf;
	void *raw; /* the allocation, st aligned inside it */
	struct alt_tstats *next;
};

/* Add @n to @field of the shard's block and of @op's table's. */
#define ALT_OP_STAT_ADD(op, field, n)                                                              \
	do {                                                                                       \
		uint64_t n_ = (n);                                                                 \
		alt_st->field += n_;                                                               \
		if ((op)->ts != NULL)                                                              \
			(op)->ts->st.field += n_;                                                  \
	} while (0)
#define ALT_OP_STAT_INC(op, field) ALT_OP_STAT_ADD(op, field, 1)

/* A new block of table @id (@ks.@cf) with one reference, NULL without memory. */
struct alt_tstats *
alt_tstats_new(const struct sm_uuid *id, const char *ks, const char *cf);
/* Free a block (its last reference gone). */
void
alt_tstats_free(struct alt_tstats *ts);
/* Drop a reference; the last one frees the block. */
static inline void
alt_tstats_put(struct alt_tstats *ts)
{
	if (ts != NULL && --ts->refs == 0)
		alt_tstats_free(ts);
}
static inline struct alt_tstats *
alt_tstats_get(struct alt_tstats *ts)
{
	if (ts != NULL)
		ts->refs++;
	return ts;
}
/* The counters of table @name's (NULL: none, or no memory), for the calling
 * shard's synchronous use only (nothing held). */
struct alt_tstats *
alt_table_stats(const char *name, size_t len);

void
alt_metrics_shard_init(unsigned shard);
/* The latency histogram of operation @name, -1 if it has none. */
int
alt_metrics_latency_kind(const char *name);
static inline void
alt_metrics_latency(struct alt_stats *s, int kind, unsigned bucket, uint64_t us)
{
	s->lat[kind][bucket]++;
	s->lat_sum_us[kind] += us;
	s->lat_count[kind]++;
}
/* A BatchGetItem (@write false) or BatchWriteItem of @items items, into @s. */
void
alt_metrics_batch(struct alt_stats *s, bool write, unsigned items);
/* A batch's table @ts (NULL: none): @op counted for it, and its @items items. */
void
alt_metrics_table_batch(const struct alt_op *op, struct alt_tstats *ts, bool write,
			unsigned items);
/* The page, every shard's; @op_names[i] is the name of ops[i]. */
void
alt_metrics_format(FILE *f, unsigned nshards, const char *const *op_names, unsigned nops);

/* ---- replies (sm_alternator.c) ---- */

/* Answer with DynamoDB's error JSON; @type without the prefix. */
void
alt_fail(struct alt_op *op, const char *type, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Answer with 200 and op->out (or "{}" when empty). */
void
alt_finish(struct alt_op *op);
/* Answer ConditionalCheckFailedException (with Item when asked). */
void
alt_fail_condition(struct alt_op *op);

/* Submit op->sreqs[0..nsreqs); op->next runs when all are done. */
void
alt_submit(struct alt_op *op);

/* A fresh op from the shard's pool (alt_op.c), NULL without memory. */
struct alt_op *
alt_op_get(void);

/* The op pool's idle trimming, from sm_alternator_shard_init()/fini(). */
void
alt_op_shard_init(void);
void
alt_op_shard_fini(void);

/* An op outside any request (background work: backfill, TTL); alt_op_done() frees it. */
struct alt_op *
alt_op_new(void);
void
alt_op_done(struct alt_op *op);

/* ---- values (alt_value.c) ---- */

/* op->errmsg for an attribute name of @len bytes that is empty or too long (@prefix first). */
void
alt_name_error(struct alt_op *op, size_t len, const char *prefix);
/*
 * The size DynamoDB counts for item object @obj of @d (names, and values as
 * their bytes: decoded binaries, numbers by significant digits): its 400 KB
 * limit is on this, not on the JSON text, which is never smaller.
 */
size_t
alt_item_size(struct alt_op *op, const struct sm_json_doc *d, int obj);
/* Validate AttributesToGet (@tok, -1 none): a non-empty list of distinct names. */
int
alt_check_attributes_to_get(struct alt_op *op, int tok);

/*
 * The elements of a string, number or binary set, sorted once so that
 * duplicates and membership cost n log n, not n^2: numbers by value (1,
 * 1.0 and 10E-1 are one), strings and binaries by their unescaped text.
 * alt_set_add() appends (the set's array token @arr bounds the text it may
 * have to keep), alt_set_sort() sorts, alt_set_build() does both for a
 * whole payload (-EINVAL for an element that is not a string or, in a
 * number set, not a number). alt_set_has() needs a sorted set and uses
 * scratch slot 1.
 */
struct alt_set_elem {
	union {
		struct sm_ddb_number num;
		struct sm_bytes s;
	};
	unsigned pos; /* in the array */
};

struct alt_set {
	char type; /* 'S', 'N', 'B' */
	int arr;   /* the payload's array token */
	struct alt_set_elem *e;
	unsigned n, cap;
	char *buf; /* escaped elements, unescaped */
	size_t used;
};

void
alt_set_init(struct alt_set *set, char type);
void
alt_set_free(struct alt_set *set);
int
alt_set_add(struct alt_op *op, struct alt_set *set, const struct sm_json_doc *d, int tok);
void
alt_set_sort(struct alt_set *set);
int
alt_set_build(struct alt_op *op, struct alt_set *set, const struct sm_json_doc *d, int arr);
bool
alt_set_has(struct alt_op *op, const struct alt_set *set, const struct sm_json_doc *d, int tok);

/* Validate attribute value @tok of @d and write its canonical JSON to @o. */
int
alt_value_write(struct alt_op *op, const struct sm_json_doc *d, int tok, struct sm_json_out *o,
		bool key, const char *what);
/* The type key of an attribute value ("S", ...) into *type (NUL-terminated, <= 4 chars) and its payload token. */
int
alt_value_type(const struct sm_json_doc *d, int tok, char type[5], int *payload);
void
alt_value_shard_fini(void);
/* Free the update code's per-shard scratch (at shard teardown). */
void
alt_eval_shard_fini(void);

/* A top-level attribute an update changed: its new JSON in op->scratch, unless removed. */
struct alt_change {
	const char *name;
	const char *json;
	size_t len;
	bool removed;
};

/*
 * The attributes the last alt_apply_update() on this shard changed, in
 * *@out (per-shard, valid until the next update): their count, or -ENOMEM.
 */
int
alt_update_changes(struct alt_op *op, const struct alt_change **out);
/* Free the item code's per-shard scratch (at shard teardown). */
void
alt_item_shard_fini(void);
/* begins_with(): a string or binary prefix of the same type. */
bool
alt_value_begins_with(struct alt_op *op, struct alt_val a, struct alt_val b);
/* contains(): a substring, a set element, or a list element. */
bool
alt_value_contains(struct alt_op *op, struct alt_val set, struct alt_val v);
/* Equality and order of two attribute values; -EINVAL when they cannot be ordered. */
bool
alt_value_equal(struct alt_op *op, struct alt_val a, struct alt_val b);
int
alt_value_compare(struct alt_op *op, struct alt_val a, struct alt_val b, int *cmp);
/* The bytes of a string payload (unescaped into @buf when needed). */
int
alt_payload_str(struct alt_op *op, const struct sm_json_doc *d, int tok, struct sm_bytes *out);
/* The decoded bytes of a B payload, appended to op->keys. */
int
alt_payload_binary(struct alt_op *op, const struct sm_json_doc *d, int tok, struct sm_bytes *out);

/* The key attribute @name of item object @obj as store key bytes (validated). */
int
alt_key_part(struct alt_op *op, const struct sm_json_doc *d, int obj, const struct sm_column *c,
	     char type, struct sm_bytes *out);
/* Attribute value @v (of @d) as the key bytes of column @c. */
int
alt_key_value(struct alt_op *op, const struct sm_json_doc *d, int v, const struct sm_column *c,
	      char type, struct sm_bytes *out);
/* A NUL-terminated copy that lives as long as the op (never moves); NULL when out of memory. */
const char *
alt_keep_str(struct alt_op *op, const void *p, size_t n);
/*
 * Room for @n bytes of kept strings in op->names, reserved while nothing is
 * kept yet (growing it later would move kept strings; alt_keep_str() takes
 * another block then). 0 or -ENOMEM.
 */
int
alt_keep_reserve(struct alt_op *op, size_t n);
size_t
alt_name_unkeep(uint8_t *p, size_t n);
/* Free what alt_keep_str() kept beyond op->names (when the op ends). */
void
alt_keep_release(struct alt_op *op);
/* Read the Key member (or a whole item's key attributes) into pk/ck. */
int
alt_item_key(struct alt_op *op, const struct sm_json_doc *d, int obj, bool whole_item,
	     struct sm_key *pk, struct sm_key *ck);
/* ExclusiveStartKey of an index (op->tab a view): its keys and the base's. */
int
alt_view_key(struct alt_op *op, const struct sm_json_doc *d, int obj, struct sm_key *pk,
	     struct sm_key *ck);
/* alt_write_row_item() for a row of an index's view (op->tab a view). */
void
alt_write_view_row(struct alt_op *op, struct sm_json_out *o, const struct sm_key *pk,
		   const struct sm_key *ck, const struct sm_cell_view *attrs);
/* Write a key attribute value from store bytes as {"S": ...}. */
void
alt_write_key_value(struct sm_json_out *o, char type, struct sm_bytes v);
/* Write the item of a row (key columns and the attrs map) as a JSON object. */
void
alt_write_row_item(struct alt_op *op, struct sm_json_out *o, const struct sm_key *pk,
		   const struct sm_key *ck, const struct sm_cell_view *attrs);

/* Reserve @n bytes in @b (it must not move afterwards); 0 or -ENOMEM. */
int
alt_bytes_reserve(struct alt_bytes *b, size_t n);
uint8_t *
alt_bytes_put(struct alt_bytes *b, const void *p, size_t n);

/* One attribute of a map being built: name and value JSON. */
struct alt_kv {
	struct sm_bytes k, v;
};

/*
 * Serialize a map<text, blob> of @n pairs (sorted here, the last of a
 * repeated key kept) into @dst, which must have room (-ENOSPC otherwise:
 * it never moves); the value in *out.
 */
int
alt_build_map(struct alt_bytes *dst, struct alt_kv *kvs, unsigned n, struct sm_bytes *out);
/* One more store request in op->sreqs (they may move: fill them before submitting). */
struct sm_store_req *
alt_new_sreq(struct alt_op *op);

/* ---- tables (alt_table.c) ---- */

/* 'S', 'N' or 'B': the DynamoDB type of a key column. */
char
alt_col_type(const struct sm_column *c);
/* Forget the cached index set of table @base on this shard (the next lookup rebuilds it). */
void
alt_meta_drop_index_set(const struct sm_uuid *base);
/* Answer an UpdateTable with the table's description as it is now. */
void
alt_table_answer_updated(struct alt_op *op);

/* The table's tag list (JSON array), as this shard's overlay has it now. */
const char *
alt_table_tags(const struct alt_table *t);
const char *
alt_table_tags_of(const struct sm_table *t);
/*
 * Change op->tab's tags on every shard, then answer @op with op->out: @add
 * (JSON array of {Key, Value}) set, @remove (JSON array of keys) dropped.
 */
void
alt_table_set_tag(struct alt_op *op, const char *add, const char *remove);

/* A TableName given as the table's ARN (arn:...:table/T): T, in place; others unchanged. */
void
alt_table_name_of_arn(struct sm_bytes *name);

/* Look up the request's TableName into op->tab; fails the op when missing. */
int
alt_table_from_request(struct alt_op *op);
int
alt_table_lookup(struct alt_op *op, const char *name, size_t len, struct alt_table *out);
/* The same without the index set (t->idx NULL): GetItem and BatchGetItem need none. */
int
alt_table_from_request_read(struct alt_op *op);
int
alt_table_lookup_read(struct alt_op *op, const char *name, size_t len, struct alt_table *out);
void
alt_table_release(struct alt_table *t);

void
alt_create_table(struct alt_op *op);
void
alt_delete_table(struct alt_op *op);
void
alt_describe_table(struct alt_op *op);
void
alt_list_tables(struct alt_op *op);
void
alt_update_table(struct alt_op *op);
void
alt_tag_resource(struct alt_op *op);
void
alt_untag_resource(struct alt_op *op);
void
alt_list_tags(struct alt_op *op);
void
alt_describe_endpoints(struct alt_op *op);
void
alt_meta_shard_fini(void);

/* ---- secondary indexes (alt_index.c) ---- */

struct alt_key_schema {
	char hash[ALT_MAX_KEY_ATTR_NAME + 1];
	char range[ALT_MAX_KEY_ATTR_NAME + 1]; /* "" without */
};

/* An index being created: its definition and its view's table definition. */
struct alt_index_def {
	char name[256];
	char view[256];
	bool lsi;
	struct alt_key_schema keys;
	char hash_type, range_type;
	struct sm_column_def cols[5];
	char *opt; /* the ALT_OPT_INDEX value */
	struct sm_option opts[1];
	struct sm_table_def def;
};

/* KeySchema of @obj with ScyllaDB's checks (@ctx names the index kind in messages). */
int
alt_parse_key_schema(struct alt_op *op, int obj, const char *ctx, struct alt_key_schema *out);
/* AttributeDefinitions: an array of named, typed entries without duplicates. */
int
alt_check_attr_defs(struct alt_op *op, int defs, const char *ctx);
/* The type ('S', 'N', 'B') AttributeDefinitions gives @name; fails the op otherwise. */
int
alt_attr_type(struct alt_op *op, int defs, const char *name, char *type);
/* The store type of a key of DynamoDB type @type. */
const char *
alt_cql_key_type(char type);
/*
 * CreateTable's LocalSecondaryIndexes and GlobalSecondaryIndexes for base
 * table @table (keys @base of types @bht, @brt) in keyspace @ks: *out gets
 * @nout definitions (alt_index_defs_free()), or the op was answered.
 */
int
alt_index_parse_create(struct alt_op *op, const char *table, const char *ks,
		       const struct alt_key_schema *base, char bht, char brt, int defs,
		       struct alt_index_def **out, unsigned *nout);
void
alt_index_defs_free(struct alt_index_def *defs, unsigned n);
/* Does any of @defs use attribute @name in its key? */
bool
alt_index_defs_use(const struct alt_index_def *defs, unsigned n, const char *name);

/* The indexes of @base in catalog @cat (keyspace @ks), one reference. */
struct alt_index_set *
alt_index_set_build(const struct sm_catalog *cat, const struct sm_keyspace *ks,
		    const struct sm_table *base);
void
alt_index_set_put(struct alt_index_set *s);
/* Drop the cache's reference to @s (a newer schema came): barriers watch it until unused. */
void
alt_index_set_retire(struct alt_index_set *s);
const struct alt_index *
alt_index_find(const struct alt_index_set *s, const char *name, size_t len);

/* DescribeTable's LocalSecondaryIndexes and GlobalSecondaryIndexes members of @t. */
void
alt_index_describe(struct sm_json_out *o, const struct alt_table *t, const char *arn);
/* The AttributeDefinitions entries of @t's index keys that are not base keys. */
void
alt_index_attr_defs(struct sm_json_out *o, const struct alt_table *t);

/* Query or Scan: read index @name_tok of op->tab instead; fails the op when none. */
int
alt_index_open(struct alt_op *op, int name_tok);
/* Does index @x project attribute @name? */
bool
alt_index_projects(const struct alt_index *x, const char *name, size_t len);
/* A GSI being backfilled cannot be read yet. */
bool
alt_index_readable(const struct alt_index *x);

/* Is @name the key attribute of one of the indexes in @s? */
bool
alt_index_is_key(const struct alt_index_set *s, const char *name);
/* A written value: refuse what an index key cannot hold (op->errmsg). */
int
alt_index_check_value(struct alt_op *op, const char *name, const struct sm_json_doc *d, int v);
int
alt_index_check_item(struct alt_op *op, const struct sm_json_doc *d, int obj);
/*
 * The view rows of one base item going from @od/@otok (NULL: none) to
 * @nd/@ntok (NULL: none) at @ts, queued in op->sreqs (op->nsreqs reset).
 */
int
alt_index_build_writes(struct alt_op *op, const struct alt_index_set *s, int64_t ts,
		       const struct sm_json_doc *od, int otok, const struct sm_json_doc *nd,
		       int ntok, const struct sm_key *pk, const struct sm_key *ck);
/* The same, submitted; @next runs when they are written (the op fails otherwise). */
void
alt_index_write(struct alt_op *op, int64_t ts, const struct sm_json_doc *od, int otok,
		const struct sm_json_doc *nd, int ntok, const struct sm_key *pk,
		const struct sm_key *ck, alt_op_fn next);
/* UpdateTable's GlobalSecondaryIndexUpdates: 0 nothing to do, 1 under way, < 0 answered. */
int
alt_index_update_table(struct alt_op *op, int updates);
void
alt_index_shard_fini(void);

/* ---- consumed capacity (alt_capacity.c) ---- */

/* ReturnConsumedCapacity and ReturnItemCollectionMetrics into op (fails the op when wrong). */
int
alt_capacity_parse(struct alt_op *op);
/* Units, in halves, of reading (@consistent or not) or writing an item of @bytes. */
uint64_t
alt_rcu_halves(size_t bytes, bool consistent);
uint64_t
alt_wcu_halves(size_t bytes);
/* A ConsumedCapacity object for @table (reading @index, or NULL) as op->cap_mode asks. */
void
alt_capacity_write(struct alt_op *op, struct sm_json_out *o, const char *table, uint64_t halves,
		   const struct alt_index *index);
/* Has the table a local secondary index (item collections exist)? */
bool
alt_table_has_lsi(const struct alt_table *t);
/* An ItemCollectionMetrics object for partition @pk of op->tab. */
void
alt_item_collection_metrics(struct alt_op *op, struct sm_json_out *o, const struct sm_key *pk);

/* ---- ScyllaDB's extras (alt_system.c) ---- */

/* The live-updatable settings as this shard has them (system.config writes). */
struct alt_live {
	char *values[4];  /* as written; NULL: the default */
	char server[256]; /* the Server header's value, "" none */
	bool no_date, no_content_type;
};

extern __thread struct alt_live alt_live;

void
alt_system_shard_fini(void);

/* Answer op->fn on system table view @name (ALT_SYSTEM_PREFIX...), or not found. */
void
alt_system_request(struct alt_op *op, struct sm_bytes name);
void
alt_describe_continuous_backups(struct alt_op *op);
/* GET /localnodes: this node, as a JSON list (dc= and rack= filter it). */
void
alt_localnodes(struct sm_http_req *req);

/* ---- Time to Live (alt_ttl.c) ---- */

/* The TTL attribute tag list @tags names into @buf; false: TTL disabled. */
bool
alt_ttl_attr(const char *tags, char *buf, size_t cap);
/* @tags without the TTL tag, plus one naming @attr unless NULL, to @o. */
int
alt_ttl_tags_set(const char *tags, const char *attr, struct sm_json_out *o);
/* Is string token @key the TTL tag's name (internal: not for TagResource)? */
bool
alt_ttl_is_tag(const struct sm_json_doc *d, int key);
/* A whole-table select of column @col for sm_store_scan_local() (background scans). */
void
alt_local_scan_init(struct sm_select *s, const struct sm_table *t, const uint16_t *col,
		    int (*row)(void *ctx, const struct sm_row_view *r), void *ctx);
/* Is attribute value @v an expiration time passed at @now_s (within DynamoDB's 5 years)? */
bool
alt_ttl_expired(const struct sm_json_doc *d, int v, int64_t now_s);
void
alt_update_ttl(struct alt_op *op);
void
alt_describe_ttl(struct alt_op *op);
/* The shard's expiry scanner: started at shard init, stopped at fini. */
void
alt_ttl_shard_init(void);
void
alt_ttl_shard_fini(void);

/* ---- Streams (alt_streams.c) ---- */

enum alt_stream_view {
	ALT_STREAM_NONE,
	ALT_STREAM_KEYS_ONLY,
	ALT_STREAM_NEW_IMAGE,
	ALT_STREAM_OLD_IMAGE,
	ALT_STREAM_NEW_AND_OLD,
};

/* A table's stream as its hidden tag has it. */
struct alt_stream_spec {
	uint8_t view; /* enum alt_stream_view */
	bool enabled; /* false: disabled, still listed and readable */
	int64_t created_ms;
	int64_t disabled_ms; /* when it was disabled, 0 unknown or enabled */
};

/* The stream tag list @tags names into *@out; false when the table never had one. */
bool
alt_stream_spec_of(const char *tags, struct alt_stream_spec *out);
/* The stream before it, disabled and still readable (24 hours, as DynamoDB's), into *@out;
 * false when there is none. */
bool
alt_stream_prev_of(const char *tags, struct alt_stream_spec *out);
/* Is string token @key the stream's tag (internal: not for TagResource)? */
bool
alt_stream_is_tag(const struct sm_json_doc *d, int key);
/* CreateTable's StreamSpecification @spec (-1 none): the tag added to *@tags (JSON, sm_malloc'd). */
int
alt_stream_create_tags(struct alt_op *op, int spec, char **tags);
/* UpdateTable's StreamSpecification: 1 and the tag delta (alt_table_set_tag()'s @add), or answered. */
int
alt_stream_update_table(struct alt_op *op, int spec, struct sm_json_out **delta);
/* DescribeTable's LatestStreamArn, LatestStreamLabel and StreamSpecification. */
void
alt_stream_describe(struct sm_json_out *o, const struct alt_table *t);
/*
 * On the owning shard, right after a write of op->tab (stream enabled)
 * applied at @ts: its change record from the item before (@old, NULL none)
 * and after (@nw, NULL none), JSON with the keys; none when they are equal.
 */
void
alt_stream_record(struct alt_op *op, int64_t ts, const struct sm_key *pk, const struct sm_key *ck,
		  const char *old, size_t olen, const char *nw, size_t nlen);
/* Set by the TTL scanner around the deletes it runs. */
extern __thread bool alt_stream_service;
void
alt_list_streams(struct alt_op *op);
void
alt_describe_stream(struct alt_op *op);
void
alt_get_shard_iterator(struct alt_op *op);
void
alt_get_records(struct alt_op *op);
void
alt_stream_shard_fini(void);

/* ---- expressions (alt_eval.c) ---- */

/* Parse the request member @member as an expression of @kind (-1/NULL when absent). */
int
alt_parse_expr(struct alt_op *op, const char *member, enum sm_ddb_expr_kind kind,
	       struct sm_ddb_expr **out);
/* Reject unused ExpressionAttributeNames/Values (after every expression was parsed). */
int
alt_check_unused(struct alt_op *op);
/* Evaluate a condition on the item in op->idoc (none: no item). */
int
alt_eval_cond(struct alt_op *op, const struct sm_ddb_cond *c, const struct sm_json_doc *item,
	      int item_tok, bool *out);
/* ---- legacy conditions (alt_legacy.c): Expected, QueryFilter, ScanFilter ---- */

/* The errors legacy Expected has whatever the item (unknown operators, arguments). */
int
alt_check_expected(struct alt_op *op, int expected_tok);
/* Evaluate legacy Expected on the item; *out true when it holds. */
int
alt_eval_expected(struct alt_op *op, int expected_tok, const struct sm_json_doc *item, int item_tok,
		  bool *out);
/* ConditionalOperator for conditions @conds: *any 1 for OR; -EINVAL (op->errmsg) when wrong. */
int
alt_legacy_operator(struct alt_op *op, int conds, int *any);
/* Every error conditions map @conds (request member @member) has, whatever the item. */
int
alt_legacy_validate(struct alt_op *op, int conds, const char *member);
/* Evaluate @conds on item @itok of @d (-1: none), all of them (or any, @any). */
int
alt_legacy_eval(struct alt_op *op, int conds, bool any, const struct sm_json_doc *d, int itok,
		bool *out);
/* Write @item_tok's attributes projected by op->proj (or AttributesToGet) to @o. */
int
alt_write_projected(struct alt_op *op, const struct sm_json_doc *item, int item_tok,
		    struct sm_json_out *o);
/*
 * Apply op->update (or legacy AttributeUpdates) to the item (@item_tok of
 * @item, -1 for none), writing the new item JSON to op->nitem; returns the
 * top-level names changed through the callback.
 */
int
alt_apply_update(struct alt_op *op, const struct sm_json_doc *item, int item_tok);
/* sm_ddb_expr_env's name callback (arg: the op). */
const char *
alt_env_name(void *arg, const char *ref);
/* sm_ddb_expr_env's value_type callback (arg: the op). */
const char *
alt_env_value_type(void *arg, const char *ref);
/* The name a #placeholder stands for, or the name itself. */
const char *
alt_resolve_name(struct alt_op *op, const char *name);

void
alt_op_free_exprs(struct alt_op *op);
/* A temporary document slot (reset per op). */
int
alt_tmp_doc(struct alt_op *op, struct sm_json_out **o, struct sm_json_doc **d);

/* ---- items (alt_item.c) ---- */

void
alt_put_item(struct alt_op *op);
void
alt_get_item(struct alt_op *op);
void
alt_delete_item(struct alt_op *op);
void
alt_update_item(struct alt_op *op);
void
alt_batch_write(struct alt_op *op);
void
alt_batch_get(struct alt_op *op);

/* ---- queries (alt_query.c) ---- */

void
alt_query(struct alt_op *op);
void
alt_scan(struct alt_op *op);

#endif /* ALT_PRIV_H */
