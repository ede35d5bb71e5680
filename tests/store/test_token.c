/* SPDX-License-Identifier: BSD-3-Clause */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sm_random.h"

#include "sm_mem.h"
#include "sm_store.h"
#include "sm_token.h"

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

struct token_vector {
	const char *name;
	const uint8_t *key;
	size_t len;
	int64_t token;
};

/* (nr_shards, ignore_msb) pairs the span tests walk; small P ones allow token-by-token scans. */
struct shard_config {
	unsigned nr;
	unsigned msb;
};

static const struct shard_config span_configs[] = {
	{ 1, 0 },  { 1, 12 },  { 2, 0 },  { 3, 2 },  { 7, 0 },	{ 7, 12 }, { 8, 0 },
	{ 8, 12 }, { 14, 12 }, { 3, 62 }, { 7, 62 }, { 7, 61 }, { 5, 64 }, { 2, 63 },
};

/* Deterministic so a failure reproduces; splitmix64. */
static uint64_t rng_state = 0x5eed5eed12345678ull;

static uint64_t
rng(void)
{
	return sm_splitmix64(&rng_state);
}

static int64_t
rng_token(void)
{
	return (int64_t)rng();
}

static void
test_murmur3_vectors(void **state)
{
	static const uint8_t k80[] = { 0x80 };
	static const uint8_t kff15[15] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					   0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	static const uint8_t k800102[] = { 0x80, 0x01, 0x02 };
	static const uint8_t int1[] = { 0, 0, 0, 1 };
	static const uint8_t int5[] = { 0, 0, 0, 5 };
	static const uint8_t bigint0[8] = { 0 };
	static const uint8_t bigint1[8] = { 0, 0, 0, 0, 0, 0, 0, 1 };
	static const uint8_t seq17[17] = { 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
					   0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10 };
	static const uint8_t key1[] = "key1";
	static const uint8_t hello[] = "hello world";
	/* reference/cql.md §2.2 and §3.6 */
	const struct token_vector v[] = {
		{ "80", k80, sizeof(k80), -5284281814142962636ll },
		{ "ff x15", kff15, sizeof(kff15), -2195530867418009455ll },
		{ "800102", k800102, sizeof(k800102), -6213411759895694165ll },
		{ "int 1", int1, sizeof(int1), -4069959284402364209ll },
		{ "int 5", int5, sizeof(int5), -7509452495886106294ll },
		{ "bigint 0", bigint0, sizeof(bigint0), 2945182322382062539ll },
		{ "bigint 1", bigint1, sizeof(bigint1), 6292367497774912474ll },
		{ "17 bytes", seq17, sizeof(seq17), 6662781046685680142ll },
		{ "key1", key1, 4, 1573573083296714675ll },
		{ "hello world", hello, 11, 5998619086395760910ll },
	};
	size_t i;

	(void)state;
	for (i = 0; i < N_ELEMS(v); i++) {
		int64_t t = sm_murmur3_token(v[i].key, v[i].len);

		if (t != v[i].token)
			fail_msg("%s: token %lld, want %lld", v[i].name, (long long)t,
				 (long long)v[i].token);
	}
}

static void
test_murmur3_tail_is_signed(void **state)
{
	static const uint8_t k80[] = { 0x80 };
	static const uint8_t kff15[15] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					   0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	static const uint8_t k800102[] = { 0x80, 0x01, 0x02 };

	(void)state;
	/* The values an unsigned-tail (textbook) Murmur3 gives, per cql.md §3.6. */
	assert_int_not_equal(sm_murmur3_token(k80, 1), 7017059463262962058ll);
	assert_int_not_equal(sm_murmur3_token(kff15, 15), 3214754608959450708ll);
	assert_int_not_equal(sm_murmur3_token(k800102, 3), -4797474901850778475ll);
}

