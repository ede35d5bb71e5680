/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sm_ddb_number.h"

/*
 * Hand-written rather than on a decimal library: 38 digits fit one unsigned
 * __int128 (10^38 < 2^127), so parse, compare, add and the CQL decimal
 * conversion are a few lines of fixed-size arithmetic with no allocation,
 * and the limits DynamoDB enforces are exactly where the representation
 * ends. libmpdec (Python's decimal) would need contexts, allocation and a
 * second conversion to the store's varint.
 */

#define MSG_NAN "The parameter cannot be converted to a numeric value"
#define MSG_DIGITS "Attempting to store more than 38 significant digits in a Number"
#define MSG_OVERFLOW                                                                               \
	"Number overflow. Attempting to store a number with magnitude larger than supported range"
#define MSG_UNDERFLOW                                                                              \
	"Number underflow. Attempting to store a number with magnitude smaller than supported "    \
	"range"

#define U128_MAX (~(sm_ddb_u128)0)

static const uint64_t pow10_64[20] = {
	1ull,
	10ull,
	100ull,
	1000ull,
	10000ull,
	100000ull,
	1000000ull,
	10000000ull,
	100000000ull,
	1000000000ull,
	10000000000ull,
	100000000000ull,
	1000000000000ull,
	10000000000000ull,
	100000000000000ull,
	1000000000000000ull,
	10000000000000000ull,
	100000000000000000ull,
	1000000000000000000ull,
	10000000000000000000ull,
};

/* 10^k for k <= 38. */
static inline sm_ddb_u128
pow10_128(unsigned k)
{
	if (k < 20)
		return pow10_64[k];
	return (sm_ddb_u128)pow10_64[19] * pow10_64[k - 19];
}

/* Decimal digits of @v (0 for 0), up to 39. */
static unsigned
count_digits(sm_ddb_u128 v)
{
	unsigned d = 0;

	if (v == 0)
		return 0;
	if (v >> 64 == 0) {
		uint64_t w = (uint64_t)v;

		for (d = 1; d < 20 && w >= pow10_64[d]; d++)
			;
		return d;
	}
	for (d = 20; d < 39 && v >= pow10_128(d); d++)
		;
	return d;
}

/* Remove trailing zeros from *@v, adding them to *@exp. */
static void
strip_zeros(sm_ddb_u128 *v, int64_t *exp)
{
	if (*v == 0)
		return;
	while (*v >> 64 != 0 && *v % 10 == 0) {
		*v /= 10;
		(*exp)++;
	}
	if (*v >> 64 == 0) {
		uint64_t w = (uint64_t)*v;

		while (w % 10 == 0) {
			w /= 10;
			(*exp)++;
		}
		*v = w;
	}
}

static int
set_err(char *err, size_t errlen, int rc, const char *msg)
{
	if (errlen > 0)
		snprintf(err, errlen, "%s", msg);
	return rc;
}

/*
 * Finish a number from a stripped coefficient and exponent: the range (as
 * DynamoDB orders the checks: overflow, underflow, then digits) and the
 * representation.
 */
static int
finish(sm_ddb_u128 coef, int64_t exp, bool neg, struct sm_ddb_number *out, char *err, size_t errlen,
       const char *digits_msg)
{
	unsigned nd = count_digits(coef);
	int64_t adj;

	if (nd == 0) {
		memset(out, 0, sizeof(*out));
		return 0;
	}
	adj = exp + (int64_t)nd - 1;
	if (adj > SM_DDB_NUMBER_MAX_ADJ_EXP)
		return set_err(err, errlen, -ERANGE, MSG_OVERFLOW);
	if (adj < SM_DDB_NUMBER_MIN_ADJ_EXP)
		return set_err(err, errlen, -ERANGE, MSG_UNDERFLOW);
	if (nd > SM_DDB_NUMBER_DIGITS)
		return set_err(err, errlen, -ERANGE, digits_msg);
	out->coef = coef;
	out->exp = (int32_t)exp;
	out->digits = (uint8_t)nd;
	out->neg = neg;
	return 0;
}

static inline bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

