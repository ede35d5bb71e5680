/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shardmark cql: a CQL shell (cqlsh's behaviour, lib/cqlsh's logic) over
 * lib/stress's CQL client.
 *
 * Two threads: the runtime (one shard, unpinned) owns the connection, and
 * this file's main thread owns the terminal. A statement goes from the
 * terminal to shard 0 through a one-slot mailbox (the main thread fills it
 * and writes the shard's wakeup eventfd; a poller on the shard sends it),
 * and the copied result comes back under a condition variable. The shell
 * runs one statement at a time, so one slot is all it needs.
 *
 * Signals: the runtime takes SIGINT and SIGTERM in its signal thread (the
 * main thread blocks them too) and drains, which ends the shell. At the
 * prompt the terminal does not turn Ctrl-C into SIGINT: line editing reads
 * it as a key, and it cancels the line as in cqlsh. Input waits also watch
 * an eventfd that the runtime thread writes when it ends, so a `kill` ends
 * the shell at the prompt too.
 */

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>
#include <wchar.h>

#include "app.h"
#include "sm_cqlsh.h"
#include "sm_stress_cql.h"

#if SM_HAVE_LIBEDIT
#include <histedit.h>
#endif

#define DEFAULT_PORT 9042

struct cql_opts {
	const char *host, *port, *execute, *file, *keyspace, *user, *password;
	bool force_tty, help;
};

/* The mailbox between the terminal (main thread) and shard 0. */
struct link {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	/* main -> shard */
	int state; /* REQ_* */
	const struct sm_cqlsh_query *q;
	bool quit;
	bool stopped; /* the shard asked the runtime to stop */
	/* shard -> main */
	struct sm_cqlsh_result *res;
	bool connected, runtime_done;
	int conn_err;
	char conn_text[512];
	/* the shard's */
	int wake_fd;  /* shard 0's wakeup eventfd */
	int done_fd;  /* written when the runtime has ended */
	struct sm_cqlc *c;
	struct sm_cqlc_opts co;
	char addr[64];
	uint16_t port;
	struct sm_config cfg;
};

enum { REQ_NONE, REQ_WAITING, REQ_SENT, REQ_DONE };

static struct link lk;

/* ---- shard 0 ---- */

static void
complete(struct sm_cqlsh_result *r)
{
	pthread_mutex_lock(&lk.mu);
	lk.res = r;
	lk.state = REQ_DONE;
	pthread_cond_broadcast(&lk.cv);
	pthread_mutex_unlock(&lk.mu);
}

static void
query_done(void *arg, const struct sm_cqlc_result *r)
{
	struct sm_cqlsh_result *res = NULL;
	const char *why = lk.c != NULL ? sm_cqlc_error_text(lk.c) : "";

	(void)arg;
	if (r->kind == SM_CQLC_FAILED && r->err == -ESHUTDOWN)
		why = "interrupted";
	if (sm_cqlsh_result_from_cqlc(r, why, &res) < 0)
		res = NULL;
	complete(res);
}

static void
send_query(const struct sm_cqlsh_query *q)
{
	struct sm_cql_params p;
	int ret;

	memset(&p, 0, sizeof(p));
	p.consistency = q->consistency;
	p.serial_consistency = q->serial_consistency;
	p.flags = SM_CQL_QF_SERIAL_CONSISTENCY;
	if (q->page_size > 0) {
		p.flags |= SM_CQL_QF_PAGE_SIZE;
		p.page_size = q->page_size;
	}
	if (q->paging_state.p != NULL) {
		p.flags |= SM_CQL_QF_PAGING_STATE;
		p.paging_state = q->paging_state;
	}
	ret = lk.c != NULL && sm_cqlc_is_ready(lk.c)
		      ? sm_cqlc_query_params(lk.c, sm_cql_str(q->text), &p, query_done, NULL)
		      : -ENOTCONN;
	if (ret < 0)
		complete(sm_cqlsh_result_failed(ret, lk.c != NULL && sm_cqlc_error_text(lk.c)[0]
							     ? sm_cqlc_error_text(lk.c)
							     : strerror(-ret)));
}

/* Each reactor round: a statement from the terminal, or the order to stop. */
static unsigned
mailbox_poll(void *ctx)
{
	const struct sm_cqlsh_query *q = NULL;
	bool quit;

	(void)ctx;
	pthread_mutex_lock(&lk.mu);
	quit = lk.quit;
	if (lk.state == REQ_WAITING) {
		lk.state = REQ_SENT;
		q = lk.q;
	}
	pthread_mutex_unlock(&lk.mu);
	if (q != NULL)
		send_query(q);
	if (quit && !lk.stopped) {
		lk.stopped = true;
		if (lk.c != NULL)
			sm_cqlc_close(lk.c);
		lk.c = NULL;
		sm_runtime_stop();
	}
	return q != NULL;
}

static void
conn_ready(struct sm_cqlc *c, int err, void *ctx)
{
	(void)ctx;
	pthread_mutex_lock(&lk.mu);
	lk.connected = err == 0;
	lk.conn_err = err;
	snprintf(lk.conn_text, sizeof(lk.conn_text), "%s", err < 0 ? sm_cqlc_error_text(c) : "");
	pthread_cond_broadcast(&lk.cv);
	pthread_mutex_unlock(&lk.mu);
}

static int
cql_shard_init(unsigned shard, void *arg)
{
	struct sm_poller poller = { .name = "cql-shell", .poll = mailbox_poll };
	struct sm_net_config nc;
	int ret;

	(void)arg;
	sm_app_net_config(&lk.cfg, &nc);
	ret = sm_net_shard_init(&nc);
	if (ret < 0 || shard != 0)
		return ret;
	lk.wake_fd = sm_shard_wakeup_fd();
	ret = sm_shard_add_poller(&poller);
	if (ret == 0)
		ret = sm_cqlc_connect(&lk.co, &lk.c);
	if (ret < 0) {
		lk.c = NULL;
		pthread_mutex_lock(&lk.mu);
		lk.conn_err = ret;
		snprintf(lk.conn_text, sizeof(lk.conn_text), "connecting to %s:%u failed: %s",
			 lk.addr, lk.port, strerror(-ret));
		pthread_cond_broadcast(&lk.cv);
		pthread_mutex_unlock(&lk.mu);
		return 0; /* the main thread reports it and stops the runtime */
	}
	return 0;
}

static void
cql_shard_fini(unsigned shard, void *arg)
{
	(void)arg;
	if (shard == 0 && lk.c != NULL) {
		sm_cqlc_close(lk.c);
		lk.c = NULL;
	}
	sm_net_shard_fini();
}

static void *
runtime_thread(void *arg)
{
	struct sm_runtime_opts ro;
	char err[512];
	uint64_t one = 1;
	int ret;

	(void)arg;
	sm_app_runtime_opts(&lk.cfg, &ro);
	ro.shard_init = cql_shard_init;
	ro.shard_fini = cql_shard_fini;
	ret = sm_runtime_run(&ro, err, sizeof(err));
	pthread_mutex_lock(&lk.mu);
	if (ret < 0 && lk.conn_err == 0) {
		lk.conn_err = ret;
		snprintf(lk.conn_text, sizeof(lk.conn_text), "%s", err);
	}
	lk.runtime_done = true;
	if (lk.state == REQ_WAITING || lk.state == REQ_SENT) {
		lk.res = sm_cqlsh_result_failed(-ESHUTDOWN, "interrupted");
		lk.state = REQ_DONE;
	}
	pthread_cond_broadcast(&lk.cv);
	pthread_mutex_unlock(&lk.mu);
	if (write(lk.done_fd, &one, sizeof(one)) < 0)
		return NULL;
	return NULL;
}

/* ---- the backend the session sees (main thread) ---- */

static int
backend_query(void *ctx, const struct sm_cqlsh_query *q, struct sm_cqlsh_result **res)
{
	uint64_t one = 1;

	(void)ctx;
	pthread_mutex_lock(&lk.mu);
	if (lk.runtime_done) {
		pthread_mutex_unlock(&lk.mu);
		*res = sm_cqlsh_result_failed(-ESHUTDOWN, "interrupted");
		return -ESHUTDOWN;
	}
	lk.q = q;
	lk.res = NULL;
	lk.state = REQ_WAITING;
	pthread_mutex_unlock(&lk.mu);
	if (write(lk.wake_fd, &one, sizeof(one)) < 0)
		return -errno;
	pthread_mutex_lock(&lk.mu);
	while (lk.state != REQ_DONE)
		pthread_cond_wait(&lk.cv, &lk.mu);
	*res = lk.res;
	lk.res = NULL;
	lk.state = REQ_NONE;
	pthread_mutex_unlock(&lk.mu);
	if (*res == NULL)
		return -ENOMEM;
	return (*res)->kind == SM_CQLSH_FAILED ? (*res)->err : 0;
}

/* What was read from stdin and not used yet (piped input comes in blocks). */
static struct {
	char buf[4096];
	size_t pos, len;
} in;

/*
 * The next byte of stdin into *@c: 1, 0 at the end of the input, -1 when
 * the runtime ended first (SIGINT, SIGTERM) or stdin failed.
 */
static int
in_getc(char *c)
{
	struct pollfd p[2] = { { .fd = STDIN_FILENO, .events = POLLIN },
			       { .fd = lk.done_fd, .events = POLLIN } };
	ssize_t n;

	while (in.pos == in.len) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (p[1].revents != 0)
			return -1;
		if (p[0].revents == 0)
			continue;
		n = read(STDIN_FILENO, in.buf, sizeof(in.buf));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return n == 0 ? 0 : -1;
		in.pos = 0;
		in.len = (size_t)n;
	}
	*c = in.buf[in.pos++];
	return 1;
}

