/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DESCRIBE's CQL text, built from system_schema rows.
 *
 * cqlsh 6 asks the server to DESCRIBE; shardmark's server (release_version
 * 3.0.8, as ScyllaDB's own before it had server-side DESCRIBE) has none, so
 * the shell writes the statements itself, in the text cqlsh 5 printed: the
 * Python driver's KeyspaceMetadata.as_cql_query() and
 * TableMetadata.export_as_string() (cassandra/metadata.py), down to its
 * quirks: two blanks before "AND durable_writes", options sorted as
 * whole strings, floats as Python's repr() ("1.0", "0.01"), and the table
 * flags deciding COMPACT STORAGE.
 */

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sm_core.h"
#include "sm_cqlsh.h"

/* cassandra.metadata.cql_keywords_reserved: names that always need quotes. */
static const char *const reserved[] = {
	"active",	"add",		"allow",	  "alter",	  "and",	  "any",
	"application",	"applications", "apply",	  "asc",	  "authentication",
	"authorize",	"batch",	"begin",	  "by",		  "call",	  "calls",
	"cluster",	"columnfamily", "columns",	  "commit",	  "config",	  "create",
	"default",	"delegation",	"delete",	  "desc",	  "describe",	  "drop",
	"entries",	"execute",	"executor",	  "executors",	  "field",	  "from",
	"full",		"grant",	"if",		  "in",		  "index",	  "indices",
	"infinity",	"insert",	"internal",	  "into",	  "is",		  "java",
	"kerberos",	"keyspace",	"ldap",		  "limit",	  "lowercasestring",
	"materialized", "mbean",	"mbeans",	  "method",	  "modify",	  "nan",
	"no",		"node",		"nodes",	  "norecursive",  "not",	  "null",
	"object",	"of",		"on",		  "or",		  "order",	  "plan",
	"primary",	"profiles",	"rebuild",	  "redact",	  "reload",	  "remote",
	"rename",	"renew",	"replace",	  "restrict",	  "revoke",	  "rows",
	"schema",	"scheme",	"schemes",	  "search",	  "select",	  "set",
	"std_err",	"std_out",	"submission",	  "table",	  "to",		  "token",
	"truncate",	"unlogged",	"unrestrict",	  "unset",	  "update",	  "use",
	"using",	"view",		"where",	  "with",	  "workpool",
};

static bool
is_reserved(const char *name)
{
	size_t i;

	for (i = 0; i < SM_ARRAY_SIZE(reserved); i++)
		if (strcasecmp(name, reserved[i]) == 0)
			return true;
	return false;
}

void
sm_cqlsh_protect_name(struct sm_cqlsh_str *out, const char *name)
{
	bool plain = name[0] >= 'a' && name[0] <= 'z' && !is_reserved(name);
	const char *p;

	for (p = name; plain && *p != '\0'; p++)
		plain = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_';
	if (plain) {
		sm_cqlsh_str_puts(out, name);
		return;
	}
	sm_cqlsh_str_putn(out, "\"", 1);
	for (p = name; *p != '\0'; p++)
		sm_cqlsh_str_puts(out, *p == '"' ? "\"\"" : (char[]){ *p, '\0' });
	sm_cqlsh_str_putn(out, "\"", 1);
}

/* ---- cells ---- */

static struct sm_bytes
cell(const struct sm_cqlsh_result *r, uint32_t row, int col)
{
	if (col < 0 || row >= r->nrows)
		return (struct sm_bytes){ NULL, 0 };
	return r->cells[(uint64_t)row * r->ncols + (uint32_t)col];
}

/* A text cell as a C string in @buf (cut at @len - 1); false when null or absent. */
static bool
cell_text(const struct sm_cqlsh_result *r, uint32_t row, int col, char *buf, size_t len)
{
	struct sm_bytes v = cell(r, row, col);

	if (v.p == NULL)
		return false;
	snprintf(buf, len, "%.*s", (int)v.len, (const char *)v.p);
	return true;
}

