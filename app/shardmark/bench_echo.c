/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shardmark bench echo: the echo load, in-process over loopback. The engine
 * (clients, control, rows, the JSON result) is lib/bench's sm_bench_echo.h;
 * this file parses the options, serves the echo listener and prints.
 *
 * Every shard serves the echo listener (accepted on shard 0, handed to the
 * least-loaded shard) and runs an equal share of the client connections.
 * Each client connection keeps --pipeline frames in flight; every reply
 * frame is one request. A request is the whole round trip, client send to
 * client receive, so its counters include both sides: per-op figures are
 * the sum of every shard's counter deltas divided by the requests done.
 * Per-shard rows divide a shard's deltas by the requests its own clients
 * completed; server-side work for those may have run on another shard.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "app.h"
#include "echo.h"
#include "sm_bench_echo.h"

struct bench_ctx {
	struct sm_config cfg;
	struct sm_bench_echo_params prm;
	const char *json;
	struct sm_echo_service echo;
	struct sm_bench_echo run;
};

static struct bench_ctx *bench;

static int
parse_uint(const char *name, const char *v, unsigned min, unsigned max, unsigned *out, char *err,
	   size_t errlen)
{
	char *end;
	unsigned long x;

	errno = 0;
	x = strtoul(v, &end, 10);
	if (errno || end == v || *end != '\0' || v[0] == '-' || x < min || x > max) {
		snprintf(err, errlen, "%s: expected an integer from %u to %u, got '%s'", name, min,
			 max, v);
		return -EINVAL;
	}
	*out = (unsigned)x;
	return 0;
}

static int
parse_seconds(const char *name, const char *v, double min, double *out, char *err, size_t errlen)
{
	char *end;
	double x;

	x = strtod(v, &end);
	if (end == v || *end != '\0' || !(x >= min) || x > 86400) {
		snprintf(err, errlen, "%s: expected seconds from %g to 86400, got '%s'", name, min,
			 v);
		return -EINVAL;
	}
	*out = x;
	return 0;
}

static int
opt_duration(void *ctx, const char *v, char *err, size_t errlen)
{
	return parse_seconds("--duration", v, 0.1, &((struct bench_ctx *)ctx)->prm.duration_s, err,
			     errlen);
}

static int
opt_warmup(void *ctx, const char *v, char *err, size_t errlen)
{
	return parse_seconds("--warmup", v, 0, &((struct bench_ctx *)ctx)->prm.warmup_s, err, errlen);
}

static int
opt_connections(void *ctx, const char *v, char *err, size_t errlen)
{
	return parse_uint("--connections", v, 1, 100000, &((struct bench_ctx *)ctx)->prm.conns, err,
			  errlen);
}

static int
opt_size(void *ctx, const char *v, char *err, size_t errlen)
{
	return parse_uint("--size", v, 0, 1 << 20, &((struct bench_ctx *)ctx)->prm.size, err, errlen);
}

static int
opt_pipeline(void *ctx, const char *v, char *err, size_t errlen)
{
	return parse_uint("--pipeline", v, 1, 1024, &((struct bench_ctx *)ctx)->prm.pipeline, err,
			  errlen);
}

static int
opt_port(void *ctx, const char *v, char *err, size_t errlen)
{
	return parse_uint("--port", v, 0, 65535, &((struct bench_ctx *)ctx)->prm.port, err, errlen);
}

static int
opt_json(void *ctx, const char *v, char *err, size_t errlen)
{
	((struct bench_ctx *)ctx)->json = v;
	return sm_app_check_output("--json", v, err, errlen);
}

static const struct sm_cli_opt bench_opts[] = {
	{ "--duration", "SECONDS", "measured time [default: 5]", opt_duration },
	{ "--warmup", "SECONDS", "load before measuring starts [default: 1]", opt_warmup },
	{ "--connections", "N", "client connections over all shards [default: 256]",
	  opt_connections },
	{ "--size", "BYTES", "echo payload per request [default: 64]", opt_size },
	{ "--pipeline", "N", "requests in flight per connection [default: 16]", opt_pipeline },
	{ "--port", "PORT", "loopback port of the echo listener [default: a free one]", opt_port },
	{ "--json", "FILE", "also write the results as JSON to FILE", opt_json },
};

/* ---- shards: the network and the echo listener, then the engine ---- */

