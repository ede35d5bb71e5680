/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CQL connections: frames out of receive views, the session messages, and
 * requests handed to the executor.
 *
 * A frame that lies whole in one receive buffer is decoded in place and the
 * request keeps a reference on that buffer; a frame split across buffers is
 * gathered into a send buffer first (copy), so receive buffers go back to
 * the driver at once and a slow client cannot pin them.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sm_core.h"
#include "cql_metrics_priv.h"
#include "sm_cql_conn.h"

#define DEFAULT_MAX_FRAME (256u << 20)

struct sm_cql_conn {
	struct sm_conn *c; /* NULL once the transport connection is gone */
	const struct sm_cql_service *svc;
	unsigned refs; /* the transport's, plus one per request in flight */
	bool started;  /* STARTUP answered */
	bool authed;   /* authenticated, or no authentication configured */
	bool lz4;
	bool tablets_v1; /* STARTUP asked for TABLETS_ROUTING_V1 */
	bool dead; /* a fatal protocol error was answered: ignore the rest */
	uint8_t hdr[SM_CQL_HEADER_LEN];
	uint32_t hdr_len; /* header bytes gathered */
	struct sm_cql_frame_header acc_hdr;
	struct sm_sendbuf *acc;	   /* a frame body being gathered */
	struct sm_cql_buf out;	   /* session replies */
	struct sm_cql_buf scratch; /* LZ4 */
	char keyspace[SM_CQL_KEYSPACE_MAX];
	/* in-process connection: replies go to this callback, not a socket */
	void (*local_reply)(void *ctx, const uint8_t *frame, size_t len);
	void *local_ctx;
	/* REGISTERed for SCHEMA_CHANGE: on the shard's event list */
	bool schema_events;
	struct sm_cql_conn *ev_prev, *ev_next;
	/* replies sent: unchanged across exec->request(), the request waits */
	unsigned nreplies;
	/* a frame begun but not whole yet: since when, and its timer */
	uint64_t frame_start_ms;
	struct sm_timer frame_timer;
};

static __thread struct sm_cql_conn *event_conns;

/*
 * Requests waiting for their reply (a hop to another shard, a Paxos round),
 * one FIFO per timeout kind: every request of a list has the same timeout,
 * so deadlines come in list order and the shard's one timer looks at heads
 * only. Requests answered at once never get here.
 */
struct pending_list {
	struct sm_cql_req *head, *tail;
};
static __thread struct pending_list pending[SM_CQL_TIMEOUT_NR];
static __thread struct sm_timer pending_timer;
static __thread unsigned npending;

static void
events_unlink(struct sm_cql_conn *cc)
{
	if (!cc->schema_events)
		return;
	if (cc->ev_prev != NULL)
		cc->ev_prev->ev_next = cc->ev_next;
	else
		event_conns = cc->ev_next;
	if (cc->ev_next != NULL)
		cc->ev_next->ev_prev = cc->ev_prev;
	cc->schema_events = false;
}

static __thread struct sm_pool conn_pool;
static __thread struct sm_pool req_pool;
static __thread bool pools_ready;

static void
conn_put(struct sm_cql_conn *cc)
{
	if (--cc->refs > 0)
		return;
	sm_timer_cancel(&cc->frame_timer);
	if (cc->acc != NULL)
		sm_bufseg_put(&cc->acc->seg);
	sm_cql_buf_release(&cc->out);
	sm_cql_buf_release(&cc->scratch);
	sm_pool_put(&conn_pool, cc);
}

const struct sm_cql_service *
sm_cql_conn_service(const struct sm_cql_conn *c)
{
	return c->svc;
}

char *
sm_cql_conn_keyspace(struct sm_cql_conn *c)
{
	return c->keyspace;
}

bool
sm_cql_conn_tablets_routing(const struct sm_cql_conn *c)
{
	return c->tablets_v1;
}

/* Send what @b holds, compressing a single frame when LZ4 was negotiated. */
static void
send_frame(struct sm_cql_conn *cc, struct sm_cql_buf *b)
{
	if (cc->local_reply != NULL && !cc->dead) {
		cc->local_reply(cc->local_ctx, b->p, b->len);
		return;
	}
	if (cc->c == NULL || b->len == 0)
		return;
	if (cc->lz4 && sm_cql_frame_compress(b, 0, &cc->scratch) < 0) {
		SM_WARN("cql: compressing a response failed: closing the connection");
		sm_conn_close(cc->c);
		return;
	}
	if (sm_conn_send_copy(cc->c, b->p, b->len) < 0)
		sm_conn_close(cc->c);
}

