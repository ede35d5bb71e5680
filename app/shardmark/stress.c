/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shardmark stress: the cassandra-stress compatible load. This file reads
 * the command line (shardmark's own options, then cassandra-stress's, which
 * lib/stress parses), checks that the outputs can be written and the nodes
 * resolve, opens the output files, wires the run into the shard runtime and
 * turns its outcome into an exit status. The run itself, its engine,
 * protocols and reports are lib/stress (sm_stress_run.h).
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app.h"
#include "sm_stress.h"
#include "sm_tls.h"
#include "sm_stress_ycsb.h"
#include "sm_stress_sb.h"
#include "stats_http.h"

/* `shardmark ycsb` and `shardmark scylla-bench`: the same run, the tools' command lines. */
static bool ycsb_mode, sb_mode;

static int
stress_merge(int argc, char **argv);

/*
 * The loader's live /metrics: --prometheus-port before the command (the
 * name `serve` and ScyllaDB use for the same endpoint; cassandra-stress has
 * none, and the option goes before the command so stress, ycsb and
 * scylla-bench take it alike). Off unless given: a loader beside a server
 * must not take the server's 9180.
 */
static struct {
	const struct sm_config *cfg;
	const char *addr;
	unsigned port;
	struct sm_listener *l;
	struct sm_stats_http_service svc;
} metrics;

/* The run's shard setup, and on shard 0 the metrics listener when asked for. */
static int
stress_shard_init(unsigned shard, void *arg)
{
	struct sm_listen_opts lo = {
		.addr = metrics.addr,
		.port = (uint16_t)metrics.port,
		.placement = SM_PLACE_SHARD,
		.shard = 0,
		.proto = &sm_stats_http_proto,
		.ctx = &metrics.svc,
	};
	char hp[128];
	int ret = sm_stress_shard_init(shard, arg);

	if (ret < 0 || shard != 0 || metrics.port == 0)
		return ret;
	metrics.svc.extra_metrics = sm_stress_metrics_write;
	ret = sm_net_listen(&lo, &metrics.l);
	if (ret < 0) {
		sm_app_listen_error(metrics.cfg, "loader metrics", "prometheus_port", metrics.addr,
				    metrics.port, ret);
		return ret;
	}
	fprintf(stderr, "shardmark stress: live metrics on http://%s/metrics\n",
		sm_net_hostport(metrics.addr, metrics.port, hp, sizeof(hp)));
	return 0;
}

static void
stress_shard_fini(unsigned shard, void *arg)
{
	if (shard == 0 && metrics.l != NULL) {
		sm_net_listener_close(metrics.l);
		metrics.l = NULL;
	}
	sm_stress_shard_fini(shard, arg);
}

/*
 * -graph needs the run's JSON report and HDR interval log: where -log
 * json= / hdrfile= were not given, temporary files stand in (@tmp[0..1]
 * name them, to be removed after). 0 or -errno.
 */
static int
graph_inputs(struct sm_stress_settings *s, char tmp[2][256])
{
	char **paths[2] = { &s->log.json, &s->log.hdrfile };
	static const char *const suffix[2] = { ".json", ".hdr" };
	unsigned i;

	tmp[0][0] = tmp[1][0] = '\0';
	for (i = 0; i < 2; i++) {
		int ret;

		if (*paths[i] != NULL)
			continue;
		ret = sm_app_tmp_file(tmp[i], sizeof(tmp[i]), "shardmark-graph", suffix[i]);
		if (ret < 0) {
			fprintf(stderr, "shardmark stress: -graph: cannot create a temporary file: %s\n",
				strerror(-ret));
			return ret;
		}
		*paths[i] = sm_strdup(tmp[i]);
		if (*paths[i] == NULL)
			return -ENOMEM;
	}
	return 0;
}

