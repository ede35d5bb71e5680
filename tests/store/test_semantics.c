/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Cassandra's observable write semantics, driven through the single-shard
 * storage core (sm_ptable_apply / sm_ptable_read) with explicit write
 * timestamps and local clocks, so every expiry is deterministic.
 *
 * Each test builds its own table. A read renders every row as CQL literals
 * joined by '|' ("null" for an absent cell), rows separated by '\n', so each
 * assertion states the exact visible result; writetime and TTL of the cells
 * of the first rows are kept for the tests that look at them.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sm_core.h"
#include "sm_store.h"
#include "sm_table.h"

#define NOW 1700000000 /* seconds: the local time of writes and reads unless a test moves it */

static struct {
	struct sm_catalog *cat[3];
	const struct sm_table *t;
	struct sm_ptable *pt;
	int32_t now;
	char err[256];
} F;

/* ---- values: CQL-serialized bytes in an arena reset by every test ---- */

static uint8_t arena[1 << 20];
static size_t arena_used;

static struct sm_bytes
abytes(const void *p, size_t n)
{
	struct sm_bytes b;

	assert_true(arena_used + n <= sizeof(arena));
	if (n)
		memcpy(arena + arena_used, p, n);
	b.p = arena + arena_used;
	b.len = (uint32_t)n;
	arena_used += n;
	return b;
}

static struct sm_bytes
be(uint64_t x, unsigned n)
{
	uint8_t b[8];
	unsigned i;

	for (i = 0; i < n; i++)
		b[i] = (uint8_t)(x >> (8 * (n - 1 - i)));
	return abytes(b, n);
}

/* int */
static struct sm_bytes
I(int32_t x) {
	return be((uint32_t)x, 4);
}

/* bigint */
static struct sm_bytes
BI(int64_t x) {
	return be((uint64_t)x, 8);
}

/* text */
static struct sm_bytes
T(const char *s) {
	return abytes(s, strlen(s));
}

/* blob from hex digits */
static struct sm_bytes
HEX(const char *hex) {
	uint8_t b[64];
	size_t n = strlen(hex) / 2, i;

	assert_true(n <= sizeof(b));
	for (i = 0; i < n; i++) {
		unsigned v;

		assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
		b[i] = (uint8_t)v;
	}
	return abytes(b, n);
}

static struct sm_bytes
DBL(double d) {
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	return be(u, 8);
}

static struct sm_bytes
UUID(const char *s) {
	struct sm_uuid u;

	assert_int_equal(sm_uuid_parse(s, &u), 0);
	return abytes(u.b, 16);
}

static struct sm_bytes
coll_of(bool is_map, const struct sm_bytes *e, uint32_t n)
{
	size_t len = sm_coll_build(NULL, 0, e, n, is_map);

	assert_true(arena_used + len <= sizeof(arena));
	assert_int_equal(sm_coll_build(arena + arena_used, len, e, n, is_map), len);
	arena_used += len;
	return (struct sm_bytes){ arena + arena_used - len, (uint32_t)len };
}

#define NB(...) (uint32_t)(sizeof((struct sm_bytes[]){ __VA_ARGS__ }) / sizeof(struct sm_bytes))
#define LIST(...) coll_of(false, (struct sm_bytes[]){ __VA_ARGS__ }, NB(__VA_ARGS__))
#define SETOF(...) LIST(__VA_ARGS__)
#define MAP(...) coll_of(true, (struct sm_bytes[]){ __VA_ARGS__ }, NB(__VA_ARGS__) / 2)

static struct sm_key
key_of(const struct sm_bytes *parts, unsigned n)
{
	struct sm_key k;
	unsigned i;

	memset(&k, 0, sizeof(k));
	k.n = n;
	for (i = 0; i < n; i++)
		k.part[i] = parts[i];
	return k;
}

#define KEY(...) key_of((struct sm_bytes[]){ __VA_ARGS__ }, NB(__VA_ARGS__))
#define PK(x) KEY(I(x))
#define CK(x) KEY(I(x))
static const struct sm_key NOKEY;

/* ---- tables ---- */

static int
setup(void **state)
{
	(void)state;
	memset(&F, 0, sizeof(F));
	F.now = NOW;
	arena_used = 0;
	return 0;
}

static int
teardown(void **state)
{
	int i;

	(void)state;
	sm_ptable_free(F.pt);
	for (i = 2; i >= 0; i--)
		if (F.cat[i] != NULL)
			sm_catalog_put(F.cat[i]);
	memset(&F, 0, sizeof(F));
	return 0;
}

static void
open_table(const struct sm_column_def *cols, unsigned ncols, int32_t default_ttl)
{
	static char k_class[] = "class", v_class[] = "SimpleStrategy";
	static char k_rf[] = "replication_factor", v_rf[] = "1";
	const struct sm_option repl[] = { { k_class, v_class }, { k_rf, v_rf } };
	struct sm_keyspace_def kd = { "ks", repl, 2, true };
	struct sm_table_def td = { "ks", "t", cols, ncols, NULL, 0, default_ttl };
	int ret;

	assert_null(F.pt);
	F.cat[0] = sm_catalog_new();
	assert_non_null(F.cat[0]);
	ret = sm_catalog_create_keyspace(F.cat[0], &kd, false, &F.cat[1], F.err, sizeof(F.err));
	if (ret != 0)
		fail_msg("create keyspace: %s", F.err);
	ret = sm_catalog_create_table(F.cat[1], &td, false, &F.cat[2], F.err, sizeof(F.err));
	if (ret != 0)
		fail_msg("create table: %s", F.err);
	F.t = sm_catalog_table(F.cat[2], "ks", "t");
	assert_non_null(F.t);
	F.pt = sm_ptable_new(F.t);
	assert_non_null(F.pt);
}

#define OPEN(cols) open_table(cols, sizeof(cols) / sizeof(cols[0]), 0)

/* pk int, ck int, s int static, v text, w int */
static void
open_basic(void)
{
	static const struct sm_column_def cols[] = {
		{ "pk", "int", SM_COL_PARTITION, false }, { "ck", "int", SM_COL_CLUSTERING, false },
		{ "v", "text", SM_COL_REGULAR, false },	  { "w", "int", SM_COL_REGULAR, false },
		{ "s", "int", SM_COL_STATIC, false },
	};

	OPEN(cols);
}

static uint16_t
cid(const char *name)
{
	const struct sm_column *c = sm_table_column(F.t, name);

	if (c == NULL)
		fail_msg("no column %s", name);
	return c->id;
}

/* ---- cell operations ---- */

static struct sm_cell_op
op_set(const char *col, struct sm_bytes v)
{
	return (struct sm_cell_op){ .col = cid(col), .kind = SM_CELL_SET, .value = v };
}

/* SET col = null */
static struct sm_cell_op
op_null(const char *col)
{
	return (struct sm_cell_op){ .col = cid(col), .kind = SM_CELL_SET, .null = true };
}

/* DELETE col */
static struct sm_cell_op
op_del(const char *col)
{
	return (struct sm_cell_op){ .col = cid(col), .kind = SM_CELL_DELETE };
}

static struct sm_cell_op
op_add(const char *col, int64_t delta)
{
	return (struct sm_cell_op){ .col = cid(col),
				    .kind = SM_CELL_COUNTER_ADD,
				    .value = BI(delta) };
}

static struct sm_cell_op
op_append(const char *col, struct sm_bytes coll)
{
	return (struct sm_cell_op){ .col = cid(col), .kind = SM_CELL_APPEND, .value = coll };
}

static struct sm_cell_op
op_prepend(const char *col, struct sm_bytes coll)
{
	return (struct sm_cell_op){ .col = cid(col), .kind = SM_CELL_PREPEND, .value = coll };
}

static struct sm_cell_op
op_remove(const char *col, struct sm_bytes coll)
{
	return (struct sm_cell_op){ .col = cid(col), .kind = SM_CELL_REMOVE, .value = coll };
}

/* map[key] = v */
static struct sm_cell_op
op_put(const char *col, struct sm_bytes key, struct sm_bytes v)
{
	return (struct sm_cell_op){
		.col = cid(col), .kind = SM_CELL_SET_ELEM, .key = key, .value = v
	};
}

/* DELETE map[key] */
static struct sm_cell_op
op_del_key(const char *col, struct sm_bytes key)
{
	return (struct sm_cell_op){ .col = cid(col), .kind = SM_CELL_DELETE_ELEM, .key = key };
}

/* list[idx] = v */
static struct sm_cell_op
op_set_idx(const char *col, int32_t idx, struct sm_bytes v)
{
	return op_put(col, I(idx), v);
}

/* DELETE list[idx] */
static struct sm_cell_op
op_del_idx(const char *col, int32_t idx)
{
	return op_del_key(col, I(idx));
}

/* ---- mutations ---- */

static int
apply_raw(uint32_t flags, struct sm_key pk, struct sm_key ck, const struct sm_ck_range *range,
	  int64_t ts, int32_t ttl, const struct sm_cell_op *ops, unsigned nops)
{
	struct sm_mutation m;

	memset(&m, 0, sizeof(m));
	m.table = F.t;
	m.pk = pk;
	m.ck = ck;
	if (range != NULL)
		m.range = *range;
	m.ts = ts;
	m.ttl = ttl;
	m.flags = flags;
	m.ops = ops;
	m.nops = nops;
	F.err[0] = '\0';
	return sm_ptable_apply(F.pt, &m, ts, F.now, F.err, sizeof(F.err));
}

static void
must_apply(int line, uint32_t flags, struct sm_key pk, struct sm_key ck,
	   const struct sm_ck_range *range, int64_t ts, int32_t ttl, const struct sm_cell_op *ops,
	   unsigned nops)
{
	int ret = apply_raw(flags, pk, ck, range, ts, ttl, ops, nops);

	if (ret != 0)
		fail_msg("line %d: apply returned %d: %s", line, ret, F.err);
}

static void
must_fail(int line, int want, const char *msg, uint32_t flags, struct sm_key pk, struct sm_key ck,
	  int64_t ts, int32_t ttl, const struct sm_cell_op *ops, unsigned nops)
{
	int ret = apply_raw(flags, pk, ck, NULL, ts, ttl, ops, nops);

	_assert_int_equal((uintmax_t)(intmax_t)ret, (uintmax_t)(intmax_t)want, __FILE__, line);
	_assert_string_equal(F.err, msg, __FILE__, line);
}

#define OPS(...)                                                                                   \
	(const struct sm_cell_op[]){ __VA_ARGS__ },                                                \
		(unsigned)(sizeof((struct sm_cell_op[]){ __VA_ARGS__ }) /                          \
			   sizeof(struct sm_cell_op))
/* INSERT: a row marker and the cells. */
#define INSERT(pk, ck, ts, ttl, ...)                                                               \
	must_apply(__LINE__, SM_MUT_ROW_MARKER, pk, ck, NULL, ts, ttl, OPS(__VA_ARGS__))
/* INSERT of the primary key alone. */
#define MARKER(pk, ck, ts, ttl)                                                                    \
	must_apply(__LINE__, SM_MUT_ROW_MARKER, pk, ck, NULL, ts, ttl, NULL, 0)
/* UPDATE: cells only. */
#define UPDATE(pk, ck, ts, ttl, ...)                                                               \
	must_apply(__LINE__, 0, pk, ck, NULL, ts, ttl, OPS(__VA_ARGS__))
#define DEL_ROW(pk, ck, ts) must_apply(__LINE__, SM_MUT_DELETE_ROW, pk, ck, NULL, ts, 0, NULL, 0)
#define DEL_PART(pk, ts)                                                                           \
	must_apply(__LINE__, SM_MUT_DELETE_PARTITION, pk, NOKEY, NULL, ts, 0, NULL, 0)
#define DEL_RANGE(pk, rg, ts)                                                                      \
	do {                                                                                       \
		struct sm_ck_range rg_ = (rg);                                                     \
		must_apply(__LINE__, SM_MUT_DELETE_RANGE, pk, NOKEY, &rg_, ts, 0, NULL, 0);        \
	} while (0)
#define FAILS(want, msg, flags, pk, ck, ts, ttl, ...)                                              \
	must_fail(__LINE__, want, msg, flags, pk, ck, ts, ttl, OPS(__VA_ARGS__))

/* A clustering slice: (start, inclusive) .. (end, inclusive); NOKEY: unbounded. */
static struct sm_ck_range
RG(struct sm_key start, bool si, struct sm_key end, bool ei) {
	struct sm_ck_range r;

	memset(&r, 0, sizeof(r));
	r.start.prefix = start;
	r.start.inclusive = si;
	r.end.prefix = end;
	r.end.inclusive = ei;
	return r;
}
/* ---- reads ---- */

#define MAXR 64
#define MAXC 16

static struct {
	char s[32768];
	size_t len;
	unsigned n;
	const uint16_t *cols;
	bool present[MAXR][MAXC];
	int64_t wt[MAXR][MAXC];
	int32_t ttl[MAXR][MAXC];
	unsigned ckn[MAXR];
} R;

static void
out(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(R.s + R.len, sizeof(R.s) - R.len, fmt, ap);
	va_end(ap);
	assert_true(n >= 0 && (size_t)n < sizeof(R.s) - R.len);
	R.len += (size_t)n;
}

static int
sink_row(void *ctx, const struct sm_row_view *r)
{
	unsigned i;

	(void)ctx;
	if (R.n > 0)
		out("\n");
	for (i = 0; i < r->ncells; i++) {
		const struct sm_cell_view *cv = &r->cells[i];

		if (i > 0)
			out("|");
		if (!cv->present) {
			out("null");
		} else {
			size_t room = sizeof(R.s) - R.len;
			size_t n = sm_value_format(r->table->cols[R.cols[i]].type, cv->value,
						   R.s + R.len, room);

			assert_true(n < room);
			R.len += n;
		}
		if (R.n < MAXR && i < MAXC) {
			R.present[R.n][i] = cv->present;
			R.wt[R.n][i] = cv->writetime;
			R.ttl[R.n][i] = cv->ttl;
		}
	}
	if (R.n < MAXR)
		R.ckn[R.n] = r->ck->n;
	R.n++;
	return 0;
}

/* "a,b,c" -> column ids */
static unsigned
parse_cols(const char *names, uint16_t *ids)
{
	char buf[256], *save = NULL, *tok;
	unsigned n = 0;

	snprintf(buf, sizeof(buf), "%s", names);
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save))
		ids[n++] = cid(tok);
	return n;
}

static void
sel_init(struct sm_select *s, struct sm_key pk, const char *cols, uint16_t *ids)
{
	memset(s, 0, sizeof(*s));
	s->table = F.t;
	s->pk = pk;
	s->cols = ids;
	s->ncols = parse_cols(cols, ids);
	s->sink.row = sink_row;
}

static void
res_reset(const uint16_t *cols)
{
	memset(&R, 0, sizeof(R));
	R.cols = cols;
}

static const char *
read_sel(struct sm_select *s)
{
	int ret;

	res_reset(s->cols);
	ret = sm_ptable_read(F.pt, s, F.now);
	assert_int_equal(ret, 0);
	assert_int_equal(s->rows, R.n);
	return R.s;
}

static const char *
read_ex(struct sm_key pk, const char *cols, const struct sm_ck_range *rg, unsigned nrg,
	bool reversed, uint32_t limit, uint32_t ppl)
{
	static uint16_t ids[MAXC];
	struct sm_select s;

	sel_init(&s, pk, cols, ids);
	s.ranges = rg;
	s.nranges = nrg;
	s.reversed = reversed;
	s.limit = limit;
	s.per_partition_limit = ppl;
	read_sel(&s);
	assert_false(s.more && limit == 0);
	return R.s;
}

#define READ(pk, cols) read_ex(pk, cols, NULL, 0, false, 0, 0)
#define CHECK(actual, expected) _assert_string_equal(actual, expected, __FILE__, __LINE__)

/*
 * Page through a read @page rows at a time, checking each page's size, and
 * return the pages concatenated (same format as a full read).
 */
static char paged[32768];

static const char *
read_paged(struct sm_key pk, const char *cols, const struct sm_ck_range *rg, unsigned nrg,
	   bool reversed, uint32_t page, uint32_t ppl, unsigned *npages)
{
	uint16_t ids[MAXC];
	struct sm_select s;
	size_t len = 0;
	unsigned pages = 0;

	sel_init(&s, pk, cols, ids);
	s.ranges = rg;
	s.nranges = nrg;
	s.reversed = reversed;
	s.per_partition_limit = ppl;
	paged[0] = '\0';
	for (;;) {
		s.limit = page;
		read_sel(&s);
		pages++;
		assert_true(s.rows <= page);
		if (s.more)
			assert_int_equal(s.rows, page);
		if (R.len > 0) {
			int n = snprintf(paged + len, sizeof(paged) - len, "%s%s", len ? "\n" : "",
					 R.s);

			assert_true(n >= 0 && (size_t)n < sizeof(paged) - len);
			len += (size_t)n;
		}
		if (!s.more)
			break;
		assert_true(pages < 10000);
		s.resume = true; /* s.paging holds where the page stopped */
	}
	if (npages != NULL)
		*npages = pages;
	return paged;
}

/* ---- last write wins ---- */

