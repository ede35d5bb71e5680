/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Alternator (DynamoDB API over HTTP) protocol of the stress engine
 * (its struct sm_stress_proto_ops): CreateTable on the control connection,
 * one connection per worker, the PutItem / UpdateItem / GetItem request
 * each operation sends, and the check of a GetItem's item. The client
 * connection itself is sm_stress_http.c.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sm_stress_run_priv.h"
#include "sm_tls.h"

static void
http_ctl_step(void);

static size_t
b64(const uint8_t *p, size_t n, char *o)
{
	static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i, k = 0;

	for (i = 0; i + 2 < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];

		o[k++] = t[v >> 18];
		o[k++] = t[(v >> 12) & 63];
		o[k++] = t[(v >> 6) & 63];
		o[k++] = t[v & 63];
	}
	if (i < n) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);

		o[k++] = t[v >> 18];
		o[k++] = t[(v >> 12) & 63];
		o[k++] = i + 1 < n ? t[(v >> 6) & 63] : '=';
		o[k++] = '=';
	}
	return k;
}

static int32_t
alt_check_item(struct sm_stress_worker *w, const char *body, size_t len)
{
	struct sm_json_doc *d = &w->sh->json_doc;
	char want[8192], name[16];
	uint8_t val[4096];
	int item, attr, b;
	unsigned c;

	if (sm_json_parse(d, body, len, 0) < 0)
		return SM_STRESS_VALIDATION_ERROR;
	item = sm_json_get(d, sm_json_root(d), "Item");
	if (item < 0)
		return SM_STRESS_VALIDATION_MISSING; /* GetItem of a key never put: {} */
	for (c = 0; c < sx->ncols; c++) {
		uint32_t n = sm_stress_cell_size(w->key_index, c);
		size_t wl;

		if (n > sizeof(val))
			return SM_STRESS_VALIDATION_ERROR;
		snprintf(name, sizeof(name), "C%u", c);
		attr = sm_json_get(d, item, name);
		b = attr >= 0 ? sm_json_get(d, attr, "B") : -1;
		if (b < 0)
			return SM_STRESS_VALIDATION_ERROR;
		sm_stress_value(w->key_index, c, val, n);
		wl = b64(val, n, want);
		if (!sm_json_str_eqn(d, b, want, wl))
			return SM_STRESS_VALIDATION_ERROR;
	}
	return 0;
}

static void
alt_done(void *arg, int err, int status, const char *body, size_t len)
{
	struct sm_stress_worker *w = arg;

	if (err < 0) {
		sm_stress_worker_finish(w, err, 0);
		return;
	}
	if (sx->s.wl != NULL) {
		uint64_t rows = 0;
		int32_t bad = sx->s.wl->alt_done(w, status, body, len, &rows, alt_done);

		if (bad != SM_STRESS_YCSB_AGAIN)
			sm_stress_worker_finish(w, bad, bad ? 0 : rows);
		return;
	}
	if (status != 200) {
		sm_stress_worker_finish(w, status, 0);
		return;
	}
	if (w->op == SM_STRESS_OP_READ && !sx->s.errors.skip_read_validation) {
		int32_t bad = alt_check_item(w, body, len);

		if (bad != 0) {
			sm_stress_worker_finish(w, bad, 0);
			return;
		}
	}
	sm_stress_worker_finish(w, 0, 1);
}