static void
test_murmur3_empty_and_unaligned(void **state)
{
	uint8_t buf[64 + 1];
	size_t len;

	(void)state;
	/* cql.md §3.6: ScyllaDB and the drivers hash the empty key to 0. */
	assert_int_equal(sm_murmur3_token(NULL, 0), 0);
	assert_int_equal(sm_murmur3_token("", 0), 0);

	/* Loads go through memcpy, so an odd address must not change the token. */
	static const uint8_t seq17[17] = { 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
					   0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10 };
	memcpy(buf + 1, seq17, sizeof(seq17));
	assert_int_equal(sm_murmur3_token(buf + 1, sizeof(seq17)), 6662781046685680142ll);

	/* Every length up to 4 blocks: never the reserved minimum token. */
	for (len = 0; len < sizeof(buf); len++) {
		buf[len] = (uint8_t)(0x80 + len * 7);
		assert_int_not_equal(sm_murmur3_token(buf, len), INT64_MIN);
	}
}

static void
test_token_normalize(void **state)
{
	(void)state;
	/* No key hashing to INT64_MIN is known (a 2^-64 chance), so test the map itself. */
	assert_int_equal(sm_token_normalize(INT64_MIN), INT64_MAX);
	assert_int_equal(sm_token_normalize(INT64_MIN + 1), INT64_MIN + 1);
	assert_int_equal(sm_token_normalize(INT64_MAX), INT64_MAX);
	assert_int_equal(sm_token_normalize(0), 0);
	assert_int_equal(sm_token_normalize(-1), -1);
}

static void
test_compose_composite(void **state)
{
	static const uint8_t int1[] = { 0, 0, 0, 1 };
	static const uint8_t want[] = { 0x00, 0x04, 0x00, 0x00, 0x00, 0x01,
					0x00, 0x00, 0x01, 0x61, 0x00 };
	const void *parts[] = { int1, "a" };
	const uint32_t lens[] = { 4, 1 };
	uint8_t buf[32];

	(void)state;
	/* Size query first, snprintf style. */
	assert_int_equal(sm_partition_key_compose(NULL, 0, parts, lens, 2), sizeof(want));

	memset(buf, 0xee, sizeof(buf));
	assert_int_equal(sm_partition_key_compose(buf, sizeof(buf), parts, lens, 2), sizeof(want));
	assert_memory_equal(buf, want, sizeof(want));
	assert_int_equal(buf[sizeof(want)], 0xee);
	/* cql.md §3.5: (int 1, text 'a') */
	assert_int_equal(sm_murmur3_token(buf, sizeof(want)), 6516349416904725244ll);

	/* One byte short: nothing written. */
	memset(buf, 0xee, sizeof(buf));
	assert_int_equal(sm_partition_key_compose(buf, sizeof(want) - 1, parts, lens, 2),
			 sizeof(want));
	assert_int_equal(buf[0], 0xee);

	/* Exact fit. */
	assert_int_equal(sm_partition_key_compose(buf, sizeof(want), parts, lens, 2), sizeof(want));
	assert_memory_equal(buf, want, sizeof(want));
}

static void
test_compose_single_and_edges(void **state)
{
	static const uint8_t int5[] = { 0, 0, 0, 5 };
	static uint8_t big[UINT16_MAX + 1];
	const void *parts[] = { int5, "", big };
	uint32_t lens[] = { 4, 0, UINT16_MAX };
	const void *bigp[] = { big };
	const uint32_t biglen[] = { sizeof(big) };
	uint8_t buf[16];
	static uint8_t out[3 * 3 + 4 + UINT16_MAX];

	(void)state;
	/* A single component is the raw bytes: no framing. */
	memset(buf, 0xee, sizeof(buf));
	assert_int_equal(sm_partition_key_compose(buf, sizeof(buf), parts, lens, 1), 4);
	assert_memory_equal(buf, int5, 4);
	assert_int_equal(buf[4], 0xee);
	assert_int_equal(sm_murmur3_token(buf, 4), -7509452495886106294ll);
	memset(buf, 0xee, sizeof(buf));
	assert_int_equal(sm_partition_key_compose(buf, 3, parts, lens, 1), 4);
	assert_int_equal(buf[0], 0xee); /* too small: untouched */

	/* No framing for one component, so it may exceed 64 KiB. */
	assert_int_equal(sm_partition_key_compose(NULL, 0, bigp, biglen, 1), sizeof(big));

	/* Empty key. */
	assert_int_equal(sm_partition_key_compose(buf, sizeof(buf), parts, lens, 0), 0);

	/* An empty component in a composite is framed as length 0 + terminator. */
	assert_int_equal(sm_partition_key_compose(buf, sizeof(buf), parts, lens, 2), 10);
	assert_int_equal(buf[7], 0);
	assert_int_equal(buf[8], 0);
	assert_int_equal(buf[9], 0);

	/* The largest framable component, then one more byte: unrepresentable. */
	big[0] = 0x42;
	assert_int_equal(sm_partition_key_compose(out, sizeof(out), parts, lens, 3),
			 7 + 3 + 3 + UINT16_MAX);
	assert_int_equal(out[10], 0xff);
	assert_int_equal(out[11], 0xff);
	assert_int_equal(out[12], 0x42);
	lens[2] = UINT16_MAX + 1;
	assert_int_equal(sm_partition_key_compose(out, sizeof(out), parts, lens, 3), SIZE_MAX);
}

