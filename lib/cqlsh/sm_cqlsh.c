/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shell session: what cqlsh's Shell class does with each statement
 * (scylladb/scylla-cqlsh bin/cqlsh.py): shell commands handled here (USE,
 * CONSISTENCY, SERIAL CONSISTENCY, EXPAND, PAGING, DESCRIBE, SOURCE, HELP,
 * EXIT, QUIT), anything else sent to the server, results printed as
 * print_result() does, page by page.
 *
 * Line numbers in error lines follow cqlsh's counter: it starts at 1 and
 * grows after each line read, so an error in the first line of piped
 * input reads "<stdin>:2:" and one from -e "<stdin>:1:", as in cqlsh.
 *
 * Where this differs from cqlsh: with stop_on_error (-e, -f, piped input)
 * the first error ends the input and the exit status is 1, where cqlsh
 * runs on and exits 2 at the end (shardmark's exit codes keep 2 for usage
 * errors); an unterminated -e statement is an error, not silence; a SOURCE
 * file runs with the session's settings (cqlsh's sub-shell starts from
 * the defaults).
 */

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sm_core.h"
#include "sm_cqlsh.h"

#define DEFAULT_PAGE_SIZE 100 /* cqlsh's default_page_size */
#define MAX_SOURCE_DEPTH 16   /* SOURCE inside SOURCE */
#define LINE_CHUNK 4096

struct sm_cqlsh {
	struct sm_cqlsh_opts o;
	struct sm_cqlsh_backend be;
	struct sm_cqlsh_splitter sp;
	bool tty;	  /* of the input being read (a SOURCE file is not) */
	bool stop_on_error;
	const char *name; /* of the input being read */
	uint64_t lineno;
	char *keyspace;
	uint16_t cl, serial_cl;
	bool expand, paging;
	int32_t page_size;
	bool failed;
	uint64_t nerrors;
	bool stop_input; /* this input is over: EXIT, or an error with stop_on_error */
	bool exit;	 /* EXIT or QUIT: the session is over */
	int fatal;	 /* the backend can answer no more (-errno) */
	unsigned depth;
	char prompt[320];
};

struct sm_cqlsh *
sm_cqlsh_new(const struct sm_cqlsh_opts *o, const struct sm_cqlsh_backend *be)
{
	struct sm_cqlsh *sh = sm_calloc(1, sizeof(*sh));

	if (sh == NULL)
		return NULL;
	sh->o = *o;
	if (sh->o.out == NULL)
		sh->o.out = stdout;
	if (sh->o.err == NULL)
		sh->o.err = stderr;
	sh->be = *be;
	sh->tty = o->tty;
	sh->stop_on_error = o->stop_on_error;
	sh->name = o->name != NULL ? o->name : "<stdin>";
	sh->lineno = 1;
	sh->cl = SM_CQL_ONE;
	sh->serial_cl = SM_CQL_SERIAL;
	sh->paging = true;
	sh->page_size = DEFAULT_PAGE_SIZE;
	sm_cqlsh_splitter_init(&sh->sp);
	return sh;
}

void
sm_cqlsh_free(struct sm_cqlsh *sh)
{
	if (sh == NULL)
		return;
	sm_cqlsh_splitter_release(&sh->sp);
	sm_free(sh->keyspace);
	sm_free(sh);
}

bool
sm_cqlsh_failed(const struct sm_cqlsh *sh)
{
	return sh->failed;
}

const char *
sm_cqlsh_keyspace(const struct sm_cqlsh *sh)
{
	return sh->keyspace;
}

void
sm_cqlsh_cancel(struct sm_cqlsh *sh)
{
	sm_cqlsh_splitter_cancel(&sh->sp);
}

const char *
sm_cqlsh_prompt(struct sm_cqlsh *sh)
{
	const char *user = sh->o.username;

	if (sm_cqlsh_splitter_partial(&sh->sp)) {
		/* cqlsh's continuation prompts, aligned under the keyspace. */
		if (sh->keyspace == NULL)
			snprintf(sh->prompt, sizeof(sh->prompt), "   ... ");
		else
			snprintf(sh->prompt, sizeof(sh->prompt), "%*s    ... ",
				 (int)strlen(sh->keyspace), "");
		return sh->prompt;
	}
	snprintf(sh->prompt, sizeof(sh->prompt), "%s%scqlsh%s%s> ", user ? user : "",
		 user ? "@" : "", sh->keyspace ? ":" : "", sh->keyspace ? sh->keyspace : "");
	return sh->prompt;
}

/* ---- output ---- */

