/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shards, the reactor loop and cross-shard messaging.
 *
 * One pthread per shard, the caller's thread being shard 0. All per-shard
 * state lives in struct sm_shard, reached through a thread-local pointer, so
 * nothing on a request path takes a lock. Shards talk only through the N x N
 * matrix of SPSC rings (rings[from * n + to]).
 */

#include <errno.h>
#include <numa.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "sm_clock.h"
#include "sm_common.h"
#include "sm_log.h"
#include "sm_mem.h"
#include "sm_shard.h"
#include "sm_xring.h"
#include "stall_priv.h"

#define SM_MAX_POLLERS 8
#define SM_XMSG_BURST 32
#define SM_XMSG_BATCH 16 /* publish after this many staged messages */

/* Messages that did not fit in a full ring, in order, until it drains. */
struct sm_outbox {
	struct sm_xmsg *ovf;
	uint32_t head;
	uint32_t len;
	uint32_t cap;
	bool dirty; /* staged or overflowed messages not yet published */
};

struct sm_shard {
	struct sm_sw_stats stats;
	/* written by other shards to wake this one; own cache line */
	uint64_t collected_ms;	  /* the idle hooks and sm_mem_collect() last ran */
	uint64_t collected_frees; /* stats.frees then: more since means a collect is due */
	int sleeping SM_CACHE_ALIGNED;
	int wake_fd SM_CACHE_ALIGNED;
	unsigned id;
	int cpu;
	pthread_t thread;
	struct sm_task_queue tasks;
	struct sm_timer_heap timers;
	struct sm_poller pollers[SM_MAX_POLLERS];
	unsigned npollers;
	struct sm_waiter waiter;
	struct sm_perf perf;
	struct sm_outbox *outbox; /* one per destination shard */
	struct sm_stop_hook *stop_hooks;
	struct sm_idle_hook *idle_hooks;
	unsigned holds;
	unsigned idle_tasks; /* tasks of this round that only polled (sm_shard_note_idle) */
	bool stopping;
	uint64_t drain_deadline_ms;
	int init_err;
	struct sm_stall stall;
};

struct sm_runtime {
	unsigned n;
	struct sm_shard **shards;
	struct sm_xring **rings;
	const struct sm_runtime_opts *opts;
	uint64_t task_quota_ns;
	uint64_t idle_poll_ns;
	pthread_barrier_t started;
	pthread_barrier_t ready;
	pthread_t sig_thread;
	bool sig_thread_started;
	/* set by the signal thread or sm_runtime_stop, read by shard 0 */
	int stop_requested;
	uint64_t drain_deadline_ms; /* set once by shard 0 when the drain starts */
	int usr1_pending;
	int done;
	int failed;
};

static struct sm_runtime *sm_rt;
static __thread struct sm_shard *sm_self;
__thread uint64_t sm_loop_now_ms;

static inline struct sm_xring *
ring_of(unsigned from, unsigned to)
{
	return sm_rt->rings[from * sm_rt->n + to];
}

unsigned
sm_shard_id(void)
{
	return sm_self != NULL ? sm_self->id : 0;
}

unsigned
sm_shard_count(void)
{
	return sm_rt != NULL ? sm_rt->n : 0;
}

bool
sm_on_shard(void)
{
	return sm_self != NULL;
}

int
sm_shard_cpu(unsigned shard)
{
	if (sm_rt == NULL || shard >= sm_rt->n)
		return -1;
	return sm_rt->shards[shard]->cpu;
}

struct sm_sw_stats *
sm_shard_stats(unsigned shard)
{
	if (sm_rt == NULL || shard >= sm_rt->n)
		return NULL;
	return &sm_rt->shards[shard]->stats;
}

int
sm_shard_wakeup_fd(void)
{
	return sm_self->wake_fd;
}

void
sm_task_schedule(struct sm_task *t)
{
	sm_task_queue_push(&sm_self->tasks, t);
}

int
sm_timer_arm(struct sm_timer *t, uint64_t delay_ms)
{
	return sm_timer_heap_add(&sm_self->timers, t, sm_now_ms() + delay_ms);
}

bool
sm_timer_cancel(struct sm_timer *t)
{
	/* An idle timer needs no shard: teardown paths cancel unconditionally. */
	if (!sm_timer_armed(t))
		return false;
	return sm_timer_heap_del(&sm_self->timers, t);
}

int
sm_shard_add_poller(const struct sm_poller *p)
{
	if (sm_self->npollers == SM_MAX_POLLERS)
		return -ENOSPC;
	sm_self->pollers[sm_self->npollers++] = *p;
	return 0;
}

