/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Alternator endpoint: HTTP requests in, operations dispatched by
 * X-Amz-Target, DynamoDB-shaped answers out.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "alt_priv.h"

#define OP_FREE_MAX 256u
#define KEEP_BYTES (1u << 20)

__thread const struct sm_alternator_config *alt_cfg;
static __thread struct alt_op *op_free;
static __thread unsigned op_nfree;

int
sm_alt_isolation_parse(const char *s, enum sm_alt_isolation *out)
{
	static const char *const ok[] = {
		"f",	  "forbid",	    "forbid_rmw", "a",
		"always", "always_use_lwt", "o",	  "only_rmw_uses_lwt",
		"u",	  "unsafe",	    "unsafe_rmw"
	};
	unsigned i;

	for (i = 0; i < SM_ARRAY_SIZE(ok); i++)
		if (strcmp(s, ok[i]) == 0)
			break;
	if (i == SM_ARRAY_SIZE(ok))
		return -EINVAL;
	/* ScyllaDB looks at the first character only. */
	switch (s[0]) {
	case 'f':
		*out = SM_ALT_FORBID_RMW;
		return 0;
	case 'a':
		*out = SM_ALT_LWT_ALWAYS;
		return 0;
	case 'o':
		*out = SM_ALT_LWT_RMW_ONLY;
		return 0;
	default:
		*out = SM_ALT_UNSAFE_RMW;
		return 0;
	}
}

/* ---- ops ---- */

static struct alt_op *
op_get(void)
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
	op->names_tok = op->values_tok = -1;
	op->nsreqs = op->pending = op->nops = 0;
	op->ntmp = 0;
	op->keys.len = op->vals.len = op->last.len = op->names.len = 0;
	op->next = NULL;
	op->first_err = 0;
	op->errmsg[0] = '\0';
	op->rv = 0;
	op->rv_on_fail_all_old = false;
	op->rmw = false;
	op->cond_ok = true;
	op->cond_error = false;
	op->start_key_tok = -1;
	op->have_last = false;
	op->skipping = false;
	op->batch_i = 0;
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
	for (i = 0; i < ALT_TMP_DOCS; i++) {
		sm_json_doc_release(&op->tmp[i]);
		sm_json_out_release(&op->tmpout[i]);
	}
	bytes_release(&op->keys);
	bytes_release(&op->vals);
	bytes_release(&op->last);
	bytes_release(&op->names);
	sm_free(op->str);
	sm_free(op->sreqs);
	sm_free(op->ops);
	sm_free(op);
}

static void
op_release(struct alt_op *op)
{
	alt_op_free_exprs(op);
	if (op->have_tab) {
		alt_table_release(&op->tab);
		op->have_tab = false;
	}
	if (op_nfree >= OP_FREE_MAX) {
		op_destroy(op);
		return;
	}
	if (op->keys.cap > KEEP_BYTES)
		bytes_release(&op->keys);
	if (op->vals.cap > KEEP_BYTES)
		bytes_release(&op->vals);
	if (op->out.cap > KEEP_BYTES)
		sm_json_out_release(&op->out);
	if (op->item.cap > KEEP_BYTES)
		sm_json_out_release(&op->item);
	op->next_free = op_free;
	op_free = op;
	op_nfree++;
}

