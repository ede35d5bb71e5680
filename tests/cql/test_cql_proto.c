/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sm_core.h"
#include "sm_cql_proto.h"
#include "sm_types.h"

#define S(s) sm_cql_str(s)

/*
 * Parse a test vector: hex digit pairs, spaces ignored, 'quoted' text copied
 * as ASCII. Returns the length; aborts the test on a malformed vector.
 */
static size_t
vec(const char *s, uint8_t *out, size_t cap)
{
	size_t n = 0;
	unsigned v;

	while (*s != '\0') {
		if (*s == ' ' || *s == '\n' || *s == '\t') {
			s++;
		} else if (*s == '\'') {
			for (s++; *s != '\'' && *s != '\0'; s++) {
				assert_true(n < cap);
				out[n++] = (uint8_t)*s;
			}
			assert_true(*s == '\'');
			s++;
		} else {
			assert_true(sscanf(s, "%2x", &v) == 1);
			assert_true(n < cap);
			out[n++] = (uint8_t)v;
			s += 2;
		}
	}
	return n;
}

static bool
bytes_eq(struct sm_bytes b, const void *p, size_t len)
{
	return b.len == len && (len == 0 || memcmp(b.p, p, len) == 0);
}

static bool
str_eq(struct sm_bytes b, const char *s)
{
	return bytes_eq(b, s, strlen(s));
}

static bool
inet_eq(const struct sm_cql_inet *a, const struct sm_cql_inet *b)
{
	return a->len == b->len && a->port == b->port && memcmp(a->addr, b->addr, a->len) == 0;
}

/* Header and body of the frame at @off in @b; asserts a valid v4 header. */
static const uint8_t *
frame_at(const struct sm_cql_buf *b, size_t off, struct sm_cql_frame_header *h)
{
	const char *why = NULL;
	bool resp;

	assert_true(b->len >= off + SM_CQL_HEADER_LEN);
	resp = (b->p[off] & SM_CQL_VERSION_DIR_MASK) != 0;
	assert_int_equal(sm_cql_frame_header_parse(b->p + off, b->len - off, resp, h, &why), 0);
	assert_null(why);
	assert_true(b->len >= off + SM_CQL_HEADER_LEN + h->length);
	return b->p + off + SM_CQL_HEADER_LEN;
}

static void
dec_req(const struct sm_cql_buf *b, size_t off, unsigned ext, struct sm_cql_request *req)
{
	struct sm_cql_frame_header h;
	const uint8_t *body = frame_at(b, off, &h);
	const char *why = "unset";

	assert_int_equal(h.version, SM_CQL_VERSION_REQUEST);
	assert_int_equal(sm_cql_request_decode(&h, body, h.length, ext, req, &why), 0);
	assert_null(why);
}

static void
dec_resp(const struct sm_cql_buf *b, size_t off, unsigned ext, struct sm_cql_response *resp)
{
	struct sm_cql_frame_header h;
	const uint8_t *body = frame_at(b, off, &h);
	const char *why = "unset";

	assert_int_equal(h.version, SM_CQL_VERSION_RESPONSE);
	assert_int_equal(sm_cql_response_decode(&h, body, h.length, ext, resp, &why), 0);
	assert_null(why);
}

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

/* ---------------------------------------------------------------------- */
/* Frame header                                                            */

static void
test_header(void **state)
{
	struct sm_cql_frame_header h;
	uint8_t v[16];
	const char *why;
	size_t n, i;

	(void)state;
	n = vec("04 02 1234 07 00000010", v, sizeof(v));
	for (i = 0; i < n; i++)
		assert_int_equal(sm_cql_frame_header_parse(v, i, false, &h, &why), -EAGAIN);
	assert_int_equal(sm_cql_frame_header_parse(v, n, false, &h, &why), 0);
	assert_null(why);
	assert_int_equal(h.version, 0x04);
	assert_int_equal(h.flags, SM_CQL_FLAG_TRACING);
	assert_int_equal(h.stream, 0x1234);
	assert_int_equal(h.opcode, SM_CQL_OP_QUERY);
	assert_int_equal(h.length, 16);

	/* A request where a client expects a response, and the reverse. */
	assert_int_equal(sm_cql_frame_header_parse(v, n, true, &h, &why), -EPROTO);
	assert_non_null(why);
	v[0] = 0x84;
	assert_int_equal(sm_cql_frame_header_parse(v, n, false, &h, &why), -EPROTO);
	assert_int_equal(sm_cql_frame_header_parse(v, n, true, &h, &why), 0);

	/* Negative stream ids are legal (events); negative lengths are not. */
	n = vec("84 00 ffff 0c 00000000", v, sizeof(v));
	assert_int_equal(sm_cql_frame_header_parse(v, n, true, &h, &why), 0);
	assert_int_equal(h.stream, -1);
	n = vec("04 00 0001 07 80000000", v, sizeof(v));
	assert_int_equal(sm_cql_frame_header_parse(v, n, false, &h, &why), -EPROTO);
	assert_non_null(why);

	/* Other versions: the stream is reported so the server can answer on it. */
	n = vec("05 00 0007 05 00000000", v, sizeof(v));
	assert_int_equal(sm_cql_frame_header_parse(v, n, false, &h, &why), -EPROTONOSUPPORT);
	assert_int_equal(h.version, 5);
	assert_int_equal(h.stream, 7);
	n = vec("42 00 0003 05 00000000", v, sizeof(v)); /* Python driver's DSE_V2 */
	assert_int_equal(sm_cql_frame_header_parse(v, n, false, &h, &why), -EPROTONOSUPPORT);
	assert_int_equal(h.version, 0x42);
	assert_int_equal(h.stream, 3);
	n = vec("03 00 0001 05 00000000", v, sizeof(v));
	assert_int_equal(sm_cql_frame_header_parse(v, n, false, &h, &why), -EPROTONOSUPPORT);
	/* v1/v2 have an 8-byte header with a one-byte stream. */
	n = vec("02 00 05 05 00000000", v, sizeof(v));
	assert_int_equal(sm_cql_frame_header_parse(v, n - 1, false, &h, &why), -EAGAIN);
	assert_int_equal(sm_cql_frame_header_parse(v, n, false, &h, &why), -EPROTONOSUPPORT);
	assert_int_equal(h.stream, 5);

	assert_string_equal(sm_cql_opcode_name(SM_CQL_OP_AUTH_SUCCESS), "AUTH_SUCCESS");
	assert_null(sm_cql_opcode_name(0x04));
	assert_null(sm_cql_opcode_name(0x11));
	assert_string_equal(sm_cql_consistency_name(SM_CQL_LOCAL_ONE), "LOCAL_ONE");
	assert_null(sm_cql_consistency_name(11));
}

/* ---------------------------------------------------------------------- */
/* Reader and writer primitives                                            */

static void
test_reader_primitives(void **state)
{
	struct sm_cql_reader r;
	struct sm_cql_value val;
	struct sm_cql_inet a;
	struct sm_cql_strlist l;
	struct sm_cql_strmap m;
	struct sm_cql_iter it;
	struct sm_bytes k, s;
	uint8_t v[128];
	size_t n;

	(void)state;
	n = vec("7f 8001 fffffffe 8000000000000001 0003 'abc' 00000002 'hi'"
		" 00112233445566778899aabbccddeeff 00000002 beef ffffffff fffffff0 0001 ab"
		" 000a 04 7f000001 00002352 10 00000000000000000000000000000001",
		v, sizeof(v));
	sm_cql_reader_init(&r, v, n);
	assert_int_equal(sm_cql_read_byte(&r), 0x7f);
	assert_int_equal(sm_cql_read_short(&r), 0x8001);
	assert_int_equal(sm_cql_read_int(&r), -2);
	assert_true(sm_cql_read_long(&r) == (int64_t)0x8000000000000001ull);
	assert_true(str_eq(sm_cql_read_string(&r), "abc"));
	assert_true(str_eq(sm_cql_read_long_string(&r), "hi"));
	s = sm_cql_read_uuid(&r);
	assert_int_equal(s.len, 16);
	assert_int_equal(s.p[15], 0xff);
	s = sm_cql_read_bytes(&r);
	assert_true(bytes_eq(s, "\xbe\xef", 2));
	s = sm_cql_read_bytes(&r);
	assert_null(s.p); /* -1: null */
	s = sm_cql_read_bytes(&r);
	assert_null(s.p); /* any negative: null, as the spec says */
	s = sm_cql_read_short_bytes(&r);
	assert_true(bytes_eq(s, "\xab", 1));
	assert_int_equal(sm_cql_read_consistency(&r), SM_CQL_LOCAL_ONE);
	sm_cql_read_inet(&r, &a);
	assert_int_equal(a.len, 4);
	assert_memory_equal(a.addr, "\x7f\x00\x00\x01", 4);
	assert_int_equal(a.port, 9042);
	sm_cql_read_inetaddr(&r, &a);
	assert_int_equal(a.len, 16);
	assert_int_equal(a.addr[15], 1);
	assert_true(sm_cql_reader_ok(&r));
	assert_int_equal(sm_cql_reader_left(&r), 0);

	/* Sticky: after one failure everything fails and reads zeros. */
	assert_int_equal(sm_cql_read_byte(&r), 0);
	assert_false(sm_cql_reader_ok(&r));
	assert_non_null(r.err);
	n = vec("00000001", v, sizeof(v));
	sm_cql_reader_init(&r, v, 2);
	assert_int_equal(sm_cql_read_int(&r), 0);
	assert_false(sm_cql_reader_ok(&r));
	sm_cql_reader_init(&r, v, n);
	sm_cql_reader_fail(&r, "x");
	assert_int_equal(sm_cql_read_int(&r), 0);
	assert_string_equal(r.err, "x");

	/* [value]: -1 null, -2 unset, below -2 malformed. */
	n = vec("ffffffff fffffffe 00000000 fffffffd 00000000", v, sizeof(v));
	sm_cql_reader_init(&r, v, n);
	sm_cql_read_value(&r, &val);
	assert_int_equal(val.state, SM_CQL_VALUE_NULL);
	sm_cql_read_value(&r, &val);
	assert_int_equal(val.state, SM_CQL_VALUE_UNSET);
	sm_cql_read_value(&r, &val);
	assert_int_equal(val.state, SM_CQL_VALUE_SET);
	assert_non_null(val.v.p); /* empty but not null */
	assert_int_equal(val.v.len, 0);
	assert_true(sm_cql_reader_ok(&r));
	sm_cql_read_value(&r, &val);
	assert_false(sm_cql_reader_ok(&r));

	/* Negative long string, bad inet length, unknown consistency. */
	n = vec("ffffffff", v, sizeof(v));
	sm_cql_reader_init(&r, v, n);
	(void)sm_cql_read_long_string(&r);
	assert_false(sm_cql_reader_ok(&r));
	n = vec("05 0102030405 00000000", v, sizeof(v));
	sm_cql_reader_init(&r, v, n);
	sm_cql_read_inet(&r, &a);
	assert_false(sm_cql_reader_ok(&r));
	n = vec("000b", v, sizeof(v));
	sm_cql_reader_init(&r, v, n);
	(void)sm_cql_read_consistency(&r);
	assert_false(sm_cql_reader_ok(&r));
	/* A string longer than what is left. */
	n = vec("0005 'abcd'", v, sizeof(v));
	sm_cql_reader_init(&r, v, n);
	s = sm_cql_read_string(&r);
	assert_null(s.p);
	assert_false(sm_cql_reader_ok(&r));

	/* Lists and maps validate everything up front. */
	n = vec("0002 0001 'a' 0002 'bc' 0001 0001 'k' 0001 'v'", v, sizeof(v));
	sm_cql_reader_init(&r, v, n);
	sm_cql_read_string_list(&r, &l);
	sm_cql_read_string_map(&r, &m);
	assert_true(sm_cql_reader_ok(&r));
	assert_int_equal(l.n, 2);
	assert_null(l.v);
	sm_cql_strlist_iter(&it, &l);
	assert_true(sm_cql_strlist_next(&it, &s) && str_eq(s, "a"));
	assert_true(sm_cql_strlist_next(&it, &s) && str_eq(s, "bc"));
	assert_false(sm_cql_strlist_next(&it, &s));
	assert_true(sm_cql_strmap_get(&m, "k", &s) && str_eq(s, "v"));
	assert_false(sm_cql_strmap_get(&m, "K", &s));
	sm_cql_strmap_iter(&it, &m);
	assert_true(sm_cql_strmap_next(&it, &k, &s));
	assert_false(sm_cql_strmap_next(&it, &k, &s));
	sm_cql_reader_init(&r, v, n - 1);
	sm_cql_read_string_list(&r, &l);
	sm_cql_read_string_map(&r, &m);
	assert_false(sm_cql_reader_ok(&r));
	assert_int_equal(m.n, 0);

	/* Empty input from a NULL pointer. */
	sm_cql_reader_init(&r, NULL, 0);
	assert_int_equal(sm_cql_reader_left(&r), 0);
	(void)sm_cql_read_byte(&r);
	assert_false(sm_cql_reader_ok(&r));
}

