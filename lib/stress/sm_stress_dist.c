/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cassandra-stress's distributions (sm_stress_dist.h). The samplers are
 * the inverse CDFs of commons-math's distributions that cassandra-stress
 * wraps, on the shard's own generator.
 */

#include "sm_stress_dist.h"

#include "sm_common.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define FORMS                                                                                      \
	"FIXED(v), UNIFORM(a..b), GAUSSIAN(a..b[,stdvrng]), GAUSSIAN(a..b,mean,stdev), EXP(a..b), " \
	"EXTREME(a..b,shape), QEXTREME(a..b,shape,quantas) or SEQ(a..b), ~ before the name to "     \
	"invert it"

/* cassandra-stress's parseLong: an integer with an optional k, m or b. */
static int
parse_long(const char *s, size_t n, int64_t *out)
{
	char buf[32], *end;
	int64_t mul = 1;
	long long v;

	while (n > 0 && isspace((unsigned char)*s))
		s++, n--;
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	if (n == 0 || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, n);
	buf[n] = '\0';
	switch (tolower((unsigned char)buf[n - 1])) {
	case 'b':
		mul = 1000000000;
		break;
	case 'm':
		mul = 1000000;
		break;
	case 'k':
		mul = 1000;
		break;
	}
	if (mul != 1)
		buf[--n] = '\0';
	if (n == 0 || (!isdigit((unsigned char)buf[0]) && buf[0] != '-'))
		return -EINVAL;
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (errno != 0 || *end != '\0' || v > INT64_MAX / mul || v < INT64_MIN / mul)
		return -EINVAL;
	*out = (int64_t)v * mul;
	return 0;
}

static int
parse_bounds(const char *s, size_t n, int64_t *min, int64_t *max)
{
	const char *dots = memchr(s, '.', n);
	const char *hi;

	if (dots == NULL || dots + 1 >= s + n || dots[1] != '.')
		return -EINVAL;
	for (hi = dots; hi < s + n && *hi == '.'; hi++)
		;
	if (parse_long(s, (size_t)(dots - s), min) < 0 ||
	    parse_long(hi, (size_t)(s + n - hi), max) < 0)
		return -EINVAL;
	return 0;
}

static int
parse_real(const char *s, size_t n, double *out)
{
	char buf[48], *end;

	if (n == 0 || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, n);
	buf[n] = '\0';
	*out = strtod(buf, &end);
	return *end == '\0' && isfinite(*out) ? 0 : -EINVAL;
}

void
sm_stress_xdist_fixed(struct sm_stress_xdist *d, int64_t v)
{
	memset(d, 0, sizeof(*d));
	d->kind = SM_STRESS_XD_FIXED;
	d->min = d->max = v;
}

