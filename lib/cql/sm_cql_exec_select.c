/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SELECT: the WHERE clause becomes partition keys (or a token range),
 * clustering slices and row filters; the store's row sink writes each row
 * straight into the Rows frame; pages resume from a position that any shard
 * can continue.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cql_exec_priv.h"
#include "sm_index.h"
#include "sm_table.h"

#define MAX_IN_KEYS CQL_MAX_IN_PARTITIONS   /* partitions one IN may name (cartesian product) */
#define MAX_CK_PREFIX CQL_MAX_IN_CLUSTERING /* clustering prefixes one IN may name */
#define COUNT_CHUNK 4096u  /* rows per store read while counting */
#define PAGING_VERSION 1

/* A value list per key column while the WHERE clause is read. */
struct col_vals {
	unsigned first[MAX_IN_KEYS];
	unsigned n;
	bool set; /* restricted, possibly by an empty IN */
};

static bool
is_serial(uint16_t cl)
{
	return cl == SM_CQL_SERIAL || cl == SM_CQL_LOCAL_SERIAL;
}

static uint64_t
be_read(struct sm_bytes b)
{
	uint64_t v = 0;
	unsigned i;

	for (i = 0; i < b.len && i < 8; i++)
		v = v << 8 | b.p[i];
	return v;
}

/* ---- row filters ---- */

static bool
filter_match(const struct cql_op *op, const struct cql_filter *f, const struct sm_row_view *r)
{
	const struct sm_type *t = f->c->type;
	struct sm_bytes v, want, k, val;
	struct sm_coll_iter it;
	unsigned i;
	int cmp;

	switch (f->c->kind) {
	case SM_COL_PARTITION:
		v = r->pk->part[f->c->pos];
		break;
	case SM_COL_CLUSTERING:
		if (r->ck->n <= f->c->pos)
			return false;
		v = r->ck->part[f->c->pos];
		break;
	default:
		if (!r->cells[f->cell].present)
			return false;
		v = r->cells[f->cell].value;
		break;
	}
	if (f->elem) {
		/* m[key] op value: find the element first. */
		struct sm_bytes key = cql_span_bytes(op, &op->spans[f->first]);
		bool found = false;

		if (sm_coll_iter_init(&it, v) < 0)
			return false;
		while (sm_coll_next(&it, &k, &val, true)) {
			if (sm_value_compare(t->elem, k, key) == 0) {
				found = true;
				break;
			}
		}
		if (!found)
			return false;
		v = val;
		t = t->val;
		want = cql_span_bytes(op, &op->spans[f->first + 1]);
		cmp = sm_value_compare(t, v, want);
		goto compare;
	}
	switch (f->op) {
	case SM_CQL_OP_IN:
		for (i = 0; i < f->n; i++)
			if (sm_value_compare(t, v, cql_span_bytes(op, &op->spans[f->first + i])) ==
			    0)
				return true;
		return false;
	case SM_CQL_OP_CONTAINS:
	case SM_CQL_OP_CONTAINS_KEY:
		want = cql_span_bytes(op, &op->spans[f->first]);
		if (sm_coll_iter_init(&it, v) < 0)
			return false;
		while (sm_coll_next(&it, &k, &val, t->kind == SM_TYPE_MAP)) {
			if (f->op == SM_CQL_OP_CONTAINS_KEY || t->kind != SM_TYPE_MAP) {
				if (sm_value_compare(t->elem, k, want) == 0)
					return true;
			} else if (sm_value_compare(t->val, val, want) == 0) {
				return true;
			}
		}
		return false;
	default:
		break;
	}
	want = cql_span_bytes(op, &op->spans[f->first]);
	cmp = sm_value_compare(t, v, want);
compare:
	switch (f->op) {
	case SM_CQL_OP_EQ:
		return cmp == 0;
	case SM_CQL_OP_NE:
		return cmp != 0;
	case SM_CQL_OP_LT:
		return cmp < 0;
	case SM_CQL_OP_LE:
		return cmp <= 0;
	case SM_CQL_OP_GT:
		return cmp > 0;
	case SM_CQL_OP_GE:
		return cmp >= 0;
	default:
		return false;
	}
}

/* ---- the row sink: runs on the shard that reads ---- */

static void
put_be(uint8_t *p, uint64_t v, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
}

/*
 * SELECT ... WHERE pk IN (...) ORDER BY c, unpaged: ScyllaDB reads every
 * partition (LIMIT rows of each) and sorts the rows by the clustering key
 * afterwards (select_statement.cc needs_post_query_ordering()). Each
 * partition arrives in the asked order already; the rows' encoded bytes
 * are noted where they start in the reply, with their clustering key, and
 * put in order (then cut to LIMIT) before the reply ends.
 */
struct cql_post_row {
	size_t off;   /* where the row starts in the reply */
	size_t len;   /* its bytes */
	size_t key;   /* its clustering key in keys[], sm_key_encode()d */
	size_t klen;
	uint32_t seq; /* arrival: equal keys keep it */
};

struct cql_post_order {
	uint32_t limit; /* LIMIT, applied after the sort */
	struct cql_post_row *rows;
	unsigned nrows, rows_cap;
	uint8_t *keys;
	unsigned keys_len, keys_cap; /* below the reply's own size limit */
};

static void
post_free(struct cql_op *op)
{
	if (op->post == NULL)
		return;
	sm_free(op->post->rows);
	sm_free(op->post->keys);
	sm_free(op->post);
	op->post = NULL;
}

static int
post_note(struct cql_op *op, const struct sm_row_view *r)
{
	struct cql_post_order *po = op->post;
	struct cql_post_row *pr;
	size_t need = 0;
	unsigned i;

	for (i = 0; i < r->ck->n; i++)
		need += 4 + r->ck->part[i].len;
	if (need > UINT32_MAX - po->keys_len ||
	    cql_grow((void **)&po->rows, &po->rows_cap, po->nrows + 1, sizeof(*po->rows)) < 0 ||
	    cql_grow((void **)&po->keys, &po->keys_cap, po->keys_len + (unsigned)need, 1) < 0)
		return -ENOMEM;
	pr = &po->rows[po->nrows];
	pr->off = op->rw.b->len;
	pr->seq = (uint32_t)po->nrows;
	pr->key = po->keys_len;
	pr->klen = sm_key_encode(r->ck, po->keys + po->keys_len, need);
	po->keys_len += (unsigned)pr->klen;
	if (po->nrows > 0)
		po->rows[po->nrows - 1].len = pr->off - po->rows[po->nrows - 1].off;
	po->nrows++;
	return 0;
}

struct post_cmp_ctx {
	const struct sm_table *t;
	const uint8_t *keys;
	bool reversed;
};

static int
post_cmp(const void *a, const void *b, void *arg)
{
	const struct cql_post_row *x = a, *y = b;
	const struct post_cmp_ctx *cx = arg;
	struct sm_key kx, ky;
	unsigned i;
	int c = 0;

	/* the keys were encoded here: they decode */
	if (sm_key_decode(cx->keys + x->key, x->klen, &kx) < 0 ||
	    sm_key_decode(cx->keys + y->key, y->klen, &ky) < 0)
		return x->seq < y->seq ? -1 : 1;
	for (i = 0; c == 0 && i < kx.n && i < ky.n; i++) {
		const struct sm_column *col = &cx->t->cols[cx->t->npk + i];

		c = sm_value_compare(col->type, kx.part[i], ky.part[i]);
		if (col->desc)
			c = -c;
	}
	if (c == 0)
		c = kx.n < ky.n ? -1 : kx.n > ky.n; /* a static-only row first */
	if (cx->reversed)
		c = -c;
	if (c == 0)
		c = x->seq < y->seq ? -1 : 1;
	return c;
}

/* Put the noted rows in clustering order and keep LIMIT of them. */
static __attribute__((noinline)) int
post_sort(struct cql_op *op)
{
	struct cql_post_order *po = op->post;
	struct sm_cql_buf *b = op->rw.b;
	struct post_cmp_ctx cx = { op->ps->table, po->keys, op->reversed };
	size_t start, total, at = 0, i, keep;
	uint8_t *tmp;

	if (po->nrows == 0)
		return 0;
	po->rows[po->nrows - 1].len = b->len - po->rows[po->nrows - 1].off;
	start = po->rows[0].off;
	total = b->len - start;
	/* a row the selection wrote nothing for is no row */
	for (i = 0, keep = 0; i < po->nrows; i++)
		if (po->rows[i].len > 0)
			po->rows[keep++] = po->rows[i];
	po->nrows = (unsigned)keep;
	if (keep == 0) {
		b->len = start;
		op->rw.rows = 0;
		return 0;
	}
	qsort_r(po->rows, po->nrows, sizeof(*po->rows), post_cmp, &cx);
	keep = SM_MIN(po->nrows, (size_t)po->limit);
	tmp = sm_malloc(total);
	if (tmp == NULL)
		return -ENOMEM;
	for (i = 0; i < keep; i++) {
		memcpy(tmp + at, b->p + po->rows[i].off, po->rows[i].len);
		at += po->rows[i].len;
	}
	memcpy(b->p + start, tmp, at);
	sm_free(tmp);
	b->len = start + at;
	op->rw.rows = (uint32_t)keep;
	return 0;
}

