/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_TABLE_H
#define SM_TABLE_H

/*
 * Private to lib/store: one table's partitions on one shard.
 *
 * Partitions are one list in (token, key) order for range scans, found for
 * point access and inserts through a directory of that list by the token's
 * top bits (about one partition a slot). A partition's rows are a sorted
 * array of row pointers in clustering order (binary search, and cheap
 * reverse iteration for ORDER BY the other way); the only row of a
 * partition sits in it. A row is one allocation holding its cells and their
 * values packed; a value that fits its cell's space is written in place,
 * so overwriting a cell with a value of the same size allocates nothing;
 * reads allocate nothing either (non-frozen collections are assembled in a
 * per-shard scratch buffer that only grows).
 */

#include "sm_store.h"

struct sm_ptable;

struct sm_ptable *
sm_ptable_new(const struct sm_table *t);
void
sm_ptable_free(struct sm_ptable *pt);
/* Drop every partition (TRUNCATE). */
void
sm_ptable_truncate(struct sm_ptable *pt);
/*
 * Move the storage to a new definition of the same table (ALTER TABLE,
 * ALTER TYPE): cells follow their column by name, those of dropped columns
 * go, added columns start empty. The caller holds @t for as long as the
 * storage uses it. 0, or -ENOMEM with the storage unchanged.
 */
int
sm_ptable_reschema(struct sm_ptable *pt, const struct sm_table *t);

/* The table definition the storage was created for (or last moved to). */
const struct sm_table *
sm_ptable_schema(const struct sm_ptable *pt);

/* Partitions stored. */
uint64_t
sm_ptable_count(const struct sm_ptable *pt);

/*
 * Apply @m (owned by this shard) at timestamp @ts (microseconds) with
 * @now (seconds) as the local time. Returns 0 or -EINVAL with a message.
 */
int
sm_ptable_apply(struct sm_ptable *pt, const struct sm_mutation *m, int64_t ts, int32_t now,
		char *err, size_t errlen);

/* Single-partition read of s->pk; fills s->rows, s->more, s->paging. */
int
sm_ptable_read(struct sm_ptable *pt, struct sm_select *s, int32_t now);

/*
 * The same, with the partition key's @token already known (the store's
 * request path hashed it to route the request: hashing it again cost a
 * read or a write about 145 instructions).
 */
int
sm_ptable_apply_at(struct sm_ptable *pt, const struct sm_mutation *m, int64_t token, int64_t ts,
		   int32_t now, char *err, size_t errlen);
int
sm_ptable_read_at(struct sm_ptable *pt, struct sm_select *s, int64_t token, int32_t now);

/*
 * One step of a range scan: partitions after the position in @pos (or
 * after token s->token_start when @pos has no partition), with tokens below
 * @bound (exclusive; INT64_MAX: no bound) and at most s->token_end. Rows go to s->sink and count
 * against @budget. Returns 1 when it stopped because the budget ran out
 * (@pos then tells where), 0 when it reached the bound, < 0 on error.
 * @next_token gets the token of this shard's next partition after @pos,
 * and @has_next whether there is one (within token_end).
 */

int
sm_ptable_scan(struct sm_ptable *pt, struct sm_select *s, struct sm_scan_pos *pos, int64_t bound,
	       uint32_t *budget, int32_t now, int64_t *next_token, bool *has_next);

/* First partition token of this shard after @pos (for the scan merge). */
bool
sm_ptable_peek(struct sm_ptable *pt, const struct sm_select *s, const struct sm_scan_pos *pos,
	       int64_t *token);

/* Paging blob <-> scan position. */
void
sm_scan_pos_encode(const struct sm_scan_pos *pos, struct sm_paging *pg);
int
sm_scan_pos_decode(const struct sm_paging *pg, struct sm_scan_pos *pos);

/*
 * Read one row for a compare-and-set: the pre-image through @sink with
 * @cols, whether the row exists, and whether every condition holds.
 */
int
sm_ptable_cas_read(struct sm_ptable *pt, const struct sm_cas *c, int32_t now, bool *exists,
		   bool *conds_ok);

/* Serialize a key's components as stored: per component [u32 BE len][bytes]. */
size_t
sm_key_encode(const struct sm_key *k, uint8_t *buf, size_t len);
int
sm_key_decode(const uint8_t *p, size_t len, struct sm_key *k);

/* Free the calling shard's read scratch (at shard teardown). */
void
sm_ptable_shard_fini(void);

#endif /* SM_TABLE_H */
