/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What `shardmark stress` prints and writes: each interval's row (the
 * shards' interval histograms merged on shard 0, never averaged) to
 * stdout, -log file=, -log csv= and -log hdrfile=; the final report (the
 * loader's own cost, routing, errors by code, then cassandra-stress's
 * results block) and -log json=; and `shardmark stress merge`, several
 * loaders' HDR logs summed tag by tag.
 */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sm_bench_cs.h"
#include "sm_stress_run.h"
#include "sm_stress_run_priv.h"

void
sm_stress_out(const char *fmt, ...)
{
	va_list ap;

	sm_stress_progress_clear();
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	if (sx != NULL && sx->text_log != NULL) {
		va_start(ap, fmt);
		vfprintf(sx->text_log, fmt, ap);
		va_end(ap);
	}
}

void
sm_stress_progress_clear(void)
{
	if (sx == NULL || !sx->progress_shown)
		return;
	fputs("\r\033[K", stdout);
	fflush(stdout);
	sx->progress_shown = false;
}

const char *
sm_stress_error_name(int32_t code, char *buf, size_t len)
{
	if (code < 0)
		snprintf(buf, len, "client: %s", strerror(-code));
	else if (code >= 100 && code < 600)
		snprintf(buf, len, "HTTP %d", code);
	else if (code == 0x7fffffff)
		snprintf(buf, len, "read validation failed");
	else if (code == 0x7ffffffe)
		snprintf(buf, len, "read validation failed: no such row");
	else
		snprintf(buf, len, "CQL error 0x%04x%s", (unsigned)code,
			 code == 0x1000	  ? " (Unavailable)"
			 : code == 0x1001 ? " (Overloaded)"
			 : code == 0x1100 ? " (Write_timeout)"
			 : code == 0x1200 ? " (Read_timeout)"
			 : code == 0x2200 ? " (Invalid)"
			 : code == 0x2500 ? " (Unprepared)"
					  : "");
	return buf;
}

/* ---- reporting (shard 0) ---- */

static void
merge_interval(void)
{
	unsigned i, k;

	for (k = 0; k < SM_STRESS_NR_OPS; k++) {
		struct sm_stress_op_stats *m = &sx->merged[k];

		m->ops = m->partitions = m->rows = m->errors = 0;
		sm_hdr_reset(&m->rt[0]);
		sm_hdr_reset(&m->st[0]);
		for (i = 0; i < sx->nshards; i++) {
			const struct sm_stress_op_stats *o = &sx->sh[i].st[k];
			unsigned prev = sx->sh[i].active ^ 1;

			m->ops += o->ops;
			m->partitions += o->partitions;
			m->rows += o->rows;
			m->errors += o->errors;
			sm_hdr_add(&m->rt[0], &o->rt[prev]);
			sm_hdr_add(&m->st[0], &o->st[prev]);
		}
	}
}

static double
ms(int64_t ns)
{
	return (double)ns / 1e6;
}

/* The histogram cassandra-stress prints: response time for fixed=, else service time. */
static const struct sm_hdr *
shown(const struct sm_stress_op_stats *o, bool total)
{
	if (sx->s.rate.kind == SM_STRESS_RATE_FIXED)
		return total ? &o->rt_total : &o->rt[0];
	return total ? &o->st_total : &o->st[0];
}

static void
interval_row(const char *type, const struct sm_hdr *h, uint64_t total_ops, uint64_t d_ops,
	     uint64_t d_rows, uint64_t d_err, double dt, double elapsed, double stderr_)
{
	struct sm_cs_interval iv = {
		.type = type,
		.total_ops = total_ops,
		.op_s = dt > 0 ? (double)d_ops / dt : 0,
		.pk_s = dt > 0 ? (double)d_ops / dt : 0,
		.row_s = dt > 0 ? (double)d_rows / dt : 0,
		.mean_ms = h->total_count ? sm_hdr_mean(h) / 1e6 : 0,
		.med_ms = ms(sm_hdr_value_at_percentile(h, 50)),
		.p95_ms = ms(sm_hdr_value_at_percentile(h, 95)),
		.p99_ms = ms(sm_hdr_value_at_percentile(h, 99)),
		.p999_ms = ms(sm_hdr_value_at_percentile(h, 99.9)),
		.max_ms = ms(sm_hdr_max(h)),
		.time_s = elapsed,
		.stderr_ = stderr_,
		.errors = d_err,
	};

	sm_cs_print_interval(stdout, &iv);
	if (sx->text_log != NULL)
		sm_cs_print_interval(sx->text_log, &iv);
	if (sx->csv_log != NULL)
		fprintf(sx->csv_log,
			"%u,%.3f,%s,%" PRIu64
			",%.3f,%.3f,%.3f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%" PRIu64 "\n",
			sx->csv_interval, iv.time_s, iv.type, iv.total_ops, iv.op_s, iv.pk_s,
			iv.row_s, iv.mean_ms, iv.med_ms, iv.p95_ms, iv.p99_ms, iv.p999_ms,
			iv.max_ms, iv.errors);
}

