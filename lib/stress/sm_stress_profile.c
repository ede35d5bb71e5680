/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cassandra-stress user profiles (sm_stress_profile.h): the YAML walk with
 * libyaml's document API, the CREATE TABLE of table_definition scanned for
 * columns, types and the primary key, and the bind markers of each query
 * mapped to the columns that fill them. Every scan here is one pass over
 * its text.
 */

#include "sm_stress_profile.h"

#include <ctype.h>
#include <stdlib.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "sm_common.h"
#include "sm_mem.h"

struct pctx {
	const char *name;
	yaml_document_t *doc;
	struct sm_stress_profile *p;
	char *err;
	size_t errlen;
};

static int __attribute__((format(printf, 3, 4)))
perr(struct pctx *c, const yaml_node_t *n, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n != NULL)
		snprintf(c->err, c->errlen, "profile %s, line %zu: %s", c->name,
			 (size_t)n->start_mark.line + 1, msg);
	else
		snprintf(c->err, c->errlen, "profile %s: %s", c->name, msg);
	return -EINVAL;
}

static const char *
scalar(const yaml_node_t *n)
{
	return n != NULL && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* A scalar copied; -EINVAL when @n is not one. */
static int
dup_scalar(struct pctx *c, const yaml_node_t *n, const char *key, char **out)
{
	const char *s = scalar(n);

	if (s == NULL)
		return perr(c, n, "'%s' must be a string", key);
	sm_free(*out);
	*out = sm_strdup(s);
	return *out != NULL ? 0 : -ENOMEM;
}

static int
parse_cl_name(const char *s)
{
	static const char *const names[] = {
		"ANY",	  "ONE",	  "TWO",	  "THREE",  "QUORUM",	 "ALL",
		"LOCAL_QUORUM", "EACH_QUORUM", "SERIAL", "LOCAL_SERIAL", "LOCAL_ONE",
	};
	unsigned i;

	for (i = 0; i < SM_ARRAY_SIZE(names); i++)
		if (strcasecmp(s, names[i]) == 0)
			return (int)i;
	return -1;
}

static int
cl_value(struct pctx *c, const yaml_node_t *n, const char *key, bool serial, int *out)
{
	const char *s = scalar(n);
	int cl = s != NULL ? parse_cl_name(s) : -1;

	if (cl < 0 || (serial && cl != 8 && cl != 9))
		return perr(c, n, "%s: '%s' is not a %sconsistency level (use %s)", key,
			    s ? s : "?", serial ? "serial " : "",
			    serial ? "SERIAL or LOCAL_SERIAL" : "ONE, QUORUM, LOCAL_ONE, ...");
	*out = cl;
	return 0;
}

static int
dist_value(struct pctx *c, const yaml_node_t *n, const char *key, struct sm_stress_xdist *d)
{
	char why[300];
	const char *s = scalar(n);

	if (s == NULL)
		return perr(c, n, "'%s' must be a distribution such as uniform(1..10)", key);
	if (sm_stress_xdist_parse(s, d, why, sizeof(why)) < 0)
		return perr(c, n, "%s: %s", key, why);
	return 0;
}

static int
ratio_value(struct pctx *c, const yaml_node_t *n, const char *key, struct sm_stress_ratio *r)
{
	char why[300];
	const char *s = scalar(n);

	if (s == NULL || sm_stress_ratio_parse(s, r, why, sizeof(why)) < 0)
		return perr(c, n, "%s: %s", key, s ? why : "must be a ratio such as fixed(1)/1");
	return 0;
}

#define FOR_PAIRS(c, node, pair)                                                                   \
	for (yaml_node_pair_t *pair = (node)->data.mapping.pairs.start;                           \
	     pair < (node)->data.mapping.pairs.top; pair++)

static yaml_node_t *
node(struct pctx *c, int id)
{
	return yaml_document_get_node(c->doc, id);
}

/* ---- CREATE TABLE ---- */

struct scan {
	const char *s, *end;
};

static void
skip_ws(struct scan *sc)
{
	while (sc->s < sc->end && isspace((unsigned char)*sc->s))
		sc->s++;
}

static bool
word(struct scan *sc, const char *w)
{
	size_t n = strlen(w);

	skip_ws(sc);
	if ((size_t)(sc->end - sc->s) >= n && strncasecmp(sc->s, w, n) == 0 &&
	    (sc->s + n == sc->end || !(isalnum((unsigned char)sc->s[n]) || sc->s[n] == '_'))) {
		sc->s += n;
		return true;
	}
	return false;
}

static bool
punct(struct scan *sc, char ch)
{
	skip_ws(sc);
	if (sc->s < sc->end && *sc->s == ch) {
		sc->s++;
		return true;
	}
	return false;
}

/* An identifier: "Quoted" kept as is, otherwise lower-cased. */
static bool
ident(struct scan *sc, char *out, size_t cap, bool *quoted)
{
	size_t n = 0;

	skip_ws(sc);
	*quoted = false;
	if (sc->s < sc->end && *sc->s == '"') {
		sc->s++;
		while (sc->s < sc->end) {
			if (*sc->s == '"') {
				if (sc->s + 1 < sc->end && sc->s[1] == '"') {
					sc->s++;
				} else {
					sc->s++;
					break;
				}
			}
			if (n + 1 < cap)
				out[n++] = *sc->s;
			sc->s++;
		}
		*quoted = true;
	} else {
		while (sc->s < sc->end && (isalnum((unsigned char)*sc->s) || *sc->s == '_')) {
			if (n + 1 < cap)
				out[n++] = (char)tolower((unsigned char)*sc->s);
			sc->s++;
		}
	}
	out[n] = '\0';
	return n > 0;
}

static int
find_col(const struct sm_stress_profile *p, const char *name)
{
	unsigned i;

	for (i = 0; i < p->ncols; i++)
		if (strcmp(p->cols[i].name, name) == 0)
			return (int)i;
	return -1;
}

int
sm_stress_profile_col(const struct sm_stress_profile *p, const char *name)
{
	return find_col(p, name);
}

/* Mark the columns named in PRIMARY KEY ((a, b), c, d) or (a, c, d). */
static int
primary_key(struct pctx *c, struct scan *sc)
{
	struct sm_stress_profile *p = c->p;
	char name[SM_STRESS_PROFILE_NAME_MAX];
	bool q, composite;
	int i;

	if (!punct(sc, '('))
		return perr(c, NULL, "table_definition: PRIMARY KEY needs its columns in ( )");
	composite = punct(sc, '(');
	do {
		if (!ident(sc, name, sizeof(name), &q) || (i = find_col(p, name)) < 0)
			return perr(c, NULL, "table_definition: PRIMARY KEY names an unknown column");
		p->cols[i].role = SM_STRESS_COL_PARTITION;
		p->cols[i].key_pos = p->npk++;
	} while (composite && punct(sc, ','));
	if (composite && !punct(sc, ')'))
		return perr(c, NULL, "table_definition: the partition key's ( ) is not closed");
	while (punct(sc, ',')) {
		if (!ident(sc, name, sizeof(name), &q) || (i = find_col(p, name)) < 0)
			return perr(c, NULL, "table_definition: PRIMARY KEY names an unknown column");
		p->cols[i].role = SM_STRESS_COL_CLUSTERING;
		p->cols[i].key_pos = p->nck++;
	}
	if (!punct(sc, ')'))
		return perr(c, NULL, "table_definition: PRIMARY KEY's ( ) is not closed");
	return 0;
}

/* Put the key columns first, in key order, then the others in table order. */
static void
order_columns(struct sm_stress_profile *p)
{
	struct sm_stress_pcol tmp[SM_STRESS_PROFILE_MAX_COLS];
	unsigned n = 0, i, pos;

	for (pos = 0; pos < p->npk; pos++)
		for (i = 0; i < p->ncols; i++)
			if (p->cols[i].role == SM_STRESS_COL_PARTITION && p->cols[i].key_pos == pos)
				tmp[n++] = p->cols[i];
	for (pos = 0; pos < p->nck; pos++)
		for (i = 0; i < p->ncols; i++)
			if (p->cols[i].role == SM_STRESS_COL_CLUSTERING && p->cols[i].key_pos == pos)
				tmp[n++] = p->cols[i];
	for (i = 0; i < p->ncols; i++)
		if (p->cols[i].role == SM_STRESS_COL_REGULAR || p->cols[i].role == SM_STRESS_COL_STATIC)
			tmp[n++] = p->cols[i];
	memcpy(p->cols, tmp, n * sizeof(tmp[0]));
}

/* A column's or field's type, up to a top-level , or ) or a keyword, into @out. */
static bool
scan_type(struct scan *sc, char *out, size_t cap)
{
	const char *t0;
	int depth = 0;
	size_t n;

	skip_ws(sc);
	t0 = sc->s;
	while (sc->s < sc->end) {
		if (*sc->s == '<')
			depth++;
		else if (*sc->s == '>')
			depth--;
		else if (depth == 0 && (*sc->s == ',' || *sc->s == ')'))
			break;
		else if (depth == 0 && isspace((unsigned char)*sc->s)) {
			struct scan look = *sc;

			if (word(&look, "static") || word(&look, "primary"))
				break;
		}
		sc->s++;
	}
	n = (size_t)(sc->s - t0);
	while (n > 0 && isspace((unsigned char)t0[n - 1]))
		n--;
	if (n == 0 || n >= cap)
		return false;
	memcpy(out, t0, n);
	out[n] = '\0';
	return true;
}

/* sm_type_parse_in()'s lookup: the profile's CREATE TYPEs (one keyspace: the profile's). */
static const struct sm_type *
find_udt(void *ctx, const char *ks, const char *name)
{
	const struct sm_stress_profile *p = ctx;
	unsigned i;

	(void)ks;
	for (i = 0; i < p->nudts; i++)
		if (strcmp(p->udts[i]->name, name) == 0)
			return p->udts[i];
	return NULL;
}

/* Whether @stmt is a CREATE TYPE (run before the table, which may use it). */
static bool
is_create_type(const char *stmt)
{
	struct scan sc = { stmt, stmt + strlen(stmt) };

	return word(&sc, "create") && word(&sc, "type");
}

/*
 * CREATE TYPE [IF NOT EXISTS] [ks.]name (field type, ...): the user type,
 * its fields' types read as the table's are (earlier types may be used).
 */
static int
parse_udt(struct pctx *c, const char *stmt)
{
	struct sm_stress_profile *p = c->p;
	struct scan sc = { stmt, stmt + strlen(stmt) };
	struct sm_type_resolver res = { find_udt, p, p->keyspace };
	char name[SM_STRESS_PROFILE_NAME_MAX], fname[SM_STRESS_PROFILE_MAX_COLS][64];
	const char *names[SM_STRESS_PROFILE_MAX_COLS];
	const struct sm_type *fields[SM_STRESS_PROFILE_MAX_COLS];
	char type[256], why[200];
	unsigned n = 0, i;
	bool q;
	int ret;

	word(&sc, "create");
	word(&sc, "type");
	if (word(&sc, "if") && !(word(&sc, "not") && word(&sc, "exists")))
		return perr(c, NULL, "CREATE TYPE: expected IF NOT EXISTS");
	if (!ident(&sc, name, sizeof(name), &q))
		return perr(c, NULL, "CREATE TYPE: no type name");
	if (punct(&sc, '.') && !ident(&sc, name, sizeof(name), &q))
		return perr(c, NULL, "CREATE TYPE: no type name after the keyspace");
	if (p->nudts == SM_STRESS_PROFILE_MAX_UDTS)
		return perr(c, NULL, "more than %d CREATE TYPE", SM_STRESS_PROFILE_MAX_UDTS);
	if (!punct(&sc, '('))
		return perr(c, NULL, "CREATE TYPE %s: expected ( after the name", name);
	ret = 0;
	do {
		if (n == SM_STRESS_PROFILE_MAX_COLS) {
			ret = perr(c, NULL, "CREATE TYPE %s: more than %d fields", name,
				   SM_STRESS_PROFILE_MAX_COLS);
			break;
		}
		if (!ident(&sc, fname[n], sizeof(fname[n]), &q) || !scan_type(&sc, type, sizeof(type))) {
			ret = perr(c, NULL, "CREATE TYPE %s: expected a field name and type", name);
			break;
		}
		if ((ret = sm_type_parse_in(type, &res, &fields[n], why, sizeof(why))) < 0) {
			if (ret != -ENOMEM)
				ret = perr(c, NULL, "CREATE TYPE %s: field %s: type '%s': %s", name,
					   fname[n], type, why);
			break;
		}
		names[n] = fname[n];
		n++;
	} while (punct(&sc, ','));
	if (ret == 0 && !punct(&sc, ')'))
		ret = perr(c, NULL, "CREATE TYPE %s: expected , or ) after a field", name);
	if (ret < 0) {
		for (i = 0; i < n; i++)
			sm_type_free(fields[i]);
		return ret;
	}
	/* takes the field types, even on failure */
	ret = sm_type_udt(p->keyspace, name, names, fields, n, &p->udts[p->nudts], why,
			  sizeof(why));
	if (ret < 0)
		return ret == -ENOMEM ? ret : perr(c, NULL, "CREATE TYPE %s: %s", name, why);
	p->nudts++;
	return 0;
}

/*
 * keyspace_definition may hold several statements (CREATE KEYSPACE ...;
 * CREATE TYPE ...;): the first stays, the others go to ks_more, each run
 * on its own. A ; inside quotes is not a separator.
 */
static int
split_keyspace_definition(struct pctx *c)
{
	struct sm_stress_profile *p = c->p;
	char *s = p->keyspace_definition, *start = NULL, quote = 0;

	for (; *s; s++) {
		if (quote != 0) {
			if (*s == quote)
				quote = 0;
			continue;
		}
		if (*s == '\'' || *s == '"') {
			quote = *s;
		} else if (*s == ';') {
			*s = '\0';
			if (start != NULL && strspn(start, " \t\r\n") != strlen(start)) {
				if (p->n_ks_more == SM_STRESS_PROFILE_MAX_STMTS)
					return perr(c, NULL, "keyspace_definition: more than %d "
							     "statements", SM_STRESS_PROFILE_MAX_STMTS + 1);
				if ((p->ks_more[p->n_ks_more++] = sm_strdup(start)) == NULL)
					return -ENOMEM;
			}
			start = s + 1;
		}
	}
	if (start != NULL && strspn(start, " \t\r\n") != strlen(start)) {
		if (p->n_ks_more == SM_STRESS_PROFILE_MAX_STMTS)
			return perr(c, NULL, "keyspace_definition: more than %d statements",
				    SM_STRESS_PROFILE_MAX_STMTS + 1);
		if ((p->ks_more[p->n_ks_more++] = sm_strdup(start)) == NULL)
			return -ENOMEM;
	}
	return 0;
}

static int
parse_table(struct pctx *c)
{
	struct sm_stress_profile *p = c->p;
	const char *def = p->table_definition;
	struct scan sc = { def, def + strlen(def) };
	char name[SM_STRESS_PROFILE_NAME_MAX], tname[SM_STRESS_PROFILE_NAME_MAX];
	struct sm_type_resolver res = { find_udt, p, p->keyspace };
	bool q;
	int ret;

	if (!word(&sc, "create") || !word(&sc, "table"))
		return perr(c, NULL, "table_definition must be a CREATE TABLE statement");
	if (word(&sc, "if") && !(word(&sc, "not") && word(&sc, "exists")))
		return perr(c, NULL, "table_definition: expected IF NOT EXISTS");
	if (!ident(&sc, tname, sizeof(tname), &q))
		return perr(c, NULL, "table_definition: no table name after CREATE TABLE");
	if (punct(&sc, '.') && !ident(&sc, tname, sizeof(tname), &q))
		return perr(c, NULL, "table_definition: no table name after the keyspace");
	if (p->table != NULL && strcasecmp(tname, p->table) != 0)
		return perr(c, NULL, "table_definition creates '%s' but table: is '%s'", tname,
			    p->table);
	if (!punct(&sc, '('))
		return perr(c, NULL, "table_definition: expected ( after the table name");
	for (;;) {
		struct sm_stress_pcol *col;
		char type[256], why[200];

		skip_ws(&sc);
		if (word(&sc, "primary")) {
			if (!word(&sc, "key"))
				return perr(c, NULL, "table_definition: expected PRIMARY KEY");
			if (p->npk != 0)
				return perr(c, NULL, "table_definition: more than one PRIMARY KEY");
			ret = primary_key(c, &sc);
			if (ret < 0)
				return ret;
		} else {
			if (!ident(&sc, name, sizeof(name), &q))
				return perr(c, NULL, "table_definition: expected a column name");
			if (p->ncols == SM_STRESS_PROFILE_MAX_COLS)
				return perr(c, NULL, "table_definition: more than %d columns",
					    SM_STRESS_PROFILE_MAX_COLS);
			col = &p->cols[p->ncols];
			snprintf(col->name, sizeof(col->name), "%s", name);
			col->quoted = q;
			col->role = SM_STRESS_COL_REGULAR;
			if (!scan_type(&sc, type, sizeof(type)))
				return perr(c, NULL, "table_definition: column %s has no type", name);
			if ((ret = sm_type_parse_in(type, &res, &col->type, why, sizeof(why))) < 0)
				return ret == -ENOMEM ? ret
						      : perr(c, NULL,
							     "table_definition: column %s: type '%s': "
							     "%s (a user type needs its CREATE TYPE in "
							     "keyspace_definition or extra_definitions)",
							     name, type, why);
			p->ncols++;
			if (word(&sc, "static"))
				col->role = SM_STRESS_COL_STATIC;
			if (word(&sc, "primary")) {
				if (!word(&sc, "key"))
					return perr(c, NULL, "table_definition: expected PRIMARY KEY");
				if (p->npk != 0)
					return perr(c, NULL,
						    "table_definition: more than one PRIMARY KEY");
				col->role = SM_STRESS_COL_PARTITION;
				col->key_pos = p->npk++;
			}
		}
		if (punct(&sc, ','))
			continue;
		if (punct(&sc, ')'))
			break;
		return perr(c, NULL, "table_definition: expected , or ) after a column");
	}
	if (p->npk == 0)
		return perr(c, NULL, "table_definition: the table has no PRIMARY KEY");
	if (p->table == NULL && (p->table = sm_strdup(tname)) == NULL)
		return -ENOMEM;
	order_columns(p);
	return 0;
}

/* ---- queries ---- */

int
sm_stress_profile_query(const struct sm_stress_profile *p, const char *name)
{
	unsigned i;

	for (i = 0; i < p->nqueries; i++)
		if (strcasecmp(p->queries[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* The identifier that ends just before @at in @s (quotes removed), or "". */
static const char *
ident_before(const char *s, const char *at, char *out, size_t cap)
{
	const char *e = at, *b;
	size_t n;

	while (e > s && isspace((unsigned char)e[-1]))
		e--;
	if (e > s && e[-1] == '"') {
		for (b = e - 1; b > s && b[-1] != '"'; b--)
			;
		n = (size_t)(e - 1 - b);
		snprintf(out, cap, "%.*s", (int)n, b);
		return b > s ? b - 1 : b;
	}
	for (b = e; b > s && (isalnum((unsigned char)b[-1]) || b[-1] == '_'); b--)
		;
	n = SM_MIN((size_t)(e - b), cap - 1);
	for (size_t i = 0; i < n; i++)
		out[i] = (char)tolower((unsigned char)b[i]);
	out[n] = '\0';
	return b;
}

int
sm_stress_profile_bind(const struct sm_stress_profile *p, struct sm_stress_pquery *q, char *err,
		       size_t errlen)
{
	const char *s = q->cql, *x;
	char name[SM_STRESS_PROFILE_NAME_MAX];
	int ins_cols[SM_STRESS_PROFILE_MAX_BINDS];
	unsigned nins = 0, i, bound_pk = 0;
	bool insert, in_str = false;

	while (isspace((unsigned char)*s))
		s++;
	insert = strncasecmp(s, "insert", 6) == 0;
	q->select = strncasecmp(s, "select", 6) == 0;
	q->nbind = 0;
	q->lwt = false;
	if (insert) {
		/* INSERT INTO t (a, b) VALUES (?, ?): markers by position */
		const char *open = strchr(s, '('), *close = open ? strchr(open, ')') : NULL;
		struct scan sc = { open ? open + 1 : s, close ? close : s };
		bool quoted;

		if (close == NULL) {
			snprintf(err, errlen, "query %s: INSERT without a column list", q->name);
			return -EINVAL;
		}
		do {
			int k;

			if (!ident(&sc, name, sizeof(name), &quoted) || (k = find_col(p, name)) < 0 ||
			    nins == SM_ARRAY_SIZE(ins_cols)) {
				snprintf(err, errlen, "query %s: INSERT names an unknown column",
					 q->name);
				return -EINVAL;
			}
			ins_cols[nins++] = k;
		} while (punct(&sc, ','));
	}
	for (x = s; *x; x++) {
		const char *op;
		int k;

		if (*x == '\'') {
			in_str = !in_str;
			continue;
		}
		if (in_str)
			continue;
		if ((x == s || !isalnum((unsigned char)x[-1])) && strncasecmp(x, "if", 2) == 0 &&
		    (x[2] == ' ' || x[2] == '\t' || x[2] == '\n') && x > s && isspace((unsigned char)x[-1]))
			q->lwt = true;
		if (*x != '?')
			continue;
		if (q->nbind == SM_STRESS_PROFILE_MAX_BINDS) {
			snprintf(err, errlen, "query %s: more than %d bind markers", q->name,
				 SM_STRESS_PROFILE_MAX_BINDS);
			return -EINVAL;
		}
		if (insert && !q->lwt && q->nbind < nins && strstr(s, "?") != NULL) {
			const char *values = strcasestr(s, "values");

			if (values != NULL && x > values) {
				q->bind[q->nbind] = (struct sm_stress_bind){
					SM_STRESS_BIND_COL, (unsigned)ins_cols[q->nbind] };
				q->nbind++;
				continue;
			}
		}
		/* the operator before the marker, then what it compares */
		op = x;
		while (op > s && isspace((unsigned char)op[-1]))
			op--;
		if (op - s >= 2 && strncasecmp(op - 2, "in", 2) == 0)
			op -= 2;
		else if (op > s && op[-1] == '+')
			op--;
		else
			while (op > s && strchr("=<>!", op[-1]) != NULL)
				op--;
		while (op > s && isspace((unsigned char)op[-1]))
			op--;
		if (op > s && op[-1] == ')') {
			/* token(a, b) > ? */
			const char *b = op - 1;

			while (b > s && *b != '(')
				b--;
			ident_before(s, b, name, sizeof(name));
			if (strcmp(name, "token") == 0) {
				q->bind[q->nbind++] = (struct sm_stress_bind){ SM_STRESS_BIND_TOKEN, 0 };
				continue;
			}
			snprintf(err, errlen,
				 "query %s: bind marker %u compares a tuple: write one marker per "
				 "column (a = ? AND b = ?)",
				 q->name, q->nbind + 1);
			return -EINVAL;
		}
		ident_before(s, op, name, sizeof(name));
		if ((k = find_col(p, name)) < 0) {
			snprintf(err, errlen,
				 "query %s: bind marker %u ('%s ?') is not a column of %s: markers "
				 "must follow a column (col = ?, col > ?, col IN ?, col = col + ?) "
				 "or token(...) > ?",
				 q->name, q->nbind + 1, name[0] ? name : "?", p->table);
			return -EINVAL;
		}
		q->bind[q->nbind++] = (struct sm_stress_bind){ SM_STRESS_BIND_COL, (unsigned)k };
	}
	for (i = 0; i < q->nbind; i++)
		if (q->bind[i].kind == SM_STRESS_BIND_COL &&
		    p->cols[q->bind[i].col].role != SM_STRESS_COL_REGULAR &&
		    p->cols[q->bind[i].col].role != SM_STRESS_COL_STATIC)
			bound_pk++;
	q->binds_all_pk = bound_pk == p->npk + p->nck;
	return 0;
}

/* ---- the YAML ---- */

static int
parse_columnspec(struct pctx *c, yaml_node_t *seq)
{
	yaml_node_item_t *it;

	if (seq->type != YAML_SEQUENCE_NODE)
		return perr(c, seq, "columnspec must be a list of - name: ... entries");
	for (it = seq->data.sequence.items.start; it < seq->data.sequence.items.top; it++) {
		yaml_node_t *m = node(c, *it);
		struct sm_stress_pcol *col = NULL;
		int ret, k;

		if (m == NULL || m->type != YAML_MAPPING_NODE)
			return perr(c, m, "each columnspec entry must be a mapping with name:");
		FOR_PAIRS(c, m, pr) {
			const char *key = scalar(node(c, pr->key));

			if (key != NULL && strcasecmp(key, "name") == 0) {
				const char *v = scalar(node(c, pr->value));
				char lname[SM_STRESS_PROFILE_NAME_MAX];
				size_t i;

				for (i = 0; v != NULL && v[i] && i + 1 < sizeof(lname); i++)
					lname[i] = v[i];
				lname[v ? i : 0] = '\0';
				k = v ? find_col(c->p, lname) : -1;
				if (k < 0) {
					for (i = 0; lname[i]; i++)
						lname[i] = (char)tolower((unsigned char)lname[i]);
					k = find_col(c->p, lname);
				}
				if (k < 0)
					return perr(c, node(c, pr->value),
						    "columnspec: '%s' is not a column of %s",
						    v ? v : "?", c->p->table);
				col = &c->p->cols[k];
			}
		}
		if (col == NULL)
			return perr(c, m, "a columnspec entry has no name:");
		FOR_PAIRS(c, m, pr) {
			const char *key = scalar(node(c, pr->key));
			yaml_node_t *v = node(c, pr->value);

			if (key == NULL || strcasecmp(key, "name") == 0)
				continue;
			if (strcasecmp(key, "size") == 0)
				ret = dist_value(c, v, "size", &col->size);
			else if (strcasecmp(key, "population") == 0)
				ret = dist_value(c, v, "population", &col->population);
			else if (strcasecmp(key, "cluster") == 0)
				ret = dist_value(c, v, "cluster", &col->cluster);
			else
				ret = perr(c, v,
					   "columnspec %s: unknown key '%s' (use size, population, "
					   "cluster)",
					   col->name, key);
			if (ret < 0)
				return ret;
		}
	}
	return 0;
}

static int
parse_insert(struct pctx *c, yaml_node_t *m)
{
	if (m->type != YAML_MAPPING_NODE)
		return perr(c, m, "insert must be a mapping (partitions:, select:, batchtype:)");
	FOR_PAIRS(c, m, pr) {
		const char *key = scalar(node(c, pr->key)), *s;
		yaml_node_t *v = node(c, pr->value);
		int ret;

		if (key == NULL)
			return perr(c, v, "insert: keys must be strings");
		if (strcasecmp(key, "partitions") == 0) {
			ret = dist_value(c, v, key, &c->p->insert.partitions);
		} else if (strcasecmp(key, "select") == 0) {
			ret = ratio_value(c, v, key, &c->p->insert.select);
		} else if (strcasecmp(key, "row-population") == 0) {
			ret = ratio_value(c, v, key, &c->p->insert.row_population);
		} else if (strcasecmp(key, "batchtype") == 0) {
			s = scalar(v);
			if (s != NULL && strcasecmp(s, "LOGGED") == 0)
				c->p->insert.batch = SM_STRESS_BATCH_LOGGED;
			else if (s != NULL && strcasecmp(s, "UNLOGGED") == 0)
				c->p->insert.batch = SM_STRESS_BATCH_UNLOGGED;
			else
				return perr(c, v, "batchtype: '%s': use LOGGED or UNLOGGED",
					    s ? s : "?");
			ret = 0;
		} else if (strcasecmp(key, "condition") == 0) {
			ret = dup_scalar(c, v, key, &c->p->insert.condition);
		} else if (strcasecmp(key, "consistencyLevel") == 0) {
			ret = cl_value(c, v, key, false, &c->p->insert.cl);
		} else if (strcasecmp(key, "serialConsistencyLevel") == 0) {
			ret = cl_value(c, v, key, true, &c->p->insert.serial_cl);
		} else {
			/* StressProfile: "Unrecognised insert option(s)" */
			ret = perr(c, v,
				   "insert: unrecognised option '%s' (use partitions, select, "
				   "row-population, batchtype, condition, consistencyLevel, "
				   "serialConsistencyLevel)",
				   key);
		}
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int
parse_queries(struct pctx *c, yaml_node_t *m, bool trq)
{
	if (m->type != YAML_MAPPING_NODE)
		return perr(c, m, "%s must map names to queries",
			    trq ? "token_range_queries" : "queries");
	FOR_PAIRS(c, m, pr) {
		const char *qname = scalar(node(c, pr->key));
		yaml_node_t *v = node(c, pr->value);
		struct sm_stress_pquery *q;
		struct sm_stress_ptrq *t;
		size_t i;
		int ret = 0;

		if (qname == NULL || qname[0] == '\0' || strlen(qname) >= SM_STRESS_PROFILE_NAME_MAX)
			return perr(c, v, "a query needs a name of 1 to %d characters",
				    SM_STRESS_PROFILE_NAME_MAX - 1);
		if (strcasecmp(qname, "insert") == 0)
			return perr(c, v, "'insert' is the profile's own write: name the query "
					  "otherwise");
		if (v == NULL || v->type != YAML_MAPPING_NODE)
			return perr(c, v, "query %s must be a mapping with cql:", qname);
		if (c->p->nqueries + c->p->ntrq == SM_STRESS_PROFILE_MAX_QUERIES)
			return perr(c, v, "more than %d queries", SM_STRESS_PROFILE_MAX_QUERIES);
		if (trq) {
			t = &c->p->trq[c->p->ntrq++];
			for (i = 0; qname[i]; i++)
				t->name[i] = (char)tolower((unsigned char)qname[i]);
			t->page_size = 5000;
			FOR_PAIRS(c, v, qp) {
				const char *key = scalar(node(c, qp->key));
				yaml_node_t *qv = node(c, qp->value);

				if (key != NULL && strcasecmp(key, "columns") == 0)
					ret = dup_scalar(c, qv, key, &t->columns);
				else if (key != NULL && strcasecmp(key, "page_size") == 0) {
					const char *s = scalar(qv);
					int ps = s ? atoi(s) : 0;

					if (ps < 1)
						return perr(c, qv, "page_size must be a positive number");
					t->page_size = (unsigned)ps;
				} else
					ret = perr(c, qv,
						   "token_range_queries %s: unknown key '%s' (use "
						   "columns, page_size)",
						   qname, key ? key : "?");
				if (ret < 0)
					return ret;
			}
			if (t->columns == NULL && (t->columns = sm_strdup("*")) == NULL)
				return -ENOMEM;
			continue;
		}
		q = &c->p->queries[c->p->nqueries++];
		for (i = 0; qname[i]; i++)
			q->name[i] = (char)tolower((unsigned char)qname[i]);
		q->cl = q->serial_cl = -1;
		FOR_PAIRS(c, v, qp) {
			const char *key = scalar(node(c, qp->key));
			yaml_node_t *qv = node(c, qp->value);

			if (key == NULL)
				return perr(c, qv, "query %s: keys must be strings", qname);
			if (strcasecmp(key, "cql") == 0) {
				ret = dup_scalar(c, qv, key, &q->cql);
			} else if (strcasecmp(key, "fields") == 0) {
				const char *s = scalar(qv);

				if (s != NULL && strcasecmp(s, "samerow") == 0)
					q->samerow = true;
				else if (s != NULL && strcasecmp(s, "multirow") == 0)
					q->samerow = false;
				else
					return perr(c, qv, "fields: '%s': use samerow or multirow",
						    s ? s : "?");
			} else if (strcasecmp(key, "consistencyLevel") == 0) {
				ret = cl_value(c, qv, key, false, &q->cl);
			} else if (strcasecmp(key, "serialConsistencyLevel") == 0) {
				ret = cl_value(c, qv, key, true, &q->serial_cl);
			} else {
				ret = perr(c, qv,
					   "query %s: unknown key '%s' (use cql, fields, "
					   "consistencyLevel, serialConsistencyLevel)",
					   qname, key);
			}
			if (ret < 0)
				return ret;
		}
		if (q->cql == NULL)
			return perr(c, v, "query %s has no cql:", qname);
	}
	return 0;
}

static void
set_defaults(struct sm_stress_profile *p)
{
	unsigned i;
	char e[8];

	for (i = 0; i < p->ncols; i++) {
		sm_stress_xdist_parse("uniform(4..8)", &p->cols[i].size, e, sizeof(e));
		sm_stress_xdist_parse("uniform(1..100b)", &p->cols[i].population, e, sizeof(e));
		sm_stress_xdist_fixed(&p->cols[i].cluster, 1);
	}
	sm_stress_xdist_fixed(&p->insert.partitions, 1);
	sm_stress_ratio_parse("fixed(1)/1", &p->insert.select, e, sizeof(e));
	sm_stress_ratio_parse("fixed(1)/1", &p->insert.row_population, e, sizeof(e));
	p->insert.batch = SM_STRESS_BATCH_LOGGED;
	p->insert.cl = p->insert.serial_cl = -1;
}

static yaml_node_t *
get_key(struct pctx *c, yaml_node_t *root, const char *key)
{
	FOR_PAIRS(c, root, pr) {
		const char *k = scalar(node(c, pr->key));

		if (k != NULL && strcasecmp(k, key) == 0)
			return node(c, pr->value);
	}
	return NULL;
}

static int
walk(struct pctx *c, yaml_node_t *root)
{
	static const char *const known[] = {
		"keyspace", "keyspace_definition", "table",	  "table_definition",
		"columnspec", "insert",	  "queries", "token_range_queries", "extra_definitions",
		"specname", /* cassandra-stress 3.17's name of a profile in a multi-profile run */
	};
	struct sm_stress_profile *p = c->p;
	yaml_node_t *v;
	unsigned i;
	int ret;

	if (root == NULL || root->type != YAML_MAPPING_NODE)
		return perr(c, root, "a profile is a YAML mapping (keyspace:, table:, ...)");
	FOR_PAIRS(c, root, pr) {
		const char *k = scalar(node(c, pr->key));

		for (i = 0; k != NULL && i < SM_ARRAY_SIZE(known); i++)
			if (strcasecmp(k, known[i]) == 0)
				break;
		if (k == NULL || i == SM_ARRAY_SIZE(known))
			return perr(c, node(c, pr->key),
				    "unknown key '%s' (cassandra-stress's profile keys: keyspace, "
				    "keyspace_definition, table, table_definition, columnspec, "
				    "insert, queries, token_range_queries, extra_definitions)",
				    k ? k : "?");
	}
	if ((v = get_key(c, root, "keyspace")) == NULL)
		return perr(c, NULL, "no keyspace: (the keyspace the table lives in)");
	if ((ret = dup_scalar(c, v, "keyspace", &p->keyspace)) < 0)
		return ret;
	if ((v = get_key(c, root, "keyspace_definition")) != NULL &&
	    (ret = dup_scalar(c, v, "keyspace_definition", &p->keyspace_definition)) < 0)
		return ret;
	if ((v = get_key(c, root, "table")) == NULL)
		return perr(c, NULL, "no table: (the table to stress)");
	if ((ret = dup_scalar(c, v, "table", &p->table)) < 0)
		return ret;
	if ((v = get_key(c, root, "table_definition")) == NULL)
		return perr(c, NULL,
			    "no table_definition: shardmark reads the columns from the CREATE "
			    "TABLE, not from the server's schema: give table_definition:");
	if ((ret = dup_scalar(c, v, "table_definition", &p->table_definition)) < 0)
		return ret;
	if ((v = get_key(c, root, "extra_definitions")) != NULL) {
		yaml_node_item_t *it;

		if (v->type != YAML_SEQUENCE_NODE)
			return perr(c, v, "extra_definitions must be a list of CQL statements");
		for (it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
			if (p->n_extra == SM_ARRAY_SIZE(p->extra_definitions))
				return perr(c, v, "more than 8 extra_definitions");
			if ((ret = dup_scalar(c, node(c, *it), "extra_definitions",
					      &p->extra_definitions[p->n_extra++])) < 0)
				return ret;
		}
	}
	if (p->keyspace_definition != NULL && (ret = split_keyspace_definition(c)) < 0)
		return ret;
	for (i = 0; i < p->n_ks_more; i++)
		if (is_create_type(p->ks_more[i]) && (ret = parse_udt(c, p->ks_more[i])) < 0)
			return ret;
	for (i = 0; i < p->n_extra; i++)
		if (is_create_type(p->extra_definitions[i]) &&
		    (ret = parse_udt(c, p->extra_definitions[i])) < 0)
			return ret;
	if ((ret = parse_table(c)) < 0)
		return ret;
	set_defaults(p);
	if ((v = get_key(c, root, "columnspec")) != NULL && (ret = parse_columnspec(c, v)) < 0)
		return ret;
	if ((v = get_key(c, root, "insert")) != NULL && (ret = parse_insert(c, v)) < 0)
		return ret;
	if ((v = get_key(c, root, "queries")) != NULL && (ret = parse_queries(c, v, false)) < 0)
		return ret;
	if ((v = get_key(c, root, "token_range_queries")) != NULL &&
	    (ret = parse_queries(c, v, true)) < 0)
		return ret;
	for (i = 0; i < p->nqueries; i++)
		if ((ret = sm_stress_profile_bind(p, &p->queries[i], c->err, c->errlen)) < 0)
			return ret;
	return 0;
}

int
sm_stress_profile_parse(const char *name, const char *text, size_t len,
			struct sm_stress_profile *p, char *err, size_t errlen)
{
	struct pctx c = { .name = name, .p = p, .err = err, .errlen = errlen };
	yaml_parser_t parser;
	yaml_document_t doc;
	int ret;

	memset(p, 0, sizeof(*p));
	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		snprintf(err, errlen, "profile %s, line %zu: not valid YAML: %s", name,
			 (size_t)parser.problem_mark.line + 1,
			 parser.problem ? parser.problem : "parse error");
		yaml_parser_delete(&parser);
		return -EINVAL;
	}
	c.doc = &doc;
	ret = walk(&c, yaml_document_get_root_node(&doc));
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	if (ret < 0)
		sm_stress_profile_free(p);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "profile %s: out of memory", name);
	return ret;
}

int
sm_stress_profile_load(const char *path, struct sm_stress_profile *p, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;
	int ret;

	memset(p, 0, sizeof(*p));
	if (f == NULL) {
		ret = -errno;
		snprintf(err, errlen, "user: cannot read profile=%s: %s", path, strerror(-ret));
		return ret;
	}
	do {
		if (len + 4096 > cap) {
			char *nb = sm_realloc(buf, cap = cap ? cap * 2 : 8192);

			if (nb == NULL) {
				sm_free(buf);
				fclose(f);
				return -ENOMEM;
			}
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n > 0 && len < (64u << 20));
	fclose(f);
	ret = sm_stress_profile_parse(path, buf ? buf : "", len, p, err, errlen);
	sm_free(buf);
	if (ret == 0 && (p->path = sm_strdup(path)) == NULL) {
		sm_stress_profile_free(p);
		return -ENOMEM;
	}
	return ret;
}

void
sm_stress_profile_free(struct sm_stress_profile *p)
{
	unsigned i;

	sm_free(p->path);
	sm_free(p->keyspace);
	sm_free(p->keyspace_definition);
	sm_free(p->table);
	sm_free(p->table_definition);
	sm_free(p->insert.condition);
	for (i = 0; i < p->n_extra; i++)
		sm_free(p->extra_definitions[i]);
	for (i = 0; i < p->n_ks_more; i++)
		sm_free(p->ks_more[i]);
	for (i = 0; i < p->nudts; i++)
		sm_type_free(p->udts[i]);
	for (i = 0; i < p->ncols; i++)
		sm_type_free(p->cols[i].type);
	for (i = 0; i < p->nqueries; i++)
		sm_free(p->queries[i].cql);
	for (i = 0; i < p->ntrq; i++)
		sm_free(p->trq[i].columns);
	memset(p, 0, sizeof(*p));
}

int
sm_stress_profile_ops(const struct sm_stress_profile *p, const char *spec, double *weight,
		      int *what, unsigned cap, char *err, size_t errlen)
{
	const char *part = spec;
	unsigned n = 0, i;

	while (*part != '\0') {
		const char *comma = strchr(part, ','), *eq;
		size_t len = comma ? (size_t)(comma - part) : strlen(part), nlen;
		char name[SM_STRESS_PROFILE_NAME_MAX], num[32], *end;
		double w;
		int q;

		eq = memchr(part, '=', len);
		nlen = eq ? (size_t)(eq - part) : 0;
		if (eq == NULL || nlen == 0 || nlen >= sizeof(name) ||
		    len - nlen - 1 >= sizeof(num) || len - nlen - 1 == 0) {
			snprintf(err, errlen,
				 "user: ops(%s): write each operation as name=weight, e.g. "
				 "ops(insert=1,q1=3)",
				 spec);
			return -EINVAL;
		}
		memcpy(name, part, nlen);
		name[nlen] = '\0';
		memcpy(num, eq + 1, len - nlen - 1);
		num[len - nlen - 1] = '\0';
		w = strtod(num, &end);
		if (*end != '\0' || !(w >= 0)) {
			snprintf(err, errlen, "user: ops(): '%s=%s' needs a non-negative weight",
				 name, num);
			return -EINVAL;
		}
		if (strcasecmp(name, "insert") == 0) {
			q = -1;
		} else if ((q = sm_stress_profile_query(p, name)) < 0) {
			for (i = 0; i < p->ntrq; i++)
				if (strcasecmp(p->trq[i].name, name) == 0)
					break;
			if (i == p->ntrq) {
				snprintf(err, errlen,
					 "user: ops(): no query named '%s' in the profile (it has "
					 "insert, its queries: and its token_range_queries: entries)",
					 name);
				return -EINVAL;
			}
			q = SM_STRESS_PROFILE_TRQ(i);
		}
		for (i = 0; i < n; i++)
			if (what[i] == q) {
				snprintf(err, errlen, "user: ops(): '%s' is given twice", name);
				return -EINVAL;
			}
		if (n == cap) {
			snprintf(err, errlen, "user: ops(): more than %u operations", cap);
			return -EINVAL;
		}
		weight[n] = w;
		what[n++] = q;
		part += len + (comma ? 1 : 0);
	}
	if (n == 0) {
		snprintf(err, errlen, "user: ops() is empty: e.g. ops(insert=1,q1=3)");
		return -EINVAL;
	}
	return (int)n;
}

const char *
sm_stress_profile_op_name(const struct sm_stress_profile *p, int what)
{
	if (what < 0)
		return "insert";
	if (what >= SM_STRESS_PROFILE_TRQ(0))
		return p->trq[what - SM_STRESS_PROFILE_TRQ(0)].name;
	return p->queries[what].name;
}

const char *
sm_stress_profile_setup_statement(const struct sm_stress_profile *p, unsigned i)
{
	unsigned k;

	/* the keyspace's statements, the user types, the table, the other definitions */
	if (i < p->n_ks_more)
		return p->ks_more[i];
	i -= p->n_ks_more;
	for (k = 0; k < p->n_extra; k++)
		if (is_create_type(p->extra_definitions[k]) && i-- == 0)
			return p->extra_definitions[k];
	if (i-- == 0)
		return p->table_definition;
	for (k = 0; k < p->n_extra; k++)
		if (!is_create_type(p->extra_definitions[k]) && i-- == 0)
			return p->extra_definitions[k];
	return NULL;
}

int
sm_stress_profile_insert_option(struct sm_stress_profile *p, const char *tok, char *err,
				size_t errlen)
{
	const char *eq = strchr(tok, '=');
	char why[300];
	size_t n = eq ? (size_t)(eq - tok) : 0;

	if (eq != NULL && n == 10 && strncasecmp(tok, "partitions", n) == 0) {
		if (sm_stress_xdist_parse(eq + 1, &p->insert.partitions, why, sizeof(why)) < 0)
			goto bad;
		return 0;
	}
	if (eq != NULL && n == 12 && strncasecmp(tok, "select-ratio", n) == 0) {
		if (sm_stress_ratio_parse(eq + 1, &p->insert.select, why, sizeof(why)) < 0)
			goto bad;
		return 0;
	}
	if (eq != NULL && n == 20 && strncasecmp(tok, "row-population-ratio", n) == 0) {
		if (sm_stress_ratio_parse(eq + 1, &p->insert.row_population, why, sizeof(why)) < 0)
			goto bad;
		return 0;
	}
	if (eq != NULL && n == 9 && strncasecmp(tok, "batchtype", n) == 0) {
		if (strcasecmp(eq + 1, "LOGGED") == 0)
			p->insert.batch = SM_STRESS_BATCH_LOGGED;
		else if (strcasecmp(eq + 1, "UNLOGGED") == 0)
			p->insert.batch = SM_STRESS_BATCH_UNLOGGED;
		else {
			snprintf(err, errlen, "-insert: '%s': use batchtype=LOGGED or UNLOGGED", tok);
			return -EINVAL;
		}
		return 0;
	}
	snprintf(err, errlen,
		 "-insert: '%s': use partitions=DIST, select-ratio=DIST/N, "
		 "row-population-ratio=DIST/N or batchtype=LOGGED|UNLOGGED (visits= and revisit= "
		 "are not supported by shardmark stress)",
		 tok);
	return -EINVAL;
bad:
	snprintf(err, errlen, "-insert: %s", why);
	return -EINVAL;
}
