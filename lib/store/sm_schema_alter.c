/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Schema changes after creation: user types (CREATE, ALTER and DROP TYPE),
 * ALTER TABLE and ALTER KEYSPACE.
 * As in sm_schema.c, every change builds a new snapshot; a table whose
 * definition changes gets a new object with the same id and storage slot,
 * and the store carries its data over (sm_store.c sync_tables()).
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sm_core.h"
#include "sm_tablets.h"
#include "schema_priv.h"

/* ks.name as a statement writes it (ScyllaDB's ut_name::to_cql_string()). */
static const char *
ut_name(const char *ks, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s.%s", ks, name);
	return buf;
}

/* A deep copy of @old: same id, slot, columns and options; NULL when out of memory. */
static struct sm_table *
table_clone(const struct sm_table *old)
{
	struct sm_table *t = sm_calloc(1, sizeof(*t));
	unsigned i;

	if (t == NULL)
		return NULL;
	t->refs = 1;
	t->id = old->id;
	t->slot = old->slot;
	t->counter = old->counter;
	t->default_ttl = old->default_ttl;
	t->tablet_count = old->tablet_count;
	t->tablet_bits = old->tablet_bits;
	t->ks = sm_strdup(old->ks);
	t->name = sm_strdup(old->name);
	t->cols = sm_calloc(old->ncols ? old->ncols : 1, sizeof(*t->cols));
	if (t->ks == NULL || t->name == NULL || t->cols == NULL)
		goto fail;
	for (i = 0; i < old->ncols; i++) {
		t->cols[i] = old->cols[i];
		t->cols[i].name = sm_strdup(old->cols[i].name);
		t->cols[i].type = sm_type_dup(old->cols[i].type);
		t->ncols++;
		if (t->cols[i].name == NULL || t->cols[i].type == NULL) {
			/* table_free() frees what each column holds */
			if (t->cols[i].type == NULL)
				t->cols[i].type = sm_type_simple(SM_TYPE_INT);
			goto fail;
		}
	}
	for (i = 0; i < old->noptions; i++)
		if (schema_options_add(&t->options, &t->noptions, old->options[i].key,
				       old->options[i].value) < 0)
			goto fail;
	if (old->ndropped > 0) {
		t->dropped = sm_calloc(old->ndropped, sizeof(*t->dropped));
		if (t->dropped == NULL)
			goto fail;
		for (i = 0; i < old->ndropped; i++) {
			t->dropped[i] = old->dropped[i];
			t->dropped[i].name = sm_strdup(old->dropped[i].name);
			t->dropped[i].type = sm_type_dup(old->dropped[i].type);
			t->ndropped++;
			if (t->dropped[i].name == NULL || t->dropped[i].type == NULL)
				goto fail;
		}
	}
	if (schema_table_layout(t, NULL, 0) < 0)
		goto fail;
	return t;
fail:
	schema_table_free(t);
	return NULL;
}

/* Replace @k's table @i by @t (taking its reference). */
static void
keyspace_set_table(struct sm_keyspace *k, unsigned i, struct sm_table *t)
{
	struct sm_table *old = k->tables[i];

	k->tables[i] = t;
	if (__atomic_sub_fetch(&old->refs, 1, __ATOMIC_ACQ_REL) == 0)
		schema_table_free(old);
}

static int
nomem(char *err, size_t errlen)
{
	snprintf(err, errlen, "out of memory");
	return -ENOMEM;
}

