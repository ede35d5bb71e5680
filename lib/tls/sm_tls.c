/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The TLS layer: a protocol to the driver below (sm_tls_proto) and a driver
 * to the protocol above (tls_driver). See sm_tls.h.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include "sm_core.h"
#include "sm_net_driver.h"
#include "sm_tls.h"
#include "tls_priv.h"

#define DEFAULT_PRIORITY "SECURE128:-VERS-TLS1.0:-VERS-TLS1.1"
/* Ciphertext held for a connection that does not decrypt yet (its protocol
 * paused it): a few records; past it the peer is misbehaving. */
#define RX_MAX (256u << 10)
#define PLAIN_BUF 16384u /* a record's plaintext at most */

struct sm_tls_ctx {
	gnutls_certificate_credentials_t cred;
	gnutls_priority_t prio;
	struct sm_tls_opts o;
	char *server_name;
	struct tls_wrap *wraps; /* listeners and connects made with this context */
};

/* What a listener (or a connect) had before TLS: the protocol it serves. */
struct tls_wrap {
	struct sm_tls_ctx *tls;
	const struct sm_proto_ops *inner;
	void *inner_ctx;
	struct tls_wrap *next;
};

struct tls_conn {
	struct sm_conn inner; /* first: the protocol's connection, our "driver" casts */
	struct sm_conn *outer;
	struct sm_tls_ctx *tls;
	const struct sm_proto_ops *up; /* the protocol above */
	void *up_listen_ctx;	       /* its listener's context (server side) */
	gnutls_session_t s;
	/* ciphertext received and not yet consumed by GnuTLS */
	uint8_t *rx;
	size_t rx_len, rx_off, rx_cap;
	struct sm_sendbuf *plain; /* where the next record is decrypted */
	struct sm_task pump;
	struct sm_timer handshake_timer; /* a peer that never finishes its handshake */
	bool handshaken;
	bool attached;	  /* the inner protocol has the connection: closed() is owed */
	bool ktls_tx;	  /* the kernel encrypts what we send */
	bool ktls_tried;  /* or we tried and it could not */
	bool outer_gone;  /* closed() came from below */
	bool pump_queued; /* free when the task has run */
	bool client;
};

static SM_CACHE_ALIGNED struct sm_tls_stats tls_stats[SM_MAX_SHARDS];
static __thread char last_error[160];
static const char *ktls_reason;

static const struct sm_net_driver tls_driver;

static inline struct sm_tls_stats *
my_stats(void)
{
	return &tls_stats[sm_shard_id() % SM_MAX_SHARDS];
}

void
sm_tls_stats_read(unsigned shard, struct sm_tls_stats *out)
{
	const struct sm_tls_stats *s = &tls_stats[shard % SM_MAX_SHARDS];

	out->handshakes = SM_READ_ONCE(s->handshakes);
	out->handshake_errors = SM_READ_ONCE(s->handshake_errors);
	out->ktls_tx = SM_READ_ONCE(s->ktls_tx);
	out->userspace_tx = SM_READ_ONCE(s->userspace_tx);
	out->bytes_encrypted = SM_READ_ONCE(s->bytes_encrypted);
	out->bytes_decrypted = SM_READ_ONCE(s->bytes_decrypted);
	out->handshake_timeouts = SM_READ_ONCE(s->handshake_timeouts);
}

