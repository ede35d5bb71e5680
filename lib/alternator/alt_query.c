/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Query and Scan: store reads whose row sink builds each item, applies the
 * filter and projection and appends it to the response, one store request
 * at a time (so the sink, on whichever shard reads, is the only writer).
 *
 * Limit counts items read before the filter, as DynamoDB does; the page
 * ends there with LastEvaluatedKey, the key of the last item read, which
 * ExclusiveStartKey resumes from on any shard.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "alt_priv.h"

#define CHUNK 1000u /* rows per store read without a Limit */

/* A page of Query or Scan ends after 1 MB read, filtered out or not, as DynamoDB's. */
#define ALT_PAGE_BYTES (1u << 20)

static struct sm_store_req *
one_sreq(struct alt_op *op)
{
	if (op->sreqs_cap == 0) {
		op->sreqs = sm_calloc(4, sizeof(*op->sreqs));
		if (op->sreqs == NULL)
			return NULL;
		op->sreqs_cap = 4;
	}
	op->nsreqs = 1;
	return &op->sreqs[0];
}

/* Copy a key into op->last (reserved), for LastEvaluatedKey. */
static void
remember(struct alt_op *op, const struct sm_key *src, struct sm_key *dst)
{
	unsigned i;

	dst->n = src->n;
	for (i = 0; i < src->n; i++) {
		uint8_t *p = alt_bytes_put(&op->last, src->part[i].p, src->part[i].len);

		dst->part[i].p = p ? p : (const uint8_t *)"";
		dst->part[i].len = p ? src->part[i].len : 0;
	}
}

/* The type of clustering component @i of op->tab (range key, then a view's base keys). */
static const struct sm_type *
ck_type(const struct alt_table *t, unsigned i)
{
	if (t->range != NULL)
		return i == 0 ? t->range->type : t->xck[i - 1]->type;
	return t->xck[i]->type;
}

/* Compare clustering keys component by component, in the table's order. */
static int
ck_compare(const struct alt_table *t, const struct sm_key *a, const struct sm_key *b)
{
	unsigned i, n = SM_MIN(a->n, b->n);
	int c;

	for (i = 0; i < n; i++) {
		c = sm_value_compare(ck_type(t, i), a->part[i], b->part[i]);
		if (c != 0)
			return c;
	}
	return (int)a->n - (int)b->n;
}

static int
write_index_projected(struct alt_op *op, const struct sm_json_doc *d, int itok,
		      struct sm_json_out *o);

/*
 * Count @r's bytes toward the page; past ALT_PAGE_BYTES stop the read (with
 * -ECANCELED, which read_done() takes for a full page, not an error).
 */
static int
page_end(struct alt_op *op, const struct sm_row_view *r)
{
	unsigned i;

	for (i = 0; i < r->ncells; i++)
		op->page_bytes += r->cells[i].value.len;
	if (SM_LIKELY(op->page_bytes < ALT_PAGE_BYTES))
		return 0;
	op->page_full = true;
	return -ECANCELED;
}

static int
scan_row(void *ctx, const struct sm_row_view *r)
{
	struct alt_op *op = ctx;
	int itok;
	bool ok = true;

	if (op->skipping) {
		/* Scan resuming inside the start partition: skip up to the start key. */
		if (alt_key_eq(r->pk, &op->start_pk)) {
			if (op->start_ck.n == 0 || ck_compare(&op->tab, r->ck, &op->start_ck) <= 0)
				return 0;
		}
		op->skipping = false;
	}
	op->scanned++;
	op->last.len = 0;
	remember(op, r->pk, &op->last_pk);
	op->last_ck.n = 0;
	if (r->ck != NULL && r->ck->n > 0)
		remember(op, r->ck, &op->last_ck);
	op->have_last = true;
	if (op->filter != NULL || op->proj != NULL || !op->count_only ||
	    SM_UNLIKELY(op->legacy_filter >= 0)) {
		sm_json_out_reset(&op->item);
		if (op->tab.nxck > 0)
			alt_write_view_row(op, &op->item, r->pk, r->ck, &r->cells[0]);
		else
			alt_write_row_item(op, &op->item, r->pk, r->ck, &r->cells[0]);
		if (op->item.err || sm_json_parse(&op->idoc, op->item.p, op->item.len, 0) < 0)
			return -ENOMEM;
		itok = sm_json_root(&op->idoc);
		if (op->filter != NULL &&
		    alt_eval_cond(op, op->filter->cond, &op->idoc, itok, &ok) < 0) {
			/* the store's answer replaces op->errmsg: keep ours apart */
			op->cond_error = true;
			snprintf(op->cond_err, sizeof(op->cond_err), "%s", op->errmsg);
			return -EINVAL;
		}
		if (SM_UNLIKELY(op->legacy_filter >= 0) &&
		    alt_legacy_eval(op, op->legacy_filter, op->legacy_any, &op->idoc, itok, &ok) < 0) {
			op->cond_error = true;
			snprintf(op->cond_err, sizeof(op->cond_err), "%s", op->errmsg);
			return -EINVAL;
		}
		if (!ok)
			return page_end(op, r);
		if (!op->count_only &&
		    (op->index_projected && op->tab.index->proj != ALT_PROJ_ALL
			     ? write_index_projected(op, &op->idoc, itok, &op->out)
			     : alt_write_projected(op, &op->idoc, itok, &op->out)) < 0)
			return -ENOMEM;
	}
	op->returned++;
	return page_end(op, r);
}

