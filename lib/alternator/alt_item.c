/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Item operations: PutItem, GetItem, DeleteItem, UpdateItem, and the two
 * batch operations, with ScyllaDB's write isolation.
 *
 * A write is computed from the old item by one function (compute_write),
 * which runs in one of three places: directly (no read needed), after a
 * plain read (unsafe), or inside the Paxos round on the owning shard
 * (SM_CAS_CUSTOM: always_use_lwt, and only_rmw_uses_lwt for RMW requests).
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alt_priv.h"

enum { RV_NONE, RV_ALL_OLD, RV_UPDATED_OLD, RV_ALL_NEW, RV_UPDATED_NEW };

enum write_kind { W_PUT, W_DELETE, W_UPDATE };

#define FORBID_MSG                                                                                 \
	"Read-modify-write operations are disabled by 'forbid_rmw' write isolation policy. Refer " \
	"to https://github.com/scylladb/scylla/blob/master/docs/alternator/alternator.md#write-"   \
	"isolation-policies for more information."

/* ---- the attrs map of an item ---- */

static int
kv_cmp(const void *a, const void *b)
{
	const struct alt_kv *x = a, *y = b;
	int c = x->k.len && y->k.len ? memcmp(x->k.p, y->k.p, SM_MIN(x->k.len, y->k.len)) : 0;

	return c ? c : (int)x->k.len - (int)y->k.len;
}

/* Per-shard scratch of build_map() and item_pairs(); freed by alt_item_shard_fini(). */
static __thread struct sm_bytes *flat;
static __thread unsigned flat_cap;
static __thread struct alt_kv *pairs_buf;
static __thread unsigned pairs_cap;
static __thread size_t *pairs_offs;

void
alt_item_shard_fini(void)
{
	sm_free(flat);
	sm_free(pairs_buf);
	sm_free(pairs_offs);
	flat = NULL;
	pairs_buf = NULL;
	pairs_offs = NULL;
	flat_cap = pairs_cap = 0;
}

int
alt_build_map(struct alt_bytes *dst_buf, struct alt_kv *kvs, unsigned n, struct sm_bytes *out)
{
	unsigned i, m = 0;
	size_t size;
	uint8_t *dst;

	/* stable sort by key keeps request order among equal keys: insertion for small n */
	if (n < 32) {
		for (i = 1; i < n; i++) {
			struct alt_kv x = kvs[i];
			unsigned j = i;

			while (j > 0 && kv_cmp(&kvs[j - 1], &x) > 0) {
				kvs[j] = kvs[j - 1];
				j--;
			}
			kvs[j] = x;
		}
	} else {
		qsort(kvs, n, sizeof(*kvs), kv_cmp);
	}
	if (flat_cap < 2 * n + 2) {
		struct sm_bytes *p = sm_realloc(flat, (2 * n + 2) * sizeof(*flat));

		if (p == NULL)
			return -ENOMEM;
		flat = p;
		flat_cap = 2 * n + 2;
	}
	for (i = 0; i < n; i++) {
		if (i + 1 < n && kv_cmp(&kvs[i], &kvs[i + 1]) == 0)
			continue;
		flat[2 * m] = kvs[i].k;
		flat[2 * m + 1] = kvs[i].v;
		m++;
	}
	size = sm_coll_build(NULL, 0, flat, m, true);
	if (dst_buf->cap - dst_buf->len < size)
		return -ENOSPC;
	dst = dst_buf->p + dst_buf->len;
	sm_coll_build(dst, size, flat, m, true);
	dst_buf->len += size;
	out->p = dst;
	out->len = (uint32_t)size;
	return 0;
}

static struct sm_cell_op *
new_cell_op(struct alt_op *op)
{
	if (op->nops >= op->ops_cap) {
		unsigned cap = op->ops_cap ? 2 * op->ops_cap : 16;
		struct sm_cell_op *p = sm_realloc(op->ops, cap * sizeof(*p));

		if (p == NULL)
			return NULL;
		op->ops = p;
		op->ops_cap = cap;
	}
	memset(&op->ops[op->nops], 0, sizeof(op->ops[0]));
	return &op->ops[op->nops++];
}

static inline struct sm_store_req *
new_sreq(struct alt_op *op)
{
	struct sm_store_req *r;

	if (op->nsreqs >= op->sreqs_cap) {
		unsigned cap = op->sreqs_cap ? 2 * op->sreqs_cap : 4;
		struct sm_store_req *p = sm_realloc(op->sreqs, cap * sizeof(*p));

		if (p == NULL)
			return NULL;
		op->sreqs = p;
		op->sreqs_cap = cap;
	}
	r = &op->sreqs[op->nsreqs++];
	sm_store_req_init(r, SM_REQ_MUTATE); /* the caller sets the kind */
	return r;
}

struct sm_store_req *
alt_new_sreq(struct alt_op *op)
{
	return new_sreq(op);
}

/*
 * The canonical attributes of request item @item (key attributes
 * skipped) as pairs: names in op->names, JSON in @o. Returns the count.
 */
static int
item_pairs(struct alt_op *op, const struct alt_table *t, int item, struct sm_json_out *o,
	   struct alt_kv **pairs, unsigned *npairs)
{
	unsigned n = 0, i;
	struct sm_bytes k;
	size_t total = 0;
	int e;

	if (sm_json_type(&op->doc, item) != SM_JSON_OBJECT) {
		snprintf(op->errmsg, sizeof(op->errmsg), "Item must be a map of attribute values");
		return -EINVAL;
	}
	if (pairs_cap < sm_json_count(&op->doc, item) + 1) {
		unsigned c = sm_json_count(&op->doc, item) + 16;
		struct alt_kv *p = sm_realloc(pairs_buf, c * sizeof(*p));
		size_t *q;

		if (p == NULL)
			return -ENOMEM;
		pairs_buf = p;
		q = sm_realloc(pairs_offs, c * sizeof(*q));
		if (q == NULL)
			return -ENOMEM;
		pairs_offs = q;
		pairs_cap = c;
	}
	for (e = sm_json_first(&op->doc, item); e >= 0; e = sm_json_next(&op->doc, e)) {
		const char *name;
		size_t start;

		if (alt_payload_str(op, &op->doc, e, &k) < 0)
			return -EINVAL;
		if (k.len == 0 || k.len > ALT_MAX_ATTR_NAME) {
			alt_name_error(op, k.len, "");
			return -EINVAL;
		}
		name = alt_keep_str(op, k.p, k.len);
		if (name == NULL)
			return -ENOMEM;
		if (strcmp(name, t->hash->name) == 0 ||
		    (t->range && strcmp(name, t->range->name) == 0))
			continue;
		start = o->len;
		o->comma = false;
		if (alt_value_write(op, &op->doc, sm_json_member_value(&op->doc, e), o, false,
				    "Item") < 0)
			return -EINVAL;
		pairs_buf[n].k.p = (const uint8_t *)name;
		pairs_buf[n].k.len = (uint32_t)k.len;
		pairs_offs[n] = start;
		pairs_buf[n].v.len = (uint32_t)(o->len - start);
		total += k.len + pairs_buf[n].v.len;
		n++;
	}
	if (o->err)
		return o->err;
	/* the JSON is never smaller than what DynamoDB counts: count exactly only then */
	if (SM_UNLIKELY(total > ALT_MAX_ITEM_BYTES) &&
	    alt_item_size(op, &op->doc, item) > ALT_MAX_ITEM_BYTES) {
		snprintf(op->errmsg, sizeof(op->errmsg),
			 "Item size has exceeded the maximum allowed size");
		return -EINVAL;
	}
	/* o is done growing: the offsets become pointers */
	for (i = 0; i < n; i++)
		pairs_buf[i].v.p = (const uint8_t *)o->p + pairs_offs[i];
	*pairs = pairs_buf;
	*npairs = n;
	return 0;
}

/* ---- reading the old item ---- */

static int
old_row_sink(void *ctx, const struct sm_row_view *r)
{
	struct alt_op *op = ctx;

	sm_json_out_reset(&op->item);
	alt_write_row_item(op, &op->item, r->pk, r->ck, &r->cells[0]);
	op->have_item = op->item.err == 0;
	return op->item.err;
}

/* Parse op->item into op->idoc when an item was read; its root or -1. */
static int
old_item(struct alt_op *op)
{
	if (!op->have_item)
		return -1;
	if (sm_json_parse(&op->idoc, op->item.p, op->item.len, 0) < 0) {
		op->have_item = false;
		return -1;
	}
	return sm_json_root(&op->idoc);
}

/* ---- computing a write ---- */

struct write_ctx {
	enum write_kind kind;
	struct sm_key pk, ck;
	struct sm_bytes put_map; /* W_PUT: the new attrs map */
	bool have_put_map;
};

/* An update on a table with indexes: the checks on the new values of changed
 * attributes that are index keys. */
