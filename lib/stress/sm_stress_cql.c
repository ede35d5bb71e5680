/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CQL client connection of `shardmark stress`.
 *
 * Frames are taken out of the receive views as the server side does
 * (lib/cql/sm_cql_conn.c): a frame that lies whole in one receive buffer is
 * decoded in place; one split across buffers is gathered into a
 * per-connection buffer first. Responses are decoded without copies and
 * handed to the request's callback, so their views live only as long as the
 * callback.
 *
 * The handle is freed only once its owner has called sm_cqlc_close(), no
 * function of ours is on the stack (busy), and the flush task is not queued.
 * Closing detaches the handle from the transport connection (conn->ctx =
 * NULL) before closing that, so the transport's later callbacks find
 * nothing and do nothing; that also covers a close during connect, after
 * which the io_uring driver calls back nothing at all.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sm_core.h"
#include "sm_net.h"
#include "sm_stress_cql.h"
#include "sm_tls.h"

#define DEFAULT_MAX_INFLIGHT 1024
#define DEFAULT_MAX_FRAME (256u << 20)
/* Send what is encoded once this much piled up, without waiting for the task. */
#define FLUSH_THRESHOLD (64u << 10)
/* The stream of the session messages (OPTIONS, STARTUP, AUTH_RESPONSE). */
#define SESSION_STREAM 0

enum cqlc_state {
	ST_CONNECTING,
	ST_OPTIONS, /* OPTIONS sent */
	ST_STARTUP, /* STARTUP sent */
	ST_AUTH,    /* AUTH_RESPONSE sent */
	ST_READY,
	ST_DEAD,
};

struct slot {
	sm_cqlc_cb cb;
	void *arg;
	bool busy;
};

struct sm_cqlc {
	struct sm_conn *conn; /* NULL before connect, and once detached or gone */
	enum cqlc_state st;
	void (*ready)(struct sm_cqlc *c, int err, void *ctx);
	void (*closed)(struct sm_cqlc *c, int err, void *ctx);
	void *ctx;
	char addr[64];
	uint16_t port;
	char *user, *password;
	bool want_lz4;
	char *startup_key, *startup_value;
	uint32_t max_frame;
	struct sm_cqlc_info info;
	struct sockaddr_storage local;
	/* stream ids: free ones on a stack, the requests they carry in slots */
	unsigned max, nfree, inflight;
	uint16_t *free_ids;
	struct slot *slots;
	/* sending: encoded frames wait in out until a flush */
	struct sm_cql_buf out, zout;
	struct sm_task flush_task;
	int send_err; /* a failed threshold flush, handled by the task */
	/* receiving */
	uint8_t hdr[SM_CQL_HEADER_LEN];
	uint32_t hdr_len;
	bool gathering;
	struct sm_cql_frame_header acc_hdr;
	struct sm_cql_buf acc, zin;
	/* lifetime */
	unsigned busy;
	bool in_rx;
	bool user_closed;
	int err;
	char err_text[256];
};

static const struct sm_proto_ops cqlc_proto_ops;

static void
destroy(struct sm_cqlc *c)
{
	sm_cql_buf_release(&c->out);
	sm_cql_buf_release(&c->zout);
	sm_cql_buf_release(&c->acc);
	sm_cql_buf_release(&c->zin);
	sm_free(c->free_ids);
	sm_free(c->slots);
	sm_free(c->user);
	sm_free(c->password);
	sm_free(c->startup_key);
	sm_free(c->startup_value);
	sm_free(c);
}

static inline void
enter(struct sm_cqlc *c)
{
	c->busy++;
}

static inline void
leave(struct sm_cqlc *c)
{
	if (--c->busy == 0 && c->user_closed && !c->flush_task.queued)
		destroy(c);
}

/* A string view for "%.*s" (never a NULL pointer). */
static inline const char *
sv(struct sm_bytes b)
{
	return b.p != NULL ? (const char *)b.p : "";
}

