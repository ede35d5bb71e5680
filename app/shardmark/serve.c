/* SPDX-License-Identifier: BSD-3-Clause */
/* shardmark serve: run the services on every shard until SIGINT/SIGTERM. */

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app.h"
#include "echo.h"
#include "sm_alternator.h"
#include "sm_cql.h"
#include "sm_store.h"
#include "sm_api.h"
#include "sm_tls.h"
#include "stats_http.h"

struct serve_ctx {
	struct sm_config cfg;
	struct sm_echo_service echo;
	bool print_config;
	/* CQL: one cluster view per node this process presents */
	struct sm_cql_cluster *views;
	unsigned nviews;
	struct sm_cql_exec_config exec_cfg;
	struct sm_cql_service *cql; /* per view; [nviews] is the shard-aware port's */
	char (*node_addr)[64];
	struct sm_alternator_config alt_cfg;
	struct sm_http_service alt_svc;
	uint64_t mem_per_shard; /* each shard's heap budget */
	struct sm_stats_http_service stats_svc;
	struct sm_tls_ctx *cql_tls; /* client_encryption_options; NULL: off */
	struct sm_tls_ctx *alt_tls; /* alternator_https_port's */
	/* the CQL listeners, for the REST API's native transport switch (shard 0) */
	struct sm_listener *cql_listeners[SM_MAX_SHARDS + 4];
	unsigned ncql_listeners;
	bool cql_running;
	/* ScyllaDB's REST API */
	struct sm_api_config api_cfg;
	struct sm_http_handler api_handler;
	struct sm_http_service api_svc;
};

static int
opt_print_config(void *ctx, const char *value, char *err, size_t errlen)
{
	(void)value;
	(void)err;
	(void)errlen;
	((struct serve_ctx *)ctx)->print_config = true;
	return 0;
}

static const struct sm_cli_opt serve_opts[] = {
	{ "--print-config", NULL, "print the effective configuration as YAML and exit",
	  opt_print_config },
};

/* Listen on @addr:@port for @proto, through TLS when @tls is set. */
static int
open_listener_tls(const struct sm_config *cfg, const char *what, const char *key,
		  const char *addr, unsigned port, enum sm_placement placement,
		  const struct sm_proto_ops *proto, void *ctx, struct sm_tls_ctx *tls,
		  struct sm_listener **out)
{
	struct sm_listen_opts lo = {
		.addr = addr,
		.port = (uint16_t)port,
		.placement = placement,
		.proto = proto,
		.ctx = ctx,
	};
	struct sm_listener *l;
	int ret;

	if (tls != NULL && sm_tls_wrap_listen(tls, &lo) < 0)
		return -ENOMEM;
	ret = sm_net_listen(&lo, &l);
	if (ret < 0)
		sm_app_listen_error(cfg, what, key, addr, port, ret);
	else if (out != NULL)
		*out = l;
	return ret;
}

static int
open_listener(const struct sm_config *cfg, const char *what, const char *key, const char *addr,
	      unsigned port, enum sm_placement placement, const struct sm_proto_ops *proto,
	      void *ctx)
{
	return open_listener_tls(cfg, what, key, addr, port, placement, proto, ctx, NULL, NULL);
}

/*
 * A CQL port and its TLS twin, as ScyllaDB's transport controller pairs
 * them: with client encryption on and no separate TLS port (0, or the same
 * number), the port itself speaks TLS; with another number, the port stays
 * plain and the other one is TLS.
 */
static bool
cql_port_is_tls(const struct sm_config *c, unsigned port, unsigned ssl_port)
{
	return c->client_encryption_options_enabled && (ssl_port == 0 || ssl_port == port);
}

static bool
cql_ssl_port_extra(const struct sm_config *c, unsigned port, unsigned ssl_port)
{
	return c->client_encryption_options_enabled && ssl_port != 0 && ssl_port != port;
}

