/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The DPDK driver's flow hash and owner rule (drivers/net/dpdk/dpdk_rss.h).
 *
 * Steering is only right when the software hash is bit for bit the NIC's:
 * the driver programs the NIC with dpdk_rss_key and a RETA whose entry i is
 * (i % DPDK_RETA_SIZE) % queues, uses the NIC's hash when it has one, and
 * computes dpdk_flow_hash() itself otherwise (net_tap, and when it picks a
 * source port for an outgoing connection so that the replies come back to
 * the connecting shard). So this checks:
 *
 *  - dpdk_flow_hash() against the Toeplitz verification vectors NICs are
 *    tested with (Microsoft's key, IPv4 with TCP ports), and against a
 *    bitwise Toeplitz over the bytes of a frame as they are on the wire,
 *    written from Microsoft's pseudocode, with the shipped key;
 *  - dpdk_hash_owner() is always a valid shard and spreads random flows
 *    evenly enough over 2, 4 and 14 shards;
 *  - dpdk_hash_owner() is the queue a NIC picks from the RETA the driver
 *    programs, for RETAs of 128, 256 and 512 entries;
 *  - a source port chosen the way connect_pick() does it makes the reply
 *    segment, hashed from its wire bytes, land on the connecting shard.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <arpa/inet.h>

#include <cmocka.h>

#include "sm_random.h"

#include "dpdk_rss.h"

#define IP4(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

/*
 * Microsoft's default RSS key and the "IPv4 with TCP" rows of the RSS
 * verification suite: "Verifying the RSS Hash Calculation",
 * https://learn.microsoft.com/windows-hardware/drivers/network/verifying-the-rss-hash-calculation
 * (also the Intel 82599 datasheet, 7.1.2.8.3 "RSS Verification Suite", and
 * DPDK's app/test/test_thash.c, v4_tbl[].hash_l3l4, which has the same
 * numbers). The tables list the destination first; the hash input is the
 * packet's source address, destination address, source port, destination
 * port. rte_softrss() reads the key as 32-bit words, hence the alignment.
 */
static const uint8_t ms_key[40] __attribute__((aligned(4))) = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
	0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
	0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

static const struct {
	uint32_t dst_ip, src_ip;
	uint16_t dst_port, src_port;
	uint32_t hash;
} ms_ipv4_tcp[] = {
	{ IP4(161, 142, 100, 80), IP4(66, 9, 149, 187), 1766, 2794, 0x51ccc178 },
	{ IP4(65, 69, 140, 83), IP4(199, 92, 111, 2), 4739, 14230, 0xc626b0ea },
	{ IP4(12, 22, 207, 184), IP4(24, 19, 198, 95), 38024, 12898, 0x5c2b394a },
	{ IP4(209, 142, 163, 6), IP4(38, 27, 205, 30), 2217, 48228, 0xafc7327f },
	{ IP4(202, 188, 127, 2), IP4(153, 39, 163, 191), 1303, 44251, 0x10e828a2 },
};

/* Deterministic pseudo-random numbers (splitmix64). */
static uint64_t rng_state;

static uint64_t
rng(void)
{
	return sm_splitmix64(&rng_state);
}

/*
 * Toeplitz as Microsoft's "RSS Hashing Functions" page defines it: for each
 * input bit from the left, when it is 1 xor in the leftmost 32 bits of the
 * key, then shift the key left by one bit.
 */
static uint32_t
toeplitz_ref(const uint8_t key[40], const uint8_t *in, size_t n)
{
	uint32_t result = 0, k = (uint32_t)key[0] << 24 | key[1] << 16 | key[2] << 8 | key[3];
	unsigned next = 32; /* the key bit shifted in next */
	size_t i;
	int b;

	for (i = 0; i < n; i++) {
		for (b = 7; b >= 0; b--) {
			if ((in[i] >> b) & 1)
				result ^= k;
			k <<= 1;
			if (next < 320)
				k |= (key[next / 8] >> (7 - next % 8)) & 1;
			next++;
		}
	}
	return result;
}

static void
put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* The NIC's hash input for TCP/IPv4: IP @12-19, then TCP @0-3, wire order. */
static uint32_t
wire_hash(const uint8_t key[40], uint32_t sip, uint32_t dip, uint16_t sport, uint16_t dport)
{
	uint8_t in[12];

	put32(in, sip);
	put32(in + 4, dip);
	put16(in + 8, sport);
	put16(in + 10, dport);
	return toeplitz_ref(key, in, sizeof(in));
}

static void
test_ms_vectors(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ms_ipv4_tcp) / sizeof(ms_ipv4_tcp[0]); i++) {
		uint32_t sip = ms_ipv4_tcp[i].src_ip, dip = ms_ipv4_tcp[i].dst_ip;
		uint16_t sport = ms_ipv4_tcp[i].src_port, dport = ms_ipv4_tcp[i].dst_port;

		assert_int_equal(dpdk_flow_hash(ms_key, sip, dip, sport, dport),
				 ms_ipv4_tcp[i].hash);
		/* The reference the later tests rely on passes the same vectors. */
		assert_int_equal(wire_hash(ms_key, sip, dip, sport, dport), ms_ipv4_tcp[i].hash);
		/* Source and destination are not interchangeable. */
		assert_int_not_equal(dpdk_flow_hash(ms_key, dip, sip, dport, sport),
				     ms_ipv4_tcp[i].hash);
	}
}

