/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SERVE_GROUP_H
#define SERVE_GROUP_H

/* shardmark serve --peers: the links between the members of an appliance group. */

#include <stdint.h>

#include "sm_cql.h"

/*
 * Set up the group of @cl (before the shards start): *@out is the
 * struct sm_cql_exec_config.group to use (NULL when @cl has no peers), and
 * @cl's system.peers shows each peer's schema version as heard from it.
 * @user and @password (NULL: none) log in to the peers, @max_frame bounds
 * their answers. 0 or -ENOMEM.
 */
int
sm_serve_group_init(struct sm_cql_cluster *cl, const char *user, const char *password,
		    uint32_t max_frame, const struct sm_cql_group **out);

/* Per shard, once it runs: shard 0 polls the peers' schema versions. 0 or -ENOMEM. */
int
sm_serve_group_shard_init(void);

/* Close the calling shard's links (what waits on them is answered). */
void
sm_serve_group_shard_fini(void);

/* After the shards stopped. */
void
sm_serve_group_fini(void);

#endif /* SERVE_GROUP_H */
