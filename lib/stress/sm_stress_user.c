/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cassandra-stress's user mode on the stress engine: the data a profile's
 * columnspec describes, the profile's insert (cassandra-stress's
 * SchemaInsert: an UPDATE per row, batched per operation) and its named
 * queries (SchemaQuery: bind markers filled from one row, samerow, or from
 * several rows of the partition, multirow), with LWT conditions counted.
 *
 * Everything a row holds is a function of its partition's seed (the
 * population index the engine draws), its row index and the column, so a
 * read recomputes what the write sent. A partition of seed s has
 * prod(cluster_l(s)) rows, cluster_l drawn per clustering level from the
 * column's cluster distribution; row r's clustering value at level l
 * depends on r's prefix down to l, so siblings differ. A regular column's
 * value is the population distribution's pick for (s, r): population
 * FIXED(1) gives every row the same value, as in cassandra-stress.
 * Differences from cassandra-stress: a level's fan-out is the same under
 * every parent of a partition; insert writes a contiguous run of the
 * partition's rows (select ratio of them) rather than a random subset.
 */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "sm_mem.h"
#include "sm_stress_profile.h"
#include "sm_stress_run_priv.h"

/* Rows one insert operation may carry, and the bytes of their values. */
#define USER_MAX_BATCH_ROWS 256
#define USER_ARENA_BYTES (256u << 10)
#define USER_MAX_ELEMS 16  /* collection elements */
#define USER_ELEM_TEXT 8   /* bytes of a text/blob element */
#define USER_MAX_VALUE 8192 /* bytes of one text/blob value */
#define TRQ_RANGES_PER_SHARD 64 /* token ranges each client shard pages through */
#define TRQ_PAGING_STATE_MAX 512

/* A worker's place in one token_range_queries entry (TokenRangeQuery.State). */
struct user_trq {
	uint32_t gen;	 /* the shard's phase_gen it belongs to */
	bool active;	 /* a range is being paged */
	uint64_t range;	 /* which of the ring's ranges */
	int64_t last;	 /* the last row's token: a new one is a new partition */
	bool has_last;
	uint16_t ps_len; /* the paging state of the next page; 0: the first */
	uint8_t ps[TRQ_PAGING_STATE_MAX];
};

struct user_worker {
	struct sm_cql_value *vals; /* [row][bind] */
	struct sm_cql_batch_stmt *stmts;
	uint8_t *arena;
	size_t arena_len;
	uint64_t seed;	/* the partition of a query */
	uint64_t row;	/* its row (samerow) */
	unsigned nrows; /* rows of an insert */
	bool checkable; /* a samerow point query: the row is known */
	struct user_trq trq[SM_STRESS_PROFILE_MAX_QUERIES];
};

static const struct sm_stress_profile *
prof(void)
{
	return sx->s.profile;
}

static uint64_t
mix(uint64_t a, uint64_t b)
{
	uint64_t x = a ^ (b * 0x9e3779b97f4a7c15ull);

	return sm_splitmix64(&x);
}

/* Each column's hash of its name, set up once before the shards start (read-only after). */
static uint64_t col_seeds[SM_STRESS_PROFILE_MAX_COLS];

static void
col_seeds_init(void)
{
	unsigned c;

	for (c = 0; c < prof()->ncols; c++) {
		const char *n = prof()->cols[c].name;
		uint64_t h = 0xcbf29ce484222325ull;

		while (*n)
			h = (h ^ (uint8_t)*n++) * 0x100000001b3ull;
		col_seeds[c] = h;
	}
}

static uint64_t
col_seed(unsigned col)
{
	return col_seeds[col];
}

/* Rows of partition @seed, and the rows under one value at each level. */
static uint64_t
partition_rows(uint64_t seed, uint64_t *below)
{
	const struct sm_stress_profile *p = prof();
	uint64_t total = 1, cnt[SM_STRESS_PROFILE_MAX_COLS];
	unsigned l;

	for (l = 0; l < p->nck; l++) {
		int64_t v = sm_stress_xdist_at(&p->cols[p->npk + l].cluster, mix(seed, 0xc1u + l));

		cnt[l] = v < 1 ? 1 : (uint64_t)v;
	}
	for (l = p->nck; l-- > 0;) {
		if (below != NULL)
			below[l] = total;
		total = total > (1ull << 40) / cnt[l] ? 1ull << 40 : total * cnt[l];
	}
	return total;
}

static bool
is_int_like(enum sm_type_kind k)
{
	return k == SM_TYPE_INT || k == SM_TYPE_BIGINT || k == SM_TYPE_SMALLINT ||
	       k == SM_TYPE_TINYINT || k == SM_TYPE_VARINT || k == SM_TYPE_TIMESTAMP ||
	       k == SM_TYPE_DATE || k == SM_TYPE_TIME || k == SM_TYPE_COUNTER;
}

