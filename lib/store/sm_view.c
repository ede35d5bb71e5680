/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CQL materialized views, the catalog side (sm_index.h): the view table
 * and ScyllaDB's checks and messages (cql3/statements/create_view_statement.cc,
 * drop_view_statement.cc). Keeping views up to date is sm_index.c's.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema_priv.h"
#include "sm_core.h"
#include "sm_index.h"

#define TYPE_TEXT_MAX 1024u
#define VIEW_NAME_MAX SM_CQL_NAME_LENGTH /* schema::NAME_LENGTH */

const char *
sm_view_base(const struct sm_table *t)
{
	return sm_option_get(t->options, t->noptions, SM_VIEW_OPT_BASE);
}

bool
sm_table_is_mv(const struct sm_table *t)
{
	return sm_view_base(t) != NULL;
}

const struct sm_table *
sm_view_nth(const struct sm_keyspace *k, const struct sm_table *base, unsigned i)
{
	unsigned j;

	for (j = 0; k != NULL && base != NULL && j < k->ntables; j++) {
		const char *b = sm_view_base(k->tables[j]);

		if (b != NULL && strcmp(b, base->name) == 0 && i-- == 0)
			return k->tables[j];
	}
	return NULL;
}

static bool
listed(const char *const *names, unsigned n, const char *name)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return true;
	return false;
}

/* validate_primary_key() of create_view_statement.cc; true for a base regular column. */
static int
check_key_column(const struct sm_table *base, const struct sm_view_def *def, const char *name,
		 const struct sm_column **out, char *err, size_t errlen)
{
	const struct sm_column *c = sm_table_column(base, name);

	if (c == NULL) {
		snprintf(err, errlen,
			 "Unknown column name detected in CREATE MATERIALIZED VIEW statement: %s",
			 name);
		return -EINVAL;
	}
	if (sm_type_is_multicell(c->type)) {
		snprintf(err, errlen,
			 "Cannot use MultiCell column '%s' in PRIMARY KEY of materialized view", name);
		return -EINVAL;
	}
	if (c->type->kind == SM_TYPE_DURATION) {
		snprintf(err, errlen,
			 "Cannot use Duration column '%s' in PRIMARY KEY of materialized view", name);
		return -EINVAL;
	}
	if (c->kind == SM_COL_STATIC) {
		snprintf(err, errlen,
			 "Cannot use Static column '%s' in PRIMARY KEY of materialized view", name);
		return -EINVAL;
	}
	/* a single partition key column is never null */
	if (!(c->kind == SM_COL_PARTITION && base->npk == 1) &&
	    !listed(def->not_null, def->nnot_null, name)) {
		snprintf(err, errlen,
			 "Primary key column '%s' is required to be filtered by 'IS NOT NULL'", name);
		return -EINVAL;
	}
	*out = c;
	return 0;
}

