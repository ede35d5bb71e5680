/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perf-simple-query's harness (sm_psq.h): phases on every shard, the
 * control steps on shard 0, the per-op figures and the written results.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#if __has_include(<valgrind/callgrind.h>)
/* Instruction counts without a PMU: tests/bench/insns-per-op.sh runs this
 * under callgrind with collection off, and the measured iterations turn it on. */
#include <valgrind/callgrind.h>
#define MEASURE_ON() CALLGRIND_TOGGLE_COLLECT
#define MEASURE_OFF() CALLGRIND_TOGGLE_COLLECT
#else
#define MEASURE_ON() ((void)0)
#define MEASURE_OFF() ((void)0)
#endif

#include "sm_psq.h"

/* The run: reactor callbacks and timers take no context of ours. */
static struct sm_psq *psq;

static const char *const mode_names[] = {
	[SM_PSQ_READ] = "read",		  [SM_PSQ_WRITE] = "write",
	[SM_PSQ_DELETE] = "delete",	  [SM_PSQ_WRITE_RMW] = "write_rmw",
	[SM_PSQ_WRITE_GSI] = "write_gsi", [SM_PSQ_WRITE_TTL] = "write_ttl",
	[SM_PSQ_WRITE_STREAM] = "write_stream",
	[SM_PSQ_WRITE_INDEX] = "write_index", [SM_PSQ_WRITE_VIEW] = "write_view",
};

const char *
sm_psq_mode_name(enum sm_psq_mode mode)
{
	return (unsigned)mode < SM_ARRAY_SIZE(mode_names) ? mode_names[mode] : "write";
}

int
sm_psq_mode_parse(const char *name, enum sm_psq_mode *mode)
{
	unsigned i;

	for (i = 0; i < SM_ARRAY_SIZE(mode_names); i++)
		if (strcmp(name, mode_names[i]) == 0) {
			*mode = (enum sm_psq_mode)i;
			return 0;
		}
	return -EINVAL;
}

const char *
sm_psq_value_hex(unsigned col)
{
	/* Five fixed 34-byte values, as ScyllaDB's C0..C4 (their bytes do not matter). */
	static char hex[5][2 * SM_PSQ_VALUE_LEN + 3];
	unsigned i;

	if (hex[col][0] == '\0') {
		uint64_t x = 0x9e3779b97f4a7c15ull * (col + 1);

		hex[col][0] = '0';
		hex[col][1] = 'x';
		for (i = 0; i < SM_PSQ_VALUE_LEN; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			snprintf(hex[col] + 2 + 2 * i, 3, "%02x", (unsigned)(x & 0xff));
		}
	}
	return hex[col];
}

/* ---- phases on each shard ---- */

struct phase {
	bool populate;
	uint64_t target;
};

/* Runs on every shard (sm_submit_to_all): its workers start the phase. */
static void
phase_start(void *arg)
{
	const struct phase *ph = arg;
	struct sm_psq_shard *sh = &psq->shards[sm_shard_id()];
	unsigned i;

	sh->running = true;
	sh->target = ph->target;
	sh->issued = 0;
	sh->next_key = 0;
	for (i = 0; i < sh->nworkers; i++) {
		sh->workers[i].populating = ph->populate;
		sm_task_schedule(&sh->workers[i].task);
	}
}

/* Runs on every shard: each worker goes idle after its request in flight. */
static void
phase_stop(void *arg)
{
	(void)arg;
	psq->shards[sm_shard_id()].running = false;
}

static bool
all_idle(void)
{
	unsigned i;

	for (i = 0; i < psq->nshards; i++)
		if (__atomic_load_n(&psq->shards[i].active, __ATOMIC_ACQUIRE) != 0)
			return false;
	return true;
}

/*
 * Start a phase on every shard. Shard 0 marks every worker busy before the
 * messages leave, so that it cannot see a shard idle that has not started.
 */
static void
start_phase(struct phase *ph)
{
	unsigned i;

	for (i = 0; i < psq->nshards; i++)
		__atomic_store_n(&psq->shards[i].active, psq->shards[i].nworkers, __ATOMIC_RELEASE);
	sm_submit_to_all(phase_start, ph, NULL);
}

/* ---- measurement on shard 0 ---- */

void
sm_psq_csv_header(FILE *f)
{
	fputs("interval,seconds,type,ops_per_s,allocs_per_op,logallocs_per_op,tasks_per_op,"
	      "insns_per_op,cycles_per_op,errors\n",
	      f);
}

