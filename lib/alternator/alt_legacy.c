/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The legacy conditions: Expected (PutItem, UpdateItem, DeleteItem),
 * QueryFilter and ScanFilter, each a map from an attribute name to one
 * condition (Value/Exists, or a ComparisonOperator with its
 * AttributeValueList), joined by ConditionalOperator.
 *
 * As in ScyllaDB (alternator/conditions.cc, verify_expected_one()), the
 * values of the request are checked whatever the item holds: a request
 * whose AttributeValueList cannot be compared is a ValidationException even
 * when the attribute is missing, while a value of the item that cannot be
 * compared only makes the condition false. The messages are DynamoDB's.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "alt_priv.h"

enum legacy_op { L_EQ, L_NE, L_LE, L_LT, L_GE, L_GT, L_CONTAINS, L_NOT_CONTAINS, L_BEGINS_WITH,
		 L_NULL, L_NOT_NULL, L_IN, L_BETWEEN };

static const struct {
	const char *name;
	int min, max; /* AttributeValueList length */
} legacy_ops[] = {
	[L_EQ] = { "EQ", 1, 1 },
	[L_NE] = { "NE", 1, 1 },
	[L_LE] = { "LE", 1, 1 },
	[L_LT] = { "LT", 1, 1 },
	[L_GE] = { "GE", 1, 1 },
	[L_GT] = { "GT", 1, 1 },
	[L_CONTAINS] = { "CONTAINS", 1, 1 },
	[L_NOT_CONTAINS] = { "NOT_CONTAINS", 1, 1 },
	[L_BEGINS_WITH] = { "BEGINS_WITH", 1, 1 },
	[L_NULL] = { "NULL", 0, 0 },
	[L_NOT_NULL] = { "NOT_NULL", 0, 0 },
	[L_IN] = { "IN", 1, INT32_MAX },
	[L_BETWEEN] = { "BETWEEN", 2, 2 },
};

/* The DynamoDB type of value @tok of the request ("" when malformed). */
static const char *
req_type(struct alt_op *op, int tok, char t[5])
{
	int p;

	if (alt_value_type(&op->doc, tok, t, &p) < 0)
		t[0] = '\0';
	return t;
}

static bool
scalar(const char *t)
{
	return t[1] == '\0' && (t[0] == 'S' || t[0] == 'N' || t[0] == 'B');
}

static int
not_valid_for(struct alt_op *op, enum legacy_op o, const char *type)
{
	snprintf(op->errmsg, sizeof(op->errmsg),
		 "One or more parameter values were invalid: ComparisonOperator %s is not valid for "
		 "%s AttributeValue type",
		 legacy_ops[o].name, type[0] ? type : "an unknown");
	return -EINVAL;
}

/* The checks a ComparisonOperator's AttributeValueList gets whatever the item is. */
static int
check_values(struct alt_op *op, enum legacy_op o, int list, unsigned n)
{
	char t[5], t2[5];
	int a = sm_json_first(&op->doc, list), b;
	int cmp;

	switch (o) {
	case L_LE:
	case L_LT:
	case L_GE:
	case L_GT:
	case L_CONTAINS:
	case L_NOT_CONTAINS:
		if (!scalar(req_type(op, a, t)))
			return not_valid_for(op, o, t);
		return 0;
	case L_BEGINS_WITH:
		req_type(op, a, t);
		if (!(t[1] == '\0' && (t[0] == 'S' || t[0] == 'B')))
			return not_valid_for(op, o, t);
		return 0;
	case L_IN:
	case L_BETWEEN:
		if (!scalar(req_type(op, a, t)))
			return not_valid_for(op, o, t);
		for (b = sm_json_next(&op->doc, a); b >= 0; b = sm_json_next(&op->doc, b)) {
			if (strcmp(req_type(op, b, t2), t) != 0) {
				snprintf(op->errmsg, sizeof(op->errmsg),
					 "One or more parameter values were invalid: AttributeValues "
					 "inside AttributeValueList must be of same type");
				return -EINVAL;
			}
		}
		if (o == L_BETWEEN && n == 2 &&
		    alt_value_compare(op, (struct alt_val){ &op->doc, a },
				      (struct alt_val){ &op->doc, sm_json_next(&op->doc, a) },
				      &cmp) == 0 &&
		    cmp > 0) {
			snprintf(op->errmsg, sizeof(op->errmsg),
				 "The BETWEEN condition was provided a range where the lower bound is "
				 "greater than the upper bound");
			return -EINVAL;
		}
		return 0;
	default:
		return 0;
	}
}

