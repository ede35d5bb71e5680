/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_BYTEORDER_H
#define SM_BYTEORDER_H

/*
 * Big-endian (network order) loads and stores on byte pointers, for wire
 * formats and sortable encodings: fields there have no alignment, so these
 * go byte by byte and compilers fold them into one load and bswap (as
 * DPDK's rte_byteorder.h does for aligned values). One copy for every
 * library: the CQL frame, TCP/IP headers, store cells, HDR histograms.
 */

#include <stdint.h>

static inline uint16_t
sm_get_be16(const void *ptr)
{
	const uint8_t *p = ptr;

	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t
sm_get_be32(const void *ptr)
{
	const uint8_t *p = ptr;

	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t
sm_get_be64(const void *ptr)
{
	const uint8_t *p = ptr;

	return (uint64_t)sm_get_be32(p) << 32 | sm_get_be32(p + 4);
}

static inline void
sm_put_be16(void *ptr, uint16_t v)
{
	uint8_t *p = ptr;

	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void
sm_put_be32(void *ptr, uint32_t v)
{
	uint8_t *p = ptr;

	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline void
sm_put_be64(void *ptr, uint64_t v)
{
	uint8_t *p = ptr;

	sm_put_be32(p, (uint32_t)(v >> 32));
	sm_put_be32(p + 4, (uint32_t)v);
}

/* The low @n bytes (1..8) of @v, most significant first. */
static inline void
sm_put_be_n(void *ptr, uint64_t v, unsigned n)
{
	uint8_t *p = ptr;

	while (n-- > 0) {
		p[n] = (uint8_t)v;
		v >>= 8;
	}
}

/* @n bytes (0..8), most significant first, as an unsigned value. */
static inline uint64_t
sm_get_be_n(const void *ptr, unsigned n)
{
	const uint8_t *p = ptr;
	uint64_t v = 0;
	unsigned i;

	for (i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

#endif /* SM_BYTEORDER_H */
