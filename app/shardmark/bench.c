/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shardmark bench: the appliance's main job, a suite of loads with one
 * summary table.
 *
 * Each load runs as its own shardmark process (perf-simple-query, the echo
 * load; later the stress load against a served instance). A fresh process
 * per load starts every load from an empty store and clean counters, so one
 * load's garbage or warm caches cannot leak into the next one's figures,
 * and a load that fails leaves the others standing. The child writes its
 * result as JSON; the suite reads the figures back from it and prints a row
 * per load as it finishes, so the table itself is the progress report.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "app.h"
#include "sm_bench_suite.h"

#define MAX_LOADS 16
#define MAX_CHILD_ARGS 64
#define STRESS_KEYS 200000 /* the write load cycles over this many keys */

struct load {
	const char *name;
	enum sm_bench_load_kind kind;
	const char *args[4]; /* the load's own options, NULL-terminated */
	const char *what;    /* one line for --help */
	const char *iso;     /* SM_BENCH_STRESS on Alternator: the server's write isolation */
};

static const struct load loads[] = {
	{ "cql-read", SM_BENCH_PSQ, { NULL }, "perf-simple-query: CQL prepared SELECT by key" },
	{ "cql-write", SM_BENCH_PSQ, { "--write", NULL }, "perf-simple-query: CQL prepared UPDATE" },
	{ "alternator-forbid_rmw",
	  SM_BENCH_PSQ,
	  { "--alternator", "forbid_rmw", "--write", NULL },
	  "perf-simple-query: Alternator PutItem, write isolation forbid_rmw" },
	{ "alternator-unsafe",
	  SM_BENCH_PSQ,
	  { "--alternator", "unsafe", "--write", NULL },
	  "perf-simple-query: Alternator PutItem, write isolation unsafe" },
	{ "alternator-always_use_lwt",
	  SM_BENCH_PSQ,
	  { "--alternator", "always_use_lwt", "--write", NULL },
	  "perf-simple-query: Alternator PutItem, write isolation always_use_lwt" },
	{ "alternator-only_rmw_uses_lwt",
	  SM_BENCH_PSQ,
	  { "--alternator", "only_rmw_uses_lwt", "--write", NULL },
	  "perf-simple-query: Alternator PutItem, write isolation only_rmw_uses_lwt" },
	{ "echo", SM_BENCH_ECHO, { NULL }, "echo round trips over loopback through io_uring" },
	{ "stress-cql-write",
	  SM_BENCH_STRESS,
	  { "write", NULL },
	  "stress: CQL writes to shardmark serve" },
	{ "stress-cql-read",
	  SM_BENCH_STRESS,
	  { "read", NULL },
	  "stress: CQL reads of the keys written" },
	{ "stress-alternator-forbid_rmw",
	  SM_BENCH_STRESS,
	  { "write", "-mode", "alternator", NULL },
	  "stress: PutItem to shardmark serve, forbid_rmw",
	  "forbid_rmw" },
	{ "stress-alternator-unsafe",
	  SM_BENCH_STRESS,
	  { "write", "-mode", "alternator", NULL },
	  "stress: PutItem to shardmark serve, unsafe",
	  "unsafe" },
	{ "stress-alternator-always_use_lwt",
	  SM_BENCH_STRESS,
	  { "write", "-mode", "alternator", NULL },
	  "stress: PutItem to shardmark serve, always_use_lwt",
	  "always_use_lwt" },
	{ "stress-alternator-only_rmw_uses_lwt",
	  SM_BENCH_STRESS,
	  { "write", "-mode", "alternator", NULL },
	  "stress: PutItem to shardmark serve, only_rmw_uses_lwt",
	  "only_rmw_uses_lwt" },
};

#define DEFAULT_LOADS                                                                              \
	"cql-read,cql-write,alternator-forbid_rmw,alternator-unsafe,alternator-always_use_lwt,"    \
	"alternator-only_rmw_uses_lwt,echo,stress-cql-write,stress-cql-read,"                      \
	"stress-alternator-forbid_rmw,stress-alternator-unsafe,stress-alternator-always_use_lwt,"  \
	"stress-alternator-only_rmw_uses_lwt"

