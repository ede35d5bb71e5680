/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Secondary indexes: GSIs and LSIs as ScyllaDB stores them
 * (alternator/executor.cc): each index is a view table in the base table's
 * keyspace, keyed by the index key and then the base key attributes the
 * index key lacks (so two base items never share a view row), holding the
 * projected attributes in its own ":attrs" map.
 *
 * Every write to a table with indexes reads its pre-image on the owning
 * shard in the same step as the write (a local compare-and-set, or Paxos
 * where the isolation mode wants LWT), then, back on the coordinator,
 * writes each index's view rows with the base write's timestamp: the old
 * row deleted when the index key changed, the new one written. Because
 * every view row of a base item is only written by writes to that item,
 * whose timestamps increase on the one shard that owns it, view updates
 * may arrive in any order: the newest wins, as in the base. A GSI's rows
 * live on the shard that owns the index key, so its update may hop; an
 * LSI's stay on the base's shard.
 *
 * UpdateTable adding a GSI creates the view, waits until no request that
 * planned its writes without the view is still running on any shard, then
 * backfills: every shard scans its own base partitions in bounded steps,
 * one timer tick each, writing view rows at a timestamp taken on the
 * owning shard (above every earlier write there, below every later one).
 * The index is CREATING (Backfilling) until every shard is done.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alt_priv.h"

/* The longest name of a view: ScyllaDB's limit on table + delimiter + index (executor_util.hh). */
#define MAX_VIEW_NAME 222u
#define BACKFILL_STEP_ROWS 256u

/* ---- key schemas and attribute definitions (CreateTable, UpdateTable) ---- */

/* ScyllaDB's validate_attr_name_length() (alternator/expressions.cc). */
static int
check_name_length(struct alt_op *op, const char *prefix, const char *ctx, size_t len, bool key)
{
	size_t max = key ? ALT_MAX_KEY_ATTR_NAME : 65535u;

	if (len > 0 && len <= max)
		return 0;
	alt_fail(op, "ValidationException", "%s%s%s%s%s", prefix, ctx[0] ? "in " : "", ctx,
		 ctx[0] ? " - " : "",
		 len == 0 ? "Empty attribute name"
			  : (key ? "Attribute name is too large, must be less than 256 bytes"
				 : "Attribute name is too large, must be less than 65536 bytes"));
	return -EINVAL;
}

/* Copy string @tok (at most @cap - 1 bytes, checked by the caller) NUL-terminated into @dst. */
static void
copy_str(struct alt_op *op, const struct sm_json_doc *d, int tok, char *dst, size_t cap)
{
	struct sm_bytes s = { 0 };

	alt_payload_str(op, d, tok, &s);
	if (s.len >= cap)
		s.len = (uint32_t)cap - 1;
	if (s.len > 0)
		memcpy(dst, s.p, s.len);
	dst[s.len] = '\0';
}

int
alt_parse_key_schema(struct alt_op *op, int obj, const char *ctx, struct alt_key_schema *out)
{
	const struct sm_json_doc *d = &op->doc;
	int ks = sm_json_get(d, obj, "KeySchema");
	int e, kt, an, i = 0;
	struct sm_bytes s;

	out->hash[0] = out->range[0] = '\0';
	if (sm_json_type(d, obj) != SM_JSON_OBJECT || ks < 0) {
		alt_fail(op, "ValidationException", "Missing KeySchema member");
		return -EINVAL;
	}
	if (sm_json_type(d, ks) != SM_JSON_ARRAY || sm_json_count(d, ks) < 1 ||
	    sm_json_count(d, ks) > 2) {
		alt_fail(op, "ValidationException", "KeySchema must list exactly one or two key columns");
		return -EINVAL;
	}
	for (e = sm_json_first(d, ks); e >= 0; e = sm_json_next(d, e), i++) {
		const char *which = i == 0 ? "First" : "Second";

		if (sm_json_type(d, e) != SM_JSON_OBJECT) {
			alt_fail(op, "ValidationException", "%s element of KeySchema must be an object",
				 which);
			return -EINVAL;
		}
		kt = sm_json_get(d, e, "KeyType");
		if (!sm_json_str_eq(d, kt, i == 0 ? "HASH" : "RANGE")) {
			alt_fail(op, "ValidationException", "%s key in KeySchema must be a %s key", which,
				 i == 0 ? "HASH" : "RANGE");
			return -EINVAL;
		}
		an = sm_json_get(d, e, "AttributeName");
		if (sm_json_type(d, an) != SM_JSON_STRING || alt_payload_str(op, d, an, &s) < 0) {
			alt_fail(op, "ValidationException",
				 "%s key in KeySchema must have string AttributeName", which);
			return -EINVAL;
		}
		if (check_name_length(op, i == 0 ? "HASH key in KeySchema - " : "RANGE key in KeySchema - ",
				      ctx, s.len, true) < 0)
			return -EINVAL;
		copy_str(op, d, an, i == 0 ? out->hash : out->range, sizeof(out->hash));
	}
	return 0;
}

static int
name_cmp(const void *a, const void *b)
{
	const struct sm_bytes *x = a, *y = b;
	int c = memcmp(x->p, y->p, SM_MIN(x->len, y->len));

	return c ? c : (int)x->len - (int)y->len;
}

int
alt_check_attr_defs(struct alt_op *op, int defs, const char *ctx)
{
	const struct sm_json_doc *d = &op->doc;
	unsigned n = sm_json_count(d, defs), i = 0;
	struct sm_bytes *names;
	int e, an, at;

	if (sm_json_type(d, defs) != SM_JSON_ARRAY) {
		alt_fail(op, "ValidationException", "AttributeDefinitions must be an array");
		return -EINVAL;
	}
	names = sm_malloc((n ? n : 1) * sizeof(*names));
	if (names == NULL) {
		alt_fail(op, "InternalServerError", "out of memory");
		return -ENOMEM;
	}
	for (e = sm_json_first(d, defs); e >= 0; e = sm_json_next(d, e)) {
		an = sm_json_get(d, e, "AttributeName");
		at = sm_json_get(d, e, "AttributeType");
		if (an < 0) {
			alt_fail(op, "ValidationException", "AttributeName missing in AttributeDefinitions");
			goto bad;
		}
		if (sm_json_type(d, an) != SM_JSON_STRING) {
			alt_fail(op, "ValidationException",
				 "AttributeName in AttributeDefinitions must be a string");
			goto bad;
		}
		/* the raw span, quotes dropped: enough to find duplicates */
		names[i] = sm_json_span(d, an);
		names[i].p++;
		names[i].len -= 2;
		if (check_name_length(op, "in AttributeDefinitions - ", ctx,
				      sm_json_str_has_escapes(d, an) ? 1 : names[i].len, true) < 0)
			goto bad;
		i++;
		if (at < 0) {
			alt_fail(op, "ValidationException", "AttributeType missing in AttributeDefinitions");
			goto bad;
		}
		if (sm_json_type(d, at) != SM_JSON_STRING) {
			alt_fail(op, "ValidationException",
				 "AttributeType in AttributeDefinitions must be a string");
			goto bad;
		}
	}
	/* n log n, not n^2: a client controls n */
	qsort(names, i, sizeof(*names), name_cmp);
	for (n = 1; n < i; n++) {
		if (name_cmp(&names[n - 1], &names[n]) == 0) {
			alt_fail(op, "ValidationException",
				 "Duplicate AttributeName=%.*s in AttributeDefinitions",
				 (int)SM_MIN(names[n].len, 255u), (const char *)names[n].p);
			goto bad;
		}
	}
	sm_free(names);
	return 0;
bad:
	sm_free(names);
	return -EINVAL;
}

int
alt_attr_type(struct alt_op *op, int defs, const char *name, char *type)
{
	const struct sm_json_doc *d = &op->doc;
	struct sm_bytes s;
	int e, at;

	for (e = sm_json_first(d, defs); e >= 0; e = sm_json_next(d, e)) {
		if (!sm_json_str_eq(d, sm_json_get(d, e, "AttributeName"), name))
			continue;
		at = sm_json_get(d, e, "AttributeType");
		if (sm_json_str_eq(d, at, "S") || sm_json_str_eq(d, at, "N") ||
		    sm_json_str_eq(d, at, "B")) {
			*type = (char)sm_json_span(d, at).p[1];
			return 0;
		}
		alt_payload_str(op, d, at, &s);
		alt_fail(op, "ValidationException", "Invalid key type '%.*s', can only be S, B or N.",
			 (int)SM_MIN(s.len, 64u), (const char *)s.p);
		return -EINVAL;
	}
	alt_fail(op, "ValidationException", "KeySchema key '%s' missing in AttributeDefinitions",
		 name);
	return -EINVAL;
}

const char *
alt_cql_key_type(char type)
{
	return type == 'S' ? "text" : type == 'N' ? "decimal" : "blob";
}

/* ---- index definitions ---- */

/* ScyllaDB's view_name() checks (alternator/executor_util.cc), then the view's name. */
static int
view_name(struct alt_op *op, const char *table, struct sm_bytes name, bool lsi, char *out,
	  size_t cap)
{
	size_t delim = lsi ? 2 : 1; /* ScyllaDB's "!:" and ":" */
	uint32_t i;

	if (name.len < 3) {
		alt_fail(op, "ValidationException", "IndexName must be at least 3 characters long");
		return -EINVAL;
	}
	for (i = 0; i < name.len; i++) {
		char c = (char)name.p[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-')) {
			alt_fail(op, "ValidationException",
				 "IndexName '%.*s' must satisfy regular expression pattern: "
				 "[a-zA-Z0-9_.-]+",
				 (int)SM_MIN(name.len, 255u), (const char *)name.p);
			return -EINVAL;
		}
	}
	if (strlen(table) + delim + name.len > MAX_VIEW_NAME) {
		alt_fail(op, "ValidationException",
			 "The total length of TableName ('%s') and IndexName ('%.*s') cannot exceed "
			 "%zu characters",
			 table, (int)SM_MIN(name.len, 255u), (const char *)name.p,
			 MAX_VIEW_NAME - delim);
		return -EINVAL;
	}
	/* The store's names allow '.', not ':': within the keyspace of one
	 * DynamoDB table, every table but the base is one of its views. */
	snprintf(out, cap, "%s.%.*s", table, (int)name.len, (const char *)name.p);
	return 0;
}

