/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_TLS_H
#define SM_TLS_H

/*
 * lib/tls: TLS for any protocol on lib/net, as a layer between a driver's
 * connection and the protocol's, so CQL and HTTP do not change. The
 * protocol sees plaintext through its own struct sm_conn, whose "driver"
 * is this layer: what it sends is encrypted onto the network connection
 * below, what arrives there is decrypted and delivered to it.
 *
 * GnuTLS does the handshake and the records, as Seastar's TLS (and so
 * ScyllaDB's) does, with the same priority strings. It was chosen over
 * OpenSSL 3 on two points: its transport callbacks take memory, which fits
 * a driver that owns the socket (io_uring), and gnutls_record_get_state()
 * hands over the keys, IVs and sequence numbers that kernel TLS needs,
 * where OpenSSL keeps them inside its own kTLS path on its own socket BIO.
 *
 * Kernel TLS: once the handshake is done and its bytes have left, the
 * sending half moves into the kernel when the driver can (setsockopt
 * TCP_ULP "tls", then TLS_TX with the session's write state); from then on
 * replies go to the socket as plaintext views, without a copy, and the
 * kernel (or a NIC with TLS offload) makes the records. The receiving half
 * stays in user space (records already read past the handshake would be
 * lost to the kernel). Each connection counts which path it took.
 */

#include <stdbool.h>
#include <stddef.h>

#include "sm_net.h"

struct sm_tls_ctx;

struct sm_tls_opts {
	bool server;		  /* accept (true) or connect */
	const char *certificate;  /* PEM; the server's (required), or the client's own */
	const char *keyfile;	  /* PEM key of certificate */
	/* certificate is a PKCS#12 file (.p12, .pfx: certificate and key) with this password */
	const char *pkcs12_password;
	const char *truststore;	  /* PEM CAs; NULL: the system's (client) or none (server) */
	const char *priority;	  /* GnuTLS priority string; NULL: "SECURE128:-VERS-TLS1.0:-VERS-TLS1.1" */
	bool require_client_auth; /* server: ask for and verify a client certificate */
	bool verify_peer;	  /* client: check the server's certificate against truststore */
	const char *server_name;  /* client: SNI and the name checked when verify_peer */
	bool ktls;		  /* move sending into the kernel when it can */
	unsigned handshake_timeout_ms; /* a handshake not done by then is closed; 0: 10000 */
};

/*
 * Load the credentials for @o. Returns 0, or -errno with the cause and fix
 * in @err ("cannot read certificate /etc/x.crt: ...; ..."). The context is
 * read-only once made and serves every shard.
 */
int
sm_tls_ctx_new(const struct sm_tls_opts *o, struct sm_tls_ctx **out, char *err, size_t errlen);

/* Free @t after every connection using it is gone (after the shards stopped). */
void
sm_tls_ctx_free(struct sm_tls_ctx *t);

/*
 * Make @o a TLS listener: its protocol and context become this layer's,
 * which hands each connection, once its handshake is done, to the
 * protocol and context @o had. Call before sm_net_listen(). Returns 0 or
 * -ENOMEM.
 */
int
sm_tls_wrap_listen(struct sm_tls_ctx *t, struct sm_listen_opts *o);

/*
 * Connect with TLS: as sm_net_connect(), but *@c is the plaintext
 * connection of o->proto, whose connected() runs once the handshake is
 * done (or failed).
 */
int
sm_tls_connect(struct sm_tls_ctx *t, const struct sm_connect_opts *o, struct sm_conn **c);

/* Per-shard counters of this layer (summed by the caller over shards). */
struct sm_tls_stats {
	unsigned long long handshakes;	     /* completed */
	unsigned long long handshake_errors; /* failed: bad records, no shared cipher, bad cert */
	unsigned long long ktls_tx;	     /* connections whose sending the kernel does */
	unsigned long long userspace_tx;     /* connections encrypted in user space */
	unsigned long long bytes_encrypted;  /* plaintext bytes encrypted in user space */
	unsigned long long bytes_decrypted;
	unsigned long long handshake_timeouts; /* closed: the handshake took too long */
};

/* Shard @shard's counters; any thread. */
void
sm_tls_stats_read(unsigned shard, struct sm_tls_stats *out);

/*
 * This layer's counters for @nshards shards in the Prometheus text format
 * (shardmark_tls_*, one sample per shard) into @buf; like snprintf, returns
 * the length the whole text needs.
 */
size_t
sm_tls_format_prometheus(char *buf, size_t len, unsigned nshards);

/*
 * Why the calling shard's last failed handshake failed (GnuTLS's words, "The
 * certificate is NOT trusted."), or "" when none has.
 */
const char *
sm_tls_last_error(void);

/* Why kernel TLS was not used on this process's last try, or NULL. */
const char *
sm_tls_ktls_unavailable_reason(void);

#endif /* SM_TLS_H */
