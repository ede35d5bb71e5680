/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sm_core.h"
#include "sm_ddb_number.h"
#include "sm_types.h"

#define MSG_NAN "The parameter cannot be converted to a numeric value"
#define MSG_DIGITS "Attempting to store more than 38 significant digits in a Number"
#define MSG_OVERFLOW                                                                               \
	"Number overflow. Attempting to store a number with magnitude larger than supported range"
#define MSG_UNDERFLOW                                                                              \
	"Number underflow. Attempting to store a number with magnitude smaller than supported "    \
	"range"

static int
setup(void **state)
{
	(void)state;
	return sm_mem_thread_init();
}

static int
teardown(void **state)
{
	(void)state;
	sm_mem_thread_fini();
	return 0;
}

static unsigned long long rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t
rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static struct sm_ddb_number
num(const char *s)
{
	struct sm_ddb_number n;
	char err[160];
	int rc = sm_ddb_number_parse(s, strlen(s), &n, err, sizeof(err));

	if (rc != 0)
		fail_msg("'%s' does not parse: %s", s, err);
	return n;
}

/* Field by field: the struct has padding. */
static bool
same(const struct sm_ddb_number *a, const struct sm_ddb_number *b)
{
	return a->coef == b->coef && a->exp == b->exp && a->digits == b->digits && a->neg == b->neg;
}

static const char *
fmt(const struct sm_ddb_number *n, char *buf)
{
	size_t len = sm_ddb_number_format(n, buf, SM_DDB_NUMBER_TEXT_MAX);

	assert_true(len < SM_DDB_NUMBER_TEXT_MAX);
	assert_int_equal(strlen(buf), len);
	return buf;
}

/* "1" followed by @zeros zeros, or with @frac "0." + zeros + "1". */
static const char *
repeat(char *buf, const char *prefix, char c, int count, const char *suffix)
{
	size_t n = strlen(prefix);

	memcpy(buf, prefix, n);
	memset(buf + n, c, (size_t)count);
	strcpy(buf + n + (size_t)count, suffix);
	return buf;
}

static void
expect_canon(const char *in, const char *want)
{
	char buf[SM_DDB_NUMBER_TEXT_MAX];
	struct sm_ddb_number n = num(in);

	if (strcmp(fmt(&n, buf), want) != 0)
		fail_msg("'%s' formats as '%s', wanted '%s'", in, buf, want);
	/* The canonical text parses back to the same number. */
	n = num(buf);
	assert_string_equal(fmt(&n, buf), want);
}

static void
expect_error(const char *in, int rc_want, const char *msg)
{
	struct sm_ddb_number n;
	char err[700];
	int rc = sm_ddb_number_parse(in, strlen(in), &n, err, sizeof(err));

	if (rc != rc_want || strcmp(err, msg) != 0)
		fail_msg("'%s': rc %d '%s', wanted %d '%s'", in, rc, rc == 0 ? "" : err, rc_want,
			 msg);
}

/* ---------------------------------------------------------------------- */

