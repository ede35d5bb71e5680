/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The commitlog's write path: per-shard buffers, segments and syncs on the
 * shard's own io_uring. See sm_commitlog.h for the format and the modes.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <isa-l/crc.h>
#include <liburing.h>

#include "clog_priv.h"
#include "sm_commitlog.h"

enum sm_clog_mode sm_clog_mode = SM_CLOG_OFF;
struct clog_global clog_g;

#define NBUF 4	     /* data buffers per shard; the registered buffer NBUF is the header's */
#define NSLOTS 4     /* registered segment files per shard (segment seq % NSLOTS) */
#define RING_SIZE 64 /* more than one sync chain, one spare chain and NBUF writes */

/* What a completion is: user_data = kind << 8 | buffer or slot. */
enum {
	CQE_WRITE = 1,
	CQE_SYNC,
	CQE_SPARE_STEP,
	CQE_SPARE_DONE,
};

struct clog_shard {
	struct io_uring ring;
	void *mem; /* the buffers' allocation, before alignment */
	uint8_t *buf[NBUF];
	unsigned buf_inflight[NBUF];
	uint8_t *hdr;
	unsigned cur;	  /* buffer being filled */
	uint32_t fill;	  /* bytes of it used */
	uint32_t flushed; /* bytes of it submitted (a multiple of SM_CLOG_BLOCK) */
	uint64_t buf_off; /* segment offset of buf[cur][0] */
	uint64_t seq;	  /* current segment */
	unsigned slot;
	uint8_t dirty; /* slots written since the last sync began */
	bool have_seg;
	/* the next segment, prepared through the ring */
	bool spare_ready;
	bool spare_busy;
	int spare_err;
	uint64_t spare_seq;
	unsigned spare_slot;
	char spare_path[4096];
	uint64_t next_seq;
	uint64_t space_used; /* bytes of this shard's segments on disk */
	uint64_t space_limit;
	/* writes and syncs */
	unsigned writes_inflight;
	bool sync_inflight;
	bool sync_wanted; /* periodic: the period ended */
	unsigned sync_left;
	int sync_err;
	uint64_t sync_target;
	uint64_t sync_records;
	uint64_t durable;
	int failed;
	struct sm_clog_waiter *wait_head;
	struct sm_clog_waiter **wait_tail;
	struct sm_clog_waiter *space_head; /* waiting for a buffer or a segment */
	struct sm_timer timer;
	struct sm_clog_stats st;
};

static __thread struct clog_shard *cs;
static struct sm_clog_stats *stats_v[SM_MAX_SHARDS];

/* ---- checksums ---- */

/*
 * CRC32C through ISA-L (libisal, Debian's isa-l): crc32_iscsi() picks the
 * SSE4.2/PCLMUL code at run time, several GB/s, so a record's checksum
 * costs little next to its copy; lib/core has no CRC32C.
 */
uint32_t
sm_crc32c(uint32_t crc, const void *p, size_t len)
{
	return crc32_iscsi((unsigned char *)(uintptr_t)p, (int)len, crc);
}

int
sm_clog_mode_parse(const char *s, enum sm_clog_mode *mode)
{
	if (strcmp(s, "off") == 0)
		*mode = SM_CLOG_OFF;
	else if (strcmp(s, "periodic") == 0)
		*mode = SM_CLOG_PERIODIC;
	else if (strcmp(s, "batch") == 0)
		*mode = SM_CLOG_BATCH;
	else
		return -EINVAL;
	return 0;
}

void
sm_clog_get_stats(unsigned shard, struct sm_clog_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (shard < SM_MAX_SHARDS && stats_v[shard] != NULL) {
		st->records = SM_READ_ONCE(stats_v[shard]->records);
		st->bytes = SM_READ_ONCE(stats_v[shard]->bytes);
		st->writes = SM_READ_ONCE(stats_v[shard]->writes);
		st->syncs = SM_READ_ONCE(stats_v[shard]->syncs);
		st->synced_records = SM_READ_ONCE(stats_v[shard]->synced_records);
		st->segments = SM_READ_ONCE(stats_v[shard]->segments);
	}
}

