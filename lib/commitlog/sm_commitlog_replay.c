/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reading a shard's segments back at start (ScyllaDB's
 * db/commitlog/commitlog_replayer.cc plays this part there): records in
 * order, stopping a segment at the first one that does not check.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clog_priv.h"
#include "sm_commitlog.h"

#define READ_CHUNK (1u << 20)

/* A segment read as far as its records go, not to its preallocated end. */
struct seg_reader {
	int fd;
	uint8_t *buf;
	size_t size; /* the file's */
	size_t got;  /* bytes read into buf */
	int err;
};

/* Make buf hold at least @upto bytes (or the whole file); false when it cannot. */
static bool
ensure(struct seg_reader *sr, size_t upto)
{
	ssize_t n;

	if (upto > sr->size)
		return false;
	while (sr->got < upto) {
		size_t want = SM_MIN(SM_MAX(upto - sr->got, (size_t)READ_CHUNK), sr->size - sr->got);

		n = pread(sr->fd, sr->buf + sr->got, want, (off_t)sr->got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			sr->err = n < 0 ? -errno : 0;
			sr->size = sr->got; /* shorter than it said */
			return false;
		}
		sr->got += (size_t)n;
	}
	return true;
}

static bool
all_zero(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != 0)
			return false;
	return true;
}

/* Check a segment's header; -EINVAL (logged) for one written by another layout. */
static int
check_header(const uint8_t *h, size_t got, const char *path, unsigned shard, uint64_t seq)
{
	if (got < SM_CLOG_HDR_SIZE || memcmp(h, SM_CLOG_MAGIC, 8) != 0 ||
	    sm_get_be32(h + 40) != sm_crc32c(0, h, 40) || sm_get_be64(h + 24) != seq ||
	    sm_get_be32(h + 12) != shard) {
		SM_WARN("commitlog: %s has no valid header (the server stopped while creating "
			"it?): skipped",
			path);
		return 1;
	}
	if (sm_get_be32(h + 8) != SM_CLOG_VERSION) {
		SM_ERR("commitlog: %s has format version %u, this shardmark reads %u: move the "
		       "commitlog_directory away",
		       path, sm_get_be32(h + 8), SM_CLOG_VERSION);
		return -EINVAL;
	}
	if (sm_get_be32(h + 16) != clog_g.nshards) {
		SM_ERR("commitlog: %s was written by a server with %u shards and %u run now: a "
		       "partition's records are in its owner's log, so start with --smp %u (or "
		       "move commitlog_directory away to start empty)",
		       path, sm_get_be32(h + 16), clog_g.nshards, sm_get_be32(h + 16));
		return -EINVAL;
	}
	return 0;
}

static int
replay_records(struct seg_reader *sr, const char *path, uint64_t seq,
	       int (*fn)(void *ctx, uint8_t type, const uint8_t *p, uint32_t len), void *ctx,
	       struct sm_clog_replay_stats *st, uint64_t *records)
{
	size_t off;
	int ret;

	for (off = SM_CLOG_HDR_SIZE; ensure(sr, off + SM_CLOG_REC_HDR);) {
		const uint8_t *h = sr->buf + off;
		const char *why = NULL;
		uint32_t len;

		if (all_zero(h, SM_CLOG_REC_HDR))
			return 0; /* the end of what was written */
		len = sm_get_be32(h + 4);
		if (sm_get_be16(h + 8) != SM_CLOG_REC_MAGIC || h[11] != 0)
			why = "bad record header";
		else if (sm_get_be32(h + 12) != (uint32_t)seq)
			why = "a record of another segment";
		else if (!ensure(sr, off + SM_CLOG_REC_HDR + (size_t)len))
			why = "a record longer than the segment";
		else if (sm_get_be32(sr->buf + off) !=
			 sm_crc32c(0, sr->buf + off + 4, SM_CLOG_REC_HDR - 4 + len))
			why = "bad checksum";
		if (why != NULL) {
			SM_WARN("commitlog: %s: torn or corrupt record at offset %zu (%s): replay of "
				"this segment stops there (what follows in it is not replayed)",
				path, off, why);
			st->corrupt++;
			return 0;
		}
		h = sr->buf + off; /* ensure() does not move buf, but read it again */
		if (h[10] != SM_CLOG_TYPE_PAD) {
			ret = fn(ctx, h[10], h + SM_CLOG_REC_HDR, len);
			if (ret < 0)
				return ret;
			(*records)++;
		}
		off += (SM_CLOG_REC_HDR + (size_t)len + 15u) & ~(size_t)15u;
	}
	return sr->err;
}

static int
replay_segment(struct clog_seg *seg, const char *path, uint8_t *buf, size_t size,
	       int (*fn)(void *ctx, uint8_t type, const uint8_t *p, uint32_t len), void *ctx,
	       struct sm_clog_replay_stats *st)
{
	struct seg_reader sr = { .buf = buf, .size = size };
	uint64_t records = 0;
	int ret;

	sr.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (sr.fd < 0) {
		SM_ERR("commitlog: cannot open %s: %s", path, strerror(errno));
		return -errno;
	}
	ensure(&sr, SM_CLOG_HDR_SIZE);
	ret = sr.err < 0 ? sr.err : check_header(buf, sr.got, path, seg->shard, seg->seq);
	if (ret == 0) {
		st->segments++;
		ret = replay_records(&sr, path, seg->seq, fn, ctx, st, &records);
	}
	close(sr.fd);
	st->bytes += sr.got;
	st->records += records;
	/* a spare never written to, or one a crash left without a header */
	seg->empty = ret >= 0 && records == 0;
	if (ret < 0 && sr.err < 0)
		SM_ERR("commitlog: reading %s: %s", path, strerror(-ret));
	return ret < 0 ? ret : 0;
}

int
sm_clog_replay(unsigned shard,
	       int (*fn)(void *ctx, uint8_t type, const uint8_t *p, uint32_t len), void *ctx,
	       struct sm_clog_replay_stats *st)
{
	char path[4096];
	uint8_t *buf = NULL;
	size_t cap = 0;
	unsigned i, n = 0, k = 0;
	int ret = 0;

	memset(st, 0, sizeof(*st));
	for (i = 0; i < clog_g.nsegs; i++)
		n += clog_g.segs[i].shard == shard;
	for (i = 0; i < clog_g.nsegs && ret == 0; i++) {
		struct stat sb;

		if (clog_g.segs[i].shard != shard)
			continue;
		k++;
		clog_segment_path(path, sizeof(path), shard, clog_g.segs[i].seq);
		if (stat(path, &sb) < 0) {
			SM_ERR("commitlog: %s: %s", path, strerror(errno));
			ret = -errno;
			break;
		}
		if ((size_t)sb.st_size > cap) {
			sm_free(buf);
			cap = (size_t)sb.st_size;
			buf = sm_malloc(cap);
			if (buf == NULL) {
				SM_ERR("commitlog: out of memory reading %s (%zu bytes)", path, cap);
				return -ENOMEM;
			}
		}
		if (n > 1)
			SM_INFO("commitlog: shard %u replaying segment %u of %u (%s)", shard, k, n,
				path);
		ret = replay_segment(&clog_g.segs[i], path, buf, (size_t)sb.st_size, fn, ctx, st);
	}
	sm_free(buf);
	return ret;
}
