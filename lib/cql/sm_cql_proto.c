/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <lz4.h>

#include "sm_core.h"
#include "sm_cql_proto.h"

/* ---------------------------------------------------------------------- */
/* Byte order                                                              */

/* ---------------------------------------------------------------------- */
/* Names                                                                   */

static const char *const opcode_names[] = {
	[SM_CQL_OP_ERROR] = "ERROR",
	[SM_CQL_OP_STARTUP] = "STARTUP",
	[SM_CQL_OP_READY] = "READY",
	[SM_CQL_OP_AUTHENTICATE] = "AUTHENTICATE",
	[SM_CQL_OP_OPTIONS] = "OPTIONS",
	[SM_CQL_OP_SUPPORTED] = "SUPPORTED",
	[SM_CQL_OP_QUERY] = "QUERY",
	[SM_CQL_OP_RESULT] = "RESULT",
	[SM_CQL_OP_PREPARE] = "PREPARE",
	[SM_CQL_OP_EXECUTE] = "EXECUTE",
	[SM_CQL_OP_REGISTER] = "REGISTER",
	[SM_CQL_OP_EVENT] = "EVENT",
	[SM_CQL_OP_BATCH] = "BATCH",
	[SM_CQL_OP_AUTH_CHALLENGE] = "AUTH_CHALLENGE",
	[SM_CQL_OP_AUTH_RESPONSE] = "AUTH_RESPONSE",
	[SM_CQL_OP_AUTH_SUCCESS] = "AUTH_SUCCESS",
};

static const char *const consistency_names[] = {
	[SM_CQL_ANY] = "ANY",
	[SM_CQL_ONE] = "ONE",
	[SM_CQL_TWO] = "TWO",
	[SM_CQL_THREE] = "THREE",
	[SM_CQL_QUORUM] = "QUORUM",
	[SM_CQL_ALL] = "ALL",
	[SM_CQL_LOCAL_QUORUM] = "LOCAL_QUORUM",
	[SM_CQL_EACH_QUORUM] = "EACH_QUORUM",
	[SM_CQL_SERIAL] = "SERIAL",
	[SM_CQL_LOCAL_SERIAL] = "LOCAL_SERIAL",
	[SM_CQL_LOCAL_ONE] = "LOCAL_ONE",
};

static const char *const write_type_names[] = {
	[SM_CQL_WT_SIMPLE] = "SIMPLE",
	[SM_CQL_WT_BATCH] = "BATCH",
	[SM_CQL_WT_UNLOGGED_BATCH] = "UNLOGGED_BATCH",
	[SM_CQL_WT_COUNTER] = "COUNTER",
	[SM_CQL_WT_BATCH_LOG] = "BATCH_LOG",
	[SM_CQL_WT_CAS] = "CAS",
	[SM_CQL_WT_VIEW] = "VIEW",
	[SM_CQL_WT_CDC] = "CDC",
};

static const char *const change_names[] = {
	[SM_CQL_CHANGE_CREATED] = "CREATED",
	[SM_CQL_CHANGE_UPDATED] = "UPDATED",
	[SM_CQL_CHANGE_DROPPED] = "DROPPED",
};

static const char *const target_names[] = {
	[SM_CQL_TARGET_KEYSPACE] = "KEYSPACE",	 [SM_CQL_TARGET_TABLE] = "TABLE",
	[SM_CQL_TARGET_TYPE] = "TYPE",		 [SM_CQL_TARGET_FUNCTION] = "FUNCTION",
	[SM_CQL_TARGET_AGGREGATE] = "AGGREGATE",
};

static const char *const event_names[] = {
	[SM_CQL_EVENT_TOPOLOGY_CHANGE] = "TOPOLOGY_CHANGE",
	[SM_CQL_EVENT_STATUS_CHANGE] = "STATUS_CHANGE",
	[SM_CQL_EVENT_SCHEMA_CHANGE] = "SCHEMA_CHANGE",
};

static const char *const node_change_names[] = {
	[SM_CQL_NODE_NEW] = "NEW_NODE",	    [SM_CQL_NODE_REMOVED] = "REMOVED_NODE",
	[SM_CQL_NODE_MOVED] = "MOVED_NODE", [SM_CQL_NODE_UP] = "UP",
	[SM_CQL_NODE_DOWN] = "DOWN",
};

const char *
sm_cql_opcode_name(unsigned opcode)
{
	return opcode < SM_ARRAY_SIZE(opcode_names) ? opcode_names[opcode] : NULL;
}

const char *
sm_cql_consistency_name(unsigned cl)
{
	return cl < SM_ARRAY_SIZE(consistency_names) ? consistency_names[cl] : NULL;
}

const char *
sm_cql_write_type_name(enum sm_cql_write_type wt)
{
	return (unsigned)wt < SM_ARRAY_SIZE(write_type_names) ? write_type_names[wt] : NULL;
}

struct sm_bytes
sm_cql_str(const char *s)
{
	struct sm_bytes b = { NULL, 0 };

	if (s != NULL) {
		b.p = (const uint8_t *)s;
		b.len = (uint32_t)strlen(s);
	}
	return b;
}

bool
sm_cql_str_eq(struct sm_bytes a, const char *s)
{
	size_t n = strlen(s);

	return a.len == n && (n == 0 || memcmp(a.p, s, n) == 0);
}

/* Index of @s in @names (n entries), or -1. */
static int
name_lookup(struct sm_bytes s, const char *const *names, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (names[i] != NULL && sm_cql_str_eq(s, names[i]))
			return (int)i;
	return -1;
}

int
sm_cql_event_type_parse(struct sm_bytes name)
{
	int i = name_lookup(name, event_names, SM_ARRAY_SIZE(event_names));

	return i < 0 ? -EINVAL : i;
}

/* ---------------------------------------------------------------------- */
/* Frame header                                                            */

int
sm_cql_frame_header_parse(const uint8_t *buf, size_t len, bool response,
			  struct sm_cql_frame_header *hdr, const char **reason)
{
	const char *why = NULL;
	unsigned v;
	int rc = 0;

	if (len < 1)
		return -EAGAIN;
	v = buf[0] & 0x7f;
	/* Versions 1 and 2 had a one-byte stream: read it where they put it. */
	if (v == 1 || v == 2) {
		if (len < SM_CQL_HEADER_LEN - 1)
			return -EAGAIN;
		hdr->stream = (int8_t)buf[2];
		hdr->opcode = buf[3];
		hdr->length = sm_get_be32(buf + 4);
	} else {
		if (len < SM_CQL_HEADER_LEN)
			return -EAGAIN;
		hdr->stream = (int16_t)sm_get_be16(buf + 2);
		hdr->opcode = buf[4];
		hdr->length = sm_get_be32(buf + 5);
	}
	hdr->version = buf[0];
	hdr->flags = buf[1];

	if (v != SM_CQL_VERSION) {
		why = "Invalid or unsupported protocol version";
		rc = -EPROTONOSUPPORT;
	} else if (!(buf[0] & SM_CQL_VERSION_DIR_MASK) != !response) {
		why = response ? "request frame where a response was expected"
			       : "response frame sent as a request";
		rc = -EPROTO;
	} else if (hdr->length > INT32_MAX) {
		why = "negative frame body length";
		rc = -EPROTO;
	}
	if (reason != NULL)
		*reason = why;
	return rc;
}

/* ---------------------------------------------------------------------- */
/* Reader                                                                  */

void
sm_cql_reader_init(struct sm_cql_reader *r, const void *p, size_t len)
{
	/* Pointer arithmetic on NULL is undefined even by 0: point empty input at a constant. */
	if (p == NULL) {
		p = "";
		len = 0;
	}
	r->p = p;
	r->end = r->p + len;
	r->err = NULL;
}

size_t
sm_cql_reader_left(const struct sm_cql_reader *r)
{
	return (size_t)(r->end - r->p);
}

void
sm_cql_reader_fail(struct sm_cql_reader *r, const char *reason)
{
	if (r->err == NULL)
		r->err = reason;
	r->p = r->end;
}

#define take sm_cql_reader_take

static inline struct sm_bytes
take_view(struct sm_cql_reader *r, size_t n, const char *what)
{
	struct sm_bytes b = { NULL, 0 };
	const uint8_t *q = take(r, n, what);

	if (q != NULL) {
		b.p = q;
		b.len = (uint32_t)n;
	}
	return b;
}

struct sm_bytes
sm_cql_read_raw(struct sm_cql_reader *r, size_t n)
{
	if (n > UINT32_MAX) {
		sm_cql_reader_fail(r, "field too long");
		return (struct sm_bytes){ NULL, 0 };
	}
	return take_view(r, n, "truncated body");
}

struct sm_bytes
sm_cql_read_string(struct sm_cql_reader *r)
{
	uint16_t n = sm_cql_read_short(r);

	return take_view(r, n, "truncated [string]");
}

struct sm_bytes
sm_cql_read_long_string(struct sm_cql_reader *r)
{
	int32_t n = sm_cql_read_int(r);

	if (n < 0) {
		sm_cql_reader_fail(r, "negative [long string] length");
		return (struct sm_bytes){ NULL, 0 };
	}
	return take_view(r, (size_t)n, "truncated [long string]");
}

struct sm_bytes
sm_cql_read_uuid(struct sm_cql_reader *r)
{
	return take_view(r, 16, "truncated [uuid]");
}

struct sm_bytes
sm_cql_read_bytes(struct sm_cql_reader *r)
{
	int32_t n = sm_cql_read_int(r);

	if (n < 0)
		return (struct sm_bytes){ NULL, 0 };
	return take_view(r, (size_t)n, "truncated [bytes]");
}

struct sm_bytes
sm_cql_read_short_bytes(struct sm_cql_reader *r)
{
	uint16_t n = sm_cql_read_short(r);

	return take_view(r, n, "truncated [short bytes]");
}

