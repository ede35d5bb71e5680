/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQL_METRICS_PRIV_H
#define CQL_METRICS_PRIV_H

/*
 * ScyllaDB's CQL-side counters (sm_cql_metrics.c): each shard writes its own
 * block with plain increments; /metrics reads every shard's.
 */

#include <stdint.h>

#include "sm_core.h"
#include "sm_cql_conn.h"

/* The statement kinds ScyllaDB counts (cql3/query_processor.cc), by prepare. */
enum cql_metric_stmt {
	CQL_M_SELECT,
	CQL_M_INSERT,
	CQL_M_UPDATE,
	CQL_M_DELETE,
	CQL_M_BATCH,
	CQL_M_OTHER,
	CQL_M_NSTMT
};

/* The latency histograms, by the request's timeout class. */
enum cql_metric_lat { CQL_LAT_READ, CQL_LAT_WRITE, CQL_LAT_CAS, CQL_LAT_RANGE, CQL_LAT_N };

/* Only uint64_t: the page copies the blocks word by word. */
struct cql_stats {
	uint64_t stmts[CQL_M_NSTMT][2]; /* [kind][conditional] */
	uint64_t statements_in_batches[2];
	uint64_t opcodes[16]; /* requests by opcode (transport's cql_requests_count) */
	uint64_t requests_started, requests_served;
	uint64_t connections_opened, connections_closed;
	uint64_t lat[CQL_LAT_N][SM_LAT_HIST_BUCKETS];
	uint64_t lat_sum_us[CQL_LAT_N], lat_count[CQL_LAT_N];
} SM_CACHE_ALIGNED;

extern __thread struct cql_stats *cql_st;

#define CQL_STAT_ADD(field, n) (cql_st->field += (n))
#define CQL_STAT_INC(field) CQL_STAT_ADD(field, 1)

/* Point cql_st at the calling shard's block (once per shard). */
void
cql_metrics_shard_init(void);

/*
 * A request answered, @cycles after it began, of timeout class @timeout_kind
 * (enum sm_cql_timeout_kind: its latency histogram). Inline: it runs once
 * per request.
 */
_Static_assert(SM_CQL_TIMEOUT_READ == 1 && SM_CQL_TIMEOUT_RANGE == 2 && SM_CQL_TIMEOUT_WRITE == 3 &&
		       SM_CQL_TIMEOUT_COUNTER == 4 && SM_CQL_TIMEOUT_CAS == 5 && SM_CQL_TIMEOUT_NR <= 8,
	       "cql_metrics_answered() maps the timeout classes by number");

static inline void
cql_metrics_answered(uint8_t timeout_kind, uint64_t cycles)
{
	/* by timeout class: OTHER, READ, RANGE, WRITE, COUNTER, CAS, TRUNCATE */
	static const int8_t lat_of[8] = { -1, CQL_LAT_READ, CQL_LAT_RANGE, CQL_LAT_WRITE,
					  CQL_LAT_WRITE, CQL_LAT_CAS, -1, -1 };
	struct cql_stats *s = cql_st;
	int k = lat_of[timeout_kind & 7];
	uint64_t us;

	s->requests_served++;
	if (k < 0)
		return;
	us = sm_cycles_to_us(cycles);
	s->lat[k][sm_lat_hist_bucket(us)]++;
	s->lat_sum_us[k] += us;
	s->lat_count[k]++;
}

#endif /* CQL_METRICS_PRIV_H */
