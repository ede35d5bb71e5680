/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "sm_uuid.h"

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))
#define GENERATIONS 1000000

static int64_t
wall_micros(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static struct sm_uuid
must_parse(const char *s)
{
	struct sm_uuid u;

	if (sm_uuid_parse(s, &u) != 0)
		fail_msg("cannot parse %s", s);
	return u;
}

static bool
is_rfc4122_variant(const struct sm_uuid *u)
{
	return (u->b[8] & 0xc0) == 0x80;
}

static void
test_gen_monotonic(void **state)
{
	struct sm_uuid_gen g;
	struct sm_uuid prev, cur;
	int64_t before = wall_micros();
	int i;

	(void)state;
	sm_uuid_gen_init(&g, 3);
	sm_uuid_gen_next(&g, &prev);
	/* Stamped with the time of the call, not some other clock (a bound, not a timing). */
	assert_true(sm_uuid_micros(&prev) >= before);
	for (i = 1; i < GENERATIONS; i++) {
		sm_uuid_gen_next(&g, &cur);
		if (sm_timeuuid_cmp(&prev, &cur) >= 0 ||
		    sm_uuid_ticks(&cur) <= sm_uuid_ticks(&prev))
			fail_msg("generation %d not after the previous one", i);
		/* Only the timestamp moves. */
		if (memcmp(&prev.b[8], &cur.b[8], 8) != 0)
			fail_msg("generation %d changed clock_seq/node", i);
		prev = cur;
	}
	assert_int_equal(sm_uuid_version(&cur), 1);
	assert_true(is_rfc4122_variant(&cur));
	assert_int_equal(sm_uuid_ticks(&cur), g.last_ticks);
}

static void
test_gen_clock_backwards(void **state)
{
	struct sm_uuid_gen g;
	struct sm_uuid a, b;
	uint64_t future;

	(void)state;
	sm_uuid_gen_init(&g, 0);
	sm_uuid_gen_next(&g, &a);
	/* Pretend the clock was an hour ahead when we last generated, then stepped back. */
	future = sm_uuid_ticks(&a) + 3600ull * 10000000ull;
	g.last_ticks = future;
	sm_uuid_gen_next(&g, &a);
	assert_int_equal(sm_uuid_ticks(&a), future + 1);
	sm_uuid_gen_next(&g, &b);
	assert_int_equal(sm_uuid_ticks(&b), future + 2);
	assert_true(sm_timeuuid_cmp(&a, &b) < 0);

	/* At the end of time the timestamp saturates rather than corrupting the version. */
	g.last_ticks = SM_UUID_TICKS_MAX;
	sm_uuid_gen_next(&g, &a);
	assert_int_equal(sm_uuid_ticks(&a), SM_UUID_TICKS_MAX);
	assert_int_equal(sm_uuid_version(&a), 1);
}

static void
test_next_after(void **state)
{
	struct sm_uuid_gen g;
	struct sm_uuid u, v;
	int64_t min;
	int i;

	(void)state;
	sm_uuid_gen_init(&g, 1);

	/* A ballot seen from the future: ours lands on the very next microsecond. */
	min = wall_micros() + 10 * 1000000ll;
	sm_uuid_gen_next_after(&g, min, &u);
	assert_int_equal(sm_uuid_micros(&u), min + 1);
	assert_int_equal(sm_uuid_ticks(&u) % 10, 0);
	/* Later plain UUIDs still follow it, although the clock is behind. */
	sm_uuid_gen_next(&g, &v);
	assert_int_equal(sm_uuid_ticks(&v), sm_uuid_ticks(&u) + 1);

	/* Chained ballots, each strictly after the last one's microsecond. */
	for (i = 0; i < 1000; i++) {
		sm_uuid_gen_next_after(&g, sm_uuid_micros(&v), &u);
		assert_true(sm_uuid_micros(&u) > sm_uuid_micros(&v));
		assert_true(sm_timeuuid_cmp(&v, &u) < 0);
		v = u;
	}

	/* A minimum in the past changes nothing: still after every previous UUID. */
	sm_uuid_gen_next_after(&g, 0, &u);
	assert_int_equal(sm_uuid_ticks(&u), sm_uuid_ticks(&v) + 1);
	sm_uuid_gen_next_after(&g, INT64_MIN, &v);
	assert_int_equal(sm_uuid_ticks(&v), sm_uuid_ticks(&u) + 1);

	/* Fresh generator, minimum in the past: the current time. */
	sm_uuid_gen_init(&g, 1);
	min = wall_micros();
	sm_uuid_gen_next_after(&g, -1000000, &u);
	assert_true(sm_uuid_micros(&u) >= min);

	/* Out of range minimums saturate instead of overflowing. */
	sm_uuid_gen_next_after(&g, INT64_MAX, &u);
	assert_int_equal(sm_uuid_ticks(&u), SM_UUID_TICKS_MAX);
	assert_int_equal(sm_uuid_version(&u), 1);
}

/* Known values, cross-checked with Python's uuid module; Cassandra's minTimeuuid(0). */
static void
test_ticks_and_micros_vectors(void **state)
{
	static const struct {
		const char *s;
		uint64_t ticks;
		int64_t micros;
	} v[] = {
		{ "13814000-1dd2-11b2-8080-808080808080", 0x01b21dd213814000ull, 0 },
		{ "04c29680-833b-11ee-9234-0242ac120002", 0x01ee833b04c29680ull,
		  1700000000123456ll },
		{ "04c29689-833b-11ee-9234-0242ac120002", 0x01ee833b04c29689ull,
		  1700000000123456ll },
		{ "13813ff6-1dd2-11b2-9234-0242ac120002", 0x01b21dd213813ff6ull, -1 },
		{ "13813fff-1dd2-11b2-9234-0242ac120002", 0x01b21dd213813fffull, -1 },
		{ "00000000-0000-1000-9234-0242ac120002", 0, -12219292800000000ll },
		{ "ffffffff-ffff-1fff-9234-0242ac120002", SM_UUID_TICKS_MAX,
		  (int64_t)((SM_UUID_TICKS_MAX - SM_UUID_UNIX_EPOCH_TICKS) / 10) },
	};
	size_t i;

	(void)state;
	for (i = 0; i < N_ELEMS(v); i++) {
		struct sm_uuid u = must_parse(v[i].s);

		assert_int_equal(sm_uuid_ticks(&u), v[i].ticks);
		assert_int_equal(sm_uuid_micros(&u), v[i].micros);
	}
}

/* Future microseconds are reachable exactly through next_after: micros round trip. */
static void
test_micros_round_trip(void **state)
{
	struct sm_uuid_gen g;
	struct sm_uuid u;
	int64_t base = wall_micros() + 1000000, m;
	int i;

	(void)state;
	for (i = 0; i < 1000; i++) {
		sm_uuid_gen_init(&g, 7);
		m = base + (int64_t)i * 7919;
		sm_uuid_gen_next_after(&g, m - 1, &u);
		assert_int_equal(sm_uuid_micros(&u), m);
		assert_int_equal(sm_uuid_ticks(&u), (uint64_t)m * 10 + SM_UUID_UNIX_EPOCH_TICKS);
	}
	/* Up to the last representable microsecond. */
	m = (int64_t)((SM_UUID_TICKS_MAX - SM_UUID_UNIX_EPOCH_TICKS) / 10);
	sm_uuid_gen_init(&g, 7);
	sm_uuid_gen_next_after(&g, m - 1, &u);
	assert_int_equal(sm_uuid_micros(&u), m);
}

static void
test_format_parse(void **state)
{
	static const struct sm_uuid known = { { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
						0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10 } };
	char buf[64];
	struct sm_uuid u, w;
	int i;

	(void)state;
	assert_int_equal(sm_uuid_format(&known, buf, sizeof(buf)), SM_UUID_STRLEN);
	assert_string_equal(buf, "01234567-89ab-cdef-fedc-ba9876543210");
	assert_int_equal(sm_uuid_parse("01234567-89AB-CDEF-FEDC-BA9876543210", &u), 0);
	assert_memory_equal(&u, &known, sizeof(u));

	for (i = 0; i < 10000; i++) {
		sm_uuid_random(&u);
		sm_uuid_format(&u, buf, sizeof(buf));
		assert_int_equal(strlen(buf), SM_UUID_STRLEN);
		assert_int_equal(sm_uuid_parse(buf, &w), 0);
		assert_memory_equal(&u, &w, sizeof(u));
	}

	/* snprintf-style truncation. */
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(sm_uuid_format(&known, buf, 0), SM_UUID_STRLEN);
	assert_int_equal(buf[0], 'x');
	assert_int_equal(sm_uuid_format(&known, buf, 1), SM_UUID_STRLEN);
	assert_string_equal(buf, "");
	assert_int_equal(sm_uuid_format(&known, buf, 10), SM_UUID_STRLEN);
	assert_string_equal(buf, "01234567-");
	assert_int_equal(buf[10], 'x');
	assert_int_equal(sm_uuid_format(&known, buf, SM_UUID_STRLEN), SM_UUID_STRLEN);
	assert_string_equal(buf, "01234567-89ab-cdef-fedc-ba987654321");
	assert_int_equal(sm_uuid_format(&known, buf, SM_UUID_STRLEN + 1), SM_UUID_STRLEN);
	assert_string_equal(buf, "01234567-89ab-cdef-fedc-ba9876543210");
}

static void
test_parse_invalid(void **state)
{
	static const char *const bad[] = {
		"",
		"0",
		"01234567-89ab-cdef-fedc-ba987654321",	    /* one short */
		"01234567-89ab-cdef-fedc-ba98765432100",    /* one long */
		"01234567-89ab-cdef-fedc-ba9876543210 ",    /* trailing space */
		" 01234567-89ab-cdef-fedc-ba9876543210",    /* leading space */
		"0123456789ab-cdef-fedc-ba9876543210",	    /* dash missing */
		"01234567-89abc-def-fedc-ba9876543210",	    /* dash moved */
		"01234567-89ab-cdef-fedc-ba98765432g0",	    /* not hex */
		"01234567_89ab_cdef_fedc_ba9876543210",	    /* wrong separator */
		"{01234567-89ab-cdef-fedc-ba9876543210}",   /* braces */
		"0123456789abcdeffedcba9876543210",	    /* no dashes */
		"01234567-89ab-cdef-fedc-ba98765432\n0",    /* control char */
		"+1234567-89ab-cdef-fedc-ba9876543210",	    /* sign */
		"01234567-89ab-cdef-fedc-\0a9876543210xxx", /* embedded NUL */
	};
	struct sm_uuid u, sentinel;
	size_t i;

	(void)state;
	memset(&sentinel, 0xa5, sizeof(sentinel));
	for (i = 0; i < N_ELEMS(bad); i++) {
		u = sentinel;
		if (sm_uuid_parse(bad[i], &u) != -EINVAL)
			fail_msg("accepted bad uuid #%zu \"%s\"", i, bad[i]);
		assert_memory_equal(&u, &sentinel, sizeof(u));
	}
}

/* Build a version 1 UUID from parts, the test's own encoder. */
static struct sm_uuid
v1(uint64_t ticks, uint64_t lsb)
{
	struct sm_uuid u;
	int i;

	u.b[0] = (uint8_t)(ticks >> 24);
	u.b[1] = (uint8_t)(ticks >> 16);
	u.b[2] = (uint8_t)(ticks >> 8);
	u.b[3] = (uint8_t)ticks;
	u.b[4] = (uint8_t)(ticks >> 40);
	u.b[5] = (uint8_t)(ticks >> 32);
	u.b[6] = (uint8_t)(0x10 | ((ticks >> 56) & 0x0f));
	u.b[7] = (uint8_t)(ticks >> 48);
	for (i = 0; i < 8; i++)
		u.b[8 + i] = (uint8_t)(lsb >> (56 - 8 * i));
	return u;
}

static int
sign(int x)
{
	return (x > 0) - (x < 0);
}

static void
check_order(struct sm_uuid lo, struct sm_uuid hi)
{
	assert_int_equal(sign(sm_timeuuid_cmp(&lo, &hi)), -1);
	assert_int_equal(sign(sm_timeuuid_cmp(&hi, &lo)), 1);
	assert_int_equal(sm_timeuuid_cmp(&lo, &lo), 0);
	assert_int_equal(sm_timeuuid_cmp(&hi, &hi), 0);
}

static void
test_cmp_rule(void **state)
{
	const uint64_t t = 0x01ee833b04c29680ull;
	struct sm_uuid_gen g, h;
	struct sm_uuid r, s;
	uint64_t lsb;
	int i, k;

	(void)state;
	/* Low bytes are signed: 0x80 (-128) < 0x7f (127), 0xff (-1) < 0x01. */
	check_order(v1(t, 0x8000000000000000ull), v1(t, 0x7f00000000000000ull));
	check_order(v1(t, 0xff00000000000000ull), v1(t, 0x0000000000000000ull));
	check_order(v1(t, 0x00000000000000ffull), v1(t, 0x0000000000000001ull));
	check_order(v1(t, 0x7f000000000000ffull), v1(t, 0x7f00000000000000ull));
	/* Byte order still matters: the first differing byte decides. */
	check_order(v1(t, 0x01ff000000000000ull), v1(t, 0x0200000000000000ull));
	check_order(v1(t, 0x80ffffffffffffffull), v1(t, 0x8100000000000000ull));
	/* minTimeuuid/maxTimeuuid bounds: every low half lies between. */
	for (i = 0; i < 1000; i++) {
		sm_uuid_random(&r);
		lsb = 0;
		for (k = 8; k < 16; k++)
			lsb = lsb << 8 | r.b[k];
		if (lsb != 0x8080808080808080ull)
			check_order(v1(t, 0x8080808080808080ull), v1(t, lsb));
		if (lsb != 0x7f7f7f7f7f7f7f7full)
			check_order(v1(t, lsb), v1(t, 0x7f7f7f7f7f7f7f7full));
	}

	/* The timestamp decides first, whatever the low bytes. */
	check_order(v1(t, 0x7f7f7f7f7f7f7f7full), v1(t + 1, 0x8080808080808080ull));
	/* Timestamp order, not byte order: time_low is first on the wire. */
	check_order(v1(0x00000000ffffffffull, 0), v1(0x0000000100000000ull, 0));
	check_order(v1(0x0000ffffffffffffull, 0), v1(0x0001000000000000ull, 0));
	check_order(v1(0x00ffffffffffffffull, 0), v1(0x0100000000000000ull, 0));
	check_order(v1(0, 0), v1(SM_UUID_TICKS_MAX, 0));

	/* Generated UUIDs from two shards interleave by time. */
	sm_uuid_gen_init(&g, 0);
	sm_uuid_gen_next(&g, &r);
	sm_uuid_gen_init(&h, 1);
	h.last_ticks = g.last_ticks + 5;
	sm_uuid_gen_next(&h, &s);
	check_order(r, s);
}

static void
test_version_variant(void **state)
{
	/* Java's UUID.nameUUIDFromBytes("hello"): md5 5d41402abc4b2a76b9719d911017c592. */
	static const uint8_t md5_hello[16] = { 0x5d, 0x41, 0x40, 0x2a, 0xbc, 0x4b, 0x2a, 0x76,
					       0xb9, 0x71, 0x9d, 0x91, 0x10, 0x17, 0xc5, 0x92 };
	static const uint8_t ones[16] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					  0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	struct sm_uuid_gen g;
	struct sm_uuid u, w, sentinel;
	char buf[SM_UUID_STRLEN + 1];
	int i, differ = 0;

	(void)state;
	sm_uuid_gen_init(&g, 2);
	sm_uuid_gen_next(&g, &u);
	assert_int_equal(sm_uuid_version(&u), 1);
	assert_true(is_rfc4122_variant(&u));

	for (i = 0; i < 1000; i++) {
		sm_uuid_random(&u);
		assert_int_equal(sm_uuid_version(&u), 4);
		assert_true(is_rfc4122_variant(&u));
		sm_uuid_random(&w);
		differ += memcmp(&u, &w, sizeof(u)) != 0;
	}
	assert_int_equal(differ, 1000);

	assert_int_equal(sm_uuid_from_md5(md5_hello, 3, &u), 0);
	sm_uuid_format(&u, buf, sizeof(buf));
	assert_string_equal(buf, "5d41402a-bc4b-3a76-b971-9d911017c592");
	assert_int_equal(sm_uuid_from_md5(ones, 5, &u), 0);
	sm_uuid_format(&u, buf, sizeof(buf));
	assert_string_equal(buf, "ffffffff-ffff-5fff-bfff-ffffffffffff");
	memset(&sentinel, 0xa5, sizeof(sentinel));
	u = sentinel;
	assert_int_equal(sm_uuid_from_md5(md5_hello, 0, &u), -EINVAL);
	assert_int_equal(sm_uuid_from_md5(md5_hello, 16, &u), -EINVAL);
	assert_memory_equal(&u, &sentinel, sizeof(u));
}

static void
test_gen_node_per_shard(void **state)
{
	struct sm_uuid_gen a, b, a2;
	struct sm_uuid ua, ub;

	(void)state;
	sm_uuid_gen_init(&a, 0);
	sm_uuid_gen_init(&b, 0x0102);
	sm_uuid_gen_init(&a2, 0);
	/* Same process, same shard: same node; different shard: different low bytes. */
	assert_memory_equal(a.node, a2.node, sizeof(a.node));
	assert_int_equal(a.clock_seq, a2.clock_seq);
	assert_memory_not_equal(a.node, b.node, sizeof(a.node));
	assert_memory_equal(a.node, b.node, 4);
	assert_int_equal(b.node[4], 0x01);
	assert_int_equal(b.node[5], 0x02);
	assert_true(a.node[0] & 0x01); /* multicast bit: not a MAC address */
	assert_true(a.clock_seq <= 0x3fff);

	/* The same tick on two shards still gives two UUIDs. */
	a.last_ticks = b.last_ticks = 0x01ee833b04c29680ull + (1ull << 58);
	sm_uuid_gen_next(&a, &ua);
	sm_uuid_gen_next(&b, &ub);
	assert_int_equal(sm_uuid_ticks(&ua), sm_uuid_ticks(&ub));
	assert_memory_not_equal(&ua, &ub, sizeof(ua));
	assert_int_not_equal(sm_timeuuid_cmp(&ua, &ub), 0);
	assert_memory_equal(&ua.b[10], a.node, 6);
	assert_int_equal(((ua.b[8] & 0x3f) << 8) | ua.b[9], a.clock_seq);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gen_monotonic),
		cmocka_unit_test(test_gen_clock_backwards),
		cmocka_unit_test(test_next_after),
		cmocka_unit_test(test_ticks_and_micros_vectors),
		cmocka_unit_test(test_micros_round_trip),
		cmocka_unit_test(test_format_parse),
		cmocka_unit_test(test_parse_invalid),
		cmocka_unit_test(test_cmp_rule),
		cmocka_unit_test(test_version_variant),
		cmocka_unit_test(test_gen_node_per_shard),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