static int
bench_shard_init(unsigned shard, void *arg)
{
	struct bench_ctx *b = arg;
	struct sm_net_config nc;
	int ret;

	if (sm_shard_count() != b->run.nshards)
		return sm_bench_echo_shard_init(&b->run, shard); /* says why */
	sm_app_net_config(&b->cfg, &nc);
	ret = sm_net_shard_init(&nc);
	if (ret < 0)
		return ret;
	ret = sm_bench_echo_shard_init(&b->run, shard);
	if (ret < 0 || shard != 0)
		return ret;

	{
		struct sm_listen_opts lo = {
			.addr = "127.0.0.1",
			.port = (uint16_t)b->prm.port,
			.placement = SM_PLACE_BALANCED,
			.proto = &sm_echo_proto,
			.ctx = &b->echo,
		};
		struct sm_listener *l;

		ret = sm_net_listen(&lo, &l);
		if (ret < 0) {
			sm_app_listen_error(NULL, "bench echo", "--port", "127.0.0.1", b->prm.port,
					    ret);
			return ret;
		}
	}
	sm_bench_echo_start(&b->run);
	return 0;
}

static void
bench_shard_fini(unsigned shard, void *arg)
{
	struct bench_ctx *b = arg;

	sm_bench_echo_shard_fini(&b->run, shard);
	sm_echo_shard_fini();
	sm_net_shard_fini();
	sm_bench_echo_shard_release(&b->run, shard);
}

/* ---- report ---- */

/* @delta per op over @ops, 0 when no op was done. */
static double
per_op(uint64_t delta, uint64_t ops)
{
	return ops ? (double)delta / (double)ops : 0;
}

/* Hardware counters in the table, with short column labels. */
static const struct {
	enum sm_perf_counter c;
	const char *label;
} shown_perf[] = {
	{ SM_PERF_INSTRUCTIONS, "insns/op" },	  { SM_PERF_CYCLES, "cycles/op" },
	{ SM_PERF_CACHE_MISSES, "cmiss/op" },	  { SM_PERF_BRANCH_MISSES, "bmiss/op" },
	{ SM_PERF_CONTEXT_SWITCHES, "ctxsw/op" },
};

static void
print_row(const char *label, const struct sm_bench_echo_row *r)
{
	unsigned k;

	printf("%-6s %12" PRIu64 " %12.0f %9.3f %9.3f %9.3f %9.3f %9.3f", label, r->ops,
	       r->secs > 0 ? (double)r->ops / r->secs : 0, per_op(r->io_enters, r->ops),
	       per_op(r->allocs, r->ops), per_op(r->tasks, r->ops), per_op(r->polls, r->ops),
	       per_op(r->xmsgs, r->ops));
	for (k = 0; k < SM_ARRAY_SIZE(shown_perf); k++) {
		if (r->perf_ok[shown_perf[k].c])
			printf(" %10.2f", per_op(r->perf[shown_perf[k].c], r->ops));
		else
			printf(" %10s", "n/a");
	}
	printf("\n");
}

static void
print_report(void)
{
	struct sm_bench_echo_row r, total;
	struct sm_perf reason_src;
	char reason[256];
	unsigned i, k;

	memset(&total, 0, sizeof(total));
	printf("\necho load: %u %s, %u connections, %u-byte payload, pipeline %u, %.1f s "
	       "measured\n",
	       bench->run.nshards, bench->run.nshards == 1 ? "shard" : "shards", bench->prm.conns,
	       bench->prm.size, bench->prm.pipeline, bench->prm.duration_s);
	printf("%-6s %12s %12s %9s %9s %9s %9s %9s", "shard", "requests", "requests/s", "enters/op",
	       "allocs/op", "tasks/op", "polls/op", "xmsgs/op");
	for (k = 0; k < SM_ARRAY_SIZE(shown_perf); k++)
		printf(" %10s", shown_perf[k].label);
	printf("\n");
	for (i = 0; i < bench->run.nshards; i++) {
		char label[16];

		sm_bench_echo_row(&bench->run, i, &r);
		sm_bench_echo_row_add(&total, &r);
		snprintf(label, sizeof(label), "%u", i);
		print_row(label, &r);
	}
	print_row("total", &total);
	printf("(a request is one echo round trip; totals sum every shard's client and server "
	       "work; enters/op counts io_uring_enter calls)\n");
	/* One line per distinct reason, naming every counter it covers. */
	for (i = 0; i < SM_PERF_NR; i++) {
		reason_src.fd[i] = -1;
		reason_src.err[i] = bench->run.s0[0].perf_err[i];
	}
	for (k = 0; k < SM_PERF_NR; k++) {
		char names[256];
		size_t off;

		if (total.perf_ok[k] || reason_src.err[k] < 0)
			continue;
		if (sm_perf_unavailable_reason(&reason_src, k, reason, sizeof(reason)) == NULL)
			snprintf(reason, sizeof(reason), "counter read failed");
		off = (size_t)snprintf(names, sizeof(names), "%s", sm_perf_counter_name(k));
		for (i = k + 1; i < SM_PERF_NR; i++) {
			if (total.perf_ok[i] || reason_src.err[i] != reason_src.err[k])
				continue;
			off += (size_t)snprintf(names + off, sizeof(names) - off, ", %s",
						sm_perf_counter_name(i));
			reason_src.err[i] = -1; /* reported */
		}
		printf("%s: n/a: %s\n", names, reason);
	}
}