static bool
ordered(struct alt_op *op, enum legacy_op o, struct alt_val a, struct alt_val b)
{
	int cmp;

	if (alt_value_compare(op, a, b, &cmp) < 0)
		return false; /* another type, or not comparable: false, not an error */
	return (o == L_LT && cmp < 0) || (o == L_LE && cmp <= 0) || (o == L_GT && cmp > 0) ||
	       (o == L_GE && cmp >= 0);
}

/*
 * One condition @spec on attribute @name, whose value in the item is @cur
 * of @d (-1: missing): *out whether it holds, or -EINVAL with the message.
 */
static int
legacy_one(struct alt_op *op, const char *name, int spec, const struct sm_json_doc *d, int cur,
	   bool *out)
{
	int value = sm_json_get(&op->doc, spec, "Value");
	int exists = sm_json_get(&op->doc, spec, "Exists");
	int cop = sm_json_get(&op->doc, spec, "ComparisonOperator");
	int list = sm_json_get(&op->doc, spec, "AttributeValueList");
	struct alt_val a = { d, cur }, b = { &op->doc, sm_json_first(&op->doc, list) };
	struct sm_bytes opn;
	bool ex = true;
	unsigned n = 0, i;
	int e, ret;

	*out = false;
	if (sm_json_type(&op->doc, spec) != SM_JSON_OBJECT) {
		snprintf(op->errmsg, sizeof(op->errmsg), "Condition for attribute %s must be a map",
			 name);
		return -EINVAL;
	}
	if (cop >= 0 && (value >= 0 || exists >= 0)) {
		snprintf(op->errmsg, sizeof(op->errmsg),
			 "One or more parameter values were invalid: Cannot combine %s with "
			 "ComparisonOperator for Attribute: %s",
			 value >= 0 ? "Value" : "Exists", name);
		return -EINVAL;
	}
	if (cop < 0) {
		if (exists >= 0 && sm_json_bool(&op->doc, exists, &ex) < 0) {
			snprintf(op->errmsg, sizeof(op->errmsg),
				 "One or more parameter values were invalid: Exists must be a boolean "
				 "for Attribute: %s",
				 name);
			return -EINVAL;
		}
		if (!ex) {
			if (value >= 0) {
				snprintf(op->errmsg, sizeof(op->errmsg),
					 "One or more parameter values were invalid: Value cannot be "
					 "used when Exists is false for Attribute: %s",
					 name);
				return -EINVAL;
			}
			*out = cur < 0;
			return 0;
		}
		if (value < 0) {
			snprintf(op->errmsg, sizeof(op->errmsg),
				 "One or more parameter values were invalid: Value must be provided "
				 "when Exists is true for Attribute: %s",
				 name);
			return -EINVAL;
		}
		*out = cur >= 0 && alt_value_equal(op, a, (struct alt_val){ &op->doc, value });
		return 0;
	}
	if (sm_json_type(&op->doc, cop) != SM_JSON_STRING ||
	    alt_payload_str(op, &op->doc, cop, &opn) < 0)
		opn = (struct sm_bytes){ (const uint8_t *)"", 0 };
	for (i = 0; i < SM_ARRAY_SIZE(legacy_ops); i++)
		if (opn.len == strlen(legacy_ops[i].name) &&
		    memcmp(opn.p, legacy_ops[i].name, opn.len) == 0)
			break;
	if (i == SM_ARRAY_SIZE(legacy_ops)) {
		snprintf(op->errmsg, sizeof(op->errmsg),
			 "1 validation error detected: Value '%.*s' at "
			 "'comparisonOperator' failed to satisfy constraint: Member must satisfy enum "
			 "value set: [IN, NULL, BETWEEN, LT, NOT_CONTAINS, EQ, GT, NOT_NULL, NE, LE, "
			 "BEGINS_WITH, GE, CONTAINS]",
			 (int)SM_MIN(opn.len, 32u), (const char *)opn.p);
		return -EINVAL;
	}
	if (list >= 0 && sm_json_type(&op->doc, list) != SM_JSON_ARRAY) {
		snprintf(op->errmsg, sizeof(op->errmsg),
			 "With ComparisonOperator, AttributeValueList must be given and an array");
		return -EINVAL;
	}
	n = sm_json_count(&op->doc, list);
	if ((int)n < legacy_ops[i].min || (int64_t)n > legacy_ops[i].max) {
		snprintf(op->errmsg, sizeof(op->errmsg),
			 "One or more parameter values were invalid: Invalid number of argument(s) for "
			 "the %s ComparisonOperator",
			 legacy_ops[i].name);
		return -EINVAL;
	}
	ret = check_values(op, (enum legacy_op)i, list, n);
	if (ret < 0)
		return ret;
	switch ((enum legacy_op)i) {
	case L_NULL:
		*out = cur < 0;
		return 0;
	case L_NOT_NULL:
		*out = cur >= 0;
		return 0;
	case L_NE:
		/* a missing attribute differs from anything (DynamoDB's NE) */
		*out = cur < 0 || !alt_value_equal(op, a, b);
		return 0;
	default:
		break;
	}
	if (cur < 0)
		return 0; /* the rest are false on a missing attribute, NOT_CONTAINS too */
	switch ((enum legacy_op)i) {
	case L_EQ:
		*out = alt_value_equal(op, a, b);
		break;
	case L_LE:
	case L_LT:
	case L_GE:
	case L_GT:
		*out = ordered(op, (enum legacy_op)i, a, b);
		break;
	case L_CONTAINS:
		*out = alt_value_contains(op, a, b);
		break;
	case L_NOT_CONTAINS:
		*out = !alt_value_contains(op, a, b);
		break;
	case L_BEGINS_WITH:
		*out = alt_value_begins_with(op, a, b);
		break;
	case L_IN:
		for (e = b.tok; e >= 0 && !*out; e = sm_json_next(&op->doc, e))
			*out = alt_value_equal(op, a, (struct alt_val){ &op->doc, e });
		break;
	case L_BETWEEN:
		*out = ordered(op, L_GE, a, b) &&
		       ordered(op, L_LE, a,
			       (struct alt_val){ &op->doc, sm_json_next(&op->doc, b.tok) });
		break;
	default:
		break;
	}
	return 0;
}

