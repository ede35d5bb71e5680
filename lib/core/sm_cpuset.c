/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <string.h>

#include "sm_shard.h"

/*
 * Parse a decimal CPU number at *s. Digits only: no sign, no whitespace, so
 * strtoul's leniency ("+1", " 2") cannot slip through. Values >= @ncpus are
 * rejected as soon as they are seen, which also rules out overflow.
 */
static int
sm_cpuset_number(const char **s, unsigned ncpus, unsigned *out)
{
	const char *p = *s;
	unsigned long v = 0;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	while (*p >= '0' && *p <= '9') {
		v = v * 10 + (unsigned long)(*p - '0');
		if (v >= ncpus)
			return -EINVAL;
		p++;
	}
	*s = p;
	*out = (unsigned)v;
	return 0;
}

int
sm_cpuset_parse(const char *list, uint8_t *cpus, unsigned ncpus)
{
	const char *s = list;
	unsigned lo, hi, cpu;
	int count = 0;

	if (list == NULL || cpus == NULL || ncpus == 0)
		return -EINVAL;
	memset(cpus, 0, (ncpus + 7) / 8);

	for (;;) {
		if (sm_cpuset_number(&s, ncpus, &lo) < 0)
			goto clear_set;
		hi = lo;
		if (*s == '-') {
			s++;
			if (sm_cpuset_number(&s, ncpus, &hi) < 0 || hi < lo)
				goto clear_set;
		}
		for (cpu = lo; cpu <= hi; cpu++) {
			if (!(cpus[cpu / 8] & (1u << (cpu % 8)))) {
				cpus[cpu / 8] |= (uint8_t)(1u << (cpu % 8));
				count++;
			}
		}
		if (*s == '\0')
			return count;
		if (*s != ',')
			goto clear_set;
		s++;
	}

clear_set:
	/* Leave no half-parsed set behind for a caller that ignores the error. */
	memset(cpus, 0, (ncpus + 7) / 8);
	return -EINVAL;
}
