/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Table properties: the checks ScyllaDB makes of CREATE TABLE's and ALTER
 * TABLE's WITH options, written from its sources (named at each check) and
 * giving its messages. The numbers are read the way ScyllaDB reads them:
 * std::stoi / std::stol / std::stod take the longest number at the start
 * of the text ("12abc" is 12), boost::lexical_cast the whole text.
 */

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sm_core.h"
#include "sm_cql_proto.h"
#include "cql_props_priv.h"

struct pctx {
	int32_t *code;
	char *err;
	size_t errlen;
};

static int __attribute__((format(printf, 3, 4)))
fail(struct pctx *c, int32_t code, const char *fmt, ...)
{
	va_list ap;

	*c->code = code;
	va_start(ap, fmt);
	vsnprintf(c->err, c->errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

void
cql_fmt_double(double v, char *buf, size_t len)
{
	cql_fmt_float(v, false, buf, len);
}

void
cql_fmt_float(double v, bool single, char *buf, size_t len)
{
	char digits[18], *o = buf, *end = buf + len - 1;
	int exp10, nd, i;
	bool neg;

	if (len == 0)
		return;
	if (isnan(v) || isinf(v)) {
		snprintf(buf, len, "%s", isnan(v) ? "nan" : v < 0 ? "-inf" : "inf");
		return;
	}
	exp10 = sm_double_digits(v, single, digits, &neg);
	nd = (int)strlen(digits);
#define PUT(ch)                                                                                    \
	do {                                                                                       \
		if (o < end)                                                                       \
			*o++ = (ch);                                                               \
	} while (0)
	if (neg)
		PUT('-');
	/* fmt's general form: fixed for -4 <= exponent < 16, else d.ddde+XX */
	if (exp10 >= -4 && exp10 < 16) {
		if (exp10 < 0) {
			PUT('0');
			PUT('.');
			for (i = -1; i > exp10; i--)
				PUT('0');
			for (i = 0; i < nd; i++)
				PUT(digits[i]);
		} else {
			for (i = 0; i <= exp10; i++)
				PUT(i < nd ? digits[i] : '0');
			if (nd > exp10 + 1) {
				PUT('.');
				for (i = exp10 + 1; i < nd; i++)
					PUT(digits[i]);
			}
		}
		*o = '\0';
		return;
	}
	PUT(digits[0]);
	if (nd > 1) {
		PUT('.');
		for (i = 1; i < nd; i++)
			PUT(digits[i]);
	}
	*o = '\0';
	snprintf(o, (size_t)(end + 1 - o), "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
#undef PUT
}

/* ---- numbers, as the C++ library reads them ---- */

/* std::stol(): false where it throws (no digits, out of range). */
static bool
sto_l(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (end == s || errno == ERANGE || v < min || v > max)
		return false;
	*out = v;
	return true;
}

/* std::stod(): false where it throws (nothing read, out of range) */
static bool
sto_d(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno == ERANGE)
		return false;
	*out = v;
	return true;
}

/* property_definitions::to_int / to_long / to_double (property_definitions.cc) */
static int
to_int(struct pctx *c, const char *key, const char *v, int32_t def, int32_t *out)
{
	long l;

	if (v == NULL) {
		*out = def;
		return 0;
	}
	if (!sto_l(v, INT32_MIN, INT32_MAX, &l))
		return fail(c, SM_CQL_ERR_SYNTAX, "Invalid integer value %s for '%s'", v, key);
	*out = (int32_t)l;
	return 0;
}

static int
to_long(struct pctx *c, const char *key, const char *v, long def, long *out)
{
	if (v == NULL) {
		*out = def;
		return 0;
	}
	if (!sto_l(v, LONG_MIN, LONG_MAX, out))
		return fail(c, SM_CQL_ERR_SYNTAX, "Invalid long value %s for '%s'", v, key);
	return 0;
}

static int
to_double(struct pctx *c, const char *key, const char *v, double def, double *out)
{
	if (v == NULL) {
		*out = def;
		return 0;
	}
	if (!sto_d(v, out))
		return fail(c, SM_CQL_ERR_SYNTAX, "Invalid double value %s for '%s'", v, key);
	return 0;
}

/* ---- a property map ---- */

struct pmap {
	const struct sm_cql_kv *kv;
	unsigned n;
	uint8_t *checked; /* one per entry: a validator read it */
};

static const char *
map_get(const struct pmap *m, const char *key)
{
	unsigned i;

	for (i = 0; i < m->n; i++)
		if (strcmp(m->kv[i].key, key) == 0)
			return m->kv[i].value;
	return NULL;
}

/* The value, marking the entry as one the strategy knows. */
static const char *
map_take(struct pmap *m, const char *key)
{
	unsigned i;

	for (i = 0; i < m->n; i++) {
		if (strcmp(m->kv[i].key, key) == 0) {
			m->checked[i] = 1;
			return m->kv[i].value;
		}
	}
	return NULL;
}

/* ---- compaction (compaction/compaction_strategy.cc and the strategies) ---- */

enum strategy {
	CS_NULL,
	CS_SIZE_TIERED,
	CS_LEVELED,
	CS_TIME_WINDOW,
	CS_IN_MEMORY,
	CS_INCREMENTAL,
};

static const char *const strategy_names[] = {
	[CS_NULL] = "NullCompactionStrategy",
	[CS_SIZE_TIERED] = "SizeTieredCompactionStrategy",
	[CS_LEVELED] = "LeveledCompactionStrategy",
	[CS_TIME_WINDOW] = "TimeWindowCompactionStrategy",
	[CS_IN_MEMORY] = "InMemoryCompactionStrategy",
	[CS_INCREMENTAL] = "IncrementalCompactionStrategy",
};

/* compaction_strategy::type(): the name, with or without Cassandra's package */
static int
strategy_type(struct pctx *c, const char *name, enum strategy *out)
{
	static const char pkg[] = "org.apache.cassandra.db.compaction.";
	const char *at = strstr(name, pkg), *shrt = at ? at + sizeof(pkg) - 1 : name;
	unsigned i;

	for (i = 0; i < SM_ARRAY_SIZE(strategy_names); i++) {
		if (strcmp(shrt, strategy_names[i]) == 0) {
			*out = (enum strategy)i;
			return 0;
		}
	}
	return fail(c, SM_CQL_ERR_CONFIG, "Unable to find compaction strategy class '%s'", name);
}

static int
check_bool_opt(struct pctx *c, struct pmap *m, const char *key)
{
	const char *v = map_take(m, key);

	if (v != NULL && strcmp(v, "true") != 0 && strcmp(v, "false") != 0)
		return fail(c, SM_CQL_ERR_CONFIG, "%s value (%s) must be \"true\" or \"false\"", key,
			    v);
	return 0;
}

static int
long_at_least(struct pctx *c, struct pmap *m, const char *key, long def, long min,
	      const char *what)
{
	long v = 0;

	if (to_long(c, key, map_take(m, key), def, &v) < 0)
		return -EINVAL;
	if (v < min)
		return fail(c, SM_CQL_ERR_CONFIG, "%s value (%ld) must be %s", key, v, what);
	return 0;
}

static int
double_opt(struct pctx *c, struct pmap *m, const char *key, double def, double *out)
{
	return to_double(c, key, map_take(m, key), def, out);
}

static int
double_fail(struct pctx *c, const char *key, double v, const char *what)
{
	char b[40];

	cql_fmt_double(v, b, sizeof(b));
	return fail(c, SM_CQL_ERR_CONFIG, "%s value (%s) must be %s", key, b, what);
}

/* compaction_strategy_impl::validate_options(): every strategy's */
static int
common_options(struct pctx *c, struct pmap *m)
{
	double d = 0;
	long l = 0;

	if (double_opt(c, m, "tombstone_threshold", 0.2, &d) < 0)
		return -EINVAL;
	if (d < 0.0 || d > 1.0)
		return double_fail(c, "tombstone_threshold", d, "between 0.0 and 1.0");
	if (to_long(c, "tombstone_compaction_interval", map_take(m, "tombstone_compaction_interval"),
		    86400, &l) < 0)
		return -EINVAL;
	if (l <= 0) /* a duration in seconds, written in milliseconds */
		return fail(c, SM_CQL_ERR_CONFIG,
			    "tombstone_compaction_interval value (%lldms) must be positive",
			    (long long)l * 1000);
	if (check_bool_opt(c, m, "unchecked_tombstone_compaction") < 0)
		return -EINVAL;
	{
		const char *v = map_take(m, "enabled");

		if (v != NULL && strcmp(v, "true") != 0 && strcmp(v, "false") != 0)
			return fail(c, SM_CQL_ERR_CONFIG,
				    "enabled value (%s) must be \"true\" or \"false\"", v);
	}
	return 0;
}

static int
min_max_threshold(struct pctx *c, struct pmap *m)
{
	if (long_at_least(c, m, "min_threshold", 4, 2, "bigger or equal to 2") < 0)
		return -EINVAL;
	return long_at_least(c, m, "max_threshold", 32, 2, "bigger or equal to 2");
}

/* size_tiered_compaction_strategy_options::validate() and the incremental one's */
static int
tiered_options(struct pctx *c, struct pmap *m, bool incremental)
{
	double low = 0, high = 0, d = 0;
	char bl[40], bh[40];

	if (long_at_least(c, m, "min_sstable_size", 50l * 1024 * 1024, 0, "non negative") < 0 ||
	    long_at_least(c, m, "min_sstable_age", 3600, 0, "non negative") < 0)
		return -EINVAL;
	if (double_opt(c, m, "bucket_low", incremental ? 0.7071 : 0.5, &low) < 0)
		return -EINVAL;
	if (low <= 0.0 || low >= 1.0)
		return double_fail(c, "bucket_low", low, "between 0.0 and 1.0");
	if (double_opt(c, m, "bucket_high", incremental ? 1.4142 : 1.5, &high) < 0)
		return -EINVAL;
	if (high <= 1.0)
		return double_fail(c, "bucket_high", high, "greater than 1.0");
	if (high <= low) {
		cql_fmt_double(high, bh, sizeof(bh));
		cql_fmt_double(low, bl, sizeof(bl));
		return fail(c, SM_CQL_ERR_CONFIG,
			    "bucket_high value (%s) is less than or equal to the bucket_low value "
			    "(%s)",
			    bh, bl);
	}
	if (incremental) {
		int32_t frag;
		const char *v;

		if (to_int(c, "sstable_size_in_mb", map_take(m, "sstable_size_in_mb"), 1000, &frag) <
		    0)
			return -EINVAL;
		v = map_take(m, "space_amplification_goal");
		if (v != NULL) {
			if (to_double(c, "space_amplification_goal", v, 0.0, &d) < 0)
				return -EINVAL;
			if (d <= 1.0 || d > 2.0)
				return double_fail(c, "space_amplification_goal", d,
						   "greater than 1.0 and less than or equal to 2.0");
		}
	} else {
		if (double_opt(c, m, "cold_reads_to_omit", 0.05, &d) < 0)
			return -EINVAL;
		if (d < 0.0 || d > 1.0)
			return double_fail(c, "cold_reads_to_omit", d, "between 0.0 and 1.0");
	}
	return min_max_threshold(c, m);
}

/* time_window_compaction_strategy_options::validate() */
static int
time_window_options(struct pctx *c, struct pmap *m)
{
	const char *v;
	long l = 0;

	v = map_take(m, "compaction_window_unit");
	if (v != NULL && strcmp(v, "MINUTES") != 0 && strcmp(v, "HOURS") != 0 &&
	    strcmp(v, "DAYS") != 0)
		return fail(c, SM_CQL_ERR_CONFIG, "Invalid window unit %s for compaction_window_unit",
			    v);
	if (to_long(c, "compaction_window_size", map_take(m, "compaction_window_size"), 1, &l) < 0)
		return -EINVAL;
	if ((int)l <= 0) /* read into an int */
		return fail(c, SM_CQL_ERR_CONFIG,
			    "compaction_window_size value (%d) must be greater than 1", (int)l);
	v = map_take(m, "expired_sstable_check_frequency_seconds");
	if (v != NULL && !sto_l(v, LONG_MIN, LONG_MAX, &l))
		return fail(c, SM_CQL_ERR_SYNTAX,
			    "Invalid long value %s for expired_sstable_check_frequency_seconds", v);
	v = map_take(m, "timestamp_resolution");
	if (v != NULL && strcmp(v, "MICROSECONDS") != 0 && strcmp(v, "MILLISECONDS") != 0)
		return fail(c, SM_CQL_ERR_CONFIG,
			    "Invalid timestamp resolution %s for timestamp_resolution", v);
	if (min_max_threshold(c, m) < 0)
		return -EINVAL;
	v = map_take(m, "enable_optimized_twcs_queries");
	if (v != NULL && strcmp(v, "true") != 0 && strcmp(v, "false") != 0)
		return fail(c, SM_CQL_ERR_CONFIG,
			    "enable_optimized_twcs_queries value (%s) must be \"true\" or \"false\"",
			    v);
	map_take(m, "unsafe_aggressive_sstable_expiration"); /* ScyllaDB warns and ignores it */
	return 0;
}

/* The compaction map: its class, then validate_options_for_strategy_type(). */
static int
check_compaction(struct pctx *c, const struct sm_cql_prop *pr)
{
	uint8_t stack[32], *checked = stack;
	struct pmap m = { pr->map, pr->nmap, NULL };
	enum strategy st = CS_NULL;
	const char *cls;
	size_t at = 0;
	char buf[512];
	unsigned i;
	int ret;

	if (pr->nmap == 0)
		return 0;
	cls = map_get(&m, "class");
	if (cls == NULL)
		return fail(c, SM_CQL_ERR_CONFIG,
			    "Missing sub-option 'class' for the 'compaction' option.");
	if (strategy_type(c, cls, &st) < 0)
		return -EINVAL;
	if (st == CS_IN_MEMORY)
		return fail(c, SM_CQL_ERR_CONFIG, "%s has been deprecated.", strategy_names[st]);
	if (pr->nmap > sizeof(stack)) {
		checked = sm_calloc(pr->nmap, 1);
		if (checked == NULL)
			return -ENOMEM;
	} else {
		memset(stack, 0, sizeof(stack));
	}
	m.checked = checked;
	map_take(&m, "class");
	ret = common_options(c, &m);
	if (ret == 0) {
		switch (st) {
		case CS_SIZE_TIERED:
			ret = tiered_options(c, &m, false);
			break;
		case CS_LEVELED:
			ret = tiered_options(c, &m, false);
			if (ret == 0) {
				long l = 0;

				ret = to_long(c, "sstable_size_in_mb", map_take(&m, "sstable_size_in_mb"),
					      160, &l);
				if (ret == 0 && l <= 0)
					ret = fail(c, SM_CQL_ERR_CONFIG,
						   "sstable_size_in_mb value (%ld) must be positive",
						   l);
			}
			break;
		case CS_TIME_WINDOW:
			ret = time_window_options(c, &m);
			break;
		case CS_INCREMENTAL:
			ret = tiered_options(c, &m, true);
			break;
		default:
			/* null: no check of what else is given */
			for (i = 0; i < m.n; i++)
				checked[i] = 1;
			break;
		}
	}
	if (ret == 0) {
		/* what no validator read, as fmt writes a std::map<sstring, sstring> (sorted) */
		const char *last = NULL;
		unsigned nleft = 0;

		buf[0] = '\0';
		for (;;) {
			const struct sm_cql_kv *next = NULL;

			for (i = 0; i < m.n; i++) {
				if (checked[i] || (last != NULL && strcmp(m.kv[i].key, last) <= 0))
					continue;
				if (next == NULL || strcmp(m.kv[i].key, next->key) < 0)
					next = &m.kv[i];
			}
			if (next == NULL)
				break;
			if (at < sizeof(buf))
				at += (size_t)snprintf(buf + at, sizeof(buf) - at, "%s\"%s\": \"%s\"",
						       nleft ? ", " : "", next->key, next->value);
			nleft++;
			last = next->key;
		}
		if (nleft > 0)
			ret = fail(c, SM_CQL_ERR_CONFIG,
				   "Invalid compaction strategy options {%s} for chosen strategy type",
				   buf);
	}
	if (checked != stack)
		sm_free(checked);
	return ret;
}

/* ---- compression (sstables/compressor.cc compression_parameters) ---- */

static int
check_compression(struct pctx *c, const struct sm_cql_prop *pr)
{
	static const char *const algorithms[] = {
		"LZ4Compressor",    "LZ4WithDictsCompressor", "DeflateCompressor",
		"SnappyCompressor", "ZstdCompressor",	      "ZstdWithDictsCompressor",
	};
	static const char pkg[] = "org.apache.cassandra.io.compress.";
	struct pmap m = { pr->map, pr->nmap, NULL };
	const char *alg, *chunk, *v, *shrt;
	bool zstd = false, found = false;
	unsigned i, j;
	long l = 0;

	if (pr->nmap == 0)
		return 0;
	alg = map_get(&m, "sstable_compression");
	if (alg == NULL)
		return fail(c, SM_CQL_ERR_CONFIG,
			    "Missing sub-option 'sstable_compression' for the 'compression' option.");
	if (alg[0] != '\0') {
		shrt = strncmp(alg, pkg, sizeof(pkg) - 1) == 0 ? alg + sizeof(pkg) - 1 : alg;
		for (i = 0; i < SM_ARRAY_SIZE(algorithms) && !found; i++) {
			found = strcmp(shrt, algorithms[i]) == 0;
			zstd = found && strncmp(shrt, "Zstd", 4) == 0;
		}
		if (!found)
			return fail(c, SM_CQL_ERR_CONFIG, "Unknown sstable_compression: %s", alg);
	}
	chunk = map_get(&m, "chunk_length_in_kb");
	if (chunk == NULL)
		chunk = map_get(&m, "chunk_length_kb");
	if (chunk != NULL && !sto_l(chunk, INT32_MIN, INT32_MAX, &l))
		return fail(c, SM_CQL_ERR_SYNTAX, "Invalid integer value %s for chunk_length_in_kb",
			    chunk);
	v = map_get(&m, "crc_check_chance");
	if (v != NULL) {
		double d = 0;

		if (!sto_d(v, &d))
			return fail(c, SM_CQL_ERR_SYNTAX,
				    "Invalid double value %s for crc_check_chance", v);
		if (d < 0.0 || d > 1.0)
			return fail(c, SM_CQL_ERR_CONFIG,
				    "crc_check_chance must be between 0.0 and 1.0.");
	}
	v = zstd ? map_get(&m, "compression_level") : NULL;
	if (v != NULL && !sto_l(v, INT32_MIN, INT32_MAX, &l))
		return fail(c, SM_CQL_ERR_CONFIG, "Invalid integer value %s for compression_level",
			    v);
	for (i = 0; i < m.n; i++) {
		static const char *const known[] = { "sstable_compression", "chunk_length_kb",
						     "chunk_length_in_kb", "crc_check_chance" };
		bool ok = zstd && strcmp(m.kv[i].key, "compression_level") == 0;

		for (j = 0; j < SM_ARRAY_SIZE(known) && !ok; j++)
			ok = strcmp(m.kv[i].key, known[j]) == 0;
		if (!ok)
			return fail(c, SM_CQL_ERR_CONFIG, "Unknown compression option '%s'.",
				    m.kv[i].key);
	}
	if (chunk != NULL) {
		long bytes;

		sto_l(chunk, INT32_MIN, INT32_MAX, &l);
		bytes = (long)(int32_t)((uint32_t)l * 1024u); /* an int times 1024 */
		if (bytes <= 0)
			return fail(c, SM_CQL_ERR_CONFIG,
				    "Invalid negative or null for chunk_length_in_kb/chunk_length_kb");
		if (bytes & (bytes - 1))
			return fail(c, SM_CQL_ERR_CONFIG,
				    "chunk_length_in_kb/chunk_length_kb must be a power of 2.");
		if (bytes > 128 * 1024)
			return fail(c, SM_CQL_ERR_CONFIG,
				    "chunk_length_in_kb/chunk_length_kb must be 128 or less.");
	}
	return 0;
}

/* ---- caching (schema/caching_options.cc) ---- */

static int
check_caching(struct pctx *c, const struct sm_cql_prop *pr)
{
	unsigned i;

	for (i = 0; i < pr->nmap; i++) {
		const char *k = pr->map[i].key, *v = pr->map[i].value;

		if (strcmp(k, "keys") == 0) {
			if (strcmp(v, "ALL") != 0 && strcmp(v, "NONE") != 0)
				return fail(c, SM_CQL_ERR_CONFIG, "Invalid key value: %s", v);
		} else if (strcmp(k, "rows_per_partition") == 0) {
			if (strcmp(v, "ALL") != 0 && strcmp(v, "NONE") != 0 &&
			    (v[0] == '\0' || strspn(v, "0123456789") != strlen(v)))
				return fail(c, SM_CQL_ERR_CONFIG, "Invalid key value: %s", v);
		} else if (strcmp(k, "enabled") != 0) {
			return fail(c, SM_CQL_ERR_CONFIG, "Invalid caching option: %s", k);
		}
	}
	return 0;
}

/* ---- speculative_retry (schema/schema.cc speculative_retry::from_sstring) ---- */

/* boost::lexical_cast<double>: the whole text, no spaces */
static bool
lexical_double(const char *s, size_t n, double *out)
{
	char buf[128], *end;

	if (n == 0 || n >= sizeof(buf) || s[0] == ' ' || s[0] == '\t')
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (strchr(buf, 'x') != NULL || strchr(buf, 'X') != NULL)
		return false;
	*out = strtod(buf, &end);
	return end != buf && *end == '\0';
}

static int
speculative_retry(struct pctx *c, const char *given, char *canon, size_t len)
{
	char up[160];
	size_t n = strlen(given), i;
	double v = 0;

	if (n >= sizeof(up))
		n = sizeof(up) - 1;
	for (i = 0; i < n; i++)
		up[i] = (char)((given[i] >= 'a' && given[i] <= 'z') ? given[i] - 32 : given[i]);
	up[n] = '\0';
	if (strcmp(up, "NONE") == 0 || strcmp(up, "ALWAYS") == 0) {
		snprintf(canon, len, "%s", up);
		return 0;
	}
	if (n >= 2 && strcmp(up + n - 2, "MS") == 0) {
		if (!lexical_double(up, n - 2, &v))
			return fail(c, SM_CQL_ERR_CONFIG, "cannot convert %s to speculative_retry\n",
				    up);
		if (!isfinite(v) || v < 0.0)
			return fail(c, SM_CQL_ERR_CONFIG,
				    "Invalid value %s for option 'speculative_retry': the number of "
				    "milliseconds must be non-negative and finite",
				    up);
		snprintf(canon, len, "%.2fms", v);
		return 0;
	}
	if (n >= 10 && strcmp(up + n - 10, "PERCENTILE") == 0) {
		if (!lexical_double(up, n - 10, &v))
			return fail(c, SM_CQL_ERR_CONFIG, "cannot convert %s to speculative_retry\n",
				    up);
		v /= 100;
		if (!isfinite(v) || v < 0.0 || v > 1.0)
			return fail(c, SM_CQL_ERR_CONFIG,
				    "Invalid value %s for PERCENTILE option 'speculative_retry': must "
				    "be between (0.0 and 100.0)",
				    up);
		snprintf(canon, len, "%.1fPERCENTILE", 100 * v);
		return 0;
	}
	return fail(c, SM_CQL_ERR_CONFIG, "cannot convert %s to speculative_retry\n", up);
}

/* ---- the properties ---- */

enum pkind {
	P_SIMPLE,
	P_MAP,
	P_EITHER,
};

struct pdef {
	const char *name;
	enum pkind kind;
};

/* cf_prop_defs::validate()'s keywords, and the schema extensions ScyllaDB registers
 * (db/config.cc: cdc, per_partition_rate_limit, scylla_tags, tombstone_gc,
 * paxos_grace_seconds) */
static const struct pdef keywords[] = {
	{ "comment", P_SIMPLE },
	{ "gc_grace_seconds", P_SIMPLE },
	{ "caching", P_EITHER },
	{ "default_time_to_live", P_SIMPLE },
	{ "min_index_interval", P_SIMPLE },
	{ "max_index_interval", P_SIMPLE },
	{ "speculative_retry", P_SIMPLE },
	{ "bloom_filter_fp_chance", P_SIMPLE },
	{ "memtable_flush_period_in_ms", P_SIMPLE },
	{ "compaction", P_MAP },
	{ "compression", P_MAP },
	{ "crc_check_chance", P_SIMPLE },
	{ "id", P_SIMPLE },
	{ "paxos_grace_seconds", P_SIMPLE },
	{ "synchronous_updates", P_SIMPLE },
	{ "tablets", P_MAP },
	{ "storage_engine", P_SIMPLE },
	{ "large_data_guardrails_enabled", P_SIMPLE },
	{ "cdc", P_EITHER },
	{ "per_partition_rate_limit", P_MAP },
	{ "scylla_tags", P_EITHER },
	{ "tombstone_gc", P_MAP },
};

static const char *const obsolete[] = {
	"index_interval", "replicate_on_write", "populate_io_cache_on_flush", "read_repair_chance",
	"dclocal_read_repair_chance",
};

static const struct sm_cql_prop *
find(const struct sm_cql_prop *props, unsigned n, const char *key)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (strcmp(props[i].key, key) == 0)
			return &props[i];
	return NULL;
}

/* get_simple(): the value of a simple property, NULL when absent */
static int
simple(struct pctx *c, const struct sm_cql_prop *props, unsigned n, const char *key,
       const char **out)
{
	const struct sm_cql_prop *pr = find(props, n, key);

	*out = NULL;
	if (pr == NULL)
		return 0;
	if (pr->map != NULL)
		return fail(c, SM_CQL_ERR_SYNTAX,
			    "Invalid value for property '%s'. It should be a string", key);
	*out = pr->value;
	return 0;
}

static bool
valid_uuid(const char *s)
{
	static const int dash[] = { 8, 13, 18, 23 };
	unsigned i, d = 0;

	if (strlen(s) != 36)
		return false;
	for (i = 0; i < 36; i++) {
		if (d < 4 && (int)i == dash[d]) {
			if (s[i] != '-')
				return false;
			d++;
		} else if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') ||
			     (s[i] >= 'A' && s[i] <= 'F'))) {
			return false;
		}
	}
	return true;
}

