/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CQL duration literals: the standard form (1y2mo3w4d5h6m7s8ms9us10ns) and
 * the ISO 8601 forms (P1Y2M3DT4H5M6S, P3W, P0001-02-03T04:05:06).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "sm_cql_parse.h"

#define NS_PER_US 1000LL
#define NS_PER_MS 1000000LL
#define NS_PER_S 1000000000LL
#define NS_PER_MIN (60 * NS_PER_S)
#define NS_PER_H (60 * NS_PER_MIN)

/* Accumulated fields, wide enough to detect overflow at the end. */
struct dur {
	int64_t months;
	int64_t days;
	int64_t nanos;
	bool overflow;
};

static void
add(int64_t *field, uint64_t n, int64_t mult, bool *overflow)
{
	int64_t v;

	if (n > (uint64_t)INT64_MAX || __builtin_mul_overflow((int64_t)n, mult, &v) ||
	    __builtin_add_overflow(*field, v, field))
		*overflow = true;
}

static int
bad(const char *text, size_t len, char *err, size_t errlen)
{
	if (errlen)
		snprintf(err, errlen, "Unable to convert '%.*s' to a duration",
			 (int)(len > 64 ? 64 : len), text);
	return -EINVAL;
}

/* Digits at *@i into *@n; false when there are none. */
static bool
digits(const char *s, size_t len, size_t *i, uint64_t *n)
{
	size_t start = *i;

	*n = 0;
	while (*i < len && isdigit((unsigned char)s[*i])) {
		if (*n > (UINT64_MAX - 9) / 10)
			*n = UINT64_MAX; /* saturate: reported as overflow */
		else
			*n = *n * 10 + (uint64_t)(s[*i] - '0');
		(*i)++;
	}
	return *i > start;
}

/* The standard form; units in decreasing order, each once. */
static int
parse_standard(const char *s, size_t len, size_t i, struct dur *d)
{
	static const struct {
		const char *unit;
		int field; /* 0 months, 1 days, 2 nanos */
		int64_t mult;
	} units[] = {
		{ "y", 0, 12 },		{ "mo", 0, 1 },
		{ "w", 1, 7 },		{ "d", 1, 1 },
		{ "h", 2, NS_PER_H },	{ "m", 2, NS_PER_MIN },
		{ "s", 2, NS_PER_S },	{ "ms", 2, NS_PER_MS },
		{ "us", 2, NS_PER_US }, { "\xc2\xb5s", 2, NS_PER_US },
		{ "ns", 2, 1 },
	};
	size_t nunits = sizeof(units) / sizeof(units[0]);
	size_t next = 0, u, best, blen, ulen;
	uint64_t n;

	if (i >= len)
		return -1;
	while (i < len) {
		if (!digits(s, len, &i, &n))
			return -1;
		/* The longest unit that matches: "mo" and "ms" before "m". */
		best = nunits;
		blen = 0;
		for (u = 0; u < nunits; u++) {
			ulen = strlen(units[u].unit);
			if (ulen <= len - i && strncasecmp(s + i, units[u].unit, ulen) == 0 &&
			    ulen > blen) {
				best = u;
				blen = ulen;
			}
		}
		if (best == nunits)
			return -1;
		if (best == 8 || best == 9) {
			/* us and µs are one unit */
			if (next > 9)
				return -2;
			next = 10;
		} else {
			if (best < next)
				return -2;
			next = best + 1;
		}
		i += blen;
		add(units[best].field == 0   ? &d->months
		    : units[best].field == 1 ? &d->days
					     : &d->nanos,
		    n, units[best].mult, &d->overflow);
	}
	return 0;
}

/* P[nY][nM][nD][T[nH][nM][nS]] and PnW */
static int
parse_iso(const char *s, size_t len, size_t i, struct dur *d)
{
	static const char date_units[] = "YMD";
	static const char time_units[] = "HMS";
	static const int64_t date_mult[] = { 12, 1, 1 };
	static const int64_t time_mult[] = { NS_PER_H, NS_PER_MIN, NS_PER_S };
	bool time = false, any = false;
	size_t next = 0;
	uint64_t n;
	const char *u;
	char c;

	if (len - i >= 17 && s[i + 4] == '-') {
		/* P0001-02-03T04:05:06: fixed positions checked by the lexer's shape */
		uint64_t v[6];
		size_t k;
		static const char seps[] = "--T::";

		for (k = 0; k < 6; k++) {
			if (!digits(s, len, &i, &v[k]))
				return -1;
			if (k < 5) {
				if (i >= len || toupper((unsigned char)s[i]) != seps[k])
					return -1;
				i++;
			}
		}
		if (i != len)
			return -1;
		add(&d->months, v[0], 12, &d->overflow);
		add(&d->months, v[1], 1, &d->overflow);
		add(&d->days, v[2], 1, &d->overflow);
		add(&d->nanos, v[3], NS_PER_H, &d->overflow);
		add(&d->nanos, v[4], NS_PER_MIN, &d->overflow);
		add(&d->nanos, v[5], NS_PER_S, &d->overflow);
		return 0;
	}
	while (i < len) {
		if (!time && (s[i] == 'T' || s[i] == 't')) {
			time = true;
			next = 0;
			i++;
			if (i >= len)
				return -1;
			continue;
		}
		if (!digits(s, len, &i, &n) || i >= len)
			return -1;
		c = (char)toupper((unsigned char)s[i++]);
		any = true;
		if (!time && c == 'W') {
			if (next != 0 || i != len)
				return -1;
			add(&d->days, n, 7, &d->overflow);
			return 0;
		}
		u = strchr(time ? time_units : date_units, c);
		if (u == NULL || c == '\0')
			return -1;
		if ((size_t)(u - (time ? time_units : date_units)) < next)
			return -2;
		next = (size_t)(u - (time ? time_units : date_units)) + 1;
		if (time)
			add(&d->nanos, n, time_mult[next - 1], &d->overflow);
		else
			add(next == 3 ? &d->days : &d->months, n, date_mult[next - 1],
			    &d->overflow);
	}
	return any ? 0 : -1;
}

int
sm_cql_duration_parse(const char *text, size_t len, int32_t *months, int32_t *days, int64_t *nanos,
		      char *err, size_t errlen)
{
	struct dur d = { 0 };
	bool neg = false;
	size_t i = 0;
	int rc;

	if (len > 0 && text[0] == '-') {
		neg = true;
		i = 1;
	}
	if (i < len && (text[i] == 'P' || text[i] == 'p'))
		rc = parse_iso(text, len, i + 1, &d);
	else
		rc = parse_standard(text, len, i, &d);
	if (rc == -2) {
		if (errlen)
			snprintf(err, errlen,
				 "Invalid duration. The units of '%.*s' must be given once each, "
				 "largest first",
				 (int)(len > 64 ? 64 : len), text);
		return -EINVAL;
	}
	if (rc < 0)
		return bad(text, len, err, errlen);
	if (d.overflow || d.months > INT32_MAX || d.days > INT32_MAX) {
		if (errlen)
			snprintf(err, errlen, "Invalid duration '%.*s': out of range",
				 (int)(len > 64 ? 64 : len), text);
		return -EINVAL;
	}
	*months = (int32_t)(neg ? -d.months : d.months);
	*days = (int32_t)(neg ? -d.days : d.days);
	*nanos = neg ? -d.nanos : d.nanos;
	return 0;
}