int
sm_catalog_create_type(const struct sm_catalog *cur, const struct sm_type_def *def,
		       bool if_not_exists, struct sm_catalog **next, char *err, size_t errlen)
{
	const struct sm_type *stack[16], **fields = stack, *udt;
	struct sm_type_resolver r;
	const struct sm_keyspace *old;
	struct sm_keyspace *k;
	char qn[512];
	unsigned i, n = 0;
	int ki, ret;

	*next = NULL;
	ki = schema_keyspace_index(cur, def->ks);
	if (ki < 0) {
		snprintf(err, errlen, "Keyspace '%s' does not exist", def->ks);
		return -ENOENT;
	}
	old = cur->ks[ki];
	if (sm_keyspace_type(old, def->name) != NULL) {
		if (if_not_exists)
			return 1;
		snprintf(err, errlen, "A user type of name %s already exists",
			 ut_name(def->ks, def->name, qn, sizeof(qn)));
		return -EINVAL;
	}
	if (!schema_valid_name(def->name, false)) {
		snprintf(err, errlen,
			 "User type name must not be empty, more than %u characters long, or "
			 "contain non-alphanumeric-underscore characters (got \"%s\")",
			 SM_NAME_MAX, def->name);
		return -EINVAL;
	}
	if (def->nfields > SM_TYPE_MAX_FIELDS) {
		snprintf(err, errlen, "A user type cannot have more than %u fields",
			 SM_TYPE_MAX_FIELDS);
		return -EINVAL;
	}
	if (def->nfields > SM_ARRAY_SIZE(stack)) {
		fields = sm_malloc(def->nfields * sizeof(*fields));
		if (fields == NULL)
			return nomem(err, errlen);
	}
	schema_type_resolver(old, &r);
	for (i = 0; i < def->nfields; i++) {
		ret = sm_type_parse_in(def->field_types[i], &r, &fields[i], err, errlen);
		if (ret < 0)
			goto fail;
		n++;
	}
	/* takes the fields, even on failure */
	n = 0;
	ret = sm_type_udt(def->ks, def->name, def->field_names, fields, def->nfields, &udt, err,
			  errlen);
	if (ret < 0)
		goto fail;
	k = schema_keyspace_clone(old, 0);
	if (k == NULL) {
		sm_type_free(udt);
		ret = nomem(err, errlen);
		goto fail;
	}
	k->types[k->ntypes++] = udt;
	ret = schema_publish_keyspace(cur, ki, k, 0, next, err, errlen);
fail:
	for (i = 0; i < n; i++)
		sm_type_free(fields[i]);
	if (fields != stack)
		sm_free(fields);
	return ret;
}

int
sm_catalog_drop_type(const struct sm_catalog *cur, const char *ks, const char *name,
		     bool if_exists, struct sm_catalog **next, char *err, size_t errlen)
{
	const struct sm_keyspace *old;
	struct sm_keyspace *k;
	unsigned i, j, at = 0;
	char qn[512];
	int ki;

	*next = NULL;
	ki = schema_keyspace_index(cur, ks);
	if (ki < 0) {
		if (if_exists)
			return 1;
		snprintf(err, errlen, "Cannot drop type in unknown keyspace %s", ks);
		return -EINVAL;
	}
	old = cur->ks[ki];
	if (sm_keyspace_type(old, name) == NULL) {
		if (if_exists)
			return 1;
		snprintf(err, errlen, "No user type named %s exists.",
			 ut_name(ks, name, qn, sizeof(qn)));
		return -EINVAL;
	}
	/* drop_type_statement.cc: not while another type or a table uses it */
	for (i = 0; i < old->ntypes; i++) {
		if (strcmp(old->types[i]->name, name) == 0) {
			at = i;
			continue;
		}
		if (sm_type_uses_udt(old->types[i], ks, name)) {
			snprintf(err, errlen,
				 "Cannot drop user type %s.%s as it is still used by user type %s",
				 ks, name, old->types[i]->name);
			return -EINVAL;
		}
	}
	for (i = 0; i < old->ntables; i++) {
		for (j = 0; j < old->tables[i]->ncols; j++) {
			if (sm_type_uses_udt(old->tables[i]->cols[j].type, ks, name)) {
				snprintf(err, errlen,
					 "Cannot drop user type %s.%s as it is still used by table "
					 "%s.%s",
					 ks, name, old->tables[i]->ks, old->tables[i]->name);
				return -EINVAL;
			}
		}
	}
	k = schema_keyspace_clone(old, 0);
	if (k == NULL)
		return nomem(err, errlen);
	sm_type_free(k->types[at]);
	memmove(&k->types[at], &k->types[at + 1], (k->ntypes - at - 1) * sizeof(*k->types));
	k->ntypes--;
	return schema_publish_keyspace(cur, ki, k, 0, next, err, errlen);
}

