/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sm_core.h"
#include "sm_ddb_expr.h"

#define COND SM_DDB_CONDITION
#define FILTER SM_DDB_FILTER
#define KEY SM_DDB_KEY_CONDITION
#define UPD SM_DDB_UPDATE
#define PROJ SM_DDB_PROJECTION

static char errbuf[1024];

/* ---- a request's placeholder maps ---- */

struct tenv {
	const char *const *names;  /* "#n", "name", ..., NULL */
	const char *const *values; /* ":v", "S", ..., NULL */
};

static const char *
tenv_find(const char *const *pairs, const char *ref)
{
	for (; pairs != NULL && pairs[0] != NULL; pairs += 2)
		if (strcmp(pairs[0], ref) == 0)
			return pairs[1];
	return NULL;
}

static const char *
tenv_name(void *arg, const char *ref)
{
	return tenv_find(((struct tenv *)arg)->names, ref);
}

static const char *
tenv_value(void *arg, const char *ref)
{
	return tenv_find(((struct tenv *)arg)->values, ref);
}

static struct sm_ddb_expr_env
mkenv(struct tenv *t)
{
	struct sm_ddb_expr_env env = { .name = tenv_name, .value_type = tenv_value, .arg = t };

	return env;
}

/* ---- parsing helpers ---- */

/*
 * Parse @text from an exactly-sized heap copy (no NUL), so that ASan catches
 * any read past the length.
 */
static int
parse_env(enum sm_ddb_expr_kind kind, const char *text, const struct sm_ddb_expr_env *env,
	  struct sm_ddb_expr **out)
{
	size_t n = strlen(text);
	char *copy = malloc(n ? n : 1);
	int rc;

	assert_non_null(copy);
	memcpy(copy, text, n);
	rc = sm_ddb_expr_parse(kind, copy, n, env, out, errbuf, sizeof(errbuf));
	free(copy);
	return rc;
}

static struct sm_ddb_expr *
ok_env(enum sm_ddb_expr_kind kind, const char *text, const struct sm_ddb_expr_env *env)
{
	struct sm_ddb_expr *e = NULL;
	int rc = parse_env(kind, text, env, &e);

	if (rc != 0)
		fail_msg("parse of <%s> failed: %d %s", text, rc, errbuf);
	assert_non_null(e);
	assert_int_equal(e->kind, kind);
	return e;
}

static struct sm_ddb_expr *
ok(enum sm_ddb_expr_kind kind, const char *text)
{
	return ok_env(kind, text, NULL);
}

static void
bad_env(enum sm_ddb_expr_kind kind, const char *text, const struct sm_ddb_expr_env *env,
	const char *want)
{
	struct sm_ddb_expr *e = (struct sm_ddb_expr *)1;
	int rc = parse_env(kind, text, env, &e);

	if (rc != -EINVAL)
		fail_msg("<%s>: rc %d (%s), want -EINVAL", text, rc, errbuf);
	assert_null(e);
	if (strcmp(errbuf, want) != 0)
		fail_msg("<%s>:\n got  '%s'\n want '%s'", text, errbuf, want);
}

static void
bad(enum sm_ddb_expr_kind kind, const char *text, const char *want)
{
	bad_env(kind, text, NULL, want);
}

/* ---- a canonical rendering of trees ---- */

struct out {
	char buf[2048];
	size_t n;
};

static void
put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int w;

	va_start(ap, fmt);
	w = vsnprintf(o->buf + o->n, sizeof(o->buf) - o->n, fmt, ap);
	va_end(ap);
	assert_true(w >= 0 && (size_t)w < sizeof(o->buf) - o->n);
	o->n += (size_t)w;
}

static void
put_path(struct out *o, const struct sm_ddb_path *p)
{
	unsigned i;

	assert_true(p->nelems >= 1);
	assert_non_null(p->elems[0].name);
	for (i = 0; i < p->nelems; i++) {
		if (p->elems[i].name == NULL)
			put(o, "[%u]", p->elems[i].index);
		else
			put(o, "%s%s", i ? "." : "", p->elems[i].name);
		if (p->elems[i].name != NULL)
			assert_int_equal(p->elems[i].ref, p->elems[i].name[0] == '#');
	}
}

static void
put_operand(struct out *o, const struct sm_ddb_operand *op)
{
	unsigned i;

	switch (op->kind) {
	case SM_DDB_OP_PATH:
		put_path(o, &op->path);
		break;
	case SM_DDB_OP_VALUE:
		assert_int_equal(op->value[0], ':');
		put(o, "%s", op->value);
		break;
	case SM_DDB_OP_CALL:
		put(o, "%s(", op->name);
		for (i = 0; i < op->nargs; i++) {
			put(o, "%s", i ? ", " : "");
			put_operand(o, op->args[i]);
		}
		put(o, ")");
		break;
	case SM_DDB_OP_PLUS:
	case SM_DDB_OP_MINUS:
		assert_int_equal(op->nargs, 2);
		put(o, "{");
		put_operand(o, op->args[0]);
		put(o, " %c ", op->kind == SM_DDB_OP_PLUS ? '+' : '-');
		put_operand(o, op->args[1]);
		put(o, "}");
		break;
	}
}

static void
put_cond(struct out *o, const struct sm_ddb_cond *c)
{
	static const char *const ops[] = { "=", "<>", "<", "<=", ">", ">=" };
	unsigned i;

	switch (c->kind) {
	case SM_DDB_COND_OR:
	case SM_DDB_COND_AND:
		put(o, "(");
		put_cond(o, c->left);
		put(o, c->kind == SM_DDB_COND_OR ? " OR " : " AND ");
		put_cond(o, c->right);
		put(o, ")");
		break;
	case SM_DDB_COND_NOT:
		assert_null(c->right);
		put(o, "(NOT ");
		put_cond(o, c->left);
		put(o, ")");
		break;
	case SM_DDB_COND_CMP:
		assert_int_equal(c->noperands, 2);
		put_operand(o, c->operands[0]);
		put(o, " %s ", ops[c->op]);
		put_operand(o, c->operands[1]);
		break;
	case SM_DDB_COND_BETWEEN:
		assert_int_equal(c->noperands, 3);
		put_operand(o, c->operands[0]);
		put(o, " BETWEEN ");
		put_operand(o, c->operands[1]);
		put(o, " AND ");
		put_operand(o, c->operands[2]);
		break;
	case SM_DDB_COND_IN:
		assert_true(c->noperands >= 2);
		put_operand(o, c->operands[0]);
		put(o, " IN (");
		for (i = 1; i < c->noperands; i++) {
			put(o, "%s", i > 1 ? ", " : "");
			put_operand(o, c->operands[i]);
		}
		put(o, ")");
		break;
	case SM_DDB_COND_CALL:
		assert_int_equal(c->noperands, 1);
		assert_int_equal(c->operands[0]->kind, SM_DDB_OP_CALL);
		put_operand(o, c->operands[0]);
		break;
	}
}

static void
render(struct out *o, const struct sm_ddb_expr *e)
{
	static const char *const acts[] = { "SET", "REMOVE", "ADD", "DELETE" };
	unsigned i;

	o->n = 0;
	o->buf[0] = '\0';
	switch (e->kind) {
	case SM_DDB_UPDATE:
		for (i = 0; i < e->nactions; i++) {
			const struct sm_ddb_action *a = &e->actions[i];

			put(o, "%s%s ", i ? "; " : "", acts[a->kind]);
			put_path(o, &a->path);
			if (a->kind == SM_DDB_SET)
				put(o, " =");
			if (a->kind == SM_DDB_REMOVE) {
				assert_null(a->value);
			} else {
				assert_non_null(a->value);
				put(o, " ");
				put_operand(o, a->value);
			}
			if (a->kind == SM_DDB_ADD || a->kind == SM_DDB_DELETE)
				assert_int_equal(a->value->kind, SM_DDB_OP_VALUE);
		}
		break;
	case SM_DDB_PROJECTION:
		for (i = 0; i < e->npaths; i++) {
			put(o, "%s", i ? ", " : "");
			put_path(o, &e->paths[i]);
		}
		break;
	default:
		assert_non_null(e->cond);
		put_cond(o, e->cond);
		break;
	}
}

/* Parse @text and compare its rendering with @want. */
static void
shape(enum sm_ddb_expr_kind kind, const char *text, const char *want)
{
	struct sm_ddb_expr *e = ok(kind, text);
	struct out o;

	render(&o, e);
	if (strcmp(o.buf, want) != 0)
		fail_msg("<%s>:\n got  '%s'\n want '%s'", text, o.buf, want);
	sm_ddb_expr_free(e);
}

/* ---- paths and projections ---- */

