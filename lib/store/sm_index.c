/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CQL secondary indexes (sm_index.h): the catalog side (the view table an
 * index is) and the store side (keeping views up to date on the base
 * partition's shard, backfilling a new index in bounded steps).
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema_priv.h"
#include "sm_core.h"
#include "sm_index.h"
#include "sm_store.h"
#include "sm_table.h"
#include "store_priv.h"

#define BACKFILL_STEP_ROWS 128u
#define TYPE_TEXT_MAX 1024u /* a view column's type as CQL text */
#define IMAGE_KEEP (256u << 10) /* bytes of a shard's reused images kept between writes */

/* ---- the catalog ---- */

bool
sm_table_is_index(const struct sm_table *t)
{
	return sm_option_get(t->options, t->noptions, SM_INDEX_OPT_NAME) != NULL;
}

int
sm_index_info(const struct sm_table *view, const struct sm_table *base, struct sm_index_info *out)
{
	const char *b = sm_option_get(view->options, view->noptions, SM_INDEX_OPT_BASE);
	const char *c = sm_option_get(view->options, view->noptions, SM_INDEX_OPT_TARGET);
	const char *l = sm_option_get(view->options, view->noptions, SM_INDEX_OPT_LOCAL);

	memset(out, 0, sizeof(*out));
	out->name = sm_option_get(view->options, view->noptions, SM_INDEX_OPT_NAME);
	if (out->name == NULL || b == NULL || c == NULL || base == NULL || strcmp(b, base->name) != 0)
		return -EINVAL;
	out->base = b;
	out->target = sm_table_column(base, c);
	out->local = l != NULL && strcmp(l, "1") == 0;
	return out->target != NULL ? 0 : -EINVAL;
}

const struct sm_table *
sm_index_nth(const struct sm_keyspace *k, const struct sm_table *base, unsigned i)
{
	struct sm_index_info info;
	unsigned j;

	for (j = 0; k != NULL && j < k->ntables; j++)
		if (sm_index_info(k->tables[j], base, &info) == 0 && i-- == 0)
			return k->tables[j];
	return NULL;
}

const struct sm_table *
sm_index_by_name(const struct sm_keyspace *k, const char *name)
{
	unsigned j;

	for (j = 0; k != NULL && j < k->ntables; j++) {
		const struct sm_table *t = k->tables[j];
		const char *n = sm_option_get(t->options, t->noptions, SM_INDEX_OPT_NAME);

		if (n != NULL && strcmp(n, name) == 0)
			return t;
	}
	return NULL;
}

static bool
view_name_taken(const struct sm_keyspace *k, const char *index)
{
	char vname[2 * SM_NAME_MAX + 48];

	snprintf(vname, sizeof(vname), "%s%s", index, SM_INDEX_VIEW_SUFFIX);
	return schema_table_index(k, vname) >= 0;
}

/* ScyllaDB's default name (database::get_available_index_name): table_column_idx[_N]. */
static void
default_name(const struct sm_keyspace *k, const char *table, const char *col, char *out, size_t n)
{
	char root[2 * SM_NAME_MAX + 8];

	if (n < sizeof(root) + 16)
		return;
	size_t i, j = 0;
	unsigned suffix = 0;

	snprintf(root, sizeof(root), "%s_%s_idx", table, col);
	for (i = 0; root[i] != '\0'; i++)
		if ((root[i] >= 'a' && root[i] <= 'z') || (root[i] >= 'A' && root[i] <= 'Z') ||
		    (root[i] >= '0' && root[i] <= '9') || root[i] == '_')
			root[j++] = root[i];
	root[j] = '\0';
	memcpy(out, root, j + 1);
	while (sm_index_by_name(k, out) != NULL || view_name_taken(k, out))
		snprintf(out, n, "%.*s_%u", (int)sizeof(root), root, ++suffix);
}

/*
 * The collection target's kind, as rewrite_target_for_collection()
 * normalizes it: a plain target or values() of a set indexes its elements
 * (keys), of a map or list its values. NULL for a value index.
 */
static const char *
coll_fn(const struct sm_column *c, const char *fn)
{
	if (!sm_type_is_multicell(c->type) || !sm_type_is_collection(c->type))
		return fn;
	if (fn == NULL || strcmp(fn, "values") == 0)
		return c->type->kind == SM_TYPE_SET ? "keys" : "values";
	return fn;
}

/* The type a collection index is partitioned by, as CQL syntax in @buf. */
static void
coll_type(const struct sm_column *c, const char *fn, char *buf, size_t n)
{
	const struct sm_type *t = c->type;
	char k[TYPE_TEXT_MAX / 2 - 32], v[TYPE_TEXT_MAX / 2 - 32];

	if (strcmp(fn, "keys") == 0) {
		sm_type_name(t->elem, buf, n);
	} else if (strcmp(fn, "values") == 0) {
		sm_type_name(t->kind == SM_TYPE_MAP ? t->val : t->elem, buf, n);
	} else {
		sm_type_name(t->elem, k, sizeof(k));
		sm_type_name(t->val, v, sizeof(v));
		snprintf(buf, n, "frozen<tuple<%s, %s>>", k, v);
	}
}

/* The first of root, root_1, root_2... that @base has no column of (get_available_column_name()). */
static void
free_column_name(const struct sm_table *base, const char *root, char *out, size_t n)
{
	unsigned i = 0;

	snprintf(out, n, "%s", root);
	while (sm_table_column(base, out) != NULL)
		snprintf(out, n, "%s_%u", root, ++i);
}

/* What an index view's key is made of, as ScyllaDB's create_view_for_index(). */
static int
view_columns(const struct sm_table *base, const struct sm_column *target, bool local,
	     const char *fn, char *coll_name, struct sm_column_def *cols, char (*types)[TYPE_TEXT_MAX],
	     unsigned *n)
{
	unsigned i, k = 0;

	if (local) {
		for (i = 0; i < base->npk; i++) {
			cols[k] = (struct sm_column_def){ base->cols[i].name, NULL, SM_COL_PARTITION };
			sm_type_name(base->cols[i].type, types[k], sizeof(types[k]));
			k++;
		}
		cols[k] = (struct sm_column_def){ target->name, NULL, SM_COL_CLUSTERING };
		sm_type_name(target->type, types[k], sizeof(types[k]));
		k++;
	} else {
		if (fn != NULL && strcmp(fn, "full") != 0) {
			/* the collection's elements: a computed column of their own */
			free_column_name(base, "coll_value", coll_name, SM_NAME_MAX + 1);
			cols[k] = (struct sm_column_def){ coll_name, NULL, SM_COL_PARTITION };
			coll_type(target, fn, types[k], sizeof(types[k]));
		} else {
			cols[k] = (struct sm_column_def){ target->name, NULL, SM_COL_PARTITION };
			sm_type_name(target->type, types[k], sizeof(types[k]));
		}
		k++;
		cols[k] = (struct sm_column_def){ SM_INDEX_TOKEN_COL, "bigint", SM_COL_CLUSTERING };
		snprintf(types[k], sizeof(types[k]), "bigint");
		k++;
		for (i = 0; i < base->npk; i++) {
			if (&base->cols[i] == target)
				continue;
			cols[k] = (struct sm_column_def){ base->cols[i].name, NULL, SM_COL_CLUSTERING };
			sm_type_name(base->cols[i].type, types[k], sizeof(types[k]));
			k++;
		}
	}
	if (target->kind != SM_COL_STATIC) {
		for (i = base->npk; i < (unsigned)base->npk + base->nck; i++) {
			if (&base->cols[i] == target)
				continue;
			cols[k] = (struct sm_column_def){ base->cols[i].name, NULL, SM_COL_CLUSTERING,
							  base->cols[i].desc };
			sm_type_name(base->cols[i].type, types[k], sizeof(types[k]));
			k++;
		}
	}
	for (i = 0; i < k; i++)
		cols[i].type = types[i];
	*n = k;
	return 0;
}

/* create_index_statement.cc's validate_while_executing(), for what shardmark indexes. */
static int
check_target(const struct sm_table *base, const struct sm_column *c, const struct sm_index_def *def,
	     char *err, size_t errlen)
{
	if (base->counter) {
		snprintf(err, errlen, "Secondary indexes are not supported on counter tables");
		return -EINVAL;
	}
	if (sm_table_is_index(base) || sm_table_is_mv(base)) {
		snprintf(err, errlen, "Secondary indexes are not supported on materialized views");
		return -EINVAL;
	}
	if (c == NULL) {
		snprintf(err, errlen, "No column definition found for column %s", def->column);
		return -EINVAL;
	}
	if (c->type->kind == SM_TYPE_DURATION) {
		snprintf(err, errlen, "Secondary indexes are not supported on duration columns");
		return -EINVAL;
	}
	if (c->kind == SM_COL_PARTITION && base->npk == 1 && !def->local) {
		snprintf(err, errlen, "Cannot create secondary index on partition key column %s",
			 c->name);
		return -EINVAL;
	}
	if (def->local && c->kind == SM_COL_PARTITION) {
		snprintf(err, errlen,
			 "Local indexing based on partition key column is not allowed, since whole "
			 "base partition key must be used in queries anyway. Use global indexing "
			 "instead.");
		return -EINVAL;
	}
	if (def->local && c->kind == SM_COL_STATIC) {
		snprintf(err, errlen, "Local indexes containing static columns are not supported.");
		return -EINVAL;
	}
	if (def->fn != NULL && !sm_type_is_multicell(c->type) && sm_type_is_collection(c->type) &&
	    strcmp(def->fn, "full") != 0) {
		snprintf(err, errlen, "Cannot create index on %s() of frozen collection column %s",
			 def->fn, c->name);
		return -EINVAL;
	}
	if (def->fn != NULL && strcmp(def->fn, "full") == 0 &&
	    (sm_type_is_multicell(c->type) || !sm_type_is_collection(c->type))) {
		snprintf(err, errlen, "full() indexes can only be created on frozen collections");
		return -EINVAL;
	}
	if (def->fn != NULL && strcmp(def->fn, "full") != 0 && !sm_type_is_collection(c->type)) {
		snprintf(err, errlen,
			 "Cannot create index on %s() of column %s; only non-frozen collections "
			 "support %s() indexes",
			 def->fn, c->name, def->fn);
		return -EINVAL;
	}
	if (!def->fn && sm_type_is_collection(c->type) && !sm_type_is_multicell(c->type)) {
		snprintf(err, errlen,
			 "Cannot create index on value of frozen collection column %s", c->name);
		return -EINVAL;
	}
	if (sm_type_is_multicell(c->type)) {
		if (c->type->kind == SM_TYPE_UDT) {
			snprintf(err, errlen, "Cannot create secondary index on UDT column %s",
				 c->name);
			return -EINVAL;
		}
		if (def->local) {
			snprintf(err, errlen,
				 "Local secondary index on collection column %s is not implemented "
				 "yet.",
				 c->name);
			return -EINVAL;
		}
		if (def->fn != NULL &&
		    (strcmp(def->fn, "keys") == 0 || strcmp(def->fn, "entries") == 0) &&
		    c->type->kind != SM_TYPE_MAP) {
			snprintf(err, errlen,
				 "Cannot create secondary index on %s() of column %s with non-map type",
				 def->fn, c->name);
			return -EINVAL;
		}
	}
	if (sm_table_column(base, SM_INDEX_TOKEN_COL) != NULL && !def->local) {
		snprintf(err, errlen,
			 "not supported by shardmark: a global index on a table with a column "
			 "named %s", SM_INDEX_TOKEN_COL);
		return -EINVAL;
	}
	return 0;
}

int
sm_catalog_create_index(const struct sm_catalog *cur, const struct sm_index_def *def,
			struct sm_catalog **next, char *err, size_t errlen)
{
	const struct sm_keyspace *k = sm_catalog_keyspace(cur, def->ks);
	const struct sm_table *base = sm_catalog_table(cur, def->ks, def->table);
	const struct sm_column *c;
	struct sm_column_def *cols = NULL;
	char (*types)[TYPE_TEXT_MAX] = NULL;
	char name[2 * SM_NAME_MAX + 32], vname[2 * SM_NAME_MAX + 48];
	char k_name[32], k_base[32], k_target[32], k_local[32], v_local[2], k_fn[32], v_fn[8];
	char coll_name[SM_NAME_MAX + 1];
	const char *fn;
	struct sm_option opts[5];
	struct sm_table_def vd;
	unsigned i, n;
	int ret;

	*next = NULL;
	if (k == NULL) {
		snprintf(err, errlen, "Keyspace %s does not exist", def->ks);
		return -ENOENT;
	}
	if (base == NULL) {
		snprintf(err, errlen, "unconfigured table %s", def->table);
		return -ENOENT;
	}
	c = sm_table_column(base, def->column);
	ret = check_target(base, c, def, err, errlen);
	if (ret < 0)
		return ret;
	if (def->name != NULL && def->name[0] != '\0') {
		if (strlen(def->name) > SM_NAME_MAX) {
			snprintf(err, errlen,
				 "index names shouldn't be more than %u characters long (got \"%s\")",
				 SM_NAME_MAX, def->name);
			return -EINVAL;
		}
		const struct sm_table *same = sm_index_by_name(k, def->name);
		struct sm_index_info si;

		if (same != NULL) {
			/* ScyllaDB: IF NOT EXISTS is a no-op only for this very index */
			if (def->if_not_exists && sm_index_info(same, base, &si) == 0 &&
			    si.target == c && si.local == def->local &&
			    strcmp(sm_option_get(same->options, same->noptions, SM_INDEX_OPT_FN) ?: "",
				   coll_fn(c, def->fn) ?: "") == 0)
				return 1;
			snprintf(err, errlen, "Index already exists");
			return -EINVAL;
		}
		snprintf(name, sizeof(name), "%s", def->name);
	} else {
		default_name(k, base->name, c->name, name, sizeof(name));
	}
	for (i = 0;; i++) {
		const struct sm_table *v = sm_index_nth(k, base, i);
		struct sm_index_info info;

		if (v == NULL)
			break;
		if (sm_index_info(v, base, &info) == 0 && info.target == c && info.local == def->local &&
		    strcmp(sm_option_get(v->options, v->noptions, SM_INDEX_OPT_FN) ?: "",
			   coll_fn(c, def->fn) ?: "") == 0) {
			if (def->if_not_exists)
				return 1;
			snprintf(err, errlen, "Index %s is a duplicate of existing index %s", name,
				 info.name);
			return -EINVAL;
		}
	}
	snprintf(vname, sizeof(vname), "%s%s", name, SM_INDEX_VIEW_SUFFIX);
	if (sm_catalog_table(cur, def->ks, vname) != NULL) {
		snprintf(err, errlen, "Index %s cannot be created, because table %s already exists",
			 name, vname);
		return -EINVAL;
	}
	cols = sm_calloc((size_t)base->npk + base->nck + 2, sizeof(*cols));
	types = sm_calloc((size_t)base->npk + base->nck + 2, sizeof(*types));
	if (cols == NULL || types == NULL) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	fn = coll_fn(c, def->fn);
	view_columns(base, c, def->local, fn, coll_name, cols, types, &n);
	/* sm_option's strings are not const; the table copies them */
	snprintf(k_name, sizeof(k_name), SM_INDEX_OPT_NAME);
	snprintf(k_base, sizeof(k_base), SM_INDEX_OPT_BASE);
	snprintf(k_target, sizeof(k_target), SM_INDEX_OPT_TARGET);
	snprintf(k_local, sizeof(k_local), SM_INDEX_OPT_LOCAL);
	snprintf(v_local, sizeof(v_local), "%d", def->local ? 1 : 0);
	opts[0] = (struct sm_option){ k_name, name };
	opts[1] = (struct sm_option){ k_base, base->name };
	opts[2] = (struct sm_option){ k_target, c->name };
	opts[3] = (struct sm_option){ k_local, v_local };
	snprintf(k_fn, sizeof(k_fn), SM_INDEX_OPT_FN);
	snprintf(v_fn, sizeof(v_fn), "%s", fn != NULL ? fn : "");
	opts[4] = (struct sm_option){ k_fn, v_fn };
	memset(&vd, 0, sizeof(vd));
	vd.ks = def->ks;
	vd.name = vname;
	vd.cols = cols;
	vd.ncols = n;
	vd.options = opts;
	vd.noptions = 5;
	/* the view's name may be longer than a table's: it is never typed */
	vd.wide_names = true;
	ret = sm_catalog_create_table(cur, &vd, false, next, err, errlen);
out:
	sm_free(cols);
	sm_free(types);
	return ret;
}

int
sm_catalog_drop_index(const struct sm_catalog *cur, const char *ks, const char *name,
		      bool if_exists, struct sm_catalog **next, char *err, size_t errlen)
{
	const struct sm_keyspace *k = sm_catalog_keyspace(cur, ks);
	const struct sm_table *v = sm_index_by_name(k, name);

	*next = NULL;
	if (v == NULL) {
		if (if_exists)
			return 1;
		snprintf(err, errlen, "Index '%s' could not be found in any of the tables of keyspace '%s'",
			 name, ks);
		return -ENOENT;
	}
	return sm_catalog_drop_table(cur, ks, v->name, false, next, err, errlen);
}

int
sm_catalog_drop_table_indexed(const struct sm_catalog *cur, const char *ks, const char *table,
			      bool if_exists, struct sm_catalog **next, char *err, size_t errlen)
{
	const struct sm_table *base = sm_catalog_table(cur, ks, table);
	struct sm_catalog *c = NULL, *n;
	const struct sm_table *v;
	char vname[2 * SM_NAME_MAX + 32];
	int ret;

	if (base != NULL && sm_view_nth(sm_catalog_keyspace(cur, ks), base, 0) != NULL) {
		/* migration_manager.cc prepare_column_family_drop_announcement() */
		size_t at = (size_t)snprintf(err, errlen,
					     "Cannot drop table when materialized views still "
					     "depend on it (%s.{", ks);
		unsigned i;

		for (i = 0; (v = sm_view_nth(sm_catalog_keyspace(cur, ks), base, i)) != NULL &&
			    at < errlen;
		     i++)
			at += (size_t)snprintf(err + at, errlen - at, "%s%s", i ? ", " : "", v->name);
		if (at < errlen)
			snprintf(err + at, errlen - at, "})");
		*next = NULL;
		return -EINVAL;
	}
	ret = sm_catalog_drop_table(cur, ks, table, if_exists, next, err, errlen);
	if (ret != 0 || base == NULL)
		return ret;
	/* the base is gone from *next; its views name it still */
	c = *next;
	for (;;) {
		const struct sm_keyspace *k = sm_catalog_keyspace(c, ks);
		unsigned j;

		v = NULL;
		for (j = 0; k != NULL && j < k->ntables && v == NULL; j++) {
			const char *b = sm_option_get(k->tables[j]->options, k->tables[j]->noptions,
						      SM_INDEX_OPT_BASE);

			if (b != NULL && sm_table_is_index(k->tables[j]) && strcmp(b, table) == 0)
				v = k->tables[j];
		}
		if (v == NULL)
			break;
		snprintf(vname, sizeof(vname), "%s", v->name);
		ret = sm_catalog_drop_table(c, ks, vname, false, &n, err, errlen);
		sm_catalog_put(c);
		if (ret < 0) {
			*next = NULL;
			return ret;
		}
		c = n;
	}
	*next = c;
	return 0;
}

/* ---- the store: each shard's view of which tables have indexes ---- */

#define SRC_TOKEN (-1)
#define SRC_ELEM (-2) /* the collection element the view row is for */

enum coll_kind {
	CK_VALUE,   /* the column's value (a frozen collection's whole value too) */
	CK_KEYS,    /* a map's keys, a set's elements */
	CK_VALUES,  /* a map's or a list's values */
	CK_ENTRIES, /* a map's (key, value) pairs, as a tuple */
};

struct idx_rt {
	const struct sm_table *view;
	uint16_t target; /* base column id */
	uint8_t tkind;	 /* its enum sm_col_kind */
	uint8_t ckind;	 /* enum coll_kind */
	bool local;
	unsigned nkey;				/* view key columns: partition, then clustering */
	int32_t src[2 * SM_MAX_KEY_PARTS + 2]; /* base column id, or SRC_TOKEN */
};

/*
 * A materialized view: the base columns its rows are made of. The image
 * reads cols[]: the selected regular columns first (nsel, written to view
 * columns vcols[]), then those that keep a view row alive without being
 * in it (ScyllaDB's virtual columns; none when the view key has a regular
 * column, whose liveness is the view row's), then that key column.
 */
struct mv_rt {
	const struct sm_table *view;
	unsigned nkey;
	uint16_t ksrc[2 * SM_MAX_KEY_PARTS]; /* base column of each view key column */
	int32_t keycell;		     /* image cell of the regular key column, or -1 */
	unsigned nsel, ncols;
	uint16_t *cols;
	uint16_t *vcols;
};

struct idx_set {
	unsigned n;
	bool has_static; /* an index on a static column: read the partition's static row */
	bool has_rows;	 /* an index on anything else, or a view: read the rows written */
	uint16_t cols[8];
	struct idx_rt idx[8];
	unsigned nmv;
	struct mv_rt *mv[SM_VIEW_MAX_PER_TABLE];
};

static __thread unsigned index_tables; /* base tables with an index (store_set_index_tables()) */
static __thread struct idx_set **by_slot;
static __thread uint32_t nslots;

static void
pools_fini(void);

void
store_index_fini(void)
{
	uint32_t i;

	for (i = 0; i < nslots; i++) {
		struct idx_set *s = by_slot[i];
		unsigned j;

		for (j = 0; s != NULL && j < s->nmv; j++) {
			sm_free(s->mv[j]->cols);
			sm_free(s->mv[j]);
		}
		sm_free(s);
	}
	sm_free(by_slot);
	by_slot = NULL;
	nslots = 0;
	index_tables = 0;
	store_set_index_tables(0);
}

void
store_index_shard_fini(void)
{
	store_index_fini();
	pools_fini();
}

static int
rt_build(const struct sm_table *base, const struct sm_table *view, const struct sm_index_info *info,
	 struct idx_rt *x)
{
	const char *fn;
	unsigned j;

	memset(x, 0, sizeof(*x));
	x->view = view;
	x->target = info->target->id;
	x->tkind = (uint8_t)info->target->kind;
	x->local = info->local;
	x->nkey = (unsigned)view->npk + view->nck;
	if (x->nkey > SM_ARRAY_SIZE(x->src))
		return -EINVAL;
	fn = sm_option_get(view->options, view->noptions, SM_INDEX_OPT_FN);
	x->ckind = fn == NULL		     ? CK_VALUE
		   : strcmp(fn, "keys") == 0    ? CK_KEYS
		   : strcmp(fn, "values") == 0  ? CK_VALUES
		   : strcmp(fn, "entries") == 0 ? CK_ENTRIES
						: CK_VALUE;
	for (j = 0; j < x->nkey; j++) {
		const struct sm_column *c;

		if (!x->local && j == view->npk) {
			x->src[j] = SRC_TOKEN;
			continue;
		}
		if (j == 0 && x->ckind != CK_VALUE) {
			x->src[j] = SRC_ELEM;
			continue;
		}
		c = sm_table_column(base, view->cols[j].name);
		if (c == NULL)
			return -EINVAL;
		x->src[j] = c->id;
	}
	return 0;
}

/* The set of @base's indexes and views, made when it has none yet; NULL when out of memory. */
static struct idx_set *
set_for(const struct sm_catalog *cat, const struct sm_table *base)
{
	struct idx_set *s;

	if (by_slot == NULL) {
		nslots = cat->next_slot;
		by_slot = sm_calloc(nslots ? nslots : 1, sizeof(*by_slot));
		if (by_slot == NULL) {
			nslots = 0;
			return NULL;
		}
	}
	if (base->slot >= nslots)
		return NULL;
	s = by_slot[base->slot];
	if (s == NULL) {
		s = sm_calloc(1, sizeof(*s));
		if (s == NULL)
			return NULL;
		by_slot[base->slot] = s;
		index_tables++;
	}
	return s;
}

static struct mv_rt *
mv_build(const struct sm_table *base, const struct sm_table *view)
{
	struct mv_rt *x = sm_calloc(1, sizeof(*x));
	const struct sm_column *key = NULL;
	unsigned j;

	if (x == NULL)
		return NULL;
	x->view = view;
	x->keycell = -1;
	x->nkey = (unsigned)view->npk + view->nck;
	x->cols = sm_calloc(2 * (size_t)base->ncols + 1, sizeof(*x->cols));
	if (x->cols == NULL || x->nkey > SM_ARRAY_SIZE(x->ksrc))
		goto fail;
	x->vcols = x->cols + base->ncols + 1;
	for (j = 0; j < x->nkey; j++) {
		const struct sm_column *c = sm_table_column(base, view->cols[j].name);

		if (c == NULL)
			goto fail;
		x->ksrc[j] = c->id;
		if (c->kind == SM_COL_REGULAR)
			key = c;
	}
	for (j = x->nkey; j < view->ncols; j++) {
		const struct sm_column *c = sm_table_column(base, view->cols[j].name);

		if (c == NULL || c->kind != SM_COL_REGULAR)
			goto fail;
		x->vcols[x->nsel] = view->cols[j].id;
		x->cols[x->nsel++] = c->id;
	}
	x->ncols = x->nsel;
	for (j = 0; j < base->ncols && key == NULL; j++) {
		const struct sm_column *c = &base->cols[j];

		if (c->kind == SM_COL_REGULAR && sm_table_column(view, c->name) == NULL)
			x->cols[x->ncols++] = c->id;
	}
	if (key != NULL) {
		x->keycell = (int32_t)x->ncols;
		x->cols[x->ncols++] = key->id;
	}
	return x;
fail:
	sm_free(x->cols);
	sm_free(x);
	return NULL;
}

/* Each materialized view of the catalog, in the set of its base. */
static void
mv_sync(const struct sm_catalog *cat)
{
	unsigned k, i;

	for (k = 0; k < cat->nks; k++) {
		const struct sm_keyspace *ks = cat->ks[k];

		for (i = 0; i < ks->ntables; i++) {
			const struct sm_table *v = ks->tables[i], *base;
			const char *b = sm_view_base(v);
			struct idx_set *s;
			struct mv_rt *x;

			if (b == NULL || (base = sm_catalog_table(cat, ks->name, b)) == NULL)
				continue;
			s = set_for(cat, base);
			x = s != NULL && s->nmv < SM_ARRAY_SIZE(s->mv) ? mv_build(base, v) : NULL;
			if (x == NULL) {
				SM_ERR("materialized view %s.%s is not maintained", ks->name, v->name);
				continue;
			}
			s->mv[s->nmv++] = x;
			s->has_rows = true;
		}
	}
}

void
store_index_sync(const struct sm_catalog *cat)
{
	unsigned k, i;

	store_index_fini();
	for (k = 0; k < cat->nks; k++) {
		const struct sm_keyspace *ks = cat->ks[k];

		for (i = 0; i < ks->ntables; i++) {
			const struct sm_table *v = ks->tables[i], *base;
			const char *b = sm_option_get(v->options, v->noptions, SM_INDEX_OPT_BASE);
			struct sm_index_info info;
			struct idx_set *s;

			if (b == NULL || !sm_table_is_index(v))
				continue;
			base = sm_catalog_table(cat, ks->name, b);
			if (base == NULL || sm_index_info(v, base, &info) < 0)
				continue;
			s = set_for(cat, base);
			if (s == NULL || s->n >= SM_ARRAY_SIZE(s->idx) ||
			    rt_build(base, v, &info, &s->idx[s->n]) < 0) {
				SM_ERR("index %s of %s.%s is not maintained", info.name, ks->name,
				       base->name);
				continue;
			}
			s->cols[s->n] = info.target->id;
			if (info.target->kind == SM_COL_STATIC)
				s->has_static = true;
			else
				s->has_rows = true;
			s->n++;
		}
	}
	mv_sync(cat);
	store_set_index_tables(index_tables);
}

static const struct idx_set *
set_of(const struct sm_table *t)
{
	return t->slot < nslots ? by_slot[t->slot] : NULL;
}

/* ---- images: the indexed cells of the rows a write touches ---- */

struct img_cell {
	bool present;
	uint32_t off, len;
	int64_t wt;
	int32_t ttl;
};

struct img_row {
	uint32_t pk_off, pk_len; /* encoded keys in the image's bytes */
	uint32_t ck_off, ck_len;
	int64_t token;
	size_t cells; /* first of the set's n cells */
	struct img_cell marker;
};

struct image {
	uint8_t *buf;
	size_t len, cap;
	struct img_row *rows;
	unsigned nrows, rows_cap;
	struct img_cell *cells;
	size_t ncells, cells_cap;
	unsigned ncols;
	bool with_pk;	  /* a scan: rows of several partitions */
	bool with_marker; /* a view's: the rows' markers too */
	int err;
};

static void
image_free(struct image *im)
{
	sm_free(im->buf);
	sm_free(im->rows);
	sm_free(im->cells);
	memset(im, 0, sizeof(*im));
}

static int
grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 8;
	void *v;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	v = sm_realloc(*p, n * size);
	if (v == NULL)
		return -ENOMEM;
	*p = v;
	*cap = n;
	return 0;
}