static void
write_last_key(struct alt_op *op)
{
	unsigned i;

	sm_json_out_key(&op->out, "LastEvaluatedKey");
	sm_json_out_obj_begin(&op->out);
	sm_json_out_key(&op->out, op->tab.hash->name);
	alt_write_key_value(&op->out, op->tab.hash_type, op->last_pk.part[0]);
	if (op->tab.range != NULL && op->last_ck.n > 0) {
		sm_json_out_key(&op->out, op->tab.range->name);
		alt_write_key_value(&op->out, op->tab.range_type, op->last_ck.part[0]);
	}
	/* an index's: the base key attributes too, which resume needs */
	for (i = 0; i < op->tab.nxck && (op->tab.range ? 1 : 0) + i < op->last_ck.n; i++) {
		sm_json_out_key(&op->out, op->tab.xck[i]->name);
		alt_write_key_value(&op->out, op->tab.xck_type[i],
				    op->last_ck.part[(op->tab.range ? 1 : 0) + i]);
	}
	sm_json_out_obj_end(&op->out);
}

static void
read_more(struct alt_op *op);

static void
read_done(struct alt_op *op)
{
	struct sm_select *sel = &op->sreqs[0].sel;
	bool limited = op->limit > 0;

	if (op->first_err != 0 && !op->page_full) {
		if (op->cond_error)
			alt_fail(op, "ValidationException", "%s", op->cond_err);
		else
			alt_fail(op, "InternalServerError", "%s", op->errmsg);
		return;
	}
	if (op->page_full)
		sel->more = true; /* it stopped after op->last_pk/last_ck */
	else if (sel->more && (!limited || op->scanned < (uint32_t)op->limit)) {
		sel->resume = true;
		read_more(op);
		return;
	}
	if (!op->count_only)
		sm_json_out_arr_end(&op->out);
	sm_json_out_key(&op->out, "Count");
	sm_json_out_i64(&op->out, op->returned);
	sm_json_out_key(&op->out, "ScannedCount");
	sm_json_out_i64(&op->out, op->scanned);
	if (sel->more && op->have_last)
		write_last_key(op);
	{
		bool consistent = false;
		uint64_t halves;

		/* DynamoDB: the size of everything read (filtered out or not), in 4 KB blocks;
		 * ScyllaDB's metrics count it whether asked or not, and the rows a filter read
		 * and kept */
		sm_json_bool(&op->doc, op->consistent_tok, &consistent);
		halves = alt_rcu_halves(op->page_bytes, consistent);
		ALT_OP_STAT_ADD(op, rcu_halves, halves);
		if (op->filter != NULL || op->legacy_filter >= 0) {
			ALT_OP_STAT_ADD(op, filtered_rows_read, op->scanned);
			ALT_OP_STAT_ADD(op, filtered_rows_matched, op->returned);
		}
		if (op->cap_mode != ALT_CAP_NONE) {
			sm_json_out_key(&op->out, "ConsumedCapacity");
			alt_capacity_write(op, &op->out, op->tab.name, halves, op->tab.index);
		}
	}
	sm_json_out_obj_end(&op->out);
	alt_finish(op);
}

static void
read_more(struct alt_op *op)
{
	struct sm_select *sel = &op->sreqs[0].sel;
	uint32_t chunk = CHUNK;

	if (op->limit > 0 && (uint32_t)op->limit - op->scanned < chunk)
		chunk = (uint32_t)op->limit - op->scanned;
	sel->limit = chunk;
	sel->more = false;
	sel->rows = 0;
	op->next = read_done;
	alt_submit(op);
}

/*
 * Select, as ScyllaDB's parse_select() (alternator/executor_read.cc) checks
 * it: ALL_PROJECTED_ATTRIBUTES is for indexes only (and their default),
 * SPECIFIC_ATTRIBUTES needs AttributesToGet or ProjectionExpression, which
 * need it or nothing; a GSI that does not project everything refuses
 * ALL_ATTRIBUTES. An index that projects less than it holds (an LSI) then
 * returns only its projection (op->index_projected).
 */
