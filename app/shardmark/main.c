/* SPDX-License-Identifier: BSD-3-Clause */
/* shardmark: one binary, one subcommand per job. */

#include <stdio.h>
#include <string.h>

#include "app.h"
#if SM_HAVE_DPDK
#include "sm_net_dpdk.h"
#endif

static void
usage(FILE *f)
{
	fprintf(f, "usage: shardmark <command> [options]\n\n"
		   "A shard-per-core benchmark appliance: one pinned reactor per CPU, each\n"
		   "owning its data and its network path (io_uring by default).\n\n"
		   "commands:\n"
		   "  serve     run the server: CQL, Alternator, stats endpoint, echo service\n"
		   "  bench     the benchmark suite: perf-simple-query on CQL and on Alternator\n"
		   "            under each write isolation mode, the echo load, then stress\n"
		   "            against a shardmark serve it starts (CQL write and read,\n"
		   "            Alternator writes under each isolation mode); one summary row\n"
		   "            per load ('bench echo' runs the echo load alone)\n"
		   "  perf-simple-query\n"
		   "            ScyllaDB's in-process simple-query benchmark (CQL or Alternator)\n"
		   "  stress    cassandra-stress compatible load over the network against\n"
		   "            shardmark or a ScyllaDB/Cassandra cluster (CQL or Alternator),\n"
		   "            its user profiles included\n"
		   "  ycsb      YCSB's core workloads (load|run -P config/ycsb/workloada) over CQL\n"
		   "            or Alternator, with YCSB's command line and output\n"
		   "  scylla-bench\n"
		   "            scylla-bench's modes and workloads (-mode write -workload\n"
		   "            sequential ...) with its flags and output\n"
		   "  cql       a CQL shell (cqlsh's commands and output) for shardmark serve,\n"
		   "            ScyllaDB or Cassandra: shardmark cql [HOST[:PORT]] [-e STATEMENT]\n"
		   "  report    one HTML file with the charts of one or more results:\n"
		   "            shardmark report RUN.json [RUN.hdr] [RUN2.json ...] -o F.html\n"
		   "  compare   two results, per figure the change, its confidence interval\n"
		   "            and a verdict: shardmark compare A.json B.json\n"
		   "  version   print the version and build features\n\n"
		   "Run 'shardmark <command> --help' for the options of a command.\n");
}

static int
cmd_version(int argc, char **argv)
{
	if (argc > 0 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)) {
		printf("usage: shardmark version\n\n"
		       "Print shardmark's version and what this build has: the io_uring driver\n"
		       "and its liburing, the DPDK driver (or 'not built'), the per-shard heap.\n");
		return SM_EXIT_OK;
	}
	if (argc > 0) {
		fprintf(stderr, "shardmark version: unexpected argument '%s' (see shardmark version "
				"--help)\n",
			argv[0]);
		return SM_EXIT_USAGE;
	}
	printf("shardmark %s (io_uring driver with liburing %s; DPDK driver: %s; heap: %s)\n",
	       SM_VERSION, SM_LIBURING_VERSION,
#if SM_HAVE_DPDK
	       sm_net_dpdk_version(),
#else
	       "not built",
#endif
#ifdef SM_USE_MIMALLOC
	       "mimalloc per shard"
#else
	       "libc malloc"
#endif
	);
	return SM_EXIT_OK;
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return SM_EXIT_USAGE;
	}
	if (strcmp(argv[1], "serve") == 0)
		return sm_cmd_serve(argc - 2, argv + 2);
	if (strcmp(argv[1], "bench") == 0)
		return sm_cmd_bench(argc - 2, argv + 2);
	if (strcmp(argv[1], "perf-simple-query") == 0)
		return sm_cmd_perf_simple_query(argc - 2, argv + 2);
	if (strcmp(argv[1], "stress") == 0)
		return sm_cmd_stress(argc - 2, argv + 2);
	if (strcmp(argv[1], "ycsb") == 0)
		return sm_cmd_ycsb(argc - 2, argv + 2);
	if (strcmp(argv[1], "scylla-bench") == 0)
		return sm_cmd_scylla_bench(argc - 2, argv + 2);
	if (strcmp(argv[1], "cql") == 0)
		return sm_cmd_cql(argc - 2, argv + 2);
	if (strcmp(argv[1], "report") == 0)
		return sm_cmd_report(argc - 2, argv + 2);
	if (strcmp(argv[1], "compare") == 0)
		return sm_cmd_compare(argc - 2, argv + 2);
	if (strcmp(argv[1], "version") == 0 || strcmp(argv[1], "--version") == 0)
		return cmd_version(argc - 2, argv + 2);
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return SM_EXIT_OK;
	}
	fprintf(stderr, "shardmark: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return SM_EXIT_USAGE;
}
