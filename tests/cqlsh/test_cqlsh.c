/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/cqlsh: values, tables, statements, errors, DESCRIBE and the session
 * print exactly what cqlsh prints. The expected strings were produced by
 * cqlsh's own formatting (scylla-cqlsh pylib/cqlshlib/formatting.py over
 * the Python driver's values) and by the driver's export_as_string().
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include "sm_core.h"
#include "sm_cqlsh.h"

/* ---- helpers ---- */

static const uint8_t T_TEXT[] = { 0, 0x0d }, T_ASCII[] = { 0, 0x01 }, T_INT[] = { 0, 0x09 },
		     T_BIGINT[] = { 0, 0x02 }, T_SMALLINT[] = { 0, 0x13 },
		     T_TINYINT[] = { 0, 0x14 }, T_VARINT[] = { 0, 0x0e }, T_DECIMAL[] = { 0, 0x06 },
		     T_FLOAT[] = { 0, 0x08 }, T_DOUBLE[] = { 0, 0x07 }, T_BOOL[] = { 0, 0x04 },
		     T_UUID[] = { 0, 0x0c }, T_TS[] = { 0, 0x0b }, T_DATE[] = { 0, 0x11 },
		     T_TIME[] = { 0, 0x12 }, T_DUR[] = { 0, 0x15 }, T_BLOB[] = { 0, 0x03 },
		     T_INET[] = { 0, 0x10 }, T_COUNTER[] = { 0, 0x05 };

#define TYPE(t) ((struct sm_bytes){ t, sizeof(t) })
#define VAL(...) ((struct sm_bytes){ (const uint8_t[]){ __VA_ARGS__ }, sizeof((uint8_t[]){ __VA_ARGS__ }) })
#define STR(s) ((struct sm_bytes){ (const uint8_t *)(s), (uint32_t)strlen(s) })
#define NUL ((struct sm_bytes){ NULL, 0 })

/* The text and width of one value. */
static void
check_value(struct sm_bytes type, struct sm_bytes v, bool quoted, const char *want,
	     size_t want_width)
{
	struct sm_cqlsh_str s;
	size_t w;

	sm_cqlsh_str_init(&s);
	w = sm_cqlsh_format_value(&s, type, v, quoted, NULL);
	assert_string_equal(sm_cqlsh_str_get(&s), want);
	assert_int_equal(w, want_width);
	sm_cqlsh_str_release(&s);
}

static struct sm_bytes
be(uint64_t x, unsigned n, uint8_t *buf)
{
	unsigned i;

	for (i = 0; i < n; i++)
		buf[i] = (uint8_t)(x >> (8 * (n - 1 - i)));
	return (struct sm_bytes){ buf, n };
}

static struct sm_bytes
dbl(double d, uint8_t *buf)
{
	uint64_t u;

	memcpy(&u, &d, 8);
	return be(u, 8, buf);
}

static struct sm_bytes
flt(float f, uint8_t *buf)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return be(u, 4, buf);
}

/* ---- values ---- */

static void
test_value_scalars(void **state)
{
	uint8_t b[16];

	(void)state;
	check_value(TYPE(T_INT), NUL, false, "null", 4);
	check_value(TYPE(T_INT), be((uint32_t)-42, 4, b), false, "-42", 3);
	check_value(TYPE(T_BIGINT), be(INT64_MAX, 8, b), false, "9223372036854775807", 19);
	check_value(TYPE(T_COUNTER), be(7, 8, b), false, "7", 1);
	check_value(TYPE(T_SMALLINT), VAL(0x80, 0x00), false, "-32768", 6);
	check_value(TYPE(T_TINYINT), VAL(0x7f), false, "127", 3);
	/* 123456789012345678901234567890 */
	check_value(TYPE(T_VARINT),
		     VAL(0x01, 0x8e, 0xe9, 0x0f, 0xf6, 0xc3, 0x73, 0xe0, 0xee, 0x4e, 0x3f, 0x0a,
			 0xd2),
		     false, "123456789012345678901234567890", 30);
	check_value(TYPE(T_VARINT), VAL(0xff), false, "-1", 2);
	check_value(TYPE(T_BOOL), VAL(1), false, "True", 4);
	check_value(TYPE(T_BOOL), VAL(0), false, "False", 5);
	check_value(TYPE(T_BLOB), VAL(0xca, 0xfe), false, "0xcafe", 6);
	check_value(TYPE(T_INET), VAL(127, 0, 0, 1), false, "127.0.0.1", 9);
	check_value(TYPE(T_INET), VAL(127, 0, 0, 1), true, "'127.0.0.1'", 11);
	check_value(TYPE(T_INET), VAL(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1), false, "::1",
		     3);
	check_value(TYPE(T_UUID),
		     VAL(0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x01, 0x23, 0x45, 0x67, 0x89,
			 0xab, 0xcd, 0xef),
		     false, "01234567-89ab-cdef-0123-456789abcdef", 36);
	/* an int of the wrong size is shown as its bytes */
	check_value(TYPE(T_INT), VAL(1, 2), false, "0x0102", 6);
}