int
sm_ddb_number_parse(const char *s, size_t n, struct sm_ddb_number *out, char *err, size_t errlen)
{
	size_t i = 0, first_nz = 0, last_nz = 0, k;
	int64_t nd = 0, nfrac = 0, first_ord = -1, last_ord = -1, e = 0, exp;
	bool neg = false, dot = false, eneg = false;
	sm_ddb_u128 coef = 0;

	if (n == 0)
		return set_err(err, errlen, -EINVAL, MSG_NAN);
	if (s[i] == '+' || s[i] == '-')
		neg = s[i++] == '-';
	for (; i < n; i++) {
		if (is_digit(s[i])) {
			if (s[i] != '0') {
				if (first_ord < 0) {
					first_ord = nd;
					first_nz = i;
				}
				last_ord = nd;
				last_nz = i;
			}
			nd++;
			if (dot)
				nfrac++;
		} else if (s[i] == '.' && !dot) {
			dot = true;
		} else {
			break;
		}
	}
	if (nd == 0)
		goto nan;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			eneg = s[i++] == '-';
		if (i >= n || !is_digit(s[i]))
			goto nan;
		for (; i < n && is_digit(s[i]); i++) {
			e = e * 10 + (s[i] - '0');
			if (e > INT32_MAX)
				goto nan;
		}
		if (eneg)
			e = -e;
	}
	if (i != n)
		goto nan;
	if (first_ord < 0) {
		memset(out, 0, sizeof(*out));
		return 0;
	}
	/* value = digits[first..last] * 10^(e - nfrac + trailing zeros) */
	exp = e - nfrac + (nd - 1 - last_ord);
	if (last_ord - first_ord + 1 <= SM_DDB_NUMBER_DIGITS)
		for (k = first_nz; k <= last_nz; k++)
			if (s[k] != '.')
				coef = coef * 10 + (unsigned)(s[k] - '0');
	if (last_ord - first_ord + 1 > SM_DDB_NUMBER_DIGITS) {
		/* Too many digits for coef: check the range on the leading digit alone. */
		int64_t adj = exp + (last_ord - first_ord);

		if (adj > SM_DDB_NUMBER_MAX_ADJ_EXP)
			return set_err(err, errlen, -ERANGE, MSG_OVERFLOW);
		if (adj < SM_DDB_NUMBER_MIN_ADJ_EXP)
			return set_err(err, errlen, -ERANGE, MSG_UNDERFLOW);
		return set_err(err, errlen, -ERANGE, MSG_DIGITS);
	}
	return finish(coef, exp, neg, out, err, errlen, MSG_DIGITS);
nan:
	if (errlen > 0)
		snprintf(err, errlen, MSG_NAN ": %.*s", n > 512 ? 512 : (int)n, s);
	return -EINVAL;
}

