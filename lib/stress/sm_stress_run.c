/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control plane of `shardmark stress`, on shard 0: setting up and
 * tearing down a run, the control connection's outcome (the protocol's
 * ops table does its steps), then the phases (connect, warm-up, measure,
 * drain) driven by a timer tick that reads the shards' progress, asks
 * them for interval histograms, and stops a run that fails or stalls.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sm_bench_cs.h"
#include "sm_stress_run.h"
#include "sm_stress_run_priv.h"

struct sm_stress_run *sm_stress_run_cur;

/* ---- control plane (shard 0) ---- */

static void
finish(void);

void
sm_stress_control_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sx->msg, sizeof(sx->msg), fmt, ap);
	va_end(ap);
	sm_stress_progress_clear();
	fprintf(stderr, "shardmark stress: %s\n", sx->msg);
	finish();
}

/*
 * Run @fn(@arg) on every shard, then @done once on this one (NULL: none).
 * When not even that can be sent, the run cannot be steered: it ends.
 */
static void
to_all(void (*fn)(void *), void *arg, void (*done)(void *))
{
	if (sm_submit_to_all(fn, arg, done) == -ENOMEM)
		sm_stress_control_fail("out of memory: cannot reach the client shards");
}

static void
finish(void)
{
	unsigned i;

	sx->phase = SM_STRESS_PH_DONE;
	sm_timer_cancel(&sx->timer);
	sx->proto->ctl_close();
	/*
	 * Not sm_submit_to_all(): its acks would come back to a shard 0 that
	 * may already have left the stopping runtime, and its state leak. No
	 * ack is needed; a shard not reached closes at its fini anyway.
	 */
	for (i = 0; i < sx->nshards; i++)
		sm_submit_to(i, sm_stress_shard_close, NULL, NULL);
	sm_runtime_stop();
}

static int
add_host_addr(const char *addr)
{
	unsigned i;

	for (i = 0; i < sx->nhosts; i++)
		if (strcmp(sx->addrs[i], addr) == 0)
			return (int)i;
	if (sx->nhosts == SM_STRESS_MAX_HOSTS)
		return -ENOSPC;
	snprintf(sx->addr_buf[sx->nhosts], sizeof(sx->addr_buf[0]), "%s", addr);
	sx->addrs[sx->nhosts] = sx->addr_buf[sx->nhosts];
	return (int)sx->nhosts++;
}

void
sm_stress_start_connect(void)
{
	unsigned i, k;

	if (sx->ring_ok) {
		for (i = 0; i < sx->ring.nhosts; i++)
			add_host_addr(sx->ring.hosts[i].addr);
	}
	if (sx->nhosts == 0)
		for (i = 0; i < sx->s.nodes.n; i++)
			add_host_addr(sx->s.nodes.hosts[i]);
	if (sx->proto->plan != NULL)
		sx->proto->plan();
	for (i = 0; i < sx->nshards; i++) {
		struct sm_stress_shard *sh = &sx->sh[i];

		sh->conns_per_host = sx->proto->conns_per_host(sh);
		sh->conns = calloc((size_t)sh->conns_per_host * sx->nhosts, sizeof(*sh->conns));
		if (sh->conns == NULL) {
			sm_stress_control_fail("out of memory");
			return;
		}
		for (k = 0; k < sh->conns_per_host * sx->nhosts; k++)
			sm_timer_init(&sh->conns[k].redial, NULL, NULL);
	}
	sx->phase = SM_STRESS_PH_CONNECT;
	to_all(sm_stress_shard_connect, NULL, NULL);
	sm_timer_arm(&sx->timer, SM_STRESS_POLL_MS);
}

/* ---- interval reports (shard 0) ---- */

static void
step_end(void);

static void
flip_done(void *arg)
{
	(void)arg;
	sx->flipping = false;
	sm_stress_report_interval();
	if (sx->phase != SM_STRESS_PH_DONE)
		return;
	if (sx->search != NULL) /* a step ended: the search decides what is next */
		step_end();
	else /* the last interval: print the results */
		sm_runtime_stop();
}

/* ---- control ticks (shard 0) ---- */

static bool
all_done(void)
{
	unsigned i;

	for (i = 0; i < sx->nshards; i++)
		if (!SM_READ_ONCE(sx->sh[i].done))
			return false;
	return true;
}