static void
test_value_empty(void **state)
{
	(void)state;
	/* The driver's EMPTY: '' for every type but blob (0x) */
	check_value(TYPE(T_INT), SM_CQL_EMPTY, false, "", 0);
	check_value(TYPE(T_TEXT), SM_CQL_EMPTY, false, "", 0);
	check_value(TYPE(T_TEXT), SM_CQL_EMPTY, true, "''", 2);
	check_value(TYPE(T_BLOB), SM_CQL_EMPTY, false, "0x", 2);
}

static void
test_value_numbers(void **state)
{
	uint8_t b[16];

	(void)state;
	/* format_floating_point_type() with precision 5 */
	check_value(TYPE(T_DOUBLE), dbl(3.14159265358979, b), false, "3.14159", 7);
	check_value(TYPE(T_FLOAT), flt(1.1f, b), false, "1.1", 3);
	check_value(TYPE(T_FLOAT), flt(123456.789f, b), false, "1.2346e+05", 10);
	check_value(TYPE(T_DOUBLE), dbl(0.000012345, b), false, "1.2e-05", 7);
	check_value(TYPE(T_DOUBLE), dbl(12345.678, b), false, "12345.678", 9);
	check_value(TYPE(T_DOUBLE), dbl(1e300, b), false, "1e+300", 6);
	check_value(TYPE(T_FLOAT), flt(0.0f, b), false, "0", 1);
	check_value(TYPE(T_DOUBLE), dbl(0.0 / 0.0, b), false, "NaN", 3);
	check_value(TYPE(T_FLOAT), flt(-1.0f / 0.0f, b), false, "-Infinity", 9);
	/* Python's Decimal str(): scale, then the unscaled varint */
	check_value(TYPE(T_DECIMAL), VAL(0, 0, 0, 2, 0, 150), false, "1.50", 4);
	check_value(TYPE(T_DECIMAL), VAL(0xff, 0xff, 0xff, 0xfe, 1), false, "1E+2", 4);
	check_value(TYPE(T_DECIMAL), VAL(0, 0, 0, 6, 1), false, "0.000001", 8);
	check_value(TYPE(T_DECIMAL), VAL(0, 0, 0, 7, 1), false, "1E-7", 4);
	check_value(TYPE(T_DECIMAL), VAL(0, 0, 0, 2, 0), false, "0.00", 4);
	check_value(TYPE(T_DECIMAL), VAL(0, 0, 0, 1, 0xf1), false, "-1.5", 4);
	check_value(TYPE(T_DECIMAL), VAL(0, 0, 0, 0, 42), false, "42", 2);
}

static void
test_value_times(void **state)
{
	uint8_t b[32];

	(void)state;
	/* 2026-12-01 10:00:00 UTC = 1796119200000 ms */
	check_value(TYPE(T_TS), be(1796119200000ull, 8, b), false,
		     "2026-12-01 10:00:00.000000+0000", 31);
	check_value(TYPE(T_TS), be((uint64_t)-1, 8, b), false, "1969-12-31 23:59:59.999000+0000",
		     31);
	check_value(TYPE(T_TS), be(1796119200123ull, 8, b), true,
		     "'2026-12-01 10:00:00.123000+0000'", 33);
	/* outside datetime's years: the milliseconds */
	check_value(TYPE(T_TS), be(253402300800000ull, 8, b), false, "253402300800000", 15);
	/* dates: 2^31 is 1970-01-01 */
	check_value(TYPE(T_DATE), be(0x80000000u, 4, b), false, "1970-01-01", 10);
	check_value(TYPE(T_DATE), be(0x80000000u + 20788, 4, b), false, "2026-12-01", 10);
	check_value(TYPE(T_DATE), be(0, 4, b), false, "-2147483648", 11);
	check_value(TYPE(T_TIME), be(36000000000001ull, 8, b), false, "10:00:00.000000001", 18);
}

static void
test_value_duration(void **state)
{
	uint8_t b[32];
	size_t n;

	(void)state;
	/* 14mo3d4h5m6s7ms8us9ns: cqlsh's units, whole numbers */
	n = sm_duration_build(b, sizeof(b), 14, 3,
			      4 * 3600000000000ll + 5 * 60000000000ll + 6000000000ll + 7000000ll +
				      8000ll + 9);
	check_value(TYPE(T_DUR), (struct sm_bytes){ b, (uint32_t)n }, false,
		     "1y2mo3d4h5m6s7ms8us9ns", 22);
	n = sm_duration_build(b, sizeof(b), 0, -1, 0);
	check_value(TYPE(T_DUR), (struct sm_bytes){ b, (uint32_t)n }, false, "-1d", 3);
}

static void
test_value_text(void **state)
{
	(void)state;
	check_value(TYPE(T_TEXT), STR("hello"), false, "hello", 5);
	/* backslashes doubled, control characters as Python escapes */
	check_value(TYPE(T_TEXT), STR("a\\b"), false, "a\\\\b", 4);
	check_value(TYPE(T_TEXT), STR("a\tb\nc\x01"), false, "a\\tb\\nc\\x01", 11);
	check_value(TYPE(T_ASCII), STR("it's"), false, "it's", 4);
	check_value(TYPE(T_TEXT), STR("it's"), true, "'it''s'", 7);
	/* display width: CJK is two columns, combining marks none */
	check_value(TYPE(T_TEXT), STR("\xe6\x97\xa5\xe6\x9c\xac"), false, "\xe6\x97\xa5\xe6\x9c\xac",
		     4);
	check_value(TYPE(T_TEXT), STR("e\xcc\x81"), false, "e\xcc\x81", 1);
	/* U+00A0 is shown as an escape, as cqlsh does */
	check_value(TYPE(T_TEXT), STR("a\xc2\xa0"), false, "a\\xa0", 5);
}

