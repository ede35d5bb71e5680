/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DDB_EXPR_PRIV_H
#define DDB_EXPR_PRIV_H

/*
 * Internals of the DynamoDB expression parser, shared by sm_ddb_expr_lex.c
 * (arena, tokens, reserved words, error messages) and sm_ddb_expr_parse.c
 * (grammar, checks, helpers). Not for use outside lib/alternator.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sm_arena.h"
#include "sm_ddb_expr.h"

/* ---- arena: every node of one expression, freed at once ---- */

/* Trees live in an sm_arena (lib/core). */

/* ---- tokens ---- */

enum ddb_tok_type {
	DT_EOF,
	DT_ID,	  /* [A-Za-z][A-Za-z0-9_]*, not a keyword */
	DT_NAME,  /* #[A-Za-z0-9_]+ */
	DT_VALUE, /* :[A-Za-z0-9_]+ */
	DT_INT,	  /* 0 | [1-9][0-9]* */
	DT_AND,	  /* keywords, any case */
	DT_OR,
	DT_NOT,
	DT_BETWEEN,
	DT_IN,
	DT_SET,
	DT_REMOVE,
	DT_ADD,
	DT_DELETE,
	DT_EQ, /* = */
	DT_NE, /* <> */
	DT_LT,
	DT_LE,
	DT_GT,
	DT_GE,
	DT_LPAREN,
	DT_RPAREN,
	DT_LBRACKET,
	DT_RBRACKET,
	DT_COMMA,
	DT_DOT,
	DT_PLUS,
	DT_MINUS,
	DT_BAD, /* a character no token starts with (one UTF-8 sequence) */
};

struct ddb_tok {
	enum ddb_tok_type type;
	uint32_t off;
	uint32_t len;
};

/* An update clause as written, for the checks on sections. */
struct ddb_clause {
	enum sm_ddb_action_kind kind;
	unsigned first; /* index of its first action */
	unsigned n;
};

/* The parser's state. */
struct ddb_parser {
	const char *text;
	size_t len;
	enum sm_ddb_expr_kind kind;
	struct sm_arena *arena;
	struct ddb_tok *toks; /* ends with DT_EOF */
	unsigned ntoks;
	unsigned pos;
	unsigned fail_at; /* token of the syntax error to report */
	unsigned depth;
	struct ddb_clause *clauses;
	unsigned nclauses;
	unsigned capclauses;
	/*
	 * Tokens of list indexes too large for DynamoDB, reported by the first
	 * check pass: such an element's index is SM_DDB_EXPR_MAX_INDEX + 1 + its
	 * number here.
	 */
	unsigned *bad;
	unsigned nbad;
	unsigned capbad;
	char *err;
	size_t errlen;
};

/* Split p->text into p->toks, which has room for p->len + 1 tokens. Cannot fail. */
void
ddb_lex(struct ddb_parser *p);

/*
 * A syntax error at the current token: remembers where and returns -EBADMSG,
 * which alternatives may catch and retry. ddb_syntax_message() turns it into
 * DynamoDB's message.
 */
int
ddb_syntax_fail(struct ddb_parser *p);
/* "Invalid <Kind>: Syntax error; token: "<tok>", near: "<text>"" at p->fail_at; -EINVAL. */
int
ddb_syntax_message(struct ddb_parser *p);

/* Write @fmt into @err (if any) and return -EINVAL. */
int
ddb_errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The current token, and the one @k after it (the DT_EOF past the end). */
const struct ddb_tok *
ddb_peek(const struct ddb_parser *p, unsigned k);
/* Consume the current token when it is of @type. */
bool
ddb_accept(struct ddb_parser *p, enum ddb_tok_type type);
/* As ddb_accept(), a syntax error when absent. */
int
ddb_expect(struct ddb_parser *p, enum ddb_tok_type type);

/* A NUL-terminated arena copy of token @t's text, or NULL. */
char *
ddb_tok_dup(struct ddb_parser *p, const struct ddb_tok *t);

/* Grow the arena array *@arrp (of @size-byte items) by one item; NULL on ENOMEM. */
void *
ddb_vec_add(struct sm_arena *a, void *arrp, unsigned *n, unsigned *cap, size_t size);

#endif /* DDB_EXPR_PRIV_H */
