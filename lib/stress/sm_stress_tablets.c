/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The tablet map of `shardmark stress` (sm_stress_tablets.h). Each table's
 * tablets are an array sorted by token with no two overlapping, so a lookup
 * is one binary search and the tablets a new one overlaps are one run of
 * the array, replaced by a move. Insertions happen only on misrouted
 * requests, which the map makes rare, so a move per insertion is cheap.
 */

#include <errno.h>
#include <string.h>

#include "sm_byteorder.h"
#include "sm_core.h"
#include "sm_stress_ring.h"
#include "sm_stress_tablets.h"

void
sm_tablets_init(struct sm_tablets *t, unsigned max_total)
{
	memset(t, 0, sizeof(*t));
	t->max_total = max_total;
}

void
sm_tablets_free(struct sm_tablets *t)
{
	unsigned i;

	for (i = 0; i < t->ntables; i++) {
		sm_free(t->tables[i].v);
		t->tables[i].v = NULL;
		t->tables[i].n = t->tables[i].cap = 0;
	}
	t->total = 0;
}

int
sm_tablets_table(struct sm_tablets *t, const char *keyspace, size_t ks_len, const char *table,
		 size_t table_len)
{
	struct sm_tablets_table *tb;
	unsigned i;

	if (ks_len == 0 || table_len == 0)
		return -EINVAL;
	if (ks_len >= SM_TABLETS_NAME_MAX || table_len >= SM_TABLETS_NAME_MAX)
		return -ENAMETOOLONG;
	for (i = 0; i < t->ntables; i++) {
		tb = &t->tables[i];
		if (strlen(tb->keyspace) == ks_len && memcmp(tb->keyspace, keyspace, ks_len) == 0 &&
		    strlen(tb->table) == table_len && memcmp(tb->table, table, table_len) == 0)
			return (int)i;
	}
	if (t->ntables == SM_TABLETS_MAX_TABLES)
		return -ENOSPC;
	tb = &t->tables[t->ntables];
	memset(tb, 0, sizeof(*tb));
	memcpy(tb->keyspace, keyspace, ks_len);
	memcpy(tb->table, table, table_len);
	return (int)t->ntables++;
}

bool
sm_tablets_payload(const struct sm_cql_bytesmap *m, struct sm_bytes *val)
{
	struct sm_cql_iter it;
	struct sm_bytes k, v;

	if (m->n == 0)
		return false;
	sm_cql_bytesmap_iter(&it, m);
	while (sm_cql_bytesmap_next(&it, &k, &v)) {
		if (sm_cql_str_eq(k, SM_TABLETS_PAYLOAD_KEY)) {
			*val = v;
			return true;
		}
	}
	return false;
}

/* ---- the payload ---- */

struct rd {
	const uint8_t *p;
	size_t left;
};

/* An [int] length; false when fewer than 4 bytes are left. */
static bool
rd_int(struct rd *r, int32_t *out)
{
	if (r->left < 4)
		return false;
	*out = (int32_t)sm_get_be32(r->p);
	r->p += 4;
	r->left -= 4;
	return true;
}

/*
 * A tuple or list element: [int len] then exactly @want bytes (len -1, a
 * null, or any other length is an error), its bytes at *@out.
 */
static bool
rd_elem(struct rd *r, int32_t want, const uint8_t **out)
{
	int32_t len;

	if (!rd_int(r, &len) || len != want || r->left < (size_t)want)
		return false;
	*out = r->p;
	r->p += want;
	r->left -= (size_t)want;
	return true;
}

/* A serialized tuple<uuid, int>: two [bytes] of 16 and 4; in the list, its [int] length first. */
#define REPLICA_TUPLE (4 + 16 + 4 + 4)
#define REPLICA_WIRE (4 + REPLICA_TUPLE)

