/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_DPDK_RSS_H
#define SM_DPDK_RSS_H

/*
 * The flow hash that decides which shard owns a TCP flow, in a header of
 * its own so the unit tests check it against the Toeplitz vectors that NICs
 * are verified with: where the NIC has RSS it is programmed with the same
 * key and a matching redirection table, so this software hash must give
 * exactly the NIC's value for the NIC's choice of queue to be the owner.
 */

#include <stdint.h>

#include <rte_thash.h>

/* Entries of the redirection table we program (and model in software). */
#define DPDK_RETA_SIZE 128

/*
 * The Toeplitz key Mellanox's Linux driver uses (and Seastar). Aligned:
 * rte_softrss() reads it as 32-bit words.
 */
static const uint8_t dpdk_rss_key[40] __attribute__((aligned(4))) = {
	0xd1, 0x81, 0xc6, 0x2c, 0xf7, 0xf4, 0xdb, 0x5b, 0x19, 0x83, 0xa2, 0xfc, 0x94, 0x3e,
	0x1a, 0xdb, 0xd9, 0x38, 0x9e, 0x6b, 0xd1, 0x03, 0x9c, 0x2c, 0xa7, 0x44, 0x99, 0xad,
	0x59, 0x3d, 0x56, 0xd9, 0xf3, 0x25, 0x3c, 0x06, 0x2a, 0xdc, 0x1f, 0xfc,
};

/*
 * Toeplitz hash of a received TCP/IPv4 segment's 4-tuple (host order), as
 * a NIC computes it for RTE_ETH_RSS_NONFRAG_IPV4_TCP: source address,
 * destination address, source port, destination port.
 */
static inline uint32_t
dpdk_flow_hash(const uint8_t key[40], uint32_t sip, uint32_t dip, uint16_t sport, uint16_t dport)
{
	uint32_t t[3] = { sip, dip, ((uint32_t)sport << 16) | dport };

	return rte_softrss(t, 3, key);
}

/* The shard a hash maps to: RETA entry (hash % size) holds entry % shards. */
static inline unsigned
dpdk_hash_owner(uint32_t h, unsigned shards)
{
	return (h % DPDK_RETA_SIZE) % shards;
}

#endif /* SM_DPDK_RSS_H */