/* The columns of -log csv=: one row per interval and op type ("total" too). */
void
sm_stress_csv_header(FILE *f)
{
	fputs("interval,seconds,type,total_ops,ops_per_s,partitions_per_s,rows_per_s,mean_ms,p50_"
	      "ms,"
	      "p95_ms,p99_ms,p999_ms,max_ms,errors\n",
	      f);
}

/*
 * The terminal's one-line view of a measured run, redrawn each interval
 * below the rows: operations done, the last interval's rate and p99, and
 * how long is left (from n= or duration=; a search's steps have no end
 * known ahead). Only on a terminal: a pipe or a file gets the rows alone.
 */
static void
progress_draw(uint64_t ops, double rate, double elapsed, const struct sm_hdr *h)
{
	double total_s = 0, left_s = -1, pct = -1;
	char eta[32] = "";

	if (sx->search == NULL && sx->s.n_ops > 0) {
		pct = 100.0 * (double)ops / (double)sx->s.n_ops;
		if (rate > 0)
			left_s = (double)(sx->s.n_ops > ops ? sx->s.n_ops - ops : 0) / rate;
	} else if (sx->search == NULL && sx->s.duration_ns > 0) {
		total_s = (double)sx->s.duration_ns / 1e9;
		pct = 100.0 * elapsed / total_s;
		left_s = total_s > elapsed ? total_s - elapsed : 0;
	}
	if (left_s >= 0)
		snprintf(eta, sizeof(eta), ", ETA %um%02us", (unsigned)(left_s / 60),
			 (unsigned)left_s % 60);
	fputs("\r\033[K", stdout);
	if (pct >= 0)
		printf("[%3.0f%%] ", pct > 100 ? 100 : pct);
	printf("%" PRIu64 " ops, %.0f op/s, p99 %.3f ms%s", ops, rate,
	       ms(sm_hdr_value_at_percentile(h, 99)), eta);
	fflush(stdout);
	sx->progress_shown = true;
}

void
sm_stress_report_interval(void)
{
	uint64_t now = sm_now_ns(), ops = 0, errs = 0, d_ops;
	double dt = (double)(now - sx->last_tick_ns) / 1e9;
	double elapsed = (double)(now - sx->measure_start_ns) / 1e9, mean, stderr_ = 0;
	unsigned k;

	merge_interval();
	sx->csv_interval++;
	sm_hdr_reset(&sx->tmp_rt);
	sm_hdr_reset(&sx->tmp_st);
	for (k = 0; k < SM_STRESS_NR_OPS; k++) {
		struct sm_stress_op_stats *m = &sx->merged[k];

		ops += m->ops;
		errs += m->errors;
		sm_hdr_add(&sx->tmp_rt, &m->rt[0]);
		sm_hdr_add(&sx->tmp_st, &m->st[0]);
	}
	d_ops = ops - sx->last_ops[SM_STRESS_NR_OPS];
	if (dt > 0) {
		double r = (double)d_ops / dt;

		sx->rate_sum += r;
		sx->rate_sq += r * r;
		sx->rate_n++;
		mean = sx->rate_sum / sx->rate_n;
		if (sx->rate_n > 1)
			stderr_ = sqrt(fmax(0, sx->rate_sq / sx->rate_n - mean * mean)) /
				  sqrt((double)sx->rate_n) / (mean > 0 ? mean : 1);
	}
	if (sx->s.wl != NULL) {
		/* the workload's own interval line instead of cassandra-stress's rows */
		sx->s.wl->status(elapsed, ops, d_ops, dt);
		for (k = 0; k < SM_STRESS_NR_OPS; k++)
			sx->last_ops[k] = sx->merged[k].ops;
		goto logs;
	}
	if (sx->nops > 1) {
		for (k = 0; k < sx->nops; k++) {
			enum sm_stress_op op = sx->ops_by_name[k];
			struct sm_stress_op_stats *m = &sx->merged[op];

			interval_row(sm_stress_op_name(op),
				     sx->s.rate.kind == SM_STRESS_RATE_FIXED ? &m->rt[0]
									     : &m->st[0],
				     m->ops, m->ops - sx->last_ops[op], m->ops - sx->last_ops[op],
				     m->errors, dt, elapsed, stderr_);
			sx->last_ops[op] = m->ops;
		}
	}
	interval_row("total", sx->s.rate.kind == SM_STRESS_RATE_FIXED ? &sx->tmp_rt : &sx->tmp_st,
		     ops, d_ops, d_ops, errs - sx->last_errors, dt, elapsed, stderr_);
logs:
	fflush(stdout);
	/* YCSB's and scylla-bench's own status lines are theirs alone */
	if (sx->progress_tty && sx->phase == SM_STRESS_PH_MEASURE && sx->s.wl == NULL)
		progress_draw(ops, dt > 0 ? (double)d_ops / dt : 0, elapsed,
			      sx->s.rate.kind == SM_STRESS_RATE_FIXED ? &sx->tmp_rt : &sx->tmp_st);
	if (sx->csv_log != NULL)
		fflush(sx->csv_log);
	if (sx->hdr_log != NULL) {
		double start = (double)(sx->last_tick_ns - sx->hdr_base_ns) / 1e9;

		for (k = 0; k < sx->nops; k++) {
			char tag[64];
			struct sm_stress_op_stats *m = &sx->merged[sx->ops[k]];

			snprintf(tag, sizeof(tag), "%s-st", sm_stress_op_name(sx->ops[k]));
			sm_hdr_log_write(sx->hdr_log, tag, start, dt, &m->st[0]);
			snprintf(tag, sizeof(tag), "%s-rt", sm_stress_op_name(sx->ops[k]));
			sm_hdr_log_write(sx->hdr_log, tag, start, dt, &m->rt[0]);
		}
	}
	sx->last_ops[SM_STRESS_NR_OPS] = ops;
	sx->last_errors = errs;
	sx->last_tick_ns = now;
}

