/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * INSERT, UPDATE, DELETE and BATCH: statements become store mutations (one
 * per partition), conditional ones a compare-and-set through Paxos.
 *
 * Converted values live in op->vals and the mutations point into it, so
 * the buffer must not move once a statement's values are converted: it is
 * reserved up front for the worst case (no value is more than 8 bytes per
 * byte of the text and bound values it comes from), and a move, should
 * that bound ever be wrong, fails the request instead of corrupting it.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cql_exec_priv.h"
#include "cql_metrics_priv.h"
#include "cql_json_priv.h"
#include "sm_index.h"

#define MAX_TTL 630720000 /* 20 years, as Cassandra */
#define MAX_PK_IN CQL_MAX_IN_PARTITIONS
#define MAX_CK_IN CQL_MAX_IN_CLUSTERING

/* Indexes stored in pointer fields until the arrays stop growing. */
#define IDX_PTR(i) ((const void *)(uintptr_t)(i))
#define PTR_IDX(p) ((unsigned)(uintptr_t)(p))
/* &base[PTR_IDX(p)]; NULL for an array never allocated (NULL + 0 is undefined). */
#define IDX_AT(base, p) ((base) != NULL ? (base) + PTR_IDX(p) : NULL)

static bool
is_serial(uint16_t cl)
{
	return cl == SM_CQL_SERIAL || cl == SM_CQL_LOCAL_SERIAL;
}

/* One statement of a write: what the builder needs. */
struct wctx {
	const struct sm_cql_stmt *s;
	const struct sm_table *t;
	const struct cql_prepared *ps; /* for LWT metadata */
	int64_t ts;		       /* batch or default timestamp, or SM_TS_NOW */
	bool in_batch;
	enum sm_cql_stmt_batch_kind batch_kind;
	uint8_t kinds_seen; /* a batch's statements: 1 counter, 2 other */
};

static int
convert(struct cql_op *op, const struct sm_cql_term *t, const struct sm_type *type, const char *col,
	struct sm_bytes *out, enum sm_cql_conv_state *state)
{
	struct sm_cql_value_span sp;
	int ret = cql_value(op, t, type, col, &sp);

	if (ret < 0)
		return ret;
	*state = sp.state;
	*out = cql_span_bytes(op, &sp);
	return 0;
}

static struct sm_cell_op *
new_cell_op(struct cql_op *op)
{
	struct sm_cell_op *c;

	if (cql_grow((void **)&op->ops, &op->ops_cap, op->nops + 1, sizeof(*op->ops)) < 0) {
		cql_op_fail(op, SM_CQL_ERR_SERVER, "out of memory");
		return NULL;
	}
	c = &op->ops[op->nops++];
	memset(c, 0, sizeof(*c));
	return c;
}

