/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shardmark perf-simple-query: ScyllaDB's in-process simple-query benchmark
 * (test/perf/perf_simple_query.cc), with its CQL frontend and the Alternator
 * frontend it had until 2025 (--alternator MODE). The harness (workers,
 * phases, per-op figures, the JSON result) is lib/bench's sm_psq.h, the
 * frontends sm_psq_workload.h; this file parses the command line, wires the
 * executors on each shard and prints the summary and the per-shard table.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "app.h"
#include "sm_alternator.h"
#include "sm_cql.h"
#include "sm_psq_workload.h"
#include "sm_store.h"

struct psq_ctx {
	struct sm_config cfg;
	/* options, ScyllaDB's names and defaults */
	struct sm_psq_params prm;
	bool write, del;
	const char *json_path;
	const char *csv_path;
	const char *html_path;
	bool alternator;
	enum sm_alt_isolation iso;
	const char *iso_name;
	const char *workload;
	/* runtime */
	struct sm_psq run;
	struct sm_cql_cluster cluster;
	struct sm_cql_exec_config exec_cfg;
	struct sm_cql_service svc;
	struct sm_alternator_config alt_cfg;
};

static struct psq_ctx *psq;

/* ---- printing ---- */

static void
print_summary(void)
{
	const struct sm_psq *r = &psq->run;
	double v[SM_PSQ_MAX_ITERATIONS];
	struct sm_bench_stats st;
	unsigned i, n = r->iter;

	for (i = 0; i < n; i++)
		v[i] = r->results[i].tps;
	sm_bench_stats(v, n, &st);
	printf("\n");
	sm_bench_print_stats(stdout, "throughput", &st, true);
	for (i = 0; i < n; i++)
		v[i] = r->results[i].insns_per_op;
	sm_bench_stats(v, n, &st);
	sm_bench_print_stats(stdout, "instructions_per_op", &st, r->results[0].insns_ok);
	for (i = 0; i < n; i++)
		v[i] = r->results[i].cycles_per_op;
	sm_bench_stats(v, n, &st);
	sm_bench_print_stats(stdout, "cpu_cycles_per_op", &st, r->results[0].cycles_ok);
	printf("\n");
}

/* Why the instruction counter is unavailable, from shard 0's snapshot. */
static void
perf_reason(char *buf, size_t len)
{
	struct sm_perf p;
	unsigned k;

	memset(&p, 0, sizeof(p));
	for (k = 0; k < SM_PERF_NR; k++) {
		p.fd[k] = psq->run.shard_first[0].perf_ok[k] ? 0 : -1;
		p.err[k] = psq->run.shard_first[0].perf_err[k];
	}
	if (sm_perf_unavailable_reason(&p, SM_PERF_INSTRUCTIONS, buf, len) == NULL)
		snprintf(buf, len, "the counter could not be read in every iteration");
}

/* The per-shard table over the whole measurement (our addition). */
static void
print_shards(void)
{
	static const enum sm_perf_counter hw[] = { SM_PERF_INSTRUCTIONS, SM_PERF_CYCLES,
						   SM_PERF_CACHE_MISSES, SM_PERF_BRANCH_MISSES };
	const struct sm_psq *r = &psq->run;
	struct sm_reactor_view rv;
	char reason[200];
	unsigned i, k;
	bool any_na = false;

	printf("%-6s %12s %12s %9s %9s %10s %10s %10s %10s %6s %6s %13s %9s\n", "shard", "ops",
	       "tps", "allocs/op", "tasks/op", "insns/op", "cycles/op", "cmiss/op", "bmiss/op",
	       "busy%", "stalls", "sched_p99(us)", "hops/op");
	for (i = 0; i < r->nshards; i++) {
		const struct sm_shard_snapshot *a = &r->shard_first[i], *b = &r->shard_last[i];
		uint64_t ops = r->shard_ops[i];
		double secs = (double)(b->when_ns - a->when_ns) / 1e9;

		printf("%-6u %12" PRIu64 " %12.0f %9.3f %9.3f", i, ops, secs > 0 ? ops / secs : 0,
		       sm_psq_per_op(b->sw.allocs - a->sw.allocs, ops),
		       sm_psq_per_op(b->sw.tasks_run - a->sw.tasks_run, ops));
		for (k = 0; k < SM_ARRAY_SIZE(hw); k++) {
			if (a->perf_ok[hw[k]] && b->perf_ok[hw[k]])
				printf(" %10.1f", sm_psq_per_op(b->perf[hw[k]] - a->perf[hw[k]], ops));
			else {
				printf(" %10s", "n/a");
				any_na = true;
			}
		}
		/* The reactor's own view of the measurement: how busy, stalls, waits. */
		sm_reactor_view(&a->sw, &b->sw, &rv);
		printf(" %6.1f %6" PRIu64, 100.0 * rv.busy_share, rv.stalls);
		if (rv.sched_p99_us == UINT64_MAX)
			printf(" %13s", ">1048576");
		else
			printf(" %13" PRIu64, rv.sched_p99_us);
		printf(" %9.3f\n", sm_psq_per_op(b->sw.hops - a->sw.hops, ops));
	}
	/* The reason was printed once, above the summary. */
	if (any_na && r->results[0].insns_ok && r->results[0].cycles_ok) {
		perf_reason(reason, sizeof(reason));
		printf("cmiss/op, bmiss/op: n/a: %s\n", reason);
	}
}

