/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CQL parser, part 3: statements and the public API.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sm_core.h"
#include "cql_parse_priv.h"

#define TRY(e)                                                                                     \
	do {                                                                                       \
		int rc_ = (e);                                                                     \
		if (rc_ < 0)                                                                       \
			return rc_;                                                                \
	} while (0)

static int
parse_stmt(struct cql_parser *p, struct sm_cql_stmt *s, bool in_batch);

/* ---- properties (WITH a = b AND ...) ---- */

/* A constant's text for a property or map entry value. */
static int
const_text(struct cql_parser *p, const char **out)
{
	const struct cql_tok *t = cql_peek(p, 0);
	uint32_t len;

	switch (t->type) {
	case T_STRING:
		p->pos++;
		*out = cql_tok_string(p, t, &len);
		/* Options are kept as C strings: a NUL would cut the value short. */
		if (*out != NULL && strlen(*out) != len)
			return cql_fail(p, -EINVAL,
					"Invalid option value: a NUL character (U+0000) is not "
					"supported in option strings");
		break;
	case T_INT:
	case T_FLOAT:
	case T_BLOB:
	case T_UUID:
	case T_DURATION:
	case T_IDENT:
	case T_QIDENT:
		if (memchr(p->text + t->off, '\0', t->len) != NULL)
			return cql_fail(p, -EINVAL,
					"Invalid option value: a NUL character (U+0000) is not "
					"supported in option strings");
		p->pos++;
		*out = cql_strndup(p, p->text + t->off, t->len);
		break;
	default:
		return cql_syntax_error(p);
	}
	return *out == NULL ? -ENOMEM : 0;
}

/*
 * A map entry's key or value: a constant, not a name (ScyllaDB's
 * convert_property_map(), cql3/expr/expression.cc, refuses anything but an
 * untyped constant as a recognition error: a syntax error).
 */
static int
map_const(struct cql_parser *p, const char *key, const char **out)
{
	const struct cql_tok *t = cql_peek(p, 0);

	if ((t->type == T_IDENT && !cql_tok_is_kw(p, t, "true") && !cql_tok_is_kw(p, t, "false")) ||
	    t->type == T_QIDENT) {
		/* ScyllaDB's wording, the entry's key first */
		if (key == NULL)
			return cql_fail(p, -EBADMSG, "Invalid property name: %.*s", (int)t->len,
					p->text + t->off);
		return cql_fail(p, -EBADMSG, "Invalid property value: %s for property: %.*s", key,
				(int)t->len, p->text + t->off);
	}
	return const_text(p, out);
}

struct key_at {
	const void *arr;
	size_t size; /* of an element, whose first member is its key */
};

static const char *
key_of(const struct key_at *k, unsigned i)
{
	return *(const char *const *)(const void *)((const char *)k->arr + (size_t)i * k->size);
}

static int
key_index_cmp(const void *a, const void *b, void *arg)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	int c = strcmp(key_of(arg, x), key_of(arg, y));

	return c ? c : (x > y) - (x < y);
}

/*
 * The first place (of @n elements of @size bytes, each starting with its
 * key) where a key is written again, or @n; -ENOMEM. Sorted, not compared
 * pairwise, since a client may send thousands of properties.
 */
static int
first_repeat(struct cql_parser *p, const void *arr, size_t size, unsigned n, unsigned *first)
{
	struct key_at k = { arr, size };
	unsigned *idx, i;

	*first = n;
	if (n < 2)
		return 0;
	idx = sm_arena_alloc(p->arena, (size_t)n * sizeof(*idx));
	if (idx == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		idx[i] = i;
	qsort_r(idx, n, sizeof(*idx), key_index_cmp, &k);
	/* equal keys sort by position: any but the first of a run repeats */
	for (i = 1; i < n; i++)
		if (strcmp(key_of(&k, idx[i - 1]), key_of(&k, idx[i])) == 0 && idx[i] < *first)
			*first = idx[i];
	return 0;
}

/* A key given twice in a property map: ScyllaDB's syntax error. */
static int
map_unique(struct cql_parser *p, const struct sm_cql_kv *kv, unsigned n)
{
	unsigned first;

	TRY(first_repeat(p, kv, sizeof(*kv), n, &first));
	if (first < n)
		return cql_fail(p, -EBADMSG, "Multiple definition for property %s", kv[first].key);
	return 0;
}

static int
prop_value(struct cql_parser *p, struct sm_cql_prop *pr)
{
	const struct cql_tok *open = cql_peek(p, 0), *close;
	struct sm_cql_kv *kv;
	unsigned cap = 0;

	if (!cql_accept_punct(p, "{"))
		return const_text(p, &pr->value);
	if (!cql_accept_punct(p, "}")) {
		for (;;) {
			kv = cql_vec_add(p, &pr->map, &pr->nmap, &cap, sizeof(*kv));
			if (kv == NULL)
				return -ENOMEM;
			TRY(map_const(p, NULL, &kv->key));
			TRY(cql_expect_punct(p, ":"));
			TRY(map_const(p, kv->key, &kv->value));
			if (cql_accept_punct(p, "}"))
				break;
			TRY(cql_expect_punct(p, ","));
		}
	}
	TRY(map_unique(p, pr->map, pr->nmap));
	close = &p->toks[p->pos - 1];
	pr->value = cql_strndup(p, p->text + open->off, close->off + 1 - open->off);
	if (pr->value == NULL)
		return -ENOMEM;
	if (pr->map == NULL) {
		/* {} is a map with no entries, not "not a map" */
		pr->map = sm_arena_alloc(p->arena, sizeof(*pr->map));
		if (pr->map == NULL)
			return -ENOMEM;
	}
	return 0;
}

static int
prop(struct cql_parser *p, struct sm_cql_prop **props, unsigned *n, unsigned *cap)
{
	struct sm_cql_prop *pr;

	pr = cql_vec_add(p, props, n, cap, sizeof(*pr));
	if (pr == NULL)
		return -ENOMEM;
	TRY(cql_ident(p, &pr->key));
	TRY(cql_expect_punct(p, "="));
	return prop_value(p, pr);
}

/* Cassandra's "Multiple definitions for property" for the first key written twice. */
static int
props_unique(struct cql_parser *p, const struct sm_cql_prop *props, unsigned n)
{
	unsigned first;

	TRY(first_repeat(p, props, sizeof(*props), n, &first));
	if (first < n)
		return cql_fail(p, -EINVAL, "Multiple definitions for property '%s'",
				props[first].key);
	return 0;
}

static const struct sm_cql_prop *
find_prop(const struct sm_cql_prop *props, unsigned n, const char *key)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (strcmp(props[i].key, key) == 0)
			return &props[i];
	return NULL;
}

static bool
if_not_exists(struct cql_parser *p, int *rc)
{
	*rc = 0;
	if (!cql_accept_kw(p, "if"))
		return false;
	*rc = cql_expect_kw(p, "not");
	if (*rc == 0)
		*rc = cql_expect_kw(p, "exists");
	return true;
}

static bool
if_exists(struct cql_parser *p, int *rc)
{
	*rc = 0;
	if (!cql_accept_kw(p, "if"))
		return false;
	*rc = cql_expect_kw(p, "exists");
	return true;
}

/* ---- DDL ---- */

/*
 * WITH ... of CREATE and ALTER KEYSPACE: the properties, the replication
 * property (NULL when not given) and durable_writes (*@has_dw when given).
 */
static int
keyspace_props(struct cql_parser *p, struct sm_cql_prop **props, unsigned *n,
	       const struct sm_cql_prop **repl, bool *has_dw, bool *dw,
	       const struct sm_cql_prop **tablets)
{
	const struct sm_cql_prop *r;
	unsigned cap = 0;

	TRY(cql_expect_kw(p, "with"));
	do {
		TRY(prop(p, props, n, &cap));
	} while (cql_accept_kw(p, "and"));
	TRY(props_unique(p, *props, *n));
	*repl = find_prop(*props, *n, "replication");
	*tablets = find_prop(*props, *n, "tablets");
	/* cql3/statements/property_definitions.cc get_map() */
	if (*tablets != NULL && (*tablets)->map == NULL)
		return cql_fail(p, -EINVAL,
				"Invalid value for property 'tablets'. It should be a map.");
	*has_dw = false;
	r = find_prop(*props, *n, "durable_writes");
	if (r != NULL) {
		if (r->map != NULL ||
		    (strcasecmp(r->value, "true") != 0 && strcasecmp(r->value, "false") != 0))
			return cql_fail(p, -EINVAL, "Invalid boolean value for durable_writes: %s",
					r->map ? "a map" : r->value);
		*has_dw = true;
		*dw = strcasecmp(r->value, "true") == 0;
	}
	return 0;
}