/* One line of stdin into @s, without its newline; false at the end of the input. */
static bool
read_line(struct sm_cqlsh_str *s)
{
	char c;
	int r;

	sm_cqlsh_str_reset(s);
	while ((r = in_getc(&c)) == 1) {
		if (c == '\n')
			return true;
		sm_cqlsh_str_putn(s, &c, 1);
	}
	return r == 0 && s->len > 0;
}

static int
backend_more(void *ctx)
{
	struct sm_cqlsh_str s;
	bool ok;

	(void)ctx;
	fputs("---MORE---", stdout);
	fflush(stdout);
	sm_cqlsh_str_init(&s);
	ok = read_line(&s);
	sm_cqlsh_str_release(&s);
	return ok ? 0 : -1;
}

/* ---- the terminal ---- */

#if SM_HAVE_LIBEDIT
static struct sm_cqlsh *the_shell;
static bool cancelled;

static char *
shell_prompt(EditLine *el)
{
	(void)el;
	return (char *)(uintptr_t)sm_cqlsh_prompt(the_shell);
}

/* Input for libedit: a character, 0 at the end, -1 when the runtime ended. */
static int
shell_getc(EditLine *el, wchar_t *wc)
{
	static mbstate_t mbs;
	char c;
	int n;
	size_t r;

	(void)el;
	for (;;) {
		n = in_getc(&c);
		if (n <= 0)
			return n;
		r = mbrtowc(wc, &c, 1, &mbs);
		if (r == (size_t)-2)
			continue; /* more bytes of this character */
		if (r == (size_t)-1) {
			memset(&mbs, 0, sizeof(mbs));
			*wc = (unsigned char)c;
		}
		return 1;
	}
}

