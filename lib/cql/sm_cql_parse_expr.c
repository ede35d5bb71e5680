/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CQL parser, part 2: terms (literals, bind markers, collections, tuples,
 * function calls), WHERE relations, IF conditions and USING attributes.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "sm_core.h"
#include "cql_parse_priv.h"

#define TRY(e)                                                                                     \
	do {                                                                                       \
		int rc_ = (e);                                                                     \
		if (rc_ < 0)                                                                       \
			return rc_;                                                                \
	} while (0)

static void
set_src(struct cql_parser *p, struct sm_cql_span *src, unsigned first_tok)
{
	const struct cql_tok *a = &p->toks[first_tok];
	const struct cql_tok *b = &p->toks[p->pos > first_tok ? p->pos - 1 : first_tok];

	src->off = a->off;
	src->len = b->off + b->len - a->off;
}

static struct sm_cql_term *
new_term(struct cql_parser *p, enum sm_cql_term_kind kind)
{
	struct sm_cql_term *t = sm_arena_alloc(p->arena, sizeof(*t));

	if (t != NULL)
		t->kind = kind;
	return t;
}

static int
add_bind(struct cql_parser *p, struct sm_cql_term *t, const struct cql_tctx *ctx,
	 const struct sm_cql_term *parent)
{
	struct sm_cql_bind *b;

	if (p->nbinds >= SM_CQL_MAX_BINDS) {
		/* counted, not kept: the statement is refused with the total at the end */
		p->extra_binds++;
		t->bind = UINT_MAX;
		return 0;
	}
	if (p->nbinds == p->capbinds) {
		unsigned ncap = p->capbinds ? p->capbinds * 2 : 16;
		struct sm_cql_bind *n = sm_realloc(p->binds, ncap * sizeof(*n));

		if (n == NULL)
			return -ENOMEM;
		p->binds = n;
		p->capbinds = ncap;
	}
	b = &p->binds[p->nbinds];
	memset(b, 0, sizeof(*b));
	b->name = t->text;
	b->role = ctx->role;
	b->clause = ctx->clause;
	b->op = ctx->op;
	b->column = ctx->column;
	b->field = ctx->field;
	b->columns = ctx->columns;
	b->ncolumns = ctx->ncolumns;
	b->stmt = p->stmt_index;
	b->term = t;
	b->parent = parent;
	b->root = ctx->inner ? ctx->root : NULL;
	b->root_role = ctx->root_role;
	t->bind = p->nbinds++;
	return 0;
}

void
cql_rebind(struct cql_parser *p, const struct sm_cql_term *t, enum sm_cql_bind_role role)
{
	if (t->kind == SM_CQL_TERM_BIND && t->bind < p->nbinds)
		p->binds[t->bind].role = role;
}

/*
 * The context of the @i-th element of @parent (a literal, tuple or call at
 * the position @ctx describes): the roles of the header's table.
 */
static void
child_ctx(const struct cql_tctx *ctx, const struct sm_cql_term *parent, unsigned i, bool map_key,
	  struct cql_tctx *c)
{
	*c = *ctx;
	c->inner = true;
	c->parent = parent;
	if (!ctx->inner) {
		c->root = parent;
		c->root_role = ctx->role;
	}
	if (ctx->inner) {
		c->role = SM_CQL_BIND_NESTED;
		return;
	}
	switch (parent->kind) {
	case SM_CQL_TERM_UDT:
	case SM_CQL_TERM_CAST:
		c->role = SM_CQL_BIND_NESTED;
		break;
	case SM_CQL_TERM_FUNCTION:
		c->role = SM_CQL_BIND_FUNCTION_ARG;
		break;
	case SM_CQL_TERM_TUPLE:
		if ((ctx->role == SM_CQL_BIND_TUPLE || ctx->role == SM_CQL_BIND_TUPLE_IN) &&
		    i < ctx->ncolumns) {
			/* (a, b) > (?, ?): each marker is its column's value */
			c->role = SM_CQL_BIND_VALUE;
			c->column = ctx->columns[i];
			c->columns = NULL;
			c->ncolumns = 0;
		} else {
			c->role = SM_CQL_BIND_NESTED;
		}
		break;
	default:
		if (ctx->role == SM_CQL_BIND_SUB)
			c->role = map_key || parent->kind != SM_CQL_TERM_MAP ? SM_CQL_BIND_SUB_ELEM
									     : SM_CQL_BIND_NESTED;
		else
			c->role = map_key ? SM_CQL_BIND_KEY : SM_CQL_BIND_ELEM;
		break;
	}
}

