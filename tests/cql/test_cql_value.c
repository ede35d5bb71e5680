/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sm_cql_value: real statements through sm_cql_parse(), their terms
 * converted for each receiver type, the bytes compared with serializations
 * worked out by hand (or, for the long varints, by Python's int.to_bytes).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "sm_core.h"
#include "sm_cql_proto.h"

#include "sm_cql_parse.h"
#include "sm_cql_value.h"
#include "sm_mem.h"
#include "sm_types.h"
#include "sm_uuid.h"

static struct sm_uuid_gen gen;
static struct sm_cql_value_ctx ctx;
static struct sm_cql_buf out;
static struct sm_cql_value_span span;
static char err[512];
static char hex[4096];

static const char *
tohex(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n && 2 * i + 2 < sizeof(hex); i++)
		snprintf(hex + 2 * i, 3, "%02x", p[i]);
	hex[2 * i] = '\0';
	return hex;
}

/* ks.ut (a int, b text), the one user type the types below may name */
static const struct sm_type *test_ut;

static const struct sm_type *
find_ut(void *ctx, const char *ks, const char *name)
{
	(void)ctx;
	if (test_ut == NULL) {
		const char *names[] = { "a", "b" };
		const struct sm_type *fields[] = { sm_type_simple(SM_TYPE_INT),
						   sm_type_simple(SM_TYPE_TEXT) };

		assert_int_equal(sm_type_udt("ks", "ut", names, fields, 2, &test_ut, err,
					     sizeof(err)),
				 0);
	}
	return strcmp(ks, "ks") == 0 && strcmp(name, "ut") == 0 ? test_ut : NULL;
}

static const struct sm_type_resolver resolver = { find_ut, NULL, "ks" };

/* Convert the term of INSERT INTO t (c) VALUES (@lit) to @type; the value is at out.p + span.off. */
static int
convert(const char *lit, const char *type)
{
	const struct sm_type *t;
	struct sm_cql_stmt *s = NULL;
	char text[1024];
	int n, rc;

	n = snprintf(text, sizeof(text), "INSERT INTO t (c) VALUES (%s)", lit);
	assert_true(n > 0 && (size_t)n < sizeof(text));
	rc = sm_cql_parse(text, (size_t)n, &s, err, sizeof(err));
	if (rc != 0)
		fail_msg("parse of <%s> failed: %d %s", text, rc, err);
	rc = sm_type_parse_in(type, &resolver, &t, err, sizeof(err));
	if (rc != 0)
		fail_msg("type <%s>: %s", type, err);
	sm_cql_buf_reset(&out);
	rc = sm_cql_term_to_value(s->insert.values[0], t, "c", &ctx, &out, &span, err, sizeof(err));
	sm_type_free(t);
	sm_cql_stmt_free(s);
	return rc;
}

static void
expect(const char *lit, const char *type, const char *want)
{
	int rc = convert(lit, type);

	if (rc != 0)
		fail_msg("<%s> as %s: rc %d: %s", lit, type, rc, err);
	if (span.state != SM_CQL_CONV_VALUE)
		fail_msg("<%s> as %s: state %d", lit, type, span.state);
	if (strcmp(tohex(out.p + span.off, span.len), want) != 0)
		fail_msg("<%s> as %s: got %s want %s", lit, type, hex, want);
}

static void
expect_i64(const char *lit, const char *type, int64_t want)
{
	uint64_t v = 0;
	uint32_t i;
	int rc = convert(lit, type);

	if (rc != 0)
		fail_msg("<%s> as %s: rc %d: %s", lit, type, rc, err);
	assert_int_equal(span.len, 8);
	for (i = 0; i < 8; i++)
		v = v << 8 | out.p[span.off + i];
	if ((int64_t)v != want)
		fail_msg("<%s> as %s: got %lld want %lld", lit, type, (long long)v,
			 (long long)want);
}

/* @msg: the exact message, or a substring when it starts with '~', or NULL. */
static void
expect_err(const char *lit, const char *type, int want_rc, const char *msg)
{
	int rc = convert(lit, type);

	if (rc != want_rc)
		fail_msg("<%s> as %s: rc %d (%s) want %d", lit, type, rc, err, want_rc);
	assert_int_equal(out.len, 0);
	if (msg == NULL)
		return;
	if (msg[0] == '~' ? strstr(err, msg + 1) == NULL : strcmp(err, msg) != 0)
		fail_msg("<%s> as %s: message '%s' want '%s'", lit, type, err, msg);
}

static void
test_integers(void **state)
{
	(void)state;
	expect("127", "tinyint", "7f");
	expect("-128", "tinyint", "80");
	expect_err("128", "tinyint", -EINVAL, "Unable to make byte from '128'");
	expect_err("-129", "tinyint", -EINVAL, "Unable to make byte from '-129'");
	expect("32767", "smallint", "7fff");
	expect("-32768", "smallint", "8000");
	expect_err("32768", "smallint", -EINVAL, "Unable to make short from '32768'");
	expect_err("-32769", "smallint", -EINVAL, NULL);
	expect("2147483647", "int", "7fffffff");
	expect("-2147483648", "int", "80000000");
	expect("007", "int", "00000007");
	expect("-1", "int", "ffffffff");
	expect_err("2147483648", "int", -EINVAL, "Unable to make int from '2147483648'");
	expect_err("-2147483649", "int", -EINVAL, NULL);
	expect("9223372036854775807", "bigint", "7fffffffffffffff");
	expect("-9223372036854775808", "bigint", "8000000000000000");
	expect_err("9223372036854775808", "bigint", -EINVAL,
		   "Unable to make long from '9223372036854775808'");
	expect_err("-9223372036854775809", "bigint", -EINVAL, NULL);
	expect_err("99999999999999999999999", "bigint", -EINVAL, NULL);
	expect("1", "counter", "0000000000000001");
	expect("-5", "counter", "fffffffffffffffb");
	/* to the floating and decimal types */
	expect("1", "float", "3f800000");
	expect("1", "double", "3ff0000000000000");
	expect("-42", "decimal", "00000000d6");
	expect("0", "decimal", "0000000000");
	/* integers are not strings, blobs or booleans (one of the exact messages) */
	expect_err("1", "text", -EINVAL, "Invalid INTEGER constant (1) for \"c\" of type text");
	expect_err("1", "blob", -EINVAL, NULL);
	expect_err("1", "boolean", -EINVAL, NULL);
	expect_err("1", "uuid", -EINVAL, NULL);
	expect_err("1", "duration", -EINVAL, NULL);
	expect_err("1", "list<int>", -EINVAL,
		   "Invalid INTEGER constant (1) for \"c\" of type list<int>");
}