/*
 * The Projection of an index into @o, normalised (ProjectionType, then
 * NonKeyAttributes for INCLUDE), with DynamoDB's checks. *nproj counts
 * the projected attributes of every index together.
 */
static int
parse_projection(struct alt_op *op, int spec, const char *kind, unsigned *nproj,
		 struct sm_json_out *o)
{
	const struct sm_json_doc *d = &op->doc;
	int p = sm_json_get(d, spec, "Projection"), pt = sm_json_get(d, p, "ProjectionType");
	int nka = sm_json_get(d, p, "NonKeyAttributes"), a, b;
	struct sm_bytes s;
	bool include;

	if (sm_json_type(d, p) != SM_JSON_OBJECT) {
		alt_fail(op, "ValidationException",
			 "1 validation error detected: Value null at '%s.member.projection' failed "
			 "to satisfy constraint: Member must not be null",
			 kind);
		return -EINVAL;
	}
	if (pt < 0) {
		alt_fail(op, "ValidationException", "Unknown ProjectionType: null");
		return -EINVAL;
	}
	if (!sm_json_str_eq(d, pt, "ALL") && !sm_json_str_eq(d, pt, "KEYS_ONLY") &&
	    !sm_json_str_eq(d, pt, "INCLUDE")) {
		s = sm_json_span(d, pt);
		alt_fail(op, "ValidationException",
			 "1 validation error detected: Value %.*s at '%s.member.projection."
			 "projectionType' failed to satisfy constraint: Member must satisfy enum value "
			 "set: [ALL, INCLUDE, KEYS_ONLY]",
			 (int)SM_MIN(s.len, 255u), (const char *)s.p, kind);
		return -EINVAL;
	}
	include = sm_json_str_eq(d, pt, "INCLUDE");
	if (!include && nka >= 0) {
		alt_fail(op, "ValidationException",
			 "One or more parameter values were invalid: ProjectionType is %s, but "
			 "NonKeyAttributes is specified",
			 sm_json_str_eq(d, pt, "ALL") ? "ALL" : "KEYS_ONLY");
		return -EINVAL;
	}
	if (include && (sm_json_type(d, nka) != SM_JSON_ARRAY || sm_json_count(d, nka) == 0)) {
		alt_fail(op, "ValidationException",
			 "One or more parameter values were invalid: NonKeyAttributes must be "
			 "specified and non-empty when ProjectionType is INCLUDE");
		return -EINVAL;
	}
	sm_json_out_obj_begin(o);
	sm_json_out_key(o, "ProjectionType");
	sm_json_out_raw(o, (const char *)sm_json_span(d, pt).p, sm_json_span(d, pt).len);
	if (include) {
		if (sm_json_count(d, nka) > 100 || *nproj + sm_json_count(d, nka) > 100) {
			alt_fail(op, "ValidationException",
				 "One or more parameter values were invalid: Number of projected "
				 "attributes in all indexes exceeds limit of 100, number of projected "
				 "attributes:%u",
				 *nproj + sm_json_count(d, nka));
			return -EINVAL;
		}
		*nproj += sm_json_count(d, nka);
		sm_json_out_key(o, "NonKeyAttributes");
		sm_json_out_arr_begin(o);
		for (a = sm_json_first(d, nka); a >= 0; a = sm_json_next(d, a)) {
			if (sm_json_type(d, a) != SM_JSON_STRING) {
				alt_fail(op, "SerializationException",
					 "NonKeyAttributes must be a list of strings");
				return -EINVAL;
			}
			alt_payload_str(op, d, a, &s);
			/* projected names count as key names: 255 bytes (DynamoDB) */
			if (check_name_length(op, "NonKeyAttributes - ", "", s.len, true) < 0)
				return -EINVAL;
			/* at most 100 of them: pairs are cheap */
			for (b = sm_json_first(d, nka); b != a; b = sm_json_next(d, b)) {
				struct sm_bytes x = sm_json_span(d, a), y = sm_json_span(d, b);

				if (x.len == y.len && memcmp(x.p, y.p, x.len) == 0) {
					alt_fail(op, "ValidationException",
						 "One or more parameter values were invalid: "
						 "Duplicate projected attributes: [%.*s]",
						 (int)SM_MIN(x.len - 2, 255u),
						 (const char *)x.p + 1);
					return -EINVAL;
				}
			}
			sm_json_out_raw(o, (const char *)sm_json_span(d, a).p,
					sm_json_span(d, a).len);
		}
		sm_json_out_arr_end(o);
	}
	sm_json_out_obj_end(o);
	return o->err;
}

void
alt_index_defs_free(struct alt_index_def *defs, unsigned n)
{
	unsigned i;

	for (i = 0; defs != NULL && i < n; i++)
		sm_free(defs[i].opt);
	sm_free(defs);
}

/* Does @name already appear among @defs[0..n) (any kind)? */
static bool
name_taken(const struct alt_index_def *defs, unsigned n, struct sm_bytes name)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (strlen(defs[i].name) == name.len && memcmp(defs[i].name, name.p, name.len) == 0)
			return true;
	return false;
}

/* The view table of @x for base keys @base in @ks: columns and options. */
static int
build_view_def(struct alt_op *op, const char *ks, const struct alt_key_schema *base, char bht,
	       char brt, struct alt_index_def *x, const char *projection, size_t plen,
	       bool backfill)
{
	struct sm_json_out o;
	unsigned k = 0;

	x->cols[k++] = (struct sm_column_def){ x->keys.hash, alt_cql_key_type(x->hash_type),
					       SM_COL_PARTITION, false };
	if (x->keys.range[0] != '\0')
		x->cols[k++] = (struct sm_column_def){ x->keys.range, alt_cql_key_type(x->range_type),
						       SM_COL_CLUSTERING, false };
	/* the base key attributes the index key lacks: view rows stay one per item */
	if (strcmp(base->hash, x->keys.hash) != 0 && strcmp(base->hash, x->keys.range) != 0)
		x->cols[k++] = (struct sm_column_def){ base->hash, alt_cql_key_type(bht),
						       SM_COL_CLUSTERING, false };
	if (base->range[0] != '\0' && strcmp(base->range, x->keys.hash) != 0 &&
	    strcmp(base->range, x->keys.range) != 0)
		x->cols[k++] = (struct sm_column_def){ base->range, alt_cql_key_type(brt),
						       SM_COL_CLUSTERING, false };
	x->cols[k++] =
		(struct sm_column_def){ ALT_ATTRS_COL, "map<text, blob>", SM_COL_REGULAR, false };
	sm_json_out_init(&o);
	sm_json_out_obj_begin(&o);
	sm_json_out_key(&o, "name");
	sm_json_out_str(&o, x->name);
	sm_json_out_key(&o, "kind");
	sm_json_out_str(&o, x->lsi ? "LSI" : "GSI");
	sm_json_out_key(&o, "range");
	sm_json_out_bool(&o, x->keys.range[0] != '\0');
	sm_json_out_key(&o, "backfill");
	sm_json_out_bool(&o, backfill);
	sm_json_out_key(&o, "projection");
	sm_json_out_raw(&o, projection, plen);
	sm_json_out_obj_end(&o);
	if (o.err != 0) {
		sm_json_out_release(&o);
		alt_fail(op, "InternalServerError", "out of memory");
		return -ENOMEM;
	}
	x->opt = o.p; /* the writer's buffer, NUL-terminated, becomes the option */
	x->opts[0] = (struct sm_option){ NULL, x->opt };
	x->opts[0].key = (char *)(uintptr_t)ALT_OPT_INDEX;
	x->def = (struct sm_table_def){ .ks = ks,
					.name = x->view,
					.cols = x->cols,
					.ncols = k,
					.options = x->opts,
					.noptions = 1,
					.wide_names = true };
	return 0;
}

/*
 * One entry of LocalSecondaryIndexes or GlobalSecondaryIndexes (@spec) into
 * @x, with ScyllaDB's checks in its order (alternator/executor.cc,
 * create_table_on_shard0).
 */
static int
parse_one(struct alt_op *op, int spec, bool lsi, const char *table, const char *ks,
	  const struct alt_key_schema *base, char bht, char brt, int defs, unsigned *nproj,
	  struct alt_index_def *prev, unsigned nprev, struct alt_index_def *x, bool backfill)
{
	const struct sm_json_doc *d = &op->doc;
	const char *kind = lsi ? "LocalSecondaryIndexes" : "GlobalSecondaryIndexes";
	int nt = sm_json_get(d, spec, "IndexName");
	struct sm_json_out proj;
	struct sm_bytes name;
	int ret;

