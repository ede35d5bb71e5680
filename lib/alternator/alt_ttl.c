/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Time to Live: UpdateTimeToLive, DescribeTimeToLive and the per-shard
 * expiry scanner, with ScyllaDB's semantics (alternator/ttl.cc).
 *
 * The chosen attribute is kept, as ScyllaDB keeps it, in the table's tag
 * system:ttl_attribute, hidden from ListTagsOfResource and refused by
 * TagResource and UntagResource. An item whose attribute is a number of
 * seconds since the epoch not after now, and not more than five years
 * before it, is expired: it stays readable (as in DynamoDB) until the
 * scanner of the shard that owns it deletes it, within about one
 * alternator_ttl_period_in_seconds plus one pass over that shard's items.
 *
 * The scanner visits its shard's own partitions of every table with TTL
 * (sm_store_scan_local(): no hops), TTL_STEP_ROWS rows per timer tick, and
 * deletes the expired ones through DeleteItem, so secondary indexes follow.
 * As in ScyllaDB, the delete is not conditional: an item whose expiration
 * is pushed back between the scan and the delete (in the same step) is
 * still deleted.
 */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alt_priv.h"

#define TTL_TAG "system:ttl_attribute"
#define TTL_STEP_ROWS 256u
#define TTL_MAX_ATTR 255u
/* DynamoDB ignores expiration times more than five years in the past. */
#define TTL_WINDOW_S (5ll * 365 * 24 * 3600)

/* ---- the tag ---- */

/* The tag's value in tag list JSON @tags into @buf; false when TTL is off. */
bool
alt_ttl_attr(const char *tags, char *buf, size_t cap)
{
	struct sm_json_doc d;
	struct sm_bytes s;
	bool found = false;
	int e;

	if (strstr(tags, TTL_TAG) == NULL)
		return false; /* the common case: no parse */
	sm_json_doc_init(&d);
	if (sm_json_parse(&d, tags, strlen(tags), 0) == 0) {
		for (e = sm_json_first(&d, 0); e >= 0 && !found; e = sm_json_next(&d, e)) {
			if (!sm_json_str_eq(&d, sm_json_get(&d, e, "Key"), TTL_TAG))
				continue;
			if (sm_json_str(&d, sm_json_get(&d, e, "Value"), buf, cap, &s) < 0 ||
			    s.len >= cap)
				continue;
			memmove(buf, s.p, s.len);
			buf[s.len] = '\0';
			found = true;
		}
	}
	sm_json_doc_release(&d);
	return found;
}

int
alt_ttl_tags_set(const char *tags, const char *attr, struct sm_json_out *o)
{
	struct sm_json_doc d;
	int e;

	sm_json_doc_init(&d);
	if (sm_json_parse(&d, tags, strlen(tags), 0) < 0) {
		sm_json_doc_release(&d);
		return -EINVAL;
	}
	sm_json_out_arr_begin(o);
	for (e = sm_json_first(&d, 0); e >= 0; e = sm_json_next(&d, e)) {
		struct sm_bytes raw = sm_json_span(&d, e);

		int k = sm_json_get(&d, e, "Key");

		/* the stream's tag is internal too (alt_streams.c) */
		if (!sm_json_str_eq(&d, k, TTL_TAG) && !alt_stream_is_tag(&d, k))
			sm_json_out_raw(o, (const char *)raw.p, raw.len);
	}
	if (attr != NULL) {
		sm_json_out_obj_begin(o);
		sm_json_out_key(o, "Key");
		sm_json_out_str(o, TTL_TAG);
		sm_json_out_key(o, "Value");
		sm_json_out_str(o, attr);
		sm_json_out_obj_end(o);
	}
	sm_json_out_arr_end(o);
	sm_json_doc_release(&d);
	return o->err;
}

bool
alt_ttl_is_tag(const struct sm_json_doc *d, int key)
{
	return sm_json_str_eq(d, key, TTL_TAG);
}