static void
test_paths(void **state)
{
	struct sm_ddb_expr *e;

	(void)state;
	shape(PROJ, "a", "a");
	shape(PROJ, "a.b", "a.b");
	shape(PROJ, "a[2]", "a[2]");
	shape(PROJ, "a.b[1][2].c", "a.b[1][2].c");
	shape(PROJ, "#n.b[0].#m", "#n.b[0].#m");
	shape(PROJ, " a . b [ 3 ] , c\t,\r\nd ", "a.b[3], c, d");
	shape(PROJ, "Ab_1, x9, A_, #_, #9", "Ab_1, x9, A_, #_, #9");
	shape(PROJ, "a[0], a[10], a[2147483647]", "a[0], a[10], a[2147483647]");

	e = ok(PROJ, "#n.b[7], c");
	assert_int_equal(e->npaths, 2);
	assert_int_equal(e->paths[0].nelems, 3);
	assert_string_equal(e->paths[0].elems[0].name, "#n");
	assert_true(e->paths[0].elems[0].ref);
	assert_string_equal(e->paths[0].elems[1].name, "b");
	assert_false(e->paths[0].elems[1].ref);
	assert_null(e->paths[0].elems[2].name);
	assert_int_equal(e->paths[0].elems[2].index, 7);
	assert_false(sm_ddb_path_is_top_level(&e->paths[0]));
	assert_true(sm_ddb_path_is_top_level(&e->paths[1]));
	assert_string_equal(sm_ddb_path_top_name(&e->paths[0], NULL), "#n");
	assert_string_equal(sm_ddb_path_top_name(&e->paths[1], NULL), "c");
	{
		struct tenv t = { .names = (const char *const[]){ "#n", "real", NULL } };
		struct sm_ddb_expr_env env = mkenv(&t);

		assert_string_equal(sm_ddb_path_top_name(&e->paths[0], &env), "real");
	}
	assert_int_equal(e->nnames, 1);
	assert_int_equal(e->nvalues, 0);
	sm_ddb_expr_free(e);

	/* the first element is always a name */
	bad(PROJ, "[1]", "Invalid ProjectionExpression: Syntax error; token: \"[\", near: \"[1\"");
	bad(PROJ, "a.[1]",
	    "Invalid ProjectionExpression: Syntax error; token: \"[\", near: \".[1\"");
	bad(PROJ, "a[a]",
	    "Invalid ProjectionExpression: Syntax error; token: \"a\", near: \"[a]\"");
	bad(PROJ, "l[]", "Invalid ProjectionExpression: Syntax error; token: \"]\", near: \"[]\"");
	bad(PROJ, "l[001]",
	    "Invalid ProjectionExpression: Syntax error; token: \"0\", near: \"001\"");
	bad(PROJ, "l[0000000000001]",
	    "Invalid ProjectionExpression: Syntax error; token: \"0\", near: \"000\"");
	bad(PROJ, "l[\xef\xbc\x91\xef\xbc\x92\xef\xbc\x93]",
	    "Invalid ProjectionExpression: Syntax error; token: \"\xef\xbc\x91\", near: "
	    "\"[\xef\xbc\x91\xef\xbc\x92\"");
	bad(PROJ, "l[-1]",
	    "Invalid ProjectionExpression: Syntax error; token: \"-\", near: \"[-1\"");
	bad(PROJ, "a.b.",
	    "Invalid ProjectionExpression: Syntax error; token: \"<EOF>\", near: \".\"");
	bad(PROJ, "a, ",
	    "Invalid ProjectionExpression: Syntax error; token: \"<EOF>\", near: \", \"");
	bad(PROJ, "a,,b",
	    "Invalid ProjectionExpression: Syntax error; token: \",\", near: \",,b\"");
	bad(PROJ, "a b", "Invalid ProjectionExpression: Syntax error; token: \"b\", near: \"a b\"");
	bad(PROJ, "_a", "Invalid ProjectionExpression: Syntax error; token: \"_\", near: \"_a\"");
	bad(PROJ, "1a", "Invalid ProjectionExpression: Syntax error; token: \"1\", near: \"1a\"");
	bad(PROJ, "#", "Invalid ProjectionExpression: Syntax error; token: \"#\", near: \"#\"");
	bad(PROJ, "a.:v",
	    "Invalid ProjectionExpression: Syntax error; token: \":v\", near: \".:v\"");
	bad(PROJ, "a.b-c",
	    "Invalid ProjectionExpression: Syntax error; token: \"-\", near: \"b-c\"");
	bad(PROJ, "size(a)",
	    "Invalid ProjectionExpression: Syntax error; token: \"(\", near: \"size(a\"");
	/* keywords are never names */
	bad(PROJ, "a, set",
	    "Invalid ProjectionExpression: Syntax error; token: \"set\", near: \", set\"");
	bad(PROJ, "a.and",
	    "Invalid ProjectionExpression: Syntax error; token: \"and\", near: \".and\"");
	/* index range */
	bad(PROJ, "a[2147483648]",
	    "Invalid ProjectionExpression: List index is not within the allowable range; index: "
	    "[2147483648]");
	bad(PROJ, "b, a.c[999999999999999999999]",
	    "Invalid ProjectionExpression: List index is not within the allowable range; index: "
	    "[999999999999999999999]");
	/* overlaps and conflicts */
	bad(PROJ, "a, a",
	    "Invalid ProjectionExpression: Two document paths overlap with each other; must "
	    "remove or rewrite one of these paths; path one: [a], path two: [a]");
	bad(PROJ, "a, a.b.c",
	    "Invalid ProjectionExpression: Two document paths overlap with each other; must "
	    "remove or rewrite one of these paths; path one: [a], path two: [a, b, c]");
	bad(PROJ, "a.b, a",
	    "Invalid ProjectionExpression: Two document paths overlap with each other; must "
	    "remove or rewrite one of these paths; path one: [a, b], path two: [a]");
	bad(PROJ, "l, l[0]",
	    "Invalid ProjectionExpression: Two document paths overlap with each other; must "
	    "remove or rewrite one of these paths; path one: [l], path two: [l, [0]]");
	bad(PROJ, "x, a.b, a[1]",
	    "Invalid ProjectionExpression: Two document paths conflict with each other; must "
	    "remove or rewrite one of these paths; path one: [a, b], path two: [a, [1]]");
	sm_ddb_expr_free(ok(PROJ, "a.b, a.c, l[0], l[1], #a, a.#b, b[1].c, b[1].d"));
	{
		/* names resolve before comparing */
		struct tenv t = { .names = (const char *const[]){ "#a", "a", "#b", "a", NULL } };
		struct sm_ddb_expr_env env = mkenv(&t);

		bad_env(PROJ, "#a, #b", &env,
			"Invalid ProjectionExpression: Two document paths overlap with each other; "
			"must remove or rewrite one of these paths; path one: [a], path two: [a]");
		bad_env(PROJ, "x.#a, x[0]", &env,
			"Invalid ProjectionExpression: Two document paths conflict with each "
			"other; "
			"must remove or rewrite one of these paths; path one: [x, a], path two: "
			"[x, "
			"[0]]");
		bad_env(PROJ, "#a, #undef", &env,
			"Invalid ProjectionExpression: An expression attribute name used in the "
			"document path is not defined; attribute name: #undef");
	}
}

/* ---- conditions ---- */

static void
test_comparisons(void **state)
{
	(void)state;
	shape(COND, "a = :v", "a = :v");
	shape(COND, "a <> :v", "a <> :v");
	shape(COND, "a < :v", "a < :v");
	shape(COND, "a <= :v", "a <= :v");
	shape(COND, "a > :v", "a > :v");
	shape(COND, "a >= :v", "a >= :v");
	shape(COND, "a>=:v", "a >= :v");
	shape(COND, ":v = a.b[1]", ":v = a.b[1]");
	shape(COND, "a = b", "a = b");
	shape(COND, ":a = :b", ":a = :b");
	shape(COND, "#n = :v", "#n = :v");
	shape(COND, "size(a) > :v", "size(a) > :v");
	shape(COND, ":v < size(#n.x[3])", ":v < size(#n.x[3])");
	shape(COND, "a BETWEEN :lo AND :hi", "a BETWEEN :lo AND :hi");
	shape(COND, "size(a) between :lo and b", "size(a) BETWEEN :lo AND b");
	shape(COND, "a IN (:x)", "a IN (:x)");
	shape(COND, "a in (:x, b, size(c))", "a IN (:x, b, size(c))");
	shape(FILTER, "a = :v", "a = :v");
	shape(KEY, "a = :v", "a = :v");
	/* parenthesized operands */
	shape(COND, "(a) = (:v)", "a = :v");
	shape(COND, "(a) BETWEEN (:x) AND (:y)", "a BETWEEN :x AND :y");
	shape(COND, "size((a)) > :v", "size(a) > :v");

	/* < = and <> need no space, but < = is not <= */
	bad(COND, "a < = :v",
	    "Invalid ConditionExpression: Syntax error; token: \"=\", near: \"< = :v\"");
	bad(COND, "a != :v",
	    "Invalid ConditionExpression: Syntax error; token: \"!\", near: \"a !=\"");
	bad(COND, "a == :b",
	    "Invalid ConditionExpression: Syntax error; token: \"=\", near: \"== :b\"");
	bad(COND, "a =< :b",
	    "Invalid ConditionExpression: Syntax error; token: \"<\", near: \"=< :b\"");
	bad(COND,
	    "a = ", "Invalid ConditionExpression: Syntax error; token: \"<EOF>\", near: \"= \"");
	bad(COND, "a", "Invalid ConditionExpression: Syntax error; token: \"<EOF>\", near: \"a\"");
	bad(COND, ":v",
	    "Invalid ConditionExpression: Syntax error; token: \"<EOF>\", near: \":v\"");
	bad(COND, "a = :b c",
	    "Invalid ConditionExpression: Syntax error; token: \"c\", near: \":b c\"");
	bad(COND, "a = 5",
	    "Invalid ConditionExpression: Syntax error; token: \"5\", near: \"= 5\"");
	bad(COND, "a = 'x'",
	    "Invalid ConditionExpression: Syntax error; token: \"'\", near: \"= 'x\"");
	bad(COND,
	    "a = :", "Invalid ConditionExpression: Syntax error; token: \":\", near: \"= :\"");
	bad(COND, "things are not gonna be ok",
	    "Invalid ConditionExpression: Syntax error; token: \"are\", near: \"things are not\"");
	bad(COND, "a BETWEEN :x",
	    "Invalid ConditionExpression: Syntax error; token: \"<EOF>\", near: \":x\"");
	bad(COND, "a BETWEEN :x OR :y",
	    "Invalid ConditionExpression: Syntax error; token: \"OR\", near: \":x OR :y\"");
	bad(COND, "a IN :x",
	    "Invalid ConditionExpression: Syntax error; token: \":x\", near: \"IN :x\"");
	bad(COND, "a IN ()",
	    "Invalid ConditionExpression: Syntax error; token: \")\", near: \"()\"");
	bad(COND, "a IN (:x,)",
	    "Invalid ConditionExpression: Syntax error; token: \")\", near: \",)\"");
	bad(COND, "a = :v AND",
	    "Invalid ConditionExpression: Syntax error; token: \"<EOF>\", near: \"AND\"");
	bad(COND, "AND a = :v",
	    "Invalid ConditionExpression: Syntax error; token: \"AND\", near: \"AND a\"");
	bad(COND, "  ) a",
	    "Invalid ConditionExpression: Syntax error; token: \")\", near: \"  ) a\"");
	bad(COND, "a = :v )",
	    "Invalid ConditionExpression: Syntax error; token: \")\", near: \":v )\"");
	bad(COND, "   ",
	    "Invalid ConditionExpression: Syntax error; token: \"<EOF>\", near: \"   \"");
	bad(FILTER, "a <", "Invalid FilterExpression: Syntax error; token: \"<EOF>\", near: \"<\"");
	bad(KEY, "p=:p AND c!=:c",
	    "Invalid KeyConditionExpression: Syntax error; token: \"!\", near: \"c!=\"");
	/* a bare + or - is not a condition operator */
	bad(COND, "a = :v + :w",
	    "Invalid ConditionExpression: Syntax error; token: \"+\", near: \":v + :w\"");
}

