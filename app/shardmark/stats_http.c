/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A deliberately small HTTP/1.x responder for the stats endpoint. It is a
 * control path (a scrape every few seconds), so it copies and allocates
 * freely; the Alternator endpoint will bring the real HTTP server.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sm_alternator.h"
#include "sm_commitlog.h"
#include "sm_core.h"
#include "sm_cql.h"
#include "sm_tls.h"
#include "stats_http.h"

#define REQ_MAX 8192

struct stats_conn {
	struct sm_conn *c; /* NULL once closed */
	const struct sm_stats_http_service *svc; /* NULL: defaults */
	size_t len;
	bool answered;
	struct sm_timer timer;
	char req[REQ_MAX];
};

static struct sm_shard_snapshot *
snapshot_all(unsigned *n)
{
	struct sm_shard_snapshot *snap;
	unsigned i;

	*n = sm_shard_count();
	snap = sm_calloc(*n, sizeof(*snap));
	if (snap == NULL)
		return NULL;
	for (i = 0; i < *n; i++)
		sm_shard_snapshot(i, &snap[i]);
	return snap;
}

/* The network driver's own counters, one line per shard, the nonzero ones. */
static void
print_net_counters(FILE *f, unsigned nshards)
{
	const struct sm_net_counter *desc;
	uint64_t vals[64];
	unsigned n = sm_net_counters(&desc), i, k;

	if (n == 0 || n > SM_ARRAY_SIZE(vals))
		return;
	for (i = 0; i < nshards; i++) {
		sm_net_counters_read(i, vals);
		fprintf(f, "%s shard %u:", sm_net_driver()->name, i);
		for (k = 0; k < n; k++)
			if (vals[k] != 0)
				fprintf(f, " %s=%" PRIu64, desc[k].name, vals[k]);
		fprintf(f, "\n");
	}
}

void
sm_stats_dump(FILE *f)
{
	struct sm_shard_snapshot *snap;
	unsigned n;

	snap = snapshot_all(&n);
	if (snap == NULL)
		return;
	sm_stats_print_table(f, snap, n);
	print_net_counters(f, n);
	fflush(f);
	sm_free(snap);
}

static void
respond(struct sm_conn *c, int status, const char *reason, const char *ctype, const char *body,
	size_t body_len)
{
	char head[256];
	int n;

	n = snprintf(head, sizeof(head),
		     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
		     "Connection: close\r\n\r\n",
		     status, reason, ctype, body_len);
	sm_conn_send_copy(c, head, (size_t)n);
	if (body_len > 0)
		sm_conn_send_copy(c, body, body_len);
	sm_conn_close(c);
}

static void
respond_text(struct sm_conn *c, int status, const char *reason, const char *msg)
{
	respond(c, status, reason, "text/plain; charset=utf-8", msg, strlen(msg));
}

static void
serve_metrics(struct sm_conn *c, const struct sm_stats_http_service *svc)
{
	struct sm_shard_snapshot *snap;
	size_t need, len = 65536, extra_len = 0;
	char *buf = NULL, *extra = NULL;
	unsigned n;
	FILE *f;

	snap = snapshot_all(&n);
	if (snap == NULL)
		goto nomem;
	for (;;) {
		buf = sm_malloc(len);
		if (buf == NULL)
			goto nomem;
		need = sm_stats_format_prometheus(buf, len, snap, n);
		/* Then the network driver's own counters, where it has some. */
		need += sm_net_format_prometheus(need < len ? buf + need : NULL,
						 need < len ? len - need : 0, n);
		need += sm_tls_format_prometheus(need < len ? buf + need : NULL,
						 need < len ? len - need : 0, n);
		need += sm_clog_format_prometheus(need < len ? buf + need : NULL,
						  need < len ? len - need : 0, n);
		if (need < len)
			break;
		sm_free(buf);
		len = need + 1;
	}
	/* The NIC's extended statistics, whose names only the driver knows, and
	 * ScyllaDB's protocol metrics under its own names. */
	f = open_memstream(&extra, &extra_len);
	if (f != NULL) {
		sm_net_port_report(f, true);
		if (svc != NULL && svc->extra_metrics != NULL)
			svc->extra_metrics(f); /* a loader: its own, no server's names */
		else {
			sm_alternator_format_metrics(f, n);
			sm_cql_format_metrics(f, n);
		}
		fclose(f);
	}
	if (extra_len > 0 && need + extra_len < len) {
		memcpy(buf + need, extra, extra_len);
		need += extra_len;
	} else if (extra_len > 0) {
		char *both = sm_malloc(need + extra_len);

		if (both != NULL) {
			memcpy(both, buf, need);
			memcpy(both + need, extra, extra_len);
			sm_free(buf);
			buf = both;
			need += extra_len;
		}
	}
	free(extra);
	respond(c, 200, "OK", "text/plain; version=0.0.4; charset=utf-8", buf, need);
	sm_free(buf);
	sm_free(snap);
	return;
nomem:
	sm_free(snap);
	respond_text(c, 500, "Internal Server Error", "out of memory\n");
}