static void
test_canonical(void **state)
{
	char a[200], b[200];

	(void)state;
	/* What DynamoDB accepts (ScyllaDB's test_invalid_numbers, run against DynamoDB). */
	expect_canon("3", "3");
	expect_canon("-7.1234", "-7.1234");
	expect_canon("-17e5", "-1700000");
	expect_canon("-17.4E37", repeat(a, "-174", '0', 36, ""));
	expect_canon("+3", "3");
	expect_canon(".123", "0.123");
	expect_canon("0001.23", "1.23");
	expect_canon("1e+5", "100000");
	expect_canon("0e1000", "0");
	/* Normalisation. */
	expect_canon("1.50", "1.5");
	expect_canon("1e2", "100");
	expect_canon("0.00", "0");
	expect_canon("-0", "0");
	expect_canon("-0.0e-5", "0");
	expect_canon("0e-2147483647", "0");
	expect_canon("5.", "5");
	expect_canon("-.5", "-0.5");
	expect_canon("1E-5", "0.00001");
	expect_canon("0.000100", "0.0001");
	expect_canon("12345.6789000", "12345.6789");
	expect_canon("15e-1", "1.5");
	expect_canon("123.456e2", "12345.6");
	expect_canon("123.456e3", "123456");
	expect_canon("123.456e-3", "0.123456");
	expect_canon("100", "100");
	expect_canon("10.0100", "10.01");
	expect_canon("9223372036854775807", "9223372036854775807");
	expect_canon("18446744073709551616", "18446744073709551616");
	expect_canon("99999999999999999999999999999999999999",
		     "99999999999999999999999999999999999999");
	expect_canon("0.99999999999999999999999999999999999999",
		     "0.99999999999999999999999999999999999999");
	expect_canon("3.1415926535897932384626433832795028841",
		     "3.1415926535897932384626433832795028841");
	/* The extremes, in plain notation. */
	expect_canon("1e125", repeat(a, "1", '0', 125, ""));
	expect_canon("-1e125", repeat(a, "-1", '0', 125, ""));
	expect_canon("1e-130", repeat(a, "0.", '0', 129, "1"));
	expect_canon("-1E-130", repeat(a, "-0.", '0', 129, "1"));
	expect_canon("9.9999999999999999999999999999999999999E+125",
		     repeat(a, "99999999999999999999999999999999999999", '0', 88, ""));
	expect_canon("-9.9999999999999999999999999999999999999e-93",
		     repeat(a, "-0.", '0', 92, "99999999999999999999999999999999999999"));
	/* The longest text fits SM_DDB_NUMBER_TEXT_MAX. */
	repeat(b, "-0.", '0', 129, "12345678901234567890123456789012345678");
	expect_canon("-1.2345678901234567890123456789012345678e-130", b);
	assert_true(strlen(b) < SM_DDB_NUMBER_TEXT_MAX);

	/* snprintf-like: nothing written when it does not fit. */
	{
		struct sm_ddb_number n = num("-12.5");
		char small[5] = "xxxx";

		assert_int_equal(sm_ddb_number_format(&n, small, sizeof(small)), 5);
		assert_string_equal(small, "xxxx");
		assert_int_equal(sm_ddb_number_format(&n, NULL, 0), 5);
	}
}

static void
test_invalid(void **state)
{
	static const char *const bad[] = {
		" 1",
		"1 ",
		"NaN",
		"-NaN",
		"Infinity",
		"-Infinity",
		"dog",
		"-dog",
		".",
		"+",
		"-",
		"e5",
		"1e",
		"1e+",
		"1e-",
		"1.2.3",
		"0x10",
		"1_0",
		"++1",
		"+-1",
		"--1",
		"1e5.5",
		"1,5",
		"1e2e3",
		"1.e",
		".e1",
		"1d",
		"1f",
		"\xef\xbc\x91",
		"1\n",
		"\t1",
		"+.",
		"-.e5",
		"1E+-5",
		"1..2",
		"1e2147483648",
		"0e-2147483649",
		"1e99999999999999999999",
	};
	char msg[200], a[400];
	size_t i;

	(void)state;
	expect_error("", -EINVAL, MSG_NAN);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(msg, sizeof(msg), MSG_NAN ": %s", bad[i]);
		expect_error(bad[i], -EINVAL, msg);
	}
	/* Embedded NUL: the length counts, not the terminator. */
	{
		struct sm_ddb_number n;
		char err[100];

		assert_int_equal(sm_ddb_number_parse("1\0", 2, &n, err, sizeof(err)), -EINVAL);
		assert_int_equal(sm_ddb_number_parse("12", 1, &n, err, sizeof(err)), 0);
		assert_true(n.coef == 1);
		/* A tiny or absent error buffer is fine. */
		assert_int_equal(sm_ddb_number_parse("x", 1, &n, err, 4), -EINVAL);
		assert_string_equal(err, "The");
		assert_int_equal(sm_ddb_number_parse("x", 1, &n, NULL, 0), -EINVAL);
		assert_int_equal(sm_ddb_number_parse("1e126", 5, &n, NULL, 0), -ERANGE);
	}

	/* 38 significant digits, but not 39; zeros at either end do not count. */
	num("12345678901234567890123456789012345678");
	num("-1.2345678901234567890123456789012345678");
	num("314159265358979323846.26433832795028841");
	num("31415926535897932384626433832795028841e30");
	num("0000000012345678901234567890123456789012345678000000000000");
	num("0.0000000012345678901234567890123456789012345678000000000000");
	num("1.0000000000000000000000000000000000000000000000000000000");
	expect_error("123456789012345678901234567890123456789", -ERANGE, MSG_DIGITS);
	expect_error("-1.23456789012345678901234567890123456789", -ERANGE, MSG_DIGITS);
	expect_error("3.14159265358979323846264338327950288419", -ERANGE, MSG_DIGITS);
	expect_error("314159265358979323846.264338327950288419", -ERANGE, MSG_DIGITS);
	expect_error("314159265358979323846264338327950288419e30", -ERANGE, MSG_DIGITS);
	expect_error("1.00000000000000000000000000000000000001", -ERANGE, MSG_DIGITS);
	expect_error(repeat(a, "1", '0', 200, "1"), -ERANGE, MSG_OVERFLOW);

	/* The magnitude: 1e-130 to 9.99..e125 (38 nines). */
	num("1e125");
	num("-1e125");
	num("9.9999999999999999999999999999999999999E+125");
	num("99999999999999999999999999999999999999e88");
	num("1e-130");
	num("-1e-130");
	num("10e-131");
	num("0.1e-129");
	num("1.2345678901234567890123456789012345678e-130");
	num("9.99999999e125");
	num("0e2147483647");
	expect_error("1e126", -ERANGE, MSG_OVERFLOW);
	expect_error("-1e126", -ERANGE, MSG_OVERFLOW);
	expect_error("11e125", -ERANGE, MSG_OVERFLOW);
	expect_error("10e125", -ERANGE, MSG_OVERFLOW);
	expect_error("1e2147483647", -ERANGE, MSG_OVERFLOW);
	expect_error("1e-131", -ERANGE, MSG_UNDERFLOW);
	expect_error("-1e-131", -ERANGE, MSG_UNDERFLOW);
	expect_error("0.9e-130", -ERANGE, MSG_UNDERFLOW);
	expect_error("9.9999999999999999999999999999999999999e-131", -ERANGE, MSG_UNDERFLOW);
	expect_error("1e-2147483647", -ERANGE, MSG_UNDERFLOW);
	/* The range is checked before the digits, as DynamoDB does. */
	expect_error("1.23456789012345678901234567890123456789e200", -ERANGE, MSG_OVERFLOW);
	expect_error("1.23456789012345678901234567890123456789e-200", -ERANGE, MSG_UNDERFLOW);
	expect_error("99999999999999999999999999999999999999.9e89", -ERANGE, MSG_OVERFLOW);
	/* 39 nines: the digits, not a rounding to 1e126. */
	expect_error("9.99999999999999999999999999999999999999E+125", -ERANGE, MSG_DIGITS);
}