size_t
sm_tls_format_prometheus(char *buf, size_t len, unsigned nshards)
{
	static const struct {
		const char *name, *help;
		size_t off;
	} m[] = {
		{ "handshakes_total", "TLS handshakes completed.",
		  offsetof(struct sm_tls_stats, handshakes) },
		{ "handshake_errors_total",
		  "TLS handshakes that failed (bad records, no shared cipher, untrusted "
		  "certificates, plaintext on a TLS port).",
		  offsetof(struct sm_tls_stats, handshake_errors) },
		{ "ktls_tx_total", "TLS connections whose sending the kernel does (kTLS).",
		  offsetof(struct sm_tls_stats, ktls_tx) },
		{ "userspace_tx_total", "TLS connections whose records are made in user space.",
		  offsetof(struct sm_tls_stats, userspace_tx) },
		{ "bytes_encrypted_total", "Plaintext bytes encrypted in user space.",
		  offsetof(struct sm_tls_stats, bytes_encrypted) },
		{ "bytes_decrypted_total", "Plaintext bytes decrypted in user space.",
		  offsetof(struct sm_tls_stats, bytes_decrypted) },
		{ "handshake_timeouts_total",
		  "TLS connections closed because their handshake was not done in time.",
		  offsetof(struct sm_tls_stats, handshake_timeouts) },
	};
	size_t need = 0, k;
	unsigned i;
	int w;

	for (k = 0; k < SM_ARRAY_SIZE(m); k++) {
		w = snprintf(need < len ? buf + need : NULL, need < len ? len - need : 0,
			     "# HELP shardmark_tls_%s %s\n# TYPE shardmark_tls_%s counter\n", m[k].name,
			     m[k].help, m[k].name);
		need += w > 0 ? (size_t)w : 0;
		for (i = 0; i < nshards; i++) {
			struct sm_tls_stats st;
			unsigned long long v;

			sm_tls_stats_read(i, &st);
			memcpy(&v, (const char *)&st + m[k].off, sizeof(v));
			w = snprintf(need < len ? buf + need : NULL, need < len ? len - need : 0,
				     "shardmark_tls_%s{shard=\"%u\"} %llu\n", m[k].name, i, v);
			need += w > 0 ? (size_t)w : 0;
		}
	}
	return need;
}

const char *
sm_tls_last_error(void)
{
	return last_error;
}

const char *
sm_tls_ktls_unavailable_reason(void)
{
	return __atomic_load_n(&ktls_reason, __ATOMIC_ACQUIRE);
}

/* ---- the context ---- */

static int
gnutls_err(int rc, const char *what, const char *path, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s %s: %s; %s", what, path ? path : "", gnutls_strerror(rc),
		 "check that the file exists, is readable and holds PEM data");
	return rc == GNUTLS_E_FILE_ERROR ? -ENOENT : -EINVAL;
}

static bool
is_pkcs12(const char *path)
{
	size_t n = strlen(path);

	return (n > 4 && strcasecmp(path + n - 4, ".p12") == 0) ||
	       (n > 4 && strcasecmp(path + n - 4, ".pfx") == 0);
}

int
sm_tls_ctx_new(const struct sm_tls_opts *o, struct sm_tls_ctx **out, char *err, size_t errlen)
{
	struct sm_tls_ctx *t = calloc(1, sizeof(*t));
	const char *perr = NULL;
	int rc, ret;

	if (t == NULL)
		return -ENOMEM;
	t->o = *o;
	if (gnutls_certificate_allocate_credentials(&t->cred) < 0) {
		free(t);
		return -ENOMEM;
	}
	if (o->server && (o->certificate == NULL || o->keyfile == NULL)) {
		snprintf(err, errlen,
			 "TLS needs a certificate and its key: set certificate and keyfile (PEM "
			 "files)");
		ret = -EINVAL;
		goto fail;
	}
	if (o->certificate != NULL && is_pkcs12(o->certificate)) {
		rc = gnutls_certificate_set_x509_simple_pkcs12_file(
			t->cred, o->certificate, GNUTLS_X509_FMT_DER,
			o->pkcs12_password ? o->pkcs12_password : "");
		if (rc < 0) {
			ret = gnutls_err(rc, "cannot load the PKCS#12 keystore (wrong password?)",
					 o->certificate, err, errlen);
			goto fail;
		}
	} else if (o->certificate != NULL) {
		rc = gnutls_certificate_set_x509_key_file(t->cred, o->certificate,
							  o->keyfile ? o->keyfile : o->certificate,
							  GNUTLS_X509_FMT_PEM);
		if (rc < 0) {
			ret = gnutls_err(rc, "cannot load the certificate and key", o->certificate, err,
					 errlen);
			goto fail;
		}
	}
	if (o->truststore != NULL) {
		rc = gnutls_certificate_set_x509_trust_file(t->cred, o->truststore,
							    GNUTLS_X509_FMT_PEM);
		if (rc <= 0) {
			ret = gnutls_err(rc < 0 ? rc : GNUTLS_E_FILE_ERROR,
					 "cannot load CA certificates from the truststore",
					 o->truststore, err, errlen);
			goto fail;
		}
	} else if (!o->server && o->verify_peer) {
		if (gnutls_certificate_set_x509_system_trust(t->cred) < 0) {
			snprintf(err, errlen,
				 "no system CA certificates to verify the server with: give a "
				 "truststore (PEM)");
			ret = -ENOENT;
			goto fail;
		}
	}
	if (o->server && o->require_client_auth && o->truststore == NULL)
		gnutls_certificate_set_x509_system_trust(t->cred);
	rc = gnutls_priority_init(&t->prio, o->priority ? o->priority : DEFAULT_PRIORITY, &perr);
	if (rc < 0) {
		snprintf(err, errlen, "bad TLS priority string '%s' near '%s': %s (see GnuTLS's "
				      "priority strings, e.g. NORMAL or SECURE256)",
			 o->priority ? o->priority : DEFAULT_PRIORITY, perr ? perr : "",
			 gnutls_strerror(rc));
		ret = -EINVAL;
		goto fail;
	}
	if (o->server_name != NULL)
		t->server_name = strdup(o->server_name);
	t->o.certificate = t->o.keyfile = t->o.truststore = t->o.priority = NULL;
	t->o.pkcs12_password = NULL;
	t->o.server_name = t->server_name;
	*out = t;
	return 0;
fail:
	gnutls_certificate_free_credentials(t->cred);
	free(t);
	return ret;
}

