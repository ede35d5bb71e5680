/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CLOG_PRIV_H
#define CLOG_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The on-disk format, shared by the writer and the replay.
 *
 * A segment, CommitLog-<shard>-<seq>.log, is preallocated to
 * commitlog_segment_size_in_mb and starts with a 4 KiB header block:
 *   0  "SMCLOG01"   8 bytes
 *   8  version      be32 (1)
 *  12  shard        be32
 *  16  shards       be32 (the --smp that wrote it)
 *  20  block        be32 (4096)
 *  24  seq          be64
 *  32  segment size be64
 *  40  crc32c       be32 of bytes 0..39
 * Records follow, each 16-byte aligned:
 *   0  crc32c       be32 of bytes 4 .. 16 + len
 *   4  len          be32 payload bytes
 *   8  magic        be16 0xC17C
 *  10  type         u8 (0: pad)
 *  11  0
 *  12  seq          be32, the segment's seq (low bits): a stale record does not check
 *  16  payload, then zeros to the next 16-byte boundary
 * A header of zeros ends the data (fallocate's zeros).
 */
#define SM_CLOG_MAGIC "SMCLOG01"
#define SM_CLOG_VERSION 1
#define SM_CLOG_BLOCK 4096u
#define SM_CLOG_HDR_SIZE 4096u
#define SM_CLOG_REC_HDR 16u
#define SM_CLOG_REC_MAGIC 0xC17C

struct clog_seg {
	unsigned shard;
	uint64_t seq;
	bool empty; /* replay found no record in it: removed at the shard's start */
};

/* Set before the shards start, read-only after. */
struct clog_global {
	char *dir;
	uint64_t segment_size;
	uint64_t total_space;
	unsigned period_ms;
	unsigned nshards;
	bool direct;
	struct clog_seg *segs; /* sorted by shard, then seq */
	unsigned nsegs;
};

extern struct clog_global clog_g;

void
clog_segment_path(char *buf, size_t len, unsigned shard, uint64_t seq);

void
clog_header_build(uint8_t *h, unsigned shard, uint64_t seq);

#endif /* CLOG_PRIV_H */