/* Remember a CQL listener, so the REST API can stop and start the native transport. */
static struct sm_listener **
cql_slot(struct serve_ctx *s)
{
	return s->ncql_listeners < SM_ARRAY_SIZE(s->cql_listeners)
		       ? &s->cql_listeners[s->ncql_listeners++]
		       : NULL;
}

static int
open_cql_pair(struct serve_ctx *s, const char *key, const char *ssl_key, unsigned port,
	      unsigned ssl_port, enum sm_placement placement, struct sm_cql_service *svc)
{
	const struct sm_config *c = &s->cfg;
	int ret;

	ret = open_listener_tls(c, "cql", key, c->listen_address, port, placement,
				&sm_cql_proto_ops, svc,
				cql_port_is_tls(c, port, ssl_port) ? s->cql_tls : NULL, cql_slot(s));
	if (ret == 0 && cql_ssl_port_extra(c, port, ssl_port))
		ret = open_listener_tls(c, "cql", ssl_key, c->listen_address, ssl_port, placement,
					&sm_cql_proto_ops, svc, s->cql_tls, cql_slot(s));
	return ret;
}

/* Every CQL listener: one per shard node, or the two ports and their TLS twins. */
static int
cql_listen(struct serve_ctx *s)
{
	const struct sm_config *c = &s->cfg;
	unsigned i;
	int ret;

	s->ncql_listeners = 0;
	if (!c->shard_nodes) {
		ret = open_cql_pair(s, "native_transport_port", "native_transport_port_ssl",
				    c->native_transport_port, c->native_transport_port_ssl,
				    SM_PLACE_BALANCED, &s->cql[0]);
		if (ret == 0)
			ret = open_cql_pair(s, "native_shard_aware_transport_port",
					    "native_shard_aware_transport_port_ssl",
					    c->native_shard_aware_transport_port,
					    c->native_shard_aware_transport_port_ssl,
					    SM_PLACE_SRC_PORT, &s->cql[1]);
		return ret;
	}
	for (i = 0; i < s->nviews; i++) {
		struct sm_listen_opts lo = {
			.addr = s->node_addr[i],
			.port = (uint16_t)c->native_transport_port,
			.placement = SM_PLACE_SHARD,
			.shard = i,
			.proto = &sm_cql_proto_ops,
			.ctx = &s->cql[i],
		};
		struct sm_listener *l, **slot = cql_slot(s);

		if (c->client_encryption_options_enabled &&
		    sm_tls_wrap_listen(s->cql_tls, &lo) < 0)
			return -ENOMEM;
		ret = sm_net_listen(&lo, &l);
		if (ret < 0) {
			sm_app_listen_error(c, "cql", "native_transport_port", s->node_addr[i],
					    c->native_transport_port, ret);
			return ret;
		}
		if (slot != NULL)
			*slot = l;
	}
	return 0;
}

/* The banner's CQL part. */
static size_t
cql_describe(const struct serve_ctx *s, char *services, size_t off, size_t len)
{
	const struct sm_config *c = &s->cfg;
	char hp[80];

	if (c->shard_nodes)
		return off + (size_t)snprintf(services + off, len - off,
					      "cql on %s..%s:%u (one node per shard)",
					      s->node_addr[0], s->node_addr[s->nviews - 1],
					      c->native_transport_port);
	off += (size_t)snprintf(
		services + off, len - off, "cql on %s%s (shard-aware %u%s)",
		sm_net_hostport(c->listen_address, c->native_transport_port, hp, sizeof(hp)),
		cql_port_is_tls(c, c->native_transport_port, c->native_transport_port_ssl)
			? " over TLS"
			: "",
		c->native_shard_aware_transport_port,
		cql_port_is_tls(c, c->native_shard_aware_transport_port,
				c->native_shard_aware_transport_port_ssl)
			? " over TLS"
			: "");
	if (cql_ssl_port_extra(c, c->native_transport_port, c->native_transport_port_ssl))
		off += (size_t)snprintf(services + off, len - off, ", cql over TLS on port %u",
					c->native_transport_port_ssl);
	if (cql_ssl_port_extra(c, c->native_shard_aware_transport_port,
			       c->native_shard_aware_transport_port_ssl))
		off += (size_t)snprintf(services + off, len - off, " (shard-aware %u)",
					c->native_shard_aware_transport_port_ssl);
	return off;
}