static int
sink_row(void *ctx, const struct sm_row_view *r)
{
	struct cql_op *op = ctx;
	const struct cql_prepared *ps = op->ps;
	unsigned i;
	uint8_t *p;

	for (i = 0; i < op->nfilters; i++)
		if (!filter_match(op, &op->filters[i], r))
			return 0;
	if (SM_UNLIKELY(ps->sel_eval))
		return cql_sel_row(op, r); /* computed and grouped (LIMIT counts groups) */
	if (op->limit_left != UINT32_MAX) {
		if (op->limit_left == 0)
			return 0;
		op->limit_left--;
	}
	for (i = 0; i < ps->nres; i++) {
		const struct out_col *o = &ps->outs[i];
		const struct sm_cell_view *cv = o->kind == OUT_TOKEN ? NULL : &r->cells[o->cell];

		switch (o->kind) {
		case OUT_CELL:
			sm_cql_rows_cell(&op->rw, cv->present ? cv->value : (struct sm_bytes){ 0 });
			break;
		case OUT_WRITETIME:
			if (!cv->present) {
				sm_cql_rows_cell(&op->rw, (struct sm_bytes){ 0 });
				break;
			}
			p = sm_cql_rows_cell_space(&op->rw, 8);
			if (p != NULL)
				put_be(p, (uint64_t)cv->writetime, 8);
			break;
		case OUT_TTL:
			if (!cv->present || cv->ttl <= 0) {
				sm_cql_rows_cell(&op->rw, (struct sm_bytes){ 0 });
				break;
			}
			p = sm_cql_rows_cell_space(&op->rw, 4);
			if (p != NULL)
				put_be(p, (uint32_t)cv->ttl, 4);
			break;
		case OUT_TOKEN:
			p = sm_cql_rows_cell_space(&op->rw, 8);
			if (p != NULL)
				put_be(p, (uint64_t)r->token, 8);
			break;
		}
	}
	op->page_rows++;
	return op->rw.b->err;
}

/* sink_row() of a post-ordered read: each row noted where it starts (a filtered
 * row writes nothing and is dropped by post_sort()) */
static int
sink_row_post(void *ctx, const struct sm_row_view *r)
{
	struct cql_op *op = ctx;

	if (post_note(op, r) < 0)
		return -ENOMEM;
	return sink_row(ctx, r);
}

/* ---- reads through a global secondary index ---- */

/*
 * The index view's partition for the value lists the base rows in token
 * order (clustered by idx_token, then the base key). It is read in
 * batches of IX_BATCH base partitions; each batch becomes op->keys, which
 * the keyed read path reads with the index relation as a filter (so a
 * view row that a concurrent write made stale selects nothing). A page
 * that ends inside a batch resumes by reading the batch again from where
 * it started.
 */
#define IX_BATCH 64u
#define IX_STOP (-EALREADY) /* the sink has a full batch */

struct cql_ix {
	const struct sm_table *view;
	unsigned filter;	   /* op->filters[filter] is the index relation */
	bool entries;		   /* m[k] = v: the view is partitioned by (k, v) */
	uint8_t *tuple;		   /* that (k, v) */
	int pk_src[SM_MAX_KEY_PARTS]; /* each base key part: view ck part, -1 the value */
	unsigned nprefix;	   /* view ck parts up to the base partition key */
	bool more;		   /* the view has partitions after this batch */
	bool loaded;		   /* op->keys holds this batch */
	bool submitting, completed;
	uint32_t start_len, next_len; /* encoded view ck prefixes: this batch's and the next's exclusive start */
	uint8_t start[SM_MAX_KEY_BYTES + 64];
	uint8_t next[SM_MAX_KEY_BYTES + 64];
	uint8_t *buf; /* the batch's base keys, encoded */
	size_t len;
	unsigned cap;
	uint32_t offs[IX_BATCH + 1];
	unsigned nkeys;
	struct sm_key last;
	struct sm_ck_range range;
	struct sm_store_req req;
};

int
cql_bind_index(struct cql_prepared *ps)
{
	const struct sm_cql_select *s = &ps->stmt->select;
	const struct sm_table *t = ps->table, *v, *best = NULL;
	const struct sm_keyspace *k;
	struct sm_index_info info;
	unsigned i, j;

	ps->ix_rel = -1;
	if (ps->system || t == NULL)
		return 0;
	k = sm_catalog_keyspace(sm_store_catalog(), t->ks);
	/* ScyllaDB picks the first restriction an index can answer (a global one first) */
	for (i = 0; i < s->nwhere && best == NULL; i++) {
		const struct sm_cql_relation *r = &s->where[i];
		const struct sm_column *c;
		const char *want; /* the index kind the relation needs */

		if (r->kind == SM_CQL_REL_COLUMN && r->op == SM_CQL_OP_EQ)
			want = "";
		else if (r->kind == SM_CQL_REL_COLUMN && r->op == SM_CQL_OP_CONTAINS)
			want = "values";
		else if (r->kind == SM_CQL_REL_COLUMN && r->op == SM_CQL_OP_CONTAINS_KEY)
			want = "keys";
		else if (r->kind == SM_CQL_REL_ELEM && r->op == SM_CQL_OP_EQ)
			want = "entries";
		else
			continue;
		c = sm_table_column(t, r->cols[0]);
		if (c != NULL && c->type->kind == SM_TYPE_SET && strcmp(want, "values") == 0)
			want = "keys"; /* a set's elements */
		for (j = 0; c != NULL && (v = sm_index_nth(k, t, j)) != NULL; j++) {
			const char *fn = sm_option_get(v->options, v->noptions, SM_INDEX_OPT_FN);

			if (sm_index_info(v, t, &info) < 0 || info.target != c)
				continue;
			/* "full" answers = on a frozen collection as "" does on any value */
			if (strcmp(fn != NULL && strcmp(fn, "full") != 0 ? fn : "", want) != 0)
				continue;
			if (best == NULL || (ps->ix_local && !info.local)) {
				best = v;
				ps->ix_rel = (int)i;
				ps->ix_local = info.local;
			}
		}
	}
	if (best != NULL) {
		sm_table_get(best);
		ps->ix_view = best;
	}
	return 0;
}

static int
ix_row(void *ctx, const struct sm_row_view *r)
{
	struct cql_op *op = ctx;
	struct cql_ix *ix = op->ix;
	const struct sm_table *t = op->ps->table;
	struct sm_key pk, prefix;
	size_t n;
	unsigned i;

	pk.n = t->npk;
	for (i = 0; i < t->npk; i++)
		pk.part[i] = ix->pk_src[i] < 0 ? r->pk->part[0] : r->ck->part[ix->pk_src[i]];
	if (ix->nkeys > 0 && ix->last.n == pk.n) {
		bool same = true;

		for (i = 0; i < pk.n && same; i++)
			same = pk.part[i].len == ix->last.part[i].len &&
			       memcmp(pk.part[i].p, ix->last.part[i].p, pk.part[i].len) == 0;
		if (same)
			return 0; /* another row of the same base partition */
	}
	if (ix->nkeys == IX_BATCH) {
		ix->more = true;
		return IX_STOP;
	}
	n = sm_key_encode(&pk, NULL, 0);
	if (cql_grow((void **)&ix->buf, &ix->cap, (unsigned)(ix->len + n), 1) < 0)
		return -ENOMEM;
	sm_key_encode(&pk, ix->buf + ix->len, n);
	ix->offs[ix->nkeys++] = (uint32_t)ix->len;
	ix->len += n;
	ix->offs[ix->nkeys] = (uint32_t)ix->len;
	sm_key_decode(ix->buf + ix->offs[ix->nkeys - 1], n, &ix->last);
	/* where the next batch starts: after every view row of this partition */
	prefix.n = ix->nprefix;
	for (i = 0; i < ix->nprefix; i++)
		prefix.part[i] = r->ck->part[i];
	ix->next_len = (uint32_t)sm_key_encode(&prefix, ix->next, sizeof(ix->next));
	return 0;
}

