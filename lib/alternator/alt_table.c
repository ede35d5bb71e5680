/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tables: CreateTable, DeleteTable, DescribeTable, ListTables, UpdateTable,
 * tags, DescribeEndpoints, and the lookup every item operation starts with.
 *
 * A table's key schema and creation options live in the store's catalog
 * (a DynamoDB table is store table alternator_T.T), so every shard sees a
 * table as soon as CreateTable answers. What DynamoDB lets change later
 * (tags, billing mode) is a per-shard overlay keyed by the table's id,
 * updated on every shard before the change is acknowledged.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alt_priv.h"

#define ARN_PREFIX "arn:scylla:dynamodb:us-east-1:797456418907:table/"
#define MAX_TABLE_NAME 222
#define ALLOWED_ISOLATION                                                                          \
	"{f, forbid, forbid_rmw, a, always, always_use_lwt, o, only_rmw_uses_lwt, u, unsafe, "     \
	"unsafe_rmw}"

/* struct sm_option and the broadcast hold char *; nothing writes through them. */
static char *
unconst(const char *s)
{
	union {
		const char *c;
		char *m;
	} u = { s };

	return u.m;
}

/* ---- the per-shard overlay ---- */

struct alt_meta {
	struct sm_uuid id;
	char *tags;	  /* JSON array of {"Key","Value"}; NULL: the creation tags */
	char *billing;	  /* NULL: the creation billing mode */
	char *throughput; /* "R,W" provisioned units; NULL: the creation ones */
	int iso;	  /* -1: not computed yet */
	struct alt_meta *next;
};

static __thread struct alt_meta *metas;

static struct alt_meta *
meta_find(const struct sm_uuid *id, bool create)
{
	struct alt_meta *m;

	for (m = metas; m != NULL; m = m->next)
		if (memcmp(&m->id, id, sizeof(*id)) == 0)
			return m;
	if (!create)
		return NULL;
	m = sm_calloc(1, sizeof(*m));
	if (m == NULL)
		return NULL;
	m->id = *id;
	m->iso = -1;
	m->next = metas;
	metas = m;
	return m;
}

static void
meta_free(struct alt_meta *m)
{
	sm_free(m->tags);
	sm_free(m->billing);
	sm_free(m->throughput);
	sm_free(m);
}

static void
meta_remove(const struct sm_uuid *id)
{
	struct alt_meta **pp, *m;

	for (pp = &metas; (m = *pp) != NULL; pp = &m->next) {
		if (memcmp(&m->id, id, sizeof(*id)) == 0) {
			*pp = m->next;
			meta_free(m);
			return;
		}
	}
}

void
alt_meta_shard_fini(void)
{
	struct alt_meta *m;

	while ((m = metas) != NULL) {
		metas = m->next;
		meta_free(m);
	}
	alt_value_shard_fini();
	alt_item_shard_fini();
	alt_eval_shard_fini();
}

static const char *
table_tags(const struct sm_table *t, const struct alt_meta *m)
{
	const char *s;

	if (m != NULL && m->tags != NULL)
		return m->tags;
	s = sm_option_get(t->options, t->noptions, ALT_OPT_TAGS);
	return s ? s : "[]";
}

static const char *
table_billing(const struct sm_table *t, const struct alt_meta *m)
{
	const char *s;

	if (m != NULL && m->billing != NULL)
		return m->billing;
	s = sm_option_get(t->options, t->noptions, ALT_OPT_BILLING);
	return s ? s : "PAY_PER_REQUEST";
}

static const char *
table_throughput(const struct sm_table *t, const struct alt_meta *m)
{
	const char *s;

	if (m != NULL && m->throughput != NULL)
		return m->throughput;
	s = sm_option_get(t->options, t->noptions, ALT_OPT_THROUGHPUT);
	return s ? s : "0,0";
}

/* The isolation a tag list selects, or the default. */
static enum sm_alt_isolation
tags_isolation(const char *tags)
{
	struct sm_json_doc d;
	enum sm_alt_isolation iso = alt_cfg->default_isolation;
	char val[64];
	struct sm_bytes s;
	int e, k, v;

	sm_json_doc_init(&d);
	if (sm_json_parse(&d, tags, strlen(tags), 0) == 0) {
		for (e = sm_json_first(&d, 0); e >= 0; e = sm_json_next(&d, e)) {
			k = sm_json_get(&d, e, "Key");
			v = sm_json_get(&d, e, "Value");
			if (!sm_json_str_eq(&d, k, "system:write_isolation") ||
			    sm_json_str(&d, v, val, sizeof(val), &s) < 0 || s.len == 0 ||
			    s.len >= sizeof(val))
				continue;
			memmove(val, s.p, s.len);
			val[s.len] = '\0';
			sm_alt_isolation_parse(val, &iso);
		}
	}
	sm_json_doc_release(&d);
	return iso;
}

/* ---- lookup ---- */

static char
col_type(const struct sm_column *c)
{
	switch (c->type->kind) {
	case SM_TYPE_TEXT:
		return 'S';
	case SM_TYPE_DECIMAL:
		return 'N';
	default:
		return 'B';
	}
}

