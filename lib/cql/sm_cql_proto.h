/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_CQL_PROTO_H
#define SM_CQL_PROTO_H

/*
 * CQL native protocol v4 codec, server side and client side.
 *
 * Decoding never allocates and never copies: every decoded string, [bytes]
 * and list is a view (struct sm_bytes) into the caller's frame body, valid as
 * long as that body is. Lists, maps and value lists are validated completely
 * when their frame is decoded and kept as a view of their wire bytes plus a
 * count; iterate them with the sm_cql_*_iter()/sm_cql_*_next() pairs, which
 * cannot fail after a successful decode.
 *
 * Encoding appends whole frames to a caller-owned growable buffer
 * (struct sm_cql_buf); a reused buffer allocates nothing once it has grown
 * to its working size. The same structs describe a message for encoding and
 * after decoding: a list to encode is given as a C array (v/kv/e/cols/stmts),
 * a decoded one comes back as wire bytes (raw) with the array pointer NULL.
 * The iterators and the encoders accept either form, so a decoded message
 * can be re-encoded as is.
 *
 * Conventions for views: a string view may have p == NULL when empty. For a
 * [bytes] view, p == NULL means null and an empty non-null value has a
 * non-NULL p (SM_CQL_EMPTY); decoders always produce that form. [value]s have
 * a third state, "not set", so they carry an explicit state (struct
 * sm_cql_value).
 *
 * Compression: LZ4 only (liblz4), in the v4 framing (a 4-byte big-endian
 * uncompressed length, then one LZ4 block). Snappy is not implemented: a
 * server must not advertise it in SUPPORTED, and a STARTUP asking for it is
 * refused by the caller.
 *
 * Protocol v5 and its outer framing are not implemented; see
 * sm_cql_enc_version_error() for the downgrade answer drivers expect.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sm_byteorder.h"
#include "sm_types.h"

/* The protocol version this codec speaks, and its two header version bytes. */
#define SM_CQL_VERSION 4
#define SM_CQL_VERSION_REQUEST 0x04
#define SM_CQL_VERSION_RESPONSE 0x84
#define SM_CQL_VERSION_DIR_MASK 0x80

#define SM_CQL_HEADER_LEN 9

/* The spec's cap on a frame body (256 MiB); callers usually enforce less. */
#define SM_CQL_MAX_BODY (256u << 20)

/* Frame header flags. */
#define SM_CQL_FLAG_COMPRESSION 0x01
#define SM_CQL_FLAG_TRACING 0x02
#define SM_CQL_FLAG_CUSTOM_PAYLOAD 0x04
#define SM_CQL_FLAG_WARNING 0x08
#define SM_CQL_FLAG_BETA 0x10

/* The stream id of server-pushed EVENT frames. */
#define SM_CQL_EVENT_STREAM (-1)

enum sm_cql_opcode {
	SM_CQL_OP_ERROR = 0x00,
	SM_CQL_OP_STARTUP = 0x01,
	SM_CQL_OP_READY = 0x02,
	SM_CQL_OP_AUTHENTICATE = 0x03,
	SM_CQL_OP_OPTIONS = 0x05,
	SM_CQL_OP_SUPPORTED = 0x06,
	SM_CQL_OP_QUERY = 0x07,
	SM_CQL_OP_RESULT = 0x08,
	SM_CQL_OP_PREPARE = 0x09,
	SM_CQL_OP_EXECUTE = 0x0A,
	SM_CQL_OP_REGISTER = 0x0B,
	SM_CQL_OP_EVENT = 0x0C,
	SM_CQL_OP_BATCH = 0x0D,
	SM_CQL_OP_AUTH_CHALLENGE = 0x0E,
	SM_CQL_OP_AUTH_RESPONSE = 0x0F,
	SM_CQL_OP_AUTH_SUCCESS = 0x10,
};

enum sm_cql_consistency {
	SM_CQL_ANY = 0x0000,
	SM_CQL_ONE = 0x0001,
	SM_CQL_TWO = 0x0002,
	SM_CQL_THREE = 0x0003,
	SM_CQL_QUORUM = 0x0004,
	SM_CQL_ALL = 0x0005,
	SM_CQL_LOCAL_QUORUM = 0x0006,
	SM_CQL_EACH_QUORUM = 0x0007,
	SM_CQL_SERIAL = 0x0008,
	SM_CQL_LOCAL_SERIAL = 0x0009,
	SM_CQL_LOCAL_ONE = 0x000A,
};

/* Error codes (cql.md §1.8), including Scylla's rate limit error. */
enum sm_cql_error_code {
	SM_CQL_ERR_SERVER = 0x0000,
	SM_CQL_ERR_PROTOCOL = 0x000A,
	SM_CQL_ERR_BAD_CREDENTIALS = 0x0100,
	SM_CQL_ERR_UNAVAILABLE = 0x1000,
	SM_CQL_ERR_OVERLOADED = 0x1001,
	SM_CQL_ERR_IS_BOOTSTRAPPING = 0x1002,
	SM_CQL_ERR_TRUNCATE = 0x1003,
	SM_CQL_ERR_WRITE_TIMEOUT = 0x1100,
	SM_CQL_ERR_READ_TIMEOUT = 0x1200,
	SM_CQL_ERR_READ_FAILURE = 0x1300,
	SM_CQL_ERR_FUNCTION_FAILURE = 0x1400,
	SM_CQL_ERR_WRITE_FAILURE = 0x1500,
	SM_CQL_ERR_CDC_WRITE_FAILURE = 0x1600,
	SM_CQL_ERR_SYNTAX = 0x2000,
	SM_CQL_ERR_UNAUTHORIZED = 0x2100,
	SM_CQL_ERR_INVALID = 0x2200,
	SM_CQL_ERR_CONFIG = 0x2300,
	SM_CQL_ERR_ALREADY_EXISTS = 0x2400,
	SM_CQL_ERR_UNPREPARED = 0x2500,
	SM_CQL_ERR_RATE_LIMIT = 0xF000,
};