void
sm_shard_set_waiter(const struct sm_waiter *w)
{
	sm_self->waiter = *w;
}

void
sm_shard_on_stop(struct sm_stop_hook *h)
{
	h->next = sm_self->stop_hooks;
	sm_self->stop_hooks = h;
}

void
sm_shard_remove_stop_hook(struct sm_stop_hook *h)
{
	struct sm_stop_hook **pp;

	for (pp = &sm_self->stop_hooks; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == h) {
			*pp = h->next;
			h->next = NULL;
			return;
		}
	}
}

void
sm_shard_on_idle(struct sm_idle_hook *h)
{
	h->next = sm_self->idle_hooks;
	sm_self->idle_hooks = h;
}

void
sm_shard_remove_idle_hook(struct sm_idle_hook *h)
{
	struct sm_idle_hook **pp;

	for (pp = &sm_self->idle_hooks; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == h) {
			*pp = h->next;
			h->next = NULL;
			return;
		}
	}
}

/* Idle: caches trim, then freed memory goes back to the kernel. */
static void
run_idle_hooks(struct sm_shard *s)
{
	struct sm_idle_hook *h;

	for (h = s->idle_hooks; h != NULL; h = h->next)
		h->fn(h->arg);
	sm_mem_collect();
}

void
sm_shard_hold(void)
{
	sm_self->holds++;
}

void
sm_shard_release(void)
{
	sm_self->holds--;
}

void
sm_shard_note_idle(void)
{
	if (sm_self == NULL)
		return;
	sm_self->idle_tasks++;
	/* One poll per round: the next one may bring what it waits for. */
	sm_task_queue_yield(&sm_self->tasks);
}

bool
sm_shard_stopping(void)
{
	return sm_self != NULL && sm_self->stopping;
}

static void
wake_shard(struct sm_shard *dst)
{
	uint64_t one = 1;

	/* The signal thread wakes shard 0 too; it has no counters. */
	if (write(dst->wake_fd, &one, sizeof(one)) == sizeof(one) && sm_self != NULL)
		SM_STAT_INC(wakeups_sent);
}

/*
 * Publish staged messages for @dst_id and wake it if it sleeps. The fence
 * pairs with the sleeper's seq_cst store of "sleeping" before it re-checks
 * its rings: either it sees our tail or we see its flag.
 */
static void
publish_to(unsigned dst_id)
{
	struct sm_xring *r = ring_of(sm_self->id, dst_id);
	struct sm_shard *dst = sm_rt->shards[dst_id];

	sm_xring_publish(r);
	if (dst == sm_self)
		return;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&dst->sleeping, __ATOMIC_RELAXED) &&
	    __atomic_exchange_n(&dst->sleeping, 0, __ATOMIC_ACQ_REL))
		wake_shard(dst);
}

static int
outbox_push(struct sm_outbox *ob, const struct sm_xmsg *m)
{
	if (ob->len == ob->cap) {
		uint32_t cap = ob->cap ? ob->cap * 2 : 64;
		struct sm_xmsg *v = sm_malloc(cap * sizeof(*v));
		uint32_t i;

		if (v == NULL)
			return -ENOMEM;
		for (i = 0; i < ob->len; i++)
			v[i] = ob->ovf[(ob->head + i) % ob->cap];
		sm_free(ob->ovf);
		ob->ovf = v;
		ob->cap = cap;
		ob->head = 0;
	}
	ob->ovf[(ob->head + ob->len) % ob->cap] = *m;
	ob->len++;
	return 0;
}

/* Move overflowed messages into the ring while it has room. */
static void
outbox_drain(struct sm_outbox *ob, struct sm_xring *r)
{
	while (ob->len > 0 && sm_xring_stage(r, &ob->ovf[ob->head])) {
		ob->head = (ob->head + 1) % ob->cap;
		ob->len--;
	}
}

static int
send_msg(unsigned shard, const struct sm_xmsg *m)
{
	struct sm_outbox *ob = &sm_self->outbox[shard];
	struct sm_xring *r = ring_of(sm_self->id, shard);
	int ret = 0;

	if (ob->len > 0 || !sm_xring_stage(r, m))
		ret = outbox_push(ob, m);
	if (ret < 0)
		return ret;
	ob->dirty = true;
	SM_STAT_INC(xmsg_sent);
	if (sm_xring_unpublished(r) >= SM_XMSG_BATCH)
		publish_to(shard);
	return 0;
}