int
alt_table_lookup(struct alt_op *op, const char *name, size_t len, struct alt_table *out)
{
	char ks[sizeof(ALT_KS_PREFIX) + MAX_TABLE_NAME + 1], tn[MAX_TABLE_NAME + 1];
	const struct sm_table *t;
	const struct sm_column *attrs;
	struct alt_meta *m;

	(void)op;
	if (len == 0 || len > MAX_TABLE_NAME)
		return -ENOENT;
	memcpy(tn, name, len);
	tn[len] = '\0';
	snprintf(ks, sizeof(ks), ALT_KS_PREFIX "%s", tn);
	t = sm_catalog_table(sm_store_catalog(), ks, tn);
	if (t == NULL || t->npk != 1 || t->nck > 1)
		return -ENOENT;
	attrs = sm_table_column(t, ALT_ATTRS_COL);
	if (attrs == NULL)
		return -ENOENT;
	sm_table_get(t);
	out->t = t;
	out->name = t->name;
	out->hash = &t->cols[0];
	out->hash_type = col_type(out->hash);
	out->range = t->nck ? &t->cols[1] : NULL;
	out->range_type = out->range ? col_type(out->range) : 0;
	out->attrs_col = attrs->id;
	m = meta_find(&t->id, true);
	if (m != NULL && m->iso < 0)
		m->iso = (int)tags_isolation(table_tags(t, m));
	out->iso = m != NULL ? (enum sm_alt_isolation)m->iso : alt_cfg->default_isolation;
	return 0;
}

void
alt_table_release(struct alt_table *t)
{
	if (t->t != NULL)
		sm_table_put(t->t);
	t->t = NULL;
}

static int
validate_table_name(struct alt_op *op, struct sm_bytes n)
{
	uint32_t i;

	if (n.len < 3 || n.len > MAX_TABLE_NAME) {
		alt_fail(op, "ValidationException",
			 "TableName must be at least 3 characters long and at most %d characters "
			 "long",
			 MAX_TABLE_NAME);
		return -EINVAL;
	}
	for (i = 0; i < n.len; i++) {
		char c = (char)n.p[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-')) {
			alt_fail(op, "ValidationException",
				 "TableName must satisfy regular expression pattern: "
				 "[a-zA-Z0-9_.-]+");
			return -EINVAL;
		}
	}
	return 0;
}

int
alt_table_from_request(struct alt_op *op)
{
	int tok = sm_json_get(&op->doc, op->root, "TableName");
	struct sm_bytes name;

	if (sm_json_type(&op->doc, tok) != SM_JSON_STRING ||
	    alt_payload_str(op, &op->doc, tok, &name) < 0) {
		alt_fail(op, "ValidationException",
			 "1 validation error detected: Value null at 'tableName' failed to satisfy "
			 "constraint: Member must not be null");
		return -EINVAL;
	}
	if (validate_table_name(op, name) < 0)
		return -EINVAL;
	if (alt_table_lookup(op, (const char *)name.p, name.len, &op->tab) < 0) {
		alt_fail(op, "ResourceNotFoundException",
			 "Requested resource not found: Table: %.*s not found",
			 (int)SM_MIN(name.len, 255u), (const char *)name.p);
		return -ENOENT;
	}
	op->have_tab = true;
	return 0;
}

/* ---- descriptions ---- */

static void
write_description(struct alt_op *op, const struct alt_table *t, const char *status)
{
	struct sm_json_out *o = &op->out;
	const struct alt_meta *m = meta_find(&t->t->id, false);
	const char *created = sm_option_get(t->t->options, t->t->noptions, ALT_OPT_CREATED);
	const char *billing = table_billing(t->t, m);
	char id[40], arn[sizeof(ARN_PREFIX) + MAX_TABLE_NAME + 1];
	char type[2] = { 0, 0 };

	sm_uuid_format(&t->t->id, id, sizeof(id));
	snprintf(arn, sizeof(arn), ARN_PREFIX "%s", t->name);
	sm_json_out_obj_begin(o);
	sm_json_out_key(o, "AttributeDefinitions");
	sm_json_out_arr_begin(o);
	sm_json_out_obj_begin(o);
	sm_json_out_key(o, "AttributeName");
	sm_json_out_str(o, t->hash->name);
	sm_json_out_key(o, "AttributeType");
	type[0] = t->hash_type;
	sm_json_out_str(o, type);
	sm_json_out_obj_end(o);
	if (t->range != NULL) {
		sm_json_out_obj_begin(o);
		sm_json_out_key(o, "AttributeName");
		sm_json_out_str(o, t->range->name);
		sm_json_out_key(o, "AttributeType");
		type[0] = t->range_type;
		sm_json_out_str(o, type);
		sm_json_out_obj_end(o);
	}
	sm_json_out_arr_end(o);
	sm_json_out_key(o, "TableName");
	sm_json_out_str(o, t->name);
	sm_json_out_key(o, "KeySchema");
	sm_json_out_arr_begin(o);
	sm_json_out_obj_begin(o);
	sm_json_out_key(o, "AttributeName");
	sm_json_out_str(o, t->hash->name);
	sm_json_out_key(o, "KeyType");
	sm_json_out_str(o, "HASH");
	sm_json_out_obj_end(o);
	if (t->range != NULL) {
		sm_json_out_obj_begin(o);
		sm_json_out_key(o, "AttributeName");
		sm_json_out_str(o, t->range->name);
		sm_json_out_key(o, "KeyType");
		sm_json_out_str(o, "RANGE");
		sm_json_out_obj_end(o);
	}
	sm_json_out_arr_end(o);
	sm_json_out_key(o, "TableStatus");
	sm_json_out_str(o, status);
	sm_json_out_key(o, "CreationDateTime");
	sm_json_out_num(o, created ? created : "0", strlen(created ? created : "0"));
	sm_json_out_key(o, "ProvisionedThroughput");
	sm_json_out_obj_begin(o);
	sm_json_out_key(o, "NumberOfDecreasesToday");
	sm_json_out_i64(o, 0);
	{
		const char *thr = table_throughput(t->t, m);
		long long rcu = 0, wcu = 0;

		if (strcmp(billing, "PROVISIONED") == 0)
			sscanf(thr, "%lld,%lld", &rcu, &wcu);
		sm_json_out_key(o, "ReadCapacityUnits");
		sm_json_out_i64(o, rcu);
		sm_json_out_key(o, "WriteCapacityUnits");
		sm_json_out_i64(o, wcu);
	}
	sm_json_out_obj_end(o);
	sm_json_out_key(o, "TableSizeBytes");
	sm_json_out_i64(o, 0);
	sm_json_out_key(o, "ItemCount");
	sm_json_out_i64(o, 0);
	sm_json_out_key(o, "TableArn");
	sm_json_out_str(o, arn);
	sm_json_out_key(o, "TableId");
	sm_json_out_str(o, id);
	sm_json_out_key(o, "BillingModeSummary");
	sm_json_out_obj_begin(o);
	sm_json_out_key(o, "BillingMode");
	sm_json_out_str(o, billing);
	sm_json_out_key(o, "LastUpdateToPayPerRequestDateTime");
	sm_json_out_num(o, created ? created : "0", strlen(created ? created : "0"));
	sm_json_out_obj_end(o);
	sm_json_out_obj_end(o);
}