static __attribute__((noinline)) int
check_changed_keys(struct alt_op *op, const struct alt_change *ch, unsigned n)
{
	struct sm_json_out *o;
	struct sm_json_doc *d;
	unsigned i;

	for (i = 0; i < n; i++) {
		if (ch[i].removed || !alt_index_is_key(op->tab.idx, ch[i].name))
			continue;
		if (alt_tmp_doc(op, &o, &d) < 0 || sm_json_parse(d, ch[i].json, ch[i].len, 0) < 0) {
			snprintf(op->errmsg, sizeof(op->errmsg), "out of memory");
			return -ENOMEM;
		}
		if (alt_index_check_value(op, ch[i].name, d, sm_json_root(d)) < 0)
			return -EINVAL;
	}
	return 0;
}

/* The updated item's JSON is over the limit: is what DynamoDB counts too? */
static __attribute__((noinline)) bool
update_fits(struct alt_op *op)
{
	struct sm_json_out *o;
	struct sm_json_doc *d;

	if (alt_tmp_doc(op, &o, &d) < 0 || sm_json_parse(d, op->nitem.p, op->nitem.len, 0) < 0)
		return false;
	return alt_item_size(op, d, sm_json_root(d)) <= ALT_MAX_ITEM_BYTES;
}

/*
 * Evaluate the condition on the old item and fill mutation @m; false when
 * the condition fails (op->cond_ok) or on error (op->cond_error).
 */
static bool
compute_write(struct alt_op *op, struct write_ctx *w, struct sm_mutation *m)
{
	int itok = old_item(op), exp = sm_json_get(&op->doc, op->root, "Expected");
	const struct alt_change *ch;
	bool ok = true;
	unsigned i, n;
	int ret;

	op->cond_ok = true;
	op->cond_error = false;
	if (op->cond != NULL)
		ret = alt_eval_cond(op, op->cond->cond, &op->idoc, itok, &ok);
	else if (exp >= 0)
		ret = alt_eval_expected(op, exp, &op->idoc, itok, &ok);
	else
		ret = 0;
	if (ret < 0) {
		op->cond_error = true;
		return false;
	}
	if (!ok) {
		op->cond_ok = false;
		return false;
	}
	memset(m, 0, sizeof(*m));
	m->table = op->tab.t;
	m->pk = w->pk;
	m->ck = w->ck;
	m->ts = SM_TS_NOW;
	m->ttl = SM_TTL_DEFAULT;
	op->nops = 0;
	op->new_exists = w->kind == W_PUT; /* W_UPDATE: check_changed_keys() */
	switch (w->kind) {
	case W_PUT: {
		struct sm_cell_op *c = new_cell_op(op);

		if (c == NULL)
			goto nomem;
		m->flags = SM_MUT_ROW_MARKER;
		c->col = op->tab.attrs_col;
		c->kind = SM_CELL_SET;
		c->value = w->put_map;
		break;
	}
	case W_DELETE:
		m->flags = op->tab.range ? SM_MUT_DELETE_ROW : SM_MUT_DELETE_PARTITION;
		break;
	case W_UPDATE: {
		size_t need = 0;

		ret = alt_apply_update(op, &op->idoc, itok);
		if (ret < 0) {
			op->cond_error = true;
			if (op->errmsg[0] == '\0')
				snprintf(op->errmsg, sizeof(op->errmsg), "invalid update");
			return false;
		}
		if (SM_UNLIKELY(op->nitem.len > ALT_MAX_ITEM_BYTES) && !update_fits(op)) {
			op->cond_error = true;
			snprintf(op->errmsg, sizeof(op->errmsg),
				 "Item size to update has exceeded the maximum allowed size");
			return false;
		}
		ret = alt_update_changes(op, &ch);
		if (ret < 0)
			goto nomem;
		n = (unsigned)ret;
		for (i = 0; i < n; i++)
			need += strlen(ch[i].name) + ch[i].len;
		/* the values move into op->vals, which must not move afterwards */
		op->vals.len = 0;
		if (alt_bytes_reserve(&op->vals, need + 64) < 0)
			goto nomem;
		/*
		 * Only an update that sets something creates the item: removing
		 * from a missing item leaves it missing, as in DynamoDB.
		 */
		m->flags = n == 0 ? SM_MUT_ROW_MARKER : 0; /* an empty update creates it */
		for (i = 0; i < n; i++)
			if (!ch[i].removed)
				m->flags = SM_MUT_ROW_MARKER;
		if (SM_UNLIKELY(op->rv != RV_NONE || op->tab.idx->n > 0 || op->tab.stream)) {
			/* ALL_NEW of an item the update leaves missing is nothing */
			op->new_exists = op->have_item || m->flags == SM_MUT_ROW_MARKER;
			if (op->tab.idx->n > 0 && check_changed_keys(op, ch, n) < 0) {
				op->cond_error = true;
				return false;
			}
		}
		for (i = 0; i < n; i++) {
			struct sm_cell_op *c = new_cell_op(op);
			uint8_t *key;
			size_t klen;

			if (c == NULL)
				goto nomem;
			c->col = op->tab.attrs_col;
			klen = strlen(ch[i].name);
			key = alt_bytes_put(&op->vals, ch[i].name, klen);
			if (SM_UNLIKELY(op->names_nul))
				klen = alt_name_unkeep(key, klen);
			c->key.p = key;
			c->key.len = (uint32_t)klen;
			if (ch[i].removed) {
				c->kind = SM_CELL_DELETE_ELEM;
				continue;
			}
			c->kind = SM_CELL_SET_ELEM;
			c->value.p = alt_bytes_put(&op->vals, ch[i].json, ch[i].len);
			c->value.len = (uint32_t)ch[i].len;
		}
		break;
	}
	}
	m->ops = op->ops;
	m->nops = op->nops;
	return true;
nomem:
	op->cond_error = true;
	snprintf(op->errmsg, sizeof(op->errmsg), "out of memory");
	return false;
}

/* Runs on the owning shard inside the Paxos round: everything it needs is in @op. */
static bool
cas_decide(void *ctx, bool exists, struct sm_cas *cas)
{
	struct alt_op *op = ctx;
	struct write_ctx w;

	if (!exists)
		op->have_item = false;
	w.kind = (enum write_kind)op->wkind;
	w.put_map = op->put_map;
	w.pk = cas->mut.pk;
	w.ck = cas->mut.ck;
	return compute_write(op, &w, &cas->mut);
}

/* After a write applied on a table with a stream, on the owning shard: its record. */
static void
stream_applied(void *ctx, const struct sm_cas *cas)
{
	struct alt_op *op = ctx;
	const struct sm_mutation *m = &cas->mut;
	const char *nw = NULL;
	size_t nlen = 0;

	if (!(m->flags & (SM_MUT_DELETE_ROW | SM_MUT_DELETE_PARTITION))) {
		if (op->wkind == W_UPDATE) {
			if (op->new_exists) {
				nw = op->nitem.p;
				nlen = op->nitem.len;
			}
		} else if (m->nops > 0) {
			/* a put: the item it wrote, as a read would show it */
			struct sm_cell_view attrs = { .present = true, .value = m->ops[0].value };

			sm_json_out_reset(&op->scratch);
			alt_write_row_item(op, &op->scratch, &m->pk, &m->ck, &attrs);
			nw = op->scratch.p;
			nlen = op->scratch.len;
		}
	}
	alt_stream_record(op, cas->ts, &m->pk, &m->ck, op->have_item ? op->item.p : NULL,
			  op->item.len, nw, nlen);
}

/* ---- answering ---- */

/* The UPDATED_* answer through the update's paths; false when not possible. */
static bool
write_updated_paths(struct alt_op *op)
{
	struct sm_ddb_path paths_small[16], *paths = paths_small;
	struct sm_ddb_expr fake, *saved = op->proj;
	const struct sm_json_doc *src;
	struct sm_json_out *o, *po;
	struct sm_json_doc *d, *pd;
	unsigned i, n = 0;
	int itok, ret;

	/* every action's path, however many (the first 64 only, before) */
	if (op->update->nactions > SM_ARRAY_SIZE(paths_small)) {
		paths = sm_malloc(op->update->nactions * sizeof(*paths));
		if (paths == NULL)
			return false;
	}
	for (i = 0; i < op->update->nactions; i++)
		paths[n++] = op->update->actions[i].path;
	memset(&fake, 0, sizeof(fake));
	fake.kind = SM_DDB_PROJECTION;
	fake.paths = paths;
	fake.npaths = n;
	if (op->rv == RV_UPDATED_OLD) {
		if (!op->have_item) {
			if (paths != paths_small)
				sm_free(paths);
			return true; /* nothing was there */
		}
		src = &op->idoc;
		itok = sm_json_root(&op->idoc);
	} else {
		alt_tmp_doc(op, &o, &d);
		if (sm_json_parse(d, op->nitem.p, op->nitem.len, 0) < 0) {
			if (paths != paths_small)
				sm_free(paths);
			return false;
		}
		src = d;
		itok = 0;
	}
	alt_tmp_doc(op, &po, &pd);
	op->proj = &fake;
	ret = alt_write_projected(op, src, itok, po);
	op->proj = saved;
	op->proj_built = NULL; /* built for &fake, on this stack */
	if (paths != paths_small)
		sm_free(paths);
	if (ret < 0 || po->err != 0)
		return false;
	if (po->len > 2) { /* not {}: something to return */
		sm_json_out_key(&op->out, "Attributes");
		sm_json_out_raw(&op->out, po->p, po->len);
	}
	return true;
}

