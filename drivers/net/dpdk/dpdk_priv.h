/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_DPDK_PRIV_H
#define SM_DPDK_PRIV_H

/* The DPDK driver's option parsing; no DPDK types, so it is testable alone. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Fault injection on one path, in percent of frames (0: off). */
struct dpdk_fault {
	double drop, dup, reorder, delay;
};

struct dpdk_opts {
	char **words; /* every word of dpdk_args (one allocation with the text) */
	int nwords;
	char **eal; /* the EAL part: words before a lone "--" */
	int neal;
	uint32_t ip;   /* host order */
	bool ip_given; /* by --ipv4 (else from default_ip) */
	uint32_t netmask;
	uint32_t gateway;
	uint16_t port_id;
	struct dpdk_fault rx, tx;
	uint64_t delay_ns; /* how long a delayed frame waits */
};

/*
 * Split @s into words the way a POSIX shell does for plain words: blanks
 * separate, '...' is literal, "..." keeps blanks and honours \" \\ \$ \`,
 * a backslash outside quotes escapes the next character. Sets *@words (one
 * sm_malloc'ed block, free with sm_free) and *@n. -EINVAL with a message
 * for an unterminated quote.
 */
int
dpdk_args_split(const char *s, char ***words, int *n, char *err, size_t errlen);

/*
 * Parse dpdk_args into @o: EAL words, then after "--" the driver options.
 * @default_ip is used when there is no --ipv4 (it must then be a usable
 * unicast IPv4 address). -EINVAL with a message naming the fix.
 */
int
dpdk_opts_parse(const char *args, const char *default_ip, struct dpdk_opts *o, char *err,
		size_t errlen);

void
dpdk_opts_free(struct dpdk_opts *o);

/* True when one of the EAL words is @name or starts with "@name=". */
bool
dpdk_eal_has(const struct dpdk_opts *o, const char *name);

#endif /* SM_DPDK_PRIV_H */
