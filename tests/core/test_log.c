/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sm_log.h"

/* One line per interval, the rest counted and reported with the next. */
static void
test_ratelimit(void **state)
{
	struct sm_ratelimit rl = { 0 };
	uint64_t suppressed = 99;
	int i;

	(void)state;
	assert_true(sm_ratelimit_ok(&rl, 60000, &suppressed));
	assert_int_equal(suppressed, 0);
	for (i = 0; i < 5; i++)
		assert_false(sm_ratelimit_ok(&rl, 60000, &suppressed));
	assert_int_equal(rl.suppressed, 5);
	rl.next_ms = 0; /* the interval has passed */
	assert_true(sm_ratelimit_ok(&rl, 60000, &suppressed));
	assert_int_equal(suppressed, 5);
	assert_int_equal(rl.suppressed, 0);
}

/*
 * stderr goes into a pipe only between capture_begin() and capture_end(), so
 * cmocka's failure messages (also on stderr) are never swallowed.
 */
static int pipe_rd = -1;
static int pipe_wr = -1;
static int saved_stderr = -1;

static int
setup(void **state)
{
	int fds[2];

	(void)state;
	if (pipe2(fds, O_NONBLOCK) < 0)
		return -1;
	pipe_rd = fds[0];
	pipe_wr = fds[1];
	saved_stderr = dup(STDERR_FILENO);
	sm_log_set_level(SM_LOG_INFO);
	return saved_stderr < 0 ? -1 : 0;
}

static int
teardown(void **state)
{
	(void)state;
	close(saved_stderr);
	close(pipe_rd);
	close(pipe_wr);
	return 0;
}

static void
capture_begin(void)
{
	dup2(pipe_wr, STDERR_FILENO);
}

/* Restore stderr and return what was logged since capture_begin(). */
static size_t
capture_end(char *buf, size_t len)
{
	ssize_t n;

	dup2(saved_stderr, STDERR_FILENO);
	n = read(pipe_rd, buf, len - 1);
	if (n < 0)
		n = 0;
	buf[n] = '\0';
	return (size_t)n;
}

static void
test_format(void **state)
{
	char buf[4096];

	(void)state;
	capture_begin();
	sm_log(SM_LOG_INFO, "hello %d", 42);
	capture_end(buf, sizeof(buf));
	assert_string_equal(buf, "shardmark INFO: hello 42\n");
	capture_begin();
	SM_ERR("port %u in use", 9042u);
	capture_end(buf, sizeof(buf));
	assert_string_equal(buf, "shardmark ERROR: port 9042 in use\n");
	capture_begin();
	SM_WARN("w");
	capture_end(buf, sizeof(buf));
	assert_string_equal(buf, "shardmark WARN: w\n");
	/* A trailing newline in the message is not doubled. */
	capture_begin();
	SM_INFO("line\n");
	capture_end(buf, sizeof(buf));
	assert_string_equal(buf, "shardmark INFO: line\n");
}

static void
test_level_filter(void **state)
{
	char buf[4096];

	(void)state;
	capture_begin();
	SM_DEBUG("hidden");
	assert_int_equal(capture_end(buf, sizeof(buf)), 0);
	sm_log_set_level(SM_LOG_DEBUG);
	capture_begin();
	SM_DEBUG("shown");
	capture_end(buf, sizeof(buf));
	assert_string_equal(buf, "shardmark DEBUG: shown\n");
	sm_log_set_level(SM_LOG_ERR);
	capture_begin();
	SM_WARN("hidden");
	SM_INFO("hidden");
	assert_int_equal(capture_end(buf, sizeof(buf)), 0);
	capture_begin();
	SM_ERR("e");
	capture_end(buf, sizeof(buf));
	assert_string_equal(buf, "shardmark ERROR: e\n");
	sm_log_set_level(SM_LOG_INFO);
}

static void
test_truncation(void **state)
{
	char big[3000], buf[4096];
	size_t n;

	(void)state;
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	capture_begin();
	SM_INFO("%s", big);
	n = capture_end(buf, sizeof(buf));
	/* One line of at most 1024 bytes, still ending in a newline. */
	assert_int_equal(n, 1024);
	assert_int_equal(buf[n - 1], '\n');
	assert_int_equal(buf[n - 2], 'a');
	assert_memory_equal(buf, "shardmark INFO: aaa", 19);
}

static void
test_errno_preserved(void **state)
{
	char buf[256];
	int err;

	(void)state;
	capture_begin();
	errno = EADDRINUSE;
	SM_ERR("x");
	/* Checked before capture_end(), whose dup2 and read may set errno. */
	err = errno;
	capture_end(buf, sizeof(buf));
	assert_int_equal(err, EADDRINUSE);
	assert_string_equal(buf, "shardmark ERROR: x\n");
}

static void
test_parse_level(void **state)
{
	enum sm_log_level l = SM_LOG_INFO;

	(void)state;
	assert_int_equal(sm_log_parse_level("error", &l), 0);
	assert_int_equal(l, SM_LOG_ERR);
	assert_int_equal(sm_log_parse_level("warn", &l), 0);
	assert_int_equal(l, SM_LOG_WARN);
	assert_int_equal(sm_log_parse_level("info", &l), 0);
	assert_int_equal(l, SM_LOG_INFO);
	assert_int_equal(sm_log_parse_level("debug", &l), 0);
	assert_int_equal(l, SM_LOG_DEBUG);
	l = SM_LOG_WARN;
	assert_int_equal(sm_log_parse_level("verbose", &l), -EINVAL);
	assert_int_equal(sm_log_parse_level("", &l), -EINVAL);
	assert_int_equal(sm_log_parse_level("info ", &l), -EINVAL);
	assert_int_equal(sm_log_parse_level(NULL, &l), -EINVAL);
	assert_int_equal(l, SM_LOG_WARN);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format),	    cmocka_unit_test(test_level_filter),
		cmocka_unit_test(test_truncation),  cmocka_unit_test(test_errno_preserved),
		cmocka_unit_test(test_parse_level),
		cmocka_unit_test(test_ratelimit),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