static int
create_keyspace(struct cql_parser *p, struct sm_cql_create_keyspace *k)
{
	const struct sm_cql_prop *r;
	bool has_dw;
	int rc;

	k->if_not_exists = if_not_exists(p, &rc);
	TRY(rc);
	TRY(cql_ident(p, &k->ks));
	TRY(keyspace_props(p, &k->props, &k->nprops, &r, &has_dw, &k->durable_writes,
			   &k->tablets));
	if (r == NULL || r->map == NULL)
		return cql_fail(p, -EINVAL, "Missing mandatory replication strategy class");
	k->replication = r->map;
	k->nreplication = r->nmap;
	if (!has_dw)
		k->durable_writes = true;
	return 0;
}

/*
 * One name of a type into @buf: an unquoted one lowercased, a quoted one
 * quoted again ("" for a quote), for sm_type_parse_in() to read back.
 */
static int
type_word(struct cql_parser *p, char *buf, size_t cap, size_t *len)
{
	const struct cql_tok *t = cql_peek(p, 0);
	const char *name;
	size_t n, i;

	if (t->type == T_IDENT) {
		if (*len + t->len + 1 >= cap)
			return cql_fail(p, -EINVAL, "Type too long");
		for (i = 0; i < t->len; i++) {
			char ch = p->text[t->off + i];

			buf[(*len)++] = (char)(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
		}
		p->pos++;
		return 0;
	}
	TRY(cql_ident(p, &name));
	n = strlen(name);
	if (*len + 2 * n + 3 >= cap)
		return cql_fail(p, -EINVAL, "Type too long");
	buf[(*len)++] = '"';
	for (i = 0; i < n; i++) {
		if (name[i] == '"')
			buf[(*len)++] = '"';
		buf[(*len)++] = name[i];
	}
	buf[(*len)++] = '"';
	return 0;
}

/* A column type, normalized: "map<text, frozen<list<int>>>". Appends to @buf. */
static int
col_type(struct cql_parser *p, char *buf, size_t cap, size_t *len, unsigned depth)
{
	const struct cql_tok *t = cql_peek(p, 0);
	unsigned nargs = 0;

	if (depth > SM_CQL_MAX_DEPTH)
		return cql_fail(p, -EINVAL, "Type nested too deeply");
	if (t->type == T_STRING)
		return cql_unsupported(p, "custom types");
	if (t->type != T_IDENT && t->type != T_QIDENT)
		return cql_expect_error(p, "a type");
	/* type names may be keywords (text, set, list, map are not reserved in types) */
	TRY(type_word(p, buf, cap, len));
	if (cql_accept_punct(p, ".")) {
		/* ks.user_type */
		if (*len + 1 >= cap)
			return cql_fail(p, -EINVAL, "Type too long");
		buf[(*len)++] = '.';
		t = cql_peek(p, 0);
		if (t->type != T_IDENT && t->type != T_QIDENT)
			return cql_expect_error(p, "a type");
		TRY(type_word(p, buf, cap, len));
		return 0;
	}
	if (!cql_accept_punct(p, "<"))
		return 0;
	buf[(*len)++] = '<';
	do {
		if (nargs++ > 0) {
			if (*len + 2 >= cap)
				return cql_fail(p, -EINVAL, "Type too long");
			buf[(*len)++] = ',';
			buf[(*len)++] = ' ';
		}
		TRY(col_type(p, buf, cap, len, depth + 1));
	} while (cql_accept_punct(p, ","));
	if (*len + 2 >= cap)
		return cql_fail(p, -EINVAL, "Type too long");
	/* ">>" lexes as two '>' tokens, and ">=" cannot end a type */
	TRY(cql_expect_punct(p, ">"));
	buf[(*len)++] = '>';
	return 0;
}

static int
coldef(struct cql_parser *p, struct sm_cql_coldef *c, bool *primary)
{
	unsigned first = p->pos;
	char buf[512];
	size_t len = 0;

	TRY(cql_ident(p, &c->name));
	TRY(col_type(p, buf, sizeof(buf), &len, 0));
	c->type = cql_strndup(p, buf, len);
	if (c->type == NULL)
		return -ENOMEM;
	if (cql_accept_kw(p, "static"))
		c->is_static = true;
	if (primary != NULL && cql_accept_kw(p, "primary")) {
		TRY(cql_expect_kw(p, "key"));
		*primary = true;
	}
	c->src.off = p->toks[first].off;
	c->src.len = p->toks[p->pos - 1].off + p->toks[p->pos - 1].len - c->src.off;
	return 0;
}

static int
add_name(struct cql_parser *p, const char ***arr, unsigned *n, unsigned *cap)
{
	const char **slot = cql_vec_add(p, arr, n, cap, sizeof(*slot));

	if (slot == NULL)
		return -ENOMEM;
	return cql_ident(p, slot);
}

/* a TO b [AND c TO d ...] of ALTER TABLE and ALTER TYPE ... RENAME */
static int
rename_list(struct cql_parser *p, const char ***from, const char ***to, unsigned *n)
{
	unsigned fcap = 0, tcap = 0, nto = 0;

	do {
		TRY(add_name(p, from, n, &fcap));
		TRY(cql_expect_kw(p, "to"));
		TRY(add_name(p, to, &nto, &tcap));
	} while (cql_accept_kw(p, "and"));
	return 0;
}

/* PRIMARY KEY ((a, b), c, d) or PRIMARY KEY (a, c, d), after the keywords */
static int
primary_key(struct cql_parser *p, struct sm_cql_create_table *t)
{
	unsigned pcap = 0, ccap = 0;

	TRY(cql_expect_punct(p, "("));
	if (cql_accept_punct(p, "(")) {
		do {
			TRY(add_name(p, &t->pk, &t->npk, &pcap));
		} while (cql_accept_punct(p, ","));
		TRY(cql_expect_punct(p, ")"));
	} else {
		TRY(add_name(p, &t->pk, &t->npk, &pcap));
	}
	while (cql_accept_punct(p, ","))
		TRY(add_name(p, &t->ck, &t->nck, &ccap));
	return cql_expect_punct(p, ")");
}

/*
 * default_time_to_live among @props, when it is a valid one; the server
 * checks the properties and gives ScyllaDB's messages (cql_table_props()).
 */
static void
default_ttl_prop(const struct sm_cql_prop *props, unsigned n, bool *has, int32_t *ttl)
{
	const struct sm_cql_prop *pr = find_prop(props, n, "default_time_to_live");
	char *end;
	long v;

	if (pr == NULL || pr->map != NULL)
		return;
	v = strtol(pr->value, &end, 10);
	if (*end != '\0' || end == pr->value || v < 0 || v > INT32_MAX)
		return;
	*has = true;
	*ttl = (int32_t)v;
}

static int
table_options(struct cql_parser *p, struct sm_cql_create_table *t)
{
	struct sm_cql_order *o;
	unsigned pcap = 0, ocap = 0;

	do {
		if (cql_accept_kw(p, "clustering")) {
			TRY(cql_expect_kw(p, "order"));
			TRY(cql_expect_kw(p, "by"));
			TRY(cql_expect_punct(p, "("));
			do {
				o = cql_vec_add(p, &t->clustering_order, &t->nclustering_order,
						&ocap, sizeof(*o));
				if (o == NULL)
					return -ENOMEM;
				TRY(cql_ident(p, &o->col));
				if (cql_accept_kw(p, "desc"))
					o->desc = true;
				else
					cql_accept_kw(p, "asc");
			} while (cql_accept_punct(p, ","));
			TRY(cql_expect_punct(p, ")"));
		} else if (cql_accept_kw(p, "compact")) {
			TRY(cql_expect_kw(p, "storage"));
			t->compact_storage = true;
		} else {
			TRY(prop(p, &t->props, &t->nprops, &pcap));
		}
	} while (cql_accept_kw(p, "and"));
	TRY(props_unique(p, t->props, t->nprops));
	default_ttl_prop(t->props, t->nprops, &t->has_default_ttl, &t->default_ttl);
	return 0;
}

static int
create_table(struct cql_parser *p, struct sm_cql_create_table *t)
{
	struct sm_cql_coldef *c;
	unsigned cap = 0, npk_specs = 0, pcap = 0;
	bool primary;
	int rc;

	t->if_not_exists = if_not_exists(p, &rc);
	TRY(rc);
	TRY(cql_qname(p, &t->table));
	TRY(cql_expect_punct(p, "("));
	do {
		if (cql_accept_kw(p, "primary")) {
			TRY(cql_expect_kw(p, "key"));
			if (npk_specs++ > 0)
				return cql_fail(p, -EINVAL,
						"Multiple PRIMARY KEYs specified "
						"(exactly one required)");
			TRY(primary_key(p, t));
			continue;
		}
		primary = false;
		c = cql_vec_add(p, &t->cols, &t->ncols, &cap, sizeof(*c));
		if (c == NULL)
			return -ENOMEM;
		TRY(coldef(p, c, &primary));
		if (primary) {
			const char **slot;

			if (npk_specs++ > 0)
				return cql_fail(p, -EINVAL,
						"Multiple PRIMARY KEYs specified "
						"(exactly one required)");
			slot = cql_vec_add(p, &t->pk, &t->npk, &pcap, sizeof(*slot));
			if (slot == NULL)
				return -ENOMEM;
			*slot = c->name;
		}
	} while (cql_accept_punct(p, ","));
	TRY(cql_expect_punct(p, ")"));
	if (npk_specs == 0)
		return cql_fail(p, -EINVAL, "No PRIMARY KEY specified (exactly one required)");
	if (cql_accept_kw(p, "with"))
		TRY(table_options(p, t));
	return 0;
}

/* WITH property = value [AND ...] of ALTER TABLE and ALTER MATERIALIZED VIEW */
static int
alter_view_with(struct cql_parser *p, struct sm_cql_alter_table *a)
{
	unsigned pcap = 0;

	TRY(cql_expect_kw(p, "with"));
	a->kind = SM_CQL_ALTER_WITH;
	do {
		TRY(prop(p, &a->props, &a->nprops, &pcap));
	} while (cql_accept_kw(p, "and"));
	TRY(props_unique(p, a->props, a->nprops));
	default_ttl_prop(a->props, a->nprops, &a->has_default_ttl, &a->default_ttl);
	return 0;
}

/* ALTER TABLE name ..., after TABLE (ScyllaDB's alterTableStatement) */
static int
alter_table(struct cql_parser *p, struct sm_cql_alter_table *a)
{
	struct sm_cql_coldef *c;
	unsigned cap = 0;
	struct sm_cql_attrs attrs;
	bool paren;

	TRY(cql_qname(p, &a->table));
	if (cql_accept_kw(p, "add") || cql_accept_kw(p, "drop")) {
		bool add = cql_tok_is_kw(p, &p->toks[p->pos - 1], "add");

		a->kind = add ? SM_CQL_ALTER_ADD : SM_CQL_ALTER_DROP;
		paren = cql_accept_punct(p, "(");
		do {
			c = cql_vec_add(p, &a->cols, &a->ncols, &cap, sizeof(*c));
			if (c == NULL)
				return -ENOMEM;
			if (add)
				TRY(coldef(p, c, NULL));
			else
				TRY(cql_ident(p, &c->name));
		} while (paren && cql_accept_punct(p, ","));
		if (paren)
			TRY(cql_expect_punct(p, ")"));
		if (!add && cql_accept_kw(p, "using")) {
			/* usingTimestampClause: TIMESTAMP only */
			memset(&attrs, 0, sizeof(attrs));
			if (!cql_tok_is_kw(p, cql_peek(p, 0), "timestamp"))
				return cql_expect_error(p, "K_TIMESTAMP");
			TRY(cql_using(p, &attrs, false));
			if (attrs.timeout != NULL)
				return cql_syntax_error(p);
			a->timestamp = attrs.timestamp;
		}
		return 0;
	}
	if (cql_accept_kw(p, "alter")) {
		a->kind = SM_CQL_ALTER_TYPE_OF;
		c = cql_vec_add(p, &a->cols, &a->ncols, &cap, sizeof(*c));
		if (c == NULL)
			return -ENOMEM;
		TRY(cql_ident(p, &c->name));
		TRY(cql_expect_kw(p, "type"));
		return cql_type_text(p, &c->type);
	}
	if (cql_accept_kw(p, "rename")) {
		a->kind = SM_CQL_ALTER_RENAME;
		return rename_list(p, &a->from, &a->to, &a->nrenames);
	}
	if (cql_tok_is_kw(p, cql_peek(p, 0), "with"))
		return alter_view_with(p, a);
	if (cql_tok_is_kw(p, cql_peek(p, 0), "ttl"))
		return cql_unsupported(p, "ALTER TABLE ... TTL (per-row TTL)");
	return cql_expect_error(p, "K_ALTER, K_ADD, K_DROP, K_WITH, K_RENAME or K_TTL");
}

/* ALTER KEYSPACE ks WITH ..., after KEYSPACE (ScyllaDB's alterKeyspaceStatement) */
static int
alter_keyspace(struct cql_parser *p, struct sm_cql_alter_keyspace *k)
{
	const struct sm_cql_prop *r;

	TRY(cql_ident(p, &k->ks));
	TRY(keyspace_props(p, &k->props, &k->nprops, &r, &k->has_durable_writes,
			   &k->durable_writes, &k->tablets));
	if (r != NULL) {
		if (r->map == NULL)
			return cql_fail(p, -EINVAL,
					"Invalid value for property 'replication'. It should be a "
					"map.");
		k->replication = r->map;
		k->nreplication = r->nmap;
	}
	return 0;
}

/* A normalized type into the arena: col_type() into a buffer sized by the text that is left. */
int
cql_type_text(struct cql_parser *p, const char **out)
{
	size_t cap = SM_MIN(p->len - p->toks[p->pos].off, (size_t)1 << 20) * 2 + 64, len = 0;
	char *buf = sm_malloc(cap);
	int rc;

	if (buf == NULL)
		return -ENOMEM;
	rc = col_type(p, buf, cap, &len, 0);
	if (rc == 0 && (*out = cql_strndup(p, buf, len)) == NULL)
		rc = -ENOMEM;
	sm_free(buf);
	return rc;
}

/* CREATE TYPE [IF NOT EXISTS] [ks.]name (f type, ...), after TYPE */
static int
create_type(struct cql_parser *p, struct sm_cql_create_type *t)
{
	unsigned fcap = 0, tcap = 0, ntypes = 0;
	const char **slot;
	int rc;

	t->if_not_exists = if_not_exists(p, &rc);
	TRY(rc);
	TRY(cql_qname(p, &t->name));
	TRY(cql_expect_punct(p, "("));
	do {
		TRY(add_name(p, &t->fields, &t->nfields, &fcap));
		slot = cql_vec_add(p, &t->types, &ntypes, &tcap, sizeof(*slot));
		if (slot == NULL)
			return -ENOMEM;
		TRY(cql_type_text(p, slot));
		/* ScyllaDB's grammar takes a trailing comma: (a int, b text,) */
	} while (cql_accept_punct(p, ",") && !cql_tok_is_punct(p, cql_peek(p, 0), ")"));
	return cql_expect_punct(p, ")");
}

/* ALTER TYPE name ADD f t | ALTER f TYPE t | RENAME a TO b [AND ...], after TYPE */
static int
alter_type(struct cql_parser *p, struct sm_cql_alter_type *a)
{
	TRY(cql_qname(p, &a->name));
	if (cql_accept_kw(p, "add")) {
		a->kind = SM_CQL_ALTER_TYPE_ADD;
		TRY(cql_ident(p, &a->field));
		return cql_type_text(p, &a->type);
	}
	if (cql_accept_kw(p, "alter")) {
		a->kind = SM_CQL_ALTER_TYPE_TYPE;
		TRY(cql_ident(p, &a->field));
		TRY(cql_expect_kw(p, "type"));
		return cql_type_text(p, &a->type);
	}
	if (!cql_accept_kw(p, "rename"))
		return cql_expect_error(p, "K_ADD, K_ALTER or K_RENAME");
	a->kind = SM_CQL_ALTER_TYPE_RENAME;
	return rename_list(p, &a->from, &a->to, &a->nrenames);
}

/* ---- SELECT ---- */

static int
selector(struct cql_parser *p, struct sm_cql_selector *s, unsigned depth, bool arg);

static int
selector_call(struct cql_parser *p, struct sm_cql_selector *s, unsigned depth)
{
	struct sm_cql_qname q;
	struct sm_cql_selector *a;
	unsigned cap = 0;

	TRY(cql_func_name(p, &q));
	s->kind = SM_CQL_SEL_FUNCTION;
	s->ks = q.ks;
	s->name = q.name;
	TRY(cql_expect_punct(p, "("));
	if (cql_accept_punct(p, ")"))
		return 0;
	do {
		a = cql_vec_add(p, &s->args, &s->nargs, &cap, sizeof(*a));
		if (a == NULL)
			return -ENOMEM;
		TRY(selector(p, a, depth + 1, true));
	} while (cql_accept_punct(p, ","));
	return cql_expect_punct(p, ")");
}

/* .f.g... after a column: user type fields, outermost first */
static int
field_path(struct cql_parser *p, struct sm_cql_selector *s)
{
	const char **slot;
	unsigned cap = 0;

	while (cql_accept_punct(p, ".")) {
		if (s->nfields >= SM_CQL_MAX_DEPTH)
			return cql_fail(p, -EINVAL, "Nesting deeper than %d levels", SM_CQL_MAX_DEPTH);
		slot = cql_vec_add(p, &s->fields, &s->nfields, &cap, sizeof(*slot));
		if (slot == NULL)
			return -ENOMEM;
		TRY(cql_ident(p, slot));
		s->field = s->fields[0];
	}
	return 0;
}

/* [x], [x..y], [x..], [..y] after a column, '[' read (ScyllaDB's selector grammar) */
static int
subscript(struct cql_parser *p, struct sm_cql_selector *s)
{
	/* a marker is the column's key (a list's index, a set's element); after
	 * another subscript or a field there is no column to type it by */
	struct cql_tctx ctx = { .role = s->column != NULL ? SM_CQL_BIND_KEY
							  : SM_CQL_BIND_FUNCTION_ARG,
				.clause = SM_CQL_CLAUSE_SELECT,
				.column = s->column };

	s->subscript = true;
	if (!cql_tok_is_punct(p, cql_peek(p, 0), ".."))
		TRY(cql_term(p, &ctx, &s->sub));
	if (cql_accept_punct(p, "..")) {
		s->slice = true;
		if (!cql_tok_is_punct(p, cql_peek(p, 0), "]"))
			TRY(cql_term(p, &ctx, &s->sub_to));
	} else if (s->sub == NULL) {
		return cql_syntax_error(p);
	}
	return cql_expect_punct(p, "]");
}

/*
 * More subscripts and fields after a column's first ones: each wraps what
 * is parsed so far (a POSTFIX selector of args[0]), its text from @first.
 */
static int
postfix_chain(struct cql_parser *p, struct sm_cql_selector *s, unsigned first, unsigned depth)
{
	while ((s->subscript || s->nfields > 0 || s->kind == SM_CQL_SEL_POSTFIX) &&
	       (cql_tok_is_punct(p, cql_peek(p, 0), "[") ||
		cql_tok_is_punct(p, cql_peek(p, 0), "."))) {
		struct sm_cql_selector *inner = sm_arena_alloc(p->arena, sizeof(*inner));
		bool field = cql_tok_is_punct(p, cql_peek(p, 0), ".");

		if (inner == NULL)
			return -ENOMEM;
		if (++depth > SM_CQL_MAX_DEPTH)
			return cql_fail(p, -EINVAL, "Nesting deeper than %d levels", SM_CQL_MAX_DEPTH);
		*inner = *s;
		inner->src.off = p->toks[first].off;
		inner->src.len = p->toks[p->pos - 1].off + p->toks[p->pos - 1].len - inner->src.off;
		memset(s, 0, sizeof(*s));
		s->kind = SM_CQL_SEL_POSTFIX;
		s->args = inner;
		s->nargs = 1;
		if (field) {
			/* one field per level: a path of several is one more level each */
			const char **slot = sm_arena_alloc(p->arena, sizeof(*slot));

			if (slot == NULL)
				return -ENOMEM;
			p->pos++;
			TRY(cql_ident(p, slot));
			s->fields = slot;
			s->nfields = 1;
			s->field = slot[0];
		} else {
			p->pos++;
			TRY(subscript(p, s));
		}
	}
	return 0;
}

static int
selector(struct cql_parser *p, struct sm_cql_selector *s, unsigned depth, bool arg)
{
	const struct cql_tok *t = cql_peek(p, 0), *nx = cql_peek(p, 1);
	unsigned first = p->pos;

	if (depth > SM_CQL_MAX_DEPTH)
		return cql_fail(p, -EINVAL, "Nesting deeper than %d levels", SM_CQL_MAX_DEPTH);
	if (cql_tok_is_kw(p, t, "count") && cql_tok_is_punct(p, nx, "(") &&
	    (cql_tok_is_punct(p, cql_peek(p, 2), "*") || cql_peek(p, 2)->type == T_INT) &&
	    cql_tok_is_punct(p, cql_peek(p, 3), ")")) {
		const struct cql_tok *a = cql_peek(p, 2);

		if (a->type == T_INT && !(a->len == 1 && p->text[a->off] == '1'))
			return cql_fail(p, -EINVAL, "Only COUNT(1) is supported, got COUNT(%.*s)",
					(int)(a->len > 20 ? 20 : a->len), p->text + a->off);
		p->pos += 4;
		s->kind = SM_CQL_SEL_COUNT;
	} else if (cql_tok_is_kw(p, t, "cast") && cql_tok_is_punct(p, nx, "(")) {
		/* CAST(selector AS type) */
		p->pos += 2;
		s->kind = SM_CQL_SEL_CAST;
		s->args = sm_arena_alloc(p->arena, sizeof(*s->args));
		if (s->args == NULL)
			return -ENOMEM;
		s->nargs = 1;
		TRY(selector(p, s->args, depth + 1, true));
		TRY(cql_expect_kw(p, "as"));
		TRY(cql_type_text(p, &s->type));
		TRY(cql_expect_punct(p, ")"));
	} else if ((cql_tok_is_kw(p, t, "writetime") || cql_tok_is_kw(p, t, "ttl")) &&
		   cql_tok_is_punct(p, nx, "(")) {
		s->kind = cql_tok_is_kw(p, t, "ttl") ? SM_CQL_SEL_TTL : SM_CQL_SEL_WRITETIME;
		p->pos += 2;
		TRY(cql_ident(p, &s->column));
		TRY(field_path(p, s));
		if (s->nfields == 0 && cql_accept_punct(p, "[")) /* WRITETIME(m[k]) */
			TRY(subscript(p, s));
		TRY(cql_expect_punct(p, ")"));
	} else if ((t->type == T_IDENT || t->type == T_QIDENT) &&
		   (cql_tok_is_punct(p, nx, "(") ||
		    (cql_tok_is_punct(p, nx, ".") && cql_tok_is_punct(p, cql_peek(p, 3), "(")))) {
		TRY(selector_call(p, s, depth));
	} else if (cql_at_ident(p) &&
		   !(arg && (cql_tok_is_kw(p, t, "true") || cql_tok_is_kw(p, t, "false")))) {
		s->kind = SM_CQL_SEL_COLUMN;
		TRY(cql_ident(p, &s->column));
		TRY(field_path(p, s));
		if (s->nfields == 0 && cql_accept_punct(p, "["))
			TRY(subscript(p, s));
		TRY(postfix_chain(p, s, first, depth));
	} else if (arg) {
		struct cql_tctx ctx = { .role = SM_CQL_BIND_FUNCTION_ARG,
					.clause = SM_CQL_CLAUSE_SELECT };

		s->kind = SM_CQL_SEL_TERM;
		TRY(cql_term(p, &ctx, &s->term));
	} else {
		return cql_syntax_error(p);
	}
	s->src.off = p->toks[first].off;
	s->src.len = p->toks[p->pos - 1].off + p->toks[p->pos - 1].len - s->src.off;
	if (!arg && cql_accept_kw(p, "as"))
		TRY(cql_ident(p, &s->alias));
	return 0;
}

static int
limit_value(struct cql_parser *p, enum sm_cql_bind_role role, struct sm_cql_term **out)
{
	struct cql_tctx ctx = { .role = role, .clause = SM_CQL_CLAUSE_OPTION };
	const struct cql_tok *t = cql_peek(p, 0);

	if (t->type != T_INT && t->type != T_QMARK && !cql_tok_is_punct(p, t, ":"))
		return cql_expect_error(p, "INTEGER");
	TRY(cql_term(p, &ctx, out));
	if ((*out)->kind == SM_CQL_TERM_LITERAL &&
	    ((*out)->text[0] == '-' || strspn((*out)->text, "0") == (*out)->len))
		return cql_fail(p, -EINVAL, "LIMIT must be strictly positive");
	return 0;
}

static int
select_stmt(struct cql_parser *p, struct sm_cql_select *s)
{
	struct sm_cql_selector *sel;
	struct sm_cql_order *o;
	unsigned cap = 0, ocap = 0;

	if (cql_tok_is_kw(p, cql_peek(p, 0), "json") && !cql_tok_is_kw(p, cql_peek(p, 1), "from") &&
	    !cql_tok_is_punct(p, cql_peek(p, 1), ",") && !cql_tok_is_kw(p, cql_peek(p, 1), "as")) {
		p->pos++;
		s->json = true;
	}
	if (cql_tok_is_kw(p, cql_peek(p, 0), "distinct") &&
	    !cql_tok_is_kw(p, cql_peek(p, 1), "from") &&
	    !cql_tok_is_punct(p, cql_peek(p, 1), ",") && !cql_tok_is_kw(p, cql_peek(p, 1), "as")) {
		p->pos++;
		s->distinct = true;
	}
	if (cql_accept_punct(p, "*")) {
		s->star = true;
	} else {
		do {
			sel = cql_vec_add(p, &s->sels, &s->nsels, &cap, sizeof(*sel));
			if (sel == NULL)
				return -ENOMEM;
			TRY(selector(p, sel, 0, false));
		} while (cql_accept_punct(p, ","));
	}
	TRY(cql_expect_kw(p, "from"));
	TRY(cql_qname(p, &s->table));
	if (cql_accept_kw(p, "where"))
		TRY(cql_where(p, &s->where, &s->nwhere));
	if (cql_accept_kw(p, "group")) {
		unsigned gcap = 0;

		TRY(cql_expect_kw(p, "by"));
		do {
			TRY(add_name(p, &s->group_by, &s->ngroup_by, &gcap));
		} while (cql_accept_punct(p, ","));
	}
	if (cql_accept_kw(p, "order")) {
		TRY(cql_expect_kw(p, "by"));
		do {
			o = cql_vec_add(p, &s->order, &s->norder, &ocap, sizeof(*o));
			if (o == NULL)
				return -ENOMEM;
			TRY(cql_ident(p, &o->col));
			if (cql_accept_kw(p, "desc"))
				o->desc = true;
			else
				cql_accept_kw(p, "asc");
		} while (cql_accept_punct(p, ","));
	}
	if (cql_accept_kw(p, "per")) {
		TRY(cql_expect_kw(p, "partition"));
		TRY(cql_expect_kw(p, "limit"));
		TRY(limit_value(p, SM_CQL_BIND_PER_PARTITION_LIMIT, &s->per_partition_limit));
	}
	if (cql_accept_kw(p, "limit"))
		TRY(limit_value(p, SM_CQL_BIND_LIMIT, &s->limit));
	if (cql_accept_kw(p, "allow")) {
		TRY(cql_expect_kw(p, "filtering"));
		s->allow_filtering = true;
	}
	if (cql_accept_kw(p, "bypass")) {
		TRY(cql_expect_kw(p, "cache"));
		s->bypass_cache = true;
	}
	if (cql_accept_kw(p, "using")) {
		struct sm_cql_attrs a = { 0 };

		if (!cql_tok_is_kw(p, cql_peek(p, 0), "timeout"))
			return cql_expect_error(p, "K_TIMEOUT");
		TRY(cql_using(p, &a, false));
		s->timeout = a.timeout;
	}
	return 0;
}

/* ---- INSERT, UPDATE, DELETE ---- */

static int
insert_stmt(struct cql_parser *p, struct sm_cql_insert *s)
{
	struct cql_tctx ctx = { .role = SM_CQL_BIND_VALUE, .clause = SM_CQL_CLAUSE_VALUES };
	struct sm_cql_term **v;
	unsigned cap = 0, vcap = 0, nvals = 0;
	int rc;

	TRY(cql_expect_kw(p, "into"));
	TRY(cql_qname(p, &s->table));
	if (cql_accept_kw(p, "json")) {
		/* JSON value [DEFAULT (NULL | UNSET)] (Cql.g insertStatement) */
		struct cql_tctx jctx = { .role = SM_CQL_BIND_JSON, .clause = SM_CQL_CLAUSE_VALUES };
		const struct cql_tok *t = cql_peek(p, 0);

		if (t->type != T_STRING && t->type != T_QMARK && !cql_tok_is_punct(p, t, ":"))
			return cql_expect_error(p, "STRING_LITERAL");
		TRY(cql_term(p, &jctx, &s->json));
		if (cql_accept_kw(p, "default")) {
			if (cql_accept_kw(p, "unset"))
				s->json_unset = true;
			else if (!cql_accept_kw(p, "null"))
				return cql_expect_error(p, "K_NULL or K_UNSET");
		}
		goto tail;
	}
	TRY(cql_expect_punct(p, "("));
	do {
		TRY(add_name(p, &s->cols, &s->ncols, &cap));
	} while (cql_accept_punct(p, ","));
	TRY(cql_expect_punct(p, ")"));
	TRY(cql_expect_kw(p, "values"));
	TRY(cql_expect_punct(p, "("));
	do {
		v = cql_vec_add(p, &s->values, &nvals, &vcap, sizeof(*v));
		if (v == NULL)
			return -ENOMEM;
		ctx.column = nvals <= s->ncols ? s->cols[nvals - 1] : NULL;
		TRY(cql_term(p, &ctx, v));
	} while (cql_accept_punct(p, ","));
	TRY(cql_expect_punct(p, ")"));
	if (nvals != s->ncols)
		return cql_fail(p, -EINVAL, "Unmatched column names/values");
tail:
	/* Cassandra's order is IF NOT EXISTS then USING; take either */
	s->if_not_exists = if_not_exists(p, &rc);
	TRY(rc);
	if (cql_accept_kw(p, "using"))
		TRY(cql_using(p, &s->attrs, true));
	if (!s->if_not_exists) {
		s->if_not_exists = if_not_exists(p, &rc);
		TRY(rc);
	}
	return 0;
}

static bool
at_column(struct cql_parser *p, const char *col)
{
	const struct cql_tok *t = cql_peek(p, 0);
	unsigned save = p->pos;
	const char *name;
	bool same;

	if (!cql_at_ident(p) || cql_tok_is_punct(p, cql_peek(p, 1), "(") ||
	    cql_tok_is_kw(p, t, "true") || cql_tok_is_kw(p, t, "false") ||
	    cql_tok_is_kw(p, t, "null"))
		return false;
	if (cql_ident(p, &name) < 0)
		return false;
	same = strcmp(name, col) == 0;
	p->pos = save;
	return same;
}

/* c = v, c = c + v, c = v + c, c = c - v, c += v, c -= v, c[k] = v */
static int
assignment(struct cql_parser *p, struct sm_cql_assign *a)
{
	struct cql_tctx ctx = { .role = SM_CQL_BIND_VALUE, .clause = SM_CQL_CLAUSE_SET };
	const struct cql_tok *t;
	unsigned first = p->pos;
	const char *other;

	TRY(cql_ident(p, &a->col));
	ctx.column = a->col;
	if (cql_accept_punct(p, ".")) {
		/* c.field = v: the marker's type is the field's */
		a->op = SM_CQL_ASSIGN_SET_FIELD;
		TRY(cql_ident(p, &a->field));
		TRY(cql_expect_punct(p, "="));
		ctx.role = SM_CQL_BIND_FIELD;
		ctx.field = a->field;
		TRY(cql_term(p, &ctx, &a->value));
		goto done;
	}
	if (cql_accept_punct(p, "[")) {
		a->op = SM_CQL_ASSIGN_SET_ELEM;
		ctx.role = SM_CQL_BIND_KEY;
		TRY(cql_term(p, &ctx, &a->key));
		TRY(cql_expect_punct(p, "]"));
		TRY(cql_expect_punct(p, "="));
		ctx.role = SM_CQL_BIND_ELEM;
		TRY(cql_term(p, &ctx, &a->value));
	} else if (cql_accept_punct(p, "+=") || cql_tok_is_punct(p, cql_peek(p, 0), "-=")) {
		if (cql_accept_punct(p, "-=")) {
			a->op = SM_CQL_ASSIGN_SUB;
			ctx.role = SM_CQL_BIND_SUB;
		} else {
			a->op = SM_CQL_ASSIGN_ADD;
			ctx.role = SM_CQL_BIND_ADD;
		}
		TRY(cql_term(p, &ctx, &a->value));
	} else {
		TRY(cql_expect_punct(p, "="));
		if (at_column(p, a->col)) {
			TRY(cql_ident(p, &other));
			t = cql_peek(p, 0);
			if (cql_accept_punct(p, "+")) {
				a->op = SM_CQL_ASSIGN_ADD;
				ctx.role = SM_CQL_BIND_ADD;
			} else if (cql_accept_punct(p, "-")) {
				a->op = SM_CQL_ASSIGN_SUB;
				ctx.role = SM_CQL_BIND_SUB;
			} else if (t->type == T_INT && p->text[t->off] == '-') {
				/* "c = c -1" lexes as c, c, -1: a subtraction of 1 */
				p->pos++;
				a->op = SM_CQL_ASSIGN_SUB;
				a->value = sm_arena_alloc(p->arena, sizeof(*a->value));
				if (a->value == NULL)
					return -ENOMEM;
				a->value->kind = SM_CQL_TERM_LITERAL;
				a->value->lit = SM_CQL_LIT_INT;
				a->value->text = cql_strndup(p, p->text + t->off + 1, t->len - 1);
				if (a->value->text == NULL)
					return -ENOMEM;
				a->value->len = t->len - 1;
				a->value->src.off = t->off + 1;
				a->value->src.len = t->len - 1;
				goto done;
			} else {
				return cql_expect_error(p, "'+' or '-'");
			}
			TRY(cql_term(p, &ctx, &a->value));
		} else {
			TRY(cql_term(p, &ctx, &a->value));
			if (cql_accept_punct(p, "+")) {
				TRY(cql_ident(p, &other));
				if (strcmp(other, a->col) != 0)
					return cql_fail(
						p, -EINVAL,
						"Only expressions of the form X = <value> + X "
						"are supported.");
				a->op = SM_CQL_ASSIGN_PREPEND;
				cql_rebind(p, a->value, SM_CQL_BIND_ADD);
			} else {
				a->op = SM_CQL_ASSIGN_SET;
			}
		}
	}
done:
	a->src.off = p->toks[first].off;
	a->src.len = p->toks[p->pos - 1].off + p->toks[p->pos - 1].len - a->src.off;
	return 0;
}

static int
update_stmt(struct cql_parser *p, struct sm_cql_update *s)
{
	struct sm_cql_assign *a;
	unsigned cap = 0;

	TRY(cql_qname(p, &s->table));
	if (cql_accept_kw(p, "using"))
		TRY(cql_using(p, &s->attrs, true));
	TRY(cql_expect_kw(p, "set"));
	do {
		a = cql_vec_add(p, &s->set, &s->nset, &cap, sizeof(*a));
		if (a == NULL)
			return -ENOMEM;
		TRY(assignment(p, a));
	} while (cql_accept_punct(p, ","));
	TRY(cql_expect_kw(p, "where"));
	TRY(cql_where(p, &s->where, &s->nwhere));
	if (cql_accept_kw(p, "if")) {
		if (cql_tok_is_kw(p, cql_peek(p, 0), "not"))
			return cql_fail(p, -EINVAL, "IF NOT EXISTS is only for INSERT");
		TRY(cql_if_conds(p, &s->if_kind, &s->conds, &s->nconds));
	}
	return 0;
}

static int
delete_stmt(struct cql_parser *p, struct sm_cql_delete *s)
{
	struct cql_tctx ctx = { .role = SM_CQL_BIND_KEY, .clause = SM_CQL_CLAUSE_DELETE };
	struct sm_cql_delete_col *c;
	unsigned cap = 0;

	if (!cql_tok_is_kw(p, cql_peek(p, 0), "from") || cql_tok_is_kw(p, cql_peek(p, 1), "from")) {
		do {
			c = cql_vec_add(p, &s->cols, &s->ncols, &cap, sizeof(*c));
			if (c == NULL)
				return -ENOMEM;
			TRY(cql_ident(p, &c->col));
			if (cql_accept_punct(p, "[")) {
				ctx.column = c->col;
				TRY(cql_term(p, &ctx, &c->key));
				TRY(cql_expect_punct(p, "]"));
			} else if (cql_accept_punct(p, ".")) {
				TRY(cql_ident(p, &c->field));
			}
		} while (cql_accept_punct(p, ","));
	}
	TRY(cql_expect_kw(p, "from"));
	TRY(cql_qname(p, &s->table));
	if (cql_accept_kw(p, "using"))
		TRY(cql_using(p, &s->attrs, false));
	TRY(cql_expect_kw(p, "where"));
	TRY(cql_where(p, &s->where, &s->nwhere));
	if (cql_accept_kw(p, "if")) {
		if (cql_tok_is_kw(p, cql_peek(p, 0), "not"))
			return cql_fail(p, -EINVAL, "IF NOT EXISTS is only for INSERT");
		TRY(cql_if_conds(p, &s->if_kind, &s->conds, &s->nconds));
	}
	return 0;
}

/* BEGIN [UNLOGGED | COUNTER] BATCH [USING ...] stmt; ... APPLY BATCH, after BEGIN */
static int
batch_stmt(struct cql_parser *p, struct sm_cql_batch_ast *b)
{
	struct sm_cql_stmt **slot, *inner;
	unsigned cap = 0;

	if (cql_accept_kw(p, "unlogged"))
		b->kind = SM_CQL_STMT_BATCH_UNLOGGED;
	else if (cql_accept_kw(p, "counter"))
		b->kind = SM_CQL_STMT_BATCH_COUNTER;
	TRY(cql_expect_kw(p, "batch"));
	if (cql_accept_kw(p, "using"))
		TRY(cql_using(p, &b->attrs, false));
	while (!cql_accept_kw(p, "apply")) {
		if (cql_peek(p, 0)->type == T_EOF)
			return cql_expect_error(p, "K_APPLY");
		if (b->nstmts >= SM_CQL_MAX_BINDS)
			return cql_fail(p, -EINVAL, "Too many statements in a batch");
		slot = cql_vec_add(p, &b->stmts, &b->nstmts, &cap, sizeof(*slot));
		inner = sm_arena_alloc(p->arena, sizeof(*inner));
		if (slot == NULL || inner == NULL)
			return -ENOMEM;
		*slot = inner;
		p->stmt_index = b->nstmts - 1;
		/* the bind slice is fixed up once the batch's array is final */
		inner->nbinds = p->nbinds;
		TRY(parse_stmt(p, inner, true));
		inner->nbinds = p->nbinds - inner->nbinds;
		while (cql_accept_punct(p, ";"))
			;
	}
	return cql_expect_kw(p, "batch");
}

/* ---- CREATE INDEX ---- */

static int
index_target(struct cql_parser *p, struct sm_cql_create_index *x)
{
	static const char *const fns[] = { "keys", "values", "entries", "full" };
	unsigned i, cap = 0;

	if (cql_accept_punct(p, "(")) {
		/* ((pk, ...), col): a local index */
		do {
			const char **slot = cql_vec_add(p, &x->local_pk, &x->nlocal_pk, &cap,
							sizeof(*slot));

			if (slot == NULL)
				return -ENOMEM;
			TRY(cql_ident(p, slot));
		} while (cql_accept_punct(p, ","));
		TRY(cql_expect_punct(p, ")"));
		TRY(cql_expect_punct(p, ","));
		return cql_ident(p, &x->column);
	}
	for (i = 0; i < SM_ARRAY_SIZE(fns); i++) {
		if (cql_tok_is_kw(p, cql_peek(p, 0), fns[i]) &&
		    cql_tok_is_punct(p, cql_peek(p, 1), "(")) {
			cql_accept_kw(p, fns[i]);
			cql_accept_punct(p, "(");
			x->fn = fns[i];
			TRY(cql_ident(p, &x->column));
			return cql_expect_punct(p, ")");
		}
	}
	return cql_ident(p, &x->column);
}

static int
create_index(struct cql_parser *p, struct sm_cql_create_index *x)
{
	int rc;

	x->if_not_exists = if_not_exists(p, &rc);
	TRY(rc);
	if (!cql_tok_is_kw(p, cql_peek(p, 0), "on"))
		TRY(cql_ident(p, &x->name));
	TRY(cql_expect_kw(p, "on"));
	TRY(cql_qname(p, &x->table));
	TRY(cql_expect_punct(p, "("));
	TRY(index_target(p, x));
	if (cql_tok_is_punct(p, cql_peek(p, 0), ","))
		return cql_unsupported(p, "an index on several columns");
	TRY(cql_expect_punct(p, ")"));
	if (cql_tok_is_kw(p, cql_peek(p, 0), "using"))
		return cql_unsupported(p, "CUSTOM INDEX");
	return 0;
}

/* ---- CREATE MATERIALIZED VIEW (ScyllaDB's createViewStatement) ---- */

static int
view_select(struct cql_parser *p, struct sm_cql_create_view *v)
{
	unsigned cap = 0;

	if (cql_accept_punct(p, "*")) {
		v->star = true;
		return 0;
	}
	do {
		TRY(add_name(p, &v->cols, &v->ncols, &cap));
		/* create_view_statement.cc's messages */
		if (cql_tok_is_kw(p, cql_peek(p, 0), "as"))
			return cql_fail(p, -EINVAL, "Cannot use alias when defining a materialized view");
		if (cql_tok_is_punct(p, cql_peek(p, 0), "(") || cql_tok_is_punct(p, cql_peek(p, 0), "["))
			return cql_fail(p, -EINVAL,
					"Cannot use general expressions when defining a materialized view");
	} while (cql_accept_punct(p, ","));
	return 0;
}

static int
create_view(struct cql_parser *p, struct sm_cql_create_view *v)
{
	unsigned cap = 0;
	int rc;

	v->if_not_exists = if_not_exists(p, &rc);
	TRY(rc);
	TRY(cql_qname(p, &v->view));
	TRY(cql_expect_kw(p, "as"));
	TRY(cql_expect_kw(p, "select"));
	TRY(view_select(p, v));
	TRY(cql_expect_kw(p, "from"));
	TRY(cql_qname(p, &v->base));
	if (cql_accept_kw(p, "where")) {
		do {
			TRY(add_name(p, &v->not_null, &v->nnot_null, &cap));
			if (!cql_accept_kw(p, "is")) {
				const struct cql_tok *t = cql_peek(p, 1);

				/* create_view_statement.cc prepare() */
				if (t->type == T_QMARK || cql_tok_is_punct(p, t, ":"))
					return cql_fail(p, -EINVAL,
							"Cannot use query parameters in CREATE "
							"MATERIALIZED VIEW statements");
				return cql_unsupported(p, "a materialized view's WHERE restriction "
							  "other than IS NOT NULL");
			}
			TRY(cql_expect_kw(p, "not"));
			TRY(cql_expect_kw(p, "null"));
		} while (cql_accept_kw(p, "and"));
	}
	TRY(cql_expect_kw(p, "primary"));
	TRY(cql_expect_kw(p, "key"));
	TRY(primary_key(p, &v->key));
	if (cql_accept_kw(p, "with"))
		TRY(table_options(p, &v->key));
	return 0;
}

/* ---- statements ---- */

static int
parse_create(struct cql_parser *p, struct sm_cql_stmt *s)
{
	const struct cql_tok *t = cql_peek(p, 0);

	if (cql_accept_kw(p, "keyspace") || cql_accept_kw(p, "schema")) {
		s->kind = SM_CQL_CREATE_KEYSPACE;
		return create_keyspace(p, &s->create_keyspace);
	}
	if (cql_accept_kw(p, "table") || cql_accept_kw(p, "columnfamily")) {
		s->kind = SM_CQL_CREATE_TABLE;
		return create_table(p, &s->create_table);
	}
	if (cql_accept_kw(p, "index")) {
		s->kind = SM_CQL_CREATE_INDEX;
		return create_index(p, &s->create_index);
	}
	if (cql_tok_is_kw(p, t, "custom"))
		return cql_unsupported(p, "CREATE CUSTOM INDEX");
	if (cql_accept_kw(p, "materialized")) {
		TRY(cql_expect_kw(p, "view"));
		s->kind = SM_CQL_CREATE_VIEW;
		return create_view(p, &s->create_view);
	}
	if (cql_accept_kw(p, "type")) {
		s->kind = SM_CQL_CREATE_TYPE;
		return create_type(p, &s->create_type);
	}
	if (cql_tok_is_kw(p, t, "function") || cql_tok_is_kw(p, t, "or"))
		return cql_unsupported(p, "CREATE FUNCTION");
	if (cql_tok_is_kw(p, t, "aggregate"))
		return cql_unsupported(p, "CREATE AGGREGATE");
	if (cql_tok_is_kw(p, t, "role") || cql_tok_is_kw(p, t, "user"))
		return cql_unsupported(p, "CREATE ROLE");
	if (cql_tok_is_kw(p, t, "trigger"))
		return cql_unsupported(p, "CREATE TRIGGER");
	if (cql_tok_is_kw(p, t, "service_level"))
		return cql_unsupported(p, "CREATE SERVICE_LEVEL");
	return cql_expect_error(p, "K_KEYSPACE or K_TABLE");
}

static int
parse_drop(struct cql_parser *p, struct sm_cql_stmt *s)
{
	const struct cql_tok *t = cql_peek(p, 0);
	int rc;

	if (cql_accept_kw(p, "keyspace") || cql_accept_kw(p, "schema")) {
		s->kind = SM_CQL_DROP_KEYSPACE;
		s->drop_keyspace.if_exists = if_exists(p, &rc);
		TRY(rc);
		return cql_ident(p, &s->drop_keyspace.ks);
	}
	if (cql_accept_kw(p, "table") || cql_accept_kw(p, "columnfamily")) {
		s->kind = SM_CQL_DROP_TABLE;
		s->drop_table.if_exists = if_exists(p, &rc);
		TRY(rc);
		return cql_qname(p, &s->drop_table.table);
	}
	if (cql_accept_kw(p, "index")) {
		s->kind = SM_CQL_DROP_INDEX;
		s->drop_index.if_exists = if_exists(p, &rc);
		TRY(rc);
		return cql_qname(p, &s->drop_index.table);
	}
	if (cql_accept_kw(p, "materialized")) {
		TRY(cql_expect_kw(p, "view"));
		s->kind = SM_CQL_DROP_VIEW;
		s->drop_view.if_exists = if_exists(p, &rc);
		TRY(rc);
		return cql_qname(p, &s->drop_view.table);
	}
	if (cql_accept_kw(p, "type")) {
		s->kind = SM_CQL_DROP_TYPE;
		s->drop_type.if_exists = if_exists(p, &rc);
		TRY(rc);
		return cql_qname(p, &s->drop_type.table);
	}
	if (cql_tok_is_kw(p, t, "function") || cql_tok_is_kw(p, t, "aggregate"))
		return cql_unsupported(p, "DROP FUNCTION");
	if (cql_tok_is_kw(p, t, "role") || cql_tok_is_kw(p, t, "user"))
		return cql_unsupported(p, "DROP ROLE");
	if (cql_tok_is_kw(p, t, "trigger"))
		return cql_unsupported(p, "DROP TRIGGER");
	return cql_expect_error(p, "K_KEYSPACE or K_TABLE");
}

static int
parse_stmt(struct cql_parser *p, struct sm_cql_stmt *s, bool in_batch)
{
	static const char *const unsupported[] = {
		"grant", "revoke", "list",    "describe", "desc",
		"login", "add",	   "execute", "prune",	  "attach",
	};
	unsigned first = p->pos;
	const struct cql_tok *t = cql_peek(p, 0);
	size_t i;
	int rc;

	if (in_batch && !cql_tok_is_kw(p, t, "insert") && !cql_tok_is_kw(p, t, "update") &&
	    !cql_tok_is_kw(p, t, "delete"))
		return t->type == T_EOF
			       ? cql_expect_error(p, "K_APPLY")
			       : cql_expect_error(p, "K_INSERT, K_UPDATE, K_DELETE or K_APPLY");
	if (cql_accept_kw(p, "select")) {
		s->kind = SM_CQL_SELECT;
		rc = select_stmt(p, &s->select);
	} else if (cql_accept_kw(p, "insert")) {
		s->kind = SM_CQL_INSERT;
		rc = insert_stmt(p, &s->insert);
	} else if (cql_accept_kw(p, "update")) {
		s->kind = SM_CQL_UPDATE;
		rc = update_stmt(p, &s->update);
	} else if (cql_accept_kw(p, "delete")) {
		s->kind = SM_CQL_DELETE;
		rc = delete_stmt(p, &s->del);
	} else if (cql_accept_kw(p, "use")) {
		s->kind = SM_CQL_USE;
		rc = cql_ident(p, &s->use.ks);
	} else if (cql_accept_kw(p, "begin")) {
		s->kind = SM_CQL_BATCH;
		rc = batch_stmt(p, &s->batch);
	} else if (cql_accept_kw(p, "create")) {
		rc = parse_create(p, s);
	} else if (cql_accept_kw(p, "drop")) {
		rc = parse_drop(p, s);
	} else if (cql_accept_kw(p, "truncate")) {
		s->kind = SM_CQL_TRUNCATE;
		if (!cql_accept_kw(p, "table"))
			cql_accept_kw(p, "columnfamily");
		rc = cql_qname(p, &s->truncate.table);
	} else if (cql_accept_kw(p, "alter")) {
		if (cql_accept_kw(p, "table") || cql_accept_kw(p, "columnfamily")) {
			s->kind = SM_CQL_ALTER_TABLE;
			rc = alter_table(p, &s->alter_table);
		} else if (cql_accept_kw(p, "type")) {
			s->kind = SM_CQL_ALTER_TYPE;
			rc = alter_type(p, &s->alter_type);
		} else if (cql_accept_kw(p, "keyspace")) {
			s->kind = SM_CQL_ALTER_KEYSPACE;
			rc = alter_keyspace(p, &s->alter_keyspace);
		} else if (cql_accept_kw(p, "materialized")) {
			/* alterViewStatement: WITH properties only */
			s->kind = SM_CQL_ALTER_TABLE;
			s->alter_table.view = true;
			rc = cql_expect_kw(p, "view");
			if (rc == 0)
				rc = cql_qname(p, &s->alter_table.table);
			if (rc == 0)
				rc = alter_view_with(p, &s->alter_table);
		} else if (cql_peek(p, 0)->type == T_IDENT) {
			rc = cql_unsupported(p, "ALTER ROLE, USER or SERVICE_LEVEL");
		} else {
			rc = cql_expect_error(p, "K_TABLE");
		}
	} else {
		for (i = 0; i < sizeof(unsupported) / sizeof(unsupported[0]); i++)
			if (cql_tok_is_kw(p, t, unsupported[i]))
				return cql_fail(p, -ENOTSUP, "not supported by shardmark: %.*s",
						(int)t->len, p->text + t->off);
		return cql_syntax_error(p);
	}
	if (rc < 0)
		return rc;
	s->src.off = p->toks[first].off;
	s->src.len = p->toks[p->pos - 1].off + p->toks[p->pos - 1].len - s->src.off;
	return 0;
}

int
sm_cql_parse(const char *text, size_t len, struct sm_cql_stmt **out, char *err, size_t errlen)
{
	struct cql_parser p = { .text = text, .len = len, .err = err, .errlen = errlen };
	struct sm_cql_stmt *s = NULL;
	unsigned i, at;
	int rc;

	*out = NULL;
	if (errlen)
		err[0] = '\0';
	if (len > SM_CQL_MAX_TEXT || len > UINT32_MAX - 1) {
		if (errlen)
			snprintf(err, errlen, "statement of %zu bytes is longer than the limit",
				 len);
		return -E2BIG;
	}
	/* nodes take roughly as many bytes as the text, more for short statements */
	p.arena = sm_arena_new(len * 2 + 1024);
	if (p.arena == NULL)
		return -ENOMEM;
	rc = cql_lex(&p);
	if (rc < 0)
		goto fail;
	s = sm_arena_alloc(p.arena, sizeof(*s));
	if (s == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	if (p.toks[0].type == T_EOF) {
		rc = cql_expect_error(&p, "a statement");
		goto fail;
	}
	rc = parse_stmt(&p, s, false);
	if (rc < 0)
		goto fail;
	while (cql_accept_punct(&p, ";"))
		;
	if (cql_peek(&p, 0)->type != T_EOF) {
		rc = cql_expect_error(&p, "<EOF>");
		goto fail;
	}
	if (p.extra_binds > 0) {
		/* ScyllaDB's message (query_processor.cc), with the whole count */
		rc = cql_fail(&p, -EINVAL,
			      "Too many markers(?). %llu markers exceed the allowed maximum of %u",
			      (unsigned long long)p.nbinds + p.extra_binds, SM_CQL_MAX_BINDS);
		goto fail;
	}
	if (p.nbinds) {
		s->binds = sm_arena_alloc(p.arena, p.nbinds * sizeof(*s->binds));
		if (s->binds == NULL) {
			rc = -ENOMEM;
			goto fail;
		}
		memcpy(s->binds, p.binds, p.nbinds * sizeof(*s->binds));
		s->nbinds = p.nbinds;
	}
	if (s->kind == SM_CQL_BATCH) {
		/* each inner statement's markers are a slice of the batch's, in order */
		for (i = 0, at = 0; i < s->batch.nstmts; i++) {
			struct sm_cql_stmt *in = s->batch.stmts[i];

			in->binds = in->nbinds ? s->binds + at : NULL;
			at += in->nbinds;
		}
	}
	s->arena = p.arena;
	sm_free(p.toks);
	sm_free(p.binds);
	*out = s;
	return 0;
fail:
	sm_free(p.toks);
	sm_free(p.binds);
	sm_arena_free(p.arena);
	return rc;
}

void
sm_cql_stmt_free(struct sm_cql_stmt *s)
{
	if (s != NULL && s->arena != NULL)
		sm_arena_free(s->arena);
}

/* The bind index of the WHERE pk = ? relation on @col, or -1. */
static int
where_eq_bind(const struct sm_cql_relation *w, unsigned n, const char *col)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (w[i].kind == SM_CQL_REL_COLUMN && w[i].op == SM_CQL_OP_EQ &&
		    strcmp(w[i].cols[0], col) == 0 && w[i].value != NULL &&
		    w[i].value->kind == SM_CQL_TERM_BIND)
			return (int)w[i].value->bind;
	return -1;
}

bool
sm_cql_pk_indexes(const struct sm_cql_stmt *s, const char *const *pk, unsigned npk, uint16_t *idx)
{
	unsigned i, j;
	int b;

	if (s == NULL || npk == 0)
		return false;
	for (i = 0; i < npk; i++) {
		b = -1;
		switch (s->kind) {
		case SM_CQL_INSERT:
			for (j = 0; j < s->insert.ncols; j++)
				if (strcmp(s->insert.cols[j], pk[i]) == 0 &&
				    s->insert.values[j]->kind == SM_CQL_TERM_BIND)
					b = (int)s->insert.values[j]->bind;
			break;
		case SM_CQL_UPDATE:
			b = where_eq_bind(s->update.where, s->update.nwhere, pk[i]);
			break;
		case SM_CQL_DELETE:
			b = where_eq_bind(s->del.where, s->del.nwhere, pk[i]);
			break;
		case SM_CQL_SELECT:
			b = where_eq_bind(s->select.where, s->select.nwhere, pk[i]);
			break;
		default:
			return false;
		}
		if (b < 0)
			return false;
		idx[i] = (uint16_t)b;
	}
	return true;
}
