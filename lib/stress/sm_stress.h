/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_STRESS_H
#define SM_STRESS_H

/*
 * lib/stress: `shardmark stress`, a cassandra-stress compatible load
 * generator. This header holds the settings: what the command line of
 * `shardmark stress <command> [sub-options] [-option ...]` means, parsed in
 * cassandra-stress's own syntax (scylladb/cassandra-stress,
 * src/java/org/apache/cassandra/stress/settings/) so existing scripts run
 * unchanged, with cassandra-stress's defaults, plus a few extensions:
 *
 *   -route token-aware|none ordering=random|topological|neutral
 *          shard-aware|no-shard-aware
 *       replica choice (default token-aware, ordering=random as
 *       cassandra-stress's current java-driver policy, shard-aware).
 *   -shards N
 *       client shards (threads pinned one per CPU); 0 = one per CPU.
 *   -mode alternator [op=put|update|update-conditional] [isolation=X]
 *       DynamoDB API over HTTP: write -> PutItem (or UpdateItem, or
 *       UpdateItem with a condition, per op=), read -> GetItem. isolation=
 *       is only a hint recorded for the report; the server's
 *       alternator_write_isolation decides.
 *   -port alternator=N
 *       the Alternator port (default 8000).
 *   -log json=FILE, -log csv=FILE
 *       a machine-readable report; one flat row per interval and op type.
 *   warmup=N (command sub-option)
 *       warm-up operations per op type, instead of cassandra-stress's rule.
 *
 * `shardmark stress` itself also takes shardmark's own options (--smp,
 * --cpuset, --network-stack, --dpdk-args, --config, ...) before the command;
 * app/shardmark/stress.c applies them, and this parser sees what follows.
 * The run itself is sm_stress_run.h.
 *
 *   -rate search percentile=P bound=T [start=R/s] [step=S/s] [max=M/s] ...
 *       the highest open-loop rate whose percentile P stays within T
 *       (sm_stress_search.h).
 *   -log steps=FILE
 *       a capacity search's steps as CSV, one row per step.
 *   -graph file=F [title=T] [revision=R]
 *       as cassandra-stress: the HTML report, created or added to as
 *       revision R (the app writes it with lib/bench's report after the run).
 *
 * Differences from cassandra-stress: -rate without threads= uses
 * threads=200 (cassandra-stress would ramp with `auto`); a run needs n= or
 * duration= (the err< run-until-stable mode is not implemented). Options
 * this tool does not implement are refused with an error naming them.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sm_stress_dist.h"
#include "sm_stress_search.h"

enum sm_stress_cmd {
	SM_STRESS_CMD_WRITE,
	SM_STRESS_CMD_READ,
	SM_STRESS_CMD_MIXED,
	SM_STRESS_CMD_COUNTER_WRITE,
	SM_STRESS_CMD_COUNTER_READ,
	SM_STRESS_CMD_HELP,
	SM_STRESS_CMD_USER, /* user profile=FILE ops(...) */
	SM_STRESS_CMD_YCSB, /* `shardmark ycsb load|run` (sm_stress_ycsb.h) */
	SM_STRESS_CMD_SB,   /* `shardmark scylla-bench` (sm_stress_sb.h) */
};

/* Operation types; index of sm_stress_settings.ratio. */
enum sm_stress_op {
	SM_STRESS_OP_WRITE,
	SM_STRESS_OP_READ,
	SM_STRESS_OP_COUNTER_WRITE,
	SM_STRESS_OP_COUNTER_READ,
	/* user mode: the profile's insert and named queries, as ops(...) lists them */
	SM_STRESS_OP_USER0,
	SM_STRESS_NR_OPS = SM_STRESS_OP_USER0 + 8,
};

#define SM_STRESS_MAX_USER_OPS (SM_STRESS_NR_OPS - SM_STRESS_OP_USER0)

struct sm_stress_profile;
struct sm_stress_ycsb;
struct sm_stress_sb;
struct sm_stress_workload_ops;

/* Consistency levels, valued as their CQL native protocol codes. */
enum sm_stress_cl {
	SM_STRESS_CL_ANY = 0x0000,
	SM_STRESS_CL_ONE = 0x0001,
	SM_STRESS_CL_TWO = 0x0002,
	SM_STRESS_CL_THREE = 0x0003,
	SM_STRESS_CL_QUORUM = 0x0004,
	SM_STRESS_CL_ALL = 0x0005,
	SM_STRESS_CL_LOCAL_QUORUM = 0x0006,
	SM_STRESS_CL_EACH_QUORUM = 0x0007,
	SM_STRESS_CL_SERIAL = 0x0008,
	SM_STRESS_CL_LOCAL_SERIAL = 0x0009,
	SM_STRESS_CL_LOCAL_ONE = 0x000a,
};

