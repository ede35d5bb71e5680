/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/tls over the real io_uring driver on loopback: an echo protocol behind
 * a TLS listener and TLS clients from the same runtime. A self-signed
 * certificate is made for each run with GnuTLS itself.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include "sm_core.h"
#include "sm_net.h"
#include "sm_net_uring.h"
#include "sm_tls.h"

#define CLIENTS 4
#define PAYLOAD (100u * 1024) /* several records each way */

static char cert_path[64], key_path[64], other_cert_path[64], other_key_path[64];

/* A self-signed certificate for 127.0.0.1 / localhost into @cert and @key. */
static void
make_cert(const char *cert, const char *key, const char *cn)
{
	gnutls_x509_privkey_t k;
	gnutls_x509_crt_t c;
	unsigned char serial = 1, buf[8192];
	size_t len;
	FILE *f;
	time_t now = time(NULL);

	assert_int_equal(gnutls_x509_privkey_init(&k), 0);
	assert_int_equal(gnutls_x509_privkey_generate(k, GNUTLS_PK_ECDSA,
						      GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0),
			 0);
	assert_int_equal(gnutls_x509_crt_init(&c), 0);
	gnutls_x509_crt_set_version(c, 3);
	gnutls_x509_crt_set_serial(c, &serial, 1);
	gnutls_x509_crt_set_activation_time(c, now - 3600);
	gnutls_x509_crt_set_expiration_time(c, now + 86400);
	gnutls_x509_crt_set_dn_by_oid(c, GNUTLS_OID_X520_COMMON_NAME, 0, cn, strlen(cn));
	gnutls_x509_crt_set_subject_alt_name(c, GNUTLS_SAN_DNSNAME, "localhost", 9,
					     GNUTLS_FSAN_APPEND);
	gnutls_x509_crt_set_basic_constraints(c, 1, -1);
	gnutls_x509_crt_set_key(c, k);
	assert_int_equal(gnutls_x509_crt_sign2(c, c, k, GNUTLS_DIG_SHA256, 0), 0);
	len = sizeof(buf);
	assert_int_equal(gnutls_x509_crt_export(c, GNUTLS_X509_FMT_PEM, buf, &len), 0);
	f = fopen(cert, "w");
	assert_non_null(f);
	fwrite(buf, 1, len, f);
	fclose(f);
	len = sizeof(buf);
	assert_int_equal(gnutls_x509_privkey_export(k, GNUTLS_X509_FMT_PEM, buf, &len), 0);
	f = fopen(key, "w");
	assert_non_null(f);
	fwrite(buf, 1, len, f);
	fclose(f);
	gnutls_x509_crt_deinit(c);
	gnutls_x509_privkey_deinit(k);
}

static uint16_t
free_port(void)
{
	struct sockaddr_in in = { .sin_family = AF_INET };
	socklen_t len = sizeof(in);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&in, sizeof(in)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&in, &len), 0);
	close(fd);
	return ntohs(in.sin_port);
}

/* ---- server: echo ---- */

static int srv_accepted_n;

static int
srv_accepted(struct sm_conn *c, void *ctx)
{
	(void)c;
	(void)ctx;
	__atomic_add_fetch(&srv_accepted_n, 1, __ATOMIC_RELAXED);
	return 0;
}

static void
srv_received(struct sm_conn *c, const struct sm_iov *iov, unsigned n)
{
	/* The views themselves go back: lib/tls encrypts them (or the kernel does). */
	sm_conn_send(c, iov, n);
}

static void
srv_closed(struct sm_conn *c, int err)
{
	(void)c;
	(void)err;
}

static const struct sm_proto_ops srv_proto = {
	.name = "echo",
	.accepted = srv_accepted,
	.received = srv_received,
	.closed = srv_closed,
};

/* ---- clients ---- */

struct client {
	struct sm_conn *c;
	size_t got;
	bool connected, failed, closed, mismatch;
};

/* A plain TCP client that connects to the TLS port and says nothing. */
static struct {
	bool on;
	bool connected, closed;
	struct sm_conn *c;
} silent;

static void
silent_connected(struct sm_conn *c, int err)
{
	(void)c;
	silent.connected = err == 0;
}

static void
silent_received(struct sm_conn *c, const struct sm_iov *iov, unsigned n)
{
	(void)c;
	(void)iov;
	(void)n;
}

static void silent_done(void);

static void
silent_closed(struct sm_conn *c, int err)
{
	(void)c;
	(void)err;
	silent.closed = true;
	silent_done();
}

