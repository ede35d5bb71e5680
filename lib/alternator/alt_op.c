/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An Alternator operation's life, below the dispatcher (sm_alternator.c) and
 * the operation files (alt_item.c, alt_query.c, ...) that both use it: the
 * per-shard op pool, the answer (alt_finish, alt_fail and DynamoDB's error
 * shape) and the store requests an op waits for (alt_submit). Kept apart so
 * that no operation file calls back into the dispatcher, as Redis's
 * networking.c is below both its call() and its commands.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "alt_priv.h"

#define OP_FREE_MAX 256u
#define KEEP_BYTES (1u << 20)

__thread const struct sm_alternator_config *alt_cfg;
static __thread struct alt_op *op_free;
static __thread unsigned op_nfree;

/* ---- ops ---- */

struct alt_op *
alt_op_get(void)
{
	struct alt_op *op = op_free;
	unsigned i;

	if (op != NULL) {
		op_free = op->next_free;
		op_nfree--;
	} else {
		op = sm_calloc(1, sizeof(*op));
		if (op == NULL)
			return NULL;
		sm_json_doc_init(&op->doc);
		sm_json_doc_init(&op->idoc);
		sm_json_out_init(&op->out);
		sm_json_out_init(&op->item);
		sm_json_out_init(&op->nitem);
		sm_json_out_init(&op->scratch);
		sm_json_out_init(&op->vitem);
		for (i = 0; i < ALT_TMP_DOCS; i++) {
			sm_json_doc_init(&op->tmp[i]);
			sm_json_out_init(&op->tmpout[i]);
		}
	}
	op->req = NULL;
	op->local_done = NULL;
	op->have_tab = false;
	op->have_item = false;
	op->cond = op->update = op->proj = op->filter = op->keycond = NULL;
	op->names_tok = op->values_tok = op->atg_tok = -1;
	op->nsreqs = op->pending = op->nops = 0;
	op->ntmp = 0;
	op->keys.len = op->vals.len = op->last.len = op->names.len = op->inflated.len = 0;
	op->proj_built = NULL;
	op->nresolved = 0;
	if (op->name_memo_n > 0) {
		memset(op->name_memo, 0, op->name_memo_cap * sizeof(*op->name_memo));
		op->name_memo_n = 0;
	}
	op->next = NULL;
	op->first_err = 0;
	op->errmsg[0] = '\0';
	op->rv = 0;
	op->rv_on_fail_all_old = false;
	op->rmw = false;
	op->cond_ok = true;
	op->cond_error = false;
	op->ser_err = false;
	op->start_key_tok = -1;
	op->have_last = false;
	op->skipping = false;
	op->batch_i = 0;
	op->empty_body = false;
	op->lat_kind = -1;
	op->op_row = -1;
	op->ts = NULL;
	sm_json_out_reset(&op->out);
	sm_json_out_reset(&op->item);
	sm_json_out_reset(&op->nitem);
	sm_json_out_reset(&op->scratch);
	return op;
}