/* ---- UpdateTimeToLive, DescribeTimeToLive ---- */

void
alt_update_ttl(struct alt_op *op)
{
	int spec = sm_json_get(&op->doc, op->root, "TimeToLiveSpecification");
	int name_tok, en_tok;
	char cur[TTL_MAX_ATTR + 1], name[TTL_MAX_ATTR + 1];
	struct sm_bytes s;
	bool enabled, on;
	struct sm_json_out *tags;
	struct sm_json_doc *unused;

	if (alt_table_from_request(op) < 0)
		return;
	if (sm_json_type(&op->doc, spec) != SM_JSON_OBJECT) {
		alt_fail(op, "ValidationException",
			 "UpdateTimeToLive missing mandatory TimeToLiveSpecification");
		return;
	}
	en_tok = sm_json_get(&op->doc, spec, "Enabled");
	name_tok = sm_json_get(&op->doc, spec, "AttributeName");
	if (name_tok < 0) {
		alt_fail(op, "ValidationException", "UpdateTimeToLive requires AttributeName");
		return;
	}
	if (sm_json_type(&op->doc, name_tok) != SM_JSON_STRING) {
		op->ser_err = true;
		alt_fail(op, "ValidationException", "UpdateTimeToLive requires string AttributeName");
		return;
	}
	if (en_tok < 0) {
		alt_fail(op, "ValidationException", "UpdateTimeToLive requires boolean Enabled");
		return;
	}
	if (sm_json_bool(&op->doc, en_tok, &enabled) < 0) {
		op->ser_err = true;
		alt_fail(op, "ValidationException", "UpdateTimeToLive requires boolean Enabled");
		return;
	}
	if (alt_payload_str(op, &op->doc, name_tok, &s) < 0 || s.len == 0 ||
	    s.len > TTL_MAX_ATTR) {
		alt_fail(op, "ValidationException",
			 "1 validation error detected: Value at 'timeToLiveSpecification."
			 "attributeName' failed to satisfy constraint: Member must have length "
			 "less than or equal to 255 and greater than or equal to 1");
		return;
	}
	memcpy(name, s.p, s.len);
	name[s.len] = '\0';
	on = alt_ttl_attr(alt_table_tags(&op->tab), cur, sizeof(cur));
	if (enabled && on) {
		alt_fail(op, "ValidationException", "TimeToLive is already enabled");
		return;
	}
	if (!enabled && !on) {
		alt_fail(op, "ValidationException", "TimeToLive is already disabled.");
		return;
	}
	if (!enabled && strcmp(cur, name) != 0) {
		alt_fail(op, "ValidationException",
			 "Requested to disable TTL on attribute %s, but a different attribute %s "
			 "is enabled.",
			 name, cur);
		return;
	}
	if (alt_tmp_doc(op, &tags, &unused) < 0) {
		alt_fail(op, "InternalServerError", "out of memory");
		return;
	}
	/* the change, as a delta every shard applies to its own tags */
	if (enabled) {
		sm_json_out_arr_begin(tags);
		sm_json_out_obj_begin(tags);
		sm_json_out_key(tags, "Key");
		sm_json_out_str(tags, TTL_TAG);
		sm_json_out_key(tags, "Value");
		sm_json_out_str(tags, name);
		sm_json_out_obj_end(tags);
		sm_json_out_arr_end(tags);
	} else {
		sm_json_out_raw(tags, "[\"" TTL_TAG "\"]", strlen("[\"" TTL_TAG "\"]"));
	}
	if (tags->err != 0) {
		alt_fail(op, "InternalServerError", "out of memory");
		return;
	}
	sm_json_out_obj_begin(&op->out);
	sm_json_out_key(&op->out, "TimeToLiveSpecification");
	sm_json_out_obj_begin(&op->out);
	sm_json_out_key(&op->out, "AttributeName");
	sm_json_out_str(&op->out, name);
	sm_json_out_key(&op->out, "Enabled");
	sm_json_out_bool(&op->out, enabled);
	sm_json_out_obj_end(&op->out);
	sm_json_out_obj_end(&op->out);
	/* every shard's overlay (and so its scanner) sees it before the answer */
	alt_table_set_tag(op, enabled ? tags->p : NULL, enabled ? NULL : tags->p);
}