static const struct {
	const char *digits, *pos, *neg;
} varints[] = {
	{ "9", "09", "f7" },
	{ "98", "62", "9e" },
	{ "987", "03db", "fc25" },
	{ "9876", "2694", "d96c" },
	{ "98765", "0181cd", "fe7e33" },
	{ "987654", "0f1206", "f0edfa" },
	{ "9876543", "0096b43f", "ff694bc1" },
	{ "98765432", "05e30a78", "fa1cf588" },
	{ "987654321", "3ade68b1", "c521974f" },
	{ "9876543210", "024cb016ea", "fdb34fe916" },
	{ "98765432109", "16fee0e52d", "e9011f1ad3" },
	{ "987654321098", "00e5f4c8f3ca", "ff1a0b370c36" },
	{ "9876543210987", "08fb8fd985eb", "f70470267a15" },
	{ "98765432109876", "59d39e7f3b34", "a62c6180c4cc" },
	{ "987654321098765", "03824430f8500d", "fc7dbbcf07aff3" },
	{ "9876543210987654", "2316a9e9b32086", "dce956164cdf7a" },
	{ "98765432109876543", "015ee2a320ff453f", "fea11d5cdf00bac1" },
	{ "987654321098765432", "0db4da5f49f8b478", "f24b25a0b6074b88" },
	{ "9876543210987654321", "00891087b8e3b70cb1", "ff76ef78471c48f34f" },
	{ "98765432109876543210", "055aa54d38e5267eea", "faa55ab2c71ad98116" },
	{ "987654321098765432109", "358a750438f380f52d", "ca758afbc70c7f0ad3" },
	{ "9876543210987654321098", "021768922a39830993ca", "fde8976dd5c67cf66c36" },
	{ "98765432109876543210987", "14ea15b5a63f1e5fc5eb", "eb15ea4a59c0e1a03a15" },
	{ "987654321098765432109876", "00d124d9187e772fbdbb34", "ff2edb26e78188d04244cc" },
	{ "9876543210987654321098765", "082b707af4f0a7dd69500d", "f7d48f850b0f582296aff3" },
	{ "98765432109876543210987654", "51b264cd91668ea61d2086", "ae4d9b326e997159e2df7a" },
	{ "987654321098765432109876543", "0330f7f007ae01927d23453f", "fccf080ff851fe6d82dcbac1" },
	{ "9876543210987654321098765432", "1fe9af604ccc0fb8e360b478", "e016509fb333f0471c9f4b88" },
	{ "98765432109876543210987654321", "013f20d9c2fff89d38e1c70cb1",
	  "fec0df263d000762c71e38f34f" },
	{ "987654321098765432109876543210", "0c7748819dffb62438d1c67eea",
	  "f388b77e620049dbc72e398116" },
	{ "9876543210987654321098765432109", "7ca8d5102bfd1d6a3831c0f52d",
	  "83572aefd402e295c7ce3f0ad3" },
	{ "98765432109876543210987654321098", "04de9852a1b7e3262631f18993ca",
	  "fb2167ad5e481cd9d9ce0e766c36" },
	{ "987654321098765432109876543210987", "30b1f33a512edf7d7df36f5fc5eb",
	  "cf4e0cc5aed12082820c90a03a15" },
	{ "9876543210987654321098765432109876", "01e6f380472bd4bae6eb8259bdbb34",
	  "fe190c7fb8d42b4519147da64244cc" },
	{ "98765432109876543210987654321098765", "13058302c7b64f4d0533178169500d",
	  "ecfa7cfd3849b0b2facce87e96aff3" },
	{ "987654321098765432109876543210987654", "00be371e1bcd1f190233feeb0e1d2086",
	  "ff41c8e1e432e0e6fdcc0114f1e2df7a" },
	{ "9876543210987654321098765432109876543", "076e272d160336fa1607f52e8d23453f",
	  "f891d8d2e9fcc905e9f80ad172dcbac1" },
	{ "98765432109876543210987654321098765432", "4a4d87c2dc2025c4dc4f93d18360b478",
	  "b5b2783d23dfda3b23b06c2e7c9f4b88" },
	{ "987654321098765432109876543210987654321", "02e7074d9c994179b09b1bc62f21c70cb1",
	  "fd18f8b26366be864f64e439d0de38f34f" },
	{ "9876543210987654321098765432109876543210", "1d0649081dfc8ec0e60f15bdd751c67eea",
	  "e2f9b6f7e203713f19f0ea4228ae398116" },
	{ "0", "00", "00" },
	{ "127", "7f", "81" },
	{ "128", "0080", "80" },
	{ "255", "00ff", "ff01" },
	{ "256", "0100", "ff00" },
	{ "32767", "7fff", "8001" },
	{ "32768", "008000", "8000" },
	{ "9223372036854775807", "7fffffffffffffff", "8000000000000001" },
	{ "9223372036854775808", "008000000000000000", "8000000000000000" },
	{ "18446744073709551616", "010000000000000000", "ff0000000000000000" },
};