/* ---- final report ---- */

static void
op_summary(struct sm_cs_op_summary *o, const char *name, const struct sm_hdr *h, uint64_t ops,
	   uint64_t rows, uint64_t errors, double secs)
{
	o->name = name;
	o->op_s = secs > 0 ? (double)ops / secs : 0;
	o->pk_s = o->op_s;
	o->row_s = secs > 0 ? (double)rows / secs : 0;
	o->mean_ms = h->total_count ? sm_hdr_mean(h) / 1e6 : 0;
	o->med_ms = ms(sm_hdr_value_at_percentile(h, 50));
	o->p95_ms = ms(sm_hdr_value_at_percentile(h, 95));
	o->p99_ms = ms(sm_hdr_value_at_percentile(h, 99));
	o->p999_ms = ms(sm_hdr_value_at_percentile(h, 99.9));
	o->max_ms = ms(sm_hdr_max(h));
	o->partitions = ops;
	o->errors = errors;
}

static void
json_hist(FILE *f, const struct sm_hdr *h)
{
	fprintf(f,
		"{\"count\": %" PRId64 ", \"mean_ms\": %.4f, \"p50_ms\": %.4f, \"p95_ms\": %.4f, "
		"\"p99_ms\": %.4f, \"p999_ms\": %.4f, \"max_ms\": %.4f}",
		h->total_count, h->total_count ? sm_hdr_mean(h) / 1e6 : 0,
		ms(sm_hdr_value_at_percentile(h, 50)), ms(sm_hdr_value_at_percentile(h, 95)),
		ms(sm_hdr_value_at_percentile(h, 99)), ms(sm_hdr_value_at_percentile(h, 99.9)),
		ms(sm_hdr_max(h)));
}

/*
 * The network driver's own counters (DPDK: its TCP stack's and the NIC's),
 * summed over the client shards into a new array (sm_free it); 0 and NULL
 * when the driver keeps none (io_uring: the kernel's TCP is not ours).
 */
static unsigned
net_counters_sum(unsigned nshards, const struct sm_net_counter **desc, uint64_t **sum)
{
	unsigned n = sm_net_counters(desc), i, k;
	uint64_t *tmp;

	*sum = NULL;
	if (n == 0)
		return 0;
	*sum = sm_calloc(2 * (size_t)n, sizeof(uint64_t));
	if (*sum == NULL)
		return 0;
	tmp = *sum + n;
	for (i = 0; i < nshards; i++) {
		sm_net_counters_read(i, tmp);
		for (k = 0; k < n; k++)
			(*sum)[k] += tmp[k];
	}
	return n;
}

/* The summed counter called @name, or -1 when the driver has none by that name. */
static int64_t
net_counter(const struct sm_net_counter *desc, const uint64_t *sum, unsigned n, const char *name)
{
	unsigned k;

	for (k = 0; k < n; k++)
		if (strcmp(desc[k].name, name) == 0)
			return (int64_t)sum[k];
	return -1;
}

/*
 * The loader's reactors over the measurement: stalls summed, and the p99 of
 * the scheduling latency over every shard's histogram merged.
 */
static void
reactor_summary(uint64_t *stalls, uint64_t *p99)
{
	struct sm_sw_stats a, b;
	struct sm_reactor_view v;
	unsigned i, k;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	for (i = 0; i < sx->nshards; i++) {
		const struct sm_stress_shard *sh = &sx->sh[i];

		a.stalls += sh->rx0.stalls;
		b.stalls += sh->rx1.stalls;
		for (k = 0; k < SM_SCHED_LAT_BUCKETS; k++) {
			a.sched_lat[k] += sh->rx0.sched_lat[k];
			b.sched_lat[k] += sh->rx1.sched_lat[k];
		}
	}
	sm_reactor_view(&a, &b, &v);
	*stalls = v.stalls;
	*p99 = v.sched_p99_us;
}