static void
bytes_release(struct alt_bytes *b)
{
	sm_free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

static void
op_destroy(struct alt_op *op)
{
	unsigned i;

	sm_json_doc_release(&op->doc);
	sm_json_doc_release(&op->idoc);
	sm_json_out_release(&op->out);
	sm_json_out_release(&op->item);
	sm_json_out_release(&op->nitem);
	sm_json_out_release(&op->scratch);
	sm_json_out_release(&op->vitem);
	for (i = 0; i < ALT_TMP_DOCS; i++) {
		sm_json_doc_release(&op->tmp[i]);
		sm_json_out_release(&op->tmpout[i]);
	}
	bytes_release(&op->vkeys);
	bytes_release(&op->vvals);
	sm_free(op->vops);
	bytes_release(&op->keys);
	bytes_release(&op->vals);
	bytes_release(&op->last);
	bytes_release(&op->names);
	bytes_release(&op->inflated);
	sm_free(op->sreqs);
	sm_free(op->ops);
	sm_free(op->name_memo);
	sm_free(op->proj_nodes);
	sm_free(op);
}

/* The buffers of a write with secondary indexes: only a large one is let go. */
static __attribute__((noinline, cold)) void
trim_index_buffers(struct alt_op *op)
{
	op->index_bufs = false;
	if (op->vkeys.cap > KEEP_BYTES)
		bytes_release(&op->vkeys);
	if (op->vvals.cap > KEEP_BYTES)
		bytes_release(&op->vvals);
	if (op->vitem.cap > KEEP_BYTES)
		sm_json_out_release(&op->vitem);
}

static void
op_release(struct alt_op *op)
{
	alt_op_free_exprs(op);
	alt_keep_release(op);
	if (op->have_tab) {
		alt_table_release(&op->tab);
		op->have_tab = false;
	}
	if (op->ts != NULL) {
		alt_tstats_put(op->ts);
		op->ts = NULL;
	}
	if (op_nfree >= OP_FREE_MAX) {
		op_destroy(op);
		return;
	}
	if (op->keys.cap > KEEP_BYTES)
		bytes_release(&op->keys);
	if (op->vals.cap > KEEP_BYTES)
		bytes_release(&op->vals);
	if (op->inflated.cap > KEEP_BYTES)
		bytes_release(&op->inflated);
	if (SM_UNLIKELY(op->index_bufs))
		trim_index_buffers(op);
	if (op->out.cap > KEEP_BYTES)
		sm_json_out_release(&op->out);
	if (op->item.cap > KEEP_BYTES)
		sm_json_out_release(&op->item);
	op->next_free = op_free;
	op_free = op;
	op_nfree++;
}

struct alt_op *
alt_op_new(void)
{
	struct alt_op *op = alt_op_get();

	/* no request: none of the members run() finds */
	if (op != NULL)
		op->cap_tok = op->icm_tok = op->consistent_tok = op->table_tok = op->key_tok = -1;
	return op;
}

void
alt_op_done(struct alt_op *op)
{
	op_release(op);
}

/* The reply as system.config's live settings shape it: Server, no Date, no Content-Type. */
static __attribute__((noinline, cold)) void
reply_live(struct alt_op *op, int status, const char *json, size_t len)
{
	static __thread char headers[2048];
	struct sm_http_req *req = op->req;

	req->no_date = alt_live.no_date;
	if (alt_live.server[0] != '\0') {
		snprintf(headers, sizeof(headers), "%sServer: %s\r\n",
			 req->reply_headers != NULL ? req->reply_headers : "", alt_live.server);
		req->reply_headers = headers; /* copied by the reply */
	}
	sm_http_reply(req, status, alt_live.no_content_type ? NULL : SM_HTTP_JSON_TYPE, json, len);
}

static void
reply(struct alt_op *op, int status, const char *json, size_t len)
{
	if (op->req != NULL) {
		if (SM_UNLIKELY(alt_live.server[0] != '\0' || alt_live.no_date ||
				alt_live.no_content_type))
			reply_live(op, status, json, len);
		else
			sm_http_reply(op->req, status, SM_HTTP_JSON_TYPE, json, len);
	} else if (op->local_done != NULL) {
		op->local_done(op->local_ctx, status, json, len);
	}
	op_release(op);
}

void
alt_finish(struct alt_op *op)
{
	if (op->out.err != 0) {
		alt_fail(op, "InternalServerError", "out of memory writing the response");
		return;
	}
	if (op->lat_kind >= 0) {
		uint64_t us = sm_cycles_to_us(sm_cycles() - op->start_cycles);
		unsigned b = sm_lat_hist_bucket(us);

		alt_metrics_latency(alt_st, op->lat_kind, b, us);
		if (op->ts != NULL)
			alt_metrics_latency(&op->ts->st, op->lat_kind, b, us);
	}
	if (op->empty_body)
		reply(op, 200, "", 0);
	else if (op->out.len == 0)
		reply(op, 200, "{}", 2);
	else
		reply(op, 200, op->out.p, op->out.len);
}

static void __attribute__((format(printf, 5, 0)))
fail_v(struct alt_op *op, const char *type, const char *item_json, size_t item_len, const char *fmt,
       va_list ap)
{
	char msg[1024], t[96];
	int status = 400;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (op->ser_err && strcmp(type, "ValidationException") == 0)
		type = "SerializationException";
	if (strcmp(type, "InternalServerError") == 0)
		status = 500;
	else if (strcmp(type, "PayloadTooLarge") == 0)
		status = 413;
	snprintf(t, sizeof(t), ALT_ERR_PREFIX "%s", type);
	sm_json_out_reset(&op->out);
	sm_json_out_obj_begin(&op->out);
	if (item_json != NULL) {
		sm_json_out_key(&op->out, "Item");
		sm_json_out_raw(&op->out, item_json, item_len);
	}
	sm_json_out_key(&op->out, "__type");
	sm_json_out_str(&op->out, t);
	sm_json_out_key(&op->out, "message");
	sm_json_out_str(&op->out, msg);
	sm_json_out_obj_end(&op->out);
	if (op->out.err != 0)
		reply(op, 500, "{}", 2);
	else
		reply(op, status, op->out.p, op->out.len);
}

void
alt_fail(struct alt_op *op, const char *type, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fail_v(op, type, NULL, 0, fmt, ap);
	va_end(ap);
}

static void
fail_item(struct alt_op *op, const char *type, const char *item, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void
fail_item(struct alt_op *op, const char *type, const char *item, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fail_v(op, type, item, len, fmt, ap);
	va_end(ap);
}

void
alt_fail_condition(struct alt_op *op)
{
	if (op->rv_on_fail_all_old && op->have_item) {
		/* The old item, as ReturnValuesOnConditionCheckFailure=ALL_OLD asks. */
		sm_json_out_reset(&op->scratch);
		alt_write_projected(op, &op->idoc, sm_json_root(&op->idoc), &op->scratch);
		fail_item(op, "ConditionalCheckFailedException", op->scratch.p, op->scratch.len,
			  "The conditional request failed");
		return;
	}
	alt_fail(op, "ConditionalCheckFailedException", "The conditional request failed");
}

/* ---- store requests ---- */

static void
sreq_done(struct sm_store_req *r)
{
	struct alt_op *op = r->ctx;

	if (r->result < 0 && op->first_err == 0) {
		op->first_err = r->result;
		snprintf(op->errmsg, sizeof(op->errmsg), "%s",
			 r->err[0] ? r->err : strerror(-r->result));
	}
	if (--op->pending > 0)
		return;
	if (op->submitting) {
		op->completed = true;
		return;
	}
	op->next(op);
}

void
alt_submit(struct alt_op *op)
{
	unsigned i;

	op->first_err = 0;
	op->pending = op->nsreqs + 1;
	op->submitting = true;
	op->completed = false;
	for (i = 0; i < op->nsreqs; i++) {
		op->sreqs[i].done = sreq_done;
		op->sreqs[i].ctx = op;
		sm_store_submit(&op->sreqs[i]);
	}
	op->submitting = false;
	if (--op->pending == 0)
		op->next(op);
}


/* Idle: free ops beyond what a quiet shard reuses (a burst pooled up to OP_FREE_MAX). */
#define OP_FREE_IDLE 16u

static void
ops_trim(void *arg)
{
	struct alt_op *op;

	(void)arg;
	while (op_nfree > OP_FREE_IDLE && (op = op_free) != NULL) {
		op_free = op->next_free;
		op_nfree--;
		op_destroy(op);
	}
}

static __thread struct sm_idle_hook ops_idle = { .fn = ops_trim };

void
alt_op_shard_init(void)
{
	if (sm_on_shard())
		sm_shard_on_idle(&ops_idle);
}

void
alt_op_shard_fini(void)
{
	struct alt_op *op;

	if (sm_on_shard())
		sm_shard_remove_idle_hook(&ops_idle);
	while ((op = op_free) != NULL) {
		op_free = op->next_free;
		op_destroy(op);
	}
	op_nfree = 0;
}