size_t
sm_clog_format_prometheus(char *buf, size_t len, unsigned nshards)
{
	static const struct {
		const char *name, *help;
		size_t off;
	} m[] = {
		{ "records_total", "Records appended to the commitlog.",
		  offsetof(struct sm_clog_stats, records) },
		{ "bytes_total", "Bytes appended to the commitlog, framing and padding included.",
		  offsetof(struct sm_clog_stats, bytes) },
		{ "writes_total", "Commitlog write submissions.",
		  offsetof(struct sm_clog_stats, writes) },
		{ "syncs_total", "Commitlog fdatasync rounds completed.",
		  offsetof(struct sm_clog_stats, syncs) },
		{ "synced_records_total", "Records covered by a completed sync.",
		  offsetof(struct sm_clog_stats, synced_records) },
		{ "segments_created_total", "Commitlog segments created by this run.",
		  offsetof(struct sm_clog_stats, segments) },
	};
	size_t need = 0, k;
	unsigned i;
	int w;

	if (sm_clog_mode == SM_CLOG_OFF)
		return 0;
	for (k = 0; k < SM_ARRAY_SIZE(m); k++) {
		w = snprintf(need < len ? buf + need : NULL, need < len ? len - need : 0,
			     "# HELP shardmark_commitlog_%s %s\n# TYPE shardmark_commitlog_%s counter\n",
			     m[k].name, m[k].help, m[k].name);
		need += w > 0 ? (size_t)w : 0;
		for (i = 0; i < nshards; i++) {
			struct sm_clog_stats st;
			uint64_t v;

			sm_clog_get_stats(i, &st);
			memcpy(&v, (const char *)&st + m[k].off, sizeof(v));
			w = snprintf(need < len ? buf + need : NULL, need < len ? len - need : 0,
				     "shardmark_commitlog_%s{shard=\"%u\"} %" PRIu64 "\n", m[k].name,
				     i, v);
			need += w > 0 ? (size_t)w : 0;
		}
	}
	return need;
}

void
clog_segment_path(char *buf, size_t len, unsigned shard, uint64_t seq)
{
	snprintf(buf, len, "%s/CommitLog-%u-%" PRIu64 ".log", clog_g.dir, shard, seq);
}

void
clog_header_build(uint8_t *h, unsigned shard, uint64_t seq)
{
	memset(h, 0, SM_CLOG_HDR_SIZE);
	memcpy(h, SM_CLOG_MAGIC, 8);
	sm_put_be32(h + 8, SM_CLOG_VERSION);
	sm_put_be32(h + 12, shard);
	sm_put_be32(h + 16, clog_g.nshards);
	sm_put_be32(h + 20, SM_CLOG_BLOCK);
	sm_put_be64(h + 24, seq);
	sm_put_be64(h + 32, clog_g.segment_size);
	sm_put_be32(h + 40, sm_crc32c(0, h, 40));
}

/* ---- set-up before the shards ---- */

static int
list_segments(char *err, size_t errlen)
{
	struct dirent *de;
	DIR *d;

	d = opendir(clog_g.dir);
	if (d == NULL) {
		snprintf(err, errlen, "commitlog_directory %s: %s", clog_g.dir, strerror(errno));
		return -errno;
	}
	while ((de = readdir(d)) != NULL) {
		unsigned shard;
		uint64_t seq;
		char tail;
		struct clog_seg *v;

		if (sscanf(de->d_name, "CommitLog-%u-%" SCNu64 ".lo%c", &shard, &seq, &tail) != 3 ||
		    tail != 'g')
			continue;
		if (shard >= clog_g.nshards) {
			snprintf(err, errlen,
				 "commitlog_directory %s holds %s, written by a server with more "
				 "than %u shards: start with the --smp it had, or move the "
				 "directory away to start empty",
				 clog_g.dir, de->d_name, clog_g.nshards);
			closedir(d);
			return -EINVAL;
		}
		v = sm_realloc(clog_g.segs, (clog_g.nsegs + 1) * sizeof(*v));
		if (v == NULL) {
			closedir(d);
			snprintf(err, errlen, "out of memory listing the commitlog");
			return -ENOMEM;
		}
		clog_g.segs = v;
		clog_g.segs[clog_g.nsegs].shard = shard;
		clog_g.segs[clog_g.nsegs].seq = seq;
		clog_g.nsegs++;
	}
	closedir(d);
	return 0;
}