/*
 * Every shard's totals of the measured run: per op type in @tot (its
 * rt_total/st_total set up here: release them with sm_stress_stats_fini),
 * all op types in @all_rt/@all_st (set up by the caller).
 */
static void
run_totals(struct sm_stress_op_stats *tot, struct sm_hdr *all_rt, struct sm_hdr *all_st)
{
	unsigned i, k;

	for (k = 0; k < sx->nops; k++) {
		enum sm_stress_op op = sx->ops[k];

		memset(&tot[k], 0, sizeof(tot[k]));
		sm_hdr_init(&tot[k].rt_total, SM_STRESS_HDR_LOWEST, SM_STRESS_HDR_HIGHEST,
			    SM_STRESS_HDR_SIGFIGS);
		sm_hdr_init(&tot[k].st_total, SM_STRESS_HDR_LOWEST, SM_STRESS_HDR_HIGHEST,
			    SM_STRESS_HDR_SIGFIGS);
		for (i = 0; i < sx->nshards; i++) {
			const struct sm_stress_op_stats *o = &sx->sh[i].st[op];

			tot[k].ops += o->ops;
			tot[k].rows += o->rows;
			tot[k].errors += o->errors;
			sm_hdr_add(&tot[k].rt_total, &o->rt_total);
			sm_hdr_add(&tot[k].st_total, &o->st_total);
		}
		sm_hdr_add(all_rt, &tot[k].rt_total);
		sm_hdr_add(all_st, &tot[k].st_total);
	}
}

static void
run_report(bool final);

/* Write @path with @fn (a search's JSON or CSV); a message when it cannot be. */
static void
write_file(const char *path, void (*fn)(FILE *f))
{
	FILE *f;

	if (path == NULL)
		return;
	f = fopen(path, "w");
	if (f == NULL) {
		fprintf(stderr, "shardmark stress: cannot write %s: %s\n", path, strerror(errno));
		return;
	}
	fn(f);
	if (fclose(f) != 0)
		fprintf(stderr, "shardmark stress: writing %s: %s\n", path, strerror(errno));
}

static void
search_json(FILE *f)
{
	fprintf(f,
		"{\n  \"command\": \"stress %s\",\n  \"version\": \"%s\",\n  \"api\": \"%s\",\n"
		"  \"client_shards\": %u,\n  \"failure\": %s,\n",
		sm_stress_cmd_name(sx->s.cmd), SM_VERSION, sx->proto->name, sx->nshards,
		sx->failure ? "true" : "false");
	sm_stress_search_json(f, sx->search);
	fputs("}\n", f);
}

static void
search_csv(FILE *f)
{
	sm_stress_search_csv(f, sx->search);
}

/* The end of a search: the summary, -log json= and -log steps=. */
static void
search_report(void)
{
	sm_stress_search_print(stdout, sx->search);
	if (sx->text_log != NULL)
		sm_stress_search_print(sx->text_log, sx->search);
	sm_stress_out("\n%s\n", sx->failure ? "FAILURE" : "END");
	write_file(sx->s.log.json, search_json);
	write_file(sx->s.log.steps, search_csv);
}

void
sm_stress_run_report(struct sm_stress_run *r)
{
	(void)r; /* the run in progress, sx */
	if (sx->search != NULL)
		search_report();
	else
		run_report(true);
}

void
sm_stress_report_step(struct sm_stress_step *m)
{
	struct sm_stress_op_stats tot[SM_STRESS_NR_OPS];
	double secs = (double)(sx->last_tick_ns - sx->measure_start_ns) / 1e9;
	struct sm_cs_op_summary o;
	const struct sm_hdr *h;
	unsigned k;

	run_report(false);
	memset(m, 0, sizeof(*m));
	sm_hdr_reset(&sx->tmp_rt);
	sm_hdr_reset(&sx->tmp_st);
	run_totals(tot, &sx->tmp_rt, &sx->tmp_st);
	for (k = 0; k < sx->nops; k++) {
		m->ops += tot[k].ops;
		m->errors += tot[k].errors;
		sm_stress_stats_fini(&tot[k]);
	}
	/* a rate step is judged by response time, as -rate fixed= reports it */
	h = sx->s.rate.kind == SM_STRESS_RATE_FIXED ? &sx->tmp_rt : &sx->tmp_st;
	op_summary(&o, "total", h, m->ops, m->ops, m->errors, secs);
	m->threads = sx->s.rate.threads;
	m->target = sx->s.rate.ops_per_s;
	m->seconds = secs;
	m->achieved = o.op_s;
	m->mean_ms = o.mean_ms;
	m->p50_ms = o.med_ms;
	m->p95_ms = o.p95_ms;
	m->p99_ms = o.p99_ms;
	m->p999_ms = o.p999_ms;
	m->max_ms = o.max_ms;
	/* a thread ramp has no bound: its percentile column is p99 */
	m->pct_ms = ms(sm_hdr_value_at_percentile(
		h, sx->search->o.percentile > 0 ? sx->search->o.percentile : 99));
}