static int
check_view(const struct sm_catalog *cur, const struct sm_table *base,
	   const struct sm_view_def *def, char *err, size_t errlen)
{
	const struct sm_keyspace *k = sm_catalog_keyspace(cur, def->ks);
	const struct sm_column *c;
	const char *gc = sm_option_get(base->options, base->noptions, "gc_grace_seconds");
	char missing[512];
	size_t at = 0;
	unsigned i, j, nonpk = 0;
	int ret;

	if (base->counter) {
		snprintf(err, errlen, "Materialized views are not supported on counter tables");
		return -EINVAL;
	}
	if (sm_table_is_mv(base) || sm_table_is_index(base)) {
		snprintf(err, errlen,
			 "Materialized views cannot be created against other materialized views");
		return -EINVAL;
	}
	if (gc != NULL && strcmp(gc, "0") == 0) {
		snprintf(err, errlen,
			 "Cannot create materialized view '%s' for base table '%s' with "
			 "gc_grace_seconds of 0, since this value is used to TTL undelivered "
			 "updates. Setting gc_grace_seconds too low might cause undelivered "
			 "updates to expire before being replayed.",
			 def->name, base->name);
		return -EINVAL;
	}
	for (i = 0; i < def->ncols; i++) {
		if (sm_table_column(base, def->cols[i]) == NULL) {
			snprintf(err, errlen,
				 "Unknown column name detected in CREATE MATERIALIZED VIEW "
				 "statement: %s",
				 def->cols[i]);
			return -EINVAL;
		}
	}
	for (i = 0; i < def->nnot_null; i++) {
		if (sm_table_column(base, def->not_null[i]) == NULL) {
			snprintf(err, errlen, "Undefined name %s in where clause ('%s IS NOT NULL')",
				 def->not_null[i], def->not_null[i]);
			return -EINVAL;
		}
	}
	for (i = 0; i < def->npk + def->nck; i++) {
		const char *name = i < def->npk ? def->pk[i] : def->ck[i - def->npk];

		for (j = 0; j < i; j++)
			if (strcmp(name, j < def->npk ? def->pk[j] : def->ck[j - def->npk]) == 0) {
				snprintf(err, errlen, "Duplicate entry found in PRIMARY KEY: %s",
					 name);
				return -EINVAL;
			}
		ret = check_key_column(base, def, name, &c, err, errlen);
		if (ret < 0)
			return ret;
		if (c->kind == SM_COL_REGULAR && nonpk++ > 0) {
			snprintf(err, errlen,
				 "Cannot include more than one non-primary key column '%s' in "
				 "materialized view primary key",
				 name);
			return -EINVAL;
		}
	}
	missing[0] = '\0';
	for (i = 0; i < base->ncols; i++) {
		c = &base->cols[i];
		bool in_key = listed(def->pk, def->npk, c->name) || listed(def->ck, def->nck, c->name);
		bool included = def->star || listed(def->cols, def->ncols, c->name);

		if (included && c->kind == SM_COL_STATIC) {
			snprintf(err, errlen,
				 "Unable to include static column '%s' which would be included by "
				 "Materialized View SELECT * statement",
				 c->name);
			return -EINVAL;
		}
		if ((c->kind == SM_COL_PARTITION || c->kind == SM_COL_CLUSTERING) && !in_key &&
		    at < sizeof(missing))
			at += (size_t)snprintf(missing + at, sizeof(missing) - at, "%s%s",
					       at ? ", " : "", c->name);
		/* each collection element has a timestamp and TTL of its own, which a
		 * view row made of whole cells would lose */
		if (included && !in_key && sm_type_is_multicell(c->type)) {
			snprintf(err, errlen,
				 "not supported by shardmark yet: a materialized view that selects "
				 "the non-frozen collection or user type column %s (select a "
				 "frozen one or leave it out)",
				 c->name);
			return -EINVAL;
		}
	}
	if (missing[0] != '\0') {
		snprintf(err, errlen,
			 "Cannot create Materialized View %s without primary key columns from base "
			 "%s (%s)",
			 def->name, base->name, missing);
		return -EINVAL;
	}
	at = 0;
	for (i = 0; i < def->nnot_null; i++)
		if (!listed(def->pk, def->npk, def->not_null[i]) &&
		    !listed(def->ck, def->nck, def->not_null[i]) && at < sizeof(missing))
			at += (size_t)snprintf(missing + at, sizeof(missing) - at, "%s%s",
					       at ? ", " : "", def->not_null[i]);
	if (at > 0) {
		/* strict_is_not_null_in_views=true, ScyllaDB's default */
		snprintf(err, errlen,
			 "The IS NOT NULL restriction is allowed only columns which are part of the "
			 "view's primary key, found columns: %s. The flag strict_is_not_null_in_views "
			 "can be used to turn this error into a warning, or to silence it. (true - "
			 "error, warn - warning, false - silent)",
			 missing);
		return -EINVAL;
	}
	if (def->npk == 0) {
		snprintf(err, errlen, "Must select at least a column for a Materialized View");
		return -EINVAL;
	}
	if (def->default_ttl > 0) {
		snprintf(err, errlen,
			 "Cannot set or alter default_time_to_live for a materialized view. Data in "
			 "a materialized view always expire at the same time than the corresponding "
			 "data in the parent table.");
		return -EINVAL;
	}
	for (i = 0; sm_view_nth(k, base, i) != NULL; i++)
		;
	if (i >= SM_VIEW_MAX_PER_TABLE) {
		snprintf(err, errlen,
			 "not supported by shardmark: more than %u materialized views on table %s",
			 SM_VIEW_MAX_PER_TABLE, base->name);
		return -EINVAL;
	}
	return 0;
}

int
sm_catalog_create_view(const struct sm_catalog *cur, const struct sm_view_def *def,
		       struct sm_catalog **next, char *err, size_t errlen)
{
	const char *bks = def->base_ks != NULL ? def->base_ks : def->ks;
	const struct sm_table *base, *same;
	struct sm_column_def *cols = NULL;
	char (*types)[TYPE_TEXT_MAX] = NULL;
	struct sm_option *opts = NULL;
	char k_base[32], k_all[32], k_where[32], *where = NULL;
	struct sm_table_def vd;
	size_t wlen = 1, at = 0;
	unsigned i, n = 0;
	int ret;

