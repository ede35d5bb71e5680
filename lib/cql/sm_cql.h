/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_CQL_H
#define SM_CQL_H

/*
 * lib/cql: the CQL native protocol server on lib/store. Include this header
 * for the library's face:
 *   sm_cql_proto.h  the frame codec, both directions (clients use it too)
 *   sm_cql_conn.h   a CQL port: sm_cql_proto_ops and its struct sm_cql_service
 *   sm_cql_exec.h   the executor behind a connection (statements, prepared
 *                   statements, batches, LWT) and its per-shard setup
 *   sm_cql_system.h system and system_schema, the cluster view drivers read
 * The other headers are the library's own: sm_cql_parse.h (statement
 * syntax), sm_cql_value.h (typed values), and the *_priv.h files.
 */

#include "sm_cql_conn.h"
#include "sm_cql_exec.h"
#include "sm_cql_proto.h"
#include "sm_cql_system.h"

#endif /* SM_CQL_H */