/* The Java form from ScyllaDB's protocol-extensions doc, in 32-bit halves; an independent check. */
static unsigned
java_shard_of(int64_t token, unsigned nr, unsigned msb)
{
	uint64_t t = (uint64_t)token + (1ull << 63);
	uint64_t lo, hi, sum;

	t <<= msb;
	lo = t & 0xffffffffull;
	hi = t >> 32;
	sum = ((lo * nr) >> 32) + hi * nr;
	return (unsigned)(sum >> 32);
}

static void
test_shard_of_vectors(void **state)
{
	/* cql.md §2.2: token, shard at nr 8 msb 12, nr 14 msb 12, nr 8 msb 0 */
	static const struct {
		int64_t token;
		unsigned s8, s14, s8_0;
	} v[] = {
		{ -4069959284402364209ll, 2, 4, 2 }, { -7509452495886106294ll, 4, 7, 0 },
		{ 2945182322382062539ll, 7, 13, 5 }, { 6292367497774912474ll, 1, 2, 6 },
		{ 1573573083296714675ll, 3, 5, 4 },  { -5284281814142962636ll, 5, 9, 1 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < N_ELEMS(v); i++) {
		assert_int_equal(sm_shard_of_token(v[i].token, 8, SM_SHARDING_IGNORE_MSB), v[i].s8);
		assert_int_equal(sm_shard_of_token(v[i].token, 14, SM_SHARDING_IGNORE_MSB),
				 v[i].s14);
		assert_int_equal(sm_shard_of_token(v[i].token, 8, 0), v[i].s8_0);
	}
}

static void
test_shard_of_edges_and_java_form(void **state)
{
	unsigned nr, msb, i;

	(void)state;
	for (nr = 1; nr <= 64; nr++) {
		/* INT64_MIN is biased token 0: shard 0 whatever the shift. */
		assert_int_equal(sm_shard_of_token(INT64_MIN, nr, 0), 0);
		assert_int_equal(sm_shard_of_token(INT64_MIN, nr, 12), 0);
		/* INT64_MAX is all ones before and after the shift: the last shard. */
		assert_int_equal(sm_shard_of_token(INT64_MAX, nr, 0), nr - 1);
		assert_int_equal(sm_shard_of_token(INT64_MAX, nr, 12), nr - 1);
		/* Shifting everything out leaves shard 0. */
		assert_int_equal(sm_shard_of_token(INT64_MAX, nr, 64), 0);
		assert_int_equal(sm_shard_of_token(12345, nr, 200), 0);
	}
	/* msb 0: the ring cut into nr equal arcs in order; token 0 is the middle. */
	assert_int_equal(sm_shard_of_token(-1, 2, 0), 0);
	assert_int_equal(sm_shard_of_token(0, 2, 0), 1);

	for (i = 0; i < 100000; i++) {
		int64_t t = rng_token();

		nr = 1 + (unsigned)(rng() % 256);
		msb = (unsigned)(rng() % 64);
		if (sm_shard_of_token(t, nr, msb) != java_shard_of(t, nr, msb))
			fail_msg("token %lld nr %u msb %u: %u vs java %u", (long long)t, nr, msb,
				 sm_shard_of_token(t, nr, msb), java_shard_of(t, nr, msb));
		assert_true(sm_shard_of_token(t, nr, msb) < nr);
	}
}

/* Biased token (ring position from INT64_MIN) and back. */
static uint64_t
ub(int64_t t)
{
	return (uint64_t)t + (1ull << 63);
}

static int64_t
tok(uint64_t u)
{
	return (int64_t)(u - (1ull << 63));
}

/* Mask of the offset bits within a period, 2^(64 - msb) tokens. */
static uint64_t
offset_mask(unsigned msb)
{
	return msb >= 64 ? 0 : UINT64_MAX >> msb;
}

/* Check that [a, e] is one maximal span, sampling its inside. */
static void
check_span(int64_t a, int64_t e, unsigned nr, unsigned msb)
{
	unsigned s = sm_shard_of_token(a, nr, msb);
	uint64_t width = ub(e) - ub(a);
	int k;

	if (e < a)
		fail_msg("nr %u msb %u: span [%lld, %lld] backwards", nr, msb, (long long)a,
			 (long long)e);
	if (sm_shard_of_token(e, nr, msb) != s)
		fail_msg("nr %u msb %u: span [%lld, %lld] ends on another shard", nr, msb,
			 (long long)a, (long long)e);
	if (e != INT64_MAX && sm_shard_of_token(e + 1, nr, msb) == s)
		fail_msg("nr %u msb %u: span [%lld, %lld] not maximal", nr, msb, (long long)a,
			 (long long)e);
	if (a != INT64_MIN && sm_shard_of_token(a - 1, nr, msb) == s)
		fail_msg("nr %u msb %u: span [%lld, %lld] not maximal on the left", nr, msb,
			 (long long)a, (long long)e);
	/* Token-by-token near both ends, random points in between. */
	for (k = 0; k < 8 && (uint64_t)k <= width; k++) {
		assert_int_equal(sm_shard_of_token(tok(ub(a) + (uint64_t)k), nr, msb), s);
		assert_int_equal(sm_shard_of_token(tok(ub(e) - (uint64_t)k), nr, msb), s);
	}
	for (k = 0; k < 4; k++) {
		uint64_t off = width == UINT64_MAX ? rng() : rng() % (width + 1);
		int64_t t = tok(ub(a) + off);

		assert_int_equal(sm_shard_of_token(t, nr, msb), s);
		assert_int_equal(sm_shard_span_end(t, nr, msb), e);
	}
}

/*
 * Walk the whole ring span by span where it has at most 2^16 spans, checking
 * each and their count; where periods are tiny (2^61+ spans), walk the first
 * 64 spans and the whole last period.
 */
static void
test_span_end_walk(void **state)
{
	size_t c;

	(void)state;
	for (c = 0; c < N_ELEMS(span_configs); c++) {
		unsigned nr = span_configs[c].nr, msb = span_configs[c].msb;
		bool one = nr == 1 || msb >= 64;
		uint64_t spans = 0, want = one ? 1 : (1ull << msb) * nr;
		int64_t a = INT64_MIN, e;

		if (msb <= 12 || one) {
			for (;;) {
				e = sm_shard_span_end(a, nr, msb);
				assert_true(e >= a);
				check_span(a, e, nr, msb);
				spans++;
				if (e == INT64_MAX)
					break;
				a = e + 1;
			}
			if (spans != want)
				fail_msg("nr %u msb %u: %llu spans, want %llu", nr, msb,
					 (unsigned long long)spans, (unsigned long long)want);
			continue;
		}
		for (spans = 0; spans < 64; spans++) {
			e = sm_shard_span_end(a, nr, msb);
			check_span(a, e, nr, msb);
			a = e + 1;
		}
		a = tok(UINT64_MAX & ~offset_mask(msb));
		for (;;) {
			e = sm_shard_span_end(a, nr, msb);
			check_span(a, e, nr, msb);
			if (e == INT64_MAX)
				break;
			a = e + 1;
		}
	}
}

static void
test_span_end_edges(void **state)
{
	size_t c;

	(void)state;
	for (c = 0; c < N_ELEMS(span_configs); c++) {
		unsigned nr = span_configs[c].nr, msb = span_configs[c].msb;
		int64_t e;

		assert_int_equal(sm_shard_span_end(INT64_MAX, nr, msb), INT64_MAX);
		e = sm_shard_span_end(INT64_MIN, nr, msb);
		assert_int_equal(sm_shard_of_token(e, nr, msb), 0);
		if (nr > 1 && msb < 64)
			assert_int_not_equal(sm_shard_of_token(e + 1, nr, msb), 0);
		else
			assert_int_equal(e, INT64_MAX);
	}
	/* nr 8 msb 0: eight equal arcs of 2^61 tokens. */
	assert_int_equal(sm_shard_span_end(INT64_MIN, 8, 0), INT64_MIN + (1ll << 61) - 1);
	assert_int_equal(sm_shard_span_end(-1, 8, 0), -1);
	assert_int_equal(sm_shard_span_end(0, 8, 0), (1ll << 61) - 1);
	/* nr 3 msb 62: periods of 4 offsets, shard 0 owns [0,1], 1 owns [2], 2 owns [3]. */
	assert_int_equal(sm_shard_span_end(INT64_MIN, 3, 62), INT64_MIN + 1);
	assert_int_equal(sm_shard_span_end(INT64_MIN + 2, 3, 62), INT64_MIN + 2);
	assert_int_equal(sm_shard_span_end(INT64_MIN + 3, 3, 62), INT64_MIN + 3);
	assert_int_equal(sm_shard_span_end(INT64_MIN + 4, 3, 62), INT64_MIN + 5);
}

/* Random tokens in the big configs: the span found must be maximal around them. */
static void
test_span_end_random(void **state)
{
	static const struct shard_config cfg[] = {
		{ 1, 0 },  { 1, 12 },  { 7, 0 }, { 7, 12 },
		{ 8, 12 }, { 14, 12 }, { 3, 2 }, { 13, 33 },
	};
	size_t c;
	int i;

	(void)state;
	for (c = 0; c < N_ELEMS(cfg); c++) {
		for (i = 0; i < 20000; i++) {
			int64_t t = rng_token();
			int64_t e = sm_shard_span_end(t, cfg[c].nr, cfg[c].msb);
			int64_t a = t;

			assert_true(e >= t);
			/*
			 * Find the span start by bisection: from the period base to t
			 * the shards run "not s" then "s". One shard owns the ring.
			 */
			if (cfg[c].nr > 1) {
				uint64_t lo = ub(t) & ~offset_mask(cfg[c].msb), hi = ub(t);
				unsigned s = sm_shard_of_token(t, cfg[c].nr, cfg[c].msb);

				while (lo < hi) {
					uint64_t mid = lo + (hi - lo) / 2;

					if (sm_shard_of_token(tok(mid), cfg[c].nr, cfg[c].msb) == s)
						hi = mid;
					else
						lo = mid + 1;
				}
				a = tok(lo);
			} else {
				a = INT64_MIN;
			}
			check_span(a, e, cfg[c].nr, cfg[c].msb);
		}
	}
}

/* Slow but obviously right: walk span by span (span_end is checked above). */
static bool
next_by_walk(int64_t from, unsigned shard, unsigned nr, unsigned msb, int64_t *out)
{
	int64_t t = from;

	for (;;) {
		if (sm_shard_of_token(t, nr, msb) == shard) {
			*out = t;
			return true;
		}
		int64_t e = sm_shard_span_end(t, nr, msb);

		if (e < t)
			fail_msg("span_end(%lld) = %lld goes backwards", (long long)t,
				 (long long)e);
		if (e == INT64_MAX)
			return false;
		t = e + 1;
	}
}

/* Slower still and independent of span_end: token by token, for small periods only. */
static bool
next_by_scan(int64_t from, unsigned shard, unsigned nr, unsigned msb, unsigned limit, int64_t *out)
{
	int64_t t = from;
	unsigned i;

	for (i = 0; i < limit; i++) {
		if (sm_shard_of_token(t, nr, msb) == shard) {
			*out = t;
			return true;
		}
		if (t == INT64_MAX)
			return false;
		t++;
	}
	fail_msg("scan limit hit from %lld shard %u nr %u msb %u", (long long)from, shard, nr, msb);
	return false;
}

static void
check_next(int64_t from, unsigned shard, unsigned nr, unsigned msb)
{
	int64_t got = 0x1234, want = 0x1234;
	bool ok = sm_shard_next_token(from, shard, nr, msb, &got);
	bool want_ok = shard < nr && next_by_walk(from, shard, nr, msb, &want);

	if (ok != want_ok || (ok && got != want))
		fail_msg("next(from %lld, shard %u, nr %u, msb %u) = %d/%lld, want %d/%lld",
			 (long long)from, shard, nr, msb, ok, (long long)got, want_ok,
			 (long long)want);
	if (!ok)
		assert_int_equal(got, 0x1234); /* untouched */
}

static void
test_next_token_random(void **state)
{
	static const struct shard_config cfg[] = {
		{ 1, 0 }, { 1, 12 }, { 3, 2 }, { 7, 0 }, { 7, 12 }, { 8, 12 }, { 14, 12 }, { 8, 0 },
	};
	size_t c;
	int i;

	(void)state;
	for (c = 0; c < N_ELEMS(cfg); c++) {
		unsigned nr = cfg[c].nr, msb = cfg[c].msb, s;

		for (i = 0; i < 3000; i++) {
			int64_t t = rng_token(), e = sm_shard_span_end(t, nr, msb);

			for (s = 0; s <= nr; s++) {
				check_next(t, s, nr, msb);
				/* Span boundaries are where off-by-ones live. */
				check_next(e, s, nr, msb);
				if (e != INT64_MAX)
					check_next(e + 1, s, nr, msb);
			}
		}
		for (s = 0; s <= nr; s++) {
			check_next(INT64_MIN, s, nr, msb);
			check_next(INT64_MIN + 1, s, nr, msb);
			check_next(INT64_MAX, s, nr, msb);
			check_next(INT64_MAX - 1, s, nr, msb);
			check_next(0, s, nr, msb);
			check_next(-1, s, nr, msb);
		}
	}
}

/*
 * Periods of 2^(64-msb) <= 8 tokens: the answer is within two periods, so a
 * token-by-token scan is cheap and independent of the span arithmetic. Covers
 * shards that own nothing (nr > P) and the last period of the ring.
 */
static void
test_next_token_small_periods(void **state)
{
	static const struct shard_config cfg[] = {
		{ 3, 62 }, { 7, 62 }, { 7, 61 }, { 2, 63 },
		{ 3, 63 }, { 5, 64 }, { 1, 63 }, { 4, 62 },
	};
	size_t c;
	int i;

	(void)state;
	for (c = 0; c < N_ELEMS(cfg); c++) {
		unsigned nr = cfg[c].nr, msb = cfg[c].msb, s;

		for (s = 0; s < nr; s++) {
			uint64_t o, period = offset_mask(msb) + 1;
			bool owns = false;
			int64_t t;

			/* Does shard s own any offset of the (repeating) period? */
			for (o = 0; o < period; o++)
				owns = owns || sm_shard_of_token(tok(o), nr, msb) == s;

			for (i = 0; i < 4000; i++) {
				int64_t got = 0, want = 0;
				bool ok, want_ok;

				t = i < 64    ? INT64_MAX - i
				    : i < 128 ? INT64_MIN + (i - 64)
					      : rng_token();
				ok = sm_shard_next_token(t, s, nr, msb, &got);
				want_ok = owns && next_by_scan(t, s, nr, msb,
							       (unsigned)(2 * period), &want);
				if (ok != want_ok || (ok && got != want))
					fail_msg("nr %u msb %u shard %u from %lld: %d/%lld want "
						 "%d/%lld",
						 nr, msb, s, (long long)t, ok, (long long)got,
						 want_ok, (long long)want);
				/* Scan span_end too, token by token. */
				if (nr > 1 && msb < 64) {
					int64_t e = sm_shard_span_end(t, nr, msb), x = t;
					unsigned ts = sm_shard_of_token(t, nr, msb);

					assert_true(e >= t);
					while (x != e) {
						x++;
						assert_int_equal(sm_shard_of_token(x, nr, msb), ts);
					}
					if (e != INT64_MAX)
						assert_int_not_equal(
							sm_shard_of_token(e + 1, nr, msb), ts);
				}
			}
		}
	}
	/* nr 7 msb 62: offsets 0..3 go to shards 0, 1, 3, 5; 2, 4, 6 own nothing. */
	{
		int64_t out = 0;

		assert_false(sm_shard_next_token(INT64_MIN, 2, 7, 62, &out));
		assert_false(sm_shard_next_token(INT64_MIN, 4, 7, 62, &out));
		assert_false(sm_shard_next_token(0, 6, 7, 62, &out));
		assert_true(sm_shard_next_token(INT64_MIN + 1, 0, 7, 62, &out));
		assert_int_equal(out, INT64_MIN + 4);
		assert_true(sm_shard_next_token(INT64_MIN, 5, 7, 62, &out));
		assert_int_equal(out, INT64_MIN + 3);
		/* Last period: offset 3 (shard 5) is INT64_MAX; nothing after it for shard 0. */
		assert_true(sm_shard_next_token(INT64_MAX - 3, 5, 7, 62, &out));
		assert_int_equal(out, INT64_MAX);
		assert_false(sm_shard_next_token(INT64_MAX - 2, 0, 7, 62, &out));
	}
}

static void
test_next_token_bad_shard(void **state)
{
	int64_t out = 77;

	(void)state;
	assert_false(sm_shard_next_token(0, 8, 8, 12, &out));
	assert_false(sm_shard_next_token(0, 1, 1, 0, &out));
	assert_false(sm_shard_next_token(0, 0, 0, 12, &out));
	assert_int_equal(out, 77);
	/* One shard owns the whole ring: from itself. */
	assert_true(sm_shard_next_token(INT64_MAX, 0, 1, 12, &out));
	assert_int_equal(out, INT64_MAX);
	assert_true(sm_shard_next_token(INT64_MIN, 0, 1, 0, &out));
	assert_int_equal(out, INT64_MIN);
}

/* A composite key longer than the stack buffer hashes whole (it hashed a 1 KiB prefix). */
static void
test_key_token_long_composite(void **state)
{
	static uint8_t a[3000], b[5];
	static uint8_t composed[3000 + 5 + 2 * 3];
	const void *parts[2] = { a, b };
	uint32_t lens[2] = { sizeof(a), sizeof(b) };
	struct sm_key k = { .n = 2 };
	size_t len;

	(void)state;
	memset(a, 'a', sizeof(a));
	memset(b, 'b', sizeof(b));
	k.part[0] = (struct sm_bytes){ a, sizeof(a) };
	k.part[1] = (struct sm_bytes){ b, sizeof(b) };
	len = sm_partition_key_compose(composed, sizeof(composed), parts, lens, 2);
	assert_int_equal(len, sizeof(composed));
	assert_int_equal(sm_key_token(&k), sm_murmur3_token(composed, len));
	b[4] = 'c'; /* past the first KiB: the token changes */
	k.part[1] = (struct sm_bytes){ b, sizeof(b) };
	sm_partition_key_compose(composed, sizeof(composed), parts, lens, 2);
	assert_int_equal(sm_key_token(&k), sm_murmur3_token(composed, len));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_murmur3_vectors),
		cmocka_unit_test(test_key_token_long_composite),
		cmocka_unit_test(test_murmur3_tail_is_signed),
		cmocka_unit_test(test_murmur3_empty_and_unaligned),
		cmocka_unit_test(test_token_normalize),
		cmocka_unit_test(test_compose_composite),
		cmocka_unit_test(test_compose_single_and_edges),
		cmocka_unit_test(test_shard_of_vectors),
		cmocka_unit_test(test_shard_of_edges_and_java_form),
		cmocka_unit_test(test_span_end_walk),
		cmocka_unit_test(test_span_end_edges),
		cmocka_unit_test(test_span_end_random),
		cmocka_unit_test(test_next_token_random),
		cmocka_unit_test(test_next_token_small_periods),
		cmocka_unit_test(test_next_token_bad_shard),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