/* After a batch's view read: its base partitions become op->keys. */
static int
ix_fetched(struct cql_op *op)
{
	struct cql_ix *ix = op->ix;
	struct sm_store_req *sr = &ix->req;
	unsigned i;

	if (sr->result < 0 && sr->result != IX_STOP) {
		cql_op_store_error(op, sr, false);
		return -1;
	}
	if (ix->nkeys > 0 &&
	    cql_grow((void **)&op->keys, &op->keys_cap, ix->nkeys, sizeof(*op->keys)) < 0) {
		cql_op_fail(op, SM_CQL_ERR_SERVER, "out of memory");
		return -1;
	}
	for (i = 0; i < ix->nkeys; i++)
		sm_key_decode(ix->buf + ix->offs[i], ix->offs[i + 1] - ix->offs[i], &op->keys[i]);
	op->nkeys = ix->nkeys;
	ix->loaded = true;
	return 0;
}

static void
ix_done(struct sm_store_req *sr)
{
	struct cql_op *op = sr->ctx;

	if (op->ix->submitting) {
		op->ix->completed = true;
		return;
	}
	if (ix_fetched(op) == 0)
		cql_exec_select_pump(op);
}

/* Read the next batch: 0 when it is in op->keys, 1 when it completes later. */
static int
ix_fetch(struct cql_op *op)
{
	struct cql_ix *ix = op->ix;
	struct sm_store_req *sr = &ix->req;
	struct sm_select *sel = &sr->sel;

	sm_store_req_init(sr, SM_REQ_SELECT);
	sr->done = ix_done;
	sr->ctx = op;
	sel->table = ix->view;
	sel->pk.n = 1;
	sel->pk.part[0] = cql_span_bytes(op, &op->spans[op->filters[ix->filter].first]);
	if (ix->entries) {
		struct sm_bytes f[2] = {
			sel->pk.part[0],
			cql_span_bytes(op, &op->spans[op->filters[ix->filter].first + 1]),
		};
		size_t n = sm_tuple_build(NULL, 0, f, 2);

		if (ix->tuple == NULL) {
			ix->tuple = sm_malloc(n);
			if (ix->tuple == NULL) {
				cql_op_fail(op, SM_CQL_ERR_SERVER, "out of memory");
				return -1;
			}
			sm_tuple_build(ix->tuple, n, f, 2);
		}
		sel->pk.part[0] = (struct sm_bytes){ ix->tuple, (uint32_t)n };
	}
	memset(&ix->range, 0, sizeof(ix->range));
	if (ix->start_len > 0) {
		sm_key_decode(ix->start, ix->start_len, &ix->range.start.prefix);
		ix->range.start.inclusive = false;
		sel->ranges = &ix->range;
		sel->nranges = 1;
	}
	sel->sink.row = ix_row;
	sel->sink.ctx = op;
	ix->len = 0;
	ix->nkeys = 0;
	ix->more = false;
	ix->loaded = false;
	ix->next_len = 0;
	op->nkeys = 0;
	ix->submitting = true;
	ix->completed = false;
	sm_store_submit(sr);
	ix->submitting = false;
	if (!ix->completed)
		return 1;
	return ix_fetched(op) < 0 ? -1 : 0;
}

/* The batch is read: the next one starts where it ended. */
static void
ix_advance(struct cql_op *op)
{
	struct cql_ix *ix = op->ix;

	memcpy(ix->start, ix->next, ix->next_len);
	ix->start_len = ix->next_len;
	ix->loaded = false;
	op->key_i = 0;
	op->nkeys = 0;
}

void
cql_select_ix_free(struct cql_op *op)
{
	post_free(op);
	if (op->ix == NULL)
		return;
	sm_free(op->ix->buf);
	sm_free(op->ix->tuple);
	sm_free(op->ix);
	op->ix = NULL;
}

/* Set up a read through ps->ix_view: 0, or -1 when @op failed. */
static int
ix_setup(struct cql_op *op, unsigned filter)
{
	const struct sm_table *t = op->ps->table, *v = op->ps->ix_view;
	struct cql_ix *ix;
	unsigned i;

	cql_select_ix_free(op);
	if (op->ix == NULL) {
		op->ix = sm_malloc(sizeof(*op->ix));
		if (op->ix == NULL) {
			cql_op_fail(op, SM_CQL_ERR_SERVER, "out of memory");
			return -1;
		}
	}
	ix = op->ix;
	cql_op_slow_release(op); /* where op->ix is freed */
	memset(ix, 0, offsetof(struct cql_ix, start));
	ix->buf = NULL;
	ix->cap = 0;
	ix->len = 0;
	ix->start_len = 0;
	ix->view = v;
	ix->filter = filter;
	ix->tuple = NULL;
	ix->entries = op->ps->stmt->select.where[op->ps->ix_rel].kind == SM_CQL_REL_ELEM;
	ix->nprefix = 1; /* idx_token */
	for (i = 0; i < t->npk; i++) {
		const struct sm_column *vc = sm_table_column(v, t->cols[i].name);

		if (vc == NULL) {
			cql_op_fail(op, SM_CQL_ERR_SERVER, "index %s.%s lacks column %s", v->ks,
				    v->name, t->cols[i].name);
			return -1;
		}
		ix->pk_src[i] = vc->kind == SM_COL_PARTITION ? -1 : (int)vc->pos;
		if (vc->kind == SM_COL_CLUSTERING)
			ix->nprefix = SM_MAX(ix->nprefix, (unsigned)vc->pos + 1);
	}
	return 0;
}

/* ---- paging state: ours, wrapping the store's position ---- */

static int
paging_decode(struct cql_op *op, struct sm_bytes st, struct sm_select *sel)
{
	uint32_t len;

	if (st.len < 13 || st.p[0] != PAGING_VERSION)
		return -EINVAL;
	op->key_i = (unsigned)be_read((struct sm_bytes){ st.p + 1, 4 });
	op->limit_left = (uint32_t)be_read((struct sm_bytes){ st.p + 5, 4 });
	len = (uint32_t)be_read((struct sm_bytes){ st.p + 9, 4 });
	if (SM_UNLIKELY(op->ix != NULL)) {
		/* and where the batch started: [u32 length][view clustering prefix] */
		uint32_t xl;

		if (len > SM_PAGING_MAX || 17 + (size_t)len > st.len)
			return -EINVAL;
		xl = (uint32_t)be_read((struct sm_bytes){ st.p + 13 + len, 4 });
		if (xl > sizeof(op->ix->start) || 17 + (size_t)len + xl != st.len || op->key_i > IX_BATCH)
			return -EINVAL;
		memcpy(op->ix->start, st.p + 17 + len, xl);
		op->ix->start_len = xl;
		if (xl > 0 && sm_key_decode(op->ix->start, xl, &op->ix->range.start.prefix) < 0)
			return -EINVAL;
	} else if (len > SM_PAGING_MAX || 13 + (size_t)len != st.len || op->key_i >= op->nkeys + 1) {
		return -EINVAL;
	}
	sel->resume = len > 0;
	sel->paging.len = len;
	memcpy(sel->paging.data, st.p + 13, len);
	return 0;
}

/* A page through an index: ours, then where the index batch started. */
static __attribute__((noinline, cold)) int
ix_finish_rows(struct cql_op *op, uint32_t len)
{
	struct sm_select *sel = &op->sreqs[0].sel;
	uint8_t *buf = sm_malloc(17 + SM_PAGING_MAX + sizeof(op->ix->start));
	struct sm_bytes st;
	int ret;

	if (buf == NULL)
		return -ENOMEM;
	buf[0] = PAGING_VERSION;
	put_be(buf + 1, op->key_i, 4);
	put_be(buf + 5, op->limit_left, 4);
	put_be(buf + 9, len, 4);
	memcpy(buf + 13, sel->paging.data, len);
	put_be(buf + 13 + len, op->ix->start_len, 4);
	memcpy(buf + 17 + len, op->ix->start, op->ix->start_len);
	st.p = buf;
	st.len = 17 + len + op->ix->start_len;
	ret = sm_cql_rows_end(&op->rw, &st);
	sm_free(buf);
	return ret;
}

static int
finish_rows(struct cql_op *op, bool more)
{
	struct sm_select *sel = &op->sreqs[0].sel;
	uint8_t buf[13 + SM_PAGING_MAX];
	struct sm_bytes st;
	uint32_t len = sel->more ? sel->paging.len : 0;

	if (!more) {
		if (SM_UNLIKELY(op->post_on)) {
			op->post_on = false;
			if (post_sort(op) < 0)
				return -ENOMEM;
		}
		return sm_cql_rows_end(&op->rw, NULL);
	}
	if (SM_UNLIKELY(op->ix != NULL))
		return ix_finish_rows(op, len);
	buf[0] = PAGING_VERSION;
	put_be(buf + 1, op->key_i, 4);
	put_be(buf + 5, op->limit_left, 4);
	put_be(buf + 9, len, 4);
	memcpy(buf + 13, sel->paging.data, len);
	st.p = buf;
	st.len = 13 + len;
	return sm_cql_rows_end(&op->rw, &st);
}