static bool
any_failed_run(void)
{
	unsigned i;

	for (i = 0; i < sx->nshards; i++)
		if (sx->sh[i].failed_run)
			return true;
	return false;
}

/*
 * True when no operation has completed for requestTimeout while some are in
 * flight: a server that stopped answering must not hang the run.
 */
static bool
stalled(uint64_t now)
{
	uint64_t done = 0, busy = 0;
	unsigned i;

	for (i = 0; i < sx->nshards; i++) {
		done += SM_READ_ONCE(sx->sh[i].completed);
		busy += SM_READ_ONCE(sx->sh[i].busy);
	}
	if (done != sx->progress_ops || busy == 0) {
		sx->progress_ops = done;
		sx->progress_ns = now;
		return false;
	}
	if (now - sx->progress_ns < (uint64_t)sx->s.mode.request_timeout_ms * 1000000ull)
		return false;
	sm_stress_progress_clear();
	fprintf(stderr,
		"shardmark stress: no operation completed for %u ms with %" PRIu64
		" in flight (-mode requestTimeout=%u): the server stopped answering; ending the "
		"run\n",
		sx->s.mode.request_timeout_ms, busy, sx->s.mode.request_timeout_ms);
	sx->failure = true;
	return true;
}

static void
begin_phase(enum sm_stress_phase ph)
{
	sx->phase = ph;
	sx->phase_start_ns = sm_now_ns();
	sx->progress_ops = UINT64_MAX; /* the shards reset their counts */
	if (ph == SM_STRESS_PH_MEASURE) {
		unsigned k;

		sx->measure_start_ns = sx->phase_start_ns;
		sx->last_tick_ns = sx->phase_start_ns;
		for (k = 0; k <= SM_STRESS_NR_OPS; k++)
			sx->last_ops[k] = 0;
		sx->last_errors = 0;
		sx->rate_sum = sx->rate_sq = 0;
		sx->rate_n = 0;
		/* one log for every step of a search: one header, times from the first */
		if (sx->hdr_base_ns == 0) {
			sx->hdr_base_ns = sx->phase_start_ns;
			sx->measure_start_epoch = (double)time(NULL);
			if (sx->hdr_log != NULL)
				sm_hdr_log_write_header(sx->hdr_log,
							"Logged with shardmark stress",
							sx->measure_start_epoch);
		}
		for (k = 0; k < sx->nops && sx->s.wl == NULL; k++) {
			if (sx->s.n_ops)
				sm_stress_out("Running %s with %u threads for %" PRIu64
					      " iteration\n",
					      sm_stress_op_name(sx->ops[k]), sx->s.rate.threads,
					      sx->s.n_ops);
			else
				sm_stress_out("Running %s with %u threads for %.0f seconds\n",
					      sm_stress_op_name(sx->ops[k]), sx->s.rate.threads,
					      (double)sx->s.duration_ns / 1e9);
		}
		if (sx->s.wl != NULL) {
			if (sx->s.wl->header != NULL)
				sx->s.wl->header();
		} else {
			sm_cs_print_header(stdout);
			if (sx->text_log != NULL)
				sm_cs_print_header(sx->text_log);
		}
		fflush(stdout);
	}
	to_all(sm_stress_shard_start_phase, (void *)(uintptr_t)ph, NULL);
	sm_timer_arm(&sx->timer, SM_STRESS_POLL_MS);
}

/*
 * The next step of a search: its concurrency and rate, then (a rate step)
 * settle= unrecorded at that rate, then the measured run.
 */
static void
start_step(void)
{
	struct sm_stress_search *se = sx->search;

	sx->s.rate.threads = se->next_threads;
	if (se->o.kind == SM_STRESS_SEARCH_THREADS) {
		/* StressAction.runMulti's line before each run */
		sm_stress_out("\nRunning with %u threadCount\n", se->next_threads);
	} else {
		sx->s.rate.ops_per_s = se->next_rate;
		sm_stress_out("\nStep %u (%s): %" PRIu64 " ops/s, %u threads\n", se->n + 1,
			      se->bisecting ? "bisect" : "step", se->next_rate, se->next_threads);
	}
	fflush(stdout);
	if (se->o.kind == SM_STRESS_SEARCH_RATE && se->o.settle_ns > 0)
		begin_phase(SM_STRESS_PH_SETTLE);
	else
		begin_phase(SM_STRESS_PH_MEASURE);
}

