/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The store's side of the commitlog: what a record holds and how replay
 * puts it back.
 *
 * Three record types, fields big-endian, byte strings as a be32 length
 * and the bytes:
 *   1 mutation  table id (16), ts be64, now be32, ttl be32, flags be32,
 *               pk, ck, range start key, u8 inclusive, range end key,
 *               u8 inclusive (a key: u8 parts, then each part's bytes),
 *               be32 ops, each: col be16, kind u8, null u8, key, value.
 *               "now" is the apply's clock, so a TTL expires when it would have.
 *   2 schema    a CREATE/DROP KEYSPACE or TABLE as its sm_ddl_req
 *               (shard 0's log only): kind u8, if_exists u8, keyspace
 *               (name, replication options, durable_writes, wide_names),
 *               be32 tables, each: id (16), ks, name, columns (name, type,
 *               kind, desc), options, default_ttl, wide_names; then
 *               ks_name and table_name, then the keyspace's tablets u8 and
 *               initial tablets be32 (absent in older records: vnodes).
 *               Created tables keep their ids.
 *   3 truncate  table id (16): each shard logs the TRUNCATE it applied,
 *               in order with its own writes.
 * Replay rebuilds the schema first from shard 0's log (before the shards
 * start), then every shard replays its own log in parallel; a mutation of
 * a table id the schema no longer has (dropped) is skipped.
 */

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sm_core.h"
#include "sm_store.h"
#include "sm_table.h"
#include "store_log_priv.h"

enum {
	REC_MUTATION = 1,
	REC_SCHEMA = 2,
	REC_TRUNCATE = 3,
};

__thread uint64_t store_log_pending;
__thread bool store_log_busy;

/* ---- encoding: one pass counts (p NULL), the second writes ---- */

struct enc {
	uint8_t *p;
	size_t n;
};

static void
put(struct enc *e, const void *v, size_t len)
{
	if (e->p != NULL && len > 0)
		memcpy(e->p + e->n, v, len);
	e->n += len;
}

static void
put_u8(struct enc *e, uint8_t v)
{
	put(e, &v, 1);
}

static void
put_u16(struct enc *e, uint16_t v)
{
	uint8_t b[2];

	sm_put_be16(b, v);
	put(e, b, 2);
}

static void
put_u32(struct enc *e, uint32_t v)
{
	uint8_t b[4];

	sm_put_be32(b, v);
	put(e, b, 4);
}

static void
put_u64(struct enc *e, uint64_t v)
{
	uint8_t b[8];

	sm_put_be64(b, v);
	put(e, b, 8);
}

static void
put_bytes(struct enc *e, struct sm_bytes b)
{
	put_u32(e, b.len);
	put(e, b.p, b.len);
}

static void
put_str(struct enc *e, const char *s)
{
	struct sm_bytes b = { (const uint8_t *)(s ? s : ""), s ? (uint32_t)strlen(s) : 0 };

	put_bytes(e, b);
}

static void
put_key(struct enc *e, const struct sm_key *k)
{
	unsigned i;

	put_u8(e, (uint8_t)k->n);
	for (i = 0; i < k->n; i++)
		put_bytes(e, k->part[i]);
}

static void
put_options(struct enc *e, const struct sm_option *o, unsigned n)
{
	unsigned i;

	put_u32(e, n);
	for (i = 0; i < n; i++) {
		put_str(e, o[i].key);
		put_str(e, o[i].value);
	}
}

static void
enc_mutation(struct enc *e, const struct sm_mutation *m, int64_t ts, int32_t now)
{
	unsigned i;

	put(e, m->table->id.b, 16);
	put_u64(e, (uint64_t)ts);
	put_u32(e, (uint32_t)now);
	put_u32(e, (uint32_t)m->ttl);
	put_u32(e, m->flags);
	put_key(e, &m->pk);
	put_key(e, &m->ck);
	put_key(e, &m->range.start.prefix);
	put_u8(e, m->range.start.inclusive);
	put_key(e, &m->range.end.prefix);
	put_u8(e, m->range.end.inclusive);
	put_u32(e, m->nops);
	for (i = 0; i < m->nops; i++) {
		put_u16(e, m->ops[i].col);
		put_u8(e, m->ops[i].kind);
		put_u8(e, m->ops[i].null);
		put_bytes(e, m->ops[i].key);
		put_bytes(e, m->ops[i].value);
	}
}

static size_t
key_log_size(const struct sm_key *k)
{
	return 1 + 4 * (size_t)k->n + sm_key_size(k);
}

/* What enc_mutation() writes, without a pass of its own over the bytes. */
static size_t
mutation_log_size(const struct sm_mutation *m)
{
	size_t n = 16 + 8 + 4 + 4 + 4 + key_log_size(&m->pk) + key_log_size(&m->ck) +
		   key_log_size(&m->range.start.prefix) + 1 + key_log_size(&m->range.end.prefix) +
		   1 + 4;
	unsigned i;

	for (i = 0; i < m->nops; i++)
		n += 2 + 1 + 1 + 4 + (size_t)m->ops[i].key.len + 4 + m->ops[i].value.len;
	return n;
}

int
store_log_apply(struct sm_ptable *pt, const struct sm_mutation *m, int64_t ts, int32_t now,
		char *err, size_t errlen)
{
	struct enc e = { NULL, mutation_log_size(m) };
	uint64_t pos;
	int ret;

	if (e.n > UINT32_MAX) {
		ret = -EFBIG;
		goto refuse;
	}
	e.p = sm_clog_reserve((uint32_t)e.n, &ret);
	if (e.p == NULL)
		goto refuse;
	/* applied first, logged only if it applied; nothing else appends in between */
	ret = sm_ptable_apply(pt, m, ts, now, err, errlen);
	if (ret < 0)
		return ret;
	e.n = 0;
	enc_mutation(&e, m, ts, now);
	pos = sm_clog_commit(REC_MUTATION, e.p, (uint32_t)e.n);
	/* a size of its own must agree with the encoding, or the records overlap */
	assert(e.n == mutation_log_size(m));
	if (sm_clog_mode == SM_CLOG_BATCH)
		store_log_pending = pos;
	return 0;
refuse:
	sm_clog_error(ret, (uint32_t)SM_MIN(e.n, UINT32_MAX), err, errlen);
	store_log_busy = ret == -EBUSY;
	return ret == -EFBIG ? -EINVAL : ret;
}

static void
enc_table(struct enc *e, const struct sm_table_def *d, const struct sm_catalog *next)
{
	const struct sm_table *t = sm_catalog_table(next, d->ks, d->name);
	static const struct sm_uuid none;
	unsigned i;

	put(e, (t != NULL ? &t->id : &none)->b, 16);
	put_str(e, d->ks);
	put_str(e, d->name);
	put_u32(e, d->ncols);
	for (i = 0; i < d->ncols; i++) {
		put_str(e, d->cols[i].name);
		put_str(e, d->cols[i].type);
		put_u8(e, (uint8_t)d->cols[i].kind);
		put_u8(e, d->cols[i].desc);
	}
	put_options(e, d->options, d->noptions);
	put_u32(e, (uint32_t)d->default_ttl);
	put_u8(e, d->wide_names);
}

static void
enc_ddl(struct enc *e, const struct sm_ddl_req *r)
{
	bool tables = r->kind == SM_DDL_CREATE_TABLE || r->kind == SM_DDL_CREATE_KEYSPACE_TABLE;
	unsigned i;

	put_u8(e, (uint8_t)r->kind);
	put_u8(e, r->if_exists);
	put_str(e, r->ks.name);
	put_options(e, r->ks.replication, r->ks.nreplication);
	put_u8(e, r->ks.durable_writes);
	put_u8(e, r->ks.wide_names);
	put_u32(e, !tables ? 0 : 1 + (r->kind == SM_DDL_CREATE_KEYSPACE_TABLE ? r->nmore_tables : 0));
	if (tables) {
		enc_table(e, &r->table, r->next);
		for (i = 0; r->kind == SM_DDL_CREATE_KEYSPACE_TABLE && i < r->nmore_tables; i++)
			enc_table(e, &r->more_tables[i], r->next);
	}
	put_str(e, r->ks_name);
	put_str(e, r->table_name);
	/* appended, so a record of an older build (no tablets) still decodes */
	put_u8(e, r->ks.tablets);
	put_u32(e, r->ks.initial_tablets);
}

int
store_log_ddl(struct sm_ddl_req *r)
{
	static bool warned;
	struct enc e = { NULL, 0 };
	int ret;

	if (r->kind == SM_DDL_TRUNCATE)
		return 0; /* every shard logs its own (store_log_truncate) */
	if (r->kind == SM_DDL_CATALOG) {
		if (!warned)
			SM_WARN("commitlog: ALTER TABLE/KEYSPACE, user types and index changes are "
				"not in the commitlog yet: a restart comes back without them (and "
				"skips writes that do not fit the schema it has)");
		warned = true;
		return 0;
	}
	enc_ddl(&e, r);
	e.p = sm_clog_reserve((uint32_t)e.n, &ret);
	if (e.p == NULL) {
		sm_clog_error(ret, (uint32_t)e.n, r->err, sizeof(r->err));
		return ret == -EFBIG ? -EINVAL : -EIO;
	}
	e.n = 0;
	enc_ddl(&e, r);
	r->clog_pos = sm_clog_commit(REC_SCHEMA, e.p, (uint32_t)e.n);
	return 0;
}

void
store_log_truncate(const struct sm_table *t)
{
	uint8_t *p;
	int ret;

	p = sm_clog_reserve(16, &ret);
	if (p == NULL) {
		SM_ERR("commitlog: shard %u could not log TRUNCATE of %s.%s: a restart brings its "
		       "rows back",
		       sm_shard_id(), t->ks, t->name);
		return;
	}
	memcpy(p, t->id.b, 16);
	sm_clog_commit(REC_TRUNCATE, p, 16);
}

/* ---- decoding: every length checked against what is left ---- */

struct dec {
	const uint8_t *p;
	size_t left;
	bool bad;
	/* strings are copied here, NUL-terminated (schema records only) */
	char *strs;
	size_t strs_used, strs_cap;
};

static inline const uint8_t *
take(struct dec *d, size_t n)
{
	const uint8_t *p = d->p;

	if (d->bad || n > d->left) {
		d->bad = true;
		return NULL;
	}
	d->p += n;
	d->left -= n;
	return p;
}

static inline uint8_t
get_u8(struct dec *d)
{
	const uint8_t *p = take(d, 1);

	return p ? p[0] : 0;
}

static inline uint16_t
get_u16(struct dec *d)
{
	const uint8_t *p = take(d, 2);

	return p ? sm_get_be16(p) : 0;
}

static inline uint32_t
get_u32(struct dec *d)
{
	const uint8_t *p = take(d, 4);

	return p ? sm_get_be32(p) : 0;
}

static inline uint64_t
get_u64(struct dec *d)
{
	const uint8_t *p = take(d, 8);

	return p ? sm_get_be64(p) : 0;
}

static inline struct sm_bytes
get_bytes(struct dec *d)
{
	struct sm_bytes b = { NULL, 0 };
	uint32_t n = get_u32(d);
	const uint8_t *p = take(d, n);

	if (p != NULL) {
		b.p = p;
		b.len = n;
	}
	return b;
}

static inline void
get_key(struct dec *d, struct sm_key *k)
{
	unsigned i;

	k->n = get_u8(d);
	if (k->n > SM_MAX_KEY_PARTS) {
		d->bad = true;
		k->n = 0;
	}
	for (i = 0; i < k->n; i++)
		k->part[i] = get_bytes(d);
}

static char *
get_str(struct dec *d)
{
	static __thread char empty[1];
	struct sm_bytes b = get_bytes(d);
	char *s;

	if (d->bad || d->strs_used + b.len + 1 > d->strs_cap) {
		d->bad = true;
		empty[0] = '\0';
		return empty;
	}
	s = d->strs + d->strs_used;
	if (b.len > 0)
		memcpy(s, b.p, b.len);
	s[b.len] = '\0';
	d->strs_used += b.len + 1;
	return s;
}

/* Arrays of a record are at most as many as its bytes: one allocation bounds them. */
static void *
get_array(struct dec *d, uint32_t n, size_t size, void **owned)
{
	void *v;

	if (d->bad || n > d->left) {
		d->bad = true;
		return NULL;
	}
	v = sm_calloc(n ? n : 1, size);
	if (v == NULL)
		d->bad = true;
	*owned = v;
	return v;
}

static struct sm_option *
get_options(struct dec *d, unsigned *n, void **owned)
{
	struct sm_option *o;
	unsigned i;

	*n = get_u32(d);
	o = get_array(d, *n, sizeof(*o), owned);
	for (i = 0; o != NULL && !d->bad && i < *n; i++) {
		o[i].key = get_str(d);
		o[i].value = get_str(d);
	}
	return o;
}

/* ---- rebuilding the schema before the shards start ---- */

#define DDL_MAX_TABLES 64 /* an Alternator table and its indexes, and more */

struct schema_replay {
	struct sm_catalog *cat;
	unsigned applied, failed;
};

struct ddl_decoded {
	struct sm_ddl_req r;
	struct sm_table_def tables[DDL_MAX_TABLES];
	struct sm_uuid ids[DDL_MAX_TABLES];
	void *owned[2 + 2 * DDL_MAX_TABLES];
	unsigned nowned;
};

static void
get_table(struct dec *d, struct ddl_decoded *x, unsigned i)
{
	struct sm_table_def *t = &x->tables[i];
	struct sm_column_def *cols;
	const uint8_t *id = take(d, 16);
	unsigned c;

	if (id != NULL)
		memcpy(x->ids[i].b, id, 16);
	t->id = &x->ids[i];
	t->ks = get_str(d);
	t->name = get_str(d);
	t->ncols = get_u32(d);
	cols = get_array(d, t->ncols, sizeof(*cols), &x->owned[x->nowned++]);
	for (c = 0; cols != NULL && !d->bad && c < t->ncols; c++) {
		cols[c].name = get_str(d);
		cols[c].type = get_str(d);
		cols[c].kind = (enum sm_col_kind)get_u8(d);
		cols[c].desc = get_u8(d);
		if (cols[c].kind > SM_COL_REGULAR)
			d->bad = true;
	}
	t->cols = cols;
	t->options = get_options(d, &t->noptions, &x->owned[x->nowned++]);
	t->default_ttl = (int32_t)get_u32(d);
	t->wide_names = get_u8(d);
}

static int
dec_ddl(struct dec *d, struct ddl_decoded *x)
{
	struct sm_ddl_req *r = &x->r;
	unsigned n, i;

	r->kind = (enum sm_ddl_kind)get_u8(d);
	r->if_exists = get_u8(d);
	r->ks.name = get_str(d);
	r->ks.replication = get_options(d, &r->ks.nreplication, &x->owned[x->nowned++]);
	r->ks.durable_writes = get_u8(d);
	r->ks.wide_names = get_u8(d);
	n = get_u32(d);
	if (n > DDL_MAX_TABLES)
		d->bad = true;
	for (i = 0; !d->bad && i < n; i++)
		get_table(d, x, i);
	if (n > 0)
		r->table = x->tables[0];
	r->more_tables = n > 1 ? &x->tables[1] : NULL;
	r->nmore_tables = n > 1 ? n - 1 : 0;
	r->ks_name = get_str(d);
	r->table_name = get_str(d);
	if (!d->bad && d->left >= 5) {
		r->ks.tablets = get_u8(d);
		r->ks.initial_tablets = get_u32(d);
	}
	if (r->kind > SM_DDL_CREATE_KEYSPACE_TABLE || r->kind == SM_DDL_CATALOG)
		d->bad = true;
	return d->bad ? -EINVAL : 0;
}

static int
schema_record(void *ctx, uint8_t type, const uint8_t *p, uint32_t len)
{
	struct schema_replay *sr = ctx;
	struct dec d = { .p = p, .left = len };
	struct ddl_decoded *x;
	unsigned i;
	int ret;

	if (type != REC_SCHEMA)
		return 0;
	x = sm_calloc(1, sizeof(*x));
	d.strs = sm_malloc((size_t)len + len / 2 + 1);
	d.strs_cap = (size_t)len + len / 2 + 1;
	if (x == NULL || d.strs == NULL) {
		sm_free(x);
		sm_free(d.strs);
		return -ENOMEM;
	}
	ret = dec_ddl(&d, x);
	if (ret < 0) {
		SM_WARN("commitlog: a schema record of %u bytes does not decode: skipped", len);
		sr->failed++;
		goto out;
	}
	ret = store_ddl_build(sr->cat, &x->r);
	if (ret == 0 && x->r.next != NULL) {
		sm_catalog_put(sr->cat);
		sr->cat = x->r.next;
		sr->applied++;
	} else if (ret < 0) {
		SM_WARN("commitlog: replaying a schema change failed: %s: skipped", x->r.err);
		sr->failed++;
	}
	ret = 0;
out:
	for (i = 0; i < x->nowned; i++)
		sm_free(x->owned[i]);
	sm_free(d.strs);
	sm_free(x);
	return ret;
}

static uint64_t replay_start_ns;

int
sm_store_log_load_schema(void)
{
	struct schema_replay sr = { 0 };
	struct sm_clog_replay_stats st;
	int ret;

	if (sm_clog_mode == SM_CLOG_OFF)
		return 0;
	replay_start_ns = sm_now_ns();
	sr.cat = sm_catalog_new();
	if (sr.cat == NULL)
		return -ENOMEM;
	ret = sm_clog_replay(0, schema_record, &sr, &st);
	if (ret < 0) {
		sm_catalog_put(sr.cat);
		return ret;
	}
	if (sr.applied + sr.failed > 0)
		SM_INFO("commitlog: schema rebuilt from %u changes (%u skipped)", sr.applied,
			sr.failed);
	store_set_initial_catalog(sr.cat);
	return 0;
}

/* ---- replaying a shard's writes ---- */

struct data_replay {
	const struct sm_table *last; /* the table the last record named */
	uint64_t mutations, skipped, truncates;
	struct sm_cell_op *ops;
	uint32_t ops_cap;
	bool warned;
};

static const struct sm_table *
table_by_id(struct data_replay *dr, const uint8_t *id)
{
	const struct sm_catalog *c = sm_store_catalog();
	unsigned k, i;

	if (dr->last != NULL && memcmp(dr->last->id.b, id, 16) == 0)
		return dr->last;
	for (k = 0; k < c->nks; k++)
		for (i = 0; i < c->ks[k]->ntables; i++)
			if (memcmp(c->ks[k]->tables[i]->id.b, id, 16) == 0)
				return dr->last = c->ks[k]->tables[i];
	return NULL;
}

static void
skip(struct data_replay *dr, const char *why)
{
	if (!dr->warned)
		SM_WARN("commitlog: shard %u skips a mutation: %s (only the first is said)",
			sm_shard_id(), why);
	dr->warned = true;
	dr->skipped++;
}

static int
replay_mutation(struct data_replay *dr, struct dec *d)
{
	const uint8_t *id = take(d, 16);
	const struct sm_table *t;
	struct sm_mutation m;
	struct sm_ptable *pt;
	char err[160];
	int64_t ts;
	int32_t now;
	uint32_t i;

	if (id == NULL)
		return -EINVAL;
	t = table_by_id(dr, id);
	if (t == NULL) {
		dr->skipped++; /* its table was dropped later */
		return 0;
	}
	memset(&m, 0, sizeof(m));
	m.table = t;
	ts = (int64_t)get_u64(d);
	now = (int32_t)get_u32(d);
	m.ttl = (int32_t)get_u32(d);
	m.flags = get_u32(d);
	get_key(d, &m.pk);
	get_key(d, &m.ck);
	get_key(d, &m.range.start.prefix);
	m.range.start.inclusive = get_u8(d);
	get_key(d, &m.range.end.prefix);
	m.range.end.inclusive = get_u8(d);
	m.nops = get_u32(d);
	if (d->bad || m.nops > d->left)
		return -EINVAL;
	if (m.nops > dr->ops_cap) {
		struct sm_cell_op *v = sm_realloc(dr->ops, m.nops * sizeof(*v));

		if (v == NULL)
			return -ENOMEM;
		dr->ops = v;
		dr->ops_cap = m.nops;
	}
	for (i = 0; i < m.nops; i++) {
		struct sm_cell_op *o = &dr->ops[i];

		o->col = get_u16(d);
		o->kind = get_u8(d);
		o->null = get_u8(d);
		o->key = get_bytes(d);
		o->value = get_bytes(d);
		if (o->col >= t->ncols || t->cols[o->col].kind < SM_COL_STATIC ||
		    o->kind > SM_CELL_DELETE_ELEM) {
			skip(dr, "a column the schema does not have (an ALTER not in the log?)");
			return 0;
		}
	}
	m.ops = dr->ops;
	if (d->bad)
		return -EINVAL;
	if (m.pk.n != t->npk || (m.ck.n != 0 && m.ck.n != t->nck)) {
		skip(dr, "a key that does not fit its table");
		return 0;
	}
	pt = store_ptable_local(t);
	if (pt == NULL || sm_ptable_apply(pt, &m, ts, now, err, sizeof(err)) < 0) {
		skip(dr, pt == NULL ? "its table has no storage" : err);
		return 0;
	}
	dr->mutations++;
	return 0;
}

static int
data_record(void *ctx, uint8_t type, const uint8_t *p, uint32_t len)
{
	struct data_replay *dr = ctx;
	struct dec d = { .p = p, .left = len };
	const struct sm_table *t;
	struct sm_ptable *pt;

	switch (type) {
	case REC_MUTATION:
		if (replay_mutation(dr, &d) == -ENOMEM)
			return -ENOMEM;
		if (d.bad)
			skip(dr, "a record that does not decode");
		return 0;
	case REC_TRUNCATE:
		if (len != 16)
			return 0;
		t = table_by_id(dr, p);
		pt = t != NULL ? store_ptable_local(t) : NULL;
		if (pt != NULL) {
			sm_ptable_truncate(pt);
			dr->truncates++;
		}
		return 0;
	default:
		return 0; /* schema: done before the shards started */
	}
}

/* Totals over the shards; the last to finish says them. */
static struct {
	unsigned done;
	unsigned segments;
	uint64_t mutations, bytes, skipped;
} replay_total;

static void
replay_report(void)
{
	double s = (double)(sm_now_ns() - replay_start_ns) / 1e9;
	uint64_t bytes = __atomic_load_n(&replay_total.bytes, __ATOMIC_RELAXED);

	SM_INFO("commitlog: replay done on %u shards in parallel: %u segments, %" PRIu64
		" mutations (%" PRIu64 " skipped), %" PRIu64 " bytes in %.3f s (%.0f MB/s)",
		sm_shard_count(), __atomic_load_n(&replay_total.segments, __ATOMIC_RELAXED),
		__atomic_load_n(&replay_total.mutations, __ATOMIC_RELAXED),
		__atomic_load_n(&replay_total.skipped, __ATOMIC_RELAXED), bytes, s,
		s > 0 ? (double)bytes / 1e6 / s : 0.0);
	memset(&replay_total, 0, sizeof(replay_total));
}

int
sm_store_log_replay(void)
{
	struct data_replay dr = { 0 };
	struct sm_clog_replay_stats st;
	uint64_t t0 = sm_now_ns(), ns;
	int ret;

	if (sm_clog_mode == SM_CLOG_OFF)
		return 0;
	ret = sm_clog_replay(sm_shard_id(), data_record, &dr, &st);
	sm_free(dr.ops);
	if (ret < 0) {
		SM_ERR("commitlog: shard %u replay failed: %s", sm_shard_id(), strerror(-ret));
		return ret;
	}
	ns = sm_now_ns() - t0;
	if (st.segments > 0)
		SM_INFO("commitlog: shard %u replayed %u segments, %" PRIu64 " mutations (%" PRIu64
			" skipped, %" PRIu64 " truncates), %" PRIu64 " bytes in %.3f s",
			sm_shard_id(), st.segments, dr.mutations, dr.skipped, dr.truncates, st.bytes,
			(double)ns / 1e9);
	__atomic_fetch_add(&replay_total.segments, st.segments, __ATOMIC_RELAXED);
	__atomic_fetch_add(&replay_total.mutations, dr.mutations, __ATOMIC_RELAXED);
	__atomic_fetch_add(&replay_total.skipped, dr.skipped, __ATOMIC_RELAXED);
	__atomic_fetch_add(&replay_total.bytes, st.bytes, __ATOMIC_RELAXED);
	if (__atomic_add_fetch(&replay_total.done, 1, __ATOMIC_ACQ_REL) == sm_shard_count())
		replay_report();
	return 0;
}
