/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_REPORT_HTML_H
#define SM_REPORT_HTML_H

/*
 * The HTML report of one or more runs: one self-contained file (inline
 * CSS and SVG, no script, nothing fetched) that opens offline in any
 * browser. Per op type: throughput over time with the runs overlaid,
 * p50/p99/p99.9/max over time per run, the latency distribution on
 * HdrHistogram's "nines" axis with the runs overlaid; per-shard counters
 * as grouped bars; every figure in a table with a column per run; the
 * settings, the machine and the version of each run.
 */

#include <stdio.h>

#include "sm_result.h"

/* Run @i's colour in every chart ("#rrggbb"); the palette repeats after 8. */
const char *
sm_report_run_colour(unsigned i);

/* The plot areas' fill, which a test looks for to find the charts in a screenshot. */
#define SM_REPORT_PLOT_BG "#f4f6fb"

/*
 * Write the report of @runs[0..@n) to @f with @title (NULL: "shardmark
 * report"); each run is named by its label. Returns 0 or -EIO.
 */
int
sm_report_html_write(FILE *f, const char *title, const struct sm_result *const *runs, unsigned n);

/*
 * Read back the runs of a report written by sm_report_html_write() from
 * the files it carries (hidden, whole) into @runs[0..@max), named as in
 * the report, and its title into @title (@tcap bytes): cassandra-stress's
 * -graph adds a revision to an existing file this way. Returns the number of runs (sm_result_fini() each), or
 * -errno with the reason in @err (a file that is no report of ours is
 * -EINVAL: never overwritten by accident).
 */
int
sm_report_html_read(const char *path, struct sm_result *runs, unsigned max, char *title,
		    size_t tcap, char *err, size_t errlen);

#endif /* SM_REPORT_HTML_H */
