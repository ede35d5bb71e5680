/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/commitlog's format and replay without a runtime: segments built by
 * hand in a temporary directory, read back by sm_clog_replay().
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "clog_priv.h"
#include "sm_commitlog.h"

#define SEG (1u << 20)

static char dir[64];

static int
setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/sm_clog_test.XXXXXX");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int
teardown(void **state)
{
	char cmd[128];

	(void)state;
	sm_clog_cleanup();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static void
init(unsigned nshards)
{
	struct sm_clog_config c = {
		.mode = SM_CLOG_BATCH,
		.dir = dir,
		.segment_size = SEG,
		.nshards = nshards,
	};
	char err[512];

	sm_clog_cleanup();
	assert_int_equal(sm_clog_init(&c, err, sizeof(err)), 0);
}

/* One record at *off in @seg, framed as the writer does. */
static void
put_record(uint8_t *seg, size_t *off, uint64_t seq, uint8_t type, const char *payload)
{
	uint32_t len = (uint32_t)strlen(payload);
	uint8_t *h = seg + *off;

	sm_put_be32(h + 4, len);
	sm_put_be16(h + 8, SM_CLOG_REC_MAGIC);
	h[10] = type;
	h[11] = 0;
	sm_put_be32(h + 12, (uint32_t)seq);
	memcpy(h + SM_CLOG_REC_HDR, payload, len);
	sm_put_be32(h, sm_crc32c(0, h + 4, SM_CLOG_REC_HDR - 4 + len));
	*off += (SM_CLOG_REC_HDR + len + 15u) & ~15u;
}

static void
write_segment(unsigned shard, uint64_t seq, const uint8_t *seg, size_t len)
{
	char path[4096];
	FILE *f;

	clog_segment_path(path, sizeof(path), shard, seq);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(seg, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static uint8_t seg[SEG];

/* An empty segment of @seq in seg[]; returns where its first record goes. */
static size_t
new_segment(uint64_t seq)
{
	memset(seg, 0, sizeof(seg));
	clog_header_build(seg, 0, seq);
	return SM_CLOG_HDR_SIZE;
}

struct seen {
	unsigned n;
	char last[64];
};

static int
collect(void *ctx, uint8_t type, const uint8_t *p, uint32_t len)
{
	struct seen *s = ctx;

	assert_int_equal(type, 1);
	s->n++;
	snprintf(s->last, sizeof(s->last), "%.*s", (int)len, (const char *)p);
	return 0;
}

static void
test_crc32c_is_castagnoli(void **state)
{
	const char *v = "123456789";

	(void)state;
	/* the check value of CRC-32C (RFC 3720's iSCSI CRC), with the usual
	 * inversions around the raw register that sm_crc32c() continues */
	assert_int_equal(~sm_crc32c(~0u, v, 9), 0xE3069283u);
	assert_int_equal(sm_crc32c(sm_crc32c(7, v, 4), v + 4, 5), sm_crc32c(7, v, 9));
}

/* Replay shard 0 of a one-shard log into @s. */
static int
replay(struct seen *s, struct sm_clog_replay_stats *st)
{
	memset(s, 0, sizeof(*s));
	init(1);
	return sm_clog_replay(0, collect, s, st);
}

static void
test_replay_stops_at_a_corrupt_record_and_goes_on(void **state)
{
	struct sm_clog_replay_stats st;
	struct seen s;
	size_t off, bad;

	(void)state;
	init(1);
	off = new_segment(1);
	put_record(seg, &off, 1, 1, "first");
	put_record(seg, &off, 1, SM_CLOG_TYPE_PAD, "padding is skipped");
	put_record(seg, &off, 1, 1, "second");
	bad = off;
	put_record(seg, &off, 1, 1, "flipped");
	put_record(seg, &off, 1, 1, "after the flip");
	seg[bad + SM_CLOG_REC_HDR + 2] ^= 0x40;
	write_segment(0, 1, seg, SEG);
	/* the next segment replays after the corrupt one */
	off = new_segment(2);
	put_record(seg, &off, 2, 1, "third");
	write_segment(0, 2, seg, SEG);
	/* a record of seq 3 in a segment of seq 4: stale, not replayed */
	off = new_segment(4);
	put_record(seg, &off, 3, 1, "stale");
	write_segment(0, 4, seg, SEG);
	/* a header that does not check: the segment is skipped */
	new_segment(5);
	seg[30] ^= 1;
	write_segment(0, 5, seg, SEG);
	assert_int_equal(replay(&s, &st), 0);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.last, "third");
	assert_int_equal(st.records, 3);
	assert_int_equal(st.segments, 3);
	assert_int_equal(st.corrupt, 2);
}

static void
test_torn_segment_shorter_than_a_record(void **state)
{
	struct sm_clog_replay_stats st;
	struct seen s;
	size_t off, cut;

	(void)state;
	init(1);
	off = new_segment(1);
	put_record(seg, &off, 1, 1, "whole");
	cut = off + 20;
	put_record(seg, &off, 1, 1, "cut in the middle of its payload");
	write_segment(0, 1, seg, cut);
	assert_int_equal(replay(&s, &st), 0);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.last, "whole");
	assert_int_equal(st.corrupt, 1);
}

static void
test_segments_of_another_shard_count_are_refused(void **state)
{
	struct sm_clog_config c = {
		.mode = SM_CLOG_BATCH,
		.dir = dir,
		.segment_size = SEG,
		.nshards = 1,
	};
	struct sm_clog_replay_stats st;
	struct seen s;
	char err[512];

	(void)state;
	init(2); /* written by two shards */
	new_segment(1);
	write_segment(0, 1, seg, SM_CLOG_HDR_SIZE);
	write_segment(1, 1, seg, SM_CLOG_HDR_SIZE);
	/* one shard now: shard 1's file names the problem at init */
	sm_clog_cleanup();
	assert_int_equal(sm_clog_init(&c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--smp"));
	/* shard 0's header says 2 shards: replay refuses it */
	unlink(strcat(strcpy(err, dir), "/CommitLog-1-1.log"));
	assert_int_equal(replay(&s, &st), -EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32c_is_castagnoli),
		cmocka_unit_test_setup_teardown(test_replay_stops_at_a_corrupt_record_and_goes_on,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_torn_segment_shorter_than_a_record, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_segments_of_another_shard_count_are_refused,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
