/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DynamoDB expressions, part 1: the arena, the lexer, reserved words, token
 * helpers and syntax error messages.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sm_core.h"
#include "ddb_expr_priv.h"

/* ---- arena ---- */

void *
ddb_vec_add(struct sm_arena *a, void *arrp, unsigned *n, unsigned *cap, size_t size)
{
	return sm_arena_vec_add(a, arrp, n, cap, size);
}

/* ---- reserved words ---- */

/*
 * DynamoDB's reserved words ("Reserved words in DynamoDB", developer guide),
 * sorted. The list is not case-sensitive.
 */
/* clang-format off */
static const char *const reserved[] = {
	"ABORT", "ABSOLUTE", "ACTION", "ADD", "AFTER", "AGENT", "AGGREGATE", "ALL", "ALLOCATE",
	"ALTER", "ANALYZE", "AND", "ANY", "ARCHIVE", "ARE", "ARRAY", "AS", "ASC", "ASCII",
	"ASENSITIVE", "ASSERTION", "ASYMMETRIC", "AT", "ATOMIC", "ATTACH", "ATTRIBUTE", "AUTH",
	"AUTHORIZATION", "AUTHORIZE", "AUTO", "AVG", "BACK", "BACKUP", "BASE", "BATCH", "BEFORE",
	"BEGIN", "BETWEEN", "BIGINT", "BINARY", "BIT", "BLOB", "BLOCK", "BOOLEAN", "BOTH",
	"BREADTH", "BUCKET", "BULK", "BY", "BYTE", "CALL", "CALLED", "CALLING", "CAPACITY",
	"CASCADE", "CASCADED", "CASE", "CAST", "CATALOG", "CHAR", "CHARACTER", "CHECK", "CLASS",
	"CLOB", "CLOSE", "CLUSTER", "CLUSTERED", "CLUSTERING", "CLUSTERS", "COALESCE", "COLLATE",
	"COLLATION", "COLLECTION", "COLUMN", "COLUMNS", "COMBINE", "COMMENT", "COMMIT", "COMPACT",
	"COMPILE", "COMPRESS", "CONDITION", "CONFLICT", "CONNECT", "CONNECTION", "CONSISTENCY",
	"CONSISTENT", "CONSTRAINT", "CONSTRAINTS", "CONSTRUCTOR", "CONSUMED", "CONTINUE",
	"CONVERT", "COPY", "CORRESPONDING", "COUNT", "COUNTER", "CREATE", "CROSS", "CUBE",
	"CURRENT", "CURSOR", "CYCLE", "DATA", "DATABASE", "DATE", "DATETIME", "DAY", "DEALLOCATE",
	"DEC", "DECIMAL", "DECLARE", "DEFAULT", "DEFERRABLE", "DEFERRED", "DEFINE", "DEFINED",
	"DEFINITION", "DELETE", "DELIMITED", "DEPTH", "DEREF", "DESC", "DESCRIBE", "DESCRIPTOR",
	"DETACH", "DETERMINISTIC", "DIAGNOSTICS", "DIRECTORIES", "DISABLE", "DISCONNECT",
	"DISTINCT", "DISTRIBUTE", "DO", "DOMAIN", "DOUBLE", "DROP", "DUMP", "DURATION", "DYNAMIC",
	"EACH", "ELEMENT", "ELSE", "ELSEIF", "EMPTY", "ENABLE", "END", "EQUAL", "EQUALS", "ERROR",
	"ESCAPE", "ESCAPED", "EVAL", "EVALUATE", "EXCEEDED", "EXCEPT", "EXCEPTION", "EXCEPTIONS",
	"EXCLUSIVE", "EXEC", "EXECUTE", "EXISTS", "EXIT", "EXPLAIN", "EXPLODE", "EXPORT",
	"EXPRESSION", "EXTENDED", "EXTERNAL", "EXTRACT", "FAIL", "FALSE", "FAMILY", "FETCH",
	"FIELDS", "FILE", "FILTER", "FILTERING", "FINAL", "FINISH", "FIRST", "FIXED", "FLATTERN",
	"FLOAT", "FOR", "FORCE", "FOREIGN", "FORMAT", "FORWARD", "FOUND", "FREE", "FROM", "FULL",
	"FUNCTION", "FUNCTIONS", "GENERAL", "GENERATE", "GET", "GLOB", "GLOBAL", "GO", "GOTO",
	"GRANT", "GREATER", "GROUP", "GROUPING", "HANDLER", "HASH", "HAVE", "HAVING", "HEAP",
	"HIDDEN", "HOLD", "HOUR", "IDENTIFIED", "IDENTITY", "IF", "IGNORE", "IMMEDIATE", "IMPORT",
	"IN", "INCLUDING", "INCLUSIVE", "INCREMENT", "INCREMENTAL", "INDEX", "INDEXED", "INDEXES",
	"INDICATOR", "INFINITE", "INITIALLY", "INLINE", "INNER", "INNTER", "INOUT", "INPUT",
	"INSENSITIVE", "INSERT", "INSTEAD", "INT", "INTEGER", "INTERSECT", "INTERVAL", "INTO",
	"INVALIDATE", "IS", "ISOLATION", "ITEM", "ITEMS", "ITERATE", "JOIN", "KEY", "KEYS", "LAG",
	"LANGUAGE", "LARGE", "LAST", "LATERAL", "LEAD", "LEADING", "LEAVE", "LEFT", "LENGTH",
	"LESS", "LEVEL", "LIKE", "LIMIT", "LIMITED", "LINES", "LIST", "LOAD", "LOCAL", "LOCALTIME",
	"LOCALTIMESTAMP", "LOCATION", "LOCATOR", "LOCK", "LOCKS", "LOG", "LOGED", "LONG", "LOOP",
	"LOWER", "MAP", "MATCH", "MATERIALIZED", "MAX", "MAXLEN", "MEMBER", "MERGE", "METHOD",
	"METRICS", "MIN", "MINUS", "MINUTE", "MISSING", "MOD", "MODE", "MODIFIES", "MODIFY",
	"MODULE", "MONTH", "MULTI", "MULTISET", "NAME", "NAMES", "NATIONAL", "NATURAL", "NCHAR",
	"NCLOB", "NEW", "NEXT", "NO", "NONE", "NOT", "NULL", "NULLIF", "NUMBER", "NUMERIC",
	"OBJECT", "OF", "OFFLINE", "OFFSET", "OLD", "ON", "ONLINE", "ONLY", "OPAQUE", "OPEN",
	"OPERATOR", "OPTION", "OR", "ORDER", "ORDINALITY", "OTHER", "OTHERS", "OUT", "OUTER",
	"OUTPUT", "OVER", "OVERLAPS", "OVERRIDE", "OWNER", "PAD", "PARALLEL", "PARAMETER",
	"PARAMETERS", "PARTIAL", "PARTITION", "PARTITIONED", "PARTITIONS", "PATH", "PERCENT",
	"PERCENTILE", "PERMISSION", "PERMISSIONS", "PIPE", "PIPELINED", "PLAN", "POOL", "POSITION",
	"PRECISION", "PREPARE", "PRESERVE", "PRIMARY", "PRIOR", "PRIVATE", "PRIVILEGES",
	"PROCEDURE", "PROCESSED", "PROJECT", "PROJECTION", "PROPERTY", "PROVISIONING", "PUBLIC",
	"PUT", "QUERY", "QUIT", "QUORUM", "RAISE", "RANDOM", "RANGE", "RANK", "RAW", "READ",
	"READS", "REAL", "REBUILD", "RECORD", "RECURSIVE", "REDUCE", "REF", "REFERENCE",
	"REFERENCES", "REFERENCING", "REGEXP", "REGION", "REINDEX", "RELATIVE", "RELEASE",
	"REMAINDER", "RENAME", "REPEAT", "REPLACE", "REQUEST", "RESET", "RESIGNAL", "RESOURCE",
	"RESPONSE", "RESTORE", "RESTRICT", "RESULT", "RETURN", "RETURNING", "RETURNS", "REVERSE",
	"REVOKE", "RIGHT", "ROLE", "ROLES", "ROLLBACK", "ROLLUP", "ROUTINE", "ROW", "ROWS", "RULE",
	"RULES", "SAMPLE", "SATISFIES", "SAVE", "SAVEPOINT", "SCAN", "SCHEMA", "SCOPE", "SCROLL",
	"SEARCH", "SECOND", "SECTION", "SEGMENT", "SEGMENTS", "SELECT", "SELF", "SEMI",
	"SENSITIVE", "SEPARATE", "SEQUENCE", "SERIALIZABLE", "SESSION", "SET", "SETS", "SHARD",
	"SHARE", "SHARED", "SHORT", "SHOW", "SIGNAL", "SIMILAR", "SIZE", "SKEWED", "SMALLINT",
	"SNAPSHOT", "SOME", "SOURCE", "SPACE", "SPACES", "SPARSE", "SPECIFIC", "SPECIFICTYPE",
	"SPLIT", "SQL", "SQLCODE", "SQLERROR", "SQLEXCEPTION", "SQLSTATE", "SQLWARNING", "START",
	"STATE", "STATIC", "STATUS", "STORAGE", "STORE", "STORED", "STREAM", "STRING", "STRUCT",
	"STYLE", "SUB", "SUBMULTISET", "SUBPARTITION", "SUBSTRING", "SUBTYPE", "SUM", "SUPER",
	"SYMMETRIC", "SYNONYM", "SYSTEM", "TABLE", "TABLESAMPLE", "TEMP", "TEMPORARY",
	"TERMINATED", "TEXT", "THAN", "THEN", "THROUGHPUT", "TIME", "TIMESTAMP", "TIMEZONE",
	"TINYINT", "TO", "TOKEN", "TOTAL", "TOUCH", "TRAILING", "TRANSACTION", "TRANSFORM",
	"TRANSLATE", "TRANSLATION", "TREAT", "TRIGGER", "TRIM", "TRUE", "TRUNCATE", "TTL", "TUPLE",
	"TYPE", "UNDER", "UNDO", "UNION", "UNIQUE", "UNIT", "UNKNOWN", "UNLOGGED", "UNNEST",
	"UNPROCESSED", "UNSIGNED", "UNTIL", "UPDATE", "UPPER", "URL", "USAGE", "USE", "USER",
	"USERS", "USING", "UUID", "VACUUM", "VALUE", "VALUED", "VALUES", "VARCHAR", "VARIABLE",
	"VARIANCE", "VARINT", "VARYING", "VIEW", "VIEWS", "VIRTUAL", "VOID", "WAIT", "WHEN",
	"WHENEVER", "WHERE", "WHILE", "WINDOW", "WITH", "WITHIN", "WITHOUT", "WORK", "WRAPPED",
	"WRITE", "YEAR", "ZONE",
};
/* clang-format on */

