/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Schema catalog snapshots. DDL is rare, so this file copies and allocates
 * freely; what matters is that a snapshot never changes once published,
 * so shards read it without locks.
 */

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sm_core.h"
#include "sm_schema.h"
#include "sm_tablets.h"
#include "schema_priv.h"

static char *
dup_str(const char *s)
{
	return s != NULL ? sm_strdup(s) : NULL;
}

void
schema_options_free(struct sm_option *o, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		sm_free(o[i].key);
		sm_free(o[i].value);
	}
	sm_free(o);
}

int
schema_options_add(struct sm_option **o, unsigned *n, const char *key, const char *value)
{
	struct sm_option *v = sm_realloc(*o, (*n + 1) * sizeof(**o));

	if (v == NULL)
		return -ENOMEM;
	*o = v;
	v[*n].key = dup_str(key);
	v[*n].value = dup_str(value);
	if (v[*n].key == NULL || v[*n].value == NULL) {
		sm_free(v[*n].key);
		sm_free(v[*n].value);
		return -ENOMEM;
	}
	(*n)++;
	return 0;
}

const char *
sm_option_get(const struct sm_option *o, unsigned n, const char *key)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (strcasecmp(o[i].key, key) == 0)
			return o[i].value;
	return NULL;
}

void
schema_table_free(struct sm_table *t)
{
	unsigned i;

	for (i = 0; i < t->ncols; i++) {
		sm_free(t->cols[i].name);
		sm_type_free(t->cols[i].type);
	}
	sm_free(t->cols);
	sm_free(t->col_index);
	sm_free(t->ks);
	sm_free(t->name);
	schema_options_free(t->options, t->noptions);
	for (i = 0; i < t->ndropped; i++) {
		sm_free(t->dropped[i].name);
		sm_type_free(t->dropped[i].type);
	}
	sm_free(t->dropped);
	sm_free(t);
}

static void
table_put(struct sm_table *t)
{
	if (__atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL) == 0)
		schema_table_free(t);
}

