/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shardmark report: the HTML report of one or more results (lib/bench's
 * sm_result_read.c reads them, sm_report_html.c writes the page).
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "sm_mem.h"
#include "sm_report_html.h"
#include "sm_result.h"

#define MAX_RUNS 8

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: shardmark report RUN [RUN ...] -o FILE.html [--title TITLE]\n"
		"       shardmark report RUN -o FILE.html --revision NAME\n\n"
		"One self-contained HTML file (inline SVG charts, no script, nothing fetched)\n"
		"with the runs overlaid: per op type throughput and p50/p99/p99.9/max over time\n"
		"and the latency distribution by percentile; per-shard counters as bars; every\n"
		"figure in a table; settings, machine and version.\n\n"
		"A RUN is a result file: stress's -log json=F, its HDR interval log\n"
		"(-log hdrfile=F: the per-interval data), perf-simple-query's --json-result F\n"
		"or bench's --json F. Files whose names differ only in the extension (a.json\n"
		"a.hdr), or joined by a comma (a.json,a-log.hdr), are one run.\n\n"
		"With --revision, as cassandra-stress's -graph revision=, the run is named NAME\n"
		"and added to FILE.html when it exists (the report carries its runs' files, so\n"
		"it is read back and rewritten with one more run; a revision of the same name\n"
		"is replaced).\n\n"
		"options:\n"
		"  -o, --output FILE   the HTML file to write (required)\n"
		"  --title TITLE       the page's title (default: shardmark report)\n"
		"  --revision NAME     name the run NAME and add it to FILE.html\n"
		"  -h, --help          this help\n");
}

int
sm_app_report(const char *out, const char *title, const char *revision, char **files, int nf,
	      const char *who, FILE *msg)
{
	char err[512], old_title[160] = "";
	const struct sm_result *ptr[MAX_RUNS];
	struct sm_result *runs;
	int i, n, nold = 0, ret = SM_EXIT_FAIL;
	FILE *f;

	runs = sm_calloc(MAX_RUNS, sizeof(*runs));
	if (runs == NULL) {
		fprintf(stderr, "%s: out of memory\n", who);
		return SM_EXIT_FAIL;
	}
	if (revision != NULL && access(out, F_OK) == 0) {
		nold = sm_report_html_read(out, runs, MAX_RUNS - 1, old_title, sizeof(old_title),
					   err, sizeof(err));
		if (title == NULL && old_title[0])
			title = old_title;
		if (nold < 0) {
			fprintf(stderr, "%s: %s\n", who, err);
			nold = 0;
			goto out_runs;
		}
		/* a revision of the same name is replaced, as a rerun under its name */
		for (i = 0; i < nold; i++)
			if (strcmp(runs[i].label, revision) == 0) {
				sm_result_fini(&runs[i]);
				memmove(&runs[i], &runs[i + 1],
					(size_t)(nold - i - 1) * sizeof(*runs));
				memset(&runs[--nold], 0, sizeof(*runs));
				break;
			}
	}
	n = sm_result_load_args(runs + nold, MAX_RUNS - (unsigned)nold, files, (unsigned)nf, err,
				sizeof(err));
	if (n < 0) {
		fprintf(stderr, "%s: %s\n", who, err);
		goto out_runs;
	}
	if (revision != NULL) {
		if (n != 1) {
			fprintf(stderr, "%s: --revision names one run; %d given\n", who, n);
			ret = SM_EXIT_USAGE;
			goto out_runs;
		}
		snprintf(runs[nold].label, sizeof(runs[nold].label), "%s", revision);
	}
	n += nold;
	for (i = 0; i < n; i++)
		ptr[i] = &runs[i];
	f = fopen(out, "w");
	if (f == NULL) {
		fprintf(stderr, "%s: cannot write %s: %s\n", who, out, strerror(errno));
		goto out_runs;
	}
	if (sm_report_html_write(f, title, ptr, (unsigned)n) < 0 || fclose(f) != 0) {
		fprintf(stderr, "%s: writing %s failed (disk full?)\n", who, out);
		goto out_runs;
	}
	fprintf(msg, "report of %d %s written to %s\n", n, n == 1 ? "run" : "runs", out);
	ret = SM_EXIT_OK;
out_runs:
	for (i = 0; i < MAX_RUNS; i++)
		sm_result_fini(&runs[i]);
	sm_free(runs);
	return ret;
}

int
sm_cmd_report(int argc, char **argv)
{
	const char *out = NULL, *title = NULL, *revision = NULL;
	char **files;
	int i, nf = 0, ret = SM_EXIT_FAIL;

	files = sm_calloc((size_t)argc + 1, sizeof(char *));
	if (files == NULL) {
		fprintf(stderr, "shardmark report: out of memory\n");
		goto out_free;
	}
	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			ret = SM_EXIT_OK;
			goto out_free;
		}
		if ((strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) &&
		    i + 1 < argc)
			out = argv[++i];
		else if (strcmp(argv[i], "--title") == 0 && i + 1 < argc)
			title = argv[++i];
		else if (strcmp(argv[i], "--revision") == 0 && i + 1 < argc)
			revision = argv[++i];
		else if (argv[i][0] == '-' && argv[i][1] != 0) {
			fprintf(stderr,
				"shardmark report: unknown option or missing value '%s' (see "
				"shardmark report --help)\n",
				argv[i]);
			ret = SM_EXIT_USAGE;
			goto out_free;
		} else
			files[nf++] = argv[i];
	}
	if (out == NULL || nf == 0) {
		fprintf(stderr, "shardmark report: %s (see shardmark report --help)\n",
			out == NULL ? "no output file: give -o FILE.html"
				    : "no result files given");
		ret = SM_EXIT_USAGE;
		goto out_free;
	}
	ret = sm_app_report(out, title, revision, files, nf, "shardmark report", stdout);
	goto out_free;
out_free:
	sm_free(files);
	return ret;
}
