/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_TOKEN_H
#define SM_TOKEN_H

/*
 * Partition tokens and the shard that owns them, bit-exact with Cassandra's
 * Murmur3Partitioner and ScyllaDB's "biased-token-round-robin" sharding, so
 * that drivers routing by token and by shard land on the owning shard.
 * See reference/cql.md §2.2 and §3.5-3.6.
 *
 * Tokens are signed 64-bit values ordered as signed integers. Range helpers
 * treat every int64_t, INT64_MIN included, as a point of the token ring; only
 * sm_murmur3_token() never returns INT64_MIN.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ScyllaDB's default murmur3_partitioner_ignore_msb_bits (db/config.hh). */
#define SM_SHARDING_IGNORE_MSB 12

/*
 * Token of a serialized partition key: h1 of MurmurHash3_x64_128 with seed 0,
 * read as int64_t, with the Cassandra quirk that each tail byte (the len % 16
 * bytes after the last full block) is sign-extended before it is mixed in.
 * A hash of INT64_MIN is normalised to INT64_MAX (sm_token_normalize()).
 * The empty key gives 0, the plain hash, as ScyllaDB and the drivers do
 * (Cassandra alone special-cases it to the minimum token). @key may be NULL
 * when @len is 0. Multi-component keys must first go through
 * sm_partition_key_compose().
 */
int64_t
sm_murmur3_token(const void *key, size_t len);

/*
 * Map a raw 64-bit hash to a key token: INT64_MIN, which Cassandra and
 * ScyllaDB reserve as the minimum (before-all-keys) token, becomes INT64_MAX;
 * every other value is returned unchanged.
 */
int64_t
sm_token_normalize(int64_t hash);

/*
 * Build the byte string that is hashed for a partition key of @n components
 * (@parts[i], @lens[i] bytes each), the "legacy composite" form that ScyllaDB
 * hashes and drivers use as the routing key: one component is its raw bytes;
 * two or more are each framed as a big-endian uint16 length, the bytes, and
 * one 0x00 byte. Returns the number of bytes the result needs, like snprintf;
 * the result is written only if it fits in @len (otherwise @buf is untouched,
 * so @buf may be NULL with @len 0 to size a buffer). Returns SIZE_MAX, writing
 * nothing, if a component of a multi-component key is longer than UINT16_MAX
 * bytes, which the framing cannot express. @n == 0 gives the empty key (0).
 */
size_t
sm_partition_key_compose(uint8_t *buf, size_t len, const void *const *parts, const uint32_t *lens,
			 unsigned n);

/*
 * Shard that owns @token among @nr_shards (>= 1) shards, ScyllaDB's
 * biased-token-round-robin: b = (uint64_t)token + 2^63, b <<= @ignore_msb
 * (dropping the high bits), shard = (b * @nr_shards) >> 64 in 128 bits.
 * An @ignore_msb of 64 or more drops every bit, giving shard 0.
 */
unsigned
sm_shard_of_token(int64_t token, unsigned nr_shards, unsigned ignore_msb);

/*
 * Last token of the span (maximal run of consecutive tokens owned by one
 * shard) that contains @token: every t in [@token, result] has the shard of
 * @token, and result + 1, unless result is INT64_MAX, has another. O(1).
 *
 * Why this is cheap: with m = @ignore_msb the biased token
 * b = token + 2^63 splits into 2^m periods of P = 2^(64-m) tokens, b = k*P + o,
 * and the shift discards k, leaving shard floor(o * nr_shards / P). So every
 * period is a copy of one layout: one span per shard, in shard order, shard
 * s starting at offset ceil(s * P / nr_shards) (empty when nr_shards > P and
 * two starts coincide). Spans never join across periods, as a period ends
 * with a shard >= 1 and the next opens with shard 0, except when shard 0 owns
 * everything (nr_shards 1, or m >= 64): then the answer is INT64_MAX. That is
 * 2^m * nr_shards spans in all, e.g. 57344 for 14 shards and m = 12.
 * @nr_shards must be >= 1, as for every function here.
 */
int64_t
sm_shard_span_end(int64_t token, unsigned nr_shards, unsigned ignore_msb);

/*
 * Smallest token t >= @from that @shard owns, stored in @out; for range scans
 * that visit only one shard's tokens. Returns false, leaving @out alone, if
 * no such token exists: @shard >= @nr_shards, the shard owns no token at all
 * (nr_shards > 2^(64 - ignore_msb)), or it owns none in [@from, INT64_MAX].
 * O(1), using the span layout described at sm_shard_span_end().
 */
bool
sm_shard_next_token(int64_t from, unsigned shard, unsigned nr_shards, unsigned ignore_msb,
		    int64_t *out);

#endif /* SM_TOKEN_H */