static int
parse_select(struct alt_op *op, int sel, const struct alt_index *x)
{
	bool specific = op->atg_tok >= 0 || sm_json_get(&op->doc, op->root, "ProjectionExpression") >= 0;

	op->count_only = false;
	op->index_projected = false;
	if (sel < 0) {
		op->index_projected = !specific && x != NULL;
		return 0;
	}
	if (sm_json_str_eq(&op->doc, sel, "SPECIFIC_ATTRIBUTES")) {
		if (specific)
			return 0;
		alt_fail(op, "ValidationException",
			 "Select=SPECIFIC_ATTRIBUTES requires AttributesToGet or ProjectionExpression");
		return -EINVAL;
	}
	if (!sm_json_str_eq(&op->doc, sel, "COUNT") &&
	    !sm_json_str_eq(&op->doc, sel, "ALL_ATTRIBUTES") &&
	    !sm_json_str_eq(&op->doc, sel, "ALL_PROJECTED_ATTRIBUTES")) {
		alt_fail(op, "ValidationException",
			 "1 validation error detected: Value at 'select' failed to satisfy "
			 "constraint: Member must satisfy enum value set: [SPECIFIC_ATTRIBUTES, "
			 "COUNT, ALL_ATTRIBUTES, ALL_PROJECTED_ATTRIBUTES]");
		return -EINVAL;
	}
	if (specific) {
		alt_fail(op, "ValidationException",
			 "AttributesToGet or ProjectionExpression require Select to be either "
			 "SPECIFIC_ATTRIBUTES or missing");
		return -EINVAL;
	}
	if (sm_json_str_eq(&op->doc, sel, "COUNT")) {
		op->count_only = true;
		return 0;
	}
	if (sm_json_str_eq(&op->doc, sel, "ALL_PROJECTED_ATTRIBUTES")) {
		if (x == NULL) {
			alt_fail(op, "ValidationException",
				 "ALL_PROJECTED_ATTRIBUTES only allowed for indexes");
			return -EINVAL;
		}
		op->index_projected = true;
		return 0;
	}
	if (x != NULL && !x->lsi && x->proj != ALT_PROJ_ALL) {
		alt_fail(op, "ValidationException",
			 "One or more parameter values were invalid: Select type ALL_ATTRIBUTES is "
			 "not supported for global secondary index %s because its projection type is "
			 "not ALL",
			 x->name);
		return -EINVAL;
	}
	return 0;
}

/* A GSI holds only what it projects: asking it for more is an error, as in DynamoDB. */
static int
check_projected(struct alt_op *op, const struct alt_index *x)
{
	struct sm_ddb_expr_env env = { .name = alt_env_name, .arg = op };
	struct sm_bytes s;
	const char *name;
	unsigned i;
	int a;

	for (i = 0; op->proj != NULL && i < op->proj->npaths; i++) {
		name = sm_ddb_path_top_name(&op->proj->paths[i], &env);
		if (name != NULL && !alt_index_projects(x, name, strlen(name)))
			goto bad;
	}
	for (a = sm_json_first(&op->doc, op->atg_tok); a >= 0; a = sm_json_next(&op->doc, a)) {
		if (alt_payload_str(op, &op->doc, a, &s) < 0)
			continue;
		name = (const char *)s.p;
		if (!alt_index_projects(x, name, s.len)) {
			alt_fail(op, "ValidationException",
				 "One or more parameter values were invalid: Global secondary index %s "
				 "does not project [%.*s]",
				 x->name, (int)SM_MIN(s.len, 255u), name);
			return -EINVAL;
		}
	}
	return 0;
bad:
	alt_fail(op, "ValidationException",
		 "One or more parameter values were invalid: Global secondary index %s does not "
		 "project [%s]",
		 x->name, name);
	return -EINVAL;
}

/* Item @itok of @d as the index's projection: its keys and projected attributes. */
static int
write_index_projected(struct alt_op *op, const struct sm_json_doc *d, int itok,
		      struct sm_json_out *o)
{
	const struct alt_index *x = op->tab.index;
	struct sm_bytes k, raw;
	int e;

	sm_json_out_obj_begin(o);
	for (e = sm_json_first(d, itok); e >= 0; e = sm_json_next(d, e)) {
		if (alt_payload_str(op, d, e, &k) < 0)
			return -ENOMEM;
		if (!alt_index_projects(x, (const char *)k.p, k.len) &&
		    !(strlen(op->tab.hold->cols[0].name) == k.len &&
		      memcmp(op->tab.hold->cols[0].name, k.p, k.len) == 0) &&
		    !(op->tab.hold->nck > 0 && strlen(op->tab.hold->cols[1].name) == k.len &&
		      memcmp(op->tab.hold->cols[1].name, k.p, k.len) == 0))
			continue;
		raw = sm_json_span(d, sm_json_member_value(d, e));
		sm_json_out_keyn(o, (const char *)k.p, k.len);
		sm_json_out_raw(o, (const char *)raw.p, raw.len);
	}
	sm_json_out_obj_end(o);
	return o->err;
}

/*
 * A request may not mix the legacy parameters with expressions (DynamoDB's
 * message lists both kinds, each in alphabetical order).
 */