static int
push_elem(struct cql_parser *p, struct sm_cql_term *t, unsigned *cap, struct sm_cql_term *e)
{
	struct sm_cql_term **slot = cql_vec_add(p, &t->elems, &t->nelems, cap, sizeof(*slot));

	if (slot == NULL)
		return -ENOMEM;
	*slot = e;
	return 0;
}

/* True at "name :" where a user type literal's field starts ({a: 1}, {"A": 1}). */
static bool
at_field(const struct cql_parser *p)
{
	const struct cql_tok *t = cql_peek(p, 0);

	if (!cql_tok_is_punct(p, cql_peek(p, 1), ":"))
		return false;
	if (t->type == T_QIDENT)
		return true;
	return t->type == T_IDENT && !cql_tok_is_kw(p, t, "true") &&
	       !cql_tok_is_kw(p, t, "false") && !cql_tok_is_kw(p, t, "null") &&
	       !cql_tok_is_kw(p, t, "nan") && !cql_tok_is_kw(p, t, "infinity");
}

/* {f: v, g: w} after the '{': a user type literal. */
static int
parse_udt(struct cql_parser *p, const struct cql_tctx *ctx, struct sm_cql_term *t)
{
	struct cql_tctx c;
	struct sm_cql_term *e;
	const char **slot;
	unsigned cap = 0, ncap = 0, nnames = 0;

	t->kind = SM_CQL_TERM_UDT;
	for (;;) {
		slot = cql_vec_add(p, &t->names, &nnames, &ncap, sizeof(*slot));
		if (slot == NULL)
			return -ENOMEM;
		TRY(cql_ident(p, slot));
		TRY(cql_expect_punct(p, ":"));
		child_ctx(ctx, t, t->nelems, false, &c);
		TRY(cql_term(p, &c, &e));
		TRY(push_elem(p, t, &cap, e));
		if (cql_accept_punct(p, "}"))
			return 0;
		TRY(cql_expect_punct(p, ","));
	}
}

/* Elements up to @close; for '{', decides between a set and a map on the first ':'. */
static int
parse_elems(struct cql_parser *p, const struct cql_tctx *ctx, struct sm_cql_term *t,
	    const char *close)
{
	struct cql_tctx c;
	struct sm_cql_term *e;
	unsigned cap = 0, i = 0;
	bool braces = close[0] == '}';

	if (cql_accept_punct(p, close))
		return 0;
	if (braces && at_field(p))
		return parse_udt(p, ctx, t);
	for (;;) {
		child_ctx(ctx, t, i, braces, &c);
		if (braces && i == 0) {
			/* the role of the first element depends on whether a ':' follows */
			unsigned mark = p->nbinds;

			c.role = SM_CQL_BIND_NESTED;
			TRY(cql_term(p, &c, &e));
			if (cql_tok_is_punct(p, cql_peek(p, 0), ":"))
				t->kind = SM_CQL_TERM_MAP;
			child_ctx(ctx, t, i, t->kind == SM_CQL_TERM_MAP, &c);
			if (e->kind == SM_CQL_TERM_BIND && mark < p->nbinds)
				p->binds[mark].role = c.role;
		} else {
			if (t->kind == SM_CQL_TERM_MAP)
				child_ctx(ctx, t, i, true, &c);
			TRY(cql_term(p, &c, &e));
		}
		TRY(push_elem(p, t, &cap, e));
		if (t->kind == SM_CQL_TERM_MAP) {
			TRY(cql_expect_punct(p, ":"));
			child_ctx(ctx, t, i, false, &c);
			TRY(cql_term(p, &c, &e));
			TRY(push_elem(p, t, &cap, e));
		}
		i++;
		if (cql_accept_punct(p, close))
			return 0;
		TRY(cql_expect_punct(p, ","));
	}
}

static int
literal(struct cql_parser *p, struct sm_cql_term *t, enum sm_cql_lit_kind lit, const char *text,
	size_t len)
{
	t->kind = SM_CQL_TERM_LITERAL;
	t->lit = lit;
	t->text = cql_strndup(p, text, len);
	t->len = (uint32_t)len;
	return t->text == NULL ? -ENOMEM : 0;
}

