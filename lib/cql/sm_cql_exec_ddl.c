/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DDL: CREATE / ALTER / DROP KEYSPACE and TABLE, TRUNCATE, CREATE / ALTER /
 * DROP TYPE. Each becomes one store DDL request, applied on shard 0 and
 * installed on every shard before the answer; the schema change goes to
 * the client and, as an event, to every REGISTERed connection.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cql_exec_priv.h"
#include "cql_props_priv.h"
#include "sm_index.h"

struct ddl_ctx {
	struct sm_ddl_req r;
	struct cql_op *op;
	struct sm_column_def *cols;
	struct sm_option *opts;
	struct sm_option *repl;
	enum sm_cql_change_type change;
	enum sm_cql_target target;
	struct cql_table_opts topts; /* CREATE / ALTER TABLE's checked WITH options */
	int32_t einval_code;	     /* the error code of -EINVAL (-EPROTO: a configuration error) */
	/* SM_DDL_CATALOG: what the apply function reads on shard 0 */
	struct sm_type_def type_def;
	struct sm_type_alter type_alter;
	struct sm_table_alter table_alter;
	struct sm_keyspace_alter ks_alter;
	struct sm_index_def index_def;
	char index_base[SM_NAME_MAX + 1]; /* DROP INDEX: the table it indexed */
	struct sm_view_def view_def;
	bool *view_desc; /* CREATE MATERIALIZED VIEW: per clustering column */
};

static void
ddl_ctx_free(struct ddl_ctx *d)
{
	sm_free(d->cols);
	sm_free(d->opts);
	sm_free(d->repl);
	sm_free(d->view_desc);
	cql_table_opts_free(&d->topts);
	sm_free(d);
}

/* A schema change pushed to the REGISTERed connections of every shard. */
struct event_bcast {
	struct sm_cql_schema_change sc;
	unsigned pending;
	char ks[256];
	char name[256];
};

static void
event_push(void *arg)
{
	sm_cql_push_schema_event(&((struct event_bcast *)arg)->sc);
}

static void
event_done(void *arg)
{
	struct event_bcast *eb = arg;

	if (--eb->pending == 0)
		sm_free(eb);
}

static void
broadcast_event(const struct sm_cql_schema_change *sc)
{
	struct event_bcast *eb = sm_calloc(1, sizeof(*eb));
	unsigned i;

	if (eb == NULL)
		return; /* drivers also refresh from the Schema_change result */
	eb->sc = *sc;
	snprintf(eb->ks, sizeof(eb->ks), "%.*s", (int)sc->keyspace.len,
		 (const char *)sc->keyspace.p);
	snprintf(eb->name, sizeof(eb->name), "%.*s", (int)sc->name.len, (const char *)sc->name.p);
	eb->sc.keyspace = sm_cql_str(eb->ks);
	eb->sc.name = sm_cql_str(eb->name);
	eb->pending = 1;
	for (i = 0; i < sm_shard_count(); i++) {
		eb->pending++;
		if (sm_submit_to(i, event_push, eb, event_done) < 0)
			eb->pending--;
	}
	event_done(eb);
}

static void
ddl_done(struct sm_ddl_req *r);

/* TRUNCATE of an indexed table: then each of its views, one after the other. */
struct trunc_views {
	struct sm_ddl_req r;
	struct ddl_ctx *d;
	unsigned next;
	char view[2 * SM_NAME_MAX + 48];
};

/* The @i-th table that @base's writes keep up to date: an index's view or a materialized view. */
static const struct sm_table *
dependent_nth(const struct sm_keyspace *k, const struct sm_table *base, unsigned i)
{
	const struct sm_table *v = sm_index_nth(k, base, i);
	unsigned n;

	if (v != NULL)
		return v;
	for (n = 0; sm_index_nth(k, base, n) != NULL; n++)
		;
	return i >= n ? sm_view_nth(k, base, i - n) : NULL;
}

static void
truncate_next_view(struct sm_ddl_req *r)
{
	struct trunc_views *tv = r->ctx;
	struct ddl_ctx *d = tv->d;
	const struct sm_table *base = sm_catalog_table(sm_store_catalog(), d->r.ks_name,
						       d->r.table_name);
	const struct sm_table *v =
		dependent_nth(sm_catalog_keyspace(sm_store_catalog(), d->r.ks_name), base, tv->next++);

	if (r->result < 0 && d->r.result == 0) {
		d->r.result = r->result;
		snprintf(d->r.err, sizeof(d->r.err), "%s", r->err);
	}
	if (v == NULL || d->r.result < 0) {
		sm_free(tv);
		ddl_done(&d->r);
		return;
	}
	snprintf(tv->view, sizeof(tv->view), "%s", v->name);
	memset(&tv->r, 0, sizeof(tv->r));
	tv->r.kind = SM_DDL_TRUNCATE;
	tv->r.ks_name = d->r.ks_name;
	tv->r.table_name = tv->view;
	tv->r.done = truncate_next_view;
	tv->r.ctx = tv;
	sm_store_ddl(&tv->r);
}

static void
truncate_done(struct sm_ddl_req *r)
{
	struct ddl_ctx *d = r->ctx;
	struct trunc_views *tv;

	if (r->result < 0 || (tv = sm_calloc(1, sizeof(*tv))) == NULL) {
		ddl_done(r);
		return;
	}
	tv->d = d;
	tv->r.ctx = tv;
	truncate_next_view(&tv->r);
}

/* CREATE INDEX answers once the index holds the table's existing rows. */
static void
index_backfilled(void *arg, int result)
{
	struct ddl_ctx *d = arg;

	if (result < 0) {
		d->r.result = result;
		snprintf(d->r.err, sizeof(d->r.err), "building index %s failed: %s",
			 d->index_def.name ? d->index_def.name : "", strerror(-result));
	}
	ddl_done(&d->r);
}

