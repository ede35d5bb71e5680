/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shardmark bench's figures and report (sm_bench_suite.h).
 *
 * The results are the children's own JSON, read with jsmn (Debian's
 * libjsmn-dev, header-only, private to this file as in lib/alternator's
 * sm_json.c, whose full reader lib/bench must not depend on): only
 * numbers by key are needed, so a member lookup over jsmn's tokens is the
 * whole reader. JSMN_PARENT_LINKS keeps tokenizing linear.
 */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define JSMN_STATIC
#define JSMN_STRICT
#define JSMN_PARENT_LINKS
#include <jsmn.h>

#include "sm_bench_suite.h"
#include "sm_core.h"

/* ---- reading a result ---- */

struct doc {
	const char *text;
	jsmntok_t *tok;
	int n;
};

static int
doc_parse(struct doc *d, const char *text, size_t len)
{
	jsmn_parser p;
	int n;

	memset(d, 0, sizeof(*d));
	d->text = text;
	jsmn_init(&p);
	n = jsmn_parse(&p, text, len, NULL, 0);
	if (n <= 0)
		return -EINVAL;
	d->tok = sm_malloc((size_t)n * sizeof(*d->tok));
	if (d->tok == NULL)
		return -ENOMEM;
	jsmn_init(&p);
	d->n = jsmn_parse(&p, text, len, d->tok, (unsigned)n);
	if (d->n != n || d->tok[0].type != JSMN_OBJECT)
		return -EINVAL;
	return 0;
}

/* The token after @i's value and everything inside it. */
static int
doc_skip(const struct doc *d, int i)
{
	int j = i + 1;

	while (j < d->n && d->tok[j].start < d->tok[i].end)
		j++;
	return j;
}

/* The value of member @key of object @obj, or -1. */
static int
doc_get(const struct doc *d, int obj, const char *key)
{
	size_t klen = strlen(key);
	int i, k;

	if (obj < 0 || d->tok[obj].type != JSMN_OBJECT)
		return -1;
	for (i = obj + 1, k = 0; k < d->tok[obj].size && i + 1 < d->n; k++) {
		const jsmntok_t *t = &d->tok[i];

		if ((size_t)(t->end - t->start) == klen &&
		    memcmp(d->text + t->start, key, klen) == 0)
			return i + 1;
		i = doc_skip(d, i + 1);
	}
	return -1;
}

/* The number at @key of object @obj, or @dflt when absent or not a number (null). */
static double
doc_num(const struct doc *d, int obj, const char *key, double dflt)
{
	const jsmntok_t *t;
	char tmp[64];
	int v = doc_get(d, obj, key);

	if (v < 0)
		return dflt;
	t = &d->tok[v];
	if (t->type != JSMN_PRIMITIVE ||
	    (d->text[t->start] != '-' && (d->text[t->start] < '0' || d->text[t->start] > '9')))
		return dflt;
	snprintf(tmp, sizeof(tmp), "%.*s", (int)SM_MIN((size_t)(t->end - t->start), sizeof(tmp) - 1),
		 d->text + t->start);
	return strtod(tmp, NULL);
}

/* perf-simple-query's stats and per_shard, or bench echo's total. */
static int
psq_echo_figures(const struct doc *d, enum sm_bench_load_kind kind, struct sm_bench_figures *f)
{
	int stats, shards, t, i;
	double ops = 0, hops = 0;

	if (kind == SM_BENCH_ECHO) {
		stats = doc_get(d, 0, "total");
		f->rate = doc_num(d, stats, "requests_per_s", -1);
		f->mad = -1;
		f->hops = -1;
	} else {
		stats = doc_get(d, 0, "stats");
		f->rate = doc_num(d, stats, "median tps", -1);
		f->mad = doc_num(d, stats, "mad tps", -1);
		shards = doc_get(d, 0, "per_shard");
		if (shards >= 0 && d->tok[shards].type == JSMN_ARRAY) {
			for (i = 0, t = shards + 1; i < d->tok[shards].size && t < d->n;
			     i++, t = doc_skip(d, t)) {
				double n = doc_num(d, t, "ops", 0);

				ops += n;
				hops += n * doc_num(d, t, "hops_per_op", 0);
			}
		}
		f->hops = ops > 0 ? hops / ops : 0;
	}
	f->allocs = doc_num(d, stats, "allocs_per_op", -1);
	f->tasks = doc_num(d, stats, "tasks_per_op", -1);
	f->insns = doc_num(d, stats, "instructions_per_op", -1);
	f->cycles = doc_num(d, stats, kind == SM_BENCH_ECHO ? "cycles_per_op" : "cpu_cycles_per_op",
			    -1);
	return stats < 0 || f->rate < 0 ? -EINVAL : 0;
}

