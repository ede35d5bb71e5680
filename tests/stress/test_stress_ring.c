/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The token ring and token-aware query plans: replicas for known rings
 * (wrap-around, ties, vnodes, rf 1..3 and above the host count),
 * NetworkTopologyStrategy's rack rule, the three replica orderings, down
 * hosts, building from system-table cells, errors, and the Murmur3 and
 * shard-of-token vectors of cql.md §2.2 and §3.6.
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

#include "sm_stress_ring.h"

#define MAXH 16

static void
expect_hosts(const unsigned *got, unsigned n, const unsigned *want, unsigned wn)
{
	unsigned i;

	assert_int_equal(n, wn);
	for (i = 0; i < n; i++)
		assert_int_equal(got[i], want[i]);
}

#define EXPECT(got, n, ...)                                                                        \
	do {                                                                                       \
		const unsigned want_[] = { __VA_ARGS__ };                                          \
		expect_hosts((got), (n), want_, sizeof(want_) / sizeof(want_[0]));                 \
	} while (0)

/* Hosts A=0 (token -100), B=1 (0), C=2 (100). */
static void
three_hosts(struct sm_ring *r, unsigned rf)
{
	static const int64_t ta[] = { -100 }, tb[] = { 0 }, tc[] = { 100 };
	struct sm_ring_repl repl = { .strategy = SM_RING_SIMPLE, .rf = rf };

	sm_ring_init(r);
	assert_int_equal(sm_ring_add_host(r, "10.0.0.1", "dc1", "r1", ta, 1), 0);
	assert_int_equal(sm_ring_add_host(r, "10.0.0.2", "dc1", "r1", tb, 1), 1);
	assert_int_equal(sm_ring_add_host(r, "10.0.0.3", "dc1", "r1", tc, 1), 2);
	assert_int_equal(sm_ring_build(r, &repl, NULL), 0);
}

static void
test_simple_replicas(void **state)
{
	struct sm_ring r;
	unsigned out[MAXH], n;

	(void)state;
	three_hosts(&r, 1);
	n = sm_ring_replicas(&r, -150, out, MAXH);
	EXPECT(out, n, 0);
	/* A key token equal to a ring token belongs to that token's host. */
	n = sm_ring_replicas(&r, -100, out, MAXH);
	EXPECT(out, n, 0);
	n = sm_ring_replicas(&r, -99, out, MAXH);
	EXPECT(out, n, 1);
	n = sm_ring_replicas(&r, 100, out, MAXH);
	EXPECT(out, n, 2);
	/* Past the last token: wrap to the first. */
	n = sm_ring_replicas(&r, 101, out, MAXH);
	EXPECT(out, n, 0);
	n = sm_ring_replicas(&r, INT64_MAX, out, MAXH);
	EXPECT(out, n, 0);
	n = sm_ring_replicas(&r, INT64_MIN, out, MAXH);
	EXPECT(out, n, 0);
	sm_ring_free(&r);

	three_hosts(&r, 2);
	n = sm_ring_replicas(&r, -99, out, MAXH);
	EXPECT(out, n, 1, 2);
	n = sm_ring_replicas(&r, 50, out, MAXH);
	EXPECT(out, n, 2, 0);
	n = sm_ring_replicas(&r, 101, out, MAXH);
	EXPECT(out, n, 0, 1);
	/* A short @max gets the first ones and the full count. */
	n = sm_ring_replicas(&r, 101, out, 1);
	assert_int_equal(n, 2);
	assert_int_equal(out[0], 0);
	sm_ring_free(&r);

	three_hosts(&r, 3);
	n = sm_ring_replicas(&r, 50, out, MAXH);
	EXPECT(out, n, 2, 0, 1);
	n = sm_ring_replicas(&r, -1000, out, MAXH);
	EXPECT(out, n, 0, 1, 2);
	sm_ring_free(&r);

	/* rf above the host count: every host once. */
	three_hosts(&r, 5);
	n = sm_ring_replicas(&r, 0, out, MAXH);
	EXPECT(out, n, 1, 2, 0);
	sm_ring_free(&r);
}

