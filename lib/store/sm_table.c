/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One table's data on one shard, with Cassandra's write semantics:
 *
 * - every cell carries its write timestamp; the newer write wins, and on a
 *   tie a tombstone beats an expiring cell, which beats one that never
 *   expires, then the later expiry wins, then the greater value (ScyllaDB's
 *   compare_atomic_cell_for_merge(); Cassandra compares the value first);
 * - a TTL turns into an expiry time; an expired cell reads as a tombstone;
 * - partition, range, row and cell tombstones shadow every write with a
 *   timestamp at or below theirs; shadowed data is purged when a partition
 *   or row tombstone arrives so deleted data does not linger in memory;
 * - INSERT writes a row marker (the row exists with null cells), UPDATE
 *   does not; static cells belong to the partition;
 * - counters add; non-frozen collections are one cell per element (list
 *   elements keyed by timeuuid), with a collection tombstone for overwrite.
 *
 * The partition index and the value buffers are written here rather than
 * taken from a library: they sit on every request's path and must allocate
 * only when the data grows.
 *
 * Partitions are one list in (token, key) order, for range scans, and a
 * directory of the list by the token's top bits finds a partition for a
 * point access or an insert: tokens are Murmur3 hashes, so with as many
 * slots as partitions a slot holds about one and a lookup or an insert
 * costs the same at any size. The skip list it replaces took most of an
 * insert's time by 1 million partitions (a cache miss per node on its
 * ~20-node path: 164k writes/s at 1 million, 108k/s by 5 million, issue 26).
 *
 * A row is one allocation: its header, a 24-byte slot per cell, then the
 * cells' values packed (issue 26: a fixed 56-byte struct per cell and a
 * heap buffer per value above 16 bytes cost 781 bytes per standard1
 * partition in 8 allocations). A value that fits the space its cell had
 * is written in place; one that does not goes to the row's free tail, and
 * when the tail is too short the row moves to a new allocation with its
 * values compacted. Collections keep a sorted array of elements.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sm_core.h"
#include "sm_index.h"
#include "sm_table.h"

#define VAL_INLINE 16
#define TS_NONE INT64_MIN
#define DIR_MIN_BITS 4

struct val {
	uint32_t len;
	uint32_t cap; /* 0: inline */
	union {
		uint8_t in[VAL_INLINE];
		uint8_t *heap;
	};
};

struct coll;

/* The longest value a cell holds (its length has 30 bits). */
#define CELL_MAX_LEN ((1u << 30) - 1)

/* A cell of a row; its value is in the row's allocation at @off. */
struct cell {
	int64_t ts;  /* TS_NONE: no cell */
	int32_t ldt; /* tombstone: deletion time; live: expiry (0: never) */
	uint32_t len : 30;
	uint32_t tomb : 1;
	uint32_t is_coll : 1; /* non-frozen collection column: @coll, no value */
	union {
		struct {
			uint32_t off; /* from the row's start */
			uint32_t cap; /* bytes reserved there */
		};
		struct coll *coll;
	};
};

/* A cell of a collection element: its value beside it. */
struct ecell {
	int64_t ts;
	int32_t ldt;
	bool tomb;
	struct val v;
};

struct elem {
	struct val key;
	struct ecell c;
};

struct coll {
	int64_t tomb_ts;
	int32_t tomb_ldt;
	struct elem *e; /* sorted by key */
	uint32_t n;
	uint32_t cap;
};

struct row {
	struct val ck;
	int64_t marker_ts;
	int32_t marker_ldt; /* expiry, 0: never */
	int32_t del_ldt;
	int64_t del_ts;
	uint32_t used; /* bytes used from the start: header, cells, values */
	uint32_t size; /* bytes of the allocation */
	struct cell cells[];
};

struct rtomb {
	struct val start;
	struct val end;
	bool start_incl;
	bool end_incl;
	int64_t ts;
	int32_t ldt;
};

/* A partition's range tombstones: few partitions have any. */
struct rtombs {
	uint32_t n;
	uint32_t cap;
	struct rtomb v[];
};

struct part {
	int64_t token;
	struct val key;
	int64_t del_ts;
	int32_t del_ldt;
	struct row *srow;
	struct rtombs *rt; /* NULL: none (16 bytes less per partition) */
	struct row **rows; /* &row1 while the partition has at most one row */
	uint32_t nrows;
	uint32_t rowcap;
	struct row *row1;
	struct part *next; /* in (token, key) order */
};

struct sm_ptable {
	const struct sm_table *t;
	/* dir[b]: the first partition whose token's top dir_bits bits (sign
	 * flipped, so that the order is the tokens') are b, or NULL */
	struct part **dir;
	unsigned dir_bits;
	uint64_t count;
	struct part *first;
	uint16_t ncoll; /* non-frozen collection columns */
};

/* Per-shard scratch for assembling collections and decoded keys. */
static __thread uint8_t *scratch;
static __thread size_t scratch_cap;
/* Per-shard cells of the row a read emits: as many as the widest selection. */
static __thread struct sm_cell_view *row_cells;
static __thread unsigned row_cells_cap;
/* Per-shard columns of a compare-and-set's read, and each one's cell + 1 by column id. */
static __thread uint16_t *cas_cols;
static __thread unsigned cas_cols_cap;
static __thread uint32_t *cas_cell_of;
static __thread unsigned cas_cell_of_cap;

/* ---- values ---- */

static inline const uint8_t *
val_ptr(const struct val *v)
{
	return v->cap ? v->heap : v->in;
}

static inline struct sm_bytes
val_bytes(const struct val *v)
{
	struct sm_bytes b = { val_ptr(v), v->len };

	return b;
}

static int
val_set(struct val *v, const uint8_t *p, uint32_t len)
{
	if (len == 0) {
		/* nothing to copy. Tombstones and empty values come with a
		 * NULL pointer, and memcpy from NULL is undefined even for 0
		 * bytes (UBSan stopped on the first cell tombstone). */
	} else if (v->cap == 0 && len <= VAL_INLINE) {
		memcpy(v->in, p, len);
	} else if (v->cap >= len) {
		memmove(v->heap, p, len); /* reuse: same size allocates nothing */
	} else {
		uint8_t *h = sm_malloc(len);

		if (h == NULL)
			return -ENOMEM;
		memcpy(h, p, len);
		if (v->cap)
			sm_free(v->heap);
		v->heap = h;
		v->cap = len;
	}
	v->len = len;
	return 0;
}

static void
val_free(struct val *v)
{
	if (v->cap)
		sm_free(v->heap);
	v->cap = 0;
	v->len = 0;
}

static int
val_cmp_bytes(const struct val *v, struct sm_bytes b)
{
	uint32_t n = SM_MIN(v->len, b.len);
	int c = n ? memcmp(val_ptr(v), b.p, n) : 0;

	if (c != 0)
		return c;
	return v->len < b.len ? -1 : v->len > b.len;
}

/* ---- keys ---- */

size_t
sm_key_encode(const struct sm_key *k, uint8_t *buf, size_t len)
{
	size_t need = 0;
	unsigned i;

	for (i = 0; i < k->n; i++) {
		uint32_t l = k->part[i].len;

		if (need + 4 + l <= len) {
			buf[need] = (uint8_t)(l >> 24);
			buf[need + 1] = (uint8_t)(l >> 16);
			buf[need + 2] = (uint8_t)(l >> 8);
			buf[need + 3] = (uint8_t)l;
			if (l)
				memcpy(buf + need + 4, k->part[i].p, l);
		}
		need += 4 + l;
	}
	return need;
}

int
sm_key_decode(const uint8_t *p, size_t len, struct sm_key *k)
{
	size_t off = 0;

	k->n = 0;
	while (off < len) {
		uint32_t l;

		if (off + 4 > len || k->n == SM_MAX_KEY_PARTS)
			return -EINVAL;
		l = (uint32_t)p[off] << 24 | (uint32_t)p[off + 1] << 16 |
		    (uint32_t)p[off + 2] << 8 | p[off + 3];
		if (l > len - off - 4)
			return -EINVAL;
		k->part[k->n].p = p + off + 4;
		k->part[k->n].len = l;
		k->n++;
		off += 4 + l;
	}
	return 0;
}

static inline void
val_key(const struct val *v, struct sm_key *k)
{
	sm_key_decode(val_ptr(v), v->len, k);
}

/* Compare the first min(a->n, b->n) clustering components in clustering
 * order (DESC columns reversed); 0 when that prefix is equal. */
static int
ck_cmp_prefix(const struct sm_table *t, const struct sm_key *a, const struct sm_key *b)
{
	unsigned n = SM_MIN(a->n, b->n), i;

	for (i = 0; i < n; i++) {
		const struct sm_column *col = &t->cols[t->npk + i];
		int c = sm_value_compare(col->type, a->part[i], b->part[i]);

		if (c != 0)
			return col->desc ? -c : c;
	}
	return 0;
}

/* Full keys (or equal-length prefixes) compared, shorter first on a tie. */
static int
ck_cmp(const struct sm_table *t, const struct sm_key *a, const struct sm_key *b)
{
	int c = ck_cmp_prefix(t, a, b);

	if (c != 0)
		return c;
	return a->n < b->n ? -1 : a->n > b->n;
}

/* Position of a row relative to a slice start: true when inside. */
static bool
after_start(const struct sm_table *t, const struct sm_key *ck, const struct sm_ck_bound *b)
{
	int c;

	if (b->prefix.n == 0)
		return true;
	c = ck_cmp_prefix(t, ck, &b->prefix);
	return c > 0 || (c == 0 && b->inclusive);
}

static bool
before_end(const struct sm_table *t, const struct sm_key *ck, const struct sm_ck_bound *b)
{
	int c;

	if (b->prefix.n == 0)
		return true;
	c = ck_cmp_prefix(t, ck, &b->prefix);
	return c < 0 || (c == 0 && b->inclusive);
}

/* ---- liveness ---- */

static inline bool
expired(int32_t ldt, int32_t now)
{
	return ldt != 0 && ldt <= now;
}

static inline bool
stamp_live(int64_t ts, bool tomb, int32_t ldt, int64_t shadow, int32_t now)
{
	return ts != TS_NONE && ts > shadow && !tomb && !expired(ldt, now);
}

/* A collection slot has no stamp of its own (ts TS_NONE): never live here. */
static inline bool
cell_live(const struct cell *c, int64_t shadow, int32_t now)
{
	return stamp_live(c->ts, c->tomb, c->ldt, shadow, now);
}

static inline bool
ecell_live(const struct ecell *c, int64_t shadow, int32_t now)
{
	return stamp_live(c->ts, c->tomb, c->ldt, shadow, now);
}

static inline struct coll *
cell_coll(const struct cell *c)
{
	return c->is_coll ? c->coll : NULL;
}

/* The value of @r's cell @c. */
static inline struct sm_bytes
cell_bytes(const struct row *r, const struct cell *c)
{
	struct sm_bytes b = { (const uint8_t *)r + c->off, c->len };

	return b;
}

static bool
coll_live(const struct coll *co, int64_t shadow, int32_t now)
{
	uint32_t i;
	int64_t sh = SM_MAX(shadow, co->tomb_ts);

	for (i = 0; i < co->n; i++)
		if (ecell_live(&co->e[i].c, sh, now))
			return true;
	return false;
}

static bool
slot_live(const struct cell *c, int64_t shadow, int32_t now)
{
	return c->is_coll ? coll_live(c->coll, shadow, now) : cell_live(c, shadow, now);
}

static int
bytes_cmp(struct sm_bytes a, struct sm_bytes b)
{
	uint32_t n = SM_MIN(a.len, b.len);
	int c = n ? memcmp(a.p, b.p, n) : 0;

	if (c != 0)
		return c;
	return a.len < b.len ? -1 : a.len > b.len;
}

/*
 * Cassandra's reconcile: does a new cell (ts, tomb, value, ldt) beat the
 * old one (ots, otomb, ov, oldt)?
 */
