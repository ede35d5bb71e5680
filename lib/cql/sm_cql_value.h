/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_CQL_VALUE_H
#define SM_CQL_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sm_cql_parse.h"
#include "sm_types.h"

/*
 * Most significant digits of a varint or decimal written as text: base
 * conversion is quadratic in the digits, so a longer literal (which only a
 * hostile client writes; a driver binds the value) is refused rather than
 * let hold the shard. Cassandra caps decimal arithmetic at the same
 * precision (CASSANDRA-15232).
 */
#define SM_CQL_MAX_NUMBER_DIGITS 10000u

/* Declared only: callers include sm_cql_proto.h for the definitions. */
struct sm_cql_buf;
struct sm_cql_value;
struct sm_uuid_gen;

/*
 * The executor's conversion of terms (literals, collection literals,
 * function calls) into serialized values of their receiver's type, as
 * Cassandra's Constants/Lists/Sets/Maps/FunctionCall do it.
 *
 * Which literal kinds a type accepts (Cassandra's Constants.Type):
 *   INT       tinyint, smallint, int, bigint, counter, varint, float, double,
 *             decimal, timestamp (millis), date (the raw uint32), time (ns)
 *   FLOAT     float, double, decimal (exact: unscaled varint and scale)
 *   STRING    ascii, text, inet, timestamp, date, time
 *   BLOB      blob
 *   BOOL      boolean
 *   UUID      uuid, timeuuid (version 1 only)
 *   DURATION  duration
 *   NULL      any type: the result is null, not a value
 * Timestamps without a zone are UTC. Sets and maps come out normalised
 * (sm_value_normalize()): sorted, duplicates dropped, the last duplicate
 * map key kept.
 *
 * Functions: now() and currenttimeuuid() (timeuuid), uuid(),
 * currenttimestamp(), currentdate(), currenttime(), totimestamp(),
 * todate(), tounixtimestamp(), blobas<type>() and <type>asblob() for every
 * simple type. A function's result must be value-compatible with the
 * receiver (a timeuuid fits a uuid, anything fits a blob, ...); a null
 * argument gives a null result.
 *
 * Errors (a server answers INVALID for all but -ENOMEM, -EAGAIN):
 *   -EINVAL   the term does not fit the receiver, or its text is not a
 *             value of the type; @err holds Cassandra's message:
 *             'Invalid INTEGER constant (abc) for "c" of type int',
 *             "Unable to make int from '4294967296'",
 *             "null is not supported inside collections", a varint or
 *             decimal of more than SM_CQL_MAX_NUMBER_DIGITS digits, ...
 *   -ENOTSUP  valid CQL that shardmark does not convert (tuples, unknown
 *             functions), "not supported by shardmark: <what>" in @err
 *   -EAGAIN   the term is or holds a bind marker and no bound values were
 *             given: the executor supplies the bound value instead
 *   -ENOMEM   out of memory
 */

/* What a conversion may need besides the term. */
struct sm_cql_value_ctx {
	/* now() and currenttimeuuid(); NULL makes them fail with -EINVAL */
	struct sm_uuid_gen *uuid_gen;
	/* the statement's time for currenttimestamp() and the like; 0: read the clock */
	int64_t now_micros;
	/* bound values by marker index (sm_cql_bind order), or NULL: -EAGAIN */
	const struct sm_cql_value *binds;
	unsigned nbinds;
};

/* What a term stood for. */
enum sm_cql_conv_state {
	SM_CQL_CONV_VALUE, /* a value, possibly the empty one */
	SM_CQL_CONV_NULL,  /* a null literal, a bound null, a function of null */
	SM_CQL_CONV_UNSET, /* a bound "not set" value: leave the column alone */
};

/* Where a converted value went: out->p[off, off + len) when state is VALUE. */
struct sm_cql_value_span {
	size_t off;
	uint32_t len;
	enum sm_cql_conv_state state;
};

/*
 * Convert @t for @receiver, appending the serialized value to @out and
 * describing it in *@span. @column names the receiver in messages ("c";
 * collection elements become "value(c)" and "key(c)", as in Cassandra).
 * @ctx may be NULL (no generator, the clock, no bound values). A NULL
 * literal or bound null gives state NULL and appends nothing (a bound unset,
 * state UNSET); nulls and unsets inside
 * collections are errors. On failure @out keeps its length from before the
 * call and @err (@errlen bytes, NUL-terminated when @errlen > 0) says why;
 * see the list above for the codes.
 */
int
sm_cql_term_to_value(const struct sm_cql_term *t, const struct sm_type *receiver,
		     const char *column, const struct sm_cql_value_ctx *ctx, struct sm_cql_buf *out,
		     struct sm_cql_value_span *span, char *err, size_t errlen);

/*
 * The type of argument @i of the function call @call, or NULL when the
 * function is unknown, has no such argument or is overloaded on it (the
 * type of a bind marker there cannot be known: Cassandra's "Ambiguous call").
 */
const struct sm_type *
sm_cql_function_arg_type(const struct sm_cql_term *call, unsigned i);

/*
 * Convert @text (@len bytes) to a value of the simple type @type the way
 * Cassandra's AbstractType.fromString() does: decimal numbers for the
 * numeric types, "true"/"false" in any case, hex without 0x for blob, the
 * 8-4-4-4-12 form for uuids, the literal forms of durations, dates, times
 * and timestamps (digits alone are the raw value), the text itself for
 * ascii and text. An empty text is the empty value for every type but
 * counter (a STRING literal '' likewise). Appends to @out and sets *@span; -EINVAL
 * with a message in @err, -ENOTSUP for collections, -ENOMEM.
 */
int
sm_cql_value_from_text(const struct sm_type *type, const char *text, size_t len,
		       struct sm_cql_buf *out, struct sm_cql_value_span *span, char *err,
		       size_t errlen);

#endif /* SM_CQL_VALUE_H */
