/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_TASK_H
#define SM_TASK_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "sm_clock.h"

/*
 * Tasks: an intrusive {fn, arg} node embedded in the object that needs work,
 * so queueing one never allocates. A task is on at most one queue; queueing a
 * task that is already queued does nothing (the work will run once).
 */
struct sm_task {
	struct sm_task *next;
	void (*fn)(void *arg);
	void *arg;
	bool queued;
};

struct sm_task_queue {
	struct sm_task *head;
	struct sm_task **tail;
	unsigned len;
	bool yield; /* end the current run after this task (sm_task_queue_yield) */
	/* when the task now at the head became ready: the queue's scheduling latency */
	uint64_t ready_ns;
	void (*running)(void *arg); /* the task running now, for the stall detector */
};

static inline void
sm_task_init(struct sm_task *t, void (*fn)(void *arg), void *arg)
{
	t->next = NULL;
	t->fn = fn;
	t->arg = arg;
	t->queued = false;
}

static inline void
sm_task_queue_init(struct sm_task_queue *q)
{
	q->head = NULL;
	q->tail = &q->head;
	q->len = 0;
	q->yield = false;
	q->ready_ns = 0;
	q->running = NULL;
}

/*
 * End sm_task_queue_run() after the running task: a task that only polls
 * (and queued itself again) lets the reactor poll its I/O before it runs
 * again, instead of spinning in the queue until the quota ends.
 */
static inline void
sm_task_queue_yield(struct sm_task_queue *q)
{
	q->yield = true;
}

static inline bool
sm_task_queue_empty(const struct sm_task_queue *q)
{
	return q->head == NULL;
}

/* Append @t; returns false when it was already queued. */
static inline bool
sm_task_queue_push(struct sm_task_queue *q, struct sm_task *t)
{
	if (t->queued)
		return false;
	t->queued = true;
	t->next = NULL;
	/* One clock read when the queue stops being empty, not one per task. */
	if (q->head == NULL)
		q->ready_ns = sm_now_ns();
	*q->tail = t;
	q->tail = &t->next;
	q->len++;
	return true;
}

static inline struct sm_task *
sm_task_queue_pop(struct sm_task_queue *q)
{
	struct sm_task *t = q->head;

	if (t == NULL)
		return NULL;
	q->head = t->next;
	if (q->head == NULL)
		q->tail = &q->head;
	q->len--;
	t->queued = false;
	t->next = NULL;
	return t;
}

/*
 * Run tasks in FIFO order until the queue is empty or @quota_ns has elapsed.
 * The clock is read every few tasks, so a quota overrun is bounded by one
 * batch. At least one task runs. Tasks queued while running run in the same
 * call if quota is left. Returns the number of tasks run.
 */
unsigned
sm_task_queue_run(struct sm_task_queue *q, uint64_t quota_ns);

/* Queue @t on the calling shard's reactor. */
void
sm_task_schedule(struct sm_task *t);

#endif /* SM_TASK_H */