static int
seg_cmp(const void *a, const void *b)
{
	const struct clog_seg *x = a, *y = b;

	if (x->shard != y->shard)
		return x->shard < y->shard ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Whether files in the directory take O_DIRECT: tmpfs and some others refuse it. */
static bool
probe_direct(void)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/.o_direct_probe", clog_g.dir);
	fd = open(path, O_CREAT | O_WRONLY | O_DIRECT | O_CLOEXEC, 0644);
	if (fd < 0) {
		fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
		if (fd >= 0)
			close(fd);
		unlink(path);
		return false;
	}
	close(fd);
	unlink(path);
	return true;
}

int
sm_clog_init(const struct sm_clog_config *conf, char *err, size_t errlen)
{
	int ret;

	memset(&clog_g, 0, sizeof(clog_g));
	if (conf->mode == SM_CLOG_OFF)
		return 0;
	if (conf->segment_size < (1u << 20) || conf->segment_size % SM_CLOG_BLOCK != 0) {
		snprintf(err, errlen, "commitlog_segment_size_in_mb must be at least 1");
		return -EINVAL;
	}
	clog_g.dir = sm_strdup(conf->dir);
	if (clog_g.dir == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	clog_g.segment_size = conf->segment_size;
	clog_g.total_space = conf->total_space;
	clog_g.period_ms = conf->period_ms ? conf->period_ms : 10000;
	clog_g.nshards = conf->nshards;
	if (mkdir(clog_g.dir, 0755) < 0 && errno != EEXIST) {
		ret = -errno;
		snprintf(err, errlen, "commitlog_directory %s: cannot create it: %s", clog_g.dir,
			 strerror(errno));
		goto fail;
	}
	ret = list_segments(err, errlen);
	if (ret < 0)
		goto fail;
	if (clog_g.nsegs > 1)
		qsort(clog_g.segs, clog_g.nsegs, sizeof(*clog_g.segs), seg_cmp);
	clog_g.direct = probe_direct();
	if (!clog_g.direct)
		SM_INFO("commitlog: %s does not take O_DIRECT (tmpfs?): buffered writes, each "
			"still made durable by fdatasync",
			clog_g.dir);
	sm_clog_mode = conf->mode;
	return 0;
fail:
	sm_clog_cleanup();
	return ret;
}

void
sm_clog_cleanup(void)
{
	sm_free(clog_g.dir);
	sm_free(clog_g.segs);
	memset(&clog_g, 0, sizeof(clog_g));
	sm_clog_mode = SM_CLOG_OFF;
}

/* ---- writing ---- */

static inline uint64_t
log_pos(uint64_t seq, uint64_t off)
{
	return seq * clog_g.segment_size + off;
}

static struct io_uring_sqe *
get_sqe(void)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&cs->ring);

	if (sqe == NULL) {
		io_uring_submit(&cs->ring);
		sqe = io_uring_get_sqe(&cs->ring);
	}
	return sqe;
}

static void
release_waiters(int result)
{
	struct sm_clog_waiter *w;

	while ((w = cs->wait_head) != NULL && (result < 0 || w->pos <= cs->durable)) {
		cs->wait_head = w->next;
		if (cs->wait_head == NULL)
			cs->wait_tail = &cs->wait_head;
		w->next = NULL;
		w->result = result;
		sm_task_schedule(&w->task);
	}
}

/* A buffer or a segment came free: everyone waiting for room tries again. */
static void
release_space(int result)
{
	struct sm_clog_waiter *w;

	while ((w = cs->space_head) != NULL) {
		cs->space_head = w->next;
		w->next = NULL;
		w->result = result;
		sm_task_schedule(&w->task);
	}
}

static void
fail(int res, const char *what)
{
	char path[4096];

	if (cs->failed == 0) {
		clog_segment_path(path, sizeof(path), sm_shard_id(), cs->seq);
		SM_ERR("commitlog: %s of %s failed: %s: shard %u refuses writes from now on "
		       "(check the disk; a restart replays what was written)",
		       what, path, strerror(-res), sm_shard_id());
	}
	cs->failed = -EIO;
	release_waiters(-EIO);
	release_space(-EIO);
}