enum sm_stress_truncate {
	SM_STRESS_TRUNCATE_NEVER,
	SM_STRESS_TRUNCATE_ONCE,   /* before any work */
	SM_STRESS_TRUNCATE_ALWAYS, /* before each iteration (warm-up and main) */
};

/*
 * A value distribution, cassandra-stress's DIST(...). FIXED: min == max ==
 * the value. UNIFORM: [min, max]. GAUSSIAN: mean and stdev, clamped to
 * [min, max] (GAUSSIAN(min..max[,stdvrng]) has mean (min+max)/2 and stdev
 * (max-min)/2/stdvrng, stdvrng 3 by default; GAUSSIAN(min..max,mean,stdev)
 * gives them directly). SEQ: min, min+1, ..., max (population only; wraps
 * unless no-wrap). UNIFORM and GAUSSIAN with min == max become FIXED, as in
 * cassandra-stress. OTHER: cassandra-stress's other distributions (EXP,
 * EXTREME, QEXTREME, inverted ~), in x (sm_stress_dist.h); min, max: its range.
 */
enum sm_stress_dist_kind {
	SM_STRESS_DIST_FIXED,
	SM_STRESS_DIST_UNIFORM,
	SM_STRESS_DIST_GAUSSIAN,
	SM_STRESS_DIST_SEQ,
	SM_STRESS_DIST_OTHER,
};

struct sm_stress_dist {
	enum sm_stress_dist_kind kind;
	uint64_t min, max;
	double mean, stdev; /* GAUSSIAN */
	struct sm_stress_xdist x; /* OTHER */
};

/* A key=value pair of -schema replication(...) or compaction(...). */
struct sm_stress_kv {
	char *key;
	char *value;
};

#define SM_STRESS_MAX_KV 16

/* Partition keys ("seeds"): -pop seq=a..b or -pop dist=DIST(a..b). */
struct sm_stress_pop {
	struct sm_stress_dist dist;
	bool wrap;	  /* SEQ: start over after max (false: no-wrap, stop) */
	bool set_by_user; /* false: cassandra-stress's default for the command */
	/* read-lookback=DIST: reads take the seed this far below the last one written */
	bool lookback;
	struct sm_stress_dist read_lookback;
};

/* Cells per row: -col n=DIST size=DIST [slice] [timestamp=N]. */
struct sm_stress_col {
	struct sm_stress_dist count; /* columns C0..C<max-1>; default FIXED(5) */
	struct sm_stress_dist size;  /* bytes per cell; default FIXED(34) */
	bool slice;
	uint64_t timestamp; /* 0: server/driver time */
};

enum sm_stress_rate_kind {
	SM_STRESS_RATE_NONE,
	/* ops/s cap over all threads; latency is service time (end - start). */
	SM_STRESS_RATE_THROTTLE,
	/* the same schedule; latency is response time (end - intended start). */
	SM_STRESS_RATE_FIXED,
};

struct sm_stress_rate {
	unsigned threads; /* concurrent operations (one per cassandra-stress thread) */
	uint64_t ops_per_s;
	enum sm_stress_rate_kind kind;
	/* -rate [auto] threads>= threads<= or -rate search ...: several steps (sm_stress_search.h) */
	struct sm_stress_search_opts search;
};

struct sm_stress_schema {
	char *keyspace;	 /* default keyspace1 */
	char *strategy;	 /* org.apache.cassandra.locator.<Strategy> */
	unsigned factor; /* factor= (default 1) */
	/*
	 * The keyspace's replication map without 'class', as cassandra-stress
	 * builds it: extra key=value pairs (dc1=3) plus replication_factor when
	 * the strategy is the default or factor= was given.
	 */
	struct sm_stress_kv repl[SM_STRESS_MAX_KV];
	unsigned n_repl;
	char *compaction_strategy; /* NULL: server default */
	struct sm_stress_kv compaction[SM_STRESS_MAX_KV];
	unsigned n_compaction;
	char *compression;	   /* sstable compression class, NULL: none given */
	/* tablets=true|false or tablets(enabled=B,initial=N) [extension]: ScyllaDB's
	 * CREATE KEYSPACE ... AND tablets = {...}; -1 not given (the server's
	 * tablets_mode_for_new_keyspaces decides), 0 disabled, 1 enabled */
	int tablets;
	unsigned tablets_initial; /* initial= (0: not given) */
	const char *table;	   /* "standard1" (static string) */
	const char *counter_table; /* "counter1" (static string) */
};

struct sm_stress_nodes {
	char **hosts; /* default {"localhost"} */
	unsigned n;
	char *datacenter;  /* local DC for DC-aware routing, NULL: first seen */
	char *rack;	   /* recorded; NULL when not given */
	char *loadbalance; /* round-robin|dc-aware|rack-aware as given, NULL: auto */
	bool whitelist;	   /* talk only to the listed hosts */
	unsigned remote_dc_hosts;
};

