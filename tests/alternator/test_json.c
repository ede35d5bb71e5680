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
#include "sm_json.h"

static uint64_t
allocs_now(void)
{
	return SM_READ_ONCE(sm_stats_fallback_attach()->allocs);
}

static int
setup(void **state)
{
	(void)state;
	return sm_mem_thread_init();
}

static int
teardown(void **state)
{
	(void)state;
	sm_mem_thread_fini();
	return 0;
}

static int
parse(struct sm_json_doc *d, const char *s)
{
	return sm_json_parse(d, s, strlen(s), 0);
}

static int
parse_flags(struct sm_json_doc *d, const char *s, unsigned flags)
{
	return sm_json_parse(d, s, strlen(s), flags);
}

/* The unescaped contents of string @tok as a NUL-terminated copy in @buf. */
static const char *
str_of(const struct sm_json_doc *d, int tok, char *buf, size_t cap)
{
	char scratch[512];
	struct sm_bytes b;

	assert_int_equal(sm_json_str(d, tok, scratch, sizeof(scratch), &b), 0);
	assert_true(b.len < cap);
	memcpy(buf, b.p, b.len);
	buf[b.len] = '\0';
	return buf;
}

static void
assert_span(const struct sm_json_doc *d, int tok, const char *want)
{
	struct sm_bytes b = sm_json_span(d, tok);

	assert_int_equal(b.len, strlen(want));
	assert_memory_equal(b.p, want, b.len);
}

/* ---------------------------------------------------------------------- */

static void
test_parse_navigate(void **state)
{
	static const char body[] =
		" {\"TableName\": \"usertable\",\n"
		"  \"Item\": {\"p\": {\"S\": \"key1\"}, \"n\": {\"N\": \"-1.5e10\"},\n"
		"           \"l\": {\"L\": [{\"S\": \"x\"}, {\"M\": {\"deep\": {\"NULL\": "
		"true}}}]}},\n"
		"  \"ReturnValues\": \"ALL_OLD\", \"Limit\": 25, \"Consistent\": false,\n"
		"  \"Nothing\": null, \"Empty\": {}, \"EmptyList\": [] } \r\n";
	struct sm_json_doc d;
	char buf[64];
	int root, item, v, k, l, m;
	bool b;
	int64_t i64;

	(void)state;
	sm_json_doc_init(&d);
	assert_int_equal(sm_json_root(&d), -1);
	assert_int_equal(parse(&d, body), 0);
	root = sm_json_root(&d);
	assert_int_equal(root, 0);
	assert_int_equal(sm_json_type(&d, root), SM_JSON_OBJECT);
	assert_int_equal(sm_json_count(&d, root), 8);

	v = sm_json_get(&d, root, "TableName");
	assert_int_equal(sm_json_type(&d, v), SM_JSON_STRING);
	assert_true(sm_json_str_eq(&d, v, "usertable"));
	assert_false(sm_json_str_eq(&d, v, "usertabl"));
	assert_false(sm_json_str_eq(&d, v, "usertable2"));
	assert_false(sm_json_str_has_escapes(&d, v));
	assert_span(&d, v, "\"usertable\"");

	item = sm_json_get(&d, root, "Item");
	assert_int_equal(sm_json_type(&d, item), SM_JSON_OBJECT);
	assert_int_equal(sm_json_count(&d, item), 3);
	v = sm_json_get(&d, sm_json_get(&d, item, "n"), "N");
	assert_string_equal(str_of(&d, v, buf, sizeof(buf)), "-1.5e10");

	/* Skipping over the nested list lands on the members after it. */
	v = sm_json_get(&d, root, "ReturnValues");
	assert_true(sm_json_str_eq(&d, v, "ALL_OLD"));
	v = sm_json_get(&d, root, "Limit");
	assert_int_equal(sm_json_type(&d, v), SM_JSON_NUMBER);
	assert_int_equal(sm_json_i64(&d, v, &i64), 0);
	assert_int_equal(i64, 25);
	v = sm_json_get(&d, root, "Consistent");
	assert_int_equal(sm_json_type(&d, v), SM_JSON_FALSE);
	assert_int_equal(sm_json_bool(&d, v, &b), 0);
	assert_false(b);
	assert_int_equal(sm_json_type(&d, sm_json_get(&d, root, "Nothing")), SM_JSON_NULL);
	assert_int_equal(sm_json_bool(&d, sm_json_get(&d, root, "Nothing"), &b), -EINVAL);
	v = sm_json_get(&d, root, "Empty");
	assert_int_equal(sm_json_type(&d, v), SM_JSON_OBJECT);
	assert_int_equal(sm_json_count(&d, v), 0);
	assert_int_equal(sm_json_first(&d, v), -1);
	assert_span(&d, v, "{}");
	v = sm_json_get(&d, root, "EmptyList");
	assert_int_equal(sm_json_type(&d, v), SM_JSON_ARRAY);
	assert_int_equal(sm_json_first(&d, v), -1);

	/* Missing keys, wrong types, non-tokens. */
	assert_int_equal(sm_json_get(&d, root, "tablename"), -1);
	assert_int_equal(sm_json_get(&d, root, ""), -1);
	assert_int_equal(sm_json_get(&d, sm_json_get(&d, root, "TableName"), "x"), -1);
	assert_int_equal(sm_json_get(&d, -1, "Item"), -1);
	assert_int_equal(sm_json_get(&d, 100000, "Item"), -1);
	assert_int_equal(sm_json_type(&d, -1), SM_JSON_NONE);
	assert_int_equal(sm_json_type(&d, 100000), SM_JSON_NONE);
	assert_int_equal(sm_json_count(&d, sm_json_get(&d, root, "Limit")), 0);
	assert_int_equal(sm_json_next(&d, root), -1);
	assert_int_equal(sm_json_getn(&d, root, "Itemxyz", 4), item);

	/* Iterate members in order. */
	{
		static const char *const keys[] = { "TableName", "Item",       "ReturnValues",
						    "Limit",	 "Consistent", "Nothing",
						    "Empty",	 "EmptyList" };
		unsigned n = 0;

		for (k = sm_json_first(&d, root); k >= 0; k = sm_json_next(&d, k)) {
			assert_true(n < 8);
			assert_true(sm_json_str_eq(&d, k, keys[n]));
			assert_int_equal(sm_json_member_value(&d, k),
					 sm_json_get(&d, root, keys[n]));
			/* Values link to the next member too. */
			assert_int_equal(sm_json_next(&d, sm_json_member_value(&d, k)),
					 sm_json_next(&d, k));
			n++;
		}
		assert_int_equal(n, 8);
	}

	/* Arrays: elements in order, nested values skipped. */
	l = sm_json_get(&d, sm_json_get(&d, item, "l"), "L");
	assert_int_equal(sm_json_count(&d, l), 2);
	k = sm_json_first(&d, l);
	assert_int_equal(sm_json_type(&d, k), SM_JSON_OBJECT);
	assert_span(&d, k, "{\"S\": \"x\"}");
	/* An array element is not a member key, even when it is a string. */
	assert_int_equal(sm_json_member_value(&d, sm_json_get(&d, k, "S")), -1);
	k = sm_json_next(&d, k);
	assert_span(&d, k, "{\"M\": {\"deep\": {\"NULL\": true}}}");
	m = sm_json_get(&d, sm_json_get(&d, sm_json_get(&d, k, "M"), "deep"), "NULL");
	assert_int_equal(sm_json_type(&d, m), SM_JSON_TRUE);
	assert_int_equal(sm_json_next(&d, k), -1);

	assert_string_equal(sm_json_type_name(SM_JSON_TRUE), "boolean");
	assert_string_equal(sm_json_type_name(SM_JSON_OBJECT), "object");
	sm_json_doc_release(&d);
}