/* Ctrl-C: forget the line (and the statement), as cqlsh's KeyboardInterrupt does. */
static unsigned char
shell_cancel(EditLine *el, int ch)
{
	(void)el;
	(void)ch;
	cancelled = true;
	return CC_NEWLINE;
}

static void
history_path(char *buf, size_t len)
{
	const char *env = getenv("SHARDMARK_CQL_HISTORY"), *home = getenv("HOME");

	if (env != NULL) {
		snprintf(buf, len, "%s", env);
		return;
	}
	snprintf(buf, len, "%s/.shardmark", home != NULL ? home : ".");
	mkdir(buf, 0700);
	snprintf(buf, len, "%s/.shardmark/cql_history", home != NULL ? home : ".");
}

/* Read, edit and run lines until EXIT, the end of the input, or the runtime's end. */
static int
interactive(struct sm_cqlsh *sh)
{
	struct termios saved, quiet;
	bool restore = false;
	EditLine *el;
	History *hist;
	HistEvent ev;
	char path[4096];
	const char *line;
	int n, ret = 0;

	/*
	 * Ctrl-C is a key for the whole session, not only inside el_gets():
	 * typed while a statement runs, or just after a prompt and before
	 * libedit has switched the terminal, it would be SIGINT, which ends the
	 * runtime and so the shell. Set before el_init(), which takes the
	 * terminal's modes as the ones to return to between lines.
	 */
	if (tcgetattr(STDIN_FILENO, &saved) == 0) {
		quiet = saved;
		quiet.c_lflag &= ~(tcflag_t)ISIG;
		restore = tcsetattr(STDIN_FILENO, TCSANOW, &quiet) == 0;
	}
	el = el_init("shardmark", stdin, stdout, stderr);
	hist = history_init();
	if (el == NULL || hist == NULL) {
		if (el != NULL)
			el_end(el);
		if (hist != NULL)
			history_end(hist);
		if (restore)
			tcsetattr(STDIN_FILENO, TCSANOW, &saved);
		return -ENOMEM;
	}
	the_shell = sh;
	history(hist, &ev, H_SETSIZE, 1000);
	history(hist, &ev, H_SETUNIQUE, 1);
	history_path(path, sizeof(path));
	history(hist, &ev, H_LOAD, path);
	el_set(el, EL_EDITOR, "emacs");
	el_set(el, EL_PROMPT, shell_prompt);
	el_set(el, EL_HIST, history, hist);
	el_set(el, EL_GETCFN, shell_getc);
	/* Ctrl-C is a key while editing, not SIGINT (which would end the runtime). */
	el_set(el, EL_SETTY, "-d", "-isig", NULL);
	el_set(el, EL_ADDFN, "sm-cancel", "cancel the line", shell_cancel);
	el_set(el, EL_BIND, "^C", "sm-cancel", NULL);
	el_source(el, NULL); /* ~/.editrc */
	while (ret == 0) {
		cancelled = false;
		line = el_gets(el, &n);
		if (cancelled) {
			/* cqlsh on KeyboardInterrupt: the statement is gone, a new line. */
			fputc('\n', stdout);
			sm_cqlsh_cancel(sh);
			continue;
		}
		if (line == NULL || n < 0) {
			/* Ctrl-D or the end of the input: cqlsh prints a newline. */
			fputc('\n', stdout);
			ret = sm_cqlsh_eof(sh);
			break;
		}
		if (n > 0 && line[n - 1] == '\n')
			n--;
		if (n > 0) {
			char *copy = sm_malloc((size_t)n + 1);

			if (copy != NULL) {
				memcpy(copy, line, (size_t)n);
				copy[n] = '\0';
				history(hist, &ev, H_ENTER, copy);
				sm_free(copy);
			}
		}
		ret = sm_cqlsh_line(sh, line, (size_t)n);
	}
	history(hist, &ev, H_SAVE, path);
	history_end(hist);
	el_end(el);
	if (restore)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved);
	return ret < 0 ? ret : 0;
}
#endif