struct suite {
	struct sm_config cfg;
	unsigned duration;
	const char *loads_arg;
	const char *json;
	const char *html;
	const char *csv;
	FILE *csv_file; /* rows are appended as each load ends */
	bool verbose;
	const struct load *run[MAX_LOADS];
	unsigned nrun;
};

static int
o_duration(void *c, const char *v, char *e, size_t l)
{
	char *end;
	unsigned long x;

	errno = 0;
	x = strtoul(v, &end, 10);
	if (errno || end == v || *end != '\0' || v[0] == '-' || x < 1 || x > 3600) {
		snprintf(e, l, "--duration: expected seconds from 1 to 3600, got '%s'", v);
		return -EINVAL;
	}
	((struct suite *)c)->duration = (unsigned)x;
	return 0;
}

static int
o_loads(void *c, const char *v, char *e, size_t l)
{
	(void)e;
	(void)l;
	((struct suite *)c)->loads_arg = v; /* checked once all options are in */
	return 0;
}

static int
o_json(void *c, const char *v, char *e, size_t l)
{
	((struct suite *)c)->json = v;
	return sm_app_check_output("--json", v, e, l);
}

static int
o_html(void *c, const char *v, char *e, size_t l)
{
	((struct suite *)c)->html = v;
	return sm_app_check_output("--html", v, e, l);
}

static int
o_csv(void *c, const char *v, char *e, size_t l)
{
	((struct suite *)c)->csv = v;
	return sm_app_check_output("--csv", v, e, l);
}

static int
o_verbose(void *c, const char *v, char *e, size_t l)
{
	(void)v;
	(void)e;
	(void)l;
	((struct suite *)c)->verbose = true;
	return 0;
}

static const struct sm_cli_opt suite_opts[] = {
	{ "--loads", "LIST",
	  "comma-separated loads to run, in order [default: all]; see the list above", o_loads },
	{ "--duration", "SECONDS",
	  "measured time per load: perf-simple-query runs this many 1-second iterations, "
	  "echo measures this many seconds (after 0.5 s of warm-up), stress runs "
	  "duration=SECONDS (after a warm-up of 2000 operations; stress-cql-read first writes "
	  "the keys if stress-cql-write did not run) [default: 2]",
	  o_duration },
	{ "--json", "FILE", "also write every load's full JSON result to FILE", o_json },
	{ "--html", "FILE",
	  "also write the suite's report to FILE (shardmark report's page: every load's "
	  "figures and per-shard counters, self-contained)",
	  o_html },
	{ "--csv", "FILE",
	  "also write one flat row per interval (per op type for stress) of every load to FILE: "
	  "perf-simple-query's 1-second iterations, stress's report intervals, echo's whole run; "
	  "a header first",
	  o_csv },
	{ "--verbose", NULL, "show each load's own output as it runs", o_verbose },
};

static const struct sm_cli_opt *
suite_opt(const char *arg, bool *inline_value)
{
	size_t i, n;

	for (i = 0; i < SM_ARRAY_SIZE(suite_opts); i++) {
		n = strlen(suite_opts[i].name);
		if (strncmp(arg, suite_opts[i].name, n) != 0)
			continue;
		if (arg[n] == '\0' || arg[n] == '=') {
			*inline_value = arg[n] == '=';
			return &suite_opts[i];
		}
	}
	return NULL;
}

static int
select_loads(struct suite *s, char *err, size_t errlen)
{
	char list[1024], *tok, *save;
	size_t i;

	snprintf(list, sizeof(list), "%s", s->loads_arg ? s->loads_arg : DEFAULT_LOADS);
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		bool all = strcmp(tok, "all") == 0, found = false;

		for (i = 0; i < SM_ARRAY_SIZE(loads); i++) {
			if (!all && strcmp(tok, loads[i].name) != 0)
				continue;
			if (s->nrun == MAX_LOADS) {
				snprintf(err, errlen, "--loads: at most %d loads", MAX_LOADS);
				return -EINVAL;
			}
			s->run[s->nrun++] = &loads[i];
			found = true;
		}
		if (!found) {
			snprintf(err, errlen,
				 "--loads: unknown load '%s' (known: all, " DEFAULT_LOADS ")", tok);
			return -EINVAL;
		}
	}
	if (s->nrun == 0) {
		snprintf(err, errlen, "--loads: name at least one load");
		return -EINVAL;
	}
	return 0;
}