static void
write_attributes(struct alt_op *op)
{
	int itok, e;
	unsigned n, i;

	if (op->rv == RV_NONE)
		return;
	if (op->rv == RV_ALL_OLD) {
		itok = sm_json_root(&op->idoc);
		if (!op->have_item)
			return;
		sm_json_out_key(&op->out, "Attributes");
		{
			struct sm_bytes raw = sm_json_span(&op->idoc, itok);

			sm_json_out_raw(&op->out, (const char *)raw.p, raw.len);
		}
		return;
	}
	if (op->rv == RV_ALL_NEW) {
		if (!op->new_exists)
			return;
		sm_json_out_key(&op->out, "Attributes");
		sm_json_out_raw(&op->out, op->nitem.p, op->nitem.len);
		return;
	}
	/*
	 * UPDATED_OLD / UPDATED_NEW with an UpdateExpression: the old or new
	 * item projected through the updated paths (nested ones stay nested).
	 */
	if (op->update != NULL && write_updated_paths(op))
		return;
	/*
	 * Otherwise (AttributeUpdates): the changed top-level attributes, which
	 * are the mutation's map operations (computed maybe on another shard).
	 */
	n = op->nops;
	for (i = 0; i < n; i++) {
		const struct sm_cell_op *c = &op->ops[i];

		if (c->kind == SM_CELL_SET_ELEM && op->rv == RV_UPDATED_NEW)
			break;
		if ((c->kind == SM_CELL_DELETE_ELEM || c->kind == SM_CELL_SET_ELEM) &&
		    op->rv == RV_UPDATED_OLD && op->have_item &&
		    sm_json_getn(&op->idoc, sm_json_root(&op->idoc), (const char *)c->key.p,
				 c->key.len) >= 0)
			break;
	}
	if (i == n)
		return; /* nothing to show: no Attributes at all */
	sm_json_out_key(&op->out, "Attributes");
	sm_json_out_obj_begin(&op->out);
	for (i = 0; i < n; i++) {
		const struct sm_cell_op *c = &op->ops[i];

		if (c->kind != SM_CELL_SET_ELEM && c->kind != SM_CELL_DELETE_ELEM)
			continue;
		if (op->rv == RV_UPDATED_NEW) {
			if (c->kind == SM_CELL_DELETE_ELEM)
				continue;
			sm_json_out_keyn(&op->out, (const char *)c->key.p, c->key.len);
			sm_json_out_raw(&op->out, (const char *)c->value.p, c->value.len);
		} else if (op->have_item) {
			e = sm_json_getn(&op->idoc, sm_json_root(&op->idoc), (const char *)c->key.p,
					 c->key.len);
			if (e < 0)
				continue;
			sm_json_out_keyn(&op->out, (const char *)c->key.p, c->key.len);
			{
				struct sm_bytes raw = sm_json_span(&op->idoc, e);

				sm_json_out_raw(&op->out, (const char *)raw.p, raw.len);
			}
		}
	}
	sm_json_out_obj_end(&op->out);
}

/* DynamoDB's size of the parsed item JSON @o (0 when it cannot be parsed). */
static size_t
json_item_size(struct alt_op *op, const struct sm_json_out *o)
{
	struct sm_json_out *unused;
	struct sm_json_doc *d;

	if (o->len == 0 || alt_tmp_doc(op, &unused, &d) < 0 ||
	    sm_json_parse(d, o->p, o->len, 0) < 0)
		return 0;
	return alt_item_size(op, d, sm_json_root(d));
}

/*
 * The size of an item whose JSON text has @text bytes, as far as units of
 * @block bytes need it: the text when it fits one block (DynamoDB's size is
 * never larger than the text: no parse on the common path), else the item
 * parsed and measured by @exact (-1: parse op->item first).
 */
static size_t
unit_size(struct alt_op *op, size_t text, size_t block, const struct sm_json_doc *d, int tok)
{
	if (text <= block)
		return text;
	if (d == NULL) {
		if ((tok = old_item(op)) < 0)
			return text;
		d = &op->idoc;
	}
	return alt_item_size(op, d, tok);
}

/* The units (in halves) of a GetItem (@read) or a write, from DynamoDB's item sizes. */
static __attribute__((noinline)) uint64_t
units_counted(struct alt_op *op, bool read)
{
	size_t old = 0, new = 0, block = read ? 4096 : 1024;
	bool consistent = false;
	int tok;

	/* GetItem parsed the item already (op->idoc); a write may not have */
	if (op->have_item)
		old = unit_size(op, op->item.len, block, read ? &op->idoc : NULL,
				read ? sm_json_root(&op->idoc) : -1);
	if (read) {
		sm_json_bool(&op->doc, op->consistent_tok, &consistent);
		return alt_rcu_halves(old, consistent);
	}
	if (op->wkind == W_PUT) {
		tok = sm_json_get(&op->doc, op->root, "Item");
		new = unit_size(op, sm_json_span(&op->doc, tok).len, block, &op->doc, tok);
	} else if (op->wkind == W_UPDATE && op->nitem.len > 0) {
		/* the new item; without a read, the key and what was set */
		tok = op->have_item ? -1 : sm_json_get(&op->doc, op->root, "Key");
		new = op->nitem.len + (tok >= 0 ? sm_json_span(&op->doc, tok).len : 0);
		if (new > block)
			new = json_item_size(op, &op->nitem) +
			      (tok >= 0 ? alt_item_size(op, &op->doc, tok) : 0);
	}
	return alt_wcu_halves(SM_MAX(old, new));
}

/*
 * The same, with no look at the items when their JSON texts fit one block
 * (the size DynamoDB counts is never larger than the text): the common case
 * costs a few compares. ScyllaDB counts every request's units in its
 * metrics, so this runs on every GetItem and write.
 */
static inline uint64_t
op_units(struct alt_op *op, bool read)
{
	bool consistent = false;

	if (read) {
		if (SM_LIKELY(!op->have_item || op->item.len <= 4096)) {
			sm_json_bool(&op->doc, op->consistent_tok, &consistent);
			return consistent ? 2 : 1;
		}
	} else if (SM_LIKELY(op->body_len + op->nitem.len <= 1024 &&
			     (!op->have_item || op->item.len <= 1024))) {
		return 2;
	}
	return units_counted(op, read);
}

/* ConsumedCapacity and ItemCollectionMetrics of a GetItem (@read) or a write. */
static __attribute__((noinline)) void
consumed_write(struct alt_op *op, bool read, uint64_t halves)
{
	struct sm_key pk, ck;
	int tok;

	if (op->cap_mode != ALT_CAP_NONE) {
		sm_json_out_key(&op->out, "ConsumedCapacity");
		alt_capacity_write(op, &op->out, op->tab.name, halves, NULL);
		if (read)
			return;
	}
	if (read || !op->icm || !alt_table_has_lsi(&op->tab))
		return;
	tok = sm_json_get(&op->doc, op->root, op->wkind == W_PUT ? "Item" : "Key");
	if (alt_item_key(op, &op->doc, tok, op->wkind == W_PUT, &pk, &ck) < 0)
		return;
	sm_json_out_key(&op->out, "ItemCollectionMetrics");
	alt_item_collection_metrics(op, &op->out, &pk);
}

static inline void
consumed(struct alt_op *op, bool read)
{
	static const uint8_t wcu_kind[] = {
		[W_PUT] = ALT_WCU_PUT,
		[W_DELETE] = ALT_WCU_DELETE,
		[W_UPDATE] = ALT_WCU_UPDATE,
	};
	uint64_t halves = op_units(op, read);

	if (read)
		ALT_OP_STAT_ADD(op, rcu_halves, halves);
	else
		ALT_OP_STAT_ADD(op, wcu[wcu_kind[op->wkind]], halves / 2);
	if (SM_UNLIKELY(op->cap_mode != ALT_CAP_NONE || op->icm))
		consumed_write(op, read, halves);
}

static void
write_answer(struct alt_op *op)
{
	sm_json_out_reset(&op->out);
	sm_json_out_obj_begin(&op->out);
	write_attributes(op);
	consumed(op, false);
	sm_json_out_obj_end(&op->out);
	alt_finish(op);
}

static void
store_failed(struct alt_op *op)
{
	if (op->first_err == -ETIMEDOUT)
		alt_fail(op, "InternalServerError", "%s", op->errmsg);
	else if (op->first_err == -ENOMEM)
		/* ScyllaDB's answer to an overloaded shard (alternator/server.cc,
		 * max_concurrent_requests_per_shard); SDKs back off and retry it. */
		alt_fail(op, "RequestLimitExceeded", "%s", op->errmsg);
	else
		alt_fail(op, "ValidationException", "%s", op->errmsg);
}

