/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_CQL_SYSTEM_H
#define SM_CQL_SYSTEM_H

/*
 * The system tables drivers read: system.local, system.peers,
 * system.peers_v2 and the system_schema tables (keyspaces, tables, columns,
 * dropped_columns, types, functions, aggregates, views, indexes, triggers).
 *
 * They are virtual: each is an ordinary struct sm_table (built with the
 * schema DDL builders into a private catalog per shard), so the executor
 * binds a SELECT on them exactly as it binds one on a user table, then runs
 * the resulting struct sm_select here instead of through the store. Rows
 * are generated from the cluster description and the calling shard's
 * current catalog (sm_store_catalog()) at read time, so they are always
 * current.
 */

#include <stdbool.h>
#include <stdint.h>

#include "sm_schema.h"
#include "sm_store.h"
#include "sm_uuid.h"

/* One appliance as drivers see it. */
struct sm_cql_node {
	char address[64]; /* numeric IPv4 or IPv6 address */
	uint16_t port;	  /* native_transport_port */
	struct sm_uuid host_id;
	int64_t token; /* the node's one token on the ring */
	/* when ntokens > 0, the node's tokens instead (shard nodes: its spans' ends) */
	const int64_t *tokens;
	unsigned ntokens;
};

/*
 * This node and the other appliances it was told about. Every node of the
 * group computes the same host ids and tokens from the same address list,
 * so their system tables agree.
 */
struct sm_cql_cluster {
	char cluster_name[128];
	char data_center[64]; /* SM_DATACENTER */
	char rack[64];	      /* "rack1" */
	struct sm_cql_node self;
	struct sm_cql_node *peers;
	unsigned npeers;
	/*
	 * The group's fingerprint: hex MD5 of every member's address:port in
	 * ring order, the same on every member given the same group. A
	 * coordinator sends it at STARTUP (SM_CQL_GROUP_STARTUP_KEY) and a
	 * member with another one refuses the connection: members whose peers
	 * lists differ would split the ring differently.
	 */
	char ring_id[2 * 16 + 1];
	/*
	 * A group's view of each peer's schema version (system.peers): true
	 * with *@out set when peer @i's version is known (the coordinator
	 * asks each peer after connecting and after each DDL); NULL or false:
	 * shown as ours.
	 */
	bool (*peer_schema_version)(void *ctx, unsigned i, struct sm_uuid *out);
	void *peer_schema_ctx;
};

/* sm_cql_cluster_owner()'s answer for a token of this node. */
#define SM_CQL_OWNER_SELF (-1)
/* sm_cql_cluster_range_owner()'s answer for a range over several nodes. */
#define SM_CQL_OWNER_SEVERAL (-2)

/*
 * The node whose token range holds @token: SM_CQL_OWNER_SELF, or the index
 * of the peer in @cl->peers. Node i (in ring order) owns the tokens after
 * node i-1's token up to its own; the first node also owns everything
 * below its token.
 */
int
sm_cql_cluster_owner(const struct sm_cql_cluster *cl, int64_t token);

/*
 * The one node owning every token of (@start, @end] (as
 * sm_cql_cluster_owner()), SM_CQL_OWNER_SEVERAL when it spans nodes, or
 * SM_CQL_OWNER_SELF when it is empty.
 */
int
sm_cql_cluster_range_owner(const struct sm_cql_cluster *cl, int64_t start, int64_t end);

/*
 * The schema version of @cat as every member of a group computes it: an
 * MD5 (version 3) UUID of its content (keyspaces, replication, tables,
 * columns, options, user types, in name order), not of its random ids, so
 * identical schemas agree. Cached per shard for the last catalog version.
 */
void
sm_cql_schema_digest(const struct sm_catalog *cat, struct sm_uuid *out);

/*
 * Describe the cluster: this node at @listen_address:@native_port, and the
 * comma-separated @peers ("10.0.0.2,10.0.0.3:9043,[fd00::4]:9042,fd00::5";
 * NULL or "" for none; port defaults to @native_port; a bare IPv6 address
 * takes no port). Addresses must be numeric and are kept in inet_ntop()'s
 * canonical form. Host ids are version 3 (Java nameUUIDFromBytes) UUIDs of
 * "address:port" ("[address]:port" for IPv6); node i of the n nodes sorted
 * by address (IPv4 first, then bytes) and port gets token
 * INT64_MIN + (i + 1) * (UINT64_MAX / n), so the last one sits at
 * INT64_MAX. @cluster_name NULL or "" gives "Test Cluster". Returns 0, or
 * -EINVAL with a message naming the bad entry and the fix in @err (not an
 * address, a bad port, this node or a peer listed twice, an unspecified
 * address, listen_address 0.0.0.0 with peers), or -ENOMEM. @cl->peers is
 * NULL when there are none.
 */
int
sm_cql_cluster_init(struct sm_cql_cluster *cl, const char *cluster_name, const char *listen_address,
		    uint16_t native_port, const char *peers, char *err, size_t errlen);
void
sm_cql_cluster_free(struct sm_cql_cluster *cl);

/*
 * Shard nodes: present each of @n shards as its own node, node i at
 * @addrs[i]:@port owning exactly the token spans (ScyllaDB's
 * biased-token-round-robin, ignore_msb 12) whose data shard i stores, so a
 * token-aware driver without shard awareness sends each request to the
 * owning shard. Fills @views[i] with node i as self and the others as
 * peers. 0, -EINVAL (message in @err) or -ENOMEM. Release with
 * sm_cql_shard_nodes_free().
 */
int
sm_cql_cluster_init_shard_nodes(struct sm_cql_cluster *views, unsigned n, const char *cluster_name,
				const char (*addrs)[64], uint16_t port, char *err, size_t errlen);
void
sm_cql_shard_nodes_free(struct sm_cql_cluster *views, unsigned n);

/*
 * Per-shard setup: build the system tables' definitions (keyspaces system
 * and system_schema, LocalStrategy) in a catalog private to the shard.
 * @cl must outlive the shard's use of this module. 0 or -ENOMEM.
 */
int
sm_cql_system_shard_init(const struct sm_cql_cluster *cl);
void
sm_cql_system_shard_fini(void);

/*
 * The node the next reads describe as "local" (shard nodes: the one the
 * connection came in on); @cl must outlive the shard's use of it.
 */
void
sm_cql_system_set_view(const struct sm_cql_cluster *cl);

/* True for "system" and "system_schema", the keyspaces served here. */
bool
sm_cql_system_keyspace(const char *ks);

/*
 * The definition of system table @ks.@name, or NULL when there is none (or
 * the calling shard has not run sm_cql_system_shard_init()). Valid until
 * sm_cql_system_shard_fini().
 */
const struct sm_table *
sm_cql_system_table(const char *ks, const char *name);

/*
 * Run @sel (sel->table from sm_cql_system_table()) synchronously: a single
 * partition (sel->pk, matched bytewise) or every partition (sel->range;
 * token bounds are ignored), clustering slices, sel->cols, limit,
 * per_partition_limit and reversed, rows in key order (partitions by their
 * key, not their token) through sel->sink, with writetime and ttl 0. Sets
 * sel->rows and sel->more = false (system tables are always read whole: a
 * read with sel->resume set returns no rows). Returns 0, the sink's error,
 * -ENOMEM, or -EINVAL when sel->table is not a system table or a column id
 * is out of range.
 */
int
sm_cql_system_select(struct sm_select *sel);

#endif /* SM_CQL_SYSTEM_H */
