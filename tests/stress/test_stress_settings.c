/* SPDX-License-Identifier: BSD-3-Clause */
/* lib/stress: cassandra-stress command lines parse to the right settings. */

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sm_stress.h"

static char errbuf[512];

/* Parse @line split on single spaces, as a shell would for unquoted words. */
static int
parse_line(const char *line, struct sm_stress_settings *s)
{
	char buf[1024], *argv[64], *p, *save = NULL;
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (p = strtok_r(buf, " ", &save); p != NULL && argc < 64; p = strtok_r(NULL, " ", &save))
		argv[argc++] = p;
	memset(s, 0xa5, sizeof(*s)); /* the parser must not rely on a zeroed struct */
	errbuf[0] = '\0';
	return sm_stress_settings_parse(argc, argv, s, errbuf, sizeof(errbuf));
}

/* Parse @argc words given one by one (words that a shell kept quoted). */
static int
parse_words(struct sm_stress_settings *s, int argc, ...)
{
	char *argv[32];
	va_list ap;
	int i;

	va_start(ap, argc);
	for (i = 0; i < argc; i++)
		argv[i] = va_arg(ap, char *);
	va_end(ap);
	memset(s, 0, sizeof(*s));
	errbuf[0] = '\0';
	return sm_stress_settings_parse(argc, argv, s, errbuf, sizeof(errbuf));
}

/* @line must be refused with a message containing each of the NULL-terminated words. */
static void
expect_error(const char *line, ...)
{
	struct sm_stress_settings s;
	const char *word;
	va_list ap;
	int rc = parse_line(line, &s);

	if (rc != -EINVAL)
		fail_msg("'%s' parsed (rc %d), expected an error", line, rc);
	va_start(ap, line);
	while ((word = va_arg(ap, const char *)) != NULL) {
		if (strstr(errbuf, word) == NULL)
			fail_msg("'%s': error \"%s\" does not mention \"%s\"", line, errbuf, word);
	}
	va_end(ap);
	/* A failed parse leaves nothing to free, and freeing again is harmless. */
	sm_stress_settings_free(&s);
}

static void
assert_dist(const struct sm_stress_dist *d, enum sm_stress_dist_kind kind, uint64_t min,
	    uint64_t max)
{
	assert_int_equal(d->kind, kind);
	assert_int_equal(d->min, min);
	assert_int_equal(d->max, max);
}

static void
test_write_doc_example(void **state)
{
	struct sm_stress_settings s;

	(void)state;
	assert_int_equal(parse_line("write n=1000000 cl=ONE -rate threads=50 -node 127.0.0.1", &s),
			 0);
	assert_int_equal(s.cmd, SM_STRESS_CMD_WRITE);
	assert_int_equal(s.n_ops, 1000000);
	assert_int_equal(s.duration_ns, 0);
	assert_false(s.tokenrange.wrap);
	assert_int_equal(s.tokenrange.splits, 0);
	assert_int_equal(s.cl, SM_STRESS_CL_ONE);
	assert_int_equal(s.cl, 1);
	assert_int_equal(s.rate.threads, 50);
	assert_int_equal(s.rate.kind, SM_STRESS_RATE_NONE);
	assert_int_equal(s.nodes.n, 1);
	assert_string_equal(s.nodes.hosts[0], "127.0.0.1");
	assert_true(s.ratio[SM_STRESS_OP_WRITE] == 1 && s.ratio[SM_STRESS_OP_READ] == 0);
	/* default population of a write: seq=1..n, wrapping */
	assert_dist(&s.pop.dist, SM_STRESS_DIST_SEQ, 1, 1000000);
	assert_true(s.pop.wrap);
	assert_false(s.pop.set_by_user);
	/* warm-up: min(50000, n/4) x 1 node, at min(100, threads) */
	assert_int_equal(s.warmup_ops, 50000);
	assert_int_equal(s.warmup_threads, 50);
	sm_stress_settings_free(&s);
	sm_stress_settings_free(&s);
}

static void
test_read_duration_fixed_rate(void **state)
{
	struct sm_stress_settings s;

	(void)state;
	assert_int_equal(parse_line("read duration=10m -pop dist=UNIFORM(1..1000000) -rate "
				    "threads=200 fixed=10000/s",
				    &s),
			 0);
	assert_int_equal(s.cmd, SM_STRESS_CMD_READ);
	assert_int_equal(s.n_ops, 0);
	assert_int_equal(s.duration_ns, 600ull * 1000000000ull);
	assert_dist(&s.pop.dist, SM_STRESS_DIST_UNIFORM, 1, 1000000);
	assert_true(s.pop.set_by_user);
	assert_int_equal(s.rate.threads, 200);
	assert_int_equal(s.rate.kind, SM_STRESS_RATE_FIXED);
	assert_int_equal(s.rate.ops_per_s, 10000);
	assert_int_equal(s.warmup_ops, 50000); /* duration=: 50000 per node */
	assert_int_equal(s.warmup_threads, 100);
	assert_true(s.ratio[SM_STRESS_OP_READ] == 1 && s.ratio[SM_STRESS_OP_WRITE] == 0);
	sm_stress_settings_free(&s);
}

static void
test_mixed_ratio_gaussian(void **state)
{
	struct sm_stress_settings s;

	(void)state;
	assert_int_equal(parse_line("mixed ratio(write=1,read=3) n=100000 cl=QUORUM -pop "
				    "dist=GAUSSIAN(1..1000000,5)",
				    &s),
			 0);
	assert_int_equal(s.cmd, SM_STRESS_CMD_MIXED);
	assert_int_equal(s.n_ops, 100000);
	assert_int_equal(s.cl, SM_STRESS_CL_QUORUM);
	assert_int_equal(s.cl, 4);
	assert_true(s.ratio[SM_STRESS_OP_WRITE] == 1);
	assert_true(s.ratio[SM_STRESS_OP_READ] == 3);
	assert_true(s.ratio[SM_STRESS_OP_COUNTER_WRITE] == 0);
	assert_dist(&s.pop.dist, SM_STRESS_DIST_GAUSSIAN, 1, 1000000);
	assert_true(fabs(s.pop.dist.mean - 500000.5) < 1e-9);
	assert_true(fabs(s.pop.dist.stdev - 999999.0 / 2 / 5) < 1e-9);
	/* default clustering GAUSSIAN(1..10) */
	assert_dist(&s.clustering, SM_STRESS_DIST_GAUSSIAN, 1, 10);
	assert_int_equal(s.warmup_ops, 25000);
	sm_stress_settings_free(&s);

	/* without ratio(): read=1, write=1; decimals and counters allowed; spaces repaired */
	assert_int_equal(parse_line("mixed n=10", &s), 0);
	assert_true(s.ratio[SM_STRESS_OP_READ] == 1 && s.ratio[SM_STRESS_OP_WRITE] == 1);
	sm_stress_settings_free(&s);
	assert_int_equal(parse_words(&s, 3, "mixed", "ratio(read=0.5, counter_read=2)", "n=10"), 0);
	assert_true(s.ratio[SM_STRESS_OP_READ] == 0.5 && s.ratio[SM_STRESS_OP_WRITE] == 0);
	assert_true(s.ratio[SM_STRESS_OP_COUNTER_READ] == 2);
	sm_stress_settings_free(&s);
	assert_int_equal(parse_words(&s, 5, "mixed", "ratio(", "write=1,", "read=3)", "n=10"), 0);
	assert_true(s.ratio[SM_STRESS_OP_READ] == 3 && s.ratio[SM_STRESS_OP_WRITE] == 1);
	sm_stress_settings_free(&s);
	assert_int_equal(parse_line("mixed n=10 clustering=FIXED(4)", &s), 0);
	assert_dist(&s.clustering, SM_STRESS_DIST_FIXED, 4, 4);
	sm_stress_settings_free(&s);
}

