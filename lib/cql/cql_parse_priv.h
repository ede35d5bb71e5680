/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQL_PARSE_PRIV_H
#define CQL_PARSE_PRIV_H

/*
 * Internals of the CQL parser, shared by sm_cql_lex.c (arena, tokens,
 * errors), sm_cql_parse_expr.c (terms, relations, conditions) and
 * sm_cql_parse.c (statements). Not for use outside lib/cql.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sm_arena.h"
#include "sm_cql_parse.h"

/* ---- arena: every node of one tree, freed at once ---- */

/* Trees live in an sm_arena (lib/core). */

/* ---- tokens ---- */

enum cql_tok_type {
	T_EOF,
	T_IDENT,    /* unquoted identifier or keyword */
	T_QIDENT,   /* "quoted" identifier */
	T_STRING,   /* 'string' or $$string$$ */
	T_INT,	    /* -?[0-9]+ */
	T_FLOAT,    /* with '.' or exponent */
	T_BLOB,	    /* 0x... */
	T_UUID,	    /* 8-4-4-4-12 */
	T_DURATION, /* 1h30m, P1Y, P0001-02-03T04:05:06 */
	T_QMARK,    /* ? */
	T_PUNCT,    /* ( ) [ ] { } , ; . : = < > <= >= != + - * += -= */
};

struct cql_tok {
	enum cql_tok_type type;
	uint32_t off;
	uint32_t len;
	uint32_t line; /* 1-based */
	uint32_t col;  /* 0-based, in characters */
};

/* ---- the parser's state ---- */

/* What a term being parsed is, for the bind markers inside it. */
struct cql_tctx {
	enum sm_cql_bind_role role;
	enum sm_cql_clause clause;
	enum sm_cql_op op;
	const char *column;
	const char *field;
	const char **columns;
	unsigned ncolumns;
	bool inner;			  /* already inside a literal, tuple or call */
	const struct sm_cql_term *parent; /* the one the term is directly in */
	const struct sm_cql_term *root;	  /* the outermost one (inner only) */
	enum sm_cql_bind_role root_role;  /* the role root's place has */
};

struct cql_parser {
	const char *text;
	size_t len;
	struct sm_arena *arena;
	struct cql_tok *toks; /* sm_malloc()ed, ends with T_EOF */
	unsigned ntoks;
	unsigned pos;
	struct sm_cql_bind *binds; /* sm_malloc()ed while parsing */
	unsigned nbinds;
	unsigned capbinds;
	unsigned extra_binds; /* markers past SM_CQL_MAX_BINDS, only counted */
	unsigned stmt_index; /* of the statement being parsed in a batch */
	unsigned depth;
	char *err;
	size_t errlen;
};

/* Split @p->text into @p->toks. 0, -EBADMSG (with the message) or -ENOMEM. */
int
cql_lex(struct cql_parser *p);

/* Record "line L:C <fmt>" at token @t; returns -EBADMSG. */
int
cql_error_at(struct cql_parser *p, const struct cql_tok *t, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* "line L:C mismatched input 'X' expecting @what" at the current token. */
int
cql_expect_error(struct cql_parser *p, const char *what);
/* "line L:C no viable alternative at input 'X'" at the current token. */
int
cql_syntax_error(struct cql_parser *p);
/* Record @fmt as is and return @rc (-EINVAL, -ENOTSUP). */
int
cql_fail(struct cql_parser *p, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* -ENOTSUP with "not supported by shardmark: @what". */
int
cql_unsupported(struct cql_parser *p, const char *what);

/* The current token, and the one @k after it (T_EOF past the end). */
const struct cql_tok *
cql_peek(const struct cql_parser *p, unsigned k);
/* True when token @t is the keyword @kw (lowercase), case-insensitively. */
bool
cql_tok_is_kw(const struct cql_parser *p, const struct cql_tok *t, const char *kw);
/* True when token @t is the punctuation @s. */
bool
cql_tok_is_punct(const struct cql_parser *p, const struct cql_tok *t, const char *s);
/* Consume the current token when it is keyword @kw / punctuation @s. */
bool
cql_accept_kw(struct cql_parser *p, const char *kw);
bool
cql_accept_punct(struct cql_parser *p, const char *s);
/* As the accept functions, but a syntax error when absent. */
int
cql_expect_kw(struct cql_parser *p, const char *kw);
int
cql_expect_punct(struct cql_parser *p, const char *s);

/* A NUL-terminated copy of @n bytes of @s in the arena. */
char *
cql_strndup(struct cql_parser *p, const char *s, size_t n);
/* The value of a T_STRING token, unescaped, and its length. */
char *
cql_tok_string(struct cql_parser *p, const struct cql_tok *t, uint32_t *len);
/*
 * Parse an identifier (unquoted: lowercased, not a reserved keyword; or
 * quoted) into *@out, consuming it.
 */
int
cql_ident(struct cql_parser *p, const char **out);
/* True when the current token can start an identifier. */
bool
cql_at_ident(const struct cql_parser *p);
/* [ks.]name */
int
cql_qname(struct cql_parser *p, struct sm_cql_qname *out);

/* A function's [ks.]name; the name may be a keyword (token). */
int
cql_func_name(struct cql_parser *p, struct sm_cql_qname *out);

/* Grow the arena array *@arrp (of @size-byte items) to hold one more; NULL on ENOMEM. */
void *
cql_vec_add(struct cql_parser *p, void *arrp, unsigned *n, unsigned *cap, size_t size);

/* A type, normalized ("map<text, frozen<list<int>>>"), into the arena (sm_cql_parse.c). */
int
cql_type_text(struct cql_parser *p, const char **out);

/* ---- terms and clauses (sm_cql_parse_expr.c) ---- */

int
cql_term(struct cql_parser *p, const struct cql_tctx *ctx, struct sm_cql_term **out);
/* WHERE rel AND rel ... */
int
cql_where(struct cql_parser *p, struct sm_cql_relation **out, unsigned *n);
/* IF EXISTS | IF cond AND cond ...; after the IF keyword has been consumed */
int
cql_if_conds(struct cql_parser *p, enum sm_cql_if *kind, struct sm_cql_relation **out, unsigned *n);
/* USING TTL x AND TIMESTAMP y AND TIMEOUT z; after USING */
int
cql_using(struct cql_parser *p, struct sm_cql_attrs *a, bool allow_ttl);
/* Re-role the bind marker @t when it is one (c = ? + c is a prepend). */
void
cql_rebind(struct cql_parser *p, const struct sm_cql_term *t, enum sm_cql_bind_role role);

#endif /* CQL_PARSE_PRIV_H */
