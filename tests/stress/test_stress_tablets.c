/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The tablet map of a tablets-aware client: the tablets-routing-v1 payload
 * decoder (valid, every truncation, hostile lengths, nulls, trailing
 * bytes), insertion replacing overlapping tablets (ScyllaDB's
 * protocol-extensions.md), the cap, lookups at range edges, tables, the
 * custom payload key, and picking a replica per ordering.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "sm_core.h"
#include "sm_stress_ring.h"
#include "sm_stress_tablets.h"

/* ---- payload encoding, as ScyllaDB serializes the tuple ---- */

struct enc {
	uint8_t b[4096];
	size_t n;
};

static void
put(struct enc *e, uint64_t v, unsigned bytes)
{
	unsigned i;

	for (i = 0; i < bytes; i++)
		e->b[e->n++] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
}

struct rep {
	uint8_t id;
	int32_t shard;
};

/* tuple<bigint, bigint, list<tuple<uuid, int>>> with host ids 16 x @id. */
static size_t
encode(struct enc *e, int64_t first, int64_t last, const struct rep *reps, unsigned n)
{
	size_t list_at;
	unsigned i;

	e->n = 0;
	put(e, 8, 4);
	put(e, (uint64_t)first, 8);
	put(e, 8, 4);
	put(e, (uint64_t)last, 8);
	list_at = e->n;
	put(e, 0, 4); /* the list's [bytes] length, filled below */
	put(e, n, 4);
	for (i = 0; i < n; i++) {
		put(e, 28, 4);
		put(e, 16, 4);
		memset(e->b + e->n, reps[i].id, 16);
		e->n += 16;
		put(e, 4, 4);
		put(e, (uint32_t)reps[i].shard, 4);
	}
	e->b[list_at] = (uint8_t)((e->n - list_at - 4) >> 24);
	e->b[list_at + 1] = (uint8_t)((e->n - list_at - 4) >> 16);
	e->b[list_at + 2] = (uint8_t)((e->n - list_at - 4) >> 8);
	e->b[list_at + 3] = (uint8_t)(e->n - list_at - 4);
	return e->n;
}

static void
set_int(struct enc *e, size_t at, uint32_t v)
{
	e->b[at] = (uint8_t)(v >> 24);
	e->b[at + 1] = (uint8_t)(v >> 16);
	e->b[at + 2] = (uint8_t)(v >> 8);
	e->b[at + 3] = (uint8_t)v;
}

static int
decode(const struct enc *e, struct sm_tablet *t)
{
	const char *why = NULL;
	int ret = sm_tablets_decode(e->b, e->n, t, &why);

	if (ret < 0) {
		assert_non_null(why);
		print_message("refused: %s\n", why);
	}
	return ret;
}

static void
test_decode_valid(void **state)
{
	static const struct rep reps[] = { { 0xaa, 1 }, { 0xbb, 0 }, { 0xcc, 7 } };
	struct sm_tablet t;
	struct enc e;

	(void)state;
	encode(&e, INT64_MIN, -4611686018427387905ll, reps, 3);
	assert_int_equal(decode(&e, &t), 0);
	assert_true(t.first == INT64_MIN);
	assert_true(t.last == -4611686018427387905ll);
	assert_int_equal(t.nreps, 3);
	assert_int_equal(t.nreps_sent, 3);
	assert_int_equal(t.reps[0].host_id[0], 0xaa);
	assert_int_equal(t.reps[0].host_id[15], 0xaa);
	assert_int_equal(t.reps[0].shard, 1);
	assert_int_equal(t.reps[1].host_id[7], 0xbb);
	assert_int_equal(t.reps[1].shard, 0);
	assert_int_equal(t.reps[2].shard, 7);
	assert_int_equal(t.reps[2].host, SM_TABLETS_HOST_UNKNOWN);
}