static void
test_counter_write_schema(void **state)
{
	struct sm_stress_settings s;
	unsigned i;

	(void)state;
	/* the shell hands the quoted replication(...) over as one word */
	assert_int_equal(parse_words(&s, 9, "counter_write", "n=10k", "-col", "n=FIXED(5)",
				     "size=FIXED(34)", "-schema",
				     "replication(strategy=NetworkTopologyStrategy,factor=3)",
				     "keyspace=ks1", "-node"),
			 0);
	assert_int_equal(s.cmd, SM_STRESS_CMD_COUNTER_WRITE);
	assert_int_equal(s.n_ops, 10000);
	assert_dist(&s.col.count, SM_STRESS_DIST_FIXED, 5, 5);
	assert_dist(&s.col.size, SM_STRESS_DIST_FIXED, 34, 34);
	assert_string_equal(s.schema.keyspace, "ks1");
	assert_string_equal(s.schema.strategy,
			    "org.apache.cassandra.locator.NetworkTopologyStrategy");
	assert_int_equal(s.schema.factor, 3);
	assert_int_equal(s.schema.n_repl, 1);
	assert_string_equal(s.schema.repl[0].key, "replication_factor");
	assert_string_equal(s.schema.repl[0].value, "3");
	assert_string_equal(s.schema.counter_table, "counter1");
	assert_true(s.ratio[SM_STRESS_OP_COUNTER_WRITE] == 1);
	assert_dist(&s.pop.dist, SM_STRESS_DIST_SEQ, 1, 10000);
	assert_string_equal(s.nodes.hosts[0], "localhost"); /* empty -node keeps the default */
	sm_stress_settings_free(&s);

	/* counter_add alias, spaces inside the quotes, one unquoted word */
	assert_int_equal(
		parse_words(
			&s, 5, "counter_add", "n=10", "-schema",
			"replication(strategy=SimpleStrategy, factor=2)",
			"compaction(strategy=LeveledCompactionStrategy,sstable_size_in_mb=160)"),
		0);
	assert_int_equal(s.cmd, SM_STRESS_CMD_COUNTER_WRITE);
	assert_string_equal(s.schema.strategy, "org.apache.cassandra.locator.SimpleStrategy");
	assert_string_equal(s.schema.repl[0].value, "2");
	assert_string_equal(s.schema.compaction_strategy, "LeveledCompactionStrategy");
	assert_int_equal(s.schema.n_compaction, 1);
	assert_string_equal(s.schema.compaction[0].key, "sstable_size_in_mb");
	assert_string_equal(s.schema.compaction[0].value, "160");
	sm_stress_settings_free(&s);

	assert_int_equal(
		parse_line("write n=10 -schema replication(factor=3) compression=LZ4Compressor",
			   &s),
		0);
	assert_int_equal(s.schema.factor, 3);
	assert_string_equal(s.schema.keyspace, "keyspace1");
	assert_string_equal(s.schema.compression, "LZ4Compressor");
	sm_stress_settings_free(&s);

	/* per-DC factors are kept, replication_factor follows OptionReplication */
	assert_int_equal(parse_line("write n=10 -schema replication(dc1=3,dc2=2)", &s), 0);
	assert_int_equal(s.schema.n_repl, 3);
	for (i = 0; i < 2; i++)
		assert_string_equal(s.schema.repl[i].key, i == 0 ? "dc1" : "dc2");
	assert_string_equal(s.schema.repl[2].key, "replication_factor");
	sm_stress_settings_free(&s);

	/* tablets [extension]: not given, a flag, a group */
	assert_int_equal(parse_line("write n=10", &s), 0);
	assert_int_equal(s.schema.tablets, -1);
	sm_stress_settings_free(&s);
	assert_int_equal(parse_line("write n=10 -schema replication(factor=1) tablets=true", &s),
			 0);
	assert_int_equal(s.schema.tablets, 1);
	assert_int_equal(s.schema.tablets_initial, 0);
	sm_stress_settings_free(&s);
	assert_int_equal(parse_line("write n=10 -schema tablets=false", &s), 0);
	assert_int_equal(s.schema.tablets, 0);
	sm_stress_settings_free(&s);
	assert_int_equal(parse_line("write n=10 -schema tablets(enabled=true,initial=8)", &s), 0);
	assert_int_equal(s.schema.tablets, 1);
	assert_int_equal(s.schema.tablets_initial, 8);
	sm_stress_settings_free(&s);
	assert_int_equal(parse_line("write n=10 -schema tablets(initial=4)", &s), 0);
	assert_int_equal(s.schema.tablets, 1);
	assert_int_equal(s.schema.tablets_initial, 4);
	sm_stress_settings_free(&s);

	/* SimpleStrategy without factor: CREATE KEYSPACE still gets replication_factor 1 */
	assert_int_equal(parse_line("write n=10 -schema replication(strategy=SimpleStrategy)", &s),
			 0);
	assert_int_equal(s.schema.n_repl, 1);
	assert_string_equal(s.schema.repl[0].value, "1");
	sm_stress_settings_free(&s);
}

static void
test_native_auth_port_log(void **state)
{
	struct sm_stress_settings s;

	(void)state;
	assert_int_equal(
		parse_line("write n=1m -mode native cql3 user=cassandra password=cassandra "
			   "-port native=19042 -log interval=5s hdrfile=out.hdr",
			   &s),
		0);
	assert_int_equal(s.n_ops, 1000000);
	assert_int_equal(s.mode.api, SM_STRESS_API_CQL);
	assert_string_equal(s.mode.user, "cassandra");
	assert_string_equal(s.mode.password, "cassandra");
	assert_int_equal(s.native_port, 19042);
	assert_int_equal(s.log.interval_ms, 5000);
	assert_string_equal(s.log.hdrfile, "out.hdr");
	assert_null(s.log.file);
	assert_true(s.mode.prepared);
	sm_stress_settings_free(&s);

	assert_int_equal(parse_line("write n=1 -mode native cql3 protocolVersion=3 compression=lz4 "
				    "connectionsPerHost=24 maxPending=512 requestTimeout=5000 "
				    "unprepared -log interval=500ms file=out.log level=verbose "
				    "no-summary no-settings json=r.json",
				    &s),
			 0);
	assert_int_equal(s.mode.protocol_version, 3);
	assert_int_equal(s.mode.compression, SM_STRESS_COMPRESSION_LZ4);
	assert_int_equal(s.mode.connections_per_host, 24);
	assert_int_equal(s.mode.max_pending, 512);
	assert_int_equal(s.mode.request_timeout_ms, 5000);
	assert_false(s.mode.prepared);
	assert_int_equal(s.log.interval_ms, 500);
	assert_string_equal(s.log.file, "out.log");
	assert_string_equal(s.log.json, "r.json");
	assert_int_equal(s.log.level, SM_STRESS_LOG_VERBOSE);
	assert_true(s.log.no_summary && s.log.no_settings);
	/* n=1: population 1..1 collapses to FIXED(1) */
	assert_dist(&s.pop.dist, SM_STRESS_DIST_FIXED, 1, 1);
	sm_stress_settings_free(&s);

	/* apache cassandra-stress style: -mode without native cql3, plain-seconds interval */
	assert_int_equal(
		parse_line("write n=1 -mode user=u password=p prepared -log interval=2", &s), 0);
	assert_string_equal(s.mode.user, "u");
	assert_int_equal(s.log.interval_ms, 2000);
	sm_stress_settings_free(&s);
}

