/* SPDX-License-Identifier: BSD-3-Clause */
#include "sm_clock.h"
#include "sm_task.h"

/* Reading the clock per task would cost more than a short task itself. */
#define SM_TASK_CLOCK_EVERY 16u

unsigned
sm_task_queue_run(struct sm_task_queue *q, uint64_t quota_ns)
{
	uint64_t start = sm_now_ns();
	struct sm_task *t;
	unsigned n = 0;

	/* The check comes after a task, so at least one runs even with quota 0. */
	q->yield = false;
	while ((t = sm_task_queue_pop(q)) != NULL) {
		t->fn(t->arg);
		n++;
		if (q->yield) {
			q->yield = false;
			break;
		}
		if (n % SM_TASK_CLOCK_EVERY == 0 && sm_now_ns() - start >= quota_ns)
			break;
	}
	return n;
}