void
sm_tls_ctx_free(struct sm_tls_ctx *t)
{
	struct tls_wrap *w, *next;

	if (t == NULL)
		return;
	for (w = t->wraps; w != NULL; w = next) {
		next = w->next;
		free(w);
	}
	gnutls_priority_deinit(t->prio);
	gnutls_certificate_free_credentials(t->cred);
	free(t->server_name);
	free(t);
}

static struct tls_wrap *
wrap_new(struct sm_tls_ctx *t, const struct sm_proto_ops *inner, void *inner_ctx)
{
	struct tls_wrap *w = calloc(1, sizeof(*w));

	if (w == NULL)
		return NULL;
	w->tls = t;
	w->inner = inner;
	w->inner_ctx = inner_ctx;
	/* Listeners are set up on the control shard before any connection. */
	w->next = t->wraps;
	t->wraps = w;
	return w;
}

/* ---- GnuTLS's transport: memory on both sides ---- */

/* GnuTLS wants ciphertext: from what received() buffered. */
static ssize_t
tls_pull(gnutls_transport_ptr_t p, void *data, size_t len)
{
	struct tls_conn *tc = p;
	size_t have = tc->rx_len - tc->rx_off;

	if (have == 0) {
		gnutls_transport_set_errno(tc->s, EAGAIN);
		return -1;
	}
	if (len > have)
		len = have;
	memcpy(data, tc->rx + tc->rx_off, len);
	tc->rx_off += len;
	return (ssize_t)len;
}

/* GnuTLS has ciphertext to send: onto the connection below (never blocks). */
static ssize_t
tls_push(gnutls_transport_ptr_t p, const void *data, size_t len)
{
	struct tls_conn *tc = p;

	if (tc->outer_gone || sm_conn_send_copy(tc->outer, data, len) < 0) {
		gnutls_transport_set_errno(tc->s, EPIPE);
		return -1;
	}
	return (ssize_t)len;
}

static int
session_new(struct tls_conn *tc, struct sm_tls_ctx *t)
{
	unsigned flags = (t->o.server ? GNUTLS_SERVER : GNUTLS_CLIENT) | GNUTLS_NONBLOCK;

	if (gnutls_init(&tc->s, flags) < 0)
		return -ENOMEM;
	if (gnutls_priority_set(tc->s, t->prio) < 0 ||
	    gnutls_credentials_set(tc->s, GNUTLS_CRD_CERTIFICATE, t->cred) < 0)
		goto fail;
	if (t->o.server && t->o.require_client_auth) {
		gnutls_certificate_server_set_request(tc->s, GNUTLS_CERT_REQUIRE);
		/* verified against the truststore during the handshake, not after */
		gnutls_session_set_verify_cert(tc->s, NULL, 0);
	}
	if (!t->o.server && t->server_name != NULL)
		gnutls_server_name_set(tc->s, GNUTLS_NAME_DNS, t->server_name,
				       strlen(t->server_name));
	if (!t->o.server && t->o.verify_peer)
		gnutls_session_set_verify_cert(tc->s, t->server_name, 0);
	gnutls_transport_set_ptr(tc->s, tc);
	gnutls_transport_set_pull_function(tc->s, tls_pull);
	gnutls_transport_set_push_function(tc->s, tls_push);
	return 0;
fail:
	gnutls_deinit(tc->s);
	tc->s = NULL;
	return -EINVAL;
}