static void
test_scalars(void **state)
{
	struct sm_json_doc d;
	int64_t v;
	char buf[32];

	(void)state;
	sm_json_doc_init(&d);
	assert_int_equal(parse(&d, "123"), 0);
	assert_int_equal(sm_json_type(&d, 0), SM_JSON_NUMBER);
	assert_int_equal(sm_json_i64(&d, 0, &v), 0);
	assert_int_equal(v, 123);
	assert_int_equal(parse(&d, " \t\r\ntrue \n"), 0);
	assert_int_equal(sm_json_type(&d, 0), SM_JSON_TRUE);
	assert_int_equal(parse(&d, "false"), 0);
	assert_int_equal(sm_json_type(&d, 0), SM_JSON_FALSE);
	assert_int_equal(parse(&d, "null"), 0);
	assert_int_equal(sm_json_type(&d, 0), SM_JSON_NULL);
	assert_int_equal(parse(&d, "\"x\""), 0);
	assert_string_equal(str_of(&d, 0, buf, sizeof(buf)), "x");
	assert_int_equal(parse(&d, "\"\""), 0);
	assert_string_equal(str_of(&d, 0, buf, sizeof(buf)), "");
	assert_span(&d, 0, "\"\"");

	/* The RFC 8259 number grammar. */
	{
		static const char *const good[] = { "0",    "-0",
						    "1",    "-1",
						    "10",   "0.5",
						    "-0.0", "1e5",
						    "1E5",  "1e+5",
						    "1e-5", "1.5E-0",
						    "0e0",  "123456789012345678901234567890" };
		static const char *const bad[] = { "01",    "-01",   "1.",  ".5",	"-",
						   "+1",    "1e",    "1e+", "1.e5",	"--1",
						   "1-",    "0x10",  "NaN", "Infinity", "-Infinity",
						   "1.5.5", "1e5e5", "tru", "nul",	"falsey",
						   "True",  "NULL" };
		size_t i;

		for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
			char doc[64];

			snprintf(doc, sizeof(doc), "[%s]", good[i]);
			assert_int_equal(parse(&d, doc), 0);
			assert_int_equal(sm_json_type(&d, 1), SM_JSON_NUMBER);
			assert_int_equal(parse(&d, good[i]), 0);
		}
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			char doc[64];

			snprintf(doc, sizeof(doc), "[%s]", bad[i]);
			assert_int_equal(parse(&d, doc), -EINVAL);
			/* jsmn itself refuses what does not start like a JSON primitive. */
			if (strchr("-0123456789tfn", bad[i][0]) != NULL)
				assert_non_null(strstr(d.err, "Unrecognized token"));
			assert_int_equal(parse(&d, bad[i]), -EINVAL);
			assert_non_null(strstr(d.err, "Unrecognized token"));
		}
	}

	/* Integers. */
	assert_int_equal(parse(&d, "[9223372036854775807, -9223372036854775808, "
				   "9223372036854775808, -9223372036854775809, 1.0, 1e2, -0]"),
			 0);
	assert_int_equal(sm_json_i64(&d, 1, &v), 0);
	assert_true(v == INT64_MAX);
	assert_int_equal(sm_json_i64(&d, 2, &v), 0);
	assert_true(v == INT64_MIN);
	assert_int_equal(sm_json_i64(&d, 3, &v), -ERANGE);
	assert_int_equal(sm_json_i64(&d, 4, &v), -ERANGE);
	assert_int_equal(sm_json_i64(&d, 5, &v), -EINVAL);
	assert_int_equal(sm_json_i64(&d, 6, &v), -EINVAL);
	assert_int_equal(sm_json_i64(&d, 7, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(sm_json_i64(&d, 0, &v), -EINVAL);
	sm_json_doc_release(&d);
}

static void
test_escapes(void **state)
{
	static const char body[] =
		"{\"q\": \"a\\\"b\", \"bs\": \"a\\\\b\", \"sl\": \"a\\/b\","
		" \"ctl\": \"\\b\\f\\n\\r\\t\", \"u\": \"\\u0041\\u00e9\\u20AC\","
		" \"pair\": \"\\ud83d\\ude00!\", \"nul\": \"a\\u0000b\","
		" \"raw\": \"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\","
		" \"\\u0041ey\": 1, \"del\": \"\x7f\"}";
	struct sm_json_doc d;
	struct sm_bytes b;
	char buf[64], small[3];
	int v;

	(void)state;
	sm_json_doc_init(&d);
	assert_int_equal(parse(&d, body), 0);
	v = sm_json_get(&d, 0, "q");
	assert_true(sm_json_str_has_escapes(&d, v));
	assert_string_equal(str_of(&d, v, buf, sizeof(buf)), "a\"b");
	assert_true(sm_json_str_eq(&d, v, "a\"b"));
	assert_false(sm_json_str_eq(&d, v, "a\\\"b"));
	assert_span(&d, v, "\"a\\\"b\"");
	assert_string_equal(str_of(&d, sm_json_get(&d, 0, "bs"), buf, sizeof(buf)), "a\\b");
	assert_string_equal(str_of(&d, sm_json_get(&d, 0, "sl"), buf, sizeof(buf)), "a/b");
	assert_string_equal(str_of(&d, sm_json_get(&d, 0, "ctl"), buf, sizeof(buf)), "\b\f\n\r\t");
	assert_string_equal(str_of(&d, sm_json_get(&d, 0, "u"), buf, sizeof(buf)),
			    "A\xc3\xa9\xe2\x82\xac");
	assert_string_equal(str_of(&d, sm_json_get(&d, 0, "pair"), buf, sizeof(buf)),
			    "\xf0\x9f\x98\x80!");
	assert_true(sm_json_str_eq(&d, sm_json_get(&d, 0, "pair"), "\xf0\x9f\x98\x80!"));
	v = sm_json_get(&d, 0, "nul");
	assert_int_equal(sm_json_str(&d, v, buf, sizeof(buf), &b), 0);
	assert_int_equal(b.len, 3);
	assert_memory_equal(b.p, "a\0b", 3);
	assert_true(sm_json_str_eqn(&d, v, "a\0b", 3));
	assert_false(sm_json_str_eq(&d, v, "a"));
	v = sm_json_get(&d, 0, "raw");
	assert_false(sm_json_str_has_escapes(&d, v));
	assert_string_equal(str_of(&d, v, buf, sizeof(buf)),
			    "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	/* Keys compare unescaped. */
	assert_int_equal(sm_json_type(&d, sm_json_get(&d, 0, "Aey")), SM_JSON_NUMBER);
	assert_string_equal(str_of(&d, sm_json_get(&d, 0, "del"), buf, sizeof(buf)), "\x7f");

	/* The raw length always suffices; less may not. */
	v = sm_json_get(&d, 0, "u");
	assert_int_equal(sm_json_str(&d, v, small, sizeof(small), &b), -ENOSPC);
	assert_int_equal(sm_json_str(&d, sm_json_get(&d, 0, "Aey"), buf, sizeof(buf), &b), -EINVAL);
	{
		struct sm_bytes span = sm_json_span(&d, v);
		char *exact = malloc(span.len);

		assert_int_equal(sm_json_str(&d, v, exact, span.len, &b), 0);
		free(exact);
	}
	/* No buffer at all (merge_tags probes so): -ENOSPC for an escaped
	 * string, also one that starts with its escape (that copied 0 bytes
	 * to NULL first: UBSan stops there). */
	assert_int_equal(sm_json_str(&d, sm_json_get(&d, 0, "pair"), NULL, 0, &b), -ENOSPC);
	assert_int_equal(sm_json_str(&d, sm_json_get(&d, 0, "q"), NULL, 0, &b), -ENOSPC);
	assert_int_equal(sm_json_str(&d, sm_json_get(&d, 0, "raw"), NULL, 0, &b), 0);
	sm_json_doc_release(&d);
}

struct bad_case {
	const char *text;
	size_t len; /* 0: strlen */
	const char *msg;
};

static void
test_invalid(void **state)
{
	static const struct bad_case cases[] = {
		{ "", 0, "No content to map due to end-of-input" },
		{ " \n\t ", 0, "No content to map" },
		{ "{", 0, "Unexpected end-of-input: expected close marker for OBJECT" },
		{ "[1", 0, "Unexpected end-of-input: expected close marker for ARRAY" },
		{ "{\"a\":", 0, "end-of-input" },
		{ "{\"a\":{\"b\":[1,2", 0, "close marker for ARRAY" },
		{ "\"abc", 0, "end-of-input in a string" },
		{ "[\"abc", 0, "end-of-input in a string" },
		{ "[\"abc\\", 0, "end-of-input" },
		{ "[1,]", 0, "(']' (code 93)): expected a value at 3" },
		{ "{\"a\":1,}", 0,
		  "('}' (code 125)): was expecting double-quote to start field name" },
		{ "[,1]", 0, "(',' (code 44)): expected a value" },
		{ "[1,,2]", 0, "(',' (code 44))" },
		{ "[1 2]", 0, "was expecting comma to separate ARRAY entries" },
		{ "{\"a\":1 \"b\":2}", 0, "was expecting comma to separate OBJECT entries" },
		{ "{\"a\" 1}", 0, "('1' (code 49))" },
		{ "{\"a\" \"b\"}", 0, "was expecting a colon" },
		{ "{\"a\"}", 0, "was expecting a colon to separate field name and value" },
		{ "{\"a\":}", 0, "('}' (code 125)): expected a value" },
		{ "{\"a\"::1}", 0, "(':' (code 58))" },
		{ "{1:2}", 0, "was expecting double-quote to start field name" },
		{ "{{}:2}", 0, "was expecting double-quote to start field name" },
		{ "{[]:2}", 0, "was expecting double-quote to start field name" },
		{ "[\"a\":1]", 0, "was expecting comma to separate ARRAY entries" },
		{ "{\"a\":1}}", 0, "Unexpected close marker '}'" },
		{ "{\"a\":[}", 0, "Unexpected close marker '}'" },
		{ "[}", 0, "Unexpected close marker '}'" },
		{ "]", 0, "Unexpected close marker ']'" },
		{ "{}{}", 0, "expected end-of-input after the JSON value" },
		{ "{} x", 0, "('x' (code 120)): expected end-of-input" },
		{ "[1]x", 0, "expected end-of-input" },
		{ "\"a\" \"b\"", 0, "expected end-of-input" },
		{ "1 2", 0, "expected end-of-input" },
		{ "[1] [2]", 0, "expected end-of-input" },
		{ "{'a':1}", 0, "('''" },
		{ "[x]", 0, "('x' (code 120))" },
		{ "[\"\\x\"]", 0, "Unrecognized character escape 'x'" },
		{ "[\"\\u12\"]", 0, "expected 4 hex-digits" },
		{ "[\"\\u12g4\"]", 0, "expected 4 hex-digits" },
		{ "[\"\\U0041\"]", 0, "Unrecognized character escape 'U'" },
		{ "[\"\\ud800\"]", 0, "Unpaired high surrogate \\ud800" },
		{ "[\"\\udbff\\u0041\"]", 0, "Unpaired high surrogate \\udbff" },
		{ "[\"\\ud800x\"]", 0, "Unpaired high surrogate" },
		{ "[\"\\ud800\\ud800\"]", 0, "Unpaired high surrogate" },
		{ "[\"\\udc00\"]", 0, "Unpaired low surrogate \\udc00" },
		{ "[\"x\\ude00\\ud83d\"]", 0, "Unpaired low surrogate" },
		{ "[\"a\x01 b\"]", 0, "CTRL-CHAR, code 1" },
		{ "[\"a\nb\"]", 0, "CTRL-CHAR, code 10" },
		{ "[\"a\tb\"]", 0, "CTRL-CHAR, code 9" },
		{ "{\"a\x1f\":1}", 0, "CTRL-CHAR, code 31" },
		{ "\"\xff\"", 0, "Invalid UTF-8 start byte 0xff" },
		{ "\"\x80\"", 0, "Invalid UTF-8 start byte 0x80" },
		{ "\"\xc0\x80\"", 0, "Invalid UTF-8 start byte 0xc0" },		 /* overlong NUL */
		{ "\"\xc1\xbf\"", 0, "Invalid UTF-8 start byte 0xc1" },		 /* overlong */
		{ "\"\xe0\x80\xaf\"", 0, "Invalid UTF-8 middle byte 0xe0" },	 /* overlong */
		{ "\"\xed\xa0\x80\"", 0, "Invalid UTF-8 middle byte 0xed" },	 /* surrogate */
		{ "\"\xf4\x90\x80\x80\"", 0, "Invalid UTF-8 middle byte 0xf4" }, /* > U+10FFFF */
		{ "\"\xf5\x80\x80\x80\"", 0, "Invalid UTF-8 start byte 0xf5" },
		{ "\"\xe2\x82\"", 0, "Invalid UTF-8 middle byte 0xe2" }, /* truncated */
		{ "\"\xc3\"", 0, "Invalid UTF-8 middle byte 0xc3" },
		{ "\"\xc3x\"", 0, "Invalid UTF-8 middle byte 0xc3" },
		{ "[tru\xc3\xa9]", 0, "not valid in a JSON literal" },
		{ "\xef\xbb\xbf{}", 0, "Unrecognized token" }, /* a byte-order mark */
		{ "{\"a\":1}\0", 8, "(code 0x00): expected end-of-input" },
		{ "{\"a\":\0 1}", 9, "CTRL-CHAR, code 0" },
		{ "[\"a\0\"]", 6, "CTRL-CHAR, code 0" },
		{ "[1]\x0c", 0, "(code 0x0c)" }, /* form feed is not JSON whitespace */
		{ "[\x0b 1]", 0, "(code 0x0b)" },
	};
	struct sm_json_doc d;
	size_t i;
	int rc;

	(void)state;
	sm_json_doc_init(&d);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bad_case *c = &cases[i];
		size_t len = c->len != 0 ? c->len : strlen(c->text);

		/* A valid document first, so a failure must drop its tokens. */
		assert_int_equal(parse(&d, "{\"ok\":[1]}"), 0);
		rc = sm_json_parse(&d, c->text, len, 0);
		if (rc != -EINVAL || strstr(d.err, c->msg) == NULL)
			fail_msg("case %zu (%s): rc %d, message '%s', wanted '%s'", i, c->text, rc,
				 d.err, c->msg);
		assert_int_equal(sm_json_root(&d), -1);
		assert_int_equal(sm_json_type(&d, 0), SM_JSON_NONE);
		assert_int_equal(sm_json_get(&d, 0, "ok"), -1);
	}
	sm_json_doc_release(&d);
}

static void
test_depth(void **state)
{
	char buf[2 * (SM_JSON_MAX_DEPTH + 1) + 16];
	struct sm_json_doc d;
	int i, n;

	(void)state;
	sm_json_doc_init(&d);
	/* Exactly the limit parses; one more does not. */
	for (n = SM_JSON_MAX_DEPTH; n <= SM_JSON_MAX_DEPTH + 1; n++) {
		for (i = 0; i < n; i++)
			buf[i] = '[';
		for (i = 0; i < n; i++)
			buf[n + i] = ']';
		buf[2 * n] = '\0';
		if (n == SM_JSON_MAX_DEPTH) {
			assert_int_equal(parse(&d, buf), 0);
		} else {
			assert_int_equal(parse(&d, buf), -EINVAL);
			assert_non_null(strstr(d.err, "Max nested level reached: 80"));
		}
	}
	/* Objects count too, mixed with arrays. */
	{
		size_t len = 0;
		char *s = malloc(16 * 200);

		for (i = 0; i < 100; i++)
			len += (size_t)sprintf(s + len, i % 2 ? "[" : "{\"k\":");
		len += (size_t)sprintf(s + len, "1");
		for (i = 99; i >= 0; i--)
			len += (size_t)sprintf(s + len, i % 2 ? "]" : "}");
		assert_int_equal(sm_json_parse(&d, s, len, 0), -EINVAL);
		assert_non_null(strstr(d.err, "nested level"));
		free(s);
	}
	sm_json_doc_release(&d);
}

static void
test_dup_keys(void **state)
{
	static const char body[] = "{\"a\": 1, \"b\": {\"x\": 0}, \"\\u0061\": 2, \"c\": 3}";
	struct sm_json_doc d;
	int64_t v;

	(void)state;
	sm_json_doc_init(&d);
	/* Default: kept, and the last one wins. */
	assert_int_equal(parse(&d, body), 0);
	assert_int_equal(sm_json_count(&d, 0), 4);
	assert_int_equal(sm_json_i64(&d, sm_json_get(&d, 0, "a"), &v), 0);
	assert_int_equal(v, 2);
	/* Rejected on request, escaped spellings included. */
	assert_int_equal(sm_json_parse(&d, body, strlen(body), SM_JSON_REJECT_DUP_KEYS), -EINVAL);
	assert_non_null(strstr(d.err, "Duplicate field"));
	assert_int_equal(parse_flags(&d, "{\"a\":{\"b\":1,\"b\":2}}", SM_JSON_REJECT_DUP_KEYS),
			 -EINVAL);
	assert_non_null(strstr(d.err, "Duplicate field 'b'"));
	/* Same key in different objects, and prefixes, are fine. */
	assert_int_equal(parse_flags(&d, "{\"a\":{\"a\":1},\"ab\":2,\"b\":[{\"a\":1},{\"a\":2}]}",
				     SM_JSON_REJECT_DUP_KEYS),
			 0);
	assert_int_equal(sm_json_i64(&d, sm_json_get(&d, 0, "ab"), &v), 0);
	assert_int_equal(v, 2);
	sm_json_doc_release(&d);
}

/*
 * Objects and arrays past SM_JSON_INDEX_MIN go through look-up tables: the
 * same answers as a scan (escaped keys, the last of a repeated key, keys
 * that are prefixes of others, absent keys), renewed by every parse.
 */
static void
test_large_containers(void **state)
{
	enum { N = 5000 };
	size_t cap = 64 * N, n = 0;
	char *body = malloc(cap), key[32];
	struct sm_json_doc d;
	unsigned i;
	int64_t v;
	int arr, e;

	(void)state;
	assert_non_null(body);
	sm_json_doc_init(&d);
	/* {"k0":0, "\u006b1":1, ..., "k7":-1, ..., "k7":7, "arr":[0, 1, ...]} */
	n += (size_t)snprintf(body + n, cap - n, "{\"k7\":-1");
	for (i = 0; i < N; i++)
		n += (size_t)snprintf(body + n, cap - n, ",\"%s%u\":%u", i % 3 ? "k" : "\\u006b", i,
				      i);
	n += (size_t)snprintf(body + n, cap - n, ",\"arr\":[");
	for (i = 0; i < N; i++)
		n += (size_t)snprintf(body + n, cap - n, "%s%u", i ? "," : "", 2 * i);
	n += (size_t)snprintf(body + n, cap - n, "]}");
	assert_int_equal(sm_json_parse(&d, body, n, 0), 0);
	for (i = 0; i < N; i++) {
		snprintf(key, sizeof(key), "k%u", i);
		assert_int_equal(sm_json_i64(&d, sm_json_get(&d, 0, key), &v), 0);
		assert_int_equal(v, i);
	}
	assert_int_equal(sm_json_get(&d, 0, "k"), -1);
	assert_int_equal(sm_json_get(&d, 0, "k50000"), -1);
	assert_int_equal(sm_json_get(&d, 0, ""), -1);
	assert_int_equal(sm_json_getn(&d, 0, "k12x", 3), sm_json_get(&d, 0, "k12"));
	arr = sm_json_get(&d, 0, "arr");
	assert_int_equal(sm_json_type(&d, arr), SM_JSON_ARRAY);
	for (i = 0, e = sm_json_first(&d, arr); i < N; i++, e = sm_json_next(&d, e)) {
		assert_int_equal(sm_json_at(&d, arr, i), e);
		assert_int_equal(sm_json_i64(&d, e, &v), 0);
		assert_int_equal(v, 2 * i);
	}
	assert_int_equal(sm_json_at(&d, arr, N), -1);
	assert_int_equal(sm_json_at(&d, 0, 0), -1);

	/* a new parse into the same document: the tables follow */
	n = 0;
	n += (size_t)snprintf(body + n, cap - n, "[[");
	for (i = 0; i < 100; i++)
		n += (size_t)snprintf(body + n, cap - n, "%s%u", i ? "," : "", i + 1000);
	n += (size_t)snprintf(body + n, cap - n, "],{");
	for (i = 0; i < 100; i++)
		n += (size_t)snprintf(body + n, cap - n, "%s\"x%u\":%u", i ? "," : "", i, i);
	n += (size_t)snprintf(body + n, cap - n, "}]");
	assert_int_equal(sm_json_parse(&d, body, n, 0), 0);
	assert_int_equal(sm_json_i64(&d, sm_json_at(&d, sm_json_at(&d, 0, 0), 99), &v), 0);
	assert_int_equal(v, 1099);
	assert_int_equal(sm_json_i64(&d, sm_json_get(&d, sm_json_at(&d, 0, 1), "x42"), &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(sm_json_get(&d, sm_json_at(&d, 0, 1), "k42"), -1);
	assert_int_equal(sm_json_at(&d, 0, 2), -1);
	sm_json_doc_release(&d);
	free(body);
}

/* SM_JSON_REJECT_DUP_KEYS on large objects reports what the pairwise search reported. */
static void
test_dup_keys_large(void **state)
{
	enum { N = 5000 };
	size_t cap = 32 * N, n = 0;
	char *body = malloc(cap);
	struct sm_json_doc d;
	unsigned i;

	(void)state;
	assert_non_null(body);
	sm_json_doc_init(&d);
	n += (size_t)snprintf(body + n, cap - n, "{");
	for (i = 0; i < N; i++)
		n += (size_t)snprintf(body + n, cap - n, "%s\"k%u\":0", i ? "," : "", i);
	assert_int_equal(sm_json_parse(&d, body, n + (size_t)snprintf(body + n, cap - n, "}"),
				       SM_JSON_REJECT_DUP_KEYS),
			 0);
	/* k4000 repeats after k10 does, but k10 was written first: k10 is reported */
	n += (size_t)snprintf(body + n, cap - n, ",\"k4000\":1,\"\\u006b10\":1}");
	assert_int_equal(sm_json_parse(&d, body, n, SM_JSON_REJECT_DUP_KEYS), -EINVAL);
	assert_non_null(strstr(d.err, "Duplicate field '\\u006b10'"));
	sm_json_doc_release(&d);
	free(body);
}

/* Truncations of a valid document never parse; the document itself does. */
static void
test_truncated(void **state)
{
	static const char body[] =
		"{\"TableName\":\"t\",\"Key\":{\"p\":{\"S\":\"\\u00e9\\ud83d\\ude00x\"},"
		"\"c\":{\"N\":\"12\"}},\"L\":[true,false,null,-1.5e-3,[],{}]}";
	struct sm_json_doc d;
	size_t n;

	(void)state;
	sm_json_doc_init(&d);
	for (n = 0; n < strlen(body); n++) {
		char *copy = malloc(n + 1);

		/* An exact-size heap copy, so ASan catches any read past the end. */
		memcpy(copy, body, n);
		assert_int_equal(sm_json_parse(&d, copy, n, 0), -EINVAL);
		assert_true(d.err[0] != '\0');
		free(copy);
	}
	assert_int_equal(parse(&d, body), 0);
	sm_json_doc_release(&d);
}

/* Random byte changes: never crash (ASan), always an answer with a message. */
static void
test_mutations(void **state)
{
	static const char body[] =
		"{\"TableName\":\"t\",\"Item\":{\"p\":{\"S\":\"a\\\"b\\u00e9\"},\"n\":{\"N\":\"-1"
		".5\"},\"l\":{\"L\":[{\"BOOL\":true},{\"NULL\":true},{\"SS\":[\"x\",\"y\"]}]}}}";
	static const char alphabet[] = "{}[]:,\"\\ u0aeE+-.1tfn\x01\x80\xc3\xff";
	size_t len = strlen(body), i, pos;
	struct sm_json_doc d;
	char *copy = malloc(len);
	unsigned seed = 12345;
	int rc, k;

	(void)state;
	sm_json_doc_init(&d);
	for (i = 0; i < 20000; i++) {
		memcpy(copy, body, len);
		for (k = 0; k < 1 + (int)(i % 3); k++) {
			seed = seed * 1103515245u + 12345u;
			pos = (seed >> 8) % len;
			seed = seed * 1103515245u + 12345u;
			copy[pos] = alphabet[(seed >> 8) % (sizeof(alphabet) - 1)];
		}
		rc = sm_json_parse(&d, copy, len, 0);
		assert_true(rc == 0 || rc == -EINVAL);
		if (rc == 0) {
			/* Whatever parsed must navigate and re-serialize consistently. */
			struct sm_bytes sp = sm_json_span(&d, 0);

			assert_true(sp.len <= len);
			assert_int_equal(sm_json_root(&d), 0);
		} else {
			assert_true(d.err[0] != '\0');
		}
	}
	free(copy);
	sm_json_doc_release(&d);
}

/* A document bigger than the token array: growth, and jsmn resuming where it stopped. */
static void
test_grow(void **state)
{
	enum { N = 5000 };
	struct sm_json_doc d;
	char *s = malloc(N * 40 + 16);
	size_t len = 0;
	int64_t v;
	int i, k;

	(void)state;
	sm_json_doc_init(&d);
	assert_int_equal(parse(&d, "[]"), 0);
	len += (size_t)sprintf(s + len, "[");
	for (i = 0; i < N; i++)
		len += (size_t)sprintf(s + len, "%s{\"k\":%d,\"v\":[\"%d\"]}", i ? "," : "", i, i);
	len += (size_t)sprintf(s + len, "]");
	assert_int_equal(sm_json_parse(&d, s, len, 0), 0);
	assert_int_equal(sm_json_count(&d, 0), N);
	assert_true(d.cap >= d.ntok);
	assert_int_equal(d.ntok, 1 + N * 6);
	for (i = 0, k = sm_json_first(&d, 0); k >= 0; k = sm_json_next(&d, k), i++) {
		assert_int_equal(sm_json_i64(&d, sm_json_get(&d, k, "k"), &v), 0);
		assert_int_equal(v, i);
	}
	assert_int_equal(i, N);
	free(s);
	sm_json_doc_release(&d);
}

/* ---------------------------------------------------------------------- */
/* Writer                                                                  */

static void
assert_out(const struct sm_json_out *o, const char *want)
{
	assert_int_equal(o->err, 0);
	assert_string_equal(o->p, want);
	assert_int_equal(o->len, strlen(want));
}

static void
test_writer(void **state)
{
	struct sm_json_out o;
	char all[128];
	int i;

	(void)state;
	sm_json_out_init(&o);
	sm_json_out_obj_begin(&o);
	sm_json_out_key(&o, "TableName");
	sm_json_out_str(&o, "t");
	sm_json_out_key(&o, "Item");
	sm_json_out_obj_begin(&o);
	sm_json_out_key(&o, "n");
	sm_json_out_obj_begin(&o);
	sm_json_out_key(&o, "N");
	sm_json_out_str(&o, "1.5");
	sm_json_out_obj_end(&o);
	sm_json_out_key(&o, "raw");
	sm_json_out_raw(&o, "{\"S\": \"x\"}", 10);
	sm_json_out_key(&o, "e");
	sm_json_out_obj_begin(&o);
	sm_json_out_obj_end(&o);
	sm_json_out_obj_end(&o);
	sm_json_out_key(&o, "L");
	sm_json_out_arr_begin(&o);
	sm_json_out_i64(&o, -42);
	sm_json_out_i64(&o, INT64_MIN);
	sm_json_out_u64(&o, UINT64_MAX);
	sm_json_out_num(&o, "1e5", 3);
	sm_json_out_bool(&o, true);
	sm_json_out_bool(&o, false);
	sm_json_out_null(&o);
	sm_json_out_arr_begin(&o);
	sm_json_out_arr_end(&o);
	sm_json_out_arr_begin(&o);
	sm_json_out_i64(&o, 0);
	sm_json_out_arr_end(&o);
	sm_json_out_obj_begin(&o);
	sm_json_out_obj_end(&o);
	sm_json_out_arr_end(&o);
	sm_json_out_keyn(&o, "k\"ey", 4);
	sm_json_out_strn(&o, "a\0b", 3);
	sm_json_out_obj_end(&o);
	assert_out(&o,
		   "{\"TableName\":\"t\",\"Item\":{\"n\":{\"N\":\"1.5\"},\"raw\":{\"S\": \"x\"},"
		   "\"e\":{}},\"L\":[-42,-9223372036854775808,18446744073709551615,1e5,true,"
		   "false,null,[],[0],{}],\"k\\\"ey\":\"a\\u0000b\"}");

	/* Every escape. */
	sm_json_out_reset(&o);
	assert_int_equal(o.len, 0);
	for (i = 1; i < 0x80; i++)
		all[i - 1] = (char)i;
	sm_json_out_strn(&o, all, 0x7f);
	assert_out(&o, "\"\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n\\u000b\\f\\r"
		       "\\u000e\\u000f\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017"
		       "\\u0018\\u0019\\u001a\\u001b\\u001c\\u001d\\u001e\\u001f !\\\"#$%&'()*+,"
		       "-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\\\]^_`abcdefghijklmnopq"
		       "rstuvwxyz{|}~\x7f\"");

	/*
	 * UTF-8 passes through; invalid bytes become U+FFFD, but for C0 80,
	 * the NUL of an attribute name kept as a C string (alt_keep_name()).
	 */
	sm_json_out_reset(&o);
	sm_json_out_arr_begin(&o);
	sm_json_out_str(&o, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf");
	sm_json_out_str(&o, "a\xff"
			    "b\xc0\x80"
			    "c\xed\xa0\x80"
			    "d\xe2\x82");
	sm_json_out_arr_end(&o);
	assert_out(&o, "[\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf\","
		       "\"a\\ufffdb\\u0000c\\ufffd\\ufffd\\ufffdd\\ufffd\\ufffd\"]");

	/* A scalar document. */
	sm_json_out_reset(&o);
	sm_json_out_str(&o, "");
	assert_out(&o, "\"\"");
	sm_json_out_release(&o);
	assert_null(o.p);
}

/* Write strings of every character, parse them back, compare. */
static void
test_roundtrip(void **state)
{
	struct sm_json_out o;
	struct sm_json_doc d;
	char src[64][48], scratch[256];
	size_t lens[64];
	unsigned seed = 7;
	struct sm_bytes b;
	int i, j, k, tok;

	(void)state;
	sm_json_out_init(&o);
	sm_json_doc_init(&d);
	for (int round = 0; round < 200; round++) {
		/* Random valid UTF-8 strings, control characters, quotes, backslashes. */
		for (i = 0; i < 64; i++) {
			size_t n = 0;

			seed = seed * 1103515245u + 12345u;
			k = (int)((seed >> 8) % 12);
			for (j = 0; j < k; j++) {
				uint32_t cp;

				seed = seed * 1103515245u + 12345u;
				switch ((seed >> 8) % 5) {
				case 0:
					cp = (seed >> 12) % 0x20;
					break;
				case 1:
					cp = "\"\\/ax"[(seed >> 12) % 5];
					break;
				case 2:
					cp = 0x80 + (seed >> 12) % 0x780;
					break;
				case 3:
					cp = 0x800 + (seed >> 12) % 0xf800;
					if (cp >= 0xd800 && cp <= 0xdfff)
						cp = 0xfffd;
					break;
				default:
					cp = 0x10000 + (seed >> 12) % 0x100000;
					break;
				}
				if (cp < 0x80) {
					src[i][n++] = (char)cp;
				} else if (cp < 0x800) {
					src[i][n++] = (char)(0xc0 | cp >> 6);
					src[i][n++] = (char)(0x80 | (cp & 0x3f));
				} else if (cp < 0x10000) {
					src[i][n++] = (char)(0xe0 | cp >> 12);
					src[i][n++] = (char)(0x80 | (cp >> 6 & 0x3f));
					src[i][n++] = (char)(0x80 | (cp & 0x3f));
				} else {
					src[i][n++] = (char)(0xf0 | cp >> 18);
					src[i][n++] = (char)(0x80 | (cp >> 12 & 0x3f));
					src[i][n++] = (char)(0x80 | (cp >> 6 & 0x3f));
					src[i][n++] = (char)(0x80 | (cp & 0x3f));
				}
			}
			lens[i] = n;
		}
		sm_json_out_reset(&o);
		sm_json_out_obj_begin(&o);
		for (i = 0; i < 64; i++) {
			char key[8];

			snprintf(key, sizeof(key), "k%d", i);
			sm_json_out_key(&o, key);
			sm_json_out_arr_begin(&o);
			sm_json_out_strn(&o, src[i], lens[i]);
			sm_json_out_arr_end(&o);
		}
		sm_json_out_obj_end(&o);
		assert_int_equal(o.err, 0);
		assert_int_equal(sm_json_parse(&d, o.p, o.len, SM_JSON_REJECT_DUP_KEYS), 0);
		for (i = 0; i < 64; i++) {
			char key[8];

			snprintf(key, sizeof(key), "k%d", i);
			tok = sm_json_first(&d, sm_json_get(&d, 0, key));
			assert_int_equal(sm_json_str(&d, tok, scratch, sizeof(scratch), &b), 0);
			assert_int_equal(b.len, lens[i]);
			assert_memory_equal(b.p, src[i], lens[i]);
			assert_true(sm_json_str_eqn(&d, tok, src[i], lens[i]));
		}
		/* A raw span spliced into a new document survives a second round. */
		{
			struct sm_bytes sp = sm_json_span(&d, 0);
			char *copy = malloc(sp.len);

			/* The span points into o's buffer, which is about to be rewritten. */
			memcpy(copy, sp.p, sp.len);
			sm_json_out_reset(&o);
			sm_json_out_arr_begin(&o);
			sm_json_out_raw(&o, copy, sp.len);
			sm_json_out_raw(&o, copy, sp.len);
			sm_json_out_arr_end(&o);
			assert_int_equal(sm_json_parse(&d, o.p, o.len, 0), 0);
			assert_int_equal(sm_json_count(&d, 0), 2);
			free(copy);
		}
	}
	sm_json_out_release(&o);
	sm_json_doc_release(&d);
}

/* Reusing a warm document and writer allocates nothing. */
static void
test_no_alloc_steady_state(void **state)
{
	static const char body[] =
		"{\"TableName\":\"usertable\",\"Key\":{\"p\":{\"S\":\"user\\u00e9 1\"}},"
		"\"Item\":{\"f0\":{\"B\":\"AAAA\"},\"f1\":{\"N\":\"12.5\"},\"l\":{\"L\":[{\"S\":"
		"\"x\"},"
		"{\"BOOL\":false}]}},\"ConditionExpression\":\"attribute_not_exists(p)\"}";
	struct sm_json_doc d;
	struct sm_json_out o;
	uint64_t before = 0;
	char scratch[64];
	struct sm_bytes b;
	int i, k;

	(void)state;
	sm_json_doc_init(&d);
	sm_json_out_init(&o);
	for (i = 0; i < 103; i++) {
		if (i == 3)
			before = allocs_now();
		assert_int_equal(parse(&d, body), 0);
		k = sm_json_get(&d, sm_json_get(&d, sm_json_get(&d, 0, "Key"), "p"), "S");
		assert_int_equal(sm_json_str(&d, k, scratch, sizeof(scratch), &b), 0);
		/* Smaller documents and failures do not shrink or allocate either. */
		assert_int_equal(parse(&d, "{\"a\":[1,2,3]}"), 0);
		assert_int_equal(parse(&d, "{\"a\":[1,2,3}"), -EINVAL);
		sm_json_out_reset(&o);
		sm_json_out_obj_begin(&o);
		sm_json_out_key(&o, "Attributes");
		sm_json_out_obj_begin(&o);
		sm_json_out_key(&o, "p");
		sm_json_out_strn(&o, (const char *)b.p, b.len);
		sm_json_out_obj_end(&o);
		sm_json_out_obj_end(&o);
		assert_int_equal(o.err, 0);
	}
	assert_int_equal(allocs_now() - before, 0);

	/* Growth is counted, so the check above can see allocations. */
	sm_json_doc_release(&d);
	sm_json_out_release(&o);
	before = allocs_now();
	assert_int_equal(parse(&d, body), 0);
	sm_json_out_str(&o, "x");
	assert_true(allocs_now() - before >= 2);
	sm_json_doc_release(&d);
	sm_json_out_release(&o);
}

/* sm_json_getv(): as many sm_json_getn() calls, escaped keys and repeats included. */
static void
test_getv(void **state)
{
	static const char text[] = "{\"TableName\":\"t\",\"K\\u0065y\":1,\"Item\":2,"
				   "\"Key\":3,\"Tab\":4}";
	static const struct sm_json_key keys[] = { SM_JSON_KEY("TableName"), SM_JSON_KEY("Key"),
						   SM_JSON_KEY("None"), SM_JSON_KEY("Tab"),
						   SM_JSON_KEY("") };
	struct sm_json_doc d;
	int out[5], root;
	unsigned i;

	(void)state;
	sm_json_doc_init(&d);
	assert_int_equal(sm_json_parse(&d, text, strlen(text), 0), 0);
	root = sm_json_root(&d);
	sm_json_getv(&d, root, keys, 5, out);
	for (i = 0; i < 5; i++)
		assert_int_equal(out[i], sm_json_getn(&d, root, keys[i].s, keys[i].len));
	assert_true(out[0] >= 0 && out[1] >= 0 && out[3] >= 0);
	assert_int_equal(out[2], -1);
	sm_json_getv(&d, sm_json_get(&d, root, "Item"), keys, 5, out); /* not an object */
	for (i = 0; i < 5; i++)
		assert_int_equal(out[i], -1);
	sm_json_doc_release(&d);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_navigate),
		cmocka_unit_test(test_scalars),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_dup_keys),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_mutations),
		cmocka_unit_test(test_grow),
		cmocka_unit_test(test_writer),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_no_alloc_steady_state),
		cmocka_unit_test(test_large_containers),
		cmocka_unit_test(test_dup_keys_large),
		cmocka_unit_test(test_getv),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