static void
test_writer_primitives(void **state)
{
	static const struct sm_bytes strs[] = { { (const uint8_t *)"x", 1 },
						{ (const uint8_t *)"yz", 2 } };
	static const struct sm_bytes kv[] = { { (const uint8_t *)"k", 1 },
					      { (const uint8_t *)"v", 1 } };
	static const struct sm_bytes bkv[] = {
		{ (const uint8_t *)"n", 1 }, { NULL, 0 }, { (const uint8_t *)"e", 1 }, SM_CQL_EMPTY
	};
	const struct sm_cql_multimap_entry me[] = {
		{ S("A"), { strs, { NULL, 0 }, 2 } },
		{ S("B"), { NULL, { NULL, 0 }, 0 } },
	};
	const struct sm_cql_strlist sl = { strs, { NULL, 0 }, 2 };
	const struct sm_cql_strmap sm = { kv, { NULL, 0 }, 1 };
	const struct sm_cql_multimap mm = { me, { NULL, 0 }, 2 };
	const struct sm_cql_bytesmap bm = { bkv, { NULL, 0 }, 2 };
	struct sm_cql_value val = { { (const uint8_t *)"\x01", 1 }, SM_CQL_VALUE_SET, { NULL, 0 } };
	struct sm_cql_inet a4 = { 4, { 10, 0, 0, 1 }, 9042 }, a;
	struct sm_cql_strlist l2;
	struct sm_cql_strmap m2;
	struct sm_cql_multimap mm2;
	struct sm_cql_bytesmap bm2;
	struct sm_cql_buf b;
	struct sm_cql_reader r;
	struct sm_cql_iter it;
	struct sm_bytes k, s;
	uint8_t uuid[16] = { 1, 2, 3 };
	char *big;

	(void)state;
	sm_cql_buf_init(&b);
	sm_cql_write_byte(&b, 0xfe);
	sm_cql_write_short(&b, 0xfffe);
	sm_cql_write_int(&b, INT32_MIN);
	sm_cql_write_long(&b, -3);
	sm_cql_write_string(&b, S("str"));
	sm_cql_write_long_string(&b, S("long"));
	sm_cql_write_uuid(&b, uuid);
	sm_cql_write_bytes(&b, (struct sm_bytes){ NULL, 0 });
	sm_cql_write_bytes(&b, SM_CQL_EMPTY);
	sm_cql_write_short_bytes(&b, S("sb"));
	sm_cql_write_value(&b, &val);
	val.state = SM_CQL_VALUE_UNSET;
	sm_cql_write_value(&b, &val);
	sm_cql_write_consistency(&b, SM_CQL_EACH_QUORUM);
	sm_cql_write_inet(&b, &a4);
	sm_cql_write_inetaddr(&b, &a4);
	sm_cql_write_string_list(&b, &sl);
	sm_cql_write_string_map(&b, &sm);
	sm_cql_write_string_multimap(&b, &mm);
	sm_cql_write_bytes_map(&b, &bm);
	assert_int_equal(b.err, 0);

	sm_cql_reader_init(&r, b.p, b.len);
	assert_int_equal(sm_cql_read_byte(&r), 0xfe);
	assert_int_equal(sm_cql_read_short(&r), 0xfffe);
	assert_int_equal(sm_cql_read_int(&r), INT32_MIN);
	assert_true(sm_cql_read_long(&r) == -3);
	assert_true(str_eq(sm_cql_read_string(&r), "str"));
	assert_true(str_eq(sm_cql_read_long_string(&r), "long"));
	assert_true(bytes_eq(sm_cql_read_uuid(&r), uuid, 16));
	assert_null(sm_cql_read_bytes(&r).p);
	s = sm_cql_read_bytes(&r);
	assert_true(s.p != NULL && s.len == 0);
	assert_true(str_eq(sm_cql_read_short_bytes(&r), "sb"));
	sm_cql_read_value(&r, &val);
	assert_true(val.state == SM_CQL_VALUE_SET && bytes_eq(val.v, "\x01", 1));
	sm_cql_read_value(&r, &val);
	assert_int_equal(val.state, SM_CQL_VALUE_UNSET);
	assert_int_equal(sm_cql_read_consistency(&r), SM_CQL_EACH_QUORUM);
	sm_cql_read_inet(&r, &a);
	assert_true(inet_eq(&a, &a4));
	sm_cql_read_inetaddr(&r, &a);
	assert_int_equal(a.port, 0);
	assert_memory_equal(a.addr, a4.addr, 4);
	sm_cql_read_string_list(&r, &l2);
	sm_cql_read_string_map(&r, &m2);
	sm_cql_read_string_multimap(&r, &mm2);
	sm_cql_read_bytes_map(&r, &bm2);
	assert_true(sm_cql_reader_ok(&r));
	assert_int_equal(sm_cql_reader_left(&r), 0);
	assert_int_equal(l2.n, 2);
	assert_true(sm_cql_strmap_get(&m2, "k", &s) && str_eq(s, "v"));
	assert_true(sm_cql_multimap_get(&mm2, "A", &l2) && l2.n == 2);
	sm_cql_strlist_iter(&it, &l2);
	assert_true(sm_cql_strlist_next(&it, &s) && str_eq(s, "x"));
	assert_true(sm_cql_multimap_get(&mm2, "B", &l2) && l2.n == 0);
	assert_false(sm_cql_multimap_get(&mm2, "C", &l2));
	sm_cql_bytesmap_iter(&it, &bm2);
	assert_true(sm_cql_bytesmap_next(&it, &k, &s) && str_eq(k, "n") && s.p == NULL);
	assert_true(sm_cql_bytesmap_next(&it, &k, &s) && str_eq(k, "e") && s.p && !s.len);
	assert_false(sm_cql_bytesmap_next(&it, &k, &s));

	/* Errors are sticky until reset. */
	big = sm_malloc(70000);
	assert_non_null(big);
	memset(big, 'a', 70000);
	sm_cql_buf_reset(&b);
	sm_cql_write_string(&b, (struct sm_bytes){ (const uint8_t *)big, 70000 });
	assert_int_equal(b.err, -EINVAL);
	sm_cql_write_byte(&b, 1);
	assert_int_equal(b.len, 0);
	sm_cql_buf_reset(&b);
	sm_cql_write_long_string(&b, (struct sm_bytes){ (const uint8_t *)big, 70000 });
	assert_int_equal(b.err, 0);
	assert_int_equal(b.len, 70004);
	sm_cql_buf_reset(&b);
	a4.len = 5;
	sm_cql_write_inet(&b, &a4);
	assert_int_equal(b.err, -EINVAL);
	sm_cql_buf_reset(&b);
	sm_cql_write_option(&b, NULL);
	assert_int_equal(b.err, -EINVAL);

	/* An empty append still returns memory. */
	sm_cql_buf_release(&b);
	assert_non_null(sm_cql_buf_append(&b, 0));
	sm_free(big);
	sm_cql_buf_release(&b);
	assert_null(b.p);
}

/* A failed frame is rolled back and the frames before it stay intact. */
static void
test_frame_rollback(void **state)
{
	struct sm_cql_buf b;
	struct sm_cql_response resp;
	struct sm_cql_error e = { .code = SM_CQL_ERR_WRITE_TIMEOUT,
				  .message = S("m"),
				  .write_type = SM_CQL_WT_UNKNOWN };
	size_t len;

	(void)state;
	sm_cql_buf_init(&b);
	assert_int_equal(sm_cql_enc_ready(&b, 1), 0);
	len = b.len;
	assert_int_equal(sm_cql_enc_error(&b, 2, &e), -EINVAL);
	assert_int_equal(b.len, len);
	assert_int_equal(b.err, 0);
	assert_int_equal(sm_cql_enc_result_void(&b, 3), 0);
	dec_resp(&b, 0, 0, &resp);
	assert_int_equal(resp.opcode, SM_CQL_OP_READY);
	dec_resp(&b, len, 0, &resp);
	assert_int_equal(resp.opcode, SM_CQL_OP_RESULT);
	assert_int_equal(resp.u.result.kind, SM_CQL_RESULT_VOID);
	sm_cql_buf_release(&b);
}

/* ---------------------------------------------------------------------- */
/* Hand-written vectors from the spec                                      */

static void
test_vector_startup(void **state)
{
	static const struct sm_bytes kv[] = { { (const uint8_t *)"CQL_VERSION", 11 },
					      { (const uint8_t *)"3.0.0", 5 } };
	const struct sm_cql_strmap opts = { kv, { NULL, 0 }, 1 };
	struct sm_cql_request req;
	struct sm_cql_buf b;
	struct sm_bytes s;
	uint8_t v[64];
	size_t n;

	(void)state;
	n = vec("04 00 0001 01 00000016 0001 000b 'CQL_VERSION' 0005 '3.0.0'", v, sizeof(v));
	sm_cql_buf_init(&b);
	assert_int_equal(sm_cql_enc_startup(&b, 1, &opts), 0);
	assert_int_equal(b.len, n);
	assert_memory_equal(b.p, v, n);
	dec_req(&b, 0, 0, &req);
	assert_int_equal(req.opcode, SM_CQL_OP_STARTUP);
	assert_int_equal(req.u.startup.n, 1);
	assert_true(sm_cql_strmap_get(&req.u.startup, "CQL_VERSION", &s) && str_eq(s, "3.0.0"));
	assert_false(sm_cql_strmap_get(&req.u.startup, "COMPRESSION", &s));
	sm_cql_buf_release(&b);
}

static void
test_vector_query_all_flags(void **state)
{
	const struct sm_cql_value vals[] = {
		{ { (const uint8_t *)"\x00\x00\x00\x2a", 4 }, SM_CQL_VALUE_SET, S("a") },
		{ { NULL, 0 }, SM_CQL_VALUE_NULL, S("b") },
		{ { NULL, 0 }, SM_CQL_VALUE_UNSET, S("c") },
	};
	const struct sm_cql_params p = {
		.consistency = SM_CQL_LOCAL_QUORUM,
		.flags = SM_CQL_QF_SKIP_METADATA | SM_CQL_QF_PAGE_SIZE | SM_CQL_QF_PAGING_STATE |
			 SM_CQL_QF_SERIAL_CONSISTENCY | SM_CQL_QF_TIMESTAMP,
		.values = { vals, { NULL, 0 }, 3, true },
		.page_size = 5000,
		.paging_state = { (const uint8_t *)"\x01\x02\x03", 3 },
		.serial_consistency = SM_CQL_LOCAL_SERIAL,
		.timestamp = 12345,
	};
	struct sm_cql_value got[4];
	const struct sm_cql_params *q;
	struct sm_cql_request req;
	struct sm_cql_buf b;
	uint8_t v[128];
	size_t n;

	(void)state;
	n = vec("04 00 0005 07 0000003f 00000008 'SELECT 1' 0006 7f 0003"
		" 0001 'a' 00000004 0000002a 0001 'b' ffffffff 0001 'c' fffffffe"
		" 00001388 00000003 010203 0009 0000000000003039",
		v, sizeof(v));
	sm_cql_buf_init(&b);
	assert_int_equal(sm_cql_enc_query(&b, 5, S("SELECT 1"), &p), 0);
	assert_int_equal(b.len, n);
	assert_memory_equal(b.p, v, n);

	dec_req(&b, 0, 0, &req);
	assert_int_equal(req.opcode, SM_CQL_OP_QUERY);
	assert_true(str_eq(req.u.query.query, "SELECT 1"));
	q = &req.u.query.params;
	assert_int_equal(q->consistency, SM_CQL_LOCAL_QUORUM);
	assert_int_equal(q->flags, 0x7f);
	assert_int_equal(q->values.n, 3);
	assert_true(q->values.named);
	assert_int_equal(q->page_size, 5000);
	assert_true(bytes_eq(q->paging_state, "\x01\x02\x03", 3));
	assert_int_equal(q->serial_consistency, SM_CQL_LOCAL_SERIAL);
	assert_true(q->timestamp == 12345);
	assert_int_equal(sm_cql_values_get(&q->values, got, 2), -ENOSPC);
	assert_int_equal(sm_cql_values_get(&q->values, got, 4), 3);
	assert_true(str_eq(got[0].name, "a") && got[0].state == SM_CQL_VALUE_SET);
	assert_true(bytes_eq(got[0].v, "\x00\x00\x00\x2a", 4));
	assert_true(str_eq(got[1].name, "b") && got[1].state == SM_CQL_VALUE_NULL);
	assert_true(str_eq(got[2].name, "c") && got[2].state == SM_CQL_VALUE_UNSET);

	/* The decoded request re-encodes to the same bytes. */
	sm_cql_buf_reset(&b);
	assert_int_equal(sm_cql_enc_query(&b, 5, req.u.query.query, q), 0);
	assert_int_equal(b.len, n);
	assert_memory_equal(b.p, v, n);
	sm_cql_buf_release(&b);
}

static void
test_vector_execute(void **state)
{
	static const uint8_t id[16] = { 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
					0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff };
	const struct sm_cql_value vals[] = {
		{ { (const uint8_t *)"\x00\x00\x00\x2a", 4 }, SM_CQL_VALUE_SET, { NULL, 0 } },
	};
	const struct sm_cql_params p = {
		.consistency = SM_CQL_LOCAL_ONE,
		.flags = SM_CQL_QF_PAGE_SIZE | SM_CQL_QF_TIMESTAMP,
		.values = { vals, { NULL, 0 }, 1, false },
		.page_size = 5000,
		.timestamp = 12345,
	};
	struct sm_cql_request req;
	struct sm_cql_value got;
	struct sm_cql_iter it;
	struct sm_cql_buf b;
	uint8_t v[128];
	size_t n;

	(void)state;
	/* What the Python driver sends for a bound statement: flags 0x25. */
	n = vec("04 00 0002 0a 0000002b 0010 00112233445566778899aabbccddeeff"
		" 000a 25 0001 00000004 0000002a 00001388 0000000000003039",
		v, sizeof(v));
	sm_cql_buf_init(&b);
	assert_int_equal(sm_cql_enc_execute(&b, 2, (struct sm_bytes){ id, 16 },
					    (struct sm_bytes){ NULL, 0 }, &p),
			 0);
	assert_int_equal(b.len, n);
	assert_memory_equal(b.p, v, n);
	dec_req(&b, 0, 0, &req);
	assert_int_equal(req.opcode, SM_CQL_OP_EXECUTE);
	assert_true(bytes_eq(req.u.execute.id, id, 16));
	assert_null(req.u.execute.result_metadata_id.p);
	assert_int_equal(req.u.execute.params.flags, 0x25);
	assert_int_equal(req.u.execute.params.serial_consistency, SM_CQL_SERIAL);
	assert_null(req.u.execute.params.paging_state.p);
	sm_cql_values_iter(&it, &req.u.execute.params.values);
	assert_true(sm_cql_values_next(&it, &got));
	assert_null(got.name.p);
	assert_true(bytes_eq(got.v, "\x00\x00\x00\x2a", 4));
	assert_false(sm_cql_values_next(&it, &got));

	/* SCYLLA_USE_METADATA_ID: a result metadata id follows the id. */
	sm_cql_buf_reset(&b);
	assert_int_equal(sm_cql_enc_execute(&b, 2, (struct sm_bytes){ id, 16 }, S("md"), &p), 0);
	assert_int_equal(b.len, n + 4);
	dec_req(&b, 0, SM_CQL_EXT_METADATA_ID, &req);
	assert_true(str_eq(req.u.execute.result_metadata_id, "md"));
	assert_true(req.u.execute.params.timestamp == 12345);
	sm_cql_buf_release(&b);
}