void
sm_psq_csv_row(FILE *f, enum sm_psq_mode mode, unsigned interval, double seconds,
	       const struct sm_bench_result *r)
{
	char insns[32] = "", cycles[32] = "";

	/* n/a counters are left empty */
	if (r->insns_ok)
		snprintf(insns, sizeof(insns), "%.3f", r->insns_per_op);
	if (r->cycles_ok)
		snprintf(cycles, sizeof(cycles), "%.3f", r->cycles_per_op);
	fprintf(f, "%u,%.3f,%s,%.3f,%.6f,%.6f,%.6f,%s,%s,%" PRIu64 "\n", interval, seconds,
		sm_psq_mode_name(mode), r->tps, r->allocs_per_op, r->logallocs_per_op,
		r->tasks_per_op, insns, cycles, r->errors);
	fflush(f);
}

static void
snap_all(struct sm_shard_snapshot *s, uint64_t *ops, uint64_t *errs)
{
	unsigned i;

	for (i = 0; i < psq->nshards; i++) {
		sm_shard_snapshot(i, &s[i]);
		ops[i] = SM_READ_ONCE(psq->shards[i].ops);
		if (errs)
			errs[i] = SM_READ_ONCE(psq->shards[i].errors);
	}
}

/* One iteration's figures: every shard's deltas, summed, per op. */
static void
iteration_result(uint64_t wall_ns, struct sm_bench_result *r)
{
	uint64_t ops = 0, allocs = 0, tasks = 0, insns = 0, cycles = 0, errs = 0, o;
	bool insns_ok = true, cycles_ok = true;
	unsigned i;
	uint64_t errs_now;

	for (i = 0; i < psq->nshards; i++) {
		o = SM_READ_ONCE(psq->shards[i].ops) - psq->ops0[i];
		errs_now = SM_READ_ONCE(psq->shards[i].errors);
		ops += o;
		errs += errs_now - psq->err0[i];
		allocs += psq->s1[i].sw.allocs - psq->s0[i].sw.allocs;
		tasks += psq->s1[i].sw.tasks_run - psq->s0[i].sw.tasks_run;
		insns_ok = insns_ok && psq->s0[i].perf_ok[SM_PERF_INSTRUCTIONS] &&
			   psq->s1[i].perf_ok[SM_PERF_INSTRUCTIONS];
		cycles_ok = cycles_ok && psq->s0[i].perf_ok[SM_PERF_CYCLES] &&
			    psq->s1[i].perf_ok[SM_PERF_CYCLES];
		insns += psq->s1[i].perf[SM_PERF_INSTRUCTIONS] -
			 psq->s0[i].perf[SM_PERF_INSTRUCTIONS];
		cycles += psq->s1[i].perf[SM_PERF_CYCLES] - psq->s0[i].perf[SM_PERF_CYCLES];
	}
	memset(r, 0, sizeof(*r));
	r->tps = wall_ns ? (double)ops * 1e9 / (double)wall_ns : 0;
	r->allocs_per_op = sm_psq_per_op(allocs, ops);
	r->logallocs_per_op = 0; /* no log-structured allocator here: truly none */
	r->tasks_per_op = sm_psq_per_op(tasks, ops);
	r->insns_ok = insns_ok;
	r->cycles_ok = cycles_ok;
	r->insns_per_op = sm_psq_per_op(insns, ops);
	r->cycles_per_op = sm_psq_per_op(cycles, ops);
	r->errors = errs;
}