/* cassandra-stress's -graph after the run: the report, created or added to. */
static int
graph_write(const struct sm_stress_settings *s)
{
	char files[2 * 4096 + 2], title[96];
	char *argv1[1] = { files };
	const char *t = s->graph.title;

	snprintf(files, sizeof(files), "%s,%s", s->log.json, s->log.hdrfile);
	if (t == NULL && access(s->graph.file, F_OK) != 0) {
		time_t now = time(NULL);
		struct tm tm;

		/* SettingsGraph's default: the tool and the date */
		strftime(title, sizeof(title), "shardmark stress - %Y-%m-%d %H:%M:%S",
			 localtime_r(&now, &tm));
		t = title;
	}
	return sm_app_report(s->graph.file, t,
			     s->graph.revision != NULL ? s->graph.revision : "unknown", argv1, 1,
			     "shardmark stress: -graph", stderr);
}

/* Whether the leading options @argv[0..@n) name the metrics port. */
static bool
metrics_asked(int n, char **argv)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(argv[i], "--prometheus-port") == 0 ||
		    strncmp(argv[i], "--prometheus-port=", 18) == 0)
			return true;
	return false;
}

/*
 * How many of @argv are shardmark configuration options in front of the
 * cassandra-stress command ("--network-stack dpdk --dpdk-args '...' write
 * n=..."): every word that starts with "--", with the value that follows a
 * key that takes one (--config, and every non-bool config key given without
 * "="), so a value may itself start with "--" (--dpdk-args "--no-huge ...").
 * A lone "--" ends them and is counted. Unknown names are counted as bare
 * flags: sm_cli_parse() then refuses them with the nearest key's name.
 * Sets *@help when --help or -h is among them.
 */
static int
leading_options(int argc, char **argv, bool *help)
{
	int i = 0;

	*help = false;
	while (i < argc) {
		const char *a = argv[i];
		bool is_bool = true;

		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			*help = true;
			i++;
			continue;
		}
		if (strncmp(a, "--", 2) != 0)
			break;
		if (a[2] == '\0')
			return i + 1;
		i++;
		if (strchr(a, '=') != NULL)
			continue;
		if (strcmp(a, "--config") == 0 || (sm_config_is_key(a, &is_bool) && !is_bool))
			i++; /* its value, whatever it looks like */
	}
	return i < argc ? i : argc;
}

/*
 * Apply the leading configuration options @argv[0..@n) to @cfg (already
 * holding the defaults) with the parser every subcommand uses. The loader
 * reads no configuration file unless --config names one: the installed file
 * and $SHARDMARK_CONFIG describe the server of this machine, whose
 * network_stack, dpdk_args and addresses must not leak into a load
 * generator, and `shardmark stress` never read them. So when --config is
 * not given, an empty one (/dev/null) stands in for them.
 */