/* ---- the progress line (on a terminal) ---- */

/*
 * On a TTY the suite shows, while a load runs, one line that it rewrites
 * in place: which load, how long it has run, and when the suite should end.
 * The estimate is each load's measured time (--duration) plus what the
 * loads so far took beyond theirs, on average. Off a TTY nothing is added:
 * the rows are the progress, and logs stay clean.
 */
static struct {
	bool on;
	unsigned idx, n;
	const char *name;
	uint64_t suite_start_ns, load_start_ns;
	double overhead_s; /* the loads so far beyond their --duration, summed */
	unsigned done;
	unsigned duration;
	bool shown;
} progress;

static void
progress_clear(void)
{
	if (progress.shown) {
		fputs("\r\033[K", stdout);
		fflush(stdout);
		progress.shown = false;
	}
}

static void
progress_show(void)
{
	uint64_t now = sm_now_ns();
	double load_s = (double)(now - progress.load_start_ns) / 1e9;
	double suite_s = (double)(now - progress.suite_start_ns) / 1e9;
	double per_load = progress.duration + (progress.done ? progress.overhead_s / progress.done
							     : 1.0);
	double left = per_load * (progress.n - progress.idx) - load_s;
	unsigned eta = left > 0 ? (unsigned)(left + 0.5) : 0;

	printf("\r\033[K[%u/%u] %s: %.0f s; suite %u:%02u, about %u:%02u left", progress.idx + 1,
	       progress.n, progress.name, load_s, (unsigned)suite_s / 60, (unsigned)suite_s % 60,
	       eta / 60, eta % 60);
	fflush(stdout);
	progress.shown = true;
}

/* Wait for the load's process, updating the progress line every second. */
static void
wait_child(pid_t pid, int *status)
{
	uint64_t next = 0;

	if (!progress.on) {
		while (waitpid(pid, status, 0) < 0 && errno == EINTR)
			;
		return;
	}
	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid || (r < 0 && errno != EINTR))
			break;
		if (sm_now_ns() >= next) {
			progress_show();
			next = sm_now_ns() + 1000000000ull;
		}
		usleep(100000);
	}
	progress_clear();
}

/* ---- running one load ---- */

static char *
slurp(const char *path, size_t *len)
{
	struct stat st;
	char *buf = NULL;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && st.st_size > 0 && st.st_size < (64 << 20)) {
		buf = malloc((size_t)st.st_size + 1);
		if (buf != NULL && read(fd, buf, (size_t)st.st_size) == st.st_size) {
			buf[st.st_size] = '\0';
			*len = (size_t)st.st_size;
		} else {
			free(buf);
			buf = NULL;
		}
	}
	close(fd);
	return buf;
}

/* Copy what a failed child printed to stderr, so its reason is seen. */
static void
show_output(const char *path)
{
	size_t len = 0;
	char *text = slurp(path, &len);

	if (text != NULL) {
		fprintf(stderr, "---- its output ----\n%s---- end of its output ----\n", text);
		free(text);
	}
}

/* ---- a served instance for the stress loads ---- */

struct server {
	pid_t pid;
	const char *iso; /* its alternator_write_isolation */
	unsigned cql, shard_port, alt, metrics;
	char log_path[64];
	uint64_t keys_written; /* by stress-cql-write, for stress-cql-read */
};

static struct server srv = { .pid = -1 };

static int
tcp_connect(unsigned port)
{
	struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&in, sizeof(in)) < 0) {
		close(fd);
		return -errno;
	}
	return fd;
}

static void
server_stop(void)
{
	int status, i;

	if (srv.pid <= 0)
		return;
	kill(srv.pid, SIGTERM);
	for (i = 0; i < 100 && waitpid(srv.pid, &status, WNOHANG) == 0; i++)
		usleep(50000);
	if (i == 100) {
		kill(srv.pid, SIGKILL);
		waitpid(srv.pid, &status, 0);
	}
	srv.pid = -1;
	unlink(srv.log_path);
}

