/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sm_core.h"
#include "sm_types.h"

/* ---- value builders: bytes live in an arena reset by every test ---- */

static uint8_t arena[1 << 18];
static size_t arena_used;

static int
reset(void **state)
{
	(void)state;
	arena_used = 0;
	return 0;
}

static uint8_t *
take(size_t n)
{
	uint8_t *p;

	assert_true(arena_used + n <= sizeof(arena));
	p = arena + arena_used;
	arena_used += n;
	return p;
}

static struct sm_bytes
bytes(const void *p, size_t n)
{
	uint8_t *d = take(n);

	if (n)
		memcpy(d, p, n);
	return (struct sm_bytes){ d, (uint32_t)n };
}

static const struct sm_bytes EMPTY = { NULL, 0 };

/* Hex digits, spaces and dashes ignored: "00ff", "0102 0304", a uuid. */
static struct sm_bytes
hx(const char *hex)
{
	uint8_t tmp[512];
	size_t n = 0;
	int hi = -1, v = 0;

	for (; *hex; hex++) {
		if (*hex == ' ' || *hex == '-')
			continue;
		if (*hex >= '0' && *hex <= '9')
			v = *hex - '0';
		else if (*hex >= 'a' && *hex <= 'f')
			v = *hex - 'a' + 10;
		else if (*hex >= 'A' && *hex <= 'F')
			v = *hex - 'A' + 10;
		else
			fail_msg("bad hex '%c'", *hex);
		if (hi < 0) {
			hi = v;
		} else {
			assert_true(n < sizeof(tmp));
			tmp[n++] = (uint8_t)(hi << 4 | v);
			hi = -1;
		}
	}
	assert_int_equal(hi, -1);
	return bytes(tmp, n);
}