/* ---- the REST API's native transport switch (nodetool disablebinary / enablebinary) ---- */

struct nt_req {
	struct serve_ctx *s;
	bool start;
	void (*done)(void *arg, int err);
	void *arg;
};

static void
nt_switch(void *p)
{
	struct nt_req *q = p;
	struct serve_ctx *s = q->s;
	unsigned i;
	int err = 0;

	if (q->start && !s->cql_running) {
		err = cql_listen(s);
		s->cql_running = err == 0;
		if (err == 0)
			SM_INFO("REST API: native transport started");
	} else if (!q->start && s->cql_running) {
		for (i = 0; i < s->ncql_listeners; i++)
			sm_net_listener_close(s->cql_listeners[i]);
		s->ncql_listeners = 0;
		s->cql_running = false;
		SM_INFO("REST API: native transport stopped (connections open stay)");
	}
	q->done(q->arg, err);
	sm_free(q);
}

static void
api_native_transport(void *ctx, bool start, void (*done)(void *arg, int err), void *arg)
{
	struct nt_req *q = sm_malloc(sizeof(*q));

	if (q == NULL) {
		done(arg, -ENOMEM);
		return;
	}
	*q = (struct nt_req){ .s = ctx, .start = start, .done = done, .arg = arg };
	if (sm_submit_to(0, nt_switch, q, NULL) < 0) {
		sm_free(q);
		done(arg, -ENOMEM);
	}
}

static bool
api_native_transport_running(void *ctx)
{
	return __atomic_load_n(&((struct serve_ctx *)ctx)->cql_running, __ATOMIC_RELAXED);
}
/* IPv4 @base + @i ("127.0.0.1" + 1 = "127.0.0.2"); false when not IPv4 or it overflows. */
static bool
addr_plus(const char *base, unsigned i, char *out, size_t len)
{
	struct in_addr a;
	uint32_t h;

	if (inet_pton(AF_INET, base, &a) != 1)
		return false;
	h = ntohl(a.s_addr);
	if (h + i < h)
		return false;
	a.s_addr = htonl(h + i);
	return inet_ntop(AF_INET, &a, out, (socklen_t)len) != NULL;
}

static void
cql_teardown(struct serve_ctx *s)
{
	if (s->views != NULL && s->cfg.shard_nodes)
		sm_cql_shard_nodes_free(s->views, s->nviews);
	else if (s->views != NULL)
		sm_cql_cluster_free(&s->views[0]);
	free(s->views);
	free(s->cql);
	free(s->node_addr);
	s->views = NULL;
	s->cql = NULL;
	s->node_addr = NULL;
}