void
alt_describe_ttl(struct alt_op *op)
{
	char cur[TTL_MAX_ATTR + 1];
	bool on;

	if (alt_table_from_request(op) < 0)
		return;
	on = alt_ttl_attr(alt_table_tags(&op->tab), cur, sizeof(cur));
	sm_json_out_obj_begin(&op->out);
	sm_json_out_key(&op->out, "TimeToLiveDescription");
	sm_json_out_obj_begin(&op->out);
	sm_json_out_key(&op->out, "TimeToLiveStatus");
	sm_json_out_str(&op->out, on ? "ENABLED" : "DISABLED");
	if (on) {
		sm_json_out_key(&op->out, "AttributeName");
		sm_json_out_str(&op->out, cur);
	}
	sm_json_out_obj_end(&op->out);
	sm_json_out_obj_end(&op->out);
	alt_finish(op);
}

/* ---- expiry ---- */

void
alt_local_scan_init(struct sm_select *s, const struct sm_table *t, const uint16_t *col,
		    int (*row)(void *ctx, const struct sm_row_view *r), void *ctx)
{
	memset(s, 0, sizeof(*s));
	s->table = t;
	s->range = true;
	s->token_start = INT64_MIN;
	s->token_end = INT64_MAX;
	s->cols = col;
	s->ncols = 1;
	s->sink.row = row;
	s->sink.ctx = ctx;
}

bool
alt_ttl_expired(const struct sm_json_doc *d, int v, int64_t now_s)
{
	char buf[SM_DDB_NUMBER_DECIMAL_MAX + 8];
	struct sm_bytes s;
	double t;
	char *end;

	if (sm_json_type(d, v) != SM_JSON_OBJECT)
		return false;
	v = sm_json_get(d, v, "N");
	/* only a number holds an expiration time; a string never expires */
	if (sm_json_type(d, v) != SM_JSON_STRING ||
	    sm_json_str(d, v, buf, sizeof(buf) - 1, &s) < 0 || s.len == 0 ||
	    s.len >= sizeof(buf))
		return false;
	memmove(buf, s.p, s.len);
	buf[s.len] = '\0';
	t = strtod(buf, &end);
	if (*end != '\0' || !isfinite(t))
		return false;
	return t <= (double)now_s && t > (double)(now_s - TTL_WINDOW_S);
}

/* One shard's scanner: the tables of this pass, the one being scanned, where. */
struct ttl_scan {
	struct sm_timer timer;
	bool running, stopping;
	bool inited; /* alt_ttl_shard_init() ran: a shard that failed to start never did */
	char **tables; /* names of this pass's tables with TTL */
	unsigned ntables, cur;
	struct sm_scan_pos pos;
	char attr[TTL_MAX_ATTR + 1];
	struct alt_op *op; /* the step's buffers and table */
	struct alt_bytes bodies; /* the step's DeleteItem requests, NUL-separated */
	size_t next_body;
	unsigned pending;
	uint64_t expired; /* items deleted, ever */
};

static __thread struct ttl_scan ttl;

static void
ttl_step(void *arg);

static void
ttl_free_tables(void)
{
	unsigned i;

	for (i = 0; i < ttl.ntables; i++)
		sm_free(ttl.tables[i]);
	sm_free(ttl.tables);
	ttl.tables = NULL;
	ttl.ntables = ttl.cur = 0;
}

static void
ttl_arm(uint64_t delay_ms)
{
	if (ttl.stopping)
		return;
	sm_timer_init(&ttl.timer, ttl_step, NULL);
	if (sm_timer_arm(&ttl.timer, delay_ms) < 0)
		SM_WARN("alternator: TTL scanner stopped: cannot arm its timer");
}