static void
index_ddl_done(struct sm_ddl_req *r)
{
	struct ddl_ctx *d = r->ctx;
	const struct sm_keyspace *k = sm_catalog_keyspace(sm_store_catalog(), d->index_def.ks);
	const struct sm_table *base = sm_catalog_table(sm_store_catalog(), d->index_def.ks,
						       d->index_def.table);
	const struct sm_table *v = NULL, *x;
	struct sm_index_info info;
	unsigned i;

	for (i = 0; r->result == 0 && (x = sm_index_nth(k, base, i)) != NULL; i++)
		if (sm_index_info(x, base, &info) == 0 && strcmp(info.target->name, d->index_def.column) == 0 &&
		    info.local == d->index_def.local)
			v = x;
	if (v == NULL || sm_index_backfill(v, index_backfilled, d) < 0)
		ddl_done(r);
}

static int
apply_create_index(const struct sm_catalog *cur, const void *arg, struct sm_catalog **next,
		   char *err, size_t errlen)
{
	const struct ddl_ctx *d = arg;

	return sm_catalog_create_index(cur, &d->index_def, next, err, errlen);
}

static int
apply_drop_index(const struct sm_catalog *cur, const void *arg, struct sm_catalog **next,
		 char *err, size_t errlen)
{
	const struct ddl_ctx *d = arg;

	return sm_catalog_drop_index(cur, d->index_def.ks, d->index_def.name, d->r.if_exists, next,
				     err, errlen);
}

static int
apply_drop_table(const struct sm_catalog *cur, const void *arg, struct sm_catalog **next,
		 char *err, size_t errlen)
{
	const struct ddl_ctx *d = arg;

	return sm_catalog_drop_table_indexed(cur, d->r.ks_name, d->r.table_name, d->r.if_exists,
					     next, err, errlen);
}

/* CREATE MATERIALIZED VIEW answers once the view holds the base's existing rows. */
static void
view_backfilled(void *arg, int result)
{
	struct ddl_ctx *d = arg;

	if (result < 0) {
		d->r.result = result;
		snprintf(d->r.err, sizeof(d->r.err), "building materialized view %s failed: %s",
			 d->view_def.name, strerror(-result));
	}
	ddl_done(&d->r);
}

static void
view_ddl_done(struct sm_ddl_req *r)
{
	struct ddl_ctx *d = r->ctx;
	const struct sm_table *v = sm_catalog_table(sm_store_catalog(), d->view_def.ks,
						    d->view_def.name);

	if (r->result != 0 || v == NULL || !sm_table_is_mv(v) ||
	    sm_view_backfill(v, view_backfilled, d) < 0)
		ddl_done(r);
}

static int
apply_create_view(const struct sm_catalog *cur, const void *arg, struct sm_catalog **next,
		  char *err, size_t errlen)
{
	const struct ddl_ctx *d = arg;

	return sm_catalog_create_view(cur, &d->view_def, next, err, errlen);
}

static int
apply_drop_view(const struct sm_catalog *cur, const void *arg, struct sm_catalog **next,
		char *err, size_t errlen)
{
	const struct ddl_ctx *d = arg;

	return sm_catalog_drop_view(cur, d->r.ks_name, d->r.table_name, d->r.if_exists, next, err,
				    errlen);
}

static int
ddl_table_props(struct ddl_ctx *d, const struct sm_cql_prop *props, unsigned n, bool alter);

/* CREATE and DROP MATERIALIZED VIEW (create_view_statement.cc, drop_view_statement.cc) */
static int
ddl_view(struct ddl_ctx *d, const struct sm_cql_stmt *s, const char *ks)
{
	const struct sm_cql_create_view *cv = &s->create_view;
	struct sm_view_def *vd = &d->view_def;
	unsigned i, j;
	int ret;

	d->r.kind = SM_DDL_CATALOG;
	d->r.apply_arg = d;
	d->r.ks_name = ks;
	d->target = SM_CQL_TARGET_TABLE;
	if (s->kind == SM_CQL_DROP_VIEW) {
		d->r.table_name = s->drop_view.table.name;
		d->r.if_exists = s->drop_view.if_exists;
		d->r.apply = apply_drop_view;
		d->change = SM_CQL_CHANGE_DROPPED;
		return 0;
	}
	if (cv->key.compact_storage) {
		snprintf(d->r.err, sizeof(d->r.err),
			 "Cannot use 'COMPACT STORAGE' when defining a materialized view");
		return -EINVAL;
	}
	ret = ddl_table_props(d, cv->key.props, cv->key.nprops, false);
	if (ret < 0)
		return ret;
	d->view_desc = sm_calloc(cv->key.nck + 1, sizeof(*d->view_desc));
	if (d->view_desc == NULL)
		return -ENOMEM;
	for (i = 0; i < cv->key.nclustering_order; i++) {
		const struct sm_cql_order *o = &cv->key.clustering_order[i];

		for (j = 0; j < cv->key.nck && strcmp(cv->key.ck[j], o->col) != 0; j++)
			;
		if (j == cv->key.nck) {
			snprintf(d->r.err, sizeof(d->r.err),
				 "CLUSTERING ORDER BY lists %s which is not a clustering column in "
				 "the view",
				 o->col);
			return -EINVAL;
		}
		d->view_desc[j] = o->desc;
	}
	vd->ks = ks;
	vd->name = cv->view.name;
	vd->base_ks = cv->base.ks != NULL ? cv->base.ks : ks;
	vd->base = cv->base.name;
	vd->if_not_exists = cv->if_not_exists;
	vd->star = cv->star;
	vd->cols = cv->cols;
	vd->ncols = cv->ncols;
	vd->not_null = cv->not_null;
	vd->nnot_null = cv->nnot_null;
	vd->pk = cv->key.pk;
	vd->npk = cv->key.npk;
	vd->ck = cv->key.ck;
	vd->ck_desc = d->view_desc;
	vd->nck = cv->key.nck;
	vd->options = d->topts.opts;
	vd->noptions = d->topts.n;
	vd->default_ttl = d->topts.has_default_ttl ? d->topts.default_ttl : 0;
	d->r.table_name = cv->view.name;
	d->r.apply = apply_create_view;
	d->r.done = view_ddl_done;
	d->change = SM_CQL_CHANGE_CREATED;
	return 0;
}

