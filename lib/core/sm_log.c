/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sm_clock.h"
#include "sm_common.h"
#include "sm_log.h"
#include "sm_shard.h"

#define SM_LOG_LINE_MAX 1024

/* Written by the control thread, read by every shard: relaxed atomics. */
static int sm_log_level = SM_LOG_INFO;

static const char *const sm_log_names[] = {
	[SM_LOG_ERR] = "ERROR",
	[SM_LOG_WARN] = "WARN",
	[SM_LOG_INFO] = "INFO",
	[SM_LOG_DEBUG] = "DEBUG",
};

static const char *const sm_log_parse_names[] = {
	[SM_LOG_ERR] = "error",
	[SM_LOG_WARN] = "warn",
	[SM_LOG_INFO] = "info",
	[SM_LOG_DEBUG] = "debug",
};

void
sm_log_set_level(enum sm_log_level level)
{
	SM_WRITE_ONCE(sm_log_level, (int)level);
}

enum sm_log_level
sm_log_get_level(void)
{
	return (enum sm_log_level)SM_READ_ONCE(sm_log_level);
}

const char *
sm_log_level_name(enum sm_log_level level)
{
	return (unsigned)level < SM_ARRAY_SIZE(sm_log_parse_names) ? sm_log_parse_names[level]
								    : "info";
}

int
sm_log_parse_level(const char *name, enum sm_log_level *level)
{
	size_t i;

	if (name == NULL)
		return -EINVAL;
	for (i = 0; i < SM_ARRAY_SIZE(sm_log_parse_names); i++) {
		if (strcmp(name, sm_log_parse_names[i]) == 0) {
			*level = (enum sm_log_level)i;
			return 0;
		}
	}
	return -EINVAL;
}

void
sm_log(enum sm_log_level level, const char *fmt, ...)
{
	char line[SM_LOG_LINE_MAX];
	const char *name;
	size_t pos;
	va_list ap;
	int saved_errno = errno;
	int n;

	if ((int)level > SM_READ_ONCE(sm_log_level))
		return;
	name = (unsigned)level < SM_ARRAY_SIZE(sm_log_names) ? sm_log_names[level] : "?";

	if (sm_on_shard())
		n = snprintf(line, sizeof(line), "shardmark[shard %u] %s: ", sm_shard_id(), name);
	else
		n = snprintf(line, sizeof(line), "shardmark %s: ", name);
	pos = n < 0 ? 0 : SM_MIN((size_t)n, sizeof(line) - 1);

	va_start(ap, fmt);
	n = vsnprintf(line + pos, sizeof(line) - pos, fmt, ap);
	va_end(ap);
	if (n > 0)
		pos = SM_MIN(pos + (size_t)n, sizeof(line) - 1);

	/* Truncated lines lose their tail, never their newline. */
	if (pos > 0 && line[pos - 1] == '\n')
		pos--;
	line[pos++] = '\n';

	/* One write(2) so concurrent lines do not interleave; retry only EINTR. */
	while (write(STDERR_FILENO, line, pos) < 0 && errno == EINTR)
		;
	/* Logging must not clobber the errno the caller is about to report. */
	errno = saved_errno;
}

bool
sm_ratelimit_ok(struct sm_ratelimit *rl, unsigned interval_ms, uint64_t *suppressed)
{
	uint64_t now = sm_now_ms();

	if (now < rl->next_ms) {
		rl->suppressed++;
		return false;
	}
	*suppressed = rl->suppressed;
	rl->suppressed = 0;
	rl->next_ms = now + interval_ms;
	return true;
}
