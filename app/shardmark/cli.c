/* SPDX-License-Identifier: BSD-3-Clause */
/* Command-line parsing and runtime setup shared by the subcommands. */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <libgen.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app.h"
#include "sm_store.h"
#include "sm_net_uring.h"
#if SM_HAVE_DPDK
#include "sm_net_dpdk.h"
#endif

/* "  --flag ARG   help text", the text wrapped at 79 columns under itself. */
static void
print_opt(const char *flag, const char *help, const char *tail)
{
	const size_t indent = 31, width = 79;
	char text[2048];
	const char *p = text;
	size_t col;

	snprintf(text, sizeof(text), "%s%s", help, tail);
	printf("  %-28s ", flag);
	col = strlen(flag) > 28 ? 3 + strlen(flag) : indent;
	while (*p != '\0') {
		const char *sp = strchr(p, ' ');
		size_t n = sp != NULL ? (size_t)(sp - p) : strlen(p);

		if (col > indent && col + 1 + n > width) {
			printf("\n%*s", (int)indent, "");
			col = indent;
		} else if (col > indent) {
			putchar(' ');
			col++;
		}
		printf("%.*s", (int)n, p);
		col += n;
		p += n;
		while (*p == ' ')
			p++;
	}
	putchar('\n');
}

static void
print_help(const char *cmd, const char *summary, const struct sm_cli_opt *opts, size_t nopts)
{
	const struct sm_config_key_info *keys;
	size_t nkeys, i, j;
	char flag[64];

	printf("usage: shardmark %s [options]\n\n%s\n\n", cmd, summary);
	if (nopts > 0) {
		printf("%s options:\n", cmd);
		for (i = 0; i < nopts; i++) {
			snprintf(flag, sizeof(flag), "%s%s%s", opts[i].name, opts[i].arg ? " " : "",
				 opts[i].arg ? opts[i].arg : "");
			print_opt(flag, opts[i].help, "");
		}
		printf("\n");
	}
	printf("configuration (config/shardmark.yaml keys; each has a command-line override):\n");
	print_opt("--config FILE",
		  "read settings from a YAML file first [default: $SHARDMARK_CONFIG, "
		  "else " SM_DEFAULT_CONFIG " when it exists]",
		  "");
	keys = sm_config_keys(&nkeys);
	for (i = 0; i < nkeys; i++) {
		size_t len = (size_t)snprintf(flag, sizeof(flag), "--%s", keys[i].name);

		for (j = 2; j < len; j++)
			if (flag[j] == '_')
				flag[j] = '-';
		if (strcmp(keys[i].type, "bool") != 0)
			snprintf(flag + len, sizeof(flag) - len, " %s",
				 strcmp(keys[i].type, "port") == 0  ? "PORT"
				 : strcmp(keys[i].type, "int") == 0 ? "N"
								    : "VALUE");
		{
			char tail[256] = "";

			if (keys[i].defval[0])
				snprintf(tail, sizeof(tail), " [default: %s]", keys[i].defval);
			print_opt(flag, keys[i].help, tail);
		}
	}
	print_opt("--help", "show this help", "");
}

static const struct sm_cli_opt *
find_opt(const struct sm_cli_opt *opts, size_t nopts, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < nopts; i++)
		if (strlen(opts[i].name) == len && strncmp(opts[i].name, name, len) == 0)
			return &opts[i];
	return NULL;
}

/* A table row's value into @ctx; an output file is checked before the run. */
static int
opt_store(const struct sm_cli_opt *o, void *ctx, const char *value, char *err, size_t errlen)
{
	if (o->type == SM_OPT_OUTPUT) {
		int ret = sm_app_check_output(o->name, value, err, errlen);

		if (ret < 0)
			return ret;
	}
	return sm_opt_store(o->name, o->type, o->min, o->max, value, (char *)ctx + o->offset, err,
			    errlen);
}

static bool
config_given(int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++)
		if (strcmp(argv[i], "--config") == 0 || strcmp(argv[i], "-c") == 0 ||
		    strncmp(argv[i], "--config=", 9) == 0)
			return true;
	return false;
}

