/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_CQL_PARSE_H
#define SM_CQL_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The CQL 3 statement parser: text in, an abstract syntax tree out.
 *
 * The tree is syntax only. Names are not resolved, literals are not
 * converted: the executor binds the tree to the schema (a column name here is
 * what sm_table_column() takes) and turns each literal into a serialized value
 * of its receiver's type. That keeps the parser free of the catalog, so a
 * statement can be parsed once, on any shard, and prepared against whichever
 * catalog snapshot is current.
 *
 * Names: unquoted identifiers and keywords are case-insensitive and come out
 * lowercased; "Quoted" identifiers keep their case ("" stands for one ").
 *
 * Memory: a statement and everything it points to live in one arena (one
 * sm_malloc() for all but very large statements), released at once by
 * sm_cql_stmt_free(). The tree does not point into the text it came from.
 *
 * Errors:
 *   -EBADMSG  a syntax error; @err reads "line L:C <message>" with L 1-based
 *             and C the 0-based character position in the line, Cassandra's
 *             convention, and names the offending token quoted ('FROMM',
 *             '<EOF>'). A server answers SYNTAX_ERROR (0x2000).
 *   -EINVAL   well-formed but invalid where the parser can tell (two PRIMARY
 *             KEYs, a bad duration, COUNT(2), unmatched INSERT columns and
 *             values...), with Cassandra's message. A server answers INVALID.
 *   -ENOTSUP  valid CQL that shardmark does not implement: @err reads "not
 *             supported by shardmark: <what>" (CREATE INDEX, GRANT, SELECT
 *             JSON, ...). A server answers INVALID.
 *   -E2BIG    the text is longer than SM_CQL_MAX_TEXT.
 *   -ENOMEM   out of memory.
 */

/* Longest statement text accepted: a CQL [long string] tops out at 2^31 - 1. */
#define SM_CQL_MAX_TEXT ((size_t)INT32_MAX)

/* Most bind markers in one statement: the protocol counts values in a [short]. */
#define SM_CQL_MAX_BINDS 65535u

/* Deepest nesting of literals, tuples, function calls and parentheses. */
#define SM_CQL_MAX_DEPTH 64

/* Bytes of the statement text that a construct came from. */
struct sm_cql_span {
	uint32_t off;
	uint32_t len;
};

/* A keyspace-qualified name: ks is NULL when the text did not qualify it. */
struct sm_cql_qname {
	const char *ks;
	const char *name;
};

/* ---- terms: values in the text ---- */

enum sm_cql_term_kind {
	SM_CQL_TERM_LITERAL, /* a constant: lit and text */
	SM_CQL_TERM_BIND,    /* ? or :name: bind and text (the name, or NULL) */
	SM_CQL_TERM_LIST,    /* [a, b]: elems */
	SM_CQL_TERM_SET,     /* {a, b}; {} is an empty SET, also valid for a map */
	SM_CQL_TERM_MAP,     /* {k: v, ...}: elems holds k0, v0, k1, v1, ... */
	SM_CQL_TERM_TUPLE,   /* (a, b) */
	SM_CQL_TERM_FUNCTION, /* name(args): ks (or NULL) and text name the function, elems are the args */
	SM_CQL_TERM_UDT,      /* {f: v, ...}: names[i] is the field of elems[i] */
	SM_CQL_TERM_CAST,     /* (type) term: text is the normalized type, elems[0] the term */
};

/*
 * The lexical kind of a literal and the form of its text:
 *   INT       optional '-', decimal digits as written ("-42", "007")
 *   FLOAT     as written with a '.' or an exponent ("1.5", "-2e10", "1."), or
 *             "NaN", "Infinity", "-Infinity" (any case in the source)
 *   STRING    the contents, unescaped: 'it''s' gives it's, $$a'b$$ gives a'b;
 *             may hold any byte, NUL included (use len)
 *   BLOB      the hex digits after 0x as written, possibly none, possibly odd
 *   BOOL      "true" or "false"
 *   NULL      "null"
 *   UUID      8-4-4-4-12 hex digits, lowercased
 *   DURATION  as written: 1h30m, -10ms, 2mo3d, P1Y2M, PT5S, P2W,
 *             P0001-02-03T04:05:06; already checked with sm_cql_duration_parse()
 * Which literal kinds suit which column types is the executor's call
 * (Cassandra takes a STRING for a timestamp, an INT for a float, ...).
 */