/* The writeType of Write_timeout and Write_failure; drivers know no others. */
enum sm_cql_write_type {
	SM_CQL_WT_SIMPLE,
	SM_CQL_WT_BATCH,
	SM_CQL_WT_UNLOGGED_BATCH,
	SM_CQL_WT_COUNTER,
	SM_CQL_WT_BATCH_LOG,
	SM_CQL_WT_CAS,
	SM_CQL_WT_VIEW,
	SM_CQL_WT_CDC,
	SM_CQL_WT_UNKNOWN, /* decoded only: a string not in the list above */
};

/* <query_parameters> flags (a [byte] in v4). */
#define SM_CQL_QF_VALUES 0x01
#define SM_CQL_QF_SKIP_METADATA 0x02
#define SM_CQL_QF_PAGE_SIZE 0x04
#define SM_CQL_QF_PAGING_STATE 0x08
#define SM_CQL_QF_SERIAL_CONSISTENCY 0x10
#define SM_CQL_QF_TIMESTAMP 0x20
#define SM_CQL_QF_NAMES_FOR_VALUES 0x40

enum sm_cql_batch_type {
	SM_CQL_BATCH_LOGGED = 0,
	SM_CQL_BATCH_UNLOGGED = 1,
	SM_CQL_BATCH_COUNTER = 2,
};

/* The kind of one BATCH statement. */
#define SM_CQL_BATCH_KIND_QUERY 0
#define SM_CQL_BATCH_KIND_PREPARED 1

enum sm_cql_result_kind {
	SM_CQL_RESULT_VOID = 0x0001,
	SM_CQL_RESULT_ROWS = 0x0002,
	SM_CQL_RESULT_SET_KEYSPACE = 0x0003,
	SM_CQL_RESULT_PREPARED = 0x0004,
	SM_CQL_RESULT_SCHEMA_CHANGE = 0x0005,
};

/* Rows / Prepared metadata flags. */
#define SM_CQL_META_GLOBAL_TABLES_SPEC 0x0001u
#define SM_CQL_META_HAS_MORE_PAGES 0x0002u
#define SM_CQL_META_NO_METADATA 0x0004u
#define SM_CQL_META_METADATA_CHANGED 0x0008u /* only with SM_CQL_EXT_METADATA_ID */
/* Scylla's LWT_ADD_METADATA_MARK bit in Prepared bind metadata (cql.md §2.4). */
#define SM_CQL_META_LWT 0x80000000u

/*
 * Protocol extensions negotiated in STARTUP that change the wire format
 * (cql.md §2.7). SM_CQL_EXT_METADATA_ID (SCYLLA_USE_METADATA_ID): EXECUTE
 * carries a [short bytes] result metadata id after the statement id, and
 * Prepared results carry one after theirs, as in v5.
 */
#define SM_CQL_EXT_METADATA_ID 0x0001u

enum sm_cql_change_type {
	SM_CQL_CHANGE_CREATED,
	SM_CQL_CHANGE_UPDATED,
	SM_CQL_CHANGE_DROPPED,
};

enum sm_cql_target {
	SM_CQL_TARGET_KEYSPACE,
	SM_CQL_TARGET_TABLE,
	SM_CQL_TARGET_TYPE,
	SM_CQL_TARGET_FUNCTION,
	SM_CQL_TARGET_AGGREGATE,
};

enum sm_cql_event_type {
	SM_CQL_EVENT_TOPOLOGY_CHANGE,
	SM_CQL_EVENT_STATUS_CHANGE,
	SM_CQL_EVENT_SCHEMA_CHANGE,
};

/* TOPOLOGY_CHANGE and STATUS_CHANGE change names share one enum. */
enum sm_cql_node_change {
	SM_CQL_NODE_NEW, /* NEW_NODE */
	SM_CQL_NODE_REMOVED,
	SM_CQL_NODE_MOVED,
	SM_CQL_NODE_UP,
	SM_CQL_NODE_DOWN,
};

/* Deepest nesting of [option]s a decoder accepts (list<list<...>> and so on). */
#define SM_CQL_MAX_OPTION_DEPTH 32

/* An empty but non-null [bytes] view. */
#define SM_CQL_EMPTY ((struct sm_bytes){ (const uint8_t *)"", 0 })

/* A view of a NUL-terminated string (NULL gives an empty view). */
struct sm_bytes
sm_cql_str(const char *s);

/* ---------------------------------------------------------------------- */
/* Frame header                                                            */

struct sm_cql_frame_header {
	uint8_t version; /* the raw byte, direction bit included */
	uint8_t flags;
	int16_t stream;
	uint8_t opcode;
	uint32_t length; /* body length, at most INT32_MAX */
};

/*
 * Parse a frame header from the first @len bytes of @buf. @response says
 * which direction the caller expects (a server parses requests, a client
 * responses). Returns:
 *   0            *hdr is filled;
 *   -EAGAIN      fewer bytes than a header (9, or 8 for versions 1 and 2);
 *   -EPROTONOSUPPORT  the version is not 4: *hdr is filled (stream read as
 *                that version lays it out) so that a server can answer with
 *                sm_cql_enc_version_error() on hdr->stream and close;
 *   -EPROTO      wrong direction bit or a negative length, with *reason.
 * Unknown flags and opcodes are left to the caller (a request with an
 * unknown opcode is a per-stream protocol error, not a broken connection);
 * so is the maximum body size, checked on hdr->length.
 */