/* stress's client figures. */
static int
stress_figures(const struct doc *d, struct sm_bench_figures *f)
{
	double cpu;

	f->rate = doc_num(d, 0, "ops_per_s", -1);
	f->ops = doc_num(d, 0, "ops", 0);
	f->errors = doc_num(d, 0, "errors", 0);
	/* The loader's busy time per op (its idle polling is no cost of an op). */
	cpu = doc_num(d, 0, "client_busy_s", -1);
	if (cpu < 0)
		cpu = doc_num(d, 0, "client_cpu_s", 0);
	f->client_us_per_op = f->ops > 0 ? cpu * 1e6 / f->ops : 0;
	f->misrouted = doc_num(d, doc_get(d, 0, "routing"), "misrouted", 0);
	f->p50_ms = doc_num(d, doc_get(d, 0, "service_time"), "p50_ms", -1);
	f->p99_ms = doc_num(d, doc_get(d, 0, "service_time"), "p99_ms", -1);
	return f->rate < 0 ? -EINVAL : 0;
}

int
sm_bench_read_figures(enum sm_bench_load_kind kind, const char *text, size_t len,
		      struct sm_bench_figures *f)
{
	struct doc d;
	int ret;

	ret = doc_parse(&d, text, len);
	if (ret == 0)
		ret = kind == SM_BENCH_STRESS ? stress_figures(&d, f) : psq_echo_figures(&d, kind, f);
	sm_free(d.tok);
	return ret;
}

/* ---- a served instance's counters ---- */

int
sm_bench_parse_metrics(char *text, struct sm_bench_server_counters *c)
{
	static const struct {
		const char *name;
		size_t off;
	} want[] = {
		{ "shardmark_requests_total{", offsetof(struct sm_bench_server_counters, requests) },
		{ "shardmark_hops_total{", offsetof(struct sm_bench_server_counters, hops) },
		{ "shardmark_tasks_run_total{", offsetof(struct sm_bench_server_counters, tasks) },
		{ "shardmark_allocs_total{", offsetof(struct sm_bench_server_counters, allocs) },
		{ "shardmark_perf_instructions_total{",
		  offsetof(struct sm_bench_server_counters, insns) },
		{ "shardmark_perf_cycles_total{", offsetof(struct sm_bench_server_counters, cycles) },
	};
	char *line, *save;
	unsigned i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < SM_BENCH_MAX_SERVER_SHARDS; i++)
		c->insns[i] = c->cycles[i] = -1;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned k, shard;
		char *sp;

		for (k = 0; k < SM_ARRAY_SIZE(want); k++) {
			size_t nl = strlen(want[k].name);

			if (strncmp(line, want[k].name, nl) != 0 ||
			    sscanf(line + nl, "shard=\"%u\"", &shard) != 1 ||
			    shard >= SM_BENCH_MAX_SERVER_SHARDS || (sp = strrchr(line, ' ')) == NULL)
				continue;
			((double *)((char *)c + want[k].off))[shard] = strtod(sp + 1, NULL);
			c->nshards = SM_MAX(c->nshards, shard + 1);
		}
	}
	return c->nshards > 0 ? 0 : -EIO;
}

