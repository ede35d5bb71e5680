/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Keys, values, populations and pacing of the stress load. Written here
 * rather than taken from a library: each is a few lines on the request
 * path, and what matters is that the state is per shard and the output a
 * pure function of the key index.
 */

#include "sm_stress_load.h"

#include <errno.h>
#include <math.h>

double
sm_stress_rng_gauss(struct sm_rand *r)
{
	/* 53 random bits in (0, 1]: log() never sees 0. */
	double u1 = ((double)(sm_rand_next(r) >> 11) + 1.0) / 9007199254740992.0;
	double u2 = (double)(sm_rand_next(r) >> 11) / 9007199254740992.0;

	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

void
sm_stress_key(uint64_t i, uint8_t out[SM_STRESS_KEY_LEN])
{
	static const char alphabet[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
	uint64_t x = i, h = sm_splitmix64(&x);
	unsigned k;

	for (k = 0; k < SM_STRESS_KEY_LEN; k++) {
		if (k == 6)
			h = sm_splitmix64(&x); /* 36^6 < 2^32: refill for the last four */
		out[k] = (uint8_t)alphabet[h % 36];
		h /= 36;
	}
}

void
sm_stress_value(uint64_t i, unsigned col, uint8_t *out, size_t len)
{
	uint64_t x = (i * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)col << 56) ^ 0x5bd1e995u, w = 0;
	size_t k;

	for (k = 0; k < len; k++) {
		if ((k & 7) == 0)
			w = sm_splitmix64(&x);
		out[k] = (uint8_t)w;
		w >>= 8;
	}
}

int
sm_stress_cursor_init(struct sm_stress_cursor *c, const struct sm_stress_dist *d, bool wrap,
		      unsigned shard, unsigned nshards)
{
	if (d->max < d->min || nshards == 0 || shard >= nshards)
		return -EINVAL;
	c->dist = *d;
	c->wrap = wrap;
	c->next = shard;
	c->stride = nshards;
	return 0;
}

bool
sm_stress_cursor_next(struct sm_stress_cursor *c, struct sm_rand *r, uint64_t *out)
{
	const struct sm_stress_dist *d = &c->dist;
	uint64_t span = d->max - d->min, v;
	double g;

	switch (d->kind) {
	case SM_STRESS_DIST_SEQ:
		/* span + 1 overflows only for the whole u64 range: then no wrap. */
		v = c->next;
		if (span != UINT64_MAX && v > span) {
			if (!c->wrap)
				return false;
			v %= span + 1;
		}
		c->next = v + c->stride;
		*out = d->min + v;
		return true;
	case SM_STRESS_DIST_UNIFORM:
		*out = span == UINT64_MAX ? sm_rand_next(r)
					  : d->min + sm_rand_below(r, span + 1);
		return true;
	case SM_STRESS_DIST_GAUSSIAN:
		g = d->mean + sm_stress_rng_gauss(r) * d->stdev;
		*out = g <= (double)d->min   ? d->min
		       : g >= (double)d->max ? d->max
					     : (uint64_t)llround(g);
		return true;
	case SM_STRESS_DIST_OTHER:
		*out = (uint64_t)sm_stress_xdist_next(&d->x, r, c->next++);
		return true;
	case SM_STRESS_DIST_FIXED:
	default:
		*out = d->min;
		return true;
	}
}

void
sm_stress_pace_init(struct sm_stress_pace *p, double rate, unsigned nshards, uint64_t start_ns)
{
	p->start_ns = start_ns;
	p->interval_ns = rate > 0 ? 1e9 * (double)nshards / rate : 0;
	p->issued = 0;
}
