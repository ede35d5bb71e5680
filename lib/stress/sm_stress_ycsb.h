/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * YCSB's core workloads (brianfrankcooper/YCSB, core/.../CoreWorkload.java)
 * on the stress engine: the command line `shardmark ycsb load|run [DB] -P
 * FILE -p key=value -threads N -target R -s`, as YCSB's own bin/ycsb takes
 * it, its properties, its key choosers (uniform, zipfian, latest, hotspot,
 * sequential) with YCSB's scrambled zipfian generator and constants, and
 * its output ([OVERALL], RunTime(ms) ...).
 */
#ifndef SM_STRESS_YCSB_H
#define SM_STRESS_YCSB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <stdio.h>

#include "sm_random.h"

struct sm_stress_settings;

/* YCSB's constants (ZipfianGenerator.java, ScrambledZipfianGenerator.java). */
#define SM_YCSB_ZIPFIAN_CONSTANT 0.99
#define SM_YCSB_SCRAMBLED_ITEM_COUNT 10000000000000000ll
#define SM_YCSB_SCRAMBLED_ZETAN 26.46902820178302

/* YCSB's Utils.fnvhash64(): FNV-1a over the 8 bytes of @v, then Math.abs. */
int64_t
sm_ycsb_fnvhash64(int64_t v);

/*
 * YCSB's ZipfianGenerator over [base, base + items): Gray et al.'s method
 * ("Quickly Generating Billion-Record Synthetic Databases", SIGMOD 1994).
 * zetan can be given (the scrambled one's constant) or computed; a larger
 * item count later extends it incrementally, as YCSB does.
 */
struct sm_ycsb_zipf {
	int64_t base, items;
	double theta, zeta2theta, alpha, zetan, eta;
	int64_t countforzeta;
};

/* Set up @z; @zetan 0: compute zeta(items) (O(items) once). */
void
sm_ycsb_zipf_init(struct sm_ycsb_zipf *z, int64_t min, int64_t max, double theta, double zetan);

/* The next value with @itemcount items (>= the last count: zeta grows incrementally). */
int64_t
sm_ycsb_zipf_next(struct sm_ycsb_zipf *z, struct sm_rand *r, int64_t itemcount);

/* YCSB's zeta(n, theta) from st items' @initial sum (ZipfianGenerator.zetastatic()). */
double
sm_ycsb_zeta(int64_t st, int64_t n, double theta, double initial);

/* ScrambledZipfianGenerator over [min, max]: min + fnvhash64(zipf()) % (max - min + 1). */
int64_t
sm_ycsb_scrambled_next(struct sm_ycsb_zipf *z, struct sm_rand *r, int64_t min, int64_t max);

/* The scrambled generator's inner zipfian (shared by every shard: read-only). */
void
sm_ycsb_scrambled_init(struct sm_ycsb_zipf *z);

/*
 * YCSB's key name (CoreWorkload.buildKeyName()): "user" + the key number
 * (fnvhash64'd unless insertorder=ordered), zero-padded to @zeropadding
 * digits. Returns its length.
 */
size_t
sm_ycsb_key_name(int64_t keynum, bool ordered, unsigned zeropadding, char *out, size_t cap);

/*
 * Parse `load|run [DB] -P FILE... -p k=v... -threads N -target R -s -t
 * -load` (@argv after `shardmark ycsb`) into @s for the engine: -EINVAL with
 * the message in @err for a bad command line or property, -errno for a
 * file that cannot be read.
 */
int
sm_stress_ycsb_parse(int argc, char **argv, struct sm_stress_settings *s, char *err,
		     size_t errlen);

/* Release the YCSB state @s owns (its s->ycsb). */
void
sm_stress_ycsb_free(struct sm_stress_settings *s);

/* The help text of `shardmark ycsb`. */
void
sm_stress_ycsb_usage(FILE *f);

#endif /* SM_STRESS_YCSB_H */