static bool
wins(int64_t ots, bool otomb, struct sm_bytes ov, int32_t oldt, int64_t ts, bool tomb,
     struct sm_bytes v, int32_t ldt, int32_t now)
{
	bool old_dead, new_dead;

	if (ots == TS_NONE || ts > ots)
		return true;
	if (ts < ots)
		return false;
	old_dead = otomb || expired(oldt, now);
	new_dead = tomb || expired(ldt, now);
	if (old_dead != new_dead)
		return new_dead;
	if (new_dead)
		return ldt > oldt;
	/* ScyllaDB's compare_atomic_cell_for_merge(): an expiring cell beats a
	 * live one (ldt 0: no expiry), then the later expiry, then the value */
	if ((ldt != 0) != (oldt != 0))
		return ldt != 0;
	if (ldt != oldt)
		return ldt > oldt;
	return bytes_cmp(ov, v) < 0;
}

/*
 * Make room for @len value bytes in cell @i of *@rp: in place when the
 * cell's space holds them, else at the row's free tail, else in a new
 * allocation with every value compacted (*@rp then changes). 0 or -ENOMEM
 * with the row unchanged.
 */
static __attribute__((noinline)) int
row_reserve(struct row **rp, unsigned ncells, unsigned i, uint32_t len)
{
	struct row *r = *rp, *nr;
	size_t hdr = sizeof(*r) + (size_t)ncells * sizeof(struct cell), need = hdr + len;
	uint32_t off;
	unsigned j;

	if (len <= r->cells[i].cap)
		return 0;
	if ((size_t)r->used + len <= r->size) {
		r->cells[i].off = r->used;
		r->cells[i].cap = len;
		r->used += len;
		return 0;
	}
	for (j = 0; j < ncells; j++)
		if (j != i && !r->cells[j].is_coll)
			need += r->cells[j].len;
	/* half as much again: a row written cell by cell (UPDATE after
	 * UPDATE) moves about log(cells) times, not once per cell */
	need += (need - hdr) / 2;
	if (need > UINT32_MAX)
		return -ENOMEM;
	nr = sm_malloc(need);
	if (nr == NULL)
		return -ENOMEM;
	memcpy(nr, r, hdr);
	off = (uint32_t)hdr;
	for (j = 0; j < ncells; j++) {
		struct cell *c = &nr->cells[j];

		if (c->is_coll)
			continue;
		if (j == i) {
			c->off = off;
			c->cap = len;
			off += len;
			continue;
		}
		if (c->len)
			memcpy((uint8_t *)nr + off, (const uint8_t *)r + c->off, c->len);
		c->off = off;
		c->cap = c->len;
		off += c->len;
	}
	nr->used = off;
	nr->size = (uint32_t)SM_MIN(sm_usable_size(nr), (size_t)UINT32_MAX);
	sm_free(r);
	*rp = nr;
	return 0;
}

/*
 * Store @v (the cell's stamp is the caller's) in cell @i of *@rp. Inline:
 * an overwrite that fits (the common write) costs a compare and the copy.
 */
static inline int
cell_set_value(struct row **rp, unsigned ncells, unsigned i, struct sm_bytes v)
{
	struct row *r = *rp;
	struct cell *c = &r->cells[i];

	if (SM_UNLIKELY(v.len > c->cap)) {
		if ((size_t)r->used + v.len <= r->size) {
			/* the row's tail (a new row has room for its first values) */
			c->off = r->used;
			c->cap = v.len;
			r->used += v.len;
		} else if (row_reserve(rp, ncells, i, v.len) < 0) {
			return -ENOMEM;
		} else {
			c = &(*rp)->cells[i];
		}
	}
	/* a NULL pointer comes with tombstones and empty values: memmove
	 * from NULL is undefined even for 0 bytes */
	if (v.len)
		memmove((uint8_t *)*rp + c->off, v.p, v.len);
	c->len = v.len;
	return 0;
}

/*
 * Write cell @i of the row at *@rp (which may move). Inlined into the
 * write path: called, its nine arguments cost a write more than the
 * separate value buffers did (perf-simple-query's insns/op).
 */
static inline __attribute__((always_inline)) int
cell_write(struct row **rp, unsigned ncells, unsigned i, int64_t ts, bool tomb, struct sm_bytes v,
	   int32_t ldt, int32_t now)
{
	struct cell *c = &(*rp)->cells[i];
	struct sm_bytes none = { NULL, 0 };
	int ret;

	if (!wins(c->ts, c->tomb, cell_bytes(*rp, c), c->ldt, ts, tomb, v, ldt, now))
		return 0;
	ret = cell_set_value(rp, ncells, i, tomb ? none : v);
	if (ret < 0)
		return ret;
	c = &(*rp)->cells[i];
	c->ts = ts;
	c->tomb = tomb;
	c->ldt = ldt;
	return 0;
}

static int
ecell_write(struct ecell *c, int64_t ts, bool tomb, struct sm_bytes v, int32_t ldt, int32_t now)
{
	if (!wins(c->ts, c->tomb, val_bytes(&c->v), c->ldt, ts, tomb, v, ldt, now))
		return 0;
	c->ts = ts;
	c->tomb = tomb;
	c->ldt = ldt;
	return val_set(&c->v, v.p, tomb ? 0 : v.len);
}

/* Row shadow: the newest tombstone that covers it. */
static int64_t
row_shadow(const struct sm_table *t, const struct part *p, const struct row *r,
	   const struct sm_key *ck)
{
	int64_t sh = SM_MAX(p->del_ts, r->del_ts);
	uint32_t i;

	for (i = 0; p->rt != NULL && i < p->rt->n; i++) {
		const struct rtomb *rt = &p->rt->v[i];
		struct sm_ck_bound b;

		if (rt->ts <= sh)
			continue;
		val_key(&rt->start, &b.prefix);
		b.inclusive = rt->start_incl;
		if (!after_start(t, ck, &b))
			continue;
		val_key(&rt->end, &b.prefix);
		b.inclusive = rt->end_incl;
		if (!before_end(t, ck, &b))
			continue;
		sh = rt->ts;
	}
	return sh;
}

static bool
row_live(const struct sm_table *t, const struct row *r, int64_t shadow, int32_t now)
{
	unsigned i;

	if (r->marker_ts != TS_NONE && r->marker_ts > shadow && !expired(r->marker_ldt, now))
		return true;
	for (i = 0; i < t->nregular; i++)
		if (slot_live(&r->cells[i], shadow, now))
			return true;
	return false;
}

static bool
static_live(const struct sm_table *t, const struct part *p, int32_t now)
{
	unsigned i;

	if (p->srow == NULL)
		return false;
	for (i = 0; i < t->nstatic; i++)
		if (slot_live(&p->srow->cells[i], p->del_ts, now))
			return true;
	return false;
}

/* ---- memory ---- */

static void
coll_free(struct coll *co)
{
	uint32_t i;

	for (i = 0; i < co->n; i++) {
		val_free(&co->e[i].key);
		val_free(&co->e[i].c.v);
	}
	sm_free(co->e);
	sm_free(co);
}

static void
row_free(struct row *r, unsigned ncells)
{
	unsigned i;

	for (i = 0; i < ncells; i++)
		if (r->cells[i].is_coll)
			coll_free(r->cells[i].coll);
	val_free(&r->ck);
	sm_free(r);
}

/*
 * A row of @ncells empty cells with room for @values bytes of values (what
 * the write that creates it brings: no move for its first values).
 */
static struct row *
row_new(const struct sm_table *t, unsigned ncells, bool statics, size_t values)
{
	size_t hdr = sizeof(struct row) + ncells * sizeof(struct cell);
	struct row *r;
	unsigned i,
		base = statics ? (unsigned)t->npk + t->nck : (unsigned)t->npk + t->nck + t->nstatic;

	if (values > UINT32_MAX - hdr)
		return NULL;
	r = sm_malloc(hdr + values);
	if (r == NULL)
		return NULL;
	memset(r, 0, hdr);
	r->marker_ts = TS_NONE;
	r->del_ts = TS_NONE;
	r->used = (uint32_t)hdr;
	r->size = (uint32_t)SM_MIN(sm_usable_size(r), (size_t)UINT32_MAX);
	for (i = 0; i < ncells; i++) {
		const struct sm_column *col = &t->cols[base + i];

		r->cells[i].ts = TS_NONE;
		r->cells[i].off = (uint32_t)hdr;
		if (sm_type_is_multicell(col->type)) {
			r->cells[i].is_coll = 1;
			r->cells[i].coll = sm_calloc(1, sizeof(struct coll));
			if (r->cells[i].coll == NULL) {
				r->cells[i].is_coll = 0;
				row_free(r, ncells);
				return NULL;
			}
			r->cells[i].coll->tomb_ts = TS_NONE;
		}
	}
	return r;
}

static void
part_free(const struct sm_table *t, struct part *p)
{
	uint32_t i;

	for (i = 0; i < p->nrows; i++)
		row_free(p->rows[i], t->nregular);
	if (p->rows != &p->row1)
		sm_free(p->rows);
	if (p->srow != NULL)
		row_free(p->srow, t->nstatic);
	for (i = 0; p->rt != NULL && i < p->rt->n; i++) {
		val_free(&p->rt->v[i].start);
		val_free(&p->rt->v[i].end);
	}
	sm_free(p->rt);
	val_free(&p->key);
	sm_free(p);
}

/* ---- the partition index ---- */

static inline uint64_t
slot_of(unsigned bits, int64_t token)
{
	return ((uint64_t)token ^ (1ull << 63)) >> (64 - bits);
}

static int
part_cmp(const struct part *p, int64_t token, struct sm_bytes key)
{
	if (p->token != token)
		return p->token < token ? -1 : 1;
	return val_cmp_bytes(&p->key, key);
}

/*
 * The first partition not before (@token, @key), or NULL; *@prev gets the
 * one before it (NULL: it is the first).
 */
static struct part *
dir_seek(const struct sm_ptable *pt, int64_t token, struct sm_bytes key, struct part **prev)
{
	uint64_t b = slot_of(pt->dir_bits, token), i;
	struct part *p = pt->dir[b], *q = NULL;

	if (p != NULL && part_cmp(p, token, key) < 0) {
		do {
			q = p;
			p = p->next;
		} while (p != NULL && part_cmp(p, token, key) < 0);
		*prev = q;
		return p;
	}
	/* before the slot's first: after the last of the nearest slot below
	 * that has one (with a slot per partition, about one slot away) */
	for (i = b; i-- > 0;)
		if ((q = pt->dir[i]) != NULL)
			break;
	if (q == NULL) {
		*prev = NULL;
		return pt->first;
	}
	while (q->next != NULL && slot_of(pt->dir_bits, q->next->token) == i)
		q = q->next;
	*prev = q;
	return q->next;
}

static struct part *
part_find(const struct sm_ptable *pt, int64_t token, struct sm_bytes key)
{
	uint64_t b = slot_of(pt->dir_bits, token);
	struct part *p;

	for (p = pt->dir[b]; p != NULL && p->token <= token; p = p->next)
		if (p->token == token && val_cmp_bytes(&p->key, key) == 0)
			return p;
	return NULL;
}

/* Twice the slots: the list stays, each slot finds its first partition. */
static int
grow_dir(struct sm_ptable *pt)
{
	unsigned bits = pt->dir_bits + 1;
	struct part **d = sm_calloc((size_t)1 << bits, sizeof(*d));
	struct part *p;

	if (d == NULL)
		return -ENOMEM;
	for (p = pt->first; p != NULL; p = p->next) {
		uint64_t b = slot_of(bits, p->token);

		if (d[b] == NULL)
			d[b] = p;
	}
	sm_free(pt->dir);
	pt->dir = d;
	pt->dir_bits = bits;
	return 0;
}