/* The altered definition of @t (alter_type_statement.cc), or -EINVAL with ScyllaDB's message. */
static int
altered_type(const struct sm_keyspace *ks, const struct sm_type *t, const struct sm_type_alter *a,
	     const struct sm_type **out, char *err, size_t errlen)
{
	const struct sm_type **fields = NULL, *nt = NULL;
	const char **names = NULL;
	struct sm_type_resolver r;
	char qn[512], tn[256];
	unsigned i, j, n = t->nfields;
	int idx, ret;

	ut_name(a->ks, a->name, qn, sizeof(qn));
	schema_type_resolver(ks, &r);
	if (a->kind == SM_TYPE_ALTER_ADD) {
		for (i = 0; i < ks->ntables; i++) {
			const struct sm_table *tb = ks->tables[i];

			for (j = 0; j < tb->npk; j++) {
				if (!sm_type_uses_udt(tb->cols[j].type, a->ks, a->name))
					continue;
				snprintf(err, errlen,
					 "Cannot add new field to type %s because it is used in the "
					 "partition key column %s of table %s.%s",
					 qn, tb->cols[j].name, tb->ks, tb->name);
				return -EINVAL;
			}
		}
		if (sm_type_field_index(t, a->field) >= 0) {
			snprintf(err, errlen,
				 "Cannot add new field %s to type %s: a field of the same name "
				 "already exists",
				 a->field, qn);
			return -EINVAL;
		}
		if (n >= SM_TYPE_MAX_FIELDS) {
			snprintf(err, errlen,
				 "Cannot add new field to type %s: maximum number of fields reached",
				 qn);
			return -EINVAL;
		}
		ret = sm_type_parse_in(a->type, &r, &nt, err, errlen);
		if (ret < 0)
			return ret;
		if (sm_type_uses_udt(nt, a->ks, a->name)) {
			sm_type_free(nt);
			snprintf(err, errlen,
				 "Cannot add new field %s of type %s to type %s as this would create "
				 "a circular reference",
				 a->field, a->type, qn);
			return -EINVAL;
		}
	}
	fields = sm_calloc(n + 1, sizeof(*fields));
	names = sm_calloc(n + 1, sizeof(*names));
	if (fields == NULL || names == NULL) {
		ret = nomem(err, errlen);
		goto out;
	}
	for (i = 0; i < n; i++) {
		names[i] = t->field_names[i];
		fields[i] = t->fields[i];
	}
	switch (a->kind) {
	case SM_TYPE_ALTER_ADD:
		names[n] = a->field;
		fields[n++] = nt;
		nt = NULL;
		break;
	case SM_TYPE_ALTER_TYPE:
		idx = sm_type_field_index(t, a->field);
		if (idx < 0) {
			snprintf(err, errlen, "Unknown field %s in type %s", a->field, qn);
			ret = -EINVAL;
			goto out;
		}
		ret = sm_type_parse_in(a->type, &r, &nt, err, errlen);
		if (ret < 0)
			goto out;
		/* only the same type is compatible with itself among what shardmark stores */
		if (!sm_type_equal(nt, t->fields[idx])) {
			sm_type_name(t->fields[idx], tn, sizeof(tn));
			snprintf(err, errlen,
				 "Type %s in incompatible with previous type %s of field %s in user "
				 "type %s",
				 a->type, tn, a->field, qn);
			ret = -EINVAL;
			goto out;
		}
		break;
	case SM_TYPE_ALTER_RENAME:
		for (i = 0; i < a->nrenames; i++) {
			idx = sm_type_field_index(t, a->from[i]);
			if (idx < 0) {
				snprintf(err, errlen, "Unknown field %s in type %s", a->from[i], qn);
				ret = -EINVAL;
				goto out;
			}
			names[idx] = a->to[i];
		}
		break;
	}
	/* sm_type_udt() owns what it gets: copies of t's fields, and the added one */
	for (i = 0; i < t->nfields; i++) {
		fields[i] = sm_type_dup(t->fields[i]);
		if (fields[i] == NULL) {
			for (j = 0; j < i; j++)
				sm_type_free(fields[j]);
			if (n > t->nfields)
				sm_type_free(fields[n - 1]);
			ret = nomem(err, errlen);
			goto out;
		}
	}
	ret = sm_type_udt(t->ks, t->name, names, fields, n, out, err, errlen);
out:
	sm_type_free(nt);
	sm_free(fields);
	sm_free(names);
	return ret;
}

