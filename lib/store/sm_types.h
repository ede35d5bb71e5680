/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_TYPES_H
#define SM_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The CQL type system of the storage engine.
 *
 * Values are always held in their CQL native protocol v4 serialized form (the
 * body of a [bytes] value on the wire), never as C numbers, so a value goes
 * from the request frame to the table and back without conversion:
 *
 *   ascii, text, blob      raw bytes (ascii 7-bit, text strict UTF-8)
 *   boolean                1 byte, 0 false, anything else true
 *   tinyint .. bigint      1, 2, 4, 8 bytes big-endian two's complement
 *   counter                as bigint (always 8 bytes)
 *   float, double          IEEE-754 big-endian
 *   varint                 big-endian two's complement, any length >= 1
 *   decimal                int32 scale, then the unscaled varint
 *   timestamp              int64 milliseconds since the epoch
 *   date                   uint32 days, 2^31 = 1970-01-01
 *   time                   int64 nanoseconds since midnight
 *   uuid, timeuuid         16 bytes (timeuuid: version 1)
 *   inet                   4 or 16 bytes
 *   duration               three zigzag vints: months, days, nanoseconds
 *   list, set              int32 count, then count x (int32 length, bytes)
 *   map                    int32 count, then count x (key, value), each as
 *                          (int32 length, bytes)
 *   tuple, user type       its fields in order, each (int32 length, bytes),
 *                          a negative length for a null field; a value may
 *                          end early (the missing fields are null: a user
 *                          type that ALTER TYPE ... ADD grew)
 *
 * A zero-length value is Cassandra's "empty" value (not null): it is valid for
 * every type but counter and sorts before every other value.
 */

/* A view of bytes owned by someone else. */
struct sm_bytes {
	const uint8_t *p;
	uint32_t len;
};

enum sm_type_kind {
	SM_TYPE_ASCII,
	SM_TYPE_BIGINT,
	SM_TYPE_BLOB,
	SM_TYPE_BOOLEAN,
	SM_TYPE_COUNTER,
	SM_TYPE_DATE,
	SM_TYPE_DECIMAL,
	SM_TYPE_DOUBLE,
	SM_TYPE_DURATION,
	SM_TYPE_FLOAT,
	SM_TYPE_INET,
	SM_TYPE_INT,
	SM_TYPE_SMALLINT,
	SM_TYPE_TEXT,
	SM_TYPE_TIME,
	SM_TYPE_TIMESTAMP,
	SM_TYPE_TIMEUUID,
	SM_TYPE_TINYINT,
	SM_TYPE_UUID,
	SM_TYPE_VARINT,
	SM_TYPE_LIST,
	SM_TYPE_SET,
	SM_TYPE_MAP,
	SM_TYPE_TUPLE,
	SM_TYPE_UDT, /* a user-defined type */
	SM_TYPE__COUNT
};

/*
 * A CQL type. Simple types are shared singletons (sm_type_simple()); a
 * collection, tuple or user type is a tree of nodes allocated with
 * sm_malloc() whose leaves are singletons. Collections and user types
 * nested in collections are always frozen; a tuple always is. A user type
 * is copied into every type that uses it (a table's column, another user
 * type), so a tree owns all of its nodes.
 */
struct sm_type {
	enum sm_type_kind kind;
	bool frozen;
	const struct sm_type *elem; /* list/set element, map key */
	const struct sm_type *val;  /* map value */
	/* tuple and user type */
	const struct sm_type **fields; /* the field (component) types, in order */
	uint16_t nfields;
	/* user type */
	char *ks;	    /* the keyspace it belongs to */
	char *name;	    /* its name, case kept */
	char **field_names; /* case kept */
};

/* Most fields of a user type or tuple (ScyllaDB's max_udt_fields is 32767). */
#define SM_TYPE_MAX_FIELDS 32767u

/* A serialized field length that stands for null (sm_tuple_build(), sm_tuple_next()). */
#define SM_FIELD_NULL UINT32_MAX

/* The simple type named @name (@n bytes, lowercase; "varchar" is text) into *@k; false when none. */
bool
sm_type_simple_by_name(const char *name, size_t n, enum sm_type_kind *k);

/* The singleton for a simple type, never freed; NULL for collections and out-of-range kinds. */
const struct sm_type *
sm_type_simple(enum sm_type_kind kind);

