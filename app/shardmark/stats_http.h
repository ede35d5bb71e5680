/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_APP_STATS_HTTP_H
#define SM_APP_STATS_HTTP_H

#include <stdio.h>

#include "sm_net.h"

/*
 * The stats endpoint on prometheus_port: GET /metrics answers every shard's
 * counters in Prometheus text format, GET /stats the human table that
 * SIGUSR1 prints. One request per connection (Connection: close).
 */
extern const struct sm_proto_ops sm_stats_http_proto;

/* The listen context of the stats port. */
struct sm_stats_http_service {
	/* a request not arrived whole this long after the connection opened
	 * gets 408 and the close (http_request_timeout_in_ms); 0: no limit */
	unsigned request_timeout_ms;
	/* more metrics after the shards' own (the loader's, per op type); NULL: none */
	void (*extra_metrics)(FILE *f);
};

/* Snapshot every shard and print the table to @f (the SIGUSR1 action). */
void
sm_stats_dump(FILE *f);

#endif /* SM_APP_STATS_HTTP_H */
