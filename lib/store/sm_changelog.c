/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The per-shard change log (sm_changelog.h). It lives in lib/store because
 * the store applies the writes: a record is appended on the shard that owns
 * the key, in the step that applies the mutation, and counts against that
 * shard's memory budget like the data; the endpoint only says what to keep.
 *
 * Each log is a ring of pointers to records (one allocation each), so
 * appending and trimming are O(1) and a read from a sequence number is a
 * binary search (numbers grow strictly in a log).
 */

#include <errno.h>
#include <string.h>

#include "sm_changelog.h"
#include "sm_core.h"

#define DEFAULT_LIMIT ((size_t)64 << 20)

struct clog {
	struct sm_uuid table;
	uint64_t stream;
	struct sm_changelog_rec **ring;
	unsigned head, n, cap; /* cap a power of two */
	uint64_t last, trimmed;
	struct clog *next;
};

static __thread struct clog *logs;
static __thread size_t held;  /* bytes of every log's records */
static __thread size_t limit; /* 0: the default */

static size_t
rec_bytes(const struct sm_changelog_rec *r)
{
	return sizeof(*r) + r->len;
}

size_t
sm_changelog_limit(void)
{
	size_t budget;

	if (limit != 0)
		return limit;
	/* an eighth of the shard's budget: the data it logs keeps the rest */
	budget = sm_mem_budget();
	return budget != 0 ? SM_MIN(budget / 8, DEFAULT_LIMIT) : DEFAULT_LIMIT;
}

void
sm_changelog_set_limit(size_t bytes)
{
	limit = bytes;
}

size_t
sm_changelog_bytes(void)
{
	return held;
}

static struct clog *
log_find(const struct sm_uuid *table, uint64_t stream, bool create)
{
	struct clog *l;

	for (l = logs; l != NULL; l = l->next)
		if (l->stream == stream && memcmp(&l->table, table, sizeof(*table)) == 0)
			return l;
	if (!create)
		return NULL;
	l = sm_calloc(1, sizeof(*l));
	if (l == NULL)
		return NULL;
	l->table = *table;
	l->stream = stream;
	l->next = logs;
	logs = l;
	return l;
}

static inline struct sm_changelog_rec *
log_at(const struct clog *l, unsigned i)
{
	return l->ring[(l->head + i) & (l->cap - 1)];
}

static void
log_pop(struct clog *l)
{
	struct sm_changelog_rec *r = log_at(l, 0);

	l->trimmed = r->seq;
	held -= rec_bytes(r);
	sm_free(r);
	l->head = (l->head + 1) & (l->cap - 1);
	l->n--;
}

static void
log_trim_expired(struct clog *l, int64_t now_us)
{
	while (l->n > 0 && log_at(l, 0)->ts_us < now_us - SM_CHANGELOG_RETENTION_US)
		log_pop(l);
}

/* Over the bound: the shard's oldest record goes (the log with the oldest head). */
static bool
trim_oldest(void)
{
	struct clog *l, *old = NULL;

	for (l = logs; l != NULL; l = l->next)
		if (l->n > 0 && (old == NULL || log_at(l, 0)->ts_us < log_at(old, 0)->ts_us))
			old = l;
	if (old == NULL)
		return false;
	log_pop(old);
	return true;
}

static int
log_grow(struct clog *l)
{
	unsigned cap = l->cap ? l->cap * 2 : 64, i;
	struct sm_changelog_rec **ring = sm_malloc(cap * sizeof(*ring));

	if (ring == NULL)
		return -ENOMEM;
	for (i = 0; i < l->n; i++)
		ring[i] = log_at(l, i);
	sm_free(l->ring);
	l->ring = ring;
	l->cap = cap;
	l->head = 0;
	return 0;
}

int
sm_changelog_append(const struct sm_uuid *table, uint64_t stream, int64_t ts_us, const void *data,
		    uint32_t len, uint64_t *seq)
{
	struct clog *l = log_find(table, stream, true);
	struct sm_changelog_rec *r;
	size_t need = sizeof(*r) + len, bound = sm_changelog_limit();
	uint64_t s;

	if (l == NULL || need > bound)
		return -ENOMEM;
	log_trim_expired(l, ts_us);
	while (held + need > bound && trim_oldest())
		;
	if (l->n == l->cap && log_grow(l) < 0)
		return -ENOMEM;
	r = sm_malloc(need);
	if (r == NULL)
		return -ENOMEM;
	s = ts_us > 0 ? (uint64_t)ts_us << SM_CHANGELOG_SEQ_SHIFT : 0;
	if (s <= l->last)
		s = l->last + 1;
	r->seq = l->last = s;
	r->ts_us = ts_us;
	r->len = len;
	if (len > 0)
		memcpy(r->data, data, len);
	l->ring[(l->head + l->n) & (l->cap - 1)] = r;
	l->n++;
	held += need;
	*seq = s;
	return 0;
}

int
sm_changelog_read(const struct sm_uuid *table, uint64_t stream, uint64_t from, bool inclusive,
		  unsigned max, int64_t now_us,
		  int (*fn)(void *ctx, const struct sm_changelog_rec *r), void *ctx,
		  struct sm_changelog_info *info)
{
	struct clog *l = log_find(table, stream, false);
	unsigned lo, hi, i, done = 0;
	int ret;

	memset(info, 0, sizeof(*info));
	if (l == NULL)
		return 0;
	log_trim_expired(l, now_us);
	info->trimmed = l->trimmed;
	info->last = l->last;
	info->first = l->n > 0 ? log_at(l, 0)->seq : 0;
	/* the first record past @from: numbers grow, so a binary search */
	lo = 0;
	hi = l->n;
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		uint64_t s = log_at(l, mid)->seq;

		if (s > from || (inclusive && s == from))
			hi = mid;
		else
			lo = mid + 1;
	}
	for (i = lo; i < l->n && done < max; i++) {
		ret = fn(ctx, log_at(l, i));
		if (ret < 0)
			return ret;
		if (ret > 0)
			break;
		done++;
	}
	return (int)done;
}

static void
log_free(struct clog *l)
{
	while (l->n > 0)
		log_pop(l);
	sm_free(l->ring);
	sm_free(l);
}

void
sm_changelog_drop(const struct sm_uuid *table, uint64_t keep, uint64_t keep2)
{
	struct clog **pp = &logs, *l;

	while ((l = *pp) != NULL) {
		if (memcmp(&l->table, table, sizeof(*table)) == 0 && l->stream != keep &&
		    l->stream != keep2) {
			*pp = l->next;
			log_free(l);
			continue;
		}
		pp = &l->next;
	}
}

void
sm_changelog_shard_fini(void)
{
	struct clog *l;

	while ((l = logs) != NULL) {
		logs = l->next;
		log_free(l);
	}
	held = 0;
}