static void
test_lww_newer_timestamp_wins(void **state)
{
	(void)state;
	open_basic();
	UPDATE(PK(1), CK(1), 100, 0, op_set("v", T("a")));
	UPDATE(PK(1), CK(1), 200, 0, op_set("v", T("b")));
	CHECK(READ(PK(1), "ck,v"), "1|'b'");
	assert_int_equal(R.wt[0][1], 200);

	/* The same writes arriving newest first give the same result. */
	UPDATE(PK(2), CK(1), 200, 0, op_set("v", T("b")));
	UPDATE(PK(2), CK(1), 100, 0, op_set("v", T("a")));
	CHECK(READ(PK(2), "ck,v"), "1|'b'");
	assert_int_equal(R.wt[0][1], 200);

	/* Timestamps order writes, not the local clock. */
	F.now = NOW + 1000;
	UPDATE(PK(3), CK(1), 500, 0, op_set("v", T("x")));
	F.now = NOW;
	UPDATE(PK(3), CK(1), 600, 0, op_set("v", T("y")));
	CHECK(READ(PK(3), "ck,v"), "1|'y'");

	/* Negative and huge timestamps are ordinary timestamps. */
	UPDATE(PK(4), CK(1), -5, 0, op_set("v", T("neg")));
	UPDATE(PK(4), CK(1), -10, 0, op_set("v", T("older")));
	CHECK(READ(PK(4), "ck,v"), "1|'neg'");
	UPDATE(PK(4), CK(1), INT64_MAX - 1, 0, op_set("v", T("max")));
	CHECK(READ(PK(4), "ck,v"), "1|'max'");
	assert_int_equal(R.wt[0][1], INT64_MAX - 1);
}

static void
test_lww_tie_tombstone_beats_live(void **state)
{
	(void)state;
	open_basic();
	/* Live then tombstone at the same timestamp. */
	INSERT(PK(1), CK(1), 100, 0, op_set("v", T("a")), op_set("w", I(1)));
	UPDATE(PK(1), CK(1), 100, 0, op_del("v"));
	CHECK(READ(PK(1), "ck,v,w"), "1|null|1");
	/* Tombstone then live at the same timestamp. */
	UPDATE(PK(2), CK(1), 100, 0, op_del("v"));
	INSERT(PK(2), CK(1), 100, 0, op_set("v", T("a")), op_set("w", I(1)));
	CHECK(READ(PK(2), "ck,v,w"), "1|null|1");
	/* A null write is a tombstone too. */
	UPDATE(PK(3), CK(1), 100, 0, op_set("v", T("zzz")), op_set("w", I(3)));
	UPDATE(PK(3), CK(1), 100, 0, op_null("v"));
	CHECK(READ(PK(3), "ck,v,w"), "1|null|3");
	/* A row tombstone at the same timestamp shadows an INSERT, either order. */
	INSERT(PK(4), CK(1), 100, 0, op_set("v", T("a")));
	DEL_ROW(PK(4), CK(1), 100);
	CHECK(READ(PK(4), "ck,v"), "");
	DEL_ROW(PK(5), CK(1), 100);
	INSERT(PK(5), CK(1), 100, 0, op_set("v", T("a")));
	CHECK(READ(PK(5), "ck,v"), "");
}

static void
test_lww_tie_greater_value_wins(void **state)
{
	(void)state;
	open_basic();
	UPDATE(PK(1), CK(1), 100, 0, op_set("v", T("a")));
	UPDATE(PK(1), CK(1), 100, 0, op_set("v", T("b")));
	CHECK(READ(PK(1), "ck,v"), "1|'b'");
	UPDATE(PK(2), CK(1), 100, 0, op_set("v", T("b")));
	UPDATE(PK(2), CK(1), 100, 0, op_set("v", T("a")));
	CHECK(READ(PK(2), "ck,v"), "1|'b'");
	/* Longer wins over its own prefix. */
	UPDATE(PK(3), CK(1), 100, 0, op_set("v", T("ab")));
	UPDATE(PK(3), CK(1), 100, 0, op_set("v", T("a")));
	CHECK(READ(PK(3), "ck,v"), "1|'ab'");
	/* Bytewise on the serialized value, not by the type's order: for an int
	 * -1 (ff ff ff ff) beats 1 (00 00 00 01). */
	UPDATE(PK(4), CK(1), 100, 0, op_set("w", I(1)));
	UPDATE(PK(4), CK(1), 100, 0, op_set("w", I(-1)));
	CHECK(READ(PK(4), "ck,w"), "1|-1");
	UPDATE(PK(5), CK(1), 100, 0, op_set("w", I(-1)));
	UPDATE(PK(5), CK(1), 100, 0, op_set("w", I(1)));
	CHECK(READ(PK(5), "ck,w"), "1|-1");
	/* The empty value loses to any other. */
	UPDATE(PK(6), CK(1), 100, 0, op_set("v", T("")));
	UPDATE(PK(6), CK(1), 100, 0, op_set("v", T("\x01")));
	UPDATE(PK(6), CK(1), 100, 0, op_set("v", T("")));
	CHECK(READ(PK(6), "ck,v"), "1|'\x01'");
}

static void
test_lww_tie_later_expiry_wins(void **state)
{
	(void)state;
	open_basic();
	/* Same timestamp and value: the later expiry wins, in either order. */
	UPDATE(PK(1), CK(1), 100, 10, op_set("v", T("a")));
	UPDATE(PK(1), CK(1), 100, 20, op_set("v", T("a")));
	READ(PK(1), "v");
	assert_int_equal(R.ttl[0][0], 20);
	UPDATE(PK(2), CK(1), 100, 20, op_set("v", T("a")));
	UPDATE(PK(2), CK(1), 100, 10, op_set("v", T("a")));
	READ(PK(2), "v");
	assert_int_equal(R.ttl[0][0], 20);

	/* ScyllaDB's order: an expiring cell beats one that never expires, in
	 * either order (compare_atomic_cell_for_merge()). */
	UPDATE(PK(3), CK(1), 100, 10, op_set("v", T("a")));
	UPDATE(PK(3), CK(1), 100, 0, op_set("v", T("a")));
	UPDATE(PK(4), CK(1), 100, 0, op_set("v", T("a")));
	UPDATE(PK(4), CK(1), 100, 10, op_set("v", T("a")));
	READ(PK(3), "v");
	assert_int_equal(R.ttl[0][0], 10);
	READ(PK(4), "v");
	assert_int_equal(R.ttl[0][0], 10);
	F.now = NOW + 10;
	CHECK(READ(PK(3), "ck,v"), "");
	CHECK(READ(PK(4), "ck,v"), "");

	/* The expiry decides before the value does: a smaller expiring value
	 * beats a greater live one, and a later expiry a greater value. */
	F.now = NOW;
	UPDATE(PK(5), CK(1), 100, 0, op_set("v", T("b")));
	UPDATE(PK(5), CK(1), 100, 10, op_set("v", T("a")));
	CHECK(READ(PK(5), "ck,v"), "1|'a'");
	assert_int_equal(R.ttl[0][1], 10);
	UPDATE(PK(6), CK(1), 100, 20, op_set("v", T("a")));
	UPDATE(PK(6), CK(1), 100, 10, op_set("v", T("b")));
	CHECK(READ(PK(6), "ck,v"), "1|'a'");
	/* equal expiries: the greater value */
	UPDATE(PK(7), CK(1), 100, 10, op_set("v", T("a")));
	UPDATE(PK(7), CK(1), 100, 10, op_set("v", T("b")));
	CHECK(READ(PK(7), "ck,v"), "1|'b'");
	F.now = NOW + 10;
	CHECK(READ(PK(5), "ck,v"), "");
}

/*
 * Every order of arrival of a set of commutative writes (cells, deletes of
 * every kind, TTLs, map and set elements) gives the result of the in-order
 * application.
 */
static void
test_lww_any_arrival_order_same_result(void **state)
{
	enum { NW = 7 };
	static const unsigned perm_count = 5040; /* 7! */
	static char want[sizeof(R.s)];
	unsigned perm[NW], p;

	(void)state;
	{
		static const struct sm_column_def cols[] = {
			{ "pk", "int", SM_COL_PARTITION, false },
			{ "ck", "int", SM_COL_CLUSTERING, false },
			{ "v", "text", SM_COL_REGULAR, false },
			{ "w", "int", SM_COL_REGULAR, false },
			{ "m", "map<int, text>", SM_COL_REGULAR, false },
			{ "st", "set<int>", SM_COL_REGULAR, false },
			{ "s", "int", SM_COL_STATIC, false },
		};

		OPEN(cols);
	}
	for (p = 0; p < perm_count; p++) {
		unsigned i, rest = p;
		bool used[NW] = { false };

		/* p-th permutation (factorial number system). */
		for (i = 0; i < NW; i++) {
			unsigned f = 1, k, j;

			for (k = 1; k < NW - i; k++)
				f *= k;
			k = rest / f;
			rest %= f;
			for (j = 0; j < NW; j++) {
				if (used[j])
					continue;
				if (k-- == 0)
					break;
			}
			used[j] = true;
			perm[i] = j;
		}
		arena_used = 0;
		for (i = 0; i < NW; i++) {
			struct sm_key pk = PK((int32_t)p);

			switch (perm[i]) {
			case 0:
				INSERT(pk, CK(1), 100, 0, op_set("v", T("a")), op_set("w", I(1)),
				       op_set("m", MAP(I(1), T("x"), I(2), T("y"))),
				       op_set("st", SETOF(I(1), I(2))), op_set("s", I(10)));
				INSERT(pk, CK(2), 100, 0, op_set("v", T("b")));
				INSERT(pk, CK(3), 100, 0, op_set("v", T("c")));
				break;
			case 1:
				UPDATE(pk, CK(1), 300, 0, op_set("v", T("new")),
				       op_put("m", I(3), T("z")), op_remove("st", SETOF(I(1))));
				break;
			case 2:
				UPDATE(pk, CK(1), 200, 0, op_del("w"), op_del_key("m", I(1)),
				       op_del_key("m", I(3)));
				break;
			case 3:
				DEL_ROW(pk, CK(2), 150);
				UPDATE(pk, CK(2), 160, 0, op_set("w", I(22)));
				break;
			case 4:
				DEL_RANGE(pk, RG(CK(3), false, NOKEY, true), 120);
				INSERT(pk, CK(4), 110, 0, op_set("v", T("d")));
				INSERT(pk, CK(5), 130, 0, op_set("v", T("e")));
				break;
			case 5:
				UPDATE(pk, CK(1), 250, 0, op_set("v", T("mid")), op_set("w", I(7)));
				UPDATE(pk, NOKEY, 90, 0, op_set("s", I(9)));
				break;
			case 6:
				/* A TTL'd write at the same timestamp as a live one: the
				 * expiring one wins whichever arrives first. */
				UPDATE(pk, CK(3), 100, 5, op_set("v", T("ttl")));
				UPDATE(pk, CK(6), 140, 5, op_set("v", T("f")));
				break;
			}
		}
		READ(PK((int32_t)p), "ck,v,w,m,st,s");
		if (p == 0) {
			snprintf(want, sizeof(want), "%s", R.s);
			CHECK(want, "1|'new'|7|{2: 'y', 3: 'z'}|{2}|10\n"
				    "2|null|22|null|null|10\n"
				    "3|'ttl'|null|null|null|10\n"
				    "5|'e'|null|null|null|10\n"
				    "6|'f'|null|null|null|10");
		} else if (strcmp(R.s, want) != 0) {
			fail_msg("permutation %u gives\n%s\ninstead of\n%s", p, R.s, want);
		}
	}
}

/* ---- TTL ---- */

static void
test_ttl_expiry_and_remaining(void **state)
{
	(void)state;
	open_basic();
	UPDATE(PK(1), CK(1), 100, 10, op_set("v", T("a")));
	UPDATE(PK(1), CK(1), 100, 0, op_set("w", I(5)));
	CHECK(READ(PK(1), "ck,v,w"), "1|'a'|5");
	assert_int_equal(R.ttl[0][1], 10);
	assert_int_equal(R.ttl[0][2], 0);
	assert_int_equal(R.wt[0][1], 100);
	assert_int_equal(R.wt[0][2], 100);
	F.now = NOW + 4;
	CHECK(READ(PK(1), "ck,v,w"), "1|'a'|5");
	assert_int_equal(R.ttl[0][1], 6);
	F.now = NOW + 9;
	CHECK(READ(PK(1), "ck,v,w"), "1|'a'|5");
	assert_int_equal(R.ttl[0][1], 1);
	/* Gone at the expiry second (now >= expiry) and after. */
	F.now = NOW + 10;
	CHECK(READ(PK(1), "ck,v,w"), "1|null|5");
	F.now = NOW + 100000;
	CHECK(READ(PK(1), "ck,v,w"), "1|null|5");

	/* An UPDATE with a TTL on every cell: the row goes with them. */
	F.now = NOW;
	UPDATE(PK(2), CK(1), 100, 3, op_set("v", T("a")), op_set("w", I(1)));
	F.now = NOW + 2;
	CHECK(READ(PK(2), "ck,v,w"), "1|'a'|1");
	F.now = NOW + 3;
	CHECK(READ(PK(2), "ck,v,w"), "");

	/* An expired cell is a tombstone at its timestamp: an older write
	 * arriving later does not bring a value back, a newer one does. */
	UPDATE(PK(2), CK(1), 90, 0, op_set("v", T("old")));
	CHECK(READ(PK(2), "ck,v,w"), "");
	UPDATE(PK(2), CK(1), 101, 0, op_set("v", T("new")));
	CHECK(READ(PK(2), "ck,v,w"), "1|'new'|null");

	/* Overwriting a TTL'd value without a TTL removes the expiry; the
	 * other way round sets one. */
	F.now = NOW;
	UPDATE(PK(3), CK(1), 100, 10, op_set("v", T("a")));
	UPDATE(PK(3), CK(1), 200, 0, op_set("v", T("b")));
	UPDATE(PK(3), CK(2), 100, 0, op_set("v", T("a")));
	UPDATE(PK(3), CK(2), 200, 5, op_set("v", T("b")));
	F.now = NOW + 5;
	CHECK(READ(PK(3), "ck,v"), "1|'b'");
	assert_int_equal(R.ttl[0][1], 0);

	/* The expiry counts from the local time of the write. */
	F.now = NOW + 50;
	UPDATE(PK(4), CK(1), 100, 10, op_set("v", T("a")));
	F.now = NOW + 59;
	CHECK(READ(PK(4), "ck,v"), "1|'a'");
	assert_int_equal(R.ttl[0][1], 1);
	F.now = NOW + 60;
	CHECK(READ(PK(4), "ck,v"), "");
}

static void
test_ttl_row_marker(void **state)
{
	(void)state;
	open_basic();
	/* INSERT of the key alone with a TTL: the row is its marker. */
	MARKER(PK(1), CK(1), 100, 10);
	CHECK(READ(PK(1), "pk,ck,v,w"), "1|1|null|null");
	F.now = NOW + 9;
	CHECK(READ(PK(1), "pk,ck,v,w"), "1|1|null|null");
	F.now = NOW + 10;
	CHECK(READ(PK(1), "pk,ck,v,w"), "");

	/* INSERT ... USING TTL then an UPDATE without TTL of another column:
	 * that cell keeps the row alive after the marker and v expire. */
	F.now = NOW;
	INSERT(PK(2), CK(1), 100, 10, op_set("v", T("a")));
	UPDATE(PK(2), CK(1), 101, 0, op_set("w", I(7)));
	F.now = NOW + 10;
	CHECK(READ(PK(2), "ck,v,w"), "1|null|7");

	/* Same with the UPDATE written first. */
	F.now = NOW;
	UPDATE(PK(3), CK(1), 101, 0, op_set("w", I(7)));
	INSERT(PK(3), CK(1), 100, 10, op_set("v", T("a")));
	F.now = NOW + 10;
	CHECK(READ(PK(3), "ck,v,w"), "1|null|7");

	/* INSERT without TTL, UPDATE with: the marker keeps the row. */
	F.now = NOW;
	INSERT(PK(4), CK(1), 100, 0, op_set("v", T("a")));
	UPDATE(PK(4), CK(1), 101, 5, op_set("v", T("b")), op_set("w", I(1)));
	CHECK(READ(PK(4), "ck,v,w"), "1|'b'|1");
	F.now = NOW + 5;
	CHECK(READ(PK(4), "ck,v,w"), "1|null|null");

	/* An INSERT with a TTL then a newer INSERT without: the row stays. */
	F.now = NOW;
	MARKER(PK(5), CK(1), 100, 10);
	MARKER(PK(5), CK(1), 200, 0);
	F.now = NOW + 10;
	CHECK(READ(PK(5), "ck"), "1");

	/* A newer INSERT with a TTL replaces a marker without one. */
	F.now = NOW;
	MARKER(PK(6), CK(1), 100, 0);
	MARKER(PK(6), CK(1), 200, 10);
	F.now = NOW + 10;
	CHECK(READ(PK(6), "ck"), "");

	/* Equal timestamps (LivenessInfo.supersedes): the expiring marker wins
	 * over the one that does not expire, whichever arrives first. */
	F.now = NOW;
	MARKER(PK(7), CK(1), 100, 0);
	MARKER(PK(7), CK(1), 100, 10);
	MARKER(PK(8), CK(1), 100, 10);
	MARKER(PK(8), CK(1), 100, 0);
	/* ... and of two expiring ones, the later expiry. */
	MARKER(PK(9), CK(1), 100, 20);
	MARKER(PK(9), CK(1), 100, 10);
	MARKER(PK(10), CK(1), 100, 10);
	MARKER(PK(10), CK(1), 100, 20);
	F.now = NOW + 10;
	CHECK(READ(PK(7), "ck"), "");
	CHECK(READ(PK(8), "ck"), "");
	CHECK(READ(PK(9), "ck"), "1");
	CHECK(READ(PK(10), "ck"), "1");
	F.now = NOW + 20;
	CHECK(READ(PK(9), "ck"), "");
	CHECK(READ(PK(10), "ck"), "");
}

