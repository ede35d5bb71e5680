/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_DDB_EXPR_H
#define SM_DDB_EXPR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * DynamoDB's expression languages: ConditionExpression, FilterExpression,
 * KeyConditionExpression, UpdateExpression and ProjectionExpression, parsed
 * into a tree that an evaluator walks. Nothing here evaluates: values stay
 * :placeholders and names stay #placeholders, resolved by whoever holds the
 * request's ExpressionAttributeValues and ExpressionAttributeNames.
 *
 * Checks, in DynamoDB's order, split in two so that a parsed expression can
 * be cached and reused with other placeholder maps:
 *   sm_ddb_expr_parse()  syntax (DynamoDB's "Syntax error; token: ..., near:
 *                        ..." message), redundant parentheses, reserved
 *                        words, list index range, function names and where
 *                        each function may appear, repeated update sections;
 *                        then everything sm_ddb_expr_check() does with the
 *                        @env given (which may be NULL).
 *   sm_ddb_expr_check()  what needs the placeholder maps: undefined #names and
 *                        :values, overlapping or conflicting paths, operands
 *                        that must differ (a = a), IN with more than 100
 *                        operands, paths nested more than 32 levels, update
 *                        function operand counts, functions that need a path,
 *                        and the operand types DynamoDB checks from the
 *                        values' types alone. With @env NULL, names compare as
 *                        written and the undefined and type checks are left
 *                        out, so it finds a subset of what it finds with one.
 * Every error is -EINVAL with DynamoDB's ValidationException message in the
 * caller's buffer, prefixed like DynamoDB's ("Invalid UpdateExpression: ...")
 * where DynamoDB prefixes it. -ENOMEM is out of memory.
 *
 * Memory: a parsed expression lives in one arena, usually a single
 * sm_malloc(), freed by sm_ddb_expr_free(). It does not point into the text.
 */

/* Longest expression DynamoDB accepts, in bytes. */
#define SM_DDB_EXPR_MAX_LEN 4096u
/* Most operands to the right of IN. */
#define SM_DDB_EXPR_MAX_IN 100u
/* Most elements in one document path (a.b[1] has three). */
#define SM_DDB_EXPR_MAX_PATH 32u
/* Deepest nesting of parentheses and function calls; deeper is a syntax error. */
#define SM_DDB_EXPR_MAX_NESTING 200u
#define SM_DDB_EXPR_MAX_OPERATORS 300u
/* Largest list index in a path. */
#define SM_DDB_EXPR_MAX_INDEX 2147483647u

enum sm_ddb_expr_kind {
	SM_DDB_CONDITION,     /* ConditionExpression: a condition */
	SM_DDB_FILTER,	      /* FilterExpression: a condition */
	SM_DDB_KEY_CONDITION, /* KeyConditionExpression: a condition (sm_ddb_expr_key_condition()) */
	SM_DDB_UPDATE,	      /* UpdateExpression: actions */
	SM_DDB_PROJECTION,    /* ProjectionExpression: paths */
};

/* ---- document paths ---- */

/*
 * One step of a path: a name (an attribute at the top, a map key below), or
 * a list index. @name is as written: "a", or "#n" with @ref set.
 */
struct sm_ddb_path_elem {
	const char *name; /* NULL for a list index */
	uint32_t index;	  /* list index, when name is NULL */
	bool ref;	  /* name is a #placeholder */
};

/* a, #n, a.b, a[2], #n.b[1][2].c: elems[0] is always a name. */
struct sm_ddb_path {
	struct sm_ddb_path_elem *elems;
	unsigned nelems;
};

/* ---- operands (values) ---- */

enum sm_ddb_operand_kind {
	SM_DDB_OP_PATH,	 /* an attribute of the item: path */
	SM_DDB_OP_VALUE, /* an ExpressionAttributeValues entry: value (":v") */
	SM_DDB_OP_CALL,	 /* func(args...): func, name, args */
	SM_DDB_OP_PLUS,	 /* args[0] + args[1]; only a SET value */
	SM_DDB_OP_MINUS, /* args[0] - args[1]; only a SET value */
};

/*
 * The functions. Where each may appear is checked by the parser:
 *   condition (a boolean):  attribute_exists(path), attribute_not_exists(path),
 *                           attribute_type(path, :type), begins_with(a, b),
 *                           contains(a, b)
 *   operand in a condition: size(a)
 *   SET value:              if_not_exists(path, v), list_append(a, b); either
 *                           may be an operand of + or -, if_not_exists may be
 *                           an argument of list_append (not the reverse)
 */
enum sm_ddb_func {
	SM_DDB_FN_ATTRIBUTE_EXISTS,
	SM_DDB_FN_ATTRIBUTE_NOT_EXISTS,
	SM_DDB_FN_ATTRIBUTE_TYPE,
	SM_DDB_FN_BEGINS_WITH,
	SM_DDB_FN_CONTAINS,
	SM_DDB_FN_SIZE,
	SM_DDB_FN_IF_NOT_EXISTS,
	SM_DDB_FN_LIST_APPEND,
};

struct sm_ddb_operand {
	enum sm_ddb_operand_kind kind;
	struct sm_ddb_path path; /* PATH */
	const char *value;	 /* VALUE: the placeholder, ":v" */
	enum sm_ddb_func func;	 /* CALL */
	const char *name;	 /* CALL: the function's name as written */
	struct sm_ddb_operand **args;
	unsigned nargs; /* CALL: 1 or 2 (checked); PLUS, MINUS: 2 */
	bool parens;	/* written in parentheses; no meaning for evaluation */
};

/* ---- conditions ---- */

enum sm_ddb_cond_kind {
	SM_DDB_COND_OR,	     /* left OR right */
	SM_DDB_COND_AND,     /* left AND right */
	SM_DDB_COND_NOT,     /* NOT left */
	SM_DDB_COND_CMP,     /* operands[0] op operands[1] */
	SM_DDB_COND_BETWEEN, /* operands[0] BETWEEN operands[1] AND operands[2] */
	SM_DDB_COND_IN,	     /* operands[0] IN (operands[1], ..., operands[n - 1]) */
	SM_DDB_COND_CALL,    /* a boolean function: operands[0], a CALL operand */
};

enum sm_ddb_cmp {
	SM_DDB_EQ, /* = */
	SM_DDB_NE, /* <> */
	SM_DDB_LT, /* < */
	SM_DDB_LE, /* <= */
	SM_DDB_GT, /* > */
	SM_DDB_GE, /* >= */
};

/*
 * Precedence is already in the shape of the tree: NOT binds tighter than
 * AND, AND tighter than OR; AND and OR chains lean left (a AND b AND c is
 * (a AND b) AND c). Parentheses leave no node.
 */
struct sm_ddb_cond {
	enum sm_ddb_cond_kind kind;
	enum sm_ddb_cmp op; /* CMP */
	struct sm_ddb_cond *left;
	struct sm_ddb_cond *right;
	struct sm_ddb_operand **operands;
	unsigned noperands;
	bool parens; /* written in parentheses; no meaning for evaluation */
};

/* ---- updates ---- */

enum sm_ddb_action_kind {
	SM_DDB_SET,    /* path = value */
	SM_DDB_REMOVE, /* path */
	SM_DDB_ADD,    /* path value; value is a VALUE operand */
	SM_DDB_DELETE, /* path value; value is a VALUE operand */
};

struct sm_ddb_action {
	enum sm_ddb_action_kind kind;
	struct sm_ddb_path path;
	struct sm_ddb_operand *value; /* NULL for REMOVE */
};

/* ---- the expression ---- */

struct sm_arena;

struct sm_ddb_expr {
	enum sm_ddb_expr_kind kind;
	struct sm_ddb_cond *cond; /* CONDITION, FILTER, KEY_CONDITION */
	struct sm_ddb_action *actions;
	unsigned nactions; /* UPDATE: in the order written; at most one clause of each kind */
	struct sm_ddb_path *paths;
	unsigned npaths; /* PROJECTION */
	/* Every placeholder used, each once, in the order first written. */
	const char **names; /* "#n" */
	unsigned nnames;
	const char **values; /* ":v" */
	unsigned nvalues;
	/* The same, sorted (strcmp), for sm_ddb_expr_uses(). */
	const char **names_sorted;
	const char **values_sorted;
	struct sm_arena *arena;
};

/*
 * The request's placeholder maps, as the checks see them.
 *   name(arg, "#n")        the attribute name #n stands for, or NULL when
 *                          ExpressionAttributeNames lacks it
 *   value_type(arg, ":v")  the DynamoDB type of :v ("S", "N", "B", "BOOL",
 *                          "NULL", "SS", "NS", "BS", "L", "M"), "" to leave
 *                          its type unchecked, or NULL when
 *                          ExpressionAttributeValues lacks it
 * A NULL callback stands for a map the request does not have. A name
 * returned must stay valid until the parse or check that asked returns:
 * the checks resolve each #name once and keep it.
 */
struct sm_ddb_expr_env {
	const char *(*name)(void *arg, const char *ref);
	const char *(*value_type)(void *arg, const char *ref);
	void *arg;
};

/*
 * Parse @len bytes of @text as an expression of @kind into *@out and run
 * sm_ddb_expr_check() with @env (NULL: the checks that need no maps). 0, or
 * -EINVAL with DynamoDB's message in @err (the text empty: "Invalid
 * UpdateExpression: The expression can not be empty;"; longer than
 * SM_DDB_EXPR_MAX_LEN: "... Expression size has exceeded the maximum allowed
 * size; expression size: N"), or -ENOMEM. *@out is NULL on error.
 */
int
sm_ddb_expr_parse(enum sm_ddb_expr_kind kind, const char *text, size_t len,
		  const struct sm_ddb_expr_env *env, struct sm_ddb_expr **out, char *err,
		  size_t errlen);

/*
 * The checks that depend on the request's placeholder maps (see the top of
 * this file), in DynamoDB's order, on an expression already parsed. 0 or
 * -EINVAL with the message: "Invalid ConditionExpression: An expression
 * attribute value used in expression is not defined; attribute value: :v",
 * "... An expression attribute name used in the document path is not
 * defined; attribute name: #n", "... Two document paths overlap with each
 * other; must remove or rewrite one of these paths; path one: [a], path two:
 * [a, b]", ...
 */
int
sm_ddb_expr_check(const struct sm_ddb_expr *e, const struct sm_ddb_expr_env *env, char *err,
		  size_t errlen);

/* Release @e and everything in it; NULL is fine. */
void
sm_ddb_expr_free(struct sm_ddb_expr *e);

/* "ConditionExpression", "UpdateExpression", ...: how DynamoDB's messages name @kind. */
const char *
sm_ddb_expr_kind_name(enum sm_ddb_expr_kind kind);

/* ---- placeholders ---- */

/* True when @e uses the placeholder @ref ("#n" or ":v"); O(log n). */
bool
sm_ddb_expr_uses(const struct sm_ddb_expr *e, const char *ref);

/*
 * DynamoDB's complaint about map entries no expression used. @keys are all
 * @nkeys keys of ExpressionAttributeNames (@names true) or
 * ExpressionAttributeValues, in request order, and @used[i] says whether any
 * of the request's expressions used keys[i] (sm_ddb_expr_uses()). 0 when all
 * were used, else -EINVAL with "Value provided in ExpressionAttributeValues
 * unused in expressions: keys: {:a, :b}", the keys in the order DynamoDB
 * lists them (a Java HashSet's); -ENOMEM when out of memory.
 */
int
sm_ddb_expr_unused(bool names, const char *const *keys, const bool *used, unsigned nkeys, char *err,
		   size_t errlen);

/* ---- for the executor ---- */

/* True when @p names a top-level attribute: no .x or [n] steps. */
bool
sm_ddb_path_is_top_level(const struct sm_ddb_path *p);

/*
 * The top-level attribute @p is in: elems[0]'s name, a #placeholder resolved
 * through @env (as written when @env is NULL or cannot resolve it).
 */
const char *
sm_ddb_path_top_name(const struct sm_ddb_path *p, const struct sm_ddb_expr_env *env);

/*
 * Whether UpdateExpression @e must read the item before writing it
 * (Alternator's rule): an action on a nested path (SET a.b = .., REMOVE a[2]),
 * a SET value that reads an attribute (SET a = b, a = a + :i,
 * if_not_exists(a, :v), list_append(a, :l)), any ADD, any DELETE. False for
 * SET a = :v, SET a = :x + :y, REMOVE a, and for other kinds.
 */
bool
sm_ddb_expr_update_needs_read(const struct sm_ddb_expr *e);

/* ---- key conditions ---- */

enum sm_ddb_key_op {
	SM_DDB_KEY_NONE, /* the sort key is not restricted */
	SM_DDB_KEY_EQ,
	SM_DDB_KEY_LT,
	SM_DDB_KEY_LE,
	SM_DDB_KEY_GT,
	SM_DDB_KEY_GE,
	SM_DDB_KEY_BETWEEN,	/* sk_values[0] <= sk <= sk_values[1] */
	SM_DDB_KEY_BEGINS_WITH, /* begins_with(sk, sk_values[0]) */
};

/* A Query's key condition: pk = pk_value AND sk <sk_op> sk_values. */
struct sm_ddb_key_cond {
	const char *pk_value; /* ":v" */
	enum sm_ddb_key_op sk_op;
	const char *sk_values[2]; /* ":v"; operators are turned round for :v < sk */
};

/*
 * Extract the key condition from a parsed KeyConditionExpression @e for a
 * table (or index) whose partition key is named @pk and sort key @sk (NULL
 * when it has none); #placeholders resolve through @env. 0, or -EINVAL with
 * DynamoDB's message: "Invalid operator used in KeyConditionExpression: OR",
 * "KeyConditionExpressions must only contain one condition per key",
 * "Query condition missed key schema element: p", "Query key condition not
 * supported", ... Comparing the values' types with the key's is the caller's.
 */
int
sm_ddb_expr_key_condition(const struct sm_ddb_expr *e, const struct sm_ddb_expr_env *env,
			  const char *pk, const char *sk, struct sm_ddb_key_cond *out, char *err,
			  size_t errlen);

/* True when @word (@len bytes) is one of DynamoDB's reserved words, any case. */
bool
sm_ddb_is_reserved(const char *word, size_t len);

#endif /* SM_DDB_EXPR_H */