/* Put a pad record up to the next block boundary (records are 16-aligned). */
static void
pad_to_block(void)
{
	uint32_t gap = (SM_CLOG_BLOCK - cs->fill % SM_CLOG_BLOCK) % SM_CLOG_BLOCK;
	uint8_t *h;

	if (gap == 0)
		return;
	h = cs->buf[cs->cur] + cs->fill;
	memset(h, 0, gap);
	sm_put_be32(h + 4, gap - SM_CLOG_REC_HDR);
	sm_put_be16(h + 8, SM_CLOG_REC_MAGIC);
	h[10] = SM_CLOG_TYPE_PAD;
	sm_put_be32(h + 12, (uint32_t)cs->seq);
	sm_put_be32(h, sm_crc32c(0, h + 4, gap - 4));
	cs->fill += gap;
}

/* Submit what the current buffer holds past the last write. */
static int
flush_cur(unsigned sqe_flags)
{
	struct io_uring_sqe *sqe;
	uint32_t from = cs->flushed;

	pad_to_block();
	if (cs->fill == from)
		return 0;
	sqe = get_sqe();
	if (sqe == NULL)
		return -EBUSY;
	io_uring_prep_write_fixed(sqe, (int)cs->slot, cs->buf[cs->cur] + from, cs->fill - from,
				  cs->buf_off + from, (int)cs->cur);
	sqe->flags |= IOSQE_FIXED_FILE | sqe_flags;
	io_uring_sqe_set_data64(sqe, (uint64_t)CQE_WRITE << 8 | cs->cur);
	cs->flushed = cs->fill;
	cs->buf_inflight[cs->cur]++;
	cs->writes_inflight++;
	cs->dirty |= 1u << cs->slot;
	cs->st.writes++;
	return 0;
}

/* Open, preallocate and head the next segment, all linked through the ring. */
static void
prepare_spare(void)
{
	/* no O_CLOEXEC: a direct descriptor has no fd to close, and the kernel refuses it */
	unsigned flags = O_CREAT | O_EXCL | O_WRONLY | (clog_g.direct ? O_DIRECT : 0);
	struct io_uring_sqe *sqe[5];
	unsigned i;

	if (cs->spare_ready || cs->spare_busy || cs->failed)
		return;
	if (cs->space_limit != 0 && cs->space_used + clog_g.segment_size > cs->space_limit) {
		cs->spare_err = -ENOSPC;
		return;
	}
	if (io_uring_sq_space_left(&cs->ring) < 5)
		io_uring_submit(&cs->ring);
	for (i = 0; i < 5; i++) {
		sqe[i] = io_uring_get_sqe(&cs->ring);
		if (sqe[i] == NULL)
			return; /* the ring is full: a later append retries */
	}
	cs->spare_seq = cs->next_seq++;
	cs->spare_slot = (unsigned)(cs->spare_seq % NSLOTS);
	cs->spare_err = 0;
	clog_segment_path(cs->spare_path, sizeof(cs->spare_path), sm_shard_id(), cs->spare_seq);
	clog_header_build(cs->hdr, sm_shard_id(), cs->spare_seq);
	io_uring_prep_openat_direct(sqe[0], AT_FDCWD, cs->spare_path, (int)flags, 0644,
				    cs->spare_slot);
	io_uring_prep_fallocate(sqe[1], (int)cs->spare_slot, 0, 0, clog_g.segment_size);
	sqe[1]->flags |= IOSQE_FIXED_FILE;
	io_uring_prep_write_fixed(sqe[2], (int)cs->spare_slot, cs->hdr, SM_CLOG_HDR_SIZE, 0, NBUF);
	sqe[2]->flags |= IOSQE_FIXED_FILE;
	/* a full fsync: the file's size and extents, then its name in the directory */
	io_uring_prep_fsync(sqe[3], (int)cs->spare_slot, 0);
	sqe[3]->flags |= IOSQE_FIXED_FILE;
	io_uring_prep_fsync(sqe[4], (int)NSLOTS, 0);
	sqe[4]->flags |= IOSQE_FIXED_FILE;
	for (i = 0; i < 5; i++) {
		if (i < 4)
			sqe[i]->flags |= IOSQE_IO_LINK;
		io_uring_sqe_set_data64(sqe[i],
					(uint64_t)(i < 4 ? CQE_SPARE_STEP : CQE_SPARE_DONE) << 8 | i);
	}
	cs->spare_busy = true;
	cs->space_used += clog_g.segment_size;
	cs->st.segments++;
	io_uring_submit(&cs->ring);
}

