/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ScyllaDB's extras: the read-only ".scylla.alternator.<keyspace>.<table>"
 * views of system tables (alternator/executor.cc, test_system_tables.py),
 * and DescribeContinuousBackups (always disabled, as ScyllaDB answers).
 *
 * The system tables are those an Alternator client looks for: system.local
 * (this node's data center and rack), system.config (name and value of the
 * Alternator settings) and system_schema.keyspaces, .tables and .columns
 * (from the store's catalog). Each request builds the table's items, then
 * serves GetItem, Query (KeyConditionExpression or KeyConditions) and Scan
 * (FilterExpression, ScanFilter, projections, Select COUNT, Limit and
 * ExclusiveStartKey) from them. Writes are refused with ScyllaDB's pointer
 * to alternator_allow_system_table_write (which this server does not
 * have), other tables under the prefix are not found, as in ScyllaDB.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "alt_priv.h"

#define SYS_DC "datacenter1"
#define SYS_RACK "rack1"

struct sys_table {
	const char *ks, *name;
	const char *keys[3]; /* hash, range (or NULL), then what else makes an item unique */
	void (*fill)(struct alt_op *op, struct sm_json_out *o);
};

static void
attr_s(struct sm_json_out *o, const char *name, const char *v)
{
	sm_json_out_key(o, name);
	sm_json_out_obj_begin(o);
	sm_json_out_key(o, "S");
	sm_json_out_str(o, v);
	sm_json_out_obj_end(o);
}

static void
attr_n(struct sm_json_out *o, const char *name, long long v)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%lld", v);

	sm_json_out_key(o, name);
	sm_json_out_obj_begin(o);
	sm_json_out_key(o, "N");
	sm_json_out_strn(o, buf, (size_t)n);
	sm_json_out_obj_end(o);
}

static void
fill_local(struct alt_op *op, struct sm_json_out *o)
{
	(void)op;
	sm_json_out_obj_begin(o);
	attr_s(o, "key", "local");
	attr_s(o, "data_center", SYS_DC);
	attr_s(o, "rack", SYS_RACK);
	attr_s(o, "bootstrapped", "COMPLETED");
	attr_s(o, "cql_version", "3.3.1");
	attr_s(o, "release_version", "3.0.8");
	attr_s(o, "partitioner", "org.apache.cassandra.dht.Murmur3Partitioner");
	sm_json_out_obj_end(o);
}

static void
config_item(struct sm_json_out *o, const char *name, const char *value, const char *type)
{
	sm_json_out_obj_begin(o);
	attr_s(o, "name", name);
	attr_s(o, "value", value);
	attr_s(o, "type", type);
	attr_s(o, "source", "config");
	sm_json_out_obj_end(o);
}

/* ---- live-updatable settings (system.config writes) ---- */

/*
 * The settings a client may change through system.config, as ScyllaDB's
 * live-updatable ones (test_http_headers.py, util.py's
 * scylla_config_temporary()): per shard, every shard told before the
 * write's answer.
 */
__thread struct alt_live alt_live;

enum live_kind { LIVE_STRING, LIVE_BOOL, LIVE_UINT };

struct live_key {
	const char *name;
	enum live_kind kind;
	const char *def;
};

static const struct live_key live_keys[] = {
	{ "alternator_http_response_server_header", LIVE_STRING, "" },
	{ "alternator_http_response_disable_date_header", LIVE_BOOL, "false" },
	{ "alternator_http_response_disable_content_type_header", LIVE_BOOL, "false" },
	{ "query_tombstone_page_limit", LIVE_UINT, "10000" },
};

_Static_assert(SM_ARRAY_SIZE(live_keys) == SM_ARRAY_SIZE(alt_live.values),
	       "one slot in struct alt_live per live-updatable setting");

/* What a setting reads as now on this shard. */
static const char *
live_value(unsigned i)
{
	return alt_live.values[i] != NULL ? alt_live.values[i] : live_keys[i].def;
}

