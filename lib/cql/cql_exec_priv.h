/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQL_EXEC_PRIV_H
#define CQL_EXEC_PRIV_H

/* Private to the CQL executor (sm_cql_exec*.c). */

#include <stdbool.h>
#include <stdint.h>

#include "sm_core.h"
#include "sm_cql_conn.h"
#include "sm_cql_exec.h"
#include "sm_cql_parse.h"
#include "sm_cql_proto.h"
#include "sm_cql_system.h"
#include "sm_cql_value.h"
#include "sm_store.h"

#include "cql_func_priv.h"

/* One output column of a SELECT. */
enum out_kind {
	OUT_CELL,      /* the value of a selected column */
	OUT_WRITETIME, /* bigint microseconds */
	OUT_TTL,       /* int seconds left, null when none */
	OUT_TOKEN,     /* token(pk): bigint */
};

struct out_col {
	enum out_kind kind;
	unsigned cell; /* index into the read's cells */
};

/*
 * A computed selection (sm_cql_exec_selection.c): each output column is a
 * tree of these nodes, evaluated on each row read, or on each group's first
 * row and its aggregates.
 */
enum sel_op {
	SEL_CELL,      /* a column read: cell */
	SEL_WRITETIME, /* of cell */
	SEL_TTL,       /* of cell */
	SEL_TOKEN,     /* the row's partition token */
	SEL_FIELD,     /* a field of arg's user type value: path */
	SEL_CONST,     /* a literal: konst */
	SEL_FN,	       /* a native function of arg (or of nothing): fn */
	SEL_CAST,      /* CAST(arg AS type) */
	SEL_AGG,       /* an aggregate of arg over the group: agg, akind */
	SEL_ELEM,      /* arg's element sub[0] (map or set), or its slice sub[0]..sub[1] */
	SEL_TOJSON,    /* toJson(arg): its JSON text */
};

enum agg_kind {
	AGG_COUNT_ROWS, /* COUNT(*) */
	AGG_COUNT,	/* count(x): the non-null ones */
	AGG_MIN,
	AGG_MAX,
	AGG_SUM,
	AGG_AVG,
};

struct sel_node {
	enum sel_op op;
	const struct sm_type *type; /* of the result */
	unsigned cell;
	int arg; /* the argument's node, -1 for none */
	const uint16_t *path;
	struct cql_fn fn;
	enum sm_type_kind ak; /* the argument's kind (FN) */
	const char *fname;
	unsigned agg;
	enum agg_kind akind;
	struct sm_bytes konst;
	bool knull;
	int sub[2];  /* ELEM: SEL_CONST nodes, -1 for an open end */
	int bind;    /* CONST: a bind marker's index (its value read per op), -1: konst */
	bool slice;  /* ELEM */
};

/* An aggregate's state over one group (op->aggs). */
struct agg_state {
	int64_t count;
	__int128 isum;
	double dsum;
	float fsum;
	bool has;      /* min and max: val holds one; varint and decimal sums: val is the sum */
	int32_t scale; /* decimal sum */
	uint8_t *val;
	uint32_t len, cap;
};

/* A literal already converted for a receiver type. */
struct cql_const {
	const struct sm_cql_term *t;
	const struct sm_type *type;
	uint8_t *bytes;
	uint32_t len;
	enum sm_cql_conv_state state;
};

/*
 * A statement bound to the catalog: the parse tree, its table and what the
 * protocol reports about it. Shared by the executions that use it (refs).
 */