int
sm_cql_frame_header_parse(const uint8_t *buf, size_t len, bool response,
			  struct sm_cql_frame_header *hdr, const char **reason);

/* The opcode's name ("QUERY"), or NULL for an unknown one. */
const char *
sm_cql_opcode_name(unsigned opcode);

/* The consistency level's name ("LOCAL_QUORUM"), or NULL for an unknown one. */
const char *
sm_cql_consistency_name(unsigned cl);

/* ---------------------------------------------------------------------- */
/* Reader: bounds-checked notation decoding with a sticky error            */

/*
 * A cursor over a body. Every read checks its bounds; the first failure
 * records a reason in err and moves the cursor to the end, and every later
 * read fails too (returning zeros and empty views), so a caller reads a whole
 * structure and checks sm_cql_reader_ok() once.
 */
struct sm_cql_reader {
	const uint8_t *p;
	const uint8_t *end;
	const char *err; /* NULL while well-formed */
};

/* Start reading @len bytes at @p. */
void
sm_cql_reader_init(struct sm_cql_reader *r, const void *p, size_t len);

/* True while nothing has failed. */
static inline bool
sm_cql_reader_ok(const struct sm_cql_reader *r)
{
	return r->err == NULL;
}

/* Bytes not yet read. */
size_t
sm_cql_reader_left(const struct sm_cql_reader *r);

/* Mark @r malformed with @reason (a static string) unless it already is. */
void
sm_cql_reader_fail(struct sm_cql_reader *r, const char *reason);

/* @n bytes at the cursor, or NULL (and the reader failed) when there are fewer. */
static inline const uint8_t *
sm_cql_reader_take(struct sm_cql_reader *r, size_t n, const char *what)
{
	const uint8_t *q;

	if (__builtin_expect(r->err != NULL, 0))
		return NULL;
	if (__builtin_expect((size_t)(r->end - r->p) < n, 0)) {
		sm_cql_reader_fail(r, what);
		return NULL;
	}
	q = r->p;
	r->p += n;
	return q;
}

/* [byte], [short] (unsigned), [int], [long]; inline: a request's decoding reads a dozen. */
static inline uint8_t
sm_cql_read_byte(struct sm_cql_reader *r)
{
	const uint8_t *q = sm_cql_reader_take(r, 1, "truncated [byte]");

	return q != NULL ? q[0] : 0;
}

static inline uint16_t
sm_cql_read_short(struct sm_cql_reader *r)
{
	const uint8_t *q = sm_cql_reader_take(r, 2, "truncated [short]");

	return q != NULL ? sm_get_be16(q) : 0;
}

static inline int32_t
sm_cql_read_int(struct sm_cql_reader *r)
{
	const uint8_t *q = sm_cql_reader_take(r, 4, "truncated [int]");

	return q != NULL ? (int32_t)sm_get_be32(q) : 0;
}

static inline int64_t
sm_cql_read_long(struct sm_cql_reader *r)
{
	const uint8_t *q = sm_cql_reader_take(r, 8, "truncated [long]");

	return q != NULL ? (int64_t)sm_get_be64(q) : 0;
}

/* @n raw bytes. */
struct sm_bytes
sm_cql_read_raw(struct sm_cql_reader *r, size_t n);

/* [string] and [long string] (a negative length is malformed). */
struct sm_bytes
sm_cql_read_string(struct sm_cql_reader *r);
struct sm_bytes
sm_cql_read_long_string(struct sm_cql_reader *r);

/* [uuid]: a view of its 16 bytes. */
struct sm_bytes
sm_cql_read_uuid(struct sm_cql_reader *r);

/* [bytes]: a negative length is null (p == NULL), as the spec says. */
struct sm_bytes
sm_cql_read_bytes(struct sm_cql_reader *r);

/* [short bytes]. */
struct sm_bytes
sm_cql_read_short_bytes(struct sm_cql_reader *r);

/* [consistency]: a level above LOCAL_ONE is malformed. */
uint16_t
sm_cql_read_consistency(struct sm_cql_reader *r);

enum sm_cql_value_state {
	SM_CQL_VALUE_SET,
	SM_CQL_VALUE_NULL,
	SM_CQL_VALUE_UNSET,
};

/* A bound [value]; name only with SM_CQL_QF_NAMES_FOR_VALUES. */
struct sm_cql_value {
	struct sm_bytes v;
	enum sm_cql_value_state state;
	struct sm_bytes name;
};

/* [value]: -1 null, -2 not set, below -2 malformed. out->name is left empty. */
void
sm_cql_read_value(struct sm_cql_reader *r, struct sm_cql_value *out);

/* [inet] (address and port) and [inetaddr] (address only; port 0). */
struct sm_cql_inet {
	uint8_t len; /* 4 or 16 */
	uint8_t addr[16];
	int32_t port;
};

void
sm_cql_read_inet(struct sm_cql_reader *r, struct sm_cql_inet *out);
void
sm_cql_read_inetaddr(struct sm_cql_reader *r, struct sm_cql_inet *out);

/* [string list]: v (n strings) to encode, raw after decoding. */
struct sm_cql_strlist {
	const struct sm_bytes *v;
	struct sm_bytes raw;
	uint16_t n;
};

/* [string map]: kv (2n strings: key, value, key, value...) to encode, raw after decoding. */
struct sm_cql_strmap {
	const struct sm_bytes *kv;
	struct sm_bytes raw;
	uint16_t n;
};