static void
test_value_collections(void **state)
{
	static const uint8_t list_int[] = { 0, 0x20, 0, 0x09 }, set_text[] = { 0, 0x22, 0, 0x0d },
			     map_text_int[] = { 0, 0x21, 0, 0x0d, 0, 0x09 },
			     map_int_set[] = { 0, 0x21, 0, 0x09, 0, 0x22, 0, 0x0d },
			     /* tuple<int, text> */
		tuple[] = { 0, 0x31, 0, 2, 0, 0x09, 0, 0x0d },
			     /* user type ks.t {a int, b text} */
		udt[] = { 0, 0x30, 0, 2, 'k', 's', 0, 1, 't', 0, 2, 0, 1, 'a', 0, 0x09, 0, 1, 'b', 0, 0x0d };
	uint8_t b[4][16], coll[256], inner[64];
	struct sm_bytes e[4];
	size_t n, m;

	(void)state;
	e[0] = be(1, 4, b[0]);
	e[1] = be(2, 4, b[1]);
	e[2] = be(3, 4, b[2]);
	n = sm_coll_build(coll, sizeof(coll), e, 3, false);
	check_value(TYPE(list_int), (struct sm_bytes){ coll, (uint32_t)n }, false, "[1, 2, 3]", 9);
	e[0] = STR("a's");
	e[1] = STR("b");
	n = sm_coll_build(coll, sizeof(coll), e, 2, false);
	check_value(TYPE(set_text), (struct sm_bytes){ coll, (uint32_t)n }, false, "{'a''s', 'b'}",
		     13);
	e[0] = STR("a");
	e[1] = be(1, 4, b[0]);
	e[2] = STR("b");
	e[3] = be(2, 4, b[1]);
	n = sm_coll_build(coll, sizeof(coll), e, 2, true);
	check_value(TYPE(map_text_int), (struct sm_bytes){ coll, (uint32_t)n }, false,
		     "{'a': 1, 'b': 2}", 16);
	e[0] = STR("p");
	e[1] = STR("q");
	m = sm_coll_build(inner, sizeof(inner), e, 2, false);
	e[0] = be(1, 4, b[0]);
	e[1] = (struct sm_bytes){ inner, (uint32_t)m };
	n = sm_coll_build(coll, sizeof(coll), e, 1, true);
	check_value(TYPE(map_int_set), (struct sm_bytes){ coll, (uint32_t)n }, false,
		     "{1: {'p', 'q'}}", 15);
	/* tuples and user types: fields as [int length][bytes] */
	check_value(TYPE(tuple), VAL(0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 1, 'a'), false, "(1, 'a')", 8);
	check_value(TYPE(udt), VAL(0, 0, 0, 4, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff), false,
		     "{a: 1, b: null}", 15);
	/* a truncated collection shows its bytes */
	check_value(TYPE(list_int), VAL(0, 0, 0, 2, 0, 0, 0, 4, 0, 0), false, "0x00000002000000040000",
		     22);
}

/* ---- results built through the real codec ---- */

struct rows {
	uint32_t ncols;
	struct sm_cql_colspec cols[32];
	const struct sm_type *types[32];
	struct sm_cql_buf buf;
	struct sm_cql_rows_writer w;
};

static void
rows_begin(struct rows *r, const char *ks, const char *table, const char *spec)
{
	char copy[1024], *tok, *save = NULL, err[128];


	memset(r, 0, sizeof(*r));
	snprintf(copy, sizeof(copy), "%s", spec);
	/* "name type, name type, ..." with types of lib/store's syntax */
	for (tok = copy; tok != NULL && *tok != '\0'; tok = save) {
		char *sp, *p;
		int depth = 0;

		for (p = tok; *p != '\0' && (*p != ',' || depth > 0); p++)
			depth += *p == '<' ? 1 : *p == '>' ? -1 : 0;
		save = *p != '\0' ? p + 1 : NULL;
		*p = '\0';
		while (*tok == ' ')
			tok++;
		sp = strchr(tok, ' ');
		assert_non_null(sp);
		*sp = '\0';
		assert_int_equal(sm_type_parse(sp + 1, &r->types[r->ncols], err, sizeof(err)), 0);
		{
			char *name = strdup(tok); /* STR() evaluates its argument twice */

			assert_non_null(name);
			r->cols[r->ncols].name = STR(name);
		}
		r->cols[r->ncols].type = r->types[r->ncols];
		r->ncols++;
	}
	sm_cql_buf_init(&r->buf);
	{
		struct sm_cql_metadata meta = { 0 };

		meta.ncols = r->ncols;
		meta.cols = r->cols;
		meta.ks = STR(ks);
		meta.table = STR(table);
		assert_int_equal(sm_cql_rows_begin(&r->w, &r->buf, 1, &meta), 0);
	}
}

