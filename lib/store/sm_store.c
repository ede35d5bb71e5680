/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The store's request layer: routes each request to the shard that owns its
 * partition, runs range scans across shards in token order, applies DDL on
 * shard 0 and installs the new catalog on every shard, and runs
 * compare-and-set through Paxos on the owner.
 */

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#include "sm_changelog.h"
#include "sm_core.h"
#include "sm_paxos.h"
#include "sm_store.h"
#include "store_priv.h"
#include "sm_table.h"
#include "store_log_priv.h"

struct store_shard {
	struct sm_catalog *cat;
	struct sm_ptable **tables; /* by table slot */
	const struct sm_table **defs; /* by slot: the definition each storage follows */
	uint32_t ntables;
	struct sm_paxos_table *paxos;
	struct sm_uuid_gen gen;
	struct sm_paxos_local local;
	struct sm_paxos_replica replica;
	int64_t last_ts;
	bool logging; /* the commitlog is on: applied mutations are logged */
	/* this shard, or none when logging: the commitlog costs the hot path no test */
	unsigned inline_owner;
	/* Requests submitted here and not yet done: they point into the
	 * current catalog, so a replaced catalog waits in retired[] until
	 * they are all done. */
	uint64_t inflight;
	struct sm_catalog **retired;
	unsigned nretired;
	/* shard 0: the DDL in flight and those waiting */
	struct sm_ddl_req *ddl_busy;
	struct sm_ddl_req *ddl_head;
	struct sm_ddl_req **ddl_tail;
	unsigned index_tables; /* base tables with an index (sm_index.c) */
};

static __thread struct store_shard *ss;

/* ---- request lifetime ---- */

static void
release_retired(void)
{
	while (ss->nretired > 0)
		sm_catalog_put(ss->retired[--ss->nretired]);
}

static void
retire_catalog(struct sm_catalog *old)
{
	struct sm_catalog **v;

	if (ss->inflight == 0) {
		sm_catalog_put(old);
		return;
	}
	v = sm_realloc(ss->retired, (ss->nretired + 1) * sizeof(*v));
	if (v == NULL) {
		/* Keep the old catalog forever rather than free it under a
		 * request: a leak, never a use after free. */
		SM_WARN("out of memory retiring a schema version");
		return;
	}
	ss->retired = v;
	ss->retired[ss->nretired++] = old;
}

/* Every request ends here, on the shard that submitted it. */
static void
req_finish(struct sm_store_req *r)
{
	if (--ss->inflight == 0 && ss->nretired > 0)
		release_retired();
	r->done(r);
}

/* ---- clocks and keys ---- */

int64_t
sm_store_now_us(void)
{
	struct timespec ts;
	int64_t now;

	clock_gettime(CLOCK_REALTIME, &ts);
	now = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
	/* Server timestamps strictly increase on a shard, so two writes in
	 * one microsecond do not tie. */
	if (ss != NULL) {
		if (now <= ss->last_ts)
			now = ss->last_ts + 1;
		ss->last_ts = now;
	}
	return now;
}

static int32_t
now_sec(void)
{
	return (int32_t)time(NULL);
}

unsigned
sm_key_shard(const struct sm_key *pk)
{
	return sm_shard_of_token(sm_key_token(pk), sm_shard_count() ? sm_shard_count() : 1,
				 SM_SHARDING_IGNORE_MSB);
}

unsigned
sm_table_key_shard(const struct sm_table *t, const struct sm_key *pk)
{
	return sm_table_shard_of_token(t, sm_key_token(pk), sm_shard_count() ? sm_shard_count() : 1);
}

const struct sm_catalog *
sm_store_catalog(void)
{
	return ss->cat;
}

/* Column ids are the definition's: an ALTER came between the request and its table. */
static __attribute__((noinline, cold)) struct sm_ptable *
schema_changed(const struct sm_table *t, char *err, size_t errlen)
{
	snprintf(err, errlen, "the schema of %s.%s changed while the request ran: retry it", t->ks,
		 t->name);
	return NULL;
}

static struct sm_ptable *
ptable_of(const struct sm_table *t, char *err, size_t errlen)
{
	struct sm_ptable *pt = t->slot < ss->ntables ? ss->tables[t->slot] : NULL;

	if (pt == NULL) {
		snprintf(err, errlen, "unconfigured table %s", t->name);
		return NULL;
	}
	if (SM_UNLIKELY(ss->defs[t->slot] != t))
		return schema_changed(t, err, errlen);
	return pt;
}

struct sm_ptable *
store_ptable_local(const struct sm_table *t)
{
	char err[160];

	return ptable_of(t, err, sizeof(err));
}

/*
 * Every mutation the store applies goes through here: the commitlog's one
 * hook. @logged is a constant where the caller is the inlined hot path
 * (its copy without the log has no test at all), ss->logging elsewhere.
 */
static inline __attribute__((always_inline)) int
apply_mutation(struct sm_ptable *pt, const struct sm_mutation *m, int64_t ts, int32_t now,
	       char *err, size_t errlen, bool logged)
{
	if (!logged)
		return sm_ptable_apply(pt, m, ts, now, err, errlen);
	return store_log_apply(pt, m, ts, now, err, errlen);
}

/* ---- Paxos glue: the proposal value is a mutation ---- */