static void
alt_send(struct sm_stress_worker *w)
{
	struct sm_stress_shard *sh = w->sh;
	struct sm_stress_conn *c;
	const char *op;
	char *p = w->json, *end = w->json + w->json_cap;
	uint8_t val[4096];
	unsigned i, c0, n = sh->conns_per_host * sx->nhosts;
	int ret;

	/* One request in flight per connection: the worker's own on some host. */
	c = &sh->conns[(unsigned)(sh->rr++ % sx->nhosts) * sh->conns_per_host + w->idx];
	for (i = 0; !c->ready && i < n; i++)
		c = &sh->conns[(w->idx + i) % n];
	if (!c->ready || sm_httpc_inflight(c->http) > 0) {
		sm_stress_worker_finish(w, -ENOTCONN, 0);
		return;
	}
	if (sx->s.wl != NULL) {
		ret = sx->s.wl->alt_send(w, c, alt_done);
		if (ret < 0)
			sm_stress_worker_finish(w, ret, 0);
		return;
	}
	p += snprintf(p, (size_t)(end - p),
		      "{\"TableName\":\"%s\",\"%s\":{\"key\":{\"S\":\"%.*s\"}}", sx->s.schema.table,
		      w->op == SM_STRESS_OP_READ || sx->s.mode.alt_op != SM_STRESS_ALT_PUT ? "Key"
											   : "Item",
		      SM_STRESS_KEY_LEN, (const char *)w->key);
	if (w->op == SM_STRESS_OP_READ) {
		op = "GetItem";
		p += snprintf(p, (size_t)(end - p), ",\"ConsistentRead\":%s}",
			      sx->s.cl == SM_STRESS_CL_ONE || sx->s.cl == SM_STRESS_CL_LOCAL_ONE
				      ? "false"
				      : "true");
	} else if (sx->s.mode.alt_op == SM_STRESS_ALT_PUT) {
		op = "PutItem";
		p--; /* reopen the Item object */
		for (c0 = 0; c0 < sx->ncols; c0++) {
			uint32_t len = sm_stress_cell_size(w->key_index, c0);

			sm_stress_value(w->key_index, c0, val, len);
			p += snprintf(p, (size_t)(end - p), ",\"C%u\":{\"B\":\"", c0);
			p += b64(val, len, p);
			p += snprintf(p, (size_t)(end - p), "\"}");
		}
		p += snprintf(p, (size_t)(end - p), "}}");
	} else {
		op = "UpdateItem";
		p += snprintf(p, (size_t)(end - p), ",\"UpdateExpression\":\"SET ");
		for (c0 = 0; c0 < sx->ncols; c0++)
			p += snprintf(p, (size_t)(end - p), "%sC%u = :c%u", c0 ? ", " : "", c0, c0);
		p += snprintf(p, (size_t)(end - p), "\"");
		if (sx->s.mode.alt_op == SM_STRESS_ALT_UPDATE_CONDITIONAL)
			/* perf-alternator's write_rmw condition: a read-modify-write */
			p += snprintf(p, (size_t)(end - p),
				      ",\"ConditionExpression\":\"(NOT attribute_exists(C%u)) OR "
				      "size(C0) <= :max\"",
				      sx->ncols);
		p += snprintf(p, (size_t)(end - p), ",\"ExpressionAttributeValues\":{");
		for (c0 = 0; c0 < sx->ncols; c0++) {
			uint32_t len = sm_stress_cell_size(w->key_index, c0);

			sm_stress_value(w->key_index, c0, val, len);
			p += snprintf(p, (size_t)(end - p), "%s\":c%u\":{\"B\":\"", c0 ? "," : "",
				      c0);
			p += b64(val, len, p);
			p += snprintf(p, (size_t)(end - p), "\"}");
		}
		if (sx->s.mode.alt_op == SM_STRESS_ALT_UPDATE_CONDITIONAL)
			p += snprintf(p, (size_t)(end - p), ",\":max\":{\"N\":\"100000\"}");
		p += snprintf(p, (size_t)(end - p), "}}");
	}
	ret = sm_httpc_post(c->http, op, w->json, (size_t)(p - w->json), alt_done, w);
	if (ret < 0)
		sm_stress_worker_finish(w, ret, 0);
}

static void
http_ready(struct sm_httpc *h, int err, void *ctx)
{
	struct sm_stress_conn *c = ctx;

	if (err < 0) {
		c->http = NULL; /* freed by the client after a failed connect */
		sm_stress_conn_failed(c, err, strerror(-err));
		return;
	}
	(void)h;
	sm_stress_conn_ready(c);
}

static void
http_closed(struct sm_httpc *h, int err, void *ctx)
{
	struct sm_stress_conn *c = ctx;

	(void)h;
	c->http = NULL;
	c->ready = false;
	if (!c->sh->stopping)
		sm_stress_conn_failed(c, err < 0 ? err : -ECONNRESET,
				      "connection closed by the server");
}

static void
ctl_http_ready(struct sm_httpc *h, int err, void *ctx)
{
	(void)h;
	(void)ctx;
	if (err < 0) {
		sx->ctl_http = NULL;
		if (sx->tls != NULL && err == -ECONNABORTED)
			sm_stress_control_fail(
				"cannot connect to Alternator at %s:%u: the TLS handshake failed: %s "
				"(check -transport truststore= and that -port alternator= is the "
				"https port)",
				sx->s.nodes.hosts[0], sx->s.alternator_port, sm_tls_last_error());
		else
			sm_stress_control_fail(
				"cannot connect to Alternator at %s:%u: %s (check -node and -port "
				"alternator=)",
				sx->s.nodes.hosts[0], sx->s.alternator_port, strerror(-err));
		return;
	}
	sx->ctl_step = 1;
	http_ctl_step();
}