/* Apply the values to the flags the reply path reads. */
static void
live_refresh(void)
{
	const char *s = live_value(0);
	size_t n = 0;

	/* control characters dropped; nothing but spaces left: no header */
	for (; *s != '\0' && n < sizeof(alt_live.server) - 1; s++)
		if ((unsigned char)*s >= 0x20 && *s != 0x7f)
			alt_live.server[n++] = *s;
	alt_live.server[n] = '\0';
	while (n > 0 && alt_live.server[n - 1] == ' ')
		alt_live.server[--n] = '\0';
	if (alt_live.server[strspn(alt_live.server, " ")] == '\0')
		alt_live.server[0] = '\0';
	alt_live.no_date = strcmp(live_value(1), "true") == 0;
	alt_live.no_content_type = strcmp(live_value(2), "true") == 0;
}

struct live_bcast {
	struct alt_op *op;
	unsigned key;
	char *value;
	unsigned pending;
};

static void
live_apply(void *arg)
{
	struct live_bcast *b = arg;
	char *v = sm_strdup(b->value);

	if (v == NULL)
		return; /* the shard keeps the old value; the answer says so */
	sm_free(alt_live.values[b->key]);
	alt_live.values[b->key] = v;
	live_refresh();
}

static void
live_done(void *arg)
{
	struct live_bcast *b = arg;

	if (--b->pending > 0)
		return;
	alt_finish(b->op);
	sm_free(b->value);
	sm_free(b);
}

void
alt_system_shard_fini(void)
{
	unsigned i;

	for (i = 0; i < SM_ARRAY_SIZE(live_keys); i++) {
		sm_free(alt_live.values[i]);
		alt_live.values[i] = NULL;
	}
	live_refresh();
}

/* A value of the kind the setting takes, as ScyllaDB's config parses it. */
static bool
live_valid(const struct live_key *k, const char *v)
{
	switch (k->kind) {
	case LIVE_BOOL:
		return strcmp(v, "true") == 0 || strcmp(v, "false") == 0;
	case LIVE_UINT:
		return v[0] != '\0' && strspn(v, "0123456789") == strlen(v) && strlen(v) < 10;
	default:
		return true;
	}
}

static char config_key_name[] = "name";
static const struct sm_column config_key = { .name = config_key_name };