static void
after_write(struct alt_op *op)
{
	if (op->first_err != 0) {
		store_failed(op);
		return;
	}
	write_answer(op);
}

/* The item after an indexed table's write, parsed; NULL when there is none. */
static int
new_item_doc(struct alt_op *op, const struct sm_json_doc **out, int *tok)
{
	const struct sm_json_out *src = op->wkind == W_PUT ? &op->vitem : &op->nitem;
	struct sm_json_out *o;
	struct sm_json_doc *d;

	*out = NULL;
	*tok = -1;
	if (!op->new_exists || op->wkind == W_DELETE)
		return 0;
	if (alt_tmp_doc(op, &o, &d) < 0 || sm_json_parse(d, src->p, src->len, 0) < 0)
		return -ENOMEM;
	*out = d;
	*tok = sm_json_root(d);
	return 0;
}

/* The base write applied at @ts: now the view rows of the table's indexes. */
static void
index_after_write(struct alt_op *op, int64_t ts, const struct sm_key *pkp, const struct sm_key *ckp)
{
	struct sm_key pk = *pkp, ck = *ckp; /* the request goes: keep the key (its bytes stay) */
	const struct sm_json_doc *nd;
	int ntok;

	if (new_item_doc(op, &nd, &ntok) < 0) {
		alt_fail(op, "InternalServerError",
			 "out of memory updating the secondary indexes of a written item");
		return;
	}
	alt_index_write(op, ts, op->have_item ? &op->idoc : NULL,
			op->have_item ? sm_json_root(&op->idoc) : -1, nd, ntok, &pk, &ck, write_answer);
}

static void
after_cas(struct alt_op *op)
{
	struct sm_store_req *r = &op->sreqs[0];

	if (op->first_err != 0) {
		store_failed(op);
		return;
	}
	if (!r->cas.applied) {
		if (op->cond_error)
			alt_fail(op, "ValidationException", "%s", op->errmsg);
		else
			alt_fail_condition(op);
		return;
	}
	if (op->tab.idx->n > 0) {
		index_after_write(op, r->cas.ts, &r->cas.mut.pk, &r->cas.mut.ck);
		return;
	}
	write_answer(op);
}

static void
after_read_then_write(struct alt_op *op)
{
	struct write_ctx wc, *w = &wc;
	struct sm_store_req *r;
	struct sm_key pk = op->sreqs[0].sel.pk;
	struct sm_key ck;

	if (op->first_err != 0) {
		store_failed(op);
		return;
	}
	ck.n = 0;
	if (op->sreqs[0].sel.nranges)
		ck = op->sreqs[0].sel.ranges[0].start.prefix;
	w->kind = (enum write_kind)op->wkind;
	w->put_map = op->put_map;
	w->pk = pk;
	w->ck = ck;
	op->nsreqs = 0;
	r = new_sreq(op);
	if (r == NULL) {
		alt_fail(op, "InternalServerError", "out of memory");
		return;
	}
	r->kind = SM_REQ_MUTATE;
	if (!compute_write(op, w, &r->mut)) {
		if (op->cond_error)
			alt_fail(op, "ValidationException", "%s", op->errmsg);
		else
			alt_fail_condition(op);
		return;
	}
	op->next = after_write;
	alt_submit(op);
}

/* Run a write of @w's key with the table's isolation. */
static void
run_write(struct alt_op *op, struct write_ctx *w)
{
	enum sm_alt_isolation iso = op->tab.iso;
	struct sm_store_req *r;
	bool lwt;

	if (op->rmw && iso == SM_ALT_FORBID_RMW) {
		alt_fail(op, "ValidationException", FORBID_MSG);
		return;
	}
	op->wkind = (int)w->kind;
	op->stream_service = alt_stream_service; /* a TTL expiry (alt_ttl.c) */
	op->nsreqs = 0;
	r = new_sreq(op);
	if (r == NULL) {
		alt_fail(op, "InternalServerError", "out of memory");
		return;
	}
	op->read_cols[0] = op->tab.attrs_col;
	lwt = iso == SM_ALT_LWT_ALWAYS || (op->rmw && iso == SM_ALT_LWT_RMW_ONLY);
	if (lwt)
		ALT_OP_STAT_INC(op, write_using_lwt);
	else if (op->rmw)
		ALT_OP_STAT_INC(op, reads_before_write);
	/* a table with indexes or a stream needs every write's pre-image, read in the same step */
	if (lwt || op->tab.idx->n > 0 || op->tab.stream) {
		r->kind = SM_REQ_CAS;
		r->cas.local = !lwt;
		r->cas.mut.table = op->tab.t;
		r->cas.mut.pk = w->pk;
		r->cas.mut.ck = w->ck;
		r->cas.kind = SM_CAS_CUSTOM;
		r->cas.decide = cas_decide;
		r->cas.decide_ctx = op;
		r->cas.cols = op->read_cols;
		r->cas.ncols = 1;
		r->cas.sink.row = old_row_sink;
		r->cas.sink.ctx = op;
		r->cas.on_applied = op->tab.stream ? stream_applied : NULL;
		op->wkind = (int)w->kind;
		op->put_map = w->put_map;
		op->next = after_cas;
		alt_submit(op);
		return;
	}
	if (op->rmw) {
		/* unsafe: read, then write without isolation */
		r->kind = SM_REQ_SELECT;
		r->sel.table = op->tab.t;
		r->sel.pk = w->pk;
		if (w->ck.n > 0) {
			op->range.start.prefix = w->ck;
			op->range.start.inclusive = true;
			op->range.end = op->range.start;
			r->sel.ranges = &op->range;
			r->sel.nranges = 1;
		}
		r->sel.cols = op->read_cols;
		r->sel.ncols = 1;
		r->sel.limit = 1;
		r->sel.sink.row = old_row_sink;
		r->sel.sink.ctx = op;
		op->wkind = (int)w->kind;
		op->put_map = w->put_map;
		op->next = after_read_then_write;
		alt_submit(op);
		return;
	}
	r->kind = SM_REQ_MUTATE;
	if (!compute_write(op, w, &r->mut)) {
		alt_fail(op, "ValidationException", "%s", op->errmsg);
		return;
	}
	op->next = after_write;
	alt_submit(op);
}

/* ---- request parsing shared by the writes ---- */

static int
return_values(struct alt_op *op, bool update)
{
	int rv = sm_json_get(&op->doc, op->root, "ReturnValues");
	int rvf = sm_json_get(&op->doc, op->root, "ReturnValuesOnConditionCheckFailure");

	op->rv = RV_NONE;
	if (rv >= 0) {
		if (sm_json_str_eq(&op->doc, rv, "NONE"))
			op->rv = RV_NONE;
		else if (sm_json_str_eq(&op->doc, rv, "ALL_OLD"))
			op->rv = RV_ALL_OLD;
		else if (update && sm_json_str_eq(&op->doc, rv, "UPDATED_OLD"))
			op->rv = RV_UPDATED_OLD;
		else if (update && sm_json_str_eq(&op->doc, rv, "ALL_NEW"))
			op->rv = RV_ALL_NEW;
		else if (update && sm_json_str_eq(&op->doc, rv, "UPDATED_NEW"))
			op->rv = RV_UPDATED_NEW;
		else {
			alt_fail(op, "ValidationException",
				 update ? "1 validation error detected: Value at 'returnValues' "
					  "failed to "
					  "satisfy constraint: Member must satisfy enum value set: "
					  "[NONE, "
					  "ALL_OLD, UPDATED_OLD, ALL_NEW, UPDATED_NEW]"
					: "ReturnValues can only be ALL_OLD or NONE");
			return -EINVAL;
		}
	}
	if (rvf >= 0) {
		if (sm_json_str_eq(&op->doc, rvf, "ALL_OLD"))
			op->rv_on_fail_all_old = true;
		else if (!sm_json_str_eq(&op->doc, rvf, "NONE")) {
			alt_fail(op, "ValidationException",
				 "1 validation error detected: Value at "
				 "'returnValuesOnConditionCheckFailure' failed to satisfy "
				 "constraint: "
				 "Member must satisfy enum value set: [ALL_OLD, NONE]");
			return -EINVAL;
		}
	}
	return 0;
}