static void
test_vector_batch(void **state)
{
	const struct sm_cql_value vals[] = {
		{ { (const uint8_t *)"\x00\x00\x00\x07", 4 }, SM_CQL_VALUE_SET, { NULL, 0 } },
		{ { NULL, 0 }, SM_CQL_VALUE_UNSET, { NULL, 0 } },
	};
	const struct sm_cql_batch_stmt stmts[] = {
		{ SM_CQL_BATCH_KIND_QUERY, { (const uint8_t *)"UPDATE t SET v=1", 16 }, { 0 } },
		{ SM_CQL_BATCH_KIND_PREPARED,
		  { (const uint8_t *)"\xde\xad\xbe\xef", 4 },
		  { vals, { NULL, 0 }, 2, false } },
	};
	const struct sm_cql_batch bt = {
		.type = SM_CQL_BATCH_UNLOGGED,
		.stmts = stmts,
		.n = 2,
		.consistency = SM_CQL_QUORUM,
		.flags = SM_CQL_QF_SERIAL_CONSISTENCY | SM_CQL_QF_TIMESTAMP,
		.serial_consistency = SM_CQL_LOCAL_SERIAL,
		.timestamp = 12345,
	};
	struct sm_cql_frame_header h;
	struct sm_cql_batch_stmt s;
	struct sm_cql_request req;
	struct sm_cql_value got[2];
	struct sm_cql_iter it;
	struct sm_cql_buf b;
	const char *why;
	uint8_t v[128];
	size_t n;

	(void)state;
	n = vec("04 00 0003 0d 0000003c 01 0002"
		" 00 00000010 'UPDATE t SET v=1' 0000"
		" 01 0004 deadbeef 0002 00000004 00000007 fffffffe"
		" 0004 30 0009 0000000000003039",
		v, sizeof(v));
	sm_cql_buf_init(&b);
	assert_int_equal(sm_cql_enc_batch(&b, 3, &bt), 0);
	assert_int_equal(b.len, n);
	assert_memory_equal(b.p, v, n);

	dec_req(&b, 0, 0, &req);
	assert_int_equal(req.opcode, SM_CQL_OP_BATCH);
	assert_int_equal(req.u.batch.type, SM_CQL_BATCH_UNLOGGED);
	assert_int_equal(req.u.batch.n, 2);
	assert_int_equal(req.u.batch.consistency, SM_CQL_QUORUM);
	assert_int_equal(req.u.batch.serial_consistency, SM_CQL_LOCAL_SERIAL);
	assert_true(req.u.batch.timestamp == 12345);
	sm_cql_batch_iter(&it, &req.u.batch);
	assert_true(sm_cql_batch_next(&it, &s));
	assert_int_equal(s.kind, SM_CQL_BATCH_KIND_QUERY);
	assert_true(str_eq(s.query_or_id, "UPDATE t SET v=1"));
	assert_int_equal(s.values.n, 0);
	assert_true(sm_cql_batch_next(&it, &s));
	assert_int_equal(s.kind, SM_CQL_BATCH_KIND_PREPARED);
	assert_true(bytes_eq(s.query_or_id, "\xde\xad\xbe\xef", 4));
	assert_int_equal(sm_cql_values_get(&s.values, got, 2), 2);
	assert_true(bytes_eq(got[0].v, "\x00\x00\x00\x07", 4));
	assert_int_equal(got[1].state, SM_CQL_VALUE_UNSET);
	assert_false(sm_cql_batch_next(&it, &s));

	/* A count below the statements sent leaves bytes after the options:
	 * refused, not run in part. A count above them runs out of body. */
	{
		struct sm_cql_frame_header bh;
		struct sm_cql_request req2;
		uint8_t w[128];
		size_t wn = vec("04 00 0003 0d 00000034 01 0001"
				" 00 00000010 'UPDATE t SET v=1' 0000"
				" 00 00000010 'UPDATE t SET v=2' 0000"
				" 0004 00",
				w, sizeof(w));

		assert_int_equal(sm_cql_frame_header_parse(w, wn, false, &bh, &why), 0);
		assert_int_equal(sm_cql_request_decode(&bh, w + 9, wn - 9, 0, &req2, &why),
				 -EPROTO);
		assert_non_null(strstr(why, "statement count is less"));
		w[11] = 3;
		assert_int_equal(sm_cql_request_decode(&bh, w + 9, wn - 9, 0, &req2, &why),
				 -EPROTO);
		w[11] = 2;
		assert_int_equal(sm_cql_request_decode(&bh, w + 9, wn - 9, 0, &req2, &why), 0);
	}

	/* Re-encoding the decoded batch gives the same bytes. */
	sm_cql_buf_reset(&b);
	assert_int_equal(sm_cql_enc_batch(&b, 3, &req.u.batch), 0);
	assert_int_equal(b.len, n);
	assert_memory_equal(b.p, v, n);

	/* Named values (0x40), a statement kind 2, a batch type 3 are refused. */
	n = vec("04 00 0003 0d 00000009 00 0000 0001 40", v, sizeof(v));
	assert_int_equal(sm_cql_frame_header_parse(v, n, false, &h, &why), 0);
	assert_int_equal(sm_cql_request_decode(&h, v + 9, h.length, 0, &req, &why), -EPROTO);
	assert_non_null(why);
	n = vec("04 00 0003 0d 0000000c 00 0001 02 0000 0000 0001 00", v, sizeof(v));
	assert_int_equal(sm_cql_frame_header_parse(v, n, false, &h, &why), 0);
	assert_int_equal(sm_cql_request_decode(&h, v + 9, h.length, 0, &req, &why), -EPROTO);
	n = vec("04 00 0003 0d 00000006 03 0000 0001 00", v, sizeof(v));
	assert_int_equal(sm_cql_frame_header_parse(v, n, false, &h, &why), 0);
	assert_int_equal(sm_cql_request_decode(&h, v + 9, h.length, 0, &req, &why), -EPROTO);
	/* The same with type 0 is fine. */
	v[9] = 0;
	assert_int_equal(sm_cql_request_decode(&h, v + 9, h.length, 0, &req, &why), 0);
	assert_int_equal(req.u.batch.n, 0);
	sm_cql_buf_release(&b);
}

static void
test_vector_error_unprepared(void **state)
{
	struct sm_cql_error e = {
		.code = SM_CQL_ERR_UNPREPARED,
		.message = S("unprepared"),
		.id = { (const uint8_t *)"\x01\x02", 2 },
	};
	struct sm_cql_response resp;
	struct sm_cql_buf b;
	uint8_t v[64];
	size_t n;

	(void)state;
	n = vec("84 00 0005 00 00000014 00002500 000a 'unprepared' 0002 0102", v, sizeof(v));
	sm_cql_buf_init(&b);
	assert_int_equal(sm_cql_enc_error(&b, 5, &e), 0);
	assert_int_equal(b.len, n);
	assert_memory_equal(b.p, v, n);
	dec_resp(&b, 0, 0, &resp);
	assert_int_equal(resp.opcode, SM_CQL_OP_ERROR);
	assert_int_equal(resp.u.error.code, SM_CQL_ERR_UNPREPARED);
	assert_true(str_eq(resp.u.error.message, "unprepared"));
	assert_true(bytes_eq(resp.u.error.id, "\x01\x02", 2));
	sm_cql_buf_release(&b);
}

static void
test_vector_rows(void **state)
{
	const struct sm_type *tl = NULL, *tm = NULL, *t = NULL;
	struct sm_cql_colspec cols[2];
	struct sm_cql_metadata meta;
	struct sm_cql_rows_writer w;
	struct sm_cql_response resp;
	struct sm_cql_colspec cs;
	struct sm_cql_iter it;
	struct sm_cql_buf b;
	struct sm_bytes cell;
	uint8_t v[128];
	char err[64];
	size_t n;

	(void)state;
	assert_int_equal(sm_type_parse("list<int>", &tl, err, sizeof(err)), 0);
	assert_int_equal(sm_type_parse("map<text, int>", &tm, err, sizeof(err)), 0);
	memset(cols, 0, sizeof(cols));
	cols[0].name = S("l");
	cols[0].type = tl;
	cols[1].name = S("m");
	cols[1].type = tm;
	memset(&meta, 0, sizeof(meta));
	meta.ks = S("ks");
	meta.table = S("t");
	meta.cols = cols;
	meta.ncols = 2;

	n = vec("84 00 0009 08 0000004c 00000002"
		" 00000001 00000002 0002 'ks' 0001 't'"
		" 0001 'l' 0020 0009"
		" 0001 'm' 0021 000d 0009"
		" 00000001"
		" 0000000c 00000001 00000004 00000001"
		" 00000011 00000001 00000001 'a' 00000004 00000001",
		v, sizeof(v));
	sm_cql_buf_init(&b);
	assert_int_equal(sm_cql_rows_begin(&w, &b, 9, &meta), 0);
	sm_cql_rows_cell(&w, (struct sm_bytes){ (const uint8_t *)"\0\0\0\1\0\0\0\4\0\0\0\1", 12 });
	memcpy(sm_cql_rows_cell_space(&w, 17), "\0\0\0\1\0\0\0\1a\0\0\0\4\0\0\0\1", 17);
	assert_int_equal(sm_cql_rows_count(&w), 1);
	assert_int_equal(sm_cql_rows_end(&w, NULL), 0);
	assert_int_equal(b.len, n);
	assert_memory_equal(b.p, v, n);

	dec_resp(&b, 0, 0, &resp);
	assert_int_equal(resp.u.result.kind, SM_CQL_RESULT_ROWS);
	assert_int_equal(resp.u.result.u.rows.meta.flags, SM_CQL_META_GLOBAL_TABLES_SPEC);
	assert_int_equal(resp.u.result.u.rows.meta.ncols, 2);
	assert_int_equal(resp.u.result.u.rows.nrows, 1);
	sm_cql_colspec_iter(&it, &resp.u.result.u.rows.meta);
	assert_true(sm_cql_colspec_next(&it, &cs));
	assert_true(str_eq(cs.ks, "ks") && str_eq(cs.table, "t") && str_eq(cs.name, "l"));
	assert_int_equal(cs.type_id, 0x0020);
	assert_int_equal(sm_cql_option_to_type(cs.type_raw, &t), 0);
	assert_true(sm_type_equal(t, tl));
	sm_type_free(t);
	assert_true(sm_cql_colspec_next(&it, &cs));
	assert_true(str_eq(cs.name, "m"));
	assert_int_equal(cs.type_id, 0x0021);
	assert_int_equal(sm_cql_option_to_type(cs.type_raw, &t), 0);
	assert_true(sm_type_equal(t, tm));
	sm_type_free(t);
	assert_false(sm_cql_colspec_next(&it, &cs));
	sm_cql_cells_iter(&it, &resp.u.result.u.rows);
	assert_true(sm_cql_cells_next(&it, &cell));
	assert_int_equal(cell.len, 12);
	assert_true(sm_cql_cells_next(&it, &cell));
	assert_int_equal(cell.len, 17);
	assert_int_equal(sm_cql_iter_index(&it), 2);
	assert_false(sm_cql_cells_next(&it, &cell));

	sm_type_free(tl);
	sm_type_free(tm);
	sm_cql_buf_release(&b);
}

static void
test_option_to_type(void **state)
{
	static const char *const types[] = {
		"ascii",
		"bigint",
		"blob",
		"boolean",
		"counter",
		"decimal",
		"double",
		"float",
		"int",
		"timestamp",
		"uuid",
		"text",
		"varint",
		"timeuuid",
		"inet",
		"date",
		"time",
		"smallint",
		"tinyint",
		"duration",
		"set<int>",
		"map<text, frozen<list<int>>>",
		"list<frozen<set<uuid>>>",
	};
	const struct sm_type *a, *t;
	struct sm_cql_reader r;
	struct sm_cql_buf b;
	struct sm_bytes o;
	uint8_t v[256];
	char err[64];
	size_t i, n;
	uint16_t id;

	(void)state;
	sm_cql_buf_init(&b);
	for (i = 0; i < SM_ARRAY_SIZE(types); i++) {
		assert_int_equal(sm_type_parse(types[i], &a, err, sizeof(err)), 0);
		sm_cql_buf_reset(&b);
		sm_cql_write_option(&b, a);
		assert_int_equal(b.err, 0);
		sm_cql_reader_init(&r, b.p, b.len);
		o = sm_cql_read_option(&r, &id);
		assert_true(sm_cql_reader_ok(&r));
		assert_int_equal(o.len, b.len);
		assert_int_equal(id, sm_type_cql_id(a));
		assert_int_equal(sm_cql_option_to_type(o, &t), 0);
		assert_true(sm_type_equal(t, a));
		sm_type_free(t);
		sm_type_free(a);
	}

	/* Custom, UDT and tuple options are valid on the wire but have no store type. */
	n = vec("0000 0003 'Foo'", v, sizeof(v));
	sm_cql_reader_init(&r, v, n);
	o = sm_cql_read_option(&r, &id);
	assert_true(sm_cql_reader_ok(&r) && o.len == n && id == 0);
	assert_int_equal(sm_cql_option_to_type(o, &t), -ENOTSUP);
	n = vec("0030 0002 'ks' 0001 'u' 0002 0001 'a' 0009 0001 'b' 0020 000d", v, sizeof(v));
	sm_cql_reader_init(&r, v, n);
	o = sm_cql_read_option(&r, &id);
	assert_true(sm_cql_reader_ok(&r) && o.len == n);
	assert_int_equal(sm_cql_option_to_type(o, &t), -ENOTSUP);
	n = vec("0031 0002 0009 0022 0001", v, sizeof(v));
	sm_cql_reader_init(&r, v, n);
	o = sm_cql_read_option(&r, &id);
	assert_true(sm_cql_reader_ok(&r) && o.len == n);
	assert_int_equal(sm_cql_option_to_type(o, &t), -ENOTSUP);
	n = vec("0020 0031 0001 0030 0002 'ks'", v, sizeof(v));
	sm_cql_reader_init(&r, v, n);
	(void)sm_cql_read_option(&r, &id);
	assert_false(sm_cql_reader_ok(&r));

	/* Unknown ids (0x000A was v1's text), and nesting beyond the limit. */
	n = vec("000a", v, sizeof(v));
	sm_cql_reader_init(&r, v, n);
	(void)sm_cql_read_option(&r, &id);
	assert_false(sm_cql_reader_ok(&r));
	assert_int_equal(sm_cql_option_to_type((struct sm_bytes){ v, 2 }, &t), -EPROTO);
	n = vec("0016", v, sizeof(v));
	sm_cql_reader_init(&r, v, n);
	(void)sm_cql_read_option(&r, &id);
	assert_false(sm_cql_reader_ok(&r));
	for (i = 0; i < 40; i++) {
		v[2 * i] = 0x00;
		v[2 * i + 1] = 0x20;
	}
	v[80] = 0;
	v[81] = 9;
	sm_cql_reader_init(&r, v, 82);
	(void)sm_cql_read_option(&r, &id);
	assert_false(sm_cql_reader_ok(&r));
	assert_int_equal(sm_cql_option_to_type((struct sm_bytes){ v, 82 }, &t), -EPROTO);
	/* 32 levels are fine. */
	sm_cql_reader_init(&r, v + 2 * 8, 82 - 2 * 8);
	(void)sm_cql_read_option(&r, &id);
	assert_true(sm_cql_reader_ok(&r));
	/* A counter inside a collection is not a type. */
	n = vec("0020 0005", v, sizeof(v));
	assert_int_equal(sm_cql_option_to_type((struct sm_bytes){ v, (uint32_t)n }, &t), -EPROTO);
	sm_cql_buf_release(&b);
}

