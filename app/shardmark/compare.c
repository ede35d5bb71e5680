/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shardmark compare: is run B different from run A, figure by figure?
 * The statistics are lib/bench's sm_stats_compare.c; this prints them.
 */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "sm_mem.h"
#include "sm_result.h"
#include "sm_stats_compare.h"

#define DEFAULT_CONF 0.99
#define DEFAULT_RESAMPLES 1000
#define DEFAULT_SEED 19

static void
usage(FILE *f)
{
	fprintf(f, "usage: shardmark compare A B [--fail-on-regression PCT] [--json FILE|-]\n"
		   "                         [--confidence C] [--resamples N] [--seed S]\n\n"
		   "Compare two results (stress, bench or perf-simple-query), figure by figure:\n"
		   "the change from A to B, its confidence interval and a verdict (better, worse,\n"
		   "no change; n/a where a figure has no samples to test). Means of per-interval\n"
		   "samples by Welch's t-test with standard errors corrected for autocorrelation\n"
		   "(as latte); latency percentiles by a block bootstrap over the intervals;\n"
		   "perf-simple-query's median tps from its median and MAD.\n\n"
		   "A and B are runs as shardmark report takes them: a.json a.hdr (same name, one\n"
		   "run) or a.json,a-log.hdr. Stress's per-interval samples are in its HDR log\n"
		   "(-log hdrfile=F); its JSON alone has totals only.\n\n"
		   "options:\n"
		   "  --fail-on-regression PCT  exit 1 when a figure is significantly worse by\n"
		   "                            more than PCT percent (for CI)\n"
		   "  --json FILE               also write the comparison as JSON ('-': stdout,\n"
		   "                            instead of the text)\n"
		   "  --confidence C            confidence of the intervals (default 0.99)\n"
		   "  --resamples N             bootstrap resamples (default 1000)\n"
		   "  --seed S                  bootstrap seed (default 19: repeatable)\n"
		   "  -h, --help                this help\n");
}

static bool
num_arg(const char *v, double lo, double hi, double *out)
{
	char *end;

	*out = strtod(v, &end);
	return end != v && *end == 0 && *out >= lo && *out <= hi;
}

static void
pct(char *buf, size_t cap, double v)
{
	snprintf(buf, cap, "%+.2f%%", 100 * v);
}

static void
json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if ((unsigned char)*s >= 0x20)
			fputc(*s, f);
	}
	fputc('"', f);
}

static void
json_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.6g", v);
	else
		fputs("null", f);
}