static const struct sm_proto_ops silent_proto = {
	.name = "silent",
	.connected = silent_connected,
	.received = silent_received,
	.closed = silent_closed,
};

static struct {
	struct sm_tls_ctx *srv, *cli;
	uint16_t port;
	struct client cl[CLIENTS];
	unsigned left;
	uint8_t payload[PAYLOAD];
	int expect_fail;
} T;

static void
client_done(struct client *k)
{
	(void)k;
	if (--T.left == 0)
		sm_runtime_stop();
}

static void
silent_done(void)
{
	if (--T.left == 0)
		sm_runtime_stop();
}

static void
cli_connected(struct sm_conn *c, int err)
{
	struct client *k = c->ctx;
	size_t off;

	if (err < 0) {
		k->failed = true;
		client_done(k);
		return;
	}
	k->connected = true;
	/* In pieces of odd sizes, so records and views do not line up. */
	for (off = 0; off < PAYLOAD; off += 7001)
		sm_conn_send_copy(c, T.payload + off, SM_MIN((size_t)7001, PAYLOAD - off));
}

static void
cli_received(struct sm_conn *c, const struct sm_iov *iov, unsigned n)
{
	struct client *k = c->ctx;
	unsigned i;

	for (i = 0; i < n; i++) {
		if (k->got + iov[i].len > PAYLOAD ||
		    memcmp(T.payload + k->got, iov[i].base, iov[i].len) != 0)
			k->mismatch = true;
		k->got += iov[i].len;
	}
	if (k->got >= PAYLOAD)
		sm_conn_close(c);
}

static void
cli_closed(struct sm_conn *c, int err)
{
	struct client *k = c->ctx;

	(void)err;
	k->closed = true;
	client_done(k);
}

static const struct sm_proto_ops cli_proto = {
	.name = "echo-client",
	.connected = cli_connected,
	.received = cli_received,
	.closed = cli_closed,
};

static int
shard_init(unsigned shard, void *arg)
{
	struct sm_listen_opts lo = {
		.addr = "127.0.0.1",
		.port = T.port,
		.placement = SM_PLACE_BALANCED,
		.proto = &srv_proto,
	};
	struct sm_listener *l;
	unsigned i;
	int ret;

	(void)arg;
	ret = sm_net_shard_init(NULL);
	if (ret < 0 || shard != 0)
		return ret;
	if (sm_tls_wrap_listen(T.srv, &lo) < 0 || sm_net_listen(&lo, &l) < 0)
		return -EINVAL;
	if (silent.on) {
		struct sm_connect_opts so = {
			.addr = "127.0.0.1",
			.port = T.port,
			.proto = &silent_proto,
		};

		return sm_net_connect(&so, &silent.c);
	}
	for (i = 0; i < CLIENTS; i++) {
		struct sm_connect_opts co = {
			.addr = "127.0.0.1",
			.port = T.port,
			.proto = &cli_proto,
			.ctx = &T.cl[i],
		};

		if (sm_tls_connect(T.cli, &co, &T.cl[i].c) < 0)
			return -EINVAL;
	}
	return 0;
}

static void
shard_fini(unsigned shard, void *arg)
{
	(void)shard;
	(void)arg;
	sm_net_shard_fini();
}

static void
run_clients(const char *trust)
{
	struct sm_tls_opts so = {
		.server = true,
		.certificate = cert_path,
		.keyfile = key_path,
		.ktls = true,
		.handshake_timeout_ms = 300,
	};
	struct sm_tls_opts co = {
		.server = false,
		.truststore = trust,
		.verify_peer = true,
		.server_name = "localhost",
		.ktls = true,
	};
	struct sm_runtime_opts o = {
		.smp = 1,
		.overprovisioned = true,
		.drain_timeout_ms = 5000,
		.shard_init = shard_init,
		.shard_fini = shard_fini,
	};
	char err[256];
	unsigned i;

	memset(T.cl, 0, sizeof(T.cl));
	for (i = 0; i < PAYLOAD; i++)
		T.payload[i] = (uint8_t)(i * 131 + (i >> 9));
	T.left = silent.on ? 1 : CLIENTS;
	T.port = free_port();
	srv_accepted_n = 0;
	assert_int_equal(sm_tls_ctx_new(&so, &T.srv, err, sizeof(err)), 0);
	assert_int_equal(sm_tls_ctx_new(&co, &T.cli, err, sizeof(err)), 0);
	if (sm_net_find("uring") == NULL)
		assert_int_equal(sm_net_uring_register(), 0);
	assert_int_equal(sm_net_use("uring"), 0);
	if (sm_net_driver()->probe(err, sizeof(err)) < 0) {
		print_message("io_uring unavailable: %s\n", err);
		skip();
	}
	if (sm_runtime_run(&o, err, sizeof(err)) < 0)
		fail_msg("runtime: %s", err);
	sm_tls_ctx_free(T.srv);
	sm_tls_ctx_free(T.cli);
}