/* ---------------------------------------------------------------------- */
/* Round trips: client encoder -> server decoder                           */

static void
test_roundtrip_requests(void **state)
{
	static const struct sm_bytes kv[] = {
		{ (const uint8_t *)"CQL_VERSION", 11 }, { (const uint8_t *)"3.0.0", 5 },
		{ (const uint8_t *)"COMPRESSION", 11 }, { (const uint8_t *)"lz4", 3 },
		{ (const uint8_t *)"DRIVER_NAME", 11 }, { (const uint8_t *)"shardmark", 9 },
	};
	static const struct sm_bytes evs[] = {
		{ (const uint8_t *)"TOPOLOGY_CHANGE", 15 },
		{ (const uint8_t *)"STATUS_CHANGE", 13 },
		{ (const uint8_t *)"SCHEMA_CHANGE", 13 },
	};
	static const struct sm_bytes pl[] = { { (const uint8_t *)"k", 1 },
					      { (const uint8_t *)"v", 1 } };
	const struct sm_cql_strmap opts = { kv, { NULL, 0 }, 3 };
	const struct sm_cql_strlist events = { evs, { NULL, 0 }, 3 };
	const struct sm_cql_bytesmap payload = { pl, { NULL, 0 }, 1 };
	const struct sm_cql_params plain = { .consistency = SM_CQL_ONE };
	struct sm_cql_frame_header h;
	struct sm_cql_request req;
	struct sm_cql_iter it;
	struct sm_cql_buf b;
	struct sm_bytes s, k;
	const char *why;
	size_t off[16];
	uint8_t v[32];
	int i = 0, e;
	size_t n;

	(void)state;
	sm_cql_buf_init(&b);
	off[i++] = b.len;
	assert_int_equal(sm_cql_enc_startup(&b, 0, &opts), 0);
	off[i++] = b.len;
	assert_int_equal(sm_cql_enc_options(&b, 1), 0);
	off[i++] = b.len;
	assert_int_equal(sm_cql_enc_query(&b, 2, S("SELECT * FROM system.local"), &plain), 0);
	off[i++] = b.len;
	assert_int_equal(sm_cql_enc_prepare(&b, 3, S("SELECT v FROM ks.t WHERE k = ?")), 0);
	off[i++] = b.len;
	assert_int_equal(sm_cql_enc_register(&b, 4, &events), 0);
	off[i++] = b.len;
	assert_int_equal(sm_cql_enc_auth_response(
				 &b, 5, (struct sm_bytes){ (const uint8_t *)"\0user\0pass", 10 }),
			 0);
	off[i++] = b.len;
	assert_int_equal(sm_cql_enc_auth_response(&b, 6, (struct sm_bytes){ NULL, 0 }), 0);
	off[i++] = b.len;
	/* A request with a custom payload ahead of its body. */
	off[i] = sm_cql_frame_begin(&b, SM_CQL_VERSION_REQUEST, SM_CQL_FLAG_CUSTOM_PAYLOAD, 7,
				    SM_CQL_OP_PREPARE);
	sm_cql_write_bytes_map(&b, &payload);
	sm_cql_write_long_string(&b, S("SELECT 1"));
	assert_int_equal(sm_cql_frame_end(&b, off[i]), 0);

	dec_req(&b, off[0], 0, &req);
	assert_int_equal(req.opcode, SM_CQL_OP_STARTUP);
	assert_int_equal(req.u.startup.n, 3);
	assert_true(sm_cql_strmap_get(&req.u.startup, "COMPRESSION", &s) && str_eq(s, "lz4"));
	assert_true(sm_cql_strmap_get(&req.u.startup, "DRIVER_NAME", &s) && str_eq(s, "shardmark"));
	sm_cql_strmap_iter(&it, &req.u.startup);
	n = 0;
	while (sm_cql_strmap_next(&it, &k, &s))
		n++;
	assert_int_equal(n, 3);

	dec_req(&b, off[1], 0, &req);
	assert_int_equal(req.opcode, SM_CQL_OP_OPTIONS);
	(void)frame_at(&b, off[1], &h);
	assert_int_equal(h.length, 0);
	assert_int_equal(h.stream, 1);

	dec_req(&b, off[2], 0, &req);
	assert_int_equal(req.opcode, SM_CQL_OP_QUERY);
	assert_true(str_eq(req.u.query.query, "SELECT * FROM system.local"));
	assert_int_equal(req.u.query.params.consistency, SM_CQL_ONE);
	assert_int_equal(req.u.query.params.flags, 0);
	assert_int_equal(req.u.query.params.values.n, 0);
	assert_int_equal(req.u.query.params.page_size, -1);
	assert_null(req.u.query.params.paging_state.p);
	assert_int_equal(req.u.query.params.serial_consistency, SM_CQL_SERIAL);
	assert_true(req.u.query.params.timestamp == INT64_MIN);

	dec_req(&b, off[3], 0, &req);
	assert_int_equal(req.opcode, SM_CQL_OP_PREPARE);
	assert_true(str_eq(req.u.prepare, "SELECT v FROM ks.t WHERE k = ?"));
	assert_int_equal(req.custom_payload.n, 0);

	dec_req(&b, off[4], 0, &req);
	assert_int_equal(req.opcode, SM_CQL_OP_REGISTER);
	assert_int_equal(req.u.register_events.n, 3);
	sm_cql_strlist_iter(&it, &req.u.register_events);
	for (e = 0; e < 3; e++) {
		assert_true(sm_cql_strlist_next(&it, &s));
		assert_int_equal(sm_cql_event_type_parse(s), e);
	}
	assert_int_equal(sm_cql_event_type_parse(S("NOPE")), -EINVAL);

	dec_req(&b, off[5], 0, &req);
	assert_int_equal(req.opcode, SM_CQL_OP_AUTH_RESPONSE);
	assert_true(bytes_eq(req.u.auth_token, "\0user\0pass", 10));
	dec_req(&b, off[6], 0, &req);
	assert_null(req.u.auth_token.p);

	dec_req(&b, off[7], 0, &req);
	assert_int_equal(req.opcode, SM_CQL_OP_PREPARE);
	assert_int_equal(req.custom_payload.n, 1);
	sm_cql_bytesmap_iter(&it, &req.custom_payload);
	assert_true(sm_cql_bytesmap_next(&it, &k, &s));
	assert_true(str_eq(k, "k") && str_eq(s, "v"));
	assert_true(str_eq(req.u.prepare, "SELECT 1"));

	/* Unknown opcodes, and response opcodes, are protocol errors. */
	n = vec("04 00 0001 04 00000000", v, sizeof(v));
	assert_int_equal(sm_cql_frame_header_parse(v, n, false, &h, &why), 0);
	assert_int_equal(sm_cql_request_decode(&h, v + 9, 0, 0, &req, &why), -EPROTO);
	assert_non_null(why);
	h.opcode = SM_CQL_OP_READY;
	assert_int_equal(sm_cql_request_decode(&h, v + 9, 0, 0, &req, &why), -EPROTO);
	h.opcode = 0x42;
	assert_int_equal(sm_cql_request_decode(&h, v + 9, 0, 0, &req, &why), -EPROTO);
	sm_cql_buf_release(&b);
}

/* ---------------------------------------------------------------------- */
/* Round trips: server encoder -> client decoder                           */

static void
check_error_roundtrip(struct sm_cql_buf *b, const struct sm_cql_error *e)
{
	struct sm_cql_response resp;
	const struct sm_cql_error *d;
	struct sm_bytes s1, s2;
	struct sm_cql_iter i1, i2;

	sm_cql_buf_reset(b);
	assert_int_equal(sm_cql_enc_error(b, 11, e), 0);
	dec_resp(b, 0, 0, &resp);
	assert_int_equal(resp.opcode, SM_CQL_OP_ERROR);
	d = &resp.u.error;
	assert_int_equal(d->code, e->code);
	assert_true(bytes_eq(d->message, e->message.p, e->message.len));
	assert_int_equal(d->consistency, e->consistency);
	assert_int_equal(d->required, e->required);
	assert_int_equal(d->alive, e->alive);
	assert_int_equal(d->received, e->received);
	assert_int_equal(d->blockfor, e->blockfor);
	assert_int_equal(d->numfailures, e->numfailures);
	assert_int_equal(d->data_present, e->data_present);
	assert_int_equal(d->write_type, e->write_type);
	assert_true(bytes_eq(d->keyspace, e->keyspace.p, e->keyspace.len));
	assert_true(bytes_eq(d->name, e->name.p, e->name.len));
	assert_true(bytes_eq(d->id, e->id.p, e->id.len));
	assert_int_equal(d->op_type, e->op_type);
	assert_int_equal(d->rejected_by_coordinator, e->rejected_by_coordinator);
	assert_int_equal(d->arg_types.n, e->arg_types.n);
	sm_cql_strlist_iter(&i1, &d->arg_types);
	sm_cql_strlist_iter(&i2, &e->arg_types);
	while (sm_cql_strlist_next(&i2, &s2)) {
		assert_true(sm_cql_strlist_next(&i1, &s1));
		assert_true(bytes_eq(s1, s2.p, s2.len));
	}
}

