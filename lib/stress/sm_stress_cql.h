/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_STRESS_CQL_H
#define SM_STRESS_CQL_H

/*
 * An asynchronous CQL native protocol v4 client connection, owned by one
 * shard (struct sm_cqlc). Everything is a callback on that shard: nothing
 * here blocks, locks or talks to another shard.
 *
 * Session: connect, OPTIONS -> SUPPORTED (the server's ScyllaDB sharding
 * keys are kept, see struct sm_cqlc_info), STARTUP (LZ4 when asked and
 * offered) -> READY, or AUTHENTICATE -> AUTH_RESPONSE (SASL PLAIN, as
 * PasswordAuthenticator wants) -> AUTH_SUCCESS; then ready() runs.
 *
 * Requests: many in flight, one stream id each (0..max_inflight-1, from a
 * free stack: O(1), reused LIFO). A request is encoded at once into the
 * connection's send buffer; everything issued before control returns to
 * the reactor leaves in one sm_conn_send() (the buffer goes out from a task
 * queued once per burst, at the end of a receive callback, or when it
 * passes 64 KiB). With every stream id in use a call returns -EBUSY. The
 * connection allocates nothing per request once its buffers have grown.
 *
 * Completion: each request's callback runs exactly once, with the decoded
 * response (struct sm_cqlc_result, views into the receive buffers, valid
 * only during the callback) or an error when no response will come:
 *   -ECONNRESET  the connection dropped (the server closed it, a reset);
 *   -EPROTO      the server sent something that is not CQL v4: the
 *                connection was closed (sm_cqlc_error_text() says what);
 *   -ECANCELED   sm_cqlc_close() was called;
 *   -ESHUTDOWN   the shard is stopping (SIGINT/SIGTERM drain).
 * Request timeouts are the caller's business (see sm_cqlc_inflight()).
 *
 * Lifetime: the handle from sm_cqlc_connect() stays valid until its owner
 * calls sm_cqlc_close(), exactly once, whatever happened to the connection
 * (also after a failed ready() or a closed()). Callbacks may issue requests
 * and may call sm_cqlc_close() on their own connection.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sm_cql_proto.h"

struct sm_cqlc;

/* The largest max_inflight: the positive int16 stream ids. */
#define SM_CQLC_MAX_STREAMS 32768
/* Longest prepared statement id kept in struct sm_cqlc_prepared (an MD5 is 16). */
#define SM_CQLC_MAX_ID 64
/* Most partition key indexes kept in struct sm_cqlc_prepared. */
#define SM_CQLC_MAX_PK 16

/* Flags of sm_cqlc_execute(). */
#define SM_CQLC_SKIP_METADATA SM_CQL_QF_SKIP_METADATA /* Rows without column specs */

struct sm_tls_ctx;

struct sm_cqlc_opts {
	const char *addr; /* numeric IPv4 or IPv6 address of the server */
	uint16_t port;
	/* ScyllaDB's shard-aware port: when src_port_mod > 0 the local port p
	 * has p % src_port_mod == src_port_rem, so the connection lands on
	 * shard src_port_rem of a server with src_port_mod shards. */
	uint16_t src_port_mod, src_port_rem;
	/* PasswordAuthenticator credentials; NULL when the server needs none. */
	const char *user, *password;
	bool lz4;	       /* ask for LZ4 compression (used when the server offers it) */
	unsigned max_inflight; /* stream ids, 1..SM_CQLC_MAX_STREAMS; 0: 1024 */
	uint32_t max_frame;    /* largest response frame accepted; 0: 256 MiB */
	struct sm_tls_ctx *tls; /* TLS to the server (lib/tls); NULL: plain TCP */
	/* One more STARTUP option (an appliance group's coordinator marks its
	 * connections to the other members with it); NULL: none. */
	const char *startup_key, *startup_value;
	/* The session is up (err 0), or could not be set up (err < 0:
	 * -ECONNREFUSED and other connect errors, -EACCES for refused or
	 * missing credentials, -EPROTO for a server that does not speak v4,
	 * ...; sm_cqlc_error_text() names the cause). Runs once, or never when
	 * sm_cqlc_close() comes first. */
	void (*ready)(struct sm_cqlc *c, int err, void *ctx);
	/* The connection ended after ready(c, 0) (err as for requests; the
	 * requests in flight have completed first). Not called after
	 * sm_cqlc_close(). May be NULL. */
	void (*closed)(struct sm_cqlc *c, int err, void *ctx);
	void *ctx;
};

