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

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
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
alt_metrics_batch(struct alt_stats *s, bool write, unsigned items)
{
	unsigned b = 0;

	s->batch_items[write] += items;
	while (b < ALT_BATCH_BUCKETS - 1 && items > batch_bounds[b])
		b++;
	s->batch_hist[write][b]++;
}

void
alt_metrics_table_batch(const struct alt_op *op, struct alt_tstats *ts, bool write, unsigned items)
{
	if (ts == NULL)
		return;
	if (op->op_row >= 0)
		ts->st.ops[op->op_row]++;
	ts->st.total_operations++;
	alt_metrics_batch(&ts->st, write, items);
}

/* ---- per-table blocks ---- */

/* Every shard's table blocks; the lock is taken to create, free and read them, never to count. */
static pthread_mutex_t tstats_lock = PTHREAD_MUTEX_INITIALIZER;
static struct alt_tstats *tstats_list;

struct alt_tstats *
alt_tstats_new(const struct sm_uuid *id, const char *ks, const char *cf)
{
	void *raw = sm_calloc(1, sizeof(struct alt_tstats) + SM_CACHE_LINE);
	struct alt_tstats *ts;

	if (raw == NULL)
		return NULL;
	/* st is cache aligned, the allocator's blocks need not be */
	ts = (struct alt_tstats *)(((uintptr_t)raw + SM_CACHE_LINE - 1) &
				   ~(uintptr_t)(SM_CACHE_LINE - 1));
	ts->raw = raw;
	ts->refs = 1;
	ts->id = *id;
	ts->ks = sm_strdup(ks);
	ts->cf = sm_strdup(cf);
	if (ts->ks == NULL || ts->cf == NULL) {
		sm_free(ts->ks);
		sm_free(ts->cf);
		sm_free(raw);
		return NULL;
	}
	pthread_mutex_lock(&tstats_lock);
	ts->next = tstats_list;
	tstats_list = ts;
	pthread_mutex_unlock(&tstats_lock);
	return ts;
}

void
alt_tstats_free(struct alt_tstats *ts)
{
	struct alt_tstats **pp;

	pthread_mutex_lock(&tstats_lock);
	for (pp = &tstats_list; *pp != NULL; pp = &(*pp)->next)
		if (*pp == ts) {
			*pp = ts->next;
			break;
		}
	pthread_mutex_unlock(&tstats_lock);
	sm_free(ts->ks);
	sm_free(ts->cf);
	sm_free(ts->raw);
}

/* ---- the page ---- */

/*
 * One family's samples: a shard's block each (labelled shard), or a
 * table's, every shard's summed (labelled cf and ks, no shard: ScyllaDB
 * aggregates the shard away there and skips the samples still empty).
 */
struct metric_out {
	FILE *f;
	const char *prefix; /* scylla_alternator or scylla_alternator_table */
	unsigned n;
	struct alt_stats *snap; /* one relaxed copy of each sample's block */
	char **tlab;		/* a table's labels per sample, NULL: by shard */
};

#define SNAP(o, i, field) ((o)->snap[i].field)
#define LABELS_MAX (2 * ALT_MAX_TABLE_NAME + 256)
#define OP_NAME_MAX 48 /* the longest operation name, and more */

static void
header(const struct metric_out *o, const char *name, const char *type, const char *help)
{
	fprintf(o->f, "# HELP %s_%s %s\n# TYPE %s_%s %s\n", o->prefix, name, help, o->prefix, name,
		type);
}

/* Sample @i's labels with @extra (NULL none), in Seastar's order. */
static const char *
lbl(const struct metric_out *o, unsigned i, const char *extra, char *buf)
{
	if (o->tlab != NULL)
		snprintf(buf, LABELS_MAX, "%s%s%s", o->tlab[i], extra ? "," : "",
			 extra ? extra : "");
	else
		snprintf(buf, LABELS_MAX, "%s%sshard=\"%u\"", extra ? extra : "", extra ? "," : "",
			 i);
	return buf;
}

static void
sample(const struct metric_out *o, unsigned i, const char *name, const char *extra, uint64_t v)
{
	char b[LABELS_MAX];

	if (o->tlab != NULL && v == 0)
		return;
	fprintf(o->f, "%s_%s{%s} %llu\n", o->prefix, name, lbl(o, i, extra, b),
		(unsigned long long)v);
}