static void
send_error(struct sm_cql_conn *cc, int16_t stream, int32_t code, const char *msg, bool fatal)
{
	struct sm_cql_error e;

	memset(&e, 0, sizeof(e));
	e.code = code;
	e.message = sm_cql_str(msg);
	sm_cql_buf_reset(&cc->out);
	if (sm_cql_enc_error(&cc->out, stream, &e) == 0)
		send_frame(cc, &cc->out);
	if (fatal && cc->c != NULL) {
		cc->dead = true;
		sm_conn_close(cc->c);
	}
}

static void
send_supported(struct sm_cql_conn *cc, int16_t stream)
{
	char shard[16], nr[16], port[16], port_ssl[16];
	struct sm_bytes v_cql = sm_cql_str("3.3.1"), v_lz4 = sm_cql_str("lz4"), v_shard, v_nr,
			v_port, v_port_ssl, v_part = sm_cql_str("org.apache.cassandra.dht.Murmur3Partitioner"),
			v_algo = sm_cql_str("biased-token-round-robin"), v_msb = sm_cql_str("12"),
			v_lwt = sm_cql_str("LWT_OPTIMIZATION_META_BIT_MASK=2147483648"),
			v_empty = SM_CQL_EMPTY;
	struct sm_cql_multimap_entry e[12];
	struct sm_cql_multimap mm;
	unsigned n = 0;

	snprintf(shard, sizeof(shard), "%u", sm_shard_id());
	snprintf(nr, sizeof(nr), "%u", sm_shard_count());
	snprintf(port, sizeof(port), "%u", cc->svc->shard_aware_port);
	snprintf(port_ssl, sizeof(port_ssl), "%u", cc->svc->shard_aware_port_ssl);
	v_shard = sm_cql_str(shard);
	v_nr = sm_cql_str(nr);
	v_port = sm_cql_str(port);
	v_port_ssl = sm_cql_str(port_ssl);
#define ENTRY(k, vp)                                                                               \
	do {                                                                                       \
		e[n].key = sm_cql_str(k);                                                          \
		e[n].values.v = (vp);                                                              \
		e[n].values.n = 1;                                                                 \
		e[n].values.raw = SM_CQL_EMPTY;                                                    \
		n++;                                                                               \
	} while (0)
	ENTRY("CQL_VERSION", &v_cql);
	/* Drivers index COMPRESSION unconditionally; snappy is not offered. */
	ENTRY("COMPRESSION", &v_lz4);
	ENTRY("CLIENT_OPTIONS", &v_empty);
	ENTRY("SCYLLA_SHARD", &v_shard);
	ENTRY("SCYLLA_NR_SHARDS", &v_nr);
	ENTRY("SCYLLA_SHARDING_ALGORITHM", &v_algo);
	ENTRY("SCYLLA_SHARDING_IGNORE_MSB", &v_msb);
	ENTRY("SCYLLA_PARTITIONER", &v_part);
	ENTRY("SCYLLA_LWT_ADD_METADATA_MARK", &v_lwt);
	/* transport/cql_protocol_extension.cc: the extension has no values */
	ENTRY("TABLETS_ROUTING_V1", &v_empty);
	e[n - 1].values.n = 0;
	if (cc->svc->shard_aware_port != 0)
		ENTRY("SCYLLA_SHARD_AWARE_PORT", &v_port);
	/* transport/server.cc: drivers using TLS connect to this one instead */
	if (cc->svc->shard_aware_port_ssl != 0)
		ENTRY("SCYLLA_SHARD_AWARE_PORT_SSL", &v_port_ssl);
#undef ENTRY
	memset(&mm, 0, sizeof(mm));
	mm.e = e;
	mm.n = (uint16_t)n;
	sm_cql_buf_reset(&cc->out);
	if (sm_cql_enc_supported(&cc->out, stream, &mm) == 0)
		send_frame(cc, &cc->out);
}

static void
send_ready(struct sm_cql_conn *cc, int16_t stream)
{
	sm_cql_buf_reset(&cc->out);
	if (sm_cql_enc_ready(&cc->out, stream) == 0)
		send_frame(cc, &cc->out);
}