	if (sm_json_type(d, nt) != SM_JSON_STRING || alt_payload_str(op, d, nt, &name) < 0) {
		alt_fail(op, "ValidationException", "%s IndexName must be a string.", kind);
		return -EINVAL;
	}
	if (name_taken(prev, nprev, name)) {
		alt_fail(op, "ValidationException", "Duplicate IndexName '%.*s', ",
			 (int)SM_MIN(name.len, 255u), (const char *)name.p);
		return -EINVAL;
	}
	memset(x, 0, sizeof(*x));
	x->lsi = lsi;
	if (view_name(op, table, name, lsi, x->view, sizeof(x->view)) < 0)
		return -EINVAL;
	memcpy(x->name, name.p, name.len);
	x->name[name.len] = '\0';
	if (lsi && base->range[0] == '\0') {
		alt_fail(op, "ValidationException",
			 "LocalSecondaryIndex requires that the base table have a range key");
		return -EINVAL;
	}
	if (alt_parse_key_schema(op, spec, lsi ? "Local Secondary Index" : kind, &x->keys) < 0)
		return -EINVAL;
	if (lsi) {
		if (strcmp(x->keys.hash, base->hash) != 0) {
			alt_fail(op, "ValidationException",
				 "LocalSecondaryIndex hash key must match the base table hash key");
			return -EINVAL;
		}
		if (x->keys.range[0] == '\0') {
			alt_fail(op, "ValidationException",
				 "LocalSecondaryIndex must specify a sort key");
			return -EINVAL;
		}
		if (strcmp(x->keys.range, base->hash) == 0) {
			alt_fail(op, "ValidationException",
				 "LocalSecondaryIndex sort key cannot be the same as hash key");
			return -EINVAL;
		}
	}
	if (x->keys.range[0] != '\0' && strcmp(x->keys.hash, x->keys.range) == 0) {
		alt_fail(op, "ValidationException",
			 "Invalid KeySchema: Both the Hash Key and the Range Key element in the "
			 "KeySchema have the same name");
		return -EINVAL;
	}
	if (alt_attr_type(op, defs, x->keys.hash, &x->hash_type) < 0 ||
	    (x->keys.range[0] != '\0' && alt_attr_type(op, defs, x->keys.range, &x->range_type) < 0))
		return -EINVAL;
	sm_json_out_init(&proj);
	ret = parse_projection(op, spec, kind, nproj, &proj);
	if (ret == -ENOMEM)
		alt_fail(op, "InternalServerError", "out of memory");
	if (ret == 0)
		ret = build_view_def(op, ks, base, bht, brt, x, proj.p, proj.len, backfill);
	sm_json_out_release(&proj);
	return ret;
}

int
alt_index_parse_create(struct alt_op *op, const char *table, const char *ks,
		       const struct alt_key_schema *base, char bht, char brt, int defs,
		       struct alt_index_def **out, unsigned *nout)
{
	const struct sm_json_doc *d = &op->doc;
	int lsis = sm_json_get(d, op->root, "LocalSecondaryIndexes");
	int gsis = sm_json_get(d, op->root, "GlobalSecondaryIndexes");
	unsigned n = 0, nproj = 0, cap;
	struct alt_index_def *x;
	int e;

	*out = NULL;
	*nout = 0;
	if (lsis >= 0 && sm_json_type(d, lsis) != SM_JSON_ARRAY) {
		alt_fail(op, "ValidationException", "LocalSecondaryIndexes must be an array.");
		return -EINVAL;
	}
	if (gsis >= 0 && sm_json_type(d, gsis) != SM_JSON_ARRAY) {
		alt_fail(op, "ValidationException", "GlobalSecondaryIndexes must be an array.");
		return -EINVAL;
	}
	if (sm_json_count(d, lsis) > ALT_MAX_LSI) {
		alt_fail(op, "ValidationException",
			 "One or more parameter values were invalid: Number of LocalSecondaryIndexes "
			 "exceeds per-table limit of %u",
			 ALT_MAX_LSI);
		return -EINVAL;
	}
	if (sm_json_count(d, gsis) > ALT_MAX_GSI) {
		alt_fail(op, "LimitExceededException",
			 "One or more parameter values were invalid: GlobalSecondaryIndex count "
			 "exceeds the per-table limit of %u",
			 ALT_MAX_GSI);
		return -EINVAL;
	}
	cap = sm_json_count(d, lsis) + sm_json_count(d, gsis);
	if (cap == 0)
		return 0;
	x = sm_calloc(cap, sizeof(*x));
	if (x == NULL) {
		alt_fail(op, "InternalServerError", "out of memory");
		return -ENOMEM;
	}
	for (e = sm_json_first(d, lsis); e >= 0; e = sm_json_next(d, e), n++)
		if (parse_one(op, e, true, table, ks, base, bht, brt, defs, &nproj, x, n, &x[n],
			      false) < 0)
			goto fail;
	for (e = sm_json_first(d, gsis); e >= 0; e = sm_json_next(d, e), n++)
		if (parse_one(op, e, false, table, ks, base, bht, brt, defs, &nproj, x, n, &x[n],
			      false) < 0)
			goto fail;
	*out = x;
	*nout = n;
	return 0;
fail:
	alt_index_defs_free(x, n + 1);
	return -EINVAL;
}

bool
alt_index_defs_use(const struct alt_index_def *defs, unsigned n, const char *name)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (strcmp(defs[i].keys.hash, name) == 0 || strcmp(defs[i].keys.range, name) == 0)
			return true;
	return false;
}

/* ---- the index sets, per shard ---- */

static void
index_free(struct alt_index *x)
{
	unsigned i;

	for (i = 0; i < x->ninclude; i++)
		sm_free(x->include[i]);
	sm_free(x->include);
	sm_free(x->name);
	sm_free(x->projection);
	if (x->vt != NULL)
		sm_table_put(x->vt);
}

/* The index a view table @vt describes (its ALT_OPT_INDEX), into @x. */
static int
index_from_view(const struct sm_table *vt, struct alt_index *x)
{
	const char *def = sm_option_get(vt->options, vt->noptions, ALT_OPT_INDEX);
	struct sm_json_doc d;
	struct sm_bytes s;
	bool range = false;
	int ret = -EINVAL, p, nka, a;
	unsigned i, k;

	memset(x, 0, sizeof(*x));
	if (def == NULL || vt->npk != 1 || vt->nck > 3)
		return -EINVAL;
	sm_json_doc_init(&d);
	if (sm_json_parse(&d, def, strlen(def), 0) < 0)
		goto out;
	x->lsi = sm_json_str_eq(&d, sm_json_get(&d, 0, "kind"), "LSI");
	sm_json_bool(&d, sm_json_get(&d, 0, "range"), &range);
	sm_json_bool(&d, sm_json_get(&d, 0, "backfill"), &x->backfill);
	if (sm_json_str(&d, sm_json_get(&d, 0, "name"), NULL, 0, &s) < 0)
		goto out;
	x->name = sm_malloc(s.len + 1);
	p = sm_json_get(&d, 0, "projection");
	s = sm_json_span(&d, p);
	x->projection = sm_malloc(s.len + 1);
	if (x->name == NULL || x->projection == NULL)
		goto nomem;
	sm_json_str(&d, sm_json_get(&d, 0, "name"), NULL, 0, &s);
	memcpy(x->name, s.p, s.len);
	x->name[s.len] = '\0';
	s = sm_json_span(&d, p);
	memcpy(x->projection, s.p, s.len);
	x->projection[s.len] = '\0';
	x->proj = sm_json_str_eq(&d, sm_json_get(&d, p, "ProjectionType"), "KEYS_ONLY")
			  ? ALT_PROJ_KEYS_ONLY
		  : sm_json_str_eq(&d, sm_json_get(&d, p, "ProjectionType"), "INCLUDE")
			  ? ALT_PROJ_INCLUDE
			  : ALT_PROJ_ALL;
	nka = sm_json_get(&d, p, "NonKeyAttributes");
	if (sm_json_count(&d, nka) > 0) {
		x->include = sm_calloc(sm_json_count(&d, nka), sizeof(*x->include));
		if (x->include == NULL)
			goto nomem;
		for (a = sm_json_first(&d, nka); a >= 0; a = sm_json_next(&d, a)) {
			char *v;

			/* names were validated (strings, unescaped below) at creation */
			v = sm_malloc(sm_json_span(&d, a).len + 1);
			if (v == NULL)
				goto nomem;
			sm_json_str(&d, a, v, sm_json_span(&d, a).len + 1, &s);
			memmove(v, s.p, s.len);
			v[s.len] = '\0';
			x->include[x->ninclude++] = v;
		}
	}
	x->hash = &vt->cols[0];
	x->hash_type = alt_col_type(x->hash);
	k = 1;
	if (range) {
		if (vt->nck < 1)
			goto out;
		x->range = &vt->cols[k++];
		x->range_type = alt_col_type(x->range);
	}
	for (i = 0; k < 1u + vt->nck && i < 2; i++, k++) {
		x->xck[i] = &vt->cols[k];
		x->xck_type[i] = alt_col_type(x->xck[i]);
	}
	x->nxck = i;
	if (sm_table_column(vt, ALT_ATTRS_COL) == NULL)
		goto out;
	x->attrs_col = sm_table_column(vt, ALT_ATTRS_COL)->id;
	sm_table_get(vt);
	x->vt = vt;
	ret = 0;
	goto out;
nomem:
	ret = -ENOMEM;
out:
	if (ret < 0)
		index_free(x);
	sm_json_doc_release(&d);
	return ret;
}