static void
run_report(bool final)
{
	struct sm_cs_op_summary per[SM_STRESS_NR_OPS];
	struct sm_cs_summary sum;
	struct sm_hdr all_rt, all_st;
	struct sm_stress_op_stats tot[SM_STRESS_NR_OPS];
	struct sm_stress_err_count errs[SM_STRESS_MAX_ERR_CODES * 4];
	uint64_t ops = 0, rows = 0, errors = 0, bad = 0;
	struct sm_stress_routing rt;
	double secs = (double)(sx->last_tick_ns - sx->measure_start_ns) / 1e9, cpu = 0;
	double busy = 0, idle = 0;
	uint64_t stalls, sched_p99;
	unsigned i, k, e, nerr = 0, nnet;
	const struct sm_net_counter *net_desc = NULL;
	uint64_t *net_sum, lwt_a, lwt_n;
	char name[96];

	memset(&sum, 0, sizeof(sum));
	memset(errs, 0, sizeof(errs));
	memset(&rt, 0, sizeof(rt));
	if (sm_hdr_init(&all_rt, SM_STRESS_HDR_LOWEST, SM_STRESS_HDR_HIGHEST,
			SM_STRESS_HDR_SIGFIGS) < 0 ||
	    sm_hdr_init(&all_st, SM_STRESS_HDR_LOWEST, SM_STRESS_HDR_HIGHEST,
			SM_STRESS_HDR_SIGFIGS) < 0)
		return;
	run_totals(tot, &all_rt, &all_st);
	for (k = 0; k < sx->nops; k++) {
		enum sm_stress_op op = sx->ops[k];

		ops += tot[k].ops;
		rows += tot[k].rows;
		errors += tot[k].errors;
		op_summary(&per[k], sm_stress_op_name(op), shown(&tot[k], true), tot[k].ops,
			   tot[k].rows, tot[k].errors, secs);
	}
	for (i = 0; i < sx->nshards; i++) {
		const struct sm_stress_shard *sh = &sx->sh[i];

		rt.misrouted += sh->misrouted;
		rt.routed += sh->routed;
		rt.by_tablets += sh->by_tablets;
		rt.by_ring += sh->by_ring;
		rt.tablet_payloads += sh->tablet_payloads;
		rt.learned += sh->tablets.st.learned;
		rt.malformed += sh->tablets.st.malformed;
		rt.refused += sh->tablets.st.refused;
		rt.tablets += sh->tablets.total ? sh->tablets.total : sh->tablets_held;
		if (rt.why == NULL)
			rt.why = sh->tablet_why;
		bad += sh->validation_failures;
		cpu += sh->cpu1 - sh->cpu0;
		busy += (double)(sh->busy1 - sh->busy0) / 1e9;
		idle += (double)(sh->idle1 - sh->idle0) / 1e9;
		for (e = 0; e < SM_STRESS_MAX_ERR_CODES && sh->errs[e].n; e++) {
			for (k = 0; k < nerr && errs[k].code != sh->errs[e].code; k++)
				;
			if (k == nerr && nerr < SM_ARRAY_SIZE(errs))
				errs[nerr++].code = sh->errs[e].code;
			if (k < nerr)
				errs[k].n += sh->errs[e].n;
		}
	}
	/* Our additions, before cassandra-stress's block so parsers of it still work. */
	sm_stress_out("\n");
	/*
	 * Busy time is what the operations cost the loader; idle polling is
	 * the reactor spinning for the next due time or reply, which a
	 * throttled rate makes large and which is no cost per operation.
	 */
	sm_stress_out("Client: %u %s, %u threads; loader CPU %.2f s for %" PRIu64
		      " ops: busy %.2f s = %.2f us/op (%.0f ops per busy CPU-second), idle polling "
		      "%.2f s\n",
		      sx->nshards, sx->nshards == 1 ? "shard" : "shards", sx->s.rate.threads, cpu,
		      ops, busy, ops ? busy * 1e6 / (double)ops : 0,
		      busy > 0 ? (double)ops / busy : 0, idle);
	if (secs > 0 && busy / (secs * sx->nshards) > 0.9)
		sm_stress_out("WARNING: the client shards were busy %.0f%% of the run: the load "
			      "generator, "
			      "not the server, may be the limit (add -shards or more loaders)\n",
			      100 * busy / (secs * sx->nshards));
	reactor_summary(&stalls, &sched_p99);
	if (stalls > 0 || sched_p99 > 1000)
		sm_stress_out("Reactor (this loader): %" PRIu64 " stalls past "
			      "blocked_reactor_notify_ms, scheduling latency p99 %s%" PRIu64 " us "
			      "(the loader's own delays are in the latencies above)\n",
			      stalls, sched_p99 == UINT64_MAX ? ">" : "<=",
			      sched_p99 == UINT64_MAX ? (uint64_t)1 << 20 : sched_p99);
	if (sx->proto->report_routing != NULL)
		sx->proto->report_routing(&rt);
	if (sx->s.profile != NULL)
		sm_stress_user_report();
	nnet = net_counters_sum(sx->nshards, &net_desc, &net_sum);
	/* a driver with counters but no TCP stack of its own (uring) has none of these */
	if (nnet > 0 && net_counter(net_desc, net_sum, nnet, "tcp_retransmits_total") >= 0)
		sm_stress_out("Network (%s, this loader): %" PRId64 " TCP retransmissions (%" PRId64
			      " timeouts), %" PRId64 " out-of-order segments, %" PRId64
			      " frames steered to another shard, %" PRId64 " missed by the NIC\n",
			      sm_net_driver()->name,
			      net_counter(net_desc, net_sum, nnet, "tcp_retransmits_total"),
			      net_counter(net_desc, net_sum, nnet, "tcp_timeouts_total"),
			      net_counter(net_desc, net_sum, nnet, "tcp_out_of_order_total"),
			      net_counter(net_desc, net_sum, nnet, "rx_steered_total"),
			      net_counter(net_desc, net_sum, nnet, "nic_rx_missed_total"));
	if (sx->s.rate.kind != SM_STRESS_RATE_NONE) {
		sm_stress_out(
			"Latency from the intended start (response time, corrects coordinated "
			"omission): mean %.3f ms, p99 %.3f ms, max %.3f ms\n",
			all_rt.total_count ? sm_hdr_mean(&all_rt) / 1e6 : 0,
			ms(sm_hdr_value_at_percentile(&all_rt, 99)), ms(sm_hdr_max(&all_rt)));
		sm_stress_out(
			"Latency from the send (service time): mean %.3f ms, p99 %.3f ms, max %.3f "
			"ms\n",
			all_st.total_count ? sm_hdr_mean(&all_st) / 1e6 : 0,
			ms(sm_hdr_value_at_percentile(&all_st, 99)), ms(sm_hdr_max(&all_st)));
		sm_stress_out("(cassandra-stress prints the %s for -rate %s=)\n",
			      sx->s.rate.kind == SM_STRESS_RATE_FIXED ? "first" : "second",
			      sx->s.rate.kind == SM_STRESS_RATE_FIXED ? "fixed" : "throttle");
	}
	for (k = 0; k < nerr; k++)
		sm_stress_out("Errors: %" PRIu64 " x %s\n", errs[k].n,
			      sm_stress_error_name(errs[k].code, name, sizeof(name)));
	if (bad > 0)
		sm_stress_out("Read validation: %" PRIu64
			      " rows did not hold the values their key generates\n",
			      bad);
	if (sx->s.wl != NULL)
		sx->s.wl->report(tot, secs);
	if (!sx->s.log.no_summary) {
		op_summary(&sum.total, "total",
			   sx->s.rate.kind == SM_STRESS_RATE_FIXED ? &all_rt : &all_st, ops, rows,
			   errors, secs);
		sum.ops = per;
		sum.n_ops = sx->nops;
		sum.time_s = secs;
		sum.failure = sx->failure;
		sum.no_end = !final;
		sm_cs_print_results(stdout, &sum);
		if (sx->text_log != NULL)
			sm_cs_print_results(sx->text_log, &sum);
	}
	if (final && sx->s.log.json != NULL) {
		FILE *f = fopen(sx->s.log.json, "w");

		if (f == NULL) {
			fprintf(stderr, "shardmark stress: cannot write %s: %s\n", sx->s.log.json,
				strerror(errno));
		} else {
			fprintf(f,
				"{\n  \"command\": \"stress %s\",\n  \"version\": \"%s\",\n"
				"  \"api\": \"%s\",\n  \"client_shards\": %u,\n  \"threads\": %u,\n"
				"  \"rate\": {\"kind\": \"%s\", \"ops_per_s\": %" PRIu64 "},\n"
				"  \"seconds\": %.6f,\n  \"ops\": %" PRIu64
				",\n  \"rows\": %" PRIu64 ",\n  \"errors\": %" PRIu64
				",\n  \"ops_per_s\": %.3f,\n"
				"  \"client_cpu_s\": %.6f,\n  \"ops_per_client_cpu_s\": %.3f,\n"
				"  \"client_busy_s\": %.6f,\n  \"client_idle_s\": %.6f,\n"
				"  \"client_busy_us_per_op\": %.3f,\n"
				"  \"client_stalls\": %" PRIu64 ",\n"
				"  \"client_sched_p99_us\": %" PRIu64 ",\n"
				"  \"routing\": {\"scylla\": %s, \"shard_aware\": %s, "
				"\"token_aware\": "
				"%s, \"routed\": %" PRIu64 ", \"misrouted\": %" PRIu64 ", "
				"\"tablets\": %s, \"by_tablets\": %" PRIu64 ", \"by_ring\": %" PRIu64
				", \"tablet_misrouted\": %" PRIu64 ", \"tablets_learned\": %" PRIu64
				", \"tablets_malformed\": %" PRIu64 ", \"tablets_refused\": %" PRIu64
				"},\n"
				"  \"read_validation_failures\": %" PRIu64
				",\n  \"failure\": %s,\n",
				sm_stress_cmd_name(sx->s.cmd), SM_VERSION, sx->proto->name,
				sx->nshards, sx->s.rate.threads,
				sx->s.rate.kind == SM_STRESS_RATE_FIXED	     ? "fixed"
				: sx->s.rate.kind == SM_STRESS_RATE_THROTTLE ? "throttle"
									     : "none",
				sx->s.rate.ops_per_s, secs, ops, rows, errors,
				secs > 0 ? (double)ops / secs : 0, cpu,
				cpu > 0 ? (double)ops / cpu : 0, busy, idle,
				ops ? busy * 1e6 / (double)ops : 0, stalls,
				sched_p99 == UINT64_MAX ? (uint64_t)1 << 21 : sched_p99,
				sx->scylla ? "true" : "false",
				sx->use_shard_port ? "true" : "false",
				sx->s.route.token_aware && sx->ring_ok ? "true" : "false",
				rt.routed, rt.misrouted, sx->tablets ? "true" : "false",
				rt.by_tablets, rt.by_ring, rt.tablet_payloads, rt.learned,
				rt.malformed, rt.refused, bad, sx->failure ? "true" : "false");
			fprintf(f, "  \"errors_by_code\": [");
			for (k = 0; k < nerr; k++)
				fprintf(f,
					"%s{\"code\": %d, \"what\": \"%s\", \"count\": %" PRIu64
					"}",
					k ? ", " : "", errs[k].code,
					sm_stress_error_name(errs[k].code, name, sizeof(name)),
					errs[k].n);
			fprintf(f, "],\n  \"network\": {");
			if (nnet > 0)
				fprintf(f, "\"driver\": \"%s\"", sm_net_driver()->name);
			for (k = 0; k < nnet; k++)
				fprintf(f, ", \"%s\": %" PRIu64, net_desc[k].name, net_sum[k]);
			fprintf(f, "},\n  \"ops_by_type\": {");
			for (k = 0; k < sx->nops; k++) {
				fprintf(f,
					"%s\n    \"%s\": {\"ops\": %" PRIu64 ", \"rows\": %" PRIu64
					", \"errors\": %" PRIu64 ", \"ops_per_s\": %.3f, "
					"\"service_time\": ",
					k ? "," : "", sm_stress_op_name(sx->ops[k]), tot[k].ops,
					tot[k].rows, tot[k].errors, per[k].op_s);
				json_hist(f, &tot[k].st_total);
				fprintf(f, ", \"response_time\": ");
				json_hist(f, &tot[k].rt_total);
				if (sm_stress_user_lwt_counts(sx->ops[k], &lwt_a, &lwt_n))
					fprintf(f,
						", \"lwt_applied\": %" PRIu64
						", \"lwt_not_applied\": %" PRIu64,
						lwt_a, lwt_n);
				fprintf(f, "}");
			}
			fprintf(f, "\n  },\n  \"service_time\": ");
			json_hist(f, &all_st);
			fprintf(f, ",\n  \"response_time\": ");
			json_hist(f, &all_rt);
			fprintf(f, "\n}\n");
			fclose(f);
		}
	}
	for (k = 0; k < sx->nops; k++) {
		sm_hdr_fini(&tot[k].rt_total);
		sm_hdr_fini(&tot[k].st_total);
	}
	sm_hdr_fini(&all_rt);
	sm_hdr_fini(&all_st);
	sm_free(net_sum);
}

