/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_LOG_H
#define SM_LOG_H

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

/* Parse "error", "warn", "info" or "debug"; -EINVAL for anything else. */
int
sm_log_parse_level(const char *name, enum sm_log_level *level);

/* Print one line at @level (a trailing newline is added). */
void
sm_log(enum sm_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define SM_ERR(...) sm_log(SM_LOG_ERR, __VA_ARGS__)
#define SM_WARN(...) sm_log(SM_LOG_WARN, __VA_ARGS__)
#define SM_INFO(...) sm_log(SM_LOG_INFO, __VA_ARGS__)
#define SM_DEBUG(...) sm_log(SM_LOG_DEBUG, __VA_ARGS__)

#endif /* SM_LOG_H */