/* UpdateItem on system.config: SET value of a live-updatable setting, on every shard. */
static void
config_update(struct alt_op *op, struct sm_bytes table)
{
	struct sm_json_out *io;
	struct sm_json_doc *idoc;
	struct live_bcast *b;
	struct sm_bytes name, v;
	unsigned i, k;
	int tok, nv;

	tok = sm_json_get(&op->doc, op->key_tok, "name");
	if (sm_json_count(&op->doc, op->key_tok) != 1 ||
	    sm_json_type(&op->doc, sm_json_get(&op->doc, tok, "S")) != SM_JSON_STRING ||
	    alt_payload_str(op, &op->doc, sm_json_get(&op->doc, tok, "S"), &name) < 0) {
		alt_fail(op, "ValidationException",
			 "The provided key element does not match the schema");
		return;
	}
	for (k = 0; k < SM_ARRAY_SIZE(live_keys); k++)
		if (strlen(live_keys[k].name) == name.len &&
		    memcmp(live_keys[k].name, name.p, name.len) == 0)
			break;
	if (k == SM_ARRAY_SIZE(live_keys)) {
		alt_fail(op, "ValidationException",
			 "Writing to system table %.*s is not allowed (only the live-updatable "
			 "settings of system.config are: alternator_allow_system_table_write "
			 "is off)",
			 (int)SM_MIN(table.len, 255u), (const char *)table.p);
		return;
	}
	if (alt_parse_expr(op, "UpdateExpression", SM_DDB_UPDATE, &op->update) < 0 ||
	    alt_check_unused(op) < 0)
		return;
	if (alt_bytes_reserve(&op->keys, op->body_len * 2 + 4096) < 0)
		goto nomem;
	/* the update applied to the setting's item, as any UpdateItem is: a
	 * table of key "name" for it (nothing is held: have_tab stays false) */
	memset(&op->tab, 0, sizeof(op->tab));
	op->tab.hash = &config_key;
	op->tab.hash_type = 'S';
	if (alt_tmp_doc(op, &io, &idoc) < 0)
		goto nomem;
	sm_json_out_obj_begin(io);
	attr_s(io, "name", live_keys[k].name);
	attr_s(io, "value", live_value(k));
	sm_json_out_obj_end(io);
	if (io->err != 0 || sm_json_parse(idoc, io->p, io->len, 0) < 0)
		goto nomem;
	sm_json_out_reset(&op->nitem);
	if (alt_apply_update(op, idoc, sm_json_root(idoc)) < 0) {
		alt_fail(op, "ValidationException", "%s", op->errmsg);
		return;
	}
	if (alt_tmp_doc(op, &io, &idoc) < 0 ||
	    sm_json_parse(idoc, op->nitem.p, op->nitem.len, 0) < 0)
		goto nomem;
	nv = sm_json_get(idoc, sm_json_get(idoc, sm_json_root(idoc), "value"), "S");
	if (sm_json_count(idoc, sm_json_root(idoc)) != 2 || nv < 0 ||
	    alt_payload_str(op, idoc, nv, &v) < 0) {
		alt_fail(op, "ValidationException",
			 "A setting of system.config changes only its value, a string");
		return;
	}
	b = sm_calloc(1, sizeof(*b));
	if (b == NULL || (b->value = sm_malloc(v.len + 1)) == NULL) {
		sm_free(b);
		goto nomem;
	}
	memcpy(b->value, v.p, v.len);
	b->value[v.len] = '\0';
	if (strlen(b->value) != v.len || !live_valid(&live_keys[k], b->value)) {
		alt_fail(op, "ValidationException", "Invalid value '%.*s' for %s",
			 (int)SM_MIN(v.len, 100u), (const char *)v.p, live_keys[k].name);
		sm_free(b->value);
		sm_free(b);
		return;
	}
	b->op = op;
	b->key = k;
	b->pending = 1;
	for (i = 0; i < sm_shard_count(); i++) {
		b->pending++;
		if (sm_submit_to(i, live_apply, b, live_done) < 0)
			b->pending--;
	}
	live_done(b);
	return;
nomem:
	alt_fail(op, "InternalServerError", "out of memory");
}

static void
fill_config(struct alt_op *op, struct sm_json_out *o)
{
	static const char *const iso[] = {
		[SM_ALT_FORBID_RMW] = "forbid_rmw",
		[SM_ALT_UNSAFE_RMW] = "unsafe",
		[SM_ALT_LWT_ALWAYS] = "always_use_lwt",
		[SM_ALT_LWT_RMW_ONLY] = "only_rmw_uses_lwt",
	};
	char buf[32];
	unsigned ms = alt_cfg->ttl_period_ms ? alt_cfg->ttl_period_ms : 1000, i;

	(void)op;
	config_item(o, "alternator_enforce_authorization",
		    alt_cfg->enforce_authorization ? "true" : "false", "bool");
	config_item(o, "alternator_warn_authorization", "false", "bool");
	snprintf(buf, sizeof(buf), "%u.%03u", ms / 1000, ms % 1000);
	config_item(o, "alternator_ttl_period_in_seconds", buf, "double");
	config_item(o, "alternator_write_isolation", iso[alt_cfg->default_isolation], "string");
	config_item(o, "alternator_allow_system_table_write", "false", "bool");
	config_item(o, "alternator_force_read_before_write", "false", "bool");
	for (i = 0; i < SM_ARRAY_SIZE(live_keys); i++)
		config_item(o, live_keys[i].name, live_value(i),
			    live_keys[i].kind == LIVE_BOOL   ? "bool"
			    : live_keys[i].kind == LIVE_UINT ? "uint32_t"
							     : "string");
}

static void
fill_keyspaces(struct alt_op *op, struct sm_json_out *o)
{
	const struct sm_catalog *cat = sm_store_catalog();
	unsigned i;

	(void)op;
	for (i = 0; i < cat->nks; i++) {
		sm_json_out_obj_begin(o);
		attr_s(o, "keyspace_name", cat->ks[i]->name);
		attr_s(o, "durable_writes", cat->ks[i]->durable_writes ? "true" : "false");
		sm_json_out_obj_end(o);
	}
}