/* ---------------------------------------------------------------------- */
/* Compare                                                                 */

/*
 * An independent order on canonical plain-notation strings: sign, then
 * integer digits by length and value, then the fraction padded.
 */
static int
ref_cmp_text(const char *a, const char *b)
{
	bool na = a[0] == '-', nb = b[0] == '-';
	const char *pa = a + na, *pb = b + nb, *da, *db;
	size_t ia, ib, fa, fb, i;
	int sa, sb, c = 0;

	sa = strcmp(pa, "0") == 0 ? 0 : na ? -1 : 1;
	sb = strcmp(pb, "0") == 0 ? 0 : nb ? -1 : 1;
	if (sa != sb)
		return sa < sb ? -1 : 1;
	if (sa == 0)
		return 0;
	da = strchr(pa, '.');
	db = strchr(pb, '.');
	ia = da ? (size_t)(da - pa) : strlen(pa);
	ib = db ? (size_t)(db - pb) : strlen(pb);
	/* "0.x" has integer part "0": shorter than any other. */
	if (ia == 1 && pa[0] == '0')
		ia = 0;
	if (ib == 1 && pb[0] == '0')
		ib = 0;
	if (ia != ib) {
		c = ia < ib ? -1 : 1;
	} else {
		c = strncmp(pa, pb, ia);
		if (c == 0) {
			fa = da ? strlen(da + 1) : 0;
			fb = db ? strlen(db + 1) : 0;
			for (i = 0; c == 0 && i < (fa > fb ? fa : fb); i++) {
				char x = i < fa ? da[1 + i] : '0';
				char y = i < fb ? db[1 + i] : '0';

				c = (x > y) - (x < y);
			}
		}
	}
	c = c < 0 ? -1 : c > 0;
	return sa < 0 ? -c : c;
}

static int
sgn(int c)
{
	return (c > 0) - (c < 0);
}

/* A random valid number: random sign, 1-38 digits, anywhere in the range, sometimes zero. */
static struct sm_ddb_number
random_number(char *text)
{
	char digits[40];
	unsigned nd = 1 + (unsigned)(rnd() % 38), i;
	int adj;

	if (rnd() % 50 == 0) {
		strcpy(text, "0");
		return num(text);
	}
	for (i = 0; i < nd; i++)
		digits[i] = (char)('0' + rnd() % 10);
	digits[0] = (char)('1' + rnd() % 9);
	digits[nd] = '\0';
	switch (rnd() % 3) {
	case 0: /* anywhere */
		adj = -130 + (int)(rnd() % 256);
		break;
	case 1: /* near 1, so pairs often share the leading position */
		adj = -3 + (int)(rnd() % 7);
		break;
	default: /* the edges */
		adj = rnd() % 2 ? 125 - (int)(rnd() % 3) : -130 + (int)(rnd() % 3);
		break;
	}
	sprintf(text, "%s%c.%se%d", rnd() % 2 ? "-" : "", digits[0], digits + 1, adj);
	return num(text);
}

