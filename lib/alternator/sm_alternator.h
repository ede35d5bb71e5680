/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_ALTERNATOR_H
#define SM_ALTERNATOR_H

/*
 * The Alternator endpoint: the DynamoDB API over HTTP on lib/store, as
 * ScyllaDB's Alternator maps it.
 *
 * Storage: DynamoDB table T is store table alternator_T.T; its hash key is
 * the partition key column and its range key the clustering column (text
 * for S, decimal for N, blob for B), and every other attribute is an entry
 * of one map<text, blob> column ":attrs" holding the attribute value's JSON
 * text ({"S":"x"}), validated and normalised (numbers canonical) on the way
 * in, so reads splice it back without conversion. Item operations run on
 * the owning shard through sm_store_submit().
 *
 * Write isolation is ScyllaDB's (alternator.md §2): the default from the
 * config, a per-table override in the tag system:write_isolation; a
 * read-modify-write request (a condition, a read-based update, old values
 * returned) is refused (forbid_rmw), read then written without isolation
 * (unsafe), or run as a compare-and-set through Paxos (always_use_lwt for
 * every write, only_rmw_uses_lwt for RMW ones). Reads never use Paxos.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "sm_http.h"

enum sm_alt_isolation {
	SM_ALT_FORBID_RMW,
	SM_ALT_UNSAFE_RMW,
	SM_ALT_LWT_ALWAYS,
	SM_ALT_LWT_RMW_ONLY,
};

struct sm_alternator_config {
	enum sm_alt_isolation default_isolation;
	/* SigV4: verify signatures against this key pair (enforce), else accept any */
	bool enforce_authorization;
	const char *access_key_id;
	const char *secret_access_key;
	/* TTL: pause between two expiry passes over a shard's items (0: 1 s) */
	unsigned ttl_period_ms;
};

/*
 * Parse a write isolation name as ScyllaDB does (the first character of
 * f, forbid, forbid_rmw, a, always, always_use_lwt, o, only_rmw_uses_lwt,
 * u, unsafe, unsafe_rmw); -EINVAL for anything else.
 */
int
sm_alt_isolation_parse(const char *s, enum sm_alt_isolation *out);

/* The handler for struct sm_http_service; ctx: a struct sm_alternator_config. */
extern const struct sm_http_handler sm_alternator_handler;

/* Per-shard setup (after sm_store_shard_init()) and teardown. */
int
sm_alternator_shard_init(const struct sm_alternator_config *cfg);
void
sm_alternator_shard_fini(void);

/*
 * In-process requests (perf-simple-query: the operation without HTTP).
 * Runs operation @op ("PutItem") on the JSON @body (valid until done) and
 * calls @done with the HTTP status and the response JSON, possibly later
 * (after a hop). Returns 0, or -ENOMEM before anything ran.
 */
int
sm_alternator_execute(const char *op, const char *body, size_t len,
		      void (*done)(void *ctx, int status, const char *json, size_t len), void *ctx);

/*
 * ScyllaDB's Alternator metrics (scylla_alternator_*, scylla_expiration_*)
 * of @nshards shards as Prometheus text, for /metrics.
 */
void
sm_alternator_format_metrics(FILE *f, unsigned nshards);

#endif /* SM_ALTERNATOR_H */