static void
put_be(uint8_t *o, uint64_t v, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		o[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
}

/*
 * Text and blob values are slices of two pools made once (a fixed seed, so
 * every process and shard makes the same values): a memcpy a value instead
 * of a character at a time, which was 59% of a blog-profile insert's
 * instructions (ten rows of 100-1000 byte texts an operation). A pool is
 * 1 MiB, past a compression window (LZ4's 64 KiB), so values of one chunk
 * are not copies of each other; longer values are made a word at a time.
 */
#define VALUE_POOL (1u << 20)
static uint8_t text_pool[VALUE_POOL], blob_pool[VALUE_POOL];
static pthread_once_t pools_once = PTHREAD_ONCE_INIT;

static const char alnum[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

static void
text_words(uint64_t x, uint32_t len, uint8_t *o)
{
	uint32_t i;

	/* eight characters a word, no division */
	for (i = 0; i < len; i += 8) {
		unsigned k, n = len - i < 8 ? len - i : 8;
		uint64_t w = sm_splitmix64(&x);

		for (k = 0; k < n; k++)
			o[i + k] = (uint8_t)alnum[(((w >> (8 * k)) & 0xff) * 62) >> 8];
	}
}

static void
pools_make(void)
{
	uint64_t x = 0x5eed5eed5eed5eedull;
	uint32_t i;

	text_words(x, VALUE_POOL, text_pool);
	for (i = 0; i < VALUE_POOL; i += 8) {
		uint64_t w = sm_splitmix64(&x);

		memcpy(blob_pool + i, &w, 8);
	}
}

/* @len bytes of @pool at a place @h picks (len <= VALUE_POOL / 2) */
static inline void
pool_slice(const uint8_t *pool, uint64_t h, uint32_t len, uint8_t *o)
{
	/* mixed first: identities that differ only in low bits land apart */
	uint64_t off = (((h * 0x9e3779b97f4a7c15ull) >> 32) * (uint64_t)(VALUE_POOL - len)) >> 32;

	memcpy(o, pool + off, len);
}

/*
 * The serialized value of simple type @k for identity @h (@len bytes for
 * text/blob), into @o; its length. @num: an integer type takes this number
 * instead of a hash (clustering values, kept distinct).
 */
static uint32_t
encode_simple(enum sm_type_kind k, uint64_t h, uint32_t len, bool use_num, uint64_t num,
	      uint8_t *o)
{
	uint64_t x = h, w = 0, v = use_num ? num : h;
	uint32_t i;

	switch (k) {
	case SM_TYPE_TEXT:
	case SM_TYPE_ASCII:
		if (len <= VALUE_POOL / 2) {
			pthread_once(&pools_once, pools_make);
			pool_slice(text_pool, h, len, o);
			return len;
		}
		text_words(x, len, o);
		return len;
	case SM_TYPE_BLOB:
		if (len <= VALUE_POOL / 2) {
			pthread_once(&pools_once, pools_make);
			pool_slice(blob_pool, h, len, o);
			return len;
		}
		for (i = 0; i < len; i++) {
			if (i % 8 == 0)
				w = sm_splitmix64(&x);
			o[i] = (uint8_t)w;
			w >>= 8;
		}
		return len;
	case SM_TYPE_BOOLEAN:
		o[0] = (uint8_t)(v & 1);
		return 1;
	case SM_TYPE_TINYINT:
		o[0] = (uint8_t)v;
		return 1;
	case SM_TYPE_SMALLINT:
		put_be(o, v, 2);
		return 2;
	case SM_TYPE_INT:
		put_be(o, use_num ? v : v & 0x7fffffff, 4);
		return 4;
	case SM_TYPE_DATE:
		put_be(o, (1u << 31) + (v % 36500), 4); /* days from 1970, within a century */
		return 4;
	case SM_TYPE_FLOAT: {
		float f = (float)(v % 1000000) / 16.0f;
		uint32_t b;

		memcpy(&b, &f, 4);
		put_be(o, b, 4);
		return 4;
	}
	case SM_TYPE_DOUBLE: {
		double d = (double)(v % 1000000000ull) / 64.0;
		uint64_t b;

		memcpy(&b, &d, 8);
		put_be(o, b, 8);
		return 8;
	}
	case SM_TYPE_TIME:
		put_be(o, v % 86400000000000ull, 8);
		return 8;
	case SM_TYPE_TIMESTAMP:
		/* milliseconds: 2020 onwards, or the clustering number */
		put_be(o, use_num ? v : 1577836800000ull + v % 315360000000ull, 8);
		return 8;
	case SM_TYPE_BIGINT:
	case SM_TYPE_COUNTER:
		put_be(o, use_num ? v : v >> 1, 8);
		return 8;
	case SM_TYPE_VARINT:
		put_be(o, (v >> 2) & 0x3fffffffffffffffull, 8); /* positive, 8 bytes */
		return 8;
	case SM_TYPE_DECIMAL:
		put_be(o, 2, 4);
		put_be(o + 4, (v >> 2) & 0x3fffffffffffffffull, 8);
		return 12;
	case SM_TYPE_INET:
		put_be(o, (10u << 24) | (uint32_t)(v & 0xffffff), 4);
		return 4;
	case SM_TYPE_UUID:
	case SM_TYPE_TIMEUUID:
		put_be(o, mix(h, 1), 8);
		put_be(o + 8, mix(h, 2), 8);
		/* version 4, or 1 for timeuuid; the IETF variant */
		o[6] = (uint8_t)((o[6] & 0x0f) | (k == SM_TYPE_UUID ? 0x40 : 0x10));
		o[8] = (uint8_t)((o[8] & 0x3f) | 0x80);
		return 16;
	default:
		return 0;
	}
}

/* Elements of a collection nested in a collection, tuple or user type. */
#define USER_NESTED_ELEMS 3
/* Below this depth, a nested collection is empty and a tuple's fields null. */
#define USER_MAX_DEPTH 3

static bool
is_composite(const struct sm_type *t)
{
	return t->kind == SM_TYPE_TUPLE || t->kind == SM_TYPE_UDT;
}

/* Whether @t is or holds a collection (whose order the server may change). */
static bool
has_collection(const struct sm_type *t)
{
	unsigned f;

	if (sm_type_is_collection(t))
		return true;
	for (f = 0; is_composite(t) && f < t->nfields; f++)
		if (has_collection(t->fields[f]))
			return true;
	return false;
}

/* The largest value of @t nested at @depth (a collection's element, a field), in bytes. */
static size_t
nested_max(const struct sm_type *t, unsigned depth)
{
	size_t n = 0;
	unsigned f;

	if (sm_type_is_collection(t)) {
		if (depth >= USER_MAX_DEPTH)
			return 4;
		n = 4 + nested_max(t->elem, depth + 1);
		if (t->val != NULL)
			n += 4 + nested_max(t->val, depth + 1);
		return 4 + USER_NESTED_ELEMS * n;
	}
	if (is_composite(t)) {
		for (f = 0; f < t->nfields; f++)
			n += 4 + (depth < USER_MAX_DEPTH ? nested_max(t->fields[f], depth + 1) : 0);
		return n;
	}
	return SM_MAX((size_t)USER_ELEM_TEXT, (size_t)16);
}

/* The largest value of column @col, in bytes. */
static size_t
value_max(const struct sm_stress_pcol *col)
{
	const struct sm_type *t = col->type;
	size_t n = (size_t)SM_MAX(col->size.max, (int64_t)0);

	if (t->kind == SM_TYPE_TEXT || t->kind == SM_TYPE_ASCII || t->kind == SM_TYPE_BLOB)
		return n;
	if (sm_type_is_collection(t))
		return 4 + USER_MAX_ELEMS * (4 + nested_max(t->elem, 1) +
					     (t->val ? 4 + nested_max(t->val, 1) : 0));
	if (is_composite(t))
		return nested_max(t, 0);
	return 16;
}

static uint32_t
text_len(const struct sm_stress_pcol *col, uint64_t h)
{
	int64_t n = sm_stress_xdist_at(&col->size, mix(h, 0x5153u));

	return n < 0 ? 0 : n > USER_MAX_VALUE ? USER_MAX_VALUE : (uint32_t)n;
}

static uint32_t
encode_nested(const struct sm_type *t, uint64_t h, bool use_num, uint64_t num, unsigned depth,
	      uint8_t *o);

/*
 * A collection of @t for identity @h with @n elements: [int n] then each
 * element (and a map's value) as [bytes], from its type's generator. Set
 * elements and map keys of integer types are the element's index, distinct.
 */
static uint32_t
encode_elems(const struct sm_type *t, uint64_t h, uint32_t n, unsigned depth, uint8_t *o)
{
	uint32_t len = 4, e, part;

	put_be(o, n, 4);
	for (e = 0; e < n; e++) {
		const struct sm_type *parts[2] = { t->elem, t->val };

		for (part = 0; part < (t->kind == SM_TYPE_MAP ? 2u : 1u); part++) {
			bool key = t->kind != SM_TYPE_LIST && part == 0;
			uint32_t l = encode_nested(parts[part], mix(h, e * 2 + part), key, e,
						   depth + 1, o + len + 4);

			put_be(o + len, l, 4);
			len += 4 + l;
		}
	}
	return len;
}

/*
 * A tuple or user type for identity @h: each field as [bytes], from its
 * type's generator and the field's own hash (cassandra-stress's UDT
 * generator makes each field with its type's generator); null below
 * USER_MAX_DEPTH.
 */
static uint32_t
encode_fields(const struct sm_type *t, uint64_t h, unsigned depth, uint8_t *o)
{
	uint32_t len = 0, f, l;

	for (f = 0; f < t->nfields; f++) {
		if (depth >= USER_MAX_DEPTH) {
			put_be(o + len, SM_FIELD_NULL, 4);
			len += 4;
			continue;
		}
		l = encode_nested(t->fields[f], mix(h, 0xf1e1du + f), false, 0, depth + 1,
				  o + len + 4);
		put_be(o + len, l, 4);
		len += 4 + l;
	}
	return len;
}

/* A value of @t inside a collection, tuple or user type (at @depth), into @o; its length. */
static uint32_t
encode_nested(const struct sm_type *t, uint64_t h, bool use_num, uint64_t num, unsigned depth,
	      uint8_t *o)
{
	uint32_t n = depth < USER_MAX_DEPTH ? (uint32_t)(h % (USER_NESTED_ELEMS + 1)) : 0;

	if (sm_type_is_collection(t))
		return encode_elems(t, h, n, depth, o);
	if (is_composite(t))
		return encode_fields(t, h, depth, o);
	return encode_simple(t->kind, h, USER_ELEM_TEXT, use_num, num, o);
}

/* A collection column's value: as many elements as its size distribution draws. */
static uint32_t
encode_collection(const struct sm_stress_pcol *col, uint64_t h, uint8_t *o)
{
	int64_t n = sm_stress_xdist_at(&col->size, mix(h, 0xe1u));

	n = n < 0 ? 0 : n > USER_MAX_ELEMS ? USER_MAX_ELEMS : n;
	return encode_elems(col->type, h, (uint32_t)n, 0, o);
}

/* Column @col's value for identity @h (an integer column takes @num), into @o. */
static uint32_t
encode_col(const struct sm_stress_pcol *col, uint64_t h, uint64_t num, uint8_t *o)
{
	if (sm_type_is_collection(col->type))
		return encode_collection(col, h, o);
	if (is_composite(col->type))
		return encode_fields(col->type, h, 0, o);
	return encode_simple(col->type->kind, h, text_len(col, h), is_int_like(col->type->kind),
			     num, o);
}

/* The value of column @c in row @row of partition @seed, into @o; its length. */
static uint32_t
gen_value(unsigned c, uint64_t seed, uint64_t row, const uint64_t *below, uint8_t *o)
{
	const struct sm_stress_profile *p = prof();
	const struct sm_stress_pcol *col = &p->cols[c];
	uint64_t base = mix(col_seed(c), seed), h, id;

	switch (col->role) {
	case SM_STRESS_COL_PARTITION:
		/*
		 * The population's range bounds the distinct keys; within it
		 * seed s takes min + s mod range, so distinct seeds are
		 * distinct partitions (their rows never overwrite each other).
		 */
		id = (uint64_t)col->population.min +
		     (col->population.max - col->population.min == INT64_MAX
			      ? seed
			      : seed % (uint64_t)(col->population.max - col->population.min + 1));
		h = mix(col_seed(c), id);
		return encode_col(col, h, id, o);
	case SM_STRESS_COL_CLUSTERING: {
		unsigned l = c - p->npk;
		uint64_t prefix = row / below[l];
		uint64_t digit = prefix % (l == 0 ? prefix + 1 : below[l - 1] / below[l]);

		h = mix(base, prefix);
		return encode_col(col, h, digit, o);
	}
	case SM_STRESS_COL_STATIC:
		row = 0;
		/* fall through */
	default:
		/* numbers are the population's pick itself, as cassandra-stress's generators */
		id = (uint64_t)sm_stress_xdist_at(&col->population, mix(base, row));
		h = mix(col_seed(c), id);
		return encode_col(col, h, id, o);
	}
}

/*
 * Whether distinct seeds of -pop give distinct partitions, so that a row
 * holds what its own seed wrote: the first key column's population covers
 * the -pop range and its values are long enough not to collide. When not,
 * rows of several seeds overwrite each other and only the key is checked.
 */
static bool
keys_distinct(void)
{
	const struct sm_stress_pcol *k = &prof()->cols[0];
	const struct sm_stress_dist *pop = &sx->s.pop.dist;
	uint64_t range = (uint64_t)(k->population.max - k->population.min);
	enum sm_type_kind t = k->type->kind;

	if (pop->max < pop->min || range < pop->max - pop->min || pop->max > range + 1)
		return false;
	if (t == SM_TYPE_TEXT || t == SM_TYPE_ASCII || t == SM_TYPE_BLOB)
		return k->size.min >= 8;
	if (t == SM_TYPE_INT)
		return pop->max + (uint64_t)k->population.min < (1ull << 31);
	return t == SM_TYPE_BIGINT || t == SM_TYPE_UUID || t == SM_TYPE_TIMEUUID ||
	       t == SM_TYPE_VARINT || t == SM_TYPE_TIMESTAMP;
}

/* The partition key's serialized form (a composite as CompositeType) and its token. */
static int64_t
partition_token(uint64_t seed, uint8_t *scratch)
{
	const struct sm_stress_profile *p = prof();
	size_t off = 0;
	unsigned c;

	if (p->npk == 1) {
		uint32_t n = gen_value(0, seed, 0, NULL, scratch);

		return sm_ring_token_of(scratch, n);
	}
	/* in place: a user-type key can be larger than any fixed buffer (the arena fits it) */
	for (c = 0; c < p->npk; c++) {
		uint32_t n = gen_value(c, seed, 0, NULL, scratch + off + 2);

		scratch[off] = (uint8_t)(n >> 8);
		scratch[off + 1] = (uint8_t)n;
		off += 2 + n;
		scratch[off++] = 0;
	}
	return sm_ring_token_of(scratch, off);
}

/* ---- statements ---- */

static void
quote_name(char *buf, size_t len, const struct sm_stress_pcol *col)
{
	snprintf(buf, len, col->quoted ? "\"%s\"" : "%s", col->name);
}

/* The insert (StressProfile.getInsert()): UPDATE ... SET regular = ? WHERE key = ?. */
static void
build_insert(char *out, size_t cap)
{
	const struct sm_stress_profile *p = prof();
	char name[80];
	size_t off;
	unsigned c, nset = 0;

	if (p->ncols == p->npk + p->nck) {
		off = (size_t)snprintf(out, cap, "INSERT INTO %s.%s (", p->keyspace, p->table);
		for (c = 0; c < p->ncols; c++) {
			quote_name(name, sizeof(name), &p->cols[c]);
			off += (size_t)snprintf(out + off, cap - off, "%s%s", c ? ", " : "", name);
		}
		off += (size_t)snprintf(out + off, cap - off, ") VALUES (");
		for (c = 0; c < p->ncols; c++)
			off += (size_t)snprintf(out + off, cap - off, "%s?", c ? ", " : "");
		snprintf(out + off, cap - off, ")");
		return;
	}
	off = (size_t)snprintf(out, cap, "UPDATE %s.%s SET ", p->keyspace, p->table);
	for (c = p->npk + p->nck; c < p->ncols; c++) {
		const struct sm_type *t = p->cols[c].type;
		bool add = (t->kind == SM_TYPE_SET || t->kind == SM_TYPE_LIST) && !t->frozen;

		quote_name(name, sizeof(name), &p->cols[c]);
		off += (size_t)snprintf(out + off, cap - off, "%s%s = %s%s?", nset++ ? ", " : "",
					name, add ? name : "", add ? " + " : "");
	}
	off += (size_t)snprintf(out + off, cap - off, " WHERE ");
	for (c = 0; c < p->npk + p->nck; c++) {
		quote_name(name, sizeof(name), &p->cols[c]);
		off += (size_t)snprintf(out + off, cap - off, "%s%s = ?", c ? " AND " : "", name);
	}
	if (p->insert.condition != NULL)
		snprintf(out + off, cap - off, " %s", p->insert.condition);
}

/*
 * A token range query (TokenRangeQuery.buildQuery()): token(pk) first, to
 * count partitions, then the columns ("*": every column, by name, since
 * "token(pk), *" is not CQL), over one range (lo, hi] of the ring, bound.
 */
static void
build_trq(const struct sm_stress_ptrq *t, char *out, size_t cap)
{
	const struct sm_stress_profile *p = prof();
	char tok[512], name[80];
	size_t off = 0;
	unsigned c;

	off = (size_t)snprintf(tok, sizeof(tok), "token(");
	for (c = 0; c < p->npk && off < sizeof(tok); c++) {
		quote_name(name, sizeof(name), &p->cols[c]);
		off += (size_t)snprintf(tok + off, sizeof(tok) - off, "%s%s", c ? ", " : "", name);
	}
	if (off < sizeof(tok))
		snprintf(tok + off, sizeof(tok) - off, ")");
	off = (size_t)snprintf(out, cap, "SELECT %s, ", tok);
	if (strcmp(t->columns, "*") != 0) {
		off += (size_t)snprintf(out + off, cap - off, "%s", t->columns);
	} else {
		for (c = 0; c < p->ncols && off < cap; c++) {
			quote_name(name, sizeof(name), &p->cols[c]);
			off += (size_t)snprintf(out + off, cap - off, "%s%s", c ? ", " : "", name);
		}
	}
	/* too long for the statement buffer: the server's syntax error names it */
	if (off < cap && snprintf(out + off, cap - off, " FROM %s.%s WHERE %s > ? AND %s <= ?",
				  p->keyspace, p->table, tok, tok) >= (int)(cap - off))
		out[cap - 1] = '\0';
}

/* The statement behind user op @k: -1 for the insert, else the query's index. */
static int
query_of(enum sm_stress_op op)
{
	return sx->s.user_op[op - SM_STRESS_OP_USER0];
}

/* The token_range_queries entry of op @op, or NULL for the insert or a query. */
static const struct sm_stress_ptrq *
trq_of(enum sm_stress_op op)
{
	int q = query_of(op);

	return q >= SM_STRESS_PROFILE_TRQ(0) ? &prof()->trq[q - SM_STRESS_PROFILE_TRQ(0)] : NULL;
}

void
sm_stress_user_prepare(void)
{
	const struct sm_stress_profile *p = prof();
	unsigned k;

	col_seeds_init();
	for (k = 0; k < sx->nops; k++) {
		enum sm_stress_op op = sx->ops[k];
		int q = query_of(op);

		if (q < 0)
			build_insert(sx->stmt_text[op], sizeof(sx->stmt_text[op]));
		else if (trq_of(op) != NULL)
			build_trq(trq_of(op), sx->stmt_text[op], sizeof(sx->stmt_text[op]));
		else
			snprintf(sx->stmt_text[op], sizeof(sx->stmt_text[op]), "%s",
				 p->queries[q].cql);
	}
}

const char *
sm_stress_user_setup_statement(unsigned i)
{
	const struct sm_stress_profile *p = prof();
	static char use[SM_STRESS_PROFILE_NAME_MAX * 2 + 8];

	/* as cassandra-stress: the definitions (an existing one is fine), in the keyspace */
	if (i == 0)
		return p->keyspace_definition != NULL ? p->keyspace_definition : "";
	if (i == 1) {
		snprintf(use, sizeof(use), "USE %s", p->keyspace);
		return use;
	}
	return sm_stress_profile_setup_statement(p, i - 2);
}

/* ---- workers ---- */

static unsigned
batch_rows_max(void)
{
	const struct sm_stress_profile *p = prof();
	size_t row = 0;
	unsigned c;

	for (c = 0; c < p->ncols; c++)
		row += value_max(&p->cols[c]);
	return (unsigned)SM_MAX((size_t)1, SM_MIN((size_t)USER_MAX_BATCH_ROWS,
						  USER_ARENA_BYTES / SM_MAX(row, (size_t)1)));
}

int
sm_stress_user_worker_init(struct sm_stress_worker *w)
{
	const struct sm_stress_profile *p = prof();
	struct user_worker *u = sm_calloc(1, sizeof(*u));
	unsigned rows = batch_rows_max();
	size_t row = 0;
	unsigned c;

	if (u == NULL)
		return -ENOMEM;
	for (c = 0; c < p->ncols; c++)
		row += value_max(&p->cols[c]);
	/* a composite key's CompositeType form adds 3 bytes a column (partition_token()) */
	u->arena_len = SM_MAX(row * rows + 3 * SM_STRESS_PROFILE_MAX_COLS,
			      (size_t)USER_MAX_VALUE * 2 + 64);
	u->vals = sm_calloc((size_t)rows * SM_STRESS_PROFILE_MAX_BINDS, sizeof(*u->vals));
	u->stmts = sm_calloc(rows, sizeof(*u->stmts));
	u->arena = sm_malloc(u->arena_len);
	w->user = u;
	if (u->vals == NULL || u->stmts == NULL || u->arena == NULL)
		return -ENOMEM;
	return 0;
}

void
sm_stress_user_worker_fini(struct sm_stress_worker *w)
{
	struct user_worker *u = w->user;

	if (u == NULL)
		return;
	sm_free(u->vals);
	sm_free(u->stmts);
	sm_free(u->arena);
	sm_free(u);
	w->user = NULL;
}

/* The insert's rows: a run of select-ratio of each of the op's partitions. */
static int64_t
fill_insert(struct sm_stress_worker *w, struct user_worker *u)
{
	const struct sm_stress_profile *p = prof();
	struct sm_stress_shard *sh = w->sh;
	uint64_t below[SM_STRESS_PROFILE_MAX_COLS], seed = w->key_index;
	unsigned max = batch_rows_max(), nparts, part, c;
	size_t off = 0;
	int64_t token = 0, v;

	v = sm_stress_xdist_next(&p->insert.partitions, &sh->rng, sh->started);
	nparts = v < 1 ? 1 : (unsigned)SM_MIN(v, (int64_t)max);
	u->nrows = 0;
	for (part = 0; part < nparts && u->nrows < max; part++) {
		uint64_t total = partition_rows(seed, below), take, first, r;

		take = (uint64_t)ceil((double)total * sm_stress_ratio_next(&p->insert.select,
									   &sh->rng));
		take = SM_MAX(take, (uint64_t)1);
		take = SM_MIN(take, (uint64_t)(max - u->nrows));
		first = total > take ? sm_rand_below(&sh->rng, total - take + 1) : 0;
		if (part == 0)
			token = partition_token(seed, u->arena);
		for (r = first; r < first + take; r++) {
			struct sm_cql_value *vals = &u->vals[u->nrows * SM_STRESS_PROFILE_MAX_BINDS];
			unsigned b = 0;

			/* SET columns first, then the key, as build_insert() binds them */
			for (c = p->npk + p->nck; c < p->ncols; c++, b++) {
				uint32_t n = gen_value(c, seed, r, below, u->arena + off);

				vals[b] = (struct sm_cql_value){ .v = { u->arena + off, n } };
				off += n;
			}
			for (c = 0; c < p->npk + p->nck; c++, b++) {
				uint32_t n = gen_value(c, seed, r, below, u->arena + off);

				vals[b] = (struct sm_cql_value){ .v = { u->arena + off, n } };
				off += n;
			}
			u->nrows++;
		}
		if (part + 1 < nparts && !sm_stress_cursor_next(&sh->cursor, &sh->rng, &seed))
			break;
	}
	w->nparts = part < nparts ? part + 1 : nparts;
	return token;
}

/* A query's markers: from one row (samerow) or a row each (multirow). */
static int64_t
fill_query(struct sm_stress_worker *w, struct user_worker *u, const struct sm_stress_pquery *q)
{
	struct sm_stress_shard *sh = w->sh;
	uint64_t below[SM_STRESS_PROFILE_MAX_COLS], seed = w->key_index;
	uint64_t total = partition_rows(seed, below);
	int64_t token = partition_token(seed, u->arena);
	size_t off = 0;
	unsigned b;

	u->seed = seed;
	u->row = sm_rand_below(&sh->rng, total);
	u->checkable = q->samerow && q->binds_all_pk && q->select && keys_distinct();
	for (b = 0; b < q->nbind; b++) {
		uint64_t row = q->samerow ? u->row : sm_rand_below(&sh->rng, total);
		uint32_t n;

		if (q->bind[b].kind == SM_STRESS_BIND_TOKEN) {
			put_be(u->arena + off, (uint64_t)token, 8);
			n = 8;
		} else {
			n = gen_value(q->bind[b].col, seed, row, below, u->arena + off);
		}
		u->vals[b] = (struct sm_cql_value){ .v = { u->arena + off, n } };
		off += n;
	}
	w->nparts = 1;
	return token;
}

/* The ring in equal ranges (lo, hi]; shard s pages ranges s, s + nshards, ... */
static uint64_t
trq_nranges(void)
{
	return (uint64_t)TRQ_RANGES_PER_SHARD * sx->nshards * SM_MAX(sx->s.tokenrange.splits, 1u);
}

static int64_t
trq_bound(uint64_t r)
{
	if (r >= trq_nranges())
		return INT64_MAX;
	/* INT64_MIN + r * (2^64 / n), in unsigned arithmetic; Murmur3 never yields INT64_MIN */
	return (int64_t)((uint64_t)INT64_MIN + r * (UINT64_MAX / trq_nranges()));
}

bool
sm_stress_user_exhausted(struct sm_stress_worker *w)
{
	struct sm_stress_shard *sh = w->sh;
	struct user_worker *u = w->user;
	struct user_trq *st;
	unsigned t;
	uint64_t r;

	if (trq_of(w->op) == NULL)
		return false;
	t = (unsigned)(query_of(w->op) - SM_STRESS_PROFILE_TRQ(0));
	st = &u->trq[t];
	if (st->gen != sh->phase_gen) {
		st->gen = sh->phase_gen;
		st->active = false;
	}
	if (st->active)
		return false;
	/* TokenRangeIterator.next(): the next range of this shard's share, none at the end */
	r = sh->id + sh->trq_next[t] * sx->nshards;
	if (r >= trq_nranges() && sx->s.tokenrange.wrap) {
		sh->trq_next[t] = 0; /* -tokenrange wrap: the ring again */
		r = sh->id;
	}
	if (r >= trq_nranges())
		return true;
	sh->trq_next[t]++;
	st->active = true;
	st->range = r;
	st->has_last = false;
	st->ps_len = 0;
	return false;
}

int64_t
sm_stress_user_fill(struct sm_stress_worker *w)
{
	const struct sm_stress_ptrq *t = trq_of(w->op);
	struct user_worker *u = w->user;
	int q = query_of(w->op);

	if (t != NULL) {
		const struct user_trq *st = &u->trq[q - SM_STRESS_PROFILE_TRQ(0)];
		int64_t hi = trq_bound(st->range + 1);

		put_be(u->arena, (uint64_t)trq_bound(st->range), 8);
		put_be(u->arena + 8, (uint64_t)hi, 8);
		u->vals[0] = (struct sm_cql_value){ .v = { u->arena, 8 } };
		u->vals[1] = (struct sm_cql_value){ .v = { u->arena + 8, 8 } };
		return hi;
	}
	if (q < 0)
		return fill_insert(w, w->user);
	return fill_query(w, w->user, &prof()->queries[q]);
}

int
sm_stress_user_issue(struct sm_stress_worker *w, struct sm_stress_conn *c, sm_cqlc_cb cb)
{
	const struct sm_stress_profile *p = prof();
	struct user_worker *u = w->user;
	struct sm_bytes id = sm_cqlc_prepared_id(&c->stmt[w->op]);
	int q = query_of(w->op);
	bool query = q >= 0 && q < SM_STRESS_PROFILE_TRQ(0);
	int cl = query ? p->queries[q].cl : p->insert.cl;
	int scl = query ? p->queries[q].serial_cl : p->insert.serial_cl;
	struct sm_cql_params params = {
		.consistency = (uint16_t)(cl >= 0 ? cl : (int)sx->s.cl),
		.flags = SM_CQL_QF_SERIAL_CONSISTENCY,
		.page_size = -1,
		.serial_consistency = (uint16_t)(scl >= 0 ? scl : (int)sx->s.serial_cl),
		.timestamp = INT64_MIN,
	};
	const struct sm_stress_ptrq *t = trq_of(w->op);
	unsigned nbind, i;

	if (t != NULL) {
		const struct user_trq *st = &u->trq[q - SM_STRESS_PROFILE_TRQ(0)];

		params.consistency = (uint16_t)sx->s.cl;
		params.page_size = (int32_t)t->page_size;
		params.flags |= SM_CQL_QF_PAGE_SIZE;
		if (st->ps_len > 0) {
			params.paging_state = (struct sm_bytes){ st->ps, st->ps_len };
			params.flags |= SM_CQL_QF_PAGING_STATE;
		}
		params.values = (struct sm_cql_values){ .v = u->vals, .n = 2 };
		params.flags |= SM_CQL_QF_SKIP_METADATA;
		return sm_cqlc_execute_params(c->cql, id, &params, cb, w);
	}
	nbind = q < 0 ? p->ncols : p->queries[q].nbind;

	if (q < 0 && u->nrows > 1) {
		struct sm_cql_batch b = {
			.type = p->insert.batch == SM_STRESS_BATCH_LOGGED ? SM_CQL_BATCH_LOGGED
									   : SM_CQL_BATCH_UNLOGGED,
			.stmts = u->stmts,
			.n = (uint16_t)u->nrows,
			.consistency = params.consistency,
			.flags = SM_CQL_QF_SERIAL_CONSISTENCY,
			.serial_consistency = params.serial_consistency,
			.timestamp = INT64_MIN,
		};

		for (i = 0; i < u->nrows; i++)
			u->stmts[i] = (struct sm_cql_batch_stmt){
				.kind = SM_CQL_BATCH_KIND_PREPARED,
				.query_or_id = id,
				.values = { .v = &u->vals[i * SM_STRESS_PROFILE_MAX_BINDS],
					    .n = (uint16_t)nbind },
			};
		return sm_cqlc_batch(c->cql, &b, cb, w);
	}
	params.values = (struct sm_cql_values){ .v = u->vals, .n = (uint16_t)nbind };
	if (q >= 0 && p->queries[q].select)
		params.flags |= SM_CQL_QF_SKIP_METADATA;
	return sm_cqlc_execute_params(c->cql, id, &params, cb, w);
}

void
sm_stress_user_prepared(struct sm_stress_conn *c, enum sm_stress_op op,
			const struct sm_cqlc_result *r)
{
	struct sm_bytes names[SM_STRESS_PROFILE_MAX_COLS];
	unsigned i, n = sm_stress_result_names(r, names, SM_ARRAY_SIZE(names));

	memset(c->colmap[op], 0xff, sizeof(c->colmap[op]));
	for (i = 0; i < n; i++) {
		char name[SM_STRESS_PROFILE_NAME_MAX];
		int k;

		snprintf(name, sizeof(name), "%.*s", (int)names[i].len, (const char *)names[i].p);
		k = sm_stress_profile_col(prof(), name);
		c->colmap[op][i] = k < 0 ? 0xff : (uint8_t)k;
	}
}

/*
 * A token range page (TokenRangeQuery.JavaDriverRun.run()): its rows, the
 * partitions not seen before in the range (rows come in token order, so a
 * new token is a new partition), and the paging state of the next page;
 * without one the range is done and the next operation takes another.
 */
static int32_t
trq_check(struct sm_stress_worker *w, const struct sm_cqlc_result *r, uint64_t *rows)
{
	struct user_worker *u = w->user;
	struct user_trq *st = &u->trq[query_of(w->op) - SM_STRESS_PROFILE_TRQ(0)];
	struct sm_cqlc_rows_iter it;
	struct sm_bytes cells[1];
	uint32_t parts = 0;
	struct sm_bytes ps = { 0 };

	*rows = 0;
	if (r->kind != SM_CQLC_ROWS || r->resp == NULL)
		return -EPROTO;
	*rows = r->nrows;
	sm_cqlc_rows_iter(&it, r);
	while (sm_cqlc_rows_next(&it, cells, 1)) {
		int64_t tok = 0;
		unsigned i;

		if (cells[0].p == NULL || cells[0].len != 8)
			return -EPROTO; /* token(pk) is a bigint */
		for (i = 0; i < 8; i++)
			tok = (int64_t)((uint64_t)tok << 8 | cells[0].p[i]);
		if (!st->has_last || tok != st->last)
			parts++;
		st->last = tok;
		st->has_last = true;
	}
	w->nparts = parts ? parts : SM_STRESS_NPARTS_NONE;
	ps = r->resp->u.result.u.rows.meta.paging_state;
	if (ps.p == NULL || ps.len == 0) {
		st->active = false;
		return 0;
	}
	if (ps.len > sizeof(st->ps))
		return -EMSGSIZE;
	memcpy(st->ps, ps.p, ps.len);
	st->ps_len = (uint16_t)ps.len;
	return 0;
}

/*
 * A query's answer: an LWT's [applied] counted, a samerow point read's
 * cells checked against the row it asked for, any row's partition key
 * against the partition. 0, or the validation error.
 */
int32_t
sm_stress_user_check(struct sm_stress_worker *w, struct sm_stress_conn *c,
		     const struct sm_cqlc_result *r, uint64_t *rows)
{
	const struct sm_stress_profile *p = prof();
	struct user_worker *u = w->user;
	struct sm_stress_shard *sh = w->sh;
	int q = query_of(w->op);
	struct sm_cqlc_rows_iter it;
	struct sm_bytes cells[SM_STRESS_PROFILE_MAX_COLS];
	uint64_t below[SM_STRESS_PROFILE_MAX_COLS];
	uint8_t *want = u->arena;
	unsigned i;

	if (trq_of(w->op) != NULL)
		return trq_check(w, r, rows);
	if (q < 0)
		*rows = u->nrows;
	else
		*rows = r->kind == SM_CQLC_ROWS ? r->nrows : 0;
	if ((q < 0 ? p->insert.condition != NULL : p->queries[q].lwt) && r->kind == SM_CQLC_ROWS &&
	    sh->recording) {
		/* the first column of an LWT's answer is [applied] */
		sm_cqlc_rows_iter(&it, r);
		if (sm_cqlc_rows_next(&it, cells, 1) && cells[0].p != NULL && cells[0].len == 1) {
			if (cells[0].p[0])
				sh->lwt_applied[w->op]++;
			else
				sh->lwt_not_applied[w->op]++;
		}
		return 0;
	}
	if (q < 0 || r->kind != SM_CQLC_ROWS || sx->s.errors.skip_read_validation || r->nrows == 0)
		return 0;
	partition_rows(u->seed, below);
	sm_cqlc_rows_iter(&it, r);
	while (sm_cqlc_rows_next(&it, cells, SM_ARRAY_SIZE(cells))) {
		for (i = 0; i < r->ncols && i < SM_STRESS_PROFILE_MAX_COLS; i++) {
			unsigned k = c->colmap[w->op][i];
			enum sm_stress_col_role role;
			uint32_t n;

			if (k == 0xff)
				continue;
			role = p->cols[k].role;
			if (role != SM_STRESS_COL_PARTITION &&
			    (!u->checkable || has_collection(p->cols[k].type)))
				continue;
			if (cells[i].p == NULL)
				return SM_STRESS_VALIDATION_ERROR;
			n = gen_value(k, u->seed, u->row, below, want);
			if (n != cells[i].len || memcmp(want, cells[i].p, n) != 0)
				return SM_STRESS_VALIDATION_ERROR;
		}
	}
	return 0;
}

bool
sm_stress_user_lwt_counts(enum sm_stress_op op, uint64_t *applied, uint64_t *not_applied)
{
	unsigned s;
	int q;

	*applied = *not_applied = 0;
	if (prof() == NULL || op < SM_STRESS_OP_USER0)
		return false;
	q = query_of(op);
	if (q >= SM_STRESS_PROFILE_TRQ(0) ||
	    (q < 0 ? prof()->insert.condition == NULL : !prof()->queries[q].lwt))
		return false;
	for (s = 0; s < sx->nshards; s++) {
		*applied += sx->sh[s].lwt_applied[op];
		*not_applied += sx->sh[s].lwt_not_applied[op];
	}
	return true;
}

void
sm_stress_user_report(void)
{
	uint64_t a, n;
	unsigned k;

	for (k = 0; k < sx->nops; k++)
		if (sm_stress_user_lwt_counts(sx->ops_by_name[k], &a, &n))
			sm_stress_out("LWT %s: %" PRIu64 " applied, %" PRIu64
				      " not applied (condition false)\n",
				      sm_stress_op_name(sx->ops_by_name[k]), a, n);
}
