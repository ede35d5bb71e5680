/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * scylla-bench on the stress engine (sm_stress_sb.h). One op slot, named
 * as the mode. Each operation covers rows-per-request clustering rows of
 * one partition: sequential walks partition by partition and row by row
 * (each row once per iteration), uniform draws the partition and the first
 * row, timeseries appends rows to the partitions in turn (ck grows like
 * time). v is a function of (pk, ck), so reads check every row they get.
 */

#include "sm_stress_sb.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sm_mem.h"
#include "sm_stress_run_priv.h"

#define SB_MAX_ROWS 256 /* rows-per-request */

enum sb_mode { SB_WRITE, SB_READ, SB_COUNTER_UPDATE, SB_COUNTER_READ, SB_SCAN };
enum sb_workload { SB_SEQUENTIAL, SB_UNIFORM, SB_TIMESERIES };

static const char *const mode_names[] = { "write", "read", "counter_update", "counter_read",
					  "scan" };
static const char *const workload_names[] = { "sequential", "uniform", "timeseries" };

struct sm_stress_sb {
	enum sb_mode mode;
	enum sb_workload workload;
	int64_t partitions, offset, rows, iterations;
	unsigned rows_per_request, page_size, concurrency, connections;
	unsigned size_min, size_max;
	bool upper_bound, in_restriction, no_lower_bound;
	uint64_t max_rate, duration_ns, timeout_ns;
	char keyspace[64], table[64], cl_name[16];
	unsigned rf;
	char setup[4][400];
	uint64_t *ts_next; /* timeseries: each shard's next row number */
	unsigned nshards;
	uint64_t last_rows;
};

struct sb_worker {
	int64_t pk, ck0;
	unsigned nrows;
	uint8_t pkb[8];
	uint8_t cks[SB_MAX_ROWS][8];
	uint8_t lim[4], one[8];
	struct sm_cql_value vals[SB_MAX_ROWS * 3 + 4];
	struct sm_cql_batch_stmt stmts[SB_MAX_ROWS];
	uint8_t *arena;
};

static struct sm_stress_sb *
SB(void)
{
	return sx->s.sb;
}

static int __attribute__((format(printf, 3, 4)))
sbfail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* ---- Go's durations ---- */

static void
trim(char *s)
{
	char *dot = strchr(s, '.'), *e;

	if (dot == NULL)
		return;
	for (e = s + strlen(s) - 1; e > dot && *e == '0'; e--)
		*e = '\0';
	if (e == dot)
		*e = '\0';
}

const char *
sm_stress_sb_duration(int64_t ns, int round, char *buf, size_t len)
{
	char num[48];
	int64_t q;

	if (round) {
		/* results.Round() */
		q = ns < 1000	   ? 1
		    : ns < 1000000 ? 1000
		    : ns < 10000000 ? 100000
		    : ns < 1000000000 ? 1000000
				      : 100000000;
		ns = (ns + q / 2) / q * q;
	}
	if (ns == 0) {
		snprintf(buf, len, "0s");
	} else if (ns < 1000) {
		snprintf(buf, len, "%" PRId64 "ns", ns);
	} else if (ns < 1000000) {
		snprintf(num, sizeof(num), "%.3f", (double)ns / 1e3);
		trim(num);
		snprintf(buf, len, "%sµs", num);
	} else if (ns < 1000000000) {
		snprintf(num, sizeof(num), "%.6f", (double)ns / 1e6);
		trim(num);
		snprintf(buf, len, "%sms", num);
	} else {
		int64_t h = ns / 3600000000000ll, m = ns / 60000000000ll % 60;
		int64_t sns = ns % 60000000000ll;

		snprintf(num, sizeof(num), "%" PRId64 ".%09" PRId64, sns / 1000000000,
			 sns % 1000000000);
		trim(num);
		if (h > 0)
			snprintf(buf, len, "%" PRId64 "h%" PRId64 "m%ss", h, m, num);
		else if (m > 0)
			snprintf(buf, len, "%" PRId64 "m%ss", m, num);
		else
			snprintf(buf, len, "%ss", num);
	}
	return buf;
}

