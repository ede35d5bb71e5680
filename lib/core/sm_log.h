/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_LOG_H
#define SM_LOG_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Logging: one line per call on stderr, prefixed with the shard id when the
 * caller is a shard thread. Writes are a single write(2) so lines from
 * different shards never interleave. Not for per-request paths.
 */

enum sm_log_level {
	SM_LOG_ERR,
	SM_LOG_WARN,
	SM_LOG_INFO,
	SM_LOG_DEBUG,
};

/* Set the most verbose level printed (default SM_LOG_INFO). */
void
sm_log_set_level(enum sm_log_level level);

/* The most verbose level printed now. */
enum sm_log_level
sm_log_get_level(void);

/* "error", "warn", "info" or "debug". */
const char *
sm_log_level_name(enum sm_log_level level);

/* Parse "error", "warn", "info" or "debug"; -EINVAL for anything else. */
int
sm_log_parse_level(const char *name, enum sm_log_level *level);

/* Print one line at @level (a trailing newline is added). */
void
sm_log(enum sm_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * A rate limit for lines a client can provoke (accept failures, refused
 * requests): at most one line per interval, the rest counted. Owned by one
 * thread (a shard), like the Linux kernel's ratelimit_state.
 */
struct sm_ratelimit {
	uint64_t next_ms;    /* when the next line may go out */
	uint64_t suppressed; /* lines held back since the last one printed */
};

/*
 * True when a line may be printed now (then *@suppressed is how many were
 * held back before it, and the next one waits @interval_ms); false counts
 * the line as suppressed.
 */
bool
sm_ratelimit_ok(struct sm_ratelimit *rl, unsigned interval_ms, uint64_t *suppressed);

#define SM_ERR(...) sm_log(SM_LOG_ERR, __VA_ARGS__)
#define SM_WARN(...) sm_log(SM_LOG_WARN, __VA_ARGS__)
#define SM_INFO(...) sm_log(SM_LOG_INFO, __VA_ARGS__)
#define SM_DEBUG(...) sm_log(SM_LOG_DEBUG, __VA_ARGS__)

#endif /* SM_LOG_H */