static void
test_defaults(void **state)
{
	struct sm_stress_settings s;

	(void)state;
	assert_int_equal(parse_line("read n=5000", &s), 0);
	/* no -pop on a read: gaussian over 1..n, mean the middle, stdev a sixth of the span */
	assert_dist(&s.pop.dist, SM_STRESS_DIST_GAUSSIAN, 1, 5000);
	assert_true(fabs(s.pop.dist.mean - 2500.5) < 1e-9);
	assert_true(fabs(s.pop.dist.stdev - 4999.0 / 6) < 1e-9);
	assert_int_equal(s.cl, SM_STRESS_CL_LOCAL_ONE);
	assert_int_equal(s.cl, 10);
	assert_int_equal(s.serial_cl, SM_STRESS_CL_SERIAL);
	assert_int_equal(s.truncate, SM_STRESS_TRUNCATE_NEVER);
	assert_int_equal(s.key_size, 10);
	assert_dist(&s.counter_add, SM_STRESS_DIST_FIXED, 1, 1);
	assert_int_equal(s.rate.threads, 200);
	assert_int_equal(s.rate.kind, SM_STRESS_RATE_NONE);
	assert_int_equal(s.rate.ops_per_s, 0);
	assert_dist(&s.col.count, SM_STRESS_DIST_FIXED, 5, 5);
	assert_dist(&s.col.size, SM_STRESS_DIST_FIXED, 34, 34);
	assert_string_equal(s.schema.keyspace, "keyspace1");
	assert_string_equal(s.schema.table, "standard1");
	assert_string_equal(s.schema.strategy,
			    "org.apache.cassandra.locator.NetworkTopologyStrategy");
	assert_int_equal(s.schema.factor, 1);
	assert_int_equal(s.schema.n_repl, 1);
	assert_string_equal(s.schema.repl[0].key, "replication_factor");
	assert_string_equal(s.schema.repl[0].value, "1");
	assert_null(s.schema.compaction_strategy);
	assert_int_equal(s.nodes.n, 1);
	assert_string_equal(s.nodes.hosts[0], "localhost");
	assert_int_equal(s.native_port, 9042);
	assert_int_equal(s.alternator_port, 8000);
	assert_int_equal(s.mode.api, SM_STRESS_API_CQL);
	assert_int_equal(s.mode.protocol_version, 4);
	assert_int_equal(s.mode.compression, SM_STRESS_COMPRESSION_NONE);
	assert_int_equal(s.mode.connections_per_host, 8);
	assert_int_equal(s.mode.max_pending, 0);
	assert_int_equal(s.mode.request_timeout_ms, 12000);
	assert_true(s.mode.prepared);
	assert_null(s.mode.user);
	assert_int_equal(s.log.interval_ms, 1000);
	assert_int_equal(s.log.level, SM_STRESS_LOG_NORMAL);
	assert_null(s.log.hdrfile);
	assert_null(s.log.json);
	assert_false(s.errors.ignore);
	assert_int_equal(s.errors.retries, 9);
	assert_int_equal(s.errors.max_delay_ms, 20000);
	assert_true(s.route.token_aware);
	assert_int_equal(s.route.ordering, SM_STRESS_ORDER_RANDOM);
	assert_true(s.route.shard_aware);
	assert_int_equal(s.shards, 0);
	assert_int_equal(s.warmup_ops, 1250);
	assert_int_equal(s.warmup_threads, 100);
	sm_stress_settings_free(&s);

	/* without n=, the population defaults to 1..1000000 */
	assert_int_equal(parse_line("counter_read duration=30s", &s), 0);
	assert_dist(&s.pop.dist, SM_STRESS_DIST_GAUSSIAN, 1, 1000000);
	assert_int_equal(s.duration_ns, 30000000000ull);
	sm_stress_settings_free(&s);
	assert_int_equal(parse_line("write duration=2h", &s), 0);
	assert_dist(&s.pop.dist, SM_STRESS_DIST_SEQ, 1, 1000000);
	assert_int_equal(s.duration_ns, 7200ull * 1000000000ull);
	sm_stress_settings_free(&s);
}

static void
test_command_sub_options(void **state)
{
	struct sm_stress_settings s;

	(void)state;
	assert_int_equal(parse_line("insert n=2b no-warmup truncate=once serial-cl=LOCAL_SERIAL "
				    "keysize=16 cl=each_quorum",
				    &s),
			 0);
	assert_int_equal(s.cmd, SM_STRESS_CMD_WRITE);
	assert_int_equal(s.n_ops, 2000000000ull);
	assert_true(s.no_warmup);
	assert_int_equal(s.warmup_ops, 0);
	assert_int_equal(s.truncate, SM_STRESS_TRUNCATE_ONCE);
	assert_int_equal(s.serial_cl, SM_STRESS_CL_LOCAL_SERIAL);
	assert_int_equal(s.key_size, 16);
	assert_int_equal(s.cl, SM_STRESS_CL_EACH_QUORUM);
	sm_stress_settings_free(&s);

	assert_int_equal(parse_line("counter_write n=100 add=UNIFORM(1..10) warmup=500 -node "
				    "a,b,c",
				    &s),
			 0);
	assert_dist(&s.counter_add, SM_STRESS_DIST_UNIFORM, 1, 10);
	assert_int_equal(s.warmup_ops, 500);
	assert_int_equal(s.nodes.n, 3);
	assert_string_equal(s.nodes.hosts[2], "c");
	sm_stress_settings_free(&s);

	/* the default warm-up scales with the node count */
	assert_int_equal(parse_line("write n=1000 -node a,b", &s), 0);
	assert_int_equal(s.warmup_ops, 500);
	sm_stress_settings_free(&s);
}

static void
test_case_insensitive(void **state)
{
	struct sm_stress_settings s;

	(void)state;
	/* cassandra-stress lowercases command and option names; sub-options match any case */
	assert_int_equal(parse_line("WRITE N=10K CL=local_quorum -RATE THREADS=4 Throttle=100/s "
				    "-Pop Dist=gauss(1..100) -col SIZE=uniform(10..20)",
				    &s),
			 0);
	assert_int_equal(s.n_ops, 10000);
	assert_int_equal(s.cl, SM_STRESS_CL_LOCAL_QUORUM);
	assert_int_equal(s.rate.threads, 4);
	assert_int_equal(s.rate.kind, SM_STRESS_RATE_THROTTLE);
	assert_int_equal(s.rate.ops_per_s, 100);
	assert_dist(&s.pop.dist, SM_STRESS_DIST_GAUSSIAN, 1, 100);
	assert_dist(&s.col.size, SM_STRESS_DIST_UNIFORM, 10, 20);
	sm_stress_settings_free(&s);
}

