/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FUZZ_H
#define FUZZ_H

/*
 * What every harness shares: a check that turns a broken invariant into a
 * crash the fuzzer keeps, and a reader that takes fields off the front of
 * the input (zeros once it runs out, so every input means something).
 */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define FUZZ_CHECK(cond)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

struct fuzz_in {
	const uint8_t *p;
	size_t len;
};

static inline uint8_t
fuzz_u8(struct fuzz_in *in)
{
	if (in->len == 0)
		return 0;
	in->len--;
	return *in->p++;
}

static inline uint16_t
fuzz_u16(struct fuzz_in *in)
{
	uint16_t v = fuzz_u8(in);

	return (uint16_t)(v << 8 | fuzz_u8(in));
}

static inline uint32_t
fuzz_u32(struct fuzz_in *in)
{
	uint32_t v = fuzz_u16(in);

	return v << 16 | fuzz_u16(in);
}

/* Up to @n bytes off the front; *@got says how many there were. */
static inline const uint8_t *
fuzz_bytes(struct fuzz_in *in, size_t n, size_t *got)
{
	const uint8_t *p = in->p;

	if (n > in->len)
		n = in->len;
	in->p += n;
	in->len -= n;
	*got = n;
	return p;
}

#endif /* FUZZ_H */
