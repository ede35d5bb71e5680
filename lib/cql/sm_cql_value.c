/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Terms to serialized values: Cassandra's Constants.Literal, Lists, Sets,
 * Maps and FunctionCall, down to the wording of their messages, because
 * drivers and test suites match on them.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "sm_cql_proto.h"

#include "cql_func_priv.h"
#include "cql_json_priv.h"

#include "sm_cql_value.h"
#include "sm_mem.h"
#include "sm_store.h"
#include "sm_uuid.h"

#define MS_PER_DAY 86400000LL
#define NS_PER_DAY 86400000000000LL
#define DATE_EPOCH (1LL << 31)

struct conv {
	const struct sm_cql_value_ctx *ctx;
	struct sm_cql_buf *out;
	char *err;
	size_t errlen;
	unsigned depth;
};

static int
fail(struct conv *c, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int
fail(struct conv *c, int rc, const char *fmt, ...)
{
	va_list ap;

	if (c->errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(c->err, c->errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

static int
nomem(struct conv *c)
{
	return fail(c, -ENOMEM, "out of memory converting a value");
}

/* ---- output ---- */

static int
put(struct conv *c, const void *p, size_t n)
{
	uint8_t *q = sm_cql_buf_append(c->out, n);

	if (q == NULL)
		return nomem(c);
	if (n > 0)
		memcpy(q, p, n);
	return 0;
}

static int
put_be(struct conv *c, uint64_t v, unsigned n)
{
	uint8_t b[8];
	unsigned i;

	for (i = 0; i < n; i++)
		b[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
	return put(c, b, n);
}

static void
patch_be32(struct conv *c, size_t off, uint32_t v)
{
	uint8_t *q = c->out->p + off;

	q[0] = (uint8_t)(v >> 24);
	q[1] = (uint8_t)(v >> 16);
	q[2] = (uint8_t)(v >> 8);
	q[3] = (uint8_t)v;
}

/* ---- numbers ---- */

static bool
is_digits(const char *s, size_t n)
{
	size_t i;

	if (n == 0)
		return false;
	for (i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* [+-]?digits into int64, as Java's Long.parseLong; false on syntax or overflow. */
static bool
parse_i64(const char *s, size_t n, int64_t *v)
{
	bool neg = false;
	uint64_t m = 0, lim;
	size_t i = 0;

	if (n > 0 && (s[0] == '-' || s[0] == '+')) {
		neg = s[0] == '-';
		i = 1;
	}
	if (!is_digits(s + i, n - i))
		return false;
	lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; i < n; i++) {
		unsigned d = (unsigned)(s[i] - '0');

		if (m > (lim - d) / 10)
			return false;
		m = m * 10 + d;
	}
	*v = neg ? (int64_t)(0 - m) : (int64_t)m;
	return true;
}

/*
 * Append the minimal two's complement of the decimal @digits (@n of them,
 * leading zeros allowed), negated when @neg. Base 10^9 chunks into 32-bit
 * limbs keep the quadratic cost down for long literals.
 */
static int
put_varint(struct conv *c, bool neg, const char *digits, size_t n)
{
	static const uint32_t pow10[10] = { 1,	    10,	     100,      1000,	  10000,
					    100000, 1000000, 10000000, 100000000, 1000000000 };
	size_t nl = n / 9 + 2, used = 0, i, k, start, len;
	uint32_t *limbs;
	uint8_t *q;
	unsigned carry;

	limbs = sm_calloc(nl, sizeof(*limbs));
	if (limbs == NULL)
		return nomem(c);
	for (i = 0; i < n; i += k) {
		uint64_t acc;
		uint32_t chunk = 0;
		size_t j;

		k = i == 0 && n % 9 != 0 ? n % 9 : 9;
		for (j = 0; j < k; j++)
			chunk = chunk * 10 + (uint32_t)(digits[i + j] - '0');
		acc = chunk;
		for (j = 0; j < used; j++) {
			acc += (uint64_t)limbs[j] * pow10[k];
			limbs[j] = (uint32_t)acc;
			acc >>= 32;
		}
		if (acc != 0)
			limbs[used++] = (uint32_t)acc;
	}
	/* a leading zero byte makes room for the sign before minimising */
	len = used * 4 + 1;
	start = c->out->len;
	q = sm_cql_buf_append(c->out, len);
	if (q == NULL) {
		sm_free(limbs);
		return nomem(c);
	}
	q[0] = 0;
	for (i = 0; i < used; i++) {
		uint32_t l = limbs[used - 1 - i];

		q[1 + 4 * i] = (uint8_t)(l >> 24);
		q[2 + 4 * i] = (uint8_t)(l >> 16);
		q[3 + 4 * i] = (uint8_t)(l >> 8);
		q[4 + 4 * i] = (uint8_t)l;
	}
	sm_free(limbs);
	if (neg) {
		carry = 1;
		for (i = len; i-- > 0;) {
			unsigned b = (uint8_t)~q[i] + carry;

			q[i] = (uint8_t)b;
			carry = b >> 8;
		}
	}
	for (k = 0; k + 1 < len; k++) {
		if (!(q[k] == 0 && !(q[k + 1] & 0x80)) && !(q[k] == 0xff && (q[k + 1] & 0x80)))
			break;
	}
	if (k > 0) {
		memmove(q, q + k, len - k);
		c->out->len = start + len - k;
	}
	return 0;
}

/* True (with the message) when @digits has more than SM_CQL_MAX_NUMBER_DIGITS significant ones. */
static bool
too_many_digits(struct conv *c, const char *java, const char *digits, size_t n)
{
	size_t lead = 0;

	while (lead < n && digits[lead] == '0')
		lead++;
	if (n - lead <= SM_CQL_MAX_NUMBER_DIGITS)
		return false;
	fail(c, -EINVAL,
	     "Unable to make %s from a literal of %zu digits: shardmark converts at most %u "
	     "digits from text; bind the value instead",
	     java, n - lead, SM_CQL_MAX_NUMBER_DIGITS);
	return true;
}

/*
 * Java's BigDecimal(String) syntax, [+-]?(d+(.d*)?|.d+)([eE][+-]?d+)?, split
 * into the mantissa digits (the point removed, into @digits, sized by the
 * caller to @n) and the scale. False on syntax or a scale beyond int32.
 */
static bool
parse_decimal(const char *s, size_t n, bool *neg, char *digits, size_t *ndigits, int32_t *scale)
{
	size_t i = 0, nd = 0, nfrac = 0;
	bool point = false;
	int64_t exp = 0, sc;

	*neg = false;
	if (i < n && (s[i] == '-' || s[i] == '+'))
		*neg = s[i++] == '-';
	for (; i < n; i++) {
		if (s[i] >= '0' && s[i] <= '9') {
			digits[nd++] = s[i];
			nfrac += point;
		} else if (s[i] == '.' && !point) {
			point = true;
		} else {
			break;
		}
	}
	if (nd == 0)
		return false;
	if (i < n) {
		if (s[i] != 'e' && s[i] != 'E')
			return false;
		/* an exponent beyond int32 fails in Java too, so 11 digits are plenty */
		if (!parse_i64(s + i + 1, n - i - 1, &exp) || exp > INT32_MAX || exp < INT32_MIN)
			return false;
	}
	sc = (int64_t)nfrac - exp;
	if (sc > INT32_MAX || sc < INT32_MIN)
		return false;
	*ndigits = nd;
	*scale = (int32_t)sc;
	return true;
}

/* Java's Float/Double.parseXxx syntax for what CQL can write, NaN and Infinity included. */
static bool
float_syntax(const char *s, size_t n)
{
	size_t i = 0, nd = 0;

	if (n == 3 && memcmp(s, "NaN", 3) == 0)
		return true;
	if (i < n && (s[i] == '-' || s[i] == '+'))
		i++;
	if (n - i == 8 && memcmp(s + i, "Infinity", 8) == 0)
		return true;
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
		nd++;
	if (i < n && s[i] == '.')
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			nd++;
	if (nd == 0)
		return false;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '-' || s[i] == '+'))
			i++;
		if (i == n)
			return false;
		for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			;
	}
	return i == n;
}

static int
put_float(struct conv *c, const char *s, size_t n, bool dbl)
{
	char small[64], *z = small;
	union {
		float f;
		uint32_t u;
	} f;
	union {
		double d;
		uint64_t u;
	} d;
	int rc;

	if (n >= sizeof(small)) {
		z = sm_malloc(n + 1);
		if (z == NULL)
			return nomem(c);
	}
	memcpy(z, s, n);
	z[n] = '\0';
	/* Java's NaN is the canonical quiet NaN, whatever the sign */
	if (dbl) {
		d.d = strtod(z, NULL);
		if (isnan(d.d))
			d.u = 0x7ff8000000000000ull;
		rc = put_be(c, d.u, 8);
	} else {
		f.f = strtof(z, NULL);
		if (isnan(f.f))
			f.u = 0x7fc00000u;
		rc = put_be(c, f.u, 4);
	}
	if (z != small)
		sm_free(z);
	return rc;
}

/* ---- dates and times ---- */

static int64_t
days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int
days_in_month(int64_t y, int m)
{
	static const int dm[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return m == 2 && leap ? 29 : dm[m - 1];
}

/* Exactly @w digits at s[*i] into *v. */
static bool
fixed_digits(const char *s, size_t n, size_t *i, unsigned w, int *v)
{
	unsigned k;

	*v = 0;
	for (k = 0; k < w; k++) {
		if (*i >= n || s[*i] < '0' || s[*i] > '9')
			return false;
		*v = *v * 10 + (s[(*i)++] - '0');
	}
	return true;
}

/* yyyy-mm-dd at s[*i] (a year of @minyear.. 9 digits, optionally signed), checked, as days since 1970. */
static bool
parse_ymd(const char *s, size_t n, size_t *i, unsigned minyear, bool sign, int64_t *days)
{
	int64_t y = 0;
	unsigned nd = 0;
	bool neg = false;
	int m, d;

	if (sign && *i < n && (s[*i] == '-' || s[*i] == '+'))
		neg = s[(*i)++] == '-';
	while (*i < n && s[*i] >= '0' && s[*i] <= '9' && nd < 9) {
		y = y * 10 + (s[(*i)++] - '0');
		nd++;
	}
	if (nd < minyear || (!sign && nd > minyear) || *i >= n || s[*i] != '-')
		return false;
	(*i)++;
	if (!fixed_digits(s, n, i, 2, &m) || *i >= n || s[(*i)++] != '-' ||
	    !fixed_digits(s, n, i, 2, &d))
		return false;
	if (neg)
		y = -y;
	if (m < 1 || m > 12 || d < 1 || d > days_in_month(y, m))
		return false;
	*days = days_from_civil(y, m, d);
	return true;
}

/*
 * Cassandra's timestamp patterns: yyyy-mm-dd, then optionally ' ' or 'T'
 * and hh:mm[:ss[.f]], then optionally (after a space) Z, UTC, GMT or UT,
 * +hh, +hhmm or +hh:mm (also after UTC or GMT). The fraction
 * takes 1 to 9 digits (cqlsh prints 6) and is cut to milliseconds. No zone
 * means UTC: shardmark has no server time zone.
 */
static bool
parse_timestamp(const char *s, size_t n, int64_t *ms)
{
	int64_t days, frac_ms = 0, off = 0;
	int hh = 0, mi = 0, ss = 0, v;
	size_t i = 0;

	if (!parse_ymd(s, n, &i, 4, false, &days))
		return false;
	if (i < n && (s[i] == ' ' || s[i] == 'T')) {
		i++;
		if (!fixed_digits(s, n, &i, 2, &hh) || i >= n || s[i++] != ':' ||
		    !fixed_digits(s, n, &i, 2, &mi))
			return false;
		if (i < n && s[i] == ':') {
			i++;
			if (!fixed_digits(s, n, &i, 2, &ss))
				return false;
			if (i < n && s[i] == '.') {
				int64_t scale = 100;
				unsigned nd = 0;

				for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++, nd++) {
					frac_ms += (s[i] - '0') * scale;
					scale /= 10;
				}
				if (nd == 0 || nd > 9)
					return false;
			}
		}
		if (hh > 23 || mi > 59 || ss > 59)
			return false;
	}
	/* a zone after a space, or named UTC / GMT / UT (alone or before an offset) */
	if (i < n && s[i] == ' ')
		i++;
	if (n - i >= 3 && (strncasecmp(s + i, "UTC", 3) == 0 || strncasecmp(s + i, "GMT", 3) == 0))
		i += 3;
	else if (n - i >= 2 && strncasecmp(s + i, "UT", 2) == 0)
		i += 2;
	if (i < n && (s[i] == 'Z' || s[i] == 'z')) {
		i++;
	} else if (i < n && (s[i] == '+' || s[i] == '-')) {
		int sign = s[i++] == '-' ? -1 : 1, oh, om = 0;

		if (!fixed_digits(s, n, &i, 2, &oh))
			return false;
		if (i < n && s[i] == ':') {
			i++;
			if (!fixed_digits(s, n, &i, 2, &om))
				return false;
		} else if (i < n) {
			if (!fixed_digits(s, n, &i, 2, &om))
				return false;
		}
		/* java.time caps offsets at 18 hours */
		if (oh > 18 || om > 59 || (oh == 18 && om > 0))
			return false;
		off = sign * ((int64_t)oh * 3600000 + (int64_t)om * 60000);
	}
	if (i != n)
		return false;
	v = hh * 3600 + mi * 60 + ss;
	*ms = days * MS_PER_DAY + (int64_t)v * 1000 + frac_ms - off;
	return true;
}

/* Cassandra's TimeSerializer.parseTimeStrictly: hh:mm:ss[.fffffffff], each field range-checked. */
static bool
parse_time(const char *s, size_t n, int64_t *ns)
{
	int64_t f[3] = { 0, 0, 0 }, nanos = 0, scale = 100000000;
	static const int64_t lim[3] = { 24, 60, 60 };
	size_t i = 0;
	unsigned k, nd;

	for (k = 0; k < 3; k++) {
		if (k > 0 && (i >= n || s[i++] != ':'))
			return false;
		for (nd = 0; i < n && s[i] >= '0' && s[i] <= '9' && nd < 10; i++, nd++)
			f[k] = f[k] * 10 + (s[i] - '0');
		if (nd == 0 || f[k] >= lim[k])
			return false;
	}
	if (i < n && s[i] == '.') {
		for (i++, nd = 0; i < n && s[i] >= '0' && s[i] <= '9'; i++, nd++) {
			nanos += (s[i] - '0') * scale;
			scale /= 10;
		}
		if (nd == 0 || nd > 9)
			return false;
	}
	if (i != n)
		return false;
	*ns = ((f[0] * 60 + f[1]) * 60 + f[2]) * 1000000000LL + nanos;
	return true;
}

static int64_t
now_micros(struct conv *c)
{
	struct timespec ts;

	if (c->ctx != NULL && c->ctx->now_micros != 0)
		return c->ctx->now_micros;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* ---- simple types from text ---- */

static int
hex_val(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

static int
put_hex(struct conv *c, const char *s, size_t n)
{
	uint8_t *q;
	size_t i;

	for (i = 0; i < n; i++)
		if (hex_val(s[i]) < 0)
			break;
	if (i < n || n % 2 != 0)
		return fail(c, -EINVAL, "cannot parse '%.*s' as hex bytes", (int)n, s);
	q = sm_cql_buf_append(c->out, n / 2);
	if (q == NULL)
		return nomem(c);
	for (i = 0; i < n / 2; i++)
		q[i] = (uint8_t)(hex_val(s[2 * i]) << 4 | hex_val(s[2 * i + 1]));
	return 0;
}

static int
put_uuid(struct conv *c, const char *s, size_t n, bool time)
{
	struct sm_uuid u;
	char z[SM_UUID_STRLEN + 1];

	if (n != SM_UUID_STRLEN)
		goto bad;
	memcpy(z, s, n);
	z[n] = '\0';
	if (sm_uuid_parse(z, &u) != 0)
		goto bad;
	if (time && sm_uuid_version(&u) != 1)
		return fail(c, -EINVAL, "TimeUUID supports only version 1 UUIDs");
	return put(c, u.b, sizeof(u.b));
bad:
	if (time)
		return fail(c, -EINVAL, "Unknown timeuuid representation: %.*s", (int)n, s);
	return fail(c, -EINVAL, "Unable to make UUID from '%.*s'", (int)n, s);
}

static int
put_inet(struct conv *c, const char *s, size_t n)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	uint8_t a[16];
	char z[64];

	if (n >= sizeof(z) || memchr(s, '\0', n) != NULL)
		goto bad;
	memcpy(z, s, n);
	z[n] = '\0';
	if (inet_pton(AF_INET, z, a) == 1)
		return put(c, a, 4);
	if (inet_pton(AF_INET6, z, a) == 1) {
		/* Java's InetAddress turns an IPv4-mapped address into the IPv4 one */
		if (memcmp(a, mapped, sizeof(mapped)) == 0)
			return put(c, a + 12, 4);
		return put(c, a, 16);
	}
bad:
	return fail(c, -EINVAL, "Unable to make inet address from '%.*s'", (int)n, s);
}

static int
put_int_kind(struct conv *c, enum sm_type_kind k, const char *s, size_t n)
{
	static const struct {
		const char *java;
		unsigned bytes;
	} ik[] = {
		[SM_TYPE_TINYINT] = { "byte", 1 }, [SM_TYPE_SMALLINT] = { "short", 2 },
		[SM_TYPE_INT] = { "int", 4 },	   [SM_TYPE_BIGINT] = { "long", 8 },
		[SM_TYPE_COUNTER] = { "long", 8 },
	};
	unsigned b = ik[k].bytes;
	int64_t v;

	if (!parse_i64(s, n, &v) ||
	    (b < 8 && (v < -(INT64_C(1) << (8 * b - 1)) || v >= (INT64_C(1) << (8 * b - 1)))))
		return fail(c, -EINVAL, "Unable to make %s from '%.*s'", ik[k].java, (int)n, s);
	return put_be(c, (uint64_t)v, b);
}

/*
 * Append the value of simple type @k for @s, as AbstractType.fromString();
 * the caller has checked that the literal kind suits the type.
 */
static int
from_text(struct conv *c, enum sm_type_kind k, const char *s, size_t n)
{
	char *digits;
	bool neg;
	size_t nd, i;
	int32_t scale, mo, dd;
	int64_t v;
	int rc;

	if (n == 0 && k != SM_TYPE_COUNTER)
		return 0; /* Cassandra's empty value */
	switch (k) {
	case SM_TYPE_ASCII:
		for (i = 0; i < n; i++)
			if ((uint8_t)s[i] > 0x7f)
				return fail(c, -EINVAL,
					    "Invalid ASCII character in string literal");
		return put(c, s, n);
	case SM_TYPE_TEXT:
		if (n > UINT32_MAX ||
		    sm_value_validate(sm_type_simple(SM_TYPE_TEXT),
				      (struct sm_bytes){ (const uint8_t *)s, (uint32_t)n }, NULL,
				      0) != 0)
			return fail(c, -EINVAL, "Invalid UTF-8 in string literal");
		return put(c, s, n);
	case SM_TYPE_BLOB:
		return put_hex(c, s, n);
	case SM_TYPE_BOOLEAN:
		if (n == 4 && strncasecmp(s, "true", 4) == 0)
			return put_be(c, 1, 1);
		if (n == 5 && strncasecmp(s, "false", 5) == 0)
			return put_be(c, 0, 1);
		return fail(c, -EINVAL, "Unable to make boolean from '%.*s'", (int)n, s);
	case SM_TYPE_TINYINT:
	case SM_TYPE_SMALLINT:
	case SM_TYPE_INT:
	case SM_TYPE_BIGINT:
	case SM_TYPE_COUNTER:
		return put_int_kind(c, k, s, n);
	case SM_TYPE_VARINT:
		i = n > 0 && (s[0] == '-' || s[0] == '+');
		if (!is_digits(s + i, n - i))
			return fail(c, -EINVAL, "Unable to make java.math.BigInteger from '%.*s'",
				    (int)n, s);
		if (too_many_digits(c, "java.math.BigInteger", s + i, n - i))
			return -EINVAL;
		return put_varint(c, s[0] == '-', s + i, n - i);
	case SM_TYPE_FLOAT:
	case SM_TYPE_DOUBLE:
		if (!float_syntax(s, n))
			return fail(c, -EINVAL, "Unable to make %s from '%.*s'",
				    k == SM_TYPE_FLOAT ? "float" : "double", (int)n, s);
		return put_float(c, s, n, k == SM_TYPE_DOUBLE);
	case SM_TYPE_DECIMAL:
		digits = sm_malloc(n);
		if (digits == NULL)
			return nomem(c);
		if (!parse_decimal(s, n, &neg, digits, &nd, &scale)) {
			sm_free(digits);
			return fail(c, -EINVAL, "Unable to make BigDecimal from '%.*s'", (int)n, s);
		}
		rc = put_be(c, (uint32_t)scale, 4);
		if (rc == 0 && too_many_digits(c, "BigDecimal", digits, nd))
			rc = -EINVAL;
		if (rc == 0)
			rc = put_varint(c, neg, digits, nd);
		sm_free(digits);
		return rc;
	case SM_TYPE_TIMESTAMP:
		if (is_digits(s + (s[0] == '-'), n - (s[0] == '-'))) {
			if (!parse_i64(s, n, &v))
				return fail(c, -EINVAL,
					    "Unable to make long (for date) from: '%.*s'", (int)n,
					    s);
		} else if (!parse_timestamp(s, n, &v)) {
			return fail(c, -EINVAL,
				    "Unable to coerce '%.*s' to a formatted date (long)", (int)n,
				    s);
		}
		return put_be(c, (uint64_t)v, 8);
	case SM_TYPE_DATE:
		if (is_digits(s + (s[0] == '-'), n - (s[0] == '-'))) {
			if (!parse_i64(s, n, &v) || v < 0 || v > UINT32_MAX)
				return fail(c, -EINVAL,
					    "Unable to make unsigned int (for date) from: '%.*s'",
					    (int)n, s);
			return put_be(c, (uint64_t)v, 4);
		}
		i = 0;
		if (!parse_ymd(s, n, &i, 4, true, &v) || i != n)
			return fail(c, -EINVAL,
				    "Unable to coerce '%.*s' to a formatted date (long)", (int)n,
				    s);
		if (v < -DATE_EPOCH || v >= DATE_EPOCH)
			return fail(c, -EINVAL, "Input date '%.*s' is out of the supported range",
				    (int)n, s);
		return put_be(c, (uint64_t)(v + DATE_EPOCH), 4);
	case SM_TYPE_TIME:
		if (is_digits(s + (s[0] == '-'), n - (s[0] == '-'))) {
			if (!parse_i64(s, n, &v) || v < 0 || v >= NS_PER_DAY)
				return fail(c, -EINVAL,
					    "Unable to make long (for time) from: '%.*s'", (int)n,
					    s);
		} else if (!parse_time(s, n, &v)) {
			return fail(c, -EINVAL,
				    "(TimeType) Unable to coerce '%.*s' to a formatted time (long)",
				    (int)n, s);
		}
		return put_be(c, (uint64_t)v, 8);
	case SM_TYPE_UUID:
	case SM_TYPE_TIMEUUID:
		return put_uuid(c, s, n, k == SM_TYPE_TIMEUUID);
	case SM_TYPE_INET:
		return put_inet(c, s, n);
	case SM_TYPE_DURATION: {
		uint8_t b[19];
		char msg[160];

		if (sm_cql_duration_parse(s, n, &mo, &dd, &v, msg, sizeof(msg)) != 0)
			return fail(c, -EINVAL, "%s", msg);
		return put(c, b, sm_duration_build(b, sizeof(b), mo, dd, v));
	}
	default:
		return fail(c, -ENOTSUP, "not supported by shardmark: collections from text");
	}
}

/* ---- literals ---- */

static const char *
lit_name(enum sm_cql_lit_kind l)
{
	static const char *const names[] = {
		[SM_CQL_LIT_INT] = "INTEGER",	[SM_CQL_LIT_FLOAT] = "FLOAT",
		[SM_CQL_LIT_STRING] = "STRING", [SM_CQL_LIT_BLOB] = "HEX",
		[SM_CQL_LIT_BOOL] = "BOOLEAN",	[SM_CQL_LIT_NULL] = "NULL",
		[SM_CQL_LIT_UUID] = "UUID",	[SM_CQL_LIT_DURATION] = "DURATION",
	};

	return (unsigned)l < sizeof(names) / sizeof(names[0]) ? names[l] : "?";
}

/* Cassandra's Constants.Type.testAssignment: may a literal of kind @l go to @k? */
static bool
lit_accepts(enum sm_cql_lit_kind l, enum sm_type_kind k)
{
	switch (l) {
	case SM_CQL_LIT_INT:
		switch (k) {
		case SM_TYPE_TINYINT:
		case SM_TYPE_SMALLINT:
		case SM_TYPE_INT:
		case SM_TYPE_BIGINT:
		case SM_TYPE_COUNTER:
		case SM_TYPE_VARINT:
		case SM_TYPE_FLOAT:
		case SM_TYPE_DOUBLE:
		case SM_TYPE_DECIMAL:
		case SM_TYPE_TIMESTAMP:
		case SM_TYPE_DATE:
		case SM_TYPE_TIME:
			return true;
		default:
			return false;
		}
	case SM_CQL_LIT_FLOAT:
		return k == SM_TYPE_FLOAT || k == SM_TYPE_DOUBLE || k == SM_TYPE_DECIMAL;
	case SM_CQL_LIT_STRING:
		switch (k) {
		case SM_TYPE_ASCII:
		case SM_TYPE_TEXT:
		case SM_TYPE_INET:
		case SM_TYPE_TIMESTAMP:
		case SM_TYPE_DATE:
		case SM_TYPE_TIME:
			return true;
		default:
			return false;
		}
	case SM_CQL_LIT_BLOB:
		return k == SM_TYPE_BLOB;
	case SM_CQL_LIT_BOOL:
		return k == SM_TYPE_BOOLEAN;
	case SM_CQL_LIT_UUID:
		return k == SM_TYPE_UUID || k == SM_TYPE_TIMEUUID;
	case SM_CQL_LIT_DURATION:
		return k == SM_TYPE_DURATION;
	case SM_CQL_LIT_NULL:
		return true;
	}
	return false;
}

static const char *
tname(const struct sm_type *t, char *buf, size_t len)
{
	sm_type_name(t, buf, len);
	return buf;
}

/*
 * A receiver's name for messages: "c", "value(c)", "key(value(c))". Nested
 * literals pass the chain down and it is written out only for a message:
 * formatting it for every element cost more than converting the element.
 */
struct cname {
	const char *text; /* the name itself, when @of is NULL */
	const char *wrap; /* "value" or "key" around @of; NULL: @of.field or @of[index] */
	const struct cname *of;
	const char *field; /* user type field */
	unsigned index;	   /* tuple component, when @field is NULL */
};

static void
cname_put(const struct cname *n, char *buf, size_t len, size_t *at)
{
	int w;

	if (*at >= len)
		return;
	if (n->of == NULL) {
		w = snprintf(buf + *at, len - *at, "%s", n->text);
	} else if (n->wrap == NULL) {
		/* ScyllaDB's usertype_field_spec_of() and component_spec_of() names */
		cname_put(n->of, buf, len, at);
		if (*at >= len)
			return;
		w = n->field != NULL ? snprintf(buf + *at, len - *at, ".%s", n->field)
				     : snprintf(buf + *at, len - *at, "[%u]", n->index);
	} else {
		w = snprintf(buf + *at, len - *at, "%s(", n->wrap);
		if (w > 0)
			*at += (size_t)w;
		cname_put(n->of, buf, len, at);
		w = *at < len ? snprintf(buf + *at, len - *at, ")") : 0;
	}
	if (w > 0)
		*at += (size_t)w;
}

static const char *
cname_str(const struct cname *n, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	cname_put(n, buf, len, &at);
	return buf;
}

/*
 * TupleType.fromString(): components separated by ':' ("\\:" for a ':' in
 * one), "@" for null, each converted from its text. Linear in @n.
 */
static int
tuple_from_text(struct conv *c, const struct sm_type *rt, const char *s, size_t n)
{
	char tn[128], *buf;
	size_t i = 0, o, lpos, count = 1;
	unsigned f = 0;
	int rc = 0;

	for (i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 1 < n)
			i++;
		else if (s[i] == ':')
			count++;
	}
	if (count > rt->nfields)
		return fail(c, -EINVAL,
			    "Invalid tuple literal: too many elements. Type %s expects %u but got %zu",
			    tname(rt, tn, sizeof(tn)), rt->nfields, count);
	buf = sm_malloc(n + 1);
	if (buf == NULL)
		return nomem(c);
	for (i = 0; rc == 0 && f < count; f++, i++) {
		for (o = 0; i < n && s[i] != ':'; i++) {
			if (s[i] == '\\' && i + 1 < n)
				i++;
			buf[o++] = s[i];
		}
		lpos = c->out->len;
		rc = put_be(c, 0, 4);
		if (rc != 0)
			break;
		if (o == 1 && buf[0] == '@') {
			patch_be32(c, lpos, UINT32_MAX);
			continue;
		}
		if (rt->fields[f]->kind >= SM_TYPE_LIST) {
			rc = fail(c, -ENOTSUP,
				  "not supported by shardmark: nested collections in a tuple string");
			break;
		}
		rc = from_text(c, rt->fields[f]->kind, buf, o);
		if (rc == 0)
			patch_be32(c, lpos, (uint32_t)(c->out->len - lpos - 4));
	}
	sm_free(buf);
	return rc;
}

static int
conv_literal(struct conv *c, const struct sm_cql_term *t, const struct sm_type *rt,
	     const struct cname *col)
{
	char tn[128], cn[256];

	if (rt->kind == SM_TYPE_TUPLE && t->lit == SM_CQL_LIT_STRING)
		return tuple_from_text(c, rt, t->text, t->len);
	if (!lit_accepts(t->lit, rt->kind))
		return fail(c, -EINVAL, "Invalid %s constant (%s%.*s) for \"%s\" of type %s",
			    lit_name(t->lit), t->lit == SM_CQL_LIT_BLOB ? "0x" : "", (int)t->len,
			    t->text, cname_str(col, cn, sizeof(cn)), tname(rt, tn, sizeof(tn)));
	return from_text(c, rt->kind, t->text, t->len);
}

/* ---- terms ---- */

static int
conv_term(struct conv *c, const struct sm_cql_term *t, const struct sm_type *rt,
	  const struct cname *col, enum sm_cql_conv_state *state);

static int
conv_bind(struct conv *c, const struct sm_cql_term *t, const struct sm_type *rt,
	  enum sm_cql_conv_state *state)
{
	const struct sm_cql_value *v;
	char msg[160];
	size_t start = c->out->len;
	long n;
	int rc;

	if (c->ctx == NULL || c->ctx->binds == NULL || t->bind >= c->ctx->nbinds)
		return fail(c, -EAGAIN, "bind marker %u: the bound value is needed", t->bind);
	v = &c->ctx->binds[t->bind];
	if (v->state == SM_CQL_VALUE_NULL)
		*state = SM_CQL_CONV_NULL;
	else if (v->state == SM_CQL_VALUE_UNSET)
		*state = SM_CQL_CONV_UNSET;
	if (v->state != SM_CQL_VALUE_SET)
		return 0;
	if (sm_value_validate(rt, v->v, msg, sizeof(msg)) != 0)
		return fail(c, -EINVAL, "%s", msg);
	rc = put(c, v->v.p, v->v.len);
	if (rc != 0 || rt->kind < SM_TYPE_LIST)
		return rc;
	/* drivers send sets and maps in their own order */
	n = sm_value_normalize(rt, v->v, c->out->p + start, v->v.len);
	if (n < 0)
		return n == -ENOMEM ? nomem(c) : fail(c, (int)n, "invalid bound collection");
	c->out->len = start + (size_t)n;
	return 0;
}

static int
conv_coll(struct conv *c, const struct sm_cql_term *t, const struct sm_type *rt,
	  const struct cname *col)
{
	static const char *const what[] = {
		[SM_CQL_TERM_LIST] = "list", [SM_CQL_TERM_SET] = "set", [SM_CQL_TERM_MAP] = "map"
	};
	enum sm_cql_conv_state st;
	const struct sm_type *et;
	const struct cname vname = { NULL, "value", col, NULL, 0 },
			   kname = { NULL, "key", col, NULL, 0 };
	char tn[128], cn[256];
	size_t start = c->out->len, lpos;
	bool ok;
	unsigned i;
	long n;
	int rc;

	switch (t->kind) {
	case SM_CQL_TERM_LIST:
		ok = rt->kind == SM_TYPE_LIST;
		break;
	case SM_CQL_TERM_SET:
		/* '{}' is also the empty map */
		ok = rt->kind == SM_TYPE_SET || (rt->kind == SM_TYPE_MAP && t->nelems == 0);
		break;
	default:
		ok = rt->kind == SM_TYPE_MAP;
		break;
	}
	if (!ok)
		return fail(c, -EINVAL, "Invalid %s literal for %s of type %s", what[t->kind],
			    cname_str(col, cn, sizeof(cn)), tname(rt, tn, sizeof(tn)));
	rc = put_be(c, t->kind == SM_CQL_TERM_MAP ? t->nelems / 2 : t->nelems, 4);
	for (i = 0; rc == 0 && i < t->nelems; i++) {
		bool key = t->kind == SM_CQL_TERM_MAP && i % 2 == 0;

		et = t->kind == SM_CQL_TERM_MAP && !key ? rt->val : rt->elem;
		lpos = c->out->len;
		rc = put_be(c, 0, 4);
		if (rc == 0)
			rc = conv_term(c, t->elems[i], et, key ? &kname : &vname, &st);
		if (rc != 0)
			break;
		if (st == SM_CQL_CONV_NULL)
			return fail(c, -EINVAL, "null is not supported inside collections");
		if (st == SM_CQL_CONV_UNSET)
			return fail(c, -EINVAL, "unset value is not supported inside collections");
		if (c->out->len - lpos - 4 > INT32_MAX)
			return fail(c, -EINVAL, "collection element too large");
		patch_be32(c, lpos, (uint32_t)(c->out->len - lpos - 4));
	}
	if (rc != 0)
		return rc;
	if (c->out->len - start > UINT32_MAX)
		return fail(c, -EINVAL, "collection too large");
	if (rt->kind == SM_TYPE_LIST)
		return 0; /* the elements were normalised as they were converted */
	n = sm_value_normalize_outer(
		rt, (struct sm_bytes){ c->out->p + start, (uint32_t)(c->out->len - start) },
		c->out->p + start, c->out->len - start);
	if (n < 0)
		return n == -ENOMEM ? nomem(c) : fail(c, (int)n, "invalid collection literal");
	c->out->len = start + (size_t)n;
	return 0;
}

/*
 * A literal, or a tuple of them, that cannot be a @rt at all (ScyllaDB
 * tests assignability before it converts: test_assignment()).
 */
static bool
literal_misfits(const struct sm_cql_term *t, const struct sm_type *rt)
{
	unsigned i;

	if (t->kind == SM_CQL_TERM_TUPLE) {
		if (rt->kind != SM_TYPE_TUPLE || t->nelems > rt->nfields)
			return true;
		for (i = 0; i < t->nelems; i++)
			if (literal_misfits(t->elems[i], rt->fields[i]))
				return true;
		return false;
	}
	if (t->kind != SM_CQL_TERM_LITERAL || t->lit == SM_CQL_LIT_NULL)
		return false;
	if (t->lit == SM_CQL_LIT_STRING && rt->kind == SM_TYPE_TUPLE)
		return false;
	return !lit_accepts(t->lit, rt->kind);
}

/* One field of a tuple or user type: (int32 length, bytes), or -1 for null. */
static int
conv_field(struct conv *c, const struct sm_cql_term *t, const struct sm_type *ft,
	   const struct cname *fname, const char *unset_msg)
{
	enum sm_cql_conv_state st;
	size_t lpos = c->out->len;
	int rc = put_be(c, 0, 4);

	if (rc == 0)
		rc = conv_term(c, t, ft, fname, &st);
	if (rc != 0)
		return rc;
	if (st == SM_CQL_CONV_UNSET)
		return fail(c, -EINVAL, "%s", unset_msg);
	if (st == SM_CQL_CONV_NULL) {
		c->out->len = lpos + 4;
		patch_be32(c, lpos, UINT32_MAX);
		return 0;
	}
	if (c->out->len - lpos - 4 > INT32_MAX)
		return fail(c, -EINVAL, "tuple field too large");
	patch_be32(c, lpos, (uint32_t)(c->out->len - lpos - 4));
	return 0;
}

/* (a, b, ...) for a tuple (prepare_expr.cc tuple_constructor_validate_assignable_to()). */
static int
conv_tuple(struct conv *c, const struct sm_cql_term *t, const struct sm_type *rt,
	   const struct cname *col)
{
	char tn[128], cn[256], msg[128];
	unsigned i;
	int rc;

	if (rt->kind != SM_TYPE_TUPLE)
		return fail(c, -EINVAL, "Invalid tuple type literal for %s of type %s",
			    cname_str(col, cn, sizeof(cn)), tname(rt, tn, sizeof(tn)));
	if (t->nelems > rt->nfields)
		return fail(c, -EINVAL,
			    "Invalid tuple literal for %s: too many elements. Type %s expects %u but "
			    "got %u",
			    cname_str(col, cn, sizeof(cn)), tname(rt, tn, sizeof(tn)), rt->nfields,
			    t->nelems);
	for (i = 0; i < t->nelems; i++) {
		struct cname fname = { NULL, NULL, col, NULL, i };

		if (literal_misfits(t->elems[i], rt->fields[i]))
			return fail(c, -EINVAL,
				    "Invalid tuple literal for %s: component %u is not of type %s",
				    cname_str(col, cn, sizeof(cn)), i,
				    tname(rt->fields[i], tn, sizeof(tn)));
		snprintf(msg, sizeof(msg), "Invalid unset value for tuple field number %u", i);
		rc = conv_field(c, t->elems[i], rt->fields[i], &fname, msg);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* {f: v, ...} for a user type: every field of the type, in its order, null when not given. */
static int
conv_udt(struct conv *c, const struct sm_cql_term *t, const struct sm_type *rt,
	 const struct cname *col)
{
	static const struct sm_cql_term null_term = { .kind = SM_CQL_TERM_LITERAL,
						      .lit = SM_CQL_LIT_NULL,
						      .text = "null",
						      .len = 4 };
	char tn[128], cn[256], msg[320];
	unsigned i, j, found = 0;
	int rc;

	if (rt->kind != SM_TYPE_UDT)
		return fail(c, -EINVAL, "Invalid user type literal for %s of type %s",
			    cname_str(col, cn, sizeof(cn)), tname(rt, tn, sizeof(tn)));
	for (i = 0; i < rt->nfields; i++) {
		const struct sm_cql_term *v = &null_term;
		struct cname fname = { NULL, NULL, col, rt->field_names[i], 0 };

		/* the last of a repeated field wins, as in ScyllaDB's map of fields */
		for (j = 0; j < t->nelems; j++)
			if (strcmp(t->names[j], rt->field_names[i]) == 0)
				v = t->elems[j];
		if (v != &null_term)
			found++;
		if (literal_misfits(v, rt->fields[i]))
			return fail(c, -EINVAL,
				    "Invalid user type literal for %s: field %s is not of type %s",
				    cname_str(col, cn, sizeof(cn)), rt->field_names[i],
				    tname(rt->fields[i], tn, sizeof(tn)));
		snprintf(msg, sizeof(msg), "Invalid unset value for field '%s' of user defined type %s",
			 rt->field_names[i], rt->name);
		rc = conv_field(c, v, rt->fields[i], &fname, msg);
		if (rc != 0)
			return rc;
	}
	for (j = 0; found < t->nelems && j < t->nelems; j++)
		if (sm_type_field_index(rt, t->names[j]) < 0)
			return fail(c, -EINVAL, "Unknown field '%s' in value of user defined type %s",
				    t->names[j], rt->name);
	return 0;
}

/*
 * (type) term: the term converted for the hinted type, which must then suit
 * the receiver (prepare_expr.cc cast_prepare_expression()).
 */
static int
conv_hint(struct conv *c, const struct sm_cql_term *t, const struct sm_type *rt,
	  const struct cname *col, enum sm_cql_conv_state *state)
{
	const struct sm_type *ht;
	char tn[128], cn[256];
	int rc;

	rc = sm_type_parse(t->text, &ht, c->err, c->errlen);
	if (rc != 0)
		return rc;
	if (!sm_type_equal(ht, rt) && (ht->kind >= SM_TYPE_LIST || rt->kind >= SM_TYPE_LIST ||
				       !cql_fn_value_compatible(rt, ht->kind))) {
		rc = fail(c, -EINVAL, "Cannot assign value of type %s to %s of type %s", t->text,
			  cname_str(col, cn, sizeof(cn)), tname(rt, tn, sizeof(tn)));
		sm_type_free(ht);
		return rc;
	}
	rc = conv_term(c, t->elems[0], ht, col, state);
	sm_type_free(ht);
	return rc;
}

/* ---- functions ---- */

static bool
fn_lookup(const struct sm_cql_term *t, struct cql_fn *f)
{
	return cql_fn_lookup(t->ks, t->text, f);
}

/* Pick the overload of a TO_* function that the argument's form allows, as Cassandra does. */
static int
resolve_arg(struct conv *c, const struct sm_cql_term *fname, const struct cql_fn *f,
	    const struct sm_cql_term *a, enum sm_type_kind *k)
{
	unsigned i, hits = 0;
	struct cql_fn inner;

	for (i = 0; i < f->ncand; i++) {
		bool fits;

		switch (a->kind) {
		case SM_CQL_TERM_LITERAL:
			fits = lit_accepts(a->lit, f->cand[i]);
			break;
		case SM_CQL_TERM_FUNCTION:
			fits = fn_lookup(a, &inner) &&
			       cql_fn_value_compatible(sm_type_simple(f->cand[i]), inner.result);
			break;
		case SM_CQL_TERM_BIND:
			fits = true;
			break;
		case SM_CQL_TERM_CAST: {
			/* (type) x: that type, exactly */
			const struct sm_type *ht = NULL;

			fits = sm_type_parse(a->text, &ht, NULL, 0) == 0 && ht->kind == f->cand[i];
			sm_type_free(ht);
			break;
		}
		default:
			fits = false;
			break;
		}
		if (fits) {
			*k = f->cand[i];
			hits++;
		}
	}
	if (hits == 1)
		return 0;
	if (hits == 0)
		return fail(c, -EINVAL,
			    "Invalid call to function system.%s, none of its type signatures match",
			    fname->text);
	return fail(c, -EINVAL,
		    "Ambiguous call to function system.%s: use type casts to disambiguate",
		    fname->text);
}

const struct sm_type *
sm_cql_function_arg_type(const struct sm_cql_term *call, unsigned i)
{
	struct cql_fn f;

	if (call->kind != SM_CQL_TERM_FUNCTION || !fn_lookup(call, &f) || i >= f.nargs ||
	    f.ncand > 1)
		return NULL;
	return sm_type_simple(f.ncand ? f.cand[0] : f.arg);
}

/*
 * token(a, ...) of literals: the Murmur3 token of the key they make, each
 * an int, bigint, text or blob as its literal kind says (ScyllaDB's
 * token_fct with the literals' default types). A bigint.
 */
static int
conv_token(struct conv *c, const struct sm_cql_term *t, const struct sm_type *rt,
	   const struct cname *col, enum sm_cql_conv_state *state)
{
	struct sm_key k;
	size_t start = c->out->len, ends[SM_MAX_KEY_PARTS];
	char tn[128], cn[256];
	unsigned i;
	int rc;

	if (rt != NULL && !cql_fn_value_compatible(rt, SM_TYPE_BIGINT))
		return fail(c, -EINVAL,
			    "Type error: cannot assign result of function system.token (type bigint) "
			    "to %s (type %s)",
			    cname_str(col, cn, sizeof(cn)), tname(rt, tn, sizeof(tn)));
	if (t->nelems == 0 || t->nelems > SM_MAX_KEY_PARTS)
		return fail(c, -EINVAL, "Invalid number of arguments in call to function system.token");
	for (i = 0; i < t->nelems; i++) {
		const struct sm_cql_term *a = t->elems[i];
		enum sm_type_kind k2;

		if (a->kind != SM_CQL_TERM_LITERAL)
			return fail(c, -ENOTSUP,
				    "not supported by shardmark: token() of anything but literals");
		k2 = a->lit == SM_CQL_LIT_INT	 ? SM_TYPE_INT
		     : a->lit == SM_CQL_LIT_BLOB ? SM_TYPE_BLOB
		     : a->lit == SM_CQL_LIT_UUID ? SM_TYPE_UUID
						 : SM_TYPE_TEXT;
		ends[i] = c->out->len;
		rc = from_text(c, k2, a->text, a->len);
		if (rc != 0)
			return rc;
	}
	/* the parts, now that the buffer has stopped moving */
	k.n = t->nelems;
	for (i = 0; i < t->nelems; i++) {
		size_t end = i + 1 < t->nelems ? ends[i + 1] : c->out->len;

		k.part[i] = (struct sm_bytes){ c->out->p + ends[i], (uint32_t)(end - ends[i]) };
	}
	c->out->len = start;
	*state = SM_CQL_CONV_VALUE;
	return put_be(c, (uint64_t)sm_key_token(&k), 8);
}

/* fromJson(text) (ScyllaDB's functions/from_json_function): the JSON as the receiver's type */
static int
conv_from_json(struct conv *c, const struct sm_cql_term *t, const struct sm_type *rt,
	       const struct cname *col, enum sm_cql_conv_state *state)
{
	struct cname arg = { "arg0(system.fromjson)", NULL, NULL, NULL, 0 };
	size_t start = c->out->len, n;
	char *copy;
	int rc;

	(void)col;
	if (rt == NULL)
		return fail(c, -EINVAL, "fromJson() cannot be used in the selection clause of a "
			    "SELECT statement");
	if (t->nelems != 1)
		return fail(c, -EINVAL, "fromJson() accepts only one argument (%u given)",
			    t->nelems);
	rc = conv_term(c, t->elems[0], sm_type_simple(SM_TYPE_TEXT), &arg, state);
	if (rc != 0 || *state != SM_CQL_CONV_VALUE)
		return rc;
	/* the text is where the value goes: convert a copy */
	n = c->out->len - start;
	copy = sm_malloc(n ? n : 1);
	if (copy == NULL)
		return fail(c, -ENOMEM, "out of memory");
	memcpy(copy, c->out->p + start, n);
	c->out->len = start;
	rc = cql_json_to_value(rt, copy, n, c->out, c->err, c->errlen);
	sm_free(copy);
	if (rc == -ENODATA) {
		*state = SM_CQL_CONV_NULL;
		c->out->len = start;
		return 0;
	}
	return rc;
}

static int
conv_call(struct conv *c, const struct sm_cql_term *t, const struct sm_type *rt,
	  const struct cname *col, enum sm_cql_conv_state *state)
{
	const struct sm_type *argt;
	enum sm_type_kind ak;
	struct cql_fn f;
	char tn[128], tn2[128], argname[160], cn[256];
	struct cname arg = { argname, NULL, NULL, NULL, 0 };
	uint8_t res[CQL_FN_RESULT_MAX];
	size_t start = c->out->len;
	uint32_t len;
	int rc;

	if (strcmp(t->text, "token") == 0 && (t->ks == NULL || strcmp(t->ks, "system") == 0))
		return conv_token(c, t, rt, col, state);
	if (strcmp(t->text, "fromjson") == 0 && (t->ks == NULL || strcmp(t->ks, "system") == 0))
		return conv_from_json(c, t, rt, col, state);
	if (!fn_lookup(t, &f)) {
		if (strcmp(t->text, "count") == 0 || strcmp(t->text, "min") == 0 ||
		    strcmp(t->text, "max") == 0 || strcmp(t->text, "sum") == 0 ||
		    strcmp(t->text, "avg") == 0)
			return fail(c, -EINVAL,
				    "Aggregation functions are not supported outside of the "
				    "selection: %s()",
				    t->text);
		return fail(c, -ENOTSUP, "not supported by shardmark: function %s%s%s",
			    t->ks ? t->ks : "", t->ks ? "." : "", t->text);
	}
	if (rt != NULL && !cql_fn_value_compatible(rt, f.result))
		return fail(c, -EINVAL,
			    "Type error: cannot assign result of function system.%s (type %s) to "
			    "%s (type %s)",
			    t->text, tname(sm_type_simple(f.result), tn, sizeof(tn)),
			    cname_str(col, cn, sizeof(cn)), tname(rt, tn2, sizeof(tn2)));
	if (t->nelems != f.nargs)
		return fail(c, -EINVAL,
			    "Invalid number of arguments in call to function system.%s: %u "
			    "required but %u provided",
			    t->text, f.nargs, t->nelems);
	*state = SM_CQL_CONV_VALUE;
	ak = f.arg;
	if (f.nargs > 0) {
		if (f.ncand > 0) {
			rc = resolve_arg(c, t, &f, t->elems[0], &ak);
			if (rc != 0)
				return rc;
		}
		argt = sm_type_simple(ak);
		snprintf(argname, sizeof(argname), "arg0(system.%s)", t->text);
		rc = conv_term(c, t->elems[0], argt, &arg, state);
		if (rc != 0)
			return rc;
		if (*state == SM_CQL_CONV_UNSET)
			return fail(c, -EINVAL,
				    "Invalid unset value for argument in call to function system.%s",
				    t->text);
		if (*state == SM_CQL_CONV_NULL)
			return 0; /* null in, null out */
	}
	rc = cql_fn_eval(&f, ak,
			 (struct sm_bytes){ c->out->p + start, (uint32_t)(c->out->len - start) },
			 c->ctx != NULL ? c->ctx->uuid_gen : NULL, now_micros(c), t->text, res, &len,
			 c->err, c->errlen);
	if (rc != 0)
		return rc;
	if (f.id == CQL_FN_AS_BLOB || f.id == CQL_FN_BLOB_AS)
		return 0; /* the argument itself */
	c->out->len = start;
	return put(c, res, len);
}

static int
conv_term(struct conv *c, const struct sm_cql_term *t, const struct sm_type *rt,
	  const struct cname *col, enum sm_cql_conv_state *state)
{
	int rc;

	*state = SM_CQL_CONV_VALUE;
	if (++c->depth > SM_CQL_MAX_DEPTH + 1) {
		rc = fail(c, -EINVAL, "term nested too deeply");
		goto out;
	}
	switch (t->kind) {
	case SM_CQL_TERM_LITERAL:
		if (t->lit == SM_CQL_LIT_NULL) {
			*state = SM_CQL_CONV_NULL;
			rc = 0;
		} else {
			rc = conv_literal(c, t, rt, col);
		}
		break;
	case SM_CQL_TERM_BIND:
		rc = conv_bind(c, t, rt, state);
		break;
	case SM_CQL_TERM_LIST:
	case SM_CQL_TERM_SET:
	case SM_CQL_TERM_MAP:
		rc = conv_coll(c, t, rt, col);
		break;
	case SM_CQL_TERM_FUNCTION:
		rc = conv_call(c, t, rt, col, state);
		break;
	case SM_CQL_TERM_TUPLE:
		rc = conv_tuple(c, t, rt, col);
		break;
	case SM_CQL_TERM_UDT:
		rc = conv_udt(c, t, rt, col);
		break;
	case SM_CQL_TERM_CAST:
		rc = conv_hint(c, t, rt, col, state);
		break;
	default:
		rc = fail(c, -ENOTSUP, "not supported by shardmark: this term");
		break;
	}
out:
	c->depth--;
	return rc;
}

int
sm_cql_term_to_value(const struct sm_cql_term *t, const struct sm_type *receiver,
		     const char *column, const struct sm_cql_value_ctx *ctx, struct sm_cql_buf *out,
		     struct sm_cql_value_span *span, char *err, size_t errlen)
{
	struct conv c = { ctx, out, err, errlen, 0 };
	size_t start = out->len;
	int rc;

	if (errlen > 0)
		err[0] = '\0';
	span->off = start;
	span->len = 0;
	span->state = SM_CQL_CONV_VALUE;
	if (out->err != 0)
		return fail(&c, out->err, "output buffer failed earlier");
	rc = conv_term(&c, t, receiver,
		       &(struct cname){ column != NULL ? column : "?", NULL, NULL, NULL, 0 },
		       &span->state);
	if (rc == 0 && out->len - start > INT32_MAX)
		rc = fail(&c, -EINVAL, "value of %zu bytes is too large", out->len - start);
	if (rc != 0) {
		out->len = start;
		span->state = SM_CQL_CONV_VALUE;
		return rc;
	}
	if (span->state != SM_CQL_CONV_VALUE)
		out->len = start;
	span->len = (uint32_t)(out->len - start);
	return 0;
}

int
sm_cql_value_from_text(const struct sm_type *type, const char *text, size_t len,
		       struct sm_cql_buf *out, struct sm_cql_value_span *span, char *err,
		       size_t errlen)
{
	struct conv c = { NULL, out, err, errlen, 0 };
	size_t start = out->len;
	int rc;

	if (errlen > 0)
		err[0] = '\0';
	span->off = start;
	span->len = 0;
	span->state = SM_CQL_CONV_VALUE;
	if (out->err != 0)
		return fail(&c, out->err, "output buffer failed earlier");
	if (sm_type_is_collection(type))
		return fail(&c, -ENOTSUP, "not supported by shardmark: collections from text");
	if (len > INT32_MAX)
		return fail(&c, -EINVAL, "value of %zu bytes is too large", len);
	rc = from_text(&c, type->kind, text, len);
	if (rc != 0) {
		out->len = start;
		return rc;
	}
	span->len = (uint32_t)(out->len - start);
	return 0;
}