/* One [string multimap] entry. */
struct sm_cql_multimap_entry {
	struct sm_bytes key;
	struct sm_cql_strlist values;
};

/* [string multimap]: e (n entries) to encode, raw after decoding. */
struct sm_cql_multimap {
	const struct sm_cql_multimap_entry *e;
	struct sm_bytes raw;
	uint16_t n;
};

/* [bytes map]: kv (2n views: key string, [bytes] value...) to encode, raw after decoding. */
struct sm_cql_bytesmap {
	const struct sm_bytes *kv;
	struct sm_bytes raw;
	uint16_t n;
};

/* Read and validate a whole list or map; the result is a raw view. */
void
sm_cql_read_string_list(struct sm_cql_reader *r, struct sm_cql_strlist *out);
void
sm_cql_read_string_map(struct sm_cql_reader *r, struct sm_cql_strmap *out);
void
sm_cql_read_string_multimap(struct sm_cql_reader *r, struct sm_cql_multimap *out);
void
sm_cql_read_bytes_map(struct sm_cql_reader *r, struct sm_cql_bytesmap *out);

/*
 * [option]: validate one type option, nested ones included (custom class,
 * list, map, set, UDT, tuple; at most SM_CQL_MAX_OPTION_DEPTH deep), and
 * return a view of all its bytes; *id gets the top-level id when @id is not
 * NULL. Unknown ids are malformed.
 */
struct sm_bytes
sm_cql_read_option(struct sm_cql_reader *r, uint16_t *id);

/*
 * Build the store type of a raw [option] (from sm_cql_read_option()): simple
 * types are singletons, collections a tree for sm_type_free(); collections
 * nested in collections come back frozen, as the wire does not say. Returns
 * 0, -EPROTO for a malformed option, -ENOTSUP for custom, UDT and tuple
 * types (the store has none), or -ENOMEM.
 */
int
sm_cql_option_to_type(struct sm_bytes option, const struct sm_type **out);

/* ---------------------------------------------------------------------- */
/* Iteration over lists and maps, array-backed or wire-backed              */

/* One iterator for every list kind; fields are private. */
struct sm_cql_iter {
	struct sm_cql_reader r;
	const void *arr;
	const void *ctx;
	uint64_t i, n;
	uint32_t flags;
};

/* Start iterating the strings of @l, array-backed or wire-backed. */
void
sm_cql_strlist_iter(struct sm_cql_iter *it, const struct sm_cql_strlist *l);
/* The next string into *s; false at the end. */
bool
sm_cql_strlist_next(struct sm_cql_iter *it, struct sm_bytes *s);

/* Start iterating the pairs of @m. */
void
sm_cql_strmap_iter(struct sm_cql_iter *it, const struct sm_cql_strmap *m);
/* The next pair; false at the end. */
bool
sm_cql_strmap_next(struct sm_cql_iter *it, struct sm_bytes *key, struct sm_bytes *val);
/* Look @key up (exact, case-sensitive); true and *val when present. */
bool
sm_cql_strmap_get(const struct sm_cql_strmap *m, const char *key, struct sm_bytes *val);

/* Start iterating the entries of @m. */
void
sm_cql_multimap_iter(struct sm_cql_iter *it, const struct sm_cql_multimap *m);
/* The next key and its values (a string list to iterate); false at the end. */
bool
sm_cql_multimap_next(struct sm_cql_iter *it, struct sm_bytes *key, struct sm_cql_strlist *values);
/* Look @key up; true and *values when present. */
bool
sm_cql_multimap_get(const struct sm_cql_multimap *m, const char *key,
		    struct sm_cql_strlist *values);

/* Start iterating the pairs of @m. */
void
sm_cql_bytesmap_iter(struct sm_cql_iter *it, const struct sm_cql_bytesmap *m);
/* The next key and [bytes] value (p == NULL when null); false at the end. */
bool
sm_cql_bytesmap_next(struct sm_cql_iter *it, struct sm_bytes *key, struct sm_bytes *val);

/* True when a string view equals the C string @s. */
bool
sm_cql_str_eq(struct sm_bytes a, const char *s);

/* ---------------------------------------------------------------------- */
/* Writer                                                                  */

/*
 * A growable output buffer. It grows with sm_realloc(), doubling, so a
 * buffer reset and reused allocates nothing once it reached its working
 * size. Failures are sticky: the first -ENOMEM (or -EINVAL for a string or
 * list too long for its length field) is kept in err and every later write
 * is skipped, so a caller writes a whole structure and checks once. The
 * error stays until sm_cql_buf_reset() or sm_cql_frame_end(): the frame
 * encoders (sm_cql_enc_*(), sm_cql_rows_end()) check for you and roll a
 * failed frame back.
 */
struct sm_cql_buf {
	uint8_t *p;
	size_t len, cap;
	int err; /* 0, or the first -errno */
};

/* An empty buffer (no allocation until the first write). */
void
sm_cql_buf_init(struct sm_cql_buf *b);

/* Free the memory; the buffer is empty and usable again. */
void
sm_cql_buf_release(struct sm_cql_buf *b);

/* Forget the contents and any error, keeping the memory. */
void
sm_cql_buf_reset(struct sm_cql_buf *b);

/* sm_cql_buf_reserve() when the room is not there yet (grows the buffer). */
int
sm_cql_buf_reserve_slow(struct sm_cql_buf *b, size_t extra);

/*
 * Make room for @extra more bytes; 0 or -ENOMEM (also kept in err). Inline:
 * every field of a response goes through here, and the room is almost
 * always there already.
 */
