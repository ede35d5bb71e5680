/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_CHANGELOG_H
#define SM_CHANGELOG_H

/*
 * A change log per shard (CDC): the records an endpoint writes beside the
 * mutations it applies, on the shard that applies them, in the step that
 * applies them, so they are ordered per key as the writes are. One log per
 * (table, stream): a stream enabled again is a new stream with an empty log.
 *
 * A record's sequence number grows strictly in its log and starts from its
 * write timestamp (microseconds << SM_CHANGELOG_SEQ_SHIFT), so a number
 * taken from the clock (a LATEST iterator) orders with the records. The
 * log is bounded twice, as DynamoDB Streams is: records older than the
 * retention (24 hours) go, and so do the oldest ones of the shard when all
 * its logs pass the byte bound. What the store keeps is opaque bytes: the
 * endpoint formats them (Alternator's alt_streams.c).
 *
 * Every call is for the calling shard's logs only; another shard's are read
 * by running there (sm_submit_to()).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sm_uuid.h"

#define SM_CHANGELOG_SEQ_SHIFT 10
#define SM_CHANGELOG_RETENTION_US (24ll * 3600 * 1000000)

struct sm_changelog_rec {
	uint64_t seq;
	int64_t ts_us;
	uint32_t len;
	uint8_t data[];
};

/*
 * Append a record of @len bytes for the write of @table's stream @stream
 * applied at @ts_us; its number in *@seq. Trims what is past the retention
 * (as of @ts_us) and, over the byte bound, the shard's oldest records.
 * 0 or -ENOMEM.
 */
int
sm_changelog_append(const struct sm_uuid *table, uint64_t stream, int64_t ts_us, const void *data,
		    uint32_t len, uint64_t *seq);

/* Where a read stands: what was trimmed, what the log holds. */
struct sm_changelog_info {
	uint64_t trimmed; /* the highest number trimmed from the log, 0 none */
	uint64_t first;	  /* the oldest number held, 0 none */
	uint64_t last;	  /* the newest number ever appended, 0 none */
};

/*
 * Call @fn for up to @limit records of the log with numbers from @from
 * (inclusive or not), oldest first, trimming the expired first (as of
 * @now_us); @fn returns 0 to go on, 1 to stop before this record, < 0 to
 * fail. The log's state in *@info (zeroes for a log never written). The
 * records returned, or what @fn failed with.
 */
int
sm_changelog_read(const struct sm_uuid *table, uint64_t stream, uint64_t from, bool inclusive,
		  unsigned limit, int64_t now_us,
		  int (*fn)(void *ctx, const struct sm_changelog_rec *r), void *ctx,
		  struct sm_changelog_info *info);

/* Forget @table's logs of streams other than @keep and @keep2 (0: none kept): table dropped,
 * stream re-enabled. */
void
sm_changelog_drop(const struct sm_uuid *table, uint64_t keep, uint64_t keep2);

/* The byte bound of the calling shard's logs (0: the default, a share of the memory budget). */
void
sm_changelog_set_limit(size_t bytes);
/* Bytes the calling shard's logs hold, and the bound in force. */
size_t
sm_changelog_bytes(void);
size_t
sm_changelog_limit(void);

/* Free the calling shard's logs (at shard teardown). */
void
sm_changelog_shard_fini(void);

#endif /* SM_CHANGELOG_H */