static void
test_functions(void **state)
{
	(void)state;
	shape(COND, "attribute_exists(a)", "attribute_exists(a)");
	shape(COND, "attribute_not_exists(#n.b[1])", "attribute_not_exists(#n.b[1])");
	shape(COND, "attribute_type(a, :t)", "attribute_type(a, :t)");
	shape(COND, "begins_with(a, :s)", "begins_with(a, :s)");
	shape(COND, "contains(a, :v)", "contains(a, :v)");
	shape(COND, "contains(a, size(b))", "contains(a, size(b))");
	shape(COND, "begins_with ( a , :s )", "begins_with(a, :s)");
	shape(COND, "NOT contains(a, :v)", "(NOT contains(a, :v))");
	shape(COND, "size(a) = size(b)", "size(a) = size(b)");

	/* names are case-sensitive, and unknown ones are rejected */
	bad(COND, "foo(a)", "Invalid ConditionExpression: Invalid function name; function: foo");
	bad(COND, "BEGINS_WITH(a, :v)",
	    "Invalid ConditionExpression: Invalid function name; function: BEGINS_WITH");
	bad(COND, "count(a) = :v",
	    "Invalid ConditionExpression: Invalid function name; function: count");
	/* where each may stand */
	bad(COND, "size(a)",
	    "Invalid ConditionExpression: The function is not allowed to be used this way in an "
	    "expression; function: size");
	bad(COND, "attribute_exists(a) = :v",
	    "Invalid ConditionExpression: The function is not allowed to be used this way in an "
	    "expression; function: attribute_exists");
	bad(COND, "size(contains(a, :b)) > :v",
	    "Invalid ConditionExpression: The function is not allowed to be used this way in an "
	    "expression; function: contains");
	bad(COND, "if_not_exists(a, :v) = :v",
	    "Invalid ConditionExpression: The function is not allowed in a condition expression; "
	    "function: if_not_exists");
	bad(FILTER, "list_append(a, :v) = :v",
	    "Invalid FilterExpression: The function is not allowed in a condition expression; "
	    "function: list_append");
	/* operand counts */
	bad(COND, "contains(a)",
	    "Invalid ConditionExpression: Incorrect number of operands for operator or function; "
	    "operator or function: contains, number of operands: 1");
	bad(COND, "begins_with(a, :b, :c)",
	    "Invalid ConditionExpression: Incorrect number of operands for operator or function; "
	    "operator or function: begins_with, number of operands: 3");
	bad(COND, "size(a, b) > :v",
	    "Invalid ConditionExpression: Incorrect number of operands for operator or function; "
	    "operator or function: size, number of operands: 2");
	bad(COND, "attribute_type()",
	    "Invalid ConditionExpression: Syntax error; token: \")\", near: \"()\"");
	bad(COND, "attribute_exists(a",
	    "Invalid ConditionExpression: Syntax error; token: \"<EOF>\", near: \"a\"");
	/* paths required */
	bad(COND, "attribute_exists(:v)",
	    "Invalid ConditionExpression: Operator or function requires a document path; "
	    "operator or function: attribute_exists");
	bad(COND, "attribute_type(size(a), :t)",
	    "Invalid ConditionExpression: Operator or function requires a document path; "
	    "operator or function: attribute_type");
	/* the same path on both sides */
	bad(COND, "contains(name1, name1)",
	    "Invalid ConditionExpression: The first operand must be distinct from the remaining "
	    "operands for this operator or function; operator: contains, first operand: [name1]");
	bad(COND, "a.b[1] = a.b[1]",
	    "Invalid ConditionExpression: The first operand must be distinct from the remaining "
	    "operands for this operator or function; operator: =, first operand: [a, b, [1]]");
	bad(COND, "x = :v OR a BETWEEN :x AND a",
	    "Invalid ConditionExpression: The first operand must be distinct from the remaining "
	    "operands for this operator or function; operator: BETWEEN, first operand: [a]");
	bad(COND, "a IN (:x, b, a)",
	    "Invalid ConditionExpression: The first operand must be distinct from the remaining "
	    "operands for this operator or function; operator: IN, first operand: [a]");
	sm_ddb_expr_free(ok(COND, "a = a.b AND a[0] <> a AND :v = :v AND size(a) = size(a)"));
	{
		struct tenv t = { .names = (const char *const[]){ "#x", "a", NULL },
				  .values = (const char *const[]){ ":v", "S", NULL } };
		struct sm_ddb_expr_env env = mkenv(&t);

		bad_env(COND, "#x >= a", &env,
			"Invalid ConditionExpression: The first operand must be distinct from the "
			"remaining operands for this operator or function; operator: >=, first "
			"operand: [a]");
	}
	/* size() of size() is a number */
	bad(COND, "size(size(a)) > :v",
	    "Invalid ConditionExpression: Incorrect operand type for operator or function; "
	    "operator or function: size, operand type: N");
}

static void
test_precedence(void **state)
{
	(void)state;
	/* NOT > AND > OR */
	shape(COND, "a = :a OR b = :b AND c = :c", "(a = :a OR (b = :b AND c = :c))");
	shape(COND, "a = :a AND b = :b OR c = :c", "((a = :a AND b = :b) OR c = :c)");
	shape(COND, "NOT a = :a AND b = :b", "((NOT a = :a) AND b = :b)");
	shape(COND, "NOT a = :a OR NOT b = :b AND c = :c",
	      "((NOT a = :a) OR ((NOT b = :b) AND c = :c))");
	shape(COND, "a = :a AND NOT b = :b", "(a = :a AND (NOT b = :b))");
	shape(COND, "NOT NOT a = :a", "(NOT (NOT a = :a))");
	/* chains lean left */
	shape(COND, "a = :a AND b = :b AND c = :c", "((a = :a AND b = :b) AND c = :c)");
	shape(COND, "a = :a OR b = :b OR c = :c", "((a = :a OR b = :b) OR c = :c)");
	/* parentheses */
	shape(COND, "(a = :a OR b = :b) AND c = :c", "((a = :a OR b = :b) AND c = :c)");
	shape(COND, "NOT (a = :a AND b = :b)", "(NOT (a = :a AND b = :b))");
	shape(COND, "a = :a AND (b = :b OR (c = :c AND d = :d))",
	      "(a = :a AND (b = :b OR (c = :c AND d = :d)))");
	shape(COND, "(NOT (NOT (a = :a)))", "(NOT (NOT a = :a))");
	/* BETWEEN's AND is not the connective */
	shape(COND, "a BETWEEN :x AND :y AND b = :b", "(a BETWEEN :x AND :y AND b = :b)");
	shape(COND, "b = :b OR a BETWEEN :x AND :y", "(b = :b OR a BETWEEN :x AND :y)");
	/* keywords in any case */
	shape(COND, "a = :a and not b = :b Or c BeTwEeN :x aNd :y",
	      "((a = :a AND (NOT b = :b)) OR c BETWEEN :x AND :y)");
	/* a parenthesized operand is not a parenthesized condition */
	shape(COND, "(a) = :v AND (b = :w)", "(a = :v AND b = :w)");
	shape(COND, "((a) = :v)", "a = :v");
	shape(COND, "((a = :a) AND (b = :b))", "(a = :a AND b = :b)");
	shape(COND, "(attribute_exists(a))", "attribute_exists(a)");
	shape(COND, "(size(a)) > :v", "size(a) > :v");

	/* DynamoDB refuses two pairs of parentheses straight around one thing */
	bad(COND, "((a = :a))",
	    "Invalid ConditionExpression: The expression has redundant parentheses;");
	bad(COND, "((a)) = :v",
	    "Invalid ConditionExpression: The expression has redundant parentheses;");
	bad(COND, "a = ((:v))",
	    "Invalid ConditionExpression: The expression has redundant parentheses;");
	bad(KEY, "((c=:c) AND ((p=:p)))",
	    "Invalid KeyConditionExpression: The expression has redundant parentheses;");
	bad(COND, "((attribute_exists(a)))",
	    "Invalid ConditionExpression: The expression has redundant parentheses;");
	bad(COND, "size(((a))) > :v",
	    "Invalid ConditionExpression: The expression has redundant parentheses;");
	/* unbalanced: the alternative that got further is reported */
	bad(COND, "(a = :a",
	    "Invalid ConditionExpression: Syntax error; token: \"<EOF>\", near: \":a\"");
	bad(COND, "(a = :a))",
	    "Invalid ConditionExpression: Syntax error; token: \")\", near: \"))\"");
	bad(COND, "(a) = :a)",
	    "Invalid ConditionExpression: Syntax error; token: \")\", near: \":a)\"");
	bad(COND, "((a) = :a",
	    "Invalid ConditionExpression: Syntax error; token: \"<EOF>\", near: \":a\"");
	bad(COND, "()", "Invalid ConditionExpression: Syntax error; token: \")\", near: \"()\"");
	bad(COND, "NOT",
	    "Invalid ConditionExpression: Syntax error; token: \"<EOF>\", near: \"NOT\"");
	bad(COND, "a NOT = :v",
	    "Invalid ConditionExpression: Syntax error; token: \"NOT\", near: \"a NOT =\"");
}

/* ---- reserved words ---- */

