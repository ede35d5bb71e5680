/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_STRESS_RING_H
#define SM_STRESS_RING_H

/*
 * The token ring as a driver sees it, and the query plans a token-aware
 * load balancing policy builds from it. Pure computation: no I/O, no
 * shared mutable state.
 *
 * The ring is filled from the rows of system.local and system.peers (each
 * host's address, data center, rack and tokens), then built for one
 * keyspace's replication (SimpleStrategy or NetworkTopologyStrategy). Build
 * precomputes the replicas of every ring position, so a lookup is one
 * binary search. A built ring is read-only: every shard may use the same
 * one, each with its own random state and round-robin counter.
 *
 * Ownership follows Cassandra: a host whose token is T owns the key tokens
 * in (previous token, T], so the primary replica of a key token t is the
 * owner of the first ring token >= t, wrapping to the smallest token (the
 * java driver's TokenMap.getReplicas, the Python driver's bisect_left).
 *
 * Hosts are named by their index, in the order they were added.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest address, data center and rack names, NUL included. */
#define SM_RING_NAME_MAX 64

enum sm_ring_strategy {
	SM_RING_SIMPLE,		  /* SimpleStrategy: rf distinct hosts clockwise */
	SM_RING_NETWORK_TOPOLOGY, /* NetworkTopologyStrategy: rf per data center */
};

/* Replica orderings of the Scylla java driver's TokenAwarePolicy (stress.md §3). */
enum sm_ring_ordering {
	SM_RING_TOPOLOGICAL, /* primary replica first, then ring order */
	SM_RING_RANDOM,	     /* the replicas shuffled for every plan */
	SM_RING_NEUTRAL,     /* the child round-robin order, replicas first */
};

/* The replication factor of one data center; dc NULL: every DC not listed. */
struct sm_ring_dc_rf {
	const char *dc;
	unsigned rf;
};

/* A keyspace's replication. */
struct sm_ring_repl {
	enum sm_ring_strategy strategy;
	unsigned rf;			 /* SM_RING_SIMPLE */
	const struct sm_ring_dc_rf *dcs; /* SM_RING_NETWORK_TOPOLOGY: ndcs entries */
	unsigned ndcs;
};

struct sm_ring_host {
	char addr[SM_RING_NAME_MAX];
	char dc[SM_RING_NAME_MAX];
	char rack[SM_RING_NAME_MAX];
	bool local; /* in the local data center (every host when none is set) */
};

/* One ring position: a token and the host that owns it. */
struct sm_ring_token {
	int64_t token;
	unsigned host;
};

/* The ring; fields are read-only for users. */
struct sm_ring {
	struct sm_ring_host *hosts;
	unsigned nhosts, hosts_cap;
	struct sm_ring_token *tokens; /* sorted by sm_ring_build() */
	unsigned ntokens, tokens_cap;
	/* built: the replicas of ring position i are reps[i * stride], nreps[i] of them */
	unsigned *reps;
	uint16_t *nreps;
	unsigned stride;
	unsigned *local_hosts; /* the child policy's hosts: the local DC's, in order added */
	unsigned nlocal;
	bool built;
	char err[192]; /* why the last call failed */
};

/* An empty ring. */
void
sm_ring_init(struct sm_ring *r);

/* Free everything; the ring is empty and usable again. */
void
sm_ring_free(struct sm_ring *r);

/*
 * Add a host at @addr (any string naming it, usually its rpc_address) in
 * data center @dc and rack @rack (NULL: ""), owning the @n tokens @tokens.
 * A host may own no tokens (it still takes part in round-robin). Returns
 * its index, or -EEXIST (the address is already there), -ENAMETOOLONG (a
 * name of SM_RING_NAME_MAX bytes or more), -EBUSY (the ring is built), or
 * -ENOMEM; the reason is in r->err.
 */
int
sm_ring_add_host(struct sm_ring *r, const char *addr, const char *dc, const char *rack,
		 const int64_t *tokens, unsigned n);

/*
 * As sm_ring_add_host(), with the tokens as decimal strings (the text of
 * system.local.tokens); -EINVAL when one is not a 64-bit signed decimal.
 */
int
sm_ring_add_host_str(struct sm_ring *r, const char *addr, const char *dc, const char *rack,
		     const char *const *tokens, unsigned n);

