/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DynamoDB expressions, part 2: the grammar, the checks in DynamoDB's order,
 * key conditions and the executor's helpers.
 *
 * The grammar, as DynamoDB reads it (one parser for all condition kinds):
 *   condition  := and (OR and)*
 *   and        := not (AND not)*
 *   not        := NOT* primary
 *   primary    := '(' condition ')' | comparison       (tried in this order; the
 *                 first only where AND, OR, ')' or the end follows it)
 *   comparison := operand cmp operand
 *               | operand BETWEEN operand AND operand
 *               | operand IN '(' operand (',' operand)* ')'
 *               | call
 *   operand    := :value | '(' operand ')' | call | path
 *   call       := name '(' operand (',' operand)* ')'
 *   path       := (name | #ref) ('.' (name | #ref) | '[' int ']')*
 *   update     := clause+, a clause being one of
 *                 SET path '=' value (',' ...)*, REMOVE path (',' path)*,
 *                 ADD path :value (',' ...)*, DELETE path :value (',' ...)*
 *   value      := arith | '(' arith ')'                 (tried in this order)
 *   arith      := operand (('+' | '-') operand)?
 *   projection := path (',' path)*
 * Where two alternatives both fail, the error reported is the one that got
 * further, as DynamoDB's parser does.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sm_core.h"
#include "ddb_expr_priv.h"

/* A function name DynamoDB does not have; never in a returned tree. */
#define DDB_FN_UNKNOWN ((enum sm_ddb_func)99)

enum fn_place {
	FN_COND,    /* a condition by itself */
	FN_OPERAND, /* an operand in a condition */
	FN_UPDATE,  /* a SET value */
};

static const struct ddb_fn {
	const char *name;
	enum sm_ddb_func func;
	unsigned nargs;
	enum fn_place place;
} fns[] = {
	{ "attribute_exists", SM_DDB_FN_ATTRIBUTE_EXISTS, 1, FN_COND },
	{ "attribute_not_exists", SM_DDB_FN_ATTRIBUTE_NOT_EXISTS, 1, FN_COND },
	{ "attribute_type", SM_DDB_FN_ATTRIBUTE_TYPE, 2, FN_COND },
	{ "begins_with", SM_DDB_FN_BEGINS_WITH, 2, FN_COND },
	{ "contains", SM_DDB_FN_CONTAINS, 2, FN_COND },
	{ "size", SM_DDB_FN_SIZE, 1, FN_OPERAND },
	{ "if_not_exists", SM_DDB_FN_IF_NOT_EXISTS, 2, FN_UPDATE },
	{ "list_append", SM_DDB_FN_LIST_APPEND, 2, FN_UPDATE },
};

static const struct ddb_fn *
fn_info(enum sm_ddb_func f)
{
	size_t i;

	for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		if (fns[i].func == f)
			return &fns[i];
	return NULL;
}

const char *
sm_ddb_expr_kind_name(enum sm_ddb_expr_kind kind)
{
	switch (kind) {
	case SM_DDB_CONDITION:
		return "ConditionExpression";
	case SM_DDB_FILTER:
		return "FilterExpression";
	case SM_DDB_KEY_CONDITION:
		return "KeyConditionExpression";
	case SM_DDB_UPDATE:
		return "UpdateExpression";
	case SM_DDB_PROJECTION:
		return "ProjectionExpression";
	}
	return "Expression";
}

static const char *const cmp_text[] = { "=", "<>", "<", "<=", ">", ">=" };

/* ---- parsing ---- */

/* "Invalid <Kind>: <msg>"; -EINVAL. */
static int
parse_fail(struct ddb_parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int
parse_fail(struct ddb_parser *p, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (p->errlen == 0)
		return -EINVAL;
	n = snprintf(p->err, p->errlen, "Invalid %s: ", sm_ddb_expr_kind_name(p->kind));
	if (n >= 0 && (size_t)n < p->errlen) {
		va_start(ap, fmt);
		vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static int
redundant_parens(struct ddb_parser *p)
{
	return parse_fail(p, "The expression has redundant parentheses;");
}

/* One level deeper into parentheses or a call: a syntax error past the limit. */
static int
enter(struct ddb_parser *p)
{
	if (p->depth >= SM_DDB_EXPR_MAX_NESTING)
		return ddb_syntax_fail(p);
	p->depth++;
	return 0;
}

static struct sm_ddb_operand *
new_operand(struct ddb_parser *p, enum sm_ddb_operand_kind kind)
{
	struct sm_ddb_operand *o = sm_arena_alloc(p->arena, sizeof(*o));

	if (o != NULL)
		o->kind = kind;
	return o;
}

static int
path_add_name(struct ddb_parser *p, struct sm_ddb_path *out, unsigned *cap, const struct ddb_tok *t)
{
	struct sm_ddb_path_elem *e;

	e = ddb_vec_add(p->arena, &out->elems, &out->nelems, cap, sizeof(*e));
	if (e == NULL)
		return -ENOMEM;
	e->name = ddb_tok_dup(p, t);
	if (e->name == NULL)
		return -ENOMEM;
	e->ref = t->type == DT_NAME;
	p->pos++;
	return 0;
}

/* [index], with the current token the index. */
static int
path_add_index(struct ddb_parser *p, struct sm_ddb_path *out, unsigned *cap)
{
	const struct ddb_tok *t = ddb_peek(p, 0);
	struct sm_ddb_path_elem *e;
	unsigned tok = p->pos, *bad;
	uint64_t v = 0;
	uint32_t i;
	int rc;

	if (t->type != DT_INT)
		return ddb_syntax_fail(p);
	p->pos++;
	rc = ddb_expect(p, DT_RBRACKET);
	if (rc < 0)
		return rc;
	e = ddb_vec_add(p->arena, &out->elems, &out->nelems, cap, sizeof(*e));
	if (e == NULL)
		return -ENOMEM;
	for (i = 0; i < t->len && i < 11; i++)
		v = v * 10 + (uint64_t)(p->text[t->off + i] - '0');
	if (t->len <= 10 && v <= SM_DDB_EXPR_MAX_INDEX) {
		e->index = (uint32_t)v;
		return 0;
	}
	/* Reported later, in the order DynamoDB checks things. */
	bad = ddb_vec_add(p->arena, &p->bad, &p->nbad, &p->capbad, sizeof(*bad));
	if (bad == NULL)
		return -ENOMEM;
	*bad = tok;
	e->index = SM_DDB_EXPR_MAX_INDEX + p->nbad;
	return 0;
}

static int
parse_path(struct ddb_parser *p, struct sm_ddb_path *out)
{
	const struct ddb_tok *t = ddb_peek(p, 0);
	unsigned cap = 0;
	int rc;

	out->elems = NULL;
	out->nelems = 0;
	if (t->type != DT_ID && t->type != DT_NAME)
		return ddb_syntax_fail(p);
	rc = path_add_name(p, out, &cap, t);
	while (rc == 0) {
		if (ddb_accept(p, DT_DOT)) {
			t = ddb_peek(p, 0);
			if (t->type != DT_ID && t->type != DT_NAME)
				return ddb_syntax_fail(p);
			rc = path_add_name(p, out, &cap, t);
		} else if (ddb_accept(p, DT_LBRACKET)) {
			rc = path_add_index(p, out, &cap);
		} else {
			break;
		}
	}
	return rc;
}

static int
parse_operand(struct ddb_parser *p, struct sm_ddb_operand **out);

/* name '(' operand (',' operand)* ')', with the current token the name. */
static int
parse_call(struct ddb_parser *p, struct sm_ddb_operand **out)
{
	const struct ddb_tok *t = ddb_peek(p, 0);
	struct sm_ddb_operand *o, *arg, **slot;
	unsigned cap = 0;
	size_t i;
	int rc;

	o = new_operand(p, SM_DDB_OP_CALL);
	if (o == NULL)
		return -ENOMEM;
	o->name = ddb_tok_dup(p, t);
	if (o->name == NULL)
		return -ENOMEM;
	o->func = DDB_FN_UNKNOWN;
	for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		if (strcmp(o->name, fns[i].name) == 0)
			o->func = fns[i].func;
	p->pos += 2; /* the name and '(' */
	rc = enter(p);
	if (rc < 0)
		return rc;
	do {
		rc = parse_operand(p, &arg);
		if (rc < 0)
			return rc;
		slot = ddb_vec_add(p->arena, &o->args, &o->nargs, &cap, sizeof(*slot));
		if (slot == NULL)
			return -ENOMEM;
		*slot = arg;
	} while (ddb_accept(p, DT_COMMA));
	rc = ddb_expect(p, DT_RPAREN);
	if (rc < 0)
		return rc;
	p->depth--;
	*out = o;
	return 0;
}

static int
parse_operand(struct ddb_parser *p, struct sm_ddb_operand **out)
{
	const struct ddb_tok *t = ddb_peek(p, 0);
	struct sm_ddb_operand *o;
	int rc;

	if (t->type == DT_VALUE) {
		o = new_operand(p, SM_DDB_OP_VALUE);
		if (o == NULL)
			return -ENOMEM;
		o->value = ddb_tok_dup(p, t);
		if (o->value == NULL)
			return -ENOMEM;
		p->pos++;
	} else if (t->type == DT_LPAREN) {
		rc = enter(p);
		if (rc < 0)
			return rc;
		p->pos++;
		rc = parse_operand(p, &o);
		if (rc < 0)
			return rc;
		rc = ddb_expect(p, DT_RPAREN);
		if (rc < 0)
			return rc;
		p->depth--;
		/* DynamoDB refuses two pairs straight around one thing. */
		if (o->parens)
			return redundant_parens(p);
		o->parens = true;
	} else if (t->type == DT_ID && ddb_peek(p, 1)->type == DT_LPAREN) {
		return parse_call(p, out);
	} else if (t->type == DT_ID || t->type == DT_NAME) {
		o = new_operand(p, SM_DDB_OP_PATH);
		if (o == NULL)
			return -ENOMEM;
		rc = parse_path(p, &o->path);
		if (rc < 0)
			return rc;
	} else {
		return ddb_syntax_fail(p);
	}
	*out = o;
	return 0;
}

static struct sm_ddb_cond *
new_cond(struct ddb_parser *p, enum sm_ddb_cond_kind kind, unsigned noperands)
{
	struct sm_ddb_cond *c = sm_arena_alloc(p->arena, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->kind = kind;
	if (noperands) {
		c->operands = sm_arena_alloc(p->arena, noperands * sizeof(*c->operands));
		if (c->operands == NULL)
			return NULL;
		c->noperands = noperands;
	}
	return c;
}

static int
parse_comparison(struct ddb_parser *p, struct sm_ddb_cond **out)
{
	struct sm_ddb_operand *a, *b, *hi, **list = NULL, **slot;
	enum ddb_tok_type type;
	struct sm_ddb_cond *c;
	unsigned n = 0, cap = 0;
	int rc;

	rc = parse_operand(p, &a);
	if (rc < 0)
		return rc;
	type = ddb_peek(p, 0)->type;
	switch (type) {
	case DT_EQ:
	case DT_NE:
	case DT_LT:
	case DT_LE:
	case DT_GT:
	case DT_GE:
		p->pos++;
		rc = parse_operand(p, &b);
		if (rc < 0)
			return rc;
		c = new_cond(p, SM_DDB_COND_CMP, 2);
		if (c == NULL)
			return -ENOMEM;
		c->op = (enum sm_ddb_cmp)(SM_DDB_EQ + (type - DT_EQ));
		c->operands[0] = a;
		c->operands[1] = b;
		break;
	case DT_BETWEEN:
		p->pos++;
		rc = parse_operand(p, &b);
		if (rc == 0)
			rc = ddb_expect(p, DT_AND);
		if (rc == 0)
			rc = parse_operand(p, &hi);
		if (rc < 0)
			return rc;
		c = new_cond(p, SM_DDB_COND_BETWEEN, 3);
		if (c == NULL)
			return -ENOMEM;
		c->operands[0] = a;
		c->operands[1] = b;
		c->operands[2] = hi;
		break;
	case DT_IN:
		p->pos++;
		rc = ddb_expect(p, DT_LPAREN);
		if (rc < 0)
			return rc;
		slot = ddb_vec_add(p->arena, &list, &n, &cap, sizeof(*slot));
		if (slot == NULL)
			return -ENOMEM;
		*slot = a;
		do {
			rc = parse_operand(p, &b);
			if (rc < 0)
				return rc;
			slot = ddb_vec_add(p->arena, &list, &n, &cap, sizeof(*slot));
			if (slot == NULL)
				return -ENOMEM;
			*slot = b;
		} while (ddb_accept(p, DT_COMMA));
		rc = ddb_expect(p, DT_RPAREN);
		if (rc < 0)
			return rc;
		c = new_cond(p, SM_DDB_COND_IN, 0);
		if (c == NULL)
			return -ENOMEM;
		c->operands = list;
		c->noperands = n;
		break;
	default:
		/* A function standing alone is a condition (if it is a boolean one). */
		if (a->kind != SM_DDB_OP_CALL || a->parens)
			return ddb_syntax_fail(p);
		c = new_cond(p, SM_DDB_COND_CALL, 1);
		if (c == NULL)
			return -ENOMEM;
		c->operands[0] = a;
		break;
	}
	*out = c;
	return 0;
}

static int
parse_or(struct ddb_parser *p, struct sm_ddb_cond **out);

static int
parse_primary(struct ddb_parser *p, struct sm_ddb_cond **out)
{
	unsigned start = p->pos, nbad = p->nbad, depth = p->depth, f1;
	struct sm_ddb_cond *c;
	int rc;

	if (ddb_peek(p, 0)->type != DT_LPAREN)
		return parse_comparison(p, out);
	/* '(' condition ')' first; else the '(' opens an operand: (a) = b */
	rc = enter(p);
	if (rc == 0) {
		p->pos++;
		rc = parse_or(p, &c);
	}
	if (rc == 0)
		rc = ddb_expect(p, DT_RPAREN);
	if (rc == 0) {
		p->depth--;
		if (c->parens)
			return redundant_parens(p);
		switch (ddb_peek(p, 0)->type) {
		case DT_AND:
		case DT_OR:
		case DT_RPAREN:
		case DT_EOF:
			c->parens = true;
			*out = c;
			return 0;
		default:
			/* nothing can follow: it was an operand, as in (size(a)) > :v */
			rc = ddb_syntax_fail(p);
			break;
		}
	}
	if (rc != -EBADMSG)
		return rc;
	f1 = p->fail_at;
	p->pos = start;
	p->nbad = nbad;
	p->depth = depth;
	rc = parse_comparison(p, out);
	if (rc == -EBADMSG && f1 > p->fail_at)
		p->fail_at = f1;
	return rc;
}

static int
parse_not(struct ddb_parser *p, struct sm_ddb_cond **out)
{
	struct sm_ddb_cond *c, *n;
	unsigned nots = 0;
	int rc;

	while (ddb_accept(p, DT_NOT))
		nots++;
	/*
	 * DynamoDB refuses more than 300 operators; of its count only NOT
	 * chains are bounded here (they nest the tree as deep as they are long;
	 * the rest nests through enter()).
	 */
	if (nots > SM_DDB_EXPR_MAX_OPERATORS)
		return parse_fail(p, "The expression contains too many operators; "
				     "operator count: %u",
				  SM_DDB_EXPR_MAX_OPERATORS + 1);
	rc = parse_primary(p, &c);
	if (rc < 0)
		return rc;
	while (nots--) {
		n = new_cond(p, SM_DDB_COND_NOT, 0);
		if (n == NULL)
			return -ENOMEM;
		n->left = c;
		c = n;
	}
	*out = c;
	return 0;
}

static int
parse_and(struct ddb_parser *p, struct sm_ddb_cond **out)
{
	struct sm_ddb_cond *c, *r, *n;
	int rc;

	rc = parse_not(p, &c);
	while (rc == 0 && ddb_accept(p, DT_AND)) {
		rc = parse_not(p, &r);
		if (rc < 0)
			return rc;
		n = new_cond(p, SM_DDB_COND_AND, 0);
		if (n == NULL)
			return -ENOMEM;
		n->left = c;
		n->right = r;
		c = n;
	}
	if (rc == 0)
		*out = c;
	return rc;
}

static int
parse_or(struct ddb_parser *p, struct sm_ddb_cond **out)
{
	struct sm_ddb_cond *c, *r, *n;
	int rc;

	rc = parse_and(p, &c);
	while (rc == 0 && ddb_accept(p, DT_OR)) {
		rc = parse_and(p, &r);
		if (rc < 0)
			return rc;
		n = new_cond(p, SM_DDB_COND_OR, 0);
		if (n == NULL)
			return -ENOMEM;
		n->left = c;
		n->right = r;
		c = n;
	}
	if (rc == 0)
		*out = c;
	return rc;
}

/* operand (('+' | '-') operand)? */
static int
parse_arith(struct ddb_parser *p, struct sm_ddb_operand **out)
{
	struct sm_ddb_operand *a = NULL, *b = NULL, *o;
	enum ddb_tok_type type;
	int rc;

	rc = parse_operand(p, &a);
	if (rc < 0)
		return rc;
	type = ddb_peek(p, 0)->type;
	if (type != DT_PLUS && type != DT_MINUS) {
		*out = a;
		return 0;
	}
	p->pos++;
	rc = parse_operand(p, &b);
	if (rc < 0)
		return rc;
	o = new_operand(p, type == DT_PLUS ? SM_DDB_OP_PLUS : SM_DDB_OP_MINUS);
	if (o == NULL)
		return -ENOMEM;
	o->args = sm_arena_alloc(p->arena, 2 * sizeof(*o->args));
	if (o->args == NULL)
		return -ENOMEM;
	o->args[0] = a;
	o->args[1] = b;
	o->nargs = 2;
	*out = o;
	return 0;
}

/* A SET value: arith, or the whole of it in parentheses: (a + :b). */
static int
parse_set_value(struct ddb_parser *p, struct sm_ddb_operand **out)
{
	unsigned start = p->pos, nbad = p->nbad, depth = p->depth, f1;
	struct sm_ddb_operand *o;
	int rc;

	rc = parse_arith(p, out);
	if (rc != -EBADMSG || p->toks[start].type != DT_LPAREN)
		return rc;
	f1 = p->fail_at;
	p->pos = start;
	p->nbad = nbad;
	p->depth = depth;
	rc = enter(p);
	if (rc == 0) {
		p->pos++;
		rc = parse_arith(p, &o);
	}
	if (rc == 0)
		rc = ddb_expect(p, DT_RPAREN);
	if (rc == 0) {
		p->depth--;
		if (o->parens)
			return redundant_parens(p);
		o->parens = true;
		*out = o;
		return 0;
	}
	if (rc == -EBADMSG && f1 > p->fail_at)
		p->fail_at = f1;
	return rc;
}

static int
parse_update(struct ddb_parser *p, struct sm_ddb_expr *e)
{
	unsigned cap = 0;
	enum sm_ddb_action_kind kind;
	struct sm_ddb_action *a;
	struct ddb_clause *cl;
	const struct ddb_tok *t;
	int rc;

	do {
		switch (ddb_peek(p, 0)->type) {
		case DT_SET:
			kind = SM_DDB_SET;
			break;
		case DT_REMOVE:
			kind = SM_DDB_REMOVE;
			break;
		case DT_ADD:
			kind = SM_DDB_ADD;
			break;
		case DT_DELETE:
			kind = SM_DDB_DELETE;
			break;
		default:
			return ddb_syntax_fail(p);
		}
		p->pos++;
		cl = ddb_vec_add(p->arena, &p->clauses, &p->nclauses, &p->capclauses, sizeof(*cl));
		if (cl == NULL)
			return -ENOMEM;
		cl->kind = kind;
		cl->first = e->nactions;
		do {
			a = ddb_vec_add(p->arena, &e->actions, &e->nactions, &cap, sizeof(*a));
			if (a == NULL)
				return -ENOMEM;
			a->kind = kind;
			rc = parse_path(p, &a->path);
			if (rc < 0)
				return rc;
			if (kind == SM_DDB_SET) {
				rc = ddb_expect(p, DT_EQ);
				if (rc == 0)
					rc = parse_set_value(p, &a->value);
				if (rc < 0)
					return rc;
			} else if (kind != SM_DDB_REMOVE) {
				t = ddb_peek(p, 0);
				if (t->type != DT_VALUE)
					return ddb_syntax_fail(p);
				a->value = new_operand(p, SM_DDB_OP_VALUE);
				if (a->value == NULL)
					return -ENOMEM;
				a->value->value = ddb_tok_dup(p, t);
				if (a->value->value == NULL)
					return -ENOMEM;
				p->pos++;
			}
		} while (ddb_accept(p, DT_COMMA));
		cl->n = e->nactions - cl->first;
	} while (ddb_peek(p, 0)->type != DT_EOF);
	return 0;
}

static int
parse_projection(struct ddb_parser *p, struct sm_ddb_expr *e)
{
	struct sm_ddb_path *path;
	unsigned cap = 0;
	int rc;

	do {
		path = ddb_vec_add(p->arena, &e->paths, &e->npaths, &cap, sizeof(*path));
		if (path == NULL)
			return -ENOMEM;
		rc = parse_path(p, path);
		if (rc < 0)
			return rc;
	} while (ddb_accept(p, DT_COMMA));
	return 0;
}

/* ---- first checks: what the text alone decides, in DynamoDB's order ---- */

/* Reserved words that DynamoDB nevertheless takes as names. */
static bool
reserved_name(const char *s)
{
	size_t n = strlen(s);

	if (!sm_ddb_is_reserved(s, n))
		return false;
	return strcasecmp(s, "size") != 0 && strcasecmp(s, "convert") != 0;
}

static int
p1_path(struct ddb_parser *p, const struct sm_ddb_path *path)
{
	const struct sm_ddb_path_elem *e;
	const struct ddb_tok *t;
	unsigned i;

	for (i = 0; i < path->nelems; i++) {
		e = &path->elems[i];
		if (e->name == NULL) {
			if (e->index <= SM_DDB_EXPR_MAX_INDEX)
				continue;
			t = &p->toks[p->bad[e->index - SM_DDB_EXPR_MAX_INDEX - 1]];
			return parse_fail(
				p, "List index is not within the allowable range; index: [%.*s]",
				(int)t->len, p->text + t->off);
		}
		if (!e->ref && reserved_name(e->name))
			return parse_fail(
				p, "Attribute name is a reserved keyword; reserved keyword: %s",
				e->name);
	}
	return 0;
}

/* Where an operand stands. */
enum p1_place {
	AT_COND,    /* it is the condition */
	AT_OPERAND, /* an operand */
	AT_IN_CALL, /* an UpdateExpression function's argument */
};

static int
p1_operand(struct ddb_parser *p, const struct sm_ddb_operand *o, enum p1_place at)
{
	const struct ddb_fn *fn;
	bool update = p->kind == SM_DDB_UPDATE;
	unsigned i;
	int rc;

	switch (o->kind) {
	case SM_DDB_OP_PATH:
		return p1_path(p, &o->path);
	case SM_DDB_OP_VALUE:
		return 0;
	case SM_DDB_OP_PLUS:
	case SM_DDB_OP_MINUS:
		break;
	case SM_DDB_OP_CALL:
		fn = fn_info(o->func);
		if (fn == NULL)
			return parse_fail(p, "Invalid function name; function: %s", o->name);
		if (update) {
			if (fn->place != FN_UPDATE)
				return parse_fail(
					p,
					"The function is not allowed in an update expression; "
					"function: %s",
					o->name);
			if (fn->func == SM_DDB_FN_LIST_APPEND && at == AT_IN_CALL)
				return parse_fail(
					p,
					"The function is not allowed to be used this way in an "
					"expression; function: %s",
					o->name);
		} else {
			if (fn->place == FN_UPDATE)
				return parse_fail(
					p,
					"The function is not allowed in a condition expression; "
					"function: %s",
					o->name);
			if ((at == AT_COND) != (fn->place == FN_COND))
				return parse_fail(
					p,
					"The function is not allowed to be used this way in an "
					"expression; function: %s",
					o->name);
			/* An update's functions are counted later, with the placeholders. */
			if (o->nargs != fn->nargs)
				return parse_fail(
					p,
					"Incorrect number of operands for operator or function; "
					"operator or function: %s, number of operands: %u",
					o->name, o->nargs);
		}
		at = update ? AT_IN_CALL : AT_OPERAND;
		break;
	}
	for (i = 0; i < o->nargs; i++) {
		rc = p1_operand(p, o->args[i], at == AT_COND ? AT_OPERAND : at);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int
p1_cond(struct ddb_parser *p, const struct sm_ddb_cond *c)
{
	unsigned i;
	int rc;

	switch (c->kind) {
	case SM_DDB_COND_OR:
	case SM_DDB_COND_AND:
		rc = p1_cond(p, c->left);
		return rc < 0 ? rc : p1_cond(p, c->right);
	case SM_DDB_COND_NOT:
		return p1_cond(p, c->left);
	case SM_DDB_COND_CALL:
		return p1_operand(p, c->operands[0], AT_COND);
	default:
		for (i = 0; i < c->noperands; i++) {
			rc = p1_operand(p, c->operands[i], AT_OPERAND);
			if (rc < 0)
				return rc;
		}
		return 0;
	}
}

static const char *const section_name[] = { "SET", "REMOVE", "ADD", "DELETE" };

/* A section at a time, in the order sections first appear; each may appear once. */
static int
p1_update(struct ddb_parser *p, const struct sm_ddb_expr *e)
{
	enum sm_ddb_action_kind order[4];
	unsigned norder = 0, i, j, k, nclauses;
	const struct sm_ddb_action *a;
	int rc;

	for (i = 0; i < p->nclauses; i++) {
		for (j = 0; j < norder && order[j] != p->clauses[i].kind; j++)
			;
		if (j == norder)
			order[norder++] = p->clauses[i].kind;
	}
	for (j = 0; j < norder; j++) {
		nclauses = 0;
		for (i = 0; i < p->nclauses; i++) {
			if (p->clauses[i].kind != order[j])
				continue;
			nclauses++;
			for (k = 0; k < p->clauses[i].n; k++) {
				a = &e->actions[p->clauses[i].first + k];
				rc = p1_path(p, &a->path);
				if (rc == 0 && a->value != NULL)
					rc = p1_operand(p, a->value, AT_OPERAND);
				if (rc < 0)
					return rc;
			}
		}
		if (nclauses > 1)
			return parse_fail(p,
					  "The \"%s\" section can only be used once in an update "
					  "expression;",
					  section_name[order[j]]);
	}
	return 0;
}

static int
p1_expr(struct ddb_parser *p, const struct sm_ddb_expr *e)
{
	unsigned i;
	int rc;

	switch (e->kind) {
	case SM_DDB_UPDATE:
		return p1_update(p, e);
	case SM_DDB_PROJECTION:
		for (i = 0; i < e->npaths; i++) {
			rc = p1_path(p, &e->paths[i]);
			if (rc < 0)
				return rc;
		}
		return 0;
	default:
		return p1_cond(p, e->cond);
	}
}

/* ---- placeholders used ---- */

/* Every use, repeats too: refs_unique() drops them once all are in. */
static int
add_ref(struct sm_arena *a, const char ***arr, unsigned *n, unsigned *cap, const char *ref)
{
	const char **slot = ddb_vec_add(a, arr, n, cap, sizeof(*slot));

	if (slot == NULL)
		return -ENOMEM;
	*slot = ref;
	return 0;
}

static int
ref_order(const void *x, const void *y, void *arg)
{
	const char *const *refs = arg;
	unsigned a = *(const unsigned *)x, b = *(const unsigned *)y;
	int c = strcmp(refs[a], refs[b]);

	return c ? c : (a > b) - (a < b);
}

/* Up to this many placeholder uses are deduplicated and searched by comparing each. */
#define SMALL_REFS 16

/*
 * Keep the first use of each placeholder, in order, and the same sorted in
 * *@sorted (NULL for a few): sorted, not searched per use.
 */
static int
refs_unique(struct sm_arena *a, const char **refs, unsigned *n, const char ***sorted)
{
	unsigned *idx, i, k;
	bool *keep;

	*sorted = NULL;
	if (*n <= SMALL_REFS) {
		/* a few (every request on the hot path): compared in place, scanned by uses() */
		for (i = 0, k = 0; i < *n; i++) {
			unsigned j;

			for (j = 0; j < k && strcmp(refs[j], refs[i]) != 0; j++)
				;
			if (j == k)
				refs[k++] = refs[i];
		}
		*n = k;
		return 0;
	}
	idx = sm_arena_alloc(a, (size_t)*n * sizeof(*idx));
	keep = sm_arena_alloc(a, (size_t)*n * sizeof(*keep));
	*sorted = sm_arena_alloc(a, (size_t)*n * sizeof(**sorted));
	if (idx == NULL || keep == NULL || *sorted == NULL)
		return -ENOMEM;
	for (i = 0; i < *n; i++)
		idx[i] = i;
	qsort_r(idx, *n, sizeof(*idx), ref_order, refs);
	for (i = 0, k = 0; i < *n; i++) {
		keep[idx[i]] = i == 0 || strcmp(refs[idx[i - 1]], refs[idx[i]]) != 0;
		if (keep[idx[i]])
			(*sorted)[k++] = refs[idx[i]];
	}
	for (i = 0, k = 0; i < *n; i++)
		if (keep[i])
			refs[k++] = refs[i];
	*n = k;
	return 0;
}

struct refs {
	struct sm_ddb_expr *e;
	unsigned capnames;
	unsigned capvalues;
};

static int
refs_path(struct refs *r, const struct sm_ddb_path *path)
{
	unsigned i;
	int rc;

	for (i = 0; i < path->nelems; i++) {
		if (!path->elems[i].ref)
			continue;
		rc = add_ref(r->e->arena, &r->e->names, &r->e->nnames, &r->capnames,
			     path->elems[i].name);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int
refs_operand(struct refs *r, const struct sm_ddb_operand *o)
{
	unsigned i;
	int rc;

	if (o->kind == SM_DDB_OP_PATH)
		return refs_path(r, &o->path);
	if (o->kind == SM_DDB_OP_VALUE)
		return add_ref(r->e->arena, &r->e->values, &r->e->nvalues, &r->capvalues, o->value);
	for (i = 0; i < o->nargs; i++) {
		rc = refs_operand(r, o->args[i]);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int
refs_cond(struct refs *r, const struct sm_ddb_cond *c)
{
	unsigned i;
	int rc;

	if (c->left != NULL) {
		rc = refs_cond(r, c->left);
		if (rc < 0)
			return rc;
	}
	if (c->right != NULL) {
		rc = refs_cond(r, c->right);
		if (rc < 0)
			return rc;
	}
	for (i = 0; i < c->noperands; i++) {
		rc = refs_operand(r, c->operands[i]);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Fill e->names and e->values, in the order written. */
static int
collect_refs(struct sm_ddb_expr *e)
{
	struct refs r = { .e = e };
	unsigned i;
	int rc = 0;

	switch (e->kind) {
	case SM_DDB_UPDATE:
		for (i = 0; i < e->nactions && rc == 0; i++) {
			rc = refs_path(&r, &e->actions[i].path);
			if (rc == 0 && e->actions[i].value != NULL)
				rc = refs_operand(&r, e->actions[i].value);
		}
		break;
	case SM_DDB_PROJECTION:
		for (i = 0; i < e->npaths && rc == 0; i++)
			rc = refs_path(&r, &e->paths[i]);
		break;
	default:
		rc = refs_cond(&r, e->cond);
		break;
	}
	if (rc == 0)
		rc = refs_unique(e->arena, e->names, &e->nnames, &e->names_sorted);
	if (rc == 0)
		rc = refs_unique(e->arena, e->values, &e->nvalues, &e->values_sorted);
	return rc;
}

/* ---- parse ---- */

/* Tokens for expressions up to this long live on the stack. */
#define DDB_STACK_TOKS 128u

int
sm_ddb_expr_parse(enum sm_ddb_expr_kind kind, const char *text, size_t len,
		  const struct sm_ddb_expr_env *env, struct sm_ddb_expr **out, char *err,
		  size_t errlen)
{
	struct ddb_tok stack_toks[DDB_STACK_TOKS];
	struct ddb_parser p = {
		.text = text, .len = len, .kind = kind, .err = err, .errlen = errlen
	};
	struct sm_ddb_expr *e;
	int rc;

	*out = NULL;
	if (errlen)
		err[0] = '\0';
	if (len == 0)
		return ddb_errf(err, errlen, "Invalid %s: The expression can not be empty;",
				sm_ddb_expr_kind_name(kind));
	if (len > SM_DDB_EXPR_MAX_LEN)
		return ddb_errf(
			err, errlen,
			"Invalid %s: Expression size has exceeded the maximum allowed size; "
			"expression size: %zu",
			sm_ddb_expr_kind_name(kind), len);
	/* at most one token a byte, and the end */
	if (len + 1 <= DDB_STACK_TOKS) {
		p.toks = stack_toks;
	} else {
		p.toks = sm_malloc((len + 1) * sizeof(*p.toks));
		if (p.toks == NULL)
			return -ENOMEM;
	}
	/*
	 * Nodes take about a dozen bytes per byte of text, and the reference
	 * lists collected after the parse as much again, growing by doubling:
	 * with room for both, one chunk serves a whole parse (a 52-byte SET of
	 * five attributes took a second chunk, a second allocation, with 12).
	 */
	p.arena = sm_arena_new(1024 + len * 48);
	if (p.arena == NULL) {
		rc = -ENOMEM;
		goto free_toks;
	}
	e = sm_arena_alloc(p.arena, sizeof(*e));
	if (e == NULL) {
		rc = -ENOMEM;
		goto free_arena;
	}
	e->kind = kind;
	e->arena = p.arena;
	ddb_lex(&p);
	switch (kind) {
	case SM_DDB_UPDATE:
		rc = parse_update(&p, e);
		break;
	case SM_DDB_PROJECTION:
		rc = parse_projection(&p, e);
		break;
	default:
		rc = parse_or(&p, &e->cond);
		break;
	}
	if (rc == 0 && ddb_peek(&p, 0)->type != DT_EOF)
		rc = ddb_syntax_fail(&p);
	if (rc == -EBADMSG)
		rc = ddb_syntax_message(&p);
	if (rc == 0)
		rc = p1_expr(&p, e);
	if (rc == 0)
		rc = collect_refs(e);
	if (rc == 0)
		rc = sm_ddb_expr_check(e, env, err, errlen);
	if (rc < 0)
		goto free_arena;
	if (p.toks != stack_toks)
		sm_free(p.toks);
	*out = e;
	return 0;
free_arena:
	sm_arena_free(p.arena);
free_toks:
	if (p.toks != stack_toks)
		sm_free(p.toks);
	return rc;
}

void
sm_ddb_expr_free(struct sm_ddb_expr *e)
{
	if (e != NULL)
		sm_arena_free(e->arena);
}

/* ---- second checks: with the placeholder maps, in DynamoDB's order ---- */

struct ddb_ck {
	const struct sm_ddb_expr *e;
	const struct sm_ddb_expr_env *env;
	char *err;
	size_t errlen;
	size_t n; /* bytes of err written so far */
};

static void __attribute__((format(printf, 2, 0)))
ck_vappend(struct ddb_ck *ck, const char *fmt, va_list ap)
{
	int w;

	if (ck->errlen == 0 || ck->n + 1 >= ck->errlen)
		return;
	w = vsnprintf(ck->err + ck->n, ck->errlen - ck->n, fmt, ap);
	if (w < 0)
		return;
	ck->n += (size_t)w;
	if (ck->n >= ck->errlen)
		ck->n = ck->errlen - 1;
}

static void
ck_append(struct ddb_ck *ck, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
ck_append(struct ddb_ck *ck, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ck_vappend(ck, fmt, ap);
	va_end(ap);
}

/* Start "Invalid <Kind>: <fmt>"; more may be appended. */
static int
ck_fail(struct ddb_ck *ck, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int
ck_fail(struct ddb_ck *ck, const char *fmt, ...)
{
	va_list ap;

	ck->n = 0;
	ck_append(ck, "Invalid %s: ", sm_ddb_expr_kind_name(ck->e->kind));
	va_start(ap, fmt);
	ck_vappend(ck, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* The name an element stands for: as written without an env, NULL when undefined. */
static const char *
ck_name(const struct ddb_ck *ck, const struct sm_ddb_path_elem *el)
{
	if (!el->ref || ck->env == NULL)
		return el->name;
	if (ck->env->name == NULL)
		return NULL;
	return ck->env->name(ck->env->arg, el->name);
}

/* A value's type: NULL when undefined, "" when not known. */
static const char *
ck_value_type(const struct ddb_ck *ck, const char *ref)
{
	if (ck->env == NULL)
		return "";
	if (ck->env->value_type == NULL)
		return NULL;
	return ck->env->value_type(ck->env->arg, ref);
}

/* "[a, b, [0]]" with names resolved, appended to the message. */
static void
ck_path_text(struct ddb_ck *ck, const struct sm_ddb_path *path)
{
	const char *name;
	unsigned i;

	ck_append(ck, "[");
	for (i = 0; i < path->nelems; i++) {
		if (i > 0)
			ck_append(ck, ", ");
		if (path->elems[i].name == NULL) {
			ck_append(ck, "[%u]", path->elems[i].index);
		} else {
			name = ck_name(ck, &path->elems[i]);
			ck_append(ck, "%s", name != NULL ? name : path->elems[i].name);
		}
	}
	ck_append(ck, "]");
}

static bool
same_elem(const struct ddb_ck *ck, const struct sm_ddb_path_elem *a,
	  const struct sm_ddb_path_elem *b)
{
	const char *x, *y;

	if (a->name == NULL || b->name == NULL)
		return a->name == NULL && b->name == NULL && a->index == b->index;
	x = ck_name(ck, a);
	y = ck_name(ck, b);
	return x != NULL && y != NULL && strcmp(x, y) == 0;
}

static bool
same_path(const struct ddb_ck *ck, const struct sm_ddb_path *a, const struct sm_ddb_path *b)
{
	unsigned i;

	if (a->nelems != b->nelems)
		return false;
	for (i = 0; i < a->nelems; i++)
		if (!same_elem(ck, &a->elems[i], &b->elems[i]))
			return false;
	return true;
}

static int
ck_path_names(struct ddb_ck *ck, const struct sm_ddb_path *path)
{
	unsigned i;

	if (ck->env == NULL)
		return 0;
	for (i = 0; i < path->nelems; i++)
		if (path->elems[i].ref && ck_name(ck, &path->elems[i]) == NULL)
			return ck_fail(
				ck,
				"An expression attribute name used in the document path is not "
				"defined; attribute name: %s",
				path->elems[i].name);
	return 0;
}

static int
ck_path(struct ddb_ck *ck, const struct sm_ddb_path *path)
{
	int rc = ck_path_names(ck, path);

	if (rc < 0)
		return rc;
	if (path->nelems > SM_DDB_EXPR_MAX_PATH)
		return ck_fail(ck,
			       "The document path has too many nesting levels; nesting levels: %u",
			       path->nelems);
	return 0;
}

/* Only the #names, in every path of @o. */
static int
ck_names_only(struct ddb_ck *ck, const struct sm_ddb_operand *o)
{
	unsigned i;
	int rc;

	if (o == NULL)
		return 0;
	if (o->kind == SM_DDB_OP_PATH)
		return ck_path_names(ck, &o->path);
	for (i = 0; i < o->nargs; i++) {
		rc = ck_names_only(ck, o->args[i]);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* What the request alone says of an operand's type: a value's, N for size(). */
static const char *
static_type(const struct ddb_ck *ck, const struct sm_ddb_operand *o)
{
	const char *t;

	if (o->kind == SM_DDB_OP_CALL && o->func == SM_DDB_FN_SIZE)
		return "N";
	if (o->kind != SM_DDB_OP_VALUE)
		return NULL;
	t = ck_value_type(ck, o->value);
	return t != NULL && t[0] != '\0' ? t : NULL;
}

static bool
type_in(const char *t, const char *const *set)
{
	for (; *set != NULL; set++)
		if (strcmp(t, *set) == 0)
			return true;
	return false;
}

static const char *const scalar_types[] = { "S", "N", "B", NULL };

/* An operand whose known type is not in @ok: "Incorrect operand type ...". */
static int
ck_type(struct ddb_ck *ck, const char *op, const struct sm_ddb_operand *o, const char *const *ok)
{
	const char *t = static_type(ck, o);

	if (t == NULL || type_in(t, ok))
		return 0;
	return ck_fail(ck,
		       "Incorrect operand type for operator or function; operator or function: %s, "
		       "operand type: %s",
		       op, t);
}

static int
ck_distinct(struct ddb_ck *ck, const char *op, const struct sm_ddb_operand *first,
	    struct sm_ddb_operand *const *rest, unsigned n)
{
	unsigned i;

	if (first->kind != SM_DDB_OP_PATH)
		return 0;
	for (i = 0; i < n; i++) {
		if (rest[i]->kind != SM_DDB_OP_PATH || !same_path(ck, &first->path, &rest[i]->path))
			continue;
		ck_fail(ck,
			"The first operand must be distinct from the remaining operands for this "
			"operator or function; operator: %s, first operand: ",
			op);
		ck_path_text(ck, &first->path);
		return -EINVAL;
	}
	return 0;
}

static int
ck_operand(struct ddb_ck *ck, const struct sm_ddb_operand *o);

static int
ck_call(struct ddb_ck *ck, const struct sm_ddb_operand *o)
{
	static const char *const str_bin[] = { "S", "B", NULL };
	static const char *const sized[] = { "S", "B", "SS", "NS", "BS", "L", "M", NULL };
	static const char *const str[] = { "S", NULL };
	static const char *const list[] = { "L", NULL };
	const struct ddb_fn *fn = fn_info(o->func);
	unsigned i;
	int rc;

	if (ck->e->kind == SM_DDB_UPDATE && o->nargs != fn->nargs)
		return ck_fail(ck,
			       "Incorrect number of operands for operator or function; operator or "
			       "function: %s, number of operands: %u",
			       o->name, o->nargs);
	for (i = 0; i < o->nargs; i++) {
		rc = ck_operand(ck, o->args[i]);
		if (rc < 0)
			return rc;
	}
	/* attribute_type() takes a value as well (ScyllaDB's test_condition_expression.py) */
	switch (o->func) {
	case SM_DDB_FN_ATTRIBUTE_EXISTS:
	case SM_DDB_FN_ATTRIBUTE_NOT_EXISTS:
	case SM_DDB_FN_IF_NOT_EXISTS:
		if (o->args[0]->kind != SM_DDB_OP_PATH)
			return ck_fail(ck,
				       "Operator or function requires a document path; operator or "
				       "function: %s",
				       o->name);
		break;
	case SM_DDB_FN_ATTRIBUTE_TYPE:
		if (o->args[0]->kind == SM_DDB_OP_CALL)
			return ck_fail(ck,
				       "Operator or function requires a document path; operator or "
				       "function: %s",
				       o->name);
		break;
	default:
		break;
	}
	if (o->func != SM_DDB_FN_SIZE && o->func != SM_DDB_FN_LIST_APPEND) {
		rc = ck_distinct(ck, o->name, o->args[0], o->args + 1, o->nargs - 1);
		if (rc < 0)
			return rc;
	}
	switch (o->func) {
	case SM_DDB_FN_SIZE:
		return ck_type(ck, o->name, o->args[0], sized);
	case SM_DDB_FN_BEGINS_WITH:
	case SM_DDB_FN_LIST_APPEND:
		for (i = 0; i < o->nargs; i++) {
			rc = ck_type(ck, o->name, o->args[i],
				     o->func == SM_DDB_FN_LIST_APPEND ? list : str_bin);
			if (rc < 0)
				return rc;
		}
		return 0;
	case SM_DDB_FN_ATTRIBUTE_TYPE:
		return o->nargs > 1 ? ck_type(ck, o->name, o->args[1], str) : 0;
	default:
		return 0;
	}
}

static int
ck_operand(struct ddb_ck *ck, const struct sm_ddb_operand *o)
{
	static const char *const num[] = { "N", NULL };
	int rc;

	switch (o->kind) {
	case SM_DDB_OP_PATH:
		return ck_path(ck, &o->path);
	case SM_DDB_OP_VALUE:
		if (ck_value_type(ck, o->value) == NULL)
			return ck_fail(ck,
				       "An expression attribute value used in expression is not "
				       "defined; attribute value: %s",
				       o->value);
		return 0;
	case SM_DDB_OP_CALL:
		return ck_call(ck, o);
	case SM_DDB_OP_PLUS:
	case SM_DDB_OP_MINUS:
		rc = ck_operand(ck, o->args[0]);
		if (rc == 0)
			rc = ck_operand(ck, o->args[1]);
		if (rc == 0)
			rc = ck_type(ck, o->kind == SM_DDB_OP_PLUS ? "+" : "-", o->args[0], num);
		if (rc == 0)
			rc = ck_type(ck, o->kind == SM_DDB_OP_PLUS ? "+" : "-", o->args[1], num);
		return rc;
	}
	return 0;
}

static int
ck_cond(struct ddb_ck *ck, const struct sm_ddb_cond *c)
{
	const char *op = NULL;
	unsigned i;
	int rc;

	switch (c->kind) {
	case SM_DDB_COND_OR:
	case SM_DDB_COND_AND:
		rc = ck_cond(ck, c->left);
		return rc < 0 ? rc : ck_cond(ck, c->right);
	case SM_DDB_COND_NOT:
		return ck_cond(ck, c->left);
	case SM_DDB_COND_CALL:
		return ck_operand(ck, c->operands[0]);
	case SM_DDB_COND_CMP:
		op = cmp_text[c->op];
		break;
	case SM_DDB_COND_BETWEEN:
		op = "BETWEEN";
		break;
	case SM_DDB_COND_IN:
		op = "IN";
		break;
	}
	for (i = 0; i < c->noperands; i++) {
		rc = ck_operand(ck, c->operands[i]);
		if (rc < 0)
			return rc;
	}
	if (c->kind == SM_DDB_COND_IN && c->noperands - 1 > SM_DDB_EXPR_MAX_IN)
		return ck_fail(ck,
			       "The IN operator is provided with too many operands; number of "
			       "operands: %u",
			       c->noperands - 1);
	rc = ck_distinct(ck, op, c->operands[0], c->operands + 1, c->noperands - 1);
	if (rc < 0)
		return rc;
	if (c->kind == SM_DDB_COND_IN || (c->kind == SM_DDB_COND_CMP && c->op <= SM_DDB_NE))
		return 0;
	/* ordering needs a scalar */
	for (i = 0; i < c->noperands; i++) {
		rc = ck_type(ck, op, c->operands[i], scalar_types);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/*
 * No two paths may be the same or one inside the other ("overlap"), nor use
 * one element as a map key in one and a list index in the other
 * ("conflict"). @n paths, @stride bytes apart from @base.
 *
 * DynamoDB names the first path (in the order written) that clashes with an
 * earlier one, and of those earlier ones the first. Comparing every pair
 * finds that in n^2, fine for a few paths but not for the 2,000 that fit in
 * an expression (each comparison resolving #names); past OV_PAIRWISE the
 * paths are sorted into a trie instead, where
 * two paths clash exactly when one ends at a node the other passes (or
 * ends at), or they leave a node by children of different kinds.
 */
struct ov_node {
	unsigned parent;
	bool index;	  /* the element leading here is a list index */
	unsigned term;	  /* first path (in writing order) ending here */
	unsigned sub[2];  /* the first two paths ending in this subtree */
	unsigned kind[2]; /* first path through a name child / an index child */
};

struct ov_ctx {
	const struct sm_ddb_path **paths;
	const char **names; /* every element's resolved name (NULL: an index or undefined) */
	unsigned *first;    /* paths' first element in names[] */
};

#define OV_NONE UINT_MAX

/* Elements in trie order: names before indices, then by name (undefined ones never equal) or index. */
static int
ov_elem_cmp(const struct ov_ctx *c, unsigned pa, unsigned ka, unsigned pb, unsigned kb)
{
	const struct sm_ddb_path_elem *x = &c->paths[pa]->elems[ka], *y = &c->paths[pb]->elems[kb];
	const char *nx = c->names[c->first[pa] + ka], *ny = c->names[c->first[pb] + kb];

	if ((x->name == NULL) != (y->name == NULL))
		return x->name == NULL ? 1 : -1;
	if (x->name == NULL)
		return (x->index > y->index) - (x->index < y->index);
	if (nx == NULL || ny == NULL) {
		/* an undefined name equals nothing, itself in another path included */
		if (nx != NULL || ny != NULL)
			return nx == NULL ? 1 : -1;
		return (pa > pb) - (pa < pb);
	}
	return strcmp(nx, ny);
}

/* Elements paths @a and @b share from the start. */
static unsigned
ov_lcp(const struct ov_ctx *c, unsigned a, unsigned b)
{
	unsigned k, m = SM_MIN(c->paths[a]->nelems, c->paths[b]->nelems);

	for (k = 0; k < m && ov_elem_cmp(c, a, k, b, k) == 0; k++)
		;
	return k;
}

static int
ov_path_cmp(const void *x, const void *y, void *arg)
{
	const struct ov_ctx *c = arg;
	unsigned a = *(const unsigned *)x, b = *(const unsigned *)y;
	unsigned k = ov_lcp(c, a, b), la = c->paths[a]->nelems, lb = c->paths[b]->nelems;

	if (k < la && k < lb)
		return ov_elem_cmp(c, a, k, b, k);
	if (la != lb)
		return la < lb ? -1 : 1;
	return (a > b) - (a < b);
}

static void
ov_sub_add(struct ov_node *v, unsigned i)
{
	if (i < v->sub[0]) {
		v->sub[1] = v->sub[0];
		v->sub[0] = i;
	} else if (i < v->sub[1] && i != v->sub[0]) {
		v->sub[1] = i;
	}
}

/* Up to this many paths are compared pair by pair (no allocation: the hot path). */
#define OV_PAIRWISE 16

/* "overlap", "conflict" or NULL for paths @a and @b. */
static const char *
ov_pair(const struct ddb_ck *ck, const struct sm_ddb_path *a, const struct sm_ddb_path *b)
{
	unsigned k, m = SM_MIN(a->nelems, b->nelems);

	for (k = 0; k < m; k++) {
		if ((a->elems[k].name == NULL) != (b->elems[k].name == NULL))
			return "conflict";
		if (!same_elem(ck, &a->elems[k], &b->elems[k]))
			return NULL;
	}
	return "overlap";
}

static int
ov_report(struct ddb_ck *ck, const char *what, const struct sm_ddb_path *a,
	  const struct sm_ddb_path *b)
{
	ck_fail(ck,
		"Two document paths %s with each other; must remove or rewrite one "
		"of these paths; path one: ",
		what);
	ck_path_text(ck, a);
	ck_append(ck, ", path two: ");
	ck_path_text(ck, b);
	return -EINVAL;
}

static int
ck_overlap(struct ddb_ck *ck, const void *base, size_t stride, unsigned n)
{
	struct ov_ctx c = { NULL, NULL, NULL };
	unsigned *order = NULL, *nodeof = NULL, total = 0, nnodes = 1, i, j, k, d, len, prev;
	unsigned best_j = OV_NONE, best_i = OV_NONE, cand;
	struct ov_node *nodes = NULL;
	const char *what = NULL, *cand_what;
	int rc = -ENOMEM;

	if (n <= OV_PAIRWISE) {
		const struct sm_ddb_path *a, *b;

		for (j = 1; j < n; j++) {
			b = (const struct sm_ddb_path *)((const char *)base + j * stride);
			for (i = 0; i < j; i++) {
				a = (const struct sm_ddb_path *)((const char *)base + i * stride);
				what = ov_pair(ck, a, b);
				if (what != NULL)
					return ov_report(ck, what, a, b);
			}
		}
		return 0;
	}
	c.paths = sm_malloc((size_t)n * sizeof(*c.paths));
	c.first = sm_malloc(((size_t)n + 1) * sizeof(*c.first));
	order = sm_malloc((size_t)n * sizeof(*order));
	if (c.paths == NULL || c.first == NULL || order == NULL)
		goto out;
	for (i = 0; i < n; i++) {
		c.paths[i] = (const struct sm_ddb_path *)((const char *)base + i * stride);
		c.first[i] = total;
		total += c.paths[i]->nelems;
		order[i] = i;
	}
	c.first[n] = total;
	c.names = sm_malloc(((size_t)total + 1) * sizeof(*c.names));
	nodeof = sm_malloc(((size_t)total + 1) * sizeof(*nodeof));
	nodes = sm_malloc(((size_t)total + 1) * sizeof(*nodes));
	if (c.names == NULL || nodeof == NULL || nodes == NULL)
		goto out;
	/* every #name resolved once */
	for (i = 0; i < n; i++)
		for (k = 0; k < c.paths[i]->nelems; k++)
			c.names[c.first[i] + k] = c.paths[i]->elems[k].name != NULL
							  ? ck_name(ck, &c.paths[i]->elems[k])
							  : NULL;
	qsort_r(order, n, sizeof(*order), ov_path_cmp, &c);

	/* the trie: a path shares the nodes of its common prefix with the one before */
	nodes[0] =
		(struct ov_node){ 0, false, OV_NONE, { OV_NONE, OV_NONE }, { OV_NONE, OV_NONE } };
	for (j = 0; j < n; j++) {
		i = order[j];
		len = c.paths[i]->nelems;
		d = j > 0 ? ov_lcp(&c, order[j - 1], i) : 0;
		for (k = 0; k < len; k++) {
			if (k < d) {
				nodeof[c.first[i] + k] = nodeof[c.first[order[j - 1]] + k];
				continue;
			}
			nodes[nnodes] = (struct ov_node){
				k > 0 ? nodeof[c.first[i] + k - 1] : 0,
				c.paths[i]->elems[k].name == NULL,
				OV_NONE,
				{ OV_NONE, OV_NONE },
				{ OV_NONE, OV_NONE },
			};
			nodeof[c.first[i] + k] = nnodes++;
		}
		if (len > 0) {
			struct ov_node *end = &nodes[nodeof[c.first[i] + len - 1]];

			end->term = SM_MIN(end->term, i);
			ov_sub_add(end, i);
		}
	}
	/* children come after their parents: fold subtrees upwards */
	for (k = nnodes; k-- > 1;) {
		struct ov_node *v = &nodes[k], *u = &nodes[v->parent];

		ov_sub_add(u, v->sub[0]);
		ov_sub_add(u, v->sub[1]);
		u->kind[v->index] = SM_MIN(u->kind[v->index], v->sub[0]);
	}
	/* each path's first clash: a prefix of it, a path through its end, or a kind apart */
	for (i = 0; i < n; i++) {
		len = c.paths[i]->nelems;
		if (len == 0)
			continue;
		cand = OV_NONE;
		cand_what = NULL;
		for (k = 0, prev = 0; k < len; k++) {
			struct ov_node *v = &nodes[nodeof[c.first[i] + k]], *u = &nodes[prev];
			unsigned x = u->kind[!v->index];

			if (x < cand) {
				cand = x;
				cand_what = "conflict";
			}
			if (k + 1 < len && v->term < cand) {
				cand = v->term;
				cand_what = "overlap";
			}
			if (k + 1 == len) {
				x = v->sub[0] != i ? v->sub[0] : v->sub[1];
				if (x < cand) {
					cand = x;
					cand_what = "overlap";
				}
			}
			prev = nodeof[c.first[i] + k];
		}
		if (cand < i && i < best_j) {
			best_j = i;
			best_i = cand;
			what = cand_what;
		}
	}
	rc = best_j != OV_NONE ? ov_report(ck, what, c.paths[best_i], c.paths[best_j]) : 0;
out:
	sm_free(c.paths);
	sm_free(c.first);
	sm_free(c.names);
	sm_free(order);
	sm_free(nodeof);
	sm_free(nodes);
	return rc;
}

static const char *
long_type(const char *t)
{
	static const char *const map[][2] = {
		{ "S", "STRING" },	{ "N", "NUMBER" },	{ "B", "BINARY" },
		{ "BOOL", "BOOLEAN" },	{ "NULL", "NULL" },	{ "L", "LIST" },
		{ "M", "MAP" },		{ "SS", "STRING_SET" }, { "NS", "NUMBER_SET" },
		{ "BS", "BINARY_SET" },
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(map[i][0], t) == 0)
			return map[i][1];
	return t;
}

static int
ck_update(struct ddb_ck *ck)
{
	static const char *const add_ok[] = { "N", "SS", "NS", "BS", NULL };
	static const char *const del_ok[] = { "SS", "NS", "BS", NULL };
	const struct sm_ddb_expr *e = ck->e;
	const struct sm_ddb_action *a;
	const char *t;
	unsigned i;
	int rc;

	/* The actions' #names, then their overlaps, before anything else. */
	for (i = 0; i < e->nactions; i++) {
		rc = ck_path_names(ck, &e->actions[i].path);
		if (rc < 0)
			return rc;
	}
	if (e->nactions > 1) {
		rc = ck_overlap(ck, &e->actions[0].path, sizeof(e->actions[0]), e->nactions);
		if (rc < 0)
			return rc;
	}
	/* Then from the last action back: every #name, then values and types. */
	for (i = e->nactions; i-- > 0;) {
		rc = ck_names_only(ck, e->actions[i].value);
		if (rc < 0)
			return rc;
	}
	for (i = e->nactions; i-- > 0;) {
		a = &e->actions[i];
		rc = ck_path(ck, &a->path);
		if (rc == 0 && a->value != NULL)
			rc = ck_operand(ck, a->value);
		if (rc < 0)
			return rc;
		if (a->kind != SM_DDB_ADD && a->kind != SM_DDB_DELETE)
			continue;
		t = static_type(ck, a->value);
		if (t != NULL && !type_in(t, a->kind == SM_DDB_ADD ? add_ok : del_ok))
			return ck_fail(
				ck,
				"Incorrect operand type for operator or function; operator: %s, "
				"operand type: %s, typeSet: ALLOWED_FOR_%s_OPERAND",
				section_name[a->kind], long_type(t), section_name[a->kind]);
	}
	return 0;
}

int
sm_ddb_expr_check(const struct sm_ddb_expr *e, const struct sm_ddb_expr_env *env, char *err,
		  size_t errlen)
{
	struct ddb_ck ck = { .e = e, .env = env, .err = err, .errlen = errlen };
	unsigned i;
	int rc;

	switch (e->kind) {
	case SM_DDB_UPDATE:
		return ck_update(&ck);
	case SM_DDB_PROJECTION:
		for (i = 0; i < e->npaths; i++) {
			rc = ck_path(&ck, &e->paths[i]);
			if (rc < 0)
				return rc;
		}
		return e->npaths > 1 ? ck_overlap(&ck, e->paths, sizeof(e->paths[0]), e->npaths)
				     : 0;
	default:
		return ck_cond(&ck, e->cond);
	}
}

/* ---- placeholders ---- */

bool
sm_ddb_expr_uses(const struct sm_ddb_expr *e, const char *ref)
{
	const char *const *list = ref[0] == '#' ? e->names_sorted : e->values_sorted;
	unsigned lo = 0, hi = ref[0] == '#' ? e->nnames : e->nvalues, mid;
	int c;

	if (list == NULL) {
		list = ref[0] == '#' ? e->names : e->values;
		for (mid = 0; mid < hi; mid++)
			if (strcmp(list[mid], ref) == 0)
				return true;
		return false;
	}
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = strcmp(list[mid], ref);
		if (c == 0)
			return true;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* Java's String.hashCode (the keys are ASCII, so bytes are its UTF-16 units). */
static uint32_t
java_hash(const char *s)
{
	uint32_t h = 0;

	for (; *s != '\0'; s++)
		h = 31 * h + (unsigned char)*s;
	return h;
}

static uint32_t
java_slot(const char *key, uint32_t cap)
{
	uint32_t h = java_hash(key);

	return (h ^ (h >> 16)) & (cap - 1);
}

struct unused_key {
	uint32_t slot;
	unsigned i;
};

static int
unused_cmp(const void *a, const void *b)
{
	const struct unused_key *x = a, *y = b;

	if (x->slot != y->slot)
		return x->slot < y->slot ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

int
sm_ddb_expr_unused(bool names, const char *const *keys, const bool *used, unsigned nkeys, char *err,
		   size_t errlen)
{
	struct ddb_ck ck = { .err = err, .errlen = errlen };
	unsigned i, j, nunused = 0, want;
	struct unused_key *u;
	uint32_t cap = 1;

	for (i = 0; i < nkeys; i++)
		nunused += !used[i];
	if (nunused == 0)
		return 0;
	/*
	 * DynamoDB lists them as a java.util.HashSet sized for the whole map
	 * iterates: by bucket, and a bucket's keys in the order they went in.
	 */
	want = (unsigned)((float)nkeys / 0.75f) + 1;
	if (want < 16)
		want = 16;
	while (cap < want)
		cap <<= 1;
	/* by bucket, then insertion order: a sort, not a scan per key (a
	 * request may leave thousands unused) */
	u = sm_malloc(nunused * sizeof(*u));
	if (u == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (i = 0, j = 0; i < nkeys; i++)
		if (!used[i])
			u[j++] = (struct unused_key){ java_slot(keys[i], cap), i };
	qsort(u, nunused, sizeof(*u), unused_cmp);
	ck_append(&ck, "Value provided in %s unused in expressions: keys: {",
		  names ? "ExpressionAttributeNames" : "ExpressionAttributeValues");
	for (j = 0; j < nunused && ck.n < errlen; j++)
		ck_append(&ck, "%s%s", j ? ", " : "", keys[u[j].i]);
	ck_append(&ck, "}");
	sm_free(u);
	return -EINVAL;
}

/* ---- for the executor ---- */

bool
sm_ddb_path_is_top_level(const struct sm_ddb_path *p)
{
	return p->nelems == 1;
}

const char *
sm_ddb_path_top_name(const struct sm_ddb_path *p, const struct sm_ddb_expr_env *env)
{
	const struct sm_ddb_path_elem *e = &p->elems[0];
	const char *name;

	if (!e->ref || env == NULL || env->name == NULL)
		return e->name;
	name = env->name(env->arg, e->name);
	return name != NULL ? name : e->name;
}

static bool
operand_reads(const struct sm_ddb_operand *o)
{
	unsigned i;

	if (o->kind == SM_DDB_OP_PATH)
		return true;
	for (i = 0; i < o->nargs; i++)
		if (operand_reads(o->args[i]))
			return true;
	return false;
}

bool
sm_ddb_expr_update_needs_read(const struct sm_ddb_expr *e)
{
	const struct sm_ddb_action *a;
	unsigned i;

	if (e == NULL || e->kind != SM_DDB_UPDATE)
		return false;
	for (i = 0; i < e->nactions; i++) {
		a = &e->actions[i];
		if (a->kind == SM_DDB_ADD || a->kind == SM_DDB_DELETE)
			return true;
		/* a nested path rewrites the whole top-level attribute */
		if (a->path.nelems > 1)
			return true;
		if (a->kind == SM_DDB_SET && operand_reads(a->value))
			return true;
	}
	return false;
}

/* ---- key conditions ---- */

/* A condition on one key found so far. */
struct key_part {
	const char *key;
	enum sm_ddb_key_op op;
	const char *values[2];
	unsigned nvalues;
};

struct key_walk {
	const struct sm_ddb_expr_env *env;
	struct key_part *parts;
	unsigned nparts;
	unsigned capparts;
	char *err;
	size_t errlen;
};

static enum sm_ddb_key_op
key_op_reversed(enum sm_ddb_key_op op)
{
	switch (op) {
	case SM_DDB_KEY_LT:
		return SM_DDB_KEY_GT;
	case SM_DDB_KEY_LE:
		return SM_DDB_KEY_GE;
	case SM_DDB_KEY_GT:
		return SM_DDB_KEY_LT;
	case SM_DDB_KEY_GE:
		return SM_DDB_KEY_LE;
	default:
		return op;
	}
}

static int
key_leaf(struct key_walk *w, const struct sm_ddb_cond *c)
{
	static const enum sm_ddb_key_op ops[] = { SM_DDB_KEY_EQ, SM_DDB_KEY_NONE, SM_DDB_KEY_LT,
						  SM_DDB_KEY_LE, SM_DDB_KEY_GT,	  SM_DDB_KEY_GE };
	struct sm_ddb_operand *const *args;
	const struct sm_ddb_operand *o;
	struct key_part part = { 0 };
	const char *opname;
	unsigned nargs, i;

	switch (c->kind) {
	case SM_DDB_COND_OR:
		return ddb_errf(w->err, w->errlen,
				"Invalid operator used in KeyConditionExpression: OR");
	case SM_DDB_COND_NOT:
		return ddb_errf(w->err, w->errlen,
				"Invalid operator used in KeyConditionExpression: NOT");
	case SM_DDB_COND_IN:
		return ddb_errf(w->err, w->errlen,
				"Invalid operator used in KeyConditionExpression: IN");
	case SM_DDB_COND_CMP:
		if (c->op == SM_DDB_NE)
			return ddb_errf(w->err, w->errlen,
					"Invalid operator used in KeyConditionExpression: <>");
		part.op = ops[c->op];
		opname = cmp_text[c->op];
		args = c->operands;
		nargs = c->noperands;
		break;
	case SM_DDB_COND_BETWEEN:
		part.op = SM_DDB_KEY_BETWEEN;
		opname = "BETWEEN";
		args = c->operands;
		nargs = c->noperands;
		break;
	case SM_DDB_COND_CALL:
		o = c->operands[0];
		if (o->func != SM_DDB_FN_BEGINS_WITH)
			return ddb_errf(w->err, w->errlen,
					"Invalid operator used in KeyConditionExpression: %s",
					o->name);
		part.op = SM_DDB_KEY_BEGINS_WITH;
		opname = o->name;
		args = o->args;
		nargs = o->nargs;
		break;
	default:
		return ddb_errf(
			w->err, w->errlen,
			"Invalid condition in KeyConditionExpression: No operator specified "
			"for condition");
	}
	for (i = 0; i < nargs; i++) {
		o = args[i];
		if (o->kind == SM_DDB_OP_PATH) {
			if (part.key != NULL)
				return ddb_errf(
					w->err, w->errlen,
					"Invalid condition in KeyConditionExpression: Multiple "
					"attribute names used in one condition");
			if (o->path.nelems > 1)
				return ddb_errf(w->err, w->errlen,
						"KeyConditionExpressions cannot have conditions on "
						"nested attributes");
			part.key = sm_ddb_path_top_name(&o->path, w->env);
		} else if (o->kind == SM_DDB_OP_VALUE) {
			if (part.key == NULL) {
				if (part.op == SM_DDB_KEY_BETWEEN ||
				    part.op == SM_DDB_KEY_BEGINS_WITH)
					return ddb_errf(
						w->err, w->errlen,
						"Invalid condition in KeyConditionExpression: %s "
						"operator must have the key attribute as its first "
						"operand",
						opname);
				part.op = key_op_reversed(part.op); /* :v < k is k > :v */
			}
			if (part.nvalues < 2)
				part.values[part.nvalues++] = o->value;
		} else {
			return ddb_errf(w->err, w->errlen,
					"KeyConditionExpressions cannot contain nested operations");
		}
	}
	if (part.key == NULL)
		return ddb_errf(
			w->err, w->errlen,
			"Invalid condition in KeyConditionExpression: No key attribute specified");
	for (i = 0; i < w->nparts; i++)
		if (strcmp(w->parts[i].key, part.key) == 0)
			return ddb_errf(
				w->err, w->errlen,
				"KeyConditionExpressions must only contain one condition per key");
	if (w->nparts == w->capparts)
		return -E2BIG; /* cannot happen: sized by key_leaves() */
	w->parts[w->nparts++] = part;
	return 0;
}

static int
key_walk(struct key_walk *w, const struct sm_ddb_cond *c)
{
	int rc;

	if (c->kind != SM_DDB_COND_AND)
		return key_leaf(w, c);
	rc = key_walk(w, c->left);
	return rc < 0 ? rc : key_walk(w, c->right);
}

static unsigned
key_leaves(const struct sm_ddb_cond *c)
{
	if (c->kind != SM_DDB_COND_AND)
		return 1;
	return key_leaves(c->left) + key_leaves(c->right);
}

int
sm_ddb_expr_key_condition(const struct sm_ddb_expr *e, const struct sm_ddb_expr_env *env,
			  const char *pk, const char *sk, struct sm_ddb_key_cond *out, char *err,
			  size_t errlen)
{
	struct key_part stack_parts[8];
	struct key_walk w = {
		.env = env, .parts = stack_parts, .capparts = 8, .err = err, .errlen = errlen
	};
	const struct key_part *kp = NULL, *ks = NULL;
	unsigned i, n;
	int rc;

	memset(out, 0, sizeof(*out));
	if (errlen)
		err[0] = '\0';
	if (e->cond == NULL)
		return ddb_errf(err, errlen, "Invalid KeyConditionExpression: not a condition");
	n = key_leaves(e->cond);
	if (n > w.capparts) {
		w.parts = sm_malloc(n * sizeof(*w.parts));
		if (w.parts == NULL)
			return -ENOMEM;
		w.capparts = n;
	}
	rc = key_walk(&w, e->cond);
	if (rc < 0)
		goto out;
	if (w.nparts > 2) {
		rc = ddb_errf(err, errlen, "Conditions can be of length 1 or 2 only");
		goto out;
	}
	for (i = 0; i < w.nparts; i++) {
		if (strcmp(w.parts[i].key, pk) == 0)
			kp = &w.parts[i];
		else if (sk != NULL && strcmp(w.parts[i].key, sk) == 0)
			ks = &w.parts[i];
	}
	if (kp == NULL) {
		rc = ddb_errf(err, errlen, "Query condition missed key schema element: %s", pk);
		goto out;
	}
	if (w.nparts != 1 + (ks != NULL)) {
		/* without a sort key, a second condition is on no key (DynamoDB's words) */
		if (sk == NULL)
			rc = ddb_errf(err, errlen, "Query key condition not supported");
		else
			rc = ddb_errf(err, errlen, "Query condition missed key schema element: %s",
				      sk);
		goto out;
	}
	if (kp->op != SM_DDB_KEY_EQ) {
		rc = ddb_errf(err, errlen, "Query key condition not supported");
		goto out;
	}
	out->pk_value = kp->values[0];
	if (ks != NULL) {
		out->sk_op = ks->op;
		out->sk_values[0] = ks->values[0];
		out->sk_values[1] = ks->nvalues > 1 ? ks->values[1] : NULL;
	}
out:
	if (w.parts != stack_parts)
		sm_free(w.parts);
	return rc;
}