static void
test_reserved(void **state)
{
	static const char *const words[] = { "ABORT", "abort", "Name", "comment", "data", "ZONE",
					     "year",  "Value", "TTL",  "status",  "uuid", "date" };
	char text[64], want[160];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		assert_true(sm_ddb_is_reserved(words[i], strlen(words[i])));
		snprintf(text, sizeof(text), "%s = :v", words[i]);
		snprintf(want, sizeof(want),
			 "Invalid ConditionExpression: Attribute name is a reserved keyword; "
			 "reserved keyword: %s",
			 words[i]);
		bad(COND, text, want);
	}
	assert_false(sm_ddb_is_reserved("abc", 3));
	assert_false(sm_ddb_is_reserved("names2", 6));
	assert_false(sm_ddb_is_reserved("", 0));
	assert_false(sm_ddb_is_reserved("LOCALTIMESTAMPS", 15));
	assert_true(sm_ddb_is_reserved("localtimestamp", 14));
	assert_true(sm_ddb_is_reserved("size", 4)); /* on the list ... */
	/* ... but DynamoDB takes SIZE and CONVERT as names */
	sm_ddb_expr_free(ok(COND, "size = :v AND convert = :w"));
	sm_ddb_expr_free(ok(PROJ, "Size, CONVERT"));
	/* anywhere in a path, in every expression kind */
	bad(COND, "a.b.COMMENT = :v",
	    "Invalid ConditionExpression: Attribute name is a reserved keyword; reserved keyword: "
	    "COMMENT");
	bad(COND, "contains(a.comment, :v)",
	    "Invalid ConditionExpression: Attribute name is a reserved keyword; reserved keyword: "
	    "comment");
	bad(PROJ, "a, b.c[1].year",
	    "Invalid ProjectionExpression: Attribute name is a reserved keyword; reserved keyword: "
	    "year");
	bad(UPD, "SET data = :v",
	    "Invalid UpdateExpression: Attribute name is a reserved keyword; reserved keyword: "
	    "data");
	bad(UPD, "SET a = if_not_exists(Count, :v)",
	    "Invalid UpdateExpression: Attribute name is a reserved keyword; reserved keyword: "
	    "Count");
	bad(KEY, "p = :p AND #s = :v AND status = :w",
	    "Invalid KeyConditionExpression: Attribute name is a reserved keyword; reserved "
	    "keyword: status");
	/* placeholders, values and function names are not attribute names */
	sm_ddb_expr_free(ok(COND, "#name = :name AND #data.#year = :comment"));
	bad(COND, "count(a) > :v",
	    "Invalid ConditionExpression: Invalid function name; function: count");
	/* a syntax error anywhere comes before a reserved word */
	bad(COND, "name = :v AND",
	    "Invalid ConditionExpression: Syntax error; token: \"<EOF>\", near: \"AND\"");
	/* the first problem in the text wins */
	bad(COND, "name = :v AND foo(a)",
	    "Invalid ConditionExpression: Attribute name is a reserved keyword; reserved keyword: "
	    "name");
	bad(COND, "foo(a) AND name = :v",
	    "Invalid ConditionExpression: Invalid function name; function: foo");
}

/* ---- updates ---- */

static void
test_update(void **state)
{
	struct sm_ddb_expr *e;

	(void)state;
	shape(UPD, "SET a = :v", "SET a = :v");
	shape(UPD, "set a = :v, b.c[1] = :w", "SET a = :v; SET b.c[1] = :w");
	shape(UPD, "REMOVE a, b[2], c.d", "REMOVE a; REMOVE b[2]; REMOVE c.d");
	shape(UPD, "ADD a :v, b :w", "ADD a :v; ADD b :w");
	shape(UPD, "DELETE s :v", "DELETE s :v");
	shape(UPD, "SET a = b", "SET a = b");
	shape(UPD, "SET a = a + :i", "SET a = {a + :i}");
	shape(UPD, "SET a = :x - b.c", "SET a = {:x - b.c}");
	shape(UPD, "SET a = :x+:y", "SET a = {:x + :y}");
	shape(UPD, "SET a = if_not_exists(a, :z) + :one", "SET a = {if_not_exists(a, :z) + :one}");
	shape(UPD, "SET l = list_append(if_not_exists(l, :e), :v)",
	      "SET l = list_append(if_not_exists(l, :e), :v)");
	shape(UPD, "SET l = list_append(:v, l)", "SET l = list_append(:v, l)");
	shape(UPD, "SET a = if_not_exists(b, if_not_exists(c, :d))",
	      "SET a = if_not_exists(b, if_not_exists(c, :d))");
	shape(UPD, "SET a = (:v)", "SET a = :v");
	shape(UPD, "SET a = (b + :c)", "SET a = {b + :c}");
	shape(UPD, "SET a = (b) + (:c)", "SET a = {b + :c}");
	shape(UPD, "SET a = (:v) - :w", "SET a = {:v - :w}");
	shape(UPD, "SET #a.#b = :v", "SET #a.#b = :v");
	/* clauses in any order, each once */
	shape(UPD, "REMOVE x ADD n :one SET a = :v, b = :w DELETE s :s",
	      "REMOVE x; ADD n :one; SET a = :v; SET b = :w; DELETE s :s");
	shape(UPD, "DELETE s :s SET a=:v", "DELETE s :s; SET a = :v");
	shape(UPD, "\n SET\ta=:v\r\n", "SET a = :v");

	e = ok(UPD, "SET a = :v REMOVE b");
	assert_int_equal(e->nactions, 2);
	assert_int_equal(e->actions[0].kind, SM_DDB_SET);
	assert_int_equal(e->actions[0].value->kind, SM_DDB_OP_VALUE);
	assert_string_equal(e->actions[0].value->value, ":v");
	assert_int_equal(e->actions[1].kind, SM_DDB_REMOVE);
	assert_null(e->actions[1].value);
	assert_null(e->cond);
	sm_ddb_expr_free(e);
	e = ok(UPD, "SET a = list_append(a, :v)");
	assert_int_equal(e->actions[0].value->kind, SM_DDB_OP_CALL);
	assert_int_equal(e->actions[0].value->func, SM_DDB_FN_LIST_APPEND);
	sm_ddb_expr_free(e);

	bad(UPD, "", "Invalid UpdateExpression: The expression can not be empty;");
	bad(UPD, "SET", "Invalid UpdateExpression: Syntax error; token: \"<EOF>\", near: \"SET\"");
	bad(UPD, "SET a", "Invalid UpdateExpression: Syntax error; token: \"<EOF>\", near: \"a\"");
	bad(UPD,
	    "SET a = ", "Invalid UpdateExpression: Syntax error; token: \"<EOF>\", near: \"= \"");
	bad(UPD, "a = :v", "Invalid UpdateExpression: Syntax error; token: \"a\", near: \"a =\"");
	bad(UPD, "SET a = :v,",
	    "Invalid UpdateExpression: Syntax error; token: \"<EOF>\", near: \",\"");
	bad(UPD, "SET a = :v, REMOVE b",
	    "Invalid UpdateExpression: Syntax error; token: \"REMOVE\", near: \", REMOVE b\"");
	bad(UPD, "SET a = :v + :w + :x",
	    "Invalid UpdateExpression: Syntax error; token: \"+\", near: \":w + :x\"");
	bad(UPD, "SET a = :v :w",
	    "Invalid UpdateExpression: Syntax error; token: \":w\", near: \":v :w\"");
	bad(UPD, "SET a += :v",
	    "Invalid UpdateExpression: Syntax error; token: \"+\", near: \"a +=\"");
	bad(UPD, "ADD a 5", "Invalid UpdateExpression: Syntax error; token: \"5\", near: \"a 5\"");
	bad(UPD, "ADD a b", "Invalid UpdateExpression: Syntax error; token: \"b\", near: \"a b\"");
	bad(UPD, "DELETE a",
	    "Invalid UpdateExpression: Syntax error; token: \"<EOF>\", near: \"a\"");
	bad(UPD, "REMOVE a = :v",
	    "Invalid UpdateExpression: Syntax error; token: \"=\", near: \"a = :v\"");
	bad(UPD, "SET :v = a",
	    "Invalid UpdateExpression: Syntax error; token: \":v\", near: \"SET :v =\"");
	bad(UPD, "SET a = :v WHERE b",
	    "Invalid UpdateExpression: Syntax error; token: \"WHERE\", near: \":v WHERE b\"");
	bad(UPD, "SET a = ((:v))",
	    "Invalid UpdateExpression: The expression has redundant parentheses;");
	/* sections */
	bad(UPD, "SET a = :v SET b = :w",
	    "Invalid UpdateExpression: The \"SET\" section can only be used once in an update "
	    "expression;");
	bad(UPD, "SET a = :v REMOVE b SET c = :w",
	    "Invalid UpdateExpression: The \"SET\" section can only be used once in an update "
	    "expression;");
	bad(UPD, "REMOVE a REMOVE b",
	    "Invalid UpdateExpression: The \"REMOVE\" section can only be used once in an update "
	    "expression;");
	bad(UPD, "ADD a :v SET x = :w ADD b :v",
	    "Invalid UpdateExpression: The \"ADD\" section can only be used once in an update "
	    "expression;");
	bad(UPD, "DELETE a :v DELETE b :w",
	    "Invalid UpdateExpression: The \"DELETE\" section can only be used once in an update "
	    "expression;");
	/* sections are checked one kind at a time, in the order first seen */
	bad(UPD, "SET a = :v REMOVE year SET c = :w",
	    "Invalid UpdateExpression: The \"SET\" section can only be used once in an update "
	    "expression;");
	bad(UPD, "REMOVE year SET a = :v SET c = :w",
	    "Invalid UpdateExpression: Attribute name is a reserved keyword; reserved keyword: "
	    "year");
	/* functions */
	bad(UPD, "SET a = size(b)",
	    "Invalid UpdateExpression: The function is not allowed in an update expression; "
	    "function: size");
	bad(UPD, "SET #r = contains(s, :needle)",
	    "Invalid UpdateExpression: The function is not allowed in an update expression; "
	    "function: contains");
	bad(UPD, "SET a = nope(b)",
	    "Invalid UpdateExpression: Invalid function name; function: nope");
	bad(UPD, "SET #r = list_append(list_append(l, :t), :t2)",
	    "Invalid UpdateExpression: The function is not allowed to be used this way in an "
	    "expression; function: list_append");
	bad(UPD, "SET r = if_not_exists(r, list_append(l, :t))",
	    "Invalid UpdateExpression: The function is not allowed to be used this way in an "
	    "expression; function: list_append");
	bad(UPD, "SET r = if_not_exists(if_not_exists(n, :zero), :one)",
	    "Invalid UpdateExpression: Operator or function requires a document path; operator or "
	    "function: if_not_exists");
	bad(UPD, "SET r = if_not_exists(:v, :w)",
	    "Invalid UpdateExpression: Operator or function requires a document path; operator or "
	    "function: if_not_exists");
	bad(UPD, "SET a = list_append(:a)",
	    "Invalid UpdateExpression: Incorrect number of operands for operator or function; "
	    "operator or function: list_append, number of operands: 1");
	bad(UPD, "SET a = if_not_exists(a, :b, :c)",
	    "Invalid UpdateExpression: Incorrect number of operands for operator or function; "
	    "operator or function: if_not_exists, number of operands: 3");
	bad(UPD, "SET a = if_not_exists(a, a)",
	    "Invalid UpdateExpression: The first operand must be distinct from the remaining "
	    "operands for this operator or function; operator: if_not_exists, first operand: [a]");
	/* overlapping paths */
	bad(UPD, "SET a = :v, a = :w",
	    "Invalid UpdateExpression: Two document paths overlap with each other; must remove or "
	    "rewrite one of these paths; path one: [a], path two: [a]");
	bad(UPD, "SET a.b = :v REMOVE a",
	    "Invalid UpdateExpression: Two document paths overlap with each other; must remove or "
	    "rewrite one of these paths; path one: [a, b], path two: [a]");
	bad(UPD, "REMOVE x, a[1] ADD a[1].b :v",
	    "Invalid UpdateExpression: Two document paths overlap with each other; must remove or "
	    "rewrite one of these paths; path one: [a, [1]], path two: [a, [1], b]");
	bad(UPD, "SET a[1] = :v, a.b = :w",
	    "Invalid UpdateExpression: Two document paths conflict with each other; must remove or "
	    "rewrite one of these paths; path one: [a, [1]], path two: [a, b]");
	sm_ddb_expr_free(ok(UPD, "SET a[1] = :v, a[2] = :w, b.c = a, b.d = b.c REMOVE e.f, e.g"));
	{
		struct tenv t = { .names = (const char *const[]){ "#a", "x", "#b", "x", NULL },
				  .values = (const char *const[]){ ":v", "N", ":w", "N", NULL } };
		struct sm_ddb_expr_env env = mkenv(&t);

		/* only the env tells #a and #b apart */
		sm_ddb_expr_free(ok(UPD, "SET #a = :v, #b = :w"));
		bad_env(UPD, "SET #a = :v, #b = :w", &env,
			"Invalid UpdateExpression: Two document paths overlap with each other; "
			"must "
			"remove or rewrite one of these paths; path one: [x], path two: [x]");
		/* undefined names in action paths come before overlaps */
		bad_env(UPD, "SET a = :v, a = :w, #c = :v", &env,
			"Invalid UpdateExpression: An expression attribute name used in the "
			"document path is not defined; attribute name: #c");
		/* overlaps come before undefined values */
		bad_env(UPD, "SET a = :undef, a = :w", &env,
			"Invalid UpdateExpression: Two document paths overlap with each other; "
			"must "
			"remove or rewrite one of these paths; path one: [a], path two: [a]");
		/* then the actions from the last back */
		bad_env(UPD, "SET a = :u1, b = :u2", &env,
			"Invalid UpdateExpression: An expression attribute value used in "
			"expression "
			"is not defined; attribute value: :u2");
		bad_env(UPD, "SET a = :u1, b = #n2 + :u2", &env,
			"Invalid UpdateExpression: An expression attribute name used in the "
			"document path is not defined; attribute name: #n2");
	}
}