static int
image_bytes(struct image *im, const void *p, size_t n, uint32_t *off)
{
	if (grow((void **)&im->buf, &im->cap, im->len + n + 1, 1) < 0)
		return -ENOMEM;
	*off = (uint32_t)im->len;
	if (n > 0)
		memcpy(im->buf + im->len, p, n);
	im->len += n;
	return 0;
}

static int
image_key(struct image *im, const struct sm_key *k, uint32_t *off, uint32_t *len)
{
	size_t n = sm_key_encode(k, NULL, 0);

	if (grow((void **)&im->buf, &im->cap, im->len + n + 1, 1) < 0)
		return -ENOMEM;
	*off = (uint32_t)im->len;
	*len = (uint32_t)sm_key_encode(k, im->buf + im->len, n);
	im->len += *len;
	return 0;
}

static int
image_row(void *ctx, const struct sm_row_view *r)
{
	struct image *im = ctx;
	struct img_row *row;
	size_t rows_cap = im->rows_cap;
	unsigned i;

	if (grow((void **)&im->rows, &rows_cap, im->nrows + 1, sizeof(*im->rows)) < 0 ||
	    grow((void **)&im->cells, &im->cells_cap, im->ncells + r->ncells, sizeof(*im->cells)) < 0)
		goto nomem;
	im->rows_cap = (unsigned)rows_cap;
	row = &im->rows[im->nrows];
	memset(row, 0, sizeof(*row));
	row->token = r->token;
	row->cells = im->ncells;
	if (im->with_marker) {
		row->marker.present = r->marker.present;
		row->marker.wt = r->marker.writetime;
		row->marker.ttl = r->marker.ttl;
	}
	if ((im->with_pk && image_key(im, r->pk, &row->pk_off, &row->pk_len) < 0) ||
	    image_key(im, r->ck, &row->ck_off, &row->ck_len) < 0)
		goto nomem;
	for (i = 0; i < r->ncells; i++) {
		struct img_cell *c = &im->cells[im->ncells + i];
		const struct sm_cell_view *v = &r->cells[i];

		memset(c, 0, sizeof(*c));
		c->present = v->present;
		c->wt = v->writetime;
		c->ttl = v->ttl;
		c->len = v->value.len;
		if (v->present && image_bytes(im, v->value.p, v->value.len, &c->off) < 0)
			goto nomem;
	}
	im->ncells += r->ncells;
	im->nrows++;
	return 0;
nomem:
	im->err = -ENOMEM;
	return -ENOMEM;
}

