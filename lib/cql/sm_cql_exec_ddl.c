/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DDL: CREATE / DROP KEYSPACE and TABLE, TRUNCATE, CREATE / ALTER / DROP
 * TYPE. Each becomes one store DDL request, applied on shard 0 and
 * installed on every shard before the answer; the schema change goes to
 * the client and, as an event, to every REGISTERed connection.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cql_exec_priv.h"

struct ddl_ctx {
	struct sm_ddl_req r;
	struct cql_op *op;
	struct sm_column_def *cols;
	struct sm_option *opts;
	struct sm_option *repl;
	enum sm_cql_change_type change;
	enum sm_cql_target target;
	/* SM_DDL_CATALOG: what the apply function reads on shard 0 */
	struct sm_type_def type_def;
	struct sm_type_alter type_alter;
};

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
			sc.name = sm_cql_str(r->table_name);
			break;
		}
		sm_cql_enc_schema_change(&op->out, op->stream, &sc);
		broadcast_event(&sc);
	}
	cql_op_finish(op);
out:
	sm_free(d->cols);
	sm_free(d->opts);
	sm_free(d->repl);
	sm_free(d);
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

static int
ddl_create_table(struct ddl_ctx *d, const struct sm_cql_create_table *ct, const char *ks)
{
	unsigned i, j, n = 0, nkeys;

	d->cols = sm_calloc(ct->ncols ? ct->ncols : 1, sizeof(*d->cols));
	d->opts = sm_calloc(ct->nprops ? ct->nprops : 1, sizeof(*d->opts));
	if (d->cols == NULL || d->opts == NULL)
		return -ENOMEM;
	/* Key columns first, in key order; then the rest as defined. */
	for (i = 0; i < ct->npk + ct->nck; i++) {
		const char *name = i < ct->npk ? ct->pk[i] : ct->ck[i - ct->npk];

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
	for (i = 0; i < ct->nprops; i++) {
		d->opts[i].key = unconst(ct->props[i].key);
		d->opts[i].value = unconst(ct->props[i].value);
	}
	d->r.kind = SM_DDL_CREATE_TABLE;
	d->r.if_exists = ct->if_not_exists;
	d->r.table.ks = ks;
	d->r.table.name = ct->table.name;
	d->r.table.cols = d->cols;
	d->r.table.ncols = n;
	d->r.table.options = d->opts;
	d->r.table.noptions = ct->nprops;
	d->r.table.default_ttl = ct->has_default_ttl ? ct->default_ttl : 0;
	d->change = SM_CQL_CHANGE_CREATED;
	d->target = SM_CQL_TARGET_TABLE;
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
	default:
		sm_free(d);
		cql_op_fail(op, SM_CQL_ERR_INVALID,
			    "not supported by shardmark: ALTER TABLE (create a new table instead)");
		return;
	}
	if (ret < 0) {
		if (ret == -ENOMEM)
			cql_op_fail(op, SM_CQL_ERR_SERVER, "out of memory");
		else
			cql_op_fail(op, SM_CQL_ERR_INVALID, "%s", d->r.err);
		sm_free(d->cols);
		sm_free(d->opts);
		sm_free(d->repl);
		sm_free(d);
		return;
	}
	sm_store_ddl(&d->r);
}
