/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQL_FUNC_PRIV_H
#define CQL_FUNC_PRIV_H

/*
 * Private to lib/cql: CQL's native scalar functions (ScyllaDB's
 * cql3/functions/time_uuid_fcts.hh, bytes_conversion_fcts.hh,
 * castas_fcts.cc), shared by the conversion of terms (sm_cql_value.c: a
 * function call in VALUES or WHERE) and the evaluation of selections
 * (sm_cql_exec_selection.c: a function of the columns read).
 */

#include <stdbool.h>
#include <stdint.h>

#include "sm_types.h"
#include "sm_uuid.h"

struct sm_cql_buf;

enum cql_fn_id {
	CQL_FN_NOW, /* now(), currenttimeuuid() */
	CQL_FN_UUID,
	CQL_FN_CURRENT_TIMESTAMP,
	CQL_FN_CURRENT_DATE,
	CQL_FN_CURRENT_TIME,
	CQL_FN_TO_TIMESTAMP,
	CQL_FN_TO_DATE,
	CQL_FN_TO_UNIX_TIMESTAMP,
	CQL_FN_DATE_OF,		  /* dateof(timeuuid): a timestamp */
	CQL_FN_UNIX_TIMESTAMP_OF, /* unixtimestampof(timeuuid): a bigint */
	CQL_FN_MIN_TIMEUUID,
	CQL_FN_MAX_TIMEUUID,
	CQL_FN_BLOB_AS,
	CQL_FN_AS_BLOB,
};

/* A native function: its result, and its one argument's type or overloads. */
struct cql_fn {
	enum cql_fn_id id;
	enum sm_type_kind result;
	enum sm_type_kind arg;	   /* the argument's type when there is one overload */
	enum sm_type_kind cand[3]; /* the overloads' argument types (TO_*), ncand of them */
	unsigned ncand;
	unsigned nargs;
};

/* The most bytes a function's result takes, blobas and asblob aside (their argument). */
#define CQL_FN_RESULT_MAX 16u

/* @name (lowercased; @ks NULL or "system") as a native function into *@f; false when none. */
bool
cql_fn_lookup(const char *ks, const char *name, struct cql_fn *f);

/* FunctionCall's isValueCompatibleWith(): may a result of kind @res be stored as @rt? */
bool
cql_fn_value_compatible(const struct sm_type *rt, enum sm_type_kind res);

/*
 * The result of @f for its argument @a of kind @ak (ignored for the
 * functions without one), into @out (CQL_FN_RESULT_MAX bytes), its length
 * in *@len; blobas and asblob are their argument itself (*@len = a.len, out
 * untouched) once blobas validated it. An empty argument gives an empty
 * result. 0, or -EINVAL with ScyllaDB's message (@fname names the call).
 */
int
cql_fn_eval(const struct cql_fn *f, enum sm_type_kind ak, struct sm_bytes a, struct sm_uuid_gen *gen,
	    int64_t now_us, const char *fname, uint8_t *out, uint32_t *len, char *err,
	    size_t errlen);

/*
 * CAST(@a AS @to) of a value @a of type @from (castas_fcts.cc): appended to
 * @out. -EINVAL with "<from> cannot be cast to <to>" when ScyllaDB has no
 * such conversion (cql_cast_allowed() tells before), -ENOMEM.
 */
bool
cql_cast_allowed(const struct sm_type *from, const struct sm_type *to);
int
cql_cast(const struct sm_type *from, const struct sm_type *to, struct sm_bytes a,
	 struct sm_cql_buf *out, char *err, size_t errlen);

/* The Java class name ScyllaDB prints for a type in messages ("org.apache.cassandra.db.marshal.Int32Type"). */
const char *
cql_type_class(enum sm_type_kind k);

#endif /* CQL_FUNC_PRIV_H */