/* The rows a mutation can change, as clustering slices (none: the whole partition). */
static bool
row_scope(const struct sm_table *t, const struct sm_mutation *m, struct sm_ck_range *rg,
	  unsigned *nranges)
{
	*nranges = 0;
	if ((m->flags & SM_MUT_DELETE_PARTITION) || t->nck == 0)
		return true;
	if (m->flags & SM_MUT_DELETE_RANGE) {
		*rg = m->range;
		*nranges = 1;
		return true;
	}
	if (m->ck.n < t->nck)
		return false; /* only static cells */
	rg->start.prefix = m->ck;
	rg->start.inclusive = true;
	rg->end.prefix = m->ck;
	rg->end.inclusive = true;
	*nranges = 1;
	return true;
}

static int
read_image(struct sm_ptable *pt, const uint16_t *cols, unsigned ncols, const struct sm_key *pk,
	   const struct sm_ck_range *rg, unsigned nranges, bool statics, int32_t now,
	   struct image *im)
{
	struct sm_select sel;
	int ret;

	memset(&sel, 0, sizeof(sel));
	sel.table = sm_ptable_schema(pt);
	sel.pk = *pk;
	sel.ranges = nranges ? rg : NULL;
	sel.nranges = nranges;
	sel.cols = cols;
	sel.ncols = ncols;
	sel.marker = im->with_marker;
	sel.limit = statics ? 1 : 0;
	sel.sink.row = image_row;
	sel.sink.ctx = im;
	im->ncols = ncols;
	ret = sm_ptable_read(pt, &sel, now);
	return im->err ? im->err : ret;
}

