/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cassandra-stress's user profile: the YAML file of `stress user
 * profile=FILE ops(insert=1,q1=3)`, read with libyaml, and the table it
 * describes (its CREATE TABLE parsed for the columns, their types and the
 * primary key).
 *
 * The keys are cassandra-stress's (scylladb/cassandra-stress,
 * StressYaml.java and StressProfile.java): keyspace, keyspace_definition,
 * table, table_definition, extra_definitions, columnspec (name, size,
 * population, cluster), insert (partitions, select, row-population,
 * batchtype, consistencyLevel, serialConsistencyLevel, and scylladb/cassandra-stress's
 * condition), queries (name:
 * {cql, fields: samerow|multirow, consistencyLevel,
 * serialConsistencyLevel}) and token_range_queries (name: {columns,
 * page_size}). Defaults as cassandra-stress's: size UNIFORM(4..8),
 * population UNIFORM(1..100B), cluster FIXED(1); partitions FIXED(1),
 * select FIXED(1)/1, batchtype LOGGED, fields multirow.
 */
#ifndef SM_STRESS_PROFILE_H
#define SM_STRESS_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sm_stress_dist.h"
#include "sm_types.h"

#define SM_STRESS_PROFILE_MAX_COLS 64
#define SM_STRESS_PROFILE_MAX_QUERIES 8
#define SM_STRESS_PROFILE_MAX_BINDS 64
#define SM_STRESS_PROFILE_NAME_MAX 64
#define SM_STRESS_PROFILE_MAX_UDTS 8
#define SM_STRESS_PROFILE_MAX_STMTS 8

enum sm_stress_col_role {
	SM_STRESS_COL_PARTITION,
	SM_STRESS_COL_CLUSTERING,
	SM_STRESS_COL_REGULAR,
	SM_STRESS_COL_STATIC,
};

struct sm_stress_pcol {
	char name[SM_STRESS_PROFILE_NAME_MAX]; /* as the server names it (quotes removed) */
	bool quoted;			       /* needs "" in CQL (mixed case, ...) */
	const struct sm_type *type;	       /* owned (sm_type_free) */
	enum sm_stress_col_role role;
	unsigned key_pos; /* place in the partition or clustering key */
	struct sm_stress_xdist size;	   /* bytes of text/blob; elements of a collection */
	struct sm_stress_xdist population; /* distinct values */
	struct sm_stress_xdist cluster;	   /* clustering: values under each parent */
};

/* What a bind marker of a query takes: a column's value, or a token bound. */
enum sm_stress_bind_kind {
	SM_STRESS_BIND_COL,
	SM_STRESS_BIND_TOKEN,
};

struct sm_stress_bind {
	enum sm_stress_bind_kind kind;
	unsigned col; /* index in sm_stress_profile.cols */
};

struct sm_stress_pquery {
	char name[SM_STRESS_PROFILE_NAME_MAX]; /* lower case, as cassandra-stress reports it */
	char *cql;
	bool samerow; /* fields: samerow (default multirow) */
	int cl;	      /* consistencyLevel, -1: the command's cl= */
	int serial_cl;
	bool lwt;	   /* has an IF condition: its result has [applied] */
	bool select;	   /* a SELECT (rows come back) */
	bool binds_all_pk; /* binds every primary key column: the row can be checked */
	unsigned nbind;
	struct sm_stress_bind bind[SM_STRESS_PROFILE_MAX_BINDS];
};

struct sm_stress_ptrq {
	char name[SM_STRESS_PROFILE_NAME_MAX];
	char *columns;	/* the selected columns, "*" by default */
	unsigned page_size; /* default 5000 */
};

/* ops()'s code for token_range_queries entry @t: past every queries: index. */
#define SM_STRESS_PROFILE_TRQ(t) (SM_STRESS_PROFILE_MAX_QUERIES + (int)(t))

enum sm_stress_batch_type {
	SM_STRESS_BATCH_LOGGED,
	SM_STRESS_BATCH_UNLOGGED,
};

struct sm_stress_profile {
	char *path;
	char *keyspace, *keyspace_definition;
	char *table, *table_definition;
	char *extra_definitions[8];
	unsigned n_extra;
	/* keyspace_definition's statements after its first (CREATE TYPE ...) */
	char *ks_more[SM_STRESS_PROFILE_MAX_STMTS];
	unsigned n_ks_more;
	/* the user types of CREATE TYPE in keyspace_definition or extra_definitions */
	const struct sm_type *udts[SM_STRESS_PROFILE_MAX_UDTS];
	unsigned nudts;
	/* pk columns first (key order), then clustering (key order), then the rest */
	struct sm_stress_pcol cols[SM_STRESS_PROFILE_MAX_COLS];
	unsigned ncols, npk, nck;
	struct {
		struct sm_stress_xdist partitions;
		struct sm_stress_ratio select;
		struct sm_stress_ratio row_population;
		enum sm_stress_batch_type batch;
		int cl, serial_cl; /* -1: the command's */
		char *condition;   /* "IF title = NULL": an LWT insert (ScyllaDB's cassandra-stress) */
	} insert;
	struct sm_stress_pquery queries[SM_STRESS_PROFILE_MAX_QUERIES];
	unsigned nqueries;
	struct sm_stress_ptrq trq[SM_STRESS_PROFILE_MAX_QUERIES];
	unsigned ntrq;
};

/*
 * Read the profile at @path into @p (zeroed first). 0, or -errno with the
 * cause in @err: the file, the YAML line and column, the key, and what to
 * write instead. On error @p holds nothing to free.
 */
int
sm_stress_profile_load(const char *path, struct sm_stress_profile *p, char *err, size_t errlen);

/* The same from @len bytes of YAML in @text (@name for messages). */
int
sm_stress_profile_parse(const char *name, const char *text, size_t len,
			struct sm_stress_profile *p, char *err, size_t errlen);

/* Release what @p owns; safe on a zeroed or freed one. */
void
sm_stress_profile_free(struct sm_stress_profile *p);

/* The query named @name (case-insensitive), or -1. */
int
sm_stress_profile_query(const struct sm_stress_profile *p, const char *name);

/* The column named @name (as the server names it), or -1. */
int
sm_stress_profile_col(const struct sm_stress_profile *p, const char *name);

/*
 * Map the bind markers of @q's CQL to columns: `col <op> ?`, `col IN ?`,
 * `token(a, b) <op> ?`, `SET col = ?`, `col = col + ?` and INSERT's column
 * list with VALUES (?, ...). 0, or -EINVAL naming the marker that maps to
 * no column.
 */
int
sm_stress_profile_bind(const struct sm_stress_profile *p, struct sm_stress_pquery *q, char *err,
		       size_t errlen);

/*
 * user's ops(insert=1,q1=3) (@spec is what is inside the parentheses):
 * each name is "insert", a query or a token_range_queries entry of @p, each
 * weight a non-negative number. Fills @weight[i] and @what[i] (-1 insert,
 * the query's index, or SM_STRESS_PROFILE_TRQ(entry)) for up
 * to @cap ops and returns how many, or -EINVAL with the message in @err.
 */
int
sm_stress_profile_ops(const struct sm_stress_profile *p, const char *spec, double *weight,
		      int *what, unsigned cap, char *err, size_t errlen);

/*
 * The @i-th statement to run after CREATE KEYSPACE and USE: the rest of
 * keyspace_definition, the CREATE TYPEs of extra_definitions (before the
 * table that may use them), table_definition, the other extra_definitions;
 * NULL after the last.
 */
const char *
sm_stress_profile_setup_statement(const struct sm_stress_profile *p, unsigned i);

/* The name of ops() code @what (-1 insert, a query, SM_STRESS_PROFILE_TRQ(t)). */
const char *
sm_stress_profile_op_name(const struct sm_stress_profile *p, int what);

/*
 * One sub-option of -insert, overriding the profile's insert:
 * partitions=DIST, select-ratio=DIST/N, row-population-ratio=DIST/N,
 * batchtype=LOGGED|UNLOGGED. 0, or -EINVAL with the message in @err.
 */
int
sm_stress_profile_insert_option(struct sm_stress_profile *p, const char *tok, char *err,
				size_t errlen);

#endif /* SM_STRESS_PROFILE_H */