static int
check_mixed(struct alt_op *op, bool query)
{
	/* KeyConditions goes with the expressions but KeyConditionExpression (query()) */
	static const char *const legacy[] = { "AttributesToGet", "ConditionalOperator",
					      "QueryFilter", "ScanFilter" };
	static const char *const expr[] = { "FilterExpression", "KeyConditionExpression",
					    "ProjectionExpression" };
	char a[128] = "", b[128] = "";
	size_t la = 0, lb = 0;
	unsigned i;

	for (i = 0; i < SM_ARRAY_SIZE(legacy); i++) {
		/* legacy[2] is QueryFilter, legacy[3] ScanFilter */
		if (i == (query ? 3u : 2u) ||
		    sm_json_get(&op->doc, op->root, legacy[i]) < 0)
			continue;
		la += (size_t)snprintf(a + la, sizeof(a) - la, "%s%s", la ? ", " : "", legacy[i]);
	}
	for (i = 0; i < SM_ARRAY_SIZE(expr); i++) {
		if ((!query && i == 1) ||
		    sm_json_get(&op->doc, op->root, expr[i]) < 0)
			continue;
		lb += (size_t)snprintf(b + lb, sizeof(b) - lb, "%s%s", lb ? ", " : "", expr[i]);
	}
	if (la == 0 || lb == 0)
		return 0;
	alt_fail(op, "ValidationException",
		 "Can not use both expression and non-expression parameters in the same request: "
		 "Non-expression parameters: {%s} Expression parameters: {%s}",
		 a, b);
	return -EINVAL;
}

/* Is @p (a path of the filter) the table's or index's key attribute? */
static const char *
key_path(struct alt_op *op, const struct sm_ddb_path *p)
{
	struct sm_ddb_expr_env env = { .name = alt_env_name, .arg = op };
	const char *name = sm_ddb_path_top_name(p, &env);

	if (name != NULL && (strcmp(name, op->tab.hash->name) == 0 ||
			     (op->tab.range != NULL && strcmp(name, op->tab.range->name) == 0)))
		return name;
	return NULL;
}

static const char *
operand_key(struct alt_op *op, const struct sm_ddb_operand *o)
{
	const char *k = NULL;
	unsigned i;

	if (o->kind == SM_DDB_OP_PATH)
		return key_path(op, &o->path);
	for (i = 0; i < o->nargs && k == NULL; i++)
		k = operand_key(op, o->args[i]);
	return k;
}

/* The first key attribute a filter reads (recursion bounded by the parser's nesting limit). */
static const char *
cond_key(struct alt_op *op, const struct sm_ddb_cond *c)
{
	const char *k = NULL;
	unsigned i;

	if (c->left != NULL)
		k = cond_key(op, c->left);
	if (k == NULL && c->right != NULL)
		k = cond_key(op, c->right);
	for (i = 0; k == NULL && i < c->noperands; i++)
		k = operand_key(op, c->operands[i]);
	return k;
}

/* QueryFilter or ScanFilter (alt_legacy.c), checked whatever the items; a Query's may
 * not name a key (the key condition selects by key). */
static int
legacy_filter(struct alt_op *op, bool query)
{
	const char *member = query ? "QueryFilter" : "ScanFilter";
	int f = sm_json_get(&op->doc, op->root, member), any = 0, e;
	struct sm_bytes k;

	op->legacy_filter = -1;
	op->legacy_any = false;
	if (f < 0) {
		if (sm_json_get(&op->doc, op->root, "ConditionalOperator") < 0)
			return 0;
		alt_fail(op, "ValidationException",
			 "ConditionalOperator cannot be used without a non-empty %s", member);
		return -EINVAL;
	}
	if (alt_legacy_validate(op, f, member) < 0 || alt_legacy_operator(op, f, &any) < 0) {
		alt_fail(op, "ValidationException", "%s", op->errmsg);
		return -EINVAL;
	}
	/* (without a key condition, the missing one is what is said) */
	if (sm_json_get(&op->doc, op->root, "KeyConditions") < 0 && op->keycond == NULL)
		query = false;
	for (e = sm_json_first(&op->doc, f); query && e >= 0; e = sm_json_next(&op->doc, e)) {
		if (alt_payload_str(op, &op->doc, e, &k) < 0)
			continue;
		if ((strlen(op->tab.hash->name) == k.len && memcmp(op->tab.hash->name, k.p, k.len) == 0) ||
		    (op->tab.range != NULL && strlen(op->tab.range->name) == k.len &&
		     memcmp(op->tab.range->name, k.p, k.len) == 0)) {
			alt_fail(op, "ValidationException",
				 "QueryFilter can only contain non-primary key attributes: Primary key "
				 "attribute: %.*s",
				 (int)SM_MIN(k.len, 255u), (const char *)k.p);
			return -EINVAL;
		}
	}
	op->legacy_filter = f;
	op->legacy_any = any != 0;
	return 0;
}