/* A mutation copied into one block, so an acceptor can keep it. */
struct mut_clone {
	struct sm_mutation m;
	struct sm_cell_op ops[];
};

/* Copy @b to *p and advance; an empty value may have a NULL pointer,
 * which memcpy() must not be given even for zero bytes. */
static const uint8_t *
copy_bytes(struct sm_bytes b, uint8_t **p)
{
	const uint8_t *at = *p;

	if (b.len > 0)
		memcpy(*p, b.p, b.len);
	*p += b.len;
	return at;
}

static void
copy_key(struct sm_key *dst, const struct sm_key *src, uint8_t **p)
{
	unsigned i;

	*dst = *src;
	for (i = 0; i < src->n; i++)
		dst->part[i].p = copy_bytes(src->part[i], p);
}


static void *
mut_clone(const void *v)
{
	const struct sm_mutation *m = v;
	size_t bytes = sm_key_size(&m->pk) + sm_key_size(&m->ck) +
		       sm_key_size(&m->range.start.prefix) + sm_key_size(&m->range.end.prefix);
	struct mut_clone *c;
	uint8_t *p;
	unsigned i;

	for (i = 0; i < m->nops; i++)
		bytes += m->ops[i].key.len + m->ops[i].value.len;
	c = sm_malloc(sizeof(*c) + m->nops * sizeof(struct sm_cell_op) + bytes);
	if (c == NULL)
		return NULL;
	p = (uint8_t *)&c->ops[m->nops];
	c->m = *m;
	copy_key(&c->m.pk, &m->pk, &p);
	copy_key(&c->m.ck, &m->ck, &p);
	copy_key(&c->m.range.start.prefix, &m->range.start.prefix, &p);
	copy_key(&c->m.range.end.prefix, &m->range.end.prefix, &p);
	for (i = 0; i < m->nops; i++) {
		c->ops[i] = m->ops[i];
		c->ops[i].key.p = copy_bytes(m->ops[i].key, &p);
		c->ops[i].value.p = copy_bytes(m->ops[i].value, &p);
	}
	c->m.ops = c->ops;
	sm_table_get(m->table);
	return c;
}

static void
mut_free(void *v)
{
	struct mut_clone *c = v;

	if (c == NULL)
		return;
	sm_table_put(c->m.table);
	sm_free(c);
}

static int
mut_apply(void *store_ctx, const void *v, int64_t ts)
{
	const struct sm_mutation *m = v;
	struct sm_ptable *pt;
	char err[160];

	(void)store_ctx;
	pt = ptable_of(m->table, err, sizeof(err));
	if (pt == NULL)
		return -ENOENT;
	return apply_mutation(pt, m, ts, now_sec(), err, sizeof(err), ss->logging);
}

static const struct sm_paxos_value_ops mut_ops = {
	.clone = mut_clone,
	.free = mut_free,
	.apply = mut_apply,
};

struct cas_ctx {
	struct sm_store_req *r;
	struct sm_ptable *pt;
	unsigned reads;
	bool custom_ok; /* SM_CAS_CUSTOM: decide()'s verdict, kept for a restarted round */
};

static int
cas_read_check(void *ctx, bool *ok)
{
	struct cas_ctx *cc = ctx;
	struct sm_cas c = cc->r->cas;
	bool exists;
	int ret;

	/* A single local replica runs the round without interleaving, so the
	 * read happens once; should a round restart, the pre-image already
	 * returned stays the one the caller sees. */
	if (cc->reads++ > 0) {
		c.sink.row = NULL;
		if (c.kind == SM_CAS_CUSTOM) {
			*ok = cc->custom_ok;
			return 0;
		}
	}
	ret = sm_ptable_cas_read(cc->pt, &c, now_sec(), &exists, ok);
	if (ret == 0 && c.kind == SM_CAS_CUSTOM) {
		*ok = c.decide != NULL && c.decide(c.decide_ctx, exists, &cc->r->cas);
		cc->custom_ok = *ok;
	}
	return ret;
}

static const void *
cas_new_value(void *ctx)
{
	struct cas_ctx *cc = ctx;

	return &cc->r->cas.mut;
}

static int
serial_read_check(void *ctx, bool *ok)
{
	struct cas_ctx *cc = ctx;

	*ok = false;
	if (cc->reads++ > 0)
		return 0;
	return sm_ptable_read(cc->pt, &cc->r->sel, now_sec());
}

static const struct sm_paxos_request_ops cas_req_ops = {
	.read_check = cas_read_check,
	.new_value = cas_new_value,
};

static const struct sm_paxos_request_ops serial_req_ops = {
	.read_check = serial_read_check,
	.new_value = cas_new_value,
};

/* sm_cas.local: the pre-image, the verdict and the write in one step here. */
static void
run_local_cas(struct sm_store_req *r, struct sm_ptable *pt)
{
	struct sm_cas *c = &r->cas;
	int32_t now = now_sec();
	bool exists, ok;
	int64_t ts;

	r->result = sm_ptable_cas_read(pt, c, now, &exists, &ok);
	if (r->result < 0) {
		snprintf(r->err, sizeof(r->err), "read failed: %s", strerror(-r->result));
		return;
	}
	if (c->kind == SM_CAS_CUSTOM)
		ok = c->decide != NULL && c->decide(c->decide_ctx, exists, c);
	if (!ok)
		return;
	ts = c->mut.ts == SM_TS_NOW ? sm_store_now_us() : c->mut.ts;
	r->result = apply_mutation(pt, &c->mut, ts, now, r->err, sizeof(r->err), ss->logging);
	c->applied = r->result == 0;
	c->ts = ts;
	if (c->applied && c->kind == SM_CAS_CUSTOM && c->on_applied != NULL)
		c->on_applied(c->decide_ctx, c);
}