int
sm_psq_write_json(const struct sm_psq *p, const char *path, const char *cpu, char *err,
		  size_t errlen)
{
	const struct sm_psq_params *prm = &p->prm;
	struct sm_bench_stats st;
	const struct sm_bench_result *med;
	double v[SM_PSQ_MAX_ITERATIONS];
	unsigned i, n = p->iter, best = 0;
	struct utsname un;
	char date[32];
	time_t now = time(NULL);
	FILE *f;

	f = fopen(path, "w");
	if (f == NULL) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return -EIO;
	}
	for (i = 0; i < n; i++)
		v[i] = p->results[i].tps;
	sm_bench_stats(v, n, &st);
	/* median_by_throughput: the iteration whose tps is the median */
	for (i = 0; i < n; i++)
		if (p->results[i].tps == st.median)
			best = i;
	med = &p->results[best];
	uname(&un);
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S", gmtime(&now));
	fprintf(f, "{\n  \"parameters\": {\n");
	fprintf(f,
		"    \"concurrency\": %u,\n    \"partitions\": %u,\n    \"cpus\": %u,\n"
		"    \"duration\": %u,\n    \"concurrency,partitions,cpus,duration\": "
		"\"%u,%u,%u,%u\"",
		prm->concurrency, prm->partitions, p->nshards, prm->duration, prm->concurrency,
		prm->partitions, p->nshards, prm->duration);
	if (prm->collection)
		fprintf(f, ",\n    \"collection\": %u", prm->collection);
	fprintf(f, "\n  },\n  \"stats\": {\n");
	fprintf(f,
		"    \"allocs_per_op\": %.6f,\n    \"logallocs_per_op\": %.6f,\n"
		"    \"tasks_per_op\": %.6f,\n",
		med->allocs_per_op, med->logallocs_per_op, med->tasks_per_op);
	if (med->insns_ok)
		fprintf(f, "    \"instructions_per_op\": %.6f,\n", med->insns_per_op);
	else
		fprintf(f, "    \"instructions_per_op\": null,\n");
	if (med->cycles_ok)
		fprintf(f, "    \"cpu_cycles_per_op\": %.6f,\n", med->cycles_per_op);
	else
		fprintf(f, "    \"cpu_cycles_per_op\": null,\n");
	fprintf(f,
		"    \"mad tps\": %.6f,\n    \"max tps\": %.6f,\n    \"median tps\": %.6f,\n"
		"    \"min tps\": %.6f\n  },\n",
		st.mad, st.max, st.median, st.min);
	fprintf(f,
		"  \"test_properties\": {\n    \"type\": \"%s%s\",\n    \"frontend\": "
		"\"%s\"%s%s%s\n  },\n",
		sm_psq_mode_name(prm->mode), prm->counters ? "_counters" : "", p->wl->name,
		prm->write_isolation ? ",\n    \"write_isolation\": \"" : "",
		prm->write_isolation ? prm->write_isolation : "", prm->write_isolation ? "\"" : "");
	fprintf(f,
		"  \"versions\": {\n    \"shardmark\": {\n      \"version\": \"%s\",\n"
		"      \"run_date_time\": \"%s\"\n    }\n  },\n",
		SM_VERSION, date);
	fprintf(f, "  \"per_shard\": [\n");
	for (i = 0; i < p->nshards; i++) {
		const struct sm_shard_snapshot *a = &p->shard_first[i], *b = &p->shard_last[i];
		uint64_t ops = p->shard_ops[i];

		fprintf(f,
			"    {\"shard\": %u, \"ops\": %" PRIu64 ", \"allocs_per_op\": %.6f, "
			"\"tasks_per_op\": %.6f, \"hops_per_op\": %.6f, \"instructions_per_op\": ",
			i, ops, sm_psq_per_op(b->sw.allocs - a->sw.allocs, ops),
			sm_psq_per_op(b->sw.tasks_run - a->sw.tasks_run, ops),
			sm_psq_per_op(b->sw.hops - a->sw.hops, ops));
		if (a->perf_ok[SM_PERF_INSTRUCTIONS] && b->perf_ok[SM_PERF_INSTRUCTIONS])
			fprintf(f, "%.6f}",
				sm_psq_per_op(b->perf[SM_PERF_INSTRUCTIONS] -
						      a->perf[SM_PERF_INSTRUCTIONS],
					      ops));
		else
			fprintf(f, "null}");
		fprintf(f, "%s\n", i + 1 < p->nshards ? "," : "");
	}
	fprintf(f,
		"  ],\n  \"machine\": {\n    \"cpu\": \"%s\",\n    \"kernel\": \"%s %s\",\n"
		"    \"shards\": %u,\n    \"network_stack\": \"none (in-process)\"\n  }\n}\n",
		cpu, un.sysname, un.release, p->nshards);
	if (fclose(f) != 0) {
		snprintf(err, errlen, "writing %s: %s", path, strerror(errno));
		return -EIO;
	}
	return 0;
}

static void
stop_runtime(void *arg)
{
	(void)arg;
	sm_runtime_stop();
}

/*
 * End the run: every shard's workers stop, then the runtime. Stopping it
 * only once every shard has run phase_stop lets the submission's state
 * come home and be freed (stopped at once, LeakSanitizer saw it lost).
 */