int
sm_catalog_alter_type(const struct sm_catalog *cur, const struct sm_type_alter *a,
		      struct sm_catalog **next, char *err, size_t errlen)
{
	const struct sm_keyspace *old;
	const struct sm_type *t, *nu, *rt;
	struct sm_keyspace *k;
	struct sm_table *nt;
	unsigned i, j;
	char qn[512];
	int ki, ret;

	*next = NULL;
	ki = schema_keyspace_index(cur, a->ks);
	if (ki < 0) {
		snprintf(err, errlen, "Cannot alter type in unknown keyspace %s", a->ks);
		return -EINVAL;
	}
	old = cur->ks[ki];
	t = sm_keyspace_type(old, a->name);
	if (t == NULL) {
		snprintf(err, errlen, "No user type named %s exists.",
			 ut_name(a->ks, a->name, qn, sizeof(qn)));
		return -EINVAL;
	}
	ret = altered_type(old, t, a, &nu, err, errlen);
	if (ret < 0)
		return ret;
	k = schema_keyspace_clone(old, 0);
	if (k == NULL) {
		sm_type_free(nu);
		return nomem(err, errlen);
	}
	/* every type holds copies of those it uses: replace at any depth */
	for (i = 0; i < k->ntypes; i++) {
		if (k->types[i]->kind == SM_TYPE_UDT && strcmp(k->types[i]->name, a->name) == 0) {
			rt = sm_type_dup(nu);
		} else {
			rt = sm_type_replace_udt(k->types[i], nu);
			if (rt == k->types[i])
				continue;
		}
		if (rt == NULL)
			goto nomem_k;
		sm_type_free(k->types[i]);
		k->types[i] = rt;
	}
	for (i = 0; i < k->ntables; i++) {
		const struct sm_table *tb = k->tables[i];
		bool uses = false;

		for (j = 0; j < tb->ncols && !uses; j++)
			uses = sm_type_uses_udt(tb->cols[j].type, a->ks, a->name);
		if (!uses)
			continue;
		nt = table_clone(tb);
		if (nt == NULL)
			goto nomem_k;
		for (j = 0; j < nt->ncols; j++) {
			rt = sm_type_replace_udt(nt->cols[j].type, nu);
			if (rt == NULL) {
				schema_table_free(nt);
				goto nomem_k;
			}
			if (rt != nt->cols[j].type) {
				sm_type_free(nt->cols[j].type);
				nt->cols[j].type = rt;
			}
		}
		keyspace_set_table(k, i, nt);
	}
	sm_type_free(nu);
	return schema_publish_keyspace(cur, ki, k, 0, next, err, errlen);
nomem_k:
	sm_type_free(nu);
	schema_keyspace_put(k);
	return nomem(err, errlen);
}

/* ---- ALTER TABLE (cql3/statements/alter_table_statement.cc) ---- */

static struct sm_column *
clone_column(struct sm_table *t, const char *name)
{
	unsigned i;

	for (i = 0; i < t->ncols; i++)
		if (strcmp(t->cols[i].name, name) == 0)
			return &t->cols[i];
	return NULL;
}