/* Move on to the next buffer (and segment when @new_seg); -EBUSY while it is in use. */
static int
next_buffer(bool new_seg)
{
	unsigned nb = (cs->cur + 1) % NBUF;
	int ret;

	if (cs->buf_inflight[nb] > 0)
		return -EBUSY;
	ret = flush_cur(0);
	if (ret < 0)
		return ret;
	if (new_seg) {
		cs->seq = cs->spare_seq;
		cs->slot = cs->spare_slot;
		cs->buf_off = SM_CLOG_HDR_SIZE;
		cs->spare_ready = false;
		cs->have_seg = true;
	} else {
		cs->buf_off += cs->fill;
	}
	cs->cur = nb;
	cs->fill = 0;
	cs->flushed = 0;
	if (new_seg)
		prepare_spare();
	return 0;
}

static unsigned clog_poll(void *ctx);

void *
sm_clog_reserve(uint32_t len, int *ret)
{
	uint32_t need = (SM_CLOG_REC_HDR + len + 15u) & ~15u;
	int r;

	if (cs->failed) {
		*ret = cs->failed;
		return NULL;
	}
	if (len > SM_CLOG_MAX_PAYLOAD || need > clog_g.segment_size - SM_CLOG_HDR_SIZE) {
		*ret = -EFBIG;
		return NULL;
	}
	if (cs->buf_off + cs->fill + need > clog_g.segment_size) {
		if (!cs->spare_ready) {
			clog_poll(NULL); /* it may just have completed */
			if (!cs->spare_ready) {
				prepare_spare();
				*ret = cs->spare_err == -ENOSPC ? -ENOSPC
				       : cs->spare_err < 0	 ? -EIO
								 : -EBUSY;
				return NULL;
			}
		}
		r = next_buffer(true);
		if (r < 0) {
			clog_poll(NULL);
			r = next_buffer(true);
		}
		if (r < 0) {
			*ret = r;
			return NULL;
		}
	} else if (cs->fill + need > SM_CLOG_BUF_SIZE) {
		r = next_buffer(false);
		if (r < 0) {
			clog_poll(NULL);
			r = next_buffer(false);
		}
		if (r < 0) {
			*ret = r;
			return NULL;
		}
	}
	return cs->buf[cs->cur] + cs->fill + SM_CLOG_REC_HDR;
}

uint64_t
sm_clog_commit(uint8_t type, void *payload, uint32_t len)
{
	uint8_t *h = (uint8_t *)payload - SM_CLOG_REC_HDR;
	uint32_t need = (SM_CLOG_REC_HDR + len + 15u) & ~15u;

	sm_put_be32(h + 4, len);
	sm_put_be16(h + 8, SM_CLOG_REC_MAGIC);
	h[10] = type;
	h[11] = 0;
	sm_put_be32(h + 12, (uint32_t)cs->seq);
	if (need > SM_CLOG_REC_HDR + len)
		memset(h + SM_CLOG_REC_HDR + len, 0, need - SM_CLOG_REC_HDR - len);
	sm_put_be32(h, sm_crc32c(0, h + 4, SM_CLOG_REC_HDR - 4 + len));
	cs->fill += need;
	cs->st.records++;
	cs->st.bytes += need;
	return log_pos(cs->seq, cs->buf_off + cs->fill);
}