static void
select_finish(struct cql_op *op, bool more)
{
	if (op->ps->grouped) {
		/* the last group's row, or an aggregate's one row */
		if (cql_sel_finish(op) < 0)
			return;
		more = false;
	}
	if (finish_rows(op, more) < 0) {
		cql_op_fail(op, SM_CQL_ERR_SERVER, "out of memory encoding rows");
		return;
	}
	cql_op_finish(op);
}

static bool
page_full(const struct cql_op *op)
{
	return op->page_size != 0 && op->page_rows >= op->page_size;
}

/*
 * After a store read: true when another read is needed (the select is set
 * up for it), false when the op was answered.
 */
static bool
after_read(struct cql_op *op)
{
	struct sm_store_req *sr = &op->sreqs[0];
	struct sm_select *sel = &sr->sel;

	if (sr->result < 0) {
		if (op->first_err != 0)
			/* the selection stopped the read (cql_sel_row()) */
			cql_op_fail(op, op->errcode, "%s", op->errmsg);
		else
			cql_op_store_error(op, sr, false);
		return false;
	}
	if (op->rw.b->err != 0) {
		cql_op_fail(op, SM_CQL_ERR_SERVER, "out of memory encoding rows");
		return false;
	}
	if (op->limit_left == 0) {
		select_finish(op, false);
		return false;
	}
	if (sel->more) {
		if (page_full(op)) {
			select_finish(op, true);
			return false;
		}
		sel->resume = true;
		return true;
	}
	op->key_i++;
	if (op->range || op->key_i >= op->nkeys) {
		if (SM_UNLIKELY(op->ix != NULL) && op->ix->more) {
			ix_advance(op);
			sel->resume = false;
			sel->paging.len = 0;
			if (page_full(op)) {
				select_finish(op, true);
				return false;
			}
			return true;
		}
		select_finish(op, false);
		return false;
	}
	sel->resume = false;
	sel->paging.len = 0;
	if (page_full(op)) {
		select_finish(op, true);
		return false;
	}
	return true;
}

static void
read_done(struct sm_store_req *sr)
{
	struct cql_op *op = sr->ctx;

	if (op->submitting) {
		op->completed = true;
		return;
	}
	if (after_read(op))
		cql_exec_select_pump(op);
}

/* Issue reads until one goes to another shard or the op is answered. */
void
cql_exec_select_pump(struct cql_op *op)
{
	struct sm_store_req *sr = &op->sreqs[0];
	struct sm_select *sel = &sr->sel;
	uint32_t chunk;

	for (;;) {
		if (SM_UNLIKELY(op->key_i >= op->nkeys) && op->ix != NULL) {
			/* the next batch of base partitions from the index */
			if (!op->ix->loaded && ix_fetch(op) != 0)
				return;
			if (op->key_i >= op->nkeys) {
				if (!op->ix->more) {
					select_finish(op, false);
					return;
				}
				ix_advance(op);
				continue;
			}
		}
		chunk = op->ps->grouped ? COUNT_CHUNK : 0;
		if (op->page_size != 0)
			chunk = op->page_size - op->page_rows;
		if (op->limit_left != UINT32_MAX && (chunk == 0 || op->limit_left < chunk))
			chunk = op->limit_left;
		sel->limit = chunk;
		sel->more = false;
		sel->rows = 0;
		if (!op->range)
			sel->pk = op->keys[op->key_i];
		sr->result = 0;
		sr->err[0] = '\0';
		if (op->ps->system) {
			sm_cql_system_set_view(sm_cql_conn_service(op->req->conn)->node);
			sr->result = sm_cql_system_select(sel);
			if (sr->result < 0)
				snprintf(sr->err, sizeof(sr->err), "reading %s.%s failed",
					 op->ps->table->ks, op->ps->table->name);
		} else {
			op->submitting = true;
			op->completed = false;
			sm_store_submit(sr);
			op->submitting = false;
			if (!op->completed)
				return;
		}
		if (!after_read(op))
			return;
	}
}

/* ---- WHERE ---- */

/*
 * The column of WHERE relation @i (named @name): found once per statement
 * (a prepared statement is its shard's own and keeps its table), the
 * lookup's cost taken off every execution.
 */
static const struct sm_column *
rel_column(struct cql_op *op, unsigned i, const char *name)
{
	struct cql_prepared *ps = op->ps;
	const struct sm_column *c;

	if (SM_LIKELY(i < SM_ARRAY_SIZE(ps->rel_cols) && ps->rel_cols[i] != NULL))
		return ps->rel_cols[i];
	c = sm_table_column(ps->table, name);
	if (c == NULL)
		cql_op_fail(op, SM_CQL_ERR_INVALID, "Undefined column name %s", name);
	else if (i < SM_ARRAY_SIZE(ps->rel_cols))
		ps->rel_cols[i] = c;
	return c;
}

/* The values of an EQ or IN relation on a key column, appended to @cv. */
static int
key_values(struct cql_op *op, const struct sm_cql_relation *r, const struct sm_column *c,
	   struct col_vals *cv)
{
	struct sm_coll_iter it;
	struct sm_bytes e;
	unsigned i, idx, list;
	int ret;

	if (cv->set) {
		cql_op_fail(op, SM_CQL_ERR_INVALID,
			    "%s cannot be restricted by more than one relation if it includes an "
			    "Equal",
			    c->name);
		return -EINVAL;
	}
	cv->set = true;
	if (r->op == SM_CQL_OP_EQ) {
		ret = cql_value_idx(op, r->value, c->type, c->name, &idx);
		if (ret < 0)
			return ret;
		/* a null or unset key value: here once, not for each key of the product */
		if (op->spans[idx].state != SM_CQL_CONV_VALUE) {
			cql_op_fail(op, SM_CQL_ERR_INVALID,
				    "Invalid null value in condition for column %s", c->name);
			return -EINVAL;
		}
		cv->first[cv->n++] = idx;
		return 0;
	}
	if (r->in == NULL && r->value != NULL) {
		/* IN ?: a bound list; each element becomes a value. */
		const struct sm_type *lt = NULL;
		char err[160];

		if (sm_type_collection(SM_TYPE_LIST, true, sm_type_dup(c->type), NULL, &lt, err,
				       sizeof(err)) < 0) {
			cql_op_fail(op, SM_CQL_ERR_INVALID, "%s", err);
			return -EINVAL;
		}
		ret = cql_value_idx(op, r->value, lt, c->name, &list);
		sm_type_free(lt);
		if (ret < 0)
			return ret;
		if (sm_coll_iter_init(&it, cql_span_bytes(op, &op->spans[list])) < 0)
			goto bad;
		if (it.left > MAX_IN_KEYS)
			return cql_fail_in_size(op, c->kind == SM_COL_PARTITION, it.left);
		while (sm_coll_next(&it, &e, NULL, false)) {
			if (cql_grow((void **)&op->spans, &op->spans_cap, op->nspans + 1,
				     sizeof(*op->spans)) < 0)
				goto nomem;
			op->spans[op->nspans].off = (size_t)(e.p - op->vals.p);
			op->spans[op->nspans].len = e.len;
			op->spans[op->nspans].state = SM_CQL_CONV_VALUE;
			cv->first[cv->n++] = op->nspans++;
		}
		return 0;
	}
	/* Counted up front: nothing is converted for a list over the limit. */
	if (r->nin > MAX_IN_KEYS)
		return cql_fail_in_size(op, c->kind == SM_COL_PARTITION, r->nin);
	for (i = 0; i < r->nin; i++) {
		ret = cql_value_idx(op, r->in[i], c->type, c->name, &idx);
		if (ret < 0)
			return ret;
		if (op->spans[idx].state != SM_CQL_CONV_VALUE) {
			cql_op_fail(op, SM_CQL_ERR_INVALID,
				    "Invalid null value in condition for column %s", c->name);
			return -EINVAL;
		}
		cv->first[cv->n++] = idx;
	}
	return 0;
bad:
	cql_op_fail(op, SM_CQL_ERR_INVALID, "Invalid list for IN on %s", c->name);
	return -EINVAL;
nomem:
	cql_op_fail(op, SM_CQL_ERR_SERVER, "out of memory");
	return -ENOMEM;
}