int
sm_cli_parse(int argc, char **argv, const char *cmd, const char *summary, struct sm_config *cfg,
	     const struct sm_cli_opt *opts, size_t nopts, void *ctx, char *err, size_t errlen)
{
	int i, ret;

	/* --help wins, and --config loads before any override applies. */
	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			print_help(cmd, summary, opts, nopts);
			return 1;
		}
	}
	if (!config_given(argc, argv)) {
		/* The installed configuration applies unless a file is named. */
		const char *path = getenv("SHARDMARK_CONFIG");

		if (path == NULL && access(SM_DEFAULT_CONFIG, R_OK) == 0)
			path = SM_DEFAULT_CONFIG;
		if (path != NULL) {
			ret = sm_config_load_file(cfg, path, err, errlen);
			if (ret < 0 && getenv("SHARDMARK_CONFIG") != NULL) {
				char why[512];

				snprintf(why, sizeof(why), "%s", err);
				snprintf(err, errlen, "SHARDMARK_CONFIG: %s (or unset it)", why);
			}
			if (ret < 0)
				return ret;
		}
	}
	for (i = 0; i < argc; i++) {
		const char *path = NULL;

		if (strcmp(argv[i], "--config") == 0 || strcmp(argv[i], "-c") == 0) {
			if (i + 1 >= argc) {
				snprintf(err, errlen, "%s needs a file name", argv[i]);
				return -EINVAL;
			}
			path = argv[++i];
		} else if (strncmp(argv[i], "--config=", 9) == 0) {
			path = argv[i] + 9;
		}
		if (path != NULL) {
			ret = sm_config_load_file(cfg, path, err, errlen);
			if (ret < 0 && getenv("SHARDMARK_CONFIG") != NULL) {
				char why[512];

				snprintf(why, sizeof(why), "%s", err);
				snprintf(err, errlen, "SHARDMARK_CONFIG: %s (or unset it)", why);
			}
			if (ret < 0)
				return ret;
		}
	}
	for (i = 0; i < argc; i++) {
		const char *arg = argv[i], *eq, *value = NULL;
		const struct sm_cli_opt *o;
		bool is_bool = false;
		size_t nlen;

		if (strcmp(arg, "--config") == 0 || strcmp(arg, "-c") == 0) {
			i++;
			continue;
		}
		if (strncmp(arg, "--config=", 9) == 0)
			continue;
		if (strncmp(arg, "--", 2) != 0) {
			snprintf(
				err, errlen,
				"unexpected argument '%s': options start with -- (see shardmark %s "
				"--help)",
				arg, cmd);
			return -EINVAL;
		}
		eq = strchr(arg, '=');
		nlen = eq ? (size_t)(eq - arg) : strlen(arg);
		if (eq != NULL)
			value = eq + 1;
		o = find_opt(opts, nopts, arg, nlen);
		if (o != NULL) {
			if (o->arg != NULL && value == NULL) {
				if (i + 1 >= argc) {
					snprintf(err, errlen, "%.*s needs a value (%s)", (int)nlen,
						 arg, o->arg);
					return -EINVAL;
				}
				value = argv[++i];
			}
			ret = o->set != NULL ? o->set(ctx, value, err, errlen)
					     : opt_store(o, ctx, value, err, errlen);
			if (ret < 0)
				return ret;
			continue;
		}
		{
			char key[128];

			snprintf(key, sizeof(key), "%.*s", (int)nlen, arg);
			/* the short spelling of the commitlog's mode */
			if (strcmp(key, "--commitlog") == 0)
				snprintf(key, sizeof(key), "--commitlog-sync");
			if (!sm_config_is_key(key, &is_bool)) {
				char why[512];

				/* The config layer suggests the nearest key name. */
				if (sm_config_set(cfg, key, "", why, sizeof(why)) < 0)
					snprintf(err, errlen, "%s", why);
				else
					snprintf(err, errlen,
						 "unknown option %s (see shardmark %s --help)", key,
						 cmd);
				return -EINVAL;
			}
			if (value == NULL && !is_bool) {
				if (i + 1 >= argc) {
					snprintf(err, errlen, "%s needs a value", key);
					return -EINVAL;
				}
				value = argv[++i];
			}
			ret = sm_config_set(cfg, key, value, err, errlen);
			if (ret < 0)
				return ret;
		}
	}
	/* Names become addresses once, here: everything later needs an IP. */
	ret = sm_config_resolve(cfg, err, errlen);
	if (ret < 0)
		return ret;
	return sm_config_validate(cfg, err, errlen);
}