/* CREATE INDEX and DROP INDEX: the base table changes (ScyllaDB's event). */
static int
ddl_index(struct ddl_ctx *d, const struct sm_cql_stmt *s, const char *ks)
{
	const struct sm_cql_create_index *ci = &s->create_index;
	const struct sm_table *t, *v;
	unsigned i;

	d->r.kind = SM_DDL_CATALOG;
	d->r.apply_arg = d;
	d->r.ks_name = ks;
	d->change = SM_CQL_CHANGE_UPDATED;
	d->target = SM_CQL_TARGET_TABLE;
	d->index_def.ks = ks;
	if (s->kind == SM_CQL_DROP_INDEX) {
		v = sm_index_by_name(sm_catalog_keyspace(sm_store_catalog(), ks),
				     s->drop_index.table.name);
		snprintf(d->index_base, sizeof(d->index_base), "%s",
			 v ? sm_option_get(v->options, v->noptions, SM_INDEX_OPT_BASE) : "");
		d->index_def.name = s->drop_index.table.name;
		d->r.if_exists = s->drop_index.if_exists;
		d->r.apply = apply_drop_index;
		d->r.table_name = d->index_base;
		return 0;
	}
	d->index_def.table = ci->table.name;
	d->index_def.name = ci->name;
	d->index_def.column = ci->column;
	d->index_def.fn = ci->fn;
	d->index_def.if_not_exists = ci->if_not_exists;
	d->index_def.local = ci->nlocal_pk > 0;
	d->r.apply = apply_create_index;
	d->r.table_name = ci->table.name;
	d->r.done = index_ddl_done;
	t = sm_catalog_table(sm_store_catalog(), ks, ci->table.name);
	if (t == NULL || ci->nlocal_pk == 0)
		return 0;
	/* create_index_statement.cc validate_for_local_index() */
	for (i = 0; i < ci->nlocal_pk; i++) {
		const struct sm_column *c = sm_table_column(t, ci->local_pk[i]);

		if (c == NULL || c->kind != SM_COL_PARTITION) {
			snprintf(d->r.err, sizeof(d->r.err),
				 "Local index definition must contain full partition key only. "
				 "Redundant column: %s",
				 ci->local_pk[i]);
			return -EINVAL;
		}
		if (i >= t->npk) {
			snprintf(d->r.err, sizeof(d->r.err),
				 "Duplicate column definition in local index: %s", ci->local_pk[i]);
			return -EINVAL;
		}
		if (c->pos != i)
			break;
	}
	if (i < t->npk) {
		snprintf(d->r.err, sizeof(d->r.err),
			 "Local index definition must contain full partition key only. Missing "
			 "column: %s",
			 t->cols[i].name);
		return -EINVAL;
	}
	return 0;
}

static void
ddl_done(struct sm_ddl_req *r)
{
	struct ddl_ctx *d = r->ctx;
	struct cql_op *op = d->op;
	struct sm_cql_schema_change sc;

	if (r->result < 0) {
		int32_t code = SM_CQL_ERR_INVALID;

		if (r->result == -EEXIST) {
			struct sm_cql_error e;

			memset(&e, 0, sizeof(e));
			e.code = SM_CQL_ERR_ALREADY_EXISTS;
			e.message = sm_cql_str(r->err);
			e.keyspace = sm_cql_str(r->kind == SM_DDL_CREATE_KEYSPACE ? r->ks.name
										  : r->table.ks);
			e.name = sm_cql_str(r->kind == SM_DDL_CREATE_KEYSPACE ? "" : r->table.name);
			sm_cql_buf_reset(&op->out);
			sm_cql_enc_error(&op->out, op->stream, &e);
			cql_op_finish(op);
		} else {
			if (r->kind == SM_DDL_CREATE_KEYSPACE && r->result == -EINVAL)
				code = SM_CQL_ERR_CONFIG;
			else if (r->result == -EINVAL && d->einval_code != 0)
				code = d->einval_code;
			else if (r->result == -EPROTO)
				code = SM_CQL_ERR_CONFIG;
			cql_op_fail(op, code, "%s", r->err);
		}
		goto out;
	}
	sm_cql_buf_reset(&op->out);
	if (r->result == 1 || r->kind == SM_DDL_TRUNCATE) {
		sm_cql_enc_result_void(&op->out, op->stream);
	} else {
		memset(&sc, 0, sizeof(sc));
		sc.change = d->change;
		sc.target = d->target;
		switch (r->kind) {
		case SM_DDL_CREATE_KEYSPACE:
			sc.keyspace = sm_cql_str(r->ks.name);
			break;
		case SM_DDL_DROP_KEYSPACE:
			sc.keyspace = sm_cql_str(r->ks_name);
			break;
		case SM_DDL_CREATE_TABLE:
			sc.keyspace = sm_cql_str(r->table.ks);
			sc.name = sm_cql_str(r->table.name);
			break;
		default:
			sc.keyspace = sm_cql_str(r->ks_name);
			if (d->target != SM_CQL_TARGET_KEYSPACE)
				sc.name = sm_cql_str(r->table_name);
			break;
		}
		sm_cql_enc_schema_change(&op->out, op->stream, &sc);
		broadcast_event(&sc);
	}
	cql_op_finish(op);
out:
	ddl_ctx_free(d);
}

/* struct sm_option holds char *; the store copies what it keeps. */
static char *
unconst(const char *s)
{
	union {
		const char *c;
		char *m;
	} u = { s };

	return u.m;
}