static void
fill_tables(struct alt_op *op, struct sm_json_out *o)
{
	const struct sm_catalog *cat = sm_store_catalog();
	unsigned i, j;

	(void)op;
	for (i = 0; i < cat->nks; i++) {
		for (j = 0; j < cat->ks[i]->ntables; j++) {
			sm_json_out_obj_begin(o);
			attr_s(o, "keyspace_name", cat->ks[i]->name);
			attr_s(o, "table_name", cat->ks[i]->tables[j]->name);
			sm_json_out_obj_end(o);
		}
	}
}

static void
fill_columns(struct alt_op *op, struct sm_json_out *o)
{
	static const char *const kinds[] = {
		[SM_COL_PARTITION] = "partition_key",
		[SM_COL_CLUSTERING] = "clustering",
		[SM_COL_STATIC] = "static",
		[SM_COL_REGULAR] = "regular",
	};
	const struct sm_catalog *cat = sm_store_catalog();
	char type[256];
	unsigned i, j, k;

	(void)op;
	for (i = 0; i < cat->nks; i++) {
		for (j = 0; j < cat->ks[i]->ntables; j++) {
			const struct sm_table *t = cat->ks[i]->tables[j];

			for (k = 0; k < t->ncols; k++) {
				const struct sm_column *c = &t->cols[k];
				bool key = c->kind == SM_COL_PARTITION ||
					   c->kind == SM_COL_CLUSTERING;

				sm_type_name(c->type, type, sizeof(type));
				sm_json_out_obj_begin(o);
				attr_s(o, "keyspace_name", t->ks);
				attr_s(o, "table_name", t->name);
				attr_s(o, "column_name", c->name);
				attr_s(o, "kind", kinds[c->kind]);
				attr_n(o, "position", key ? (long long)c->pos : -1);
				attr_s(o, "type", type);
				attr_s(o, "clustering_order",
				       c->kind != SM_COL_CLUSTERING ? "none"
				       : c->desc		    ? "desc"
								    : "asc");
				sm_json_out_obj_end(o);
			}
		}
	}
}

static const struct sys_table sys_tables[] = {
	{ "system", "local", { "key", NULL, NULL }, fill_local },
	{ "system", "config", { "name", NULL, NULL }, fill_config },
	{ "system_schema", "keyspaces", { "keyspace_name", NULL, NULL }, fill_keyspaces },
	{ "system_schema", "tables", { "keyspace_name", "table_name", NULL }, fill_tables },
	{ "system_schema", "columns", { "keyspace_name", "table_name", "column_name" },
	  fill_columns },
};

static const struct sys_table *
sys_find(struct sm_bytes name)
{
	size_t plen = strlen(ALT_SYSTEM_PREFIX), kl, tl;
	const char *p = (const char *)name.p + plen;
	size_t n = name.len - plen;
	unsigned i;

	for (i = 0; i < SM_ARRAY_SIZE(sys_tables); i++) {
		kl = strlen(sys_tables[i].ks);
		tl = strlen(sys_tables[i].name);
		if (n == kl + 1 + tl && memcmp(p, sys_tables[i].ks, kl) == 0 && p[kl] == '.' &&
		    memcmp(p + kl + 1, sys_tables[i].name, tl) == 0)
			return &sys_tables[i];
	}
	return NULL;
}

/* Do the items @a (of @ad) and @b (of @bd) have equal values for every key of @st? */
static bool
same_key(struct alt_op *op, const struct sys_table *st, const struct sm_json_doc *ad, int a,
	 const struct sm_json_doc *bd, int b)
{
	unsigned i;
	int va, vb;

	for (i = 0; i < 3 && st->keys[i] != NULL; i++) {
		va = sm_json_get(ad, a, st->keys[i]);
		vb = sm_json_get(bd, b, st->keys[i]);
		if (va < 0 || vb < 0 ||
		    !alt_value_equal(op, (struct alt_val){ ad, va }, (struct alt_val){ bd, vb }))
			return false;
	}
	return true;
}

