/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * scylla-bench's modes on the stress engine (scylladb/scylla-bench):
 * `shardmark scylla-bench -mode write|read|counter_update|counter_read|scan
 * -workload sequential|uniform|timeseries ...` with its flags, its schema
 * (scylla_bench.test (pk bigint, ck bigint, v blob), test_counters), its
 * queries and its output layout (Configuration, the interval table,
 * Results with raw and c-o fixed latency).
 */
#ifndef SM_STRESS_SB_H
#define SM_STRESS_SB_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct sm_stress_settings;

/* Parse scylla-bench's flags (@argv after `shardmark scylla-bench`) into @s; -EINVAL + @err. */
int
sm_stress_sb_parse(int argc, char **argv, struct sm_stress_settings *s, char *err,
		   size_t errlen);

/* Release what @s->sb owns. */
void
sm_stress_sb_free(struct sm_stress_settings *s);

void
sm_stress_sb_usage(FILE *f);

/*
 * Go's time.Duration.String() of @ns into @buf ("13.548303ms", "1m2.5s",
 * "456µs", "0s"); @round: first scylla-bench's Round() (results.Round: up
 * to one extra digit), as its interval lines print durations.
 */
const char *
sm_stress_sb_duration(int64_t ns, int round, char *buf, size_t len);

#endif /* SM_STRESS_SB_H */