static void
handle_startup(struct sm_cql_conn *cc, const struct sm_cql_frame_header *h,
	       const struct sm_cql_request *req)
{
	struct sm_bytes v;
	char msg[160];

	if (sm_cql_strmap_get(&req->u.startup, "COMPRESSION", &v) && v.len > 0) {
		if (!sm_cql_str_eq(v, "lz4")) {
			snprintf(msg, sizeof(msg),
				 "Unknown compression algorithm: %.*s (shardmark offers lz4)",
				 (int)SM_MIN(v.len, 64u), (const char *)v.p);
			send_error(cc, h->stream, SM_CQL_ERR_PROTOCOL, msg, false);
			return;
		}
	}
	if (!sm_cql_strmap_get(&req->u.startup, "CQL_VERSION", &v)) {
		send_error(cc, h->stream, SM_CQL_ERR_PROTOCOL, "CQL_VERSION is mandatory", false);
		return;
	}
	cc->started = true;
	if (cc->svc->auth_user != NULL) {
		sm_cql_buf_reset(&cc->out);
		if (sm_cql_enc_authenticate(
			    &cc->out, h->stream,
			    sm_cql_str("org.apache.cassandra.auth.PasswordAuthenticator")) == 0)
			send_frame(cc, &cc->out);
	} else {
		/* READY goes out uncompressed; compression starts after it. */
		cc->authed = true;
		send_ready(cc, h->stream);
	}
	cc->lz4 = sm_cql_strmap_get(&req->u.startup, "COMPRESSION", &v) && v.len > 0;
	/* docs/dev/protocol-extensions.md: a key in STARTUP, whatever its value */
	cc->tablets_v1 = sm_cql_strmap_get(&req->u.startup, "TABLETS_ROUTING_V1", &v);
}

/* SASL PLAIN: [authzid] NUL user NUL password. */
static void
handle_auth_response(struct sm_cql_conn *cc, const struct sm_cql_frame_header *h,
		     const struct sm_cql_request *req)
{
	struct sm_bytes t = req->u.auth_token;
	const uint8_t *user = NULL, *pass = NULL, *nul;
	size_t ulen = 0, plen = 0;
	char msg[200];

	if (!cc->started || cc->svc->auth_user == NULL || cc->authed) {
		send_error(cc, h->stream, SM_CQL_ERR_PROTOCOL,
			   "Unexpected AUTH_RESPONSE: no authentication is in progress", false);
		return;
	}
	if (t.p != NULL && (nul = memchr(t.p, 0, t.len)) != NULL) {
		user = nul + 1;
		nul = memchr(user, 0, t.len - (size_t)(user - t.p));
		if (nul != NULL) {
			ulen = (size_t)(nul - user);
			pass = nul + 1;
			plen = t.len - (size_t)(pass - t.p);
		}
	}
	if (pass == NULL) {
		send_error(
			cc, h->stream, SM_CQL_ERR_BAD_CREDENTIALS,
			"Authentication failed: expected a SASL PLAIN token (\\0user\\0password)",
			false);
		return;
	}
	if (ulen != strlen(cc->svc->auth_user) || memcmp(user, cc->svc->auth_user, ulen) != 0 ||
	    plen != strlen(cc->svc->auth_password) ||
	    memcmp(pass, cc->svc->auth_password, plen) != 0) {
		snprintf(msg, sizeof(msg), "Provided username %.*s and/or password are incorrect",
			 (int)SM_MIN(ulen, 64u), (const char *)user);
		send_error(cc, h->stream, SM_CQL_ERR_BAD_CREDENTIALS, msg, false);
		return;
	}
	cc->authed = true;
	sm_cql_buf_reset(&cc->out);
	if (sm_cql_enc_auth_success(&cc->out, h->stream, (struct sm_bytes){ NULL, 0 }) == 0)
		send_frame(cc, &cc->out);
}

static void
handle_register(struct sm_cql_conn *cc, const struct sm_cql_frame_header *h,
		const struct sm_cql_request *req)
{
	struct sm_cql_iter it;
	struct sm_bytes ev;
	char msg[160];
	int type;

	sm_cql_strlist_iter(&it, &req->u.register_events);
	while (sm_cql_strlist_next(&it, &ev)) {
		type = sm_cql_event_type_parse(ev);
		if (type < 0) {
			snprintf(msg, sizeof(msg), "Invalid value '%.*s' for Type",
				 (int)SM_MIN(ev.len, 64u), (const char *)ev.p);
			send_error(cc, h->stream, SM_CQL_ERR_PROTOCOL, msg, false);
			return;
		}
		/* One node that never changes: only schema changes happen. */
		if (type == SM_CQL_EVENT_SCHEMA_CHANGE && !cc->schema_events) {
			cc->schema_events = true;
			cc->ev_prev = NULL;
			cc->ev_next = event_conns;
			if (event_conns != NULL)
				event_conns->ev_prev = cc;
			event_conns = cc;
		}
	}
	send_ready(cc, h->stream);
}