static int
prepare_common(struct alt_op *op, bool update)
{
	int ce = sm_json_get(&op->doc, op->root, "ConditionExpression");
	int exp = sm_json_get(&op->doc, op->root, "Expected");

	if (alt_table_from_request(op) < 0)
		return -EINVAL;
	if (return_values(op, update) < 0)
		return -EINVAL;
	if (ce >= 0 && exp >= 0) {
		alt_fail(op, "ValidationException",
			 "Can not use both expression and non-expression parameters in the same "
			 "request: Non-expression parameters: {Expected} Expression parameters: "
			 "{ConditionExpression}");
		return -EINVAL;
	}
	if (ce >= 0 && sm_json_type(&op->doc, ce) == SM_JSON_STRING &&
	    sm_json_span(&op->doc, ce).len == 2) {
		alt_fail(op, "ValidationException",
			 "Invalid ConditionExpression: The expression can not be empty;");
		return -EINVAL;
	}
	if (alt_parse_expr(op, "ConditionExpression", SM_DDB_CONDITION, &op->cond) < 0)
		return -EINVAL;
	if (exp < 0 && sm_json_get(&op->doc, op->root, "ConditionalOperator") >= 0) {
		alt_fail(op, "ValidationException",
			 "ConditionalOperator cannot be used without a non-empty Expected");
		return -EINVAL;
	}
	if (exp >= 0 && alt_check_expected(op, exp) < 0) {
		alt_fail(op, "ValidationException", "%s", op->errmsg);
		return -EINVAL;
	}
	if (exp >= 0 && update && sm_json_get(&op->doc, op->root, "UpdateExpression") >= 0) {
		alt_fail(op, "ValidationException",
			 "Can not use both expression and non-expression parameters in the same "
			 "request: Non-expression parameters: {Expected} Expression parameters: "
			 "{UpdateExpression}");
		return -EINVAL;
	}
	/* keys: reserve what every key part of the request can need, once */
	if (alt_bytes_reserve(&op->keys, op->body_len * 2 + 4096) < 0) {
		alt_fail(op, "InternalServerError", "out of memory");
		return -ENOMEM;
	}
	op->rmw = op->cond != NULL || exp >= 0 || op->rv == RV_ALL_OLD ||
		  op->rv == RV_UPDATED_OLD || op->rv == RV_ALL_NEW;
	return 0;
}

static int
read_key(struct alt_op *op, struct write_ctx *w)
{
	int key = op->key_tok; /* run() found it */

	if (key < 0) {
		alt_fail(op, "ValidationException",
			 "1 validation error detected: Value null at 'key' failed to satisfy "
			 "constraint: Member must not be null");
		return -EINVAL;
	}
	if (alt_item_key(op, &op->doc, key, false, &w->pk, &w->ck) < 0) {
		alt_fail(op, "ValidationException", "%s", op->errmsg);
		return -EINVAL;
	}
	return 0;
}

void
alt_put_item(struct alt_op *op)
{
	struct write_ctx w = { .kind = W_PUT };
	int item = sm_json_get(&op->doc, op->root, "Item");
	struct alt_kv *pairs;
	size_t knames;
	unsigned n, i;
	int ret;

	if (prepare_common(op, false) < 0)
		return;
	if (item < 0) {
		alt_fail(op, "ValidationException",
			 "1 validation error detected: Value null at 'item' failed to satisfy "
			 "constraint: Member must not be null");
		return;
	}
	if (alt_check_unused(op) < 0)
		return;
	if (alt_item_key(op, &op->doc, item, true, &w.pk, &w.ck) < 0) {
		alt_fail(op, "ValidationException", "%s", op->errmsg);
		return;
	}
	if (alt_keep_reserve(op, op->body_len + 4096) < 0) {
		alt_fail(op, "InternalServerError", "out of memory");
		return;
	}
	sm_json_out_reset(&op->nitem);
	ret = item_pairs(op, &op->tab, item, &op->nitem, &pairs, &n);
	if (ret < 0) {
		alt_fail(op, ret == -ENOMEM ? "InternalServerError" : "ValidationException", "%s",
			 op->errmsg);
		return;
	}
	op->vals.len = 0;
	for (i = 0, knames = 0; i < n; i++)
		knames += pairs[i].k.len;
	if (alt_bytes_reserve(&op->vals, op->nitem.len + knames + 16 * n + 64) < 0 ||
	    alt_build_map(&op->vals, pairs, n, &w.put_map) < 0) {
		alt_fail(op, "InternalServerError", "out of memory");
		return;
	}
	w.have_put_map = true;
	if (op->tab.idx->n > 0) {
		struct sm_cell_view attrs = { .present = true, .value = w.put_map };

		/* the new item, canonical, for the indexes' view rows */
		if (alt_index_check_item(op, &op->doc, item) < 0) {
			alt_fail(op, "ValidationException", "%s", op->errmsg);
			return;
		}
		sm_json_out_reset(&op->vitem);
		op->index_bufs = true;
		alt_write_row_item(op, &op->vitem, &w.pk, &w.ck, &attrs);
		if (op->vitem.err != 0) {
			alt_fail(op, "InternalServerError", "out of memory");
			return;
		}
	}
	run_write(op, &w);
}

void
alt_delete_item(struct alt_op *op)
{
	struct write_ctx w = { .kind = W_DELETE };

	if (prepare_common(op, false) < 0)
		return;
	if (alt_check_unused(op) < 0 || read_key(op, &w) < 0)
		return;
	run_write(op, &w);
}

void
alt_update_item(struct alt_op *op)
{
	struct write_ctx w = { .kind = W_UPDATE };
	int ue = sm_json_get(&op->doc, op->root, "UpdateExpression");
	int au = sm_json_get(&op->doc, op->root, "AttributeUpdates");
	int e;

	if (prepare_common(op, true) < 0)
		return;
	if (ue >= 0 && au >= 0) {
		alt_fail(op, "ValidationException",
			 "Can not use both expression and non-expression parameters in the same "
			 "request: Non-expression parameters: {AttributeUpdates} Expression "
			 "parameters: {UpdateExpression}");
		return;
	}
	if (au >= 0 && op->cond != NULL) {
		alt_fail(op, "ValidationException",
			 "Can not use both expression and non-expression parameters in the same "
			 "request: Non-expression parameters: {AttributeUpdates} Expression "
			 "parameters: {ConditionExpression}");
		return;
	}
	if (alt_parse_expr(op, "UpdateExpression", SM_DDB_UPDATE, &op->update) < 0 ||
	    alt_check_unused(op) < 0 || read_key(op, &w) < 0)
		return;
	if (op->update != NULL && sm_ddb_expr_update_needs_read(op->update))
		op->rmw = true;
	if (au >= 0) {
		/* legacy: ADD, or DELETE with a value, needs the old item */
		for (e = sm_json_first(&op->doc, au); e >= 0; e = sm_json_next(&op->doc, e)) {
			int spec = sm_json_member_value(&op->doc, e);
			int act = sm_json_get(&op->doc, spec, "Action");
			int val = sm_json_get(&op->doc, spec, "Value");
			size_t nl = sm_json_span(&op->doc, e).len - 2; /* raw: >= the name's bytes */

			if (nl == 0 || nl > ALT_MAX_ATTR_NAME) {
				struct sm_bytes k;

				alt_payload_str(op, &op->doc, e, &k);
				if (k.len == 0 || k.len > ALT_MAX_ATTR_NAME) {
					alt_name_error(op, k.len, "AttributeUpdates - ");
					alt_fail(op, "ValidationException", "%s", op->errmsg);
					return;
				}
			}

			if (val >= 0) {
				sm_json_out_reset(&op->scratch);
				if (alt_value_write(op, &op->doc, val, &op->scratch, false,
						    "AttributeUpdates") < 0) {
					alt_fail(op, "ValidationException", "%s", op->errmsg);
					return;
				}
			}
			if (sm_json_str_eq(&op->doc, act, "ADD") ||
			    (sm_json_str_eq(&op->doc, act, "DELETE") && val >= 0))
				op->rmw = true;
		}
	}
	run_write(op, &w);
}

/* ---- GetItem ---- */

static void
after_get(struct alt_op *op)
{
	int itok;

	if (op->first_err != 0) {
		store_failed(op);
		return;
	}
	sm_json_out_reset(&op->out);
	sm_json_out_obj_begin(&op->out);
	itok = old_item(op);
	if (itok >= 0) {
		sm_json_out_key(&op->out, "Item");
		if (alt_write_projected(op, &op->idoc, itok, &op->out) < 0) {
			alt_fail(op, "InternalServerError", "out of memory");
			return;
		}
	}
	consumed(op, true);
	sm_json_out_obj_end(&op->out);
	alt_finish(op);
}

