/* SPDX-License-Identifier: BSD-3-Clause */
#include <endian.h>
#include <string.h>

#include "sm_mem.h"
#include "sm_store.h"
#include "sm_token.h"

__extension__ typedef unsigned __int128 sm_u128;

#define MURMUR_C1 0x87c37b91114253d5ull
#define MURMUR_C2 0x4cf5ad432745937full
#define TOKEN_BIAS (1ull << 63)

static inline uint64_t
rotl64(uint64_t x, unsigned r)
{
	return (x << r) | (x >> (64 - r));
}

static inline uint64_t
fmix64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	k ^= k >> 33;
	return k;
}

static inline uint64_t
load_le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

/* Cassandra reads tail bytes as Java (signed) bytes, so 0x80.. smear ones upwards. */
static inline uint64_t
sext8(uint8_t b)
{
	return (b & 0x80) ? (uint64_t)b | 0xffffffffffffff00ull : (uint64_t)b;
}

static inline uint64_t
mix_k1(uint64_t k1)
{
	k1 *= MURMUR_C1;
	k1 = rotl64(k1, 31);
	return k1 * MURMUR_C2;
}

static inline uint64_t
mix_k2(uint64_t k2)
{
	k2 *= MURMUR_C2;
	k2 = rotl64(k2, 33);
	return k2 * MURMUR_C1;
}

int64_t
sm_token_normalize(int64_t hash)
{
	return hash == INT64_MIN ? INT64_MAX : hash;
}

int64_t
sm_murmur3_token(const void *key, size_t len)
{
	const uint8_t *p = key, *tail;
	size_t nblocks = len / 16, tail_len = len % 16, i;
	uint64_t h1 = 0, h2 = 0, k1 = 0, k2 = 0;

	/* fmix64(0) == 0, so this is the plain hash; returning early keeps NULL + 0 out. */
	if (len == 0)
		return 0;
	tail = p + nblocks * 16;

	for (i = 0; i < nblocks; i++) {
		k1 = load_le64(p + i * 16);
		k2 = load_le64(p + i * 16 + 8);

		h1 ^= mix_k1(k1);
		h1 = rotl64(h1, 27);
		h1 += h2;
		h1 = h1 * 5 + 0x52dce729;

		h2 ^= mix_k2(k2);
		h2 = rotl64(h2, 31);
		h2 += h1;
		h2 = h2 * 5 + 0x38495ab5;
	}

	/* XOR is order-free, so loops replace the reference switch's fall-through. */
	k1 = 0;
	k2 = 0;
	for (i = 8; i < tail_len; i++)
		k2 ^= sext8(tail[i]) << (8 * (i - 8));
	if (tail_len > 8)
		h2 ^= mix_k2(k2);
	for (i = 0; i < tail_len && i < 8; i++)
		k1 ^= sext8(tail[i]) << (8 * i);
	if (tail_len > 0)
		h1 ^= mix_k1(k1);

	h1 ^= (uint64_t)len;
	h2 ^= (uint64_t)len;
	h1 += h2;
	h2 += h1;
	h1 = fmix64(h1);
	h2 = fmix64(h2);
	h1 += h2;

	return sm_token_normalize((int64_t)h1);
}

size_t
sm_partition_key_compose(uint8_t *buf, size_t len, const void *const *parts, const uint32_t *lens,
			 unsigned n)
{
	size_t need = 0, off = 0;
	unsigned i;

	if (n == 0)
		return 0;
	if (n == 1) {
		if (lens[0] <= len && lens[0] > 0)
			memcpy(buf, parts[0], lens[0]);
		return lens[0];
	}

	for (i = 0; i < n; i++) {
		if (lens[i] > UINT16_MAX)
			return SIZE_MAX;
		need += 2 + (size_t)lens[i] + 1;
	}
	if (need > len)
		return need;

	for (i = 0; i < n; i++) {
		buf[off++] = (uint8_t)(lens[i] >> 8);
		buf[off++] = (uint8_t)lens[i];
		if (lens[i] > 0)
			memcpy(buf + off, parts[i], lens[i]);
		off += lens[i];
		buf[off++] = 0;
	}
	return need;
}

static inline uint64_t
unbias(int64_t token)
{
	return (uint64_t)token + TOKEN_BIAS;
}

