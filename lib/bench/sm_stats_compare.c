/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Run-to-run comparison: Welch's t-test on autocorrelation-corrected
 * means, moving-block bootstrap for percentiles. The approach is latte's
 * (pkolaczk/latte: src/stats.rs long_run_variance and t_test, "errors
 * corrected for autocorrelation using Wilks' method"); the code is ours.
 */

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sm_mem.h"
#include "sm_random.h"
#include "sm_stats_compare.h"

/* latte's BANDWIDTH_COEFF: lags up to n^0.66 capture the correlation without much noise. */
#define BANDWIDTH_COEFF 0.66

void
sm_stats_mean_of(const double *v, size_t n, struct sm_stats_mean *out)
{
	double mean = 0, var = 0, cov = 0, wsum = 1, bw, lrv;
	size_t i, lag, max_lag;

	memset(out, 0, sizeof(*out));
	out->n = (double)n;
	out->n_eff = (double)n;
	out->df = n > 1 ? (double)n - 1 : 1;
	if (n == 0)
		return;
	for (i = 0; i < n; i++)
		mean += v[i];
	mean /= (double)n;
	out->mean = mean;
	if (n < 2)
		return;
	for (i = 0; i < n; i++)
		var += (v[i] - mean) * (v[i] - mean);
	var /= (double)n;
	bw = pow((double)n, BANDWIDTH_COEFF);
	max_lag = (size_t)ceil(bw);
	if (max_lag > n)
		max_lag = n;
	for (lag = 1; lag < max_lag; lag++) {
		/* Hann taper: far lags are estimated from few pairs, so they weigh less */
		double w = 0.5 * (1.0 + cos(M_PI * (double)lag / bw)), c = 0;

		for (i = lag; i < n; i++)
			c += (v[i] - mean) * (v[i - lag] - mean);
		cov += 2.0 * c * w;
		wsum += 2.0 * w;
	}
	cov /= (double)n;
	/* a negative sum is chance at small n; we want the worst-case error */
	if (cov < 0)
		cov = 0;
	/*
	 * Deviations from the sample mean, not the true one, shrink every
	 * autocovariance by about lrv / n, so the weighted sum comes out
	 * short by wsum * lrv / n: 30 intervals and 9 lags miss a third of
	 * it, and a t-test on that flags 6% of equal runs at alpha 0.01.
	 * Undo it (latte's exp(inflation / n) does the same, less so); the
	 * floor keeps tiny samples from dividing by almost nothing.
	 */
	lrv = (var + cov) / fmax(1.0 - wsum / (double)n, 0.25);
	out->n_eff = lrv > 0 ? (double)n * var / lrv : (double)n;
	/*
	 * The estimate of lrv is itself noisy: a Tukey-Hanning lag window of
	 * width bw has about 8n / (3 bw) degrees of freedom (Priestley, 1981,
	 * the equivalent degrees of freedom of a spectral window), which at
	 * small n is fewer than n_eff and what the t-test must assume.
	 */
	out->df = out->n_eff - 1;
	if (cov > 0)
		out->df = fmin(out->df, 8.0 * (double)n / (3.0 * bw));
	out->std_err = sqrt(lrv / (double)n);
}

/* Regularized incomplete beta I_x(a, b) by Lentz's continued fraction. */
static double
betacf(double a, double b, double x)
{
	const double tiny = 1e-300, eps = 1e-14;
	double c = 1, d = 1 - (a + b) * x / (a + 1), h;
	int m;

	if (fabs(d) < tiny)
		d = tiny;
	d = 1 / d;
	h = d;
	for (m = 1; m <= 300; m++) {
		double m2 = 2.0 * m, num, del;

		num = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
		d = 1 + num * d;
		d = fabs(d) < tiny ? tiny : d;
		c = 1 + num / c;
		c = fabs(c) < tiny ? tiny : c;
		d = 1 / d;
		h *= d * c;
		num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
		d = 1 + num * d;
		d = fabs(d) < tiny ? tiny : d;
		c = 1 + num / c;
		c = fabs(c) < tiny ? tiny : c;
		d = 1 / d;
		del = d * c;
		h *= del;
		if (fabs(del - 1) < eps)
			break;
	}
	return h;
}

static double
ibeta(double a, double b, double x)
{
	double lb;

	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	lb = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
	if (x < (a + 1) / (a + b + 2))
		return exp(lb) * betacf(a, b, x) / a;
	return 1 - exp(lb) * betacf(b, a, 1 - x) / b;
}

double
sm_stats_t_cdf(double t, double df)
{
	double x = df / (df + t * t), tail = 0.5 * ibeta(df / 2, 0.5, x);

	return t >= 0 ? 1 - tail : tail;
}

double
sm_stats_t_quantile(double p, double df)
{
	double lo = -1e3, hi = 1e3;
	int i;

	/* bisection: the CDF is monotonic and 100 halvings reach double precision */
	for (i = 0; i < 100; i++) {
		double mid = (lo + hi) / 2;

		if (sm_stats_t_cdf(mid, df) < p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

const char *
sm_stats_verdict_name(enum sm_stats_verdict v)
{
	switch (v) {
	case SM_VERDICT_SAME:
		return "no change";
	case SM_VERDICT_BETTER:
		return "better";
	case SM_VERDICT_WORSE:
		return "worse";
	default:
		return "n/a";
	}
}

static void
verdict(struct sm_stats_cmp *o, bool higher_better)
{
	o->significant = o->lo > 0 || o->hi < 0;
	if (!o->significant)
		o->verdict = SM_VERDICT_SAME;
	else
		o->verdict =
			(o->change > 0) == higher_better ? SM_VERDICT_BETTER : SM_VERDICT_WORSE;
}

void
sm_stats_welch(const struct sm_stats_mean *a, const struct sm_stats_mean *b, double conf,
	       bool higher_better, struct sm_stats_cmp *o)
{
	double ea = a->std_err * a->std_err, eb = b->std_err * b->std_err, se = sqrt(ea + eb);
	double fa = a->df >= 1 ? a->df : 1, fb = b->df >= 1 ? b->df : 1, df, q, d;

	memset(o, 0, sizeof(*o));
	o->a = a->mean;
	o->b = b->mean;
	o->method = "welch";
	d = b->mean - a->mean;
	o->change = a->mean != 0 ? d / fabs(a->mean) : 0;
	if (se == 0) {
		/* two constant runs: any difference is real, none is none */
		o->lo = o->hi = o->change;
		o->p = d == 0 ? 1 : 0;
		verdict(o, higher_better);
		return;
	}
	/*
	 * Welch-Satterthwaite with each mean's own degrees of freedom: latte
	 * uses n - 1, which correlated samples do not have.
	 */
	df = (ea + eb) * (ea + eb) / (ea * ea / fa + eb * eb / fb);
	o->p = 2 * (1 - sm_stats_t_cdf(fabs(d) / se, df));
	q = sm_stats_t_quantile(1 - (1 - conf) / 2, df);
	o->lo = a->mean != 0 ? (d - q * se) / fabs(a->mean) : 0;
	o->hi = a->mean != 0 ? (d + q * se) / fabs(a->mean) : 0;
	verdict(o, higher_better);
}

/* The @pct percentile of the (value, count) pairs in @acc's bucket order. */
static double
pct_of(const struct sm_hdr *h, double pct)
{
	return (double)sm_hdr_value_at_percentile(h, pct);
}

/* One block-bootstrap draw of @s into @h (reset first). */
static void
draw(const struct sm_result_series *s, struct sm_hdr *h, struct sm_rand *rng, unsigned block)
{
	unsigned got = 0, i, k;

	sm_hdr_reset(h);
	while (got < s->n) {
		unsigned start = (unsigned)sm_rand_below(rng, s->n);

		for (k = 0; k < block && got < s->n; k++, got++) {
			unsigned iv = (start + k) %
				      s->n; /* circular blocks: every interval equally likely */

			for (i = s->off[iv]; i < s->off[iv + 1]; i++)
				sm_hdr_record_n(h, s->val[i], s->cnt[i]);
		}
	}
}

static int
cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

int
sm_stats_bootstrap_pct(const struct sm_result_series *a, const struct sm_result_series *b,
		       double pct, unsigned resamples, double conf, uint64_t seed,
		       struct sm_stats_cmp *o)
{
	struct sm_hdr ha, hb;
	struct sm_rand rng;
	double *ch, va, vb;
	unsigned i, ba, bb, n = 0;
	int ret = -ENOMEM;

	memset(o, 0, sizeof(*o));
	o->method = "bootstrap";
	o->p = -1;
	if (a->n == 0 || b->n == 0 || resamples == 0)
		return -EINVAL;
	o->a = va = pct_of(&a->total, pct) / 1e6;
	o->b = vb = pct_of(&b->total, pct) / 1e6;
	o->change = va != 0 ? (vb - va) / va : 0;
	ch = sm_malloc(resamples * sizeof(double));
	if (ch == NULL)
		return -ENOMEM;
	if (sm_hdr_init(&ha, a->total.lowest, a->total.highest, a->total.sig_figs) < 0)
		goto out_ch;
	if (sm_hdr_init(&hb, b->total.lowest, b->total.highest, b->total.sig_figs) < 0)
		goto out_ha;
	ba = (unsigned)ceil(cbrt((double)a->n));
	bb = (unsigned)ceil(cbrt((double)b->n));
	sm_rand_seed(&rng, seed);
	for (i = 0; i < resamples; i++) {
		double x, y;

		draw(a, &ha, &rng, ba);
		draw(b, &hb, &rng, bb);
		x = pct_of(&ha, pct);
		y = pct_of(&hb, pct);
		if (x > 0)
			ch[n++] = (y - x) / x;
	}
	if (n == 0) {
		o->lo = o->hi = o->change;
	} else {
		size_t lo, hi;

		qsort(ch, n, sizeof(double), cmp_double);
		lo = (size_t)floor((1 - conf) / 2 * (n - 1));
		hi = (size_t)ceil((1 - (1 - conf) / 2) * (n - 1));
		o->lo = ch[lo];
		o->hi = ch[hi < n ? hi : n - 1];
	}
	verdict(o, false);
	ret = 0;
	sm_hdr_fini(&hb);
out_ha:
	sm_hdr_fini(&ha);
out_ch:
	sm_free(ch);
	return ret;
}

int
sm_stats_compare_metric(const struct sm_result *ra, const struct sm_result_metric *ma,
			const struct sm_result *rb, const struct sm_result_metric *mb, double conf,
			unsigned resamples, uint64_t seed, struct sm_stats_cmp *o)
{
	struct sm_stats_mean a, b;

	if (ma->series >= 0 && mb->series >= 0 && ma->pct >= 0 && ma->pct < 100)
		return sm_stats_bootstrap_pct(&ra->series[ma->series], &rb->series[mb->series],
					      ma->pct, resamples, conf, seed, o);
	if (ma->nsamples >= 2 && mb->nsamples >= 2) {
		sm_stats_mean_of(ma->samples, ma->nsamples, &a);
		sm_stats_mean_of(mb->samples, mb->nsamples, &b);
		sm_stats_welch(&a, &b, conf, ma->higher_better, o);
		/* the figure shown is the run's own (a percentile of all, not a mean) */
		return 0;
	}
	if (ma->sd >= 0 && mb->sd >= 0 && ma->n > 1 && mb->n > 1) {
		a = (struct sm_stats_mean){ ma->value, ma->sd / sqrt(ma->n), ma->n, ma->n,
					    ma->n - 1 };
		b = (struct sm_stats_mean){ mb->value, mb->sd / sqrt(mb->n), mb->n, mb->n,
					    mb->n - 1 };
		sm_stats_welch(&a, &b, conf, ma->higher_better, o);
		o->method = "welch (median/MAD)";
		return 0;
	}
	memset(o, 0, sizeof(*o));
	o->a = ma->value;
	o->b = mb->value;
	o->change = ma->value != 0 ? (mb->value - ma->value) / fabs(ma->value) : 0;
	o->lo = o->hi = o->change;
	o->p = -1;
	o->method = "none";
	o->verdict = SM_VERDICT_NA;
	return 0;
}