struct alt_index_set *
alt_index_set_build(const struct sm_catalog *cat, const struct sm_keyspace *ks,
		    const struct sm_table *base)
{
	struct alt_index_set *s;
	unsigned i, n = 0;

	for (i = 0; ks != NULL && i < ks->ntables; i++)
		if (ks->tables[i] != base)
			n++;
	s = sm_calloc(1, sizeof(*s) + n * sizeof(s->idx[0]));
	if (s == NULL)
		return NULL;
	s->refs = 1;
	sm_catalog_get((struct sm_catalog *)(uintptr_t)cat);
	s->cat = cat;
	s->base = base->id;
	for (i = 0; ks != NULL && i < ks->ntables; i++) {
		if (ks->tables[i] == base)
			continue;
		/* a table of the keyspace without a usable definition is left out */
		if (index_from_view(ks->tables[i], &s->idx[s->n]) == 0)
			s->n++;
	}
	return s;
}

const struct alt_index *
alt_index_find(const struct alt_index_set *s, const char *name, size_t len)
{
	unsigned i;

	for (i = 0; s != NULL && i < s->n; i++)
		if (strlen(s->idx[i].name) == len && memcmp(s->idx[i].name, name, len) == 0)
			return &s->idx[i];
	return NULL;
}

/* ---- DescribeTable ---- */

static bool
index_built(const struct alt_index *x);

static void
write_key_schema(struct sm_json_out *o, const char *hash, const char *range)
{
	sm_json_out_key(o, "KeySchema");
	sm_json_out_arr_begin(o);
	sm_json_out_obj_begin(o);
	sm_json_out_key(o, "AttributeName");
	sm_json_out_str(o, hash);
	sm_json_out_key(o, "KeyType");
	sm_json_out_str(o, "HASH");
	sm_json_out_obj_end(o);
	if (range != NULL) {
		sm_json_out_obj_begin(o);
		sm_json_out_key(o, "AttributeName");
		sm_json_out_str(o, range);
		sm_json_out_key(o, "KeyType");
		sm_json_out_str(o, "RANGE");
		sm_json_out_obj_end(o);
	}
	sm_json_out_arr_end(o);
}

void
alt_index_describe(struct sm_json_out *o, const struct alt_table *t, const char *arn)
{
	const struct alt_index_set *s = t->idx;
	char buf[sizeof(ALT_ARN_PREFIX) + 2 * ALT_MAX_TABLE_NAME + 16];
	unsigned i, pass;

	for (pass = 0; s != NULL && pass < 2; pass++) {
		bool lsi = pass == 0, any = false;

		for (i = 0; i < s->n; i++) {
			const struct alt_index *x = &s->idx[i];

			if (x->lsi != lsi)
				continue;
			if (!any)
				sm_json_out_key(o, lsi ? "LocalSecondaryIndexes"
						       : "GlobalSecondaryIndexes");
			if (!any)
				sm_json_out_arr_begin(o);
			any = true;
			sm_json_out_obj_begin(o);
			sm_json_out_key(o, "IndexName");
			sm_json_out_str(o, x->name);
			write_key_schema(o, x->hash->name, x->range ? x->range->name : NULL);
			sm_json_out_key(o, "Projection");
			sm_json_out_raw(o, x->projection, strlen(x->projection));
			sm_json_out_key(o, "IndexArn");
			snprintf(buf, sizeof(buf), "%s/index/%s", arn, x->name);
			sm_json_out_str(o, buf);
			if (!lsi) {
				bool built = index_built(x);

				sm_json_out_key(o, "IndexStatus");
				sm_json_out_str(o, built ? "ACTIVE" : "CREATING");
				if (!built) {
					sm_json_out_key(o, "Backfilling");
					sm_json_out_bool(o, true);
				}
				sm_json_out_key(o, "ProvisionedThroughput");
				sm_json_out_obj_begin(o);
				sm_json_out_key(o, "NumberOfDecreasesToday");
				sm_json_out_i64(o, 0);
				sm_json_out_key(o, "ReadCapacityUnits");
				sm_json_out_i64(o, 0);
				sm_json_out_key(o, "WriteCapacityUnits");
				sm_json_out_i64(o, 0);
				sm_json_out_obj_end(o);
			}
			/* DynamoDB refreshes these about every six hours; a new index shows 0 */
			sm_json_out_key(o, "IndexSizeBytes");
			sm_json_out_i64(o, 0);
			sm_json_out_key(o, "ItemCount");
			sm_json_out_i64(o, 0);
			sm_json_out_obj_end(o);
		}
		if (any)
			sm_json_out_arr_end(o);
	}
}

void
alt_index_attr_defs(struct sm_json_out *o, const struct alt_table *t)
{
	const struct alt_index_set *s = t->idx;
	const struct sm_column *seen[2 * (ALT_MAX_GSI + ALT_MAX_LSI) + 2];
	unsigned n = 0, i, j, k;

	seen[n++] = t->hash;
	if (t->range != NULL)
		seen[n++] = t->range;
	for (i = 0; s != NULL && i < s->n; i++) {
		const struct sm_column *keys[2] = { s->idx[i].hash, s->idx[i].range };
		char type[2] = { 0, 0 };

		for (k = 0; k < 2; k++) {
			if (keys[k] == NULL)
				continue;
			for (j = 0; j < n; j++)
				if (strcmp(seen[j]->name, keys[k]->name) == 0)
					break;
			if (j < n || n == SM_ARRAY_SIZE(seen))
				continue;
			seen[n++] = keys[k];
			type[0] = alt_col_type(keys[k]);
			sm_json_out_obj_begin(o);
			sm_json_out_key(o, "AttributeName");
			sm_json_out_str(o, keys[k]->name);
			sm_json_out_key(o, "AttributeType");
			sm_json_out_str(o, type);
			sm_json_out_obj_end(o);
		}
	}
}

/* ---- Query and Scan on an index ---- */

int
alt_index_open(struct alt_op *op, int name_tok)
{
	const struct sm_json_doc *d = &op->doc;
	const struct alt_index *x;
	struct sm_bytes name;

	if (sm_json_type(d, name_tok) != SM_JSON_STRING || alt_payload_str(op, d, name_tok, &name) < 0) {
		alt_fail(op, "ValidationException", "Non-string IndexName");
		return -EINVAL;
	}
	x = alt_index_find(op->tab.idx, (const char *)name.p, name.len);
	if (x == NULL) {
		alt_fail(op, "ValidationException",
			 "The table does not have the specified index: %.*s",
			 (int)SM_MIN(name.len, 255u), (const char *)name.p);
		return -EINVAL;
	}
	op->tab.t = x->vt;
	op->tab.hash = x->hash;
	op->tab.hash_type = x->hash_type;
	op->tab.range = x->range;
	op->tab.range_type = x->range_type;
	memcpy(op->tab.xck, x->xck, sizeof(op->tab.xck));
	memcpy(op->tab.xck_type, x->xck_type, sizeof(op->tab.xck_type));
	op->tab.nxck = x->nxck;
	op->tab.attrs_col = x->attrs_col;
	op->tab.index = x;
	return 0;
}

bool
alt_index_projects(const struct alt_index *x, const char *name, size_t len)
{
	unsigned i;

	if (x->proj == ALT_PROJ_ALL)
		return true;
	if ((strlen(x->hash->name) == len && memcmp(x->hash->name, name, len) == 0) ||
	    (x->range != NULL && strlen(x->range->name) == len &&
	     memcmp(x->range->name, name, len) == 0))
		return true;
	for (i = 0; i < x->nxck; i++)
		if (strlen(x->xck[i]->name) == len && memcmp(x->xck[i]->name, name, len) == 0)
			return true;
	for (i = 0; i < x->ninclude; i++)
		if (strlen(x->include[i]) == len && memcmp(x->include[i], name, len) == 0)
			return true;
	return false;
}

/* ---- checks on written values ---- */

/* Decoded bytes of the base64 text of JSON string @s (quotes included, validated already). */
static size_t
b64_len(struct sm_bytes s)
{
	size_t n = s.len >= 2 ? s.len - 2 : 0, pad = 0;

	while (pad < 2 && n > pad && s.p[1 + n - 1 - pad] == '=')
		pad++;
	return n / 4 * 3 - (n % 4 == 0 ? pad : 0);
}

/* An index key's value: DynamoDB's checks (type, empty, size), 0 or -EINVAL with op->errmsg. */
static int
check_key_value(struct alt_op *op, const struct alt_index *x, bool hash,
		const struct sm_json_doc *d, int v)
{
	const struct sm_column *c = hash ? x->hash : x->range;
	char want = hash ? x->hash_type : x->range_type, t[5];
	size_t len = 0, max = hash ? 2048 : 1024;
	struct sm_bytes s;
	int p;

	if (alt_value_type(d, v, t, &p) < 0)
		return 0; /* malformed: the value's own validation speaks */
	if (t[1] != '\0' || t[0] != want) {
		snprintf(op->errmsg, sizeof(op->errmsg),
			 "One or more parameter values were invalid: Type mismatch for Index Key %s "
			 "Expected: %c Actual: %s IndexName: %s",
			 c->name, want, t, x->name);
		return -EINVAL;
	}
	if (want == 'N')
		return 0;
	s = sm_json_span(d, p);
	if (want == 'S' && alt_payload_str(op, d, p, &s) == 0)
		len = s.len;
	else if (want == 'B')
		len = b64_len(s);
	if (len == 0) {
		snprintf(op->errmsg, sizeof(op->errmsg),
			 "One or more parameter values are not valid. A value specified for a "
			 "secondary index key is not supported. The AttributeValue for a key attribute "
			 "cannot contain an empty %s value. IndexName: %s, IndexKey: %s",
			 want == 'S' ? "string" : "binary", x->name, c->name);
		return -EINVAL;
	}
	if (len > max) {
		snprintf(op->errmsg, sizeof(op->errmsg),
			 hash ? "One or more parameter values were invalid: Size of hashkey has "
				"exceeded the maximum size limit of 2048 bytes (IndexName: %s, "
				"IndexKey: %s)"
			      : "One or more parameter values were invalid: Aggregated size of all "
				"range keys has exceeded the size limit of 1024 bytes (IndexName: %s, "
				"IndexKey: %s)",
			 x->name, c->name);
		return -EINVAL;
	}
	return 0;
}