void
alt_describe_table(struct alt_op *op)
{
	if (alt_table_from_request(op) < 0)
		return;
	sm_json_out_obj_begin(&op->out);
	sm_json_out_key(&op->out, "Table");
	write_description(op, &op->tab, "ACTIVE");
	sm_json_out_obj_end(&op->out);
	alt_finish(op);
}

/* ---- overlay changes, on every shard before the answer ---- */

struct meta_bcast {
	struct alt_op *op;
	struct sm_uuid id;
	char *tags;
	char *billing;
	char *throughput;
	bool remove;
	unsigned pending;
};

static void
meta_apply(void *arg)
{
	struct meta_bcast *b = arg;
	struct alt_meta *m;
	char *s;

	if (b->remove) {
		meta_remove(&b->id);
		return;
	}
	m = meta_find(&b->id, true);
	if (m == NULL)
		return;
	if (b->tags != NULL && (s = sm_strdup(b->tags)) != NULL) {
		sm_free(m->tags);
		m->tags = s;
		m->iso = -1;
	}
	if (b->billing != NULL && (s = sm_strdup(b->billing)) != NULL) {
		sm_free(m->billing);
		m->billing = s;
	}
	if (b->throughput != NULL && (s = sm_strdup(b->throughput)) != NULL) {
		sm_free(m->throughput);
		m->throughput = s;
	}
}

static void
meta_done(void *arg)
{
	struct meta_bcast *b = arg;

	if (--b->pending > 0)
		return;
	if (b->op != NULL)
		alt_finish(b->op);
	sm_free(b->tags);
	sm_free(b->billing);
	sm_free(b->throughput);
	sm_free(b);
}

/* Apply a change on every shard, then answer @op with what op->out holds. */
static void
meta_broadcast(struct alt_op *op, const struct sm_uuid *id, const char *tags, const char *billing,
	       const char *throughput, bool remove)
{
	struct meta_bcast *b = sm_calloc(1, sizeof(*b));
	unsigned i;

	if (b == NULL || (tags && (b->tags = sm_strdup(tags)) == NULL) ||
	    (billing && (b->billing = sm_strdup(billing)) == NULL) ||
	    (throughput && (b->throughput = sm_strdup(throughput)) == NULL)) {
		if (b != NULL) {
			sm_free(b->tags);
			sm_free(b->billing);
			sm_free(b);
		}
		alt_fail(op, "InternalServerError", "out of memory");
		return;
	}
	b->op = op;
	b->id = *id;
	b->remove = remove;
	b->pending = 1;
	for (i = 0; i < sm_shard_count(); i++) {
		b->pending++;
		if (sm_submit_to(i, meta_apply, b, meta_done) < 0)
			b->pending--;
	}
	meta_done(b);
}

/* ---- CreateTable ---- */

struct create_ctx {
	struct sm_ddl_req r;
	struct alt_op *op;
	struct sm_column_def cols[3];
	struct sm_option opts[4];
	struct sm_option repl[2];
	char ks[sizeof(ALT_KS_PREFIX) + MAX_TABLE_NAME + 1];
	char name[MAX_TABLE_NAME + 1];
	char hash[256], range[256];
	char created[32];
	char billing[32];
	char throughput[48];
	char *tags;
};