static struct sm_cqlsh_result *
rows_end(struct rows *r, const struct sm_bytes *paging)
{
	struct sm_cql_frame_header h;
	struct sm_cql_response resp;
	struct sm_cqlsh_result *res = NULL;
	const char *reason = NULL;
	uint32_t c;

	assert_int_equal(sm_cql_rows_end(&r->w, paging), 0);
	assert_int_equal(sm_cql_frame_header_parse(r->buf.p, r->buf.len, true, &h, &reason), 0);
	assert_int_equal(sm_cql_response_decode(&h, r->buf.p + SM_CQL_HEADER_LEN,
						r->buf.len - SM_CQL_HEADER_LEN, 0, &resp, &reason),
			 0);
	assert_int_equal(sm_cqlsh_result_from_response(&resp, &res), 0);
	sm_cql_buf_release(&r->buf);
	for (c = 0; c < r->ncols; c++) {
		free((void *)(uintptr_t)r->cols[c].name.p);
		sm_type_free(r->types[c]);
	}
	return res;
}

static void
cell_text(struct rows *r, const char *s)
{
	sm_cql_rows_cell(&r->w, s != NULL ? STR(s) : NUL);
}

static void
cell_int(struct rows *r, int32_t v)
{
	uint8_t b[4];

	sm_cql_rows_cell(&r->w, be((uint32_t)v, 4, b));
}

/* The whole of what @fn printed into a FILE. */
static char out_buf[65536];

static FILE *
out_open(void)
{
	FILE *f = fmemopen(out_buf, sizeof(out_buf), "w");

	assert_non_null(f);
	memset(out_buf, 0, sizeof(out_buf));
	return f;
}

static void
test_table_layout(void **state)
{
	struct sm_cqlsh_result *res;
	struct sm_cqlsh_page pg;
	struct rows r;
	FILE *f;

	(void)state;
	rows_begin(&r, "ks", "t", "k int, value text");
	cell_int(&r, 1);
	cell_text(&r, "a");
	cell_int(&r, 22);
	cell_text(&r, NULL);
	res = rows_end(&r, NULL);
	assert_int_equal(sm_cqlsh_page_build(&pg, res, NULL), 0);
	f = out_open();
	sm_cqlsh_print_table(f, &pg, true, false);
	fclose(f);
	/* names left-aligned (the line right-trimmed), values right-aligned */
	assert_string_equal(out_buf, " k  | value\n"
				     "----+-------\n"
				     "  1 |     a\n"
				     " 22 |  null\n");
	f = out_open();
	sm_cqlsh_print_vertical(f, &pg, 10);
	fclose(f);
	assert_string_equal(out_buf, "@ Row 11\n"
				     "-------+------\n"
				     " k     | 1\n"
				     " value | a\n"
				     "\n"
				     "@ Row 12\n"
				     "-------+------\n"
				     " k     | 22\n"
				     " value | null\n"
				     "\n");
	sm_cqlsh_page_release(&pg);
	sm_cqlsh_result_free(res);

	/* no rows: the header and an empty line */
	rows_begin(&r, "ks", "t", "k int, v text");
	res = rows_end(&r, NULL);
	assert_int_equal(sm_cqlsh_page_build(&pg, res, NULL), 0);
	f = out_open();
	sm_cqlsh_print_table(f, &pg, true, true);
	fclose(f);
	assert_string_equal(out_buf, " k | v\n---+---\n\n");
	sm_cqlsh_page_release(&pg);
	sm_cqlsh_result_free(res);
}

static void
test_columnize(void **state)
{
	static const char *const words[] = { "system", "system_schema", "ks", "a_long_keyspace" };
	static const char *const many[] = { "aggregates", "columns", "dropped_columns", "functions",
					    "indexes", "keyspaces", "tables", "triggers",
					    "types", "views" };
	FILE *f;

	(void)state;
	f = out_open();
	sm_cqlsh_columnize(f, words, 4, 80);
	fclose(f);
	/* cmd.Cmd.columnize: every cell padded to its column, the last one too */
	assert_string_equal(out_buf, "system  system_schema  ks  a_long_keyspace\n");
	f = out_open();
	sm_cqlsh_columnize(f, many, 10, 60);
	fclose(f);
	assert_string_equal(out_buf, "aggregates  dropped_columns  indexes    tables    types\n"
				     "columns     functions        keyspaces  triggers  views\n");
}

/* ---- statements ---- */

static void
feed(struct sm_cqlsh_splitter *sp, const char *line)
{
	assert_int_equal(sm_cqlsh_splitter_line(sp, line, strlen(line)), 0);
}