/* ---- the connection's life ---- */

static void
tls_free(struct tls_conn *tc)
{
	sm_timer_cancel(&tc->handshake_timer);
	if (tc->s != NULL)
		gnutls_deinit(tc->s);
	if (tc->plain != NULL)
		sm_bufseg_put(&tc->plain->seg);
	sm_conn_net_fini(&tc->inner);
	sm_free(tc->rx);
	sm_free(tc);
}

static void tls_pump_task(void *arg);
static void tls_abort(struct tls_conn *tc);

static void
handshake_timeout(void *arg)
{
	struct tls_conn *tc = arg;

	if (tc->handshaken || tc->outer_gone)
		return;
	my_stats()->handshake_timeouts++;
	tls_abort(tc);
}

static struct tls_conn *
tls_conn_new(struct sm_tls_ctx *t, const struct sm_proto_ops *up, unsigned shard)
{
	struct tls_conn *tc = sm_calloc(1, sizeof(*tc));

	if (tc == NULL)
		return NULL;
	tc->tls = t;
	tc->up = up;
	tc->client = !t->o.server;
	tc->inner.drv = &tls_driver;
	tc->inner.proto = up;
	tc->inner.shard = shard;
	sm_task_init(&tc->pump, tls_pump_task, tc);
	sm_timer_init(&tc->handshake_timer, handshake_timeout, tc);
	if (session_new(tc, t) < 0) {
		sm_free(tc);
		return NULL;
	}
	sm_timer_arm(&tc->handshake_timer,
		     t->o.handshake_timeout_ms ? t->o.handshake_timeout_ms : 10000);
	return tc;
}

/* Keep the not yet consumed ciphertext at the front of the buffer. */
static void
rx_compact(struct tls_conn *tc)
{
	if (tc->rx_off == 0)
		return;
	memmove(tc->rx, tc->rx + tc->rx_off, tc->rx_len - tc->rx_off);
	tc->rx_len -= tc->rx_off;
	tc->rx_off = 0;
}

static int
rx_append(struct tls_conn *tc, const struct sm_iov *iov, unsigned n)
{
	size_t add = 0, cap;
	unsigned i;

	for (i = 0; i < n; i++)
		add += iov[i].len;
	rx_compact(tc);
	if (tc->rx_len + add > RX_MAX)
		return -ENOBUFS;
	if (tc->rx_len + add > tc->rx_cap) {
		uint8_t *p;

		cap = tc->rx_cap ? tc->rx_cap : 4096;
		while (cap < tc->rx_len + add)
			cap *= 2;
		p = sm_realloc(tc->rx, cap);
		if (p == NULL)
			return -ENOMEM;
		tc->rx = p;
		tc->rx_cap = cap;
	}
	for (i = 0; i < n; i++) {
		memcpy(tc->rx + tc->rx_len, iov[i].base, iov[i].len);
		tc->rx_len += iov[i].len;
	}
	return 0;
}

/* Close from this layer (a failed handshake, a bad record, the peer's close_notify). */
static void
tls_abort(struct tls_conn *tc)
{
	tc->inner.closing = true;
	if (!tc->outer_gone)
		sm_conn_close(tc->outer);
}

/*
 * The session's write state in the kernel's form, then the driver's
 * setsockopt. Only AES-GCM and ChaCha20-Poly1305 on TLS 1.2 and 1.3, the
 * ciphers Linux's TLS has.
 */