static int
term_literal(struct cql_parser *p, const struct cql_tok *tok, struct sm_cql_term *t)
{
	const char *s = p->text + tok->off;
	char err[128];
	int32_t mo, d;
	int64_t ns;
	uint32_t i;

	switch (tok->type) {
	case T_INT:
		return literal(p, t, SM_CQL_LIT_INT, s, tok->len);
	case T_FLOAT:
		return literal(p, t, SM_CQL_LIT_FLOAT, s, tok->len);
	case T_BLOB:
		return literal(p, t, SM_CQL_LIT_BLOB, s + 2, tok->len - 2);
	case T_UUID:
		TRY(literal(p, t, SM_CQL_LIT_UUID, s, tok->len));
		for (i = 0; i < t->len; i++)
			((char *)(uintptr_t)t->text)[i] = (char)tolower((unsigned char)t->text[i]);
		return 0;
	case T_STRING:
		t->kind = SM_CQL_TERM_LITERAL;
		t->lit = SM_CQL_LIT_STRING;
		t->text = cql_tok_string(p, tok, &t->len);
		return t->text == NULL ? -ENOMEM : 0;
	case T_DURATION:
		if (sm_cql_duration_parse(s, tok->len, &mo, &d, &ns, err, sizeof(err)) < 0)
			return cql_fail(p, -EINVAL, "%s", err);
		return literal(p, t, SM_CQL_LIT_DURATION, s, tok->len);
	default:
		return cql_syntax_error(p);
	}
}

/* name(args) or ks.name(args), at the name */
static int
term_call(struct cql_parser *p, const struct cql_tctx *ctx, struct sm_cql_term *t)
{
	struct cql_tctx c;
	struct sm_cql_term *e;
	struct sm_cql_qname q;
	unsigned cap = 0;

	TRY(cql_func_name(p, &q));
	t->kind = SM_CQL_TERM_FUNCTION;
	t->ks = q.ks;
	t->text = q.name;
	t->len = (uint32_t)strlen(q.name);
	TRY(cql_expect_punct(p, "("));
	if (cql_accept_punct(p, ")"))
		return 0;
	for (;;) {
		child_ctx(ctx, t, t->nelems, false, &c);
		TRY(cql_term(p, &c, &e));
		TRY(push_elem(p, t, &cap, e));
		if (cql_accept_punct(p, ")"))
			return 0;
		TRY(cql_expect_punct(p, ","));
	}
}

/*
 * At "(" followed by a type, not a term: a name that is no literal keyword
 * and no function call ("(int)", "(frozen<list<int>>)", "(ks.ut)").
 */
static bool
at_type_hint(const struct cql_parser *p)
{
	const struct cql_tok *t = cql_peek(p, 1), *nx = cql_peek(p, 2);

	if (t->type != T_IDENT && t->type != T_QIDENT)
		return false;
	if (cql_tok_is_kw(p, t, "true") || cql_tok_is_kw(p, t, "false") ||
	    cql_tok_is_kw(p, t, "null") || cql_tok_is_kw(p, t, "nan") ||
	    cql_tok_is_kw(p, t, "infinity"))
		return false;
	return cql_tok_is_punct(p, nx, ")") || cql_tok_is_punct(p, nx, "<") ||
	       (cql_tok_is_punct(p, nx, ".") && !cql_tok_is_punct(p, cql_peek(p, 4), "("));
}