static void
test_split(void **state)
{
	struct sm_cqlsh_splitter sp;

	(void)state;
	sm_cqlsh_splitter_init(&sp);
	feed(&sp, "SELECT 1; SELECT ';' FROM t;");
	assert_string_equal(sm_cqlsh_splitter_next(&sp), "SELECT 1");
	assert_string_equal(sm_cqlsh_splitter_next(&sp), "SELECT ';' FROM t");
	assert_null(sm_cqlsh_splitter_next(&sp));
	assert_false(sm_cqlsh_splitter_partial(&sp));

	/* several lines, comments of the three kinds, a string that spans a line */
	feed(&sp, "INSERT INTO t (k, v) -- a comment;");
	assert_null(sm_cqlsh_splitter_next(&sp));
	assert_true(sm_cqlsh_splitter_partial(&sp));
	feed(&sp, "VALUES (1, 'it''s; /* not */ a");
	feed(&sp, "b') /* a; block");
	feed(&sp, "comment */ // more;");
	assert_null(sm_cqlsh_splitter_next(&sp));
	feed(&sp, ";");
	assert_string_equal(sm_cqlsh_splitter_next(&sp),
			    "INSERT INTO t (k, v) \nVALUES (1, 'it''s; /* not */ a\nb')");
	feed(&sp, "CREATE FUNCTION f() RETURNS int LANGUAGE lua AS $$ return 1; $$;");
	assert_string_equal(sm_cqlsh_splitter_next(&sp),
			    "CREATE FUNCTION f() RETURNS int LANGUAGE lua AS $$ return 1; $$");
	feed(&sp, "SELECT \"a;b\" FROM t;");
	assert_string_equal(sm_cqlsh_splitter_next(&sp), "SELECT \"a;b\" FROM t");

	/* shell commands end with their line */
	feed(&sp, "  expand on");
	assert_string_equal(sm_cqlsh_splitter_next(&sp), "expand on");
	feed(&sp, "DESCRIBE KEYSPACES");
	assert_string_equal(sm_cqlsh_splitter_next(&sp), "DESCRIBE KEYSPACES");
	feed(&sp, "exit");
	assert_string_equal(sm_cqlsh_splitter_next(&sp), "exit");
	/* ... but USE and CQL wait for ';' */
	feed(&sp, "use ks");
	assert_null(sm_cqlsh_splitter_next(&sp));
	sm_cqlsh_splitter_cancel(&sp);
	assert_false(sm_cqlsh_splitter_partial(&sp));
	feed(&sp, "");
	feed(&sp, "-- only a comment");
	assert_null(sm_cqlsh_splitter_next(&sp));
	assert_false(sm_cqlsh_splitter_partial(&sp));
	sm_cqlsh_splitter_release(&sp);
}

/* ---- errors ---- */

static void
check_error(const struct sm_cqlsh_result *r, const char *want)
{
	struct sm_cqlsh_str s;

	sm_cqlsh_str_init(&s);
	sm_cqlsh_error_text(&s, r);
	assert_string_equal(sm_cqlsh_str_get(&s), want);
	sm_cqlsh_str_release(&s);
}

static void
test_errors(void **state)
{
	struct sm_cqlsh_result r = { .kind = SM_CQLSH_ERROR };

	(void)state;
	r.code = SM_CQL_ERR_INVALID;
	r.message = "unconfigured table x";
	check_error(&r, "InvalidRequest: Error from server: code=2200 [Invalid query] "
			 "message=\"unconfigured table x\"");
	r.code = SM_CQL_ERR_SYNTAX;
	r.message = "line 1:0 no viable alternative at input 'SELEC'";
	check_error(&r, "SyntaxException: line 1:0 no viable alternative at input 'SELEC'");
	r.code = SM_CQL_ERR_ALREADY_EXISTS;
	r.message = "x";
	r.err_keyspace = "ks";
	r.err_table = "";
	check_error(&r, "AlreadyExists: Keyspace 'ks' already exists");
	r.err_table = "t";
	check_error(&r, "AlreadyExists: Table 'ks.t' already exists");
	r.code = SM_CQL_ERR_WRITE_TIMEOUT;
	r.message = "timed out";
	r.consistency = SM_CQL_QUORUM;
	r.received = 1;
	r.blockfor = 2;
	r.write_type = "SIMPLE";
	check_error(&r, "WriteTimeout: Error from server: code=1100 [Coordinator node timed out "
			 "waiting for replica nodes' responses] message=\"timed out\" "
			 "info={'consistency': 'QUORUM', 'required_responses': 2, "
			 "'received_responses': 1, 'write_type': 'SIMPLE'}");
	r.code = SM_CQL_ERR_UNAVAILABLE;
	r.message = "no";
	r.consistency = SM_CQL_ONE;
	r.required = 1;
	r.alive = 0;
	check_error(&r, "Unavailable: Error from server: code=1000 [Unavailable exception] "
			 "message=\"no\" info={'consistency': 'ONE', 'required_replicas': 1, "
			 "'alive_replicas': 0}");
	r.code = SM_CQL_ERR_OVERLOADED;
	r.message = "memory";
	check_error(&r, "OverloadedErrorMessage: memory");
	r.code = 0x7777;
	check_error(&r, "ErrorMessage: memory");
}

/* ---- DESCRIBE ---- */