void
sm_clog_error(int ret, uint32_t len, char *err, size_t errlen)
{
	switch (ret) {
	case -EFBIG:
		snprintf(err, errlen,
			 "Mutation of %u bytes is too large for the commitlog (at most %u bytes, "
			 "and half a segment: raise commitlog_segment_size_in_mb)",
			 len, SM_MIN(SM_CLOG_MAX_PAYLOAD, (unsigned)(clog_g.segment_size / 2)));
		break;
	case -ENOSPC:
		snprintf(err, errlen,
			 "commitlog of shard %u is full (commitlog_total_space_in_mb): segments "
			 "are not recycled yet; raise it, or restart on an empty "
			 "commitlog_directory",
			 sm_shard_id());
		break;
	case -EBUSY:
		snprintf(err, errlen,
			 "commitlog of shard %u is behind (every buffer is still being written): "
			 "the disk is slower than the writes; retry",
			 sm_shard_id());
		break;
	default:
		snprintf(err, errlen,
			 "commitlog of shard %u failed a write earlier (see the server log): "
			 "writes are refused",
			 sm_shard_id());
		break;
	}
}

void
sm_clog_wait(struct sm_clog_waiter *w, uint64_t pos, void (*fn)(void *arg), void *arg)
{
	sm_task_init(&w->task, fn, arg);
	w->pos = pos;
	w->result = 0;
	w->next = NULL;
	if (cs->failed) {
		w->result = cs->failed;
		sm_task_schedule(&w->task);
		return;
	}
	if (pos <= cs->durable) {
		sm_task_schedule(&w->task);
		return;
	}
	*cs->wait_tail = w;
	cs->wait_tail = &w->next;
}

void
sm_clog_wait_space(struct sm_clog_waiter *w, void (*fn)(void *arg), void *arg)
{
	sm_task_init(&w->task, fn, arg);
	w->result = 0;
	if (cs->failed || (cs->writes_inflight == 0 && !cs->spare_busy)) {
		/* nothing in flight will free room: try again at once */
		w->result = cs->failed;
		w->next = NULL;
		sm_task_schedule(&w->task);
		return;
	}
	w->next = cs->space_head;
	cs->space_head = w;
}

/* Write what is buffered and fdatasync every segment written since the last sync. */
static void
start_sync(void)
{
	struct io_uring_sqe *sqe;
	unsigned s, n = 0;

	if (io_uring_sq_space_left(&cs->ring) < NSLOTS + 1)
		io_uring_submit(&cs->ring);
	/* the write is linked before the syncs, so they cover it */
	if (flush_cur(IOSQE_IO_LINK) < 0)
		return;
	cs->sync_target = log_pos(cs->seq, cs->buf_off + cs->fill);
	cs->sync_records = cs->st.records;
	cs->sync_err = 0;
	for (s = 0; s < NSLOTS; s++)
		if (cs->dirty & (1u << s))
			n++;
	cs->sync_left = n;
	for (s = 0; s < NSLOTS; s++) {
		if (!(cs->dirty & (1u << s)))
			continue;
		sqe = get_sqe();
		io_uring_prep_fsync(sqe, (int)s, IORING_FSYNC_DATASYNC);
		sqe->flags |= IOSQE_FIXED_FILE | (--n > 0 ? IOSQE_IO_LINK : 0);
		io_uring_sqe_set_data64(sqe, (uint64_t)CQE_SYNC << 8 | s);
	}
	cs->dirty = 0;
	cs->sync_inflight = cs->sync_left > 0;
	cs->sync_wanted = false;
	io_uring_submit(&cs->ring);
}

static const char *const spare_steps[] = { "open", "fallocate", "header write", "fsync",
					    "directory fsync" };

static void
on_cqe(uint64_t data, int res)
{
	unsigned kind = (unsigned)(data >> 8), idx = (unsigned)(data & 0xff);

	switch (kind) {
	case CQE_WRITE:
		cs->writes_inflight--;
		cs->buf_inflight[idx]--;
		if (res < 0)
			fail(res, "a write");
		release_space(cs->failed);
		break;
	case CQE_SYNC:
		if (res < 0 && cs->sync_err == 0)
			cs->sync_err = res;
		if (--cs->sync_left > 0)
			break;
		cs->sync_inflight = false;
		if (cs->sync_err < 0) {
			fail(cs->sync_err, "fdatasync");
			break;
		}
		cs->durable = cs->sync_target;
		cs->st.syncs++;
		cs->st.synced_records = cs->sync_records;
		release_waiters(0);
		break;
	case CQE_SPARE_STEP:
	case CQE_SPARE_DONE:
		if (res < 0 && cs->spare_err == 0) {
			cs->spare_err = res;
			SM_ERR("commitlog: preparing %s failed (%s): %s (check "
			       "commitlog_directory's disk)",
			       cs->spare_path, spare_steps[idx % 5], strerror(-res));
		}
		if (kind == CQE_SPARE_DONE) {
			cs->spare_busy = false;
			cs->spare_ready = cs->spare_err == 0;
			release_space(cs->failed);
		}
		break;
	}
}