static void
run_paxos(struct sm_store_req *r, struct sm_ptable *pt, const struct sm_key *pk, bool serial)
{
	const struct sm_table *t = serial ? r->sel.table : r->cas.mut.table;
	struct cas_ctx cc = { .r = r, .pt = pt };
	struct sm_paxos_round_conf conf;
	struct sm_paxos_round round;
	uint8_t kbuf[SM_MAX_KEY_BYTES];
	size_t klen;
	int ret;

	/* here, not in exec_local(): that one stays as small as the hot path had it */
	if (!serial && r->cas.local) {
		run_local_cas(r, pt);
		return;
	}
	klen = sm_key_encode(pk, kbuf, sizeof(kbuf));
	if (klen > sizeof(kbuf)) {
		r->result = -EINVAL;
		snprintf(r->err, sizeof(r->err), "Key length of %zu is longer than maximum of %u",
			 klen, SM_MAX_KEY_BYTES);
		return;
	}
	memset(&conf, 0, sizeof(conf));
	conf.key.table_id = t->id;
	conf.key.pk = kbuf;
	conf.key.pk_len = klen;
	conf.replicas = &ss->replica;
	conf.nreplicas = 1;
	conf.gen = &ss->gen;
	conf.ops = &mut_ops;
	conf.req = serial ? &serial_req_ops : &cas_req_ops;
	conf.req_ctx = &cc;
	conf.serial_read = serial;
	ret = sm_paxos_round_init(&round, &conf);
	if (ret == 0)
		ret = sm_paxos_round_run(&round);
	if (!serial) {
		r->cas.applied = ret == 0 && round.applied;
		r->cas.contention = round.contention;
	}
	if (!serial && r->cas.applied)
		r->cas.ts = sm_uuid_micros(&round.ballot); /* do_commit() applies at it */
	if (!serial && r->cas.applied && r->cas.kind == SM_CAS_CUSTOM && r->cas.on_applied != NULL)
		r->cas.on_applied(r->cas.decide_ctx, &r->cas);
	sm_paxos_round_fini(&round);
	if (ret < 0) {
		r->result = ret;
		snprintf(r->err, sizeof(r->err), "%s",
			 ret == -ETIMEDOUT ? "CAS operation timed out: contention on the partition"
					   : strerror(-ret));
	}
}

/* ---- single-partition requests ---- */

/* True when @m only deletes: it may go through a full memory budget. */
static bool
mutation_only_deletes(const struct sm_mutation *m)
{
	unsigned i;

	if (m->flags & SM_MUT_ROW_MARKER)
		return false;
	for (i = 0; i < m->nops; i++) {
		uint8_t k = m->ops[i].kind;

		if (!(k == SM_CELL_DELETE || k == SM_CELL_REMOVE || k == SM_CELL_DELETE_ELEM ||
		      (k == SM_CELL_SET && m->ops[i].null)))
			return false;
	}
	return true;
}

/*
 * The shard's memory budget is nearly spent (sm_mem_pressure()): refuse a
 * write that adds data, before anything of it is applied. Reads and
 * deletes go on.
 */
static __attribute__((noinline, cold)) bool
refuse_for_memory(struct sm_store_req *r, const struct sm_mutation *m)
{
	if (mutation_only_deletes(m))
		return false;
	SM_STAT_INC(writes_refused);
	r->result = -ENOMEM;
	snprintf(r->err, sizeof(r->err),
		 "shard %u memory budget (%zu MiB of %u shards) is full: writes are refused "
		 "until deletes free memory; raise --memory",
		 sm_shard_id(), sm_mem_budget() >> 20, sm_shard_count());
	return true;
}

/* A compare-and-set on the owning shard, for sm_index.c to run between its images. */
static void
run_cas(struct sm_store_req *r, struct sm_ptable *pt)
{
	run_paxos(r, pt, &r->cas.mut.pk, false);
}

/*
 * Inlined into sm_store_submit(): a local request is the common case.
 * @views: look for indexes to maintain; false where sm_store_submit() just
 * found none on this very shard (store_index_route()).
 */