static struct part *
part_create(struct sm_ptable *pt, int64_t token, struct sm_bytes key)
{
	struct part *p, *prev;
	uint64_t b;

	if (pt->count + 1 > (1ull << pt->dir_bits) && grow_dir(pt) < 0)
		return NULL;
	p = sm_calloc(1, sizeof(*p));
	if (p == NULL)
		return NULL;
	p->token = token;
	p->del_ts = TS_NONE;
	if (val_set(&p->key, key.p, key.len) < 0) {
		sm_free(p);
		return NULL;
	}
	p->next = dir_seek(pt, token, key, &prev);
	if (prev != NULL)
		prev->next = p;
	else
		pt->first = p;
	b = slot_of(pt->dir_bits, token);
	if (pt->dir[b] == NULL || pt->dir[b] == p->next)
		pt->dir[b] = p;
	pt->count++;
	return p;
}

struct sm_ptable *
sm_ptable_new(const struct sm_table *t)
{
	struct sm_ptable *pt = sm_calloc(1, sizeof(*pt));
	unsigned i;

	if (pt == NULL)
		return NULL;
	pt->t = t;
	pt->dir_bits = DIR_MIN_BITS;
	pt->dir = sm_calloc((size_t)1 << pt->dir_bits, sizeof(*pt->dir));
	if (pt->dir == NULL) {
		sm_free(pt);
		return NULL;
	}
	for (i = 0; i < t->ncols; i++)
		if (sm_type_is_multicell(t->cols[i].type))
			pt->ncoll++;
	return pt;
}

void
sm_ptable_truncate(struct sm_ptable *pt)
{
	struct part *p, *next;

	for (p = pt->first; p != NULL; p = next) {
		next = p->next;
		part_free(pt->t, p);
	}
	memset(pt->dir, 0, ((size_t)1 << pt->dir_bits) * sizeof(*pt->dir));
	pt->first = NULL;
	pt->count = 0;
}

void
sm_ptable_free(struct sm_ptable *pt)
{
	if (pt == NULL)
		return;
	sm_ptable_truncate(pt);
	sm_free(pt->dir);
	sm_free(pt);
}

/*
 * For each static (@kind SM_COL_STATIC) or regular cell slot of @t, the
 * slot of the same column in @old, or -1 (a new column, or one whose
 * storage changed between one cell and one per element). True when every
 * slot maps to itself and the counts match: the rows need not move.
 */
static bool
slot_map(const struct sm_table *old, const struct sm_table *t, enum sm_col_kind kind, int32_t *map)
{
	unsigned i, base = (unsigned)t->npk + t->nck + (kind == SM_COL_REGULAR ? t->nstatic : 0);
	unsigned n = kind == SM_COL_REGULAR ? t->nregular : t->nstatic;
	unsigned on = kind == SM_COL_REGULAR ? old->nregular : old->nstatic;
	bool same = n == on;

	for (i = 0; i < n; i++) {
		const struct sm_column *c = &t->cols[base + i];
		const struct sm_column *oc = sm_table_column(old, c->name);

		map[i] = oc != NULL && oc->kind == kind &&
				 sm_type_is_multicell(oc->type) == sm_type_is_multicell(c->type)
			 ? (int32_t)oc->pos
			 : -1;
		same = same && map[i] == (int32_t)i;
	}
	return same;
}

/* The bytes of @r's values (its @ncells cells'). */
static size_t
row_value_bytes(const struct row *r, unsigned ncells)
{
	size_t n = 0;
	unsigned i;

	for (i = 0; i < ncells; i++)
		if (!r->cells[i].is_coll)
			n += r->cells[i].len;
	return n;
}

/*
 * Move @r's cells into *@nrp, of the new layout, made with room for all of
 * @r's values (so nothing here allocates): collections move, values are
 * copied; @r is freed.
 */
static void
row_move(struct row **nrp, struct row *r, const int32_t *map, unsigned n, unsigned on)
{
	struct row *nr = *nrp;
	unsigned i;

	nr->ck = r->ck;
	nr->marker_ts = r->marker_ts;
	nr->marker_ldt = r->marker_ldt;
	nr->del_ts = r->del_ts;
	nr->del_ldt = r->del_ldt;
	memset(&r->ck, 0, sizeof(r->ck));
	for (i = 0; i < n; i++) {
		struct cell *oc;

		if (map[i] < 0)
			continue;
		oc = &r->cells[map[i]];
		if (oc->is_coll) {
			coll_free(nr->cells[i].coll);
			nr->cells[i].coll = oc->coll;
			oc->is_coll = 0;
			continue;
		}
		cell_set_value(nrp, n, i, cell_bytes(r, oc));
		nr = *nrp;
		nr->cells[i].ts = oc->ts;
		nr->cells[i].ldt = oc->ldt;
		nr->cells[i].tomb = oc->tomb;
	}
	row_free(r, on);
}

/* New rows for every row (@statics: every static row) of @pt; false when out of memory. */
static bool
fresh_rows(struct sm_ptable *pt, const struct sm_table *t, bool statics, struct row ***out,
	   size_t *n)
{
	unsigned on = statics ? pt->t->nstatic : pt->t->nregular;
	struct row **v;
	struct part *p;
	size_t k = 0;
	unsigned i;

	*n = 0;
	for (p = pt->first; p != NULL; p = p->next)
		*n += statics ? p->srow != NULL : p->nrows;
	v = sm_malloc((*n + 1) * sizeof(*v));
	if (v == NULL)
		return false;
	for (p = pt->first; p != NULL; p = p->next) {
		for (i = 0; i < (statics ? (p->srow != NULL) : p->nrows); i++) {
			v[k] = row_new(t, statics ? t->nstatic : t->nregular, statics,
				       row_value_bytes(statics ? p->srow : p->rows[i], on));
			if (v[k] == NULL) {
				while (k-- > 0)
					row_free(v[k], statics ? t->nstatic : t->nregular);
				sm_free(v);
				return false;
			}
			k++;
		}
	}
	*out = v;
	return true;
}

int
sm_ptable_reschema(struct sm_ptable *pt, const struct sm_table *t)
{
	const struct sm_table *old = pt->t;
	int32_t *rmap, *smap;
	struct row **fr = NULL, **fs = NULL;
	size_t nr = 0, ns = 0, kr = 0, ks = 0;
	struct part *p;
	bool same_r, same_s;
	unsigned i;
	int ret = -ENOMEM;

	rmap = sm_calloc((size_t)t->nregular + 1, sizeof(*rmap));
	smap = sm_calloc((size_t)t->nstatic + 1, sizeof(*smap));
	if (rmap == NULL || smap == NULL)
		goto out;
	same_r = slot_map(old, t, SM_COL_REGULAR, rmap);
	same_s = slot_map(old, t, SM_COL_STATIC, smap);
	/* every new row first, so that running out of memory changes nothing */
	if (!same_r && !fresh_rows(pt, t, false, &fr, &nr))
		goto out;
	if (!same_s && !fresh_rows(pt, t, true, &fs, &ns)) {
		while (nr-- > 0)
			row_free(fr[nr], t->nregular);
		goto out;
	}
	for (p = pt->first; p != NULL; p = p->next) {
		for (i = 0; !same_r && i < p->nrows; i++) {
			row_move(&fr[kr], p->rows[i], rmap, t->nregular, old->nregular);
			p->rows[i] = fr[kr++];
		}
		if (!same_s && p->srow != NULL) {
			row_move(&fs[ks], p->srow, smap, t->nstatic, old->nstatic);
			p->srow = fs[ks++];
		}
	}
	pt->t = t;
	pt->ncoll = 0;
	for (i = 0; i < t->ncols; i++)
		if (sm_type_is_multicell(t->cols[i].type))
			pt->ncoll++;
	ret = 0;
out:
	sm_free(fr);
	sm_free(fs);
	sm_free(rmap);
	sm_free(smap);
	return ret;
}

const struct sm_table *
sm_ptable_schema(const struct sm_ptable *pt)
{
	return pt->t;
}

uint64_t
sm_ptable_count(const struct sm_ptable *pt)
{
	return pt->count;
}

/* ---- rows ---- */

/* Index of the first row not before @ck (lower bound). */
static uint32_t
row_lower(const struct sm_table *t, const struct part *p, const struct sm_key *ck, bool *found)
{
	uint32_t lo = 0, hi = p->nrows;
	struct sm_key rk;

	*found = false;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c;

		val_key(&p->rows[mid]->ck, &rk);
		c = ck_cmp(t, &rk, ck);
		if (c < 0) {
			lo = mid + 1;
		} else {
			if (c == 0)
				*found = true;
			hi = mid;
		}
	}
	return lo;
}

static size_t
mut_values(const struct sm_table *t, const struct sm_mutation *m, enum sm_col_kind kind);

/*
 * The slot of the row at @ck, or NULL; a missing row is created when
 * @create, with room for the values of that write. The slot stays where it
 * is until a row is added to or dropped from @p.
 */
static struct row **
row_get(const struct sm_table *t, struct part *p, const struct sm_key *ck,
	const struct sm_mutation *create)
{
	uint8_t buf[SM_MAX_KEY_BYTES];
	bool found;
	uint32_t i = row_lower(t, p, ck, &found);
	struct row *r;
	size_t len;

	if (found)
		return &p->rows[i];
	if (create == NULL)
		return NULL;
	len = sm_key_encode(ck, buf, sizeof(buf));
	if (len > sizeof(buf))
		return NULL;
	if (p->rowcap == 0) {
		/* most partitions hold one row: its pointer in the partition */
		p->rows = &p->row1;
		p->rowcap = 1;
	} else if (p->nrows == p->rowcap) {
		uint32_t cap = p->rowcap * 2 < 4 ? 4 : p->rowcap * 2;
		struct row **v = sm_realloc(p->rows == &p->row1 ? NULL : p->rows, cap * sizeof(*v));

		if (v == NULL)
			return NULL;
		if (p->rows == &p->row1)
			v[0] = p->row1;
		p->rows = v;
		p->rowcap = cap;
	}
	r = row_new(t, t->nregular, false, mut_values(t, create, SM_COL_REGULAR));
	if (r == NULL)
		return NULL;
	if (val_set(&r->ck, buf, (uint32_t)len) < 0) {
		row_free(r, t->nregular);
		return NULL;
	}
	memmove(&p->rows[i + 1], &p->rows[i], (p->nrows - i) * sizeof(*p->rows));
	p->rows[i] = r;
	p->nrows++;
	return &p->rows[i];
}

/* Drop from @r everything a tombstone at @ts shadows. */
static void
row_purge(const struct sm_table *t, struct row *r, unsigned ncells, int64_t ts)
{
	unsigned i;

	(void)t;
	if (r->marker_ts != TS_NONE && r->marker_ts <= ts)
		r->marker_ts = TS_NONE;
	for (i = 0; i < ncells; i++) {
		struct cell *c = &r->cells[i];

		if (c->is_coll) {
			struct coll *co = c->coll;
			uint32_t j, k = 0;

			for (j = 0; j < co->n; j++) {
				if (co->e[j].c.ts <= ts) {
					val_free(&co->e[j].key);
					val_free(&co->e[j].c.v);
				} else {
					co->e[k++] = co->e[j];
				}
			}
			co->n = k;
			if (co->tomb_ts <= ts)
				co->tomb_ts = TS_NONE;
		} else if (c->ts != TS_NONE && c->ts <= ts) {
			c->ts = TS_NONE; /* its space stays for the next value */
			c->tomb = false;
			c->len = 0;
		}
	}
}

static bool
row_empty(const struct row *r, unsigned ncells)
{
	unsigned i;

	if (r->marker_ts != TS_NONE || r->del_ts != TS_NONE)
		return false;
	for (i = 0; i < ncells; i++) {
		if (r->cells[i].is_coll
			    ? r->cells[i].coll->n > 0 || r->cells[i].coll->tomb_ts != TS_NONE
			    : r->cells[i].ts != TS_NONE)
			return false;
	}
	return true;
}

