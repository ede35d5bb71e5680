/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `shardmark stress` command line, in cassandra-stress's syntax and with its
 * defaults (scylladb/cassandra-stress src/java/org/apache/cassandra/stress/
 * settings/: StressSettings, SettingsCommand*, SettingsPopulation,
 * SettingsColumn, SettingsRate, SettingsSchema, SettingsNode, SettingsPort,
 * SettingsMode, SettingsLog, SettingsErrors, OptionDistribution).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sm_common.h"
#include "sm_mem.h"
#include "sm_stress.h"
#include "sm_stress_profile.h"
#include "sm_stress_ycsb.h"
#include "sm_stress_sb.h"

#define NTS_CLASS "org.apache.cassandra.locator.NetworkTopologyStrategy"
#define LOCATOR_PKG "org.apache.cassandra.locator."

/* Limits that keep a typo from asking for something absurd. */
#define MAX_THREADS 100000u
#define MAX_COLUMNS 1000u
#define MAX_CELL_BYTES (16u << 20)
#define MAX_SHARDS 4096u
#define MAX_NODES 1024u

struct ctx {
	struct sm_stress_settings *s;
	char *err;
	size_t errlen;
	bool warmup_set;
	uint64_t warmup_n;
	bool ratio_set;
	bool factor_set;
	bool mode_native, mode_cql3, mode_alternator;
	const char *alt_only_opt; /* an alternator-only sub-option given, for errors */
	const char *cql_only_opt; /* a CQL-only sub-option given */
	/* user: profile=, ops(...) and -insert's sub-options, applied in finish() */
	const char *user_profile, *user_ops;
	char **insert_opts;
	int n_insert;
};