/* Lines from stdin without editing: piped input, or a TTY in a build without libedit. */
static int
plain(struct sm_cqlsh *sh, bool tty)
{
	struct sm_cqlsh_str line;
	int ret = 0;

	sm_cqlsh_str_init(&line);
	while (ret == 0) {
		if (tty) {
			fputs(sm_cqlsh_prompt(sh), stdout);
			fflush(stdout);
		}
		if (!read_line(&line)) {
			if (tty)
				fputc('\n', stdout);
			ret = sm_cqlsh_eof(sh);
			break;
		}
		ret = sm_cqlsh_line(sh, sm_cqlsh_str_get(&line), line.len);
	}
	sm_cqlsh_str_release(&line);
	return ret;
}

/* ---- the command line ---- */

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: shardmark cql [options] [HOST[:PORT]] [PORT]\n\n"
		"A CQL shell for shardmark serve, ScyllaDB or Cassandra, as cqlsh behaves:\n"
		"statements end with ';', results print as cqlsh's tables, errors as cqlsh's\n"
		"lines. Connects to 127.0.0.1:9042 unless HOST[:PORT] (or $CQLSH_HOST,\n"
		"$CQLSH_PORT) says otherwise; HOST may be a name ([::1]:9042 for IPv6).\n\n"
		"options:\n"
		"  -e, --execute STATEMENT    run STATEMENT and exit\n"
		"  -f, --file FILE            run the statements of FILE and exit\n"
		"  -k, --keyspace KEYSPACE    USE KEYSPACE first\n"
		"  -u, --username USER        log in as USER (PasswordAuthenticator)\n"
		"  -p, --password PASSWORD    with this password (asked for when -u comes alone)\n"
		"  -t, --tty                  prompt and page as on a terminal even when stdin is\n"
		"                             not one\n"
		"  -h, --help                 show this help\n\n"
		"Shell commands: USE, CONSISTENCY [LEVEL], SERIAL CONSISTENCY [LEVEL],\n"
		"EXPAND [ON|OFF], PAGING [ON|OFF|N], DESCRIBE KEYSPACES | KEYSPACE [K] |\n"
		"TABLES | TABLE [K.]T | SCHEMA, SOURCE 'FILE', HELP, EXIT, QUIT.\n\n"
		"With -e, -f or piped input there is no prompt, errors read\n"
		"<stdin>:LINE:ERROR (or FILE:LINE:), and the first error ends the input\n"
		"with exit status 1. Line editing and history (~/.shardmark/cql_history)\n"
		"come from libedit%s.\n",