/*
 * ProvisionedThroughput as "R,W" into @buf: 1 when given, 0 when absent,
 * -EINVAL after answering.
 */
static int
parse_throughput(struct alt_op *op, char *buf, size_t len)
{
	int pt = sm_json_get(&op->doc, op->root, "ProvisionedThroughput");
	int64_t r, w;

	if (pt < 0)
		return 0;
	if (sm_json_i64(&op->doc, sm_json_get(&op->doc, pt, "ReadCapacityUnits"), &r) < 0 ||
	    sm_json_i64(&op->doc, sm_json_get(&op->doc, pt, "WriteCapacityUnits"), &w) < 0 ||
	    r < 1 || w < 1) {
		alt_fail(op, "ValidationException",
			 "One or more parameter values were invalid: ReadCapacityUnits and "
			 "WriteCapacityUnits must both be specified and at least 1");
		return -EINVAL;
	}
	snprintf(buf, len, "%lld,%lld", (long long)r, (long long)w);
	return 1;
}

/* Validate a Tags list; *iso_bad set when system:write_isolation is invalid. */
static int
validate_tags(struct alt_op *op, int tags)
{
	struct sm_bytes k, v;
	char val[64];
	enum sm_alt_isolation iso;
	int e;

	if (sm_json_type(&op->doc, tags) != SM_JSON_ARRAY) {
		alt_fail(op, "ValidationException", "Tags must be a list");
		return -EINVAL;
	}
	if (sm_json_count(&op->doc, tags) > 50) {
		alt_fail(op, "ValidationException", "The number of tags exceeds the limit of 50");
		return -EINVAL;
	}
	for (e = sm_json_first(&op->doc, tags); e >= 0; e = sm_json_next(&op->doc, e)) {
		int kt = sm_json_get(&op->doc, e, "Key"), vt = sm_json_get(&op->doc, e, "Value");

		if (sm_json_type(&op->doc, kt) != SM_JSON_STRING ||
		    sm_json_type(&op->doc, vt) != SM_JSON_STRING ||
		    alt_payload_str(op, &op->doc, kt, &k) < 0 || k.len == 0 || k.len > 128) {
			alt_fail(op, "ValidationException",
				 "A tag must have a Key of 1 to 128 characters and a Value");
			return -EINVAL;
		}
		if (!sm_json_str_eq(&op->doc, kt, "system:write_isolation"))
			continue;
		if (sm_json_str(&op->doc, vt, val, sizeof(val), &v) < 0) {
			alt_fail(op, "ValidationException",
				 "Incorrect write isolation tag. Allowed "
				 "values: " ALLOWED_ISOLATION);
			return -EINVAL;
		}
		memmove(val, v.p, v.len);
		val[v.len] = '\0';
		if (v.len > 0 && sm_alt_isolation_parse(val, &iso) < 0) {
			alt_fail(op, "ValidationException",
				 "Incorrect write isolation tag %s. Allowed "
				 "values: " ALLOWED_ISOLATION,
				 val);
			return -EINVAL;
		}
	}
	return 0;
}

static void
create_done(struct sm_ddl_req *r)
{
	struct create_ctx *c = r->ctx;
	struct alt_op *op = c->op;

	if (r->result == -EEXIST || r->result == 1) {
		alt_fail(op, "ResourceInUseException", "Table already exists: %s", c->name);
		goto out;
	}
	if (r->result < 0) {
		alt_fail(op, "ValidationException", "%s", r->err);
		goto out;
	}
	if (alt_table_lookup(op, c->name, strlen(c->name), &op->tab) < 0) {
		alt_fail(op, "InternalServerError", "table %s vanished after creation", c->name);
		goto out;
	}
	op->have_tab = true;
	sm_json_out_obj_begin(&op->out);
	sm_json_out_key(&op->out, "TableDescription");
	write_description(op, &op->tab, "ACTIVE");
	sm_json_out_obj_end(&op->out);
	alt_finish(op);
out:
	sm_free(c->tags);
	sm_free(c);
}

static int
key_type_of(struct alt_op *op, int defs, const char *name, const char **cql_type)
{
	int e, n, t;

	for (e = sm_json_first(&op->doc, defs); e >= 0; e = sm_json_next(&op->doc, e)) {
		n = sm_json_get(&op->doc, e, "AttributeName");
		t = sm_json_get(&op->doc, e, "AttributeType");
		if (!sm_json_str_eq(&op->doc, n, name))
			continue;
		if (sm_json_str_eq(&op->doc, t, "S"))
			*cql_type = "text";
		else if (sm_json_str_eq(&op->doc, t, "N"))
			*cql_type = "decimal";
		else if (sm_json_str_eq(&op->doc, t, "B"))
			*cql_type = "blob";
		else {
			alt_fail(op, "ValidationException",
				 "1 validation error detected: Value at "
				 "'attributeDefinitions.member.attributeType' failed to satisfy "
				 "constraint: Member must satisfy enum value set: [B, N, S]");
			return -EINVAL;
		}
		return 0;
	}
	alt_fail(op, "ValidationException",
		 "One or more parameter values were invalid: Some index key attributes are not "
		 "defined in AttributeDefinitions. Keys: [%s], AttributeDefinitions: []",
		 name);
	return -EINVAL;
}

