/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_COMMITLOG_H
#define SM_COMMITLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sm_core.h"

/*
 * lib/commitlog: one append-only log per shard, so that what the store
 * applied survives a restart (ScyllaDB's db/commitlog/commitlog.cc is the
 * model: segments, sync modes, a checksum per entry, replay at start).
 *
 * Each shard owns a small io_uring of its own (the network driver's ring is
 * the driver's, and the DPDK driver has none); its completions wake the
 * reactor through the shard's wakeup eventfd (io_uring_register_eventfd),
 * and a poller reaps them. Segment files are preallocated (fallocate), held
 * as registered (fixed) files and written from registered, 4 KiB aligned
 * buffers with O_DIRECT where the filesystem has it. On the reactor thread
 * only start-up and shutdown make blocking system calls; new segments are
 * opened, preallocated and headed through the ring.
 *
 * The payload of a record is the caller's (lib/store encodes mutations and
 * schema changes); this library frames it: a 16-byte header with a CRC32C
 * over header and payload, records 16-byte aligned, a pad record before a
 * 4 KiB boundary where a write ends. A zero header ends a segment's data;
 * anything else that does not check is a torn or corrupt tail, where replay
 * of that segment stops.
 *
 * Sync modes (commitlog_sync): periodic writes as buffers fill and syncs
 * every commitlog_sync_period_in_ms, acknowledging before the sync (what
 * ScyllaDB does: a crash of the machine may lose the last period, a crash
 * of the process loses what was not yet written); batch acknowledges a
 * write once the fdatasync that covers it is done, one sync covering every
 * write appended while the previous one was in flight (group commit).
 */

enum sm_clog_mode {
	SM_CLOG_OFF,
	SM_CLOG_PERIODIC,
	SM_CLOG_BATCH,
};

/* Record types 1..255 are the caller's; 0 is the framing's pad. */
#define SM_CLOG_TYPE_PAD 0

/* The largest payload a record may carry: a buffer less its header. */
#define SM_CLOG_BUF_SIZE (1u << 20)
#define SM_CLOG_MAX_PAYLOAD (SM_CLOG_BUF_SIZE - 16u)

struct sm_clog_config {
	enum sm_clog_mode mode;
	const char *dir;
	uint64_t segment_size; /* bytes, a multiple of 1 MiB */
	uint64_t total_space;  /* bytes, all shards together */
	unsigned period_ms;    /* periodic: between two syncs */
	unsigned nshards;
};

/* The running mode; SM_CLOG_OFF until sm_clog_init() turns it on. */
extern enum sm_clog_mode sm_clog_mode;

/* Parse "off", "periodic" or "batch"; -EINVAL otherwise. */
int
sm_clog_mode_parse(const char *s, enum sm_clog_mode *mode);

/*
 * Before the shards start (blocking calls are fine): create the directory,
 * find out whether it takes O_DIRECT (tmpfs may not: buffered writes then,
 * said once), list the segments already there, and check that they were
 * written with as many shards as run now (a partition's records are in its
 * owner's log). Returns 0, or -errno with the cause and the fix in @err.
 */
int
sm_clog_init(const struct sm_clog_config *conf, char *err, size_t errlen);

/* After the shards stopped: forget the segment list and the mode. */
void
sm_clog_cleanup(void);

struct sm_clog_replay_stats {
	unsigned segments;
	uint64_t records;
	uint64_t bytes;	  /* bytes of the segments read */
	unsigned corrupt; /* segments whose replay stopped at a bad record */
};

/*
 * Read the segments of @shard that sm_clog_init() found, oldest first, and
 * call fn() with each record's type and payload (valid during the call).
 * fn() returning < 0 stops the replay with that error. A segment whose
 * header does not check is skipped, and one with a record that does not
 * check stops there: both with a log line naming the file and offset.
 * Blocking reads: for start-up, on the shard's thread before its loop.
 */
int
sm_clog_replay(unsigned shard,
	       int (*fn)(void *ctx, uint8_t type, const uint8_t *p, uint32_t len), void *ctx,
	       struct sm_clog_replay_stats *st);

/*
 * On each shard after its replay: the ring, the buffers, a fresh segment
 * and a spare. Returns 0 or -errno (logged with the fix).
 */
int
sm_clog_shard_init(void);

/* Write and sync what is buffered (blocking), close the segments. */
void
sm_clog_shard_fini(void);

/*
 * Room for a record of @len payload bytes in the calling shard's log: a
 * pointer to write the payload at, then sm_clog_commit() with the same
 * length, or nothing (an abandoned reservation is overwritten by the next
 * one). NULL with *ret set when the log cannot take it: -EFBIG (larger
 * than SM_CLOG_MAX_PAYLOAD or a segment), -ENOSPC (commitlog_total_space
 * spent), -EBUSY (every buffer is still being written), -EIO (a write or
 * sync failed earlier). sm_clog_error() words each for a client.
 */
void *
sm_clog_reserve(uint32_t len, int *ret);

/* Frame the reserved record; returns the log position just past it. */
uint64_t
sm_clog_commit(uint8_t type, void *payload, uint32_t len);

/* A message for a client about sm_clog_reserve()'s error @ret. */
void
sm_clog_error(int ret, uint32_t len, char *err, size_t errlen);

/*
 * Waiting for durability (batch mode): an intrusive node in the waiting
 * request. Its task is scheduled on the calling shard once a sync has
 * covered @pos; @result is 0 then, or -EIO when the write or sync failed.
 * No allocation and no lock: waiters queue in position order.
 */
struct sm_clog_waiter {
	struct sm_task task;
	struct sm_clog_waiter *next;
	uint64_t pos;
	int result;
};

void
sm_clog_wait(struct sm_clog_waiter *w, uint64_t pos, void (*fn)(void *arg), void *arg);

/*
 * Room to wait for: after sm_clog_reserve() said -EBUSY (every buffer still
 * being written, or the next segment not ready yet), the task of @w runs
 * once a write or a segment completes, to try again (@result -EIO when the
 * log failed meanwhile). The same node as sm_clog_wait(); one at a time.
 */
void
sm_clog_wait_space(struct sm_clog_waiter *w, void (*fn)(void *arg), void *arg);

/* Counters of the calling shard's log (for the metrics and benchmarks). */
struct sm_clog_stats {
	uint64_t records;
	uint64_t bytes;	 /* framed bytes appended */
	uint64_t writes; /* write submissions */
	uint64_t syncs;	 /* fdatasync rounds completed */
	uint64_t synced_records;
	uint64_t segments; /* segments created by this run */
};

void
sm_clog_get_stats(unsigned shard, struct sm_clog_stats *st);

/*
 * Prometheus text of every shard's counters (shardmark_commitlog_*), as
 * snprintf(): the length it needs, writing what fits; nothing when off.
 */
size_t
sm_clog_format_prometheus(char *buf, size_t len, unsigned nshards);

/* CRC32C (Castagnoli) of @len bytes, continuing @crc (0 to start). */
uint32_t
sm_crc32c(uint32_t crc, const void *p, size_t len);

#endif /* SM_COMMITLOG_H */