static int
apply_leading_options(struct sm_config *cfg, int n, char **argv, char *err, size_t errlen)
{
	char **args = calloc((size_t)n + 2, sizeof(*args));
	bool config = false;
	int i, k = 0, ret;

	if (args == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		if (strcmp(argv[i], "--config") == 0 || strncmp(argv[i], "--config=", 9) == 0)
			config = true;
	if (!config) {
		args[k++] = (char *)(uintptr_t) "--config";
		args[k++] = (char *)(uintptr_t) "/dev/null";
	}
	for (i = 0; i < n; i++)
		if (strcmp(argv[i], "--") != 0 || i != n - 1)
			args[k++] = argv[i];
	ret = sm_cli_parse(k, args, "stress", "", cfg, NULL, 0, NULL, err, errlen);
	free(args);
	return ret;
}


/* Open @path for writing as @opt asked; a usage error when it cannot be. */
static int
open_log(const char *opt, const char *path, FILE **f)
{
	*f = NULL;
	if (path == NULL)
		return 0;
	*f = fopen(path, "w");
	if (*f == NULL) {
		int err = errno;

		fprintf(stderr, "shardmark stress: cannot write -log %s=%s: %s\n", opt, path,
			strerror(err));
		return -err;
	}
	return 0;
}

int
sm_cmd_stress(int argc, char **argv)
{
	static struct sm_config cfg;
	static struct sm_stress_settings s;
	struct sm_stress_run_opts so;
	struct sm_stress_run *run = NULL;
	struct sm_tls_ctx *tls = NULL;
	struct sm_runtime_opts ro;
	FILE *hdr_log = NULL, *csv_log = NULL, *text_log = NULL;
	const char *fail;
	char err[1024], graph_tmp[2][256] = { "", "" };
	unsigned i;
	int ret, lead;
	bool help, shards_given = false;

	if (argc >= 1 && strcmp(argv[0], "merge") == 0 && !ycsb_mode && !sb_mode)
		return stress_merge(argc - 1, argv + 1);
	lead = leading_options(argc, argv, &help);
	if (argc == 0 || help) {
		if (sb_mode)
			sm_stress_sb_usage(help ? stdout : stderr);
		else if (ycsb_mode)
			sm_stress_ycsb_usage(help ? stdout : stderr);
		else
			sm_stress_usage(help ? stdout : stderr);
		return help ? SM_EXIT_OK : SM_EXIT_USAGE;
	}
	if (lead == argc) {
		fprintf(stderr, "shardmark stress: give a command (write, read, mixed, "
				"counter_write, counter_read) after the shardmark options, e.g. "
				"shardmark stress --smp 2 write n=100000\n");
		return SM_EXIT_USAGE;
	}
	memset(&cfg, 0, sizeof(cfg));
	memset(&s, 0, sizeof(s));
	sm_config_defaults(&cfg);
	if (lead > 0) {
		ret = apply_leading_options(&cfg, lead, argv, err, sizeof(err));
		if (ret != 0) {
			fprintf(stderr, "shardmark stress: %s\n", err);
			sm_config_free(&cfg);
			return SM_EXIT_USAGE;
		}
		if (metrics_asked(lead, argv)) {
			metrics.cfg = &cfg;
			metrics.port = cfg.prometheus_port;
			metrics.addr = cfg.prometheus_address != NULL ? cfg.prometheus_address
								      : cfg.listen_address;
		}
		argc -= lead;
		argv += lead;
	}
	for (i = 0; i < (unsigned)argc; i++)
		if (strcmp(argv[i], "-shards") == 0)
			shards_given = true;
	ret = sb_mode	  ? sm_stress_sb_parse(argc, argv, &s, err, sizeof(err))
	      : ycsb_mode ? sm_stress_ycsb_parse(argc, argv, &s, err, sizeof(err))
			  : sm_stress_settings_parse(argc, argv, &s, err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "shardmark %s: %s\n",
			sb_mode ? "scylla-bench" : ycsb_mode ? "ycsb" : "stress", err);
		sm_config_free(&cfg);
		return SM_EXIT_USAGE;
	}
	if (s.cmd == SM_STRESS_CMD_HELP) {
		ret = SM_EXIT_OK;
		if (s.help_topic == NULL)
			sm_stress_usage(stdout);
		else if (sm_stress_usage_topic(stdout, s.help_topic) < 0) {
			fprintf(stderr,
				"shardmark stress: no help on '%s': give a command (write, read, "
				"mixed, counter_write, counter_read) or an option (-pop, -col, -rate, "
				"-schema, -node, -port, -mode, -log, -errors, -route, -shards)\n",
				s.help_topic);
			ret = SM_EXIT_USAGE;
		}
		goto out_settings;
	}
	{
		/* Every output file can be written, before anything runs. */
		const struct {
			const char *opt, *path;
		} outs[] = {
			{ "-log hdrfile=", s.log.hdrfile },
			{ "-log file=", s.log.file },
			{ "-log json=", s.log.json },
			{ "-log csv=", s.log.csv },
			{ "-log steps=", s.log.steps },
			{ "-graph file=", s.graph.file },
		};

		for (i = 0; i < SM_ARRAY_SIZE(outs); i++) {
			if (outs[i].path != NULL &&
			    sm_app_check_output(outs[i].opt, outs[i].path, err, sizeof(err)) < 0) {
				fprintf(stderr, "shardmark stress: %s\n", err);
				ret = SM_EXIT_USAGE;
				goto out_settings;
			}
		}
	}
	if (s.graph.file != NULL && graph_inputs(&s, graph_tmp) < 0) {
		ret = SM_EXIT_FAIL;
		goto out_settings;
	}
	if (sm_stress_run_check(&s, err, sizeof(err)) < 0) {
		fprintf(stderr, "shardmark stress: %s\n", err);
		ret = SM_EXIT_USAGE;
		goto out_settings;
	}
	for (i = 0; i < s.nodes.n; i++) {
		char addr[64], why[256], *copy;

		/* Names resolve here, once: the client connects to addresses. */
		if (sm_net_addr_resolve(s.nodes.hosts[i], addr, sizeof(addr), why, sizeof(why)) <
		    0) {
			fprintf(stderr,
				"shardmark stress: -node %s does not resolve (%s): give a name that "
				"resolves or an IPv4 or IPv6 address\n",
				s.nodes.hosts[i], why);
			ret = SM_EXIT_USAGE;
			goto out_settings;
		}
		if (strcmp(addr, s.nodes.hosts[i]) == 0)
			continue;
		copy = sm_strdup(addr);
		if (copy == NULL) {
			ret = SM_EXIT_FAIL;
			goto out_settings;
		}
		sm_free(s.nodes.hosts[i]);
		s.nodes.hosts[i] = copy;
	}
	/*
	 * -shards N is the cassandra-stress-style spelling of --smp N: when
	 * both are given, -shards wins (it is the later, more specific one);
	 * without -shards, --smp and --cpuset decide, and with neither the
	 * loader runs one shard per allowed CPU as before.
	 */
	if (shards_given)
		cfg.smp = s.shards;
	ret = sm_app_prepare(&cfg);
	if (ret != 0)
		goto out_settings;
	memset(&so, 0, sizeof(so));
	so.s = &s;
	so.nshards = sm_app_shard_count(&cfg);
	sm_app_net_config(&cfg, &so.net);
	if (open_log("hdrfile", s.log.hdrfile, &hdr_log) < 0 ||
	    open_log("csv", s.log.csv, &csv_log) < 0) {
		ret = SM_EXIT_USAGE;
		goto out_files;
	}
	if (csv_log != NULL)
		sm_stress_csv_header(csv_log);
	if (open_log("file", s.log.file, &text_log) < 0) {
		ret = SM_EXIT_USAGE;
		goto out_files;
	}
	so.hdr_log = hdr_log;
	so.csv_log = csv_log;
	so.text_log = text_log;
	if (s.transport.on) {
		struct sm_tls_opts to = {
			.certificate = s.transport.keystore,
			.keyfile = s.transport.keystore_key,
			.pkcs12_password = s.transport.keystore_password,
			.truststore = s.transport.truststore,
			.priority = s.transport.priority,
			.verify_peer = s.transport.truststore != NULL,
			.ktls = true,
		};

		if (sm_tls_ctx_new(&to, &tls, err, sizeof(err)) < 0) {
			fprintf(stderr, "shardmark stress: -transport: %s\n", err);
			ret = SM_EXIT_USAGE;
			goto out_files;
		}
		so.tls = tls;
	}
	if (sm_stress_run_create(&so, &run) < 0) {
		ret = SM_EXIT_FAIL;
		goto out_files;
	}
	if (!s.log.no_settings) {
		sm_stress_settings_print(stdout, &s);
		if (text_log != NULL)
			sm_stress_settings_print(text_log, &s);
	}
	fflush(stdout);
	sm_app_runtime_opts(&cfg, &ro);
	ro.shard_init = stress_shard_init;
	ro.shard_fini = stress_shard_fini;
	ro.arg = run;
	ret = sm_runtime_run(&ro, err, sizeof(err));
	if (ret < 0) {
		if (strncmp(err, "shard ", 6) != 0)
			fprintf(stderr, "shardmark stress: %s\n", err);
		ret = SM_EXIT_FAIL;
		goto out_files;
	}
	if (sm_stress_run_measured(run)) {
		sm_stress_run_report(run);
		ret = sm_stress_run_failed(run) ? SM_EXIT_FAIL : SM_EXIT_OK;
		if (s.graph.file != NULL) {
			/* the interval log is read back whole: it must be on disk */
			if (hdr_log != NULL)
				fflush(hdr_log);
			if (graph_write(&s) != SM_EXIT_OK)
				ret = SM_EXIT_FAIL;
		}
	} else {
		ret = SM_EXIT_FAIL;
	}
	fail = sm_stress_run_fail_text(run);
	if (fail != NULL) {
		fprintf(stderr, "shardmark stress: %s\n", fail);
		ret = SM_EXIT_FAIL;
	}
out_files:
	if (hdr_log != NULL)
		fclose(hdr_log);
	if (text_log != NULL)
		fclose(text_log);
	if (csv_log != NULL && fclose(csv_log) != 0) {
		fprintf(stderr, "shardmark stress: writing -log csv=%s: %s\n", s.log.csv,
			strerror(errno));
		ret = SM_EXIT_FAIL;
	}
	sm_stress_run_destroy(run);
	sm_tls_ctx_free(tls);
out_settings:
	for (i = 0; i < 2; i++)
		if (graph_tmp[i][0] != '\0')
			unlink(graph_tmp[i]);
	memset(&metrics, 0, sizeof(metrics));
	sm_config_free(&cfg);
	sm_stress_settings_free(&s);
	return ret;
}