enum sm_cql_lit_kind {
	SM_CQL_LIT_INT,
	SM_CQL_LIT_FLOAT,
	SM_CQL_LIT_STRING,
	SM_CQL_LIT_BLOB,
	SM_CQL_LIT_BOOL,
	SM_CQL_LIT_NULL,
	SM_CQL_LIT_UUID,
	SM_CQL_LIT_DURATION,
};

struct sm_cql_term {
	enum sm_cql_term_kind kind;
	enum sm_cql_lit_kind lit; /* LITERAL */
	const char *text;	  /* see the kinds; NUL-terminated */
	uint32_t len;		  /* bytes of text */
	const char *ks;		  /* FUNCTION: its keyspace (system.now()), else NULL */
	unsigned bind;		  /* BIND: index into the statement's binds */
	struct sm_cql_term **elems;
	unsigned nelems;
	const char **names; /* UDT: the field names, one per element */
	struct sm_cql_span src;
};

/* ---- bind markers ---- */

/*
 * What a bind marker's value is, relative to its column; together with the
 * column's type this gives the receiver a prepared statement reports and the
 * type a bound value must have.
 *
 *   VALUE      the column's type: c = ?, c < ?, c IN (?, ?), INSERT VALUES,
 *              SET c = ?, IF c = ?, and each column of (a, b) > (?, ?)
 *   IN_LIST    c IN ?: a list of the column's type
 *   KEY        m[?] (a map key; an int index for a list), CONTAINS KEY ?, a
 *              key in a map literal
 *   ELEM       m[k] = ?, IF l[i] = ?, CONTAINS ?, an element of a list or set
 *              literal, a value in a map literal
 *   ADD        c = c + ?, c = ? + c, c += ?: counter: bigint; list, set or
 *              map: the column's type
 *   SUB        c = c - ?, c -= ?: counter: bigint; list, set: the column's
 *              type; map: a set of its keys
 *   SUB_ELEM   an element of a literal in c = c - {..}: a list or set
 *              element, or a map key
 *   TUPLE      (a, b) op ?, or each ? in (a, b) IN (?, ?): a tuple of the
 *              columns' types (columns/ncolumns)
 *   TUPLE_IN   (a, b) IN ?: a list of such tuples
 *   TOKEN      token(a, b) op ?: bigint
 *   TTL, TIMESTAMP, TIMEOUT, LIMIT, PER_PARTITION_LIMIT
 *              USING TTL ? (int), USING TIMESTAMP ? (bigint), USING TIMEOUT ?
 *              (duration), LIMIT ? and PER PARTITION LIMIT ? (int)
 *   FIELD      c.field = ?: the type of the field of user type column c
 *   FUNCTION_ARG  an argument of the call parent; column is the receiver
 *              of the call's result when there is one (c = blobAsText(?))
 *   NESTED     deeper inside literals, tuples or calls, or a field of a
 *              user type literal: parent is the innermost of them; the
 *              executor works out the type from the outermost one, root,
 *              whose place root_role describes (or refuses)
 */
enum sm_cql_bind_role {
	SM_CQL_BIND_VALUE,
	SM_CQL_BIND_IN_LIST,
	SM_CQL_BIND_KEY,
	SM_CQL_BIND_ELEM,
	SM_CQL_BIND_ADD,
	SM_CQL_BIND_SUB,
	SM_CQL_BIND_SUB_ELEM,
	SM_CQL_BIND_TUPLE,
	SM_CQL_BIND_TUPLE_IN,
	SM_CQL_BIND_TOKEN,
	SM_CQL_BIND_TTL,
	SM_CQL_BIND_TIMESTAMP,
	SM_CQL_BIND_TIMEOUT,
	SM_CQL_BIND_LIMIT,
	SM_CQL_BIND_PER_PARTITION_LIMIT,
	SM_CQL_BIND_FIELD,
	SM_CQL_BIND_FUNCTION_ARG,
	SM_CQL_BIND_NESTED,
	SM_CQL_BIND_JSON, /* INSERT JSON ?: the object's text */
};