void
sm_cql_push_schema_event(const struct sm_cql_schema_change *sc)
{
	struct sm_cql_event ev;
	struct sm_cql_conn *cc;

	memset(&ev, 0, sizeof(ev));
	ev.type = SM_CQL_EVENT_SCHEMA_CHANGE;
	ev.schema = *sc;
	for (cc = event_conns; cc != NULL; cc = cc->ev_next) {
		if (cc->c == NULL || cc->dead)
			continue;
		sm_cql_buf_reset(&cc->out);
		if (sm_cql_enc_event(&cc->out, &ev) == 0)
			send_frame(cc, &cc->out);
	}
}

/* An opcode a client may send (the others have no name here, or are responses). */
static bool
request_opcode(uint8_t opcode)
{
	switch (opcode) {
	case SM_CQL_OP_STARTUP:
	case SM_CQL_OP_OPTIONS:
	case SM_CQL_OP_QUERY:
	case SM_CQL_OP_PREPARE:
	case SM_CQL_OP_EXECUTE:
	case SM_CQL_OP_REGISTER:
	case SM_CQL_OP_BATCH:
	case SM_CQL_OP_AUTH_RESPONSE:
		return true;
	default:
		return false;
	}
}

static void
pending_unlink(struct sm_cql_req *req)
{
	struct pending_list *l = &pending[req->timeout_kind];

	if (req->pend_prev != NULL)
		req->pend_prev->pend_next = req->pend_next;
	else
		l->head = req->pend_next;
	if (req->pend_next != NULL)
		req->pend_next->pend_prev = req->pend_prev;
	else
		l->tail = req->pend_prev;
	req->tstate &= ~SM_CQL_REQ_PENDING;
	npending--;
}

static const char *const timeout_keys[SM_CQL_TIMEOUT_NR] = {
	[SM_CQL_TIMEOUT_OTHER] = "request_timeout_in_ms",
	[SM_CQL_TIMEOUT_READ] = "read_request_timeout_in_ms",
	[SM_CQL_TIMEOUT_RANGE] = "range_request_timeout_in_ms",
	[SM_CQL_TIMEOUT_WRITE] = "write_request_timeout_in_ms",
	[SM_CQL_TIMEOUT_COUNTER] = "counter_write_request_timeout_in_ms",
	[SM_CQL_TIMEOUT_CAS] = "cas_contention_timeout_in_ms",
	[SM_CQL_TIMEOUT_TRUNCATE] = "truncate_request_timeout_in_ms",
};

/* The consistency level the request asked for (ONE when it has none). */
static uint16_t
req_consistency(const struct sm_cql_req *req)
{
	switch (req->msg.opcode) {
	case SM_CQL_OP_QUERY:
		return req->msg.u.query.params.consistency;
	case SM_CQL_OP_EXECUTE:
		return req->msg.u.execute.params.consistency;
	case SM_CQL_OP_BATCH:
		return req->msg.u.batch.consistency;
	default:
		return SM_CQL_ONE;
	}
}

/* Answer @req with the timeout error of its kind, as ScyllaDB words it. */
static void
reply_timeout(struct sm_cql_req *req)
{
	struct sm_cql_conn *cc = req->conn;
	uint8_t kind = req->timeout_kind;
	const char *cl = sm_cql_consistency_name(req_consistency(req));
	struct sm_cql_error e;
	char msg[200];

	req->tstate |= SM_CQL_REQ_TIMED_OUT;
	SM_STAT_INC(requests_timed_out);
	if (cc->dead || (cc->c == NULL && cc->local_reply == NULL))
		return;
	snprintf(msg, sizeof(msg),
		 "Operation timed out - received only 0 responses from 1 CL=%s (%s: %u ms)",
		 cl != NULL ? cl : "ONE", timeout_keys[kind], cc->svc->timeout_ms[kind]);
	memset(&e, 0, sizeof(e));
	e.message = sm_cql_str(msg);
	e.consistency = req_consistency(req);
	e.blockfor = 1;
	if (kind == SM_CQL_TIMEOUT_WRITE || kind == SM_CQL_TIMEOUT_COUNTER ||
	    kind == SM_CQL_TIMEOUT_CAS) {
		e.code = SM_CQL_ERR_WRITE_TIMEOUT;
		e.write_type = kind == SM_CQL_TIMEOUT_CAS	  ? SM_CQL_WT_CAS
			       : kind == SM_CQL_TIMEOUT_COUNTER ? SM_CQL_WT_COUNTER
			       : req->msg.opcode == SM_CQL_OP_BATCH ? SM_CQL_WT_BATCH
								    : SM_CQL_WT_SIMPLE;
	} else {
		e.code = SM_CQL_ERR_READ_TIMEOUT;
	}
	sm_cql_buf_reset(&cc->out);
	if (sm_cql_enc_error(&cc->out, req->hdr.stream, &e) == 0)
		send_frame(cc, &cc->out);
}