static int
keep(struct cql_table_opts *o, const char *key, const char *value)
{
	struct sm_option *v = sm_realloc(o->opts, (o->n + 1) * sizeof(*v));

	if (v == NULL)
		return -ENOMEM;
	o->opts = v;
	v[o->n].key = sm_strdup(key);
	v[o->n].value = sm_strdup(value);
	if (v[o->n].key == NULL || v[o->n].value == NULL) {
		sm_free(v[o->n].key);
		sm_free(v[o->n].value);
		return -ENOMEM;
	}
	o->n++;
	return 0;
}

void
cql_table_opts_free(struct cql_table_opts *o)
{
	unsigned i;

	for (i = 0; i < o->n; i++) {
		sm_free(o->opts[i].key);
		sm_free(o->opts[i].value);
	}
	sm_free(o->opts);
	memset(o, 0, sizeof(*o));
}

/* cf_prop_defs::validate() */
static int
validate(struct pctx *c, const struct sm_cql_prop *props, unsigned n, bool alter,
	 struct cql_table_opts *out)
{
	const struct sm_cql_prop *pr;
	const char *v;
	int32_t imin = 0, imax = 0, iv = 0;
	unsigned i, j;
	double d = 0;

	for (i = 0; i < n; i++) {
		bool known = false, old = false;

		for (j = 0; j < SM_ARRAY_SIZE(keywords) && !known; j++) {
			if (strcmp(props[i].key, keywords[j].name) != 0)
				continue;
			known = true;
			if (keywords[j].kind == P_MAP && props[i].map == NULL)
				return fail(c, SM_CQL_ERR_SYNTAX,
					    "Invalid value for property '%s'. It should be a map.",
					    props[i].key);
			if (keywords[j].kind == P_SIMPLE && props[i].map != NULL)
				return fail(c, SM_CQL_ERR_SYNTAX,
					    "Invalid value for property '%s'. It should be a string",
					    props[i].key);
		}
		for (j = 0; j < SM_ARRAY_SIZE(obsolete) && !known && !old; j++)
			old = strcmp(props[i].key, obsolete[j]) == 0;
		if (!known && !old)
			return fail(c, SM_CQL_ERR_SYNTAX, "Unknown property '%s'", props[i].key);
	}
	if (simple(c, props, n, "id", &v) < 0)
		return -EINVAL;
	if (v != NULL) {
		if (alter)
			return fail(c, SM_CQL_ERR_CONFIG, "Cannot alter table id.");
		if (!valid_uuid(v))
			return fail(c, SM_CQL_ERR_CONFIG, "Invalid table id");
	}
	pr = find(props, n, "compaction");
	if (pr != NULL) {
		int ret = check_compaction(c, pr);

		if (ret < 0)
			return ret;
	}
	pr = find(props, n, "compression");
	if (pr != NULL && check_compression(c, pr) < 0)
		return -EINVAL;
	/* validate_minimum_int() */
	if (simple(c, props, n, "default_time_to_live", &v) < 0 ||
	    to_int(c, "default_time_to_live", v, 0, &iv) < 0)
		return -EINVAL;
	if (iv < 0)
		return fail(c, SM_CQL_ERR_CONFIG,
			    "default_time_to_live cannot be smaller than 0, (default 0)");
	if (v != NULL) {
		out->has_default_ttl = true;
		out->default_ttl = iv;
	}
	if (simple(c, props, n, "paxos_grace_seconds", &v) < 0 ||
	    to_int(c, "paxos_grace_seconds", v, 864000, &iv) < 0)
		return -EINVAL;
	if (iv < 0)
		return fail(c, SM_CQL_ERR_CONFIG,
			    "paxos_grace_seconds cannot be smaller than 0, (default 864000)");
	if (simple(c, props, n, "min_index_interval", &v) < 0 ||
	    to_int(c, "min_index_interval", v, 128, &imin) < 0 ||
	    simple(c, props, n, "max_index_interval", &v) < 0 ||
	    to_int(c, "max_index_interval", v, 2048, &imax) < 0)
		return -EINVAL;
	if (imin < 1)
		return fail(c, SM_CQL_ERR_CONFIG, "min_index_interval must be greater than 0");
	if (imax < imin)
		return fail(c, SM_CQL_ERR_CONFIG,
			    "max_index_interval must be greater than min_index_interval");
	if (simple(c, props, n, "bloom_filter_fp_chance", &v) < 0)
		return -EINVAL;
	if (v != NULL) {
		/* utils/bloom_calculations.hh min_supported_bloom_filter_fp_chance() */
		static const double min_fp = 6.71e-05;
		char got[40];

		if (to_double(c, "bloom_filter_fp_chance", v, 0, &d) < 0)
			return -EINVAL;
		if (d <= min_fp || d > 1.0) {
			cql_fmt_double(d, got, sizeof(got));
			return fail(c, SM_CQL_ERR_CONFIG,
				    "bloom_filter_fp_chance must be larger than 6.71e-05 and less "
				    "than or equal to 1.0 (got %s)",
				    got);
		}
	}
	if (simple(c, props, n, "memtable_flush_period_in_ms", &v) < 0 ||
	    to_int(c, "memtable_flush_period_in_ms", v, 0, &iv) < 0)
		return -EINVAL;
	if (iv != 0 && iv < 60000)
		return fail(c, SM_CQL_ERR_CONFIG,
			    "memtable_flush_period_in_ms must be 0 or greater than 60000");
	if (simple(c, props, n, "gc_grace_seconds", &v) < 0 ||
	    to_int(c, "gc_grace_seconds", v, 864000, &iv) < 0)
		return -EINVAL;
	if (simple(c, props, n, "crc_check_chance", &v) < 0 ||
	    to_double(c, "crc_check_chance", v, 1.0, &d) < 0)
		return -EINVAL;
	if (find(props, n, "tablets") != NULL)
		return fail(c, SM_CQL_ERR_CONFIG,
			    "tablet options cannot be used when tablets are disabled for the "
			    "keyspace");
	if (simple(c, props, n, "storage_engine", &v) < 0)
		return -EINVAL;
	if (v != NULL)
		return fail(c, SM_CQL_ERR_CONFIG,
			    strcmp(v, "logstor") == 0
				    ? "The experimental feature 'logstor' must be enabled in order "
				      "to use the 'logstor' storage engine."
				    : "Illegal value for 'storage_engine'");
	pr = find(props, n, "caching");
	if (pr != NULL && pr->map != NULL && check_caching(c, pr) < 0)
		return -EINVAL;
	if (simple(c, props, n, "synchronous_updates", &v) < 0)
		return -EINVAL;
	if (alter && v != NULL &&
	    (strcasecmp(v, "true") == 0 || strcasecmp(v, "yes") == 0 || strcmp(v, "1") == 0))
		return fail(c, SM_CQL_ERR_INVALID,
			    "The synchronous_updates option is only applicable to materialized "
			    "views, not to base tables");
	return 0;
}