static void
test_vnodes(void **state)
{
	static const int64_t ta[] = { 50, -100 }, tb[] = { 0 }, tc[] = { 100 };
	struct sm_ring_repl repl = { .strategy = SM_RING_SIMPLE, .rf = 3 };
	struct sm_ring r;
	unsigned out[MAXH], n;

	(void)state;
	sm_ring_init(&r);
	assert_int_equal(sm_ring_add_host(&r, "a", NULL, NULL, ta, 2), 0);
	assert_int_equal(sm_ring_add_host(&r, "b", NULL, NULL, tb, 1), 1);
	assert_int_equal(sm_ring_add_host(&r, "c", NULL, NULL, tc, 1), 2);
	/* A host without tokens takes part in round-robin only. */
	assert_int_equal(sm_ring_add_host(&r, "d", NULL, NULL, NULL, 0), 3);
	assert_int_equal(sm_ring_build(&r, &repl, NULL), 0);
	/* Ring: -100 a, 0 b, 50 a, 100 c. From 50: a, c, (a again), b. */
	n = sm_ring_replicas(&r, 1, out, MAXH);
	EXPECT(out, n, 0, 2, 1);
	n = sm_ring_replicas(&r, -50, out, MAXH);
	EXPECT(out, n, 1, 0, 2);
	sm_ring_free(&r);
}

/*
 * dc1: A r1 (10), B r1 (30), C r2 (50); dc2: D r1 (20), E r1 (40).
 */
static void
nts_ring(struct sm_ring *r, unsigned rf1, unsigned rf2, const char *local)
{
	static const int64_t ta[] = { 10 }, tb[] = { 30 }, tc[] = { 50 }, td[] = { 20 },
			     te[] = { 40 };
	struct sm_ring_dc_rf dcs[] = { { "dc1", rf1 }, { "dc2", rf2 } };
	struct sm_ring_repl repl = { .strategy = SM_RING_NETWORK_TOPOLOGY, .dcs = dcs, .ndcs = 2 };

	sm_ring_init(r);
	assert_int_equal(sm_ring_add_host(r, "A", "dc1", "r1", ta, 1), 0);
	assert_int_equal(sm_ring_add_host(r, "B", "dc1", "r1", tb, 1), 1);
	assert_int_equal(sm_ring_add_host(r, "C", "dc1", "r2", tc, 1), 2);
	assert_int_equal(sm_ring_add_host(r, "D", "dc2", "r1", td, 1), 3);
	assert_int_equal(sm_ring_add_host(r, "E", "dc2", "r1", te, 1), 4);
	assert_int_equal(sm_ring_build(r, &repl, local), 0);
}

static void
test_network_topology(void **state)
{
	struct sm_ring_dc_rf every[] = { { NULL, 1 } };
	struct sm_ring_repl repl = { .strategy = SM_RING_NETWORK_TOPOLOGY,
				     .dcs = every,
				     .ndcs = 1 };
	static const int64_t t1[] = { 1 }, t2[] = { 2 };
	struct sm_ring r;
	unsigned out[MAXH], n;

	(void)state;
	/* B is skipped (rack r1 already has A) until C completes dc1's racks. */
	nts_ring(&r, 2, 1, NULL);
	n = sm_ring_replicas(&r, 5, out, MAXH);
	EXPECT(out, n, 0, 3, 2);
	sm_ring_free(&r);
	nts_ring(&r, 3, 1, NULL);
	n = sm_ring_replicas(&r, 5, out, MAXH);
	EXPECT(out, n, 0, 3, 2, 1);
	/* From 35: E (dc2), C (r2), wrap: A (r1, completes the racks). */
	n = sm_ring_replicas(&r, 35, out, MAXH);
	EXPECT(out, n, 4, 2, 0, 1);
	sm_ring_free(&r);
	/* One DC only; rf above the DC's host count is capped. */
	nts_ring(&r, 5, 0, NULL);
	n = sm_ring_replicas(&r, 15, out, MAXH);
	EXPECT(out, n, 1, 2, 0);
	sm_ring_free(&r);

	/* A NULL dc applies to every DC (replication_factor expanded). */
	sm_ring_init(&r);
	assert_int_equal(sm_ring_add_host(&r, "x", "east", "a", t1, 1), 0);
	assert_int_equal(sm_ring_add_host(&r, "y", "west", "a", t2, 1), 1);
	assert_int_equal(sm_ring_build(&r, &repl, NULL), 0);
	n = sm_ring_replicas(&r, 2, out, MAXH);
	EXPECT(out, n, 1, 0);
	sm_ring_free(&r);
}