/* Write the digits of @v (non-zero) at @buf; returns how many. */
static unsigned
put_digits(sm_ddb_u128 v, char *buf)
{
	char tmp[40];
	unsigned n = 0, i;
	uint64_t lo, hi;

	lo = (uint64_t)(v % pow10_64[19]);
	hi = (uint64_t)(v / pow10_64[19]);
	for (i = 0; i < 19 && (hi != 0 || lo != 0); i++) {
		tmp[n++] = (char)('0' + lo % 10);
		lo /= 10;
	}
	if (hi != 0) {
		while (n < 19)
			tmp[n++] = '0';
		while (hi != 0) {
			tmp[n++] = (char)('0' + hi % 10);
			hi /= 10;
		}
	}
	for (i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	return n;
}

size_t
sm_ddb_number_format(const struct sm_ddb_number *x, char *buf, size_t len)
{
	char tmp[SM_DDB_NUMBER_TEXT_MAX];
	char ds[40];
	unsigned nd, k;
	size_t n = 0;
	int exp = x->exp;

	if (x->digits == 0) {
		tmp[n++] = '0';
	} else {
		nd = put_digits(x->coef, ds);
		if (x->neg)
			tmp[n++] = '-';
		if (exp >= 0) {
			memcpy(tmp + n, ds, nd);
			n += nd;
			memset(tmp + n, '0', (size_t)exp);
			n += (size_t)exp;
		} else if ((unsigned)-exp < nd) {
			k = nd - (unsigned)-exp;
			memcpy(tmp + n, ds, k);
			n += k;
			tmp[n++] = '.';
			memcpy(tmp + n, ds + k, nd - k);
			n += nd - k;
		} else {
			tmp[n++] = '0';
			tmp[n++] = '.';
			k = (unsigned)-exp - nd;
			memset(tmp + n, '0', k);
			n += k;
			memcpy(tmp + n, ds, nd);
			n += nd;
		}
	}
	if (n < len) {
		memcpy(buf, tmp, n);
		buf[n] = '\0';
	}
	return n;
}

/* Compare magnitudes of two non-zero numbers. */
static int
cmp_mag(const struct sm_ddb_number *a, const struct sm_ddb_number *b)
{
	int aa = a->exp + a->digits, ab = b->exp + b->digits;
	sm_ddb_u128 ca, cb;

	if (aa != ab)
		return aa < ab ? -1 : 1;
	/* Same leading position: align both to 38 digits. */
	ca = a->coef * pow10_128(SM_DDB_NUMBER_DIGITS - a->digits);
	cb = b->coef * pow10_128(SM_DDB_NUMBER_DIGITS - b->digits);
	return ca < cb ? -1 : ca > cb;
}

int
sm_ddb_number_compare(const struct sm_ddb_number *a, const struct sm_ddb_number *b)
{
	int sa = a->digits == 0 ? 0 : a->neg ? -1 : 1;
	int sb = b->digits == 0 ? 0 : b->neg ? -1 : 1;
	int c;

	if (sa != sb)
		return sa < sb ? -1 : 1;
	if (sa == 0)
		return 0;
	c = cmp_mag(a, b);
	return sa < 0 ? -c : c;
}

static int
add_signed(const struct sm_ddb_number *a, bool bneg, const struct sm_ddb_number *b,
	   struct sm_ddb_number *out, char *err, size_t errlen)
{
	const struct sm_ddb_number *hi, *lo;
	bool hneg, lneg, rneg;
	sm_ddb_u128 x, r;
	unsigned s;
	int64_t exp;

	if (b->digits == 0) {
		*out = *a;
		return 0;
	}
	if (a->digits == 0) {
		*out = *b;
		out->neg = bneg;
		return 0;
	}
	/* hi has the larger exponent; the result's last digit is at lo's exponent. */
	if (a->exp >= b->exp) {
		hi = a;
		lo = b;
		hneg = a->neg;
		lneg = bneg;
	} else {
		hi = b;
		lo = a;
		hneg = bneg;
		lneg = a->neg;
	}
	/*
	 * With s > 38 the exact result spans more than 38 digits from hi's
	 * leading digit to lo's last non-zero one, whatever the signs.
	 */
	if ((int64_t)hi->exp - lo->exp > SM_DDB_NUMBER_DIGITS)
		return set_err(err, errlen, -ERANGE, MSG_OVERFLOW);
	s = (unsigned)(hi->exp - lo->exp);
	if (hi->coef > U128_MAX / pow10_128(s))
		return set_err(err, errlen, -ERANGE, MSG_OVERFLOW);
	x = hi->coef * pow10_128(s);
	if (hneg == lneg) {
		if (x > U128_MAX - lo->coef)
			return set_err(err, errlen, -ERANGE, MSG_OVERFLOW);
		r = x + lo->coef;
		rneg = hneg;
	} else if (x >= lo->coef) {
		r = x - lo->coef;
		rneg = hneg;
	} else {
		r = lo->coef - x;
		rneg = lneg;
	}
	exp = lo->exp;
	strip_zeros(&r, &exp);
	return finish(r, exp, rneg, out, err, errlen, MSG_OVERFLOW);
}

int
sm_ddb_number_add(const struct sm_ddb_number *a, const struct sm_ddb_number *b,
		  struct sm_ddb_number *out, char *err, size_t errlen)
{
	return add_signed(a, b->neg, b, out, err, errlen);
}

int
sm_ddb_number_sub(const struct sm_ddb_number *a, const struct sm_ddb_number *b,
		  struct sm_ddb_number *out, char *err, size_t errlen)
{
	return add_signed(a, b->digits != 0 && !b->neg, b, out, err, errlen);
}

void
sm_ddb_number_from_i64(int64_t v, struct sm_ddb_number *out)
{
	sm_ddb_u128 c = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	int64_t exp = 0;

	memset(out, 0, sizeof(*out));
	if (c == 0)
		return;
	strip_zeros(&c, &exp);
	out->coef = c;
	out->exp = (int32_t)exp;
	out->digits = (uint8_t)count_digits(c);
	out->neg = v < 0;
}

size_t
sm_ddb_number_to_decimal(const struct sm_ddb_number *x, uint8_t *buf, size_t len)
{
	uint8_t b[16];
	sm_ddb_u128 u = x->neg ? 0 - x->coef : x->coef; /* two's complement */
	uint32_t scale = (uint32_t)(x->digits == 0 ? 0 : -x->exp);
	size_t k = 0, n;
	int i;

	for (i = 15; i >= 0; i--) {
		b[i] = (uint8_t)u;
		u >>= 8;
	}
	/* Minimal: drop a leading byte that only repeats the next byte's sign bit. */
	while (k < 15 &&
	       ((b[k] == 0x00 && !(b[k + 1] & 0x80)) || (b[k] == 0xff && (b[k + 1] & 0x80))))
		k++;
	n = 4 + 16 - k;
	if (n <= len) {
		buf[0] = (uint8_t)(scale >> 24);
		buf[1] = (uint8_t)(scale >> 16);
		buf[2] = (uint8_t)(scale >> 8);
		buf[3] = (uint8_t)scale;
		memcpy(buf + 4, b + k, 16 - k);
	}
	return n;
}

/* Magnitudes past this many bytes (about 300 digits) are refused as too many digits. */
#define DEC_MAX_BYTES 128

int
sm_ddb_number_from_decimal(struct sm_bytes v, struct sm_ddb_number *out, char *err, size_t errlen)
{
	uint8_t mag[DEC_MAX_BYTES];
	const uint8_t *p;
	size_t n, k, i;
	int64_t exp;
	int32_t scale;
	bool neg;
	unsigned rem, cur, borrow;
	sm_ddb_u128 c = 0;

	if (v.p == NULL || v.len < 5)
		return set_err(err, errlen, -EINVAL, "Expected at least 5 bytes for a decimal");
	scale = (int32_t)((uint32_t)v.p[0] << 24 | (uint32_t)v.p[1] << 16 | (uint32_t)v.p[2] << 8 |
			  v.p[3]);
	p = v.p + 4;
	n = v.len - 4;
	neg = (p[0] & 0x80) != 0;
	/* Drop sign-extension bytes. */
	k = 0;
	while (k + 1 < n &&
	       ((p[k] == 0x00 && !(p[k + 1] & 0x80)) || (p[k] == 0xff && (p[k + 1] & 0x80))))
		k++;
	p += k;
	n -= k;
	if (n > DEC_MAX_BYTES)
		return set_err(err, errlen, -ERANGE, MSG_DIGITS);
	/* Magnitude: negate a negative value (invert and add one, from the end). */
	borrow = 1;
	for (i = n; i-- > 0;) {
		cur = neg ? (uint8_t)~p[i] + borrow : p[i];
		if (neg)
			borrow = cur >> 8;
		mag[i] = (uint8_t)cur;
	}
	exp = -(int64_t)scale;
	/* Skip leading zero bytes of the magnitude (-2^8k has one more byte than needed). */
	for (k = 0; k < n && mag[k] == 0; k++)
		;
	/* Longer than 16 bytes: divide out trailing zeros until it fits, or fail. */
	while (n - k > 16) {
		rem = 0;
		for (i = k; i < n; i++) {
			cur = rem << 8 | mag[i];
			mag[i] = (uint8_t)(cur / 10);
			rem = cur % 10;
		}
		if (rem != 0)
			return set_err(err, errlen, -ERANGE, MSG_DIGITS);
		exp++;
		while (k < n && mag[k] == 0)
			k++;
	}
	for (i = k; i < n; i++)
		c = c << 8 | mag[i];
	strip_zeros(&c, &exp);
	return finish(c, exp, neg && c != 0, out, err, errlen, MSG_DIGITS);
}