static inline __attribute__((always_inline)) void
exec_in(struct sm_store_req *r, bool views, bool logged)
{
	const struct sm_table *t;
	struct sm_ptable *pt;
	int64_t ts;

	r->result = 0;
	switch (r->kind) {
	case SM_REQ_MUTATE:
		t = r->mut.table;
		pt = ptable_of(t, r->err, sizeof(r->err));
		if (pt == NULL)
			goto enoent;
		if (SM_UNLIKELY(sm_mem_pressure()) && refuse_for_memory(r, &r->mut))
			return;
		ts = r->mut.ts == SM_TS_NOW ? sm_store_now_us() : r->mut.ts;
		if (views && SM_UNLIKELY(ss->index_tables != 0) &&
		    store_index_mutate(r, pt, ts, now_sec()))
			return;
		r->result = logged ? store_log_apply(pt, &r->mut, ts, now_sec(), r->err, sizeof(r->err))
				   : sm_ptable_apply_at(pt, &r->mut, r->token, ts, now_sec(), r->err,
							sizeof(r->err));
		return;
	case SM_REQ_SELECT:
		pt = ptable_of(r->sel.table, r->err, sizeof(r->err));
		if (pt == NULL)
			goto enoent;
		r->result = sm_ptable_read_at(pt, &r->sel, r->token,
					      r->sel.now ? r->sel.now : now_sec());
		if (r->result < 0)
			snprintf(r->err, sizeof(r->err), "read failed: %s", strerror(-r->result));
		return;
	case SM_REQ_CAS:
		pt = ptable_of(r->cas.mut.table, r->err, sizeof(r->err));
		if (pt == NULL)
			goto enoent;
		if (SM_UNLIKELY(sm_mem_pressure()) && refuse_for_memory(r, &r->cas.mut))
			return;
		if (views && SM_UNLIKELY(ss->index_tables != 0) && store_index_cas(r, pt, run_cas))
			return;
		run_paxos(r, pt, &r->cas.mut.pk, false);
		return;
	case SM_REQ_SERIAL_SELECT:
		pt = ptable_of(r->sel.table, r->err, sizeof(r->err));
		if (pt == NULL)
			goto enoent;
		r->sel.rows = 0;
		run_paxos(r, pt, &r->sel.pk, true);
		return;
	}
	r->result = -EINVAL;
	snprintf(r->err, sizeof(r->err), "unknown request kind %d", (int)r->kind);
	return;
enoent:
	r->result = -ENOENT;
}

static inline __attribute__((always_inline)) void
exec_local(struct sm_store_req *r, bool views)
{
	exec_in(r, views, false);
}

static void
exec_remote(void *arg)
{
	exec_local(arg, true);
}

void
store_set_index_tables(unsigned n)
{
	if (ss != NULL)
		ss->index_tables = n;
}

void
store_exec_here(struct sm_store_req *r)
{
	if (ss->logging)
		exec_in(r, true, true);
	else
		exec_local(r, true);
}

int
store_apply(struct sm_ptable *pt, const struct sm_mutation *m, int64_t ts, int32_t now, char *err,
	    size_t errlen)
{
	return apply_mutation(pt, m, ts, now, err, errlen, ss->logging);
}

bool
store_log_wait(struct sm_store_req *r, void (*fn)(void *arg), void *arg)
{
	uint64_t pos = store_log_pending;

	store_log_busy = false; /* no retry here: the write failed with -EBUSY, said to the client */
	if (pos == 0)
		return false;
	store_log_pending = 0;
	sm_clog_wait(&r->clw, pos, fn, arg);
	return true;
}

void
store_req_finish(struct sm_store_req *r)
{
	req_finish(r);
}

static void
exec_reply(void *arg)
{
	struct sm_store_req *r = arg;

	req_finish(r);
}

/* Batch commitlog: the sync that covers the request's record is done. */
static void
log_synced(void *arg)
{
	struct sm_store_req *r = arg;

	if (r->clw.result < 0 && r->result == 0) {
		r->result = -EIO;
		snprintf(r->err, sizeof(r->err),
			 "commitlog write failed on shard %u: the write is applied but may not "
			 "survive a restart",
			 sm_shard_id());
	}
	if (r->origin == sm_shard_id())
		req_finish(r);
	else if (sm_submit_to(r->origin, exec_reply, r, NULL) < 0)
		SM_ERR("out of memory replying to shard %u: a request is lost", r->origin);
}

/* True when the request just logged a record it must wait for. */
static bool
log_defer(struct sm_store_req *r)
{
	uint64_t pos = store_log_pending;

	if (pos == 0)
		return false;
	store_log_pending = 0;
	sm_clog_wait(&r->clw, pos, log_synced, r);
	return true;
}

/*
 * The log had no room for the request's record (every buffer still being
 * written): nothing was applied, so wait for room and run it again. Not a
 * Paxos round, whose accepted proposal would be repaired by the next one.
 */
static bool
log_busy(struct sm_store_req *r, void (*again)(void *arg))
{
	if (SM_LIKELY(!store_log_busy))
		return false;
	store_log_busy = false;
	if (r->kind == SM_REQ_CAS && !r->cas.local)
		return false;
	sm_clog_wait_space(&r->clw, again, r);
	return true;
}

static void
exec_logged_again(void *arg);

/* exec_local() with the commitlog on (a copy of its own, off the hot path). */
static __attribute__((noinline)) void
exec_logged(struct sm_store_req *r)
{
	/* sm_store_submit() routed indexed writes already (store_index_route()) */
	store_log_busy = false;
	exec_in(r, false, true);
	if (log_busy(r, exec_logged_again))
		return;
	if (!log_defer(r))
		req_finish(r);
}

static void
exec_logged_again(void *arg)
{
	exec_logged(arg);
}