static const struct sm_dropped_column *
dropped_column(const struct sm_table *t, const char *name)
{
	unsigned i;

	for (i = 0; i < t->ndropped; i++)
		if (strcmp(t->dropped[i].name, name) == 0)
			return &t->dropped[i];
	return NULL;
}

/* add_column(): one column into @t, checked against @k's types and @t's history */
static int
alter_add(const struct sm_keyspace *k, struct sm_table *t, const struct sm_column_def *cd,
	  char *err, size_t errlen)
{
	const struct sm_dropped_column *dc;
	const struct sm_column *def = clone_column(t, cd->name);
	struct sm_type_resolver r;
	struct sm_column *cols, *col;
	const struct sm_type *type;
	int ret;

	if (cd->kind == SM_COL_STATIC && t->nck == 0) {
		snprintf(err, errlen,
			 "Static columns are only useful (and thus allowed) if the table has at "
			 "least one clustering column");
		return -EINVAL;
	}
	if (def != NULL) {
		snprintf(err, errlen, "Invalid column name %s because it conflicts with %s",
			 cd->name,
			 def->kind == SM_COL_PARTITION ? "a PRIMARY KEY part" : "an existing column");
		return -EINVAL;
	}
	dc = dropped_column(t, cd->name);
	if (t->counter && dc != NULL) {
		snprintf(err, errlen, "Cannot re-add previously dropped counter column %s",
			 cd->name);
		return -EINVAL;
	}
	schema_type_resolver(k, &r);
	ret = sm_type_parse_in(cd->type, &r, &type, err, errlen);
	if (ret < 0)
		return ret;
	/* old cells of a dropped collection could still be read with the new type (#6276) */
	if (sm_type_is_collection(type) && sm_type_is_multicell(type) && dc != NULL &&
	    sm_type_is_collection(dc->type) && sm_type_is_multicell(dc->type) &&
	    !sm_type_equal(type, dc->type)) {
		sm_type_free(type);
		snprintf(err, errlen,
			 "Cannot add a collection with the name %s because a collection with the "
			 "same name and a different type has already been used in the past",
			 cd->name);
		return -EINVAL;
	}
	if ((type->kind == SM_TYPE_COUNTER) != t->counter) {
		sm_type_free(type);
		snprintf(err, errlen, "Cannot add a %scounter column (%s) in a %scounter column family",
			 t->counter ? "non " : "", cd->name, t->counter ? "" : "non ");
		return -EINVAL;
	}
	if (t->ncols >= SM_MAX_COLUMNS) {
		sm_type_free(type);
		snprintf(err, errlen, "Table %s.%s has %u columns: shardmark allows at most %u per table",
			 t->ks, t->name, t->ncols, SM_MAX_COLUMNS);
		return -EINVAL;
	}
	cols = sm_realloc(t->cols, (t->ncols + 1) * sizeof(*cols));
	if (cols == NULL) {
		sm_type_free(type);
		return nomem(err, errlen);
	}
	t->cols = cols;
	col = &cols[t->ncols];
	memset(col, 0, sizeof(*col));
	col->type = type;
	col->kind = cd->kind == SM_COL_STATIC ? SM_COL_STATIC : SM_COL_REGULAR;
	col->name = sm_strdup(cd->name);
	if (col->name == NULL) {
		sm_type_free(type);
		return nomem(err, errlen);
	}
	t->ncols++;
	return schema_check_column(col, err, errlen);
}