void
alt_create_table(struct alt_op *op)
{
	const struct sm_json_doc *d = &op->doc;
	int name_tok = sm_json_get(d, op->root, "TableName");
	int ks_tok = sm_json_get(d, op->root, "KeySchema");
	int defs = sm_json_get(d, op->root, "AttributeDefinitions");
	int tags = sm_json_get(d, op->root, "Tags");
	int bm = sm_json_get(d, op->root, "BillingMode");
	struct create_ctx *c;
	struct sm_bytes name, s;
	const char *ctype;
	char tname[MAX_TABLE_NAME + 1], thr[48] = "0,0";
	int e, k, i = 0, has_thr;
	bool pay;

	if (sm_json_type(d, name_tok) != SM_JSON_STRING ||
	    alt_payload_str(op, d, name_tok, &name) < 0) {
		alt_fail(op, "ValidationException", "TableName is required");
		return;
	}
	if (validate_table_name(op, name) < 0)
		return;
	/* Later string reads reuse the scratch the name may sit in. */
	memcpy(tname, name.p, name.len);
	tname[name.len] = '\0';
	name.p = (const uint8_t *)tname;
	if (sm_json_get(d, op->root, "GlobalSecondaryIndexes") >= 0 ||
	    sm_json_get(d, op->root, "LocalSecondaryIndexes") >= 0) {
		alt_fail(op, "ValidationException",
			 "not supported by shardmark: secondary indexes (create the table without "
			 "GlobalSecondaryIndexes and LocalSecondaryIndexes)");
		return;
	}
	if (sm_json_type(d, ks_tok) != SM_JSON_ARRAY || sm_json_count(d, ks_tok) < 1 ||
	    sm_json_count(d, ks_tok) > 2) {
		alt_fail(op, "ValidationException",
			 "1 validation error detected: Value at 'keySchema' failed to satisfy "
			 "constraint: Member must have length less than or equal to 2");
		return;
	}
	if (sm_json_type(d, defs) != SM_JSON_ARRAY) {
		alt_fail(op, "ValidationException",
			 "1 validation error detected: Value null at 'attributeDefinitions' failed "
			 "to satisfy constraint: Member must not be null");
		return;
	}
	if (sm_json_count(d, defs) != sm_json_count(d, ks_tok)) {
		alt_fail(op, "ValidationException",
			 "One or more parameter values were invalid: Number of attributes in "
			 "KeySchema does not exactly match number of attributes defined in "
			 "AttributeDefinitions");
		return;
	}
	if (tags >= 0 && validate_tags(op, tags) < 0)
		return;
	if (bm >= 0 && !sm_json_str_eq(d, bm, "PAY_PER_REQUEST") &&
	    !sm_json_str_eq(d, bm, "PROVISIONED")) {
		alt_fail(op, "ValidationException",
			 "1 validation error detected: Value at 'billingMode' failed to satisfy "
			 "constraint: Member must satisfy enum value set: [PROVISIONED, "
			 "PAY_PER_REQUEST]");
		return;
	}
	pay = bm >= 0 && sm_json_str_eq(d, bm, "PAY_PER_REQUEST");
	has_thr = parse_throughput(op, thr, sizeof(thr));
	if (has_thr < 0)
		return;
	if (pay && has_thr) {
		alt_fail(op, "ValidationException",
			 "One or more parameter values were invalid: Neither ReadCapacityUnits nor "
			 "WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST");
		return;
	}
	if (!pay && !has_thr) {
		alt_fail(op, "ValidationException",
			 "One or more parameter values were invalid: ReadCapacityUnits and "
			 "WriteCapacityUnits must both be specified when BillingMode is "
			 "PROVISIONED");
		return;
	}
	c = sm_calloc(1, sizeof(*c));
	if (c == NULL) {
		alt_fail(op, "InternalServerError", "out of memory");
		return;
	}
	c->op = op;
	memcpy(c->name, name.p, name.len);
	snprintf(c->ks, sizeof(c->ks), ALT_KS_PREFIX "%s", c->name);
	for (e = sm_json_first(d, ks_tok); e >= 0; e = sm_json_next(d, e), i++) {
		int an = sm_json_get(d, e, "AttributeName"), kt = sm_json_get(d, e, "KeyType");
		bool hash = sm_json_str_eq(d, kt, "HASH");
		char *dst = hash ? c->hash : c->range;

		if ((i == 0) != hash || (!hash && !sm_json_str_eq(d, kt, "RANGE")) ||
		    sm_json_type(d, an) != SM_JSON_STRING || alt_payload_str(op, d, an, &s) < 0 ||
		    s.len == 0 || s.len >= sizeof(c->hash)) {
			alt_fail(op, "ValidationException",
				 "Invalid KeySchema: The first KeySchemaElement is not a HASH key "
				 "type, or a key is malformed");
			goto fail;
		}
		memcpy(dst, s.p, s.len);
		dst[s.len] = '\0';
	}
	if (c->range[0] != '\0' && strcmp(c->hash, c->range) == 0) {
		alt_fail(op, "ValidationException",
			 "Invalid KeySchema: Both the Hash Key and the Range Key element in the "
			 "KeySchema have the same name");
		goto fail;
	}
	k = 0;
	if (key_type_of(op, defs, c->hash, &ctype) < 0)
		goto fail;
	c->cols[k++] = (struct sm_column_def){ c->hash, ctype, SM_COL_PARTITION, false };
	if (c->range[0] != '\0') {
		if (key_type_of(op, defs, c->range, &ctype) < 0)
			goto fail;
		c->cols[k++] = (struct sm_column_def){ c->range, ctype, SM_COL_CLUSTERING, false };
	}
	c->cols[k++] =
		(struct sm_column_def){ ALT_ATTRS_COL, "map<text, blob>", SM_COL_REGULAR, false };
	snprintf(c->created, sizeof(c->created), "%lld", (long long)time(NULL));
	snprintf(c->billing, sizeof(c->billing), "%s", pay ? "PAY_PER_REQUEST" : "PROVISIONED");
	snprintf(c->throughput, sizeof(c->throughput), "%s", thr);
	if (tags >= 0) {
		s = sm_json_span(d, tags);
		c->tags = sm_malloc(s.len + 1);
		if (c->tags == NULL) {
			alt_fail(op, "InternalServerError", "out of memory");
			goto fail;
		}
		memcpy(c->tags, s.p, s.len);
		c->tags[s.len] = '\0';
	}
	c->opts[0] = (struct sm_option){ unconst(ALT_OPT_CREATED), c->created };
	c->opts[1] = (struct sm_option){ unconst(ALT_OPT_BILLING), c->billing };
	c->opts[2] = (struct sm_option){ unconst(ALT_OPT_TAGS), c->tags ? c->tags : unconst("[]") };
	c->opts[3] = (struct sm_option){ unconst(ALT_OPT_THROUGHPUT), c->throughput };
	c->repl[0] = (struct sm_option){ unconst("class"), unconst("NetworkTopologyStrategy") };
	c->repl[1] = (struct sm_option){ unconst("replication_factor"), unconst("1") };
	/*
	 * The keyspace and the table in one schema change: as two, a DeleteTable
	 * of the same name could drop the keyspace between them, and the
	 * CREATE TABLE failed with "Keyspace ... does not exist".
	 */
	c->r.kind = SM_DDL_CREATE_KEYSPACE_TABLE;
	c->r.ks.name = c->ks;
	c->r.ks.replication = c->repl;
	c->r.ks.nreplication = 2;
	c->r.ks.durable_writes = true;
	c->r.ks.wide_names = true;
	c->r.table.ks = c->ks;
	c->r.table.name = c->name;
	c->r.table.cols = c->cols;
	c->r.table.ncols = c->cols[1].kind == SM_COL_CLUSTERING ? 3 : 2;
	c->r.table.options = c->opts;
	c->r.table.noptions = 4;
	c->r.table.wide_names = true;
	c->r.done = create_done;
	c->r.ctx = c;
	sm_store_ddl(&c->r);
	return;
fail:
	sm_free(c->tags);
	sm_free(c);
}

