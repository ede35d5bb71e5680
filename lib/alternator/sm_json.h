/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_JSON_H
#define SM_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sm_types.h" /* struct sm_bytes */

/*
 * JSON for the Alternator endpoint: a strict reader over jsmn's tokens and a
 * writer, both on reusable buffers, so a shard or connection that keeps one
 * sm_json_doc and one sm_json_out allocates nothing per request once they
 * have grown to its working size.
 *
 * The reader does not copy the text: tokens are offsets into the caller's
 * bytes, which must outlive every look-up. Tokens are named by their index
 * (int); every function that returns one returns -1 for "none", and every
 * function that takes one treats an out-of-range index as "not that type".
 *
 * Strictness is RFC 8259's grammar, checked in full (see sm_json_parse());
 * the messages follow the Jackson wording that DynamoDB's
 * SerializationException carries ("Unexpected character ...",
 * "Unrecognized token ...", "Unexpected end-of-input ...").
 */

/* Enough for DynamoDB's 32 levels of nested attribute values, 2 JSON levels each, plus the request. */
#define SM_JSON_MAX_DEPTH 80
#define SM_JSON_ERR_LEN 160

enum sm_json_type {
	SM_JSON_NONE = 0, /* not a token */
	SM_JSON_OBJECT,
	SM_JSON_ARRAY,
	SM_JSON_STRING,
	SM_JSON_NUMBER,
	SM_JSON_TRUE,
	SM_JSON_FALSE,
	SM_JSON_NULL,
};

/* Objects and arrays of this many members or elements get a look-up table (sm_json_get(), sm_json_at()). */
#define SM_JSON_INDEX_MIN 32

/* Parse flags. */
#define SM_JSON_REJECT_DUP_KEYS 0x1u /* an object with a repeated key is an error */

struct sm_json_tok;   /* private to sm_json.c */
struct sm_json_index; /* private to sm_json.c */

/*
 * A parsed document. Keep one per shard or connection and parse every body
 * into it: the token array grows (doubling) only when a document needs more
 * tokens than any before it.
 */
struct sm_json_doc {
	const char *text; /* the last parsed body, not copied */
	size_t len;
	struct sm_json_tok *tok;
	uint32_t ntok;	/* tokens of the last successful parse; 0 after a failure */
	uint32_t cap;	/* tokens allocated */
	unsigned flags; /* of the last parse */
	char err[SM_JSON_ERR_LEN];
	/* Look-up tables of large objects and arrays, built on first use (see sm_json_get()). */
	struct sm_json_index *index;
};

/* An empty document (no allocation until the first parse). */
void
sm_json_doc_init(struct sm_json_doc *d);

/* Free the token array; the document is empty and usable again. */
void
sm_json_doc_release(struct sm_json_doc *d);

/*
 * Parse @len bytes at @text (no terminating NUL needed; a NUL byte is an
 * error) into @d, replacing what it held. jsmn (strict mode) finds the
 * tokens; a single pass over them then checks what jsmn does not: the
 * characters between tokens (exactly one ',' or ':' where due, so trailing
 * commas, missing separators and a second top-level value fail), the number
 * grammar, the literals true/false/null, string contents (escapes including
 * \uXXXX surrogate pairs, no raw control characters, strict UTF-8: no
 * overlongs, surrogates or code points past U+10FFFF), at most
 * SM_JSON_MAX_DEPTH nested arrays and objects, and with
 * SM_JSON_REJECT_DUP_KEYS no key twice in one object (compared unescaped).
 * Without that flag duplicate keys are kept and sm_json_get() returns the
 * last, as Jackson (and so DynamoDB) does. Any value may be the root.
 *
 * Returns 0, -EINVAL with a SerializationException-style message in d->err,
 * or -ENOMEM. After a failure the document has no tokens.
 */
int
sm_json_parse(struct sm_json_doc *d, const char *text, size_t len, unsigned flags);

/* The root value's token (0), or -1 when the last parse failed. */
int
sm_json_root(const struct sm_json_doc *d);

/* The type of @tok; SM_JSON_NONE for -1 and other non-tokens. */
enum sm_json_type
sm_json_type(const struct sm_json_doc *d, int tok);

/* "object", "array", "string", "number", "boolean", "null" or "none", for messages. */
const char *
sm_json_type_name(enum sm_json_type t);

/* Members of an object or elements of an array; 0 for anything else. */
uint32_t
sm_json_count(const struct sm_json_doc *d, int tok);

/*
 * The value of member @key in object @obj, or -1 when it has none or @obj
 * is not an object. Keys compare unescaped and byte-exact; with a repeated
 * key the last one counts. A small object is scanned (nested values are
 * skipped in O(1) each); one of SM_JSON_INDEX_MIN members or more has its
 * keys sorted on its first look-up, kept until the next parse, so that n
 * look-ups in an object of n members cost n log n, not n^2. That table is
 * a cache: the functions that take a const document may fill it (a
 * document is used by one thread), and it is the only allocation a
 * look-up may make; should it fail, the look-up scans.
 */
int
sm_json_get(const struct sm_json_doc *d, int obj, const char *key);

/* sm_json_get() with a key of @keylen bytes. */
int
sm_json_getn(const struct sm_json_doc *d, int obj, const char *key, size_t keylen);

/* A key for sm_json_getv(). */
struct sm_json_key {
	const char *s;
	size_t len;
};

#define SM_JSON_KEY(lit) { (lit), sizeof(lit) - 1 }

/*
 * sm_json_getn() of @n keys at once, in one pass over @obj's members (the
 * top-level lookups of every request): out[i] is the value of keys[i], or -1.
 */