/*
 * Every attribute name of every expression is looked up here (about five a
 * write of perf-simple-query's UpdateItem): a hash set of the words, filled
 * before main(), costs a hash of the name and one compare, where a bsearch
 * of the 573 words took ten strcmp() calls (about 450 instructions a name).
 */
#define RESERVED_SLOTS 2048 /* a power of two, over three times the words */
static uint16_t reserved_slot[RESERVED_SLOTS]; /* index + 1 into reserved[]; 0 empty */
static uint8_t reserved_len[SM_ARRAY_SIZE(reserved)];

/* FNV-1a of the word as upper case (the list is), which it writes to @up */
static inline uint32_t
word_hash(const char *w, size_t len, char *up)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < len; i++) {
		char c = w[i];

		c = (c >= 'a' && c <= 'z') ? (char)(c - 'a' + 'A') : c;
		if (up != NULL)
			up[i] = c;
		h = (h ^ (uint8_t)c) * 16777619u;
	}
	return h;
}

static void __attribute__((constructor))
reserved_set_fill(void)
{
	size_t i;

	_Static_assert(SM_ARRAY_SIZE(reserved) < RESERVED_SLOTS / 3, "the set stays sparse");
	for (i = 0; i < SM_ARRAY_SIZE(reserved); i++) {
		size_t len = strlen(reserved[i]);
		uint32_t at = word_hash(reserved[i], len, NULL) & (RESERVED_SLOTS - 1);

		while (reserved_slot[at] != 0)
			at = (at + 1) & (RESERVED_SLOTS - 1);
		reserved_slot[at] = (uint16_t)(i + 1);
		reserved_len[i] = (uint8_t)len;
	}
}