/* Start `shardmark serve` with @iso and the suite's configuration options. */
static int
server_start(const char *exe, const char *iso, int argc, char **argv)
{
	char ports[4][8], *text;
	const char *args[MAX_CHILD_ARGS];
	unsigned n = 0, i, *p[4] = { &srv.cql, &srv.shard_port, &srv.alt, &srv.metrics };
	size_t len;
	int fd, status;

	server_stop();
	for (i = 0; i < 4; i++) {
		if (sm_app_free_port(p[i]) < 0)
			return -EADDRNOTAVAIL;
		snprintf(ports[i], sizeof(ports[i]), "%u", *p[i]);
	}
	snprintf(srv.log_path, sizeof(srv.log_path), "/tmp/shardmark-bench-serve-XXXXXX");
	fd = mkstemp(srv.log_path);
	if (fd < 0)
		return -errno;
	args[n++] = exe;
	args[n++] = "serve";
	args[n++] = "--native-transport-port";
	args[n++] = ports[0];
	args[n++] = "--native-shard-aware-transport-port";
	args[n++] = ports[1];
	args[n++] = "--alternator-port";
	args[n++] = ports[2];
	args[n++] = "--prometheus-port";
	args[n++] = ports[3];
	args[n++] = "--api-port"; /* the suite needs no REST API: nothing to collide on */
	args[n++] = "0";
	args[n++] = "--alternator-write-isolation";
	args[n++] = iso;
	for (i = 0; i < (unsigned)argc && n + 1 < MAX_CHILD_ARGS; i++)
		args[n++] = argv[i];
	args[n] = NULL;
	fflush(stdout);
	srv.pid = fork();
	if (srv.pid < 0) {
		close(fd);
		return -errno;
	}
	if (srv.pid == 0) {
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		execv(exe, (char *const *)(uintptr_t)args);
		_exit(127);
	}
	close(fd);
	srv.iso = iso;
	srv.keys_written = 0;
	/* Ready when both the CQL port and the metrics port accept. */
	for (i = 0; i < 200; i++) {
		int a, b;

		if (waitpid(srv.pid, &status, WNOHANG) == srv.pid) {
			srv.pid = -1;
			fprintf(stderr, "shardmark bench: shardmark serve exited at start\n");
			text = slurp(srv.log_path, &len);
			if (text != NULL)
				fprintf(stderr, "%s", text);
			free(text);
			unlink(srv.log_path);
			return -ECHILD;
		}
		a = tcp_connect(srv.cql);
		b = a >= 0 ? tcp_connect(srv.metrics) : -1;
		if (a >= 0)
			close(a);
		if (b >= 0) {
			close(b);
			return 0;
		}
		usleep(50000);
	}
	fprintf(stderr, "shardmark bench: shardmark serve did not listen within 10 s\n");
	server_stop();
	return -ETIMEDOUT;
}

/* Scrape /metrics of the served instance into @c. */
static int
server_counters(struct sm_bench_server_counters *c)
{
	static const char req[] = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n"
				  "Connection: close\r\n\r\n";
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap);
	ssize_t r;
	int fd, ret;

	memset(c, 0, sizeof(*c));
	if (buf == NULL)
		return -ENOMEM;
	fd = tcp_connect(srv.metrics);
	if (fd < 0 || write(fd, req, sizeof(req) - 1) != (ssize_t)(sizeof(req) - 1)) {
		if (fd >= 0)
			close(fd);
		free(buf);
		return -EIO;
	}
	while ((r = read(fd, buf + len, cap - len - 1)) > 0) {
		len += (size_t)r;
		if (len + 1 == cap) {
			char *q = realloc(buf, cap * 2);

			if (q == NULL)
				break;
			buf = q;
			cap *= 2;
		}
	}
	close(fd);
	buf[len] = '\0';
	ret = sm_bench_parse_metrics(buf, c);
	free(buf);
	return ret;
}

/*
 * Run @ld as a child shardmark; fill @f and return its JSON text
 * (malloc'd) or NULL after saying why.
 */