static int
add_filter(struct cql_op *op, const struct sm_cql_relation *r, const struct sm_column *c)
{
	const struct sm_type *vt = c->type;
	struct cql_filter *f;
	unsigned i, idx;
	int ret;

	if (cql_grow((void **)&op->filters, &op->filters_cap, op->nfilters + 1,
		     sizeof(*op->filters)) < 0) {
		cql_op_fail(op, SM_CQL_ERR_SERVER, "out of memory");
		return -ENOMEM;
	}
	f = &op->filters[op->nfilters];
	memset(f, 0, sizeof(*f));
	f->c = c;
	f->op = r->op;
	for (i = 0; i < op->ps->nread; i++)
		if (op->ps->read_cols[i] == c->id &&
		    (op->ps->read_keys == NULL || op->ps->read_keys[i].p == NULL))
			f->cell = i;
	f->first = op->nspans;
	if (r->kind == SM_CQL_REL_ELEM) {
		if (c->type->kind != SM_TYPE_MAP) {
			cql_op_fail(op, SM_CQL_ERR_INVALID, "Column %s is not a map", c->name);
			return -EINVAL;
		}
		f->elem = true;
		ret = cql_value_idx(op, r->key, c->type->elem, c->name, &idx);
		if (ret < 0)
			return ret;
		vt = c->type->val;
	} else if (r->op == SM_CQL_OP_CONTAINS) {
		vt = c->type->kind == SM_TYPE_MAP ? c->type->val : c->type->elem;
	} else if (r->op == SM_CQL_OP_CONTAINS_KEY) {
		vt = c->type->elem;
	}
	if (vt == NULL) {
		cql_op_fail(op, SM_CQL_ERR_INVALID,
			    "Cannot use CONTAINS on non-collection column %s", c->name);
		return -EINVAL;
	}
	if (r->op == SM_CQL_OP_IN) {
		for (i = 0; i < r->nin; i++) {
			ret = cql_value_idx(op, r->in[i], vt, c->name, &idx);
			if (ret < 0)
				return ret;
		}
		if (r->in == NULL) {
			cql_op_fail(op, SM_CQL_ERR_INVALID,
				    "not supported by shardmark: IN ? on a filtered column");
			return -ENOTSUP;
		}
	} else {
		ret = cql_value_idx(op, r->value, vt, c->name, &idx);
		if (ret < 0)
			return ret;
		if (op->spans[idx].state != SM_CQL_CONV_VALUE) {
			cql_op_fail(op, SM_CQL_ERR_INVALID, "Unsupported null value for column %s",
				    c->name);
			return -EINVAL;
		}
	}
	f->n = op->nspans - f->first;
	op->nfilters++;
	return 0;
}

/* Token bounds: the store reads tokens in (start, end]. */
static int
token_bound(struct cql_op *op, const struct sm_cql_relation *r)
{
	struct sm_cql_value_span sp;
	int64_t v;

	if (cql_value(op, r->value, sm_type_simple(SM_TYPE_BIGINT), "partition key token", &sp) < 0)
		return -EINVAL;
	if (sp.state != SM_CQL_CONV_VALUE || sp.len != 8) {
		cql_op_fail(op, SM_CQL_ERR_INVALID, "Invalid null token");
		return -EINVAL;
	}
	v = (int64_t)be_read(cql_span_bytes(op, &sp));
	switch (r->op) {
	case SM_CQL_OP_EQ:
		op->tok_start = SM_MAX(op->tok_start, v == INT64_MIN ? v : v - 1);
		op->tok_end = SM_MIN(op->tok_end, v);
		break;
	case SM_CQL_OP_GT:
		op->tok_start = SM_MAX(op->tok_start, v);
		break;
	case SM_CQL_OP_GE:
		op->tok_start = SM_MAX(op->tok_start, v == INT64_MIN ? v : v - 1);
		break;
	case SM_CQL_OP_LT:
		op->tok_end = SM_MIN(op->tok_end, v == INT64_MIN ? v : v - 1);
		break;
	case SM_CQL_OP_LE:
		op->tok_end = SM_MIN(op->tok_end, v);
		break;
	default:
		cql_op_fail(op, SM_CQL_ERR_INVALID, "Unsupported operator on token()");
		return -EINVAL;
	}
	return 0;
}

/* Clustering prefixes and the slice bound on the column after them. */
struct ck_plan {
	unsigned nprefix; /* prefixes (cartesian product of EQ and IN) */
	unsigned prefix[MAX_CK_PREFIX][SM_MAX_KEY_PARTS]; /* span indexes */
	unsigned plen;					  /* components per prefix */
	/* the slice: bounds on components plen .. plen + blen - 1 */
	bool has_lo, has_hi, lo_incl, hi_incl;
	unsigned lo[SM_MAX_KEY_PARTS], hi[SM_MAX_KEY_PARTS];
	unsigned lo_n, hi_n;
	bool slice_desc; /* the first sliced column is DESC */
};

static __thread struct ck_plan ck_plan_scratch;

static int
ck_extend(struct cql_op *op, struct ck_plan *p, const unsigned *vals, unsigned nvals,
	  unsigned width)
{
	unsigned i, j, k, n = 0;
	static __thread unsigned tmp[MAX_CK_PREFIX][SM_MAX_KEY_PARTS];

	if ((uint64_t)p->nprefix * nvals > MAX_CK_PREFIX)
		return cql_fail_in_size(op, false, (uint64_t)p->nprefix * nvals);
	for (i = 0; i < p->nprefix; i++) {
		for (j = 0; j < nvals; j++) {
			memcpy(tmp[n], p->prefix[i], sizeof(tmp[n][0]) * p->plen);
			for (k = 0; k < width; k++)
				tmp[n][p->plen + k] = vals[j * width + k];
			n++;
		}
	}
	memcpy(p->prefix, tmp, sizeof(tmp[0]) * n);
	p->nprefix = n;
	p->plen += width;
	return 0;
}

static bool
is_slice_op(enum sm_cql_op o)
{
	return o == SM_CQL_OP_LT || o == SM_CQL_OP_LE || o == SM_CQL_OP_GT || o == SM_CQL_OP_GE;
}

/* Record a slice bound: @vals (@n components) for @o. */
static int
ck_slice(struct cql_op *op, struct ck_plan *p, enum sm_cql_op o, const unsigned *vals, unsigned n)
{
	bool lower = o == SM_CQL_OP_GT || o == SM_CQL_OP_GE;
	bool incl = o == SM_CQL_OP_GE || o == SM_CQL_OP_LE;

	if ((lower && p->has_lo) || (!lower && p->has_hi)) {
		cql_op_fail(op, SM_CQL_ERR_INVALID,
			    "More than one restriction was found for the %s bound on clustering "
			    "columns",
			    lower ? "start" : "end");
		return -EINVAL;
	}
	if (lower) {
		p->has_lo = true;
		p->lo_incl = incl;
		memcpy(p->lo, vals, n * sizeof(*vals));
		p->lo_n = n;
	} else {
		p->has_hi = true;
		p->hi_incl = incl;
		memcpy(p->hi, vals, n * sizeof(*vals));
		p->hi_n = n;
	}
	return 0;
}