static int
ktls_start_tx(struct tls_conn *tc)
{
	struct sm_ktls_info info;
	gnutls_datum_t iv, key;
	unsigned char seq[8];
	int rc;

	if (tc->outer->drv->ktls_tx == NULL)
		return -EOPNOTSUPP;
	rc = gnutls_record_get_state(tc->s, 0, NULL, &iv, &key, seq);
	if (rc < 0)
		return -EINVAL;
	rc = sm_ktls_info_make(&info, gnutls_protocol_get_version(tc->s) == GNUTLS_TLS1_3,
			       gnutls_cipher_get(tc->s) == GNUTLS_CIPHER_AES_128_GCM   ? 128
			       : gnutls_cipher_get(tc->s) == GNUTLS_CIPHER_AES_256_GCM ? 256
			       : gnutls_cipher_get(tc->s) == GNUTLS_CIPHER_CHACHA20_POLY1305
				       ? 20
				       : 0,
			       key.data, key.size, iv.data, iv.size, seq);
	if (rc < 0)
		return rc;
	return tc->outer->drv->ktls_tx(tc->outer, info.bytes, info.len);
}

/* Once the handshake's bytes have left: the kernel sends from now on, when it can. */
static void
ktls_try(struct tls_conn *tc)
{
	int rc;

	tc->ktls_tried = true;
	rc = ktls_start_tx(tc);
	if (rc == -EBUSY) {
		tc->ktls_tried = false; /* bytes still queued: at the next drained() */
		return;
	}
	if (rc == 0) {
		tc->ktls_tx = true;
		my_stats()->ktls_tx++;
		return;
	}
	my_stats()->userspace_tx++;
	if (sm_tls_ktls_unavailable_reason() == NULL) {
		const char *why = rc == -ENOENT || rc == -ENOPROTOOPT
					  ? "the kernel has no TLS module (CONFIG_TLS, modprobe tls)"
				  : rc == -EOPNOTSUPP ? "the network driver cannot hand sockets to "
							"the kernel's TLS (DPDK)"
				  : rc == -ENOTSUP    ? "the negotiated cipher is not one the kernel's "
							"TLS has (AES-GCM, ChaCha20-Poly1305)"
						      : "the kernel refused the session's keys";

		__atomic_store_n(&ktls_reason, why, __ATOMIC_RELEASE);
		SM_INFO("kernel TLS unavailable: %s; TLS records are encrypted in user space "
			"(counted in shardmark_tls_userspace_tx_total)",
			why);
	}
}

static void
handshake_done(struct tls_conn *tc)
{
	tc->handshaken = true;
	sm_timer_cancel(&tc->handshake_timer);
	my_stats()->handshakes++;
	if (!tc->tls->o.ktls) {
		tc->ktls_tried = true;
		my_stats()->userspace_tx++;
	} else if (tc->outer->send_queued == 0) {
		ktls_try(tc);
	}
	tc->attached = true;
	if (tc->client) {
		if (tc->up->connected != NULL)
			tc->up->connected(&tc->inner, 0);
		return;
	}
	if (tc->up->accepted(&tc->inner, tc->up_listen_ctx) < 0) {
		tc->attached = false;
		tls_abort(tc);
	}
}

/* The plaintext buffer the next record goes into; reused unless the protocol kept it. */
static struct sm_sendbuf *
plain_buf(struct tls_conn *tc)
{
	if (tc->plain != NULL && tc->plain->seg.refcnt == 1)
		return tc->plain;
	if (tc->plain != NULL)
		sm_bufseg_put(&tc->plain->seg);
	tc->plain = sm_sendbuf_new(PLAIN_BUF);
	return tc->plain;
}