enum sm_stress_api {
	SM_STRESS_API_CQL,	  /* -mode native cql3 */
	SM_STRESS_API_ALTERNATOR, /* -mode alternator */
};

enum sm_stress_compression {
	SM_STRESS_COMPRESSION_NONE,
	SM_STRESS_COMPRESSION_LZ4,
};

enum sm_stress_alt_op {
	SM_STRESS_ALT_PUT,		  /* PutItem */
	SM_STRESS_ALT_UPDATE,		  /* UpdateItem */
	SM_STRESS_ALT_UPDATE_CONDITIONAL, /* UpdateItem with a ConditionExpression (read-modify-write) */
};

struct sm_stress_mode {
	enum sm_stress_api api;
	char *user, *password;	   /* NULL: no authentication */
	unsigned protocol_version; /* 3 or 4 (default 4) */
	enum sm_stress_compression compression;
	unsigned connections_per_host; /* default 8 */
	unsigned max_pending;	       /* per connection; 0: driver default */
	unsigned request_timeout_ms;   /* default 12000 */
	bool prepared;		       /* false: unprepared */
	enum sm_stress_alt_op alt_op;
	char *alt_isolation; /* isolation= hint, NULL when not given */
};

enum sm_stress_log_level {
	SM_STRESS_LOG_MINIMAL,
	SM_STRESS_LOG_NORMAL,
	SM_STRESS_LOG_VERBOSE,
};

struct sm_stress_log {
	unsigned interval_ms; /* default 1000 */
	char *hdrfile;	      /* HDR interval log, NULL: none */
	char *file;	      /* copy of the text output, NULL: none */
	char *json;	      /* JSON report, NULL: none */
	char *csv;	      /* one row per interval and op type, NULL: none */
	char *steps;	      /* a capacity search's steps, one CSV row each, NULL: none */
	bool no_summary, no_settings, print_statements_on_error;
	enum sm_stress_log_level level;
};

enum sm_stress_delay_policy {
	SM_STRESS_DELAY_CONSTANT,
	SM_STRESS_DELAY_LINEAR,
	SM_STRESS_DELAY_EXPONENTIAL,
};

struct sm_stress_errors {
	bool ignore; /* count and go on; otherwise the first op failing all tries stops the run */
	bool fail_fast; /* with duration=: stop on the first thread failure */
	bool skip_read_validation;
	unsigned retries; /* tries = retries + 1; default 9 */
	/* backoff before a retry after an overload error, with +-25 % jitter */
	enum sm_stress_delay_policy delay_policy;
	uint64_t min_delay_ms, max_delay_ms; /* default 0, 20000 */
};

enum sm_stress_ordering {
	SM_STRESS_ORDER_RANDOM,	     /* replicas shuffled per query */
	SM_STRESS_ORDER_TOPOLOGICAL, /* primary replica first, ring order */
	SM_STRESS_ORDER_NEUTRAL,     /* the child (DC-aware round-robin) policy's order */
};

struct sm_stress_route {
	bool token_aware;
	enum sm_stress_ordering ordering;
	bool shard_aware;
};

/*
 * -transport: TLS to the servers (cassandra-stress's SSL options; the files
 * are PEM or PKCS#12, not Java keystores).
 */
struct sm_stress_transport {
	bool on;	    /* any -transport sub-option given */
	char *truststore;   /* CAs the servers' certificates are checked against; NULL: not checked */
	char *keystore;	    /* this client's certificate (and key, when one file) */
	char *keystore_key; /* its key, when apart (extension) */
	char *priority;	    /* GnuTLS priority, from ssl-protocol= / ssl-ciphers= / priority= */
	char *keystore_password; /* PKCS#12 */
};

/* -graph file= [title=] [revision=]: cassandra-stress's HTML report (SettingsGraph). */
struct sm_stress_graph {
	char *file;	/* NULL: no report */
	char *title;	/* NULL: the file's, or "shardmark stress - DATE" */
	char *revision; /* this run's name in the report, default "unknown" */
};

/*
 * Everything `shardmark stress` was asked to do. Strings are copies owned by
 * the struct (sm_strdup), released by sm_stress_settings_free().
 */
struct sm_stress_settings {
	enum sm_stress_cmd cmd;
	char *help_topic; /* SM_STRESS_CMD_HELP: the word after help, or NULL */