static unsigned
clog_poll(void *ctx)
{
	struct io_uring_cqe *cqe;
	unsigned head, n = 0;

	(void)ctx;
	io_uring_for_each_cqe(&cs->ring, head, cqe) {
		on_cqe(cqe->user_data, cqe->res);
		n++;
	}
	if (n > 0)
		io_uring_cq_advance(&cs->ring, n);
	if (!cs->sync_inflight && cs->writes_inflight == 0 && !cs->failed && cs->have_seg &&
	    (sm_clog_mode == SM_CLOG_BATCH ? cs->wait_head != NULL || cs->fill > cs->flushed
					   : cs->sync_wanted)) {
		start_sync();
		n++;
	}
	/* a buffer that filled up was queued for writing where it filled */
	if (io_uring_sq_ready(&cs->ring) > 0)
		io_uring_submit(&cs->ring);
	return n;
}

static void
period_fired(void *arg)
{
	(void)arg;
	cs->sync_wanted = true;
	sm_timer_arm(&cs->timer, clog_g.period_ms);
}

/* Blocking, for start-up and shutdown: reap until @done() holds. */
static int
wait_until(bool (*done)(void))
{
	struct io_uring_cqe *cqe;
	int ret;

	while (!done()) {
		ret = io_uring_submit_and_wait(&cs->ring, 1);
		if (ret < 0 && ret != -EINTR)
			return ret;
		while (io_uring_peek_cqe(&cs->ring, &cqe) == 0) {
			on_cqe(cqe->user_data, cqe->res);
			io_uring_cqe_seen(&cs->ring, cqe);
		}
	}
	return 0;
}

static bool
spare_settled(void)
{
	return !cs->spare_busy;
}

static bool
all_settled(void)
{
	return !cs->spare_busy && !cs->sync_inflight && cs->writes_inflight == 0;
}