	*next = NULL;
	if (strcmp(bks, def->ks) != 0) {
		snprintf(err, errlen,
			 "Cannot create a materialized view on a table in a separate keyspace "
			 "('%s' != '%s')",
			 bks, def->ks);
		return -EINVAL;
	}
	for (i = 0; def->name[i] != '\0'; i++) {
		char ch = def->name[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '_'))
			break;
	}
	if (def->name[i] != '\0' || i == 0) {
		snprintf(err, errlen,
			 "\"%s\" is not a valid materialized view name (must contain alphanumeric "
			 "character only: [0-9A-Za-z] or the underscore)",
			 def->name);
		return -EINVAL;
	}
	if (i > VIEW_NAME_MAX) {
		snprintf(err, errlen,
			 "materialized view names shouldn't be more than %u characters long (got "
			 "\"%s\")",
			 VIEW_NAME_MAX, def->name);
		return -EINVAL;
	}
	if (sm_catalog_keyspace(cur, def->ks) == NULL) {
		snprintf(err, errlen, "Keyspace %s does not exist", def->ks);
		return -ENOENT;
	}
	base = sm_catalog_table(cur, def->ks, def->base);
	if (base == NULL) {
		snprintf(err, errlen, "unconfigured table %s", def->base);
		return -ENOENT;
	}
	same = sm_catalog_table(cur, def->ks, def->name);
	if (same != NULL && def->if_not_exists)
		return 1;
	ret = check_view(cur, base, def, err, errlen);
	if (ret < 0)
		return ret;
	cols = sm_calloc(base->ncols + 1, sizeof(*cols));
	types = sm_calloc(base->ncols + 1, sizeof(*types));
	opts = sm_calloc(def->noptions + 3, sizeof(*opts));
	for (i = 0; i < def->nnot_null; i++)
		wlen += strlen(def->not_null[i]) + 18;
	where = sm_malloc(wlen);
	if (cols == NULL || types == NULL || opts == NULL || where == NULL) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	/* the view key in its order, then the selected regular columns */
	for (i = 0; i < def->npk + def->nck; i++) {
		const struct sm_column *c =
			sm_table_column(base, i < def->npk ? def->pk[i] : def->ck[i - def->npk]);

		cols[n].name = c->name;
		cols[n].kind = i < def->npk ? SM_COL_PARTITION : SM_COL_CLUSTERING;
		cols[n].desc = i >= def->npk && def->ck_desc != NULL && def->ck_desc[i - def->npk];
		sm_type_name(c->type, types[n], sizeof(types[n]));
		cols[n].type = types[n];
		n++;
	}
	for (i = 0; i < base->ncols; i++) {
		const struct sm_column *c = &base->cols[i];

		if (c->kind != SM_COL_REGULAR || listed(def->pk, def->npk, c->name) ||
		    listed(def->ck, def->nck, c->name) ||
		    !(def->star || listed(def->cols, def->ncols, c->name)))
			continue;
		cols[n].name = c->name;
		cols[n].kind = SM_COL_REGULAR;
		sm_type_name(c->type, types[n], sizeof(types[n]));
		cols[n].type = types[n];
		n++;
	}
	/* ScyllaDB's where_clause text: the relations as given */
	where[0] = '\0';
	for (i = 0; i < def->nnot_null; i++)
		at += (size_t)snprintf(where + at, wlen - at, "%s%s IS NOT NULL", i ? " AND " : "",
				       def->not_null[i]);
	for (i = 0; i < def->noptions; i++)
		opts[i] = def->options[i];
	/* sm_option's strings are not const; the table copies them */
	snprintf(k_base, sizeof(k_base), SM_VIEW_OPT_BASE);
	snprintf(k_all, sizeof(k_all), SM_VIEW_OPT_ALL);
	snprintf(k_where, sizeof(k_where), SM_VIEW_OPT_WHERE);
	opts[i++] = (struct sm_option){ k_base, (char *)(uintptr_t)base->name };
	opts[i++] = (struct sm_option){ k_all, (char *)(uintptr_t)(def->star ? "1" : "0") };
	opts[i++] = (struct sm_option){ k_where, where };
	memset(&vd, 0, sizeof(vd));
	vd.ks = def->ks;
	vd.name = def->name;
	vd.cols = cols;
	vd.ncols = n;
	vd.options = opts;
	vd.noptions = i;
	ret = sm_catalog_create_table(cur, &vd, def->if_not_exists, next, err, errlen);
out:
	sm_free(cols);
	sm_free(types);
	sm_free(opts);
	sm_free(where);
	return ret;
}

int
sm_catalog_drop_view(const struct sm_catalog *cur, const char *ks, const char *name,
		     bool if_exists, struct sm_catalog **next, char *err, size_t errlen)
{
	const struct sm_table *v = sm_catalog_table(cur, ks, name);

	*next = NULL;
	if (v == NULL) {
		if (if_exists)
			return 1;
		/* migration_manager.cc prepare_view_drop_announcement() */
		snprintf(err, errlen, "Cannot drop non existing materialized view '%s' in keyspace '%s'.",
			 name, ks);
		return -ENOENT;
	}
	if (!sm_table_is_mv(v)) {
		snprintf(err, errlen, "Cannot use DROP MATERIALIZED VIEW on Table");
		return -EINVAL;
	}
	return sm_catalog_drop_table(cur, ks, name, false, next, err, errlen);
}