static void
test_varint(void **state)
{
	char lit[64];
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(varints) / sizeof(varints[0]); i++) {
		expect(varints[i].digits, "varint", varints[i].pos);
		snprintf(lit, sizeof(lit), "-%s", varints[i].digits);
		expect(lit, "varint", varints[i].neg);
	}
	expect("-0", "varint", "00");
	expect("0000000000000000000000000000000000000000001", "varint", "01");
	expect("-00128", "varint", "80");
}

static void
test_decimal(void **state)
{
	(void)state;
	expect("1.50", "decimal", "000000020096");
	expect("1e3", "decimal", "fffffffd01");
	expect("1E+3", "decimal", "fffffffd01");
	expect("-0.001", "decimal", "00000003ff");
	expect("0.00", "decimal", "0000000200");
	expect("1.5e-2", "decimal", "000000030f");
	expect("-12345678901234567890.5", "decimal", "00000001f94eb1607ed0c993c7");
	expect_err("NaN", "decimal", -EINVAL, "Unable to make BigDecimal from 'NaN'");
	expect_err("Infinity", "decimal", -EINVAL, NULL);
	expect_err("1e9999999999", "decimal", -EINVAL, NULL);
	expect_err("1.5", "int", -EINVAL, "Invalid FLOAT constant (1.5) for \"c\" of type int");
}

static void
test_floats(void **state)
{
	(void)state;
	expect("1.5", "float", "3fc00000");
	expect("1.5", "double", "3ff8000000000000");
	expect("0.1", "float", "3dcccccd");
	expect("0.1", "double", "3fb999999999999a");
	expect("1e300", "double", "7e37e43c8800759c");
	expect("-2.5e-3", "double", "bf647ae147ae147b");
	expect("3.4028235e38", "float", "7f7fffff");
	expect("1e300", "float", "7f800000"); /* Java rounds to Infinity */
	expect("NaN", "float", "7fc00000");
	expect("NaN", "double", "7ff8000000000000");
	expect("-NaN", "double", "7ff8000000000000");
	expect("Infinity", "float", "7f800000");
	expect("-Infinity", "float", "ff800000");
	expect("infinity", "double", "7ff0000000000000");
	expect("-Infinity", "double", "fff0000000000000");
	expect("1.", "double", "3ff0000000000000");
}

static void
test_strings(void **state)
{
	(void)state;
	expect("'abc'", "ascii", "616263");
	expect("'it''s'", "text", "69742773");
	expect("$$a'b$$", "text", "612762");
	expect("'h\xc3\xa9llo'", "text", "68c3a96c6c6f");
	expect("'\xf0\x9f\x98\x80'", "text", "f09f9880");
	expect("''", "text", "");
	expect("''", "ascii", "");
	expect_err("'h\xc3\xa9llo'", "ascii", -EINVAL, "Invalid ASCII character in string literal");
	expect_err("'a\xff'", "text", -EINVAL, "Invalid UTF-8 in string literal");
	expect_err("'\xed\xa0\x80'", "text", -EINVAL, NULL); /* a surrogate */
	expect_err("'\xc0\xaf'", "text", -EINVAL, NULL);     /* overlong */
	expect_err("'abc'", "int", -EINVAL, "Invalid STRING constant (abc) for \"c\" of type int");
	expect_err("'cafe'", "blob", -EINVAL, NULL);
	expect_err("'true'", "boolean", -EINVAL, NULL);
}

static void
test_inet(void **state)
{
	(void)state;
	expect("'1.2.3.4'", "inet", "01020304");
	expect("'255.255.255.255'", "inet", "ffffffff");
	expect("'::1'", "inet", "00000000000000000000000000000001");
	expect("'2001:db8::ff00:42:8329'", "inet", "20010db8000000000000ff0000428329");
	expect("'::ffff:1.2.3.4'", "inet", "01020304");
	expect("''", "inet", "");
	expect_err("'1.2.3.256'", "inet", -EINVAL, "Unable to make inet address from '1.2.3.256'");
	expect_err("'abc'", "inet", -EINVAL, NULL);
	expect_err("':::1'", "inet", -EINVAL, NULL);
}

