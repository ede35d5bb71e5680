/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_NET_DPDK_H
#define SM_NET_DPDK_H

/*
 * The DPDK network driver: DPDK poll-mode drivers (a NIC, or net_tap,
 * net_ring, net_memif virtual devices) under one lib/tcpip stack per
 * shard. Registers itself under the name "dpdk".
 */

struct sm_net_dpdk_opts {
	/*
	 * dpdk_args: EAL arguments, split shell-style, optionally followed by
	 * "--" and driver options (--ipv4 ADDR[/PREFIX], --gateway ADDR,
	 * --port-id N, fault injection: --rx-drop PCT, --rx-dup PCT,
	 * --rx-reorder PCT, --rx-delay PCT, the --tx-* equivalents, and
	 * --delay-us N for delayed frames).
	 */
	const char *args;
	/* The stack's address when dpdk_args has no --ipv4 (listen_address). */
	const char *default_ipv4;
	unsigned shards; /* shards the runtime will start */
};

/*
 * Give the driver its settings before probe(); the strings are copied.
 * Returns 0 or -ENOMEM.
 */
int
sm_net_dpdk_configure(const struct sm_net_dpdk_opts *o);

int
sm_net_dpdk_register(void);

/* "built with DPDK 22.11.11" (the DPDK the binary runs with), for version output. */
const char *
sm_net_dpdk_version(void);

#endif /* SM_NET_DPDK_H */