static void
test_ttl_default_time_to_live(void **state)
{
	static const struct sm_column_def cols[] = {
		{ "pk", "int", SM_COL_PARTITION, false },
		{ "ck", "int", SM_COL_CLUSTERING, false },
		{ "v", "text", SM_COL_REGULAR, false },
	};

	(void)state;
	open_table(cols, 3, 100);
	/* No USING TTL: the table's default applies to marker and cells. */
	INSERT(PK(1), CK(1), 10, SM_TTL_DEFAULT, op_set("v", T("a")));
	CHECK(READ(PK(1), "ck,v"), "1|'a'");
	assert_int_equal(R.ttl[0][1], 100);
	/* USING TTL 0 means no expiry, whatever the default. */
	INSERT(PK(1), CK(2), 10, 0, op_set("v", T("b")));
	/* An explicit TTL overrides the default. */
	INSERT(PK(1), CK(3), 10, 30, op_set("v", T("c")));
	F.now = NOW + 30;
	CHECK(READ(PK(1), "ck,v"), "1|'a'\n2|'b'");
	assert_int_equal(R.ttl[0][1], 70);
	assert_int_equal(R.ttl[1][1], 0);
	F.now = NOW + 100;
	CHECK(READ(PK(1), "ck,v"), "2|'b'");
}

/* ---- tombstones ---- */

static void
test_partition_tombstone(void **state)
{
	(void)state;
	open_basic();
	INSERT(PK(1), CK(1), 100, 0, op_set("v", T("a")), op_set("w", I(1)));
	INSERT(PK(1), CK(2), 300, 0, op_set("v", T("b")));
	UPDATE(PK(1), NOKEY, 100, 0, op_set("s", I(5)));
	UPDATE(PK(2), NOKEY, 100, 0, op_set("s", I(5)));
	DEL_PART(PK(1), 200);
	/* Row 1 and the static are older: gone; row 2 is newer: kept. */
	CHECK(READ(PK(1), "pk,ck,v,w,s"), "1|2|'b'|null|null");
	/* Another partition is untouched. */
	CHECK(READ(PK(2), "pk,ck,s"), "2|null|5");

	/* Writes at the tombstone's timestamp or older, arriving later, stay
	 * shadowed: rows, cells and statics. */
	INSERT(PK(1), CK(3), 200, 0, op_set("v", T("c")));
	INSERT(PK(1), CK(4), 150, 0, op_set("v", T("d")));
	UPDATE(PK(1), CK(2), 200, 0, op_set("w", I(2)));
	UPDATE(PK(1), NOKEY, 200, 0, op_set("s", I(6)));
	CHECK(READ(PK(1), "pk,ck,v,w,s"), "1|2|'b'|null|null");

	/* Newer writes resurrect just what they write: an UPDATE of one cell
	 * of the deleted row 1 brings back a row with only that cell. */
	UPDATE(PK(1), CK(1), 201, 0, op_set("w", I(10)));
	UPDATE(PK(1), NOKEY, 201, 0, op_set("s", I(7)));
	CHECK(READ(PK(1), "pk,ck,v,w,s"), "1|1|null|10|7\n1|2|'b'|null|7");

	/* A partition tombstone on a partition never written hides older
	 * writes that arrive after it. */
	DEL_PART(PK(3), 500);
	INSERT(PK(3), CK(1), 400, 0, op_set("v", T("x")));
	UPDATE(PK(3), NOKEY, 500, 0, op_set("s", I(1)));
	CHECK(READ(PK(3), "pk,ck,v,s"), "");
	INSERT(PK(3), CK(1), 501, 0, op_set("v", T("y")));
	CHECK(READ(PK(3), "pk,ck,v,s"), "3|1|'y'|null");

	/* An older partition tombstone arriving late changes nothing newer. */
	INSERT(PK(4), CK(1), 100, 0, op_set("v", T("a")));
	DEL_PART(PK(4), 300);
	DEL_PART(PK(4), 200);
	INSERT(PK(4), CK(2), 250, 0, op_set("v", T("b")));
	INSERT(PK(4), CK(3), 301, 0, op_set("v", T("c")));
	CHECK(READ(PK(4), "ck,v"), "3|'c'");
	assert_int_equal(sm_ptable_count(F.pt), 4);
}

static void
test_row_tombstone(void **state)
{
	(void)state;
	open_basic();
	INSERT(PK(1), CK(1), 100, 0, op_set("v", T("a")), op_set("w", I(1)));
	INSERT(PK(1), CK(2), 100, 0, op_set("v", T("b")));
	UPDATE(PK(1), NOKEY, 100, 0, op_set("s", I(5)));
	DEL_ROW(PK(1), CK(1), 200);
	/* The row is gone with its marker and cells; its neighbours and the
	 * static column are not. */
	CHECK(READ(PK(1), "ck,v,w,s"), "2|'b'|null|5");

	/* An INSERT at the tombstone's timestamp or older stays shadowed. */
	INSERT(PK(1), CK(1), 200, 0, op_set("v", T("x")));
	INSERT(PK(1), CK(1), 150, 0, op_set("w", I(9)));
	CHECK(READ(PK(1), "ck,v,w,s"), "2|'b'|null|5");

	/* An UPDATE after the delete yields a row with only the written cell. */
	UPDATE(PK(1), CK(1), 300, 0, op_set("w", I(3)));
	CHECK(READ(PK(1), "ck,v,w,s"), "1|null|3|5\n2|'b'|null|5");
	/* Deleting that cell removes the row again: there is no marker. */
	UPDATE(PK(1), CK(1), 301, 0, op_del("w"));
	CHECK(READ(PK(1), "ck,v,w,s"), "2|'b'|null|5");
	/* An INSERT after the delete brings the row back with a marker. */
	MARKER(PK(1), CK(1), 302, 0);
	CHECK(READ(PK(1), "ck,v,w,s"), "1|null|null|5\n2|'b'|null|5");

	/* Marker only: the row tombstone hides the row; a newer marker does not
	 * revive the older cells. */
	MARKER(PK(2), CK(1), 100, 0);
	UPDATE(PK(2), CK(1), 100, 0, op_set("v", T("a")));
	DEL_ROW(PK(2), CK(1), 100);
	CHECK(READ(PK(2), "ck,v"), "");
	MARKER(PK(2), CK(1), 101, 0);
	CHECK(READ(PK(2), "ck,v"), "1|null");

	/* A row tombstone arriving after newer data keeps the newer data. */
	INSERT(PK(3), CK(1), 300, 0, op_set("v", T("new")));
	UPDATE(PK(3), CK(1), 100, 0, op_set("w", I(1)));
	DEL_ROW(PK(3), CK(1), 200);
	CHECK(READ(PK(3), "ck,v,w"), "1|'new'|null");
	/* A row tombstone on a row never written hides older writes. */
	DEL_ROW(PK(3), CK(2), 200);
	INSERT(PK(3), CK(2), 199, 0, op_set("v", T("old")));
	CHECK(READ(PK(3), "ck,v,w"), "1|'new'|null");
}

/* A materialized view's row written whole (SM_MUT_REPLACE_ROW, sm_index.h). */
static void
test_replace_row(void **state)
{
	(void)state;
	open_basic();
	INSERT(PK(1), CK(1), 100, 0, op_set("v", T("a")), op_set("w", I(1)));
	UPDATE(PK(1), NOKEY, 100, 0, op_set("s", I(5)));
	/* what the row held goes, cells of other columns included */
	must_apply(__LINE__, SM_MUT_REPLACE_ROW | SM_MUT_ROW_MARKER, PK(1), CK(1), NULL, 90, 0,
		   OPS(op_set("v", T("b"))));
	CHECK(READ(PK(1), "ck,v,w,s"), "1|'b'|null|5");
	/* a row deleted at 200 comes back with older timestamps: the outcome of
	 * ScyllaDB's shadowable tombstone */
	DEL_ROW(PK(1), CK(1), 200);
	CHECK(READ(PK(1), "ck,v"), "null|null"); /* the static row */
	must_apply(__LINE__, SM_MUT_REPLACE_ROW, PK(1), CK(1), NULL, 120, 0,
		   OPS(op_set("w", I(2))));
	must_apply(__LINE__, 0, PK(1), CK(1), NULL, 110, 0, OPS(op_set("v", T("c"))));
	CHECK(READ(PK(1), "ck,v,w"), "1|'c'|2");
	/* without a marker the row lives by its cells only */
	UPDATE(PK(1), CK(1), 300, 0, op_del("v"), op_del("w"));
	CHECK(READ(PK(1), "ck,v,w"), "null|null|null");
}

static void
test_cell_tombstone(void **state)
{
	(void)state;
	open_basic();
	INSERT(PK(1), CK(1), 100, 0, op_set("v", T("a")), op_set("w", I(1)));
	UPDATE(PK(1), CK(1), 200, 0, op_del("v"));
	CHECK(READ(PK(1), "ck,v,w"), "1|null|1");
	/* Older and equal writes stay hidden, newer ones show. */
	UPDATE(PK(1), CK(1), 150, 0, op_set("v", T("b")));
	CHECK(READ(PK(1), "ck,v,w"), "1|null|1");
	UPDATE(PK(1), CK(1), 200, 0, op_set("v", T("c")));
	CHECK(READ(PK(1), "ck,v,w"), "1|null|1");
	UPDATE(PK(1), CK(1), 201, 0, op_set("v", T("d")));
	CHECK(READ(PK(1), "ck,v,w"), "1|'d'|1");
	/* An older delete arriving late has no effect. */
	UPDATE(PK(1), CK(1), 90, 0, op_del("w"));
	CHECK(READ(PK(1), "ck,v,w"), "1|'d'|1");
	/* A cell tombstone is not a row tombstone: other cells stay. */
	UPDATE(PK(1), CK(1), 300, 0, op_del("w"));
	CHECK(READ(PK(1), "ck,v,w"), "1|'d'|null");
	/* Deleting a static cell. */
	UPDATE(PK(1), NOKEY, 100, 0, op_set("s", I(5)));
	UPDATE(PK(1), NOKEY, 100, 0, op_del("s"));
	CHECK(READ(PK(1), "ck,s"), "1|null");
}

/* pk int, c1 int, c2 int, v int, s int static with rows (0..3) x (0..2) */
static void
open_rt(void)
{
	static const struct sm_column_def cols[] = {
		{ "pk", "int", SM_COL_PARTITION, false },
		{ "c1", "int", SM_COL_CLUSTERING, false },
		{ "c2", "int", SM_COL_CLUSTERING, false },
		{ "v", "int", SM_COL_REGULAR, false },
		{ "s", "int", SM_COL_STATIC, false },
	};

	OPEN(cols);
}

static void
fill_rt(int32_t pk, int64_t ts)
{
	int32_t a, b;

	for (a = 0; a < 4; a++)
		for (b = 0; b < 3; b++)
			INSERT(PK(pk), KEY(I(a), I(b)), ts, 0, op_set("v", I(a * 10 + b)));
}

/* The (c1, c2) pairs of a partition on one line: "00 01 02 10 ..." */
static const char *
rt_rows(int32_t pk)
{
	static char buf[256];
	size_t len = 0;
	char *line, *save = NULL;
	char copy[sizeof(R.s)];

	READ(PK(pk), "c1,c2");
	snprintf(copy, sizeof(copy), "%s", R.s);
	buf[0] = '\0';
	for (line = strtok_r(copy, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		int a, b;

		assert_int_equal(sscanf(line, "%d|%d", &a, &b), 2);
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%d%d", len ? " " : "", a,
					b);
	}
	return buf;
}

static void
test_range_tombstone_bounds(void **state)
{
	int32_t pk;

	(void)state;
	open_rt();
	for (pk = 0; pk < 12; pk++)
		fill_rt(pk, 100);
	CHECK(rt_rows(0), "00 01 02 10 11 12 20 21 22 30 31 32");
	/* c1 = 1 (a prefix, both ends inclusive) */
	DEL_RANGE(PK(1), RG(KEY(I(1)), true, KEY(I(1)), true), 200);
	CHECK(rt_rows(1), "00 01 02 20 21 22 30 31 32");
	/* c1 > 0 AND c1 < 2 */
	DEL_RANGE(PK(2), RG(KEY(I(0)), false, KEY(I(2)), false), 200);
	CHECK(rt_rows(2), "00 01 02 20 21 22 30 31 32");
	/* c1 > 1 AND c1 <= 2 */
	DEL_RANGE(PK(3), RG(KEY(I(1)), false, KEY(I(2)), true), 200);
	CHECK(rt_rows(3), "00 01 02 10 11 12 30 31 32");
	/* c1 >= 1 AND c1 <= 2 */
	DEL_RANGE(PK(4), RG(KEY(I(1)), true, KEY(I(2)), true), 200);
	CHECK(rt_rows(4), "00 01 02 30 31 32");
	/* c1 >= 2 (open end) */
	DEL_RANGE(PK(5), RG(KEY(I(2)), true, NOKEY, false), 200);
	CHECK(rt_rows(5), "00 01 02 10 11 12");
	/* c1 < 1 (open start) */
	DEL_RANGE(PK(6), RG(NOKEY, false, KEY(I(1)), false), 200);
	CHECK(rt_rows(6), "10 11 12 20 21 22 30 31 32");
	/* c1 = 1 AND c2 > 0 */
	DEL_RANGE(PK(7), RG(KEY(I(1), I(0)), false, KEY(I(1)), true), 200);
	CHECK(rt_rows(7), "00 01 02 10 20 21 22 30 31 32");
	/* c1 = 1 AND c2 >= 1 AND c2 < 2 */
	DEL_RANGE(PK(8), RG(KEY(I(1), I(1)), true, KEY(I(1), I(2)), false), 200);
	CHECK(rt_rows(8), "00 01 02 10 12 20 21 22 30 31 32");
	/* (c1, c2) > (0, 1) AND (c1, c2) <= (2, 0): bounds of different parts */
	DEL_RANGE(PK(9), RG(KEY(I(0), I(1)), false, KEY(I(2), I(0)), true), 200);
	CHECK(rt_rows(9), "00 01 21 22 30 31 32");
	/* Both ends open: every row */
	DEL_RANGE(PK(10), RG(NOKEY, false, NOKEY, false), 200);
	CHECK(rt_rows(10), "");
	/* Two overlapping ranges */
	DEL_RANGE(PK(11), RG(KEY(I(0), I(2)), true, KEY(I(1), I(1)), true), 200);
	DEL_RANGE(PK(11), RG(KEY(I(1)), true, KEY(I(2), I(0)), false), 210);
	CHECK(rt_rows(11), "00 01 20 21 22 30 31 32");
}

static void
test_range_tombstone_vs_writes(void **state)
{
	(void)state;
	open_rt();
	fill_rt(1, 100);
	UPDATE(PK(1), NOKEY, 100, 0, op_set("s", I(5)));
	DEL_RANGE(PK(1), RG(KEY(I(1)), true, KEY(I(2)), true), 200);
	/* The static column is not in any clustering range. */
	READ(PK(1), "c1,s");
	CHECK(R.s, "0|5\n0|5\n0|5\n3|5\n3|5\n3|5");
	/* At the tombstone's timestamp or older: shadowed, even later. */
	INSERT(PK(1), KEY(I(1), I(7)), 200, 0, op_set("v", I(1)));
	INSERT(PK(1), KEY(I(2), I(7)), 150, 0, op_set("v", I(2)));
	UPDATE(PK(1), KEY(I(1), I(0)), 199, 0, op_set("v", I(3)));
	CHECK(rt_rows(1), "00 01 02 30 31 32");
	/* Newer: visible, with only what was written. */
	UPDATE(PK(1), KEY(I(1), I(1)), 201, 0, op_set("v", I(4)));
	INSERT(PK(1), KEY(I(2), I(9)), 201, 0, op_set("s", I(6)));
	CHECK(READ(PK(1), "c1,c2,v,s"), "0|0|0|6\n0|1|1|6\n0|2|2|6\n"
					"1|1|4|6\n2|9|null|6\n3|0|30|6\n3|1|31|6\n3|2|32|6");
	/* A newer range tombstone covering an older one and the rows above. */
	DEL_RANGE(PK(1), RG(KEY(I(1), I(1)), true, KEY(I(2)), true), 300);
	CHECK(rt_rows(1), "00 01 02 30 31 32");
	/* A range tombstone arriving after newer rows leaves them. */
	fill_rt(2, 300);
	DEL_RANGE(PK(2), RG(NOKEY, false, NOKEY, false), 200);
	CHECK(rt_rows(2), "00 01 02 10 11 12 20 21 22 30 31 32");
	/* A range tombstone then a partition tombstone under it, then data
	 * between them: the range still applies. */
	DEL_RANGE(PK(3), RG(KEY(I(1)), true, KEY(I(1)), true), 300);
	DEL_PART(PK(3), 200);
	fill_rt(3, 250);
	CHECK(rt_rows(3), "00 01 02 20 21 22 30 31 32");
	/* A partition tombstone newer than a range tombstone supersedes it. */
	DEL_PART(PK(3), 400);
	fill_rt(3, 401);
	CHECK(rt_rows(3), "00 01 02 10 11 12 20 21 22 30 31 32");
}