static char *
run_load(const struct suite *s, const struct load *ld, int argc, char **argv, struct sm_bench_figures *f)
{
	char exe[4096], json_path[] = "/tmp/shardmark-bench-XXXXXX",
			out_path[] = "/tmp/shardmark-bench-out-XXXXXX",
			csv_path[] = "/tmp/shardmark-bench-csv-XXXXXX", dur[16], sdur[32],
			port_native[32], port_alt[32], json_opt[64], csv_opt[64], pop[64];
	struct sm_bench_server_counters before;
	const char *args[MAX_CHILD_ARGS];
	unsigned n = 0, i;
	int json_fd, out_fd = -1, csv_fd = -1, status;
	char *text = NULL;
	size_t len = 0;
	ssize_t el;
	pid_t pid;

	el = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (el <= 0) {
		fprintf(stderr, "shardmark bench: cannot find its own binary: %s\n",
			strerror(errno));
		return NULL;
	}
	exe[el] = '\0';
	json_fd = mkstemp(json_path);
	if (json_fd < 0 || (!s->verbose && (out_fd = mkstemp(out_path)) < 0) ||
	    (s->csv_file != NULL && ld->kind != SM_BENCH_ECHO && (csv_fd = mkstemp(csv_path)) < 0)) {
		fprintf(stderr, "shardmark bench: cannot create a file in /tmp: %s\n",
			strerror(errno));
		goto out;
	}
	snprintf(dur, sizeof(dur), "%u", s->duration);
	args[n++] = exe;
	if (ld->kind == SM_BENCH_STRESS) {
		const char *iso = ld->iso ? ld->iso : "only_rmw_uses_lwt";

		if ((srv.pid <= 0 || strcmp(srv.iso, iso) != 0) &&
		    server_start(exe, iso, argc, argv) < 0)
			goto out;
		snprintf(sdur, sizeof(sdur), "duration=%us", s->duration);
		snprintf(port_native, sizeof(port_native), "native=%u", srv.cql);
		snprintf(port_alt, sizeof(port_alt), "alternator=%u", srv.alt);
		snprintf(json_opt, sizeof(json_opt), "json=%s", json_path);
		args[n++] = "stress";
		args[n++] = ld->args[0]; /* the command, then its sub-options */
		args[n++] = sdur;
		args[n++] = "warmup=2000";
		for (i = 1; ld->args[i] != NULL; i++)
			args[n++] = ld->args[i];
		args[n++] = "-rate";
		args[n++] = "threads=64";
		args[n++] = "-node";
		args[n++] = "127.0.0.1";
		args[n++] = "-port";
		args[n++] = port_native;
		args[n++] = port_alt;
		args[n++] = "-shards";
		args[n++] = "1";
		if (strcmp(ld->args[0], "read") == 0) {
			/* Read what the write load wrote; write some first if none did. */
			if (srv.keys_written == 0) {
				struct sm_bench_figures pre;
				static const struct load fill = {
					"stress-cql-write", SM_BENCH_STRESS, { "write", NULL }, "", NULL
				};
				char *t = run_load(s, &fill, argc, argv, &pre);

				free(t);
				if (srv.keys_written == 0)
					goto out;
			}
			snprintf(pop, sizeof(pop), "dist=UNIFORM(1..%" PRIu64 ")",
				 srv.keys_written);
		} else {
			snprintf(pop, sizeof(pop), "seq=1..%u", STRESS_KEYS);
		}
		args[n++] = "-pop";
		args[n++] = pop;
		args[n++] = "-log";
		args[n++] = "no-settings";
		args[n++] = json_opt;
		if (csv_fd >= 0) {
			snprintf(csv_opt, sizeof(csv_opt), "csv=%s", csv_path);
			args[n++] = csv_opt;
		}
		argc = 0; /* the configuration options went to the server */
		if (server_counters(&before) < 0) {
			fprintf(stderr, "shardmark bench: cannot read the server's /metrics\n");
			goto out;
		}
	} else if (ld->kind == SM_BENCH_PSQ) {
		args[n++] = "perf-simple-query";
		args[n++] = "--duration";
		args[n++] = dur;
		if (csv_fd >= 0) {
			args[n++] = "--csv";
			args[n++] = csv_path;
		}
		args[n++] = "--json-result";
	} else {
		args[n++] = "bench";
		args[n++] = "echo";
		args[n++] = "--duration";
		args[n++] = dur;
		args[n++] = "--warmup";
		args[n++] = "0.5";
		args[n++] = "--json";
	}
	if (ld->kind != SM_BENCH_STRESS) {
		args[n++] = json_path;
		for (i = 0; ld->args[i] != NULL; i++)
			args[n++] = ld->args[i];
	}
	for (i = 0; i < (unsigned)argc && n + 1 < MAX_CHILD_ARGS; i++)
		args[n++] = argv[i];
	args[n] = NULL;
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "shardmark bench: fork: %s\n", strerror(errno));
		goto out;
	}
	if (pid == 0) {
		if (out_fd >= 0) {
			dup2(out_fd, STDOUT_FILENO);
			dup2(out_fd, STDERR_FILENO);
		}
		/* execv's prototype predates const; it does not write the strings. */
		execv(exe, (char *const *)(uintptr_t)args);
		fprintf(stderr, "shardmark bench: exec %s: %s\n", exe, strerror(errno));
		_exit(127);
	}
	wait_child(pid, &status);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		if (WIFEXITED(status))
			fprintf(stderr, "shardmark bench: load %s failed (exit status %d)\n",
				ld->name, WEXITSTATUS(status));
		else
			fprintf(stderr, "shardmark bench: load %s killed by signal %d\n", ld->name,
				WTERMSIG(status));
		if (out_fd >= 0)
			show_output(out_path);
		goto out;
	}
	text = slurp(json_path, &len);
	if (text != NULL && ld->kind == SM_BENCH_STRESS) {
		struct sm_bench_server_counters after;

		if (sm_bench_read_figures(SM_BENCH_STRESS, text, len, f) < 0 || server_counters(&after) < 0) {
			fprintf(stderr, "shardmark bench: load %s: no readable result or metrics\n",
				ld->name);
			free(text);
			text = NULL;
			goto out;
		}
		sm_bench_counters_delta(&f->srv, &before, &after);
		sm_bench_server_per_op(f);
		if (strcmp(ld->args[0], "write") == 0 && ld->iso == NULL)
			srv.keys_written = SM_MIN((uint64_t)f->ops, (uint64_t)STRESS_KEYS);
	} else if (text == NULL || sm_bench_read_figures(ld->kind, text, len, f) < 0) {
		fprintf(stderr, "shardmark bench: load %s wrote no readable result to %s\n",
			ld->name, json_path);
		free(text);
		text = NULL;
		if (out_fd >= 0)
			show_output(out_path);
	}
	if (text != NULL && s->csv_file != NULL) {
		char *rows = csv_fd >= 0 ? slurp(csv_path, &len) : NULL;

		if (rows != NULL)
			sm_bench_csv_append(s->csv_file, ld->name, rows);
		else if (ld->kind == SM_BENCH_ECHO)
			sm_bench_csv_echo(s->csv_file, ld->name, s->duration, f);
		free(rows);
	}