static int
common(struct alt_op *op, bool query)
{
	int lim = sm_json_get(&op->doc, op->root, "Limit");
	int sel = sm_json_get(&op->doc, op->root, "Select");
	int idx = sm_json_get(&op->doc, op->root, "IndexName");
	const struct alt_index *x;
	int64_t v;

	if (alt_table_from_request(op) < 0)
		return -EINVAL;
	if (alt_bytes_reserve(&op->keys, op->body_len * 2 + 4096) < 0 ||
	    alt_bytes_reserve(&op->last, 2 * (ALT_MAX_KEY_BYTES + 2048)) < 0) {
		alt_fail(op, "InternalServerError", "out of memory");
		return -ENOMEM;
	}
	op->limit = 0;
	if (lim >= 0) {
		if (sm_json_i64(&op->doc, lim, &v) < 0 || v < 1 || v > INT32_MAX) {
			alt_fail(op, "ValidationException",
				 "1 validation error detected: Value at 'limit' failed to satisfy "
				 "constraint: Member must have value greater than or equal to 1");
			return -EINVAL;
		}
		op->limit = (int)v;
	}
	if (check_mixed(op, query) < 0)
		return -EINVAL;
	if (idx >= 0 && alt_index_open(op, idx) < 0)
		return -EINVAL;
	x = op->tab.index;
	if (x != NULL && !x->lsi) {
		bool consistent = false;

		sm_json_bool(&op->doc, sm_json_get(&op->doc, op->root, "ConsistentRead"), &consistent);
		if (consistent) {
			alt_fail(op, "ValidationException",
				 "Consistent reads are not supported on global secondary indexes");
			return -EINVAL;
		}
		if (!alt_index_readable(x)) {
			alt_fail(op, "ValidationException",
				 "Cannot read from backfilling global secondary index: %s", x->name);
			return -EINVAL;
		}
	}
	if (parse_select(op, sel, x) < 0)
		return -EINVAL;
	if (alt_parse_expr(op, "FilterExpression", SM_DDB_FILTER, &op->filter) < 0 ||
	    alt_parse_expr(op, "ProjectionExpression", SM_DDB_PROJECTION, &op->proj) < 0)
		return -EINVAL;
	if (query &&
	    alt_parse_expr(op, "KeyConditionExpression", SM_DDB_KEY_CONDITION, &op->keycond) < 0)
		return -EINVAL;
	if (alt_check_unused(op) < 0)
		return -EINVAL;
	if (x != NULL && !x->lsi && x->proj != ALT_PROJ_ALL && check_projected(op, x) < 0)
		return -EINVAL;
	if (legacy_filter(op, query) < 0)
		return -EINVAL;
	if (query && op->filter != NULL &&
	    (op->keycond != NULL || sm_json_get(&op->doc, op->root, "KeyConditions") >= 0)) {
		/* a Query selects by key: its filter may not (Scan's may) */
		const char *k = cond_key(op, op->filter->cond);

		if (k != NULL) {
			alt_fail(op, "ValidationException",
				 "Filter Expression can only contain non-primary key attributes: "
				 "Primary key attribute: %s",
				 k);
			return -EINVAL;
		}
	}
	op->scanned = op->returned = 0;
	op->page_bytes = 0;
	op->page_full = false;
	op->have_last = false;
	op->cond_error = false;
	return 0;
}

/* Start the response and the first read of op->sreqs[0]. */
static void
start(struct alt_op *op)
{
	struct sm_select *sel = &op->sreqs[0].sel;

	op->read_cols[0] = op->tab.attrs_col;
	sel->table = op->tab.t;
	sel->cols = op->read_cols;
	sel->ncols = 1;
	sel->sink.row = scan_row;
	sel->sink.ctx = op;
	sm_json_out_reset(&op->out);
	sm_json_out_obj_begin(&op->out);
	if (!op->count_only) {
		sm_json_out_key(&op->out, "Items");
		sm_json_out_arr_begin(&op->out);
	}
	read_more(op);
}

/* ---- Query ---- */

/* The least key greater than every key with prefix @p: @p with its last byte raised. */
static bool
prefix_end(struct alt_op *op, struct sm_bytes p, struct sm_bytes *out)
{
	uint8_t *d;
	size_t n = p.len;

	while (n > 0 && p.p[n - 1] == 0xff)
		n--;
	if (n == 0)
		return false; /* no end: unbounded */
	d = alt_bytes_put(&op->keys, p.p, n);
	if (d == NULL)
		return false;
	d[n - 1]++;
	out->p = d;
	out->len = (uint32_t)n;
	return true;
}

/* A key condition's value as key bytes; DynamoDB words a type mismatch its own way here. */
static int
query_key_value(struct alt_op *op, int v, const struct sm_column *c, char type,
		struct sm_bytes *out)
{
	int ret = alt_key_value(op, &op->doc, v, c, type, out);

	if (ret == -EINVAL && strstr(op->errmsg, "Type mismatch") != NULL)
		snprintf(op->errmsg, sizeof(op->errmsg),
			 "One or more parameter values were invalid: Condition parameter type does not "
			 "match schema type");
	return ret;
}

static int
key_of_value(struct alt_op *op, const char *ref, const struct sm_column *c, char type,
	     struct sm_bytes *out)
{
	int v = sm_json_get(&op->doc, op->values_tok, ref);

	if (v < 0) {
		snprintf(op->errmsg, sizeof(op->errmsg),
			 "Invalid KeyConditionExpression: An expression attribute value used in "
			 "expression is not defined; attribute value: %s",
			 ref);
		return -EINVAL;
	}
	return query_key_value(op, v, c, type, out);
}