bool
sm_ddb_is_reserved(const char *word, size_t len)
{
	char up[16];
	uint32_t at;
	unsigned k;

	if (len == 0 || len >= sizeof(up))
		return false;
	at = word_hash(word, len, up) & (RESERVED_SLOTS - 1);
	while ((k = reserved_slot[at]) != 0) {
		if (reserved_len[k - 1] == len && memcmp(reserved[k - 1], up, len) == 0)
			return true;
		at = (at + 1) & (RESERVED_SLOTS - 1);
	}
	return false;
}

/* ---- lexer ---- */

static bool
is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool
is_word(char c)
{
	return is_alpha(c) || is_digit(c) || c == '_';
}

static bool
word_is(const char *s, size_t n, const char *kw)
{
	size_t i;

	if (strlen(kw) != n)
		return false;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (c >= 'a' && c <= 'z')
			c = (char)(c - 'a' + 'A');
		if (c != kw[i])
			return false;
	}
	return true;
}

static enum ddb_tok_type
keyword(const char *s, size_t n)
{
	static const struct {
		const char *kw;
		enum ddb_tok_type type;
	} kws[] = {
		{ "AND", DT_AND },	   { "OR", DT_OR },   { "NOT", DT_NOT },
		{ "BETWEEN", DT_BETWEEN }, { "IN", DT_IN },   { "SET", DT_SET },
		{ "REMOVE", DT_REMOVE },   { "ADD", DT_ADD }, { "DELETE", DT_DELETE },
	};
	size_t i;

	if (n > 7)
		return DT_ID;
	for (i = 0; i < sizeof(kws) / sizeof(kws[0]); i++)
		if (word_is(s, n, kws[i].kw))
			return kws[i].type;
	return DT_ID;
}