/* ---- shardmark stress merge: several loaders' HDR logs, one result ---- */

struct merge_tag {
	char tag[64];
	struct sm_hdr h;
	double first, last;
};

struct sm_stress_merge {
	struct merge_tag tags[32];
	unsigned n;
	/* each log's wall-clock span (absolute seconds), to check they ran together */
	double *first, *last;
	unsigned nlogs, cap;
	double cur_first, cur_last; /* the log being read */
};

static int
merge_cb(const char *tag, double start_s, double length_s, const struct sm_hdr *h, void *arg)
{
	struct sm_stress_merge *m = arg;
	unsigned i;

	if (tag == NULL)
		tag = "(untagged)";
	for (i = 0; i < m->n && strcmp(m->tags[i].tag, tag) != 0; i++)
		;
	if (i == m->n) {
		if (m->n == SM_ARRAY_SIZE(m->tags))
			return -ENOSPC;
		snprintf(m->tags[i].tag, sizeof(m->tags[i].tag), "%s", tag);
		if (sm_hdr_init(&m->tags[i].h, SM_STRESS_HDR_LOWEST, SM_STRESS_HDR_HIGHEST,
				SM_STRESS_HDR_SIGFIGS) < 0)
			return -ENOMEM;
		m->tags[i].first = start_s;
		m->tags[i].last = start_s + length_s;
		m->n++;
	}
	sm_hdr_add(&m->tags[i].h, h);
	m->tags[i].first = fmin(m->tags[i].first, start_s);
	m->tags[i].last = fmax(m->tags[i].last, start_s + length_s);
	m->cur_first = fmin(m->cur_first, start_s);
	m->cur_last = fmax(m->cur_last, start_s + length_s);
	return 0;
}

