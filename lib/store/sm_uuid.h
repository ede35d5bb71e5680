/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_UUID_H
#define SM_UUID_H

/*
 * UUIDs as CQL stores them: time-based version 1 (timeuuid, Paxos ballots,
 * now()), random version 4 (uuid()), name-based from an MD5 digest (schema
 * versions), and Cassandra's TimeUUIDType ordering. Bytes are in RFC 4122
 * network order, the same 16 bytes that go on the wire.
 */

#include <stddef.h>
#include <stdint.h>

/* A UUID in wire order. */
struct sm_uuid {
	uint8_t b[16];
};

/* Characters of the 8-4-4-4-12 text form, without the terminating NUL. */
#define SM_UUID_STRLEN 36

/* 100 ns ticks from the Gregorian reform (1582-10-15 00:00 UTC) to the Unix epoch. */
#define SM_UUID_UNIX_EPOCH_TICKS 0x01b21dd213814000ull

/* Largest version 1 timestamp: 60 bits of 100 ns ticks (about the year 5236). */
#define SM_UUID_TICKS_MAX ((1ull << 60) - 1)

/*
 * A per-shard version 1 generator. Fields are private to sm_uuid.c; they are
 * public only so that the struct can live in shard state without allocation.
 * last_ticks is the timestamp of the last UUID handed out; node and clock_seq
 * fill the low 8 bytes, fixed for the generator's life.
 */
struct sm_uuid_gen {
	uint64_t last_ticks;
	uint8_t node[6];
	uint16_t clock_seq;
};

/*
 * Set up @g for shard @shard. The node id is a per-process random value (read
 * once with getrandom) with the multicast bit set, as RFC 4122 asks of node
 * ids that are not MAC addresses, and the shard id in its last two bytes; the
 * 14-bit clock sequence is per-process random too. So the low 8 bytes differ
 * between the shards of one process (for shard ids below 65536) and, with
 * overwhelming probability, between processes, and the UUIDs of one
 * generator differ by timestamp alone. Thread-safe; cannot fail.
 */
void
sm_uuid_gen_init(struct sm_uuid_gen *g, unsigned shard);

/*
 * Store in @out a version 1 UUID stamped with the current wall-clock time
 * (CLOCK_REALTIME, 100 ns resolution), or with the last timestamp plus one
 * tick if that is not later, so that the UUIDs of one generator strictly
 * increase even within one tick and across the clock stepping backwards.
 * Not thread-safe: one generator per shard.
 */
void
sm_uuid_gen_next(struct sm_uuid_gen *g, struct sm_uuid *out);

/*
 * Like sm_uuid_gen_next(), but the timestamp is also strictly after
 * @min_micros (Unix microseconds): sm_uuid_micros(@out) > @min_micros, as a
 * Paxos ballot must exceed the latest ballot seen. Timestamps saturate at
 * SM_UUID_TICKS_MAX, so the guarantees stop holding past the year 5236.
 */
void
sm_uuid_gen_next_after(struct sm_uuid_gen *g, int64_t min_micros, struct sm_uuid *out);

/*
 * The 60-bit timestamp of a version 1 UUID: 100 ns ticks since 1582-10-15.
 * The version nibble is dropped; other versions give meaningless values.
 */
uint64_t
sm_uuid_ticks(const struct sm_uuid *u);

/*
 * The timestamp of a version 1 UUID in Unix microseconds, rounded down (as
 * Cassandra's UUIDGen.microsTimestamp does); negative before 1970.
 */
int64_t
sm_uuid_micros(const struct sm_uuid *u);

/*
 * Compare as Cassandra's TimeUUIDType (and ScyllaDB's timeuuid_type) order
 * cells: by timestamp first, then by the low 8 bytes taken as *signed* bytes,
 * so 0x80 sorts before 0x7f. Returns <0, 0 or >0. Meant for version 1 UUIDs;
 * for others it applies the same arithmetic Cassandra does.
 */
int
sm_timeuuid_cmp(const struct sm_uuid *a, const struct sm_uuid *b);

/* Store a random (version 4) UUID in @out, from getrandom. Cannot fail. */
void
sm_uuid_random(struct sm_uuid *out);

/*
 * Store @version (1-15) and the RFC 4122 variant in the 16-byte digest @md5,
 * giving a name-based UUID in @out: version 3 is Java's
 * UUID.nameUUIDFromBytes, which Cassandra and ScyllaDB use for schema
 * versions. Returns 0, or -EINVAL if @version is out of range.
 */
int
sm_uuid_from_md5(const uint8_t md5[16], unsigned version, struct sm_uuid *out);

/* The version nibble of @u (1 for timeuuids, 4 for random ones). */
static inline unsigned
sm_uuid_version(const struct sm_uuid *u)
{
	return u->b[6] >> 4;
}

/*
 * Write @u as 36 lowercase characters, 8-4-4-4-12, and a NUL, snprintf style:
 * at most @len bytes are written, always NUL-terminated if @len > 0, and the
 * return value is SM_UUID_STRLEN whatever @len is.
 */
size_t
sm_uuid_format(const struct sm_uuid *u, char *buf, size_t len);

/*
 * Parse the 8-4-4-4-12 hex form (either case), the whole NUL-terminated
 * string @s and nothing else, into @out. Returns 0, or -EINVAL with @out
 * untouched.
 */
int
sm_uuid_parse(const char *s, struct sm_uuid *out);

#endif /* SM_UUID_H */