/* The shard's pending timer: time out the overdue heads, re-arm for the next. */
static void
pending_expire(void *arg)
{
	uint64_t now = sm_shard_now_ms(), next = UINT64_MAX;
	struct sm_cql_req *req;
	unsigned k;

	(void)arg;
	for (k = 0; k < SM_CQL_TIMEOUT_NR; k++) {
		while ((req = pending[k].head) != NULL && req->deadline_ms <= now) {
			pending_unlink(req);
			reply_timeout(req);
		}
		if (req != NULL)
			next = SM_MIN(next, req->deadline_ms);
	}
	if (next != UINT64_MAX)
		sm_timer_arm(&pending_timer, next - now);
}

/* @req was not answered at once: it waits, with a deadline. */
static void
pending_add(struct sm_cql_req *req)
{
	uint32_t ms = req->conn->svc->timeout_ms[req->timeout_kind];
	struct pending_list *l;

	if (ms == 0 || req->timeout_kind >= SM_CQL_TIMEOUT_NR)
		return;
	l = &pending[req->timeout_kind];
	req->deadline_ms = sm_shard_now_ms() + ms;
	req->pend_next = NULL;
	req->pend_prev = l->tail;
	if (l->tail != NULL)
		l->tail->pend_next = req;
	else
		l->head = req;
	l->tail = req;
	req->tstate |= SM_CQL_REQ_PENDING;
	npending++;
	if (pending_timer.fn == NULL) /* zeroed is not idle: heap slot 0 */
		sm_timer_init(&pending_timer, pending_expire, NULL);
	if (!sm_timer_armed(&pending_timer))
		sm_timer_arm(&pending_timer, ms);
}

static void
dispatch(struct sm_cql_conn *cc, const struct sm_cql_frame_header *h, const uint8_t *body,
	 size_t len, struct sm_bufseg *seg)
{
	struct sm_sendbuf *plain = NULL;
	struct sm_cql_request msg;
	struct sm_cql_req *req;
	const char *reason = NULL;
	unsigned replies;
	char text[160];
	int ret;

	if (h->flags & SM_CQL_FLAG_COMPRESSION) {
		if (!cc->lz4) {
			send_error(cc, h->stream, SM_CQL_ERR_PROTOCOL,
				   "compressed frame without negotiated compression", true);
			return;
		}
		sm_cql_buf_reset(&cc->scratch);
		ret = sm_cql_lz4_decompress(&cc->scratch, body, len,
					    cc->svc->max_frame ? cc->svc->max_frame
							       : DEFAULT_MAX_FRAME);
		if (ret < 0) {
			send_error(cc, h->stream, SM_CQL_ERR_PROTOCOL,
				   "invalid LZ4 compressed body", true);
			return;
		}
		plain = sm_sendbuf_new(cc->scratch.len);
		if (plain == NULL) {
			send_error(cc, h->stream, SM_CQL_ERR_SERVER, "out of memory", true);
			return;
		}
		memcpy(plain->data, cc->scratch.p, cc->scratch.len);
		plain->len = cc->scratch.len;
		body = (const uint8_t *)plain->data;
		len = plain->len;
		seg = &plain->seg;
	}
	ret = sm_cql_request_decode(h, body, len, 0, &msg, &reason);
	if (ret < 0 && !request_opcode(h->opcode)) {
		/* ScyllaDB's answer (transport/server.cc), for response opcodes too */
		snprintf(text, sizeof(text), "Unknown opcode %u", (unsigned)h->opcode);
		send_error(cc, h->stream, SM_CQL_ERR_PROTOCOL, text, false);
		goto out;
	}
	if (ret < 0) {
		snprintf(text, sizeof(text), "Invalid %s message: %s",
			 sm_cql_opcode_name(h->opcode), reason ? reason : "malformed");
		send_error(cc, h->stream, SM_CQL_ERR_PROTOCOL, text, false);
		goto out;
	}
	CQL_STAT_INC(opcodes[h->opcode & 15]);
	switch (h->opcode) {
	case SM_CQL_OP_OPTIONS:
		send_supported(cc, h->stream);
		goto out;
	case SM_CQL_OP_STARTUP:
		handle_startup(cc, h, &msg);
		goto out;
	case SM_CQL_OP_REGISTER:
		handle_register(cc, h, &msg);
		goto out;
	case SM_CQL_OP_AUTH_RESPONSE:
		handle_auth_response(cc, h, &msg);
		goto out;
	default:
		break;
	}
	if (!cc->started) {
		snprintf(text, sizeof(text), "Unexpected message %s, expecting STARTUP or OPTIONS",
			 sm_cql_opcode_name(h->opcode));
		send_error(cc, h->stream, SM_CQL_ERR_PROTOCOL, text, false);
		goto out;
	}
	if (!cc->authed) {
		send_error(
			cc, h->stream, SM_CQL_ERR_UNAUTHORIZED,
			"You have not logged in (PasswordAuthenticator: answer AUTHENTICATE first)",
			false);
		goto out;
	}
	req = sm_pool_get(&req_pool);
	if (req == NULL) {
		send_error(cc, h->stream, SM_CQL_ERR_OVERLOADED, "out of memory", false);
		goto out;
	}
	memset(req, 0, sizeof(*req));
	req->conn = cc;
	req->hdr = *h;
	req->body.p = body;
	req->body.len = (uint32_t)len;
	req->msg = msg;
	req->seg = seg;
	if (seg != NULL)
		sm_bufseg_get(seg);
	cc->refs++;
	SM_STAT_INC(requests);
	CQL_STAT_INC(requests_started);
	req->start_cycles = sm_cycles();
	replies = cc->nreplies;
	cc->svc->exec->request(cc->svc->exec->ctx, req);
	if (cc->nreplies == replies) /* not answered yet: it waits for another shard */
		pending_add(req);
out:
	if (plain != NULL)
		sm_bufseg_put(&plain->seg);
}

