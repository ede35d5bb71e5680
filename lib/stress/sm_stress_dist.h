/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every distribution cassandra-stress has, for user profiles (columnspec
 * size, population and cluster; insert partitions and select) and -pop:
 * FIXED(v), UNIFORM(a..b), GAUSSIAN|GAUSS|NORMAL|NORM(a..b[,stdvrng]) and
 * (a..b,mean,stdev), EXP(a..b), EXTREME|EXTR|WEIBULL(a..b,shape),
 * QEXTREME|QEXTR(a..b,shape,quantas), SEQ(a..b), and any of them inverted
 * with a leading ~ (min + max - v). The shapes are cassandra-stress's
 * (scylladb/cassandra-stress, settings/OptionDistribution.java): EXP's mean
 * and EXTREME's scale put the range's end at the 1 - sqrt(1/(max-min))
 * quantile, and the sample is offset by min and clamped to the range
 * (generate/DistributionOffsetApache.java).
 *
 * cassandra-stress maps "weibull" to a missing entry of its table (it
 * refuses WEIBULL(...) with "Illegal distribution type"); its help lists it
 * as an alias of EXTREME, which is what shardmark takes it for.
 */
#ifndef SM_STRESS_DIST_H
#define SM_STRESS_DIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sm_random.h"

enum sm_stress_xdist_kind {
	SM_STRESS_XD_FIXED,
	SM_STRESS_XD_UNIFORM,
	SM_STRESS_XD_GAUSSIAN,
	SM_STRESS_XD_EXP,
	SM_STRESS_XD_EXTREME,
	SM_STRESS_XD_QEXTREME,
	SM_STRESS_XD_SEQ,
};

struct sm_stress_xdist {
	enum sm_stress_xdist_kind kind;
	int64_t min, max;
	double mean, stdev;  /* GAUSSIAN; EXP's mean */
	double shape, scale; /* EXTREME, QEXTREME (Weibull) */
	unsigned quantas;    /* QEXTREME */
	bool inverted;	     /* ~: min + max - v */
};

/*
 * Parse @spec (case-insensitive; k, m, b suffixes on bounds). 0, or -EINVAL
 * with the reason and the accepted forms in @err.
 */
int
sm_stress_xdist_parse(const char *spec, struct sm_stress_xdist *d, char *err, size_t errlen);

/* FIXED(@v). */
void
sm_stress_xdist_fixed(struct sm_stress_xdist *d, int64_t v);

/*
 * The next value from @r. SEQ has no state of its own here: it gives
 * min + @seq mod (max - min + 1), @seq being the caller's counter.
 */
int64_t
sm_stress_xdist_next(const struct sm_stress_xdist *d, struct sm_rand *r, uint64_t seq);

/*
 * The value a key fixes: the sample of a generator seeded from @h, so the
 * same @h always gives the same value (a read recomputes what was written).
 */
int64_t
sm_stress_xdist_at(const struct sm_stress_xdist *d, uint64_t h);

/* The spec as cassandra-stress prints it ("UNIFORM(1..10)", "~EXP(1..100)"). */
void
sm_stress_xdist_format(const struct sm_stress_xdist *d, char *buf, size_t len);

/*
 * A ratio distribution, "DIST/divisor" (insert's select: and row-population:
 * "fixed(1)/1", "uniform(1..10)/10"): a value over @divisor, in (0, 1].
 */
struct sm_stress_ratio {
	struct sm_stress_xdist dist;
	double divisor;
};

int
sm_stress_ratio_parse(const char *spec, struct sm_stress_ratio *rd, char *err, size_t errlen);

/* The next ratio from @r, clamped to [0, 1]. */
double
sm_stress_ratio_next(const struct sm_stress_ratio *rd, struct sm_rand *r);

#endif /* SM_STRESS_DIST_H */