static void
finish(int result)
{
	psq->result = result;
	if (sm_submit_to_all(phase_stop, NULL, stop_runtime) == -ENOMEM)
		sm_runtime_stop();
}

enum {
	S_SETUP,	 /* the workload's schema and statements */
	S_POPULATE,	 /* start the population */
	S_POPULATED,	 /* population idle */
	S_ITER_START,	 /* start an iteration */
	S_ITER_STOPPING, /* the second is over: stop the workers */
	S_ITER_END,	 /* workers idle: one result line */
};

static void
control_next(int state)
{
	psq->step = state;
	sm_task_schedule(&psq->control);
}

/* Poll (every millisecond) until every shard's workers are idle. */
static void
wait_idle(void *arg)
{
	int next = (int)(intptr_t)arg;

	if (!all_idle()) {
		sm_timer_arm(&psq->idle_timer, 1);
		return;
	}
	control_next(next);
}

static void
arm_idle(int next)
{
	psq->idle_timer.arg = (void *)(intptr_t)next;
	sm_timer_arm(&psq->idle_timer, 1);
}

static void
second_over(void *arg)
{
	(void)arg;
	control_next(S_ITER_STOPPING);
}

void
sm_psq_setup_done(struct sm_psq *p)
{
	(void)p;
	control_next(S_POPULATE);
}

void
sm_psq_setup_fail(struct sm_psq *p, const char *what, const char *msg)
{
	snprintf(p->setup_err, sizeof(p->setup_err), "%s: %.400s", what, msg);
	finish(-EIO);
}

/* An iteration is over: its line, its CSV row; the run ends or goes on. */
static void
iteration_end(void)
{
	struct sm_bench_result *r;
	unsigned s;

	MEASURE_OFF();
	snap_all(psq->s1, psq->shard_ops, NULL);
	r = &psq->results[psq->iter];
	iteration_result(sm_now_ns() - psq->t0, r);
	sm_bench_print_result(psq->prm.out, r);
	fflush(psq->prm.out);
	if (psq->prm.csv != NULL)
		sm_psq_csv_row(psq->prm.csv, psq->prm.mode, psq->iter + 1,
			       (double)(sm_now_ns() - psq->measure_t0) / 1e9, r);
	memcpy(psq->shard_last, psq->s1, sizeof(*psq->s1) * psq->nshards);
	for (s = 0; s < psq->nshards; s++)
		psq->shard_ops[s] -= psq->ops_first[s];
	psq->iter++;
	if (r->errors > 0 && psq->prm.stop_on_error) {
		for (s = 0; s < psq->nshards; s++)
			if (psq->shards[s].errmsg[0])
				snprintf(psq->setup_err, sizeof(psq->setup_err),
					 "a request failed (--stop-on-error): %s",
					 psq->shards[s].errmsg);
		finish(-EIO);
		return;
	}
	if (psq->iter >= (psq->prm.ops_per_shard ? 1u : psq->prm.duration)) {
		finish(0);
		return;
	}
	control_next(S_ITER_START);
}

/* Shard 0's task: one step of the run each time it is scheduled. */
static void
control_step(void *arg)
{
	static struct phase ph;
	unsigned s;

	(void)arg;
	switch (psq->step) {
	case S_SETUP:
		psq->wl->setup(psq);
		return;
	case S_POPULATE:
		if (psq->prm.mode == SM_PSQ_WRITE || psq->prm.mode == SM_PSQ_WRITE_INDEX ||
		    psq->prm.mode == SM_PSQ_WRITE_VIEW) {
			control_next(S_ITER_START);
			return;
		}
		fprintf(psq->prm.out, "Creating %u partitions...\n", psq->prm.partitions);
		fflush(psq->prm.out);
		ph.populate = true;
		ph.target = 0;
		start_phase(&ph);
		arm_idle(S_POPULATED);
		return;
	case S_POPULATED:
		for (s = 0; s < psq->nshards; s++) {
			if (psq->shards[s].errors > 0) {
				snprintf(psq->setup_err, sizeof(psq->setup_err), "populating: %s",
					 psq->shards[s].errmsg);
				finish(-EIO);
				return;
			}
		}
		control_next(S_ITER_START);
		return;
	case S_ITER_START:
		snap_all(psq->s0, psq->ops0, psq->err0);
		if (psq->iter == 0) {
			memcpy(psq->shard_first, psq->s0, sizeof(*psq->s0) * psq->nshards);
			memcpy(psq->ops_first, psq->ops0, sizeof(*psq->ops0) * psq->nshards);
		}
		psq->t0 = sm_now_ns();
		if (psq->iter == 0)
			psq->measure_t0 = psq->t0;
		MEASURE_ON();
		ph.populate = false;
		ph.target = psq->prm.ops_per_shard;
		start_phase(&ph);
		if (psq->prm.ops_per_shard == 0)
			sm_timer_arm(&psq->sec_timer, 1000);
		else
			arm_idle(S_ITER_END);
		return;
	case S_ITER_STOPPING:
		sm_submit_to_all(phase_stop, NULL, NULL);
		arm_idle(S_ITER_END);
		return;
	case S_ITER_END:
		iteration_end();
		return;
	}
}