static void
reply(struct alt_op *op, int status, const char *json, size_t len)
{
	if (op->req != NULL) {
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
	if (op->out.len == 0)
		reply(op, 200, "{}", 2);
	else
		reply(op, 200, op->out.p, op->out.len);
}

static void
fail_v(struct alt_op *op, const char *type, const char *item_json, size_t item_len, const char *fmt,
       va_list ap)
{
	char msg[1024], t[96];
	int status = 400;

	vsnprintf(msg, sizeof(msg), fmt, ap);
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

/* ---- dispatch ---- */

struct alt_operation {
	const char *name;
	alt_op_fn fn;
};

static const struct alt_operation operations[] = {
	{ "CreateTable", alt_create_table },
	{ "DeleteTable", alt_delete_table },
	{ "DescribeTable", alt_describe_table },
	{ "ListTables", alt_list_tables },
	{ "UpdateTable", alt_update_table },
	{ "TagResource", alt_tag_resource },
	{ "UntagResource", alt_untag_resource },
	{ "ListTagsOfResource", alt_list_tags },
	{ "DescribeEndpoints", alt_describe_endpoints },
	{ "PutItem", alt_put_item },
	{ "GetItem", alt_get_item },
	{ "DeleteItem", alt_delete_item },
	{ "UpdateItem", alt_update_item },
	{ "Query", alt_query },
	{ "Scan", alt_scan },
	{ "BatchWriteItem", alt_batch_write },
	{ "BatchGetItem", alt_batch_get },
};

static const struct alt_operation *
find_operation(const char *name, size_t len)
{
	unsigned i;

	for (i = 0; i < SM_ARRAY_SIZE(operations); i++)
		if (strlen(operations[i].name) == len && memcmp(operations[i].name, name, len) == 0)
			return &operations[i];
	return NULL;
}

/* Parse the body and run @o. */
static void
run(struct alt_op *op, const struct alt_operation *o)
{
	int ret;

	ret = sm_json_parse(&op->doc, op->body, op->body_len, 0);
	if (ret == -ENOMEM) {
		alt_fail(op, "InternalServerError", "out of memory parsing the request");
		return;
	}
	if (ret < 0) {
		alt_fail(op, "SerializationException", "%s", op->doc.err);
		return;
	}
	op->root = sm_json_root(&op->doc);
	if (sm_json_type(&op->doc, op->root) != SM_JSON_OBJECT) {
		alt_fail(op, "ValidationException", "Request content must be an object");
		return;
	}
	op->names_tok = sm_json_get(&op->doc, op->root, "ExpressionAttributeNames");
	op->values_tok = sm_json_get(&op->doc, op->root, "ExpressionAttributeValues");
	o->fn(op);
}

static void
handle_http(void *ctx, struct sm_http_req *req)
{
	const struct sm_http_str *target, *host;
	const struct alt_operation *o;
	struct alt_op *op;
	const char *dot;
	char msg[300];

	(void)ctx;
	if (req->head.method == SM_HTTP_GET) {
		if (req->head.path.len == 1 && req->head.path.p[0] == '/') {
			host = sm_http_header(req, "host");
			snprintf(msg, sizeof(msg), "healthy: %.*s",
				 host ? (int)SM_MIN(host->len, 256u) : 0, host ? host->p : "");
			sm_http_reply(req, 200, "text/plain", msg, strlen(msg));
			return;
		}
		sm_http_reply(req, 404, "text/plain", "Not Found", 9);
		return;
	}
	if (req->head.method == SM_HTTP_OPTIONS) {
		req->reply_headers = "Access-Control-Allow-Origin: *\r\n"
				     "Access-Control-Allow-Methods: GET, POST\r\n"
				     "Access-Control-Allow-Headers: *\r\n";
		sm_http_reply(req, 200, NULL, NULL, 0);
		return;
	}
	op = op_get();
	if (op == NULL) {
		sm_http_reply(req, 500, SM_HTTP_JSON_TYPE,
			      "{\"__type\":\"" ALT_ERR_PREFIX "InternalServerError\","
			      "\"message\":\"out of memory\"}",
			      strlen("{\"__type\":\"" ALT_ERR_PREFIX "InternalServerError\","
				     "\"message\":\"out of memory\"}"));
		return;
	}
	op->req = req;
	op->body = req->body.p;
	op->body_len = req->body.len;
	if (req->head.method != SM_HTTP_POST) {
		alt_fail(op, "ValidationException", "Unsupported method %.*s",
			 (int)SM_MIN(req->head.method_text.len, 32u), req->head.method_text.p);
		return;
	}
	target = sm_http_header(req, "x-amz-target");
	dot = target ? memchr(target->p, '.', target->len) : NULL;
	if (target == NULL) {
		alt_fail(op, "UnknownOperationException", "Missing X-Amz-Target header");
		return;
	}
	o = dot ? find_operation(dot + 1, target->len - (size_t)(dot + 1 - target->p)) : NULL;
	if (o == NULL) {
		alt_fail(op, "UnknownOperationException", "Unsupported operation %.*s",
			 (int)SM_MIN(target->len, 128u), target->p);
		return;
	}
	SM_STAT_INC(requests);
	run(op, o);
}

const struct sm_http_handler sm_alternator_handler = {
	.request = handle_http,
};

int
sm_alternator_execute(const char *opname, const char *body, size_t len,
		      void (*done)(void *ctx, int status, const char *json, size_t len), void *ctx)
{
	const struct alt_operation *o = find_operation(opname, strlen(opname));
	struct alt_op *op;

	op = op_get();
	if (op == NULL)
		return -ENOMEM;
	op->local_done = done;
	op->local_ctx = ctx;
	op->body = body;
	op->body_len = len;
	if (o == NULL) {
		alt_fail(op, "UnknownOperationException", "Unsupported operation %s", opname);
		return 0;
	}
	run(op, o);
	return 0;
}

int
sm_alternator_shard_init(const struct sm_alternator_config *cfg)
{
	alt_cfg = cfg;
	return 0;
}

void
sm_alternator_shard_fini(void)
{
	struct alt_op *op;

	while ((op = op_free) != NULL) {
		op_free = op->next_free;
		op_destroy(op);
	}
	op_nfree = 0;
	alt_meta_shard_fini();
	sm_http_shard_fini();
}