static void
test_distributions(void **state)
{
	struct sm_stress_settings s;

	(void)state;
	assert_int_equal(parse_line("read n=10 -pop dist=GAUSSIAN(1..1m,400000,1000)", &s), 0);
	assert_dist(&s.pop.dist, SM_STRESS_DIST_GAUSSIAN, 1, 1000000);
	assert_true(s.pop.dist.mean == 400000 && s.pop.dist.stdev == 1000);
	sm_stress_settings_free(&s);
	/* min == max collapses to FIXED, as cassandra-stress */
	assert_int_equal(parse_line("read n=10 -pop dist=uniform(7..7)", &s), 0);
	assert_dist(&s.pop.dist, SM_STRESS_DIST_FIXED, 7, 7);
	sm_stress_settings_free(&s);
	assert_int_equal(parse_line("read n=10 -pop dist=FIXED(42)", &s), 0);
	assert_dist(&s.pop.dist, SM_STRESS_DIST_FIXED, 42, 42);
	sm_stress_settings_free(&s);
	assert_int_equal(parse_line("read n=10 -pop seq=5..1k no-wrap", &s), 0);
	assert_dist(&s.pop.dist, SM_STRESS_DIST_SEQ, 5, 1000);
	assert_false(s.pop.wrap);
	sm_stress_settings_free(&s);
	assert_int_equal(parse_line("write n=10 -pop dist=SEQ(1...50)", &s), 0);
	assert_dist(&s.pop.dist, SM_STRESS_DIST_SEQ, 1, 50);
	assert_true(s.pop.wrap);
	sm_stress_settings_free(&s);
	assert_int_equal(parse_line("write n=10 -col n=UNIFORM(1..10) size=GAUSSIAN(10..100) slice "
				    "timestamp=12345",
				    &s),
			 0);
	assert_dist(&s.col.count, SM_STRESS_DIST_UNIFORM, 1, 10);
	assert_dist(&s.col.size, SM_STRESS_DIST_GAUSSIAN, 10, 100);
	assert_true(s.col.slice);
	assert_int_equal(s.col.timestamp, 12345);
	sm_stress_settings_free(&s);

	expect_error("read n=10 -pop dist=EXP(1..)", "-pop", "EXP", "wrong arguments", NULL);
	expect_error("read n=10 -pop dist=~SEQ(1..100)", "-pop", "inverted sequence", NULL);
	expect_error("read n=10 -pop dist=ZIPF(1..100)", "-pop", "ZIPF", "unknown distribution",
		     NULL);
	expect_error("read n=10 -pop dist=UNIFORM(100..1)", "-pop", "min..max", NULL);
	expect_error("read n=10 -pop dist=UNIFORM(1..x)", "-pop", "UNIFORM(1..x)", NULL);
	expect_error("read n=10 -pop dist=GAUSSIAN(1..10,0)", "-pop", "stdvrng", NULL);
	expect_error("read n=10 -pop dist=UNIFORM(1..10", "-pop", "distribution", NULL);
	expect_error("read n=10 -pop seq=10..1", "-pop", "first < last", NULL);
	expect_error("read n=10 -pop seq=1..10 dist=FIXED(1)", "-pop", "not both", NULL);
	expect_error("read n=10 -pop dist=FIXED(1) no-wrap", "-pop", "no-wrap", NULL);
	expect_error("read n=10 -pop read-lookback=SEQ(1..4)", "-pop", "SEQ", NULL);
	expect_error("write n=10 -col size=SEQ(1..10)", "-col", "SEQ", NULL);
	expect_error("write n=10 -col n=FIXED(0)", "-col", "n=FIXED(0)", NULL);
	expect_error("write n=10 -col names=a,b", "-col", "names=", NULL);
}

static void
test_rate_errors(void **state)
{
	(void)state;
	/* both limits: refused, as cassandra-stress's SettingsRate */
	expect_error("write n=100 -rate threads=10 throttle=1000/s fixed=10/s", "-rate",
		     "throttle=", "fixed=", "choose one", NULL);
	expect_error("write n=100 -rate auto threads=4", "-rate", "auto", "threads=", NULL);
	expect_error("write n=100 -rate threads>=4 fixed=10/s", "-rate", "fixed=", NULL);
	expect_error("write n=100 -rate threads>=50 threads<=10", "-rate", "threads>=50",
		     "threads<=10", NULL);
	expect_error("write n=100 -rate search auto bound=1ms", "-rate", "search", "auto", NULL);
	expect_error("write n=100 -rate search start=10/s", "-rate search", "bound=", NULL);
	expect_error("write n=100 -rate search bound=fast", "-rate search", "bound=fast", "2ms",
		     NULL);
	expect_error("write n=100 -rate search bound=1ms percentile=q9", "percentile=q9", "p99",
		     NULL);
	expect_error("write n=100 -rate search bound=1ms start=100 max=10", "max=10", "start=",
		     NULL);
	expect_error("write n=100 -rate search bound=1ms fixed=10/s", "search", "fixed=", NULL);
	expect_error("write n=100 -rate search bound=1ms speed=3", "speed=3", "percentile=",
		     NULL);
	expect_error("write n=100 -rate throttle=10/s", "-rate", "threads=", NULL);
	expect_error("write n=100 -rate threads=0", "-rate", "threads=0", "1 to", NULL);
	expect_error("write n=100 -rate threads=ten", "-rate", "threads=ten", "whole number", NULL);
	expect_error("write n=100 -rate threads=4 fixed=100", "-rate", "fixed=100", "/s", NULL);
	expect_error("write n=100 -rate threads=4 threads=5", "-rate", "threads=", "more than once",
		     NULL);
}

/* -rate auto / threads>= / threads<=: SettingsRate's AutoOptions, its defaults 4 and 1000. */
static void
test_rate_auto(void **state)
{
	struct sm_stress_settings s;

	(void)state;
	assert_int_equal(parse_line("read n=100 -rate auto", &s), 0);
	assert_int_equal(s.rate.search.kind, SM_STRESS_SEARCH_THREADS);
	assert_true(s.rate.search.auto_stop);
	assert_int_equal(s.rate.search.min_threads, 4);
	assert_int_equal(s.rate.search.max_threads, 1000);
	assert_int_equal(s.rate.threads, 4);
	assert_int_equal(s.warmup_threads, 100);
	sm_stress_settings_free(&s);
	/* without auto every count up to threads<= runs */
	assert_int_equal(parse_line("read n=100 -rate threads>=8 threads<=64", &s), 0);
	assert_int_equal(s.rate.search.kind, SM_STRESS_SEARCH_THREADS);
	assert_false(s.rate.search.auto_stop);
	assert_int_equal(s.rate.search.min_threads, 8);
	assert_int_equal(s.rate.search.max_threads, 64);
	assert_int_equal(s.warmup_threads, 64);
	sm_stress_settings_free(&s);
}

/* -rate search: the bound, the rates with or without /s, and the defaults. */
static void
test_rate_search(void **state)
{
	struct sm_stress_settings s;
	const struct sm_stress_search_opts *o = &s.rate.search;

	(void)state;
	assert_int_equal(parse_line("write duration=2s -rate search percentile=p99.9 bound=2ms "
				    "start=10k step=5000/s max=100000/s settle=500ms threads=64",
				    &s),
			 0);
	assert_int_equal(o->kind, SM_STRESS_SEARCH_RATE);
	assert_true(o->percentile == 99.9);
	assert_int_equal(o->bound_ns, 2000000);
	assert_int_equal(o->start, 10000);
	assert_int_equal(o->step, 5000);
	assert_int_equal(o->max, 100000);
	assert_int_equal(o->resolution, 1250);
	assert_int_equal(o->settle_ns, 500000000);
	assert_int_equal(o->max_errors, 0);
	assert_int_equal(o->min_achieved, 90);
	assert_int_equal(s.rate.threads, 64);
	assert_int_equal(s.rate.kind, SM_STRESS_RATE_FIXED);
	assert_int_equal(s.rate.ops_per_s, 10000);
	assert_true(s.errors.ignore); /* errors fail a step, not the search */
	sm_stress_settings_free(&s);
	assert_int_equal(parse_line("write n=100 -rate search bound=250us percentile=p999 "
				    "errors=3 min-achieved=80% settle=0s -log steps=x.csv",
				    &s),
			 0);
	assert_true(o->percentile == 99.9);
	assert_int_equal(o->bound_ns, 250000);
	assert_int_equal(o->start, 1000);
	assert_int_equal(o->step, 1000);
	assert_int_equal(o->max_errors, 3);
	assert_int_equal(o->min_achieved, 80);
	assert_int_equal(o->settle_ns, 0);
	assert_int_equal(s.rate.threads, 200);
	assert_string_equal(s.log.steps, "x.csv");
	sm_stress_settings_free(&s);
}