/* GetItem's Key: exactly the table's hash (and range) key. */
static void
sys_get(struct alt_op *op, const struct sys_table *st, const struct sm_json_doc *d, int items)
{
	int key = sm_json_get(&op->doc, op->root, "Key");
	unsigned nkeys = st->keys[1] != NULL ? 2 : 1;
	int e;

	if (sm_json_type(&op->doc, key) != SM_JSON_OBJECT ||
	    sm_json_count(&op->doc, key) != nkeys ||
	    sm_json_get(&op->doc, key, st->keys[0]) < 0 ||
	    (nkeys == 2 && sm_json_get(&op->doc, key, st->keys[1]) < 0)) {
		alt_fail(op, "ValidationException",
			 "The provided key element does not match the schema");
		return;
	}
	if (alt_parse_expr(op, "ProjectionExpression", SM_DDB_PROJECTION, &op->proj) < 0 ||
	    alt_check_unused(op) < 0)
		return;
	sm_json_out_obj_begin(&op->out);
	for (e = sm_json_first(d, items); e >= 0; e = sm_json_next(d, e)) {
		struct sys_table k1 = { .keys = { st->keys[0], st->keys[1], NULL } };

		if (!same_key(op, &k1, d, e, &op->doc, key))
			continue;
		sm_json_out_key(&op->out, "Item");
		if (alt_write_projected(op, d, e, &op->out) < 0) {
			alt_fail(op, "InternalServerError", "out of memory");
			return;
		}
		break;
	}
	sm_json_out_obj_end(&op->out);
	alt_finish(op);
}

