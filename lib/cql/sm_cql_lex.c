/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CQL parser, part 1: the arena, the lexer, token helpers and error messages.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sm_core.h"
#include "cql_parse_priv.h"

#define CQL_ALIGN 16u

/* ---- arena ---- */

void *
cql_vec_add(struct cql_parser *p, void *arrp, unsigned *n, unsigned *cap, size_t size)
{
	return sm_arena_vec_add(p->arena, arrp, n, cap, size);
}

char *
cql_strndup(struct cql_parser *p, const char *s, size_t n)
{
	return sm_arena_strndup(p->arena, s, n);
}

/* ---- errors ---- */

static void
put_token(const struct cql_parser *p, const struct cql_tok *t, char *buf, size_t cap)
{
	size_t n = t->len, i, o = 0;

	if (t->type == T_EOF) {
		snprintf(buf, cap, "<EOF>");
		return;
	}
	/* Long tokens (a 1 MB blob) are cut: the position already finds them. */
	if (n > 48)
		n = 48;
	for (i = 0; i < n && o + 2 < cap; i++) {
		unsigned char ch = (unsigned char)p->text[t->off + i];

		buf[o++] = (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
	}
	if (n < t->len && o + 5 < cap) {
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o] = '\0';
}

int
cql_error_at(struct cql_parser *p, const struct cql_tok *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (p->errlen == 0)
		return -EBADMSG;
	n = snprintf(p->err, p->errlen, "line %u:%u ", t->line, t->col);
	if (n >= 0 && (size_t)n < p->errlen) {
		va_start(ap, fmt);
		vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EBADMSG;
}

int
cql_expect_error(struct cql_parser *p, const char *what)
{
	const struct cql_tok *t = cql_peek(p, 0);
	char tok[64];

	put_token(p, t, tok, sizeof(tok));
	return cql_error_at(p, t, "mismatched input '%s' expecting %s", tok, what);
}

int
cql_syntax_error(struct cql_parser *p)
{
	const struct cql_tok *t = cql_peek(p, 0);
	char tok[64];

	put_token(p, t, tok, sizeof(tok));
	return cql_error_at(p, t, "no viable alternative at input '%s'", tok);
}

int
cql_fail(struct cql_parser *p, int rc, const char *fmt, ...)
{
	va_list ap;

	if (p->errlen) {
		va_start(ap, fmt);
		vsnprintf(p->err, p->errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

int
cql_unsupported(struct cql_parser *p, const char *what)
{
	return cql_fail(p, -ENOTSUP, "not supported by shardmark: %s", what);
}

/* ---- token access ---- */

const struct cql_tok *
cql_peek(const struct cql_parser *p, unsigned k)
{
	unsigned i = p->pos + k;

	if (i >= p->ntoks)
		i = p->ntoks - 1; /* the T_EOF */
	return &p->toks[i];
}

bool
cql_tok_is_kw(const struct cql_parser *p, const struct cql_tok *t, const char *kw)
{
	size_t n = strlen(kw);

	return t->type == T_IDENT && t->len == n && strncasecmp(p->text + t->off, kw, n) == 0;
}

bool
cql_tok_is_punct(const struct cql_parser *p, const struct cql_tok *t, const char *s)
{
	size_t n = strlen(s);

	return t->type == T_PUNCT && t->len == n && memcmp(p->text + t->off, s, n) == 0;
}

bool
cql_accept_kw(struct cql_parser *p, const char *kw)
{
	if (!cql_tok_is_kw(p, cql_peek(p, 0), kw))
		return false;
	p->pos++;
	return true;
}

bool
cql_accept_punct(struct cql_parser *p, const char *s)
{
	if (!cql_tok_is_punct(p, cql_peek(p, 0), s))
		return false;
	p->pos++;
	return true;
}

int
cql_expect_kw(struct cql_parser *p, const char *kw)
{
	char up[32];
	size_t i;

	if (cql_accept_kw(p, kw))
		return 0;
	/* Cassandra names keywords K_FROM in its messages. */
	for (i = 0; kw[i] != '\0' && i + 1 < sizeof(up); i++)
		up[i] = (char)toupper((unsigned char)kw[i]);
	up[i] = '\0';
	{
		char what[40];

		snprintf(what, sizeof(what), "K_%s", up);
		return cql_expect_error(p, what);
	}
}

int
cql_expect_punct(struct cql_parser *p, const char *s)
{
	char what[8];

	if (cql_accept_punct(p, s))
		return 0;
	snprintf(what, sizeof(what), "'%s'", s);
	return cql_expect_error(p, what);
}

char *
cql_tok_string(struct cql_parser *p, const struct cql_tok *t, uint32_t *len)
{
	const char *s = p->text + t->off;
	char *d;
	uint32_t i, o = 0;

	if (t->len >= 4 && s[0] == '$') {
		*len = t->len - 4;
		return cql_strndup(p, s + 2, t->len - 4);
	}
	d = sm_arena_alloc(p->arena, t->len);
	if (d == NULL)
		return NULL;
	for (i = 1; i + 1 < t->len; i++) {
		d[o++] = s[i];
		if (s[i] == '\'')
			i++; /* '' stands for one ' */
	}
	d[o] = '\0';
	*len = o;
	return d;
}

/*
 * Cassandra's reserved keywords (ReservedKeywords.java): these cannot name
 * anything unless quoted. Sorted for bsearch.
 */
static const char *const reserved[] = {
	"add",	    "allow",	"alter",   "and",	   "apply",	  "asc",    "authorize",
	"batch",    "begin",	"by",	   "columnfamily", "create",	  "delete", "desc",
	"describe", "drop",	"entries", "execute",	   "from",	  "full",   "grant",
	"if",	    "in",	"index",   "infinity",	   "insert",	  "into",   "is",
	"keyspace", "limit",	"modify",  "nan",	   "norecursive", "not",    "null",
	"of",	    "on",	"or",	   "order",	   "primary",	  "rename", "replace",
	"revoke",   "schema",	"select",  "set",	   "table",	  "to",	    "token",
	"truncate", "unlogged", "update",  "use",	   "using",	  "view",   "where",
	"with",
};

static int
cmp_kw(const void *a, const void *b)
{
	return strcmp(a, *(const char *const *)b);
}

static bool
is_reserved(const struct cql_parser *p, const struct cql_tok *t)
{
	char low[16];
	uint32_t i;

	if (t->len >= sizeof(low))
		return false;
	for (i = 0; i < t->len; i++)
		low[i] = (char)tolower((unsigned char)p->text[t->off + i]);
	low[i] = '\0';
	return bsearch(low, reserved, sizeof(reserved) / sizeof(reserved[0]), sizeof(reserved[0]),
		       cmp_kw) != NULL;
}

bool
cql_at_ident(const struct cql_parser *p)
{
	const struct cql_tok *t = cql_peek(p, 0);

	return t->type == T_QIDENT || (t->type == T_IDENT && !is_reserved(p, t));
}

int
cql_ident(struct cql_parser *p, const char **out)
{
	const struct cql_tok *t = cql_peek(p, 0);
	const char *s = p->text + t->off;
	char *d;
	uint32_t i, o = 0;

	if (!cql_at_ident(p))
		return t->type == T_EOF ? cql_expect_error(p, "IDENT") : cql_syntax_error(p);
	d = sm_arena_alloc(p->arena, t->len + 1);
	if (d == NULL)
		return -ENOMEM;
	if (t->type == T_IDENT) {
		for (i = 0; i < t->len; i++)
			d[o++] = (char)tolower((unsigned char)s[i]);
	} else {
		for (i = 1; i + 1 < t->len; i++) {
			d[o++] = s[i];
			if (s[i] == '"')
				i++; /* "" stands for one " */
		}
		/* Names are C strings here: "a\0b" would become a. ScyllaDB refuses such
		 * keyspace and table names (create_keyspace_statement.cc: not \w+) and
		 * keeps column names whole, which shardmark cannot: refuse them all. */
		if (memchr(d, '\0', o) != NULL) {
			char shown[64];
			size_t k = 0;

			for (i = 0; i < o && k + 3 < sizeof(shown); i++) {
				if (d[i] == '\0') {
					shown[k++] = '\\';
					shown[k++] = '0';
				} else {
					shown[k++] = d[i];
				}
			}
			shown[k] = '\0';
			return cql_fail(p, -EINVAL,
					"Invalid name \"%s\": a quoted name may not contain a NUL "
					"character (U+0000)",
					shown);
		}
	}
	d[o] = '\0';
	p->pos++;
	*out = d;
	return 0;
}

int
cql_qname(struct cql_parser *p, struct sm_cql_qname *out)
{
	const char *a;
	int rc;

	rc = cql_ident(p, &a);
	if (rc < 0)
		return rc;
	out->ks = NULL;
	out->name = a;
	if (cql_accept_punct(p, ".")) {
		out->ks = a;
		return cql_ident(p, &out->name);
	}
	return 0;
}

int
cql_func_name(struct cql_parser *p, struct sm_cql_qname *out)
{
	const struct cql_tok *t = cql_peek(p, 0);
	char *d;
	uint32_t i;

	if (t->type != T_IDENT || !cql_tok_is_punct(p, cql_peek(p, 1), "("))
		return cql_qname(p, out);
	/* token(), and other reserved words, name functions too */
	d = sm_arena_alloc(p->arena, t->len + 1);
	if (d == NULL)
		return -ENOMEM;
	for (i = 0; i < t->len; i++)
		d[i] = (char)tolower((unsigned char)p->text[t->off + i]);
	p->pos++;
	out->ks = NULL;
	out->name = d;
	return 0;
}

/* ---- lexer ---- */

static bool
is_hex(char c)
{
	return isxdigit((unsigned char)c) != 0;
}

static bool
is_ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* Length of a uuid at @s (8-4-4-4-12 hex digits, not followed by an identifier char), or 0. */
static size_t
uuid_len(const char *s, size_t left)
{
	static const unsigned groups[] = { 8, 4, 4, 4, 12 };
	size_t i = 0;
	unsigned g, k;

	for (g = 0; g < 5; g++) {
		if (g > 0) {
			if (i >= left || s[i] != '-')
				return 0;
			i++;
		}
		for (k = 0; k < groups[g]; k++, i++)
			if (i >= left || !is_hex(s[i]))
				return 0;
	}
	if (i < left && is_ident_char(s[i]))
		return 0;
	return i;
}

/* Length of an ISO 8601 alternative duration P0001-02-03T04:05:06 at @s, or 0. */
static size_t
iso_alt_len(const char *s, size_t left)
{
	static const char pat[] = "P####-##-##T##:##:##";
	size_t i;

	if (left < sizeof(pat) - 1)
		return 0;
	for (i = 0; i < sizeof(pat) - 1; i++) {
		if (pat[i] == '#' ? !isdigit((unsigned char)s[i])
				  : toupper((unsigned char)s[i]) != pat[i])
			return 0;
	}
	if (i < left && is_ident_char(s[i]))
		return 0;
	return i;
}

/* True for an ISO 8601 duration P[nY][nM][nD][T[nH][nM][nS]] or PnW, as one identifier. */
static bool
is_iso_duration(const char *s, size_t n)
{
	size_t i = 1;
	bool digits = false;

	if (n < 3 || (s[0] != 'P' && s[0] != 'p'))
		return false;
	while (i < n) {
		if (isdigit((unsigned char)s[i])) {
			digits = true;
		} else if (s[i] == 'T' || s[i] == 't') {
			if (digits)
				return false;
		} else if (!digits) {
			return false;
		} else {
			digits = false;
		}
		i++;
	}
	return !digits && isdigit((unsigned char)s[n - 2]);
}

/*
 * The character column of byte @off on the line that starts at @line_start.
 * Tokens come in order, so the count resumes where the last one stopped:
 * rescanning the line for each token made a line of n tokens cost n^2.
 */
struct col_cursor {
	size_t line_start;
	size_t off;
	uint32_t col;
};

static uint32_t
column_at(const struct cql_parser *p, struct col_cursor *c, size_t line_start, size_t off)
{
	size_t i;

	if (c->line_start != line_start || c->off > off) {
		c->line_start = line_start;
		c->off = line_start;
		c->col = 0;
	}
	/* Columns count characters, not bytes: skip UTF-8 continuation bytes. */
	for (i = c->off; i < off; i++)
		if (((unsigned char)p->text[i] & 0xc0) != 0x80)
			c->col++;
	c->off = off;
	return c->col;
}

static int
push_tok(struct cql_parser *p, unsigned *cap, struct col_cursor *cc, enum cql_tok_type type,
	 size_t off, size_t len, uint32_t line, size_t line_start)
{
	struct cql_tok *t;

	if (p->ntoks == *cap) {
		unsigned ncap = *cap * 2;
		struct cql_tok *n = sm_realloc(p->toks, ncap * sizeof(*n));

		if (n == NULL)
			return -ENOMEM;
		p->toks = n;
		*cap = ncap;
	}
	t = &p->toks[p->ntoks++];
	t->type = type;
	t->off = (uint32_t)off;
	t->len = (uint32_t)len;
	t->line = line;
	t->col = column_at(p, cc, line_start, off);
	return 0;
}

static int
lex_error(struct cql_parser *p, size_t off, uint32_t line, size_t line_start, const char *msg)
{
	struct cql_tok t = { .type = T_PUNCT, .off = (uint32_t)off, .line = line };
	struct col_cursor cc = { 0 };

	t.col = column_at(p, &cc, line_start, off);
	return cql_error_at(p, &t, "%s", msg);
}

/* Scan the number-like token at @i: int, float, duration. Returns its type and sets *@end. */
static enum cql_tok_type
lex_number(const char *s, size_t n, size_t i, size_t *end)
{
	enum cql_tok_type type = T_INT;

	if (s[i] == '-')
		i++;
	while (i < n && isdigit((unsigned char)s[i]))
		i++;
	if (i < n && s[i] == '.' && !(i + 1 < n && s[i + 1] == '.')) {
		type = T_FLOAT;
		i++;
		while (i < n && isdigit((unsigned char)s[i]))
			i++;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		size_t j = i + 1;

		if (j < n && (s[j] == '+' || s[j] == '-'))
			j++;
		if (j < n && isdigit((unsigned char)s[j])) {
			type = T_FLOAT;
			i = j;
			while (i < n && isdigit((unsigned char)s[i]))
				i++;
		}
	}
	if (type == T_INT && i < n &&
	    (isalpha((unsigned char)s[i]) || (unsigned char)s[i] == 0xc2)) {
		/* 1h30m, 10us, 5µs: digits and units; sm_cql_duration_parse() checks them. */
		type = T_DURATION;
		while (i < n && (is_ident_char(s[i]) || (unsigned char)s[i] == 0xc2 ||
				 (unsigned char)s[i] == 0xb5))
			i++;
	}
	*end = i;
	return type;
}

int
cql_lex(struct cql_parser *p)
{
	const char *s = p->text;
	size_t n = p->len, i = 0, j, line_start = 0;
	uint32_t line = 1;
	unsigned cap = 64;
	struct col_cursor cc = { 0 };
	enum cql_tok_type type;
	int rc;

	p->toks = sm_malloc(cap * sizeof(*p->toks));
	if (p->toks == NULL)
		return -ENOMEM;
	p->ntoks = 0;
	while (i < n) {
		char c = s[i];

		if (c == '\n') {
			line++;
			line_start = ++i;
			continue;
		}
		if (isspace((unsigned char)c)) {
			i++;
			continue;
		}
		if ((c == '-' && i + 1 < n && s[i + 1] == '-') ||
		    (c == '/' && i + 1 < n && s[i + 1] == '/')) {
			while (i < n && s[i] != '\n')
				i++;
			continue;
		}
		if (c == '/' && i + 1 < n && s[i + 1] == '*') {
			size_t start = i, ls0 = line_start;
			uint32_t l0 = line;

			for (i += 2; i < n && !(s[i] == '*' && i + 1 < n && s[i + 1] == '/'); i++) {
				if (s[i] == '\n') {
					line++;
					line_start = i + 1;
				}
			}
			if (i >= n)
				return lex_error(p, start, l0, ls0, "unterminated comment at '/*'");
			i += 2;
			continue;
		}
		type = T_PUNCT;
		j = i + 1;
		if (c == '\'' || c == '"') {
			/* A doubled quote is an escaped quote; strings may span lines. */
			uint32_t l0 = line;
			size_t ls0 = line_start;

			for (;;) {
				if (j >= n)
					return lex_error(p, i, l0, ls0,
							 c == '"' ? "unterminated quoted identifier"
								  : "unterminated string literal");
				if (s[j] == '\n') {
					line++;
					line_start = j + 1;
				}
				if (s[j] == c) {
					if (j + 1 < n && s[j + 1] == c) {
						j += 2;
						continue;
					}
					break;
				}
				j++;
			}
			j++;
			if (c == '"' && j - i == 2) {
				rc = lex_error(p, i, l0, ls0, "empty quoted identifier \"\"");
				return rc;
			}
			rc = push_tok(p, &cap, &cc, c == '"' ? T_QIDENT : T_STRING, i, j - i, l0,
				      ls0);
			if (rc < 0)
				return rc;
			i = j;
			continue;
		}
		if (c == '$' && i + 1 < n && s[i + 1] == '$') {
			uint32_t l0 = line;
			size_t ls0 = line_start;

			for (j = i + 2; j + 1 < n && !(s[j] == '$' && s[j + 1] == '$'); j++) {
				if (s[j] == '\n') {
					line++;
					line_start = j + 1;
				}
			}
			if (j + 1 >= n)
				return lex_error(p, i, l0, ls0, "unterminated string literal '$$'");
			rc = push_tok(p, &cap, &cc, T_STRING, i, j + 2 - i, l0, ls0);
			if (rc < 0)
				return rc;
			i = j + 2;
			continue;
		}
		if (is_hex(c) && (j = uuid_len(s + i, n - i)) > 0) {
			type = T_UUID;
			j += i;
		} else if (c == '0' && i + 1 < n && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
			for (j = i + 2; j < n && is_hex(s[j]); j++)
				;
			type = T_BLOB;
			if (j < n && is_ident_char(s[j]))
				return lex_error(p, i, line, line_start, "invalid blob literal");
		} else if (isdigit((unsigned char)c) ||
			   (c == '-' && i + 1 < n && isdigit((unsigned char)s[i + 1]))) {
			type = lex_number(s, n, i, &j);
		} else if (c == '.' && i + 1 < n && s[i + 1] == '.') {
			j = i + 2; /* a slice's range: m[a..b] */
		} else if (c == '.' && i + 1 < n && isdigit((unsigned char)s[i + 1])) {
			type = lex_number(s, n, i, &j); /* .5 is not CQL but give a clear token */
		} else if ((c == 'P' || c == 'p') && (j = iso_alt_len(s + i, n - i)) > 0) {
			type = T_DURATION;
			j += i;
		} else if (isalpha((unsigned char)c)) { /* IDENT: a letter first (Cql.g) */
			for (j = i + 1; j < n && is_ident_char(s[j]); j++)
				;
			type = is_iso_duration(s + i, j - i) ? T_DURATION : T_IDENT;
		} else if (c == '?') {
			type = T_QMARK;
		} else if (strchr("<>!+-", c) != NULL && i + 1 < n && s[i + 1] == '=') {
			j = i + 2;
		} else if (strchr("()[]{},;.:=<>+-*", c) == NULL || c == '\0') {
			char msg[48];

			snprintf(msg, sizeof(msg), "token recognition error at: '%c'",
				 isprint((unsigned char)c) ? c : '?');
			return lex_error(p, i, line, line_start, msg);
		}
		rc = push_tok(p, &cap, &cc, type, i, j - i, line, line_start);
		if (rc < 0)
			return rc;
		i = j;
	}
	return push_tok(p, &cap, &cc, T_EOF, n, 0, line, line_start);
}