void
alt_get_item(struct alt_op *op)
{
	struct write_ctx w;
	struct sm_store_req *r;

	if (alt_table_from_request_read(op) < 0)
		return;
	if (alt_bytes_reserve(&op->keys, op->body_len * 2 + 4096) < 0) {
		alt_fail(op, "InternalServerError", "out of memory");
		return;
	}
	if (op->atg_tok >= 0 && sm_json_get(&op->doc, op->root, "ProjectionExpression") >= 0) {
		alt_fail(op, "ValidationException",
			 "Can not use both expression and non-expression parameters in the same "
			 "request: Non-expression parameters: {AttributesToGet} Expression "
			 "parameters: {ProjectionExpression}");
		return;
	}
	if (alt_parse_expr(op, "ProjectionExpression", SM_DDB_PROJECTION, &op->proj) < 0 ||
	    alt_check_unused(op) < 0 || read_key(op, &w) < 0)
		return;
	op->nsreqs = 0;
	r = new_sreq(op);
	if (r == NULL) {
		alt_fail(op, "InternalServerError", "out of memory");
		return;
	}
	op->read_cols[0] = op->tab.attrs_col;
	r->kind = SM_REQ_SELECT;
	r->sel.table = op->tab.t;
	r->sel.pk = w.pk;
	if (w.ck.n > 0) {
		op->range.start.prefix = w.ck;
		op->range.start.inclusive = true;
		op->range.end = op->range.start;
		r->sel.ranges = &op->range;
		r->sel.nranges = 1;
	}
	r->sel.cols = op->read_cols;
	r->sel.ncols = 1;
	r->sel.limit = 1;
	r->sel.sink.row = old_row_sink;
	r->sel.sink.ctx = op;
	op->next = after_get;
	alt_submit(op);
}

/* ---- BatchWriteItem ---- */

/* Each table names one write at least: as many tables as writes (16 refused valid batches). */
#define MAX_BATCH_TABLES ALT_MAX_BATCH_WRITE

struct batch_ctx {
	struct alt_table tabs[MAX_BATCH_TABLES];
	unsigned ntabs;
	bool indexed; /* a table has indexes: the writes go one by one (pre-images) */
	struct sm_store_req *reqs;
	unsigned nreqs;
};

static void
batch_release(struct batch_ctx *b)
{
	unsigned i;

	for (i = 0; i < b->ntabs; i++)
		alt_table_release(&b->tabs[i]);
	sm_free(b->reqs);
	sm_free(b);
}

/* BatchWriteItem's ConsumedCapacity: per table, the units of each put's item, 1 per delete. */
static void
batch_write_consumed(struct alt_op *op, bool answer)
{
	int ri = sm_json_get(&op->doc, op->root, "RequestItems");
	struct sm_bytes name;
	uint64_t halves, h;
	int t, e, put;

	if (answer) {
		sm_json_out_key(&op->out, "ConsumedCapacity");
		sm_json_out_arr_begin(&op->out);
	}
	for (t = sm_json_first(&op->doc, ri); t >= 0; t = sm_json_next(&op->doc, t)) {
		int list = sm_json_member_value(&op->doc, t);
		bool named = alt_payload_str(op, &op->doc, t, &name) == 0;
		struct alt_tstats *ts = named ? alt_table_stats((const char *)name.p, name.len) : NULL;

		halves = 0;
		for (e = sm_json_first(&op->doc, list); e >= 0; e = sm_json_next(&op->doc, e)) {
			put = sm_json_get(&op->doc, sm_json_get(&op->doc, e, "PutRequest"), "Item");
			h = alt_wcu_halves(put >= 0 ? unit_size(op, sm_json_span(&op->doc, put).len,
								 1024, &op->doc, put)
						    : 0);
			/* ScyllaDB counts a batch's puts as PutItem's units, its deletes as
			 * DeleteItem's */
			ALT_STAT_ADD(wcu[put >= 0 ? ALT_WCU_PUT : ALT_WCU_DELETE], h / 2);
			if (ts != NULL)
				ts->st.wcu[put >= 0 ? ALT_WCU_PUT : ALT_WCU_DELETE] += h / 2;
			halves += h;
		}
		if (!answer || !named)
			continue;
		alt_capacity_write(op, &op->out, alt_keep_str(op, name.p, name.len), halves, NULL);
	}
	if (answer)
		sm_json_out_arr_end(&op->out);
}

static void
after_batch_write(struct alt_op *op)
{
	batch_release(op->batch);
	op->batch = NULL;
	if (op->first_err != 0) {
		store_failed(op);
		return;
	}
	sm_json_out_reset(&op->out);
	sm_json_out_obj_begin(&op->out);
	sm_json_out_key(&op->out, "UnprocessedItems");
	sm_json_out_obj_begin(&op->out);
	sm_json_out_obj_end(&op->out);
	batch_write_consumed(op, op->cap_mode != ALT_CAP_NONE);
	sm_json_out_obj_end(&op->out);
	alt_finish(op);
}

static bool
batch_decide_put(void *ctx, bool exists, struct sm_cas *cas)
{
	(void)ctx;
	(void)exists;
	(void)cas;
	return true; /* always_use_lwt: the write goes through Paxos, unconditionally */
}

static void
batch_seq(struct alt_op *op);

/* One write of an indexed batch: its pre-image came through old_row_sink(). */
static bool
batch_decide_seq(void *ctx, bool exists, struct sm_cas *cas)
{
	struct alt_op *op = ctx;

	(void)cas;
	if (!exists)
		op->have_item = false;
	return true;
}

static void
batch_seq_written(struct alt_op *op)
{
	struct sm_store_req *r = &op->sreqs[0];
	struct sm_key pk = r->cas.mut.pk, ck = r->cas.mut.ck;
	const struct sm_json_doc *nd = NULL;
	struct sm_json_doc *d;
	struct sm_json_out *o;
	int otok, ntok = -1;

	if (op->first_err != 0) {
		batch_release(op->batch);
		op->batch = NULL;
		store_failed(op);
		return;
	}
	if (op->tab.idx->n == 0) {
		batch_seq(op);
		return;
	}
	op->ntmp = 0; /* one write at a time: the slots go round */
	otok = old_item(op);
	if (r->cas.mut.nops > 0) {
		struct sm_cell_view attrs = { .present = true, .value = r->cas.mut.ops[0].value };

		sm_json_out_reset(&op->vitem);
		op->index_bufs = true;
		alt_write_row_item(op, &op->vitem, &pk, &ck, &attrs);
		if (op->vitem.err != 0 || alt_tmp_doc(op, &o, &d) < 0 ||
		    sm_json_parse(d, op->vitem.p, op->vitem.len, 0) < 0) {
			batch_release(op->batch);
			op->batch = NULL;
			alt_fail(op, "InternalServerError", "out of memory");
			return;
		}
		nd = d;
		ntok = sm_json_root(d);
	}
	alt_index_write(op, r->cas.ts, otok >= 0 ? &op->idoc : NULL, otok, nd, ntok, &pk, &ck,
			batch_seq);
}

/*
 * The writes of a batch that touches a table with indexes, one after the
 * other: each reads its pre-image in the step that writes it, then writes
 * its view rows, as PutItem and DeleteItem do.
 */
static void
batch_seq(struct alt_op *op)
{
	struct batch_ctx *b = op->batch;
	struct sm_store_req *base, *r;
	unsigned j;

	if (op->batch_i == b->nreqs) {
		op->first_err = 0;
		after_batch_write(op);
		return;
	}
	base = &b->reqs[op->batch_i++];
	for (j = 0; j < b->ntabs; j++)
		if (b->tabs[j].t == (base->kind == SM_REQ_CAS ? base->cas.mut.table : base->mut.table))
			op->tab = b->tabs[j];
	op->nsreqs = 0;
	r = new_sreq(op);
	if (r == NULL) {
		batch_release(b);
		op->batch = NULL;
		alt_fail(op, "InternalServerError", "out of memory");
		return;
	}
	r->kind = SM_REQ_CAS;
	r->cas.mut = base->kind == SM_REQ_CAS ? base->cas.mut : base->mut;
	r->cas.kind = SM_CAS_CUSTOM;
	r->cas.decide = batch_decide_seq;
	r->cas.decide_ctx = op;
	r->cas.local = op->tab.iso != SM_ALT_LWT_ALWAYS;
	op->read_cols[0] = op->tab.attrs_col;
	r->cas.cols = op->read_cols;
	r->cas.ncols = 1;
	r->cas.sink.row = old_row_sink;
	r->cas.sink.ctx = op;
	r->cas.on_applied = op->tab.stream ? stream_applied : NULL;
	op->wkind = W_PUT; /* a put or a delete: stream_applied() reads the mutation */
	op->have_item = false;
	op->next = batch_seq_written;
	alt_submit(op);
}