#if SM_HAVE_LIBEDIT
		""
#else
		" (not in this build: install libedit-dev and rebuild)"
#endif
	);
}

static int
parse_args(int argc, char **argv, struct cql_opts *o)
{
	static const struct {
		const char *s, *l;
		size_t off;
	} with_value[] = {
		{ "-e", "--execute", offsetof(struct cql_opts, execute) },
		{ "-f", "--file", offsetof(struct cql_opts, file) },
		{ "-k", "--keyspace", offsetof(struct cql_opts, keyspace) },
		{ "-u", "--username", offsetof(struct cql_opts, user) },
		{ "-p", "--password", offsetof(struct cql_opts, password) },
	};
	unsigned npos = 0;
	int i;
	size_t k;

	for (i = 0; i < argc; i++) {
		const char *a = argv[i], *eq = strchr(a, '=');
		bool matched = false;

		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			o->help = true;
			return 0;
		}
		if (strcmp(a, "-t") == 0 || strcmp(a, "--tty") == 0) {
			o->force_tty = true;
			continue;
		}
		for (k = 0; k < SM_ARRAY_SIZE(with_value) && !matched; k++) {
			size_t ll = strlen(with_value[k].l);
			const char **dst = (const char **)((char *)o + with_value[k].off);

			if (strcmp(a, with_value[k].s) == 0 || strcmp(a, with_value[k].l) == 0) {
				if (i + 1 >= argc) {
					fprintf(stderr, "shardmark cql: %s needs a value\n", a);
					return -EINVAL;
				}
				*dst = argv[++i];
				matched = true;
			} else if (eq != NULL && (size_t)(eq - a) == ll &&
				   strncmp(a, with_value[k].l, ll) == 0) {
				*dst = eq + 1;
				matched = true;
			}
		}
		if (matched)
			continue;
		if (a[0] == '-' && a[1] != '\0') {
			fprintf(stderr, "shardmark cql: unknown option %s (see shardmark cql --help)\n",
				a);
			return -EINVAL;
		}
		if (npos == 0)
			o->host = a;
		else if (npos == 1)
			o->port = a;
		else {
			fprintf(stderr,
				"shardmark cql: unexpected argument '%s': give HOST[:PORT] [PORT] "
				"(see shardmark cql --help)\n",
				a);
			return -EINVAL;
		}
		npos++;
	}
	if (o->execute != NULL && o->file != NULL) {
		fprintf(stderr, "shardmark cql: give -e or -f, not both\n");
		return -EINVAL;
	}
	return 0;
}