static uint64_t
ttl_period_ms(void)
{
	unsigned ms = alt_cfg->ttl_period_ms;

	return ms == 0 ? 1000 : ms;
}

/* The alternator tables with TTL, as this shard's catalog and overlay have them now. */
static int
ttl_collect_tables(void)
{
	const struct sm_catalog *cat = sm_store_catalog();
	size_t plen = strlen(ALT_KS_PREFIX);
	unsigned i, j, n = 0;
	char attr[TTL_MAX_ATTR + 1];

	ttl_free_tables();
	for (i = 0; i < cat->nks; i++) {
		const struct sm_keyspace *ks = cat->ks[i];

		if (strncmp(ks->name, ALT_KS_PREFIX, plen) != 0)
			continue;
		for (j = 0; j < ks->ntables; j++) {
			const struct sm_table *t = ks->tables[j];
			char **nt;

			/* the base table only: an index's view expires with its items */
			if (strcmp(t->name, ks->name + plen) != 0 ||
			    !alt_ttl_attr(alt_table_tags_of(t), attr, sizeof(attr)))
				continue;
			nt = sm_realloc(ttl.tables, (n + 1) * sizeof(*nt));
			if (nt == NULL)
				return -ENOMEM;
			ttl.tables = nt;
			if ((nt[n] = sm_strdup(t->name)) == NULL)
				return -ENOMEM;
			ttl.ntables = ++n;
		}
	}
	return 0;
}

/* The scan's sink: an expired row becomes the body of a DeleteItem. */
static int
ttl_row(void *ctx, const struct sm_row_view *r)
{
	struct alt_op *op = ctx;
	const struct alt_table *t = &op->tab;
	struct sm_json_out *o = &op->scratch;
	int64_t now = (int64_t)time(NULL);
	int root, v;

	sm_json_out_reset(&op->item);
	alt_write_row_item(op, &op->item, r->pk, r->ck, &r->cells[0]);
	if (op->item.err != 0)
		return op->item.err;
	if (sm_json_parse(&op->idoc, op->item.p, op->item.len, 0) < 0)
		return 0;
	root = sm_json_root(&op->idoc);
	v = sm_json_get(&op->idoc, root, ttl.attr);
	if (v < 0 || !alt_ttl_expired(&op->idoc, v, now))
		return 0;
	sm_json_out_reset(o);
	sm_json_out_obj_begin(o);
	sm_json_out_key(o, "TableName");
	sm_json_out_str(o, t->name);
	sm_json_out_key(o, "Key");
	sm_json_out_obj_begin(o);
	sm_json_out_key(o, t->hash->name);
	alt_write_key_value(o, t->hash_type, r->pk->part[0]);
	if (t->range != NULL && r->ck != NULL && r->ck->n > 0) {
		sm_json_out_key(o, t->range->name);
		alt_write_key_value(o, t->range_type, r->ck->part[0]);
	}
	sm_json_out_obj_end(o);
	sm_json_out_obj_end(o);
	/* bodies are copied out by the time they are sent: growing may move them */
	if (o->err != 0 || alt_bytes_reserve(&ttl.bodies, o->len + 1) < 0)
		return -ENOMEM;
	alt_bytes_put(&ttl.bodies, o->p, o->len);
	alt_bytes_put(&ttl.bodies, "", 1);
	return 0;
}

static void
ttl_delete_next(void);

static void
ttl_deleted(void *ctx, int status, const char *json, size_t len)
{
	(void)ctx;
	if (status == 200) {
		ttl.expired++;
		ALT_STAT_INC(expiration_items_deleted);
	}
	else
		SM_WARN("alternator: TTL: deleting an expired item failed: %.*s",
			(int)SM_MIN(len, 200u), json);
	if (--ttl.pending > 0)
		return;
	ttl_delete_next();
}