struct sm_stress_merge *
sm_stress_merge_new(void)
{
	return calloc(1, sizeof(struct sm_stress_merge));
}

int
sm_stress_merge_read(struct sm_stress_merge *m, FILE *f, char *err, size_t errlen)
{
	int ret;

	m->cur_first = INFINITY;
	m->cur_last = -INFINITY;
	ret = sm_hdr_log_read(f, merge_cb, m, err, errlen);
	if (ret < 0 || m->cur_first > m->cur_last)
		return ret; /* an empty log adds no span */
	if (m->nlogs == m->cap) {
		unsigned cap = m->cap ? m->cap * 2 : 8;
		double *a = realloc(m->first, cap * sizeof(*a)), *b;

		if (a == NULL)
			return -ENOMEM;
		m->first = a;
		b = realloc(m->last, cap * sizeof(*b));
		if (b == NULL)
			return -ENOMEM;
		m->last = b;
		m->cap = cap;
	}
	m->first[m->nlogs] = m->cur_first;
	m->last[m->nlogs] = m->cur_last;
	m->nlogs++;
	return 0;
}

int
sm_stress_merge_check(const struct sm_stress_merge *m, char *err, size_t errlen)
{
	double start = -INFINITY, end = INFINITY;
	unsigned i, late = 0, early = 0;

	for (i = 0; i < m->nlogs; i++) {
		if (m->first[i] > start) {
			start = m->first[i];
			late = i;
		}
		if (m->last[i] < end) {
			end = m->last[i];
			early = i;
		}
	}
	if (m->nlogs < 2 || start < end)
		return 0;
	snprintf(err, errlen,
		 "log %u ran from %.3f to %.3f and log %u from %.3f to %.3f (seconds since the "
		 "epoch): they did not run at the same time, so one rate over both spans "
		 "means nothing; merge logs of loaders that ran together (give --allow-disjoint "
		 "to merge anyway)",
		 early + 1, m->first[early], m->last[early], late + 1, m->first[late],
		 m->last[late]);
	return -ERANGE;
}