void
alt_batch_write(struct alt_op *op)
{
	int ri = sm_json_get(&op->doc, op->root, "RequestItems");
	struct batch_ctx *b;
	struct alt_kv *pairs;
	unsigned n, total = 0, i, j;
	int t, e, ret;
	size_t need;

	if (sm_json_type(&op->doc, ri) != SM_JSON_OBJECT || sm_json_count(&op->doc, ri) == 0) {
		alt_fail(op, "ValidationException",
			 "1 validation error detected: Value at 'requestItems' failed to satisfy "
			 "constraint: Member must have length greater than or equal to 1");
		return;
	}
	for (t = sm_json_first(&op->doc, ri); t >= 0; t = sm_json_next(&op->doc, t)) {
		unsigned n1 = sm_json_count(&op->doc, sm_json_member_value(&op->doc, t));

		/* every table names 1 to 25 writes (an empty list is refused, as DynamoDB does) */
		if (n1 == 0 || n1 > ALT_MAX_BATCH_WRITE) {
			alt_fail(op, "ValidationException",
				 "1 validation error detected: Value at 'requestItems' failed to "
				 "satisfy constraint: Map value must satisfy constraint: [Member must "
				 "have length less than or equal to 25, Member must have length "
				 "greater than or equal to 1]");
			return;
		}
		total += n1;
	}
	if (total > ALT_MAX_BATCH_WRITE) {
		alt_fail(op, "ValidationException",
			 "Too many items requested for the BatchWriteItem call: the batch's length "
			 "of %u is over the limit of %u",
			 total, ALT_MAX_BATCH_WRITE);
		return;
	}
	if (sm_json_count(&op->doc, ri) > MAX_BATCH_TABLES) {
		alt_fail(op, "ValidationException",
			 "1 validation error detected: Value at 'requestItems' failed to satisfy "
			 "constraint: every table must have between 1 and 25 write requests");
		return;
	}
	alt_metrics_batch(alt_st, true, total);
	b = sm_calloc(1, sizeof(*b));
	if (b == NULL) {
		alt_fail(op, "InternalServerError", "out of memory");
		return;
	}
	need = op->body_len * 2 + 4096;
	if (alt_bytes_reserve(&op->keys, need) < 0 || alt_keep_reserve(op, need) < 0) {
		batch_release(b);
		alt_fail(op, "InternalServerError", "out of memory");
		return;
	}
	op->nsreqs = 0;
	op->nops = 0;
	op->stream_service = false;
	sm_json_out_reset(&op->nitem);
	/* Pass 1: keys and canonical items; pass 2 builds the maps. */
	for (t = sm_json_first(&op->doc, ri); t >= 0; t = sm_json_next(&op->doc, t)) {
		struct sm_bytes name;
		struct alt_table *tab = &b->tabs[b->ntabs];
		int list = sm_json_member_value(&op->doc, t);

		if (alt_payload_str(op, &op->doc, t, &name) < 0 ||
		    alt_table_lookup(op, (const char *)name.p, name.len, tab) < 0) {
			batch_release(b);
			alt_fail(op, "ResourceNotFoundException",
				 "Requested resource not found: Table: %.*s not found",
				 (int)SM_MIN(name.len, 255u), (const char *)name.p);
			return;
		}
		b->ntabs++;
		alt_metrics_table_batch(op, tab->ts, true, sm_json_count(&op->doc, list));
		op->tab = *tab; /* for the key helpers */
		for (e = sm_json_first(&op->doc, list); e >= 0; e = sm_json_next(&op->doc, e)) {
			int put = sm_json_get(&op->doc, e, "PutRequest");
			int del = sm_json_get(&op->doc, e, "DeleteRequest");
			struct sm_store_req *r;
			struct sm_mutation *m;
			struct sm_key pk, ck;

			if ((put >= 0) == (del >= 0)) {
				batch_release(b);
				op->tab.t = NULL;
				alt_fail(op, "ValidationException",
					 "Each WriteRequest must contain exactly one PutRequest or "
					 "DeleteRequest");
				return;
			}
			if (put >= 0)
				ret = alt_item_key(op, &op->doc, sm_json_get(&op->doc, put, "Item"),
						   true, &pk, &ck);
			else
				ret = alt_item_key(op, &op->doc, sm_json_get(&op->doc, del, "Key"),
						   false, &pk, &ck);
			if (ret == 0 && put >= 0 && tab->idx->n > 0)
				ret = alt_index_check_item(op, &op->doc,
							   sm_json_get(&op->doc, put, "Item"));
			if (ret < 0) {
				batch_release(b);
				op->tab.t = NULL;
				alt_fail(op, "ValidationException", "%s", op->errmsg);
				return;
			}
			/* a stream needs each write's pre-image too */
			b->indexed |= tab->idx->n > 0 || tab->stream;
			for (i = 0; i < op->nsreqs; i++) {
				m = op->sreqs[i].kind == SM_REQ_CAS ? &op->sreqs[i].cas.mut
								    : &op->sreqs[i].mut;
				if (m->table == tab->t && alt_key_eq(&m->pk, &pk) &&
				    alt_key_eq(&m->ck, &ck)) {
					batch_release(b);
					op->tab.t = NULL;
					alt_fail(op, "ValidationException",
						 "Provided list of item keys contains duplicates");
					return;
				}
			}
			r = new_sreq(op);
			if (r == NULL) {
				batch_release(b);
				op->tab.t = NULL;
				alt_fail(op, "InternalServerError", "out of memory");
				return;
			}
			if (tab->iso == SM_ALT_LWT_ALWAYS) {
				ALT_STAT_INC(write_using_lwt);
				if (tab->ts != NULL)
					tab->ts->st.write_using_lwt++;
				r->kind = SM_REQ_CAS;
				r->cas.kind = SM_CAS_CUSTOM;
				r->cas.decide = batch_decide_put;
				m = &r->cas.mut;
			} else {
				r->kind = SM_REQ_MUTATE;
				m = &r->mut;
			}
			m->table = tab->t;
			m->pk = pk;
			m->ck = ck;
			m->ts = SM_TS_NOW;
			m->ttl = SM_TTL_DEFAULT;
			if (del >= 0) {
				m->flags = tab->range ? SM_MUT_DELETE_ROW : SM_MUT_DELETE_PARTITION;
				continue;
			}
			m->flags = SM_MUT_ROW_MARKER;
			/* remember the item token in nops until pass 2 */
			m->nops = (unsigned)sm_json_get(&op->doc, put, "Item") + 1;
			m->ops = NULL;
		}
	}
	op->tab.t = NULL;
	/* Pass 2: the attrs maps, in op->vals reserved once. */
	op->vals.len = 0;
	if (alt_bytes_reserve(&op->vals, op->body_len * 8 + 4096) < 0) {
		batch_release(b);
		alt_fail(op, "InternalServerError", "out of memory");
		return;
	}
	if (op->ops_cap < op->nsreqs) {
		struct sm_cell_op *p = sm_realloc(op->ops, (op->nsreqs + 1) * sizeof(*p));

		if (p == NULL) {
			batch_release(b);
			alt_fail(op, "InternalServerError", "out of memory");
			return;
		}
		op->ops = p;
		op->ops_cap = op->nsreqs + 1;
	}
	for (i = 0; i < op->nsreqs; i++) {
		struct sm_store_req *r = &op->sreqs[i];
		struct sm_mutation *m = r->kind == SM_REQ_CAS ? &r->cas.mut : &r->mut;
		struct sm_cell_op *c = &op->ops[i];
		struct sm_bytes map;
		int item;

		if (m->nops == 0)
			continue;
		item = (int)m->nops - 1;
		for (j = 0; j < b->ntabs; j++)
			if (b->tabs[j].t == m->table)
				op->tab = b->tabs[j];
		sm_json_out_reset(&op->scratch);
		ret = item_pairs(op, &op->tab, item, &op->scratch, &pairs, &n);
		if (ret == 0)
			ret = alt_build_map(&op->vals, pairs, n, &map);
		if (ret < 0) {
			op->tab.t = NULL;
			batch_release(b);
			alt_fail(op, ret == -EINVAL ? "ValidationException" : "InternalServerError",
				 "%s", ret == -EINVAL ? op->errmsg : "out of memory");
			return;
		}
		memset(c, 0, sizeof(*c));
		c->col = op->tab.attrs_col;
		c->kind = SM_CELL_SET;
		c->value = map;
		m->ops = c;
		m->nops = 1;
	}
	op->tab.t = NULL;
	op->batch = b;
	if (b->indexed) {
		b->reqs = sm_malloc(op->nsreqs * sizeof(*b->reqs));
		if (b->reqs == NULL) {
			batch_release(b);
			op->batch = NULL;
			alt_fail(op, "InternalServerError", "out of memory");
			return;
		}
		memcpy(b->reqs, op->sreqs, op->nsreqs * sizeof(*b->reqs));
		b->nreqs = op->nsreqs;
		op->batch_i = 0;
		batch_seq(op);
		return;
	}
	op->next = after_batch_write;
	alt_submit(op);
}

/* ---- BatchGetItem: one table entry and key at a time ---- */

static void
batch_get_next(struct alt_op *op);

static int
batch_get_row(void *ctx, const struct sm_row_view *r)
{
	struct alt_op *op = ctx;

	sm_json_out_reset(&op->item);
	alt_write_row_item(op, &op->item, r->pk, r->ck, &r->cells[0]);
	op->have_item = op->item.err == 0;
	return op->item.err;
}