static const char *
ddl_keyspace(struct cql_op *op, const char *ks)
{
	const char *session = sm_cql_conn_keyspace(op->req->conn);

	ks = ks ? ks : session;
	if (ks == NULL || ks[0] == '\0') {
		cql_op_fail(op, SM_CQL_ERR_INVALID,
			    "No keyspace has been specified. USE a keyspace, or explicitly "
			    "specify keyspace.tablename");
		return NULL;
	}
	if (sm_cql_system_keyspace(ks)) {
		cql_op_fail(op, SM_CQL_ERR_UNAUTHORIZED, "%s keyspace is not user-modifiable", ks);
		return NULL;
	}
	return ks;
}

/* @props checked into d->topts; -ECANCELED with @op failed as ScyllaDB fails it. */
static int
ddl_table_props(struct ddl_ctx *d, const struct sm_cql_prop *props, unsigned n, bool alter)
{
	int32_t code;
	int ret;

	ret = cql_table_props(props, n, alter, &d->topts, &code, d->r.err, sizeof(d->r.err));
	if (ret == -EINVAL) {
		cql_op_fail(d->op, code, "%s", d->r.err);
		return -ECANCELED;
	}
	return ret;
}

static int
ddl_create_table(struct ddl_ctx *d, const struct sm_cql_create_table *ct, const char *ks)
{
	unsigned i, j, n = 0, nkeys;
	int ret;

	ret = ddl_table_props(d, ct->props, ct->nprops, false);
	if (ret < 0)
		return ret;
	d->cols = sm_calloc(ct->ncols ? ct->ncols : 1, sizeof(*d->cols));
	if (d->cols == NULL)
		return -ENOMEM;
	/* Key columns first, in key order; then the rest as defined. */
	for (i = 0; i < ct->npk + ct->nck; i++) {
		const char *name = i < ct->npk ? ct->pk[i] : ct->ck[i - ct->npk];

		/* A key column named twice: ScyllaDB takes each definition once
		 * (get_type_and_remove() in create_table_statement.cc), so the
		 * second use is unknown; and d->cols has room for each once. */
		for (j = 0; j < n; j++)
			if (strcmp(d->cols[j].name, name) == 0)
				break;
		if (j < n) {
			snprintf(d->r.err, sizeof(d->r.err),
				 "Unknown definition %s referenced in PRIMARY KEY", name);
			return -EINVAL;
		}
		for (j = 0; j < ct->ncols; j++) {
			if (strcmp(ct->cols[j].name, name) != 0)
				continue;
			d->cols[n].name = name;
			d->cols[n].type = ct->cols[j].type;
			d->cols[n].kind = i < ct->npk ? SM_COL_PARTITION : SM_COL_CLUSTERING;
			break;
		}
		if (j == ct->ncols) {
			snprintf(d->r.err, sizeof(d->r.err),
				 "Unknown definition %s referenced in PRIMARY KEY", name);
			return -EINVAL;
		}
		for (j = 0; j < ct->nclustering_order && i >= ct->npk; j++)
			if (strcmp(ct->clustering_order[j].col, name) == 0)
				d->cols[n].desc = ct->clustering_order[j].desc;
		n++;
	}
	nkeys = n;
	for (j = 0; j < ct->ncols; j++) {
		bool key = false;

		/* only against the key columns: a wide table stays linear */
		for (i = 0; i < nkeys && !key; i++)
			key = strcmp(d->cols[i].name, ct->cols[j].name) == 0;
		if (key)
			continue;
		d->cols[n].name = ct->cols[j].name;
		d->cols[n].type = ct->cols[j].type;
		d->cols[n].kind = ct->cols[j].is_static ? SM_COL_STATIC : SM_COL_REGULAR;
		n++;
	}
	d->r.kind = SM_DDL_CREATE_TABLE;
	d->r.if_exists = ct->if_not_exists;
	d->r.table.ks = ks;
	d->r.table.name = ct->table.name;
	d->r.table.cols = d->cols;
	d->r.table.ncols = n;
	d->r.table.options = d->topts.opts;
	d->r.table.noptions = d->topts.n;
	d->r.table.default_ttl = d->topts.has_default_ttl ? d->topts.default_ttl : 0;
	d->change = SM_CQL_CHANGE_CREATED;
	d->target = SM_CQL_TARGET_TABLE;
	return 0;
}

/* ---- ALTER TABLE and ALTER KEYSPACE ---- */

static int
apply_alter_table(const struct sm_catalog *cur, const void *arg, struct sm_catalog **next,
		  char *err, size_t errlen)
{
	const struct ddl_ctx *d = arg;
	const struct sm_table_alter *a = &d->table_alter;
	const struct sm_table *base = sm_catalog_table(cur, a->ks, a->name), *v;
	struct sm_index_info info;
	unsigned i, j;

	/* alter_table_statement.cc: an indexed column stays */
	for (i = 0; a->kind == SM_TABLE_ALTER_DROP && base != NULL && i < a->ncols; i++) {
		for (j = 0; (v = sm_index_nth(sm_catalog_keyspace(cur, a->ks), base, j)) != NULL;
		     j++) {
			if (sm_index_info(v, base, &info) == 0 &&
			    strcmp(info.target->name, a->cols[i].name) == 0) {
				snprintf(err, errlen,
					 "Cannot drop column %s because it has dependent secondary "
					 "indexes (%s)",
					 a->cols[i].name, info.name);
				return -EINVAL;
			}
		}
	}
	return sm_catalog_alter_table(cur, a, next, err, errlen);
}

static int
apply_alter_keyspace(const struct sm_catalog *cur, const void *arg, struct sm_catalog **next,
		     char *err, size_t errlen)
{
	const struct ddl_ctx *d = arg;

	return sm_catalog_alter_keyspace(cur, &d->ks_alter, next, err, errlen);
}

static const enum sm_table_alter_kind alter_kinds[] = {
	[SM_CQL_ALTER_ADD] = SM_TABLE_ALTER_ADD,       [SM_CQL_ALTER_DROP] = SM_TABLE_ALTER_DROP,
	[SM_CQL_ALTER_TYPE_OF] = SM_TABLE_ALTER_TYPE,  [SM_CQL_ALTER_RENAME] = SM_TABLE_ALTER_RENAME,
	[SM_CQL_ALTER_WITH] = SM_TABLE_ALTER_OPTIONS,
};

