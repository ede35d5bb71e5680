/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_STATS_COMPARE_H
#define SM_STATS_COMPARE_H

/*
 * Is run B different from run A? Means of per-interval samples by Welch's
 * t-test with standard errors corrected for autocorrelation (a slow
 * interval is usually followed by another, so n intervals are worth fewer
 * independent ones); latency percentiles by a moving-block bootstrap over
 * intervals, whose histograms are merged, since a percentile of a run is
 * no mean of its intervals' percentiles.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sm_result.h"

/* A mean with its autocorrelation-corrected standard error. */
struct sm_stats_mean {
	double mean;
	double std_err;
	double n;     /* samples */
	double n_eff; /* effective sample size, <= n */
	double df;    /* degrees of freedom of std_err, for the t-test */
};

/*
 * Mean of @v[0..@n) and its error from the long-run variance: the sample
 * variance plus twice the autocovariances of lags 1..k, k = ceil(n^0.66),
 * tapered by a Hann window and floored at zero, with latte's small-sample
 * inflation replaced by a correction of the sample mean's bias (pkolaczk/
 * latte src/stats.rs, long_run_variance). n_eff is n times the plain
 * variance over the long-run one; df the fewer of n_eff - 1 and the lag
 * window's equivalent degrees of freedom. @n < 2 gives std_err 0.
 */
void
sm_stats_mean_of(const double *v, size_t n, struct sm_stats_mean *out);

/* Student's t CDF at @t with @df degrees of freedom (> 0). */
double
sm_stats_t_cdf(double t, double df);

/* The @p quantile (0 < p < 1) of Student's t with @df degrees of freedom. */
double
sm_stats_t_quantile(double p, double df);

enum sm_stats_verdict {
	SM_VERDICT_NA,	   /* no samples to test */
	SM_VERDICT_SAME,   /* no significant change */
	SM_VERDICT_BETTER, /* significant, in the metric's good direction */
	SM_VERDICT_WORSE,  /* significant regression */
};

struct sm_stats_cmp {
	double a, b;	  /* the figure in each run */
	double change;	  /* (b - a) / a */
	double lo, hi;	  /* confidence interval of @change */
	double p;	  /* two-sided p-value; < 0 for the bootstrap (interval only) */
	bool significant; /* the interval excludes 0 */
	enum sm_stats_verdict verdict;
	const char *method; /* "welch", "welch (median/MAD)", "bootstrap", "none" */
};

/* Verdict name for text and JSON: "no change", "better", "worse", "n/a". */
const char *
sm_stats_verdict_name(enum sm_stats_verdict v);

/*
 * Welch's t-test of @b against @a at confidence @conf (0.99: alpha 0.01),
 * Welch-Satterthwaite degrees of freedom from each mean's df.
 * The interval of the relative change is the difference's interval over
 * @a's mean. @higher_better sets the verdict's direction.
 */
void
sm_stats_welch(const struct sm_stats_mean *a, const struct sm_stats_mean *b, double conf,
	       bool higher_better, struct sm_stats_cmp *out);

/*
 * The @pct percentile of two series compared by a moving-block bootstrap:
 * @resamples times, each run's intervals are redrawn in blocks of
 * ceil(n^(1/3)) consecutive intervals (keeping their autocorrelation), the
 * drawn histograms merged and the percentile taken; the interval of the
 * relative change is the central @conf share of the resampled changes.
 * Seeded by @seed, so a comparison is repeatable. Returns 0, -EINVAL for
 * an empty series, or -ENOMEM.
 */
int
sm_stats_bootstrap_pct(const struct sm_result_series *a, const struct sm_result_series *b,
		       double pct, unsigned resamples, double conf, uint64_t seed,
		       struct sm_stats_cmp *out);

/*
 * Compare metric @ma of run A with @mb of run B: Welch on samples when both
 * have them (and the bootstrap of @sa/@sb for a percentile metric), Welch
 * on (value, sd, n) when both have only those, else the change alone with
 * verdict n/a. Returns 0 or -ENOMEM.
 */
int
sm_stats_compare_metric(const struct sm_result *ra, const struct sm_result_metric *ma,
			const struct sm_result *rb, const struct sm_result_metric *mb, double conf,
			unsigned resamples, uint64_t seed, struct sm_stats_cmp *out);

#endif /* SM_STATS_COMPARE_H */