static int
key_from_legacy(struct alt_op *op, int spec, const struct sm_column *c, char type,
		enum sm_ddb_key_op *kop, struct sm_bytes *v0, struct sm_bytes *v1)
{
	int cop = sm_json_get(&op->doc, spec, "ComparisonOperator");
	int list = sm_json_get(&op->doc, spec, "AttributeValueList");
	int a = sm_json_first(&op->doc, list), b = a >= 0 ? sm_json_next(&op->doc, a) : -1;
	static const struct {
		const char *name;
		enum sm_ddb_key_op op;
		int nvals;
	} ops[] = {
		{ "EQ", SM_DDB_KEY_EQ, 1 },
		{ "LT", SM_DDB_KEY_LT, 1 },
		{ "LE", SM_DDB_KEY_LE, 1 },
		{ "GT", SM_DDB_KEY_GT, 1 },
		{ "GE", SM_DDB_KEY_GE, 1 },
		{ "BETWEEN", SM_DDB_KEY_BETWEEN, 2 },
		{ "BEGINS_WITH", SM_DDB_KEY_BEGINS_WITH, 1 },
	};
	unsigned i;

	static const char *const others[] = { "NE", "IN", "NULL", "NOT_NULL", "CONTAINS",
					      "NOT_CONTAINS" };

	for (i = 0; i < SM_ARRAY_SIZE(ops); i++)
		if (sm_json_str_eq(&op->doc, cop, ops[i].name))
			break;
	if (i == SM_ARRAY_SIZE(ops)) {
		struct sm_bytes s = sm_json_span(&op->doc, cop);

		for (i = 0; i < SM_ARRAY_SIZE(others); i++)
			if (sm_json_str_eq(&op->doc, cop, others[i]))
				break;
		if (i < SM_ARRAY_SIZE(others))
			snprintf(op->errmsg, sizeof(op->errmsg),
				 "Attempted conditional constraint is not an indexable operation");
		else
			snprintf(op->errmsg, sizeof(op->errmsg),
				 "1 validation error detected: Value %.*s at "
				 "'keyConditions.%s.member.comparisonOperator' failed to satisfy "
				 "constraint: Member must satisfy enum value set: [IN, NULL, BETWEEN, "
				 "LT, NOT_CONTAINS, EQ, GT, NOT_NULL, NE, LE, BEGINS_WITH, GE, CONTAINS]",
				 (int)SM_MIN(s.len, 32u), (const char *)s.p, c->name);
		return -EINVAL;
	}
	if (type == 'N' && ops[i].op == SM_DDB_KEY_BEGINS_WITH) {
		snprintf(op->errmsg, sizeof(op->errmsg),
			 "One or more parameter values were invalid: ComparisonOperator BEGINS_WITH "
			 "is not valid for N AttributeValue type");
		return -EINVAL;
	}
	if ((int)sm_json_count(&op->doc, list) != ops[i].nvals) {
		snprintf(op->errmsg, sizeof(op->errmsg),
			 "One or more parameter values were invalid: Invalid number of argument(s) "
			 "for the %s ComparisonOperator",
			 ops[i].name);
		return -EINVAL;
	}
	*kop = ops[i].op;
	if (query_key_value(op, a, c, type, v0) < 0)
		return -EINVAL;
	if (ops[i].nvals == 2 && query_key_value(op, b, c, type, v1) < 0)
		return -EINVAL;
	return 0;
}

/* Does sort key value @v satisfy the key condition's bounds? */
static bool
within(struct alt_op *op, struct sm_bytes v, const struct sm_bytes *lo, bool lo_incl,
       const struct sm_bytes *hi, bool hi_incl)
{
	const struct sm_type *t = op->tab.range != NULL ? op->tab.range->type : NULL;
	int c;

	if (t == NULL)
		return true;
	if (lo != NULL && ((c = sm_value_compare(t, v, *lo)) < 0 || (c == 0 && !lo_incl)))
		return false;
	if (hi != NULL && ((c = sm_value_compare(t, v, *hi)) > 0 || (c == 0 && !hi_incl)))
		return false;
	return true;
}