uint16_t
sm_cql_read_consistency(struct sm_cql_reader *r)
{
	uint16_t cl = sm_cql_read_short(r);

	if (cl > SM_CQL_LOCAL_ONE) {
		sm_cql_reader_fail(r, "unknown consistency level");
		return 0;
	}
	return cl;
}

void
sm_cql_read_value(struct sm_cql_reader *r, struct sm_cql_value *out)
{
	int32_t n = sm_cql_read_int(r);

	out->name = (struct sm_bytes){ NULL, 0 };
	out->v = (struct sm_bytes){ NULL, 0 };
	out->state = SM_CQL_VALUE_SET;
	if (n == -1) {
		out->state = SM_CQL_VALUE_NULL;
	} else if (n == -2) {
		out->state = SM_CQL_VALUE_UNSET;
	} else if (n < 0) {
		sm_cql_reader_fail(r, "invalid [value] length (below -2)");
	} else {
		out->v = take_view(r, (size_t)n, "truncated [value]");
	}
}

void
sm_cql_read_inetaddr(struct sm_cql_reader *r, struct sm_cql_inet *out)
{
	uint8_t n = sm_cql_read_byte(r);
	const uint8_t *q;

	memset(out, 0, sizeof(*out));
	if (!sm_cql_reader_ok(r))
		return;
	if (n != 4 && n != 16) {
		sm_cql_reader_fail(r, "[inet] address length is neither 4 nor 16");
		return;
	}
	q = take(r, n, "truncated [inet]");
	if (q == NULL)
		return;
	out->len = n;
	memcpy(out->addr, q, n);
}

void
sm_cql_read_inet(struct sm_cql_reader *r, struct sm_cql_inet *out)
{
	sm_cql_read_inetaddr(r, out);
	out->port = sm_cql_read_int(r);
	if (!sm_cql_reader_ok(r))
		memset(out, 0, sizeof(*out));
}

/* The bytes read since @start, as a view (empty after a failure). */
static inline struct sm_bytes
span_from(const struct sm_cql_reader *r, const uint8_t *start)
{
	if (!sm_cql_reader_ok(r))
		return (struct sm_bytes){ NULL, 0 };
	return (struct sm_bytes){ start, (uint32_t)(r->p - start) };
}

/* Skip @n strings; validation of a string list's body. */
static void
skip_strings(struct sm_cql_reader *r, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n && sm_cql_reader_ok(r); i++)
		(void)sm_cql_read_string(r);
}

void
sm_cql_read_string_list(struct sm_cql_reader *r, struct sm_cql_strlist *out)
{
	const uint8_t *start;

	memset(out, 0, sizeof(*out));
	out->n = sm_cql_read_short(r);
	start = r->p;
	skip_strings(r, out->n);
	out->raw = span_from(r, start);
	if (!sm_cql_reader_ok(r))
		out->n = 0;
}

void
sm_cql_read_string_map(struct sm_cql_reader *r, struct sm_cql_strmap *out)
{
	const uint8_t *start;

	memset(out, 0, sizeof(*out));
	out->n = sm_cql_read_short(r);
	start = r->p;
	skip_strings(r, 2u * out->n);
	out->raw = span_from(r, start);
	if (!sm_cql_reader_ok(r))
		out->n = 0;
}

void
sm_cql_read_string_multimap(struct sm_cql_reader *r, struct sm_cql_multimap *out)
{
	const uint8_t *start;
	struct sm_cql_strlist l;
	uint32_t i;

	memset(out, 0, sizeof(*out));
	out->n = sm_cql_read_short(r);
	start = r->p;
	for (i = 0; i < out->n && sm_cql_reader_ok(r); i++) {
		(void)sm_cql_read_string(r);
		sm_cql_read_string_list(r, &l);
	}
	out->raw = span_from(r, start);
	if (!sm_cql_reader_ok(r))
		out->n = 0;
}

void
sm_cql_read_bytes_map(struct sm_cql_reader *r, struct sm_cql_bytesmap *out)
{
	const uint8_t *start;
	uint32_t i;

	memset(out, 0, sizeof(*out));
	out->n = sm_cql_read_short(r);
	start = r->p;
	for (i = 0; i < out->n && sm_cql_reader_ok(r); i++) {
		(void)sm_cql_read_string(r);
		(void)sm_cql_read_bytes(r);
	}
	out->raw = span_from(r, start);
	if (!sm_cql_reader_ok(r))
		out->n = 0;
}

/* Option ids with no parameters: the v4 simple types (0x000A is v1's text, gone in v3). */
static bool
option_is_simple(uint16_t id)
{
	return id >= 0x0001 && id <= 0x0015 && id != 0x000A;
}

static void
option_skip(struct sm_cql_reader *r, unsigned depth)
{
	uint16_t id, n, i;

	if (depth > SM_CQL_MAX_OPTION_DEPTH) {
		sm_cql_reader_fail(r, "[option] nested too deep");
		return;
	}
	id = sm_cql_read_short(r);
	if (!sm_cql_reader_ok(r) || option_is_simple(id))
		return;
	switch (id) {
	case 0x0000: /* custom: the class name */
		(void)sm_cql_read_string(r);
		break;
	case 0x0020: /* list */
	case 0x0022: /* set */
		option_skip(r, depth + 1);
		break;
	case 0x0021: /* map */
		option_skip(r, depth + 1);
		option_skip(r, depth + 1);
		break;
	case 0x0030: /* UDT: keyspace, name, fields */
		(void)sm_cql_read_string(r);
		(void)sm_cql_read_string(r);
		n = sm_cql_read_short(r);
		for (i = 0; i < n && sm_cql_reader_ok(r); i++) {
			(void)sm_cql_read_string(r);
			option_skip(r, depth + 1);
		}
		break;
	case 0x0031: /* tuple */
		n = sm_cql_read_short(r);
		for (i = 0; i < n && sm_cql_reader_ok(r); i++)
			option_skip(r, depth + 1);
		break;
	default:
		sm_cql_reader_fail(r, "unknown [option] type id");
		break;
	}
}

struct sm_bytes
sm_cql_read_option(struct sm_cql_reader *r, uint16_t *id)
{
	const uint8_t *start = r->p;
	struct sm_bytes b;

	option_skip(r, 0);
	b = span_from(r, start);
	if (id != NULL)
		*id = b.len >= 2 ? sm_get_be16(b.p) : 0;
	return b;
}

/* Store kind of a simple option id; -1 when it has none. */
static int
option_simple_kind(uint16_t id)
{
	static const int8_t kinds[0x16] = {
		[0x00] = -1,
		[0x01] = SM_TYPE_ASCII,
		[0x02] = SM_TYPE_BIGINT,
		[0x03] = SM_TYPE_BLOB,
		[0x04] = SM_TYPE_BOOLEAN,
		[0x05] = SM_TYPE_COUNTER,
		[0x06] = SM_TYPE_DECIMAL,
		[0x07] = SM_TYPE_DOUBLE,
		[0x08] = SM_TYPE_FLOAT,
		[0x09] = SM_TYPE_INT,
		[0x0A] = -1,
		[0x0B] = SM_TYPE_TIMESTAMP,
		[0x0C] = SM_TYPE_UUID,
		[0x0D] = SM_TYPE_TEXT,
		[0x0E] = SM_TYPE_VARINT,
		[0x0F] = SM_TYPE_TIMEUUID,
		[0x10] = SM_TYPE_INET,
		[0x11] = SM_TYPE_DATE,
		[0x12] = SM_TYPE_TIME,
		[0x13] = SM_TYPE_SMALLINT,
		[0x14] = SM_TYPE_TINYINT,
		[0x15] = SM_TYPE_DURATION,
	};

	return id < SM_ARRAY_SIZE(kinds) ? kinds[id] : -1;
}

static int
option_type(struct sm_cql_reader *r, bool nested, unsigned depth, const struct sm_type **out)
{
	const struct sm_type *elem = NULL, *val = NULL;
	enum sm_type_kind kind;
	char err[128];
	uint16_t id;
	int rc, k;

	*out = NULL;
	if (depth > SM_CQL_MAX_OPTION_DEPTH)
		return -EPROTO;
	id = sm_cql_read_short(r);
	if (!sm_cql_reader_ok(r))
		return -EPROTO;
	k = option_simple_kind(id);
	if (k >= 0) {
		*out = sm_type_simple((enum sm_type_kind)k);
		return *out != NULL ? 0 : -EPROTO;
	}
	switch (id) {
	case 0x0020:
		kind = SM_TYPE_LIST;
		break;
	case 0x0021:
		kind = SM_TYPE_MAP;
		break;
	case 0x0022:
		kind = SM_TYPE_SET;
		break;
	case 0x0000:
	case 0x0030:
	case 0x0031:
		return -ENOTSUP;
	default:
		return -EPROTO;
	}
	rc = option_type(r, true, depth + 1, &elem);
	if (rc == 0 && kind == SM_TYPE_MAP)
		rc = option_type(r, true, depth + 1, &val);
	if (rc < 0)
		goto err_parts;
	/* The wire has no frozen<>: nested collections must be frozen to exist at all. */
	rc = sm_type_collection(kind, nested, elem, val, out, err, sizeof(err));
	if (rc == -EINVAL)
		rc = -EPROTO;
	return rc;

err_parts:
	sm_type_free(elem);
	sm_type_free(val);
	return rc;
}

int
sm_cql_option_to_type(struct sm_bytes option, const struct sm_type **out)
{
	struct sm_cql_reader r;

	sm_cql_reader_init(&r, option.p, option.len);
	return option_type(&r, false, 0, out);
}

/* ---------------------------------------------------------------------- */
/* Iterators                                                               */

static void
iter_init(struct sm_cql_iter *it, const void *arr, const void *ctx, struct sm_bytes raw, uint64_t n,
	  uint32_t flags)
{
	sm_cql_reader_init(&it->r, raw.p, raw.len);
	it->arr = arr;
	it->ctx = ctx;
	it->i = 0;
	it->n = n;
	it->flags = flags;
}