static void
set_error(struct sm_cqlc *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
set_error(struct sm_cqlc *c, const char *fmt, ...)
{
	va_list ap;

	if (c->err_text[0] != '\0')
		return; /* the first cause is the one worth telling */
	va_start(ap, fmt);
	vsnprintf(c->err_text, sizeof(c->err_text), fmt, ap);
	va_end(ap);
}

/* Stop using the transport connection: its later callbacks do nothing. */
static void
detach(struct sm_cqlc *c)
{
	struct sm_conn *conn = c->conn;

	if (conn == NULL)
		return;
	c->conn = NULL;
	conn->ctx = NULL;
	sm_conn_close(conn);
}

static void
complete_failed(struct sm_cqlc *c, unsigned id, int err)
{
	struct slot s = c->slots[id];
	struct sm_cqlc_result r;

	c->slots[id].busy = false;
	c->free_ids[c->nfree++] = (uint16_t)id;
	c->inflight--;
	if (s.cb == NULL)
		return;
	memset(&r, 0, sizeof(r));
	r.kind = SM_CQLC_FAILED;
	r.err = err;
	s.cb(s.arg, &r);
}

/* Complete every request in flight with @err, each exactly once. */
static void
fail_all(struct sm_cqlc *c, int err)
{
	unsigned id;

	for (id = 0; id < c->max && c->inflight > 0; id++)
		if (c->slots[id].busy)
			complete_failed(c, id, err);
}

/*
 * The connection is over (for @err): close the transport, drop what was
 * not sent, fail the requests, then tell the owner, unless it closed us.
 * Call with the handle held (enter()).
 */
static void
conn_end(struct sm_cqlc *c, int err)
{
	bool was_ready = c->st == ST_READY;

	if (c->st == ST_DEAD)
		return;
	c->st = ST_DEAD;
	c->err = err;
	detach(c);
	sm_cql_buf_reset(&c->out);
	fail_all(c, err);
	if (c->user_closed)
		return;
	if (was_ready) {
		if (c->closed != NULL)
			c->closed(c, err, c->ctx);
	} else {
		c->ready(c, err, c->ctx);
	}
}

static void
protocol_error(struct sm_cqlc *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
protocol_error(struct sm_cqlc *c, const char *fmt, ...)
{
	char what[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	set_error(c, "%s:%u is not speaking CQL v4 as expected (%s): closed the connection",
		  c->addr, c->port, what);
	conn_end(c, -EPROTO);
}

/* ---- sending ---- */

/* Hand everything encoded to the transport; <0 when that failed. */
static int
flush_out(struct sm_cqlc *c)
{
	int ret;

	if (c->out.len == 0 || c->conn == NULL)
		return 0;
	ret = sm_conn_send_copy(c->conn, c->out.p, c->out.len);
	sm_cql_buf_reset(&c->out);
	if (ret < 0)
		set_error(c, "sending to %s:%u failed: %s", c->addr, c->port, strerror(-ret));
	return ret;
}

/* Flush, ending the connection on failure (with the handle held). */
static void
flush_or_end(struct sm_cqlc *c)
{
	if (flush_out(c) < 0)
		conn_end(c, -ECONNRESET);
}

static void
flush_task_fn(void *arg)
{
	struct sm_cqlc *c = arg;

	enter(c);
	if (c->send_err < 0)
		conn_end(c, -ECONNRESET);
	else if (c->st != ST_DEAD)
		flush_or_end(c);
	leave(c);
}

/* Compress the frame at @off when LZ4 is on; on failure the frame is dropped. */
static int
finish_frame(struct sm_cqlc *c, size_t off)
{
	int ret;

	if (!c->info.lz4)
		return 0;
	ret = sm_cql_frame_compress(&c->out, off, &c->zout);
	if (ret < 0)
		c->out.len = off;
	return ret;
}

/* ---- requests ---- */

static int
req_begin(struct sm_cqlc *c, unsigned *id)
{
	if (c->st != ST_READY || c->send_err < 0)
		return -ENOTCONN;
	if (c->nfree == 0)
		return -EBUSY;
	*id = c->free_ids[--c->nfree];
	return 0;
}

/* The frame of request @id was encoded at @off with result @ret: queue it or undo. */
static int
req_commit(struct sm_cqlc *c, unsigned id, size_t off, int ret, sm_cqlc_cb cb, void *arg)
{
	if (ret == 0)
		ret = finish_frame(c, off);
	if (ret < 0) {
		c->free_ids[c->nfree++] = (uint16_t)id;
		return ret;
	}
	c->slots[id].cb = cb;
	c->slots[id].arg = arg;
	c->slots[id].busy = true;
	c->inflight++;
	if (c->out.len >= FLUSH_THRESHOLD && c->send_err == 0) {
		/* Failures end the connection from the task, never inside a request call. */
		c->send_err = flush_out(c);
		if (c->send_err < 0)
			sm_task_schedule(&c->flush_task);
	} else if (off == 0 && !c->in_rx) {
		/* The first frame of a burst: one task sends the whole burst. */
		sm_task_schedule(&c->flush_task);
	}
	return 0;
}

/* <query_parameters> with [bytes] values (null when p is NULL). */
static void
write_params(struct sm_cql_buf *b, uint16_t cl, unsigned flags, const struct sm_bytes *values,
	     unsigned n)
{
	unsigned i;

	sm_cql_write_consistency(b, cl);
	sm_cql_write_byte(b, (uint8_t)((flags & ~(unsigned)SM_CQL_QF_VALUES) |
				       (n > 0 ? SM_CQL_QF_VALUES : 0)));
	if (n == 0)
		return;
	sm_cql_write_short(b, (uint16_t)n);
	for (i = 0; i < n; i++)
		sm_cql_write_bytes(b, values[i]);
}

int
sm_cqlc_query(struct sm_cqlc *c, const char *text, uint16_t cl, const struct sm_bytes *values,
	      unsigned n, sm_cqlc_cb cb, void *arg)
{
	unsigned id;
	size_t off;
	int ret;

	if (n > UINT16_MAX)
		return -EINVAL;
	ret = req_begin(c, &id);
	if (ret < 0)
		return ret;
	off = sm_cql_frame_begin(&c->out, SM_CQL_VERSION_REQUEST, 0, (int16_t)id, SM_CQL_OP_QUERY);
	sm_cql_write_long_string(&c->out, sm_cql_str(text));
	write_params(&c->out, cl, 0, values, n);
	ret = sm_cql_frame_end(&c->out, off);
	return req_commit(c, id, off, ret, cb, arg);
}

int
sm_cqlc_prepare(struct sm_cqlc *c, const char *text, sm_cqlc_cb cb, void *arg)
{
	unsigned id;
	size_t off;
	int ret;

	ret = req_begin(c, &id);
	if (ret < 0)
		return ret;
	off = c->out.len;
	ret = sm_cql_enc_prepare(&c->out, (int16_t)id, sm_cql_str(text));
	return req_commit(c, id, off, ret, cb, arg);
}

int
sm_cqlc_execute(struct sm_cqlc *c, struct sm_bytes stmt, uint16_t cl, const struct sm_bytes *values,
		unsigned n, unsigned flags, sm_cqlc_cb cb, void *arg)
{
	unsigned id;
	size_t off;
	int ret;

	if (n > UINT16_MAX || (flags & ~(unsigned)SM_CQLC_SKIP_METADATA) != 0)
		return -EINVAL;
	ret = req_begin(c, &id);
	if (ret < 0)
		return ret;
	off = sm_cql_frame_begin(&c->out, SM_CQL_VERSION_REQUEST, 0, (int16_t)id,
				 SM_CQL_OP_EXECUTE);
	sm_cql_write_short_bytes(&c->out, stmt);
	write_params(&c->out, cl, flags, values, n);
	ret = sm_cql_frame_end(&c->out, off);
	return req_commit(c, id, off, ret, cb, arg);
}

int
sm_cqlc_query_params(struct sm_cqlc *c, struct sm_bytes text, const struct sm_cql_params *params,
		     sm_cqlc_cb cb, void *arg)
{
	unsigned id;
	size_t off;
	int ret;

	ret = req_begin(c, &id);
	if (ret < 0)
		return ret;
	off = c->out.len;
	ret = sm_cql_enc_query(&c->out, (int16_t)id, text, params);
	return req_commit(c, id, off, ret, cb, arg);
}

int
sm_cqlc_execute_params(struct sm_cqlc *c, struct sm_bytes stmt, const struct sm_cql_params *params,
		       sm_cqlc_cb cb, void *arg)
{
	unsigned id;
	size_t off;
	int ret;

	ret = req_begin(c, &id);
	if (ret < 0)
		return ret;
	off = c->out.len;
	ret = sm_cql_enc_execute(&c->out, (int16_t)id, stmt, (struct sm_bytes){ NULL, 0 }, params);
	return req_commit(c, id, off, ret, cb, arg);
}

int
sm_cqlc_batch(struct sm_cqlc *c, const struct sm_cql_batch *batch, sm_cqlc_cb cb, void *arg)
{
	unsigned id;
	size_t off;
	int ret;

	ret = req_begin(c, &id);
	if (ret < 0)
		return ret;
	off = c->out.len;
	ret = sm_cql_enc_batch(&c->out, (int16_t)id, batch);
	return req_commit(c, id, off, ret, cb, arg);
}

int
sm_cqlc_raw(struct sm_cqlc *c, uint8_t opcode, uint8_t flags, struct sm_bytes body, sm_cqlc_cb cb,
	    void *arg)
{
	unsigned id;
	size_t off;
	int ret;

	if ((opcode != SM_CQL_OP_QUERY && opcode != SM_CQL_OP_PREPARE &&
	     opcode != SM_CQL_OP_EXECUTE && opcode != SM_CQL_OP_BATCH) ||
	    (uint64_t)body.len + SM_CQL_HEADER_LEN > c->max_frame)
		return -EINVAL;
	ret = req_begin(c, &id);
	if (ret < 0)
		return ret;
	off = sm_cql_frame_begin(&c->out, SM_CQL_VERSION_REQUEST,
				 flags & (uint8_t)~SM_CQL_FLAG_COMPRESSION, (int16_t)id, opcode);
	sm_cql_write_raw(&c->out, body.p, body.len);
	ret = sm_cql_frame_end(&c->out, off);
	return req_commit(c, id, off, ret, cb, arg);
}

/* ---- responses ---- */

static void
fill_prepared(struct sm_cqlc_result *r, const struct sm_cql_prepared *p)
{
	struct sm_cqlc_prepared *o = &r->prepared;
	uint32_t i;

	o->id_len = (uint16_t)p->id.len;
	memcpy(o->id, p->id.p, p->id.len);
	o->nbind = p->bind.ncols;
	o->ncols = (p->result.flags & SM_CQL_META_NO_METADATA) ? 0 : p->result.ncols;
	o->lwt = (p->bind.flags & SM_CQL_META_LWT) != 0;
	/* A partial key is no routing key: more components than we keep is "unknown". */
	o->npk = p->bind.npk <= SM_CQLC_MAX_PK ? p->bind.npk : 0;
	for (i = 0; i < o->npk; i++)
		o->pk[i] = sm_cql_meta_pk_index(&p->bind, i);
}

/* A response on a request's stream. */
static void
complete(struct sm_cqlc *c, unsigned id, const struct sm_cql_frame_header *h,
	 struct sm_bytes body, const struct sm_cql_response *resp)
{
	struct slot s = c->slots[id];
	struct sm_cqlc_result r;

	memset(&r, 0, sizeof(r));
	r.resp = resp;
	r.hdr = h;
	r.body = body;
	if (resp->opcode == SM_CQL_OP_ERROR) {
		r.kind = SM_CQLC_ERROR;
		r.error_code = resp->u.error.code;
		r.error_message = resp->u.error.message;
	} else if (resp->opcode == SM_CQL_OP_RESULT) {
		const struct sm_cql_result *res = &resp->u.result;

		switch (res->kind) {
		case SM_CQL_RESULT_VOID:
			r.kind = SM_CQLC_VOID;
			break;
		case SM_CQL_RESULT_ROWS:
			r.kind = SM_CQLC_ROWS;
			r.nrows = res->u.rows.nrows;
			r.ncols = res->u.rows.meta.ncols;
			break;
		case SM_CQL_RESULT_SET_KEYSPACE:
			r.kind = SM_CQLC_SET_KEYSPACE;
			r.keyspace = res->u.keyspace;
			break;
		case SM_CQL_RESULT_PREPARED:
			if (res->u.prepared.id.len > SM_CQLC_MAX_ID) {
				protocol_error(c, "a prepared statement id of %u bytes",
					       res->u.prepared.id.len);
				return;
			}
			r.kind = SM_CQLC_PREPARED;
			fill_prepared(&r, &res->u.prepared);
			break;
		case SM_CQL_RESULT_SCHEMA_CHANGE:
			r.kind = SM_CQLC_SCHEMA_CHANGE;
			break;
		default:
			protocol_error(c, "RESULT of unknown kind %d", res->kind);
			return;
		}
	} else {
		protocol_error(c, "a %s frame answering a request",
			       sm_cql_opcode_name(resp->opcode));
		return;
	}
	/* Free the stream first: the callback may reuse it at once. */
	c->slots[id].busy = false;
	c->free_ids[c->nfree++] = (uint16_t)id;
	c->inflight--;
	if (s.cb != NULL)
		s.cb(s.arg, &r);
}

/* Copy the first value of SUPPORTED key @key into @buf; false when absent. */
static bool
supported_get(const struct sm_cql_multimap *mm, const char *key, char *buf, size_t len)
{
	struct sm_cql_strlist vals;
	struct sm_cql_iter it;
	struct sm_bytes v;

	if (!sm_cql_multimap_get(mm, key, &vals))
		return false;
	sm_cql_strlist_iter(&it, &vals);
	if (!sm_cql_strlist_next(&it, &v))
		return false;
	snprintf(buf, len, "%.*s", (int)v.len, sv(v));
	return true;
}

static bool
supported_uint(const struct sm_cql_multimap *mm, const char *key, unsigned long max, unsigned *out)
{
	unsigned long v;
	char buf[24], *end;

	if (!supported_get(mm, key, buf, sizeof(buf)) || buf[0] < '0' || buf[0] > '9')
		return false;
	errno = 0;
	v = strtoul(buf, &end, 10);
	if (errno != 0 || *end != '\0' || v > max)
		return false;
	*out = (unsigned)v;
	return true;
}

static void
parse_supported(struct sm_cqlc *c, const struct sm_cql_multimap *mm)
{
	struct sm_cqlc_info *in = &c->info;
	struct sm_cql_strlist vals;
	struct sm_cql_iter it;
	struct sm_bytes v;
	unsigned port = 0;

	memset(in, 0, sizeof(*in));
	if (!supported_get(mm, "CQL_VERSION", in->cql_version, sizeof(in->cql_version)) ||
	    in->cql_version[0] == '\0')
		snprintf(in->cql_version, sizeof(in->cql_version), "3.0.0");
	if (sm_cql_multimap_get(mm, "COMPRESSION", &vals)) {
		sm_cql_strlist_iter(&it, &vals);
		while (sm_cql_strlist_next(&it, &v))
			if (sm_cql_str_eq(v, "lz4"))
				in->lz4_offered = true;
	}
	/* Its value is empty; the key alone is the offer (the drivers' TabletInfo). */
	in->tablets = sm_cql_multimap_get(mm, "TABLETS_ROUTING_V1", &vals);
	in->scylla =
		supported_uint(mm, "SCYLLA_NR_SHARDS", 65535, &in->nr_shards) && in->nr_shards > 0;
	if (!in->scylla) {
		in->nr_shards = 0;
		return;
	}
	if (!supported_uint(mm, "SCYLLA_SHARD", in->nr_shards - 1, &in->shard))
		in->shard = 0;
	if (!supported_uint(mm, "SCYLLA_SHARDING_IGNORE_MSB", 63, &in->ignore_msb))
		in->ignore_msb = 0;
	supported_get(mm, "SCYLLA_SHARDING_ALGORITHM", in->algorithm, sizeof(in->algorithm));
	supported_get(mm, "SCYLLA_PARTITIONER", in->partitioner, sizeof(in->partitioner));
	if (supported_uint(mm, "SCYLLA_SHARD_AWARE_PORT", 65535, &port))
		in->shard_aware_port = (uint16_t)port;
	if (supported_uint(mm, "SCYLLA_SHARD_AWARE_PORT_SSL", 65535, &port))
		in->shard_aware_port_ssl = (uint16_t)port;
}

static void
send_startup(struct sm_cqlc *c)
{
	struct sm_bytes kv[12]; /* six options at most */
	struct sm_cql_strmap m;
	unsigned n = 0;
	int ret;

	kv[n++] = sm_cql_str("CQL_VERSION");
	kv[n++] = sm_cql_str(c->info.cql_version);
	kv[n++] = sm_cql_str("DRIVER_NAME");
	kv[n++] = sm_cql_str("shardmark stress");
	kv[n++] = sm_cql_str("DRIVER_VERSION");
	kv[n++] = sm_cql_str("1.0");
	if (c->want_lz4 && c->info.lz4_offered) {
		kv[n++] = sm_cql_str("COMPRESSION");
		kv[n++] = sm_cql_str("lz4");
	}
	if (c->startup_key != NULL) {
		kv[n++] = sm_cql_str(c->startup_key);
		kv[n++] = sm_cql_str(c->startup_value);
	}
	/* An appliance group's link relays its clients' requests and answers as
	 * they are: it asks for nothing the client did not (no tablets payload). */
	if (c->startup_key != NULL)
		c->info.tablets = false;
	if (c->info.tablets) {
		/* Accepting the offer: the key with an empty value, as the drivers send it. */
		kv[n++] = sm_cql_str("TABLETS_ROUTING_V1");
		kv[n++] = sm_cql_str("");
	}
	memset(&m, 0, sizeof(m));
	m.kv = kv;
	m.n = (uint16_t)(n / 2);
	ret = sm_cql_enc_startup(&c->out, SESSION_STREAM, &m);
	if (ret < 0) {
		set_error(c, "encoding STARTUP failed: %s", strerror(-ret));
		conn_end(c, ret);
		return;
	}
	c->st = ST_STARTUP;
}

/* SASL PLAIN: authzid (empty) NUL user NUL password. */
static void
send_auth_response(struct sm_cqlc *c)
{
	size_t ulen = strlen(c->user), plen = strlen(c->password), off;
	int ret;

	off = sm_cql_frame_begin(&c->out, SM_CQL_VERSION_REQUEST, 0, SESSION_STREAM,
				 SM_CQL_OP_AUTH_RESPONSE);
	sm_cql_write_int(&c->out, (int32_t)(ulen + plen + 2));
	sm_cql_write_byte(&c->out, 0);
	sm_cql_write_raw(&c->out, c->user, ulen);
	sm_cql_write_byte(&c->out, 0);
	sm_cql_write_raw(&c->out, c->password, plen);
	ret = sm_cql_frame_end(&c->out, off);
	if (ret == 0)
		ret = finish_frame(c, off);
	if (ret < 0) {
		set_error(c, "encoding AUTH_RESPONSE failed: %s", strerror(-ret));
		conn_end(c, ret);
		return;
	}
	c->st = ST_AUTH;
}

static void
session_up(struct sm_cqlc *c)
{
	c->st = ST_READY;
	c->ready(c, 0, c->ctx);
}

/* An ERROR during the session setup ends it. */
static void
session_error(struct sm_cqlc *c, const char *step, const struct sm_cql_error *e)
{
	int err = e->code == SM_CQL_ERR_BAD_CREDENTIALS ? -EACCES : -EPROTO;

	set_error(c, "%s:%u refused %s: error 0x%04x: %.*s", c->addr, c->port, step,
		  (unsigned)e->code, (int)SM_MIN(e->message.len, 160u), sv(e->message));
	conn_end(c, err);
}

/* A response to a session message (before ready). */
static void
session_step(struct sm_cqlc *c, const struct sm_cql_frame_header *h,
	     const struct sm_cql_response *resp)
{
	const char *step = c->st == ST_OPTIONS	 ? "OPTIONS"
			   : c->st == ST_STARTUP ? "STARTUP"
						 : "AUTH_RESPONSE";

	if (h->stream != SESSION_STREAM) {
		protocol_error(c, "a response on stream %d before STARTUP completed", h->stream);
		return;
	}
	if (resp->opcode == SM_CQL_OP_ERROR) {
		session_error(c, step, &resp->u.error);
		return;
	}
	switch (c->st) {
	case ST_OPTIONS:
		if (resp->opcode != SM_CQL_OP_SUPPORTED)
			break;
		parse_supported(c, &resp->u.supported);
		send_startup(c);
		return;
	case ST_STARTUP:
		/* Compression covers every frame after STARTUP's answer. */
		c->info.lz4 = c->want_lz4 && c->info.lz4_offered;
		if (resp->opcode == SM_CQL_OP_READY) {
			session_up(c);
			return;
		}
		if (resp->opcode != SM_CQL_OP_AUTHENTICATE)
			break;
		c->info.auth = true;
		if (c->user == NULL) {
			set_error(c,
				  "%s:%u requires authentication (%.*s): give a user and password",
				  c->addr, c->port, (int)SM_MIN(resp->u.authenticator.len, 100u),
				  sv(resp->u.authenticator));
			conn_end(c, -EACCES);
			return;
		}
		send_auth_response(c);
		return;
	case ST_AUTH:
		if (resp->opcode == SM_CQL_OP_AUTH_SUCCESS) {
			session_up(c);
			return;
		}
		if (resp->opcode == SM_CQL_OP_AUTH_CHALLENGE) {
			set_error(c,
				  "%s:%u sent an AUTH_CHALLENGE: only PasswordAuthenticator "
				  "(SASL PLAIN, one round) is supported",
				  c->addr, c->port);
			conn_end(c, -EPROTO);
			return;
		}
		break;
	default:
		break;
	}
	protocol_error(c, "%s answered with %s", step,
		       sm_cql_opcode_name(resp->opcode) ? sm_cql_opcode_name(resp->opcode) : "?");
}

/* One whole response frame. */
static void
handle_frame(struct sm_cqlc *c, const struct sm_cql_frame_header *h, const uint8_t *body,
	     size_t len)
{
	struct sm_cql_response resp;
	const char *reason = NULL;
	int ret;

	if (h->flags & SM_CQL_FLAG_COMPRESSION) {
		if (!c->info.lz4) {
			protocol_error(c, "a compressed frame without negotiated compression");
			return;
		}
		sm_cql_buf_reset(&c->zin);
		ret = sm_cql_lz4_decompress(&c->zin, body, len, c->max_frame);
		if (ret < 0) {
			protocol_error(c, "an invalid LZ4 body (%s)", strerror(-ret));
			return;
		}
		body = c->zin.p;
		len = c->zin.len;
	}
	ret = sm_cql_response_decode(h, body, len, 0, &resp, &reason);
	if (ret < 0) {
		protocol_error(c, "a malformed %s frame: %s",
			       sm_cql_opcode_name(h->opcode) ? sm_cql_opcode_name(h->opcode) : "?",
			       reason ? reason : "?");
		return;
	}
	if (h->stream == SM_CQL_EVENT_STREAM) {
		/* We never REGISTER; a server may push anyway. */
		if (h->opcode != SM_CQL_OP_EVENT)
			protocol_error(c, "a %s frame on the event stream",
				       sm_cql_opcode_name(h->opcode));
		return;
	}
	if (c->st != ST_READY) {
		session_step(c, h, &resp);
		return;
	}
	if (h->stream < 0 || (unsigned)h->stream >= c->max || !c->slots[h->stream].busy) {
		if (resp.opcode == SM_CQL_OP_ERROR) {
			/* ScyllaDB reports connection-level errors on stream 0, then closes. */
			set_error(c, "%s:%u reported a connection error 0x%04x: %.*s", c->addr,
				  c->port, (unsigned)resp.u.error.code,
				  (int)SM_MIN(resp.u.error.message.len, 160u),
				  sv(resp.u.error.message));
			conn_end(c, -ECONNRESET);
			return;
		}
		protocol_error(c, "a response on stream %d, which has no request in flight",
			       h->stream);
		return;
	}
	complete(c, (unsigned)h->stream, h, (struct sm_bytes){ body, (uint32_t)len }, &resp);
}

/* Check a complete header; false (after ending the connection) when it is bad. */
static bool
header_ok(struct sm_cqlc *c, const uint8_t *p, struct sm_cql_frame_header *h)
{
	const char *reason = NULL;
	int ret;

	ret = sm_cql_frame_header_parse(p, SM_CQL_HEADER_LEN, true, h, &reason);
	if (ret == -EPROTONOSUPPORT) {
		protocol_error(c, "a frame of protocol version 0x%02x", h->version);
		return false;
	}
	if (ret < 0) {
		protocol_error(c, "a bad frame header: %s", reason ? reason : "?");
		return false;
	}
	if ((uint64_t)h->length + SM_CQL_HEADER_LEN > c->max_frame) {
		protocol_error(c, "a frame of %llu bytes, over the limit of %u",
			       (unsigned long long)h->length + SM_CQL_HEADER_LEN, c->max_frame);
		return false;
	}
	return true;
}

/* Collect a body of @h->length bytes that did not arrive whole. */
static void
start_gather(struct sm_cqlc *c, const struct sm_cql_frame_header *h)
{
	c->acc_hdr = *h;
	c->gathering = true;
	sm_cql_buf_reset(&c->acc);
	/* One growth to the size, not a doubling per receive buffer (a failure shows on write). */
	sm_cql_buf_reserve(&c->acc, h->length);
}

static void
consume(struct sm_cqlc *c, const struct sm_iov *v)
{
	const uint8_t *p = (const uint8_t *)v->base;
	size_t left = v->len, n;
	struct sm_cql_frame_header h;

	while (left > 0 && c->st != ST_DEAD) {
		if (c->gathering) {
			n = SM_MIN(left, (size_t)c->acc_hdr.length - c->acc.len);
			sm_cql_write_raw(&c->acc, p, n);
			if (c->acc.err != 0) {
				set_error(c, "out of memory for a %u-byte response",
					  c->acc_hdr.length);
				conn_end(c, -ENOMEM);
				return;
			}
			p += n;
			left -= n;
			if (c->acc.len < c->acc_hdr.length)
				continue;
			c->gathering = false;
			handle_frame(c, &c->acc_hdr, c->acc.p, c->acc.len);
			sm_cql_buf_reset(&c->acc);
			continue;
		}
		if (c->hdr_len > 0 || left < SM_CQL_HEADER_LEN) {
			n = SM_MIN(left, (size_t)(SM_CQL_HEADER_LEN - c->hdr_len));
			memcpy(c->hdr + c->hdr_len, p, n);
			c->hdr_len += (uint32_t)n;
			p += n;
			left -= n;
			if (c->hdr_len < SM_CQL_HEADER_LEN)
				continue;
			c->hdr_len = 0;
			if (!header_ok(c, c->hdr, &h))
				return;
			if (h.length == 0) {
				handle_frame(c, &h, NULL, 0);
			} else {
				start_gather(c, &h);
			}
			continue;
		}
		if (!header_ok(c, p, &h))
			return;
		if (left >= SM_CQL_HEADER_LEN + (size_t)h.length) {
			/* Whole frame here: decode in place. */
			handle_frame(c, &h, p + SM_CQL_HEADER_LEN, h.length);
			p += SM_CQL_HEADER_LEN + h.length;
			left -= SM_CQL_HEADER_LEN + h.length;
			continue;
		}
		start_gather(c, &h);
		p += SM_CQL_HEADER_LEN;
		left -= SM_CQL_HEADER_LEN;
	}
}

/* ---- transport callbacks ---- */

static void
cqlc_connected(struct sm_conn *conn, int err)
{
	struct sm_cqlc *c = conn->ctx;
	int ret;

	if (c == NULL)
		return;
	enter(c);
	if (err < 0) {
		/* closed() will not follow: the transport connection is gone. */
		c->conn = NULL;
		set_error(c, "connecting to %s:%u failed: %s", c->addr, c->port, strerror(-err));
		conn_end(c, err);
		goto out;
	}
	c->conn = conn;
	c->local = conn->local;
	ret = sm_cql_enc_options(&c->out, SESSION_STREAM);
	if (ret < 0) {
		set_error(c, "encoding OPTIONS failed: %s", strerror(-ret));
		conn_end(c, ret);
		goto out;
	}
	c->st = ST_OPTIONS;
	flush_or_end(c);
out:
	leave(c);
}

static void
cqlc_received(struct sm_conn *conn, const struct sm_iov *iov, unsigned n)
{
	struct sm_cqlc *c = conn->ctx;
	unsigned i;

	if (c == NULL)
		return;
	enter(c);
	c->in_rx = true;
	for (i = 0; i < n && c->st != ST_DEAD; i++)
		consume(c, &iov[i]);
	c->in_rx = false;
	/* What the callbacks issued leaves together. */
	if (c->st != ST_DEAD)
		flush_or_end(c);
	leave(c);
}

static void
cqlc_closed(struct sm_conn *conn, int err)
{
	struct sm_cqlc *c = conn->ctx;

	if (c == NULL)
		return;
	enter(c);
	c->conn = NULL;
	if (err < 0)
		set_error(c, "the connection to %s:%u broke: %s", c->addr, c->port, strerror(-err));
	else
		set_error(c, "%s:%u closed the connection", c->addr, c->port);
	conn_end(c, -ECONNRESET);
	leave(c);
}

static void
cqlc_drain(struct sm_conn *conn)
{
	struct sm_cqlc *c = conn->ctx;

	if (c == NULL) {
		sm_conn_close(conn);
		return;
	}
	enter(c);
	set_error(c, "the shard is stopping");
	conn_end(c, -ESHUTDOWN);
	leave(c);
}

static const struct sm_proto_ops cqlc_proto_ops = {
	.name = "cql-client",
	.connected = cqlc_connected,
	.received = cqlc_received,
	.drain = cqlc_drain,
	.closed = cqlc_closed,
};

/* ---- the handle ---- */

int
sm_cqlc_connect(const struct sm_cqlc_opts *o, struct sm_cqlc **out)
{
	struct sockaddr_storage ss;
	struct sm_connect_opts co;
	struct sm_cqlc *c;
	unsigned max = o->max_inflight ? o->max_inflight : DEFAULT_MAX_INFLIGHT, i;
	int ret;

	if (o->addr == NULL || strlen(o->addr) >= sizeof(c->addr) ||
	    sm_net_addr_parse(o->addr, o->port, &ss) < 0 || o->ready == NULL ||
	    max > SM_CQLC_MAX_STREAMS || (o->user == NULL) != (o->password == NULL) ||
	    (o->src_port_mod > 0 && o->src_port_rem >= o->src_port_mod))
		return -EINVAL;
	c = sm_calloc(1, sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	c->slots = sm_calloc(max, sizeof(*c->slots));
	c->free_ids = sm_malloc(max * sizeof(*c->free_ids));
	if (o->user != NULL) {
		c->user = sm_strdup(o->user);
		c->password = sm_strdup(o->password);
	}
	if (o->startup_key != NULL) {
		c->startup_key = sm_strdup(o->startup_key);
		c->startup_value = sm_strdup(o->startup_value != NULL ? o->startup_value : "");
	}
	if (c->slots == NULL || c->free_ids == NULL ||
	    (o->user != NULL && (c->user == NULL || c->password == NULL)) ||
	    (o->startup_key != NULL && (c->startup_key == NULL || c->startup_value == NULL))) {
		destroy(c);
		return -ENOMEM;
	}
	/* Popped from the top: stream 0 first. */
	for (i = 0; i < max; i++)
		c->free_ids[i] = (uint16_t)(max - 1 - i);
	c->max = c->nfree = max;
	snprintf(c->addr, sizeof(c->addr), "%s", o->addr);
	c->port = o->port;
	c->ready = o->ready;
	c->closed = o->closed;
	c->ctx = o->ctx;
	c->want_lz4 = o->lz4;
	c->max_frame = o->max_frame ? o->max_frame : DEFAULT_MAX_FRAME;
	c->st = ST_CONNECTING;
	sm_cql_buf_init(&c->out);
	sm_cql_buf_init(&c->zout);
	sm_cql_buf_init(&c->acc);
	sm_cql_buf_init(&c->zin);
	sm_task_init(&c->flush_task, flush_task_fn, c);
	memset(&co, 0, sizeof(co));
	co.addr = o->addr;
	co.port = o->port;
	co.src_port_mod = o->src_port_mod;
	co.src_port_rem = o->src_port_rem;
	co.proto = &cqlc_proto_ops;
	co.ctx = c;
	ret = o->tls != NULL ? sm_tls_connect(o->tls, &co, &c->conn) : sm_net_connect(&co, &c->conn);
	if (ret < 0) {
		destroy(c);
		return ret;
	}
	*out = c;
	return 0;
}

void
sm_cqlc_close(struct sm_cqlc *c)
{
	if (c == NULL || c->user_closed)
		return;
	c->user_closed = true;
	enter(c);
	if (c->st != ST_DEAD) {
		set_error(c, "closed by its owner");
		conn_end(c, -ECANCELED);
	}
	leave(c);
}

bool
sm_cqlc_is_ready(const struct sm_cqlc *c)
{
	return c->st == ST_READY;
}

const struct sm_cqlc_info *
sm_cqlc_info(const struct sm_cqlc *c)
{
	return &c->info;
}

unsigned
sm_cqlc_inflight(const struct sm_cqlc *c)
{
	return c->inflight;
}

unsigned
sm_cqlc_max_inflight(const struct sm_cqlc *c)
{
	return c->max;
}

const char *
sm_cqlc_error_text(const struct sm_cqlc *c)
{
	return c->err_text;
}

const char *
sm_cqlc_local_addr(const struct sm_cqlc *c, char *buf, size_t len)
{
	return sm_net_addr_str(&c->local, buf, len);
}

void
sm_cqlc_rows_iter(struct sm_cqlc_rows_iter *it, const struct sm_cqlc_result *r)
{
	memset(it, 0, sizeof(*it));
	if (r->kind != SM_CQLC_ROWS || r->resp == NULL)
		return;
	sm_cql_cells_iter(&it->cells, &r->resp->u.result.u.rows);
	it->nrows = r->resp->u.result.u.rows.nrows;
	it->ncols = r->resp->u.result.u.rows.meta.ncols;
}

bool
sm_cqlc_rows_next(struct sm_cqlc_rows_iter *it, struct sm_bytes *cells, unsigned cap)
{
	struct sm_bytes v;
	uint32_t i;

	if (it->row >= it->nrows)
		return false;
	for (i = 0; i < it->ncols; i++) {
		if (!sm_cql_cells_next(&it->cells, &v)) {
			it->row = it->nrows;
			return false;
		}
		if (i < cap)
			cells[i] = v;
	}
	it->row++;
	return true;
}