void
sm_bench_counters_delta(struct sm_bench_server_counters *d,
			const struct sm_bench_server_counters *a,
			const struct sm_bench_server_counters *b)
{
	unsigned i;

	d->nshards = b->nshards;
	for (i = 0; i < b->nshards; i++) {
		d->requests[i] = b->requests[i] - a->requests[i];
		d->hops[i] = b->hops[i] - a->hops[i];
		d->tasks[i] = b->tasks[i] - a->tasks[i];
		d->allocs[i] = b->allocs[i] - a->allocs[i];
		d->insns[i] = a->insns[i] >= 0 && b->insns[i] >= 0 ? b->insns[i] - a->insns[i] : -1;
		d->cycles[i] =
			a->cycles[i] >= 0 && b->cycles[i] >= 0 ? b->cycles[i] - a->cycles[i] : -1;
	}
}

void
sm_bench_server_per_op(struct sm_bench_figures *f)
{
	double hops = 0, tasks = 0, allocs = 0, insns = 0, cycles = 0;
	bool insns_ok = true, cycles_ok = true;
	unsigned i;

	for (i = 0; i < f->srv.nshards; i++) {
		hops += f->srv.hops[i];
		tasks += f->srv.tasks[i];
		allocs += f->srv.allocs[i];
		insns_ok &= f->srv.insns[i] >= 0;
		cycles_ok &= f->srv.cycles[i] >= 0;
		insns += f->srv.insns[i];
		cycles += f->srv.cycles[i];
	}
	f->mad = -1;
	f->hops = f->ops > 0 ? hops / f->ops : 0;
	f->tasks = f->ops > 0 ? tasks / f->ops : 0;
	f->allocs = f->ops > 0 ? allocs / f->ops : 0;
	f->insns = insns_ok && f->ops > 0 ? insns / f->ops : -1;
	f->cycles = cycles_ok && f->ops > 0 ? cycles / f->ops : -1;
}

/* ---- the tables ---- */

void
sm_bench_print_header(FILE *out)
{
	fprintf(out, "\n%-30s %12s %9s %10s %10s %10s %10s %10s\n", "load", "ops/s", "mad",
		"allocs/op", "tasks/op", "insns/op", "cycles/op", "hops/op");
	fflush(out);
}

static void
print_value(FILE *out, double v)
{
	if (v < 0)
		fprintf(out, " %10s", "n/a");
	else
		fprintf(out, " %10.0f", v);
}

void
sm_bench_print_row(FILE *out, const char *load, const struct sm_bench_figures *f)
{
	fprintf(out, "%-30s %12.0f", load, f->rate);
	if (f->mad < 0)
		fprintf(out, " %9s", "-");
	else
		fprintf(out, " %9.0f", f->mad);
	fprintf(out, " %10.3f %10.3f", f->allocs, f->tasks);
	print_value(out, f->insns);
	print_value(out, f->cycles);
	if (f->hops < 0)
		fprintf(out, " %10s\n", "-");
	else
		fprintf(out, " %10.3f\n", f->hops);
	fflush(out);
}

void
sm_bench_print_stress_header(FILE *out)
{
	fprintf(out, "\nstress over loopback: the client (1 shard, 64 threads), then the "
		     "server's "
		     "counters per shard, per client operation\n");
	fprintf(out, "%-30s %12s %9s %9s %12s %9s %10s\n", "load", "client ops/s", "p50 ms",
		"p99 ms", "busy us/op", "errors", "misrouted");
	fprintf(out, "    %-16s %10s %10s %10s %10s %10s %10s %10s\n", "", "requests", "req/op",
		"hops/op", "tasks/op", "allocs/op", "insns/op", "cycles/op");
}

static void
print_shard_value(FILE *out, double v, double ops)
{
	if (v < 0)
		fprintf(out, " %10s", "n/a");
	else
		fprintf(out, " %10.3f", ops > 0 ? v / ops : 0);
}

void
sm_bench_print_stress_details(FILE *out, const char *load, const struct sm_bench_figures *f)
{
	unsigned i;

	fprintf(out, "%-30s %12.0f %9.3f %9.3f %12.2f %9.0f %10.0f\n", load, f->rate, f->p50_ms,
		f->p99_ms, f->client_us_per_op, f->errors, f->misrouted);
	for (i = 0; i < f->srv.nshards; i++) {
		fprintf(out, "    server shard %-3u %10.0f", i, f->srv.requests[i]);
		print_shard_value(out, f->srv.requests[i], f->ops);
		print_shard_value(out, f->srv.hops[i], f->ops);
		print_shard_value(out, f->srv.tasks[i], f->ops);
		print_shard_value(out, f->srv.allocs[i], f->ops);
		print_shard_value(out, f->srv.insns[i], f->ops);
		print_shard_value(out, f->srv.cycles[i], f->ops);
		fprintf(out, "\n");
	}
}

