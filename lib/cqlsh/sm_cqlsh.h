/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_CQLSH_H
#define SM_CQLSH_H

/*
 * lib/cqlsh: the CQL shell of `shardmark cql`, everything but the terminal.
 *
 * It reads and prints as cqlsh 6 does (scylladb/scylla-cqlsh bin/cqlsh.py
 * and pylib/cqlshlib/formatting.py are the reference): statements end with
 * ';' (shell commands such as EXPAND or DESCRIBE with the line), results
 * print as cqlsh's table (" k | v", "---+---", values right-aligned,
 * "(N rows)") or, with EXPAND ON, as "@ Row N" records; values print as
 * the Python driver's types do in cqlsh (True, 0x00ff, 1.5, 'it''s' inside
 * collections, 2026-12-01 10:00:00.000000+0000); errors read
 * "InvalidRequest: Error from server: code=2200 [Invalid query]
 * message=\"...\"", prefixed with "<stdin>:LINE:" when not on a TTY.
 * DESCRIBE is built here from system_schema, in the Python driver's text
 * (cassandra/metadata.py export_as_string), because shardmark's server has
 * no server-side DESCRIBE.
 *
 * The session talks to the server through a backend (struct
 * sm_cqlsh_backend): one synchronous query at a time, the result copied
 * out (struct sm_cqlsh_result), so the engine is plain sequential code and
 * the unit tests give it canned answers. app/shardmark/cqlsh.c provides
 * the backend over lib/stress's CQL client (sm_cqlc) and the terminal.
 *
 * Every function here runs in one thread; nothing is shared.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sm_cql_proto.h"
#include "sm_stress_cql.h"

/* ---- results ---- */

enum sm_cqlsh_kind {
	SM_CQLSH_FAILED,	/* no answer: err and message say why */
	SM_CQLSH_ERROR,		/* an ERROR response */
	SM_CQLSH_VOID,		/* RESULT Void */
	SM_CQLSH_ROWS,		/* RESULT Rows */
	SM_CQLSH_SET_KEYSPACE,	/* RESULT Set_keyspace: keyspace */
	SM_CQLSH_SCHEMA_CHANGE, /* RESULT Schema_change */
	SM_CQLSH_OTHER,		/* RESULT Prepared, or anything else with no rows */
};

/* A result column: its name and its type as the raw [option] bytes. */
struct sm_cqlsh_col {
	const char *ks, *table, *name;
	struct sm_bytes type;
};

/*
 * A response copied out of the receive buffers: it owns every byte it
 * points to (one allocation, sm_cqlsh_result_free()).
 */
struct sm_cqlsh_result {
	enum sm_cqlsh_kind kind;
	int err; /* SM_CQLSH_FAILED: -errno */
	/* SM_CQLSH_ERROR: the code and the fields its body carries */
	int32_t code;
	const char *message; /* also SM_CQLSH_FAILED's reason */
	uint16_t consistency;
	int32_t required, alive, received, blockfor, numfailures;
	bool data_present;
	const char *write_type; /* "SIMPLE", ... or NULL */
	const char *err_keyspace, *err_table;
	/* SM_CQLSH_SET_KEYSPACE */
	const char *keyspace;
	/* SM_CQLSH_ROWS */
	uint32_t ncols, nrows;
	const struct sm_cqlsh_col *cols;
	const struct sm_bytes *cells; /* nrows x ncols, row-major; p NULL for null */
	bool has_more;
	struct sm_bytes paging_state;
	/* warnings the server attached */
	uint16_t nwarnings;
	const char *const *warnings;
};

/*
 * Copy the decoded response @resp (ERROR or RESULT) into a new result.
 * Returns 0 with *@out set, -ENOMEM, or -EPROTO for an opcode that answers
 * no request.
 */
int
sm_cqlsh_result_from_response(const struct sm_cql_response *resp, struct sm_cqlsh_result **out);

/*
 * The same for a request's completion in lib/stress's client: a failed
 * request (SM_CQLC_FAILED) becomes SM_CQLSH_FAILED with @why as message.
 */