int
sm_submit_to(unsigned shard, void (*fn)(void *arg), void *arg, void (*done)(void *arg))
{
	struct sm_xmsg m = {
		.fn = fn,
		.arg = arg,
		.done = done,
		.from = sm_self->id,
		.flags = 0,
	};

	if (shard >= sm_rt->n)
		return -EINVAL;
	return send_msg(shard, &m);
}

struct submit_all {
	void (*fn)(void *arg);
	void (*all_done)(void *arg);
	void *arg;
	unsigned pending; /* touched only on the submitting shard */
};

/* On each target shard: the caller's function. */
static void
submit_all_run(void *p)
{
	struct submit_all *a = p;

	a->fn(a->arg);
}

/* Back on the submitting shard, once per target and once for the guard. */
static void
submit_all_ack(void *p)
{
	struct submit_all *a = p;

	if (--a->pending > 0)
		return;
	if (a->all_done != NULL)
		a->all_done(a->arg);
	sm_free(a);
}

int
sm_submit_to_all(void (*fn)(void *arg), void *arg, void (*all_done)(void *arg))
{
	struct submit_all *a;
	unsigned i, sent = 0;
	int ret = 0, err;

	/* Fire and forget (a stop): nothing to count, nothing that could be
	 * left behind when the runtime ends before the replies come back. */
	if (all_done == NULL) {
		for (i = 0; i < sm_rt->n; i++) {
			err = sm_submit_to(i, fn, arg, NULL);
			if (err < 0)
				ret = err;
			else
				sent++;
		}
		return sent == 0 ? -ENOMEM : ret;
	}
	a = sm_malloc(sizeof(*a));
	if (a == NULL)
		return -ENOMEM;
	*a = (struct submit_all){ .fn = fn, .all_done = all_done, .arg = arg, .pending = 1 };
	for (i = 0; i < sm_rt->n; i++) {
		a->pending++;
		err = sm_submit_to(i, submit_all_run, a, submit_all_ack);
		if (err < 0) {
			a->pending--;
			ret = err;
		} else {
			sent++;
		}
	}
	if (sent == 0) {
		sm_free(a);
		return -ENOMEM;
	}
	submit_all_ack(a); /* the guard: all_done waits for every target */
	return ret;
}

void
sm_xmsg_flush(void)
{
	unsigned i;

	for (i = 0; i < sm_rt->n; i++) {
		struct sm_outbox *ob = &sm_self->outbox[i];

		if (!ob->dirty)
			continue;
		outbox_drain(ob, ring_of(sm_self->id, i));
		publish_to(i);
		ob->dirty = ob->len > 0;
	}
}

/* Run inbound messages; replies go back through the sender's ring. */
static unsigned
poll_inbound(void)
{
	struct sm_xmsg burst[SM_XMSG_BURST];
	unsigned total = 0;
	unsigned src, i, got;

	for (src = 0; src < sm_rt->n; src++) {
		struct sm_xring *r = ring_of(src, sm_self->id);

		if (sm_xring_empty(r))
			continue;
		got = sm_xring_dequeue_burst(r, burst, SM_XMSG_BURST);
		for (i = 0; i < got; i++) {
			struct sm_xmsg *m = &burst[i];

			if (m->flags & SM_XMSG_REPLY) {
				m->done(m->arg);
			} else {
				m->fn(m->arg);
				if (m->done != NULL) {
					struct sm_xmsg reply = *m;

					reply.from = sm_self->id;
					reply.flags = SM_XMSG_REPLY;
					if (send_msg(m->from, &reply) < 0)
						SM_ERR("cross-shard reply to shard %u lost: out of "
						       "memory",
						       m->from);
				}
			}
		}
		total += got;
	}
	SM_STAT_ADD(xmsg_recv, total);
	SM_STAT_ADD(tasks_run, total);
	return total;
}

static bool
inbound_pending(void)
{
	unsigned src;

	for (src = 0; src < sm_rt->n; src++)
		if (!sm_xring_empty(ring_of(src, sm_self->id)))
			return true;
	return false;
}

static bool
outbound_pending(void)
{
	unsigned i;

	for (i = 0; i < sm_rt->n; i++)
		if (sm_self->outbox[i].dirty)
			return true;
	return false;
}