static struct sm_cqlsh_result *
keyspaces_result(void)
{
	struct rows r;
	uint8_t m[256], t = 1;
	struct sm_bytes kv[4] = { STR("class"), STR("org.apache.cassandra.locator.SimpleStrategy"),
				  STR("replication_factor"), STR("1") };
	size_t n = sm_coll_build(m, sizeof(m), kv, 2, true);

	rows_begin(&r, "system_schema", "keyspaces",
		   "keyspace_name text, durable_writes boolean, replication frozen<map<text, text>>");
	cell_text(&r, "ks");
	sm_cql_rows_cell(&r.w, (struct sm_bytes){ &t, 1 });
	sm_cql_rows_cell(&r.w, (struct sm_bytes){ m, (uint32_t)n });
	return rows_end(&r, NULL);
}

static void
test_describe_keyspace(void **state)
{
	struct sm_cqlsh_result *res = keyspaces_result();
	struct sm_cqlsh_str s;

	(void)state;
	sm_cqlsh_str_init(&s);
	assert_int_equal(sm_cqlsh_describe_keyspace(&s, res, 0, NULL), 0);
	assert_string_equal(sm_cqlsh_str_get(&s),
			    "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', "
			    "'replication_factor': '1'}  AND durable_writes = true;");
	sm_cqlsh_str_release(&s);
	sm_cqlsh_result_free(res);
}

static void
column_row(struct rows *r, const char *table, const char *name, const char *kind, int pos,
	   const char *type, const char *order)
{
	cell_text(r, "ks");
	cell_text(r, table);
	cell_text(r, name);
	cell_text(r, order);
	cell_text(r, kind);
	cell_int(r, pos);
	cell_text(r, type);
}

static void
test_describe_table(void **state)
{
	struct sm_cqlsh_result *tables, *cols;
	struct sm_cqlsh_str s;
	struct rows r;
	uint8_t m[256], d[8], fl[64];
	struct sm_bytes kv[2] = { STR("class"), STR("SizeTieredCompactionStrategy") }, f1 = STR("compound");
	size_t n = sm_coll_build(m, sizeof(m), kv, 1, true), nf = sm_coll_build(fl, sizeof(fl), &f1, 1, false);

	(void)state;
	rows_begin(&r, "system_schema", "tables",
		   "keyspace_name text, table_name text, bloom_filter_fp_chance double, comment text, "
		   "compaction frozen<map<text, text>>, crc_check_chance double, "
		   "default_time_to_live int, flags frozen<set<text>>, speculative_retry text");
	cell_text(&r, "ks");
	cell_text(&r, "t");
	sm_cql_rows_cell(&r.w, dbl(0.01, d));
	cell_text(&r, "");
	sm_cql_rows_cell(&r.w, (struct sm_bytes){ m, (uint32_t)n });
	sm_cql_rows_cell(&r.w, dbl(1.0, d));
	cell_int(&r, 0);
	sm_cql_rows_cell(&r.w, (struct sm_bytes){ fl, (uint32_t)nf });
	cell_text(&r, "99.0PERCENTILE");
	tables = rows_end(&r, NULL);
	rows_begin(&r, "system_schema", "columns",
		   "keyspace_name text, table_name text, column_name text, clustering_order text, "
		   "kind text, position int, type text");
	column_row(&r, "t", "Weird", "regular", -1, "text", "none");
	column_row(&r, "t", "c", "clustering", 0, "int", "desc");
	column_row(&r, "t", "k", "partition_key", 0, "int", "none");
	column_row(&r, "t", "m", "regular", -1, "map<text, int>", "none");
	column_row(&r, "t", "s", "static", -1, "int", "none");
	column_row(&r, "other", "x", "partition_key", 0, "int", "none");
	cols = rows_end(&r, NULL);
	sm_cqlsh_str_init(&s);
	assert_int_equal(sm_cqlsh_describe_table(&s, tables, 0, cols), 0);
	/* The Python driver's export_as_string() of the same rows. */
	assert_string_equal(sm_cqlsh_str_get(&s), "CREATE TABLE ks.t (\n"
						  "    k int,\n"
						  "    c int,\n"
						  "    \"Weird\" text,\n"
						  "    m map<text, int>,\n"
						  "    s int static,\n"
						  "    PRIMARY KEY (k, c)\n"
						  ") WITH CLUSTERING ORDER BY (c DESC)\n"
						  "    AND bloom_filter_fp_chance = 0.01\n"
						  "    AND comment = ''\n"
						  "    AND compaction = {'class': 'SizeTieredCompactionStrategy'}\n"
						  "    AND crc_check_chance = 1.0\n"
						  "    AND default_time_to_live = 0\n"
						  "    AND speculative_retry = '99.0PERCENTILE';");
	sm_cqlsh_str_release(&s);
	sm_cqlsh_result_free(tables);
	sm_cqlsh_result_free(cols);
}

static void
test_protect_name(void **state)
{
	static const char *const cases[][2] = {
		{ "plain_1", "plain_1" }, { "Upper", "\"Upper\"" }, { "select", "\"select\"" },
		{ "key", "key" },	  { "a\"b", "\"a\"\"b\"" }, { "1st", "\"1st\"" },
	};
	struct sm_cqlsh_str s;
	size_t i;

	(void)state;
	for (i = 0; i < SM_ARRAY_SIZE(cases); i++) {
		sm_cqlsh_str_init(&s);
		sm_cqlsh_protect_name(&s, cases[i][0]);
		assert_string_equal(sm_cqlsh_str_get(&s), cases[i][1]);
		sm_cqlsh_str_release(&s);
	}
}