struct cql_prepared {
	uint32_t refs;
	uint8_t id[16];
	char *ks;   /* the session keyspace the text was prepared in */
	char *text; /* NUL-terminated */
	size_t len;
	struct sm_cql_stmt *stmt;
	struct sm_uuid version;	      /* catalog version bound against */
	const struct sm_table *table; /* held; NULL for USE, DDL and BATCH */
	bool system;		      /* table is a virtual system table */
	/* SELECT through a secondary index: its view (held), the relation it answers */
	const struct sm_table *ix_view;
	int ix_rel; /* index into the WHERE relations, -1: none */
	/* SELECT: the columns of the first WHERE relations, found on first use */
	const struct sm_column *rel_cols[4];
	bool ix_local;
	bool lwt;		      /* a conditional statement */
	uint8_t timeout_kind;	      /* enum sm_cql_timeout_kind, set at prepare */
	uint8_t metric_kind;	      /* enum cql_metric_stmt, set at prepare */
	/* bind metadata */
	struct sm_cql_colspec *bind_specs;
	unsigned nbind;
	uint16_t pk_idx[SM_MAX_KEY_PARTS];
	unsigned npk_idx;
	/* result metadata: SELECT columns, or [applied] and the pre-image */
	struct sm_cql_colspec *res_specs;
	unsigned nres, res_cap;
	struct out_col *outs; /* SELECT: one per res_spec */
	uint16_t *read_cols;  /* SELECT: the store columns read; LWT: the pre-image */
	unsigned nread, read_cap;
	struct sm_bytes *read_keys; /* NULL, or read_cap: each read's element (sm_select.col_keys) */
	uint32_t *read_cell; /* while binding: column id -> its index in read_cols + 1 */
	/* computed selections: one root per res_spec; outs is unused then */
	struct sel_node *sel_nodes;
	unsigned nsel_nodes, sel_cap;
	unsigned *sel_roots;
	unsigned json_n;	 /* SELECT JSON: the roots, as keys of one [json] column */
	const char **json_keys; /* each root's JSON key, quoted */
	bool sel_eval;	      /* some output is computed */
	bool grouped;	      /* aggregates or GROUP BY: a row per group */
	bool distinct;	      /* SELECT DISTINCT: a row per partition */
	unsigned naggs;	      /* SEL_AGG nodes, each its agg_state */
	unsigned group_parts; /* GROUP BY: the key components that make a group, 0: one group */
	/* types this statement built (list<T> of IN ?, ...), freed with it */
	const struct sm_type **owned;
	unsigned nowned, owned_cap;
	char **owned_str;
	unsigned nowned_str, owned_str_cap;
	/* constant terms converted on first use (cached statements only) */
	struct cql_const *consts;
	unsigned nconsts, consts_cap;
	bool cached;
	struct cql_prepared *hash_next;
};

/* A relation tested on each row read: values are op->spans[first, first + n). */
struct cql_filter {
	const struct sm_column *c;
	unsigned cell; /* regular and static columns: index into the read's cells */
	enum sm_cql_op op;
	bool elem; /* c[key] op value: spans[first] is the key */
	unsigned first, n;
};

/* Per-shard executor state. */
struct cql_shard {
	struct sm_uuid_gen gen;
	struct cql_prepared **buckets;
	unsigned nbuckets;
	unsigned nprepared;
	struct sm_pool op_pool;
	/* scratch sized by the input, kept between requests */
	uint64_t *insert_seen; /* INSERT: one bit per column id named */
	unsigned insert_seen_cap;
	bool *where_used; /* SELECT: one per WHERE relation, consumed by the key plan */
	unsigned where_used_cap;
	bool ready;
};

extern __thread struct cql_shard cql_shard;
extern const struct sm_cql_exec_config *cql_cfg;

/* Store requests a batch of many statements keeps in flight (see cql_op.muts). */
#define CQL_WRITE_WINDOW 32u