static void
test_roundtrip_errors(void **state)
{
	static const struct sm_bytes args[] = { { (const uint8_t *)"int", 3 },
						{ (const uint8_t *)"text", 4 } };
	static const int32_t plain_codes[] = {
		SM_CQL_ERR_SERVER,
		SM_CQL_ERR_PROTOCOL,
		SM_CQL_ERR_BAD_CREDENTIALS,
		SM_CQL_ERR_OVERLOADED,
		SM_CQL_ERR_IS_BOOTSTRAPPING,
		SM_CQL_ERR_TRUNCATE,
		SM_CQL_ERR_CDC_WRITE_FAILURE,
		SM_CQL_ERR_SYNTAX,
		SM_CQL_ERR_UNAUTHORIZED,
		SM_CQL_ERR_INVALID,
		SM_CQL_ERR_CONFIG,
	};
	struct sm_cql_response resp;
	struct sm_cql_error e;
	struct sm_cql_buf b;
	uint8_t *msg;
	size_t i;

	(void)state;
	sm_cql_buf_init(&b);
	for (i = 0; i < SM_ARRAY_SIZE(plain_codes); i++) {
		e = (struct sm_cql_error){ .code = plain_codes[i], .message = S("boom") };
		check_error_roundtrip(&b, &e);
	}
	e = (struct sm_cql_error){ .code = SM_CQL_ERR_UNAVAILABLE,
				   .message = S("Cannot achieve consistency level QUORUM"),
				   .consistency = SM_CQL_QUORUM,
				   .required = 2,
				   .alive = 1 };
	check_error_roundtrip(&b, &e);
	e = (struct sm_cql_error){ .code = SM_CQL_ERR_WRITE_TIMEOUT,
				   .message = S("wt"),
				   .consistency = SM_CQL_SERIAL,
				   .received = 1,
				   .blockfor = 2,
				   .write_type = SM_CQL_WT_CAS };
	check_error_roundtrip(&b, &e);
	e = (struct sm_cql_error){ .code = SM_CQL_ERR_READ_TIMEOUT,
				   .message = S("rt"),
				   .consistency = SM_CQL_ONE,
				   .received = 0,
				   .blockfor = 1,
				   .data_present = true };
	check_error_roundtrip(&b, &e);
	e = (struct sm_cql_error){ .code = SM_CQL_ERR_READ_FAILURE,
				   .message = S("rf"),
				   .consistency = SM_CQL_ALL,
				   .received = 2,
				   .blockfor = 3,
				   .numfailures = 1,
				   .data_present = true };
	check_error_roundtrip(&b, &e);
	e = (struct sm_cql_error){ .code = SM_CQL_ERR_WRITE_FAILURE,
				   .message = S("wf"),
				   .consistency = SM_CQL_LOCAL_QUORUM,
				   .received = 1,
				   .blockfor = 2,
				   .numfailures = 1,
				   .write_type = SM_CQL_WT_UNLOGGED_BATCH };
	check_error_roundtrip(&b, &e);
	e = (struct sm_cql_error){ .code = SM_CQL_ERR_FUNCTION_FAILURE,
				   .message = S("ff"),
				   .keyspace = S("ks"),
				   .name = S("fn"),
				   .arg_types = { args, { NULL, 0 }, 2 } };
	check_error_roundtrip(&b, &e);
	e = (struct sm_cql_error){ .code = SM_CQL_ERR_ALREADY_EXISTS,
				   .message = S("exists"),
				   .keyspace = S("ks"),
				   .name = S("") };
	check_error_roundtrip(&b, &e);
	e = (struct sm_cql_error){ .code = SM_CQL_ERR_ALREADY_EXISTS,
				   .message = S("exists"),
				   .keyspace = S("ks"),
				   .name = S("t") };
	check_error_roundtrip(&b, &e);
	e = (struct sm_cql_error){ .code = SM_CQL_ERR_UNPREPARED,
				   .message = S("unprepared"),
				   .id = { (const uint8_t *)"0123456789abcdef", 16 } };
	check_error_roundtrip(&b, &e);
	e = (struct sm_cql_error){ .code = SM_CQL_ERR_RATE_LIMIT,
				   .message = S("rate"),
				   .op_type = 1,
				   .rejected_by_coordinator = true };
	check_error_roundtrip(&b, &e);
	for (i = 0; i < SM_CQL_WT_UNKNOWN; i++) {
		e = (struct sm_cql_error){ .code = SM_CQL_ERR_WRITE_TIMEOUT,
					   .message = S("wt"),
					   .write_type = (enum sm_cql_write_type)i };
		check_error_roundtrip(&b, &e);
		assert_non_null(sm_cql_write_type_name((enum sm_cql_write_type)i));
	}
	assert_null(sm_cql_write_type_name(SM_CQL_WT_UNKNOWN));

	/* A message too long for a [string] is cut before a UTF-8 sequence, not inside it. */
	msg = sm_malloc(70000);
	assert_non_null(msg);
	for (i = 0; i < 70000; i += 2) {
		msg[i] = 0xc3;
		msg[i + 1] = 0xa9;
	}
	e = (struct sm_cql_error){ .code = SM_CQL_ERR_INVALID, .message = { msg, 70000 } };
	sm_cql_buf_reset(&b);
	assert_int_equal(sm_cql_enc_error(&b, 1, &e), 0);
	dec_resp(&b, 0, 0, &resp);
	assert_int_equal(resp.u.error.message.len, 65534);
	assert_int_equal(resp.u.error.message.p[65533], 0xa9);
	sm_free(msg);

	/* An unknown writeType string decodes as UNKNOWN. */
	sm_cql_buf_reset(&b);
	i = sm_cql_frame_begin(&b, SM_CQL_VERSION_RESPONSE, 0, 1, SM_CQL_OP_ERROR);
	sm_cql_write_int(&b, SM_CQL_ERR_WRITE_TIMEOUT);
	sm_cql_write_string(&b, S("m"));
	sm_cql_write_consistency(&b, SM_CQL_ONE);
	sm_cql_write_int(&b, 0);
	sm_cql_write_int(&b, 1);
	sm_cql_write_string(&b, S("SOMETHING_NEW"));
	assert_int_equal(sm_cql_frame_end(&b, i), 0);
	dec_resp(&b, 0, 0, &resp);
	assert_int_equal(resp.u.error.write_type, SM_CQL_WT_UNKNOWN);
	sm_cql_buf_release(&b);
}

static void
test_roundtrip_simple_responses(void **state)
{
	static const struct sm_bytes cqlv[] = { { (const uint8_t *)"3.3.1", 5 } };
	static const struct sm_bytes comp[] = { { (const uint8_t *)"lz4", 3 } };
	static const struct sm_bytes shard[] = { { (const uint8_t *)"3", 1 } };
	static const struct sm_bytes empty[] = { { (const uint8_t *)"", 0 } };
	const struct sm_cql_multimap_entry ent[] = {
		{ S("CQL_VERSION"), { cqlv, { NULL, 0 }, 1 } },
		{ S("COMPRESSION"), { comp, { NULL, 0 }, 1 } },
		{ S("SCYLLA_SHARD"), { shard, { NULL, 0 }, 1 } },
		{ S("TABLETS_ROUTING_V1"), { empty, { NULL, 0 }, 1 } },
		{ S("CLIENT_OPTIONS"), { NULL, { NULL, 0 }, 0 } },
	};
	const struct sm_cql_multimap sup = { ent, { NULL, 0 }, 5 };
	struct sm_cql_response resp;
	struct sm_cql_strlist l;
	struct sm_cql_iter it;
	struct sm_cql_buf b;
	struct sm_bytes s;
	size_t off[8];
	int i = 0;

	(void)state;
	sm_cql_buf_init(&b);
	off[i++] = b.len;
	assert_int_equal(sm_cql_enc_ready(&b, 1), 0);
	off[i++] = b.len;
	assert_int_equal(sm_cql_enc_authenticate(
				 &b, 2, S("org.apache.cassandra.auth.PasswordAuthenticator")),
			 0);
	off[i++] = b.len;
	assert_int_equal(sm_cql_enc_auth_challenge(&b, 3, S("challenge")), 0);
	off[i++] = b.len;
	assert_int_equal(sm_cql_enc_auth_success(&b, 4, (struct sm_bytes){ NULL, 0 }), 0);
	off[i++] = b.len;
	assert_int_equal(sm_cql_enc_supported(&b, 5, &sup), 0);
	off[i++] = b.len;
	assert_int_equal(sm_cql_enc_result_void(&b, 6), 0);
	off[i++] = b.len;
	assert_int_equal(sm_cql_enc_set_keyspace(&b, 7, S("ks1")), 0);

	dec_resp(&b, off[0], 0, &resp);
	assert_int_equal(resp.opcode, SM_CQL_OP_READY);
	dec_resp(&b, off[1], 0, &resp);
	assert_int_equal(resp.opcode, SM_CQL_OP_AUTHENTICATE);
	assert_true(
		str_eq(resp.u.authenticator, "org.apache.cassandra.auth.PasswordAuthenticator"));
	dec_resp(&b, off[2], 0, &resp);
	assert_int_equal(resp.opcode, SM_CQL_OP_AUTH_CHALLENGE);
	assert_true(str_eq(resp.u.auth_token, "challenge"));
	dec_resp(&b, off[3], 0, &resp);
	assert_int_equal(resp.opcode, SM_CQL_OP_AUTH_SUCCESS);
	assert_null(resp.u.auth_token.p);

	dec_resp(&b, off[4], 0, &resp);
	assert_int_equal(resp.opcode, SM_CQL_OP_SUPPORTED);
	assert_int_equal(resp.u.supported.n, 5);
	assert_true(sm_cql_multimap_get(&resp.u.supported, "CQL_VERSION", &l));
	sm_cql_strlist_iter(&it, &l);
	assert_true(sm_cql_strlist_next(&it, &s) && str_eq(s, "3.3.1"));
	assert_false(sm_cql_strlist_next(&it, &s));
	assert_true(sm_cql_multimap_get(&resp.u.supported, "COMPRESSION", &l) && l.n == 1);
	assert_true(sm_cql_multimap_get(&resp.u.supported, "SCYLLA_SHARD", &l) && l.n == 1);
	assert_true(sm_cql_multimap_get(&resp.u.supported, "TABLETS_ROUTING_V1", &l) && l.n == 1);
	sm_cql_strlist_iter(&it, &l);
	assert_true(sm_cql_strlist_next(&it, &s) && s.len == 0);
	assert_true(sm_cql_multimap_get(&resp.u.supported, "CLIENT_OPTIONS", &l) && l.n == 0);

	dec_resp(&b, off[5], 0, &resp);
	assert_int_equal(resp.u.result.kind, SM_CQL_RESULT_VOID);
	dec_resp(&b, off[6], 0, &resp);
	assert_int_equal(resp.u.result.kind, SM_CQL_RESULT_SET_KEYSPACE);
	assert_true(str_eq(resp.u.result.u.keyspace, "ks1"));

	/* Tracing id, warnings and custom payload precede the message, in that order. */
	{
		static const struct sm_bytes w[] = { { (const uint8_t *)"careful", 7 } };
		static const struct sm_bytes pl[] = { { (const uint8_t *)"tablets-routing-v1", 18 },
						      { (const uint8_t *)"\x01", 1 } };
		const struct sm_cql_strlist warn = { w, { NULL, 0 }, 1 };
		const struct sm_cql_bytesmap payload = { pl, { NULL, 0 }, 1 };
		uint8_t uuid[16] = { 0xaa, 0xbb };
		size_t o;

		sm_cql_buf_reset(&b);
		o = sm_cql_frame_begin(&b, SM_CQL_VERSION_RESPONSE,
				       SM_CQL_FLAG_TRACING | SM_CQL_FLAG_WARNING |
					       SM_CQL_FLAG_CUSTOM_PAYLOAD,
				       9, SM_CQL_OP_RESULT);
		sm_cql_write_uuid(&b, uuid);
		sm_cql_write_string_list(&b, &warn);
		sm_cql_write_bytes_map(&b, &payload);
		sm_cql_write_int(&b, SM_CQL_RESULT_VOID);
		assert_int_equal(sm_cql_frame_end(&b, o), 0);
		dec_resp(&b, o, 0, &resp);
		assert_true(bytes_eq(resp.tracing_id, uuid, 16));
		assert_int_equal(resp.warnings.n, 1);
		sm_cql_strlist_iter(&it, &resp.warnings);
		assert_true(sm_cql_strlist_next(&it, &s) && str_eq(s, "careful"));
		assert_int_equal(resp.custom_payload.n, 1);
		assert_int_equal(resp.u.result.kind, SM_CQL_RESULT_VOID);
	}
	sm_cql_buf_release(&b);
}

static void
test_roundtrip_rows(void **state)
{
	const struct sm_type *ti = sm_type_simple(SM_TYPE_INT);
	const struct sm_type *tt = sm_type_simple(SM_TYPE_TEXT);
	struct sm_cql_colspec cols[2] = {
		{ .ks = S("ks1"), .table = S("t1"), .name = S("k"), .type = ti },
		{ .ks = S("ks2"), .table = S("t2"), .name = S("v"), .type = tt },
	};
	struct sm_cql_metadata meta = { .cols = cols, .ncols = 2 };
	struct sm_cql_rows_writer w;
	struct sm_cql_response resp, resp2;
	struct sm_cql_colspec cs;
	const struct sm_cql_rows *rows;
	struct sm_bytes cell, ps = { (const uint8_t *)"PAGE", 4 };
	struct sm_cql_iter it;
	struct sm_cql_buf b, b2;
	size_t i;

	(void)state;
	sm_cql_buf_init(&b);
	sm_cql_buf_init(&b2);

	/* Per-column specs, a null cell, and a paging state given up front. */
	meta.paging_state = ps;
	assert_int_equal(sm_cql_rows_begin(&w, &b, 1, &meta), 0);
	sm_cql_rows_cell(&w, (struct sm_bytes){ (const uint8_t *)"\0\0\0\1", 4 });
	sm_cql_rows_cell(&w, S("one"));
	sm_cql_rows_cell(&w, (struct sm_bytes){ (const uint8_t *)"\0\0\0\2", 4 });
	sm_cql_rows_cell(&w, (struct sm_bytes){ NULL, 0 });
	assert_int_equal(sm_cql_rows_count(&w), 2);
	assert_int_equal(sm_cql_rows_end(&w, NULL), 0);
	dec_resp(&b, 0, 0, &resp);
	rows = &resp.u.result.u.rows;
	assert_int_equal(resp.u.result.kind, SM_CQL_RESULT_ROWS);
	assert_int_equal(rows->meta.flags, SM_CQL_META_HAS_MORE_PAGES);
	assert_true(bytes_eq(rows->meta.paging_state, "PAGE", 4));
	assert_int_equal(rows->nrows, 2);
	sm_cql_colspec_iter(&it, &rows->meta);
	assert_true(sm_cql_colspec_next(&it, &cs));
	assert_true(str_eq(cs.ks, "ks1") && str_eq(cs.table, "t1") && str_eq(cs.name, "k"));
	assert_int_equal(cs.type_id, 0x0009);
	assert_true(sm_cql_colspec_next(&it, &cs));
	assert_true(str_eq(cs.ks, "ks2") && str_eq(cs.table, "t2") && str_eq(cs.name, "v"));
	assert_int_equal(cs.type_id, 0x000D);
	assert_false(sm_cql_colspec_next(&it, &cs));
	sm_cql_cells_iter(&it, rows);
	assert_true(sm_cql_cells_next(&it, &cell) && bytes_eq(cell, "\0\0\0\1", 4));
	assert_true(sm_cql_cells_next(&it, &cell) && str_eq(cell, "one"));
	assert_true(sm_cql_cells_next(&it, &cell) && bytes_eq(cell, "\0\0\0\2", 4));
	assert_true(sm_cql_cells_next(&it, &cell) && cell.p == NULL);
	assert_false(sm_cql_cells_next(&it, &cell));

	/* Decoded metadata re-encodes to the same bytes. */
	assert_int_equal(sm_cql_rows_begin(&w, &b2, 1, &rows->meta), 0);
	sm_cql_cells_iter(&it, rows);
	while (sm_cql_cells_next(&it, &cell))
		sm_cql_rows_cell(&w, cell);
	assert_int_equal(sm_cql_rows_end(&w, NULL), 0);
	assert_int_equal(b2.len, b.len);
	assert_memory_equal(b2.p, b.p, b.len);

	/* The paging state known only at the end is inserted, rows moved after it. */
	meta.paging_state = (struct sm_bytes){ NULL, 0 };
	meta.ks = S("ks");
	meta.table = S("t");
	sm_cql_buf_reset(&b);
	assert_int_equal(sm_cql_enc_result_void(&b, 0), 0);
	i = b.len;
	assert_int_equal(sm_cql_rows_begin(&w, &b, 2, &meta), 0);
	sm_cql_rows_cell(&w, (struct sm_bytes){ (const uint8_t *)"\0\0\0\7", 4 });
	sm_cql_rows_cell(&w, S("seven"));
	assert_int_equal(sm_cql_rows_end(&w, &ps), 0);
	dec_resp(&b, i, 0, &resp);
	rows = &resp.u.result.u.rows;
	assert_int_equal(rows->meta.flags,
			 SM_CQL_META_HAS_MORE_PAGES | SM_CQL_META_GLOBAL_TABLES_SPEC);
	assert_true(bytes_eq(rows->meta.paging_state, "PAGE", 4));
	assert_true(str_eq(rows->meta.ks, "ks") && str_eq(rows->meta.table, "t"));
	assert_int_equal(rows->nrows, 1);
	sm_cql_colspec_iter(&it, &rows->meta);
	assert_true(sm_cql_colspec_next(&it, &cs));
	assert_true(str_eq(cs.ks, "ks") && str_eq(cs.table, "t") && str_eq(cs.name, "k"));
	sm_cql_cells_iter(&it, rows);
	assert_true(sm_cql_cells_next(&it, &cell) && bytes_eq(cell, "\0\0\0\7", 4));
	assert_true(sm_cql_cells_next(&it, &cell) && str_eq(cell, "seven"));
	/* Same as giving it up front. */
	meta.paging_state = ps;
	sm_cql_buf_reset(&b2);
	assert_int_equal(sm_cql_enc_result_void(&b2, 0), 0);
	assert_int_equal(sm_cql_rows_begin(&w, &b2, 2, &meta), 0);
	sm_cql_rows_cell(&w, (struct sm_bytes){ (const uint8_t *)"\0\0\0\7", 4 });
	sm_cql_rows_cell(&w, S("seven"));
	assert_int_equal(sm_cql_rows_end(&w, NULL), 0);
	assert_int_equal(b2.len, b.len);
	assert_memory_equal(b2.p, b.p, b.len);

	/* NO_METADATA (skip_metadata): flags, count and paging state only. */
	meta.paging_state = (struct sm_bytes){ NULL, 0 };
	meta.flags = SM_CQL_META_NO_METADATA;
	sm_cql_buf_reset(&b);
	assert_int_equal(sm_cql_rows_begin(&w, &b, 3, &meta), 0);
	sm_cql_rows_cell(&w, (struct sm_bytes){ (const uint8_t *)"\0\0\0\7", 4 });
	sm_cql_rows_cell(&w, SM_CQL_EMPTY);
	assert_int_equal(sm_cql_rows_end(&w, &ps), 0);
	dec_resp(&b, 0, 0, &resp2);
	rows = &resp2.u.result.u.rows;
	assert_int_equal(rows->meta.flags, SM_CQL_META_NO_METADATA | SM_CQL_META_HAS_MORE_PAGES);
	assert_int_equal(rows->meta.ncols, 2);
	assert_true(bytes_eq(rows->meta.paging_state, "PAGE", 4));
	assert_int_equal(rows->nrows, 1);
	sm_cql_colspec_iter(&it, &rows->meta);
	assert_false(sm_cql_colspec_next(&it, &cs));
	sm_cql_cells_iter(&it, rows);
	assert_true(sm_cql_cells_next(&it, &cell));
	assert_true(sm_cql_cells_next(&it, &cell) && cell.p != NULL && cell.len == 0);
	/* 9 header + 4 kind + 4 flags + 4 count + 8 paging + 4 rows + 8 + 4 cells */
	assert_int_equal(b.len, 9 + 4 + 4 + 4 + 8 + 4 + 8 + 4);

	/* A partial row, or two paging states, are refused and rolled back. */
	meta.flags = 0;
	sm_cql_buf_reset(&b);
	assert_int_equal(sm_cql_enc_ready(&b, 0), 0);
	assert_int_equal(sm_cql_rows_begin(&w, &b, 4, &meta), 0);
	sm_cql_rows_cell(&w, SM_CQL_EMPTY);
	assert_int_equal(sm_cql_rows_end(&w, NULL), -EINVAL);
	assert_int_equal(b.len, 9);
	assert_int_equal(b.err, 0);
	meta.paging_state = ps;
	assert_int_equal(sm_cql_rows_begin(&w, &b, 4, &meta), 0);
	assert_int_equal(sm_cql_rows_end(&w, &ps), -EINVAL);
	assert_int_equal(b.len, 9);
	/* A column without a type cannot be encoded. */
	meta.paging_state = (struct sm_bytes){ NULL, 0 };
	cols[1].type = NULL;
	assert_int_equal(sm_cql_rows_begin(&w, &b, 4, &meta), -EINVAL);
	assert_int_equal(b.len, 9);

	sm_cql_buf_release(&b);
	sm_cql_buf_release(&b2);
}