/* The cluster views and the service contexts of the CQL ports. */
static int
cql_setup(struct serve_ctx *s, unsigned nshards)
{
	const struct sm_config *c = &s->cfg;
	char err[512];
	unsigned i;
	int ret;

	s->nviews = c->shard_nodes ? nshards : 1;
	s->views = calloc(s->nviews, sizeof(*s->views));
	s->cql = calloc(s->nviews + 1, sizeof(*s->cql));
	s->node_addr = calloc(s->nviews, sizeof(*s->node_addr));
	if (s->views == NULL || s->cql == NULL || s->node_addr == NULL) {
		fprintf(stderr, "shardmark serve: out of memory\n");
		return SM_EXIT_FAIL;
	}
	if (c->shard_nodes) {
		if (c->peers != NULL) {
			fprintf(stderr,
				"shardmark serve: shard_nodes and peers cannot be combined: "
				"with shard_nodes each shard is a node of its own; drop one "
				"of them\n");
			return SM_EXIT_USAGE;
		}
		for (i = 0; i < s->nviews; i++) {
			if (!addr_plus(c->listen_address, i, s->node_addr[i],
				       sizeof(s->node_addr[i]))) {
				char sn[64], la[64];

				fprintf(stderr,
					"shardmark serve: %s needs an IPv4 %s (got %s): shard i "
					"listens on %s + i\n",
					sm_config_spelling(c, "shard_nodes", sn, sizeof(sn)),
					sm_config_spelling(c, "listen_address", la, sizeof(la)),
					c->listen_address, la);
				return SM_EXIT_USAGE;
			}
		}
		ret = sm_cql_cluster_init_shard_nodes(
			s->views, s->nviews, c->cluster_name, (const char(*)[64])s->node_addr,
			(uint16_t)c->native_transport_port, err, sizeof(err));
	} else {
		ret = sm_cql_cluster_init(&s->views[0], c->cluster_name, c->listen_address,
					  (uint16_t)c->native_transport_port, c->peers, err,
					  sizeof(err));
	}
	if (ret < 0) {
		fprintf(stderr, "shardmark serve: %s\n", err);
		return SM_EXIT_USAGE;
	}
	s->exec_cfg.cluster = &s->views[0];
	s->exec_cfg.batch_size_fail_threshold_in_kb = c->batch_size_fail_threshold_in_kb;
	(void)sm_cql_tablets_mode_parse(c->tablets_mode_for_new_keyspaces,
					&s->exec_cfg.tablets_mode); /* an ENUM key: checked */
	if (sm_alt_isolation_parse(c->alternator_write_isolation, &s->alt_cfg.default_isolation) <
	    0) {
		fprintf(stderr,
			"shardmark serve: Invalid --alternator-write-isolation setting '%s'\n",
			c->alternator_write_isolation);
		return SM_EXIT_USAGE;
	}
	s->alt_cfg.enforce_authorization = c->alternator_enforce_authorization;
	s->alt_cfg.access_key_id = c->alternator_access_key_id;
	s->alt_cfg.secret_access_key = c->alternator_secret_access_key;
	s->alt_cfg.ttl_period_ms = c->alternator_ttl_period_in_seconds * 1000u;
	s->alt_svc.handler = &sm_alternator_handler;
	s->alt_svc.request_timeout_ms = c->http_request_timeout_in_ms;
	s->alt_svc.idle_timeout_ms = c->http_idle_timeout_in_ms;
	s->stats_svc.request_timeout_ms = c->http_request_timeout_in_ms;
	s->api_cfg = (struct sm_api_config){
		.cluster = &s->views[0],
		.version = SM_VERSION,
		.started_ms = sm_now_ms(),
		.generation = (uint64_t)time(NULL),
		.native_transport = api_native_transport,
		.native_transport_running = api_native_transport_running,
		.ctx = s,
	};
	sm_api_handler_init(&s->api_handler, &s->api_cfg);
	s->api_svc.handler = &s->api_handler;
	s->api_svc.too_large_type = "application/json";
	s->api_svc.too_large_body = "{\"message\": \"request too large\", \"code\": 413}";
	s->api_svc.request_timeout_ms = c->http_request_timeout_in_ms;
	s->api_svc.idle_timeout_ms = c->http_idle_timeout_in_ms;
	for (i = 0; i <= s->nviews; i++) {
		struct sm_cql_service *svc = &s->cql[i];

		svc->frame_timeout_ms = c->native_transport_frame_timeout_in_ms;
		svc->timeout_ms[SM_CQL_TIMEOUT_OTHER] = c->request_timeout_in_ms;
		svc->timeout_ms[SM_CQL_TIMEOUT_READ] = c->read_request_timeout_in_ms;
		svc->timeout_ms[SM_CQL_TIMEOUT_RANGE] = c->range_request_timeout_in_ms;
		svc->timeout_ms[SM_CQL_TIMEOUT_WRITE] = c->write_request_timeout_in_ms;
		svc->timeout_ms[SM_CQL_TIMEOUT_COUNTER] = c->counter_write_request_timeout_in_ms;
		svc->timeout_ms[SM_CQL_TIMEOUT_CAS] = c->cas_contention_timeout_in_ms;
		svc->timeout_ms[SM_CQL_TIMEOUT_TRUNCATE] = c->truncate_request_timeout_in_ms;

		svc->max_frame = c->native_transport_max_frame_size_in_mb > 2047
					 ? UINT32_MAX
					 : c->native_transport_max_frame_size_in_mb << 20;
		if (!c->shard_nodes) {
			unsigned sa = c->native_shard_aware_transport_port,
				 sa_ssl = c->native_shard_aware_transport_port_ssl;

			svc->shard_aware_port = cql_port_is_tls(c, sa, sa_ssl) ? 0 : (uint16_t)sa;
			svc->shard_aware_port_ssl = cql_port_is_tls(c, sa, sa_ssl) ? (uint16_t)sa
						    : cql_ssl_port_extra(c, sa, sa_ssl)
							    ? (uint16_t)sa_ssl
							    : 0;
		}
		svc->exec = &sm_cql_exec;
		if (strcmp(c->authenticator, "PasswordAuthenticator") == 0) {
			svc->auth_user = c->auth_superuser_name;
			svc->auth_password = c->auth_superuser_password;
		}
		svc->node = &s->views[i < s->nviews ? i : 0];
	}
	return 0;
}