static void
begin_drain(void *arg)
{
	struct sm_stop_hook *h;

	(void)arg;
	if (sm_self->stopping)
		return;
	sm_self->stopping = true;
	sm_self->drain_deadline_ms = __atomic_load_n(&sm_rt->drain_deadline_ms, __ATOMIC_ACQUIRE);
	while ((h = sm_self->stop_hooks) != NULL) {
		sm_self->stop_hooks = h->next;
		h->next = NULL;
		h->fn(h->arg);
	}
}

void
sm_runtime_stop(void)
{
	__atomic_store_n(&sm_rt->stop_requested, 1, __ATOMIC_RELEASE);
	if (sm_self == NULL || sm_self->id != 0)
		wake_shard(sm_rt->shards[0]);
}

/* Shard 0 only: act on signals and stop requests. */
static unsigned
poll_control(void)
{
	unsigned i, work = 0;

	if (__atomic_exchange_n(&sm_rt->usr1_pending, 0, __ATOMIC_ACQ_REL)) {
		if (sm_rt->opts->on_usr1 != NULL)
			sm_rt->opts->on_usr1(sm_rt->opts->arg);
		work++;
	}
	if (__atomic_load_n(&sm_rt->stop_requested, __ATOMIC_ACQUIRE) == 1) {
		__atomic_store_n(&sm_rt->stop_requested, 2, __ATOMIC_RELAXED);
		__atomic_store_n(&sm_rt->drain_deadline_ms,
				 sm_now_ms() + sm_rt->opts->drain_timeout_ms, __ATOMIC_RELEASE);
		for (i = 0; i < sm_rt->n; i++)
			sm_submit_to(i, begin_drain, NULL, NULL);
		work++;
	}
	return work;
}

static bool
control_pending(void)
{
	return __atomic_load_n(&sm_rt->usr1_pending, __ATOMIC_RELAXED) ||
	       __atomic_load_n(&sm_rt->stop_requested, __ATOMIC_RELAXED) == 1;
}

static int
default_wait(void *ctx, int64_t timeout_ns)
{
	struct pollfd pfd = { .fd = sm_self->wake_fd, .events = POLLIN };
	int timeout_ms = timeout_ns < 0 ? -1 : (int)((timeout_ns + 999999) / 1000000);
	uint64_t v;

	(void)ctx;
	if (poll(&pfd, 1, timeout_ms) > 0 && read(sm_self->wake_fd, &v, sizeof(v)) < 0)
		return -errno;
	return 0;
}

static bool
can_exit(uint64_t now_ms)
{
	if (sm_self->holds == 0 && sm_task_queue_empty(&sm_self->tasks) && !outbound_pending() &&
	    !inbound_pending())
		return true;
	if (now_ms >= sm_self->drain_deadline_ms) {
		SM_WARN("drain timeout after %u ms: leaving with %u requests or connections "
			"unfinished (raise drain_timeout_ms to wait longer)",
			sm_rt->opts->drain_timeout_ms, sm_self->holds);
		return true;
	}
	return false;
}