static void
part_purge(const struct sm_table *t, struct part *p)
{
	uint32_t i, k = 0;

	for (i = 0; i < p->nrows; i++) {
		struct row *r = p->rows[i];

		row_purge(t, r, t->nregular, p->del_ts);
		if (r->del_ts != TS_NONE && r->del_ts <= p->del_ts)
			r->del_ts = TS_NONE;
		if (row_empty(r, t->nregular))
			row_free(r, t->nregular);
		else
			p->rows[k++] = r;
	}
	p->nrows = k;
	if (p->srow != NULL)
		row_purge(t, p->srow, t->nstatic, p->del_ts);
	for (i = 0, k = 0; p->rt != NULL && i < p->rt->n; i++) {
		if (p->rt->v[i].ts <= p->del_ts) {
			val_free(&p->rt->v[i].start);
			val_free(&p->rt->v[i].end);
		} else {
			p->rt->v[k++] = p->rt->v[i];
		}
	}
	if (p->rt != NULL)
		p->rt->n = k;
}

/* ---- collections ---- */

/* Index of the element with @key, or where it would go. */
static uint32_t
elem_find(const struct coll *co, const struct sm_type *kt, struct sm_bytes key, bool *found)
{
	uint32_t lo = 0, hi = co->n;

	*found = false;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = sm_value_compare(kt, val_bytes(&co->e[mid].key), key);

		if (c < 0) {
			lo = mid + 1;
		} else {
			if (c == 0)
				*found = true;
			hi = mid;
		}
	}
	return lo;
}

static int
elem_write(struct coll *co, const struct sm_type *kt, struct sm_bytes key, int64_t ts, bool tomb,
	   struct sm_bytes v, int32_t ldt, int32_t now)
{
	bool found;
	uint32_t i = elem_find(co, kt, key, &found);
	struct elem *e;

	if (!found) {
		if (co->n == co->cap) {
			uint32_t cap = co->cap ? co->cap * 2 : 4;
			struct elem *ne = sm_realloc(co->e, cap * sizeof(*ne));

			if (ne == NULL)
				return -ENOMEM;
			co->e = ne;
			co->cap = cap;
		}
		memmove(&co->e[i + 1], &co->e[i], (co->n - i) * sizeof(*co->e));
		e = &co->e[i];
		memset(e, 0, sizeof(*e));
		e->c.ts = TS_NONE;
		co->n++;
		if (val_set(&e->key, key.p, key.len) < 0)
			return -ENOMEM;
	}
	return ecell_write(&co->e[i].c, ts, tomb, v, ldt, now);
}

/*
 * The type a collection's cells are keyed by: a list's by timeuuid, a
 * non-frozen user type's by field index (a smallint, as ScyllaDB keys them:
 * types/user.hh serialize_field_index()).
 */
static const struct sm_type *
coll_key_type(const struct sm_type *t)
{
	if (t->kind == SM_TYPE_UDT)
		return sm_type_simple(SM_TYPE_SMALLINT);
	return t->kind == SM_TYPE_LIST ? sm_type_simple(SM_TYPE_TIMEUUID) : t->elem;
}

/* The 2-byte cell key of field @i. */
static void
field_key(unsigned i, uint8_t out[2])
{
	out[0] = (uint8_t)(i >> 8);
	out[1] = (uint8_t)i;
}

/*
 * the last list key tick handed out by an append on this shard. Keys
 * came from ts * 10 + position alone, so two appends with the same
 * timestamp interleaved their elements ([1, 2] then [3, 4] read [1, 3, 2,
 * 4]), and an append of more than 10 elements overlapped the next
 * microsecond's. Appends now take keys above every earlier one.
 */
static __thread uint64_t list_last_ticks;

/* A timeuuid list key from a 60-bit tick count, unique per shard. */
static void
list_key(uint64_t ticks, uint8_t out[16])
{
	static __thread uint16_t seq;
	uint64_t lsb = ((uint64_t)0x80 << 56) | ((uint64_t)sm_shard_id() << 16) | seq++;
	unsigned i;

	out[0] = (uint8_t)(ticks >> 24);
	out[1] = (uint8_t)(ticks >> 16);
	out[2] = (uint8_t)(ticks >> 8);
	out[3] = (uint8_t)ticks;
	out[4] = (uint8_t)(ticks >> 40);
	out[5] = (uint8_t)(ticks >> 32);
	out[6] = (uint8_t)(0x10 | ((ticks >> 56) & 0x0f));
	out[7] = (uint8_t)(ticks >> 48);
	for (i = 0; i < 8; i++)
		out[8 + i] = (uint8_t)(lsb >> (56 - 8 * i));
}

static uint64_t
key_ticks(struct sm_bytes k)
{
	return ((uint64_t)(k.p[6] & 0x0f) << 56) | (uint64_t)k.p[7] << 48 | (uint64_t)k.p[4] << 40 |
	       (uint64_t)k.p[5] << 32 | (uint64_t)k.p[0] << 24 | (uint64_t)k.p[1] << 16 |
	       (uint64_t)k.p[2] << 8 | k.p[3];
}

/* Live element @idx of a list (by position), or -1. */
static int64_t
list_index(const struct coll *co, int64_t shadow, int32_t now, uint32_t idx)
{
	uint32_t i, n = 0;
	int64_t sh = SM_MAX(shadow, co->tomb_ts);

	for (i = 0; i < co->n; i++) {
		if (!ecell_live(&co->e[i].c, sh, now))
			continue;
		if (n++ == idx)
			return i;
	}
	return -1;
}

static uint32_t
be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Live elements of a list. */
static uint32_t
list_size(const struct coll *co, int64_t shadow, int32_t now)
{
	uint32_t i, n = 0;
	int64_t sh = SM_MAX(shadow, co->tomb_ts);

	for (i = 0; i < co->n; i++)
		n += ecell_live(&co->e[i].c, sh, now);
	return n;
}

static int
coll_op(const struct sm_table *t, const struct sm_column *col, struct cell *slot, int64_t shadow,
	const struct sm_cell_op *op, int64_t ts, int32_t ldt, int32_t now, char *err, size_t errlen)
{
	const struct sm_type *ty = col->type;
	const struct sm_type *kt = coll_key_type(ty);
	struct coll *co = slot->coll;
	bool is_map = ty->kind == SM_TYPE_MAP;
	struct sm_coll_iter it;
	struct sm_bytes k, v, none = { NULL, 0 };
	uint8_t lk[16];
	int ret = 0;

	(void)t;
	switch (op->kind) {
	case SM_CELL_DELETE:
		if (ts > co->tomb_ts) {
			co->tomb_ts = ts;
			co->tomb_ldt = now;
		}
		return 0;
	case SM_CELL_SET:
		/* Overwrite: a collection tombstone just below the write. */
		if (ts - 1 > co->tomb_ts) {
			co->tomb_ts = ts - 1;
			co->tomb_ldt = now;
		}
		if (op->null)
			return 0;
		if (ty->kind == SM_TYPE_UDT) {
			/* one cell per non-null field; the tombstone covers the others */
			uint8_t fk[2];
			unsigned i = 0;

			sm_tuple_iter_init(&it, op->value);
			while (sm_tuple_next(&it, &v)) {
				field_key(i++, fk);
				if (v.len == SM_FIELD_NULL)
					continue;
				ret = elem_write(co, kt, (struct sm_bytes){ fk, 2 }, ts, false, v,
						 ldt, now);
				if (ret < 0)
					return ret;
			}
			return 0;
		}
		/* fallthrough */
	case SM_CELL_APPEND:
	case SM_CELL_PREPEND: {
		uint64_t base = (uint64_t)ts * 10 + 0x01B21DD213814000ull;
		uint32_t n = 0, i = 0;

		if (sm_coll_iter_init(&it, op->value) < 0)
			goto malformed;
		if (ty->kind == SM_TYPE_LIST && op->kind == SM_CELL_PREPEND) {
			/* Keys below every existing element, in order. */
			uint64_t min = co->n ? key_ticks(val_bytes(&co->e[0].key)) : base;

			/* the first prepend to an empty list takes keys below
			 * every later append's (see list_last_ticks): prepended
			 * elements stay before appended ones, as in Cassandra,
			 * whatever the timestamps. */
			if (co->n == 0) {
				min = SM_MAX(min, list_last_ticks + 1);
				list_last_ticks = min;
			}
			n = it.left;
			base = (min > n + 1 ? min : n + 1) - n - 1;
		} else if (ty->kind == SM_TYPE_LIST && base <= list_last_ticks) {
			base = list_last_ticks + 1; /* see list_last_ticks */
		}
		while (sm_coll_next(&it, &k, is_map ? &v : NULL, is_map)) {
			if (ty->kind == SM_TYPE_LIST) {
				list_key(base + i++, lk);
				ret = elem_write(co, kt, (struct sm_bytes){ lk, 16 }, ts, false, k,
						 ldt, now);
			} else if (ty->kind == SM_TYPE_SET) {
				ret = elem_write(co, kt, k, ts, false, none, ldt, now);
			} else {
				ret = elem_write(co, kt, k, ts, false, v, ldt, now);
			}
			if (ret < 0)
				return ret;
		}
		if (sm_coll_iter_error(&it))
			goto malformed;
		if (ty->kind == SM_TYPE_LIST && op->kind != SM_CELL_PREPEND && i > 0)
			list_last_ticks = base + i - 1;
		return 0;
	}
	case SM_CELL_REMOVE:
		if (sm_coll_iter_init(&it, op->value) < 0)
			goto malformed;
		while (sm_coll_next(&it, &k, NULL, false)) {
			if (ty->kind == SM_TYPE_LIST) {
				uint32_t i;
				int64_t sh = SM_MAX(shadow, co->tomb_ts);

				/* Remove every element equal to the value (read-before-write,
				 * as in Cassandra). */
				for (i = 0; i < co->n; i++)
					if (ecell_live(&co->e[i].c, sh, now) &&
					    sm_value_compare(ty->elem, val_bytes(&co->e[i].c.v),
							     k) == 0)
						ecell_write(&co->e[i].c, ts, true, none, now, now);
			} else {
				ret = elem_write(co, kt, k, ts, true, none, now, now);
				if (ret < 0)
					return ret;
			}
		}
		if (sm_coll_iter_error(&it))
			goto malformed;
		return 0;
	case SM_CELL_SET_ELEM:
	case SM_CELL_DELETE_ELEM:
		if (ty->kind == SM_TYPE_LIST) {
			int64_t i;
			uint32_t idx;

			if (op->key.len != 4)
				goto malformed;
			idx = be32(op->key.p);
			i = list_index(co, shadow, now, idx);
			if (i < 0) {
				/* list_index_check() refuses this before anything is
				 * applied; here only a second index operation on the same
				 * list in one mutation can miss. The message printed the
				 * index as the size. */
				if (op->kind == SM_CELL_DELETE_ELEM)
					return 0;
				snprintf(err, errlen,
					 "List index %d out of bound, list has size %u",
					 (int32_t)idx, list_size(co, shadow, now));
				return -EINVAL;
			}
			return ecell_write(&co->e[i].c, ts,
					   op->kind == SM_CELL_DELETE_ELEM || op->null, op->value,
					   op->kind == SM_CELL_DELETE_ELEM || op->null ? now : ldt,
					   now);
		}
		if (op->kind == SM_CELL_DELETE_ELEM || op->null)
			return elem_write(co, kt, op->key, ts, true, none, now, now);
		return elem_write(co, kt, op->key, ts, false,
				  ty->kind == SM_TYPE_SET ? none : op->value, ldt, now);
	default:
		snprintf(err, errlen, "Invalid operation on collection column %s", col->name);
		return -EINVAL;
	}
malformed:
	snprintf(err, errlen, "Invalid collection value for column %s", col->name);
	return -EINVAL;
}

/* ---- writes ---- */

/*
 * only SET values were validated; the values of APPEND, PREPEND,
 * REMOVE and element operations were stored as given (a 1-byte element in
 * a list<int>), and a malformed one failed half-way through coll_op() with
 * the elements before it applied. Validated here before anything is written.
 */