static void
test_rate_zero_limit_is_unset(void **state)
{
	struct sm_stress_settings s;

	(void)state;
	/* a zero rate means "not set" in cassandra-stress, so 0/s with the other is fine */
	assert_int_equal(parse_line("write n=100 -rate threads=10 throttle=0/s fixed=50/s", &s), 0);
	assert_int_equal(s.rate.kind, SM_STRESS_RATE_FIXED);
	assert_int_equal(s.rate.ops_per_s, 50);
	sm_stress_settings_free(&s);
}

/* user profile=FILE ops(...): the profile loaded, its ops in the user slots, by name. */
static void
test_user_command(void **state)
{
	static const char yaml[] =
		"keyspace: ks\ntable: t\n"
		"table_definition: CREATE TABLE t (k int, c int, v text, PRIMARY KEY (k, c))\n"
		"queries:\n  Q1:\n    cql: select * from t where k = ?\n";
	struct sm_stress_settings s;
	char path[] = "/tmp/sm-test-profile-XXXXXX", line[256];
	int fd = mkstemp(path);
	char *out = NULL;
	size_t outlen = 0;
	FILE *f;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, yaml, sizeof(yaml) - 1), (ssize_t)(sizeof(yaml) - 1));
	close(fd);
	snprintf(line, sizeof(line), "user profile=%s ops(insert=1,q1=3) n=100 -insert "
		 "batchtype=UNLOGGED", path);
	assert_int_equal(parse_line(line, &s), 0);
	assert_int_equal(s.cmd, SM_STRESS_CMD_USER);
	assert_non_null(s.profile);
	assert_true(s.ratio[SM_STRESS_OP_USER0] == 1 && s.ratio[SM_STRESS_OP_USER0 + 1] == 3);
	assert_int_equal(s.user_op[0], -1);
	assert_int_equal(s.user_op[1], 0);
	assert_string_equal(sm_stress_op_name(SM_STRESS_OP_USER0), "insert");
	assert_string_equal(sm_stress_op_name(SM_STRESS_OP_USER0 + 1), "q1");
	assert_true(s.ratio[SM_STRESS_OP_WRITE] == 0 && s.ratio[SM_STRESS_OP_READ] == 0);
	/* not insert-only: cassandra-stress's read default population */
	assert_int_equal(s.pop.dist.kind, SM_STRESS_DIST_GAUSSIAN);
	f = open_memstream(&out, &outlen);
	sm_stress_settings_print(f, &s);
	fclose(f);
	assert_non_null(strstr(out, "Type: user"));
	assert_non_null(strstr(out, "Command Ratios: {insert=1, q1=3}"));
	free(out);
	sm_stress_settings_free(&s);

	snprintf(line, sizeof(line), "user profile=%s ops(insert=1) n=100", path);
	assert_int_equal(parse_line(line, &s), 0);
	assert_int_equal(s.pop.dist.kind, SM_STRESS_DIST_SEQ); /* insert only: seq=1..n */
	sm_stress_settings_free(&s);
	snprintf(line, sizeof(line), "user profile=%s n=100", path);
	expect_error(line, "ops(insert=1", NULL);
	snprintf(line, sizeof(line), "user ops(insert=1) n=100");
	expect_error(line, "profile=FILE", NULL);
	snprintf(line, sizeof(line), "user profile=%s ops(q2=1) n=100", path);
	expect_error(line, "no query named 'q2'", NULL);
	snprintf(line, sizeof(line), "user profile=%s ops(insert=1) n=100 -mode alternator", path);
	expect_error(line, "CQL", NULL);
	snprintf(line, sizeof(line), "write n=100 profile=%s", path);
	expect_error(line, "only to the user command", NULL);
	unlink(path);
}

/* -pop takes every cassandra-stress distribution, and read-lookback. */
static void
test_pop_other_distributions_and_lookback(void **state)
{
	struct sm_stress_settings s;

	(void)state;
	assert_int_equal(parse_line("read n=10 -pop dist=~EXP(1..1000)", &s), 0);
	assert_int_equal(s.pop.dist.kind, SM_STRESS_DIST_OTHER);
	assert_true(s.pop.dist.x.inverted && s.pop.dist.x.kind == SM_STRESS_XD_EXP);
	assert_int_equal(s.pop.dist.max, 1000);
	sm_stress_settings_free(&s);
	assert_int_equal(parse_line("read n=10 -pop dist=QEXTREME(1..1m,2,10)", &s), 0);
	assert_int_equal(s.pop.dist.x.quantas, 10);
	sm_stress_settings_free(&s);
	assert_int_equal(parse_line("mixed n=10 -pop seq=1..100 read-lookback=EXP(1..10)", &s), 0);
	assert_true(s.pop.lookback);
	assert_int_equal(s.pop.read_lookback.kind, SM_STRESS_DIST_OTHER);
	sm_stress_settings_free(&s);
	expect_error("read n=10 -pop dist=EXP(-5..10)", "-pop", "negative", NULL);
}

/* -transport: cassandra-stress's SSL options, as TLS settings. */
static void
test_transport(void **state)
{
	struct sm_stress_settings s;

	(void)state;
	assert_int_equal(parse_line("write n=10 -transport truststore=ca.pem keystore=me.p12 "
				    "keystore-password=pw ssl-protocol=TLSv1.3 truststore-password=x "
				    "ssl-alg=SunX509",
				    &s),
			 0);
	assert_true(s.transport.on);
	assert_string_equal(s.transport.truststore, "ca.pem");
	assert_string_equal(s.transport.keystore, "me.p12");
	assert_string_equal(s.transport.keystore_password, "pw");
	assert_string_equal(s.transport.priority, "NORMAL:-VERS-ALL:+VERS-TLS1.3");
	sm_stress_settings_free(&s);
	assert_int_equal(parse_line("write n=10", &s), 0);
	assert_false(s.transport.on);
	sm_stress_settings_free(&s);
	expect_error("write n=10 -transport store-type=JKS", "-transport", "keytool", NULL);
	expect_error("write n=10 -transport ssl-protocol=SSLv3", "-transport", "TLSv1.3", NULL);
	expect_error("write n=10 -transport bogus=1", "-transport", "truststore=", NULL);
}

/* -graph as cassandra-stress's SettingsGraph: file= required, revision= and title= kept. */
static void
test_graph(void **state)
{
	struct sm_stress_settings s;

	(void)state;
	assert_int_equal(parse_line("write n=10 -graph file=r.html title=T revision=v2", &s), 0);
	assert_string_equal(s.graph.file, "r.html");
	assert_string_equal(s.graph.title, "T");
	assert_string_equal(s.graph.revision, "v2");
	sm_stress_settings_free(&s);
	assert_int_equal(parse_line("write n=10 -graph file=r.html", &s), 0);
	assert_null(s.graph.title);
	assert_null(s.graph.revision); /* the app names it "unknown", as cassandra-stress */
	sm_stress_settings_free(&s);
}