static int
ddl_alter_table(struct ddl_ctx *d, const struct sm_cql_alter_table *at, const char *ks)
{
	struct sm_table_alter *a = &d->table_alter;
	unsigned i;
	int64_t ts;
	bool has;
	int ret;

	a->kind = alter_kinds[at->kind];
	a->ks = ks;
	a->name = at->table.name;
	if (at->ncols > 0) {
		d->cols = sm_calloc(at->ncols, sizeof(*d->cols));
		if (d->cols == NULL)
			return -ENOMEM;
		for (i = 0; i < at->ncols; i++) {
			d->cols[i].name = at->cols[i].name;
			d->cols[i].type = at->cols[i].type;
			d->cols[i].kind = at->cols[i].is_static ? SM_COL_STATIC : SM_COL_REGULAR;
		}
		a->cols = d->cols;
		a->ncols = at->ncols;
	}
	a->from = at->from;
	a->to = at->to;
	a->nrenames = at->nrenames;
	if (at->kind == SM_CQL_ALTER_DROP) {
		ret = cql_int_option(d->op, at->timestamp, "[timestamp]", INT64_MIN + 1, INT64_MAX,
				     true, &ts, &has);
		if (ret < 0)
			return -ECANCELED;
		a->drop_time_us = has ? ts : sm_store_now_us();
	}
	if (at->kind == SM_CQL_ALTER_WITH) {
		ret = ddl_table_props(d, at->props, at->nprops, true);
		if (ret < 0)
			return ret;
		a->options = d->topts.opts;
		a->noptions = d->topts.n;
		a->set_default_ttl = d->topts.has_default_ttl;
		a->default_ttl = d->topts.default_ttl;
	}
	d->r.kind = SM_DDL_CATALOG;
	d->r.apply = apply_alter_table;
	d->r.apply_arg = d;
	d->r.ks_name = ks;
	d->r.table_name = at->table.name;
	d->change = SM_CQL_CHANGE_UPDATED;
	d->target = SM_CQL_TARGET_TABLE;
	return 0;
}

int
sm_cql_tablets_mode_parse(const char *name, enum sm_cql_tablets_mode *mode)
{
	static const char *const names[] = { "disabled", "enabled", "enforced" };
	unsigned i;

	for (i = 0; i < SM_ARRAY_SIZE(names); i++) {
		if (name != NULL && strcmp(name, names[i]) == 0) {
			*mode = (enum sm_cql_tablets_mode)i;
			return 0;
		}
	}
	return -EINVAL;
}

static bool
nts_class(const struct sm_cql_kv *repl, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (strcmp(repl[i].key, "class") == 0)
			return strcasecmp(repl[i].value, "NetworkTopologyStrategy") == 0 ||
			       strcmp(repl[i].value,
				      "org.apache.cassandra.locator.NetworkTopologyStrategy") == 0;
	return false;
}

/*
 * tablets = {...} of CREATE or ALTER KEYSPACE into *@on and *@initial (left
 * as they are when @prop is NULL), with the checks and messages of
 * ScyllaDB's ks_prop_defs.cc get_initial_tablets(): 'enabled' 'true' or
 * 'false' (false wins over the rest; refused when @enforce and the mode is
 * enforced, as CREATE does), 'initial' a count, nothing else. 0, or
 * -ECANCELED after failing @op.
 */
static int
ddl_tablets(struct cql_op *op, const struct sm_cql_prop *prop, bool enforce, bool *on,
	    uint32_t *initial)
{
	const char *enabled = NULL, *init = NULL;
	unsigned i;

	if (prop == NULL)
		return 0;
	for (i = 0; i < prop->nmap; i++) {
		const struct sm_cql_kv *kv = &prop->map[i];

		if (strcmp(kv->key, "enabled") == 0)
			enabled = kv->value;
		else if (strcmp(kv->key, "initial") == 0)
			init = kv->value;
	}
	if (enabled != NULL && strcmp(enabled, "false") == 0) {
		if (enforce && cql_cfg->tablets_mode == SM_CQL_TABLETS_ENFORCED) {
			cql_op_fail(op, SM_CQL_ERR_CONFIG,
				    "Cannot disable tablets for keyspace since tablets are enforced "
				    "using the `tablets_mode_for_new_keyspaces: enforced` config "
				    "option.");
			return -ECANCELED;
		}
		*on = false;
		return 0;
	}
	if (enabled != NULL && strcmp(enabled, "true") != 0) {
		cql_op_fail(op, SM_CQL_ERR_CONFIG,
			    "Tablets enabled value must be true or false; found: %s", enabled);
		return -ECANCELED;
	}
	*on = true;
	*initial = 0;
	if (init != NULL) {
		char *end;
		long v;

		errno = 0;
		v = strtol(init, &end, 10);
		if (end == init || *end != '\0' || v < 0 || errno != 0) {
			cql_op_fail(op, SM_CQL_ERR_CONFIG,
				    "Initial tablets value should be numeric; found %s", init);
			return -ECANCELED;
		}
		if (v > (long)SM_TABLETS_MAX) {
			cql_op_fail(op, SM_CQL_ERR_CONFIG,
				    "Initial tablets value %s is over shardmark's limit of %u "
				    "tablets per table",
				    init, SM_TABLETS_MAX);
			return -ECANCELED;
		}
		*initial = (uint32_t)v;
	}
	for (i = 0; i < prop->nmap; i++) {
		if (strcmp(prop->map[i].key, "enabled") != 0 &&
		    strcmp(prop->map[i].key, "initial") != 0) {
			cql_op_fail(op, SM_CQL_ERR_CONFIG, "Unrecognized tablets option %s",
				    prop->map[i].key);
			return -ECANCELED;
		}
	}
	return 0;
}