/* An execution in flight. Pooled per shard; its buffers keep their memory. */
struct cql_op {
	struct sm_cql_req *req;
	struct cql_prepared *ps;
	const struct sm_cql_params *params;
	struct sm_cql_value *binds; /* by marker index */
	unsigned nbinds;
	unsigned bind_cap;
	struct sm_cql_buf vals; /* converted values */
	struct sm_cql_buf out;	/* the response frame */
	int16_t stream;
	struct sm_cql_value_ctx vctx;
	int64_t now_us;
	/* modification */
	struct sm_cell_op *ops;
	unsigned nops, ops_cap;
	struct sm_condition *conds;
	unsigned nconds, conds_cap;
	struct sm_bytes *in_vals; /* IN (...) values of conditions */
	unsigned nin, in_cap;
	/* select */
	struct sm_ck_range *ranges;
	unsigned nranges, ranges_cap;
	struct sm_key *keys; /* partitions to read (pk IN) */
	unsigned nkeys, keys_cap;
	struct sm_cql_rows_writer rw;
	/* pending store requests of a batch or a multi-partition write */
	struct sm_store_req *sreqs;
	unsigned nsreqs, sreqs_cap;
	/*
	 * A batch of more than CQL_WRITE_WINDOW statements: its mutations wait
	 * here and go out through a window of sreqs, refilled as each
	 * completes, so a batch of 65,535 statements holds 65,535 mutations,
	 * not 65,535 store requests (13 KB each).
	 */
	bool wave;
	bool pumping; /* wave_pump() is running: completions only return slots */
	struct sm_mutation *muts;
	unsigned nmuts, muts_cap, next_mut, inflight;
	struct sm_store_req *free_slots[CQL_WRITE_WINDOW];
	unsigned nfree_slots;
	unsigned pending;
	int first_err;
	char errmsg[256];
	int32_t errcode;
	/* select state */
	unsigned key_i;
	uint32_t limit_left; /* UINT32_MAX: none */
	uint32_t page_size;  /* 0: no paging */
	uint32_t page_rows;
	int64_t count;
	bool range;
	bool serial;
	int64_t tok_start, tok_end;
	uint32_t ppl;
	bool reversed;
	bool submitting, completed; /* a store request completing inline */
	struct cql_ix *ix; /* a read through a global index (sm_cql_exec_select.c) */
	/* a conditional batch over several rows (sm_cql_exec_modify.c), or NULL */
	struct cql_lwt_rows *lwtr;
	/* pk IN with ORDER BY, unpaged: rows sorted across partitions at the end */
	struct cql_post_order *post;
	bool post_on;
	/* filters: relations that are not slices (ALLOW FILTERING) */
	struct cql_filter *filters;
	unsigned nfilters, filters_cap;
	/* converted values referenced by index until they are all converted */
	struct sm_cql_value_span *spans;
	unsigned nspans, spans_cap;
	/* computed and grouped selections (sm_cql_exec_selection.c) */
	struct sm_cql_buf ev;	/* evaluation scratch, a row at a time */
	struct agg_state *aggs; /* ps->naggs of them */
	unsigned aggs_cap;
	bool group_open;	/* a group has its first row */
	bool group_skip;	/* ...past PER PARTITION LIMIT: aggregated, not emitted */
	uint32_t part_groups;	/* groups of the partition so far (PER PARTITION LIMIT) */
	struct sm_cql_buf snap; /* that first row's values */
	struct sm_cell_view *snap_cells;
	unsigned snap_cap;
	struct sm_key snap_pk, snap_ck;
	int64_t snap_token;
	/* tablets-routing-v1: the misrouted request's tablet + 1 (0: no payload) of tablet_table */
	uint32_t tablet_hint;
	const struct sm_table *tablet_table;
	bool in_use; /* between op_get() and its release: catches a double release */
	bool group_ddl;	    /* a group's DDL: the peers follow once it applied here */
	unsigned big_grows; /* cql_big_grows at op_get(): changed means shrink at release */
	struct cql_op *next_free;
};

/*
 * A request for the one partition @pk of tablets table @t (the caller tests
 * t->tablet_count, so vnode tables pay one test): when the connection
 * negotiated TABLETS_ROUTING_V1 and this shard does not hold the
 * partition's tablet, the reply will carry the tablets-routing-v1 payload
 * (transport/server.cc, cql3/statements/select_statement.cc: ScyllaDB
 * serves the request and adds the hint).
 */