void
sm_bench_json_server(FILE *out, const struct sm_bench_figures *f)
{
	unsigned i;

	fprintf(out, ", \"server_per_shard\": [");
	for (i = 0; i < f->srv.nshards; i++) {
		fprintf(out,
			"%s{\"shard\": %u, \"requests\": %.0f, \"hops\": %.0f, \"tasks\": %.0f, "
			"\"allocs\": %.0f, \"instructions\": ",
			i ? ", " : "", i, f->srv.requests[i], f->srv.hops[i], f->srv.tasks[i],
			f->srv.allocs[i]);
		if (f->srv.insns[i] < 0)
			fprintf(out, "null, \"cycles\": ");
		else
			fprintf(out, "%.0f, \"cycles\": ", f->srv.insns[i]);
		if (f->srv.cycles[i] < 0)
			fprintf(out, "null}");
		else
			fprintf(out, "%.0f}", f->srv.cycles[i]);
	}
	fprintf(out, "]");
}

/* ---- --csv: the loads' own rows, in one set of columns ---- */

static const char *const csv_columns[] = {
	"load",		 "interval",	  "seconds",	   "type",	   "total_ops",
	"ops_per_s",	 "partitions_per_s", "rows_per_s",   "mean_ms",	   "p50_ms",
	"p95_ms",	 "p99_ms",	  "p999_ms",	   "max_ms",	   "allocs_per_op",
	"logallocs_per_op", "tasks_per_op", "insns_per_op", "cycles_per_op", "errors",
};

void
sm_bench_csv_header(FILE *out)
{
	size_t i;

	for (i = 0; i < SM_ARRAY_SIZE(csv_columns); i++)
		fprintf(out, "%s%s", i ? "," : "", csv_columns[i]);
	fputc('\n', out);
}

/* The @n comma-separated fields of @line (modified) into @field. */
static unsigned
csv_split(char *line, char **field, unsigned n)
{
	unsigned k = 0;

	while (k < n) {
		field[k++] = line;
		line = strchr(line, ',');
		if (line == NULL)
			break;
		*line++ = '\0';
	}
	return k;
}

void
sm_bench_csv_append(FILE *out, const char *load, char *text)
{
	char *names[SM_ARRAY_SIZE(csv_columns)], *vals[SM_ARRAY_SIZE(csv_columns)];
	char *line, *save = NULL;
	unsigned nnames = 0, nvals, i, k;

	line = strtok_r(text, "\n", &save);
	if (line == NULL)
		return;
	nnames = csv_split(line, names, SM_ARRAY_SIZE(names));
	while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
		nvals = csv_split(line, vals, SM_ARRAY_SIZE(vals));
		for (i = 0; i < SM_ARRAY_SIZE(csv_columns); i++) {
			const char *v = i == 0 ? load : "";

			for (k = 0; i > 0 && k < nnames && k < nvals; k++)
				if (strcmp(names[k], csv_columns[i]) == 0)
					v = vals[k];
			fprintf(out, "%s%s", i ? "," : "", v);
		}
		fputc('\n', out);
	}
	fflush(out);
}

void
sm_bench_csv_echo(FILE *out, const char *load, unsigned duration,
		  const struct sm_bench_figures *f)
{
	char insns[32] = "", cycles[32] = "";

	if (f->insns >= 0)
		snprintf(insns, sizeof(insns), "%.3f", f->insns);
	if (f->cycles >= 0)
		snprintf(cycles, sizeof(cycles), "%.3f", f->cycles);
	fprintf(out, "%s,1,%u,total,,%.3f,,,,,,,,,%.6f,,%.6f,%s,%s,0\n", load, duration, f->rate,
		f->allocs, f->tasks, insns, cycles);
	fflush(out);
}