/* What the server said in SUPPORTED (cql.md §2.1). */
struct sm_cqlc_info {
	bool scylla;		   /* SCYLLA_NR_SHARDS was there: a ScyllaDB-extended server */
	unsigned shard;		   /* SCYLLA_SHARD: this connection's shard */
	unsigned nr_shards;	   /* SCYLLA_NR_SHARDS */
	unsigned ignore_msb;	   /* SCYLLA_SHARDING_IGNORE_MSB */
	char algorithm[48];	   /* SCYLLA_SHARDING_ALGORITHM ("biased-token-round-robin") */
	char partitioner[96];	   /* SCYLLA_PARTITIONER */
	uint16_t shard_aware_port; /* SCYLLA_SHARD_AWARE_PORT; 0: not advertised */
	uint16_t shard_aware_port_ssl; /* SCYLLA_SHARD_AWARE_PORT_SSL: the one TLS clients use */
	bool lz4_offered;	   /* COMPRESSION lists lz4 */
	bool lz4;		   /* the session compresses with LZ4 */
	bool auth;		   /* the server asked for authentication */
	/* TABLETS_ROUTING_V1 (ScyllaDB's docs/dev/protocol-extensions.md): the
	 * server offered it in SUPPORTED, and so STARTUP asked for it; its
	 * responses to misrouted requests then carry the tablets-routing-v1
	 * custom payload (sm_stress_tablets.h decodes it). */
	bool tablets;
	char cql_version[16];	   /* the first CQL_VERSION (sent back in STARTUP) */
};

enum sm_cqlc_kind {
	SM_CQLC_FAILED,	       /* no response: err says why */
	SM_CQLC_ERROR,	       /* an ERROR response: error_code, error_message */
	SM_CQLC_VOID,	       /* RESULT Void */
	SM_CQLC_ROWS,	       /* RESULT Rows: iterate with sm_cqlc_rows_iter() */
	SM_CQLC_SET_KEYSPACE,  /* RESULT Set_keyspace: keyspace */
	SM_CQLC_PREPARED,      /* RESULT Prepared: prepared */
	SM_CQLC_SCHEMA_CHANGE, /* RESULT Schema_change: resp->u.result.u.schema_change */
};

/* A prepared statement, a plain value to copy and keep for sm_cqlc_execute(). */
struct sm_cqlc_prepared {
	uint8_t id[SM_CQLC_MAX_ID];
	uint16_t id_len;
	uint32_t nbind;		     /* bind markers */
	uint32_t ncols;		     /* result columns (0 for statements without rows) */
	uint32_t npk;		     /* partition key indexes (0: unknown to the server) */
	uint16_t pk[SM_CQLC_MAX_PK]; /* bind marker index of each key component */
	bool lwt;		     /* ScyllaDB's LWT mark (only when negotiated) */
};

/* The statement id of @p as a view for sm_cqlc_execute(). */
static inline struct sm_bytes
sm_cqlc_prepared_id(const struct sm_cqlc_prepared *p)
{
	return (struct sm_bytes){ p->id, p->id_len };
}

/* A response as a request's callback sees it; views valid during the callback only. */
struct sm_cqlc_result {
	enum sm_cqlc_kind kind;
	int err;			  /* < 0 only for SM_CQLC_FAILED */
	int32_t error_code;		  /* SM_CQLC_ERROR: enum sm_cql_error_code */
	struct sm_bytes error_message;	  /* SM_CQLC_ERROR */
	struct sm_bytes keyspace;	  /* SM_CQLC_SET_KEYSPACE */
	uint32_t nrows, ncols;		  /* SM_CQLC_ROWS */
	struct sm_cqlc_prepared prepared; /* SM_CQLC_PREPARED */
	/* The whole decoded response (warnings, error details, metadata...),
	 * NULL for SM_CQLC_FAILED. */
	const struct sm_cql_response *resp;
	/* The response as it came (body decompressed), for relaying it
	 * unchanged; NULL and empty for SM_CQLC_FAILED. */
	const struct sm_cql_frame_header *hdr;
	struct sm_bytes body;
};

/* A request's completion; @r is valid only during the call. */
typedef void (*sm_cqlc_cb)(void *arg, const struct sm_cqlc_result *r);

/*
 * Open a connection from the calling shard; ready() follows. Returns 0 with
 * *@out set, or -EINVAL (bad options: address, max_inflight, half the
 * credentials), -ENOMEM, or the transport's synchronous error (-EADDRNOTAVAIL
 * when no source port matches the shard-aware rule, ...), with nothing to
 * close.
 */
int
sm_cqlc_connect(const struct sm_cqlc_opts *o, struct sm_cqlc **out);