static void
test_topological(void **state)
{
	uint64_t rng = 1, rr = 0;
	struct sm_ring r;
	unsigned out[MAXH], n, i;

	(void)state;
	three_hosts(&r, 2);
	for (i = 0; i < 10; i++) {
		n = sm_ring_plan(&r, -99, SM_RING_TOPOLOGICAL, &rng, &rr, NULL, out, MAXH);
		EXPECT(out, n, 1, 2, 0);
	}
	assert_int_equal(rr, 10);
	/* A short @max truncates the plan. */
	n = sm_ring_plan(&r, -99, SM_RING_TOPOLOGICAL, &rng, &rr, NULL, out, 1);
	EXPECT(out, n, 1);
	sm_ring_free(&r);
}

static void
test_random(void **state)
{
	static const int64_t tok[5] = { -200, -100, 0, 100, 200 };
	struct sm_ring_repl repl = { .strategy = SM_RING_SIMPLE, .rf = 3 };
	unsigned out[MAXH], first[MAXH], n, i, j, orders = 0;
	uint64_t rng = 42, rng2 = 42, rng3 = 7, rr = 0, rr2 = 0;
	bool seen[3][3][3];
	char name[8];
	struct sm_ring r;

	(void)state;
	memset(seen, 0, sizeof(seen));
	sm_ring_init(&r);
	for (i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "h%u", i);
		assert_int_equal(sm_ring_add_host(&r, name, NULL, NULL, &tok[i], 1), (int)i);
	}
	assert_int_equal(sm_ring_build(&r, &repl, NULL), 0);
	/* Token 50: replicas h3, h4, h0. */
	n = sm_ring_replicas(&r, 50, out, MAXH);
	EXPECT(out, n, 3, 4, 0);
	for (i = 0; i < 300; i++) {
		bool in[5] = { false };

		n = sm_ring_plan(&r, 50, SM_RING_RANDOM, &rng, &rr, NULL, out, MAXH);
		assert_int_equal(n, 5);
		/* The first three are a permutation of the replicas, then the rest. */
		for (j = 0; j < 5; j++) {
			assert_false(in[out[j]]);
			in[out[j]] = true;
			if (j < 3)
				assert_true(out[j] == 3 || out[j] == 4 || out[j] == 0);
			else
				assert_true(out[j] == 1 || out[j] == 2);
		}
		{
			unsigned a = out[0] == 0 ? 0 : out[0] - 2, b = out[1] == 0 ? 0 : out[1] - 2,
				 c = out[2] == 0 ? 0 : out[2] - 2;

			if (!seen[a][b][c])
				orders++;
			seen[a][b][c] = true;
		}
	}
	/* 300 shuffles of 3 show every order. */
	assert_int_equal(orders, 6);
	/* The same seed gives the same plans; another seed, other plans. */
	rng = 42;
	rr = 0;
	n = sm_ring_plan(&r, 50, SM_RING_RANDOM, &rng, &rr, NULL, first, MAXH);
	for (i = 0; i < 20; i++) {
		n = sm_ring_plan(&r, 50, SM_RING_RANDOM, &rng2, &rr2, NULL, out, MAXH);
		if (i == 0)
			assert_memory_equal(out, first, n * sizeof(unsigned));
	}
	{
		bool differ = false;

		rng = 42;
		for (i = 0; i < 20 && !differ; i++) {
			unsigned a[MAXH], b[MAXH];

			sm_ring_plan(&r, 50, SM_RING_RANDOM, &rng, &rr, NULL, a, MAXH);
			sm_ring_plan(&r, 50, SM_RING_RANDOM, &rng3, &rr, NULL, b, MAXH);
			differ = memcmp(a, b, 3 * sizeof(unsigned)) != 0;
		}
		assert_true(differ);
	}
	sm_ring_free(&r);
}