/* More replicas than kept: all checked, the first SM_TABLETS_MAX_REPLICAS kept. */
static void
test_decode_many_replicas(void **state)
{
	struct rep reps[SM_TABLETS_MAX_REPLICAS + 4];
	struct sm_tablet t;
	struct enc e;
	unsigned i;

	(void)state;
	for (i = 0; i < SM_ARRAY_SIZE(reps); i++)
		reps[i] = (struct rep){ (uint8_t)i, (int32_t)i };
	encode(&e, 0, 10, reps, SM_ARRAY_SIZE(reps));
	assert_int_equal(decode(&e, &t), 0);
	assert_int_equal(t.nreps, SM_TABLETS_MAX_REPLICAS);
	assert_int_equal(t.nreps_sent, SM_ARRAY_SIZE(reps));
	assert_int_equal(t.reps[SM_TABLETS_MAX_REPLICAS - 1].shard, SM_TABLETS_MAX_REPLICAS - 1);
	/* the last one is still checked */
	set_int(&e, e.n - 4, 0xffffffffu);
	assert_int_equal(decode(&e, &t), -EINVAL);
}

/* Every cut of a valid payload is refused. */
static void
test_decode_truncated(void **state)
{
	static const struct rep reps[] = { { 1, 0 }, { 2, 1 } };
	struct sm_tablet t;
	struct enc e;
	size_t full, cut;

	(void)state;
	full = encode(&e, -100, 100, reps, 2);
	for (cut = 0; cut < full; cut++) {
		const char *why = NULL;

		assert_int_equal(sm_tablets_decode(e.b, cut, &t, &why), -EINVAL);
		assert_non_null(why);
	}
	/* and one byte more than the tuple */
	e.b[e.n++] = 0;
	assert_int_equal(decode(&e, &t), -EINVAL);
}

static void
test_decode_hostile(void **state)
{
	static const struct rep reps[] = { { 1, 0 }, { 2, 1 } };
	static const struct rep neg[] = { { 1, -1 } };
	struct sm_tablet t;
	struct enc e;
	size_t list_at = 24, count_at = 28, rep_at = 32;

	(void)state;
	/* a null first token, a first token of 4 bytes, a huge length */
	encode(&e, -100, 100, reps, 2);
	set_int(&e, 0, 0xffffffffu);
	assert_int_equal(decode(&e, &t), -EINVAL);
	set_int(&e, 0, 4);
	assert_int_equal(decode(&e, &t), -EINVAL);
	set_int(&e, 0, 0x7fffffffu);
	assert_int_equal(decode(&e, &t), -EINVAL);
	/* a null last token */
	encode(&e, -100, 100, reps, 2);
	set_int(&e, 12, 0xffffffffu);
	assert_int_equal(decode(&e, &t), -EINVAL);
	/* the list's length: null, huge, short of what follows */
	encode(&e, -100, 100, reps, 2);
	set_int(&e, list_at, 0xffffffffu);
	assert_int_equal(decode(&e, &t), -EINVAL);
	set_int(&e, list_at, 0x7fffffffu);
	assert_int_equal(decode(&e, &t), -EINVAL);
	set_int(&e, list_at, (uint32_t)(e.n - list_at - 4 - 1));
	assert_int_equal(decode(&e, &t), -EINVAL);
	/* the replica count: negative, zero, one more than there are, INT_MAX */
	encode(&e, -100, 100, reps, 2);
	set_int(&e, count_at, 0x80000000u);
	assert_int_equal(decode(&e, &t), -EINVAL);
	set_int(&e, count_at, 0);
	assert_int_equal(decode(&e, &t), -EINVAL);
	set_int(&e, count_at, 3);
	assert_int_equal(decode(&e, &t), -EINVAL);
	set_int(&e, count_at, 0x7fffffffu);
	assert_int_equal(decode(&e, &t), -EINVAL);
	/* one count less: the second replica is left over */
	set_int(&e, count_at, 1);
	assert_int_equal(decode(&e, &t), -EINVAL);
	/* a replica tuple's length, its uuid's length, its shard's length, a null shard */
	encode(&e, -100, 100, reps, 2);
	set_int(&e, rep_at, 27);
	assert_int_equal(decode(&e, &t), -EINVAL);
	set_int(&e, rep_at, 0xffffffffu);
	assert_int_equal(decode(&e, &t), -EINVAL);
	encode(&e, -100, 100, reps, 2);
	set_int(&e, rep_at + 4, 15);
	assert_int_equal(decode(&e, &t), -EINVAL);
	encode(&e, -100, 100, reps, 2);
	set_int(&e, rep_at + 24, 8);
	assert_int_equal(decode(&e, &t), -EINVAL);
	set_int(&e, rep_at + 24, 0xffffffffu);
	assert_int_equal(decode(&e, &t), -EINVAL);
	/* a negative shard; an empty and an inverted range */
	encode(&e, -100, 100, neg, 1);
	assert_int_equal(decode(&e, &t), -EINVAL);
	encode(&e, 5, 5, reps, 2);
	assert_int_equal(decode(&e, &t), -EINVAL);
	encode(&e, 6, 5, reps, 2);
	assert_int_equal(decode(&e, &t), -EINVAL);
	/* nothing at all */
	assert_int_equal(sm_tablets_decode(e.b, 0, &t, &(const char *){ NULL }), -EINVAL);
}