void
ddb_lex(struct ddb_parser *p)
{
	const char *s = p->text;
	size_t n = p->len, i = 0, j;
	enum ddb_tok_type type;

	p->ntoks = 0;
	while (i < n) {
		char c = s[i];

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			i++;
			continue;
		}
		j = i + 1;
		if (is_alpha(c)) {
			while (j < n && is_word(s[j]))
				j++;
			type = keyword(s + i, j - i);
		} else if (c == '#' || c == ':') {
			while (j < n && is_word(s[j]))
				j++;
			type = j == i + 1 ? DT_BAD : c == '#' ? DT_NAME : DT_VALUE;
		} else if (is_digit(c)) {
			/* "007" is three tokens, as DynamoDB reads it */
			if (c != '0')
				while (j < n && is_digit(s[j]))
					j++;
			type = DT_INT;
		} else if (c == '<' && j < n && s[j] == '>') {
			type = DT_NE;
			j++;
		} else if (c == '<' && j < n && s[j] == '=') {
			type = DT_LE;
			j++;
		} else if (c == '>' && j < n && s[j] == '=') {
			type = DT_GE;
			j++;
		} else {
			switch (c) {
			case '=':
				type = DT_EQ;
				break;
			case '<':
				type = DT_LT;
				break;
			case '>':
				type = DT_GT;
				break;
			case '(':
				type = DT_LPAREN;
				break;
			case ')':
				type = DT_RPAREN;
				break;
			case '[':
				type = DT_LBRACKET;
				break;
			case ']':
				type = DT_RBRACKET;
				break;
			case ',':
				type = DT_COMMA;
				break;
			case '.':
				type = DT_DOT;
				break;
			case '+':
				type = DT_PLUS;
				break;
			case '-':
				type = DT_MINUS;
				break;
			default:
				/* One character, all of a UTF-8 sequence, as DynamoDB shows it. */
				type = DT_BAD;
				if (((unsigned char)c & 0xc0) == 0xc0)
					while (j < n && ((unsigned char)s[j] & 0xc0) == 0x80)
						j++;
				break;
			}
		}
		p->toks[p->ntoks].type = type;
		p->toks[p->ntoks].off = (uint32_t)i;
		p->toks[p->ntoks].len = (uint32_t)(j - i);
		p->ntoks++;
		i = j;
	}
	p->toks[p->ntoks].type = DT_EOF;
	p->toks[p->ntoks].off = (uint32_t)n;
	p->toks[p->ntoks].len = 0;
	p->ntoks++;
}

/* ---- tokens ---- */

const struct ddb_tok *
ddb_peek(const struct ddb_parser *p, unsigned k)
{
	unsigned i = p->pos + k;

	if (i >= p->ntoks)
		i = p->ntoks - 1;
	return &p->toks[i];
}

bool
ddb_accept(struct ddb_parser *p, enum ddb_tok_type type)
{
	if (ddb_peek(p, 0)->type != type)
		return false;
	p->pos++;
	return true;
}

int
ddb_expect(struct ddb_parser *p, enum ddb_tok_type type)
{
	if (ddb_accept(p, type))
		return 0;
	return ddb_syntax_fail(p);
}

char *
ddb_tok_dup(struct ddb_parser *p, const struct ddb_tok *t)
{
	char *d = sm_arena_alloc(p->arena, (size_t)t->len + 1);

	if (d == NULL)
		return NULL;
	memcpy(d, p->text + t->off, t->len);
	d[t->len] = '\0';
	return d;
}

/* ---- errors ---- */

int
ddb_errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

int
ddb_syntax_fail(struct ddb_parser *p)
{
	p->fail_at = p->pos < p->ntoks ? p->pos : p->ntoks - 1;
	return -EBADMSG;
}

int
ddb_syntax_message(struct ddb_parser *p)
{
	unsigned at = p->fail_at;
	const struct ddb_tok *t = &p->toks[at];
	size_t from, to;

	/* DynamoDB quotes the text from the token before to the token after. */
	from = at > 0 ? p->toks[at - 1].off : 0;
	to = at + 1 < p->ntoks ? (size_t)p->toks[at + 1].off + p->toks[at + 1].len
			       : (size_t)t->off + t->len;
	if (t->type == DT_EOF)
		return ddb_errf(p->err, p->errlen,
				"Invalid %s: Syntax error; token: \"<EOF>\", near: \"%.*s\"",
				sm_ddb_expr_kind_name(p->kind), (int)(to - from), p->text + from);
	return ddb_errf(p->err, p->errlen,
			"Invalid %s: Syntax error; token: \"%.*s\", near: \"%.*s\"",
			sm_ddb_expr_kind_name(p->kind), (int)t->len, p->text + t->off,
			(int)(to - from), p->text + from);
}