/* HOST[:PORT], [V6]:PORT, a bare IPv6 address; the port defaults to @port. */
static int
split_host(const char *spec, char *host, size_t len, unsigned *port)
{
	const char *colon = strrchr(spec, ':'), *p = spec;
	char *end;
	unsigned long v;
	size_t n;

	if (spec[0] == '[') {
		const char *close = strchr(spec, ']');

		if (close == NULL)
			return -EINVAL;
		n = (size_t)(close - spec - 1);
		p = spec + 1;
		colon = close[1] == ':' ? close + 1 : NULL;
		if (close[1] != '\0' && colon == NULL)
			return -EINVAL;
	} else if (colon != NULL && strchr(spec, ':') != colon) {
		colon = NULL; /* an IPv6 address without a port */
		n = strlen(spec);
	} else {
		n = colon != NULL ? (size_t)(colon - spec) : strlen(spec);
	}
	if (n == 0 || n >= len)
		return -EINVAL;
	memcpy(host, p, n);
	host[n] = '\0';
	if (colon != NULL) {
		errno = 0;
		v = strtoul(colon + 1, &end, 10);
		if (errno != 0 || end == colon + 1 || *end != '\0' || v == 0 || v > 65535)
			return -EINVAL;
		*port = (unsigned)v;
	}
	return 0;
}

static int
parse_port(const char *s, unsigned *port)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v == 0 || v > 65535)
		return -EINVAL;
	*port = (unsigned)v;
	return 0;
}

/* getpass() without the obsolete call: no echo while typing. */
static char *
ask_password(void)
{
	static char buf[256];
	struct termios t, old;
	bool tty = tcgetattr(STDIN_FILENO, &old) == 0;
	size_t n;

	fputs("Password: ", stderr);
	fflush(stderr);
	if (tty) {
		t = old;
		t.c_lflag &= (tcflag_t)~ECHO;
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &t);
	}
	if (fgets(buf, sizeof(buf), stdin) == NULL)
		buf[0] = '\0';
	if (tty)
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
	fputc('\n', stderr);
	n = strlen(buf);
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return buf;
}

/* Wait for the connection; 0, or an exit code after saying why. */
static int
wait_connected(const char *shown)
{
	int err;

	pthread_mutex_lock(&lk.mu);
	while (!lk.connected && lk.conn_err == 0 && !lk.runtime_done)
		pthread_cond_wait(&lk.cv, &lk.mu);
	err = lk.connected ? 0 : lk.conn_err != 0 ? lk.conn_err : -ESHUTDOWN;
	pthread_mutex_unlock(&lk.mu);
	if (err == 0)
		return 0;
	if (err == -EACCES)
		fprintf(stderr, "shardmark cql: Connection error: %s: give -u USER -p PASSWORD\n",
			lk.conn_text);
	else if (err == -ESHUTDOWN)
		fprintf(stderr, "shardmark cql: interrupted while connecting to %s\n", shown);
	else
		fprintf(stderr,
			"shardmark cql: Connection error: %s (is shardmark serve running there? give "
			"HOST[:PORT])\n",
			lk.conn_text[0] ? lk.conn_text : strerror(-err));
	return SM_EXIT_FAIL;
}