/* exec_remote() with the commitlog on: in batch mode the reply leaves after the sync. */
static void
exec_remote_logged(void *arg)
{
	struct sm_store_req *r = arg;

	store_log_busy = false; /* a flag a Paxos round left is not this request's */
	exec_in(r, true, true);
	if (log_busy(r, exec_remote_logged) || log_defer(r))
		return;
	if (sm_submit_to(r->origin, exec_reply, r, NULL) < 0)
		SM_ERR("out of memory replying to shard %u: a request is lost", r->origin);
}

/* ---- range scans: a k-way merge over shards, in token order ---- */

static inline bool
bit_test(const uint64_t *v, unsigned i)
{
	return v[i / 64] >> (i % 64) & 1;
}

static inline void
bit_set(uint64_t *v, unsigned i, bool on)
{
	if (on)
		v[i / 64] |= 1ull << (i % 64);
	else
		v[i / 64] &= ~(1ull << (i % 64));
}

static void
scan_step(void *arg);

static void
scan_finish_msg(void *arg)
{
	struct sm_store_req *r = arg;

	req_finish(r);
}

static void
scan_finish(struct sm_store_req *r)
{
	if (sm_shard_id() == r->origin) {
		req_finish(r);
		return;
	}
	r->hops++;
	sm_submit_to(r->origin, scan_finish_msg, r, NULL);
}

static void
scan_go(struct sm_store_req *r, unsigned shard)
{
	r->hops++;
	SM_STAT_INC(hops);
	if (sm_submit_to(shard, scan_step, r, NULL) < 0) {
		r->result = -ENOMEM;
		snprintf(r->err, sizeof(r->err), "out of memory forwarding a scan");
		scan_finish(r);
	}
}

static void
scan_step(void *arg)
{
	struct sm_store_req *r = arg;
	struct sm_scan_state *st = &r->scan;
	struct sm_select *s = &r->sel;
	unsigned n = sm_shard_count(), me = sm_shard_id(), i, best;
	struct sm_ptable *pt;
	int64_t bound, tok;
	bool has;
	int ret;

	pt = ptable_of(s->table, r->err, sizeof(r->err));
	if (pt == NULL) {
		r->result = -ENOENT;
		scan_finish(r);
		return;
	}
	for (;;) {
		if (!bit_test(st->known, me)) {
			has = sm_ptable_peek(pt, s, &st->pos, &tok);
			bit_set(st->known, me, true);
			bit_set(st->has, me, has);
			st->next[me] = tok;
		}
		/* Learn every shard's next partition before merging. */
		for (i = 0; i < n; i++)
			if (!bit_test(st->known, i))
				break;
		if (i < n) {
			scan_go(r, i);
			return;
		}
		best = n;
		for (i = 0; i < n; i++)
			if (bit_test(st->has, i) && (best == n || st->next[i] < st->next[best]))
				best = i;
		if (best == n) {
			scan_finish(r); /* every shard is past the range */
			return;
		}
		if (best != me) {
			scan_go(r, best);
			return;
		}
		bound = INT64_MAX;
		for (i = 0; i < n; i++)
			if (i != me && bit_test(st->has, i) && st->next[i] < bound)
				bound = st->next[i];
		ret = sm_ptable_scan(pt, s, &st->pos, bound, &st->budget, st->now, &tok, &has);
		if (ret < 0) {
			r->result = ret;
			snprintf(r->err, sizeof(r->err), "scan failed: %s", strerror(-ret));
			scan_finish(r);
			return;
		}
		bit_set(st->has, me, has);
		st->next[me] = tok;
		if (ret == 1) {
			s->more = true;
			sm_scan_pos_encode(&st->pos, &s->paging);
			scan_finish(r);
			return;
		}
	}
}

static void
scan_start(struct sm_store_req *r)
{
	struct sm_scan_state *st = &r->scan;
	struct sm_select *s = &r->sel;

	memset(st->known, 0, sizeof(st->known));
	memset(st->has, 0, sizeof(st->has));
	memset(&st->pos, 0, sizeof(st->pos));
	st->budget = s->limit ? s->limit : UINT32_MAX;
	st->now = s->now ? s->now : now_sec();
	s->rows = 0;
	s->more = false;
	if (s->resume && sm_scan_pos_decode(&s->paging, &st->pos) < 0) {
		r->result = -EINVAL;
		snprintf(r->err, sizeof(r->err), "Invalid value for the paging state");
		req_finish(r);
		return;
	}
	scan_step(r);
}

int
sm_store_scan_local(struct sm_select *s, struct sm_scan_pos *pos, uint32_t *budget)
{
	struct sm_ptable *pt;
	char err[160];
	int64_t tok;
	bool has;

	pt = ptable_of(s->table, err, sizeof(err));
	if (pt == NULL)
		return -ENOENT;
	return sm_ptable_scan(pt, s, pos, INT64_MAX, budget, s->now ? s->now : now_sec(), &tok,
			      &has);
}

/* ---- submission ---- */