/*
 * Parse CQL type syntax ("int", "varchar" (= text), "map<text, frozen<list<int>>>",
 * "frozen<set<uuid>>", ...), case-insensitive and whitespace tolerant. As in
 * Cassandra, frozen<> freezes the collections nested inside it; a non-frozen
 * collection inside a non-frozen one, a counter inside any collection, a
 * duration in a set element or a map key (at any depth) and frozen<> around a
 * simple type are rejected. Returns 0 and *out (a singleton for simple types,
 * else a tree to release with sm_type_free()), -EINVAL with a Cassandra-style
 * message in @err, or -ENOMEM.
 */
int
sm_type_parse(const char *text, const struct sm_type **out, char *err, size_t errlen);

/*
 * Where sm_type_parse_in() finds user types: @find returns the definition
 * of @name in keyspace @ks (not a copy: the parser copies it), or NULL.
 * @ks is the keyspace of the statement: unqualified names are looked up
 * there, and a name qualified with another keyspace is refused, as
 * ScyllaDB refuses it (cql3/cql3_type.cc raw_ut).
 */
struct sm_type_resolver {
	const struct sm_type *(*find)(void *ctx, const char *ks, const char *name);
	void *ctx;
	const char *ks;
};

/*
 * sm_type_parse() with user types ("frozen<address>", "ks.address",
 * "\"Quoted\"", "set<frozen<tuple<int, text>>>"): a user type is
 * non-frozen unless frozen<> says so, a tuple is always frozen (its
 * components too). @r may be NULL: every user type is then unknown.
 */
int
sm_type_parse_in(const char *text, const struct sm_type_resolver *r, const struct sm_type **out,
		 char *err, size_t errlen);

/*
 * A tuple of @n components (taking ownership of each, even on failure;
 * the array itself is copied). Counters are refused, nested collections
 * frozen. 0, -EINVAL with a message in @err, or -ENOMEM.
 */
int
sm_type_tuple(const struct sm_type *const *fields, unsigned n, const struct sm_type **out,
	      char *err, size_t errlen);

/*
 * A non-frozen user type @ks.@name with @n fields (names copied, field
 * types owned, even on failure). Counters and non-frozen user types as
 * fields are refused, as are duplicate names, with ScyllaDB's messages
 * (create_type_statement.cc). 0, -EINVAL or -ENOMEM.
 */
int
sm_type_udt(const char *ks, const char *name, const char *const *names,
	    const struct sm_type *const *fields, unsigned n, const struct sm_type **out, char *err,
	    size_t errlen);

/* @t frozen (a copy; @t itself when it already is or cannot be); NULL when out of memory. */
const struct sm_type *
sm_type_frozen_copy(const struct sm_type *t);

/* The index of field @name of user type @t, or -1. */
int
sm_type_field_index(const struct sm_type *t, const char *name);

/* True when @t is or contains (at any depth) the user type @ks.@name. */
bool
sm_type_uses_udt(const struct sm_type *t, const char *ks, const char *name);

/*
 * A copy of @t in which every user type @udt->ks.@udt->name is replaced by
 * @udt (keeping each one's frozenness), NULL when out of memory; @t itself
 * when it does not use that type.
 */
const struct sm_type *
sm_type_replace_udt(const struct sm_type *t, const struct sm_type *udt);

/*
 * Build a collection type from its parts, with the checks of sm_type_parse().
 * Takes ownership of @elem and @val (@val is NULL except for maps) even on
 * failure; @frozen freezes nested collections too. Returns 0 and *out, -EINVAL
 * with a message in @err, or -ENOMEM.
 */
int
sm_type_collection(enum sm_type_kind kind, bool frozen, const struct sm_type *elem,
		   const struct sm_type *val, const struct sm_type **out, char *err, size_t errlen);

/* Release a type from sm_type_parse()/sm_type_dup(); a no-op for simple types and NULL. */
void
sm_type_free(const struct sm_type *t);

/*
 * The shortest decimal digits of finite @x (@single: of the float it
 * rounds to) that read back as it, into @digits without trailing zeros
 * (NUL-terminated, 1 to 17 digits); the power of ten of the first digit is
 * returned, the sign goes to *@neg.
 */