static void
test_timestamp(void **state)
{
	(void)state;
	/* 2024-01-02 is day 19724: 19724 * 86400000 + 3:04:05 = 1704164645000 */
	expect_i64("'2024-01-02 03:04:05.006'", "timestamp", 1704164645006);
	expect("'2024-01-02 03:04:05.006Z'", "timestamp", "0000018cc820d88e");
	expect_i64("'2024-01-02T03:04:05.006Z'", "timestamp", 1704164645006);
	expect_i64("'2024-01-02 03:04:05.006000+0000'", "timestamp", 1704164645006);
	expect_i64("'2024-01-02 03:04:05.0069'", "timestamp", 1704164645006);
	expect_i64("'2024-01-02 03:04:05.5'", "timestamp", 1704164645500);
	expect_i64("'2024-01-02 03:04:05'", "timestamp", 1704164645000);
	expect_i64("'2024-01-02 03:04'", "timestamp", 1704164640000);
	expect_i64("'2024-01-02T03:04'", "timestamp", 1704164640000);
	expect_i64("'2024-01-02'", "timestamp", 1704153600000);
	expect_i64("'2024-01-02Z'", "timestamp", 1704153600000);
	expect_i64("'2024-01-02 05:04:05+02:00'", "timestamp", 1704164645000);
	expect_i64("'2024-01-02 05:04:05+0200'", "timestamp", 1704164645000);
	expect_i64("'2024-01-02 05:04:05+02'", "timestamp", 1704164645000);
	expect_i64("'2024-01-02 01:34:05-01:30'", "timestamp", 1704164645000);
	expect_i64("'2024-01-02 03:04+0000'", "timestamp", 1704164640000);
	expect_i64("'2024-01-02 03:04:05 UTC'", "timestamp", 1704164645000);
	expect_i64("'2024-01-02 03:04:05 GMT'", "timestamp", 1704164645000);
	expect_i64("'2024-01-02 05:04:05 GMT+02:00'", "timestamp", 1704164645000);
	expect_i64("'2024-01-02 03:04:05 +0000'", "timestamp", 1704164645000);
	expect_i64("'2024-01-02 03:04:05UT'", "timestamp", 1704164645000);
	expect_err("'2024-01-02 03:04:05 Mars/Olympus'", "timestamp", -EINVAL, NULL);
	expect_i64("'1970-01-01'", "timestamp", 0);
	expect_i64("'1969-12-31 23:59:59.999'", "timestamp", -1);
	expect_i64("'1900-03-01 00:00:00'", "timestamp", -2203891200000);
	expect_i64("'2000-02-29 12:00'", "timestamp", 951825600000);
	expect_i64("'1704164645006'", "timestamp", 1704164645006);
	expect_i64("1704164645006", "timestamp", 1704164645006);
	expect_i64("-1", "timestamp", -1);
	expect("''", "timestamp", "");
	expect_err("'2023-02-29'", "timestamp", -EINVAL,
		   "Unable to coerce '2023-02-29' to a formatted date (long)");
	expect_err("'2024-01-02 24:00'", "timestamp", -EINVAL, NULL);
	expect_err("'2024-01-02 23:60'", "timestamp", -EINVAL, NULL);
	expect_err("'2024-01-02 03:04:05.'", "timestamp", -EINVAL, NULL);
	expect_err("'2024-01-02 03:04:05+19:00'", "timestamp", -EINVAL, NULL);
	expect_err("'2024-1-02'", "timestamp", -EINVAL, NULL);
	expect_err("'2024-01-02 '", "timestamp", -EINVAL, NULL);
	expect_err("'yesterday'", "timestamp", -EINVAL, NULL);
	expect_err("99999999999999999999", "timestamp", -EINVAL,
		   "Unable to make long (for date) from: '99999999999999999999'");
	expect_err("1.5", "timestamp", -EINVAL, NULL);
}

static void
test_date(void **state)
{
	(void)state;
	expect("'1970-01-01'", "date", "80000000");
	expect("'1970-01-02'", "date", "80000001");
	expect("'1969-12-31'", "date", "7fffffff");
	expect("'1968-12-31'", "date", "7ffffe92"); /* -366 days: 1968 is a leap year */
	expect("'2024-01-02'", "date", "80004d0c");
	expect("'-5877641-06-23'", "date", "00000000");
	expect("'5881580-07-11'", "date", "ffffffff");
	expect("0", "date", "00000000");
	expect("2147483648", "date", "80000000");
	expect("4294967295", "date", "ffffffff");
	expect("'2147483648'", "date", "80000000");
	expect_err("4294967296", "date", -EINVAL,
		   "Unable to make unsigned int (for date) from: '4294967296'");
	expect_err("-1", "date", -EINVAL, NULL);
	expect_err("'5881580-07-12'", "date", -EINVAL, NULL);
	expect_err("'2024-13-01'", "date", -EINVAL,
		   "Unable to coerce '2024-13-01' to a formatted date (long)");
	expect_err("'2024-01-02 00:00'", "date", -EINVAL, NULL);
}

static void
test_time(void **state)
{
	(void)state;
	expect_i64("'00:00:00'", "time", 0);
	expect_i64("'01:02:03'", "time", 3723000000000);
	expect_i64("'01:02:03.000000004'", "time", 3723000000004);
	expect_i64("'01:02:03.5'", "time", 3723500000000);
	expect_i64("'23:59:59.999999999'", "time", 86399999999999);
	expect_i64("'1:2:3'", "time", 3723000000000);
	expect_i64("86399999999999", "time", 86399999999999);
	expect("1", "time", "0000000000000001");
	expect_err("86400000000000", "time", -EINVAL,
		   "Unable to make long (for time) from: '86400000000000'");
	expect_err("-1", "time", -EINVAL, NULL);
	expect_err("'24:00:00'", "time", -EINVAL,
		   "(TimeType) Unable to coerce '24:00:00' to a formatted time (long)");
	expect_err("'00:60:00'", "time", -EINVAL, NULL);
	expect_err("'00:00:60'", "time", -EINVAL, NULL);
	expect_err("'00:00:00.1234567890'", "time", -EINVAL, NULL);
	expect_err("'00:00'", "time", -EINVAL, NULL);
	expect_err("'00:00:00.'", "time", -EINVAL, NULL);
}

static void
test_duration(void **state)
{
	uint8_t b[19];
	size_t n;

	(void)state;
	expect("1d", "duration", "000200");
	expect("1mo", "duration", "020000");
	expect("-1d", "duration", "000100");
	/* 10 ms: zigzag 20000000 = 0x1312d00, a vint of 3 extra bytes */
	expect("10ms", "duration", "0000e1312d00");
	n = sm_duration_build(b, sizeof(b), 14, 3, 5400000000000LL);
	expect("1y2mo3d1h30m", "duration", tohex(b, n));
	expect("P1Y2M3DT1H30M", "duration", tohex(b, n));
	n = sm_duration_build(b, sizeof(b), 0, 14, 0);
	expect("P2W", "duration", tohex(b, n));
	expect_err("1h", "int", -EINVAL, "Invalid DURATION constant (1h) for \"c\" of type int");
	expect_err("'1h'", "duration", -EINVAL, NULL);
}