static void
test_range_tombstone_desc(void **state)
{
	static const struct sm_column_def cols[] = {
		{ "pk", "int", SM_COL_PARTITION, false },
		{ "c1", "int", SM_COL_CLUSTERING, false },
		{ "c2", "text", SM_COL_CLUSTERING, true },
		{ "v", "int", SM_COL_REGULAR, false },
	};
	static const char *const c2s[] = { "a", "b", "c", "d" };
	int32_t pk, a;
	unsigned b;

	(void)state;
	OPEN(cols);
	for (pk = 0; pk < 3; pk++)
		for (a = 0; a < 2; a++)
			for (b = 0; b < 4; b++)
				INSERT(PK(pk), KEY(I(a), T(c2s[b])), 100, 0, op_set("v", I(1)));
	CHECK(READ(PK(0), "c1,c2"), "0|'d'\n0|'c'\n0|'b'\n0|'a'\n1|'d'\n1|'c'\n1|'b'\n1|'a'");
	/* c1 = 0 AND c2 > 'b': in clustering order that is from the start of
	 * c1 = 0 up to (0, 'b') exclusive. */
	DEL_RANGE(PK(1), RG(KEY(I(0)), true, KEY(I(0), T("b")), false), 200);
	CHECK(READ(PK(1), "c1,c2"), "0|'b'\n0|'a'\n1|'d'\n1|'c'\n1|'b'\n1|'a'");
	/* c1 = 1 AND c2 <= 'c' AND c2 > 'a': from (1, 'c') inclusive to (1, 'a')
	 * exclusive. */
	DEL_RANGE(PK(2), RG(KEY(I(1), T("c")), true, KEY(I(1), T("a")), false), 200);
	CHECK(READ(PK(2), "c1,c2"), "0|'d'\n0|'c'\n0|'b'\n0|'a'\n1|'d'\n1|'a'");
}

/* ---- INSERT and UPDATE ---- */

static void
test_insert_vs_update(void **state)
{
	(void)state;
	open_basic();
	/* INSERT with every cell null: the row exists. */
	INSERT(PK(1), CK(1), 100, 0, op_null("v"), op_null("w"));
	CHECK(READ(PK(1), "pk,ck,v,w"), "1|1|null|null");
	/* UPDATE setting the only cell to null: no row. */
	UPDATE(PK(2), CK(1), 100, 0, op_null("v"));
	CHECK(READ(PK(2), "pk,ck,v,w"), "");
	/* UPDATE then the same cell set to null: the row goes away. */
	UPDATE(PK(3), CK(1), 100, 0, op_set("v", T("a")));
	CHECK(READ(PK(3), "pk,ck,v,w"), "3|1|'a'|null");
	UPDATE(PK(3), CK(1), 101, 0, op_null("v"));
	CHECK(READ(PK(3), "pk,ck,v,w"), "");
	/* INSERT then set every cell to null: the marker keeps the row. */
	INSERT(PK(4), CK(1), 100, 0, op_set("v", T("a")), op_set("w", I(1)));
	UPDATE(PK(4), CK(1), 101, 0, op_null("v"), op_del("w"));
	CHECK(READ(PK(4), "pk,ck,v,w"), "4|1|null|null");
	/* An UPDATE of two cells, then one deleted: the other keeps the row. */
	UPDATE(PK(5), CK(1), 100, 0, op_set("v", T("a")), op_set("w", I(1)));
	UPDATE(PK(5), CK(1), 101, 0, op_del("v"));
	CHECK(READ(PK(5), "pk,ck,v,w"), "5|1|null|1");
	/* An UPDATE of a static column alone makes no clustering row. */
	UPDATE(PK(6), NOKEY, 100, 0, op_set("s", I(1)));
	INSERT(PK(6), CK(1), 100, 0, op_set("v", T("x")));
	CHECK(READ(PK(6), "pk,ck,v,s"), "6|1|'x'|1");
	/* The row marker carries the INSERT's timestamp. */
	MARKER(PK(7), CK(1), 100, 0);
	UPDATE(PK(7), CK(1), 150, 0, op_set("v", T("a")));
	UPDATE(PK(7), CK(1), 160, 0, op_del("v"));
	DEL_ROW(PK(7), CK(2), 99);
	CHECK(READ(PK(7), "ck,v"), "1|null");
	/* The empty value is a value, not null. */
	UPDATE(PK(8), CK(1), 100, 0, op_set("v", T("")), op_set("w", abytes(NULL, 0)));
	CHECK(READ(PK(8), "ck,v,w"), "1|''|blobasint(0x)");
}

static void
test_table_without_clustering(void **state)
{
	static const struct sm_column_def cols[] = {
		{ "pk", "text", SM_COL_PARTITION, false },
		{ "a", "int", SM_COL_REGULAR, false },
		{ "b", "text", SM_COL_REGULAR, false },
	};

	(void)state;
	OPEN(cols);
	INSERT(KEY(T("k1")), NOKEY, 100, 0, op_set("a", I(1)));
	UPDATE(KEY(T("k2")), NOKEY, 100, 0, op_set("b", T("x")));
	MARKER(KEY(T("k3")), NOKEY, 100, 5);
	CHECK(READ(KEY(T("k1")), "pk,a,b"), "'k1'|1|null");
	CHECK(READ(KEY(T("k2")), "pk,a,b"), "'k2'|null|'x'");
	CHECK(READ(KEY(T("k3")), "pk,a,b"), "'k3'|null|null");
	assert_int_equal(R.ckn[0], 0);
	UPDATE(KEY(T("k1")), NOKEY, 101, 0, op_null("a"));
	UPDATE(KEY(T("k2")), NOKEY, 101, 0, op_null("b"));
	CHECK(READ(KEY(T("k1")), "pk,a,b"), "'k1'|null|null");
	CHECK(READ(KEY(T("k2")), "pk,a,b"), "");
	DEL_PART(KEY(T("k1")), 102);
	CHECK(READ(KEY(T("k1")), "pk,a,b"), "");
	F.now = NOW + 5;
	CHECK(READ(KEY(T("k3")), "pk,a,b"), "");
	/* A clustering key on a table without clustering columns is refused. */
	FAILS(-EINVAL, "Clustering key has 1 components, table ks.t needs 0", 0, KEY(T("k1")),
	      CK(1), 200, 0, op_set("a", I(1)));
	/* The empty partition key is refused for text too. */
	FAILS(-EINVAL, "Key may not be empty", 0, KEY(T("")), NOKEY, 200, 0, op_set("a", I(1)));
}

/* ---- static columns ---- */

static void
test_static_columns(void **state)
{
	(void)state;
	open_basic();
	INSERT(PK(1), CK(1), 100, 0, op_set("v", T("a")), op_set("s", I(1)));
	INSERT(PK(1), CK(2), 100, 0, op_set("v", T("b")));
	/* One value shared by every row of the partition. */
	CHECK(READ(PK(1), "ck,v,s"), "1|'a'|1\n2|'b'|1");
	/* Written through any row, or none. */
	UPDATE(PK(1), CK(2), 200, 0, op_set("s", I(2)));
	CHECK(READ(PK(1), "ck,v,s"), "1|'a'|2\n2|'b'|2");
	UPDATE(PK(1), NOKEY, 300, 0, op_set("s", I(3)));
	CHECK(READ(PK(1), "ck,v,s"), "1|'a'|3\n2|'b'|3");
	assert_int_equal(R.wt[0][2], 300);
	/* LWW applies to statics like any cell. */
	UPDATE(PK(1), NOKEY, 250, 0, op_set("s", I(4)));
	CHECK(READ(PK(1), "ck,s"), "1|3\n2|3");
	/* Row and range deletes leave the static; it survives with no row. */
	DEL_ROW(PK(1), CK(1), 400);
	CHECK(READ(PK(1), "ck,v,s"), "2|'b'|3");
	DEL_RANGE(PK(1), RG(NOKEY, false, NOKEY, false), 400);
	CHECK(READ(PK(1), "pk,ck,v,s"), "1|null|null|3");
	assert_int_equal(R.ckn[0], 0);
	/* A TTL on the static. */
	UPDATE(PK(1), NOKEY, 500, 10, op_set("s", I(9)));
	CHECK(READ(PK(1), "pk,ck,s"), "1|null|9");
	assert_int_equal(R.ttl[0][2], 10);
	F.now = NOW + 10;
	CHECK(READ(PK(1), "pk,ck,s"), "");
	/* A partition delete takes the static too, newer statics survive it. */
	F.now = NOW;
	UPDATE(PK(2), NOKEY, 100, 0, op_set("s", I(1)));
	INSERT(PK(2), CK(1), 100, 0, op_set("v", T("a")));
	DEL_PART(PK(2), 200);
	CHECK(READ(PK(2), "pk,ck,v,s"), "");
	UPDATE(PK(2), NOKEY, 300, 0, op_set("s", I(2)));
	CHECK(READ(PK(2), "pk,ck,v,s"), "2|null|null|2");
}

static void
test_static_only_partition(void **state)
{
	struct sm_ck_range rg;

	(void)state;
	open_basic();
	UPDATE(PK(1), NOKEY, 100, 0, op_set("s", I(7)));
	/* No clustering restriction: one row, clustering columns null. */
	CHECK(READ(PK(1), "pk,ck,v,w,s"), "1|null|null|null|7");
	assert_int_equal(R.ckn[0], 0);
	assert_false(R.present[0][1]);
	assert_int_equal(R.wt[0][4], 100);
	/* Static columns alone. */
	CHECK(READ(PK(1), "s"), "7");
	/* Reversed and limited reads see the same row. */
	CHECK(read_ex(PK(1), "pk,ck,s", NULL, 0, true, 1, 0), "1|null|7");
	CHECK(read_ex(PK(1), "pk,ck,s", NULL, 0, false, 0, 1), "1|null|7");
	/* A clustering slice selects rows only: nothing. */
	rg = RG(CK(0), true, NOKEY, false);
	CHECK(read_ex(PK(1), "pk,ck,s", &rg, 1, false, 0, 0), "");
	rg = RG(NOKEY, false, NOKEY, false);
	CHECK(read_ex(PK(1), "pk,ck,s", &rg, 1, false, 0, 0), "");
	/* Once a row exists the static row is not returned on its own. */
	INSERT(PK(1), CK(5), 100, 0, op_set("v", T("a")));
	CHECK(READ(PK(1), "pk,ck,v,s"), "1|5|'a'|7");
	/* ... and comes back when the rows are deleted or expire. */
	DEL_ROW(PK(1), CK(5), 200);
	CHECK(READ(PK(1), "pk,ck,v,s"), "1|null|null|7");
	INSERT(PK(1), CK(6), 300, 10, op_set("v", T("b")));
	CHECK(READ(PK(1), "pk,ck,v,s"), "1|6|'b'|7");
	F.now = NOW + 10;
	CHECK(READ(PK(1), "pk,ck,v,s"), "1|null|null|7");
	/* Paging a static-only partition: one row, no further page. */
	{
		unsigned pages;

		CHECK(read_paged(PK(1), "pk,ck,s", NULL, 0, false, 1, 0, &pages), "1|null|7");
		assert_int_equal(pages, 1);
	}
}

/* ---- counters ---- */

static void
open_counters(void)
{
	static const struct sm_column_def cols[] = {
		{ "pk", "int", SM_COL_PARTITION, false },
		{ "ck", "int", SM_COL_CLUSTERING, false },
		{ "c", "counter", SM_COL_REGULAR, false },
		{ "d", "counter", SM_COL_REGULAR, false },
	};

	OPEN(cols);
	assert_true(F.t->counter);
}

static void
test_counters(void **state)
{
	(void)state;
	open_counters();
	/* A counter on a missing row starts at 0. */
	UPDATE(PK(1), CK(1), 100, 0, op_add("c", 5));
	CHECK(READ(PK(1), "ck,c,d"), "1|5|null");
	UPDATE(PK(1), CK(1), 101, 0, op_add("c", 3), op_add("d", -2));
	CHECK(READ(PK(1), "ck,c,d"), "1|8|-2");
	/* Negative deltas, through zero. */
	UPDATE(PK(1), CK(1), 102, 0, op_add("c", -10));
	CHECK(READ(PK(1), "ck,c,d"), "1|-2|-2");
	/* Increments commute: arriving with older timestamps they still add. */
	UPDATE(PK(1), CK(1), 50, 0, op_add("c", 2));
	CHECK(READ(PK(1), "ck,c,d"), "1|0|-2");
	/* A zero delta makes the counter exist, at 0. */
	UPDATE(PK(1), CK(2), 100, 0, op_add("d", 0));
	CHECK(READ(PK(1), "ck,c,d"), "1|0|-2\n2|null|0");
	/* Wrap-around is two's complement, as in Cassandra. */
	UPDATE(PK(2), CK(1), 100, 0, op_add("c", INT64_MAX));
	UPDATE(PK(2), CK(1), 101, 0, op_add("c", 1));
	CHECK(READ(PK(2), "c"), "-9223372036854775808");

	/* A delete hides every increment before it. */
	UPDATE(PK(3), CK(1), 100, 0, op_add("c", 4), op_add("d", 1));
	UPDATE(PK(3), CK(1), 200, 0, op_del("c"));
	CHECK(READ(PK(3), "ck,c,d"), "1|null|1");
	DEL_ROW(PK(3), CK(1), 300);
	CHECK(READ(PK(3), "ck,c,d"), "");
	/* An increment after the delete counts from 0. */
	UPDATE(PK(3), CK(1), 400, 0, op_add("c", 6));
	CHECK(READ(PK(3), "ck,c,d"), "1|6|null");
	/* Partition deletes too. */
	UPDATE(PK(4), CK(1), 100, 0, op_add("c", 4));
	DEL_PART(PK(4), 200);
	CHECK(READ(PK(4), "ck,c"), "");
	UPDATE(PK(4), CK(1), 300, 0, op_add("c", 1));
	CHECK(READ(PK(4), "ck,c"), "1|1");
}

static void
test_counter_delete_hides_late_increment(void **state)
{
	(void)state;
	open_counters();
	/* An increment older than a delete, arriving after it, stays hidden:
	 * a cell delete... */
	UPDATE(PK(1), CK(1), 100, 0, op_add("c", 4));
	UPDATE(PK(1), CK(1), 200, 0, op_del("c"));
	UPDATE(PK(1), CK(1), 150, 0, op_add("c", 7));
	CHECK(READ(PK(1), "ck,c"), "");
	UPDATE(PK(1), CK(1), 200, 0, op_add("c", 7));
	CHECK(READ(PK(1), "ck,c"), "");
	/* ... a row delete... */
	UPDATE(PK(2), CK(1), 100, 0, op_add("c", 4));
	DEL_ROW(PK(2), CK(1), 200);
	UPDATE(PK(2), CK(1), 150, 0, op_add("c", 100));
	UPDATE(PK(2), CK(1), 200, 0, op_add("d", 1));
	CHECK(READ(PK(2), "ck,c,d"), "");
	/* ... a partition delete. */
	DEL_PART(PK(3), 200);
	UPDATE(PK(3), CK(1), 199, 0, op_add("c", 5));
	CHECK(READ(PK(3), "ck,c"), "");
	/* Once a newer increment made the counter live again, a late older
	 * increment adds to it: counter cells merge into one whose timestamp
	 * is the newest (Cassandra's counter reconcile). */
	UPDATE(PK(2), CK(1), 300, 0, op_add("c", 1));
	UPDATE(PK(2), CK(1), 150, 0, op_add("c", 100));
	CHECK(READ(PK(2), "ck,c,d"), "1|101|null");
	UPDATE(PK(3), CK(1), 201, 0, op_add("c", 5));
	UPDATE(PK(3), CK(1), 200, 0, op_add("c", 5));
	CHECK(READ(PK(3), "ck,c"), "1|10");
}

/* ---- collections ---- */

/* pk int, ck int, l list<int>, m map<text, int>, st set<text>, fl frozen<list<int>>,
 * ls list<int> static */
static void
open_colls(void)
{
	static const struct sm_column_def cols[] = {
		{ "pk", "int", SM_COL_PARTITION, false },
		{ "ck", "int", SM_COL_CLUSTERING, false },
		{ "l", "list<int>", SM_COL_REGULAR, false },
		{ "m", "map<text, int>", SM_COL_REGULAR, false },
		{ "st", "set<text>", SM_COL_REGULAR, false },
		{ "fl", "frozen<list<int>>", SM_COL_REGULAR, false },
		{ "v", "int", SM_COL_REGULAR, false },
		{ "ls", "list<int>", SM_COL_STATIC, false },
	};

	OPEN(cols);
}

static void
test_set_ops(void **state)
{
	(void)state;
	open_colls();
	/* Elements come back sorted and unique. */
	UPDATE(PK(1), CK(1), 100, 0, op_append("st", SETOF(T("b"), T("a"), T("b"))));
	CHECK(READ(PK(1), "st"), "{'a', 'b'}");
	UPDATE(PK(1), CK(1), 101, 0, op_append("st", SETOF(T("c"), T("a"))));
	CHECK(READ(PK(1), "st"), "{'a', 'b', 'c'}");
	UPDATE(PK(1), CK(1), 102, 0, op_remove("st", SETOF(T("a"), T("zz"))));
	CHECK(READ(PK(1), "st"), "{'b', 'c'}");
	/* A remove older than the add it races with loses. */
	UPDATE(PK(1), CK(1), 90, 0, op_remove("st", SETOF(T("b"))));
	CHECK(READ(PK(1), "st"), "{'b', 'c'}");
	/* An add older than a remove stays removed. */
	UPDATE(PK(1), CK(1), 95, 0, op_append("st", SETOF(T("a"))));
	CHECK(READ(PK(1), "st"), "{'b', 'c'}");
	/* Removing every element: the column is null and, with no marker, the
	 * row goes away. */
	UPDATE(PK(1), CK(1), 103, 0, op_remove("st", SETOF(T("b"), T("c"))));
	CHECK(READ(PK(1), "ck,st"), "");
	/* Adding an empty set writes nothing. */
	UPDATE(PK(2), CK(1), 100, 0, op_append("st", SETOF()));
	CHECK(READ(PK(2), "ck,st"), "");
	/* Setting an empty set is null too, but an INSERT keeps the row. */
	INSERT(PK(2), CK(1), 101, 0, op_set("st", SETOF()));
	CHECK(READ(PK(2), "ck,st"), "1|null");
	/* An element re-added after its removal, newer: back. */
	UPDATE(PK(2), CK(1), 102, 0, op_append("st", SETOF(T("x"))));
	UPDATE(PK(2), CK(1), 103, 0, op_remove("st", SETOF(T("x"))));
	UPDATE(PK(2), CK(1), 104, 0, op_append("st", SETOF(T("x"))));
	CHECK(READ(PK(2), "ck,st"), "1|{'x'}");
}