static void
test_update_types(void **state)
{
	struct tenv t = {
		.values = (const char *const[]){ ":n", "N", ":s", "S", ":ss", "SS", ":l", "L", ":b",
						 "BOOL", ":m", "M", ":ns", "NS", ":any", "", NULL },
	};
	struct sm_ddb_expr_env env = mkenv(&t);

	(void)state;
	sm_ddb_expr_free(ok_env(UPD,
				"SET a = :n + :n, b = :s, c = list_append(:l, c) ADD d :n, e :ss "
				"DELETE f :ns",
				&env));
	sm_ddb_expr_free(ok_env(UPD, "SET a = :any + :any ADD b :any DELETE c :any", &env));
	bad_env(UPD, "SET a = :n + :s", &env,
		"Invalid UpdateExpression: Incorrect operand type for operator or function; "
		"operator or function: +, operand type: S");
	bad_env(UPD, "SET a = :l - :n", &env,
		"Invalid UpdateExpression: Incorrect operand type for operator or function; "
		"operator or function: -, operand type: L");
	bad_env(UPD, "SET a = list_append(a, :n)", &env,
		"Invalid UpdateExpression: Incorrect operand type for operator or function; "
		"operator or function: list_append, operand type: N");
	bad_env(UPD, "ADD a :s", &env,
		"Invalid UpdateExpression: Incorrect operand type for operator or function; "
		"operator: ADD, operand type: STRING, typeSet: ALLOWED_FOR_ADD_OPERAND");
	bad_env(UPD, "DELETE a :n", &env,
		"Invalid UpdateExpression: Incorrect operand type for operator or function; "
		"operator: DELETE, operand type: NUMBER, typeSet: ALLOWED_FOR_DELETE_OPERAND");
	bad_env(UPD, "ADD a :m", &env,
		"Invalid UpdateExpression: Incorrect operand type for operator or function; "
		"operator: ADD, operand type: MAP, typeSet: ALLOWED_FOR_ADD_OPERAND");
	/* conditions */
	sm_ddb_expr_free(
		ok_env(COND, "a < :n AND b BETWEEN :s AND :s AND c = :b AND size(d) > :n", &env));
	bad_env(COND, "a < :b", &env,
		"Invalid ConditionExpression: Incorrect operand type for operator or function; "
		"operator or function: <, operand type: BOOL");
	bad_env(COND, "a BETWEEN :n AND :l", &env,
		"Invalid ConditionExpression: Incorrect operand type for operator or function; "
		"operator or function: BETWEEN, operand type: L");
	bad_env(COND, "begins_with(a, :n)", &env,
		"Invalid ConditionExpression: Incorrect operand type for operator or function; "
		"operator or function: begins_with, operand type: N");
	bad_env(COND, "size(:n) > :n", &env,
		"Invalid ConditionExpression: Incorrect operand type for operator or function; "
		"operator or function: size, operand type: N");
	bad_env(COND, "attribute_type(a, :n)", &env,
		"Invalid ConditionExpression: Incorrect operand type for operator or function; "
		"operator or function: attribute_type, operand type: N");
	sm_ddb_expr_free(ok_env(COND, "attribute_type(a, :s) AND size(:ss) = :n", &env));
}

/* ---- read before write ---- */

static void
test_rmw(void **state)
{
	static const struct {
		const char *text;
		bool rmw;
	} cases[] = {
		{ "SET a = :v", false },
		{ "SET a = :v, b = :w", false },
		{ "SET a = :x + :y", false },
		{ "SET a = (:x - :y)", false },
		{ "REMOVE a", false },
		{ "REMOVE a, b SET c = :v", false },
		{ "SET #n = :v", false },
		{ "SET a.b = :v", true },
		{ "SET a[1] = :v", true },
		{ "REMOVE a[2]", true },
		{ "REMOVE a.b", true },
		{ "SET x = :v REMOVE a.b", true },
		{ "SET a = b", true },
		{ "SET a = a + :i", true },
		{ "SET a = :i - a", true },
		{ "SET a = if_not_exists(a, :v)", true },
		{ "SET a = list_append(a, :v)", true },
		{ "SET a = list_append(:w, :v)", false },
		{ "SET a = list_append(if_not_exists(b, :e), :v)", true },
		{ "SET a = :v, b = c.d", true },
		{ "ADD a :v", true },
		{ "SET x = :v ADD a :v", true },
		{ "DELETE s :v", true },
		{ "REMOVE x DELETE s :v", true },
	};
	struct sm_ddb_expr *e;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		e = ok(UPD, cases[i].text);
		if (sm_ddb_expr_update_needs_read(e) != cases[i].rmw)
			fail_msg("<%s>: needs_read %d, want %d", cases[i].text, !cases[i].rmw,
				 cases[i].rmw);
		sm_ddb_expr_free(e);
	}
	e = ok(COND, "a = b");
	assert_false(sm_ddb_expr_update_needs_read(e));
	sm_ddb_expr_free(e);
	assert_false(sm_ddb_expr_update_needs_read(NULL));
}

/* ---- placeholders ---- */

static void
check_refs(const char *const *got, unsigned n, const char *const *want)
{
	unsigned i;

	for (i = 0; want[i] != NULL; i++) {
		assert_true(i < n);
		assert_string_equal(got[i], want[i]);
	}
	assert_int_equal(i, n);
}

static void
test_placeholders(void **state)
{
	struct sm_ddb_expr *e;

	(void)state;
	e = ok(COND, "#a = :x AND #b.#a < :y OR size(#c[1].d) > :x AND contains(e, :z)");
	check_refs(e->names, e->nnames, (const char *const[]){ "#a", "#b", "#c", NULL });
	check_refs(e->values, e->nvalues, (const char *const[]){ ":x", ":y", ":z", NULL });
	assert_true(sm_ddb_expr_uses(e, "#b"));
	assert_true(sm_ddb_expr_uses(e, ":z"));
	assert_false(sm_ddb_expr_uses(e, "#d"));
	assert_false(sm_ddb_expr_uses(e, ":a"));
	assert_false(sm_ddb_expr_uses(e, "e"));
	sm_ddb_expr_free(e);

	e = ok(UPD, "SET #a = if_not_exists(#b, :v) + :w REMOVE #c ADD #d :w DELETE #e.#a :s");
	check_refs(e->names, e->nnames,
		   (const char *const[]){ "#a", "#b", "#c", "#d", "#e", NULL });
	check_refs(e->values, e->nvalues, (const char *const[]){ ":v", ":w", ":s", NULL });
	sm_ddb_expr_free(e);

	e = ok(PROJ, "#p, a.#q, #p2[1]");
	check_refs(e->names, e->nnames, (const char *const[]){ "#p", "#q", "#p2", NULL });
	assert_int_equal(e->nvalues, 0);
	sm_ddb_expr_free(e);

	/* a placeholder in a failed alternative is not counted */
	e = ok(COND, "(#x) = :v");
	check_refs(e->names, e->nnames, (const char *const[]){ "#x", NULL });
	sm_ddb_expr_free(e);

	{
		struct tenv t = { .names = (const char *const[]){ "#a", "a", NULL },
				  .values = (const char *const[]){ ":v", "S", NULL } };
		struct sm_ddb_expr_env env = mkenv(&t), nomaps = { 0 };

		sm_ddb_expr_free(ok_env(COND, "#a = :v", &env));
		bad_env(COND, "#a = :v AND b = :w", &env,
			"Invalid ConditionExpression: An expression attribute value used in "
			"expression is not defined; attribute value: :w");
		bad_env(COND, "#b.c = :v", &env,
			"Invalid ConditionExpression: An expression attribute name used in the "
			"document path is not defined; attribute name: #b");
		bad_env(COND, "a = :v AND x.#nope = :nope", &env,
			"Invalid ConditionExpression: An expression attribute name used in the "
			"document path is not defined; attribute name: #nope");
		bad_env(FILTER, "#a = :v", &nomaps,
			"Invalid FilterExpression: An expression attribute name used in the "
			"document path is not defined; attribute name: #a");
		bad_env(KEY, "a = :v", &nomaps,
			"Invalid KeyConditionExpression: An expression attribute value used in "
			"expression is not defined; attribute value: :v");
		/* checking later, on a cached tree */
		e = ok(COND, "#a = :v AND #z = :z");
		assert_int_equal(sm_ddb_expr_check(e, NULL, errbuf, sizeof(errbuf)), 0);
		assert_int_equal(sm_ddb_expr_check(e, &env, errbuf, sizeof(errbuf)), -EINVAL);
		assert_string_equal(
			errbuf, "Invalid ConditionExpression: An expression attribute name used in "
				"the document path is not defined; attribute name: #z");
		sm_ddb_expr_free(e);
	}
}