void
sm_store_req_init(struct sm_store_req *r, enum sm_req_kind kind)
{
	/* The union's other members may reach into the paging bytes: clear them. */
	const size_t data = offsetof(struct sm_store_req, sel.paging.data);
	const size_t cas_end = offsetof(struct sm_store_req, cas) + sizeof(struct sm_cas);
	const size_t tail = data + sizeof(r->sel.paging.data);
	const size_t end = offsetof(struct sm_store_req, scan);
	/* A read uses only sel, whose bytes before the paging data are a third of a CAS's: a read
	 * request may not become another kind (writes are made as MUTATE, then set). */
	const size_t head = kind == SM_REQ_SELECT || kind == SM_REQ_SERIAL_SELECT
				    ? data
				    : SM_MAX(data, cas_end);

	_Static_assert(sizeof(struct sm_cas) >= sizeof(struct sm_mutation), "CAS holds a mutation");
	if (head >= tail) {
		memset(r, 0, end);
	} else {
		memset(r, 0, head);
		memset((char *)r + tail, 0, end - tail);
	}
	r->kind = kind;
}

void
sm_store_submit(struct sm_store_req *r)
{
	const struct sm_table *t;
	const struct sm_key *pk;
	unsigned owner;

	r->origin = sm_shard_id();
	r->hops = 0;
	r->result = 0;
	r->err[0] = '\0';
	ss->inflight++;
	if (SM_UNLIKELY(ss->index_tables != 0) && store_index_route(r))
		return;
	/* a request made as another kind and turned into a read (Alternator's
	 * read-modify-write) holds that kind's bytes there: only the store's
	 * own reads of a view's images want the markers */
	if (r->kind == SM_REQ_SELECT || r->kind == SM_REQ_SERIAL_SELECT)
		r->sel.marker = false;
	if (r->kind == SM_REQ_SELECT && r->sel.range) {
		scan_start(r);
		return;
	}
	pk = r->kind == SM_REQ_MUTATE ? &r->mut.pk
	     : r->kind == SM_REQ_CAS  ? &r->cas.mut.pk
				      : &r->sel.pk;
	/* the table leads each member of the union (their common initial sequence) */
	_Static_assert(offsetof(struct sm_store_req, mut.table) ==
				       offsetof(struct sm_store_req, sel.table) &&
			       offsetof(struct sm_store_req, mut.table) ==
				       offsetof(struct sm_store_req, cas.mut.table),
		       "one table pointer for every kind");
	t = r->mut.table;
	if (pk->n == 0) {
		r->result = -EINVAL;
		snprintf(r->err, sizeof(r->err), "Key may not be empty");
		req_finish(r);
		return;
	}
	/* the token routes the request and finds the partition: hashed once */
	r->token = sm_key_token(pk);
	owner = sm_table_shard_of_token(t, r->token, sm_shard_count() ? sm_shard_count() : 1);
	if (owner == ss->inline_owner) {
		exec_local(r, false);
		req_finish(r);
		return;
	}
	if (SM_UNLIKELY(ss->logging) && owner == r->origin) {
		exec_logged(r);
		return;
	}
	r->hops = 1;
	SM_STAT_INC(hops);
	if (SM_UNLIKELY(ss->logging)
		    ? sm_submit_to(owner, exec_remote_logged, r, NULL) < 0
		    : sm_submit_to(owner, exec_remote, r, exec_reply) < 0) {
		r->result = -ENOMEM;
		snprintf(r->err, sizeof(r->err), "out of memory forwarding to shard %u", owner);
		req_finish(r);
	}
}

/* ---- schema changes ---- */

static int
tables_reserve(uint32_t n)
{
	struct sm_ptable **v;
	const struct sm_table **d;

	if (n <= ss->ntables)
		return 0;
	v = sm_realloc(ss->tables, n * sizeof(*v));
	if (v == NULL)
		return -ENOMEM;
	memset(v + ss->ntables, 0, (n - ss->ntables) * sizeof(*v));
	ss->tables = v;
	d = sm_realloc(ss->defs, n * sizeof(*d));
	if (d == NULL)
		return -ENOMEM;
	memset(d + ss->ntables, 0, (n - ss->ntables) * sizeof(*d));
	ss->defs = d;
	ss->ntables = n;
	return 0;
}

static void (*drop_hook)(const struct sm_table *t);

void
sm_store_set_drop_hook(void (*fn)(const struct sm_table *t))
{
	drop_hook = fn;
}

/* Make this shard's storage match @cat: new tables get storage, dropped
 * tables lose theirs (and their Paxos state). */
static int
sync_tables(const struct sm_catalog *cat)
{
	uint8_t *live;
	unsigned k, i;
	uint32_t s;
	int ret = 0;

	if (tables_reserve(cat->next_slot) < 0)
		return -ENOMEM;
	live = sm_calloc(ss->ntables ? ss->ntables : 1, 1);
	if (live == NULL)
		return -ENOMEM;
	for (k = 0; k < cat->nks; k++) {
		for (i = 0; i < cat->ks[k]->ntables; i++) {
			const struct sm_table *t = cat->ks[k]->tables[i];

			live[t->slot] = 1;
			if (ss->tables[t->slot] == NULL) {
				ss->tables[t->slot] = sm_ptable_new(t);
				if (ss->tables[t->slot] == NULL)
					ret = -ENOMEM;
				else
					sm_table_get(t);
				ss->defs[t->slot] = t;
			} else if (sm_ptable_schema(ss->tables[t->slot]) != t) {
				/* ALTER TABLE or TYPE: the same table, a new definition */
				const struct sm_table *old = sm_ptable_schema(ss->tables[t->slot]);

				if (sm_ptable_reschema(ss->tables[t->slot], t) < 0) {
					ret = -ENOMEM;
				} else {
					sm_table_get(t);
					sm_table_put(old);
					ss->defs[t->slot] = t;
				}
			}
		}
	}
	for (s = 0; s < ss->ntables; s++) {
		if (live[s] || ss->tables[s] == NULL)
			continue;
		{
			struct sm_ptable *pt = ss->tables[s];
			const struct sm_table *t = sm_ptable_schema(pt);

			if (drop_hook != NULL)
				drop_hook(t);
			sm_paxos_table_drop(ss->paxos, &t->id);
			sm_ptable_free(pt);
			sm_table_put(t);
			ss->tables[s] = NULL;
			ss->defs[s] = NULL;
		}
	}
	sm_free(live);
	return ret;
}