/* ---- shards: the executors, then the harness ---- */

static int
psq_shard_init(unsigned shard, void *arg)
{
	int ret;

	(void)arg;
	ret = sm_store_shard_init();
	if (ret == 0)
		ret = sm_store_log_replay();
	if (ret == 0)
		ret = sm_clog_shard_init();
	if (ret == 0)
		ret = sm_cql_system_shard_init(&psq->cluster);
	if (ret == 0)
		ret = sm_cql_exec_shard_init(&psq->exec_cfg);
	if (ret == 0)
		ret = sm_alternator_shard_init(&psq->alt_cfg);
	if (ret == 0)
		ret = sm_psq_shard_init(&psq->run, shard);
	return ret;
}

static void
psq_shard_fini(unsigned shard, void *arg)
{
	(void)arg;
	sm_psq_shard_fini(&psq->run, shard);
	sm_cql_shard_fini();
	sm_cql_exec_shard_fini();
	sm_alternator_shard_fini();
	sm_cql_system_shard_fini();
	sm_clog_shard_fini();
	sm_store_shard_fini();
}

/* ---- options ---- */

#define P(ctx) ((struct psq_ctx *)(ctx))

static int
o_cl(void *c, const char *v, char *e, size_t l)
{
	static const char *const names[] = { "ANY",	     "ONE",	    "TWO",
					     "THREE",	     "QUORUM",	    "ALL",
					     "LOCAL_QUORUM", "EACH_QUORUM", "SERIAL",
					     "LOCAL_SERIAL", "LOCAL_ONE" };
	unsigned i;

	for (i = 0; i < SM_ARRAY_SIZE(names); i++) {
		if (strcasecmp(v, names[i]) == 0) {
			P(c)->prm.cl = (uint16_t)i;
			return 0;
		}
	}
	snprintf(e, l,
		 "--consistency-level: unknown level '%s' (ONE, QUORUM, LOCAL_QUORUM, ALL, ...)",
		 v);
	return -EINVAL;
}
static int
o_alternator(void *c, const char *v, char *e, size_t l)
{
	if (sm_alt_isolation_parse(v, &P(c)->iso) < 0) {
		snprintf(e, l,
			 "Invalid --alternator-write-isolation setting '%s'. Allowed values: {f, "
			 "forbid, "
			 "forbid_rmw, a, always, always_use_lwt, o, only_rmw_uses_lwt, u, unsafe, "
			 "unsafe_rmw}.",
			 v);
		return -EINVAL;
	}
	P(c)->alternator = true;
	P(c)->iso_name = P(c)->iso == SM_ALT_FORBID_RMW	    ? "forbid_rmw"
			 : P(c)->iso == SM_ALT_LWT_ALWAYS   ? "always_use_lwt"
			 : P(c)->iso == SM_ALT_LWT_RMW_ONLY ? "only_rmw_uses_lwt"
							    : "unsafe";
	return 0;
}

/* CQL's workloads on a table with a view to keep up to date: a secondary index's or a materialized one. */
static bool
cql_view_workload(const char *w)
{
	return strcmp(w, "write_index") == 0 || strcmp(w, "write_view") == 0;
}

static int
o_workload(void *c, const char *v, char *e, size_t l)
{
	enum sm_psq_mode m;

	if (sm_psq_mode_parse(v, &m) < 0) {
		snprintf(e, l,
			 "--workload: expected read, write, write_rmw, write_gsi, write_ttl, "
			 "write_stream, write_index, write_view or delete, got '%s'",
			 v);
		return -EINVAL;
	}
	P(c)->workload = v;
	return 0;
}


/* A typed row: the value lands in struct psq_ctx's @field. */
#define OPT(name, type, field, min, max, arg, help)                                                \
	SM_CLI_ROW(name, type, struct psq_ctx, field, min, max, arg, help)