/* Go's %v of a float64: the shortest form that reads back the same. */
static const char *
go_float(double v, char *buf, size_t len)
{
	int p;

	for (p = 1; p <= 17; p++) {
		snprintf(buf, len, "%.*g", p, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	if (strchr(buf, 'e') != NULL) {
		/* Go writes 1e+06 as 1e+06 too: the same */
	}
	return buf;
}

/* ---- flags ---- */

static int
parse_go_duration(const char *v, uint64_t *ns)
{
	double total = 0;
	const char *p = v;

	if (strcmp(v, "0") == 0) {
		*ns = 0;
		return 0;
	}
	while (*p) {
		char *end;
		double x = strtod(p, &end);
		double mul;

		if (end == p)
			return -EINVAL;
		p = end;
		if (strncmp(p, "ns", 2) == 0)
			mul = 1, p += 2;
		else if (strncmp(p, "us", 2) == 0 || strncmp(p, "µs", 3) == 0)
			mul = 1e3, p += p[0] == 'u' ? 2 : 3;
		else if (strncmp(p, "ms", 2) == 0)
			mul = 1e6, p += 2;
		else if (*p == 's')
			mul = 1e9, p++;
		else if (*p == 'm')
			mul = 60e9, p++;
		else if (*p == 'h')
			mul = 3600e9, p++;
		else
			return -EINVAL;
		total += x * mul;
	}
	if (!(total >= 0))
		return -EINVAL;
	*ns = (uint64_t)total;
	return 0;
}

static bool
is_flag(const char *a, const char *name, const char **inl)
{
	size_t n = strlen(name);

	if (a[0] == '-' && a[1] == '-')
		a++;
	if (a[0] != '-' || strncmp(a + 1, name, n) != 0)
		return false;
	if (a[1 + n] == '\0') {
		*inl = NULL;
		return true;
	}
	if (a[1 + n] == '=') {
		*inl = a + 2 + n;
		return true;
	}
	return false;
}

void
sm_stress_sb_usage(FILE *f)
{
	fputs("Usage: shardmark [shardmark options] scylla-bench -mode write|read|counter_update|"
	      "counter_read|scan\n"
	      "         [-workload sequential|uniform|timeseries] [-partition-count N]\n"
	      "         [-partition-offset N] [-clustering-row-count N] [-clustering-row-size N |\n"
	      "         fixed:N | uniform:MIN..MAX] [-rows-per-request N] [-provide-upper-bound]\n"
	      "         [-in-restriction] [-no-lower-bound] [-concurrency N] [-max-rate OPS]\n"
	      "         [-duration D] [-iterations N] [-nodes HOST,...] [-port N] [-keyspace K]\n"
	      "         [-table T] [-consistency-level L] [-replication-factor N] [-page-size N]\n"
	      "         [-connection-count N] [-timeout D] [-shards N]\n\n"
	      "scylla-bench's modes, workloads, schema, queries and output on shardmark's\n"
	      "engine. Reads check every row's v against what the writes put there.\n",
	      f);
}

int
sm_stress_sb_parse(int argc, char **argv, struct sm_stress_settings *s, char *err,
		   size_t errlen)
{
	static char *base_argv[] = { (char *)(uintptr_t) "write", (char *)(uintptr_t) "n=1",
				     (char *)(uintptr_t) "no-warmup" };
	struct sm_stress_sb *b;
	const char *nodes = "127.0.0.1", *mode = NULL, *workload = "sequential", *cl = "quorum";
	int64_t port = 9042, shards = 0;
	int a, ret;

	ret = sm_stress_settings_parse(3, base_argv, s, err, errlen);
	if (ret < 0)
		return ret;
	b = sm_calloc(1, sizeof(*b));
	if (b == NULL) {
		sm_stress_settings_free(s);
		return -ENOMEM;
	}
	s->sb = b;
	b->partitions = 10000;
	b->rows = 100;
	b->iterations = 1;
	b->rows_per_request = 1;
	b->page_size = 1000;
	b->concurrency = 16;
	b->connections = 4;
	b->size_min = b->size_max = 4;
	b->rf = 1;
	b->timeout_ns = 5000000000ull;
	snprintf(b->keyspace, sizeof(b->keyspace), "scylla_bench");
	snprintf(b->table, sizeof(b->table), "test");
	for (a = 0; a < argc; a++) {
		const char *o = argv[a], *v = NULL;
		struct {
			const char *name;
			bool boolean;
		} const flags[] = {
			{ "mode", false },
			{ "workload", false },
			{ "partition-count", false },
			{ "partition-offset", false },
			{ "clustering-row-count", false },
			{ "clustering-row-size", false },
			{ "rows-per-request", false },
			{ "provide-upper-bound", true },
			{ "in-restriction", true },
			{ "no-lower-bound", true },
			{ "concurrency", false },
			{ "max-rate", false },
			{ "duration", false },
			{ "iterations", false },
			{ "nodes", false },
			{ "port", false },
			{ "keyspace", false },
			{ "table", false },
			{ "consistency-level", false },
			{ "replication-factor", false },
			{ "page-size", false },
			{ "connection-count", false },
			{ "timeout", false },
			{ "shards", false },
			{ "measure-latency", true },
			{ "client-compression", true },
			{ "validate-data", true },
		};
		unsigned i;
		char *end;
		long long x = 0;
		bool num;

		for (i = 0; i < SM_ARRAY_SIZE(flags); i++)
			if (is_flag(o, flags[i].name, &v))
				break;
		if (i == SM_ARRAY_SIZE(flags)) {
			ret = sbfail(err, errlen,
				     "unknown flag '%s' (see shardmark scylla-bench --help)", o);
			goto fail;
		}
		if (flags[i].boolean) {
			bool on = v == NULL || strcmp(v, "true") == 0 || strcmp(v, "1") == 0;

			if (v != NULL && !on && strcmp(v, "false") != 0 && strcmp(v, "0") != 0) {
				ret = sbfail(err, errlen, "-%s=%s: true or false", flags[i].name, v);
				goto fail;
			}
			if (i == 7)
				b->upper_bound = on;
			else if (i == 8)
				b->in_restriction = on;
			else if (i == 9)
				b->no_lower_bound = on;
			continue; /* measure-latency, client-compression, validate-data: always on */
		}
		if (v == NULL) {
			if (a + 1 >= argc) {
				ret = sbfail(err, errlen, "-%s needs a value", flags[i].name);
				goto fail;
			}
			v = argv[++a];
		}
		num = i == 2 || i == 3 || i == 4 || i == 6 || i == 10 || i == 11 || i == 13 ||
		      i == 15 || i == 19 || i == 20 || i == 21 || i == 23;
		if (num) {
			x = strtoll(v, &end, 10);
			if (*end != '\0' || x < (i == 3 || i == 11 || i == 13 || i == 23 ? 0 : 1)) {
				ret = sbfail(err, errlen, "-%s %s: expected a %s number", flags[i].name,
					     v, i == 3 || i == 11 ? "non-negative" : "positive");
				goto fail;
			}
		}
		switch (i) {
		case 0: mode = v; break;
		case 1: workload = v; break;
		case 2: b->partitions = x; break;
		case 3: b->offset = x; break;
		case 4: b->rows = x; break;
		case 5: {
			unsigned lo, hi;

			if (sscanf(v, "uniform:%u..%u", &lo, &hi) == 2 && lo <= hi && lo > 0) {
				b->size_min = lo;
				b->size_max = hi;
			} else if ((sscanf(v, "fixed:%u", &lo) == 1 || sscanf(v, "%u", &lo) == 1) &&
				   lo > 0 && strspn(v, "fixed:0123456789") == strlen(v)) {
				b->size_min = b->size_max = lo;
			} else {
				ret = sbfail(err, errlen,
					     "-clustering-row-size %s: N, fixed:N or uniform:MIN..MAX",
					     v);
				goto fail;
			}
			if (b->size_max > 1u << 20) {
				ret = sbfail(err, errlen, "-clustering-row-size: at most 1 MiB");
				goto fail;
			}
			break;
		}
		case 6:
			if (x > SB_MAX_ROWS) {
				ret = sbfail(err, errlen, "-rows-per-request: at most %d", SB_MAX_ROWS);
				goto fail;
			}
			b->rows_per_request = (unsigned)x;
			break;
		case 10: b->concurrency = (unsigned)x; break;
		case 11: b->max_rate = (uint64_t)x; break;
		case 12:
		case 22:
			if (parse_go_duration(v, i == 12 ? &b->duration_ns : &b->timeout_ns) < 0) {
				ret = sbfail(err, errlen, "-%s %s: a duration such as 30s, 10m, 1h",
					     flags[i].name, v);
				goto fail;
			}
			break;
		case 13: b->iterations = x; break;
		case 14: nodes = v; break;
		case 15: port = x; break;
		case 16: snprintf(b->keyspace, sizeof(b->keyspace), "%s", v); break;
		case 17: snprintf(b->table, sizeof(b->table), "%s", v); break;
		case 18: cl = v; break;
		case 19: b->rf = (unsigned)x; break;
		case 20: b->page_size = (unsigned)x; break;
		case 21: b->connections = (unsigned)x; break;
		case 23: shards = x; break;
		}
	}
	if (mode == NULL) {
		ret = sbfail(err, errlen, "give -mode write|read|counter_update|counter_read|scan");
		goto fail;
	}
	for (b->mode = 0; b->mode < SM_ARRAY_SIZE(mode_names) &&
			  strcmp(mode, mode_names[b->mode]) != 0;
	     b->mode++)
		;
	if (b->mode == SM_ARRAY_SIZE(mode_names)) {
		ret = sbfail(err, errlen,
			     "-mode %s: use write, read, counter_update, counter_read or scan", mode);
		goto fail;
	}
	for (b->workload = 0; b->workload < SM_ARRAY_SIZE(workload_names) &&
			      strcmp(workload, workload_names[b->workload]) != 0;
	     b->workload++)
		;
	if (b->workload == SM_ARRAY_SIZE(workload_names)) {
		ret = sbfail(err, errlen, "-workload %s: use sequential, uniform or timeseries",
			     workload);
		goto fail;
	}
	if (port > 65535 || port < 1) {
		ret = sbfail(err, errlen, "-port %" PRId64 ": a TCP port", port);
		goto fail;
	}
	if (b->in_restriction && (b->upper_bound || b->no_lower_bound)) {
		ret = sbfail(err, errlen, "-in-restriction does not go with -provide-upper-bound or "
					  "-no-lower-bound");
		goto fail;
	}
	if (b->workload != SB_SEQUENTIAL && b->duration_ns == 0) {
		ret = sbfail(err, errlen,
			     "-workload %s runs until -duration ends: give -duration (e.g. 30s)",
			     workload);
		goto fail;
	}
	for (const char *p = b->keyspace; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_') {
			ret = sbfail(err, errlen, "-keyspace %s: letters, digits and _", b->keyspace);
			goto fail;
		}
	for (const char *p = b->table; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_') {
			ret = sbfail(err, errlen, "-table %s: letters, digits and _", b->table);
			goto fail;
		}
	{
		/* the consistency level through the stress parser's cl= */
		char clarg[48], *cargv[4], portarg[32], hostbuf[512];
		struct sm_stress_settings tmp;
		int nc = 0;

		snprintf(clarg, sizeof(clarg), "cl=%s", cl);
		snprintf(portarg, sizeof(portarg), "native=%" PRId64, port);
		snprintf(hostbuf, sizeof(hostbuf), "%s", nodes);
		cargv[nc++] = (char *)(uintptr_t) "write";
		cargv[nc++] = (char *)(uintptr_t) "n=1";
		cargv[nc++] = clarg;
		ret = sm_stress_settings_parse(nc, cargv, &tmp, err, errlen);
		if (ret < 0)
			goto fail;
		s->cl = tmp.cl;
		snprintf(b->cl_name, sizeof(b->cl_name), "%s", cl);
		for (char *p = b->cl_name; *p; p++)
			*p = (char)tolower((unsigned char)*p);
		sm_stress_settings_free(&tmp);
		if ((ret = sm_stress_settings_nodes(s, hostbuf, err, errlen)) < 0)
			goto fail;
	}
	s->native_port = (uint16_t)port;
	s->cmd = SM_STRESS_CMD_SB;
	s->wl = &sm_stress_sb_ops;
	memset(s->ratio, 0, sizeof(s->ratio));
	s->ratio[SM_STRESS_OP_USER0] = 1;
	sm_stress_user_op_name_set(0, mode_names[b->mode]);
	{
		uint64_t per = ((uint64_t)b->rows + b->rows_per_request - 1) / b->rows_per_request;

		s->pop.dist = (struct sm_stress_dist){ .kind = SM_STRESS_DIST_SEQ,
						       .min = 0,
						       .max = SM_MAX((uint64_t)b->partitions * per, 2) -
							      1 };
		s->pop.wrap = b->workload != SB_SEQUENTIAL || b->iterations == 0;
		s->pop.set_by_user = true;
		s->n_ops = b->workload == SB_SEQUENTIAL && b->iterations > 0
				   ? (uint64_t)b->partitions * per * (uint64_t)b->iterations
				   : 0;
		s->duration_ns = b->duration_ns;
		if (s->n_ops > 0 && b->duration_ns > 0)
			s->n_ops = 0; /* -duration bounds a sequential run too */
		if (s->n_ops == 0 && s->duration_ns == 0) {
			ret = sbfail(err, errlen, "-iterations 0 runs until -duration: give -duration");
			goto fail;
		}
	}
	s->warmup_ops = 0;
	s->no_warmup = true;
	s->rate.threads = b->concurrency;
	s->warmup_threads = b->concurrency;
	s->rate.ops_per_s = b->max_rate;
	s->rate.kind = b->max_rate > 0 ? SM_STRESS_RATE_FIXED : SM_STRESS_RATE_NONE;
	s->shards = (unsigned)shards;
	s->errors.ignore = true; /* scylla-bench counts errors and goes on */
	s->errors.retries = 0;
	s->log.no_settings = true;
	s->log.no_summary = true;
	s->log.interval_ms = 1000;
	s->mode.connections_per_host = b->connections;
	s->mode.request_timeout_ms = (unsigned)SM_MIN(b->timeout_ns / 1000000, (uint64_t)UINT32_MAX);
	sm_free(s->schema.keyspace);
	s->schema.keyspace = sm_strdup(b->keyspace);
	if (s->schema.keyspace == NULL) {
		ret = -ENOMEM;
		goto fail;
	}
	return 0;
fail:
	sm_stress_settings_free(s);
	return ret;
}

void
sm_stress_sb_free(struct sm_stress_settings *s)
{
	if (s->sb == NULL)
		return;
	sm_free(s->sb->ts_next);
	sm_free(s->sb);
	s->sb = NULL;
}

/* ---- on the engine ---- */

static void
sb_prepare(void)
{
	struct sm_stress_sb *b = SB();
	char *t = sx->stmt_text[SM_STRESS_OP_USER0];
	const char *cols = b->mode == SB_COUNTER_READ ? "ck, c1, c2, c3, c4, c5" : "ck, v";
	const char *tab = b->mode == SB_COUNTER_UPDATE || b->mode == SB_COUNTER_READ
				  ? "test_counters"
				  : b->table;
	size_t off;
	unsigned i;

	b->ts_next = sm_calloc(sx->nshards, sizeof(*b->ts_next));
	b->nshards = sx->nshards;
	switch (b->mode) {
	case SB_WRITE:
		snprintf(t, 1024, "INSERT INTO %s.%s (pk, ck, v) VALUES (?, ?, ?)", b->keyspace,
			 b->table);
		break;
	case SB_COUNTER_UPDATE:
		snprintf(t, 1024,
			 "UPDATE %s.%s SET c1 = c1 + ?, c2 = c2 + ?, c3 = c3 + ?, c4 = c4 + ?, "
			 "c5 = c5 + ? WHERE pk = ? AND ck = ?",
			 b->keyspace, tab);
		break;
	case SB_SCAN:
		snprintf(t, 1024, "SELECT * FROM %s.%s WHERE token(pk) >= ? AND token(pk) <= ?",
			 b->keyspace, b->table);
		break;
	default:
		off = (size_t)snprintf(t, 1024, "SELECT %s FROM %s.%s WHERE pk = ?", cols,
				       b->keyspace, tab);
		if (b->in_restriction) {
			off += (size_t)snprintf(t + off, 1024 - off, " AND ck IN (");
			for (i = 0; i < b->rows_per_request; i++)
				off += (size_t)snprintf(t + off, 1024 - off, "%s?", i ? ", " : "");
			snprintf(t + off, 1024 - off, ")");
		} else if (b->no_lower_bound) {
			snprintf(t + off, 1024 - off, " LIMIT %u", b->rows_per_request);
		} else if (b->upper_bound) {
			snprintf(t + off, 1024 - off, " AND ck >= ? AND ck < ?");
		} else {
			snprintf(t + off, 1024 - off, " AND ck >= ? LIMIT %u", b->rows_per_request);
		}
		break;
	}
	snprintf(b->setup[0], sizeof(b->setup[0]),
		 "CREATE KEYSPACE IF NOT EXISTS %s WITH REPLICATION = {'class' : "
		 "'SimpleStrategy', 'replication_factor' : %u }",
		 b->keyspace, b->rf);
	snprintf(b->setup[1], sizeof(b->setup[1]), "USE %s", b->keyspace);
	snprintf(b->setup[2], sizeof(b->setup[2]),
		 "CREATE TABLE IF NOT EXISTS %s.%s (pk bigint, ck bigint, v blob, PRIMARY KEY(pk, "
		 "ck))",
		 b->keyspace, b->table);
	snprintf(b->setup[3], sizeof(b->setup[3]),
		 "CREATE TABLE IF NOT EXISTS %s.test_counters (pk bigint, ck bigint, c1 counter, "
		 "c2 counter, c3 counter, c4 counter, c5 counter, PRIMARY KEY(pk, ck))",
		 b->keyspace);
}

static const char *
sb_setup_statement(unsigned i)
{
	return i < 4 ? SB()->setup[i] : NULL;
}

static int
sb_worker_init(struct sm_stress_worker *w)
{
	struct sb_worker *u;

	if (SB()->ts_next == NULL)
		return -ENOMEM;
	u = sm_calloc(1, sizeof(*u));
	if (u == NULL)
		return -ENOMEM;
	w->user = u;
	u->arena = sm_malloc((size_t)SB()->size_max * SB()->rows_per_request + 16);
	return u->arena != NULL ? 0 : -ENOMEM;
}

static void
sb_worker_fini(struct sm_stress_worker *w)
{
	struct sb_worker *u = w->user;

	if (u == NULL)
		return;
	sm_free(u->arena);
	sm_free(u);
	w->user = NULL;
}

static void
sb_pick(struct sm_stress_shard *sh, struct sm_stress_worker *w)
{
	struct sm_stress_sb *b = SB();
	struct sb_worker *u = w->user;
	unsigned r = b->rows_per_request;
	uint64_t per = ((uint64_t)b->rows + r - 1) / r;

	switch (b->workload) {
	case SB_UNIFORM:
		u->pk = b->offset + (int64_t)sm_rand_below(&sh->rng, (uint64_t)b->partitions);
		u->ck0 = b->rows > r ? (int64_t)sm_rand_below(&sh->rng, (uint64_t)(b->rows - r + 1))
				     : 0;
		break;
	case SB_TIMESERIES:
		if (b->mode == SB_WRITE || b->mode == SB_COUNTER_UPDATE) {
			/* the shards append to the partitions in turn; ck grows like time */
			uint64_t t = b->ts_next[sh->id]++ * sx->nshards + sh->id;

			u->pk = b->offset + (int64_t)(t % (uint64_t)b->partitions);
			u->ck0 = (int64_t)(t / (uint64_t)b->partitions) * r;
		} else {
			u->pk = b->offset + (int64_t)sm_rand_below(&sh->rng, (uint64_t)b->partitions);
			u->ck0 = (int64_t)sm_rand_below(&sh->rng, per) * r;
		}
		break;
	case SB_SEQUENTIAL:
	default:
		u->pk = b->offset + (int64_t)(w->key_index / per);
		u->ck0 = (int64_t)(w->key_index % per) * r;
		break;
	}
	u->nrows = b->workload == SB_TIMESERIES ? r : (unsigned)SM_MIN((int64_t)r, b->rows - u->ck0);
	if (u->nrows == 0)
		u->nrows = 1;
}

static void
put64(uint8_t *o, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		o[i] = (uint8_t)(v >> (56 - 8 * i));
}

/* v of row (pk, ck): its size from the -clustering-row-size range, its bytes a hash. */
static uint32_t
row_value(int64_t pk, int64_t ck, uint8_t *out)
{
	struct sm_stress_sb *b = SB();
	uint64_t x = (uint64_t)pk * 0x9e3779b97f4a7c15ull ^ (uint64_t)ck * 0xc2b2ae3d27d4eb4full;
	uint64_t h = sm_splitmix64(&x), wd = 0;
	uint32_t n = b->size_min + (uint32_t)(h % (b->size_max - b->size_min + 1)), i;

	for (i = 0; i < n; i++) {
		if (i % 8 == 0)
			wd = sm_splitmix64(&x);
		out[i] = (uint8_t)wd;
		wd >>= 8;
	}
	return n;
}

static int64_t
sb_fill(struct sm_stress_worker *w)
{
	struct sm_stress_sb *b = SB();
	struct sb_worker *u = w->user;
	unsigned i, n = 0;
	size_t off = 0;

	put64(u->pkb, (uint64_t)u->pk);
	put64(u->one, 1);
	for (i = 0; i < u->nrows; i++)
		put64(u->cks[i], (uint64_t)(u->ck0 + i));
	switch (b->mode) {
	case SB_WRITE:
		for (i = 0; i < u->nrows; i++) {
			uint32_t len = row_value(u->pk, u->ck0 + i, u->arena + off);

			u->vals[3 * i] = (struct sm_cql_value){ .v = { u->pkb, 8 } };
			u->vals[3 * i + 1] = (struct sm_cql_value){ .v = { u->cks[i], 8 } };
			u->vals[3 * i + 2] = (struct sm_cql_value){ .v = { u->arena + off, len } };
			off += len;
		}
		break;
	case SB_COUNTER_UPDATE:
		/* c1..c5 + 1 for each row: 7 markers a row */
		for (i = 0; i < u->nrows && 7 * i + 6 < SM_ARRAY_SIZE(u->vals); i++) {
			for (n = 0; n < 5; n++)
				u->vals[7 * i + n] = (struct sm_cql_value){ .v = { u->one, 8 } };
			u->vals[7 * i + 5] = (struct sm_cql_value){ .v = { u->pkb, 8 } };
			u->vals[7 * i + 6] = (struct sm_cql_value){ .v = { u->cks[i], 8 } };
		}
		u->nrows = i;
		break;
	case SB_SCAN: {
		/* a slice of the ring: the whole of it split into -partition-count ranges */
		uint64_t span = UINT64_MAX / (uint64_t)b->partitions;
		/* in unsigned arithmetic: the slice's start wraps from INT64_MIN up */
		uint64_t lo = (uint64_t)INT64_MIN + span * (uint64_t)(u->pk - b->offset);

		put64(u->cks[0], lo);
		put64(u->cks[1], lo + span - 1);
		u->vals[0] = (struct sm_cql_value){ .v = { u->cks[0], 8 } };
		u->vals[1] = (struct sm_cql_value){ .v = { u->cks[1], 8 } };
		break;
	}
	default:
		u->vals[n++] = (struct sm_cql_value){ .v = { u->pkb, 8 } };
		if (b->in_restriction) {
			for (i = 0; i < b->rows_per_request; i++) {
				put64(u->cks[i], (uint64_t)(u->ck0 + i));
				u->vals[n++] = (struct sm_cql_value){ .v = { u->cks[i], 8 } };
			}
		} else if (!b->no_lower_bound) {
			u->vals[n++] = (struct sm_cql_value){ .v = { u->cks[0], 8 } };
			if (b->upper_bound) {
				put64(u->cks[1], (uint64_t)(u->ck0 + b->rows_per_request));
				u->vals[n++] = (struct sm_cql_value){ .v = { u->cks[1], 8 } };
			}
		}
		break;
	}
	w->nparts = 1;
	return sm_ring_token_of(u->pkb, 8);
}

static int
sb_issue(struct sm_stress_worker *w, struct sm_stress_conn *c, sm_cqlc_cb cb)
{
	struct sm_stress_sb *b = SB();
	struct sb_worker *u = w->user;
	struct sm_bytes id = sm_cqlc_prepared_id(&c->stmt[SM_STRESS_OP_USER0]);
	unsigned per = b->mode == SB_COUNTER_UPDATE ? 7 : 3, nb, i;
	struct sm_cql_params p = {
		.consistency = (uint16_t)sx->s.cl,
		.page_size = (int32_t)b->page_size,
		.timestamp = INT64_MIN,
		.flags = SM_CQL_QF_PAGE_SIZE,
	};

	if ((b->mode == SB_WRITE || b->mode == SB_COUNTER_UPDATE) && u->nrows > 1) {
		struct sm_cql_batch bt = {
			.type = b->mode == SB_WRITE ? SM_CQL_BATCH_UNLOGGED : SM_CQL_BATCH_COUNTER,
			.stmts = u->stmts,
			.n = (uint16_t)u->nrows,
			.consistency = p.consistency,
			.timestamp = INT64_MIN,
		};

		for (i = 0; i < u->nrows; i++)
			u->stmts[i] = (struct sm_cql_batch_stmt){
				.kind = SM_CQL_BATCH_KIND_PREPARED,
				.query_or_id = id,
				.values = { .v = &u->vals[per * i], .n = (uint16_t)per },
			};
		return sm_cqlc_batch(c->cql, &bt, cb, w);
	}
	switch (b->mode) {
	case SB_WRITE:
		nb = 3;
		break;
	case SB_COUNTER_UPDATE:
		nb = 7;
		break;
	case SB_SCAN:
		nb = 2;
		break;
	default:
		nb = 1 + (b->in_restriction	? b->rows_per_request
			  : b->no_lower_bound ? 0
			  : b->upper_bound    ? 2
					      : 1);
		p.flags |= SM_CQL_QF_SKIP_METADATA;
		break;
	}
	p.values = (struct sm_cql_values){ .v = u->vals, .n = (uint16_t)nb };
	return sm_cqlc_execute_params(c->cql, id, &p, cb, w);
}

static void
sb_prepared(struct sm_stress_conn *c, enum sm_stress_op op, const struct sm_cqlc_result *r)
{
	(void)c;
	(void)op;
	(void)r;
}

static int32_t
sb_check(struct sm_stress_worker *w, struct sm_stress_conn *c, const struct sm_cqlc_result *r,
	 uint64_t *rows, sm_cqlc_cb cb)
{
	struct sm_stress_sb *b = SB();
	struct sb_worker *u = w->user;
	struct sm_cqlc_rows_iter it;
	struct sm_bytes cells[2];
	uint8_t *want = u->arena; /* a read sends no values: room for one v */

	(void)c;
	(void)cb;
	if (b->mode == SB_WRITE || b->mode == SB_COUNTER_UPDATE) {
		*rows = u->nrows;
		return 0;
	}
	*rows = r->kind == SM_CQLC_ROWS ? r->nrows : 0;
	if (b->mode != SB_READ || r->kind != SM_CQLC_ROWS || sx->s.errors.skip_read_validation)
		return 0;
	/* SELECT ck, v: each row's v is what the write of (pk, ck) put there */
	sm_cqlc_rows_iter(&it, r);
	while (sm_cqlc_rows_next(&it, cells, 2)) {
		int64_t ck = 0;
		uint32_t n;
		int i;

		if (cells[0].p == NULL || cells[0].len != 8 || cells[1].p == NULL)
			return SM_STRESS_VALIDATION_ERROR;
		for (i = 0; i < 8; i++)
			ck = (int64_t)((uint64_t)ck << 8 | cells[0].p[i]);
		n = row_value(u->pk, ck, want);
		if (n != cells[1].len || memcmp(want, cells[1].p, n) != 0)
			return SM_STRESS_VALIDATION_ERROR;
	}
	return 0;
}

static void
sb_header(void)
{
	struct sm_stress_sb *b = SB();
	char d[32];

	/* main.go's Configuration block: fmt.Println puts a space after each tab run */
	sm_stress_out("Configuration\n");
	sm_stress_out("Mode:\t\t\t %s\n", mode_names[b->mode]);
	sm_stress_out("Workload:\t\t %s\n", workload_names[b->workload]);
	sm_stress_out("Timeout:\t\t %s\n", sm_stress_sb_duration((int64_t)b->timeout_ns, 0, d, sizeof(d)));
	sm_stress_out("Consistency level:\t %s\n", b->cl_name);
	sm_stress_out("Partition count:\t %" PRId64 "\n", b->partitions);
	if (b->workload == SB_SEQUENTIAL && b->offset != 0)
		sm_stress_out("Partition offset:\t %" PRId64 "\n", b->offset);
	sm_stress_out("Clustering rows:\t %" PRId64 "\n", b->rows);
	if (b->size_min == b->size_max)
		sm_stress_out("Clustering row size:\t Fixed(%u)\n", b->size_min);
	else
		sm_stress_out("Clustering row size:\t Uniform(min=%u, max=%u)\n", b->size_min,
			      b->size_max);
	sm_stress_out("Rows per request:\t %u\n", b->rows_per_request);
	if (b->mode == SB_READ) {
		sm_stress_out("Provide upper bound:\t %s\n", b->upper_bound ? "true" : "false");
		sm_stress_out("IN queries:\t\t %s\n", b->in_restriction ? "true" : "false");
		sm_stress_out("No lower bound:\t\t %s\n", b->no_lower_bound ? "true" : "false");
	}
	sm_stress_out("Page size:\t\t %u\n", b->page_size);
	sm_stress_out("Concurrency:\t\t %u\n", b->concurrency);
	sm_stress_out("Connections:\t\t %u\n", b->connections);
	if (b->max_rate > 0)
		sm_stress_out("Maximum rate:\t\t %" PRIu64 " op/s\n", b->max_rate);
	else
		sm_stress_out("Maximum rate:\t\t unlimited\n");
	sm_stress_out("Client compression:\t %s\n",
		      sx->s.mode.compression == SM_STRESS_COMPRESSION_LZ4 ? "true" : "false");
	/* thread_results.go: "\n%5v %7v %7v %6v %-6v %-6v %-6v %-6v %-6v %-6v %-6v %v" */
	sm_stress_out("\n%5s %7s %7s %6s %-6s %-6s %-6s %-6s %-6s %-6s %-6s ", "time", "ops/s",
		      "rows/s", "errors", "max", "99.9th", "99th", "95th", "90th", "median", "mean");
}

static void
sb_status(double elapsed, uint64_t ops, uint64_t d_ops, double dt)
{
	struct sm_stress_op_stats *m = &sx->merged[SM_STRESS_OP_USER0];
	const struct sm_hdr *h = &m->st[0];
	char t[32], l[7][32];
	uint64_t rows = m->rows - SB()->last_rows;

	(void)ops;
	(void)dt;
	SB()->last_rows = m->rows;
	sm_stress_out("\n%5s %7" PRIu64 " %7" PRIu64 " %6" PRIu64 " %-6s %-6s %-6s %-6s %-6s %-6s %-6s ",
		      sm_stress_sb_duration((int64_t)(elapsed * 1e9), 1, t, sizeof(t)), d_ops, rows,
		      m->errors,
		      sm_stress_sb_duration(sm_hdr_max(h), 1, l[0], 32),
		      sm_stress_sb_duration(sm_hdr_value_at_percentile(h, 99.9), 1, l[1], 32),
		      sm_stress_sb_duration(sm_hdr_value_at_percentile(h, 99), 1, l[2], 32),
		      sm_stress_sb_duration(sm_hdr_value_at_percentile(h, 95), 1, l[3], 32),
		      sm_stress_sb_duration(sm_hdr_value_at_percentile(h, 90), 1, l[4], 32),
		      sm_stress_sb_duration(sm_hdr_value_at_percentile(h, 50), 1, l[5], 32),
		      sm_stress_sb_duration(h->total_count ? (int64_t)sm_hdr_mean(h) : 0, 1, l[6], 32));
}

static void
latency_block(const char *name, const struct sm_hdr *h)
{
	char d[7][32];

	/* printLatencyResults(): Println's operands, a space between each */
	sm_stress_out("%s :\n  max:\t\t %s \n  99.9th:\t %s \n  99th:\t\t %s \n  95th:\t\t %s \n"
		      "  90th:\t\t %s \n  median:\t %s \n  mean:\t\t %s\n",
		      name, sm_stress_sb_duration(sm_hdr_max(h), 0, d[0], 32),
		      sm_stress_sb_duration(sm_hdr_value_at_percentile(h, 99.9), 0, d[1], 32),
		      sm_stress_sb_duration(sm_hdr_value_at_percentile(h, 99), 0, d[2], 32),
		      sm_stress_sb_duration(sm_hdr_value_at_percentile(h, 95), 0, d[3], 32),
		      sm_stress_sb_duration(sm_hdr_value_at_percentile(h, 90), 0, d[4], 32),
		      sm_stress_sb_duration(sm_hdr_value_at_percentile(h, 50), 0, d[5], 32),
		      sm_stress_sb_duration(h->total_count ? (int64_t)sm_hdr_mean(h) : 0, 0, d[6],
					    32));
}

static void
sb_report(const struct sm_stress_op_stats *tot, double secs)
{
	const struct sm_stress_op_stats *o = &tot[0];
	char d[32], f1[40], f2[40];

	sm_stress_out("\n\nResults\n");
	sm_stress_out("Time (avg):\t %s\n", sm_stress_sb_duration((int64_t)(secs * 1e9), 0, d, 32));
	sm_stress_out("Total ops:\t %" PRIu64 "\n", o->ops + o->errors);
	sm_stress_out("Total rows:\t %" PRIu64 "\n", o->rows);
	if (o->errors != 0)
		sm_stress_out("Total errors:\t %" PRIu64 "\n", o->errors);
	sm_stress_out("Operations/s:\t %s\n",
		      go_float(secs > 0 ? (double)(o->ops + o->errors) / secs : 0, f1, sizeof(f1)));
	sm_stress_out("Rows/s:\t\t %s\n", go_float(secs > 0 ? (double)o->rows / secs : 0, f2,
						   sizeof(f2)));
	latency_block("raw latency", &o->st_total);
	latency_block("c-o fixed latency", &o->rt_total);
}

const struct sm_stress_workload_ops sm_stress_sb_ops = {
	.prepare = sb_prepare,
	.setup_statement = sb_setup_statement,
	.worker_init = sb_worker_init,
	.worker_fini = sb_worker_fini,
	.pick = sb_pick,
	.fill = sb_fill,
	.issue = sb_issue,
	.prepared = sb_prepared,
	.check = sb_check,
	.header = sb_header,
	.status = sb_status,
	.report = sb_report,
};
