/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sm_stats.h"

/*
 * Fake perf_event_open: each counter either fails with a chosen errno or
 * returns the read end of a pipe preloaded with {value, enabled, running},
 * so reads and scaling are checked without a PMU.
 */
struct fake_counter {
	int err;	  /* fail with this errno when non-zero */
	uint64_t vals[3]; /* what read() returns */
	size_t nbytes;	  /* how much of vals to provide (24 for a good read) */
};

static struct fake_counter fake[SM_PERF_NR];
static unsigned fake_calls;
static struct perf_event_attr fake_attr[SM_PERF_NR];

static int
counter_of(const struct perf_event_attr *a)
{
	static const struct {
		uint32_t type;
		uint64_t config;
	} map[SM_PERF_NR] = {
		[SM_PERF_INSTRUCTIONS] = { PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
		[SM_PERF_CYCLES] = { PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
		[SM_PERF_CACHE_REFERENCES] = { PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
		[SM_PERF_CACHE_MISSES] = { PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
		[SM_PERF_BRANCH_MISSES] = { PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
		[SM_PERF_TASK_CLOCK] = { PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
		[SM_PERF_CONTEXT_SWITCHES] = { PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
		[SM_PERF_PAGE_FAULTS] = { PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	};
	int c;

	for (c = 0; c < SM_PERF_NR; c++) {
		if (map[c].type == a->type && map[c].config == a->config)
			return c;
	}
	return -1;
}

static int
fake_open(void *attr, pid_t pid, int cpu, int group_fd, unsigned long flags)
{
	struct perf_event_attr *a = attr;
	int c = counter_of(a);
	int fds[2];

	fake_calls++;
	assert_true(c >= 0);
	fake_attr[c] = *a;
	/* The calling thread, any CPU, no group, close-on-exec. */
	assert_int_equal(pid, 0);
	assert_int_equal(cpu, -1);
	assert_int_equal(group_fd, -1);
	assert_int_equal(flags, PERF_FLAG_FD_CLOEXEC);

	if (fake[c].err != 0) {
		errno = fake[c].err;
		return -1;
	}
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(write(fds[1], fake[c].vals, fake[c].nbytes), (ssize_t)fake[c].nbytes);
	close(fds[1]);
	return fds[0];
}

static int
reset_fake(void **state)
{
	(void)state;
	memset(fake, 0, sizeof(fake));
	memset(fake_attr, 0, sizeof(fake_attr));
	fake_calls = 0;
	sm_perf_set_open_fn(fake_open);
	return 0;
}

static int
restore_open(void **state)
{
	(void)state;
	sm_perf_set_open_fn(NULL);
	return 0;
}

static bool
is_hw(int c)
{
	return c <= SM_PERF_BRANCH_MISSES;
}

static void
test_names(void **state)
{
	static const char *const want[SM_PERF_NR] = {
		"instructions",	 "cycles",     "cache-references", "cache-misses",
		"branch-misses", "task-clock", "context-switches", "page-faults",
	};
	int c;

	(void)state;
	for (c = 0; c < SM_PERF_NR; c++)
		assert_string_equal(sm_perf_counter_name(c), want[c]);
}

static void
test_all_fail_unavailable_never_zero(void **state)
{
	char buf[512], text[128];
	struct sm_perf p;
	uint64_t val;
	const char *r;
	int c;

	(void)state;
	for (c = 0; c < SM_PERF_NR; c++)
		fake[c].err = is_hw(c) ? ENOENT : EACCES;
	assert_int_equal(sm_perf_open(&p), 0);
	/* Every counter was tried on its own, not as one group. */
	assert_int_equal(fake_calls, SM_PERF_NR);

	for (c = 0; c < SM_PERF_NR; c++) {
		assert_int_equal(p.fd[c], -1);
		assert_int_equal(p.err[c], fake[c].err);
		val = 0xdeadbeef;
		assert_false(sm_perf_read(&p, c, &val));
		assert_int_equal(val, 0xdeadbeef);

		r = sm_perf_unavailable_reason(&p, c, buf, sizeof(buf));
		assert_ptr_equal(r, buf);
		/* The cause in words, without the errno text in front. */
		snprintf(text, sizeof(text), "%s", strerror(fake[c].err));
		assert_null(strstr(r, text));
		if (is_hw(c))
			assert_ptr_equal(strstr(r, "no hardware PMU"), r);
		else
			assert_ptr_equal(strstr(r, "not permitted"), r);
	}
	sm_perf_close(&p);
}

static void
test_attrs(void **state)
{
	struct sm_perf p;
	int c;

	(void)state;
	for (c = 0; c < SM_PERF_NR; c++)
		fake[c].err = ENOENT;
	sm_perf_open(&p);
	for (c = 0; c < SM_PERF_NR; c++) {
		assert_int_equal(fake_attr[c].size, sizeof(struct perf_event_attr));
		assert_int_equal(fake_attr[c].read_format,
				 PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING);
		assert_int_equal(fake_attr[c].disabled, 0);
		assert_int_equal(fake_attr[c].exclude_hv, 1);
		/* User space only, except context switches, which the kernel counts
		 * in kernel mode and a user-only counter would always read as 0. */
		assert_int_equal(fake_attr[c].exclude_kernel,
				 c == SM_PERF_CONTEXT_SWITCHES ? 0 : 1);
	}
	sm_perf_close(&p);
}

static void
test_hints_by_errno(void **state)
{
	char buf[512];
	struct sm_perf p;

	(void)state;
	fake[SM_PERF_INSTRUCTIONS].err = EOPNOTSUPP;
	fake[SM_PERF_CYCLES].err = ENODEV;
	fake[SM_PERF_CACHE_REFERENCES].err = EPERM;
	fake[SM_PERF_CACHE_MISSES].err = EINVAL;
	fake[SM_PERF_TASK_CLOCK].err = ENOENT; /* software: no PMU hint */
	fake[SM_PERF_BRANCH_MISSES].nbytes = 24;
	fake[SM_PERF_CONTEXT_SWITCHES].nbytes = 24;
	fake[SM_PERF_PAGE_FAULTS].nbytes = 24;
	sm_perf_open(&p);

	assert_non_null(
		strstr(sm_perf_unavailable_reason(&p, SM_PERF_INSTRUCTIONS, buf, sizeof(buf)),
		       "no hardware PMU"));
	assert_non_null(
		strstr(sm_perf_unavailable_reason(&p, SM_PERF_CYCLES, buf, sizeof(buf)), "PMU"));
	assert_non_null(
		strstr(sm_perf_unavailable_reason(&p, SM_PERF_CACHE_REFERENCES, buf, sizeof(buf)),
		       "not permitted: lower /proc/sys/kernel/perf_event_paranoid or run as root"));
	sm_perf_unavailable_reason(&p, SM_PERF_CACHE_MISSES, buf, sizeof(buf));
	assert_non_null(strstr(buf, strerror(EINVAL)));
	assert_non_null(strstr(buf, "perf_event_open failed"));
	sm_perf_unavailable_reason(&p, SM_PERF_TASK_CLOCK, buf, sizeof(buf));
	assert_null(strstr(buf, "PMU"));
	assert_non_null(strstr(buf, "perf_event_open failed"));

	/* One failure did not take the others down. */
	assert_true(p.fd[SM_PERF_BRANCH_MISSES] >= 0);
	assert_true(p.fd[SM_PERF_CONTEXT_SWITCHES] >= 0);
	assert_true(p.fd[SM_PERF_PAGE_FAULTS] >= 0);
	assert_null(sm_perf_unavailable_reason(&p, SM_PERF_PAGE_FAULTS, buf, sizeof(buf)));

	/* Short buffers truncate, never overflow. */
	memset(buf, 'x', sizeof(buf));
	sm_perf_unavailable_reason(&p, SM_PERF_INSTRUCTIONS, buf, 8);
	assert_int_equal(strlen(buf), 7);
	assert_int_equal(buf[8], 'x');
	sm_perf_close(&p);
	assert_int_equal(p.fd[SM_PERF_PAGE_FAULTS], -1);
}

static void
test_read_and_scaling(void **state)
{
	struct sm_perf p;
	uint64_t val;

	(void)state;
	/* Not multiplexed: value as is. */
	fake[SM_PERF_INSTRUCTIONS] = (struct fake_counter){ 0, { 1000, 50, 50 }, 24 };
	/* Ran half the time: doubled. */
	fake[SM_PERF_CYCLES] = (struct fake_counter){ 0, { 1000, 200, 100 }, 24 };
	/* Large enough that value * enabled overflows 64 bits. */
	fake[SM_PERF_CACHE_REFERENCES] =
		(struct fake_counter){ 0, { 1ull << 62, 3ull << 40, 3ull << 39 }, 24 };
	/* Never ran: not scaled (no division by zero). */
	fake[SM_PERF_CACHE_MISSES] = (struct fake_counter){ 0, { 7, 100, 0 }, 24 };
	/* Short read: unavailable, val untouched. */
	fake[SM_PERF_BRANCH_MISSES] = (struct fake_counter){ 0, { 9, 9, 9 }, 10 };
	fake[SM_PERF_TASK_CLOCK].err = ENOENT;
	fake[SM_PERF_CONTEXT_SWITCHES].err = ENOENT;
	fake[SM_PERF_PAGE_FAULTS].err = ENOENT;
	sm_perf_open(&p);

	assert_true(sm_perf_read(&p, SM_PERF_INSTRUCTIONS, &val));
	assert_int_equal(val, 1000);
	assert_true(sm_perf_read(&p, SM_PERF_CYCLES, &val));
	assert_int_equal(val, 2000);
	assert_true(sm_perf_read(&p, SM_PERF_CACHE_REFERENCES, &val));
	assert_int_equal(val, 1ull << 63);
	assert_true(sm_perf_read(&p, SM_PERF_CACHE_MISSES, &val));
	assert_int_equal(val, 7);
	val = 42;
	assert_false(sm_perf_read(&p, SM_PERF_BRANCH_MISSES, &val));
	assert_int_equal(val, 42);
	/* The pipe is drained: a failing read is unavailable, not 0. */
	assert_false(sm_perf_read(&p, SM_PERF_INSTRUCTIONS, &val));
	assert_int_equal(val, 42);
	sm_perf_close(&p);
}

static void
test_real_syscall_readable_xor_reason(void **state)
{
	char buf[512];
	struct sm_perf p;
	uint64_t val;
	volatile uint64_t sink = 0;
	bool readable, reason;
	int c, i;

	(void)state;
	sm_perf_set_open_fn(NULL);
	assert_int_equal(sm_perf_open(&p), 0);
	/* Some user-space work so available counters have something to count. */
	for (i = 0; i < 1000000; i++)
		sink += (uint64_t)i;
	assert_true(sink > 0);
	for (c = 0; c < SM_PERF_NR; c++) {
		readable = sm_perf_read(&p, c, &val);
		reason = sm_perf_unavailable_reason(&p, c, buf, sizeof(buf)) != NULL;
		print_message("  %-16s %s\n", sm_perf_counter_name(c),
			      readable ? "available" : buf);
		if (readable == reason)
			fail_msg("%s: readable=%d reason=%d", sm_perf_counter_name(c), readable,
				 reason);
	}
	sm_perf_close(&p);
}

/* Two shards: no PMU on either, page-faults refused on one for another reason. */
static void
make_snaps(struct sm_shard_snapshot s[2])
{
	int i, c;

	memset(s, 0, 2 * sizeof(*s));
	for (i = 0; i < 2; i++) {
		s[i].shard = (unsigned)i;
		s[i].cpu = i == 0 ? 2 : -1;
		s[i].sw.tasks_run = 1000 + (uint64_t)i;
		s[i].sw.polls = 77;
		s[i].sw.allocs = 5;
		s[i].sw.mem_in_use = i == 0 ? 4096 : -128;
		s[i].sw.conns_opened = 10;
		s[i].sw.conns_closed = i == 0 ? 3 : 12;
		s[i].sw.requests = 31337;
		for (c = 0; c < SM_PERF_NR; c++) {
			if (is_hw(c)) {
				s[i].perf_err[c] = ENOENT;
			} else {
				s[i].perf_ok[c] = true;
				s[i].perf[c] = 100 + (uint64_t)c;
			}
		}
		s[i].perf[SM_PERF_TASK_CLOCK] = 2500000; /* 2.5 ms */
	}
	s[1].perf_ok[SM_PERF_PAGE_FAULTS] = false;
	s[1].perf_err[SM_PERF_PAGE_FAULTS] = EACCES;
}

static unsigned
count(const char *hay, const char *needle);

static void
test_print_table(void **state)
{
	struct sm_shard_snapshot s[2];
	char *out = NULL;
	size_t outlen = 0;
	FILE *f;

	(void)state;
	make_snaps(s);
	f = open_memstream(&out, &outlen);
	assert_non_null(f);
	sm_stats_print_table(f, s, 2);
	fclose(f);
	printf("%s", out);

	assert_non_null(strstr(out, "shard"));
	assert_non_null(strstr(out, "instructions"));
	assert_non_null(strstr(out, "n/a"));
	assert_non_null(strstr(out, "31337"));
	assert_non_null(strstr(out, "1001"));
	assert_non_null(strstr(out, "-128"));
	assert_non_null(strstr(out, "2.5"));
	assert_non_null(strstr(out, "107")); /* page-faults on shard 0 */
	/* One line per reason and set of shards, naming every counter it covers. */
	assert_non_null(strstr(out, "  instructions, cycles, cache-misses, branch-misses: n/a on "
				    "shard(s) 0,1 \u2014 no hardware PMU on this machine"));
	assert_int_equal(count(out, "no hardware PMU"), 1);
	assert_null(strstr(out, strerror(ENOENT)));
	assert_non_null(strstr(out, "  page-faults: n/a on shard(s) 1 \u2014 not permitted"));
	assert_null(strstr(out, "task-clock: n/a"));

	/* Header plus one row per shard, all the same width (aligned columns). */
	{
		char *l1 = out, *l2 = strchr(l1, '\n') + 1, *l3 = strchr(l2, '\n') + 1;

		assert_int_equal(strchr(l1, '\n') - l1, strchr(l2, '\n') - l2);
		assert_int_equal(strchr(l2, '\n') - l2, strchr(l3, '\n') - l3);
	}
	free(out);
}

static unsigned
count(const char *hay, const char *needle)
{
	unsigned n = 0;

	while ((hay = strstr(hay, needle)) != NULL) {
		n++;
		hay++;
	}
	return n;
}

static void
test_prometheus(void **state)
{
	struct sm_shard_snapshot s[2];
	char *full, small[64], want[256];
	size_t need, n;

	(void)state;
	make_snaps(s);
	need = sm_stats_format_prometheus(NULL, 0, s, 2);
	assert_true(need > 0);
	full = malloc(need + 1);
	assert_non_null(full);
	n = sm_stats_format_prometheus(full, need + 1, s, 2);
	assert_int_equal(n, need);
	assert_int_equal(strlen(full), need);

	assert_non_null(strstr(full, "# TYPE shardmark_tasks_run_total counter\n"));
	assert_non_null(strstr(full, "shardmark_tasks_run_total{shard=\"0\"} 1000\n"));
	assert_non_null(strstr(full, "shardmark_tasks_run_total{shard=\"1\"} 1001\n"));
	assert_non_null(strstr(full, "# TYPE shardmark_mem_in_use_bytes gauge\n"));
	assert_non_null(strstr(full, "shardmark_mem_in_use_bytes{shard=\"1\"} -128\n"));
	assert_non_null(strstr(full, "shardmark_connections_active{shard=\"0\"} 7\n"));
	assert_non_null(strstr(full, "shardmark_requests_total{shard=\"0\"} 31337\n"));
	/* HELP/TYPE once per family. */
	assert_int_equal(count(full, "# TYPE shardmark_tasks_run_total "), 1);
	assert_int_equal(count(full, "# HELP shardmark_tasks_run_total "), 1);
	assert_int_equal(count(full, "# TYPE shardmark_perf_available "), 1);
	assert_int_equal(count(full, "# TYPE shardmark_perf_task_clock_total "), 1);
	assert_int_equal(count(full, "shardmark_perf_available{"), 2 * SM_PERF_NR);

	/* Available perf counters are samples; unavailable ones are never 0s. */
	assert_non_null(strstr(full, "shardmark_perf_task_clock_total{shard=\"0\"} 2500000\n"));
	assert_non_null(strstr(full, "shardmark_perf_page_faults_total{shard=\"0\"} 107\n"));
	assert_null(strstr(full, "shardmark_perf_page_faults_total{shard=\"1\"}"));
	assert_null(strstr(full, "shardmark_perf_instructions_total"));
	assert_non_null(
		strstr(full, "shardmark_perf_available{shard=\"0\",counter=\"instructions\"} 0\n"));
	assert_non_null(
		strstr(full, "shardmark_perf_available{shard=\"0\",counter=\"task-clock\"} 1\n"));
	assert_non_null(
		strstr(full, "shardmark_perf_available{shard=\"1\",counter=\"page-faults\"} 0\n"));
	snprintf(want, sizeof(want),
		 "# shardmark_perf_unavailable shard=1 counter=page-faults reason=\"not "
		 "permitted");
	assert_non_null(strstr(full, want));

	/* snprintf semantics: the needed length, truncated and terminated, no overflow. */
	memset(small, 'x', sizeof(small));
	n = sm_stats_format_prometheus(small, 40, s, 2);
	assert_int_equal(n, need);
	assert_int_equal(strlen(small), 39);
	assert_memory_equal(small, full, 39);
	assert_int_equal(small[40], 'x');
	memset(small, 'x', sizeof(small));
	assert_int_equal(sm_stats_format_prometheus(small, 1, s, 2), need);
	assert_int_equal(small[0], '\0');
	assert_int_equal(small[1], 'x');
	/* Exactly need bytes: one short of the terminator. */
	memset(full, 'x', need + 1);
	assert_int_equal(sm_stats_format_prometheus(full, need, s, 2), need);
	assert_int_equal(strlen(full), need - 1);
	free(full);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test_setup_teardown(test_all_fail_unavailable_never_zero, reset_fake,
						restore_open),
		cmocka_unit_test_setup_teardown(test_attrs, reset_fake, restore_open),
		cmocka_unit_test_setup_teardown(test_hints_by_errno, reset_fake, restore_open),
		cmocka_unit_test_setup_teardown(test_read_and_scaling, reset_fake, restore_open),
		cmocka_unit_test(test_real_syscall_readable_xor_reason),
		cmocka_unit_test(test_print_table),
		cmocka_unit_test(test_prometheus),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