static bool
cell_is(const struct sm_cqlsh_result *r, uint32_t row, int col, const char *s)
{
	struct sm_bytes v = cell(r, row, col);

	return v.p != NULL && v.len == strlen(s) && memcmp(v.p, s, v.len) == 0;
}

/* A map<text, text> or set<text> cell's entries, in wire order; false when it is none. */
static bool
coll_next(struct sm_coll_iter *it, struct sm_bytes *k, struct sm_bytes *v, bool is_map)
{
	return sm_coll_next(it, k, is_map ? v : NULL, is_map);
}

static bool
set_has(struct sm_bytes set, const char *s)
{
	struct sm_coll_iter it;
	struct sm_bytes e;

	if (set.p == NULL || sm_coll_iter_init(&it, set) < 0)
		return false;
	while (coll_next(&it, &e, NULL, false))
		if (e.len == strlen(s) && memcmp(e.p, s, e.len) == 0)
			return true;
	return false;
}

/* The first byte of the type option of column @col: its id. */
static uint16_t
col_type(const struct sm_cqlsh_result *r, int col)
{
	const struct sm_bytes t = r->cols[col].type;

	return t.len >= 2 ? (uint16_t)(t.p[0] << 8 | t.p[1]) : 0;
}

/* ---- Python's repr() of a float ---- */