int
sm_double_digits(double x, bool single, char digits[18], bool *neg);

/* A deep copy of a collection (NULL when memory is exhausted); @t itself for simple types. */
const struct sm_type *
sm_type_dup(const struct sm_type *t);

/* True when @a and @b are the same type, frozenness included at every level. */
bool
sm_type_equal(const struct sm_type *a, const struct sm_type *b);

/* True for list, set and map. */
bool
sm_type_is_collection(const struct sm_type *t);

/*
 * True for the types stored one cell per element or field: non-frozen
 * collections and non-frozen user types (a tuple is always frozen). Inline:
 * every write asks it for every cell.
 */
static inline bool
sm_type_is_multicell(const struct sm_type *t)
{
	return t != NULL && !t->frozen && t->kind >= SM_TYPE_LIST && t->kind != SM_TYPE_TUPLE;
}

/* The serialized size of every non-empty value of @t, or 0 when it varies. */
uint32_t
sm_type_fixed_len(const struct sm_type *t);

/*
 * The canonical CQL name into @buf: "text" (never "varchar"),
 * "map<text, frozen<list<int>>>", "frozen<set<int>>" for a frozen top level,
 * "frozen<tuple<int, text>>", a user type by its name ("address",
 * "frozen<address>", "\"Quoted\"" where CQL needs the quotes), as
 * ScyllaDB's system_schema tables print them (types/types.cc
 * cql3_type_name()). Returns the length of the whole name, like snprintf().
 */
size_t
sm_type_name(const struct sm_type *t, char *buf, size_t len);

/* The CQL v4 [option] id of @t for result metadata (0x0001 ascii .. 0x0031 tuple). */
uint16_t
sm_type_cql_id(const struct sm_type *t);

/*
 * Validate the serialized value @v of type @t: its length, UTF-8 (strict: no
 * overlongs, surrogates or code points past U+10FFFF) for text, 7-bit for
 * ascii, version 1 for timeuuid, 0 <= time < 86400 s, the duration sign rule,
 * and collections recursively, elements included (set elements need not be
 * sorted or unique: drivers send them in any order). Zero-length values are
 * valid for every type but counter; a decimal needs at least one byte of
 * unscaled value. Returns 0, or -EINVAL with a message naming the type and the
 * problem in @err ("Expected 4 or 0 byte int (3)").
 */
int
sm_value_validate(const struct sm_type *t, struct sm_bytes v, char *err, size_t errlen);

/*
 * Cassandra's ascending order of two values of type @t (the caller reverses
 * it for DESC): <0, 0 or >0. Empty values sort first. Numbers compare by
 * value: varints of any length and padding (0x80 == 0xff80), decimals exactly
 * across scales (1.5 == 1.50), float and double like Java's compare (-0.0 <
 * 0.0, NaN above +Infinity and equal to every NaN); date unsigned; boolean
 * false < true; ascii, text, blob, inet, time and duration unsigned bytewise,
 * shorter first. uuid follows UUIDType: version nibble, then for version 1
 * the 60-bit timestamp and otherwise the first 8 bytes unsigned, then the last
 * 8 bytes unsigned. timeuuid follows TimeUUIDType: timestamp, then the last
 * 8 bytes as signed bytes. Frozen lists and sets compare element by element,
 * then by count; maps key then value, pair by pair, then by count.
 *
 * Assumes validated values: malformed ones get a consistent bytewise order.
 * Decimals with different scales may need a scratch buffer; beyond a few
 * hundred digits it comes from sm_malloc() and running out aborts.
 */
int
sm_value_compare(const struct sm_type *t, struct sm_bytes a, struct sm_bytes b);

/*
 * Render @v as a CQL literal for messages and tests: 42, 'it''s', 0xcafe,
 * true, 1.5, 1.0E10, NaN, -Infinity, '2024-01-02 03:04:05.006Z', '2024-01-02',
 * '01:02:03.000000004', 01234567-89ab-cdef-0123-456789abcdef, '::1', 1y2mo3d4h,
 * 1.50 (decimals plain, or 1.5E+100 beyond 64 padding zeros), varints in full,
 * [1, 2], {1, 2}, {'a': 1}. An empty value is '' for strings, 0x for blob,
 * [] or {} for collections and blobasint(0x) (a CQL expression for the empty
 * value) for the others; a malformed value renders as its bytes, 0x....
 * Returns the length of the whole literal, like snprintf().
 */