/* ---- the session, with canned answers ---- */

struct fake {
	char queries[16][256];
	unsigned nq;
	int32_t page_sizes[16];
	bool page_state[16];
	unsigned pages; /* SELECT answers this many pages of one row */
	unsigned mores;
};

static struct sm_cqlsh_result *
error_result(int32_t code, const char *msg)
{
	struct sm_cql_buf b;
	struct sm_cql_error e = { .code = code, .message = STR(msg) };
	struct sm_cql_frame_header h;
	struct sm_cql_response resp;
	struct sm_cqlsh_result *res = NULL;
	const char *reason;

	sm_cql_buf_init(&b);
	assert_int_equal(sm_cql_enc_error(&b, 1, &e), 0);
	assert_int_equal(sm_cql_frame_header_parse(b.p, b.len, true, &h, &reason), 0);
	assert_int_equal(sm_cql_response_decode(&h, b.p + SM_CQL_HEADER_LEN,
						b.len - SM_CQL_HEADER_LEN, 0, &resp, &reason),
			 0);
	assert_int_equal(sm_cqlsh_result_from_response(&resp, &res), 0);
	sm_cql_buf_release(&b);
	return res;
}

static int
fake_query(void *ctx, const struct sm_cqlsh_query *q, struct sm_cqlsh_result **res)
{
	struct fake *fk = ctx;
	struct rows r;
	unsigned page = q->paging_state.p != NULL ? q->paging_state.p[0] : 0;

	if (fk->nq < 16) {
		snprintf(fk->queries[fk->nq], sizeof(fk->queries[0]), "%s", q->text);
		fk->page_sizes[fk->nq] = q->page_size;
		fk->page_state[fk->nq] = q->paging_state.p != NULL;
		fk->nq++;
	}
	if (strncasecmp(q->text, "SELECT", 6) == 0) {
		uint8_t st = (uint8_t)(page + 1);
		struct sm_bytes ps = { &st, 1 };

		rows_begin(&r, "ks", "t", "k int, v text");
		cell_int(&r, (int32_t)page + 1);
		cell_text(&r, "x");
		*res = rows_end(&r, page + 1 < fk->pages ? &ps : NULL);
		return 0;
	}
	if (strncmp(q->text, "bad", 3) == 0) {
		*res = error_result(SM_CQL_ERR_SYNTAX, "line 1:0 no viable alternative at input 'bad'");
		return 0;
	}
	*res = sm_cqlsh_result_failed(-ECONNRESET, "the connection broke");
	return -ECONNRESET;
}

static int
fake_more(void *ctx)
{
	((struct fake *)ctx)->mores++;
	return 0;
}

static struct sm_cqlsh *
session(struct fake *fk, bool tty, FILE *out, FILE *err)
{
	struct sm_cqlsh_backend be = { .query = fake_query, .more = fake_more, .ctx = fk };
	struct sm_cqlsh_opts o = { .tty = tty, .stop_on_error = !tty, .out = out, .err = err };
	struct sm_cqlsh *sh;

	memset(fk, 0, sizeof(*fk));
	sh = sm_cqlsh_new(&o, &be);
	assert_non_null(sh);
	return sh;
}

static int
line(struct sm_cqlsh *sh, const char *s)
{
	return sm_cqlsh_line(sh, s, strlen(s));
}

static void
test_session_pages(void **state)
{
	static char errs[4096];
	struct fake fk;
	struct sm_cqlsh *sh;
	FILE *out = out_open(), *err = fmemopen(errs, sizeof(errs), "w");

	(void)state;
	/* not a TTY: every page, one header, no ---MORE--- */
	sh = session(&fk, false, out, err);
	fk.pages = 3;
	assert_int_equal(line(sh, "PAGING 2"), 0);
	assert_int_equal(line(sh, "SELECT * FROM t;"), 0);
	assert_int_equal(fk.nq, 3);
	assert_int_equal(fk.page_sizes[0], 2);
	assert_false(fk.page_state[0]);
	assert_true(fk.page_state[1]);
	assert_int_equal(fk.mores, 0);
	fflush(out);
	assert_string_equal(out_buf, "Page size: 2\n"
				     "\n"
				     " k | v\n"
				     "---+---\n"
				     " 1 | x\n"
				     " 2 | x\n"
				     " 3 | x\n"
				     "\n"
				     "(3 rows)\n");
	sm_cqlsh_free(sh);
	fclose(out);
	fclose(err);

	/* a TTY: a header and an empty line per page, ---MORE--- between pages */
	out = out_open();
	err = fmemopen(errs, sizeof(errs), "w");
	sh = session(&fk, true, out, err);
	fk.pages = 2;
	assert_int_equal(line(sh, "select * from t"), 0);
	assert_string_equal(sm_cqlsh_prompt(sh), "   ... ");
	assert_int_equal(line(sh, ";"), 0);
	assert_int_equal(fk.mores, 1);
	fflush(out);
	assert_string_equal(out_buf, "\n"
				     " k | v\n"
				     "---+---\n"
				     " 1 | x\n"
				     "\n"
				     " k | v\n"
				     "---+---\n"
				     " 2 | x\n"
				     "\n"
				     "(2 rows)\n");
	sm_cqlsh_free(sh);
	fclose(out);
	fclose(err);
}

