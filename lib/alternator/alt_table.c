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
#include "sm_changelog.h"

#define ARN_PREFIX ALT_ARN_PREFIX
#define MAX_TABLE_NAME ALT_MAX_TABLE_NAME
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
	int iso;	  /* -1: not computed yet (nor the stream) */
	uint8_t stream;	  /* enum alt_stream_view of an enabled stream, 0 none */
	int64_t stream_ms;
	struct alt_index_set *idx; /* the table's indexes in idx->cat, or NULL */
	struct alt_tstats *ts;	   /* the table's counters on this shard, made by its first op */
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
	alt_index_set_retire(m->idx);
	alt_tstats_put(m->ts); /* a dropped table's counters go once its ops are done */
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

const char *
alt_table_tags_of(const struct sm_table *t)
{
	return table_tags(t, meta_find(&t->id, false));
}

const char *
alt_table_tags(const struct alt_table *t)
{
	return alt_table_tags_of(t->t);
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

static inline char
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

char
alt_col_type(const struct sm_column *c)
{
	return col_type(c);
}

void
alt_meta_drop_index_set(const struct sm_uuid *base)
{
	struct alt_meta *m = meta_find(base, false);

	if (m != NULL) {
		alt_index_set_retire(m->idx);
		m->idx = NULL;
	}
}

/*
 * The table's index set for the current catalog: rebuilt once per schema
 * version (a pointer compare otherwise; the set holds its catalog, so the
 * pointer cannot be reused for another version meanwhile).
 */
static struct alt_index_set *
index_set(struct alt_meta *m, const struct sm_catalog *cat, const struct sm_table *t,
	  const char *ks)
{
	struct alt_index_set *s;

	if (SM_LIKELY(m->idx != NULL && m->idx->cat == cat))
		return m->idx;
	s = alt_index_set_build(cat, sm_catalog_keyspace(cat, ks), t);
	if (s == NULL)
		return NULL;
	alt_index_set_retire(m->idx);
	m->idx = s;
	return s;
}

/* @indexes: take the table's index set too (every op but the plain reads needs it). */
static int
table_lookup(struct alt_op *op, const char *name, size_t len, struct alt_table *out,
	     bool indexes)
{
	char ks[sizeof(ALT_KS_PREFIX) + MAX_TABLE_NAME + 1], tn[MAX_TABLE_NAME + 1];
	const struct sm_catalog *cat = sm_store_catalog();
	const struct sm_table *t;
	const struct sm_column *attrs;
	struct alt_meta *m;

	(void)op;
	if (len == 0 || len > MAX_TABLE_NAME)
		return -ENOENT;
	memcpy(tn, name, len);
	tn[len] = '\0';
	snprintf(ks, sizeof(ks), ALT_KS_PREFIX "%s", tn);
	t = sm_catalog_table(cat, ks, tn);
	if (t == NULL || t->npk != 1 || t->nck > 1)
		return -ENOENT;
	attrs = sm_table_column(t, ALT_ATTRS_COL);
	if (attrs == NULL)
		return -ENOENT;
	m = meta_find(&t->id, true);
	if (m == NULL)
		return -ENOMEM;
	/* without memory for them the table's counters are skipped, not its requests */
	if (SM_UNLIKELY(m->ts == NULL))
		m->ts = alt_tstats_new(&t->id, ks, tn);
	out->idx = NULL;
	if (indexes) {
		out->idx = index_set(m, cat, t, ks);
		if (out->idx == NULL)
			return -ENOMEM;
		out->idx->refs++;
	}
	out->ts = alt_tstats_get(m->ts);
	sm_table_get(t);
	out->t = out->hold = t;
	out->name = t->name;
	out->hash = &t->cols[0];
	out->hash_type = col_type(out->hash);
	out->range = t->nck ? &t->cols[1] : NULL;
	out->range_type = out->range ? col_type(out->range) : 0;
	out->nxck = 0;
	out->index = NULL;
	out->attrs_col = attrs->id;
	if (m->iso < 0) {
		struct alt_stream_spec sp;

		m->iso = (int)tags_isolation(table_tags(t, m));
		alt_stream_spec_of(table_tags(t, m), &sp);
		m->stream = sp.enabled ? sp.view : ALT_STREAM_NONE;
		m->stream_ms = sp.created_ms;
	}
	out->iso = (enum sm_alt_isolation)m->iso;
	/* writes take the index set, and only they need the stream (reads stay as they were) */
	if (indexes) {
		out->stream = m->stream;
		out->stream_ms = m->stream_ms;
	}
	return 0;
}

int
alt_table_lookup(struct alt_op *op, const char *name, size_t len, struct alt_table *out)
{
	return table_lookup(op, name, len, out, true);
}

int
alt_table_lookup_read(struct alt_op *op, const char *name, size_t len, struct alt_table *out)
{
	return table_lookup(op, name, len, out, false);
}

void
alt_table_release(struct alt_table *t)
{
	if (t->hold != NULL)
		sm_table_put(t->hold);
	/* the common case inline: a reference that is not the last */
	if (t->idx != NULL && (t->idx->refs > 1 ? (t->idx->refs--, false) : true))
		alt_index_set_put(t->idx);
	alt_tstats_put(t->ts);
	t->t = t->hold = NULL;
	t->idx = NULL;
	t->ts = NULL;
}

struct alt_tstats *
alt_table_stats(const char *name, size_t len)
{
	struct alt_table tab;
	struct alt_tstats *ts;

	if (table_lookup(NULL, name, len, &tab, false) < 0)
		return NULL;
	ts = tab.ts;
	alt_table_release(&tab); /* the metadata keeps the block: the caller is synchronous */
	return ts;
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

void
alt_table_name_of_arn(struct sm_bytes *name)
{
	const uint8_t *t;

	/* DynamoDB takes a table's ARN for its TableName: arn:...:table/<name> */
	if (name->len <= 4 || memcmp(name->p, "arn:", 4) != 0 ||
	    (t = memmem(name->p, name->len, ":table/", 7)) == NULL)
		return;
	t += 7;
	name->len -= (size_t)(t - name->p);
	name->p = t;
}

static int
table_from_request(struct alt_op *op, bool indexes)
{
	int tok = op->table_tok; /* run() found it */
	struct sm_bytes name;
	int ret;

	if (sm_json_type(&op->doc, tok) != SM_JSON_STRING ||
	    alt_payload_str(op, &op->doc, tok, &name) < 0) {
		alt_fail(op, "ValidationException",
			 "1 validation error detected: Value null at 'tableName' failed to satisfy "
			 "constraint: Member must not be null");
		return -EINVAL;
	}
	if (SM_UNLIKELY(name.len > 4 && name.p[0] == 'a'))
		alt_table_name_of_arn(&name);
	if (validate_table_name(op, name) < 0)
		return -EINVAL;
	ret = table_lookup(op, (const char *)name.p, name.len, &op->tab, indexes);
	if (ret == -ENOMEM) {
		alt_fail(op, "InternalServerError", "out of memory");
		return ret;
	}
	if (ret < 0) {
		if (SM_UNLIKELY(name.len > strlen(ALT_SYSTEM_PREFIX) &&
				memcmp(name.p, ALT_SYSTEM_PREFIX, strlen(ALT_SYSTEM_PREFIX)) == 0)) {
			alt_system_request(op, name); /* alt_system.c answers */
			return -ENOENT;
		}
		alt_fail(op, "ResourceNotFoundException",
			 "Requested resource not found: Table: %.*s not found",
			 (int)SM_MIN(name.len, 255u), (const char *)name.p);
		return -ENOENT;
	}
	op->have_tab = true;
	/* ScyllaDB's per-table stats count the operation once its table is known */
	if (op->ts == NULL && (op->ts = alt_tstats_get(op->tab.ts)) != NULL && op->op_row >= 0) {
		op->ts->st.ops[op->op_row]++;
		op->ts->st.total_operations++;
	}
	return 0;
}

int
alt_table_from_request(struct alt_op *op)
{
	return table_from_request(op, true);
}

int
alt_table_from_request_read(struct alt_op *op)
{
	return table_from_request(op, false);
}

/* ---- descriptions ---- */

/* The key schema of the base table, as DescribeTable writes it. */
static void
write_key_attrs(struct sm_json_out *o, const struct alt_table *t, bool types)
{
	char type[2] = { 0, 0 };
	unsigned i;

	for (i = 0; i < (t->range != NULL ? 2u : 1u); i++) {
		const struct sm_column *c = i == 0 ? t->hash : t->range;

		sm_json_out_obj_begin(o);
		sm_json_out_key(o, "AttributeName");
		sm_json_out_str(o, c->name);
		sm_json_out_key(o, types ? "AttributeType" : "KeyType");
		type[0] = i == 0 ? t->hash_type : t->range_type;
		sm_json_out_str(o, types ? type : i == 0 ? "HASH" : "RANGE");
		sm_json_out_obj_end(o);
	}
}

/*
 * DescribeTable's TableDescription; DeleteTable's (@status DELETING) leaves
 * out what describes a table that is going away, as DynamoDB does: the
 * creation time, key schema, attribute definitions and indexes.
 */
static void
write_description(struct alt_op *op, const struct alt_table *t, const char *status)
{
	struct sm_json_out *o = &op->out;
	const struct alt_meta *m = meta_find(&t->t->id, false);
	const char *created = sm_option_get(t->t->options, t->t->noptions, ALT_OPT_CREATED);
	const char *billing = table_billing(t->t, m);
	char id[40], arn[sizeof(ARN_PREFIX) + MAX_TABLE_NAME + 1];
	bool deleting = strcmp(status, "DELETING") == 0;

	if (created == NULL)
		created = "0";
	sm_uuid_format(&t->t->id, id, sizeof(id));
	snprintf(arn, sizeof(arn), ARN_PREFIX "%s", t->name);
	sm_json_out_obj_begin(o);
	if (!deleting) {
		sm_json_out_key(o, "AttributeDefinitions");
		sm_json_out_arr_begin(o);
		write_key_attrs(o, t, true);
		alt_index_attr_defs(o, t);
		sm_json_out_arr_end(o);
	}
	sm_json_out_key(o, "TableName");
	sm_json_out_str(o, t->name);
	if (!deleting) {
		sm_json_out_key(o, "KeySchema");
		sm_json_out_arr_begin(o);
		write_key_attrs(o, t, false);
		sm_json_out_arr_end(o);
	}
	sm_json_out_key(o, "TableStatus");
	sm_json_out_str(o, status);
	if (!deleting) {
		sm_json_out_key(o, "CreationDateTime");
		sm_json_out_num(o, created, strlen(created));
	}
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
	sm_json_out_num(o, created, strlen(created));
	sm_json_out_obj_end(o);
	if (!deleting) {
		alt_index_describe(o, t, arn);
		alt_stream_describe(o, t);
	}
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
	/* a tag change as a delta, applied by each shard to its own list, so
	 * concurrent changes of different keys all stay (test_concurrent_tag) */
	char *tag_add;	  /* JSON array of {Key, Value}, or NULL */
	char *tag_remove; /* JSON array of keys, or NULL */
	char *tag_base;	  /* the creation tags, for a shard without a list yet */
	bool remove;
	unsigned pending;
};

/* @cur without the keys @add sets or @remove names, then @add; NULL on failure. */
static char *
tags_apply(const char *cur, const char *add, const char *remove)
{
	struct sm_json_doc dc, da, dr;
	struct sm_json_out o;
	char *res = NULL;
	struct sm_bytes k;
	bool drop;
	int e, a;

	sm_json_doc_init(&dc);
	sm_json_doc_init(&da);
	sm_json_doc_init(&dr);
	sm_json_out_init(&o);
	if (sm_json_parse(&dc, cur, strlen(cur), 0) < 0 ||
	    (add != NULL && sm_json_parse(&da, add, strlen(add), 0) < 0) ||
	    (remove != NULL && sm_json_parse(&dr, remove, strlen(remove), 0) < 0))
		goto out;
	sm_json_out_arr_begin(&o);
	for (e = sm_json_first(&dc, 0); e >= 0; e = sm_json_next(&dc, e)) {
		char buf[256];
		struct sm_bytes raw = sm_json_span(&dc, e);

		if (sm_json_str(&dc, sm_json_get(&dc, e, "Key"), buf, sizeof(buf), &k) < 0)
			continue;
		drop = false;
		for (a = add ? sm_json_first(&da, 0) : -1; a >= 0 && !drop; a = sm_json_next(&da, a))
			drop = sm_json_str_eqn(&da, sm_json_get(&da, a, "Key"), (const char *)k.p,
					       k.len);
		for (a = remove ? sm_json_first(&dr, 0) : -1; a >= 0 && !drop;
		     a = sm_json_next(&dr, a))
			drop = sm_json_str_eqn(&dr, a, (const char *)k.p, k.len);
		if (!drop)
			sm_json_out_raw(&o, (const char *)raw.p, raw.len);
	}
	for (a = add ? sm_json_first(&da, 0) : -1; a >= 0; a = sm_json_next(&da, a)) {
		struct sm_bytes raw = sm_json_span(&da, a);

		sm_json_out_raw(&o, (const char *)raw.p, raw.len);
	}
	sm_json_out_arr_end(&o);
	if (o.err == 0 && (res = sm_malloc(o.len + 1)) != NULL) {
		memcpy(res, o.p, o.len);
		res[o.len] = '\0';
	}
out:
	sm_json_out_release(&o);
	sm_json_doc_release(&dc);
	sm_json_doc_release(&da);
	sm_json_doc_release(&dr);
	return res;
}

static void
meta_apply(void *arg)
{
	struct meta_bcast *b = arg;
	struct alt_meta *m;
	char *s;

	if (b->remove) {
		meta_remove(&b->id);
		sm_changelog_drop(&b->id, 0, 0); /* the table's streams go with it */
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
	if ((b->tag_add != NULL || b->tag_remove != NULL) &&
	    (s = tags_apply(m->tags != NULL ? m->tags : b->tag_base, b->tag_add, b->tag_remove)) !=
		    NULL) {
		struct alt_stream_spec sp;

		sm_free(m->tags);
		m->tags = s;
		m->iso = -1;
		/* two streams per table are remembered: a new one and the one it replaced */
		if (alt_stream_spec_of(s, &sp)) {
			struct alt_stream_spec prev;

			sm_changelog_drop(&b->id, (uint64_t)sp.created_ms,
					  alt_stream_prev_of(s, &prev) ? (uint64_t)prev.created_ms
								       : 0);
		}
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
bcast_free(struct meta_bcast *b)
{
	if (b == NULL)
		return;
	sm_free(b->tags);
	sm_free(b->billing);
	sm_free(b->throughput);
	sm_free(b->tag_add);
	sm_free(b->tag_remove);
	sm_free(b->tag_base);
	sm_free(b);
}

static void
meta_done(void *arg)
{
	struct meta_bcast *b = arg;

	if (--b->pending > 0)
		return;
	if (b->op != NULL)
		alt_finish(b->op);
	bcast_free(b);
}

/* Send @b (filled but for op and id) to every shard; @op is answered once all applied it. */
static void
bcast_send(struct alt_op *op, struct meta_bcast *b, const struct sm_uuid *id)
{
	unsigned i;

	b->op = op;
	b->id = *id;
	b->pending = 1;
	for (i = 0; i < sm_shard_count(); i++) {
		b->pending++;
		if (sm_submit_to(i, meta_apply, b, meta_done) < 0)
			b->pending--;
	}
	meta_done(b);
}

static char *
dup_span(struct sm_bytes s)
{
	char *p = sm_malloc(s.len + 1);

	if (p != NULL) {
		memcpy(p, s.p, s.len);
		p[s.len] = '\0';
	}
	return p;
}

/* Add (@add) or remove (@remove) tags of op->tab on every shard, then answer @op. */
static void
tags_broadcast(struct alt_op *op, struct sm_bytes add, struct sm_bytes remove)
{
	struct meta_bcast *b = sm_calloc(1, sizeof(*b));
	const char *base = sm_option_get(op->tab.t->options, op->tab.t->noptions, ALT_OPT_TAGS);

	if (b == NULL || (add.len > 0 && (b->tag_add = dup_span(add)) == NULL) ||
	    (remove.len > 0 && (b->tag_remove = dup_span(remove)) == NULL) ||
	    (b->tag_base = sm_strdup(base != NULL ? base : "[]")) == NULL) {
		bcast_free(b);
		alt_fail(op, "InternalServerError", "out of memory");
		return;
	}
	bcast_send(op, b, &op->tab.t->id);
}

/* Apply a change on every shard, then answer @op with what op->out holds. */
static void
meta_broadcast(struct alt_op *op, const struct sm_uuid *id, const char *tags, const char *billing,
	       const char *throughput, bool remove)
{
	struct meta_bcast *b = sm_calloc(1, sizeof(*b));

	if (b == NULL || (tags && (b->tags = sm_strdup(tags)) == NULL) ||
	    (billing && (b->billing = sm_strdup(billing)) == NULL) ||
	    (throughput && (b->throughput = sm_strdup(throughput)) == NULL)) {
		bcast_free(b); /* the throughput copy too (it leaked) */
		alt_fail(op, "InternalServerError", "out of memory");
		return;
	}
	b->remove = remove;
	bcast_send(op, b, id);
}

void
alt_table_set_tag(struct alt_op *op, const char *add, const char *remove)
{
	struct sm_bytes a = { (const uint8_t *)add, add ? strlen(add) : 0 };
	struct sm_bytes r = { (const uint8_t *)remove, remove ? strlen(remove) : 0 };

	tags_broadcast(op, a, r);
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
	struct alt_key_schema keys;
	struct alt_index_def *idx; /* the indexes' views, created with the table */
	unsigned nidx;
	struct sm_table_def *views;
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
	if (sm_json_get(&op->doc, pt, "ReadCapacityUnits") < 0 ||
	    sm_json_get(&op->doc, pt, "WriteCapacityUnits") < 0) {
		alt_fail(op, "ValidationException",
			 "1 validation error detected: Value null at "
			 "'provisionedThroughput.%sCapacityUnits' failed to satisfy constraint: "
			 "Member must not be null",
			 sm_json_get(&op->doc, pt, "ReadCapacityUnits") < 0 ? "read" : "write");
		return -EINVAL;
	}
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

/*
 * DynamoDB's tag alphabet ([\p{L}\p{Z}\p{N}_.:/=+\-@]*): ASCII letters, digits,
 * spaces and those marks; beyond ASCII, anything (letters, mostly).
 */
static bool
tag_chars_ok(struct sm_bytes s)
{
	uint32_t i;

	for (i = 0; i < s.len; i++) {
		uint8_t c = s.p[i];

		if (c >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || (c != 0 && strchr(" \t_.:/=+-@", c) != NULL))
			continue;
		return false;
	}
	return true;
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
		if (!tag_chars_ok(k) ||
		    (alt_payload_str(op, &op->doc, vt, &v) == 0 && (v.len > 256 || !tag_chars_ok(v)))) {
			alt_fail(op, "ValidationException",
				 "Tag keys and values may hold letters, numbers, whitespace and "
				 "+ - = . _ : / @ only, a value at most 256 characters");
			return -EINVAL;
		}
		if (alt_ttl_is_tag(&op->doc, kt)) {
			alt_fail(op, "ValidationException",
				 "Tag key 'system:ttl_attribute' is reserved for internal use: "
				 "use UpdateTimeToLive");
			return -EINVAL;
		}
		if (alt_stream_is_tag(&op->doc, kt)) {
			alt_fail(op, "ValidationException",
				 "Tag key 'system:stream' is reserved for internal use: use "
				 "StreamSpecification");
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
create_free(struct create_ctx *c)
{
	alt_index_defs_free(c->idx, c->nidx);
	sm_free(c->views);
	sm_free(c->tags);
	sm_free(c);
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
	create_free(c);
}

/* The attribute definitions no key schema uses: ScyllaDB refuses them (issue #19784). */
static int
check_defs_used(struct alt_op *op, int defs, const struct create_ctx *c)
{
	const struct sm_json_doc *d = &op->doc;
	struct sm_bytes s;
	int e, an;

	for (e = sm_json_first(d, defs); e >= 0; e = sm_json_next(d, e)) {
		an = sm_json_get(d, e, "AttributeName");
		if (sm_json_str_eq(d, an, c->keys.hash) ||
		    (c->keys.range[0] && sm_json_str_eq(d, an, c->keys.range)))
			continue;
		if (alt_payload_str(op, d, an, &s) < 0 || s.len > ALT_MAX_KEY_ATTR_NAME)
			continue;
		{
			char name[ALT_MAX_KEY_ATTR_NAME + 1];

			memcpy(name, s.p, s.len);
			name[s.len] = '\0';
			if (alt_index_defs_use(c->idx, c->nidx, name))
				continue;
			alt_fail(op, "ValidationException",
				 "AttributeDefinitions defines spurious attributes not used by any "
				 "KeySchema: {%s}",
				 name);
			return -EINVAL;
		}
	}
	return 0;
}

void
alt_create_table(struct alt_op *op)
{
	const struct sm_json_doc *d = &op->doc;
	int name_tok = sm_json_get(d, op->root, "TableName");
	int defs = sm_json_get(d, op->root, "AttributeDefinitions");
	int tags = sm_json_get(d, op->root, "Tags");
	int bm = sm_json_get(d, op->root, "BillingMode");
	struct create_ctx *c;
	struct sm_bytes name;
	char tname[MAX_TABLE_NAME + 1], thr[48] = "0,0", ht = 0, rt = 0;
	unsigned k, i;
	int has_thr;
	bool pay;

	if (sm_json_type(d, name_tok) != SM_JSON_STRING ||
	    alt_payload_str(op, d, name_tok, &name) < 0) {
		alt_fail(op, "ValidationException", "TableName is required");
		return;
	}
	if (validate_table_name(op, name) < 0)
		return;
	if (name.len >= strlen(ALT_SYSTEM_PREFIX) &&
	    memcmp(name.p, ALT_SYSTEM_PREFIX, strlen(ALT_SYSTEM_PREFIX)) == 0) {
		alt_fail(op, "ValidationException",
			 "Table name cannot start with " ALT_SYSTEM_PREFIX ": it is reserved for "
			 "the views of system tables");
		return;
	}
	/* Later string reads reuse the scratch the name may sit in. */
	memcpy(tname, name.p, name.len);
	tname[name.len] = '\0';
	name.p = (const uint8_t *)tname;
	/* ScyllaDB's order of checks (alternator/executor.cc, create_table_on_shard0) */
	if (defs < 0) {
		alt_fail(op, "ValidationException", "Missing AttributeDefinitions in CreateTable request");
		return;
	}
	if (alt_check_attr_defs(op, defs, "") < 0)
		return;
	c = sm_calloc(1, sizeof(*c));
	if (c == NULL) {
		alt_fail(op, "InternalServerError", "out of memory");
		return;
	}
	c->op = op;
	memcpy(c->name, name.p, name.len);
	snprintf(c->ks, sizeof(c->ks), ALT_KS_PREFIX "%s", c->name);
	if (alt_parse_key_schema(op, op->root, "", &c->keys) < 0)
		goto fail;
	if (c->keys.range[0] != '\0' && strcmp(c->keys.hash, c->keys.range) == 0) {
		alt_fail(op, "ValidationException",
			 "Invalid KeySchema: Both the Hash Key and the Range Key element in the "
			 "KeySchema have the same name");
		goto fail;
	}
	if (alt_attr_type(op, defs, c->keys.hash, &ht) < 0 ||
	    (c->keys.range[0] != '\0' && alt_attr_type(op, defs, c->keys.range, &rt) < 0))
		goto fail;
	k = 0;
	c->cols[k++] = (struct sm_column_def){ c->keys.hash, alt_cql_key_type(ht), SM_COL_PARTITION,
					       false };
	if (c->keys.range[0] != '\0')
		c->cols[k++] = (struct sm_column_def){ c->keys.range, alt_cql_key_type(rt),
						       SM_COL_CLUSTERING, false };
	c->cols[k++] =
		(struct sm_column_def){ ALT_ATTRS_COL, "map<text, blob>", SM_COL_REGULAR, false };
	if (bm >= 0 && !sm_json_str_eq(d, bm, "PAY_PER_REQUEST") &&
	    !sm_json_str_eq(d, bm, "PROVISIONED")) {
		alt_fail(op, "ValidationException",
			 "1 validation error detected: Value at 'billingMode' failed to satisfy "
			 "constraint: Member must satisfy enum value set: [PROVISIONED, "
			 "PAY_PER_REQUEST]");
		goto fail;
	}
	pay = bm >= 0 && sm_json_str_eq(d, bm, "PAY_PER_REQUEST");
	has_thr = parse_throughput(op, thr, sizeof(thr));
	if (has_thr < 0)
		goto fail;
	if (pay && has_thr) {
		alt_fail(op, "ValidationException",
			 "One or more parameter values were invalid: Neither ReadCapacityUnits nor "
			 "WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST");
		goto fail;
	}
	if (!pay && !has_thr) {
		alt_fail(op, "ValidationException",
			 "One or more parameter values were invalid: ReadCapacityUnits and "
			 "WriteCapacityUnits must both be specified when BillingMode is "
			 "PROVISIONED");
		goto fail;
	}
	if (alt_index_parse_create(op, c->name, c->ks, &c->keys, ht, rt, defs, &c->idx, &c->nidx) <
		    0 ||
	    check_defs_used(op, defs, c) < 0)
		goto fail;
	if (tags >= 0 && validate_tags(op, tags) < 0)
		goto fail;
	{
		struct timespec now;

		/* DynamoDB's CreationDateTime has sub-second resolution */
		clock_gettime(CLOCK_REALTIME, &now);
		snprintf(c->created, sizeof(c->created), "%lld.%06ld", (long long)now.tv_sec,
			 now.tv_nsec / 1000);
	}
	snprintf(c->billing, sizeof(c->billing), "%s", pay ? "PAY_PER_REQUEST" : "PROVISIONED");
	snprintf(c->throughput, sizeof(c->throughput), "%s", thr);
	if (tags >= 0) {
		struct sm_bytes span = sm_json_span(d, tags);

		c->tags = sm_malloc(span.len + 1);
		if (c->tags == NULL) {
			alt_fail(op, "InternalServerError", "out of memory");
			goto fail;
		}
		memcpy(c->tags, span.p, span.len);
		c->tags[span.len] = '\0';
	}
	if (alt_stream_create_tags(op, sm_json_get(d, op->root, "StreamSpecification"), &c->tags) <
	    0)
		goto fail;
	if (c->nidx > 0) {
		c->views = sm_calloc(c->nidx, sizeof(*c->views));
		if (c->views == NULL) {
			alt_fail(op, "InternalServerError", "out of memory");
			goto fail;
		}
		for (i = 0; i < c->nidx; i++)
			c->views[i] = c->idx[i].def;
	}
	c->opts[0] = (struct sm_option){ unconst(ALT_OPT_CREATED), c->created };
	c->opts[1] = (struct sm_option){ unconst(ALT_OPT_BILLING), c->billing };
	c->opts[2] = (struct sm_option){ unconst(ALT_OPT_TAGS), c->tags ? c->tags : unconst("[]") };
	c->opts[3] = (struct sm_option){ unconst(ALT_OPT_THROUGHPUT), c->throughput };
	c->repl[0] = (struct sm_option){ unconst("class"), unconst("NetworkTopologyStrategy") };
	c->repl[1] = (struct sm_option){ unconst("replication_factor"), unconst("1") };
	/*
	 * The keyspace, the table and its indexes' views in one schema change:
	 * as two, a DeleteTable of the same name could drop the keyspace
	 * between them (and a write between table and views would miss them).
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
	c->r.table.ncols = k;
	c->r.table.options = c->opts;
	c->r.table.noptions = 4;
	c->r.table.wide_names = true;
	c->r.more_tables = c->views;
	c->r.nmore_tables = c->nidx;
	c->r.done = create_done;
	c->r.ctx = c;
	sm_store_ddl(&c->r);
	return;
fail:
	create_free(c);
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
alt_table_answer_updated(struct alt_op *op)
{
	char name[MAX_TABLE_NAME + 1];

	/* the description of the table as the new schema has it */
	snprintf(name, sizeof(name), "%s", op->tab.name);
	alt_table_release(&op->tab);
	op->have_tab = false;
	if (alt_table_lookup(op, name, strlen(name), &op->tab) < 0) {
		alt_fail(op, "ResourceNotFoundException",
			 "Requested resource not found: Table: %s not found", name);
		return;
	}
	op->have_tab = true;
	sm_json_out_reset(&op->out);
	sm_json_out_obj_begin(&op->out);
	sm_json_out_key(&op->out, "TableDescription");
	write_description(op, &op->tab, "ACTIVE");
	sm_json_out_obj_end(&op->out);
	alt_finish(op);
}

void
alt_update_table(struct alt_op *op)
{
	int bm = sm_json_get(&op->doc, op->root, "BillingMode");
	int gsiu = sm_json_get(&op->doc, op->root, "GlobalSecondaryIndexUpdates");
	int ss = sm_json_get(&op->doc, op->root, "StreamSpecification");
	const char *billing = NULL;
	struct sm_json_out *stream_delta = NULL;
	const char *base_tags;
	char thr[48];
	int thr_set, ret;

	if (alt_table_from_request(op) < 0)
		return;
	thr_set = parse_throughput(op, thr, sizeof(thr));
	if (thr_set < 0)
		return;
	if (ss >= 0 && alt_stream_update_table(op, ss, &stream_delta) < 0)
		return;
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
	if (gsiu >= 0 && stream_delta != NULL) {
		alt_fail(op, "ValidationException",
			 "not supported by shardmark: GlobalSecondaryIndexUpdates with a "
			 "StreamSpecification change in one UpdateTable");
		return;
	}
	if (gsiu >= 0 && (billing != NULL || thr_set)) {
		alt_fail(op, "ValidationException",
			 "not supported by shardmark: GlobalSecondaryIndexUpdates with a billing "
			 "change in one UpdateTable");
		return;
	}
	if (gsiu >= 0) {
		ret = alt_index_update_table(op, gsiu);
		if (ret != 0)
			return; /* answered, or answered once the schema changed */
	}
	/* VectorIndexUpdates (ScyllaDB's vector search) is accepted and left alone, as before */
	if (billing == NULL && !thr_set && ss < 0 &&
	    sm_json_get(&op->doc, op->root, "VectorIndexUpdates") < 0) {
		alt_fail(op, "ValidationException",
			 "UpdateTable requires one of GlobalSecondaryIndexUpdates, "
			 "StreamSpecification or BillingMode to be specified");
		return;
	}
	if (meta_find(&op->tab.t->id, true) == NULL) {
		alt_fail(op, "InternalServerError", "out of memory");
		return;
	}
	base_tags = sm_option_get(op->tab.t->options, op->tab.t->noptions, ALT_OPT_TAGS);
	if (base_tags == NULL)
		base_tags = "[]";
	/* The description reflects the new mode (and stream). */
	if (billing != NULL || thr_set || stream_delta != NULL)
		meta_apply(&(struct meta_bcast){ .id = op->tab.t->id,
						 .billing = unconst(billing),
						 .throughput = thr_set ? thr : NULL,
						 .tag_add = stream_delta ? stream_delta->p : NULL,
						 .tag_base = unconst(base_tags) });
	sm_json_out_obj_begin(&op->out);
	sm_json_out_key(&op->out, "TableDescription");
	write_description(op, &op->tab, "ACTIVE");
	sm_json_out_obj_end(&op->out);
	if (billing == NULL && !thr_set && stream_delta == NULL) {
		alt_finish(op);
		return;
	}
	if (stream_delta != NULL) {
		/* as a delta (TagResource's way): a concurrent tag change stays */
		struct meta_bcast *b = sm_calloc(1, sizeof(*b));

		if (b == NULL || (b->tag_add = sm_strdup(stream_delta->p)) == NULL ||
		    (b->tag_base = sm_strdup(base_tags)) == NULL ||
		    (billing != NULL && (b->billing = sm_strdup(billing)) == NULL) ||
		    (thr_set && (b->throughput = sm_strdup(thr)) == NULL)) {
			bcast_free(b);
			alt_fail(op, "InternalServerError", "out of memory");
			return;
		}
		bcast_send(op, b, &op->tab.t->id);
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
	if (memmem(slash, s.len - (size_t)(slash - s.p), "/", 1) != NULL) {
		/* an index's ARN (.../table/T/index/I): indexes have no tags */
		alt_fail(op, "ValidationException",
			 "Invalid ResourceArn provided as input %.*s: tags apply to tables only",
			 (int)SM_MIN(s.len, 300u), (const char *)s.p);
		return -EINVAL;
	}
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

/* Tags in tag list JSON @tags, the internal ones (TTL's) left out. */
static unsigned
tags_count(struct alt_op *op, const char *tags)
{
	struct sm_json_doc *d;
	struct sm_json_out *unused;
	unsigned n = 0;
	int e;

	if (alt_tmp_doc(op, &unused, &d) < 0 || sm_json_parse(d, tags, strlen(tags), 0) < 0)
		return 0;
	for (e = sm_json_first(d, 0); e >= 0; e = sm_json_next(d, e))
		n += !alt_ttl_is_tag(d, sm_json_get(d, e, "Key")) &&
		     !alt_stream_is_tag(d, sm_json_get(d, e, "Key"));
	return n;
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
	if (tags_count(op, op->scratch.p) > 50) {
		alt_fail(op, "ValidationException",
			 "The number of tags exceeds the limit of 50 for the resource");
		return;
	}
	op->empty_body = true; /* DynamoDB answers tag changes with no body */
	tags_broadcast(op, sm_json_span(&op->doc, tags), (struct sm_bytes){ NULL, 0 });
}

void
alt_untag_resource(struct alt_op *op)
{
	int keys = sm_json_get(&op->doc, op->root, "TagKeys");
	int e;

	if (table_from_arn(op) < 0)
		return;
	if (sm_json_type(&op->doc, keys) != SM_JSON_ARRAY) {
		alt_fail(op, "ValidationException", "TagKeys is required");
		return;
	}
	for (e = sm_json_first(&op->doc, keys); e >= 0; e = sm_json_next(&op->doc, e)) {
		if (alt_ttl_is_tag(&op->doc, e)) {
			alt_fail(op, "ValidationException",
				 "Tag key 'system:ttl_attribute' is reserved for internal use: "
				 "use UpdateTimeToLive");
			return;
		}
		if (alt_stream_is_tag(&op->doc, e)) {
			alt_fail(op, "ValidationException",
				 "Tag key 'system:stream' is reserved for internal use: use "
				 "StreamSpecification");
			return;
		}
	}
	op->empty_body = true; /* DynamoDB answers tag changes with no body */
	tags_broadcast(op, (struct sm_bytes){ NULL, 0 }, sm_json_span(&op->doc, keys));
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
	/* the TTL attribute's tag is internal (alt_ttl.c) */
	if (alt_ttl_tags_set(tags, NULL, &op->out) < 0)
		sm_json_out_raw(&op->out, "[]", 2);
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