static void
test_unused(void **state)
{
	const char *keys[] = { ":a", ":z", ":b", ":c" };
	bool used[] = { true, true, true, true };
	char small[24];

	(void)state;
	assert_int_equal(sm_ddb_expr_unused(false, keys, used, 4, errbuf, sizeof(errbuf)), 0);
	used[2] = false;
	assert_int_equal(sm_ddb_expr_unused(false, keys, used, 4, errbuf, sizeof(errbuf)), -EINVAL);
	assert_string_equal(errbuf,
			    "Value provided in ExpressionAttributeValues unused in expressions: "
			    "keys: {:b}");
	/* listed in a Java HashSet's order: ":z" hashes to bucket 0, ":a" to 7 */
	used[0] = used[1] = false;
	assert_int_equal(sm_ddb_expr_unused(false, keys, used, 4, errbuf, sizeof(errbuf)), -EINVAL);
	assert_string_equal(errbuf,
			    "Value provided in ExpressionAttributeValues unused in expressions: "
			    "keys: {:z, :a, :b}");
	{
		const char *names[] = { "#name2", "#name1" };
		bool nused[] = { false, true };

		assert_int_equal(sm_ddb_expr_unused(true, names, nused, 2, errbuf, sizeof(errbuf)),
				 -EINVAL);
		assert_string_equal(
			errbuf, "Value provided in ExpressionAttributeNames unused in expressions: "
				"keys: {#name2}");
	}
	/* a short buffer is cut, never overrun */
	assert_int_equal(sm_ddb_expr_unused(false, keys, used, 4, small, sizeof(small)), -EINVAL);
	assert_int_equal(strlen(small), sizeof(small) - 1);
}

/* ---- key conditions ---- */

static void
key_ok(const char *text, const char *pk, const char *sk, const char *pkv, enum sm_ddb_key_op op,
       const char *v0, const char *v1)
{
	struct tenv t = { .names = (const char *const[]){ "#k", "p", "#s", "c", NULL } };
	struct sm_ddb_expr_env env = mkenv(&t);
	struct sm_ddb_expr *e = ok(KEY, text);
	struct sm_ddb_key_cond kc;
	int rc;

	rc = sm_ddb_expr_key_condition(e, &env, pk, sk, &kc, errbuf, sizeof(errbuf));
	if (rc != 0)
		fail_msg("<%s>: %d %s", text, rc, errbuf);
	assert_string_equal(kc.pk_value, pkv);
	assert_int_equal(kc.sk_op, op);
	if (v0 == NULL)
		assert_null(kc.sk_values[0]);
	else
		assert_string_equal(kc.sk_values[0], v0);
	if (v1 == NULL)
		assert_null(kc.sk_values[1]);
	else
		assert_string_equal(kc.sk_values[1], v1);
	sm_ddb_expr_free(e);
}

static void
key_bad(const char *text, const char *sk, const char *want)
{
	struct sm_ddb_expr *e = ok(KEY, text);
	struct sm_ddb_key_cond kc;
	int rc;

	rc = sm_ddb_expr_key_condition(e, NULL, "p", sk, &kc, errbuf, sizeof(errbuf));
	if (rc != -EINVAL)
		fail_msg("<%s>: rc %d, want -EINVAL", text, rc);
	if (strcmp(errbuf, want) != 0)
		fail_msg("<%s>:\n got  '%s'\n want '%s'", text, errbuf, want);
	sm_ddb_expr_free(e);
}

static void
test_key_condition(void **state)
{
	(void)state;
	key_ok("p = :p", "p", "c", ":p", SM_DDB_KEY_NONE, NULL, NULL);
	key_ok("p = :p", "p", NULL, ":p", SM_DDB_KEY_NONE, NULL, NULL);
	key_ok(":p = p", "p", NULL, ":p", SM_DDB_KEY_NONE, NULL, NULL);
	key_ok("p=:p AND c=:c", "p", "c", ":p", SM_DDB_KEY_EQ, ":c", NULL);
	key_ok("p=:p AND c<:c", "p", "c", ":p", SM_DDB_KEY_LT, ":c", NULL);
	key_ok("p=:p AND c<=:c", "p", "c", ":p", SM_DDB_KEY_LE, ":c", NULL);
	key_ok("p=:p AND c>:c", "p", "c", ":p", SM_DDB_KEY_GT, ":c", NULL);
	key_ok("p=:p AND c>=:c", "p", "c", ":p", SM_DDB_KEY_GE, ":c", NULL);
	/* the value first turns the operator round */
	key_ok(":p=p AND :c<c", "p", "c", ":p", SM_DDB_KEY_GT, ":c", NULL);
	key_ok(":p=p AND :c<=c", "p", "c", ":p", SM_DDB_KEY_GE, ":c", NULL);
	key_ok(":p=p AND :c>c", "p", "c", ":p", SM_DDB_KEY_LT, ":c", NULL);
	key_ok(":p=p AND :c>=c", "p", "c", ":p", SM_DDB_KEY_LE, ":c", NULL);
	key_ok("c BETWEEN :a AND :b AND p = :p", "p", "c", ":p", SM_DDB_KEY_BETWEEN, ":a", ":b");
	key_ok("p = :p AnD c BeTwEeN :a aNd :b", "p", "c", ":p", SM_DDB_KEY_BETWEEN, ":a", ":b");
	key_ok("begins_with(c, :s) AND p = :p", "p", "c", ":p", SM_DDB_KEY_BEGINS_WITH, ":s", NULL);
	key_ok("((c=:c) AND (p=:p))", "p", "c", ":p", SM_DDB_KEY_EQ, ":c", NULL);
	key_ok("#k = :p AND #s > :c", "p", "c", ":p", SM_DDB_KEY_GT, ":c", NULL);
	key_ok("(p) = (:p)", "p", "c", ":p", SM_DDB_KEY_NONE, NULL, NULL);

	key_bad("c = :c OR p = :p", "c", "Invalid operator used in KeyConditionExpression: OR");
	key_bad("NOT c = :c AND p = :p", "c",
		"Invalid operator used in KeyConditionExpression: NOT");
	key_bad("p = :p AND c IN (:c)", "c", "Invalid operator used in KeyConditionExpression: IN");
	key_bad("p = :p AND c <> :c", "c", "Invalid operator used in KeyConditionExpression: <>");
	key_bad("p = :p AND attribute_exists(c)", "c",
		"Invalid operator used in KeyConditionExpression: attribute_exists");
	key_bad("contains(a.d, b)", "c",
		"Invalid operator used in KeyConditionExpression: contains");
	key_bad("p = :p AND p = :q", "c",
		"KeyConditionExpressions must only contain one condition per key");
	key_bad("p = :p AND c >= :a AND c <= :b", "c",
		"KeyConditionExpressions must only contain one condition per key");
	key_bad("p = :p AND c < :c AND a < :a", "c", "Conditions can be of length 1 or 2 only");
	key_bad("c = :c", "c", "Query condition missed key schema element: p");
	key_bad("p = :p AND a < :a", "c", "Query condition missed key schema element: c");
	/* without a sort key a second condition is on no key: DynamoDB's words
	 * (ScyllaDB's test_gsi.py test_faux_range_key_in_keyconditionexpression) */
	key_bad("p = :p AND c = :c", NULL, "Query key condition not supported");
	key_bad("p < :p", "c", "Query key condition not supported");
	key_bad("begins_with(p, :p)", "c", "Query key condition not supported");
	key_bad("p = :p AND a.b < :a", "c",
		"KeyConditionExpressions cannot have conditions on nested attributes");
	key_bad("b[0] > :a", "c",
		"KeyConditionExpressions cannot have conditions on nested attributes");
	key_bad("p = c", "c",
		"Invalid condition in KeyConditionExpression: Multiple attribute names used in one "
		"condition");
	key_bad("begins_with(a, b)", "c",
		"Invalid condition in KeyConditionExpression: Multiple attribute names used in one "
		"condition");
	key_bad(":p = :a", "c",
		"Invalid condition in KeyConditionExpression: No key attribute specified");
	key_bad("size(p) = :v", "c", "KeyConditionExpressions cannot contain nested operations");
	key_bad("a between size(b) and size(a)", "c",
		"KeyConditionExpressions cannot contain nested operations");
	key_bad(":a BETWEEN p AND :b", "c",
		"Invalid condition in KeyConditionExpression: BETWEEN operator must have the key "
		"attribute as its first operand");
	key_bad("begins_with(:a, c) AND p = :p", "c",
		"Invalid condition in KeyConditionExpression: begins_with operator must have the "
		"key "
		"attribute as its first operand");
	/* the tree is walked in order: the first bad part is reported */
	key_bad("p = :p AND c = :c AND x <> :x", "c",
		"Invalid operator used in KeyConditionExpression: <>");
	/* many conditions, past the stack room */
	key_bad("a=:v AND b=:v AND c=:v AND d=:v AND e=:v AND f=:v AND g=:v AND h=:v AND i=:v AND "
		"j=:v",
		"c", "Conditions can be of length 1 or 2 only");
	key_bad("a=:v AND b=:v AND c=:v AND d=:v AND e=:v AND f=:v AND g=:v AND h=:v AND i=:v AND "
		"a=:v",
		"c", "KeyConditionExpressions must only contain one condition per key");
	{
		struct sm_ddb_expr *e = ok(UPD, "SET a = :v");
		struct sm_ddb_key_cond kc;

		assert_int_equal(
			sm_ddb_expr_key_condition(e, NULL, "p", NULL, &kc, errbuf, sizeof(errbuf)),
			-EINVAL);
		sm_ddb_expr_free(e);
	}
}