static int
coll_op_validate(const struct sm_column *col, const struct sm_cell_op *op, char *err, size_t errlen)
{
	const struct sm_type *ty = col->type;
	bool is_map = ty->kind == SM_TYPE_MAP;
	struct sm_coll_iter it;
	struct sm_bytes k;
	unsigned fi;

	if (ty->kind == SM_TYPE_UDT) {
		/* a whole value, or one field by its 2-byte index */
		switch (op->kind) {
		case SM_CELL_SET:
		case SM_CELL_DELETE:
			return 0;
		case SM_CELL_SET_ELEM:
		case SM_CELL_DELETE_ELEM:
			if (op->key.len != 2 || (fi = (unsigned)op->key.p[0] << 8 | op->key.p[1]) >=
							ty->nfields)
				goto malformed;
			if (op->kind == SM_CELL_SET_ELEM && !op->null)
				return sm_value_validate(ty->fields[fi], op->value, err, errlen);
			return 0;
		default:
			snprintf(err, errlen, "Invalid operation for user type column %s",
				 col->name);
			return -EINVAL;
		}
	}
	switch (op->kind) {
	case SM_CELL_APPEND:
	case SM_CELL_PREPEND:
		return sm_value_validate(ty, op->value, err, errlen);
	case SM_CELL_REMOVE:
		if (!is_map)
			return sm_value_validate(ty, op->value, err, errlen);
		/* map - {keys}: a set of keys */
		if (sm_coll_iter_init(&it, op->value) < 0)
			goto malformed;
		while (sm_coll_next(&it, &k, NULL, false))
			if (sm_value_validate(ty->elem, k, err, errlen) < 0)
				return -EINVAL;
		if (sm_coll_iter_error(&it))
			goto malformed;
		return 0;
	case SM_CELL_SET_ELEM:
	case SM_CELL_DELETE_ELEM:
		if (ty->kind != SM_TYPE_LIST &&
		    sm_value_validate(ty->elem, op->key, err, errlen) < 0)
			return -EINVAL;
		if (op->kind == SM_CELL_SET_ELEM && !op->null && ty->kind != SM_TYPE_SET)
			return sm_value_validate(is_map ? ty->val : ty->elem, op->value, err,
						 errlen);
		return 0;
	default:
		return 0;
	}
malformed:
	snprintf(err, errlen, "Invalid collection value for column %s", col->name);
	return -EINVAL;
}

/* Add @delta to counter cell @ci of the row at *@rp (which may move). */
static int
counter_add(struct row **rp, unsigned ncells, unsigned ci, int64_t shadow, int64_t ts,
	    struct sm_bytes delta, int32_t now)
{
	struct cell *c = &(*rp)->cells[ci];
	int64_t cur = 0, d = 0;
	uint8_t out[8];
	unsigned i;
	int ret;

	for (i = 0; i < 8; i++)
		d = (int64_t)((uint64_t)d << 8 | delta.p[i]);
	if (cell_live(c, shadow, now) && c->len == 8) {
		const uint8_t *v = cell_bytes(*rp, c).p;

		for (i = 0; i < 8; i++)
			cur = (int64_t)((uint64_t)cur << 8 | v[i]);
	} else if (ts <= shadow || (c->ts != TS_NONE && c->tomb && ts <= c->ts))
		return 0; /* a delete at or after this increment hides it (the
			   * cell's own tombstone, DELETE c, was not counted) */
	cur = (int64_t)((uint64_t)cur + (uint64_t)d);
	for (i = 0; i < 8; i++)
		out[i] = (uint8_t)((uint64_t)cur >> (56 - 8 * i));
	ret = cell_set_value(rp, ncells, ci, (struct sm_bytes){ out, 8 });
	if (ret < 0)
		return ret;
	c = &(*rp)->cells[ci];
	c->ts = SM_MAX(c->ts, ts);
	c->tomb = false;
	c->ldt = 0;
	return 0;
}

static int
check_key(const struct sm_table *t, const struct sm_key *k, unsigned want, unsigned first,
	  const char *what, char *err, size_t errlen)
{
	unsigned i;

	if (k->n != want) {
		snprintf(err, errlen, "%s key has %u components, table %s.%s needs %u", what, k->n,
			 t->ks, t->name, want);
		return -EINVAL;
	}
	for (i = 0; i < k->n; i++) {
		const struct sm_column *col = &t->cols[first + i];

		/* a compound key's serialized form is never empty (ScyllaDB's
		 * validation.cc validate_cql_key()): only a single empty component
		 * is; an index's view keeps the empty value it indexes, a
		 * materialized view the empty value of its key column */
		if (k->part[i].len == 0 && first == 0 && want == 1 && !sm_table_is_index(t) &&
		    !sm_table_is_mv(t)) {
			snprintf(err, errlen, "Key may not be empty");
			return -EINVAL;
		}
		if (sm_value_validate(col->type, k->part[i], err, errlen) < 0)
			return -EINVAL;
	}
	return 0;
}

/*
 * list[index] = v and DELETE list[index] read the list and fail on a
 * null list or an index out of bounds, with Cassandra's messages. The
 * check ran while applying, so a failing statement left its earlier
 * operations applied, a DELETE out of bounds silently did nothing and the
 * message gave the index as the size. Checked here before anything is
 * written.
 */
static int
list_index_check(struct sm_ptable *pt, const struct sm_mutation *m, const struct sm_cell_op *op,
		 int32_t now, char *err, size_t errlen)
{
	const struct sm_table *t = pt->t;
	const struct sm_column *col = &t->cols[op->col];
	const struct cell *c = NULL;
	int64_t shadow = TS_NONE;
	uint8_t kbuf[SM_MAX_KEY_BYTES];
	size_t klen;
	uint32_t size = 0;
	int32_t idx;

	if ((op->kind != SM_CELL_SET_ELEM && op->kind != SM_CELL_DELETE_ELEM) ||
	    col->type->kind != SM_TYPE_LIST || col->type->frozen)
		return 0;
	if (op->key.len != 4) {
		snprintf(err, errlen, "Invalid collection value for column %s", col->name);
		return -EINVAL;
	}
	idx = (int32_t)be32(op->key.p);
	klen = sm_key_encode(&m->pk, kbuf, sizeof(kbuf));
	if (klen <= sizeof(kbuf)) {
		struct part *p = part_find(pt, sm_key_token(&m->pk),
					   (struct sm_bytes){ kbuf, (uint32_t)klen });
		struct row **rp;

		if (p != NULL && col->kind == SM_COL_STATIC && p->srow != NULL) {
			c = &p->srow->cells[col->pos];
			shadow = p->del_ts;
		} else if (p != NULL && col->kind == SM_COL_REGULAR &&
			   (rp = row_get(t, p, &m->ck, NULL)) != NULL) {
			c = &(*rp)->cells[col->pos];
			shadow = row_shadow(t, p, *rp, &m->ck);
		}
	}
	if (c != NULL && c->is_coll)
		size = list_size(c->coll, shadow, now);
	if (size == 0) {
		snprintf(err, errlen,
			 op->kind == SM_CELL_SET_ELEM
				 ? "Attempted to set an element on a list which is null"
				 : "Attempted to delete an element from a list which is null");
		return -EINVAL;
	}
	if (idx < 0 || (uint32_t)idx >= size) {
		snprintf(err, errlen, "List index %d out of bound, list has size %u", idx, size);
		return -EINVAL;
	}
	return 0;
}

/*
 * The value bytes @m brings to its row (@kind SM_COL_REGULAR) or static
 * row: a new row gets room for them, so its first values need no move.
 */
static size_t
mut_values(const struct sm_table *t, const struct sm_mutation *m, enum sm_col_kind kind)
{
	size_t n = 0;
	unsigned i;

	for (i = 0; i < m->nops; i++) {
		const struct sm_cell_op *op = &m->ops[i];
		const struct sm_column *col = &t->cols[op->col];

		if (col->kind == kind && !op->null && !sm_type_is_multicell(col->type) &&
		    (op->kind == SM_CELL_SET || op->kind == SM_CELL_COUNTER_ADD))
			n += op->value.len;
	}
	return n;
}

int
sm_ptable_apply(struct sm_ptable *pt, const struct sm_mutation *m, int64_t ts, int32_t now,
		char *err, size_t errlen)
{
	return sm_ptable_apply_at(pt, m, sm_key_token(&m->pk), ts, now, err, errlen);
}