void
sm_cql_reply(struct sm_cql_req *req, struct sm_cql_buf *frame)
{
	struct sm_cql_conn *cc = req->conn;

	cc->nreplies++;
	cql_metrics_answered(req->timeout_kind, sm_cycles() - req->start_cycles, req->cf);
	req->cf = NULL;
	if (SM_UNLIKELY(req->tstate != 0)) {
		if (req->tstate & SM_CQL_REQ_PENDING)
			pending_unlink(req);
		if (req->tstate & SM_CQL_REQ_TIMED_OUT)
			goto release; /* its timeout error went out instead */
	}
	if (!cc->dead)
		send_frame(cc, frame);
release:
	if (req->seg != NULL)
		sm_bufseg_put(req->seg);
	sm_pool_put(&req_pool, req);
	conn_put(cc);
}

void
sm_cql_reply_error(struct sm_cql_req *req, int32_t code, const char *message)
{
	struct sm_cql_conn *cc = req->conn;
	struct sm_cql_error e;

	memset(&e, 0, sizeof(e));
	e.code = code;
	e.message = sm_cql_str(message);
	sm_cql_buf_reset(&cc->out);
	sm_cql_enc_error(&cc->out, req->hdr.stream, &e);
	sm_cql_reply(req, &cc->out);
}

/*
 * Check a complete header: false (after answering and closing) when the
 * connection cannot go on.
 */
static bool
header_ok(struct sm_cql_conn *cc, const uint8_t *p, struct sm_cql_frame_header *h)
{
	uint32_t max = cc->svc->max_frame ? cc->svc->max_frame : DEFAULT_MAX_FRAME;
	const char *reason = NULL;
	char msg[160];
	int ret;

	ret = sm_cql_frame_header_parse(p, SM_CQL_HEADER_LEN, false, h, &reason);
	if (ret == -EPROTONOSUPPORT) {
		/* Drivers start above v4 and step down on exactly this error. */
		sm_cql_buf_reset(&cc->out);
		if (sm_cql_enc_version_error(&cc->out, h->stream, h->version & 0x7f) == 0)
			send_frame(cc, &cc->out);
		cc->dead = true;
		sm_conn_close(cc->c);
		return false;
	}
	if (ret < 0) {
		snprintf(msg, sizeof(msg), "Invalid frame: %s", reason ? reason : "bad header");
		send_error(cc, 0, SM_CQL_ERR_PROTOCOL, msg, true);
		return false;
	}
	if ((uint64_t)h->length + SM_CQL_HEADER_LEN > max) {
		snprintf(msg, sizeof(msg),
			 "Request is too big: length %llu exceeds maximum allowed length %u "
			 "(native_transport_max_frame_size)",
			 (unsigned long long)h->length + SM_CQL_HEADER_LEN, max);
		send_error(cc, h->stream, SM_CQL_ERR_PROTOCOL, msg, true);
		return false;
	}
	return true;
}