static void
test_blob_bool_uuid(void **state)
{
	(void)state;
	expect("0xcafe", "blob", "cafe");
	expect("0xCAFE", "blob", "cafe");
	expect("0x", "blob", "");
	expect_err("0xabc", "blob", -EINVAL, "cannot parse 'abc' as hex bytes");
	expect_err("0xcafe", "text", -EINVAL,
		   "Invalid HEX constant (0xcafe) for \"c\" of type text");
	expect_err("0x00000001", "int", -EINVAL, NULL);
	expect("true", "boolean", "01");
	expect("false", "boolean", "00");
	expect("TRUE", "boolean", "01");
	expect_err("true", "int", -EINVAL, NULL);
	expect("01234567-89ab-4def-8123-456789abcdef", "uuid", "0123456789ab4def8123456789abcdef");
	expect("01234567-89AB-1DEF-8123-456789ABCDEF", "timeuuid",
	       "0123456789ab1def8123456789abcdef");
	expect("01234567-89ab-1def-8123-456789abcdef", "uuid", "0123456789ab1def8123456789abcdef");
	expect_err("01234567-89ab-4def-8123-456789abcdef", "timeuuid", -EINVAL,
		   "TimeUUID supports only version 1 UUIDs");
	expect_err("01234567-89ab-4def-8123-456789abcdef", "text", -EINVAL, NULL);
	expect_err("'01234567-89ab-4def-8123-456789abcdef'", "uuid", -EINVAL, NULL);
}

/* Tuples and user types: fields in order, (int32 length, bytes) each, -1 for null. */
static void
test_tuples_and_user_types(void **state)
{
	(void)state;
	expect("(1, 'a')", "tuple<int, text>", "000000040000000100000001" "61");
	expect("(1, null)", "tuple<int, text>", "0000000400000001ffffffff");
	expect("(1)", "tuple<int, text>", "0000000400000001");
	expect("(1, (2, 'x'))", "tuple<int, tuple<int, text>>",
	       "0000000400000001" "0000000d" "0000000400000002" "0000000178");
	expect("'1:x\\:y'", "tuple<int, text>", "0000000400000001" "00000003" "783a79");
	expect("'@:x'", "tuple<int, text>", "ffffffff" "0000000178");
	expect_err("'1:2:3'", "tuple<int, text>", -EINVAL,
		   "Invalid tuple literal: too many elements. Type frozen<tuple<int, text>> "
		   "expects 2 but got 3");
	expect_err("(1, 2, 3)", "tuple<int, int>", -EINVAL,
		   "Invalid tuple literal for c: too many elements. Type frozen<tuple<int, int>> "
		   "expects 2 but got 3");
	expect_err("('a', 1)", "tuple<int, int>", -EINVAL,
		   "Invalid tuple literal for c: component 0 is not of type int");
	expect_err("(1, (1, 2, 3))", "tuple<int, tuple<int, int>>", -EINVAL,
		   "Invalid tuple literal for c: component 1 is not of type frozen<tuple<int, int>>");
	expect("{b: 'x', a: 1}", "frozen<ut>", "0000000400000001" "0000000178");
	expect("{b: 'x'}", "ut", "ffffffff" "0000000178");
	expect_err("{}", "ut", -EINVAL, "Invalid set literal for c of type ut");
	expect("[{a: 2}]", "list<frozen<ks.ut>>", "00000001" "0000000c" "0000000400000002ffffffff");
	expect_err("{a: 1, z: 2}", "ut", -EINVAL, "Unknown field 'z' in value of user defined type ut");
	expect_err("{a: 'x'}", "ut", -EINVAL,
		   "Invalid user type literal for c: field a is not of type int");
	expect_err("{a: 1}", "int", -EINVAL, "Invalid user type literal for c of type int");
	expect_err("{a: {b: 1}}", "ut", -EINVAL, "Invalid user type literal for c.a of type int");
}

static void
test_collections(void **state)
{
	(void)state;
	expect("[1, 2]", "list<int>",
	       "00000002"
	       "0000000400000001"
	       "0000000400000002");
	expect("[2, 1, 2]", "list<tinyint>",
	       "00000003"
	       "0000000102"
	       "0000000101"
	       "0000000102");
	expect("[]", "list<int>", "00000000");
	/* sets come out sorted and without duplicates */
	expect("{3, 1, 2, 1}", "set<int>",
	       "00000003"
	       "0000000400000001"
	       "0000000400000002"
	       "0000000400000003");
	expect("{'b', 'a'}", "frozen<set<text>>",
	       "00000002"
	       "0000000161"
	       "0000000162");
	expect("{}", "set<int>", "00000000");
	expect("{}", "map<int, int>", "00000000");
	/* maps sorted by key, the last of a duplicated key kept */
	expect("{'b': 1, 'a': 2, 'b': 3}", "map<text, int>",
	       "00000002"
	       "000000016100000004"
	       "00000002"
	       "000000016200000004"
	       "00000003");
	/* nested frozen collections are normalised too */
	expect("[{2, 1}]", "list<frozen<set<int>>>",
	       "00000001"
	       "00000014"
	       "00000002"
	       "0000000400000001"
	       "0000000400000002");
	expect("{1: {'z': [1], 'a': []}}", "map<int, frozen<map<text, list<int>>>>",
	       "00000001"
	       "0000000400000001"
	       "00000026"
	       "00000002"
	       "0000000161"
	       "0000000400000000"
	       "000000017a"
	       "0000000c000000010000000400000001");
	expect("{{2}, {1}}", "set<frozen<set<int>>>",
	       "00000002"
	       "0000000c000000010000000400000001"
	       "0000000c000000010000000400000002");
	expect("['2024-01-02', '1970-01-01']", "list<date>",
	       "00000002"
	       "0000000480004d0c"
	       "0000000480000000");
	expect_err("[1, null]", "list<int>", -EINVAL, "null is not supported inside collections");
	expect_err("{null}", "set<int>", -EINVAL, "null is not supported inside collections");
	expect_err("{1: null}", "map<int, int>", -EINVAL, NULL);
	expect_err("[1]", "set<int>", -EINVAL, "Invalid list literal for c of type set<int>");
	expect_err("{1}", "map<int, int>", -EINVAL,
		   "Invalid set literal for c of type map<int, int>");
	expect_err("{1: 2}", "list<int>", -EINVAL, "Invalid map literal for c of type list<int>");
	expect_err("[1]", "int", -EINVAL, "Invalid list literal for c of type int");
	expect_err("['a']", "list<int>", -EINVAL,
		   "Invalid STRING constant (a) for \"value(c)\" of type int");
	expect_err("{'a': 1}", "map<int, int>", -EINVAL,
		   "Invalid STRING constant (a) for \"key(c)\" of type int");
	expect_err("[[300]]", "list<frozen<list<tinyint>>>", -EINVAL,
		   "Unable to make byte from '300'");
	/* nested receivers are named as Cassandra names them */
	expect_err("{1: [{'a': [1, 'x']}]}", "map<int, frozen<list<frozen<map<text, list<int>>>>>>",
		   -EINVAL,
		   "Invalid STRING constant (x) for \"value(value(value(value(c))))\" of type int");
	expect_err("{1: {[1]: 2}}", "map<int, frozen<map<frozen<list<text>>, int>>>", -EINVAL,
		   "Invalid INTEGER constant (1) for \"value(key(value(c)))\" of type text");
	expect_err("(1, 2)", "int", -EINVAL, "Invalid tuple type literal for c of type int");
	/* a null literal is no value */
	assert_int_equal(convert("null", "int"), 0);
	assert_int_equal(span.state, SM_CQL_CONV_NULL);
	assert_int_equal(span.len, 0);
	assert_int_equal(out.len, 0);
	assert_int_equal(convert("null", "list<int>"), 0);
	assert_int_equal(span.state, SM_CQL_CONV_NULL);
}