int
sm_cqlsh_result_from_cqlc(const struct sm_cqlc_result *r, const char *why,
			  struct sm_cqlsh_result **out);

/* A result for a request that got no answer (-errno @err, @why in words); NULL without memory. */
struct sm_cqlsh_result *
sm_cqlsh_result_failed(int err, const char *why);

void
sm_cqlsh_result_free(struct sm_cqlsh_result *r);

/* The index of the column called @name, or -1. */
int
sm_cqlsh_result_col(const struct sm_cqlsh_result *r, const char *name);

/* ---- text ---- */

/* A growable string (sm_malloc); err sticks at -ENOMEM after a failed growth. */
struct sm_cqlsh_str {
	char *p; /* NUL-terminated once anything was written */
	size_t len, cap;
	int err;
};

void
sm_cqlsh_str_init(struct sm_cqlsh_str *s);
void
sm_cqlsh_str_release(struct sm_cqlsh_str *s);
void
sm_cqlsh_str_reset(struct sm_cqlsh_str *s);
void
sm_cqlsh_str_putn(struct sm_cqlsh_str *s, const char *p, size_t n);
void
sm_cqlsh_str_puts(struct sm_cqlsh_str *s, const char *p);
void
sm_cqlsh_str_printf(struct sm_cqlsh_str *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The text, "" when nothing was written. */
const char *
sm_cqlsh_str_get(const struct sm_cqlsh_str *s);

/* Columns a UTF-8 string takes on a terminal (wide CJK 2, combining marks 0), as wcwidth does. */
size_t
sm_cqlsh_display_width(const char *s, size_t len);

/* ---- values ---- */

struct sm_cqlsh_fmt {
	bool local_time;      /* timestamps in the local zone (cqlsh with $TZ); else UTC */
	int float_precision;  /* cqlsh's display_float_precision; 0: 5 */
	int double_precision; /* display_double_precision; 0: 5 */
};

/*
 * Append value @v (p NULL for null) of the type whose raw [option] is @type
 * to @out as cqlsh prints it: null, 42, True, 1.5, 0xcafe, text as is (with
 * backslash and control characters escaped), timestamps as
 * 2026-12-01 10:00:00.000000+0000, dates 2026-12-01, times
 * 10:00:00.000000000, durations 1y2mo3d4h, inet 127.0.0.1, collections
 * [1, 2], {1, 2}, {'a': 1}, tuples (1, 'a'), user types {a: 1}. @quoted:
 * the value is inside a collection (text, inet and timestamps get quotes).
 * Returns the display width of what was appended. A value that does not
 * decode as its type prints as its bytes, 0x....
 */
size_t
sm_cqlsh_format_value(struct sm_cqlsh_str *out, struct sm_bytes type, struct sm_bytes v,
		      bool quoted, const struct sm_cqlsh_fmt *f);

/* ---- layout ---- */

/* One page of a result, formatted: names, then nrows x ncols cells. */
struct sm_cqlsh_cell {
	char *text;
	size_t width;
};

struct sm_cqlsh_page {
	uint32_t ncols, nrows;
	struct sm_cqlsh_cell *names;
	struct sm_cqlsh_cell *cells;
};

/* Format every name and cell of @r. 0 or -ENOMEM. */
int
sm_cqlsh_page_build(struct sm_cqlsh_page *pg, const struct sm_cqlsh_result *r,
		    const struct sm_cqlsh_fmt *f);
void
sm_cqlsh_page_release(struct sm_cqlsh_page *pg);

/*
 * cqlsh's print_formatted_result: the header (" a | b", then "---+---")
 * when @header, every row with its values right-aligned, and an empty
 * line after the rows when @tty. With no rows: the header and an empty line.
 */
void
sm_cqlsh_print_table(FILE *f, const struct sm_cqlsh_page *pg, bool header, bool tty);

/* cqlsh's EXPAND ON layout: "@ Row N" (N from @first_row + 1), a rule, "name | value" lines. */
void
sm_cqlsh_print_vertical(FILE *f, const struct sm_cqlsh_page *pg, uint64_t first_row);

/* Python's cmd.Cmd.columnize(): @n words in as few rows as fit in @width columns. */
void
sm_cqlsh_columnize(FILE *f, const char *const *words, size_t n, size_t width);

/* ---- errors ---- */

/*
 * The text cqlsh prints for a failed statement, class name first, as the
 * Python driver's exceptions read: "InvalidRequest: Error from server:
 * code=2200 [Invalid query] message=\"...\"", "SyntaxException: line 1:0
 * ...", "AlreadyExists: Keyspace 'ks' already exists", "WriteTimeout: ...
 * info={...}". A FAILED result reads "ConnectionException: <why>".
 */
void
sm_cqlsh_error_text(struct sm_cqlsh_str *out, const struct sm_cqlsh_result *r);

/* ---- statements ---- */

/*
 * Input split into statements as cqlsh does: a statement ends at ';'
 * outside strings ('...', "...", $$...$$) and comments (--, //, / * * /),
 * or at the end of its line when its first word is a shell command that
 * needs no ';' (DESCRIBE, EXPAND, PAGING, CONSISTENCY, SERIAL, SOURCE,
 * EXIT, QUIT, HELP, SHOW, ...). Lines are scanned once, whatever their
 * number: the lexer keeps its state between lines.
 */
struct sm_cqlsh_splitter {
	struct sm_cqlsh_str text;    /* the statement being read, comments removed */
	struct sm_cqlsh_str pending; /* complete statements, NUL-separated */
	size_t npending, pending_pos;
	int state;	  /* lexer state, private */
	bool first_word;  /* the first word of the statement is known */
	bool line_ended;  /* it is one of the commands that end with their line */
	char word[16];	  /* its first word so far, lower case */
	size_t word_len;
	bool word_done;
};

void
sm_cqlsh_splitter_init(struct sm_cqlsh_splitter *sp);
void
sm_cqlsh_splitter_release(struct sm_cqlsh_splitter *sp);

/* Scan one line (its newline not included). 0, or -ENOMEM. */
int
sm_cqlsh_splitter_line(struct sm_cqlsh_splitter *sp, const char *line, size_t len);

/*
 * The next complete statement (without its ';', trimmed), or NULL. Valid
 * until the next call of any splitter function.
 */
const char *
sm_cqlsh_splitter_next(struct sm_cqlsh_splitter *sp);

/* True when a statement has begun and is not complete yet. */
bool
sm_cqlsh_splitter_partial(const struct sm_cqlsh_splitter *sp);

/* Forget the statement being read (Ctrl-C on a continuation line). */
void
sm_cqlsh_splitter_cancel(struct sm_cqlsh_splitter *sp);

/* ---- DESCRIBE ---- */

/*
 * CREATE KEYSPACE for row @row of a system_schema.keyspaces result, as the
 * Python driver writes it: "CREATE KEYSPACE ks WITH replication = {'class':
 * 'SimpleStrategy', 'replication_factor': '1'}  AND durable_writes = true;".
 * @scylla_ks: the keyspace's system_schema.scylla_keyspaces rows (NULL or
 * none: a vnode keyspace); a row adds ScyllaDB's " AND tablets = {...}".
 */
int
sm_cqlsh_describe_keyspace(struct sm_cqlsh_str *out, const struct sm_cqlsh_result *keyspaces,
			   uint32_t row, const struct sm_cqlsh_result *scylla_ks);

/*
 * CREATE TABLE for row @row of a system_schema.tables result, its columns
 * taken from @columns (rows of system_schema.columns; others are skipped),
 * as the driver's TableMetadata.export_as_string() formats it (one column
 * a line, PRIMARY KEY, CLUSTERING ORDER BY, the options sorted).
 * 0, -EINVAL (the rows lack a column DESCRIBE needs) or -ENOMEM.
 */
int
sm_cqlsh_describe_table(struct sm_cqlsh_str *out, const struct sm_cqlsh_result *tables,
			uint32_t row, const struct sm_cqlsh_result *columns);

/*
 * After a table's CREATE TABLE: "CREATE INDEX name ON ks.table (target);"
 * on a line each for the rows of @indexes (system_schema.indexes) naming
 * @table, by index name, as the driver's export_as_string() adds them.
 * 0, -EINVAL (the rows lack a column it needs) or -ENOMEM.
 */
int
sm_cqlsh_describe_indexes(struct sm_cqlsh_str *out, const struct sm_cqlsh_result *indexes,
			  const char *ks, const char *table);

/* A CQL name as the driver protects it: as is when lower-case and not reserved, else "quoted". */
void
sm_cqlsh_protect_name(struct sm_cqlsh_str *out, const char *name);

/* ---- the session ---- */

/* What the session asks the server: one statement, or one more page of it. */
struct sm_cqlsh_query {
	const char *text;
	uint16_t consistency, serial_consistency;
	int32_t page_size; /* <= 0: no paging */
	struct sm_bytes paging_state;
};

struct sm_cqlsh_backend {
	/*
	 * Run @q and wait for the answer: 0 with *@res set (an ERROR response
	 * is a result too), or -errno when no answer can come (the connection
	 * broke, the shell is stopping), *@res then a FAILED result or NULL.
	 */
	int (*query)(void *ctx, const struct sm_cqlsh_query *q, struct sm_cqlsh_result **res);
	/* On a TTY between pages: wait for the user ("---MORE---"); <0 stops the output. */
	int (*more)(void *ctx);
	void *ctx;
};

struct sm_cqlsh_opts {
	bool tty;	      /* interactive: prompts, no line numbers in errors */
	const char *name;     /* input name in error lines: "<stdin>" or the -f file */
	bool stop_on_error;   /* -e, -f, non-TTY: stop at the first error */
	const char *username; /* shown in the prompt, "user@cqlsh> " */
	FILE *out, *err;
	struct sm_cqlsh_fmt fmt;
};

struct sm_cqlsh;

/* A session over @be; NULL without memory. */
struct sm_cqlsh *
sm_cqlsh_new(const struct sm_cqlsh_opts *o, const struct sm_cqlsh_backend *be);

void
sm_cqlsh_free(struct sm_cqlsh *sh);

/*
 * One input line: complete statements run at once. Returns 0 to go on, 1
 * when the session is over (EXIT, QUIT, or an error with stop_on_error),
 * or -errno when the backend can no longer answer (the message is printed).
 */
int
sm_cqlsh_line(struct sm_cqlsh *sh, const char *line, size_t len);

/* The end of the input: an incomplete statement is an error ("Incomplete statement at end of file"). */
int
sm_cqlsh_eof(struct sm_cqlsh *sh);

/* Run @text as if typed, e.g. -e STATEMENT (a missing ';' is added). Returns as sm_cqlsh_line(). */
int
sm_cqlsh_run(struct sm_cqlsh *sh, const char *text);

/*
 * Read and run the file @path line by line under its own name; with
 * @stop_on_error the first error ends it. Returns as sm_cqlsh_line(), or
 * -errno when the file cannot be read (after printing cqlsh's message).
 */
int
sm_cqlsh_run_file(struct sm_cqlsh *sh, const char *path, bool stop_on_error);

/* The prompt for the next line: "cqlsh> ", "cqlsh:ks> ", or a continuation "   ... ". */
const char *
sm_cqlsh_prompt(struct sm_cqlsh *sh);

/* Forget a partly typed statement (Ctrl-C at a continuation prompt). */
void
sm_cqlsh_cancel(struct sm_cqlsh *sh);

/* True once any statement failed (cqlsh's statement_error). */
bool
sm_cqlsh_failed(const struct sm_cqlsh *sh);

/* The keyspace in use, or NULL. */
const char *
sm_cqlsh_keyspace(const struct sm_cqlsh *sh);

/* A consistency level by name (case-insensitive), or -1. */
int
sm_cqlsh_consistency_parse(const char *name);

/* The name of a consistency level ("ONE"), "?" when unknown. */
const char *
sm_cqlsh_consistency_name(uint16_t cl);

#endif /* SM_CQLSH_H */