static void
ddl_start(struct sm_ddl_req *r);

static void
ddl_install(void *arg)
{
	struct sm_ddl_req *r = arg;
	struct sm_catalog *old = ss->cat;

	if (r->kind == SM_DDL_TRUNCATE) {
		const struct sm_table *t = sm_catalog_table(ss->cat, r->ks_name, r->table_name);

		if (t != NULL && t->slot < ss->ntables && ss->tables[t->slot] != NULL) {
			sm_ptable_truncate(ss->tables[t->slot]);
			sm_paxos_table_drop(ss->paxos, &t->id);
			if (sm_clog_mode != SM_CLOG_OFF)
				store_log_truncate(t);
		}
		return;
	}
	sm_catalog_get(r->next);
	ss->cat = r->next;
	if (sync_tables(ss->cat) < 0)
		SM_ERR("out of memory installing schema version: some tables lack storage");
	store_index_sync(ss->cat);
	retire_catalog(old);
}

static void
ddl_done_msg(void *arg)
{
	struct sm_ddl_req *r = arg;

	r->done(r);
}

static void
ddl_deliver(void *arg)
{
	struct sm_ddl_req *r = arg;

	if (r->clog_pos != 0 && r->clw.result < 0 && r->result >= 0) {
		r->result = -EIO;
		snprintf(r->err, sizeof(r->err),
			 "commitlog write failed: the schema change is applied but may not survive "
			 "a restart");
	}
	if (r->origin == 0)
		r->done(r);
	else
		sm_submit_to(r->origin, ddl_done_msg, r, NULL);
}

static void
ddl_complete(struct sm_ddl_req *r)
{
	struct sm_ddl_req *next;

	if (r->next != NULL) {
		r->version = r->next->version;
		sm_catalog_put(r->next);
		r->next = NULL;
	} else {
		r->version = ss->cat->version;
	}
	r->clw.result = 0;
	if (r->clog_pos != 0 && sm_clog_mode == SM_CLOG_BATCH)
		sm_clog_wait(&r->clw, r->clog_pos, ddl_deliver, r);
	else
		ddl_deliver(r);
	ss->ddl_busy = NULL;
	next = ss->ddl_head;
	if (next != NULL) {
		ss->ddl_head = next->queue_next;
		if (ss->ddl_head == NULL)
			ss->ddl_tail = &ss->ddl_head;
		ddl_start(next);
	}
}

static void
ddl_installed(void *arg)
{
	struct sm_ddl_req *r = arg;

	if (--r->pending == 0)
		ddl_complete(r);
}

/*
 * The next catalog for @r from @cur: 0 and r->next, 1 for a no-op, -errno
 * with r->err. The commitlog's replay builds the schema with it too.
 */
int
store_ddl_build(const struct sm_catalog *cur, struct sm_ddl_req *r)
{
	unsigned i;
	int ret = 0;

	r->next = NULL;
	r->err[0] = '\0';
	switch (r->kind) {
	case SM_DDL_CREATE_KEYSPACE:
		ret = sm_catalog_create_keyspace(cur, &r->ks, r->if_exists, &r->next, r->err,
						 sizeof(r->err));
		break;
	case SM_DDL_DROP_KEYSPACE:
		ret = sm_catalog_drop_keyspace(cur, r->ks_name, r->if_exists, &r->next, r->err,
					       sizeof(r->err));
		break;
	case SM_DDL_CREATE_TABLE:
		ret = sm_catalog_create_table(cur, &r->table, r->if_exists, &r->next, r->err,
					      sizeof(r->err));
		break;
	case SM_DDL_CREATE_KEYSPACE_TABLE: {
		struct sm_catalog *mid = NULL;

		/* Only the final snapshot is published: a failed table leaves no keyspace. */
		ret = sm_catalog_create_keyspace(cur, &r->ks, true, &mid, r->err, sizeof(r->err));
		if (ret >= 0)
			ret = sm_catalog_create_table(mid != NULL ? mid : cur, &r->table,
						      r->if_exists, &r->next, r->err,
						      sizeof(r->err));
		sm_catalog_put(mid);
		for (i = 0; ret == 0 && i < r->nmore_tables; i++) {
			mid = r->next;
			r->next = NULL;
			ret = sm_catalog_create_table(mid, &r->more_tables[i], false, &r->next,
						      r->err, sizeof(r->err));
			sm_catalog_put(mid);
		}
		break;
	}
	case SM_DDL_DROP_TABLE:
		ret = sm_catalog_drop_table(cur, r->ks_name, r->table_name, r->if_exists, &r->next,
					    r->err, sizeof(r->err));
		break;
	case SM_DDL_CATALOG:
		ret = r->apply(cur, r->apply_arg, &r->next, r->err, sizeof(r->err));
		break;
	case SM_DDL_TRUNCATE:
		if (sm_catalog_table(cur, r->ks_name, r->table_name) == NULL) {
			snprintf(r->err, sizeof(r->err), "unconfigured table %s", r->table_name);
			ret = -ENOENT;
		}
		break;
	}
	return ret;
}