static void
test_functions(void **state)
{
	struct sm_uuid u, v;
	uint64_t ms = 0;
	unsigned i;

	(void)state;
	expect_i64("blobAsBigint(0x0000000000000007)", "bigint", 7);
	expect("blobAsInt(0x00000001)", "int", "00000001");
	expect("intAsBlob(1)", "blob", "00000001");
	expect("blobAsInt(intAsBlob(-2))", "int", "fffffffe");
	expect("textAsBlob('hi')", "blob", "6869");
	expect("varcharAsBlob('hi')", "blob", "6869");
	expect("blobAsText(0x6869)", "text", "6869");
	expect("blobAsBoolean(0x01)", "boolean", "01");
	assert_int_equal(convert("blobAsInt(null)", "int"), 0);
	assert_int_equal(span.state, SM_CQL_CONV_NULL);
	expect_err("blobAsInt(0x0001)", "int", -EINVAL,
		   "In call to function system.blobasint, value 0x0001 is not a valid binary "
		   "representation for type int");
	expect_err("blobAsText(0xff)", "text", -EINVAL, NULL);
	expect_err("intAsBlob('a')", "blob", -EINVAL,
		   "Invalid STRING constant (a) for \"arg0(system.intasblob)\" of type int");
	expect_err("blobAsInt(0x00000001)", "text", -EINVAL,
		   "Type error: cannot assign result of function system.blobasint (type int) to c "
		   "(type text)");
	expect_err("blobAsInt()", "int", -EINVAL, "~Invalid number of arguments");
	expect_err("nosuchfn(1)", "int", -ENOTSUP, "~not supported by shardmark");
	/* the token of an int key, as ScyllaDB's token(1234) (test_cast.py) */
	expect_i64("token(1234)", "bigint", 8821045555241575141LL);
	expect_err("token(1)", "int", -EINVAL, "~Type error");
	expect_err("sum(1)", "int", -EINVAL, "~Aggregation functions are not supported");
	expect("mintimeuuid('1970-01-01 00:00:00+0000')", "timeuuid",
	       "13814000" "1dd2" "11b2" "8080808080808080");
	expect("maxtimeuuid(0)", "timeuuid", "1381670f" "1dd2" "11b2" "7f7f7f7f7f7f7f7f");
	expect_i64("unixtimestampof(13814000-1dd2-11b2-8080-808080808080)", "bigint", 0);
	expect("todate((timestamp)86400000)", "date", "80000001");

	/* now(): version 1, strictly increasing, also into a uuid */
	/* now(): version 1 and strictly increasing, also into a uuid */
	expect_err("now()", "int", -EINVAL,
		   "Type error: cannot assign result of function system.now (type timeuuid) to c "
		   "(type int)");
	assert_int_equal(convert("now()", "timeuuid"), 0);
	assert_int_equal(span.len, 16);
	memcpy(u.b, out.p + span.off, 16);
	assert_int_equal(sm_uuid_version(&u), 1);
	assert_int_equal(convert("now()", "uuid"), 0);
	assert_int_equal(span.len, 16);
	memcpy(v.b, out.p + span.off, 16);
	assert_true(sm_timeuuid_cmp(&u, &v) < 0);
	assert_int_equal(convert("currentTimeUUID()", "timeuuid"), 0);
	assert_int_equal(span.len, 16);
	assert_int_equal(convert("uuid()", "uuid"), 0);
	assert_int_equal(span.len, 16);
	memcpy(u.b, out.p + span.off, 16);
	assert_int_equal(sm_uuid_version(&u), 4);
	expect_err("uuid()", "timeuuid", -EINVAL, "~Type error");
	/* toTimestamp(now()): the generator's time, within a day of the clock */
	assert_int_equal(convert("toTimestamp(now())", "timestamp"), 0);
	assert_int_equal(span.len, 8);
	for (i = 0; i < 8; i++)
		ms = ms << 8 | out.p[span.off + i];
	assert_true(llabs((long long)ms / 1000 - (long long)time(NULL)) < 86400);
	assert_int_equal(convert("toDate(now())", "date"), 0);
	assert_int_equal(span.len, 4);
	assert_int_equal(convert("toUnixTimestamp(now())", "bigint"), 0);
	assert_int_equal(span.len, 8);
	expect_i64("toTimestamp(01234567-89ab-1def-8123-456789abcdef)", "timestamp",
		   /* 0xdef89ab01234567 ticks since 1582 */
		   (long long)((0xdef89ab01234567ULL - SM_UUID_UNIX_EPOCH_TICKS) / 10000));
	expect_i64("toTimestamp('2024-01-02')", "timestamp", 1704153600000);
	expect_i64("toTimestamp(19724)", "timestamp",
		   19724LL - 2147483648LL < 0 ? (19724LL - 2147483648LL) * 86400000 : 0);
	expect_i64("toUnixTimestamp(toTimestamp('2024-01-02'))", "bigint", 1704153600000);
	expect("toDate(toTimestamp('2024-01-02'))", "date", "80004d0c");
	expect_err("toUnixTimestamp('2024-01-02')", "bigint", -EINVAL, "~Ambiguous call");
	expect_err("toTimestamp(true)", "timestamp", -EINVAL, "~none of its type signatures");
	expect_err("now()", "int", -EINVAL, NULL);

	/* the current time, fixed by the context: 2024-01-02 03:04:05.006 */
	ctx.now_micros = 1704164645006000LL;
	expect_i64("currentTimestamp()", "timestamp", 1704164645006);
	expect("currentDate()", "date", "80004d0c");
	expect_i64("currentTime()", "time", 11045006000000LL);
	expect_i64("currentTimestamp()", "bigint", 1704164645006);
	ctx.now_micros = 0;
	/* without a generator now() cannot work */
	ctx.uuid_gen = NULL;
	expect_err("now()", "timeuuid", -EINVAL, NULL);
	ctx.uuid_gen = &gen;
}