bool
alt_index_is_key(const struct alt_index_set *s, const char *name)
{
	unsigned i;

	for (i = 0; s != NULL && i < s->n; i++)
		if (strcmp(s->idx[i].hash->name, name) == 0 ||
		    (s->idx[i].range != NULL && strcmp(s->idx[i].range->name, name) == 0))
			return true;
	return false;
}

int
alt_index_check_value(struct alt_op *op, const char *name, const struct sm_json_doc *d, int v)
{
	const struct alt_index_set *s = op->tab.idx;
	unsigned i;
	int ret;

	if (s == NULL || s->n == 0 || strcmp(name, op->tab.hash->name) == 0 ||
	    (op->tab.range != NULL && strcmp(name, op->tab.range->name) == 0))
		return 0; /* base keys have their own checks */
	for (i = 0; i < s->n; i++) {
		const struct alt_index *x = &s->idx[i];

		if (strcmp(x->hash->name, name) == 0 && (ret = check_key_value(op, x, true, d, v)) < 0)
			return ret;
		if (x->range != NULL && strcmp(x->range->name, name) == 0 &&
		    (ret = check_key_value(op, x, false, d, v)) < 0)
			return ret;
	}
	return 0;
}

int
alt_index_check_item(struct alt_op *op, const struct sm_json_doc *d, int obj)
{
	struct sm_bytes k;
	char name[ALT_MAX_KEY_ATTR_NAME + 1];
	int e, ret;

	for (e = sm_json_first(d, obj); e >= 0; e = sm_json_next(d, e)) {
		/* index key names are at most 255 bytes: longer ones are not keys */
		if (alt_payload_str(op, d, e, &k) < 0 || k.len >= sizeof(name))
			continue;
		memcpy(name, k.p, k.len);
		name[k.len] = '\0';
		ret = alt_index_check_value(op, name, d, sm_json_member_value(d, e));
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* ---- view rows of a write ---- */

/*
 * The value of view key column @c for an item: a base key part, or the
 * item's attribute of that name as key bytes (in op->keys, which the
 * caller points at its own buffer). 1 when the item has a usable value,
 * 0 when it is not indexed (missing, another type, empty, too long).
 */
static int
key_col(struct alt_op *op, const struct sm_column *c, char type, const struct sm_json_doc *d,
	int obj, const struct sm_key *pk, const struct sm_key *ck, struct sm_bytes *out)
{
	int v;

	if (strcmp(c->name, op->tab.hash->name) == 0) {
		*out = pk->part[0];
		return 1;
	}
	if (op->tab.range != NULL && strcmp(c->name, op->tab.range->name) == 0) {
		*out = ck->part[0];
		return 1;
	}
	v = sm_json_get(d, obj, c->name);
	if (v < 0)
		return 0;
	return alt_key_value(op, d, v, c, type, out) == 0 ? 1 : 0;
}

/* The view key of item @obj in index @x; 1, or 0 when the item is not in it. */
static int
view_key(struct alt_op *op, const struct alt_index *x, const struct sm_json_doc *d, int obj,
	 const struct sm_key *pk, const struct sm_key *ck, struct sm_key *vpk, struct sm_key *vck)
{
	unsigned i;

	vpk->n = 1;
	vck->n = 0;
	if (key_col(op, x->hash, x->hash_type, d, obj, pk, ck, &vpk->part[0]) <= 0)
		return 0;
	if (x->range != NULL &&
	    key_col(op, x->range, x->range_type, d, obj, pk, ck, &vck->part[vck->n++]) <= 0)
		return 0;
	for (i = 0; i < x->nxck; i++)
		if (key_col(op, x->xck[i], x->xck_type[i], d, obj, pk, ck, &vck->part[vck->n++]) <= 0)
			return 0;
	/* the store's limit on one clustering key (SM_MAX_KEY_BYTES): such an item stays out */
	return sm_key_size(vck) + 4 * vck->n <= SM_MAX_KEY_BYTES ? 1 : 0;
}

/* Is member name @k (of the new item) a key column of @x's view? */
static bool
is_view_key(const struct alt_index *x, struct sm_bytes k)
{
	const struct sm_column *cols[4] = { x->hash, x->range, x->xck[0], x->xck[1] };
	unsigned i;

	for (i = 0; i < 2 + x->nxck; i++)
		if (cols[i] != NULL && strlen(cols[i]->name) == k.len &&
		    memcmp(cols[i]->name, k.p, k.len) == 0)
			return true;
	return false;
}

/*
 * The view's attrs map of item @obj in op->vvals: every attribute an LSI
 * holds (all) or a GSI projects, view key columns left out.
 */
static int
view_map(struct alt_op *op, const struct alt_index *x, const struct sm_json_doc *d, int obj,
	 struct sm_bytes *out)
{
	struct alt_kv small[32], *kv = small;
	unsigned n = 0, cap = sm_json_count(d, obj);
	struct sm_bytes k, v;
	int e, ret;

	if (cap > SM_ARRAY_SIZE(small)) {
		kv = sm_malloc(cap * sizeof(*kv));
		if (kv == NULL)
			return -ENOMEM;
	}
	for (e = sm_json_first(d, obj); e >= 0; e = sm_json_next(d, e)) {
		/* member names are kept escaped-free by alt_keep_str() when they need it */
		if (alt_payload_str(op, d, e, &k) < 0 || is_view_key(x, k) ||
		    (!x->lsi && !alt_index_projects(x, (const char *)k.p, k.len)))
			continue;
		v = sm_json_span(d, sm_json_member_value(d, e));
		kv[n].k.p = (const uint8_t *)alt_keep_str(op, k.p, k.len);
		if (kv[n].k.p == NULL) {
			ret = -ENOMEM;
			goto out;
		}
		kv[n].k.len = k.len;
		kv[n].v = v;
		n++;
	}
	ret = alt_build_map(&op->vvals, kv, n, out);
out:
	if (kv != small)
		sm_free(kv);
	return ret;
}

/* Queue one view mutation at @ts: the row at @vpk/@vck deleted, or written with @map. */
static int
view_mutation(struct alt_op *op, const struct alt_index *x, int64_t ts, const struct sm_key *vpk,
	      const struct sm_key *vck, const struct sm_bytes *map)
{
	struct sm_store_req *r = alt_new_sreq(op);
	struct sm_mutation *m;
	struct sm_cell_op *c;

	if (r == NULL)
		return -ENOMEM;
	r->kind = SM_REQ_MUTATE;
	m = &r->mut;
	m->table = x->vt;
	m->pk = *vpk;
	m->ck = *vck;
	m->ts = ts;
	m->ttl = 0;
	if (map == NULL) {
		m->flags = vck->n > 0 ? SM_MUT_DELETE_ROW : SM_MUT_DELETE_PARTITION;
		return 0;
	}
	c = &op->vops[op->nvops++];
	memset(c, 0, sizeof(*c));
	c->col = x->attrs_col;
	c->kind = SM_CELL_SET;
	c->value = *map;
	m->flags = SM_MUT_ROW_MARKER;
	m->ops = c;
	m->nops = 1;
	return 0;
}

/* Room the view keys of items @d/@obj can take: their key attributes, decoded. */
static size_t
keys_room(const struct alt_index_set *s, const struct sm_json_doc *d, int obj)
{
	size_t n = 64;
	unsigned i;

	for (i = 0; d != NULL && i < s->n; i++) {
		n += sm_json_span(d, sm_json_get(d, obj, s->idx[i].hash->name)).len +
		     SM_DDB_NUMBER_DECIMAL_MAX;
		if (s->idx[i].range != NULL)
			n += sm_json_span(d, sm_json_get(d, obj, s->idx[i].range->name)).len +
			     SM_DDB_NUMBER_DECIMAL_MAX;
	}
	return n;
}

static void
after_views(struct alt_op *op)
{
	if (op->first_err != 0) {
		alt_fail(op, op->first_err == -ENOMEM ? "RequestLimitExceeded" : "InternalServerError",
			 "The item was written but its secondary indexes were not all updated: %s",
			 op->errmsg);
		return;
	}
	op->next = op->index_next;
	op->next(op);
}

/* Make room for the view rows of up to @nrows items: no buffer moves while they are queued. */
static int
views_reserve(struct alt_op *op, size_t keys, size_t vals, unsigned nops)
{
	op->vkeys.len = 0;
	op->vvals.len = 0;
	op->nvops = 0;
	op->index_bufs = true;
	if (alt_bytes_reserve(&op->vkeys, keys) < 0 || alt_bytes_reserve(&op->vvals, vals) < 0)
		return -ENOMEM;
	if (op->vops_cap < nops) {
		struct sm_cell_op *v = sm_realloc(op->vops, nops * sizeof(*v));

		if (v == NULL)
			return -ENOMEM;
		op->vops = v;
		op->vops_cap = nops;
	}
	return 0;
}

/* Queue the view mutations index @x needs for one item going from @od/@otok to @nd/@ntok. */
static int
views_add(struct alt_op *op, const struct alt_index *x, int64_t ts, const struct sm_json_doc *od,
	  int otok, const struct sm_json_doc *nd, int ntok, const struct sm_key *pk,
	  const struct sm_key *ck)
{
	struct alt_bytes saved = op->keys;
	struct sm_key opk, ock, npk, nck;
	struct sm_bytes map;
	int ret = 0, has_old, has_new;

	/* alt_key_value() writes key bytes to op->keys: point it at ours meanwhile */
	op->keys = op->vkeys;
	has_old = od != NULL && view_key(op, x, od, otok, pk, ck, &opk, &ock);
	has_new = nd != NULL && view_key(op, x, nd, ntok, pk, ck, &npk, &nck);
	if (has_old && (!has_new || !alt_key_eq(&opk, &npk) || !alt_key_eq(&ock, &nck)))
		ret = view_mutation(op, x, ts, &opk, &ock, NULL);
	if (ret == 0 && has_new) {
		ret = view_map(op, x, nd, ntok, &map);
		if (ret == 0)
			ret = view_mutation(op, x, ts, &npk, &nck, &map);
	}
	op->vkeys = op->keys;
	op->keys = saved;
	return ret == -ENOSPC ? -ENOMEM : ret;
}

static size_t
vals_room(const struct sm_json_doc *d, int obj)
{
	return d == NULL ? 64 : sm_json_span(d, obj).len + 16 * sm_json_count(d, obj) + 64;
}

int
alt_index_build_writes(struct alt_op *op, const struct alt_index_set *s, int64_t ts,
		       const struct sm_json_doc *od, int otok, const struct sm_json_doc *nd,
		       int ntok, const struct sm_key *pk, const struct sm_key *ck)
{
	unsigned i;
	int ret;

	ret = views_reserve(op, keys_room(s, od, otok) + keys_room(s, nd, ntok),
			    s->n * vals_room(nd, ntok), s->n);
	for (i = 0; i < s->n && ret == 0; i++)
		ret = views_add(op, &s->idx[i], ts, od, otok, nd, ntok, pk, ck);
	return ret;
}

void
alt_index_write(struct alt_op *op, int64_t ts, const struct sm_json_doc *od, int otok,
		const struct sm_json_doc *nd, int ntok, const struct sm_key *pk,
		const struct sm_key *ck, alt_op_fn next)
{
	op->nsreqs = 0;
	if (alt_index_build_writes(op, op->tab.idx, ts, od, otok, nd, ntok, pk, ck) < 0) {
		alt_fail(op, "InternalServerError",
			 "out of memory updating the secondary indexes of a written item");
		return;
	}
	op->index_next = next;
	op->next = after_views;
	alt_submit(op);
}

/* ---- index status, per shard ---- */

/* GSIs created by UpdateTable whose backfill finished on every shard. */
static __thread struct sm_uuid *built;
static __thread unsigned nbuilt, built_cap;

static bool
index_built(const struct alt_index *x)
{
	unsigned i;

	if (!x->backfill)
		return true;
	for (i = 0; i < nbuilt; i++)
		if (memcmp(&built[i], &x->vt->id, sizeof(built[i])) == 0)
			return true;
	return false;
}

bool
alt_index_readable(const struct alt_index *x)
{
	return index_built(x);
}

static void
mark_built(const struct sm_uuid *id)
{
	struct sm_uuid *v;

	if (nbuilt == built_cap) {
		v = sm_realloc(built, (built_cap ? 2 * built_cap : 8) * sizeof(*v));
		if (v == NULL) {
			SM_WARN("out of memory marking an index built: it stays CREATING");
			return;
		}
		built = v;
		built_cap = built_cap ? 2 * built_cap : 8;
	}
	built[nbuilt++] = *id;
}

/* ---- the drain barrier: no request that planned without the view still runs ---- */

/*
 * Index sets the per-shard cache let go of while requests still held them;
 * a barrier waits until none of a table's sets that lack the new view is
 * left here.
 */
static __thread struct alt_index_set *retired;

struct barrier {
	struct sm_uuid base;
	const struct sm_table *view; /* held */
	void (*done)(void *arg);
	void *arg;
	struct sm_timer timer;
	struct barrier *next;
};

static __thread struct barrier *barriers;

static bool
set_has_view(const struct alt_index_set *s, const struct sm_table *view)
{
	unsigned i;

	for (i = 0; i < s->n; i++)
		if (memcmp(&s->idx[i].vt->id, &view->id, sizeof(view->id)) == 0)
			return true;
	return false;
}

static bool
barrier_clear(const struct barrier *b)
{
	const struct alt_index_set *s;

	for (s = retired; s != NULL; s = s->next_retired)
		if (memcmp(&s->base, &b->base, sizeof(b->base)) == 0 && !set_has_view(s, b->view))
			return false;
	return true;
}

static void
barrier_fire(void *arg)
{
	struct barrier *b = arg;

	sm_table_put(b->view);
	b->done(b->arg);
	sm_free(b);
}

/* A retired set went away: barriers it held up may fire (from a timer: not inside a reply). */
static void
barriers_check(void)
{
	struct barrier **pp = &barriers, *b;

	while ((b = *pp) != NULL) {
		if (!barrier_clear(b)) {
			pp = &b->next;
			continue;
		}
		*pp = b->next;
		sm_timer_init(&b->timer, barrier_fire, b);
		if (sm_timer_arm(&b->timer, 0) < 0)
			barrier_fire(b);
	}
}

static void
set_free(struct alt_index_set *s)
{
	unsigned i;

	for (i = 0; i < s->n; i++)
		index_free(&s->idx[i]);
	sm_catalog_put((struct sm_catalog *)(uintptr_t)s->cat);
	sm_free(s);
}

void
alt_index_set_retire(struct alt_index_set *s)
{
	if (s == NULL)
		return;
	if (s->refs > 1) {
		s->next_retired = retired;
		retired = s;
		s->retired = true;
	}
	alt_index_set_put(s);
}

void
alt_index_set_put(struct alt_index_set *s)
{
	struct alt_index_set **pp;

	if (s == NULL || --s->refs > 0)
		return;
	if (s->retired) {
		for (pp = &retired; *pp != NULL; pp = &(*pp)->next_retired) {
			if (*pp == s) {
				*pp = s->next_retired;
				break;
			}
		}
		set_free(s);
		if (barriers != NULL)
			barriers_check();
		return;
	}
	set_free(s);
}

/*
 * On this shard: run @done once no request that looked the base table up
 * before @view existed is still running here. The cache drops its set
 * without the view, so the next request builds one with it.
 */
static void
barrier_start(const struct sm_uuid *base, const struct sm_table *view, void (*done)(void *arg),
	      void *arg)
{
	struct barrier *b = sm_calloc(1, sizeof(*b));

	alt_meta_drop_index_set(base);
	if (b == NULL) {
		/* no memory to wait: go on; a late write may then miss the view */
		SM_WARN("out of memory waiting for requests before a backfill");
		done(arg);
		return;
	}
	b->base = *base;
	sm_table_get(view);
	b->view = view;
	b->done = done;
	b->arg = arg;
	b->next = barriers;
	barriers = b;
	barriers_check();
}

/* ---- UpdateTable: a GSI created, backfilled, or deleted ---- */

/*
 * One GlobalSecondaryIndexUpdates operation, from the request to the
 * index being ACTIVE. Lives on the coordinating shard; the others read it.
 */
struct gsi_job {
	struct alt_op *op; /* answered once the view exists (or is gone) */
	unsigned origin;
	bool create;
	struct sm_ddl_req ddl;
	struct alt_index_def def;
	char ks[sizeof(ALT_KS_PREFIX) + ALT_MAX_TABLE_NAME + 1];
	char table[ALT_MAX_TABLE_NAME + 1];
	struct sm_uuid base;
	/* the base table's key names: the view's definition points at them until it exists */
	struct alt_key_schema base_keys;
	const struct sm_table *view; /* held once created */
	unsigned pending;
	uint64_t rows; /* backfilled, all shards */
};

/* A backfill running on one shard, in steps of at most BACKFILL_STEP_ROWS rows. */
struct backfill {
	struct gsi_job *job;
	struct sm_timer timer;
	struct alt_op *op; /* this step's buffers */
	struct alt_bytes rows; /* the step's rows: key parts and item JSON, length-prefixed */
	unsigned nrows;
	bool last;
	uint64_t done;
	struct sm_scan_pos pos;
	struct backfill *next;
};

static __thread struct backfill *backfills;

static void
job_free(struct gsi_job *job)
{
	if (job->view != NULL)
		sm_table_put(job->view);
	sm_free(job->def.opt);
	sm_free(job);
}

static void
job_built_ack(void *arg)
{
	struct gsi_job *job = arg;

	if (--job->pending == 0) {
		SM_INFO("alternator: index %s of table %s backfilled (%llu items)", job->def.name,
			job->table, (unsigned long long)job->rows);
		job_free(job);
	}
}

static void
job_mark_built(void *arg)
{
	struct gsi_job *job = arg;

	mark_built(&job->view->id);
}

/* Every shard backfilled: the index turns ACTIVE everywhere. */
static void
job_backfilled(struct gsi_job *job)
{
	unsigned i;

	job->pending = 1;
	for (i = 0; i < sm_shard_count(); i++) {
		job->pending++;
		if (sm_submit_to(i, job_mark_built, job, job_built_ack) < 0)
			job->pending--;
	}
	job_built_ack(job);
}

struct job_ack {
	struct gsi_job *job;
	uint64_t rows;
};

static void
job_backfill_ack(void *arg)
{
	struct job_ack *a = arg;
	struct gsi_job *job = a->job;

	job->rows += a->rows;
	sm_free(a);
	if (--job->pending == 0)
		job_backfilled(job);
}

static void
backfill_step(void *arg);

static void
backfill_finish(struct backfill *bf)
{
	struct backfill **pp;
	struct job_ack *a = sm_calloc(1, sizeof(*a));

	for (pp = &backfills; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == bf) {
			*pp = bf->next;
			break;
		}
	}
	if (a == NULL) {
		SM_WARN("out of memory reporting a finished backfill: the index stays CREATING");
	} else {
		a->job = bf->job;
		a->rows = bf->done;
		if (sm_submit_to(bf->job->origin, job_backfill_ack, a, NULL) < 0) {
			SM_WARN("backfill report could not reach shard %u", bf->job->origin);
			sm_free(a);
		}
	}
	sm_free(bf->rows.p);
	sm_free(bf);
}

/* Append @n bytes with a 4-byte length first. */
static int
put_part(struct alt_bytes *b, const void *p, uint32_t n)
{
	if (alt_bytes_reserve(b, 4 + (size_t)n) < 0)
		return -ENOMEM;
	memcpy(b->p + b->len, &n, 4);
	if (n > 0)
		memcpy(b->p + b->len + 4, p, n);
	b->len += 4 + n;
	return 0;
}

static const uint8_t *
get_part(const uint8_t *p, struct sm_bytes *out)
{
	memcpy(&out->len, p, 4);
	out->p = p + 4;
	return p + 4 + out->len;
}

/* The step's scan sink: keep the row's key and item for after the scan. */
static int
backfill_row(void *ctx, const struct sm_row_view *r)
{
	struct backfill *bf = ctx;
	struct alt_op *op = bf->op;
	int ret;

	sm_json_out_reset(&op->item);
	alt_write_row_item(op, &op->item, r->pk, r->ck, &r->cells[0]);
	if (op->item.err != 0)
		return op->item.err;
	ret = put_part(&bf->rows, r->pk->part[0].p, r->pk->part[0].len);
	if (ret == 0)
		ret = put_part(&bf->rows, r->ck && r->ck->n ? r->ck->part[0].p : NULL,
			       r->ck && r->ck->n ? r->ck->part[0].len : 0);
	if (ret == 0)
		ret = put_part(&bf->rows, op->item.p, (uint32_t)op->item.len);
	if (ret == 0)
		bf->nrows++;
	return ret;
}

static void
backfill_written(struct alt_op *op)
{
	struct backfill *bf = op->batch;

	if (op->first_err != 0)
		SM_WARN("alternator: backfilling index %s of %s: %s (some items left out)",
			bf->job->def.name, bf->job->table, op->errmsg);
	op->batch = NULL;
	alt_op_done(op);
	bf->op = NULL;
	if (bf->last) {
		backfill_finish(bf);
		return;
	}
	sm_timer_init(&bf->timer, backfill_step, bf);
	if (sm_timer_arm(&bf->timer, 0) < 0)
		backfill_finish(bf);
}

/* Write the view rows of the step's rows at @ts. */
static int
backfill_views(struct backfill *bf, const struct alt_index *x, int64_t ts)
{
	struct alt_op *op = bf->op;
	size_t keys = 64, vals = 64;
	const uint8_t *p, *end = bf->rows.p + bf->rows.len;
	struct sm_bytes pk, ck, item;
	struct sm_key k1, k2;
	int ret = 0;

	for (p = bf->rows.p; p < end;) {
		p = get_part(get_part(get_part(p, &pk), &ck), &item);
		keys += item.len + 2 * SM_DDB_NUMBER_DECIMAL_MAX;
		vals += 2 * (size_t)item.len + 64; /* a map entry adds 8 bytes, a member takes 6 */
	}
	if (views_reserve(op, keys, vals, bf->nrows) < 0)
		return -ENOMEM;
	op->nsreqs = 0;
	for (p = bf->rows.p; p < end && ret == 0;) {
		p = get_part(get_part(get_part(p, &pk), &ck), &item);
		if (sm_json_parse(&op->idoc, (const char *)item.p, item.len, 0) < 0)
			continue;
		k1.n = 1;
		k1.part[0] = pk;
		k2.n = op->tab.range != NULL ? 1 : 0;
		k2.part[0] = ck;
		ret = views_add(op, x, ts, NULL, -1, &op->idoc, sm_json_root(&op->idoc), &k1, &k2);
	}
	return ret;
}

static void
backfill_step(void *arg)
{
	struct backfill *bf = arg;
	struct gsi_job *job = bf->job;
	const struct sm_catalog *cat = sm_store_catalog();
	const struct alt_index *x = NULL;
	const struct sm_table *base = sm_catalog_table(cat, job->ks, job->table);
	struct sm_select s;
	uint16_t col;
	uint32_t budget;
	unsigned i;
	int64_t ts;
	int ret = 0;

	if (base == NULL || sm_catalog_table(cat, job->ks, job->def.view) != job->view) {
		backfill_finish(bf); /* the table or the index went away */
		return;
	}
	bf->op = alt_op_new();
	if (bf->op == NULL || alt_table_lookup(bf->op, job->table, strlen(job->table),
					       &bf->op->tab) < 0) {
		if (bf->op != NULL)
			alt_op_done(bf->op);
		SM_WARN("alternator: backfill of %s stopped: out of memory", job->table);
		backfill_finish(bf);
		return;
	}
	bf->op->have_tab = true;
	for (i = 0; i < bf->op->tab.idx->n; i++)
		if (bf->op->tab.idx->idx[i].vt == job->view)
			x = &bf->op->tab.idx->idx[i];
	bf->rows.len = 0;
	bf->nrows = 0;
	if (x == NULL)
		goto last;
	col = bf->op->tab.attrs_col;
	alt_local_scan_init(&s, base, &col, backfill_row, bf);
	/* one row per call, so the step stops at a row count or a byte count */
	while (bf->nrows < BACKFILL_STEP_ROWS && bf->rows.len < (1u << 20)) {
		budget = 1;
		ret = sm_store_scan_local(&s, &bf->pos, &budget);
		if (ret <= 0)
			break;
	}
	/* above every write this shard applied so far, below every later one */
	ts = sm_store_now_us();
	if (ret < 0 && ret != -ENOENT)
		SM_WARN("alternator: backfill of %s: scan failed (%s)", job->table, strerror(-ret));
	if (ret <= 0)
		bf->last = true;
	if (backfill_views(bf, x, ts) < 0) {
		SM_WARN("alternator: backfill of %s: out of memory (some items left out)",
			job->table);
		bf->op->nsreqs = 0;
	}
	bf->done += bf->nrows;
	bf->op->batch = bf;
	bf->op->next = backfill_written;
	alt_submit(bf->op);
	return;
last:
	alt_op_done(bf->op);
	bf->op = NULL;
	backfill_finish(bf);
}

static void
backfill_start(void *arg)
{
	struct gsi_job *job = arg;
	struct backfill *bf = sm_calloc(1, sizeof(*bf));

	if (bf == NULL) {
		struct job_ack *a = sm_calloc(1, sizeof(*a));

		SM_WARN("alternator: out of memory starting a backfill: index %s misses this "
			"shard's items",
			job->def.name);
		/* report it done, so the other shards' part still completes */
		if (a != NULL) {
			a->job = job;
			if (sm_submit_to(job->origin, job_backfill_ack, a, NULL) < 0)
				sm_free(a);
		}
		return;
	}
	bf->job = job;
	bf->next = backfills;
	backfills = bf;
	backfill_step(bf);
}

static void
job_drained_ack(void *arg)
{
	struct gsi_job *job = arg;
	unsigned i;

	if (--job->pending > 0)
		return;
	/* no request planned without the view anywhere: backfill every shard */
	job->pending = sm_shard_count();
	for (i = 0; i < sm_shard_count(); i++) {
		if (sm_submit_to(i, backfill_start, job, NULL) < 0) {
			SM_WARN("alternator: backfill could not reach shard %u", i);
			job->pending--;
		}
	}
	if (job->pending == 0)
		job_backfilled(job);
}

static void
job_drained(void *arg)
{
	struct gsi_job *job = arg;

	if (sm_submit_to(job->origin, job_drained_ack, job, NULL) < 0)
		SM_WARN("alternator: barrier report could not reach shard %u", job->origin);
}

static void
job_barrier(void *arg)
{
	struct gsi_job *job = arg;

	barrier_start(&job->base, job->view, job_drained, job);
}

static void
gsi_ddl_done(struct sm_ddl_req *r)
{
	struct gsi_job *job = r->ctx;
	struct alt_op *op = job->op;
	unsigned i;

	if (r->result == -EEXIST || r->result == 1) {
		alt_fail(op, "ValidationException", "GSI %s already exists in table %s",
			 job->def.name, job->table);
		goto free;
	}
	if (r->result == -ENOENT && !job->create) {
		alt_fail(op, "ResourceNotFoundException", "No GSI %s in table %s", job->def.name,
			 job->table);
		goto free;
	}
	if (r->result < 0) {
		alt_fail(op, r->result == -ENOENT ? "ResourceNotFoundException" : "ValidationException",
			 "%s", r->err);
		goto free;
	}
	alt_table_answer_updated(op);
	if (!job->create)
		goto free;
	job->view = sm_catalog_table(sm_store_catalog(), job->ks, job->def.view);
	if (job->view == NULL)
		goto free; /* dropped already */
	sm_table_get(job->view);
	job->pending = sm_shard_count();
	for (i = 0; i < sm_shard_count(); i++) {
		if (sm_submit_to(i, job_barrier, job, NULL) < 0) {
			SM_WARN("alternator: barrier could not reach shard %u", i);
			job->pending--;
		}
	}
	if (job->pending == 0) {
		job->pending = 1;
		job_drained_ack(job);
	}
	return;
free:
	job_free(job);
}

/* Is @name a key attribute of the base or an index of @t, and of which type? */
static char
key_type_in_table(const struct alt_table *t, const char *name)
{
	unsigned i;

	if (strcmp(t->hash->name, name) == 0)
		return t->hash_type;
	if (t->range != NULL && strcmp(t->range->name, name) == 0)
		return t->range_type;
	for (i = 0; t->idx != NULL && i < t->idx->n; i++) {
		const struct alt_index *x = &t->idx->idx[i];

		if (strcmp(x->hash->name, name) == 0)
			return x->hash_type;
		if (x->range != NULL && strcmp(x->range->name, name) == 0)
			return x->range_type;
	}
	return 0;
}

static int
check_create(struct alt_op *op, struct gsi_job *job, int spec)
{
	const struct sm_json_doc *d = &op->doc;
	int defs = sm_json_get(d, op->root, "AttributeDefinitions");
	struct alt_key_schema *base = &job->base_keys;
	const struct alt_index *x;
	struct sm_bytes name;
	unsigned nproj = 0, i, ngsi = 0;
	char have, type[2] = { 0, 0 };
	int e;

	if (defs < 0) {
		alt_fail(op, "ValidationException",
			 "GlobalSecondaryIndexUpdates Create needs AttributeDefinitions");
		return -EINVAL;
	}
	if (alt_check_attr_defs(op, defs, "GlobalSecondaryIndexUpdates") < 0)
		return -EINVAL;
	for (e = sm_json_first(d, defs); e >= 0; e = sm_json_next(d, e)) {
		int an = sm_json_get(d, e, "AttributeName"), at = sm_json_get(d, e, "AttributeType");
		char nbuf[ALT_MAX_KEY_ATTR_NAME + 1];

		copy_str(op, d, an, nbuf, sizeof(nbuf));
		have = key_type_in_table(&op->tab, nbuf);
		if (have != 0 && !(sm_json_span(d, at).len == 3 && sm_json_span(d, at).p[1] == have)) {
			struct sm_bytes ts = sm_json_span(d, at);

			type[0] = have;
			alt_fail(op, "ValidationException",
				 "One or more parameter values were invalid: Attributes cannot be "
				 "redefined: AttributeDefinitions redefined %s to %.*s already a key "
				 "attribute of type %s in this table",
				 nbuf, (int)SM_MIN(ts.len, 16u), (const char *)ts.p, type);
			return -EINVAL;
		}
	}
	if (alt_payload_str(op, d, sm_json_get(d, spec, "IndexName"), &name) == 0) {
		x = alt_index_find(op->tab.idx, (const char *)name.p, name.len);
		if (x != NULL && !x->lsi) {
			alt_fail(op, "ValidationException", "GSI %.*s already exists in table %s",
				 (int)SM_MIN(name.len, 255u), (const char *)name.p, op->tab.name);
			return -EINVAL;
		}
		if (x != NULL) {
			alt_fail(op, "ValidationException",
				 "LSI %.*s already exists in table %s, can't use same name for GSI",
				 (int)SM_MIN(name.len, 255u), (const char *)name.p, op->tab.name);
			return -EINVAL;
		}
	}
	for (i = 0; i < op->tab.idx->n; i++) {
		ngsi += !op->tab.idx->idx[i].lsi;
		if (op->tab.idx->idx[i].proj == ALT_PROJ_INCLUDE)
			nproj += op->tab.idx->idx[i].ninclude;
	}
	if (ngsi >= ALT_MAX_GSI) {
		alt_fail(op, "LimitExceededException",
			 "One or more parameter values were invalid: GlobalSecondaryIndex count "
			 "exceeds the per-table limit of %u",
			 ALT_MAX_GSI);
		return -EINVAL;
	}
	snprintf(base->hash, sizeof(base->hash), "%s", op->tab.hash->name);
	snprintf(base->range, sizeof(base->range), "%s", op->tab.range ? op->tab.range->name : "");
	if (parse_one(op, spec, false, op->tab.name, job->ks, base, op->tab.hash_type,
		      op->tab.range_type, defs, &nproj, NULL, 0, &job->def, true) < 0)
		return -EINVAL;
	/* ScyllaDB checks for unused definitions here too (DynamoDB ignores them) */
	for (e = sm_json_first(d, defs); e >= 0; e = sm_json_next(d, e)) {
		int an = sm_json_get(d, e, "AttributeName");

		if (!sm_json_str_eq(d, an, job->def.keys.hash) &&
		    !sm_json_str_eq(d, an, job->def.keys.range)) {
			alt_payload_str(op, d, an, &name);
			alt_fail(op, "ValidationException",
				 "AttributeDefinitions defines spurious attributes not used by any "
				 "KeySchema: {%.*s}",
				 (int)SM_MIN(name.len, 255u), (const char *)name.p);
			return -EINVAL;
		}
	}
	return 0;
}

int
alt_index_update_table(struct alt_op *op, int updates)
{
	const struct sm_json_doc *d = &op->doc;
	int e = sm_json_first(d, updates), spec;
	struct sm_bytes kind, name;
	struct gsi_job *job;
	const struct alt_index *x;
	char vname[MAX_VIEW_NAME + 8];

	if (sm_json_type(d, updates) != SM_JSON_ARRAY) {
		alt_fail(op, "ValidationException", "GlobalSecondaryIndexUpdates must be an array");
		return -EINVAL;
	}
	if (sm_json_count(d, updates) == 0)
		return 0;
	if (sm_json_count(d, updates) > 1) {
		alt_fail(op, "LimitExceededException",
			 "GlobalSecondaryIndexUpdates only allows one index creation or deletion");
		return -EINVAL;
	}
	if (sm_json_type(d, e) != SM_JSON_OBJECT || sm_json_count(d, e) != 1) {
		alt_fail(op, "ValidationException",
			 "GlobalSecondaryIndexUpdates array must contain one object with a Create, "
			 "Delete or Update operation");
		return -EINVAL;
	}
	kind = sm_json_span(d, sm_json_first(d, e));
	spec = sm_json_member_value(d, sm_json_first(d, e));
	if (sm_json_type(d, spec) != SM_JSON_OBJECT) {
		alt_fail(op, "ValidationException", "GlobalSecondaryIndexUpdates entries must be objects");
		return -EINVAL;
	}
	if (sm_json_type(d, sm_json_get(d, spec, "IndexName")) != SM_JSON_STRING ||
	    alt_payload_str(op, d, sm_json_get(d, spec, "IndexName"), &name) < 0) {
		alt_fail(op, "ValidationException",
			 "GlobalSecondaryIndexUpdates operation must have IndexName");
		return -EINVAL;
	}
	if (view_name(op, op->tab.name, name, false, vname, sizeof(vname)) < 0)
		return -EINVAL;
	job = sm_calloc(1, sizeof(*job));
	if (job == NULL) {
		alt_fail(op, "InternalServerError", "out of memory");
		return -ENOMEM;
	}
	job->op = op;
	job->origin = sm_shard_id();
	job->base = op->tab.t->id;
	snprintf(job->table, sizeof(job->table), "%s", op->tab.name);
	snprintf(job->ks, sizeof(job->ks), ALT_KS_PREFIX "%s", op->tab.name);
	if (kind.len == 8 && memcmp(kind.p, "\"Create\"", 8) == 0) {
		job->create = true;
		if (check_create(op, job, spec) < 0)
			goto fail;
		job->ddl.kind = SM_DDL_CREATE_TABLE;
		job->ddl.table = job->def.def;
	} else if (kind.len == 8 && memcmp(kind.p, "\"Delete\"", 8) == 0) {
		x = alt_index_find(op->tab.idx, (const char *)name.p, name.len);
		if (x == NULL || x->lsi) {
			alt_fail(op, "ResourceNotFoundException", "No GSI %.*s in table %s",
				 (int)SM_MIN(name.len, 255u), (const char *)name.p, op->tab.name);
			goto fail;
		}
		snprintf(job->def.name, sizeof(job->def.name), "%s", x->name);
		snprintf(job->def.view, sizeof(job->def.view), "%s", x->vt->name);
		job->ddl.kind = SM_DDL_DROP_TABLE;
		job->ddl.ks_name = job->ks;
		job->ddl.table_name = job->def.view;
	} else if (kind.len == 8 && memcmp(kind.p, "\"Update\"", 8) == 0) {
		alt_fail(op, "ValidationException", "GlobalSecondaryIndexUpdates Update not yet supported");
		goto fail;
	} else {
		alt_fail(op, "ValidationException",
			 "GlobalSecondaryIndexUpdates supports a Create, Delete or Update operation, "
			 "saw '%.*s'",
			 (int)SM_MIN(kind.len - 2, 64u), (const char *)kind.p + 1);
		goto fail;
	}
	job->ddl.done = gsi_ddl_done;
	job->ddl.ctx = job;
	sm_store_ddl(&job->ddl);
	return 1;
fail:
	job_free(job);
	return -EINVAL;
}

void
alt_index_shard_fini(void)
{
	struct backfill *bf;
	struct barrier *b;
	struct alt_index_set *s;

	while ((bf = backfills) != NULL) {
		backfills = bf->next;
		sm_timer_cancel(&bf->timer);
		if (bf->op != NULL)
			alt_op_done(bf->op);
		sm_free(bf->rows.p);
		sm_free(bf);
	}
	while ((b = barriers) != NULL) {
		barriers = b->next;
		sm_table_put(b->view);
		sm_free(b);
	}
	/* sets still held by requests go with them; forget the list */
	while ((s = retired) != NULL) {
		retired = s->next_retired;
		s->retired = false;
	}
	sm_free(built);
	built = NULL;
	nbuilt = built_cap = 0;
}