static inline int
sm_cql_buf_reserve(struct sm_cql_buf *b, size_t extra)
{
	if (__builtin_expect(b->err == 0 && b->p != NULL && extra <= b->cap - b->len, 1))
		return 0;
	return sm_cql_buf_reserve_slow(b, extra);
}

/* Append @n bytes and return where they go (the caller fills them), or NULL after a failure. */
static inline uint8_t *
sm_cql_buf_append(struct sm_cql_buf *b, size_t n)
{
	uint8_t *q;

	if (sm_cql_buf_reserve(b, n) != 0)
		return NULL;
	q = b->p + b->len;
	b->len += n;
	return q;
}

/* The protocol's fixed-size fields, inline: a response writes a dozen of them per row. */
static inline void
sm_cql_write_byte(struct sm_cql_buf *b, uint8_t v)
{
	uint8_t *q = sm_cql_buf_append(b, 1);

	if (q != NULL)
		q[0] = v;
}

static inline void
sm_cql_write_short(struct sm_cql_buf *b, uint16_t v)
{
	uint8_t *q = sm_cql_buf_append(b, 2);

	if (q != NULL)
		sm_put_be16(q, v);
}

static inline void
sm_cql_write_int(struct sm_cql_buf *b, int32_t v)
{
	uint8_t *q = sm_cql_buf_append(b, 4);

	if (q != NULL)
		sm_put_be32(q, (uint32_t)v);
}

static inline void
sm_cql_write_long(struct sm_cql_buf *b, int64_t v)
{
	uint8_t *q = sm_cql_buf_append(b, 8);

	if (q != NULL)
		sm_put_be64(q, (uint64_t)v);
}

static inline void
sm_cql_write_raw(struct sm_cql_buf *b, const void *p, size_t n)
{
	uint8_t *q = sm_cql_buf_append(b, n);

	if (q != NULL && n > 0)
		memcpy(q, p, n);
}
/* [string]: -EINVAL when longer than 65535 bytes. */
void
sm_cql_write_string(struct sm_cql_buf *b, struct sm_bytes s);
/* [long string]: -EINVAL when longer than INT32_MAX bytes. */
void
sm_cql_write_long_string(struct sm_cql_buf *b, struct sm_bytes s);
/* [uuid] from 16 bytes. */
void
sm_cql_write_uuid(struct sm_cql_buf *b, const uint8_t uuid[16]);
/* [bytes]: null when v.p is NULL. */
void
sm_cql_write_bytes(struct sm_cql_buf *b, struct sm_bytes v);
/* [short bytes]. */
void
sm_cql_write_short_bytes(struct sm_cql_buf *b, struct sm_bytes v);
/* [value] with its state. */
void
sm_cql_write_value(struct sm_cql_buf *b, const struct sm_cql_value *v);
/* [consistency]. */
void
sm_cql_write_consistency(struct sm_cql_buf *b, uint16_t cl);
/* [inet] and [inetaddr]; -EINVAL unless len is 4 or 16. */
void
sm_cql_write_inet(struct sm_cql_buf *b, const struct sm_cql_inet *a);
void
sm_cql_write_inetaddr(struct sm_cql_buf *b, const struct sm_cql_inet *a);
/* Lists and maps, from either form. */
void
sm_cql_write_string_list(struct sm_cql_buf *b, const struct sm_cql_strlist *l);
void
sm_cql_write_string_map(struct sm_cql_buf *b, const struct sm_cql_strmap *m);
void
sm_cql_write_string_multimap(struct sm_cql_buf *b, const struct sm_cql_multimap *m);
void
sm_cql_write_bytes_map(struct sm_cql_buf *b, const struct sm_cql_bytesmap *m);
/* The [option] of a store type, element options of collections included. */
void
sm_cql_write_option(struct sm_cql_buf *b, const struct sm_type *t);

/*
 * Start a frame: write its header with a zero length and return the offset
 * of the header in @b, to pass to sm_cql_frame_end(). @version is the whole
 * version byte (SM_CQL_VERSION_REQUEST or SM_CQL_VERSION_RESPONSE).
 */
size_t
sm_cql_frame_begin(struct sm_cql_buf *b, uint8_t version, uint8_t flags, int16_t stream,
		   uint8_t opcode);

/*
 * Finish the frame that starts at @off: backpatch its length from what was
 * written since. Returns 0, or the buffer's error, in which case the frame
 * is rolled back (b->len = @off) and the error cleared, so the buffer holds
 * exactly the frames completed before and stays usable.
 */
int
sm_cql_frame_end(struct sm_cql_buf *b, size_t off);

/* ---------------------------------------------------------------------- */
/* Messages                                                                */

/*
 * Bound values of a QUERY, EXECUTE or BATCH statement: v (n values) to
 * encode, raw after decoding. named: each value has a [string] name
 * (SM_CQL_QF_NAMES_FOR_VALUES).
 */
struct sm_cql_values {
	const struct sm_cql_value *v;
	struct sm_bytes raw;
	uint16_t n;
	bool named;
};

/* Start iterating the values of @vals. */
void
sm_cql_values_iter(struct sm_cql_iter *it, const struct sm_cql_values *vals);
/* The next value (with its name when named); false at the end. */
bool
sm_cql_values_next(struct sm_cql_iter *it, struct sm_cql_value *out);
/* All values into @out (room for @cap); their count, or -ENOSPC when more than @cap. */
int
sm_cql_values_get(const struct sm_cql_values *vals, struct sm_cql_value *out, size_t cap);

/*
 * <query_parameters>. Decoding fills the fields that are absent with their
 * defaults: page_size -1, serial_consistency SERIAL, timestamp INT64_MIN,
 * paging_state null. Encoding writes the fields that @flags selects;
 * SM_CQL_QF_VALUES and SM_CQL_QF_NAMES_FOR_VALUES are derived from values.
 */