static void
test_echo_over_tls(void **state)
{
	struct sm_tls_stats st;
	unsigned i;

	(void)state;
	run_clients(cert_path);
	for (i = 0; i < CLIENTS; i++) {
		assert_true(T.cl[i].connected);
		assert_false(T.cl[i].mismatch);
		assert_int_equal(T.cl[i].got, PAYLOAD);
		assert_true(T.cl[i].closed);
	}
	assert_int_equal(srv_accepted_n, CLIENTS);
	sm_tls_stats_read(0, &st);
	/* Both ends of each connection are on shard 0. */
	assert_true(st.handshakes >= 2 * CLIENTS);
	assert_int_equal(st.handshake_errors, 0);
	/* Every connection took one of the two paths, and said which. */
	assert_int_equal(st.ktls_tx + st.userspace_tx, 2 * CLIENTS);
	if (st.userspace_tx > 0)
		assert_non_null(sm_tls_ktls_unavailable_reason());
	assert_true(st.bytes_decrypted >= 2 * (unsigned long long)PAYLOAD * CLIENTS ||
		    st.ktls_tx > 0);
}

static void
test_untrusted_server_refused(void **state)
{
	struct sm_tls_stats before, after;
	unsigned i;

	(void)state;
	sm_tls_stats_read(0, &before);
	/* The clients trust another certificate: every handshake must fail. */
	run_clients(other_cert_path);
	for (i = 0; i < CLIENTS; i++) {
		assert_false(T.cl[i].connected);
		assert_true(T.cl[i].failed);
		assert_int_equal(T.cl[i].got, 0);
	}
	assert_int_equal(srv_accepted_n, 0); /* the protocol never saw them */
	sm_tls_stats_read(0, &after);
	assert_true(after.handshake_errors > before.handshake_errors);
}

static void
test_silent_client_timed_out(void **state)
{
	struct sm_tls_stats before, after;

	(void)state;
	sm_tls_stats_read(0, &before);
	memset(&silent, 0, sizeof(silent));
	silent.on = true;
	/* It connects and sends nothing: the handshake timeout closes it. */
	run_clients(cert_path);
	silent.on = false;
	assert_true(silent.connected);
	assert_true(silent.closed);
	assert_int_equal(srv_accepted_n, 0);
	sm_tls_stats_read(0, &after);
	assert_int_equal(after.handshake_timeouts, before.handshake_timeouts + 1);
}

static void
test_bad_files(void **state)
{
	struct sm_tls_opts so = {
		.server = true,
		.certificate = "/nonexistent/cert.pem",
		.keyfile = key_path,
	};
	struct sm_tls_ctx *t = NULL;
	char err[256];

	(void)state;
	assert_true(sm_tls_ctx_new(&so, &t, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "/nonexistent/cert.pem"));
	so.certificate = NULL;
	assert_true(sm_tls_ctx_new(&so, &t, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "certificate"));
	so.certificate = cert_path;
	so.priority = "NOT-A-PRIORITY";
	assert_true(sm_tls_ctx_new(&so, &t, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "NOT-A-PRIORITY"));
}

static int
setup(void **state)
{
	(void)state;
	snprintf(cert_path, sizeof(cert_path), "/tmp/sm_tls_%d.crt", getpid());
	snprintf(key_path, sizeof(key_path), "/tmp/sm_tls_%d.key", getpid());
	snprintf(other_cert_path, sizeof(other_cert_path), "/tmp/sm_tls_%d_o.crt", getpid());
	snprintf(other_key_path, sizeof(other_key_path), "/tmp/sm_tls_%d_o.key", getpid());
	make_cert(cert_path, key_path, "localhost");
	make_cert(other_cert_path, other_key_path, "someone else");
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	unlink(cert_path);
	unlink(key_path);
	unlink(other_cert_path);
	unlink(other_key_path);
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_echo_over_tls),
		cmocka_unit_test(test_untrusted_server_refused),
		cmocka_unit_test(test_silent_client_timed_out),
		cmocka_unit_test(test_bad_files),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
