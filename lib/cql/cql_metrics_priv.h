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
#include "sm_schema.h"

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
	uint64_t forwarded[2]; /* to the group member owning the partition: [0] reads, [1] writes */
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
 * One table's latencies on one shard (ScyllaDB's scylla_column_family_read_
 * and _write_latency, replica/table.cc): written by its shard only, listed
 * for /metrics under a lock taken only to create, free and read them. The
 * shard's slot cache holds one reference until the table's storage goes on
 * the shard (sm_store_set_drop_hook()), each request in flight one more.
 */
enum { CQL_CF_READ, CQL_CF_WRITE, CQL_CF_N };
struct cql_cf_stats {
	uint64_t lat[CQL_CF_N][SM_LAT_HIST_BUCKETS];
	uint64_t lat_sum_us[CQL_CF_N];
	uint32_t refs;
	uint32_t slot;
	struct sm_uuid id;
	char *ks, *cf;
	struct cql_cf_stats *next;
};

/* The shard's blocks by table storage slot (the store's, never a client's value). */
extern __thread struct cql_cf_stats **cql_cf_slots;
extern __thread uint32_t cql_cf_nslots;

/* Table @t's first block on this shard, in the cache, NULL without memory. */
struct cql_cf_stats *
cql_cf_new(const struct sm_table *t);
void
cql_cf_free(struct cql_cf_stats *c);

/* Table @t's block on this shard, held (NULL without memory: its latencies are skipped,
 * not its requests). */
static inline struct cql_cf_stats *
cql_cf_hold(const struct sm_table *t)
{
	struct cql_cf_stats *c = t->slot < cql_cf_nslots ? cql_cf_slots[t->slot] : NULL;

	if (SM_UNLIKELY(c == NULL) && (c = cql_cf_new(t)) == NULL)
		return NULL;
	c->refs++;
	return c;
}
static inline void
cql_cf_put(struct cql_cf_stats *c)
{
	if (--c->refs == 0)
		cql_cf_free(c);
}
/* Drop the shard's slot cache (its references). */
void
cql_cf_shard_fini(void);

/*
 * A request answered, @cycles after it began, of timeout class @timeout_kind
 * (enum sm_cql_timeout_kind: its latency histogram). Inline: it runs once
 * per request.
 */
_Static_assert(SM_CQL_TIMEOUT_READ == 1 && SM_CQL_TIMEOUT_RANGE == 2 && SM_CQL_TIMEOUT_WRITE == 3 &&
		       SM_CQL_TIMEOUT_COUNTER == 4 && SM_CQL_TIMEOUT_CAS == 5 && SM_CQL_TIMEOUT_NR <= 8,
	       "cql_metrics_answered() maps the timeout classes by number");

static inline void
cql_metrics_answered(uint8_t timeout_kind, uint64_t cycles, struct cql_cf_stats *cf)
{
	/* by timeout class: OTHER, READ, RANGE, WRITE, COUNTER, CAS, TRUNCATE */
	static const int8_t lat_of[8] = { -1, CQL_LAT_READ, CQL_LAT_RANGE, CQL_LAT_WRITE,
					  CQL_LAT_WRITE, CQL_LAT_CAS, -1, -1 };
	struct cql_stats *s = cql_st;
	int k = lat_of[timeout_kind & 7];
	unsigned b;
	uint64_t us;

	s->requests_served++;
	if (k >= 0) {
		us = sm_cycles_to_us(cycles);
		b = sm_lat_hist_bucket(us);
		s->lat[k][b]++;
		s->lat_sum_us[k] += us;
		s->lat_count[k]++;
		if (cf != NULL) {
			/* a table's reads are its point and range reads, its writes the rest */
			k = k == CQL_LAT_READ || k == CQL_LAT_RANGE ? CQL_CF_READ : CQL_CF_WRITE;
			cf->lat[k][b]++;
			cf->lat_sum_us[k] += us;
		}
	}
	if (cf != NULL)
		cql_cf_put(cf);
}

#endif /* CQL_METRICS_PRIV_H */