/*
 * Gather a body of @h->length bytes that did not arrive whole. The buffer
 * starts small and doubles as bytes come: a header that declares 256 MiB
 * and sends nothing more costs GATHER_FIRST, not the declared length.
 */
#define GATHER_FIRST (64u << 10)

static bool
start_gather(struct sm_cql_conn *cc, const struct sm_cql_frame_header *h)
{
	cc->acc = sm_sendbuf_new(SM_MIN(h->length, GATHER_FIRST));
	if (cc->acc == NULL) {
		send_error(cc, h->stream, SM_CQL_ERR_SERVER, "out of memory", true);
		return false;
	}
	cc->acc->len = 0;
	cc->acc_hdr = *h;
	cc->frame_start_ms = sm_shard_now_ms();
	return true;
}

/* Room for @need bytes of the body being gathered: false after failing the connection. */
static bool
grow_gather(struct sm_cql_conn *cc, size_t need)
{
	size_t cap = SM_MIN(SM_MAX(need, 2 * cc->acc->cap), (size_t)cc->acc_hdr.length);
	struct sm_sendbuf *b = sm_sendbuf_new(cap);

	if (b == NULL) {
		send_error(cc, cc->acc_hdr.stream, SM_CQL_ERR_SERVER, "out of memory", true);
		return false;
	}
	memcpy(b->data, cc->acc->data, cc->acc->len);
	b->len = cc->acc->len;
	sm_bufseg_put(&cc->acc->seg);
	cc->acc = b;
	return true;
}

static void
consume(struct sm_cql_conn *cc, const struct sm_iov *v)
{
	const uint8_t *p = (const uint8_t *)v->base;
	size_t left = v->len;
	struct sm_cql_frame_header h;

	while (left > 0 && !cc->dead && cc->c != NULL) {
		if (cc->acc != NULL) {
			size_t n = SM_MIN(left, (size_t)cc->acc_hdr.length - cc->acc->len);
			struct sm_sendbuf *b;

			if (n > cc->acc->cap - cc->acc->len && !grow_gather(cc, cc->acc->len + n))
				return;
			memcpy(cc->acc->data + cc->acc->len, p, n);
			cc->acc->len += n;
			p += n;
			left -= n;
			if (cc->acc->len < cc->acc_hdr.length)
				continue;
			b = cc->acc;
			cc->acc = NULL;
			dispatch(cc, &cc->acc_hdr, (const uint8_t *)b->data, b->len, &b->seg);
			sm_bufseg_put(&b->seg);
			continue;
		}
		if (cc->hdr_len > 0 || left < SM_CQL_HEADER_LEN) {
			size_t n = SM_MIN(left, (size_t)(SM_CQL_HEADER_LEN - cc->hdr_len));

			if (cc->hdr_len == 0)
				cc->frame_start_ms = sm_shard_now_ms();

			memcpy(cc->hdr + cc->hdr_len, p, n);
			cc->hdr_len += (uint32_t)n;
			p += n;
			left -= n;
			if (cc->hdr_len < SM_CQL_HEADER_LEN)
				continue;
			cc->hdr_len = 0;
			if (!header_ok(cc, cc->hdr, &h))
				return;
			if (h.length == 0)
				dispatch(cc, &h, NULL, 0, NULL);
			else if (!start_gather(cc, &h))
				return;
			continue;
		}
		if (!header_ok(cc, p, &h))
			return;
		if (left >= SM_CQL_HEADER_LEN + (size_t)h.length) {
			/* Whole frame here: decode in place, keep the buffer. */
			dispatch(cc, &h, p + SM_CQL_HEADER_LEN, h.length, v->seg);
			p += SM_CQL_HEADER_LEN + h.length;
			left -= SM_CQL_HEADER_LEN + h.length;
			continue;
		}
		if (!start_gather(cc, &h))
			return;
		p += SM_CQL_HEADER_LEN;
		left -= SM_CQL_HEADER_LEN;
	}
}


static int
pools_init(void)
{
	if (pools_ready)
		return 0;
	if (sm_pool_init(&conn_pool, "cql-conn", sizeof(struct sm_cql_conn), 16) < 0 ||
	    sm_pool_init(&req_pool, "cql-req", sizeof(struct sm_cql_req), 64) < 0)
		return -ENOMEM;
	pools_ready = true;
	cql_metrics_shard_init();
	sm_pool_trim_when_idle(&conn_pool);
	sm_pool_trim_when_idle(&req_pool);
	return 0;
}