/* cqlsh's printerr(): "<name>:<line>:" in front unless on a TTY; the input may stop here. */
static void printerr(struct sm_cqlsh *sh, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
printerr(struct sm_cqlsh *sh, const char *fmt, ...)
{
	va_list ap;

	fflush(sh->o.out);
	if (!sh->tty)
		fprintf(sh->o.err, "%s:%llu:", sh->name, (unsigned long long)sh->lineno);
	va_start(ap, fmt);
	vfprintf(sh->o.err, fmt, ap);
	va_end(ap);
	fputc('\n', sh->o.err);
	fflush(sh->o.err);
	sh->failed = true;
	sh->nerrors++;
	if (sh->stop_on_error)
		sh->stop_input = true;
}

static void
print_error_result(struct sm_cqlsh *sh, const struct sm_cqlsh_result *r)
{
	struct sm_cqlsh_str s;

	sm_cqlsh_str_init(&s);
	sm_cqlsh_error_text(&s, r);
	printerr(sh, "%s", sm_cqlsh_str_get(&s));
	sm_cqlsh_str_release(&s);
}

/* perform_statement()'s print_warnings(). */
static void
print_warnings(struct sm_cqlsh *sh, const struct sm_cqlsh_result *r)
{
	uint16_t i;

	if (r->nwarnings == 0)
		return;
	fputs("\nWarnings :\n", sh->o.out);
	for (i = 0; i < r->nwarnings; i++)
		fprintf(sh->o.out, "%s\n\n", r->warnings[i]);
}

/* ---- talking to the server ---- */

/*
 * One request; NULL after an error was printed. A backend failure makes
 * the whole session stop (sh->fatal).
 */
static struct sm_cqlsh_result *
query(struct sm_cqlsh *sh, const char *text, int32_t page_size, struct sm_bytes paging_state)
{
	struct sm_cqlsh_query q = {
		.text = text,
		.consistency = sh->cl,
		.serial_consistency = sh->serial_cl,
		.page_size = page_size,
		.paging_state = paging_state,
	};
	struct sm_cqlsh_result *r = NULL;
	int ret = sh->be.query(sh->be.ctx, &q, &r);

	if (ret < 0 || r == NULL || r->kind == SM_CQLSH_FAILED) {
		if (r != NULL)
			print_error_result(sh, r);
		else
			printerr(sh, "ConnectionException: %s", strerror(ret < 0 ? -ret : EIO));
		sm_cqlsh_result_free(r);
		sh->fatal = ret < 0 ? ret : -EIO;
		sh->stop_input = true;
		return NULL;
	}
	if (r->kind == SM_CQLSH_ERROR) {
		print_error_result(sh, r);
		sm_cqlsh_result_free(r);
		return NULL;
	}
	return r;
}

/* A query of the shell's own (DESCRIBE): every row, at consistency ONE. */
static struct sm_cqlsh_result *
query_all(struct sm_cqlsh *sh, const char *text)
{
	uint16_t cl = sh->cl;
	struct sm_cqlsh_result *r;

	sh->cl = SM_CQL_ONE;
	r = query(sh, text, -1, (struct sm_bytes){ NULL, 0 });
	sh->cl = cl;
	return r;
}

/* print_static_result(): one page as a table or, with EXPAND ON, as records. */
static void
print_page(struct sm_cqlsh *sh, const struct sm_cqlsh_result *r, bool header, uint64_t offset)
{
	struct sm_cqlsh_page pg;

	if (sm_cqlsh_page_build(&pg, r, &sh->o.fmt) < 0) {
		printerr(sh, "out of memory formatting %u rows", r->nrows);
		return;
	}
	if (sh->expand && pg.nrows > 0)
		sm_cqlsh_print_vertical(sh->o.out, &pg, offset);
	else
		sm_cqlsh_print_table(sh->o.out, &pg, header || pg.nrows == 0, sh->tty);
	sm_cqlsh_page_release(&pg);
}

/*
 * print_result(): every page, "---MORE---" between them on a TTY, then
 * "(N rows)"; the warnings (which come with the first page) after that,
 * as perform_statement() prints them. Takes @head.
 */
static void
print_result(struct sm_cqlsh *sh, const char *text, struct sm_cqlsh_result *head)
{
	struct sm_cqlsh_result *r = head;
	uint64_t rows = 0;
	bool first = true;

	fputc('\n', sh->o.out);
	for (;;) {
		struct sm_cqlsh_result *next;

		if (r->nrows > 0 || first) {
			print_page(sh, r, first || sh->tty, rows);
			rows += r->nrows;
		}
		if (!r->has_more) {
			if (!sh->tty)
				fputc('\n', sh->o.out);
			break;
		}
		if (sh->tty && sh->be.more != NULL) {
			fflush(sh->o.out);
			if (sh->be.more(sh->be.ctx) < 0)
				break;
		}
		next = query(sh, text, sh->paging ? sh->page_size : -1, r->paging_state);
		if (r != head)
			sm_cqlsh_result_free(r);
		r = next;
		if (r == NULL)
			break;
		first = false;
	}
	if (r != NULL)
		fprintf(sh->o.out, "(%llu rows)\n", (unsigned long long)rows);
	print_warnings(sh, head);
	if (r != head)
		sm_cqlsh_result_free(r);
	sm_cqlsh_result_free(head);
}

static bool
starts_with_word(const char *s, const char *word)
{
	size_t n = strlen(word);

	return strncasecmp(s, word, n) == 0 && !isalnum((unsigned char)s[n]) && s[n] != '_';
}

/* A CQL statement: sent as typed, its answer printed as perform_simple_statement() does. */
static void
run_cql(struct sm_cqlsh *sh, const char *text)
{
	struct sm_cqlsh_result *r;

	r = query(sh, text, sh->paging ? sh->page_size : -1, (struct sm_bytes){ NULL, 0 });
	if (r == NULL)
		return;
	if (r->kind == SM_CQLSH_SET_KEYSPACE && r->keyspace != NULL) {
		char *ks = sm_strdup(r->keyspace);

		if (ks != NULL) {
			sm_free(sh->keyspace);
			sh->keyspace = ks;
		}
	}
	/* cqlsh looks at the statement's first six letters. */
	if (strncasecmp(text, "select", 6) == 0 || starts_with_word(text, "list")) {
		print_result(sh, text, r);
		return;
	}
	if (r->kind == SM_CQLSH_ROWS && r->ncols > 0) {
		/* CAS INSERT/UPDATE: [applied] and the row, without a count. */
		fputc('\n', sh->o.out);
		print_page(sh, r, true, 0);
	}
	print_warnings(sh, r);
	sm_cqlsh_result_free(r);
}

/* ---- shell commands ---- */

/* The words of a shell command, lower-cased copies in @w (at most @max). */
static unsigned
words(const char *s, char w[][256], unsigned max)
{
	unsigned n = 0;
	size_t i;

	while (*s != '\0') {
		while (isspace((unsigned char)*s))
			s++;
		if (*s == '\0')
			break;
		for (i = 0; *s != '\0' && !isspace((unsigned char)*s); s++)
			if (i + 1 < 256)
				w[n < max ? n : max - 1][i++] = *s;
		if (n < max)
			w[n][i] = '\0';
		n++;
	}
	return n;
}

/* cqlsh's SwitchCommand: ON, OFF or nothing (show). Returns the new state. */
static bool
switch_command(struct sm_cqlsh *sh, const char *cmd, const char *desc, bool state, const char *arg)
{
	if (arg == NULL) {
		if (state)
			fprintf(sh->o.out, "%s is currently enabled. Use %s OFF to disable\n", desc,
				cmd);
		else
			fprintf(sh->o.out, "%s is currently disabled. Use %s ON to enable.\n", desc,
				cmd);
		return state;
	}
	if (strcasecmp(arg, "on") == 0) {
		if (state) {
			printerr(sh, "%s is already enabled. Use %s OFF to disable.", desc, cmd);
			return state;
		}
		fprintf(sh->o.out, "Now %s is enabled\n", desc);
		return true;
	}
	if (!state) {
		printerr(sh, "%s is not enabled.", desc);
		return state;
	}
	fprintf(sh->o.out, "Disabled %s.\n", desc);
	return false;
}

static bool
is_switch(const char *arg)
{
	return strcasecmp(arg, "on") == 0 || strcasecmp(arg, "off") == 0;
}

static void
do_paging(struct sm_cqlsh *sh, const char *cmd, char w[][256], unsigned n)
{
	char *end;
	long size = -1;

	if (n > 2 || (n == 2 && !is_switch(w[1]))) {
		size = n == 2 ? strtol(w[1], &end, 10) : -1;
		if (n > 2 || w[1][0] == '-' || *end != '\0' || end == w[1] || size <= 0 ||
		    size > INT32_MAX) {
			printerr(sh, "Improper %s command.", cmd);
			return;
		}
		/* PAGING N: on, with that page size. */
		sh->paging = true;
		sh->page_size = (int32_t)size;
	} else {
		sh->paging = switch_command(sh, "PAGING", "Query paging", sh->paging,
					    n == 2 ? w[1] : NULL);
	}
	if (sh->paging)
		fprintf(sh->o.out, "Page size: %d\n", sh->page_size);
	else
		sh->page_size = DEFAULT_PAGE_SIZE;
}

static void
do_consistency(struct sm_cqlsh *sh, const char *cmd, char w[][256], unsigned n, bool serial)
{
	unsigned first = serial ? 2 : 1;
	int cl;

	if (serial && (n < 2 || strcasecmp(w[1], "consistency") != 0)) {
		printerr(sh, "Improper %s command.", cmd);
		return;
	}
	if (n == first) {
		fprintf(sh->o.out, "Current %sconsistency level is %s.\n", serial ? "serial " : "",
			sm_cqlsh_consistency_name(serial ? sh->serial_cl : sh->cl));
		return;
	}
	cl = n == first + 1 ? sm_cqlsh_consistency_parse(w[first]) : -1;
	if (cl < 0 || (serial && cl != SM_CQL_SERIAL && cl != SM_CQL_LOCAL_SERIAL)) {
		printerr(sh, "Improper %s command.", cmd);
		return;
	}
	if (serial)
		sh->serial_cl = (uint16_t)cl;
	else
		sh->cl = (uint16_t)cl;
	fprintf(sh->o.out, "%sonsistency level set to %s.\n", serial ? "Serial c" : "C",
		sm_cqlsh_consistency_name((uint16_t)cl));
}

/* A name as CQL reads it: "Quoted" kept (with "" undone), else lower-cased. */
static void
cql_name(char *dst, size_t len, const char *src, size_t n)
{
	size_t i, k = 0;

	if (n >= 2 && src[0] == '"' && src[n - 1] == '"') {
		for (i = 1; i + 1 < n && k + 1 < len; i++) {
			dst[k++] = src[i];
			if (src[i] == '"' && src[i + 1] == '"')
				i++;
		}
	} else {
		for (i = 0; i < n && k + 1 < len; i++)
			dst[k++] = (char)tolower((unsigned char)src[i]);
	}
	dst[k] = '\0';
}

/* "ks.t", "t", "\"Ks\".\"T\"": the keyspace (empty when absent) and the table. */
static void
split_name(const char *s, char *ks, char *t, size_t len)
{
	const char *dot = NULL, *p;
	bool q = false;

	for (p = s; *p != '\0'; p++) {
		if (*p == '"')
			q = !q;
		else if (*p == '.' && !q && dot == NULL)
			dot = p;
	}
	if (dot == NULL) {
		ks[0] = '\0';
		cql_name(t, len, s, strlen(s));
		return;
	}
	cql_name(ks, len, s, (size_t)(dot - s));
	cql_name(t, len, dot + 1, strlen(dot + 1));
}

/* 'text' as a CQL string literal. */
static void
put_literal(struct sm_cqlsh_str *q, const char *s)
{
	sm_cqlsh_str_putn(q, "'", 1);
	for (; *s != '\0'; s++)
		sm_cqlsh_str_puts(q, *s == '\'' ? "''" : (char[]){ *s, '\0' });
	sm_cqlsh_str_putn(q, "'", 1);
}

/* SELECT * FROM system_schema.<table> [WHERE keyspace_name = ks [AND table_name = t]]. */
static struct sm_cqlsh_result *
schema_query(struct sm_cqlsh *sh, const char *table, const char *ks, const char *t)
{
	struct sm_cqlsh_result *r;
	struct sm_cqlsh_str q;

	sm_cqlsh_str_init(&q);
	sm_cqlsh_str_printf(&q, "SELECT * FROM system_schema.%s", table);
	if (ks != NULL) {
		sm_cqlsh_str_puts(&q, " WHERE keyspace_name = ");
		put_literal(&q, ks);
	}
	if (t != NULL) {
		sm_cqlsh_str_puts(&q, " AND table_name = ");
		put_literal(&q, t);
	}
	if (q.err != 0) {
		sm_cqlsh_str_release(&q);
		printerr(sh, "out of memory");
		return NULL;
	}
	r = query_all(sh, sm_cqlsh_str_get(&q));
	sm_cqlsh_str_release(&q);
	return r;
}

/* One row's text column as a C string (in @buf). */
static const char *
row_text(const struct sm_cqlsh_result *r, uint32_t row, const char *col, char *buf, size_t len)
{
	int c = sm_cqlsh_result_col(r, col);
	struct sm_bytes v = c >= 0 ? r->cells[(uint64_t)row * r->ncols + (uint32_t)c]
				   : (struct sm_bytes){ NULL, 0 };

	snprintf(buf, len, "%.*s", v.p ? (int)v.len : 0, v.p ? (const char *)v.p : "");
	return buf;
}

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* describe_element(): each statement between empty lines. */
static void
print_element(struct sm_cqlsh *sh, struct sm_cqlsh_str *s)
{
	fprintf(sh->o.out, "\n%s\n", sm_cqlsh_str_get(s));
}

static bool
system_keyspace(const char *ks)
{
	static const char *const sys[] = { "system",	     "system_schema",	 "system_traces",
					   "system_auth",    "system_distributed", "system_views",
					   "system_virtual_schema" };
	size_t i;

	for (i = 0; i < SM_ARRAY_SIZE(sys); i++)
		if (strcmp(ks, sys[i]) == 0)
			return true;
	return false;
}

/*
 * @ks's row of system_schema.scylla_keyspaces (its tablets), read quietly:
 * NULL when the server has no such table (Cassandra) or no memory.
 */
static struct sm_cqlsh_result *
scylla_keyspace(struct sm_cqlsh *sh, const char *ks)
{
	struct sm_cqlsh_query q = { .consistency = SM_CQL_ONE, .page_size = -1 };
	struct sm_cqlsh_result *r = NULL;
	struct sm_cqlsh_str text;

	sm_cqlsh_str_init(&text);
	sm_cqlsh_str_puts(&text, "SELECT initial_tablets FROM system_schema.scylla_keyspaces "
				 "WHERE keyspace_name = ");
	put_literal(&text, ks);
	q.serial_consistency = sh->serial_cl;
	q.text = sm_cqlsh_str_get(&text);
	if (text.err != 0 || sh->be.query(sh->be.ctx, &q, &r) < 0 || r == NULL ||
	    r->kind != SM_CQLSH_ROWS) {
		sm_cqlsh_result_free(r);
		r = NULL;
	}
	sm_cqlsh_str_release(&text);
	return r;
}

/* CREATE KEYSPACE, then every table of it, from one system_schema read each. */
static int
describe_keyspace(struct sm_cqlsh *sh, const struct sm_cqlsh_result *ksr, uint32_t row)
{
	struct sm_cqlsh_result *tables, *cols, *idx, *sks;
	struct sm_cqlsh_str s;
	char ks[256], tb[256];
	uint32_t i;
	int ret;

	row_text(ksr, row, "keyspace_name", ks, sizeof(ks));
	sm_cqlsh_str_init(&s);
	sks = scylla_keyspace(sh, ks);
	ret = sm_cqlsh_describe_keyspace(&s, ksr, row, sks);
	sm_cqlsh_result_free(sks);
	if (ret == 0)
		print_element(sh, &s);
	tables = schema_query(sh, "tables", ks, NULL);
	cols = tables != NULL ? schema_query(sh, "columns", ks, NULL) : NULL;
	idx = cols != NULL ? schema_query(sh, "indexes", ks, NULL) : NULL;
	for (i = 0; idx != NULL && i < tables->nrows && ret == 0; i++) {
		sm_cqlsh_str_reset(&s);
		ret = sm_cqlsh_describe_table(&s, tables, i, cols);
		if (ret == 0)
			ret = sm_cqlsh_describe_indexes(
				&s, idx, ks, row_text(tables, i, "table_name", tb, sizeof(tb)));
		if (ret == 0)
			print_element(sh, &s);
	}
	if (ret < 0)
		printerr(sh, "cannot describe keyspace %s: %s", ks, strerror(-ret));
	sm_cqlsh_result_free(tables);
	sm_cqlsh_result_free(cols);
	sm_cqlsh_result_free(idx);
	sm_cqlsh_str_release(&s);
	return tables != NULL && cols != NULL && idx != NULL ? ret : -EIO;
}

/*
 * Column @col of every row, sorted (the server returns partitions in
 * token order); with @by_keyspace each is "keyspace\001name", so the
 * sort groups a keyspace's names. NULL without memory.
 */
static char **
sorted_names(const struct sm_cqlsh_result *r, const char *col, bool by_keyspace)
{
	char **names = sm_calloc(r->nrows + 1, sizeof(*names)), ks[256], name[256];
	struct sm_cqlsh_str s;
	uint32_t i;

	if (names == NULL)
		return NULL;
	sm_cqlsh_str_init(&s);
	for (i = 0; i < r->nrows; i++) {
		sm_cqlsh_str_reset(&s);
		if (by_keyspace)
			sm_cqlsh_str_printf(&s, "%s\001",
					    row_text(r, i, "keyspace_name", ks, sizeof(ks)));
		sm_cqlsh_str_puts(&s, row_text(r, i, col, name, sizeof(name)));
		names[i] = s.err == 0 ? sm_strdup(sm_cqlsh_str_get(&s)) : NULL;
		if (names[i] == NULL)
			break;
	}
	sm_cqlsh_str_release(&s);
	if (i < r->nrows) {
		while (i > 0)
			sm_free(names[--i]);
		sm_free(names);
		return NULL;
	}
	qsort(names, r->nrows, sizeof(*names), cmp_names);
	return names;
}

static void
free_names(char **names, uint32_t n)
{
	uint32_t i;

	for (i = 0; names != NULL && i < n; i++)
		sm_free(names[i]);
	sm_free(names);
}

/* describe_list(): per keyspace, its name underlined (without a current keyspace), then the tables. */
static void
describe_tables(struct sm_cqlsh *sh)
{
	struct sm_cqlsh_result *r = schema_query(sh, "tables", sh->keyspace, NULL);
	char **names;
	const char **list;
	uint32_t i, n = 0;

	if (r == NULL)
		return;
	names = sorted_names(r, "table_name", true);
	list = sm_calloc(r->nrows + 1, sizeof(*list));
	if (names == NULL || list == NULL) {
		printerr(sh, "out of memory");
		goto out;
	}
	for (i = 0; i < r->nrows; i++) {
		char *sep = strchr(names[i], 1);
		size_t ks_len = (size_t)(sep - names[i]);

		list[n++] = sep + 1;
		if (i + 1 < r->nrows && strncmp(names[i + 1], names[i], ks_len + 1) == 0)
			continue;
		*sep = '\0';
		fputc('\n', sh->o.out);
		if (sh->keyspace == NULL) {
			fprintf(sh->o.out, "Keyspace %s\n---------", names[i]);
			while (ks_len-- > 0)
				fputc('-', sh->o.out);
			fputc('\n', sh->o.out);
		}
		sm_cqlsh_columnize(sh->o.out, list, n, 80);
		n = 0;
	}
	if (r->nrows > 0)
		fputc('\n', sh->o.out);
out:
	sm_free(list);
	free_names(names, r->nrows);
	sm_cqlsh_result_free(r);
}

static void
describe_keyspaces(struct sm_cqlsh *sh)
{
	struct sm_cqlsh_result *r = query_all(sh, "SELECT keyspace_name FROM system_schema.keyspaces");
	char **names;

	if (r == NULL)
		return;
	names = sorted_names(r, "keyspace_name", false);
	if (names == NULL) {
		printerr(sh, "out of memory");
	} else {
		fputc('\n', sh->o.out);
		sm_cqlsh_columnize(sh->o.out, (const char *const *)names, r->nrows, 80);
		fputc('\n', sh->o.out);
	}
	free_names(names, r->nrows);
	sm_cqlsh_result_free(r);
}

/* DESCRIBE KEYSPACE k, SCHEMA, FULL SCHEMA: @ks NULL for every (non-system unless @full). */
static void
describe_schema(struct sm_cqlsh *sh, const char *ks, bool full)
{
	struct sm_cqlsh_result *r = schema_query(sh, "keyspaces", ks, NULL);
	char **names, name[256];
	uint32_t i, k;

	if (r == NULL)
		return;
	if (ks != NULL && r->nrows == 0) {
		printerr(sh, "'%s' not found in keyspaces", ks);
		sm_cqlsh_result_free(r);
		return;
	}
	names = sorted_names(r, "keyspace_name", false);
	if (names == NULL)
		printerr(sh, "out of memory");
	for (i = 0; names != NULL && i < r->nrows; i++) {
		if (ks == NULL && !full && system_keyspace(names[i]))
			continue;
		for (k = 0; k < r->nrows; k++)
			if (strcmp(row_text(r, k, "keyspace_name", name, sizeof(name)), names[i]) == 0)
				break;
		if (k < r->nrows && describe_keyspace(sh, r, k) < 0)
			break;
	}
	free_names(names, r->nrows);
	sm_cqlsh_result_free(r);
}

/* DESCRIBE TABLE [ks.]t: false when it does not exist (nothing printed). */
static bool
describe_table(struct sm_cqlsh *sh, const char *ks, const char *t, bool quiet)
{
	struct sm_cqlsh_result *tables, *cols = NULL, *idx;
	struct sm_cqlsh_str s;
	bool found = false;
	int ret = 0;

	tables = schema_query(sh, "tables", ks, t);
	if (tables == NULL)
		return true;
	if (tables->nrows > 0) {
		found = true;
		cols = schema_query(sh, "columns", ks, t);
		idx = cols != NULL ? schema_query(sh, "indexes", ks, t) : NULL;
		sm_cqlsh_str_init(&s);
		if (cols != NULL)
			ret = sm_cqlsh_describe_table(&s, tables, 0, cols);
		if (cols != NULL && idx != NULL && ret == 0)
			ret = sm_cqlsh_describe_indexes(&s, idx, ks, t);
		sm_cqlsh_result_free(idx);
		if (cols != NULL && ret == 0)
			print_element(sh, &s);
		else if (cols != NULL)
			printerr(sh, "cannot describe table %s.%s: %s", ks, t, strerror(-ret));
		sm_cqlsh_str_release(&s);
	} else if (!quiet) {
		printerr(sh, "Table '%s' not found in keyspace '%s'", t, ks);
	}
	sm_cqlsh_result_free(tables);
	sm_cqlsh_result_free(cols);
	return found;
}

static void
do_describe(struct sm_cqlsh *sh, const char *cmd, const char *rest)
{
	char w[4][256], ks[256], t[256];
	unsigned n = words(rest, w, 4);
	const char *what = n > 0 ? w[0] : "";

	if (n == 1 && (strcasecmp(what, "keyspaces") == 0)) {
		describe_keyspaces(sh);
	} else if (n == 1 &&
		   (strcasecmp(what, "tables") == 0 || strcasecmp(what, "columnfamilies") == 0)) {
		describe_tables(sh);
	} else if ((n == 1 || n == 2) && strcasecmp(what, "keyspace") == 0) {
		if (n == 1 && sh->keyspace == NULL) {
			printerr(sh, "Not in any keyspace.");
			return;
		}
		if (n == 2)
			cql_name(ks, sizeof(ks), w[1], strlen(w[1]));
		describe_schema(sh, n == 2 ? ks : sh->keyspace, false);
	} else if (n == 2 &&
		   (strcasecmp(what, "table") == 0 || strcasecmp(what, "columnfamily") == 0)) {
		split_name(w[1], ks, t, sizeof(ks));
		if (ks[0] == '\0' && sh->keyspace == NULL) {
			printerr(sh, "No keyspace specified and no current keyspace");
			return;
		}
		describe_table(sh, ks[0] ? ks : sh->keyspace, t, false);
	} else if (n == 1 && strcasecmp(what, "schema") == 0) {
		describe_schema(sh, NULL, false);
	} else if (n == 2 && strcasecmp(what, "full") == 0 && strcasecmp(w[1], "schema") == 0) {
		describe_schema(sh, NULL, true);
	} else if (n == 1) {
		/* DESCRIBE <name>: a keyspace, else a table of the current keyspace. */
		struct sm_cqlsh_result *r;

		split_name(w[0], ks, t, sizeof(ks));
		if (ks[0] == '\0') {
			r = schema_query(sh, "keyspaces", t, NULL);
			if (r == NULL)
				return;
			if (r->nrows > 0) {
				describe_keyspace(sh, r, 0);
				sm_cqlsh_result_free(r);
				return;
			}
			sm_cqlsh_result_free(r);
		}
		if ((ks[0] == '\0' && sh->keyspace == NULL) ||
		    !describe_table(sh, ks[0] ? ks : sh->keyspace, t, true))
			printerr(sh, "'%s' not found in keyspaces", ks[0] ? ks : t);
	} else {
		printerr(sh, "Improper %s command.", cmd);
	}
}

static int
run_file(struct sm_cqlsh *sh, const char *path, bool stop_on_error, bool sourced);

/* SOURCE 'file': the path as a CQL string, ~ for $HOME. */
static void
do_source(struct sm_cqlsh *sh, const char *cmd, const char *rest)
{
	char path[4096], full[4200];
	size_t k = 0, n;
	const char *home;

	while (isspace((unsigned char)*rest))
		rest++;
	n = strlen(rest);
	if (n < 2 || rest[0] != '\'' || rest[n - 1] != '\'') {
		printerr(sh, "Improper %s command.", cmd);
		return;
	}
	for (size_t i = 1; i + 1 < n && k + 1 < sizeof(path); i++) {
		path[k++] = rest[i];
		if (rest[i] == '\'' && rest[i + 1] == '\'')
			i++;
	}
	path[k] = '\0';
	home = getenv("HOME");
	if (path[0] == '~' && (path[1] == '/' || path[1] == '\0') && home != NULL)
		snprintf(full, sizeof(full), "%s%s", home, path + 1);
	else
		snprintf(full, sizeof(full), "%s", path);
	/* Errors do not stop a sourced file (cqlsh's SOURCE help says so). */
	run_file(sh, full, false, true);
}

static void
do_help(struct sm_cqlsh *sh, char w[][256], unsigned n)
{
	static const char *const topics[] = {
		"CONSISTENCY", "DESC", "DESCRIBE", "EXIT",   "EXPAND",
		"HELP",	       "PAGING", "QUIT",   "SERIAL", "SOURCE",
	};

	if (n <= 1) {
		/* cmd.Cmd.print_topics(): the ruler is as long as "\nDocumented...:". */
		fputs("\nDocumented shell commands:\n===========================\n", sh->o.out);
		sm_cqlsh_columnize(sh->o.out, topics, SM_ARRAY_SIZE(topics), 79);
		fputs("\nCQL statements (SELECT, INSERT, UPDATE, DELETE, BATCH, CREATE, ALTER, DROP,\n"
		      "TRUNCATE, USE) go to the server; see ScyllaDB's CQL reference.\n\n",
		      sh->o.out);
		return;
	}
	printerr(sh, "*** No help on %s", w[1]);
}

/* The statement's first word (lower case) into @buf; the rest after it in *@rest. */
static void
first_word(const char *s, char *buf, size_t len, const char **rest)
{
	size_t i = 0;

	if (*s == '?') {
		snprintf(buf, len, "?");
		*rest = s + 1;
		return;
	}
	while ((isalnum((unsigned char)*s) || *s == '_') && i + 1 < len)
		buf[i++] = (char)tolower((unsigned char)*s++);
	buf[i] = '\0';
	*rest = s;
}

static void
handle(struct sm_cqlsh *sh, const char *stmt)
{
	char word[32], w[4][256], typed[32];
	const char *rest;
	unsigned n;

	first_word(stmt, word, sizeof(word), &rest);
	snprintf(typed, sizeof(typed), "%.*s", (int)(rest - stmt), stmt);
	n = words(stmt, w, 4);
	if (strcmp(word, "exit") == 0 || strcmp(word, "quit") == 0) {
		if (n > 1) {
			printerr(sh, "Improper %s command.", typed);
			return;
		}
		sh->exit = true;
		sh->stop_input = true;
	} else if (strcmp(word, "consistency") == 0) {
		do_consistency(sh, typed, w, n, false);
	} else if (strcmp(word, "serial") == 0) {
		do_consistency(sh, typed, w, n, true);
	} else if (strcmp(word, "expand") == 0) {
		if (n > 2 || (n == 2 && !is_switch(w[1])))
			printerr(sh, "Improper %s command.", typed);
		else
			sh->expand = switch_command(sh, "EXPAND", "Expanded output", sh->expand,
						    n == 2 ? w[1] : NULL);
	} else if (strcmp(word, "paging") == 0) {
		do_paging(sh, typed, w, n);
	} else if (strcmp(word, "describe") == 0 || strcmp(word, "desc") == 0) {
		do_describe(sh, typed, rest);
	} else if (strcmp(word, "source") == 0) {
		do_source(sh, typed, rest);
	} else if (strcmp(word, "help") == 0 || strcmp(word, "?") == 0) {
		do_help(sh, w, n);
	} else if (strcmp(word, "show") == 0 || strcmp(word, "capture") == 0 ||
		   strcmp(word, "login") == 0 || strcmp(word, "tracing") == 0 ||
		   strcmp(word, "copy") == 0 || strcmp(word, "history") == 0 ||
		   strcmp(word, "clear") == 0 || strcmp(word, "cls") == 0 ||
		   strcmp(word, "debug") == 0) {
		printerr(sh, "%s is a cqlsh command that shardmark cql does not have", typed);
	} else {
		run_cql(sh, stmt);
	}
	fflush(sh->o.out);
}

/* Run what the splitter completed; stops at EXIT or an error when stop_on_error. */
static int
run_pending(struct sm_cqlsh *sh)
{
	const char *stmt;

	while (!sh->stop_input && (stmt = sm_cqlsh_splitter_next(&sh->sp)) != NULL) {
		char *copy = sm_strdup(stmt);

		/* The statement outlives the splitter's buffer (SOURCE reads more lines). */
		if (copy == NULL) {
			printerr(sh, "out of memory");
			return -ENOMEM;
		}
		handle(sh, copy);
		sm_free(copy);
	}
	if (sh->stop_input)
		sm_cqlsh_splitter_cancel(&sh->sp);
	if (sh->fatal < 0)
		return sh->fatal;
	return sh->stop_input ? 1 : 0;
}

int
sm_cqlsh_line(struct sm_cqlsh *sh, const char *line, size_t len)
{
	if (sh->stop_input)
		return sh->fatal < 0 ? sh->fatal : 1;
	sh->lineno++;
	if (sm_cqlsh_splitter_line(&sh->sp, line, len) < 0) {
		printerr(sh, "out of memory");
		return -ENOMEM;
	}
	return run_pending(sh);
}

int
sm_cqlsh_eof(struct sm_cqlsh *sh)
{
	if (!sh->stop_input && sm_cqlsh_splitter_partial(&sh->sp)) {
		printerr(sh, "Incomplete statement at end of file");
		sm_cqlsh_splitter_cancel(&sh->sp);
	}
	if (sh->fatal < 0)
		return sh->fatal;
	return sh->stop_input ? 1 : 0;
}

int
sm_cqlsh_run(struct sm_cqlsh *sh, const char *text)
{
	const char *p = text, *nl;
	size_t len = strlen(text), end = len;
	int ret = 0;

	/* cqlsh -e adds the ';' a one-liner usually lacks. */
	while (end > 0 && isspace((unsigned char)text[end - 1]))
		end--;
	while (ret == 0 && p < text + len) {
		nl = memchr(p, '\n', (size_t)(text + len - p));
		if (nl == NULL)
			nl = text + len;
		if (sm_cqlsh_splitter_line(&sh->sp, p, (size_t)(nl - p)) < 0)
			return -ENOMEM;
		if (nl == text + len && end > 0 && text[end - 1] != ';' &&
		    sm_cqlsh_splitter_line(&sh->sp, ";", 1) < 0)
			return -ENOMEM;
		ret = run_pending(sh);
		p = nl + 1;
	}
	if (ret == 0)
		ret = sm_cqlsh_eof(sh);
	return ret;
}

/*
 * Run the file @path as its own input (its name and line numbers in error
 * lines, no TTY). @sourced: SOURCE inside the session, where EXIT ends the
 * file only, and a failure in it fails the SOURCE statement.
 */
static int
run_file(struct sm_cqlsh *sh, const char *path, bool stop_on_error, bool sourced)
{
	struct sm_cqlsh_splitter saved_sp = sh->sp;
	const char *saved_name = sh->name;
	uint64_t saved_line = sh->lineno, errors = sh->nerrors;
	bool saved_tty = sh->tty, saved_stop = sh->stop_on_error;
	struct sm_cqlsh_str line;
	char chunk[LINE_CHUNK];
	FILE *f;
	int ret = 0;

	if (sh->depth >= MAX_SOURCE_DEPTH) {
		printerr(sh, "SOURCE nested deeper than %d files", MAX_SOURCE_DEPTH);
		return sh->stop_input ? 1 : 0;
	}
	f = fopen(path, "r");
	if (f == NULL) {
		int err = errno;

		/* Python's "Could not open %r: %s" of an IOError. */
		printerr(sh, "Could not open '%s': [Errno %d] %s: '%s'", path, err, strerror(err),
			 path);
		return sourced ? (sh->stop_input ? 1 : 0) : -err;
	}
	sm_cqlsh_splitter_init(&sh->sp);
	sm_cqlsh_str_init(&line);
	sh->name = path;
	sh->lineno = 1;
	sh->tty = false;
	sh->stop_on_error = stop_on_error;
	sh->depth++;
	while (ret == 0 && fgets(chunk, sizeof(chunk), f) != NULL) {
		size_t n = strlen(chunk);

		sm_cqlsh_str_putn(&line, chunk, n);
		if (n > 0 && chunk[n - 1] != '\n' && !feof(f))
			continue; /* a long line: read on */
		if (line.err != 0) {
			ret = -ENOMEM;
			break;
		}
		n = line.len;
		if (n > 0 && line.p[n - 1] == '\n')
			n--;
		ret = sm_cqlsh_line(sh, line.p, n);
		sm_cqlsh_str_reset(&line);
	}
	if (ret == 0)
		ret = sm_cqlsh_eof(sh);
	sh->depth--;
	fclose(f);
	sm_cqlsh_str_release(&line);
	sm_cqlsh_splitter_release(&sh->sp);
	sh->sp = saved_sp;
	sh->name = saved_name;
	sh->lineno = saved_line;
	sh->tty = saved_tty;
	sh->stop_on_error = saved_stop;
	if (sh->fatal < 0)
		return sh->fatal;
	if (ret < 0)
		return ret;
	if (sourced) {
		sh->exit = false;
		sh->stop_input = saved_stop && sh->nerrors > errors;
	}
	return sh->stop_input ? 1 : 0;
}

int
sm_cqlsh_run_file(struct sm_cqlsh *sh, const char *path, bool stop_on_error)
{
	return run_file(sh, path, stop_on_error, false);
}