static void
test_roundtrip_prepared(void **state)
{
	static const uint16_t pk[] = { 1, 0 };
	const struct sm_type *ti = sm_type_simple(SM_TYPE_INT);
	const struct sm_type *tb = sm_type_simple(SM_TYPE_BIGINT);
	const struct sm_cql_colspec bcols[3] = {
		{ .name = S("c"), .type = ti },
		{ .name = S("k"), .type = tb },
		{ .name = S("v"), .type = ti },
	};
	const struct sm_cql_colspec rcols[2] = {
		{ .name = S("[applied]"), .type = sm_type_simple(SM_TYPE_BOOLEAN) },
		{ .name = S("v"), .type = ti },
	};
	const struct sm_cql_metadata bind = { .flags = SM_CQL_META_LWT,
					      .ncols = 3,
					      .ks = S("ks"),
					      .table = S("t"),
					      .cols = bcols,
					      .npk = 2,
					      .pk_indexes = pk };
	const struct sm_cql_metadata result = {
		.ncols = 2, .ks = S("ks"), .table = S("t"), .cols = rcols
	};
	const struct sm_cql_metadata nometa = { .flags = SM_CQL_META_NO_METADATA };
	const struct sm_cql_metadata empty_bind = { .ncols = 0 };
	const struct sm_cql_prepared *p;
	struct sm_cql_response resp;
	struct sm_cql_colspec cs;
	struct sm_cql_iter it;
	struct sm_cql_buf b, b2;
	const struct sm_bytes id = { (const uint8_t *)"0123456789abcdef", 16 };

	(void)state;
	sm_cql_buf_init(&b);
	sm_cql_buf_init(&b2);
	assert_int_equal(
		sm_cql_enc_prepared(&b, 1, id, (struct sm_bytes){ NULL, 0 }, &bind, &result), 0);
	dec_resp(&b, 0, 0, &resp);
	assert_int_equal(resp.u.result.kind, SM_CQL_RESULT_PREPARED);
	p = &resp.u.result.u.prepared;
	assert_true(bytes_eq(p->id, id.p, 16));
	assert_null(p->result_metadata_id.p);
	assert_int_equal(p->bind.flags, SM_CQL_META_LWT | SM_CQL_META_GLOBAL_TABLES_SPEC);
	assert_int_equal(p->bind.ncols, 3);
	assert_int_equal(p->bind.npk, 2);
	assert_int_equal(sm_cql_meta_pk_index(&p->bind, 0), 1);
	assert_int_equal(sm_cql_meta_pk_index(&p->bind, 1), 0);
	assert_int_equal(sm_cql_meta_pk_index(&p->bind, 2), 0);
	assert_true(str_eq(p->bind.ks, "ks"));
	sm_cql_colspec_iter(&it, &p->bind);
	assert_true(sm_cql_colspec_next(&it, &cs) && str_eq(cs.name, "c") && cs.type_id == 9);
	assert_true(sm_cql_colspec_next(&it, &cs) && str_eq(cs.name, "k") && cs.type_id == 2);
	assert_true(str_eq(cs.ks, "ks") && str_eq(cs.table, "t"));
	assert_true(sm_cql_colspec_next(&it, &cs) && str_eq(cs.name, "v"));
	assert_false(sm_cql_colspec_next(&it, &cs));
	assert_int_equal(p->result.flags, SM_CQL_META_GLOBAL_TABLES_SPEC);
	assert_int_equal(p->result.ncols, 2);
	sm_cql_colspec_iter(&it, &p->result);
	assert_true(sm_cql_colspec_next(&it, &cs) && str_eq(cs.name, "[applied]"));
	assert_int_equal(cs.type_id, 4);

	/* Decoded metadata re-encodes to the same bytes. */
	assert_int_equal(
		sm_cql_enc_prepared(&b2, 1, p->id, p->result_metadata_id, &p->bind, &p->result), 0);
	assert_int_equal(b2.len, b.len);
	assert_memory_equal(b2.p, b.p, b.len);

	/* A non-SELECT: no bind markers, no result metadata; with a metadata id. */
	sm_cql_buf_reset(&b);
	assert_int_equal(sm_cql_enc_prepared(&b, 2, id, S("mdid"), &empty_bind, &nometa), 0);
	dec_resp(&b, 0, SM_CQL_EXT_METADATA_ID, &resp);
	p = &resp.u.result.u.prepared;
	assert_true(str_eq(p->result_metadata_id, "mdid"));
	assert_int_equal(p->bind.ncols, 0);
	assert_int_equal(p->bind.npk, 0);
	assert_int_equal(p->result.flags, SM_CQL_META_NO_METADATA);
	assert_int_equal(p->result.ncols, 0);
	/* 9 + kind 4 + id 18 + mdid 6 + bind 12 + result 8 */
	assert_int_equal(b.len, 9 + 4 + 18 + 6 + 12 + 8);

	/* More pk indexes than columns cannot be encoded. */
	{
		struct sm_cql_metadata bad = bind;

		bad.npk = 4;
		assert_int_equal(
			sm_cql_enc_prepared(&b, 3, id, (struct sm_bytes){ NULL, 0 }, &bad, &result),
			-EINVAL);
	}
	sm_cql_buf_release(&b);
	sm_cql_buf_release(&b2);
}

static void
test_roundtrip_schema_and_events(void **state)
{
	static const struct sm_bytes args[] = { { (const uint8_t *)"int", 3 },
						{ (const uint8_t *)"list<text>", 10 } };
	struct sm_cql_schema_change sc = { 0 };
	struct sm_cql_event ev = { 0 };
	struct sm_cql_response resp;
	const struct sm_cql_schema_change *d;
	struct sm_cql_frame_header h;
	struct sm_cql_iter it;
	struct sm_cql_buf b;
	struct sm_bytes s;
	int t;

	(void)state;
	sm_cql_buf_init(&b);
	for (t = SM_CQL_TARGET_KEYSPACE; t <= SM_CQL_TARGET_AGGREGATE; t++) {
		sc.change = (enum sm_cql_change_type)(t % 3);
		sc.target = (enum sm_cql_target)t;
		sc.keyspace = S("ks");
		sc.name = S("obj");
		sc.args = (struct sm_cql_strlist){ args, { NULL, 0 }, 2 };
		sm_cql_buf_reset(&b);
		assert_int_equal(sm_cql_enc_schema_change(&b, 5, &sc), 0);
		dec_resp(&b, 0, 0, &resp);
		assert_int_equal(resp.u.result.kind, SM_CQL_RESULT_SCHEMA_CHANGE);
		d = &resp.u.result.u.schema_change;
		assert_int_equal(d->change, sc.change);
		assert_int_equal(d->target, sc.target);
		assert_true(str_eq(d->keyspace, "ks"));
		if (t == SM_CQL_TARGET_KEYSPACE) {
			assert_null(d->name.p);
			/* KEYSPACE: change, target, keyspace only. */
			assert_int_equal(b.len, 9 + 4 + (2 + 7) + (2 + 8) + (2 + 2));
		} else {
			assert_true(str_eq(d->name, "obj"));
		}
		if (t >= SM_CQL_TARGET_FUNCTION) {
			assert_int_equal(d->args.n, 2);
			sm_cql_strlist_iter(&it, &d->args);
			assert_true(sm_cql_strlist_next(&it, &s) && str_eq(s, "int"));
			assert_true(sm_cql_strlist_next(&it, &s) && str_eq(s, "list<text>"));
		} else {
			assert_int_equal(d->args.n, 0);
		}

		/* The same body as a SCHEMA_CHANGE event, on stream -1. */
		ev.type = SM_CQL_EVENT_SCHEMA_CHANGE;
		ev.schema = sc;
		sm_cql_buf_reset(&b);
		assert_int_equal(sm_cql_enc_event(&b, &ev), 0);
		(void)frame_at(&b, 0, &h);
		assert_int_equal(h.stream, -1);
		assert_int_equal(h.opcode, SM_CQL_OP_EVENT);
		dec_resp(&b, 0, 0, &resp);
		assert_int_equal(resp.u.event.type, SM_CQL_EVENT_SCHEMA_CHANGE);
		assert_int_equal(resp.u.event.schema.target, sc.target);
		assert_true(str_eq(resp.u.event.schema.keyspace, "ks"));
	}

	ev = (struct sm_cql_event){ .type = SM_CQL_EVENT_TOPOLOGY_CHANGE,
				    .change = SM_CQL_NODE_NEW,
				    .addr = { 4, { 127, 0, 0, 2 }, 9042 } };
	sm_cql_buf_reset(&b);
	assert_int_equal(sm_cql_enc_event(&b, &ev), 0);
	dec_resp(&b, 0, 0, &resp);
	assert_int_equal(resp.u.event.type, SM_CQL_EVENT_TOPOLOGY_CHANGE);
	assert_int_equal(resp.u.event.change, SM_CQL_NODE_NEW);
	assert_true(inet_eq(&resp.u.event.addr, &ev.addr));

	ev = (struct sm_cql_event){ .type = SM_CQL_EVENT_STATUS_CHANGE,
				    .change = SM_CQL_NODE_DOWN,
				    .addr = { 16, { 0xfe, 0x80, [15] = 1 }, 19042 } };
	sm_cql_buf_reset(&b);
	assert_int_equal(sm_cql_enc_event(&b, &ev), 0);
	dec_resp(&b, 0, 0, &resp);
	assert_int_equal(resp.u.event.type, SM_CQL_EVENT_STATUS_CHANGE);
	assert_int_equal(resp.u.event.change, SM_CQL_NODE_DOWN);
	assert_true(inet_eq(&resp.u.event.addr, &ev.addr));

	/* A status change named like a topology change, and the reverse, are refused. */
	ev.change = SM_CQL_NODE_MOVED;
	assert_int_equal(sm_cql_enc_event(&b, &ev), -EINVAL);
	ev.type = SM_CQL_EVENT_TOPOLOGY_CHANGE;
	ev.change = SM_CQL_NODE_UP;
	assert_int_equal(sm_cql_enc_event(&b, &ev), -EINVAL);
	sm_cql_buf_release(&b);
}

