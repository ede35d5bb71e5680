/* SPDX-License-Identifier: BSD-3-Clause */
#include "sm_clock.h"
#include "sm_stats.h"
#include "sm_task.h"

/* Reading the clock per task would cost more than a short task itself. */
#define SM_TASK_CLOCK_EVERY 16u

unsigned
sm_task_queue_run(struct sm_task_queue *q, uint64_t quota_ns)
{
	uint64_t start = sm_now_ns(), now = start;
	struct sm_sw_stats *st = sm_tls_stats != NULL ? sm_tls_stats : sm_stats_fallback_attach();
	struct sm_task *t;
	unsigned n = 0;

	if (q->head != NULL && start >= q->ready_ns) {
		st->sched_lat[sm_sched_lat_bucket(start - q->ready_ns)]++;
		st->sched_lat_sum_ns += start - q->ready_ns;
	}
	/* The check comes after a task, so at least one runs even with quota 0. */
	q->yield = false;
	while ((t = sm_task_queue_pop(q)) != NULL) {
		q->running = t->fn;
		t->fn(t->arg);
		n++;
		if (q->yield) {
			q->yield = false;
			now = sm_now_ns();
			break;
		}
		if (n % SM_TASK_CLOCK_EVERY == 0 && (now = sm_now_ns()) - start >= quota_ns)
			break;
	}
	/* What is left has waited since now (at least): the next run counts from there. */
	if (q->head != NULL)
		q->ready_ns = now;
	q->running = NULL;
	return n;
}