static void
test_session_errors(void **state)
{
	static char errs[4096];
	struct fake fk;
	struct sm_cqlsh *sh;
	FILE *out = out_open(), *err = fmemopen(errs, sizeof(errs), "w");

	(void)state;
	memset(errs, 0, sizeof(errs));
	sh = session(&fk, false, out, err);
	/* cqlsh counts lines from 1 and adds one per line read */
	assert_int_equal(line(sh, "CONSISTENCY QUORUM"), 0);
	assert_int_equal(line(sh, "bad;"), 1);
	assert_true(sm_cqlsh_failed(sh));
	/* the first error ended the input */
	assert_int_equal(line(sh, "SELECT 1;"), 1);
	assert_int_equal(fk.nq, 1);
	fflush(out);
	fflush(err);
	assert_string_equal(out_buf, "Consistency level set to QUORUM.\n");
	assert_string_equal(errs, "<stdin>:3:SyntaxException: line 1:0 no viable alternative at "
				  "input 'bad'\n");
	sm_cqlsh_free(sh);
	fclose(out);
	fclose(err);

	/* -e: line 1, a missing ';' added */
	out = out_open();
	memset(errs, 0, sizeof(errs));
	err = fmemopen(errs, sizeof(errs), "w");
	sh = session(&fk, false, out, err);
	assert_int_equal(sm_cqlsh_run(sh, "bad"), 1);
	fflush(err);
	assert_string_equal(errs, "<stdin>:1:SyntaxException: line 1:0 no viable alternative at "
				  "input 'bad'\n");
	sm_cqlsh_free(sh);
	fclose(out);
	fclose(err);

	/* on a TTY: no prefix, and the session goes on; the switches answer as cqlsh's */
	out = out_open();
	memset(errs, 0, sizeof(errs));
	err = fmemopen(errs, sizeof(errs), "w");
	sh = session(&fk, true, out, err);
	assert_int_equal(line(sh, "bad;"), 0);
	assert_int_equal(line(sh, "EXPAND"), 0);
	assert_int_equal(line(sh, "EXPAND ON"), 0);
	assert_int_equal(line(sh, "expand on"), 0);
	assert_int_equal(line(sh, "CONSISTENCY"), 0);
	assert_int_equal(line(sh, "SERIAL CONSISTENCY LOCAL_SERIAL"), 0);
	assert_int_equal(line(sh, "consistency NONE"), 0);
	fflush(out);
	fflush(err);
	assert_string_equal(out_buf, "Expanded output is currently disabled. Use EXPAND ON to enable.\n"
				     "Now Expanded output is enabled\n"
				     "Current consistency level is ONE.\n"
				     "Serial consistency level set to LOCAL_SERIAL.\n");
	assert_string_equal(errs, "SyntaxException: line 1:0 no viable alternative at input 'bad'\n"
				  "Expanded output is already enabled. Use EXPAND OFF to disable.\n"
				  "Improper consistency command.\n");
	/* a lost connection ends the session with its errno */
	assert_int_equal(line(sh, "INSERT INTO t (k) VALUES (1);"), -ECONNRESET);
	assert_int_equal(line(sh, "exit"), -ECONNRESET);
	sm_cqlsh_free(sh);
	fclose(out);
	fclose(err);
}

static void
test_session_exit_and_eof(void **state)
{
	static char errs[4096];
	struct fake fk;
	struct sm_cqlsh *sh;
	FILE *out = out_open(), *err;

	(void)state;
	memset(errs, 0, sizeof(errs));
	err = fmemopen(errs, sizeof(errs), "w");
	sh = session(&fk, false, out, err);
	assert_int_equal(line(sh, "SELECT * FROM"), 0);
	assert_int_equal(sm_cqlsh_eof(sh), 1);
	fflush(err);
	assert_string_equal(errs, "<stdin>:2:Incomplete statement at end of file\n");
	sm_cqlsh_free(sh);
	fclose(err);

	sh = session(&fk, true, out, stderr);
	assert_int_equal(line(sh, "quit"), 1);
	sm_cqlsh_free(sh);
	fclose(out);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_value_scalars),
		cmocka_unit_test(test_value_empty),
		cmocka_unit_test(test_value_numbers),
		cmocka_unit_test(test_value_times),
		cmocka_unit_test(test_value_duration),
		cmocka_unit_test(test_value_text),
		cmocka_unit_test(test_value_collections),
		cmocka_unit_test(test_table_layout),
		cmocka_unit_test(test_columnize),
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_describe_keyspace),
		cmocka_unit_test(test_describe_table),
		cmocka_unit_test(test_protect_name),
		cmocka_unit_test(test_session_pages),
		cmocka_unit_test(test_session_errors),
		cmocka_unit_test(test_session_exit_and_eof),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