/* ---- limits ---- */

static void
test_limits(void **state)
{
	char *text = malloc(8192), want[256];
	size_t n, i;

	(void)state;
	assert_non_null(text);
	/* the text's length */
	memset(text, 'a', 4096);
	text[4096] = '\0';
	sm_ddb_expr_free(ok(PROJ, text));
	text[4096] = 'a';
	text[4097] = '\0';
	bad(PROJ, text,
	    "Invalid ProjectionExpression: Expression size has exceeded the maximum allowed size; "
	    "expression size: 4097");
	bad(COND, "", "Invalid ConditionExpression: The expression can not be empty;");
	bad(FILTER, "", "Invalid FilterExpression: The expression can not be empty;");
	bad(KEY, "", "Invalid KeyConditionExpression: The expression can not be empty;");
	bad(PROJ, "", "Invalid ProjectionExpression: The expression can not be empty;");

	/* IN takes up to 100 operands */
	n = (size_t)snprintf(text, 8192, "a IN (:v0");
	for (i = 1; i < 100; i++)
		n += (size_t)snprintf(text + n, 8192 - n, ", :v%zu", i);
	snprintf(text + n, 8192 - n, ")");
	sm_ddb_expr_free(ok(COND, text));
	snprintf(text + n, 8192 - n, ", :v100)");
	bad(COND, text,
	    "Invalid ConditionExpression: The IN operator is provided with too many operands; "
	    "number of operands: 101");

	/* paths of up to 32 elements */
	n = (size_t)snprintf(text, 8192, "a");
	for (i = 1; i < 32; i++)
		n += (size_t)snprintf(text + n, 8192 - n, i % 2 ? ".b" : "[1]");
	sm_ddb_expr_free(ok(PROJ, text));
	snprintf(text + n, 8192 - n, ".z");
	bad(PROJ, text,
	    "Invalid ProjectionExpression: The document path has too many nesting levels; nesting "
	    "levels: 33");
	snprintf(want, sizeof(want), "SET %s = :v", text);
	bad(UPD, want,
	    "Invalid UpdateExpression: The document path has too many nesting levels; nesting "
	    "levels: 33");

	/* nesting: a long AND chain is fine, so are DynamoDB's 300 NOTs, not 301 */
	n = 0;
	for (i = 0; n < 4000; i++)
		n += (size_t)snprintf(text + n, 8192 - n, "%sa = :v", i ? " AND " : "");
	sm_ddb_expr_free(ok(COND, text));
	n = 0;
	for (i = 0; i < SM_DDB_EXPR_MAX_OPERATORS; i++)
		n += (size_t)snprintf(text + n, 8192 - n, "NOT ");
	snprintf(text + n, 8192 - n, "a = :v");
	sm_ddb_expr_free(ok(COND, text));
	n = 0;
	for (i = 0; i <= SM_DDB_EXPR_MAX_OPERATORS; i++)
		n += (size_t)snprintf(text + n, 8192 - n, "NOT ");
	snprintf(text + n, 8192 - n, "a = :v");
	bad(COND, text,
	    "Invalid ConditionExpression: The expression contains too many operators; operator "
	    "count: 301");
	/* parentheses up to SM_DDB_EXPR_MAX_NESTING deep */
	n = 0;
	for (i = 0; i < SM_DDB_EXPR_MAX_NESTING; i++)
		n += (size_t)snprintf(text + n, 8192 - n, "(NOT ");
	n += (size_t)snprintf(text + n, 8192 - n, "a = :v");
	for (i = 0; i < SM_DDB_EXPR_MAX_NESTING; i++)
		n += (size_t)snprintf(text + n, 8192 - n, ")");
	sm_ddb_expr_free(ok(COND, text));
	n = 0;
	for (i = 0; i <= SM_DDB_EXPR_MAX_NESTING; i++)
		n += (size_t)snprintf(text + n, 8192 - n, "(NOT ");
	n += (size_t)snprintf(text + n, 8192 - n, "a = :v");
	for (i = 0; i <= SM_DDB_EXPR_MAX_NESTING; i++)
		n += (size_t)snprintf(text + n, 8192 - n, ")");
	assert_int_equal(parse_env(COND, text, NULL, &(struct sm_ddb_expr *){ NULL }), -EINVAL);
	assert_non_null(strstr(errbuf, "Syntax error; token: \"(\""));
	/* deep unbalanced parentheses fail quickly and cleanly */
	memset(text, '(', 4000);
	text[4000] = '\0';
	assert_int_equal(parse_env(COND, text, NULL, &(struct sm_ddb_expr *){ NULL }), -EINVAL);
	free(text);
}

/* Parsing a small expression takes one allocation, and freeing releases it. */
static void
test_allocations(void **state)
{
	struct sm_sw_stats *st = sm_stats_fallback_attach();
	struct sm_ddb_expr *e;
	uint64_t a0, f0;
	const char *text = "attribute_exists(#p) AND (a.b[1] BETWEEN :lo AND :hi OR c IN (:x, :y))";

	(void)state;
	a0 = SM_READ_ONCE(st->allocs);
	f0 = SM_READ_ONCE(st->frees);
	assert_int_equal(
		sm_ddb_expr_parse(COND, text, strlen(text), NULL, &e, errbuf, sizeof(errbuf)), 0);
	assert_int_equal(SM_READ_ONCE(st->allocs) - a0, 1);
	sm_ddb_expr_free(e);
	assert_int_equal(SM_READ_ONCE(st->frees) - f0, 1);
	/* a failed parse frees what it took */
	a0 = SM_READ_ONCE(st->allocs);
	f0 = SM_READ_ONCE(st->frees);
	assert_int_equal(sm_ddb_expr_parse(UPD, "SET a = :v SET b = :w", 21, NULL, &e, errbuf,
					   sizeof(errbuf)),
			 -EINVAL);
	assert_int_equal(SM_READ_ONCE(st->allocs) - a0, SM_READ_ONCE(st->frees) - f0);
}

/* Messages are cut to the caller's buffer, never overrun. */
static void
test_small_buffers(void **state)
{
	static const struct {
		enum sm_ddb_expr_kind kind;
		const char *text;
	} cases[] = {
		{ COND, "a = = b" },  { COND, "name = :v" },	   { UPD, "SET a = :v SET b = :v" },
		{ PROJ, "a, a.b.c" }, { COND, "a.b[1] = a.b[1]" }, { PROJ, "" },
	};
	char small[16];
	struct sm_ddb_expr *e;
	size_t i, len;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (len = 0; len <= sizeof(small); len++) {
			memset(small, 'x', sizeof(small));
			assert_int_equal(sm_ddb_expr_parse(cases[i].kind, cases[i].text,
							   strlen(cases[i].text), NULL, &e,
							   len ? small : NULL, len),
					 -EINVAL);
			if (len > 0)
				assert_true(strlen(small) < len);
		}
	}
}

/* ---- robustness ---- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t
next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static const char *
fuzz_name(void *arg, const char *ref)
{
	(void)arg;
	return ref[1] == 'u' ? NULL : ref + 1;
}

static const char *
fuzz_value(void *arg, const char *ref)
{
	static const char *const types[] = { "S",  "N",	 "B", "BOOL", "NULL", "SS",
					     "NS", "BS", "L", "M",    "" };

	(void)arg;
	if (ref[1] == 'u')
		return NULL;
	return types[(unsigned char)ref[1] % (sizeof(types) / sizeof(types[0]))];
}

/* Parse, and when it parses, run everything else on it too. */
static int
try_all_env(enum sm_ddb_expr_kind kind, const char *text, size_t len, bool use_env)
{
	struct sm_ddb_expr_env env = { .name = fuzz_name, .value_type = fuzz_value };
	struct sm_ddb_key_cond kc;
	struct sm_ddb_expr *e = NULL;
	char *copy = malloc(len ? len : 1);
	unsigned i;
	int rc, rc2;

	assert_non_null(copy);
	memcpy(copy, text, len);
	errbuf[0] = 'x';
	rc = sm_ddb_expr_parse(kind, copy, len, use_env ? &env : NULL, &e, errbuf, sizeof(errbuf));
	free(copy);
	if (rc != 0) {
		if (rc != -EINVAL)
			fail_msg("rc %d for <%.*s>", rc, (int)len, text);
		assert_null(e);
		assert_true(strlen(errbuf) > 0 && strlen(errbuf) < sizeof(errbuf));
		return rc;
	}
	assert_non_null(e);
	rc2 = sm_ddb_expr_check(e, &env, errbuf, sizeof(errbuf));
	assert_true(rc2 == 0 || rc2 == -EINVAL);
	(void)sm_ddb_expr_update_needs_read(e);
	for (i = 0; i < e->nnames; i++)
		assert_true(sm_ddb_expr_uses(e, e->names[i]));
	for (i = 0; i < e->nvalues; i++)
		assert_true(sm_ddb_expr_uses(e, e->values[i]));
	if (e->cond != NULL) {
		rc2 = sm_ddb_expr_key_condition(e, &env, "p", (len & 2) ? "c" : NULL, &kc, errbuf,
						sizeof(errbuf));
		assert_true(rc2 == 0 || rc2 == -EINVAL);
		if (rc2 == 0)
			assert_non_null(kc.pk_value);
	}
	for (i = 0; i < e->npaths; i++)
		(void)sm_ddb_path_top_name(&e->paths[i], &env);
	sm_ddb_expr_free(e);
	return 0;
}

static int
try_all(enum sm_ddb_expr_kind kind, const char *text, size_t len)
{
	return try_all_env(kind, text, len, (len & 1) != 0);
}