static void
test_compare(void **state)
{
	static const char *const ordered[] = {
		"-9.9999999999999999999999999999999999999e125",
		"-1e125",
		"-100",
		"-99.99",
		"-1.5",
		"-1.25",
		"-1",
		"-0.5",
		"-1e-130",
		"0",
		"1e-130",
		"1.0000000000000000000000000000000000001e-130",
		"2e-130",
		"0.5",
		"0.99999999999999999999999999999999999999",
		"1",
		"1.00000000000000000000000000000000000001e0",
		"1.5",
		"2",
		"10",
		"99999999999999999999999999999999999999",
		"1e38",
		"1.0000000000000000000000000000000000001e38",
		"9.9999999999999999999999999999999999999e125",
	};
	size_t n = sizeof(ordered) / sizeof(ordered[0]), i, j;
	struct sm_ddb_number a, b;

	(void)state;
	for (i = 0; i < n; i++) {
		for (j = 0; j < n; j++) {
			if (strcmp(ordered[i], "1.00000000000000000000000000000000000001e0") == 0 ||
			    strcmp(ordered[j], "1.00000000000000000000000000000000000001e0") == 0)
				continue; /* 39 digits: not a number, skipped */
			a = num(ordered[i]);
			b = num(ordered[j]);
			assert_int_equal(sgn(sm_ddb_number_compare(&a, &b)), (i > j) - (i < j));
		}
	}
	/* Equal values from different texts. */
	a = num("1.50");
	b = num("15e-1");
	assert_int_equal(sm_ddb_number_compare(&a, &b), 0);
	a = num("-0");
	b = num("0.000e99");
	assert_int_equal(sm_ddb_number_compare(&a, &b), 0);
	assert_true(same(&a, &b));
}

static void
test_compare_random(void **state)
{
	char ta[200], tb[200], ca[SM_DDB_NUMBER_TEXT_MAX], cb[SM_DDB_NUMBER_TEXT_MAX];
	struct sm_ddb_number a, b;
	int i;

	(void)state;
	for (i = 0; i < 20000; i++) {
		a = random_number(ta);
		b = i % 4 == 0 ? a : random_number(tb);
		fmt(&a, ca);
		fmt(&b, cb);
		if (sgn(sm_ddb_number_compare(&a, &b)) != ref_cmp_text(ca, cb))
			fail_msg("compare(%s, %s) = %d", ca, cb, sm_ddb_number_compare(&a, &b));
		assert_int_equal(sgn(sm_ddb_number_compare(&b, &a)), -ref_cmp_text(ca, cb));
	}
}

/* ---------------------------------------------------------------------- */
/* Arithmetic                                                              */

static void
expect_sum(const char *x, char op, const char *y, const char *want)
{
	struct sm_ddb_number a = num(x), b = num(y), r;
	char err[160], buf[SM_DDB_NUMBER_TEXT_MAX];
	int rc;

	rc = op == '+' ? sm_ddb_number_add(&a, &b, &r, err, sizeof(err))
		       : sm_ddb_number_sub(&a, &b, &r, err, sizeof(err));
	if (rc != 0)
		fail_msg("%s %c %s: %s", x, op, y, err);
	if (strcmp(fmt(&r, buf), want) != 0)
		fail_msg("%s %c %s = %s, wanted %s", x, op, y, buf, want);
	/* The result is normalised: it equals its own canonical parse. */
	{
		struct sm_ddb_number c = num(buf);

		assert_true(same(&c, &r));
	}
}

static void
expect_sum_error(const char *x, char op, const char *y, const char *msg)
{
	struct sm_ddb_number a = num(x), b = num(y), r;
	char err[160];
	int rc;

	rc = op == '+' ? sm_ddb_number_add(&a, &b, &r, err, sizeof(err))
		       : sm_ddb_number_sub(&a, &b, &r, err, sizeof(err));
	if (rc != -ERANGE || strcmp(err, msg) != 0)
		fail_msg("%s %c %s: rc %d '%s', wanted '%s'", x, op, y, rc, rc ? err : "", msg);
}