static int
term_inner(struct cql_parser *p, const struct cql_tctx *ctx, struct sm_cql_term *t)
{
	const struct sm_cql_term *parent = ctx->parent;
	const struct cql_tok *tok = cql_peek(p, 0);
	const struct cql_tok *nx = cql_peek(p, 1);

	if (tok->type == T_QMARK) {
		p->pos++;
		t->kind = SM_CQL_TERM_BIND;
		return add_bind(p, t, ctx, parent);
	}
	if (cql_tok_is_punct(p, tok, ":") && (nx->type == T_IDENT || nx->type == T_QIDENT)) {
		p->pos++;
		t->kind = SM_CQL_TERM_BIND;
		TRY(cql_ident(p, &t->text));
		t->len = (uint32_t)strlen(t->text);
		return add_bind(p, t, ctx, parent);
	}
	if (cql_tok_is_punct(p, tok, "[")) {
		p->pos++;
		t->kind = SM_CQL_TERM_LIST;
		return parse_elems(p, ctx, t, "]");
	}
	if (cql_tok_is_punct(p, tok, "{")) {
		p->pos++;
		t->kind = SM_CQL_TERM_SET;
		return parse_elems(p, ctx, t, "}");
	}
	if (cql_tok_is_punct(p, tok, "(") && at_type_hint(p)) {
		/* (type) term: a type hint, ScyllaDB's c-style cast */
		struct cql_tctx c;
		struct sm_cql_term *e;
		unsigned cap = 0;

		p->pos++;
		t->kind = SM_CQL_TERM_CAST;
		TRY(cql_type_text(p, &t->text));
		t->len = (uint32_t)strlen(t->text);
		TRY(cql_expect_punct(p, ")"));
		child_ctx(ctx, t, 0, false, &c);
		TRY(cql_term(p, &c, &e));
		return push_elem(p, t, &cap, e);
	}
	if (cql_tok_is_punct(p, tok, "(")) {
		p->pos++;
		t->kind = SM_CQL_TERM_TUPLE;
		if (cql_tok_is_punct(p, cql_peek(p, 0), ")"))
			return cql_syntax_error(p);
		return parse_elems(p, ctx, t, ")");
	}
	if (cql_tok_is_punct(p, tok, "-") && nx->type == T_IDENT) {
		if (cql_tok_is_kw(p, nx, "infinity")) {
			p->pos += 2;
			return literal(p, t, SM_CQL_LIT_FLOAT, "-Infinity", 9);
		}
		if (cql_tok_is_kw(p, nx, "nan")) {
			p->pos += 2;
			return literal(p, t, SM_CQL_LIT_FLOAT, "NaN", 3);
		}
	}
	if (tok->type == T_IDENT || tok->type == T_QIDENT) {
		if (cql_tok_is_punct(p, nx, "(") ||
		    (cql_tok_is_punct(p, nx, ".") && cql_tok_is_punct(p, cql_peek(p, 3), "(")))
			return term_call(p, ctx, t);
		if (tok->type == T_QIDENT)
			return cql_syntax_error(p);
		p->pos++;
		if (cql_tok_is_kw(p, tok, "true"))
			return literal(p, t, SM_CQL_LIT_BOOL, "true", 4);
		if (cql_tok_is_kw(p, tok, "false"))
			return literal(p, t, SM_CQL_LIT_BOOL, "false", 5);
		if (cql_tok_is_kw(p, tok, "null"))
			return literal(p, t, SM_CQL_LIT_NULL, "null", 4);
		if (cql_tok_is_kw(p, tok, "nan"))
			return literal(p, t, SM_CQL_LIT_FLOAT, "NaN", 3);
		if (cql_tok_is_kw(p, tok, "infinity"))
			return literal(p, t, SM_CQL_LIT_FLOAT, "Infinity", 8);
		p->pos--;
		return cql_syntax_error(p);
	}
	if (tok->type == T_EOF)
		return cql_expect_error(p, "a term");
	if (tok->type == T_PUNCT || tok->type == T_QMARK)
		return cql_syntax_error(p);
	p->pos++;
	return term_literal(p, tok, t);
}

int
cql_term(struct cql_parser *p, const struct cql_tctx *ctx, struct sm_cql_term **out)
{
	unsigned first = p->pos;
	struct sm_cql_term *t;
	int rc;

	if (p->depth >= SM_CQL_MAX_DEPTH)
		return cql_fail(p, -EINVAL, "Nesting deeper than %d levels", SM_CQL_MAX_DEPTH);
	t = new_term(p, SM_CQL_TERM_LITERAL);
	if (t == NULL)
		return -ENOMEM;
	p->depth++;
	rc = term_inner(p, ctx, t);
	p->depth--;
	if (rc < 0)
		return rc;
	set_src(p, &t->src, first);
	*out = t;
	return 0;
}

/* ---- relations and conditions ---- */

/* An operator, or -1 (with nothing consumed) when the current token is none. */
static int
parse_op(struct cql_parser *p, enum sm_cql_op *op)
{
	static const struct {
		const char *s;
		enum sm_cql_op op;
	} ops[] = {
		{ "=", SM_CQL_OP_EQ },	{ "!=", SM_CQL_OP_NE }, { "<", SM_CQL_OP_LT },
		{ "<=", SM_CQL_OP_LE }, { ">", SM_CQL_OP_GT },	{ ">=", SM_CQL_OP_GE },
	};
	size_t i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		if (cql_accept_punct(p, ops[i].s)) {
			*op = ops[i].op;
			return 0;
		}
	}
	if (cql_accept_kw(p, "in")) {
		*op = SM_CQL_OP_IN;
		return 0;
	}
	if (cql_accept_kw(p, "contains")) {
		*op = cql_accept_kw(p, "key") ? SM_CQL_OP_CONTAINS_KEY : SM_CQL_OP_CONTAINS;
		return 0;
	}
	if (cql_tok_is_kw(p, cql_peek(p, 0), "like"))
		return cql_unsupported(p, "LIKE");
	if (cql_tok_is_kw(p, cql_peek(p, 0), "is"))
		return cql_unsupported(p, "IS NOT NULL");
	return cql_expect_error(p, "an operator");
}