static void
reactor_loop(void)
{
	struct sm_shard *s = sm_self;
	uint64_t idle_since = 0;
	unsigned i, work;
	uint64_t now_ns, now_ms, next, deadline, top_ns = sm_now_ns(), t, slept = 0;
	int64_t timeout_ns;
	bool collect_due, was_busy = false;

	for (;;) {
		work = 0;
		/*
		 * The last round's time, by what it was: work, or idle polling
		 * (less what it slept). One clock read per round, as before.
		 */
		t = sm_now_ns();
		if (was_busy)
			s->stats.busy_ns += t - top_ns;
		else
			s->stats.idle_ns += t - top_ns - SM_MIN(slept, t - top_ns);
		if (SM_UNLIKELY(s->stall.caught))
			sm_stall_report(&s->stall, s->id, t - top_ns);
		SM_WRITE_ONCE(s->stall.round, s->stall.round + 1);
		top_ns = t;
		slept = 0;
		sm_loop_now_ms = t / 1000000ull;
		if (!sm_task_queue_empty(&s->tasks)) {
			unsigned ran;

			s->stall.phase = "tasks";
			s->idle_tasks = 0;
			ran = sm_task_queue_run(&s->tasks, sm_rt->task_quota_ns);
			SM_STAT_ADD(tasks_run, ran);
			/* Tasks that only polled for a due time are not work. */
			work += ran - SM_MIN(ran, s->idle_tasks);
		}
		SM_STAT_INC(polls);
		s->stall.phase = "cross-shard messages";
		work += poll_inbound();
		for (i = 0; i < s->npollers; i++) {
			s->stall.phase = s->pollers[i].name;
			work += s->pollers[i].poll(s->pollers[i].ctx);
		}
		s->stall.phase = "timers";
		now_ns = sm_now_ns();
		now_ms = now_ns / 1000000;
		if (sm_timer_heap_next(&s->timers) <= now_ms) {
			unsigned fired = sm_timer_heap_expire(&s->timers, now_ms);

			SM_STAT_ADD(timers_fired, fired);
			work += fired;
		}
		if (s->id == 0) {
			s->stall.phase = "control (signals, drain)";
			work += poll_control();
		}
		sm_xmsg_flush();
		/* The drain deadline holds even if the drain message is stuck
		 * behind a full ring: no shard outlives it. */
		if (!s->stopping && SM_UNLIKELY(sm_rt->drain_deadline_ms != 0) &&
		    now_ms >= __atomic_load_n(&sm_rt->drain_deadline_ms, __ATOMIC_ACQUIRE))
			begin_drain(NULL);

		if (s->stopping && can_exit(now_ms))
			break;
		was_busy = work > 0;
		if (work > 0 || !sm_task_queue_empty(&s->tasks)) {
			idle_since = 0;
			continue;
		}
		if (idle_since == 0)
			idle_since = now_ns;
		if (now_ns - idle_since < sm_rt->idle_poll_ns) {
			__builtin_ia32_pause();
			continue;
		}

		/*
		 * Idle: caches trim and memory freed since the last time goes back
		 * to the kernel, at most once a second. Too soon after the last
		 * time, and with frees since, the sleep below ends when it is due,
		 * or a burst that ended would keep its memory until the next
		 * request.
		 */
		collect_due = s->stats.frees != s->collected_frees;
		if (collect_due && now_ms - s->collected_ms >= 1000) {
			s->stall.phase = "idle hooks (cache trims)";
			s->collected_ms = now_ms;
			run_idle_hooks(s);
			s->collected_frees = s->stats.frees;
			continue;
		}

		/* Race-free sleep: announce, re-check, then block. */
		__atomic_store_n(&s->sleeping, 1, __ATOMIC_SEQ_CST);
		if (inbound_pending() || (s->id == 0 && control_pending())) {
			__atomic_store_n(&s->sleeping, 0, __ATOMIC_RELAXED);
			continue;
		}
		next = sm_timer_heap_next(&s->timers);
		deadline = __atomic_load_n(&sm_rt->drain_deadline_ms, __ATOMIC_ACQUIRE);
		if (deadline != 0 && deadline < next)
			next = deadline;
		/* A full ring frees no wakeup for its producer: with messages
		 * waiting in the overflow, look again in a millisecond. */
		if (outbound_pending() && now_ms + 1 < next)
			next = now_ms + 1;
		if (collect_due && s->collected_ms + 1000 < next)
			next = s->collected_ms + 1000;
		if (next == UINT64_MAX)
			timeout_ns = -1;
		else if (next * 1000000 <= now_ns)
			timeout_ns = 0;
		else
			timeout_ns = (int64_t)(next * 1000000 - now_ns);
		SM_STAT_INC(sleeps);
		t = sm_now_ns();
		s->waiter.wait(s->waiter.ctx, timeout_ns);
		slept = sm_now_ns() - t;
		s->stats.sleep_ns += slept;
		__atomic_store_n(&s->sleeping, 0, __ATOMIC_RELAXED);
		idle_since = 0;
	}
}

void
sm_shard_snapshot(unsigned shard, struct sm_shard_snapshot *snap)
{
	struct sm_shard *s = sm_rt->shards[shard];
	unsigned c;

	memset(snap, 0, sizeof(*snap));
	snap->shard = shard;
	snap->cpu = s->cpu;
	snap->when_ns = sm_now_ns();
	sm_sw_stats_read(&s->stats, &snap->sw);
	for (c = 0; c < SM_PERF_NR; c++) {
		snap->perf_err[c] = s->perf.err[c];
		snap->perf_ok[c] = sm_perf_read(&s->perf, c, &snap->perf[c]);
	}
}

static int
pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void
shard_teardown(struct sm_shard *s)
{
	if (sm_rt->opts->shard_fini != NULL)
		sm_rt->opts->shard_fini(s->id, sm_rt->opts->arg);
	/* perf counters close in runtime_free: other shards may still be
	 * reading them for a snapshot. */
	sm_timer_heap_fini(&s->timers);
}