static void
ctl_http_cb(void *arg, int err, int status, const char *body, size_t len)
{
	(void)arg;
	if (err < 0) {
		sm_stress_control_fail("Alternator control request failed: %s", strerror(-err));
		return;
	}
	/* An existing table is fine: the run reuses it. */
	if (status != 200 && !(len > 0 && memmem(body, len, "ResourceInUseException", 22))) {
		sm_stress_control_fail("CreateTable on %s:%u answered HTTP %d: %.*s",
				       sx->s.nodes.hosts[0], sx->s.alternator_port, status,
				       (int)SM_MIN(len, (size_t)300), body);
		return;
	}
	sx->ctl_step++;
	http_ctl_step();
}

/* The one setup step: create the table (an existing one is fine). */
static void
http_ctl_step(void)
{
	char q[2048];
	int ret = 0;

	if (sx->ctl_step == 1) {
		char *p = q;

		if (sx->s.wl != NULL) {
			p += sx->s.wl->alt_create(q, sizeof(q));
			ret = sm_httpc_post(sx->ctl_http, "CreateTable", q, (size_t)(p - q),
					    ctl_http_cb, NULL);
			goto sent;
		}
		p += snprintf(q, sizeof(q),
			      "{\"TableName\":\"%s\",\"BillingMode\":\"PAY_PER_REQUEST\","
			      "\"AttributeDefinitions\":[{\"AttributeName\":\"key\","
			      "\"AttributeType\":\"S\"}],\"KeySchema\":[{\"AttributeName\":"
			      "\"key\",\"KeyType\":\"HASH\"}]}",
			      sx->s.schema.table);
		ret = sm_httpc_post(sx->ctl_http, "CreateTable", q, (size_t)(p - q), ctl_http_cb,
				    NULL);
	} else {
		sm_httpc_close(sx->ctl_http);
		sx->ctl_http = NULL;
		sm_stress_start_connect();
		return;
	}
sent:
	if (ret < 0)
		sm_stress_control_fail("Alternator control request: %s", strerror(-ret));
}

static int
http_ctl_open(void)
{
	struct sm_httpc_opts o = {
		.addr = sx->s.nodes.hosts[0],
		.port = sx->s.alternator_port,
		.max_inflight = 1,
		.tls = sx->tls,
		.ready = ctl_http_ready,
		.ctx = sx,
	};

	return sm_httpc_open(&o, &sx->ctl_http);
}

static void
http_ctl_close(void)
{
	if (sx->ctl_http != NULL) {
		sm_httpc_close(sx->ctl_http);
		sx->ctl_http = NULL;
	}
}

static uint16_t
http_port(void)
{
	return sx->s.alternator_port;
}

/* One request in flight per connection: a connection per worker. */
static unsigned
http_conns_per_host(const struct sm_stress_shard *sh)
{
	return SM_MAX(1u, sh->nworkers);
}

static int
http_connect(struct sm_stress_conn *c, unsigned slot)
{
	struct sm_httpc_opts o = {
		.addr = sx->addrs[c->host],
		.port = sx->s.alternator_port,
		.max_inflight = 1,
		.tls = sx->tls,
		.ready = http_ready,
		.closed = http_closed,
		.ctx = c,
	};

	(void)slot;
	return sm_httpc_open(&o, &c->http);
}

/* c->http goes NULL in http_closed(), when the client is done with it. */
static void
http_close(struct sm_stress_conn *c)
{
	if (c->http != NULL)
		sm_httpc_close(c->http);
}

/* YCSB's per-shard state (the dynamodb binding); nothing for cassandra-stress's commands. */
static void
http_prepare(void)
{
	if (sx->s.wl != NULL)
		sx->s.wl->prepare();
}

const struct sm_stress_proto_ops sm_stress_http_ops = {
	.name = "alternator",
	.prepare = http_prepare,
	.ctl_open = http_ctl_open,
	.ctl_step = http_ctl_step,
	.ctl_close = http_ctl_close,
	.ctl_port = http_port,
	.conns_per_host = http_conns_per_host,
	.conn_port = http_port,
	.connect = http_connect,
	.send = alt_send,
	.close = http_close,
};