static void
test_tokenrange(void **state)
{
	struct sm_stress_settings s;

	(void)state;
	assert_int_equal(parse_line("write n=10 -tokenrange wrap splits=4", &s), 0);
	assert_true(s.tokenrange.wrap);
	assert_int_equal(s.tokenrange.splits, 4);
	sm_stress_settings_free(&s);
}

static void
test_unsupported_named(void **state)
{
	(void)state;
	expect_error("write n=10 -graph file=x.html op=W", "-graph", "op=", "not supported", NULL);
	expect_error("write n=10 -graph title=T", "-graph", "file=", NULL);
	expect_error("write n=10 -rate auto -graph file=x.html", "-graph", "auto", NULL);
	expect_error("write n=10 -insert partitions=fixed(1)", "-insert", "user command", NULL);
	expect_error("write n=10 -sendto host", "-sendto", "not supported", NULL);
	expect_error("write n=10 -tokenrange splits=0", "-tokenrange", "1 to 65536", NULL);
	expect_error("write n=10 -tokenrange wrap wrap", "-tokenrange", "more than once", NULL);
	expect_error("write n=10 -tokenrange all", "-tokenrange", "wrap and splits=N", NULL);
	expect_error("user profile=/nonexistent/a.yaml ops(insert=1) n=1", "cannot read",
		     "/nonexistent/a.yaml", NULL);
	expect_error("print dist=uniform(1..10)", "print", "not supported", NULL);
	expect_error("legacy -o insert", "legacy", "not supported", NULL);
	expect_error("write err<0.02 n>30 n<200", "err<", "not supported", "n=", NULL);
	expect_error("write n=10 -mode thrift", "-mode", "thrift", "native", NULL);
	expect_error("write n=10 -mode simplenative", "-mode", "simplenative", NULL);
	expect_error("write n=10 -mode native cql3 compression=snappy", "-mode", "snappy", "lz4",
		     NULL);
	expect_error("write n=10 -mode native cql3 protocolVersion=2", "-mode", "protocolVersion=2",
		     NULL);
	expect_error("write n=10 -mode native cql3 auth-provider=com.x.Y", "-mode", "auth-provider",
		     NULL);
	expect_error("write n=10 -schema storage(type=x)", "-schema", "storage", NULL);
	expect_error("write n=10 -schema tablets=yes", "-schema", "true or false", NULL);
	expect_error("write n=10 -schema tablets(enabled=false,initial=4)", "-schema",
		     "initial= needs", NULL);
	expect_error("write n=10 -schema tablets(enabled=true,min=4)", "-schema",
		     "unknown tablets option 'min'", NULL);
	expect_error("write n=10 -schema tablets(strategy=x)", "-schema", "enabled= and initial=",
		     NULL);
	expect_error("write n=10 -schema tablets(initial=0)", "-schema", "initial", NULL);
	expect_error("write n=10 -schema tablets=true tablets=false", "-schema",
		     "more than once", NULL);
	expect_error("write n=10 -schema replication(strategy=LocalStrategy)", "-schema",
		     "LocalStrategy", NULL);
}

static void
test_unknown_words(void **state)
{
	(void)state;
	expect_error("write n=10 -foo bar", "unknown option", "-foo", NULL);
	expect_error("write n=10 bogus", "write", "bogus", "unknown sub-option", NULL);
	expect_error("write n=10 -rate thread=5", "-rate", "thread=5", NULL);
	expect_error("write n=10 -log intervall=5", "-log", "intervall=5", NULL);
	expect_error("write n=10 -mode native cql3 colour=blue", "-mode", "colour=blue", NULL);
	expect_error("write n=10 -errors retry=3", "-errors", "retry=3", NULL);
	expect_error("write n=10 -node a b", "-node", "'b'", "comma", NULL);
	expect_error("write n=10 -node a,,b", "-node", "empty host", NULL);
	expect_error("write n=10 -port cql=9042", "-port", "cql=9042", NULL);
	expect_error("write n=10 -route fast", "-route", "fast", NULL);
	expect_error("write n=10 -schema keyspace=a keyspace=b", "-schema",
		     "keyspace=", "more than once", NULL);
	expect_error("write n=10 -rate threads=4 -rate threads=5", "-rate", "more than once", NULL);
	expect_error("wrte n=10", "unknown command", "wrte", NULL);
	expect_error("-node x write n=10", "'-node'", "command comes first", NULL);
	expect_error("", "no command", NULL);
	expect_error("write n=10 ratio(read=1)", "ratio", "mixed", NULL);
	expect_error("mixed n=10 ratio(read=1,scan=2)", "mixed", "scan=2", NULL);
	expect_error("mixed n=10 ratio(read=0,write=0)", "mixed", "non-zero", NULL);
	expect_error("mixed n=10 ratio(read=1,read=2)", "read=", "more than once", NULL);
}

static void
test_bad_numbers(void **state)
{
	(void)state;
	expect_error("write n=abc", "write", "n=abc", "whole number", NULL);
	expect_error("write n=10x", "write", "n=10x", NULL);
	expect_error("write n=0", "write", "n=0", NULL);
	expect_error("write n=99999999999999999999", "write", "n=99999999999999999999", NULL);
	expect_error("write n=10000000000b", "write", "n=10000000000b", NULL);
	expect_error("write n=-5", "write", "n=-5", NULL);
	expect_error("write duration=10", "write", "duration=10", "duration=30s", NULL);
	expect_error("write duration=10d", "write", "duration=10d", NULL);
	expect_error("write duration=0s", "write", "duration=0s", NULL);
	expect_error("write", "write", "n=", "duration=", NULL);
	expect_error("write n=10 duration=1m", "write", "not both", NULL);
	expect_error("write n=10 cl=TWENTY", "write", "cl=TWENTY", "consistency level", NULL);
	expect_error("write n=10 serial-cl=ONE", "write", "serial-cl=ONE", "SERIAL", NULL);
	expect_error("write n=10 truncate=sometimes", "write", "truncate=sometimes", NULL);
	expect_error("write n=10 -port native=70000", "-port", "native=70000", "65535", NULL);
	expect_error("write n=10 -log interval=0s", "-log", "interval=0s", NULL);
	expect_error("write n=10 -log interval=5x", "-log", "interval=5x", NULL);
	expect_error("write n=10 -mode native cql3 connectionsPerHost=0", "-mode",
		     "connectionsPerHost=0", NULL);
	expect_error("write n=10 -shards many", "-shards", "many", NULL);
	expect_error("write n=10 -shards 1 2", "-shards", "one number", NULL);
	expect_error("write n=10 -errors min-delay-ms=10 max-delay-ms=5", "-errors", "min-delay-ms",
		     NULL);
	expect_error("write n=10 -errors delay-policy=exponential", "-errors", "exponential",
		     "min-delay-ms", NULL);
	expect_error("write n=10 warmup=5 no-warmup", "write", "no-warmup", "warmup=", NULL);
}