/* The part of a statement a bind marker is in. */
enum sm_cql_clause {
	SM_CQL_CLAUSE_SELECT, /* a selector's function argument */
	SM_CQL_CLAUSE_WHERE,
	SM_CQL_CLAUSE_IF,
	SM_CQL_CLAUSE_VALUES, /* INSERT ... VALUES */
	SM_CQL_CLAUSE_SET,    /* UPDATE ... SET */
	SM_CQL_CLAUSE_DELETE, /* DELETE m[?] FROM */
	SM_CQL_CLAUSE_OPTION, /* USING, LIMIT, PER PARTITION LIMIT */
};

/*
 * Relation and condition operators. The first seven have the values of enum
 * sm_cond_op (lib/store), so an IF condition's op converts by a cast.
 */
enum sm_cql_op {
	SM_CQL_OP_EQ,
	SM_CQL_OP_NE,
	SM_CQL_OP_LT,
	SM_CQL_OP_LE,
	SM_CQL_OP_GT,
	SM_CQL_OP_GE,
	SM_CQL_OP_IN,
	SM_CQL_OP_CONTAINS,
	SM_CQL_OP_CONTAINS_KEY,
};

/*
 * One bind marker, in order of appearance in the text (that order is the
 * index, which is what drivers bind by). A name that occurs twice makes two
 * markers, as in Cassandra.
 */
struct sm_cql_bind {
	const char *name; /* :name (lowercased unless quoted), NULL for ? */
	enum sm_cql_bind_role role;
	enum sm_cql_clause clause;
	enum sm_cql_op op;    /* of the relation or condition; EQ elsewhere */
	const char *column;   /* the receiving column, NULL when there is none */
	const char *field;    /* FIELD (and root_role FIELD): the field of column */
	const char **columns; /* TUPLE, TUPLE_IN, TOKEN: the relation's columns */
	unsigned ncolumns;
	unsigned stmt;			/* BATCH: index of the statement it is in, else 0 */
	const struct sm_cql_term *term; /* the marker */
	const struct sm_cql_term
		*parent; /* the literal, tuple or call it is directly in, or NULL */
	const struct sm_cql_term *root;	   /* the outermost one, or NULL */
	enum sm_cql_bind_role root_role; /* what root is, as role is for a marker */
};

/* ---- clauses ---- */

/*
 * A WHERE relation or an IF condition.
 *   COLUMN  cols[0] op value; for IN, either value is a bind marker (IN ?)
 *           or in/nin list the terms (IN (a, b), possibly empty)
 *   ELEM    cols[0][key] op value (WHERE m['k'] = 1, IF m['k'] = 1, IF l[0] IN ..)
 *   TUPLE   (cols...) op value: a TUPLE term or a bind marker; for IN as
 *           for COLUMN, each in[] a TUPLE term or a bind marker
 *   TOKEN   token(cols...) op value (=, <, <=, >, >=)
 * IF conditions are COLUMN or ELEM with EQ .. IN.
 */
enum sm_cql_rel_kind {
	SM_CQL_REL_COLUMN,
	SM_CQL_REL_ELEM,
	SM_CQL_REL_TUPLE,
	SM_CQL_REL_TOKEN,
};

struct sm_cql_relation {
	enum sm_cql_rel_kind kind;
	enum sm_cql_op op;
	const char **cols;
	unsigned ncols;
	struct sm_cql_term *key; /* ELEM */
	struct sm_cql_term *value;
	struct sm_cql_term **in;
	unsigned nin;
	struct sm_cql_span src;
};

/* USING TTL / TIMESTAMP / TIMEOUT (Scylla): INT or DURATION literals or bind markers, NULL when absent. */
struct sm_cql_attrs {
	struct sm_cql_term *ttl;
	struct sm_cql_term *timestamp;
	struct sm_cql_term *timeout;
};

/* IF clause of INSERT, UPDATE and DELETE. */
enum sm_cql_if {
	SM_CQL_IF_NONE,
	SM_CQL_IF_NOT_EXISTS,
	SM_CQL_IF_EXISTS,
	SM_CQL_IF_CONDS,
};

