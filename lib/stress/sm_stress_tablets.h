/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_STRESS_TABLETS_H
#define SM_STRESS_TABLETS_H

/*
 * The tablet map of a tablets-aware client: ScyllaDB's TABLETS_ROUTING_V1
 * protocol extension (its docs/dev/protocol-extensions.md, "Tablets routing
 * v1"). A server that was asked for it at STARTUP answers a request that
 * reached a node or shard not holding the request's tablet with a
 * `tablets-routing-v1` custom payload naming the tablet: the CQL value of
 * tuple<bigint first_token, bigint last_token, list<tuple<uuid host_id,
 * int shard>>>, the tablet owning the tokens in (first_token, last_token].
 * The client keeps, per table, the tablets it was told about; a new one
 * replaces every known tablet whose range overlaps it (the same document,
 * and the Scylla drivers' TabletMap / Tablets.add_tablet). Tokens no tablet
 * covers are routed by the vnode ring, and their answer teaches the map.
 * (tablets-routing-v2, docs/dev/tablets-routing-v2.md, adds a version and
 * a byte on every EXECUTE; ScyllaDB offers it only with an experimental
 * feature, so this is v1 only.)
 *
 * Pure computation: no I/O, no shared state. One map per client shard, so
 * nothing on a request path is shared; its memory is bounded by a cap on
 * the tablets it holds over all tables, and a tablet past the cap is
 * refused and counted (the requests of its tokens keep going by the ring).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sm_cql_proto.h"

/* The custom payload key, and the STARTUP option that asks for it. */
#define SM_TABLETS_PAYLOAD_KEY "tablets-routing-v1"
#define SM_TABLETS_STARTUP_KEY "TABLETS_ROUTING_V1"

/* Replicas kept per tablet (more are checked, and the first ones kept). */
#define SM_TABLETS_MAX_REPLICAS 16
/* Tables a map tells apart; and the longest keyspace or table name, NUL included. */
#define SM_TABLETS_MAX_TABLES 64
#define SM_TABLETS_NAME_MAX 64
/* A replica's host before it is resolved, or when no known host has its id. */
#define SM_TABLETS_HOST_UNKNOWN UINT16_MAX

/* One replica as the payload names it. */
struct sm_tablet_replica {
	uint8_t host_id[16]; /* the host's system.local / system.peers host_id */
	uint32_t shard;
	uint16_t host; /* the caller's index of that host; SM_TABLETS_HOST_UNKNOWN */
};

/* One tablet: the tokens in (first, last], and its replicas in the server's order. */
struct sm_tablet {
	int64_t first, last;
	unsigned nreps;	     /* kept in reps (at most SM_TABLETS_MAX_REPLICAS) */
	unsigned nreps_sent; /* in the payload */
	struct sm_tablet_replica reps[SM_TABLETS_MAX_REPLICAS];
};

/* The tablets of one table, sorted by token, none overlapping. */
struct sm_tablets_table {
	char keyspace[SM_TABLETS_NAME_MAX];
	char table[SM_TABLETS_NAME_MAX];
	struct sm_tablet *v;
	unsigned n, cap;
};

/* What a map was told, for the report. */
struct sm_tablets_stats {
	uint64_t payloads;  /* tablets-routing-v1 payloads seen (each a misrouted request) */
	uint64_t malformed; /* of those, not a valid tablet: ignored */
	uint64_t learned;   /* tablets inserted */
	uint64_t replaced;  /* known tablets an overlapping new one removed */
	uint64_t refused;   /* tablets not inserted: the cap was reached */
	uint64_t no_table;  /* payloads for a request whose table is not known */
};

/* A client shard's tablet maps; fields are read-only for users. */
struct sm_tablets {
	struct sm_tablets_table tables[SM_TABLETS_MAX_TABLES];
	unsigned ntables;
	unsigned total, max_total; /* tablets held over all tables, and the cap */
	struct sm_tablets_stats st;
};

/* An empty map holding at most @max_total tablets over all its tables (0: none). */
void
sm_tablets_init(struct sm_tablets *t, unsigned max_total);

/* Free every table's tablets; the map is empty (its tables and stats stay). */
void
sm_tablets_free(struct sm_tablets *t);

/*
 * The index of table @keyspace.@table (@ks_len and @table_len bytes, not
 * NUL-terminated), added when new. -ENAMETOOLONG (a name of
 * SM_TABLETS_NAME_MAX bytes or more), -EINVAL (an empty name), -ENOSPC
 * (SM_TABLETS_MAX_TABLES tables already).
 */
int
sm_tablets_table(struct sm_tablets *t, const char *keyspace, size_t ks_len, const char *table,
		 size_t table_len);

/*
 * The value of the tablets-routing-v1 entry of a response's custom payload
 * @m into *@val; false when there is none.
 */
bool
sm_tablets_payload(const struct sm_cql_bytesmap *m, struct sm_bytes *val);

/*
 * Decode a tablets-routing-v1 value (@len bytes at @p) into @out, every
 * replica's host SM_TABLETS_HOST_UNKNOWN. Strict: each element's length as
 * its type has it (bigint 8, uuid 16, int 4), no nulls, a replica list
 * that fits what is left, a shard >= 0, first < last, at least one
 * replica, nothing after the tuple; linear in @len. 0, or -EINVAL with
 * *@why (static) saying what was wrong.
 */
int
sm_tablets_decode(const uint8_t *p, size_t len, struct sm_tablet *out, const char **why);

/*
 * Insert @tab into table @table (an index from sm_tablets_table()),
 * removing every tablet of that table whose range overlaps it. 0;
 * -ENOSPC when the map holds max_total tablets and @tab would replace
 * none (counted in st.refused); -EINVAL for a bad table index or tablet;
 * -ENOMEM (the map is unchanged).
 */
int
sm_tablets_insert(struct sm_tablets *t, unsigned table, const struct sm_tablet *tab);

/* The tablet of table @table holding token @token, or NULL (one binary search). */
const struct sm_tablet *
sm_tablets_find(const struct sm_tablets *t, unsigned table, int64_t token);

/*
 * Which replica of @tab a request goes to, for the orderings of
 * sm_stress_ring.h (enum sm_ring_ordering, as an int here): @pos[host] is
 * the host's place in the client's round-robin plan (the local hosts in
 * order added), or -1 for a host the plan does not hold (remote, down), for
 * hosts 0..@nhosts-1; @nplan the plan's length. TOPOLOGICAL takes the first replica the plan
 * holds (the server's order: primary first); RANDOM one of them drawn from
 * *@rng (sm_ring_rand()); NEUTRAL the one the plan, rotated by *@rr, meets
 * first (*@rr is incremented). Replicas of unknown hosts or with no place
 * are skipped. The index in tab->reps, or -1 when no replica qualifies.
 */
int
sm_tablets_pick(const struct sm_tablet *tab, int ordering, const int *pos, unsigned nhosts,
		unsigned nplan, uint64_t *rng, uint64_t *rr);

#endif /* SM_STRESS_TABLETS_H */
