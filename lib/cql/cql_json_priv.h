/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQL_JSON_PRIV_H
#define CQL_JSON_PRIV_H

/*
 * Private to lib/cql: CQL values as JSON (SELECT JSON, toJson()), written
 * as ScyllaDB writes them (types/json_utils.cc to_json_string()): numbers
 * and booleans bare, every other scalar a JSON string of its text form
 * ("2015-05-03 13:30:54.234Z", "0xcafe", "1h30m"), lists, sets and tuples
 * arrays, maps and user types objects (a map's key is the JSON text of the
 * key, as a string when it is not one already).
 */

#include <stdbool.h>

#include "sm_cql_proto.h"
#include "sm_schema.h"
#include "sm_types.h"

/* Append the JSON of @v (@null: null) of type @t to @out; 0, or -ENOMEM (also in out->err). */
int
cql_json_value(struct sm_cql_buf *out, const struct sm_type *t, struct sm_bytes v, bool null);

/* Append @n bytes of @s as they are (JSON punctuation); a failure stays in out->err. */
void
cql_json_raw(struct sm_cql_buf *out, const char *s, size_t n);

/* Append @s (@n bytes) as a JSON string, quoted and escaped. */
void
cql_json_string(struct sm_cql_buf *out, const char *s, size_t n);

/*
 * JSON text into the serialized value of @t, appended to @out (a string
 * stands for a collection's JSON too, as Cassandra accepts); 0, -ENODATA for
 * null, -EINVAL with a message in @err, -ENOMEM.
 */
int
cql_json_to_value(const struct sm_type *t, const char *js, size_t len, struct sm_cql_buf *out,
		  char *err, size_t errlen);

/* A column of INSERT JSON's object: its value at out->p[off, off + len) when present. */
struct cql_json_col {
	bool present;
	bool null;
	size_t off;
	uint32_t len;
};

/*
 * INSERT JSON's object (ScyllaDB's from_json_object()): each key a column
 * of @t (case-insensitive unless in double quotes), its value converted
 * for the column's type and appended to @out; @cols (one per column of @t)
 * tells which were given. 0, -EINVAL with the message, -ENOMEM.
 */
int
cql_json_row(const struct sm_table *t, const char *js, size_t len, struct sm_cql_buf *out,
	     struct cql_json_col *cols, char *err, size_t errlen);

#endif /* CQL_JSON_PRIV_H */
