/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The per-shard engine of `shardmark stress`: each client shard's workers
 * (cassandra-stress's threads, one operation in flight each), the pump
 * that starts operations as the workers, the quota and the open-loop
 * schedule allow, the phases shard 0 starts and stops by message, the
 * interval histograms it flips, and the shard's connections, opened and
 * used through the protocol's ops table (sm_stress_run_priv.h).
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sm_stress_run_priv.h"

#define SPIN_NS 1000000 /* a due time closer than 1 ms is waited for by polling */

static double
thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The calling shard's reactor time so far: rounds with work, and idle polling (ns). */
static void
reactor_time(uint64_t *busy, uint64_t *idle)
{
	const struct sm_sw_stats *st = sm_shard_stats(sm_shard_id());

	*busy = st->busy_ns;
	*idle = st->idle_ns;
}

static void
count_error(struct sm_stress_shard *sh, int32_t code)
{
	unsigned i;

	for (i = 0; i < SM_STRESS_MAX_ERR_CODES; i++) {
		if (sh->errs[i].n == 0 || sh->errs[i].code == code) {
			sh->errs[i].code = code;
			sh->errs[i].n++;
			return;
		}
	}
	sh->errs[SM_STRESS_MAX_ERR_CODES - 1].n++; /* more distinct codes than slots */
}

int
sm_stress_stats_init(struct sm_stress_op_stats *o)
{
	if (sm_hdr_init(&o->rt[0], SM_STRESS_HDR_LOWEST, SM_STRESS_HDR_HIGHEST,
			SM_STRESS_HDR_SIGFIGS) < 0 ||
	    sm_hdr_init(&o->rt[1], SM_STRESS_HDR_LOWEST, SM_STRESS_HDR_HIGHEST,
			SM_STRESS_HDR_SIGFIGS) < 0 ||
	    sm_hdr_init(&o->st[0], SM_STRESS_HDR_LOWEST, SM_STRESS_HDR_HIGHEST,
			SM_STRESS_HDR_SIGFIGS) < 0 ||
	    sm_hdr_init(&o->st[1], SM_STRESS_HDR_LOWEST, SM_STRESS_HDR_HIGHEST,
			SM_STRESS_HDR_SIGFIGS) < 0 ||
	    sm_hdr_init(&o->rt_total, SM_STRESS_HDR_LOWEST, SM_STRESS_HDR_HIGHEST,
			SM_STRESS_HDR_SIGFIGS) < 0 ||
	    sm_hdr_init(&o->st_total, SM_STRESS_HDR_LOWEST, SM_STRESS_HDR_HIGHEST,
			SM_STRESS_HDR_SIGFIGS) < 0)
		return -ENOMEM;
	return 0;
}

void
sm_stress_stats_fini(struct sm_stress_op_stats *o)
{
	sm_hdr_fini(&o->rt[0]);
	sm_hdr_fini(&o->rt[1]);
	sm_hdr_fini(&o->st[0]);
	sm_hdr_fini(&o->st[1]);
	sm_hdr_fini(&o->rt_total);
	sm_hdr_fini(&o->st_total);
}

static void
stats_reset(struct sm_stress_op_stats *o)
{
	o->ops = o->partitions = o->rows = o->errors = 0;
	sm_hdr_reset(&o->rt[0]);
	sm_hdr_reset(&o->rt[1]);
	sm_hdr_reset(&o->st[0]);
	sm_hdr_reset(&o->st[1]);
	sm_hdr_reset(&o->rt_total);
	sm_hdr_reset(&o->st_total);
}

/* ---- workers and pacing (every shard) ---- */

static enum sm_stress_op
pick_op(struct sm_stress_shard *sh)
{
	double x;
	unsigned i;

	if (sx->nops == 1)
		return sx->ops[0];
	x = (double)(sm_rand_next(&sh->rng) >> 11) / 9007199254740992.0 * sx->cum[sx->nops - 1];
	for (i = 0; i + 1 < sx->nops && x >= sx->cum[i]; i++)
		;
	return sx->ops[i];
}

static void
worker_send(struct sm_stress_worker *w)
{
	w->start_ns = sm_now_ns();
	sx->proto->send(w);
}

/*
 * A read found no row: the keys it draws were never written (cassandra-
 * stress's usual first step is `write` over the same population). Say so,
 * and the write that fills the range.
 */
static void
missing_text(char *buf, size_t len, const struct sm_stress_worker *w)
{
	const struct sm_stress_dist *d = &sx->s.pop.dist;
	const char *write = w->op == SM_STRESS_OP_COUNTER_READ ? "counter_write" : "write";
	const char *kind = d->kind == SM_STRESS_DIST_SEQ	? "seq="
			   : d->kind == SM_STRESS_DIST_UNIFORM	? "dist=UNIFORM("
			   : d->kind == SM_STRESS_DIST_GAUSSIAN ? "dist=GAUSSIAN("
								: "dist=FIXED(";

	snprintf(buf, len,
		 "read validation failed on %s: no row for key %" PRIu64 " after %u tries: the "
		 "keys this read draws (-pop %s%" PRIu64 "..%" PRIu64 "%s) were never written: "
		 "write them first, with the same -pop: shardmark stress %s n=%" PRIu64
		 " -pop seq=%" PRIu64 "..%" PRIu64 " (and the same -node, -port, -mode), or add "
		 "-errors ignore to go on",
		 sm_stress_op_name(w->op), w->key_index, w->tries + 1, kind, d->min, d->max,
		 d->kind == SM_STRESS_DIST_SEQ ? "" : ")", write, d->max - d->min + 1, d->min,
		 d->max);
}

void
sm_stress_worker_failed(struct sm_stress_worker *w, int32_t err_code)
{
	struct sm_stress_shard *sh = w->sh;
	struct sm_stress_op_stats *o = &sh->st[w->op];

	if (w->tries < sx->s.errors.retries && !sh->stopping) {
		/* The clock keeps running from the first try, as in cassandra-stress. */
		w->tries++;
		sx->proto->send(w);
		return;
	}
	if (sh->recording) {
		o->errors++;
		count_error(sh, err_code);
		if (err_code == SM_STRESS_VALIDATION_ERROR ||
		    err_code == SM_STRESS_VALIDATION_MISSING)
			sh->validation_failures++;
	}
	if (!sx->s.errors.ignore && !sh->failed_run) {
		char name[96];

		sh->failed_run = true;
		if (err_code == SM_STRESS_VALIDATION_MISSING)
			missing_text(sh->fail_text, sizeof(sh->fail_text), w);
		else
			snprintf(sh->fail_text, sizeof(sh->fail_text),
				 "%s on %s after %u tries (add -errors ignore to go on)",
				 sm_stress_error_name(err_code, name, sizeof(name)),
				 sm_stress_op_name(w->op), w->tries + 1);
	}
	sm_stress_worker_idle(w);
}

void
sm_stress_worker_park(struct sm_stress_worker *w)
{
	struct sm_stress_shard *sh = w->sh;

	/* off the idle list already (the pump took it); not started after all */
	w->busy = false;
	sh->busy--;
	sh->started--;
	if (sh->busy == 0 && sh->idle == NULL)
		sh->stopping = true; /* every worker parked: the pump sets done */
}

/*
 * -pop read-lookback=DIST: a write records the highest seed written; a
 * read takes that seed less a draw of DIST (SettingsPopulation's
 * read-lookback: reads of recently written partitions).
 */
static void
lookback(struct sm_stress_shard *sh, struct sm_stress_worker *w)
{
	bool write = w->op == SM_STRESS_OP_WRITE || w->op == SM_STRESS_OP_COUNTER_WRITE ||
		     (w->op >= SM_STRESS_OP_USER0 && sx->s.user_op[w->op - SM_STRESS_OP_USER0] < 0);
	struct sm_stress_cursor c = { .dist = sx->s.pop.read_lookback };
	uint64_t back = 0;

	if (write) {
		if (w->key_index > sh->last_written)
			sh->last_written = w->key_index;
		return;
	}
	sm_stress_cursor_next(&c, &sh->rng, &back);
	w->key_index = sh->last_written > sx->s.pop.dist.min + back ? sh->last_written - back
								      : sx->s.pop.dist.min;
}

/* Start as many operations as the workers, the quota and the schedule allow. */
static void
pump(void *arg)
{
	struct sm_stress_shard *sh = arg;
	uint64_t now = sm_now_ns(), started;

	sh->pump_queued = false;
	started = sh->started;
	while (sh->idle != NULL && !sh->stopping && !sh->failed_run) {
		struct sm_stress_worker *w = sh->idle;
		uint64_t due;

		if (sh->quota != 0 && sh->started >= sh->quota)
			break;
		due = sm_stress_pace_next_due(&sh->pace, now);
		if (due > now) {
			if (due - now > SPIN_NS) {
				sm_timer_arm(&sh->pump_timer, (due - now) / 1000000);
			} else {
				/* poll until it is due: idle, not work */
				if (sh->started == started)
					sm_shard_note_idle();
				sm_stress_schedule_pump(sh);
			}
			return;
		}
		sm_stress_pace_next(&sh->pace);
		if (!sm_stress_cursor_next(&sh->cursor, &sh->rng, &w->key_index)) {
			sh->quota = sh->started; /* -pop no-wrap: this shard's keys are used up */
			break;
		}
		sh->idle = w->next_idle;
		w->busy = true;
		w->tries = 0;
		w->due_ns = due;
		w->op = pick_op(sh);
		w->nparts = 0;
		if (sx->s.pop.lookback)
			lookback(sh, w);
		if (sx->s.wl != NULL)
			sx->s.wl->pick(sh, w);
		sm_stress_key(w->key_index, w->key);
		sh->busy++;
		sh->started++;
		worker_send(w);
	}
	if (sh->busy == 0 &&
	    (sh->stopping || sh->failed_run || (sh->quota != 0 && sh->started >= sh->quota)))
		SM_WRITE_ONCE(sh->done, true);
}

static void
pump_timer_fired(void *arg)
{
	pump(arg);
}

/* ---- phases on each shard (run by messages from shard 0) ---- */

void
sm_stress_shard_start_phase(void *arg)
{
	struct sm_stress_shard *sh = &sx->sh[sm_shard_id()];
	enum sm_stress_phase ph = (enum sm_stress_phase)(uintptr_t)arg;
	uint64_t total, workers = sx->s.rate.threads, i;
	unsigned k;

	if (ph == SM_STRESS_PH_DRAIN) {
		/*
		 * After a failed warm-up: start nothing more, let what is in
		 * flight end, keep the failure and its text. (Falling through
		 * started a measured phase's n= operations again, whose own
		 * errors, connections closing at the end among them, replaced
		 * the warm-up's message.)
		 */
		sm_stress_shard_stop(NULL);
		return;
	}
	sh->stopping = false;
	sh->failed_run = false;
	SM_WRITE_ONCE(sh->done, false);
	sh->started = sh->completed = 0;
	sh->phase_gen++;
	memset(sh->trq_next, 0, sizeof(sh->trq_next));
	if (ph == SM_STRESS_PH_WARMUP) {
		total = sx->s.warmup_ops * sx->nops;
		workers = sx->s.warmup_threads; /* min(100, threads or threads<=) */
		sh->recording = false;
	} else if (ph == SM_STRESS_PH_SETTLE) {
		total = 0; /* until shard 0 stops it */
		sh->recording = false;
	} else {
		total = sx->s.n_ops;
		sh->recording = true;
		for (k = 0; k < SM_STRESS_NR_OPS; k++)
			stats_reset(&sh->st[k]);
		memset(sh->errs, 0, sizeof(sh->errs));
		sh->misrouted = sh->routed = sh->validation_failures = 0;
		sh->by_tablets = sh->by_ring = sh->tablet_payloads = 0;
		memset(sh->lwt_applied, 0, sizeof(sh->lwt_applied));
		memset(sh->lwt_not_applied, 0, sizeof(sh->lwt_not_applied));
		sh->active = 0;
		sh->cpu0 = thread_cpu_s();
		reactor_time(&sh->busy0, &sh->idle0);
		sm_sw_stats_read(sm_shard_stats(sm_shard_id()), &sh->rx0);
	}
	sh->quota = total / sx->nshards + (sh->id < total % sx->nshards ? 1 : 0);
	if (total != 0 && sh->quota == 0)
		sh->stopping = true; /* fewer operations than shards: none for this one */
	sm_stress_cursor_init(&sh->cursor, &sx->s.pop.dist, sx->s.pop.wrap, sh->id, sx->nshards);
	sm_stress_pace_init(&sh->pace, (double)sx->s.rate.ops_per_s, sx->nshards, sm_now_ns());
	/* This shard's share of the workers (cassandra-stress's threads). */
	sh->idle = NULL;
	workers = workers / sx->nshards + (sh->id < workers % sx->nshards ? 1 : 0);
	for (i = 0; i < workers && i < sh->nworkers; i++) {
		sh->workers[i].next_idle = sh->idle;
		sh->idle = &sh->workers[i];
	}
	if (workers == 0 || sh->stopping) {
		SM_WRITE_ONCE(sh->done, true);
		return;
	}
	sm_stress_schedule_pump(sh);
}

void
sm_stress_shard_stop(void *arg)
{
	struct sm_stress_shard *sh = &sx->sh[sm_shard_id()];

	(void)arg;
	sh->stopping = true;
	sm_timer_cancel(&sh->pump_timer);
	if (sh->busy == 0)
		SM_WRITE_ONCE(sh->done, true);
}

/* Flip the interval histograms: shard 0 reads the other one afterwards. */
void
sm_stress_shard_flip(void *arg)
{
	struct sm_stress_shard *sh = &sx->sh[sm_shard_id()];
	unsigned k, next = sh->active ^ 1;

	(void)arg;
	for (k = 0; k < SM_STRESS_NR_OPS; k++) {
		sm_hdr_reset(&sh->st[k].rt[next]);
		sm_hdr_reset(&sh->st[k].st[next]);
	}
	sh->active = next;
	sh->cpu1 = thread_cpu_s();
	reactor_time(&sh->busy1, &sh->idle1);
	sm_sw_stats_read(sm_shard_stats(sm_shard_id()), &sh->rx1);
}

/* ---- connections (every shard) ---- */

void
sm_stress_conn_ready(struct sm_stress_conn *c)
{
	c->ready = true;
	SM_WRITE_ONCE(c->sh->nready, c->sh->nready + 1);
}

static int
conn_dial(struct sm_stress_conn *c, unsigned slot)
{
	int ret;

	c->prepared = 0;
	c->server_shard = UINT32_MAX;
	ret = sx->proto->connect(c, slot);
	if (ret < 0) {
		c->cql = NULL;
		c->http = NULL;
	}
	return ret;
}

static void
conn_redial(void *arg)
{
	struct sm_stress_conn *c = arg;
	struct sm_stress_shard *sh = c->sh;
	unsigned slot = (unsigned)(c - sh->conns) % sh->conns_per_host;
	int ret;

	if (sh->stopping)
		return;
	sx->proto->close(c);
	c->failed = false;
	ret = conn_dial(c, slot);
	if (ret < 0)
		sm_stress_conn_failed(c, ret, strerror(-ret));
}

/*
 * A connection that fails while it is being set up (connect, STARTUP, USE,
 * PREPARE) is dialled again after a pause, as the drivers' reconnection
 * policies do, a few times before the run gives up: one refused handshake
 * on a busy node should not end a run of hours. Each try is said on stderr.
 * Refused credentials and a stopping runtime are final.
 */
static bool
conn_setup_retry(struct sm_stress_conn *c, int err, const char *why)
{
	if (c->ready || err == -EACCES || c->sh->stopping ||
	    c->setup_tries >= SM_STRESS_CONN_SETUP_TRIES - 1)
		return false;
	c->setup_tries++;
	fprintf(stderr,
		"shardmark stress: a connection to %s:%u failed during its setup: %s; "
		"dialling again in %u ms (try %u of %u)\n",
		sx->addrs[c->host], sx->proto->conn_port(), why, SM_STRESS_CONN_REDIAL_MS,
		c->setup_tries + 1, SM_STRESS_CONN_SETUP_TRIES);
	sm_timer_init(&c->redial, conn_redial, c);
	return sm_timer_arm(&c->redial, SM_STRESS_CONN_REDIAL_MS) == 0;
}

void
sm_stress_conn_failed(struct sm_stress_conn *c, int err, const char *why)
{
	struct sm_stress_shard *sh = c->sh;

	if (c->failed)
		return;
	c->failed = true;
	if (err == -ESHUTDOWN) {
		/* The runtime is stopping: not a connection failure. */
		c->ready = false;
		return;
	}
	if (conn_setup_retry(c, err, why))
		return;
	c->ready = false;
	if (sh->first_err == 0) {
		sh->first_err = err;
		snprintf(sh->first_err_text, sizeof(sh->first_err_text), "%.64s:%u: %.400s",
			 sx->addrs[c->host], sx->proto->conn_port(), why);
	}
	SM_WRITE_ONCE(sh->nfailed, sh->nfailed + 1);
}

void
sm_stress_shard_connect(void *arg)
{
	struct sm_stress_shard *sh = &sx->sh[sm_shard_id()];
	unsigned h, k;
	int ret;

	(void)arg;
	for (h = 0; h < sx->nhosts; h++) {
		for (k = 0; k < sh->conns_per_host; k++) {
			struct sm_stress_conn *c = &sh->conns[h * sh->conns_per_host + k];

			c->sh = sh;
			c->host = h;
			ret = conn_dial(c, k);
			if (ret < 0)
				sm_stress_conn_failed(c, ret, strerror(-ret));
		}
	}
}

void
sm_stress_shard_close(void *arg)
{
	struct sm_stress_shard *sh = &sx->sh[sm_shard_id()];
	unsigned i;

	(void)arg;
	sh->stopping = true;
	sm_timer_cancel(&sh->pump_timer);
	for (i = 0; sh->conns != NULL && i < sh->conns_per_host * sx->nhosts; i++) {
		if (sm_timer_armed(&sh->conns[i].redial))
			sm_timer_cancel(&sh->conns[i].redial);
		sx->proto->close(&sh->conns[i]);
		sh->conns[i].ready = false;
	}
}

/* ---- shard setup ---- */

int
sm_stress_shard_init(unsigned shard, void *arg)
{
	struct sm_stress_run *c = arg;
	struct sm_stress_shard *sh = &c->sh[shard];
	size_t buf = 0;
	unsigned i, k;
	int ret;

	ret = sm_net_shard_init(&c->net);
	if (ret < 0)
		return ret;
	sh->id = shard;
	sm_rand_seed(&sh->rng, 0x5eed0000ull + shard);
	sh->ring_rng = 0x9e3779b97f4a7c15ull * (shard + 1);
	sm_json_doc_init(&sh->json_doc);
	sm_tablets_init(&sh->tablets, SM_STRESS_MAX_TABLETS);
	for (k = 0; k < SM_STRESS_NR_OPS; k++)
		sh->op_table[k] = -1;
	sm_timer_init(&sh->pump_timer, pump_timer_fired, sh);
	sm_task_init(&sh->pump_task, pump, sh);
	for (k = 0; k < SM_STRESS_NR_OPS; k++)
		if (sm_stress_stats_init(&sh->st[k]) < 0)
			return -ENOMEM;
	/* a thread ramp's last step has the most */
	sh->nworkers = SM_MAX(c->s.rate.threads, c->s.rate.search.max_threads) / c->nshards + 1;
	sh->workers = calloc(sh->nworkers, sizeof(*sh->workers));
	if (sh->workers == NULL)
		return -ENOMEM;
	for (k = 0; k < c->ncols; k++)
		buf += SM_MAX((uint64_t)8, c->s.col.size.max);
	for (i = 0; i < sh->nworkers; i++) {
		struct sm_stress_worker *w = &sh->workers[i];

		w->sh = sh;
		w->idx = i;
		w->buf = malloc(buf + 8);
		w->json_cap = 512 + c->ncols * (32 + (size_t)c->s.col.size.max * 4 / 3 + 4);
		w->json = malloc(w->json_cap);
		if (w->buf == NULL || w->json == NULL)
			return -ENOMEM;
		if (c->s.profile != NULL && sm_stress_user_worker_init(w) < 0)
			return -ENOMEM;
		if (c->s.wl != NULL && c->s.wl->worker_init(w) < 0)
			return -ENOMEM;
	}
	if (shard != 0)
		return 0;
	return sm_stress_control_start(c);
}

void
sm_stress_shard_fini(unsigned shard, void *arg)
{
	struct sm_stress_run *c = arg;
	struct sm_stress_shard *sh = &c->sh[shard];
	unsigned i;

	sm_stress_shard_close(NULL);
	if (shard == 0)
		c->proto->ctl_close();
	sm_net_shard_fini();
	for (i = 0; sh->workers != NULL && i < sh->nworkers; i++) {
		free(sh->workers[i].buf);
		free(sh->workers[i].json);
		if (c->s.wl != NULL)
			c->s.wl->worker_fini(&sh->workers[i]);
		else
			sm_stress_user_worker_fini(&sh->workers[i]);
	}
	free(sh->workers);
	sh->workers = NULL;
	sh->tablets_held = sh->tablets.total;
	sm_tablets_free(&sh->tablets);
	sm_json_doc_release(&sh->json_doc);
}