int
sm_ptable_apply_at(struct sm_ptable *pt, const struct sm_mutation *m, int64_t token, int64_t ts,
		   int32_t now, char *err, size_t errlen)
{
	const struct sm_table *t = pt->t;
	uint8_t kbuf[SM_MAX_KEY_BYTES];
	struct sm_bytes key;
	struct part *p;
	struct row **rp = NULL, *r = NULL;
	int32_t ttl = m->ttl == SM_TTL_DEFAULT ? t->default_ttl : m->ttl;
	int32_t ldt = ttl > 0 ? now + ttl : 0;
	bool need_row = (m->flags & (SM_MUT_ROW_MARKER | SM_MUT_DELETE_ROW | SM_MUT_REPLACE_ROW)) != 0;
	unsigned i;
	int ret;

	if (check_key(t, &m->pk, t->npk, 0, "Partition", err, errlen) < 0)
		return -EINVAL;
	for (i = 0; i < m->nops; i++) {
		const struct sm_cell_op *op = &m->ops[i];
		const struct sm_column *col;

		if (op->col >= t->ncols) {
			snprintf(err, errlen, "no column %u in %s.%s", op->col, t->ks, t->name);
			return -EINVAL;
		}
		col = &t->cols[op->col];
		if (col->kind == SM_COL_PARTITION || col->kind == SM_COL_CLUSTERING) {
			snprintf(err, errlen, "PRIMARY KEY part %s found in SET part", col->name);
			return -EINVAL;
		}
		if (col->kind == SM_COL_REGULAR)
			need_row = true;
		if (op->value.len > CELL_MAX_LEN) {
			snprintf(err, errlen,
				 "Value of %u bytes for column %s is longer than the "
				 "maximum of %u",
				 op->value.len, col->name, CELL_MAX_LEN);
			return -EINVAL;
		}
		if ((col->type->kind == SM_TYPE_COUNTER) != (op->kind == SM_CELL_COUNTER_ADD) &&
		    !(op->kind == SM_CELL_DELETE && col->type->kind == SM_TYPE_COUNTER)) {
			snprintf(err, errlen,
				 col->type->kind == SM_TYPE_COUNTER
					 ? "Cannot set the value of counter column %s (counters "
					   "can only "
					   "be incremented/decremented, not set)"
					 : "Invalid operation for non counter column %s",
				 col->name);
			return -EINVAL;
		}
		if (op->kind == SM_CELL_SET && !op->null &&
		    sm_value_validate(col->type, op->value, err, errlen) < 0)
			return -EINVAL;
		if (op->kind == SM_CELL_COUNTER_ADD && op->value.len != 8) {
			snprintf(err, errlen, "Invalid counter delta for %s", col->name);
			return -EINVAL;
		}
		if (op->kind != SM_CELL_SET && op->kind != SM_CELL_DELETE &&
		    op->kind != SM_CELL_COUNTER_ADD &&
		    !sm_type_is_multicell(col->type)) {
			snprintf(err, errlen, "Invalid operation for non collection column %s",
				 col->name);
			return -EINVAL;
		}
		if (sm_type_is_multicell(col->type) && coll_op_validate(col, op, err, errlen) < 0)
			return -EINVAL;
	}
	if (t->counter && m->ttl > 0) {
		snprintf(err, errlen, "Cannot provide custom TTL for counter updates");
		return -EINVAL;
	}
	if (need_row && check_key(t, &m->ck, t->nck, t->npk, "Clustering", err, errlen) < 0)
		return -EINVAL;
	if (m->flags & SM_MUT_DELETE_RANGE) {
		if (m->range.start.prefix.n > t->nck || m->range.end.prefix.n > t->nck) {
			snprintf(err, errlen,
				 "range deletion bound longer than the clustering key");
			return -EINVAL;
		}
	}
	for (i = 0; i < m->nops; i++)
		if (list_index_check(pt, m, &m->ops[i], now, err, errlen) < 0)
			return -EINVAL;

	key.len = (uint32_t)sm_key_encode(&m->pk, kbuf, sizeof(kbuf));
	key.p = kbuf;
	if (key.len > sizeof(kbuf)) {
		snprintf(err, errlen, "Key length of %u is longer than maximum of %u", key.len,
			 SM_MAX_KEY_BYTES);
		return -EINVAL;
	}
	p = part_find(pt, token, key);
	if (p == NULL && (p = part_create(pt, token, key)) == NULL)
		goto nomem;

	if ((m->flags & SM_MUT_DELETE_PARTITION) && ts > p->del_ts) {
		p->del_ts = ts;
		p->del_ldt = now;
		part_purge(t, p);
	}
	if (m->flags & SM_MUT_DELETE_RANGE) {
		struct rtomb *rt;
		uint8_t b1[SM_MAX_KEY_BYTES], b2[SM_MAX_KEY_BYTES];
		size_t l1 = sm_key_encode(&m->range.start.prefix, b1, sizeof(b1));
		size_t l2 = sm_key_encode(&m->range.end.prefix, b2, sizeof(b2));

		if (l1 > sizeof(b1) || l2 > sizeof(b2))
			goto toolong;
		if (p->rt == NULL || p->rt->n == p->rt->cap) {
			uint32_t n = p->rt ? p->rt->n : 0, cap = n ? n * 2 : 2;
			struct rtombs *v = sm_realloc(p->rt, sizeof(*v) + cap * sizeof(v->v[0]));

			if (v == NULL)
				goto nomem;
			v->n = n;
			v->cap = cap;
			p->rt = v;
		}
		rt = &p->rt->v[p->rt->n];
		memset(rt, 0, sizeof(*rt));
		if (val_set(&rt->start, b1, (uint32_t)l1) < 0 ||
		    val_set(&rt->end, b2, (uint32_t)l2) < 0) {
			val_free(&rt->start);
			goto nomem;
		}
		rt->start_incl = m->range.start.inclusive || m->range.start.prefix.n == 0;
		rt->end_incl = m->range.end.inclusive || m->range.end.prefix.n == 0;
		rt->ts = ts;
		rt->ldt = now;
		p->rt->n++;
	}
	if (need_row) {
		rp = row_get(t, p, &m->ck, m);
		if (rp == NULL)
			goto nomem;
		r = *rp;
	}
	if (m->flags & SM_MUT_REPLACE_ROW) {
		r->del_ts = TS_NONE;
		row_purge(t, r, t->nregular, INT64_MAX);
	}
	if ((m->flags & SM_MUT_DELETE_ROW) && ts > r->del_ts) {
		r->del_ts = ts;
		r->del_ldt = now;
		row_purge(t, r, t->nregular, ts);
	}
	/* on equal timestamps an expiring marker supersedes one that does
	 * not expire, then the later expiry wins (Cassandra's
	 * LivenessInfo.supersedes); a marker without expiry used to keep its
	 * place, so the result depended on the order of arrival. */
	if ((m->flags & SM_MUT_ROW_MARKER) &&
	    (r->marker_ts == TS_NONE || ts > r->marker_ts ||
	     (ts == r->marker_ts && ldt != 0 && (r->marker_ldt == 0 || ldt > r->marker_ldt)))) {
		r->marker_ts = ts;
		r->marker_ldt = ldt;
	}
	for (i = 0; i < m->nops; i++) {
		const struct sm_cell_op *op = &m->ops[i];
		const struct sm_column *col = &t->cols[op->col];
		struct row **crp; /* the row of the cell: a write may move it */
		unsigned nc;
		struct cell *c;
		int64_t shadow;

		if (col->kind == SM_COL_STATIC) {
			if (p->srow == NULL &&
			    (p->srow = row_new(t, t->nstatic, true,
					       mut_values(t, m, SM_COL_STATIC))) == NULL)
				goto nomem;
			crp = &p->srow;
			nc = t->nstatic;
			shadow = p->del_ts;
		} else {
			struct sm_key ck;

			crp = rp;
			nc = t->nregular;
			val_key(&(*rp)->ck, &ck);
			shadow = row_shadow(t, p, *rp, &ck);
		}
		c = &(*crp)->cells[col->pos];
		if (c->is_coll) {
			ret = coll_op(t, col, c, shadow, op, ts, ldt, now, err, errlen);
		} else if (op->kind == SM_CELL_COUNTER_ADD) {
			ret = counter_add(crp, nc, col->pos, shadow, ts, op->value, now);
		} else if (op->kind == SM_CELL_DELETE || op->null) {
			ret = cell_write(crp, nc, col->pos, ts, true, op->value, now, now);
		} else if (op->kind == SM_CELL_SET) {
			ret = cell_write(crp, nc, col->pos, ts, false, op->value, ldt, now);
		} else {
			snprintf(err, errlen, "Invalid operation for column %s", col->name);
			ret = -EINVAL;
		}
		if (ret == -ENOMEM)
			goto nomem;
		if (ret < 0)
			return ret;
	}
	return 0;
toolong:
	snprintf(err, errlen, "clustering bound longer than %u bytes", SM_MAX_KEY_BYTES);
	return -EINVAL;
nomem:
	snprintf(err, errlen, "out of memory");
	return -ENOMEM;
}

/* ---- reads ---- */

void
sm_ptable_shard_fini(void)
{
	sm_free(scratch);
	scratch = NULL;
	scratch_cap = 0;
	sm_free(row_cells);
	sm_free(cas_cols);
	sm_free(cas_cell_of);
	row_cells = NULL;
	cas_cols = NULL;
	cas_cell_of = NULL;
	row_cells_cap = cas_cols_cap = cas_cell_of_cap = 0;
}

/* Grow the per-shard array *@arr of @size-byte items to hold @need; 0 or -ENOMEM. */
static int
tls_reserve(void **arr, unsigned *cap, unsigned need, size_t size, bool zero)
{
	unsigned ncap;
	void *p;

	if (need <= *cap)
		return 0;
	ncap = SM_MAX(need, *cap * 2);
	p = sm_realloc(*arr, (size_t)ncap * size);
	if (p == NULL)
		return -ENOMEM;
	if (zero)
		memset((uint8_t *)p + (size_t)*cap * size, 0, (size_t)(ncap - *cap) * size);
	*arr = p;
	*cap = ncap;
	return 0;
}

static int
scratch_reserve(size_t need)
{
	uint8_t *p;
	size_t cap;

	if (need <= scratch_cap)
		return 0;
	cap = SM_MAX(need, scratch_cap * 2);
	cap = SM_MAX(cap, (size_t)4096);
	p = sm_realloc(scratch, cap);
	if (p == NULL)
		return -ENOMEM;
	scratch = p;
	scratch_cap = cap;
	return 0;
}

/*
 * A non-frozen user type at scratch + *off: every field of the type, a
 * null for each one without a live cell (fields are sorted by index). Not
 * present when no field is live, as a row without the column.
 */
static int
udt_assemble(const struct sm_type *ty, const struct coll *co, int64_t sh, int32_t now, size_t *off,
	     struct sm_cell_view *cv)
{
	size_t need = 4 * (size_t)ty->nfields, start = *off;
	uint32_t i, e, live = 0;
	uint8_t *p;

	for (i = 0; i < co->n; i++) {
		if (!ecell_live(&co->e[i].c, sh, now))
			continue;
		live++;
		need += co->e[i].c.v.len;
		cv->writetime = SM_MAX(cv->writetime, co->e[i].c.ts);
	}
	if (live == 0) {
		cv->present = false;
		return 0;
	}
	if (scratch_reserve(start + need) < 0)
		return -ENOMEM;
	p = scratch + start;
	for (i = 0, e = 0; i < ty->nfields; i++) {
		const struct elem *el = NULL;
		uint32_t len;

		/* the next live element with this field's index, if any */
		for (; e < co->n; e++) {
			const uint8_t *k = val_ptr(&co->e[e].key);
			unsigned fi = (unsigned)k[0] << 8 | k[1];

			if (fi > i)
				break;
			if (fi == i && ecell_live(&co->e[e].c, sh, now))
				el = &co->e[e];
		}
		len = el != NULL ? el->c.v.len : UINT32_MAX;
		p[0] = (uint8_t)(len >> 24);
		p[1] = (uint8_t)(len >> 16);
		p[2] = (uint8_t)(len >> 8);
		p[3] = (uint8_t)len;
		p += 4;
		if (el != NULL && len) {
			memcpy(p, val_ptr(&el->c.v), len);
			p += len;
		}
	}
	cv->present = true;
	cv->value.p = (const uint8_t *)(uintptr_t)start;
	cv->value.len = (uint32_t)need;
	*off = start + need;
	return 0;
}

/* Serialize the live elements of @co at scratch + *off. */
static int
coll_assemble(const struct sm_type *ty, const struct coll *co, int64_t shadow, int32_t now,
	      size_t *off, struct sm_cell_view *cv)
{
	int64_t sh = SM_MAX(shadow, co->tomb_ts);
	bool is_map = ty->kind == SM_TYPE_MAP;
	size_t need = 4, start = *off;
	uint32_t i, n = 0;
	uint8_t *p;

	if (ty->kind == SM_TYPE_UDT)
		return udt_assemble(ty, co, sh, now, off, cv);
	for (i = 0; i < co->n; i++) {
		if (!ecell_live(&co->e[i].c, sh, now))
			continue;
		n++;
		if (ty->kind == SM_TYPE_LIST)
			need += 4 + co->e[i].c.v.len;
		else
			need += 4 + co->e[i].key.len + (is_map ? 4 + co->e[i].c.v.len : 0);
		cv->writetime = SM_MAX(cv->writetime, co->e[i].c.ts);
	}
	if (n == 0) {
		cv->present = false;
		return 0;
	}
	if (scratch_reserve(start + need) < 0)
		return -ENOMEM;
	p = scratch + start;
#define PUT32(x)                                                                                   \
	do {                                                                                       \
		uint32_t v_ = (x);                                                                 \
		p[0] = (uint8_t)(v_ >> 24);                                                        \
		p[1] = (uint8_t)(v_ >> 16);                                                        \
		p[2] = (uint8_t)(v_ >> 8);                                                         \
		p[3] = (uint8_t)v_;                                                                \
		p += 4;                                                                            \
	} while (0)
	PUT32(n);
	for (i = 0; i < co->n; i++) {
		const struct elem *e = &co->e[i];

		if (!ecell_live(&e->c, sh, now))
			continue;
		if (ty->kind == SM_TYPE_LIST) {
			PUT32(e->c.v.len);
			memcpy(p, val_ptr(&e->c.v), e->c.v.len);
			p += e->c.v.len;
		} else {
			PUT32(e->key.len);
			memcpy(p, val_ptr(&e->key), e->key.len);
			p += e->key.len;
			if (is_map) {
				PUT32(e->c.v.len);
				memcpy(p, val_ptr(&e->c.v), e->c.v.len);
				p += e->c.v.len;
			}
		}
	}
#undef PUT32
	cv->present = true;
	/* The pointer is set once every collection of the row is built: a
	 * later one may move the scratch buffer. */
	cv->value.p = (const uint8_t *)(uintptr_t)start;
	cv->value.len = (uint32_t)need;
	*off = start + need;
	return 0;
}

static void
stamp_view(int64_t ts, bool tomb, int32_t ldt, struct sm_bytes v, int64_t shadow, int32_t now,
	   struct sm_cell_view *cv)
{
	if (!stamp_live(ts, tomb, ldt, shadow, now)) {
		cv->present = false;
		return;
	}
	cv->present = true;
	cv->value = v;
	cv->writetime = ts;
	cv->ttl = ldt ? ldt - now : 0;
}

/* The view of @r's cell @c. */
static void
cell_view(const struct row *r, const struct cell *c, int64_t shadow, int32_t now,
	  struct sm_cell_view *cv)
{
	stamp_view(c->ts, c->tomb, c->ldt, cell_bytes(r, c), shadow, now, cv);
}