/* ---- DeleteTable ---- */

struct drop_ctx {
	struct sm_ddl_req r;
	struct alt_op *op;
	char ks[sizeof(ALT_KS_PREFIX) + MAX_TABLE_NAME + 1];
};

static void
drop_done(struct sm_ddl_req *r)
{
	struct drop_ctx *c = r->ctx;
	struct alt_op *op = c->op;

	if (r->result < 0 && r->result != -ENOENT) {
		alt_fail(op, "InternalServerError", "%s", r->err);
	} else if (r->result < 0) {
		alt_fail(op, "ResourceNotFoundException",
			 "Requested resource not found: Table: %s not found", op->tab.name);
	} else {
		/* op->out holds the description; drop the overlay everywhere, then answer. */
		meta_broadcast(op, &op->tab.t->id, NULL, NULL, NULL, true);
	}
	sm_free(c);
}

void
alt_delete_table(struct alt_op *op)
{
	struct drop_ctx *c;

	if (alt_table_from_request(op) < 0)
		return;
	c = sm_calloc(1, sizeof(*c));
	if (c == NULL) {
		alt_fail(op, "InternalServerError", "out of memory");
		return;
	}
	sm_json_out_obj_begin(&op->out);
	sm_json_out_key(&op->out, "TableDescription");
	write_description(op, &op->tab, "DELETING");
	sm_json_out_obj_end(&op->out);
	c->op = op;
	snprintf(c->ks, sizeof(c->ks), ALT_KS_PREFIX "%s", op->tab.name);
	c->r.kind = SM_DDL_DROP_KEYSPACE;
	c->r.ks_name = c->ks;
	c->r.done = drop_done;
	c->r.ctx = c;
	sm_store_ddl(&c->r);
}