int
sm_cmd_compare(int argc, char **argv)
{
	double fail_pct = -1, conf = DEFAULT_CONF, resamples = DEFAULT_RESAMPLES,
	       seed = DEFAULT_SEED;
	const char *json = NULL;
	char **files, err[512], a_s[24], lo_s[24], hi_s[24];
	struct sm_result *runs;
	struct sm_stats_cmp *cmp = NULL;
	const struct sm_result_metric **ma = NULL;
	FILE *jf = NULL;
	int i, nf = 0, n, ret = SM_EXIT_FAIL;
	unsigned k, nc = 0, worse = 0, regress = 0;
	bool text;

	files = sm_calloc((size_t)argc + 1, sizeof(char *));
	runs = sm_calloc(2, sizeof(*runs));
	if (files == NULL || runs == NULL) {
		fprintf(stderr, "shardmark compare: out of memory\n");
		goto out_free;
	}
	for (i = 0; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		bool ok = true;

		if (strcmp(o, "-h") == 0 || strcmp(o, "--help") == 0) {
			usage(stdout);
			ret = SM_EXIT_OK;
			goto out_free;
		}
		if (o[0] != '-' || o[1] == 0) {
			files[nf++] = argv[i];
			continue;
		}
		if (v == NULL)
			ok = false;
		else if (strcmp(o, "--fail-on-regression") == 0)
			ok = num_arg(v, 0, 1e6, &fail_pct);
		else if (strcmp(o, "--json") == 0)
			json = v;
		else if (strcmp(o, "--confidence") == 0)
			ok = num_arg(v, 0.5, 0.9999, &conf);
		else if (strcmp(o, "--resamples") == 0)
			ok = num_arg(v, 10, 100000, &resamples);
		else if (strcmp(o, "--seed") == 0)
			ok = num_arg(v, 0, 1e18, &seed);
		else {
			fprintf(stderr,
				"shardmark compare: unknown option '%s' (see shardmark "
				"compare --help)\n",
				o);
			ret = SM_EXIT_USAGE;
			goto out_free;
		}
		if (!ok) {
			fprintf(stderr,
				"shardmark compare: %s needs %s (see shardmark compare --help)\n",
				o,
				strcmp(o, "--fail-on-regression") == 0 ? "a percentage >= 0"
				: strcmp(o, "--confidence") == 0       ? "a value in 0.5..0.9999"
				: strcmp(o, "--resamples") == 0	       ? "a count in 10..100000"
				: strcmp(o, "--seed") == 0	       ? "a number >= 0"
								       : "a value");
			ret = SM_EXIT_USAGE;
			goto out_free;
		}
		i++;
	}
	n = nf ? sm_result_load_args(runs, 2, files, (unsigned)nf, err, sizeof(err)) : 0;
	if (n < 0 && n != -E2BIG) {
		fprintf(stderr, "shardmark compare: %s\n", err);
		goto out_runs;
	}
	if (n != 2) {
		fprintf(stderr,
			"shardmark compare: give two runs, A and B (a run is one result file, or "
			"a.json a.hdr of one stress run)\n");
		ret = SM_EXIT_USAGE;
		goto out_runs;
	}
	if (runs[0].kind != runs[1].kind)
		fprintf(stderr, "shardmark compare: warning: A and B are results of different "
				"commands; only figures of the same name are compared\n");
	cmp = sm_calloc(SM_RESULT_MAX_METRICS, sizeof(*cmp));
	ma = sm_calloc(SM_RESULT_MAX_METRICS, sizeof(*ma));
	if (cmp == NULL || ma == NULL) {
		fprintf(stderr, "shardmark compare: out of memory\n");
		goto out_runs;
	}
	for (k = 0; k < runs[0].nmetric; k++) {
		const struct sm_result_metric *a = &runs[0].metric[k];
		const struct sm_result_metric *b = sm_result_metric_find(&runs[1], a->name);

		if (b == NULL)
			continue;
		if (sm_stats_compare_metric(&runs[0], a, &runs[1], b, conf, (unsigned)resamples,
					    (uint64_t)seed, &cmp[nc]) < 0) {
			fprintf(stderr, "shardmark compare: out of memory\n");
			goto out_runs;
		}
		ma[nc++] = a;
	}
	if (nc == 0) {
		fprintf(stderr, "shardmark compare: A and B have no figure in common\n");
		goto out_runs;
	}
	for (k = 0; k < nc; k++)
		if (cmp[k].verdict == SM_VERDICT_WORSE) {
			worse++;
			if (fail_pct >= 0 && fabs(cmp[k].change) * 100 > fail_pct)
				regress++;
		}
	text = json == NULL || strcmp(json, "-") != 0;
	if (text) {
		printf("A: %s\nB: %s\n%.4g%% confidence intervals of the change from A to B\n\n",
		       runs[0].label, runs[1].label, conf * 100);
		printf("%-40s %12s %12s %9s %21s  %-9s %s\n", "figure", "A", "B", "change",
		       "interval", "verdict", "method");
		for (k = 0; k < nc; k++) {
			const struct sm_stats_cmp *c = &cmp[k];
			char iv[64];

			pct(a_s, sizeof(a_s), c->change);
			pct(lo_s, sizeof(lo_s), c->lo);
			pct(hi_s, sizeof(hi_s), c->hi);
			if (c->verdict == SM_VERDICT_NA)
				snprintf(iv, sizeof(iv), "-");
			else
				snprintf(iv, sizeof(iv), "[%s, %s]", lo_s, hi_s);
			printf("%-40s %12.4g %12.4g %9s %21s  %-9s %s\n", ma[k]->name, c->a, c->b,
			       a_s, iv, sm_stats_verdict_name(c->verdict), c->method);
		}
		printf("\n%u of %u figures significantly worse", worse, nc);
		if (fail_pct >= 0)
			printf(", %u by more than %g%%", regress, fail_pct);
		printf("\n");
	}
	if (json != NULL) {
		jf = strcmp(json, "-") == 0 ? stdout : fopen(json, "w");
		if (jf == NULL) {
			fprintf(stderr, "shardmark compare: cannot write %s: %s\n", json,
				strerror(errno));
			goto out_runs;
		}
		fputs("{\"a\": ", jf);
		json_str(jf, runs[0].label);
		fputs(", \"b\": ", jf);
		json_str(jf, runs[1].label);
		fprintf(jf, ", \"confidence\": %g, \"figures\": [", conf);
		for (k = 0; k < nc; k++) {
			const struct sm_stats_cmp *c = &cmp[k];

			fputs(k ? ",\n  {\"name\": " : "\n  {\"name\": ", jf);
			json_str(jf, ma[k]->name);
			fputs(", \"unit\": ", jf);
			json_str(jf, ma[k]->unit);
			fputs(", \"a\": ", jf);
			json_num(jf, c->a);
			fputs(", \"b\": ", jf);
			json_num(jf, c->b);
			fputs(", \"change\": ", jf);
			json_num(jf, c->change);
			fputs(", \"interval\": ", jf);
			if (c->verdict == SM_VERDICT_NA)
				fputs("null", jf);
			else {
				fputc('[', jf);
				json_num(jf, c->lo);
				fputs(", ", jf);
				json_num(jf, c->hi);
				fputc(']', jf);
			}
			fputs(", \"p\": ", jf);
			if (c->p >= 0)
				json_num(jf, c->p);
			else
				fputs("null", jf);
			fprintf(jf,
				", \"significant\": %s, \"verdict\": \"%s\", \"method\": \"%s\"}",
				c->significant ? "true" : "false",
				sm_stats_verdict_name(c->verdict), c->method);
		}
		fprintf(jf, "\n], \"worse\": %u, \"regressions\": %u}\n", worse, regress);
		if (jf != stdout && fclose(jf) != 0) {
			fprintf(stderr, "shardmark compare: writing %s failed\n", json);
			goto out_runs;
		}
	}
	if (regress > 0) {
		fprintf(stderr,
			"shardmark compare: %u %s significantly worse by more than %g%% "
			"(--fail-on-regression)\n",
			regress, regress == 1 ? "figure is" : "figures are", fail_pct);
		goto out_runs;
	}
	ret = SM_EXIT_OK;
out_runs:
	for (i = 0; i < 2; i++)
		sm_result_fini(&runs[i]);
out_free:
	sm_free(ma);
	sm_free(cmp);
	sm_free(runs);
	sm_free(files);
	return ret;
}