/* A column and a direction: ORDER BY, CLUSTERING ORDER BY. */
struct sm_cql_order {
	const char *col;
	bool desc;
};

/* A key and a value as text (a map option entry: constants' texts). */
struct sm_cql_kv {
	const char *key;
	const char *value;
};

/*
 * A WITH property: key lowercased; value is a constant's text (strings
 * unescaped, numbers as written, true/false) or, for a map, its source text
 * ("{'class': 'LZ4Compressor'}") with its entries in map/nmap.
 */
struct sm_cql_prop {
	const char *key;
	const char *value;
	struct sm_cql_kv *map; /* NULL unless the value is a map */
	unsigned nmap;
};

/* ---- statements ---- */

enum sm_cql_stmt_kind {
	SM_CQL_USE,
	SM_CQL_CREATE_KEYSPACE,
	SM_CQL_DROP_KEYSPACE,
	SM_CQL_CREATE_TABLE,
	SM_CQL_ALTER_TABLE,
	SM_CQL_ALTER_KEYSPACE,
	SM_CQL_DROP_TABLE,
	SM_CQL_TRUNCATE,
	SM_CQL_CREATE_TYPE,
	SM_CQL_ALTER_TYPE,
	SM_CQL_DROP_TYPE,
	SM_CQL_CREATE_INDEX,
	SM_CQL_DROP_INDEX,
	SM_CQL_CREATE_VIEW,
	SM_CQL_DROP_VIEW,
	SM_CQL_SELECT,
	SM_CQL_INSERT,
	SM_CQL_UPDATE,
	SM_CQL_DELETE,
	SM_CQL_BATCH,
};

struct sm_cql_use {
	const char *ks;
};

struct sm_cql_create_keyspace {
	const char *ks;
	bool if_not_exists;
	struct sm_cql_kv *replication; /* the replication map's entries, 'class' included */
	unsigned nreplication;
	bool durable_writes;	   /* true unless durable_writes = false */
	const struct sm_cql_prop *tablets; /* tablets = {...}; NULL: not given */
	struct sm_cql_prop *props; /* every property, replication and durable_writes included */
	unsigned nprops;
};

struct sm_cql_drop_keyspace {
	const char *ks;
	bool if_exists;
};

/* A column definition; type is normalized CQL type syntax for sm_type_parse() ("map<text, int>"). */
struct sm_cql_coldef {
	const char *name;
	const char *type;
	bool is_static;
	struct sm_cql_span src;
};

/*
 * CREATE TABLE. The primary key comes out as pk/ck whether it was given on a
 * column or as PRIMARY KEY ((a, b), c); exactly one of the two is required.
 */
struct sm_cql_create_table {
	struct sm_cql_qname table;
	bool if_not_exists;
	struct sm_cql_coldef *cols; /* in definition order */
	unsigned ncols;
	const char **pk;
	unsigned npk;
	const char **ck;
	unsigned nck;
	struct sm_cql_order *clustering_order; /* WITH CLUSTERING ORDER BY (...) */
	unsigned nclustering_order;
	bool compact_storage;
	struct sm_cql_prop *props; /* other WITH options, as given */
	unsigned nprops;
	bool has_default_ttl;
	int32_t default_ttl; /* seconds; from default_time_to_live, also in props */
};

/*
 * ALTER TABLE, as ScyllaDB's grammar has it (cql3/Cql.g alterTableStatement):
 *   ADD c type [static] | ADD (c type [static], ...)
 *   DROP c | DROP (c, ...) [USING TIMESTAMP t]
 *   ALTER c TYPE type
 *   RENAME a TO b [AND c TO d ...]
 *   WITH property = value [AND ...]
 */
enum sm_cql_alter_table_kind {
	SM_CQL_ALTER_ADD,
	SM_CQL_ALTER_DROP,
	SM_CQL_ALTER_TYPE_OF,
	SM_CQL_ALTER_RENAME,
	SM_CQL_ALTER_WITH,
};