	/* The op mix: weights by enum sm_stress_op (a single 1 unless mixed). */
	double ratio[SM_STRESS_NR_OPS];
	/* Run length: exactly one of these is non-zero. */
	uint64_t n_ops;
	uint64_t duration_ns;
	/*
	 * Warm-up operations per op type before the measured run, 0 for none:
	 * warmup=N, or cassandra-stress's min(50000, n/4) (50000 with
	 * duration=) times the number of nodes; run at warmup_threads.
	 */
	uint64_t warmup_ops;
	unsigned warmup_threads; /* min(100, rate.threads) */
	bool no_warmup;
	enum sm_stress_truncate truncate;
	enum sm_stress_cl cl;		   /* default LOCAL_ONE */
	enum sm_stress_cl serial_cl;	   /* default SERIAL */
	unsigned key_size;		   /* partition key bytes, keysize= (default 10) */
	struct sm_stress_dist counter_add; /* add=, default FIXED(1) */
	struct sm_stress_dist clustering;  /* mixed: runs of one op type, default GAUSSIAN(1..10) */

	struct sm_stress_pop pop;
	struct sm_stress_col col;
	struct sm_stress_rate rate;
	struct sm_stress_schema schema;
	struct sm_stress_nodes nodes;
	uint16_t native_port;	  /* -port native=, default 9042 */
	uint16_t alternator_port; /* -port alternator=, default 8000 */
	struct sm_stress_mode mode;
	struct sm_stress_log log;
	struct sm_stress_errors errors;
	struct sm_stress_route route;
	struct sm_stress_transport transport;
	struct sm_stress_graph graph;
	unsigned shards; /* -shards; 0: one per CPU */

	/* user mode: the profile (owned), and what each user op runs: -1 the insert, else a query */
	struct sm_stress_profile *profile;
	int user_op[SM_STRESS_MAX_USER_OPS];
	/* -tokenrange: token range queries start the ring again when read (wrap), and
	 * cut each of their ranges in splits (0: 1) */
	struct {
		bool wrap;
		unsigned splits;
	} tokenrange;
	/*
	 * A workload of another tool run on this engine (YCSB, scylla-bench):
	 * its hooks, NULL for cassandra-stress's commands, and its state (owned).
	 */
	const struct sm_stress_workload_ops *wl;
	struct sm_stress_ycsb *ycsb;
	struct sm_stress_sb *sb;
};

/*
 * Parse @argc/@argv (the words after `shardmark stress`) into @s, filling
 * every setting not given with cassandra-stress's default. Words are joined
 * and re-split as cassandra-stress does, so `-schema "replication(factor=3,
 * strategy=X)"` and `ratio(write=1, read=3)` work quoted or not; command,
 * option and sub-option names are case-insensitive. Returns 0, -EINVAL with
 * a message in @err (naming the word, where it appeared, and the fix) for a
 * bad or unsupported command line, -ENOMEM, or the -errno of opening a
 * `-node file=`. On error @s holds nothing to free; on success release it
 * with sm_stress_settings_free(). @argv is not modified or referenced later.
 */
int
sm_stress_settings_parse(int argc, char **argv, struct sm_stress_settings *s, char *err,
			 size_t errlen);

/* Release what @s owns and zero it; safe on a zeroed or already freed struct. */
void
sm_stress_settings_free(struct sm_stress_settings *s);

/*
 * Print the "******************** Stress Settings ********************" dump
 * of every setting in @s, section by section as cassandra-stress does
 * (Command, Rate, Population, Columns, Errors, Log, Mode, Node, Schema,
 * Port) plus Route and Shards; printed unless -log no-settings.
 */
void
sm_stress_settings_print(FILE *f, const struct sm_stress_settings *s);

/* Print the help text: commands, options, defaults, extensions and what is not supported. */
void
sm_stress_usage(FILE *f);

/*
 * Print the help of one command ("write", its alias "insert", ...) or
 * option ("-rate", or "rate"), as cassandra-stress's `help TOPIC` does.
 * 0, or -ENOENT (nothing printed) for a topic that is neither.
 */
int
sm_stress_usage_topic(FILE *f, const char *topic);

/* "write", "read", "mixed", "counter_write", "counter_read" or "help". */
const char *
sm_stress_cmd_name(enum sm_stress_cmd cmd);

/*
 * cassandra-stress's name of an op type in reports and HDR log tags:
 * "WRITE", "READ", "COUNTER_WRITE", "COUNTER_READ".
 */
const char *
sm_stress_op_name(enum sm_stress_op op);

/*
 * Replace @s's nodes with the comma-separated @list, parsed as -node
 * parses it (for other tools' host options). 0, or -EINVAL with @err.
 */
int
sm_stress_settings_nodes(struct sm_stress_settings *s, const char *list, char *err,
			 size_t errlen);

/* Name user op slot @i (< SM_STRESS_MAX_USER_OPS) as the reports will call it. */
void
sm_stress_user_op_name_set(unsigned i, const char *name);

/* "LOCAL_ONE", "QUORUM", ...; "?" for a code that is not a consistency level. */
const char *
sm_stress_cl_name(enum sm_stress_cl cl);

/* The run itself: sm_stress_run.h. */
#include "sm_stress_run.h"

#endif /* SM_STRESS_H */