out:
	if (csv_fd >= 0) {
		close(csv_fd);
		unlink(csv_path);
	}
	if (json_fd >= 0) {
		close(json_fd);
		unlink(json_path);
	}
	if (out_fd >= 0) {
		close(out_fd);
		unlink(out_path);
	}
	return text;
}

static void
print_machine(FILE *f, bool json)
{
	char cpu[128];
	struct utsname un;

	sm_app_cpu_model(cpu, sizeof(cpu));
	uname(&un);
	if (json)
		fprintf(f,
			"  \"machine\": {\"cpu\": \"%s\", \"kernel\": \"%s %s\", "
			"\"online_cpus\": %ld},\n",
			cpu, un.sysname, un.release, sysconf(_SC_NPROCESSORS_ONLN));
	else
		fprintf(f, "machine: %s, %ld CPUs online, %s %s\n", cpu,
			sysconf(_SC_NPROCESSORS_ONLN), un.sysname, un.release);
}

/* The suite's JSON (--json): every load's own result, and the server's counters for stress. */
static int
write_suite_json(const struct suite *s, const char *path, char *const *results,
		 const struct sm_bench_figures *figs)
{
	unsigned i;
	FILE *jf;

	jf = fopen(path, "w");
	if (jf == NULL) {
		int err = errno;

		fprintf(stderr, "shardmark bench: cannot write %s: %s\n", path, strerror(err));
		return -err;
	}
	fprintf(jf, "{\n  \"command\": \"bench\",\n  \"version\": \"%s\",\n", SM_VERSION);
	print_machine(jf, true);
	fprintf(jf, "  \"duration\": %u,\n  \"loads\": [\n", s->duration);
	for (i = 0; i < s->nrun; i++) {
		fprintf(jf, "    {\"name\": \"%s\", \"ok\": %s, \"result\": %s", s->run[i]->name,
			results[i] ? "true" : "false", results[i] ? results[i] : "null");
		if (s->run[i]->kind == SM_BENCH_STRESS && results[i] != NULL)
			sm_bench_json_server(jf, &figs[i]);
		fprintf(jf, "}%s\n", i + 1 < s->nrun ? "," : "");
	}
	fprintf(jf, "  ]\n}\n");
	if (fclose(jf) != 0) {
		fprintf(stderr, "shardmark bench: writing %s: %s\n", path, strerror(errno));
		return -EIO;
	}
	return 0;
}

