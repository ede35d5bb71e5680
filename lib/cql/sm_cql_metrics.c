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
 * and replica, so a request's latency is the coordinator's. And per CQL
 * table, replica/table.cc's scylla_column_family_read_latency and
 * _write_latency histograms (their _count the table's reads and writes) and
 * their summaries, labelled cf and ks, the shards summed and empty tables
 * and the system keyspaces left out, as ScyllaDB does.
 */

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "cql_metrics_priv.h"
#include "sm_cql.h"
#include "sm_store.h"

static SM_CACHE_ALIGNED struct cql_stats cql_stats_all[SM_MAX_SHARDS];
static struct cql_stats cql_stats_offshard; /* threads that are not shards */
__thread struct cql_stats *cql_st = &cql_stats_offshard;

/* ---- per-table blocks ---- */

/* Every shard's blocks; the lock is taken to create, free and read them, never to count. */
static pthread_mutex_t cf_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cql_cf_stats *cf_list;
__thread struct cql_cf_stats **cql_cf_slots;
__thread uint32_t cql_cf_nslots;
static pthread_once_t cf_hook_once = PTHREAD_ONCE_INIT;

/* A table's storage goes on this shard: so does the cache's reference to its block. */
static void
cf_dropped(const struct sm_table *t)
{
	struct cql_cf_stats *c = t->slot < cql_cf_nslots ? cql_cf_slots[t->slot] : NULL;

	if (c != NULL) {
		cql_cf_slots[t->slot] = NULL;
		cql_cf_put(c);
	}
}

static void
cf_hook_set(void)
{
	sm_store_set_drop_hook(cf_dropped);
}

void
cql_metrics_shard_init(void)
{
	cql_st = &cql_stats_all[sm_shard_id() % SM_MAX_SHARDS];
	pthread_once(&cf_hook_once, cf_hook_set);
}

struct cql_cf_stats *
cql_cf_new(const struct sm_table *t)
{
	struct cql_cf_stats *c;

	if (t->slot >= cql_cf_nslots) {
		uint32_t n = SM_MAX(t->slot + 1, cql_cf_nslots * 2);
		struct cql_cf_stats **v = sm_realloc(cql_cf_slots, n * sizeof(*v));

		if (v == NULL)
			return NULL;
		memset(v + cql_cf_nslots, 0, (n - cql_cf_nslots) * sizeof(*v));
		cql_cf_slots = v;
		cql_cf_nslots = n;
	}
	c = sm_calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->ks = sm_strdup(t->ks);
	c->cf = sm_strdup(t->name);
	if (c->ks == NULL || c->cf == NULL) {
		sm_free(c->ks);
		sm_free(c->cf);
		sm_free(c);
		return NULL;
	}
	c->refs = 1; /* the cache's */
	c->slot = t->slot;
	c->id = t->id;
	pthread_mutex_lock(&cf_lock);
	c->next = cf_list;
	cf_list = c;
	pthread_mutex_unlock(&cf_lock);
	cql_cf_slots[t->slot] = c;
	return c;
}

void
cql_cf_free(struct cql_cf_stats *c)
{
	struct cql_cf_stats **pp;

	pthread_mutex_lock(&cf_lock);
	for (pp = &cf_list; *pp != NULL; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	pthread_mutex_unlock(&cf_lock);
	sm_free(c->ks);
	sm_free(c->cf);
	sm_free(c);
}

void
cql_cf_shard_fini(void)
{
	uint32_t i;

	for (i = 0; i < cql_cf_nslots; i++)
		if (cql_cf_slots[i] != NULL)
			cql_cf_put(cql_cf_slots[i]);
	sm_free(cql_cf_slots);
	cql_cf_slots = NULL;
	cql_cf_nslots = 0;
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
		/* an appliance group's forwarding (storage_proxy.cc's remote-node counters) */
		{ "scylla_storage_proxy_coordinator_reads_remote_node", "counter",
		  "Number of read requests sent to remote nodes (the group member owning the "
		  "partition).",
		  offsetof(struct cql_stats, forwarded[0]), SIZE_MAX },
		{ "scylla_storage_proxy_coordinator_total_write_attempts_remote_node", "counter",
		  "Total number of write requests sent to remote nodes (the group member owning "
		  "the partition).",
		  offsetof(struct cql_stats, forwarded[1]), SIZE_MAX },
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

static int
cf_cmp(const void *a, const void *b)
{
	const struct cql_cf_stats *x = *(const struct cql_cf_stats *const *)a;
	const struct cql_cf_stats *y = *(const struct cql_cf_stats *const *)b;
	int c = strcmp(x->ks, y->ks);

	if (c == 0)
		c = strcmp(x->cf, y->cf);
	return c != 0 ? c : memcmp(&x->id, &y->id, sizeof(x->id));
}

/* One table's blocks summed over the shards, its labels. */
struct cf_sum {
	uint64_t lat[CQL_CF_N][SM_LAT_HIST_BUCKETS];
	uint64_t lat_sum_us[CQL_CF_N];
	char labels[2 * SM_CQL_KEYSPACE_MAX + 600];
};

static void
print_tables(FILE *f)
{
	static const struct {
		const char *name, *help, *summary, *shelp;
	} m[CQL_CF_N] = {
		[CQL_CF_READ] = { "scylla_column_family_read_latency", "Read latency histogram",
				  "scylla_column_family_read_latency_summary",
				  "Read latency summary" },
		[CQL_CF_WRITE] = { "scylla_column_family_write_latency", "Write latency histogram",
				   "scylla_column_family_write_latency_summary",
				   "Write latency summary" },
	};
	struct cql_cf_stats **v = NULL, *c;
	struct cf_sum *sums = NULL;
	unsigned n = 0, nt = 0, i, k, b;
	uint64_t count;

	pthread_mutex_lock(&cf_lock);
	for (c = cf_list; c != NULL; c = c->next)
		n++;
	if (n == 0 || (v = sm_calloc(n, sizeof(*v))) == NULL ||
	    (sums = sm_calloc(n, sizeof(*sums))) == NULL) {
		pthread_mutex_unlock(&cf_lock);
		goto out;
	}
	n = 0;
	for (c = cf_list; c != NULL; c = c->next)
		if (strncmp(c->ks, "system", 6) != 0) /* ScyllaDB's internal keyspaces have none */
			v[n++] = c;
	qsort(v, n, sizeof(*v), cf_cmp);
	for (i = 0; i < n; i++) {
		if (nt == 0 || memcmp(&v[i]->id, &v[i - 1]->id, sizeof(v[i]->id)) != 0)
			snprintf(sums[nt++].labels, sizeof(sums[0].labels), "cf=\"%s\",ks=\"%s\"",
				 v[i]->cf, v[i]->ks);
		/* relaxed, word by word: each shard keeps writing its own */
		for (k = 0; k < CQL_CF_N; k++) {
			for (b = 0; b < SM_LAT_HIST_BUCKETS; b++)
				sums[nt - 1].lat[k][b] += SM_READ_ONCE(v[i]->lat[k][b]);
			sums[nt - 1].lat_sum_us[k] += SM_READ_ONCE(v[i]->lat_sum_us[k]);
		}
	}
	pthread_mutex_unlock(&cf_lock);
	for (k = 0; k < CQL_CF_N; k++) {
		header(f, m[k].name, "histogram", m[k].help);
		for (i = 0; i < nt; i++) {
			for (count = 0, b = 0; b < SM_LAT_HIST_BUCKETS; b++)
				count += sums[i].lat[k][b];
			if (count > 0)
				sm_lat_hist_print(f, m[k].name, sums[i].labels, SM_LAT_HIST_NO_SHARD,
						  sums[i].lat[k], sums[i].lat_sum_us[k], count);
		}
		header(f, m[k].summary, "summary", m[k].shelp);
		for (i = 0; i < nt; i++) {
			for (count = 0, b = 0; b < SM_LAT_HIST_BUCKETS; b++)
				count += sums[i].lat[k][b];
			if (count > 0)
				sm_lat_hist_print_summary(f, m[k].summary, sums[i].labels,
							  sums[i].lat[k], sums[i].lat_sum_us[k],
							  count);
		}
	}
out:
	sm_free(sums);
	sm_free(v);
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
	print_tables(f);
}