/* The shipped key: dpdk_flow_hash() is the NIC's hash over the wire bytes. */
static void
test_shipped_key_matches_reference(void **state)
{
	int i;

	(void)state;
	rng_state = 1;
	assert_int_equal(dpdk_flow_hash(dpdk_rss_key, 0, 0, 0, 0), 0);
	assert_int_equal(
		dpdk_flow_hash(dpdk_rss_key, UINT32_MAX, UINT32_MAX, UINT16_MAX, UINT16_MAX),
		wire_hash(dpdk_rss_key, UINT32_MAX, UINT32_MAX, UINT16_MAX, UINT16_MAX));
	for (i = 0; i < 20000; i++) {
		uint64_t r = rng();
		uint32_t sip = (uint32_t)rng(), dip = (uint32_t)(r >> 32);
		uint16_t sport = (uint16_t)r, dport = (uint16_t)(r >> 16);

		assert_int_equal(dpdk_flow_hash(dpdk_rss_key, sip, dip, sport, dport),
				 wire_hash(dpdk_rss_key, sip, dip, sport, dport));
	}
}

static void
test_owner_range_and_spread(void **state)
{
	static const unsigned shard_counts[] = { 2, 4, 14 };
	unsigned counts[14], n, s, t, i;
	const unsigned tuples = 10000;
	uint32_t h;

	(void)state;
	/* Any hash maps to a valid shard, for every shard count up to 128. */
	for (n = 1; n <= 128; n++) {
		assert_int_equal(dpdk_hash_owner(0, n), 0);
		assert_true(dpdk_hash_owner(UINT32_MAX, n) < n);
		for (h = 0; h < 1024; h++)
			assert_true(dpdk_hash_owner(h * 2654435761u, n) < n);
	}
	for (h = 0; h < 1000; h++)
		assert_int_equal(dpdk_hash_owner(h * 2654435761u, 1), 0);

	/* Random 4-tuples spread within 0.5x..1.5x of an even share. */
	for (t = 0; t < sizeof(shard_counts) / sizeof(shard_counts[0]); t++) {
		n = shard_counts[t];
		memset(counts, 0, sizeof(counts));
		rng_state = 42;
		for (i = 0; i < tuples; i++) {
			uint64_t r = rng();
			unsigned o = dpdk_hash_owner(
				dpdk_flow_hash(dpdk_rss_key, (uint32_t)rng(), (uint32_t)(r >> 32),
					       (uint16_t)r, (uint16_t)(r >> 16)),
				n);

			assert_true(o < n);
			counts[o]++;
		}
		for (s = 0; s < n; s++) {
			assert_true(counts[s] * n * 2 >= tuples);
			assert_true(counts[s] * n * 2 <= tuples * 3);
		}
	}
}