static int
ddl_create_keyspace_tablets(struct ddl_ctx *d, const struct sm_cql_create_keyspace *ck)
{
	/* ks_prop_defs.cc as_ks_metadata(): the mode's default is for NetworkTopologyStrategy */
	d->r.ks.tablets = cql_cfg->tablets_mode != SM_CQL_TABLETS_DISABLED &&
			  nts_class(ck->replication, ck->nreplication);
	d->r.ks.initial_tablets = 0;
	return ddl_tablets(d->op, ck->tablets, true, &d->r.ks.tablets, &d->r.ks.initial_tablets);
}

static int
ddl_alter_keyspace(struct ddl_ctx *d, const struct sm_cql_alter_keyspace *ak)
{
	struct sm_keyspace_alter *a = &d->ks_alter;
	unsigned i;

	/* alter_keyspace_statement.cc validate() */
	if (sm_cql_system_keyspace(ak->ks)) {
		cql_op_fail(d->op, SM_CQL_ERR_INVALID, "Cannot alter system keyspace");
		return -ECANCELED;
	}
	a->name = ak->ks;
	if (ak->replication != NULL) {
		bool has_class = false;

		for (i = 0; i < ak->nreplication; i++)
			has_class |= strcmp(ak->replication[i].key, "class") == 0;
		if (!has_class && ak->nreplication > 0) {
			cql_op_fail(d->op, SM_CQL_ERR_CONFIG, "Missing replication strategy class");
			return -ECANCELED;
		}
		if (has_class) {
			d->repl = sm_calloc(ak->nreplication, sizeof(*d->repl));
			if (d->repl == NULL)
				return -ENOMEM;
			for (i = 0; i < ak->nreplication; i++) {
				d->repl[i].key = unconst(ak->replication[i].key);
				d->repl[i].value = unconst(ak->replication[i].value);
			}
			a->replication = d->repl;
			a->nreplication = ak->nreplication;
		}
	}
	a->set_durable_writes = ak->has_durable_writes;
	a->durable_writes = ak->durable_writes;
	if (ak->tablets != NULL) {
		const struct sm_keyspace *k = sm_catalog_keyspace(sm_store_catalog(), ak->ks);
		bool on = k != NULL && k->tablets;
		uint32_t initial = k != NULL ? k->initial_tablets : 0;
		int ret = ddl_tablets(d->op, ak->tablets, false, &on, &initial);

		if (ret < 0)
			return ret;
		/* ks_prop_defs.cc as_ks_metadata_update() */
		if (k != NULL && on != k->tablets) {
			cql_op_fail(d->op, SM_CQL_ERR_INVALID,
				    "Cannot alter replication strategy vnode/tablets flavor");
			return -ECANCELED;
		}
		a->set_initial_tablets = true;
		a->initial_tablets = initial;
	}
	d->einval_code = SM_CQL_ERR_CONFIG;
	d->r.kind = SM_DDL_CATALOG;
	d->r.apply = apply_alter_keyspace;
	d->r.apply_arg = d;
	d->r.ks_name = ak->ks;
	d->change = SM_CQL_CHANGE_UPDATED;
	d->target = SM_CQL_TARGET_KEYSPACE;
	return 0;
}

/* ---- user types ---- */

static int
apply_create_type(const struct sm_catalog *cur, const void *arg, struct sm_catalog **next,
		  char *err, size_t errlen)
{
	const struct ddl_ctx *d = arg;

	return sm_catalog_create_type(cur, &d->type_def, d->r.if_exists, next, err, errlen);
}

static int
apply_alter_type(const struct sm_catalog *cur, const void *arg, struct sm_catalog **next,
		 char *err, size_t errlen)
{
	const struct ddl_ctx *d = arg;

	return sm_catalog_alter_type(cur, &d->type_alter, next, err, errlen);
}

static int
apply_drop_type(const struct sm_catalog *cur, const void *arg, struct sm_catalog **next,
		char *err, size_t errlen)
{
	const struct ddl_ctx *d = arg;

	return sm_catalog_drop_type(cur, d->r.ks_name, d->r.table_name, d->r.if_exists, next, err,
				    errlen);
}

/* CREATE, ALTER and DROP TYPE in keyspace @ks: one SM_DDL_CATALOG request. */
static void
ddl_type(struct ddl_ctx *d, const struct sm_cql_stmt *s, const char *ks)
{
	d->r.kind = SM_DDL_CATALOG;
	d->r.apply_arg = d;
	d->r.ks_name = ks;
	d->target = SM_CQL_TARGET_TYPE;
	switch (s->kind) {
	case SM_CQL_CREATE_TYPE:
		d->r.apply = apply_create_type;
		d->r.if_exists = s->create_type.if_not_exists;
		d->r.table_name = s->create_type.name.name;
		d->type_def.ks = ks;
		d->type_def.name = s->create_type.name.name;
		d->type_def.field_names = s->create_type.fields;
		d->type_def.field_types = s->create_type.types;
		d->type_def.nfields = s->create_type.nfields;
		d->change = SM_CQL_CHANGE_CREATED;
		break;
	case SM_CQL_ALTER_TYPE:
		d->r.apply = apply_alter_type;
		d->r.table_name = s->alter_type.name.name;
		d->type_alter.kind = (enum sm_type_alter_kind)s->alter_type.kind;
		d->type_alter.ks = ks;
		d->type_alter.name = s->alter_type.name.name;
		d->type_alter.field = s->alter_type.field;
		d->type_alter.type = s->alter_type.type;
		d->type_alter.from = s->alter_type.from;
		d->type_alter.to = s->alter_type.to;
		d->type_alter.nrenames = s->alter_type.nrenames;
		d->change = SM_CQL_CHANGE_UPDATED;
		break;
	default:
		d->r.apply = apply_drop_type;
		d->r.if_exists = s->drop_type.if_exists;
		d->r.table_name = s->drop_type.table.name;
		d->change = SM_CQL_CHANGE_DROPPED;
		break;
	}
}

static __thread const char *view_col; /* view_needs(): the column it found */