void
cql_tablet_hint_slow(struct cql_op *op, const struct sm_table *t, const struct sm_key *pk);

/*
 * Write the tablets-routing-v1 custom payload ([bytes map] of one entry) of
 * @t's @tablet, replica (@host_id, @shard), at @p (90 bytes); its length.
 */
size_t
cql_tablet_payload(uint8_t *p, const struct sm_table *t, uint32_t tablet,
		   const struct sm_uuid *host_id, unsigned shard);

/* Reply helpers. */
void
cql_op_fail(struct cql_op *op, int32_t code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void
cql_op_finish(struct cql_op *op);
/* Release @op and hand its request to the group, for peer @peer to answer. */
void
cql_op_forward(struct cql_op *op, unsigned peer);

/*
 * The appliance group's coordinator path (sm_cql_exec_group.c). The routes
 * return 0 to run the op here, 1 when it went to its owner and -1 when it
 * was refused (both: the op is gone).
 */
bool
cql_group_active(const struct cql_op *op);
/* This server is a member of a group with peers: the routes have work (one test off it). */
extern __thread bool cql_group_on;
int
cql_group_route_select(struct cql_op *op);
int
cql_group_route_write(struct cql_op *op);
/* Before a DDL statement runs: 0 (marked to spread), or -1 when refused (the op is gone). */
int
cql_group_ddl_begin(struct cql_op *op);
/* A marked DDL's answer is ready: true when the peers now take it over. */
bool
cql_group_ddl_applied(struct cql_op *op);

/* Statements, in sm_cql_exec_select.c, sm_cql_exec_modify.c and sm_cql_exec_ddl.c. */
void
cql_exec_ddl(struct cql_op *op);
void
cql_exec_select(struct cql_op *op);
void
cql_exec_modify(struct cql_op *op);
void
cql_exec_batch(struct cql_op *op, const struct sm_cql_batch *batch);

/*
 * Convert @t for the receiver @type; the value lands in op->vals and *span
 * tells where (offsets: vals may move while more values are added).
 * 0, or -errno after failing the op with the right error.
 */
int
cql_value(struct cql_op *op, const struct sm_cql_term *t, const struct sm_type *type,
	  const char *col, struct sm_cql_value_span *span);

/* A view of a converted value once every conversion of the op is done. */
static inline struct sm_bytes
cql_span_bytes(const struct cql_op *op, const struct sm_cql_value_span *s)
{
	struct sm_bytes b = { SM_CQL_EMPTY.p, 0 };

	/* Only then: vals is NULL before its first value (NULL + 0 is undefined). */
	if (s->len > 0)
		b = (struct sm_bytes){ op->vals.p + s->off, s->len };
	return b;
}

/* Convert @t into a new entry of op->spans; its index in *idx. */
int
cql_value_idx(struct cql_op *op, const struct sm_cql_term *t, const struct sm_type *type,
	      const char *col, unsigned *idx);

/* Parse and bind a BATCH's text statement; *out holds one reference. */
int
cql_exec_prepare_text(const char *ks, struct sm_bytes text, struct cql_prepared **out, char *err,
		      size_t errlen, int32_t *code);
/* A prepared statement by id, with a reference; NULL when unknown. */
struct cql_prepared *
cql_exec_lookup(struct sm_bytes id);
void
cql_exec_put(struct cql_prepared *ps);

/* The table an INSERT, UPDATE, DELETE or SELECT names; NULL for others. */
const struct sm_cql_qname *
cql_stmt_table(const struct sm_cql_stmt *s);

/* Load the bound values of op->ps's statement; 0, or the op was failed. */
int
cql_exec_load_values(struct cql_op *op, const struct sm_cql_values *vals);

/* Pick the index a SELECT reads through, if any (sm_cql_exec_select.c). */
int
cql_bind_index(struct cql_prepared *ps);
/* Make op_release() take its slow path (which frees op->ix) for @op. */
void
cql_op_slow_release(struct cql_op *op);
/* Free @op's index read state (several KB: only index reads have one). */
void
cql_select_ix_free(struct cql_op *op);

/* Continue a SELECT's reads (sm_cql_exec_select.c). */
void
cql_exec_select_pump(struct cql_op *op);

/* cql_grow() when the room is not there yet (reallocates). */
int
cql_grow_slow(void **arr, unsigned *cap, unsigned need, size_t size);

/* Grow an array of @size-byte items to hold @need; 0 or -ENOMEM. Inline: it is on every request. */
static inline int
cql_grow(void **arr, unsigned *cap, unsigned need, size_t size)
{
	if (__builtin_expect(need <= *cap, 1))
		return 0;
	return cql_grow_slow(arr, cap, need, size);
}

/*
 * Binding helpers (sm_cql_exec.c) and the selection (sm_cql_exec_selection.c).
 * cql_own_*: memory freed with the statement; cql_add_read_col(): the cell
 * that reads column @id (once however often it is named); cql_add_res(): a
 * result column.
 */
int
cql_own_type(struct cql_prepared *ps, const struct sm_type *t);
const char *
cql_own_str(struct cql_prepared *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int
cql_add_read_col(struct cql_prepared *ps, uint16_t id, unsigned *cell);
int
cql_add_res(struct cql_prepared *ps, const char *name, const struct sm_type *type,
	    enum out_kind kind, unsigned cell);
/* SELECT's result columns, reads and selection (ScyllaDB's selection/selection.cc). */
int
cql_bind_select(struct cql_prepared *ps, char *err, size_t errlen, int32_t *code);

/*
 * The row sink's side of computed and grouped selections: one row read
 * (0, or < 0 to stop the read), and the end of the read (the last group's
 * row, or the one row of an aggregate over nothing). 0, or -errno after
 * which the op was failed (cql_sel_finish) or must be (cql_sel_row).
 */
int
cql_sel_row(struct cql_op *op, const struct sm_row_view *r);
int
cql_sel_finish(struct cql_op *op);
/* Release what an op's selection state holds (op_destroy()). */
void
cql_sel_op_free(struct cql_op *op);

/* Bind (or rebind after a schema change) @ps against the current catalog. */
int
cql_bind(struct cql_prepared *ps, const char *session_ks, char *err, size_t errlen, int32_t *code);

/* The table a statement names, in the session keyspace when unqualified. */
const struct sm_table *
cql_lookup_table(const struct sm_cql_qname *q, const char *session_ks, bool *system, char *err,
		 size_t errlen, int32_t *code);

/* The store's failure as a CQL error. */
void
cql_op_store_error(struct cql_op *op, const struct sm_store_req *r, bool write);

/*
 * ScyllaDB's max_partition_key_restrictions_per_query and
 * max_clustering_key_restrictions_per_query (both 100 by default): the
 * partitions, and the clustering prefixes, that one statement's IN lists
 * name (their cartesian product).
 */
#define CQL_MAX_IN_PARTITIONS 100u
#define CQL_MAX_IN_CLUSTERING 100u

/*
 * Fail @op for an IN list or cartesian product of @size keys, over the
 * limit, with ScyllaDB's message (cql3/restrictions/statement_restrictions.cc).
 * Returns -EINVAL.
 */
int
cql_fail_in_size(struct cql_op *op, bool partition, uint64_t size);

/* The bigint/int of a converted option value (LIMIT, TTL...). */
int
cql_int_option(struct cql_op *op, const struct sm_cql_term *t, const char *what, int64_t min,
	       int64_t max, bool is_long, int64_t *out, bool *present);

#endif /* CQL_EXEC_PRIV_H */