static void
batch_get_done(struct alt_op *op)
{
	int itok;

	if (op->first_err != 0) {
		store_failed(op);
		return;
	}
	itok = old_item(op);
	if (itok >= 0 && alt_write_projected(op, &op->idoc, itok, &op->out) < 0) {
		alt_fail(op, "InternalServerError", "out of memory");
		return;
	}
	{
		bool consistent = false;
		uint64_t halves;

		/* ScyllaDB's metrics count every read's units; the item's size only when its
		 * text passes a block (unit_size()) */
		sm_json_bool(&op->doc, sm_json_get(&op->doc, op->cap_spec, "ConsistentRead"),
			     &consistent);
		halves = alt_rcu_halves(itok >= 0 ? unit_size(op, op->item.len, 4096, &op->idoc, itok)
						  : 0,
					consistent);
		ALT_STAT_ADD(rcu_halves, halves);
		if (op->tab.ts != NULL)
			op->tab.ts->st.rcu_halves += halves;
		if (SM_UNLIKELY(op->cap_mode != ALT_CAP_NONE))
			op->cap_half[op->cap_ti] += (uint32_t)halves;
	}
	batch_get_next(op);
}

/* op->batch_i counts keys done overall; walks RequestItems in order. */
static void
batch_get_next(struct alt_op *op)
{
	int ri = sm_json_get(&op->doc, op->root, "RequestItems");
	unsigned k = 0;
	int t, keys, key;
	struct sm_store_req *r;
	struct sm_key pk, ck;
	struct sm_bytes name;

	for (t = sm_json_first(&op->doc, ri); t >= 0; t = sm_json_next(&op->doc, t)) {
		int spec = sm_json_member_value(&op->doc, t);
		unsigned n;

		keys = sm_json_get(&op->doc, spec, "Keys");
		n = sm_json_count(&op->doc, keys);
		if (op->batch_i >= k + n) {
			k += n;
			continue;
		}
		if (op->batch_i == k) {
			/* entering this table: close the previous list, open ours */
			if (k > 0 || t != sm_json_first(&op->doc, ri))
				sm_json_out_arr_end(&op->out);
			if (alt_payload_str(op, &op->doc, t, &name) < 0)
				goto bad;
			sm_json_out_keyn(&op->out, (const char *)name.p, name.len);
			sm_json_out_arr_begin(&op->out);
			if (k > 0)
				op->cap_ti++;
			op->cap_spec = spec;
			if (op->have_tab)
				alt_table_release(&op->tab);
			op->have_tab = false;
			if (alt_table_lookup_read(op, (const char *)name.p, name.len, &op->tab) <
			    0) {
				alt_fail(op, "ResourceNotFoundException",
					 "Requested resource not found: Table: %.*s not found",
					 (int)SM_MIN(name.len, 255u), (const char *)name.p);
				return;
			}
			op->have_tab = true;
			alt_metrics_table_batch(op, op->tab.ts, false, n);
			sm_ddb_expr_free(op->proj);
			op->proj = NULL;
			op->names_tok = sm_json_get(&op->doc, spec, "ExpressionAttributeNames");
			op->atg_tok = sm_json_get(&op->doc, spec, "AttributesToGet");
			op->values_tok = -1;
			{
				int saved = op->root;

				op->root = spec; /* the table entry holds ProjectionExpression */
				if (alt_parse_expr(op, "ProjectionExpression", SM_DDB_PROJECTION,
						   &op->proj) < 0 ||
				    alt_check_unused(op) < 0)
					return;
				op->root = saved;
			}
		}
		key = sm_json_first(&op->doc, keys);
		for (unsigned i = k; i < op->batch_i; i++)
			key = sm_json_next(&op->doc, key);
		op->batch_i++;
		op->keys.len = 0;
		if (alt_item_key(op, &op->doc, key, false, &pk, &ck) < 0) {
			alt_fail(op, "ValidationException", "%s", op->errmsg);
			return;
		}
		op->nsreqs = 0;
		r = new_sreq(op);
		if (r == NULL)
			goto nomem;
		op->have_item = false;
		op->read_cols[0] = op->tab.attrs_col;
		r->kind = SM_REQ_SELECT;
		r->sel.table = op->tab.t;
		r->sel.pk = pk;
		if (ck.n > 0) {
			op->range.start.prefix = ck;
			op->range.start.inclusive = true;
			op->range.end = op->range.start;
			r->sel.ranges = &op->range;
			r->sel.nranges = 1;
		}
		r->sel.cols = op->read_cols;
		r->sel.ncols = 1;
		r->sel.limit = 1;
		r->sel.sink.row = batch_get_row;
		r->sel.sink.ctx = op;
		op->next = batch_get_done;
		alt_submit(op);
		return;
	}
	/* all done */
	if (op->batch_i > 0)
		sm_json_out_arr_end(&op->out);
	sm_json_out_obj_end(&op->out); /* Responses */
	sm_json_out_key(&op->out, "UnprocessedKeys");
	sm_json_out_obj_begin(&op->out);
	sm_json_out_obj_end(&op->out);
	if (SM_UNLIKELY(op->cap_mode != ALT_CAP_NONE)) {
		unsigned ti = 0;

		sm_json_out_key(&op->out, "ConsumedCapacity");
		sm_json_out_arr_begin(&op->out);
		for (t = sm_json_first(&op->doc, ri); t >= 0; t = sm_json_next(&op->doc, t)) {
			if (alt_payload_str(op, &op->doc, t, &name) < 0)
				continue;
			alt_capacity_write(op, &op->out, alt_keep_str(op, name.p, name.len),
					   op->cap_half[ti++], NULL);
		}
		sm_json_out_arr_end(&op->out);
	}
	sm_json_out_obj_end(&op->out);
	alt_finish(op);
	return;
bad:
	alt_fail(op, "ValidationException", "invalid table name in RequestItems");
	return;
nomem:
	alt_fail(op, "InternalServerError", "out of memory");
}

/* Two keys (objects @a, @b of the request) naming the same attributes with equal values. */
static bool
same_item_key(struct alt_op *op, int a, int b)
{
	struct sm_bytes k;
	int e, v;

	if (sm_json_type(&op->doc, a) != SM_JSON_OBJECT ||
	    sm_json_count(&op->doc, a) != sm_json_count(&op->doc, b))
		return false;
	for (e = sm_json_first(&op->doc, a); e >= 0; e = sm_json_next(&op->doc, e)) {
		if (alt_payload_str(op, &op->doc, e, &k) < 0)
			return false;
		v = sm_json_getn(&op->doc, b, (const char *)k.p, k.len);
		if (v < 0 || !alt_value_equal(op, (struct alt_val){ &op->doc, sm_json_member_value(&op->doc, e) },
					      (struct alt_val){ &op->doc, v }))
			return false;
	}
	return true;
}

void
alt_batch_get(struct alt_op *op)
{
	int ri = sm_json_get(&op->doc, op->root, "RequestItems");
	unsigned total = 0;
	int t, keys, a, b;

	if (sm_json_type(&op->doc, ri) != SM_JSON_OBJECT || sm_json_count(&op->doc, ri) == 0) {
		alt_fail(op, "ValidationException",
			 "1 validation error detected: Value at 'requestItems' failed to satisfy "
			 "constraint: Member must have length greater than or equal to 1");
		return;
	}
	for (t = sm_json_first(&op->doc, ri); t >= 0; t = sm_json_next(&op->doc, t)) {
		keys = sm_json_get(&op->doc, sm_json_member_value(&op->doc, t), "Keys");
		if (sm_json_type(&op->doc, keys) != SM_JSON_ARRAY ||
		    sm_json_count(&op->doc, keys) == 0) {
			alt_fail(op, "ValidationException",
				 "1 validation error detected: Value at 'requestItems.keys' failed "
				 "to "
				 "satisfy constraint: Member must have length greater than or "
				 "equal to 1");
			return;
		}
		total += sm_json_count(&op->doc, keys);
		/* the same key twice in one table is refused, as DynamoDB does: 1 and 1.0
		 * are one number (at most 100 keys: pairs are cheap) */
		for (a = sm_json_first(&op->doc, keys); a >= 0; a = sm_json_next(&op->doc, a)) {
			for (b = sm_json_next(&op->doc, a); b >= 0; b = sm_json_next(&op->doc, b)) {
				if (same_item_key(op, a, b)) {
					alt_fail(op, "ValidationException",
						 "Provided list of item keys contains duplicates");
					return;
				}
			}
		}
	}
	if (total > ALT_MAX_BATCH_GET) {
		alt_fail(op, "ValidationException",
			 "Too many items requested for the BatchGetItem call");
		return;
	}
	alt_metrics_batch(alt_st, false, total);
	if (alt_bytes_reserve(&op->keys, op->body_len * 2 + 4096) < 0) {
		alt_fail(op, "InternalServerError", "out of memory");
		return;
	}
	op->batch_i = 0;
	op->cap_ti = 0;
	memset(op->cap_half, 0, sizeof(op->cap_half));
	sm_json_out_reset(&op->out);
	sm_json_out_obj_begin(&op->out);
	sm_json_out_key(&op->out, "Responses");
	sm_json_out_obj_begin(&op->out);
	batch_get_next(op);
}