struct sm_cql_alter_table {
	struct sm_cql_qname table;
	enum sm_cql_alter_table_kind kind;
	struct sm_cql_coldef *cols; /* ADD; DROP (names only); ALTER (one, with its type) */
	unsigned ncols;
	const char **from; /* RENAME */
	const char **to;
	unsigned nrenames;
	struct sm_cql_prop *props; /* WITH */
	unsigned nprops;
	bool has_default_ttl;
	int32_t default_ttl;
	struct sm_cql_term *timestamp; /* DROP ... USING TIMESTAMP, or NULL */
	bool view; /* ALTER MATERIALIZED VIEW name WITH ... */
};

/* ALTER KEYSPACE ks WITH property = value [AND ...] */
struct sm_cql_alter_keyspace {
	const char *ks;
	struct sm_cql_kv *replication; /* NULL: not given */
	unsigned nreplication;
	bool has_durable_writes;
	bool durable_writes;
	const struct sm_cql_prop *tablets; /* tablets = {...}; NULL: not given */
	struct sm_cql_prop *props;
	unsigned nprops;
};

/* DROP TABLE, TRUNCATE and DROP TYPE (table names the type). */
struct sm_cql_table_ref {
	struct sm_cql_qname table;
	bool if_exists;
};

/* CREATE TYPE [IF NOT EXISTS] [ks.]name (field type, ...) */
struct sm_cql_create_type {
	struct sm_cql_qname name;
	bool if_not_exists;
	const char **fields;
	const char **types; /* normalized CQL type syntax, as sm_cql_coldef's */
	unsigned nfields;
};

/*
 * CREATE INDEX [IF NOT EXISTS] [name] ON [ks.]t (target): target is col,
 * keys(col), values(col), entries(col), full(col), or (pk, ...), col for a
 * local index.
 */
struct sm_cql_create_index {
	struct sm_cql_qname table;
	const char *name; /* NULL: the default name */
	bool if_not_exists;
	const char *column;
	const char *fn;		/* NULL, or "keys", "values", "entries", "full" */
	const char **local_pk;	/* a local index's partition key columns */
	unsigned nlocal_pk;
};

/*
 * CREATE MATERIALIZED VIEW [IF NOT EXISTS] [ks.]v AS SELECT * | c, ...
 * FROM [ks.]t WHERE c IS NOT NULL [AND ...] PRIMARY KEY (...) [WITH ...]:
 * key holds the view's PRIMARY KEY and WITH options (its cols are unused).
 */
struct sm_cql_create_view {
	struct sm_cql_qname view;
	struct sm_cql_qname base;
	bool if_not_exists;
	bool star;
	const char **cols; /* the selected columns, when not star */
	unsigned ncols;
	const char **not_null; /* the WHERE clause's IS NOT NULL columns, in order */
	unsigned nnot_null;
	struct sm_cql_create_table key;
};

/* ALTER TYPE name ADD f type | ALTER f TYPE type | RENAME a TO b [AND c TO d ...] */
enum sm_cql_alter_type_kind {
	SM_CQL_ALTER_TYPE_ADD,
	SM_CQL_ALTER_TYPE_TYPE,
	SM_CQL_ALTER_TYPE_RENAME,
};

struct sm_cql_alter_type {
	struct sm_cql_qname name;
	enum sm_cql_alter_type_kind kind;
	const char *field; /* ADD, TYPE */
	const char *type;  /* ADD, TYPE */
	const char **from; /* RENAME */
	const char **to;
	unsigned nrenames;
};

/*
 * One selected expression. COLUMN, WRITETIME and TTL name a column; COUNT is
 * COUNT(*) or COUNT(1); FUNCTION is any other call (count(c), token(pk),
 * blobAsText(c), ...) over selector arguments; TERM is a literal or bind
 * marker, as a function argument. src is the expression's text, from which
 * a server derives result column names ("writetime(c)", "count").
 */
enum sm_cql_sel_kind {
	SM_CQL_SEL_COLUMN,
	SM_CQL_SEL_WRITETIME,
	SM_CQL_SEL_TTL,
	SM_CQL_SEL_COUNT,
	SM_CQL_SEL_FUNCTION,
	SM_CQL_SEL_TERM,
	SM_CQL_SEL_CAST, /* CAST(args[0] AS type) */
	SM_CQL_SEL_POSTFIX, /* args[0] then .fields or [sub]: m['1']['a'], m[1].a, t.a[1] */
};