/* The queue a NIC picks from the RETA the driver programs is the owner. */
static void
test_owner_is_reta_queue(void **state)
{
	static const unsigned reta_sizes[] = { 128, 256, 512 };
	static const unsigned nqs[] = { 1, 2, 3, 4, 5, 7, 8, 14, 16, 31, 64, 100, 127, 128 };
	static const uint32_t edges[] = {
		0,	   1, 127, 128, 129, 511, 512, 513, 0x7fffffff, 0x80000000, UINT32_MAX - 1,
		UINT32_MAX
	};
	uint16_t reta[512];
	unsigned r, q, i, size, nq;

	(void)state;
	for (r = 0; r < sizeof(reta_sizes) / sizeof(reta_sizes[0]); r++) {
		size = reta_sizes[r];
		for (q = 0; q < sizeof(nqs) / sizeof(nqs[0]); q++) {
			nq = nqs[q];
			for (i = 0; i < size; i++)
				reta[i] = (uint16_t)((i % DPDK_RETA_SIZE) % nq);
			for (i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
				assert_int_equal(reta[edges[i] % size],
						 dpdk_hash_owner(edges[i], nq));
			rng_state = size * 1000 + nq;
			for (i = 0; i < 20000; i++) {
				uint32_t h = (uint32_t)rng();

				assert_int_equal(reta[h % size], dpdk_hash_owner(h, nq));
			}
			for (i = 0; i < 2000; i++) {
				uint64_t x = rng();
				uint32_t h = dpdk_flow_hash(dpdk_rss_key, (uint32_t)rng(),
							    (uint32_t)(x >> 32), (uint16_t)x,
							    (uint16_t)(x >> 16));

				assert_int_equal(reta[h % size], dpdk_hash_owner(h, nq));
			}
		}
	}
}

/*
 * An Ethernet + IPv4 + TCP frame from @sip:@sport to @dip:@dport, and the
 * owner the driver's steer() gives it (same extraction: addresses with
 * memcpy + ntohl, ports from the TCP header's bytes).
 */
static unsigned
steer_frame(uint8_t *f, size_t len, unsigned shards)
{
	uint32_t sip, dip, ihl;
	uint16_t sport, dport;

	assert_true(len >= 54);
	assert_int_equal((f[12] << 8) | f[13], 0x0800);
	assert_int_equal(f[23], 6);
	ihl = (uint32_t)(f[14] & 0xf) * 4;
	memcpy(&sip, f + 26, 4);
	memcpy(&dip, f + 30, 4);
	sport = (uint16_t)(f[14 + ihl] << 8 | f[15 + ihl]);
	dport = (uint16_t)(f[16 + ihl] << 8 | f[17 + ihl]);
	return dpdk_hash_owner(dpdk_flow_hash(dpdk_rss_key, ntohl(sip), ntohl(dip), sport, dport),
			       shards);
}

static void
build_frame(uint8_t f[54], uint32_t sip, uint32_t dip, uint16_t sport, uint16_t dport)
{
	memset(f, 0, 54);
	f[12] = 0x08; /* IPv4 */
	f[14] = 0x45; /* version 4, 20-byte header */
	put16(f + 16, 40);
	f[22] = 64;
	f[23] = 6; /* TCP */
	put32(f + 26, sip);
	put32(f + 30, dip);
	put16(f + 34, sport);
	put16(f + 36, dport);
	f[46] = 0x50; /* data offset 5 */
	f[47] = 0x12; /* SYN+ACK */
}

/*
 * connect_pick() scans local ports from 32768 for one whose reply tuple
 * (remote -> local) hashes to the connecting shard. Every shard finds such
 * ports, about 1/shards of them, and the reply frame built from the chosen
 * port is steered to that shard, by steer()'s extraction and by the NIC's
 * hash over the frame's bytes with the RETA the driver programs.
 */
static void
test_reply_tuple_owner(void **state)
{
	static const unsigned shard_counts[] = { 2, 4, 14 };
	static const uint32_t remotes[] = { IP4(10, 0, 0, 1), IP4(192, 168, 7, 9),
					    IP4(172, 16, 200, 33) };
	static const uint16_t rports[] = { 9042, 8000, 80, 443, 19042 };
	const uint32_t local = IP4(10, 0, 0, 2);
	const unsigned lo = 32768, hi = 61000, nports = hi - lo;
	unsigned counts[14], first[14], t, ri, pi, n, s, p, o;
	uint8_t f[54];
	uint16_t reta[128];

	(void)state;
	for (t = 0; t < sizeof(shard_counts) / sizeof(shard_counts[0]); t++) {
		n = shard_counts[t];
		for (p = 0; p < 128; p++)
			reta[p] = (uint16_t)((p % DPDK_RETA_SIZE) % n);
		for (ri = 0; ri < sizeof(remotes) / sizeof(remotes[0]); ri++) {
			for (pi = 0; pi < sizeof(rports) / sizeof(rports[0]); pi++) {
				memset(counts, 0, sizeof(counts));
				for (s = 0; s < n; s++)
					first[s] = 0;
				for (p = lo; p < hi; p++) {
					o = dpdk_hash_owner(dpdk_flow_hash(dpdk_rss_key,
									   remotes[ri], local,
									   rports[pi], (uint16_t)p),
							    n);
					assert_true(o < n);
					if (counts[o]++ == 0)
						first[o] = p;
				}
				for (s = 0; s < n; s++) {
					/* a port for every shard, soon enough */
					assert_true(counts[s] * n * 2 >= nports);
					assert_true(counts[s] * n * 2 <= nports * 3);
					assert_true(first[s] >= lo && first[s] < lo + 40 * n);
					/* the peer's reply to the chosen port */
					build_frame(f, remotes[ri], local, rports[pi],
						    (uint16_t)first[s]);
					assert_int_equal(steer_frame(f, sizeof(f), n), s);
					assert_int_equal(
						reta[toeplitz_ref(dpdk_rss_key, f + 26, 12) % 128],
						s);
				}
			}
		}
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ms_vectors),
		cmocka_unit_test(test_shipped_key_matches_reference),
		cmocka_unit_test(test_owner_range_and_spread),
		cmocka_unit_test(test_owner_is_reta_queue),
		cmocka_unit_test(test_reply_tuple_owner),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