static void
test_neutral(void **state)
{
	static const int64_t tok[5] = { -200, -100, 0, 100, 200 };
	struct sm_ring_repl repl = { .strategy = SM_RING_SIMPLE, .rf = 3 };
	uint64_t rng = 1, rr = 0;
	unsigned out[MAXH], n, i;
	bool down[5] = { false };
	char name[8];
	struct sm_ring r;

	(void)state;
	sm_ring_init(&r);
	for (i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "h%u", i);
		assert_int_equal(sm_ring_add_host(&r, name, NULL, NULL, &tok[i], 1), (int)i);
	}
	assert_int_equal(sm_ring_build(&r, &repl, NULL), 0);
	/* Token -150: replicas h1, h2, h3. The child's order rotates per plan. */
	n = sm_ring_plan(&r, -150, SM_RING_NEUTRAL, &rng, &rr, NULL, out, MAXH);
	EXPECT(out, n, 1, 2, 3, 0, 4);
	n = sm_ring_plan(&r, -150, SM_RING_NEUTRAL, &rng, &rr, NULL, out, MAXH);
	EXPECT(out, n, 1, 2, 3, 4, 0);
	n = sm_ring_plan(&r, -150, SM_RING_NEUTRAL, &rng, &rr, NULL, out, MAXH);
	EXPECT(out, n, 2, 3, 1, 4, 0);
	n = sm_ring_plan(&r, -150, SM_RING_NEUTRAL, &rng, &rr, NULL, out, MAXH);
	EXPECT(out, n, 3, 1, 2, 4, 0);
	n = sm_ring_plan(&r, -150, SM_RING_NEUTRAL, &rng, &rr, NULL, out, MAXH);
	EXPECT(out, n, 1, 2, 3, 4, 0);
	/* TOPOLOGICAL and RANDOM rotate only the non-replicas. */
	rr = 4;
	n = sm_ring_plan(&r, -150, SM_RING_TOPOLOGICAL, &rng, &rr, NULL, out, MAXH);
	EXPECT(out, n, 1, 2, 3, 4, 0);
	/* Down hosts are left out of every ordering. */
	down[2] = true;
	down[0] = true;
	rr = 0;
	n = sm_ring_plan(&r, -150, SM_RING_NEUTRAL, &rng, &rr, down, out, MAXH);
	EXPECT(out, n, 1, 3, 4);
	n = sm_ring_plan(&r, -150, SM_RING_TOPOLOGICAL, &rng, &rr, down, out, MAXH);
	EXPECT(out, n, 1, 3, 4);
	n = sm_ring_plan(&r, -150, SM_RING_RANDOM, &rng, &rr, down, out, MAXH);
	assert_int_equal(n, 3);
	assert_true((out[0] == 1 && out[1] == 3) || (out[0] == 3 && out[1] == 1));
	assert_int_equal(out[2], 4);
	sm_ring_free(&r);
}

static void
test_local_dc(void **state)
{
	uint64_t rng = 3, rr = 0;
	unsigned out[MAXH], n, i;
	struct sm_ring r;

	(void)state;
	/* dc1 rf 2, dc2 rf 1: replicas of 5 are A, D, C; the plan is dc1 only. */
	nts_ring(&r, 2, 1, "dc1");
	n = sm_ring_plan(&r, 5, SM_RING_TOPOLOGICAL, &rng, &rr, NULL, out, MAXH);
	EXPECT(out, n, 0, 2, 1);
	for (i = 0; i < 20; i++) {
		n = sm_ring_plan(&r, 5, SM_RING_RANDOM, &rng, &rr, NULL, out, MAXH);
		assert_int_equal(n, 3);
		assert_true((out[0] == 0 && out[1] == 2) || (out[0] == 2 && out[1] == 0));
		assert_int_equal(out[2], 1);
	}
	rr = 1;
	n = sm_ring_plan(&r, 5, SM_RING_NEUTRAL, &rng, &rr, NULL, out, MAXH);
	EXPECT(out, n, 2, 0, 1);
	assert_true(r.hosts[0].local && !r.hosts[3].local);
	sm_ring_free(&r);
	nts_ring(&r, 1, 1, "dc2");
	n = sm_ring_plan(&r, 5, SM_RING_TOPOLOGICAL, &rng, &rr, NULL, out, MAXH);
	assert_int_equal(n, 2);
	assert_int_equal(out[0], 3);
	sm_ring_free(&r);
}