static void
test_binds(void **state)
{
	static const uint8_t one[4] = { 0, 0, 0, 1 }, bad[3] = { 0, 0, 1 };
	static const uint8_t set21[] = {
		0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 1
	};
	struct sm_cql_value vals[3] = {
		{ .v = { one, 4 }, .state = SM_CQL_VALUE_SET },
		{ .state = SM_CQL_VALUE_NULL },
		{ .state = SM_CQL_VALUE_UNSET },
	};

	(void)state;
	/* no bound values: the executor takes over */
	expect_err("?", "int", -EAGAIN, NULL);
	expect_err("[1, ?]", "list<int>", -EAGAIN, NULL);
	expect_err(":name", "int", -EAGAIN, NULL);
	ctx.binds = vals;
	ctx.nbinds = 3;
	expect("?", "int", "00000001");
	expect("[2, ?]", "list<int>",
	       "00000002"
	       "0000000400000002"
	       "0000000400000001");
	vals[0] = (struct sm_cql_value){ .v = { set21, sizeof(set21) }, .state = SM_CQL_VALUE_SET };
	expect("?", "frozen<set<int>>",
	       "00000002"
	       "0000000400000001"
	       "0000000400000002");
	vals[0] = (struct sm_cql_value){ .v = { bad, 3 }, .state = SM_CQL_VALUE_SET };
	expect_err("?", "int", -EINVAL, "~int");
	vals[0] = vals[1];
	assert_int_equal(convert("?", "int"), 0);
	assert_int_equal(span.state, SM_CQL_CONV_NULL);
	expect_err("[?]", "list<int>", -EINVAL, "null is not supported inside collections");
	vals[0] = vals[2];
	assert_int_equal(convert("?", "int"), 0);
	assert_int_equal(span.state, SM_CQL_CONV_UNSET);
	expect_err("[?]", "list<int>", -EINVAL, NULL);
	ctx.binds = NULL;
	ctx.nbinds = 0;
}