static void
test_map_ops(void **state)
{
	(void)state;
	open_colls();
	/* m = m + {...}: puts, sorted by key. */
	UPDATE(PK(1), CK(1), 100, 0, op_append("m", MAP(T("b"), I(2), T("a"), I(1))));
	CHECK(READ(PK(1), "m"), "{'a': 1, 'b': 2}");
	/* m[k] = v: new key, and overwrite of an existing one. */
	UPDATE(PK(1), CK(1), 101, 0, op_put("m", T("c"), I(3)));
	UPDATE(PK(1), CK(1), 101, 0, op_put("m", T("a"), I(10)));
	CHECK(READ(PK(1), "m"), "{'a': 10, 'b': 2, 'c': 3}");
	/* An older put of an existing key loses; a tie goes to the greater value. */
	UPDATE(PK(1), CK(1), 50, 0, op_put("m", T("b"), I(99)));
	UPDATE(PK(1), CK(1), 100, 0, op_put("m", T("b"), I(1)));
	CHECK(READ(PK(1), "m"), "{'a': 10, 'b': 2, 'c': 3}");
	UPDATE(PK(1), CK(1), 100, 0, op_put("m", T("b"), I(3)));
	CHECK(READ(PK(1), "m"), "{'a': 10, 'b': 3, 'c': 3}");
	/* DELETE m[k], and m[k] = null. */
	UPDATE(PK(1), CK(1), 102, 0, op_del_key("m", T("b")));
	CHECK(READ(PK(1), "m"), "{'a': 10, 'c': 3}");
	UPDATE(PK(1), CK(1), 102, 0,
	       (struct sm_cell_op){
		       .col = cid("m"), .kind = SM_CELL_SET_ELEM, .key = T("c"), .null = true });
	CHECK(READ(PK(1), "m"), "{'a': 10}");
	/* Deleting a key that is not there is a no-op. */
	UPDATE(PK(1), CK(1), 103, 0, op_del_key("m", T("nope")));
	CHECK(READ(PK(1), "m"), "{'a': 10}");
	/* m = m - {keys} */
	UPDATE(PK(1), CK(1), 104, 0, op_append("m", MAP(T("x"), I(1), T("y"), I(2))));
	UPDATE(PK(1), CK(1), 105, 0, op_remove("m", SETOF(T("a"), T("x"))));
	CHECK(READ(PK(1), "m"), "{'y': 2}");
	/* The whole map replaced. */
	UPDATE(PK(1), CK(1), 106, 0, op_set("m", MAP(T("k"), I(0))));
	CHECK(READ(PK(1), "m"), "{'k': 0}");
	/* Delete the column: null. */
	UPDATE(PK(1), CK(1), 107, 0, op_del("m"), op_set("v", I(1)));
	CHECK(READ(PK(1), "m,v"), "null|1");
	/* Puts after the delete show; the ones before stay deleted. */
	UPDATE(PK(1), CK(1), 106, 0, op_put("m", T("old"), I(1)));
	UPDATE(PK(1), CK(1), 108, 0, op_put("m", T("new"), I(2)));
	CHECK(READ(PK(1), "m,v"), "{'new': 2}|1");
}

static void
test_list_append_prepend(void **state)
{
	(void)state;
	open_colls();
	UPDATE(PK(1), CK(1), 100, 0, op_append("l", LIST(I(1), I(2))));
	UPDATE(PK(1), CK(1), 101, 0, op_append("l", LIST(I(3))));
	CHECK(READ(PK(1), "l"), "[1, 2, 3]");
	/* Prepend puts the given elements first, in their order. */
	UPDATE(PK(1), CK(1), 102, 0, op_prepend("l", LIST(I(0))));
	UPDATE(PK(1), CK(1), 103, 0, op_prepend("l", LIST(I(-2), I(-1))));
	CHECK(READ(PK(1), "l"), "[-2, -1, 0, 1, 2, 3]");
	/* Duplicates are kept: a list is not a set. */
	UPDATE(PK(1), CK(1), 104, 0, op_append("l", LIST(I(3), I(3))));
	CHECK(READ(PK(1), "l"), "[-2, -1, 0, 1, 2, 3, 3, 3]");
	/* Prepend to an empty list. */
	UPDATE(PK(2), CK(1), 100, 0, op_prepend("l", LIST(I(5), I(6))));
	UPDATE(PK(2), CK(1), 101, 0, op_append("l", LIST(I(7))));
	UPDATE(PK(2), CK(1), 102, 0, op_prepend("l", LIST(I(4))));
	CHECK(READ(PK(2), "l"), "[4, 5, 6, 7]");
	/* A static list, with index operations. */
	FAILS(-EINVAL, "Attempted to set an element on a list which is null", 0, PK(3), NOKEY, 100,
	      0, op_set_idx("ls", 0, I(1)));
	UPDATE(PK(3), NOKEY, 100, 0, op_append("ls", LIST(I(1))));
	UPDATE(PK(3), NOKEY, 101, 0, op_append("ls", LIST(I(2))));
	UPDATE(PK(3), NOKEY, 102, 0, op_prepend("ls", LIST(I(0))));
	CHECK(READ(PK(3), "pk,ck,ls"), "3|null|[0, 1, 2]");
	UPDATE(PK(3), NOKEY, 103, 0, op_set_idx("ls", 2, I(20)));
	UPDATE(PK(3), NOKEY, 103, 0, op_del_idx("ls", 0));
	FAILS(-EINVAL, "List index 2 out of bound, list has size 2", 0, PK(3), NOKEY, 104, 0,
	      op_del_idx("ls", 2));
	UPDATE(PK(3), CK(1), 104, 0, op_append("l", LIST(I(7))), op_append("ls", LIST(I(30))));
	CHECK(READ(PK(3), "pk,ck,ls,l"), "3|1|[1, 20, 30]|[7]");
	/* Prepended elements stay before appended ones whatever their
	 * timestamps. */
	UPDATE(PK(4), CK(1), 500, 0, op_prepend("l", LIST(I(1))));
	UPDATE(PK(4), CK(1), 200, 0, op_append("l", LIST(I(2))));
	UPDATE(PK(4), CK(1), 100, 0, op_prepend("l", LIST(I(0))));
	UPDATE(PK(4), CK(1), 300, 0, op_append("l", LIST(I(3))));
	CHECK(READ(PK(4), "l"), "[0, 1, 2, 3]");
}

static void
test_list_appends_keep_statement_order(void **state)
{
	(void)state;
	open_colls();
	/* Two appends with the same timestamp: the second comes after the
	 * first, each one's elements kept together and in order. */
	UPDATE(PK(1), CK(1), 100, 0, op_append("l", LIST(I(1), I(2))));
	UPDATE(PK(1), CK(1), 100, 0, op_append("l", LIST(I(3), I(4))));
	CHECK(READ(PK(1), "l"), "[1, 2, 3, 4]");
	/* A long append followed by one a microsecond later. */
	UPDATE(PK(2), CK(1), 100, 0,
	       op_append("l", LIST(I(1), I(2), I(3), I(4), I(5), I(6), I(7), I(8), I(9), I(10),
				   I(11), I(12))));
	UPDATE(PK(2), CK(1), 101, 0, op_append("l", LIST(I(13), I(14))));
	CHECK(READ(PK(2), "l"), "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]");
	/* Many single appends at one timestamp. */
	{
		char want[4096];
		size_t len = 0;
		int32_t i;

		for (i = 0; i < 300; i++) {
			UPDATE(PK(3), CK(1), 100, 0, op_append("l", LIST(I(i))));
			len += (size_t)snprintf(want + len, sizeof(want) - len, "%s%d",
						i ? ", " : "[", i);
		}
		snprintf(want + len, sizeof(want) - len, "]");
		CHECK(READ(PK(3), "l"), want);
	}
}

/* Collections larger than the read scratch buffer, several in one row. */
static void
test_large_collections(void **state)
{
	static char want_l[16384], want_st[16384];
	size_t ll = 0, ls = 0;
	int32_t i;

	(void)state;
	open_colls();
	for (i = 0; i < 700; i++) {
		char name[16];

		snprintf(name, sizeof(name), "e%04d", i);
		UPDATE(PK(1), CK(1), 100 + i, 0, op_append("l", LIST(I(i))),
		       op_append("st", SETOF(T(name))), op_put("m", T(name), I(i)));
		ll += (size_t)snprintf(want_l + ll, sizeof(want_l) - ll, "%s%d", i ? ", " : "[", i);
		ls += (size_t)snprintf(want_st + ls, sizeof(want_st) - ls, "%s'%s'", i ? ", " : "{",
				       name);
	}
	snprintf(want_l + ll, sizeof(want_l) - ll, "]");
	snprintf(want_st + ls, sizeof(want_st) - ls, "}");
	READ(PK(1), "l,st,m,ck");
	{
		char *l = strtok(R.s, "|"), *st = strtok(NULL, "|"), *m = strtok(NULL, "|");

		CHECK(l, want_l);
		CHECK(st, want_st);
		assert_non_null(m);
		assert_int_equal(strncmp(m, "{'e0000': 0, 'e0001': 1, ", 25), 0);
		assert_non_null(strstr(m, "'e0699': 699}"));
	}
	assert_int_equal(R.wt[0][0], 799);
}

static void
test_list_remove_by_value(void **state)
{
	(void)state;
	open_colls();
	UPDATE(PK(1), CK(1), 100, 0, op_set("l", LIST(I(1), I(2), I(1), I(3), I(1))));
	/* l = l - [1]: every occurrence. */
	UPDATE(PK(1), CK(1), 101, 0, op_remove("l", LIST(I(1))));
	CHECK(READ(PK(1), "l"), "[2, 3]");
	/* Values absent from the list: no-op. */
	UPDATE(PK(1), CK(1), 102, 0, op_remove("l", LIST(I(9))));
	CHECK(READ(PK(1), "l"), "[2, 3]");
	/* Removing everything: null, the row goes (no marker). */
	UPDATE(PK(1), CK(1), 103, 0, op_remove("l", LIST(I(2), I(3))));
	CHECK(READ(PK(1), "ck,l"), "");
	/* Removing from a null list: no-op. */
	UPDATE(PK(2), CK(1), 100, 0, op_remove("l", LIST(I(1))));
	CHECK(READ(PK(2), "ck,l"), "");
	/* Elements appended after the removal are not removed. */
	UPDATE(PK(3), CK(1), 100, 0, op_set("l", LIST(I(1), I(2), I(1), I(2), I(1), I(2))));
	UPDATE(PK(3), CK(1), 101, 0, op_remove("l", LIST(I(1), I(2))));
	CHECK(READ(PK(3), "ck,l"), "");
	UPDATE(PK(3), CK(1), 102, 0, op_append("l", LIST(I(1))));
	CHECK(READ(PK(3), "ck,l"), "1|[1]");
}

static void
test_list_index_ops(void **state)
{
	(void)state;
	open_colls();
	UPDATE(PK(1), CK(1), 100, 0, op_set("l", LIST(I(10), I(20), I(30))));
	/* l[1] = 21 */
	UPDATE(PK(1), CK(1), 101, 0, op_set_idx("l", 1, I(21)));
	CHECK(READ(PK(1), "l"), "[10, 21, 30]");
	assert_int_equal(R.wt[0][0], 101);
	/* An older l[i] = v loses to the element's newer value. */
	UPDATE(PK(1), CK(1), 99, 0, op_set_idx("l", 2, I(99)));
	CHECK(READ(PK(1), "l"), "[10, 21, 30]");
	/* DELETE l[0]: the others shift down. */
	UPDATE(PK(1), CK(1), 102, 0, op_del_idx("l", 0));
	CHECK(READ(PK(1), "l"), "[21, 30]");
	/* Indexes count live elements only. */
	UPDATE(PK(1), CK(1), 103, 0, op_set_idx("l", 1, I(31)));
	CHECK(READ(PK(1), "l"), "[21, 31]");
	/* l[i] = null deletes the element. */
	UPDATE(PK(1), CK(1), 104, 0,
	       (struct sm_cell_op){
		       .col = cid("l"), .kind = SM_CELL_SET_ELEM, .key = I(0), .null = true });
	CHECK(READ(PK(1), "l"), "[31]");
	UPDATE(PK(1), CK(1), 105, 0, op_del_idx("l", 0));
	CHECK(READ(PK(1), "ck,l"), "");
	/* Elements expired by TTL do not count either. */
	UPDATE(PK(2), CK(1), 100, 5, op_append("l", LIST(I(1))));
	UPDATE(PK(2), CK(1), 100, 0, op_append("l", LIST(I(2), I(3))));
	F.now = NOW + 5;
	UPDATE(PK(2), CK(1), 101, 0, op_set_idx("l", 0, I(20)));
	CHECK(READ(PK(2), "l"), "[20, 3]");
}

static void
test_list_index_errors(void **state)
{
	(void)state;
	open_colls();
	/* On a null list. */
	FAILS(-EINVAL, "Attempted to set an element on a list which is null", 0, PK(1), CK(1), 100,
	      0, op_set_idx("l", 0, I(1)));
	FAILS(-EINVAL, "Attempted to delete an element from a list which is null", 0, PK(1), CK(1),
	      100, 0, op_del_idx("l", 0));
	UPDATE(PK(1), CK(1), 100, 0, op_set("l", LIST(I(10), I(20), I(30))));
	FAILS(-EINVAL, "List index 3 out of bound, list has size 3", 0, PK(1), CK(1), 101, 0,
	      op_set_idx("l", 3, I(1)));
	FAILS(-EINVAL, "List index 5 out of bound, list has size 3", 0, PK(1), CK(1), 101, 0,
	      op_del_idx("l", 5));
	FAILS(-EINVAL, "List index -1 out of bound, list has size 3", 0, PK(1), CK(1), 101, 0,
	      op_set_idx("l", -1, I(1)));
	/* A deleted list is null again. */
	UPDATE(PK(1), CK(1), 102, 0, op_del("l"), op_set("v", I(0)));
	FAILS(-EINVAL, "Attempted to set an element on a list which is null", 0, PK(1), CK(1), 103,
	      0, op_set_idx("l", 0, I(1)));
	/* A failed statement applies none of its operations. */
	UPDATE(PK(2), CK(1), 100, 0, op_set("l", LIST(I(1))));
	FAILS(-EINVAL, "List index 1 out of bound, list has size 1", 0, PK(2), CK(1), 101, 0,
	      op_set("v", I(5)), op_append("st", SETOF(T("x"))), op_set_idx("l", 1, I(2)));
	CHECK(READ(PK(2), "ck,l,st,v"), "1|[1]|null|null");
	FAILS(-EINVAL, "Attempted to set an element on a list which is null", SM_MUT_ROW_MARKER,
	      PK(3), CK(1), 101, 0, op_set("v", I(5)), op_set_idx("l", 0, I(2)));
	CHECK(READ(PK(3), "ck,l,v"), "");
}

static void
test_collection_overwrite(void **state)
{
	(void)state;
	open_colls();
	UPDATE(PK(1), CK(1), 100, 0, op_set("l", LIST(I(1), I(2))),
	       op_set("m", MAP(T("a"), I(1), T("b"), I(2))), op_set("st", SETOF(T("a"))),
	       op_set("fl", LIST(I(1), I(2))));
	UPDATE(PK(1), CK(1), 101, 0, op_append("l", LIST(I(3))), op_put("m", T("c"), I(3)),
	       op_append("st", SETOF(T("b"))));
	CHECK(READ(PK(1), "l,m,st,fl"), "[1, 2, 3]|{'a': 1, 'b': 2, 'c': 3}|{'a', 'b'}|[1, 2]");
	/* A whole-collection write drops every older element. */
	UPDATE(PK(1), CK(1), 200, 0, op_set("l", LIST(I(9))), op_set("m", MAP(T("z"), I(26))),
	       op_set("st", SETOF(T("q"))), op_set("fl", LIST(I(7))));
	CHECK(READ(PK(1), "l,m,st,fl"), "[9]|{'z': 26}|{'q'}|[7]");
	/* Older element writes arriving late stay dropped. */
	UPDATE(PK(1), CK(1), 150, 0, op_append("l", LIST(I(4))), op_put("m", T("d"), I(4)),
	       op_append("st", SETOF(T("c"))));
	CHECK(READ(PK(1), "l,m,st,fl"), "[9]|{'z': 26}|{'q'}|[7]");
	/* Additions in the same statement as the overwrite survive it. */
	UPDATE(PK(1), CK(1), 300, 0, op_set("m", MAP(T("x"), I(1))), op_put("m", T("y"), I(2)));
	CHECK(READ(PK(1), "m"), "{'x': 1, 'y': 2}");
	/* Overwrite with null: the column is null. */
	UPDATE(PK(1), CK(1), 400, 0, op_null("l"), op_null("m"), op_null("st"), op_null("fl"),
	       op_set("v", I(1)));
	CHECK(READ(PK(1), "l,m,st,fl,v"), "null|null|null|null|1");
	/* A frozen collection is one value: last write wins as a whole. */
	UPDATE(PK(2), CK(1), 200, 0, op_set("fl", LIST(I(1))));
	UPDATE(PK(2), CK(1), 100, 0, op_set("fl", LIST(I(2), I(3))));
	CHECK(READ(PK(2), "fl"), "[1]");
	/* Row and partition deletes cover collection elements. */
	UPDATE(PK(3), CK(1), 100, 0, op_append("l", LIST(I(1))), op_put("m", T("a"), I(1)));
	DEL_ROW(PK(3), CK(1), 150);
	UPDATE(PK(3), CK(1), 140, 0, op_append("st", SETOF(T("late"))));
	UPDATE(PK(3), CK(1), 160, 0, op_put("m", T("b"), I(2)));
	CHECK(READ(PK(3), "l,m,st"), "null|{'b': 2}|null");
	DEL_PART(PK(3), 170);
	CHECK(READ(PK(3), "l,m,st"), "");
	/* A range delete covers them too. */
	UPDATE(PK(4), CK(1), 100, 0, op_append("l", LIST(I(1))));
	DEL_RANGE(PK(4), RG(CK(0), true, CK(5), true), 150);
	UPDATE(PK(4), CK(1), 140, 0, op_append("l", LIST(I(2))));
	CHECK(READ(PK(4), "ck,l"), "");
}

