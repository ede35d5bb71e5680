/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_PSQ_WORKLOAD_H
#define SM_PSQ_WORKLOAD_H

/*
 * perf-simple-query's two frontends, in the library sm_psq_workloads
 * (sm_psq_workloads_dep): unlike lib/bench they drive the CQL and
 * Alternator executors, so they depend on lib/cql and lib/alternator.
 * The caller inits the store and both executors on each shard before
 * sm_psq_shard_init() and finis them after sm_psq_shard_fini().
 */

#include "sm_psq.h"

/* CQL: sm_psq_init()'s wl_arg is the struct sm_cql_service to connect to. */
extern const struct sm_psq_workload sm_psq_workload_cql;

/* Alternator: wl_arg unused; the default write isolation is the executor's. */
extern const struct sm_psq_workload sm_psq_workload_alternator;
/* The same for --workload write_stream (its own issue step: the others' stay as they were). */
extern const struct sm_psq_workload sm_psq_workload_alternator_stream;

#endif /* SM_PSQ_WORKLOAD_H */