int
alt_legacy_operator(struct alt_op *op, int conds, int *any)
{
	int co = sm_json_get(&op->doc, op->root, "ConditionalOperator");

	*any = 0;
	if (co < 0)
		return 0;
	if (sm_json_str_eq(&op->doc, co, "OR"))
		*any = 1;
	else if (!sm_json_str_eq(&op->doc, co, "AND")) {
		snprintf(op->errmsg, sizeof(op->errmsg),
			 "1 validation error detected: Value at 'conditionalOperator' failed to "
			 "satisfy constraint: Member must satisfy enum value set: [AND, OR]");
		return -EINVAL;
	}
	if (sm_json_count(&op->doc, conds) == 0) {
		snprintf(op->errmsg, sizeof(op->errmsg),
			 "ConditionalOperator cannot be used without a non-empty Expected, QueryFilter "
			 "or ScanFilter");
		return -EINVAL;
	}
	return 0;
}

int
alt_legacy_validate(struct alt_op *op, int conds, const char *member)
{
	struct sm_bytes k;
	const char *name;
	bool r;
	int e, ret;

	if (sm_json_type(&op->doc, conds) != SM_JSON_OBJECT) {
		snprintf(op->errmsg, sizeof(op->errmsg), "%s must be a map", member);
		return -EINVAL;
	}
	for (e = sm_json_first(&op->doc, conds); e >= 0; e = sm_json_next(&op->doc, e)) {
		if (alt_payload_str(op, &op->doc, e, &k) < 0 ||
		    (name = alt_keep_str(op, k.p, k.len)) == NULL)
			return -ENOMEM;
		/* against no item: every error a request has whatever the item */
		ret = legacy_one(op, name, sm_json_member_value(&op->doc, e), &op->doc, -1, &r);
		if (ret < 0)
			return ret;
	}
	return 0;
}

int
alt_legacy_eval(struct alt_op *op, int conds, bool any, const struct sm_json_doc *d, int itok,
		bool *out)
{
	struct sm_bytes k;
	const char *name;
	bool r;
	int e, ret;

	*out = !any;
	for (e = sm_json_first(&op->doc, conds); e >= 0; e = sm_json_next(&op->doc, e)) {
		if (alt_payload_str(op, &op->doc, e, &k) < 0 ||
		    (name = alt_keep_str(op, k.p, k.len)) == NULL)
			return -ENOMEM;
		ret = legacy_one(op, name, sm_json_member_value(&op->doc, e), d,
				 itok >= 0 ? sm_json_get(d, itok, name) : -1, &r);
		if (ret < 0)
			return ret;
		if (any == r) {
			*out = r;
			return 0;
		}
	}
	return 0;
}

int
alt_check_expected(struct alt_op *op, int expected)
{
	int any;

	if (alt_legacy_operator(op, expected, &any) < 0)
		return -EINVAL;
	return alt_legacy_validate(op, expected, "Expected");
}

int
alt_eval_expected(struct alt_op *op, int expected, const struct sm_json_doc *d, int itok, bool *out)
{
	int any = 0;

	alt_legacy_operator(op, expected, &any);
	return alt_legacy_eval(op, expected, any, d, itok, out);
}