void
sm_app_runtime_opts(const struct sm_config *cfg, struct sm_runtime_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->smp = cfg->smp;
	o->cpuset = cfg->cpuset;
	o->overprovisioned = cfg->overprovisioned;
	o->task_quota_us = cfg->task_quota_us;
	o->idle_poll_us = cfg->idle_poll_us;
	o->drain_timeout_ms = cfg->drain_timeout_ms;
	o->blocked_notify_ms = cfg->blocked_reactor_notify_ms;
	o->blocked_reports_per_minute = cfg->blocked_reactor_reports_per_minute;
}

unsigned
sm_app_shard_count(const struct sm_config *c)
{
	static uint8_t bits[CPU_SETSIZE / 8];
	cpu_set_t set;
	int n;

	if (c->smp != 0)
		return c->smp;
	if (c->cpuset != NULL && (n = sm_cpuset_parse(c->cpuset, bits, CPU_SETSIZE)) > 0)
		return (unsigned)n;
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		return (unsigned)CPU_COUNT(&set);
	return 1;
}

void
sm_app_net_config(const struct sm_config *cfg, struct sm_net_config *nc)
{
	memset(nc, 0, sizeof(*nc));
	nc->rx_buffers = cfg->rx_buffers;
	nc->rx_buffer_size = cfg->rx_buffer_size;
	nc->max_unsent_bytes = cfg->connection_max_unsent_bytes;
}

/* Physical memory, or the cgroup's limit when one is set and lower. */
static uint64_t
machine_memory(void)
{
	uint64_t total = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
	unsigned long long lim;
	FILE *f = fopen("/sys/fs/cgroup/memory.max", "r");

	if (f != NULL) {
		if (fscanf(f, "%llu", &lim) == 1 && lim > 0 && lim < total)
			total = lim;
		fclose(f);
	}
	return total;
}

/* What a shard holds outside sm_malloc: its receive buffers, rings and stack. */
#define SHARD_FIXED_OVERHEAD ((uint64_t)16 << 20)
/* The least heap a shard is given: below it even an idle server fails. */
#define SHARD_MIN_HEAP ((uint64_t)32 << 20)

int
sm_app_memory_budget(const struct sm_config *c, unsigned nshards, uint64_t *per_shard, char *err,
		     size_t errlen)
{
	uint64_t total = machine_memory(), reserve, memory, fixed;

	if (c->reserve_memory != NULL)
		sm_config_parse_size(c->reserve_memory, &reserve);
	else /* Seastar's default (resource.cc, calculate_memory) */
		reserve = SM_MAX(1536ull << 20, total / 100 * 7);
	if (c->memory != NULL) {
		sm_config_parse_size(c->memory, &memory);
	} else {
		if (reserve >= total) {
			snprintf(err, errlen,
				 "reserve_memory (%" PRIu64 " MiB) leaves nothing of this machine's "
				 "%" PRIu64 " MiB: lower --reserve-memory or set --memory",
				 reserve >> 20, total >> 20);
			return -EINVAL;
		}
		memory = total - reserve;
	}
	fixed = (uint64_t)nshards *
		((uint64_t)c->rx_buffers * c->rx_buffer_size + SHARD_FIXED_OVERHEAD);
	if (memory < fixed + (uint64_t)nshards * SHARD_MIN_HEAP) {
		snprintf(err, errlen,
			 "memory %" PRIu64 " MiB is too small for %u shards: each needs at "
			 "least %" PRIu64 " MiB (receive buffers rx_buffers x rx_buffer_size, "
			 "%" PRIu64 " MiB of rings and stack, %" PRIu64 " MiB of heap): raise "
			 "--memory or lower --smp",
			 memory >> 20, nshards, (fixed / nshards + SHARD_MIN_HEAP) >> 20,
			 SHARD_FIXED_OVERHEAD >> 20, SHARD_MIN_HEAP >> 20);
		return -EINVAL;
	}
	if (memory > total)
		SM_WARN("memory %" PRIu64 " MiB is more than this machine's %" PRIu64
			" MiB: the kernel, not the budget, will stop a load that fills it",
			memory >> 20, total >> 20);
	*per_shard = (memory - fixed) / nshards;
	return 0;
}

