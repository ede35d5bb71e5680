/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SELECT's selection: what a statement's selectors read and how each result
 * column is made from the row (ScyllaDB's cql3/selection/selection.cc). Plain
 * columns, WRITETIME, TTL and token() take the row sink's fast path
 * (struct out_col); anything else is compiled into a tree of struct sel_node
 * evaluated on each row: user type fields, native functions, CAST, literals,
 * and the aggregates count, min, max, sum and avg, whose rows come one per
 * group (GROUP BY a primary key prefix) or one for the whole result.
 * SELECT DISTINCT is checked here and read with a per-partition limit of 1.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cql_exec_priv.h"
#include "cql_json_priv.h"

/* Room for one more read; read_keys, once it exists, grows along. */
static int
read_grow(struct cql_prepared *ps)
{
	unsigned old = ps->read_cap;
	struct sm_bytes *k;

	if (cql_grow((void **)&ps->read_cols, &ps->read_cap, ps->nread + 1, sizeof(uint16_t)) < 0)
		return -ENOMEM;
	if (ps->read_keys == NULL || ps->read_cap == old)
		return 0;
	k = sm_realloc(ps->read_keys, ps->read_cap * sizeof(*k));
	if (k == NULL)
		return -ENOMEM;
	memset(k + old, 0, (ps->read_cap - old) * sizeof(*k));
	ps->read_keys = k;
	return 0;
}

/* The cell that reads column @id, added once however often it is selected. */
int
cql_add_read_col(struct cql_prepared *ps, uint16_t id, unsigned *cell)
{
	if (ps->read_cell == NULL) {
		/* a map for the binding only: one statement may name every column */
		ps->read_cell = sm_calloc(ps->table->ncols ? ps->table->ncols : 1,
					  sizeof(*ps->read_cell));
		if (ps->read_cell == NULL)
			return -ENOMEM;
	}
	if (ps->read_cell[id] != 0) {
		*cell = ps->read_cell[id] - 1;
		return 0;
	}
	if (read_grow(ps) < 0)
		return -ENOMEM;
	ps->read_cols[ps->nread] = id;
	*cell = ps->nread++;
	ps->read_cell[id] = ps->nread;
	return 0;
}

/*
 * The cell of one element of column @id, the 2-byte index of a user type
 * field or a collection key (@key, @klen; copied): a read of its own, never
 * shared, whose view is that element's (WRITETIME(u.f), TTL(m['k'])).
 */
static int
add_read_elem(struct cql_prepared *ps, uint16_t id, const uint8_t *key, uint32_t klen,
	      unsigned *cell)
{
	uint8_t *copy;
	unsigned i;

	if (ps->read_keys == NULL) {
		ps->read_keys = sm_calloc(ps->read_cap ? ps->read_cap : 1, sizeof(*ps->read_keys));
		if (ps->read_keys == NULL)
			return -ENOMEM;
	}
	if (read_grow(ps) < 0 ||
	    cql_grow((void **)&ps->owned_str, &ps->owned_str_cap, ps->nowned_str + 1,
		     sizeof(*ps->owned_str)) < 0)
		return -ENOMEM;
	copy = sm_malloc(klen ? klen : 1);
	if (copy == NULL)
		return -ENOMEM;
	for (i = 0; i < klen; i++)
		copy[i] = key[i];
	ps->owned_str[ps->nowned_str++] = (char *)copy;
	ps->read_cols[ps->nread] = id;
	ps->read_keys[ps->nread] = (struct sm_bytes){ copy, klen };
	*cell = ps->nread++;
	return 0;
}

int
cql_add_res(struct cql_prepared *ps, const char *name, const struct sm_type *type, enum out_kind kind,
	unsigned cell)
{
	unsigned cap2 = ps->res_cap;

	if (cql_grow((void **)&ps->res_specs, &ps->res_cap, ps->nres + 1,
		     sizeof(*ps->res_specs)) < 0 ||
	    cql_grow((void **)&ps->outs, &cap2, ps->nres + 1, sizeof(*ps->outs)) < 0)
		return -ENOMEM;
	memset(&ps->res_specs[ps->nres], 0, sizeof(ps->res_specs[0]));
	ps->res_specs[ps->nres].ks = sm_cql_str(ps->table->ks);
	ps->res_specs[ps->nres].table = sm_cql_str(ps->table->name);
	ps->res_specs[ps->nres].name = sm_cql_str(name);
	ps->res_specs[ps->nres].type = type;
	ps->outs[ps->nres].kind = kind;
	ps->outs[ps->nres].cell = cell;
	ps->nres++;
	return 0;
}


/* ---- user type fields ---- */

/* Field @i of a user type value; p NULL (a null) when it is null or the value ends before it. */
static struct sm_bytes
udt_field(struct sm_bytes v, unsigned i)
{
	struct sm_coll_iter it;
	struct sm_bytes f;
	unsigned n = 0;

	sm_tuple_iter_init(&it, v);
	while (sm_tuple_next(&it, &f)) {
		if (n++ < i)
			continue;
		if (f.len == SM_FIELD_NULL)
			break;
		if (f.p == NULL)
			f.p = SM_CQL_EMPTY.p; /* an empty field is a value, not a null */
		return f;
	}
	return (struct sm_bytes){ 0 };
}

/* ---- compiling the selectors ---- */

struct comp {
	struct cql_prepared *ps;
	char *err;
	size_t errlen;
	bool has_agg;
};

static int
bad(struct comp *cc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int
bad(struct comp *cc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cc->err, cc->errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A new node; its index in *@idx (the array may move: index, do not point). */
static struct sel_node *
new_node(struct cql_prepared *ps, enum sel_op op, const struct sm_type *type, int *idx)
{
	struct sel_node *n;

	if (cql_grow((void **)&ps->sel_nodes, &ps->sel_cap, ps->nsel_nodes + 1,
		     sizeof(*ps->sel_nodes)) < 0)
		return NULL;
	n = &ps->sel_nodes[ps->nsel_nodes];
	memset(n, 0, sizeof(*n));
	n->op = op;
	n->type = type;
	n->arg = -1;
	n->bind = -1;
	*idx = (int)ps->nsel_nodes++;
	return n;
}

/* How deep aggregates nest under node @i (ScyllaDB's aggregation_depth()). */
static unsigned
agg_depth(const struct cql_prepared *ps, int i)
{
	const struct sel_node *n;
	unsigned d;

	if (i < 0)
		return 0;
	n = &ps->sel_nodes[i];
	d = agg_depth(ps, n->arg);
	return n->op == SEL_AGG ? d + 1 : d;
}

static bool
is_numeric(const struct sm_type *t)
{
	switch (t->kind) {
	case SM_TYPE_TINYINT:
	case SM_TYPE_SMALLINT:
	case SM_TYPE_INT:
	case SM_TYPE_BIGINT:
	case SM_TYPE_COUNTER:
	case SM_TYPE_FLOAT:
	case SM_TYPE_DOUBLE:
	case SM_TYPE_VARINT:
	case SM_TYPE_DECIMAL:
		return true;
	default:
		return false;
	}
}

static int
compile(struct comp *cc, const struct sm_cql_selector *sel, const struct sm_type *expect, int *out,
	const char **name);

/* c.f.g...: the path's user types level by level, with ScyllaDB's messages. */
static int
compile_fields(struct comp *cc, const struct sm_cql_selector *sel, const struct sm_type *base,
	       const char *base_name, int arg, int *out, const char **name)
{
	const struct sm_type *ft = base;
	char tn[256], path[512];
	uint16_t *idxs;
	struct sel_node *n;
	size_t at;
	unsigned i;
	int idx;

	at = (size_t)snprintf(path, sizeof(path), "%s", base_name);
	idxs = sm_calloc(sel->nfields + 1, sizeof(*idxs));
	if (idxs == NULL ||
	    cql_grow((void **)&cc->ps->owned_str, &cc->ps->owned_str_cap, cc->ps->nowned_str + 1,
		     sizeof(*cc->ps->owned_str)) < 0) {
		sm_free(idxs);
		return -ENOMEM;
	}
	cc->ps->owned_str[cc->ps->nowned_str++] = (char *)idxs;
	idxs[0] = (uint16_t)sel->nfields;
	for (i = 0; i < sel->nfields; i++) {
		sm_type_name(ft, tn, sizeof(tn));
		if (ft->kind != SM_TYPE_UDT)
			return bad(cc, "Invalid field selection: %s of type %s is not a user type",
				   path, tn);
		idx = sm_type_field_index(ft, sel->fields[i]);
		if (idx < 0)
			return bad(cc, "%s of type %s has no field %s", path, tn, sel->fields[i]);
		idxs[i + 1] = (uint16_t)idx;
		ft = ft->fields[idx];
		if (at < sizeof(path))
			at += (size_t)snprintf(path + at, sizeof(path) - at, ".%s", sel->fields[i]);
	}
	n = new_node(cc->ps, SEL_FIELD, ft, out);
	if (n == NULL)
		return -ENOMEM;
	n->arg = arg;
	n->path = idxs;
	*name = cql_own_str(cc->ps, "%s", path);
	return *name != NULL ? 0 : -ENOMEM;
}

static int
compile_term(struct comp *cc, const struct sm_cql_selector *sel, const struct sm_type *expect,
	     int *out, const char **name);

/*
 * WRITETIME(m[k]) and TTL(m[k]) of a non-frozen map's or set's element
 * (Cassandra 5.0's and ScyllaDB's #15427): that element's own cell, read
 * apart (add_read_elem()); a null key reads as null.
 */
static int
compile_attr_elem(struct comp *cc, const struct sm_cql_selector *sel, const struct sm_column *c,
		  int *out, const char **name)
{
	const char *kind = sel->kind == SM_CQL_SEL_TTL ? "TTL" : "WRITETIME";
	const char *lower = sel->kind == SM_CQL_SEL_TTL ? "ttl" : "writetime";
	const struct sm_type *rt =
		sm_type_simple(sel->kind == SM_CQL_SEL_TTL ? SM_TYPE_INT : SM_TYPE_BIGINT);
	struct sm_cql_selector k;
	const struct sel_node *kn;
	const char *kname;
	struct sel_node *n;
	unsigned cell;
	int ki, ret;

	/* ScyllaDB's messages (prepare_expr.cc) */
	if (c->kind == SM_COL_PARTITION || c->kind == SM_COL_CLUSTERING)
		return bad(cc, "%s is not legal on primary key component %s", kind, c->name);
	if (!sm_type_is_collection(c->type))
		return bad(cc, "Column %s is not a map/set/list, cannot be subscripted", c->name);
	if (sel->slice || (c->type->kind != SM_TYPE_MAP && c->type->kind != SM_TYPE_SET) ||
	    c->type->frozen)
		return bad(cc, "%s on a subscript is only valid for non-frozen map or set columns",
			   kind);
	if (sel->sub->kind == SM_CQL_TERM_BIND)
		return bad(cc, "not supported by shardmark: a bind marker in %s(%s[?])", kind,
			   c->name);
	memset(&k, 0, sizeof(k));
	k.kind = SM_CQL_SEL_TERM;
	k.term = sel->sub;
	k.src = sel->sub->src;
	ret = compile_term(cc, &k, c->type->elem, &ki, &kname);
	if (ret < 0)
		return ret;
	kn = &cc->ps->sel_nodes[ki];
	*name = cql_own_str(cc->ps, "%s(%s[%s])", lower, c->name, kname);
	if (*name == NULL)
		return -ENOMEM;
	if (kn->knull) {
		n = new_node(cc->ps, SEL_CONST, rt, out);
		if (n == NULL)
			return -ENOMEM;
		n->knull = true;
		return 0;
	}
	ret = add_read_elem(cc->ps, c->id, kn->konst.p, kn->konst.len, &cell);
	if (ret < 0)
		return ret;
	n = new_node(cc->ps, sel->kind == SM_CQL_SEL_TTL ? SEL_TTL : SEL_WRITETIME, rt, out);
	if (n == NULL)
		return -ENOMEM;
	n->cell = cell;
	return 0;
}

/* WRITETIME(c), TTL(c), WRITETIME(u.f), TTL(u.f) */
static int
compile_attr(struct comp *cc, const struct sm_cql_selector *sel, const struct sm_column *c,
	     int *out, const char **name)
{
	const char *kind = sel->kind == SM_CQL_SEL_TTL ? "TTL" : "WRITETIME";
	const char *lower = sel->kind == SM_CQL_SEL_TTL ? "ttl" : "writetime";
	struct sel_node *n;
	uint8_t key[2];
	unsigned cell;
	int idx, ret;

	if (sel->subscript)
		return compile_attr_elem(cc, sel, c, out, name);
	if (sel->nfields == 0) {
		if (c->kind == SM_COL_PARTITION || c->kind == SM_COL_CLUSTERING)
			return bad(cc, "Cannot use selection function %s on PRIMARY KEY part %s",
				   sel->kind == SM_CQL_SEL_TTL ? "ttl" : "writeTime", c->name);
		/* a non-frozen collection has a timestamp per element, none of its own
		 * (ScyllaDB's SCYLLADB-5166; its elements: WRITETIME(m[k])) */
		if (sm_type_is_collection(c->type) && sm_type_is_multicell(c->type))
			return bad(cc, "Cannot use selection function %s on non-frozen collection %s",
				   sel->kind == SM_CQL_SEL_TTL ? "ttl" : "writeTime", c->name);
		ret = cql_add_read_col(cc->ps, c->id, &cell);
		*name = cql_own_str(cc->ps, "%s(%s)", lower, c->name);
	} else {
		/* prepare_expr.cc prepare_column_mutation_attribute() */
		if (c->type->kind != SM_TYPE_UDT) {
			char tn[256];

			sm_type_name(c->type, tn, sizeof(tn));
			return bad(cc, "Invalid field selection: %s of type %s is not a user type",
				   c->name, tn);
		}
		idx = sm_type_field_index(c->type, sel->fields[0]);
		if (idx < 0)
			return bad(cc, "%s of type %s has no field %s", c->name, c->type->name,
				   sel->fields[0]);
		if (sel->nfields > 1)
			return bad(cc, "%s on a field selection expects a column, got %s.%s.%s",
				   kind, c->name, sel->fields[0], sel->fields[1]);
		if (c->kind == SM_COL_PARTITION || c->kind == SM_COL_CLUSTERING)
			return bad(cc, "%s is not legal on primary key component %s", kind,
				   c->name);
		if (c->type->frozen)
			return bad(cc,
				   "%s on a field selection is only valid for non-frozen UDT columns",
				   kind);
		key[0] = (uint8_t)(idx >> 8);
		key[1] = (uint8_t)idx;
		ret = add_read_elem(cc->ps, c->id, key, 2, &cell);
		*name = cql_own_str(cc->ps, "%s(%s.%s)", lower, c->name, sel->fields[0]);
	}
	if (ret < 0 || *name == NULL)
		return -ENOMEM;
	n = new_node(cc->ps, sel->kind == SM_CQL_SEL_TTL ? SEL_TTL : SEL_WRITETIME,
		     sm_type_simple(sel->kind == SM_CQL_SEL_TTL ? SM_TYPE_INT : SM_TYPE_BIGINT), out);
	if (n == NULL)
		return -ENOMEM;
	n->cell = cell;
	return 0;
}

/* token(pk...): the partition key's columns, all of them, in order. */
static int
compile_token(struct comp *cc, const struct sm_cql_selector *sel, int *out, const char **name)
{
	const struct sm_table *t = cc->ps->table;
	char args[512];
	size_t at = 0;
	unsigned i;

	args[0] = '\0';
	for (i = 0; i < sel->nargs; i++) {
		const struct sm_cql_selector *a = &sel->args[i];

		if (a->kind != SM_CQL_SEL_COLUMN || a->nfields > 0 || i >= t->npk ||
		    strcmp(a->column, t->cols[i].name) != 0)
			break;
		if (at < sizeof(args))
			at += (size_t)snprintf(args + at, sizeof(args) - at, "%s%s", i ? ", " : "",
					       a->column);
	}
	if (i != sel->nargs || sel->nargs != t->npk)
		return bad(cc,
			   "Invalid call to function token, none of its type signatures match "
			   "(known type signatures: system.token : (the partition key columns) -> "
			   "bigint)");
	if (new_node(cc->ps, SEL_TOKEN, sm_type_simple(SM_TYPE_BIGINT), out) == NULL)
		return -ENOMEM;
	*name = cql_own_str(cc->ps, "system.token(%s)", args);
	return *name != NULL ? 0 : -ENOMEM;
}

static int
agg_kind_of(const char *name, enum agg_kind *k)
{
	static const struct {
		const char *name;
		enum agg_kind k;
	} aggs[] = { { "count", AGG_COUNT }, { "min", AGG_MIN }, { "max", AGG_MAX },
		     { "sum", AGG_SUM },     { "avg", AGG_AVG } };
	unsigned i;

	for (i = 0; i < SM_ARRAY_SIZE(aggs); i++) {
		if (strcmp(name, aggs[i].name) == 0) {
			*k = aggs[i].k;
			return 0;
		}
	}
	return -ENOENT;
}

/* toJson(x) (ScyllaDB's functions/as_json_function): x's JSON, as text */
static int
compile_tojson(struct comp *cc, const struct sm_cql_selector *sel, int *out, const char **name)
{
	struct sel_node *n;
	const char *aname;
	int arg, ret;

	if (sel->nargs != 1)
		return bad(cc, "toJson() accepts only one argument (%u given)", sel->nargs);
	ret = compile(cc, &sel->args[0], NULL, &arg, &aname);
	if (ret < 0)
		return ret;
	n = new_node(cc->ps, SEL_TOJSON, sm_type_simple(SM_TYPE_TEXT), out);
	if (n == NULL)
		return -ENOMEM;
	n->arg = arg;
	*name = cql_own_str(cc->ps, "system.tojson(%s)", aname);
	return *name != NULL ? 0 : -ENOMEM;
}

/* count(x), min(x), max(x), sum(x), avg(x) (ScyllaDB's aggregate_fcts.cc). */
static int
compile_agg(struct comp *cc, const struct sm_cql_selector *sel, enum agg_kind k, int *out,
	    const char **name)
{
	const struct sm_type *at, *rt;
	struct sel_node *n;
	const char *aname;
	int arg, ret;

	if (sel->nargs != 1)
		return bad(cc,
			   "Invalid number of arguments in call to function system.%s: 1 required "
			   "but %u provided",
			   sel->name, sel->nargs);
	ret = compile(cc, &sel->args[0], NULL, &arg, &aname);
	if (ret < 0)
		return ret;
	if (agg_depth(cc->ps, arg) > 0)
		return bad(cc, "SELECT clause contains aggeregation of an aggregation");
	at = cc->ps->sel_nodes[arg].type;
	rt = at;
	if (k == AGG_COUNT)
		rt = sm_type_simple(SM_TYPE_BIGINT);
	if ((k == AGG_SUM || k == AGG_AVG) && !is_numeric(at))
		return bad(cc, "Invalid call to function system.%s, none of its type signatures match",
			   sel->name);
	if ((k == AGG_SUM || k == AGG_AVG) && at->kind == SM_TYPE_COUNTER)
		rt = sm_type_simple(SM_TYPE_BIGINT);
	n = new_node(cc->ps, SEL_AGG, rt, out);
	if (n == NULL)
		return -ENOMEM;
	n->arg = arg;
	n->akind = k;
	n->agg = cc->ps->naggs++;
	cc->has_agg = true;
	*name = cql_own_str(cc->ps, "system.%s(%s)", sel->name, aname);
	return *name != NULL ? 0 : -ENOMEM;
}

/* A native scalar function of selectors (time_uuid_fcts.hh, bytes_conversion_fcts.hh). */
static int
compile_fn(struct comp *cc, const struct sm_cql_selector *sel, int *out, const char **name)
{
	const struct sm_type *want = NULL;
	const char *aname = "";
	struct sel_node *n;
	struct cql_fn f;
	enum sm_type_kind ak;
	char tn[128];
	unsigned i;
	int arg = -1, ret;

	if (!cql_fn_lookup(sel->ks, sel->name, &f))
		return bad(cc, "Unknown function %s%s%s called", sel->ks ? sel->ks : "",
			   sel->ks ? "." : "", sel->name);
	if (sel->nargs != f.nargs)
		return bad(cc,
			   "Invalid number of arguments in call to function system.%s: %u required "
			   "but %u provided",
			   sel->name, f.nargs, sel->nargs);
	ak = f.arg;
	if (f.nargs == 1) {
		if (f.ncand == 0)
			want = sm_type_simple(f.arg);
		ret = compile(cc, &sel->args[0], want, &arg, &aname);
		if (ret < 0)
			return ret;
		ak = cc->ps->sel_nodes[arg].type->kind;
		if (f.ncand > 0) {
			for (i = 0; i < f.ncand && f.cand[i] != ak; i++)
				;
			if (i == f.ncand)
				return bad(cc,
					   "Invalid call to function system.%s, none of its type "
					   "signatures match",
					   sel->name);
		} else if (ak != f.arg &&
			   !(f.arg == SM_TYPE_BIGINT && ak == SM_TYPE_COUNTER)) {
			sm_type_name(cc->ps->sel_nodes[arg].type, tn, sizeof(tn));
			sm_type_name(sm_type_simple(f.arg), tn, sizeof(tn));
			return bad(cc,
				   "Type error: %s cannot be passed as argument 0 of function "
				   "system.%s of type %s",
				   aname, sel->name, tn);
		}
	}
	n = new_node(cc->ps, SEL_FN, sm_type_simple(f.result), out);
	if (n == NULL)
		return -ENOMEM;
	n->arg = arg;
	n->fn = f;
	n->ak = ak;
	n->fname = sel->name;
	*name = cql_own_str(cc->ps, "system.%s(%s)", sel->name, aname);
	return *name != NULL ? 0 : -ENOMEM;
}

/* A literal argument: converted once, for the type its place wants. */
static int
compile_term(struct comp *cc, const struct sm_cql_selector *sel, const struct sm_type *expect,
	     int *out, const char **name)
{
	struct cql_prepared *ps = cc->ps;
	const struct sm_type *t = expect, *hint = NULL;
	struct sm_cql_value_span sp;
	struct sm_cql_buf buf;
	struct sel_node *n;
	uint8_t *copy;
	int ret;

	*name = cql_own_str(ps, "%.*s", (int)sel->src.len, ps->text + sel->src.off);
	if (*name == NULL)
		return -ENOMEM;
	if (t == NULL && sel->term->kind == SM_CQL_TERM_CAST) {
		ret = sm_type_parse(sel->term->text, &hint, cc->err, cc->errlen);
		if (ret < 0)
			return ret;
		if (cql_own_type(ps, hint) < 0) {
			sm_type_free(hint);
			return -ENOMEM;
		}
		t = hint;
	}
	if (t == NULL)
		return bad(cc, "Cannot infer type of %s", *name);
	sm_cql_buf_init(&buf);
	ret = sm_cql_term_to_value(sel->term, t, *name, NULL, &buf, &sp, cc->err, cc->errlen);
	if (ret == -EAGAIN)
		ret = bad(cc, "not supported by shardmark: a bind marker in the selection");
	if (ret < 0) {
		sm_cql_buf_release(&buf);
		return ret;
	}
	copy = sm_malloc(sp.len ? sp.len : 1);
	if (copy == NULL ||
	    cql_grow((void **)&ps->owned_str, &ps->owned_str_cap, ps->nowned_str + 1,
		     sizeof(*ps->owned_str)) < 0) {
		sm_free(copy);
		sm_cql_buf_release(&buf);
		return -ENOMEM;
	}
	if (sp.len)
		memcpy(copy, buf.p + sp.off, sp.len);
	ps->owned_str[ps->nowned_str++] = (char *)copy;
	sm_cql_buf_release(&buf);
	n = new_node(ps, SEL_CONST, t, out);
	if (n == NULL)
		return -ENOMEM;
	n->konst = (struct sm_bytes){ copy, sp.len };
	n->knull = sp.state != SM_CQL_CONV_VALUE;
	return 0;
}

/* CAST(x AS type) (castas_fcts.cc): to the same type it is x itself, and named so. */
static int
compile_cast(struct comp *cc, const struct sm_cql_selector *sel, int *out, const char **name)
{
	const struct sm_type *to, *from;
	const char *aname;
	struct sel_node *n;
	int arg, ret;

	ret = compile(cc, &sel->args[0], NULL, &arg, &aname);
	if (ret < 0)
		return ret;
	ret = sm_type_parse(sel->type, &to, cc->err, cc->errlen);
	if (ret < 0)
		return ret;
	if (cql_own_type(cc->ps, to) < 0) {
		sm_type_free(to);
		return -ENOMEM;
	}
	from = cc->ps->sel_nodes[arg].type;
	if (sm_type_equal(from, to)) {
		*out = arg;
		*name = aname;
		return 0;
	}
	if (!cql_cast_allowed(from, to))
		return bad(cc,
			   "org.apache.cassandra.db.marshal.%s cannot be cast to "
			   "org.apache.cassandra.db.marshal.%s",
			   cql_type_class(from->kind), cql_type_class(to->kind));
	n = new_node(cc->ps, SEL_CAST, to, out);
	if (n == NULL)
		return -ENOMEM;
	n->arg = arg;
	*name = cql_own_str(cc->ps, "cast(%s as %s)", aname, sel->type);
	return *name != NULL ? 0 : -ENOMEM;
}

/*
 * c[x] and c[x..y] of a map, set or list (ScyllaDB's subscript and
 * collection slices): the element (a map's value, a set's element when
 * present, a list's element at index x) or, for maps and sets, a
 * collection of those between x and y, both included.
 */
static int
compile_subscript(struct comp *cc, const struct sm_cql_selector *sel, const struct sm_type *t,
		  const char *base_name, int arg, int *out, const char **name)
{
	const struct sm_type *key;
	struct sm_cql_selector k;
	const char *kname;
	struct sel_node *n;
	char tn[256];
	int sub[2] = { -1, -1 }, i, ret;

	/* a list's element by its index, as ScyllaDB (not Cassandra) allows */
	if (t->kind == SM_TYPE_LIST && sel->slice)
		return bad(cc, "Slice selection is only allowed on sets and maps, but %s is a list",
			   base_name);
	if (t->kind != SM_TYPE_MAP && t->kind != SM_TYPE_SET && t->kind != SM_TYPE_LIST) {
		sm_type_name(t, tn, sizeof(tn));
		return bad(cc, "Invalid element selection: %s is of type %s is not a collection",
			   base_name, tn);
	}
	key = t->kind == SM_TYPE_LIST ? sm_type_simple(SM_TYPE_INT) : t->elem;
	for (i = 0; i < 2; i++) {
		struct sm_cql_term *term = i == 0 ? sel->sub : sel->sub_to;

		if (term == NULL)
			continue;
		if (term->kind == SM_CQL_TERM_BIND) {
			/* bound per execution: the driver sends it as the key's type */
			n = new_node(cc->ps, SEL_CONST, key, &sub[i]);
			if (n == NULL)
				return -ENOMEM;
			n->bind = (int)term->bind;
			continue;
		}
		memset(&k, 0, sizeof(k));
		k.kind = SM_CQL_SEL_TERM;
		k.term = term;
		k.src = term->src;
		ret = compile_term(cc, &k, key, &sub[i], &kname);
		if (ret < 0)
			return ret;
	}
	n = new_node(cc->ps, SEL_ELEM,
		     sel->slice ? t : t->kind == SM_TYPE_MAP ? t->val : t->elem, out);
	if (n == NULL)
		return -ENOMEM;
	n->arg = arg;
	n->sub[0] = sub[0];
	n->sub[1] = sub[1];
	n->slice = sel->slice;
	*name = cql_own_str(cc->ps, "%.*s", (int)sel->src.len, cc->ps->text + sel->src.off);
	return *name != NULL ? 0 : -ENOMEM;
}

/* One selector into a node tree; @expect: the type its place wants (a literal needs one). */
static int
compile(struct comp *cc, const struct sm_cql_selector *sel, const struct sm_type *expect, int *out,
	const char **name)
{
	const struct sm_column *c = NULL;
	struct sel_node *n;
	enum agg_kind k;
	unsigned cell;
	int ret;

	switch (sel->kind) {
	case SM_CQL_SEL_COLUMN:
	case SM_CQL_SEL_WRITETIME:
	case SM_CQL_SEL_TTL:
		c = sm_table_column(cc->ps->table, sel->column);
		if (c == NULL)
			return bad(cc, "Undefined column name %s", sel->column);
		if (sel->kind != SM_CQL_SEL_COLUMN)
			return compile_attr(cc, sel, c, out, name);
		ret = cql_add_read_col(cc->ps, c->id, &cell);
		if (ret < 0)
			return ret;
		n = new_node(cc->ps, SEL_CELL, c->type, out);
		if (n == NULL)
			return -ENOMEM;
		n->cell = cell;
		*name = c->name;
		if (sel->nfields > 0)
			return compile_fields(cc, sel, c->type, c->name, *out, out, name);
		if (sel->subscript)
			return compile_subscript(cc, sel, c->type, c->name, *out, out, name);
		return 0;
	case SM_CQL_SEL_POSTFIX: {
		/* x[k] or x.f after another selector: m['1']['a'], m[1].a, t.a[1] */
		const char *iname;
		int inner;

		ret = compile(cc, &sel->args[0], NULL, &inner, &iname);
		if (ret < 0)
			return ret;
		if (sel->nfields > 0)
			return compile_fields(cc, sel, cc->ps->sel_nodes[inner].type, iname, inner,
					      out, name);
		return compile_subscript(cc, sel, cc->ps->sel_nodes[inner].type, iname, inner, out,
					 name);
	}
	case SM_CQL_SEL_COUNT:
		n = new_node(cc->ps, SEL_AGG, sm_type_simple(SM_TYPE_BIGINT), out);
		if (n == NULL)
			return -ENOMEM;
		n->akind = AGG_COUNT_ROWS;
		n->agg = cc->ps->naggs++;
		cc->has_agg = true;
		*name = "count";
		return 0;
	case SM_CQL_SEL_FUNCTION:
		if (sel->ks != NULL && strcmp(sel->ks, "system") != 0)
			return bad(cc, "Unknown function %s.%s called", sel->ks, sel->name);
		if (strcmp(sel->name, "token") == 0)
			return compile_token(cc, sel, out, name);
		if (strcmp(sel->name, "tojson") == 0)
			return compile_tojson(cc, sel, out, name);
		if (agg_kind_of(sel->name, &k) == 0)
			return compile_agg(cc, sel, k, out, name);
		return compile_fn(cc, sel, out, name);
	case SM_CQL_SEL_TERM:
		return compile_term(cc, sel, expect, out, name);
	case SM_CQL_SEL_CAST:
		return compile_cast(cc, sel, out, name);
	}
	return bad(cc, "not supported by shardmark: this selector");
}

/* A selector the row sink's fast path serves: a column, WRITETIME, TTL, token(). */
static bool
plain_selector(const struct sm_cql_selector *sel)
{
	switch (sel->kind) {
	case SM_CQL_SEL_COLUMN:
		return sel->nfields == 0 && !sel->subscript;
	case SM_CQL_SEL_WRITETIME:
	case SM_CQL_SEL_TTL:
		return sel->nfields == 0 && !sel->subscript;
	case SM_CQL_SEL_FUNCTION:
		return sel->ks == NULL && strcmp(sel->name, "token") == 0;
	default:
		return false;
	}
}

/* The fast path's output for a plain selector: the compiled node, as an out_col. */
static int
plain_output(struct cql_prepared *ps, int idx, const char *name)
{
	const struct sel_node *n = &ps->sel_nodes[idx];
	static const enum out_kind kinds[] = { [SEL_CELL] = OUT_CELL,
					       [SEL_WRITETIME] = OUT_WRITETIME,
					       [SEL_TTL] = OUT_TTL,
					       [SEL_TOKEN] = OUT_TOKEN };

	return cql_add_res(ps, name, n->type, kinds[n->op], n->cell);
}

/* A single-column EQ in the WHERE clause on @col (select_statement.cc equality_restricted()). */
static bool
eq_restricted(const struct sm_cql_select *s, const struct sm_column *col)
{
	unsigned i;

	for (i = 0; i < s->nwhere; i++)
		if (s->where[i].kind == SM_CQL_REL_COLUMN && s->where[i].op == SM_CQL_OP_EQ &&
		    strcmp(s->where[i].cols[0], col->name) == 0)
			return true;
	return false;
}

/* GROUP BY: a primary key prefix (EQ-restricted columns may be left out), select_statement.cc prepare_group_by(). */
static int
bind_group_by(struct comp *cc, const struct sm_cql_select *s)
{
	const struct sm_table *t = cc->ps->table;
	unsigned i, expected = 0, nkey = (unsigned)t->npk + t->nck;

	for (i = 0; i < s->ngroup_by; i++) {
		const struct sm_column *c = sm_table_column(t, s->group_by[i]);

		if (c == NULL)
			return bad(cc, "Group by unknown column %s", s->group_by[i]);
		if (c->kind != SM_COL_PARTITION && c->kind != SM_COL_CLUSTERING)
			return bad(cc, "Group by non-primary-key column %s", s->group_by[i]);
		if (expected >= nkey)
			return bad(cc, "Group by column %s is out of order", s->group_by[i]);
		while (c != &t->cols[expected] && eq_restricted(s, &t->cols[expected]))
			if (++expected >= nkey)
				return bad(cc, "Group by column %s is out of order",
					   s->group_by[i]);
		if (c != &t->cols[expected])
			return bad(cc, "Group by column %s is out of order", s->group_by[i]);
		expected++;
	}
	if (expected < t->npk)
		return bad(cc, "GROUP BY must include the entire partition key");
	cc->ps->group_parts = expected;
	return 0;
}

/* SELECT DISTINCT's rules (select_statement.cc validate_distinct_selection()). */
static int
check_distinct(struct comp *cc, const struct sm_cql_select *s)
{
	const struct sm_table *t = cc->ps->table;
	unsigned i, j, restricted = 0;

	if (s->per_partition_limit != NULL)
		return bad(cc, "PER PARTITION LIMIT is not allowed with SELECT DISTINCT queries");
	if (cc->ps->group_parts > t->npk)
		return bad(cc, "Grouping on clustering columns is not allowed for SELECT DISTINCT "
			       "queries");
	for (i = 0; i < s->nwhere; i++) {
		const struct sm_column *c =
			s->where[i].kind == SM_CQL_REL_TOKEN
				? NULL
				: sm_table_column(t, s->where[i].cols[0]);

		if (s->where[i].kind == SM_CQL_REL_TOKEN)
			continue;
		if (c != NULL && c->kind != SM_COL_PARTITION)
			return bad(cc, "SELECT DISTINCT with WHERE clause only supports restriction "
				       "by partition key.");
		if (c != NULL && (s->where[i].op == SM_CQL_OP_EQ || s->where[i].op == SM_CQL_OP_IN))
			restricted++;
	}
	for (i = 0; i < cc->ps->nread; i++) {
		const struct sm_column *c = &t->cols[cc->ps->read_cols[i]];

		if (c->kind != SM_COL_PARTITION && c->kind != SM_COL_STATIC)
			return bad(cc,
				   "SELECT DISTINCT queries must only request partition key columns "
				   "and/or static columns (not %s)",
				   c->name);
	}
	if (restricted >= t->npk)
		return 0; /* not a key range: the partitions are named */
	for (i = 0; i < t->npk; i++) {
		for (j = 0; j < cc->ps->nread && cc->ps->read_cols[j] != t->cols[i].id; j++)
			;
		if (j == cc->ps->nread)
			return bad(cc,
				   "SELECT DISTINCT queries must request all the partition key "
				   "columns (missing %s)",
				   t->cols[i].name);
	}
	return 0;
}

/* Output column @idx (a node) as result column @name: the fast path's, or a computed one's. */
static int
add_output(struct cql_prepared *ps, int idx, const char *name, unsigned *roots_cap)
{
	if (!ps->sel_eval)
		return plain_output(ps, idx, name);
	if (cql_grow((void **)&ps->sel_roots, roots_cap, ps->nres + 1, sizeof(*ps->sel_roots)) < 0)
		return -ENOMEM;
	ps->sel_roots[ps->nres] = (unsigned)idx;
	return cql_add_res(ps, name, ps->sel_nodes[idx].type, OUT_CELL, 0);
}

/*
 * SELECT JSON (selection.cc's JSON result): the outputs become the keys of
 * one text column, [json]; a key is the output's name, in double quotes
 * when it is not all lowercase letters, digits and '_' (as CQL quotes it).
 */
static int
json_output(struct cql_prepared *ps)
{
	unsigned i;

	ps->json_keys = sm_calloc(ps->nres ? ps->nres : 1, sizeof(*ps->json_keys));
	if (ps->json_keys == NULL ||
	    cql_grow((void **)&ps->owned_str, &ps->owned_str_cap, ps->nowned_str + 1,
		     sizeof(*ps->owned_str)) < 0) {
		sm_free(ps->json_keys);
		ps->json_keys = NULL;
		return -ENOMEM;
	}
	ps->owned_str[ps->nowned_str++] = (char *)ps->json_keys;
	for (i = 0; i < ps->nres; i++) {
		const char *name = (const char *)ps->res_specs[i].name.p;
		size_t n = ps->res_specs[i].name.len, j;
		bool plain = n > 0 && name[0] >= 'a' && name[0] <= 'z';

		for (j = 0; j < n && plain; j++)
			plain = (name[j] >= 'a' && name[j] <= 'z') ||
				(name[j] >= '0' && name[j] <= '9') || name[j] == '_';
		ps->json_keys[i] = plain ? cql_own_str(ps, "%.*s", (int)n, name)
					 : cql_own_str(ps, "\"%.*s\"", (int)n, name);
		if (ps->json_keys[i] == NULL)
			return -ENOMEM;
	}
	ps->json_n = ps->nres;
	ps->nres = 0;
	return cql_add_res(ps, "[json]", sm_type_simple(SM_TYPE_TEXT), OUT_CELL, 0);
}

int
cql_bind_select(struct cql_prepared *ps, char *err, size_t errlen, int32_t *code)
{
	const struct sm_cql_select *s = &ps->stmt->select;
	const struct sm_table *t = ps->table;
	struct comp cc = { ps, err, errlen, false };
	const struct sm_column *c;
	struct sel_node *n;
	const char *name;
	unsigned i, cell, roots_cap = 0;
	bool plain = s->ngroup_by == 0;
	int ret = 0, idx;

	*code = SM_CQL_ERR_INVALID;
	for (i = 0; i < s->nsels && plain; i++)
		plain = plain_selector(&s->sels[i]);
	ps->sel_eval = !plain || s->json;
	for (i = 0; s->star && i < t->ncols; i++) {
		ret = cql_add_read_col(ps, t->cols[i].id, &cell);
		if (ret < 0)
			return ret;
		n = new_node(ps, SEL_CELL, t->cols[i].type, &idx);
		if (n == NULL)
			return -ENOMEM;
		n->cell = cell;
		ret = add_output(ps, idx, t->cols[i].name, &roots_cap);
		if (ret < 0)
			return ret;
	}
	for (i = 0; i < s->nsels; i++) {
		ret = compile(&cc, &s->sels[i], NULL, &idx, &name);
		if (ret == 0)
			ret = add_output(ps, idx, s->sels[i].alias ? s->sels[i].alias : name,
					 &roots_cap);
		if (ret < 0)
			return ret;
	}
	if (s->json) {
		ret = json_output(ps);
		if (ret < 0)
			return ret;
	}
	ps->grouped = cc.has_agg || s->ngroup_by > 0;
	if (s->ngroup_by > 0) {
		ret = bind_group_by(&cc, s);
		if (ret < 0)
			return ret;
	}
	if (cc.has_agg && s->per_partition_limit != NULL && s->ngroup_by == 0)
		return bad(&cc, "PER PARTITION LIMIT is not allowed with aggregate queries.");
	if (s->distinct) {
		ret = check_distinct(&cc, s);
		if (ret < 0)
			return ret;
		ps->distinct = true;
	}
	ret = cql_bind_index(ps);
	if (ret < 0)
		return ret;
	/* Columns that ALLOW FILTERING relations test are read too. */
	for (i = 0; i < s->nwhere; i++) {
		const struct sm_cql_relation *r = &s->where[i];

		if (r->kind != SM_CQL_REL_COLUMN && r->kind != SM_CQL_REL_ELEM)
			continue;
		c = sm_table_column(t, r->cols[0]);
		if (c == NULL) {
			snprintf(err, errlen, "Undefined column name %s", r->cols[0]);
			return -EINVAL;
		}
		if (c->kind == SM_COL_REGULAR || c->kind == SM_COL_STATIC) {
			if (!s->allow_filtering && (int)i != ps->ix_rel) {
				snprintf(
					err, errlen,
					"Cannot execute this query as it might involve data "
					"filtering and thus may have unpredictable performance. If "
					"you want to execute this query despite the performance "
					"unpredictability, use ALLOW FILTERING");
				return -EINVAL;
			}
			ret = cql_add_read_col(ps, c->id, &cell);
			if (ret < 0)
				return ret;
		}
	}
	return 0;
}

/* ---- evaluation ---- */

/* A value being computed: @v, or null; in op->ev at @off when @in_ev (it may move). */
struct ev {
	struct sm_bytes v;
	bool null;
	bool in_ev;
	size_t off;
};

static struct sm_bytes
ev_bytes(const struct cql_op *op, const struct ev *e)
{
	if (e->in_ev)
		return (struct sm_bytes){ op->ev.p + e->off, e->v.len };
	return e->v;
}

static int
sel_fail(struct cql_op *op, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Remember why the selection fails the op (the read stops; after_read() answers). */
static int
sel_fail(struct cql_op *op, const char *fmt, ...)
{
	va_list ap;

	if (op->first_err == 0) {
		va_start(ap, fmt);
		vsnprintf(op->errmsg, sizeof(op->errmsg), fmt, ap);
		va_end(ap);
		op->first_err = -EINVAL;
		op->errcode = SM_CQL_ERR_INVALID;
	}
	return -ECANCELED;
}

static int
ev_room(struct cql_op *op, struct ev *e, size_t n, uint8_t **p)
{
	e->off = op->ev.len;
	*p = sm_cql_buf_append(&op->ev, n);
	if (*p == NULL)
		return sel_fail(op, "out of memory evaluating the selection");
	e->in_ev = true;
	e->null = false;
	e->v.len = (uint32_t)n;
	return 0;
}

static void
be_put(uint8_t *p, uint64_t v, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
}

static int64_t
be_signed(struct sm_bytes a)
{
	uint64_t v = (a.len && (a.p[0] & 0x80)) ? UINT64_MAX : 0;
	uint32_t i;

	for (i = 0; i < a.len; i++)
		v = v << 8 | a.p[i];
	return (int64_t)v;
}

static int
agg_result(struct cql_op *op, const struct sel_node *n, struct ev *e);

/* The next [int32 length][bytes] of a serialized collection at *@at; false when malformed. */
static bool
coll_item(struct sm_bytes v, uint32_t *at, struct sm_bytes *item)
{
	uint32_t len;

	if (v.len - *at < 4)
		return false;
	len = (uint32_t)v.p[*at] << 24 | (uint32_t)v.p[*at + 1] << 16 |
	      (uint32_t)v.p[*at + 2] << 8 | v.p[*at + 3];
	if (len > v.len - *at - 4)
		return false;
	item->p = v.p + *at + 4;
	item->len = len;
	*at += 4 + len;
	return true;
}

/* Whether @key lies between the slice's ends (either open), both included. */
static bool
in_slice(const struct sel_node *const k[2], const struct sm_bytes kv[2], const struct sm_type *kt,
	 struct sm_bytes key)
{
	return (k[0] == NULL || sm_value_compare(kt, key, kv[0]) >= 0) &&
	       (k[1] == NULL || sm_value_compare(kt, key, kv[1]) <= 0);
}

/* SEL_ELEM over the collection @a (compile_subscript()) */
static int
eval_elem(struct cql_op *op, const struct sel_node *n, const struct ev *a, struct ev *e)
{
	const struct sm_type *t = op->ps->sel_nodes[n->arg].type;
	const struct sel_node *k[2] = { NULL, NULL };
	struct sm_bytes v = ev_bytes(op, a), key, val = { NULL, 0 }, kv[2];
	uint32_t count, i, at, kept = 0, start = 0, end = 0;
	bool map = t->kind == SM_TYPE_MAP;
	uint8_t *p;
	int j, ret;

	for (j = 0; j < 2; j++) {
		if (n->sub[j] < 0)
			continue;
		k[j] = &op->ps->sel_nodes[n->sub[j]];
		kv[j] = k[j]->konst;
		if (k[j]->knull)
			return 0;
		if (k[j]->bind >= 0) {
			const struct sm_cql_value *b = (unsigned)k[j]->bind < op->vctx.nbinds
							       ? &op->vctx.binds[k[j]->bind]
							       : NULL;

			if (b == NULL || b->state != SM_CQL_VALUE_SET)
				return 0; /* a null (or unset) key selects nothing */
			if (sm_value_validate(k[j]->type, b->v, NULL, 0) != 0)
				return sel_fail(op, "Invalid bound value for a collection subscript");
			kv[j] = b->v;
		}
	}
	if (a->null || v.len < 4)
		return 0;
	count = (uint32_t)v.p[0] << 24 | (uint32_t)v.p[1] << 16 | (uint32_t)v.p[2] << 8 | v.p[3];
	/* the first pass finds the element, or the slice's extent (elements are sorted) */
	for (i = 0, at = 4; i < count; i++) {
		uint32_t from = at;

		if (!coll_item(v, &at, &key) || (map && !coll_item(v, &at, &val)))
			return 0;
		if (!n->slice) {
			if (t->kind == SM_TYPE_LIST ? be_signed(kv[0]) != (int64_t)i
						    : sm_value_compare(t->elem, key, kv[0]) != 0)
				continue;
			*e = *a;
			e->v = map ? val : key;
			if (a->in_ev)
				e->off = a->off + (size_t)(e->v.p - v.p);
			return 0;
		}
		if (!in_slice(k, kv, t->elem, key))
			continue;
		if (kept++ == 0)
			start = from;
		end = at;
	}
	if (n->slice && kept > 0) {
		ret = ev_room(op, e, 4 + (size_t)(end - start), &p);
		if (ret < 0)
			return ret;
		v = ev_bytes(op, a); /* the buffer may have moved */
		be_put(p, kept, 4);
		memcpy(p + 4, v.p + start, end - start);
	}
	return 0;
}

static int
eval(struct cql_op *op, const struct sm_row_view *r, int idx, struct ev *e)
{
	const struct sel_node *n = &op->ps->sel_nodes[idx];
	const struct sm_cell_view *cv;
	struct ev a = { { NULL, 0 }, true, false, 0 };
	uint8_t res[CQL_FN_RESULT_MAX], *p;
	struct sm_bytes v;
	char err[256];
	uint32_t len;
	unsigned i;
	int ret;

	memset(e, 0, sizeof(*e));
	e->null = true;
	if (n->op == SEL_AGG)
		return agg_result(op, n, e);
	if (n->arg >= 0 && (ret = eval(op, r, n->arg, &a)) < 0)
		return ret;
	switch (n->op) {
	case SEL_CELL:
		cv = &r->cells[n->cell];
		e->null = !cv->present;
		e->v = cv->value;
		return 0;
	case SEL_WRITETIME:
	case SEL_TTL:
		cv = &r->cells[n->cell];
		if (!cv->present || (n->op == SEL_TTL && cv->ttl <= 0))
			return 0;
		ret = ev_room(op, e, n->op == SEL_TTL ? 4 : 8, &p);
		if (ret == 0)
			be_put(p, n->op == SEL_TTL ? (uint64_t)(uint32_t)cv->ttl : (uint64_t)cv->writetime,
			       n->op == SEL_TTL ? 4 : 8);
		return ret;
	case SEL_TOKEN:
		ret = ev_room(op, e, 8, &p);
		if (ret == 0)
			be_put(p, (uint64_t)r->token, 8);
		return ret;
	case SEL_CONST:
		e->null = n->knull;
		e->v = n->konst;
		if (e->v.len == 0)
			e->v.p = SM_CQL_EMPTY.p;
		return 0;
	case SEL_ELEM:
		return eval_elem(op, n, &a, e);
	case SEL_TOJSON: {
		struct sm_cql_buf j;

		sm_cql_buf_init(&j);
		cql_json_value(&j, op->ps->sel_nodes[n->arg].type, ev_bytes(op, &a), a.null);
		ret = j.err ? sel_fail(op, "out of memory in toJson()") : ev_room(op, e, j.len, &p);
		if (ret == 0 && j.len)
			memcpy(p, j.p, j.len);
		sm_cql_buf_release(&j);
		return ret;
	}
	case SEL_FIELD:
		if (a.null)
			return 0;
		v = ev_bytes(op, &a);
		for (i = 1; i <= n->path[0] && v.p != NULL; i++)
			v = udt_field(v, n->path[i]);
		*e = a;
		if (v.p == NULL)
			e->null = true;
		else if (a.in_ev)
			e->off = a.off + (size_t)(v.p - (op->ev.p + a.off));
		e->v = v;
		return 0;
	case SEL_FN:
		if (n->arg >= 0 && a.null)
			return 0; /* null in, null out */
		v = n->arg >= 0 ? ev_bytes(op, &a) : (struct sm_bytes){ NULL, 0 };
		ret = cql_fn_eval(&n->fn, n->ak, v, &cql_shard.gen, op->now_us, n->fname, res, &len,
				  err, sizeof(err));
		if (ret < 0)
			return sel_fail(op, "%s", err);
		if (n->fn.id == CQL_FN_AS_BLOB || n->fn.id == CQL_FN_BLOB_AS) {
			*e = a;
			return 0;
		}
		ret = ev_room(op, e, len, &p);
		if (ret == 0 && len)
			memcpy(p, res, len);
		return ret;
	case SEL_CAST:
		if (a.null)
			return 0;
		v = ev_bytes(op, &a);
		e->off = op->ev.len;
		if (a.in_ev) {
			/* the argument moves with the buffer: copy it out first */
			uint8_t small[64], *copy = v.len <= sizeof(small) ? small : sm_malloc(v.len);

			if (copy == NULL)
				return sel_fail(op, "out of memory evaluating the selection");
			memcpy(copy, v.p, v.len);
			ret = cql_cast(op->ps->sel_nodes[n->arg].type, n->type,
				       (struct sm_bytes){ copy, v.len }, &op->ev, err, sizeof(err));
			if (copy != small)
				sm_free(copy);
		} else {
			ret = cql_cast(op->ps->sel_nodes[n->arg].type, n->type, v, &op->ev, err,
				       sizeof(err));
		}
		if (ret < 0)
			return ret == -ENOMEM ? sel_fail(op, "out of memory") : sel_fail(op, "%s", err);
		e->in_ev = true;
		e->null = false;
		e->v.len = (uint32_t)(op->ev.len - e->off);
		return 0;
	default:
		return sel_fail(op, "internal error: selection node %d", (int)n->op);
	}
}

/* One result row: every output evaluated on @r (a row read, or a group's first). */
/* The JSON object of a SELECT JSON row: one text cell (json_output()); not a hot path. */
static int
emit_json_row(struct cql_op *op, const struct sm_row_view *r)
{
	const struct cql_prepared *ps = op->ps;
	struct sm_cql_buf j;
	struct ev e;
	unsigned i;
	int ret = 0;

	sm_cql_buf_init(&j);
	cql_json_raw(&j, "{", 1);
	for (i = 0; i < ps->json_n && j.err == 0; i++) {
		sm_cql_buf_reset(&op->ev);
		ret = eval(op, r, (int)ps->sel_roots[i], &e);
		if (ret < 0)
			goto out;
		if (i > 0)
			cql_json_raw(&j, ", ", 2);
		cql_json_string(&j, ps->json_keys[i], strlen(ps->json_keys[i]));
		cql_json_raw(&j, ": ", 2);
		cql_json_value(&j, ps->sel_nodes[ps->sel_roots[i]].type, ev_bytes(op, &e), e.null);
	}
	cql_json_raw(&j, "}", 1);
	ret = j.err;
	if (ret == 0) {
		sm_cql_rows_cell(&op->rw, (struct sm_bytes){ j.p, (uint32_t)j.len });
		op->page_rows++;
		ret = op->rw.b->err;
	}
out:
	sm_cql_buf_release(&j);
	return ret;
}

static int
emit_row(struct cql_op *op, const struct sm_row_view *r)
{
	const struct cql_prepared *ps = op->ps;
	struct ev e;
	unsigned i;
	int ret;

	sm_cql_buf_reset(&op->ev);
	if (ps->json_n > 0)
		return emit_json_row(op, r);
	for (i = 0; i < ps->nres; i++) {
		const struct sel_node *n = &ps->sel_nodes[ps->sel_roots[i]];

		/* a column as it is stored, the common selection: no evaluation */
		if (SM_LIKELY(n->op == SEL_CELL && n->arg < 0)) {
			const struct sm_cell_view *cv = &r->cells[n->cell];

			sm_cql_rows_cell(&op->rw, cv->present ? cv->value : (struct sm_bytes){ 0 });
			continue;
		}
		ret = eval(op, r, (int)ps->sel_roots[i], &e);
		if (ret < 0)
			return ret;
		sm_cql_rows_cell(&op->rw, e.null ? (struct sm_bytes){ 0 } : ev_bytes(op, &e));
	}
	op->page_rows++;
	return op->rw.b->err;
}

/* ---- big integers: a varint's magnitude in 32-bit limbs, for varint and decimal sums ---- */

struct big {
	bool neg;
	uint32_t *d; /* little-endian limbs */
	uint32_t n, cap;
};

static void
big_free(struct big *b)
{
	sm_free(b->d);
	b->d = NULL;
	b->n = b->cap = 0;
}

static int
big_room(struct big *b, uint32_t n)
{
	uint32_t *d;

	if (n <= b->cap)
		return 0;
	d = sm_realloc(b->d, n * sizeof(*d));
	if (d == NULL)
		return -ENOMEM;
	memset(d + b->cap, 0, (n - b->cap) * sizeof(*d));
	b->d = d;
	b->cap = n;
	return 0;
}

static void
big_trim(struct big *b)
{
	while (b->n > 0 && b->d[b->n - 1] == 0)
		b->n--;
	if (b->n == 0)
		b->neg = false;
}

/* |v| and its sign from a big-endian two's complement varint. */
static int
big_from(struct big *b, struct sm_bytes v)
{
	unsigned carry = 1, x;
	uint32_t i;

	b->neg = v.len > 0 && (v.p[0] & 0x80);
	b->n = v.len / 4 + 1;
	if (big_room(b, b->n) < 0)
		return -ENOMEM;
	memset(b->d, 0, b->n * sizeof(*b->d));
	for (i = 0; i < v.len; i++) {
		x = v.p[v.len - 1 - i];
		if (b->neg) {
			x = (~x & 0xff) + carry;
			carry = x >> 8;
			x &= 0xff;
		}
		b->d[i / 4] |= (uint32_t)x << (8 * (i % 4));
	}
	big_trim(b);
	return 0;
}

/* The minimal varint of @b, appended to @out. */
static int
big_to(const struct big *b, struct sm_cql_buf *out)
{
	uint32_t nb = b->n * 4 + 1, i, k;
	unsigned carry = 1, x;
	uint8_t *p = sm_cql_buf_append(out, nb);

	if (p == NULL)
		return -ENOMEM;
	for (i = 0; i < nb; i++) {
		x = i / 4 < b->n ? (b->d[i / 4] >> (8 * (i % 4))) & 0xff : 0;
		if (b->neg) {
			x = (~x & 0xff) + carry;
			carry = x >> 8;
			x &= 0xff;
		}
		p[nb - 1 - i] = (uint8_t)x;
	}
	for (k = 0; k + 1 < nb && ((p[k] == 0 && !(p[k + 1] & 0x80)) ||
				   (p[k] == 0xff && (p[k + 1] & 0x80)));
	     k++)
		;
	memmove(p, p + k, nb - k);
	out->len -= k;
	return 0;
}

static int
big_mul_small(struct big *b, uint32_t m)
{
	uint64_t carry = 0, x;
	uint32_t i;

	for (i = 0; i < b->n; i++) {
		x = (uint64_t)b->d[i] * m + carry;
		b->d[i] = (uint32_t)x;
		carry = x >> 32;
	}
	if (carry) {
		if (big_room(b, b->n + 1) < 0)
			return -ENOMEM;
		b->d[b->n++] = (uint32_t)carry;
	}
	return 0;
}

/* |a| + |b| or |a| - |b| into @a, by sign: a += b. */
static int
big_add(struct big *a, const struct big *b)
{
	uint32_t n = SM_MAX(a->n, b->n) + 1, i;
	int64_t c = 0, x;
	bool sub = a->neg != b->neg;

	if (big_room(a, n) < 0)
		return -ENOMEM;
	if (sub) {
		/* subtract the smaller magnitude from the larger */
		int cmp = 0;

		if (a->n != b->n)
			cmp = a->n > b->n ? 1 : -1;
		for (i = a->n; cmp == 0 && i-- > 0;)
			if (a->d[i] != b->d[i])
				cmp = a->d[i] > b->d[i] ? 1 : -1;
		for (i = 0; i < n - 1; i++) {
			int64_t av = i < a->n ? a->d[i] : 0, bv = i < b->n ? b->d[i] : 0;

			x = (cmp >= 0 ? av - bv : bv - av) + c;
			c = x < 0 ? -1 : 0;
			a->d[i] = (uint32_t)(x + (c ? ((int64_t)1 << 32) : 0));
		}
		if (cmp < 0)
			a->neg = b->neg;
		a->n = n - 1;
	} else {
		for (i = 0; i < n; i++) {
			x = (int64_t)(i < a->n ? a->d[i] : 0) + (i < b->n ? b->d[i] : 0) + c;
			a->d[i] = (uint32_t)x;
			c = x >> 32;
		}
		a->n = n;
	}
	big_trim(a);
	return 0;
}

/* @b / @m (truncated toward zero) into @b; the remainder's magnitude into *@rem. */
static void
big_div_small(struct big *b, uint64_t m, uint64_t *rem)
{
	unsigned __int128 r = 0, x;
	uint32_t i;

	for (i = b->n; i-- > 0;) {
		x = r << 32 | b->d[i];
		b->d[i] = (uint32_t)(x / m);
		r = x % m;
	}
	*rem = (uint64_t)r;
	big_trim(b);
}

/* ---- aggregates ---- */

static uint32_t
be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Keep @v (of @len) as the state's value, copied. */
static int
agg_keep(struct agg_state *s, const uint8_t *v, uint32_t len)
{
	uint8_t *p;

	if (len > s->cap) {
		p = sm_realloc(s->val, len);
		if (p == NULL)
			return -ENOMEM;
		s->val = p;
		s->cap = len;
	}
	if (len)
		memcpy(s->val, v, len);
	s->len = len;
	s->has = true;
	return 0;
}

/* sum += v for a varint, or a decimal (scale, unscaled) aligned to the larger scale. */
static int
agg_add_big(struct cql_op *op, struct agg_state *s, enum sm_type_kind k, struct sm_bytes v)
{
	struct big a = { 0 }, b = { 0 };
	struct sm_cql_buf out;
	int32_t vs = 0;
	int64_t diff;
	int ret = -ENOMEM;

	if (v.len == 0)
		return 0;
	if (k == SM_TYPE_DECIMAL) {
		if (v.len < 5)
			return 0;
		vs = (int32_t)be32(v.p);
		v.p += 4;
		v.len -= 4;
	}
	if (big_from(&b, v) < 0)
		goto out;
	if (s->has && big_from(&a, (struct sm_bytes){ s->val, s->len }) < 0)
		goto out;
	if (!s->has)
		s->scale = vs;
	/* the smaller scale is multiplied up to the larger */
	diff = (int64_t)vs - s->scale;
	if (diff > (int64_t)SM_CQL_MAX_NUMBER_DIGITS || diff < -(int64_t)SM_CQL_MAX_NUMBER_DIGITS) {
		ret = sel_fail(op, "not supported by shardmark: a sum of decimals whose scales differ "
				   "by more than %u", SM_CQL_MAX_NUMBER_DIGITS);
		goto out;
	}
	for (; diff > 0; diff--)
		if (big_mul_small(&a, 10) < 0)
			goto out;
	for (; diff < 0; diff++)
		if (big_mul_small(&b, 10) < 0)
			goto out;
	if (vs > s->scale)
		s->scale = vs;
	if (big_add(&a, &b) < 0)
		goto out;
	sm_cql_buf_init(&out);
	ret = big_to(&a, &out);
	if (ret == 0)
		ret = agg_keep(s, out.p, (uint32_t)out.len);
	sm_cql_buf_release(&out);
out:
	big_free(&a);
	big_free(&b);
	return ret == -ENOMEM ? sel_fail(op, "out of memory in an aggregate") : ret;
}

static double
as_double(enum sm_type_kind k, struct sm_bytes v)
{
	uint32_t u32;
	uint64_t u64;
	float f;
	double d;

	if (k == SM_TYPE_FLOAT) {
		u32 = be32(v.p);
		memcpy(&f, &u32, 4);
		return f;
	}
	u64 = (uint64_t)be32(v.p) << 32 | be32(v.p + 4);
	memcpy(&d, &u64, 8);
	return d;
}

/* Fold one row's argument value into aggregate @n's state. */
static int
agg_step(struct cql_op *op, const struct sel_node *n, const struct sm_row_view *r)
{
	struct agg_state *s = &op->aggs[n->agg];
	const struct sm_type *at;
	struct sm_bytes v;
	struct ev a;
	int ret;

	if (n->akind == AGG_COUNT_ROWS) {
		s->count++;
		return 0;
	}
	sm_cql_buf_reset(&op->ev);
	ret = eval(op, r, n->arg, &a);
	if (ret < 0)
		return ret;
	if (a.null)
		return 0;
	v = ev_bytes(op, &a);
	at = op->ps->sel_nodes[n->arg].type;
	switch (n->akind) {
	case AGG_COUNT:
		s->count++;
		return 0;
	case AGG_MIN:
	case AGG_MAX:
		if (s->has) {
			int c = sm_value_compare(at, v, (struct sm_bytes){ s->val, s->len });

			if (n->akind == AGG_MIN ? c >= 0 : c <= 0)
				return 0;
		}
		return agg_keep(s, v.p, v.len) < 0 ? sel_fail(op, "out of memory in an aggregate")
						   : 0;
	default:
		break;
	}
	/* sum and avg; an empty value counts as nothing */
	if (v.len == 0)
		return 0;
	s->count++;
	switch (at->kind) {
	case SM_TYPE_FLOAT:
		s->fsum += (float)as_double(SM_TYPE_FLOAT, v);
		return 0;
	case SM_TYPE_DOUBLE:
		s->dsum += as_double(SM_TYPE_DOUBLE, v);
		return 0;
	case SM_TYPE_VARINT:
	case SM_TYPE_DECIMAL:
		return agg_add_big(op, s, at->kind, v);
	default:
		/* integers in 128 bits: 2^64 additions of int64 cannot overflow it */
		s->isum += be_signed(v);
		return 0;
	}
}

/* An integer result of @k, or the overflow error (aggregate_fcts.cc narrow()). */
static int
put_int_result(struct cql_op *op, enum sm_type_kind k, __int128 v, struct ev *e)
{
	unsigned n = sm_type_fixed_len(sm_type_simple(k));
	__int128 lo = -((__int128)1 << (8 * n - 1)), hi = ((__int128)1 << (8 * n - 1)) - 1;
	uint8_t *p;
	int ret;

	if (v < lo || v > hi)
		return sel_fail(op, "Sum overflow. Values should be casted to a wider type.");
	ret = ev_room(op, e, n, &p);
	if (ret == 0)
		be_put(p, (uint64_t)v, n);
	return ret;
}

/* The average of a varint or decimal sum over @count values (decimals round half even). */
static int
big_avg(struct cql_op *op, const struct agg_state *s, enum sm_type_kind k, struct ev *e)
{
	struct big b = { 0 };
	uint64_t rem;
	size_t start;
	int ret = -ENOMEM;
	uint8_t *p;

	if (big_from(&b, (struct sm_bytes){ s->val, s->len }) < 0)
		goto out;
	big_div_small(&b, (uint64_t)s->count, &rem);
	if (k == SM_TYPE_DECIMAL && (rem * 2 > (uint64_t)s->count ||
				     (rem * 2 == (uint64_t)s->count && b.n > 0 && (b.d[0] & 1)))) {
		struct big one = { b.neg, NULL, 0, 0 };
		uint32_t d1 = 1;

		one.d = &d1;
		one.n = 1;
		if (b.n == 0)
			b.neg = (s->val[0] & 0x80) != 0;
		one.neg = b.neg;
		if (big_add(&b, &one) < 0)
			goto out;
	}
	start = op->ev.len;
	if (k == SM_TYPE_DECIMAL) {
		p = sm_cql_buf_append(&op->ev, 4);
		if (p == NULL)
			goto out;
		be_put(p, (uint32_t)s->scale, 4);
	}
	ret = big_to(&b, &op->ev);
	if (ret == 0) {
		e->in_ev = true;
		e->null = false;
		e->off = start;
		e->v.len = (uint32_t)(op->ev.len - start);
	}
out:
	big_free(&b);
	return ret == -ENOMEM ? sel_fail(op, "out of memory in an aggregate") : ret;
}

/* A group's aggregate value: count, min and max, sum (0 over nothing), avg (0 over nothing). */
static int
agg_result(struct cql_op *op, const struct sel_node *n, struct ev *e)
{
	const struct agg_state *s = &op->aggs[n->agg];
	enum sm_type_kind k = n->type->kind;
	size_t start;
	uint8_t *p;
	int ret;

	switch (n->akind) {
	case AGG_COUNT_ROWS:
	case AGG_COUNT:
		ret = ev_room(op, e, 8, &p);
		if (ret == 0)
			be_put(p, (uint64_t)s->count, 8);
		return ret;
	case AGG_MIN:
	case AGG_MAX:
		if (!s->has)
			return 0;
		e->null = false;
		e->v = (struct sm_bytes){ s->val, s->len };
		if (s->len == 0)
			e->v.p = SM_CQL_EMPTY.p;
		return 0;
	default:
		break;
	}
	switch (k) {
	case SM_TYPE_FLOAT: {
		float f = n->akind == AGG_AVG ? (s->count ? s->fsum / (float)s->count : 0) : s->fsum;
		uint32_t u;

		memcpy(&u, &f, 4);
		ret = ev_room(op, e, 4, &p);
		if (ret == 0)
			be_put(p, u, 4);
		return ret;
	}
	case SM_TYPE_DOUBLE: {
		double d = n->akind == AGG_AVG ? (s->count ? s->dsum / (double)s->count : 0) : s->dsum;
		uint64_t u;

		memcpy(&u, &d, 8);
		ret = ev_room(op, e, 8, &p);
		if (ret == 0)
			be_put(p, u, 8);
		return ret;
	}
	case SM_TYPE_VARINT:
	case SM_TYPE_DECIMAL:
		if (!s->has || s->count == 0) {
			/* zero: 0, or 0 with scale 0 */
			start = op->ev.len;
			ret = ev_room(op, e, k == SM_TYPE_DECIMAL ? 5 : 1, &p);
			if (ret == 0)
				memset(p, 0, k == SM_TYPE_DECIMAL ? 5 : 1);
			(void)start;
			return ret;
		}
		if (n->akind == AGG_AVG)
			return big_avg(op, s, k, e);
		start = op->ev.len;
		p = sm_cql_buf_append(&op->ev, s->len + (k == SM_TYPE_DECIMAL ? 4 : 0));
		if (p == NULL)
			return sel_fail(op, "out of memory in an aggregate");
		if (k == SM_TYPE_DECIMAL) {
			be_put(p, (uint32_t)s->scale, 4);
			p += 4;
		}
		memcpy(p, s->val, s->len);
		e->in_ev = true;
		e->null = false;
		e->off = start;
		e->v.len = (uint32_t)(op->ev.len - start);
		return 0;
	default:
		/* integers: the average truncates, as multiprecision_int division does */
		return put_int_result(op, k,
				      n->akind == AGG_AVG ? (s->count ? s->isum / s->count : 0)
							  : s->isum,
				      e);
	}
}

/* ---- groups ---- */

static int
grow_aggs(struct cql_op *op)
{
	unsigned i, old = op->aggs_cap;

	if (cql_grow((void **)&op->aggs, &op->aggs_cap, op->ps->naggs + 1, sizeof(*op->aggs)) < 0)
		return -ENOMEM;
	/* new slots hold no buffer yet (realloc leaves them as they were: garbage) */
	if (op->aggs_cap > old)
		memset(&op->aggs[old], 0, (op->aggs_cap - old) * sizeof(*op->aggs));
	for (i = 0; i < op->ps->naggs; i++) {
		uint8_t *val = op->aggs[i].val;
		uint32_t cap = op->aggs[i].cap;

		memset(&op->aggs[i], 0, sizeof(op->aggs[i]));
		op->aggs[i].val = val; /* the buffers are reused */
		op->aggs[i].cap = cap;
	}
	return 0;
}

/* Copy @b into op->snap; its offset in *@off. */
static int
snap_put(struct cql_op *op, struct sm_bytes b, size_t *off)
{
	uint8_t *p;

	*off = op->snap.len;
	if (b.len == 0)
		return 0;
	p = sm_cql_buf_append(&op->snap, b.len);
	if (p == NULL)
		return -ENOMEM;
	memcpy(p, b.p, b.len);
	return 0;
}

/*
 * Keep a copy of @r as the group's first row (the non-aggregated selectors
 * take their values from it, as in ScyllaDB); @r NULL: a row of nulls.
 */
static int
snapshot(struct cql_op *op, const struct sm_row_view *r)
{
	const struct cql_prepared *ps = op->ps;
	size_t offs[2 * SM_MAX_KEY_PARTS], *coff = NULL;
	unsigned i;
	int ret = 0;

	sm_cql_buf_reset(&op->snap);
	if (cql_grow((void **)&op->snap_cells, &op->snap_cap, ps->nread + 1,
		     sizeof(*op->snap_cells)) < 0)
		return -ENOMEM;
	memset(op->snap_cells, 0, (ps->nread + 1) * sizeof(*op->snap_cells));
	op->snap_pk.n = op->snap_ck.n = 0;
	op->snap_token = 0;
	if (r == NULL)
		return 0;
	coff = sm_calloc(ps->nread + 1, sizeof(*coff));
	if (coff == NULL)
		return -ENOMEM;
	op->snap_token = r->token;
	op->snap_pk.n = r->pk->n;
	op->snap_ck.n = r->ck->n;
	for (i = 0; ret == 0 && i < r->pk->n; i++)
		ret = snap_put(op, r->pk->part[i], &offs[i]);
	for (i = 0; ret == 0 && i < r->ck->n; i++)
		ret = snap_put(op, r->ck->part[i], &offs[SM_MAX_KEY_PARTS + i]);
	for (i = 0; ret == 0 && i < ps->nread; i++) {
		op->snap_cells[i] = r->cells[i];
		if (r->cells[i].present)
			ret = snap_put(op, r->cells[i].value, &coff[i]);
	}
	/* the pointers once the buffer stopped growing */
	for (i = 0; ret == 0 && i < r->pk->n; i++)
		op->snap_pk.part[i] = (struct sm_bytes){ op->snap.p + offs[i], r->pk->part[i].len };
	for (i = 0; ret == 0 && i < r->ck->n; i++)
		op->snap_ck.part[i] =
			(struct sm_bytes){ op->snap.p + offs[SM_MAX_KEY_PARTS + i], r->ck->part[i].len };
	for (i = 0; ret == 0 && i < ps->nread; i++)
		if (op->snap_cells[i].present)
			op->snap_cells[i].value.p = op->snap.p + coff[i];
	sm_free(coff);
	return ret;
}

/* True when @r is in the open group: the same first group_parts key components. */
static bool
same_group(const struct cql_op *op, const struct sm_row_view *r)
{
	const struct sm_table *t = op->ps->table;
	unsigned i;

	for (i = 0; i < op->ps->group_parts; i++) {
		const struct sm_bytes *a, *b;

		if (i < t->npk) {
			a = &r->pk->part[i];
			b = &op->snap_pk.part[i];
		} else {
			if (r->ck->n <= i - t->npk || op->snap_ck.n <= i - t->npk)
				return r->ck->n == op->snap_ck.n;
			a = &r->ck->part[i - t->npk];
			b = &op->snap_ck.part[i - t->npk];
		}
		if (a->len != b->len || (a->len && memcmp(a->p, b->p, a->len) != 0))
			return false;
	}
	return true;
}

/* The open group's row (within LIMIT for GROUP BY), then no group is open. */
static int
close_group(struct cql_op *op)
{
	struct sm_row_view rv;
	int ret = 0;

	rv.table = op->ps->table;
	rv.token = op->snap_token;
	rv.pk = &op->snap_pk;
	rv.ck = &op->snap_ck;
	rv.cells = op->snap_cells;
	rv.ncells = op->ps->nread;
	op->group_open = false;
	if (op->ps->group_parts > 0) {
		if (op->limit_left == 0 || op->group_skip)
			return 0;
		if (op->limit_left != UINT32_MAX)
			op->limit_left--;
	}
	ret = emit_row(op, &rv);
	return ret < 0 && op->first_err == 0 ? sel_fail(op, "out of memory encoding rows") : ret;
}

int
cql_sel_row(struct cql_op *op, const struct sm_row_view *r)
{
	const struct cql_prepared *ps = op->ps;
	unsigned i;
	int ret;

	if (!ps->grouped) {
		if (op->limit_left != UINT32_MAX) {
			if (op->limit_left == 0)
				return 0;
			op->limit_left--;
		}
		ret = emit_row(op, r);
		return ret < 0 && op->first_err == 0 ? sel_fail(op, "out of memory encoding rows")
						     : ret;
	}
	if (op->group_open && ps->group_parts > 0 && !same_group(op, r)) {
		ret = close_group(op);
		if (ret < 0)
			return ret;
	}
	if (!op->group_open) {
		/* a group of the same partition as the last one, or the first of its partition */
		bool same_part = op->part_groups > 0 && op->snap_pk.n == r->pk->n;

		for (i = 0; same_part && i < r->pk->n; i++)
			same_part = r->pk->part[i].len == op->snap_pk.part[i].len &&
				    memcmp(r->pk->part[i].p, op->snap_pk.part[i].p,
					   r->pk->part[i].len) == 0;
		op->part_groups = same_part ? op->part_groups + 1 : 1;
		op->group_skip = op->ppl > 0 && op->part_groups > op->ppl;
		if (grow_aggs(op) < 0 || snapshot(op, r) < 0)
			return sel_fail(op, "out of memory in an aggregate");
		op->group_open = true;
	}
	for (i = 0; i < ps->nsel_nodes; i++) {
		if (ps->sel_nodes[i].op != SEL_AGG)
			continue;
		ret = agg_step(op, &ps->sel_nodes[i], r);
		if (ret < 0)
			return ret;
	}
	return 0;
}

int
cql_sel_finish(struct cql_op *op)
{
	int ret = 0;

	if (op->first_err == 0 && op->group_open) {
		ret = close_group(op);
	} else if (op->first_err == 0 && op->ps->group_parts == 0) {
		/* an aggregate over no row: one row (count 0, min null...) */
		if (grow_aggs(op) < 0 || snapshot(op, NULL) < 0)
			ret = sel_fail(op, "out of memory in an aggregate");
		else
			ret = close_group(op);
	}
	op->group_open = false;
	if (op->first_err != 0) {
		cql_op_fail(op, op->errcode, "%s", op->errmsg);
		return -EINVAL;
	}
	return ret;
}

void
cql_sel_op_free(struct cql_op *op)
{
	unsigned i;

	for (i = 0; i < op->aggs_cap; i++)
		sm_free(op->aggs[i].val);
	sm_free(op->aggs);
	op->aggs = NULL;
	op->aggs_cap = 0;
	sm_free(op->snap_cells);
	op->snap_cells = NULL;
	op->snap_cap = 0;
	sm_cql_buf_release(&op->ev);
	sm_cql_buf_release(&op->snap);
}