/* After connecting and warming up: one measured run, or a search's first step. */
static void
begin_measuring(void)
{
	if (sx->search != NULL)
		start_step();
	else
		begin_phase(SM_STRESS_PH_MEASURE);
}

static void
step_end(void)
{
	struct sm_stress_search *se = sx->search;
	const struct sm_stress_step *prev;
	struct sm_stress_step m;
	bool more;

	sm_stress_report_step(&m);
	if (sx->failure) {
		sm_runtime_stop();
		return;
	}
	more = sm_stress_search_record(se, &m);
	prev = &se->steps[se->n - 1];
	if (se->o.kind == SM_STRESS_SEARCH_THREADS && se->n > 1)
		sm_stress_out("Improvement over %u threadCount: %.0f%%\n", se->steps[se->n - 2].threads,
			      100 * prev->improvement);
	else if (se->o.kind == SM_STRESS_SEARCH_RATE)
		sm_stress_out("Step %u: %s (p%g %.3f ms, bound %.3f ms; %.0f of %" PRIu64
			      " ops/s; %" PRIu64 " errors)\n",
			      se->n, prev->pass ? "pass" : "FAIL", se->o.percentile, prev->pct_ms,
			      (double)se->o.bound_ns / 1e6, prev->achieved, prev->target,
			      prev->errors);
	if (more)
		start_step();
	else
		sm_runtime_stop();
}

static void
control_tick(void *arg)
{
	uint64_t now = sm_now_ns();
	unsigned i, ready = 0, failed = 0, want = 0;

	(void)arg;
	switch (sx->phase) {
	case SM_STRESS_PH_CONTROL:
		if (now - sx->phase_start_ns > 30ull * 1000000000ull) {
			sm_stress_control_fail(
				"%s:%u did not complete the setup (handshake, ring, schema) "
				"within 30 s",
				sx->s.nodes.hosts[0], sx->proto->ctl_port());
			return;
		}
		sm_timer_arm(&sx->timer, 200);
		return;
	case SM_STRESS_PH_CONNECT:
		for (i = 0; i < sx->nshards; i++) {
			ready += SM_READ_ONCE(sx->sh[i].nready);
			failed += SM_READ_ONCE(sx->sh[i].nfailed);
			want += sx->sh[i].conns_per_host * sx->nhosts;
		}
		if (failed > 0) {
			for (i = 0; i < sx->nshards; i++)
				if (sx->sh[i].first_err != 0)
					break;
			sm_stress_control_fail("%u of %u connections failed: %s", failed, want,
					       i < sx->nshards ? sx->sh[i].first_err_text : "?");
			return;
		}
		if (ready < want) {
			if (now - sx->phase_start_ns > 30ull * 1000000000ull) {
				sm_stress_control_fail("only %u of %u connections ready after 30 s",
						       ready, want);
				return;
			}
			sm_timer_arm(&sx->timer, SM_STRESS_POLL_MS);
			return;
		}
		if (sx->s.warmup_ops > 0 && !sx->s.no_warmup) {
			sm_stress_out("Warming up %s with %" PRIu64 " iterations...\n",
				      sx->nops > 1 ? "the op mix" : sm_stress_op_name(sx->ops[0]),
				      sx->s.warmup_ops * sx->nops);
			fflush(stdout);
			begin_phase(SM_STRESS_PH_WARMUP);
		} else {
			begin_measuring();
		}
		return;
	case SM_STRESS_PH_WARMUP:
		if (stalled(now)) {
			sx->phase = SM_STRESS_PH_DONE;
			sm_runtime_stop();
			return;
		}
		if (any_failed_run()) {
			/* stop the shards and wait for what is in flight: starting a phase
			 * here ran the whole load again, whose retries then met connections
			 * still busy and replaced the warm-up's failure with "not connected" */
			sx->failure = true;
			sx->phase = SM_STRESS_PH_DRAIN;
			sx->phase_start_ns = now;
			to_all(sm_stress_shard_stop, NULL, NULL);
			sm_timer_arm(&sx->timer, SM_STRESS_POLL_MS);
			return;
		}
		if (!all_done()) {
			sm_timer_arm(&sx->timer, SM_STRESS_POLL_MS);
			return;
		}
		begin_measuring();
		return;
	case SM_STRESS_PH_SETTLE:
		if (stalled(now)) {
			sx->phase = SM_STRESS_PH_DONE;
			sm_runtime_stop();
			return;
		}
		if (now - sx->phase_start_ns >= sx->search->o.settle_ns && !sx->sh[0].stopping)
			to_all(sm_stress_shard_stop, NULL, NULL);
		if (all_done()) {
			begin_phase(SM_STRESS_PH_MEASURE);
			return;
		}
		sm_timer_arm(&sx->timer, SM_STRESS_POLL_MS);
		return;
	case SM_STRESS_PH_MEASURE:
		if (any_failed_run() && !sx->failure) {
			sx->failure = true;
			to_all(sm_stress_shard_stop, NULL, NULL);
		}
		if (sx->s.duration_ns && now - sx->measure_start_ns >= sx->s.duration_ns &&
		    !sx->sh[0].stopping) {
			to_all(sm_stress_shard_stop, NULL, NULL);
		}
		if (!sx->flipping && (all_done() || stalled(now))) {
			sx->phase = SM_STRESS_PH_DONE;
			sm_timer_cancel(&sx->timer);
			sx->flipping = true;
			to_all(sm_stress_shard_flip, NULL, flip_done);
			return;
		}
		if (now - sx->last_tick_ns >= (uint64_t)sx->s.log.interval_ms * 1000000ull &&
		    !sx->flipping) {
			sx->flipping = true;
			to_all(sm_stress_shard_flip, NULL, flip_done);
		}
		sm_timer_arm(&sx->timer, SM_STRESS_POLL_MS);
		return;
	case SM_STRESS_PH_DRAIN:
		if (!all_done() && !stalled(now)) {
			sm_timer_arm(&sx->timer, SM_STRESS_POLL_MS);
			return;
		}
		sx->phase = SM_STRESS_PH_DONE;
		sm_runtime_stop();
		return;
	default:
		return;
	}
}