void
alt_query(struct alt_op *op)
{
	int kc = sm_json_get(&op->doc, op->root, "KeyConditions");
	int fwd = sm_json_get(&op->doc, op->root, "ScanIndexForward");
	int esk = sm_json_get(&op->doc, op->root, "ExclusiveStartKey");
	struct sm_store_req *r;
	struct sm_select *sel;
	struct sm_ddb_key_cond k;
	enum sm_ddb_key_op kop = SM_DDB_KEY_NONE;
	struct sm_bytes pkv, v0 = { 0 }, v1 = { 0 }, end;
	char err[512];
	bool lo_incl = true, hi_incl = true, has_lo = false, has_hi = false;
	struct sm_bytes lo = { 0 }, hi = { 0 };

	if (common(op, true) < 0)
		return;
	op->forward = true;
	if (fwd >= 0 && sm_json_bool(&op->doc, fwd, &op->forward) < 0) {
		alt_fail(op, "ValidationException", "ScanIndexForward must be a boolean");
		return;
	}
	if (op->keycond != NULL && kc >= 0) {
		alt_fail(op, "ValidationException",
			 "Can not use both expression and non-expression parameters in the same "
			 "request: Non-expression parameters: {KeyConditions} Expression "
			 "parameters: "
			 "{KeyConditionExpression}");
		return;
	}
	if (op->keycond == NULL && kc < 0) {
		alt_fail(op, "ValidationException",
			 "Either the KeyConditions or KeyConditionExpression parameter must be "
			 "specified in the request.");
		return;
	}
	if (op->keycond != NULL) {
		if (sm_ddb_expr_key_condition(op->keycond, NULL, op->tab.hash->name,
					      op->tab.range ? op->tab.range->name : NULL, &k, err,
					      sizeof(err)) < 0) {
			/* names may be #placeholders: resolve them and try again */
			struct sm_ddb_expr_env e2;

			e2.name = alt_env_name;
			e2.value_type = NULL;
			e2.arg = op;
			if (sm_ddb_expr_key_condition(op->keycond, &e2, op->tab.hash->name,
						      op->tab.range ? op->tab.range->name : NULL,
						      &k, err, sizeof(err)) < 0) {
				alt_fail(op, "ValidationException", "%s", err);
				return;
			}
		}
		if (key_of_value(op, k.pk_value, op->tab.hash, op->tab.hash_type, &pkv) < 0) {
			alt_fail(op, "ValidationException", "%s", op->errmsg);
			return;
		}
		kop = k.sk_op;
		if (kop != SM_DDB_KEY_NONE &&
		    (key_of_value(op, k.sk_values[0], op->tab.range, op->tab.range_type, &v0) < 0 ||
		     (kop == SM_DDB_KEY_BETWEEN && key_of_value(op, k.sk_values[1], op->tab.range,
								op->tab.range_type, &v1) < 0))) {
			alt_fail(op, "ValidationException", "%s", op->errmsg);
			return;
		}
	} else {
		int hs = sm_json_get(&op->doc, kc, op->tab.hash->name);
		int rs = op->tab.range ? sm_json_get(&op->doc, kc, op->tab.range->name) : -1;
		enum sm_ddb_key_op hop;
		struct sm_bytes unused;

		if (hs < 0) {
			alt_fail(op, "ValidationException",
				 "Query condition missed key schema element: %s",
				 op->tab.hash->name);
			return;
		}
		if (sm_json_count(&op->doc, kc) != (rs >= 0 ? 2u : 1u)) {
			if (op->tab.range != NULL)
				alt_fail(op, "ValidationException",
					 "Query condition missed key schema element: %s",
					 op->tab.range->name);
			else
				alt_fail(op, "ValidationException",
					 "Query key condition not supported");
			return;
		}
		if (key_from_legacy(op, hs, op->tab.hash, op->tab.hash_type, &hop, &pkv, &unused) <
		    0) {
			alt_fail(op, "ValidationException", "%s", op->errmsg);
			return;
		}
		if (hop != SM_DDB_KEY_EQ) {
			alt_fail(op, "ValidationException", "Query key condition not supported");
			return;
		}
		if (rs >= 0 && key_from_legacy(op, rs, op->tab.range, op->tab.range_type, &kop, &v0,
					       &v1) < 0) {
			alt_fail(op, "ValidationException", "%s", op->errmsg);
			return;
		}
	}
	if (kop == SM_DDB_KEY_BEGINS_WITH && op->tab.range_type == 'N') {
		alt_fail(op, "ValidationException",
			 "Invalid KeyConditionExpression: Incorrect operand type for operator or "
			 "function; operator or function: begins_with, operand type: N");
		return;
	}
	switch (kop) {
	case SM_DDB_KEY_EQ:
		lo = hi = v0;
		has_lo = has_hi = true;
		break;
	case SM_DDB_KEY_LT:
	case SM_DDB_KEY_LE:
		hi = v0;
		has_hi = true;
		hi_incl = kop == SM_DDB_KEY_LE;
		break;
	case SM_DDB_KEY_GT:
	case SM_DDB_KEY_GE:
		lo = v0;
		has_lo = true;
		lo_incl = kop == SM_DDB_KEY_GE;
		break;
	case SM_DDB_KEY_BETWEEN:
		lo = v0;
		hi = v1;
		has_lo = has_hi = true;
		if (sm_value_compare(op->tab.range->type, lo, hi) > 0) {
			alt_fail(op, "ValidationException",
				 "Invalid KeyConditionExpression: The BETWEEN operator requires "
				 "upper "
				 "bound to be greater than or equal to lower bound");
			return;
		}
		break;
	case SM_DDB_KEY_BEGINS_WITH:
		lo = v0;
		has_lo = true;
		if (prefix_end(op, v0, &end)) {
			hi = end;
			has_hi = true;
			hi_incl = false;
		}
		break;
	default:
		break;
	}
	memset(&op->range, 0, sizeof(op->range));
	if (has_lo) {
		op->range.start.prefix.n = 1;
		op->range.start.prefix.part[0] = lo;
		op->range.start.inclusive = lo_incl;
	}
	if (has_hi) {
		op->range.end.prefix.n = 1;
		op->range.end.prefix.part[0] = hi;
		op->range.end.inclusive = hi_incl;
	}
	if (esk >= 0) {
		struct sm_key spk, sck;
		struct sm_ck_bound *b = op->forward ? &op->range.start : &op->range.end;

		if ((op->tab.nxck > 0 ? alt_view_key(op, &op->doc, esk, &spk, &sck)
				      : alt_item_key(op, &op->doc, esk, false, &spk, &sck)) < 0) {
			alt_fail(op, "ValidationException",
				 "The provided starting key is invalid: %s", op->errmsg);
			return;
		}
		if (spk.part[0].len != pkv.len || memcmp(spk.part[0].p, pkv.p, pkv.len) != 0 ||
		    (sck.n > 0 && !within(op, sck.part[0], has_lo ? &lo : NULL, lo_incl,
					  has_hi ? &hi : NULL, hi_incl))) {
			alt_fail(op, "ValidationException",
				 "The provided starting key is outside query boundaries based on "
				 "provided conditions");
			return;
		}
		/*
		 * Continue strictly after (or before, reversed) the start key's whole
		 * clustering key (an index's view has the base keys in it too), unless
		 * the key condition's own bound is already past it.
		 */
		if (sck.n > 0 &&
		    (b->prefix.n == 0 ||
		     sm_value_compare(op->tab.range ? op->tab.range->type : op->tab.xck[0]->type,
				      sck.part[0], b->prefix.part[0]) * (op->forward ? 1 : -1) >= 0)) {
			b->prefix = sck;
			b->inclusive = false;
		}
	}
	r = one_sreq(op);
	if (r == NULL) {
		alt_fail(op, "InternalServerError", "out of memory");
		return;
	}
	sm_store_req_init(r, SM_REQ_SELECT);
	sel = &r->sel;
	sel->pk.n = 1;
	sel->pk.part[0] = pkv;
	sel->reversed = !op->forward;
	if (op->range.start.prefix.n > 0 || op->range.end.prefix.n > 0) {
		sel->ranges = &op->range;
		sel->nranges = 1;
	}
	op->skipping = false;
	start(op);
}

