/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shard nodes: one CQL node per shard, for drivers that route by token but
 * know nothing of shards (the DataStax drivers). Each node owns the token
 * spans of its shard, so the driver's replica for a key is the shard that
 * stores it and no request hops.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nettle/md5.h>

#include "sm_core.h"
#include "sm_cql_system.h"
#include "sm_token.h"

#define IGNORE_MSB 12

static void
node_host_id(const char *addr, uint16_t port, struct sm_uuid *out)
{
	struct md5_ctx md5;
	uint8_t d[16];
	char name[96];

	snprintf(name, sizeof(name), "%s:%u", addr, port);
	md5_init(&md5);
	md5_update(&md5, strlen(name), (const uint8_t *)name);
	md5_digest(&md5, sizeof(d), d);
	sm_uuid_from_md5(d, 3, out);
}

int
sm_cql_cluster_init_shard_nodes(struct sm_cql_cluster *views, unsigned n, const char *cluster_name,
				const char (*addrs)[64], uint16_t port, char *err, size_t errlen)
{
	struct sm_cql_node *nodes;
	unsigned *count, i, j, k;
	int64_t **tokens, t;

	if (n == 0 || n > 4096) {
		snprintf(err, errlen, "shard_nodes: %u shards is not a usable node count", n);
		return -EINVAL;
	}
	nodes = calloc(n, sizeof(*nodes));
	count = calloc(n, sizeof(*count));
	tokens = calloc(n, sizeof(*tokens));
	if (nodes == NULL || count == NULL || tokens == NULL)
		goto nomem;
	/* Every shard owns one span per period: 2^IGNORE_MSB spans each. */
	for (i = 0; i < n; i++) {
		tokens[i] = malloc(sizeof(int64_t) << IGNORE_MSB);
		if (tokens[i] == NULL)
			goto nomem;
	}
	t = INT64_MIN;
	for (;;) {
		int64_t end = n == 1 ? INT64_MAX : sm_shard_span_end(t, n, IGNORE_MSB);
		unsigned s = sm_shard_of_token(t, n, IGNORE_MSB);

		if (count[s] < (1u << IGNORE_MSB))
			tokens[s][count[s]++] = end;
		if (end == INT64_MAX)
			break;
		t = end + 1;
	}
	for (i = 0; i < n; i++) {
		snprintf(nodes[i].address, sizeof(nodes[i].address), "%s", addrs[i]);
		nodes[i].port = port;
		node_host_id(addrs[i], port, &nodes[i].host_id);
		nodes[i].tokens = tokens[i];
		nodes[i].ntokens = count[i];
		nodes[i].token = tokens[i][0];
	}
	for (i = 0; i < n; i++) {
		struct sm_cql_cluster *v = &views[i];

		memset(v, 0, sizeof(*v));
		snprintf(v->cluster_name, sizeof(v->cluster_name), "%s", cluster_name);
		snprintf(v->data_center, sizeof(v->data_center), "%s", SM_DATACENTER);
		snprintf(v->rack, sizeof(v->rack), "rack1");
		v->self = nodes[i];
		v->peers = n > 1 ? calloc(n - 1, sizeof(*v->peers)) : NULL;
		if (n > 1 && v->peers == NULL)
			goto nomem_views;
		for (j = 0, k = 0; j < n; j++)
			if (j != i)
				v->peers[k++] = nodes[j];
		v->npeers = n - 1;
	}
	free(nodes);
	free(count);
	free(tokens);
	return 0;
nomem_views:
	for (j = 0; j < i; j++)
		free(views[j].peers);
	memset(views, 0, sizeof(*views) * n);
nomem:
	for (i = 0; tokens != NULL && i < n; i++)
		free(tokens[i]);
	free(nodes);
	free(count);
	free(tokens);
	snprintf(err, errlen, "out of memory");
	return -ENOMEM;
}

void
sm_cql_shard_nodes_free(struct sm_cql_cluster *views, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		/* views[i].self owns node i's tokens */
		free((void *)(uintptr_t)views[i].self.tokens);
		free(views[i].peers);
		memset(&views[i], 0, sizeof(views[i]));
	}
}