void
sm_stress_merge_print(FILE *f, const struct sm_stress_merge *m)
{
	unsigned i;

	fprintf(f, "%-20s %12s %10s %9s %9s %9s %9s %9s %9s %9s\n", "tag", "count", "op/s", "mean",
		"med", ".95", ".99", ".999", "max", "seconds");
	for (i = 0; i < m->n; i++) {
		const struct sm_hdr *h = &m->tags[i].h;
		double secs = m->tags[i].last - m->tags[i].first;

		fprintf(f, "%-20s %12" PRId64 " %10.0f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.1f\n",
			m->tags[i].tag, h->total_count,
			secs > 0 ? (double)h->total_count / secs : 0,
			h->total_count ? sm_hdr_mean(h) / 1e6 : 0,
			ms(sm_hdr_value_at_percentile(h, 50)),
			ms(sm_hdr_value_at_percentile(h, 95)),
			ms(sm_hdr_value_at_percentile(h, 99)),
			ms(sm_hdr_value_at_percentile(h, 99.9)), ms(sm_hdr_max(h)), secs);
	}
	fprintf(f, "(latencies in ms; op/s is the merged count over the span from the first\n"
		   "interval's start to the last one's end)\n");
}

void
sm_stress_merge_free(struct sm_stress_merge *m)
{
	unsigned i;

	if (m == NULL)
		return;
	for (i = 0; i < m->n; i++)
		sm_hdr_fini(&m->tags[i].h);
	free(m->first);
	free(m->last);
	free(m);
}