/*
 * The cell of one element of a non-frozen collection or user type (its
 * value, write time and TTL), as if it were a column of its own: a set
 * element's value is empty. Not present when the element is not live.
 */
static void
elem_view(const struct sm_type *ty, const struct cell *c, struct sm_bytes key, int64_t shadow,
	  int32_t now, struct sm_cell_view *cv)
{
	const struct coll *co = cell_coll(c);
	bool found;
	uint32_t i;

	cv->present = false;
	if (co == NULL || ty->kind == SM_TYPE_LIST)
		return;
	i = elem_find(co, coll_key_type(ty), key, &found);
	if (found) {
		const struct ecell *e = &co->e[i].c;

		stamp_view(e->ts, e->tomb, e->ldt, val_bytes(&e->v), SM_MAX(shadow, co->tomb_ts),
			   now, cv);
	}
}

/*
 * Build the selected cells of a row (@r NULL: the static-only row) in
 * row_cells, which the read reserved for s->ncols.
 */
static int
emit_row(struct sm_select *s, const struct sm_table *t, const struct part *p, const struct row *r,
	 const struct sm_key *pk, const struct sm_key *ck, int64_t shadow, int32_t now)
{
	struct sm_cell_view *cells = row_cells;
	struct sm_row_view rv;
	bool colls = false;
	size_t off = 0;
	unsigned i;
	int ret;

	for (i = 0; i < s->ncols; i++) {
		const struct sm_column *col = &t->cols[s->cols[i]];
		struct sm_cell_view *cv = &cells[i];
		const struct cell *c;

		memset(cv, 0, sizeof(*cv));
		switch (col->kind) {
		case SM_COL_PARTITION:
			cv->present = true;
			cv->value = pk->part[col->pos];
			continue;
		case SM_COL_CLUSTERING:
			cv->present = ck->n > col->pos;
			if (cv->present)
				cv->value = ck->part[col->pos];
			continue;
		case SM_COL_STATIC:
			if (p->srow == NULL)
				continue;
			c = &p->srow->cells[col->pos];
			if (c->is_coll) {
				/* only a collection's (or user type's) elements have views of their own */
				if (SM_UNLIKELY(s->col_keys != NULL && s->col_keys[i].p != NULL)) {
					elem_view(col->type, c, s->col_keys[i], p->del_ts, now, cv);
					continue;
				}
				if (coll_assemble(col->type, c->coll, p->del_ts, now, &off, cv) < 0)
					return -ENOMEM;
				colls = true;
			} else {
				cell_view(p->srow, c, p->del_ts, now, cv);
			}
			continue;
		case SM_COL_REGULAR:
			if (r == NULL)
				continue;
			c = &r->cells[col->pos];
			if (c->is_coll) {
				if (SM_UNLIKELY(s->col_keys != NULL && s->col_keys[i].p != NULL)) {
					elem_view(col->type, c, s->col_keys[i], shadow, now, cv);
					continue;
				}
				if (coll_assemble(col->type, c->coll, shadow, now, &off, cv) < 0)
					return -ENOMEM;
				colls = true;
			} else {
				cell_view(r, c, shadow, now, cv);
			}
			continue;
		}
	}
	if (colls)
		for (i = 0; i < s->ncols; i++)
			if (t->cols[s->cols[i]].kind >= SM_COL_STATIC &&
			    sm_type_is_multicell(t->cols[s->cols[i]].type) && cells[i].present &&
			    (s->col_keys == NULL || s->col_keys[i].p == NULL))
				cells[i].value.p = scratch + (uintptr_t)cells[i].value.p;
	rv.table = t;
	rv.token = p->token;
	rv.pk = pk;
	rv.ck = ck;
	rv.cells = cells;
	rv.ncells = s->ncols;
	if (SM_UNLIKELY(s->marker)) {
		rv.marker.present = r != NULL && r->marker_ts != TS_NONE && r->marker_ts > shadow &&
				    !expired(r->marker_ldt, now);
		rv.marker.writetime = r != NULL ? r->marker_ts : 0;
		rv.marker.ttl = r != NULL && r->marker_ldt ? r->marker_ldt - now : 0;
	}
	ret = s->sink.row(s->sink.ctx, &rv);
	return ret < 0 ? ret : 0;
}

/*
 * Emit the rows of one partition within the slices, after the position
 * in @pos when it names this partition. Returns 1 when @budget ran out
 * with rows left, 0 when the partition is done.
 */
static int
read_part(struct sm_select *s, const struct sm_table *t, struct part *p, struct sm_scan_pos *pos,
	  uint32_t *budget, int32_t now)
{
	static const struct sm_ck_range all = { { { 0 }, true }, { { 0 }, true } };
	const struct sm_ck_range *ranges = s->nranges ? s->ranges : &all;
	unsigned nranges = s->nranges ? s->nranges : 1;
	struct sm_key pk, ck, after;
	uint8_t after_buf[sizeof(pos->ck)];
	bool have_after = false, emitted_any = pos->part_rows > 0;
	uint32_t part_budget = s->per_partition_limit ? s->per_partition_limit : UINT32_MAX;
	unsigned ri;
	int ret;

	val_key(&p->key, &pk);
	if (pos->ck_len > 0) {
		/* decode a copy: @after pointed into pos->ck, which every
		 * emitted row overwrites, so after the first row of a resumed page
		 * it mixed the old key's lengths with the new key's bytes and
		 * skipped rows (with clustering values of different lengths). */
		memcpy(after_buf, pos->ck, pos->ck_len);
		sm_key_decode(after_buf, pos->ck_len, &after);
		have_after = true;
	}
	if (part_budget <= pos->part_rows)
		return 0;
	part_budget -= pos->part_rows;
	if (p->del_ts != TS_NONE && p->nrows == 0 && !static_live(t, p, now))
		return 0;

	for (ri = 0; ri < nranges; ri++) {
		const struct sm_ck_range *rg = &ranges[s->reversed ? nranges - 1 - ri : ri];
		int64_t i, end;
		bool found;

		if (!s->reversed) {
			i = rg->start.prefix.n ? row_lower(t, p, &rg->start.prefix, &found) : 0;
			end = p->nrows;
		} else {
			i = (int64_t)p->nrows - 1;
			end = -1;
		}
		for (; i != end; i += s->reversed ? -1 : 1) {
			struct row *r = p->rows[i];
			int64_t shadow;

			val_key(&r->ck, &ck);
			if (!s->reversed) {
				if (!after_start(t, &ck, &rg->start))
					continue;
				if (!before_end(t, &ck, &rg->end))
					break;
				if (have_after && ck_cmp(t, &ck, &after) <= 0)
					continue;
			} else {
				if (!before_end(t, &ck, &rg->end))
					continue;
				if (!after_start(t, &ck, &rg->start))
					break;
				if (have_after && ck_cmp(t, &ck, &after) >= 0)
					continue;
			}
			shadow = row_shadow(t, p, r, &ck);
			if (!row_live(t, r, shadow, now))
				continue;
			if (*budget == 0 || part_budget == 0)
				return *budget == 0 && part_budget > 0 ? 1 : 0;
			ret = emit_row(s, t, p, r, &pk, &ck, shadow, now);
			if (ret < 0)
				return ret;
			(*budget)--;
			part_budget--;
			pos->part_rows++;
			s->rows++;
			emitted_any = true;
			pos->ck_len = (uint32_t)SM_MIN((size_t)r->ck.len, sizeof(pos->ck));
			memcpy(pos->ck, val_ptr(&r->ck), pos->ck_len);
		}
	}
	/* A partition with static cells and no live row reads as one row of
	 * its static cells (Cassandra), when no clustering slice is given. */
	if (!emitted_any && s->nranges == 0 && t->nck > 0 && static_live(t, p, now)) {
		if (*budget == 0)
			return 1;
		ck.n = 0;
		ret = emit_row(s, t, p, NULL, &pk, &ck, p->del_ts, now);
		if (ret < 0)
			return ret;
		(*budget)--;
		pos->part_rows++;
		s->rows++;
	}
	return 0;
}

static void
pos_set_partition(struct sm_scan_pos *pos, const struct part *p)
{
	pos->started = true;
	pos->partition_done = false;
	pos->token = p->token;
	pos->part_rows = 0;
	pos->ck_len = 0;
	pos->key_len = (uint32_t)SM_MIN((size_t)p->key.len, sizeof(pos->key));
	memcpy(pos->key, val_ptr(&p->key), pos->key_len);
}

void
sm_scan_pos_encode(const struct sm_scan_pos *pos, struct sm_paging *pg)
{
	uint8_t *p = pg->data;
	unsigned i;

	p[0] = 1; /* version */
	p[1] = (uint8_t)((pos->started ? 1 : 0) | (pos->partition_done ? 2 : 0));
	for (i = 0; i < 8; i++)
		p[2 + i] = (uint8_t)((uint64_t)pos->token >> (56 - 8 * i));
	for (i = 0; i < 4; i++) {
		p[10 + i] = (uint8_t)(pos->part_rows >> (24 - 8 * i));
		p[14 + i] = (uint8_t)(pos->key_len >> (24 - 8 * i));
		p[18 + i] = (uint8_t)(pos->ck_len >> (24 - 8 * i));
	}
	memcpy(p + 22, pos->key, pos->key_len);
	memcpy(p + 22 + pos->key_len, pos->ck, pos->ck_len);
	pg->len = 22 + pos->key_len + pos->ck_len;
}

int
sm_scan_pos_decode(const struct sm_paging *pg, struct sm_scan_pos *pos)
{
	const uint8_t *p = pg->data;
	uint64_t tok = 0;
	unsigned i;

	memset(pos, 0, sizeof(*pos));
	if (pg->len < 22 || p[0] != 1)
		return -EINVAL;
	pos->started = p[1] & 1;
	pos->partition_done = p[1] & 2;
	for (i = 0; i < 8; i++)
		tok = tok << 8 | p[2 + i];
	pos->token = (int64_t)tok;
	pos->part_rows = be32(p + 10);
	pos->key_len = be32(p + 14);
	pos->ck_len = be32(p + 18);
	if (pos->key_len > sizeof(pos->key) || pos->ck_len > sizeof(pos->ck) ||
	    22 + (size_t)pos->key_len + pos->ck_len != pg->len)
		return -EINVAL;
	memcpy(pos->key, p + 22, pos->key_len);
	memcpy(pos->ck, p + 22 + pos->key_len, pos->ck_len);
	return 0;
}

int
sm_ptable_read(struct sm_ptable *pt, struct sm_select *s, int32_t now)
{
	return sm_ptable_read_at(pt, s, sm_key_token(&s->pk), now);
}

int
sm_ptable_read_at(struct sm_ptable *pt, struct sm_select *s, int64_t token, int32_t now)
{
	const struct sm_table *t = pt->t;
	struct sm_scan_pos pos;
	uint8_t kbuf[SM_MAX_KEY_BYTES];
	struct sm_bytes key;
	struct part *p;
	uint32_t budget = s->limit ? s->limit : UINT32_MAX;
	int ret;

	s->rows = 0;
	s->more = false;
	if (SM_UNLIKELY(s->ncols > row_cells_cap) &&
	    tls_reserve((void **)&row_cells, &row_cells_cap, s->ncols, sizeof(*row_cells), false) <
		    0)
		return -ENOMEM;
	key.len = (uint32_t)sm_key_encode(&s->pk, kbuf, sizeof(kbuf));
	key.p = kbuf;
	if (key.len > sizeof(kbuf))
		return -EINVAL;
	p = part_find(pt, token, key);
	if (p == NULL)
		return 0;
	/* The header only: the key bytes count up to key_len and ck_len (5 KB). */
	memset(&pos, 0, offsetof(struct sm_scan_pos, key));
	if (s->resume) {
		if (sm_scan_pos_decode(&s->paging, &pos) < 0)
			return -EINVAL;
		if (pos.partition_done)
			return 0;
	}
	pos_set_partition(&pos, p);
	if (s->resume) {
		struct sm_scan_pos in;

		sm_scan_pos_decode(&s->paging, &in);
		pos.part_rows = in.part_rows;
		pos.ck_len = in.ck_len;
		memcpy(pos.ck, in.ck, in.ck_len);
	}
	ret = read_part(s, t, p, &pos, &budget, now);
	if (ret < 0)
		return ret;
	if (ret == 1) {
		s->more = true;
		sm_scan_pos_encode(&pos, &s->paging);
	}
	return 0;
}