static void
test_errors_option(void **state)
{
	struct sm_stress_settings s;

	(void)state;
	assert_int_equal(parse_line("write n=10 -errors ignore retries=3 skip-read-validation "
				    "fail-fast delay-policy=exponential min-delay-ms=10 "
				    "max-delay-ms=1000 skip-unsupported-columns",
				    &s),
			 0);
	assert_true(s.errors.ignore && s.errors.fail_fast && s.errors.skip_read_validation);
	assert_int_equal(s.errors.retries, 3);
	assert_int_equal(s.errors.delay_policy, SM_STRESS_DELAY_EXPONENTIAL);
	assert_int_equal(s.errors.min_delay_ms, 10);
	assert_int_equal(s.errors.max_delay_ms, 1000);
	sm_stress_settings_free(&s);
}

static void
test_extensions(void **state)
{
	struct sm_stress_settings s;

	(void)state;
	assert_int_equal(parse_line("write n=10 -route none -shards 8", &s), 0);
	assert_false(s.route.token_aware);
	assert_true(s.route.shard_aware);
	assert_int_equal(s.shards, 8);
	sm_stress_settings_free(&s);

	assert_int_equal(parse_line("read n=10 -route token-aware ordering=topological "
				    "no-shard-aware",
				    &s),
			 0);
	assert_true(s.route.token_aware);
	assert_int_equal(s.route.ordering, SM_STRESS_ORDER_TOPOLOGICAL);
	assert_false(s.route.shard_aware);
	sm_stress_settings_free(&s);

	assert_int_equal(parse_line("write n=10 -route ordering=neutral", &s), 0);
	assert_int_equal(s.route.ordering, SM_STRESS_ORDER_NEUTRAL);
	assert_true(s.route.token_aware);
	sm_stress_settings_free(&s);

	assert_int_equal(parse_line("mixed n=10 -mode alternator op=update-conditional "
				    "isolation=always_use_lwt -port alternator=8080",
				    &s),
			 0);
	assert_int_equal(s.mode.api, SM_STRESS_API_ALTERNATOR);
	assert_int_equal(s.mode.alt_op, SM_STRESS_ALT_UPDATE_CONDITIONAL);
	assert_string_equal(s.mode.alt_isolation, "always_use_lwt");
	assert_int_equal(s.alternator_port, 8080);
	sm_stress_settings_free(&s);

	assert_int_equal(parse_line("write n=10 -mode alternator", &s), 0);
	assert_int_equal(s.mode.alt_op, SM_STRESS_ALT_PUT);
	assert_int_equal(s.alternator_port, 8000);
	sm_stress_settings_free(&s);

	assert_int_equal(
		parse_line("write n=10 -mode alternator op=update connectionsPerHost=4", &s), 0);
	assert_int_equal(s.mode.alt_op, SM_STRESS_ALT_UPDATE);
	assert_int_equal(s.mode.connections_per_host, 4);
	sm_stress_settings_free(&s);

	expect_error("counter_write n=10 -mode alternator", "counter", "alternator", NULL);
	expect_error("mixed n=10 ratio(read=1,counter_write=1) -mode alternator", "counter",
		     "alternator", NULL);
	expect_error("write n=10 -mode native alternator", "-mode", "choose one", NULL);
	expect_error("write n=10 -mode alternator protocolVersion=4", "-mode", "protocolVersion=4",
		     "alternator", NULL);
	expect_error("write n=10 -mode native cql3 op=put", "-mode", "op=put", "alternator", NULL);
	expect_error("write n=10 -mode alternator op=delete", "-mode", "op=delete", NULL);
	expect_error("write n=10 -route none ordering=random", "-route", "ordering=", NULL);
	expect_error("write n=10 -route token-aware none", "-route", "more than once", NULL);
	expect_error("write n=10 -route ordering=sorted", "-route", "ordering=sorted", NULL);
}

static void
test_node_file_and_options(void **state)
{
	char path[] = "/tmp/sm_stress_nodes_XXXXXX", line[128];
	struct sm_stress_settings s;
	FILE *f;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs("10.0.0.1\n\n10.0.0.2\r\n10.0.0.3", f);
	fclose(f);
	snprintf(line, sizeof(line),
		 "write n=10 -node file=%s datacenter=dc1 rack=r1 whitelist loadbalance=dc-aware "
		 "remote-dc=2",
		 path);
	assert_int_equal(parse_line(line, &s), 0);
	assert_int_equal(s.nodes.n, 3);
	assert_string_equal(s.nodes.hosts[0], "10.0.0.1");
	assert_string_equal(s.nodes.hosts[1], "10.0.0.2");
	assert_string_equal(s.nodes.hosts[2], "10.0.0.3");
	assert_string_equal(s.nodes.datacenter, "dc1");
	assert_string_equal(s.nodes.rack, "r1");
	assert_true(s.nodes.whitelist);
	assert_string_equal(s.nodes.loadbalance, "dc-aware");
	assert_int_equal(s.nodes.remote_dc_hosts, 2);
	assert_int_equal(s.warmup_ops, 2 * 3); /* min(50000, 10/4) x 3 nodes */
	sm_stress_settings_free(&s);
	unlink(path);

	assert_int_equal(parse_line(line, &s), -ENOENT);
	assert_non_null(strstr(errbuf, path));
	assert_non_null(strstr(errbuf, "-node"));
	sm_stress_settings_free(&s);

	/* a comma-separated list with spaces after the commas, as a shell passes it */
	assert_int_equal(parse_words(&s, 5, "write", "n=10", "-node", "h1,", "h2"), 0);
	assert_int_equal(s.nodes.n, 2);
	assert_string_equal(s.nodes.hosts[1], "h2");
	sm_stress_settings_free(&s);

	/* -port jmx= of older scripts is accepted and ignored */
	assert_int_equal(parse_line("write n=10 -port native=9043 jmx=7199", &s), 0);
	assert_int_equal(s.native_port, 9043);
	sm_stress_settings_free(&s);
}

static void
test_help(void **state)
{
	struct sm_stress_settings s;

	(void)state;
	assert_int_equal(parse_line("help", &s), 0);
	assert_int_equal(s.cmd, SM_STRESS_CMD_HELP);
	assert_null(s.help_topic);
	sm_stress_settings_free(&s);
	assert_int_equal(parse_line("help -pop", &s), 0);
	assert_int_equal(s.cmd, SM_STRESS_CMD_HELP);
	assert_string_equal(s.help_topic, "-pop");
	sm_stress_settings_free(&s);
	assert_int_equal(parse_line("-?", &s), 0);
	assert_int_equal(s.cmd, SM_STRESS_CMD_HELP);
	sm_stress_settings_free(&s);
}

static char *
capture(void (*fn)(FILE *, const struct sm_stress_settings *), const struct sm_stress_settings *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	fn(f, s);
	fclose(f);
	return buf;
}

static void
usage_adapter(FILE *f, const struct sm_stress_settings *s)
{
	(void)s;
	sm_stress_usage(f);
}