/*
 * As sm_ring_add_host(), from the wire cells of a system.local or
 * system.peers row (CQL v4 serialization, as a Rows result carries them):
 * @inet the rpc_address / peer cell (4 or 16 bytes), @dc and @rack text
 * cells (NULL: ""), @tokens a set<text> cell ([int n] then n [int len]
 * [bytes]; NULL: no tokens). -EINVAL, with the reason in r->err, when a
 * cell is malformed.
 */
int
sm_ring_add_host_cells(struct sm_ring *r, const uint8_t *inet, size_t inet_len, const uint8_t *dc,
		       size_t dc_len, const uint8_t *rack, size_t rack_len, const uint8_t *tokens,
		       size_t tokens_len);

/*
 * Sort the tokens and compute every position's replicas for @repl, in the
 * java driver's order (its ReplicationStrategy):
 *  - SimpleStrategy: walk clockwise from the position, taking the first rf
 *    distinct hosts (fewer when the ring has fewer hosts);
 *  - NetworkTopologyStrategy: one walk for all data centers; in each DC
 *    take hosts of racks not seen yet first, and once every rack of the DC
 *    has been seen, the hosts skipped for a repeated rack in the order they
 *    were met, then any host, until the DC has rf (or all its hosts). The
 *    list is in the order hosts were taken across DCs. DCs without a factor
 *    get no replicas.
 * @local_dc names the client's data center (DC-aware round-robin); NULL
 * makes every host local. Returns 0, or -EINVAL (no host has a token, two
 * hosts share a token, a local DC no host is in, a SimpleStrategy rf of 0),
 * -EBUSY (already built) or -ENOMEM, with the reason in r->err.
 */
int
sm_ring_build(struct sm_ring *r, const struct sm_ring_repl *repl, const char *local_dc);

/*
 * The replicas of key token @token in topological order (primary first),
 * into @out (room for @max); returns how many there are (the number written
 * is the smaller of that and @max). 0 before sm_ring_build().
 */
unsigned
sm_ring_replicas(const struct sm_ring *r, int64_t token, unsigned *out, unsigned max);

/*
 * The query plan for @token into @out (room for @max, at most the number
 * of hosts), as the Scylla java driver's TokenAwarePolicy wraps a
 * DC-aware round-robin child policy (stress.md §3.2). The child plan is the
 * local hosts in the order added, rotated by *@rr, which is then
 * incremented (the caller's round-robin counter, one per shard). Only live
 * local hosts appear; remote-DC hosts never do (DCAwareRoundRobinPolicy's
 * default usedHostsPerRemoteDc = 0).
 *  - TOPOLOGICAL: the live local replicas in ring order, then the child
 *    plan without them;
 *  - RANDOM: the same with the replicas shuffled first (Fisher-Yates drawing
 *    from *@rng, the caller's per-shard state, see sm_ring_rand());
 *  - NEUTRAL: the child plan with its live local replicas moved ahead of the
 *    other hosts, each group keeping the child's order.
 * @down, when not NULL, marks hosts (by index) that are down: they are left
 * out. Returns the number of hosts written.
 */
unsigned
sm_ring_plan(const struct sm_ring *r, int64_t token, enum sm_ring_ordering ord, uint64_t *rng,
	     uint64_t *rr, const bool *down, unsigned *out, unsigned max);

/* A 64-bit random number from *@state (splitmix64); seed the state with anything. */
uint64_t
sm_ring_rand(uint64_t *state);

/* A uniform-enough number in [0, @n) from *@state (@n > 0). */
unsigned
sm_ring_rand_below(uint64_t *state, unsigned n);

/* The Murmur3 token of a serialized partition key (lib/store's sm_murmur3_token()). */
int64_t
sm_ring_token_of(const void *key, size_t len);

/*
 * The shard that owns @token on a server of @nr_shards shards that ignores
 * the @ignore_msb top bits (SCYLLA_NR_SHARDS, SCYLLA_SHARDING_IGNORE_MSB):
 * ScyllaDB's biased-token-round-robin (lib/store's sm_shard_of_token()).
 */
unsigned
sm_ring_shard_of(int64_t token, unsigned nr_shards, unsigned ignore_msb);

#endif /* SM_STRESS_RING_H */