static int
serve_shard_init(unsigned shard, void *arg)
{
	struct serve_ctx *s = arg;
	struct sm_net_config nc;
	const char *stats_addr;
	char services[512], hp[80];
	size_t off = 0;
	int ret;

	sm_mem_set_budget(s->mem_per_shard);
	sm_app_net_config(&s->cfg, &nc);
	ret = sm_net_shard_init(&nc);
	if (ret < 0)
		return ret;
	ret = sm_store_shard_init();
	if (ret == 0)
		ret = sm_store_log_replay();
	if (ret == 0)
		ret = sm_clog_shard_init();
	if (ret == 0)
		ret = sm_cql_system_shard_init(&s->views[0]);
	if (ret == 0)
		ret = sm_cql_exec_shard_init(&s->exec_cfg);
	if (ret == 0)
		ret = sm_alternator_shard_init(&s->alt_cfg);
	if (ret < 0) {
		SM_ERR("shard %u: CQL state: %s", shard, strerror(-ret));
		return ret;
	}
	if (shard != 0)
		return 0;

	/* The control shard owns the listening sockets. */
	services[0] = '\0';
	ret = cql_listen(s);
	if (ret < 0)
		return ret;
	s->cql_running = true;
	off = cql_describe(s, services, off, sizeof(services));
	if (s->cfg.alternator_port != 0) {
		ret = open_listener(&s->cfg, "alternator", "alternator_port", s->cfg.listen_address,
				    s->cfg.alternator_port, SM_PLACE_BALANCED, &sm_http_proto_ops,
				    &s->alt_svc);
		if (ret < 0)
			return ret;
		off += (size_t)snprintf(services + off, sizeof(services) - off,
					", alternator on http://%s (%s)",
					sm_net_hostport(s->cfg.listen_address, s->cfg.alternator_port,
							hp, sizeof(hp)),
					s->cfg.alternator_write_isolation);
	}
	if (s->cfg.alternator_https_port != 0) {
		ret = open_listener_tls(&s->cfg, "alternator", "alternator_https_port",
					s->cfg.listen_address, s->cfg.alternator_https_port,
					SM_PLACE_BALANCED, &sm_http_proto_ops, &s->alt_svc, s->alt_tls,
					NULL);
		if (ret < 0)
			return ret;
		off += (size_t)snprintf(services + off, sizeof(services) - off,
					", alternator on https://%s",
					sm_net_hostport(s->cfg.listen_address,
							s->cfg.alternator_https_port, hp, sizeof(hp)));
	}
	if (s->cfg.echo_port != 0) {
		ret = open_listener(&s->cfg, "echo", "echo_port", s->cfg.listen_address, s->cfg.echo_port,
				    SM_PLACE_BALANCED, &sm_echo_proto, &s->echo);
		if (ret < 0)
			return ret;
		off += (size_t)snprintf(services + off, sizeof(services) - off, ", echo on %s",
					sm_net_hostport(s->cfg.listen_address, s->cfg.echo_port, hp,
							sizeof(hp)));
	}
	if (s->cfg.prometheus_port != 0) {
		stats_addr = s->cfg.prometheus_address ? s->cfg.prometheus_address
						       : s->cfg.listen_address;
		ret = open_listener(&s->cfg, "stats", "prometheus_port", stats_addr, s->cfg.prometheus_port,
				    SM_PLACE_BALANCED, &sm_stats_http_proto, &s->stats_svc);
		if (ret < 0)
			return ret;
		off += (size_t)snprintf(services + off, sizeof(services) - off,
					", stats on http://%s/metrics",
					sm_net_hostport(stats_addr, s->cfg.prometheus_port, hp,
							sizeof(hp)));
	}
	if (s->cfg.api_port != 0) {
		const char *api_addr = s->cfg.api_address ? s->cfg.api_address : s->cfg.listen_address;

		ret = open_listener(&s->cfg, "REST API", "api_port", api_addr, s->cfg.api_port,
				    SM_PLACE_BALANCED, &sm_http_proto_ops, &s->api_svc);
		if (ret < 0)
			return ret;
		off += (size_t)snprintf(services + off, sizeof(services) - off,
					", REST API on http://%s",
					sm_net_hostport(api_addr, s->cfg.api_port, hp, sizeof(hp)));
	}
	SM_INFO("serving %s (%u %s, network stack %s); SIGUSR1 prints counters, SIGTERM "
		"drains and exits",
		services, sm_shard_count(), sm_shard_count() == 1 ? "shard" : "shards",
		sm_net_driver()->name);
	return 0;
}