static const struct {
	enum sm_ddb_expr_kind kind;
	const char *text;
} corpus[] = {
	{ COND, "attribute_exists(#p) AND (a.b[1] BETWEEN :lo AND :hi OR c IN (:x, :y))" },
	{ COND, "NOT (size(#n.x[3]) > :v AND begins_with(s, :pre)) OR contains(l, :e)" },
	{ COND, "(a) = (:v) AND ((b = :w) OR attribute_type(t, :ty)) AND attribute_not_exists(z)" },
	{ KEY, "p = :p AND c BETWEEN :a AND :b" },
	{ KEY, "#k = :p AND begins_with(#s, :pre)" },
	{ FILTER, "x <> :x AND y <= :y AND z >= :z AND w < :w AND v > :v" },
	{ UPD, "SET a = if_not_exists(a, :z) + :one, l = list_append(if_not_exists(l, :e), :v) "
	       "REMOVE x.y[2], #r ADD n :one DELETE s :s" },
	{ UPD, "SET #a.#b[1] = (b + :c), d = :e - f REMOVE g" },
	{ PROJ, "a.b[1][2].c, #n, d[0], e.f" },
};

static const char alphabet[] = "abcpsxyzABC#:_0129 .,[]()=<>+-\t\n!'\"\\\xc3\xa9\xff";

/* clang-format off */
static const char *const fuzz_tokens[] = {
	"a", "b.c", "[0]", "[1]", "#n", ":v", ":u", "#u", "(", ")", ",", "=", "<>", "<", ">=", "+",
	"-", " AND ", " OR ", " NOT ", " BETWEEN ", " IN ", "SET ", "REMOVE ", "ADD ", "DELETE ",
	"size(", "contains(", "attribute_exists(", "begins_with(", "if_not_exists(",
	"list_append(", "foo(", "name", "[2147483648]", " ",
};
/* clang-format on */

static void
test_fuzz(void **state)
{
	char buf[600];
	unsigned i, j, k, n, nok = 0, nfail = 0;
	size_t len, c;

	(void)state;
	/* every prefix and every single-byte deletion of valid expressions */
	for (c = 0; c < sizeof(corpus) / sizeof(corpus[0]); c++) {
		len = strlen(corpus[c].text);
		assert_int_equal(try_all_env(corpus[c].kind, corpus[c].text, len, false), 0);
		for (i = 0; i <= len; i++) {
			try_all(corpus[c].kind, corpus[c].text, i);
			memcpy(buf, corpus[c].text, i);
			memcpy(buf + i, corpus[c].text + i + (i < len), len - i - (i < len));
			try_all(corpus[c].kind, buf, len - (i < len));
		}
	}
	/* random mutations of valid expressions */
	for (i = 0; i < 30000; i++) {
		c = next_rand() % (sizeof(corpus) / sizeof(corpus[0]));
		len = strlen(corpus[c].text);
		memcpy(buf, corpus[c].text, len);
		n = 1 + (unsigned)(next_rand() % 4);
		for (j = 0; j < n && len > 0; j++) {
			k = (unsigned)(next_rand() % len);
			switch (next_rand() % 3) {
			case 0:
				buf[k] = alphabet[next_rand() % (sizeof(alphabet) - 1)];
				break;
			case 1:
				memmove(buf + k, buf + k + 1, len - k - 1);
				len--;
				break;
			default:
				if (len + 1 < sizeof(buf)) {
					memmove(buf + k + 1, buf + k, len - k);
					buf[k] = alphabet[next_rand() % (sizeof(alphabet) - 1)];
					len++;
				}
				break;
			}
		}
		if (try_all(corpus[c].kind, buf, len) == 0)
			nok++;
		else
			nfail++;
	}
	assert_true(nok > 1000);
	assert_true(nfail > 1000);
	/* random token soup, and random bytes */
	for (i = 0; i < 20000; i++) {
		len = 0;
		n = (unsigned)(next_rand() % 24);
		for (j = 0; j < n; j++) {
			const char *t = fuzz_tokens[next_rand() %
						    (sizeof(fuzz_tokens) / sizeof(fuzz_tokens[0]))];

			if (len + strlen(t) >= sizeof(buf))
				break;
			memcpy(buf + len, t, strlen(t));
			len += strlen(t);
		}
		try_all((enum sm_ddb_expr_kind)(next_rand() % 5), buf, len);
		len = (size_t)(next_rand() % 64);
		for (j = 0; j < len; j++)
			buf[j] = (next_rand() & 1) ? (char)next_rand()
						   : alphabet[next_rand() % (sizeof(alphabet) - 1)];
		try_all((enum sm_ddb_expr_kind)(next_rand() % 5), buf, len);
	}
}

/* ---- overlapping paths against the pairwise definition ---- */

struct rpath {
	unsigned n;
	const char *name[4]; /* as written; NULL: index[k] */
	unsigned index[4];
};

static const char *
resolved(const char *name)
{
	return strcmp(name, "#x") == 0 ? "a" : strcmp(name, "#y") == 0 ? "b" : name;
}

/* "overlap", "conflict" or NULL for two paths, by the definition. */
static const char *
clash(const struct rpath *a, const struct rpath *b)
{
	unsigned k, m = a->n < b->n ? a->n : b->n;

	for (k = 0; k < m; k++) {
		if ((a->name[k] == NULL) != (b->name[k] == NULL))
			return "conflict";
		if (a->name[k] == NULL ? a->index[k] != b->index[k]
				       : strcmp(resolved(a->name[k]), resolved(b->name[k])) != 0)
			return NULL;
	}
	return "overlap";
}

static size_t
rpath_text(const struct rpath *p, bool resolve, char *buf, size_t cap)
{
	size_t n = 0;
	unsigned k;

	if (resolve)
		n += (size_t)snprintf(buf + n, cap - n, "[");
	for (k = 0; k < p->n; k++) {
		if (resolve)
			n += (size_t)snprintf(buf + n, cap - n, "%s", k ? ", " : "");
		if (p->name[k] == NULL)
			n += (size_t)snprintf(buf + n, cap - n, "[%u]", p->index[k]);
		else
			n += (size_t)snprintf(buf + n, cap - n, "%s%s", k && !resolve ? "." : "",
					      resolve ? resolved(p->name[k]) : p->name[k]);
	}
	if (resolve)
		n += (size_t)snprintf(buf + n, cap - n, "]");
	return n;
}

/*
 * Random projections of up to 40 paths over a few names (#x and #y stand
 * for a and b) and indices: the first path to clash with an earlier one,
 * and the first of those, as comparing every pair in order finds them.
 */
static void
test_overlap_random(void **state)
{
	static const char *const first[] = { "a", "b", "c", "#x" };
	static const char *const rest[] = { "a", "b", "#y" };
	struct tenv t = { .names = (const char *const[]){ "#x", "a", "#y", "b", NULL } };
	struct sm_ddb_expr_env env = mkenv(&t);
	struct rpath paths[40];
	char text[4096], want[1024];
	struct sm_ddb_expr *e;
	unsigned round, n, i, j, k;
	uint64_t r = 0x243f6a8885a308d3ull;
	const char *what;
	size_t len;
	int rc;

	(void)state;
	for (round = 0; round < 3000; round++) {
		r = r * 6364136223846793005ull + 1442695040888963407ull;
		n = 2 + (unsigned)(r >> 59) % 39;
		len = 0;
		for (i = 0; i < n; i++) {
			r = r * 6364136223846793005ull + 1442695040888963407ull;
			paths[i].n = 1 + (unsigned)(r >> 62);
			paths[i].name[0] = first[(r >> 40) % 4];
			for (k = 1; k < paths[i].n; k++) {
				unsigned x = (unsigned)(r >> (8 * k)) % 5;

				paths[i].name[k] = x < 3 ? rest[x] : NULL;
				paths[i].index[k] = x - 3;
			}
			len += (size_t)snprintf(text + len, sizeof(text) - len, "%s",
						i ? ", " : "");
			len += rpath_text(&paths[i], false, text + len, sizeof(text) - len);
		}
		what = NULL;
		for (j = 1; j < n && what == NULL; j++)
			for (i = 0; i < j && what == NULL; i++)
				what = clash(&paths[i], &paths[j]);
		rc = parse_env(PROJ, text, &env, &e);
		if (what == NULL) {
			if (rc != 0)
				fail_msg("<%s>: %s", text, errbuf);
			sm_ddb_expr_free(e);
			continue;
		}
		i--;
		j--;
		len = (size_t)snprintf(
			want, sizeof(want),
			"Invalid ProjectionExpression: Two document paths %s with "
			"each other; must remove or rewrite one of these paths; path "
			"one: ",
			what);
		len += rpath_text(&paths[i], true, want + len, sizeof(want) - len);
		len += (size_t)snprintf(want + len, sizeof(want) - len, ", path two: ");
		rpath_text(&paths[j], true, want + len, sizeof(want) - len);
		if (rc != -EINVAL || strcmp(errbuf, want) != 0)
			fail_msg("<%s>: rc %d '%s', want '%s'", text, rc, errbuf, want);
	}
}

/* 700 paths that do not clash parse; one more that clashes with the first is found. */
static void
test_overlap_many(void **state)
{
	char text[4096];
	size_t n = 0;
	unsigned i;

	(void)state;
	for (i = 0; i < 700; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%sa%u", i ? "," : "", i);
	sm_ddb_expr_free(ok(PROJ, text));
	n = (size_t)snprintf(text, sizeof(text), "m[0]");
	for (i = 1; i < 500; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, ",m[%u]", i);
	sm_ddb_expr_free(ok(PROJ, text));
	snprintf(text + n, sizeof(text) - n, ",m.x");
	bad(PROJ, text,
	    "Invalid ProjectionExpression: Two document paths conflict with each other; must "
	    "remove or rewrite one of these paths; path one: [m, [0]], path two: [m, x]");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paths),	      cmocka_unit_test(test_comparisons),
		cmocka_unit_test(test_functions),     cmocka_unit_test(test_precedence),
		cmocka_unit_test(test_reserved),      cmocka_unit_test(test_update),
		cmocka_unit_test(test_update_types),  cmocka_unit_test(test_rmw),
		cmocka_unit_test(test_placeholders),  cmocka_unit_test(test_unused),
		cmocka_unit_test(test_key_condition), cmocka_unit_test(test_limits),
		cmocka_unit_test(test_allocations),   cmocka_unit_test(test_small_buffers),
		cmocka_unit_test(test_fuzz),	      cmocka_unit_test(test_overlap_random),
		cmocka_unit_test(test_overlap_many),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
