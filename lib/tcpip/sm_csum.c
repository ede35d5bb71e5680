/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Internet checksum (RFC 1071) and SipHash-2-4, the two pure functions
 * the stack is built on.
 */

#include <string.h>

#include "sm_tcpip_priv.h"

/*
 * One's-complement sums are byte-order independent (RFC 1071 2.B), so the
 * data is summed as native 64-bit words with an end-around carry and the
 * folded result is stored back natively: no byte swapping per word. All but
 * the last piece of a multi-piece sum must have even length.
 */
static inline uint64_t
add_carry(uint64_t sum, uint64_t w)
{
	sum += w;
	return sum + (sum < w);
}

uint64_t
sm_inet_csum_partial(const void *buf, size_t len, uint64_t sum)
{
	const uint8_t *p = buf;
	uint64_t w0, w1, w2, w3;

	while (len >= 32) {
		memcpy(&w0, p, 8);
		memcpy(&w1, p + 8, 8);
		memcpy(&w2, p + 16, 8);
		memcpy(&w3, p + 24, 8);
		sum = add_carry(sum, w0);
		sum = add_carry(sum, w1);
		sum = add_carry(sum, w2);
		sum = add_carry(sum, w3);
		p += 32;
		len -= 32;
	}
	while (len >= 8) {
		memcpy(&w0, p, 8);
		sum = add_carry(sum, w0);
		p += 8;
		len -= 8;
	}
	if (len) {
		/* The tail padded with zeros is the RFC's odd-byte rule in either byte order. */
		w0 = 0;
		memcpy(&w0, p, len);
		sum = add_carry(sum, w0);
	}
	return sum;
}

static inline uint16_t
fold16(uint64_t sum)
{
	sum = (sum & 0xffffffffu) + (sum >> 32);
	sum = (sum & 0xffffffffu) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

uint16_t
sm_inet_csum_fold(uint64_t sum)
{
	return (uint16_t)~fold16(sum);
}

uint16_t
sm_inet_csum(const void *buf, size_t len)
{
	return sm_inet_csum_fold(sm_inet_csum_partial(buf, len, 0));
}

uint64_t
sm_tcpip_pseudo_sum(uint32_t src, uint32_t dst, uint8_t proto, uint16_t len)
{
	uint8_t ph[12];

	sm_put_be32(ph, src);
	sm_put_be32(ph + 4, dst);
	ph[8] = 0;
	ph[9] = proto;
	sm_put_be16(ph + 10, len);
	return sm_inet_csum_partial(ph, sizeof(ph), 0);
}

/* SipHash-2-4 (Aumasson and Bernstein), the reference algorithm. */
#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                                   \
	do {                                                                                       \
		v0 += v1;                                                                          \
		v1 = ROTL(v1, 13);                                                                 \
		v1 ^= v0;                                                                          \
		v0 = ROTL(v0, 32);                                                                 \
		v2 += v3;                                                                          \
		v3 = ROTL(v3, 16);                                                                 \
		v3 ^= v2;                                                                          \
		v0 += v3;                                                                          \
		v3 = ROTL(v3, 21);                                                                 \
		v3 ^= v0;                                                                          \
		v2 += v1;                                                                          \
		v1 = ROTL(v1, 17);                                                                 \
		v1 ^= v2;                                                                          \
		v2 = ROTL(v2, 32);                                                                 \
	} while (0)

static inline uint64_t
le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

uint64_t
sm_tcpip_siphash(const uint8_t key[16], const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t k0 = le64(key), k1 = le64(key + 8);
	uint64_t v0 = 0x736f6d6570736575ull ^ k0;
	uint64_t v1 = 0x646f72616e646f6dull ^ k1;
	uint64_t v2 = 0x6c7967656e657261ull ^ k0;
	uint64_t v3 = 0x7465646279746573ull ^ k1;
	uint64_t b = (uint64_t)len << 56, m;
	size_t left = len & 7;

	for (const uint8_t *end = p + (len - left); p != end; p += 8) {
		m = le64(p);
		v3 ^= m;
		SIPROUND;
		SIPROUND;
		v0 ^= m;
	}
	for (size_t i = 0; i < left; i++)
		b |= (uint64_t)p[i] << (8 * i);
	v3 ^= b;
	SIPROUND;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}