static void
py_float_repr(struct sm_cqlsh_str *out, double x)
{
	char buf[40], digits[24];
	int prec, exp10 = 0, nd = 0, i;
	const char *p;

	if (isnan(x)) {
		sm_cqlsh_str_puts(out, "nan");
		return;
	}
	if (isinf(x)) {
		sm_cqlsh_str_puts(out, x > 0 ? "inf" : "-inf");
		return;
	}
	/* The fewest significant digits that read back as x. */
	for (prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*e", prec - 1, x);
		if (strtod(buf, NULL) == x)
			break;
	}
	p = buf;
	if (*p == '-') {
		sm_cqlsh_str_putn(out, "-", 1);
		p++;
	}
	for (; *p != 'e' && *p != '\0'; p++)
		if (isdigit((unsigned char)*p) && nd < (int)sizeof(digits) - 1)
			digits[nd++] = *p;
	if (*p == 'e')
		exp10 = atoi(p + 1);
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	digits[nd] = '\0';
	if (exp10 < -4 || exp10 >= 16) {
		sm_cqlsh_str_putn(out, digits, 1);
		if (nd > 1) {
			sm_cqlsh_str_putn(out, ".", 1);
			sm_cqlsh_str_puts(out, digits + 1);
		}
		sm_cqlsh_str_printf(out, "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
	} else if (exp10 < 0) {
		sm_cqlsh_str_puts(out, "0.");
		for (i = -1; i > exp10; i--)
			sm_cqlsh_str_putn(out, "0", 1);
		sm_cqlsh_str_puts(out, digits);
	} else {
		for (i = 0; i <= exp10; i++)
			sm_cqlsh_str_putn(out, i < nd ? &digits[i] : "0", 1);
		sm_cqlsh_str_putn(out, ".", 1);
		sm_cqlsh_str_puts(out, nd > exp10 + 1 ? digits + exp10 + 1 : "0");
	}
}

/* ---- keyspaces ---- */

#define STRATEGY_PREFIX "org.apache.cassandra.locator."

/* The replication factor as the driver's ReplicationFactor prints it: "3", or "3/1". */
static void
put_rf(struct sm_cqlsh_str *out, struct sm_bytes v)
{
	char buf[64], *end;
	long n;

	snprintf(buf, sizeof(buf), "%.*s", (int)v.len, (const char *)v.p);
	n = strtol(buf, &end, 10);
	if (end != buf && *end == '\0')
		sm_cqlsh_str_printf(out, "%ld", n);
	else
		sm_cqlsh_str_puts(out, buf);
}

static bool
bytes_is(struct sm_bytes b, const char *s)
{
	return b.len == strlen(s) && memcmp(b.p, s, b.len) == 0;
}

/*
 * data_dictionary/keyspace_metadata.cc describe(): " AND tablets =
 * {'initial': N}". ScyllaDB prints nothing for 'initial' 0, its default
 * being tablets; shardmark's is vnodes (tablets_mode_for_new_keyspaces:
 * disabled), so {'enabled': true} keeps the text creating a tablets keyspace.
 */
static void
put_tablets(struct sm_cqlsh_str *out, const struct sm_cqlsh_result *sks)
{
	struct sm_bytes v;

	if (sks == NULL || sks->nrows == 0)
		return;
	v = cell(sks, 0, sm_cqlsh_result_col(sks, "initial_tablets"));
	if (v.p != NULL && v.len == 4 && (v.p[0] | v.p[1] | v.p[2] | v.p[3]) != 0)
		sm_cqlsh_str_printf(out, " AND tablets = {'initial': %d}",
				    (int32_t)((uint32_t)v.p[0] << 24 | (uint32_t)v.p[1] << 16 |
					      (uint32_t)v.p[2] << 8 | v.p[3]));
	else
		sm_cqlsh_str_puts(out, " AND tablets = {'enabled': true}");
}

int
sm_cqlsh_describe_keyspace(struct sm_cqlsh_str *out, const struct sm_cqlsh_result *ks,
			   uint32_t row, const struct sm_cqlsh_result *sks)
{
	struct sm_bytes repl = cell(ks, row, sm_cqlsh_result_col(ks, "replication"));
	struct sm_bytes dw = cell(ks, row, sm_cqlsh_result_col(ks, "durable_writes"));
	char name[256], cls[256] = "";
	struct sm_bytes k, v, rf = { NULL, 0 };
	const char *strategy;
	struct sm_coll_iter it;
	unsigned nopts = 0, n = 0;

	if (!cell_text(ks, row, sm_cqlsh_result_col(ks, "keyspace_name"), name, sizeof(name)))
		return -EINVAL;
	if (repl.p != NULL && sm_coll_iter_init(&it, repl) == 0)
		while (coll_next(&it, &k, &v, true)) {
			if (bytes_is(k, "class"))
				snprintf(cls, sizeof(cls), "%.*s", (int)v.len, (const char *)v.p);
			else
				nopts++;
			if (bytes_is(k, "replication_factor"))
				rf = v;
		}
	strategy = strncmp(cls, STRATEGY_PREFIX, strlen(STRATEGY_PREFIX)) == 0
			   ? cls + strlen(STRATEGY_PREFIX)
			   : cls;
	sm_cqlsh_str_puts(out, "CREATE KEYSPACE ");
	sm_cqlsh_protect_name(out, name);
	sm_cqlsh_str_puts(out, " WITH replication = ");
	if (strcmp(strategy, "SimpleStrategy") == 0 && rf.p != NULL) {
		sm_cqlsh_str_puts(out, "{'class': 'SimpleStrategy', 'replication_factor': '");
		put_rf(out, rf);
		sm_cqlsh_str_puts(out, "'}");
	} else if (strcmp(strategy, "NetworkTopologyStrategy") == 0) {
		/* Every DC, sorted (the server's map already is). */
		sm_cqlsh_str_puts(out, "{'class': 'NetworkTopologyStrategy'");
		sm_coll_iter_init(&it, repl);
		while (coll_next(&it, &k, &v, true)) {
			if (bytes_is(k, "class"))
				continue;
			sm_cqlsh_str_printf(out, ", '%.*s': '", (int)k.len, (const char *)k.p);
			put_rf(out, v);
			sm_cqlsh_str_putn(out, "'", 1);
		}
		sm_cqlsh_str_putn(out, "}", 1);
	} else if (strcmp(strategy, "LocalStrategy") != 0 && nopts > 0) {
		/* The driver's _UnknownStrategy: the dict of its options, without the class. */
		sm_cqlsh_str_putn(out, "{", 1);
		sm_coll_iter_init(&it, repl);
		while (coll_next(&it, &k, &v, true))
			if (!bytes_is(k, "class"))
				sm_cqlsh_str_printf(out, "%s'%.*s': '%.*s'", n++ ? ", " : "",
						    (int)k.len, (const char *)k.p, (int)v.len,
						    (const char *)v.p);
		sm_cqlsh_str_putn(out, "}", 1);
	} else {
		sm_cqlsh_str_printf(out, "{'class': '%s'}", strategy);
	}
	sm_cqlsh_str_printf(out, "  AND durable_writes = %s",
			    dw.p != NULL && dw.len == 1 && dw.p[0] ? "true" : "false");
	put_tablets(out, sks);
	sm_cqlsh_str_putn(out, ";", 1);
	return out->err;
}

/* ---- tables ---- */

/* system_schema.tables options the driver's SchemaParserV3 writes back. */
static const char *const table_options[] = {
	"bloom_filter_fp_chance",
	"caching",
	"cdc",
	"comment",
	"compaction",
	"compression",
	"crc_check_chance",
	"dclocal_read_repair_chance",
	"default_time_to_live",
	"gc_grace_seconds",
	"max_index_interval",
	"memtable_flush_period_in_ms",
	"min_index_interval",
	"read_repair_chance",
	"speculative_retry",
};

/* "name = value" as the driver's _make_option_strings() writes it; false for a null value. */
static bool
option_string(struct sm_cqlsh_str *s, const struct sm_cqlsh_result *t, uint32_t row, int col,
	      const char *name)
{
	struct sm_bytes v = cell(t, row, col), k, e;
	uint16_t id = col_type(t, col);
	struct sm_coll_iter it;
	unsigned n = 0;
	const uint8_t *p;

	if (v.p == NULL && strcmp(name, "comment") != 0)
		return false;
	sm_cqlsh_str_printf(s, "%s = ", name);
	if (id == 0x0021) {
		/* compaction, compression, caching: {'k': 'v'} unquoted inside */
		sm_cqlsh_str_putn(s, "{", 1);
		if (sm_coll_iter_init(&it, v) == 0)
			while (coll_next(&it, &k, &e, true))
				sm_cqlsh_str_printf(s, "%s'%.*s': '%.*s'", n++ ? ", " : "",
						    (int)k.len, (const char *)k.p, (int)e.len,
						    (const char *)e.p);
		sm_cqlsh_str_putn(s, "}", 1);
	} else if (id == 0x0007 && v.len == 8) {
		union {
			uint64_t u;
			double d;
		} x = { 0 };
		unsigned i;

		for (i = 0; i < 8; i++)
			x.u = x.u << 8 | v.p[i];
		py_float_repr(s, x.d);
	} else if (id == 0x0009 && v.len == 4) {
		sm_cqlsh_str_printf(s, "%d", (int32_t)((uint32_t)v.p[0] << 24 | (uint32_t)v.p[1] << 16 |
						       (uint32_t)v.p[2] << 8 | v.p[3]));
	} else if (id == 0x0004 && v.len == 1) {
		sm_cqlsh_str_puts(s, v.p[0] ? "true" : "false");
	} else {
		/* text: quoted, ' doubled (a null comment is '') */
		sm_cqlsh_str_putn(s, "'", 1);
		for (p = v.p; v.p != NULL && p < v.p + v.len; p++)
			sm_cqlsh_str_puts(s, *p == '\'' ? "''" : (char[]){ (char)*p, '\0' });
		sm_cqlsh_str_putn(s, "'", 1);
	}
	return true;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One column of the table: its row in the columns result. */
struct dcol {
	uint32_t row;
	int position;
	bool is_static, reversed;
	char name[256];
};

static int
cmp_position(const void *a, const void *b)
{
	const struct dcol *x = a, *y = b;

	return (x->position > y->position) - (x->position < y->position);
}

int
sm_cqlsh_describe_table(struct sm_cqlsh_str *out, const struct sm_cqlsh_result *t, uint32_t row,
			const struct sm_cqlsh_result *cols)
{
	int c_ks = sm_cqlsh_result_col(t, "keyspace_name"), c_tb = sm_cqlsh_result_col(t, "table_name");
	int k_ks = sm_cqlsh_result_col(cols, "keyspace_name");
	int k_tb = sm_cqlsh_result_col(cols, "table_name");
	int k_name = sm_cqlsh_result_col(cols, "column_name"), k_kind = sm_cqlsh_result_col(cols, "kind");
	int k_pos = sm_cqlsh_result_col(cols, "position");
	int k_type = sm_cqlsh_result_col(cols, "type");
	int k_order = sm_cqlsh_result_col(cols, "clustering_order");
	struct dcol *pk = NULL, *ck = NULL, *other = NULL;
	char ks[256], tb[256], type[512], kind[32];
	struct sm_cqlsh_str opts[SM_ARRAY_SIZE(table_options) + 2];
	char *sorted[SM_ARRAY_SIZE(table_options) + 2];
	unsigned npk = 0, nck = 0, nother = 0, nopts = 0, nprops = 0, i, j;
	struct sm_bytes flags = cell(t, row, sm_cqlsh_result_col(t, "flags"));
	bool dense = false, compact_static = false, compact = false;
	uint32_t r;
	int ret = -EINVAL;

	if (!cell_text(t, row, c_ks, ks, sizeof(ks)) || !cell_text(t, row, c_tb, tb, sizeof(tb)) ||
	    k_name < 0 || k_kind < 0 || k_type < 0 || k_ks < 0 || k_tb < 0)
		return -EINVAL;
	/* The driver's reading of the flags (SchemaParserV3._build_table_metadata). */
	if (flags.p != NULL && flags.len > 4) {
		dense = set_has(flags, "dense");
		compact_static = !dense && !set_has(flags, "super") && !set_has(flags, "compound");
		compact = dense || set_has(flags, "super") || !set_has(flags, "compound");
	} else {
		compact_static = compact = true;
	}
	pk = sm_calloc(cols->nrows + 1, sizeof(*pk));
	ck = sm_calloc(cols->nrows + 1, sizeof(*ck));
	other = sm_calloc(cols->nrows + 1, sizeof(*other));
	if (pk == NULL || ck == NULL || other == NULL) {
		ret = -ENOMEM;
		goto out;
	}
	for (r = 0; r < cols->nrows; r++) {
		struct sm_bytes pos = cell(cols, r, k_pos);
		struct dcol d;

		if (!cell_is(cols, r, k_ks, ks) || !cell_is(cols, r, k_tb, tb))
			continue;
		memset(&d, 0, sizeof(d));
		d.row = r;
		cell_text(cols, r, k_name, d.name, sizeof(d.name));
		cell_text(cols, r, k_kind, kind, sizeof(kind));
		d.position = pos.p != NULL && pos.len == 4
				     ? (int32_t)((uint32_t)pos.p[0] << 24 | (uint32_t)pos.p[1] << 16 |
						 (uint32_t)pos.p[2] << 8 | pos.p[3])
				     : 0;
		d.is_static = strcmp(kind, "static") == 0;
		d.reversed = cell_is(cols, r, k_order, "desc") || cell_is(cols, r, k_order, "DESC");
		if (strcmp(kind, "partition_key") == 0) {
			pk[npk++] = d;
		} else if (strcmp(kind, "clustering") == 0) {
			if (!compact_static)
				ck[nck++] = d;
		} else {
			cell_text(cols, r, k_type, type, sizeof(type));
			if ((dense && strcmp(type, "empty") == 0) || (compact_static && !d.is_static))
				continue;
			if (compact_static)
				d.is_static = false;
			other[nother++] = d;
		}
	}
	qsort(pk, npk, sizeof(*pk), cmp_position);
	qsort(ck, nck, sizeof(*ck), cmp_position);

	sm_cqlsh_str_puts(out, "CREATE TABLE ");
	sm_cqlsh_protect_name(out, ks);
	sm_cqlsh_str_putn(out, ".", 1);
	sm_cqlsh_protect_name(out, tb);
	sm_cqlsh_str_puts(out, " (\n");
	for (i = 0; i < npk + nck + nother; i++) {
		const struct dcol *d = i < npk ? &pk[i] : i < npk + nck ? &ck[i - npk]
								: &other[i - npk - nck];

		cell_text(cols, d->row, k_type, type, sizeof(type));
		sm_cqlsh_str_puts(out, i ? ",\n    " : "    ");
		sm_cqlsh_protect_name(out, d->name);
		sm_cqlsh_str_printf(out, " %s%s", type, d->is_static ? " static" : "");
		if (i == 0 && npk == 1 && nck == 0)
			sm_cqlsh_str_puts(out, " PRIMARY KEY");
	}
	if (npk > 1 || nck > 0) {
		sm_cqlsh_str_puts(out, ",\n    PRIMARY KEY (");
		if (npk > 1)
			sm_cqlsh_str_putn(out, "(", 1);
		for (i = 0; i < npk; i++) {
			if (i > 0)
				sm_cqlsh_str_puts(out, ", ");
			sm_cqlsh_protect_name(out, pk[i].name);
		}
		if (npk > 1)
			sm_cqlsh_str_putn(out, ")", 1);
		for (i = 0; i < nck; i++) {
			sm_cqlsh_str_puts(out, ", ");
			sm_cqlsh_protect_name(out, ck[i].name);
		}
		sm_cqlsh_str_putn(out, ")", 1);
	}
	sm_cqlsh_str_puts(out, "\n) WITH ");
	if (compact) {
		sm_cqlsh_str_puts(out, "COMPACT STORAGE");
		nprops++;
	}
	if (nck > 0) {
		if (nprops++ > 0)
			sm_cqlsh_str_puts(out, "\n    AND ");
		sm_cqlsh_str_puts(out, "CLUSTERING ORDER BY (");
		for (i = 0; i < nck; i++) {
			if (i > 0)
				sm_cqlsh_str_puts(out, ", ");
			sm_cqlsh_protect_name(out, ck[i].name);
			sm_cqlsh_str_puts(out, ck[i].reversed ? " DESC" : " ASC");
		}
		sm_cqlsh_str_puts(out, ")");
	}
	for (i = 0; i < SM_ARRAY_SIZE(table_options); i++) {
		int c = sm_cqlsh_result_col(t, table_options[i]);

		if (c < 0)
			continue;
		sm_cqlsh_str_init(&opts[nopts]);
		if (option_string(&opts[nopts], t, row, c, table_options[i])) {
			sorted[nopts] = opts[nopts].p;
			nopts++;
		} else {
			sm_cqlsh_str_release(&opts[nopts]);
		}
	}
	qsort(sorted, nopts, sizeof(*sorted), cmp_str);
	for (j = 0; j < nopts; j++) {
		if (nprops++ > 0)
			sm_cqlsh_str_puts(out, "\n    AND ");
		sm_cqlsh_str_puts(out, sorted[j] != NULL ? sorted[j] : "");
	}
	for (j = 0; j < nopts; j++)
		sm_cqlsh_str_release(&opts[j]);
	sm_cqlsh_str_putn(out, ";", 1);
	ret = out->err;
out:
	sm_free(pk);
	sm_free(ck);
	sm_free(other);
	return ret;
}

static int
bytes_cmp(struct sm_bytes x, struct sm_bytes y)
{
	size_t n = x.len < y.len ? x.len : y.len;
	int c = n ? memcmp(x.p, y.p, n) : 0;

	return c ? c : (x.len > y.len) - (x.len < y.len);
}

/* A local index's {"pk":["p"],"ck":["v"]} as CQL: " ((p), v);". */
static void
put_local_target(struct sm_cqlsh_str *out, struct sm_bytes t)
{
	bool in_str = false, in_list = false;
	unsigned lists = 0;
	uint32_t i;

	sm_cqlsh_str_puts(out, " ((");
	for (i = 0; i < t.len; i++) {
		char ch = (char)t.p[i];

		if (ch == '"' && !in_str && i + 1 < t.len && (t.p[i + 1] == 'p' || t.p[i + 1] == 'c') &&
		    i + 3 < t.len && t.p[i + 2] == 'k' && t.p[i + 3] == '"') {
			i += 3; /* the "pk" and "ck" keys */
			continue;
		}
		if (ch == '"') {
			in_str = !in_str;
			continue;
		}
		if (in_str) {
			sm_cqlsh_str_putn(out, &ch, 1);
		} else if (ch == ',' && in_list) {
			sm_cqlsh_str_puts(out, ", ");
		} else if (ch == '[') {
			in_list = true;
		} else if (ch == ']') {
			in_list = false;
			if (++lists == 1)
				sm_cqlsh_str_puts(out, "), ");
		}
	}
	sm_cqlsh_str_puts(out, ");");
}

int
sm_cqlsh_describe_indexes(struct sm_cqlsh_str *out, const struct sm_cqlsh_result *ix,
			  const char *ks, const char *table)
{
	int c_tb = sm_cqlsh_result_col(ix, "table_name");
	int c_name = sm_cqlsh_result_col(ix, "index_name");
	int c_opts = sm_cqlsh_result_col(ix, "options");
	struct sm_bytes last = { NULL, 0 };
	uint32_t r;

	if (c_tb < 0 || c_name < 0 || c_opts < 0)
		return -EINVAL;
	/* by index name, as TableMetadata.export_as_string() sorts them (a table has few) */
	for (;;) {
		struct sm_bytes target = { NULL, 0 }, k, v, name;
		struct sm_coll_iter it;
		char buf[256];
		int64_t best = -1;

		for (r = 0; r < ix->nrows; r++) {
			name = cell(ix, r, c_name);
			if (!cell_is(ix, r, c_tb, table) || name.p == NULL ||
			    (last.p != NULL && bytes_cmp(name, last) <= 0))
				continue;
			if (best < 0 || bytes_cmp(name, cell(ix, (uint32_t)best, c_name)) < 0)
				best = r;
		}
		if (best < 0)
			break;
		r = (uint32_t)best;
		last = cell(ix, r, c_name);
		if (cell(ix, r, c_opts).p != NULL && sm_coll_iter_init(&it, cell(ix, r, c_opts)) == 0)
			while (coll_next(&it, &k, &v, true))
				if (k.len == 6 && memcmp(k.p, "target", 6) == 0)
					target = v;
		snprintf(buf, sizeof(buf), "%.*s", last.p ? (int)last.len : 0,
			 last.p ? (const char *)last.p : "");
		sm_cqlsh_str_puts(out, "\nCREATE INDEX ");
		sm_cqlsh_protect_name(out, buf);
		sm_cqlsh_str_puts(out, " ON ");
		sm_cqlsh_protect_name(out, ks);
		sm_cqlsh_str_puts(out, ".");
		sm_cqlsh_protect_name(out, table);
		if (target.p != NULL && target.len > 0 && target.p[0] == '{') {
			put_local_target(out, target);
			continue;
		}
		sm_cqlsh_str_printf(out, " (%.*s);", target.p ? (int)target.len : 0,
				    target.p ? (const char *)target.p : "");
	}
	return out->err;
}
