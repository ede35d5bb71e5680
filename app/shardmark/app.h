/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_APP_H
#define SM_APP_H

#include <stdbool.h>
#include <stddef.h>

#include "sm_config.h"
#include "sm_core.h"
#include "sm_net.h"
#include "sm_opt.h"

/* Exit codes: 0 success, 1 runtime failure, 2 usage or configuration error. */
#define SM_EXIT_OK 0
#define SM_EXIT_FAIL 1
#define SM_EXIT_USAGE 2

/*
 * A subcommand option that is not a config key: a setter, or (set NULL) a
 * row of an option table (sm_opt.h) whose value lands at @offset in the
 * command's context. SM_CLI_ROW() writes a row.
 */
struct sm_cli_opt {
	const char *name; /* "--duration" */
	const char *arg;  /* "SECONDS", or NULL for a flag */
	const char *help;
	int (*set)(void *ctx, const char *value, char *err, size_t errlen);
	enum sm_opt_type type;
	size_t offset;
	uint64_t min, max; /* SM_OPT_UINT, SM_OPT_U64 */
};

/* A row (name, type, field of struct @st, min, max, argument name, help). */
#define SM_CLI_ROW(name, type, st, field, min, max, arg, help)                                     \
	{ (name), (arg), (help), NULL, SM_OPT_##type, SM_OPT_OFFSET(type, st, field), (min), (max) }
/* An option accepted and dropped. */
#define SM_CLI_IGNORED(name, arg, help) { (name), (arg), (help), NULL, SM_OPT_IGNORED, 0, 0, 0 }

/*
 * Parse @argv (after the subcommand): --config FILE first, then every other
 * option in order, either one of @opts or a config key (--smp 2, --smp=2).
 * Returns 0, 1 when --help was given (after printing help), or -EINVAL with
 * a message in @err.
 */
int
sm_cli_parse(int argc, char **argv, const char *cmd, const char *summary, struct sm_config *cfg,
	     const struct sm_cli_opt *opts, size_t nopts, void *ctx, char *err, size_t errlen);

/* Runtime options derived from @cfg, with the shard callbacks to run. */
void
sm_app_runtime_opts(const struct sm_config *cfg, struct sm_runtime_opts *o);

/*
 * Select and probe the network driver named in @cfg and set the log level.
 * Returns 0 or an SM_EXIT_* code after printing the reason.
 */
int
sm_app_prepare(const struct sm_config *cfg);

/*
 * The shard count the runtime will choose for @cfg (its own checks run
 * later and explain a bad smp or cpuset): smp, else the CPUs of cpuset,
 * else every CPU the process may use.
 */
unsigned
sm_app_shard_count(const struct sm_config *cfg);

/*
 * Before the shards start: the commitlog that commitlog_sync asks for (its
 * directory, segments and schema; nothing when off). 0, or the exit status
 * after a message on stderr. sm_clog_cleanup() undoes it.
 */
int
sm_app_commitlog_setup(const struct sm_config *cfg);

/* Driver settings from @cfg. */
void
sm_app_net_config(const struct sm_config *cfg, struct sm_net_config *nc);

/*
 * Each shard's heap budget from memory and reserve_memory (Seastar's
 * meaning: the process total, minus what shards hold outside the heap,
 * split evenly): 0, or -EINVAL with the cause and the fix in @err.
 */
int
sm_app_memory_budget(const struct sm_config *cfg, unsigned nshards, uint64_t *per_shard,
		     char *err, size_t errlen);

/*
 * A loopback TCP port that was free a moment ago (bound and released), for
 * a child process or listener to take; 0 or -errno.
 */
int
sm_app_free_port(unsigned *port);

/*
 * Create an empty temporary file $TMPDIR/@prefix-XXXXXX@suffix (/tmp
 * without TMPDIR) and put its name in @buf; the caller removes it. 0, or
 * -errno with @buf empty.
 */
int
sm_app_tmp_file(char *buf, size_t len, const char *prefix, const char *suffix);

/* The CPU's model name from /proc/cpuinfo, or "unknown". */
void
sm_app_cpu_model(char *buf, size_t len);

/*
 * Check, before a run, that output option @opt ("--json") can write
 * @path: the file is opened for writing (not truncated; removed again if
 * it did not exist). 0, or -EINVAL with the cause and the fix in @err
 * ("the directory /x does not exist: create it (mkdir -p /x) or give
 * another path"), for the usage error (exit 2) it is.
 */
int
sm_app_check_output(const char *opt, const char *path, char *err, size_t errlen);

/* Print "shardmark: <message>" for a failed listen on @what at @port. */
void
sm_app_listen_error(const struct sm_config *cfg, const char *what, const char *key,
		    const char *addr, unsigned port, int err);

/*
 * Write the HTML report of the result files @files[0..@nf) to @out
 * (`shardmark report`): titled @title (NULL: the existing file's, or the
 * default); with @revision, the one run is named so and added to @out
 * when it exists. Errors go to stderr after "@who: ", the line saying what
 * was written to @msg. An exit status (SM_EXIT_*).
 */
int
sm_app_report(const char *out, const char *title, const char *revision, char **files, int nf,
	      const char *who, FILE *msg);

int
sm_cmd_serve(int argc, char **argv);
int
sm_cmd_bench(int argc, char **argv);
int
sm_cmd_bench_echo(int argc, char **argv);
int
sm_cmd_perf_simple_query(int argc, char **argv);
int
sm_cmd_stress(int argc, char **argv);
/* YCSB's core workloads on the stress engine: `shardmark ycsb load|run -P FILE ...`. */
int
sm_cmd_ycsb(int argc, char **argv);
/* scylla-bench's modes on the stress engine: `shardmark scylla-bench -mode write ...`. */
int
sm_cmd_scylla_bench(int argc, char **argv);
int
sm_cmd_cql(int argc, char **argv);
int
sm_cmd_report(int argc, char **argv);
int
sm_cmd_compare(int argc, char **argv);

#endif /* SM_APP_H */
