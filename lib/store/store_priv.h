/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef STORE_PRIV_H
#define STORE_PRIV_H

/*
 * Private to lib/store: what sm_store.c (requests) and sm_index.c (index
 * maintenance) call of each other.
 */

#include "sm_store.h"
#include "sm_table.h"

/*
 * sm_store.c: how many base tables have an index in the calling shard's
 * catalog; 0 keeps every request on its plain path (one test of a field
 * the request path has at hand).
 */
void
store_set_index_tables(unsigned n);

/* Rebuild the calling shard's index lists from its new catalog; free them at teardown. */
void
store_index_sync(const struct sm_catalog *cat);
void
store_index_fini(void);
void
store_index_shard_fini(void); /* and the shard's pools */

/*
 * sm_store_submit(): a write to a table with an index runs on its owner
 * from here, answered once its view writes are done. True when it took @r
 * over.
 */
bool
store_index_route(struct sm_store_req *r);

/*
 * On the owning shard, in place of applying a write: the pre-image, the
 * write, the post-image and the view writes. False when the table has no
 * index (the caller applies the write as usual).
 */
bool
store_index_mutate(struct sm_store_req *r, struct sm_ptable *pt, int64_t ts, int32_t now);
bool
store_index_cas(struct sm_store_req *r, struct sm_ptable *pt,
		void (*run)(struct sm_store_req *r, struct sm_ptable *pt));

/* sm_store.c: run @r on the calling (owning) shard; end a request on its origin. */
void
store_exec_here(struct sm_store_req *r);
void
store_req_finish(struct sm_store_req *r);

/* Apply @m through the commitlog's hook (logged when the log is on). */
int
store_apply(struct sm_ptable *pt, const struct sm_mutation *m, int64_t ts, int32_t now, char *err,
	    size_t errlen);

/*
 * After store_exec_here() in batch mode: true when @r logged a record that
 * is not synced yet; @fn(@arg) runs once it is, r->clw.result < 0 if the
 * log failed. False: nothing to wait for.
 */
bool
store_log_wait(struct sm_store_req *r, void (*fn)(void *arg), void *arg);

#endif /* STORE_PRIV_H */