int
sm_cmd_ycsb(int argc, char **argv)
{
	ycsb_mode = true;
	return sm_cmd_stress(argc, argv);
}

int
sm_cmd_scylla_bench(int argc, char **argv)
{
	sb_mode = true;
	return sm_cmd_stress(argc, argv);
}

/* ---- shardmark stress merge: several loaders' HDR logs, one result ---- */

static int
stress_merge(int argc, char **argv)
{
	struct sm_stress_merge *m;
	char err[512];
	bool allow_disjoint = false;
	int a, ret = SM_EXIT_OK;

	if (argc == 0 || strcmp(argv[0], "--help") == 0) {
		fprintf(argc == 0 ? stderr : stdout,
			"usage: shardmark stress merge [--allow-disjoint] FILE.hdr...\n\n"
			"Merge the HDR interval logs (-log hdrfile=) of several loaders that ran "
			"at\n"
			"the same time (for example with disjoint -pop ranges against one "
			"cluster)\n"
			"and print each tag's combined count, rate and latency percentiles. The\n"
			"histograms are added bucket by bucket: percentiles are never averaged.\n"
			"Intervals are placed by wall-clock time; logs whose time spans do not\n"
			"overlap are refused (--allow-disjoint merges them with a warning).\n");
		return argc == 0 ? SM_EXIT_USAGE : SM_EXIT_OK;
	}
	if (strcmp(argv[0], "--allow-disjoint") == 0) {
		allow_disjoint = true;
		argv++;
		argc--;
		if (argc == 0) {
			fprintf(stderr, "shardmark stress merge: give the .hdr logs to merge\n");
			return SM_EXIT_USAGE;
		}
	}
	m = sm_stress_merge_new();
	if (m == NULL)
		return SM_EXIT_FAIL;
	for (a = 0; a < argc; a++) {
		FILE *f = fopen(argv[a], "r");

		if (f == NULL) {
			fprintf(stderr, "shardmark stress merge: cannot read %s: %s\n", argv[a],
				strerror(errno));
			ret = SM_EXIT_USAGE;
			goto out;
		}
		if (sm_stress_merge_read(m, f, err, sizeof(err)) < 0) {
			fprintf(stderr, "shardmark stress merge: %s: %s\n", argv[a], err);
			fclose(f);
			ret = SM_EXIT_FAIL;
			goto out;
		}
		fclose(f);
	}
	if (sm_stress_merge_check(m, err, sizeof(err)) < 0) {
		fprintf(stderr, "shardmark stress merge: %s%s\n", allow_disjoint ? "WARNING: " : "",
			err);
		if (!allow_disjoint) {
			ret = SM_EXIT_FAIL;
			goto out;
		}
	}
	sm_stress_merge_print(stdout, m);
out:
	sm_stress_merge_free(m);
	return ret;
}