static void
test_collection_ttl_and_writetime(void **state)
{
	(void)state;
	open_colls();
	/* Elements written with a TTL expire one by one. */
	UPDATE(PK(1), CK(1), 100, 0, op_append("st", SETOF(T("keep"))));
	UPDATE(PK(1), CK(1), 101, 10, op_append("st", SETOF(T("gone"))));
	UPDATE(PK(1), CK(1), 102, 20, op_put("m", T("a"), I(1)));
	UPDATE(PK(1), CK(1), 102, 0, op_put("m", T("b"), I(2)));
	UPDATE(PK(1), CK(1), 103, 10, op_append("l", LIST(I(1), I(2))));
	UPDATE(PK(1), CK(1), 104, 0, op_append("l", LIST(I(3))));
	CHECK(READ(PK(1), "l,m,st"), "[1, 2, 3]|{'a': 1, 'b': 2}|{'gone', 'keep'}");
	/* writetime of a non-frozen collection: its newest element. */
	assert_int_equal(R.wt[0][0], 104);
	assert_int_equal(R.wt[0][1], 102);
	assert_int_equal(R.wt[0][2], 101);
	F.now = NOW + 10;
	CHECK(READ(PK(1), "l,m,st"), "[3]|{'a': 1, 'b': 2}|{'keep'}");
	assert_int_equal(R.wt[0][2], 100);
	F.now = NOW + 20;
	CHECK(READ(PK(1), "l,m,st"), "[3]|{'b': 2}|{'keep'}");
	/* Every element expired: the row (no marker) is gone. */
	F.now = NOW;
	UPDATE(PK(2), CK(1), 100, 5, op_set("m", MAP(T("a"), I(1))));
	F.now = NOW + 5;
	CHECK(READ(PK(2), "ck,m"), "");
	/* A whole-collection write with a TTL, on an INSERT. */
	F.now = NOW;
	INSERT(PK(3), CK(1), 100, 5, op_set("l", LIST(I(1), I(2))), op_set("v", I(1)));
	UPDATE(PK(3), CK(1), 101, 0, op_append("l", LIST(I(3))));
	F.now = NOW + 5;
	CHECK(READ(PK(3), "ck,l,v"), "1|[3]|null");
	/* writetime and ttl of a frozen collection are the cell's. */
	F.now = NOW;
	UPDATE(PK(4), CK(1), 77, 9, op_set("fl", LIST(I(1))));
	CHECK(READ(PK(4), "fl"), "[1]");
	assert_int_equal(R.wt[0][0], 77);
	assert_int_equal(R.ttl[0][0], 9);
}

/* ---- clustering order ---- */

struct order_case {
	const char *type;
	struct sm_bytes (*val)(int i);
	int n;
	const char *asc; /* expected ascending rendering, one value per line */
};

static struct sm_bytes
v_int(int i)
{
	static const int32_t v[] = { INT32_MIN, -5, -1, 0, 3, 100, INT32_MAX };

	return I(v[i]);
}

static struct sm_bytes
v_bigint(int i)
{
	static const int64_t v[] = { INT64_MIN, -1, 0, 1, (int64_t)1 << 40, INT64_MAX };

	return BI(v[i]);
}

static struct sm_bytes
v_text(int i)
{
	static const char *const v[] = { "", "A", "Z", "a", "ab", "b", "\xc3\xa9" };

	return T(v[i]);
}

static struct sm_bytes
v_blob(int i)
{
	static const char *const v[] = { "", "00", "0001", "01", "7f", "80", "ff" };

	return HEX(v[i]);
}

static struct sm_bytes
v_double(int i)
{
	static const double v[] = { -1e300, -1.5, -0.0, 0.0, 2.5, 1e300 };

	return DBL(v[i]);
}

static struct sm_bytes
v_varint(int i)
{
	static const char *const v[] = { "ff00", "ff", "00", "7f", "0080", "010000" };

	return HEX(v[i]);
}

static struct sm_bytes
v_boolean(int i)
{
	return HEX(i ? "01" : "00");
}

static struct sm_bytes
v_timeuuid(int i)
{
	/* Sorted by timestamp (time_hi, time_mid, time_low), the reverse of
	 * their byte order. */
	static const char *const v[] = {
		"00000001-0000-1000-8000-000000000000",
		"00000000-0001-1000-8000-000000000000",
		"00000000-0000-1001-8000-000000000000",
	};

	return UUID(v[i]);
}

static struct sm_bytes
v_smallint(int i)
{
	static const int16_t v[] = { -300, -1, 0, 1, 300 };

	return be((uint16_t)v[i], 2);
}

static const struct order_case order_cases[] = {
	{ "int", v_int, 7, "-2147483648 -5 -1 0 3 100 2147483647" },
	{ "bigint", v_bigint, 6, "-9223372036854775808 -1 0 1 1099511627776 9223372036854775807" },
	{ "text", v_text, 7, "'' 'A' 'Z' 'a' 'ab' 'b' '\xc3\xa9'" },
	{ "blob", v_blob, 7, "0x 0x00 0x0001 0x01 0x7f 0x80 0xff" },
	{ "double", v_double, 6, "-1.0E300 -1.5 -0.0 0.0 2.5 1.0E300" },
	{ "varint", v_varint, 6, "-256 -1 0 127 128 65536" },
	{ "boolean", v_boolean, 2, "false true" },
	{ "timeuuid", v_timeuuid, 3,
	  "00000001-0000-1000-8000-000000000000 00000000-0001-1000-8000-000000000000 "
	  "00000000-0000-1001-8000-000000000000" },
	{ "smallint", v_smallint, 5, "-300 -1 0 1 300" },
};

/* Read a partition's ck column, values separated by ' '. */
static const char *
ck_line(struct sm_key pk, bool reversed)
{
	static char buf[4096];
	char *p;

	snprintf(buf, sizeof(buf), "%s", read_ex(pk, "ck", NULL, 0, reversed, 0, 0));
	for (p = buf; *p; p++)
		if (*p == '\n')
			*p = ' ';
	return buf;
}

/* The words of @s in reverse order. */
static const char *
reverse_words(const char *s)
{
	static char buf[4096];
	char copy[4096], *words[64], *save = NULL, *w;
	int n = 0, i;
	size_t len = 0;

	snprintf(copy, sizeof(copy), "%s", s);
	for (w = strtok_r(copy, " ", &save); w != NULL; w = strtok_r(NULL, " ", &save))
		words[n++] = w;
	buf[0] = '\0';
	for (i = n - 1; i >= 0; i--)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", len ? " " : "",
					words[i]);
	return buf;
}

static void
test_clustering_order_types(void **state)
{
	unsigned c;

	(void)state;
	for (c = 0; c < sizeof(order_cases) / sizeof(order_cases[0]); c++) {
		const struct order_case *oc = &order_cases[c];
		int desc;

		for (desc = 0; desc < 2; desc++) {
			struct sm_column_def cols[] = {
				{ "pk", "int", SM_COL_PARTITION, false },
				{ "ck", oc->type, SM_COL_CLUSTERING, desc },
				{ "v", "int", SM_COL_REGULAR, false },
			};
			const char *want = desc ? reverse_words(oc->asc) : oc->asc;
			char want_copy[4096];
			int i;

			setup(NULL);
			open_table(cols, 3, 0);
			/* Insert in a scrambled order. */
			for (i = 0; i < oc->n; i++) {
				int j = (i * 5 + 3) % oc->n;

				if (oc->n % 5 == 0)
					j = (i * 3 + 1) % oc->n;
				INSERT(PK(1), KEY(oc->val(j)), 100, 0, op_set("v", I(j)));
			}
			snprintf(want_copy, sizeof(want_copy), "%s", want);
			if (strcmp(ck_line(PK(1), false), want_copy) != 0)
				fail_msg("%s %s: got '%s' want '%s'", oc->type,
					 desc ? "DESC" : "ASC", ck_line(PK(1), false), want_copy);
			/* A reversed read is the exact reverse. */
			if (strcmp(ck_line(PK(1), true), reverse_words(want_copy)) != 0)
				fail_msg("%s %s reversed: got '%s'", oc->type,
					 desc ? "DESC" : "ASC", ck_line(PK(1), true));
			/* The same clustering value written twice is one row. */
			INSERT(PK(1), KEY(oc->val(0)), 101, 0, op_set("v", I(-1)));
			READ(PK(1), "ck");
			assert_int_equal(R.n, oc->n);
			teardown(NULL);
		}
	}
	setup(NULL);
}

/* pk int, c1 int ASC, c2 text DESC, v int, s int static; 5 x 4 rows */
static const char *const c2_vals[] = { "a", "b", "c", "d" };

static void
open_composite(void)
{
	static const struct sm_column_def cols[] = {
		{ "pk", "int", SM_COL_PARTITION, false },
		{ "c1", "int", SM_COL_CLUSTERING, false },
		{ "c2", "text", SM_COL_CLUSTERING, true },
		{ "v", "int", SM_COL_REGULAR, false },
		{ "s", "int", SM_COL_STATIC, false },
	};
	int32_t pk, a;
	unsigned b;

	OPEN(cols);
	for (pk = 1; pk <= 2; pk++) {
		/* Scrambled insertion order. */
		for (b = 0; b < 4; b++)
			for (a = 4; a >= 0; a--)
				INSERT(PK(pk), KEY(I(a), T(c2_vals[(b + 2) % 4])), 100, 0,
				       op_set("v", I(a * 10 + (int32_t)((b + 2) % 4))));
		UPDATE(PK(pk), NOKEY, 100, 0, op_set("s", I(pk)));
	}
	/* Partition 2 has dead rows in the middle and at the edges. */
	DEL_ROW(PK(2), KEY(I(0), T("d")), 200);
	DEL_ROW(PK(2), KEY(I(2), T("b")), 200);
	DEL_RANGE(PK(2), RG(KEY(I(3)), true, KEY(I(3)), true), 200);
	DEL_ROW(PK(2), KEY(I(4), T("a")), 200);
	/* Partition 3: clustering values of many lengths, some rows dead. */
	{
		static const char *const c2var[] = { "",    "a",  "bb", "bbb",	 "c",
						     "ccc", "cd", "d",	"zzzzzz" };

		for (a = 0; a < 5; a++)
			for (b = 0; b < 9; b++)
				INSERT(PK(3), KEY(I(a), T(c2var[(b * 4) % 9])), 100, 0,
				       op_set("v", I(a)));
		DEL_ROW(PK(3), KEY(I(1), T("bbb")), 200);
		DEL_ROW(PK(3), KEY(I(1), T("")), 200);
		DEL_RANGE(PK(3), RG(KEY(I(2), T("cd")), true, KEY(I(2), T("bb")), false), 200);
	}
}

/* "c1c2 c1c2 ..." for the composite table */
static const char *
comp_line(const char *rows)
{
	static char buf[1024];
	char copy[sizeof(R.s)], *save = NULL, *line;
	size_t len = 0;

	snprintf(copy, sizeof(copy), "%s", rows);
	buf[0] = '\0';
	for (line = strtok_r(copy, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		int a;
		char c;

		assert_int_equal(sscanf(line, "%d|'%c'", &a, &c), 2);
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%d%c", len ? " " : "", a,
					c);
	}
	return buf;
}

static void
test_composite_clustering_and_slices(void **state)
{
	struct sm_ck_range rg[3];

	(void)state;
	open_composite();
	CHECK(comp_line(READ(PK(1), "c1,c2")),
	      "0d 0c 0b 0a 1d 1c 1b 1a 2d 2c 2b 2a 3d 3c 3b 3a 4d 4c 4b 4a");
	CHECK(comp_line(read_ex(PK(1), "c1,c2", NULL, 0, true, 0, 0)),
	      "4a 4b 4c 4d 3a 3b 3c 3d 2a 2b 2c 2d 1a 1b 1c 1d 0a 0b 0c 0d");
	CHECK(comp_line(READ(PK(2), "c1,c2")), "0c 0b 0a 1d 1c 1b 1a 2d 2c 2a 4d 4c 4b");
	/* Values follow their keys. */
	CHECK(read_ex(PK(1), "c1,c2,v,s", NULL, 0, false, 2, 0), "0|'d'|3|1\n0|'c'|2|1");

	/* c1 >= 1 AND c1 <= 3 (prefix bounds) */
	rg[0] = RG(KEY(I(1)), true, KEY(I(3)), true);
	CHECK(comp_line(read_ex(PK(1), "c1,c2", rg, 1, false, 0, 0)),
	      "1d 1c 1b 1a 2d 2c 2b 2a 3d 3c 3b 3a");
	/* c1 > 1 AND c1 < 3 */
	rg[0] = RG(KEY(I(1)), false, KEY(I(3)), false);
	CHECK(comp_line(read_ex(PK(1), "c1,c2", rg, 1, false, 0, 0)), "2d 2c 2b 2a");
	/* c1 = 2 AND c2 < 'c' (DESC: after (2, 'c') in clustering order) */
	rg[0] = RG(KEY(I(2), T("c")), false, KEY(I(2)), true);
	CHECK(comp_line(read_ex(PK(1), "c1,c2", rg, 1, false, 0, 0)), "2b 2a");
	/* c1 = 2 AND c2 >= 'b' AND c2 < 'd' */
	rg[0] = RG(KEY(I(2), T("c")), true, KEY(I(2), T("b")), true);
	CHECK(comp_line(read_ex(PK(1), "c1,c2", rg, 1, false, 0, 0)), "2c 2b");
	/* c1 = 2 AND c2 = 'x': nothing */
	rg[0] = RG(KEY(I(2), T("x")), true, KEY(I(2), T("x")), true);
	CHECK(comp_line(read_ex(PK(1), "c1,c2", rg, 1, false, 0, 0)), "");
	/* (c1, c2) >= (1, 'b') AND (c1, c2) < (3, 'c'): a multi-column slice */
	rg[0] = RG(KEY(I(1), T("b")), true, KEY(I(3), T("c")), false);
	CHECK(comp_line(read_ex(PK(1), "c1,c2", rg, 1, false, 0, 0)), "1b 1a 2d 2c 2b 2a 3d");
	/* Open-ended slices */
	rg[0] = RG(KEY(I(3), T("b")), true, NOKEY, false);
	CHECK(comp_line(read_ex(PK(1), "c1,c2", rg, 1, false, 0, 0)), "3b 3a 4d 4c 4b 4a");
	rg[0] = RG(NOKEY, false, KEY(I(0), T("c")), true);
	CHECK(comp_line(read_ex(PK(1), "c1,c2", rg, 1, false, 0, 0)), "0d 0c");
	/* c1 IN (0, 3): one range per value, in clustering order */
	rg[0] = RG(KEY(I(0)), true, KEY(I(0)), true);
	rg[1] = RG(KEY(I(3)), true, KEY(I(3)), true);
	CHECK(comp_line(read_ex(PK(1), "c1,c2", rg, 2, false, 0, 0)), "0d 0c 0b 0a 3d 3c 3b 3a");
	CHECK(comp_line(read_ex(PK(1), "c1,c2", rg, 2, true, 0, 0)), "3a 3b 3c 3d 0a 0b 0c 0d");
	/* c1 = 1 AND c2 IN ('d', 'a'), and a third disjoint slice */
	rg[0] = RG(KEY(I(1), T("d")), true, KEY(I(1), T("d")), true);
	rg[1] = RG(KEY(I(1), T("a")), true, KEY(I(1), T("a")), true);
	rg[2] = RG(KEY(I(4), T("c")), false, NOKEY, false);
	CHECK(comp_line(read_ex(PK(1), "c1,c2", rg, 3, false, 0, 0)), "1d 1a 4b 4a");
	CHECK(comp_line(read_ex(PK(1), "c1,c2", rg, 3, true, 0, 0)), "4a 4b 1a 1d");
	/* Reversed slices */
	rg[0] = RG(KEY(I(1), T("b")), true, KEY(I(3), T("c")), false);
	CHECK(comp_line(read_ex(PK(1), "c1,c2", rg, 1, true, 0, 0)), "3d 2a 2b 2c 2d 1a 1b");
	/* Limit and per-partition limit */
	CHECK(comp_line(read_ex(PK(1), "c1,c2", rg, 1, false, 3, 0)), "1b 1a 2d");
	CHECK(comp_line(read_ex(PK(1), "c1,c2", rg, 1, true, 3, 0)), "3d 2a 2b");
	CHECK(comp_line(read_ex(PK(1), "c1,c2", rg, 1, false, 0, 2)), "1b 1a");
	CHECK(comp_line(read_ex(PK(1), "c1,c2", rg, 1, false, 5, 4)), "1b 1a 2d 2c");
	CHECK(comp_line(read_ex(PK(1), "c1,c2", NULL, 0, true, 0, 1)), "4a");
	/* Dead rows are skipped, not counted. */
	CHECK(comp_line(read_ex(PK(2), "c1,c2", NULL, 0, false, 4, 0)), "0c 0b 0a 1d");
	CHECK(comp_line(read_ex(PK(2), "c1,c2", NULL, 0, true, 4, 0)), "4b 4c 4d 2a");
	rg[0] = RG(KEY(I(2)), true, KEY(I(4)), true);
	CHECK(comp_line(read_ex(PK(2), "c1,c2", rg, 1, false, 0, 0)), "2d 2c 2a 4d 4c 4b");
	/* A limit that stops exactly at the last row reports no more rows. */
	{
		uint16_t ids[MAXC];
		struct sm_select s;

		sel_init(&s, PK(1), "c1,c2", ids);
		s.ranges = rg;
		s.nranges = 1;
		s.limit = 12;
		read_sel(&s);
		assert_int_equal(s.rows, 12);
		assert_false(s.more);
		s.limit = 11;
		read_sel(&s);
		assert_true(s.more);
	}
	/* A missing partition reads as nothing. */
	CHECK(READ(PK(99), "c1,c2"), "");
}