/* A cumulative histogram of sample @i: @nb buckets, the first @nbound of them bounded by
 * @bound(b), then +Inf. */
static void
histogram(const struct metric_out *o, unsigned i, const char *name, const char *extra,
	  const uint64_t *buckets, unsigned nb, unsigned nbound, uint64_t (*bound)(unsigned),
	  uint64_t sum)
{
	char b[LABELS_MAX], le[128];
	const char *sep = extra ? "," : "";
	uint64_t cum = 0, count = 0;
	unsigned k;

	if (extra == NULL)
		extra = "";
	for (k = 0; k < nb; k++)
		count += buckets[k];
	if (o->tlab != NULL && count == 0)
		return;
	for (k = 0; k < nbound; k++) {
		cum += buckets[k];
		snprintf(le, sizeof(le), "le=\"%llu.000000\"%s%s", (unsigned long long)bound(k), sep,
			 extra);
		fprintf(o->f, "%s_%s_bucket{%s} %llu\n", o->prefix, name, lbl(o, i, le, b),
			(unsigned long long)cum);
	}
	snprintf(le, sizeof(le), "le=\"+Inf\"%s%s", sep, extra);
	fprintf(o->f, "%s_%s_bucket{%s} %llu\n", o->prefix, name, lbl(o, i, le, b),
		(unsigned long long)count);
	fprintf(o->f, "%s_%s_sum{%s} %llu\n", o->prefix, name, lbl(o, i, *extra ? extra : NULL, b),
		(unsigned long long)sum);
	fprintf(o->f, "%s_%s_count{%s} %llu\n", o->prefix, name, b, (unsigned long long)count);
}

static uint64_t
lat_bound(unsigned b)
{
	return sm_lat_hist_bound(b);
}

static uint64_t
batch_bound(unsigned b)
{
	return batch_bounds[b];
}

/* A counter of every sample, from the field at @off of each snapshot. */
static void
per_sample(const struct metric_out *o, const char *name, const char *help, size_t off)
{
	unsigned i;
	uint64_t v;

	header(o, name, "counter", help);
	for (i = 0; i < o->n; i++) {
		memcpy(&v, (const char *)&o->snap[i] + off, sizeof(v));
		sample(o, i, name, NULL, v);
	}
}

static void
print_operations(const struct metric_out *o, const char *const *names, unsigned nnames)
{
	char extra[16 + OP_NAME_MAX];
	unsigned i, k;

	header(o, "operation", "counter", "number of operations via Alternator API");
	for (k = 0; k < nnames && k < ALT_MAX_OPERATIONS; k++) {
		/* ScyllaDB keeps these two out of the tables' (stats.cc) */
		if (o->tlab != NULL &&
		    (strcmp(names[k], "CreateTable") == 0 || strcmp(names[k], "DeleteTable") == 0))
			continue;
		snprintf(extra, sizeof(extra), "op=\"%s\"", names[k]);
		for (i = 0; i < o->n; i++)
			sample(o, i, "operation", extra, SNAP(o, i, ops[k]));
	}
}