static bool
frame_partial(const struct sm_cql_conn *cc)
{
	return cc->acc != NULL || cc->hdr_len > 0;
}

/* A frame began and has not arrived whole: see sm_cql_service.frame_timeout_ms. */
static void
frame_timer_fire(void *arg)
{
	struct sm_cql_conn *cc = arg;
	uint32_t limit = cc->svc->frame_timeout_ms;
	uint64_t now = sm_shard_now_ms();
	char msg[160];

	if (cc->dead || cc->c == NULL || !frame_partial(cc))
		return;
	if (now - cc->frame_start_ms < limit) {
		sm_timer_arm(&cc->frame_timer, cc->frame_start_ms + limit - now);
		return;
	}
	SM_STAT_INC(conns_timed_out);
	snprintf(msg, sizeof(msg),
		 "Frame not received whole within %u ms (native_transport_frame_timeout_in_ms): "
		 "closing the connection",
		 limit);
	send_error(cc, cc->acc != NULL ? cc->acc_hdr.stream : 0, SM_CQL_ERR_PROTOCOL, msg, true);
}

static int
cql_accepted(struct sm_conn *c, void *listen_ctx)
{
	struct sm_cql_conn *cc;

	if (pools_init() < 0)
		return -ENOMEM;
	cc = sm_pool_get(&conn_pool);
	if (cc == NULL)
		return -ENOMEM;
	memset(cc, 0, sizeof(*cc));
	CQL_STAT_INC(connections_opened);
	cc->c = c;
	cc->svc = listen_ctx;
	cc->refs = 1;
	sm_cql_buf_init(&cc->out);
	sm_cql_buf_init(&cc->scratch);
	sm_timer_init(&cc->frame_timer, frame_timer_fire, cc);
	c->ctx = cc;
	return 0;
}

static void
cql_received(struct sm_conn *c, const struct sm_iov *iov, unsigned n)
{
	struct sm_cql_conn *cc = c->ctx;
	unsigned i;

	for (i = 0; i < n && !cc->dead; i++)
		consume(cc, &iov[i]);
	/* The timer is armed once per partial frame, and re-armed lazily. */
	if (cc->svc->frame_timeout_ms != 0 && !cc->dead && frame_partial(cc) &&
	    !sm_timer_armed(&cc->frame_timer))
		sm_timer_arm(&cc->frame_timer, cc->svc->frame_timeout_ms);
}

static void
cql_closed(struct sm_conn *c, int err)
{
	struct sm_cql_conn *cc = c->ctx;

	(void)err;
	CQL_STAT_INC(connections_closed);
	events_unlink(cc);
	sm_timer_cancel(&cc->frame_timer);
	cc->c = NULL;
	cc->dead = true;
	conn_put(cc);
}

struct sm_cql_conn *
sm_cql_local_conn(const struct sm_cql_service *svc,
		  void (*on_reply)(void *ctx, const uint8_t *frame, size_t len), void *ctx)
{
	struct sm_cql_conn *cc;

	if (pools_init() < 0)
		return NULL;
	cc = sm_pool_get(&conn_pool);
	if (cc == NULL)
		return NULL;
	memset(cc, 0, sizeof(*cc));
	cc->svc = svc;
	cc->refs = 1;
	cc->started = true;
	cc->authed = true;
	cc->local_reply = on_reply;
	cc->local_ctx = ctx;
	sm_timer_init(&cc->frame_timer, frame_timer_fire, cc);
	sm_cql_buf_init(&cc->out);
	sm_cql_buf_init(&cc->scratch);
	return cc;
}

void
sm_cql_local_request(struct sm_cql_conn *cc, int16_t stream, uint8_t opcode, const uint8_t *body,
		     size_t len)
{
	struct sm_cql_frame_header h = {
		.version = SM_CQL_VERSION_REQUEST,
		.stream = stream,
		.opcode = opcode,
		.length = (uint32_t)len,
	};

	dispatch(cc, &h, body, len, NULL);
}

void
sm_cql_local_conn_close(struct sm_cql_conn *cc)
{
	cc->dead = true;
	cc->local_reply = NULL;
	conn_put(cc);
}

void
sm_cql_shard_fini(void)
{
	if (!pools_ready)
		return;
	sm_pool_destroy(&conn_pool);
	sm_pool_destroy(&req_pool);
	pools_ready = false;
}

const struct sm_proto_ops sm_cql_proto_ops = {
	.name = "cql",
	.accepted = cql_accepted,
	.received = cql_received,
	.closed = cql_closed,
};
