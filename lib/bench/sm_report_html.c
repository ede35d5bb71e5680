/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The HTML report, its charts written by us as inline SVG.
 *
 * Why not Debian's libjs-chart.js (3.9.1, /usr/share/javascript/chartjs/
 * chart.min.js, about 200 KB): inlining it makes every report carry 200 KB
 * of script, ties the binary to a file of another package at run time (or
 * the build to it), and draws nothing until the script has run, so a page
 * saved, mailed or opened with scripts off shows empty boxes. Our charts
 * are lines, bars and one log-scaled axis: SVG written here renders
 * without script, the file stays small and text-diffable, and the output
 * is the same on every machine.
 */

#include <errno.h>
#include <math.h>
#include <string.h>

#include "sm_mem.h"
#include "sm_report_html.h"

#define W 900
#define H 300
#define ML 70  /* left margin: the y labels */
#define MR 170 /* right margin: the legend, outside the plot area */
#define MT 30
#define MB 40
#define MAX_LINES 16
#define NINES_MAX 5.0 /* 99.999% */
#define NINES_STEPS 200
#define MAX_TICKS 40

static const char *const run_colours[] = { "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
					   "#9467bd", "#8c564b", "#e377c2", "#17becf" };
static const char *const pct_colours[] = { "#1f77b4", "#ff7f0e", "#d62728", "#555555" };

const char *
sm_report_run_colour(unsigned i)
{
	return run_colours[i % SM_ARRAY_SIZE(run_colours)];
}