/* drop_column(): @name out of @t, remembered in its dropped columns */
static int
alter_drop(struct sm_table *t, const char *name, int64_t time_us, char *err, size_t errlen)
{
	struct sm_column *col = clone_column(t, name);
	struct sm_dropped_column *d;
	unsigned i;

	if (col == NULL) {
		snprintf(err, errlen, "Column %s was not found in table %s", name, t->name);
		return -EINVAL;
	}
	if (col->kind == SM_COL_PARTITION || col->kind == SM_COL_CLUSTERING) {
		snprintf(err, errlen, "Cannot drop PRIMARY KEY part %s", name);
		return -EINVAL;
	}
	for (i = 0; i < t->ndropped && strcmp(t->dropped[i].name, name) != 0; i++)
		;
	if (i == t->ndropped) {
		d = sm_realloc(t->dropped, (t->ndropped + 1) * sizeof(*d));
		if (d == NULL)
			return nomem(err, errlen);
		t->dropped = d;
		d = &d[t->ndropped++];
		d->name = col->name;
	} else {
		/* one entry per name: the latest drop */
		d = &t->dropped[i];
		sm_free(col->name);
		sm_type_free(d->type);
	}
	d->type = col->type;
	d->kind = col->kind;
	d->time_us = time_us;
	i = (unsigned)(col - t->cols);
	memmove(col, col + 1, (t->ncols - i - 1) * sizeof(*col));
	t->ncols--;
	return 0;
}

/* alter_column(): only to the same type (no other pair is value-compatible in the store) */
static int
alter_type_of(const struct sm_keyspace *k, struct sm_table *t, const struct sm_column_def *cd,
	      char *err, size_t errlen)
{
	const struct sm_column *col = clone_column(t, cd->name);
	struct sm_type_resolver r;
	const struct sm_type *type;
	char tn[256];
	int ret;

	if (col == NULL) {
		snprintf(err, errlen, "Column %s was not found in table %s", cd->name, t->name);
		return -EINVAL;
	}
	schema_type_resolver(k, &r);
	ret = sm_type_parse_in(cd->type, &r, &type, err, errlen);
	if (ret < 0)
		return ret;
	if (!sm_type_equal(type, col->type)) {
		sm_type_name(col->type, tn, sizeof(tn));
		snprintf(err, errlen, "Cannot change %s from type %s to type %s: types are %s.",
			 cd->name, tn, cd->type,
			 col->kind == SM_COL_CLUSTERING ? "not order-compatible" : "incompatible");
		ret = -EPROTO; /* a configuration_exception */
	}
	sm_type_free(type);
	return ret;
}

/* validate_column_rename() */
static int
alter_rename(struct sm_table *t, const char *from, const char *to, char *err, size_t errlen)
{
	struct sm_column *col = clone_column(t, from);
	char *name;

	if (col == NULL) {
		snprintf(err, errlen, "Cannot rename unknown column %s in table %s", from, t->name);
		return -EINVAL;
	}
	if (clone_column(t, to) != NULL) {
		snprintf(err, errlen,
			 "Cannot rename column %s to %s in table %s; another column of that name "
			 "already exist",
			 from, to, t->name);
		return -EINVAL;
	}
	if (col->kind != SM_COL_PARTITION && col->kind != SM_COL_CLUSTERING) {
		snprintf(err, errlen, "Cannot rename non PRIMARY KEY part %s", from);
		return -EINVAL;
	}
	name = sm_strdup(to);
	if (name == NULL)
		return nomem(err, errlen);
	sm_free(col->name);
	col->name = name;
	return 0;
}

/* WITH: each option replaces the one of its key */
static int
alter_options(struct sm_table *t, const struct sm_table_alter *a, char *err, size_t errlen)
{
	unsigned i, j;

	if (a->set_default_ttl && a->default_ttl > 0 && t->counter) {
		snprintf(err, errlen, "Cannot set default_time_to_live on a table with counters");
		return -EINVAL;
	}
	for (i = 0; i < a->noptions; i++) {
		const struct sm_option *o = &a->options[i];
		char *v;

		for (j = 0; j < t->noptions && strcmp(t->options[j].key, o->key) != 0; j++)
			;
		if (j == t->noptions) {
			if (schema_options_add(&t->options, &t->noptions, o->key, o->value) < 0)
				return nomem(err, errlen);
			continue;
		}
		v = sm_strdup(o->value);
		if (v == NULL)
			return nomem(err, errlen);
		sm_free(t->options[j].value);
		t->options[j].value = v;
	}
	if (a->set_default_ttl)
		t->default_ttl = a->default_ttl;
	return 0;
}