static inline int64_t
bias(uint64_t u)
{
	return (int64_t)(u - TOKEN_BIAS);
}

/* Bits of a biased token below the ignored MSBs: log2 of the period size P. */
static inline unsigned
period_bits(unsigned ignore_msb)
{
	return ignore_msb >= 64 ? 0 : 64 - ignore_msb;
}

/* Offsets within a period are < P; P itself (2^64 at ignore_msb 0) needs 128 bits. */
static inline uint64_t
period_mask(unsigned bits)
{
	return bits >= 64 ? UINT64_MAX : (1ull << bits) - 1;
}

/*
 * First offset in a period owned by @shard (<= nr_shards): the least o with
 * floor(o * nr_shards / P) >= shard, i.e. ceil(shard * P / nr_shards). For
 * shard == nr_shards this is P, the end of the last span.
 */
static inline sm_u128
span_start(unsigned shard, unsigned nr_shards, unsigned bits)
{
	return (((sm_u128)shard << bits) + nr_shards - 1) / nr_shards;
}

unsigned
sm_shard_of_token(int64_t token, unsigned nr_shards, unsigned ignore_msb)
{
	uint64_t b = unbias(token);

	b = ignore_msb >= 64 ? 0 : b << ignore_msb;
	return (unsigned)(((sm_u128)b * nr_shards) >> 64);
}

int64_t
sm_shard_span_end(int64_t token, unsigned nr_shards, unsigned ignore_msb)
{
	unsigned bits = period_bits(ignore_msb);
	uint64_t mask = period_mask(bits);
	uint64_t u = unbias(token);
	unsigned shard;
	uint64_t end;

	/*
	 * With one shard, or no offset bits left, shard 0 owns every period whole
	 * and the periods join into one span. Otherwise a period's last span is
	 * never shard 0's (offset P - 1 maps to shard >= 1) while the next period
	 * opens with shard 0's, so spans never join across periods.
	 */
	if (nr_shards <= 1 || bits == 0)
		return INT64_MAX;
	shard = sm_shard_of_token(token, nr_shards, ignore_msb);
	end = (uint64_t)(span_start(shard + 1, nr_shards, bits) - 1);
	return bias((u & ~mask) + end);
}

bool
sm_shard_next_token(int64_t from, unsigned shard, unsigned nr_shards, unsigned ignore_msb,
		    int64_t *out)
{
	unsigned bits = period_bits(ignore_msb);
	uint64_t mask = period_mask(bits);
	uint64_t u = unbias(from), base = u & ~mask, off = u & mask;
	sm_u128 start, end;

	if (shard >= nr_shards)
		return false;
	start = span_start(shard, nr_shards, bits);
	end = span_start(shard + 1, nr_shards, bits);
	if (start == end)
		return false; /* more shards than offsets: this one owns nothing */

	if (off < end) {
		*out = bias(base + (off > start ? off : (uint64_t)start));
		return true;
	}
	if (base == ~mask)
		return false; /* already in the last period */
	*out = bias(base + mask + 1 + (uint64_t)start);
	return true;
}

int64_t
sm_key_token(const struct sm_key *pk)
{
	const void *parts[SM_MAX_KEY_PARTS];
	uint32_t lens[SM_MAX_KEY_PARTS];
	uint8_t stack[1024], *buf = stack;
	size_t len;
	unsigned i;
	int64_t t;

	if (pk->n == 1)
		return sm_murmur3_token(pk->part[0].p, pk->part[0].len);
	for (i = 0; i < pk->n; i++) {
		parts[i] = pk->part[i].p;
		lens[i] = pk->part[i].len;
	}
	len = sm_partition_key_compose(buf, sizeof(stack), parts, lens, pk->n);
	if (SM_UNLIKELY(len > sizeof(stack))) {
		/* A long composite key (components up to 64 KiB): hash all of it,
		 * not a prefix, or its token would not be the drivers'. */
		if (len == SIZE_MAX || (buf = sm_malloc(len)) == NULL)
			return sm_murmur3_token(stack, 0); /* unframeable or no memory: the
							     write path refuses such keys */
		sm_partition_key_compose(buf, len, parts, lens, pk->n);
	}
	t = sm_murmur3_token(buf, len);
	if (buf != stack)
		sm_free(buf);
	return t;
}