/* Drive the handshake, then decrypt and deliver what has arrived. */
static void
tls_pump(struct tls_conn *tc)
{
	struct sm_sendbuf *b;
	struct sm_iov v;
	ssize_t r;
	int rc;

	if (!tc->handshaken) {
		rc = gnutls_handshake(tc->s);
		if (rc == GNUTLS_E_AGAIN || rc == GNUTLS_E_INTERRUPTED)
			goto out;
		if (rc < 0) {
			my_stats()->handshake_errors++;
			SM_DEBUG("TLS handshake with %s failed: %s",
				 tc->client ? "a server" : "a client", gnutls_strerror(rc));
			snprintf(last_error, sizeof(last_error), "%s", gnutls_strerror(rc));
			if (rc == GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR) {
				gnutls_datum_t why = { NULL, 0 };
				unsigned status = gnutls_session_get_verify_cert_status(tc->s);

				if (gnutls_certificate_verification_status_print(
					    status, GNUTLS_CRT_X509, &why, 0) == 0) {
					snprintf(last_error, sizeof(last_error), "%s", why.data);
					gnutls_free(why.data);
				}
			}
			/* The peer learns why (bad certificate, no shared cipher...). */
			gnutls_alert_send_appropriate(tc->s, rc);
			if (tc->client && tc->up->connected != NULL) {
				/* connected(err) is the protocol's last callback */
				tc->up->connected(&tc->inner, -ECONNABORTED);
				tc->client = false; /* owed nothing more */
			}
			tls_abort(tc);
			goto out;
		}
		handshake_done(tc);
	}
	while (tc->attached && !tc->inner.closing && tc->inner.rx_paused == 0) {
		b = plain_buf(tc);
		if (b == NULL) {
			tls_abort(tc);
			break;
		}
		r = gnutls_record_recv(tc->s, b->data, b->cap);
		if (r > 0) {
			my_stats()->bytes_decrypted += (unsigned long long)r;
			v = (struct sm_iov){ &b->seg, b->data, (size_t)r };
			tc->inner.proto->received(&tc->inner, &v, 1);
			continue;
		}
		if (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED)
			break;
		/* 0: the peer's close_notify; otherwise a bad record or an alert */
		if (r < 0)
			SM_DEBUG("TLS record error: %s", gnutls_strerror((int)r));
		tls_abort(tc);
		break;
	}
out:
	rx_compact(tc);
}

static void
tls_pump_task(void *arg)
{
	struct tls_conn *tc = arg;

	tc->pump_queued = false;
	if (tc->outer_gone) {
		tls_free(tc);
		return;
	}
	tls_pump(tc);
}

/* ---- below: the driver's connection, this layer as its protocol ---- */

static int
tls_accepted(struct sm_conn *c, void *listen_ctx)
{
	struct tls_wrap *w = listen_ctx;
	struct tls_conn *tc = tls_conn_new(w->tls, w->inner, c->shard);

	if (tc == NULL)
		return -ENOMEM;
	tc->up_listen_ctx = w->inner_ctx;
	tc->outer = c;
	tc->inner.peer = c->peer;
	tc->inner.local = c->local;
	c->ctx = tc;
	return 0;
}

static void
tls_connected(struct sm_conn *c, int err)
{
	struct tls_conn *tc = c->ctx;

	tc->outer = c;
	if (err < 0) {
		tc->outer_gone = true;
		if (tc->up->connected != NULL)
			tc->up->connected(&tc->inner, err);
		tls_free(tc);
		return;
	}
	tc->inner.local = c->local;
	tc->inner.peer = c->peer;
	tls_pump(tc); /* the ClientHello */
}

static void
tls_received(struct sm_conn *c, const struct sm_iov *iov, unsigned n)
{
	struct tls_conn *tc = c->ctx;

	if (tc->inner.closing)
		return;
	if (rx_append(tc, iov, n) < 0) {
		tls_abort(tc);
		return;
	}
	tls_pump(tc);
}

static void
tls_drained(struct sm_conn *c)
{
	struct tls_conn *tc = c->ctx;

	if (tc->handshaken && !tc->ktls_tried)
		ktls_try(tc);
	if (tc->attached && tc->inner.proto->drained != NULL)
		tc->inner.proto->drained(&tc->inner);
}

static void
tls_drain(struct sm_conn *c)
{
	struct tls_conn *tc = c->ctx;

	if (tc->attached && tc->inner.proto->drain != NULL)
		tc->inner.proto->drain(&tc->inner);
	else
		sm_conn_close(c);
}

static void
tls_closed(struct sm_conn *c, int err)
{
	struct tls_conn *tc = c->ctx;

	tc->outer_gone = true;
	tc->inner.closing = true;
	if (tc->attached) {
		tc->attached = false;
		tc->inner.proto->closed(&tc->inner, err);
	} else if (tc->client && !tc->handshaken && tc->up->connected != NULL) {
		tc->up->connected(&tc->inner, err < 0 ? err : -ECONNRESET);
	}
	if (!tc->pump_queued)
		tls_free(tc);
}