struct sm_cql_selector {
	enum sm_cql_sel_kind kind;
	const char *column;	      /* COLUMN, WRITETIME, TTL */
	const char *field;	      /* COLUMN, WRITETIME, TTL: column.field, or NULL */
	const char **fields;	      /* column.field.field...: field is fields[0] */
	unsigned nfields;
	const char *ks;		      /* FUNCTION: keyspace or NULL */
	const char *name;	      /* FUNCTION */
	struct sm_cql_selector *args; /* FUNCTION */
	unsigned nargs;
	struct sm_cql_term *term; /* TERM */
	const char *type;	  /* CAST: normalized type syntax */
	/* COLUMN: c[sub] (an element of a map or set) or c[sub..sub_to] (a slice, either end NULL) */
	bool subscript, slice;
	struct sm_cql_term *sub, *sub_to;
	const char *alias; /* AS alias, or NULL */
	struct sm_cql_span src;
};

struct sm_cql_select {
	struct sm_cql_qname table;
	bool json; /* SELECT JSON: one [json] column of the selection */
	bool distinct;
	bool star; /* SELECT *: sels is empty */
	struct sm_cql_selector *sels;
	unsigned nsels;
	struct sm_cql_relation *where;
	unsigned nwhere;
	const char **group_by; /* GROUP BY columns, in the order given */
	unsigned ngroup_by;
	struct sm_cql_order *order;
	unsigned norder;
	struct sm_cql_term *per_partition_limit; /* INT literal or bind marker, or NULL */
	struct sm_cql_term *limit;
	bool allow_filtering;
	bool bypass_cache;	     /* Scylla */
	struct sm_cql_term *timeout; /* Scylla USING TIMEOUT */
};

struct sm_cql_insert {
	struct sm_cql_qname table;
	const char **cols;
	struct sm_cql_term **values; /* one per column */
	unsigned ncols;
	struct sm_cql_term *json; /* INSERT JSON: the object's text (a string or bind marker) */
	bool json_unset;	  /* DEFAULT UNSET: columns it lacks are left alone, not nulled */
	bool if_not_exists;
	struct sm_cql_attrs attrs;
};

/*
 * An UPDATE assignment, mapping to enum sm_cell_op_kind once the column's
 * type is known:
 *   SET       c = v
 *   ADD       c = c + v, c += v: counter add, list append, set add, map put
 *   PREPEND   c = v + c: list prepend
 *   SUB       c = c - v, c -= v: counter subtract, list/set remove, map remove keys
 *   SET_ELEM  c[key] = v: map put, list set by index
 */
enum sm_cql_assign_op {
	SM_CQL_ASSIGN_SET,
	SM_CQL_ASSIGN_ADD,
	SM_CQL_ASSIGN_PREPEND,
	SM_CQL_ASSIGN_SUB,
	SM_CQL_ASSIGN_SET_ELEM,
	SM_CQL_ASSIGN_SET_FIELD, /* c.field = v */
};

struct sm_cql_assign {
	enum sm_cql_assign_op op;
	const char *col;
	const char *field; /* SET_FIELD */
	struct sm_cql_term *key; /* SET_ELEM */
	struct sm_cql_term *value;
	struct sm_cql_span src;
};

struct sm_cql_update {
	struct sm_cql_qname table;
	struct sm_cql_attrs attrs;
	struct sm_cql_assign *set;
	unsigned nset;
	struct sm_cql_relation *where;
	unsigned nwhere;
	enum sm_cql_if if_kind; /* NONE, EXISTS or CONDS */
	struct sm_cql_relation *conds;
	unsigned nconds;
};

/* DELETE's column list: a whole column, one element (key set) of a map or list, or a field. */
struct sm_cql_delete_col {
	const char *col;
	struct sm_cql_term *key;
	const char *field;
};

struct sm_cql_delete {
	struct sm_cql_delete_col *cols; /* none: delete rows */
	unsigned ncols;
	struct sm_cql_qname table;
	struct sm_cql_attrs attrs; /* TIMESTAMP and TIMEOUT only */
	struct sm_cql_relation *where;
	unsigned nwhere;
	enum sm_cql_if if_kind;
	struct sm_cql_relation *conds;
	unsigned nconds;
};