static void
test_add_sub(void **state)
{
	char a[200];

	(void)state;
	/* ScyllaDB's test_update_expression_plus_precision (checked against DynamoDB). */
	expect_sum("1", '+', "10000000000000000000000", "10000000000000000000001");
	expect_sum("10000000000000000000000", '-', "1", "9999999999999999999999");
	/* Carries and borrows across positions. */
	expect_sum("0.999", '+', "0.001", "1");
	expect_sum("99999999999999999999999999999999999999", '+', "1",
		   "100000000000000000000000000000000000000");
	expect_sum("-99999999999999999999999999999999999999", '-', "1",
		   "-100000000000000000000000000000000000000");
	expect_sum("100000000000000000000000000000000000000", '-', "1",
		   "99999999999999999999999999999999999999");
	expect_sum("1e37", '+', "1", "10000000000000000000000000000000000001");
	expect_sum("1.5", '+', "2.25", "3.75");
	expect_sum("0.1", '+', "0.2", "0.3");
	expect_sum("123.456", '-', "0.456", "123");
	/* Sign changes. */
	expect_sum("-5", '+', "3", "-2");
	expect_sum("3", '-', "5", "-2");
	expect_sum("3", '+', "-5", "-2");
	expect_sum("-3", '-', "-5", "2");
	expect_sum("-3", '+', "-5", "-8");
	expect_sum("1.5", '-', "1.5", "0");
	expect_sum("-1.5", '+', "1.5", "0");
	expect_sum("1e-130", '-', "1e-130", "0");
	expect_sum("0.001", '-', "1", "-0.999");
	expect_sum("1", '-', "0.001", "0.999");
	/* Zero on either side. */
	expect_sum("0", '+', "-7.5", "-7.5");
	expect_sum("0", '-', "-7.5", "7.5");
	expect_sum("0", '-', "7.5", "-7.5");
	expect_sum("7.5", '-', "0", "7.5");
	expect_sum("-7.5", '+', "0", "-7.5");
	expect_sum("0", '-', "0", "0");
	/* Wide exponent gaps that still fit 38 digits. */
	expect_sum("1e37", '+', "1e-0", "10000000000000000000000000000000000001");
	expect_sum("1e20", '+', "1e-17", "100000000000000000000.00000000000000001");
	expect_sum("1e-130", '+', "1e-130", repeat(a, "0.", '0', 129, "2"));
	expect_sum("9.9999999999999999999999999999999999998e125", '+', "1e88",
		   repeat(a, "99999999999999999999999999999999999999", '0', 88, ""));

	/* Out of range. */
	expect_sum_error("9e125", '+', "9e125", MSG_OVERFLOW);
	expect_sum_error("9e125", '-', "-9e125", MSG_OVERFLOW);
	expect_sum_error("-9e125", '-', "9e125", MSG_OVERFLOW);
	expect_sum_error("9.9999999999999999999999999999999999999e125", '+', "1e88", MSG_OVERFLOW);
	expect_sum_error("1.1e-130", '-', "1e-130", MSG_UNDERFLOW);
	expect_sum_error("-1.1e-130", '+', "1e-130", MSG_UNDERFLOW);
	/* More than 38 digits: DynamoDB answers with its overflow message, and so do we. */
	expect_sum_error("1e50", '-', "1", MSG_OVERFLOW);
	expect_sum_error("1e50", '+', "1", MSG_OVERFLOW);
	expect_sum_error("1e38", '+', "1", MSG_OVERFLOW);
	expect_sum_error("99999999999999999999999999999999999999", '+', "2", MSG_OVERFLOW);
	expect_sum_error("12345678901234567890123456789012345678", '+', "0.1", MSG_OVERFLOW);
	expect_sum_error("1e125", '+', "1e-130", MSG_OVERFLOW);
	expect_sum_error("1e125", '-', "1e-130", MSG_OVERFLOW);
	expect_sum_error("-1e-130", '+', "1e125", MSG_OVERFLOW);
	expect_sum_error("99999999999999999999999999999999999999", '+',
			 "99999999999999999999999999999999999999", MSG_OVERFLOW);

	/* Operands may alias the result. */
	{
		struct sm_ddb_number x = num("2.5"), y = num("-0.5");
		char err[160], buf[SM_DDB_NUMBER_TEXT_MAX];

		assert_int_equal(sm_ddb_number_add(&x, &y, &x, err, sizeof(err)), 0);
		assert_string_equal(fmt(&x, buf), "2");
		assert_int_equal(sm_ddb_number_sub(&x, &x, &x, err, sizeof(err)), 0);
		assert_string_equal(fmt(&x, buf), "0");
		assert_true(sm_ddb_number_is_zero(&x));
	}
}