/* ---- view writes ---- */

struct idx_job {
	struct sm_store_req *base; /* NULL: nobody waits for the view writes */
	unsigned origin;
	unsigned pending;
	struct sm_store_req **reqs;
	size_t nreqs, reqs_cap;
	void (*done)(struct idx_job *job); /* nobody waits: called before the job is freed */
	void *arg;
	int result;
	struct idx_job *next_free;
};

struct view_req {
	struct sm_store_req r;
	struct idx_job *job;
	struct view_req *next_free;
	size_t cap; /* bytes of key[] */
	uint8_t key[];
};

/*
 * Per-shard free lists: a write to an indexed table allocates nothing in
 * the steady state (a job, its view requests and the images are reused).
 */
#define POOL_MAX 256u
#define POOL_KEY_BYTES 1024u
static __thread struct view_req *free_vrs;
static __thread unsigned nfree_vrs;
static __thread struct idx_job *free_jobs;
static __thread unsigned nfree_jobs;

static void
vr_put(struct view_req *vr)
{
	if (vr->cap != POOL_KEY_BYTES || nfree_vrs >= POOL_MAX) {
		sm_free(vr);
		return;
	}
	vr->next_free = free_vrs;
	free_vrs = vr;
	nfree_vrs++;
}

static struct view_req *
vr_get(size_t bytes)
{
	struct view_req *vr;

	if (bytes <= POOL_KEY_BYTES && free_vrs != NULL) {
		vr = free_vrs;
		free_vrs = vr->next_free;
		nfree_vrs--;
		return vr;
	}
	bytes = bytes <= POOL_KEY_BYTES ? POOL_KEY_BYTES : bytes;
	vr = sm_malloc(sizeof(*vr) + bytes);
	if (vr != NULL)
		vr->cap = bytes;
	return vr;
}

static void
view_done(struct sm_store_req *r);

/* A view write of @job to @view with @bytes of keys and values, room for it in job->reqs. */
static struct view_req *
view_req_new(struct idx_job *job, const struct sm_table *view, size_t bytes, int64_t ts)
{
	struct view_req *vr;

	if (grow((void **)&job->reqs, &job->reqs_cap, job->nreqs + 1, sizeof(*job->reqs)) < 0)
		return NULL;
	vr = vr_get(bytes + 1);
	if (vr == NULL)
		return NULL;
	sm_store_req_init(&vr->r, SM_REQ_MUTATE);
	vr->job = job;
	vr->r.done = view_done;
	vr->r.mut.table = view;
	vr->r.mut.ts = ts;
	return vr;
}

static void
job_free(struct idx_job *job)
{
	if (nfree_jobs >= POOL_MAX) {
		sm_free(job->reqs);
		sm_free(job);
		return;
	}
	job->next_free = free_jobs;
	free_jobs = job;
	nfree_jobs++;
}

static void
job_finish_msg(void *arg)
{
	struct idx_job *job = arg;
	struct sm_store_req *r = job->base;

	r->index_job = NULL;
	job_free(job);
	store_req_finish(r);
}

static void
job_put(struct idx_job *job)
{
	if (--job->pending > 0)
		return;
	if (job->base == NULL) {
		if (job->done != NULL)
			job->done(job);
		job_free(job);
		return;
	}
	if (sm_shard_id() == job->origin) {
		job_finish_msg(job);
		return;
	}
	job->base->hops++;
	if (sm_submit_to(job->origin, job_finish_msg, job, NULL) < 0)
		SM_ERR("out of memory answering a write on shard %u: its client waits until it "
		       "times out",
		       job->origin);
}

static void
view_done(struct sm_store_req *sr)
{
	struct view_req *vr = (struct view_req *)sr;
	struct idx_job *job = vr->job;

	/* -ENOENT: the index was dropped meanwhile, nothing to keep up to date */
	if (sr->result < 0 && sr->result != -ENOENT && job->result == 0) {
		job->result = sr->result;
		SM_WARN("index view %s.%s not updated: %s", sr->mut.table->ks, sr->mut.table->name,
			sr->err);
	}
	vr_put(vr);
	job_put(job);
}

static struct idx_job *
job_new(struct sm_store_req *base)
{
	struct idx_job *job = free_jobs;

	if (job != NULL) {
		struct sm_store_req **reqs = job->reqs;
		size_t cap = job->reqs_cap;

		free_jobs = job->next_free;
		nfree_jobs--;
		memset(job, 0, sizeof(*job));
		job->reqs = reqs;
		job->reqs_cap = cap;
	} else {
		job = sm_calloc(1, sizeof(*job));
		if (job == NULL)
			return NULL;
	}
	job->base = base;
	job->origin = base != NULL ? base->origin : sm_shard_id();
	job->pending = 1; /* held until every view write is submitted */
	return job;
}

/* The value of base column @col for a row: a key part or an image cell. */
static struct sm_bytes
row_value(const struct sm_table *base, int32_t col, const struct sm_key *pk, const struct sm_key *ck,
	  const struct image *im, const struct img_row *row, const struct idx_set *s)
{
	const struct sm_column *c = &base->cols[col];
	unsigned i;

	if (c->kind == SM_COL_PARTITION)
		return pk->part[c->pos];
	if (c->kind == SM_COL_CLUSTERING)
		return ck->n > c->pos ? ck->part[c->pos] : (struct sm_bytes){ 0 };
	for (i = 0; i < s->n; i++)
		if (s->cols[i] == col) {
			const struct img_cell *ic = &im->cells[row->cells + i];

			return (struct sm_bytes){ im->buf + ic->off, ic->len };
		}
	return (struct sm_bytes){ 0 };
}

/* The view key @parts of @m, copied to @p: the partition key, then the clustering key. */
static void
put_key(struct sm_mutation *m, const struct sm_table *view, const struct sm_bytes *parts,
	unsigned nkey, uint8_t *p)
{
	unsigned j;

	for (j = 0; j < nkey; j++) {
		struct sm_key *k = j < view->npk ? &m->pk : &m->ck;
		unsigned b = k->n++;

		k->part[b].p = p;
		k->part[b].len = parts[j].len;
		if (parts[j].len)
			memcpy(p, parts[j].p, parts[j].len);
		p += parts[j].len;
	}
}