/* Everything a shard does, on its own thread. */
/* On shard 0 once every shard has started: the watchdog over all of them. */
static void
start_stall_detector(void)
{
	struct sm_stall_target *t = calloc(sm_rt->n, sizeof(*t));
	unsigned i;
	int ret = -ENOMEM;

	if (t != NULL) {
		for (i = 0; i < sm_rt->n; i++) {
			t[i].st = &sm_rt->shards[i]->stall;
			t[i].sleeping = &sm_rt->shards[i]->sleeping;
			t[i].thread = sm_rt->shards[i]->thread;
		}
		ret = sm_stall_start(t, sm_rt->n, sm_rt->opts->blocked_notify_ms,
				     sm_rt->opts->blocked_reports_per_minute
					     ? sm_rt->opts->blocked_reports_per_minute
					     : 5);
		free(t);
	}
	if (ret < 0)
		SM_WARN("the reactor stall detector is off: %s", strerror(-ret));
}

static void
shard_run(struct sm_shard *s)
{
	int ret;

	sm_self = s;
	sm_tls_stats = &s->stats;
	if (s->cpu >= 0) {
		ret = pin_to_cpu(s->cpu);
		if (ret < 0)
			SM_WARN("cannot pin shard %u to CPU %d: %s", s->id, s->cpu, strerror(-ret));
	}
	if (numa_available() >= 0)
		numa_set_localalloc();
	sm_mem_thread_init();
	sm_task_queue_init(&s->tasks);
	sm_timer_heap_init(&s->timers);
	sm_perf_open(&s->perf);
	s->waiter.wait = default_wait;
	s->waiter.ctx = NULL;
	s->thread = pthread_self();
	s->stall.running = &s->tasks.running;
	sm_stall_thread_init(&s->stall);

	pthread_barrier_wait(&sm_rt->started);
	if (sm_rt->opts->shard_init != NULL) {
		ret = sm_rt->opts->shard_init(s->id, sm_rt->opts->arg);
		if (ret < 0) {
			s->init_err = ret;
			__atomic_store_n(&sm_rt->failed, 1, __ATOMIC_RELEASE);
		}
	}
	pthread_barrier_wait(&sm_rt->ready);
	if (!__atomic_load_n(&sm_rt->failed, __ATOMIC_ACQUIRE)) {
		if (s->id == 0 && sm_rt->opts->blocked_notify_ms > 0)
			start_stall_detector();
		reactor_loop();
	}
	/* Out of the loop: not a stall, whatever teardown takes. */
	__atomic_store_n(&s->sleeping, 1, __ATOMIC_RELEASE);
	shard_teardown(s);
	sm_mem_thread_fini();
	sm_tls_stats = NULL;
	sm_self = NULL;
}

static void *
shard_thread(void *arg)
{
	shard_run(arg);
	return NULL;
}

/*
 * Signals are blocked in every thread and taken here with sigtimedwait, so a
 * handler never interrupts a reactor; shard 0 picks the flags up in its poll.
 */
static void *
signal_thread(void *arg)
{
	const sigset_t *set = arg;
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 200 * 1000000 };
	siginfo_t si;
	int sig;

	while (!__atomic_load_n(&sm_rt->done, __ATOMIC_ACQUIRE)) {
		sig = sigtimedwait(set, &si, &ts);
		if (sig == SIGUSR1) {
			__atomic_store_n(&sm_rt->usr1_pending, 1, __ATOMIC_RELEASE);
			wake_shard(sm_rt->shards[0]);
		} else if (sig == SIGINT || sig == SIGTERM) {
			if (__atomic_load_n(&sm_rt->stop_requested, __ATOMIC_ACQUIRE)) {
				static const char msg[] =
					"shardmark: second signal, exiting without drain\n";

				if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
					_exit(1);
				_exit(1);
			}
			sm_log(SM_LOG_INFO, "%s: draining (send it again to exit at once)",
			       sig == SIGINT ? "SIGINT" : "SIGTERM");
			__atomic_store_n(&sm_rt->stop_requested, 1, __ATOMIC_RELEASE);
			wake_shard(sm_rt->shards[0]);
		}
	}
	return NULL;
}

static void
cpuset_str(const cpu_set_t *set, char *buf, size_t len)
{
	size_t off = 0;
	int cpu, start = -1;

	buf[0] = '\0';
	for (cpu = 0; cpu <= CPU_SETSIZE; cpu++) {
		bool in = cpu < CPU_SETSIZE && CPU_ISSET(cpu, set);

		if (in && start < 0)
			start = cpu;
		if (!in && start >= 0 && off < len) {
			if (start == cpu - 1)
				off += (size_t)snprintf(buf + off, len - off, "%s%d",
							off ? "," : "", start);
			else
				off += (size_t)snprintf(buf + off, len - off, "%s%d-%d",
							off ? "," : "", start, cpu - 1);
			start = -1;
		}
	}
}