static void
print_latency(const struct metric_out *o)
{
	char labels[64];
	unsigned i, k, b;

	header(o, "op_latency", "histogram", "Latency histogram of an operation via Alternator API");
	for (k = 0; k < ALT_LAT_N; k++) {
		snprintf(labels, sizeof(labels), "op=\"%s\"", lat_names[k]);
		for (i = 0; i < o->n; i++)
			histogram(o, i, "op_latency", labels, SNAP(o, i, lat[k]),
				  SM_LAT_HIST_BUCKETS, SM_LAT_HIST_BUCKETS - 1, lat_bound,
				  SNAP(o, i, lat_sum_us[k]));
	}
	if (o->tlab != NULL)
		return; /* ScyllaDB's tables have no summary */
	fprintf(o->f, "# HELP scylla_alternator_op_latency_summary Latency summary of an operation "
		      "via Alternator API\n# TYPE scylla_alternator_op_latency_summary summary\n");
	for (k = 0; k < ALT_LAT_N; k++) {
		uint64_t merged[SM_LAT_HIST_BUCKETS] = { 0 }, sum = 0, count = 0;

		for (i = 0; i < o->n; i++) {
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
	char b[LABELS_MAX], extra[32];
	unsigned i, k;

	header(o, "rcu_total", "counter", "total number of consumed read units");
	for (i = 0; i < o->n; i++) {
		uint64_t h = SNAP(o, i, rcu_halves);

		if (o->tlab != NULL && h == 0)
			continue;
		fprintf(o->f, "%s_rcu_total{%s} %llu%s\n", o->prefix, lbl(o, i, NULL, b),
			(unsigned long long)(h / 2), h % 2 ? ".5" : "");
	}
	header(o, "wcu_total", "counter", "total number of consumed write units");
	for (k = 0; k < ALT_WCU_N; k++) {
		snprintf(extra, sizeof(extra), "op=\"%s\"", wcu_names[k]);
		for (i = 0; i < o->n; i++)
			sample(o, i, "wcu_total", extra, SNAP(o, i, wcu[k]));
	}
}

static void
print_batches(const struct metric_out *o)
{
	static const char *const names[2] = { "op=\"BatchGetItem\"", "op=\"BatchWriteItem\"" };
	unsigned i, w;

	header(o, "batch_item_count", "counter",
	       "The total number of items processed across all batches");
	for (w = 0; w < 2; w++)
		for (i = 0; i < o->n; i++)
			sample(o, i, "batch_item_count", names[w], SNAP(o, i, batch_items[w]));
	header(o, "batch_item_count_histogram", "histogram",
	       "Histogram of the number of items in a batch request");
	for (w = 0; w < 2; w++)
		for (i = 0; i < o->n; i++)
			histogram(o, i, "batch_item_count_histogram", names[w],
				  SNAP(o, i, batch_hist[w]), ALT_BATCH_BUCKETS, ALT_BATCH_BUCKETS,
				  batch_bound,
				  SNAP(o, i, batch_items[w]));
}

#define FIELD(f) offsetof(struct alt_stats, f)

static void
print_all(const struct metric_out *o, const char *const *op_names, unsigned nops)
{
	static const struct {
		const char *name, *help;
		size_t off;
		bool global; /* not a table's */
	} counters[] = {
		{ "total_operations", "number of total operations via Alternator API",
		  FIELD(total_operations), false },
		{ "unsupported_operations", "number of unsupported operations via Alternator API",
		  FIELD(unsupported_operations), false },
		{ "reads_before_write", "number of performed read-before-write operations",
		  FIELD(reads_before_write), false },
		{ "write_using_lwt", "number of writes that used LWT", FIELD(write_using_lwt),
		  false },
		{ "shard_bounce_for_lwt",
		  "number writes that had to be bounced from this shard because of LWT "
		  "requirements",
		  FIELD(shard_bounce_for_lwt), false },
		{ "requests_blocked_memory",
		  "Counts a number of requests blocked due to memory pressure.",
		  FIELD(requests_blocked_memory), false },
		{ "requests_shed", "Counts a number of requests shed due to overload.",
		  FIELD(requests_shed), false },
		{ "filtered_rows_read_total", "number of rows read during filtering operations",
		  FIELD(filtered_rows_read), false },
		{ "filtered_rows_matched_total",
		  "number of rows read and matched during filtering operations",
		  FIELD(filtered_rows_matched), false },
		{ "filtered_rows_dropped_total",
		  "number of rows read and dropped during filtering operations",
		  FIELD(filtered_rows_dropped), false },
	};
	static const struct {
		const char *name, *help;
		size_t off;
	} expiration[] = {
		{ "scylla_expiration_scan_passes", "number of passes over the database",
		  FIELD(expiration_scan_passes) },
		{ "scylla_expiration_scan_table", "number of table scans (counting each scan of each "
						  "table that enabled expiration)",
		  FIELD(expiration_scan_table) },
		{ "scylla_expiration_items_deleted", "number of items deleted after expiration",
		  FIELD(expiration_items_deleted) },
	};
	unsigned i, k;
	uint64_t v;

	print_operations(o, op_names, nops);
	print_latency(o);
	for (k = 0; k < SM_ARRAY_SIZE(counters); k++)
		if (o->tlab == NULL || !counters[k].global)
			per_sample(o, counters[k].name, counters[k].help, counters[k].off);
	if (o->tlab == NULL)
		for (k = 0; k < SM_ARRAY_SIZE(expiration); k++) {
			fprintf(o->f, "# HELP %s %s\n# TYPE %s counter\n", expiration[k].name,
				expiration[k].help, expiration[k].name);
			for (i = 0; i < o->n; i++) {
				memcpy(&v, (const char *)&o->snap[i] + expiration[k].off, sizeof(v));
				fprintf(o->f, "%s{shard=\"%u\"} %llu\n", expiration[k].name, i,
					(unsigned long long)v);
			}
		}
	print_units(o);
	print_batches(o);
}

/* Add a relaxed copy of @src to @dst, word by word: its shard keeps writing it. */
static void
snap_add(struct alt_stats *dst, const struct alt_stats *src)
{
	const uint64_t *s = (const uint64_t *)src;
	uint64_t *d = (uint64_t *)dst;
	size_t k;

	for (k = 0; k < sizeof(struct alt_stats) / sizeof(uint64_t); k++)
		d[k] += SM_READ_ONCE(s[k]);
	dst->filtered_rows_dropped = dst->filtered_rows_read - dst->filtered_rows_matched;
}

static int
tstats_cmp(const void *a, const void *b)
{
	const struct alt_tstats *x = *(const struct alt_tstats *const *)a;
	const struct alt_tstats *y = *(const struct alt_tstats *const *)b;
	int c = strcmp(x->cf, y->cf);

	return c != 0 ? c : memcmp(&x->id, &y->id, sizeof(x->id));
}

/* scylla_alternator_table_*: every table's blocks summed over the shards, by name. */
static void
print_tables(FILE *f, const char *const *op_names, unsigned nops)
{
	struct metric_out o = { .f = f, .prefix = "scylla_alternator_table" };
	struct alt_tstats **v = NULL, *ts;
	unsigned n = 0, k;

	pthread_mutex_lock(&tstats_lock);
	for (ts = tstats_list; ts != NULL; ts = ts->next)
		n++;
	if (n == 0)
		goto out;
	v = sm_calloc(n, sizeof(*v));
	o.snap = sm_calloc(n, sizeof(*o.snap));
	o.tlab = sm_calloc(n, sizeof(*o.tlab));
	if (v == NULL || o.snap == NULL || o.tlab == NULL)
		goto out;
	n = 0;
	for (ts = tstats_list; ts != NULL; ts = ts->next)
		v[n++] = ts;
	qsort(v, n, sizeof(*v), tstats_cmp);
	for (k = 0; k < n; k++) {
		if (o.n == 0 || memcmp(&v[k]->id, &v[k - 1]->id, sizeof(v[k]->id)) != 0) {
			char lab[LABELS_MAX];

			snprintf(lab, sizeof(lab), "cf=\"%s\",ks=\"%s\"", v[k]->cf, v[k]->ks);
			o.tlab[o.n] = sm_strdup(lab);
			if (o.tlab[o.n] == NULL)
				break;
			o.n++;
		}
		snap_add(&o.snap[o.n - 1], &v[k]->st);
	}
	pthread_mutex_unlock(&tstats_lock);
	if (o.n > 0)
		print_all(&o, op_names, nops);
	for (k = 0; k < o.n; k++)
		sm_free(o.tlab[k]);
	goto done;
out:
	pthread_mutex_unlock(&tstats_lock);
done:
	sm_free(o.tlab);
	sm_free(o.snap);
	sm_free(v);
}

void
alt_metrics_format(FILE *f, unsigned nshards, const char *const *op_names, unsigned nops)
{
	struct metric_out o = { .f = f, .prefix = "scylla_alternator",
				.n = SM_MIN(nshards, (unsigned)SM_MAX_SHARDS) };
	unsigned i;

	o.snap = sm_calloc(o.n, sizeof(*o.snap));
	if (o.snap == NULL)
		return;
	for (i = 0; i < o.n; i++)
		snap_add(&o.snap[i], &alt_stats_all[i]);
	print_all(&o, op_names, nops);
	sm_free(o.snap);
	print_tables(f, op_names, nops);
}