/* ---- ListTables ---- */

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void
alt_list_tables(struct alt_op *op)
{
	const struct sm_catalog *cat = sm_store_catalog();
	int start = sm_json_get(&op->doc, op->root, "ExclusiveStartTableName");
	int lim = sm_json_get(&op->doc, op->root, "Limit");
	const char **names;
	struct sm_bytes sv = { 0 };
	unsigned i, n = 0, first = 0, out = 0;
	int64_t limit = 100;
	size_t plen = strlen(ALT_KS_PREFIX);

	if (lim >= 0 && (sm_json_i64(&op->doc, lim, &limit) < 0 || limit < 1 || limit > 100)) {
		alt_fail(op, "ValidationException",
			 "1 validation error detected: Value at 'limit' failed to satisfy "
			 "constraint: Member must have value less than or equal to 100");
		return;
	}
	if (start >= 0 && alt_payload_str(op, &op->doc, start, &sv) < 0) {
		alt_fail(op, "ValidationException", "ExclusiveStartTableName must be a string");
		return;
	}
	names = sm_calloc(cat->nks + 1, sizeof(*names));
	if (names == NULL) {
		alt_fail(op, "InternalServerError", "out of memory");
		return;
	}
	for (i = 0; i < cat->nks; i++) {
		const struct sm_keyspace *ks = cat->ks[i];

		if (strncmp(ks->name, ALT_KS_PREFIX, plen) == 0 &&
		    sm_catalog_table(cat, ks->name, ks->name + plen) != NULL)
			names[n++] = ks->name + plen;
	}
	qsort(names, n, sizeof(*names), cmp_str);
	if (start >= 0) {
		while (first < n &&
		       (strlen(names[first]) != sv.len ||
			memcmp(names[first], sv.p, sv.len) != 0) &&
		       strncmp(names[first], (const char *)sv.p, sv.len) <= 0)
			first++;
		if (first < n && strlen(names[first]) == sv.len &&
		    memcmp(names[first], sv.p, sv.len) == 0)
			first++;
	}
	sm_json_out_obj_begin(&op->out);
	sm_json_out_key(&op->out, "TableNames");
	sm_json_out_arr_begin(&op->out);
	for (i = first; i < n && out < (unsigned)limit; i++, out++)
		sm_json_out_str(&op->out, names[i]);
	sm_json_out_arr_end(&op->out);
	if (i < n && out > 0) {
		sm_json_out_key(&op->out, "LastEvaluatedTableName");
		sm_json_out_str(&op->out, names[i - 1]);
	}
	sm_json_out_obj_end(&op->out);
	sm_free(names);
	alt_finish(op);
}

/* ---- UpdateTable ---- */

void
alt_update_table(struct alt_op *op)
{
	int bm = sm_json_get(&op->doc, op->root, "BillingMode");
	const char *billing = NULL;
	char thr[48];
	int thr_set;

	if (alt_table_from_request(op) < 0)
		return;
	thr_set = parse_throughput(op, thr, sizeof(thr));
	if (thr_set < 0)
		return;
	if (sm_json_get(&op->doc, op->root, "GlobalSecondaryIndexUpdates") >= 0 ||
	    sm_json_get(&op->doc, op->root, "StreamSpecification") >= 0) {
		alt_fail(op, "ValidationException",
			 "not supported by shardmark: secondary indexes and streams");
		return;
	}
	if (bm >= 0) {
		if (sm_json_str_eq(&op->doc, bm, "PAY_PER_REQUEST"))
			billing = "PAY_PER_REQUEST";
		else if (sm_json_str_eq(&op->doc, bm, "PROVISIONED"))
			billing = "PROVISIONED";
		else {
			alt_fail(op, "ValidationException",
				 "1 validation error detected: Value at 'billingMode' failed to "
				 "satisfy constraint: Member must satisfy enum value set: "
				 "[PROVISIONED, PAY_PER_REQUEST]");
			return;
		}
	}
	if (meta_find(&op->tab.t->id, true) == NULL) {
		alt_fail(op, "InternalServerError", "out of memory");
		return;
	}
	/* The description reflects the new mode. */
	if (billing != NULL || thr_set)
		meta_apply(&(struct meta_bcast){ .id = op->tab.t->id,
						 .billing = unconst(billing),
						 .throughput = thr_set ? thr : NULL });
	sm_json_out_obj_begin(&op->out);
	sm_json_out_key(&op->out, "TableDescription");
	write_description(op, &op->tab, "ACTIVE");
	sm_json_out_obj_end(&op->out);
	if (billing == NULL && !thr_set) {
		alt_finish(op);
		return;
	}
	meta_broadcast(op, &op->tab.t->id, NULL, billing, thr_set ? thr : NULL, false);
}

/* ---- tags ---- */

/* The table an ARN names into op->tab. */
static int
table_from_arn(struct alt_op *op)
{
	int arn = sm_json_get(&op->doc, op->root, "ResourceArn");
	struct sm_bytes s;
	const uint8_t *slash;

	if (sm_json_type(&op->doc, arn) != SM_JSON_STRING ||
	    alt_payload_str(op, &op->doc, arn, &s) < 0) {
		alt_fail(op, "ValidationException", "ResourceArn is required");
		return -EINVAL;
	}
	slash = memmem(s.p, s.len, "table/", 6);
	if (slash == NULL) {
		alt_fail(op, "AccessDeniedException", "Incorrect resource identifier");
		return -EINVAL;
	}
	slash += 6;
	if (alt_table_lookup(op, (const char *)slash, s.len - (size_t)(slash - s.p), &op->tab) <
	    0) {
		alt_fail(op, "ResourceNotFoundException",
			 "Requested resource not found: ResourceArn: %.*s not found",
			 (int)SM_MIN(s.len, 300u), (const char *)s.p);
		return -ENOENT;
	}
	op->have_tab = true;
	return 0;
}