static struct sm_bytes
be(uint64_t v, unsigned n)
{
	uint8_t tmp[8];
	unsigned i;

	for (i = 0; i < n; i++)
		tmp[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
	return bytes(tmp, n);
}

#define I8(v) be((uint64_t)(int64_t)(v), 1)
#define I16(v) be((uint64_t)(int64_t)(v), 2)
#define I32(v) be((uint64_t)(int64_t)(v), 4)
#define I64(v) be((uint64_t)(int64_t)(v), 8)

static struct sm_bytes
f32(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return be(u, 4);
}

static struct sm_bytes
f64(double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	return be(u, 8);
}

/* A date as days from 1970-01-01. */
static struct sm_bytes
date(int64_t days)
{
	return be((uint64_t)(days + 0x80000000LL), 4);
}

/* Minimal two's complement of a decimal string ("-123"), by schoolbook multiply-add. */
static size_t
varint_of(const char *dec, uint8_t *out, size_t cap)
{
	uint8_t mag[2048] = { 0 };
	size_t n = sizeof(mag), i, start;
	bool neg = *dec == '-';
	unsigned carry;

	if (neg)
		dec++;
	for (; *dec; dec++) {
		assert_true(*dec >= '0' && *dec <= '9');
		carry = (unsigned)(*dec - '0');
		for (i = n; i-- > 0;) {
			carry += mag[i] * 10u;
			mag[i] = (uint8_t)carry;
			carry >>= 8;
		}
		assert_int_equal(carry, 0);
	}
	if (neg) {
		carry = 1;
		for (i = n; i-- > 0;) {
			carry += (uint8_t)~mag[i];
			mag[i] = (uint8_t)carry;
			carry >>= 8;
		}
	}
	start = 0;
	while (start + 1 < n && ((mag[start] == 0 && !(mag[start + 1] & 0x80)) ||
				 (mag[start] == 0xff && (mag[start + 1] & 0x80))))
		start++;
	assert_true(n - start <= cap);
	memcpy(out, mag + start, n - start);
	return n - start;
}

static struct sm_bytes
vi(const char *dec)
{
	uint8_t tmp[2048];

	return bytes(tmp, varint_of(dec, tmp, sizeof(tmp)));
}

/* A decimal unscaled * 10^-scale. */
static struct sm_bytes
dec(const char *unscaled, int32_t scale)
{
	uint8_t tmp[2052];
	size_t n;

	tmp[0] = (uint8_t)((uint32_t)scale >> 24);
	tmp[1] = (uint8_t)((uint32_t)scale >> 16);
	tmp[2] = (uint8_t)((uint32_t)scale >> 8);
	tmp[3] = (uint8_t)scale;
	n = varint_of(unscaled, tmp + 4, sizeof(tmp) - 4);
	return bytes(tmp, 4 + n);
}

/* A decimal with the unscaled value given as raw (possibly padded) hex. */
static struct sm_bytes
decx(const char *unscaled_hex, int32_t scale)
{
	struct sm_bytes s = be((uint32_t)scale, 4), u = hx(unscaled_hex);

	return (struct sm_bytes){ s.p, 4 + u.len }; /* contiguous in the arena */
}

static struct sm_bytes
dur(int32_t months, int32_t days, int64_t nanos)
{
	uint8_t tmp[32];
	size_t n = sm_duration_build(tmp, sizeof(tmp), months, days, nanos);

	assert_true(n <= 19);
	return bytes(tmp, n);
}

static struct sm_bytes
coll(const struct sm_bytes *elems, uint32_t n, bool is_map)
{
	size_t need = sm_coll_build(NULL, 0, elems, n, is_map);
	uint8_t *p = take(need);

	assert_int_equal(sm_coll_build(p, need, elems, n, is_map), need);
	return (struct sm_bytes){ p, (uint32_t)need };
}

#define LIST(...)                                                                                  \
	coll((const struct sm_bytes[]){ __VA_ARGS__ },                                             \
	     sizeof((const struct sm_bytes[]){ __VA_ARGS__ }) / sizeof(struct sm_bytes), false)
#define MAP(...)                                                                                   \
	coll((const struct sm_bytes[]){ __VA_ARGS__ },                                             \
	     sizeof((const struct sm_bytes[]){ __VA_ARGS__ }) / sizeof(struct sm_bytes) / 2, true)
#define NOELEMS coll(NULL, 0, false)

static const struct sm_type *
T(enum sm_type_kind k)
{
	return sm_type_simple(k);
}

static const struct sm_type *
parse(const char *text)
{
	const struct sm_type *t = NULL;
	char err[256] = "";

	if (sm_type_parse(text, &t, err, sizeof(err)) != 0)
		fail_msg("parse \"%s\": %s", text, err);
	return t;
}

static int64_t
mem_in_use(void)
{
	struct sm_sw_stats s;

	sm_sw_stats_read(sm_stats_fallback_attach(), &s);
	return s.mem_in_use;
}

/* ---- parse, name, dup, equal ---- */

static void
check_name(const char *text, const char *want)
{
	const struct sm_type *t = parse(text), *again;
	char name[256];

	assert_int_equal(sm_type_name(t, name, sizeof(name)), strlen(want));
	assert_string_equal(name, want);
	again = parse(name);
	assert_true(sm_type_equal(t, again));
	sm_type_free(again);
	sm_type_free(t);
}

static void
test_parse_names(void **state)
{
	int64_t before = mem_in_use();

	(void)state;
	check_name("int", "int");
	check_name("varchar", "text");
	check_name("VarChar", "text");
	check_name("TEXT", "text");
	check_name("  bigint\t", "bigint");
	check_name("list<int>", "list<int>");
	check_name("set<uuid>", "set<uuid>");
	check_name("map<text,int>", "map<text, int>");
	check_name(" Map < Text , Frozen < List < Int > > > ", "map<text, frozen<list<int>>>");
	check_name("frozen<set<uuid>>", "frozen<set<uuid>>");
	check_name("frozen<frozen<set<uuid>>>", "frozen<set<uuid>>");
	check_name("frozen<list<list<int>>>", "frozen<list<frozen<list<int>>>>");
	check_name("list<frozen<map<int, set<text>>>>",
		   "list<frozen<map<int, frozen<set<text>>>>>");
	check_name("map<int, duration>", "map<int, duration>");
	check_name("list<duration>", "list<duration>");
	check_name("map<frozen<list<int>>, frozen<set<varchar>>>",
		   "map<frozen<list<int>>, frozen<set<text>>>");
	for (int k = 0; k < SM_TYPE_LIST; k++) {
		char name[32];

		sm_type_name(T((enum sm_type_kind)k), name, sizeof(name));
		assert_ptr_equal(parse(name), T((enum sm_type_kind)k));
	}
	assert_int_equal(mem_in_use(), before);
}

static void
check_reject(const char *text, const char *msg)
{
	const struct sm_type *t = (const struct sm_type *)(uintptr_t)0x1;
	char err[256] = "";

	assert_int_equal(sm_type_parse(text, &t, err, sizeof(err)), -EINVAL);
	assert_ptr_equal(t, (const struct sm_type *)(uintptr_t)0x1);
	if (!strstr(err, msg))
		fail_msg("\"%s\": got \"%s\", want \"%s\"", text, err, msg);
}

static void
test_parse_rejects(void **state)
{
	int64_t before = mem_in_use();

	(void)state;
	check_reject("list<list<int>>",
		     "Non-frozen user types or collections are not allowed inside collections: list<list<int>>");
	check_reject(
		"map<text, set<int>>",
		"Non-frozen user types or collections are not allowed inside collections: map<text, set<int>>");
	check_reject("map<list<int>, int>", "Non-frozen user types or collections are not allowed inside");
	check_reject("list<frozen<list<list<int>>>>x", "expected the end");
	check_reject("set<frozen<list<set<int>>>>junk", "expected the end");
	check_reject("list<counter>", "Counters are not allowed inside collections: list<counter>");
	check_reject("map<text, counter>", "Counters are not allowed inside collections");
	check_reject("map<counter, int>", "Counters are not allowed inside collections");
	check_reject("frozen<list<counter>>", "Counters are not allowed inside collections");
	check_reject("set<duration>", "Durations are not allowed inside sets: set<duration>");
	check_reject("set<frozen<list<duration>>>", "Durations are not allowed inside sets");
	check_reject("map<duration, int>",
		     "Durations are not allowed as map keys: map<duration, int>");
	check_reject("map<frozen<map<int, duration>>, int>",
		     "Durations are not allowed as map keys");
	check_reject("frozen<int>", "frozen<> is only allowed on collections, tuples, and "
				    "user-defined types (got int)");
	check_reject("foo", "Unknown type foo");
	check_reject("tuple<int, counter>", "Counters are not allowed inside tuples");
	check_reject("frozen<foo>", "Unknown type foo");
	check_reject("ks.foo", "Unknown type ks.foo");
	check_reject("", "expected a type name");
	check_reject("   ", "expected a type name");
	check_reject("list", "expected '<'");
	check_reject("list<", "expected a type name");
	check_reject("list<int", "expected '>'");
	check_reject("list<int>>", "expected the end");
	check_reject("map<int>", "expected ','");
	check_reject("map<int, >", "expected a type name");
	check_reject("list<>", "expected a type name");
	check_reject("int int", "expected the end");
	check_reject("frozen list<int>", "expected '<'");
	check_reject("aVeryLongTypeNameThatIsNotAnythingAtAll", "Unknown type");
	check_reject("list<frozen<list<frozen<list<frozen<list<frozen<list<frozen<list<frozen<"
		     "list<frozen<list<frozen<list<frozen<list<frozen<list<frozen<list<frozen<"
		     "list<frozen<list<frozen<list<frozen<list<frozen<list<int>>>>>>>>>>>>>>>>>>>>>"
		     ">>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>",
		     "nested more than 32 deep");
	/* A NULL err is allowed. */
	{
		const struct sm_type *t;

		assert_int_equal(sm_type_parse("list<list<int>>", &t, NULL, 0), -EINVAL);
	}
	assert_int_equal(mem_in_use(), before);
}

static void
test_type_helpers(void **state)
{
	const struct sm_type *a, *b, *c, *d;
	int64_t before = mem_in_use();
	char err[128];

	(void)state;
	assert_null(sm_type_simple(SM_TYPE_LIST));
	assert_null(sm_type_simple(SM_TYPE_MAP));
	assert_null(sm_type_simple(SM_TYPE__COUNT));
	assert_int_equal(T(SM_TYPE_INT)->kind, SM_TYPE_INT);
	assert_false(T(SM_TYPE_INT)->frozen);
	assert_ptr_equal(sm_type_dup(T(SM_TYPE_TEXT)), T(SM_TYPE_TEXT));
	sm_type_free(T(SM_TYPE_TEXT)); /* no-op */
	sm_type_free(NULL);

	a = parse("map<text, frozen<list<int>>>");
	b = sm_type_dup(a);
	assert_non_null(b);
	assert_ptr_not_equal(a, b);
	assert_ptr_not_equal(a->val, b->val);
	assert_true(sm_type_equal(a, b));
	c = parse("frozen<map<text, frozen<list<int>>>>");
	assert_false(sm_type_equal(a, c));
	d = parse("map<text, frozen<list<bigint>>>");
	assert_false(sm_type_equal(a, d));
	assert_true(sm_type_is_collection(a));
	assert_false(sm_type_is_collection(T(SM_TYPE_BLOB)));
	assert_false(sm_type_is_collection(NULL));
	assert_true(sm_type_equal(T(SM_TYPE_INT), T(SM_TYPE_INT)));
	assert_false(sm_type_equal(T(SM_TYPE_INT), T(SM_TYPE_BIGINT)));
	assert_false(sm_type_equal(T(SM_TYPE_INT), NULL));
	sm_type_free(a);
	sm_type_free(b);
	sm_type_free(c);
	sm_type_free(d);

	/* Built from parts: ownership moves in, checks apply. */
	assert_int_equal(
		sm_type_collection(SM_TYPE_LIST, false, T(SM_TYPE_INT), NULL, &a, err, sizeof(err)),
		0);
	assert_int_equal(sm_type_collection(SM_TYPE_SET, false, a, NULL, &b, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(
		err, "Non-frozen user types or collections are not allowed inside collections: set<list<int>>");
	assert_int_equal(
		sm_type_collection(SM_TYPE_LIST, false, T(SM_TYPE_INT), NULL, &a, err, sizeof(err)),
		0);
	assert_int_equal(sm_type_collection(SM_TYPE_SET, true, a, NULL, &b, err, sizeof(err)), 0);
	c = parse("frozen<set<frozen<list<int>>>>");
	assert_true(sm_type_equal(b, c));
	sm_type_free(b);
	sm_type_free(c);
	assert_int_equal(
		sm_type_collection(SM_TYPE_MAP, false, T(SM_TYPE_INT), NULL, &a, err, sizeof(err)),
		-EINVAL);
	assert_int_equal(mem_in_use(), before);
}

static void
test_cql_ids(void **state)
{
	static const struct {
		const char *type;
		uint16_t id;
		uint32_t fixed;
	} cases[] = {
		{ "ascii", 0x0001, 0 },
		{ "bigint", 0x0002, 8 },
		{ "blob", 0x0003, 0 },
		{ "boolean", 0x0004, 1 },
		{ "counter", 0x0005, 8 },
		{ "decimal", 0x0006, 0 },
		{ "double", 0x0007, 8 },
		{ "float", 0x0008, 4 },
		{ "int", 0x0009, 4 },
		{ "timestamp", 0x000B, 8 },
		{ "uuid", 0x000C, 16 },
		{ "varchar", 0x000D, 0 },
		{ "text", 0x000D, 0 },
		{ "varint", 0x000E, 0 },
		{ "timeuuid", 0x000F, 16 },
		{ "inet", 0x0010, 0 },
		{ "date", 0x0011, 4 },
		{ "time", 0x0012, 8 },
		{ "smallint", 0x0013, 2 },
		{ "tinyint", 0x0014, 1 },
		{ "duration", 0x0015, 0 },
		{ "list<int>", 0x0020, 0 },
		{ "map<int, int>", 0x0021, 0 },
		{ "set<int>", 0x0022, 0 },
		{ "frozen<set<int>>", 0x0022, 0 },
	};
	unsigned i;

	(void)state;
	for (i = 0; i < SM_ARRAY_SIZE(cases); i++) {
		const struct sm_type *t = parse(cases[i].type);

		assert_int_equal(sm_type_cql_id(t), cases[i].id);
		assert_int_equal(sm_type_fixed_len(t), cases[i].fixed);
		sm_type_free(t);
	}
}

/* ---- validation ---- */

static void
ok(const struct sm_type *t, struct sm_bytes v)
{
	char err[256] = "";

	if (sm_value_validate(t, v, err, sizeof(err)) != 0)
		fail_msg("rejected a valid value (%u bytes): %s", v.len, err);
}

static void
bad(const struct sm_type *t, struct sm_bytes v, const char *msg)
{
	char err[256] = "", name[64];

	if (sm_value_validate(t, v, err, sizeof(err)) != -EINVAL) {
		sm_type_name(t, name, sizeof(name));
		fail_msg("%s: accepted an invalid value (%u bytes), want \"%s\"", name, v.len, msg);
	}
	if (!strstr(err, msg))
		fail_msg("got \"%s\", want \"%s\"", err, msg);
	/* No err buffer is fine too. */
	assert_int_equal(sm_value_validate(t, v, NULL, 0), -EINVAL);
}

static void
test_validate_simple(void **state)
{
	int k;

	(void)state;
	/* Empty is valid for every simple type but counter. */
	for (k = 0; k < SM_TYPE_LIST; k++)
		if (k != SM_TYPE_COUNTER)
			ok(T((enum sm_type_kind)k), EMPTY);
	bad(T(SM_TYPE_COUNTER), EMPTY, "Expected 8 byte counter (0)");
	ok(T(SM_TYPE_COUNTER), I64(5));
	bad(T(SM_TYPE_COUNTER), I32(5), "Expected 8 byte counter (4)");

	ok(T(SM_TYPE_ASCII), bytes("hello ~\x7f\x00", 9));
	bad(T(SM_TYPE_ASCII), hx("41c3a9"), "Invalid byte for ascii: -61");

	ok(T(SM_TYPE_TEXT), bytes("plain", 5));
	ok(T(SM_TYPE_TEXT), hx("c3a9"));	       /* é */
	ok(T(SM_TYPE_TEXT), hx("e282ac"));	       /* € */
	ok(T(SM_TYPE_TEXT), hx("f09f9880"));	       /* U+1F600 */
	ok(T(SM_TYPE_TEXT), hx("f48fbfbf"));	       /* U+10FFFF */
	ok(T(SM_TYPE_TEXT), hx("ed9fbf"));	       /* U+D7FF */
	ok(T(SM_TYPE_TEXT), hx("ee8080"));	       /* U+E000 */
	ok(T(SM_TYPE_TEXT), hx("00"));		       /* NUL is UTF-8 */
	bad(T(SM_TYPE_TEXT), hx("c0af"), "at byte 0"); /* overlong '/' */
	bad(T(SM_TYPE_TEXT), hx("41c1bf"), "at byte 1");
	bad(T(SM_TYPE_TEXT), hx("e080af"), "String didn't validate");	/* overlong 3-byte */
	bad(T(SM_TYPE_TEXT), hx("f08282ac"), "String didn't validate"); /* overlong 4-byte */
	bad(T(SM_TYPE_TEXT), hx("eda080"), "String didn't validate");	/* U+D800 */
	bad(T(SM_TYPE_TEXT), hx("edbfbf"), "String didn't validate");	/* U+DFFF */
	bad(T(SM_TYPE_TEXT), hx("f4908080"), "String didn't validate"); /* U+110000 */
	bad(T(SM_TYPE_TEXT), hx("f5808080"), "String didn't validate");
	bad(T(SM_TYPE_TEXT), hx("80"), "String didn't validate"); /* lone continuation */
	bad(T(SM_TYPE_TEXT), hx("41c3"), "at byte 1");		  /* truncated */
	bad(T(SM_TYPE_TEXT), hx("e282"), "String didn't validate");
	bad(T(SM_TYPE_TEXT), hx("e28241"), "String didn't validate");
	bad(T(SM_TYPE_TEXT), hx("ff"), "String didn't validate");

	ok(T(SM_TYPE_BLOB), hx("00ff"));
	ok(T(SM_TYPE_BOOLEAN), hx("00"));
	ok(T(SM_TYPE_BOOLEAN), hx("07"));
	bad(T(SM_TYPE_BOOLEAN), hx("0001"), "Expected 1 or 0 byte boolean (2)");
	ok(T(SM_TYPE_TINYINT), I8(-1));
	bad(T(SM_TYPE_TINYINT), I16(1), "Expected 1 or 0 byte tinyint (2)");
	ok(T(SM_TYPE_SMALLINT), I16(-1));
	bad(T(SM_TYPE_SMALLINT), I8(1), "Expected 2 or 0 byte smallint (1)");
	ok(T(SM_TYPE_INT), I32(INT32_MIN));
	bad(T(SM_TYPE_INT), hx("010203"), "Expected 4 or 0 byte int (3)");
	bad(T(SM_TYPE_INT), I64(1), "Expected 4 or 0 byte int (8)");
	ok(T(SM_TYPE_BIGINT), I64(INT64_MIN));
	bad(T(SM_TYPE_BIGINT), I32(1), "Expected 8 or 0 byte long (4)");
	ok(T(SM_TYPE_TIMESTAMP), I64(-1));
	bad(T(SM_TYPE_TIMESTAMP), I32(1), "Expected 8 or 0 byte timestamp (4)");
	ok(T(SM_TYPE_FLOAT), f32(NAN));
	bad(T(SM_TYPE_FLOAT), f64(1), "Expected 4 or 0 byte float (8)");
	ok(T(SM_TYPE_DOUBLE), f64(-INFINITY));
	bad(T(SM_TYPE_DOUBLE), f32(1), "Expected 8 or 0 byte double (4)");
	ok(T(SM_TYPE_DATE), date(0));
	ok(T(SM_TYPE_DATE), hx("00000000"));
	ok(T(SM_TYPE_DATE), hx("ffffffff"));
	bad(T(SM_TYPE_DATE), hx("000000"), "Expected 4 or 0 byte date (3)");
	ok(T(SM_TYPE_TIME), I64(0));
	ok(T(SM_TYPE_TIME), I64(86399999999999LL));
	bad(T(SM_TYPE_TIME), I64(86400000000000LL), "Time value out of range");
	bad(T(SM_TYPE_TIME), I64(-1), "Time value out of range: -1");
	bad(T(SM_TYPE_TIME), I32(0), "Expected 8 or 0 byte time (4)");
	ok(T(SM_TYPE_UUID), hx("00000000-0000-0000-0000-000000000000"));
	ok(T(SM_TYPE_UUID), hx("01234567-89ab-4def-8123-456789abcdef"));
	bad(T(SM_TYPE_UUID), hx("0123"), "UUID should be 16 or 0 bytes (2)");
	ok(T(SM_TYPE_TIMEUUID), hx("01234567-89ab-1def-8123-456789abcdef"));
	bad(T(SM_TYPE_TIMEUUID), hx("01234567-89ab-4def-8123-456789abcdef"),
	    "Invalid version for TimeUUID type");
	bad(T(SM_TYPE_TIMEUUID), hx("01234567-89ab-0def-8123-456789abcdef"),
	    "Invalid version for TimeUUID type");
	bad(T(SM_TYPE_TIMEUUID), hx("01234567-89ab-1def-8123-456789abcd"),
	    "TimeUUID should be 16 or 0 bytes (15)");
	ok(T(SM_TYPE_INET), hx("7f000001"));
	ok(T(SM_TYPE_INET), hx("00000000000000000000000000000001"));
	bad(T(SM_TYPE_INET), hx("7f0000"), "Expected 4 or 16 byte inetaddress; got 3 bytes");
	bad(T(SM_TYPE_INET), hx("7f00000100"), "Expected 4 or 16 byte inetaddress; got 5 bytes");
	ok(T(SM_TYPE_VARINT), hx("00"));
	ok(T(SM_TYPE_VARINT), hx("0000ff")); /* padding is tolerated, like Cassandra */
	ok(T(SM_TYPE_VARINT), vi("-123456789012345678901234567890"));
	ok(T(SM_TYPE_DECIMAL), dec("15", 1));
	ok(T(SM_TYPE_DECIMAL), dec("-1", INT32_MIN));
	bad(T(SM_TYPE_DECIMAL), hx("00000001"), "Expected 0 or at least 5 bytes for a decimal (4)");
	bad(T(SM_TYPE_DECIMAL), hx("01"), "decimal (1)");
}

static void
test_validate_duration(void **state)
{
	(void)state;
	ok(T(SM_TYPE_DURATION), dur(0, 0, 0));
	ok(T(SM_TYPE_DURATION), dur(1, 2, 3));
	ok(T(SM_TYPE_DURATION), dur(-1, -2, -3));
	ok(T(SM_TYPE_DURATION), dur(0, -2, 0));
	ok(T(SM_TYPE_DURATION), dur(INT32_MAX, INT32_MAX, INT64_MAX));
	ok(T(SM_TYPE_DURATION), dur(INT32_MIN, INT32_MIN, INT64_MIN));
	bad(T(SM_TYPE_DURATION), dur(1, -2, 3), "must be all of the same sign (1, -2, 3)");
	bad(T(SM_TYPE_DURATION), dur(0, 1, -1), "must be all of the same sign (0, 1, -1)");
	bad(T(SM_TYPE_DURATION), hx("0000"), "Expected at least 3 bytes for a duration (2)");
	bad(T(SM_TYPE_DURATION), hx("000080"), "Not enough bytes to read a duration");
	bad(T(SM_TYPE_DURATION), hx("00000000"), "Unexpected extraneous bytes after duration");
	/* months = 2^31 (zigzag 2^32): a vint that does not fit an int */
	bad(T(SM_TYPE_DURATION), hx("f1 00 00 00 00 00 00"),
	    "The duration months must be a 32 bits integer but was: 2147483648");
	bad(T(SM_TYPE_DURATION), hx("00 f1 00 00 00 00 00"),
	    "The duration days must be a 32 bits integer but was: 2147483648");
}

static void
test_validate_collections(void **state)
{
	const struct sm_type *li = parse("list<int>"), *st = parse("set<text>"),
			     *m = parse("map<text, frozen<list<int>>>");

	(void)state;
	ok(li, EMPTY);
	ok(li, NOELEMS);
	ok(li, LIST(I32(1), I32(2), EMPTY));
	bad(li, LIST(I32(1), I16(2)), "Expected 4 or 0 byte int (2)");
	bad(li, hx("000000"), "Not enough bytes to read a list");
	bad(li, hx("00000001"), "Not enough bytes to read a list");
	bad(li, hx("00000001 00000004 000000"), "Not enough bytes to read a list");
	bad(li, hx("00000001 00000004 00000001 00"),
	    "Unexpected extraneous bytes after list value");
	bad(li, hx("00000001 ffffffff"), "null is not supported inside collections");
	bad(li, hx("ffffffff"), "Invalid negative element count in a list (-1)");
	/* Sets may arrive unsorted and with repeats: elements are only validated. */
	ok(st, LIST(bytes("b", 1), bytes("a", 1), bytes("a", 1)));
	bad(st, LIST(bytes("a", 1), hx("ff")), "String didn't validate");
	bad(st, hx("00000000 00"), "Unexpected extraneous bytes after set value");
	ok(m, MAP(bytes("k", 1), LIST(I32(1)), bytes("", 0), NOELEMS));
	bad(m, MAP(bytes("k", 1), LIST(I32(1), hx("01"))), "Expected 4 or 0 byte int (1)");
	bad(m, MAP(hx("c0"), NOELEMS), "String didn't validate");
	bad(m, hx("00000001 00000001 6b"), "Not enough bytes to read a map");
	bad(m, hx("00000001 00000001 6b ffffffff"), "null is not supported inside collections");
	sm_type_free(li);
	sm_type_free(st);
	sm_type_free(m);
}

/* ---- ordering ---- */

#define ORD_MAX 96

struct ord {
	const struct sm_type *t;
	unsigned n;
	int rank[ORD_MAX];
	struct sm_bytes v[ORD_MAX];
};

/* Append a value greater than the previous one. */
static void
lt(struct ord *o, struct sm_bytes v)
{
	assert_true(o->n < ORD_MAX);
	o->rank[o->n] = o->n ? o->rank[o->n - 1] + 1 : 0;
	o->v[o->n++] = v;
}

/* Append a value equal to the previous one. */
static void
eq(struct ord *o, struct sm_bytes v)
{
	assert_true(o->n > 0 && o->n < ORD_MAX);
	o->rank[o->n] = o->rank[o->n - 1];
	o->v[o->n++] = v;
}

static int
sign(int x)
{
	return (x > 0) - (x < 0);
}

/* Every value is valid and every pair compares as its position says. */
static void
check_order(const struct ord *o)
{
	char a[512], b[512], name[64], err[256];
	unsigned i, j;
	int got, want;

	sm_type_name(o->t, name, sizeof(name));
	for (i = 0; i < o->n; i++) {
		if (sm_value_validate(o->t, o->v[i], err, sizeof(err)) != 0) {
			sm_value_format(o->t, o->v[i], a, sizeof(a));
			fail_msg("%s: value %u (%s) invalid: %s", name, i, a, err);
		}
	}
	for (i = 0; i < o->n; i++) {
		for (j = 0; j < o->n; j++) {
			got = sign(sm_value_compare(o->t, o->v[i], o->v[j]));
			want = sign(o->rank[i] - o->rank[j]);
			if (got != want) {
				sm_value_format(o->t, o->v[i], a, sizeof(a));
				sm_value_format(o->t, o->v[j], b, sizeof(b));
				fail_msg("%s: compare(#%u %s, #%u %s) = %d, want %d", name, i, a, j,
					 b, got, want);
			}
		}
	}
}

static void
test_order_bytes(void **state)
{
	struct ord o;

	(void)state;
	o = (struct ord){ .t = T(SM_TYPE_BLOB) };
	lt(&o, EMPTY);
	lt(&o, hx("00"));
	lt(&o, hx("0000"));
	lt(&o, hx("0001"));
	lt(&o, hx("01"));
	lt(&o, hx("7f"));
	lt(&o, hx("7fff"));
	lt(&o, hx("80")); /* unsigned bytes */
	lt(&o, hx("ff"));
	lt(&o, hx("ff00"));
	lt(&o, hx("ffff"));
	check_order(&o);

	o = (struct ord){ .t = T(SM_TYPE_ASCII) };
	lt(&o, EMPTY);
	lt(&o, bytes(" ", 1));
	lt(&o, bytes("0", 1));
	lt(&o, bytes("A", 1));
	lt(&o, bytes("AB", 2));
	lt(&o, bytes("B", 1));
	lt(&o, bytes("a", 1));
	lt(&o, bytes("~", 1));
	check_order(&o);

	o = (struct ord){ .t = parse("varchar") };
	lt(&o, EMPTY);
	lt(&o, bytes("A", 1));
	lt(&o, bytes("Z", 1));
	lt(&o, bytes("a", 1));
	lt(&o, bytes("ab", 2));
	lt(&o, bytes("z", 1));
	lt(&o, hx("c3a9"));	/* é: UTF-8 bytes, unsigned */
	lt(&o, hx("e282ac"));	/* € */
	lt(&o, hx("f09f9880")); /* emoji */
	check_order(&o);

	o = (struct ord){ .t = T(SM_TYPE_INET) };
	lt(&o, EMPTY);
	lt(&o, hx("00000000"));				/* 0.0.0.0 */
	lt(&o, hx("00000000000000000000000000000000")); /* :: */
	lt(&o, hx("00000000000000000000000000000001")); /* ::1 */
	lt(&o, hx("01020304"));
	lt(&o, hx("0a000001"));
	lt(&o, hx("fe800000000000000000000000000001"));
	lt(&o, hx("ffffffff"));
	check_order(&o);

	o = (struct ord){ .t = T(SM_TYPE_BOOLEAN) };
	lt(&o, EMPTY);
	lt(&o, hx("00"));
	lt(&o, hx("01"));
	eq(&o, hx("02")); /* any non-zero is true */
	eq(&o, hx("ff"));
	check_order(&o);

	/* Bytewise, the encoding's order; durations are never keys. */
	o = (struct ord){ .t = T(SM_TYPE_DURATION) };
	lt(&o, EMPTY);
	lt(&o, dur(0, 0, 0));
	lt(&o, dur(0, 0, -1));
	lt(&o, dur(0, 0, 1));
	lt(&o, dur(0, 0, 1000));
	lt(&o, dur(0, 1, 0));
	lt(&o, dur(-1, 0, 0));
	lt(&o, dur(1, 0, 0));
	check_order(&o);
}

static void
test_order_fixed_ints(void **state)
{
	struct ord o;
	int k;
	static const enum sm_type_kind i64_kinds[] = { SM_TYPE_BIGINT, SM_TYPE_COUNTER,
						       SM_TYPE_TIMESTAMP };

	(void)state;
	o = (struct ord){ .t = T(SM_TYPE_TINYINT) };
	lt(&o, EMPTY);
	lt(&o, I8(-128));
	lt(&o, I8(-127));
	lt(&o, I8(-1));
	lt(&o, I8(0));
	lt(&o, I8(1));
	lt(&o, I8(127));
	check_order(&o);

	o = (struct ord){ .t = T(SM_TYPE_SMALLINT) };
	lt(&o, EMPTY);
	lt(&o, I16(INT16_MIN));
	lt(&o, I16(-256));
	lt(&o, I16(-255));
	lt(&o, I16(-1));
	lt(&o, I16(0));
	lt(&o, I16(1));
	lt(&o, I16(255));
	lt(&o, I16(256));
	lt(&o, I16(INT16_MAX));
	check_order(&o);

	o = (struct ord){ .t = T(SM_TYPE_INT) };
	lt(&o, EMPTY);
	lt(&o, I32(INT32_MIN));
	lt(&o, I32(INT32_MIN + 1));
	lt(&o, I32(-65536));
	lt(&o, I32(-256));
	lt(&o, I32(-1));
	lt(&o, I32(0));
	lt(&o, I32(1));
	lt(&o, I32(255));
	lt(&o, I32(256));
	lt(&o, I32(65536));
	lt(&o, I32(INT32_MAX - 1));
	lt(&o, I32(INT32_MAX));
	check_order(&o);

	for (k = 0; k < (int)SM_ARRAY_SIZE(i64_kinds); k++) {
		o = (struct ord){ .t = T(i64_kinds[k]) };
		if (i64_kinds[k] != SM_TYPE_COUNTER)
			lt(&o, EMPTY);
		lt(&o, I64(INT64_MIN));
		lt(&o, I64(INT64_MIN + 1));
		lt(&o, I64(-4294967296LL));
		lt(&o, I64(-1));
		lt(&o, I64(0));
		lt(&o, I64(1));
		lt(&o, I64(4294967295LL));
		lt(&o, I64(4294967296LL));
		lt(&o, I64(INT64_MAX));
		check_order(&o);
	}

	/* date: unsigned days, 2^31 is the epoch */
	o = (struct ord){ .t = T(SM_TYPE_DATE) };
	lt(&o, EMPTY);
	lt(&o, hx("00000000")); /* -5877641-06-23 */
	lt(&o, hx("00000001"));
	lt(&o, date(-719528)); /* 0000-01-01 */
	lt(&o, date(-1));
	lt(&o, date(0));
	lt(&o, date(1));
	lt(&o, date(19724));
	lt(&o, hx("ffffffff"));
	check_order(&o);

	o = (struct ord){ .t = T(SM_TYPE_TIME) };
	lt(&o, EMPTY);
	lt(&o, I64(0));
	lt(&o, I64(1));
	lt(&o, I64(255));
	lt(&o, I64(256));
	lt(&o, I64(1000000000));
	lt(&o, I64(86399999999999LL));
	check_order(&o);
}

static void
test_order_floats(void **state)
{
	struct ord o;

	(void)state;
	o = (struct ord){ .t = T(SM_TYPE_FLOAT) };
	lt(&o, EMPTY);
	lt(&o, f32(-INFINITY));
	lt(&o, f32(-FLT_MAX));
	lt(&o, f32(-1.5f));
	lt(&o, f32(-1.0f));
	lt(&o, f32(-FLT_MIN));
	lt(&o, hx("80000001")); /* -smallest denormal */
	lt(&o, f32(-0.0f));
	lt(&o, f32(0.0f));
	lt(&o, hx("00000001")); /* smallest denormal */
	lt(&o, f32(FLT_MIN));
	lt(&o, f32(1.0f));
	lt(&o, f32(1.5f));
	lt(&o, f32(FLT_MAX));
	lt(&o, f32(INFINITY));
	lt(&o, hx("7fc00000")); /* NaN: above everything, all NaNs equal */
	eq(&o, hx("ffc00000"));
	eq(&o, hx("7f800001"));
	eq(&o, hx("ffffffff"));
	check_order(&o);

	o = (struct ord){ .t = T(SM_TYPE_DOUBLE) };
	lt(&o, EMPTY);
	lt(&o, f64(-INFINITY));
	lt(&o, f64(-DBL_MAX));
	lt(&o, f64(-1e300));
	lt(&o, f64(-1.0));
	lt(&o, f64(-0.1));
	lt(&o, f64(-DBL_MIN));
	lt(&o, hx("8000000000000001"));
	lt(&o, f64(-0.0));
	lt(&o, f64(0.0));
	lt(&o, hx("0000000000000001"));
	lt(&o, f64(DBL_MIN));
	lt(&o, f64(0.1));
	lt(&o, f64(1.0));
	lt(&o, f64(1.0000000000000002));
	lt(&o, f64(1e300));
	lt(&o, f64(DBL_MAX));
	lt(&o, f64(INFINITY));
	lt(&o, hx("7ff8000000000000"));
	eq(&o, hx("fff8000000000000"));
	eq(&o, hx("7ff0000000000001"));
	check_order(&o);
}

static void
test_order_varint(void **state)
{
	struct ord o = { .t = T(SM_TYPE_VARINT) };

	(void)state;
	lt(&o, EMPTY);
	lt(&o, vi("-1"
		  "000000000000000000000000000000000000000000000000000000000000000000000000000"));
	lt(&o, hx("80000000000000000000")); /* -2^79 */
	lt(&o, vi("-9223372036854775809"));
	lt(&o, hx("8000000000000000")); /* -2^63 */
	lt(&o, hx("8000"));		/* -32768 */
	lt(&o, hx("ff7f"));		/* -129 */
	lt(&o, hx("80"));		/* -128 ... */
	eq(&o, hx("ff80"));		/* ... padded */
	eq(&o, hx("ffffff80"));
	lt(&o, hx("81"));
	lt(&o, hx("fe"));
	lt(&o, hx("ff")); /* -1 */
	eq(&o, hx("ffff"));
	lt(&o, hx("00")); /* 0 */
	eq(&o, hx("0000"));
	eq(&o, hx("00000000"));
	lt(&o, hx("01"));
	eq(&o, hx("000001"));
	lt(&o, hx("7f"));
	lt(&o, hx("0080")); /* 128 */
	lt(&o, hx("00ff")); /* 255, not -1 */
	eq(&o, hx("0000ff"));
	lt(&o, hx("0100"));
	lt(&o, hx("7fff"));
	lt(&o, hx("008000"));
	lt(&o, hx("7fffffffffffffff"));
	lt(&o, vi("9223372036854775808"));
	lt(&o, hx("01000000000000000000")); /* 2^72 */
	lt(&o, vi("1"
		  "000000000000000000000000000000000000000000000000000000000000000000000000000"));
	check_order(&o);
}

static void
test_order_decimal(void **state)
{
	char big[400], big1[400], nines[400];
	struct ord o = { .t = T(SM_TYPE_DECIMAL) };

	(void)state;
	/* 10^300, 10^300 + 1, 10^300 - 1 */
	memset(big, '0', 301);
	big[0] = '1';
	big[301] = '\0';
	strcpy(big1, big);
	big1[300] = '1';
	memset(nines, '9', 300);
	nines[300] = '\0';

	lt(&o, EMPTY);
	lt(&o, dec("-1", INT32_MIN)); /* -1E+2147483648 */
	lt(&o, dec("-3", -40));
	lt(&o, dec("-1", -39)); /* -1E+39 */
	eq(&o, dec("-1000000000000000000000000000000000000000", 0));
	lt(&o, dec("-10", 0));
	lt(&o, dec("-15", 1)); /* -1.5 */
	eq(&o, dec("-150", 2));
	eq(&o, decx("ffff6a", 2)); /* padded -150 */
	lt(&o, dec("-1", 0));
	lt(&o, dec("-1", 1)); /* -0.1 */
	lt(&o, dec("-9", 2)); /* -0.09 */
	lt(&o, dec("-1", INT32_MAX));
	lt(&o, dec("0", 0));
	eq(&o, dec("0", 2));
	eq(&o, dec("0", -5));
	eq(&o, dec("0", INT32_MIN));
	eq(&o, dec("0", INT32_MAX));
	eq(&o, decx("0000", 3));
	lt(&o, dec("1", INT32_MAX)); /* 1E-2147483647 */
	lt(&o, dec("1", 400));
	lt(&o, dec("9", 2)); /* 0.09 */
	lt(&o, dec("1", 1)); /* 0.1 */
	eq(&o, dec("10", 2));
	eq(&o, dec("100", 3));
	lt(&o, dec(nines, 300)); /* 0.999...9 */
	lt(&o, dec("1", 0));
	eq(&o, dec("10", 1));
	eq(&o, decx("000001", 0));
	eq(&o, dec(big, 300));
	lt(&o, dec(big1, 300)); /* 1.000...01 */
	lt(&o, dec("15", 1));	/* 1.5 */
	eq(&o, dec("150", 2));
	eq(&o, decx("0096", 2));
	lt(&o, dec("2", 0));
	lt(&o, dec("1", -1)); /* 1E+1 */
	eq(&o, dec("10", 0));
	lt(&o, dec("1000000000000000000000000000000000000000", 0));
	eq(&o, dec("1", -39));
	lt(&o, dec("3", -40));
	lt(&o, dec(big, 0));
	eq(&o, dec("1", -300));
	lt(&o, dec(big1, 0));
	lt(&o, dec("1", INT32_MIN)); /* 1E+2147483648 */
	check_order(&o);
}

static void
test_order_uuids(void **state)
{
	struct ord o;

	(void)state;
	o = (struct ord){ .t = T(SM_TYPE_UUID) };
	lt(&o, EMPTY);
	/* version 0, then by bytes unsigned */
	lt(&o, hx("00000000-0000-0000-0000-000000000000"));
	lt(&o, hx("00000000-0000-0000-0000-000000000001"));
	lt(&o, hx("00000000-0000-0000-8000-000000000000"));
	lt(&o, hx("7fffffff-ffff-0fff-ffff-ffffffffffff"));
	lt(&o, hx("80000000-0000-0000-0000-000000000000"));
	/* version 1 by timestamp (time_hi, time_mid, time_low), then the rest unsigned */
	lt(&o, hx("ffffffff-0000-1000-0000-000000000000"));
	lt(&o, hx("00000000-0001-1000-0000-000000000000"));
	lt(&o, hx("00000000-0001-1000-7f00-000000000000"));
	lt(&o, hx("00000000-0001-1000-8000-000000000000"));
	lt(&o, hx("00000000-0001-1000-ff00-000000000000"));
	lt(&o, hx("00000000-ffff-1000-0000-000000000000"));
	lt(&o, hx("00000000-0000-1001-0000-000000000000"));
	lt(&o, hx("ffffffff-ffff-1fff-ffff-ffffffffffff"));
	/* version 4 by the first 8 bytes unsigned, then the last 8 */
	lt(&o, hx("00000000-0000-4000-0000-000000000000"));
	lt(&o, hx("00000000-0000-4000-8000-000000000000"));
	lt(&o, hx("00000000-0000-4001-0000-000000000000"));
	lt(&o, hx("7fffffff-ffff-4fff-ffff-ffffffffffff"));
	lt(&o, hx("80000000-0000-4000-0000-000000000000"));
	lt(&o, hx("ffffffff-ffff-4fff-ffff-ffffffffffff"));
	lt(&o, hx("00000000-0000-5000-0000-000000000000"));
	lt(&o, hx("00000000-0000-f000-0000-000000000000"));
	check_order(&o);

	o = (struct ord){ .t = T(SM_TYPE_TIMEUUID) };
	lt(&o, EMPTY);
	lt(&o, hx("00000000-0000-1000-0000-000000000000"));
	lt(&o, hx("ffffffff-0000-1000-0000-000000000000"));
	/* same timestamp: the last 8 bytes compare as signed bytes */
	lt(&o, hx("00000000-0001-1000-8000-000000000000"));
	lt(&o, hx("00000000-0001-1000-ff00-000000000000"));
	lt(&o, hx("00000000-0001-1000-0080-000000000000"));
	lt(&o, hx("00000000-0001-1000-0000-000000000080"));
	lt(&o, hx("00000000-0001-1000-0000-0000000000ff"));
	lt(&o, hx("00000000-0001-1000-0000-000000000000"));
	lt(&o, hx("00000000-0001-1000-0000-000000000001"));
	lt(&o, hx("00000000-0001-1000-007f-000000000000"));
	lt(&o, hx("00000000-0001-1000-7f80-000000000000"));
	lt(&o, hx("00000000-0001-1000-7fff-ffffffffffff"));
	lt(&o, hx("00000000-0001-1000-7f00-000000000000"));
	lt(&o, hx("00000000-0001-1000-7f7f-7f7f7f7f7f7f"));
	lt(&o, hx("00000000-ffff-1000-0000-000000000000"));
	lt(&o, hx("00000000-0000-1001-0000-000000000000"));
	lt(&o, hx("ffffffff-ffff-1fff-ffff-ffffffffffff"));
	check_order(&o);
}

static void
test_order_collections(void **state)
{
	struct ord o;

	(void)state;
	o = (struct ord){ .t = parse("frozen<list<int>>") };
	lt(&o, EMPTY);
	lt(&o, NOELEMS);
	lt(&o, LIST(EMPTY));
	lt(&o, LIST(I32(-1)));
	lt(&o, LIST(I32(-1), I32(0)));
	lt(&o, LIST(I32(-1), I32(0), I32(0)));
	lt(&o, LIST(I32(-1), I32(1)));
	lt(&o, LIST(I32(0)));
	lt(&o, LIST(I32(0), I32(INT32_MIN)));
	lt(&o, LIST(I32(1)));
	lt(&o, LIST(I32(256)));
	check_order(&o);
	sm_type_free(o.t);

	o = (struct ord){ .t = parse("frozen<set<varint>>") };
	lt(&o, EMPTY);
	lt(&o, NOELEMS);
	lt(&o, LIST(hx("80")));
	eq(&o, LIST(hx("ff80")));
	lt(&o, LIST(hx("80"), hx("00")));
	lt(&o, LIST(hx("00")));
	lt(&o, LIST(hx("00ff")));
	check_order(&o);
	sm_type_free(o.t);

	o = (struct ord){ .t = parse("frozen<map<int, text>>") };
	lt(&o, EMPTY);
	lt(&o, NOELEMS);
	lt(&o, MAP(I32(-1), bytes("z", 1)));
	lt(&o, MAP(I32(1), EMPTY));
	lt(&o, MAP(I32(1), bytes("a", 1)));
	lt(&o, MAP(I32(1), bytes("a", 1), I32(2), bytes("a", 1)));
	lt(&o, MAP(I32(1), bytes("a", 1), I32(3), EMPTY));
	lt(&o, MAP(I32(1), bytes("b", 1)));
	lt(&o, MAP(I32(2), EMPTY));
	check_order(&o);
	sm_type_free(o.t);

	o = (struct ord){ .t = parse("frozen<list<frozen<list<decimal>>>>") };
	lt(&o, EMPTY);
	lt(&o, NOELEMS);
	lt(&o, LIST(NOELEMS));
	lt(&o, LIST(NOELEMS, NOELEMS));
	lt(&o, LIST(LIST(dec("-1", 0))));
	lt(&o, LIST(LIST(dec("1", 0))));
	eq(&o, LIST(LIST(dec("100", 2))));
	lt(&o, LIST(LIST(dec("1", 0), dec("0", 0))));
	lt(&o, LIST(LIST(dec("15", 1))));
	check_order(&o);
	sm_type_free(o.t);
}

/* ---- formatting ---- */

static void
fmt_is(const struct sm_type *t, struct sm_bytes v, const char *want)
{
	char buf[1024];
	size_t n = sm_value_format(t, v, buf, sizeof(buf));

	assert_string_equal(buf, want);
	assert_int_equal(n, strlen(want));
}

static void
test_format_simple(void **state)
{
	(void)state;
	fmt_is(T(SM_TYPE_INT), I32(42), "42");
	fmt_is(T(SM_TYPE_INT), I32(INT32_MIN), "-2147483648");
	fmt_is(T(SM_TYPE_TINYINT), I8(-128), "-128");
	fmt_is(T(SM_TYPE_SMALLINT), I16(32767), "32767");
	fmt_is(T(SM_TYPE_BIGINT), I64(INT64_MIN), "-9223372036854775808");
	fmt_is(T(SM_TYPE_COUNTER), I64(7), "7");
	fmt_is(T(SM_TYPE_TEXT), bytes("it's", 4), "'it''s'");
	fmt_is(T(SM_TYPE_TEXT), hx("c3a9"), "'\xc3\xa9'");
	fmt_is(T(SM_TYPE_ASCII), bytes("''", 2), "''''''");
	fmt_is(T(SM_TYPE_TEXT), EMPTY, "''");
	fmt_is(T(SM_TYPE_BLOB), hx("cafe"), "0xcafe");
	fmt_is(T(SM_TYPE_BLOB), EMPTY, "0x");
	fmt_is(T(SM_TYPE_BOOLEAN), hx("01"), "true");
	fmt_is(T(SM_TYPE_BOOLEAN), hx("00"), "false");
	fmt_is(T(SM_TYPE_INT), EMPTY, "blobasint(0x)");
	fmt_is(T(SM_TYPE_TIMESTAMP), EMPTY, "blobastimestamp(0x)");
	/* malformed: raw bytes */
	fmt_is(T(SM_TYPE_INT), hx("010203"), "0x010203");
	fmt_is(T(SM_TYPE_TEXT), hx("ff"), "0xff");

	fmt_is(T(SM_TYPE_FLOAT), f32(1.5f), "1.5");
	fmt_is(T(SM_TYPE_FLOAT), f32(0.1f), "0.1");
	fmt_is(T(SM_TYPE_FLOAT), f32(-2.0f), "-2.0");
	fmt_is(T(SM_TYPE_FLOAT), f32(3.4028235e38f), "3.4028235E38");
	fmt_is(T(SM_TYPE_FLOAT), f32(NAN), "NaN");
	fmt_is(T(SM_TYPE_FLOAT), f32(-INFINITY), "-Infinity");
	fmt_is(T(SM_TYPE_DOUBLE), f64(1.5), "1.5");
	fmt_is(T(SM_TYPE_DOUBLE), f64(1.0), "1.0");
	fmt_is(T(SM_TYPE_DOUBLE), f64(0.0), "0.0");
	fmt_is(T(SM_TYPE_DOUBLE), f64(-0.0), "-0.0");
	fmt_is(T(SM_TYPE_DOUBLE), f64(0.1), "0.1");
	fmt_is(T(SM_TYPE_DOUBLE), f64(100.0), "100.0");
	fmt_is(T(SM_TYPE_DOUBLE), f64(123456.789), "123456.789");
	fmt_is(T(SM_TYPE_DOUBLE), f64(9999999.0), "9999999.0");
	fmt_is(T(SM_TYPE_DOUBLE), f64(1e7), "1.0E7");
	fmt_is(T(SM_TYPE_DOUBLE), f64(1e10), "1.0E10");
	fmt_is(T(SM_TYPE_DOUBLE), f64(0.001), "0.001");
	fmt_is(T(SM_TYPE_DOUBLE), f64(1e-4), "1.0E-4");
	fmt_is(T(SM_TYPE_DOUBLE), f64(-1.25e-10), "-1.25E-10");
	fmt_is(T(SM_TYPE_DOUBLE), f64(0.30000000000000004), "0.30000000000000004");
	fmt_is(T(SM_TYPE_DOUBLE), f64(DBL_MAX), "1.7976931348623157E308");
	fmt_is(T(SM_TYPE_DOUBLE), hx("0000000000000001"), "5.0E-324");
	fmt_is(T(SM_TYPE_DOUBLE), f64(INFINITY), "Infinity");
	fmt_is(T(SM_TYPE_DOUBLE), f64(NAN), "NaN");

	fmt_is(T(SM_TYPE_TIMESTAMP), I64(0), "'1970-01-01 00:00:00.000Z'");
	fmt_is(T(SM_TYPE_TIMESTAMP), I64(1704164645006LL), "'2024-01-02 03:04:05.006Z'");
	fmt_is(T(SM_TYPE_TIMESTAMP), I64(-1), "'1969-12-31 23:59:59.999Z'");
	fmt_is(T(SM_TYPE_TIMESTAMP), I64(951782400000LL), "'2000-02-29 00:00:00.000Z'");
	fmt_is(T(SM_TYPE_TIMESTAMP), I64(253402300799999LL), "'9999-12-31 23:59:59.999Z'");
	fmt_is(T(SM_TYPE_DATE), date(0), "'1970-01-01'");
	fmt_is(T(SM_TYPE_DATE), date(19724), "'2024-01-02'");
	fmt_is(T(SM_TYPE_DATE), date(-1), "'1969-12-31'");
	fmt_is(T(SM_TYPE_DATE), date(-719528), "'0000-01-01'");
	fmt_is(T(SM_TYPE_DATE), date(-141427), "'1582-10-15'");
	fmt_is(T(SM_TYPE_TIME), I64(3723000000004LL), "'01:02:03.000000004'");
	fmt_is(T(SM_TYPE_TIME), I64(0), "'00:00:00.000000000'");
	fmt_is(T(SM_TYPE_TIME), I64(86399999999999LL), "'23:59:59.999999999'");
	fmt_is(T(SM_TYPE_UUID), hx("0123456789ABCDEF0123456789abcdef"),
	       "01234567-89ab-cdef-0123-456789abcdef");
	fmt_is(T(SM_TYPE_TIMEUUID), hx("00000000-0000-1000-8000-000000000000"),
	       "00000000-0000-1000-8000-000000000000");
	fmt_is(T(SM_TYPE_INET), hx("01020304"), "'1.2.3.4'");
	fmt_is(T(SM_TYPE_INET), hx("00000000000000000000000000000001"), "'::1'");
	fmt_is(T(SM_TYPE_INET), hx("20010db8000000000000000000000001"), "'2001:db8::1'");
}

static void
test_format_numbers(void **state)
{
	(void)state;
	fmt_is(T(SM_TYPE_VARINT), hx("00"), "0");
	fmt_is(T(SM_TYPE_VARINT), hx("0000"), "0");
	fmt_is(T(SM_TYPE_VARINT), hx("80"), "-128");
	fmt_is(T(SM_TYPE_VARINT), hx("ff80"), "-128");
	fmt_is(T(SM_TYPE_VARINT), hx("00ff"), "255");
	fmt_is(T(SM_TYPE_VARINT), hx("ff"), "-1");
	fmt_is(T(SM_TYPE_VARINT), hx("3b9aca00"), "1000000000");
	fmt_is(T(SM_TYPE_VARINT), hx("010000000000000000000000000000"),
	       "5192296858534827628530496329220096");
	fmt_is(T(SM_TYPE_VARINT), hx("10000000000000000000000000"),
	       "1267650600228229401496703205376");
	fmt_is(T(SM_TYPE_VARINT), hx("f0000000000000000000000000"),
	       "-1267650600228229401496703205376");
	fmt_is(T(SM_TYPE_VARINT), vi("-123456789012345678901234567890123456789"),
	       "-123456789012345678901234567890123456789");
	{
		/* 600 digits, through the heap scratch path */
		char digits[601], buf[700];
		unsigned i;

		for (i = 0; i < 600; i++)
			digits[i] = (char)('1' + i % 9);
		digits[600] = '\0';
		sm_value_format(T(SM_TYPE_VARINT), vi(digits), buf, sizeof(buf));
		assert_string_equal(buf, digits);
	}

	fmt_is(T(SM_TYPE_DECIMAL), dec("150", 2), "1.50");
	fmt_is(T(SM_TYPE_DECIMAL), dec("15", 1), "1.5");
	fmt_is(T(SM_TYPE_DECIMAL), dec("-15", 1), "-1.5");
	fmt_is(T(SM_TYPE_DECIMAL), dec("-5", 0), "-5");
	fmt_is(T(SM_TYPE_DECIMAL), dec("5", 3), "0.005");
	fmt_is(T(SM_TYPE_DECIMAL), dec("-5", 3), "-0.005");
	fmt_is(T(SM_TYPE_DECIMAL), dec("123", 3), "0.123");
	fmt_is(T(SM_TYPE_DECIMAL), dec("0", 2), "0.00");
	fmt_is(T(SM_TYPE_DECIMAL), dec("0", -2), "0");
	fmt_is(T(SM_TYPE_DECIMAL), dec("15", -3), "15000");
	fmt_is(T(SM_TYPE_DECIMAL), dec("1", 70), "1E-70");
	fmt_is(T(SM_TYPE_DECIMAL), dec("15", -100), "1.5E+101");
	fmt_is(T(SM_TYPE_DECIMAL), dec("-1", INT32_MIN), "-1E+2147483648");
	fmt_is(T(SM_TYPE_DECIMAL), dec("12", INT32_MAX), "1.2E-2147483646");
	fmt_is(T(SM_TYPE_DECIMAL), decx("0096", 2), "1.50");
	fmt_is(T(SM_TYPE_DECIMAL), hx("00000001"), "0x00000001"); /* malformed */
}

/* Thousands of digits: the scratch of compare and format comes from the heap, and goes back. */
static void
test_big_numbers(void **state)
{
	static char a[4002], a1[4002], b[4002], out[4100];
	int64_t before = mem_in_use();
	struct sm_bytes va, va1, vb;

	(void)state;
	memset(a, '0', 4001);
	a[0] = '1';
	a[4001] = '\0'; /* 10^4000 */
	strcpy(a1, a);
	a1[4000] = '1'; /* 10^4000 + 1 */
	memset(b, '0', 4000);
	b[0] = '1';
	b[4000] = '\0'; /* 10^3999 */
	va = dec(a, 4000);
	va1 = dec(a1, 4000);
	vb = dec(b, 3999);
	assert_true(va.len > 1600);
	assert_int_equal(sm_value_compare(T(SM_TYPE_DECIMAL), va, vb), 0);
	assert_true(sm_value_compare(T(SM_TYPE_DECIMAL), va1, vb) > 0);
	assert_true(sm_value_compare(T(SM_TYPE_DECIMAL), vb, va1) < 0);
	assert_true(sm_value_compare(T(SM_TYPE_DECIMAL), dec(a, 0), dec("1", -4000)) == 0);
	assert_true(sm_value_compare(T(SM_TYPE_DECIMAL), dec(a, 0), dec("1", -3999)) > 0);
	assert_int_equal(sm_value_format(T(SM_TYPE_VARINT), vi(a1), out, sizeof(out)), 4001);
	assert_string_equal(out, a1);
	out[0] = '-';
	strcpy(out + 1, a1);
	assert_int_equal(sm_value_compare(T(SM_TYPE_VARINT), vi(out), vi("-1")), -1);
	assert_int_equal(sm_value_format(T(SM_TYPE_VARINT), vi(out), out, sizeof(out)), 4002);
	assert_int_equal(out[0], '-');
	assert_string_equal(out + 1, a1);
	assert_int_equal(sm_value_format(T(SM_TYPE_DECIMAL), va1, out, sizeof(out)), 4002);
	assert_int_equal(strncmp(out, "1.000", 5), 0);
	assert_int_equal(out[4001], '1');
	assert_int_equal(mem_in_use(), before);
}

static void
test_format_duration(void **state)
{
	(void)state;
	fmt_is(T(SM_TYPE_DURATION), dur(1, 2, 3), "1mo2d3ns");
	fmt_is(T(SM_TYPE_DURATION), dur(14, 3, 3723004005006LL), "1y2mo3d1h2m3s4ms5us6ns");
	fmt_is(T(SM_TYPE_DURATION), dur(-12, 0, -60000000000LL), "-1y1m");
	fmt_is(T(SM_TYPE_DURATION), dur(0, 0, 0), "0s");
	fmt_is(T(SM_TYPE_DURATION), dur(0, 45, 0), "45d");
	fmt_is(T(SM_TYPE_DURATION), dur(0, 0, 90000000000000LL), "25h");
	fmt_is(T(SM_TYPE_DURATION), dur(INT32_MIN, INT32_MIN, INT64_MIN),
	       "-178956970y8mo2147483648d2562047h47m16s854ms775us808ns");
}

static void
test_format_collections(void **state)
{
	const struct sm_type *li = parse("list<int>"), *st = parse("set<text>"),
			     *m = parse("map<text, int>"),
			     *nest = parse("frozen<list<frozen<map<int, frozen<set<int>>>>>>");

	(void)state;
	fmt_is(li, LIST(I32(1), I32(2)), "[1, 2]");
	fmt_is(li, NOELEMS, "[]");
	fmt_is(li, EMPTY, "[]");
	fmt_is(li, LIST(EMPTY), "[blobasint(0x)]");
	fmt_is(st, LIST(bytes("a", 1), bytes("b'", 2)), "{'a', 'b'''}");
	fmt_is(st, NOELEMS, "{}");
	fmt_is(m, MAP(bytes("a", 1), I32(1)), "{'a': 1}");
	fmt_is(m, MAP(bytes("a", 1), I32(1), bytes("b", 1), I32(-2)), "{'a': 1, 'b': -2}");
	fmt_is(nest, LIST(MAP(I32(1), LIST(I32(2), I32(3))), NOELEMS), "[{1: {2, 3}}, {}]");
	fmt_is(li, LIST(I32(1), I16(2)),
	       "0x00000002000000040000000100000002"
	       "0002");
	sm_type_free(li);
	sm_type_free(st);
	sm_type_free(m);
	sm_type_free(nest);
}

static void
test_format_truncation(void **state)
{
	char buf[8];
	size_t n;

	(void)state;
	memset(buf, 'x', sizeof(buf));
	n = sm_value_format(T(SM_TYPE_BIGINT), I64(INT64_MIN), buf, sizeof(buf));
	assert_int_equal(n, 20);
	assert_string_equal(buf, "-922337");
	n = sm_value_format(T(SM_TYPE_BIGINT), I64(INT64_MIN), NULL, 0);
	assert_int_equal(n, 20);
	n = sm_value_format(T(SM_TYPE_TEXT), bytes("abcdefghij", 10), buf, 1);
	assert_int_equal(n, 12);
	assert_string_equal(buf, "");
	n = sm_type_name(T(SM_TYPE_TIMESTAMP), buf, 4);
	assert_int_equal(n, 9);
	assert_string_equal(buf, "tim");
}

/* ---- collection helpers ---- */

static void
test_coll_roundtrip(void **state)
{
	struct sm_bytes in[] = { bytes("one", 3), EMPTY, hx("00ff00"), bytes("four", 4) };
	struct sm_bytes v, e, val;
	struct sm_coll_iter it;
	uint8_t buf[64];
	unsigned i;

	(void)state;
	/* list: 4 + 4 * 4 + 3 + 0 + 3 + 4 */
	assert_int_equal(sm_coll_build(NULL, 0, in, 4, false), 30);
	memset(buf, 0xee, sizeof(buf));
	assert_int_equal(sm_coll_build(buf, 29, in, 4, false), 30);
	assert_int_equal(buf[0], 0xee); /* too small: nothing written */
	assert_int_equal(sm_coll_build(buf, sizeof(buf), in, 4, false), 30);
	assert_memory_equal(buf,
			    "\0\0\0\x04"
			    "\0\0\0\x03one"
			    "\0\0\0\0"
			    "\0\0\0\x03\0\xff\0"
			    "\0\0\0\x04"
			    "four",
			    30);
	v = (struct sm_bytes){ buf, 30 };
	assert_int_equal(sm_coll_iter_init(&it, v), 0);
	for (i = 0; sm_coll_next(&it, &e, NULL, false); i++) {
		assert_true(i < 4);
		assert_int_equal(e.len, in[i].len);
		if (e.len)
			assert_memory_equal(e.p, in[i].p, e.len);
	}
	assert_int_equal(i, 4);
	assert_false(sm_coll_iter_error(&it));
	assert_false(sm_coll_next(&it, &e, NULL, false));

	/* map: the same four entries as two pairs */
	assert_int_equal(sm_coll_build(buf, sizeof(buf), in, 2, true), 30);
	assert_int_equal(buf[3], 2);
	assert_int_equal(sm_coll_iter_init(&it, v), 0);
	for (i = 0; sm_coll_next(&it, &e, &val, true); i++) {
		assert_int_equal(e.len, in[2 * i].len);
		assert_int_equal(val.len, in[2 * i + 1].len);
		if (e.len)
			assert_memory_equal(e.p, in[2 * i].p, e.len);
		if (val.len)
			assert_memory_equal(val.p, in[2 * i + 1].p, val.len);
	}
	assert_int_equal(i, 2);
	assert_false(sm_coll_iter_error(&it));
	/* a map's values may be skipped */
	assert_int_equal(sm_coll_iter_init(&it, v), 0);
	assert_true(sm_coll_next(&it, &e, NULL, true));
	assert_true(sm_coll_next(&it, &e, NULL, true));
	assert_int_equal(e.len, 3);
	assert_false(sm_coll_next(&it, &e, NULL, true));
	assert_false(sm_coll_iter_error(&it));

	/* empty value and empty collection */
	assert_int_equal(sm_coll_iter_init(&it, EMPTY), 0);
	assert_false(sm_coll_next(&it, &e, NULL, false));
	assert_false(sm_coll_iter_error(&it));
	assert_int_equal(sm_coll_build(buf, sizeof(buf), NULL, 0, false), 4);
	assert_int_equal(sm_coll_iter_init(&it, (struct sm_bytes){ buf, 4 }), 0);
	assert_false(sm_coll_next(&it, &e, NULL, false));
	assert_false(sm_coll_iter_error(&it));
}

static void
test_coll_malformed(void **state)
{
	struct sm_coll_iter it;
	struct sm_bytes e;

	(void)state;
	assert_int_equal(sm_coll_iter_init(&it, hx("000001")), -EINVAL);
	assert_true(sm_coll_iter_error(&it));
	assert_false(sm_coll_next(&it, &e, NULL, false));
	assert_int_equal(sm_coll_iter_init(&it, hx("ffffffff")), -EINVAL);
	assert_int_equal(sm_coll_iter_init(&it, hx("00000002 00000000")), -EINVAL);
	assert_int_equal(sm_coll_iter_init(&it, hx("7fffffff 00000000")), -EINVAL);

	/* truncated element */
	assert_int_equal(sm_coll_iter_init(&it, hx("00000002 00000001 61 00000005 6263")), 0);
	assert_true(sm_coll_next(&it, &e, NULL, false));
	assert_false(sm_coll_iter_error(&it));
	assert_false(sm_coll_next(&it, &e, NULL, false));
	assert_true(sm_coll_iter_error(&it));
	assert_false(sm_coll_next(&it, &e, NULL, false));

	/* null element */
	assert_int_equal(sm_coll_iter_init(&it, hx("00000001 ffffffff")), 0);
	assert_false(sm_coll_next(&it, &e, NULL, false));
	assert_true(sm_coll_iter_error(&it));

	/* trailing bytes */
	assert_int_equal(sm_coll_iter_init(&it, hx("00000001 00000001 61 62")), 0);
	assert_true(sm_coll_next(&it, &e, NULL, false));
	assert_false(sm_coll_next(&it, &e, NULL, false));
	assert_true(sm_coll_iter_error(&it));

	/* a map missing its last value */
	assert_int_equal(sm_coll_iter_init(&it, hx("00000001 00000001 61")), 0);
	assert_false(sm_coll_next(&it, &e, NULL, true));
	assert_true(sm_coll_iter_error(&it));

	/* malformed values still compare consistently, bytewise */
	{
		const struct sm_type *t = parse("frozen<list<int>>");

		assert_true(sm_value_compare(t, hx("00000001 ffffffff"),
					     hx("00000001 00000004 00000001")) > 0);
		assert_true(sm_value_compare(t, hx("00000001 00000004 00000001"),
					     hx("00000001 ffffffff")) < 0);
		assert_int_equal(sm_value_compare(t, hx("0000"), hx("0000")), 0);
		sm_type_free(t);
	}
}

static void
test_duration_codec(void **state)
{
	static const struct {
		int32_t m, d;
		int64_t ns;
		const char *hex;
	} cases[] = {
		{ 0, 0, 0, "000000" },
		{ 0, 0, 1, "000002" },
		{ 0, 0, -1, "000001" },
		{ 1, 2, 3, "020406" },
		{ 0, 0, 63, "00007e" },
		{ 0, 0, 64, "00008080" },
		{ 0, 0, -64, "00007f" },
		{ 0, 0, 1000, "000087d0" },
		{ 0, 0, INT64_MAX, "0000fffffffffffffffffe" },
		{ 0, 0, INT64_MIN, "0000ffffffffffffffffff" },
		{ INT32_MIN, 0, 0, "f0ffffffff0000" },
		{ INT32_MAX, 0, 0, "f0fffffffe0000" },
	};
	int32_t m, d;
	int64_t ns;
	struct sm_bytes v, want;
	unsigned i;

	(void)state;
	for (i = 0; i < SM_ARRAY_SIZE(cases); i++) {
		v = dur(cases[i].m, cases[i].d, cases[i].ns);
		want = hx(cases[i].hex);
		assert_int_equal(v.len, want.len);
		assert_memory_equal(v.p, want.p, v.len);
		assert_int_equal(sm_duration_decode(v, &m, &d, &ns), 0);
		assert_int_equal(m, cases[i].m);
		assert_int_equal(d, cases[i].d);
		assert_true(ns == cases[i].ns);
	}
	assert_int_equal(sm_duration_build(NULL, 0, 1, 1, 1), 3);
	assert_int_equal(sm_duration_decode(dur(1, -1, 0), &m, &d, &ns), -EINVAL);
	assert_int_equal(sm_duration_decode(hx("0000"), &m, &d, &ns), -EINVAL);
	/* non-minimal vints decode too, like Cassandra */
	assert_int_equal(sm_duration_decode(hx("8002 00 00"), &m, &d, &ns), 0);
	assert_int_equal(m, 1);
}

/* Frozen sets and maps in canonical order, nested ones too. */
static void
test_normalize(void **state)
{
	const struct sm_type *set_int, *map_ti, *list_set;
	char err[128];
	uint8_t buf[256], in[256];
	struct sm_bytes e[8];
	uint8_t i1[4] = { 0, 0, 0, 1 }, i2[4] = { 0, 0, 0, 2 }, i3[4] = { 0, 0, 0, 3 };
	uint8_t tmp1[64], tmp2[64];
	size_t n1, n2, n;
	long got;

	(void)state;
	assert_int_equal(sm_type_parse("frozen<set<int>>", &set_int, err, sizeof(err)), 0);
	assert_int_equal(sm_type_parse("frozen<map<text, int>>", &map_ti, err, sizeof(err)), 0);
	assert_int_equal(
		sm_type_parse("frozen<list<frozen<set<int>>>>", &list_set, err, sizeof(err)), 0);

	/* {3, 1, 3, 2} -> {1, 2, 3} */
	e[0] = (struct sm_bytes){ i3, 4 };
	e[1] = (struct sm_bytes){ i1, 4 };
	e[2] = (struct sm_bytes){ i3, 4 };
	e[3] = (struct sm_bytes){ i2, 4 };
	n = sm_coll_build(in, sizeof(in), e, 4, false);
	got = sm_value_normalize(set_int, (struct sm_bytes){ in, (uint32_t)n }, buf, sizeof(buf));
	e[0] = (struct sm_bytes){ i1, 4 };
	e[1] = (struct sm_bytes){ i2, 4 };
	e[2] = (struct sm_bytes){ i3, 4 };
	n = sm_coll_build(tmp1, sizeof(tmp1), e, 3, false);
	assert_int_equal(got, (long)n);
	assert_memory_equal(buf, tmp1, n);

	/* {'b': 1, 'a': 2, 'b': 3} -> {'a': 2, 'b': 3}: the last value wins */
	e[0] = (struct sm_bytes){ (const uint8_t *)"b", 1 };
	e[1] = (struct sm_bytes){ i1, 4 };
	e[2] = (struct sm_bytes){ (const uint8_t *)"a", 1 };
	e[3] = (struct sm_bytes){ i2, 4 };
	e[4] = (struct sm_bytes){ (const uint8_t *)"b", 1 };
	e[5] = (struct sm_bytes){ i3, 4 };
	n = sm_coll_build(in, sizeof(in), e, 3, true);
	got = sm_value_normalize(map_ti, (struct sm_bytes){ in, (uint32_t)n }, in, sizeof(in));
	e[0] = (struct sm_bytes){ (const uint8_t *)"a", 1 };
	e[1] = (struct sm_bytes){ i2, 4 };
	e[2] = (struct sm_bytes){ (const uint8_t *)"b", 1 };
	e[3] = (struct sm_bytes){ i3, 4 };
	n = sm_coll_build(tmp1, sizeof(tmp1), e, 2, true);
	assert_int_equal(got, (long)n);
	assert_memory_equal(in, tmp1, n);

	/* A list keeps its order but its nested sets are normalised. */
	e[0] = (struct sm_bytes){ i2, 4 };
	e[1] = (struct sm_bytes){ i1, 4 };
	n1 = sm_coll_build(tmp1, sizeof(tmp1), e, 2, false); /* {2, 1} */
	e[0] = (struct sm_bytes){ i1, 4 };
	e[1] = (struct sm_bytes){ i2, 4 };
	n2 = sm_coll_build(tmp2, sizeof(tmp2), e, 2, false); /* {1, 2} */
	e[0] = (struct sm_bytes){ tmp1, (uint32_t)n1 };
	n = sm_coll_build(in, sizeof(in), e, 1, false);
	got = sm_value_normalize(list_set, (struct sm_bytes){ in, (uint32_t)n }, buf, sizeof(buf));
	e[0] = (struct sm_bytes){ tmp2, (uint32_t)n2 };
	n = sm_coll_build(tmp1, sizeof(tmp1), e, 1, false);
	assert_int_equal(got, (long)n);
	assert_memory_equal(buf, tmp1, n);

	/* Malformed values are refused; simple values are copied. */
	assert_int_equal(sm_value_normalize(set_int, (struct sm_bytes){ i3, 3 }, buf, sizeof(buf)),
			 -EINVAL);
	assert_int_equal(sm_value_normalize(sm_type_simple(SM_TYPE_INT), (struct sm_bytes){ i3, 4 },
					    buf, sizeof(buf)),
			 4);
	sm_type_free(set_int);
	sm_type_free(map_ti);
	sm_type_free(list_set);
}

static void
put_be32_at(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t
get_be32_at(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/*
 * Thousands of elements: sorted, the first of equal set elements kept (1.0
 * and 1 are equal decimals with other bytes), the last value of a repeated
 * map key; one level at a time (sm_value_normalize_outer()) gives the same
 * as all levels.
 */
static void
test_normalize_large(void **state)
{
	enum { N = 20000 };
	const struct sm_type *set_dec, *map_ii, *set_set;
	struct sm_bytes *e = malloc(4 * N * sizeof(*e));
	uint8_t *vals = malloc(16 * N), *in = malloc(40 * N), *buf = malloc(40 * N);
	uint8_t *want = malloc(40 * N), *inner = malloc(64 * N);
	struct sm_coll_iter it;
	struct sm_bytes k, v;
	char err[128];
	size_t n;
	long got;
	unsigned i;

	(void)state;
	assert_true(e && vals && in && buf && want && inner);
	assert_int_equal(sm_type_parse("frozen<set<decimal>>", &set_dec, err, sizeof(err)), 0);
	assert_int_equal(sm_type_parse("frozen<map<int, int>>", &map_ii, err, sizeof(err)), 0);
	assert_int_equal(sm_type_parse("frozen<set<frozen<set<int>>>>", &set_set, err, sizeof(err)),
			 0);

	/* decimals N-1 .. 0 as i.0 (scale 1, unscaled 10 i), then again as i (scale 0) */
	for (i = 0; i < N; i++) {
		uint8_t *a = vals + 16 * i, *b = a + 8;

		put_be32_at(a, 1);
		put_be32_at(a + 4, 10 * (N - 1 - i));
		put_be32_at(b, 0);
		put_be32_at(b + 4, N - 1 - i);
		e[i] = (struct sm_bytes){ a, 8 };
		e[N + i] = (struct sm_bytes){ b, 8 };
	}
	n = sm_coll_build(in, 40 * N, e, 2 * N, false);
	got = sm_value_normalize(set_dec, (struct sm_bytes){ in, (uint32_t)n }, in, n);
	assert_true(got > 0);
	assert_int_equal(sm_coll_iter_init(&it, (struct sm_bytes){ in, (uint32_t)got }), 0);
	for (i = 0; sm_coll_next(&it, &k, NULL, false); i++) {
		assert_int_equal(k.len, 8);
		assert_memory_equal(k.p, vals + 16 * (N - 1 - i), 8); /* i.0: the first written */
	}
	assert_int_equal(i, N);
	assert_false(sm_coll_iter_error(&it));

	/* keys 0 .. N-1 twice in a shuffled order: values 2k, then 2k + 1, which wins */
	for (i = 0; i < 2 * N; i++) {
		unsigned key = (i * 7919u) % N, val = 2 * key + (i >= N);

		put_be32_at(vals + 8 * i, key);
		put_be32_at(vals + 8 * i + 4, val);
		e[2 * i] = (struct sm_bytes){ vals + 8 * i, 4 };
		e[2 * i + 1] = (struct sm_bytes){ vals + 8 * i + 4, 4 };
	}
	n = sm_coll_build(in, 40 * N, e, 2 * N, true);
	got = sm_value_normalize(map_ii, (struct sm_bytes){ in, (uint32_t)n }, buf, 40 * N);
	assert_true(got > 0);
	assert_int_equal(sm_coll_iter_init(&it, (struct sm_bytes){ buf, (uint32_t)got }), 0);
	for (i = 0; sm_coll_next(&it, &k, &v, true); i++) {
		assert_int_equal(k.len, 4);
		assert_int_equal(get_be32_at(k.p), i);
		assert_int_equal(get_be32_at(v.p), 2 * i + 1);
	}
	assert_int_equal(i, N);

	/* sets of canonical {j} sets, N / 2 of them twice: outer == deep */
	for (i = 0; i < N; i++) {
		unsigned j = (N - 1 - i) % (N / 2);
		struct sm_bytes one = { vals + 4 * i, 4 };

		put_be32_at(vals + 4 * i, j);
		e[i] = (struct sm_bytes){
			inner + 12 * i, (uint32_t)sm_coll_build(inner + 12 * i, 12, &one, 1, false)
		};
	}
	n = sm_coll_build(in, 40 * N, e, N, false);
	got = sm_value_normalize(set_set, (struct sm_bytes){ in, (uint32_t)n }, want, 40 * N);
	assert_true(got > 0);
	assert_int_equal(sm_value_normalize_outer(set_set, (struct sm_bytes){ in, (uint32_t)n },
						  buf, 40 * N),
			 got);
	assert_memory_equal(buf, want, (size_t)got);
	assert_int_equal(sm_coll_iter_init(&it, (struct sm_bytes){ buf, (uint32_t)got }), 0);
	assert_int_equal(it.left, N / 2);

	sm_type_free(set_dec);
	sm_type_free(map_ii);
	sm_type_free(set_set);
	free(e);
	free(vals);
	free(in);
	free(buf);
	free(want);
	free(inner);
}

/* ---- tuples and user types ---- */

/* ks.addr (street text, zip int, tags frozen<set<text>>) */
static const struct sm_type *addr;

static const struct sm_type *
find_addr(void *ctx, const char *ks, const char *name)
{
	(void)ctx;
	return strcmp(ks, "ks") == 0 && strcmp(name, "addr") == 0 ? addr : NULL;
}

static const struct sm_type_resolver addr_resolver = { find_addr, NULL, "ks" };

static const struct sm_type *
parse_in(const char *text)
{
	const struct sm_type *t = NULL;
	char err[256] = "";

	if (sm_type_parse_in(text, &addr_resolver, &t, err, sizeof(err)) != 0)
		fail_msg("parse \"%s\": %s", text, err);
	return t;
}

/* Fields of a tuple or user type value; a NULL pointer with len 1 is a null field. */
static struct sm_bytes
tup(const struct sm_bytes *f, unsigned n)
{
	struct sm_bytes v[16];
	size_t len;
	uint8_t *p;
	unsigned i;

	for (i = 0; i < n; i++) {
		v[i] = f[i];
		if (f[i].p == NULL && f[i].len == 1)
			v[i].len = SM_FIELD_NULL;
	}
	len = sm_tuple_build(NULL, 0, v, n);
	p = take(len);
	assert_int_equal(sm_tuple_build(p, len, v, n), len);
	return bytes(p, len);
}

static void
test_tuples_and_user_types(void **state)
{
	const char *names[] = { "street", "zip", "tags" };
	const struct sm_type *fields[3], *t, *u, *v;
	const struct sm_bytes null1 = { NULL, 1 };
	struct sm_bytes f[3], set2[2];
	char name[256], err[256];
	uint8_t norm[256];
	struct ord o = { 0 };
	int64_t before = mem_in_use();
	long n;

	(void)state;
	fields[0] = T(SM_TYPE_TEXT);
	fields[1] = T(SM_TYPE_INT);
	fields[2] = parse("frozen<set<text>>");
	assert_int_equal(sm_type_udt("ks", "addr", names, fields, 3, &addr, err, sizeof(err)), 0);
	assert_false(addr->frozen);
	assert_true(sm_type_is_multicell(addr));
	assert_int_equal(sm_type_cql_id(addr), 0x0030);
	assert_int_equal(sm_type_field_index(addr, "zip"), 1);
	assert_int_equal(sm_type_field_index(addr, "nope"), -1);

	/* names as system_schema prints them; a tuple is always frozen */
	t = parse_in("tuple<int, list<text>>");
	assert_int_equal(t->kind, SM_TYPE_TUPLE);
	assert_int_equal(sm_type_cql_id(t), 0x0031);
	sm_type_name(t, name, sizeof(name));
	assert_string_equal(name, "frozen<tuple<int, frozen<list<text>>>>");
	assert_false(sm_type_is_multicell(t));
	sm_type_free(t);
	u = parse_in("set<frozen<addr>>");
	sm_type_name(u, name, sizeof(name));
	assert_string_equal(name, "set<frozen<addr>>");
	assert_true(sm_type_uses_udt(u, "ks", "addr"));
	assert_false(sm_type_uses_udt(u, "ks", "other"));
	v = sm_type_dup(u);
	assert_true(sm_type_equal(u, v));
	sm_type_free(v);
	sm_type_free(u);
	u = parse_in("ks.addr");
	assert_false(u->frozen);
	sm_type_name(u, name, sizeof(name));
	assert_string_equal(name, "addr");
	sm_type_free(u);

	/* ScyllaDB's refusals */
	assert_int_equal(sm_type_parse_in("list<addr>", &addr_resolver, &t, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "Non-frozen user types or collections are not allowed inside "
				 "collections: list<ks.addr>");
	assert_int_equal(sm_type_parse_in("frozen<other.addr>", &addr_resolver, &t, err,
					  sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "Statement on keyspace ks cannot refer to a user type in keyspace "
				 "other; user types can only be used in the keyspace they are "
				 "defined in");
	assert_int_equal(sm_type_parse_in("frozen<nope>", &addr_resolver, &t, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "Unknown type ks.nope");
	{
		const char *dn[] = { "a", "a" };
		const struct sm_type *df[] = { T(SM_TYPE_INT), T(SM_TYPE_TEXT) };

		assert_int_equal(sm_type_udt("ks", "d", dn, df, 2, &t, err, sizeof(err)), -EINVAL);
		assert_string_equal(err, "Duplicate field name a in type d");
		df[0] = T(SM_TYPE_COUNTER);
		dn[1] = "b";
		assert_int_equal(sm_type_udt("ks", "d", dn, df, 2, &t, err, sizeof(err)), -EINVAL);
		assert_string_equal(err, "A user type cannot contain counters");
	}

	/* values: fields in order, a null is -1, a value may stop early */
	f[0] = bytes("a", 1);
	f[1] = be(7, 4);
	set2[0] = bytes("y", 1);
	set2[1] = bytes("x", 1);
	f[2] = coll(set2, 2, false);
	ok(addr, tup(f, 3));
	ok(addr, tup(f, 1));
	ok(addr, EMPTY);
	f[1] = null1;
	ok(addr, tup(f, 3));
	f[1] = be(7, 2);
	bad(addr, tup(f, 2), "Expected 4 or 0 byte int (2)");
	f[1] = be(7, 4);
	{
		struct sm_bytes four[4] = { f[0], f[1], f[2], f[0] };

		bad(addr, tup(four, 4), "more fields");
	}
	bad(addr, hx("00000004"), "Not enough bytes");

	/* sets inside are sorted by normalisation, whatever the depth */
	n = sm_value_normalize(addr, tup(f, 3), norm, sizeof(norm));
	set2[0] = bytes("x", 1);
	set2[1] = bytes("y", 1);
	f[2] = coll(set2, 2, false);
	assert_int_equal(n, tup(f, 3).len);
	assert_memory_equal(norm, tup(f, 3).p, (size_t)n);
	fmt_is(addr, tup(f, 3), "{street: 'a', zip: 7, tags: {'x', 'y'}}");
	f[1] = null1;
	fmt_is(addr, tup(f, 2), "{street: 'a', zip: null}");

	/* order: field by field, null before a value, a shorter value first */
	o.t = addr;
	lt(&o, EMPTY);
	f[0] = null1;
	lt(&o, tup(f, 1));
	f[0] = bytes("a", 1);
	lt(&o, tup(f, 1));
	f[1] = null1;
	lt(&o, tup(f, 2));
	f[1] = be(1, 4);
	lt(&o, tup(f, 2));
	f[1] = be(2, 4);
	lt(&o, tup(f, 2));
	f[0] = bytes("b", 1);
	lt(&o, tup(f, 1));
	check_order(&o);

	/* ALTER TYPE: every use replaced, frozenness kept */
	{
		const char *n4[] = { "street", "zip", "tags", "extra" };
		const struct sm_type *f4[4], *grown, *col, *rep;

		f4[0] = T(SM_TYPE_TEXT);
		f4[1] = T(SM_TYPE_INT);
		f4[2] = parse("frozen<set<text>>");
		f4[3] = T(SM_TYPE_UUID);
		assert_int_equal(sm_type_udt("ks", "addr", n4, f4, 4, &grown, err, sizeof(err)), 0);
		col = parse_in("map<int, frozen<addr>>");
		rep = sm_type_replace_udt(col, grown);
		assert_ptr_not_equal(rep, col);
		assert_int_equal(rep->val->nfields, 4);
		assert_true(rep->val->frozen);
		sm_type_name(rep, name, sizeof(name));
		assert_string_equal(name, "map<int, frozen<addr>>");
		sm_type_free(rep);
		rep = sm_type_replace_udt(T(SM_TYPE_INT), grown);
		assert_ptr_equal(rep, T(SM_TYPE_INT));
		sm_type_free(col);
		sm_type_free(grown);
	}
	sm_type_free(addr);
	addr = NULL;
	assert_int_equal(mem_in_use(), before);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_parse_names, reset),
		cmocka_unit_test_setup(test_parse_rejects, reset),
		cmocka_unit_test_setup(test_type_helpers, reset),
		cmocka_unit_test_setup(test_cql_ids, reset),
		cmocka_unit_test_setup(test_validate_simple, reset),
		cmocka_unit_test_setup(test_validate_duration, reset),
		cmocka_unit_test_setup(test_validate_collections, reset),
		cmocka_unit_test_setup(test_order_bytes, reset),
		cmocka_unit_test_setup(test_order_fixed_ints, reset),
		cmocka_unit_test_setup(test_order_floats, reset),
		cmocka_unit_test_setup(test_order_varint, reset),
		cmocka_unit_test_setup(test_order_decimal, reset),
		cmocka_unit_test_setup(test_order_uuids, reset),
		cmocka_unit_test_setup(test_order_collections, reset),
		cmocka_unit_test_setup(test_format_simple, reset),
		cmocka_unit_test_setup(test_format_numbers, reset),
		cmocka_unit_test_setup(test_big_numbers, reset),
		cmocka_unit_test_setup(test_format_duration, reset),
		cmocka_unit_test_setup(test_format_collections, reset),
		cmocka_unit_test_setup(test_format_truncation, reset),
		cmocka_unit_test_setup(test_coll_roundtrip, reset),
		cmocka_unit_test_setup(test_coll_malformed, reset),
		cmocka_unit_test_setup(test_duration_codec, reset),
		cmocka_unit_test_setup(test_normalize, reset),
		cmocka_unit_test_setup(test_normalize_large, reset),
		cmocka_unit_test_setup(test_tuples_and_user_types, reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