/* ---- setup ---- */

int
sm_stress_control_start(struct sm_stress_run *r)
{
	int ret;

	sm_timer_init(&r->timer, control_tick, NULL);
	r->phase = SM_STRESS_PH_CONTROL;
	r->phase_start_ns = sm_now_ns();
	sm_timer_arm(&r->timer, 200);
	ret = r->proto->ctl_open();
	if (ret < 0) {
		fprintf(stderr, "shardmark stress: cannot connect to %s: %s\n", r->s.nodes.hosts[0],
			strerror(-ret));
		return ret;
	}
	return 0;
}

int
sm_stress_run_check(const struct sm_stress_settings *s, char *err, size_t errlen)
{
	unsigned k;

	if (s->col.count.kind != SM_STRESS_DIST_FIXED || s->col.count.min == 0 ||
	    s->col.count.min > SM_STRESS_MAX_COLS) {
		snprintf(err, errlen, "-col n= must be FIXED(N) with N from 1 to %d",
			 SM_STRESS_MAX_COLS);
		return -EINVAL;
	}
	if (s->col.size.max > 4096) {
		snprintf(err, errlen, "-col size= above 4096 bytes is not supported");
		return -EINVAL;
	}
	for (k = 0; k < SM_STRESS_NR_OPS; k++)
		if (s->ratio[k] > 0)
			return 0;
	snprintf(err, errlen, "the op mix is empty: give a ratio(...) weight");
	return -EINVAL;
}

/*
 * The protocol of @api's ops table. Adding a protocol is a table and a
 * line here; the engine never asks which protocol it drives.
 */
const struct sm_stress_proto_ops *
sm_stress_proto_of(enum sm_stress_api api)
{
	return api == SM_STRESS_API_ALTERNATOR ? &sm_stress_http_ops : &sm_stress_cql_ops;
}

