/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reactor stall detection: the watchdog thread, the signal handler that
 * takes the stalled shard's backtrace, and the report. See stall_priv.h.
 */

#include <errno.h>
#include <execinfo.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sm_clock.h"
#include "sm_common.h"
#include "sm_stats.h"
#include "stall_priv.h"

/* A real-time signal: queued, never one a library or the user sends. */
#define SM_STALL_SIGNAL (SIGRTMIN + 3)

struct watch {
	uint64_t last_round;
	uint64_t since_ns; /* last_round was first seen then */
	bool signalled;	   /* for this round */
};

static struct {
	pthread_t thread;
	bool running;
	int stop;
	unsigned n;
	uint64_t threshold_ns;
	unsigned report_interval_ms;
	struct sm_stall_target *targets;
	struct watch *watch;
} wd;

/* The shard's record, for the handler: it runs on the shard's own thread. */
static __thread struct sm_stall *stall_self;

/*
 * On the stalled shard's thread, interrupting whatever it runs. backtrace()
 * is safe here once primed (its first call loads libgcc, sm_stall_start
 * does that); nothing else is called.
 */
static void
stall_signal(int sig, siginfo_t *si, void *uc)
{
	struct sm_stall *st = stall_self;

	(void)sig;
	(void)si;
	(void)uc;
	if (st == NULL || st->caught)
		return;
	st->caught_phase = st->phase;
	st->caught_fn = st->running != NULL ? *st->running : NULL;
	st->nframes = backtrace(st->frames, SM_STALL_FRAMES);
	st->caught = 1;
}

/* One check of every shard: signal those stuck in one round past the threshold. */
static void
watch_once(uint64_t now)
{
	unsigned i;

	for (i = 0; i < wd.n; i++) {
		struct sm_stall_target *t = &wd.targets[i];
		struct watch *w = &wd.watch[i];
		uint64_t round = SM_READ_ONCE(t->st->round);

		if (round != w->last_round || __atomic_load_n(t->sleeping, __ATOMIC_ACQUIRE)) {
			w->last_round = round;
			w->since_ns = now;
			w->signalled = false;
			continue;
		}
		if (!w->signalled && now - w->since_ns >= wd.threshold_ns) {
			w->signalled = true;
			pthread_kill(t->thread, SM_STALL_SIGNAL);
		}
	}
}

static void *
watchdog(void *arg)
{
	uint64_t period = wd.threshold_ns / 2;
	struct timespec ts;

	(void)arg;
	if (period < 1000000)
		period = 1000000;
	if (period > 100000000)
		period = 100000000;
	ts.tv_sec = (time_t)(period / 1000000000);
	ts.tv_nsec = (long)(period % 1000000000);
	while (!__atomic_load_n(&wd.stop, __ATOMIC_ACQUIRE)) {
		clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
		watch_once(sm_now_ns());
	}
	return NULL;
}

int
sm_stall_start(const struct sm_stall_target *targets, unsigned n, unsigned threshold_ms,
	       unsigned reports_per_minute)
{
	struct sigaction sa;
	void *prime[1];
	sigset_t all, old;
	unsigned i;
	int ret;

	if (wd.running || n == 0 || threshold_ms == 0)
		return -EINVAL;
	wd.targets = calloc(n, sizeof(*wd.targets));
	wd.watch = calloc(n, sizeof(*wd.watch));
	if (wd.targets == NULL || wd.watch == NULL) {
		ret = -ENOMEM;
		goto fail;
	}
	memcpy(wd.targets, targets, n * sizeof(*targets));
	wd.n = n;
	wd.threshold_ns = (uint64_t)threshold_ms * 1000000;
	wd.report_interval_ms = 60000 / (reports_per_minute ? reports_per_minute : 1);
	wd.stop = 0;
	for (i = 0; i < n; i++)
		wd.watch[i].since_ns = sm_now_ns();
	backtrace(prime, 1);

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = stall_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SM_STALL_SIGNAL, &sa, NULL) < 0) {
		ret = -errno;
		goto fail;
	}
	/* The watchdog takes no signals: they are the shards' and the signal thread's. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	ret = -pthread_create(&wd.thread, NULL, watchdog, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret < 0)
		goto fail;
	wd.running = true;
	return 0;
fail:
	free(wd.targets);
	free(wd.watch);
	wd.targets = NULL;
	wd.watch = NULL;
	return ret;
}

void
sm_stall_stop(void)
{
	if (!wd.running)
		return;
	__atomic_store_n(&wd.stop, 1, __ATOMIC_RELEASE);
	pthread_join(wd.thread, NULL);
	wd.running = false;
	free(wd.targets);
	free(wd.watch);
	wd.targets = NULL;
	wd.watch = NULL;
}

void
sm_stall_thread_init(struct sm_stall *st)
{
	stall_self = st;
}

/* "shardmark(+0x1a2b) shardmark(main+0x10) libc.so.6(+0x271ca)": module and offset, as
 * addr2line -e MODULE takes them. */
static void
format_frames(void *const *frames, int n, char *buf, size_t len)
{
	char **syms = backtrace_symbols(frames, n);
	size_t off = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < n && off + 1 < len; i++) {
		const char *s = syms != NULL ? syms[i] : "?";
		const char *base = strrchr(s, '/');
		const char *bracket = strstr(s, " [");
		int l = bracket != NULL ? (int)(bracket - s) : (int)strlen(s);

		if (base != NULL && base < s + l) {
			l -= (int)(base + 1 - s);
			s = base + 1;
		}
		if (syms == NULL)
			off += (size_t)snprintf(buf + off, len - off, "%s%p", i ? " " : "", frames[i]);
		else
			off += (size_t)snprintf(buf + off, len - off, "%s%.*s", i ? " " : "", l, s);
	}
	free(syms);
}

void
sm_stall_report(struct sm_stall *st, unsigned shard, uint64_t stalled_ns)
{
	char frames[2048], where[160], held[64] = "";
	uint64_t suppressed = 0;

	SM_STAT_INC(stalls);
	if (sm_ratelimit_ok(&st->rl, wd.report_interval_ms, &suppressed)) {
		if (st->caught_fn != NULL) {
			void *fn = (void *)st->caught_fn;
			char name[128];

			format_frames(&fn, 1, name, sizeof(name));
			snprintf(where, sizeof(where), "in task %s", name);
		} else {
			snprintf(where, sizeof(where), "in %s",
				 st->caught_phase != NULL ? st->caught_phase : "the reactor loop");
		}
		/* The frames below the handler: the stalling code's own stack. */
		format_frames(st->frames + (st->nframes > 2 ? 2 : 0),
			      st->nframes > 2 ? st->nframes - 2 : st->nframes, frames, sizeof(frames));
		if (suppressed > 0)
			snprintf(held, sizeof(held), "; %" PRIu64 " more not reported", suppressed);
		SM_WARN("Reactor stalled for %" PRIu64 " ms on shard %u, %s "
			"(blocked_reactor_notify_ms %" PRIu64 "%s). Backtrace: %s",
			stalled_ns / 1000000, shard, where, wd.threshold_ns / 1000000, held, frames);
	}
	st->caught = 0;
}