/* ---- shards ---- */

int
sm_psq_shard_init(struct sm_psq *p, unsigned shard)
{
	struct sm_psq_shard *sh = &p->shards[shard];
	uint64_t seq;
	unsigned i, n = 0;
	int ret;

	sh->p = p;
	sh->rng = (p->prm.seed + shard) * 0x9e3779b97f4a7c15ull | 1;
	/* The keys this shard owns: it draws from them (shard_aware) and populates them. */
	sh->keys = sm_calloc(p->prm.partitions + 1, sizeof(*sh->keys));
	sh->workers = sm_calloc(p->prm.concurrency, sizeof(*sh->workers));
	if (sh->keys == NULL || sh->workers == NULL)
		return -ENOMEM;
	for (seq = 0; seq < p->prm.partitions; seq++)
		if (p->wl->owner_of(p, seq) == shard)
			sh->keys[n++] = seq;
	sh->nkeys = n;
	sh->nworkers = p->prm.concurrency;
	for (i = 0; i < sh->nworkers; i++) {
		sh->workers[i].sh = sh;
		sh->workers[i].idx = i;
		sm_task_init(&sh->workers[i].task, p->wl->issue, &sh->workers[i]);
	}
	ret = p->wl->shard_init != NULL ? p->wl->shard_init(p, shard) : 0;
	if (ret < 0)
		return ret;
	if (shard == 0) {
		sm_task_init(&p->control, control_step, NULL);
		sm_timer_init(&p->idle_timer, wait_idle, NULL);
		sm_timer_init(&p->sec_timer, second_over, NULL);
		p->step = S_SETUP;
		sm_task_schedule(&p->control);
	}
	return 0;
}

void
sm_psq_shard_fini(struct sm_psq *p, unsigned shard)
{
	struct sm_psq_shard *sh = &p->shards[shard];

	if (shard == 0) {
		sm_timer_cancel(&p->idle_timer);
		sm_timer_cancel(&p->sec_timer);
	}
	if (p->wl->shard_fini != NULL)
		p->wl->shard_fini(p, shard);
	sm_free(sh->keys);
	sm_free(sh->workers);
}

int
sm_psq_init(struct sm_psq *p, const struct sm_psq_params *prm, const struct sm_psq_workload *wl,
	    void *wl_arg, unsigned n)
{
	memset(p, 0, sizeof(*p));
	psq = p;
	p->prm = *prm;
	p->wl = wl;
	p->wl_arg = wl_arg;
	p->result = -EIO;
	/* Before the shards start: the process heap, not a shard's. */
	p->nshards = n;
	p->shards = calloc(n, sizeof(*p->shards));
	p->s0 = calloc(n, sizeof(*p->s0));
	p->s1 = calloc(n, sizeof(*p->s1));
	p->shard_first = calloc(n, sizeof(*p->shard_first));
	p->shard_last = calloc(n, sizeof(*p->shard_last));
	p->ops0 = calloc(n, sizeof(uint64_t));
	p->err0 = calloc(n, sizeof(uint64_t));
	p->ops_first = calloc(n, sizeof(uint64_t));
	p->shard_ops = calloc(n, sizeof(uint64_t));
	return p->shards && p->s0 && p->s1 && p->shard_first && p->shard_last && p->ops0 &&
			       p->err0 && p->ops_first && p->shard_ops
		       ? 0
		       : -ENOMEM;
}

void
sm_psq_free(struct sm_psq *p)
{
	free(p->shards);
	free(p->s0);
	free(p->s1);
	free(p->shard_first);
	free(p->shard_last);
	free(p->ops0);
	free(p->err0);
	free(p->ops_first);
	free(p->shard_ops);
	memset(p, 0, sizeof(*p));
	if (psq == p)
		psq = NULL;
}
