/* SPDX-License-Identifier: BSD-3-Clause */
/* shardmark serve: run the services on every shard until SIGINT/SIGTERM. */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "echo.h"
#include "stats_http.h"

struct serve_ctx {
	struct sm_config cfg;
	struct sm_echo_service echo;
	bool print_config;
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

static int
serve_shard_init(unsigned shard, void *arg)
{
	struct serve_ctx *s = arg;
	struct sm_net_config nc;
	const char *stats_addr;
	char services[256];
	size_t off = 0;
	int ret;

	sm_app_net_config(&s->cfg, &nc);
	ret = sm_net_shard_init(&nc);
	if (ret < 0)
		return ret;
	if (shard != 0)
		return 0;

	/* The control shard owns the listening sockets. */
	services[0] = '\0';
	if (s->cfg.echo_port != 0) {
		ret = open_listener("echo", "echo_port", s->cfg.listen_address, s->cfg.echo_port,
				    SM_PLACE_BALANCED, &sm_echo_proto, &s->echo);
		if (ret < 0)
			return ret;
		off += (size_t)snprintf(services + off, sizeof(services) - off, "echo on %s:%u",
					s->cfg.listen_address, s->cfg.echo_port);
	}
	if (s->cfg.prometheus_port != 0) {
		stats_addr = s->cfg.prometheus_address ? s->cfg.prometheus_address
						       : s->cfg.listen_address;
		ret = open_listener("stats", "prometheus_port", stats_addr, s->cfg.prometheus_port,
				    SM_PLACE_BALANCED, &sm_stats_http_proto, NULL);
		if (ret < 0)
			return ret;
		off += (size_t)snprintf(services + off, sizeof(services) - off,
					"%sstats on http://%s:%u/metrics", off ? ", " : "",
					stats_addr, s->cfg.prometheus_port);
	}
	SM_INFO("serving %s (%u shards, network stack %s); SIGUSR1 prints counters, SIGTERM "
		"drains and exits",
		off ? services : "nothing (set echo_port or prometheus_port)", sm_shard_count(),
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
	ret = sm_cli_parse(argc, argv, "serve",
			   "Run the shardmark server: one pinned reactor per CPU serving the "
			   "echo\nservice and the stats endpoint (CQL and Alternator are coming).",
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
	sm_config_free(&s.cfg);
	return ret;
}