enum sm_cql_stmt_batch_kind {
	SM_CQL_STMT_BATCH_LOGGED,
	SM_CQL_STMT_BATCH_UNLOGGED,
	SM_CQL_STMT_BATCH_COUNTER,
};

struct sm_cql_stmt;

struct sm_cql_batch_ast {
	enum sm_cql_stmt_batch_kind kind;
	struct sm_cql_attrs attrs;  /* TIMESTAMP and TIMEOUT only */
	struct sm_cql_stmt **stmts; /* INSERT, UPDATE and DELETE */
	unsigned nstmts;
};

/*
 * A parsed statement. binds lists every bind marker of the statement; in a
 * batch, each inner statement's binds/nbinds is the slice of the batch's
 * array for its own markers (their indexes stay the batch's).
 */
struct sm_cql_stmt {
	enum sm_cql_stmt_kind kind;
	struct sm_cql_bind *binds;
	unsigned nbinds;
	struct sm_cql_span src; /* the statement, without a trailing ';' */
	union {
		struct sm_cql_use use;
		struct sm_cql_create_keyspace create_keyspace;
		struct sm_cql_drop_keyspace drop_keyspace;
		struct sm_cql_create_table create_table;
		struct sm_cql_alter_table alter_table;
		struct sm_cql_alter_keyspace alter_keyspace;
		struct sm_cql_table_ref drop_table;
		struct sm_cql_table_ref truncate;
		struct sm_cql_create_type create_type;
		struct sm_cql_alter_type alter_type;
		struct sm_cql_table_ref drop_type;
		struct sm_cql_create_index create_index;
		struct sm_cql_table_ref drop_index; /* table: [ks.]index name */
		struct sm_cql_create_view create_view;
		struct sm_cql_table_ref drop_view;
		struct sm_cql_select select;
		struct sm_cql_insert insert;
		struct sm_cql_update update;
		struct sm_cql_delete del;
		struct sm_cql_batch_ast batch;
	};
	void *arena; /* private: the memory of the whole tree (NULL in a batch's inner statements) */
};

/*
 * Parse one CQL statement from @text (@len bytes, no NUL needed; the text may
 * span lines, hold -- // and block comments, and end with semicolons).
 * Returns 0 and *@out (release it with sm_cql_stmt_free()), or a negative
 * errno from the list at the top of this header with a message in @err
 * (@errlen bytes, always NUL-terminated when @errlen > 0); *@out is NULL on
 * failure. Never reads past @len and never crashes on malformed input.
 */
int
sm_cql_parse(const char *text, size_t len, struct sm_cql_stmt **out, char *err, size_t errlen);

/* Release a statement from sm_cql_parse() and everything in it; NULL is a no-op. */
void
sm_cql_stmt_free(struct sm_cql_stmt *s);

/*
 * The pk_indexes of a prepared statement: for each partition key column
 * @pk[i] (in key order, names as sm_table stores them), the index of the bind
 * marker that gives it its whole value: the marker in INSERT ... VALUES, or
 * in a WHERE "pk = ?" of UPDATE, DELETE or SELECT. Returns true and fills
 * @idx[0..@npk) when every column has one, false otherwise (and for batches,
 * DDL and @npk == 0), which the PREPARED result reports as no pk_indexes.
 */
bool
sm_cql_pk_indexes(const struct sm_cql_stmt *s, const char *const *pk, unsigned npk, uint16_t *idx);

/*
 * Convert a duration's text, as CQL writes it, into the three fields of
 * the duration type: the standard form ("1y2mo3w4d5h6m7s8ms9us10ns", units
 * any case, each at most once and in this order, µs for us), the ISO 8601
 * forms "P1Y2M3DT4H5M6S", "P3W" and "P0001-02-03T04:05:06", and a leading
 * '-' for all three. Returns 0, or -EINVAL with Cassandra's message in @err
 * (bad syntax, units out of order or repeated, a total beyond int32 months
 * or days or int64 nanoseconds).
 */
int
sm_cql_duration_parse(const char *text, size_t len, int32_t *months, int32_t *days, int64_t *nanos,
		      char *err, size_t errlen);

#endif /* SM_CQL_PARSE_H */