/* Choose the CPUs of each shard; fills @cpus[0..*n). */
static int
plan_cpus(const struct sm_runtime_opts *o, int *cpus, unsigned *n, char *err, size_t errlen)
{
	cpu_set_t allowed;
	uint8_t listed[CPU_SETSIZE / 8];
	char allowed_str[256];
	unsigned navail = 0, smp;
	int cpu, ret;

	if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot read the CPU affinity of this process: %s",
			 strerror(errno));
		return ret;
	}
	cpuset_str(&allowed, allowed_str, sizeof(allowed_str));
	if (o->cpuset != NULL) {
		ret = sm_cpuset_parse(o->cpuset, listed, CPU_SETSIZE);
		if (ret < 0) {
			snprintf(err, errlen,
				 "bad cpuset '%s': expected a CPU list like 0-3,8 (CPUs available: "
				 "%s)",
				 o->cpuset, allowed_str);
			return -EINVAL;
		}
		for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
			if (!(listed[cpu / 8] & (1u << (cpu % 8))))
				continue;
			if (!CPU_ISSET(cpu, &allowed)) {
				snprintf(err, errlen,
					 "cpuset '%s' names CPU %d, which this process may not use "
					 "(CPUs available: %s): choose CPUs from that list",
					 o->cpuset, cpu, allowed_str);
				return -EINVAL;
			}
			cpus[navail++] = cpu;
		}
	} else {
		for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
			if (CPU_ISSET(cpu, &allowed))
				cpus[navail++] = cpu;
	}
	smp = o->smp ? o->smp : navail;
	if (smp > SM_MAX_SHARDS) {
		snprintf(err, errlen, "--smp %u exceeds the build's limit of %d shards", smp,
			 SM_MAX_SHARDS);
		return -EINVAL;
	}
	if (smp > navail && !o->overprovisioned) {
		snprintf(err, errlen,
			 "--smp %u needs %u CPUs but only %u are available (%s): lower --smp, "
			 "widen --cpuset, or pass --overprovisioned to run shards unpinned",
			 smp, smp, navail, o->cpuset ? o->cpuset : allowed_str);
		return -EINVAL;
	}
	/* Overprovisioned shards run unpinned, as Seastar's do. */
	for (cpu = 0; cpu < (int)smp; cpu++)
		cpus[cpu] = o->overprovisioned ? -1 : cpus[cpu];
	*n = smp;
	return 0;
}

static void
runtime_free(struct sm_runtime *rt)
{
	unsigned i;

	if (rt->rings != NULL)
		for (i = 0; i < rt->n * rt->n; i++)
			if (rt->rings[i] != NULL)
				sm_xring_destroy(rt->rings[i]);
	if (rt->shards != NULL) {
		for (i = 0; i < rt->n; i++) {
			struct sm_shard *s = rt->shards[i];
			unsigned j;

			if (s == NULL)
				continue;
			if (s->outbox != NULL)
				for (j = 0; j < rt->n; j++)
					sm_free(s->outbox[j].ovf);
			free(s->outbox);
			if (s->wake_fd >= 0)
				close(s->wake_fd);
			sm_perf_close(&s->perf);
			free(s);
		}
	}
	free(rt->shards);
	free(rt->rings);
	free(rt);
}