static bool
at_bind(const struct cql_parser *p)
{
	const struct cql_tok *t = cql_peek(p, 0);

	return t->type == T_QMARK ||
	       (cql_tok_is_punct(p, t, ":") &&
		(cql_peek(p, 1)->type == T_IDENT || cql_peek(p, 1)->type == T_QIDENT));
}

/* The right side of IN: a bind marker (role @list_role) or a parenthesized list of terms. */
static int
parse_in(struct cql_parser *p, struct cql_tctx *ctx, enum sm_cql_bind_role list_role,
	 struct sm_cql_relation *r)
{
	struct sm_cql_term *e, **slot;
	unsigned cap = 0;

	if (at_bind(p)) {
		ctx->role = list_role;
		return cql_term(p, ctx, &r->value);
	}
	TRY(cql_expect_punct(p, "("));
	if (cql_accept_punct(p, ")"))
		return 0;
	for (;;) {
		TRY(cql_term(p, ctx, &e));
		slot = cql_vec_add(p, &r->in, &r->nin, &cap, sizeof(*slot));
		if (slot == NULL)
			return -ENOMEM;
		*slot = e;
		if (cql_accept_punct(p, ")"))
			return 0;
		TRY(cql_expect_punct(p, ","));
	}
}

/* ( ident, ident ... ) */
static int
ident_list(struct cql_parser *p, const char ***out, unsigned *n)
{
	const char **slot;
	unsigned cap = 0;

	TRY(cql_expect_punct(p, "("));
	for (;;) {
		slot = cql_vec_add(p, out, n, &cap, sizeof(*slot));
		if (slot == NULL)
			return -ENOMEM;
		TRY(cql_ident(p, slot));
		if (cql_accept_punct(p, ")"))
			return 0;
		TRY(cql_expect_punct(p, ","));
	}
}

static int
relation(struct cql_parser *p, enum sm_cql_clause clause, struct sm_cql_relation *r)
{
	struct cql_tctx ctx = { .clause = clause };
	unsigned first = p->pos;
	const char **col;

	if (clause == SM_CQL_CLAUSE_WHERE && cql_tok_is_kw(p, cql_peek(p, 0), "token") &&
	    cql_tok_is_punct(p, cql_peek(p, 1), "(")) {
		p->pos++;
		r->kind = SM_CQL_REL_TOKEN;
		TRY(ident_list(p, &r->cols, &r->ncols));
		TRY(parse_op(p, &r->op));
		if (r->op > SM_CQL_OP_GE || r->op == SM_CQL_OP_NE)
			return cql_fail(p, -EINVAL, "Unsupported operator on token()");
		ctx.role = SM_CQL_BIND_TOKEN;
		ctx.op = r->op;
		ctx.columns = r->cols;
		ctx.ncolumns = r->ncols;
		TRY(cql_term(p, &ctx, &r->value));
	} else if (clause == SM_CQL_CLAUSE_WHERE && cql_tok_is_punct(p, cql_peek(p, 0), "(")) {
		r->kind = SM_CQL_REL_TUPLE;
		TRY(ident_list(p, &r->cols, &r->ncols));
		TRY(parse_op(p, &r->op));
		if (r->op > SM_CQL_OP_IN || r->op == SM_CQL_OP_NE)
			return cql_fail(p, -EINVAL, "Unsupported operator on a tuple of columns");
		ctx.op = r->op;
		ctx.columns = r->cols;
		ctx.ncolumns = r->ncols;
		ctx.role = SM_CQL_BIND_TUPLE;
		if (r->op == SM_CQL_OP_IN)
			TRY(parse_in(p, &ctx, SM_CQL_BIND_TUPLE_IN, r));
		else
			TRY(cql_term(p, &ctx, &r->value));
	} else {
		r->kind = SM_CQL_REL_COLUMN;
		r->ncols = 1;
		r->cols = col = sm_arena_alloc(p->arena, sizeof(*col));
		if (col == NULL)
			return -ENOMEM;
		TRY(cql_ident(p, col));
		ctx.column = *col;
		if (cql_accept_punct(p, "[")) {
			r->kind = SM_CQL_REL_ELEM;
			ctx.role = SM_CQL_BIND_KEY;
			TRY(cql_term(p, &ctx, &r->key));
			TRY(cql_expect_punct(p, "]"));
		}
		TRY(parse_op(p, &r->op));
		ctx.op = r->op;
		ctx.role = r->kind == SM_CQL_REL_ELEM ? SM_CQL_BIND_ELEM : SM_CQL_BIND_VALUE;
		if (r->op == SM_CQL_OP_CONTAINS)
			ctx.role = SM_CQL_BIND_ELEM;
		else if (r->op == SM_CQL_OP_CONTAINS_KEY)
			ctx.role = SM_CQL_BIND_KEY;
		if (r->op == SM_CQL_OP_IN)
			TRY(parse_in(p, &ctx, SM_CQL_BIND_IN_LIST, r));
		else
			TRY(cql_term(p, &ctx, &r->value));
	}
	set_src(p, &r->src, first);
	return 0;
}