/* A set<text> cell: [int n] then n [int len][bytes]. */
static size_t
set_cell(uint8_t *p, const char *const *v, unsigned n)
{
	size_t off = 4;
	unsigned i;

	p[0] = 0;
	p[1] = 0;
	p[2] = 0;
	p[3] = (uint8_t)n;
	for (i = 0; i < n; i++) {
		uint32_t len = (uint32_t)strlen(v[i]);

		p[off] = 0;
		p[off + 1] = 0;
		p[off + 2] = 0;
		p[off + 3] = (uint8_t)len;
		memcpy(p + off + 4, v[i], len);
		off += 4 + len;
	}
	return off;
}

static void
test_cells_and_errors(void **state)
{
	static const char *const toks1[] = { "-9223372036854775808", "42" };
	static const char *const toks2[] = { "9223372036854775807" };
	static const char *const bad[] = { "12x" };
	static const char *const big[] = { "9223372036854775808" };
	static const uint8_t v4[4] = { 10, 1, 2, 3 }, v6[16] = { 0xfd, 0, [15] = 4 };
	struct sm_ring_repl repl = { .strategy = SM_RING_SIMPLE, .rf = 1 };
	static const int64_t dup[] = { 42 };
	uint8_t cell[128];
	unsigned out[MAXH], n;
	char longname[80];
	struct sm_ring r;
	size_t len;

	(void)state;
	sm_ring_init(&r);
	len = set_cell(cell, toks1, 2);
	assert_int_equal(sm_ring_add_host_cells(&r, v4, 4, (const uint8_t *)"dc1", 3,
						(const uint8_t *)"rack1", 5, cell, len),
			 0);
	assert_string_equal(r.hosts[0].addr, "10.1.2.3");
	assert_string_equal(r.hosts[0].dc, "dc1");
	assert_string_equal(r.hosts[0].rack, "rack1");
	len = set_cell(cell, toks2, 1);
	assert_int_equal(sm_ring_add_host_cells(&r, v6, 16, NULL, 0, NULL, 0, cell, len), 1);
	assert_string_equal(r.hosts[1].addr, "fd00::4");
	/* Malformed cells and names. */
	assert_int_equal(sm_ring_add_host_cells(&r, v4, 3, NULL, 0, NULL, 0, NULL, 0), -EINVAL);
	assert_int_equal(sm_ring_add_host_cells(&r, (const uint8_t *)"\x0a\x00\x00\x09", 4, NULL, 0,
						NULL, 0, cell, len - 1),
			 -EINVAL);
	len = set_cell(cell, bad, 1);
	assert_int_equal(sm_ring_add_host_cells(&r, (const uint8_t *)"\x0a\x00\x00\x09", 4, NULL, 0,
						NULL, 0, cell, len),
			 -EINVAL);
	assert_non_null(strstr(r.err, "decimal"));
	assert_int_equal(sm_ring_add_host_str(&r, "z", NULL, NULL, bad, 1), -EINVAL);
	assert_int_equal(sm_ring_add_host_str(&r, "z", NULL, NULL, big, 1), -EINVAL);
	assert_int_equal(sm_ring_add_host_str(&r, "10.1.2.3", NULL, NULL, toks2, 0), -EEXIST);
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(sm_ring_add_host(&r, longname, NULL, NULL, NULL, 0), -ENAMETOOLONG);
	assert_int_equal(r.nhosts, 2);
	assert_int_equal(sm_ring_build(&r, &repl, "nowhere"), -EINVAL);
	assert_non_null(strstr(r.err, "nowhere"));
	assert_int_equal(sm_ring_build(&r, &repl, NULL), 0);
	assert_int_equal(sm_ring_build(&r, &repl, NULL), -EBUSY);
	assert_int_equal(sm_ring_add_host(&r, "late", NULL, NULL, NULL, 0), -EBUSY);
	/* The extreme tokens: INT64_MIN is the first ring position. */
	n = sm_ring_replicas(&r, INT64_MIN, out, MAXH);
	EXPECT(out, n, 0);
	n = sm_ring_replicas(&r, 43, out, MAXH);
	EXPECT(out, n, 1);
	sm_ring_free(&r);

	/* Two hosts on one token; no tokens at all; rf 0. */
	sm_ring_init(&r);
	assert_int_equal(sm_ring_build(&r, &repl, NULL), -EINVAL);
	assert_int_equal(sm_ring_add_host(&r, "a", NULL, NULL, dup, 1), 0);
	assert_int_equal(sm_ring_add_host(&r, "b", NULL, NULL, dup, 1), 1);
	assert_int_equal(sm_ring_build(&r, &repl, NULL), -EINVAL);
	assert_non_null(strstr(r.err, "42"));
	sm_ring_free(&r);
	sm_ring_init(&r);
	assert_int_equal(sm_ring_add_host(&r, "a", NULL, NULL, dup, 1), 0);
	repl.rf = 0;
	assert_int_equal(sm_ring_build(&r, &repl, NULL), -EINVAL);
	assert_int_equal(sm_ring_replicas(&r, 0, out, MAXH), 0);
	sm_ring_free(&r);
}