static int
plan_clustering(struct cql_op *op, const struct sm_cql_select *s, struct ck_plan *p, bool *used)
{
	const struct sm_table *t = op->ps->table;
	unsigned ci, i, k, idx, vals[MAX_IN_KEYS * SM_MAX_KEY_PARTS];
	int ret;

	memset(p, 0, offsetof(struct ck_plan, prefix));
	p->nprefix = 1;
	p->plen = 0;
	p->has_lo = p->has_hi = false;
	p->lo_n = p->hi_n = 0;
	for (ci = 0; ci < t->nck;) {
		const struct sm_column *c = &t->cols[t->npk + ci];
		const struct sm_cql_relation *eq = NULL;
		bool sliced = false;

		for (i = 0; i < s->nwhere; i++) {
			const struct sm_cql_relation *r = &s->where[i];
			const struct sm_column *rc;

			if (used[i] ||
			    (r->kind != SM_CQL_REL_COLUMN && r->kind != SM_CQL_REL_TUPLE))
				continue;
			rc = sm_table_column(t, r->cols[0]);
			if (rc != c)
				continue;
			if (r->kind == SM_CQL_REL_TUPLE) {
				unsigned w = r->ncols;

				for (k = 0; k < w; k++) {
					const struct sm_column *kc = sm_table_column(t, r->cols[k]);

					if (kc == NULL || kc->kind != SM_COL_CLUSTERING ||
					    kc->pos != ci + k) {
						cql_op_fail(op, SM_CQL_ERR_INVALID,
							    "Clustering columns must appear in the "
							    "PRIMARY KEY order in multi-column "
							    "relations");
						return -EINVAL;
					}
				}
				if (r->op == SM_CQL_OP_IN) {
					unsigned nv = 0, e;

					if (r->in == NULL) {
						cql_op_fail(
							op, SM_CQL_ERR_INVALID,
							"not supported by shardmark: (a, b) IN ?");
						return -ENOTSUP;
					}
					/* vals[] holds MAX_IN_KEYS tuples: refuse more, do not drop them */
					if ((uint64_t)p->nprefix * r->nin > MAX_CK_PREFIX)
						return cql_fail_in_size(
							op, false, (uint64_t)p->nprefix * r->nin);
					for (e = 0; e < r->nin; e++) {
						const struct sm_cql_term *tt = r->in[e];

						if (tt->kind != SM_CQL_TERM_TUPLE ||
						    tt->nelems != w) {
							cql_op_fail(op, SM_CQL_ERR_INVALID,
								    "Expected %u elements in value "
								    "tuple",
								    w);
							return -EINVAL;
						}
						for (k = 0; k < w; k++) {
							const struct sm_column *kc =
								&t->cols[t->npk + ci + k];

							ret = cql_value_idx(op, tt->elems[k],
									    kc->type, kc->name,
									    &idx);
							if (ret < 0)
								return ret;
							vals[nv++] = idx;
						}
					}
					ret = ck_extend(op, p, vals, nv / w, w);
					if (ret < 0)
						return ret;
					used[i] = true;
					ci += w;
					eq = r;
					break;
				}
				if (r->value->kind != SM_CQL_TERM_TUPLE || r->value->nelems != w) {
					cql_op_fail(op, SM_CQL_ERR_INVALID,
						    "not supported by shardmark: a multi-column "
						    "relation "
						    "needs a tuple literal of %u values",
						    w);
					return -ENOTSUP;
				}
				for (k = 0; k < w; k++) {
					const struct sm_column *kc = &t->cols[t->npk + ci + k];

					ret = cql_value_idx(op, r->value->elems[k], kc->type,
							    kc->name, &idx);
					if (ret < 0)
						return ret;
					vals[k] = idx;
				}
				used[i] = true;
				if (r->op == SM_CQL_OP_EQ) {
					ret = ck_extend(op, p, vals, 1, w);
					if (ret < 0)
						return ret;
					ci += w;
					eq = r;
					break;
				}
				if (!is_slice_op(r->op)) {
					cql_op_fail(op, SM_CQL_ERR_INVALID,
						    "Unsupported operator on %s", c->name);
					return -EINVAL;
				}
				p->slice_desc = c->desc;
				ret = ck_slice(op, p, r->op, vals, w);
				if (ret < 0)
					return ret;
				sliced = true;
				continue;
			}
			if (r->op == SM_CQL_OP_EQ || r->op == SM_CQL_OP_IN) {
				struct col_vals cv;

				cv.n = 0;
				cv.set = false;
				ret = key_values(op, r, c, &cv);
				if (ret < 0)
					return ret;
				ret = ck_extend(op, p, cv.first, cv.n, 1);
				if (ret < 0)
					return ret;
				used[i] = true;
				ci++;
				eq = r;
				break;
			}
			if (!is_slice_op(r->op))
				continue;
			ret = cql_value_idx(op, r->value, c->type, c->name, &idx);
			if (ret < 0)
				return ret;
			if (op->spans[idx].state != SM_CQL_CONV_VALUE) {
				cql_op_fail(op, SM_CQL_ERR_INVALID,
					    "Invalid null value for clustering column %s", c->name);
				return -EINVAL;
			}
			used[i] = true;
			p->slice_desc = c->desc;
			ret = ck_slice(op, p, r->op, &idx, 1);
			if (ret < 0)
				return ret;
			sliced = true;
		}
		if (eq != NULL && !sliced)
			continue;
		break;
	}
	return 0;
}

/* Resolve span indexes into a key. */
static void
make_key(const struct cql_op *op, struct sm_key *k, const unsigned *idx, unsigned n)
{
	unsigned i;

	k->n = n;
	for (i = 0; i < n; i++)
		k->part[i] = cql_span_bytes(op, &op->spans[idx[i]]);
}

static int
key_cmp(const struct sm_table *t, const struct sm_key *a, const struct sm_key *b)
{
	unsigned i;
	int c;

	for (i = 0; i < a->n && i < b->n; i++) {
		const struct sm_column *col = &t->cols[t->npk + i];

		c = sm_value_compare(col->type, a->part[i], b->part[i]);
		if (c != 0)
			return col->desc ? -c : c;
	}
	return 0;
}

static bool
key_equal(const struct sm_key *a, const struct sm_key *b)
{
	unsigned i;

	for (i = 0; i < a->n; i++)
		if (a->part[i].len != b->part[i].len ||
		    memcmp(a->part[i].p, b->part[i].p, a->part[i].len) != 0)
			return false;
	return true;
}

/* A partition named twice by IN is read once, where it first appears. */
static unsigned
dedupe_keys(struct sm_key *keys, unsigned n)
{
	unsigned i, j, out = 0;

	for (i = 0; i < n; i++) {
		for (j = 0; j < out && !key_equal(&keys[j], &keys[i]); j++)
			;
		if (j == out)
			keys[out++] = keys[i];
	}
	return out;
}