int
sm_app_prepare(const struct sm_config *cfg)
{
	enum sm_log_level level;
	char err[512];
	int ret;

	if (sm_log_parse_level(cfg->log_level, &level) == 0)
		sm_log_set_level(level);
	if (sm_net_find("uring") == NULL)
		sm_net_uring_register();
#if SM_HAVE_DPDK
	if (sm_net_find("dpdk") == NULL)
		sm_net_dpdk_register();
	if (strcmp(cfg->network_stack, "dpdk") == 0) {
		struct sm_net_dpdk_opts dopts = {
			.args = cfg->dpdk_args,
			.default_ipv4 = cfg->listen_address,
			.shards = sm_app_shard_count(cfg),
		};

		if (sm_net_dpdk_configure(&dopts) < 0) {
			fprintf(stderr, "shardmark: out of memory\n");
			return SM_EXIT_FAIL;
		}
	}
#endif
	if (strcmp(cfg->network_stack, "dpdk") == 0 && sm_net_find("dpdk") == NULL) {
		fprintf(stderr, "shardmark: network_stack dpdk: this build has no DPDK driver: "
				"install libdpdk-dev and rebuild (or use network_stack uring)\n");
		return SM_EXIT_USAGE;
	}
	ret = sm_net_use(cfg->network_stack);
	if (ret < 0) {
		fprintf(stderr, "shardmark: unknown network_stack '%s': use uring or dpdk\n",
			cfg->network_stack);
		return SM_EXIT_USAGE;
	}
	ret = sm_net_driver()->probe(err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "shardmark: %s\n", err);
		return SM_EXIT_FAIL;
	}
	return 0;
}

void
sm_app_listen_error(const struct sm_config *cfg, const char *what, const char *key,
		    const char *addr, unsigned port, int err)
{
	char k[80], la[80], where[96];

	/* The keys as the user gave them: --native-transport-port or native_transport_port */
	if (cfg != NULL) {
		sm_config_spelling(cfg, key, k, sizeof(k));
		sm_config_spelling(cfg, "listen_address", la, sizeof(la));
	} else {
		snprintf(k, sizeof(k), "%s", key);
		snprintf(la, sizeof(la), "listen_address");
	}
	sm_net_hostport(addr, port, where, sizeof(where));
	if (err == -EADDRINUSE)
		SM_ERR("%s port %u on %s is in use: set %s to a free port or stop the other "
		       "server",
		       what, port, addr, k);
	else if (err == -EACCES)
		SM_ERR("%s port %u needs privileges: run as root, grant CAP_NET_BIND_SERVICE, "
		       "or set %s above 1023",
		       what, port, k);
	else if (err == -EADDRNOTAVAIL || err == -EINVAL)
		SM_ERR("%s: cannot listen on %s (%s): set %s to an address of this machine", what,
		       where, strerror(-err), la);
	else if (err == -EMFILE || err == -ENFILE)
		SM_ERR("%s: cannot listen on %s: %s: raise the open file limit (ulimit -n, or "
		       "LimitNOFILE= in systemd)",
		       what, where, strerror(-err));
	else
		SM_ERR("%s: cannot listen on %s: %s", what, where, strerror(-err));
}

void
sm_app_cpu_model(char *buf, size_t len)
{
	char line[256];
	FILE *ci;

	snprintf(buf, len, "unknown");
	ci = fopen("/proc/cpuinfo", "r");
	if (ci == NULL)
		return;
	while (fgets(line, sizeof(line), ci) != NULL) {
		if (strncmp(line, "model name", 10) == 0 && strchr(line, ':') != NULL) {
			snprintf(buf, len, "%s", strchr(line, ':') + 2);
			buf[strcspn(buf, "\n")] = '\0';
			break;
		}
	}
	fclose(ci);
}

