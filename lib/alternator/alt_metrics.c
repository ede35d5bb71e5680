/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ScyllaDB's Alternator metrics, under ScyllaDB's names and labels, so that
 * scylla-monitoring's Alternator dashboard and ScyllaDB's test_metrics.py
 * read shardmark as they read ScyllaDB (alternator/stats.cc is the
 * reference for the names, the labels and what each one counts):
 * scylla_alternator_operation{op=...} per DynamoDB operation (failed ones
 * too), scylla_alternator_op_latency histograms for the item operations
 * (successful ones only) with the buckets of ScyllaDB's
 * time_estimated_histogram, its _summary quantiles, total and unsupported
 * operations, read-before-write and LWT counts, filtering, RCU/WCU totals,
 * batch sizes, and scylla_expiration_* of the TTL scanner.
 *
 * Each shard writes only its own block (plain increments, no atomics: one
 * writer); /metrics reads every shard's with relaxed loads, as lib/core's
 * counters are read.
 */

#include <stdio.h>
#include <string.h>

#include "alt_priv.h"

static SM_CACHE_ALIGNED struct alt_stats alt_stats_all[SM_MAX_SHARDS];
/* threads that are not shards (unit tests) count into a block no page shows */
static struct alt_stats alt_stats_offshard;
__thread struct alt_stats *alt_st = &alt_stats_offshard;

/* Batch sizes: estimated_histogram's bucket bounds (each 1.2 times the last, rounded, at least
 * one more), up to the first one above the largest batch DynamoDB allows (100 keys). */
static const uint16_t batch_bounds[ALT_BATCH_BUCKETS] = {
	1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 17, 20, 24, 29, 35, 42, 50, 60, 72, 86, 103,
};

static const char *const lat_names[ALT_LAT_N] = {
	[ALT_LAT_PUT] = "PutItem",	      [ALT_LAT_GET] = "GetItem",
	[ALT_LAT_DELETE] = "DeleteItem",      [ALT_LAT_UPDATE] = "UpdateItem",
	[ALT_LAT_BATCH_WRITE] = "BatchWriteItem", [ALT_LAT_BATCH_GET] = "BatchGetItem",
	[ALT_LAT_GET_RECORDS] = "GetRecords",
};

static const char *const wcu_names[ALT_WCU_N] = {
	[ALT_WCU_PUT] = "PutItem",
	[ALT_WCU_DELETE] = "DeleteItem",
	[ALT_WCU_UPDATE] = "UpdateItem",
	[ALT_WCU_INDEX] = "Index",
};

void
alt_metrics_shard_init(unsigned shard)
{
	alt_st = &alt_stats_all[shard % SM_MAX_SHARDS];
	memset(alt_st, 0, sizeof(*alt_st));
}

int
alt_metrics_latency_kind(const char *name)
{
	unsigned k;

	for (k = 0; k < ALT_LAT_N; k++)
		if (strcmp(lat_names[k], name) == 0)
			return (int)k;
	return -1;
}

void
alt_metrics_latency(int kind, uint64_t us)
{
	struct alt_stats *s = alt_st;

	s->lat[kind][sm_lat_hist_bucket(us)]++;
	s->lat_sum_us[kind] += us;
	s->lat_count[kind]++;
}

void
alt_metrics_batch(bool write, unsigned items)
{
	struct alt_stats *s = alt_st;
	unsigned b = 0;

	s->batch_items[write] += items;
	while (b < ALT_BATCH_BUCKETS - 1 && items > batch_bounds[b])
		b++;
	s->batch_hist[write][b]++;
}

/* ---- the page ---- */

struct metric_out {
	FILE *f;
	unsigned nshards;
	struct alt_stats *snap; /* one relaxed copy of each shard's block */
};

#define SNAP(o, i, field) ((o)->snap[i].field)