int
sm_catalog_alter_table(const struct sm_catalog *cur, const struct sm_table_alter *a,
		       struct sm_catalog **next, char *err, size_t errlen)
{
	const struct sm_keyspace *old;
	struct sm_keyspace *k;
	struct sm_table *t;
	unsigned i;
	int ki, ti, ret = 0;

	*next = NULL;
	ki = schema_keyspace_index(cur, a->ks);
	if (ki < 0) {
		snprintf(err, errlen, "Keyspace %s does not exist", a->ks);
		return -ENOENT;
	}
	old = cur->ks[ki];
	ti = schema_table_index(old, a->name);
	if (ti < 0) {
		snprintf(err, errlen, "unconfigured table %s", a->name);
		return -ENOENT;
	}
	t = table_clone(old->tables[ti]);
	if (t == NULL)
		return nomem(err, errlen);
	switch (a->kind) {
	case SM_TABLE_ALTER_ADD:
		for (i = 0; i < a->ncols && ret == 0; i++)
			ret = alter_add(old, t, &a->cols[i], err, errlen);
		break;
	case SM_TABLE_ALTER_DROP:
		for (i = 0; i < a->ncols && ret == 0; i++)
			ret = alter_drop(t, a->cols[i].name, a->drop_time_us, err, errlen);
		break;
	case SM_TABLE_ALTER_TYPE:
		ret = alter_type_of(old, t, &a->cols[0], err, errlen);
		if (ret == 0) { /* the same type: nothing changes */
			schema_table_free(t);
			return 1;
		}
		break;
	case SM_TABLE_ALTER_RENAME:
		for (i = 0; i < a->nrenames && ret == 0; i++)
			ret = alter_rename(t, a->from[i], a->to[i], err, errlen);
		break;
	case SM_TABLE_ALTER_OPTIONS:
		ret = alter_options(t, a, err, errlen);
		break;
	}
	if (ret == 0)
		ret = schema_table_layout(t, err, errlen);
	if (ret < 0) {
		schema_table_free(t);
		return ret;
	}
	k = schema_keyspace_clone(old, 0);
	if (k == NULL) {
		schema_table_free(t);
		return nomem(err, errlen);
	}
	keyspace_set_table(k, (unsigned)ti, t);
	return schema_publish_keyspace(cur, ki, k, 0, next, err, errlen);
}

/* ---- ALTER KEYSPACE (cql3/statements/alter_keyspace_statement.cc) ---- */

int
sm_catalog_alter_keyspace(const struct sm_catalog *cur, const struct sm_keyspace_alter *a,
			  struct sm_catalog **next, char *err, size_t errlen)
{
	struct sm_keyspace_def def;
	struct sm_keyspace *k;
	int ki, ret;

	*next = NULL;
	ki = schema_keyspace_index(cur, a->name);
	if (ki < 0) {
		snprintf(err, errlen, "Can't find a keyspace %s", a->name);
		return -ENOENT;
	}
	k = schema_keyspace_clone(cur->ks[ki], 0);
	if (k == NULL)
		return nomem(err, errlen);
	if (a->replication != NULL) {
		memset(&def, 0, sizeof(def));
		def.name = a->name;
		def.replication = a->replication;
		def.nreplication = a->nreplication;
		schema_options_free(k->replication, k->nreplication);
		k->replication = NULL;
		k->nreplication = 0;
		ret = schema_expand_replication(&def, k, err, errlen);
		if (ret == 0)
			ret = schema_tablets_check(k, err, errlen);
		if (ret < 0) {
			schema_keyspace_put(k);
			return ret;
		}
	}
	if (a->set_durable_writes)
		k->durable_writes = a->durable_writes;
	if (a->set_initial_tablets && k->tablets)
		k->initial_tablets = SM_MIN(a->initial_tablets, SM_TABLETS_MAX);
	return schema_publish_keyspace(cur, ki, k, 0, next, err, errlen);
}