int
sm_stress_xdist_parse(const char *spec, struct sm_stress_xdist *d, char *err, size_t errlen)
{
	const char *arg[4], *open, *p, *name = spec;
	size_t alen[4], nlen, len;
	unsigned argc = 0;
	bool inv = false;
	int64_t min = 0, max = 0;
	double x = 0, y = 0;

	memset(d, 0, sizeof(*d));
	while (isspace((unsigned char)*name))
		name++;
	if (*name == '~') {
		inv = true;
		name++;
	}
	len = strlen(name);
	while (len > 0 && isspace((unsigned char)name[len - 1]))
		len--;
	open = memchr(name, '(', len);
	if (open == NULL || open == name || name[len - 1] != ')' || open + 1 >= name + len - 1) {
		snprintf(err, errlen, "'%s' is not a distribution: use %s", spec, FORMS);
		return -EINVAL;
	}
	nlen = (size_t)(open - name);
	/* the arguments, split on commas */
	for (p = open + 1; argc < 4;) {
		const char *c = memchr(p, ',', (size_t)(name + len - 1 - p));
		const char *e = c != NULL ? c : name + len - 1;

		arg[argc] = p;
		alen[argc++] = (size_t)(e - p);
		if (c == NULL)
			break;
		p = c + 1;
		if (argc == 4)
			goto bad_args;
	}
#define NAMED(s) (nlen == sizeof(s) - 1 && strncasecmp(name, s, nlen) == 0)
	if (NAMED("fixed")) {
		if (argc != 1 || parse_long(arg[0], alen[0], &min) < 0)
			goto bad_args;
		sm_stress_xdist_fixed(d, min);
		d->inverted = inv;
		return 0;
	}
	if (!NAMED("uniform") && !NAMED("gaussian") && !NAMED("gauss") && !NAMED("normal") &&
	    !NAMED("norm") && !NAMED("exp") && !NAMED("extreme") && !NAMED("extr") &&
	    !NAMED("weibull") && !NAMED("qextreme") && !NAMED("qextr") && !NAMED("seq")) {
		snprintf(err, errlen, "'%s': unknown distribution '%.*s': use %s", spec, (int)nlen,
			 name, FORMS);
		return -EINVAL;
	}
	if (parse_bounds(arg[0], alen[0], &min, &max) < 0)
		goto bad_args;
	if (min > max) {
		snprintf(err, errlen, "'%s': the minimum is above the maximum: write min..max",
			 spec);
		return -EINVAL;
	}
	d->min = min;
	d->max = max;
	d->inverted = inv;
	if (NAMED("seq")) {
		if (argc != 1)
			goto bad_args;
		if (min == max) {
			snprintf(err, errlen, "'%s': a sequence needs min < max", spec);
			return -EINVAL;
		}
		d->kind = SM_STRESS_XD_SEQ;
		return 0;
	}
	if (NAMED("uniform")) {
		if (argc != 1)
			goto bad_args;
		d->kind = SM_STRESS_XD_UNIFORM;
	} else if (NAMED("exp")) {
		if (argc != 1)
			goto bad_args;
		d->kind = SM_STRESS_XD_EXP;
		/* Exp(1)'s inverse CDF at 1 - sqrt(1/span) is ln(span) / 2. */
		if (max > min)
			d->mean = (double)(max - min) / (0.5 * log((double)(max - min)));
		if (max - min < 2)
			d->mean = 1;
	} else if (NAMED("qextreme") || NAMED("qextr") || NAMED("extreme") || NAMED("extr") ||
		   NAMED("weibull")) {
		bool q = NAMED("qextreme") || NAMED("qextr");

		if (argc != (q ? 3u : 2u) || parse_real(arg[1], alen[1], &x) < 0 || x <= 0)
			goto bad_args;
		d->kind = q ? SM_STRESS_XD_QEXTREME : SM_STRESS_XD_EXTREME;
		d->shape = x;
		if (q) {
			int64_t qn;

			if (parse_long(arg[2], alen[2], &qn) < 0 || qn < 1 || qn > 1000000)
				goto bad_args;
			d->quantas = (unsigned)qn;
		}
		/* Weibull(shape, 1)'s inverse CDF at 1 - sqrt(1/span): (ln(span)/2)^(1/shape). */
		d->scale = max - min >= 2 ? (double)(max - min) /
						    pow(0.5 * log((double)(max - min)), 1.0 / x)
					  : 1;
	} else {
		d->kind = SM_STRESS_XD_GAUSSIAN;
		if (argc == 3) {
			if (parse_real(arg[1], alen[1], &x) < 0 || parse_real(arg[2], alen[2], &y) < 0 ||
			    y <= 0)
				goto bad_args;
			d->mean = x;
			d->stdev = y;
		} else {
			double stdvrng = 3;

			if (argc == 2 && (parse_real(arg[1], alen[1], &stdvrng) < 0 || stdvrng <= 0))
				goto bad_args;
			d->mean = ((double)min + (double)max) / 2;
			d->stdev = (((double)max - (double)min) / 2) / stdvrng;
		}
	}
	if (min == max)
		d->kind = SM_STRESS_XD_FIXED; /* as cassandra-stress's factories do */
	return 0;
#undef NAMED
bad_args:
	snprintf(err, errlen, "'%s': wrong arguments: use %s", spec, FORMS);
	return -EINVAL;
}

static int64_t
clamp_offset(const struct sm_stress_xdist *d, double v)
{
	/* DistributionOffsetApache: min + (long)v, v clamped to [0, max - min]. */
	if (!(v > 0))
		return d->min;
	if (v >= (double)(d->max - d->min))
		return d->max;
	return d->min + (int64_t)v;
}

static double
u_open(struct sm_rand *r)
{
	/* (0, 1]: log() never sees 0 */
	return ((double)(sm_rand_next(r) >> 11) + 1.0) / 9007199254740992.0;
}

static double
weibull(const struct sm_stress_xdist *d, struct sm_rand *r)
{
	return d->scale * pow(-log(u_open(r)), 1.0 / d->shape);
}