static void
ddl_start(struct sm_ddl_req *r)
{
	unsigned i;
	int ret;

	ss->ddl_busy = r;
	r->clog_pos = 0;
	ret = store_ddl_build(ss->cat, r);
	r->result = ret;
	if (ret == 0 && sm_clog_mode != SM_CLOG_OFF) {
		ret = store_log_ddl(r);
		if (ret < 0) {
			r->result = ret;
			sm_catalog_put(r->next);
			r->next = NULL;
		}
	}
	if (r->result != 0) {
		ddl_complete(r);
		return;
	}
	r->pending = sm_shard_count();
	for (i = 0; i < sm_shard_count(); i++) {
		if (sm_submit_to(i, ddl_install, r, ddl_installed) < 0) {
			SM_ERR("schema change could not reach shard %u: out of memory", i);
			r->pending--;
		}
	}
	if (r->pending == 0)
		ddl_complete(r);
}

static void
ddl_on_shard0(void *arg)
{
	struct sm_ddl_req *r = arg;

	if (ss->ddl_busy != NULL) {
		r->queue_next = NULL;
		*ss->ddl_tail = r;
		ss->ddl_tail = &r->queue_next;
		return;
	}
	ddl_start(r);
}

void
sm_store_ddl(struct sm_ddl_req *r)
{
	r->origin = sm_shard_id();
	if (r->origin == 0)
		ddl_on_shard0(r);
	else
		sm_submit_to(0, ddl_on_shard0, r, NULL);
}

/* ---- setup ---- */

/* Shard 0 creates the empty catalog; the others wait for it in order
 * through their ring from shard 0, so every shard starts from the same
 * version: the first install message carries it. */
static struct sm_catalog *initial_catalog;

void
store_set_initial_catalog(struct sm_catalog *c)
{
	struct sm_catalog *old = __atomic_exchange_n(&initial_catalog, c, __ATOMIC_ACQ_REL);

	if (old != NULL)
		sm_catalog_put(old);
}

int
sm_store_shard_init(void)
{
	int ret = -ENOMEM;

	ss = sm_calloc(1, sizeof(*ss));
	if (ss == NULL)
		return -ENOMEM;
	ss->ddl_tail = &ss->ddl_head;
	ss->logging = sm_clog_mode != SM_CLOG_OFF;
	ss->inline_owner = ss->logging ? UINT_MAX : sm_shard_id();
	ss->paxos = sm_paxos_table_create(&mut_ops);
	if (ss->paxos == NULL)
		goto free_ss;
	sm_uuid_gen_init(&ss->gen, sm_shard_id());
	ss->local.table = ss->paxos;
	ss->local.store_ctx = ss;
	ss->replica.ops = &sm_paxos_local_ops;
	ss->replica.ctx = &ss->local;
	if (sm_shard_id() == 0 || initial_catalog == NULL) {
		struct sm_catalog *c = NULL, *expect = NULL;

		c = sm_catalog_new();
		if (c == NULL)
			goto free_paxos;
		/* The first shard to get here publishes; the rest adopt it. */
		if (!__atomic_compare_exchange_n(&initial_catalog, &expect, c, false,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			sm_catalog_put(c);
			c = expect;
		}
	}
	ss->cat = __atomic_load_n(&initial_catalog, __ATOMIC_ACQUIRE);
	sm_catalog_get(ss->cat);
	/* a catalog the commitlog rebuilt has tables: give them storage */
	if (ss->cat->next_slot > 0 && sync_tables(ss->cat) < 0) {
		SM_ERR("out of memory creating the tables of the replayed schema");
		return -ENOMEM;
	}
	return 0;
free_paxos:
	sm_paxos_table_destroy(ss->paxos);
free_ss:
	sm_free(ss);
	ss = NULL;
	return ret;
}

void
sm_store_shard_fini(void)
{
	struct sm_catalog *init;
	uint32_t s;

	sm_ptable_shard_fini();
	sm_changelog_shard_fini();
	if (ss == NULL)
		return;
	store_index_shard_fini();
	for (s = 0; s < ss->ntables; s++) {
		if (ss->tables[s] != NULL) {
			const struct sm_table *t = sm_ptable_schema(ss->tables[s]);

			sm_ptable_free(ss->tables[s]);
			sm_table_put(t);
		}
	}
	sm_free(ss->tables);
	sm_free(ss->defs);
	release_retired();
	sm_free(ss->retired);
	sm_paxos_table_destroy(ss->paxos);
	sm_catalog_put(ss->cat);
	/* The publishing reference of the first catalog goes with the last
	 * shard that leaves. */
	init = __atomic_exchange_n(&initial_catalog, NULL, __ATOMIC_ACQ_REL);
	if (init != NULL)
		sm_catalog_put(init);
	sm_free(ss);
	ss = NULL;
}