/* ---- Scan ---- */

void
alt_scan(struct alt_op *op)
{
	int seg = sm_json_get(&op->doc, op->root, "Segment");
	int tot = sm_json_get(&op->doc, op->root, "TotalSegments");
	int esk = sm_json_get(&op->doc, op->root, "ExclusiveStartKey");
	struct sm_store_req *r;
	struct sm_select *sel;
	int64_t s = 0, t = 1;

	if (common(op, false) < 0)
		return;
	if ((seg >= 0) != (tot >= 0)) {
		alt_fail(op, "ValidationException",
			 "The TotalSegments parameter is required but was not present in the "
			 "request when Segment parameter is present");
		return;
	}
	if (tot >= 0 && (sm_json_i64(&op->doc, tot, &t) < 0 || t < 1 || t > 1000000 ||
			 sm_json_i64(&op->doc, seg, &s) < 0 || s < 0 || s >= t)) {
		alt_fail(op, "ValidationException",
			 "The Segment parameter is zero-based and must be less than parameter "
			 "TotalSegments: Segment: %lld is out of bounds with TotalSegments: %lld",
			 (long long)s, (long long)t);
		return;
	}
	r = one_sreq(op);
	if (r == NULL) {
		alt_fail(op, "InternalServerError", "out of memory");
		return;
	}
	sm_store_req_init(r, SM_REQ_SELECT);
	sel = &r->sel;
	sel->range = true;
	/* Segment s of t: tokens in (start, end], an even split of the ring. */
	{
		__int128 span = ((__int128)INT64_MAX - INT64_MIN + 1) / t;

		sel->token_start =
			s == 0 ? INT64_MIN : (int64_t)((__int128)INT64_MIN + span * s - 1);
		sel->token_end = s == t - 1 ? INT64_MAX
					    : (int64_t)((__int128)INT64_MIN + span * (s + 1) - 1);
	}
	op->skipping = false;
	if (esk >= 0) {
		int64_t tok;

		if ((op->tab.nxck > 0
			     ? alt_view_key(op, &op->doc, esk, &op->start_pk, &op->start_ck)
			     : alt_item_key(op, &op->doc, esk, false, &op->start_pk, &op->start_ck)) <
		    0) {
			alt_fail(op, "ValidationException",
				 "The provided starting key is invalid: %s", op->errmsg);
			return;
		}
		tok = sm_key_token(&op->start_pk);
		if (tot >= 0 && (tok <= sel->token_start || tok > sel->token_end) &&
		    !(s == 0 && tok == INT64_MIN)) {
			/* as ScyllaDB's scan (alternator/executor_read.cc) */
			alt_fail(op, "ValidationException",
				 "The provided starting key is invalid: Invalid ExclusiveStartKey. "
				 "Please use ExclusiveStartKey with correct Segment. TotalSegments: "
				 "%lld Segment: %lld",
				 (long long)t, (long long)s);
			return;
		}
		/* resume in the start key's partition, skipping what was returned */
		if (tok != INT64_MIN && tok - 1 > sel->token_start)
			sel->token_start = tok - 1;
		op->skipping = true;
	}
	start(op);
}
