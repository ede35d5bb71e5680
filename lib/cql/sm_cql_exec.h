/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_CQL_EXEC_H
#define SM_CQL_EXEC_H

/*
 * The CQL executor: QUERY, PREPARE, EXECUTE and BATCH against lib/store.
 *
 * A statement is parsed once, bound to the catalog (its table, the types of
 * its bind markers, its result columns) and kept by id in a per-shard cache.
 * The id is MD5 of the session keyspace and the text, so every shard and
 * every restart computes the same one; PREPARE installs the statement on
 * every shard before it answers, so a driver may EXECUTE on any connection.
 * An unknown id gets Unprepared and the driver prepares again.
 *
 * Execution converts the bound values into store requests without parsing
 * again; requests for another shard's partition travel there through
 * sm_store_submit() and their answer is encoded on the way back. Rows are
 * written straight into the response frame by the store's row sink.
 */

#include "sm_cql_conn.h"
#include "sm_cql_system.h"

enum sm_cql_tablets_mode {
	SM_CQL_TABLETS_DISABLED,
	SM_CQL_TABLETS_ENABLED,
	SM_CQL_TABLETS_ENFORCED,
};

struct sm_cql_exec_config {
	const struct sm_cql_cluster *cluster;
	/* The prepared statements a shard keeps (0: 20000). */
	unsigned max_prepared;
	/*
	 * A batch whose mutations hold more than this many KiB of keys and
	 * values is refused with "Batch too large" (scylla.yaml's
	 * batch_size_fail_threshold_in_kb); 0: 1024, ScyllaDB's default.
	 */
	unsigned batch_size_fail_threshold_in_kb;
	/* tablets_mode_for_new_keyspaces: keyspaces created without tablets = {...} */
	enum sm_cql_tablets_mode tablets_mode;
};

/*
 * ScyllaDB's tablets_mode_for_new_keyspaces (db/config.cc): disabled (vnodes
 * unless tablets = {'enabled': true}), enabled (tablets for
 * NetworkTopologyStrategy keyspaces unless {'enabled': false}) or enforced
 * (as enabled, and {'enabled': false} is refused). 0, or -EINVAL for
 * another name.
 */
int
sm_cql_tablets_mode_parse(const char *name, enum sm_cql_tablets_mode *mode);

/* The executor for struct sm_cql_service.exec; ctx: a struct sm_cql_exec_config. */
extern const struct sm_cql_executor sm_cql_exec;

/* Per-shard setup (after sm_store_shard_init()) and teardown; 0 or -ENOMEM. */
int
sm_cql_exec_shard_init(const struct sm_cql_exec_config *cfg);
void
sm_cql_exec_shard_fini(void);

#endif /* SM_CQL_EXEC_H */
