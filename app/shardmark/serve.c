/* SPDX-License-Identifier: BSD-3-Clause */
/* shardmark serve: run the services on every shard until SIGINT/SIGTERM. */

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "echo.h"
#include "sm_alternator.h"
#include "sm_cql_exec.h"
#include "sm_cql_system.h"
#include "sm_store.h"
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

static int
open_listener(const char *what, const char *key, const char *addr, unsigned port,
	      enum sm_placement placement, const struct sm_proto_ops *proto, void *ctx)
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

	ret = sm_net_listen(&lo, &l);
	if (ret < 0)
		sm_app_listen_error(what, key, addr, port, ret);
	return ret;
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
				fprintf(stderr,
					"shardmark serve: shard_nodes needs an IPv4 listen_address "
					"(got %s): shard i listens on listen_address + i\n",
					c->listen_address);
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
		svc->shard_aware_port =
			c->shard_nodes ? 0 : (uint16_t)c->native_shard_aware_transport_port;
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
	char services[256];
	size_t off = 0;
	int ret;

	sm_mem_set_budget(s->mem_per_shard);
	sm_app_net_config(&s->cfg, &nc);
	ret = sm_net_shard_init(&nc);
	if (ret < 0)
		return ret;
	ret = sm_store_shard_init();
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
	if (s->cfg.shard_nodes) {
		unsigned i;

		for (i = 0; i < s->nviews; i++) {
			struct sm_listen_opts lo = {
				.addr = s->node_addr[i],
				.port = (uint16_t)s->cfg.native_transport_port,
				.placement = SM_PLACE_SHARD,
				.shard = i,
				.proto = &sm_cql_proto_ops,
				.ctx = &s->cql[i],
			};
			struct sm_listener *l;

			ret = sm_net_listen(&lo, &l);
			if (ret < 0) {
				sm_app_listen_error("cql", "native_transport_port", s->node_addr[i],
						    s->cfg.native_transport_port, ret);
				return ret;
			}
		}
		off += (size_t)snprintf(services + off, sizeof(services) - off,
					"cql on %s..%s:%u (one node per shard)", s->node_addr[0],
					s->node_addr[s->nviews - 1], s->cfg.native_transport_port);
	} else {
		ret = open_listener("cql", "native_transport_port", s->cfg.listen_address,
				    s->cfg.native_transport_port, SM_PLACE_BALANCED,
				    &sm_cql_proto_ops, &s->cql[0]);
		if (ret < 0)
			return ret;
		ret = open_listener("cql", "native_shard_aware_transport_port",
				    s->cfg.listen_address, s->cfg.native_shard_aware_transport_port,
				    SM_PLACE_SRC_PORT, &sm_cql_proto_ops, &s->cql[1]);
		if (ret < 0)
			return ret;
		off += (size_t)snprintf(services + off, sizeof(services) - off,
					"cql on %s:%u (shard-aware %u)", s->cfg.listen_address,
					s->cfg.native_transport_port,
					s->cfg.native_shard_aware_transport_port);
	}
	if (s->cfg.alternator_port != 0) {
		ret = open_listener("alternator", "alternator_port", s->cfg.listen_address,
				    s->cfg.alternator_port, SM_PLACE_BALANCED, &sm_http_proto_ops,
				    &s->alt_svc);
		if (ret < 0)
			return ret;
		off += (size_t)snprintf(services + off, sizeof(services) - off,
					", alternator on http://%s:%u (%s)", s->cfg.listen_address,
					s->cfg.alternator_port, s->cfg.alternator_write_isolation);
	}
	if (s->cfg.echo_port != 0) {
		ret = open_listener("echo", "echo_port", s->cfg.listen_address, s->cfg.echo_port,
				    SM_PLACE_BALANCED, &sm_echo_proto, &s->echo);
		if (ret < 0)
			return ret;
		off += (size_t)snprintf(services + off, sizeof(services) - off, ", echo on %s:%u",
					s->cfg.listen_address, s->cfg.echo_port);
	}
	if (s->cfg.prometheus_port != 0) {
		stats_addr = s->cfg.prometheus_address ? s->cfg.prometheus_address
						       : s->cfg.listen_address;
		ret = open_listener("stats", "prometheus_port", stats_addr, s->cfg.prometheus_port,
				    SM_PLACE_BALANCED, &sm_stats_http_proto, &s->stats_svc);
		if (ret < 0)
			return ret;
		off += (size_t)snprintf(services + off, sizeof(services) - off,
					", stats on http://%s:%u/metrics", stats_addr,
					s->cfg.prometheus_port);
	}
	SM_INFO("serving %s (%u shards, network stack %s); SIGUSR1 prints counters, SIGTERM "
		"drains and exits",
		services, sm_shard_count(), sm_net_driver()->name);
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
	sm_store_shard_fini();
}

static void
serve_usr1(void *arg)
{
	(void)arg;
	sm_stats_dump(stderr);
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
		sm_config_print(&s.cfg, stdout);
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
	cql_teardown(&s);
	sm_config_free(&s.cfg);
	return ret;
}