int64_t
sm_stress_xdist_next(const struct sm_stress_xdist *d, struct sm_rand *r, uint64_t seq)
{
	uint64_t span = (uint64_t)(d->max - d->min);
	int64_t v;
	double g;

	switch (d->kind) {
	case SM_STRESS_XD_UNIFORM:
		v = span == UINT64_MAX ? (int64_t)sm_rand_next(r)
				       : d->min + (int64_t)sm_rand_below(r, span + 1);
		break;
	case SM_STRESS_XD_GAUSSIAN:
		g = d->mean + sqrt(-2.0 * log(u_open(r))) * cos(2.0 * M_PI * sm_rand_double(r)) *
				      d->stdev;
		v = g <= (double)d->min ? d->min : g >= (double)d->max ? d->max : llround(g);
		break;
	case SM_STRESS_XD_EXP:
		v = clamp_offset(d, -log(u_open(r)) * d->mean);
		break;
	case SM_STRESS_XD_EXTREME:
		v = clamp_offset(d, weibull(d, r));
		break;
	case SM_STRESS_XD_QEXTREME: {
		/* DistributionQuantized: the extreme picks a quantum, uniform inside it. */
		uint64_t q = (uint64_t)(clamp_offset(d, weibull(d, r)) - d->min);
		uint64_t width = span / d->quantas + 1, lo = q / width * width;
		uint64_t hi = SM_MIN(lo + width - 1, span);

		v = d->min + (int64_t)(lo + sm_rand_below(r, hi - lo + 1));
		break;
	}
	case SM_STRESS_XD_SEQ:
		v = d->min + (int64_t)(span == UINT64_MAX ? seq : seq % (span + 1));
		break;
	case SM_STRESS_XD_FIXED:
	default:
		v = d->min;
		break;
	}
	return d->inverted ? d->min + (d->max - v) : v;
}

int64_t
sm_stress_xdist_at(const struct sm_stress_xdist *d, uint64_t h)
{
	struct sm_rand r;

	if (d->kind == SM_STRESS_XD_FIXED)
		return d->min;
	sm_rand_seed(&r, h);
	return sm_stress_xdist_next(d, &r, h);
}

void
sm_stress_xdist_format(const struct sm_stress_xdist *d, char *buf, size_t len)
{
	const char *inv = d->inverted ? "~" : "";

	switch (d->kind) {
	case SM_STRESS_XD_FIXED:
		snprintf(buf, len, "%sFIXED(%" PRId64 ")", inv, d->min);
		break;
	case SM_STRESS_XD_UNIFORM:
		snprintf(buf, len, "%sUNIFORM(%" PRId64 "..%" PRId64 ")", inv, d->min, d->max);
		break;
	case SM_STRESS_XD_GAUSSIAN:
		snprintf(buf, len, "%sGAUSSIAN(%" PRId64 "..%" PRId64 ",%g,%g)", inv, d->min, d->max,
			 d->mean, d->stdev);
		break;
	case SM_STRESS_XD_EXP:
		snprintf(buf, len, "%sEXP(%" PRId64 "..%" PRId64 ")", inv, d->min, d->max);
		break;
	case SM_STRESS_XD_EXTREME:
		snprintf(buf, len, "%sEXTREME(%" PRId64 "..%" PRId64 ",%g)", inv, d->min, d->max,
			 d->shape);
		break;
	case SM_STRESS_XD_QEXTREME:
		snprintf(buf, len, "%sQEXTREME(%" PRId64 "..%" PRId64 ",%g,%u)", inv, d->min,
			 d->max, d->shape, d->quantas);
		break;
	case SM_STRESS_XD_SEQ:
		snprintf(buf, len, "%sSEQ(%" PRId64 "..%" PRId64 ")", inv, d->min, d->max);
		break;
	}
}

int
sm_stress_ratio_parse(const char *spec, struct sm_stress_ratio *rd, char *err, size_t errlen)
{
	const char *slash = strrchr(spec, '/');
	char dist[128];
	size_t n;

	if (slash == NULL || (n = (size_t)(slash - spec)) == 0 || n >= sizeof(dist) ||
	    parse_real(slash + 1, strlen(slash + 1), &rd->divisor) < 0 || rd->divisor <= 0) {
		snprintf(err, errlen,
			 "'%s' is not a ratio: write DIST/divisor, e.g. fixed(1)/1 or "
			 "uniform(1..10)/10",
			 spec);
		return -EINVAL;
	}
	memcpy(dist, spec, n);
	dist[n] = '\0';
	return sm_stress_xdist_parse(dist, &rd->dist, err, errlen);
}

double
sm_stress_ratio_next(const struct sm_stress_ratio *rd, struct sm_rand *r)
{
	double v = (double)sm_stress_xdist_next(&rd->dist, r, 0) / rd->divisor;

	return v < 0 ? 0 : v > 1 ? 1 : v;
}