/* ---- the map ---- */

static struct sm_tablet
tablet(int64_t first, int64_t last, uint16_t host, uint32_t shard)
{
	struct sm_tablet t;

	memset(&t, 0, sizeof(t));
	t.first = first;
	t.last = last;
	t.nreps = t.nreps_sent = 1;
	t.reps[0].host = host;
	t.reps[0].shard = shard;
	return t;
}

/* The tablets of @table, first..last pairs. */
static void
expect_ranges(const struct sm_tablets *t, unsigned table, const int64_t *want, unsigned n)
{
	const struct sm_tablets_table *tb = &t->tables[table];
	unsigned i;

	assert_int_equal(tb->n, n);
	for (i = 0; i < n; i++) {
		assert_true(tb->v[i].first == want[2 * i]);
		assert_true(tb->v[i].last == want[2 * i + 1]);
	}
}

#define EXPECT_RANGES(t, table, ...)                                                               \
	do {                                                                                       \
		const int64_t want_[] = { __VA_ARGS__ };                                           \
		expect_ranges((t), (table), want_, SM_ARRAY_SIZE(want_) / 2);                      \
	} while (0)

static void
test_find(void **state)
{
	struct sm_tablets t;
	struct sm_tablet a = tablet(INT64_MIN, -1000, 0, 0), b = tablet(-1000, 0, 1, 1),
			 c = tablet(500, INT64_MAX, 2, 0);
	int tb;

	(void)state;
	sm_tablets_init(&t, 100);
	tb = sm_tablets_table(&t, "ks", 2, "t", 1);
	assert_int_equal(tb, 0);
	assert_null(sm_tablets_find(&t, 0, 0));
	assert_int_equal(sm_tablets_insert(&t, 0, &c), 0);
	assert_int_equal(sm_tablets_insert(&t, 0, &a), 0);
	assert_int_equal(sm_tablets_insert(&t, 0, &b), 0);
	EXPECT_RANGES(&t, 0, INT64_MIN, -1000, -1000, 0, 500, INT64_MAX);
	/* (first, last]: the last token is in, the first is not */
	assert_int_equal(sm_tablets_find(&t, 0, INT64_MIN + 1)->reps[0].host, 0);
	assert_int_equal(sm_tablets_find(&t, 0, -1000)->reps[0].host, 0);
	assert_int_equal(sm_tablets_find(&t, 0, -999)->reps[0].host, 1);
	assert_int_equal(sm_tablets_find(&t, 0, 0)->reps[0].host, 1);
	/* the gap (0, 500] is not known */
	assert_null(sm_tablets_find(&t, 0, 1));
	assert_null(sm_tablets_find(&t, 0, 500));
	assert_int_equal(sm_tablets_find(&t, 0, 501)->reps[0].host, 2);
	assert_int_equal(sm_tablets_find(&t, 0, INT64_MAX)->reps[0].host, 2);
	/* a bad table index finds nothing, inserts nothing */
	assert_null(sm_tablets_find(&t, 1, 0));
	assert_int_equal(sm_tablets_insert(&t, 1, &a), -EINVAL);
	assert_int_equal(t.total, 3);
	assert_int_equal(t.st.learned, 3);
	assert_int_equal(t.st.replaced, 0);
	sm_tablets_free(&t);
	assert_null(sm_tablets_find(&t, 0, 0));
	assert_int_equal(t.total, 0);
}