static void
test_print_settings(void **state)
{
	static const char *const want[] = {
		"******************** Stress Settings ********************\n",
		"Command:\n  Type: mixed\n",
		"  Count: 100,000\n",
		"  Consistency Level: QUORUM\n",
		"  Command Ratios: {WRITE=1, READ=3}\n",
		"Rate:\n",
		"  Thread Count: 50\n",
		"  OpsPer Sec: 1000\n",
		"  Rate Limit: fixed\n",
		"Population:\n  Distribution: Gaussian:  min=1,max=1000000,mean=500000.500000,"
		"stdev=99999.900000\n",
		"Columns:\n  Max Columns Per Key: 5\n  Column Names: [C0, C1, C2, C3, C4]\n",
		"  Size Distribution: Fixed:  key=34\n",
		"Errors:\n  Ignore: false\n",
		"  Tries: 10\n",
		"Log:\n",
		"  HDR File: h.hdr\n",
		"  Interval Millis: 1000\n",
		"Mode:\n  API: CQL native protocol\n",
		"  Username: u\n  Password: *suppressed*\n",
		"Node:\n  Nodes: [n1, n2]\n",
		"Schema:\n  Keyspace: keyspace1\n",
		"  Replication Strategy Options: {replication_factor=1}\n",
		"Port:\n  Native Port: 9042\n  Alternator Port: 8000\n",
		"Route:\n  Token Aware: true\n  Replica Ordering: RANDOM\n  Shard Aware: true\n",
		"Shards:\n  Client Shards: one per CPU\n",
	};
	struct sm_stress_settings s;
	unsigned i;
	char *out;

	(void)state;
	assert_int_equal(parse_line("mixed ratio(write=1,read=3) n=100000 cl=QUORUM -pop "
				    "dist=GAUSSIAN(1..1000000,5) -rate threads=50 fixed=1000/s "
				    "-node n1,n2 -mode native cql3 user=u password=secret "
				    "-log hdrfile=h.hdr",
				    &s),
			 0);
	out = capture(sm_stress_settings_print, &s);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (strstr(out, want[i]) == NULL)
			fail_msg("settings dump lacks \"%s\":\n%s", want[i], out);
	assert_null(strstr(out, "secret"));
	free(out);
	sm_stress_settings_free(&s);

	assert_int_equal(parse_line("write duration=90m -mode alternator op=update", &s), 0);
	out = capture(sm_stress_settings_print, &s);
	assert_non_null(strstr(out, "  Duration: 90 MINUTES\n"));
	assert_non_null(strstr(out, "  Count: -1\n"));
	assert_non_null(strstr(out, "  Sequence: 1..1000000\n"));
	assert_non_null(strstr(out, "  API: ALTERNATOR"));
	assert_non_null(strstr(out, "  Write Operation: UpdateItem\n"));
	free(out);
	sm_stress_settings_free(&s);

	out = capture(usage_adapter, NULL);
	assert_non_null(strstr(out, "threads=200"));
	assert_non_null(strstr(out, "-route"));
	assert_non_null(strstr(out, "-shards"));
	assert_non_null(strstr(out, "-mode alternator"));
	assert_non_null(strstr(out, "json="));
	assert_non_null(strstr(out, "warmup=N"));
	free(out);
}

static void
test_names(void **state)
{
	(void)state;
	assert_string_equal(sm_stress_cl_name(SM_STRESS_CL_LOCAL_ONE), "LOCAL_ONE");
	assert_string_equal(sm_stress_cl_name(SM_STRESS_CL_ANY), "ANY");
	assert_string_equal(sm_stress_cl_name((enum sm_stress_cl)42), "?");
	assert_string_equal(sm_stress_op_name(SM_STRESS_OP_COUNTER_WRITE), "COUNTER_WRITE");
	assert_string_equal(sm_stress_cmd_name(SM_STRESS_CMD_COUNTER_READ), "counter_read");
}

/*
 * The sub-option tables (-col, -port, -mode, -log, -errors, -route): each
 * row type stores its value, and refuses with the row's own message.
 */
static void
test_subopt_table_rows(void **state)
{
	struct sm_stress_settings s;

	(void)state;
	assert_int_equal(parse_line("write n=10 -mode 4x cql3 unprepared compression=LZ4 "
				    "protocolVersion=3 user=u maxPending=7 -log level=verbose "
				    "no-summary csv=c.csv -errors delay-policy=linear "
				    "min-delay-ms=5 max-delay-ms=9 skip-unsupported-columns "
				    "-route none shard-aware -port alternator=8001 jmx=1 jmx=2 "
				    "-col n=FIXED(3) slice timestamp=42",
				    &s),
			 0);
	assert_false(s.mode.prepared);					 /* SO_BOOL2, second word */
	assert_int_equal(s.mode.compression, SM_STRESS_COMPRESSION_LZ4); /* SO_ENUM, any case */
	assert_int_equal(s.mode.protocol_version, 3);
	assert_string_equal(s.mode.user, "u");	 /* SO_STR */
	assert_int_equal(s.mode.max_pending, 7); /* SO_UINT */
	assert_int_equal(s.log.level, SM_STRESS_LOG_VERBOSE);
	assert_true(s.log.no_summary);		 /* SO_FLAG */
	assert_string_equal(s.log.csv, "c.csv"); /* SO_FILE */
	assert_int_equal(s.errors.delay_policy, SM_STRESS_DELAY_LINEAR);
	assert_int_equal(s.errors.min_delay_ms, 5); /* SO_U64 */
	assert_int_equal(s.errors.max_delay_ms, 9);
	assert_false(s.route.token_aware);
	assert_true(s.route.shard_aware);
	assert_int_equal(s.alternator_port, 8001); /* SO_U16 */
	assert_int_equal(s.native_port, 9042);	   /* jmx= (SO_MANY, no field) changes nothing */
	assert_int_equal(s.col.count.min, 3);	   /* SO_FN */
	assert_true(s.col.slice);
	assert_int_equal(s.col.timestamp, 42);
	sm_stress_settings_free(&s);
	/* A word and its alias are one row: given twice, named as both. */
	expect_error("write n=10 -mode native 4x", "-mode: native/4x given more than once", NULL);
	/* An enum's message lists the values that are not refused. */
	expect_error("write n=10 -mode compression=zstd",
		     "-mode: 'compression=zstd': use compression=none or lz4", NULL);
	expect_error("write n=10 -mode compression=snappy", "snappy is not supported", NULL);
	expect_error("write n=10 -route ordering=x", "use ordering=random, topological or neutral",
		     NULL);
	/* Bounds come from the row. */
	expect_error("write n=10 -mode maxPending=32769", "give a number from 1 to 32768", NULL);
	expect_error("write n=10 -errors max-delay-ms=86400001", "give a number from 0 to 86400000",
		     NULL);
	expect_error("write n=10 -log json=", "-log: 'json=': give a file name", NULL);
	expect_error("write n=10 -col names=a", "custom column names are not supported", NULL);
	/* A CQL row and an Alternator row do not mix. */
	expect_error("write n=10 -mode alternator protocolVersion=4", "is a CQL setting", NULL);
	expect_error("write n=10 -mode op=put", "applies only to -mode alternator", NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_doc_example),
		cmocka_unit_test(test_read_duration_fixed_rate),
		cmocka_unit_test(test_mixed_ratio_gaussian),
		cmocka_unit_test(test_counter_write_schema),
		cmocka_unit_test(test_native_auth_port_log),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_command_sub_options),
		cmocka_unit_test(test_case_insensitive),
		cmocka_unit_test(test_distributions),
		cmocka_unit_test(test_rate_errors),
		cmocka_unit_test(test_rate_zero_limit_is_unset),
		cmocka_unit_test(test_rate_auto),
		cmocka_unit_test(test_rate_search),
		cmocka_unit_test(test_graph),
		cmocka_unit_test(test_unsupported_named),
		cmocka_unit_test(test_tokenrange),
		cmocka_unit_test(test_transport),
		cmocka_unit_test(test_user_command),
		cmocka_unit_test(test_pop_other_distributions_and_lookback),
		cmocka_unit_test(test_unknown_words),
		cmocka_unit_test(test_bad_numbers),
		cmocka_unit_test(test_errors_option),
		cmocka_unit_test(test_extensions),
		cmocka_unit_test(test_subopt_table_rows),
		cmocka_unit_test(test_node_file_and_options),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_print_settings),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
