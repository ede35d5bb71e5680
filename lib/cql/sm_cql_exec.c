/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CQL executor: requests in, prepared statements, binding to the
 * catalog, DDL and USE. SELECT lives in sm_cql_exec_select.c, writes and
 * BATCH in sm_cql_exec_modify.c.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <nettle/md5.h>

#include "cql_exec_priv.h"
#include "cql_metrics_priv.h"
#include "sm_index.h"

#define DEFAULT_MAX_PREPARED 20000u
#define NBUCKETS 4096u
#define OP_FREE_MAX 256u
#define OP_BUF_KEEP (1u << 20) /* larger buffers go back to the allocator */
/* Larger arrays go back too, beyond cql_grow()'s first 8 elements (store requests are 13 KB). */
#define OP_ARRAY_KEEP (128u << 10)

__thread struct cql_shard cql_shard;
__thread bool cql_group_on;
const struct sm_cql_exec_config *cql_cfg;
static __thread struct cql_op *op_free;
static __thread unsigned op_nfree;
/* Arrays grown past OP_ARRAY_KEEP on this shard; an op that saw it change shrinks its own. */
static __thread unsigned cql_big_grows;

void
cql_op_slow_release(struct cql_op *op)
{
	op->big_grows = cql_big_grows - 1;
}