int
cql_table_props(const struct sm_cql_prop *props, unsigned n, bool alter, struct cql_table_opts *out,
		int32_t *code, char *err, size_t errlen)
{
	struct pctx c = { code, err, errlen };
	char canon[192];
	unsigned i, j;
	int ret;

	memset(out, 0, sizeof(*out));
	*code = 0;
	ret = validate(&c, props, n, alter, out);
	if (ret < 0)
		return ret;
	for (i = 0; i < n; i++) {
		const struct sm_cql_prop *pr = &props[i];
		const char *value = pr->value;
		bool skip = strcmp(pr->key, "id") == 0;

		for (j = 0; j < SM_ARRAY_SIZE(obsolete) && !skip; j++)
			skip = strcmp(pr->key, obsolete[j]) == 0;
		/* an empty caching map changes nothing (get_caching_options()) */
		if (skip || (strcmp(pr->key, "caching") == 0 && pr->map != NULL && pr->nmap == 0))
			continue;
		if (strcmp(pr->key, "speculative_retry") == 0) {
			ret = speculative_retry(&c, pr->value, canon, sizeof(canon));
			if (ret < 0)
				goto fail;
			value = canon;
		}
		ret = keep(out, pr->key, value);
		if (ret < 0)
			goto fail;
	}
	return 0;
fail:
	cql_table_opts_free(out);
	return ret;
}