/* ScyllaDB options that mean nothing for an in-memory store: accepted, explained. */
#define IGNORED(name, arg, what) SM_CLI_IGNORED(name, arg, "accepted, no effect: " what)

/* clang-format off */
static const struct sm_cli_opt psq_opts[] = {
	OPT("--random-seed", U64, prm.seed, 0, UINT32_MAX, "N",
	    "seed of the key choice (default: random, printed)"),
	OPT("--partitions", UINT, prm.partitions, 1, 100000000, "N",
	    "number of partitions (keys), default 10000"),
	OPT("--write", BOOL, write, 0, 0, NULL, "write (UPDATE) instead of read"),
	OPT("--delete", BOOL, del, 0, 0, NULL, "delete instead of read (after populating)"),
	OPT("--counters", BOOL, prm.counters, 0, 0, NULL, "counter columns and counter updates"),
	OPT("--collection", UINT, prm.collection, 0, 100, "N",
	    "add a map<blob, blob> column \"CC\" of N cells"),
	OPT("--duration", UINT, prm.duration, 1, SM_PSQ_MAX_ITERATIONS, "N",
	    "number of 1-second iterations, default 5"),
	OPT("--operations-per-shard", U64, prm.ops_per_shard, 1, UINT64_MAX / 2, "N",
	    "one iteration of exactly N requests per shard"),
	OPT("--concurrency", UINT, prm.concurrency, 1, 10000, "N",
	    "workers (requests in flight) per shard, default 100"),
	OPT("--query-single-key", BOOL, prm.single_key, 0, 0, NULL, "always use key 0"),
	OPT("--shard-aware", BOOL, prm.shard_aware, 0, 0, "BOOL",
	    "each shard draws only keys it owns (default true)"),
	{ "--consistency-level", "CL", "consistency of the measured requests, default QUORUM",
	  o_cl },
	OPT("--stop-on-error", BOOL, prm.stop_on_error, 0, 0, "BOOL",
	    "stop at the first failed request (default true)"),
	OPT("--timeout", STRING, prm.timeout, 0, 0, "T", "add USING TIMEOUT T to the statements"),
	OPT("--json-result", OUTPUT, json_path, 0, 0, "FILE", "also write the result as JSON"),
	OPT("--html", OUTPUT, html_path, 0, 0, "FILE",
	    "also write the HTML report of the run (shardmark report's: tps and per-op "
	    "counters per iteration, per-shard bars)"),
	OPT("--csv", OUTPUT, csv_path, 0, 0, "FILE",
	    "also write one row per iteration as CSV (a header first)"),
	{ "--alternator", "MODE", "Alternator frontend with this write isolation (f, a, o, u ...)",
	  o_alternator },
	{ "--workload", "W",
	  "Alternator: read, write, write_rmw (conditional UpdateItem), write_gsi (a table with "
	  "a GSI), write_ttl (TTL on), write_stream (a NEW_AND_OLD_IMAGES stream) or delete; "
	  "CQL: read, write, delete, write_index (a table with a secondary index on C0) or "
	  "write_view (a table with a materialized view keyed by C0)",
	  o_workload },
	IGNORED("--flush", NULL, "the store is in memory (no memtable flush)"),
	IGNORED("--enable-cache", "BOOL", "there is no row cache, only memory"),
	IGNORED("--enable-index-cache", "BOOL", "there are no sstables"),
	IGNORED("--bypass-cache", NULL, "there is no cache to bypass"),
	IGNORED("--memtable-partitions", "N", "nothing is flushed"),
	IGNORED("--sstable-summary-ratio", "R", "there are no sstables"),
	IGNORED("--sstable-format", "F", "there are no sstables"),
	OPT("--tablets", BOOL, prm.tablets, 0, 0, NULL,
	    "CQL: create ks with tablets = {'enabled': true} (each shard owns its tablets' "
	    "contiguous token ranges, not the vnode sharding)"),
	OPT("--initial-tablets", UINT, prm.initial_tablets, 1, SM_TABLETS_MAX, "N",
	    "with --tablets: tablets = {'initial': N} (rounded up to a power of two; default "
	    "4 per shard)"),
};
/* clang-format on */