void
sm_json_getv(const struct sm_json_doc *d, int obj, const struct sm_json_key *keys, unsigned n,
	     int *out);

/*
 * Start iterating @tok: for an array its first element, for an object its
 * first member's key (the value is sm_json_member_value()); -1 when empty or
 * not a container.
 */
int
sm_json_first(const struct sm_json_doc *d, int tok);

/*
 * The next sibling of @tok: the next array element, or for an object
 * member's key (or value) the next member's key; -1 after the last. O(1):
 * nested values are skipped through links computed at parse time.
 */
int
sm_json_next(const struct sm_json_doc *d, int tok);

/*
 * The element @i (0-based) of array @arr, or -1 when it has fewer or @arr
 * is not an array: a walk for a small array, O(1) through a table built on
 * first use for one of SM_JSON_INDEX_MIN elements or more (as sm_json_get()).
 */
int
sm_json_at(const struct sm_json_doc *d, int arr, uint32_t i);

/* The value of the member whose key is @key_tok, or -1 when @key_tok is not an object member's key. */
int
sm_json_member_value(const struct sm_json_doc *d, int key_tok);

/*
 * The raw JSON text of any value: strings with their quotes (and escapes),
 * arrays and objects from bracket to bracket. Copying it verbatim copies
 * valid JSON. An empty view for non-tokens.
 */
struct sm_bytes
sm_json_span(const struct sm_json_doc *d, int tok);

/* True when string @tok contains escapes, so reading it needs a scratch buffer. */
bool
sm_json_str_has_escapes(const struct sm_json_doc *d, int tok);

/*
 * The contents of string @tok into *@out: a view of the document's text when
 * it has no escapes (no copy), otherwise its unescaped UTF-8 written to @buf
 * (@cap bytes). The unescaped form is never longer than the raw one, so
 * sm_json_span(d, tok).len bytes always suffice. Returns 0, -EINVAL (not a
 * string) or -ENOSPC (@buf too small).
 */
int
sm_json_str(const struct sm_json_doc *d, int tok, char *buf, size_t cap, struct sm_bytes *out);

/* True when string @tok, unescaped, equals the NUL-terminated @s. */
bool
sm_json_str_eq(const struct sm_json_doc *d, int tok, const char *s);

/* True when string @tok, unescaped, equals the @n bytes at @s. */
bool
sm_json_str_eqn(const struct sm_json_doc *d, int tok, const char *s, size_t n);

/* Read true or false; -EINVAL for any other type. */
int
sm_json_bool(const struct sm_json_doc *d, int tok, bool *out);

/*
 * Read a number token that is a plain integer (no fraction or exponent) into
 * *@out; -EINVAL for other types or forms, -ERANGE beyond int64_t.
 */
int
sm_json_i64(const struct sm_json_doc *d, int tok, int64_t *out);

/* ---------------------------------------------------------------------- */
/* Writer                                                                  */

/*
 * A growable output buffer for one JSON text. It grows with sm_realloc(),
 * doubling, so a writer reset and reused allocates nothing once it reached
 * its working size. Commas are placed automatically: call begin/end, key and
 * the value functions in document order. Failures are sticky: the first
 * -ENOMEM is kept in err and later writes are skipped, so a caller writes a
 * whole document and checks once. The text is always NUL-terminated
 * (p[len] == 0) once anything was written.
 */
struct sm_json_out {
	char *p;
	size_t len, cap;
	int err;    /* 0, or the first -errno */
	bool comma; /* the next key or value needs a ',' first */
};

/* An empty writer (no allocation until the first write). */
void
sm_json_out_init(struct sm_json_out *o);

/* Free the memory; the writer is empty and usable again. */
void
sm_json_out_release(struct sm_json_out *o);

/* Forget the contents and any error, keeping the memory. */
void
sm_json_out_reset(struct sm_json_out *o);

void
sm_json_out_obj_begin(struct sm_json_out *o);
void
sm_json_out_obj_end(struct sm_json_out *o);
void
sm_json_out_arr_begin(struct sm_json_out *o);
void
sm_json_out_arr_end(struct sm_json_out *o);

/* A member key (escaped like a string); the next call writes its value. */
void
sm_json_out_key(struct sm_json_out *o, const char *key);
void
sm_json_out_keyn(struct sm_json_out *o, const char *key, size_t n);

/*
 * A string value of @n bytes, escaped per RFC 8259: '"' and '\' with a
 * backslash, control characters as \b \f \n \r \t or \u00XX, valid UTF-8
 * copied as is; a byte that is not part of a valid UTF-8 sequence becomes
 * U+FFFD, so the output is always valid JSON in valid UTF-8.
 */
void
sm_json_out_strn(struct sm_json_out *o, const char *s, size_t n);
void
sm_json_out_str(struct sm_json_out *o, const char *s);

/*
 * Splice @n bytes of JSON the caller knows to be one valid value (a span
 * from sm_json_span(), a stored attribute value) in value position.
 */
void
sm_json_out_raw(struct sm_json_out *o, const char *json, size_t n);

/* A number from its text (trusted to follow the JSON number grammar). */
void
sm_json_out_num(struct sm_json_out *o, const char *text, size_t n);

void
sm_json_out_i64(struct sm_json_out *o, int64_t v);
void
sm_json_out_u64(struct sm_json_out *o, uint64_t v);
void
sm_json_out_bool(struct sm_json_out *o, bool v);
void
sm_json_out_null(struct sm_json_out *o);

#endif /* SM_JSON_H */