/* Random sums checked against plain __int128 arithmetic on a fixed scale of 10^-8. */
static void
test_add_random(void **state)
{
	__extension__ typedef __int128 i128;
	char ta[80], tb[80], err[160];
	struct sm_ddb_number a, b, r;
	int i, k;

	(void)state;
	for (i = 0; i < 50000; i++) {
		i128 va, vb, vr, got;
		int ea = -8 + (int)(rnd() % 17), eb = -8 + (int)(rnd() % 17);
		int64_t ca = (int64_t)(rnd() % 1000000000000ull),
			cb = (int64_t)(rnd() % 1000000ull);

		if (rnd() % 2)
			ca = -ca;
		if (rnd() % 2)
			cb = -cb;
		if (i % 7 == 0) /* cancellation */
			cb = -ca, eb = ea;
		snprintf(ta, sizeof(ta), "%llde%d", (long long)ca, ea);
		snprintf(tb, sizeof(tb), "%llde%d", (long long)cb, eb);
		a = num(ta);
		b = num(tb);
		va = ca;
		for (k = -8; k < ea; k++)
			va *= 10;
		vb = cb;
		for (k = -8; k < eb; k++)
			vb *= 10;
		vr = i % 2 ? va + vb : va - vb;
		assert_int_equal(i % 2 ? sm_ddb_number_add(&a, &b, &r, err, sizeof(err))
				       : sm_ddb_number_sub(&a, &b, &r, err, sizeof(err)),
				 0);
		got = (i128)r.coef;
		assert_true(r.exp >= -8);
		for (k = -8; k < r.exp; k++)
			got *= 10;
		if (r.neg)
			got = -got;
		assert_true(got == vr);
	}
}

static void
test_from_i64(void **state)
{
	char buf[SM_DDB_NUMBER_TEXT_MAX];
	struct sm_ddb_number n;

	(void)state;
	sm_ddb_number_from_i64(0, &n);
	assert_string_equal(fmt(&n, buf), "0");
	assert_true(sm_ddb_number_is_zero(&n));
	sm_ddb_number_from_i64(INT64_MIN, &n);
	assert_string_equal(fmt(&n, buf), "-9223372036854775808");
	sm_ddb_number_from_i64(INT64_MAX, &n);
	assert_string_equal(fmt(&n, buf), "9223372036854775807");
	sm_ddb_number_from_i64(-1000, &n);
	assert_true(n.coef == 1 && n.exp == 3 && n.neg && n.digits == 1);
	{
		struct sm_ddb_number p = num("-1e3");

		assert_true(same(&p, &n));
	}
}

/* ---------------------------------------------------------------------- */
/* CQL decimal                                                             */

static void
expect_decimal(const char *text, const char *hex)
{
	struct sm_ddb_number n = num(text), back;
	uint8_t buf[SM_DDB_NUMBER_DECIMAL_MAX], want[64];
	size_t len, wl = 0;
	unsigned v;
	char err[160];

	for (const char *p = hex; *p != '\0';) {
		if (*p == ' ') {
			p++;
			continue;
		}
		assert_int_equal(sscanf(p, "%2x", &v), 1);
		want[wl++] = (uint8_t)v;
		p += 2;
	}
	len = sm_ddb_number_to_decimal(&n, buf, sizeof(buf));
	assert_int_equal(len, wl);
	assert_memory_equal(buf, want, wl);
	assert_int_equal(sm_value_validate(sm_type_simple(SM_TYPE_DECIMAL),
					   (struct sm_bytes){ buf, (uint32_t)len }, err,
					   sizeof(err)),
			 0);
	assert_int_equal(sm_ddb_number_from_decimal((struct sm_bytes){ buf, (uint32_t)len }, &back,
						    err, sizeof(err)),
			 0);
	assert_true(same(&back, &n));
}