/* Query and Scan over the items: conditions evaluated on each, as a filter is. */
static void
sys_read(struct alt_op *op, const struct sys_table *st, const struct sm_json_doc *d, int items,
	 bool query)
{
	int lim = sm_json_get(&op->doc, op->root, "Limit");
	int sel = sm_json_get(&op->doc, op->root, "Select");
	int start = sm_json_get(&op->doc, op->root, "ExclusiveStartKey");
	int kc = sm_json_get(&op->doc, op->root, "KeyConditions");
	int lf = sm_json_get(&op->doc, op->root, query ? "QueryFilter" : "ScanFilter");
	struct sm_json_out *o = &op->out;
	int64_t limit = INT64_MAX;
	uint32_t scanned = 0, returned = 0;
	bool count = sm_json_str_eq(&op->doc, sel, "COUNT"), ok, skipping = start >= 0;
	int kc_any = 0, lf_any = 0, e, last = -1, i;

	if (lim >= 0 && (sm_json_i64(&op->doc, lim, &limit) < 0 || limit < 1)) {
		alt_fail(op, "ValidationException",
			 "1 validation error detected: Value at 'limit' failed to satisfy "
			 "constraint: Member must have value greater than or equal to 1");
		return;
	}
	if (alt_parse_expr(op, "FilterExpression", SM_DDB_FILTER, &op->filter) < 0 ||
	    alt_parse_expr(op, "ProjectionExpression", SM_DDB_PROJECTION, &op->proj) < 0 ||
	    (query &&
	     alt_parse_expr(op, "KeyConditionExpression", SM_DDB_KEY_CONDITION, &op->keycond) < 0) ||
	    alt_check_unused(op) < 0)
		return;
	if (query && op->keycond == NULL && kc < 0) {
		alt_fail(op, "ValidationException",
			 "Either the KeyConditions or KeyConditionExpression parameter must be "
			 "specified in the request.");
		return;
	}
	if ((kc >= 0 && (alt_legacy_validate(op, kc, "KeyConditions") < 0 ||
			 alt_legacy_operator(op, kc, &kc_any) < 0)) ||
	    (lf >= 0 && (alt_legacy_validate(op, lf, query ? "QueryFilter" : "ScanFilter") < 0 ||
			 alt_legacy_operator(op, lf, &lf_any) < 0))) {
		alt_fail(op, "ValidationException", "%s", op->errmsg);
		return;
	}
	sm_json_out_obj_begin(o);
	if (!count) {
		sm_json_out_key(o, "Items");
		sm_json_out_arr_begin(o);
	}
	for (e = sm_json_first(d, items); e >= 0; e = sm_json_next(d, e)) {
		if (skipping) {
			/* resume after the item ExclusiveStartKey names */
			skipping = !same_key(op, st, d, e, &op->doc, start);
			continue;
		}
		ok = true;
		if (op->keycond != NULL && alt_eval_cond(op, op->keycond->cond, d, e, &ok) < 0)
			goto eval_failed;
		if (ok && kc >= 0 && alt_legacy_eval(op, kc, kc_any, d, e, &ok) < 0)
			goto eval_failed;
		if (!ok)
			continue; /* not selected by the key: not read either */
		if ((int64_t)scanned >= limit)
			break;
		scanned++;
		last = e;
		if (op->filter != NULL && alt_eval_cond(op, op->filter->cond, d, e, &ok) < 0)
			goto eval_failed;
		if (ok && lf >= 0 && alt_legacy_eval(op, lf, lf_any, d, e, &ok) < 0)
			goto eval_failed;
		if (!ok)
			continue;
		returned++;
		if (!count && alt_write_projected(op, d, e, o) < 0) {
			alt_fail(op, "InternalServerError", "out of memory");
			return;
		}
	}
	if (!count)
		sm_json_out_arr_end(o);
	sm_json_out_key(o, "Count");
	sm_json_out_i64(o, returned);
	sm_json_out_key(o, "ScannedCount");
	sm_json_out_i64(o, scanned);
	if (e >= 0 && last >= 0) {
		/* stopped by Limit with items left */
		sm_json_out_key(o, "LastEvaluatedKey");
		sm_json_out_obj_begin(o);
		for (i = 0; i < 3 && st->keys[i] != NULL; i++) {
			struct sm_bytes raw = sm_json_span(d, sm_json_get(d, last, st->keys[i]));

			sm_json_out_key(o, st->keys[i]);
			sm_json_out_raw(o, (const char *)raw.p, raw.len);
		}
		sm_json_out_obj_end(o);
	}
	sm_json_out_obj_end(o);
	alt_finish(op);
	return;
eval_failed:
	alt_fail(op, "ValidationException", "%s", op->cond_err[0] ? op->cond_err : op->errmsg);
}

void
alt_system_request(struct alt_op *op, struct sm_bytes name)
{
	const struct sys_table *st = sys_find(name);
	struct sm_json_out *items;
	struct sm_json_doc *d;

	if (st == NULL) {
		alt_fail(op, "ResourceNotFoundException",
			 "Requested resource not found: Table: %.*s not found",
			 (int)SM_MIN(name.len, 255u), (const char *)name.p);
		return;
	}
	if (op->fn != alt_get_item && op->fn != alt_query && op->fn != alt_scan &&
	    op->fn != alt_put_item && op->fn != alt_update_item && op->fn != alt_delete_item) {
		alt_fail(op, "ResourceNotFoundException",
			 "Requested resource not found: Table: %.*s not found",
			 (int)SM_MIN(name.len, 255u), (const char *)name.p);
		return;
	}
	if (op->fn == alt_update_item && st->fill == fill_config) {
		config_update(op, name);
		return;
	}
	if (op->fn != alt_get_item && op->fn != alt_query && op->fn != alt_scan) {
		alt_fail(op, "ValidationException",
			 "Writing to system table %.*s is not allowed: this server has no "
			 "alternator_allow_system_table_write",
			 (int)SM_MIN(name.len, 255u), (const char *)name.p);
		return;
	}
	if (alt_tmp_doc(op, &items, &d) < 0) {
		alt_fail(op, "InternalServerError", "out of memory");
		return;
	}
	sm_json_out_arr_begin(items);
	st->fill(op, items);
	sm_json_out_arr_end(items);
	if (items->err != 0 || sm_json_parse(d, items->p, items->len, 0) < 0) {
		alt_fail(op, "InternalServerError", "out of memory reading %s.%s", st->ks,
			 st->name);
		return;
	}
	if (op->fn == alt_get_item)
		sys_get(op, st, d, sm_json_root(d));
	else
		sys_read(op, st, d, sm_json_root(d), op->fn == alt_query);
}