int
sm_cmd_bench_echo(int argc, char **argv)
{
	static struct bench_ctx b;
	struct sm_runtime_opts ro;
	char err[1024];
	int ret;

	memset(&b, 0, sizeof(b));
	sm_config_defaults(&b.cfg);
	b.prm.duration_s = 5;
	b.prm.warmup_s = 1;
	b.prm.conns = 256;
	b.prm.size = 64;
	b.prm.pipeline = 16;
	b.prm.out = stdout;
	ret = sm_cli_parse(
		argc, argv, "bench echo",
		"Run the echo load in-process over loopback on every shard and print\n"
		"requests/s and per-request counters (io_uring_enter calls, allocations,\n"
		"tasks, and hardware counters where the machine has a PMU) per shard.",
		&b.cfg, bench_opts, SM_ARRAY_SIZE(bench_opts), &b, err, sizeof(err));
	if (ret != 0) {
		if (ret < 0)
			fprintf(stderr, "shardmark bench echo: %s\n", err);
		sm_config_free(&b.cfg);
		return ret > 0 ? SM_EXIT_OK : SM_EXIT_USAGE;
	}
	ret = sm_app_prepare(&b.cfg);
	if (ret != 0)
		goto out;
	if (b.prm.port == 0 && sm_app_free_port(&b.prm.port) < 0) {
		fprintf(stderr, "shardmark bench echo: no free loopback port: pass --port\n");
		ret = SM_EXIT_FAIL;
		goto out;
	}
	bench = &b;
	b.echo.max_frame = b.prm.size;
	sm_app_runtime_opts(&b.cfg, &ro);
	ro.shard_init = bench_shard_init;
	ro.shard_fini = bench_shard_fini;
	ro.arg = &b;
	/* The plan is known only once the runtime counts the shards; size
	 * the per-shard arrays for the most it may start. */
	{
		cpu_set_t set;
		unsigned max = b.cfg.smp;

		if (max == 0 && sched_getaffinity(0, sizeof(set), &set) == 0)
			max = (unsigned)CPU_COUNT(&set);
		if (b.cfg.cpuset != NULL && b.cfg.smp == 0) {
			uint8_t cpus[CPU_SETSIZE / 8];
			int n = sm_cpuset_parse(b.cfg.cpuset, cpus, CPU_SETSIZE);

			if (n > 0)
				max = (unsigned)n;
		}
		if (sm_bench_echo_init(&b.run, &b.prm, max) < 0) {
			fprintf(stderr, "shardmark bench echo: out of memory\n");
			ret = SM_EXIT_FAIL;
			goto free_arrays;
		}
	}
	printf("shardmark bench echo: echo over loopback port %u, %u connections, %u-byte payload, "
	       "pipeline %u\n",
	       b.prm.port, b.prm.conns, b.prm.size, b.prm.pipeline);
	fflush(stdout);
	ret = sm_runtime_run(&ro, err, sizeof(err));
	if (ret < 0) {
		if (strncmp(err, "shard ", 6) != 0)
			fprintf(stderr, "shardmark bench echo: %s\n", err);
		ret = SM_EXIT_FAIL;
		goto free_arrays;
	}
	ret = b.run.result == 0 ? SM_EXIT_OK : SM_EXIT_FAIL;
	if (ret == SM_EXIT_OK) {
		print_report();
		if (b.json != NULL && sm_bench_echo_write_json(&b.run, b.json, sm_net_driver()->name,
							       err, sizeof(err)) < 0) {
			fprintf(stderr, "shardmark bench echo: %s\n", err);
			ret = SM_EXIT_FAIL;
		}
	}
free_arrays:
	sm_bench_echo_free(&b.run);
out:
	sm_config_free(&b.cfg);
	bench = NULL;
	return ret;
}