/* A new tablet removes every one it overlaps, and no other. */
static void
test_overlap_replacement(void **state)
{
	struct sm_tablets t;
	struct sm_tablet x;
	int64_t s;

	(void)state;
	sm_tablets_init(&t, 100);
	sm_tablets_table(&t, "ks", 2, "t", 1);
	/* eight tablets of 100 tokens: (0, 100], (100, 200], ... (700, 800] */
	for (s = 0; s < 800; s += 100) {
		x = tablet(s, s + 100, 0, 0);
		assert_int_equal(sm_tablets_insert(&t, 0, &x), 0);
	}
	assert_int_equal(t.total, 8);
	/* the same range again: replaced, its shard updated */
	x = tablet(200, 300, 0, 5);
	assert_int_equal(sm_tablets_insert(&t, 0, &x), 0);
	assert_int_equal(t.total, 8);
	assert_int_equal(sm_tablets_find(&t, 0, 250)->reps[0].shard, 5);
	/* a merge: (100, 400] replaces three */
	x = tablet(100, 400, 1, 1);
	assert_int_equal(sm_tablets_insert(&t, 0, &x), 0);
	EXPECT_RANGES(&t, 0, 0, 100, 100, 400, 400, 500, 500, 600, 600, 700, 700, 800);
	assert_int_equal(t.total, 6);
	/* a split: (400, 450] replaces (400, 500], leaving (450, 500] unknown */
	x = tablet(400, 450, 2, 0);
	assert_int_equal(sm_tablets_insert(&t, 0, &x), 0);
	EXPECT_RANGES(&t, 0, 0, 100, 100, 400, 400, 450, 500, 600, 600, 700, 700, 800);
	assert_null(sm_tablets_find(&t, 0, 451));
	/* partial overlaps on both ends: (550, 650] removes (500, 600] and (600, 700] */
	x = tablet(550, 650, 3, 0);
	assert_int_equal(sm_tablets_insert(&t, 0, &x), 0);
	EXPECT_RANGES(&t, 0, 0, 100, 100, 400, 400, 450, 550, 650, 700, 800);
	/* touching is not overlapping: (450, 550] fills the gap alone */
	x = tablet(450, 550, 4, 0);
	assert_int_equal(sm_tablets_insert(&t, 0, &x), 0);
	EXPECT_RANGES(&t, 0, 0, 100, 100, 400, 400, 450, 450, 550, 550, 650, 700, 800);
	/* one over everything */
	x = tablet(INT64_MIN, INT64_MAX, 9, 1);
	assert_int_equal(sm_tablets_insert(&t, 0, &x), 0);
	EXPECT_RANGES(&t, 0, INT64_MIN, INT64_MAX);
	assert_int_equal(t.total, 1);
	assert_int_equal(sm_tablets_find(&t, 0, -5)->reps[0].host, 9);
	assert_int_equal(t.st.replaced, 1 + 3 + 1 + 2 + 0 + 6);
	sm_tablets_free(&t);
}