const struct sm_proto_ops sm_tls_proto = {
	.name = "tls",
	.accepted = tls_accepted,
	.connected = tls_connected,
	.received = tls_received,
	.drained = tls_drained,
	.drain = tls_drain,
	.closed = tls_closed,
};

/* ---- above: the protocol's connection, this layer as its driver ---- */

static int
tlsd_send(struct sm_conn *c, const struct sm_iov *iov, unsigned n)
{
	struct tls_conn *tc = (struct tls_conn *)c;
	ssize_t r = 0;
	unsigned i;

	if (c->closing || tc->outer_gone)
		return -EPIPE;
	if (tc->ktls_tx)
		return sm_conn_send(tc->outer, iov, n);
	gnutls_record_cork(tc->s);
	for (i = 0; i < n && r >= 0; i++) {
		if (iov[i].len > 0)
			r = gnutls_record_send(tc->s, iov[i].base, iov[i].len);
		if (r > 0)
			my_stats()->bytes_encrypted += (unsigned long long)r;
	}
	if (gnutls_record_uncork(tc->s, 0) < 0 || r < 0) {
		tls_abort(tc);
		return -EPIPE;
	}
	return 0;
}

static void
tlsd_close(struct sm_conn *c)
{
	struct tls_conn *tc = (struct tls_conn *)c;

	if (tc->outer_gone)
		return;
	if (!c->closing && tc->handshaken && !tc->ktls_tx)
		gnutls_bye(tc->s, GNUTLS_SHUT_WR); /* close_notify; our push never blocks */
	c->closing = true;
	sm_conn_close(tc->outer);
}

static long
tlsd_rx_pending(struct sm_conn *c)
{
	struct tls_conn *tc = (struct tls_conn *)c;

	if (tc->outer_gone)
		return 0;
	return sm_conn_rx_pending(tc->outer) + (long)(tc->rx_len - tc->rx_off) +
	       (long)gnutls_record_check_pending(tc->s);
}

static void
tlsd_set_rx_paused(struct sm_conn *c, bool paused)
{
	struct tls_conn *tc = (struct tls_conn *)c;

	if (tc->outer_gone)
		return;
	if (paused) {
		sm_conn_pause_rx(tc->outer, SM_RX_PAUSE_PROTO);
		return;
	}
	sm_conn_resume_rx(tc->outer, SM_RX_PAUSE_PROTO);
	/* Records already here wait for the next round, never this call. */
	if (!tc->pump_queued) {
		tc->pump_queued = true;
		sm_task_schedule(&tc->pump);
	}
}

static const struct sm_net_driver tls_driver = {
	.name = "tls",
	.send = tlsd_send,
	.close = tlsd_close,
	.rx_pending = tlsd_rx_pending,
	.set_rx_paused = tlsd_set_rx_paused,
};

/* ---- entry points ---- */

int
sm_tls_wrap_listen(struct sm_tls_ctx *t, struct sm_listen_opts *o)
{
	struct tls_wrap *w = wrap_new(t, o->proto, o->ctx);

	if (w == NULL)
		return -ENOMEM;
	o->proto = &sm_tls_proto;
	o->ctx = w;
	return 0;
}

int
sm_tls_connect(struct sm_tls_ctx *t, const struct sm_connect_opts *o, struct sm_conn **c)
{
	struct sm_connect_opts co = *o;
	struct tls_conn *tc = tls_conn_new(t, o->proto, sm_shard_id());
	struct sm_conn *outer;
	int ret;

	if (tc == NULL)
		return -ENOMEM;
	tc->inner.ctx = o->ctx;
	co.proto = &sm_tls_proto;
	co.ctx = tc;
	ret = sm_net_connect(&co, &outer);
	if (ret < 0) {
		sm_timer_cancel(&tc->handshake_timer);
		gnutls_deinit(tc->s);
		sm_free(tc);
		return ret;
	}
	tc->outer = outer;
	*c = &tc->inner;
	return 0;
}