/* Queue one view write: a row marker (@del false) or a row tombstone. */
static int
view_write(struct idx_job *job, const struct idx_rt *x, const struct sm_table *base,
	   const struct sm_key *pk, const struct sm_key *ck, int64_t token, const struct image *im,
	   const struct img_row *row, const struct idx_set *s, struct sm_bytes elem, bool del,
	   int64_t ts, int32_t ttl)
{
	struct sm_bytes parts[2 * SM_MAX_KEY_PARTS + 2];
	uint8_t tok[8];
	struct view_req *vr;
	struct sm_mutation *m;
	size_t bytes = 0;
	unsigned j;

	for (j = 0; j < 8; j++)
		tok[j] = (uint8_t)((uint64_t)token >> (56 - 8 * j));
	for (j = 0; j < x->nkey; j++) {
		parts[j] = x->src[j] == SRC_TOKEN  ? (struct sm_bytes){ tok, 8 }
			   : x->src[j] == SRC_ELEM ? elem
						   : row_value(base, x->src[j], pk, ck, im, row, s);
		bytes += parts[j].len;
	}
	vr = view_req_new(job, x->view, bytes, ts);
	if (vr == NULL)
		return -ENOMEM;
	m = &vr->r.mut;
	m->ttl = ttl;
	m->flags = del ? SM_MUT_DELETE_ROW : SM_MUT_ROW_MARKER;
	put_key(m, x->view, parts, x->nkey, vr->key);
	job->reqs[job->nreqs++] = &vr->r;
	return 0;
}

static void
job_submit(struct idx_job *job)
{
	size_t i, n = job->nreqs;

	job->pending += (unsigned)n;
	for (i = 0; i < n; i++)
		sm_store_submit(job->reqs[i]);
	job->nreqs = 0;
}

static void
job_drop_reqs(struct idx_job *job)
{
	size_t i;

	for (i = 0; i < job->nreqs; i++)
		vr_put((struct view_req *)job->reqs[i]);
	job->nreqs = 0;
}

static bool
cell_live(const struct idx_rt *x, const struct img_cell *c)
{
	return x->tkind == SM_COL_PARTITION || x->tkind == SM_COL_CLUSTERING || c->present;
}

static bool
same_value(const struct image *a, const struct img_cell *x, const struct image *b,
	   const struct img_cell *y)
{
	return x->len == y->len && memcmp(a->buf + x->off, b->buf + y->off, x->len) == 0;
}

static bool
same_ck(const struct image *a, const struct img_row *x, const struct image *b,
	const struct img_row *y)
{
	return x->ck_len == y->ck_len && memcmp(a->buf + x->ck_off, b->buf + y->ck_off, x->ck_len) == 0;
}

/* True when @m writes column @col (its elements get the write's TTL again). */
static bool
touches(const struct sm_mutation *m, uint16_t col)
{
	unsigned i;

	for (i = 0; i < m->nops; i++)
		if (m->ops[i].col == col)
			return true;
	return false;
}

/* A collection cell's distinct elements for an index, sorted by their bytes. */
struct elems {
	struct sm_bytes *v;
	size_t n, cap;
	uint8_t *buf; /* CK_ENTRIES: the tuples */
	size_t buf_cap;
};

static __thread struct elems elems_scratch[2];