int
sm_app_free_port(unsigned *port)
{
	struct sockaddr_in in = { .sin_family = AF_INET };
	socklen_t len = sizeof(in);
	int fd, ret = 0;

	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&in, sizeof(in)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&in, &len) < 0)
		ret = -errno;
	else
		*port = ntohs(in.sin_port);
	close(fd);
	return ret;
}

int
sm_app_tmp_file(char *buf, size_t len, const char *prefix, const char *suffix)
{
	const char *dir = getenv("TMPDIR");
	int fd, n;

	n = snprintf(buf, len, "%s/%s-XXXXXX%s", dir != NULL && dir[0] != '\0' ? dir : "/tmp",
		     prefix, suffix);
	if (n < 0 || (size_t)n >= len) {
		buf[0] = '\0';
		return -ENAMETOOLONG;
	}
	fd = mkstemps(buf, (int)strlen(suffix));
	if (fd < 0) {
		buf[0] = '\0';
		return -errno;
	}
	close(fd);
	return 0;
}

int
sm_app_check_output(const char *opt, const char *path, char *err, size_t errlen)
{
	char copy[4096], dir[4096], shown[4200];
	struct stat st;
	bool existed;
	int fd, e;

	/* "--json FILE" and "-log json=FILE" as they were typed */
	snprintf(shown, sizeof(shown), "%s%s%s", opt,
		 opt[0] != '\0' && opt[strlen(opt) - 1] == '=' ? "" : " ", path ? path : "");
	if (path == NULL || path[0] == '\0') {
		snprintf(err, errlen, "%s needs a file name", opt);
		return -EINVAL;
	}
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s is a directory: give the name of a file in it", shown);
		return -EINVAL;
	}
	existed = access(path, F_OK) == 0;
	/* Open it as the run will, without truncating: a file that was there stays as it was. */
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		e = errno;
		snprintf(copy, sizeof(copy), "%s", path);
		snprintf(dir, sizeof(dir), "%s", dirname(copy));
		if ((e == ENOENT || e == ENOTDIR) && stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
			snprintf(err, errlen, "%s: %s takes no new files (%s): give another path",
				 shown, dir, strerror(e));
		else if (e == ENOENT || e == ENOTDIR)
			snprintf(err, errlen,
				 "%s: the directory %s does not exist: create it (mkdir -p %s) or "
				 "give another path",
				 shown, dir, dir);
		else if (e == EACCES || e == EPERM)
			snprintf(err, errlen,
				 "%s: permission denied: give a path in a directory you may write to",
				 shown);
		else if (e == EROFS)
			snprintf(err, errlen,
				 "%s: read-only file system: give a path on a writable one", shown);
		else
			snprintf(err, errlen, "%s: cannot write: %s", shown, strerror(e));
		return -EINVAL;
	}
	close(fd);
	if (!existed)
		unlink(path);
	return 0;
}

int
sm_app_commitlog_setup(const struct sm_config *c)
{
	struct sm_clog_config cc = {
		.dir = c->commitlog_directory,
		.segment_size = (uint64_t)c->commitlog_segment_size_in_mb << 20,
		.total_space = (uint64_t)c->commitlog_total_space_in_mb << 20,
		.period_ms = c->commitlog_sync_period_in_ms,
		.nshards = sm_app_shard_count(c),
	};
	char err[1024];

	/* the replayed schema's tablets tables are sized for the shards that will run */
	sm_tablets_set_shard_hint(cc.nshards);
	if (sm_clog_mode_parse(c->commitlog_sync, &cc.mode) < 0 || cc.mode == SM_CLOG_OFF)
		return 0;
	if (sm_clog_init(&cc, err, sizeof(err)) < 0) {
		fprintf(stderr, "shardmark: %s\n", err);
		return SM_EXIT_USAGE;
	}
	SM_INFO("commitlog: %s in %s (segments of %u MiB)", c->commitlog_sync,
		c->commitlog_directory, c->commitlog_segment_size_in_mb);
	if (sm_store_log_load_schema() < 0) {
		sm_clog_cleanup();
		return SM_EXIT_FAIL;
	}
	return 0;
}