static void
esc(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '&':
			fputs("&amp;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
}

struct line {
	const double *x, *y;
	unsigned n;
	const char *colour, *dash;
	char label[112];
};

struct chart {
	char title[160], xlabel[48], ylabel[48];
	bool nines_x; /* x is -log10(1 - q) with percent ticks */
	bool log_y;   /* latency: p50 and max differ by orders of magnitude */
	struct line l[MAX_LINES];
	unsigned n;
};

static struct line *
chart_add(struct chart *c, const double *x, const double *y, unsigned n, const char *colour,
	  const char *dash, const char *label)
{
	struct line *l;

	if (c->n >= MAX_LINES || n == 0)
		return NULL;
	l = &c->l[c->n++];
	l->x = x;
	l->y = y;
	l->n = n;
	l->colour = colour;
	l->dash = dash;
	snprintf(l->label, sizeof(l->label), "%s", label);
	return l;
}

/* A round step giving about @want ticks over @range: 1, 2 or 5 times a power of ten. */
static double
nice_step(double range, int want)
{
	double raw = range / want, p = pow(10, floor(log10(raw))), m = raw / p;

	return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

static void
fmt_num(char *buf, size_t cap, double v)
{
	double a = fabs(v);

	if (a >= 1e6)
		snprintf(buf, cap, "%.3gM", v / 1e6);
	else if (a >= 1e4)
		snprintf(buf, cap, "%.3gk", v / 1e3);
	else
		snprintf(buf, cap, "%g", v);
}

static void
legend(FILE *f, unsigned i, const char *colour, const char *dash, const char *label, bool box)
{
	double y = MT + 10 + 18 * i;

	if (box)
		fprintf(f, "<rect x=\"%d\" y=\"%.0f\" width=\"18\" height=\"10\" fill=\"%s\"/>",
			W - MR + 12, y - 5, colour);
	else
		fprintf(f,
			"<line x1=\"%d\" y1=\"%.0f\" x2=\"%d\" y2=\"%.0f\" stroke=\"%s\" "
			"stroke-width=\"3\"%s%s%s/>",
			W - MR + 12, y, W - MR + 30, y, colour, dash ? " stroke-dasharray=\"" : "",
			dash ? dash : "", dash ? "\"" : "");
	fprintf(f, "<text x=\"%d\" y=\"%.0f\" class=\"lg\">", W - MR + 36, y + 4);
	esc(f, label);
	fputs("</text>", f);
}

static void
frame_begin(FILE *f, const char *title)
{
	fputs("<figure><svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"900\" "
	      "height=\"300\" viewBox=\"0 0 900 300\">",
	      f);
	fprintf(f, "<text x=\"%d\" y=\"18\" class=\"tt\">", ML);
	esc(f, title);
	fputs("</text>", f);
	fprintf(f,
		"<rect class=\"plot\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>",
		ML, MT, W - ML - MR, H - MT - MB, SM_REPORT_PLOT_BG);
}

/* A y tick: its grid line across the plot and its label at the left. */
static void
y_tick(FILE *f, double py, const char *label)
{
	fprintf(f,
		"<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" class=\"grid\"/>"
		"<text x=\"%d\" y=\"%.1f\" class=\"yl\">%s</text>",
		ML, py, W - MR, py, ML - 6, py + 4, label);
}

static void
y_label(FILE *f, const char *ylabel, const char *suffix)
{
	fprintf(f, "<text transform=\"translate(14 %d) rotate(-90)\" class=\"al\">%s%s</text>",
		(MT + H - MB) / 2, ylabel, suffix);
}

static void
y_axis(FILE *f, double y1, const char *ylabel)
{
	double step = nice_step(y1, 5), v;
	unsigned t;
	char buf[32];

	/* ticks counted, not stepped to the end: a step lost in v's rounding never ends */
	for (t = 0, v = 0; t < MAX_TICKS && v <= y1 * 1.0001; t++, v = t * step) {
		double py = H - MB - v / y1 * (H - MT - MB);

		fmt_num(buf, sizeof(buf), v);
		y_tick(f, py, buf);
	}
	y_label(f, ylabel, "");
}

/* Decade ticks of a log axis from @lo to @hi (powers of ten). */
static void
y_axis_log(FILE *f, double lo, double hi, const char *ylabel)
{
	double v, ph = H - MT - MB, span = log10(hi) - log10(lo);
	unsigned t;
	char buf[32];

	for (t = 0, v = lo; t < MAX_TICKS && v <= hi * 1.0001; t++, v *= 10) {
		double py = H - MB - (log10(v) - log10(lo)) / span * ph;

		snprintf(buf, sizeof(buf), "%g", v);
		y_tick(f, py, buf);
	}
	y_label(f, ylabel, " (log)");
}

static void
chart_write(FILE *f, const struct chart *c)
{
	double x0 = INFINITY, x1 = -INFINITY, y1 = 0, ymin = INFINITY, v, lo = 0, span = 1;
	unsigned i, k, t;
	char buf[32];
	const double pw = W - ML - MR, ph = H - MT - MB;

	for (i = 0; i < c->n; i++)
		for (k = 0; k < c->l[i].n; k++) {
			if (!isfinite(c->l[i].x[k]) || !isfinite(c->l[i].y[k]))
				continue; /* a point no axis can place: left out */
			x0 = fmin(x0, c->l[i].x[k]);
			x1 = fmax(x1, c->l[i].x[k]);
			y1 = fmax(y1, c->l[i].y[k]);
			if (c->l[i].y[k] > 0)
				ymin = fmin(ymin, c->l[i].y[k]);
		}
	if (c->n == 0 || !isfinite(x0))
		return;
	if (c->nines_x)
		x0 = 0, x1 = NINES_MAX;
	if (!(x1 > x0))
		x1 = x0 + fmax(1, fabs(x0) * 1e-9);
	if (y1 <= 0)
		y1 = 1;
	frame_begin(f, c->title);
	if (c->log_y) {
		/* 1 ns is the floor of any latency we record, in ms */
		lo = pow(10, floor(log10(isfinite(ymin) ? fmax(ymin, 1e-6) : 1)));
		y1 = pow(10, ceil(log10(y1)));
		if (y1 <= lo)
			y1 = lo * 10;
		span = log10(y1) - log10(lo);
		y_axis_log(f, lo, y1, c->ylabel);
	} else {
		y1 = ceil(y1 / nice_step(y1, 5)) * nice_step(y1, 5);
		y_axis(f, y1, c->ylabel);
	}
	if (c->nines_x) {
		static const char *const lab[] = {
			"0%", "90%", "99%", "99.9%", "99.99%", "99.999%"
		};

		for (k = 0; k <= (unsigned)NINES_MAX; k++) {
			double px = ML + k / NINES_MAX * pw;

			fprintf(f,
				"<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" class=\"grid\"/>"
				"<text x=\"%.1f\" y=\"%d\" class=\"xl\">%s</text>",
				px, MT, px, H - MB, px, H - MB + 16, lab[k]);
		}
	} else {
		double step = nice_step(x1 - x0, 8);

		double first = ceil(x0 / step) * step;

		for (t = 0, v = first; t < MAX_TICKS && v <= x1 * 1.0001;
		     t++, v = first + t * step) {
			double px = ML + (v - x0) / (x1 - x0) * pw;

			fmt_num(buf, sizeof(buf), v);
			fprintf(f, "<text x=\"%.1f\" y=\"%d\" class=\"xl\">%s</text>", px,
				H - MB + 16, buf);
		}
	}
	fprintf(f, "<text x=\"%.0f\" y=\"%d\" class=\"al\">%s</text>", ML + pw / 2, H - 4,
		c->xlabel);
	for (i = 0; i < c->n; i++) {
		const struct line *l = &c->l[i];

		fprintf(f,
			"<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s%s%s points=\"",
			l->colour, l->dash ? " stroke-dasharray=\"" : "", l->dash ? l->dash : "",
			l->dash ? "\"" : "");
		for (k = 0; k < l->n; k++) {
			double y = fmax(fmin(l->y[k], y1), 0), fy;

			if (!isfinite(l->x[k]) || !isfinite(l->y[k]))
				continue;
			fy = c->log_y ? (log10(fmax(y, lo)) - log10(lo)) / span : y / y1;
			fprintf(f, "%s%.1f,%.1f", k ? " " : "",
				ML + (l->x[k] - x0) / (x1 - x0) * pw, H - MB - fy * ph);
		}
		fputs("\"/>", f);
		legend(f, i, l->colour, l->dash, l->label, false);
	}
	fputs("</svg></figure>\n", f);
}

/* Grouped bars: one group per shard, one bar per run. */
static void
bars_write(FILE *f, const char *name, const struct sm_result *const *runs, unsigned n)
{
	const struct sm_result_bars *b[8] = { 0 };
	unsigned i, k, shards = 0, nb = 0;
	double y1 = 0, pw = W - ML - MR, ph = H - MT - MB, gw, bw;
	char buf[32];

	for (i = 0; i < n && i < SM_ARRAY_SIZE(b); i++)
		for (k = 0; k < runs[i]->nbars; k++)
			if (strcmp(runs[i]->bars[k].name, name) == 0) {
				b[i] = &runs[i]->bars[k];
				shards = SM_MAX(shards, b[i]->n);
				nb++;
			}
	if (shards == 0)
		return;
	for (i = 0; i < n && i < SM_ARRAY_SIZE(b); i++)
		for (k = 0; b[i] && k < b[i]->n; k++)
			y1 = fmax(y1, b[i]->v[k]);
	if (y1 <= 0)
		y1 = 1;
	y1 = ceil(y1 / nice_step(y1, 5)) * nice_step(y1, 5);
	frame_begin(f, name);
	y_axis(f, y1, "");
	gw = pw / shards;
	bw = gw * 0.8 / (n < SM_ARRAY_SIZE(b) ? n : SM_ARRAY_SIZE(b));
	for (k = 0; k < shards; k++) {
		if (shards <= 32 || k % (shards / 16) == 0) {
			snprintf(buf, sizeof(buf), "%u", k);
			fprintf(f, "<text x=\"%.1f\" y=\"%d\" class=\"xl\">%s</text>",
				ML + gw * (k + 0.5), H - MB + 16, buf);
		}
		for (i = 0; i < n && i < SM_ARRAY_SIZE(b); i++) {
			double v = b[i] && k < b[i]->n ? b[i]->v[k] : 0, hgt = v / y1 * ph;

			fprintf(f,
				"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
				"fill=\"%s\"><title>shard %u: %g</title></rect>",
				ML + gw * k + gw * 0.1 + bw * i, H - MB - hgt, bw, hgt,
				sm_report_run_colour(i), k, v);
		}
	}
	fprintf(f, "<text x=\"%.0f\" y=\"%d\" class=\"al\">shard</text>", ML + pw / 2, H - 4);
	for (i = 0; i < n && i < SM_ARRAY_SIZE(b); i++)
		legend(f, i, sm_report_run_colour(i), NULL, runs[i]->label, true);
	fputs("</svg></figure>\n", f);
	(void)nb;
}

static const struct sm_result_series *
find_series(const struct sm_result *r, const char *name, bool rt)
{
	unsigned i;

	for (i = 0; i < r->nseries; i++)
		if (strcmp(r->series[i].name, name) == 0 && r->series[i].response_time == rt)
			return &r->series[i];
	return NULL;
}

/* The nines curve of @s into @x, @y (NINES_STEPS + 1 points). */
static void
nines_curve(const struct sm_result_series *s, double *x, double *y)
{
	unsigned k;

	for (k = 0; k <= NINES_STEPS; k++) {
		double nines = NINES_MAX * k / NINES_STEPS, q = 100 * (1 - pow(10, -nines));

		x[k] = nines;
		y[k] = (double)sm_hdr_value_at_percentile(&s->total, q) / 1e6;
	}
}

static int
op_section(FILE *f, const char *op, bool rt, const struct sm_result *const *runs, unsigned n)
{
	struct chart c;
	double *buf;
	unsigned i, j;
	const char *kind = rt ? " (response time)" : "";

	buf = sm_malloc(2 * (NINES_STEPS + 1) * SM_MIN(n, (unsigned)MAX_LINES) * sizeof(double));
	if (buf == NULL)
		return -ENOMEM;
	fprintf(f, "<h2>");
	esc(f, op);
	fprintf(f, "%s</h2>\n", kind);

	memset(&c, 0, sizeof(c));
	snprintf(c.title, sizeof(c.title), "%s%s: throughput over time", op, kind);
	snprintf(c.xlabel, sizeof(c.xlabel), "seconds");
	snprintf(c.ylabel, sizeof(c.ylabel), "op/s");
	for (i = 0; i < n; i++) {
		const struct sm_result_series *s = find_series(runs[i], op, rt);

		if (s != NULL)
			chart_add(&c, s->t, s->ops_s, s->n, sm_report_run_colour(i), NULL,
				  runs[i]->label);
	}
	chart_write(f, &c);

	for (i = 0; i < n; i++) {
		const struct sm_result_series *s = find_series(runs[i], op, rt);
		char lab[112];

		if (s == NULL)
			continue;
		memset(&c, 0, sizeof(c));
		snprintf(c.title, sizeof(c.title), "%s%s: latency over time, %s", op, kind,
			 runs[i]->label);
		snprintf(c.xlabel, sizeof(c.xlabel), "seconds");
		snprintf(c.ylabel, sizeof(c.ylabel), "ms");
		c.log_y = true;
		snprintf(lab, sizeof(lab), "p50");
		chart_add(&c, s->t, s->p50_ms, s->n, pct_colours[0], NULL, lab);
		chart_add(&c, s->t, s->p99_ms, s->n, pct_colours[1], NULL, "p99");
		chart_add(&c, s->t, s->p999_ms, s->n, pct_colours[2], NULL, "p99.9");
		chart_add(&c, s->t, s->max_ms, s->n, pct_colours[3], "4 3", "max");
		chart_write(f, &c);
	}

	memset(&c, 0, sizeof(c));
	snprintf(c.title, sizeof(c.title), "%s%s: latency by percentile", op, kind);
	snprintf(c.xlabel, sizeof(c.xlabel), "percentile");
	snprintf(c.ylabel, sizeof(c.ylabel), "ms");
	c.nines_x = true;
	c.log_y = true;
	for (i = 0, j = 0; i < n && j < MAX_LINES; i++) {
		const struct sm_result_series *s = find_series(runs[i], op, rt);
		double *x = buf + 2 * (NINES_STEPS + 1) * j, *y = x + NINES_STEPS + 1;

		if (s == NULL || s->total.total_count == 0)
			continue;
		nines_curve(s, x, y);
		chart_add(&c, x, y, NINES_STEPS + 1, sm_report_run_colour(i), NULL, runs[i]->label);
		j++;
	}
	chart_write(f, &c);
	sm_free(buf);
	return 0;
}

static void
kv_table(FILE *f, const char *what, const struct sm_result *const *runs, unsigned n, bool machine)
{
	unsigned i, k;

	fprintf(f, "<h2>%s</h2>\n", what);
	for (i = 0; i < n; i++) {
		const struct sm_result_kv *kv = machine ? runs[i]->machine : runs[i]->settings;
		unsigned nkv = machine ? runs[i]->nmachine : runs[i]->nsettings;

		if (nkv == 0 && !machine)
			continue;
		fprintf(f, "<table class=\"kv\"><caption style=\"color:%s\">",
			sm_report_run_colour(i));
		esc(f, runs[i]->label);
		if (!machine) {
			fputs(" (shardmark ", f);
			esc(f, runs[i]->version[0] ? runs[i]->version : "version not recorded");
			fputs(")", f);
		}
		fputs("</caption>\n", f);
		if (nkv == 0)
			fputs("<tr><td>not recorded in this result</td></tr>\n", f);
		for (k = 0; k < nkv; k++) {
			fputs("<tr><th>", f);
			esc(f, kv[k].key);
			fputs("</th><td>", f);
			esc(f, kv[k].val);
			fputs("</td></tr>\n", f);
		}
		fputs("</table>\n", f);
	}
}

static void
figures_table(FILE *f, const struct sm_result *const *runs, unsigned n)
{
	unsigned i, k, j;

	fputs("<h2>Figures</h2>\n<table class=\"fig\"><tr><th>figure</th>", f);
	for (i = 0; i < n; i++) {
		fprintf(f, "<th style=\"color:%s\">", sm_report_run_colour(i));
		esc(f, runs[i]->label);
		fputs("</th>", f);
	}
	fputs("</tr>\n", f);
	/* every figure of every run, in the first run's order, then what others add */
	for (i = 0; i < n; i++)
		for (k = 0; k < runs[i]->nmetric; k++) {
			const struct sm_result_metric *m = &runs[i]->metric[k];
			bool seen = false;

			for (j = 0; j < i && !seen; j++)
				seen = sm_result_metric_find(runs[j], m->name) != NULL;
			if (seen)
				continue;
			fputs("<tr><th>", f);
			esc(f, m->name);
			if (m->unit[0] && strstr(m->name, m->unit) == NULL)
				fprintf(f, " (%s)", m->unit);
			fputs("</th>", f);
			for (j = 0; j < n; j++) {
				const struct sm_result_metric *o =
					sm_result_metric_find(runs[j], m->name);

				if (o != NULL)
					fprintf(f, "<td>%.6g</td>", o->value);
				else
					fputs("<td>-</td>", f);
			}
			fputs("</tr>\n", f);
		}
	fputs("</table>\n", f);
}

/*
 * Whether a run with op @name's response-time series ran at a rate: only
 * then does it differ from service time and get a section of its own.
 */
static bool
any_rated(const struct sm_result *const *runs, unsigned n, const char *name)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (find_series(runs[i], name, true) != NULL && sm_result_rated(runs[i]))
			return true;
	return false;
}

int
sm_report_html_write(FILE *f, const char *title, const struct sm_result *const *runs, unsigned n)
{
	unsigned i, k, j;
	int ret = 0;

	if (title == NULL)
		title = "shardmark report";
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>", f);
	esc(f, title);
	fputs("</title>\n<style>\n"
	      "body{font-family:sans-serif;margin:20px;background:#fff;color:#222}\n"
	      "figure{display:block;margin:10px 0}\n"
	      "svg.chart{display:block;background:#fff}\n"
	      ".tt{font-size:14px;font-weight:bold}.lg{font-size:12px}\n"
	      ".yl{font-size:11px;text-anchor:end}.xl{font-size:11px;text-anchor:middle}\n"
	      ".al{font-size:12px;text-anchor:middle}\n"
	      ".grid{stroke:#d8d8d8;stroke-width:1}\n"
	      "table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;"
	      "padding:2px 8px;text-align:left;font-size:13px}\n"
	      "caption{text-align:left;font-weight:bold}\n"
	      "</style></head><body>\n<h1>",
	      f);
	esc(f, title);
	fputs("</h1>\n<p>Runs:", f);
	for (i = 0; i < n; i++) {
		fprintf(f, " <b style=\"color:%s\">", sm_report_run_colour(i));
		esc(f, runs[i]->label);
		fputs("</b>", f);
	}
	fputs("</p>\n", f);
	/* op types in first-seen order over all runs */
	for (i = 0; i < n && ret == 0; i++)
		for (k = 0; k < runs[i]->nseries && ret == 0; k++) {
			const struct sm_result_series *s = &runs[i]->series[k];
			bool seen = false;

			for (j = 0; j < i && !seen; j++)
				seen = find_series(runs[j], s->name, s->response_time) != NULL;
			if (!seen && (!s->response_time || any_rated(runs, n, s->name)))
				ret = op_section(f, s->name, s->response_time, runs, n);
		}
	if (ret < 0)
		return ret;
	for (i = 0; i < n; i++)
		for (k = 0; k < runs[i]->nbars; k++) {
			bool seen = false;

			for (j = 0; j < i && !seen; j++) {
				unsigned b;

				for (b = 0; b < runs[j]->nbars && !seen; b++)
					seen = strcmp(runs[j]->bars[b].name,
						      runs[i]->bars[k].name) == 0;
			}
			if (!seen) {
				if (i == 0 && k == 0)
					fputs("<h2>Per shard</h2>\n", f);
				bars_write(f, runs[i]->bars[k].name, runs, n);
			}
		}
	figures_table(f, runs, n);
	kv_table(f, "Settings", runs, n, false);
	kv_table(f, "Machine", runs, n, true);
	fprintf(f, "<p>Written by shardmark %s.</p>\n", SM_VERSION);
	/* the runs' files, whole and hidden: what sm_report_html_read() reads back */
	for (i = 0; i < n; i++)
		for (k = 0; k < runs[i]->nsrc; k++) {
			fputs("<textarea hidden class=\"sm-src\" data-run=\"", f);
			esc(f, runs[i]->label);
			fputs("\" data-file=\"", f);
			esc(f, runs[i]->src[k].name);
			fputs("\">", f);
			esc(f, runs[i]->src[k].text);
			fputs("</textarea>\n", f);
		}
	fputs("</body></html>\n", f);
	return ferror(f) ? -EIO : 0;
}

#define SRC_TAG "<textarea hidden class=\"sm-src\" data-run=\""

/* Undo esc() on @in[0..@len) into @out (at least @len + 1 bytes); returns the length. */
static size_t
unesc(const char *in, size_t len, char *out)
{
	static const struct {
		const char *e;
		char c;
	} ents[] = { { "&lt;", '<' }, { "&gt;", '>' }, { "&amp;", '&' }, { "&quot;", '"' } };
	size_t i = 0, o = 0, k;

	while (i < len) {
		if (in[i] == '&')
			for (k = 0; k < SM_ARRAY_SIZE(ents); k++) {
				size_t l = strlen(ents[k].e);

				if (i + l <= len && memcmp(in + i, ents[k].e, l) == 0) {
					out[o++] = ents[k].c;
					i += l;
					goto next;
				}
			}
		out[o++] = in[i++];
next:;
	}
	out[o] = 0;
	return o;
}

int
sm_report_html_read(const char *path, struct sm_result *runs, unsigned max, char *title,
		    size_t tcap, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *html = NULL, *p, *buf = NULL, label[96], name[96];
	long size;
	unsigned n = 0, i;
	int ret = -EINVAL;

	if (f == NULL) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		snprintf(err, errlen, "%s: cannot read it", path);
		fclose(f);
		return -EIO;
	}
	html = sm_malloc((size_t)size + 1);
	buf = sm_malloc((size_t)size + 1);
	if (html == NULL || buf == NULL) {
		ret = -ENOMEM;
		goto out;
	}
	if (fread(html, 1, (size_t)size, f) != (size_t)size) {
		snprintf(err, errlen, "%s: read error", path);
		ret = -EIO;
		goto out;
	}
	html[size] = 0;
	if (strstr(html, "Written by shardmark") == NULL) {
		snprintf(err, errlen, "%s exists and is not a shardmark report: not adding to it",
			 path);
		goto out;
	}
	if (tcap > 0 && (p = strstr(html, "<h1>")) != NULL) {
		char *e = strstr(p, "</h1>");
		size_t l = e ? unesc(p + 4, (size_t)(e - p - 4), buf) : 0;

		snprintf(title, tcap, "%.*s", (int)l, buf);
	}
	for (p = strstr(html, SRC_TAG); p != NULL; p = strstr(p, SRC_TAG)) {
		char *a = p + strlen(SRC_TAG), *q = strchr(a, '"'), *b, *body, *end;
		size_t l;

		if (q == NULL || strncmp(q, "\" data-file=\"", 13) != 0)
			break;
		b = q + 13;
		body = strstr(b, "\">");
		end = body ? strstr(body, "</textarea>") : NULL;
		if (end == NULL)
			break;
		l = unesc(a, (size_t)(q - a), buf);
		snprintf(label, sizeof(label), "%.*s", (int)l, buf);
		l = unesc(b, (size_t)(body - b), buf);
		snprintf(name, sizeof(name), "%.*s", (int)l, buf);
		for (i = 0; i < n && strcmp(runs[i].label, label) != 0; i++)
			;
		if (i == n) {
			if (n == max) {
				snprintf(err, errlen, "%s: more than %u runs", path, max);
				ret = -E2BIG;
				goto out;
			}
			sm_result_init(&runs[n]);
			snprintf(runs[n].label, sizeof(runs[n].label), "%s", label);
			n++;
		}
		l = unesc(body + 2, (size_t)(end - body - 2), buf);
		ret = sm_result_read_text(&runs[i], name, buf, l, err, errlen);
		if (ret < 0)
			goto out;
		p = end;
	}
	ret = (int)n;
out:
	if (ret < 0)
		for (i = 0; i < n; i++)
			sm_result_fini(&runs[i]);
	sm_free(buf);
	sm_free(html);
	fclose(f);
	return ret;
}