static int
runtime_alloc(struct sm_runtime *rt, const int *cpus, char *err, size_t errlen)
{
	uint32_t ring_size = rt->opts->xring_size ? rt->opts->xring_size : 1024;
	unsigned i, c;
	int ret;

	rt->shards = calloc(rt->n, sizeof(*rt->shards));
	rt->rings = calloc((size_t)rt->n * rt->n, sizeof(*rt->rings));
	if (rt->shards == NULL || rt->rings == NULL)
		goto nomem;
	for (i = 0; i < rt->n; i++) {
		struct sm_shard *s;

		if (posix_memalign((void **)&s, SM_CACHE_LINE, sizeof(*s)) != 0)
			goto nomem;
		memset(s, 0, sizeof(*s));
		rt->shards[i] = s;
		for (c = 0; c < SM_PERF_NR; c++)
			s->perf.fd[c] = -1; /* closed in runtime_free, opened or not */
		s->id = i;
		s->cpu = cpus[i];
		s->wake_fd = eventfd(0, EFD_CLOEXEC);
		if (s->wake_fd < 0) {
			ret = -errno;
			snprintf(err, errlen, "eventfd: %s (raise the open file limit, ulimit -n)",
				 strerror(errno));
			return ret;
		}
		s->outbox = calloc(rt->n, sizeof(*s->outbox));
		if (s->outbox == NULL)
			goto nomem;
	}
	for (i = 0; i < rt->n * rt->n; i++) {
		ret = sm_xring_create(&rt->rings[i], ring_size);
		if (ret < 0) {
			snprintf(err, errlen,
				 "cannot create cross-shard ring of %u slots: %s (xring_size must "
				 "be a power of two)",
				 ring_size, strerror(-ret));
			return ret;
		}
	}
	return 0;
nomem:
	snprintf(err, errlen, "out of memory creating %u shards", rt->n);
	return -ENOMEM;
}

int
sm_runtime_run(const struct sm_runtime_opts *opts, char *err, size_t errlen)
{
	struct sm_runtime *rt;
	struct sm_runtime_opts o = *opts;
	int cpus[CPU_SETSIZE];
	sigset_t sigs, old;
	cpu_set_t caller_cpus;
	bool have_caller_cpus;
	unsigned n = 0, i;
	int ret;

	sm_clock_calibrate(); /* before any shard times a request */
	if (sm_rt != NULL) {
		snprintf(err, errlen, "the shard runtime is already running");
		return -EBUSY;
	}
	if (o.task_quota_us == 0)
		o.task_quota_us = 500;
	if (o.drain_timeout_ms == 0)
		o.drain_timeout_ms = 10000;
	ret = plan_cpus(&o, cpus, &n, err, errlen);
	if (ret < 0)
		return ret;
	/* The caller becomes shard 0 and gets pinned: give its CPUs back at
	 * the end, so a second run (tests, bench) starts from the same set. */
	have_caller_cpus =
		pthread_getaffinity_np(pthread_self(), sizeof(caller_cpus), &caller_cpus) == 0;

	rt = calloc(1, sizeof(*rt));
	if (rt == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rt->n = n;
	rt->opts = &o;
	rt->task_quota_ns = (uint64_t)o.task_quota_us * 1000;
	/* Shards sharing CPUs must not spin: the spinner holds the CPU its
	 * peer needs (Seastar's --overprovisioned does the same). */
	rt->idle_poll_ns = o.overprovisioned ? 0 : (uint64_t)o.idle_poll_us * 1000;
	ret = runtime_alloc(rt, cpus, err, errlen);
	if (ret < 0)
		goto free_rt;
	sm_rt = rt;

	/* Block the signals we handle in every thread we create; SIGPIPE too,
	 * so a peer closing never kills the process. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGUSR1);
	sigaddset(&sigs, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &sigs, &old);
	pthread_barrier_init(&rt->started, NULL, n);
	pthread_barrier_init(&rt->ready, NULL, n);

	for (i = 1; i < n; i++) {
		ret = -pthread_create(&rt->shards[i]->thread, NULL, shard_thread, rt->shards[i]);
		if (ret < 0) {
			/* The barriers count n threads; there is no clean way back. */
			SM_ERR("cannot start shard %u: %s (raise the thread limit, ulimit -u)", i,
			       strerror(-ret));
			exit(1);
		}
	}
	ret = -pthread_create(&rt->sig_thread, NULL, signal_thread, &sigs);
	rt->sig_thread_started = ret == 0;

	shard_run(rt->shards[0]);

	for (i = 1; i < n; i++)
		pthread_join(rt->shards[i]->thread, NULL);
	__atomic_store_n(&rt->done, 1, __ATOMIC_RELEASE);
	sm_stall_stop();
	if (rt->sig_thread_started)
		pthread_join(rt->sig_thread, NULL);
	pthread_barrier_destroy(&rt->started);
	pthread_barrier_destroy(&rt->ready);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (have_caller_cpus)
		pthread_setaffinity_np(pthread_self(), sizeof(caller_cpus), &caller_cpus);

	ret = 0;
	for (i = 0; i < n; i++) {
		if (rt->shards[i]->init_err < 0) {
			ret = rt->shards[i]->init_err;
			snprintf(err, errlen, "shard %u failed to start: %s", i, strerror(-ret));
			break;
		}
	}
	sm_rt = NULL;
free_rt:
	runtime_free(rt);
	return ret;
}
