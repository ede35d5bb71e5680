/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef STORE_LOG_PRIV_H
#define STORE_LOG_PRIV_H

#include <stdint.h>

#include "sm_store.h"
#include "sm_table.h"

/*
 * Between the store's request layer (sm_store.c) and its commitlog glue
 * (sm_store_log.c), so that the hook in sm_store.c stays one call.
 */

/* Set by store_log_apply() in batch mode: the log position the request must wait for. */
extern __thread uint64_t store_log_pending;

/* Set by store_log_apply() when the log had no room (-EBUSY): wait and run it again. */
extern __thread bool store_log_busy;

/* Reserve, apply, then frame the record (or give the reservation up). */
int
store_log_apply(struct sm_ptable *pt, const struct sm_mutation *m, int64_t ts, int32_t now,
		char *err, size_t errlen);

/* Shard 0: log a schema change about to be installed (sets r->clog_pos). */
int
store_log_ddl(struct sm_ddl_req *r);

/* Each shard: TRUNCATE of @t emptied its storage here. */
void
store_log_truncate(const struct sm_table *t);

/* From sm_store.c for the replay. */
struct sm_ptable *
store_ptable_local(const struct sm_table *t);
int
store_ddl_build(const struct sm_catalog *cur, struct sm_ddl_req *r);
void
store_set_initial_catalog(struct sm_catalog *c);

#endif /* STORE_LOG_PRIV_H */