static int __attribute__((format(printf, 2, 3))) fail(struct ctx *c, const char *fmt, ...)
{
	va_list ap;

	if (c->errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(c->err, c->errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* The value after @prefix when @tok starts with it (case-insensitive), else NULL. */
static const char *
after(const char *tok, const char *prefix)
{
	size_t n = strlen(prefix);

	return strncasecmp(tok, prefix, n) == 0 ? tok + n : NULL;
}

static bool
is(const char *tok, const char *word)
{
	return strcasecmp(tok, word) == 0;
}

/* A sub-option may appear once per option, as in cassandra-stress. */
static int
once(struct ctx *c, const char *where, unsigned *seen, unsigned bit, const char *name)
{
	if (*seen & (1u << bit))
		return fail(c, "%s: %s given more than once: keep one", where, name);
	*seen |= 1u << bit;
	return 0;
}

static int
dup_str(struct ctx *c, char **dst, const char *v)
{
	char *d = sm_strdup(v);

	(void)c;
	if (d == NULL)
		return -ENOMEM;
	sm_free(*dst);
	*dst = d;
	return 0;
}

/* ---- numbers ---- */

/*
 * Decimal digits with an optional k, m or b suffix (x1000, x1000000,
 * x1000000000), as cassandra-stress's OptionDistribution.parseLong; the
 * result must fit a Java long.
 */
static int
parse_count(const char *v, bool suffix, uint64_t *out)
{
	uint64_t x = 0, mul = 1;
	const char *p = v;

	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		if (x > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		x = x * 10 + (uint64_t)(*p - '0');
	}
	if (suffix && *p != '\0') {
		switch (tolower((unsigned char)*p)) {
		case 'k':
			mul = 1000;
			break;
		case 'm':
			mul = 1000000;
			break;
		case 'b':
			mul = 1000000000;
			break;
		default:
			return -EINVAL;
		}
		p++;
	}
	if (*p != '\0')
		return -EINVAL;
	if (x > (uint64_t)INT64_MAX / mul)
		return -ERANGE;
	*out = x * mul;
	return 0;
}

/* A whole number in [min, max] for sub-option @tok of @where, with a message naming both. */
static int
num_arg(struct ctx *c, const char *where, const char *tok, const char *v, bool suffix, uint64_t min,
	uint64_t max, uint64_t *out)
{
	uint64_t x;
	int rc = parse_count(v, suffix, &x);

	if (rc == -EINVAL)
		return fail(c, "%s: '%s': '%s' is not a whole number%s", where, tok, v,
			    suffix ? " (digits with an optional k, m or b suffix, e.g. 10k)" : "");
	if (rc < 0 || x < min || x > max)
		return fail(c, "%s: '%s': give a number from %" PRIu64 " to %" PRIu64, where, tok,
			    min, max);
	*out = x;
	return 0;
}

static int
uint_arg(struct ctx *c, const char *where, const char *tok, const char *v, uint64_t min,
	 uint64_t max, unsigned *out)
{
	uint64_t x = 0;
	int rc = num_arg(c, where, tok, v, false, min, max, &x);

	if (rc == 0)
		*out = (unsigned)x;
	return rc;
}

static int
parse_double(const char *v, double *out)
{
	char *end;
	double d;

	if (*v == '\0' || isspace((unsigned char)*v))
		return -EINVAL;
	errno = 0;
	d = strtod(v, &end);
	if (*end != '\0' || errno != 0 || !isfinite(d))
		return -EINVAL;
	*out = d;
	return 0;
}

/* duration=N[s|m|h] (the unit is required, as in cassandra-stress) into nanoseconds. */
static int
parse_duration(struct ctx *c, const char *where, const char *tok, const char *v, uint64_t *ns)
{
	char num[32];
	size_t len = strlen(v);
	uint64_t x, unit;

	if (len < 2 || len >= sizeof(num))
		goto bad;
	switch (tolower((unsigned char)v[len - 1])) {
	case 's':
		unit = 1000000000ull;
		break;
	case 'm':
		unit = 60ull * 1000000000ull;
		break;
	case 'h':
		unit = 3600ull * 1000000000ull;
		break;
	default:
		goto bad;
	}
	memcpy(num, v, len - 1);
	num[len - 1] = '\0';
	if (parse_count(num, false, &x) < 0 || x == 0 || x > UINT64_MAX / unit)
		goto bad;
	*ns = x * unit;
	return 0;
bad:
	return fail(c,
		    "%s: '%s': give a positive whole number of seconds, minutes or hours, "
		    "e.g. duration=30s, duration=10m or duration=2h",
		    where, tok);
}

/* "a..b" (two or more dots), each with an optional k/m/b. */
static int
parse_range(const char *v, uint64_t *min, uint64_t *max)
{
	char lo[32];
	const char *dots = strstr(v, "..");
	size_t n;

	if (dots == NULL || (n = (size_t)(dots - v)) == 0 || n >= sizeof(lo))
		return -EINVAL;
	memcpy(lo, v, n);
	lo[n] = '\0';
	while (*dots == '.')
		dots++;
	if (parse_count(lo, true, min) < 0 || parse_count(dots, true, max) < 0)
		return -EINVAL;
	return 0;
}

/* ---- distributions ---- */

static void
dist_fixed(struct sm_stress_dist *d, uint64_t v)
{
	*d = (struct sm_stress_dist){ .kind = SM_STRESS_DIST_FIXED, .min = v, .max = v };
}

static void
dist_gaussian(struct sm_stress_dist *d, uint64_t min, uint64_t max, double stdvrng)
{
	*d = (struct sm_stress_dist){
		.kind = SM_STRESS_DIST_GAUSSIAN,
		.min = min,
		.max = max,
		.mean = ((double)min + (double)max) / 2,
		.stdev = (((double)max - (double)min) / 2) / stdvrng,
	};
}

/* EXP, EXTREME, QEXTREME and ~inverted ones (sm_stress_dist.h): SM_STRESS_DIST_OTHER. */
static int
parse_other_dist(struct ctx *c, const char *where, const char *tok, const char *spec,
		 struct sm_stress_dist *d)
{
	char why[300];

	memset(d, 0, sizeof(*d));
	if (sm_stress_xdist_parse(spec, &d->x, why, sizeof(why)) < 0)
		return fail(c, "%s: '%s': %s", where, tok, why);
	if (d->x.min < 0)
		return fail(c, "%s: '%s': the range must not be negative", where, tok);
	if (d->x.kind == SM_STRESS_XD_SEQ)
		return fail(c, "%s: '%s': an inverted sequence is not a population: use seq=",
			    where, tok);
	d->kind = SM_STRESS_DIST_OTHER;
	d->min = (uint64_t)d->x.min;
	d->max = (uint64_t)d->x.max;
	return 0;
}

/*
 * cassandra-stress's DIST(args): FIXED(v), UNIFORM(a..b), GAUSSIAN(a..b),
 * GAUSSIAN(a..b,stdvrng), GAUSSIAN(a..b,mean,stdev), SEQ(a..b) (when
 * @allow_seq), names case-insensitive with the aliases gauss, normal, norm.
 */
static int
parse_dist(struct ctx *c, const char *where, const char *tok, const char *spec, bool allow_seq,
	   struct sm_stress_dist *d)
{
	char name[16], args[128], *argv[4], *p;
	const char *open = strchr(spec, '(');
	size_t nlen, alen = strlen(spec);
	unsigned argc = 0, i;
	uint64_t min, max;

	if (spec[0] == '~')
		return parse_other_dist(c, where, tok, spec, d);
	if (open == NULL || alen < 2 || spec[alen - 1] != ')' ||
	    (nlen = (size_t)(open - spec)) == 0 || nlen >= sizeof(name) || alen - nlen - 2 == 0 ||
	    alen - nlen - 2 >= sizeof(args))
		return fail(c,
			    "%s: '%s': expected a distribution such as FIXED(34), UNIFORM(1..100) "
			    "or GAUSSIAN(1..1000000)",
			    where, tok);
	memcpy(name, spec, nlen);
	name[nlen] = '\0';
	memcpy(args, open + 1, alen - nlen - 2);
	args[alen - nlen - 2] = '\0';
	for (p = args; argc < SM_ARRAY_SIZE(argv);) {
		argv[argc++] = p;
		p = strchr(p, ',');
		if (p == NULL)
			break;
		*p++ = '\0';
	}
	if (p != NULL)
		goto bad_args;
	for (i = 0; i < argc; i++)
		if (argv[i][0] == '\0')
			goto bad_args;

	memset(d, 0, sizeof(*d));
	if (is(name, "fixed")) {
		if (argc != 1 || parse_count(argv[0], true, &min) < 0)
			goto bad_args;
		dist_fixed(d, min);
		return 0;
	}
	if (is(name, "exp") || is(name, "extr") || is(name, "extreme") || is(name, "qextr") ||
	    is(name, "qextreme") || is(name, "weibull"))
		return parse_other_dist(c, where, tok, spec, d);
	if (!is(name, "uniform") && !is(name, "gaussian") && !is(name, "gauss") &&
	    !is(name, "normal") && !is(name, "norm") && !is(name, "seq"))
		return fail(
			c,
			"%s: '%s': unknown distribution '%s': use FIXED, UNIFORM, GAUSSIAN or SEQ",
			where, tok, name);
	if (parse_range(argv[0], &min, &max) < 0)
		goto bad_args;
	if (min > max)
		return fail(c,
			    "%s: '%s': the range's minimum is above its maximum: write it as "
			    "min..max",
			    where, tok);
	if (is(name, "seq")) {
		if (!allow_seq)
			return fail(c,
				    "%s: '%s': SEQ is only a key population (-pop): use FIXED, "
				    "UNIFORM or GAUSSIAN here",
				    where, tok);
		if (argc != 1)
			goto bad_args;
		if (min == max)
			return fail(c, "%s: '%s': a sequence needs min < max", where, tok);
		d->kind = SM_STRESS_DIST_SEQ;
		d->min = min;
		d->max = max;
		return 0;
	}
	if (is(name, "uniform")) {
		if (argc != 1)
			goto bad_args;
		d->kind = SM_STRESS_DIST_UNIFORM;
		d->min = min;
		d->max = max;
	} else {
		double a = 3, b = 0;

		if (argc > 3 || (argc >= 2 && parse_double(argv[1], &a) < 0) ||
		    (argc == 3 && parse_double(argv[2], &b) < 0))
			goto bad_args;
		if (argc == 3) {
			if (b <= 0)
				return fail(c, "%s: '%s': the standard deviation must be positive",
					    where, tok);
			d->kind = SM_STRESS_DIST_GAUSSIAN;
			d->min = min;
			d->max = max;
			d->mean = a;
			d->stdev = b;
		} else {
			if (a <= 0)
				return fail(
					c,
					"%s: '%s': stdvrng (standard deviations from the mean to "
					"the edge) must be positive, e.g. GAUSSIAN(1..1000,3)",
					where, tok);
			dist_gaussian(d, min, max, a);
		}
	}
	if (min == max)
		dist_fixed(d, min);
	return 0;
bad_args:
	return fail(c,
		    "%s: '%s': bad arguments for %s: use FIXED(n), UNIFORM(min..max), "
		    "GAUSSIAN(min..max[,stdvrng]), GAUSSIAN(min..max,mean,stdev) or SEQ(min..max), "
		    "numbers with an optional k, m or b",
		    where, tok, name);
}

/* ---- consistency levels ---- */

static const struct {
	const char *name;
	enum sm_stress_cl cl;
} cl_names[] = {
	{ "ANY", SM_STRESS_CL_ANY },
	{ "ONE", SM_STRESS_CL_ONE },
	{ "TWO", SM_STRESS_CL_TWO },
	{ "THREE", SM_STRESS_CL_THREE },
	{ "QUORUM", SM_STRESS_CL_QUORUM },
	{ "ALL", SM_STRESS_CL_ALL },
	{ "LOCAL_QUORUM", SM_STRESS_CL_LOCAL_QUORUM },
	{ "EACH_QUORUM", SM_STRESS_CL_EACH_QUORUM },
	{ "SERIAL", SM_STRESS_CL_SERIAL },
	{ "LOCAL_SERIAL", SM_STRESS_CL_LOCAL_SERIAL },
	{ "LOCAL_ONE", SM_STRESS_CL_LOCAL_ONE },
};

const char *
sm_stress_cl_name(enum sm_stress_cl cl)
{
	unsigned i;

	for (i = 0; i < SM_ARRAY_SIZE(cl_names); i++)
		if (cl_names[i].cl == cl)
			return cl_names[i].name;
	return "?";
}

static int
parse_cl(struct ctx *c, const char *where, const char *tok, const char *v, bool serial_only,
	 enum sm_stress_cl *out)
{
	unsigned i;

	for (i = 0; i < SM_ARRAY_SIZE(cl_names); i++) {
		if (!is(v, cl_names[i].name))
			continue;
		if (serial_only && cl_names[i].cl != SM_STRESS_CL_SERIAL &&
		    cl_names[i].cl != SM_STRESS_CL_LOCAL_SERIAL)
			break;
		*out = cl_names[i].cl;
		return 0;
	}
	if (serial_only)
		return fail(c, "%s: '%s': the serial consistency level is SERIAL or LOCAL_SERIAL",
			    where, tok);
	return fail(c,
		    "%s: '%s': unknown consistency level: use ONE, QUORUM, LOCAL_QUORUM, "
		    "EACH_QUORUM, ALL, ANY, TWO, THREE, LOCAL_ONE, SERIAL or LOCAL_SERIAL",
		    where, tok);
}

/* ---- names ---- */

static const char *const cmd_names[] = {
	[SM_STRESS_CMD_WRITE] = "write",
	[SM_STRESS_CMD_READ] = "read",
	[SM_STRESS_CMD_MIXED] = "mixed",
	[SM_STRESS_CMD_COUNTER_WRITE] = "counter_write",
	[SM_STRESS_CMD_COUNTER_READ] = "counter_read",
	[SM_STRESS_CMD_HELP] = "help",
	[SM_STRESS_CMD_USER] = "user",
	[SM_STRESS_CMD_YCSB] = "ycsb",
	[SM_STRESS_CMD_SB] = "scylla-bench",
};

const char *
sm_stress_cmd_name(enum sm_stress_cmd cmd)
{
	return (unsigned)cmd < SM_ARRAY_SIZE(cmd_names) ? cmd_names[cmd] : "?";
}

static const char *const op_names[] = {
	[SM_STRESS_OP_WRITE] = "WRITE",
	[SM_STRESS_OP_READ] = "READ",
	[SM_STRESS_OP_COUNTER_WRITE] = "COUNTER_WRITE",
	[SM_STRESS_OP_COUNTER_READ] = "COUNTER_READ",
};

/* user ops are named as ops(...) names them, lower case (as cassandra-stress reports them) */
static char user_op_names[SM_STRESS_MAX_USER_OPS][SM_STRESS_PROFILE_NAME_MAX];

void
sm_stress_user_op_name_set(unsigned i, const char *name)
{
	if (i < SM_STRESS_MAX_USER_OPS)
		snprintf(user_op_names[i], sizeof(user_op_names[i]), "%s", name);
}

const char *
sm_stress_op_name(enum sm_stress_op op)
{
	if (op >= SM_STRESS_OP_USER0 && op < SM_STRESS_NR_OPS)
		return user_op_names[op - SM_STRESS_OP_USER0];
	return (unsigned)op < SM_ARRAY_SIZE(op_names) ? op_names[op] : "?";
}

/* ---- the command and its sub-options ---- */

/* mixed's ratio(read=N,write=M,...): weights of the op types, decimals allowed. */
static int
parse_ratio(struct ctx *c, const char *tok, const char *inner)
{
	static const char *const keys[] = {
		[SM_STRESS_OP_WRITE] = "write=",
		[SM_STRESS_OP_READ] = "read=",
		[SM_STRESS_OP_COUNTER_WRITE] = "counter_write=",
		[SM_STRESS_OP_COUNTER_READ] = "counter_read=",
	};
	struct sm_stress_settings *s = c->s;
	char buf[256], *part, *next;
	unsigned seen = 0, i;
	double sum = 0;
	size_t len = strlen(inner);

	if (len == 0 || inner[len - 1] != ')' || len >= sizeof(buf))
		return fail(c, "mixed: '%s': write the ratio as ratio(read=3,write=1)", tok);
	memcpy(buf, inner, len - 1);
	buf[len - 1] = '\0';
	memset(s->ratio, 0, sizeof(s->ratio));
	for (part = buf; part != NULL; part = next) {
		const char *v = NULL;
		double w;

		next = strchr(part, ',');
		if (next != NULL)
			*next++ = '\0';
		for (i = 0; i < SM_ARRAY_SIZE(keys); i++)
			if ((v = after(part, keys[i])) != NULL)
				break;
		if (v == NULL) {
			if (after(part, "user=") != NULL)
				return fail(c,
					    "mixed: '%s': user operations are not supported by "
					    "shardmark stress (no user profiles)",
					    tok);
			return fail(c,
				    "mixed: '%s': unknown operation '%s' in ratio(): use read=, "
				    "write=, counter_write= or counter_read=",
				    tok, part);
		}
		if (once(c, "mixed ratio()", &seen, i, keys[i]) < 0)
			return -EINVAL;
		if (!isdigit((unsigned char)*v) || parse_double(v, &w) < 0 || w < 0)
			return fail(c, "mixed: '%s': '%s' needs a non-negative number, e.g. read=3",
				    tok, part);
		s->ratio[i] = w;
		sum += w;
	}
	if (sum <= 0)
		return fail(c, "mixed: '%s': give at least one operation a non-zero ratio", tok);
	c->ratio_set = true;
	return 0;
}

static int
parse_command_opts(struct ctx *c, char **p, int n)
{
	struct sm_stress_settings *s = c->s;
	const char *where = sm_stress_cmd_name(s->cmd);
	bool mixed = s->cmd == SM_STRESS_CMD_MIXED, user = s->cmd == SM_STRESS_CMD_USER;
	unsigned seen = 0;
	int i, rc;

	for (i = 0; i < n; i++) {
		const char *t = p[i], *v = NULL;
		uint64_t x = 0;

		if ((v = after(t, "n=")) != NULL) {
			if ((rc = once(c, where, &seen, 0, "n=")) < 0 ||
			    (rc = num_arg(c, where, t, v, true, 1, INT64_MAX, &s->n_ops)) < 0)
				return rc;
		} else if ((v = after(t, "duration=")) != NULL) {
			if ((rc = once(c, where, &seen, 1, "duration=")) < 0 ||
			    (rc = parse_duration(c, where, t, v, &s->duration_ns)) < 0)
				return rc;
		} else if (after(t, "err<") != NULL || after(t, "n>") != NULL ||
			   after(t, "n<") != NULL) {
			return fail(c,
				    "%s: '%s': the run-until-stable mode (err<, n>, n<) is not "
				    "supported by shardmark stress: give n=<count> or "
				    "duration=<time>",
				    where, t);
		} else if (is(t, "no-warmup")) {
			if ((rc = once(c, where, &seen, 2, "no-warmup")) < 0)
				return rc;
			s->no_warmup = true;
		} else if ((v = after(t, "warmup=")) != NULL) {
			if ((rc = once(c, where, &seen, 3, "warmup=")) < 0 ||
			    (rc = num_arg(c, where, t, v, true, 0, INT64_MAX, &x)) < 0)
				return rc;
			c->warmup_set = true;
			c->warmup_n = x;
		} else if ((v = after(t, "truncate=")) != NULL) {
			if ((rc = once(c, where, &seen, 4, "truncate=")) < 0)
				return rc;
			if (is(v, "never"))
				s->truncate = SM_STRESS_TRUNCATE_NEVER;
			else if (is(v, "once"))
				s->truncate = SM_STRESS_TRUNCATE_ONCE;
			else if (is(v, "always"))
				s->truncate = SM_STRESS_TRUNCATE_ALWAYS;
			else
				return fail(c, "%s: '%s': use truncate=never, once or always",
					    where, t);
		} else if ((v = after(t, "cl=")) != NULL) {
			if ((rc = once(c, where, &seen, 5, "cl=")) < 0 ||
			    (rc = parse_cl(c, where, t, v, false, &s->cl)) < 0)
				return rc;
		} else if ((v = after(t, "serial-cl=")) != NULL) {
			if ((rc = once(c, where, &seen, 6, "serial-cl=")) < 0 ||
			    (rc = parse_cl(c, where, t, v, true, &s->serial_cl)) < 0)
				return rc;
		} else if ((v = after(t, "keysize=")) != NULL) {
			if ((rc = once(c, where, &seen, 7, "keysize=")) < 0 ||
			    (rc = uint_arg(c, where, t, v, 1, 65535, &s->key_size)) < 0)
				return rc;
		} else if ((v = after(t, "add=")) != NULL) {
			if ((rc = once(c, where, &seen, 8, "add=")) < 0 ||
			    (rc = parse_dist(c, where, t, v, false, &s->counter_add)) < 0)
				return rc;
		} else if (mixed && (v = after(t, "ratio(")) != NULL) {
			if ((rc = once(c, where, &seen, 9, "ratio()")) < 0 ||
			    (rc = parse_ratio(c, t, v)) < 0)
				return rc;
		} else if (user && (v = after(t, "profile=")) != NULL) {
			if ((rc = once(c, where, &seen, 11, "profile=")) < 0)
				return rc;
			c->user_profile = v;
		} else if (user && (v = after(t, "ops(")) != NULL) {
			if ((rc = once(c, where, &seen, 12, "ops()")) < 0)
				return rc;
			c->user_ops = v;
		} else if ((mixed || user) && (v = after(t, "clustering=")) != NULL) {
			if ((rc = once(c, where, &seen, 10, "clustering=")) < 0 ||
			    (rc = parse_dist(c, where, t, v, false, &s->clustering)) < 0)
				return rc;
			if (s->clustering.min == 0)
				return fail(
					c,
					"%s: '%s': runs of operations need a length of at least 1",
					where, t);
		} else if (after(t, "ratio(") != NULL || after(t, "clustering=") != NULL) {
			return fail(c, "%s: '%s' applies only to the mixed and user commands", where, t);
		} else if (after(t, "profile=") != NULL || after(t, "ops(") != NULL) {
			return fail(c, "%s: '%s' applies only to the user command", where, t);
		} else {
			return fail(c,
				    "%s: unknown sub-option '%s' (expected n=, duration=, cl=, "
				    "no-warmup, warmup=, truncate=, serial-cl=, keysize=, add=%s; "
				    "options start with '-')",
				    where, t, mixed ? ", ratio(...), clustering=" : "");
		}
	}
	if (s->n_ops != 0 && s->duration_ns != 0)
		return fail(c, "%s: give either n= or duration=, not both", where);
	if (s->n_ops == 0 && s->duration_ns == 0)
		return fail(c,
			    "%s: give the run length as n=<count> (e.g. n=1000000 or n=1m) or "
			    "duration=<time> (e.g. duration=10m); cassandra-stress's default "
			    "run-until-stable mode is not supported by shardmark stress",
			    where);
	if (c->warmup_set && s->no_warmup)
		return fail(c, "%s: no-warmup and warmup= contradict each other: keep one", where);
	return 0;
}

/* ---- -pop ---- */

static int
parse_pop(struct ctx *c, char **p, int n)
{
	static const char where[] = "-pop";
	struct sm_stress_pop *pop = &c->s->pop;
	unsigned seen = 0;
	bool seq = false, dist = false, nowrap = false;
	int i, rc;

	for (i = 0; i < n; i++) {
		const char *t = p[i], *v = NULL;

		if ((v = after(t, "seq=")) != NULL) {
			if ((rc = once(c, where, &seen, 0, "seq=")) < 0)
				return rc;
			if (parse_range(v, &pop->dist.min, &pop->dist.max) < 0)
				return fail(
					c,
					"-pop: '%s': write the sequence as seq=first..last, e.g. "
					"seq=1..1000000 or seq=1..1m",
					t);
			if (pop->dist.min >= pop->dist.max)
				return fail(c, "-pop: '%s': a sequence needs first < last", t);
			pop->dist.kind = SM_STRESS_DIST_SEQ;
			seq = true;
		} else if ((v = after(t, "dist=")) != NULL) {
			if ((rc = once(c, where, &seen, 1, "dist=")) < 0 ||
			    (rc = parse_dist(c, where, t, v, true, &pop->dist)) < 0)
				return rc;
			dist = true;
		} else if (is(t, "no-wrap")) {
			if ((rc = once(c, where, &seen, 2, "no-wrap")) < 0)
				return rc;
			nowrap = true;
		} else if ((v = after(t, "contents=")) != NULL) {
			/* Row order inside a partition; standard1 has one row per partition. */
			if ((rc = once(c, where, &seen, 3, "contents=")) < 0)
				return rc;
			if (!is(v, "sorted") && !is(v, "shuffled"))
				return fail(c,
					    "-pop: '%s': use contents=sorted or contents=shuffled",
					    t);
		} else if ((v = after(t, "read-lookback=")) != NULL) {
			if ((rc = once(c, where, &seen, 4, "read-lookback=")) < 0 ||
			    (rc = parse_dist(c, where, t, v, false, &pop->read_lookback)) < 0)
				return rc;
			pop->lookback = true;
		} else {
			return fail(c,
				    "-pop: unknown sub-option '%s' (expected seq=first..last, "
				    "dist=DIST(min..max) or no-wrap)",
				    t);
		}
	}
	if (seq && dist)
		return fail(c, "-pop: give either seq= or dist=, not both");
	if (nowrap && !seq)
		return fail(c, "-pop: no-wrap applies only to seq=first..last");
	if (seq || dist) {
		pop->set_by_user = true;
		pop->wrap = !nowrap;
	}
	return 0;
}

/* ---- sub-option tables ---- */

/*
 * Most options are a list of sub-options, each a row of (name, type,
 * where the value goes, bounds), as config.c's SM_CONFIG_TABLE and DPDK's
 * eal_option_list.h: parse_subopts() matches the words against the rows,
 * refuses repeats, parses and checks the value with the row's message,
 * and stores it. An option's own function keeps only what ties its
 * sub-options together.
 */
enum subopt_type {
	SO_FLAG,   /* a word (or its alias): bool = true */
	SO_BOOL2,  /* one of two words, "name/alt": bool = (word is name) */
	SO_UINT,   /* name=N, N in [min, max]: unsigned */
	SO_U16,	   /* the same, stored as uint16_t */
	SO_U64,	   /* the same, stored as uint64_t */
	SO_STR,	   /* name=TEXT: an owned copy (char *) */
	SO_FILE,   /* name=PATH: the same, not empty */
	SO_ENUM,   /* name=WORD, one of vals: its value (an enum) */
	SO_REFUSE, /* name...: refused with the row's text */
	SO_FN,	   /* name=...: the row's own setter */
};

#define SO_NONE SIZE_MAX      /* no field: checked and otherwise ignored */
#define SO_CQL_ONLY (1u << 0) /* a CQL setting: not with -mode alternator */
#define SO_ALT_ONLY (1u << 1) /* only with -mode alternator */
#define SO_IN_CTX (1u << 2)   /* the field is the parser's (struct ctx), not a setting */
#define SO_MANY (1u << 3)     /* may be given more than once */

#define S_OFF(field) offsetof(struct sm_stress_settings, field)
#define C_OFF(field) offsetof(struct ctx, field)

struct subopt_val {
	const char *word;
	int val;
	const char *why; /* refused: why, and what to give instead */
};

struct subopt {
	const char *name; /* "retries=" takes a value; "ignore" is a word */
	const char *alt;  /* SO_FLAG, SO_BOOL2: the other word */
	enum subopt_type type;
	size_t off;
	uint64_t min, max;
	const struct subopt_val *vals; /* SO_ENUM, ending with { NULL } */
	/* SO_ENUM: after "'word': " for a value not in vals; SO_REFUSE: why */
	const char *text;
	unsigned flags;
	int (*set)(struct ctx *c, const char *where, const char *tok, const char *v);
};

/* The row @tok names, with its value in *@v (NULL for a word); NULL for none. */
static const struct subopt *
subopt_find(const struct subopt *tab, const char *tok, const char **v)
{
	size_t len;

	for (; tab->name != NULL; tab++) {
		len = strlen(tab->name);
		*v = NULL;
		if (tab->name[len - 1] == '=' || tab->type == SO_REFUSE) {
			if ((*v = after(tok, tab->name)) != NULL)
				return tab;
		} else if (is(tok, tab->name) || (tab->alt != NULL && is(tok, tab->alt))) {
			return tab;
		}
	}
	return NULL;
}

/* "use name=a, b or c" from the values that are not refused. */
static int
subopt_bad_enum(struct ctx *c, const char *where, const char *tok, const struct subopt *o)
{
	char list[256];
	size_t off = 0, k, n = 0, i = 0;

	for (k = 0; o->vals[k].word != NULL; k++)
		n += o->vals[k].why == NULL;
	for (k = 0; o->vals[k].word != NULL; k++) {
		if (o->vals[k].why != NULL)
			continue;
		off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s",
					i == 0	     ? ""
					: i + 1 == n ? " or "
						     : ", ",
					o->vals[k].word);
		i++;
	}
	return fail(c, "%s: '%s': use %s%s", where, tok, o->name, list);
}

static int
subopt_set(struct ctx *c, const char *where, const struct subopt *o, const char *tok, const char *v)
{
	char *f = o->off == SO_NONE ? NULL
				    : (o->flags & SO_IN_CTX ? (char *)c : (char *)c->s) + o->off;
	uint64_t x = 0;
	unsigned u = 0;
	size_t k;
	int rc;

	switch (o->type) {
	case SO_FLAG:
		if (f != NULL)
			*(bool *)f = true;
		return 0;
	case SO_BOOL2:
		*(bool *)f = is(tok, o->name);
		return 0;
	case SO_UINT:
	case SO_U16:
		rc = uint_arg(c, where, tok, v, o->min, o->max, &u);
		if (rc == 0 && f != NULL && o->type == SO_UINT)
			*(unsigned *)f = u;
		else if (rc == 0 && f != NULL)
			*(uint16_t *)f = (uint16_t)u;
		return rc;
	case SO_U64:
		rc = num_arg(c, where, tok, v, false, o->min, o->max, &x);
		if (rc == 0 && f != NULL)
			*(uint64_t *)f = x;
		return rc;
	case SO_FILE:
		if (*v == '\0')
			return fail(c, "%s: '%s': give a file name", where, tok);
		/* fall through */
	case SO_STR:
		return f != NULL ? dup_str(c, (char **)f, v) : 0; /* SO_NONE: accepted, unused */
	case SO_ENUM:
		for (k = 0; o->vals[k].word != NULL; k++) {
			if (!is(v, o->vals[k].word))
				continue;
			if (o->vals[k].why != NULL)
				return fail(c, "%s: '%s': %s", where, tok, o->vals[k].why);
			if (f != NULL)
				memcpy(f, &o->vals[k].val, sizeof(int));
			return 0;
		}
		if (o->text != NULL)
			return fail(c, "%s: '%s': %s", where, tok, o->text);
		return subopt_bad_enum(c, where, tok, o);
	case SO_REFUSE:
		return fail(c, "%s: '%s': %s", where, tok, o->text);
	case SO_FN:
		return o->set(c, where, tok, v);
	}
	return -EINVAL;
}

/*
 * Apply the words @p[0..@n) of option @where through @tab; a word no row
 * names gets "unknown sub-option 'word' @expected". *@seen gets a bit per
 * row given (its index in @tab).
 */
static int
parse_subopts(struct ctx *c, const char *where, const struct subopt *tab, const char *expected,
	      char **p, int n, unsigned *seen)
{
	const struct subopt *o;
	const char *v;
	char name[64];
	int i, rc;

	*seen = 0;
	for (i = 0; i < n; i++) {
		o = subopt_find(tab, p[i], &v);
		if (o == NULL)
			return fail(c, "%s: unknown sub-option '%s' %s", where, p[i], expected);
		if (o->type != SO_REFUSE && !(o->flags & SO_MANY)) {
			snprintf(name, sizeof(name), "%s%s%s", o->name, o->alt != NULL ? "/" : "",
				 o->alt != NULL ? o->alt : "");
			if ((rc = once(c, where, seen, (unsigned)(o - tab), name)) < 0)
				return rc;
		}
		if ((rc = subopt_set(c, where, o, p[i], v)) < 0)
			return rc;
		if (o->flags & SO_CQL_ONLY)
			c->cql_only_opt = p[i];
		if (o->flags & SO_ALT_ONLY)
			c->alt_only_opt = p[i];
	}
	return 0;
}

/* Whether the row of @tab called @name was given (@seen from parse_subopts()). */
static bool
subopt_given(const struct subopt *tab, unsigned seen, const char *name)
{
	unsigned i;

	for (i = 0; tab[i].name != NULL; i++)
		if (strcmp(tab[i].name, name) == 0)
			return seen & (1u << i);
	return false;
}

/* ---- -graph ---- */

static const struct subopt graph_subopts[] = {
	{ "file=", .type = SO_FILE, .off = S_OFF(graph.file) },
	{ "title=", .type = SO_STR, .off = S_OFF(graph.title) },
	{ "revision=", .type = SO_STR, .off = S_OFF(graph.revision) },
	{ "op=", .type = SO_REFUSE,
	  .text = "renaming the operation in the report is not supported: its op types keep "
		  "their names (WRITE, READ, ...)" },
	{ NULL },
};

static int
parse_graph(struct ctx *c, char **p, int n)
{
	unsigned seen;
	int rc = parse_subopts(c, "-graph", graph_subopts, "(expected file=, title= or revision=)",
			       p, n, &seen);

	if (rc < 0)
		return rc;
	if (!subopt_given(graph_subopts, seen, "file="))
		return fail(c, "-graph: give the report's file, e.g. -graph file=report.html");
	return 0;
}

/* ---- -col ---- */

static int
set_col_count(struct ctx *c, const char *where, const char *tok, const char *v)
{
	struct sm_stress_dist *d = &c->s->col.count;
	int rc = parse_dist(c, where, tok, v, false, d);

	if (rc < 0)
		return rc;
	if (d->min < 1 || d->max > MAX_COLUMNS)
		return fail(c, "-col: '%s': give 1 to %u columns", tok, MAX_COLUMNS);
	return 0;
}

static int
set_col_size(struct ctx *c, const char *where, const char *tok, const char *v)
{
	struct sm_stress_dist *d = &c->s->col.size;
	int rc = parse_dist(c, where, tok, v, false, d);

	if (rc < 0)
		return rc;
	if (d->max > MAX_CELL_BYTES)
		return fail(c, "-col: '%s': cells of at most %u bytes", tok, MAX_CELL_BYTES);
	return 0;
}

static const struct subopt col_subopts[] = {
	{ "n=", .type = SO_FN, .set = set_col_count },
	{ "size=", .type = SO_FN, .set = set_col_size },
	{ "slice", .type = SO_FLAG, .off = S_OFF(col.slice) },
	{ "timestamp=", .type = SO_U64, .off = S_OFF(col.timestamp), .min = 1, .max = INT64_MAX },
	{ "names=", .type = SO_REFUSE,
	  .text = "custom column names are not supported by shardmark stress (columns are "
		  "C0..C<n-1>): use n=FIXED(<count>)" },
	{ NULL },
};

static int
parse_col(struct ctx *c, char **p, int n)
{
	unsigned seen;

	return parse_subopts(c, "-col", col_subopts,
			     "(expected n=DIST, size=DIST, slice or timestamp=)", p, n, &seen);
}
/* ---- -rate ---- */

static int
parse_per_s(struct ctx *c, const char *tok, const char *v, uint64_t *out)
{
	char num[32];
	size_t len = strlen(v);

	if (len < 3 || len >= sizeof(num) || !is(v + len - 2, "/s"))
		goto bad;
	memcpy(num, v, len - 2);
	num[len - 2] = '\0';
	if (parse_count(num, false, out) < 0 || *out > INT32_MAX)
		goto bad;
	return 0;
bad:
	return fail(c, "-rate: '%s': give operations per second as <number>/s, e.g. %.*s1000/s",
		    tok, (int)(v - tok), tok);
}

/*
 * A latency or settle time: a number with us, ms or s (a bare number is
 * milliseconds); 0 is allowed where @zero.
 */
static int
parse_time_arg(struct ctx *c, const char *where, const char *tok, const char *v, bool zero,
	       uint64_t *ns)
{
	double d, unit = 1e6;
	char num[32];
	size_t len = strlen(v);

	if (len >= sizeof(num))
		goto bad;
	memcpy(num, v, len + 1);
	if (len > 2 && is(num + len - 2, "us")) {
		unit = 1e3;
		num[len - 2] = '\0';
	} else if (len > 2 && is(num + len - 2, "ms")) {
		num[len - 2] = '\0';
	} else if (len > 1 && tolower((unsigned char)num[len - 1]) == 's') {
		unit = 1e9;
		num[len - 1] = '\0';
	}
	if (parse_double(num, &d) < 0 || d < 0 || (d == 0 && !zero) || d * unit > 3.6e12)
		goto bad;
	*ns = (uint64_t)(d * unit);
	return 0;
bad:
	return fail(c, "%s: '%s': give a time with a unit, e.g. 2ms, 500us or 1.5s (up to an hour)",
		    where, tok);
}

/* R/s, or R alone (-rate search's rates), into @out. */
static int
parse_search_rate(struct ctx *c, const char *tok, const char *v, uint64_t *out)
{
	uint64_t x;

	if (strchr(v, '/') != NULL)
		return parse_per_s(c, tok, v, out);
	if (parse_count(v, true, &x) < 0 || x == 0 || x > INT32_MAX)
		return fail(c, "-rate: '%s': give operations per second as <number>/s, e.g. %.*s1000/s",
			    tok, (int)(v - tok), tok);
	*out = x;
	return 0;
}

/*
 * -rate search's sub-options (sm_stress_search.h): the latency bound and
 * the rates tried. The steps are open-loop (fixed=, latency from each
 * operation's intended start), at threads= operations in flight at most.
 */
static int
parse_rate_search(struct ctx *c, const char *t, const char *v, unsigned *seen)
{
	static const char where[] = "-rate search";
	struct sm_stress_search_opts *o = &c->s->rate.search;
	int rc;

	if ((v = after(t, "percentile=")) != NULL) {
		if ((rc = once(c, where, seen, 8, "percentile=")) < 0)
			return rc;
		if (sm_stress_search_parse_percentile(v, &o->percentile) < 0)
			return fail(c, "%s: '%s': give a percentile as p50, p99, p99.9 (or p999)",
				    where, t);
		return 0;
	}
	if ((v = after(t, "bound=")) != NULL)
		return (rc = once(c, where, seen, 9, "bound=")) < 0
			       ? rc
			       : parse_time_arg(c, where, t, v, false, &o->bound_ns);
	if ((v = after(t, "start=")) != NULL)
		return (rc = once(c, where, seen, 10, "start=")) < 0
			       ? rc
			       : parse_search_rate(c, t, v, &o->start);
	if ((v = after(t, "step=")) != NULL)
		return (rc = once(c, where, seen, 11, "step=")) < 0
			       ? rc
			       : parse_search_rate(c, t, v, &o->step);
	if ((v = after(t, "max=")) != NULL)
		return (rc = once(c, where, seen, 12, "max=")) < 0
			       ? rc
			       : parse_search_rate(c, t, v, &o->max);
	if ((v = after(t, "resolution=")) != NULL)
		return (rc = once(c, where, seen, 13, "resolution=")) < 0
			       ? rc
			       : parse_search_rate(c, t, v, &o->resolution);
	if ((v = after(t, "settle=")) != NULL)
		return (rc = once(c, where, seen, 14, "settle=")) < 0
			       ? rc
			       : parse_time_arg(c, where, t, v, true, &o->settle_ns);
	if ((v = after(t, "errors=")) != NULL)
		return (rc = once(c, where, seen, 15, "errors=")) < 0
			       ? rc
			       : num_arg(c, where, t, v, true, 0, INT64_MAX, &o->max_errors);
	if ((v = after(t, "min-achieved=")) != NULL) {
		char num[8];
		size_t len = strlen(v);

		if ((rc = once(c, where, seen, 16, "min-achieved=")) < 0)
			return rc;
		if (len > 0 && v[len - 1] == '%' && len < sizeof(num)) {
			memcpy(num, v, len - 1);
			num[len - 1] = '\0';
			v = num;
		}
		return uint_arg(c, where, t, v, 1, 100, &o->min_achieved);
	}
	return fail(c,
		    "%s: unknown sub-option '%s' (expected percentile=, bound=, start=, step=, "
		    "max=, resolution=, settle=, errors=, min-achieved= or threads=)",
		    where, t);
}

/*
 * -rate is one of cassandra-stress's SettingsRate groups: threads=N
 * [throttle=|fixed=], or [auto] threads>=A threads<=B (the thread ramp), or
 * our `search ...`; sub-options of two groups are refused together.
 */
static int
parse_rate(struct ctx *c, char **p, int n)
{
	static const char where[] = "-rate";
	struct sm_stress_rate *r = &c->s->rate;
	struct sm_stress_search_opts *o = &r->search;
	uint64_t throttle = 0, fixed = 0;
	unsigned seen = 0, min_t = 4, max_t = 1000;
	bool ramp = false, search = false;
	int i, rc;

	for (i = 0; i < n; i++)
		if (is(p[i], "search"))
			search = true;
	for (i = 0; i < n; i++) {
		const char *t = p[i], *v = NULL;

		if (is(t, "auto")) {
			if ((rc = once(c, where, &seen, 3, "auto")) < 0)
				return rc;
			o->auto_stop = true;
			ramp = true;
		} else if ((v = after(t, "threads>=")) != NULL) {
			if ((rc = once(c, where, &seen, 4, "threads>=")) < 0 ||
			    (rc = uint_arg(c, where, t, v, 1, MAX_THREADS, &min_t)) < 0)
				return rc;
			ramp = true;
		} else if ((v = after(t, "threads<=")) != NULL) {
			if ((rc = once(c, where, &seen, 5, "threads<=")) < 0 ||
			    (rc = uint_arg(c, where, t, v, 1, MAX_THREADS, &max_t)) < 0)
				return rc;
			ramp = true;
		} else if (is(t, "search")) {
			if ((rc = once(c, where, &seen, 6, "search")) < 0)
				return rc;
		} else if ((v = after(t, "threads=")) != NULL) {
			if ((rc = once(c, where, &seen, 0, "threads=")) < 0 ||
			    (rc = uint_arg(c, where, t, v, 1, MAX_THREADS, &r->threads)) < 0)
				return rc;
		} else if ((v = after(t, "throttle=")) != NULL) {
			if ((rc = once(c, where, &seen, 1, "throttle=")) < 0 ||
			    (rc = parse_per_s(c, t, v, &throttle)) < 0)
				return rc;
		} else if ((v = after(t, "fixed=")) != NULL) {
			if ((rc = once(c, where, &seen, 2, "fixed=")) < 0 ||
			    (rc = parse_per_s(c, t, v, &fixed)) < 0)
				return rc;
		} else if (search) {
			if ((rc = parse_rate_search(c, t, v, &seen)) < 0)
				return rc;
		} else {
			return fail(c,
				    "-rate: unknown sub-option '%s' (expected threads=N, "
				    "throttle=N/s or fixed=N/s; auto, threads>=N and threads<=N; or "
				    "search ...)",
				    t);
		}
	}
	if (ramp && (seen & 7))
		return fail(c, "-rate: auto, threads>= and threads<= ramp the thread count: they "
			       "do not go with threads=, throttle= or fixed= (SettingsRate takes "
			       "one group); give one or the other");
	if (ramp && search)
		return fail(c, "-rate: search steps the rate at a fixed threads=: it does not go "
			       "with auto, threads>= or threads<=");
	if (ramp) {
		if (min_t > max_t)
			return fail(c, "-rate: threads>=%u is above threads<=%u: give a range", min_t,
				    max_t);
		o->kind = SM_STRESS_SEARCH_THREADS;
		o->min_threads = min_t;
		o->max_threads = max_t;
		r->threads = min_t;
		return 0;
	}
	if (search) {
		if (throttle != 0 || fixed != 0)
			return fail(c, "-rate: search chooses each step's rate (start=, step=, "
				       "max=): it does not go with throttle= or fixed=");
		if (!(seen & (1u << 9)))
			return fail(c, "-rate search: give the latency bound, e.g. bound=2ms (with "
				       "percentile=p99, the default)");
		o->kind = SM_STRESS_SEARCH_RATE;
		if (o->percentile == 0)
			o->percentile = 99;
		if (o->start == 0)
			o->start = 1000;
		if (o->step == 0)
			o->step = o->start;
		if (o->max == 0)
			o->max = (uint64_t)INT32_MAX;
		if (o->max < o->start)
			return fail(c, "-rate search: max=%" PRIu64 "/s is below start=%" PRIu64
				       "/s: give max= at or above start=",
				    o->max, o->start);
		if (o->resolution == 0)
			o->resolution = o->step / 4 ? o->step / 4 : 1;
		if (!(seen & (1u << 14)))
			o->settle_ns = 1000000000ull;
		if (o->min_achieved == 0)
			o->min_achieved = 90;
		r->kind = SM_STRESS_RATE_FIXED;
		r->ops_per_s = o->start;
		return 0;
	}
	if (!(seen & 1))
		return fail(c, "-rate: give threads=N, or auto [threads>=N] [threads<=N] to ramp "
			       "it, or search bound=T to search a rate");
	/* As SettingsRate: a zero rate means "not set", and only one may be set. */
	if (throttle != 0 && fixed != 0)
		return fail(c, "-rate: can't have both throttle= and fixed= set, choose one "
			       "(throttle= caps the rate and reports service time; fixed= also "
			       "reports the time from each operation's scheduled start)");
	if (fixed != 0) {
		r->kind = SM_STRESS_RATE_FIXED;
		r->ops_per_s = fixed;
	} else if (throttle != 0) {
		r->kind = SM_STRESS_RATE_THROTTLE;
		r->ops_per_s = throttle;
	}
	return 0;
}

/* ---- -schema ---- */

/* The key=value pairs of "name(k=v,k=v)" after "name(" into @kv; "strategy=" into @strategy. */
static int
parse_kv_group(struct ctx *c, const char *tok, const char *name, const char *inner,
	       struct sm_stress_kv *kv, unsigned *nkv, char **strategy, unsigned *factor,
	       bool *factor_set)
{
	char buf[512], *part, *next;
	size_t len = strlen(inner);
	unsigned i;
	int rc;

	if (len == 0 || inner[len - 1] != ')' || len >= sizeof(buf))
		return fail(c, "-schema: '%s': write it as %s(key=value,...)", tok, name);
	memcpy(buf, inner, len - 1);
	buf[len - 1] = '\0';
	if (buf[0] == '\0')
		return 0;
	for (part = buf; part != NULL; part = next) {
		const char *v;
		char *eq;

		next = strchr(part, ',');
		if (next != NULL)
			*next++ = '\0';
		eq = strchr(part, '=');
		if (eq == NULL || eq == part || eq[1] == '\0' || strchr(eq + 1, '=') != NULL)
			return fail(c, "-schema: '%s': '%s' in %s(...) is not key=value", tok, part,
				    name);
		if ((v = after(part, "strategy=")) != NULL) {
			if (*strategy != NULL)
				return fail(c, "-schema: '%s': strategy= given twice", tok);
			if ((rc = dup_str(c, strategy, v)) < 0)
				return rc;
			continue;
		}
		if (factor != NULL && (v = after(part, "factor=")) != NULL) {
			if (*factor_set)
				return fail(c, "-schema: '%s': factor= given twice", tok);
			if ((rc = uint_arg(c, "-schema", part, v, 1, 100, factor)) < 0)
				return rc;
			*factor_set = true;
			continue;
		}
		*eq = '\0';
		for (i = 0; i < *nkv; i++)
			if (strcmp(kv[i].key, part) == 0)
				return fail(c, "-schema: '%s': %s set twice", tok, part);
		if (*nkv >= SM_STRESS_MAX_KV)
			return fail(c, "-schema: '%s': more than %u options in %s(...)", tok,
				    SM_STRESS_MAX_KV, name);
		kv[*nkv].key = sm_strdup(part);
		kv[*nkv].value = sm_strdup(eq + 1);
		(*nkv)++;
		if (kv[*nkv - 1].key == NULL || kv[*nkv - 1].value == NULL)
			return -ENOMEM;
	}
	return 0;
}

/* ReplicationStrategy.validate: the short or the full class name of a known strategy. */
static int
check_strategy(struct ctx *c, const char *tok, char **strategy)
{
	static const char *const known[] = { "NetworkTopologyStrategy", "SimpleStrategy",
					     "EverywhereStrategy" };
	char full[128];
	const char *shortname = *strategy;
	unsigned i;

	if (after(shortname, LOCATOR_PKG) != NULL)
		shortname += strlen(LOCATOR_PKG);
	for (i = 0; i < SM_ARRAY_SIZE(known); i++) {
		if (strcmp(shortname, known[i]) != 0)
			continue;
		snprintf(full, sizeof(full), LOCATOR_PKG "%s", known[i]);
		return dup_str(c, strategy, full);
	}
	return fail(c,
		    "-schema: '%s': unknown replication strategy '%s': use "
		    "NetworkTopologyStrategy, SimpleStrategy or EverywhereStrategy",
		    tok, *strategy);
}

static void
free_kv(struct sm_stress_kv *kv, unsigned n);

static int
tablets_bool(struct ctx *c, const char *tok, const char *v, int *out)
{
	if (strcmp(v, "true") == 0)
		*out = 1;
	else if (strcmp(v, "false") == 0)
		*out = 0;
	else
		return fail(c, "-schema: '%s': give true or false", tok);
	return 0;
}

/*
 * tablets=true|false, or tablets(enabled=true|false,initial=N): the keyspace's
 * tablets map of ScyllaDB's CREATE KEYSPACE (cql3/statements/ks_prop_defs.cc:
 * 'enabled' and 'initial'). cassandra-stress has no such option; with it
 * the loader makes the keyspace ScyllaDB's default makes it (or not).
 */
static int
parse_tablets(struct ctx *c, const char *tok, const char *v, bool group)
{
	struct sm_stress_schema *sc = &c->s->schema;
	struct sm_stress_kv kv[SM_STRESS_MAX_KV];
	unsigned nkv = 0, i;
	char *none = NULL;
	int rc;

	if (!group)
		return tablets_bool(c, tok, v, &sc->tablets);
	rc = parse_kv_group(c, tok, "tablets", v, kv, &nkv, &none, NULL, NULL);
	if (none != NULL && rc == 0)
		rc = fail(c, "-schema: '%s': tablets(...) takes enabled= and initial=", tok);
	for (i = 0; i < nkv && rc == 0; i++) {
		if (strcmp(kv[i].key, "enabled") == 0)
			rc = tablets_bool(c, tok, kv[i].value, &sc->tablets);
		else if (strcmp(kv[i].key, "initial") == 0)
			rc = uint_arg(c, "-schema", tok, kv[i].value, 1, 1u << 20,
				      &sc->tablets_initial);
		else
			rc = fail(c, "-schema: '%s': unknown tablets option '%s' (enabled=, initial=)",
				  tok, kv[i].key);
	}
	if (rc == 0 && sc->tablets_initial > 0 && sc->tablets == 0)
		rc = fail(c, "-schema: '%s': initial= needs the tablets enabled", tok);
	else if (rc == 0 && sc->tablets < 0)
		sc->tablets = 1; /* tablets(initial=N) means them */
	sm_free(none);
	free_kv(kv, nkv);
	return rc;
}

static int
parse_schema(struct ctx *c, char **p, int n)
{
	static const char where[] = "-schema";
	struct sm_stress_schema *sc = &c->s->schema;
	bool factor_set = false;
	char *strategy = NULL;
	unsigned seen = 0, i;
	int rc = 0;

	for (i = 0; i < (unsigned)n; i++) {
		const char *t = p[i], *v = NULL;

		if ((v = after(t, "replication(")) != NULL) {
			if ((rc = once(c, where, &seen, 0, "replication()")) < 0 ||
			    (rc = parse_kv_group(c, t, "replication", v, sc->repl, &sc->n_repl,
						 &strategy, &sc->factor, &factor_set)) < 0)
				goto out;
			if (strategy != NULL && (rc = check_strategy(c, t, &strategy)) < 0)
				goto out;
		} else if ((v = after(t, "compaction(")) != NULL) {
			if ((rc = once(c, where, &seen, 1, "compaction()")) < 0 ||
			    (rc = parse_kv_group(c, t, "compaction", v, sc->compaction,
						 &sc->n_compaction, &sc->compaction_strategy, NULL,
						 NULL)) < 0)
				goto out;
		} else if ((v = after(t, "keyspace=")) != NULL) {
			if ((rc = once(c, where, &seen, 2, "keyspace=")) < 0)
				goto out;
			if (*v == '\0' || strlen(v) > 48) {
				rc = fail(
					c,
					"-schema: '%s': give a keyspace name of 1 to 48 characters",
					t);
				goto out;
			}
			if ((rc = dup_str(c, &sc->keyspace, v)) < 0)
				goto out;
		} else if ((v = after(t, "compression=")) != NULL) {
			if ((rc = once(c, where, &seen, 3, "compression=")) < 0 ||
			    (rc = dup_str(c, &sc->compression, v)) < 0)
				goto out;
		} else if ((v = after(t, "tablets(")) != NULL || (v = after(t, "tablets=")) != NULL) {
			if ((rc = once(c, where, &seen, 4, "tablets")) < 0 ||
			    (rc = parse_tablets(c, t, v, after(t, "tablets(") != NULL)) < 0)
				goto out;
		} else if (after(t, "storage(") != NULL) {
			rc = fail(c,
				  "-schema: '%s': keyspace storage options are not supported by "
				  "shardmark stress",
				  t);
			goto out;
		} else {
			rc = fail(c,
				  "-schema: unknown sub-option '%s' (expected "
				  "replication(strategy=X,factor=N), compaction(strategy=X,...), "
				  "keyspace=NAME, compression=X or tablets=true|false)",
				  t);
			goto out;
		}
	}
	if (strategy != NULL) {
		sm_free(sc->strategy);
		sc->strategy = strategy;
		strategy = NULL;
	}
	c->factor_set = factor_set;
out:
	sm_free(strategy);
	return rc;
}

/* ---- -node ---- */

static int
add_host(struct ctx *c, const char *h, size_t len)
{
	struct sm_stress_nodes *nd = &c->s->nodes;
	char **hosts;

	if (len == 0)
		return fail(
			c, "-node: empty host name in the list: separate hosts with single commas");
	if (nd->n >= MAX_NODES)
		return fail(c, "-node: more than %u nodes", MAX_NODES);
	hosts = sm_realloc(nd->hosts, (nd->n + 1) * sizeof(*hosts));
	if (hosts == NULL)
		return -ENOMEM;
	nd->hosts = hosts;
	hosts[nd->n] = sm_malloc(len + 1);
	if (hosts[nd->n] == NULL)
		return -ENOMEM;
	memcpy(hosts[nd->n], h, len);
	hosts[nd->n][len] = '\0';
	nd->n++;
	return 0;
}

static void
free_hosts(struct sm_stress_nodes *nd)
{
	unsigned i;

	for (i = 0; i < nd->n; i++)
		sm_free(nd->hosts[i]);
	sm_free(nd->hosts);
	nd->hosts = NULL;
	nd->n = 0;
}

/* SettingsNode file=: one node per line, empty lines skipped. */
static int
read_node_file(struct ctx *c, const char *tok, const char *path)
{
	char line[512];
	FILE *f = fopen(path, "r");
	int rc = 0;

	if (f == NULL) {
		rc = -errno;
		fail(c,
		     "-node: '%s': cannot open '%s' (%s): give a readable file with one node per "
		     "line",
		     tok, path, strerror(errno));
		return rc;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		size_t len = strcspn(line, "\r\n");

		if (len == 0)
			continue;
		if ((rc = add_host(c, line, len)) < 0)
			goto close_file;
	}
	if (c->s->nodes.n == 0)
		rc = fail(c, "-node: '%s': '%s' lists no nodes", tok, path);
close_file:
	fclose(f);
	return rc;
}

static int
parse_node(struct ctx *c, char **p, int n)
{
	static const char where[] = "-node";
	struct sm_stress_nodes *nd = &c->s->nodes;
	const char *list = NULL, *file = NULL, *file_tok = NULL;
	unsigned seen = 0;
	int i, rc;

	for (i = 0; i < n; i++) {
		const char *t = p[i], *v = NULL;

		if ((v = after(t, "datacenter=")) != NULL) {
			if ((rc = once(c, where, &seen, 0, "datacenter=")) < 0 ||
			    (rc = dup_str(c, &nd->datacenter, v)) < 0)
				return rc;
		} else if ((v = after(t, "rack=")) != NULL) {
			if ((rc = once(c, where, &seen, 1, "rack=")) < 0 ||
			    (rc = dup_str(c, &nd->rack, v)) < 0)
				return rc;
		} else if (is(t, "whitelist")) {
			if ((rc = once(c, where, &seen, 2, "whitelist")) < 0)
				return rc;
			nd->whitelist = true;
		} else if ((v = after(t, "file=")) != NULL) {
			if ((rc = once(c, where, &seen, 3, "file=")) < 0)
				return rc;
			file = v;
			file_tok = t;
		} else if ((v = after(t, "loadbalance=")) != NULL) {
			if ((rc = once(c, where, &seen, 4, "loadbalance=")) < 0)
				return rc;
			if (!is(v, "round-robin") && !is(v, "dc-aware") && !is(v, "rack-aware"))
				return fail(c,
					    "-node: '%s': use loadbalance=round-robin, dc-aware or "
					    "rack-aware",
					    t);
			if ((rc = dup_str(c, &nd->loadbalance, v)) < 0)
				return rc;
		} else if ((v = after(t, "remote-dc=")) != NULL) {
			if ((rc = once(c, where, &seen, 5, "remote-dc=")) < 0 ||
			    (rc = uint_arg(c, where, t, v, 1, MAX_NODES, &nd->remote_dc_hosts)) < 0)
				return rc;
		} else if (strchr(t, '=') == NULL) {
			if (list != NULL)
				return fail(c,
					    "-node: '%s' after '%s': give the nodes as one "
					    "comma-separated list, e.g. -node 10.0.0.1,10.0.0.2",
					    t, list);
			list = t;
		} else {
			return fail(c,
				    "-node: unknown sub-option '%s' (expected host[,host...], "
				    "file=, datacenter=, rack=, whitelist, loadbalance= or "
				    "remote-dc=)",
				    t);
		}
	}
	if (list == NULL && file == NULL)
		return 0;
	if (list != NULL && file != NULL)
		return fail(c, "-node: give either a node list or file=, not both");
	free_hosts(nd);
	if (file != NULL)
		return read_node_file(c, file_tok, file);
	for (;;) {
		const char *comma = strchr(list, ',');
		size_t len = comma != NULL ? (size_t)(comma - list) : strlen(list);

		if ((rc = add_host(c, list, len)) < 0)
			return rc;
		if (comma == NULL)
			return 0;
		list = comma + 1;
	}
}

int
sm_stress_settings_nodes(struct sm_stress_settings *s, const char *list, char *err,
			 size_t errlen)
{
	struct ctx c = { .s = s, .err = err, .errlen = errlen };
	char *copy = sm_strdup(list);
	int ret;

	if (copy == NULL)
		return -ENOMEM;
	ret = parse_node(&c, &copy, 1); /* it replaces the host list */
	sm_free(copy);
	return ret;
}

/* ---- -port ---- */

static const struct subopt port_subopts[] = {
	{ "native=", .type = SO_U16, .off = S_OFF(native_port), .min = 1, .max = 65535 },
	{ "alternator=", .type = SO_U16, .off = S_OFF(alternator_port), .min = 1, .max = 65535 },
	/* Older scripts pass these; nothing here speaks JMX or Thrift. */
	{ "jmx=", .type = SO_U16, .off = SO_NONE, .min = 1, .max = 65535, .flags = SO_MANY },
	{ "thrift=", .type = SO_U16, .off = SO_NONE, .min = 1, .max = 65535, .flags = SO_MANY },
	{ NULL },
};

static int
parse_port(struct ctx *c, char **p, int n)
{
	unsigned seen;

	return parse_subopts(c, "-port", port_subopts, "(expected native=N or alternator=N)", p, n,
			     &seen);
}

/* ---- -mode ---- */

static const struct subopt_val compression_vals[] = {
	{ "none", SM_STRESS_COMPRESSION_NONE },
	{ "lz4", SM_STRESS_COMPRESSION_LZ4 },
	{ "snappy", 0, "snappy is not supported by shardmark stress: use compression=lz4 or none" },
	{ NULL },
};

static const struct subopt_val protocol_vals[] = {
	{ "3", 3 },
	{ "4", 4 },
	{ NULL },
};

static const struct subopt_val alt_op_vals[] = {
	{ "put", SM_STRESS_ALT_PUT },
	{ "update", SM_STRESS_ALT_UPDATE },
	{ "update-conditional", SM_STRESS_ALT_UPDATE_CONDITIONAL },
	{ NULL },
};

static const struct subopt mode_subopts[] = {
	{ "native", "4x", SO_FLAG, C_OFF(mode_native), .flags = SO_IN_CTX },
	{ "cql3", .type = SO_FLAG, .off = C_OFF(mode_cql3), .flags = SO_IN_CTX },
	{ "alternator", .type = SO_FLAG, .off = C_OFF(mode_alternator), .flags = SO_IN_CTX },
	{ "prepared", "unprepared", SO_BOOL2, S_OFF(mode.prepared), .flags = SO_CQL_ONLY },
	{ "compression=", .type = SO_ENUM, .off = S_OFF(mode.compression), .vals = compression_vals,
	  .flags = SO_CQL_ONLY },
	{ "protocolVersion=", .type = SO_ENUM, .off = S_OFF(mode.protocol_version),
	  .vals = protocol_vals,
	  .text = "shardmark stress speaks CQL native protocol 3 or 4: use protocolVersion=4",
	  .flags = SO_CQL_ONLY },
	{ "user=", .type = SO_STR, .off = S_OFF(mode.user) },
	{ "password=", .type = SO_STR, .off = S_OFF(mode.password) },
	{ "maxPending=", .type = SO_UINT, .off = S_OFF(mode.max_pending), .min = 1, .max = 32768 },
	{ "connectionsPerHost=", .type = SO_UINT, .off = S_OFF(mode.connections_per_host), .min = 1,
	  .max = 1024 },
	{ "requestTimeout=", .type = SO_UINT, .off = S_OFF(mode.request_timeout_ms), .min = 1,
	  .max = 3600000 },
	/* A leftover of cassandra-stress's -mode; the port is -port native=. */
	{ "port=", .type = SO_UINT, .off = SO_NONE, .min = 1, .max = 65535 },
	{ "op=", .type = SO_ENUM, .off = S_OFF(mode.alt_op), .vals = alt_op_vals,
	  .flags = SO_ALT_ONLY },
	{ "isolation=", .type = SO_STR, .off = S_OFF(mode.alt_isolation), .flags = SO_ALT_ONLY },
	{ "auth-provider=", .type = SO_REFUSE,
	  .text = "custom Java auth providers are not supported by shardmark stress: use user= "
		  "and password=" },
	{ NULL },
};

static int
parse_mode(struct ctx *c, char **p, int n)
{
	unsigned seen;
	int i, rc;

	for (i = 0; i < n; i++)
		if (is(p[i], "thrift") || is(p[i], "simplenative"))
			return fail(
				c,
				"-mode: mode %s was removed (as in cassandra-stress): use -mode "
				"native cql3",
				p[i]);
	rc = parse_subopts(c, "-mode", mode_subopts,
			   "(expected native cql3 [user= password= protocolVersion= compression= "
			   "connectionsPerHost= maxPending= requestTimeout= unprepared], or "
			   "alternator [op= isolation=])",
			   p, n, &seen);
	if (rc < 0)
		return rc;
	if (c->mode_alternator) {
		if (c->mode_native || c->mode_cql3)
			return fail(c,
				    "-mode: alternator and native/cql3 are different modes: choose "
				    "one");
		if (c->cql_only_opt != NULL)
			return fail(c,
				    "-mode: '%s' is a CQL setting and does not apply to -mode "
				    "alternator",
				    c->cql_only_opt);
		c->s->mode.api = SM_STRESS_API_ALTERNATOR;
	} else if (c->alt_only_opt != NULL) {
		return fail(c, "-mode: '%s' applies only to -mode alternator", c->alt_only_opt);
	}
	return 0;
}

/* ---- -log ---- */

/* SettingsLog's interval: "<n>ms", "<n>s" or plain seconds, at most a day. */
static int
set_log_interval(struct ctx *c, const char *where, const char *tok, const char *v)
{
	char num[24];
	size_t len = strlen(v), ulen = 0;
	uint64_t x, mul = 1000;

	(void)where;
	if (len > 2 && is(v + len - 2, "ms")) {
		ulen = 2;
		mul = 1;
	} else if (len > 1 && (v[len - 1] == 's' || v[len - 1] == 'S')) {
		ulen = 1;
	}
	if (len - ulen == 0 || len - ulen >= sizeof(num))
		goto bad;
	memcpy(num, v, len - ulen);
	num[len - ulen] = '\0';
	if (parse_count(num, false, &x) < 0 || x == 0 || x > 86400000 / mul)
		goto bad;
	c->s->log.interval_ms = (unsigned)(x * mul);
	return 0;
bad:
	return fail(c,
		    "-log: '%s': give a positive interval in seconds or milliseconds, e.g. "
		    "interval=5s or interval=500ms (at most a day)",
		    tok);
}

static const struct subopt_val log_level_vals[] = {
	{ "minimal", SM_STRESS_LOG_MINIMAL },
	{ "normal", SM_STRESS_LOG_NORMAL },
	{ "verbose", SM_STRESS_LOG_VERBOSE },
	{ NULL },
};

static const struct subopt log_subopts[] = {
	{ "interval=", .type = SO_FN, .set = set_log_interval },
	{ "hdrfile=", .type = SO_FILE, .off = S_OFF(log.hdrfile) },
	{ "file=", .type = SO_FILE, .off = S_OFF(log.file) },
	{ "json=", .type = SO_FILE, .off = S_OFF(log.json) },
	{ "csv=", .type = SO_FILE, .off = S_OFF(log.csv) },
	{ "steps=", .type = SO_FILE, .off = S_OFF(log.steps) },
	{ "level=", .type = SO_ENUM, .off = S_OFF(log.level), .vals = log_level_vals },
	{ "no-summary", .type = SO_FLAG, .off = S_OFF(log.no_summary) },
	{ "no-settings", .type = SO_FLAG, .off = S_OFF(log.no_settings) },
	{ "print-statements-on-error", .type = SO_FLAG,
	  .off = S_OFF(log.print_statements_on_error) },
	{ NULL },
};

static int
parse_log(struct ctx *c, char **p, int n)
{
	unsigned seen;

	return parse_subopts(c, "-log", log_subopts,
			     "(expected interval=, file=, hdrfile=, json=, csv=, steps=, level=, "
			     "no-summary, no-settings or print-statements-on-error)",
			     p, n, &seen);
}

/* ---- -transport ---- */

/* ssl-protocol=: Java's names to a GnuTLS priority that allows only that version. */
static int
set_ssl_protocol(struct ctx *c, const char *where, const char *tok, const char *v)
{
	const char *prio = NULL;

	(void)where;
	if (is(v, "TLSv1.3"))
		prio = "NORMAL:-VERS-ALL:+VERS-TLS1.3";
	else if (is(v, "TLSv1.2"))
		prio = "NORMAL:-VERS-ALL:+VERS-TLS1.2";
	else if (is(v, "TLS"))
		prio = NULL; /* Java's default: the best both sides have */
	else
		return fail(c, "-transport: '%s': give ssl-protocol=TLS, TLSv1.2 or TLSv1.3", tok);
	sm_free(c->s->transport.priority);
	c->s->transport.priority = prio != NULL ? sm_strdup(prio) : NULL;
	return prio != NULL && c->s->transport.priority == NULL ? -ENOMEM : 0;
}

/* store-type=JKS: GnuTLS reads PEM and PKCS#12, not Java's keystores. */
static int
set_store_type(struct ctx *c, const char *where, const char *tok, const char *v)
{
	(void)where;
	if (is(v, "PKCS12") || is(v, "PEM"))
		return 0;
	return fail(c,
		    "-transport: '%s': Java keystores are not read here; convert with "
		    "keytool -importkeystore -srckeystore F.jks -destkeystore F.p12 "
		    "-deststoretype PKCS12 and give the .p12 (or PEM files)",
		    tok);
}

static const struct subopt transport_subopts[] = {
	{ "truststore=", .type = SO_FILE, .off = S_OFF(transport.truststore) },
	{ "keystore=", .type = SO_FILE, .off = S_OFF(transport.keystore) },
	{ "keystore-key=", .type = SO_FILE, .off = S_OFF(transport.keystore_key) },
	{ "keystore-password=", .type = SO_STR, .off = S_OFF(transport.keystore_password) },
	/* PEM truststores need none; accepted so cassandra-stress's lines run */
	{ "truststore-password=", .type = SO_STR, .off = SO_NONE },
	{ "ssl-protocol=", .type = SO_FN, .set = set_ssl_protocol },
	{ "ssl-ciphers=", .type = SO_STR, .off = S_OFF(transport.priority) },
	{ "store-type=", .type = SO_FN, .set = set_store_type },
	/* Java's key manager algorithm: nothing to choose with GnuTLS */
	{ "ssl-alg=", .type = SO_STR, .off = SO_NONE },
	{ "factory=", .type = SO_STR, .off = SO_NONE },
	{ NULL },
};

static int
parse_transport(struct ctx *c, char **p, int n)
{
	unsigned seen;
	int rc;

	rc = parse_subopts(c, "-transport", transport_subopts,
			   "(expected truststore=, keystore=, keystore-key=, keystore-password=, "
			   "ssl-protocol=, ssl-ciphers= or store-type=)",
			   p, n, &seen);
	if (rc == 0)
		c->s->transport.on = true;
	return rc;
}

/* ---- -errors ---- */

static const struct subopt_val delay_policy_vals[] = {
	{ "constant", SM_STRESS_DELAY_CONSTANT },
	{ "linear", SM_STRESS_DELAY_LINEAR },
	{ "exponential", SM_STRESS_DELAY_EXPONENTIAL },
	{ NULL },
};

static const struct subopt errors_subopts[] = {
	{ "retries=", .type = SO_UINT, .off = S_OFF(errors.retries), .min = 0, .max = 1000000 },
	{ "ignore", .type = SO_FLAG, .off = S_OFF(errors.ignore) },
	{ "fail-fast", .type = SO_FLAG, .off = S_OFF(errors.fail_fast) },
	{ "skip-read-validation", .type = SO_FLAG, .off = S_OFF(errors.skip_read_validation) },
	/* Only meaningful for user profiles; accepted so scripts run. */
	{ "skip-unsupported-columns", .type = SO_FLAG, .off = SO_NONE },
	{ "delay-policy=", .type = SO_ENUM, .off = S_OFF(errors.delay_policy),
	  .vals = delay_policy_vals },
	{ "min-delay-ms=", .type = SO_U64, .off = S_OFF(errors.min_delay_ms), .min = 0,
	  .max = 86400000 },
	{ "max-delay-ms=", .type = SO_U64, .off = S_OFF(errors.max_delay_ms), .min = 0,
	  .max = 86400000 },
	{ NULL },
};

static int
parse_errors(struct ctx *c, char **p, int n)
{
	struct sm_stress_errors *e = &c->s->errors;
	unsigned seen;
	int rc;

	rc = parse_subopts(c, "-errors", errors_subopts,
			   "(expected ignore, retries=N, fail-fast, skip-read-validation, "
			   "delay-policy=, min-delay-ms= or max-delay-ms=)",
			   p, n, &seen);
	if (rc < 0)
		return rc;
	if (e->min_delay_ms > e->max_delay_ms)
		return fail(c,
			    "-errors: min-delay-ms=%" PRIu64 " is above max-delay-ms=%" PRIu64
			    ": lower the minimum or raise the maximum",
			    e->min_delay_ms, e->max_delay_ms);
	if (e->delay_policy == SM_STRESS_DELAY_EXPONENTIAL && e->min_delay_ms == 0)
		return fail(c, "-errors: delay-policy=exponential doubles min-delay-ms, so give a "
			       "non-zero min-delay-ms=");
	return 0;
}

/* ---- -route, -shards (extensions) ---- */

static const struct subopt_val ordering_vals[] = {
	{ "random", SM_STRESS_ORDER_RANDOM },
	{ "topological", SM_STRESS_ORDER_TOPOLOGICAL },
	{ "neutral", SM_STRESS_ORDER_NEUTRAL },
	{ NULL },
};

static const struct subopt route_subopts[] = {
	{ "token-aware", "none", SO_BOOL2, S_OFF(route.token_aware) },
	{ "shard-aware", "no-shard-aware", SO_BOOL2, S_OFF(route.shard_aware) },
	{ "ordering=", .type = SO_ENUM, .off = S_OFF(route.ordering), .vals = ordering_vals },
	{ NULL },
};

static int
parse_route(struct ctx *c, char **p, int n)
{
	unsigned seen;
	int rc;

	rc = parse_subopts(c, "-route", route_subopts,
			   "(expected token-aware or none, ordering=random|topological|neutral, "
			   "shard-aware or no-shard-aware)",
			   p, n, &seen);
	if (rc < 0)
		return rc;
	if (!c->s->route.token_aware && subopt_given(route_subopts, seen, "ordering="))
		return fail(c, "-route: ordering= orders the replicas of token-aware routing: drop "
			       "it or use token-aware");
	return 0;
}
static int
parse_shards(struct ctx *c, char **p, int n)
{
	if (n != 1)
		return fail(c, "-shards: give one number, e.g. -shards 8 (0: one per CPU)");
	return uint_arg(c, "-shards", p[0], p[0], 0, MAX_SHARDS, &c->s->shards);
}

/* ---- options ---- */

typedef int (*opt_fn)(struct ctx *c, char **p, int n);

/* -insert: kept for finish(), which applies them to the profile it loads. */
static int
parse_insert(struct ctx *c, char **p, int n)
{
	if (c->s->cmd != SM_STRESS_CMD_USER)
		return fail(c, "-insert applies to the user command (a profile's insert); the "
			       "predefined commands write one partition per operation");
	c->insert_opts = p;
	c->n_insert = n;
	return 0;
}

/* -tokenrange [wrap] [splits=N] (SettingsTokenRange): how token range queries cut the ring. */
static int
parse_tokenrange(struct ctx *c, char **p, int n)
{
	static const char where[] = "-tokenrange";
	unsigned seen = 0;
	uint64_t x;
	int i, rc;

	for (i = 0; i < n; i++) {
		const char *v;

		if (is(p[i], "wrap")) {
			if ((rc = once(c, where, &seen, 0, "wrap")) < 0)
				return rc;
			c->s->tokenrange.wrap = true;
		} else if ((v = after(p[i], "splits=")) != NULL) {
			if ((rc = once(c, where, &seen, 1, "splits=")) < 0)
				return rc;
			if (parse_count(v, false, &x) < 0 || x == 0 || x > 65536)
				return fail(c, "-tokenrange: '%s': splits= takes 1 to 65536", p[i]);
			c->s->tokenrange.splits = (unsigned)x;
		} else {
			return fail(c, "-tokenrange: '%s': use wrap and splits=N", p[i]);
		}
	}
	return 0;
}

static const struct {
	const char *name;
	opt_fn fn;
	const char *why;  /* refused: why and what to do instead */
	const char *help; /* its block of `shardmark stress help` */
} options[] = {
	{ "-pop", parse_pop, NULL,
	  "  -pop seq=A..B [no-wrap] | dist=DIST [read-lookback=DIST]\n"
	  "        partition keys; default seq=1..N for write/counter_write and\n"
	  "        dist=GAUSSIAN(1..N) otherwise, N = n or 1000000\n" },
	{ "-col", parse_col, NULL,
	  "  -col n=DIST size=DIST [slice] [timestamp=N]\n"
	  "        columns per row (default n=FIXED(5)) and bytes per cell\n"
	  "        (default size=FIXED(34))\n" },
	{ "-rate", parse_rate, NULL,
	  "  -rate threads=N [throttle=R/s | fixed=R/s]\n"
	  "        concurrent operations (default threads=200, where cassandra-stress\n"
	  "        would ramp with auto); throttle= caps the rate, fixed= also measures\n"
	  "        latency from each operation's scheduled start (coordinated-omission\n"
	  "        corrected). A thread is one operation in flight: threads=N keeps N\n"
	  "        in flight over all client shards (N/shards each, on their\n"
	  "        connections), as N cassandra-stress threads would\n"
	  "  -rate [auto] [threads>=N] (default 4) [threads<=N] (default 1000)\n"
	  "        cassandra-stress's thread ramp: one measured run (n= or duration=\n"
	  "        each) per thread count N, N+100, ... (+100 below 500, x1.2 below\n"
	  "        1500, x1.1 above), up to threads<=; with auto it stops when the\n"
	  "        average throughput gain of the last three runs is below zero; then\n"
	  "        a summary row per thread count and the best one\n"
	  "  -rate search bound=T [percentile=p99] [start=R/s] (default 1000/s)\n"
	  "        [step=S/s] (default start) [max=M/s] [resolution=R/s] (default step/4)\n"
	  "        [settle=T] (default 1s) [errors=N] (default 0) [min-achieved=P%]\n"
	  "        (default 90%) [threads=N]\n"
	  "        [extension] the highest open-loop rate whose percentile of latency\n"
	  "        from the intended start stays within bound=: steps start, start+step,\n"
	  "        ... up to the first failing step or max=, then bisects down to\n"
	  "        resolution= (RFC 2544's no-drop search); each step runs settle=\n"
	  "        unrecorded, then n= or duration=; a step passes with at most errors=\n"
	  "        errors (they fail the step, not the run) and min-achieved= of its\n"
	  "        rate; prints the curve and the answer (-log json=, steps=)\n" },
	{ "-schema", parse_schema, NULL,
	  "  -schema [replication(strategy=S,factor=N,<dc>=<rf>)] [keyspace=NAME]\n"
	  "          [compaction(strategy=S,...)] [compression=C]\n"
	  "          [tablets=true|false | tablets(enabled=true|false,initial=N)]\n"
	  "        default NetworkTopologyStrategy, factor 1, keyspace1; tablets= [extension]\n"
	  "        adds ScyllaDB's AND tablets = {...} (default: the server's choice)\n" },
	{ "-node", parse_node, NULL,
	  "  -node HOST[,HOST...] | file=F [datacenter=DC] [rack=R] [whitelist]\n"
	  "        [loadbalance=round-robin|dc-aware|rack-aware] [remote-dc=N]\n"
	  "        default localhost; names are resolved\n" },
	{ "-port", parse_port, NULL,
	  "  -port native=N [alternator=N]\n"
	  "        default native=9042, alternator=8000 (alternator= is an extension)\n" },
	{ "-mode", parse_mode, NULL,
	  "  -mode native cql3 [user=U password=P] [protocolVersion=3|4]\n"
	  "        [compression=none|lz4] [connectionsPerHost=N] (default 8)\n"
	  "        [maxPending=N] [requestTimeout=MS] (default 12000) [unprepared]\n"
	  "  -mode alternator [op=put|update|update-conditional] [isolation=MODE]\n"
	  "        [extension] DynamoDB API over HTTP: write -> PutItem (or UpdateItem),\n"
	  "        read -> GetItem; isolation= is only a hint, the server's\n"
	  "        alternator_write_isolation decides\n" },
	{ "-log", parse_log, NULL,
	  "  -log [interval=Ns|Nms] (default 1s) [file=F] [hdrfile=F] [json=F] [csv=F]\n"
	  "       [level=minimal|normal|verbose] [no-summary] [no-settings]\n"
	  "       [print-statements-on-error]\n"
	  "       [steps=F]\n"
	  "        json= and csv= are extensions: a machine-readable report, and one\n"
	  "        flat row per interval and op type (header first) for spreadsheets;\n"
	  "        steps= (extension): a -rate auto/search run's steps, one CSV row each\n" },
	{ "-errors", parse_errors, NULL,
	  "  -errors [ignore] [retries=N] (default 9) [fail-fast] [skip-read-validation]\n"
	  "          [delay-policy=constant|linear|exponential] [min-delay-ms=N]\n"
	  "          [max-delay-ms=N]\n" },
	{ "-route", parse_route, NULL,
	  "  -route token-aware|none [ordering=random|topological|neutral]\n"
	  "         [shard-aware|no-shard-aware]\n"
	  "        [extension] replica and shard choice; default token-aware,\n"
	  "        ordering=random (as cassandra-stress's driver policy), shard-aware\n" },
	{ "-shards", parse_shards, NULL,
	  "  -shards N\n"
	  "        [extension] client shards, one thread pinned per CPU; 0 (default):\n"
	  "        one per CPU\n" },
	{ "-graph", parse_graph, NULL,
	  "  -graph file=F.html [title=T] [revision=R] (default unknown)\n"
	  "        the HTML report of the run (`shardmark report`'s: throughput and\n"
	  "        latency over time, the percentile distribution, per-shard bars), as\n"
	  "        cassandra-stress's -graph: an existing report of ours gets this run\n"
	  "        as revision R (one of the same name is replaced); title= defaults to\n"
	  "        the file's, or \"shardmark stress - DATE\"; op= is not supported (op\n"
	  "        types keep their names); not with -rate auto/search\n" },
	{ "-insert", parse_insert, NULL,
	  "  -insert [partitions=DIST] [select-ratio=DIST/N] [row-population-ratio=DIST/N]\n"
	  "          [batchtype=LOGGED|UNLOGGED]\n"
	  "        user mode: override the profile's insert: section\n" },
	{ "-transport", parse_transport, NULL,
	  "  -transport [truststore=F] [keystore=F] [keystore-key=F] [keystore-password=P]\n"
	  "             [ssl-protocol=TLSv1.2|TLSv1.3] [ssl-ciphers=GNUTLS-PRIORITY]\n"
	  "        TLS to the servers (CQL, or Alternator's https port with -port\n"
	  "        alternator=): truststore= checks the servers' certificates (PEM or\n"
	  "        PKCS#12; without it they are not checked), keystore= is this client's\n"
	  "        certificate for require_client_auth; Java keystores (JKS) are not read:\n"
	  "        keytool -importkeystore -deststoretype PKCS12 converts them\n" },
	{ "-sendto", NULL, "there is no stress daemon: run shardmark stress on each loader" },
	{ "-tokenrange", parse_tokenrange, NULL,
	  "  -tokenrange [wrap] [splits=N]\n"
	  "        user mode's token_range_queries: read the ring again when it is\n"
	  "        read (without wrap a worker stops there), and cut each of the\n"
	  "        ring's 64 ranges per client shard in N (default 1)\n" },
	{ "-sample", NULL, "cassandra-stress dropped it too; latencies are HDR histograms" },
	{ "-reporting", NULL, "it is not a cassandra-stress 3.x option: use -log interval=" },
};

static int
parse_option(struct ctx *c, const char *name, char **p, int n, unsigned *seen)
{
	unsigned i;

	for (i = 0; i < SM_ARRAY_SIZE(options); i++) {
		if (!is(name, options[i].name))
			continue;
		if (options[i].fn == NULL)
			return fail(c, "%s: not supported by shardmark stress (%s)",
				    options[i].name, options[i].why);
		if (*seen & (1u << i))
			return fail(c,
				    "%s is given more than once: each option can be given once, "
				    "with all its sub-options",
				    options[i].name);
		*seen |= 1u << i;
		return options[i].fn(c, p, n);
	}
	return fail(c,
		    "unknown option '%s' (options: -pop -col -rate -schema -node -port -mode "
		    "-log -errors -route -shards -transport; see `shardmark stress help`)",
		    name);
}

/* ---- tokens ---- */

/*
 * StressSettings.repairParams(): join the words with spaces, drop spaces
 * before , = ( ) and after , = (, and split on spaces, so that
 * "replication(strategy=X, factor=3)" is one word however it was quoted.
 * The words point into one buffer (*@bufp) that the caller frees.
 */
static int
tokenize(int argc, char **argv, char **bufp, char ***tokp, int *ntokp)
{
	size_t len = 1, r, w = 0;
	char *buf, **tok;
	int i, n = 0;

	for (i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	buf = sm_malloc(len);
	if (buf == NULL)
		return -ENOMEM;
	for (i = 0; i < argc; i++) {
		size_t l = strlen(argv[i]);

		memcpy(buf + w, argv[i], l);
		w += l;
		buf[w++] = ' ';
	}
	buf[w] = '\0';
	len = w;
	for (r = 0, w = 0; r < len;) {
		if (isspace((unsigned char)buf[r])) {
			size_t e = r;
			char prev = w > 0 ? buf[w - 1] : '\0';
			char next;

			while (e < len && isspace((unsigned char)buf[e]))
				e++;
			next = e < len ? buf[e] : '\0';
			if (prev != '\0' && next != '\0' && strchr(",=()", next) == NULL &&
			    strchr(",=(", prev) == NULL)
				buf[w++] = ' ';
			r = e;
		} else {
			buf[w++] = buf[r++];
		}
	}
	buf[w] = '\0';
	for (r = 0; r < w; r++)
		if (buf[r] == ' ')
			n++;
	n = w > 0 ? n + 1 : 0;
	tok = sm_calloc((size_t)n + 1, sizeof(*tok));
	if (tok == NULL) {
		sm_free(buf);
		return -ENOMEM;
	}
	for (i = 0, r = 0; i < n; i++) {
		tok[i] = buf + r;
		while (buf[r] != ' ' && buf[r] != '\0')
			r++;
		buf[r++] = '\0';
	}
	*bufp = buf;
	*tokp = tok;
	*ntokp = n;
	return 0;
}

/* ---- defaults ---- */

static int
set_defaults(struct sm_stress_settings *s)
{
	memset(s, 0, sizeof(*s));
	s->truncate = SM_STRESS_TRUNCATE_NEVER;
	s->cl = SM_STRESS_CL_LOCAL_ONE;
	s->serial_cl = SM_STRESS_CL_SERIAL;
	s->key_size = 10;
	dist_fixed(&s->counter_add, 1);
	dist_gaussian(&s->clustering, 1, 10, 3);
	s->pop.wrap = true;
	dist_fixed(&s->col.count, 5);
	dist_fixed(&s->col.size, 34);
	s->rate.threads = 200;
	s->rate.kind = SM_STRESS_RATE_NONE;
	s->schema.factor = 1;
	s->schema.tablets = -1;
	s->schema.table = "standard1";
	s->schema.counter_table = "counter1";
	s->native_port = 9042;
	s->alternator_port = 8000;
	s->mode.api = SM_STRESS_API_CQL;
	s->mode.protocol_version = 4;
	s->mode.compression = SM_STRESS_COMPRESSION_NONE;
	s->mode.connections_per_host = 8;
	s->mode.request_timeout_ms = 12000;
	s->mode.prepared = true;
	s->mode.alt_op = SM_STRESS_ALT_PUT;
	s->log.interval_ms = 1000;
	s->log.level = SM_STRESS_LOG_NORMAL;
	s->errors.retries = 9;
	s->errors.delay_policy = SM_STRESS_DELAY_CONSTANT;
	s->errors.max_delay_ms = 20000;
	s->route.token_aware = true;
	s->route.ordering = SM_STRESS_ORDER_RANDOM;
	s->route.shard_aware = true;
	s->schema.keyspace = sm_strdup("keyspace1");
	s->schema.strategy = sm_strdup(NTS_CLASS);
	s->nodes.hosts = sm_calloc(1, sizeof(char *));
	if (s->schema.keyspace == NULL || s->schema.strategy == NULL || s->nodes.hosts == NULL)
		return -ENOMEM;
	s->nodes.hosts[0] = sm_strdup("localhost");
	if (s->nodes.hosts[0] == NULL)
		return -ENOMEM;
	s->nodes.n = 1;
	return 0;
}

/*
 * OptionReplication.getOptions(): replication_factor for the default
 * strategy or an explicit factor=, unless given as an extra option; and
 * createKeyspaceStatementCQL3() adds it to an otherwise empty map.
 */
static int
add_replication_factor(struct ctx *c)
{
	struct sm_stress_schema *sc = &c->s->schema;
	char f[16];
	unsigned i;

	for (i = 0; i < sc->n_repl; i++)
		if (strcmp(sc->repl[i].key, "replication_factor") == 0)
			return 0;
	if (strcmp(sc->strategy, NTS_CLASS) != 0 && !c->factor_set && sc->n_repl > 0)
		return 0;
	if (sc->n_repl >= SM_STRESS_MAX_KV)
		return fail(c, "-schema: more than %u replication options", SM_STRESS_MAX_KV);
	snprintf(f, sizeof(f), "%u", sc->factor);
	sc->repl[sc->n_repl].key = sm_strdup("replication_factor");
	sc->repl[sc->n_repl].value = sm_strdup(f);
	sc->n_repl++;
	if (sc->repl[sc->n_repl - 1].key == NULL || sc->repl[sc->n_repl - 1].value == NULL)
		return -ENOMEM;
	return 0;
}

/* user: load the profile, apply -insert, and turn ops(...) into the user op slots. */
static int
finish_user(struct ctx *c)
{
	struct sm_stress_settings *s = c->s;
	double w[SM_STRESS_MAX_USER_OPS];
	size_t len;
	char spec[512];
	int n, i, rc;

	if (c->user_profile == NULL)
		return fail(c, "user: give the profile: user profile=FILE.yaml ops(insert=1,...)");
	if (c->user_ops == NULL)
		return fail(c, "user: give the operations: ops(insert=1,q1=3) (insert and the "
			       "profile's query names, with weights)");
	len = strlen(c->user_ops);
	if (len == 0 || c->user_ops[len - 1] != ')' || len >= sizeof(spec))
		return fail(c, "user: write the operations as ops(insert=1,q1=3)");
	memcpy(spec, c->user_ops, len - 1);
	spec[len - 1] = '\0';
	s->profile = sm_calloc(1, sizeof(*s->profile));
	if (s->profile == NULL)
		return -ENOMEM;
	rc = sm_stress_profile_load(c->user_profile, s->profile, c->err, c->errlen);
	if (rc < 0) {
		sm_free(s->profile);
		s->profile = NULL;
		return rc == -ENOMEM ? rc : -EINVAL;
	}
	for (i = 0; i < c->n_insert; i++)
		if (sm_stress_profile_insert_option(s->profile, c->insert_opts[i], c->err,
						    c->errlen) < 0)
			return -EINVAL;
	n = sm_stress_profile_ops(s->profile, spec, w, s->user_op, SM_STRESS_MAX_USER_OPS,
				  c->err, c->errlen);
	if (n < 0)
		return n;
	memset(s->ratio, 0, sizeof(s->ratio));
	for (i = 0; i < n; i++) {
		const char *name = sm_stress_profile_op_name(s->profile, s->user_op[i]);

		snprintf(user_op_names[i], sizeof(user_op_names[i]), "%s", name);
		s->ratio[SM_STRESS_OP_USER0 + i] = w[i];
	}
	for (i = 0; i < n && w[i] <= 0; i++)
		;
	if (i == n)
		return fail(c, "user: ops(): give at least one operation a non-zero weight");
	if (s->mode.api == SM_STRESS_API_ALTERNATOR)
		return fail(c, "user: profiles are CQL: use -mode native cql3");
	return 0;
}

/* What depends on the command, n= and the node count, applied after every option is read. */
static int
finish(struct ctx *c)
{
	struct sm_stress_settings *s = c->s;
	uint64_t limit = s->n_ops > 0 ? s->n_ops : 1000000;
	int rc;

	if (s->cmd == SM_STRESS_CMD_USER && (rc = finish_user(c)) < 0)
		return rc;
	if (s->cmd == SM_STRESS_CMD_USER) {
		/* ratios set by finish_user() */
	} else if (s->cmd != SM_STRESS_CMD_MIXED) {
		static const enum sm_stress_op op_of[] = {
			[SM_STRESS_CMD_WRITE] = SM_STRESS_OP_WRITE,
			[SM_STRESS_CMD_READ] = SM_STRESS_OP_READ,
			[SM_STRESS_CMD_COUNTER_WRITE] = SM_STRESS_OP_COUNTER_WRITE,
			[SM_STRESS_CMD_COUNTER_READ] = SM_STRESS_OP_COUNTER_READ,
		};

		s->ratio[op_of[s->cmd]] = 1;
	} else if (!c->ratio_set) {
		/* SettingsCommandPreDefinedMixed: read=1, write=1 unless ratio() is given. */
		s->ratio[SM_STRESS_OP_READ] = 1;
		s->ratio[SM_STRESS_OP_WRITE] = 1;
	}
	/* SettingsPopulation: seq=1..N for writes, gaussian(1..N) otherwise; N = n or 1000000. */
	if (!s->pop.set_by_user) {
		bool insert_only = s->cmd == SM_STRESS_CMD_USER && s->ratio[SM_STRESS_OP_USER0] > 0 &&
				   s->user_op[0] == -1;
		unsigned k;

		for (k = 1; insert_only && k < SM_STRESS_MAX_USER_OPS; k++)
			if (s->ratio[SM_STRESS_OP_USER0 + k] > 0)
				insert_only = false;
		if (s->cmd == SM_STRESS_CMD_WRITE || s->cmd == SM_STRESS_CMD_COUNTER_WRITE ||
		    insert_only) {
			s->pop.dist.kind = SM_STRESS_DIST_SEQ;
			s->pop.dist.min = 1;
			s->pop.dist.max = limit;
			if (limit == 1)
				dist_fixed(&s->pop.dist, 1);
		} else {
			dist_gaussian(&s->pop.dist, 1, limit, 3);
			if (limit == 1)
				dist_fixed(&s->pop.dist, 1);
		}
		s->pop.wrap = true;
	}
	if (s->mode.api == SM_STRESS_API_ALTERNATOR &&
	    (s->ratio[SM_STRESS_OP_COUNTER_WRITE] > 0 || s->ratio[SM_STRESS_OP_COUNTER_READ] > 0))
		return fail(c,
			    "%s: counters are not supported with -mode alternator (DynamoDB has "
			    "no counter type): use -mode native cql3",
			    sm_stress_cmd_name(s->cmd));
	/* StressAction.warmup(): min(50000, 25 % of n), or 50000 for duration=, per node. */
	if (s->no_warmup) {
		s->warmup_ops = 0;
	} else if (c->warmup_set) {
		s->warmup_ops = c->warmup_n;
	} else {
		uint64_t per_node = s->n_ops > 0 ? SM_MIN((uint64_t)50000, s->n_ops / 4) : 50000;

		s->warmup_ops = per_node * s->nodes.n;
	}
	/* StressAction.warmup(): at most 100 threads, and at most threads<= */
	s->warmup_threads =
		SM_MIN(100u, s->rate.search.kind == SM_STRESS_SEARCH_THREADS
				     ? s->rate.search.max_threads
				     : s->rate.threads);
	if (s->graph.file != NULL && s->rate.search.kind != SM_STRESS_SEARCH_NONE)
		return fail(c, "-graph reports one run: it does not go with -rate auto, threads>= "
			       "or search (their steps are in -log json= and steps=)");
	/* a search's step with errors fails that step: the search goes on */
	if (s->rate.search.kind == SM_STRESS_SEARCH_RATE)
		s->errors.ignore = true;
	return add_replication_factor(c);
}

static int
parse_command_word(struct ctx *c, const char *w)
{
	static const struct {
		const char *name;
		enum sm_stress_cmd cmd;
	} words[] = {
		/* Command.java: the name, the name without '_', and an alias of each. */
		{ "write", SM_STRESS_CMD_WRITE },
		{ "insert", SM_STRESS_CMD_WRITE },
		{ "read", SM_STRESS_CMD_READ },
		{ "mixed", SM_STRESS_CMD_MIXED },
		{ "counter_write", SM_STRESS_CMD_COUNTER_WRITE },
		{ "counterwrite", SM_STRESS_CMD_COUNTER_WRITE },
		{ "counter_add", SM_STRESS_CMD_COUNTER_WRITE },
		{ "counteradd", SM_STRESS_CMD_COUNTER_WRITE },
		{ "counter_read", SM_STRESS_CMD_COUNTER_READ },
		{ "counterread", SM_STRESS_CMD_COUNTER_READ },
		{ "counter_get", SM_STRESS_CMD_COUNTER_READ },
		{ "counterget", SM_STRESS_CMD_COUNTER_READ },
		{ "help", SM_STRESS_CMD_HELP },
		{ "-?", SM_STRESS_CMD_HELP },
	};
	unsigned i;

	for (i = 0; i < SM_ARRAY_SIZE(words); i++) {
		if (is(w, words[i].name)) {
			c->s->cmd = words[i].cmd;
			return 0;
		}
	}
	if (is(w, "user")) {
		c->s->cmd = SM_STRESS_CMD_USER;
		return 0;
	}
	if (is(w, "print") || is(w, "legacy"))
		return fail(c,
			    "%s: not supported by shardmark stress: use write, read, mixed, "
			    "counter_write, counter_read or help",
			    w);
	if (is(w, "version"))
		return fail(c, "version: use `shardmark version`");
	if (w[0] == '-')
		return fail(c,
			    "'%s': the command comes first: shardmark stress "
			    "write|read|mixed|counter_write|counter_read [sub-options] [options]",
			    w);
	return fail(c,
		    "unknown command '%s': use write, read, mixed, counter_write, counter_read "
		    "or help",
		    w);
}

int
sm_stress_settings_parse(int argc, char **argv, struct sm_stress_settings *s, char *err,
			 size_t errlen)
{
	struct ctx c = { .s = s, .err = err, .errlen = errlen };
	char *buf = NULL, **tok = NULL;
	unsigned seen = 0;
	int ntok = 0, i, j, rc;

	if (errlen > 0)
		err[0] = '\0';
	rc = set_defaults(s);
	if (rc < 0)
		goto free_settings;
	rc = tokenize(argc, argv, &buf, &tok, &ntok);
	if (rc < 0)
		goto free_settings;
	if (ntok == 0) {
		rc = fail(&c, "no command: shardmark stress write|read|mixed|counter_write|"
			      "counter_read [sub-options] [options] (see shardmark stress help)");
		goto free_tokens;
	}
	rc = parse_command_word(&c, tok[0]);
	if (rc < 0)
		goto free_tokens;
	if (s->cmd == SM_STRESS_CMD_HELP) {
		if (ntok > 1 && (s->help_topic = sm_strdup(tok[1])) == NULL)
			rc = -ENOMEM;
		goto free_tokens;
	}
	for (j = 1; j < ntok && tok[j][0] != '-'; j++)
		;
	rc = parse_command_opts(&c, tok + 1, j - 1);
	while (rc == 0 && j < ntok) {
		i = j;
		for (j = i + 1; j < ntok && tok[j][0] != '-'; j++)
			;
		rc = parse_option(&c, tok[i], tok + i + 1, j - i - 1, &seen);
	}
	if (rc == 0)
		rc = finish(&c);
free_tokens:
	sm_free(tok);
	sm_free(buf);
	if (rc == 0)
		return 0;
free_settings:
	if (rc == -ENOMEM && errlen > 0)
		snprintf(err, errlen, "out of memory while parsing the command line");
	sm_stress_settings_free(s);
	return rc;
}

static void
free_kv(struct sm_stress_kv *kv, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		sm_free(kv[i].key);
		sm_free(kv[i].value);
	}
}

void
sm_stress_settings_free(struct sm_stress_settings *s)
{
	sm_free(s->help_topic);
	sm_free(s->schema.keyspace);
	sm_free(s->schema.strategy);
	free_kv(s->schema.repl, s->schema.n_repl);
	sm_free(s->schema.compaction_strategy);
	free_kv(s->schema.compaction, s->schema.n_compaction);
	sm_free(s->schema.compression);
	free_hosts(&s->nodes);
	sm_free(s->nodes.datacenter);
	sm_free(s->nodes.rack);
	sm_free(s->nodes.loadbalance);
	sm_free(s->mode.user);
	sm_free(s->mode.password);
	sm_free(s->mode.alt_isolation);
	sm_free(s->log.hdrfile);
	sm_free(s->log.file);
	sm_free(s->log.json);
	sm_free(s->log.csv);
	sm_free(s->log.steps);
	sm_free(s->graph.file);
	sm_free(s->graph.title);
	sm_free(s->graph.revision);
	sm_free(s->transport.truststore);
	sm_free(s->transport.keystore);
	sm_free(s->transport.keystore_key);
	sm_free(s->transport.priority);
	sm_free(s->transport.keystore_password);
	if (s->profile != NULL) {
		sm_stress_profile_free(s->profile);
		sm_free(s->profile);
	}
	sm_stress_ycsb_free(s);
	sm_stress_sb_free(s);
	memset(s, 0, sizeof(*s));
}

/* ---- printing ---- */

/* Java's %,d. */
static const char *
grouped(char *buf, size_t n, uint64_t v)
{
	char tmp[32];
	size_t len, i, w = 0;

	snprintf(tmp, sizeof(tmp), "%" PRIu64, v);
	len = strlen(tmp);
	for (i = 0; i < len && w + 2 < n; i++) {
		if (i > 0 && (len - i) % 3 == 0)
			buf[w++] = ',';
		buf[w++] = tmp[i];
	}
	buf[w] = '\0';
	return buf;
}

static const char *
str_or_null(const char *s)
{
	return s != NULL ? s : "null";
}

static const char *
yes_no(bool b)
{
	return b ? "true" : "false";
}

/* DistributionFactory.getConfigAsString(), roughly. */
static void
print_dist(FILE *f, const char *label, const struct sm_stress_dist *d)
{
	switch (d->kind) {
	case SM_STRESS_DIST_FIXED:
		fprintf(f, "  %s: Fixed:  key=%" PRIu64 "\n", label, d->min);
		break;
	case SM_STRESS_DIST_UNIFORM:
		fprintf(f, "  %s: Uniform:  min=%" PRIu64 ",max=%" PRIu64 "\n", label, d->min,
			d->max);
		break;
	case SM_STRESS_DIST_GAUSSIAN:
		fprintf(f, "  %s: Gaussian:  min=%" PRIu64 ",max=%" PRIu64 ",mean=%f,stdev=%f\n",
			label, d->min, d->max, d->mean, d->stdev);
		break;
	case SM_STRESS_DIST_SEQ:
		fprintf(f, "  %s: Seq:  min=%" PRIu64 ",max=%" PRIu64 "\n", label, d->min, d->max);
		break;
	case SM_STRESS_DIST_OTHER: {
		char b[128];

		sm_stress_xdist_format(&d->x, b, sizeof(b));
		fprintf(f, "  %s: %s\n", label, b);
		break;
	}
	}
}

static void
print_kv(FILE *f, const char *label, const struct sm_stress_kv *kv, unsigned n)
{
	unsigned i;

	fprintf(f, "  %s: {", label);
	for (i = 0; i < n; i++)
		fprintf(f, "%s%s=%s", i > 0 ? ", " : "", kv[i].key, kv[i].value);
	fputs("}\n", f);
}

static void
print_command(FILE *f, const struct sm_stress_settings *s)
{
	static const char *const truncate[] = { "NEVER", "ONCE", "ALWAYS" };
	char b[32];
	unsigned i;

	fputs("Command:\n", f);
	fprintf(f, "  Type: %s\n", sm_stress_cmd_name(s->cmd));
	if (s->n_ops > 0)
		fprintf(f, "  Count: %s\n", grouped(b, sizeof(b), s->n_ops));
	else
		fputs("  Count: -1\n", f);
	if (s->duration_ns > 0) {
		uint64_t sec = s->duration_ns / 1000000000ull;

		if (sec % 3600 == 0)
			fprintf(f, "  Duration: %s HOURS\n", grouped(b, sizeof(b), sec / 3600));
		else if (sec % 60 == 0)
			fprintf(f, "  Duration: %s MINUTES\n", grouped(b, sizeof(b), sec / 60));
		else
			fprintf(f, "  Duration: %s SECONDS\n", grouped(b, sizeof(b), sec));
	}
	fprintf(f, "  No Warmup: %s\n", yes_no(s->no_warmup));
	fprintf(f, "  Warmup: %s operations per op type at %u threads\n",
		grouped(b, sizeof(b), s->warmup_ops), s->warmup_threads);
	fprintf(f, "  Truncate: %s\n", truncate[s->truncate]);
	fprintf(f, "  Consistency Level: %s\n", sm_stress_cl_name(s->cl));
	fprintf(f, "  Serial Consistency Level: %s\n", sm_stress_cl_name(s->serial_cl));
	fputs("  Target Uncertainty: not applicable\n", f);
	fprintf(f, "  Key Size (bytes): %u\n", s->key_size);
	print_dist(f, "Counter Increment Distribution", &s->counter_add);
	if (s->cmd == SM_STRESS_CMD_MIXED || s->cmd == SM_STRESS_CMD_USER) {
		bool first = true;

		if (s->profile != NULL)
			fprintf(f, "  Profile File(s): %s\n", s->profile->path);
		fputs("  Command Ratios: {", f);
		for (i = 0; i < SM_STRESS_NR_OPS; i++) {
			if (s->ratio[i] <= 0)
				continue;
			fprintf(f, "%s%s=%g", first ? "" : ", ", sm_stress_op_name(i), s->ratio[i]);
			first = false;
		}
		fputs("}\n", f);
		print_dist(f, "Command Clustering Distribution", &s->clustering);
	}
}

void
sm_stress_settings_print(FILE *f, const struct sm_stress_settings *s)
{
	static const char *const rate_kind[] = { "none", "throttle", "fixed" };
	static const char *const level[] = { "MINIMAL", "NORMAL", "VERBOSE" };
	static const char *const delay[] = { "constant", "linear", "exponential" };
	static const char *const ordering[] = { "RANDOM", "TOPOLOGICAL", "NEUTRAL" };
	static const char *const alt_op[] = { "PutItem", "UpdateItem",
					      "UpdateItem with a condition" };
	char b[32];
	unsigned i;

	fputs("******************** Stress Settings ********************\n", f);
	print_command(f, s);

	fputs("Rate:\n", f);
	if (s->rate.search.kind == SM_STRESS_SEARCH_THREADS) {
		/* SettingsRate.printSettings of an AutoOptions group */
		fprintf(f, "  Auto: %s\n", s->rate.search.auto_stop ? "true" : "false");
		fprintf(f, "  Min Threads: %u\n", s->rate.search.min_threads);
		fprintf(f, "  Max Threads: %u\n", s->rate.search.max_threads);
	} else {
		fputs("  Auto: false\n", f);
		fprintf(f, "  Thread Count: %u\n", s->rate.threads);
		fprintf(f, "  OpsPer Sec: %" PRIu64 "\n", s->rate.ops_per_s);
		fprintf(f, "  Rate Limit: %s\n", rate_kind[s->rate.kind]);
	}
	if (s->rate.search.kind == SM_STRESS_SEARCH_RATE) {
		const struct sm_stress_search_opts *o = &s->rate.search;

		fprintf(f, "  Search: p%g <= %.3f ms, start %" PRIu64 "/s, step %" PRIu64
			   "/s, max %" PRIu64 "/s, resolution %" PRIu64 "/s, settle %.3f s, "
			   "errors <= %" PRIu64 ", achieved >= %u%%\n",
			o->percentile, (double)o->bound_ns / 1e6, o->start, o->step, o->max,
			o->resolution, (double)o->settle_ns / 1e9, o->max_errors, o->min_achieved);
	}

	fputs("Population:\n", f);
	if (s->pop.dist.kind == SM_STRESS_DIST_SEQ)
		fprintf(f, "  Sequence: %" PRIu64 "..%" PRIu64 "\n", s->pop.dist.min,
			s->pop.dist.max);
	else
		print_dist(f, "Distribution", &s->pop.dist);
	fputs("  Order: ARBITRARY\n", f);
	fprintf(f, "  Wrap: %s\n", yes_no(s->pop.wrap));

	fputs("Columns:\n", f);
	fprintf(f, "  Max Columns Per Key: %" PRIu64 "\n", s->col.count.max);
	fputs("  Column Names: [", f);
	for (i = 0; i < s->col.count.max && i < 8; i++)
		fprintf(f, "%sC%u", i > 0 ? ", " : "", i);
	fputs(s->col.count.max > 8 ? ", ...]\n" : "]\n", f);
	if (s->col.timestamp != 0)
		fprintf(f, "  Timestamp: %" PRIu64 "\n", s->col.timestamp);
	else
		fputs("  Timestamp: null\n", f);
	fprintf(f, "  Variable Column Count: %s\n", yes_no(s->col.count.min < s->col.count.max));
	fprintf(f, "  Slice: %s\n", yes_no(s->col.slice));
	print_dist(f, "Size Distribution", &s->col.size);
	print_dist(f, "Count Distribution", &s->col.count);

	fputs("Errors:\n", f);
	fprintf(f, "  Ignore: %s\n", yes_no(s->errors.ignore));
	fprintf(f, "  Fail fast setting: %s\n", yes_no(s->errors.fail_fast));
	fprintf(f, "  Tries: %u\n", s->errors.retries + 1);
	fprintf(f, "  Skip Read Validation: %s\n", yes_no(s->errors.skip_read_validation));
	fprintf(f, "  RetryPolicy: %s\n", delay[s->errors.delay_policy]);
	fprintf(f, "  Minimum Delay: %s MILLISECONDS\n",
		grouped(b, sizeof(b), s->errors.min_delay_ms));
	fprintf(f, "  Maximum Delay: %s MILLISECONDS\n",
		grouped(b, sizeof(b), s->errors.max_delay_ms));

	fputs("Log:\n", f);
	fprintf(f, "  No Summary: %s\n", yes_no(s->log.no_summary));
	fprintf(f, "  No Settings: %s\n", yes_no(s->log.no_settings));
	fprintf(f, "  File: %s\n", str_or_null(s->log.file));
	fprintf(f, "  HDR File: %s\n", str_or_null(s->log.hdrfile));
	fprintf(f, "  JSON File: %s\n", str_or_null(s->log.json));
	fprintf(f, "  CSV File: %s\n", str_or_null(s->log.csv));
	if (s->log.steps != NULL)
		fprintf(f, "  Steps File: %s\n", s->log.steps);
	fprintf(f, "  Interval Millis: %u\n", s->log.interval_ms);
	fprintf(f, "  Level: %s\n", level[s->log.level]);
	fprintf(f, "  Print Statements On Error: %s\n", yes_no(s->log.print_statements_on_error));

	fputs("Mode:\n", f);
	if (s->mode.api == SM_STRESS_API_ALTERNATOR) {
		fputs("  API: ALTERNATOR (DynamoDB API over HTTP)\n", f);
		fprintf(f, "  Write Operation: %s\n", alt_op[s->mode.alt_op]);
		fprintf(f, "  Write Isolation Hint: %s\n", str_or_null(s->mode.alt_isolation));
	} else {
		fputs("  API: CQL native protocol\n", f);
		fprintf(f, "  Connection Style: %s\n", s->mode.prepared ? "CQL_PREPARED" : "CQL");
		fputs("  CQL Version: CQL3\n", f);
		fprintf(f, "  Protocol Version: V%u\n", s->mode.protocol_version);
		fprintf(f, "  Compression: %s\n",
			s->mode.compression == SM_STRESS_COMPRESSION_LZ4 ? "LZ4" : "NONE");
	}
	fprintf(f, "  Username: %s\n", str_or_null(s->mode.user));
	fprintf(f, "  Password: %s\n", s->mode.password != NULL ? "*suppressed*" : "null");
	if (s->mode.max_pending != 0)
		fprintf(f, "  Max Pending Per Connection: %u\n", s->mode.max_pending);
	else
		fputs("  Max Pending Per Connection: null\n", f);
	fprintf(f, "  Connections Per Host: %u\n", s->mode.connections_per_host);
	fprintf(f, "  Request Timeout: %u ms\n", s->mode.request_timeout_ms);

	fputs("Node:\n", f);
	fputs("  Nodes: [", f);
	for (i = 0; i < s->nodes.n; i++)
		fprintf(f, "%s%s", i > 0 ? ", " : "", s->nodes.hosts[i]);
	fputs("]\n", f);
	fprintf(f, "  Is White List: %s\n", yes_no(s->nodes.whitelist));
	fprintf(f, "  Datacenter: %s\n", str_or_null(s->nodes.datacenter));
	fprintf(f, "  Rack: %s\n", str_or_null(s->nodes.rack));
	fprintf(f, "  Load Balance: %s\n",
		s->nodes.loadbalance != NULL ? s->nodes.loadbalance : "auto");
	if (s->nodes.remote_dc_hosts != 0)
		fprintf(f, "  Remote DC Hosts: %u\n", s->nodes.remote_dc_hosts);
	else
		fputs("  Remote DC Hosts: disabled\n", f);

	fputs("Schema:\n", f);
	fprintf(f, "  Keyspace: %s\n", s->schema.keyspace);
	fprintf(f, "  Replication Strategy: %s\n", s->schema.strategy);
	print_kv(f, "Replication Strategy Options", s->schema.repl, s->schema.n_repl);
	if (s->schema.tablets == 0)
		fprintf(f, "  Tablets: disabled\n");
	else if (s->schema.tablets > 0 && s->schema.tablets_initial > 0)
		fprintf(f, "  Tablets: enabled, initial %u\n", s->schema.tablets_initial);
	else if (s->schema.tablets > 0)
		fprintf(f, "  Tablets: enabled\n");
	fprintf(f, "  Table Compression: %s\n", str_or_null(s->schema.compression));
	fprintf(f, "  Table Compaction Strategy: %s\n", str_or_null(s->schema.compaction_strategy));
	print_kv(f, "Table Compaction Strategy Options", s->schema.compaction,
		 s->schema.n_compaction);

	fputs("Port:\n", f);
	fprintf(f, "  Native Port: %u\n", s->native_port);
	fprintf(f, "  Alternator Port: %u\n", s->alternator_port);

	fputs("Route:\n", f);
	fprintf(f, "  Token Aware: %s\n", yes_no(s->route.token_aware));
	fprintf(f, "  Replica Ordering: %s\n", ordering[s->route.ordering]);
	fprintf(f, "  Shard Aware: %s\n", yes_no(s->route.shard_aware));

	fputs("Shards:\n", f);
	if (s->shards != 0)
		fprintf(f, "  Client Shards: %u\n", s->shards);
	else
		fputs("  Client Shards: one per CPU\n", f);
	fputc('\n', f);
}

/*
 * The help, in parts: `shardmark stress help` prints them all, `help
 * write` or `help -rate` only the part asked for, as cassandra-stress's
 * help does (SettingsMisc.printHelp and each option's printHelp()).
 */
static const char usage_intro[] =
	"Usage: shardmark stress [--key VALUE ...] <command> [sub-options] [-option "
	"sub-options ...]\n"
	"\n"
	"A cassandra-stress compatible load generator: cassandra-stress command lines\n"
	"work unchanged, with cassandra-stress's defaults and report layout.\n"
	"\n"
	"Options of shardmark itself (those of `shardmark serve --help`: --config FILE,\n"
	"--smp N, --cpuset LIST, --overprovisioned, --log-level L, --network-stack\n"
	"uring|dpdk, --dpdk-args ARGS, ...) may come before the command: they set up\n"
	"the loader's own runtime and network stack. Only --config reads a file;\n"
	"-shards N wins over --smp. Over DPDK's memif to a server at 10.0.0.1:\n"
	"  shardmark stress --network-stack dpdk --dpdk-args \"--no-huge -m 512 \\\n"
	"    --vdev net_memif0,role=client,socket=/tmp/sm.sock -- --ipv4 10.0.0.2/24\" \\\n"
	"    write n=100000 -node 10.0.0.1 -shards 1\n"
	"--prometheus-port N [--prometheus-address A] serves the loader's live metrics\n"
	"on http://A:N/metrics while it runs (per client shard and op type: operations,\n"
	"errors, latency histograms and quantiles, in flight, the rate target; off\n"
	"unless given; deploy/grafana/shardmark-stress.json is their dashboard).\n"
	"\n";

/* One line per command; the first word and its alias name the help topic. */
static const struct {
	const char *names[3];
	const char *line;
} usage_commands[] = {
	{ { "write", "insert" },
	  "  write (insert)                   write partitions of keyspace1.standard1\n" },
	{ { "read" }, "  read                             read them (write them first)\n" },
	{ { "mixed" }, "  mixed ratio(read=N,write=M)      interleave reads and writes (default 1:1)\n" },
	{ { "counter_write", "counter_add", "counterwrite" },
	  "  counter_write (counter_add)      increment counters of keyspace1.counter1\n" },
	{ { "counter_read", "counter_get", "counterread" },
	  "  counter_read (counter_get)       read counters\n" },
	{ { "user" },
	  "  user profile=FILE ops(insert=N,QUERY=M...)\n"
	  "                                   a cassandra-stress YAML profile's insert and\n"
	  "                                   named queries (docs/profiles/ has examples)\n" },
	{ { "help" }, "  help [command|-option]           this text, or the part about one command\n"
		      "                                   or option\n" },
};

static const char usage_sub_options[] =
	"Command sub-options:\n"
	"  n=N[k|m|b]                       number of operations (k=1000, m=10^6, b=10^9)\n"
	"  duration=N[s|m|h]                or run for this long (one of the two is required)\n"
	"  cl=CL                            consistency level (default LOCAL_ONE): ONE, TWO,\n"
	"                                   THREE, QUORUM, ALL, ANY, LOCAL_QUORUM, EACH_QUORUM,\n"
	"                                   LOCAL_ONE, SERIAL, LOCAL_SERIAL\n"
	"  serial-cl=SERIAL|LOCAL_SERIAL    (default SERIAL)\n"
	"  no-warmup                        skip the warm-up\n"
	"  warmup=N                         [extension] warm-up operations per op type\n"
	"                                   (default: min(50000, n/4) x nodes, 50000 x nodes\n"
	"                                   with duration=; run at up to 100 threads)\n"
	"  truncate=never|once|always       truncate the table first (default never)\n"
	"  keysize=N                        partition key bytes (default 10)\n"
	"  add=DIST                         counter increment (default FIXED(1))\n"
	"  clustering=DIST                  mixed: run lengths of one op type\n"
	"                                   (default GAUSSIAN(1..10))\n";


static const char usage_dist[] =
	"DIST: FIXED(n), UNIFORM(min..max), GAUSSIAN(min..max[,stdvrng]) (stdvrng 3 by\n"
	"default), GAUSSIAN(min..max,mean,stdev), EXP(min..max), EXTREME(min..max,shape),\n"
	"QEXTREME(min..max,shape,quantas), SEQ(min..max) (-pop only), ~ before one to\n"
	"invert it; names are case-insensitive.\n";

static const char usage_unsupported[] =
	"Not supported (refused with an error): print, legacy, the err< run-until-stable\n"
	"mode, -sendto, -graph op=, -insert visits=/revisit=, -mode thrift/simplenative/auth-provider=,\n"
	"compression=snappy, -col names=. Accepted and ignored: -port jmx=/thrift=,\n"
	"-mode port=, -pop contents=, -errors skip-unsupported-columns.\n";

void
sm_stress_usage(FILE *f)
{
	size_t i;

	fputs(usage_intro, f);
	fputs("Commands:\n", f);
	for (i = 0; i < SM_ARRAY_SIZE(usage_commands); i++)
		fputs(usage_commands[i].line, f);
	fputc('\n', f);
	fputs(usage_sub_options, f);
	fputs("\nOptions:\n", f);
	for (i = 0; i < SM_ARRAY_SIZE(options); i++)
		if (options[i].help != NULL)
			fputs(options[i].help, f);
	fputc('\n', f);
	fputs(usage_dist, f);
	fputc('\n', f);
	fputs(usage_unsupported, f);
}

int
sm_stress_usage_topic(FILE *f, const char *topic)
{
	char opt[32];
	size_t i, k;

	/* a command first: `help insert` is write's (its alias), `help -insert` the option's */
	for (i = 0; i < SM_ARRAY_SIZE(usage_commands); i++) {
		for (k = 0; k < SM_ARRAY_SIZE(usage_commands[i].names) && usage_commands[i].names[k];
		     k++) {
			if (strcasecmp(topic, usage_commands[i].names[k]) != 0)
				continue;
			if (strcmp(usage_commands[i].names[0], "help") == 0) {
				sm_stress_usage(f);
				return 0;
			}
			fprintf(f,
				"Usage: shardmark stress %s n=N|duration=N[s|m|h] [sub-options] "
				"[-option sub-options ...]\n\n%s\n%s\n"
				"Options: -pop, -col, -rate, -schema, -node, -port, -mode, -log,\n"
				"-errors, -route, -shards (shardmark stress help -OPTION)\n",
				usage_commands[i].names[0], usage_commands[i].line, usage_sub_options);
			return 0;
		}
	}
	/* "-rate" or "rate" */
	snprintf(opt, sizeof(opt), "%s%s", topic[0] == '-' ? "" : "-", topic);
	for (i = 0; i < SM_ARRAY_SIZE(options); i++) {
		if (options[i].help == NULL || strcasecmp(opt, options[i].name) != 0)
			continue;
		fprintf(f, "Usage: shardmark stress <command> ... %s ...\n\n%s", options[i].name,
			options[i].help);
		if (strcmp(options[i].name, "-pop") == 0 ||
		    strcmp(options[i].name, "-col") == 0)
			fprintf(f, "\n%s", usage_dist);
		return 0;
	}
	return -ENOENT;
}