/* The cap counts over all tables; replacing never needs room. */
static void
test_cap(void **state)
{
	struct sm_tablets t;
	struct sm_tablet x;
	int64_t s;

	(void)state;
	sm_tablets_init(&t, 40);
	assert_int_equal(sm_tablets_table(&t, "ks", 2, "a", 1), 0);
	assert_int_equal(sm_tablets_table(&t, "ks", 2, "b", 1), 1);
	for (s = 0; s < 30; s++) {
		x = tablet(s * 10, s * 10 + 10, 0, 0);
		assert_int_equal(sm_tablets_insert(&t, 0, &x), 0);
	}
	for (s = 0; s < 10; s++) {
		x = tablet(s * 10, s * 10 + 10, 0, 0);
		assert_int_equal(sm_tablets_insert(&t, 1, &x), 0);
	}
	assert_int_equal(t.total, 40);
	x = tablet(1000, 1010, 0, 0);
	assert_int_equal(sm_tablets_insert(&t, 0, &x), -ENOSPC);
	assert_int_equal(sm_tablets_insert(&t, 1, &x), -ENOSPC);
	assert_int_equal(t.st.refused, 2);
	assert_null(sm_tablets_find(&t, 0, 1005));
	assert_true(t.tables[0].cap <= 40 && t.tables[1].cap <= 40);
	/* replacing one with one, and two with one, still works at the cap */
	x = tablet(0, 10, 1, 3);
	assert_int_equal(sm_tablets_insert(&t, 0, &x), 0);
	assert_int_equal(sm_tablets_find(&t, 0, 5)->reps[0].shard, 3);
	x = tablet(10, 30, 1, 3);
	assert_int_equal(sm_tablets_insert(&t, 0, &x), 0);
	assert_int_equal(t.total, 39);
	x = tablet(1000, 1010, 0, 0);
	assert_int_equal(sm_tablets_insert(&t, 1, &x), 0);
	assert_int_equal(t.total, 40);
	sm_tablets_free(&t);
	/* a map with no room refuses everything */
	sm_tablets_init(&t, 0);
	sm_tablets_table(&t, "ks", 2, "a", 1);
	assert_int_equal(sm_tablets_insert(&t, 0, &x), -ENOSPC);
	sm_tablets_free(&t);
}

static void
test_tables(void **state)
{
	struct sm_tablets t;
	char name[80], big[SM_TABLETS_NAME_MAX];
	struct sm_tablet x = tablet(0, 10, 0, 0);
	unsigned i;

	(void)state;
	sm_tablets_init(&t, 100);
	assert_int_equal(sm_tablets_table(&t, "keyspace1", 9, "standard1", 9), 0);
	assert_int_equal(sm_tablets_table(&t, "keyspace1", 9, "counter1", 8), 1);
	/* not NUL-terminated views, and prefixes are other names */
	assert_int_equal(sm_tablets_table(&t, "keyspace1xyz", 9, "standard1", 9), 0);
	assert_int_equal(sm_tablets_table(&t, "keyspace", 8, "standard1", 9), 2);
	assert_int_equal(sm_tablets_table(&t, "", 0, "t", 1), -EINVAL);
	memset(big, 'k', sizeof(big));
	assert_int_equal(sm_tablets_table(&t, big, sizeof(big), "t", 1), -ENAMETOOLONG);
	assert_int_equal(sm_tablets_table(&t, big, sizeof(big) - 1, "t", 1), 3);
	/* the tables' tablets are apart */
	assert_int_equal(sm_tablets_insert(&t, 1, &x), 0);
	assert_null(sm_tablets_find(&t, 0, 5));
	assert_non_null(sm_tablets_find(&t, 1, 5));
	for (i = t.ntables; i < SM_TABLETS_MAX_TABLES; i++) {
		snprintf(name, sizeof(name), "t%u", i);
		assert_int_equal(sm_tablets_table(&t, "ks", 2, name, strlen(name)), (int)i);
	}
	assert_int_equal(sm_tablets_table(&t, "ks", 2, "one_more", 8), -ENOSPC);
	assert_int_equal(sm_tablets_table(&t, "keyspace1", 9, "counter1", 8), 1);
	sm_tablets_free(&t);
}

