/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_API_H
#define SM_API_H

/*
 * lib/api: ScyllaDB's REST API (api_address:api_port, 10000 by default), the
 * part that nodetool and ScyllaDB's own tooling call to flush, compact,
 * snapshot, switch the native transport and the log levels, and read
 * status and info: /storage_service/..., /column_family/..., /gossiper/...,
 * /snitch/..., /system/.... Answers are JSON in ScyllaDB's shapes; errors
 * are {"message": ..., "code": N} with ScyllaDB's texts ("Can't find a
 * keyspace ks"). On the in-memory store a flush, a compaction or a snapshot
 * has nothing to write; each says so in the log and answers as ScyllaDB
 * does.
 *
 * An sm_http handler (lib/alternator's HTTP/1.1 server): serve it with
 * sm_http_proto_ops and a struct sm_http_service whose handler is the one
 * sm_api_handler_init() fills.
 */

#include <stdbool.h>
#include <stdint.h>

#include "sm_http.h"

struct sm_cql_cluster;

struct sm_api_config {
	const struct sm_cql_cluster *cluster; /* this node and its peers: hosts, tokens */
	const char *version;		      /* shardmark's, as scylla_release_version */
	uint64_t started_ms;		      /* sm_now_ms() when the server started */
	uint64_t generation;		      /* gossip generation: the start's Unix seconds */
	/*
	 * Stop (false) or start (true) the CQL listeners: runs on shard 0;
	 * done(arg, err) must follow once, on any shard. NULL: the native
	 * transport cannot be switched (answered with 400).
	 */
	void (*native_transport)(void *ctx, bool start, void (*done)(void *arg, int err),
				 void *arg);
	bool (*native_transport_running)(void *ctx);
	void *ctx;
};

/* A handler answering ScyllaDB's REST API with @cfg (kept, must outlive it). */
void
sm_api_handler_init(struct sm_http_handler *h, const struct sm_api_config *cfg);

#endif /* SM_API_H */