static int
build_ranges(struct cql_op *op, const struct ck_plan *p)
{
	const struct sm_table *t = op->ps->table;
	unsigned i, j, n = 0;
	struct sm_ck_range tmp;

	if (p->plen == 0 && !p->has_lo && !p->has_hi) {
		op->nranges = 0;
		return 0;
	}
	if (cql_grow((void **)&op->ranges, &op->ranges_cap, p->nprefix, sizeof(*op->ranges)) < 0) {
		cql_op_fail(op, SM_CQL_ERR_SERVER, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < p->nprefix; i++) {
		struct sm_ck_range *r = &op->ranges[n];
		struct sm_ck_bound *lo = p->slice_desc ? &r->end : &r->start;
		struct sm_ck_bound *hi = p->slice_desc ? &r->start : &r->end;

		make_key(op, &r->start.prefix, p->prefix[i], p->plen);
		make_key(op, &r->end.prefix, p->prefix[i], p->plen);
		r->start.inclusive = r->end.inclusive = true;
		for (j = 0; p->has_lo && j < p->lo_n; j++)
			lo->prefix.part[lo->prefix.n++] = cql_span_bytes(op, &op->spans[p->lo[j]]);
		if (p->has_lo)
			lo->inclusive = p->lo_incl;
		for (j = 0; p->has_hi && j < p->hi_n; j++)
			hi->prefix.part[hi->prefix.n++] = cql_span_bytes(op, &op->spans[p->hi[j]]);
		if (p->has_hi)
			hi->inclusive = p->hi_incl;
		n++;
	}
	/* IN gives prefixes in the text's order; the store wants clustering order. */
	for (i = 1; i < n; i++) {
		for (j = i; j > 0 && key_cmp(t, &op->ranges[j - 1].start.prefix,
					     &op->ranges[j].start.prefix) > 0;
		     j--) {
			tmp = op->ranges[j];
			op->ranges[j] = op->ranges[j - 1];
			op->ranges[j - 1] = tmp;
		}
	}
	/* Duplicates would return rows twice. */
	for (i = 1, j = 1; i < n; i++) {
		if (p->plen > 0 &&
		    key_cmp(t, &op->ranges[j - 1].start.prefix, &op->ranges[i].start.prefix) == 0 &&
		    !p->has_lo && !p->has_hi)
			continue;
		op->ranges[j++] = op->ranges[i];
	}
	op->nranges = n ? j : 0;
	return 0;
}

/* An EQ on clustering column @c, alone or in a tuple: it needs no ordering. */
static bool
ck_has_eq(const struct sm_cql_select *s, const struct sm_table *t, const struct sm_column *c)
{
	unsigned i, k;

	for (i = 0; i < s->nwhere; i++) {
		const struct sm_cql_relation *r = &s->where[i];

		if (r->op != SM_CQL_OP_EQ ||
		    (r->kind != SM_CQL_REL_COLUMN && r->kind != SM_CQL_REL_TUPLE))
			continue;
		for (k = 0; k < r->ncols; k++)
			if (sm_table_column(t, r->cols[k]) == c)
				return true;
	}
	return false;
}

/*
 * Whether the result may take more than one page (query_pagers.cc
 * may_need_paging()): not when at most one row can come back (LIMIT 1, or
 * one partition with every clustering column fixed by an EQ).
 */
static bool
in_order_needs_paging(const struct cql_op *op, const struct sm_cql_select *s,
		      const struct sm_table *t)
{
	unsigned i;

	if (op->limit_left <= 1)
		return false;
	if (op->nkeys > 1)
		return true;
	for (i = 0; i < t->nck; i++)
		if (!ck_has_eq(s, t, &t->cols[t->npk + i]))
			return true;
	return false;
}

/*
 * pk IN with ORDER BY: a query that may take more than a page is refused as
 * ScyllaDB refuses it; otherwise, with several partitions, the rows are
 * sorted at the end (post_sort()), each partition read LIMIT rows deep.
 * 0, or -1 when @op failed.
 */
static __attribute__((noinline)) int
post_order_setup(struct cql_op *op, const struct sm_cql_select *s)
{
	const struct sm_table *t = op->ps->table;
	struct sm_select *sel = &op->sreqs[0].sel;
	bool pk_in = false;
	unsigned i;

	if (op->ps->grouped)
		return 0;

	for (i = 0; i < s->nwhere; i++) {
		const struct sm_cql_relation *r = &s->where[i];
		const struct sm_column *c;

		if (r->kind != SM_CQL_REL_COLUMN || r->op != SM_CQL_OP_IN)
			continue;
		c = sm_table_column(t, r->cols[0]);
		pk_in |= c != NULL && c->kind == SM_COL_PARTITION;
	}
	if (!pk_in)
		return 0;
	if (op->page_size > 0 && in_order_needs_paging(op, s, t)) {
		/* select_statement.cc: the rows of several partitions are sorted after
		 * the read, which a page cannot be */
		cql_op_fail(op, SM_CQL_ERR_INVALID,
			    "Cannot page queries with both ORDER BY and a IN restriction on the "
			    "partition key; you must either remove the ORDER BY or the IN and sort "
			    "client side, or disable paging for this query");
		return -1;
	}
	if (op->nkeys <= 1 || op->ix != NULL)
		return 0;
	if (op->post == NULL) {
		op->post = sm_calloc(1, sizeof(*op->post));
		if (op->post == NULL) {
			cql_op_fail(op, SM_CQL_ERR_SERVER, "out of memory");
			return -1;
		}
	}
	op->post_on = true;
	sel->sink.row = sink_row_post;
	op->post->nrows = 0;
	op->post->keys_len = 0;
	op->post->limit = op->limit_left;
	if (op->limit_left != UINT32_MAX)
		sel->per_partition_limit = sel->per_partition_limit == 0
						   ? op->limit_left
						   : SM_MIN(sel->per_partition_limit, op->limit_left);
	op->limit_left = UINT32_MAX;
	op->page_size = 0; /* one reply: at most LIMIT rows of each partition */
	return 0;
}

/*
 * Every ORDER BY term, checked as ScyllaDB does (select_statement.cc
 * verify_ordering_is_valid()): clustering columns in key order, all in the
 * table's order or all reversed, and a column skipped only when an EQ fixes
 * it. *@reversed: whether the read goes against clustering order.
 */
static int
order_reversed(struct cql_op *op, const struct sm_cql_select *s, bool *reversed)
{
	const struct sm_table *t = op->ps->table;
	const struct sm_column *c, *prev = NULL;
	unsigned i, at = 0, pos;

	for (i = 0; i < s->norder; i++, prev = c) {
		c = sm_table_column(t, s->order[i].col);
		if (c == NULL) {
			cql_op_fail(op, SM_CQL_ERR_INVALID, "Order by on unknown column %s",
				    s->order[i].col);
			return -EINVAL;
		}
		if (c->kind != SM_COL_CLUSTERING) {
			cql_op_fail(op, SM_CQL_ERR_INVALID,
				    "Order by is currently only supported on the clustered columns "
				    "of the PRIMARY KEY, got %s",
				    s->order[i].col);
			return -EINVAL;
		}
		if (prev != NULL && prev->pos >= c->pos) {
			cql_op_fail(op, SM_CQL_ERR_INVALID,
				    "Order by currently only supports the ordering of columns following "
				    "their declared order in the PRIMARY KEY");
			return -EINVAL;
		}
	}
	if (op->range) {
		cql_op_fail(op, SM_CQL_ERR_INVALID,
			    "ORDER BY is only supported when the partition key is restricted by an EQ "
			    "or an IN.");
		return -EINVAL;
	}
	c = sm_table_column(t, s->order[0].col);
	*reversed = s->order[0].desc != c->desc;
	for (pos = 0; pos <= prev->pos; pos++) {
		c = &t->cols[t->npk + pos];
		if (c == sm_table_column(t, s->order[at].col)) {
			if ((s->order[at].desc != c->desc) != *reversed) {
				cql_op_fail(op, SM_CQL_ERR_INVALID,
					    "Unsupported order by relation - only reversing all columns "
					    "is supported, but column %s has opposite ordering",
					    c->name);
				return -EINVAL;
			}
			at++;
		} else if (!ck_has_eq(s, t, c)) {
			cql_op_fail(op, SM_CQL_ERR_INVALID,
				    "Unsupported order by relation - column %s doesn't have an ordering "
				    "or EQ relation.",
				    c->name);
			return -EINVAL;
		}
	}
	return 0;
}

void
cql_exec_select(struct cql_op *op)
{
	const struct cql_prepared *ps = op->ps;
	const struct sm_cql_select *s = &ps->stmt->select;
	const struct sm_table *t = ps->table;
	const struct sm_cql_params *pr = op->params;
	struct col_vals pkv[SM_MAX_KEY_PARTS];
	bool used_small[16] = { false }, *used = used_small;
	struct ck_plan *plan;
	struct sm_cql_metadata meta;
	struct sm_store_req *sr;
	struct sm_select *sel;
	unsigned i, npk_set = 0, nkeys;
	uint64_t product;
	bool token = false, present, empty, ix_read = false, ix_pk = false, ix_unused = false;
	int64_t v;
	int ret;

	if (s->nwhere > SM_ARRAY_SIZE(used_small)) {
		/* more relations than a statement usually has: per-shard scratch */
		if (cql_grow((void **)&cql_shard.where_used, &cql_shard.where_used_cap,
			     s->nwhere, sizeof(*used)) < 0) {
			cql_op_fail(op, SM_CQL_ERR_SERVER, "out of memory");
			return;
		}
		used = cql_shard.where_used;
		memset(used, 0, s->nwhere * sizeof(*used));
	}
	memset(pkv, 0, sizeof(pkv[0]) * t->npk);
	if (pr->consistency == SM_CQL_ANY || pr->consistency == SM_CQL_EACH_QUORUM) {
		cql_op_fail(op, SM_CQL_ERR_INVALID,
			    "%s ConsistencyLevel is only supported for writes",
			    sm_cql_consistency_name(pr->consistency));
		return;
	}
	op->serial = is_serial(pr->consistency);
	op->limit_left = UINT32_MAX;
	op->tok_start = INT64_MIN;
	op->tok_end = INT64_MAX;
	op->key_i = 0;
	op->ppl = 0;
	op->reversed = false;
	if (ret = cql_int_option(op, s->limit, "LIMIT", 1, INT32_MAX, false, &v, &present), ret < 0)
		return;
	if (present)
		op->limit_left = (uint32_t)v;
	if (ret = cql_int_option(op, s->per_partition_limit, "PER PARTITION LIMIT", 1, INT32_MAX,
				 false, &v, &present),
	    ret < 0)
		return;
	if (present)
		op->ppl = (uint32_t)v;

	/* Partition key and token restrictions. */
	for (i = 0; i < s->nwhere; i++) {
		const struct sm_cql_relation *r = &s->where[i];
		const struct sm_column *c;

		if (r->kind == SM_CQL_REL_TOKEN) {
			if (token_bound(op, r) < 0)
				return;
			token = true;
			used[i] = true;
			continue;
		}
		if (r->kind != SM_CQL_REL_COLUMN)
			continue;
		c = rel_column(op, i, r->cols[0]);
		if (c == NULL)
			return;
		if (c->kind != SM_COL_PARTITION || (r->op != SM_CQL_OP_EQ && r->op != SM_CQL_OP_IN))
			continue;
		if (!pkv[c->pos].set)
			npk_set++;
		if (key_values(op, r, c, &pkv[c->pos]) < 0)
			return;
		used[i] = true;
	}
	/* through a global index: the view lists the partitions to read */
	if (SM_UNLIKELY(ps->ix_view != NULL)) {
		const struct sm_column *ic = sm_table_column(t, s->where[ps->ix_rel].cols[0]);

		if (!ps->ix_local && ic != NULL && ic->kind == SM_COL_PARTITION && npk_set < t->npk) {
			/* a partition key part with an index of its own: not a key */
			ix_pk = true;
			if (pkv[ic->pos].set)
				npk_set--;
			pkv[ic->pos].set = false;
			pkv[ic->pos].n = 0;
			used[ps->ix_rel] = false;
		}
		ix_read = !ps->ix_local && npk_set < t->npk && !token;
		if (ix_read) {
			/* the index relation filters too: a stale view row selects nothing */
			const struct sm_cql_relation *r = &s->where[ps->ix_rel];

			used[ps->ix_rel] = true;
			if (add_filter(op, r, sm_table_column(t, r->cols[0])) < 0 ||
			    ix_setup(op, op->nfilters - 1) < 0)
				return;
			/* the partitions come from the index: a restricted part of the
			 * key filters them (with ALLOW FILTERING, as in ScyllaDB) */
			for (i = 0; i < s->nwhere; i++) {
				const struct sm_column *c;

				if (!used[i] || (int)i == ps->ix_rel ||
				    s->where[i].kind != SM_CQL_REL_COLUMN)
					continue;
				c = sm_table_column(t, s->where[i].cols[0]);
				if (c == NULL || c->kind != SM_COL_PARTITION)
					continue;
				if (!s->allow_filtering) {
					cql_op_fail(op, SM_CQL_ERR_INVALID,
						    "Cannot execute this query as it might involve data "
						    "filtering and thus may have unpredictable "
						    "performance. If you want to execute this query "
						    "despite the performance unpredictability, use ALLOW "
						    "FILTERING");
					return;
				}
				if (add_filter(op, &s->where[i], c) < 0)
					return;
			}
		} else {
			ix_unused = ix_pk; /* filtered, not a key */
		}
		if (ps->ix_local && npk_set < t->npk && !s->allow_filtering) {
			cql_op_fail(op, SM_CQL_ERR_INVALID,
				    "Cannot execute this query as it might involve data filtering "
				    "and thus may have unpredictable performance. If you want to "
				    "execute this query despite the performance unpredictability, "
				    "use ALLOW FILTERING");
			return;
		}
	}
	if (npk_set > 0 && npk_set < t->npk && !s->allow_filtering && !ix_read) {
		cql_op_fail(op, SM_CQL_ERR_INVALID,
			    "Partition key parts: %s must be restricted as other parts are",
			    t->cols[!pkv[0].set ? 0 : npk_set].name);
		return;
	}
	op->range = npk_set < t->npk && !ix_read;
	if (!op->range && token) {
		cql_op_fail(
			op, SM_CQL_ERR_INVALID,
			"Only EQ and IN relation are supported on the partition key (unless you "
			"use the token() function)");
		return;
	}
	/* Large and used only before the first read: one per shard, not per op. */
	plan = &ck_plan_scratch;
	ret = plan_clustering(op, s, plan, used);
	if (ret < 0) {
		return;
	}
	/* clustering restrictions over a range of partitions filter rows
	 * (statement_restrictions.cc need_filtering()) */
	for (i = 0; op->range && !s->allow_filtering && i < s->nwhere; i++) {
		const struct sm_cql_relation *r = &s->where[i];

		if (used[i] && (r->kind == SM_CQL_REL_TUPLE ||
				(r->kind == SM_CQL_REL_COLUMN &&
				 sm_table_column(t, r->cols[0]) != NULL &&
				 sm_table_column(t, r->cols[0])->kind == SM_COL_CLUSTERING))) {
			cql_op_fail(op, SM_CQL_ERR_INVALID,
				    "Cannot execute this query as it might involve data filtering and "
				    "thus may have unpredictable performance. If you want to execute "
				    "this query despite the performance unpredictability, use ALLOW "
				    "FILTERING");
			return;
		}
	}
	/* Whatever is left filters rows. */
	for (i = 0; i < s->nwhere; i++) {
		const struct sm_cql_relation *r = &s->where[i];
		const struct sm_column *c;

		if (used[i])
			continue;
		if (r->kind != SM_CQL_REL_COLUMN && r->kind != SM_CQL_REL_ELEM) {
			cql_op_fail(op, SM_CQL_ERR_INVALID,
				    "not supported by shardmark: this multi-column relation");
			return;
		}
		c = rel_column(op, i, r->cols[0]);
		if (c == NULL) {
			return;
		}
		if (!s->allow_filtering && c->kind != SM_COL_REGULAR && c->kind != SM_COL_STATIC &&
		    !((int)i == ps->ix_rel && ix_unused)) {
			cql_op_fail(op, SM_CQL_ERR_INVALID,
				    "PRIMARY KEY column \"%s\" cannot be restricted as preceding "
				    "column is not restricted (use ALLOW FILTERING)",
				    c->name);
			return;
		}
		if (add_filter(op, r, c) < 0) {
			return;
		}
	}
	if (s->norder > 0 && order_reversed(op, s, &op->reversed) < 0)
		return;

	/* Every value is converted: resolve the spans into keys and slices. */
	/* 64-bit and saturated: 16 lists of 100 overflow any int */
	product = 1;
	for (i = 0; i < t->npk && !op->range; i++)
		product = SM_MIN(product * pkv[i].n, (uint64_t)UINT32_MAX);
	if (product > MAX_IN_KEYS) {
		cql_fail_in_size(op, true, product);
		return;
	}
	nkeys = (unsigned)product;
	op->nkeys = op->range ? 0 : nkeys;
	if (!op->range &&
	    cql_grow((void **)&op->keys, &op->keys_cap, nkeys, sizeof(*op->keys)) < 0) {
		cql_op_fail(op, SM_CQL_ERR_SERVER, "out of memory");
		return;
	}
	for (i = 0; i < op->nkeys; i++) {
		unsigned rest = i, j;

		op->keys[i].n = t->npk;
		for (j = t->npk; j-- > 0;) {
			op->keys[i].part[j] =
				cql_span_bytes(op, &op->spans[pkv[j].first[rest % pkv[j].n]]);
			rest /= pkv[j].n;
		}
	}
	op->nkeys = dedupe_keys(op->keys, op->nkeys);
	ret = build_ranges(op, plan);
	/* An empty IN selects nothing (not everything). */
	empty = plan->nprefix == 0 || (!op->range && op->nkeys == 0 && !ix_read);
	if (ret < 0)
		return;
	if (op->serial && (op->range || op->nkeys != 1)) {
		cql_op_fail(
			op, SM_CQL_ERR_INVALID,
			"SERIAL/LOCAL_SERIAL consistency may only be requested for one partition "
			"at a time");
		return;
	}

	/* the table first: a vnode table pays one test */
	if (SM_UNLIKELY(t->tablet_count != 0) && !op->range && op->nkeys == 1 && !ix_read)
		cql_tablet_hint_slow(op, t, &op->keys[0]);
	/* another group member's partition: its owner answers */
	if (SM_UNLIKELY(cql_group_on) && cql_group_route_select(op) != 0)
		return;
	if (cql_grow((void **)&op->sreqs, &op->sreqs_cap, 1, sizeof(*op->sreqs)) < 0) {
		cql_op_fail(op, SM_CQL_ERR_SERVER, "out of memory");
		return;
	}
	sr = &op->sreqs[0];
	sm_store_req_init(sr, op->serial ? SM_REQ_SERIAL_SELECT : SM_REQ_SELECT);
	sr->done = read_done;
	sr->ctx = op;
	sel = &sr->sel;
	sel->table = t;
	sel->range = op->range;
	sel->token_start = op->tok_start;
	sel->token_end = op->tok_end;
	sel->ranges = op->nranges ? op->ranges : NULL;
	sel->nranges = op->nranges;
	sel->reversed = op->reversed;
	sel->cols = ps->read_cols;
	sel->col_keys = ps->read_keys;
	sel->ncols = ps->nread;
	sel->per_partition_limit = op->ppl;
	if (SM_UNLIKELY(ps->grouped || ps->distinct)) {
		op->group_open = false;
		op->group_skip = false;
		op->part_groups = 0;
		/* DISTINCT reads a row per partition; GROUP BY limits groups, not rows */
		if (ps->distinct)
			sel->per_partition_limit = 1;
		else if (ps->group_parts > 0)
			sel->per_partition_limit = 0;
	}
	sel->sink.row = sink_row;
	sel->sink.ctx = op;
	op->page_size = !ps->grouped && pr->page_size > 0 ? (uint32_t)pr->page_size : 0;
	if (SM_UNLIKELY(s->norder > 0) && post_order_setup(op, s) < 0)
		return;
	if (pr->paging_state.p != NULL && pr->paging_state.len > 0 && !ps->grouped) {
		if (paging_decode(op, pr->paging_state, sel) < 0) {
			cql_op_fail(op, SM_CQL_ERR_PROTOCOL, "Invalid paging state");
			return;
		}
		if (!op->range && !ix_read && op->key_i >= op->nkeys) {
			cql_op_fail(op, SM_CQL_ERR_PROTOCOL, "Invalid paging state");
			return;
		}
	}
	if ((op->tok_start >= op->tok_end && op->range) || empty)
		op->limit_left = 0;

	memset(&meta, 0, sizeof(meta));
	if (pr->flags & SM_CQL_QF_SKIP_METADATA) {
		meta.flags = SM_CQL_META_NO_METADATA;
		meta.ncols = ps->nres;
	} else {
		meta.ncols = ps->nres;
		meta.cols = ps->res_specs;
		meta.ks = sm_cql_str(t->ks);
		meta.table = sm_cql_str(t->name);
	}
	sm_cql_buf_reset(&op->out);
	if (sm_cql_rows_begin(&op->rw, &op->out, op->stream, &meta) < 0) {
		cql_op_fail(op, SM_CQL_ERR_SERVER, "out of memory encoding rows");
		return;
	}
	if (op->limit_left == 0) {
		select_finish(op, false);
		return;
	}
	cql_exec_select_pump(op);
}