int
sm_cmd_bench(int argc, char **argv)
{
	static struct suite s;
	char err[1024], *fwd[MAX_CHILD_ARGS], *results[MAX_LOADS] = { NULL };
	struct sm_bench_figures figs[MAX_LOADS];
	unsigned nfwd = 0, i, failed = 0;
	bool any_na = false, any_stress;
	int ret, a;

	if (argc >= 1 && strcmp(argv[0], "echo") == 0)
		return sm_cmd_bench_echo(argc - 1, argv + 1);
	memset(&s, 0, sizeof(s));
	s.duration = 2;
	sm_config_defaults(&s.cfg);
	ret = sm_cli_parse(
		argc, argv, "bench",
		"The appliance's benchmark suite. Runs each load in its own shardmark process\n"
		"and prints one row per load: median throughput (tps for perf-simple-query,\n"
		"requests/s for echo, the client's ops/s for stress), its MAD, allocations,\n"
		"tasks, instructions and cycles per operation, and cross-shard hops per\n"
		"operation. Configuration options (--smp, --cpuset, ...) apply to every load.\n\n"
		"loads: cql-read, cql-write (perf-simple-query on the CQL executor),\n"
		"  alternator-forbid_rmw, alternator-unsafe, alternator-always_use_lwt,\n"
		"  alternator-only_rmw_uses_lwt (perf-simple-query --alternator MODE --write),\n"
		"  echo (echo round trips over loopback through the network driver),\n"
		"  stress-cql-write, stress-cql-read, stress-alternator-forbid_rmw,\n"
		"  stress-alternator-unsafe, stress-alternator-always_use_lwt,\n"
		"  stress-alternator-only_rmw_uses_lwt (shardmark stress over loopback against a\n"
		"  shardmark serve that the suite starts: 1 client shard, 64 threads; the rows "
		"show\n"
		"  the server's counters per client op, and a second table the client's latency\n"
		"  and CPU per op with each server shard's counters).\n\n"
		"'shardmark bench echo --help' shows the echo load's own options; each load can\n"
		"also be run alone with its own command (shardmark perf-simple-query ...).",
		&s.cfg, suite_opts, SM_ARRAY_SIZE(suite_opts), &s, err, sizeof(err));
	if (ret == 0)
		ret = select_loads(&s, err, sizeof(err));
	if (ret != 0) {
		if (ret < 0)
			fprintf(stderr, "shardmark bench: %s\n", err);
		sm_config_free(&s.cfg);
		return ret > 0 ? SM_EXIT_OK : SM_EXIT_USAGE;
	}
	/* Everything that is not the suite's own goes to every load. */
	for (a = 0; a < argc; a++) {
		bool inline_value = false;
		const struct sm_cli_opt *o = suite_opt(argv[a], &inline_value);

		if (o != NULL) {
			if (o->arg != NULL && !inline_value)
				a++;
			continue;
		}
		if (nfwd + 16 >= MAX_CHILD_ARGS) {
			fprintf(stderr, "shardmark bench: too many options\n");
			sm_config_free(&s.cfg);
			return SM_EXIT_USAGE;
		}
		fwd[nfwd++] = argv[a];
	}
	printf("shardmark bench: %u %s, %u s each, %u %s\n", s.nrun, s.nrun == 1 ? "load" : "loads",
	       s.duration, sm_app_shard_count(&s.cfg),
	       sm_app_shard_count(&s.cfg) == 1 ? "shard" : "shards");
	print_machine(stdout, false);
	sm_bench_print_header(stdout);
	if (s.csv != NULL) {
		s.csv_file = fopen(s.csv, "w");
		if (s.csv_file == NULL) {
			fprintf(stderr, "shardmark bench: cannot write --csv %s: %s\n", s.csv,
				strerror(errno));
			sm_config_free(&s.cfg);
			return SM_EXIT_USAGE;
		}
		sm_bench_csv_header(s.csv_file);
	}
	progress.on = isatty(STDOUT_FILENO) && !s.verbose;
	progress.n = s.nrun;
	progress.duration = s.duration;
	progress.suite_start_ns = sm_now_ns();
	for (i = 0; i < s.nrun; i++) {
		memset(&figs[i], 0, sizeof(figs[i]));
		progress.idx = i;
		progress.name = s.run[i]->name;
		progress.load_start_ns = sm_now_ns();
		results[i] = run_load(&s, s.run[i], (int)nfwd, fwd, &figs[i]);
		progress.overhead_s +=
			(double)(sm_now_ns() - progress.load_start_ns) / 1e9 - s.duration;
		progress.done++;
		if (results[i] == NULL) {
			failed++;
			printf("%-30s %12s\n", s.run[i]->name, "FAILED");
			fflush(stdout);
			if (failed == i + 1) {
				/* Nothing has worked yet: the cause is likely shared. */
				fprintf(stderr, "shardmark bench: stopping after the first load "
						"failed; fix the cause above and run again\n");
				s.nrun = i + 1;
				break;
			}
			continue;
		}
		sm_bench_print_row(stdout, s.run[i]->name, &figs[i]);
		any_na |= figs[i].insns < 0 || figs[i].cycles < 0;
	}
	server_stop();
	printf("(ops/s: median tps of the 1-second iterations for perf-simple-query, requests/s "
	       "for echo, the client's ops/s for stress; per-op counters sum every shard; for "
	       "stress they are the server's counters per client operation)\n");
	for (i = 0, any_stress = false; i < s.nrun; i++)
		any_stress |= s.run[i]->kind == SM_BENCH_STRESS && results[i] != NULL;
	if (any_stress) {
		sm_bench_print_stress_header(stdout);
		for (i = 0; i < s.nrun; i++)
			if (s.run[i]->kind == SM_BENCH_STRESS && results[i] != NULL)
				sm_bench_print_stress_details(stdout, s.run[i]->name, &figs[i]);
	}
	if (any_na) {
		struct sm_perf probe;
		char reason[256];

		/* The loads ran in other processes; ask perf_event again here. */
		sm_perf_open(&probe);
		if (sm_perf_unavailable_reason(&probe, SM_PERF_INSTRUCTIONS, reason,
					       sizeof(reason)) == NULL)
			snprintf(reason, sizeof(reason),
				 "a load could not read them in every iteration");
		sm_perf_close(&probe);
		printf("insns/op, cycles/op: n/a: %s\n", reason);
	}
	if (s.json != NULL || s.html != NULL) {
		char tmp[256] = "";
		const char *path = s.json;

		/* --html reads the suite's JSON back: a temporary one without --json */
		if (path == NULL && sm_app_tmp_file(tmp, sizeof(tmp), "shardmark-bench", ".json") == 0)
			path = tmp;
		if (path == NULL) {
			fprintf(stderr, "shardmark bench: --html: no temporary file for the result\n");
			failed++;
		} else if (write_suite_json(&s, path, results, figs) < 0) {
			failed++;
		} else if (s.html != NULL) {
			char *files[1] = { (char *)(uintptr_t)path };

			if (sm_app_report(s.html, "shardmark bench", NULL, files, 1,
					  "shardmark bench: --html", stderr) != SM_EXIT_OK)
				failed++;
		}
		if (tmp[0] != '\0')
			unlink(tmp);
	}
	for (i = 0; i < s.nrun; i++)
		free(results[i]);
	if (s.csv_file != NULL && fclose(s.csv_file) != 0) {
		fprintf(stderr, "shardmark bench: writing %s: %s\n", s.csv, strerror(errno));
		failed++;
	}
	sm_config_free(&s.cfg);
	if (failed > 0) {
		fprintf(stderr, "shardmark bench: %u of %u loads failed\n", failed, s.nrun);
		return SM_EXIT_FAIL;
	}
	return SM_EXIT_OK;
}