void
schema_keyspace_put(struct sm_keyspace *k)
{
	unsigned i;

	if (__atomic_sub_fetch(&k->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	for (i = 0; i < k->ntables; i++)
		table_put(k->tables[i]);
	sm_free(k->tables);
	for (i = 0; i < k->ntypes; i++)
		sm_type_free(k->types[i]);
	sm_free(k->types);
	sm_free(k->name);
	schema_options_free(k->replication, k->nreplication);
	sm_free(k);
}

void
sm_table_get(const struct sm_table *t)
{
	__atomic_add_fetch(&((struct sm_table *)(uintptr_t)t)->refs, 1, __ATOMIC_RELAXED);
}

void
sm_table_put(const struct sm_table *t)
{
	table_put((struct sm_table *)(uintptr_t)t);
}

void
sm_catalog_get(struct sm_catalog *c)
{
	__atomic_add_fetch(&c->refs, 1, __ATOMIC_RELAXED);
}

void
sm_catalog_put(struct sm_catalog *c)
{
	unsigned i;

	if (c == NULL || __atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	for (i = 0; i < c->nks; i++)
		schema_keyspace_put(c->ks[i]);
	sm_free(c->ks);
	sm_free(c);
}

struct sm_catalog *
sm_catalog_new(void)
{
	struct sm_catalog *c = sm_calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->refs = 1;
	sm_uuid_random(&c->version);
	return c;
}

/* A new snapshot sharing every keyspace of @cur, with a new version. */
struct sm_catalog *
schema_catalog_copy(const struct sm_catalog *cur)
{
	struct sm_catalog *c = sm_catalog_new();
	unsigned i;

	if (c == NULL)
		return NULL;
	c->next_slot = cur->next_slot;
	if (cur->nks > 0) {
		c->ks = sm_malloc(cur->nks * sizeof(*c->ks));
		if (c->ks == NULL) {
			sm_free(c);
			return NULL;
		}
	}
	for (i = 0; i < cur->nks; i++) {
		c->ks[i] = cur->ks[i];
		__atomic_add_fetch(&c->ks[i]->refs, 1, __ATOMIC_RELAXED);
	}
	c->nks = cur->nks;
	return c;
}

int
schema_keyspace_index(const struct sm_catalog *c, const char *ks)
{
	unsigned i;

	for (i = 0; i < c->nks; i++)
		if (strcmp(c->ks[i]->name, ks) == 0)
			return (int)i;
	return -1;
}

const struct sm_keyspace *
sm_catalog_keyspace(const struct sm_catalog *c, const char *ks)
{
	int i = schema_keyspace_index(c, ks);

	return i < 0 ? NULL : c->ks[i];
}

int
schema_table_index(const struct sm_keyspace *k, const char *name)
{
	unsigned i;

	for (i = 0; i < k->ntables; i++)
		if (strcmp(k->tables[i]->name, name) == 0)
			return (int)i;
	return -1;
}

const struct sm_table *
sm_catalog_table(const struct sm_catalog *c, const char *ks, const char *table)
{
	const struct sm_keyspace *k = sm_catalog_keyspace(c, ks);
	int i;

	if (k == NULL)
		return NULL;
	i = schema_table_index(k, table);
	return i < 0 ? NULL : k->tables[i];
}

/* Up to this many columns a scan finds one faster than hashing its name. */
#define COL_SCAN_MAX 16

static uint32_t
name_hash(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* The slot of @name in t->col_index: its column's, or the empty one that ends the probe. */
static uint32_t
col_slot(const struct sm_table *t, const char *name)
{
	uint32_t i = name_hash(name) & t->col_index_mask;

	while (t->col_index[i] != 0 && strcmp(t->cols[t->col_index[i] - 1].name, name) != 0)
		i = (i + 1) & t->col_index_mask;
	return i;
}

/* Apart, so that the scan of a narrow table stays as lean as it was. */
static __attribute__((noinline)) const struct sm_column *
column_by_index(const struct sm_table *t, const char *name)
{
	unsigned i = t->col_index[col_slot(t, name)];

	return i != 0 ? &t->cols[i - 1] : NULL;
}

const struct sm_column *
sm_table_column(const struct sm_table *t, const char *name)
{
	unsigned i, n = t->ncols;

	if (SM_UNLIKELY(n > COL_SCAN_MAX))
		return column_by_index(t, name);
	/* the first byte first: most names differ there, and a call to strcmp() costs more */
	for (i = 0; i < n; i++)
		if (t->cols[i].name[0] == name[0] && strcmp(t->cols[i].name, name) == 0)
			return &t->cols[i];
	return NULL;
}

/*
 * CQL's rule; with @wide the DynamoDB one Alternator tables need (ScyllaDB
 * relaxes it the same way): up to 255 characters, '.' and '-' allowed.
 */
bool
schema_valid_name(const char *s, bool wide)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > (wide ? 255u : SM_NAME_MAX))
		return false;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' &&
		    !(wide && (s[i] == '.' || s[i] == '-')))
			return false;
	return true;
}

/*
 * Replication as drivers expect to read it back: the class fully
 * qualified, and NetworkTopologyStrategy's replication_factor expanded into
 * one entry per data center (we have one).
 */
int
schema_expand_replication(const struct sm_keyspace_def *def, struct sm_keyspace *k, char *err,
			  size_t errlen)
{
	const char *cls = sm_option_get(def->replication, def->nreplication, "class");
	const char *full, *rf = NULL, *dc = NULL;
	bool nts;
	unsigned i;
	int ret;

	if (cls == NULL) {
		snprintf(err, errlen, "Missing mandatory replication strategy class");
		return -EINVAL;
	}
	if (strcasecmp(cls, "SimpleStrategy") == 0 ||
	    strcmp(cls, "org.apache.cassandra.locator.SimpleStrategy") == 0) {
		full = "org.apache.cassandra.locator.SimpleStrategy";
		nts = false;
		if (sm_option_get(def->replication, def->nreplication, "replication_factor") ==
		    NULL) {
			snprintf(err, errlen,
				 "SimpleStrategy requires a replication_factor strategy option.");
			return -EINVAL;
		}
	} else if (strcasecmp(cls, "NetworkTopologyStrategy") == 0 ||
		   strcmp(cls, "org.apache.cassandra.locator.NetworkTopologyStrategy") == 0) {
		full = "org.apache.cassandra.locator.NetworkTopologyStrategy";
		nts = true;
	} else if (strcasecmp(cls, "LocalStrategy") == 0 ||
		   strcasecmp(cls, "EverywhereStrategy") == 0) {
		full = cls;
		nts = false;
	} else {
		snprintf(err, errlen, "Unable to find replication strategy class '%s'", cls);
		return -EINVAL;
	}
	ret = schema_options_add(&k->replication, &k->nreplication, "class", full);
	for (i = 0; ret == 0 && i < def->nreplication; i++) {
		const struct sm_option *o = &def->replication[i];
		char *end;

		if (strcasecmp(o->key, "class") == 0)
			continue;
		if (strtol(o->value, &end, 10) < 0 || *end != '\0' || end == o->value) {
			snprintf(err, errlen,
				 "Replication factor must be non-negative integer; found %s",
				 o->value);
			return -EINVAL;
		}
		if (!nts) {
			ret = schema_options_add(&k->replication, &k->nreplication, o->key, o->value);
			continue;
		}
		/* NetworkTopologyStrategy takes the cluster's data centers only
		 * (ScyllaDB's network_topology_strategy.cc validate_options()), so
		 * what it keeps is bounded by them, not by the request. */
		if (strcmp(o->key, "replication_factor") == 0) {
			rf = o->value;
		} else if (strcasecmp(o->key, "replication_factor") == 0) {
			snprintf(err, errlen,
				 "'%s' is not a valid option, did you mean (lowercase) "
				 "'replication_factor'?",
				 o->key);
			return -EINVAL;
		} else if (strcmp(o->key, SM_DATACENTER) == 0) {
			dc = o->value;
		} else {
			snprintf(err, errlen,
				 "Unrecognized strategy option {%s} passed to NetworkTopologyStrategy",
				 o->key);
			return -EINVAL;
		}
	}
	/* ks_prop_defs.cc prepare_options(): NetworkTopologyStrategy needs a factor */
	if (ret == 0 && nts && dc == NULL && rf == NULL) {
		snprintf(err, errlen, "Configuration for at least one datacenter must be present");
		return -EINVAL;
	}
	/* An explicit factor for the data center wins over replication_factor. */
	if (ret == 0 && (dc != NULL || rf != NULL))
		ret = schema_options_add(&k->replication, &k->nreplication, SM_DATACENTER,
				  dc != NULL ? dc : rf);
	if (ret < 0)
		snprintf(err, errlen, "out of memory");
	return ret;
}

int
schema_tablets_check(const struct sm_keyspace *k, char *err, size_t errlen)
{
	const char *cls = sm_option_get(k->replication, k->nreplication, "class");
	const char *dot;

	if (!k->tablets || cls == NULL ||
	    strcmp(cls, "org.apache.cassandra.locator.NetworkTopologyStrategy") == 0)
		return 0;
	/* locator/simple_strategy.cc (and local_, everywhere_) validate_options() */
	dot = strrchr(cls, '.');
	snprintf(err, errlen, "%s doesn't support tablet replication", dot ? dot + 1 : cls);
	return -EINVAL;
}

static int
publish(struct sm_catalog *c, struct sm_catalog **next)
{
	*next = c;
	return 0;
}

int
sm_catalog_create_keyspace(const struct sm_catalog *cur, const struct sm_keyspace_def *def,
			   bool if_not_exists, struct sm_catalog **next, char *err, size_t errlen)
{
	struct sm_keyspace *k, **v;
	struct sm_catalog *c;
	int ret;

	*next = NULL;
	if (schema_keyspace_index(cur, def->name) >= 0) {
		if (if_not_exists)
			return 1;
		snprintf(err, errlen, "Keyspace %s already exists", def->name);
		return -EEXIST;
	}
	if (!schema_valid_name(def->name, def->wide_names)) {
		snprintf(err, errlen,
			 "Keyspace name must not be empty, more than %u characters long, or "
			 "contain non-alphanumeric-underscore characters (got \"%s\")",
			 SM_NAME_MAX, def->name);
		return -ENAMETOOLONG; /* an invalid request, not a configuration error */
	}
	k = sm_calloc(1, sizeof(*k));
	if (k == NULL)
		goto nomem;
	k->refs = 1;
	k->durable_writes = def->durable_writes;
	k->tablets = def->tablets;
	k->initial_tablets = SM_MIN(def->initial_tablets, SM_TABLETS_MAX);
	k->name = dup_str(def->name);
	if (k->name == NULL)
		goto nomem_ks;
	ret = schema_expand_replication(def, k, err, errlen);
	if (ret == 0)
		ret = schema_tablets_check(k, err, errlen);
	if (ret < 0) {
		schema_keyspace_put(k);
		return ret;
	}
	c = schema_catalog_copy(cur);
	if (c == NULL)
		goto nomem_ks;
	v = sm_realloc(c->ks, (c->nks + 1) * sizeof(*v));
	if (v == NULL) {
		sm_catalog_put(c);
		goto nomem_ks;
	}
	c->ks = v;
	c->ks[c->nks++] = k;
	return publish(c, next);
nomem_ks:
	schema_keyspace_put(k);
nomem:
	snprintf(err, errlen, "out of memory");
	return -ENOMEM;
}

int
sm_catalog_drop_keyspace(const struct sm_catalog *cur, const char *ks, bool if_exists,
			 struct sm_catalog **next, char *err, size_t errlen)
{
	struct sm_catalog *c;
	int i = schema_keyspace_index(cur, ks);

	*next = NULL;
	if (i < 0) {
		if (if_exists)
			return 1;
		snprintf(err, errlen, "Cannot drop non existing keyspace '%s'.", ks);
		return -ENOENT;
	}
	c = schema_catalog_copy(cur);
	if (c == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	schema_keyspace_put(c->ks[i]);
	memmove(&c->ks[i], &c->ks[i + 1], (c->nks - (unsigned)i - 1) * sizeof(*c->ks));
	c->nks--;
	return publish(c, next);
}

/* Cassandra's column order: key columns in key order, then static and
 * regular columns each sorted by name. */
static int
column_order(const void *a, const void *b)
{
	const struct sm_column *x = a, *y = b;

	if (x->kind != y->kind)
		return (int)x->kind - (int)y->kind;
	if (x->kind == SM_COL_PARTITION || x->kind == SM_COL_CLUSTERING)
		return (int)x->pos - (int)y->pos;
	return strcmp(x->name, y->name);
}

/* User types come from the keyspace the table is created in (schema_priv.h). */
static const struct sm_type *
find_udt(void *ctx, const char *ks, const char *name)
{
	const struct sm_keyspace *k = ctx;

	return strcmp(k->name, ks) == 0 ? sm_keyspace_type(k, name) : NULL;
}

void
schema_type_resolver(const struct sm_keyspace *k, struct sm_type_resolver *r)
{
	r->find = find_udt;
	r->ctx = (void *)(uintptr_t)k;
	r->ks = k->name;
}

const struct sm_type *
sm_keyspace_type(const struct sm_keyspace *k, const char *name)
{
	unsigned i;

	for (i = 0; k != NULL && i < k->ntypes; i++)
		if (strcmp(k->types[i]->name, name) == 0)
			return k->types[i];
	return NULL;
}

/* A non-frozen user type holding a non-frozen collection (at any depth of its fields). */
static bool
udt_has_multicell(const struct sm_type *t)
{
	unsigned i;

	for (i = 0; i < t->nfields; i++)
		if (sm_type_is_multicell(t->fields[i]) ||
		    (t->fields[i]->kind == SM_TYPE_UDT && udt_has_multicell(t->fields[i])))
			return true;
	return false;
}

int
schema_check_column(const struct sm_column *col, char *err, size_t errlen)
{
	bool key = col->kind == SM_COL_PARTITION || col->kind == SM_COL_CLUSTERING;

	if (strlen(col->name) > SM_NAME_MAX) {
		snprintf(err, errlen, "Column name must not be more than %u characters long (got \"%s\")",
			 SM_NAME_MAX, col->name);
		return -EINVAL;
	}

	/* create_table_statement.cc: the key checks, then the non-frozen UDT's fields */
	if (key && sm_type_is_collection(col->type) && !col->type->frozen) {
		snprintf(err, errlen, "Invalid non-frozen collection type for PRIMARY KEY component %s",
			 col->name);
		return -EINVAL;
	}
	if (key && col->type->kind == SM_TYPE_UDT && !col->type->frozen) {
		snprintf(err, errlen,
			 "Invalid non-frozen user-defined type for PRIMARY KEY component %s",
			 col->name);
		return -EINVAL;
	}
	if (key && (col->type->kind == SM_TYPE_COUNTER || col->type->kind == SM_TYPE_DURATION)) {
		snprintf(err, errlen, "%s type is not supported for PRIMARY KEY column '%s'",
			 col->type->kind == SM_TYPE_COUNTER ? "counter" : "duration", col->name);
		return -EINVAL;
	}
	if (col->type->kind == SM_TYPE_UDT && !col->type->frozen && udt_has_multicell(col->type)) {
		snprintf(err, errlen,
			 "Non-frozen UDTs with nested non-frozen collections are not supported");
		return -EINVAL;
	}
	return 0;
}

int
schema_table_layout(struct sm_table *t, char *err, size_t errlen)
{
	uint16_t counts[4] = { 0, 0, 0, 0 };
	uint32_t mask, hs;
	unsigned i;

	/* key columns keep the position they were given; the rest sort by name */
	qsort(t->cols, t->ncols, sizeof(*t->cols), column_order);
	for (mask = 1; mask < 2u * t->ncols; mask <<= 1)
		;
	sm_free(t->col_index);
	/* At most half full, so a probe for a missing name ends soon. */
	t->col_index = sm_calloc(mask, sizeof(*t->col_index));
	if (t->col_index == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	t->col_index_mask = mask - 1;
	for (i = 0; i < t->ncols; i++) {
		t->cols[i].id = (uint16_t)i;
		hs = col_slot(t, t->cols[i].name);
		if (t->col_index[hs] != 0) {
			snprintf(err, errlen, "Multiple definition of identifier %s", t->cols[i].name);
			return -EINVAL;
		}
		t->col_index[hs] = (uint16_t)(i + 1);
		if (t->cols[i].kind == SM_COL_STATIC || t->cols[i].kind == SM_COL_REGULAR)
			t->cols[i].pos = counts[t->cols[i].kind]++;
		else
			counts[t->cols[i].kind]++;
	}
	/* A narrow table is scanned: the index only found the duplicates. */
	if (t->ncols <= COL_SCAN_MAX) {
		sm_free(t->col_index);
		t->col_index = NULL;
	}
	t->npk = counts[SM_COL_PARTITION];
	t->nck = counts[SM_COL_CLUSTERING];
	t->nstatic = counts[SM_COL_STATIC];
	t->nregular = counts[SM_COL_REGULAR];
	return 0;
}

static int
build_table(const struct sm_keyspace *k, const struct sm_table_def *def, uint32_t slot,
	    struct sm_table **out, char *err, size_t errlen)
{
	struct sm_type_resolver r;
	struct sm_table *t;
	unsigned i, ncounter = 0;
	uint16_t counts[4] = { 0, 0, 0, 0 };
	int ret;

	t = sm_calloc(1, sizeof(*t));
	if (t == NULL)
		goto nomem;
	t->refs = 1;
	t->slot = slot;
	t->default_ttl = def->default_ttl;
	if (k->tablets)
		sm_table_set_tablets(t, sm_tablets_count(k->initial_tablets,
							 sm_tablets_shard_count()));
	if (def->id != NULL)
		t->id = *def->id;
	else
		sm_uuid_random(&t->id);
	t->ks = dup_str(def->ks);
	t->name = dup_str(def->name);
	if (def->ncols > SM_MAX_COLUMNS) {
		snprintf(err, errlen,
			 "Table %s.%s has %u columns: shardmark allows at most %u per table",
			 def->ks, def->name, def->ncols, SM_MAX_COLUMNS);
		ret = -EINVAL;
		goto fail;
	}
	t->cols = sm_calloc(def->ncols ? def->ncols : 1, sizeof(*t->cols));
	if (t->ks == NULL || t->name == NULL || t->cols == NULL)
		goto nomem_t;
	schema_type_resolver(k, &r);
	for (i = 0; i < def->ncols; i++) {
		const struct sm_column_def *cd = &def->cols[i];
		struct sm_column *col = &t->cols[i];

		col->name = dup_str(cd->name);
		if (col->name == NULL)
			goto nomem_t;
		t->ncols++;
		ret = sm_type_parse_in(cd->type, &r, &col->type, err, errlen);
		if (ret < 0)
			goto fail;
		col->kind = cd->kind;
		col->desc = cd->kind == SM_COL_CLUSTERING && cd->desc;
		col->pos = counts[cd->kind]++;
		if (col->type->kind == SM_TYPE_COUNTER)
			ncounter++;
		ret = schema_check_column(col, err, errlen);
		if (ret < 0)
			goto fail;
	}
	ret = schema_table_layout(t, err, errlen);
	if (ret < 0)
		goto fail;
	if (t->npk == 0) {
		snprintf(err, errlen,
			 "No PRIMARY KEY specifed for table '%s' (exactly one required)",
			 def->name);
		ret = -EINVAL;
		goto fail;
	}
	if (t->npk > SM_MAX_KEY_PARTS || t->nck > SM_MAX_KEY_PARTS) {
		snprintf(err, errlen, "too many key components (at most %d)", SM_MAX_KEY_PARTS);
		ret = -EINVAL;
		goto fail;
	}
	if (t->nstatic > 0 && t->nck == 0) {
		snprintf(err, errlen,
			 "Static columns are only useful (and thus allowed) if the table has at "
			 "least one clustering column");
		ret = -EINVAL;
		goto fail;
	}
	if (ncounter > 0) {
		if (ncounter != (unsigned)t->nregular + t->nstatic) {
			snprintf(err, errlen,
				 "Cannot mix counter and non counter columns in the same table");
			ret = -EINVAL;
			goto fail;
		}
		if (def->default_ttl != 0) {
			snprintf(err, errlen,
				 "Cannot set default_time_to_live on a table with counters");
			ret = -EINVAL;
			goto fail;
		}
		t->counter = true;
	}
	for (i = 0; i < def->noptions; i++) {
		ret = schema_options_add(&t->options, &t->noptions, def->options[i].key,
					 def->options[i].value);
		if (ret < 0)
			goto nomem_t;
	}
	*out = t;
	return 0;
nomem_t:
	schema_table_free(t);
nomem:
	snprintf(err, errlen, "out of memory");
	return -ENOMEM;
fail:
	schema_table_free(t);
	return ret;
}

struct sm_keyspace *
schema_keyspace_clone(const struct sm_keyspace *old, unsigned extra_tables)
{
	struct sm_keyspace *k = sm_calloc(1, sizeof(*k));
	unsigned i;

	if (k == NULL)
		return NULL;
	k->refs = 1;
	k->name = dup_str(old->name);
	k->durable_writes = old->durable_writes;
	k->tablets = old->tablets;
	k->initial_tablets = old->initial_tablets;
	k->tables = sm_malloc((old->ntables + extra_tables + 1) * sizeof(*k->tables));
	k->types = sm_malloc((old->ntypes + 1) * sizeof(*k->types));
	if (k->name == NULL || k->tables == NULL || k->types == NULL)
		goto fail;
	for (i = 0; i < old->nreplication; i++)
		if (schema_options_add(&k->replication, &k->nreplication, old->replication[i].key,
				       old->replication[i].value) < 0)
			goto fail;
	for (i = 0; i < old->ntypes; i++) {
		k->types[i] = sm_type_dup(old->types[i]);
		if (k->types[i] == NULL)
			goto fail;
		k->ntypes++;
	}
	for (i = 0; i < old->ntables; i++) {
		k->tables[i] = old->tables[i];
		__atomic_add_fetch(&k->tables[i]->refs, 1, __ATOMIC_RELAXED);
	}
	k->ntables = old->ntables;
	return k;
fail:
	schema_keyspace_put(k);
	return NULL;
}

int
schema_publish_keyspace(const struct sm_catalog *cur, int ki, struct sm_keyspace *k,
			uint32_t extra_slots, struct sm_catalog **next, char *err, size_t errlen)
{
	struct sm_catalog *c = schema_catalog_copy(cur);

	if (c == NULL) {
		schema_keyspace_put(k);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	schema_keyspace_put(c->ks[ki]);
	c->ks[ki] = k;
	c->next_slot = cur->next_slot + extra_slots;
	return publish(c, next);
}

int
sm_catalog_create_table(const struct sm_catalog *cur, const struct sm_table_def *def,
			bool if_not_exists, struct sm_catalog **next, char *err, size_t errlen)
{
	struct sm_keyspace *k, *old;
	struct sm_table *t;
	int ki, ret;

	*next = NULL;
	ki = schema_keyspace_index(cur, def->ks);
	if (ki < 0) {
		snprintf(err, errlen, "Keyspace '%s' does not exist", def->ks);
		return -ENOENT;
	}
	old = cur->ks[ki];
	if (schema_table_index(old, def->name) >= 0) {
		if (if_not_exists)
			return 1;
		snprintf(err, errlen, "Table '%s.%s' already exists", def->ks, def->name);
		return -EEXIST;
	}
	if (!schema_valid_name(def->name, def->wide_names)) {
		snprintf(err, errlen,
			 "Table name must not be empty, more than %u characters long, or contain "
			 "non-alphanumeric-underscore characters (got \"%s\")",
			 SM_NAME_MAX, def->name);
		return -EINVAL;
	}
	ret = build_table(old, def, cur->next_slot, &t, err, errlen);
	if (ret < 0)
		return ret;
	/* Copy the keyspace (its table list changes), share its tables. */
	k = schema_keyspace_clone(old, 1);
	if (k == NULL) {
		schema_table_free(t);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	k->tables[k->ntables++] = t;
	return schema_publish_keyspace(cur, ki, k, 1, next, err, errlen);
}

int
sm_catalog_drop_table(const struct sm_catalog *cur, const char *ks, const char *table,
		      bool if_exists, struct sm_catalog **next, char *err, size_t errlen)
{
	struct sm_keyspace *k;
	int ki, ti;

	*next = NULL;
	ki = schema_keyspace_index(cur, ks);
	ti = ki < 0 ? -1 : schema_table_index(cur->ks[ki], table);
	if (ti < 0) {
		if (if_exists)
			return 1;
		if (ki < 0)
			snprintf(err, errlen, "Keyspace '%s' does not exist", ks);
		else
			snprintf(err, errlen,
				 "Cannot drop non existing table '%s' in keyspace '%s'.", table,
				 ks);
		return -ENOENT;
	}
	k = schema_keyspace_clone(cur->ks[ki], 0);
	if (k == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	table_put(k->tables[ti]);
	memmove(&k->tables[ti], &k->tables[ti + 1],
		(k->ntables - (unsigned)ti - 1) * sizeof(*k->tables));
	k->ntables--;
	return schema_publish_keyspace(cur, ki, k, 0, next, err, errlen);
}