/* The banner cqlsh prints on a TTY, from system.local. */
static void
banner(const char *host, unsigned port)
{
	struct sm_cqlsh_query q = {
		.text = "SELECT cluster_name, release_version, cql_version FROM system.local",
		.consistency = SM_CQL_ONE,
		.serial_consistency = SM_CQL_SERIAL,
	};
	struct sm_cqlsh_result *r = NULL;
	char name[128] = "?", rel[64] = "?", cqlv[32] = "?";

	if (backend_query(NULL, &q, &r) == 0 && r->kind == SM_CQLSH_ROWS && r->nrows > 0 &&
	    r->ncols >= 3) {
		snprintf(name, sizeof(name), "%.*s", (int)r->cells[0].len,
			 r->cells[0].p ? (const char *)r->cells[0].p : "");
		snprintf(rel, sizeof(rel), "%.*s", (int)r->cells[1].len,
			 r->cells[1].p ? (const char *)r->cells[1].p : "");
		snprintf(cqlv, sizeof(cqlv), "%.*s", (int)r->cells[2].len,
			 r->cells[2].p ? (const char *)r->cells[2].p : "");
	}
	sm_cqlsh_result_free(r);
	printf("Connected to %s at %s:%u\n", name, host, port);
	printf("[shardmark cql %s | Cassandra %s | CQL spec %s | Native protocol v4]\n", SM_VERSION,
	       rel, cqlv);
	printf("Use HELP for help.\n");
	fflush(stdout);
}