/* Rewrite the tag list: current tags minus @remove keys, plus @add (replacing equal keys). */
static int
merge_tags(struct alt_op *op, const char *cur, int add, int remove, struct sm_json_out *o)
{
	struct sm_json_doc *d;
	struct sm_json_out *unused;
	int e, a, k;
	bool drop;

	if (alt_tmp_doc(op, &unused, &d) < 0 || sm_json_parse(d, cur, strlen(cur), 0) < 0)
		return -ENOMEM;
	sm_json_out_arr_begin(o);
	for (e = sm_json_first(d, 0); e >= 0; e = sm_json_next(d, e)) {
		struct sm_bytes key;

		k = sm_json_get(d, e, "Key");
		if (sm_json_str(d, k, NULL, 0, &key) < 0 && alt_payload_str(op, d, k, &key) < 0)
			continue;
		drop = false;
		for (a = add >= 0 ? sm_json_first(&op->doc, add) : -1; a >= 0 && !drop;
		     a = sm_json_next(&op->doc, a))
			drop = sm_json_str_eqn(&op->doc, sm_json_get(&op->doc, a, "Key"),
					       (const char *)key.p, key.len);
		for (a = remove >= 0 ? sm_json_first(&op->doc, remove) : -1; a >= 0 && !drop;
		     a = sm_json_next(&op->doc, a))
			drop = sm_json_str_eqn(&op->doc, a, (const char *)key.p, key.len);
		if (!drop) {
			struct sm_bytes raw = sm_json_span(d, e);

			sm_json_out_raw(o, (const char *)raw.p, raw.len);
		}
	}
	for (a = add >= 0 ? sm_json_first(&op->doc, add) : -1; a >= 0;
	     a = sm_json_next(&op->doc, a)) {
		struct sm_bytes raw = sm_json_span(&op->doc, a);

		sm_json_out_raw(o, (const char *)raw.p, raw.len);
	}
	sm_json_out_arr_end(o);
	return o->err;
}

void
alt_tag_resource(struct alt_op *op)
{
	int tags = sm_json_get(&op->doc, op->root, "Tags");
	const struct alt_meta *m;

	if (table_from_arn(op) < 0)
		return;
	if (tags < 0 || sm_json_count(&op->doc, tags) == 0) {
		alt_fail(op, "ValidationException",
			 "1 validation error detected: Value at 'tags' failed to satisfy "
			 "constraint: "
			 "Member must have length greater than or equal to 1");
		return;
	}
	if (validate_tags(op, tags) < 0)
		return;
	m = meta_find(&op->tab.t->id, false);
	sm_json_out_reset(&op->scratch);
	if (merge_tags(op, table_tags(op->tab.t, m), tags, -1, &op->scratch) < 0) {
		alt_fail(op, "InternalServerError", "out of memory");
		return;
	}
	op->empty_body = true; /* DynamoDB answers tag changes with no body */
	meta_broadcast(op, &op->tab.t->id, op->scratch.p, NULL, NULL, false);
}

void
alt_untag_resource(struct alt_op *op)
{
	int keys = sm_json_get(&op->doc, op->root, "TagKeys");
	const struct alt_meta *m;

	if (table_from_arn(op) < 0)
		return;
	if (sm_json_type(&op->doc, keys) != SM_JSON_ARRAY) {
		alt_fail(op, "ValidationException", "TagKeys is required");
		return;
	}
	m = meta_find(&op->tab.t->id, false);
	sm_json_out_reset(&op->scratch);
	if (merge_tags(op, table_tags(op->tab.t, m), -1, keys, &op->scratch) < 0) {
		alt_fail(op, "InternalServerError", "out of memory");
		return;
	}
	op->empty_body = true; /* DynamoDB answers tag changes with no body */
	meta_broadcast(op, &op->tab.t->id, op->scratch.p, NULL, NULL, false);
}

void
alt_list_tags(struct alt_op *op)
{
	const char *tags;

	if (table_from_arn(op) < 0)
		return;
	tags = table_tags(op->tab.t, meta_find(&op->tab.t->id, false));
	sm_json_out_obj_begin(&op->out);
	sm_json_out_key(&op->out, "Tags");
	sm_json_out_raw(&op->out, tags, strlen(tags));
	sm_json_out_obj_end(&op->out);
	alt_finish(op);
}

void
alt_describe_endpoints(struct alt_op *op)
{
	const struct sm_http_str *host = op->req ? sm_http_header(op->req, "host") : NULL;

	sm_json_out_obj_begin(&op->out);
	sm_json_out_key(&op->out, "Endpoints");
	sm_json_out_arr_begin(&op->out);
	sm_json_out_obj_begin(&op->out);
	sm_json_out_key(&op->out, "Address");
	sm_json_out_strn(&op->out, host ? host->p : "localhost", host ? host->len : 9);
	sm_json_out_key(&op->out, "CachePeriodInMinutes");
	sm_json_out_i64(&op->out, 1440);
	sm_json_out_obj_end(&op->out);
	sm_json_out_arr_end(&op->out);
	sm_json_out_obj_end(&op->out);
	alt_finish(op);
}