static int
relations(struct cql_parser *p, enum sm_cql_clause clause, struct sm_cql_relation **out,
	  unsigned *n)
{
	struct sm_cql_relation *r;
	unsigned cap = 0;

	do {
		r = cql_vec_add(p, out, n, &cap, sizeof(*r));
		if (r == NULL)
			return -ENOMEM;
		TRY(relation(p, clause, r));
	} while (cql_accept_kw(p, "and"));
	return 0;
}

int
cql_where(struct cql_parser *p, struct sm_cql_relation **out, unsigned *n)
{
	return relations(p, SM_CQL_CLAUSE_WHERE, out, n);
}

int
cql_if_conds(struct cql_parser *p, enum sm_cql_if *kind, struct sm_cql_relation **out, unsigned *n)
{
	if (cql_accept_kw(p, "exists")) {
		*kind = SM_CQL_IF_EXISTS;
		return 0;
	}
	*kind = SM_CQL_IF_CONDS;
	return relations(p, SM_CQL_CLAUSE_IF, out, n);
}

/* One USING value: an integer (TTL, TIMESTAMP) or duration (TIMEOUT) literal or a bind marker. */
static int
using_value(struct cql_parser *p, enum sm_cql_bind_role role, enum cql_tok_type lit,
	    struct sm_cql_term **out)
{
	struct cql_tctx ctx = { .role = role, .clause = SM_CQL_CLAUSE_OPTION };

	if (!at_bind(p) && cql_peek(p, 0)->type != lit)
		return cql_expect_error(p, lit == T_INT ? "INTEGER" : "DURATION");
	return cql_term(p, &ctx, out);
}

int
cql_using(struct cql_parser *p, struct sm_cql_attrs *a, bool allow_ttl)
{
	do {
		if (cql_accept_kw(p, "ttl")) {
			if (!allow_ttl)
				return cql_fail(p, -EINVAL, "TTL is not allowed here");
			if (a->ttl != NULL)
				return cql_fail(p, -EINVAL, "TTL given twice");
			TRY(using_value(p, SM_CQL_BIND_TTL, T_INT, &a->ttl));
			if (a->ttl->kind == SM_CQL_TERM_LITERAL && a->ttl->text[0] == '-')
				return cql_fail(p, -EINVAL,
						"A TTL must be greater or equal to 0, "
						"but was %s",
						a->ttl->text);
		} else if (cql_accept_kw(p, "timestamp")) {
			if (a->timestamp != NULL)
				return cql_fail(p, -EINVAL, "TIMESTAMP given twice");
			TRY(using_value(p, SM_CQL_BIND_TIMESTAMP, T_INT, &a->timestamp));
		} else if (cql_accept_kw(p, "timeout")) {
			if (a->timeout != NULL)
				return cql_fail(p, -EINVAL, "TIMEOUT given twice");
			TRY(using_value(p, SM_CQL_BIND_TIMEOUT, T_DURATION, &a->timeout));
		} else {
			return cql_expect_error(p, "K_TTL, K_TIMESTAMP or K_TIMEOUT");
		}
	} while (cql_accept_kw(p, "and"));
	return 0;
}