/* ---- DescribeContinuousBackups ---- */

void
alt_describe_continuous_backups(struct alt_op *op)
{
	int tok = sm_json_get(&op->doc, op->root, "TableName");
	struct sm_bytes name;
	struct alt_table t;

	if (sm_json_type(&op->doc, tok) != SM_JSON_STRING ||
	    alt_payload_str(op, &op->doc, tok, &name) < 0) {
		alt_fail(op, "ValidationException",
			 "1 validation error detected: Value null at 'tableName' failed to satisfy "
			 "constraint: Member must not be null");
		return;
	}
	alt_table_name_of_arn(&name);
	if (alt_table_lookup_read(op, (const char *)name.p, name.len, &t) < 0) {
		/* DynamoDB's type here, not ResourceNotFoundException */
		alt_fail(op, "TableNotFoundException", "Table not found: %.*s",
			 (int)SM_MIN(name.len, 255u), (const char *)name.p);
		return;
	}
	alt_table_release(&t);
	sm_json_out_obj_begin(&op->out);
	sm_json_out_key(&op->out, "ContinuousBackupsDescription");
	sm_json_out_obj_begin(&op->out);
	sm_json_out_key(&op->out, "ContinuousBackupsStatus");
	sm_json_out_str(&op->out, "DISABLED");
	sm_json_out_key(&op->out, "PointInTimeRecoveryDescription");
	sm_json_out_obj_begin(&op->out);
	sm_json_out_key(&op->out, "PointInTimeRecoveryStatus");
	sm_json_out_str(&op->out, "DISABLED");
	sm_json_out_obj_end(&op->out);
	sm_json_out_obj_end(&op->out);
	sm_json_out_obj_end(&op->out);
	alt_finish(op);
}

/* ---- GET /localnodes ---- */

/* Does query string @q leave @key unset or set it to @want? */
static bool
query_allows(const struct sm_http_str *q, const char *key, const char *want)
{
	size_t kl = strlen(key), i = 0, end, vl;

	while (i < q->len) {
		end = i;
		while (end < q->len && q->p[end] != '&')
			end++;
		if (end - i > kl && memcmp(q->p + i, key, kl) == 0 && q->p[i + kl] == '=') {
			vl = end - i - kl - 1;
			return vl == strlen(want) && memcmp(q->p + i + kl + 1, want, vl) == 0;
		}
		i = end + 1;
	}
	return true;
}

void
alt_localnodes(struct sm_http_req *req)
{
	const struct sm_http_str *host = sm_http_header(req, "host");
	const char *h = "127.0.0.1", *colon;
	size_t hl = strlen(h);
	struct sm_json_out o;

	/* one node: the address the client reached it by (the Host header's host) */
	if (host != NULL && host->len > 0 && host->len < 256) {
		h = host->p;
		hl = host->len;
		if (h[0] == '[') {
			colon = memchr(h, ']', hl);
			h++;
			hl = colon ? (size_t)(colon - h) : hl - 1;
		} else if ((colon = memchr(h, ':', hl)) != NULL) {
			hl = (size_t)(colon - h);
		}
	}
	sm_json_out_init(&o);
	sm_json_out_arr_begin(&o);
	if (query_allows(&req->head.query, "dc", SYS_DC) &&
	    query_allows(&req->head.query, "rack", SYS_RACK))
		sm_json_out_strn(&o, h, hl);
	sm_json_out_arr_end(&o);
	if (o.err != 0)
		sm_http_reply(req, 500, "text/plain", "out of memory", 13);
	else
		sm_http_reply(req, 200, SM_HTTP_JSON_TYPE, o.p, o.len); /* it copies */
	sm_json_out_release(&o);
}