static void
serve_shard_fini(unsigned shard, void *arg)
{
	(void)shard;
	(void)arg;
	sm_echo_shard_fini();
	sm_net_shard_fini();
	sm_cql_shard_fini();
	sm_cql_exec_shard_fini();
	sm_alternator_shard_fini();
	sm_cql_system_shard_fini();
	sm_clog_shard_fini();
	sm_store_shard_fini();
}

static void
serve_usr1(void *arg)
{
	(void)arg;
	sm_stats_dump(stderr);
}

/* The TLS credentials of the CQL and Alternator ports, checked before any shard starts. */
static int
tls_setup(struct serve_ctx *s)
{
	const struct sm_config *c = &s->cfg;
	char err[512], k1[64], k2[64];
	struct sm_tls_opts o;

	if (c->client_encryption_options_enabled) {
		o = (struct sm_tls_opts){
			.server = true,
			.certificate = c->client_encryption_options_certificate,
			.keyfile = c->client_encryption_options_keyfile,
			.truststore = c->client_encryption_options_truststore,
			.priority = c->client_encryption_options_priority_string,
			.require_client_auth = c->client_encryption_options_require_client_auth,
			.ktls = c->tls_kernel_offload,
		};
		if (o.certificate == NULL || o.keyfile == NULL) {
			fprintf(stderr,
				"shardmark serve: client encryption needs a certificate and its "
				"key: set %s and %s (PEM files)\n",
				sm_config_spelling(c, "client_encryption_options_certificate", k1,
						   sizeof(k1)),
				sm_config_spelling(c, "client_encryption_options_keyfile", k2,
						   sizeof(k2)));
			return SM_EXIT_USAGE;
		}
		if (sm_tls_ctx_new(&o, &s->cql_tls, err, sizeof(err)) < 0) {
			fprintf(stderr, "shardmark serve: client_encryption_options: %s\n", err);
			return SM_EXIT_USAGE;
		}
	}
	if (c->alternator_https_port != 0) {
		o = (struct sm_tls_opts){
			.server = true,
			.certificate = c->alternator_encryption_options_certificate,
			.keyfile = c->alternator_encryption_options_keyfile,
			.priority = c->alternator_encryption_options_priority_string
					    ? c->alternator_encryption_options_priority_string
					    : c->client_encryption_options_priority_string,
			.ktls = c->tls_kernel_offload,
		};
		if (o.certificate == NULL || o.keyfile == NULL) {
			fprintf(stderr,
				"shardmark serve: alternator_https_port needs a certificate and its "
				"key: set %s and %s (PEM files)\n",
				sm_config_spelling(c, "alternator_encryption_options_certificate",
						   k1, sizeof(k1)),
				sm_config_spelling(c, "alternator_encryption_options_keyfile", k2,
						   sizeof(k2)));
			return SM_EXIT_USAGE;
		}
		if (sm_tls_ctx_new(&o, &s->alt_tls, err, sizeof(err)) < 0) {
			fprintf(stderr, "shardmark serve: alternator_encryption_options: %s\n", err);
			return SM_EXIT_USAGE;
		}
	}
	return 0;
}

