/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ALT_PRIV_H
#define ALT_PRIV_H

/* Private to the Alternator executor (alt_*.c, sm_alternator.c). */

#include <stdbool.h>
#include <stdint.h>

#include "sm_alternator.h"
#include "sm_core.h"
#include "sm_ddb_expr.h"
#include "sm_ddb_number.h"
#include "sm_json.h"
#include "sm_store.h"

#define ALT_KS_PREFIX "alternator_"
#define ALT_ATTRS_COL ":attrs"
#define ALT_ERR_PREFIX "com.amazonaws.dynamodb.v20120810#"
#define ALT_MAX_ITEM_BYTES (400u * 1024)
#define ALT_MAX_KEY_BYTES 1024u
#define ALT_MAX_BATCH_WRITE 25u
#define ALT_MAX_BATCH_GET 100u

/* Table options the endpoint keeps in the catalog (immutable per table). */
#define ALT_OPT_CREATED "alternator:created"
#define ALT_OPT_BILLING "alternator:billing"
#define ALT_OPT_TAGS "alternator:tags"
#define ALT_OPT_THROUGHPUT "alternator:throughput"

/* A DynamoDB table as one request sees it. */
struct alt_table {
	const struct sm_table *t; /* held (sm_table_get) until the op ends */
	const char *name;
	const struct sm_column *hash, *range; /* range NULL without a sort key */
	char hash_type, range_type;	      /* 'S', 'N', 'B'; 0 none */
	uint16_t attrs_col;
	enum sm_alt_isolation iso;
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
	char cond_err[256];
	int limit;
	bool count_only;
	bool forward;
	uint32_t scanned, returned;
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
	struct alt_op *next_free;
};

extern __thread const struct sm_alternator_config *alt_cfg;

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

/* ---- values (alt_value.c) ---- */

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
/* Free what alt_keep_str() kept beyond op->names (when the op ends). */
void
alt_keep_release(struct alt_op *op);
/* Read the Key member (or a whole item's key attributes) into pk/ck. */
int
alt_item_key(struct alt_op *op, const struct sm_json_doc *d, int obj, bool whole_item,
	     struct sm_key *pk, struct sm_key *ck);
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

/* ---- tables (alt_table.c) ---- */

/* Look up the request's TableName into op->tab; fails the op when missing. */
int
alt_table_from_request(struct alt_op *op);
int
alt_table_lookup(struct alt_op *op, const char *name, size_t len, struct alt_table *out);
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
/* The errors legacy Expected has whatever the item (unknown operators, arguments). */
int
alt_check_expected(struct alt_op *op, int expected_tok);
/* Evaluate legacy Expected on the item; *out true when it holds. */
int
alt_eval_expected(struct alt_op *op, int expected_tok, const struct sm_json_doc *item, int item_tok,
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