struct sm_cql_params {
	uint16_t consistency;
	uint8_t flags;
	struct sm_cql_values values;
	int32_t page_size;
	struct sm_bytes paging_state;
	uint16_t serial_consistency;
	int64_t timestamp; /* microseconds */
};

struct sm_cql_query {
	struct sm_bytes query;
	struct sm_cql_params params;
};

struct sm_cql_execute {
	struct sm_bytes id;
	struct sm_bytes result_metadata_id; /* SM_CQL_EXT_METADATA_ID only; p NULL otherwise */
	struct sm_cql_params params;
};

/* One BATCH statement: kind SM_CQL_BATCH_KIND_QUERY (query string) or _PREPARED (id). */
struct sm_cql_batch_stmt {
	uint8_t kind;
	struct sm_bytes query_or_id;
	struct sm_cql_values values; /* never named */
};

/*
 * BATCH: stmts (n statements) to encode, raw after decoding. Decoding fills
 * serial_consistency SERIAL and timestamp INT64_MIN when absent; encoding
 * writes what @flags selects (SM_CQL_QF_SERIAL_CONSISTENCY, _TIMESTAMP).
 */
struct sm_cql_batch {
	uint8_t type; /* enum sm_cql_batch_type */
	const struct sm_cql_batch_stmt *stmts;
	struct sm_bytes raw;
	uint16_t n;
	uint16_t consistency;
	uint8_t flags;
	uint16_t serial_consistency;
	int64_t timestamp;
};

/* Start iterating the statements of @batch. */
void
sm_cql_batch_iter(struct sm_cql_iter *it, const struct sm_cql_batch *batch);
/* The next statement; false at the end. */
bool
sm_cql_batch_next(struct sm_cql_iter *it, struct sm_cql_batch_stmt *out);

/* A decoded request; u.* is the member that opcode selects. */
struct sm_cql_request {
	uint8_t opcode;
	struct sm_cql_bytesmap custom_payload; /* n = 0 without SM_CQL_FLAG_CUSTOM_PAYLOAD */
	union {
		struct sm_cql_strmap startup;
		struct sm_bytes auth_token; /* AUTH_RESPONSE; p NULL when null */
		struct sm_cql_query query;
		struct sm_bytes prepare; /* the query string */
		struct sm_cql_execute execute;
		struct sm_cql_batch batch;
		struct sm_cql_strlist register_events;
	} u;
};

/*
 * Decode the request body @body (@len bytes, already decompressed: the
 * compression flag in @hdr is ignored) of the frame @hdr into @req, views
 * into @body. @ext is the SM_CQL_EXT_* set negotiated on the connection.
 * Trailing bytes after a complete body are ignored, as Cassandra and Scylla
 * do. Returns 0, or -EPROTO with a static *reason for a malformed body, a
 * response opcode or an unknown one (each a per-stream Protocol error); OPTIONS
 * has an empty body and decodes to nothing. Never reads outside @body.
 */
int
sm_cql_request_decode(const struct sm_cql_frame_header *hdr, const uint8_t *body, size_t len,
		      unsigned ext, struct sm_cql_request *req, const char **reason);

/* Client side: append one request frame each (stream @stream, version 0x04). 0 or -errno. */
int
sm_cql_enc_startup(struct sm_cql_buf *b, int16_t stream, const struct sm_cql_strmap *options);
int
sm_cql_enc_options(struct sm_cql_buf *b, int16_t stream);
int
sm_cql_enc_query(struct sm_cql_buf *b, int16_t stream, struct sm_bytes query,
		 const struct sm_cql_params *params);
int
sm_cql_enc_prepare(struct sm_cql_buf *b, int16_t stream, struct sm_bytes query);
/* @result_metadata_id is written only when its p is non-NULL (SM_CQL_EXT_METADATA_ID). */
int
sm_cql_enc_execute(struct sm_cql_buf *b, int16_t stream, struct sm_bytes id,
		   struct sm_bytes result_metadata_id, const struct sm_cql_params *params);
int
sm_cql_enc_batch(struct sm_cql_buf *b, int16_t stream, const struct sm_cql_batch *batch);
int
sm_cql_enc_register(struct sm_cql_buf *b, int16_t stream, const struct sm_cql_strlist *events);
/* @token p NULL sends a null token. */
int
sm_cql_enc_auth_response(struct sm_cql_buf *b, int16_t stream, struct sm_bytes token);

/*
 * ERROR. The extra fields used depend on code (cql.md §1.8):
 *   UNAVAILABLE     consistency, required, alive
 *   WRITE_TIMEOUT   consistency, received, blockfor, write_type
 *   READ_TIMEOUT    consistency, received, blockfor, data_present
 *   READ_FAILURE    consistency, received, blockfor, numfailures, data_present
 *   WRITE_FAILURE   consistency, received, blockfor, numfailures, write_type
 *   FUNCTION_FAILURE  keyspace, name (function), arg_types
 *   ALREADY_EXISTS  keyspace, name (table; empty for a keyspace)
 *   UNPREPARED      id
 *   RATE_LIMIT      op_type (0 read, 1 write), rejected_by_coordinator
 */
struct sm_cql_error {
	int32_t code;
	struct sm_bytes message;
	uint16_t consistency;
	int32_t required, alive;
	int32_t received, blockfor;
	int32_t numfailures;
	bool data_present;
	enum sm_cql_write_type write_type;
	struct sm_bytes keyspace, name;
	struct sm_cql_strlist arg_types;
	struct sm_bytes id;
	uint8_t op_type;
	bool rejected_by_coordinator;
};