static struct part *
seek_after(const struct sm_ptable *pt, const struct sm_select *s, const struct sm_scan_pos *pos,
	   bool include_named)
{
	struct part *p, *prev;

	if (!pos->started) {
		if (s->token_start == INT64_MIN)
			return pt->first;
		/* tokens > token_start: seek to (token_start, +inf) */
		p = dir_seek(pt, s->token_start, (struct sm_bytes){ NULL, 0 }, &prev);
		while (p != NULL && p->token <= s->token_start)
			p = p->next;
		return p;
	}
	p = dir_seek(pt, pos->token, (struct sm_bytes){ pos->key, pos->key_len }, &prev);
	if (p != NULL && p->token == pos->token &&
	    val_cmp_bytes(&p->key, (struct sm_bytes){ pos->key, pos->key_len }) == 0 &&
	    !include_named)
		p = p->next;
	return p;
}

bool
sm_ptable_peek(struct sm_ptable *pt, const struct sm_select *s, const struct sm_scan_pos *pos,
	       int64_t *token)
{
	struct part *p = seek_after(pt, s, pos, pos->started && !pos->partition_done);

	if (p == NULL || p->token > s->token_end)
		return false;
	*token = p->token;
	return true;
}

int
sm_ptable_scan(struct sm_ptable *pt, struct sm_select *s, struct sm_scan_pos *pos, int64_t bound,
	       uint32_t *budget, int32_t now, int64_t *next_token, bool *has_next)
{
	const struct sm_table *t = pt->t;
	bool resume_named = pos->started && !pos->partition_done;
	struct part *p = seek_after(pt, s, pos, resume_named);
	int ret;

	if (SM_UNLIKELY(s->ncols > row_cells_cap) &&
	    tls_reserve((void **)&row_cells, &row_cells_cap, s->ncols, sizeof(*row_cells), false) <
		    0)
		return -ENOMEM;
	*has_next = false;
	for (; p != NULL; p = p->next) {
		if (p->token > s->token_end || (bound != INT64_MAX && p->token >= bound))
			break;
		if (!(resume_named && p->token == pos->token && p->key.len == pos->key_len &&
		      memcmp(val_ptr(&p->key), pos->key, pos->key_len) == 0))
			pos_set_partition(pos, p);
		resume_named = false;
		ret = read_part(s, t, p, pos, budget, now);
		if (ret < 0)
			return ret;
		if (ret == 1) {
			*has_next = true;
			*next_token = p->token;
			return 1;
		}
		pos->partition_done = true;
		if (*budget == 0) {
			struct part *n = p->next;

			if (n != NULL && n->token <= s->token_end) {
				*has_next = true;
				*next_token = n->token;
			}
			return *has_next ? 1 : 0;
		}
	}
	if (p != NULL && p->token <= s->token_end) {
		*has_next = true;
		*next_token = p->token;
	}
	return 0;
}

/* ---- compare-and-set ---- */

/* IF c CONTAINS v, IF m CONTAINS KEY k (column_condition.cc) */
static bool
coll_contains(const struct sm_condition *c, const struct sm_type *ty,
	      const struct sm_cell_view *cv)
{
	bool is_map = ty->kind == SM_TYPE_MAP, key = c->op == SM_COND_CONTAINS_KEY;
	struct sm_coll_iter it;
	struct sm_bytes k, v;

	if (c->null || !cv->present || sm_coll_iter_init(&it, cv->value) < 0)
		return false;
	while (sm_coll_next(&it, &k, is_map ? &v : NULL, is_map))
		if (sm_value_compare(key || !is_map ? ty->elem : ty->val, key || !is_map ? k : v,
				     c->value) == 0)
			return true;
	return false;
}

static bool
cond_holds(const struct sm_condition *c, const struct sm_type *ty, const struct sm_cell_view *cv)
{
	int cmp;
	unsigned i;

	if (c->op == SM_COND_CONTAINS || c->op == SM_COND_CONTAINS_KEY)
		return coll_contains(c, ty, cv);
	if (c->op == SM_COND_IN) {
		for (i = 0; i < c->nin; i++) {
			bool in_null = c->in[i].len == UINT32_MAX;

			if (in_null ? !cv->present
				    : cv->present && sm_value_compare(ty, cv->value, c->in[i]) == 0)
				return true;
		}
		return false;
	}
	if (c->null || !cv->present) {
		bool both = c->null && !cv->present;

		if (c->op == SM_COND_EQ)
			return both;
		if (c->op == SM_COND_NE)
			return !both;
		return false;
	}
	cmp = sm_value_compare(ty, cv->value, c->value);
	switch (c->op) {
	case SM_COND_EQ:
		return cmp == 0;
	case SM_COND_NE:
		return cmp != 0;
	case SM_COND_LT:
		return cmp < 0;
	case SM_COND_LE:
		return cmp <= 0;
	case SM_COND_GT:
		return cmp > 0;
	case SM_COND_GE:
		return cmp >= 0;
	default:
		return false;
	}
}

/* An element of a collection value (map key or list index), if present. */
static bool
coll_element(const struct sm_type *ty, const struct sm_cell_view *whole, struct sm_bytes key,
	     struct sm_cell_view *out)
{
	struct sm_coll_iter it;
	struct sm_bytes k, v;
	uint32_t idx = 0, want;
	bool is_map = ty->kind == SM_TYPE_MAP;

	memset(out, 0, sizeof(*out));
	if (!whole->present || sm_coll_iter_init(&it, whole->value) < 0)
		return false;
	if (!is_map && key.len != 4)
		return false;
	want = is_map ? 0 : be32(key.p);
	while (sm_coll_next(&it, &k, is_map ? &v : NULL, is_map)) {
		if (is_map ? sm_value_compare(ty->elem, k, key) == 0 : idx++ == want) {
			out->present = true;
			out->value = is_map ? v : k;
			return true;
		}
	}
	return false;
}

struct cas_sink {
	const struct sm_cas *c;
	const struct sm_table *t;
	bool seen;
	bool ok;
	bool statics_only; /* the row is missing: its static columns only, the rest null */
	bool static_seen;
	unsigned ncond_cols;
	const uint16_t *cols;
	const uint32_t *cell_of; /* column id -> its cell + 1 */
};

static int
cas_row(void *ctx, const struct sm_row_view *r)
{
	struct cas_sink *cs = ctx;
	const struct sm_cas *c = cs->c;
	unsigned i;

	static const struct sm_cell_view nullv;

	if (cs->statics_only)
		cs->static_seen = true;
	else
		cs->seen = true;
	cs->ok = true;
	for (i = 0; i < c->nconds; i++) {
		const struct sm_condition *cd = &c->conds[i];
		const struct sm_column *col = &cs->t->cols[cd->col];
		const struct sm_cell_view *cv;
		struct sm_cell_view elem;

		if (cs->cell_of[cd->col] == 0 || cs->cell_of[cd->col] > r->ncells)
			return -EINVAL;
		cv = &r->cells[cs->cell_of[cd->col] - 1];
		if (cs->statics_only && col->kind != SM_COL_STATIC)
			cv = &nullv;
		if (cd->has_elem) {
			coll_element(col->type, cv, cd->elem, &elem);
			if (!cond_holds(cd,
					col->type->kind == SM_TYPE_MAP ? col->type->val
								       : col->type->elem,
					&elem))
				cs->ok = false;
		} else if (!cond_holds(cd, col->type, cv)) {
			cs->ok = false;
		}
	}
	if (c->sink.row != NULL && !cs->statics_only) {
		/* The caller's pre-image: its own column list, a prefix of ours. */
		struct sm_row_view pre = *r;

		pre.ncells = c->ncols;
		return c->sink.row(c->sink.ctx, &pre);
	}
	return 0;
}

int
sm_ptable_cas_read(struct sm_ptable *pt, const struct sm_cas *c, int32_t now, bool *exists,
		   bool *conds_ok)
{
	const struct sm_table *t = pt->t;
	struct cas_sink cs = { .c = c, .t = t };
	uint16_t *cols;
	struct sm_ck_range one;
	struct sm_select s;
	unsigned n = 0, i;
	int ret;

	if (tls_reserve((void **)&cas_cols, &cas_cols_cap, c->ncols + c->nconds, sizeof(*cas_cols),
			false) < 0 ||
	    tls_reserve((void **)&cas_cell_of, &cas_cell_of_cap, t->ncols, sizeof(*cas_cell_of),
			true) < 0)
		return -ENOMEM;
	cols = cas_cols;
	/* Read the caller's columns first, then any condition column missing. */
	for (i = 0; i < c->ncols; i++) {
		if (c->cols[i] >= t->ncols) {
			ret = -EINVAL;
			goto clear_map;
		}
		cols[n++] = c->cols[i];
		if (cas_cell_of[c->cols[i]] == 0)
			cas_cell_of[c->cols[i]] = n;
	}
	for (i = 0; i < c->nconds; i++) {
		if (c->conds[i].col >= t->ncols) {
			ret = -EINVAL;
			goto clear_map;
		}
		if (cas_cell_of[c->conds[i].col] == 0) {
			cols[n++] = c->conds[i].col;
			cas_cell_of[c->conds[i].col] = n;
		}
	}
	cs.cols = cols;
	cs.cell_of = cas_cell_of;
	memset(&s, 0, sizeof(s));
	s.table = t;
	s.pk = c->mut.pk;
	s.cols = cols;
	s.ncols = n;
	s.limit = 1;
	s.sink.row = cas_row;
	s.sink.ctx = &cs;
	if (c->mut.ck.n > 0) {
		one.start.prefix = c->mut.ck;
		one.start.inclusive = true;
		one.end = one.start;
		s.ranges = &one;
		s.nranges = 1;
	}
	ret = sm_ptable_read(pt, &s, now);
	if (ret >= 0 && !cs.seen && c->kind == SM_CAS_IF && c->mut.ck.n > 0) {
		/* no such row: a condition on a static column still reads the
		 * partition's static row (Cassandra's and ScyllaDB's rule) */
		bool statics = false;

		for (i = 0; i < c->nconds && !statics; i++)
			statics = t->cols[c->conds[i].col].kind == SM_COL_STATIC;
		if (statics) {
			cs.statics_only = true;
			s.ranges = NULL;
			s.nranges = 0;
			ret = sm_ptable_read(pt, &s, now);
		}
	}
clear_map:
	/* Leave the map clear for the next one: only these entries were set. */
	for (i = 0; i < n; i++)
		cas_cell_of[cols[i]] = 0;
	if (ret < 0)
		return ret;
	*exists = cs.seen;
	if (c->kind == SM_CAS_IF_NOT_EXISTS)
		*conds_ok = !cs.seen;
	else if (c->kind == SM_CAS_IF_EXISTS)
		*conds_ok = cs.seen;
	else if (c->kind == SM_CAS_CUSTOM)
		*conds_ok = true; /* the store decides after the read */
	else if (cs.seen || cs.static_seen)
		*conds_ok = cs.ok;
	else {
		/* No row: every column reads as null. */
		struct sm_cell_view nullv = { 0 };

		*conds_ok = true;
		for (i = 0; i < c->nconds; i++) {
			const struct sm_column *col = &t->cols[c->conds[i].col];

			if (!cond_holds(&c->conds[i],
					c->conds[i].has_elem
						? (col->type->kind == SM_TYPE_MAP ? col->type->val
										  : col->type->elem)
						: col->type,
					&nullv))
				*conds_ok = false;
		}
	}
	return 0;
}