static void
serve_table(struct sm_conn *c)
{
	struct sm_shard_snapshot *snap;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	unsigned n;

	snap = snapshot_all(&n);
	f = snap != NULL ? open_memstream(&text, &len) : NULL;
	if (f == NULL) {
		sm_free(snap);
		respond_text(c, 500, "Internal Server Error", "out of memory\n");
		return;
	}
	sm_stats_print_table(f, snap, n);
	sm_net_port_report(f, false);
	fclose(f);
	respond(c, 200, "OK", "text/plain; charset=utf-8", text, len);
	free(text);
	sm_free(snap);
}

static void
handle(struct sm_conn *c, struct stats_conn *s)
{
	char method[16], path[256];

	s->answered = true;
	if (sscanf(s->req, "%15s %255s", method, path) != 2) {
		respond_text(c, 400, "Bad Request", "malformed request line\n");
		return;
	}
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		respond_text(c, 405, "Method Not Allowed", "only GET is served here\n");
		return;
	}
	if (strcmp(path, "/metrics") == 0)
		serve_metrics(c, s->svc);
	else if (strcmp(path, "/stats") == 0)
		serve_table(c);
	else if (strcmp(path, "/") == 0)
		respond_text(c, 200, "OK",
			     "shardmark stats: GET /metrics (Prometheus), GET /stats (table)\n");
	else
		respond_text(c, 404, "Not Found", "unknown path: try /metrics or /stats\n");
}

/* A client that opened a connection and never finished its request. */
static void
stats_timeout(void *arg)
{
	struct stats_conn *s = arg;

	if (s->c == NULL || s->answered)
		return;
	s->answered = true;
	SM_STAT_INC(conns_timed_out);
	respond_text(s->c, 408, "Request Timeout", "the request did not arrive whole in time\n");
}

static int
stats_accepted(struct sm_conn *c, void *listen_ctx)
{
	const struct sm_stats_http_service *svc = listen_ctx;
	struct stats_conn *s = sm_calloc(1, sizeof(*s));

	if (s == NULL)
		return -ENOMEM;
	s->c = c;
	s->svc = svc;
	sm_timer_init(&s->timer, stats_timeout, s);
	if (svc != NULL && svc->request_timeout_ms != 0)
		sm_timer_arm(&s->timer, svc->request_timeout_ms);
	c->ctx = s;
	return 0;
}

static void
stats_received(struct sm_conn *c, const struct sm_iov *iov, unsigned n)
{
	struct stats_conn *s = c->ctx;
	unsigned i;

	for (i = 0; i < n && !s->answered; i++) {
		size_t take = SM_MIN(iov[i].len, REQ_MAX - 1 - s->len);

		memcpy(s->req + s->len, iov[i].base, take);
		s->len += take;
		s->req[s->len] = '\0';
		if (strstr(s->req, "\r\n\r\n") != NULL || strstr(s->req, "\n\n") != NULL)
			handle(c, s);
		else if (s->len == REQ_MAX - 1) {
			s->answered = true;
			respond_text(c, 431, "Request Header Fields Too Large",
				     "request headers exceed 8 KiB\n");
		}
	}
}

static void
stats_closed(struct sm_conn *c, int err)
{
	struct stats_conn *s = c->ctx;

	(void)err;
	sm_timer_cancel(&s->timer);
	sm_free(s);
}

const struct sm_proto_ops sm_stats_http_proto = {
	.name = "stats-http",
	.accepted = stats_accepted,
	.received = stats_received,
	.closed = stats_closed,
};