/* The wire name of a write type ("UNLOGGED_BATCH"), NULL for SM_CQL_WT_UNKNOWN. */
const char *
sm_cql_write_type_name(enum sm_cql_write_type wt);

/*
 * A column spec. To encode, give the type as a store type (type) or as raw
 * [option] bytes (type_raw, used when type is NULL); decoding fills type_raw
 * and type_id and leaves type NULL. ks and table are ignored (not written)
 * under a global table spec.
 */
struct sm_cql_colspec {
	struct sm_bytes ks, table, name;
	const struct sm_type *type;
	struct sm_bytes type_raw;
	uint16_t type_id;
};

/*
 * Rows metadata, and Prepared bind metadata (pk indexes). To encode: cols
 * (ncols specs), the global table spec in ks/table when ks.p is non-NULL,
 * paging_state when its p is non-NULL, new_metadata_id when its p is
 * non-NULL (METADATA_CHANGED), other flag bits (NO_METADATA, LWT) in flags;
 * pk_indexes (npk of them) for bind metadata. Decoded: flags as received,
 * columns in cols_raw, pk indexes in pk_raw.
 */
struct sm_cql_metadata {
	uint32_t flags;
	uint32_t ncols;
	struct sm_bytes paging_state;
	struct sm_bytes new_metadata_id;
	struct sm_bytes ks, table;
	const struct sm_cql_colspec *cols;
	struct sm_bytes cols_raw;
	uint32_t npk;
	const uint16_t *pk_indexes;
	struct sm_bytes pk_raw;
};

/* Start iterating the column specs of @m (none under NO_METADATA). */
void
sm_cql_colspec_iter(struct sm_cql_iter *it, const struct sm_cql_metadata *m);
/* The next column spec (ks/table filled from the global spec when there is one); false at the end. */
bool
sm_cql_colspec_next(struct sm_cql_iter *it, struct sm_cql_colspec *out);
/* Partition key index @i (< npk) of bind metadata. */
uint16_t
sm_cql_meta_pk_index(const struct sm_cql_metadata *m, uint32_t i);

/* A decoded Rows result; cells in content, row-major. */
struct sm_cql_rows {
	struct sm_cql_metadata meta;
	uint32_t nrows;
	struct sm_bytes content;
};

/*
 * Iterate the nrows x ncols cells of @rows, row-major; each is a [bytes]
 * view (p NULL for null). sm_cql_iter_index() tells the cell's position.
 */
void
sm_cql_cells_iter(struct sm_cql_iter *it, const struct sm_cql_rows *rows);
bool
sm_cql_cells_next(struct sm_cql_iter *it, struct sm_bytes *cell);
/* Items the iterator has returned so far (the index of the last one plus 1). */
uint64_t
sm_cql_iter_index(const struct sm_cql_iter *it);

struct sm_cql_prepared {
	struct sm_bytes id;
	struct sm_bytes result_metadata_id; /* SM_CQL_EXT_METADATA_ID only */
	struct sm_cql_metadata bind;
	struct sm_cql_metadata result;
};

struct sm_cql_schema_change {
	enum sm_cql_change_type change;
	enum sm_cql_target target;
	struct sm_bytes keyspace;
	struct sm_bytes name;	    /* TABLE, TYPE, FUNCTION, AGGREGATE */
	struct sm_cql_strlist args; /* FUNCTION, AGGREGATE: argument types */
};

struct sm_cql_result {
	int32_t kind; /* enum sm_cql_result_kind */
	union {
		struct sm_cql_rows rows;
		struct sm_bytes keyspace;
		struct sm_cql_prepared prepared;
		struct sm_cql_schema_change schema_change;
	} u;
};

/* An EVENT: change and addr for TOPOLOGY_CHANGE/STATUS_CHANGE, schema for SCHEMA_CHANGE. */
struct sm_cql_event {
	enum sm_cql_event_type type;
	enum sm_cql_node_change change;
	struct sm_cql_inet addr;
	struct sm_cql_schema_change schema;
};

/* The event type named @name ("STATUS_CHANGE"), or -EINVAL; for REGISTER. */
int
sm_cql_event_type_parse(struct sm_bytes name);

/* A decoded response; u.* is the member that opcode selects. */
struct sm_cql_response {
	uint8_t opcode;
	struct sm_bytes tracing_id;	       /* p NULL without SM_CQL_FLAG_TRACING */
	struct sm_cql_strlist warnings;	       /* n = 0 without SM_CQL_FLAG_WARNING */
	struct sm_cql_bytesmap custom_payload; /* n = 0 without SM_CQL_FLAG_CUSTOM_PAYLOAD */
	union {
		struct sm_cql_error error;
		struct sm_bytes authenticator;
		struct sm_cql_multimap supported;
		struct sm_cql_result result;
		struct sm_cql_event event;
		struct sm_bytes auth_token; /* AUTH_CHALLENGE, AUTH_SUCCESS; p NULL when null */
	} u;
};

/*
 * Client side: decode a response body (@len bytes, decompressed) of the
 * frame @hdr, views into @body; @ext as for requests. Reads the tracing id,
 * warnings and custom payload that the header flags announce, then the
 * message. Rows cells are bounds-checked here, so iterating them cannot
 * fail. Returns 0, or -EPROTO with a static *reason. READY has no body.
 */
int
sm_cql_response_decode(const struct sm_cql_frame_header *hdr, const uint8_t *body, size_t len,
		       unsigned ext, struct sm_cql_response *resp, const char **reason);

/* Server side: append one response frame each (version 0x84). 0 or -errno. */