static void
test_paging_matches_full_read(void **state)
{
	struct sm_ck_range sl[8][3];
	unsigned nsl[8];
	unsigned si, nslices = 0;
	int32_t pk;

	(void)state;
	open_composite();
	/* every row */
	nsl[nslices++] = 0;
	/* c1 >= 1 AND c1 <= 3 */
	sl[nslices][0] = RG(KEY(I(1)), true, KEY(I(3)), true);
	nsl[nslices++] = 1;
	/* c1 = 2 AND c2 < 'c' */
	sl[nslices][0] = RG(KEY(I(2), T("c")), false, KEY(I(2)), true);
	nsl[nslices++] = 1;
	/* (c1, c2) > (0, 'b') AND (c1, c2) <= (4, 'c') */
	sl[nslices][0] = RG(KEY(I(0), T("b")), false, KEY(I(4), T("c")), true);
	nsl[nslices++] = 1;
	/* c1 IN (0, 2, 4) */
	sl[nslices][0] = RG(KEY(I(0)), true, KEY(I(0)), true);
	sl[nslices][1] = RG(KEY(I(2)), true, KEY(I(2)), true);
	sl[nslices][2] = RG(KEY(I(4)), true, KEY(I(4)), true);
	nsl[nslices++] = 3;
	/* two slices and an open end */
	sl[nslices][0] = RG(KEY(I(0), T("c")), true, KEY(I(1), T("b")), true);
	sl[nslices][1] = RG(KEY(I(3)), false, NOKEY, false);
	nsl[nslices++] = 2;
	/* c1 > 3 */
	sl[nslices][0] = RG(KEY(I(3)), false, NOKEY, false);
	nsl[nslices++] = 1;
	/* nothing */
	sl[nslices][0] = RG(KEY(I(7)), true, NOKEY, false);
	nsl[nslices++] = 1;

	CHECK(READ(PK(3), "c1,c2"), "0|'zzzzzz'\n0|'d'\n0|'cd'\n0|'ccc'\n0|'c'\n0|'bbb'\n0|'bb'\n"
				    "0|'a'\n0|''\n1|'zzzzzz'\n1|'d'\n1|'cd'\n1|'ccc'\n1|'c'\n"
				    "1|'bb'\n1|'a'\n2|'zzzzzz'\n2|'d'\n2|'bb'\n2|'a'\n2|''\n"
				    "3|'zzzzzz'\n3|'d'\n3|'cd'\n3|'ccc'\n3|'c'\n3|'bbb'\n3|'bb'\n"
				    "3|'a'\n3|''\n4|'zzzzzz'\n4|'d'\n4|'cd'\n4|'ccc'\n4|'c'\n"
				    "4|'bbb'\n4|'bb'\n4|'a'\n4|''");
	for (pk = 1; pk <= 3; pk++) {
		for (si = 0; si < nslices; si++) {
			int rev;

			for (rev = 0; rev < 2; rev++) {
				static const uint32_t ppls[] = { 0, 1, 3, 7, 100 };
				unsigned pi;

				for (pi = 0; pi < sizeof(ppls) / sizeof(ppls[0]); pi++) {
					char full[8192];
					uint32_t page;

					snprintf(full, sizeof(full), "%s",
						 read_ex(PK(pk), "c1,c2,v,s",
							 nsl[si] ? sl[si] : NULL, nsl[si], rev, 0,
							 ppls[pi]));
					for (page = 1; page <= 46; page++) {
						unsigned pages;
						const char *got =
							read_paged(PK(pk), "c1,c2,v,s",
								   nsl[si] ? sl[si] : NULL, nsl[si],
								   rev, page, ppls[pi], &pages);

						if (strcmp(got, full) != 0)
							fail_msg("pk %d slice %u rev %d ppl %u "
								 "page %u:\n"
								 "%s\nwant\n%s",
								 pk, si, rev, ppls[pi], page, got,
								 full);
					}
				}
			}
		}
	}
}

static void
test_paging_survives_writes_between_pages(void **state)
{
	uint16_t ids[MAXC];
	struct sm_select s;

	(void)state;
	open_composite();
	sel_init(&s, PK(1), "c1,c2", ids);
	s.limit = 3;
	CHECK(comp_line(read_sel(&s)), "0d 0c 0b");
	assert_true(s.more);
	/* The last row returned is deleted and rows appear on both sides. */
	DEL_ROW(PK(1), KEY(I(0), T("b")), 300);
	INSERT(PK(1), KEY(I(0), T("bb")), 300, 0, op_set("v", I(0)));
	INSERT(PK(1), KEY(I(0), T("ab")), 300, 0, op_set("v", I(0)));
	s.resume = true;
	CHECK(read_sel(&s), "0|'ab'\n0|'a'\n1|'d'");
	CHECK(read_sel(&s), "1|'c'\n1|'b'\n1|'a'");
	/* Reversed, with the boundary row gone. */
	sel_init(&s, PK(1), "c1,c2", ids);
	s.reversed = true;
	s.limit = 2;
	CHECK(comp_line(read_sel(&s)), "4a 4b");
	DEL_ROW(PK(1), KEY(I(4), T("b")), 300);
	s.resume = true;
	CHECK(comp_line(read_sel(&s)), "4c 4d");
}

/* A token range scan pages like a partition read, across partitions. */
struct scan_out {
	char s[65536];
	size_t len;
};

static const char *
scan_all(uint32_t page, uint32_t ppl)
{
	static struct scan_out so;
	uint16_t ids[MAXC];
	struct sm_select s;
	struct sm_scan_pos pos;
	unsigned guard = 0;

	sel_init(&s, NOKEY, "pk,c1,c2,s", ids);
	s.range = true;
	s.token_start = INT64_MIN;
	s.token_end = INT64_MAX;
	s.per_partition_limit = ppl;
	memset(&pos, 0, sizeof(pos));
	so.len = 0;
	so.s[0] = '\0';
	for (;;) {
		uint32_t budget = page ? page : UINT32_MAX;
		int64_t next = 0;
		bool has_next = false;
		int ret;

		res_reset(ids);
		s.rows = 0;
		ret = sm_ptable_scan(F.pt, &s, &pos, INT64_MAX, &budget, F.now, &next, &has_next);
		assert_true(ret == 0 || ret == 1);
		if (R.len > 0)
			so.len += (size_t)snprintf(so.s + so.len, sizeof(so.s) - so.len, "%s%s",
						   so.len ? "\n" : "", R.s);
		if (ret == 0)
			break;
		/* The page position survives a trip through its paging blob. */
		{
			struct sm_paging pg;

			sm_scan_pos_encode(&pos, &pg);
			assert_int_equal(sm_scan_pos_decode(&pg, &pos), 0);
		}
		assert_true(++guard < 10000);
	}
	return so.s;
}

static void
test_scan_paging_and_per_partition_limit(void **state)
{
	static const struct sm_column_def cols[] = {
		{ "pk", "int", SM_COL_PARTITION, false },
		{ "c1", "int", SM_COL_CLUSTERING, false },
		{ "c2", "text", SM_COL_CLUSTERING, true },
		{ "v", "int", SM_COL_REGULAR, false },
		{ "s", "int", SM_COL_STATIC, false },
	};
	static char full[65536], want[65536];
	int32_t order[16], pk;
	uint32_t page;
	unsigned npk = 0, i;
	int ppl;

	(void)state;
	OPEN(cols);
	for (pk = 0; pk < 10; pk++) {
		int32_t a;

		for (a = 0; a < pk % 4 + 1; a++) {
			INSERT(PK(pk), KEY(I(a), T("x")), 100, 0, op_set("v", I(a)));
			INSERT(PK(pk), KEY(I(a), T("yyy")), 100, 0, op_set("v", I(a)));
		}
		UPDATE(PK(pk), NOKEY, 100, 0, op_set("s", I(pk)));
	}
	/* A partition with only static data, one with nothing live. */
	UPDATE(PK(20), NOKEY, 100, 0, op_set("s", I(20)));
	INSERT(PK(21), KEY(I(0), T("x")), 100, 0, op_set("v", I(0)));
	DEL_PART(PK(21), 200);
	DEL_ROW(PK(3), KEY(I(1), T("yyy")), 200);

	/* The expected scan: partitions in token order, each read alone. */
	for (pk = 0; pk < 22; pk++) {
		if (pk >= 10 && pk < 20)
			continue;
		order[npk++] = pk;
	}
	for (i = 1; i < npk; i++) {
		unsigned j;

		for (j = i; j > 0; j--) {
			struct sm_key a = PK(order[j - 1]), b = PK(order[j]);
			int32_t tmp;

			if (sm_key_token(&a) <= sm_key_token(&b))
				break;
			tmp = order[j - 1];
			order[j - 1] = order[j];
			order[j] = tmp;
		}
	}
	for (ppl = 0; ppl <= 3; ppl++) {
		size_t len = 0;

		want[0] = '\0';
		for (i = 0; i < npk; i++) {
			read_ex(PK(order[i]), "pk,c1,c2,s", NULL, 0, false, 0, (uint32_t)ppl);
			if (R.len > 0)
				len += (size_t)snprintf(want + len, sizeof(want) - len, "%s%s",
							len ? "\n" : "", R.s);
		}
		snprintf(full, sizeof(full), "%s", scan_all(0, (uint32_t)ppl));
		CHECK(full, want);
		for (page = 1; page <= 12; page++) {
			const char *got = scan_all(page, (uint32_t)ppl);

			if (strcmp(got, want) != 0)
				fail_msg("ppl %d page %u:\n%s\nwant\n%s", ppl, page, got, want);
		}
	}
	/* The static-only partition is one row, the deleted one nothing. */
	assert_non_null(strstr(full, "20|null|null|20"));
	assert_null(strstr(full, "21|"));
}

/* ---- validation ---- */

static void
test_validation_errors(void **state)
{
	(void)state;
	open_basic();
	/* Wrong number of key parts. */
	FAILS(-EINVAL, "Partition key has 2 components, table ks.t needs 1", 0, KEY(I(1), I(2)),
	      CK(1), 100, 0, op_set("w", I(1)));
	FAILS(-EINVAL, "Partition key has 0 components, table ks.t needs 1", 0, NOKEY, CK(1), 100,
	      0, op_set("w", I(1)));
	FAILS(-EINVAL, "Clustering key has 2 components, table ks.t needs 1", 0, PK(1),
	      KEY(I(1), I(2)), 100, 0, op_set("w", I(1)));
	FAILS(-EINVAL, "Clustering key has 0 components, table ks.t needs 1", SM_MUT_ROW_MARKER,
	      PK(1), NOKEY, 100, 0, op_set("w", I(1)));
	FAILS(-EINVAL, "Clustering key has 0 components, table ks.t needs 1", 0, PK(1), NOKEY, 100,
	      0, op_set("w", I(1)));
	/* Empty partition key. */
	FAILS(-EINVAL, "Key may not be empty", 0, KEY(abytes(NULL, 0)), CK(1), 100, 0,
	      op_set("w", I(1)));
	/* Bad value lengths: in a cell, in a key. */
	FAILS(-EINVAL, "Expected 4 or 0 byte int (3)", 0, PK(1), CK(1), 100, 0,
	      op_set("w", HEX("000001")));
	FAILS(-EINVAL, "Expected 4 or 0 byte int (2)", 0, KEY(HEX("0001")), CK(1), 100, 0,
	      op_set("w", I(1)));
	FAILS(-EINVAL, "Expected 4 or 0 byte int (5)", 0, PK(1), KEY(HEX("0000000001")), 100, 0,
	      op_set("w", I(1)));
	/* Invalid UTF-8 in a text column. */
	assert_int_equal(
		apply_raw(0, PK(1), CK(1), NULL, 100, 0, OPS(op_set("v", abytes("\xff\xfe", 2)))),
		-EINVAL);
	/* A counter operation on a non-counter column. */
	FAILS(-EINVAL, "Invalid operation for non counter column w", 0, PK(1), CK(1), 100, 0,
	      op_add("w", 1));
	/* A collection operation on a plain column. */
	FAILS(-EINVAL, "Invalid operation for non collection column w", 0, PK(1), CK(1), 100, 0,
	      op_append("w", LIST(I(1))));
	/* A primary key column in the SET part. */
	FAILS(-EINVAL, "PRIMARY KEY part ck found in SET part", 0, PK(1), CK(1), 100, 0,
	      op_set("ck", I(1)));
	/* A range deletion bound with more parts than the clustering key. */
	{
		struct sm_ck_range rg = RG(KEY(I(1), I(2)), true, NOKEY, false);

		assert_int_equal(apply_raw(SM_MUT_DELETE_RANGE, PK(1), NOKEY, &rg, 100, 0, NULL, 0),
				 -EINVAL);
		assert_string_equal(F.err, "range deletion bound longer than the clustering key");
	}
	/* None of the failed writes left anything behind. */
	CHECK(READ(PK(1), "pk,ck,v,w,s"), "");
	assert_int_equal(sm_ptable_count(F.pt), 0);
	/* A failing operation among valid ones fails the whole mutation. */
	FAILS(-EINVAL, "Expected 4 or 0 byte int (1)", SM_MUT_ROW_MARKER, PK(1), CK(1), 100, 0,
	      op_set("v", T("ok")), op_set("w", HEX("01")));
	CHECK(READ(PK(1), "pk,ck,v,w,s"), "");
}

static void
test_validation_counter_errors(void **state)
{
	(void)state;
	open_counters();
	FAILS(-EINVAL,
	      "Cannot set the value of counter column c (counters can only be "
	      "incremented/decremented, not set)",
	      0, PK(1), CK(1), 100, 0, op_set("c", BI(1)));
	FAILS(-EINVAL, "Invalid counter delta for c", 0, PK(1), CK(1), 100, 0,
	      (struct sm_cell_op){ .col = cid("c"), .kind = SM_CELL_COUNTER_ADD, .value = I(1) });
	FAILS(-EINVAL, "Cannot provide custom TTL for counter updates", 0, PK(1), CK(1), 100, 10,
	      op_add("c", 1));
	CHECK(READ(PK(1), "ck,c,d"), "");
	assert_int_equal(sm_ptable_count(F.pt), 0);
}

static void
test_validation_collection_errors(void **state)
{
	(void)state;
	open_colls();
	/* A malformed collection (count says 2, holds 1): nothing of it is
	 * applied. */
	FAILS(-EINVAL, "Not enough bytes to read a list", 0, PK(1), CK(1), 100, 0,
	      op_append("l", HEX("000000020000000400000001")));
	FAILS(-EINVAL, "Not enough bytes to read a list", 0, PK(1), CK(1), 100, 0,
	      op_prepend("l", HEX("000000020000000400000001")));
	FAILS(-EINVAL, "Not enough bytes to read a list", 0, PK(1), CK(1), 100, 0,
	      op_remove("l", HEX("000000020000000400000001")));
	FAILS(-EINVAL, "Invalid collection value for column m", 0, PK(1), CK(1), 100, 0,
	      op_remove("m", HEX("000000020000000161")));
	/* Elements, keys and values of the wrong length or encoding. */
	FAILS(-EINVAL, "Expected 4 or 0 byte int (1)", 0, PK(1), CK(1), 100, 0,
	      op_append("l", LIST(I(1), HEX("01"))));
	FAILS(-EINVAL, "Expected 4 or 0 byte int (2)", 0, PK(1), CK(1), 100, 0,
	      op_append("m", MAP(T("a"), HEX("0001"))));
	FAILS(-EINVAL, "Expected 4 or 0 byte int (2)", 0, PK(1), CK(1), 100, 0,
	      op_put("m", T("a"), HEX("0001")));
	assert_int_equal(
		apply_raw(0, PK(1), CK(1), NULL, 100, 0, OPS(op_put("m", abytes("\xff", 1), I(1)))),
		-EINVAL);
	assert_int_equal(
		apply_raw(0, PK(1), CK(1), NULL, 100, 0, OPS(op_del_key("m", abytes("\xff", 1)))),
		-EINVAL);
	assert_int_equal(apply_raw(0, PK(1), CK(1), NULL, 100, 0,
				   OPS(op_remove("m", SETOF(abytes("\xff", 1))))),
			 -EINVAL);
	assert_int_equal(apply_raw(0, PK(1), CK(1), NULL, 100, 0,
				   OPS(op_append("st", SETOF(abytes("\xff", 1))))),
			 -EINVAL);
	assert_int_equal(sm_ptable_count(F.pt), 0);
	/* A list index that is not 4 bytes. */
	FAILS(-EINVAL, "Invalid collection value for column l", 0, PK(1), CK(1), 100, 0,
	      op_put("l", HEX("00"), I(1)));
	/* A malformed whole value is refused by validation. */
	FAILS(-EINVAL, "Expected 4 or 0 byte int (1)", 0, PK(1), CK(1), 100, 0,
	      op_set("l", LIST(HEX("01"))));
	CHECK(READ(PK(1), "ck,l,m,st"), "");
	/* The element value of list[i] = v. */
	UPDATE(PK(1), CK(1), 100, 0, op_append("l", LIST(I(1))));
	FAILS(-EINVAL, "Expected 4 or 0 byte int (3)", 0, PK(1), CK(1), 101, 0,
	      op_set_idx("l", 0, HEX("000001")));
	CHECK(READ(PK(1), "ck,l"), "1|[1]");
}

