/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_CQL_CONN_H
#define SM_CQL_CONN_H

/*
 * CQL native-protocol connections on the transport interface (lib/net):
 * framing, limits, the session messages, and requests handed to an
 * executor.
 *
 * The connection answers OPTIONS (SUPPORTED with ScyllaDB's sharding
 * keys), STARTUP (READY; LZ4 when asked), and REGISTER itself. QUERY,
 * PREPARE, EXECUTE and BATCH go to the executor, which answers each with
 * sm_cql_reply() at once or later (after a hop to the owning shard); the
 * request's body stays valid until then. Requests on different streams may
 * be answered out of order, as the protocol allows.
 *
 * Bad input never costs more than the frame header: a frame longer than
 * max_frame, a response frame, or bytes that are not a frame get a
 * Protocol error and the connection closes; a frame of another protocol
 * version gets the error drivers read as "downgrade", then the close. A
 * client that disconnects mid-frame leaves nothing behind.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sm_cql_proto.h"
#include "sm_net.h"

struct sm_cql_conn;

/*
 * Which of ScyllaDB's request timeouts (scylla.yaml) bounds a request; the
 * executor sets sm_cql_req.timeout_kind when it knows the statement.
 */
enum sm_cql_timeout_kind {
	SM_CQL_TIMEOUT_OTHER,	 /* request_timeout_in_ms: 10000 */
	SM_CQL_TIMEOUT_READ,	 /* read_request_timeout_in_ms: 5000 */
	SM_CQL_TIMEOUT_RANGE,	 /* range_request_timeout_in_ms: 10000 */
	SM_CQL_TIMEOUT_WRITE,	 /* write_request_timeout_in_ms: 2000 */
	SM_CQL_TIMEOUT_COUNTER,	 /* counter_write_request_timeout_in_ms: 5000 */
	SM_CQL_TIMEOUT_CAS,	 /* cas_contention_timeout_in_ms: 1000 */
	SM_CQL_TIMEOUT_TRUNCATE, /* truncate_request_timeout_in_ms: 60000 */
	SM_CQL_TIMEOUT_NR,
};

#define SM_CQL_REQ_PENDING 1u   /* on the shard's list of requests waiting for a reply */
#define SM_CQL_REQ_TIMED_OUT 2u /* answered with a timeout: the executor's reply is dropped */

/* A request for the executor; valid until sm_cql_reply(). */
struct sm_cql_req {
	struct sm_cql_conn *conn;
	struct sm_cql_frame_header hdr;
	struct sm_bytes body;	   /* decompressed body */
	struct sm_cql_request msg; /* decoded, views into body */
	uint8_t timeout_kind;	   /* enum sm_cql_timeout_kind; the executor may set it */
	/* private */
	uint8_t tstate; /* SM_CQL_REQ_PENDING, SM_CQL_REQ_TIMED_OUT bits (0: neither) */
	uint64_t deadline_ms;
	uint64_t start_cycles; /* sm_cycles() when it arrived, for the latency metrics */
	struct cql_cf_stats *cf; /* held: its table's metrics (the executor sets it), or NULL */
	struct sm_cql_req *pend_prev, *pend_next;
	struct sm_bufseg *seg; /* holds the body's memory */
	struct sm_cql_req *next_free;
};

struct sm_cql_executor {
	/* Answer with sm_cql_reply(req, frame) exactly once. */
	void (*request)(void *ctx, struct sm_cql_req *req);
	void *ctx;
};

/* The listen context of a CQL port (read-only, shared by every shard). */
struct sm_cql_service {
	uint32_t max_frame;	   /* whole frame, header included; 0: 256 MiB */
	uint16_t shard_aware_port; /* advertised in SUPPORTED; 0: none */
	uint16_t shard_aware_port_ssl; /* its TLS twin (SCYLLA_SHARD_AWARE_PORT_SSL); 0: none */
	const struct sm_cql_executor *exec;
	/* PasswordAuthenticator (SASL PLAIN) with these credentials; NULL: allow all */
	const char *auth_user;
	const char *auth_password;
	/* for the executor: the node this port presents (system tables) */
	const void *node;
	/*
	 * A request not answered within its timeout_ms[kind] gets ScyllaDB's
	 * WriteTimeout or ReadTimeout, and the executor's late reply is
	 * dropped; 0: no limit (perf-simple-query). A frame that has begun
	 * but not arrived whole within frame_timeout_ms gets a Protocol error
	 * and the close (a client sending a byte a second); 0: no limit.
	 */
	uint32_t timeout_ms[SM_CQL_TIMEOUT_NR];
	uint32_t frame_timeout_ms;
};

/* Protocol ops for sm_net_listen(); listen ctx: a struct sm_cql_service. */
extern const struct sm_proto_ops sm_cql_proto_ops;

/*
 * Send the response frame(s) in @frame (encoded with the request's stream;
 * compressed here when the connection negotiated LZ4) and release @req.
 * When the connection has closed meanwhile, only the release happens.
 */
void
sm_cql_reply(struct sm_cql_req *req, struct sm_cql_buf *frame);

/* Answer @req with an ERROR of @code and @message. */
void
sm_cql_reply_error(struct sm_cql_req *req, int32_t code, const char *message);

/*
 * Room for the connection's keyspace name with its NUL: Alternator's
 * keyspaces ("alternator_" and a table name of up to 222 characters) are
 * longer than CQL's 48, and a CQL client may USE them.
 */
#define SM_CQL_KEYSPACE_MAX 256

/* The connection's current keyspace (USE), "" when none; the executor owns it. */
char *
sm_cql_conn_keyspace(struct sm_cql_conn *c);

/* True when the connection's STARTUP negotiated TABLETS_ROUTING_V1 (the tablets-routing-v1 payload). */
bool
sm_cql_conn_tablets_routing(const struct sm_cql_conn *c);

/* Send a SCHEMA_CHANGE event to the calling shard's REGISTERed connections. */
void
sm_cql_push_schema_event(const struct sm_cql_schema_change *sc);

/*
 * In-process connections (perf-simple-query: the executor without a
 * network): requests go in with sm_cql_local_request(), already started
 * and authenticated, and each response frame (uncompressed) goes to
 * @on_reply, possibly later, after a hop. The request body must stay valid
 * until its reply. Close with sm_cql_local_conn_close(); replies still in
 * flight are dropped then.
 */
struct sm_cql_conn *
sm_cql_local_conn(const struct sm_cql_service *svc,
		  void (*on_reply)(void *ctx, const uint8_t *frame, size_t len), void *ctx);
void
sm_cql_local_request(struct sm_cql_conn *c, int16_t stream, uint8_t opcode, const uint8_t *body,
		     size_t len);
void
sm_cql_local_conn_close(struct sm_cql_conn *c);

/* The service (listen context) the connection came in on. */
const struct sm_cql_service *
sm_cql_conn_service(const struct sm_cql_conn *c);

/* Free the calling shard's CQL connection state (after its connections closed). */
void
sm_cql_shard_fini(void);

/*
 * ScyllaDB's CQL metrics (scylla_cql_*, scylla_transport_*,
 * scylla_storage_proxy_coordinator_*) of @nshards shards as Prometheus text,
 * for /metrics (sm_cql_metrics.c).
 */
void
sm_cql_format_metrics(FILE *f, unsigned nshards);

#endif /* SM_CQL_CONN_H */