uint64_t
sm_cql_iter_index(const struct sm_cql_iter *it)
{
	return it->i;
}

void
sm_cql_strlist_iter(struct sm_cql_iter *it, const struct sm_cql_strlist *l)
{
	iter_init(it, l->v, NULL, l->raw, l->n, 0);
}

bool
sm_cql_strlist_next(struct sm_cql_iter *it, struct sm_bytes *s)
{
	if (it->i >= it->n)
		return false;
	if (it->arr != NULL) {
		*s = ((const struct sm_bytes *)it->arr)[it->i];
	} else {
		*s = sm_cql_read_string(&it->r);
		if (!sm_cql_reader_ok(&it->r))
			return false;
	}
	it->i++;
	return true;
}

void
sm_cql_strmap_iter(struct sm_cql_iter *it, const struct sm_cql_strmap *m)
{
	iter_init(it, m->kv, NULL, m->raw, m->n, 0);
}

/* The next key and value of a [string map] or [bytes map]: the map's
 * values are read with @read_val. */
static bool
pair_next(struct sm_cql_iter *it, struct sm_bytes *key, struct sm_bytes *val,
	  struct sm_bytes (*read_val)(struct sm_cql_reader *r))
{
	if (it->i >= it->n)
		return false;
	if (it->arr != NULL) {
		*key = ((const struct sm_bytes *)it->arr)[2 * it->i];
		*val = ((const struct sm_bytes *)it->arr)[2 * it->i + 1];
	} else {
		*key = sm_cql_read_string(&it->r);
		*val = read_val(&it->r);
		if (!sm_cql_reader_ok(&it->r))
			return false;
	}
	it->i++;
	return true;
}

bool
sm_cql_strmap_next(struct sm_cql_iter *it, struct sm_bytes *key, struct sm_bytes *val)
{
	return pair_next(it, key, val, sm_cql_read_string);
}

bool
sm_cql_strmap_get(const struct sm_cql_strmap *m, const char *key, struct sm_bytes *val)
{
	struct sm_cql_iter it;
	struct sm_bytes k, v;

	sm_cql_strmap_iter(&it, m);
	while (sm_cql_strmap_next(&it, &k, &v)) {
		if (sm_cql_str_eq(k, key)) {
			*val = v;
			return true;
		}
	}
	return false;
}

void
sm_cql_multimap_iter(struct sm_cql_iter *it, const struct sm_cql_multimap *m)
{
	iter_init(it, m->e, NULL, m->raw, m->n, 0);
}

bool
sm_cql_multimap_next(struct sm_cql_iter *it, struct sm_bytes *key, struct sm_cql_strlist *values)
{
	const struct sm_cql_multimap_entry *e;

	if (it->i >= it->n)
		return false;
	if (it->arr != NULL) {
		e = (const struct sm_cql_multimap_entry *)it->arr + it->i;
		*key = e->key;
		*values = e->values;
	} else {
		*key = sm_cql_read_string(&it->r);
		sm_cql_read_string_list(&it->r, values);
		if (!sm_cql_reader_ok(&it->r))
			return false;
	}
	it->i++;
	return true;
}

bool
sm_cql_multimap_get(const struct sm_cql_multimap *m, const char *key, struct sm_cql_strlist *values)
{
	struct sm_cql_strlist l;
	struct sm_cql_iter it;
	struct sm_bytes k;

	sm_cql_multimap_iter(&it, m);
	while (sm_cql_multimap_next(&it, &k, &l)) {
		if (sm_cql_str_eq(k, key)) {
			*values = l;
			return true;
		}
	}
	return false;
}

void
sm_cql_bytesmap_iter(struct sm_cql_iter *it, const struct sm_cql_bytesmap *m)
{
	iter_init(it, m->kv, NULL, m->raw, m->n, 0);
}

bool
sm_cql_bytesmap_next(struct sm_cql_iter *it, struct sm_bytes *key, struct sm_bytes *val)
{
	return pair_next(it, key, val, sm_cql_read_bytes);
}

void
sm_cql_values_iter(struct sm_cql_iter *it, const struct sm_cql_values *vals)
{
	iter_init(it, vals->v, NULL, vals->raw, vals->n, vals->named);
}

bool
sm_cql_values_next(struct sm_cql_iter *it, struct sm_cql_value *out)
{
	struct sm_bytes name = { NULL, 0 };

	if (it->i >= it->n)
		return false;
	if (it->arr != NULL) {
		*out = ((const struct sm_cql_value *)it->arr)[it->i];
	} else {
		if (it->flags)
			name = sm_cql_read_string(&it->r);
		sm_cql_read_value(&it->r, out);
		out->name = name;
		if (!sm_cql_reader_ok(&it->r))
			return false;
	}
	it->i++;
	return true;
}

int
sm_cql_values_get(const struct sm_cql_values *vals, struct sm_cql_value *out, size_t cap)
{
	struct sm_cql_iter it;
	size_t i = 0;

	if (vals->n > cap)
		return -ENOSPC;
	sm_cql_values_iter(&it, vals);
	while (i < cap && sm_cql_values_next(&it, &out[i]))
		i++;
	return (int)i;
}

/* Skip @n [value]s (each preceded by a name when @named). */
static void
skip_values(struct sm_cql_reader *r, uint32_t n, bool named)
{
	struct sm_cql_value v;
	uint32_t i;

	for (i = 0; i < n && sm_cql_reader_ok(r); i++) {
		if (named)
			(void)sm_cql_read_string(r);
		sm_cql_read_value(r, &v);
	}
}

/* One BATCH statement from the wire; values validated and kept raw. */
static void
read_batch_stmt(struct sm_cql_reader *r, struct sm_cql_batch_stmt *s)
{
	const uint8_t *start;

	memset(s, 0, sizeof(*s));
	s->kind = sm_cql_read_byte(r);
	if (s->kind == SM_CQL_BATCH_KIND_QUERY)
		s->query_or_id = sm_cql_read_long_string(r);
	else if (s->kind == SM_CQL_BATCH_KIND_PREPARED)
		s->query_or_id = sm_cql_read_short_bytes(r);
	else
		sm_cql_reader_fail(r, "invalid BATCH statement kind (must be 0 or 1)");
	s->values.n = sm_cql_read_short(r);
	start = r->p;
	skip_values(r, s->values.n, false);
	s->values.raw = span_from(r, start);
}

void
sm_cql_batch_iter(struct sm_cql_iter *it, const struct sm_cql_batch *batch)
{
	iter_init(it, batch->stmts, NULL, batch->raw, batch->n, 0);
}

bool
sm_cql_batch_next(struct sm_cql_iter *it, struct sm_cql_batch_stmt *out)
{
	if (it->i >= it->n)
		return false;
	if (it->arr != NULL) {
		*out = ((const struct sm_cql_batch_stmt *)it->arr)[it->i];
	} else {
		read_batch_stmt(&it->r, out);
		if (!sm_cql_reader_ok(&it->r))
			return false;
	}
	it->i++;
	return true;
}

static bool
meta_global(const struct sm_cql_metadata *m)
{
	if (m->cols != NULL || m->cols_raw.p == NULL)
		return m->ks.p != NULL; /* to encode: a global spec when given */
	return (m->flags & SM_CQL_META_GLOBAL_TABLES_SPEC) != 0;
}

void
sm_cql_colspec_iter(struct sm_cql_iter *it, const struct sm_cql_metadata *m)
{
	uint64_t n = (m->flags & SM_CQL_META_NO_METADATA) ? 0 : m->ncols;

	iter_init(it, m->cols, m, m->cols_raw, n, meta_global(m));
}

bool
sm_cql_colspec_next(struct sm_cql_iter *it, struct sm_cql_colspec *out)
{
	const struct sm_cql_metadata *m = it->ctx;

	if (it->i >= it->n)
		return false;
	if (it->arr != NULL) {
		*out = ((const struct sm_cql_colspec *)it->arr)[it->i];
	} else {
		memset(out, 0, sizeof(*out));
		if (!it->flags) {
			out->ks = sm_cql_read_string(&it->r);
			out->table = sm_cql_read_string(&it->r);
		}
		out->name = sm_cql_read_string(&it->r);
		out->type_raw = sm_cql_read_option(&it->r, &out->type_id);
		if (!sm_cql_reader_ok(&it->r))
			return false;
	}
	if (it->flags) {
		out->ks = m->ks;
		out->table = m->table;
	}
	it->i++;
	return true;
}

uint16_t
sm_cql_meta_pk_index(const struct sm_cql_metadata *m, uint32_t i)
{
	if (i >= m->npk)
		return 0;
	if (m->pk_indexes != NULL)
		return m->pk_indexes[i];
	if (m->pk_raw.p == NULL || m->pk_raw.len < 2 * ((size_t)i + 1))
		return 0;
	return sm_get_be16(m->pk_raw.p + 2 * (size_t)i);
}

void
sm_cql_cells_iter(struct sm_cql_iter *it, const struct sm_cql_rows *rows)
{
	iter_init(it, NULL, NULL, rows->content, (uint64_t)rows->nrows * rows->meta.ncols, 0);
}

bool
sm_cql_cells_next(struct sm_cql_iter *it, struct sm_bytes *cell)
{
	if (it->i >= it->n)
		return false;
	*cell = sm_cql_read_bytes(&it->r);
	if (!sm_cql_reader_ok(&it->r))
		return false;
	it->i++;
	return true;
}

/* ---------------------------------------------------------------------- */
/* Writer                                                                  */

#define BUF_MIN_CAP 256

void
sm_cql_buf_init(struct sm_cql_buf *b)
{
	b->p = NULL;
	b->len = 0;
	b->cap = 0;
	b->err = 0;
}

void
sm_cql_buf_release(struct sm_cql_buf *b)
{
	sm_free(b->p);
	sm_cql_buf_init(b);
}