int
sm_clog_shard_init(void)
{
	struct sm_poller poller = { .name = "commitlog", .poll = clog_poll };
	struct iovec iov[NBUF + 1];
	unsigned shard = sm_shard_id(), i;
	int files[NSLOTS + 1];
	uint8_t *p;
	int ret;

	if (sm_clog_mode == SM_CLOG_OFF)
		return 0;
	cs = sm_calloc(1, sizeof(*cs));
	if (cs == NULL)
		return -ENOMEM;
	cs->wait_tail = &cs->wait_head;
	cs->mem = sm_malloc((NBUF + 1) * (size_t)SM_CLOG_BUF_SIZE + SM_CLOG_BLOCK);
	if (cs->mem == NULL) {
		ret = -ENOMEM;
		goto free_cs;
	}
	p = (uint8_t *)(((uintptr_t)cs->mem + SM_CLOG_BLOCK - 1) & ~(uintptr_t)(SM_CLOG_BLOCK - 1));
	for (i = 0; i <= NBUF; i++) {
		iov[i].iov_base = p + (size_t)i * SM_CLOG_BUF_SIZE;
		iov[i].iov_len = i < NBUF ? SM_CLOG_BUF_SIZE : SM_CLOG_HDR_SIZE;
		if (i < NBUF)
			cs->buf[i] = iov[i].iov_base;
	}
	cs->hdr = iov[NBUF].iov_base;
	ret = io_uring_queue_init(RING_SIZE, &cs->ring, 0);
	if (ret < 0) {
		SM_ERR("commitlog: io_uring_queue_init: %s (raise ulimit -n / -l)", strerror(-ret));
		goto free_mem;
	}
	ret = io_uring_register_buffers(&cs->ring, iov, NBUF + 1);
	if (ret < 0) {
		SM_ERR("commitlog: registering %u buffers of %u KiB: %s (raise the locked memory "
		       "limit: ulimit -l unlimited, or LimitMEMLOCK=infinity in systemd)",
		       NBUF, SM_CLOG_BUF_SIZE >> 10, strerror(-ret));
		goto exit_ring;
	}
	for (i = 0; i < NSLOTS; i++)
		files[i] = -1;
	files[NSLOTS] = open(clog_g.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (files[NSLOTS] < 0) {
		ret = -errno;
		SM_ERR("commitlog: opening %s: %s", clog_g.dir, strerror(errno));
		goto exit_ring;
	}
	ret = io_uring_register_files(&cs->ring, files, NSLOTS + 1);
	close(files[NSLOTS]); /* the ring holds its own reference */
	if (ret < 0) {
		SM_ERR("commitlog: registering files: %s", strerror(-ret));
		goto exit_ring;
	}
	ret = io_uring_register_eventfd(&cs->ring, sm_shard_wakeup_fd());
	if (ret < 0) {
		SM_ERR("commitlog: io_uring_register_eventfd: %s", strerror(-ret));
		goto exit_ring;
	}
	cs->next_seq = 1;
	for (i = 0; i < clog_g.nsegs; i++) {
		if (clog_g.segs[i].shard != shard)
			continue;
		if (clog_g.segs[i].seq >= cs->next_seq)
			cs->next_seq = clog_g.segs[i].seq + 1;
		if (clog_g.segs[i].empty) {
			char path[4096];

			clog_segment_path(path, sizeof(path), shard, clog_g.segs[i].seq);
			unlink(path);
			continue;
		}
		cs->space_used += clog_g.segment_size;
	}
	if (clog_g.total_space != 0)
		cs->space_limit = clog_g.total_space / clog_g.nshards;
	/* the first segment, then its spare, through the same chain */
	prepare_spare();
	ret = wait_until(spare_settled);
	if (ret == 0 && !cs->spare_ready)
		ret = cs->spare_err < 0 ? cs->spare_err : -EIO;
	if (ret < 0) {
		SM_ERR("commitlog: shard %u cannot create its first segment in %s: %s%s", shard,
		       clog_g.dir, strerror(-ret),
		       ret == -ENOSPC ? " (commitlog_total_space_in_mb is spent by the segments "
					"there: raise it)"
				      : "");
		goto exit_ring;
	}
	cs->seq = cs->spare_seq;
	cs->slot = cs->spare_slot;
	cs->buf_off = SM_CLOG_HDR_SIZE;
	cs->spare_ready = false;
	cs->have_seg = true;
	prepare_spare();
	cs->durable = log_pos(cs->seq, cs->buf_off);
	ret = sm_shard_add_poller(&poller);
	if (ret < 0)
		goto exit_ring;
	if (sm_clog_mode == SM_CLOG_PERIODIC) {
		sm_timer_init(&cs->timer, period_fired, NULL);
		sm_timer_arm(&cs->timer, clog_g.period_ms);
	}
	if (shard < SM_MAX_SHARDS)
		stats_v[shard] = &cs->st;
	return 0;
exit_ring:
	io_uring_queue_exit(&cs->ring);
free_mem:
	sm_free(cs->mem);
free_cs:
	sm_free(cs);
	cs = NULL;
	return ret;
}

void
sm_clog_shard_fini(void)
{
	unsigned shard = sm_shard_id();

	if (cs == NULL)
		return;
	if (sm_clog_mode == SM_CLOG_PERIODIC)
		sm_timer_cancel(&cs->timer);
	wait_until(all_settled);
	if (!cs->failed && (cs->fill > cs->flushed || cs->dirty)) {
		start_sync();
		wait_until(all_settled);
	}
	/* The loop is over: a waiter left now would never run, and its request
	 * may be gone with its connection; forget them without touching them. */
	cs->wait_head = NULL;
	cs->wait_tail = &cs->wait_head;
	cs->space_head = NULL;
	/* A spare never written to holds nothing: leave no empty file behind. */
	if (cs->spare_ready) {
		unlink(cs->spare_path);
		cs->space_used -= clog_g.segment_size;
	}
	if (shard < SM_MAX_SHARDS)
		stats_v[shard] = NULL;
	io_uring_queue_exit(&cs->ring);
	sm_free(cs->mem);
	sm_free(cs);
	cs = NULL;
}
