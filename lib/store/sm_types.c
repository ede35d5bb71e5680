/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sm_core.h"
#include "sm_types.h"

#define TYPE_MAX_DEPTH 32
#define TIME_NS_PER_DAY 86400000000000LL
#define DATE_EPOCH 0x80000000u

static const struct sm_type simple_types[SM_TYPE_LIST] = {
	[SM_TYPE_ASCII] = { .kind = SM_TYPE_ASCII },
	[SM_TYPE_BIGINT] = { .kind = SM_TYPE_BIGINT },
	[SM_TYPE_BLOB] = { .kind = SM_TYPE_BLOB },
	[SM_TYPE_BOOLEAN] = { .kind = SM_TYPE_BOOLEAN },
	[SM_TYPE_COUNTER] = { .kind = SM_TYPE_COUNTER },
	[SM_TYPE_DATE] = { .kind = SM_TYPE_DATE },
	[SM_TYPE_DECIMAL] = { .kind = SM_TYPE_DECIMAL },
	[SM_TYPE_DOUBLE] = { .kind = SM_TYPE_DOUBLE },
	[SM_TYPE_DURATION] = { .kind = SM_TYPE_DURATION },
	[SM_TYPE_FLOAT] = { .kind = SM_TYPE_FLOAT },
	[SM_TYPE_INET] = { .kind = SM_TYPE_INET },
	[SM_TYPE_INT] = { .kind = SM_TYPE_INT },
	[SM_TYPE_SMALLINT] = { .kind = SM_TYPE_SMALLINT },
	[SM_TYPE_TEXT] = { .kind = SM_TYPE_TEXT },
	[SM_TYPE_TIME] = { .kind = SM_TYPE_TIME },
	[SM_TYPE_TIMESTAMP] = { .kind = SM_TYPE_TIMESTAMP },
	[SM_TYPE_TIMEUUID] = { .kind = SM_TYPE_TIMEUUID },
	[SM_TYPE_TINYINT] = { .kind = SM_TYPE_TINYINT },
	[SM_TYPE_UUID] = { .kind = SM_TYPE_UUID },
	[SM_TYPE_VARINT] = { .kind = SM_TYPE_VARINT },
};

static const char *const type_names[SM_TYPE__COUNT] = {
	[SM_TYPE_ASCII] = "ascii",	 [SM_TYPE_BIGINT] = "bigint",
	[SM_TYPE_BLOB] = "blob",	 [SM_TYPE_BOOLEAN] = "boolean",
	[SM_TYPE_COUNTER] = "counter",	 [SM_TYPE_DATE] = "date",
	[SM_TYPE_DECIMAL] = "decimal",	 [SM_TYPE_DOUBLE] = "double",
	[SM_TYPE_DURATION] = "duration", [SM_TYPE_FLOAT] = "float",
	[SM_TYPE_INET] = "inet",	 [SM_TYPE_INT] = "int",
	[SM_TYPE_SMALLINT] = "smallint", [SM_TYPE_TEXT] = "text",
	[SM_TYPE_TIME] = "time",	 [SM_TYPE_TIMESTAMP] = "timestamp",
	[SM_TYPE_TIMEUUID] = "timeuuid", [SM_TYPE_TINYINT] = "tinyint",
	[SM_TYPE_UUID] = "uuid",	 [SM_TYPE_VARINT] = "varint",
	[SM_TYPE_LIST] = "list",	 [SM_TYPE_SET] = "set",
	[SM_TYPE_MAP] = "map",		 [SM_TYPE_TUPLE] = "tuple",
	[SM_TYPE_UDT] = "user type",
};

static const uint16_t cql_ids[SM_TYPE__COUNT] = {
	[SM_TYPE_ASCII] = 0x0001,     [SM_TYPE_BIGINT] = 0x0002,   [SM_TYPE_BLOB] = 0x0003,
	[SM_TYPE_BOOLEAN] = 0x0004,   [SM_TYPE_COUNTER] = 0x0005,  [SM_TYPE_DECIMAL] = 0x0006,
	[SM_TYPE_DOUBLE] = 0x0007,    [SM_TYPE_FLOAT] = 0x0008,	   [SM_TYPE_INT] = 0x0009,
	[SM_TYPE_TIMESTAMP] = 0x000B, [SM_TYPE_UUID] = 0x000C,	   [SM_TYPE_TEXT] = 0x000D,
	[SM_TYPE_VARINT] = 0x000E,    [SM_TYPE_TIMEUUID] = 0x000F, [SM_TYPE_INET] = 0x0010,
	[SM_TYPE_DATE] = 0x0011,      [SM_TYPE_TIME] = 0x0012,	   [SM_TYPE_SMALLINT] = 0x0013,
	[SM_TYPE_TINYINT] = 0x0014,   [SM_TYPE_DURATION] = 0x0015, [SM_TYPE_LIST] = 0x0020,
	[SM_TYPE_MAP] = 0x0021,	      [SM_TYPE_SET] = 0x0022,	   [SM_TYPE_UDT] = 0x0030,
	[SM_TYPE_TUPLE] = 0x0031,
};

static const uint8_t fixed_lens[SM_TYPE__COUNT] = {
	[SM_TYPE_BIGINT] = 8,	 [SM_TYPE_BOOLEAN] = 1,	  [SM_TYPE_COUNTER] = 8,
	[SM_TYPE_DATE] = 4,	 [SM_TYPE_DOUBLE] = 8,	  [SM_TYPE_FLOAT] = 4,
	[SM_TYPE_INT] = 4,	 [SM_TYPE_SMALLINT] = 2,  [SM_TYPE_TIME] = 8,
	[SM_TYPE_TIMESTAMP] = 8, [SM_TYPE_TIMEUUID] = 16, [SM_TYPE_TINYINT] = 1,
	[SM_TYPE_UUID] = 16,
};

/* Collections are our own allocations: the only nodes ever written after creation. */
static struct sm_type *
type_mut(const struct sm_type *t)
{
	return (struct sm_type *)(uintptr_t)t;
}

