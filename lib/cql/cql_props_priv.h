/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQL_PROPS_PRIV_H
#define CQL_PROPS_PRIV_H

/*
 * Private to lib/cql: the WITH properties of CREATE TABLE and ALTER TABLE,
 * checked as ScyllaDB checks them (cql3/statements/cf_prop_defs.cc
 * validate(); the compaction strategies' validate_options() in
 * compaction/compaction_strategy.cc and its size_tiered, leveled,
 * time_window and incremental siblings; compression_parameters in
 * sstables/compressor.cc; schema/caching_options.cc; speculative_retry in
 * schema/schema.cc), with ScyllaDB's messages and error kinds. shardmark
 * keeps no sstables: what passes is kept for system_schema.tables to show.
 */

#include <stdbool.h>
#include <stdint.h>

#include "sm_cql_parse.h"
#include "sm_schema.h"

/* The options a table keeps: each key and value its own allocation. */
struct cql_table_opts {
	struct sm_option *opts;
	unsigned n;
	bool has_default_ttl;
	int32_t default_ttl;
};

/*
 * Check @props (@alter: of ALTER TABLE ... WITH) into @out: 0, or -EINVAL
 * with the error's code (SM_CQL_ERR_SYNTAX, _CONFIG or _INVALID) in *@code
 * and ScyllaDB's message in @err, or -ENOMEM. What @out keeps: every
 * property but the obsolete ones, id, and (ALTER) an empty caching map;
 * speculative_retry in its canonical form ("99.0PERCENTILE", "200.00ms").
 */
int
cql_table_props(const struct sm_cql_prop *props, unsigned n, bool alter, struct cql_table_opts *out,
		int32_t *code, char *err, size_t errlen);

void
cql_table_opts_free(struct cql_table_opts *o);

/* A double as fmt's "{}" writes it: the shortest digits that read back ("0.4", "1e-05"). */
void
cql_fmt_double(double v, char *buf, size_t len);

/* The same of the float @v rounds to when @single (the shortest digits of a float). */
void
cql_fmt_float(double v, bool single, char *buf, size_t len);

#endif /* CQL_PROPS_PRIV_H */