int
sm_cmd_serve(int argc, char **argv)
{
	static struct serve_ctx s;
	struct sm_runtime_opts ro;
	char err[1024];
	int ret;

	sm_config_defaults(&s.cfg);
	ret = sm_cli_parse(
		argc, argv, "serve",
		"Run the shardmark server: one pinned reactor per CPU serving CQL (native\n"
		"protocol v4, shard-aware), the stats endpoint and, when echo_port is set,\n"
		"the echo service, and Alternator (the DynamoDB API over HTTP).",
		&s.cfg, serve_opts, SM_ARRAY_SIZE(serve_opts), &s, err, sizeof(err));
	if (ret != 0) {
		if (ret < 0)
			fprintf(stderr, "shardmark serve: %s\n", err);
		sm_config_free(&s.cfg);
		return ret > 0 ? SM_EXIT_OK : SM_EXIT_USAGE;
	}
	if (s.print_config) {
		sm_config_print(&s.cfg, stdout, false);
		sm_config_free(&s.cfg);
		return SM_EXIT_OK;
	}
	ret = sm_app_prepare(&s.cfg);
	if (ret != 0)
		goto out;
	s.echo.max_frame = s.cfg.echo_max_frame;
	sm_app_runtime_opts(&s.cfg, &ro);
	if (sm_app_memory_budget(&s.cfg, sm_app_shard_count(&s.cfg), &s.mem_per_shard, err,
				 sizeof(err)) < 0) {
		fprintf(stderr, "shardmark serve: %s\n", err);
		ret = SM_EXIT_USAGE;
		goto out;
	}
	ret = cql_setup(&s, sm_app_shard_count(&s.cfg));
	if (ret != 0)
		goto out;
	ret = tls_setup(&s);
	if (ret != 0)
		goto out;
	ret = sm_app_commitlog_setup(&s.cfg);
	if (ret != 0)
		goto out;
	ro.shard_init = serve_shard_init;
	ro.shard_fini = serve_shard_fini;
	ro.on_usr1 = serve_usr1;
	ro.arg = &s;
	ret = sm_runtime_run(&ro, err, sizeof(err));
	if (ret < 0) {
		/* A shard_init failure was already explained by the shard. */
		if (strncmp(err, "shard ", 6) != 0)
			fprintf(stderr, "shardmark serve: %s\n", err);
		ret = SM_EXIT_FAIL;
	} else {
		SM_INFO("stopped");
		ret = SM_EXIT_OK;
	}
out:
	sm_clog_cleanup();
	sm_tls_ctx_free(s.cql_tls);
	sm_tls_ctx_free(s.alt_tls);
	cql_teardown(&s);
	sm_config_free(&s.cfg);
	return ret;
}