/*
 * End the connection and free the handle. Requests still in flight
 * complete with -ECANCELED before this returns; no other callback runs
 * afterwards. Queued requests are dropped (not sent).
 */
void
sm_cqlc_close(struct sm_cqlc *c);

/* True between ready(c, 0) and the end of the connection. */
bool
sm_cqlc_is_ready(const struct sm_cqlc *c);

/* What SUPPORTED said (zeroed until it arrived). */
const struct sm_cqlc_info *
sm_cqlc_info(const struct sm_cqlc *c);

/* Requests in flight (sent or queued, not yet completed). */
unsigned
sm_cqlc_inflight(const struct sm_cqlc *c);

/* The stream id limit the connection was opened with. */
unsigned
sm_cqlc_max_inflight(const struct sm_cqlc *c);

/* Why the session failed or ended, in words ("" while all is well). */
const char *
sm_cqlc_error_text(const struct sm_cqlc *c);

/* The connection's local ip:port (the source port the shard-aware rule chose). */
const char *
sm_cqlc_local_addr(const struct sm_cqlc *c, char *buf, size_t len);

/*
 * QUERY @text at consistency @cl with @n bound values (@values[i].p NULL
 * for null; @values may be NULL when @n is 0). 0 when queued, -ENOTCONN
 * (not ready, or ended), -EBUSY (every stream id in flight), -EINVAL (more
 * than 65535 values, a value or text too long) or -ENOMEM.
 */
int
sm_cqlc_query(struct sm_cqlc *c, const char *text, uint16_t cl, const struct sm_bytes *values,
	      unsigned n, sm_cqlc_cb cb, void *arg);

/* PREPARE @text; the callback's result.prepared holds the id and metadata. Errors as for query. */
int
sm_cqlc_prepare(struct sm_cqlc *c, const char *text, sm_cqlc_cb cb, void *arg);

/*
 * EXECUTE the prepared statement @id at @cl with @n values; @flags may
 * hold SM_CQLC_SKIP_METADATA (Rows come without column specs; ncols and
 * the cells are still there; other flags: -EINVAL). Errors as for query.
 */
int
sm_cqlc_execute(struct sm_cqlc *c, struct sm_bytes id, uint16_t cl, const struct sm_bytes *values,
		unsigned n, unsigned flags, sm_cqlc_cb cb, void *arg);

/*
 * QUERY and EXECUTE with every <query_parameters> field (page size, paging
 * state, serial consistency, timestamp, unset values): @params as the codec
 * encodes it. Errors as for query.
 */
int
sm_cqlc_query_params(struct sm_cqlc *c, struct sm_bytes text, const struct sm_cql_params *params,
		     sm_cqlc_cb cb, void *arg);
int
sm_cqlc_execute_params(struct sm_cqlc *c, struct sm_bytes id, const struct sm_cql_params *params,
		       sm_cqlc_cb cb, void *arg);

/*
 * A request of @opcode (QUERY, PREPARE, EXECUTE, BATCH) whose @body is
 * already encoded, sent as it is with the header @flags (TRACING,
 * CUSTOM_PAYLOAD, BETA; COMPRESSION is the connection's business and is
 * cleared): an appliance group's coordinator relays a client's request
 * with it. -EINVAL for another opcode or a body over the frame limit;
 * other errors as for query.
 */
int
sm_cqlc_raw(struct sm_cqlc *c, uint8_t opcode, uint8_t flags, struct sm_bytes body, sm_cqlc_cb cb,
	    void *arg);

/* BATCH @batch (its statements' values and flags as the codec encodes them). Errors as for query. */
int
sm_cqlc_batch(struct sm_cqlc *c, const struct sm_cql_batch *batch, sm_cqlc_cb cb, void *arg);

/* Iterates the rows of an SM_CQLC_ROWS result; fields are private. */
struct sm_cqlc_rows_iter {
	struct sm_cql_iter cells;
	uint32_t row, nrows, ncols;
};

/* Start at the first row of @r (no rows unless r->kind is SM_CQLC_ROWS). */
void
sm_cqlc_rows_iter(struct sm_cqlc_rows_iter *it, const struct sm_cqlc_result *r);

/*
 * The next row's cells into @cells (room for @cap; cells past @cap are
 * skipped), in column order, each a view of its bytes (p NULL for null).
 * False after the last row.
 */
bool
sm_cqlc_rows_next(struct sm_cqlc_rows_iter *it, struct sm_bytes *cells, unsigned cap);

#endif /* SM_STRESS_CQL_H */