/* The step's deletes, one after the other; then the next step. */
static void
ttl_delete_next(void)
{
	int ret;

	while (ttl.next_body < ttl.bodies.len && !ttl.stopping) {
		const char *b = (const char *)ttl.bodies.p + ttl.next_body;
		size_t n = strlen(b);

		ttl.next_body += n + 1;
		ttl.pending = 2; /* the request, and this loop */
		/* the DeleteItem reads this as it starts (synchronously): its record says so */
		alt_stream_service = true;
		ret = sm_alternator_execute("DeleteItem", b, n, ttl_deleted, NULL);
		alt_stream_service = false;
		if (ret < 0) {
			ttl.pending = 0;
			break;
		}
		if (--ttl.pending > 0)
			return; /* answered later: ttl_deleted() goes on */
	}
	ttl.pending = 0;
	ttl_arm(0);
}

static void
ttl_step(void *arg)
{
	struct sm_select s;
	uint32_t budget = TTL_STEP_ROWS;
	struct alt_op *op;
	uint16_t col;
	int ret;

	(void)arg;
	if (ttl.stopping)
		return;
	if (ttl.cur >= ttl.ntables) {
		/* a pass ended (or none began): the next one after a period */
		if (ttl.running) {
			ttl.running = false;
			ALT_STAT_INC(expiration_scan_passes);
			ttl_free_tables();
			ttl_arm(ttl_period_ms());
			return;
		}
		if (ttl_collect_tables() < 0) {
			SM_WARN("alternator: TTL scanner: out of memory listing tables");
			ttl_free_tables();
		}
		if (ttl.ntables == 0) {
			ttl_arm(ttl_period_ms());
			return;
		}
		ttl.running = true;
		memset(&ttl.pos, 0, sizeof(ttl.pos));
	}
	op = alt_op_new();
	if (op == NULL) {
		ttl_arm(ttl_period_ms());
		return;
	}
	ret = alt_table_lookup(op, ttl.tables[ttl.cur], strlen(ttl.tables[ttl.cur]), &op->tab);
	op->have_tab = ret == 0;
	if (ret < 0 || !alt_ttl_attr(alt_table_tags(&op->tab), ttl.attr, sizeof(ttl.attr))) {
		/* dropped, or TTL turned off meanwhile */
		alt_op_done(op);
		ttl.cur++;
		memset(&ttl.pos, 0, sizeof(ttl.pos));
		ttl_arm(0);
		return;
	}
	op->have_tab = true;
	col = op->tab.attrs_col;
	alt_local_scan_init(&s, op->tab.t, &col, ttl_row, op);
	ttl.bodies.len = 0;
	ttl.next_body = 0;
	ret = sm_store_scan_local(&s, &ttl.pos, &budget);
	alt_op_done(op);
	if (ret < 0 && ret != -ENOENT)
		SM_WARN("alternator: TTL scan of %s: %s", ttl.tables[ttl.cur], strerror(-ret));
	if (ret <= 0) {
		ALT_STAT_INC(expiration_scan_table); /* one table's scan done */
		ttl.cur++;
		memset(&ttl.pos, 0, sizeof(ttl.pos));
	}
	ttl_delete_next();
}

void
alt_ttl_shard_init(void)
{
	memset(&ttl, 0, sizeof(ttl));
	sm_timer_init(&ttl.timer, ttl_step, NULL);
	ttl.inited = true;
	if (sm_on_shard())
		ttl_arm(ttl_period_ms());
}

void
alt_ttl_shard_fini(void)
{
	if (!ttl.inited)
		return;
	ttl.inited = false;
	ttl.stopping = true;
	if (sm_on_shard() && sm_timer_armed(&ttl.timer))
		sm_timer_cancel(&ttl.timer);
	ttl_free_tables();
	sm_free(ttl.bodies.p);
	ttl.bodies.p = NULL;
	ttl.bodies.len = ttl.bodies.cap = 0;
}