int
sm_stress_run_create(const struct sm_stress_run_opts *o, struct sm_stress_run **out)
{
	struct sm_stress_run *r;
	const char *term;
	unsigned k, i;

	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return -ENOMEM;
	r->s = *o->s;
	r->proto = sm_stress_proto_of(r->s.mode.api);
	r->net = o->net;
	r->nshards = o->nshards;
	r->hdr_log = o->hdr_log;
	r->csv_log = o->csv_log;
	r->text_log = o->text_log;
	r->tls = o->tls;
	term = getenv("TERM");
	r->progress_tty = isatty(STDOUT_FILENO) && term != NULL && strcmp(term, "dumb") != 0;
	r->ncols = (unsigned)r->s.col.count.min;
	for (k = 0; k < SM_STRESS_NR_OPS; k++) {
		if (r->s.ratio[k] > 0) {
			r->cum[r->nops] = (r->nops ? r->cum[r->nops - 1] : 0) + r->s.ratio[k];
			r->ops[r->nops++] = (enum sm_stress_op)k;
		}
	}
	memcpy(r->ops_by_name, r->ops, sizeof(r->ops));
	memcpy(r->prep, r->ops, sizeof(r->ops));
	r->nprep = r->nops;
	for (k = 1; k < r->nops; k++)
		for (i = k; i > 0 && strcmp(sm_stress_op_name(r->ops_by_name[i - 1]),
					    sm_stress_op_name(r->ops_by_name[i])) > 0;
		     i--) {
			enum sm_stress_op t = r->ops_by_name[i];

			r->ops_by_name[i] = r->ops_by_name[i - 1];
			r->ops_by_name[i - 1] = t;
		}
	sm_ring_init(&r->ring);
	sm_hdr_init(&r->tmp_rt, SM_STRESS_HDR_LOWEST, SM_STRESS_HDR_HIGHEST, SM_STRESS_HDR_SIGFIGS);
	sm_hdr_init(&r->tmp_st, SM_STRESS_HDR_LOWEST, SM_STRESS_HDR_HIGHEST, SM_STRESS_HDR_SIGFIGS);
	r->sh = aligned_alloc(SM_CACHE_LINE, r->nshards * sizeof(*r->sh));
	if (r->sh == NULL)
		goto fail;
	memset(r->sh, 0, r->nshards * sizeof(*r->sh));
	for (k = 0; k < SM_STRESS_NR_OPS; k++)
		if (sm_stress_stats_init(&r->merged[k]) < 0)
			goto fail;
	if (r->s.rate.search.kind != SM_STRESS_SEARCH_NONE) {
		r->search = sm_calloc(1, sizeof(*r->search));
		if (r->search == NULL)
			goto fail;
		sm_stress_search_init(r->search, &r->s.rate.search, r->s.rate.threads);
	}
	sm_stress_run_cur = r;
	if (r->proto->prepare != NULL)
		r->proto->prepare();
	*out = r;
	return 0;
fail:
	sm_stress_run_destroy(r);
	return -ENOMEM;
}

void
sm_stress_run_destroy(struct sm_stress_run *r)
{
	unsigned i, k;

	if (r == NULL)
		return;
	for (k = 0; k < SM_STRESS_NR_OPS; k++)
		sm_stress_stats_fini(&r->merged[k]);
	sm_hdr_fini(&r->tmp_rt);
	sm_hdr_fini(&r->tmp_st);
	for (i = 0; r->sh != NULL && i < r->nshards; i++) {
		for (k = 0; k < SM_STRESS_NR_OPS; k++)
			sm_stress_stats_fini(&r->sh[i].st[k]);
		free(r->sh[i].conns);
	}
	free(r->sh);
	sm_free(r->search);
	sm_ring_free(&r->ring);
	if (sm_stress_run_cur == r)
		sm_stress_run_cur = NULL;
	free(r);
}

bool
sm_stress_run_measured(const struct sm_stress_run *r)
{
	return r->phase == SM_STRESS_PH_DONE && r->measure_start_ns != 0;
}

bool
sm_stress_run_failed(const struct sm_stress_run *r)
{
	return r->failure;
}

const char *
sm_stress_run_fail_text(const struct sm_stress_run *r)
{
	unsigned i;

	for (i = 0; i < r->nshards; i++)
		if (r->sh[i].failed_run && r->sh[i].fail_text[0])
			return r->sh[i].fail_text;
	return NULL;
}