/* A materialized view of @t that ALTER TABLE @a would break, or NULL. */
static const struct sm_table *
view_needs(const struct sm_table *t, const struct sm_table_alter *a)
{
	const struct sm_keyspace *k = sm_catalog_keyspace(sm_store_catalog(), t->ks);
	const struct sm_table *v;
	unsigned i, j;

	for (j = 0; (v = sm_view_nth(k, t, j)) != NULL; j++) {
		const char *all = sm_option_get(v->options, v->noptions, SM_VIEW_OPT_ALL);

		if (a->kind == SM_TABLE_ALTER_ADD && all != NULL && strcmp(all, "1") == 0)
			return v;
		for (i = 0; a->kind != SM_TABLE_ALTER_ADD && i < a->ncols; i++)
			if (sm_table_column(v, a->cols[i].name) != NULL) {
				view_col = a->cols[i].name;
				return v;
			}
		for (i = 0; a->kind == SM_TABLE_ALTER_RENAME && i < a->nrenames; i++)
			if (sm_table_column(v, a->from[i]) != NULL) {
				view_col = a->from[i];
				return v;
			}
	}
	return NULL;
}

/* ALTER MATERIALIZED VIEW: WITH options of a view only (alter_view_statement.cc). */
static int
refuse_alter_view(struct ddl_ctx *d, const struct sm_cql_stmt *s, const struct sm_table *t)
{
	if (!s->alter_table.view) {
		snprintf(d->r.err, sizeof(d->r.err), "Cannot use ALTER TABLE on Materialized View");
		return -EINVAL;
	}
	if (!sm_table_is_mv(t)) {
		snprintf(d->r.err, sizeof(d->r.err),
			 "Cannot use ALTER MATERIALIZED VIEW on Table");
		return -EINVAL;
	}
	if (d->table_alter.set_default_ttl && d->table_alter.default_ttl > 0) {
		snprintf(d->r.err, sizeof(d->r.err),
			 "Cannot set or alter default_time_to_live for a materialized view. Data in "
			 "a materialized view always expire at the same time than the corresponding "
			 "data in the parent table.");
		return -EINVAL;
	}
	return 0;
}

/*
 * An index's view changes with its index only (ScyllaDB's drop_table_,
 * alter_table_ and truncate_statement.cc), and a renamed key column would
 * no longer name a column of its views.
 */
static int
refuse_view_ddl(struct ddl_ctx *d, const struct sm_cql_stmt *s)
{
	const struct sm_catalog *cat = sm_store_catalog();
	const struct sm_table *t = NULL, *v;
	struct sm_index_info info;
	unsigned i, j;

	if (s->kind == SM_CQL_DROP_TABLE || s->kind == SM_CQL_TRUNCATE)
		t = sm_catalog_table(cat, d->r.ks_name, d->r.table_name);
	else if (s->kind == SM_CQL_ALTER_TABLE)
		t = sm_catalog_table(cat, d->table_alter.ks, d->table_alter.name);
	if (t == NULL)
		return 0;
	if (s->kind == SM_CQL_ALTER_TABLE && (s->alter_table.view || sm_table_is_mv(t)))
		return refuse_alter_view(d, s, t);
	if (sm_table_is_index(t) || sm_table_is_mv(t)) {
		snprintf(d->r.err, sizeof(d->r.err), "%s",
			 s->kind == SM_CQL_DROP_TABLE ? "Cannot use DROP TABLE on Materialized View"
			 : s->kind == SM_CQL_TRUNCATE
				 ? "Cannot TRUNCATE materialized view directly; must truncate base "
				   "table instead"
				 : "Cannot use ALTER TABLE on Materialized View");
		return -EINVAL;
	}
	if (s->kind == SM_CQL_ALTER_TABLE && (v = view_needs(t, &d->table_alter)) != NULL) {
		if (d->table_alter.kind == SM_TABLE_ALTER_ADD)
			snprintf(d->r.err, sizeof(d->r.err),
				 "not supported by shardmark yet: ALTER TABLE %s ADD on a table "
				 "with a SELECT * materialized view (%s)",
				 t->name, v->name);
		else if (d->table_alter.kind == SM_TABLE_ALTER_DROP)
			/* alter_table_statement.cc's message */
			snprintf(d->r.err, sizeof(d->r.err),
				 "Cannot drop column %s from base table %s.%s: materialized view "
				 "%s needs this column",
				 view_col, t->ks, t->name, v->name);
		else
			snprintf(d->r.err, sizeof(d->r.err),
				 "not supported by shardmark yet: altering or renaming column %s, "
				 "which materialized view %s has",
				 view_col, v->name);
		return -EINVAL;
	}
	if (s->kind != SM_CQL_ALTER_TABLE || d->table_alter.kind != SM_TABLE_ALTER_RENAME)
		return 0;
	for (j = 0; (v = sm_index_nth(sm_catalog_keyspace(cat, t->ks), t, j)) != NULL; j++) {
		for (i = 0; i < d->table_alter.nrenames; i++) {
			if (sm_index_info(v, t, &info) == 0 &&
			    sm_table_column(v, d->table_alter.from[i])) {
				/* alter_table_statement.cc's message; ScyllaDB renames
				 * a key column in the views too, shardmark's views name
				 * their columns after the base's */
				snprintf(d->r.err, sizeof(d->r.err),
					 "Cannot rename column %s because it has dependent "
					 "secondary indexes (%s)",
					 d->table_alter.from[i], info.name);
				return -EINVAL;
			}
		}
	}
	return 0;
}