/* cql.md §3.6. */
static void
test_murmur3_vectors(void **state)
{
	uint8_t ff[15], seq[17];
	unsigned i;

	(void)state;
	memset(ff, 0xff, sizeof(ff));
	for (i = 0; i < sizeof(seq); i++)
		seq[i] = (uint8_t)i;
	assert_true(sm_ring_token_of("\x80", 1) == -5284281814142962636LL);
	assert_true(sm_ring_token_of(ff, sizeof(ff)) == -2195530867418009455LL);
	assert_true(sm_ring_token_of("\x80\x01\x02", 3) == -6213411759895694165LL);
	assert_true(sm_ring_token_of("\x00\x00\x00\x01", 4) == -4069959284402364209LL);
	assert_true(sm_ring_token_of(seq, sizeof(seq)) == 6662781046685680142LL);
	assert_true(sm_ring_token_of("hello world", 11) == 5998619086395760910LL);
	assert_true(sm_ring_token_of(NULL, 0) == 0);
}

/* cql.md §2.2: key, token, shard for (8, 12), (14, 12), (8, 0). */
static void
test_shard_vectors(void **state)
{
	static const struct {
		const char *key;
		size_t len;
		int64_t token;
		unsigned s8, s14, s8m0;
	} v[] = {
		{ "\x00\x00\x00\x01", 4, -4069959284402364209LL, 2, 4, 2 },
		{ "\x00\x00\x00\x05", 4, -7509452495886106294LL, 4, 7, 0 },
		{ "\x00\x00\x00\x00\x00\x00\x00\x00", 8, 2945182322382062539LL, 7, 13, 5 },
		{ "\x00\x00\x00\x00\x00\x00\x00\x01", 8, 6292367497774912474LL, 1, 2, 6 },
		{ "key1", 4, 1573573083296714675LL, 3, 5, 4 },
		{ "\x80", 1, -5284281814142962636LL, 5, 9, 1 },
	};
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		int64_t t = sm_ring_token_of(v[i].key, v[i].len);

		assert_true(t == v[i].token);
		assert_int_equal(sm_ring_shard_of(t, 8, 12), v[i].s8);
		assert_int_equal(sm_ring_shard_of(t, 14, 12), v[i].s14);
		assert_int_equal(sm_ring_shard_of(t, 8, 0), v[i].s8m0);
		assert_int_equal(sm_ring_shard_of(t, 1, 12), 0);
	}
}

static void
test_rand(void **state)
{
	uint64_t s = 0, s2 = 0;
	unsigned hist[4] = { 0 }, i;

	(void)state;
	assert_true(sm_ring_rand(&s) == sm_ring_rand(&s2));
	assert_true(sm_ring_rand(&s) != sm_ring_rand(&s));
	for (i = 0; i < 4000; i++)
		hist[sm_ring_rand_below(&s, 4)]++;
	for (i = 0; i < 4; i++)
		assert_true(hist[i] > 800 && hist[i] < 1200);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_simple_replicas),
		cmocka_unit_test(test_vnodes),
		cmocka_unit_test(test_network_topology),
		cmocka_unit_test(test_topological),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_neutral),
		cmocka_unit_test(test_local_dc),
		cmocka_unit_test(test_cells_and_errors),
		cmocka_unit_test(test_murmur3_vectors),
		cmocka_unit_test(test_shard_vectors),
		cmocka_unit_test(test_rand),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