/* ---------------------------------------------------------------------- */
/* Truncation and malformed input                                          */

/* Append one frame of every kind to @b (requests and responses). */
static void
build_all_frames(struct sm_cql_buf *b, bool ext)
{
	static const struct sm_bytes kv[] = { { (const uint8_t *)"CQL_VERSION", 11 },
					      { (const uint8_t *)"3.0.0", 5 } };
	static const struct sm_bytes strs[] = { { (const uint8_t *)"SCHEMA_CHANGE", 13 } };
	static const uint16_t pk[] = { 0 };
	const struct sm_cql_value vals[] = {
		{ { (const uint8_t *)"\0\0\0\1", 4 }, SM_CQL_VALUE_SET, S("a") },
		{ { NULL, 0 }, SM_CQL_VALUE_NULL, S("b") },
	};
	const struct sm_cql_params p = {
		.consistency = SM_CQL_ONE,
		.flags = 0x7c,
		.values = { vals, { NULL, 0 }, 2, true },
		.page_size = 100,
		.paging_state = { (const uint8_t *)"ps", 2 },
		.serial_consistency = SM_CQL_SERIAL,
		.timestamp = 1,
	};
	const struct sm_cql_batch_stmt stmts[] = {
		{ 0, { (const uint8_t *)"INSERT", 6 }, { vals, { NULL, 0 }, 2, false } },
		{ 1, { (const uint8_t *)"id", 2 }, { 0 } },
	};
	const struct sm_cql_batch bt = { .stmts = stmts,
					 .n = 2,
					 .flags = 0x30,
					 .serial_consistency = SM_CQL_SERIAL,
					 .timestamp = 2 };
	const struct sm_cql_strmap opts = { kv, { NULL, 0 }, 1 };
	const struct sm_cql_strlist evs = { strs, { NULL, 0 }, 1 };
	const struct sm_cql_multimap_entry ent[] = { { S("COMPRESSION"), evs } };
	const struct sm_cql_multimap sup = { ent, { NULL, 0 }, 1 };
	const struct sm_cql_colspec cols[2] = {
		{ .ks = S("ks"),
		  .table = S("t"),
		  .name = S("k"),
		  .type = sm_type_simple(SM_TYPE_INT) },
		{ .ks = S("ks"),
		  .table = S("t"),
		  .name = S("u"),
		  .type_raw = { (const uint8_t *)"\x00\x31\x00\x01\x00\x09", 6 } },
	};
	const struct sm_cql_metadata meta = { .ncols = 2, .cols = cols };
	const struct sm_cql_metadata gmeta = {
		.ncols = 2, .cols = cols, .ks = S("ks"), .table = S("t"), .npk = 1, .pk_indexes = pk
	};
	const struct sm_cql_error errs[] = {
		{ .code = SM_CQL_ERR_UNAVAILABLE, .message = S("u"), .required = 1 },
		{ .code = SM_CQL_ERR_WRITE_TIMEOUT, .message = S("w") },
		{ .code = SM_CQL_ERR_READ_TIMEOUT, .message = S("r") },
		{ .code = SM_CQL_ERR_READ_FAILURE, .message = S("r") },
		{ .code = SM_CQL_ERR_WRITE_FAILURE, .message = S("w") },
		{ .code = SM_CQL_ERR_FUNCTION_FAILURE, .message = S("f"), .arg_types = evs },
		{ .code = SM_CQL_ERR_ALREADY_EXISTS, .message = S("a") },
		{ .code = SM_CQL_ERR_UNPREPARED, .message = S("u"), .id = S("id") },
		{ .code = SM_CQL_ERR_RATE_LIMIT, .message = S("r") },
		{ .code = SM_CQL_ERR_SYNTAX, .message = S("s") },
	};
	struct sm_cql_schema_change sc = { SM_CQL_CHANGE_CREATED, SM_CQL_TARGET_FUNCTION, S("ks"),
					   S("f"), evs };
	struct sm_cql_event ev = { .type = SM_CQL_EVENT_STATUS_CHANGE,
				   .change = SM_CQL_NODE_UP,
				   .addr = { 4, { 1, 2, 3, 4 }, 1 } };
	struct sm_bytes ps = S("next");
	struct sm_bytes mdid = ext ? S("md") : (struct sm_bytes){ NULL, 0 };
	struct sm_cql_rows_writer w;
	size_t i;

	assert_int_equal(sm_cql_enc_startup(b, 1, &opts), 0);
	assert_int_equal(sm_cql_enc_query(b, 2, S("SELECT"), &p), 0);
	assert_int_equal(sm_cql_enc_prepare(b, 3, S("SELECT ?")), 0);
	assert_int_equal(sm_cql_enc_execute(b, 4, S("id"), mdid, &p), 0);
	assert_int_equal(sm_cql_enc_batch(b, 5, &bt), 0);
	assert_int_equal(sm_cql_enc_register(b, 6, &evs), 0);
	assert_int_equal(sm_cql_enc_auth_response(b, 7, S("tok")), 0);
	for (i = 0; i < SM_ARRAY_SIZE(errs); i++)
		assert_int_equal(sm_cql_enc_error(b, 8, &errs[i]), 0);
	assert_int_equal(sm_cql_enc_authenticate(b, 9, S("Auth")), 0);
	assert_int_equal(sm_cql_enc_auth_challenge(b, 9, S("c")), 0);
	assert_int_equal(sm_cql_enc_auth_success(b, 9, (struct sm_bytes){ NULL, 0 }), 0);
	assert_int_equal(sm_cql_enc_supported(b, 10, &sup), 0);
	assert_int_equal(sm_cql_enc_result_void(b, 11), 0);
	assert_int_equal(sm_cql_enc_set_keyspace(b, 12, S("ks")), 0);
	assert_int_equal(sm_cql_rows_begin(&w, b, 13, &meta), 0);
	sm_cql_rows_cell(&w, S("\0\0\0\0"));
	sm_cql_rows_cell(&w, (struct sm_bytes){ NULL, 0 });
	assert_int_equal(sm_cql_rows_end(&w, &ps), 0);
	assert_int_equal(sm_cql_rows_begin(&w, b, 13, &gmeta), 0);
	assert_int_equal(sm_cql_rows_end(&w, NULL), 0);
	assert_int_equal(sm_cql_enc_prepared(b, 14, S("id"), mdid, &gmeta, &meta), 0);
	assert_int_equal(sm_cql_enc_schema_change(b, 15, &sc), 0);
	assert_int_equal(sm_cql_enc_event(b, &ev), 0);
	ev.type = SM_CQL_EVENT_SCHEMA_CHANGE;
	ev.schema = sc;
	assert_int_equal(sm_cql_enc_event(b, &ev), 0);
}

static int
decode_any(const struct sm_cql_frame_header *h, const uint8_t *body, size_t len, unsigned ext)
{
	struct sm_cql_response resp;
	struct sm_cql_request req;
	const char *why = NULL;
	int rc;

	if (h->version & SM_CQL_VERSION_DIR_MASK)
		rc = sm_cql_response_decode(h, body, len, ext, &resp, &why);
	else
		rc = sm_cql_request_decode(h, body, len, ext, &req, &why);
	if (rc < 0)
		assert_non_null(why);
	return rc;
}

static void
truncate_all(bool ext)
{
	struct sm_cql_frame_header h;
	struct sm_cql_buf b;
	const uint8_t *body;
	uint8_t *copy;
	size_t off, cut;
	unsigned frames = 0;

	sm_cql_buf_init(&b);
	build_all_frames(&b, ext);
	for (off = 0; off < b.len; off += SM_CQL_HEADER_LEN + h.length) {
		body = frame_at(&b, off, &h);
		frames++;
		/* An exact-size copy, so that any overread is caught by ASan. */
		copy = sm_malloc(h.length > 0 ? h.length : 1);
		assert_non_null(copy);
		memcpy(copy, body, h.length);
		assert_int_equal(decode_any(&h, copy, h.length, ext), 0);
		sm_free(copy);
		for (cut = 0; cut < h.length; cut++) {
			copy = cut > 0 ? sm_malloc(cut) : NULL;
			if (cut > 0) {
				assert_non_null(copy);
				memcpy(copy, body, cut);
			}
			assert_int_equal(decode_any(&h, copy, cut, ext), -EPROTO);
			sm_free(copy);
		}
		for (cut = 0; cut < SM_CQL_HEADER_LEN; cut++) {
			struct sm_cql_frame_header h2;

			assert_int_equal(
				sm_cql_frame_header_parse(b.p + off, cut, false, &h2, NULL),
				-EAGAIN);
		}
	}
	assert_int_equal(off, b.len);
	assert_int_equal(frames, 29);
	sm_cql_buf_release(&b);
}

static void
test_truncation(void **state)
{
	(void)state;
	truncate_all(false);
	truncate_all(true);
}

/* Decode a hand-written response body (after a 9-byte header of @opcode). */
static int
dec_body(uint8_t opcode, const char *hex)
{
	struct sm_cql_frame_header h = { .version = SM_CQL_VERSION_RESPONSE, .opcode = opcode };
	struct sm_cql_response resp;
	uint8_t v[256], *copy;
	const char *why = NULL;
	size_t n = vec(hex, v, sizeof(v));
	int rc;

	copy = sm_malloc(n);
	assert_non_null(copy);
	memcpy(copy, v, n);
	if (opcode & 0x80) {
		struct sm_cql_request req;

		h.version = SM_CQL_VERSION_REQUEST;
		h.opcode = opcode & 0x7f;
		rc = sm_cql_request_decode(&h, copy, n, 0, &req, &why);
	} else {
		rc = sm_cql_response_decode(&h, copy, n, 0, &resp, &why);
	}
	if (rc < 0)
		assert_non_null(why);
	sm_free(copy);
	return rc;
}

#define REQ(op) (0x80 | (op))

static void
test_malformed(void **state)
{
	(void)state;
	/* Baselines that decode. */
	assert_int_equal(dec_body(SM_CQL_OP_RESULT, "00000002 00000004 00000001 00000001 00000000"),
			 0);
	assert_int_equal(dec_body(SM_CQL_OP_RESULT, "00000004 0001 aa 00000001 00000001 00000001 "
						    "0000 0002 'ks' 0001 't' 0001 'k' 0009"
						    " 00000004 00000000"),
			 0);
	/* Negative column, row and pk counts. */
	assert_int_equal(dec_body(SM_CQL_OP_RESULT, "00000002 00000004 ffffffff 00000000"),
			 -EPROTO);
	assert_int_equal(dec_body(SM_CQL_OP_RESULT, "00000002 00000004 00000001 ffffffff"),
			 -EPROTO);
	assert_int_equal(dec_body(SM_CQL_OP_RESULT, "00000004 0001 aa 00000001 00000001 ffffffff "
						    "0000 0002 'ks' 0001 't' 0001 'k' 0009"
						    " 00000004 00000000"),
			 -EPROTO);
	/* A pk index past the columns. */
	assert_int_equal(dec_body(SM_CQL_OP_RESULT, "00000004 0001 aa 00000001 00000001 00000001 "
						    "0001 0002 'ks' 0001 't' 0001 'k' 0009"
						    " 00000004 00000000"),
			 -EPROTO);
	/* Row counts the body cannot hold fail fast (no 2^31 x 2^20 walk). */
	assert_int_equal(dec_body(SM_CQL_OP_RESULT, "00000002 00000004 00100000 7fffffff"),
			 -EPROTO);
	assert_int_equal(dec_body(SM_CQL_OP_RESULT, "00000002 00000004 7fffffff 00000000"), 0);
	/* Column counts the body cannot hold. */
	assert_int_equal(dec_body(SM_CQL_OP_RESULT, "00000002 00000000 7fffffff 00000000"),
			 -EPROTO);
	/* Unknown result kind, event, schema change target, node change. */
	assert_int_equal(dec_body(SM_CQL_OP_RESULT, "00000006"), -EPROTO);
	assert_int_equal(dec_body(SM_CQL_OP_EVENT, "0003 'FOO'"), -EPROTO);
	assert_int_equal(
		dec_body(SM_CQL_OP_RESULT, "00000005 0007 'CREATED' 0004 'VIEW' 0002 'ks'"),
		-EPROTO);
	assert_int_equal(
		dec_body(SM_CQL_OP_EVENT, "000f 'TOPOLOGY_CHANGE' 0002 'UP' 04 01020304 00000001"),
		-EPROTO);
	assert_int_equal(
		dec_body(SM_CQL_OP_EVENT, "000d 'STATUS_CHANGE' 0002 'UP' 04 01020304 00000001"),
		0);
	/* Request opcodes in a response. */
	assert_int_equal(dec_body(SM_CQL_OP_QUERY, ""), -EPROTO);
	assert_int_equal(dec_body(0x11, ""), -EPROTO);

	/* Requests: negative [long string], [value] -3, unknown consistency, bad timestamp. */
	assert_int_equal(dec_body(REQ(SM_CQL_OP_QUERY), "ffffffff 0001 00"), -EPROTO);
	assert_int_equal(dec_body(REQ(SM_CQL_OP_QUERY), "7fffffff 0001 00"), -EPROTO);
	assert_int_equal(dec_body(REQ(SM_CQL_OP_QUERY), "00000000 0001 00"), 0);
	assert_int_equal(dec_body(REQ(SM_CQL_OP_QUERY), "00000000 000b 00"), -EPROTO);
	assert_int_equal(dec_body(REQ(SM_CQL_OP_QUERY), "00000000 0001 01 0001 fffffffd"), -EPROTO);
	assert_int_equal(dec_body(REQ(SM_CQL_OP_QUERY), "00000000 0001 01 0001 fffffffe"), 0);
	assert_int_equal(dec_body(REQ(SM_CQL_OP_QUERY), "00000000 0001 10 000c"), -EPROTO);
	assert_int_equal(dec_body(REQ(SM_CQL_OP_QUERY), "00000000 0001 20 8000000000000000"),
			 -EPROTO);
	assert_int_equal(dec_body(REQ(SM_CQL_OP_QUERY), "00000000 0001 20 8000000000000001"), 0);
	/* A null paging state is legal (any negative [bytes] is null). */
	assert_int_equal(dec_body(REQ(SM_CQL_OP_QUERY), "00000000 0001 08 ffffffff"), 0);
	/* Values announced but missing. */
	assert_int_equal(dec_body(REQ(SM_CQL_OP_EXECUTE), "0001 aa 0001 01 ffff"), -EPROTO);
	/* Trailing bytes after a complete body are ignored, as Cassandra does. */
	assert_int_equal(dec_body(REQ(SM_CQL_OP_PREPARE), "00000001 'x' ff"), 0);
}