int
sm_cmd_cql(int argc, char **argv)
{
	struct cql_opts o = { 0 };
	struct sm_cqlsh_backend be = { .query = backend_query, .more = backend_more };
	struct sm_cqlsh_opts so = { 0 };
	struct sm_cqlsh *sh = NULL;
	char host[256], err[256];
	unsigned port = DEFAULT_PORT;
	const char *spec;
	pthread_t rt;
	sigset_t sigs;
	bool tty, started = false;
	int ret;

	if (parse_args(argc, argv, &o) < 0)
		return SM_EXIT_USAGE;
	if (o.help) {
		usage(stdout);
		return SM_EXIT_OK;
	}
	spec = o.host != NULL ? o.host : getenv("CQLSH_HOST") ? getenv("CQLSH_HOST") : "127.0.0.1";
	if (o.host == NULL && getenv("CQLSH_PORT") != NULL &&
	    parse_port(getenv("CQLSH_PORT"), &port) < 0) {
		fprintf(stderr, "shardmark cql: CQLSH_PORT=%s is not a port (1-65535)\n",
			getenv("CQLSH_PORT"));
		return SM_EXIT_USAGE;
	}
	if (split_host(spec, host, sizeof(host), &port) < 0 ||
	    (o.port != NULL && parse_port(o.port, &port) < 0)) {
		fprintf(stderr,
			"shardmark cql: '%s%s%s' is not HOST[:PORT]: give a name or address and a "
			"port from 1 to 65535, e.g. 127.0.0.1:9042 or [::1]:9042\n",
			spec, o.port ? " " : "", o.port ? o.port : "");
		return SM_EXIT_USAGE;
	}
	if (o.password != NULL && o.user == NULL) {
		fprintf(stderr, "shardmark cql: -p needs -u USER\n");
		return SM_EXIT_USAGE;
	}
	tty = o.force_tty || (isatty(STDIN_FILENO) && o.execute == NULL && o.file == NULL);
	if (o.user != NULL && o.password == NULL) {
		if (!isatty(STDIN_FILENO)) {
			fprintf(stderr, "shardmark cql: -u without -p needs a terminal to ask for "
					"the password: give -p PASSWORD\n");
			return SM_EXIT_USAGE;
		}
		o.password = ask_password();
	}

	memset(&lk, 0, sizeof(lk));
	pthread_mutex_init(&lk.mu, NULL);
	pthread_cond_init(&lk.cv, NULL);
	lk.wake_fd = lk.done_fd = -1;
	sm_config_defaults(&lk.cfg);
	lk.cfg.smp = 1;
	lk.cfg.overprovisioned = true; /* a shell has no business pinning a CPU */
	lk.cfg.idle_poll_us = 0;
	ret = sm_net_addr_resolve(host, lk.addr, sizeof(lk.addr), err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "shardmark cql: cannot resolve '%s': %s: give a name that resolves "
				"or a numeric address\n",
			host, err);
		ret = SM_EXIT_USAGE;
		goto out;
	}
	lk.port = (uint16_t)port;
	lk.co = (struct sm_cqlc_opts){
		.addr = lk.addr,
		.port = lk.port,
		.user = o.user,
		.password = o.password,
		.max_inflight = 4,
		.ready = conn_ready,
	};
	ret = sm_app_prepare(&lk.cfg);
	if (ret != 0)
		goto out;
	/* The runtime's drain and stop notes are not the shell's output. */
	sm_log_set_level(SM_LOG_WARN);
	setlocale(LC_CTYPE, "");
	lk.done_fd = eventfd(0, EFD_CLOEXEC);
	if (lk.done_fd < 0) {
		fprintf(stderr, "shardmark cql: eventfd: %s (raise the open file limit, ulimit -n)\n",
			strerror(errno));
		ret = SM_EXIT_FAIL;
		goto out;
	}
	/* Only the runtime's signal thread takes these (see the top of the file). */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGUSR1);
	sigaddset(&sigs, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	ret = pthread_create(&rt, NULL, runtime_thread, NULL);
	if (ret != 0) {
		fprintf(stderr, "shardmark cql: cannot start a thread: %s (raise ulimit -u)\n",
			strerror(ret));
		ret = SM_EXIT_FAIL;
		goto out;
	}
	started = true;
	{
		char shown[300];

		sm_net_hostport(host, port, shown, sizeof(shown));
		ret = wait_connected(shown);
	}
	if (ret != 0)
		goto out;
	so.tty = tty;
	so.name = o.file != NULL ? o.file : "<stdin>";
	so.stop_on_error = !tty;
	so.username = o.user;
	so.fmt.local_time = getenv("TZ") != NULL;
	sh = sm_cqlsh_new(&so, &be);
	if (sh == NULL) {
		fprintf(stderr, "shardmark cql: out of memory\n");
		ret = SM_EXIT_FAIL;
		goto out;
	}
	if (tty)
		banner(host, port);
	if (o.keyspace != NULL) {
		struct sm_cqlsh_str use;

		/* As cqlsh -k: the driver's USE of the protected name; failing ends the shell. */
		sm_cqlsh_str_init(&use);
		sm_cqlsh_str_puts(&use, "USE ");
		sm_cqlsh_protect_name(&use, o.keyspace);
		ret = sm_cqlsh_run(sh, sm_cqlsh_str_get(&use));
		sm_cqlsh_str_release(&use);
		if (ret != 0 || sm_cqlsh_failed(sh)) {
			ret = SM_EXIT_FAIL;
			goto out;
		}
	}
	if (o.execute != NULL)
		ret = sm_cqlsh_run(sh, o.execute);
	else if (o.file != NULL)
		ret = sm_cqlsh_run_file(sh, o.file, true);
#if SM_HAVE_LIBEDIT
	else if (tty && isatty(STDIN_FILENO))
		ret = interactive(sh);
#endif
	else
		ret = plain(sh, tty);
	/* As cqlsh: a failed statement changes the exit status only without a TTY. */
	ret = ret < 0 || (!tty && sm_cqlsh_failed(sh)) ? SM_EXIT_FAIL : SM_EXIT_OK;
out:
	if (started) {
		pthread_mutex_lock(&lk.mu);
		lk.quit = true;
		pthread_mutex_unlock(&lk.mu);
		/* shard 0 closes the connection and stops the runtime. */
		pthread_mutex_lock(&lk.mu);
		if (lk.runtime_done)
			lk.wake_fd = -1;
		pthread_mutex_unlock(&lk.mu);
		if (lk.wake_fd >= 0) {
			uint64_t one = 1;

			if (write(lk.wake_fd, &one, sizeof(one)) < 0)
				fprintf(stderr, "shardmark cql: cannot wake the runtime: %s\n",
					strerror(errno));
		}
		pthread_join(rt, NULL);
	}
	sm_cqlsh_free(sh);
	if (lk.done_fd >= 0)
		close(lk.done_fd);
	sm_config_free(&lk.cfg);
	pthread_cond_destroy(&lk.cv);
	pthread_mutex_destroy(&lk.mu);
	return ret;
}
