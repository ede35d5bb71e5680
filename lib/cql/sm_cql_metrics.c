/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ScyllaDB's CQL metrics under its names, so that scylla-monitoring's
 * overview and CQL dashboards read shardmark: scylla_cql_* of the query
 * processor (cql3/query_processor.cc: reads, inserts, updates, deletes and
 * batches with the conditional label, statements in batches),
 * scylla_transport_* of the native transport (transport/server.cc:
 * connections, requests served and in service, requests by opcode kind) and
 * the coordinator latency histograms of scylla_storage_proxy_coordinator_*
 * (service/storage_proxy.cc: read, write, range and CAS latencies, with
 * ScyllaDB's buckets and a summary). The appliance is its own coordinator
 * and replica, so a request's latency is the coordinator's.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cql_metrics_priv.h"
#include "sm_cql.h"

static SM_CACHE_ALIGNED struct cql_stats cql_stats_all[SM_MAX_SHARDS];
static struct cql_stats cql_stats_offshard; /* threads that are not shards */
__thread struct cql_stats *cql_st = &cql_stats_offshard;

void
cql_metrics_shard_init(void)
{
	cql_st = &cql_stats_all[sm_shard_id() % SM_MAX_SHARDS];
}

/* ---- the page ---- */

static void
header(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void
print_statements(FILE *f, const struct cql_stats *snap, unsigned n)
{
	static const struct {
		const char *name, *help;
		unsigned kind;
		bool conditional_label;
	} m[] = {
		{ "scylla_cql_reads", "Counts the number of CQL SELECT requests.", CQL_M_SELECT,
		  false },
		{ "scylla_cql_inserts", "Counts the number of CQL INSERT requests.", CQL_M_INSERT,
		  true },
		{ "scylla_cql_updates", "Counts the number of CQL UPDATE requests.", CQL_M_UPDATE,
		  true },
		{ "scylla_cql_deletes", "Counts the number of CQL DELETE requests.", CQL_M_DELETE,
		  true },
		{ "scylla_cql_batches", "Counts the number of CQL BATCH requests.", CQL_M_BATCH,
		  true },
	};
	unsigned k, i, c;

	for (k = 0; k < SM_ARRAY_SIZE(m); k++) {
		header(f, m[k].name, "counter", m[k].help);
		for (i = 0; i < n; i++) {
			if (!m[k].conditional_label) {
				fprintf(f, "%s{shard=\"%u\"} %llu\n", m[k].name, i,
					(unsigned long long)(snap[i].stmts[m[k].kind][0] +
							     snap[i].stmts[m[k].kind][1]));
				continue;
			}
			for (c = 0; c < 2; c++)
				fprintf(f, "%s{conditional=\"%s\",shard=\"%u\"} %llu\n", m[k].name,
					c ? "yes" : "no", i,
					(unsigned long long)snap[i].stmts[m[k].kind][c]);
		}
	}
	header(f, "scylla_cql_statements_in_batches", "counter",
	       "Counts the total number of sub-statements in CQL BATCH requests.");
	for (i = 0; i < n; i++)
		for (c = 0; c < 2; c++)
			fprintf(f, "scylla_cql_statements_in_batches{conditional=\"%s\",shard=\"%u\"} "
				   "%llu\n",
				c ? "yes" : "no", i, (unsigned long long)snap[i].statements_in_batches[c]);
}

static void
print_transport(FILE *f, const struct cql_stats *snap, unsigned n)
{
	static const char *const kinds[16] = {
		[SM_CQL_OP_STARTUP] = "STARTUP",   [SM_CQL_OP_OPTIONS] = "OPTIONS",
		[SM_CQL_OP_QUERY] = "QUERY",	   [SM_CQL_OP_PREPARE] = "PREPARE",
		[SM_CQL_OP_EXECUTE] = "EXECUTE",   [SM_CQL_OP_REGISTER] = "REGISTER",
		[SM_CQL_OP_BATCH] = "BATCH",	   [SM_CQL_OP_AUTH_RESPONSE] = "AUTH_RESPONSE",
	};
	/* a counter, or a gauge: the first field less the second */
	static const struct {
		const char *name, *type, *help;
		size_t add, sub;
	} m[] = {
		{ "scylla_transport_connections", "counter", "Counts a number of client connections.",
		  offsetof(struct cql_stats, connections_opened), SIZE_MAX },
		{ "scylla_transport_current_connections", "gauge",
		  "Holds a current number of client connections.",
		  offsetof(struct cql_stats, connections_opened),
		  offsetof(struct cql_stats, connections_closed) },
		{ "scylla_transport_requests_served", "counter", "Counts a number of served requests.",
		  offsetof(struct cql_stats, requests_served), SIZE_MAX },
		{ "scylla_transport_requests_serving", "gauge",
		  "Holds a number of requests that are being processed right now.",
		  offsetof(struct cql_stats, requests_started),
		  offsetof(struct cql_stats, requests_served) },
	};
	unsigned i, k;
	uint64_t v, minus;

	for (k = 0; k < SM_ARRAY_SIZE(m); k++) {
		header(f, m[k].name, m[k].type, m[k].help);
		for (i = 0; i < n; i++) {
			memcpy(&v, (const char *)&snap[i] + m[k].add, sizeof(v));
			minus = 0;
			if (m[k].sub != SIZE_MAX)
				memcpy(&minus, (const char *)&snap[i] + m[k].sub, sizeof(minus));
			fprintf(f, "%s{shard=\"%u\"} %llu\n", m[k].name, i,
				(unsigned long long)(v - minus));
		}
	}
	header(f, "scylla_transport_cql_requests_count", "counter",
	       "Counts the number of CQL requests of a given kind.");
	for (k = 0; k < 16; k++) {
		if (kinds[k] == NULL)
			continue;
		for (i = 0; i < n; i++)
			fprintf(f, "scylla_transport_cql_requests_count{kind=\"%s\",shard=\"%u\"} %llu\n",
				kinds[k], i, (unsigned long long)snap[i].opcodes[k]);
	}
}

static void
print_latencies(FILE *f, const struct cql_stats *snap, unsigned n)
{
	static const char *const names[CQL_LAT_N] = {
		[CQL_LAT_READ] = "scylla_storage_proxy_coordinator_read_latency",
		[CQL_LAT_WRITE] = "scylla_storage_proxy_coordinator_write_latency",
		[CQL_LAT_CAS] = "scylla_storage_proxy_coordinator_cas_write_latency",
		[CQL_LAT_RANGE] = "scylla_storage_proxy_coordinator_range_latency",
	};
	uint64_t merged[SM_LAT_HIST_BUCKETS], sum, count;
	char summary[96];
	unsigned k, i, b;

	for (k = 0; k < CQL_LAT_N; k++) {
		header(f, names[k], "histogram", "The general latency histogram");
		memset(merged, 0, sizeof(merged));
		sum = count = 0;
		for (i = 0; i < n; i++) {
			sm_lat_hist_print(f, names[k], NULL, i, snap[i].lat[k], snap[i].lat_sum_us[k],
					  snap[i].lat_count[k]);
			for (b = 0; b < SM_LAT_HIST_BUCKETS; b++)
				merged[b] += snap[i].lat[k][b];
			sum += snap[i].lat_sum_us[k];
			count += snap[i].lat_count[k];
		}
		snprintf(summary, sizeof(summary), "%s_summary", names[k]);
		header(f, summary, "summary", "The latency summary");
		sm_lat_hist_print_summary(f, summary, NULL, merged, sum, count);
	}
}

void
sm_cql_format_metrics(FILE *f, unsigned nshards)
{
	struct cql_stats *snap;
	unsigned n = SM_MIN(nshards, (unsigned)SM_MAX_SHARDS), i, k;
	const uint64_t *src;
	uint64_t *dst;

	snap = sm_calloc(n, sizeof(*snap));
	if (snap == NULL)
		return;
	for (i = 0; i < n; i++) {
		/* word by word, relaxed: each shard keeps writing its own */
		dst = (uint64_t *)&snap[i];
		src = (const uint64_t *)&cql_stats_all[i];
		for (k = 0; k < sizeof(struct cql_stats) / sizeof(uint64_t); k++)
			dst[k] = SM_READ_ONCE(src[k]);
	}
	print_statements(f, snap, n);
	print_transport(f, snap, n);
	print_latencies(f, snap, n);
	sm_free(snap);
}