static void
test_decimal(void **state)
{
	uint8_t buf[64];
	struct sm_ddb_number n;
	char err[160], txt[SM_DDB_NUMBER_TEXT_MAX];

	(void)state;
	expect_decimal("0", "00000000 00");
	expect_decimal("-0.000", "00000000 00");
	expect_decimal("1", "00000000 01");
	expect_decimal("-1", "00000000 ff");
	expect_decimal("127", "00000000 7f");
	expect_decimal("128", "00000000 0080");
	expect_decimal("-128", "00000000 80");
	expect_decimal("-129", "00000000 ff7f");
	expect_decimal("255", "00000000 00ff");
	expect_decimal("256", "00000000 0100");
	expect_decimal("1.5", "00000001 0f");
	expect_decimal("1.50", "00000001 0f");
	expect_decimal("-1.5", "00000001 f1");
	expect_decimal("100", "fffffffe 01");
	expect_decimal("1e125", "ffffff83 01");
	expect_decimal("-1e-130", "00000082 ff");
	expect_decimal("123456789", "00000000 075bcd15");
	/* 38 nines: 10^38 - 1 < 2^127, so 16 bytes. */
	expect_decimal("99999999999999999999999999999999999999",
		       "00000000 4b3b4ca85a86c47a098a223fffffffff");
	expect_decimal("-99999999999999999999999999999999999999",
		       "00000000 b4c4b357a5793b85f675ddc000000001");
	expect_decimal("9.9999999999999999999999999999999999999e125",
		       "ffffffa8 4b3b4ca85a86c47a098a223fffffffff");
	expect_decimal("1.2345678901234567890123456789012345678e-130",
		       "000000a7 0949b0f6f0023313c4499050de38f34e");
	assert_int_equal(sm_ddb_number_to_decimal(&(struct sm_ddb_number){ 0 }, NULL, 0), 5);

	/* Reading decimals in any form: other scales, padding, trailing zeros. */
	static const struct {
		const char *bytes;
		uint32_t len;
		const char *text;
	} forms[] = {
		{ "\x00\x00\x00\x02\x00\x96", 6, "1.5" },	 /* 150e-2 */
		{ "\x00\x00\x00\x00\x00\x00\x0f", 7, "15" },	 /* padded */
		{ "\xff\xff\xff\xff\xff\xff\x80", 7, "-1280" },	 /* padded negative */
		{ "\xff\xff\xff\xff\x00", 5, "0" },		 /* zero, other scale */
		{ "\x00\x00\x00\x05\x00\x00\x00\x00", 8, "0" },	 /* padded zero */
		{ "\x80\x00\x00\x00\x00", 5, "0" },		 /* zero, int32 min scale */
		{ "\x00\x00\x00\x03\xff\xff\xfc\x18", 8, "-1" }, /* -1000e-3 */
		{ "\x00\x00\x00\x00\xff\x00", 6, "-256" },
		{ "\x00\x00\x00\x00\x80\x00", 6, "-32768" },
	};
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		assert_int_equal(
			sm_ddb_number_from_decimal(
				(struct sm_bytes){ (const uint8_t *)forms[i].bytes, forms[i].len },
				&n, err, sizeof(err)),
			0);
		assert_string_equal(fmt(&n, txt), forms[i].text);
	}
	/* 10^45 with scale 45 is 1 (19 bytes of unscaled value, 45 trailing zeros). */
	{
		static const uint8_t p45[] = { 0x00, 0x00, 0x00, 0x2d, 0x2c, 0xd7, 0x6f, 0xe0,
					       0x86, 0xb9, 0x3c, 0xe2, 0xf7, 0x68, 0xa0, 0x0b,
					       0x22, 0xa0, 0x00, 0x00, 0x00, 0x00, 0x00 };
		static const uint8_t m45[] = { 0x00, 0x00, 0x00, 0x2d, 0xd3, 0x28, 0x90, 0x1f,
					       0x79, 0x46, 0xc3, 0x1d, 0x08, 0x97, 0x5f, 0xf4,
					       0xdd, 0x60, 0x00, 0x00, 0x00, 0x00, 0x00 };
		uint8_t p45p1[sizeof(p45)];

		assert_int_equal(sm_ddb_number_from_decimal((struct sm_bytes){ p45, sizeof(p45) },
							    &n, err, sizeof(err)),
				 0);
		assert_string_equal(fmt(&n, txt), "1");
		assert_int_equal(sm_ddb_number_from_decimal((struct sm_bytes){ m45, sizeof(m45) },
							    &n, err, sizeof(err)),
				 0);
		assert_string_equal(fmt(&n, txt), "-1");
		/* 10^45 + 1: 46 significant digits. */
		memcpy(p45p1, p45, sizeof(p45));
		p45p1[sizeof(p45) - 1] = 1;
		assert_int_equal(
			sm_ddb_number_from_decimal((struct sm_bytes){ p45p1, sizeof(p45p1) }, &n,
						   err, sizeof(err)),
			-ERANGE);
		assert_string_equal(err, MSG_DIGITS);
	}
	/* Not DynamoDB numbers. */
	memcpy(buf, "\xff\xff\xff\x82\x01", 5); /* 1e126 */
	assert_int_equal(
		sm_ddb_number_from_decimal((struct sm_bytes){ buf, 5 }, &n, err, sizeof(err)),
		-ERANGE);
	assert_string_equal(err, MSG_OVERFLOW);
	memcpy(buf, "\x00\x00\x00\x83\x01", 5); /* 1e-131 */
	assert_int_equal(
		sm_ddb_number_from_decimal((struct sm_bytes){ buf, 5 }, &n, err, sizeof(err)),
		-ERANGE);
	assert_string_equal(err, MSG_UNDERFLOW);
	memcpy(buf, "\x7f\xff\xff\xff\x01", 5);
	assert_int_equal(
		sm_ddb_number_from_decimal((struct sm_bytes){ buf, 5 }, &n, err, sizeof(err)),
		-ERANGE);
	assert_string_equal(err, MSG_UNDERFLOW);
	memcpy(buf, "\x80\x00\x00\x00\x01", 5);
	assert_int_equal(
		sm_ddb_number_from_decimal((struct sm_bytes){ buf, 5 }, &n, err, sizeof(err)),
		-ERANGE);
	assert_string_equal(err, MSG_OVERFLOW);
	/* 2^127 - 1 (39 digits). */
	memcpy(buf,
	       "\x00\x00\x00\x00\x7f\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"
	       "\xff\xff",
	       20);
	assert_int_equal(
		sm_ddb_number_from_decimal((struct sm_bytes){ buf, 20 }, &n, err, sizeof(err)),
		-ERANGE);
	assert_string_equal(err, MSG_DIGITS);
	/* -2^127. */
	memcpy(buf,
	       "\x00\x00\x00\x00\x80\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
	       "\x00\x00",
	       20);
	assert_int_equal(
		sm_ddb_number_from_decimal((struct sm_bytes){ buf, 20 }, &n, err, sizeof(err)),
		-ERANGE);
	/* Malformed. */
	assert_int_equal(
		sm_ddb_number_from_decimal((struct sm_bytes){ buf, 4 }, &n, err, sizeof(err)),
		-EINVAL);
	assert_int_equal(
		sm_ddb_number_from_decimal((struct sm_bytes){ NULL, 0 }, &n, err, sizeof(err)),
		-EINVAL);
	/* A huge unscaled value. */
	{
		uint8_t *big = calloc(1, 4 + 300);

		big[4] = 0x01;
		assert_int_equal(sm_ddb_number_from_decimal((struct sm_bytes){ big, 304 }, &n, err,
							    sizeof(err)),
				 -ERANGE);
		free(big);
	}
}