void
cql_exec_ddl(struct cql_op *op)
{
	const struct sm_cql_stmt *s = op->ps->stmt;
	struct ddl_ctx *d;
	const char *ks;
	unsigned i;
	int ret = 0;

	d = sm_calloc(1, sizeof(*d));
	if (d == NULL) {
		cql_op_fail(op, SM_CQL_ERR_SERVER, "out of memory");
		return;
	}
	d->op = op;
	d->r.done = ddl_done;
	d->r.ctx = d;
	switch (s->kind) {
	case SM_CQL_CREATE_KEYSPACE:
		if (sm_cql_system_keyspace(s->create_keyspace.ks)) {
			sm_free(d);
			cql_op_fail(op, SM_CQL_ERR_UNAUTHORIZED,
				    "%s keyspace is not user-modifiable", s->create_keyspace.ks);
			return;
		}
		d->repl = sm_calloc(s->create_keyspace.nreplication + 1, sizeof(*d->repl));
		if (d->repl == NULL) {
			ret = -ENOMEM;
			break;
		}
		for (i = 0; i < s->create_keyspace.nreplication; i++) {
			d->repl[i].key = unconst(s->create_keyspace.replication[i].key);
			d->repl[i].value = unconst(s->create_keyspace.replication[i].value);
		}
		d->r.kind = SM_DDL_CREATE_KEYSPACE;
		d->r.if_exists = s->create_keyspace.if_not_exists;
		d->r.ks.name = s->create_keyspace.ks;
		d->r.ks.replication = d->repl;
		d->r.ks.nreplication = s->create_keyspace.nreplication;
		d->r.ks.durable_writes = s->create_keyspace.durable_writes;
		d->change = SM_CQL_CHANGE_CREATED;
		d->target = SM_CQL_TARGET_KEYSPACE;
		ret = ddl_create_keyspace_tablets(d, &s->create_keyspace);
		break;
	case SM_CQL_DROP_KEYSPACE:
		if (sm_cql_system_keyspace(s->drop_keyspace.ks)) {
			sm_free(d);
			cql_op_fail(op, SM_CQL_ERR_UNAUTHORIZED,
				    "%s keyspace is not user-modifiable", s->drop_keyspace.ks);
			return;
		}
		d->r.kind = SM_DDL_DROP_KEYSPACE;
		d->r.if_exists = s->drop_keyspace.if_exists;
		d->r.ks_name = s->drop_keyspace.ks;
		d->change = SM_CQL_CHANGE_DROPPED;
		d->target = SM_CQL_TARGET_KEYSPACE;
		break;
	case SM_CQL_CREATE_TABLE:
		ks = ddl_keyspace(op, s->create_table.table.ks);
		if (ks == NULL) {
			sm_free(d);
			return;
		}
		ret = ddl_create_table(d, &s->create_table, ks);
		break;
	case SM_CQL_DROP_TABLE:
	case SM_CQL_TRUNCATE:
		ks = ddl_keyspace(op, s->drop_table.table.ks);
		if (ks == NULL) {
			sm_free(d);
			return;
		}
		d->r.kind = s->kind == SM_CQL_DROP_TABLE ? SM_DDL_DROP_TABLE : SM_DDL_TRUNCATE;
		d->r.if_exists = s->drop_table.if_exists;
		d->r.ks_name = ks;
		d->r.table_name = s->drop_table.table.name;
		if (s->kind == SM_CQL_TRUNCATE &&
		    dependent_nth(sm_catalog_keyspace(sm_store_catalog(), ks),
				  sm_catalog_table(sm_store_catalog(), ks, s->drop_table.table.name),
				  0) != NULL)
			d->r.done = truncate_done;
		if (s->kind == SM_CQL_DROP_TABLE &&
		    dependent_nth(sm_catalog_keyspace(sm_store_catalog(), ks),
				  sm_catalog_table(sm_store_catalog(), ks, s->drop_table.table.name),
				  0) != NULL) {
			/* its indexes go with it; its views refuse it */
			d->r.kind = SM_DDL_CATALOG;
			d->r.apply = apply_drop_table;
			d->r.apply_arg = d;
		}
		d->change = SM_CQL_CHANGE_DROPPED;
		d->target = SM_CQL_TARGET_TABLE;
		break;
	case SM_CQL_CREATE_TYPE:
	case SM_CQL_ALTER_TYPE:
	case SM_CQL_DROP_TYPE:
		ks = ddl_keyspace(op, s->kind == SM_CQL_CREATE_TYPE  ? s->create_type.name.ks
				      : s->kind == SM_CQL_ALTER_TYPE ? s->alter_type.name.ks
								     : s->drop_type.table.ks);
		if (ks == NULL) {
			sm_free(d);
			return;
		}
		ddl_type(d, s, ks);
		break;
	case SM_CQL_ALTER_TABLE:
		ks = ddl_keyspace(op, s->alter_table.table.ks);
		if (ks == NULL) {
			sm_free(d);
			return;
		}
		ret = ddl_alter_table(d, &s->alter_table, ks);
		break;
	case SM_CQL_ALTER_KEYSPACE:
		ret = ddl_alter_keyspace(d, &s->alter_keyspace);
		break;
	case SM_CQL_CREATE_VIEW:
	case SM_CQL_DROP_VIEW:
		ks = ddl_keyspace(op, s->kind == SM_CQL_CREATE_VIEW ? s->create_view.view.ks
								    : s->drop_view.table.ks);
		if (ks == NULL) {
			sm_free(d);
			return;
		}
		ret = ddl_view(d, s, ks);
		break;
	case SM_CQL_CREATE_INDEX:
	case SM_CQL_DROP_INDEX:
		ks = ddl_keyspace(op, s->kind == SM_CQL_CREATE_INDEX ? s->create_index.table.ks
								     : s->drop_index.table.ks);
		if (ks == NULL) {
			sm_free(d);
			return;
		}
		ret = ddl_index(d, s, ks);
		break;
	default:
		sm_free(d);
		cql_op_fail(op, SM_CQL_ERR_SERVER, "unknown DDL statement");
		return;
	}
	if (ret == 0)
		ret = refuse_view_ddl(d, s);
	if (ret < 0) {
		if (ret == -ENOMEM)
			cql_op_fail(op, SM_CQL_ERR_SERVER, "out of memory");
		else if (ret != -ECANCELED) /* -ECANCELED: @op already failed */
			cql_op_fail(op, SM_CQL_ERR_INVALID, "%s", d->r.err);
		ddl_ctx_free(d);
		return;
	}
	sm_store_ddl(&d->r);
}