/* ---- wide tables: columns beyond any fixed array ---- */

#define WIDE 5000

static char wide_names[WIDE][8];
static struct sm_column_def wide_cols[SM_MAX_COLUMNS + 1];

/* pk int, then @n - 1 int columns c0 .. c{n-2} (names c%u, repeating after WIDE). */
static unsigned
wide_defs(unsigned n)
{
	unsigned i;

	wide_cols[0] = (struct sm_column_def){ "pk", "int", SM_COL_PARTITION, false };
	for (i = 1; i < n; i++) {
		if (i - 1 < WIDE)
			snprintf(wide_names[i - 1], sizeof(wide_names[0]), "c%u", i - 1);
		wide_cols[i] = (struct sm_column_def){ wide_names[(i - 1) % WIDE], "int",
						       SM_COL_REGULAR, false };
	}
	return n;
}

struct wide_seen {
	unsigned rows, cells, present;
	int32_t last;
};

static int
wide_sink(void *ctx, const struct sm_row_view *r)
{
	struct wide_seen *w = ctx;
	unsigned i;

	w->rows++;
	w->cells += r->ncells;
	for (i = 0; i < r->ncells; i++) {
		if (!r->cells[i].present)
			continue;
		w->present++;
		w->last = (int32_t)((uint32_t)r->cells[i].value.p[0] << 24 |
				    (uint32_t)r->cells[i].value.p[1] << 16 |
				    (uint32_t)r->cells[i].value.p[2] << 8 | r->cells[i].value.p[3]);
	}
	return 0;
}

static void
test_wide_table(void **state)
{
	static uint16_t ids[WIDE + 1];
	static struct sm_condition conds[WIDE];
	struct sm_select s;
	struct sm_cas c;
	struct wide_seen w;
	bool exists, ok;
	unsigned i;

	(void)state;
	open_table(wide_cols, wide_defs(WIDE + 1), 0);
	assert_int_equal(F.t->ncols, WIDE + 1);
	/* Every name resolves to its own column (a hash index past a few columns). */
	for (i = 0; i < WIDE; i++) {
		const struct sm_column *col = sm_table_column(F.t, wide_names[i]);

		assert_non_null(col);
		assert_string_equal(col->name, wide_names[i]);
		assert_ptr_equal(&F.t->cols[col->id], col);
	}
	assert_null(sm_table_column(F.t, "c5000"));
	assert_null(sm_table_column(F.t, ""));
	/* The last column (id beyond 256) written and read back with every other one. */
	UPDATE(PK(1), NOKEY, 100, 0, op_set("c4999", I(4999)));
	memset(&s, 0, sizeof(s));
	for (i = 0; i <= WIDE; i++)
		ids[i] = (uint16_t)i;
	s.table = F.t;
	s.pk = PK(1);
	s.cols = ids;
	s.ncols = WIDE + 1;
	memset(&w, 0, sizeof(w));
	s.sink.row = wide_sink;
	s.sink.ctx = &w;
	assert_int_equal(sm_ptable_read(F.pt, &s, F.now), 0);
	assert_int_equal(w.rows, 1);
	assert_int_equal(w.cells, WIDE + 1);
	assert_int_equal(w.present, 2); /* pk and c4999 */
	assert_int_equal(w.last, 4999);
	/* A compare-and-set that tests every column and returns them all. */
	for (i = 0; i < WIDE; i++)
		conds[i] = (struct sm_condition){ .col = cid(wide_names[i]),
						  .op = SM_COND_EQ,
						  .null = i != WIDE - 1,
						  .value = i == WIDE - 1 ? I(4999) : abytes(NULL, 0) };
	memset(&c, 0, sizeof(c));
	memset(&w, 0, sizeof(w));
	c.mut.table = F.t;
	c.mut.pk = PK(1);
	c.kind = SM_CAS_IF;
	c.conds = conds;
	c.nconds = WIDE;
	c.cols = ids;
	c.ncols = WIDE + 1;
	c.sink.row = wide_sink;
	c.sink.ctx = &w;
	assert_int_equal(sm_ptable_cas_read(F.pt, &c, F.now, &exists, &ok), 0);
	assert_true(exists);
	assert_true(ok);
	assert_int_equal(w.cells, WIDE + 1);
	conds[0].null = false;
	conds[0].value = I(1);
	assert_int_equal(sm_ptable_cas_read(F.pt, &c, F.now, &exists, &ok), 0);
	assert_false(ok);
	/* A condition column outside the table is refused, not read. */
	conds[0].col = WIDE + 1;
	assert_int_equal(sm_ptable_cas_read(F.pt, &c, F.now, &exists, &ok), -EINVAL);
}

/* Column limits are checked when the table is created, with the reason. */
static void
test_wide_table_limits(void **state)
{
	static char k_class[] = "class", v_class[] = "SimpleStrategy";
	static char k_rf[] = "replication_factor", v_rf[] = "1";
	const struct sm_option repl[] = { { k_class, v_class }, { k_rf, v_rf } };
	struct sm_keyspace_def kd = { "ks", repl, 2, true };
	struct sm_table_def td = { "ks", "t", wide_cols, 0, NULL, 0, 0 };
	struct sm_catalog *next = NULL;

	(void)state;
	F.cat[0] = sm_catalog_new();
	assert_int_equal(sm_catalog_create_keyspace(F.cat[0], &kd, false, &F.cat[1], F.err,
						    sizeof(F.err)),
			 0);
	/* One column too many. */
	td.ncols = wide_defs(SM_MAX_COLUMNS + 1);
	assert_int_equal(sm_catalog_create_table(F.cat[1], &td, false, &next, F.err,
						 sizeof(F.err)),
			 -EINVAL);
	assert_null(next);
	assert_string_equal(F.err,
			    "Table ks.t has 65536 columns: shardmark allows at most 65535 per table");
	/* A duplicate name among thousands (found by the index, in one pass). */
	td.ncols = wide_defs(WIDE + 2); /* c0 again at the end */
	assert_int_equal(sm_catalog_create_table(F.cat[1], &td, false, &next, F.err,
						 sizeof(F.err)),
			 -EINVAL);
	assert_string_equal(F.err, "Multiple definition of identifier c0");
	/* Exactly the limit works, and every column is found. */
	td.ncols = wide_defs(SM_MAX_COLUMNS);
	for (unsigned i = WIDE + 1; i < SM_MAX_COLUMNS; i++) {
		static char more[SM_MAX_COLUMNS][8];

		snprintf(more[i], sizeof(more[i]), "d%u", i);
		wide_cols[i].name = more[i];
	}
	assert_int_equal(sm_catalog_create_table(F.cat[1], &td, false, &F.cat[2], F.err,
						 sizeof(F.err)),
			 0);
	F.t = sm_catalog_table(F.cat[2], "ks", "t");
	assert_int_equal(F.t->ncols, SM_MAX_COLUMNS);
	assert_string_equal(F.t->cols[sm_table_column(F.t, "d65534")->id].name, "d65534");
	assert_string_equal(F.t->cols[sm_table_column(F.t, "c4999")->id].name, "c4999");
}

/*
 * A row's values are packed in its one allocation (sm_table.c): written in
 * place when they fit, at the row's tail, or in a new allocation when the
 * row grows. Random sets, nulls and deletes of values from empty to 90
 * bytes over six regular cells of three rows and a static cell, each read
 * back whole after every write, against a model; with a partition
 * tombstone on the way.
 */
static void
test_packed_row_values(void **state)
{
	static const struct sm_column_def cols[] = {
		{ "pk", "int", SM_COL_PARTITION, false }, { "ck", "int", SM_COL_CLUSTERING, false },
		{ "a", "text", SM_COL_REGULAR, false },	  { "b", "text", SM_COL_REGULAR, false },
		{ "c", "text", SM_COL_REGULAR, false },	  { "d", "text", SM_COL_REGULAR, false },
		{ "e", "text", SM_COL_REGULAR, false },	  { "f", "text", SM_COL_REGULAR, false },
		{ "s", "text", SM_COL_STATIC, false },
	};
	static const char *const names[] = { "a", "b", "c", "d", "e", "f", "s" };
	char model[3][7][100], want[4096], v[100];
	bool set[3][7];
	uint64_t rng = 88172645463325252ull;
	unsigned step;

	(void)state;
	OPEN(cols);
	memset(set, 0, sizeof(set));
	for (step = 0; step < 1500; step++) {
		unsigned row, mrow, col, len, i, k;
		size_t n = 0;

		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		row = (unsigned)(rng % 3);
		col = (unsigned)(rng >> 8) % 7;
		len = (unsigned)(rng >> 16) % 91;
		for (i = 0; i < len; i++)
			v[i] = (char)('a' + (step + i) % 26);
		v[len] = '\0';
		arena_used = 0;		   /* the values of earlier steps are stored by now */
		mrow = col == 6 ? 0 : row; /* the static cell is the partition's */
		if (step == 700) {
			DEL_PART(PK(1), 2 * step + 1);
			memset(set, 0, sizeof(set));
		} else if ((rng >> 24) % 8 == 0) {
			UPDATE(PK(1), CK((int)row), 2 * step + 1, 0, op_null(names[col]));
			set[mrow][col] = false;
		} else {
			UPDATE(PK(1), CK((int)row), 2 * step + 1, 0, op_set(names[col], T(v)));
			memcpy(model[mrow][col], v, len + 1);
			set[mrow][col] = true;
		}
		/* the rows with a live regular cell, each with the static cell */
		for (row = 0; row < 3; row++) {
			bool live = false;

			for (k = 0; k < 6; k++)
				live = live || set[row][k];
			if (!live)
				continue;
			n += (size_t)snprintf(want + n, sizeof(want) - n, "%s%u", n ? "\n" : "",
					      row);
			for (k = 0; k < 7; k++) {
				bool on = set[k == 6 ? 0 : row][k];

				n += (size_t)snprintf(want + n, sizeof(want) - n,
						      on ? "|'%s'" : "|null",
						      model[k == 6 ? 0 : row][k]);
			}
		}
		if (n == 0 && set[0][6])
			n += (size_t)snprintf(want, sizeof(want),
					      "null|null|null|null|null|null|null|'%s'",
					      model[0][6]);
		want[n] = '\0';
		if (strcmp(READ(PK(1), "ck,a,b,c,d,e,f,s"), want) != 0) {
			size_t at = 0;

			while (R.s[at] == want[at])
				at++;
			fail_msg("step %u: the read differs at byte %zu: '%.60s' where '%.60s' was "
				 "wanted",
				 step, at, R.s + at, want + at);
		}
	}
}

/* A value longer than a cell holds (2^30 - 1 bytes) is refused, nothing written. */
static void
test_value_too_long(void **state)
{
	struct sm_bytes huge = { arena, 1u << 30 };

	(void)state;
	open_basic();
	/* the length is checked before the bytes are read */
	FAILS(-EINVAL,
	      "Value of 1073741824 bytes for column v is longer than the maximum of 1073741823", 0,
	      PK(1), CK(1), 100, 0, op_set("w", I(1)), op_set("v", huge));
	CHECK(READ(PK(1), "ck,v,w"), "");
}

/* ---- the partition index ---- */

#define DIR_PARTS 3000

static struct {
	int64_t token[DIR_PARTS + 1];
	bool seen[DIR_PARTS];
	unsigned n;
} D;

static int
dir_sink(void *ctx, const struct sm_row_view *r)
{
	const uint8_t *k = r->pk->part[0].p;
	uint32_t pk = (uint32_t)k[0] << 24 | (uint32_t)k[1] << 16 | (uint32_t)k[2] << 8 | k[3];

	(void)ctx;
	assert_true(D.n < DIR_PARTS && pk < DIR_PARTS && !D.seen[pk]);
	D.seen[pk] = true;
	D.token[D.n++] = r->token;
	return 0;
}

/* Scan partitions with tokens above @after, @page rows a step; D gets them. */
static void
dir_scan(int64_t after, uint32_t page)
{
	uint16_t ids[MAXC];
	struct sm_select s;
	struct sm_scan_pos pos;
	int ret;

	memset(&D, 0, sizeof(D));
	sel_init(&s, NOKEY, "pk,v", ids);
	s.sink.row = dir_sink;
	s.range = true;
	s.token_start = after;
	s.token_end = INT64_MAX;
	memset(&pos, 0, sizeof(pos));
	do {
		uint32_t budget = page;
		int64_t next = 0;
		bool has_next = false;

		ret = sm_ptable_scan(F.pt, &s, &pos, INT64_MAX, &budget, F.now, &next, &has_next);
		assert_true(ret == 0 || ret == 1);
	} while (ret == 1);
}

/*
 * Thousands of partitions (the directory doubles from 16 slots nine
 * times): each found by its key, a scan returns each once in token order,
 * and a scan from any partition's token starts at the next one.
 */
static void
test_partition_index(void **state)
{
	static const struct sm_column_def cols[] = {
		{ "pk", "int", SM_COL_PARTITION, false },
		{ "v", "int", SM_COL_REGULAR, false },
	};
	static int64_t sorted[DIR_PARTS];
	unsigned i;

	(void)state;
	OPEN(cols);
	for (i = 0; i < DIR_PARTS; i++) {
		arena_used = 0;
		/* keys out of order: inserts land before, after and between */
		INSERT(PK((int)((i * 7919u) % DIR_PARTS)), NOKEY, 100, 0, op_set("v", I((int)i)));
	}
	assert_int_equal(sm_ptable_count(F.pt), DIR_PARTS);
	for (i = 0; i < DIR_PARTS; i++) {
		arena_used = 0;
		assert_int_equal(strlen(READ(PK((int)i), "pk")) > 0, 1);
	}
	dir_scan(INT64_MIN, 7);
	assert_int_equal(D.n, DIR_PARTS);
	for (i = 1; i < DIR_PARTS; i++)
		assert_true(D.token[i - 1] < D.token[i]);
	memcpy(sorted, D.token, sizeof(sorted));
	for (i = 0; i < DIR_PARTS; i += 97) {
		dir_scan(sorted[i], 1000);
		assert_int_equal(D.n, DIR_PARTS - 1 - i);
		if (D.n > 0)
			assert_true(D.token[0] == sorted[i + 1]);
	}
	/* below every token: all of them; from the last: none */
	dir_scan(sorted[0] - 1, 1000);
	assert_int_equal(D.n, DIR_PARTS);
	dir_scan(sorted[DIR_PARTS - 1], 1000);
	assert_int_equal(D.n, 0);
	/* TRUNCATE empties it, and it fills again */
	sm_ptable_truncate(F.pt);
	dir_scan(INT64_MIN, 1000);
	assert_int_equal(D.n, 0);
	arena_used = 0;
	INSERT(PK(5), NOKEY, 200, 0, op_set("v", I(5)));
	CHECK(READ(PK(5), "pk,v"), "5|5");
}

#define T_(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T_(test_lww_newer_timestamp_wins),
		T_(test_lww_tie_tombstone_beats_live),
		T_(test_lww_tie_greater_value_wins),
		T_(test_lww_tie_later_expiry_wins),
		T_(test_lww_any_arrival_order_same_result),
		T_(test_ttl_expiry_and_remaining),
		T_(test_ttl_row_marker),
		T_(test_ttl_default_time_to_live),
		T_(test_partition_tombstone),
		T_(test_row_tombstone),
		T_(test_replace_row),
		T_(test_cell_tombstone),
		T_(test_range_tombstone_bounds),
		T_(test_range_tombstone_vs_writes),
		T_(test_range_tombstone_desc),
		T_(test_insert_vs_update),
		T_(test_table_without_clustering),
		T_(test_static_columns),
		T_(test_static_only_partition),
		T_(test_counters),
		T_(test_counter_delete_hides_late_increment),
		T_(test_set_ops),
		T_(test_map_ops),
		T_(test_list_append_prepend),
		T_(test_list_appends_keep_statement_order),
		T_(test_large_collections),
		T_(test_list_remove_by_value),
		T_(test_list_index_ops),
		T_(test_list_index_errors),
		T_(test_collection_overwrite),
		T_(test_collection_ttl_and_writetime),
		T_(test_clustering_order_types),
		T_(test_composite_clustering_and_slices),
		T_(test_paging_matches_full_read),
		T_(test_paging_survives_writes_between_pages),
		T_(test_scan_paging_and_per_partition_limit),
		T_(test_validation_errors),
		T_(test_validation_counter_errors),
		T_(test_validation_collection_errors),
		T_(test_wide_table),
		T_(test_wide_table_limits),
		T_(test_packed_row_values),
		T_(test_value_too_long),
		T_(test_partition_index),
	};

	return cmocka_run_group_tests_name("store-semantics", tests, NULL, NULL);
}