static void
header(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A counter of every shard, from the field at @off of each snapshot. */
static void
per_shard(const struct metric_out *o, const char *name, const char *type, const char *help,
	  size_t off, const char *labels)
{
	unsigned i;
	uint64_t v;

	header(o->f, name, type, help);
	for (i = 0; i < o->nshards; i++) {
		memcpy(&v, (const char *)&o->snap[i] + off, sizeof(v));
		fprintf(o->f, "%s{%sshard=\"%u\"} %llu\n", name, labels != NULL ? labels : "", i,
			(unsigned long long)v);
	}
}

static void
print_operations(const struct metric_out *o, const char *const *names, unsigned nnames)
{
	unsigned i, k;

	header(o->f, "scylla_alternator_operation", "counter",
	       "number of operations via Alternator API");
	for (k = 0; k < nnames && k < ALT_MAX_OPERATIONS; k++)
		for (i = 0; i < o->nshards; i++)
			fprintf(o->f, "scylla_alternator_operation{op=\"%s\",shard=\"%u\"} %llu\n",
				names[k], i, (unsigned long long)SNAP(o, i, ops[k]));
}

static void
print_latency(const struct metric_out *o)
{
	char labels[64];
	unsigned i, k, b;

	header(o->f, "scylla_alternator_op_latency", "histogram",
	       "Latency histogram of an operation via Alternator API");
	for (k = 0; k < ALT_LAT_N; k++)
		for (i = 0; i < o->nshards; i++) {
			snprintf(labels, sizeof(labels), "op=\"%s\"", lat_names[k]);
			sm_lat_hist_print(o->f, "scylla_alternator_op_latency", labels, i,
					  SNAP(o, i, lat[k]), SNAP(o, i, lat_sum_us[k]),
					  SNAP(o, i, lat_count[k]));
		}
	header(o->f, "scylla_alternator_op_latency_summary", "summary",
	       "Latency summary of an operation via Alternator API");
	for (k = 0; k < ALT_LAT_N; k++) {
		uint64_t merged[SM_LAT_HIST_BUCKETS] = { 0 }, sum = 0, count = 0;

		for (i = 0; i < o->nshards; i++) {
			for (b = 0; b < SM_LAT_HIST_BUCKETS; b++)
				merged[b] += SNAP(o, i, lat[k][b]);
			sum += SNAP(o, i, lat_sum_us[k]);
			count += SNAP(o, i, lat_count[k]);
		}
		snprintf(labels, sizeof(labels), "op=\"%s\"", lat_names[k]);
		sm_lat_hist_print_summary(o->f, "scylla_alternator_op_latency_summary", labels,
					  merged, sum, count);
	}
}

static void
print_units(const struct metric_out *o)
{
	unsigned i, k;

	header(o->f, "scylla_alternator_rcu_total", "counter",
	       "total number of consumed read units");
	for (i = 0; i < o->nshards; i++) {
		uint64_t h = SNAP(o, i, rcu_halves);

		fprintf(o->f, "scylla_alternator_rcu_total{shard=\"%u\"} %llu%s\n", i,
			(unsigned long long)(h / 2), h % 2 ? ".5" : "");
	}
	header(o->f, "scylla_alternator_wcu_total", "counter",
	       "total number of consumed write units");
	for (k = 0; k < ALT_WCU_N; k++)
		for (i = 0; i < o->nshards; i++)
			fprintf(o->f, "scylla_alternator_wcu_total{op=\"%s\",shard=\"%u\"} %llu\n",
				wcu_names[k], i, (unsigned long long)SNAP(o, i, wcu[k]));
}

static void
print_batches(const struct metric_out *o)
{
	static const char *const names[2] = { "BatchGetItem", "BatchWriteItem" };
	unsigned i, w, b;

	header(o->f, "scylla_alternator_batch_item_count", "counter",
	       "The total number of items processed across all batches");
	for (w = 0; w < 2; w++)
		for (i = 0; i < o->nshards; i++)
			fprintf(o->f,
				"scylla_alternator_batch_item_count{op=\"%s\",shard=\"%u\"} %llu\n",
				names[w], i, (unsigned long long)SNAP(o, i, batch_items[w]));
	header(o->f, "scylla_alternator_batch_item_count_histogram", "histogram",
	       "Histogram of the number of items in a batch request");
	for (w = 0; w < 2; w++)
		for (i = 0; i < o->nshards; i++) {
			uint64_t cum = 0;

			for (b = 0; b < ALT_BATCH_BUCKETS; b++) {
				cum += SNAP(o, i, batch_hist[w][b]);
				fprintf(o->f,
					"scylla_alternator_batch_item_count_histogram_bucket{le=\"%u."
					"000000\",op=\"%s\",shard=\"%u\"} %llu\n",
					batch_bounds[b], names[w], i, (unsigned long long)cum);
			}
			fprintf(o->f,
				"scylla_alternator_batch_item_count_histogram_bucket{le=\"+Inf\","
				"op=\"%s\",shard=\"%u\"} %llu\n"
				"scylla_alternator_batch_item_count_histogram_count{op=\"%s\","
				"shard=\"%u\"} %llu\n"
				"scylla_alternator_batch_item_count_histogram_sum{op=\"%s\","
				"shard=\"%u\"} %llu\n",
				names[w], i, (unsigned long long)cum, names[w], i,
				(unsigned long long)cum, names[w], i,
				(unsigned long long)SNAP(o, i, batch_items[w]));
		}
}

#define FIELD(f) offsetof(struct alt_stats, f)

void
alt_metrics_format(FILE *f, unsigned nshards, const char *const *op_names, unsigned nops)
{
	static const struct {
		const char *name, *help;
		size_t off;
	} counters[] = {
		{ "scylla_alternator_total_operations",
		  "number of total operations via Alternator API", FIELD(total_operations) },
		{ "scylla_alternator_unsupported_operations",
		  "number of unsupported operations via Alternator API",
		  FIELD(unsupported_operations) },
		{ "scylla_alternator_reads_before_write",
		  "number of performed read-before-write operations", FIELD(reads_before_write) },
		{ "scylla_alternator_write_using_lwt", "number of writes that used LWT",
		  FIELD(write_using_lwt) },
		{ "scylla_alternator_shard_bounce_for_lwt",
		  "number writes that had to be bounced from this shard because of LWT "
		  "requirements",
		  FIELD(shard_bounce_for_lwt) },
		{ "scylla_alternator_requests_blocked_memory",
		  "Counts a number of requests blocked due to memory pressure.",
		  FIELD(requests_blocked_memory) },
		{ "scylla_alternator_requests_shed", "Counts a number of requests shed due to overload.",
		  FIELD(requests_shed) },
		{ "scylla_alternator_filtered_rows_read_total",
		  "number of rows read during filtering operations", FIELD(filtered_rows_read) },
		{ "scylla_alternator_filtered_rows_matched_total",
		  "number of rows read and matched during filtering operations",
		  FIELD(filtered_rows_matched) },
		{ "scylla_alternator_filtered_rows_dropped_total",
		  "number of rows read and dropped during filtering operations",
		  FIELD(filtered_rows_dropped) },
		{ "scylla_expiration_scan_passes", "number of passes over the database",
		  FIELD(expiration_scan_passes) },
		{ "scylla_expiration_scan_table", "number of table scans (counting each scan of each "
						  "table that enabled expiration)",
		  FIELD(expiration_scan_table) },
		{ "scylla_expiration_items_deleted", "number of items deleted after expiration",
		  FIELD(expiration_items_deleted) },
	};
	struct metric_out o = { .f = f, .nshards = SM_MIN(nshards, (unsigned)SM_MAX_SHARDS) };
	unsigned i, k;
	uint64_t *dst;
	const uint64_t *src;

	o.snap = sm_calloc(o.nshards, sizeof(*o.snap));
	if (o.snap == NULL)
		return;
	for (i = 0; i < o.nshards; i++) {
		/* word by word, relaxed: each shard keeps writing its own */
		dst = (uint64_t *)&o.snap[i];
		src = (const uint64_t *)&alt_stats_all[i];
		for (k = 0; k < sizeof(struct alt_stats) / sizeof(uint64_t); k++)
			dst[k] = SM_READ_ONCE(src[k]);
		o.snap[i].filtered_rows_dropped =
			o.snap[i].filtered_rows_read - o.snap[i].filtered_rows_matched;
	}
	print_operations(&o, op_names, nops);
	print_latency(&o);
	for (k = 0; k < SM_ARRAY_SIZE(counters); k++)
		per_shard(&o, counters[k].name, "counter", counters[k].help, counters[k].off, NULL);
	print_units(&o);
	print_batches(&o);
	sm_free(o.snap);
}