int
sm_cmd_perf_simple_query(int argc, char **argv)
{
	static struct psq_ctx ctx;
	struct sm_runtime_opts ro;
	struct sm_psq_params *prm = &ctx.prm;
	const struct sm_psq_workload *wl;
	char err[1024];
	int ret;

	psq = &ctx;
	sm_config_defaults(&ctx.cfg);
	prm->seed = UINT64_MAX; /* not given: random */
	prm->partitions = 10000;
	prm->duration = 5;
	prm->concurrency = 100;
	prm->shard_aware = true;
	prm->stop_on_error = true;
	prm->cl = SM_CQL_QUORUM;
	ret = sm_cli_parse(
		argc, argv, "perf-simple-query",
		"ScyllaDB's in-process simple-query benchmark: the CQL executor (or, with\n"
		"--alternator MODE, the Alternator executor) driven by --concurrency workers\n"
		"per shard, no network. Prints tps and allocs, tasks, instructions and cycles\n"
		"per op for each 1-second iteration, then median, MAD, max and min, then a\n"
		"per-shard table.",
		&ctx.cfg, psq_opts, SM_ARRAY_SIZE(psq_opts), &ctx, err, sizeof(err));
	if (ret != 0) {
		if (ret < 0)
			fprintf(stderr, "shardmark perf-simple-query: %s\n", err);
		sm_config_free(&ctx.cfg);
		return ret > 0 ? SM_EXIT_OK : SM_EXIT_USAGE;
	}
	if (prm->collection > 0 && prm->counters) {
		fprintf(stderr,
			"shardmark perf-simple-query: --collection and --counters are mutually "
			"exclusive\n");
		sm_config_free(&ctx.cfg);
		return SM_EXIT_USAGE;
	}
	if (ctx.workload != NULL && !ctx.alternator && !cql_view_workload(ctx.workload) &&
	    strcmp(ctx.workload, "read") != 0 && strcmp(ctx.workload, "write") != 0 &&
	    strcmp(ctx.workload, "delete") != 0) {
		fprintf(stderr,
			"shardmark perf-simple-query: --workload is for the Alternator frontend "
			"(add --alternator MODE), except CQL's read, write, delete, write_index and "
			"write_view: "
			"got %s\n",
			ctx.workload);
		sm_config_free(&ctx.cfg);
		return SM_EXIT_USAGE;
	}
	if (ctx.workload != NULL && ctx.alternator && cql_view_workload(ctx.workload)) {
		fprintf(stderr, "shardmark perf-simple-query: --workload %s is CQL's (a "
				"secondary index or view): Alternator's is write_gsi\n", ctx.workload);
		sm_config_free(&ctx.cfg);
		return SM_EXIT_USAGE;
	}
	if (ctx.workload != NULL && !ctx.alternator && ctx.prm.counters &&
	    cql_view_workload(ctx.workload)) {
		fprintf(stderr, "shardmark perf-simple-query: --workload %s and --counters "
				"are mutually exclusive (counter tables have no indexes or views)\n",
			ctx.workload);
		sm_config_free(&ctx.cfg);
		return SM_EXIT_USAGE;
	}
	if (prm->tablets && ctx.alternator) {
		fprintf(stderr, "shardmark perf-simple-query: --tablets is for the CQL frontend: "
				"Alternator tables are not stored by tablets here\n");
		sm_config_free(&ctx.cfg);
		return SM_EXIT_USAGE;
	}
	if (prm->initial_tablets > 0 && !prm->tablets) {
		fprintf(stderr, "shardmark perf-simple-query: --initial-tablets needs --tablets\n");
		sm_config_free(&ctx.cfg);
		return SM_EXIT_USAGE;
	}
	prm->mode = ctx.write ? SM_PSQ_WRITE : ctx.del ? SM_PSQ_DELETE : SM_PSQ_READ;
	if (ctx.workload != NULL && sm_psq_mode_parse(ctx.workload, &prm->mode) < 0)
		prm->mode = SM_PSQ_READ;
	if (prm->seed == UINT64_MAX) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		prm->seed = (uint64_t)(ts.tv_nsec ^ ts.tv_sec) & UINT32_MAX;
	}
	prm->write_isolation = ctx.alternator ? ctx.iso_name : NULL;
	prm->out = stdout;
	wl = !ctx.alternator			     ? &sm_psq_workload_cql
	     : prm->mode == SM_PSQ_WRITE_STREAM ? &sm_psq_workload_alternator_stream
						 : &sm_psq_workload_alternator;
	ret = sm_app_prepare(&ctx.cfg);
	if (ret == 0)
		ret = sm_app_commitlog_setup(&ctx.cfg);
	if (ret != 0)
		goto out;
	if (sm_psq_init(&ctx.run, prm, wl, &ctx.svc, sm_app_shard_count(&ctx.cfg)) < 0 ||
	    sm_cql_cluster_init(&ctx.cluster, "shardmark", "127.0.0.1", 9042, NULL, err,
				sizeof(err)) < 0) {
		fprintf(stderr, "shardmark perf-simple-query: out of memory\n");
		ret = SM_EXIT_FAIL;
		goto out;
	}
	ctx.exec_cfg.cluster = &ctx.cluster;
	ctx.svc.exec = &sm_cql_exec;
	ctx.svc.node = &ctx.cluster;
	ctx.alt_cfg.default_isolation = ctx.iso;
	printf("random-seed=%llu\n", (unsigned long long)prm->seed);
	printf("Running test with config: {partitions=%u, concurrency=%u, mode=%s, "
	       "frontend=%s%s%s, "
	       "query_single_key=%s, counters=%s, collection=%u, shard_aware=%s%s}\n",
	       prm->partitions, prm->concurrency, sm_psq_mode_name(prm->mode), wl->name,
	       ctx.alternator ? ", write_isolation=" : "", ctx.alternator ? ctx.iso_name : "",
	       prm->single_key ? "yes" : "no", prm->counters ? "yes" : "no", prm->collection,
	       prm->shard_aware ? "yes" : "no", prm->tablets ? ", tablets=yes" : "");
	fflush(stdout);
	if (ctx.csv_path != NULL) {
		ctx.run.prm.csv = fopen(ctx.csv_path, "w");
		if (ctx.run.prm.csv == NULL) {
			fprintf(stderr, "shardmark perf-simple-query: cannot write --csv %s: %s\n",
				ctx.csv_path, strerror(errno));
			ret = SM_EXIT_USAGE;
			goto out;
		}
		sm_psq_csv_header(ctx.run.prm.csv);
	}
	sm_app_runtime_opts(&ctx.cfg, &ro);
	ro.shard_init = psq_shard_init;
	ro.shard_fini = psq_shard_fini;
	ro.arg = &ctx;
	ret = sm_runtime_run(&ro, err, sizeof(err));
	if (ret < 0) {
		if (strncmp(err, "shard ", 6) != 0)
			fprintf(stderr, "shardmark perf-simple-query: %s\n", err);
		ret = SM_EXIT_FAIL;
		goto out;
	}
	ret = ctx.run.result == 0 ? SM_EXIT_OK : SM_EXIT_FAIL;
	if (ctx.run.iter > 0) {
		if (!ctx.run.results[0].insns_ok || !ctx.run.results[0].cycles_ok) {
			char reason[200];

			perf_reason(reason, sizeof(reason));
			/* The one line that says why, for the iterations and the shard table. */
			printf("insns/op, cycles/op, cmiss/op and bmiss/op: n/a: %s "
			       "(tests/bench/insns-per-op.sh counts instructions under callgrind)\n",
			       reason);
		}
		print_summary();
		print_shards();
		if (ctx.json_path != NULL || ctx.html_path != NULL) {
			char cpu[128], tmp[256] = "";
			const char *path = ctx.json_path;

			/* --html reads the JSON result back: a temporary one without --json-result */
			if (path == NULL && sm_app_tmp_file(tmp, sizeof(tmp), "shardmark-psq", ".json") == 0)
				path = tmp;
			sm_app_cpu_model(cpu, sizeof(cpu));
			if (path == NULL ||
			    sm_psq_write_json(&ctx.run, path, cpu, err, sizeof(err)) < 0) {
				fprintf(stderr, "shardmark perf-simple-query: %s\n",
					path == NULL ? "--html: no temporary file for the result" : err);
				ret = SM_EXIT_FAIL;
			} else if (ctx.html_path != NULL) {
				char *files[1] = { (char *)(uintptr_t)path };

				if (sm_app_report(ctx.html_path, "shardmark perf-simple-query", NULL,
						  files, 1, "shardmark perf-simple-query: --html",
						  stderr) != SM_EXIT_OK)
					ret = SM_EXIT_FAIL;
			}
			if (tmp[0] != '\0')
				unlink(tmp);
		}
	}
	if (ctx.run.setup_err[0] != '\0') {
		fprintf(stderr, "shardmark perf-simple-query: %s\n", ctx.run.setup_err);
		ret = SM_EXIT_FAIL;
	}
out:
	if (ctx.run.prm.csv != NULL && fclose(ctx.run.prm.csv) != 0) {
		fprintf(stderr, "shardmark perf-simple-query: writing --csv %s: %s\n", ctx.csv_path,
			strerror(errno));
		ret = SM_EXIT_FAIL;
	}
	ctx.run.prm.csv = NULL;
	sm_clog_cleanup();
	sm_cql_cluster_free(&ctx.cluster);
	sm_psq_free(&ctx.run);
	sm_config_free(&ctx.cfg);
	return ret;
}