/* A negated 8-byte counter delta, in op->vals. */
static int
negate(struct cql_op *op, struct sm_bytes *v)
{
	uint64_t x = 0;
	unsigned i;
	uint8_t *p;

	for (i = 0; i < v->len; i++)
		x = x << 8 | v->p[i];
	x = (uint64_t)0 - x;
	p = sm_cql_buf_append(&op->vals, 8);
	if (p == NULL) {
		cql_op_fail(op, SM_CQL_ERR_SERVER, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(x >> (56 - 8 * i));
	v->p = p;
	v->len = 8;
	return 0;
}

/* The 2-byte cell key of user type field @idx, in op->vals. */
static int
field_key(struct cql_op *op, int idx, struct sm_bytes *key)
{
	uint8_t *p = sm_cql_buf_append(&op->vals, 2);

	if (p == NULL) {
		cql_op_fail(op, SM_CQL_ERR_SERVER, "out of memory");
		return -ENOMEM;
	}
	p[0] = (uint8_t)(idx >> 8);
	p[1] = (uint8_t)idx;
	key->p = p;
	key->len = 2;
	return 0;
}

/*
 * The field index of c.@field for a field operation, or -EINVAL after
 * failing the op with ScyllaDB's message (cql3/operation.cc set_field and
 * field_deletion); @what is the operation as the text wrote it, NULL for a
 * deletion.
 */
static int
udt_field(struct cql_op *op, const struct sm_column *c, const char *field, const char *what)
{
	int idx;

	if (c->type->kind != SM_TYPE_UDT) {
		if (what != NULL)
			cql_op_fail(op, SM_CQL_ERR_INVALID,
				    "Invalid operation (%s) for non-UDT column %s", what, c->name);
		else
			cql_op_fail(op, SM_CQL_ERR_INVALID,
				    "Invalid deletion operation for non-UDT column %s", c->name);
		return -EINVAL;
	}
	if (c->type->frozen) {
		if (what != NULL)
			cql_op_fail(op, SM_CQL_ERR_INVALID,
				    "Invalid operation (%s) for frozen UDT column %s", what, c->name);
		else
			cql_op_fail(op, SM_CQL_ERR_INVALID,
				    "Frozen UDT column %s does not support field deletions",
				    c->name);
		return -EINVAL;
	}
	idx = sm_type_field_index(c->type, field);
	if (idx < 0) {
		cql_op_fail(op, SM_CQL_ERR_INVALID, "UDT column %s does not have a field named %s",
			    c->name, field);
		return -EINVAL;
	}
	return idx;
}

/* c.field = v: the field's cell key and type. Out of line: UPDATE's usual path stays as short. */
static __attribute__((noinline)) int
field_assignment(struct cql_op *op, const struct sm_cql_assign *a, const struct sm_column *c,
		 struct sm_bytes *key, const struct sm_type **vt)
{
	char what[256];
	int idx, ret;

	snprintf(what, sizeof(what), "%s.%s = %.*s", c->name, a->field,
		 (int)SM_MIN(a->value->src.len, 128u), op->ps->text + a->value->src.off);
	idx = udt_field(op, c, a->field, what);
	if (idx < 0)
		return idx;
	ret = field_key(op, idx, key);
	if (ret < 0)
		return ret;
	*vt = c->type->fields[idx];
	return 0;
}

/* Add the cell ops of one SET term; *@col is its column once it resolves. */
static int
add_assignment(struct cql_op *op, const struct sm_cql_assign *a, const struct sm_table *t,
	       const struct sm_column **col)
{
	const struct sm_column *c = sm_table_column(t, a->col);
	const struct sm_type *vt;
	enum sm_cql_conv_state st;
	struct sm_cell_op *co;
	struct sm_bytes v, key = { 0 };
	enum sm_type_kind k;
	int ret;

	if (c == NULL) {
		cql_op_fail(op, SM_CQL_ERR_INVALID, "Undefined column name %s", a->col);
		return -EINVAL;
	}
	*col = c;
	if (c->kind == SM_COL_PARTITION || c->kind == SM_COL_CLUSTERING) {
		cql_op_fail(op, SM_CQL_ERR_INVALID, "PRIMARY KEY part %s found in SET part",
			    c->name);
		return -EINVAL;
	}
	k = c->type->kind;
	vt = c->type;
	if (SM_UNLIKELY(a->op == SM_CQL_ASSIGN_SET_FIELD)) {
		ret = field_assignment(op, a, c, &key, &vt);
		if (ret < 0)
			return ret;
	} else if (a->op == SM_CQL_ASSIGN_SET_ELEM) {
		if (k != SM_TYPE_MAP && k != SM_TYPE_LIST) {
			cql_op_fail(op, SM_CQL_ERR_INVALID,
				    "Invalid operation (%s[?] = ?) for non-map, non-list column %s",
				    c->name, c->name);
			return -EINVAL;
		}
		ret = convert(op, a->key,
			      k == SM_TYPE_MAP ? c->type->elem : sm_type_simple(SM_TYPE_INT),
			      c->name, &key, &st);
		if (ret < 0)
			return ret;
		if (st != SM_CQL_CONV_VALUE) {
			cql_op_fail(op, SM_CQL_ERR_INVALID, "Invalid null value for %s index",
				    k == SM_TYPE_MAP ? "map" : "list");
			return -EINVAL;
		}
		vt = k == SM_TYPE_MAP ? c->type->val : c->type->elem;
	} else if ((a->op == SM_CQL_ASSIGN_ADD || a->op == SM_CQL_ASSIGN_SUB) &&
		   k == SM_TYPE_COUNTER) {
		vt = sm_type_simple(SM_TYPE_BIGINT);
	} else if (a->op == SM_CQL_ASSIGN_SUB && k == SM_TYPE_MAP) {
		/* m = m - {keys}: a set of keys */
		const struct sm_type *st_type = NULL;
		char err[160];

		if (sm_type_collection(SM_TYPE_SET, false, sm_type_dup(c->type->elem), NULL,
				       &st_type, err, sizeof(err)) < 0) {
			cql_op_fail(op, SM_CQL_ERR_INVALID, "%s", err);
			return -EINVAL;
		}
		ret = convert(op, a->value, st_type, c->name, &v, &st);
		sm_type_free(st_type);
		if (ret < 0)
			return ret;
		goto have_value;
	}
	ret = convert(op, a->value, vt, c->name, &v, &st);
	if (ret < 0)
		return ret;
have_value:
	if (st == SM_CQL_CONV_UNSET)
		return 0;
	co = new_cell_op(op);
	if (co == NULL)
		return -ENOMEM;
	co->col = c->id;
	co->key = key;
	co->value = v;
	co->null = st == SM_CQL_CONV_NULL;
	switch (a->op) {
	case SM_CQL_ASSIGN_SET:
		co->kind = SM_CELL_SET;
		if (k == SM_TYPE_COUNTER) {
			cql_op_fail(
				op, SM_CQL_ERR_INVALID,
				"Cannot set the value of counter column %s (counters can only be "
				"incremented/decremented, not set)",
				c->name);
			return -EINVAL;
		}
		return 0;
	case SM_CQL_ASSIGN_SET_ELEM:
	case SM_CQL_ASSIGN_SET_FIELD:
		co->kind = co->null ? SM_CELL_DELETE_ELEM : SM_CELL_SET_ELEM;
		co->null = false;
		return 0;
	case SM_CQL_ASSIGN_ADD:
	case SM_CQL_ASSIGN_SUB:
	case SM_CQL_ASSIGN_PREPEND:
		if (co->null) {
			cql_op_fail(op, SM_CQL_ERR_INVALID,
				    "Invalid null value for %s operation on %s",
				    k == SM_TYPE_COUNTER ? "counter" : "collection", c->name);
			return -EINVAL;
		}
		if (k == SM_TYPE_COUNTER) {
			co->kind = SM_CELL_COUNTER_ADD;
			if (a->op == SM_CQL_ASSIGN_SUB)
				return negate(op, &co->value);
			return 0;
		}
		if (!sm_type_is_collection(c->type) || c->type->frozen) {
			cql_op_fail(op, SM_CQL_ERR_INVALID,
				    "Invalid operation (%s = %s %c ?) for non counter column %s",
				    c->name, c->name, a->op == SM_CQL_ASSIGN_SUB ? '-' : '+',
				    c->name);
			return -EINVAL;
		}
		if (a->op == SM_CQL_ASSIGN_PREPEND) {
			if (k != SM_TYPE_LIST) {
				cql_op_fail(
					op, SM_CQL_ERR_INVALID,
					"Invalid operation (%s = ? + %s) for non list column %s",
					c->name, c->name, c->name);
				return -EINVAL;
			}
			co->kind = SM_CELL_PREPEND;
			return 0;
		}
		co->kind = a->op == SM_CQL_ASSIGN_ADD ? SM_CELL_APPEND : SM_CELL_REMOVE;
		return 0;
	}
	return 0;
}

/* Keys of the WHERE clause: every pk column EQ or IN, clustering EQ or IN. */
struct where_keys {
	struct sm_bytes pk[SM_MAX_KEY_PARTS][MAX_PK_IN];
	unsigned npk[SM_MAX_KEY_PARTS];
	struct sm_bytes ckin[SM_MAX_KEY_PARTS][MAX_CK_IN];
	unsigned nckin[SM_MAX_KEY_PARTS]; /* values of each clustering column (1: EQ) */
	struct sm_key ck;		  /* the prefix restricted, the first value of each */
	bool has_slice;		  /* DELETE: a clustering range */
	struct sm_ck_range range; /* when has_slice */
};

static __thread struct where_keys where_scratch;

static int
where_value(struct cql_op *op, const struct sm_cql_term *t, const struct sm_column *c,
	    struct sm_bytes *out)
{
	enum sm_cql_conv_state st;
	int ret = convert(op, t, c->type, c->name, out, &st);

	if (ret < 0)
		return ret;
	if (st != SM_CQL_CONV_VALUE) {
		cql_op_fail(op, SM_CQL_ERR_INVALID, "Invalid %s value for %s key part %s",
			    st == SM_CQL_CONV_NULL ? "null" : "unset",
			    c->kind == SM_COL_PARTITION ? "partition" : "clustering", c->name);
		return -EINVAL;
	}
	return 0;
}

static int
read_where(struct cql_op *op, const struct sm_cql_relation *where, unsigned nwhere,
	   const struct sm_table *t, bool allow_slice, struct where_keys *wk)
{
	unsigned i, j, *nck = wk->nckin;
	int ret;

	memset(wk->npk, 0, sizeof(wk->npk));
	memset(wk->nckin, 0, sizeof(wk->nckin));
	wk->has_slice = false;
	memset(&wk->range, 0, sizeof(wk->range));
	for (i = 0; i < nwhere; i++) {
		const struct sm_cql_relation *r = &where[i];
		const struct sm_column *c;

		if (r->kind != SM_CQL_REL_COLUMN) {
			cql_op_fail(op, SM_CQL_ERR_INVALID,
				    "not supported by shardmark: this relation in a modification "
				    "statement");
			return -ENOTSUP;
		}
		c = sm_table_column(t, r->cols[0]);
		if (c == NULL) {
			cql_op_fail(op, SM_CQL_ERR_INVALID, "Undefined column name %s", r->cols[0]);
			return -EINVAL;
		}
		if (c->kind != SM_COL_PARTITION && c->kind != SM_COL_CLUSTERING) {
			cql_op_fail(op, SM_CQL_ERR_INVALID,
				    "Non PRIMARY KEY columns found in where clause: %s", c->name);
			return -EINVAL;
		}
		if (c->kind == SM_COL_PARTITION) {
			if (wk->npk[c->pos] > 0)
				goto twice;
			if (r->op == SM_CQL_OP_EQ) {
				ret = where_value(op, r->value, c, &wk->pk[c->pos][0]);
				if (ret < 0)
					return ret;
				wk->npk[c->pos] = 1;
				continue;
			}
			if (r->op != SM_CQL_OP_IN || r->in == NULL) {
				cql_op_fail(
					op, SM_CQL_ERR_INVALID,
					"Only EQ and IN relation are supported on the partition "
					"key in a modification statement");
				return -EINVAL;
			}
			if (r->nin > MAX_PK_IN)
				return cql_fail_in_size(op, true, r->nin);
			for (j = 0; j < r->nin; j++) {
				ret = where_value(op, r->in[j], c, &wk->pk[c->pos][j]);
				if (ret < 0)
					return ret;
			}
			wk->npk[c->pos] = r->nin;
			continue;
		}
		if (r->op == SM_CQL_OP_EQ) {
			if (nck[c->pos])
				goto twice;
			ret = where_value(op, r->value, c, &wk->ckin[c->pos][0]);
			if (ret < 0)
				return ret;
			nck[c->pos] = 1;
			continue;
		}
		if (r->op == SM_CQL_OP_IN && r->in != NULL) {
			/* one mutation per value, as ScyllaDB's IN on clustering columns */
			if (nck[c->pos])
				goto twice;
			if (r->nin > MAX_CK_IN)
				return cql_fail_in_size(op, false, r->nin);
			for (j = 0; j < r->nin; j++) {
				ret = where_value(op, r->in[j], c, &wk->ckin[c->pos][j]);
				if (ret < 0)
					return ret;
			}
			nck[c->pos] = r->nin;
			continue;
		}
		if (allow_slice && r->op >= SM_CQL_OP_LT && r->op <= SM_CQL_OP_GE) {
			struct sm_bytes v;
			bool lower = r->op == SM_CQL_OP_GT || r->op == SM_CQL_OP_GE;
			struct sm_ck_bound *b;

			if (lower != c->desc)
				b = &wk->range.start;
			else
				b = &wk->range.end;
			ret = where_value(op, r->value, c, &v);
			if (ret < 0)
				return ret;
			if (b->prefix.n > 0)
				goto twice;
			/* The EQ prefix is copied in below, once known. */
			b->prefix.n = c->pos + 1;
			b->prefix.part[c->pos] = v;
			b->inclusive = r->op == SM_CQL_OP_GE || r->op == SM_CQL_OP_LE;
			wk->has_slice = true;
			continue;
		}
		cql_op_fail(op, SM_CQL_ERR_INVALID,
			    "Invalid operator on clustering column %s in a modification statement",
			    c->name);
		return -EINVAL;
	}
	for (i = 0; i < t->npk; i++) {
		if (wk->npk[i] == 0) {
			cql_op_fail(op, SM_CQL_ERR_INVALID,
				    "Some partition key parts are missing: %s", t->cols[i].name);
			return -EINVAL;
		}
	}
	wk->ck.n = 0;
	for (i = 0; i < t->nck && nck[i]; i++)
		wk->ck.part[wk->ck.n++] = wk->ckin[i][0];
	for (; i < t->nck; i++) {
		if (nck[i]) {
			cql_op_fail(op, SM_CQL_ERR_INVALID,
				    "PRIMARY KEY column \"%s\" cannot be restricted as preceding "
				    "column \"%s\" is not restricted",
				    t->cols[t->npk + i].name, t->cols[t->npk + wk->ck.n].name);
			return -EINVAL;
		}
	}
	if (wk->has_slice) {
		struct sm_ck_bound *bs[2] = { &wk->range.start, &wk->range.end };

		for (i = 0; i < wk->ck.n; i++) {
			if (nck[i] > 1) {
				cql_op_fail(op, SM_CQL_ERR_INVALID,
					    "A range deletion must restrict the clustering columns "
					    "before the ranged one by equality");
				return -EINVAL;
			}
		}

		for (j = 0; j < 2; j++) {
			struct sm_ck_bound *b = bs[j];

			if (b->prefix.n == 0) {
				b->prefix = wk->ck;
				b->inclusive = true;
				continue;
			}
			if (b->prefix.n != wk->ck.n + 1) {
				cql_op_fail(op, SM_CQL_ERR_INVALID,
					    "A range deletion must restrict the clustering columns "
					    "before the ranged one by equality");
				return -EINVAL;
			}
			for (i = 0; i < wk->ck.n; i++)
				b->prefix.part[i] = wk->ck.part[i];
		}
	}
	return 0;
twice:
	cql_op_fail(op, SM_CQL_ERR_INVALID,
		    "a column cannot be restricted by more than one relation in a modification "
		    "statement");
	return -EINVAL;
}

/*
 * INSERT JSON: the object's columns as INSERT's values would be (cql_json_row()),
 * into @pk, @ck and cell ops; a column it lacks is null unless DEFAULT UNSET.
 */
static int
insert_json(struct cql_op *op, const struct sm_table *t, const struct sm_cql_insert *in,
	    uint64_t *have, struct sm_key *pk, struct sm_key *ck)
{
	enum sm_cql_conv_state st;
	struct cql_json_col *cols;
	struct sm_bytes text;
	char err[512], *copy;
	unsigned i;
	int ret;

	ret = convert(op, in->json, sm_type_simple(SM_TYPE_TEXT), "[json]", &text, &st);
	if (ret < 0)
		return ret;
	if (st != SM_CQL_CONV_VALUE) {
		cql_op_fail(op, SM_CQL_ERR_INVALID, "Got null for INSERT JSON values");
		return -EINVAL;
	}
	/* the text is in op->vals, which the values go on filling: parse a copy */
	cols = sm_calloc(t->ncols ? t->ncols : 1, sizeof(*cols));
	copy = sm_malloc(text.len ? text.len : 1);
	if (cols == NULL || copy == NULL) {
		sm_free(cols);
		sm_free(copy);
		cql_op_fail(op, SM_CQL_ERR_SERVER, "out of memory");
		return -ENOMEM;
	}
	memcpy(copy, text.p, text.len);
	ret = cql_json_row(t, copy, text.len, &op->vals, cols, err, sizeof(err));
	if (ret < 0) {
		cql_op_fail(op, ret == -ENOMEM ? SM_CQL_ERR_SERVER : SM_CQL_ERR_INVALID, "%s",
			    ret == -ENOMEM ? "out of memory" : err);
		goto out;
	}
	for (i = 0; i < t->ncols; i++) {
		const struct sm_column *c = &t->cols[i];
		struct sm_bytes v = { op->vals.p + cols[i].off, cols[i].len };
		struct sm_cell_op *co;

		if (v.len == 0)
			v.p = SM_CQL_EMPTY.p;
		if (c->kind == SM_COL_PARTITION || c->kind == SM_COL_CLUSTERING) {
			if (!cols[i].present)
				continue;
			if (cols[i].null) {
				cql_op_fail(op, SM_CQL_ERR_INVALID,
					    "Invalid null value in condition for column %s", c->name);
				ret = -EINVAL;
				goto out;
			}
			have[i / 64] |= 1ull << (i % 64);
			if (c->kind == SM_COL_PARTITION)
				pk->part[c->pos] = v;
			else
				ck->part[c->pos] = v;
			continue;
		}
		if (!cols[i].present && in->json_unset)
			continue;
		co = new_cell_op(op);
		if (co == NULL) {
			ret = -ENOMEM;
			goto out;
		}
		co->col = c->id;
		co->kind = SM_CELL_SET;
		co->value = v;
		co->null = !cols[i].present || cols[i].null;
	}
out:
	sm_free(cols);
	sm_free(copy);
	return ret;
}

/* Whether INSERT's columns are key columns and at least one static column. */
static bool
insert_only_static(const struct sm_table *t, const struct sm_cql_insert *in)
{
	bool any = false;
	unsigned i;

	for (i = 0; i < in->ncols; i++) {
		const struct sm_column *c = sm_table_column(t, in->cols[i]);

		if (c->kind == SM_COL_CLUSTERING || c->kind == SM_COL_REGULAR)
			return false;
		any |= c->kind == SM_COL_STATIC;
	}
	return any;
}

/* an IF condition's operator goes to the store as it is */
_Static_assert((int)SM_COND_IN == (int)SM_CQL_OP_IN &&
		       (int)SM_COND_CONTAINS_KEY == (int)SM_CQL_OP_CONTAINS_KEY,
	       "sm_cond_op follows sm_cql_op");

static int
add_condition(struct cql_op *op, const struct sm_cql_relation *r, const struct sm_table *t)
{
	const struct sm_column *c = sm_table_column(t, r->cols[0]);
	const struct sm_type *vt;
	enum sm_cql_conv_state st;
	struct sm_condition *cd;
	unsigned j;
	int ret;

	if (c == NULL) {
		cql_op_fail(op, SM_CQL_ERR_INVALID, "Undefined column name %s", r->cols[0]);
		return -EINVAL;
	}
	if (c->kind == SM_COL_PARTITION || c->kind == SM_COL_CLUSTERING) {
		cql_op_fail(op, SM_CQL_ERR_INVALID,
			    "PRIMARY KEY column '%s' cannot have IF conditions", c->name);
		return -EINVAL;
	}
	if (cql_grow((void **)&op->conds, &op->conds_cap, op->nconds + 1, sizeof(*op->conds)) < 0)
		goto nomem;
	cd = &op->conds[op->nconds];
	memset(cd, 0, sizeof(*cd));
	cd->col = c->id;
	cd->op = (uint8_t)r->op;
	vt = c->type;
	if (r->kind == SM_CQL_REL_ELEM) {
		if (c->type->kind != SM_TYPE_MAP && c->type->kind != SM_TYPE_LIST) {
			cql_op_fail(op, SM_CQL_ERR_INVALID,
				    "Invalid element access syntax for non-collection column %s",
				    c->name);
			return -EINVAL;
		}
		ret = convert(op, r->key,
			      c->type->kind == SM_TYPE_MAP ? c->type->elem
							   : sm_type_simple(SM_TYPE_INT),
			      c->name, &cd->elem, &st);
		if (ret < 0)
			return ret;
		if (st != SM_CQL_CONV_VALUE) {
			cql_op_fail(op, SM_CQL_ERR_INVALID,
				    "Invalid null value for %s element access", c->name);
			return -EINVAL;
		}
		cd->has_elem = true;
		vt = c->type->kind == SM_TYPE_MAP ? c->type->val : c->type->elem;
	}
	if (r->op == SM_CQL_OP_CONTAINS || r->op == SM_CQL_OP_CONTAINS_KEY) {
		/* column_condition.cc: CONTAINS of a collection, CONTAINS KEY of a map */
		bool key = r->op == SM_CQL_OP_CONTAINS_KEY;

		if (r->kind == SM_CQL_REL_ELEM || !sm_type_is_collection(c->type) ||
		    (key && c->type->kind != SM_TYPE_MAP)) {
			cql_op_fail(op, SM_CQL_ERR_INVALID, "Cannot use %s on non-%s column %s",
				    key ? "CONTAINS KEY" : "CONTAINS", key ? "map" : "collection",
				    c->name);
			return -EINVAL;
		}
		vt = key || c->type->kind != SM_TYPE_MAP ? c->type->elem : c->type->val;
	}
	if (r->op == SM_CQL_OP_IN) {
		if (r->in == NULL) {
			cql_op_fail(op, SM_CQL_ERR_INVALID,
				    "not supported by shardmark: IF c IN ? (list the values)");
			return -ENOTSUP;
		}
		cd->in = IDX_PTR(op->nin);
		for (j = 0; j < r->nin; j++) {
			struct sm_bytes v;

			if (cql_grow((void **)&op->in_vals, &op->in_cap, op->nin + 1,
				     sizeof(*op->in_vals)) < 0)
				goto nomem;
			ret = convert(op, r->in[j], vt, c->name, &v, &st);
			if (ret < 0)
				return ret;
			if (st != SM_CQL_CONV_VALUE)
				v.len = UINT32_MAX;
			op->in_vals[op->nin++] = v;
		}
		cd->nin = r->nin;
	} else {
		ret = convert(op, r->value, vt, c->name, &cd->value, &st);
		if (ret < 0)
			return ret;
		if (st == SM_CQL_CONV_UNSET) {
			cql_op_fail(op, SM_CQL_ERR_INVALID, "Invalid unset value for column %s",
				    c->name);
			return -EINVAL;
		}
		cd->null = st == SM_CQL_CONV_NULL;
	}
	op->nconds++;
	return 0;
nomem:
	cql_op_fail(op, SM_CQL_ERR_SERVER, "out of memory");
	return -ENOMEM;
}

/* A mutation of a wave batch (see cql_op.muts), zeroed. */
static struct sm_mutation *
new_mut(struct cql_op *op)
{
	struct sm_mutation *m;

	if (cql_grow((void **)&op->muts, &op->muts_cap, op->nmuts + 1, sizeof(*op->muts)) < 0) {
		cql_op_fail(op, SM_CQL_ERR_SERVER, "out of memory");
		return NULL;
	}
	m = &op->muts[op->nmuts++];
	memset(m, 0, sizeof(*m));
	return m;
}

static struct sm_store_req *
new_sreq(struct cql_op *op)
{
	struct sm_store_req *r;

	if (cql_grow((void **)&op->sreqs, &op->sreqs_cap, op->nsreqs + 1, sizeof(*op->sreqs)) < 0) {
		cql_op_fail(op, SM_CQL_ERR_SERVER, "out of memory");
		return NULL;
	}
	r = &op->sreqs[op->nsreqs++];
	sm_store_req_init(r, SM_REQ_MUTATE); /* the caller sets the kind */
	return r;
}

static bool
stmt_conditional(const struct sm_cql_stmt *s)
{
	return (s->kind == SM_CQL_INSERT && s->insert.if_not_exists) ||
	       (s->kind == SM_CQL_UPDATE && s->update.if_kind != SM_CQL_IF_NONE) ||
	       (s->kind == SM_CQL_DELETE && s->del.if_kind != SM_CQL_IF_NONE);
}

/* Timestamp and TTL of a statement. */
static int
statement_attrs(struct cql_op *op, const struct sm_cql_attrs *a, const struct wctx *w, int64_t *ts,
		int32_t *ttl)
{
	int64_t v, expiry;
	bool present;

	*ts = w->ts;
	*ttl = SM_TTL_DEFAULT;
	if (cql_int_option(op, a->timestamp, "[timestamp]", INT64_MIN + 1, INT64_MAX, true, &v,
			   &present) < 0)
		return -EINVAL;
	if (present) {
		if (stmt_conditional(w->s)) {
			cql_op_fail(op, SM_CQL_ERR_INVALID,
				    "Cannot provide custom timestamp for conditional updates");
			return -EINVAL;
		}
		*ts = v;
	}
	if (cql_int_option(op, a->ttl, "[ttl]", 0, MAX_TTL, false, &v, &present) < 0)
		return -EINVAL;
	if (present)
		*ttl = (int32_t)v;
	/* Expiry times are 32-bit seconds (2038), as in Cassandra: refuse, never drop. */
	v = *ttl == SM_TTL_DEFAULT ? w->t->default_ttl : *ttl;
	expiry = op->now_us / 1000000 + v;
	if (v > 0 && expiry > INT32_MAX) {
		cql_op_fail(
			op, SM_CQL_ERR_INVALID,
			"Request on table %s.%s with %sttl of %lld seconds exceeds maximum "
			"supported expiration date of 2038-01-19T03:14:06+00:00. Use a lower TTL.",
			w->t->ks, w->t->name, *ttl == SM_TTL_DEFAULT ? "default " : "",
			(long long)v);
		return -EINVAL;
	}
	return 0;
}

/* A cleared bitmap of @t's column ids (per shard), or NULL after failing the op. */
static uint64_t *
insert_columns(struct cql_op *op, const struct sm_table *t)
{
	unsigned words = ((unsigned)t->ncols + 63) / 64;

	if (cql_grow((void **)&cql_shard.insert_seen, &cql_shard.insert_seen_cap, words,
		     sizeof(*cql_shard.insert_seen)) < 0) {
		cql_op_fail(op, SM_CQL_ERR_SERVER, "out of memory");
		return NULL;
	}
	memset(cql_shard.insert_seen, 0, words * sizeof(*cql_shard.insert_seen));
	return cql_shard.insert_seen;
}

/*
 * Build the store requests of one INSERT, UPDATE or DELETE into op->sreqs.
 * Cell ops and conditions are recorded as indexes (fixed up later).
 */
static int
build_write(struct cql_op *op, const struct wctx *w)
{
	const struct sm_cql_stmt *s = w->s;
	const struct sm_table *t = w->t;
	struct where_keys *wk = NULL;
	struct sm_key pk, ck;
	unsigned i, j, first_op = op->nops, first_cond = op->nconds, nkeys = 1, nck_keys = 1;
	uint64_t product = 1;
	enum sm_cql_if if_kind = SM_CQL_IF_NONE;
	const struct sm_cql_relation *conds = NULL;
	unsigned nconds = 0;
	uint32_t flags = 0;
	bool has_range = false;
	struct sm_ck_range range;
	int64_t ts;
	int32_t ttl;
	int ret = 0;

	memset(&pk, 0, sizeof(pk));
	memset(&ck, 0, sizeof(ck));
	memset(&range, 0, sizeof(range));
	if (s->kind == SM_CQL_INSERT) {
		const struct sm_cql_insert *in = &s->insert;
		uint64_t *have;

		if (t->counter) {
			cql_op_fail(
				op, SM_CQL_ERR_INVALID,
				"INSERT statements are not allowed on counter tables, use UPDATE "
				"instead");
			return -EINVAL;
		}
		if (statement_attrs(op, &in->attrs, w, &ts, &ttl) < 0)
			return -EINVAL;
		have = insert_columns(op, t);
		if (have == NULL)
			return -ENOMEM;
		pk.n = t->npk;
		ck.n = t->nck;
		if (in->json != NULL) {
			ret = insert_json(op, t, in, have, &pk, &ck);
			if (ret < 0)
				return ret;
		}
		for (i = 0; i < in->ncols; i++) {
			const struct sm_column *c = sm_table_column(t, in->cols[i]);
			enum sm_cql_conv_state st;
			struct sm_cell_op *co;
			struct sm_bytes v;

			if (c == NULL) {
				cql_op_fail(op, SM_CQL_ERR_INVALID, "Undefined column name %s",
					    in->cols[i]);
				return -EINVAL;
			}
			if (have[c->id / 64] & (1ull << (c->id % 64))) {
				cql_op_fail(op, SM_CQL_ERR_INVALID,
					    "Multiple definitions found for column %s", c->name);
				return -EINVAL;
			}
			have[c->id / 64] |= 1ull << (c->id % 64);
			if (c->kind == SM_COL_PARTITION || c->kind == SM_COL_CLUSTERING) {
				ret = where_value(op, in->values[i], c, &v);
				if (ret < 0)
					return ret;
				if (c->kind == SM_COL_PARTITION)
					pk.part[c->pos] = v;
				else
					ck.part[c->pos] = v;
				continue;
			}
			ret = convert(op, in->values[i], c->type, c->name, &v, &st);
			if (ret < 0)
				return ret;
			if (st == SM_CQL_CONV_UNSET)
				continue;
			co = new_cell_op(op);
			if (co == NULL)
				return -ENOMEM;
			co->col = c->id;
			co->kind = SM_CELL_SET;
			co->value = v;
			co->null = st == SM_CQL_CONV_NULL;
		}
		flags = SM_MUT_ROW_MARKER;
		/* only static columns: the partition's static row, no clustering key
		 * (modification_statement.cc, as for UPDATE) */
		if (t->nck > 0 && !(have[t->npk / 64] & (1ull << (t->npk % 64))) &&
		    insert_only_static(t, in)) {
			ck.n = 0;
			flags = 0;
		}
		for (i = 0; i < (unsigned)t->npk + (ck.n ? t->nck : 0); i++) {
			if (!(have[i / 64] & (1ull << (i % 64)))) {
				cql_op_fail(
					op, SM_CQL_ERR_INVALID, "Some %s key parts are missing: %s",
					i < t->npk ? "partition" : "clustering", t->cols[i].name);
				return -EINVAL;
			}
		}
		if (in->if_not_exists)
			if_kind = SM_CQL_IF_NOT_EXISTS;
	} else {
		const struct sm_cql_relation *where;
		unsigned nwhere;
		const struct sm_cql_attrs *attrs;
		bool only_static = true;

		if (s->kind == SM_CQL_UPDATE) {
			where = s->update.where;
			nwhere = s->update.nwhere;
			attrs = &s->update.attrs;
			if_kind = s->update.if_kind;
			conds = s->update.conds;
			nconds = s->update.nconds;
		} else {
			where = s->del.where;
			nwhere = s->del.nwhere;
			attrs = &s->del.attrs;
			if_kind = s->del.if_kind;
			conds = s->del.conds;
			nconds = s->del.nconds;
		}
		if (statement_attrs(op, attrs, w, &ts, &ttl) < 0)
			return -EINVAL;
		if (s->kind == SM_CQL_DELETE && attrs->ttl != NULL) {
			cql_op_fail(op, SM_CQL_ERR_INVALID, "A TTL is not allowed in DELETE");
			return -EINVAL;
		}
		/* Large and used only while building: one per shard, not per op. */
		wk = &where_scratch;
		ret = read_where(op, where, nwhere, t,
				 s->kind == SM_CQL_DELETE && s->del.ncols == 0, wk);
		if (ret < 0)
			goto out;
		ck = wk->ck;
		pk.n = t->npk;
		/* 64-bit and saturated: 16 lists of 100 overflow any int */
		for (i = 0; i < t->npk; i++)
			product = SM_MIN(product * wk->npk[i], (uint64_t)UINT32_MAX);
		if (product > MAX_PK_IN) {
			ret = cql_fail_in_size(op, true, product);
			goto out;
		}
		nkeys = (unsigned)product;
		for (i = 0, product = 1; i < wk->ck.n; i++)
			product *= wk->nckin[i];
		if (product > MAX_CK_IN) {
			ret = cql_fail_in_size(op, false, product);
			goto out;
		}
		nck_keys = (unsigned)product;
		if (s->kind == SM_CQL_UPDATE) {
			for (i = 0; i < s->update.nset; i++) {
				const struct sm_column *c = NULL;

				ret = add_assignment(op, &s->update.set[i], t, &c);
				if (c != NULL && c->kind != SM_COL_STATIC)
					only_static = false;
				if (ret < 0)
					goto out;
			}
			if (ck.n != t->nck && !(only_static && ck.n == 0)) {
				cql_op_fail(op, SM_CQL_ERR_INVALID,
					    "Some clustering keys are missing: %s",
					    t->cols[t->npk + ck.n].name);
				ret = -EINVAL;
				goto out;
			}
		} else if (s->del.ncols > 0) {
			for (i = 0; i < s->del.ncols; i++) {
				const struct sm_cql_delete_col *dc = &s->del.cols[i];
				const struct sm_column *c = sm_table_column(t, dc->col);
				enum sm_cql_conv_state st;
				struct sm_cell_op *co;
				struct sm_bytes key = { 0 };

				if (c == NULL) {
					cql_op_fail(op, SM_CQL_ERR_INVALID,
						    "Undefined column name %s", dc->col);
					ret = -EINVAL;
					goto out;
				}
				if (c->kind == SM_COL_PARTITION || c->kind == SM_COL_CLUSTERING) {
					cql_op_fail(op, SM_CQL_ERR_INVALID,
						    "Invalid identifier %s for deletion (should "
						    "not be a "
						    "PRIMARY KEY part)",
						    c->name);
					ret = -EINVAL;
					goto out;
				}
				if (c->kind != SM_COL_STATIC)
					only_static = false;
				if (dc->field != NULL) {
					int idx = udt_field(op, c, dc->field, NULL);

					if (idx < 0 || (ret = field_key(op, idx, &key)) < 0) {
						ret = idx < 0 ? idx : ret;
						goto out;
					}
				} else if (dc->key != NULL) {
					/* operation.cc element_deletion: a set's element too */
					if (!sm_type_is_collection(c->type)) {
						cql_op_fail(op, SM_CQL_ERR_INVALID,
							    "Invalid deletion operation for non "
							    "collection column %s",
							    c->name);
						ret = -EINVAL;
						goto out;
					}
					if (c->type->frozen) {
						cql_op_fail(op, SM_CQL_ERR_INVALID,
							    "Invalid deletion operation for frozen "
							    "collection column %s",
							    c->name);
						ret = -EINVAL;
						goto out;
					}
					ret = convert(op, dc->key,
						      c->type->kind != SM_TYPE_LIST
							      ? c->type->elem
							      : sm_type_simple(SM_TYPE_INT),
						      c->name, &key, &st);
					if (ret < 0)
						goto out;
					if (st != SM_CQL_CONV_VALUE) {
						cql_op_fail(op, SM_CQL_ERR_INVALID,
							    "Invalid null value for %s element",
							    c->name);
						ret = -EINVAL;
						goto out;
					}
				}
				co = new_cell_op(op);
				if (co == NULL) {
					ret = -ENOMEM;
					goto out;
				}
				co->col = c->id;
				co->kind = dc->key || dc->field ? SM_CELL_DELETE_ELEM : SM_CELL_DELETE;
				co->key = key;
			}
			if (ck.n != t->nck && !(only_static && ck.n == 0)) {
				/* delete_statement.cc: a column of a row needs the whole key */
				cql_op_fail(op, SM_CQL_ERR_INVALID,
					    "Primary key column '%s' must be specified in order to "
					    "delete column '%s'",
					    t->cols[t->npk + ck.n].name, s->del.cols[0].col);
				ret = -EINVAL;
				goto out;
			}
		} else if (wk->has_slice) {
			flags = SM_MUT_DELETE_RANGE;
			range = wk->range;
			has_range = true;
		} else if (ck.n == t->nck && t->nck > 0) {
			flags = SM_MUT_DELETE_ROW;
		} else if (ck.n == 0) {
			flags = SM_MUT_DELETE_PARTITION;
		} else {
			flags = SM_MUT_DELETE_RANGE;
			range.start.prefix = ck;
			range.start.inclusive = true;
			range.end.prefix = ck;
			range.end.inclusive = true;
			has_range = true;
		}
	}
	for (i = 0; i < nconds; i++) {
		ret = add_condition(op, &conds[i], t);
		if (ret < 0)
			goto out;
	}
	if (if_kind != SM_CQL_IF_NONE && t->counter) {
		cql_op_fail(op, SM_CQL_ERR_INVALID,
			    "Conditional updates are not supported on counter tables");
		ret = -EINVAL;
		goto out;
	}
	if (if_kind != SM_CQL_IF_NONE && nkeys != 1) {
		cql_op_fail(op, SM_CQL_ERR_INVALID,
			    "IN on the partition key is not supported with conditional updates");
		ret = -EINVAL;
		goto out;
	}
	if (if_kind != SM_CQL_IF_NONE && nck_keys != 1) {
		cql_op_fail(op, SM_CQL_ERR_INVALID,
			    "IN on the clustering key columns is not supported with conditional "
			    "%s",
			    s->kind == SM_CQL_DELETE ? "deletions" : "updates");
		ret = -EINVAL;
		goto out;
	}
	if (if_kind != SM_CQL_IF_NONE && has_range) {
		cql_op_fail(op, SM_CQL_ERR_INVALID,
			    "DELETE statements must restrict all PRIMARY KEY columns with equality "
			    "relations in order to use IF conditions");
		ret = -EINVAL;
		goto out;
	}
	for (i = 0; i < nkeys * nck_keys; i++) {
		struct sm_store_req *r = NULL;
		struct sm_mutation *m;
		unsigned rest = i / nck_keys, crest = i % nck_keys;

		if (op->wave && if_kind == SM_CQL_IF_NONE)
			m = new_mut(op);
		else
			m = (r = new_sreq(op)) != NULL ? &r->mut : NULL;
		if (m == NULL) {
			ret = -ENOMEM;
			goto out;
		}
		if (wk != NULL) {
			for (j = t->npk; j-- > 0;) {
				pk.part[j] = wk->pk[j][rest % wk->npk[j]];
				rest /= wk->npk[j];
			}
			for (j = nck_keys > 1 ? ck.n : 0; j-- > 0;) {
				ck.part[j] = wk->ckin[j][crest % wk->nckin[j]];
				crest /= wk->nckin[j];
			}
			/* a prefix of the clustering key: the range is that prefix (no slice with IN) */
			if (nck_keys > 1 && has_range) {
				range.start.prefix = ck;
				range.end.prefix = ck;
			}
		}
		if (if_kind != SM_CQL_IF_NONE) {
			r->kind = SM_REQ_CAS;
			r->cas.kind = if_kind == SM_CQL_IF_NOT_EXISTS ? SM_CAS_IF_NOT_EXISTS
				      : if_kind == SM_CQL_IF_EXISTS   ? SM_CAS_IF_EXISTS
								      : SM_CAS_IF;
			r->cas.conds = IDX_PTR(first_cond);
			r->cas.nconds = op->nconds - first_cond;
			m = &r->cas.mut;
		} else if (r != NULL) {
			r->kind = SM_REQ_MUTATE;
		}
		m->table = t;
		m->pk = pk;
		m->ck = ck;
		m->range = range;
		m->ts = ts;
		m->ttl = ttl;
		m->flags = flags;
		m->ops = IDX_PTR(first_op);
		m->nops = op->nops - first_op;
	}
	ret = 0;
out:
	return ret;
}

/* ---- completion ---- */

static void
write_finish(struct cql_op *op);

static int
cas_sink(void *ctx, const struct sm_row_view *r)
{
	struct cql_op *op = ctx;
	const struct cql_prepared *ps = op->ps;
	unsigned i;
	uint8_t *p;

	/* [applied] is patched in when Paxos is done. */
	p = sm_cql_rows_cell_space(&op->rw, 1);
	if (p == NULL)
		return -ENOMEM;
	*p = 0;
	op->count = (int64_t)(p - op->out.p);
	for (i = 1; i < ps->nres; i++) {
		const struct sm_cell_view *cv = &r->cells[ps->outs[i].cell];

		sm_cql_rows_cell(&op->rw, cv->present ? cv->value : (struct sm_bytes){ 0 });
	}
	op->page_rows = 1;
	return 0;
}

/*
 * A conditional batch over several rows: ScyllaDB's cas_request
 * (cql3/statements/cas_request.cc) makes every statement a row update of
 * the one partition; each reads its row, every condition must hold, and
 * then all apply in one Paxos round. The result has a row per statement:
 * [applied], then the primary key and the union of the statements' result
 * columns (all of them for IF EXISTS and IF NOT EXISTS, the conditioned
 * ones for IF) in table order, from that statement's row before the batch;
 * a missing row gives [applied] and nulls (batch_statement.cc
 * build_cas_result_set_metadata(), cas_request.cc build_cas_result_set()).
 */
struct cql_lwt_row {
	struct cql_op *op;
	unsigned idx;
	bool no_row; /* a range or partition deletion */
	int64_t applied_at; /* offset of the row's [applied] byte in op->out */
};

struct cql_lwt_rows {
	unsigned n;	/* rows: one per statement */
	unsigned next;	/* the next row the result has not emitted */
	unsigned ncols; /* table columns of the result, after [applied] */
	struct sm_cas *cas;
	struct sm_mut_link *links; /* the rows' mutations, chained */
	struct cql_lwt_row *row;
	uint16_t *cols;
	struct sm_cql_colspec *specs; /* ncols + 1 */
};

/* Row @i of the result, its cells from @pre (NULL: the row did not exist). */
static int
lwt_row_emit(struct cql_op *op, unsigned i, const struct sm_row_view *pre)
{
	struct cql_lwt_rows *lr = op->lwtr;
	uint8_t *p = sm_cql_rows_cell_space(&op->rw, 1);
	unsigned c;

	if (p == NULL)
		return -ENOMEM;
	*p = 0; /* patched when Paxos is done */
	lr->row[i].applied_at = (int64_t)(p - op->out.p);
	for (c = 0; c < lr->ncols; c++) {
		const struct sm_cell_view *cv = pre != NULL ? &pre->cells[c] : NULL;

		sm_cql_rows_cell(&op->rw, cv != NULL && cv->present ? cv->value
								 : (struct sm_bytes){ 0 });
	}
	return op->out.err;
}

/* The rows before @upto whose row was missing (the store called no sink for them). */
static int
lwt_rows_fill(struct cql_op *op, unsigned upto)
{
	struct cql_lwt_rows *lr = op->lwtr;
	int ret = 0;

	for (; lr->next < upto && ret == 0; lr->next++)
		ret = lwt_row_emit(op, lr->next, NULL);
	return ret;
}

static int
lwt_row_sink(void *ctx, const struct sm_row_view *r)
{
	struct cql_lwt_row *row = ctx;
	struct cql_op *op = row->op;
	int ret;

	if (row->idx < op->lwtr->next || r->ncells < op->lwtr->ncols)
		return -EINVAL; /* the store reads the rows in order, each once */
	ret = lwt_rows_fill(op, row->idx);
	if (ret == 0)
		ret = lwt_row_emit(op, row->idx, r);
	op->lwtr->next = row->idx + 1;
	return ret;
}

/* The result columns of a conditional batch on @t, want[] by column id. */
static void
lwt_rows_columns(struct cql_op *op, const struct sm_table *t, bool *want)
{
	unsigned i, j;

	for (i = 0; i < t->ncols; i++)
		want[i] = t->cols[i].kind == SM_COL_PARTITION || t->cols[i].kind == SM_COL_CLUSTERING;
	for (i = 0; i < op->nsreqs; i++) {
		const struct sm_store_req *r = &op->sreqs[i];
		const struct sm_condition *cd;

		if (r->kind != SM_REQ_CAS)
			continue;
		for (j = 0; j < t->ncols && r->cas.kind != SM_CAS_IF; j++)
			want[j] = true;
		if (r->cas.kind != SM_CAS_IF || r->cas.nconds == 0)
			continue;
		cd = op->conds + PTR_IDX(r->cas.conds); /* still an index into op->conds */
		for (j = 0; j < r->cas.nconds; j++)
			if (cd[j].col < t->ncols)
				want[cd[j].col] = true;
	}
}

/*
 * The rows of a conditional batch on @t (op->sreqs, built): one block for
 * the rows, their sinks and the result columns. 0, or -ENOMEM.
 */
static int
lwt_rows_build(struct cql_op *op, const struct sm_table *t)
{
	unsigned n = op->nsreqs, nc = 0, i, k;
	struct cql_lwt_rows *lr;
	bool *want = sm_calloc(t->ncols ? t->ncols : 1, sizeof(*want));
	size_t sz;

	if (want == NULL)
		return -ENOMEM;
	lwt_rows_columns(op, t, want);
	for (i = 0; i < t->ncols; i++)
		nc += want[i];
	sz = sizeof(*lr) +
	     n * (sizeof(struct sm_cas) + sizeof(struct sm_mut_link) + sizeof(struct cql_lwt_row)) +
	     (nc + 1) * sizeof(struct sm_cql_colspec) + nc * sizeof(uint16_t);
	lr = sm_calloc(1, sz);
	if (lr == NULL) {
		sm_free(want);
		return -ENOMEM;
	}
	lr->n = n;
	lr->ncols = nc;
	lr->cas = (struct sm_cas *)(lr + 1);
	lr->links = (struct sm_mut_link *)(lr->cas + n);
	lr->row = (struct cql_lwt_row *)(lr->links + n);
	lr->specs = (struct sm_cql_colspec *)(lr->row + n);
	lr->cols = (uint16_t *)(lr->specs + nc + 1);
	lr->specs[0].name = sm_cql_str("[applied]");
	lr->specs[0].type = sm_type_simple(SM_TYPE_BOOLEAN);
	for (i = 0, k = 0; i < t->ncols; i++) {
		if (!want[i])
			continue;
		lr->cols[k] = (uint16_t)i;
		lr->specs[++k].name = sm_cql_str(t->cols[i].name);
		lr->specs[k].type = t->cols[i].type;
	}
	for (i = 0; i <= nc; i++) {
		lr->specs[i].ks = sm_cql_str(t->ks);
		lr->specs[i].table = sm_cql_str(t->name);
	}
	for (i = 0; i < n; i++) {
		const struct sm_store_req *r = &op->sreqs[i];

		if (r->kind == SM_REQ_CAS) {
			lr->cas[i] = r->cas;
		} else {
			lr->cas[i].mut = r->mut; /* no condition: holds, its row still read */
			lr->cas[i].kind = SM_CAS_IF;
		}
		lr->row[i].op = op;
		/* a range or the partition: no row of its own, a null result row */
		lr->row[i].no_row =
			(lr->cas[i].mut.flags & (SM_MUT_DELETE_RANGE | SM_MUT_DELETE_PARTITION)) != 0;
		lr->row[i].idx = i;
	}
	sm_free(want);
	op->lwtr = lr;
	cql_op_slow_release(op); /* where the op frees it: nothing on the common path */
	return 0;
}

/* Bind the rows to what the op holds now (indexes to pointers) and make the one request. */
static void
lwt_rows_request(struct cql_op *op)
{
	struct cql_lwt_rows *lr = op->lwtr;
	struct sm_store_req *r = &op->sreqs[0];
	unsigned i;

	for (i = 0; i < lr->n; i++) {
		struct sm_cas *c = &lr->cas[i];

		c->mut.ops = IDX_AT(op->ops, c->mut.ops);
		if (c->nconds > 0)
			c->conds = IDX_AT(op->conds, c->conds);
		lr->links[i].m = c->mut;
		lr->links[i].m.flags |= SM_MUT_LINKED;
		lr->links[i].next = i + 1 < lr->n ? &lr->links[i + 1] : NULL;
		c->cols = lr->cols;
		c->ncols = lr->ncols;
		c->sink.row = lr->row[i].no_row ? NULL : lwt_row_sink;
		c->sink.ctx = &lr->row[i];
	}
	sm_store_req_init(r, SM_REQ_CAS);
	r->cas.mut = lr->cas[0].mut;
	r->cas.kind = SM_CAS_MULTI;
	r->cas.rows = lr->cas;
	r->cas.nconds = lr->n;
	r->cas.links = lr->links;
	op->nsreqs = 1;
}

/* The Paxos round is done: the missing rows, every [applied], the reply. */
static __attribute__((noinline, cold)) void
lwt_rows_finish(struct cql_op *op)
{
	struct cql_lwt_rows *lr = op->lwtr;
	unsigned i;

	if (lwt_rows_fill(op, lr->n) == 0)
		for (i = 0; i < lr->n; i++)
			op->out.p[lr->row[i].applied_at] = op->sreqs[0].cas.applied;
	if (sm_cql_rows_end(&op->rw, NULL) < 0) {
		cql_op_fail(op, SM_CQL_ERR_SERVER, "out of memory encoding the LWT result");
		return;
	}
	cql_op_finish(op);
}

/* Keep the first failure of the op's store requests for the reply. */
static void
note_store_result(struct cql_op *op, const struct sm_store_req *r)
{
	if (r->result < 0 && op->first_err == 0) {
		op->first_err = r->result;
		op->errcode = r->result == -ETIMEDOUT ? SM_CQL_ERR_WRITE_TIMEOUT
			      : r->result == -ENOMEM  ? SM_CQL_ERR_OVERLOADED
						      : SM_CQL_ERR_INVALID;
		snprintf(op->errmsg, sizeof(op->errmsg), "%s",
			 r->err[0] ? r->err : strerror(-r->result));
	}
}

static void
write_done(struct sm_store_req *r)
{
	struct cql_op *op = r->ctx;

	note_store_result(op, r);
	if (--op->pending == 0)
		write_finish(op);
}

static void
wave_pump(struct cql_op *op);

/* A store request of a wave batch finished: its slot takes the next mutation. */
static void
wave_done(struct sm_store_req *r)
{
	struct cql_op *op = r->ctx;

	note_store_result(op, r);
	op->inflight--;
	op->free_slots[op->nfree_slots++] = r;
	if (!op->pumping)
		wave_pump(op);
}

/*
 * Fill the free slots with the next mutations. Local requests complete
 * inside sm_store_submit(): they only give their slot back (pumping), and
 * this loop goes on, so the stack does not grow with the batch.
 */
static void
wave_pump(struct cql_op *op)
{
	struct sm_store_req *r;

	op->pumping = true;
	while (op->nfree_slots > 0 && op->next_mut < op->nmuts) {
		r = op->free_slots[--op->nfree_slots];
		sm_store_req_init(r, SM_REQ_MUTATE);
		r->mut = op->muts[op->next_mut++];
		r->done = wave_done;
		r->ctx = op;
		op->inflight++;
		sm_store_submit(r);
	}
	op->pumping = false;
	if (op->inflight == 0 && op->next_mut == op->nmuts)
		write_finish(op);
}

/* Submit the mutations of a wave batch through CQL_WRITE_WINDOW store requests. */
static void
submit_wave(struct cql_op *op)
{
	unsigned i, window = SM_MIN(op->nmuts, CQL_WRITE_WINDOW);

	for (i = 0; i < op->nmuts; i++)
		op->muts[i].ops = op->ops + PTR_IDX(op->muts[i].ops);
	if (cql_grow((void **)&op->sreqs, &op->sreqs_cap, window, sizeof(*op->sreqs)) < 0) {
		cql_op_fail(op, SM_CQL_ERR_SERVER, "out of memory");
		return;
	}
	op->nsreqs = 0;
	op->next_mut = 0;
	op->inflight = 0;
	for (i = 0; i < window; i++)
		op->free_slots[i] = &op->sreqs[i];
	op->nfree_slots = window;
	wave_pump(op);
}

static void
write_finish(struct cql_op *op)
{
	struct sm_store_req *r = &op->sreqs[0];
	unsigned i;

	if (op->first_err != 0) {
		cql_op_fail(op, op->errcode, "%s", op->errmsg);
		return;
	}
	if (op->nsreqs == 1 && r->kind == SM_REQ_CAS) {
		if (SM_UNLIKELY(op->lwtr != NULL)) {
			lwt_rows_finish(op);
			return;
		}
		if (op->page_rows == 0) {
			/* No pre-image: [applied] and nulls. */
			uint8_t *p = sm_cql_rows_cell_space(&op->rw, 1);

			if (p != NULL)
				op->count = (int64_t)(p - op->out.p);
			for (i = 1; i < op->ps->nres; i++)
				sm_cql_rows_cell(&op->rw, (struct sm_bytes){ 0 });
		}
		if (op->out.err == 0)
			op->out.p[op->count] = r->cas.applied ? 1 : 0;
		if (sm_cql_rows_end(&op->rw, NULL) < 0) {
			cql_op_fail(op, SM_CQL_ERR_SERVER, "out of memory encoding the LWT result");
			return;
		}
		cql_op_finish(op);
		return;
	}
	sm_cql_buf_reset(&op->out);
	sm_cql_enc_result_void(&op->out, op->stream);
	cql_op_finish(op);
}

/* Fix up indexes, start the LWT result if any, and submit every request. */
static void
submit_writes(struct cql_op *op, const struct cql_prepared *lwt_ps)
{
	struct sm_cql_metadata meta;
	unsigned i, j;

	/* another group member's partitions: their owner applies them */
	if (SM_UNLIKELY(cql_group_on) && cql_group_route_write(op) != 0)
		return;
	if (op->wave) {
		submit_wave(op);
		return;
	}
	for (i = 0; i < op->nconds; i++)
		if (op->conds[i].in != NULL || op->conds[i].nin > 0)
			op->conds[i].in = op->in_vals + PTR_IDX(op->conds[i].in);
	for (i = 0; i < op->nsreqs; i++) {
		struct sm_store_req *r = &op->sreqs[i];
		struct sm_mutation *m = r->kind == SM_REQ_CAS ? &r->cas.mut : &r->mut;

		m->ops = IDX_AT(op->ops, m->ops);
		if (r->kind == SM_REQ_CAS) {
			r->cas.conds = IDX_AT(op->conds, r->cas.conds);
			r->cas.cols = lwt_ps->read_cols;
			r->cas.ncols = lwt_ps->nread;
			r->cas.sink.row = cas_sink;
			r->cas.sink.ctx = op;
		}
		r->done = write_done;
		r->ctx = op;
	}
	if (op->nsreqs == 1 && op->sreqs[0].kind == SM_REQ_CAS) {
		memset(&meta, 0, sizeof(meta));
		meta.ncols = lwt_ps->nres;
		if (op->params != NULL && (op->params->flags & SM_CQL_QF_SKIP_METADATA)) {
			meta.flags = SM_CQL_META_NO_METADATA;
		} else {
			meta.cols = lwt_ps->res_specs;
			meta.ks = sm_cql_str(lwt_ps->table->ks);
			meta.table = sm_cql_str(lwt_ps->table->name);
		}
		op->page_rows = 0;
		sm_cql_buf_reset(&op->out);
		if (sm_cql_rows_begin(&op->rw, &op->out, op->stream, &meta) < 0) {
			cql_op_fail(op, SM_CQL_ERR_SERVER, "out of memory");
			return;
		}
	}
	if (op->nsreqs == 1) {
		const struct sm_store_req *r = &op->sreqs[0];
		const struct sm_mutation *m = r->kind == SM_REQ_CAS ? &r->cas.mut : &r->mut;

		/* the table first: a vnode table pays one test */
		if (SM_UNLIKELY(m->table->tablet_count != 0) &&
		    op->req->msg.opcode != SM_CQL_OP_BATCH)
			cql_tablet_hint_slow(op, m->table, &m->pk);
	}
	op->pending = op->nsreqs + 1;
	for (j = 0; j < op->nsreqs; j++)
		sm_store_submit(&op->sreqs[j]);
	if (--op->pending == 0)
		write_finish(op);
}

/* A conditional batch over several rows: its result begins, its one request goes. */
static void
lwt_rows_submit(struct cql_op *op)
{
	struct sm_cql_metadata meta;
	unsigned i;

	/* another group member's partition: its owner applies the batch (as submit_writes()) */
	if (SM_UNLIKELY(cql_group_on) && cql_group_route_write(op) != 0)
		return;
	for (i = 0; i < op->nconds; i++)
		if (op->conds[i].in != NULL || op->conds[i].nin > 0)
			op->conds[i].in = op->in_vals + PTR_IDX(op->conds[i].in);
	lwt_rows_request(op);
	memset(&meta, 0, sizeof(meta));
	meta.ncols = op->lwtr->ncols + 1;
	if (op->params != NULL && (op->params->flags & SM_CQL_QF_SKIP_METADATA))
		meta.flags = SM_CQL_META_NO_METADATA;
	else
		meta.cols = op->lwtr->specs;
	sm_cql_buf_reset(&op->out);
	if (sm_cql_rows_begin(&op->rw, &op->out, op->stream, &meta) < 0) {
		cql_op_fail(op, SM_CQL_ERR_SERVER, "out of memory");
		return;
	}
	op->sreqs[0].done = write_done;
	op->sreqs[0].ctx = op;
	op->pending = 1;
	sm_store_submit(&op->sreqs[0]);
}

/* Make sure op->vals cannot move while @bytes more are converted. */
static int
reserve_vals(struct cql_op *op, size_t bytes)
{
	if (sm_cql_buf_reserve(&op->vals, bytes * 8 + 4096) < 0) {
		cql_op_fail(op, SM_CQL_ERR_SERVER, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

static bool
vals_moved(struct cql_op *op, const uint8_t *base)
{
	if (op->vals.p == base)
		return false;
	cql_op_fail(op, SM_CQL_ERR_SERVER,
		    "internal error: converted values outgrew their reservation");
	return true;
}

static int64_t
default_ts(const struct sm_cql_params *p)
{
	return p != NULL && (p->flags & SM_CQL_QF_TIMESTAMP) ? p->timestamp : SM_TS_NOW;
}

static int
check_write_cl(struct cql_op *op, uint16_t cl, bool lwt)
{
	if (is_serial(cl) && !lwt) {
		cql_op_fail(op, SM_CQL_ERR_INVALID,
			    "You must use conditional updates for serializable writes");
		return -EINVAL;
	}
	if (is_serial(cl) && lwt) {
		cql_op_fail(op, SM_CQL_ERR_INVALID,
			    "%s is not supported as conditional update commit consistency. Use "
			    "ANY if you mean \"make sure it is accepted but I don't care how "
			    "many replicas commit it for non-SERIAL reads\"",
			    sm_cql_consistency_name(cl));
		return -EINVAL;
	}
	return 0;
}

/* batch_statement.cc validate(): an UNLOGGED batch may hold counters, not mixed with others */
static int
batch_kind_check(struct cql_op *op, struct wctx *w, const struct sm_cql_stmt *s,
		 const struct sm_table *t)
{
	enum sm_cql_stmt_batch_kind kind = w->batch_kind;
	bool counter_stmt = t->counter;

	if (s->kind == SM_CQL_SELECT || s->kind == SM_CQL_BATCH) {
		cql_op_fail(op, SM_CQL_ERR_INVALID,
			    "Invalid statement in batch: only UPDATE, INSERT and DELETE statements "
			    "are allowed.");
		return -EINVAL;
	}
	if (kind == SM_CQL_STMT_BATCH_COUNTER && !counter_stmt) {
		cql_op_fail(op, SM_CQL_ERR_INVALID,
			    "Cannot include non-counter statement in a counter batch");
		return -EINVAL;
	}
	if (kind == SM_CQL_STMT_BATCH_LOGGED && counter_stmt) {
		cql_op_fail(op, SM_CQL_ERR_INVALID,
			    "Cannot include a counter statement in a logged batch");
		return -EINVAL;
	}
	w->kinds_seen |= counter_stmt ? 1 : 2;
	if (w->kinds_seen == 3) {
		cql_op_fail(op, SM_CQL_ERR_INVALID,
			    "Counter and non-counter mutations cannot exist in the same batch");
		return -EINVAL;
	}
	return 0;
}

static bool
lwt_batch_merge(struct cql_op *op);

void
cql_exec_modify(struct cql_op *op)
{
	const struct cql_prepared *ps = op->ps;
	const struct sm_cql_stmt *s = ps->stmt;
	const uint8_t *base;
	struct wctx w;
	unsigned i;
	bool sys;
	char err[256];
	int32_t code;
	int64_t bts;
	bool present, lwt_many;

	if (check_write_cl(op, op->params->consistency, ps->lwt) < 0)
		return;
	if (reserve_vals(op, op->req->body.len + ps->len) < 0)
		return;
	base = op->vals.p;
	memset(&w, 0, sizeof(w));
	w.ts = default_ts(op->params);
	if (s->kind != SM_CQL_BATCH) {
		w.s = s;
		w.t = ps->table;
		w.ps = ps;
		if (build_write(op, &w) < 0 || vals_moved(op, base))
			return;
		submit_writes(op, ps);
		return;
	}
	/* BEGIN BATCH ... APPLY BATCH as one QUERY or prepared statement. */
	for (i = 0, lwt_many = false; s->batch.nstmts > 1 && i < s->batch.nstmts; i++)
		lwt_many |= stmt_conditional(s->batch.stmts[i]);
	if (cql_int_option(op, s->batch.attrs.timestamp, "[timestamp]", INT64_MIN + 1, INT64_MAX,
			   true, &bts, &present) < 0)
		return;
	if (present)
		w.ts = bts;
	w.in_batch = true;
	w.batch_kind = s->batch.kind;
	for (i = 0; i < s->batch.nstmts; i++) {
		w.s = s->batch.stmts[i];
		w.t = cql_lookup_table(cql_stmt_table(w.s), sm_cql_conn_keyspace(op->req->conn),
				       &sys, err, sizeof(err), &code);
		if (w.t == NULL) {
			cql_op_fail(op, code, "%s", err);
			return;
		}
		if (sys) {
			cql_op_fail(op, SM_CQL_ERR_UNAUTHORIZED,
				    "%s keyspace is not user-modifiable", w.t->ks);
			return;
		}
		if (batch_kind_check(op, &w, w.s, w.t) < 0)
			return;
		if (build_write(op, &w) < 0 || vals_moved(op, base))
			return;
	}
	if (lwt_many && !lwt_batch_merge(op))
		return;
	if (op->lwtr == NULL && op->nsreqs == 1 && op->sreqs[0].kind == SM_REQ_CAS) {
		/* A conditional batch of one row: its (first) conditional statement's LWT result. */
		struct cql_prepared *inner;
		unsigned c = 0;

		while (c + 1 < s->batch.nstmts && !stmt_conditional(s->batch.stmts[c]))
			c++;
		if (cql_exec_prepare_text(sm_cql_conn_keyspace(op->req->conn),
					  (struct sm_bytes){ (const uint8_t *)ps->text +
								     s->batch.stmts[c]->src.off,
							     s->batch.stmts[c]->src.len },
					  &inner, err, sizeof(err), &code) < 0) {
			cql_op_fail(op, code, "%s", err);
			return;
		}
		/* The op keeps it (for the result columns) until it finishes. */
		cql_exec_put(op->ps);
		op->ps = inner;
		submit_writes(op, inner);
		return;
	}
	if (SM_UNLIKELY(op->lwtr != NULL)) {
		lwt_rows_submit(op);
		return;
	}
	submit_writes(op, ps);
}

static bool
same_key(const struct sm_key *a, const struct sm_key *b)
{
	unsigned j;

	if (a->n != b->n)
		return false;
	for (j = 0; j < a->n; j++)
		if (a->part[j].len != b->part[j].len ||
		    memcmp(a->part[j].p, b->part[j].p, a->part[j].len) != 0)
			return false;
	return true;
}

/*
 * A conditional batch of several statements, built: ScyllaDB's refusal when
 * they span tables or partitions (batch_statement.cc validate()). Statements
 * on one row become one compare-and-set: every condition, every change (the
 * ops of the statements lie one after another), one Paxos round. Several
 * rows of a partition are refused (one round for several rows is not there
 * yet). True when merged into op->sreqs[0]; false after failing the op.
 */
static bool
lwt_batch_merge(struct cql_op *op)
{
	const struct sm_mutation *first = NULL;
	const struct sm_store_req *cas = NULL;
	struct sm_store_req merged;
	bool one_row = true;
	unsigned i, flags = 0;

	for (i = 0; i < op->nsreqs; i++) {
		const struct sm_store_req *r = &op->sreqs[i];
		const struct sm_mutation *m = r->kind == SM_REQ_CAS ? &r->cas.mut : &r->mut;

		if (r->kind == SM_REQ_CAS && cas == NULL)
			cas = r;
		else if (r->kind == SM_REQ_CAS && r->cas.kind != cas->cas.kind)
			one_row = false;
		flags |= m->flags;
		if (first == NULL) {
			first = m;
			continue;
		}
		if (m->table != first->table) {
			cql_op_fail(op, SM_CQL_ERR_INVALID,
				    "Batch with conditions cannot span multiple tables");
			return false;
		}
		if (!same_key(&m->pk, &first->pk)) {
			cql_op_fail(op, SM_CQL_ERR_INVALID,
				    "Batch with conditions cannot span multiple partitions");
			return false;
		}
		if (!same_key(&m->ck, &first->ck) || m->ttl != first->ttl || m->ts != first->ts)
			one_row = false;
	}
	if (cas == NULL) {
		cql_op_fail(op, SM_CQL_ERR_SERVER, "a conditional batch without a condition");
		return false;
	}
	if (sm_index_nth(sm_catalog_keyspace(sm_store_catalog(), first->table->ks), first->table,
			 0) == NULL) {
		/* every row its own update, a result row per statement (cas_request.cc) */
		if (lwt_rows_build(op, first->table) < 0) {
			cql_op_fail(op, SM_CQL_ERR_SERVER, "out of memory");
			return false;
		}
		return true;
	}
	if (!one_row || (flags & (SM_MUT_DELETE_RANGE | SM_MUT_DELETE_PARTITION)) != 0) {
		/* the index and view writers take one row's pre- and post-image (sm_index.c) */
		cql_op_fail(op, SM_CQL_ERR_INVALID,
			    "not supported by shardmark: conditional batches over several rows "
			    "(or mixing IF NOT EXISTS, IF EXISTS and IF conditions) of a table "
			    "with secondary indexes or materialized views");
		return false;
	}
	merged = *cas;
	merged.cas.mut.ops = first->ops; /* the first statement's: the ops follow on */
	merged.cas.mut.nops = op->nops - PTR_IDX(first->ops);
	merged.cas.mut.flags = flags;
	merged.cas.nconds = op->nconds - PTR_IDX(cas->cas.conds);
	op->sreqs[0] = merged;
	op->nsreqs = 1;
	return true;
}

/* BATCH message: statements by text or by id, each with its own values. */
/*
 * ScyllaDB's batch size check (cql3/statements/batch_statement.cc,
 * verify_batch_size): the keys and values the batch's mutations carry,
 * against batch_size_fail_threshold_in_kb. True after answering.
 */
static bool
batch_too_large(struct cql_op *op, const struct cql_prepared *first)
{
	static __thread struct sm_ratelimit rl;
	size_t bytes = 0, limit;
	uint64_t suppressed;
	unsigned i, nparts;

	limit = (size_t)(cql_cfg != NULL && cql_cfg->batch_size_fail_threshold_in_kb != 0
				 ? cql_cfg->batch_size_fail_threshold_in_kb
				 : 1024u) << 10;
	for (i = 0; i < op->nops; i++)
		bytes += op->ops[i].key.len + op->ops[i].value.len;
	for (i = 0; i < op->nmuts; i++)
		bytes += sm_key_size(&op->muts[i].pk) + sm_key_size(&op->muts[i].ck);
	for (i = 0; i < op->nsreqs; i++) {
		const struct sm_mutation *m = op->sreqs[i].kind == SM_REQ_CAS ? &op->sreqs[i].cas.mut
									      : &op->sreqs[i].mut;

		bytes += sm_key_size(&m->pk) + sm_key_size(&m->ck);
	}
	if (bytes <= limit)
		return false;
	nparts = op->nmuts + op->nsreqs;
	if (sm_ratelimit_ok(&rl, 10000, &suppressed))
		SM_WARN("Batch modifying %u partitions in %s.%s is of size %zu bytes, exceeding "
			"specified FAIL threshold of %zu by %zu (batch_size_fail_threshold_in_kb; "
			"%" PRIu64 " more since the last message)",
			nparts, first->table->ks, first->table->name, bytes, limit, bytes - limit,
			suppressed);
	cql_op_fail(op, SM_CQL_ERR_INVALID, "Batch too large");
	return true;
}

void
cql_exec_batch(struct cql_op *op, const struct sm_cql_batch *b)
{
	struct cql_prepared **list = NULL, *lwt = NULL;
	struct sm_cql_batch_stmt bs;
	struct sm_cql_iter it;
	const uint8_t *base;
	size_t text_total = 0;
	unsigned i, n = 0;
	bool keep;
	struct wctx w;
	char err[512];
	int32_t code;

	if (b->n == 0) {
		sm_cql_buf_reset(&op->out);
		sm_cql_enc_result_void(&op->out, op->stream);
		cql_op_finish(op);
		return;
	}
	list = sm_calloc(b->n, sizeof(*list));
	if (list == NULL) {
		cql_op_fail(op, SM_CQL_ERR_SERVER, "out of memory");
		return;
	}
	sm_cql_batch_iter(&it, b);
	while (sm_cql_batch_next(&it, &bs)) {
		if (bs.kind == SM_CQL_BATCH_KIND_PREPARED) {
			list[n] = cql_exec_lookup(bs.query_or_id);
			if (list[n] == NULL) {
				op->req->msg.u.execute.id = bs.query_or_id;
				cql_op_fail(
					op, SM_CQL_ERR_UNPREPARED,
					"Prepared query in BATCH not found (it was not prepared "
					"on this host, or it was evicted)");
				goto out;
			}
		} else if (cql_exec_prepare_text(sm_cql_conn_keyspace(op->req->conn),
						 bs.query_or_id, &list[n], err, sizeof(err),
						 &code) < 0) {
			cql_op_fail(op, code, "%s", err);
			goto out;
		}
		if (list[n]->table == NULL || list[n]->system ||
		    list[n]->stmt->kind == SM_CQL_SELECT) {
			n++;
			cql_op_fail(op, SM_CQL_ERR_INVALID,
				    list[n - 1]->system
					    ? "system keyspaces are not user-modifiable"
					    : "Invalid statement in batch: only UPDATE, "
					      "INSERT and DELETE statements are allowed.");
			goto out;
		}
		if (list[n]->lwt)
			lwt = list[n];
		text_total += list[n]->len;
		n++;
	}
	if (check_write_cl(op, b->consistency, lwt != NULL) < 0)
		goto out;
	if (reserve_vals(op, op->req->body.len + text_total) < 0)
		goto out;
	base = op->vals.p;
	op->wave = n > CQL_WRITE_WINDOW && lwt == NULL;
	memset(&w, 0, sizeof(w));
	w.ts = b->flags & SM_CQL_QF_TIMESTAMP ? b->timestamp : SM_TS_NOW;
	w.in_batch = true;
	w.batch_kind = (enum sm_cql_stmt_batch_kind)b->type;
	sm_cql_batch_iter(&it, b);
	for (i = 0; i < n && sm_cql_batch_next(&it, &bs); i++) {
		/* On failure the op's release drops this reference: list[i] is then done. */
		op->ps = list[i];
		if (cql_exec_load_values(op, &bs.values) < 0 ||
		    batch_kind_check(op, &w, list[i]->stmt, list[i]->table) < 0)
			goto out_failed;
		w.s = list[i]->stmt;
		w.t = list[i]->table;
		w.ps = list[i];
		if (build_write(op, &w) < 0 || vals_moved(op, base))
			goto out_failed;
		op->ps = NULL;
	}
	if (lwt != NULL && n > 1 && !lwt_batch_merge(op))
		goto out;
	if (batch_too_large(op, list[0]))
		goto out;
	/* The op keeps one statement (for the LWT result); the rest go now. */
	op->ps = lwt != NULL ? lwt : list[0];
	for (i = 0, keep = false; i < n; i++) {
		/* The same statement may appear many times: keep one reference. */
		if (!keep && list[i] == op->ps)
			keep = true;
		else
			cql_exec_put(list[i]);
	}
	sm_free(list);
	/* ScyllaDB's batch metrics, and the latency of a write (or a CAS) */
	CQL_STAT_INC(stmts[CQL_M_BATCH][lwt != NULL]);
	CQL_STAT_ADD(statements_in_batches[lwt != NULL], n);
	op->req->timeout_kind = lwt != NULL ? SM_CQL_TIMEOUT_CAS : SM_CQL_TIMEOUT_WRITE;
	if (op->lwtr != NULL)
		lwt_rows_submit(op);
	else
		submit_writes(op, op->ps);
	return;
out_failed:
	list[i] = NULL;
out:
	for (i = 0; i < n; i++)
		if (list[i] != NULL)
			cql_exec_put(list[i]);
	sm_free(list);
}