/* sm_value_compare() on the serialized decimals orders as the numbers do. */
static void
test_decimal_order(void **state)
{
	const struct sm_type *dec = sm_type_simple(SM_TYPE_DECIMAL);
	uint8_t da[SM_DDB_NUMBER_DECIMAL_MAX], db[SM_DDB_NUMBER_DECIMAL_MAX];
	char ta[200], tb[200], err[160];
	struct sm_ddb_number a, b, back;
	size_t la, lb;
	int i, c;

	(void)state;
	for (i = 0; i < 20000; i++) {
		a = random_number(ta);
		b = i % 5 == 0 ? a : random_number(tb);
		la = sm_ddb_number_to_decimal(&a, da, sizeof(da));
		lb = sm_ddb_number_to_decimal(&b, db, sizeof(db));
		assert_true(la <= SM_DDB_NUMBER_DECIMAL_MAX && lb <= SM_DDB_NUMBER_DECIMAL_MAX);
		c = sm_value_compare(dec, (struct sm_bytes){ da, (uint32_t)la },
				     (struct sm_bytes){ db, (uint32_t)lb });
		if (sgn(c) != sgn(sm_ddb_number_compare(&a, &b)))
			fail_msg("decimal order of %s and %s: %d", ta, tb, c);
		/* Equal numbers serialize to equal bytes (hashing a key needs that). */
		if (sm_ddb_number_compare(&a, &b) == 0)
			assert_true(la == lb && memcmp(da, db, la) == 0);
		assert_int_equal(sm_value_validate(dec, (struct sm_bytes){ da, (uint32_t)la }, err,
						   sizeof(err)),
				 0);
		assert_int_equal(sm_ddb_number_from_decimal((struct sm_bytes){ da, (uint32_t)la },
							    &back, err, sizeof(err)),
				 0);
		assert_true(same(&back, &a));
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_canonical),     cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_compare),	      cmocka_unit_test(test_compare_random),
		cmocka_unit_test(test_add_sub),	      cmocka_unit_test(test_add_random),
		cmocka_unit_test(test_from_i64),      cmocka_unit_test(test_decimal),
		cmocka_unit_test(test_decimal_order),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