static int
bytes_cmp(const void *a, const void *b)
{
	const struct sm_bytes *x = a, *y = b;
	int c = memcmp(x->p, y->p, SM_MIN(x->len, y->len));

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

static int
elems_of(const struct idx_rt *x, const struct sm_type *t, const struct image *im,
	 const struct img_cell *c, struct elems *e)
{
	struct sm_bytes v = { im->buf + c->off, c->len }, k, val;
	struct sm_coll_iter it;
	bool map = t->kind == SM_TYPE_MAP;
	size_t need = 0, at = 0, i, out;

	e->n = 0;
	if (sm_coll_iter_init(&it, v) < 0)
		return 0;
	while (sm_coll_next(&it, &k, map ? &val : NULL, map)) {
		if (grow((void **)&e->v, &e->cap, e->n + 1, sizeof(*e->v)) < 0)
			return -ENOMEM;
		e->v[e->n++] = x->ckind == CK_VALUES && map ? val : k;
		if (x->ckind == CK_ENTRIES)
			need += 8 + (size_t)k.len + val.len;
	}
	if (x->ckind == CK_ENTRIES && e->n > 0) {
		if (grow((void **)&e->buf, &e->buf_cap, need, 1) < 0)
			return -ENOMEM;
		sm_coll_iter_init(&it, v);
		for (i = 0; sm_coll_next(&it, &k, &val, true) && i < e->n; i++) {
			struct sm_bytes f[2] = { k, val };
			size_t n = sm_tuple_build(e->buf + at, need - at, f, 2);

			e->v[i] = (struct sm_bytes){ e->buf + at, (uint32_t)n };
			at += n;
		}
	}
	qsort(e->v, e->n, sizeof(*e->v), bytes_cmp);
	for (i = 0, out = 0; i < e->n; i++)
		if (out == 0 || bytes_cmp(&e->v[out - 1], &e->v[i]) != 0)
			e->v[out++] = e->v[i];
	e->n = out;
	return 0;
}

/*
 * A collection index, one row before and after: the view rows of the
 * elements that went are deleted, those of the elements that came (all of
 * them when the write set the column: their TTL is the write's) written.
 */
static int
diff_elems(struct idx_job *job, const struct idx_set *s, unsigned xi, const struct sm_table *base,
	   const struct sm_key *pk, const struct image *pre, const struct img_row *p,
	   const struct image *post, const struct img_row *q, int64_t ts, int32_t key_ttl,
	   bool touched)
{
	const struct idx_rt *x = &s->idx[xi];
	const struct sm_type *t = base->cols[x->target].type;
	struct elems *a = &elems_scratch[0], *b = &elems_scratch[1];
	size_t i = 0, j = 0;
	struct sm_key ck;
	int ret = 0, c;

	a->n = b->n = 0;
	if ((p != NULL && elems_of(x, t, pre, &pre->cells[p->cells + xi], a) < 0) ||
	    (q != NULL && elems_of(x, t, post, &post->cells[q->cells + xi], b) < 0))
		return -ENOMEM;
	if (p != NULL)
		sm_key_decode(pre->buf + p->ck_off, p->ck_len, &ck);
	while (ret == 0 && (i < a->n || j < b->n)) {
		c = i == a->n ? 1 : j == b->n ? -1 : bytes_cmp(&a->v[i], &b->v[j]);
		if (c < 0) {
			ret = view_write(job, x, base, pk, &ck, p->token, pre, p, s, a->v[i], true, ts,
					 0);
			i++;
			continue;
		}
		if (c == 0)
			i++;
		if (c > 0 || touched) {
			sm_key_decode(post->buf + q->ck_off, q->ck_len, &ck);
			ret = view_write(job, x, base, pk, &ck, q->token, post, q, s, b->v[j], false,
					 ts, key_ttl);
			if (p != NULL)
				sm_key_decode(pre->buf + p->ck_off, p->ck_len, &ck);
		}
		j++;
	}
	return ret;
}

/*
 * One index, one row before (@p) and after (@q) the write (either NULL):
 * delete the old view row when it no longer holds, write the new one when
 * its cell changed (a key column's row: whenever the write touched it).
 */
static int
diff_row(struct idx_job *job, const struct idx_set *s, unsigned xi, const struct sm_table *base,
	 const struct sm_key *pk, const struct image *pre, const struct img_row *p,
	 const struct image *post, const struct img_row *q, int64_t ts, int32_t key_ttl,
	 bool touched)
{
	const struct idx_rt *x = &s->idx[xi];
	const struct img_cell *pc = p ? &pre->cells[p->cells + xi] : NULL;
	const struct img_cell *qc = q ? &post->cells[q->cells + xi] : NULL;
	bool pl = p != NULL && cell_live(x, pc), ql = q != NULL && cell_live(x, qc);
	bool key = x->tkind == SM_COL_PARTITION || x->tkind == SM_COL_CLUSTERING;
	bool same = pl && ql && (key || same_value(pre, pc, post, qc));
	const struct sm_bytes nob = { NULL, 0 };
	struct sm_key ck;
	int ret;

	if (x->ckind != CK_VALUE)
		return diff_elems(job, s, xi, base, pk, pre, pl ? p : NULL, post, ql ? q : NULL, ts,
				  key_ttl, touched);
	if (pl && !same) {
		sm_key_decode(pre->buf + p->ck_off, p->ck_len, &ck);
		ret = view_write(job, x, base, pk, &ck, p->token, pre, p, s, nob, true, ts, 0);
		if (ret < 0)
			return ret;
	}
	if (ql && (key || !same || pc->wt != qc->wt || pc->ttl != qc->ttl)) {
		sm_key_decode(post->buf + q->ck_off, q->ck_len, &ck);
		if (key)
			return view_write(job, x, base, pk, &ck, q->token, post, q, s, nob, false,
					  ts, key_ttl);
		return view_write(job, x, base, pk, &ck, q->token, post, q, s, nob, false, qc->wt,
				  qc->ttl > 0 ? qc->ttl : 0);
	}
	return 0;
}

/* Every index of @s over the images of one partition (@statics: the static row's). */
static int
diff(struct idx_job *job, const struct idx_set *s, const struct sm_table *base,
     const struct sm_key *pk, const struct image *pre, const struct image *post, bool statics,
     int64_t ts, int32_t key_ttl, const struct sm_mutation *m)
{
	unsigned xi, i, j;
	int ret;

	for (xi = 0; xi < s->n; xi++) {
		if ((s->idx[xi].tkind == SM_COL_STATIC) != statics)
			continue;
		if (statics) {
			ret = diff_row(job, s, xi, base, pk, pre, pre->nrows ? &pre->rows[0] : NULL,
				       post, post->nrows ? &post->rows[0] : NULL, ts, key_ttl,
				       touches(m, s->idx[xi].target));
			if (ret < 0)
				return ret;
			continue;
		}
		/* a write adds at most one row, so the rows after are those before
		 * (in the same order) that survived, and maybe one new one */
		for (i = 0, j = 0; i < pre->nrows; i++) {
			const struct img_row *p = &pre->rows[i], *q = NULL;

			if (p->ck_len == 0 && base->nck > 0)
				continue; /* the static-only row */
			if (j < post->nrows && same_ck(pre, p, post, &post->rows[j]))
				q = &post->rows[j++];
			ret = diff_row(job, s, xi, base, pk, pre, p, post, q, ts, key_ttl,
				       touches(m, s->idx[xi].target));
			if (ret < 0)
				return ret;
		}
		if (j == post->nrows)
			continue; /* every row after was one before */
		for (j = 0; j < post->nrows; j++) {
			const struct img_row *q = &post->rows[j];
			bool seen = false;

			if (q->ck_len == 0 && base->nck > 0)
				continue;
			for (i = 0; i < pre->nrows && !seen; i++)
				seen = same_ck(pre, &pre->rows[i], post, q);
			if (seen)
				continue;
			ret = diff_row(job, s, xi, base, pk, pre, NULL, post, q, ts, key_ttl, true);
			if (ret < 0)
				return ret;
		}
	}
	return 0;
}

/* ---- materialized views ---- */

/* The view key of image row @row, in @parts; false when a part is null. */
static bool
mv_key(const struct mv_rt *x, const struct sm_table *base, const struct sm_key *pk,
       const struct sm_key *ck, const struct image *im, const struct img_row *row,
       struct sm_bytes *parts)
{
	unsigned j;

	if (x->keycell >= 0 && !im->cells[row->cells + x->keycell].present)
		return false;
	for (j = 0; j < x->nkey; j++) {
		const struct sm_column *c = &base->cols[x->ksrc[j]];

		if (c->kind == SM_COL_PARTITION) {
			parts[j] = pk->part[c->pos];
		} else if (c->kind == SM_COL_CLUSTERING) {
			if (ck->n <= c->pos)
				return false;
			parts[j] = ck->part[c->pos];
		} else {
			const struct img_cell *ic = &im->cells[row->cells + x->keycell];

			parts[j] = (struct sm_bytes){ im->buf + ic->off, ic->len };
		}
	}
	return true;
}

/*
 * Queue one view mutation: a row tombstone (@cells NULL, @flags
 * SM_MUT_DELETE_ROW) or the cells of @cells that @pick marks, with @flags.
 */
static int
mv_write(struct idx_job *job, const struct mv_rt *x, const struct sm_bytes *parts, uint32_t flags,
	 int64_t ts, int32_t ttl, const struct image *im, const struct img_cell *cells,
	 const bool *pick)
{
	size_t bytes = 0, nops = 0;
	struct sm_cell_op *ops;
	struct view_req *vr;
	struct sm_mutation *m;
	unsigned j;
	uint8_t *p;

	for (j = 0; j < x->nkey; j++)
		bytes += parts[j].len;
	for (j = 0; cells != NULL && j < x->nsel; j++)
		if (pick[j]) {
			bytes += cells[j].len;
			nops++;
		}
	bytes += nops * sizeof(*ops);
	vr = view_req_new(job, x->view, bytes, ts);
	if (vr == NULL)
		return -ENOMEM;
	m = &vr->r.mut;
	m->ttl = ttl > 0 ? ttl : 0;
	m->flags = flags;
	/* the ops first: key[] is aligned as the struct is */
	ops = (struct sm_cell_op *)(void *)vr->key;
	p = vr->key + nops * sizeof(*ops);
	for (j = 0; cells != NULL && j < x->nsel; j++) {
		struct sm_cell_op *op;

		if (!pick[j])
			continue;
		op = &ops[m->nops++];
		memset(op, 0, sizeof(*op));
		op->col = x->vcols[j];
		op->kind = SM_CELL_SET;
		op->value.p = p;
		op->value.len = cells[j].len;
		if (cells[j].len)
			memcpy(p, im->buf + cells[j].off, cells[j].len);
		p += cells[j].len;
	}
	m->ops = m->nops ? ops : NULL;
	put_key(m, x->view, parts, x->nkey, p);
	job->reqs[job->nreqs++] = &vr->r;
	return 0;
}

/* @c's TTL within the view row's: a view row whose key column expires goes whole. */
static int32_t
mv_ttl(int32_t ttl, int32_t row_ttl)
{
	return row_ttl > 0 && (ttl <= 0 || ttl > row_ttl) ? row_ttl : (ttl > 0 ? ttl : 0);
}

static __thread bool *mv_pick; /* two per selected column: in this mutation, written */
static __thread unsigned mv_pick_cap;

/*
 * Write view row @parts whole from base row @q: one mutation that replaces
 * the row (its marker and the cells of one timestamp and TTL), then one per
 * other timestamp and TTL. The marker's liveness is the key column's when
 * the view key has a regular column, else the most lasting of the base
 * row's marker and of the base cells the view does not hold (ScyllaDB's
 * virtual columns).
 */
static int
mv_replace(struct idx_job *job, const struct mv_rt *x, const struct image *im,
	   const struct img_row *q, const struct sm_bytes *parts, int64_t del_ts)
{
	const struct img_cell *cells = &im->cells[q->cells];
	int32_t key_ttl = x->keycell >= 0 ? cells[x->keycell].ttl : 0;
	uint32_t flags = SM_MUT_REPLACE_ROW;
	bool live = false, *pick, *written;
	int64_t gts = 0;
	int32_t gttl = 0;
	unsigned i, j;
	int ret;

	/* never NULL, even for a view of key columns only (nsel 0): written = pick + 0 */
	if (mv_pick == NULL || 2 * x->nsel > mv_pick_cap) {
		unsigned cap = SM_MAX(2 * x->nsel, 2u);
		bool *v = sm_realloc(mv_pick, cap * sizeof(*v));

		if (v == NULL)
			return -ENOMEM;
		mv_pick = v;
		mv_pick_cap = cap;
	}
	pick = mv_pick;
	written = mv_pick + x->nsel;
	if (x->keycell >= 0) {
		live = true;
		gts = cells[x->keycell].wt;
		gttl = mv_ttl(key_ttl, 0);
	} else {
		for (i = x->nsel; i <= x->ncols; i++) {
			const struct img_cell *c = i < x->ncols ? &cells[i] : &q->marker;

			if (!c->present)
				continue;
			gttl = !live ? mv_ttl(c->ttl, 0) : (gttl == 0 || c->ttl <= 0) ? 0
							 : SM_MAX(gttl, c->ttl);
			gts = !live ? c->wt : SM_MAX(gts, c->wt);
			live = true;
		}
	}
	for (j = 0; j < x->nsel; j++)
		written[j] = !cells[j].present;
	for (j = 0; j < x->nsel && written[j]; j++)
		;
	if (!live && j == x->nsel) /* nothing holds the row */
		return mv_write(job, x, parts, SM_MUT_DELETE_ROW, del_ts, 0, im, NULL, NULL);
	if (live)
		flags |= SM_MUT_ROW_MARKER;
	else
		gts = cells[j].wt, gttl = mv_ttl(cells[j].ttl, key_ttl);
	for (;;) {
		for (j = 0; j < x->nsel; j++) {
			pick[j] = !written[j] && cells[j].wt == gts &&
				  mv_ttl(cells[j].ttl, key_ttl) == gttl;
			written[j] |= pick[j];
		}
		ret = mv_write(job, x, parts, flags, gts, gttl, im, cells, pick);
		for (j = 0; j < x->nsel && written[j]; j++)
			;
		if (ret < 0 || j == x->nsel)
			return ret;
		flags = 0;
		gts = cells[j].wt;
		gttl = mv_ttl(cells[j].ttl, key_ttl);
	}
}

static bool
same_cell(const struct image *a, const struct img_cell *x, const struct image *b,
	  const struct img_cell *y)
{
	if (x->present != y->present)
		return false;
	return !x->present || (x->wt == y->wt && x->ttl == y->ttl && same_value(a, x, b, y));
}

/*
 * One base row before (@p) and after (@q) the write, either NULL: delete
 * the view row the row no longer has (its key changed or went null), and
 * write the one it has whole when anything of it changed.
 */
static int
mv_row(struct idx_job *job, const struct mv_rt *x, const struct sm_table *base,
       const struct sm_key *pk, const struct image *pre, const struct img_row *p,
       const struct image *post, const struct img_row *q, int64_t ts)
{
	struct sm_bytes kp[2 * SM_MAX_KEY_PARTS], kq[2 * SM_MAX_KEY_PARTS];
	struct sm_key pck, qck;
	bool pl = false, ql = false, same_key, changed;
	unsigned j;
	int ret;

	if (p != NULL) {
		sm_key_decode(pre->buf + p->ck_off, p->ck_len, &pck);
		pl = mv_key(x, base, pk, &pck, pre, p, kp);
	}
	if (q != NULL) {
		sm_key_decode(post->buf + q->ck_off, q->ck_len, &qck);
		ql = mv_key(x, base, pk, &qck, post, q, kq);
	}
	same_key = pl && ql &&
		   (x->keycell < 0 || same_value(pre, &pre->cells[p->cells + x->keycell], post,
						 &post->cells[q->cells + x->keycell]));
	if (pl && !same_key) {
		ret = mv_write(job, x, kp, SM_MUT_DELETE_ROW, ts, 0, pre, NULL, NULL);
		if (ret < 0)
			return ret;
	}
	if (!ql)
		return 0;
	changed = !same_key || !same_cell(pre, &p->marker, post, &q->marker);
	for (j = 0; j < x->ncols && !changed; j++)
		changed = !same_cell(pre, &pre->cells[p->cells + j], post, &post->cells[q->cells + j]);
	return changed ? mv_replace(job, x, post, q, kq, ts) : 0;
}

/* A view over the images of one partition, matched row by row as diff() does. */
static int
mv_diff(struct idx_job *job, const struct mv_rt *x, const struct sm_table *base,
	const struct sm_key *pk, const struct image *pre, const struct image *post, int64_t ts)
{
	unsigned i, j;
	int ret;

	for (i = 0, j = 0; i < pre->nrows; i++) {
		const struct img_row *p = &pre->rows[i], *q = NULL;

		if (p->ck_len == 0 && base->nck > 0)
			continue; /* the static-only row */
		if (j < post->nrows && same_ck(pre, p, post, &post->rows[j]))
			q = &post->rows[j++];
		ret = mv_row(job, x, base, pk, pre, p, post, q, ts);
		if (ret < 0)
			return ret;
	}
	if (j == post->nrows)
		return 0;
	for (j = 0; j < post->nrows; j++) {
		const struct img_row *q = &post->rows[j];
		bool seen = false;

		if (q->ck_len == 0 && base->nck > 0)
			continue;
		for (i = 0; i < pre->nrows && !seen; i++)
			seen = same_ck(pre, &pre->rows[i], post, q);
		if (!seen && (ret = mv_row(job, x, base, pk, pre, NULL, post, q, ts)) < 0)
			return ret;
	}
	return 0;
}

/* ---- the write paths ---- */

static int32_t
key_ttl_of(const struct sm_table *base, const struct sm_mutation *m)
{
	int32_t ttl = m->ttl == SM_TTL_DEFAULT ? base->default_ttl : m->ttl;

	return ttl > 0 ? ttl : 0;
}

struct images {
	struct image pre, post, spre, spost;
	struct image mpre[SM_VIEW_MAX_PER_TABLE], mpost[SM_VIEW_MAX_PER_TABLE];
	struct sm_ck_range rg;
	unsigned nranges;
	bool rows;
};

/* Empty @im for reuse, its memory kept. */
static void
image_reset(struct image *im)
{
	im->len = 0;
	im->nrows = 0;
	im->ncells = 0;
	im->err = 0;
	im->with_pk = false;
}

static bool
image_big(const struct image *im)
{
	return im->cap > IMAGE_KEEP || im->cells_cap * sizeof(struct img_cell) > IMAGE_KEEP;
}

/* True when the images of a write to a table with @nmv views grew past what is kept. */
static bool
images_big(const struct images *ims, unsigned nmv)
{
	unsigned i;
	bool big = image_big(&ims->pre) || image_big(&ims->post);

	for (i = 0; i < nmv && !big; i++)
		big = image_big(&ims->mpre[i]) || image_big(&ims->mpost[i]);
	return big;
}

/*
 * The calling shard's images, reused by every write: a write's images are
 * done with before anything it calls back can start another write.
 */
static __thread struct images scratch;

/* The images for a write to a table with @nmv views (only theirs are reset). */
static struct images *
images_get(unsigned nmv)
{
	unsigned i;

	image_reset(&scratch.pre);
	image_reset(&scratch.post);
	image_reset(&scratch.spre);
	image_reset(&scratch.spost);
	for (i = 0; i < nmv; i++) {
		image_reset(&scratch.mpre[i]);
		image_reset(&scratch.mpost[i]);
	}
	scratch.nranges = 0;
	scratch.rows = false;
	return &scratch;
}

static void
images_free(struct images *ims)
{
	unsigned i;

	image_free(&ims->pre);
	image_free(&ims->post);
	image_free(&ims->spre);
	image_free(&ims->spost);
	for (i = 0; i < SM_VIEW_MAX_PER_TABLE; i++) {
		image_free(&ims->mpre[i]);
		image_free(&ims->mpost[i]);
	}
}

static int
images_read(struct sm_ptable *pt, const struct idx_set *s, const struct sm_mutation *m, bool after,
	    int32_t now, struct images *ims)
{
	const struct sm_table *base = sm_ptable_schema(pt);
	unsigned i;
	int ret = 0;

	if (!after)
		ims->rows = s->has_rows && row_scope(base, m, &ims->rg, &ims->nranges);
	if (ims->rows && s->n > 0)
		ret = read_image(pt, s->cols, s->n, &m->pk, &ims->rg, ims->nranges, false, now,
				 after ? &ims->post : &ims->pre);
	if (ret == 0 && s->has_static)
		ret = read_image(pt, s->cols, s->n, &m->pk, NULL, 0, true, now,
				 after ? &ims->spost : &ims->spre);
	for (i = 0; ret == 0 && ims->rows && i < s->nmv; i++) {
		(after ? &ims->mpost[i] : &ims->mpre[i])->with_marker = true;
		ret = read_image(pt, s->mv[i]->cols, s->mv[i]->ncols, &m->pk, &ims->rg,
				 ims->nranges, false, now, after ? &ims->mpost[i] : &ims->mpre[i]);
	}
	return ret;
}

/* Queue the view writes for the images and send them; the job waits for them. */
static void
images_apply(struct idx_job *job, const struct idx_set *s, const struct sm_table *base,
	     const struct sm_mutation *m, struct images *ims, int64_t ts)
{
	int32_t kt = key_ttl_of(base, m);
	unsigned i;
	int ret = 0;

	if (ims->rows)
		ret = diff(job, s, base, &m->pk, &ims->pre, &ims->post, false, ts, kt, m);
	if (ret == 0 && s->has_static)
		ret = diff(job, s, base, &m->pk, &ims->spre, &ims->spost, true, ts, kt, m);
	for (i = 0; ret == 0 && ims->rows && i < s->nmv; i++)
		ret = mv_diff(job, s->mv[i], base, &m->pk, &ims->mpre[i], &ims->mpost[i], ts);
	if (ret < 0) {
		job_drop_reqs(job);
		SM_ERR("out of memory updating the indexes of %s.%s: they miss this write",
		       base->ks, base->name);
	}
	job_submit(job);
}

static struct idx_job *
job_for(struct sm_store_req *r)
{
	if (r->index_job != NULL) {
		struct idx_job *job = r->index_job;

		return job;
	}
	/* the coordinator did not know of the index yet: its view writes go on
	 * without the answer waiting for them */
	return job_new(NULL);
}

bool
store_index_mutate(struct sm_store_req *r, struct sm_ptable *pt, int64_t ts, int32_t now)
{
	const struct sm_table *base = sm_ptable_schema(pt);
	const struct idx_set *s = set_of(base);
	struct images *ims;
	struct idx_job *job;

	if (s == NULL)
		return false;
	ims = images_get(s->nmv);
	job = job_for(r);
	if (job == NULL || images_read(pt, s, &r->mut, false, now, ims) < 0) {
		r->result = -ENOMEM;
		snprintf(r->err, sizeof(r->err), "out of memory reading the rows an index needs");
		goto out;
	}
	r->result = store_apply(pt, &r->mut, ts, now, r->err, sizeof(r->err));
	if (r->result == 0 && images_read(pt, s, &r->mut, true, now, ims) == 0)
		images_apply(job, s, base, &r->mut, ims, ts);
out:
	/* what a partition's deletion needed is not kept for every write */
	if (images_big(ims, s->nmv))
		images_free(ims);
	if (job != NULL && job != r->index_job)
		job_put(job);
	return true;
}

bool
store_index_cas(struct sm_store_req *r, struct sm_ptable *pt,
		void (*run)(struct sm_store_req *r, struct sm_ptable *pt))
{
	const struct sm_table *base = sm_ptable_schema(pt);
	const struct idx_set *s = set_of(base);
	int32_t now = (int32_t)time(NULL);
	struct images ims;
	struct idx_job *job;

	if (s == NULL)
		return false;
	memset(&ims, 0, sizeof(ims));
	job = job_for(r);
	if (job == NULL || images_read(pt, s, &r->cas.mut, false, now, &ims) < 0) {
		r->result = -ENOMEM;
		snprintf(r->err, sizeof(r->err), "out of memory reading the rows an index needs");
		goto out;
	}
	run(r, pt);
	/* decide() may have filled in the mutation after the pre-image was read */
	if (r->result == 0 && r->cas.applied &&
	    images_read(pt, s, &r->cas.mut, true, now, &ims) == 0)
		images_apply(job, s, base, &r->cas.mut, &ims, r->cas.ts);
out:
	images_free(&ims);
	if (job != NULL && job != r->index_job)
		job_put(job);
	return true;
}

/* Batch commitlog: the base write's record is synced (or the log failed). */
static void
job_base_synced(void *arg)
{
	struct idx_job *job = arg;
	struct sm_store_req *r = job->base;

	if (r->clw.result < 0 && r->result == 0) {
		r->result = -EIO;
		snprintf(r->err, sizeof(r->err),
			 "commitlog write failed on shard %u: the write is applied but may not "
			 "survive a restart",
			 sm_shard_id());
	}
	job_put(job);
}

static void
job_run(void *arg)
{
	struct idx_job *job = arg;

	store_exec_here(job->base);
	/* the answer waits for the base record's sync too, as a plain write's */
	if (store_log_wait(job->base, job_base_synced, job))
		job->pending++;
	job_put(job);
}

bool
store_index_route(struct sm_store_req *r)
{
	const struct sm_mutation *m = r->kind == SM_REQ_MUTATE ? &r->mut
				      : r->kind == SM_REQ_CAS  ? &r->cas.mut
							       : NULL;
	struct idx_job *job;
	unsigned owner;

	/* an empty key fails on the plain path */
	if (m == NULL || m->pk.n == 0 || set_of(m->table) == NULL)
		return false;
	/* the base write skips sm_store_submit()'s routing: its token is found here */
	r->token = sm_key_token(&m->pk);
	owner = sm_table_shard_of_token(m->table, r->token,
					sm_shard_count() ? sm_shard_count() : 1);
	job = job_new(r);
	if (job == NULL) {
		r->result = -ENOMEM;
		snprintf(r->err, sizeof(r->err), "out of memory writing to an indexed table");
		store_req_finish(r);
		return true;
	}
	r->index_job = job;
	if (owner == r->origin) {
		job_run(job);
		return true;
	}
	r->hops = 1;
	SM_STAT_INC(hops);
	if (sm_submit_to(owner, job_run, job, NULL) < 0) {
		r->index_job = NULL;
		job_free(job);
		r->result = -ENOMEM;
		snprintf(r->err, sizeof(r->err), "out of memory forwarding to shard %u", owner);
		store_req_finish(r);
	}
	return true;
}

/* ---- backfill ---- */

struct backfill {
	unsigned origin;
	unsigned pending; /* shards not through */
	int result;
	void (*done)(void *arg, int result);
	void *arg;
	bool mv; /* a materialized view, not an index */
	char ks[SM_NAME_MAX + 1];
	char view[2 * SM_NAME_MAX + 32];
};

struct backfill_shard {
	struct backfill *bf;
	struct sm_task task;
	struct sm_scan_pos pos;
	int result;
};

static void
backfill_all_done(void *arg)
{
	struct backfill_shard *bs = arg;
	struct backfill *bf = bs->bf;

	if (bs->result < 0 && bf->result == 0)
		bf->result = bs->result;
	sm_free(bs);
	if (--bf->pending > 0)
		return;
	bf->done(bf->arg, bf->result);
	sm_free(bf);
}

static void
backfill_shard_done(struct backfill_shard *bs)
{
	if (sm_shard_id() == bs->bf->origin) {
		backfill_all_done(bs);
		return;
	}
	if (sm_submit_to(bs->bf->origin, backfill_all_done, bs, NULL) < 0)
		SM_ERR("out of memory ending an index backfill: CREATE INDEX does not answer");
}

static void
backfill_step_done(struct idx_job *job)
{
	struct backfill_shard *bs = job->arg;

	if (job->result < 0 && bs->result == 0)
		bs->result = job->result;
	if (bs->result < 0 || job->result == 1) {
		backfill_shard_done(bs);
		return;
	}
	sm_task_schedule(&bs->task); /* the next step after what else the shard has to do */
}

static void
mv_backfill_step(struct backfill_shard *bs, const struct sm_table *view);

/*
 * Scan up to BACKFILL_STEP_ROWS rows of @base on this shard into @im, and
 * the job for their view writes; NULL when the shard is done with an error.
 */
static struct idx_job *
backfill_scan(struct backfill_shard *bs, const struct sm_table *base, const uint16_t *cols,
	      unsigned ncols, bool statics, struct image *im, int *ret)
{
	uint32_t budget = BACKFILL_STEP_ROWS;
	struct sm_select sel;
	struct idx_job *job;

	memset(im, 0, sizeof(*im));
	im->with_pk = true;
	im->ncols = ncols;
	memset(&sel, 0, sizeof(sel));
	sel.table = base;
	sel.token_start = INT64_MIN;
	sel.token_end = INT64_MAX;
	sel.cols = cols;
	sel.ncols = ncols;
	sel.per_partition_limit = statics ? 1 : 0;
	sel.marker = im->with_marker = !statics;
	sel.sink.row = image_row;
	sel.sink.ctx = im;
	*ret = sm_store_scan_local(&sel, &bs->pos, &budget);
	job = job_new(NULL);
	if (job == NULL || (*ret < 0 && *ret != -ENOENT) || im->err < 0) {
		bs->result = *ret < 0 ? *ret : -ENOMEM;
		image_free(im);
		if (job != NULL)
			job_free(job);
		backfill_shard_done(bs);
		return NULL;
	}
	job->done = backfill_step_done;
	job->arg = bs;
	return job;
}

/* Send a step's view writes; the job's done() schedules the next step (@ret 1: more). */
static void
backfill_step_end(struct backfill_shard *bs, struct idx_job *job, struct image *im, int ret)
{
	image_free(im);
	job->result = bs->result < 0 ? bs->result : (ret == 1 ? 0 : 1);
	job_submit(job);
	job_put(job);
}

/* One bounded step: up to BACKFILL_STEP_ROWS base rows of this shard into the view. */
static void
backfill_step(void *arg)
{
	struct backfill_shard *bs = arg;
	const struct sm_table *view = sm_catalog_table(sm_store_catalog(), bs->bf->ks, bs->bf->view);
	const struct sm_table *base = NULL;
	const struct idx_set *s = NULL;
	struct sm_index_info info;
	struct image im;
	struct idx_job *job;
	unsigned xi = 0, i;
	int ret;

	if (bs->bf->mv) {
		mv_backfill_step(bs, view);
		return;
	}
	if (view != NULL) {
		base = sm_catalog_table(sm_store_catalog(), bs->bf->ks,
					sm_option_get(view->options, view->noptions,
						      SM_INDEX_OPT_BASE));
		s = base != NULL ? set_of(base) : NULL;
	}
	for (; s != NULL && xi < s->n && s->idx[xi].view != view; xi++)
		;
	if (s == NULL || xi == s->n || sm_index_info(view, base, &info) < 0) {
		backfill_shard_done(bs); /* dropped meanwhile: nothing to fill */
		return;
	}
	job = backfill_scan(bs, base, s->cols, s->n, s->idx[xi].tkind == SM_COL_STATIC, &im, &ret);
	if (job == NULL)
		return;
	for (i = 0; i < im.nrows && ret >= 0; i++) {
		const struct img_row *q = &im.rows[i];
		struct sm_key pk;
		int err;

		if (q->ck_len == 0 && base->nck > 0 && s->idx[xi].tkind != SM_COL_STATIC)
			continue;
		sm_key_decode(im.buf + q->pk_off, q->pk_len, &pk);
		/* timestamps below every live write's: a write racing the scan wins */
		err = diff_row(job, s, xi, base, &pk, &im, NULL, &im, q, 1, 0, true);
		if (err < 0) {
			job_drop_reqs(job);
			bs->result = err;
			break;
		}
	}
	backfill_step_end(bs, job, &im, ret);
}

/* backfill_step() for a materialized view: each base row's view row, whole. */
static void
mv_backfill_step(struct backfill_shard *bs, const struct sm_table *view)
{
	const struct sm_table *base = NULL;
	const struct idx_set *s = NULL;
	const struct mv_rt *x = NULL;
	struct idx_job *job;
	struct image im;
	unsigned i;
	int ret;

	if (view != NULL && (base = sm_catalog_table(sm_store_catalog(), bs->bf->ks,
						     sm_view_base(view))) != NULL)
		s = set_of(base);
	for (i = 0; s != NULL && i < s->nmv && x == NULL; i++)
		if (s->mv[i]->view == view)
			x = s->mv[i];
	if (x == NULL) {
		backfill_shard_done(bs); /* dropped meanwhile: nothing to fill */
		return;
	}
	job = backfill_scan(bs, base, x->cols, x->ncols, false, &im, &ret);
	if (job == NULL)
		return;
	for (i = 0; i < im.nrows; i++) {
		const struct img_row *q = &im.rows[i];
		struct sm_key pk;
		int err;

		if (q->ck_len == 0 && base->nck > 0)
			continue;
		sm_key_decode(im.buf + q->pk_off, q->pk_len, &pk);
		/* a write to the row after this step replaces the view row again */
		err = mv_row(job, x, base, &pk, NULL, NULL, &im, q, 1);
		if (err < 0) {
			job_drop_reqs(job);
			bs->result = err;
			break;
		}
	}
	backfill_step_end(bs, job, &im, ret);
}

static void
backfill_start(void *arg)
{
	struct backfill_shard *bs = arg;

	sm_task_init(&bs->task, backfill_step, bs);
	backfill_step(bs);
}

static int
backfill(const struct sm_table *view, bool mv, void (*done)(void *arg, int result), void *arg)
{
	struct backfill *bf = sm_calloc(1, sizeof(*bf));
	unsigned i, n = sm_shard_count() ? sm_shard_count() : 1;

	if (bf == NULL)
		return -ENOMEM;
	bf->origin = sm_shard_id();
	bf->mv = mv;
	bf->done = done;
	bf->arg = arg;
	snprintf(bf->ks, sizeof(bf->ks), "%s", view->ks);
	snprintf(bf->view, sizeof(bf->view), "%s", view->name);
	bf->pending = n;
	for (i = 0; i < n; i++) {
		struct backfill_shard *bs = sm_calloc(1, sizeof(*bs));

		if (bs != NULL)
			bs->bf = bf;
		if (bs == NULL || sm_submit_to(i, backfill_start, bs, NULL) < 0) {
			/* the shards already started finish; this one counts as failed */
			sm_free(bs);
			bf->result = -ENOMEM;
			if (--bf->pending == 0) {
				done(arg, -ENOMEM);
				sm_free(bf);
				return 0;
			}
			continue;
		}
	}
	return 0;
}

int
sm_index_backfill(const struct sm_table *view, void (*done)(void *arg, int result), void *arg)
{
	return backfill(view, false, done, arg);
}

int
sm_view_backfill(const struct sm_table *view, void (*done)(void *arg, int result), void *arg)
{
	return backfill(view, true, done, arg);
}

static void
pools_fini(void)
{
	unsigned i;

	sm_free(mv_pick);
	mv_pick = NULL;
	mv_pick_cap = 0;
	while (free_vrs != NULL) {
		struct view_req *vr = free_vrs;

		free_vrs = vr->next_free;
		sm_free(vr);
	}
	nfree_vrs = 0;
	while (free_jobs != NULL) {
		struct idx_job *job = free_jobs;

		free_jobs = job->next_free;
		sm_free(job->reqs);
		sm_free(job);
	}
	nfree_jobs = 0;
	images_free(&scratch);
	for (i = 0; i < 2; i++) {
		sm_free(elems_scratch[i].v);
		sm_free(elems_scratch[i].buf);
		memset(&elems_scratch[i], 0, sizeof(elems_scratch[i]));
	}
}