/* ---------------------------------------------------------------------- */
/* Protocol version downgrade                                              */

static void
test_version_error(void **state)
{
	struct sm_cql_frame_header h;
	struct sm_cql_response resp;
	struct sm_cql_buf b;
	uint8_t v[128];
	size_t n;

	(void)state;
	n = vec("84 00 0000 00 00000030 0000000a 002a 'Invalid or unsupported protocol version: 5'",
		v, sizeof(v));
	sm_cql_buf_init(&b);
	assert_int_equal(sm_cql_enc_version_error(&b, 0, 5), 0);
	assert_int_equal(b.len, n);
	assert_memory_equal(b.p, v, n);

	/* From a v5 request header: echo its stream. */
	n = vec("05 00 0007 05 00000000", v, sizeof(v));
	assert_int_equal(sm_cql_frame_header_parse(v, n, false, &h, NULL), -EPROTONOSUPPORT);
	sm_cql_buf_reset(&b);
	assert_int_equal(sm_cql_enc_version_error(&b, h.stream, h.version), 0);
	dec_resp(&b, 0, 0, &resp);
	(void)frame_at(&b, 0, &h);
	assert_int_equal(h.version, 0x84);
	assert_int_equal(h.stream, 7);
	assert_int_equal(resp.u.error.code, SM_CQL_ERR_PROTOCOL);
	assert_true(str_eq(resp.u.error.message, "Invalid or unsupported protocol version: 5"));

	/* The Python driver's DSE_V2 (0x42) start. */
	sm_cql_buf_reset(&b);
	assert_int_equal(sm_cql_enc_version_error(&b, 0, 0x42), 0);
	dec_resp(&b, 0, 0, &resp);
	assert_true(str_eq(resp.u.error.message, "Invalid or unsupported protocol version: 66"));
	sm_cql_buf_release(&b);
}

/* ---------------------------------------------------------------------- */
/* LZ4                                                                     */

static void
test_lz4(void **state)
{
	static const size_t sizes[] = { 0, 1, 17, 1000, 200000 };
	struct sm_cql_buf src, c, d;
	struct sm_cql_frame_header h;
	struct sm_cql_response resp;
	struct sm_cql_rows_writer w;
	const struct sm_cql_colspec col = { .name = S("v"), .type = sm_type_simple(SM_TYPE_TEXT) };
	const struct sm_cql_metadata meta = {
		.ncols = 1, .cols = &col, .ks = S("ks"), .table = S("t")
	};
	uint32_t x = 12345;
	size_t i, j, off;
	uint8_t *q;

	(void)state;
	sm_cql_buf_init(&src);
	sm_cql_buf_init(&c);
	sm_cql_buf_init(&d);
	for (i = 0; i < SM_ARRAY_SIZE(sizes); i++) {
		sm_cql_buf_reset(&src);
		q = sm_cql_buf_append(&src, sizes[i]);
		assert_non_null(q);
		for (j = 0; j < sizes[i]; j++) {
			/* Half noise, half runs: both code paths of the compressor. */
			x = x * 1103515245u + 12345u;
			q[j] = (j / 64) % 2 ? (uint8_t)(x >> 16) : (uint8_t)(j / 64);
		}
		sm_cql_buf_reset(&c);
		sm_cql_buf_reset(&d);
		assert_int_equal(sm_cql_lz4_compress(&c, src.p, src.len), 0);
		assert_true(c.len >= 5);
		assert_int_equal(c.p[0] << 24 | c.p[1] << 16 | c.p[2] << 8 | c.p[3], (int)sizes[i]);
		assert_int_equal(sm_cql_lz4_decompress(&d, c.p, c.len, SM_CQL_MAX_BODY), 0);
		assert_int_equal(d.len, src.len);
		if (src.len > 0)
			assert_memory_equal(d.p, src.p, src.len);
		if (sizes[i] == 0)
			continue;

		/* The size limit, a wrong declared size, a cut body, garbage. */
		sm_cql_buf_reset(&d);
		assert_int_equal(sm_cql_lz4_decompress(&d, c.p, c.len, sizes[i] - 1), -EMSGSIZE);
		c.p[3]++;
		assert_int_equal(sm_cql_lz4_decompress(&d, c.p, c.len, SM_CQL_MAX_BODY), -EPROTO);
		c.p[3] -= 2;
		assert_int_equal(sm_cql_lz4_decompress(&d, c.p, c.len, SM_CQL_MAX_BODY), -EPROTO);
		c.p[3]++;
		assert_int_equal(sm_cql_lz4_decompress(&d, c.p, c.len - 1, SM_CQL_MAX_BODY),
				 -EPROTO);
		assert_int_equal(d.len, 0);
	}
	assert_int_equal(sm_cql_lz4_decompress(&d, c.p, 3, SM_CQL_MAX_BODY), -EPROTO);
	/* A literal run longer than the block: LZ4 must refuse, not overrun. */
	sm_cql_buf_reset(&c);
	sm_cql_write_int(&c, 100);
	sm_cql_write_byte(&c, 0xf0);
	sm_cql_write_byte(&c, 0xff);
	sm_cql_write_byte(&c, 0xff);
	sm_cql_write_raw(&c, "abcdefgh", 8);
	sm_cql_buf_reset(&d);
	assert_int_equal(sm_cql_lz4_decompress(&d, c.p, c.len, SM_CQL_MAX_BODY), -EPROTO);
	/* A declared size LZ4 cannot reach from the body (it expands at most
	 * 255 times) is refused before the output is sized by it, while the
	 * best ratio LZ4 gives still decodes. */
	sm_cql_buf_reset(&c);
	sm_cql_write_int(&c, 200u << 20);
	sm_cql_write_raw(&c, "\x00\x00\x00\x00\x00\x00\x00\x00", 8);
	sm_cql_buf_reset(&d);
	assert_int_equal(sm_cql_lz4_decompress(&d, c.p, c.len, SM_CQL_MAX_BODY), -EPROTO);
	assert_true(d.cap < (1u << 20));
	sm_cql_buf_reset(&src);
	q = sm_cql_buf_append(&src, 16u << 20);
	assert_non_null(q);
	memset(q, 'z', src.len);
	sm_cql_buf_reset(&c);
	assert_int_equal(sm_cql_lz4_compress(&c, src.p, src.len), 0);
	assert_true(c.len < src.len / 250);
	sm_cql_buf_reset(&d);
	assert_int_equal(sm_cql_lz4_decompress(&d, c.p, c.len, SM_CQL_MAX_BODY), 0);
	assert_int_equal(d.len, src.len);
	/* A match reaching before the start of the output. */
	sm_cql_buf_reset(&c);
	sm_cql_write_int(&c, 20);
	sm_cql_write_byte(&c, 0x1f);
	sm_cql_write_byte(&c, 'a');
	sm_cql_write_byte(&c, 0x10);
	sm_cql_write_byte(&c, 0x00);
	sm_cql_write_raw(&c, "\x00\x00\x00\x00\x00", 5);
	assert_int_equal(sm_cql_lz4_decompress(&d, c.p, c.len, SM_CQL_MAX_BODY), -EPROTO);

	/* Compress frames in place (a tiny one grows), then decompress and decode. */
	sm_cql_buf_reset(&src);
	assert_int_equal(sm_cql_enc_ready(&src, 3), 0);
	assert_int_equal(sm_cql_frame_compress(&src, 0, &c), 0);
	off = src.len;
	assert_int_equal(sm_cql_rows_begin(&w, &src, 4, &meta), 0);
	for (i = 0; i < 100; i++)
		sm_cql_rows_cell(&w, S("the same text in every row"));
	assert_int_equal(sm_cql_rows_end(&w, NULL), 0);
	j = src.len - off;
	assert_int_equal(sm_cql_frame_compress(&src, off, &c), 0);
	assert_true(src.len - off < j / 4);

	(void)frame_at(&src, 0, &h);
	assert_int_equal(h.flags, SM_CQL_FLAG_COMPRESSION);
	assert_int_equal(h.opcode, SM_CQL_OP_READY);
	sm_cql_buf_reset(&d);
	assert_int_equal(sm_cql_lz4_decompress(&d, src.p + 9, h.length, 1 << 20), 0);
	assert_int_equal(d.len, 0);
	(void)frame_at(&src, off, &h);
	assert_int_equal(h.flags, SM_CQL_FLAG_COMPRESSION);
	assert_int_equal(h.stream, 4);
	sm_cql_buf_reset(&d);
	assert_int_equal(sm_cql_lz4_decompress(&d, src.p + off + 9, h.length, 1 << 20), 0);
	assert_int_equal(sm_cql_response_decode(&h, d.p, d.len, 0, &resp, NULL), 0);
	assert_int_equal(resp.u.result.u.rows.nrows, 100);

	sm_cql_buf_release(&src);
	sm_cql_buf_release(&c);
	sm_cql_buf_release(&d);
}

/* ---------------------------------------------------------------------- */
/* Steady state: no allocation                                             */

static void
steady_round(struct sm_cql_buf *b, struct sm_cql_buf *c, struct sm_cql_buf *d,
	     struct sm_cql_buf *ext)
{
	struct sm_cql_frame_header h;
	struct sm_cql_response resp;
	struct sm_cql_request req;
	struct sm_cql_rows_writer w;
	const struct sm_cql_colspec col = { .name = S("v"),
					    .type = sm_type_simple(SM_TYPE_BIGINT) };
	const struct sm_cql_metadata meta = {
		.ncols = 1, .cols = &col, .ks = S("ks"), .table = S("t")
	};
	struct sm_bytes ps = S("paging-state");
	struct sm_cql_iter it;
	struct sm_cql_value v;
	struct sm_bytes cell;
	size_t off, i;

	sm_cql_buf_reset(b);
	sm_cql_buf_reset(ext);
	build_all_frames(b, false);
	build_all_frames(ext, true);
	off = b->len;
	assert_int_equal(sm_cql_rows_begin(&w, b, 1, &meta), 0);
	for (i = 0; i < 50; i++)
		sm_cql_rows_cell(&w, S("\0\0\0\0\0\0\0\1"));
	assert_int_equal(sm_cql_rows_end(&w, &ps), 0);
	assert_int_equal(sm_cql_frame_compress(b, off, c), 0);
	(void)frame_at(b, off, &h);
	sm_cql_buf_reset(d);
	assert_int_equal(sm_cql_lz4_decompress(d, b->p + off + 9, h.length, 1 << 20), 0);
	assert_int_equal(sm_cql_response_decode(&h, d->p, d->len, 0, &resp, NULL), 0);
	sm_cql_cells_iter(&it, &resp.u.result.u.rows);
	while (sm_cql_cells_next(&it, &cell))
		;
	assert_int_equal(sm_cql_iter_index(&it), 50);

	for (off = 0; off < b->len; off += 9 + h.length) {
		const uint8_t *body = frame_at(b, off, &h);

		if (h.flags & SM_CQL_FLAG_COMPRESSION)
			continue;
		if (h.version & 0x80) {
			assert_int_equal(sm_cql_response_decode(&h, body, h.length, 0, &resp, NULL),
					 0);
		} else {
			assert_int_equal(sm_cql_request_decode(&h, body, h.length, 0, &req, NULL),
					 0);
			if (h.opcode == SM_CQL_OP_QUERY) {
				sm_cql_values_iter(&it, &req.u.query.params.values);
				while (sm_cql_values_next(&it, &v))
					;
			}
		}
	}
}

static void
test_no_alloc_steady_state(void **state)
{
	struct sm_cql_buf b, c, d, ext;
	uint64_t before, after;
	int i;

	(void)state;
	sm_cql_buf_init(&b);
	sm_cql_buf_init(&c);
	sm_cql_buf_init(&d);
	sm_cql_buf_init(&ext);
	for (i = 0; i < 3; i++)
		steady_round(&b, &c, &d, &ext);
	before = allocs_now();
	for (i = 0; i < 100; i++)
		steady_round(&b, &c, &d, &ext);
	after = allocs_now();
	assert_int_equal(after - before, 0);
	/* And growing is counted, so the check above can see allocations. */
	sm_cql_buf_release(&d);
	before = allocs_now();
	assert_non_null(sm_cql_buf_append(&d, 1));
	assert_true(allocs_now() > before);
	sm_cql_buf_release(&b);
	sm_cql_buf_release(&c);
	sm_cql_buf_release(&d);
	sm_cql_buf_release(&ext);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_reader_primitives),
		cmocka_unit_test(test_writer_primitives),
		cmocka_unit_test(test_frame_rollback),
		cmocka_unit_test(test_vector_startup),
		cmocka_unit_test(test_vector_query_all_flags),
		cmocka_unit_test(test_vector_execute),
		cmocka_unit_test(test_vector_batch),
		cmocka_unit_test(test_vector_error_unprepared),
		cmocka_unit_test(test_vector_rows),
		cmocka_unit_test(test_option_to_type),
		cmocka_unit_test(test_roundtrip_requests),
		cmocka_unit_test(test_roundtrip_errors),
		cmocka_unit_test(test_roundtrip_simple_responses),
		cmocka_unit_test(test_roundtrip_rows),
		cmocka_unit_test(test_roundtrip_prepared),
		cmocka_unit_test(test_roundtrip_schema_and_events),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_version_error),
		cmocka_unit_test(test_lz4),
		cmocka_unit_test(test_no_alloc_steady_state),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