void
sm_cql_buf_reset(struct sm_cql_buf *b)
{
	b->len = 0;
	b->err = 0;
}

static void
buf_fail(struct sm_cql_buf *b, int err)
{
	if (b->err == 0)
		b->err = err;
}

int
sm_cql_buf_reserve_slow(struct sm_cql_buf *b, size_t extra)
{
	size_t want, cap;
	uint8_t *p;

	if (b->err != 0)
		return b->err;
	/* Always hold memory, so that even an empty append returns a real pointer. */
	if (b->p != NULL && extra <= b->cap - b->len)
		return 0;
	if (extra > SIZE_MAX / 2 - b->len) {
		buf_fail(b, -ENOMEM);
		return b->err;
	}
	want = b->len + extra;
	cap = b->cap > 0 ? b->cap : BUF_MIN_CAP;
	while (cap < want)
		cap *= 2;
	p = sm_realloc(b->p, cap);
	if (p == NULL) {
		buf_fail(b, -ENOMEM);
		return b->err;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

void
sm_cql_write_string(struct sm_cql_buf *b, struct sm_bytes s)
{
	if (s.len > UINT16_MAX) {
		buf_fail(b, -EINVAL);
		return;
	}
	sm_cql_write_short(b, (uint16_t)s.len);
	sm_cql_write_raw(b, s.p, s.len);
}

void
sm_cql_write_long_string(struct sm_cql_buf *b, struct sm_bytes s)
{
	if (s.len > INT32_MAX) {
		buf_fail(b, -EINVAL);
		return;
	}
	sm_cql_write_int(b, (int32_t)s.len);
	sm_cql_write_raw(b, s.p, s.len);
}

void
sm_cql_write_uuid(struct sm_cql_buf *b, const uint8_t uuid[16])
{
	sm_cql_write_raw(b, uuid, 16);
}

void
sm_cql_write_bytes(struct sm_cql_buf *b, struct sm_bytes v)
{
	if (v.p == NULL) {
		sm_cql_write_int(b, -1);
		return;
	}
	sm_cql_write_long_string(b, v);
}

void
sm_cql_write_short_bytes(struct sm_cql_buf *b, struct sm_bytes v)
{
	sm_cql_write_string(b, v);
}

void
sm_cql_write_value(struct sm_cql_buf *b, const struct sm_cql_value *v)
{
	switch (v->state) {
	case SM_CQL_VALUE_SET:
		sm_cql_write_long_string(b, v->v);
		break;
	case SM_CQL_VALUE_NULL:
		sm_cql_write_int(b, -1);
		break;
	case SM_CQL_VALUE_UNSET:
		sm_cql_write_int(b, -2);
		break;
	default:
		buf_fail(b, -EINVAL);
		break;
	}
}

void
sm_cql_write_consistency(struct sm_cql_buf *b, uint16_t cl)
{
	sm_cql_write_short(b, cl);
}

void
sm_cql_write_inetaddr(struct sm_cql_buf *b, const struct sm_cql_inet *a)
{
	if (a->len != 4 && a->len != 16) {
		buf_fail(b, -EINVAL);
		return;
	}
	sm_cql_write_byte(b, a->len);
	sm_cql_write_raw(b, a->addr, a->len);
}

void
sm_cql_write_inet(struct sm_cql_buf *b, const struct sm_cql_inet *a)
{
	sm_cql_write_inetaddr(b, a);
	sm_cql_write_int(b, a->port);
}

/*
 * A list in raw form is written back as it was received: the count, then
 * the validated wire bytes.
 */
static void
write_raw_list(struct sm_cql_buf *b, uint16_t n, struct sm_bytes raw)
{
	sm_cql_write_short(b, n);
	sm_cql_write_raw(b, raw.p, raw.len);
}

void
sm_cql_write_string_list(struct sm_cql_buf *b, const struct sm_cql_strlist *l)
{
	uint32_t i;

	if (l->v == NULL) {
		write_raw_list(b, l->n, l->raw);
		return;
	}
	sm_cql_write_short(b, l->n);
	for (i = 0; i < l->n; i++)
		sm_cql_write_string(b, l->v[i]);
}

void
sm_cql_write_string_map(struct sm_cql_buf *b, const struct sm_cql_strmap *m)
{
	uint32_t i;

	if (m->kv == NULL) {
		write_raw_list(b, m->n, m->raw);
		return;
	}
	sm_cql_write_short(b, m->n);
	for (i = 0; i < 2u * m->n; i++)
		sm_cql_write_string(b, m->kv[i]);
}

void
sm_cql_write_string_multimap(struct sm_cql_buf *b, const struct sm_cql_multimap *m)
{
	uint32_t i;

	if (m->e == NULL) {
		write_raw_list(b, m->n, m->raw);
		return;
	}
	sm_cql_write_short(b, m->n);
	for (i = 0; i < m->n; i++) {
		sm_cql_write_string(b, m->e[i].key);
		sm_cql_write_string_list(b, &m->e[i].values);
	}
}

void
sm_cql_write_bytes_map(struct sm_cql_buf *b, const struct sm_cql_bytesmap *m)
{
	uint32_t i;

	if (m->kv == NULL) {
		write_raw_list(b, m->n, m->raw);
		return;
	}
	sm_cql_write_short(b, m->n);
	for (i = 0; i < m->n; i++) {
		sm_cql_write_string(b, m->kv[2 * i]);
		sm_cql_write_bytes(b, m->kv[2 * i + 1]);
	}
}

void
sm_cql_write_option(struct sm_cql_buf *b, const struct sm_type *t)
{
	uint16_t id = t != NULL ? sm_type_cql_id(t) : 0;
	unsigned i;

	if (id == 0) {
		buf_fail(b, -EINVAL);
		return;
	}
	sm_cql_write_short(b, id);
	switch (t->kind) {
	case SM_TYPE_LIST:
	case SM_TYPE_SET:
		sm_cql_write_option(b, t->elem);
		break;
	case SM_TYPE_MAP:
		sm_cql_write_option(b, t->elem);
		sm_cql_write_option(b, t->val);
		break;
	case SM_TYPE_UDT:
		/* keyspace, name, then each field's name and type */
		sm_cql_write_string(b, sm_cql_str(t->ks));
		sm_cql_write_string(b, sm_cql_str(t->name));
		sm_cql_write_short(b, t->nfields);
		for (i = 0; i < t->nfields; i++) {
			sm_cql_write_string(b, sm_cql_str(t->field_names[i]));
			sm_cql_write_option(b, t->fields[i]);
		}
		break;
	case SM_TYPE_TUPLE:
		sm_cql_write_short(b, t->nfields);
		for (i = 0; i < t->nfields; i++)
			sm_cql_write_option(b, t->fields[i]);
		break;
	default:
		break;
	}
}

size_t
sm_cql_frame_begin(struct sm_cql_buf *b, uint8_t version, uint8_t flags, int16_t stream,
		   uint8_t opcode)
{
	size_t off = b->len;
	uint8_t *q = sm_cql_buf_append(b, SM_CQL_HEADER_LEN);

	if (q != NULL) {
		q[0] = version;
		q[1] = flags;
		sm_put_be16(q + 2, (uint16_t)stream);
		q[4] = opcode;
		sm_put_be32(q + 5, 0);
	}
	return off;
}

int
sm_cql_frame_end(struct sm_cql_buf *b, size_t off)
{
	size_t body;
	int err;

	if (b->err == 0 && b->len - off - SM_CQL_HEADER_LEN > INT32_MAX)
		buf_fail(b, -EMSGSIZE);
	if (b->err != 0) {
		/* Leave exactly the frames completed before this one, and a usable buffer. */
		err = b->err;
		if (off <= b->len)
			b->len = off;
		b->err = 0;
		return err;
	}
	body = b->len - off - SM_CQL_HEADER_LEN;
	sm_put_be32(b->p + off + 5, (uint32_t)body);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Requests: decoding (server side)                                        */

static void
read_params(struct sm_cql_reader *r, struct sm_cql_params *p)
{
	const uint8_t *start;

	memset(p, 0, sizeof(*p));
	p->consistency = sm_cql_read_consistency(r);
	p->flags = sm_cql_read_byte(r);
	if (p->flags & SM_CQL_QF_VALUES) {
		p->values.named = (p->flags & SM_CQL_QF_NAMES_FOR_VALUES) != 0;
		p->values.n = sm_cql_read_short(r);
		start = r->p;
		skip_values(r, p->values.n, p->values.named);
		p->values.raw = span_from(r, start);
	}
	p->page_size = -1;
	if (p->flags & SM_CQL_QF_PAGE_SIZE)
		p->page_size = sm_cql_read_int(r);
	if (p->flags & SM_CQL_QF_PAGING_STATE)
		p->paging_state = sm_cql_read_bytes(r);
	p->serial_consistency = SM_CQL_SERIAL;
	if (p->flags & SM_CQL_QF_SERIAL_CONSISTENCY)
		p->serial_consistency = sm_cql_read_consistency(r);
	p->timestamp = INT64_MIN;
	if (p->flags & SM_CQL_QF_TIMESTAMP) {
		p->timestamp = sm_cql_read_long(r);
		/* Scylla's api::min_timestamp is INT64_MIN + 1: INT64_MIN means "none". */
		if (p->timestamp == INT64_MIN)
			sm_cql_reader_fail(r, "Out of bound timestamp");
	}
}

static void
read_batch(struct sm_cql_reader *r, struct sm_cql_batch *bt)
{
	struct sm_cql_batch_stmt s;
	const uint8_t *start;
	uint32_t i;

	memset(bt, 0, sizeof(*bt));
	bt->type = sm_cql_read_byte(r);
	if (bt->type > SM_CQL_BATCH_COUNTER)
		sm_cql_reader_fail(r, "unknown BATCH type");
	bt->n = sm_cql_read_short(r);
	start = r->p;
	for (i = 0; i < bt->n && sm_cql_reader_ok(r); i++)
		read_batch_stmt(r, &s);
	bt->raw = span_from(r, start);
	bt->consistency = sm_cql_read_consistency(r);
	bt->flags = sm_cql_read_byte(r);
	/* As Cassandra: the flag exists in the spec but no server implements it. */
	if (bt->flags & SM_CQL_QF_NAMES_FOR_VALUES)
		sm_cql_reader_fail(r, "Alternative syntax with named values is not supported in "
				      "batches");
	bt->serial_consistency = SM_CQL_SERIAL;
	if (bt->flags & SM_CQL_QF_SERIAL_CONSISTENCY)
		bt->serial_consistency = sm_cql_read_consistency(r);
	bt->timestamp = INT64_MIN;
	if (bt->flags & SM_CQL_QF_TIMESTAMP) {
		bt->timestamp = sm_cql_read_long(r);
		if (bt->timestamp == INT64_MIN)
			sm_cql_reader_fail(r, "Out of bound timestamp");
	}
}

int
sm_cql_request_decode(const struct sm_cql_frame_header *hdr, const uint8_t *body, size_t len,
		      unsigned ext, struct sm_cql_request *req, const char **reason)
{
	struct sm_cql_reader r;

	memset(req, 0, sizeof(*req));
	req->opcode = hdr->opcode;
	sm_cql_reader_init(&r, body, len);
	if (hdr->flags & SM_CQL_FLAG_CUSTOM_PAYLOAD)
		sm_cql_read_bytes_map(&r, &req->custom_payload);

	switch (hdr->opcode) {
	case SM_CQL_OP_STARTUP:
		sm_cql_read_string_map(&r, &req->u.startup);
		break;
	case SM_CQL_OP_AUTH_RESPONSE:
		req->u.auth_token = sm_cql_read_bytes(&r);
		break;
	case SM_CQL_OP_OPTIONS:
		break;
	case SM_CQL_OP_QUERY:
		req->u.query.query = sm_cql_read_long_string(&r);
		read_params(&r, &req->u.query.params);
		break;
	case SM_CQL_OP_PREPARE:
		req->u.prepare = sm_cql_read_long_string(&r);
		break;
	case SM_CQL_OP_EXECUTE:
		req->u.execute.id = sm_cql_read_short_bytes(&r);
		if (ext & SM_CQL_EXT_METADATA_ID)
			req->u.execute.result_metadata_id = sm_cql_read_short_bytes(&r);
		read_params(&r, &req->u.execute.params);
		break;
	case SM_CQL_OP_BATCH:
		read_batch(&r, &req->u.batch);
		/*
		 * A count below the statements sent would read the next statement
		 * as the consistency and flags and drop the rest: refuse what is
		 * left over. ScyllaDB ignores trailing bytes after any message
		 * (transport/server.cc reads what it needs), and so does this for
		 * the others; here they are statements the client means to run.
		 */
		if (sm_cql_reader_ok(&r) && sm_cql_reader_left(&r) > 0)
			sm_cql_reader_fail(&r, "bytes after the last statement and its options: the "
					       "statement count is less than the statements sent");
		break;
	case SM_CQL_OP_REGISTER:
		sm_cql_read_string_list(&r, &req->u.register_events);
		break;
	default:
		sm_cql_reader_fail(&r, sm_cql_opcode_name(hdr->opcode) != NULL
					       ? "response opcode in a request"
					       : "unknown opcode");
		break;
	}
	if (!sm_cql_reader_ok(&r)) {
		if (reason != NULL)
			*reason = r.err;
		return -EPROTO;
	}
	if (reason != NULL)
		*reason = NULL;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Requests: encoding (client side)                                        */

static void
write_values(struct sm_cql_buf *b, const struct sm_cql_values *vals)
{
	uint32_t i;

	sm_cql_write_short(b, vals->n);
	if (vals->v == NULL) {
		sm_cql_write_raw(b, vals->raw.p, vals->raw.len);
		return;
	}
	for (i = 0; i < vals->n; i++) {
		if (vals->named)
			sm_cql_write_string(b, vals->v[i].name);
		sm_cql_write_value(b, &vals->v[i]);
	}
}

static void
write_params(struct sm_cql_buf *b, const struct sm_cql_params *p)
{
	uint8_t flags = p->flags & (uint8_t) ~(SM_CQL_QF_VALUES | SM_CQL_QF_NAMES_FOR_VALUES);

	if (p->values.n > 0 || (p->flags & SM_CQL_QF_VALUES))
		flags |= SM_CQL_QF_VALUES;
	if ((flags & SM_CQL_QF_VALUES) && p->values.named)
		flags |= SM_CQL_QF_NAMES_FOR_VALUES;
	sm_cql_write_consistency(b, p->consistency);
	sm_cql_write_byte(b, flags);
	if (flags & SM_CQL_QF_VALUES)
		write_values(b, &p->values);
	if (flags & SM_CQL_QF_PAGE_SIZE)
		sm_cql_write_int(b, p->page_size);
	if (flags & SM_CQL_QF_PAGING_STATE)
		sm_cql_write_bytes(b, p->paging_state);
	if (flags & SM_CQL_QF_SERIAL_CONSISTENCY)
		sm_cql_write_consistency(b, p->serial_consistency);
	if (flags & SM_CQL_QF_TIMESTAMP)
		sm_cql_write_long(b, p->timestamp);
}

static size_t
req_begin(struct sm_cql_buf *b, int16_t stream, uint8_t opcode)
{
	return sm_cql_frame_begin(b, SM_CQL_VERSION_REQUEST, 0, stream, opcode);
}

int
sm_cql_enc_startup(struct sm_cql_buf *b, int16_t stream, const struct sm_cql_strmap *options)
{
	size_t off = req_begin(b, stream, SM_CQL_OP_STARTUP);

	sm_cql_write_string_map(b, options);
	return sm_cql_frame_end(b, off);
}

int
sm_cql_enc_options(struct sm_cql_buf *b, int16_t stream)
{
	return sm_cql_frame_end(b, req_begin(b, stream, SM_CQL_OP_OPTIONS));
}

int
sm_cql_enc_query(struct sm_cql_buf *b, int16_t stream, struct sm_bytes query,
		 const struct sm_cql_params *params)
{
	size_t off = req_begin(b, stream, SM_CQL_OP_QUERY);

	sm_cql_write_long_string(b, query);
	write_params(b, params);
	return sm_cql_frame_end(b, off);
}

int
sm_cql_enc_prepare(struct sm_cql_buf *b, int16_t stream, struct sm_bytes query)
{
	size_t off = req_begin(b, stream, SM_CQL_OP_PREPARE);

	sm_cql_write_long_string(b, query);
	return sm_cql_frame_end(b, off);
}

int
sm_cql_enc_execute(struct sm_cql_buf *b, int16_t stream, struct sm_bytes id,
		   struct sm_bytes result_metadata_id, const struct sm_cql_params *params)
{
	size_t off = req_begin(b, stream, SM_CQL_OP_EXECUTE);

	sm_cql_write_short_bytes(b, id);
	if (result_metadata_id.p != NULL)
		sm_cql_write_short_bytes(b, result_metadata_id);
	write_params(b, params);
	return sm_cql_frame_end(b, off);
}

int
sm_cql_enc_batch(struct sm_cql_buf *b, int16_t stream, const struct sm_cql_batch *batch)
{
	size_t off = req_begin(b, stream, SM_CQL_OP_BATCH);
	struct sm_cql_batch_stmt s;
	struct sm_cql_iter it;

	sm_cql_write_byte(b, batch->type);
	if (batch->stmts == NULL) {
		write_raw_list(b, batch->n, batch->raw);
	} else {
		sm_cql_write_short(b, batch->n);
		sm_cql_batch_iter(&it, batch);
		while (sm_cql_batch_next(&it, &s)) {
			sm_cql_write_byte(b, s.kind);
			if (s.kind == SM_CQL_BATCH_KIND_QUERY)
				sm_cql_write_long_string(b, s.query_or_id);
			else if (s.kind == SM_CQL_BATCH_KIND_PREPARED)
				sm_cql_write_short_bytes(b, s.query_or_id);
			else
				buf_fail(b, -EINVAL);
			if (s.values.named)
				buf_fail(b, -EINVAL);
			write_values(b, &s.values);
		}
	}
	sm_cql_write_consistency(b, batch->consistency);
	sm_cql_write_byte(b, batch->flags);
	if (batch->flags & SM_CQL_QF_SERIAL_CONSISTENCY)
		sm_cql_write_consistency(b, batch->serial_consistency);
	if (batch->flags & SM_CQL_QF_TIMESTAMP)
		sm_cql_write_long(b, batch->timestamp);
	return sm_cql_frame_end(b, off);
}

int
sm_cql_enc_register(struct sm_cql_buf *b, int16_t stream, const struct sm_cql_strlist *events)
{
	size_t off = req_begin(b, stream, SM_CQL_OP_REGISTER);

	sm_cql_write_string_list(b, events);
	return sm_cql_frame_end(b, off);
}

int
sm_cql_enc_auth_response(struct sm_cql_buf *b, int16_t stream, struct sm_bytes token)
{
	size_t off = req_begin(b, stream, SM_CQL_OP_AUTH_RESPONSE);

	sm_cql_write_bytes(b, token);
	return sm_cql_frame_end(b, off);
}

/* ---------------------------------------------------------------------- */
/* Responses: encoding (server side)                                       */

static size_t
resp_begin(struct sm_cql_buf *b, int16_t stream, uint8_t opcode)
{
	return sm_cql_frame_begin(b, SM_CQL_VERSION_RESPONSE, 0, stream, opcode);
}

static void
write_write_type(struct sm_cql_buf *b, enum sm_cql_write_type wt)
{
	const char *name = sm_cql_write_type_name(wt);

	if (name == NULL) {
		buf_fail(b, -EINVAL);
		return;
	}
	sm_cql_write_string(b, sm_cql_str(name));
}

/* A [string] cut to 65535 bytes without splitting a UTF-8 sequence: messages may quote queries. */
static void
write_message(struct sm_cql_buf *b, struct sm_bytes msg)
{
	if (msg.len > UINT16_MAX) {
		msg.len = UINT16_MAX;
		while (msg.len > 0 && (msg.p[msg.len] & 0xC0) == 0x80)
			msg.len--;
	}
	sm_cql_write_string(b, msg);
}

int
sm_cql_enc_error(struct sm_cql_buf *b, int16_t stream, const struct sm_cql_error *e)
{
	size_t off = resp_begin(b, stream, SM_CQL_OP_ERROR);

	sm_cql_write_int(b, e->code);
	write_message(b, e->message);
	switch (e->code) {
	case SM_CQL_ERR_UNAVAILABLE:
		sm_cql_write_consistency(b, e->consistency);
		sm_cql_write_int(b, e->required);
		sm_cql_write_int(b, e->alive);
		break;
	case SM_CQL_ERR_WRITE_TIMEOUT:
		sm_cql_write_consistency(b, e->consistency);
		sm_cql_write_int(b, e->received);
		sm_cql_write_int(b, e->blockfor);
		write_write_type(b, e->write_type);
		break;
	case SM_CQL_ERR_READ_TIMEOUT:
		sm_cql_write_consistency(b, e->consistency);
		sm_cql_write_int(b, e->received);
		sm_cql_write_int(b, e->blockfor);
		sm_cql_write_byte(b, e->data_present);
		break;
	case SM_CQL_ERR_READ_FAILURE:
		sm_cql_write_consistency(b, e->consistency);
		sm_cql_write_int(b, e->received);
		sm_cql_write_int(b, e->blockfor);
		sm_cql_write_int(b, e->numfailures);
		sm_cql_write_byte(b, e->data_present);
		break;
	case SM_CQL_ERR_WRITE_FAILURE:
		sm_cql_write_consistency(b, e->consistency);
		sm_cql_write_int(b, e->received);
		sm_cql_write_int(b, e->blockfor);
		sm_cql_write_int(b, e->numfailures);
		write_write_type(b, e->write_type);
		break;
	case SM_CQL_ERR_FUNCTION_FAILURE:
		sm_cql_write_string(b, e->keyspace);
		sm_cql_write_string(b, e->name);
		sm_cql_write_string_list(b, &e->arg_types);
		break;
	case SM_CQL_ERR_ALREADY_EXISTS:
		sm_cql_write_string(b, e->keyspace);
		sm_cql_write_string(b, e->name);
		break;
	case SM_CQL_ERR_UNPREPARED:
		sm_cql_write_short_bytes(b, e->id);
		break;
	case SM_CQL_ERR_RATE_LIMIT:
		sm_cql_write_byte(b, e->op_type);
		sm_cql_write_byte(b, e->rejected_by_coordinator);
		break;
	default:
		break;
	}
	return sm_cql_frame_end(b, off);
}

int
sm_cql_enc_ready(struct sm_cql_buf *b, int16_t stream)
{
	return sm_cql_frame_end(b, resp_begin(b, stream, SM_CQL_OP_READY));
}

int
sm_cql_enc_authenticate(struct sm_cql_buf *b, int16_t stream, struct sm_bytes authenticator)
{
	size_t off = resp_begin(b, stream, SM_CQL_OP_AUTHENTICATE);

	sm_cql_write_string(b, authenticator);
	return sm_cql_frame_end(b, off);
}

int
sm_cql_enc_auth_challenge(struct sm_cql_buf *b, int16_t stream, struct sm_bytes token)
{
	size_t off = resp_begin(b, stream, SM_CQL_OP_AUTH_CHALLENGE);

	sm_cql_write_bytes(b, token);
	return sm_cql_frame_end(b, off);
}

int
sm_cql_enc_auth_success(struct sm_cql_buf *b, int16_t stream, struct sm_bytes token)
{
	size_t off = resp_begin(b, stream, SM_CQL_OP_AUTH_SUCCESS);

	sm_cql_write_bytes(b, token);
	return sm_cql_frame_end(b, off);
}

int
sm_cql_enc_supported(struct sm_cql_buf *b, int16_t stream, const struct sm_cql_multimap *options)
{
	size_t off = resp_begin(b, stream, SM_CQL_OP_SUPPORTED);

	sm_cql_write_string_multimap(b, options);
	return sm_cql_frame_end(b, off);
}

int
sm_cql_enc_result_void(struct sm_cql_buf *b, int16_t stream)
{
	size_t off = resp_begin(b, stream, SM_CQL_OP_RESULT);

	sm_cql_write_int(b, SM_CQL_RESULT_VOID);
	return sm_cql_frame_end(b, off);
}

int
sm_cql_enc_set_keyspace(struct sm_cql_buf *b, int16_t stream, struct sm_bytes keyspace)
{
	size_t off = resp_begin(b, stream, SM_CQL_OP_RESULT);

	sm_cql_write_int(b, SM_CQL_RESULT_SET_KEYSPACE);
	sm_cql_write_string(b, keyspace);
	return sm_cql_frame_end(b, off);
}

/* The column specs of @m (global spec first when there is one). */
static void
write_colspecs(struct sm_cql_buf *b, const struct sm_cql_metadata *m, bool global)
{
	const struct sm_cql_colspec *c;
	uint32_t i;

	if (global) {
		sm_cql_write_string(b, m->ks);
		sm_cql_write_string(b, m->table);
	}
	if (m->cols == NULL) {
		/* Decoded metadata: the raw specs match the decoded global flag. */
		sm_cql_write_raw(b, m->cols_raw.p, m->cols_raw.len);
		return;
	}
	for (i = 0; i < m->ncols; i++) {
		c = &m->cols[i];
		if (!global) {
			sm_cql_write_string(b, c->ks);
			sm_cql_write_string(b, c->table);
		}
		sm_cql_write_string(b, c->name);
		if (c->type != NULL)
			sm_cql_write_option(b, c->type);
		else if (c->type_raw.len >= 2)
			sm_cql_write_raw(b, c->type_raw.p, c->type_raw.len);
		else
			buf_fail(b, -EINVAL);
	}
}

static void
write_rows_meta(struct sm_cql_buf *b, const struct sm_cql_metadata *m)
{
	uint32_t flags = m->flags & ~(SM_CQL_META_GLOBAL_TABLES_SPEC | SM_CQL_META_HAS_MORE_PAGES |
				      SM_CQL_META_METADATA_CHANGED);
	bool global = meta_global(m) && !(flags & SM_CQL_META_NO_METADATA);

	if (global)
		flags |= SM_CQL_META_GLOBAL_TABLES_SPEC;
	if (m->paging_state.p != NULL)
		flags |= SM_CQL_META_HAS_MORE_PAGES;
	if (m->new_metadata_id.p != NULL)
		flags |= SM_CQL_META_METADATA_CHANGED;
	if (m->ncols > INT32_MAX) {
		buf_fail(b, -EINVAL);
		return;
	}
	sm_cql_write_int(b, (int32_t)flags);
	sm_cql_write_int(b, (int32_t)m->ncols);
	if (flags & SM_CQL_META_HAS_MORE_PAGES)
		sm_cql_write_bytes(b, m->paging_state);
	if (flags & SM_CQL_META_METADATA_CHANGED)
		sm_cql_write_short_bytes(b, m->new_metadata_id);
	if (!(flags & SM_CQL_META_NO_METADATA))
		write_colspecs(b, m, global);
}

static void
write_prepared_meta(struct sm_cql_buf *b, const struct sm_cql_metadata *m)
{
	uint32_t flags = m->flags & ~SM_CQL_META_GLOBAL_TABLES_SPEC;
	bool global = meta_global(m);
	uint32_t i;

	if (global)
		flags |= SM_CQL_META_GLOBAL_TABLES_SPEC;
	if (m->ncols > INT32_MAX || m->npk > m->ncols) {
		buf_fail(b, -EINVAL);
		return;
	}
	sm_cql_write_int(b, (int32_t)flags);
	sm_cql_write_int(b, (int32_t)m->ncols);
	sm_cql_write_int(b, (int32_t)m->npk);
	if (m->pk_indexes != NULL) {
		for (i = 0; i < m->npk; i++)
			sm_cql_write_short(b, m->pk_indexes[i]);
	} else {
		sm_cql_write_raw(b, m->pk_raw.p, m->pk_raw.len);
	}
	write_colspecs(b, m, global);
}

int
sm_cql_enc_prepared(struct sm_cql_buf *b, int16_t stream, struct sm_bytes id,
		    struct sm_bytes result_metadata_id, const struct sm_cql_metadata *bind,
		    const struct sm_cql_metadata *result)
{
	size_t off = resp_begin(b, stream, SM_CQL_OP_RESULT);

	sm_cql_write_int(b, SM_CQL_RESULT_PREPARED);
	sm_cql_write_short_bytes(b, id);
	if (result_metadata_id.p != NULL)
		sm_cql_write_short_bytes(b, result_metadata_id);
	write_prepared_meta(b, bind);
	write_rows_meta(b, result);
	return sm_cql_frame_end(b, off);
}

static void
write_schema_change(struct sm_cql_buf *b, const struct sm_cql_schema_change *sc)
{
	if ((unsigned)sc->change >= SM_ARRAY_SIZE(change_names) ||
	    (unsigned)sc->target >= SM_ARRAY_SIZE(target_names)) {
		buf_fail(b, -EINVAL);
		return;
	}
	sm_cql_write_string(b, sm_cql_str(change_names[sc->change]));
	sm_cql_write_string(b, sm_cql_str(target_names[sc->target]));
	sm_cql_write_string(b, sc->keyspace);
	if (sc->target != SM_CQL_TARGET_KEYSPACE)
		sm_cql_write_string(b, sc->name);
	if (sc->target == SM_CQL_TARGET_FUNCTION || sc->target == SM_CQL_TARGET_AGGREGATE)
		sm_cql_write_string_list(b, &sc->args);
}

int
sm_cql_enc_schema_change(struct sm_cql_buf *b, int16_t stream,
			 const struct sm_cql_schema_change *sc)
{
	size_t off = resp_begin(b, stream, SM_CQL_OP_RESULT);

	sm_cql_write_int(b, SM_CQL_RESULT_SCHEMA_CHANGE);
	write_schema_change(b, sc);
	return sm_cql_frame_end(b, off);
}

int
sm_cql_enc_event(struct sm_cql_buf *b, const struct sm_cql_event *ev)
{
	size_t off = resp_begin(b, SM_CQL_EVENT_STREAM, SM_CQL_OP_EVENT);
	bool ok;

	if ((unsigned)ev->type >= SM_ARRAY_SIZE(event_names)) {
		buf_fail(b, -EINVAL);
		return sm_cql_frame_end(b, off);
	}
	sm_cql_write_string(b, sm_cql_str(event_names[ev->type]));
	switch (ev->type) {
	case SM_CQL_EVENT_TOPOLOGY_CHANGE:
	case SM_CQL_EVENT_STATUS_CHANGE:
		if (ev->type == SM_CQL_EVENT_TOPOLOGY_CHANGE)
			ok = (unsigned)ev->change <= SM_CQL_NODE_MOVED;
		else
			ok = ev->change == SM_CQL_NODE_UP || ev->change == SM_CQL_NODE_DOWN;
		if (!ok) {
			buf_fail(b, -EINVAL);
			break;
		}
		sm_cql_write_string(b, sm_cql_str(node_change_names[ev->change]));
		sm_cql_write_inet(b, &ev->addr);
		break;
	case SM_CQL_EVENT_SCHEMA_CHANGE:
		write_schema_change(b, &ev->schema);
		break;
	}
	return sm_cql_frame_end(b, off);
}

int
sm_cql_enc_version_error(struct sm_cql_buf *b, int16_t stream, unsigned version)
{
	char msg[64];
	struct sm_cql_error e = { .code = SM_CQL_ERR_PROTOCOL };
	int n;

	/* Scylla's exact text: drivers match its prefix to decide to downgrade. */
	n = snprintf(msg, sizeof(msg), "Invalid or unsupported protocol version: %u",
		     version & 0x7fu);
	e.message = (struct sm_bytes){ (const uint8_t *)msg, (uint32_t)n };
	return sm_cql_enc_error(b, stream, &e);
}

/* ---------------------------------------------------------------------- */
/* Rows writer                                                             */

int
sm_cql_rows_begin(struct sm_cql_rows_writer *w, struct sm_cql_buf *b, int16_t stream,
		  const struct sm_cql_metadata *meta)
{
	int rc;

	w->b = b;
	w->frame_off = resp_begin(b, stream, SM_CQL_OP_RESULT);
	sm_cql_write_int(b, SM_CQL_RESULT_ROWS);
	w->meta_off = b->len;
	write_rows_meta(b, meta);
	w->count_off = b->len;
	sm_cql_write_int(b, 0);
	w->ncols = meta->ncols;
	w->cell = 0;
	w->rows = 0;
	w->has_paging = meta->paging_state.p != NULL;
	if (b->err != 0) {
		rc = sm_cql_frame_end(b, w->frame_off);
		return rc;
	}
	return 0;
}

static inline void
rows_cell_done(struct sm_cql_rows_writer *w)
{
	if (++w->cell == w->ncols) {
		w->cell = 0;
		w->rows++;
	}
}

void
sm_cql_rows_cell_slow(struct sm_cql_rows_writer *w, struct sm_bytes v)
{
	sm_cql_write_bytes(w->b, v);
	rows_cell_done(w);
}

uint8_t *
sm_cql_rows_cell_space(struct sm_cql_rows_writer *w, uint32_t len)
{
	uint8_t *q;

	if (len > INT32_MAX) {
		buf_fail(w->b, -EINVAL);
		return NULL;
	}
	q = sm_cql_buf_append(w->b, 4 + (size_t)len);
	rows_cell_done(w);
	if (q == NULL)
		return NULL;
	sm_put_be32(q, len);
	return q + 4;
}

int
sm_cql_rows_end(struct sm_cql_rows_writer *w, const struct sm_bytes *paging_state)
{
	struct sm_cql_buf *b = w->b;
	size_t at, extra;
	uint8_t *q;

	if (w->cell != 0 || (paging_state != NULL && w->has_paging))
		buf_fail(b, -EINVAL);
	if (paging_state != NULL && b->err == 0) {
		/* The paging state lives right after <flags><columns_count>. */
		if (paging_state->len > INT32_MAX)
			buf_fail(b, -EINVAL);
		extra = paging_state->p != NULL ? 4 + (size_t)paging_state->len : 4;
		if (sm_cql_buf_reserve(b, extra) == 0) {
			at = w->meta_off + 8;
			memmove(b->p + at + extra, b->p + at, b->len - at);
			b->len += extra;
			q = b->p + at;
			if (paging_state->p != NULL) {
				sm_put_be32(q, paging_state->len);
				if (paging_state->len > 0)
					memcpy(q + 4, paging_state->p, paging_state->len);
			} else {
				sm_put_be32(q, (uint32_t)-1);
			}
			q = b->p + w->meta_off;
			sm_put_be32(q, sm_get_be32(q) | SM_CQL_META_HAS_MORE_PAGES);
			w->count_off += extra;
		}
	}
	if (b->err == 0)
		sm_put_be32(b->p + w->count_off, w->rows);
	return sm_cql_frame_end(b, w->frame_off);
}

/* ---------------------------------------------------------------------- */
/* Responses: decoding (client side)                                       */

static void
read_error(struct sm_cql_reader *r, struct sm_cql_error *e)
{
	struct sm_bytes wt;
	int i;

	e->code = sm_cql_read_int(r);
	e->message = sm_cql_read_string(r);
	switch (e->code) {
	case SM_CQL_ERR_UNAVAILABLE:
		e->consistency = sm_cql_read_consistency(r);
		e->required = sm_cql_read_int(r);
		e->alive = sm_cql_read_int(r);
		break;
	case SM_CQL_ERR_WRITE_TIMEOUT:
	case SM_CQL_ERR_WRITE_FAILURE:
		e->consistency = sm_cql_read_consistency(r);
		e->received = sm_cql_read_int(r);
		e->blockfor = sm_cql_read_int(r);
		if (e->code == SM_CQL_ERR_WRITE_FAILURE)
			e->numfailures = sm_cql_read_int(r);
		wt = sm_cql_read_string(r);
		i = name_lookup(wt, write_type_names, SM_ARRAY_SIZE(write_type_names));
		e->write_type = i < 0 ? SM_CQL_WT_UNKNOWN : (enum sm_cql_write_type)i;
		break;
	case SM_CQL_ERR_READ_TIMEOUT:
	case SM_CQL_ERR_READ_FAILURE:
		e->consistency = sm_cql_read_consistency(r);
		e->received = sm_cql_read_int(r);
		e->blockfor = sm_cql_read_int(r);
		if (e->code == SM_CQL_ERR_READ_FAILURE)
			e->numfailures = sm_cql_read_int(r);
		e->data_present = sm_cql_read_byte(r) != 0;
		break;
	case SM_CQL_ERR_FUNCTION_FAILURE:
		e->keyspace = sm_cql_read_string(r);
		e->name = sm_cql_read_string(r);
		sm_cql_read_string_list(r, &e->arg_types);
		break;
	case SM_CQL_ERR_ALREADY_EXISTS:
		e->keyspace = sm_cql_read_string(r);
		e->name = sm_cql_read_string(r);
		break;
	case SM_CQL_ERR_UNPREPARED:
		e->id = sm_cql_read_short_bytes(r);
		break;
	case SM_CQL_ERR_RATE_LIMIT:
		e->op_type = sm_cql_read_byte(r);
		e->rejected_by_coordinator = sm_cql_read_byte(r) != 0;
		break;
	default:
		break;
	}
}

/* A non-negative [int] count. */
static uint32_t
read_count(struct sm_cql_reader *r, const char *what)
{
	int32_t n = sm_cql_read_int(r);

	if (n < 0) {
		sm_cql_reader_fail(r, what);
		return 0;
	}
	return (uint32_t)n;
}

static void
read_colspecs(struct sm_cql_reader *r, struct sm_cql_metadata *m)
{
	bool global = (m->flags & SM_CQL_META_GLOBAL_TABLES_SPEC) != 0;
	const uint8_t *start;
	uint32_t i;

	if (m->flags & SM_CQL_META_NO_METADATA)
		return;
	if (global) {
		m->ks = sm_cql_read_string(r);
		m->table = sm_cql_read_string(r);
	}
	start = r->p;
	for (i = 0; i < m->ncols && sm_cql_reader_ok(r); i++) {
		if (!global) {
			(void)sm_cql_read_string(r);
			(void)sm_cql_read_string(r);
		}
		(void)sm_cql_read_string(r);
		(void)sm_cql_read_option(r, NULL);
	}
	m->cols_raw = span_from(r, start);
	/* The raw form marks decoded metadata, even with no columns. */
	if (m->cols_raw.p == NULL && sm_cql_reader_ok(r))
		m->cols_raw = (struct sm_bytes){ start, 0 };
}

static void
read_rows_meta(struct sm_cql_reader *r, struct sm_cql_metadata *m)
{
	memset(m, 0, sizeof(*m));
	m->flags = (uint32_t)sm_cql_read_int(r);
	m->ncols = read_count(r, "negative column count");
	if (m->flags & SM_CQL_META_HAS_MORE_PAGES)
		m->paging_state = sm_cql_read_bytes(r);
	if (m->flags & SM_CQL_META_METADATA_CHANGED)
		m->new_metadata_id = sm_cql_read_short_bytes(r);
	read_colspecs(r, m);
}

static void
read_prepared_meta(struct sm_cql_reader *r, struct sm_cql_metadata *m)
{
	uint32_t i;

	memset(m, 0, sizeof(*m));
	m->flags = (uint32_t)sm_cql_read_int(r);
	m->ncols = read_count(r, "negative column count");
	m->npk = read_count(r, "negative partition key count");
	m->pk_raw = sm_cql_read_raw(r, 2 * (size_t)m->npk);
	for (i = 0; i < m->npk && sm_cql_reader_ok(r); i++)
		if (sm_get_be16(m->pk_raw.p + 2 * (size_t)i) >= m->ncols)
			sm_cql_reader_fail(r, "partition key index out of range");
	read_colspecs(r, m);
}

static void
read_rows(struct sm_cql_reader *r, struct sm_cql_rows *rows)
{
	const uint8_t *start;
	uint64_t n, i;

	read_rows_meta(r, &rows->meta);
	rows->nrows = read_count(r, "negative row count");
	n = (uint64_t)rows->nrows * rows->meta.ncols;
	/* Each cell takes at least 4 bytes: refuse impossible counts before walking them.
	 * Rows without columns take none: their count is bounded by the body too,
	 * so that iterating them stays O(body). */
	if (n > sm_cql_reader_left(r) / 4 ||
	    (rows->meta.ncols == 0 && rows->nrows > sm_cql_reader_left(r)))
		sm_cql_reader_fail(r, "row count exceeds the body");
	start = r->p;
	for (i = 0; i < n && sm_cql_reader_ok(r); i++)
		(void)sm_cql_read_bytes(r);
	rows->content = span_from(r, start);
}

static void
read_schema_change(struct sm_cql_reader *r, struct sm_cql_schema_change *sc)
{
	int c, t;

	memset(sc, 0, sizeof(*sc));
	c = name_lookup(sm_cql_read_string(r), change_names, SM_ARRAY_SIZE(change_names));
	t = name_lookup(sm_cql_read_string(r), target_names, SM_ARRAY_SIZE(target_names));
	if (c < 0 || t < 0) {
		sm_cql_reader_fail(r, "unknown schema change type or target");
		return;
	}
	sc->change = (enum sm_cql_change_type)c;
	sc->target = (enum sm_cql_target)t;
	sc->keyspace = sm_cql_read_string(r);
	if (sc->target != SM_CQL_TARGET_KEYSPACE)
		sc->name = sm_cql_read_string(r);
	if (sc->target == SM_CQL_TARGET_FUNCTION || sc->target == SM_CQL_TARGET_AGGREGATE)
		sm_cql_read_string_list(r, &sc->args);
}

static void
read_result(struct sm_cql_reader *r, unsigned ext, struct sm_cql_result *res)
{
	res->kind = sm_cql_read_int(r);
	switch (res->kind) {
	case SM_CQL_RESULT_VOID:
		break;
	case SM_CQL_RESULT_ROWS:
		read_rows(r, &res->u.rows);
		break;
	case SM_CQL_RESULT_SET_KEYSPACE:
		res->u.keyspace = sm_cql_read_string(r);
		break;
	case SM_CQL_RESULT_PREPARED:
		res->u.prepared.id = sm_cql_read_short_bytes(r);
		if (ext & SM_CQL_EXT_METADATA_ID)
			res->u.prepared.result_metadata_id = sm_cql_read_short_bytes(r);
		read_prepared_meta(r, &res->u.prepared.bind);
		read_rows_meta(r, &res->u.prepared.result);
		break;
	case SM_CQL_RESULT_SCHEMA_CHANGE:
		read_schema_change(r, &res->u.schema_change);
		break;
	default:
		sm_cql_reader_fail(r, "unknown RESULT kind");
		break;
	}
}

static void
read_event(struct sm_cql_reader *r, struct sm_cql_event *ev)
{
	int t, c;

	t = sm_cql_event_type_parse(sm_cql_read_string(r));
	if (t < 0) {
		sm_cql_reader_fail(r, "unknown event type");
		return;
	}
	ev->type = (enum sm_cql_event_type)t;
	switch (ev->type) {
	case SM_CQL_EVENT_TOPOLOGY_CHANGE:
	case SM_CQL_EVENT_STATUS_CHANGE:
		c = name_lookup(sm_cql_read_string(r), node_change_names,
				SM_ARRAY_SIZE(node_change_names));
		if (c < 0 ||
		    (ev->type == SM_CQL_EVENT_TOPOLOGY_CHANGE) != (c <= SM_CQL_NODE_MOVED)) {
			sm_cql_reader_fail(r, "unknown event change");
			return;
		}
		ev->change = (enum sm_cql_node_change)c;
		sm_cql_read_inet(r, &ev->addr);
		break;
	case SM_CQL_EVENT_SCHEMA_CHANGE:
		read_schema_change(r, &ev->schema);
		break;
	}
}

int
sm_cql_response_decode(const struct sm_cql_frame_header *hdr, const uint8_t *body, size_t len,
		       unsigned ext, struct sm_cql_response *resp, const char **reason)
{
	struct sm_cql_reader r;

	memset(resp, 0, sizeof(*resp));
	resp->opcode = hdr->opcode;
	sm_cql_reader_init(&r, body, len);
	if (hdr->flags & SM_CQL_FLAG_TRACING)
		resp->tracing_id = sm_cql_read_uuid(&r);
	if (hdr->flags & SM_CQL_FLAG_WARNING)
		sm_cql_read_string_list(&r, &resp->warnings);
	if (hdr->flags & SM_CQL_FLAG_CUSTOM_PAYLOAD)
		sm_cql_read_bytes_map(&r, &resp->custom_payload);

	switch (hdr->opcode) {
	case SM_CQL_OP_ERROR:
		read_error(&r, &resp->u.error);
		break;
	case SM_CQL_OP_READY:
		break;
	case SM_CQL_OP_AUTHENTICATE:
		resp->u.authenticator = sm_cql_read_string(&r);
		break;
	case SM_CQL_OP_SUPPORTED:
		sm_cql_read_string_multimap(&r, &resp->u.supported);
		break;
	case SM_CQL_OP_RESULT:
		read_result(&r, ext, &resp->u.result);
		break;
	case SM_CQL_OP_EVENT:
		read_event(&r, &resp->u.event);
		break;
	case SM_CQL_OP_AUTH_CHALLENGE:
	case SM_CQL_OP_AUTH_SUCCESS:
		resp->u.auth_token = sm_cql_read_bytes(&r);
		break;
	default:
		sm_cql_reader_fail(&r, sm_cql_opcode_name(hdr->opcode) != NULL
					       ? "request opcode in a response"
					       : "unknown opcode");
		break;
	}
	if (!sm_cql_reader_ok(&r)) {
		if (reason != NULL)
			*reason = r.err;
		return -EPROTO;
	}
	if (reason != NULL)
		*reason = NULL;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Compression                                                             */

int
sm_cql_lz4_compress(struct sm_cql_buf *out, const uint8_t *src, size_t len)
{
	int bound, n;
	uint8_t *q;

	if (len > LZ4_MAX_INPUT_SIZE)
		return -EMSGSIZE;
	bound = LZ4_compressBound((int)len);
	if (sm_cql_buf_reserve(out, 4 + (size_t)bound) != 0)
		return out->err;
	q = out->p + out->len;
	sm_put_be32(q, (uint32_t)len);
	n = LZ4_compress_default((const char *)src, (char *)q + 4, (int)len, bound);
	if (n <= 0)
		return -EIO;
	out->len += 4 + (size_t)n;
	return 0;
}

int
sm_cql_lz4_decompress(struct sm_cql_buf *out, const uint8_t *src, size_t len, size_t max_len)
{
	uint32_t ulen;
	int n;

	if (len < 4 || len - 4 > INT_MAX)
		return -EPROTO;
	ulen = sm_get_be32(src);
	if (ulen > max_len)
		return -EMSGSIZE;
	/* LZ4 expands at most 255 times: a larger declared length is a lie,
	 * refused before the buffer is sized by it. */
	if (ulen > INT_MAX || ulen > (uint64_t)(len - 4) * 255 + 16)
		return -EPROTO;
	if (sm_cql_buf_reserve(out, ulen) != 0)
		return out->err;
	n = LZ4_decompress_safe((const char *)src + 4, (char *)out->p + out->len, (int)(len - 4),
				(int)ulen);
	if (n < 0 || (uint32_t)n != ulen)
		return -EPROTO;
	out->len += ulen;
	return 0;
}

int
sm_cql_frame_compress(struct sm_cql_buf *b, size_t frame_off, struct sm_cql_buf *scratch)
{
	size_t body_off = frame_off + SM_CQL_HEADER_LEN;
	size_t blen;
	int rc;

	if (b->err != 0)
		return b->err;
	if (body_off > b->len)
		return -EINVAL;
	sm_cql_buf_reset(scratch);
	rc = sm_cql_lz4_compress(scratch, b->p + body_off, b->len - body_off);
	if (rc < 0)
		return rc;
	if (scratch->len > INT32_MAX)
		return -EMSGSIZE;
	/* Grow before truncating (tiny bodies expand), so a failure leaves the frame intact. */
	blen = b->len - body_off;
	if (scratch->len > blen && sm_cql_buf_reserve(b, scratch->len - blen) != 0) {
		rc = b->err;
		b->err = 0;
		return rc;
	}
	b->len = body_off;
	sm_cql_write_raw(b, scratch->p, scratch->len);
	b->p[frame_off + 1] |= SM_CQL_FLAG_COMPRESSION;
	sm_put_be32(b->p + frame_off + 5, (uint32_t)scratch->len);
	return 0;
}