int
sm_tablets_decode(const uint8_t *p, size_t len, struct sm_tablet *out, const char **why)
{
	struct rd r = { p, len }, e;
	const uint8_t *v, *uuid, *shard;
	int32_t list_len, n, i;

	memset(out, 0, offsetof(struct sm_tablet, reps));
	*why = NULL;
	if (!rd_elem(&r, 8, &v)) {
		*why = "first_token is not an 8-byte bigint";
		return -EINVAL;
	}
	out->first = (int64_t)sm_get_be64(v);
	if (!rd_elem(&r, 8, &v)) {
		*why = "last_token is not an 8-byte bigint";
		return -EINVAL;
	}
	out->last = (int64_t)sm_get_be64(v);
	if (out->first >= out->last) {
		*why = "an empty token range (first_token >= last_token)";
		return -EINVAL;
	}
	/* The replica list is a [bytes] of its own: its length bounds the count. */
	if (!rd_int(&r, &list_len) || list_len < 4 || (size_t)list_len != r.left) {
		*why = "the replica list's length is not what is left of the tuple";
		return -EINVAL;
	}
	e = (struct rd){ r.p, (size_t)list_len };
	if (!rd_int(&e, &n) || n <= 0) {
		*why = "a tablet without replicas";
		return -EINVAL;
	}
	if ((size_t)n > e.left / REPLICA_WIRE) {
		*why = "more replicas than the list holds bytes for";
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		struct rd t;
		int32_t tlen;
		int32_t s;

		if (!rd_int(&e, &tlen) || tlen != REPLICA_TUPLE || e.left < (size_t)tlen) {
			*why = "a replica that is not a tuple<uuid, int>";
			return -EINVAL;
		}
		t = (struct rd){ e.p, (size_t)tlen };
		e.p += tlen;
		e.left -= (size_t)tlen;
		if (!rd_elem(&t, 16, &uuid) || !rd_elem(&t, 4, &shard)) {
			*why = "a replica whose host_id is not a uuid or whose shard is not an int";
			return -EINVAL;
		}
		s = (int32_t)sm_get_be32(shard);
		if (s < 0) {
			*why = "a negative shard";
			return -EINVAL;
		}
		if (out->nreps < SM_TABLETS_MAX_REPLICAS) {
			struct sm_tablet_replica *rep = &out->reps[out->nreps++];

			memcpy(rep->host_id, uuid, 16);
			rep->shard = (uint32_t)s;
			rep->host = SM_TABLETS_HOST_UNKNOWN;
		}
	}
	if (e.left != 0) {
		*why = "bytes after the replica list";
		return -EINVAL;
	}
	out->nreps_sent = (unsigned)n;
	return 0;
}

/* ---- the map ---- */

/* The first tablet of @tb whose last token is >= @token (n when none). */
static unsigned
lower_bound(const struct sm_tablets_table *tb, int64_t token)
{
	unsigned lo = 0, hi = tb->n;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (tb->v[mid].last < token)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct sm_tablet *
sm_tablets_find(const struct sm_tablets *t, unsigned table, int64_t token)
{
	const struct sm_tablets_table *tb;
	unsigned i;

	if (table >= t->ntables)
		return NULL;
	tb = &t->tables[table];
	i = lower_bound(tb, token);
	if (i == tb->n || tb->v[i].first >= token)
		return NULL;
	return &tb->v[i];
}

int
sm_tablets_insert(struct sm_tablets *t, unsigned table, const struct sm_tablet *tab)
{
	struct sm_tablets_table *tb;
	unsigned lo, hi, removed;

	if (table >= t->ntables || tab->first >= tab->last || tab->nreps == 0 ||
	    tab->nreps > SM_TABLETS_MAX_REPLICAS)
		return -EINVAL;
	tb = &t->tables[table];
	/*
	 * Tablet i overlaps (first, last] when its last > first and its first
	 * < last; sorted and disjoint, those are the run [lo, hi).
	 */
	lo = lower_bound(tb, tab->first + 1); /* first < last: no overflow */
	for (hi = lo; hi < tb->n && tb->v[hi].first < tab->last; hi++)
		;
	removed = hi - lo;
	if (removed == 0 && t->total >= t->max_total) {
		t->st.refused++;
		return -ENOSPC;
	}
	if (removed == 0 && tb->n == tb->cap) {
		unsigned cap = tb->cap ? tb->cap * 2 : 16;
		struct sm_tablet *v;

		if (cap > t->max_total)
			cap = t->max_total;
		v = sm_realloc(tb->v, (size_t)cap * sizeof(*v));
		if (v == NULL)
			return -ENOMEM;
		tb->v = v;
		tb->cap = cap;
	}
	/* One slot for the new tablet where the removed run was. */
	if (removed != 1)
		memmove(&tb->v[lo + 1], &tb->v[hi], (size_t)(tb->n - hi) * sizeof(*tb->v));
	tb->v[lo] = *tab;
	tb->n = tb->n - removed + 1;
	t->total = t->total - removed + 1;
	t->st.learned++;
	t->st.replaced += removed;
	return 0;
}

int
sm_tablets_pick(const struct sm_tablet *tab, int ordering, const int *pos, unsigned nhosts,
		unsigned nplan, uint64_t *rng, uint64_t *rr)
{
	int cand[SM_TABLETS_MAX_REPLICAS];
	unsigned i, n = 0, best = 0, start;

	for (i = 0; i < tab->nreps; i++) {
		uint16_t h = tab->reps[i].host;

		if (h != SM_TABLETS_HOST_UNKNOWN && h < nhosts && pos[h] >= 0 &&
		    (unsigned)pos[h] < nplan)
			cand[n++] = (int)i;
	}
	if (n == 0)
		return -1;
	switch (ordering) {
	case SM_RING_RANDOM:
		return cand[sm_ring_rand_below(rng, n)];
	case SM_RING_NEUTRAL:
		/* The rotated plan meets first the replica nearest after its start. */
		start = (unsigned)(*rr % nplan);
		(*rr)++;
		for (i = 1; i < n; i++) {
			unsigned a =
				((unsigned)pos[tab->reps[cand[i]].host] + nplan - start) % nplan;
			unsigned b =
				((unsigned)pos[tab->reps[cand[best]].host] + nplan - start) % nplan;

			if (a < b)
				best = i;
		}
		return cand[best];
	default:
		return cand[0];
	}
}