/* ERROR with the extra body its code needs; a message over 65535 bytes is cut (on a UTF-8 boundary). */
int
sm_cql_enc_error(struct sm_cql_buf *b, int16_t stream, const struct sm_cql_error *e);
int
sm_cql_enc_ready(struct sm_cql_buf *b, int16_t stream);
int
sm_cql_enc_authenticate(struct sm_cql_buf *b, int16_t stream, struct sm_bytes authenticator);
int
sm_cql_enc_auth_challenge(struct sm_cql_buf *b, int16_t stream, struct sm_bytes token);
int
sm_cql_enc_auth_success(struct sm_cql_buf *b, int16_t stream, struct sm_bytes token);
int
sm_cql_enc_supported(struct sm_cql_buf *b, int16_t stream, const struct sm_cql_multimap *options);
int
sm_cql_enc_result_void(struct sm_cql_buf *b, int16_t stream);
int
sm_cql_enc_set_keyspace(struct sm_cql_buf *b, int16_t stream, struct sm_bytes keyspace);
/* Prepared: @result_metadata_id written only when its p is non-NULL (SM_CQL_EXT_METADATA_ID). */
int
sm_cql_enc_prepared(struct sm_cql_buf *b, int16_t stream, struct sm_bytes id,
		    struct sm_bytes result_metadata_id, const struct sm_cql_metadata *bind,
		    const struct sm_cql_metadata *result);
int
sm_cql_enc_schema_change(struct sm_cql_buf *b, int16_t stream,
			 const struct sm_cql_schema_change *sc);
/* EVENT, always on stream -1. */
int
sm_cql_enc_event(struct sm_cql_buf *b, const struct sm_cql_event *ev);

/*
 * The answer to a frame whose version is not 4 (cql.md §1.9), so drivers
 * retry with v4: an ERROR frame with version byte 0x84 on @stream (echo the
 * request's, from sm_cql_frame_header_parse()), code Protocol error (0x000A),
 * message "Invalid or unsupported protocol version: <version>" with the
 * request's version (its low 7 bits). The caller closes the connection
 * after sending it.
 */
int
sm_cql_enc_version_error(struct sm_cql_buf *b, int16_t stream, unsigned version);

/*
 * Rows results written as they are produced, with no copy: begin writes the
 * frame header, the kind and the metadata (NO_METADATA writes only flags,
 * count and the paging state); append each row's cells in column order;
 * end backpatches the row count and frame length. The paging state is
 * usually known only once the page is full, so end can insert it (moving
 * the rows once); give it at begin or at end, not both.
 */
struct sm_cql_rows_writer {
	struct sm_cql_buf *b;
	size_t frame_off, meta_off, count_off;
	uint32_t ncols, cell, rows;
	bool has_paging;
};

/* Start a Rows result; 0 or the buffer's error. */
int
sm_cql_rows_begin(struct sm_cql_rows_writer *w, struct sm_cql_buf *b, int16_t stream,
		  const struct sm_cql_metadata *meta);
/* Append a cell (p NULL for null): the common case inline, once per cell of every row. */
void
sm_cql_rows_cell_slow(struct sm_cql_rows_writer *w, struct sm_bytes v);

static inline void
sm_cql_rows_cell(struct sm_cql_rows_writer *w, struct sm_bytes v)
{
	uint8_t *q;

	if (__builtin_expect(v.p == NULL || v.len > INT32_MAX, 0)) {
		sm_cql_rows_cell_slow(w, v);
		return;
	}
	q = sm_cql_buf_append(w->b, 4 + (size_t)v.len);
	if (q != NULL) {
		sm_put_be32(q, v.len);
		memcpy(q + 4, v.p, v.len);
	}
	if (++w->cell == w->ncols) {
		w->cell = 0;
		w->rows++;
	}
}
/* Append a cell of @len bytes and return where to write them, or NULL after a failure. */
uint8_t *
sm_cql_rows_cell_space(struct sm_cql_rows_writer *w, uint32_t len);
/* Rows completed so far. */
static inline uint32_t
sm_cql_rows_count(const struct sm_cql_rows_writer *w)
{
	return w->rows;
}
/*
 * Finish: set HAS_MORE_PAGES and insert @paging_state when non-NULL. Returns
 * 0, or -EINVAL (a partial row, or a second paging state) or the buffer's
 * error; on failure the frame is rolled back.
 */
int
sm_cql_rows_end(struct sm_cql_rows_writer *w, const struct sm_bytes *paging_state);

/* ---------------------------------------------------------------------- */
/* Compression (LZ4; snappy is not implemented)                            */

/* Append the v4 LZ4 form of @len bytes at @src to @out: BE length, then the block. 0 or -errno. */
int
sm_cql_lz4_compress(struct sm_cql_buf *out, const uint8_t *src, size_t len);

/*
 * Append the decompression of the v4 LZ4 body @src (@len bytes) to @out.
 * Returns 0, -EMSGSIZE when the declared size is above @max_len, -EPROTO
 * when the body is corrupt or does not decompress to exactly the declared
 * size, or -ENOMEM. Never writes past what it reserved.
 */
int
sm_cql_lz4_decompress(struct sm_cql_buf *out, const uint8_t *src, size_t len, size_t max_len);

/*
 * Compress in place the body of the frame that starts at @frame_off in @b
 * and runs to its end (the last frame appended), setting the compression
 * flag and length; @scratch is working space (reuse it). The spec never
 * compresses STARTUP, nor anything before COMPRESSION was negotiated.
 * 0 or -errno.
 */
int
sm_cql_frame_compress(struct sm_cql_buf *b, size_t frame_off, struct sm_cql_buf *scratch);

#endif /* SM_CQL_PROTO_H */