int
cql_grow_slow(void **arr, unsigned *cap, unsigned need, size_t size)
{
	unsigned ncap;
	void *p;

	ncap = *cap ? *cap : 8;
	while (ncap < need)
		ncap *= 2;
	if (ncap > 8 && (size_t)ncap * size > OP_ARRAY_KEEP)
		cql_big_grows++;
	p = sm_realloc(*arr, (size_t)ncap * size);
	if (p == NULL)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

int
cql_fail_in_size(struct cql_op *op, bool partition, uint64_t size)
{
	const char *what = partition ? "partition" : "clustering";

	cql_op_fail(op, SM_CQL_ERR_INVALID,
		    "size of %s-key IN list or %s-key cartesian product of IN list %llu is greater "
		    "than maximum %u",
		    what, what, (unsigned long long)size,
		    partition ? CQL_MAX_IN_PARTITIONS : CQL_MAX_IN_CLUSTERING);
	return -EINVAL;
}

/* ---- prepared statements ---- */

static void
prepared_free(struct cql_prepared *ps)
{
	unsigned i;

	if (ps->table != NULL && !ps->system)
		sm_table_put(ps->table);
	if (ps->ix_view != NULL)
		sm_table_put(ps->ix_view);
	for (i = 0; i < ps->nowned; i++)
		sm_type_free(ps->owned[i]);
	for (i = 0; i < ps->nowned_str; i++)
		sm_free(ps->owned_str[i]);
	for (i = 0; i < ps->nconsts; i++)
		sm_free(ps->consts[i].bytes);
	sm_free(ps->consts);
	sm_free(ps->owned);
	sm_free(ps->owned_str);
	sm_free(ps->bind_specs);
	sm_free(ps->res_specs);
	sm_free(ps->outs);
	sm_free(ps->sel_nodes);
	sm_free(ps->sel_roots);
	sm_free(ps->read_cols);
	sm_free(ps->read_keys);
	sm_free(ps->read_cell);
	sm_cql_stmt_free(ps->stmt);
	sm_free(ps->ks);
	sm_free(ps->text);
	sm_free(ps);
}

static void
prepared_put(struct cql_prepared *ps)
{
	if (ps != NULL && --ps->refs == 0)
		prepared_free(ps);
}

static void
statement_id(const char *ks, const char *text, size_t len, uint8_t id[16])
{
	struct md5_ctx md5;

	md5_init(&md5);
	md5_update(&md5, strlen(ks), (const uint8_t *)ks);
	md5_update(&md5, len, (const uint8_t *)text);
	md5_digest(&md5, 16, id);
}

static unsigned
bucket_of(const uint8_t id[16])
{
	uint32_t h;

	memcpy(&h, id, sizeof(h));
	return h & (cql_shard.nbuckets - 1);
}

static struct cql_prepared *
cache_find(const uint8_t *id)
{
	struct cql_prepared *ps;

	for (ps = cql_shard.buckets[bucket_of(id)]; ps != NULL; ps = ps->hash_next)
		if (memcmp(ps->id, id, 16) == 0)
			return ps;
	return NULL;
}

static void
cache_remove(struct cql_prepared *ps)
{
	struct cql_prepared **pp = &cql_shard.buckets[bucket_of(ps->id)];

	for (; *pp != NULL; pp = &(*pp)->hash_next) {
		if (*pp == ps) {
			*pp = ps->hash_next;
			cql_shard.nprepared--;
			prepared_put(ps);
			return;
		}
	}
}

/* Insert @ps (the cache takes a reference), replacing one with its id. */
static void
cache_insert(struct cql_prepared *ps)
{
	unsigned max = cql_cfg->max_prepared ? cql_cfg->max_prepared : DEFAULT_MAX_PREPARED;
	struct cql_prepared *old = cache_find(ps->id);
	unsigned b, i;

	if (old != NULL)
		cache_remove(old);
	if (cql_shard.nprepared >= max) {
		/* Evict one entry of some bucket: drivers re-prepare on Unprepared. */
		b = bucket_of(ps->id);
		for (i = 0; i < cql_shard.nbuckets; i++) {
			old = cql_shard.buckets[(b + i) & (cql_shard.nbuckets - 1)];
			if (old != NULL) {
				cache_remove(old);
				break;
			}
		}
	}
	b = bucket_of(ps->id);
	ps->refs++;
	ps->cached = true;
	ps->hash_next = cql_shard.buckets[b];
	cql_shard.buckets[b] = ps;
	cql_shard.nprepared++;
}

int
cql_own_type(struct cql_prepared *ps, const struct sm_type *t)
{
	if (cql_grow((void **)&ps->owned, &ps->owned_cap, ps->nowned + 1, sizeof(*ps->owned)) < 0)
		return -ENOMEM;
	ps->owned[ps->nowned++] = t;
	return 0;
}

const char *
cql_own_str(struct cql_prepared *ps, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	/* sized by the text: a quoted column name may be longer than any buffer */
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	s = n >= 0 ? sm_malloc((size_t)n + 1) : NULL;
	if (s != NULL) {
		va_start(ap, fmt);
		vsnprintf(s, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	if (s == NULL || cql_grow((void **)&ps->owned_str, &ps->owned_str_cap, ps->nowned_str + 1,
				  sizeof(*ps->owned_str)) < 0) {
		sm_free(s);
		return NULL;
	}
	ps->owned_str[ps->nowned_str++] = s;
	return s;
}

const struct sm_table *
cql_lookup_table(const struct sm_cql_qname *q, const char *session_ks, bool *system, char *err,
		 size_t errlen, int32_t *code)
{
	const char *ks = q->ks ? q->ks : session_ks;
	const struct sm_catalog *cat = sm_store_catalog();
	const struct sm_table *t;

	*system = false;
	*code = SM_CQL_ERR_INVALID;
	if (ks == NULL || ks[0] == '\0') {
		snprintf(err, errlen,
			 "No keyspace has been specified. USE a keyspace, or explicitly specify "
			 "keyspace.tablename");
		return NULL;
	}
	if (sm_cql_system_keyspace(ks)) {
		t = sm_cql_system_table(ks, q->name);
		if (t == NULL)
			snprintf(err, errlen, "unconfigured table %s", q->name);
		*system = t != NULL;
		return t;
	}
	if (sm_catalog_keyspace(cat, ks) == NULL) {
		snprintf(err, errlen, "Keyspace %s does not exist", ks);
		return NULL;
	}
	t = sm_catalog_table(cat, ks, q->name);
	if (t == NULL)
		snprintf(err, errlen, "unconfigured table %s", q->name);
	return t;
}

/* (a, b) op ?: a tuple of the columns' types; (a, b) IN ?: a list of them. */
static int
tuple_bind_type(const struct sm_table *tb, const struct sm_cql_bind *b, const struct sm_type **out,
		char *err, size_t errlen)
{
	const struct sm_type *stack[SM_MAX_KEY_PARTS], *tt;
	const struct sm_column *c;
	unsigned i;
	int ret;

	if (b->ncolumns > SM_MAX_KEY_PARTS) {
		snprintf(err, errlen, "Too many columns in a multi-column relation");
		return -EINVAL;
	}
	for (i = 0; i < b->ncolumns; i++) {
		c = sm_table_column(tb, b->columns[i]);
		if (c == NULL) {
			while (i-- > 0)
				sm_type_free(stack[i]);
			snprintf(err, errlen, "Undefined column name %s", b->columns[i]);
			return -EINVAL;
		}
		stack[i] = sm_type_dup(c->type);
		if (stack[i] == NULL) {
			while (i-- > 0)
				sm_type_free(stack[i]);
			return -ENOMEM;
		}
	}
	ret = sm_type_tuple(stack, b->ncolumns, &tt, err, errlen);
	if (ret < 0 || b->role == SM_CQL_BIND_TUPLE) {
		*out = tt;
		return ret;
	}
	return sm_type_collection(SM_TYPE_LIST, true, tt, NULL, out, err, errlen);
}

/* The type a bind marker takes, by its role relative to @c (a column of @tb). */
static int
bind_type(struct cql_prepared *ps, const struct sm_table *tb, const struct sm_cql_bind *b,
	  const struct sm_column *c, const struct sm_type **out, char *err, size_t errlen)
{
	const struct sm_type *t = c ? c->type : NULL, *nt;
	enum sm_type_kind k = t ? t->kind : SM_TYPE__COUNT;
	int ret;

	switch (b->role) {
	case SM_CQL_BIND_TUPLE:
	case SM_CQL_BIND_TUPLE_IN:
		ret = tuple_bind_type(tb, b, &nt, err, errlen);
		if (ret < 0)
			return ret;
		goto own;
	case SM_CQL_BIND_TTL:
	case SM_CQL_BIND_LIMIT:
	case SM_CQL_BIND_PER_PARTITION_LIMIT:
		*out = sm_type_simple(SM_TYPE_INT);
		return 0;
	case SM_CQL_BIND_TIMESTAMP:
	case SM_CQL_BIND_TOKEN:
		*out = sm_type_simple(SM_TYPE_BIGINT);
		return 0;
	case SM_CQL_BIND_TIMEOUT:
		*out = sm_type_simple(SM_TYPE_DURATION);
		return 0;
	case SM_CQL_BIND_JSON:
		*out = sm_type_simple(SM_TYPE_TEXT);
		return 0;
	default:
		break;
	}
	if (c == NULL) {
		snprintf(err, errlen, "Undefined column name %s", b->column ? b->column : "?");
		return -EINVAL;
	}
	switch (b->role) {
	case SM_CQL_BIND_VALUE:
		*out = t;
		return 0;
	case SM_CQL_BIND_FIELD: {
		int idx = sm_type_field_index(t, b->field);

		if (idx < 0) {
			snprintf(err, errlen, "UDT column %s does not have a field named %s", c->name,
				 b->field ? b->field : "?");
			return -EINVAL;
		}
		*out = t->fields[idx];
		return 0;
	}
	case SM_CQL_BIND_IN_LIST:
		ret = sm_type_collection(SM_TYPE_LIST, true, sm_type_dup(t), NULL, &nt, err,
					 errlen);
		break;
	case SM_CQL_BIND_KEY:
		/* a set's "key" is its element: DELETE s[?] */
		if (k == SM_TYPE_MAP || k == SM_TYPE_SET) {
			*out = t->elem;
			return 0;
		}
		if (k == SM_TYPE_LIST) {
			*out = sm_type_simple(SM_TYPE_INT);
			return 0;
		}
		snprintf(err, errlen, "Column %s is not a map or a list", c->name);
		return -EINVAL;
	case SM_CQL_BIND_ELEM:
		if (k == SM_TYPE_MAP) {
			*out = t->val;
			return 0;
		}
		if (k == SM_TYPE_LIST || k == SM_TYPE_SET) {
			*out = t->elem;
			return 0;
		}
		snprintf(err, errlen, "Column %s is not a collection", c->name);
		return -EINVAL;
	case SM_CQL_BIND_ADD:
		*out = k == SM_TYPE_COUNTER ? sm_type_simple(SM_TYPE_BIGINT) : t;
		return 0;
	case SM_CQL_BIND_SUB:
		if (k == SM_TYPE_COUNTER) {
			*out = sm_type_simple(SM_TYPE_BIGINT);
			return 0;
		}
		if (k != SM_TYPE_MAP) {
			*out = t;
			return 0;
		}
		ret = sm_type_collection(SM_TYPE_SET, false, sm_type_dup(t->elem), NULL, &nt, err,
					 errlen);
		break;
	case SM_CQL_BIND_SUB_ELEM:
		*out = t->elem ? t->elem : t;
		return 0;
	default:
		snprintf(err, errlen,
			 "not supported by shardmark: a bind marker in this position (tuple or "
			 "function argument)");
		return -ENOTSUP;
	}
	if (ret < 0)
		return ret;
own:
	ret = cql_own_type(ps, nt);
	if (ret < 0) {
		sm_type_free(nt);
		return ret;
	}
	*out = nt;
	return 0;
}

/*
 * The markers inside @t, a term that receives a value of type @rt: each
 * NESTED or FUNCTION_ARG one whose type is not known yet gets the type of
 * its place (Cassandra's receivers: an element's, a field's, a component's,
 * an argument's). Unknown places stay unknown.
 */
static void
walk_term(struct cql_prepared *ps, const struct sm_cql_term *t, const struct sm_type *rt,
	  const char *name)
{
	const struct sm_cql_bind *b;
	const char *sub;
	unsigned i;
	int idx;

	if (t == NULL || name == NULL)
		return;
	switch (t->kind) {
	case SM_CQL_TERM_BIND:
		if (t->bind >= ps->nbind || rt == NULL)
			return;
		b = &ps->stmt->binds[t->bind];
		if ((b->role == SM_CQL_BIND_NESTED || b->role == SM_CQL_BIND_FUNCTION_ARG) &&
		    ps->bind_specs[t->bind].type == NULL) {
			ps->bind_specs[t->bind].type = rt;
			ps->bind_specs[t->bind].name = sm_cql_str(name);
		}
		return;
	case SM_CQL_TERM_LIST:
	case SM_CQL_TERM_SET:
	case SM_CQL_TERM_MAP:
		for (i = 0; i < t->nelems; i++) {
			const struct sm_type *et = NULL;
			bool value = t->kind != SM_CQL_TERM_MAP || i % 2;

			if (rt != NULL && (rt->kind == SM_TYPE_LIST || rt->kind == SM_TYPE_SET))
				et = rt->elem;
			else if (rt != NULL && rt->kind == SM_TYPE_MAP)
				et = t->kind == SM_CQL_TERM_MAP && i % 2 ? rt->val : rt->elem;
			sub = cql_own_str(ps, "%s(%s)", value ? "value" : "key", name);
			walk_term(ps, t->elems[i], et, sub);
		}
		return;
	case SM_CQL_TERM_TUPLE:
		/* ScyllaDB's component_spec_of() and usertype_field_spec_of() names */
		for (i = 0; i < t->nelems; i++)
			walk_term(ps, t->elems[i],
				  rt != NULL && rt->kind == SM_TYPE_TUPLE && i < rt->nfields
					  ? rt->fields[i]
					  : NULL,
				  cql_own_str(ps, "%s[%u]", name, i));
		return;
	case SM_CQL_TERM_UDT:
		for (i = 0; i < t->nelems; i++) {
			idx = rt != NULL ? sm_type_field_index(rt, t->names[i]) : -1;
			walk_term(ps, t->elems[i], idx >= 0 ? rt->fields[idx] : NULL,
				  cql_own_str(ps, "%s.%s", name, t->names[i]));
		}
		return;
	case SM_CQL_TERM_FUNCTION:
		for (i = 0; i < t->nelems; i++)
			walk_term(ps, t->elems[i], sm_cql_function_arg_type(t, i),
				  cql_own_str(ps, "arg%u(system.%s)", i, t->text));
		return;
	case SM_CQL_TERM_CAST: {
		/* (type) ?: the hint is the marker's type */
		const struct sm_type *ht = NULL;

		if (sm_type_parse(t->text, &ht, NULL, 0) < 0)
			return;
		if (cql_own_type(ps, ht) < 0) {
			sm_type_free(ht);
			return;
		}
		walk_term(ps, t->elems[0], ht, name);
		return;
	}
	default:
		return;
	}
}

static const char *
bind_name(struct cql_prepared *ps, const struct sm_cql_bind *b)
{
	if (b->name != NULL)
		return b->name;
	switch (b->role) {
	case SM_CQL_BIND_TTL:
		return "[ttl]";
	case SM_CQL_BIND_TIMESTAMP:
		return "[timestamp]";
	case SM_CQL_BIND_TIMEOUT:
		return "[timeout]";
	case SM_CQL_BIND_JSON:
		return "[json]";
	case SM_CQL_BIND_LIMIT:
		return "[limit]";
	case SM_CQL_BIND_PER_PARTITION_LIMIT:
		return "[per_partition_limit]";
	case SM_CQL_BIND_TOKEN:
		return "partition key token";
	case SM_CQL_BIND_IN_LIST:
		return cql_own_str(ps, "in(%s)", b->column);
	case SM_CQL_BIND_KEY:
		return cql_own_str(ps, "key(%s)", b->column);
	case SM_CQL_BIND_ELEM:
		return cql_own_str(ps, "value(%s)", b->column);
	case SM_CQL_BIND_FIELD:
		return cql_own_str(ps, "%s.%s", b->column, b->field);
	default:
		return b->column ? b->column : "?";
	}
}

/* The statement a bind marker belongs to (a batch's inner one). */
static const struct sm_cql_stmt *
bind_stmt(const struct sm_cql_stmt *s, const struct sm_cql_bind *b)
{
	if (s->kind == SM_CQL_BATCH && b->stmt < s->batch.nstmts)
		return s->batch.stmts[b->stmt];
	return s;
}

const struct sm_cql_qname *
cql_stmt_table(const struct sm_cql_stmt *s)
{
	switch (s->kind) {
	case SM_CQL_SELECT:
		return &s->select.table;
	case SM_CQL_INSERT:
		return &s->insert.table;
	case SM_CQL_UPDATE:
		return &s->update.table;
	case SM_CQL_DELETE:
		return &s->del.table;
	default:
		return NULL;
	}
}

static int
bind_markers(struct cql_prepared *ps, const char *session_ks, char *err, size_t errlen,
	     int32_t *code)
{
	const struct sm_cql_stmt *s = ps->stmt;
	unsigned i;
	int ret;

	if (s->nbinds == 0)
		return 0;
	ps->bind_specs = sm_calloc(s->nbinds, sizeof(*ps->bind_specs));
	if (ps->bind_specs == NULL)
		return -ENOMEM;
	ps->nbind = s->nbinds;
	for (i = 0; i < s->nbinds; i++) {
		const struct sm_cql_bind *b = &s->binds[i];
		const struct sm_cql_stmt *in = bind_stmt(s, b);
		const struct sm_cql_qname *q = cql_stmt_table(in);
		const struct sm_table *t = ps->table;
		const struct sm_column *c = NULL;
		struct sm_cql_colspec *sp = &ps->bind_specs[i];
		bool sys;

		if (q == NULL) {
			snprintf(err, errlen, "bind markers are not allowed in this statement");
			*code = SM_CQL_ERR_INVALID;
			return -EINVAL;
		}
		if (in != s) {
			t = cql_lookup_table(q, session_ks, &sys, err, errlen, code);
			if (t == NULL)
				return -ENOENT;
		}
		if (b->column != NULL) {
			c = sm_table_column(t, b->column);
			if (c == NULL) {
				snprintf(err, errlen, "Undefined column name %s", b->column);
				*code = SM_CQL_ERR_INVALID;
				return -EINVAL;
			}
		}
		if (b->role == SM_CQL_BIND_NESTED || b->role == SM_CQL_BIND_FUNCTION_ARG) {
			/* the type of the outermost term, then down to this marker */
			if (sp->type == NULL && b->root != NULL) {
				struct sm_cql_bind rb = *b;
				const struct sm_type *rt = NULL;

				rb.role = b->root_role;
				if (rb.role == SM_CQL_BIND_NESTED || rb.role == SM_CQL_BIND_FUNCTION_ARG ||
				    bind_type(ps, t, &rb, c, &rt, err, errlen) < 0)
					rt = NULL;
				walk_term(ps, b->root, rt, bind_name(ps, &rb));
			}
			/* fromJson(?) takes the JSON as text, whatever it makes */
			if (sp->type == NULL && b->parent != NULL &&
			    b->parent->kind == SM_CQL_TERM_FUNCTION &&
			    strcmp(b->parent->text, "fromjson") == 0)
				sp->type = sm_type_simple(SM_TYPE_TEXT);
			if (sp->type == NULL && b->parent != NULL &&
			    b->parent->kind == SM_CQL_TERM_FUNCTION) {
				/* an overloaded function's argument (Cassandra's message) */
				snprintf(err, errlen,
					 "Ambiguous call to function system.%s: use type casts to "
					 "disambiguate",
					 b->parent->text);
				*code = SM_CQL_ERR_INVALID;
				return -EINVAL;
			}
			if (sp->type == NULL) {
				snprintf(err, errlen,
					 "not supported by shardmark: a bind marker in this position "
					 "(its type cannot be inferred)");
				*code = SM_CQL_ERR_INVALID;
				return -ENOTSUP;
			}
		} else {
			ret = bind_type(ps, t, b, c, &sp->type, err, errlen);
			if (ret < 0) {
				*code = SM_CQL_ERR_INVALID;
				return ret;
			}
		}
		sp->ks = sm_cql_str(t->ks);
		sp->table = sm_cql_str(t->name);
		if (sp->name.p == NULL)
			sp->name = sm_cql_str(bind_name(ps, b));
		if (sp->name.p == NULL)
			return -ENOMEM;
	}
	return 0;
}

/* [applied] and the pre-image columns of a conditional write (Scylla's convention). */
static int
bind_lwt(struct cql_prepared *ps, enum sm_cql_if kind, const struct sm_cql_relation *conds,
	 unsigned nconds, char *err, size_t errlen)
{
	const struct sm_table *t = ps->table;
	bool *want = NULL; /* IF conditions: the columns they test, by id */
	unsigned i, cell;
	int ret;

	ps->lwt = true;
	if (kind == SM_CQL_IF_CONDS) {
		want = sm_calloc(t->ncols ? t->ncols : 1, sizeof(*want));
		if (want == NULL)
			return -ENOMEM;
		for (i = 0; i < nconds; i++) {
			const struct sm_column *c = sm_table_column(t, conds[i].cols[0]);

			if (c == NULL) {
				snprintf(err, errlen, "Undefined column name %s", conds[i].cols[0]);
				sm_free(want);
				return -EINVAL;
			}
			want[c->id] = true;
		}
	}
	ret = cql_add_res(ps, "[applied]", sm_type_simple(SM_TYPE_BOOLEAN), OUT_CELL, 0);
	for (i = 0; i < t->ncols && ret == 0; i++) {
		if (want != NULL && !want[i])
			continue;
		ret = cql_add_read_col(ps, t->cols[i].id, &cell);
		if (ret == 0)
			ret = cql_add_res(ps, t->cols[i].name, t->cols[i].type, OUT_CELL, cell);
	}
	sm_free(want);
	return ret;
}

int
cql_bind(struct cql_prepared *ps, const char *session_ks, char *err, size_t errlen, int32_t *code)
{
	const struct sm_cql_stmt *s = ps->stmt;
	const struct sm_cql_qname *q = cql_stmt_table(s);
	const char *pk[SM_MAX_KEY_PARTS];
	unsigned i;
	int ret;

	*code = SM_CQL_ERR_INVALID;
	ps->version = sm_store_catalog()->version;
	if (q != NULL) {
		ps->table = cql_lookup_table(q, session_ks, &ps->system, err, errlen, code);
		if (ps->table == NULL)
			return -ENOENT;
		if (!ps->system)
			sm_table_get(ps->table);
		/* modification_statement.cc: a view is written by its base only */
		if (!ps->system && s->kind != SM_CQL_SELECT &&
		    (sm_table_is_index(ps->table) || sm_table_is_mv(ps->table))) {
			snprintf(err, errlen, "Cannot directly modify a materialized view");
			return -EINVAL;
		}
	}
	ret = bind_markers(ps, session_ks, err, errlen, code);
	if (ret < 0)
		return ret;
	switch (s->kind) {
	case SM_CQL_SELECT:
		ret = cql_bind_select(ps, err, errlen, code);
		break;
	case SM_CQL_INSERT:
		if (s->insert.if_not_exists)
			ret = bind_lwt(ps, SM_CQL_IF_NOT_EXISTS, NULL, 0, err, errlen);
		break;
	case SM_CQL_UPDATE:
		if (s->update.if_kind != SM_CQL_IF_NONE)
			ret = bind_lwt(ps, s->update.if_kind, s->update.conds, s->update.nconds,
				       err, errlen);
		break;
	case SM_CQL_DELETE:
		if (s->del.if_kind != SM_CQL_IF_NONE)
			ret = bind_lwt(ps, s->del.if_kind, s->del.conds, s->del.nconds, err,
				       errlen);
		break;
	default:
		break;
	}
	/* Only binding looks columns up by id. */
	sm_free(ps->read_cell);
	ps->read_cell = NULL;
	if (ret < 0)
		return ret;
	if (ps->system && s->kind != SM_CQL_SELECT) {
		*code = SM_CQL_ERR_UNAUTHORIZED;
		snprintf(err, errlen, "%s keyspace is not user-modifiable", ps->table->ks);
		return -EPERM;
	}
	if (ps->table != NULL) {
		for (i = 0; i < ps->table->npk; i++)
			pk[i] = ps->table->cols[i].name;
		if (sm_cql_pk_indexes(s, pk, ps->table->npk, ps->pk_idx))
			ps->npk_idx = ps->table->npk;
	}
	return 0;
}

/* Parse and bind @text; *out holds one reference. */
/* Which of ScyllaDB's timeouts bounds the statement, should it wait. */
static uint8_t
statement_timeout_kind(const struct cql_prepared *ps)
{
	switch (ps->stmt->kind) {
	case SM_CQL_SELECT:
		return SM_CQL_TIMEOUT_READ;
	case SM_CQL_INSERT:
	case SM_CQL_UPDATE:
	case SM_CQL_DELETE:
	case SM_CQL_BATCH:
		return ps->lwt ? SM_CQL_TIMEOUT_CAS : SM_CQL_TIMEOUT_WRITE;
	case SM_CQL_TRUNCATE:
		return SM_CQL_TIMEOUT_TRUNCATE;
	default:
		return SM_CQL_TIMEOUT_OTHER;
	}
}

/* Which of ScyllaDB's statement counters counts it (scylla_cql_reads, _inserts, ...). */
static uint8_t
statement_metric_kind(const struct cql_prepared *ps)
{
	switch (ps->stmt->kind) {
	case SM_CQL_SELECT:
		return CQL_M_SELECT;
	case SM_CQL_INSERT:
		return CQL_M_INSERT;
	case SM_CQL_UPDATE:
		return CQL_M_UPDATE;
	case SM_CQL_DELETE:
		return CQL_M_DELETE;
	case SM_CQL_BATCH:
		return CQL_M_BATCH;
	default:
		return CQL_M_OTHER;
	}
}

static int
prepare_text(const char *ks, const char *text, size_t len, struct cql_prepared **out, char *err,
	     size_t errlen, int32_t *code)
{
	struct cql_prepared *ps;
	int ret;

	*out = NULL;
	*code = SM_CQL_ERR_SERVER;
	ps = sm_calloc(1, sizeof(*ps));
	if (ps == NULL)
		goto nomem;
	ps->refs = 1;
	ps->ks = sm_strdup(ks);
	ps->text = sm_malloc(len + 1);
	if (ps->ks == NULL || ps->text == NULL)
		goto nomem;
	memcpy(ps->text, text, len);
	ps->text[len] = '\0';
	ps->len = len;
	statement_id(ks, text, len, ps->id);
	ret = sm_cql_parse(text, len, &ps->stmt, err, errlen);
	if (ret < 0) {
		*code = ret == -EBADMSG	 ? SM_CQL_ERR_SYNTAX
			: ret == -ENOMEM ? SM_CQL_ERR_SERVER
					 : SM_CQL_ERR_INVALID;
		prepared_free(ps);
		return ret;
	}
	ret = cql_bind(ps, ks, err, errlen, code);
	if (ret < 0) {
		if (ret == -ENOMEM) {
			*code = SM_CQL_ERR_SERVER;
			snprintf(err, errlen, "out of memory");
		}
		prepared_free(ps);
		return ret;
	}
	ps->timeout_kind = statement_timeout_kind(ps);
	ps->metric_kind = statement_metric_kind(ps);
	*out = ps;
	return 0;
nomem:
	if (ps != NULL)
		prepared_free(ps);
	snprintf(err, errlen, "out of memory");
	return -ENOMEM;
}

/* ---- ops ---- */

static struct cql_op *
op_get(struct sm_cql_req *req)
{
	struct cql_op *op = op_free;

	if (op != NULL) {
		op_free = op->next_free;
		op_nfree--;
	} else {
		op = sm_calloc(1, sizeof(*op));
		if (op == NULL)
			return NULL;
		sm_cql_buf_init(&op->vals);
		sm_cql_buf_init(&op->out);
		sm_cql_buf_init(&op->ev);
		sm_cql_buf_init(&op->snap);
	}
	op->in_use = true;
	op->group_ddl = false;
	op->big_grows = cql_big_grows;
	op->req = req;
	op->ps = NULL;
	op->params = NULL;
	op->nbinds = 0;
	op->stream = req->hdr.stream;
	op->nops = op->nconds = op->nin = op->nranges = op->nkeys = 0;
	op->nsreqs = op->pending = 0;
	op->wave = false;
	op->post_on = false;
	op->nmuts = 0;
	op->nfilters = 0;
	op->nspans = 0;
	op->first_err = 0;
	op->errcode = 0;
	op->errmsg[0] = '\0';
	op->count = 0;
	op->page_rows = 0;
	sm_cql_buf_reset(&op->vals);
	sm_cql_buf_reset(&op->out);
	memset(&op->vctx, 0, sizeof(op->vctx));
	op->vctx.uuid_gen = &cql_shard.gen;
	op->now_us = sm_store_now_us();
	op->vctx.now_micros = op->now_us;
	return op;
}

static void
op_destroy(struct cql_op *op)
{
	sm_cql_buf_release(&op->vals);
	sm_cql_buf_release(&op->out);
	cql_sel_op_free(op);
	sm_free(op->binds);
	sm_free(op->ops);
	sm_free(op->conds);
	sm_free(op->in_vals);
	sm_free(op->ranges);
	sm_free(op->keys);
	cql_select_ix_free(op);
	sm_free(op->lwtr);
	sm_free(op->sreqs);
	sm_free(op->muts);
	sm_free(op->filters);
	sm_free(op->spans);
	sm_free(op);
}

/* Free @*arr when it outgrew OP_ARRAY_KEEP: one huge request must not pin its arrays. */
static void
op_shrink(void **arr, unsigned *cap, size_t elem)
{
	if (*cap <= 8 || (size_t)*cap * elem <= OP_ARRAY_KEEP)
		return;
	sm_free(*arr);
	*arr = NULL;
	*cap = 0;
}

static void
op_release(struct cql_op *op)
{
	if (!op->in_use) {
		/* a second release would put it on the free list twice */
		SM_ERR("cql: op %p released twice (a bug): ignored", (void *)op);
		return;
	}
	op->in_use = false;
	prepared_put(op->ps);
	op->ps = NULL;
	if (op_nfree >= OP_FREE_MAX) {
		op_destroy(op);
		return;
	}
	if (op->vals.cap > OP_BUF_KEEP)
		sm_cql_buf_release(&op->vals);
	if (op->out.cap > OP_BUF_KEEP)
		sm_cql_buf_release(&op->out);
	if (SM_LIKELY(op->big_grows == cql_big_grows))
		goto keep;
	/* a conditional batch's rows (sm_cql_exec_modify.c), which asked for this path */
	sm_free(op->lwtr);
	op->lwtr = NULL;
	cql_select_ix_free(op);
	op_shrink((void **)&op->binds, &op->bind_cap, sizeof(*op->binds));
	op_shrink((void **)&op->ops, &op->ops_cap, sizeof(*op->ops));
	op_shrink((void **)&op->conds, &op->conds_cap, sizeof(*op->conds));
	op_shrink((void **)&op->in_vals, &op->in_cap, sizeof(*op->in_vals));
	op_shrink((void **)&op->ranges, &op->ranges_cap, sizeof(*op->ranges));
	op_shrink((void **)&op->keys, &op->keys_cap, sizeof(*op->keys));
	op_shrink((void **)&op->sreqs, &op->sreqs_cap, sizeof(*op->sreqs));
	op_shrink((void **)&op->muts, &op->muts_cap, sizeof(*op->muts));
	op_shrink((void **)&op->filters, &op->filters_cap, sizeof(*op->filters));
	op_shrink((void **)&op->spans, &op->spans_cap, sizeof(*op->spans));
keep:
	op->next_free = op_free;
	op_free = op;
	op_nfree++;
}

void
cql_tablet_hint_slow(struct cql_op *op, const struct sm_table *t, const struct sm_key *pk)
{
	uint32_t tablet;

	if (!sm_cql_conn_tablets_routing(op->req->conn) || pk->n == 0)
		return;
	tablet = sm_tablet_of_token(t, sm_key_token(pk));
	if (sm_tablet_shard(tablet, sm_shard_count() ? sm_shard_count() : 1) == sm_shard_id())
		return;
	op->tablet_hint = tablet + 1;
	op->tablet_table = t;
}

/* [short n = 1][string key] and the [bytes] value of cql_tablet_payload() */
#define TABLET_PAYLOAD_KEY "tablets-routing-v1"
#define TABLET_PAYLOAD_LEN (2 + 2 + sizeof(TABLET_PAYLOAD_KEY) - 1 + 4 + 64)

static uint8_t *
put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	return p + 4;
}

static uint8_t *
put64(uint8_t *p, uint64_t v)
{
	return put32(put32(p, (uint32_t)(v >> 32)), (uint32_t)v);
}

/*
 * The custom payload of docs/dev/protocol-extensions.md ("tablets-routing-v1"):
 * tuple<bigint first_token (exclusive), bigint last_token,
 * list<tuple<uuid host_id, int shard>> replicas>, each tuple element and
 * list element an [int] length and its bytes, the list an [int] count.
 * The one replica is this node (the connection's) and the tablet's shard.
 */
size_t
cql_tablet_payload(uint8_t *p, const struct sm_table *t, uint32_t tablet,
		   const struct sm_uuid *host_id, unsigned shard)
{
	uint8_t *q = p;

	q[0] = 0;
	q[1] = 1;
	q[2] = 0;
	q[3] = sizeof(TABLET_PAYLOAD_KEY) - 1;
	memcpy(q + 4, TABLET_PAYLOAD_KEY, sizeof(TABLET_PAYLOAD_KEY) - 1);
	q += 4 + sizeof(TABLET_PAYLOAD_KEY) - 1;
	q = put32(q, 64); /* the tuple's bytes */
	q = put32(q, 8);
	q = put64(q, (uint64_t)(tablet == 0 ? INT64_MIN : sm_tablet_last_token(t, tablet - 1)));
	q = put32(q, 8);
	q = put64(q, (uint64_t)sm_tablet_last_token(t, tablet));
	q = put32(q, 36); /* the list: its count, one element */
	q = put32(q, 1);
	q = put32(q, 28); /* the replica tuple */
	q = put32(q, 16);
	memcpy(q, host_id->b, 16);
	q += 16;
	q = put32(q, 4);
	q = put32(q, shard);
	return (size_t)(q - p);
}

/* Put the tablets-routing-v1 payload before a RESULT's body (sets CUSTOM_PAYLOAD). */
static __attribute__((noinline, cold)) void
tablet_payload_add(struct cql_op *op)
{
	const struct sm_cql_cluster *cl = sm_cql_conn_service(op->req->conn)->node;
	struct sm_cql_buf *b = &op->out;
	uint8_t pl[TABLET_PAYLOAD_LEN];
	uint32_t body, tablet;
	size_t n;

	_Static_assert(TABLET_PAYLOAD_LEN == 90, "the payload's fixed size");
	tablet = op->tablet_hint - 1;
	op->tablet_hint = 0; /* the pooled op's next request starts without (op_get() leaves it) */
	if (cl == NULL)
		cl = cql_cfg->cluster;
	/* one whole RESULT frame, or nothing: an error carries no payload */
	if (b->len < SM_CQL_HEADER_LEN || b->p[4] != SM_CQL_OP_RESULT)
		return;
	body = (uint32_t)b->p[5] << 24 | (uint32_t)b->p[6] << 16 | (uint32_t)b->p[7] << 8 |
	       b->p[8];
	if ((size_t)body + SM_CQL_HEADER_LEN != b->len || (b->p[1] & SM_CQL_FLAG_CUSTOM_PAYLOAD))
		return;
	n = cql_tablet_payload(pl, op->tablet_table, tablet, &cl->self.host_id,
			       sm_tablet_shard(tablet, sm_shard_count() ? sm_shard_count() : 1));
	if (sm_cql_buf_reserve(b, n) < 0)
		return; /* out of memory: the reply goes without the hint */
	memmove(b->p + SM_CQL_HEADER_LEN + n, b->p + SM_CQL_HEADER_LEN, body);
	memcpy(b->p + SM_CQL_HEADER_LEN, pl, n);
	b->len += n;
	body += (uint32_t)n;
	b->p[1] |= SM_CQL_FLAG_CUSTOM_PAYLOAD;
	put32(b->p + 5, body);
}

void
cql_op_finish(struct cql_op *op)
{
	if (SM_UNLIKELY(op->tablet_hint != 0))
		tablet_payload_add(op);
	if (SM_UNLIKELY(op->group_ddl) && cql_group_ddl_applied(op))
		return;
	sm_cql_reply(op->req, &op->out);
	op_release(op);
}

void
cql_op_forward(struct cql_op *op, unsigned peer)
{
	struct sm_cql_req *req = op->req;

	op_release(op);
	cql_cfg->group->forward(cql_cfg->group->ctx, req, peer, sm_cql_conn_keyspace(req->conn));
}

void
cql_op_fail(struct cql_op *op, int32_t code, const char *fmt, ...)
{
	struct sm_cql_error e;
	char msg[1024]; /* room for a message naming an over-long identifier */
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	memset(&e, 0, sizeof(e));
	e.code = code;
	e.message = sm_cql_str(msg);
	if (code == SM_CQL_ERR_UNPREPARED)
		e.id = op->req->msg.u.execute.id;
	if (code == SM_CQL_ERR_WRITE_TIMEOUT) {
		e.consistency = op->params ? op->params->consistency : SM_CQL_ONE;
		e.blockfor = 1;
		e.write_type = op->ps && op->ps->lwt ? SM_CQL_WT_CAS : SM_CQL_WT_SIMPLE;
	}
	sm_cql_buf_reset(&op->out);
	if (sm_cql_enc_error(&op->out, op->stream, &e) < 0)
		sm_cql_buf_reset(&op->out);
	cql_op_finish(op);
}

void
cql_op_store_error(struct cql_op *op, const struct sm_store_req *r, bool write)
{
	const char *msg = r->err[0] ? r->err : strerror(-r->result);

	if (r->result == -ETIMEDOUT && write)
		cql_op_fail(op, SM_CQL_ERR_WRITE_TIMEOUT, "%s", msg);
	else if (r->result == -ETIMEDOUT)
		cql_op_fail(op, SM_CQL_ERR_READ_TIMEOUT, "%s", msg);
	else if (r->result == -ENOMEM)
		cql_op_fail(op, SM_CQL_ERR_OVERLOADED, "%s", msg);
	else
		cql_op_fail(op, SM_CQL_ERR_INVALID, "%s", msg);
}

/* A term whose value never changes: literals, and collections of them. */
static bool
term_is_constant(const struct sm_cql_term *t)
{
	unsigned i;

	switch (t->kind) {
	case SM_CQL_TERM_LITERAL:
		return true;
	case SM_CQL_TERM_LIST:
	case SM_CQL_TERM_SET:
	case SM_CQL_TERM_MAP:
	case SM_CQL_TERM_TUPLE:
		for (i = 0; i < t->nelems; i++)
			if (!term_is_constant(t->elems[i]))
				return false;
		return true;
	default:
		return false; /* bind markers, and functions such as now() */
	}
}

/*
 * A prepared statement's literals are converted once, on first use, and
 * copied afterwards: an UPDATE with five 34-byte blob literals spent almost
 * half its instructions converting them on every EXECUTE.
 */
static struct cql_const *
const_find(const struct cql_prepared *ps, const struct sm_cql_term *t, const struct sm_type *type)
{
	unsigned i;

	for (i = 0; i < ps->nconsts; i++)
		if (ps->consts[i].t == t && ps->consts[i].type == type)
			return &ps->consts[i];
	return NULL;
}

static void
const_keep(struct cql_prepared *ps, const struct sm_cql_term *t, const struct sm_type *type,
	   const uint8_t *bytes, const struct sm_cql_value_span *span)
{
	struct cql_const *c;

	if (cql_grow((void **)&ps->consts, &ps->consts_cap, ps->nconsts + 1, sizeof(*ps->consts)) <
	    0)
		return;
	c = &ps->consts[ps->nconsts];
	c->bytes = sm_malloc(span->len ? span->len : 1);
	if (c->bytes == NULL)
		return;
	memcpy(c->bytes, bytes, span->len);
	c->t = t;
	c->type = type;
	c->len = span->len;
	c->state = span->state;
	ps->nconsts++;
}

int
cql_value(struct cql_op *op, const struct sm_cql_term *t, const struct sm_type *type,
	  const char *col, struct sm_cql_value_span *span)
{
	struct cql_prepared *ps = op->ps;
	bool constant = ps != NULL && ps->cached && term_is_constant(t);
	const struct cql_const *c;
	char err[256];
	uint8_t *dst;
	int ret;

	if (constant && (c = const_find(ps, t, type)) != NULL) {
		span->off = op->vals.len;
		span->len = c->len;
		span->state = c->state;
		if (c->len == 0)
			return 0;
		dst = sm_cql_buf_append(&op->vals, c->len);
		if (dst == NULL) {
			cql_op_fail(op, SM_CQL_ERR_SERVER, "out of memory");
			return -ENOMEM;
		}
		memcpy(dst, c->bytes, c->len);
		return 0;
	}
	ret = sm_cql_term_to_value(t, type, col, &op->vctx, &op->vals, span, err, sizeof(err));
	if (ret == 0) {
		if (constant)
			const_keep(ps, t, type, op->vals.p + span->off, span);
		return 0;
	}
	if (ret == -ENOMEM)
		cql_op_fail(op, SM_CQL_ERR_SERVER, "out of memory");
	else
		cql_op_fail(op, SM_CQL_ERR_INVALID, "%s", err);
	return ret;
}

int
cql_value_idx(struct cql_op *op, const struct sm_cql_term *t, const struct sm_type *type,
	      const char *col, unsigned *idx)
{
	int ret;

	if (cql_grow((void **)&op->spans, &op->spans_cap, op->nspans + 1, sizeof(*op->spans)) < 0) {
		cql_op_fail(op, SM_CQL_ERR_SERVER, "out of memory");
		return -ENOMEM;
	}
	ret = cql_value(op, t, type, col, &op->spans[op->nspans]);
	if (ret < 0)
		return ret;
	*idx = op->nspans++;
	return 0;
}

int
cql_int_option(struct cql_op *op, const struct sm_cql_term *t, const char *what, int64_t min,
	       int64_t max, bool is_long, int64_t *out, bool *present)
{
	struct sm_cql_value_span sp;
	struct sm_bytes b;
	int64_t v = 0;
	unsigned i;
	int ret;

	*present = false;
	if (t == NULL)
		return 0;
	ret = cql_value(op, t, sm_type_simple(is_long ? SM_TYPE_BIGINT : SM_TYPE_INT), what, &sp);
	if (ret < 0)
		return ret;
	if (sp.state == SM_CQL_CONV_UNSET)
		return 0;
	if (sp.state == SM_CQL_CONV_NULL || sp.len == 0) {
		cql_op_fail(op, SM_CQL_ERR_INVALID, "Invalid null value of %s", what);
		return -EINVAL;
	}
	b = cql_span_bytes(op, &sp);
	for (i = 0; i < b.len; i++)
		v = (int64_t)((uint64_t)v << 8) | b.p[i];
	if (!is_long)
		v = (int32_t)(uint32_t)v;
	if (v < min || v > max) {
		cql_op_fail(op, SM_CQL_ERR_INVALID,
			    "Invalid value %lld for %s: it must be in [%lld, %lld]", (long long)v,
			    what, (long long)min, (long long)max);
		return -EINVAL;
	}
	*out = v;
	*present = true;
	return 0;
}

/* ---- values ---- */

int
cql_exec_load_values(struct cql_op *op, const struct sm_cql_values *vals)
{
	const struct sm_cql_stmt *s = op->ps->stmt;
	struct sm_cql_iter it;
	struct sm_cql_value v;
	unsigned i, n = 0;

	if (vals->n != s->nbinds) {
		cql_op_fail(op, SM_CQL_ERR_INVALID,
			    "There were %u markers(?) in CQL but %u bound variables", s->nbinds,
			    vals->n);
		return -EINVAL;
	}
	if (cql_grow((void **)&op->binds, &op->bind_cap, vals->n + 1, sizeof(*op->binds)) < 0) {
		cql_op_fail(op, SM_CQL_ERR_SERVER, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < vals->n; i++)
		op->binds[i].state = SM_CQL_VALUE_UNSET;
	sm_cql_values_iter(&it, vals);
	while (sm_cql_values_next(&it, &v)) {
		if (!vals->named) {
			op->binds[n++] = v;
			continue;
		}
		/* Named values go to every marker of that name. */
		bool found = false;

		for (i = 0; i < s->nbinds; i++) {
			const char *bn = s->binds[i].name ? s->binds[i].name : s->binds[i].column;

			if (bn != NULL && v.name.len == strlen(bn) &&
			    strncasecmp(bn, (const char *)v.name.p, v.name.len) == 0) {
				op->binds[i] = v;
				found = true;
			}
		}
		if (!found) {
			cql_op_fail(op, SM_CQL_ERR_INVALID, "Invalid bind variable name %.*s",
				    (int)SM_MIN(v.name.len, 64u), (const char *)v.name.p);
			return -EINVAL;
		}
	}
	op->nbinds = vals->n;
	op->vctx.binds = op->binds;
	op->vctx.nbinds = op->nbinds;
	return 0;
}

/* ---- USE ---- */

static void
exec_use(struct cql_op *op)
{
	const char *ks = op->ps->stmt->use.ks;
	char *session = sm_cql_conn_keyspace(op->req->conn);

	if (!sm_cql_system_keyspace(ks) && sm_catalog_keyspace(sm_store_catalog(), ks) == NULL) {
		cql_op_fail(op, SM_CQL_ERR_INVALID, "Keyspace '%s' does not exist", ks);
		return;
	}
	if (strlen(ks) >= SM_CQL_KEYSPACE_MAX) {
		cql_op_fail(op, SM_CQL_ERR_INVALID, "Keyspace name %s is too long", ks);
		return;
	}
	strcpy(session, ks);
	sm_cql_buf_reset(&op->out);
	sm_cql_enc_set_keyspace(&op->out, op->stream, sm_cql_str(ks));
	cql_op_finish(op);
}

/* Run a bound statement with @params. Takes op->ps. */
static void
exec_statement(struct cql_op *op, const struct sm_cql_params *params)
{
	const struct sm_cql_stmt *s = op->ps->stmt;

	op->params = params;
	op->req->timeout_kind = op->ps->timeout_kind;
	/* the table's latencies (scylla_column_family_*): statements on one table */
	if (op->ps->table != NULL && !op->ps->system && op->req->cf == NULL)
		op->req->cf = cql_cf_hold(op->ps->table);
	CQL_STAT_INC(stmts[op->ps->metric_kind][op->ps->lwt]);
	if (SM_UNLIKELY(op->ps->metric_kind == CQL_M_BATCH))
		CQL_STAT_ADD(statements_in_batches[op->ps->lwt], s->batch.nstmts);
	if (cql_exec_load_values(op, &params->values) < 0)
		return;
	switch (s->kind) {
	case SM_CQL_USE:
		exec_use(op);
		return;
	case SM_CQL_CREATE_KEYSPACE:
	case SM_CQL_DROP_KEYSPACE:
	case SM_CQL_CREATE_TABLE:
	case SM_CQL_ALTER_TABLE:
	case SM_CQL_ALTER_KEYSPACE:
	case SM_CQL_DROP_TABLE:
	case SM_CQL_TRUNCATE:
	case SM_CQL_CREATE_TYPE:
	case SM_CQL_ALTER_TYPE:
	case SM_CQL_DROP_TYPE:
	case SM_CQL_CREATE_INDEX:
	case SM_CQL_DROP_INDEX:
	case SM_CQL_CREATE_VIEW:
	case SM_CQL_DROP_VIEW:
		if (cql_group_ddl_begin(op) < 0)
			return;
		cql_exec_ddl(op);
		return;
	case SM_CQL_SELECT:
		cql_exec_select(op);
		return;
	case SM_CQL_INSERT:
	case SM_CQL_UPDATE:
	case SM_CQL_DELETE:
		cql_exec_modify(op);
		return;
	case SM_CQL_BATCH:
		cql_exec_modify(op);
		return;
	}
	cql_op_fail(op, SM_CQL_ERR_SERVER, "unknown statement kind");
}

/* ---- PREPARE on every shard ---- */

struct prep_bcast {
	struct cql_op *op;
	struct cql_prepared *ps; /* the origin's */
	unsigned pending;
	char *ks;
	char *text;
	size_t len;
};

static void
prep_on_shard(void *arg)
{
	struct prep_bcast *pb = arg;
	struct cql_prepared *ps;
	char err[256];
	int32_t code;

	if (prepare_text(pb->ks, pb->text, pb->len, &ps, err, sizeof(err), &code) == 0) {
		cache_insert(ps);
		prepared_put(ps);
	}
}

static void
reply_prepared(struct cql_op *op, struct cql_prepared *ps)
{
	struct sm_cql_metadata bind, res;

	memset(&bind, 0, sizeof(bind));
	memset(&res, 0, sizeof(res));
	bind.ncols = ps->nbind;
	bind.cols = ps->bind_specs;
	bind.npk = ps->npk_idx;
	bind.pk_indexes = ps->pk_idx;
	if (ps->table != NULL) {
		bind.ks = sm_cql_str(ps->table->ks);
		bind.table = sm_cql_str(ps->table->name);
	}
	if (ps->lwt)
		bind.flags |= SM_CQL_META_LWT;
	if (ps->nres > 0) {
		res.ncols = ps->nres;
		res.cols = ps->res_specs;
		res.ks = sm_cql_str(ps->table->ks);
		res.table = sm_cql_str(ps->table->name);
	} else {
		res.flags = SM_CQL_META_NO_METADATA;
	}
	sm_cql_buf_reset(&op->out);
	if (sm_cql_enc_prepared(&op->out, op->stream, (struct sm_bytes){ ps->id, 16 },
				(struct sm_bytes){ NULL, 0 }, &bind, &res) < 0) {
		cql_op_fail(op, SM_CQL_ERR_SERVER, "out of memory encoding the Prepared result");
		return;
	}
	cql_op_finish(op);
}

static void
prep_bcast_done(void *arg)
{
	struct prep_bcast *pb = arg;

	if (--pb->pending > 0)
		return;
	reply_prepared(pb->op, pb->ps);
	prepared_put(pb->ps);
	sm_free(pb->ks);
	sm_free(pb->text);
	sm_free(pb);
}

static void
exec_prepare(struct cql_op *op)
{
	struct sm_bytes q = op->req->msg.u.prepare;
	const char *ks = sm_cql_conn_keyspace(op->req->conn);
	struct cql_prepared *ps;
	struct prep_bcast *pb;
	unsigned i, n = sm_shard_count();
	char err[512];
	int32_t code;

	if (prepare_text(ks, (const char *)q.p, q.len, &ps, err, sizeof(err), &code) < 0) {
		cql_op_fail(op, code, "%s", err);
		return;
	}
	cache_insert(ps);
	if (n == 1) {
		reply_prepared(op, ps);
		prepared_put(ps);
		return;
	}
	/* Every shard binds its own copy (its own catalog snapshot and heap). */
	pb = sm_calloc(1, sizeof(*pb));
	if (pb != NULL) {
		pb->ks = sm_strdup(ks);
		pb->text = sm_malloc(q.len + 1);
	}
	if (pb == NULL || pb->ks == NULL || pb->text == NULL) {
		if (pb != NULL) {
			sm_free(pb->ks);
			sm_free(pb->text);
			sm_free(pb);
		}
		/* The other shards answer Unprepared and the driver prepares there. */
		reply_prepared(op, ps);
		prepared_put(ps);
		return;
	}
	memcpy(pb->text, q.p, q.len);
	pb->text[q.len] = '\0';
	pb->len = q.len;
	pb->op = op;
	pb->ps = ps;
	pb->pending = 1;
	for (i = 0; i < n; i++) {
		if (i == sm_shard_id())
			continue;
		pb->pending++;
		if (sm_submit_to(i, prep_on_shard, pb, prep_bcast_done) < 0)
			pb->pending--;
	}
	prep_bcast_done(pb);
}

static void
exec_execute(struct cql_op *op)
{
	const struct sm_cql_execute *ex = &op->req->msg.u.execute;
	struct cql_prepared *ps = NULL, *fresh;
	char err[512];
	int32_t code;

	if (ex->id.len == 16)
		ps = cache_find(ex->id.p);
	if (ps == NULL) {
		cql_op_fail(op, SM_CQL_ERR_UNPREPARED,
			    "Prepared query with ID %02x%02x%02x%02x... not found (either the "
			    "query was not prepared on this host (maybe the host has been "
			    "restarted?) or you have prepared too many queries and it has been "
			    "evicted from the internal cache)",
			    ex->id.len > 3 ? ex->id.p[0] : 0, ex->id.len > 3 ? ex->id.p[1] : 0,
			    ex->id.len > 3 ? ex->id.p[2] : 0, ex->id.len > 3 ? ex->id.p[3] : 0);
		return;
	}
	if (!ps->system &&
	    memcmp(&ps->version, &sm_store_catalog()->version, sizeof(ps->version)) != 0) {
		/* The schema changed since: bind the text again. */
		if (prepare_text(ps->ks, ps->text, ps->len, &fresh, err, sizeof(err), &code) < 0) {
			cache_remove(ps);
			cql_op_fail(op, code, "%s", err);
			return;
		}
		cache_insert(fresh);
		prepared_put(fresh);
		ps = fresh;
	}
	ps->refs++;
	op->ps = ps;
	exec_statement(op, &ex->params);
}

static void
exec_query(struct cql_op *op)
{
	const struct sm_cql_query *q = &op->req->msg.u.query;
	char err[512];
	int32_t code;

	if (prepare_text(sm_cql_conn_keyspace(op->req->conn), (const char *)q->query.p,
			 q->query.len, &op->ps, err, sizeof(err), &code) < 0) {
		cql_op_fail(op, code, "%s", err);
		return;
	}
	exec_statement(op, &q->params);
}

int
cql_exec_prepare_text(const char *ks, struct sm_bytes text, struct cql_prepared **out, char *err,
		      size_t errlen, int32_t *code)
{
	return prepare_text(ks, (const char *)text.p, text.len, out, err, errlen, code);
}

struct cql_prepared *
cql_exec_lookup(struct sm_bytes id)
{
	struct cql_prepared *ps;

	if (id.len != 16)
		return NULL;
	ps = cache_find(id.p);
	if (ps != NULL)
		ps->refs++;
	return ps;
}

void
cql_exec_put(struct cql_prepared *ps)
{
	prepared_put(ps);
}

static void
exec_request(void *ctx, struct sm_cql_req *req)
{
	struct cql_op *op;

	(void)ctx;
	op = op_get(req);
	if (op == NULL) {
		sm_cql_reply_error(req, SM_CQL_ERR_OVERLOADED, "out of memory");
		return;
	}
	switch (req->msg.opcode) {
	case SM_CQL_OP_QUERY:
		exec_query(op);
		return;
	case SM_CQL_OP_PREPARE:
		exec_prepare(op);
		return;
	case SM_CQL_OP_EXECUTE:
		exec_execute(op);
		return;
	case SM_CQL_OP_BATCH:
		op->params = NULL;
		cql_exec_batch(op, &req->msg.u.batch);
		return;
	default:
		cql_op_fail(op, SM_CQL_ERR_PROTOCOL, "Unexpected message %s",
			    sm_cql_opcode_name(req->msg.opcode)
				    ? sm_cql_opcode_name(req->msg.opcode)
				    : "?");
		return;
	}
}

const struct sm_cql_executor sm_cql_exec = {
	.request = exec_request,
};

/* Idle: free ops beyond what a quiet shard reuses (a burst pooled up to OP_FREE_MAX). */
#define OP_FREE_IDLE 16u

static void
ops_trim(void *arg)
{
	struct cql_op *op;

	(void)arg;
	while (op_nfree > OP_FREE_IDLE && (op = op_free) != NULL) {
		op_free = op->next_free;
		op_nfree--;
		op_destroy(op);
	}
}

static __thread struct sm_idle_hook ops_idle = { .fn = ops_trim };

int
sm_cql_exec_shard_init(const struct sm_cql_exec_config *cfg)
{
	cql_cfg = cfg;
	cql_group_on = cfg != NULL && cfg->group != NULL && cfg->cluster != NULL &&
		       cfg->cluster->npeers > 0;
	memset(&cql_shard, 0, sizeof(cql_shard));
	sm_uuid_gen_init(&cql_shard.gen, sm_shard_id());
	cql_shard.nbuckets = NBUCKETS;
	cql_shard.buckets = sm_calloc(NBUCKETS, sizeof(*cql_shard.buckets));
	if (cql_shard.buckets == NULL)
		return -ENOMEM;
	cql_shard.ready = true;
	if (sm_on_shard())
		sm_shard_on_idle(&ops_idle);
	return 0;
}

void
sm_cql_exec_shard_fini(void)
{
	unsigned i;
	struct cql_op *op;

	if (!cql_shard.ready)
		return;
	cql_cf_shard_fini();
	if (sm_on_shard())
		sm_shard_remove_idle_hook(&ops_idle);
	for (i = 0; i < cql_shard.nbuckets; i++) {
		while (cql_shard.buckets[i] != NULL)
			cache_remove(cql_shard.buckets[i]);
	}
	sm_free(cql_shard.buckets);
	sm_free(cql_shard.insert_seen);
	sm_free(cql_shard.where_used);
	while ((op = op_free) != NULL) {
		op_free = op->next_free;
		op_destroy(op);
	}
	op_nfree = 0;
	cql_shard.ready = false;
}