static void
test_payload_key(void **state)
{
	struct sm_bytes kv[4] = { sm_cql_str("other"), sm_cql_str("x"),
				  sm_cql_str(SM_TABLETS_PAYLOAD_KEY), sm_cql_str("tablet") };
	struct sm_cql_bytesmap in = { .kv = kv, .n = 2 }, out;
	struct sm_cql_reader r;
	struct sm_cql_buf b;
	struct sm_bytes v;

	(void)state;
	/* encoded and read back as a response's custom payload is */
	sm_cql_buf_init(&b);
	sm_cql_write_bytes_map(&b, &in);
	sm_cql_reader_init(&r, b.p, b.len);
	sm_cql_read_bytes_map(&r, &out);
	assert_null(r.err);
	assert_true(sm_tablets_payload(&out, &v));
	assert_int_equal(v.len, 6);
	assert_memory_equal(v.p, "tablet", 6);
	in.n = 1;
	sm_cql_buf_reset(&b);
	sm_cql_write_bytes_map(&b, &in);
	sm_cql_reader_init(&r, b.p, b.len);
	sm_cql_read_bytes_map(&r, &out);
	assert_false(sm_tablets_payload(&out, &v));
	out.n = 0;
	assert_false(sm_tablets_payload(&out, &v));
	sm_cql_buf_release(&b);
}

/* Hosts 0..3; the plan holds 0, 1 and 3 (2 is remote). */
static void
test_pick(void **state)
{
	static const int pos[] = { 0, 1, -1, 2 };
	struct sm_tablet x;
	uint64_t rng = 42, rr = 0;
	unsigned seen[4] = { 0 }, i;

	(void)state;
	memset(&x, 0, sizeof(x));
	x.nreps = 4;
	x.reps[0].host = 2; /* remote: never */
	x.reps[1].host = 3;
	x.reps[2].host = SM_TABLETS_HOST_UNKNOWN;
	x.reps[3].host = 1;
	for (i = 0; i < 4; i++)
		x.reps[i].shard = i;
	assert_int_equal(sm_tablets_pick(&x, SM_RING_TOPOLOGICAL, pos, 4, 3, &rng, &rr), 1);
	for (i = 0; i < 200; i++)
		seen[sm_tablets_pick(&x, SM_RING_RANDOM, pos, 4, 3, &rng, &rr)]++;
	assert_int_equal(seen[0], 0);
	assert_int_equal(seen[2], 0);
	assert_true(seen[1] > 0 && seen[3] > 0);
	/* neutral: the plan rotated by rr = 0, 1, 2 starts at host 0, 1, 3 */
	rr = 0;
	assert_int_equal(sm_tablets_pick(&x, SM_RING_NEUTRAL, pos, 4, 3, &rng, &rr), 3);
	assert_int_equal(sm_tablets_pick(&x, SM_RING_NEUTRAL, pos, 4, 3, &rng, &rr), 3);
	assert_int_equal(sm_tablets_pick(&x, SM_RING_NEUTRAL, pos, 4, 3, &rng, &rr), 1);
	assert_int_equal(rr, 3);
	/* a host index past the hosts given is skipped; no replica left: -1 */
	x.nreps = 3;
	x.reps[1].host = 7;
	assert_int_equal(sm_tablets_pick(&x, SM_RING_TOPOLOGICAL, pos, 4, 3, &rng, &rr), -1);
	assert_int_equal(sm_tablets_pick(&x, SM_RING_NEUTRAL, pos, 4, 3, &rng, &rr), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_valid),
		cmocka_unit_test(test_decode_many_replicas),
		cmocka_unit_test(test_decode_truncated),
		cmocka_unit_test(test_decode_hostile),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_overlap_replacement),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_tables),
		cmocka_unit_test(test_payload_key),
		cmocka_unit_test(test_pick),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