static void
test_from_text(void **state)
{
	static const char invalid[] = "\xff";
	const struct sm_type *t;

	(void)state;
	sm_cql_buf_reset(&out);
	assert_int_equal(sm_cql_value_from_text(sm_type_simple(SM_TYPE_INT), "42", 2, &out, &span,
						err, sizeof(err)),
			 0);
	assert_string_equal(tohex(out.p + span.off, span.len), "0000002a");
	assert_int_equal(sm_cql_value_from_text(sm_type_simple(SM_TYPE_BOOLEAN), "TRUE", 4, &out,
						&span, err, sizeof(err)),
			 0);
	assert_string_equal(tohex(out.p + span.off, span.len), "01");
	assert_int_equal(span.off, 4); /* appended after the int */
	assert_int_equal(sm_cql_value_from_text(sm_type_simple(SM_TYPE_BLOB), "cafe", 4, &out,
						&span, err, sizeof(err)),
			 0);
	assert_string_equal(tohex(out.p + span.off, span.len), "cafe");
	assert_int_equal(sm_cql_value_from_text(sm_type_simple(SM_TYPE_DECIMAL), "1.50", 4, &out,
						&span, err, sizeof(err)),
			 0);
	assert_string_equal(tohex(out.p + span.off, span.len), "000000020096");
	assert_int_equal(sm_cql_value_from_text(sm_type_simple(SM_TYPE_INT), "", 0, &out, &span,
						err, sizeof(err)),
			 0);
	assert_int_equal(span.len, 0);
	/* a failure leaves the buffer as it was */
	assert_int_equal(out.len, 13);
	assert_int_equal(sm_cql_value_from_text(sm_type_simple(SM_TYPE_TEXT), invalid, 1, &out,
						&span, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(sm_cql_value_from_text(sm_type_simple(SM_TYPE_COUNTER), "", 0, &out, &span,
						err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(out.len, 13);
	assert_int_equal(sm_type_parse("list<int>", &t, err, sizeof(err)), 0);
	assert_int_equal(sm_cql_value_from_text(t, "[1]", 3, &out, &span, err, sizeof(err)),
			 -ENOTSUP);
	sm_type_free(t);
}

static int
setup(void **state)
{
	(void)state;
	if (sm_mem_thread_init() != 0)
		return -1;
	sm_uuid_gen_init(&gen, 0);
	ctx.uuid_gen = &gen;
	sm_cql_buf_init(&out);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	sm_cql_buf_release(&out);
	sm_type_free(test_ut);
	return 0;
}

/* Convert INSERT INTO t (c) VALUES (@text) to @type, for literals too long for convert(). */
static void
convert_long(const char *text, const char *type)
{
	const struct sm_type *t;
	struct sm_cql_stmt *s = NULL;
	int rc;

	rc = sm_cql_parse(text, strlen(text), &s, err, sizeof(err));
	if (rc != 0)
		fail_msg("parse failed: %d %s", rc, err);
	assert_int_equal(sm_type_parse(type, &t, err, sizeof(err)), 0);
	sm_cql_buf_reset(&out);
	rc = sm_cql_term_to_value(s->insert.values[0], t, "c", &ctx, &out, &span, err, sizeof(err));
	if (rc != 0)
		fail_msg("conversion failed: %d %s", rc, err);
	sm_type_free(t);
	sm_cql_stmt_free(s);
}

static uint32_t
be32_at(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Set and map literals of thousands of elements, every one written twice. */
static void
test_large_collections(void **state)
{
	enum { N = 20000 };
	size_t cap = 32 * N + 64, n;
	char *text = malloc(cap);
	const uint8_t *p;
	unsigned i, k;

	(void)state;
	assert_non_null(text);
	n = (size_t)snprintf(text, cap, "INSERT INTO t (c) VALUES ({");
	for (i = 0; i < 2 * N; i++)
		n += (size_t)snprintf(text + n, cap - n, "%s%u", i ? ", " : "", (i * 7919u) % N);
	snprintf(text + n, cap - n, "})");
	convert_long(text, "set<int>");
	p = out.p + span.off;
	assert_int_equal(be32_at(p), N);
	for (i = 0; i < N; i++) {
		assert_int_equal(be32_at(p + 4 + 8 * i), 4);
		assert_int_equal(be32_at(p + 8 + 8 * i), i);
	}

	/* the last value of a repeated key is kept */
	n = (size_t)snprintf(text, cap, "INSERT INTO t (c) VALUES ({");
	for (i = 0; i < 2 * N; i++) {
		k = (i * 7919u) % N;
		n += (size_t)snprintf(text + n, cap - n, "%s%u: %u", i ? ", " : "", k,
				      2 * k + (i >= N));
	}
	snprintf(text + n, cap - n, "})");
	convert_long(text, "map<int, int>");
	p = out.p + span.off;
	assert_int_equal(be32_at(p), N);
	for (i = 0; i < N; i++) {
		assert_int_equal(be32_at(p + 8 + 16 * i), i);
		assert_int_equal(be32_at(p + 16 + 16 * i), 2 * i + 1);
	}
	free(text);
}

/* Varint and decimal literals: up to SM_CQL_MAX_NUMBER_DIGITS significant digits. */
static void
test_long_numbers(void **state)
{
	size_t cap = 200000, n, i;
	char *text = malloc(cap);
	const struct sm_type *t;
	struct sm_cql_stmt *s;
	int rc;

	(void)state;
	assert_non_null(text);
	/* 10^9999: 10,000 digits, 4,153 bytes (33,217 bits and a sign bit) */
	n = (size_t)snprintf(text, cap, "INSERT INTO t (c) VALUES (1");
	for (i = 1; i < SM_CQL_MAX_NUMBER_DIGITS; i++)
		text[n++] = '0';
	snprintf(text + n, cap - n, ")");
	convert_long(text, "varint");
	assert_int_equal(span.len, 4153);
	/* leading zeros do not count */
	n = (size_t)snprintf(text, cap, "INSERT INTO t (c) VALUES (-");
	for (i = 0; i < 100000; i++)
		text[n++] = '0';
	snprintf(text + n, cap - n, "12345)");
	convert_long(text, "varint");
	assert_string_equal(tohex(out.p + span.off, span.len), "cfc7");
	/* one digit more is refused, for a decimal too */
	for (i = 0; i < 2; i++) {
		n = (size_t)snprintf(text, cap, "INSERT INTO t (c) VALUES (%s", i ? "0.9" : "9");
		while (n < 26 + SM_CQL_MAX_NUMBER_DIGITS + 1 + 2 * i)
			text[n++] = '9';
		snprintf(text + n, cap - n, ")");
		assert_int_equal(sm_cql_parse(text, strlen(text), &s, err, sizeof(err)), 0);
		assert_int_equal(sm_type_parse(i ? "decimal" : "varint", &t, err, sizeof(err)), 0);
		sm_cql_buf_reset(&out);
		rc = sm_cql_term_to_value(s->insert.values[0], t, "c", &ctx, &out, &span, err,
					  sizeof(err));
		assert_int_equal(rc, -EINVAL);
		assert_non_null(strstr(err, "of 10001 digits: shardmark converts at most 10000"));
		sm_type_free(t);
		sm_cql_stmt_free(s);
	}
	free(text);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_integers),       cmocka_unit_test(test_varint),
		cmocka_unit_test(test_decimal),	       cmocka_unit_test(test_floats),
		cmocka_unit_test(test_strings),	       cmocka_unit_test(test_inet),
		cmocka_unit_test(test_timestamp),      cmocka_unit_test(test_date),
		cmocka_unit_test(test_time),	       cmocka_unit_test(test_duration),
		cmocka_unit_test(test_blob_bool_uuid), cmocka_unit_test(test_collections),
		cmocka_unit_test(test_tuples_and_user_types),
		cmocka_unit_test(test_functions),      cmocka_unit_test(test_binds),
		cmocka_unit_test(test_from_text),      cmocka_unit_test(test_large_collections),
		cmocka_unit_test(test_long_numbers),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