static uint32_t
be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t
be64(const uint8_t *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

static void
put_be32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

/* Sign-extend a big-endian two's complement integer of 1..8 bytes. */
static int64_t
be_signed(const uint8_t *p, uint32_t len)
{
	uint64_t v = (p[0] & 0x80) ? UINT64_MAX : 0;
	uint32_t i;

	for (i = 0; i < len; i++)
		v = v << 8 | p[i];
	return (int64_t)v;
}

static int
err_set(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int
err_set(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/*
 * An snprintf-style writer: counts everything, stores what fits and keeps
 * @buf NUL-terminated.
 */
struct sbuf {
	char *buf;
	size_t len;
	size_t pos;
};

static void
sb_putc(struct sbuf *sb, char c)
{
	if (sb->pos + 1 < sb->len)
		sb->buf[sb->pos] = c;
	sb->pos++;
}

static void
sb_putn(struct sbuf *sb, const char *s, size_t n)
{
	size_t room;

	if (sb->pos + 1 < sb->len) {
		room = sb->len - 1 - sb->pos;
		memcpy(sb->buf + sb->pos, s, SM_MIN(room, n));
	}
	sb->pos += n;
}

static void
sb_puts(struct sbuf *sb, const char *s)
{
	sb_putn(sb, s, strlen(s));
}

static void
sb_printf(struct sbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
sb_printf(struct sbuf *sb, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		sb_putn(sb, tmp, SM_MIN((size_t)n, sizeof(tmp) - 1));
}

static size_t
sb_finish(struct sbuf *sb)
{
	if (sb->len)
		sb->buf[SM_MIN(sb->pos, sb->len - 1)] = '\0';
	return sb->pos;
}

/* ---- types ---- */

bool
sm_type_simple_by_name(const char *name, size_t n, enum sm_type_kind *k)
{
	unsigned i;

	if (n == 7 && memcmp(name, "varchar", 7) == 0) {
		*k = SM_TYPE_TEXT;
		return true;
	}
	for (i = 0; i < SM_TYPE_LIST; i++) {
		if (strlen(type_names[i]) == n && memcmp(type_names[i], name, n) == 0) {
			*k = (enum sm_type_kind)i;
			return true;
		}
	}
	return false;
}

const struct sm_type *
sm_type_simple(enum sm_type_kind kind)
{
	if ((unsigned)kind >= SM_TYPE_LIST)
		return NULL;
	return &simple_types[kind];
}

bool
sm_type_is_collection(const struct sm_type *t)
{
	return t && (t->kind == SM_TYPE_LIST || t->kind == SM_TYPE_SET || t->kind == SM_TYPE_MAP);
}

/* A node of our own (collection, tuple, user type), not a singleton. */
static bool
type_owned(const struct sm_type *t)
{
	return t && t->kind >= SM_TYPE_LIST && t->kind < SM_TYPE__COUNT;
}

static bool
has_fields(const struct sm_type *t)
{
	return t && (t->kind == SM_TYPE_TUPLE || t->kind == SM_TYPE_UDT);
}


uint32_t
sm_type_fixed_len(const struct sm_type *t)
{
	return (unsigned)t->kind < SM_TYPE__COUNT ? fixed_lens[t->kind] : 0;
}

void
sm_type_free(const struct sm_type *t)
{
	unsigned i;

	if (!type_owned(t))
		return;
	sm_type_free(t->elem);
	sm_type_free(t->val);
	for (i = 0; t->fields != NULL && i < t->nfields; i++)
		sm_type_free(t->fields[i]);
	for (i = 0; t->field_names != NULL && i < t->nfields; i++)
		sm_free(t->field_names[i]);
	sm_free(t->fields);
	sm_free(t->field_names);
	sm_free(t->ks);
	sm_free(t->name);
	sm_free(type_mut(t));
}

/* A zeroed node of @kind; NULL when out of memory. */
static struct sm_type *
type_node(enum sm_type_kind kind)
{
	struct sm_type *n = sm_calloc(1, sizeof(*n));

	if (n != NULL)
		n->kind = kind;
	return n;
}

/* Room for @n fields (and their names for a user type) in a node from type_node(). */
static int
type_fields_alloc(struct sm_type *n, unsigned count)
{
	n->fields = sm_calloc(count ? count : 1, sizeof(*n->fields));
	if (n->kind == SM_TYPE_UDT)
		n->field_names = sm_calloc(count ? count : 1, sizeof(*n->field_names));
	if (n->fields == NULL || (n->kind == SM_TYPE_UDT && n->field_names == NULL))
		return -ENOMEM;
	return 0;
}

const struct sm_type *
sm_type_dup(const struct sm_type *t)
{
	struct sm_type *n;
	unsigned i;

	if (!type_owned(t))
		return t;
	n = type_node(t->kind);
	if (!n)
		return NULL;
	n->frozen = t->frozen;
	if (t->elem && !(n->elem = sm_type_dup(t->elem)))
		goto fail;
	if (t->val && !(n->val = sm_type_dup(t->val)))
		goto fail;
	if (has_fields(t)) {
		if (type_fields_alloc(n, t->nfields) < 0)
			goto fail;
		for (i = 0; i < t->nfields; i++) {
			n->nfields = (uint16_t)(i + 1);
			n->fields[i] = sm_type_dup(t->fields[i]);
			if (n->fields[i] == NULL)
				goto fail;
			if (t->kind == SM_TYPE_UDT &&
			    (n->field_names[i] = sm_strdup(t->field_names[i])) == NULL)
				goto fail;
		}
		n->nfields = t->nfields;
	}
	if (t->kind == SM_TYPE_UDT &&
	    ((n->ks = sm_strdup(t->ks)) == NULL || (n->name = sm_strdup(t->name)) == NULL))
		goto fail;
	return n;
fail:
	sm_type_free(n);
	return NULL;
}

bool
sm_type_equal(const struct sm_type *a, const struct sm_type *b)
{
	unsigned i;

	if (a == b)
		return true;
	if (!a || !b || a->kind != b->kind)
		return false;
	if (!type_owned(a))
		return true;
	if (a->frozen != b->frozen || !sm_type_equal(a->elem, b->elem) ||
	    !sm_type_equal(a->val, b->val))
		return false;
	if (!has_fields(a))
		return true;
	if (a->nfields != b->nfields)
		return false;
	if (a->kind == SM_TYPE_UDT && (strcmp(a->ks, b->ks) != 0 || strcmp(a->name, b->name) != 0))
		return false;
	for (i = 0; i < a->nfields; i++) {
		if (!sm_type_equal(a->fields[i], b->fields[i]))
			return false;
		if (a->kind == SM_TYPE_UDT && strcmp(a->field_names[i], b->field_names[i]) != 0)
			return false;
	}
	return true;
}

int
sm_type_field_index(const struct sm_type *t, const char *name)
{
	unsigned i;

	if (t == NULL || t->kind != SM_TYPE_UDT)
		return -1;
	for (i = 0; i < t->nfields; i++)
		if (strcmp(t->field_names[i], name) == 0)
			return (int)i;
	return -1;
}

bool
sm_type_uses_udt(const struct sm_type *t, const char *ks, const char *name)
{
	unsigned i;

	if (!type_owned(t))
		return false;
	if (t->kind == SM_TYPE_UDT && strcmp(t->ks, ks) == 0 && strcmp(t->name, name) == 0)
		return true;
	if (sm_type_uses_udt(t->elem, ks, name) || sm_type_uses_udt(t->val, ks, name))
		return true;
	for (i = 0; has_fields(t) && i < t->nfields; i++)
		if (sm_type_uses_udt(t->fields[i], ks, name))
			return true;
	return false;
}

const struct sm_type *
sm_type_replace_udt(const struct sm_type *t, const struct sm_type *udt)
{
	struct sm_type *n;
	unsigned i;

	if (!sm_type_uses_udt(t, udt->ks, udt->name))
		return t;
	if (t->kind == SM_TYPE_UDT && strcmp(t->ks, udt->ks) == 0 &&
	    strcmp(t->name, udt->name) == 0) {
		n = type_mut(sm_type_dup(udt));
		if (n != NULL)
			n->frozen = t->frozen;
		return n;
	}
	/* a copy of this level, each child replaced or copied */
	n = type_node(t->kind);
	if (n == NULL)
		return NULL;
	n->frozen = t->frozen;
	if (t->elem && !(n->elem = sm_type_replace_udt(t->elem, udt)))
		goto fail;
	if (n->elem == t->elem && t->elem && !(n->elem = sm_type_dup(t->elem)))
		goto fail;
	if (t->val && !(n->val = sm_type_replace_udt(t->val, udt)))
		goto fail;
	if (n->val == t->val && t->val && !(n->val = sm_type_dup(t->val)))
		goto fail;
	if (has_fields(t)) {
		if (type_fields_alloc(n, t->nfields) < 0)
			goto fail;
		for (i = 0; i < t->nfields; i++) {
			const struct sm_type *f = sm_type_replace_udt(t->fields[i], udt);

			n->nfields = (uint16_t)(i + 1);
			if (f == t->fields[i])
				f = sm_type_dup(f);
			n->fields[i] = f;
			if (f == NULL)
				goto fail;
			if (t->kind == SM_TYPE_UDT &&
			    (n->field_names[i] = sm_strdup(t->field_names[i])) == NULL)
				goto fail;
		}
	}
	if (t->kind == SM_TYPE_UDT &&
	    ((n->ks = sm_strdup(t->ks)) == NULL || (n->name = sm_strdup(t->name)) == NULL))
		goto fail;
	return n;
fail:
	sm_type_free(n);
	return NULL;
}

uint16_t
sm_type_cql_id(const struct sm_type *t)
{
	return (unsigned)t->kind < SM_TYPE__COUNT ? cql_ids[t->kind] : 0;
}

/* A name as CQL writes it: quoted unless it is lowercase letters, digits and '_'. */
static void
sb_put_ident(struct sbuf *sb, const char *s)
{
	const char *p;
	bool plain = (*s >= 'a' && *s <= 'z');

	for (p = s; plain && *p; p++)
		plain = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_';
	if (plain) {
		sb_puts(sb, s);
		return;
	}
	sb_putc(sb, '"');
	for (p = s; *p; p++) {
		if (*p == '"')
			sb_putc(sb, '"');
		sb_putc(sb, *p);
	}
	sb_putc(sb, '"');
}

/* @qualified: user types as ks.name (for messages about a statement's text). */
static void
type_name_q(struct sbuf *sb, const struct sm_type *t, bool qualified)
{
	unsigned i;

	if ((unsigned)t->kind >= SM_TYPE__COUNT) {
		sb_puts(sb, "?");
		return;
	}
	if (!type_owned(t)) {
		sb_puts(sb, type_names[t->kind]);
		return;
	}
	if (t->frozen)
		sb_puts(sb, "frozen<");
	if (t->kind == SM_TYPE_UDT) {
		if (qualified) {
			sb_put_ident(sb, t->ks);
			sb_putc(sb, '.');
		}
		sb_put_ident(sb, t->name);
	} else {
		sb_puts(sb, type_names[t->kind]);
		sb_putc(sb, '<');
	}
	if (has_fields(t) && t->kind == SM_TYPE_TUPLE) {
		for (i = 0; i < t->nfields; i++) {
			if (i > 0)
				sb_puts(sb, ", ");
			type_name_q(sb, t->fields[i], qualified);
		}
	} else if (t->kind != SM_TYPE_UDT) {
		type_name_q(sb, t->elem, qualified);
		if (t->kind == SM_TYPE_MAP) {
			sb_puts(sb, ", ");
			type_name_q(sb, t->val, qualified);
		}
	}
	if (t->kind != SM_TYPE_UDT)
		sb_putc(sb, '>');
	if (t->frozen)
		sb_putc(sb, '>');
}

static void
type_name(struct sbuf *sb, const struct sm_type *t)
{
	type_name_q(sb, t, false);
}

/* The name with user types qualified, as a statement names them (for messages). */
static size_t
type_name_written(const struct sm_type *t, char *buf, size_t len)
{
	struct sbuf sb = { buf, len, 0 };

	type_name_q(&sb, t, true);
	return sb_finish(&sb);
}

size_t
sm_type_name(const struct sm_type *t, char *buf, size_t len)
{
	struct sbuf sb = { buf, len, 0 };

	type_name(&sb, t);
	return sb_finish(&sb);
}

/*
 * Cassandra freezes everything under frozen<>: frozen<list<list<int>>> is
 * legal. A user type's fields keep their definition (a frozen one is one
 * cell whatever they are), a tuple's components freeze with it.
 */
static void
type_freeze(const struct sm_type *t)
{
	unsigned i;

	if (!type_owned(t))
		return;
	type_mut(t)->frozen = true;
	if (t->kind == SM_TYPE_UDT)
		return;
	type_freeze(t->elem);
	type_freeze(t->val);
	for (i = 0; t->kind == SM_TYPE_TUPLE && i < t->nfields; i++)
		type_freeze(t->fields[i]);
}

static bool
type_has_duration(const struct sm_type *t)
{
	unsigned i;

	if (!t)
		return false;
	if (t->kind == SM_TYPE_DURATION)
		return true;
	for (i = 0; has_fields(t) && i < t->nfields; i++)
		if (type_has_duration(t->fields[i]))
			return true;
	return type_has_duration(t->elem) || type_has_duration(t->val);
}

static bool
non_frozen_inside(const struct sm_type *t)
{
	return t && sm_type_is_multicell(t);
}

/*
 * ScyllaDB's checks and messages for collections (cql3/cql3_type.cc
 * raw_collection::prepare_internal()) and tuples (raw_tuple), outermost
 * first. User types were checked when they were created.
 */
static int
type_check(const struct sm_type *t, char *err, size_t errlen)
{
	char name[256];
	unsigned i;
	int ret;

	if (t && t->kind == SM_TYPE_TUPLE) {
		for (i = 0; i < t->nfields; i++)
			if (t->fields[i]->kind == SM_TYPE_COUNTER)
				return err_set(err, errlen, "Counters are not allowed inside tuples");
		for (i = 0; i < t->nfields; i++)
			if ((ret = type_check(t->fields[i], err, errlen)) != 0)
				return ret;
		return 0;
	}
	if (!sm_type_is_collection(t))
		return 0;
	type_name_written(t, name, sizeof(name));
	if (t->elem->kind == SM_TYPE_COUNTER || (t->val && t->val->kind == SM_TYPE_COUNTER))
		return err_set(err, errlen, "Counters are not allowed inside collections: %s",
			       name);
	if (t->kind == SM_TYPE_SET && type_has_duration(t->elem))
		return err_set(err, errlen, "Durations are not allowed inside sets: %s", name);
	if (t->kind == SM_TYPE_MAP && type_has_duration(t->elem))
		return err_set(err, errlen, "Durations are not allowed as map keys: %s", name);
	if (!t->frozen && (non_frozen_inside(t->elem) || non_frozen_inside(t->val)))
		return err_set(err, errlen,
			       "Non-frozen user types or collections are not allowed inside "
			       "collections: %s",
			       name);
	ret = type_check(t->elem, err, errlen);
	if (ret == 0 && t->val)
		ret = type_check(t->val, err, errlen);
	return ret;
}

static int
name_index_cmp(const void *a, const void *b, void *arg)
{
	const char *const *names = arg;
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	int c = strcmp(names[x], names[y]);

	return c ? c : (x > y) - (x < y);
}

/*
 * The first name that a later one repeats (ScyllaDB reports the pair it
 * meets first), or @n: sorted, not compared pairwise, since a statement may
 * name 32,767 fields.
 */
static unsigned
first_duplicate(const char *const *names, unsigned n)
{
	unsigned *idx, i, first = n;

	if (n < 2)
		return n;
	idx = sm_malloc((size_t)n * sizeof(*idx));
	if (idx == NULL) {
		/* pairwise then: correct, only slower */
		unsigned j;

		for (i = 0; i + 1 < n; i++)
			for (j = i + 1; j < n; j++)
				if (strcmp(names[i], names[j]) == 0)
					return i;
		return n;
	}
	for (i = 0; i < n; i++)
		idx[i] = i;
	qsort_r(idx, n, sizeof(*idx), name_index_cmp, (void *)(uintptr_t)names);
	/* a run of equal names starts at its smallest index */
	for (i = 1; i < n; i++)
		if (strcmp(names[idx[i - 1]], names[idx[i]]) == 0 &&
		    (i < 2 || strcmp(names[idx[i - 2]], names[idx[i]]) != 0) && idx[i - 1] < first)
			first = idx[i - 1];
	sm_free(idx);
	return first;
}

static void
free_types(const struct sm_type *const *fields, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		sm_type_free(fields[i]);
}

/*
 * A tuple or user type node holding @fields (taken, even on failure), at
 * most SM_TYPE_MAX_FIELDS of them (create_type_statement.cc's message).
 */
static int
fields_node(enum sm_type_kind kind, const struct sm_type *const *fields, unsigned n,
	    struct sm_type **out, char *err, size_t errlen)
{
	struct sm_type *t;
	unsigned i;

	if (n > SM_TYPE_MAX_FIELDS) {
		free_types(fields, n);
		return err_set(err, errlen, "A %s cannot have more than %u %s",
			       kind == SM_TYPE_UDT ? "user type" : "tuple", SM_TYPE_MAX_FIELDS,
			       kind == SM_TYPE_UDT ? "fields" : "components");
	}
	t = type_node(kind);
	if (t == NULL || type_fields_alloc(t, n) < 0) {
		sm_type_free(t);
		free_types(fields, n);
		err_set(err, errlen, "Out of memory building a type");
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		t->fields[i] = fields[i];
	t->nfields = (uint16_t)n;
	*out = t;
	return 0;
}

int
sm_type_tuple(const struct sm_type *const *fields, unsigned n, const struct sm_type **out,
	      char *err, size_t errlen)
{
	struct sm_type *t = NULL;
	int ret;

	ret = fields_node(SM_TYPE_TUPLE, fields, n, &t, err, errlen);
	if (ret)
		return ret;
	type_freeze(t);
	ret = type_check(t, err, errlen);
	if (ret) {
		sm_type_free(t);
		return ret;
	}
	*out = t;
	return 0;
}

int
sm_type_udt(const char *ks, const char *name, const char *const *names,
	    const struct sm_type *const *fields, unsigned n, const struct sm_type **out, char *err,
	    size_t errlen)
{
	struct sm_type *t = NULL;
	unsigned i;
	int ret;

	ret = fields_node(SM_TYPE_UDT, fields, n, &t, err, errlen);
	if (ret)
		return ret;
	for (i = 0; i < n; i++)
		if ((t->field_names[i] = sm_strdup(names[i])) == NULL)
			goto nomem_t;
	if ((t->ks = sm_strdup(ks)) == NULL || (t->name = sm_strdup(name)) == NULL)
		goto nomem_t;
	/* create_type_statement.cc validate() and check_for_duplicate_names() */
	for (i = 0; i < n; i++) {
		if (fields[i]->kind == SM_TYPE_COUNTER) {
			ret = err_set(err, errlen, "A user type cannot contain counters");
			goto fail;
		}
		if (fields[i]->kind == SM_TYPE_UDT && !fields[i]->frozen) {
			ret = err_set(err, errlen,
				      "A user type cannot contain non-frozen user type fields");
			goto fail;
		}
	}
	i = first_duplicate(names, n);
	if (i < n) {
		ret = err_set(err, errlen, "Duplicate field name %s in type %s", names[i], name);
		goto fail;
	}
	for (i = 0; i < n; i++)
		if ((ret = type_check(fields[i], err, errlen)) != 0)
			goto fail;
	*out = t;
	return 0;
nomem_t:
	sm_type_free(t);
	err_set(err, errlen, "Out of memory building a user type");
	return -ENOMEM;
fail:
	sm_type_free(t);
	return ret;
}

const struct sm_type *
sm_type_frozen_copy(const struct sm_type *t)
{
	const struct sm_type *n;

	if (!type_owned(t) || t->frozen)
		return t;
	n = sm_type_dup(t);
	if (n != NULL)
		type_freeze(n);
	return n;
}

int
sm_type_collection(enum sm_type_kind kind, bool frozen, const struct sm_type *elem,
		   const struct sm_type *val, const struct sm_type **out, char *err, size_t errlen)
{
	struct sm_type *n;
	int ret;

	if ((kind != SM_TYPE_LIST && kind != SM_TYPE_SET && kind != SM_TYPE_MAP) || !elem ||
	    (kind == SM_TYPE_MAP) != (val != NULL)) {
		ret = err_set(err, errlen, "Invalid collection type parts");
		goto free_parts;
	}
	n = type_node(kind);
	if (!n) {
		err_set(err, errlen, "Out of memory building a collection type");
		ret = -ENOMEM;
		goto free_parts;
	}
	n->elem = elem;
	n->val = val;
	if (frozen)
		type_freeze(n);
	ret = type_check(n, err, errlen);
	if (ret) {
		sm_type_free(n);
		return ret;
	}
	*out = n;
	return 0;
free_parts:
	sm_type_free(elem);
	sm_type_free(val);
	return ret;
}

struct type_parser {
	const char *text;
	const char *s;
	char *err;
	size_t errlen;
	const struct sm_type_resolver *r;
};

static void
tp_skip_ws(struct type_parser *tp)
{
	while (isspace((unsigned char)*tp->s))
		tp->s++;
}

static int
tp_syntax(struct type_parser *tp, const char *what)
{
	/* The type text last: a long one only truncates the message's tail. */
	return err_set(tp->err, tp->errlen, "Invalid type: expected %s at position %zu of '%s'",
		       what, (size_t)(tp->s - tp->text), tp->text);
}

static int
tp_expect(struct type_parser *tp, char c)
{
	char what[4] = { '\'', c, '\'', '\0' };

	tp_skip_ws(tp);
	if (*tp->s != c)
		return tp_syntax(tp, what);
	tp->s++;
	return 0;
}

/*
 * A name: letters, digits and '_', lowercased, or "quoted" with its case
 * kept ("" for a quote). Into @word (@cap bytes); *@quoted tells which.
 */
static int
tp_word(struct type_parser *tp, char *word, size_t cap, bool *quoted)
{
	size_t n = 0;

	tp_skip_ws(tp);
	*quoted = *tp->s == '"';
	if (*quoted) {
		tp->s++;
		for (;;) {
			if (*tp->s == '\0')
				return tp_syntax(tp, "'\"'");
			if (*tp->s == '"') {
				if (tp->s[1] != '"')
					break;
				tp->s++;
			}
			if (n + 1 >= cap)
				return err_set(tp->err, tp->errlen, "Invalid type: name too long in '%s'",
					       tp->text);
			word[n++] = *tp->s++;
		}
		tp->s++;
		word[n] = '\0';
		if (n == 0)
			return tp_syntax(tp, "a type name");
		return 0;
	}
	while (isalnum((unsigned char)tp->s[n]) || tp->s[n] == '_') {
		if (n + 1 >= cap)
			return err_set(tp->err, tp->errlen, "Unknown type %.*s", (int)n, tp->s);
		word[n] = (char)tolower((unsigned char)tp->s[n]);
		n++;
	}
	word[n] = '\0';
	if (n == 0)
		return tp_syntax(tp, "a type name");
	tp->s += n;
	return 0;
}

static int
tp_type(struct type_parser *tp, const struct sm_type **out, unsigned depth);

/* tuple<a, b, ...> after the word */
static int
tp_tuple(struct type_parser *tp, const struct sm_type **out, unsigned depth)
{
	const struct sm_type *stack[16], **f = stack, **nf;
	unsigned n = 0, cap = SM_ARRAY_SIZE(stack);
	int ret;

	ret = tp_expect(tp, '<');
	if (ret)
		return ret;
	for (;;) {
		if (n == cap) {
			if (n >= SM_TYPE_MAX_FIELDS + 1u) {
				ret = err_set(tp->err, tp->errlen,
					      "A tuple cannot have more than %u components",
					      SM_TYPE_MAX_FIELDS);
				goto fail;
			}
			nf = sm_malloc(2 * cap * sizeof(*nf));
			if (nf == NULL) {
				ret = err_set(tp->err, tp->errlen, "Out of memory parsing a type");
				ret = -ENOMEM;
				goto fail;
			}
			memcpy(nf, f, n * sizeof(*nf));
			if (f != stack)
				sm_free(f);
			f = nf;
			cap *= 2;
		}
		ret = tp_type(tp, &f[n], depth + 1);
		if (ret)
			goto fail;
		n++;
		tp_skip_ws(tp);
		if (*tp->s != ',')
			break;
		tp->s++;
	}
	ret = tp_expect(tp, '>');
	if (ret)
		goto fail;
	ret = sm_type_tuple(f, n, out, tp->err, tp->errlen);
	if (f != stack)
		sm_free(f);
	return ret;
fail:
	free_types(f, n);
	if (f != stack)
		sm_free(f);
	return ret;
}

/* A user type [ks.]name, after its first word: a copy of the resolver's. */
static int
tp_user_type(struct type_parser *tp, const char *word, const struct sm_type **out)
{
	char ks[256], name[256];
	const char *k = NULL;
	const struct sm_type *def;
	bool quoted;
	int ret;

	snprintf(name, sizeof(name), "%s", word);
	tp_skip_ws(tp);
	if (*tp->s == '.') {
		tp->s++;
		snprintf(ks, sizeof(ks), "%s", word);
		ret = tp_word(tp, name, sizeof(name), &quoted);
		if (ret)
			return ret;
		k = ks;
	}
	if (tp->r == NULL || tp->r->find == NULL)
		return err_set(tp->err, tp->errlen, "Unknown type %s%s%s", k ? k : "", k ? "." : "",
			       name);
	if (k != NULL && tp->r->ks != NULL && strcmp(k, tp->r->ks) != 0)
		return err_set(tp->err, tp->errlen,
			       "Statement on keyspace %s cannot refer to a user type in keyspace "
			       "%s; user types can only be used in the keyspace they are defined in",
			       tp->r->ks, k);
	if (k == NULL)
		k = tp->r->ks;
	def = k != NULL ? tp->r->find(tp->r->ctx, k, name) : NULL;
	if (def == NULL)
		return err_set(tp->err, tp->errlen, "Unknown type %s%s%s", k ? k : "", k ? "." : "",
			       name);
	*out = sm_type_dup(def);
	if (*out == NULL)
		return err_set(tp->err, tp->errlen, "Out of memory parsing a type"), -ENOMEM;
	return 0;
}

static int
tp_type(struct type_parser *tp, const struct sm_type **out, unsigned depth)
{
	const struct sm_type *elem = NULL, *val = NULL, *inner;
	char word[256], name[256];
	enum sm_type_kind kind;
	bool quoted;
	int ret;

	if (depth > TYPE_MAX_DEPTH)
		return err_set(tp->err, tp->errlen,
			       "Invalid type: collections nested more than %d deep in '%s'",
			       TYPE_MAX_DEPTH, tp->text);
	ret = tp_word(tp, word, sizeof(word), &quoted);
	if (ret)
		return ret;
	if (quoted)
		return tp_user_type(tp, word, out);
	tp_skip_ws(tp);
	if (*tp->s == '.')
		return tp_user_type(tp, word, out);

	if (strcmp(word, "frozen") == 0) {
		ret = tp_expect(tp, '<');
		if (ret)
			return ret;
		ret = tp_type(tp, &inner, depth + 1);
		if (ret)
			return ret;
		ret = tp_expect(tp, '>');
		if (ret) {
			sm_type_free(inner);
			return ret;
		}
		if (!type_owned(inner)) {
			sm_type_name(inner, name, sizeof(name));
			return err_set(tp->err, tp->errlen,
				       "frozen<> is only allowed on collections, tuples, and "
				       "user-defined types (got %s)",
				       name);
		}
		type_freeze(inner);
		*out = inner;
		return 0;
	}
	if (strcmp(word, "tuple") == 0 && *tp->s == '<')
		return tp_tuple(tp, out, depth);
	if (strcmp(word, "varchar") == 0)
		strcpy(word, "text");
	for (kind = 0; kind <= SM_TYPE_MAP; kind++)
		if (strcmp(word, type_names[kind]) == 0)
			break;
	if (kind > SM_TYPE_MAP)
		return tp_user_type(tp, word, out);
	if (kind < SM_TYPE_LIST) {
		*out = &simple_types[kind];
		return 0;
	}

	ret = tp_expect(tp, '<');
	if (ret)
		return ret;
	ret = tp_type(tp, &elem, depth + 1);
	if (ret)
		return ret;
	if (kind == SM_TYPE_MAP) {
		ret = tp_expect(tp, ',');
		if (ret)
			goto free_parts;
		ret = tp_type(tp, &val, depth + 1);
		if (ret)
			goto free_parts;
	}
	ret = tp_expect(tp, '>');
	if (ret)
		goto free_parts;
	/* Checks run once the whole type is known, like Cassandra's prepare(). */
	*out = type_node(kind);
	if (!*out) {
		ret = -ENOMEM;
		err_set(tp->err, tp->errlen, "Out of memory parsing a type");
		goto free_parts;
	}
	type_mut(*out)->elem = elem;
	type_mut(*out)->val = val;
	return 0;
free_parts:
	sm_type_free(elem);
	sm_type_free(val);
	return ret;
}

int
sm_type_parse_in(const char *text, const struct sm_type_resolver *r, const struct sm_type **out,
		 char *err, size_t errlen)
{
	struct type_parser tp = { text, text, err, errlen, r };
	const struct sm_type *t;
	int ret;

	ret = tp_type(&tp, &t, 0);
	if (ret)
		return ret;
	tp_skip_ws(&tp);
	if (*tp.s) {
		ret = tp_syntax(&tp, "the end");
		goto free_type;
	}
	ret = type_check(t, err, errlen);
	if (ret)
		goto free_type;
	*out = t;
	return 0;
free_type:
	sm_type_free(t);
	return ret;
}

int
sm_type_parse(const char *text, const struct sm_type **out, char *err, size_t errlen)
{
	return sm_type_parse_in(text, NULL, out, err, errlen);
}

/* ---- duration vints (Cassandra's VIntCoding) ---- */

/* The first byte's leading ones count the extra bytes; the rest is the value, big-endian. */
static int
vint_read(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
	const uint8_t *p = *pp;
	unsigned extra, i;
	uint64_t v;

	if (p >= end)
		return -EINVAL;
	extra = p[0] == 0xff ? 8 : (unsigned)__builtin_clz(~(unsigned)p[0] << 24);
	if ((size_t)(end - p) < 1 + extra)
		return -EINVAL;
	v = p[0] & (0xff >> extra);
	for (i = 1; i <= extra; i++)
		v = v << 8 | p[i];
	*pp = p + 1 + extra;
	*out = v;
	return 0;
}

static size_t
vint_write(uint8_t *p, int64_t sv)
{
	uint64_t v = ((uint64_t)sv << 1) ^ (uint64_t)(sv >> 63); /* zigzag */
	size_t size = (639 - (size_t)__builtin_clzll(v | 1) * 9) >> 6;
	size_t i;

	if (size == 9) {
		p[0] = 0xff;
		for (i = 0; i < 8; i++)
			p[1 + i] = v >> (56 - 8 * i);
		return 9;
	}
	for (i = 0; i < size; i++)
		p[i] = v >> (8 * (size - 1 - i));
	p[0] |= (uint8_t) ~(0xffu >> (size - 1));
	return size;
}

static int64_t
unzigzag(uint64_t v)
{
	return (int64_t)((v >> 1) ^ (0 - (v & 1)));
}

/* 0, or the message of what is wrong with a non-empty duration. */
static int
duration_decode(struct sm_bytes v, int64_t d[3], char *err, size_t errlen)
{
	const uint8_t *p = v.p, *end = v.p + v.len;
	uint64_t u;
	int i;

	if (v.len < 3)
		return err_set(err, errlen, "Expected at least 3 bytes for a duration (%u)", v.len);
	for (i = 0; i < 3; i++) {
		if (vint_read(&p, end, &u))
			return err_set(err, errlen, "Not enough bytes to read a duration");
		d[i] = unzigzag(u);
	}
	if (p != end)
		return err_set(err, errlen, "Unexpected extraneous bytes after duration value");
	if (d[0] < INT32_MIN || d[0] > INT32_MAX)
		return err_set(err, errlen,
			       "The duration months must be a 32 bits integer but was: %lld",
			       (long long)d[0]);
	if (d[1] < INT32_MIN || d[1] > INT32_MAX)
		return err_set(err, errlen,
			       "The duration days must be a 32 bits integer but was: %lld",
			       (long long)d[1]);
	if (!((d[0] >= 0 && d[1] >= 0 && d[2] >= 0) || (d[0] <= 0 && d[1] <= 0 && d[2] <= 0)))
		return err_set(err, errlen,
			       "The duration months, days and nanoseconds must be all of the same "
			       "sign (%lld, %lld, %lld)",
			       (long long)d[0], (long long)d[1], (long long)d[2]);
	return 0;
}

size_t
sm_duration_build(uint8_t *buf, size_t len, int32_t months, int32_t days, int64_t nanos)
{
	uint8_t tmp[27];
	size_t n;

	n = vint_write(tmp, months);
	n += vint_write(tmp + n, days);
	n += vint_write(tmp + n, nanos);
	if (n <= len)
		memcpy(buf, tmp, n);
	return n;
}

int
sm_duration_decode(struct sm_bytes v, int32_t *months, int32_t *days, int64_t *nanos)
{
	int64_t d[3];
	int ret;

	ret = duration_decode(v, d, NULL, 0);
	if (ret)
		return ret;
	*months = (int32_t)d[0];
	*days = (int32_t)d[1];
	*nanos = d[2];
	return 0;
}

/* ---- collections ---- */

#define ITER_BROKEN UINT32_MAX

int
sm_coll_iter_init(struct sm_coll_iter *it, struct sm_bytes v)
{
	int32_t n;

	it->p = v.p;
	it->end = v.p;
	it->left = 0;
	if (v.len == 0)
		return 0;
	it->end = v.p + v.len;
	if (v.len < 4)
		goto broken;
	n = (int32_t)be32(v.p);
	/* Every element takes at least its 4-byte length. */
	if (n < 0 || (uint32_t)n > (v.len - 4) / 4)
		goto broken;
	it->p += 4;
	it->left = (uint32_t)n;
	return 0;
broken:
	it->p = it->end = NULL;
	it->left = ITER_BROKEN;
	return -EINVAL;
}

static bool
coll_read(struct sm_coll_iter *it, struct sm_bytes *out)
{
	int32_t n;

	if (it->end - it->p < 4)
		return false;
	n = (int32_t)be32(it->p);
	if (n < 0 || it->end - (it->p + 4) < n)
		return false;
	out->p = it->p + 4;
	out->len = (uint32_t)n;
	it->p += 4 + (uint32_t)n;
	return true;
}

bool
sm_coll_next(struct sm_coll_iter *it, struct sm_bytes *elem_or_key, struct sm_bytes *val_or_null,
	     bool is_map)
{
	struct sm_bytes dummy;

	if (it->left == 0 || it->left == ITER_BROKEN)
		return false;
	if (!coll_read(it, elem_or_key) ||
	    (is_map && !coll_read(it, val_or_null ? val_or_null : &dummy))) {
		it->p = it->end = NULL;
		it->left = ITER_BROKEN;
		return false;
	}
	it->left--;
	return true;
}

bool
sm_coll_iter_error(const struct sm_coll_iter *it)
{
	return it->left == ITER_BROKEN || (it->left == 0 && it->p != it->end);
}

size_t
sm_coll_build(uint8_t *buf, size_t len, const struct sm_bytes *elems, uint32_t n, bool is_map)
{
	size_t need = 4, count = is_map ? 2 * (size_t)n : n, i;
	uint8_t *p;

	for (i = 0; i < count; i++)
		need += 4 + (size_t)elems[i].len;
	if (need > len)
		return need;
	p = buf;
	put_be32(p, n);
	p += 4;
	for (i = 0; i < count; i++) {
		put_be32(p, elems[i].len);
		if (elems[i].len)
			memcpy(p + 4, elems[i].p, elems[i].len);
		p += 4 + elems[i].len;
	}
	return need;
}

void
sm_tuple_iter_init(struct sm_coll_iter *it, struct sm_bytes v)
{
	it->p = v.p;
	it->end = v.p + v.len;
	it->left = 0;
}

bool
sm_tuple_next(struct sm_coll_iter *it, struct sm_bytes *field)
{
	int32_t n;

	if (it->left == ITER_BROKEN || it->p == it->end)
		return false;
	if (it->end - it->p < 4)
		goto broken;
	n = (int32_t)be32(it->p);
	it->p += 4;
	if (n < 0) {
		field->p = NULL;
		field->len = SM_FIELD_NULL;
		return true;
	}
	if (it->end - it->p < n)
		goto broken;
	field->p = it->p;
	field->len = (uint32_t)n;
	it->p += n;
	return true;
broken:
	it->p = it->end = NULL;
	it->left = ITER_BROKEN;
	return false;
}

size_t
sm_tuple_build(uint8_t *buf, size_t len, const struct sm_bytes *fields, unsigned n)
{
	size_t need = 0;
	unsigned i;
	uint8_t *p;

	for (i = 0; i < n; i++)
		need += 4 + (fields[i].len == SM_FIELD_NULL ? 0 : (size_t)fields[i].len);
	if (need > len)
		return need;
	p = buf;
	for (i = 0; i < n; i++) {
		if (fields[i].len == SM_FIELD_NULL) {
			put_be32(p, UINT32_MAX);
			p += 4;
			continue;
		}
		put_be32(p, fields[i].len);
		if (fields[i].len)
			memcpy(p + 4, fields[i].p, fields[i].len);
		p += 4 + fields[i].len;
	}
	return need;
}

/* ---- validation ---- */

/* Offset of the first byte that is not strict UTF-8, or len when all is well. */
static uint32_t
utf8_check(const uint8_t *s, uint32_t len)
{
	uint32_t i = 0, n, k;
	uint8_t c, lo, hi;

	while (i < len) {
		c = s[i];
		lo = 0x80;
		hi = 0xbf;
		if (c < 0x80) {
			i++;
			continue;
		} else if (c >= 0xc2 && c <= 0xdf) {
			n = 1;
		} else if (c >= 0xe0 && c <= 0xef) {
			n = 2;
			if (c == 0xe0)
				lo = 0xa0; /* overlong */
			else if (c == 0xed)
				hi = 0x9f; /* surrogates */
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 3;
			if (c == 0xf0)
				lo = 0x90; /* overlong */
			else if (c == 0xf4)
				hi = 0x8f; /* past U+10FFFF */
		} else {
			return i;
		}
		if (len - i <= n)
			return i;
		if (s[i + 1] < lo || s[i + 1] > hi)
			return i;
		for (k = 2; k <= n; k++)
			if ((s[i + k] & 0xc0) != 0x80)
				return i;
		i += n + 1;
	}
	return len;
}

static int
validate_fixed(const struct sm_type *t, struct sm_bytes v, const char *what, char *err,
	       size_t errlen)
{
	uint32_t want = fixed_lens[t->kind];

	if (v.len != 0 && v.len != want)
		return err_set(err, errlen, "Expected %u or 0 byte %s (%u)", want, what, v.len);
	return 0;
}

static int
validate_coll(const struct sm_type *t, struct sm_bytes v, char *err, size_t errlen)
{
	const uint8_t *p = v.p, *end;
	const char *what = type_names[t->kind];
	unsigned per = t->kind == SM_TYPE_MAP ? 2 : 1, k;
	struct sm_bytes e;
	int32_t n, i, elen;
	int ret;

	if (v.len == 0)
		return 0;
	end = v.p + v.len;
	if (v.len < 4)
		return err_set(err, errlen, "Not enough bytes to read a %s", what);
	n = (int32_t)be32(p);
	p += 4;
	if (n < 0)
		return err_set(err, errlen, "Invalid negative element count in a %s (%d)", what, n);
	for (i = 0; i < n; i++) {
		for (k = 0; k < per; k++) {
			if (end - p < 4)
				return err_set(err, errlen, "Not enough bytes to read a %s", what);
			elen = (int32_t)be32(p);
			p += 4;
			if (elen < 0)
				return err_set(err, errlen,
					       "null is not supported inside collections");
			if (end - p < elen)
				return err_set(err, errlen, "Not enough bytes to read a %s", what);
			e.p = p;
			e.len = (uint32_t)elen;
			p += elen;
			ret = sm_value_validate(k ? t->val : t->elem, e, err, errlen);
			if (ret)
				return ret;
		}
	}
	if (p != end)
		return err_set(err, errlen, "Unexpected extraneous bytes after %s value", what);
	return 0;
}

/* tuple_type_impl::validate(): each field its own type, null allowed, none past the type's. */
static int
validate_tuple(const struct sm_type *t, struct sm_bytes v, char *err, size_t errlen)
{
	const char *what = t->kind == SM_TYPE_UDT ? "user type" : "tuple";
	struct sm_coll_iter it;
	struct sm_bytes f;
	unsigned i = 0;
	int ret;

	sm_tuple_iter_init(&it, v);
	while (sm_tuple_next(&it, &f)) {
		if (i >= t->nfields)
			return err_set(err, errlen,
				       "Value of %s has more fields than its type (%u)", what,
				       t->nfields);
		if (f.len != SM_FIELD_NULL) {
			ret = sm_value_validate(t->fields[i], f, err, errlen);
			if (ret)
				return ret;
		}
		i++;
	}
	if (it.left == ITER_BROKEN)
		return err_set(err, errlen, "Not enough bytes to read a %s field", what);
	return 0;
}

int
sm_value_validate(const struct sm_type *t, struct sm_bytes v, char *err, size_t errlen)
{
	int64_t d[3];
	uint32_t i;

	switch (t->kind) {
	case SM_TYPE_ASCII:
		for (i = 0; i < v.len; i++)
			if (v.p[i] & 0x80)
				return err_set(err, errlen, "Invalid byte for ascii: %d",
					       (int)(int8_t)v.p[i]);
		return 0;
	case SM_TYPE_TEXT:
		i = utf8_check(v.p, v.len);
		if (i != v.len)
			return err_set(err, errlen,
				       "String didn't validate: invalid UTF-8 in text at byte %u",
				       i);
		return 0;
	case SM_TYPE_BLOB:
	case SM_TYPE_VARINT:
		return 0;
	case SM_TYPE_BOOLEAN:
		return validate_fixed(t, v, "boolean", err, errlen);
	case SM_TYPE_TINYINT:
		return validate_fixed(t, v, "tinyint", err, errlen);
	case SM_TYPE_SMALLINT:
		return validate_fixed(t, v, "smallint", err, errlen);
	case SM_TYPE_INT:
		return validate_fixed(t, v, "int", err, errlen);
	case SM_TYPE_BIGINT:
		return validate_fixed(t, v, "long", err, errlen);
	case SM_TYPE_TIMESTAMP:
		return validate_fixed(t, v, "timestamp", err, errlen);
	case SM_TYPE_FLOAT:
		return validate_fixed(t, v, "float", err, errlen);
	case SM_TYPE_DOUBLE:
		return validate_fixed(t, v, "double", err, errlen);
	case SM_TYPE_DATE:
		return validate_fixed(t, v, "date", err, errlen);
	case SM_TYPE_COUNTER:
		if (v.len != 8)
			return err_set(err, errlen, "Expected 8 byte counter (%u)", v.len);
		return 0;
	case SM_TYPE_TIME:
		if (validate_fixed(t, v, "time", err, errlen))
			return -EINVAL;
		if (v.len && (be_signed(v.p, 8) < 0 || be_signed(v.p, 8) >= TIME_NS_PER_DAY))
			return err_set(err, errlen,
				       "Time value out of range: %lld is not between 0 and "
				       "86399999999999 nanoseconds",
				       (long long)be_signed(v.p, 8));
		return 0;
	case SM_TYPE_UUID:
		if (v.len != 0 && v.len != 16)
			return err_set(err, errlen, "UUID should be 16 or 0 bytes (%u)", v.len);
		return 0;
	case SM_TYPE_TIMEUUID:
		if (v.len != 0 && v.len != 16)
			return err_set(err, errlen, "TimeUUID should be 16 or 0 bytes (%u)", v.len);
		if (v.len && (v.p[6] & 0xf0) != 0x10)
			return err_set(
				err, errlen,
				"Invalid version for TimeUUID type: %u (timeuuid needs version 1)",
				v.p[6] >> 4);
		return 0;
	case SM_TYPE_INET:
		if (v.len != 0 && v.len != 4 && v.len != 16)
			return err_set(err, errlen,
				       "Expected 4 or 16 byte inetaddress; got %u bytes", v.len);
		return 0;
	case SM_TYPE_DECIMAL:
		/* Cassandra takes 4 bytes too, then fails to read the empty unscaled value. */
		if (v.len != 0 && v.len < 5)
			return err_set(err, errlen,
				       "Expected 0 or at least 5 bytes for a decimal (%u)", v.len);
		return 0;
	case SM_TYPE_DURATION:
		return v.len ? duration_decode(v, d, err, errlen) : 0;
	case SM_TYPE_LIST:
	case SM_TYPE_SET:
	case SM_TYPE_MAP:
		return validate_coll(t, v, err, errlen);
	case SM_TYPE_TUPLE:
	case SM_TYPE_UDT:
		return validate_tuple(t, v, err, errlen);
	case SM_TYPE__COUNT:
		break;
	}
	return err_set(err, errlen, "Unknown type kind %d", (int)t->kind);
}

/* ---- big numbers: magnitudes as little-endian 32-bit limbs ---- */

/* Stack scratch (in limbs) before sm_malloc(): values up to ~1000 decimal digits. */
#define BN_STACK_LIMBS 512

/* A varint without redundant sign bytes: 0x0000ff -> 0x00ff, 0xffff80 -> 0x80. */
static struct sm_bytes
varint_trim(struct sm_bytes v)
{
	while (v.len > 1 &&
	       ((v.p[0] == 0x00 && !(v.p[1] & 0x80)) || (v.p[0] == 0xff && (v.p[1] & 0x80)))) {
		v.p++;
		v.len--;
	}
	return v;
}

/* -1, 0 or 1 for a trimmed, non-empty varint. */
static int
varint_sign(struct sm_bytes v)
{
	if (v.p[0] & 0x80)
		return -1;
	return v.len == 1 && v.p[0] == 0 ? 0 : 1;
}

static uint32_t
bn_limbs(uint32_t bytes)
{
	return bytes / 4 + 1;
}

/* |v| of a big-endian two's complement varint into @d (bn_limbs(len) limbs); returns the limbs used. */
static uint32_t
bn_from_varint(struct sm_bytes v, uint32_t *d)
{
	uint32_t n = bn_limbs(v.len), i;
	bool neg = v.p[0] & 0x80;
	unsigned carry = 1, b;

	memset(d, 0, (size_t)n * sizeof(*d));
	for (i = 0; i < v.len; i++) {
		b = v.p[v.len - 1 - i];
		if (neg) {
			/* -x = ~x + 1 */
			b = (~b & 0xff) + carry;
			carry = b >> 8;
			b &= 0xff;
		}
		d[i / 4] |= (uint32_t)b << (8 * (i % 4));
	}
	while (n > 0 && d[n - 1] == 0)
		n--;
	return n;
}

static uint64_t
bn_bits(const uint32_t *d, uint32_t n)
{
	if (n == 0)
		return 0;
	return (uint64_t)(n - 1) * 32 + (32 - (unsigned)__builtin_clz(d[n - 1]));
}

static uint32_t
bn_mul_small(uint32_t *d, uint32_t n, uint32_t m)
{
	uint64_t carry = 0, x;
	uint32_t i;

	for (i = 0; i < n; i++) {
		x = (uint64_t)d[i] * m + carry;
		d[i] = (uint32_t)x;
		carry = x >> 32;
	}
	if (carry)
		d[n++] = (uint32_t)carry;
	return n;
}

/* d *= 10^k; @d must have room for n + k / 9 + 1 limbs. */
static uint32_t
bn_mul_pow10(uint32_t *d, uint32_t n, uint64_t k)
{
	static const uint32_t pow10[10] = { 1,	    10,	     100,      1000,	  10000,
					    100000, 1000000, 10000000, 100000000, 1000000000 };

	while (k > 0) {
		n = bn_mul_small(d, n, pow10[k >= 9 ? 9 : k]);
		k -= k >= 9 ? 9 : k;
	}
	return n;
}

static uint32_t
bn_div_small(uint32_t *d, uint32_t n, uint32_t m, uint32_t *rem)
{
	uint64_t r = 0, x;
	uint32_t i;

	for (i = n; i-- > 0;) {
		x = r << 32 | d[i];
		d[i] = (uint32_t)(x / m);
		r = x % m;
	}
	*rem = (uint32_t)r;
	while (n > 0 && d[n - 1] == 0)
		n--;
	return n;
}

static int
bn_cmp(const uint32_t *a, uint32_t na, const uint32_t *b, uint32_t nb)
{
	uint32_t i;

	if (na != nb)
		return na < nb ? -1 : 1;
	for (i = na; i-- > 0;)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

static uint32_t *
bn_scratch(uint32_t *stack, size_t limbs)
{
	uint32_t *d;

	if (limbs <= BN_STACK_LIMBS)
		return stack;
	d = sm_malloc(limbs * sizeof(*d));
	if (!d) {
		/* A comparison cannot fail: an inconsistent order would corrupt sorted data. */
		SM_ERR("out of memory comparing decimals (%zu bytes of scratch)",
		       limbs * sizeof(*d));
		abort();
	}
	return d;
}

/* ---- comparison ---- */

static int
cmp_bytes(struct sm_bytes a, struct sm_bytes b)
{
	/* An empty value may come with a NULL pointer: no memcmp of 0 bytes. */
	int c = a.len && b.len ? memcmp(a.p, b.p, SM_MIN(a.len, b.len)) : 0;

	if (c)
		return c < 0 ? -1 : 1;
	return a.len < b.len ? -1 : a.len > b.len;
}

static int
cmp_i64(int64_t a, int64_t b)
{
	return (a > b) - (a < b);
}

static int
cmp_u64(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

/* IntegerType.compareIntegers(): numeric, whatever the sign padding. */
static int
cmp_varint(struct sm_bytes a, struct sm_bytes b)
{
	bool na, nb;
	int c;

	a = varint_trim(a);
	b = varint_trim(b);
	na = a.p[0] & 0x80;
	nb = b.p[0] & 0x80;
	if (na != nb)
		return na ? -1 : 1;
	if (a.len != b.len)
		return (a.len < b.len) != na ? -1 : 1;
	/* Same sign and length: two's complement orders like unsigned bytes. */
	c = memcmp(a.p, b.p, a.len);
	return (c > 0) - (c < 0);
}

/* Compare x * 10^k with y (both non-zero magnitudes, k >= 0); both are scratch, x has room. */
static int
cmp_scaled(uint32_t *x, uint32_t nx, uint64_t k, const uint32_t *y, uint32_t ny)
{
	uint64_t lx = bn_bits(x, nx), ly = bn_bits(y, ny);

	/* 2^(lx-1) * 8^k <= x * 10^k < 2^lx * 16^k: most cases end here. */
	if (lx - 1 + 3 * k >= ly)
		return 1;
	if (lx + 4 * k < ly)
		return -1;
	nx = bn_mul_pow10(x, nx, k);
	return bn_cmp(x, nx, y, ny);
}

/* DecimalType: BigDecimal.compareTo(), i.e. exact numeric order whatever the scales. */
static int
cmp_decimal(struct sm_bytes a, struct sm_bytes b)
{
	uint32_t stack[BN_STACK_LIMBS], *da, *db, *d, na, nb;
	struct sm_bytes ua, ub;
	int32_t sa, sb;
	int ga, gb, c;
	uint64_t k;
	size_t limbs;

	if (a.len < 5 || b.len < 5)
		return cmp_bytes(a, b);
	sa = (int32_t)be32(a.p);
	sb = (int32_t)be32(b.p);
	ua = varint_trim((struct sm_bytes){ a.p + 4, a.len - 4 });
	ub = varint_trim((struct sm_bytes){ b.p + 4, b.len - 4 });
	ga = varint_sign(ua);
	gb = varint_sign(ub);
	if (ga != gb)
		return ga < gb ? -1 : 1;
	if (ga == 0)
		return 0;
	if (sa == sb)
		return cmp_varint(ua, ub);

	/* a = ua / 10^sa, b = ub / 10^sb: scale up the one with the smaller scale. */
	k = sa < sb ? (uint64_t)((int64_t)sb - sa) : (uint64_t)((int64_t)sa - sb);
	/* cmp_scaled() multiplies only when k < bits(other) / 3 + 1. */
	limbs = (size_t)bn_limbs(ua.len) + bn_limbs(ub.len) +
		(size_t)SM_MIN(k, (uint64_t)ua.len * 8 + ub.len * 8 + 8) / 9 + 2;
	d = bn_scratch(stack, limbs);
	if (sa < sb) {
		db = d;
		nb = bn_from_varint(ub, db);
		da = d + bn_limbs(ub.len);
		na = bn_from_varint(ua, da);
		c = cmp_scaled(da, na, k, db, nb);
	} else {
		da = d;
		na = bn_from_varint(ua, da);
		db = d + bn_limbs(ua.len);
		nb = bn_from_varint(ub, db);
		c = -cmp_scaled(db, nb, k, da, na);
	}
	if (d != stack)
		sm_free(d);
	return ga < 0 ? -c : c;
}

/* Java's Float.compare()/Double.compare(): -0.0 < 0.0, every NaN equal and above +Infinity. */
static int
cmp_f32(uint32_t a, uint32_t b)
{
	float x, y;

	memcpy(&x, &a, sizeof(x));
	memcpy(&y, &b, sizeof(y));
	if (x < y)
		return -1;
	if (x > y)
		return 1;
	if (isnan(x))
		a = 0x7fc00000;
	if (isnan(y))
		b = 0x7fc00000;
	return cmp_i64((int32_t)a, (int32_t)b);
}

static int
cmp_f64(uint64_t a, uint64_t b)
{
	double x, y;

	memcpy(&x, &a, sizeof(x));
	memcpy(&y, &b, sizeof(y));
	if (x < y)
		return -1;
	if (x > y)
		return 1;
	if (isnan(x))
		a = 0x7ff8000000000000ull;
	if (isnan(y))
		b = 0x7ff8000000000000ull;
	return cmp_i64((int64_t)a, (int64_t)b);
}

/* The version nibble, then the 60-bit timestamp (TimeUUIDType.reorderTimestampBytes()). */
static uint64_t
uuid_v1_order(uint64_t msb)
{
	return msb << 48 | (msb << 16 & 0xffff00000000ull) | msb >> 32;
}

/*
 * UUIDType: version nibble; version 1 by timestamp, others by the first 8
 * bytes unsigned; then the last 8 bytes unsigned (CASSANDRA-8730 notes the
 * difference from TimeUUIDType).
 */
static int
cmp_uuid(const uint8_t *a, const uint8_t *b)
{
	uint64_t ma = be64(a), mb = be64(b);
	unsigned va = (ma >> 12) & 0xf, vb = (mb >> 12) & 0xf;
	int c;

	if (va != vb)
		return va < vb ? -1 : 1;
	if (va == 1)
		c = cmp_i64((int64_t)uuid_v1_order(ma), (int64_t)uuid_v1_order(mb));
	else
		c = cmp_u64(ma, mb);
	return c ? c : cmp_u64(be64(a + 8), be64(b + 8));
}

/* TimeUUIDType: timestamp (signed, as Java's long), then the last 8 bytes as signed bytes. */
static int
cmp_timeuuid(const uint8_t *a, const uint8_t *b)
{
	int c = cmp_i64((int64_t)uuid_v1_order(be64(a)), (int64_t)uuid_v1_order(be64(b)));

	if (c)
		return c;
	return cmp_u64(be64(a + 8) ^ 0x8080808080808080ull, be64(b + 8) ^ 0x8080808080808080ull);
}

/* ListType.compareListOrSet() and MapType.compareMaps(); malformed values go bytewise. */
static int
cmp_coll(const struct sm_type *t, struct sm_bytes a, struct sm_bytes b)
{
	bool is_map = t->kind == SM_TYPE_MAP, ha, hb;
	struct sm_coll_iter ia, ib;
	struct sm_bytes ka, va, kb, vb;
	int c;

	if (sm_coll_iter_init(&ia, a) || sm_coll_iter_init(&ib, b))
		return cmp_bytes(a, b);
	for (;;) {
		ha = sm_coll_next(&ia, &ka, is_map ? &va : NULL, is_map);
		hb = sm_coll_next(&ib, &kb, is_map ? &vb : NULL, is_map);
		if (!ha || !hb)
			break;
		c = sm_value_compare(t->elem, ka, kb);
		if (c == 0 && is_map)
			c = sm_value_compare(t->val, va, vb);
		if (c)
			return c;
	}
	if (ia.left == ITER_BROKEN || ib.left == ITER_BROKEN)
		return cmp_bytes(a, b);
	return ha ? 1 : hb ? -1 : 0;
}

/*
 * tuple_type_impl's order: field by field, a null field before any value,
 * a value that ends early before a longer one with the same fields.
 */
static int
cmp_tuple(const struct sm_type *t, struct sm_bytes a, struct sm_bytes b)
{
	struct sm_coll_iter ia, ib;
	struct sm_bytes fa, fb;
	bool ha, hb;
	unsigned i;
	int c;

	sm_tuple_iter_init(&ia, a);
	sm_tuple_iter_init(&ib, b);
	for (i = 0;; i++) {
		ha = sm_tuple_next(&ia, &fa);
		hb = sm_tuple_next(&ib, &fb);
		if (!ha || !hb)
			break;
		if (fa.len == SM_FIELD_NULL || fb.len == SM_FIELD_NULL)
			c = (fa.len != SM_FIELD_NULL) - (fb.len != SM_FIELD_NULL);
		else if (i < t->nfields)
			c = sm_value_compare(t->fields[i], fa, fb);
		else
			c = cmp_bytes(fa, fb);
		if (c)
			return c;
	}
	if (ia.left == ITER_BROKEN || ib.left == ITER_BROKEN)
		return cmp_bytes(a, b);
	return ha ? 1 : hb ? -1 : 0;
}

int
sm_value_compare(const struct sm_type *t, struct sm_bytes a, struct sm_bytes b)
{
	uint32_t fixed;

	if (a.len == 0 || b.len == 0)
		return (a.len != 0) - (b.len != 0);
	fixed = fixed_lens[t->kind];
	if (fixed && (a.len != fixed || b.len != fixed))
		return cmp_bytes(a, b);

	switch (t->kind) {
	case SM_TYPE_BOOLEAN:
		return (a.p[0] != 0) - (b.p[0] != 0);
	case SM_TYPE_TINYINT:
	case SM_TYPE_SMALLINT:
	case SM_TYPE_INT:
	case SM_TYPE_BIGINT:
	case SM_TYPE_COUNTER:
	case SM_TYPE_TIMESTAMP:
		return cmp_i64(be_signed(a.p, fixed), be_signed(b.p, fixed));
	case SM_TYPE_FLOAT:
		return cmp_f32(be32(a.p), be32(b.p));
	case SM_TYPE_DOUBLE:
		return cmp_f64(be64(a.p), be64(b.p));
	case SM_TYPE_VARINT:
		return cmp_varint(a, b);
	case SM_TYPE_DECIMAL:
		return cmp_decimal(a, b);
	case SM_TYPE_UUID:
		return cmp_uuid(a.p, b.p);
	case SM_TYPE_TIMEUUID:
		return cmp_timeuuid(a.p, b.p);
	case SM_TYPE_LIST:
	case SM_TYPE_SET:
	case SM_TYPE_MAP:
		return cmp_coll(t, a, b);
	case SM_TYPE_TUPLE:
	case SM_TYPE_UDT:
		return cmp_tuple(t, a, b);
	default:
		/* ascii, text, blob, inet, date (unsigned), time (never negative), duration */
		return cmp_bytes(a, b);
	}
}

/* ---- formatting ---- */

static void
fmt_hex(struct sbuf *sb, struct sm_bytes v)
{
	static const char hex[] = "0123456789abcdef";
	uint32_t i;

	sb_puts(sb, "0x");
	for (i = 0; i < v.len; i++) {
		sb_putc(sb, hex[v.p[i] >> 4]);
		sb_putc(sb, hex[v.p[i] & 0xf]);
	}
}

static void
fmt_quoted(struct sbuf *sb, struct sm_bytes v)
{
	uint32_t i;

	sb_putc(sb, '\'');
	for (i = 0; i < v.len; i++) {
		if (v.p[i] == '\'')
			sb_putc(sb, '\'');
		sb_putc(sb, (char)v.p[i]);
	}
	sb_putc(sb, '\'');
}

/*
 * Decimal digits of the varint @v (sign included) as a string from
 * sm_malloc() or @stack; NULL when memory is exhausted.
 */
static char *
varint_digits(struct sm_bytes v, uint32_t *stack, size_t *ndigits)
{
	uint32_t nl = bn_limbs(v.len), n, rem, i;
	size_t cap = (size_t)nl * 10 + 12, pos, limbs;
	uint32_t *d;
	char *out, *s;

	/* the limbs, then the characters */
	limbs = nl + (cap + sizeof(uint32_t) - 1) / sizeof(uint32_t);
	d = limbs <= BN_STACK_LIMBS ? stack : sm_malloc(limbs * sizeof(*d));
	if (!d)
		return NULL;
	out = (char *)(d + nl);
	n = bn_from_varint(v, d);
	pos = cap;
	out[--pos] = '\0';
	do {
		n = bn_div_small(d, n, 1000000000, &rem);
		for (i = 0; i < 9; i++) {
			out[--pos] = (char)('0' + rem % 10);
			rem /= 10;
		}
	} while (n > 0);
	while (out[pos] == '0' && out[pos + 1] != '\0')
		pos++;
	if (v.p[0] & 0x80)
		out[--pos] = '-';
	s = (char *)d;
	memmove(s, out + pos, cap - pos);
	*ndigits = cap - pos - 1;
	return s;
}

static void
fmt_varint(struct sbuf *sb, struct sm_bytes v)
{
	uint32_t stack[BN_STACK_LIMBS];
	size_t n;
	char *s;

	s = varint_digits(varint_trim(v), stack, &n);
	if (!s) {
		fmt_hex(sb, v);
		return;
	}
	sb_putn(sb, s, n);
	if (s != (char *)stack)
		sm_free(s);
}

/* Plain like Java's toPlainString(), scientific past 64 padding zeros so a huge scale stays short. */
static void
fmt_decimal(struct sbuf *sb, struct sm_bytes v)
{
	uint32_t stack[BN_STACK_LIMBS];
	int64_t scale = (int32_t)be32(v.p), adjusted;
	const char *digits;
	size_t n, nd;
	char *s;

	s = varint_digits(varint_trim((struct sm_bytes){ v.p + 4, v.len - 4 }), stack, &n);
	if (!s) {
		fmt_hex(sb, v);
		return;
	}
	digits = s;
	if (*digits == '-') {
		sb_putc(sb, '-');
		digits++;
		n--;
	}
	nd = n;
	if (scale == 0 || (scale < 0 && strcmp(digits, "0") == 0)) {
		sb_putn(sb, digits, nd);
	} else if (scale < 0 && scale >= -64) {
		sb_putn(sb, digits, nd);
		for (; scale < 0; scale++)
			sb_putc(sb, '0');
	} else if (scale > 0 && (uint64_t)scale < nd) {
		sb_putn(sb, digits, nd - (size_t)scale);
		sb_putc(sb, '.');
		sb_putn(sb, digits + nd - (size_t)scale, (size_t)scale);
	} else if (scale > 0 && (uint64_t)scale <= nd + 64) {
		sb_puts(sb, "0.");
		for (n = nd; n < (uint64_t)scale; n++)
			sb_putc(sb, '0');
		sb_putn(sb, digits, nd);
	} else {
		/* BigDecimal.toString()'s scientific form: 1.5E+100, 1E-70 */
		adjusted = (int64_t)nd - 1 - scale;
		sb_putc(sb, digits[0]);
		if (nd > 1) {
			sb_putc(sb, '.');
			sb_putn(sb, digits + 1, nd - 1);
		}
		sb_printf(sb, "E%s%lld", adjusted >= 0 ? "+" : "", (long long)adjusted);
	}
	if (s != (char *)stack)
		sm_free(s);
}

int
sm_double_digits(double x, bool single, char digits[18], bool *neg)
{
	char tmp[40], *e;
	int prec, nd = 0;
	const char *p;

	for (prec = 1; prec <= 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, x);
		if (single ? strtof(tmp, NULL) == (float)x : strtod(tmp, NULL) == x)
			break;
	}
	p = tmp;
	*neg = *p == '-';
	if (*neg)
		p++;
	for (; *p && *p != 'e' && nd < 17; p++)
		if (*p != '.')
			digits[nd++] = *p;
	while (*p && *p != 'e')
		p++;
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	digits[nd] = '\0';
	return (int)strtol(p + 1, &e, 10);
}

/*
 * The shortest digits that read back as the same number, laid out like
 * Java's Float/Double.toString(): plain for 1e-3 <= |x| < 1e7 ("1.0",
 * "0.001"), else "1.5E10".
 */
static void
fmt_float(struct sbuf *sb, double x, bool single)
{
	char digits[18];
	int exp10, nd, i;
	bool neg;

	if (isnan(x)) {
		sb_puts(sb, "NaN");
		return;
	}
	if (isinf(x)) {
		sb_puts(sb, x < 0 ? "-Infinity" : "Infinity");
		return;
	}
	exp10 = sm_double_digits(x, single, digits, &neg);
	nd = (int)strlen(digits);
	if (neg)
		sb_putc(sb, '-');
	if (exp10 >= -3 && exp10 < 7) {
		if (exp10 < 0) {
			sb_puts(sb, "0.");
			for (i = -1; i > exp10; i--)
				sb_putc(sb, '0');
			sb_putn(sb, digits, (size_t)nd);
			return;
		}
		for (i = 0; i <= exp10; i++)
			sb_putc(sb, i < nd ? digits[i] : '0');
		sb_putc(sb, '.');
		if (nd > exp10 + 1)
			sb_putn(sb, digits + exp10 + 1, (size_t)(nd - exp10 - 1));
		else
			sb_putc(sb, '0');
		return;
	}
	sb_putc(sb, digits[0]);
	sb_putc(sb, '.');
	if (nd > 1)
		sb_putn(sb, digits + 1, (size_t)nd - 1);
	else
		sb_putc(sb, '0');
	sb_printf(sb, "E%d", exp10);
}

void
sm_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
	int64_t era, doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (unsigned)(doy - (153 * mp + 2) / 5 + 1);
	*m = (unsigned)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

static void
fmt_date(struct sbuf *sb, int64_t days)
{
	unsigned m, d;
	int64_t y;

	sm_civil_from_days(days, &y, &m, &d);
	sb_printf(sb, "%04lld-%02u-%02u", (long long)y, m, d);
}

static void
fmt_timestamp(struct sbuf *sb, int64_t ms)
{
	int64_t days = ms / 86400000, rem = ms % 86400000;

	if (rem < 0) {
		rem += 86400000;
		days--;
	}
	sb_putc(sb, '\'');
	fmt_date(sb, days);
	sb_printf(sb, " %02u:%02u:%02u.%03uZ'", (unsigned)(rem / 3600000),
		  (unsigned)(rem / 60000 % 60), (unsigned)(rem / 1000 % 60),
		  (unsigned)(rem % 1000));
}

static void
fmt_time(struct sbuf *sb, int64_t ns)
{
	sb_printf(sb, "'%02u:%02u:%02u.%09u'", (unsigned)(ns / 3600000000000LL),
		  (unsigned)(ns / 60000000000LL % 60), (unsigned)(ns / 1000000000 % 60),
		  (unsigned)(ns % 1000000000));
}

/* Duration.toString(): months as y/mo, days as d, nanoseconds as h/m/s/ms/us/ns. */
static void
fmt_duration(struct sbuf *sb, const int64_t d[3])
{
	static const struct {
		uint64_t ns;
		const char *unit;
	} units[] = {
		{ 3600000000000ull, "h" }, { 60000000000ull, "m" }, { 1000000000ull, "s" },
		{ 1000000ull, "ms" },	   { 1000ull, "us" },	    { 1ull, "ns" },
	};
	uint64_t months, days, ns;
	size_t start = sb->pos;
	unsigned i;

	if (d[0] < 0 || d[1] < 0 || d[2] < 0)
		sb_putc(sb, '-');
	months = d[0] < 0 ? 0 - (uint64_t)d[0] : (uint64_t)d[0];
	days = d[1] < 0 ? 0 - (uint64_t)d[1] : (uint64_t)d[1];
	ns = d[2] < 0 ? 0 - (uint64_t)d[2] : (uint64_t)d[2];
	if (months / 12)
		sb_printf(sb, "%lluy", (unsigned long long)(months / 12));
	if (months % 12)
		sb_printf(sb, "%llumo", (unsigned long long)(months % 12));
	if (days)
		sb_printf(sb, "%llud", (unsigned long long)days);
	for (i = 0; i < SM_ARRAY_SIZE(units); i++) {
		if (ns / units[i].ns)
			sb_printf(sb, "%llu%s", (unsigned long long)(ns / units[i].ns),
				  units[i].unit);
		ns %= units[i].ns;
	}
	/* Cassandra prints nothing for a zero duration; a literal needs a unit. */
	if (sb->pos == start)
		sb_puts(sb, "0s");
}

static void
fmt_value(struct sbuf *sb, const struct sm_type *t, struct sm_bytes v);

static void
fmt_coll(struct sbuf *sb, const struct sm_type *t, struct sm_bytes v)
{
	bool is_map = t->kind == SM_TYPE_MAP, first = true;
	struct sm_coll_iter it;
	struct sm_bytes e, val;

	sb_putc(sb, t->kind == SM_TYPE_LIST ? '[' : '{');
	sm_coll_iter_init(&it, v);
	while (sm_coll_next(&it, &e, is_map ? &val : NULL, is_map)) {
		if (!first)
			sb_puts(sb, ", ");
		first = false;
		fmt_value(sb, t->elem, e);
		if (is_map) {
			sb_puts(sb, ": ");
			fmt_value(sb, t->val, val);
		}
	}
	sb_putc(sb, t->kind == SM_TYPE_LIST ? ']' : '}');
}

/* (1, 'a', null) for a tuple, {a: 1, b: null} for a user type */
static void
fmt_tuple(struct sbuf *sb, const struct sm_type *t, struct sm_bytes v)
{
	bool udt = t->kind == SM_TYPE_UDT;
	struct sm_coll_iter it;
	struct sm_bytes f;
	unsigned i = 0;

	sb_putc(sb, udt ? '{' : '(');
	sm_tuple_iter_init(&it, v);
	while (sm_tuple_next(&it, &f) && i < t->nfields) {
		if (i > 0)
			sb_puts(sb, ", ");
		if (udt) {
			sb_put_ident(sb, t->field_names[i]);
			sb_puts(sb, ": ");
		}
		if (f.len == SM_FIELD_NULL)
			sb_puts(sb, "null");
		else
			fmt_value(sb, t->fields[i], f);
		i++;
	}
	sb_putc(sb, udt ? '}' : ')');
}

/* @v is valid for @t. */
static void
fmt_value(struct sbuf *sb, const struct sm_type *t, struct sm_bytes v)
{
	char addr[INET6_ADDRSTRLEN];
	uint32_t u32;
	uint64_t u64;
	float f;
	double x;
	int64_t d[3];
	unsigned i;

	if (v.len == 0) {
		switch (t->kind) {
		case SM_TYPE_ASCII:
		case SM_TYPE_TEXT:
			sb_puts(sb, "''");
			return;
		case SM_TYPE_BLOB:
			sb_puts(sb, "0x");
			return;
		case SM_TYPE_LIST:
			sb_puts(sb, "[]");
			return;
		case SM_TYPE_SET:
		case SM_TYPE_MAP:
			sb_puts(sb, "{}");
			return;
		case SM_TYPE_TUPLE:
		case SM_TYPE_UDT:
			sb_puts(sb, "0x");
			return;
		default:
			sb_printf(sb, "blobas%s(0x)", type_names[t->kind]);
			return;
		}
	}
	switch (t->kind) {
	case SM_TYPE_ASCII:
	case SM_TYPE_TEXT:
		fmt_quoted(sb, v);
		break;
	case SM_TYPE_BLOB:
		fmt_hex(sb, v);
		break;
	case SM_TYPE_BOOLEAN:
		sb_puts(sb, v.p[0] ? "true" : "false");
		break;
	case SM_TYPE_TINYINT:
	case SM_TYPE_SMALLINT:
	case SM_TYPE_INT:
	case SM_TYPE_BIGINT:
	case SM_TYPE_COUNTER:
		sb_printf(sb, "%lld", (long long)be_signed(v.p, v.len));
		break;
	case SM_TYPE_VARINT:
		fmt_varint(sb, v);
		break;
	case SM_TYPE_DECIMAL:
		fmt_decimal(sb, v);
		break;
	case SM_TYPE_FLOAT:
		u32 = be32(v.p);
		memcpy(&f, &u32, sizeof(f));
		fmt_float(sb, f, true);
		break;
	case SM_TYPE_DOUBLE:
		u64 = be64(v.p);
		memcpy(&x, &u64, sizeof(x));
		fmt_float(sb, x, false);
		break;
	case SM_TYPE_TIMESTAMP:
		fmt_timestamp(sb, be_signed(v.p, 8));
		break;
	case SM_TYPE_DATE:
		sb_putc(sb, '\'');
		fmt_date(sb, (int64_t)be32(v.p) - DATE_EPOCH);
		sb_putc(sb, '\'');
		break;
	case SM_TYPE_TIME:
		fmt_time(sb, be_signed(v.p, 8));
		break;
	case SM_TYPE_UUID:
	case SM_TYPE_TIMEUUID:
		for (i = 0; i < 16; i++) {
			if (i == 4 || i == 6 || i == 8 || i == 10)
				sb_putc(sb, '-');
			sb_printf(sb, "%02x", v.p[i]);
		}
		break;
	case SM_TYPE_INET:
		inet_ntop(v.len == 4 ? AF_INET : AF_INET6, v.p, addr, sizeof(addr));
		sb_printf(sb, "'%s'", addr);
		break;
	case SM_TYPE_DURATION:
		duration_decode(v, d, NULL, 0);
		fmt_duration(sb, d);
		break;
	case SM_TYPE_LIST:
	case SM_TYPE_SET:
	case SM_TYPE_MAP:
		fmt_coll(sb, t, v);
		break;
	case SM_TYPE_TUPLE:
	case SM_TYPE_UDT:
		fmt_tuple(sb, t, v);
		break;
	case SM_TYPE__COUNT:
		break;
	}
}

size_t
sm_value_format(const struct sm_type *t, struct sm_bytes v, char *buf, size_t len)
{
	struct sbuf sb = { buf, len, 0 };

	if (sm_value_validate(t, v, NULL, 0))
		fmt_hex(&sb, v);
	else
		fmt_value(&sb, t, v);
	return sb_finish(&sb);
}

/* ---- canonical form of frozen collections ---- */

/* How norm_cmp() orders equal elements: by position, first or last first. */
struct norm_order {
	const struct sm_type *elem;
	bool last_first;
};

/*
 * By element (or key), then by position, which the element's place in the
 * normalised copy gives (it is written in order): a total order, so
 * qsort_r() keeps the first duplicate of a set and, with last_first, the
 * last of a map's repeated key, as a stable sort would.
 */
static int
norm_cmp(const void *a, const void *b, void *arg)
{
	const struct sm_bytes *x = a, *y = b;
	const struct norm_order *o = arg;
	int c = sm_value_compare(o->elem, x[0], y[0]);

	if (c != 0 || x[0].p == y[0].p)
		return c;
	c = x[0].p < y[0].p ? -1 : 1;
	return o->last_first ? -c : c;
}

/* An element's canonical form into @p (room for @e), recursively when @deep. */
static long
normalize_elem(const struct sm_type *t, struct sm_bytes e, uint8_t *p, size_t room, bool deep)
{
	if (deep)
		return sm_value_normalize(t, e, p, room);
	if (e.len > room)
		return -ENOSPC;
	if (e.len)
		memcpy(p, e.p, e.len);
	return (long)e.len;
}

/* A tuple or user type with every field in canonical form (it has no order of its own). */
static long
normalize_tuple(const struct sm_type *t, struct sm_bytes v, uint8_t *buf, size_t len)
{
	struct sm_coll_iter it;
	struct sm_bytes f;
	uint8_t *tmp, *p;
	unsigned i = 0;
	long ret;

	if (v.len > len)
		return -ENOSPC;
	/* the fields never grow: normalised into a copy, then moved into place */
	tmp = sm_malloc(v.len ? v.len : 1);
	if (tmp == NULL)
		return -ENOMEM;
	p = tmp;
	sm_tuple_iter_init(&it, v);
	while (sm_tuple_next(&it, &f)) {
		if (f.len == SM_FIELD_NULL || i >= t->nfields) {
			put_be32(p, f.len == SM_FIELD_NULL ? UINT32_MAX : f.len);
			if (f.len != SM_FIELD_NULL && f.len)
				memcpy(p + 4, f.p, f.len);
			p += 4 + (f.len == SM_FIELD_NULL ? 0 : f.len);
			i++;
			continue;
		}
		ret = sm_value_normalize(t->fields[i], f, p + 4, (size_t)(tmp + v.len - p - 4));
		if (ret < 0)
			goto out;
		put_be32(p, (uint32_t)ret);
		p += 4 + ret;
		i++;
	}
	if (it.left == ITER_BROKEN) {
		ret = -EINVAL;
		goto out;
	}
	ret = (long)(p - tmp);
	if (ret)
		memcpy(buf, tmp, (size_t)ret);
out:
	sm_free(tmp);
	return ret;
}

/* Whether values of @t can differ from their canonical form: they hold a set or a map. */
static bool
type_unordered(const struct sm_type *t)
{
	unsigned i;

	if (!type_owned(t))
		return false;
	if (t->kind == SM_TYPE_SET || t->kind == SM_TYPE_MAP)
		return true;
	for (i = 0; has_fields(t) && i < t->nfields; i++)
		if (type_unordered(t->fields[i]))
			return true;
	return type_unordered(t->elem);
}

static long
normalize(const struct sm_type *t, struct sm_bytes v, uint8_t *buf, size_t len, bool deep)
{
	bool is_map = t->kind == SM_TYPE_MAP;
	unsigned per = is_map ? 2 : 1;
	struct sm_coll_iter it;
	struct sm_bytes *ev = NULL;
	uint8_t *tmp = NULL, *p;
	uint32_t n, i, k;
	size_t out;
	long ret;

	if (deep && has_fields(t) && v.len > 0 && type_unordered(t))
		return normalize_tuple(t, v, buf, len);
	if (!sm_type_is_collection(t) || v.len == 0) {
		if (v.len > len)
			return -ENOSPC;
		if (v.len)
			memmove(buf, v.p, v.len);
		return (long)v.len;
	}
	if (sm_coll_iter_init(&it, v) < 0)
		return -EINVAL;
	n = it.left;
	ev = sm_malloc(((size_t)n * per + 1) * sizeof(*ev));
	tmp = sm_malloc(v.len);
	if (ev == NULL || tmp == NULL) {
		ret = -ENOMEM;
		goto out;
	}
	/* Normalise every element (and map value) into tmp: never longer. */
	p = tmp;
	for (i = 0; i < n; i++) {
		struct sm_bytes e, val;

		if (!sm_coll_next(&it, &e, is_map ? &val : NULL, is_map)) {
			ret = -EINVAL;
			goto out;
		}
		ret = normalize_elem(t->elem, e, p, (size_t)(tmp + v.len - p), deep);
		if (ret < 0)
			goto out;
		ev[i * per].p = p;
		ev[i * per].len = (uint32_t)ret;
		p += ret;
		if (is_map) {
			ret = normalize_elem(t->val, val, p, (size_t)(tmp + v.len - p), deep);
			if (ret < 0)
				goto out;
			ev[i * 2 + 1].p = p;
			ev[i * 2 + 1].len = (uint32_t)ret;
			p += ret;
		}
	}
	if (sm_coll_iter_error(&it)) {
		ret = -EINVAL;
		goto out;
	}
	if (t->kind != SM_TYPE_LIST && n > 1) {
		/* Sets and maps: sorted by element or key, duplicates dropped
		 * (the last value of a duplicated map key wins, as a driver's
		 * dict would keep it). n log n: a client sends thousands. */
		struct norm_order order = { t->elem, is_map };

		qsort_r(ev, n, per * sizeof(*ev), norm_cmp, &order);
		for (i = 1, k = 1; i < n; i++) {
			if (sm_value_compare(t->elem, ev[(k - 1) * per], ev[i * per]) == 0)
				continue;
			ev[k * per] = ev[i * per];
			if (is_map)
				ev[k * per + 1] = ev[i * per + 1];
			k++;
		}
		n = k;
	}
	out = sm_coll_build(NULL, 0, ev, n, is_map);
	if (out > len) {
		ret = -ENOSPC;
		goto out;
	}
	sm_coll_build(buf, len, ev, n, is_map);
	ret = (long)out;
out:
	sm_free(ev);
	sm_free(tmp);
	return ret;
}

long
sm_value_normalize(const struct sm_type *t, struct sm_bytes v, uint8_t *buf, size_t len)
{
	return normalize(t, v, buf, len, true);
}

long
sm_value_normalize_outer(const struct sm_type *t, struct sm_bytes v, uint8_t *buf, size_t len)
{
	return normalize(t, v, buf, len, false);
}