size_t
sm_value_format(const struct sm_type *t, struct sm_bytes v, char *buf, size_t len);

/*
 * Iteration over a serialized list, set or map. Init reads the count
 * (a zero-length value has no elements); each sm_coll_next() checks the
 * bounds of what it reads, so a malformed value ends the iteration early and
 * sm_coll_iter_error() tells it from the end. Validate first
 * (sm_value_validate()) and the iteration never fails.
 */
struct sm_coll_iter {
	const uint8_t *p, *end;
	uint32_t left;
};

/* Start iterating @v; -EINVAL when its count is negative or cannot fit in it. */
int
sm_coll_iter_init(struct sm_coll_iter *it, struct sm_bytes v);

/*
 * The next element of a list or set into *@elem_or_key (@val_or_null NULL and
 * @is_map false), or the next key and value of a map (@is_map true). False at
 * the end, or on malformed data (a null or truncated element).
 */
bool
sm_coll_next(struct sm_coll_iter *it, struct sm_bytes *elem_or_key, struct sm_bytes *val_or_null,
	     bool is_map);

/* True when the iteration stopped on malformed data or the value has bytes past its last element. */
bool
sm_coll_iter_error(const struct sm_coll_iter *it);

/*
 * Iteration over the fields of a serialized tuple or user type (see
 * sm_coll_iter: validate first and it never fails). Init cannot fail: the
 * fields are read one by one.
 */
void
sm_tuple_iter_init(struct sm_coll_iter *it, struct sm_bytes v);

/* The next field into *@field (len SM_FIELD_NULL, p NULL for a null one); false at the end. */
bool
sm_tuple_next(struct sm_coll_iter *it, struct sm_bytes *field);

/*
 * Serialize @n fields as a tuple or user type value (a field whose len is
 * SM_FIELD_NULL is null). Returns the size, writing only when it fits in
 * @len, as sm_coll_build().
 */
size_t
sm_tuple_build(uint8_t *buf, size_t len, const struct sm_bytes *fields, unsigned n);

/*
 * Serialize a collection into @buf: @n elements of a list or set, or for a
 * map @n pairs given as 2 * @n entries key, value, key, value... Returns the
 * size of the whole value; writes it only when it fits in @len (nothing is
 * written otherwise, so a NULL @buf with @len 0 asks for the size).
 */
size_t
sm_coll_build(uint8_t *buf, size_t len, const struct sm_bytes *elems, uint32_t n, bool is_map);

/*
 * The canonical form of @v, as Cassandra stores it: a set's elements sorted
 * by the element type's order without duplicates, a map's entries sorted by
 * key (the last of a duplicated key kept), recursively for nested
 * collections; any other value is copied. Drivers send sets and maps in
 * their own order, so endpoints normalise frozen collections before they
 * become keys or cells. Writes into @buf (@v's size always suffices; @buf
 * may be @v's own memory) and returns the length, or -EINVAL (malformed),
 * -ENOSPC, -ENOMEM.
 */
long
sm_value_normalize(const struct sm_type *t, struct sm_bytes v, uint8_t *buf, size_t len);

/*
 * sm_value_normalize() of a collection whose elements (and map values) are
 * already canonical: only its own level is sorted and deduplicated, so a
 * caller building nested values bottom-up normalises each level once, not
 * once per level above it.
 */
long
sm_value_normalize_outer(const struct sm_type *t, struct sm_bytes v, uint8_t *buf, size_t len);

/*
 * Serialize a duration into @buf (at most 19 bytes); returns its size and
 * writes it only when it fits in @len. The caller keeps the sign rule.
 */
size_t
sm_duration_build(uint8_t *buf, size_t len, int32_t months, int32_t days, int64_t nanos);

/*
 * The proleptic Gregorian date of day @z counted from 1970-01-01 (Howard
 * Hinnant's civil_from_days): year, month 1..12, day 1..31.
 */
void
sm_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d);

/* Decode a serialized, non-empty duration; -EINVAL unless it passes sm_value_validate(). */
int
sm_duration_decode(struct sm_bytes v, int32_t *months, int32_t *days, int64_t *nanos);

#endif /* SM_TYPES_H */
