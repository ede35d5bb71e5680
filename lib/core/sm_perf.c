/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sm_common.h"
#include "sm_stats.h"

struct sm_perf_def {
	const char *name;
	uint32_t type;
	uint64_t config;
	/*
	 * Count kernel mode too. Only context-switches needs it: the kernel
	 * records a switch with kernel-mode registers, so a user-only counter
	 * always reads 0, which would be a wrong number rather than a missing one.
	 */
	bool kernel;
};

static const struct sm_perf_def sm_perf_defs[SM_PERF_NR] = {
	[SM_PERF_INSTRUCTIONS] = { "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS,
				   false },
	[SM_PERF_CYCLES] = { "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, false },
	[SM_PERF_CACHE_REFERENCES] = { "cache-references", PERF_TYPE_HARDWARE,
				       PERF_COUNT_HW_CACHE_REFERENCES, false },
	[SM_PERF_CACHE_MISSES] = { "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES,
				   false },
	[SM_PERF_BRANCH_MISSES] = { "branch-misses", PERF_TYPE_HARDWARE,
				    PERF_COUNT_HW_BRANCH_MISSES, false },
	[SM_PERF_TASK_CLOCK] = { "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK,
				 false },
	[SM_PERF_CONTEXT_SWITCHES] = { "context-switches", PERF_TYPE_SOFTWARE,
				       PERF_COUNT_SW_CONTEXT_SWITCHES, true },
	[SM_PERF_PAGE_FAULTS] = { "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS,
				  false },
};

static int
sm_perf_syscall(void *attr, pid_t pid, int cpu, int group_fd, unsigned long flags)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

/* Set by tests before shards start; read by every shard thread. */
static sm_perf_open_fn sm_perf_open_hook = sm_perf_syscall;

void
sm_perf_set_open_fn(sm_perf_open_fn fn)
{
	__atomic_store_n(&sm_perf_open_hook, fn != NULL ? fn : sm_perf_syscall, __ATOMIC_RELEASE);
}

const char *
sm_perf_counter_name(enum sm_perf_counter c)
{
	if ((unsigned)c >= SM_PERF_NR)
		return "unknown";
	return sm_perf_defs[c].name;
}

int
sm_perf_open(struct sm_perf *p)
{
	sm_perf_open_fn open_fn = __atomic_load_n(&sm_perf_open_hook, __ATOMIC_ACQUIRE);
	struct perf_event_attr attr;
	unsigned c;
	int fd;

	/* Each counter stands alone (no group): one missing event leaves the rest. */
	for (c = 0; c < SM_PERF_NR; c++) {
		memset(&attr, 0, sizeof(attr));
		attr.size = sizeof(attr);
		attr.type = sm_perf_defs[c].type;
		attr.config = sm_perf_defs[c].config;
		attr.exclude_kernel = sm_perf_defs[c].kernel ? 0 : 1;
		attr.exclude_hv = 1;
		attr.disabled = 0;
		attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;

		errno = 0;
		fd = open_fn(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd >= 0) {
			p->fd[c] = fd;
			p->err[c] = 0;
		} else {
			p->fd[c] = -1;
			/* A hook that forgot errno still must not read as "open". */
			p->err[c] = errno != 0 ? errno : EINVAL;
		}
	}
	return 0;
}

void
sm_perf_close(struct sm_perf *p)
{
	unsigned c;

	for (c = 0; c < SM_PERF_NR; c++) {
		if (p->fd[c] >= 0)
			close(p->fd[c]);
		p->fd[c] = -1;
	}
}

bool
sm_perf_read(const struct sm_perf *p, enum sm_perf_counter c, uint64_t *val)
{
	uint64_t v[3]; /* value, time enabled, time running */
	ssize_t n;

	if ((unsigned)c >= SM_PERF_NR || p->fd[c] < 0)
		return false;
	do {
		n = read(p->fd[c], v, sizeof(v));
	} while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(v))
		return false;
	/* Multiplexed: extrapolate to the whole enabled time; 128-bit avoids overflow. */
	if (v[2] > 0 && v[2] < v[1])
		v[0] = (uint64_t)((unsigned __int128)v[0] * v[1] / v[2]);
	*val = v[0];
	return true;
}

const char *
sm_perf_unavailable_reason(const struct sm_perf *p, enum sm_perf_counter c, char *buf, size_t len)
{
	char errbuf[128];
	const char *hint;
	int err;

	if ((unsigned)c >= SM_PERF_NR || p->fd[c] >= 0)
		return NULL;
	err = p->err[c];
	if (err == 0) {
		/* Opened but then unreadable (a snapshot's read failed). */
		snprintf(buf, len, "counter could not be read");
		return buf;
	}
	/* A known cause says what it is; the errno text would only repeat it. */
	if (sm_perf_defs[c].type == PERF_TYPE_HARDWARE &&
	    (err == ENOENT || err == EOPNOTSUPP || err == ENODEV))
		hint = "no hardware PMU on this machine (common on VMs); "
		       "use valgrind --tool=callgrind for instruction counts";
	else if (err == EACCES || err == EPERM)
		hint = "not permitted: lower /proc/sys/kernel/perf_event_paranoid or run as root";
	else
		hint = NULL;
	if (hint != NULL)
		snprintf(buf, len, "%s", hint);
	else
		snprintf(buf, len, "perf_event_open failed: %s",
			 strerror_r(err, errbuf, sizeof(errbuf)));
	return buf;
}
