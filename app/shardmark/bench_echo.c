/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shardmark bench echo: the echo load, in-process over loopback.
 *
 * Every shard serves the echo listener (accepted on shard 0, handed to the
 * least-loaded shard) and runs an equal share of the client connections.
 * Each client connection keeps --pipeline frames in flight; every reply
 * frame is one request. A request is the whole round trip, client send to
 * client receive, so its counters include both sides: per-op figures are
 * the sum of every shard's counter deltas divided by the requests done.
 * Per-shard rows divide a shard's deltas by the requests its own clients
 * completed; server-side work for those may have run on another shard.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "app.h"
#include "echo.h"

#define TICK_MS 1000
#define CONNECT_POLL_MS 50
#define SEND_BURST 64

struct bench_shard;

struct bench_conn {
	struct sm_conn *c;
	struct bench_shard *bs;
	uint64_t partial; /* bytes of a reply frame received so far */
};

struct bench_shard {
	uint64_t completed; /* reply frames; read by shard 0 */
	unsigned connected; /* read by shard 0 */
	unsigned failed;    /* read by shard 0 */
	int first_err;
	struct sm_sendbuf *frame; /* the request frame every connection sends */
	struct bench_conn *conns;
	unsigned nconns;
	bool stop;
	void *ctx;
} SM_CACHE_ALIGNED;

struct bench_ctx {
	struct sm_config cfg;
	double duration_s;
	double warmup_s;
	unsigned conns;
	unsigned size;
	unsigned pipeline;
	unsigned port;
	const char *json;
	struct sm_echo_service echo;
	unsigned nshards;
	struct bench_shard *shards;
	/* shard 0's control state */
	struct sm_timer timer;
	uint64_t phase_start_ns;
	unsigned ticks;
	uint64_t last_total;
	bool measuring;
	int result;
	/* measurement window */
	struct sm_shard_snapshot *s0;
	struct sm_shard_snapshot *s1;
	uint64_t *done0;
	uint64_t *done1;
};

static struct bench_ctx *bench;

static int
parse_uint(const char *name, const char *v, unsigned min, unsigned max, unsigned *out, char *err,
	   size_t errlen)
{
	char *end;
	unsigned long x;

	errno = 0;
	x = strtoul(v, &end, 10);
	if (errno || end == v || *end != '\0' || v[0] == '-' || x < min || x > max) {
		snprintf(err, errlen, "%s: expected an integer from %u to %u, got '%s'", name, min,
			 max, v);
		return -EINVAL;
	}
	*out = (unsigned)x;
	return 0;
}

static int
parse_seconds(const char *name, const char *v, double min, double *out, char *err, size_t errlen)
{
	char *end;
	double x;

	x = strtod(v, &end);
	if (end == v || *end != '\0' || !(x >= min) || x > 86400) {
		snprintf(err, errlen, "%s: expected seconds from %g to 86400, got '%s'", name, min,
			 v);
		return -EINVAL;
	}
	*out = x;
	return 0;
}

static int
opt_duration(void *ctx, const char *v, char *err, size_t errlen)
{
	return parse_seconds("--duration", v, 0.1, &((struct bench_ctx *)ctx)->duration_s, err,
			     errlen);
}

static int
opt_warmup(void *ctx, const char *v, char *err, size_t errlen)
{
	return parse_seconds("--warmup", v, 0, &((struct bench_ctx *)ctx)->warmup_s, err, errlen);
}

static int
opt_connections(void *ctx, const char *v, char *err, size_t errlen)
{
	return parse_uint("--connections", v, 1, 100000, &((struct bench_ctx *)ctx)->conns, err,
			  errlen);
}

static int
opt_size(void *ctx, const char *v, char *err, size_t errlen)
{
	return parse_uint("--size", v, 0, 1 << 20, &((struct bench_ctx *)ctx)->size, err, errlen);
}

static int
opt_pipeline(void *ctx, const char *v, char *err, size_t errlen)
{
	return parse_uint("--pipeline", v, 1, 1024, &((struct bench_ctx *)ctx)->pipeline, err,
			  errlen);
}

static int
opt_port(void *ctx, const char *v, char *err, size_t errlen)
{
	return parse_uint("--port", v, 0, 65535, &((struct bench_ctx *)ctx)->port, err, errlen);
}

static int
opt_json(void *ctx, const char *v, char *err, size_t errlen)
{
	((struct bench_ctx *)ctx)->json = v;
	return sm_app_check_output("--json", v, err, errlen);
}

static const struct sm_cli_opt bench_opts[] = {
	{ "--duration", "SECONDS", "measured time [default: 5]", opt_duration },
	{ "--warmup", "SECONDS", "load before measuring starts [default: 1]", opt_warmup },
	{ "--connections", "N", "client connections over all shards [default: 256]",
	  opt_connections },
	{ "--size", "BYTES", "echo payload per request [default: 64]", opt_size },
	{ "--pipeline", "N", "requests in flight per connection [default: 16]", opt_pipeline },
	{ "--port", "PORT", "loopback port of the echo listener [default: a free one]", opt_port },
	{ "--json", "FILE", "also write the results as JSON to FILE", opt_json },
};

/* ---- client connections (on every shard) ---- */

static void
send_frames(struct bench_conn *bc, uint64_t n)
{
	struct sm_iov v[SEND_BURST];
	struct sm_sendbuf *f = bc->bs->frame;
	unsigned i, k;

	for (i = 0; i < SEND_BURST; i++) {
		v[i].seg = &f->seg;
		v[i].base = f->data;
		v[i].len = f->len;
	}
	while (n > 0) {
		k = (unsigned)SM_MIN(n, (uint64_t)SEND_BURST);
		if (sm_conn_send(bc->c, v, k) < 0)
			return;
		n -= k;
	}
}

static void
client_connected(struct sm_conn *c, int err)
{
	struct bench_conn *bc = c->ctx;
	struct bench_shard *bs = bc->bs;

	if (err < 0) {
		bc->c = NULL;
		if (bs->first_err == 0)
			bs->first_err = err;
		SM_WRITE_ONCE(bs->failed, bs->failed + 1);
		return;
	}
	SM_WRITE_ONCE(bs->connected, bs->connected + 1);
	send_frames(bc, bench->pipeline);
}

static void
client_received(struct sm_conn *c, const struct sm_iov *iov, unsigned n)
{
	struct bench_conn *bc = c->ctx;
	struct bench_shard *bs = bc->bs;
	uint64_t bytes = bc->partial, frames;
	unsigned i;

	for (i = 0; i < n; i++)
		bytes += iov[i].len;
	frames = bytes / bs->frame->len;
	bc->partial = bytes % bs->frame->len;
	if (frames == 0)
		return;
	SM_WRITE_ONCE(bs->completed, bs->completed + frames);
	if (!bs->stop)
		send_frames(bc, frames);
}

static void
client_closed(struct sm_conn *c, int err)
{
	struct bench_conn *bc = c->ctx;

	if (!bc->bs->stop && err < 0)
		SM_WARN("bench connection closed: %s", strerror(-err));
	bc->c = NULL;
}

static void
client_drain(struct sm_conn *c)
{
	sm_conn_close(c);
}

static const struct sm_proto_ops client_proto = {
	.name = "echo-client",
	.connected = client_connected,
	.received = client_received,
	.closed = client_closed,
	.drain = client_drain,
};

static void
start_clients(void *arg)
{
	struct bench_shard *bs = &bench->shards[sm_shard_id()];
	struct sm_connect_opts co = {
		.addr = "127.0.0.1",
		.port = (uint16_t)bench->port,
		.proto = &client_proto,
	};
	unsigned i;
	int ret;

	(void)arg;
	for (i = 0; i < bs->nconns; i++) {
		bs->conns[i].bs = bs;
		co.ctx = &bs->conns[i];
		ret = sm_net_connect(&co, &bs->conns[i].c);
		if (ret < 0) {
			if (bs->first_err == 0)
				bs->first_err = ret;
			SM_WRITE_ONCE(bs->failed, bs->failed + 1);
		}
	}
}

static void
stop_clients(void *arg)
{
	struct bench_shard *bs = &bench->shards[sm_shard_id()];
	unsigned i;

	(void)arg;
	bs->stop = true;
	for (i = 0; i < bs->nconns; i++)
		if (bs->conns[i].c != NULL)
			sm_conn_close(bs->conns[i].c);
}

/* ---- control, on shard 0 ---- */

static uint64_t
total_completed(void)
{
	uint64_t t = 0;
	unsigned i;

	for (i = 0; i < bench->nshards; i++)
		t += SM_READ_ONCE(bench->shards[i].completed);
	return t;
}

static void
take_snapshot(struct sm_shard_snapshot *snap, uint64_t *done)
{
	unsigned i;

	for (i = 0; i < bench->nshards; i++) {
		done[i] = SM_READ_ONCE(bench->shards[i].completed);
		sm_shard_snapshot(i, &snap[i]);
	}
}

static void
finish(int result)
{
	bench->result = result;
	sm_submit_to_all(stop_clients, NULL, NULL);
	sm_runtime_stop();
}

static void
control_tick(void *arg)
{
	uint64_t now = sm_now_ns(), total;
	unsigned i, connected = 0, failed = 0;
	int err = 0;

	(void)arg;
	if (!bench->measuring && bench->ticks == 0 && bench->phase_start_ns == 0) {
		/* Waiting for every client connection to be up. */
		for (i = 0; i < bench->nshards; i++) {
			connected += SM_READ_ONCE(bench->shards[i].connected);
			failed += SM_READ_ONCE(bench->shards[i].failed);
			if (err == 0)
				err = bench->shards[i].first_err;
		}
		if (failed > 0) {
			SM_ERR("%u of %u client connections failed: %s", failed, bench->conns,
			       strerror(-err));
			finish(SM_EXIT_FAIL);
			return;
		}
		if (connected < bench->conns) {
			sm_timer_arm(&bench->timer, CONNECT_POLL_MS);
			return;
		}
		printf("%u connections up on %u %s; warming up for %.1f s\n", bench->conns,
		       bench->nshards, bench->nshards == 1 ? "shard" : "shards", bench->warmup_s);
		fflush(stdout);
		bench->phase_start_ns = now;
		sm_timer_arm(&bench->timer, (uint64_t)(bench->warmup_s * 1000));
		return;
	}
	if (!bench->measuring) {
		bench->measuring = true;
		take_snapshot(bench->s0, bench->done0);
		bench->phase_start_ns = now;
		bench->last_total = total_completed();
		sm_timer_arm(&bench->timer,
			     SM_MIN((uint64_t)TICK_MS, (uint64_t)(bench->duration_s * 1000)));
		return;
	}
	total = total_completed();
	bench->ticks++;
	if ((double)(now - bench->phase_start_ns) / 1e9 + 0.0005 >= bench->duration_s) {
		take_snapshot(bench->s1, bench->done1);
		printf("%7.1fs %12.0f requests/s\n", (double)(now - bench->phase_start_ns) / 1e9,
		       (double)(total - bench->last_total) * 1e9 /
			       (double)(now - bench->phase_start_ns -
					(uint64_t)(bench->ticks - 1) * TICK_MS * 1000000ull));
		fflush(stdout);
		finish(SM_EXIT_OK);
		return;
	}
	printf("%7.1fs %12" PRIu64 " requests/s\n", (double)(now - bench->phase_start_ns) / 1e9,
	       (total - bench->last_total) * 1000 / TICK_MS);
	fflush(stdout);
	bench->last_total = total;
	{
		double left_ms = bench->duration_s * 1000 - (double)bench->ticks * TICK_MS;

		sm_timer_arm(&bench->timer,
			     (uint64_t)(left_ms < TICK_MS ? (left_ms > 1 ? left_ms : 1) : TICK_MS));
	}
}

static int
bench_shard_init(unsigned shard, void *arg)
{
	struct bench_ctx *b = arg;
	struct bench_shard *bs = &b->shards[shard];
	struct sm_net_config nc;
	uint32_t be;
	unsigned i;
	int ret;

	if (sm_shard_count() != b->nshards) {
		SM_ERR("bench planned %u shards but the runtime started %u", b->nshards,
		       sm_shard_count());
		return -EINVAL;
	}
	sm_app_net_config(&b->cfg, &nc);
	ret = sm_net_shard_init(&nc);
	if (ret < 0)
		return ret;
	bs->nconns = b->conns / b->nshards + (shard < b->conns % b->nshards ? 1 : 0);
	bs->conns = sm_calloc(bs->nconns ? bs->nconns : 1, sizeof(*bs->conns));
	bs->frame = sm_sendbuf_new((size_t)b->size + 4);
	if (bs->conns == NULL || bs->frame == NULL)
		return -ENOMEM;
	be = htonl(b->size);
	memcpy(bs->frame->data, &be, 4);
	for (i = 0; i < b->size; i++)
		bs->frame->data[4 + i] = (char)('a' + i % 26);
	bs->frame->len = (size_t)b->size + 4;
	if (shard != 0)
		return 0;

	{
		struct sm_listen_opts lo = {
			.addr = "127.0.0.1",
			.port = (uint16_t)b->port,
			.placement = SM_PLACE_BALANCED,
			.proto = &sm_echo_proto,
			.ctx = &b->echo,
		};
		struct sm_listener *l;

		ret = sm_net_listen(&lo, &l);
		if (ret < 0) {
			sm_app_listen_error(NULL, "bench echo", "--port", "127.0.0.1", b->port, ret);
			return ret;
		}
	}
	sm_submit_to_all(start_clients, NULL, NULL);
	sm_timer_init(&b->timer, control_tick, NULL);
	sm_timer_arm(&b->timer, CONNECT_POLL_MS);
	return 0;
}

static void
bench_shard_fini(unsigned shard, void *arg)
{
	struct bench_ctx *b = arg;
	struct bench_shard *bs = &b->shards[shard];

	if (bs->frame != NULL)
		sm_bufseg_put(&bs->frame->seg);
	bs->frame = NULL;
	sm_echo_shard_fini();
	sm_net_shard_fini();
	sm_free(bs->conns);
	bs->conns = NULL;
}

/* ---- report ---- */

static double
per_op(uint64_t delta, uint64_t ops)
{
	return ops ? (double)delta / (double)ops : 0;
}

#define SW_DELTA(i, f) (bench->s1[i].sw.f - bench->s0[i].sw.f)

struct row {
	uint64_t ops;
	double secs;
	uint64_t io_enters, allocs, tasks, polls, xmsgs, sleeps, bytes;
	uint64_t perf[SM_PERF_NR];
	bool perf_ok[SM_PERF_NR];
};

static void
row_of(unsigned i, struct row *r)
{
	unsigned c;

	memset(r, 0, sizeof(*r));
	r->ops = bench->done1[i] - bench->done0[i];
	r->secs = (double)(bench->s1[i].when_ns - bench->s0[i].when_ns) / 1e9;
	r->io_enters = SW_DELTA(i, io_enters);
	r->allocs = SW_DELTA(i, allocs);
	r->tasks = SW_DELTA(i, tasks_run);
	r->polls = SW_DELTA(i, polls);
	r->xmsgs = SW_DELTA(i, xmsg_sent);
	r->sleeps = SW_DELTA(i, sleeps);
	r->bytes = SW_DELTA(i, bytes_in) + SW_DELTA(i, bytes_out);
	for (c = 0; c < SM_PERF_NR; c++) {
		r->perf_ok[c] = bench->s0[i].perf_ok[c] && bench->s1[i].perf_ok[c];
		r->perf[c] = r->perf_ok[c] ? bench->s1[i].perf[c] - bench->s0[i].perf[c] : 0;
	}
}

static void
row_add(struct row *t, const struct row *r)
{
	unsigned c;

	t->ops += r->ops;
	t->secs = SM_MAX(t->secs, r->secs);
	t->io_enters += r->io_enters;
	t->allocs += r->allocs;
	t->tasks += r->tasks;
	t->polls += r->polls;
	t->xmsgs += r->xmsgs;
	t->sleeps += r->sleeps;
	t->bytes += r->bytes;
	for (c = 0; c < SM_PERF_NR; c++) {
		t->perf_ok[c] = r->perf_ok[c] && (t->ops == r->ops || t->perf_ok[c]);
		t->perf[c] += r->perf[c];
	}
}

/* Hardware counters in the table, with short column labels. */
static const struct {
	enum sm_perf_counter c;
	const char *label;
} shown_perf[] = {
	{ SM_PERF_INSTRUCTIONS, "insns/op" },	  { SM_PERF_CYCLES, "cycles/op" },
	{ SM_PERF_CACHE_MISSES, "cmiss/op" },	  { SM_PERF_BRANCH_MISSES, "bmiss/op" },
	{ SM_PERF_CONTEXT_SWITCHES, "ctxsw/op" },
};

static void
print_row(const char *label, const struct row *r)
{
	unsigned k;

	printf("%-6s %12" PRIu64 " %12.0f %9.3f %9.3f %9.3f %9.3f %9.3f", label, r->ops,
	       r->secs > 0 ? (double)r->ops / r->secs : 0, per_op(r->io_enters, r->ops),
	       per_op(r->allocs, r->ops), per_op(r->tasks, r->ops), per_op(r->polls, r->ops),
	       per_op(r->xmsgs, r->ops));
	for (k = 0; k < SM_ARRAY_SIZE(shown_perf); k++) {
		if (r->perf_ok[shown_perf[k].c])
			printf(" %10.2f", per_op(r->perf[shown_perf[k].c], r->ops));
		else
			printf(" %10s", "n/a");
	}
	printf("\n");
}

static void
print_report(void)
{
	struct row r, total;
	struct sm_perf reason_src;
	char reason[256];
	unsigned i, k;

	memset(&total, 0, sizeof(total));
	printf("\necho load: %u %s, %u connections, %u-byte payload, pipeline %u, %.1f s "
	       "measured\n",
	       bench->nshards, bench->nshards == 1 ? "shard" : "shards", bench->conns, bench->size,
	       bench->pipeline, bench->duration_s);
	printf("%-6s %12s %12s %9s %9s %9s %9s %9s", "shard", "requests", "requests/s", "enters/op",
	       "allocs/op", "tasks/op", "polls/op", "xmsgs/op");
	for (k = 0; k < SM_ARRAY_SIZE(shown_perf); k++)
		printf(" %10s", shown_perf[k].label);
	printf("\n");
	for (i = 0; i < bench->nshards; i++) {
		char label[16];

		row_of(i, &r);
		row_add(&total, &r);
		snprintf(label, sizeof(label), "%u", i);
		print_row(label, &r);
	}
	print_row("total", &total);
	printf("(a request is one echo round trip; totals sum every shard's client and server "
	       "work; enters/op counts io_uring_enter calls)\n");
	/* One line per distinct reason, naming every counter it covers. */
	for (i = 0; i < SM_PERF_NR; i++) {
		reason_src.fd[i] = -1;
		reason_src.err[i] = bench->s0[0].perf_err[i];
	}
	for (k = 0; k < SM_PERF_NR; k++) {
		char names[256];
		size_t off;

		if (total.perf_ok[k] || reason_src.err[k] < 0)
			continue;
		if (sm_perf_unavailable_reason(&reason_src, k, reason, sizeof(reason)) == NULL)
			snprintf(reason, sizeof(reason), "counter read failed");
		off = (size_t)snprintf(names, sizeof(names), "%s", sm_perf_counter_name(k));
		for (i = k + 1; i < SM_PERF_NR; i++) {
			if (total.perf_ok[i] || reason_src.err[i] != reason_src.err[k])
				continue;
			off += (size_t)snprintf(names + off, sizeof(names) - off, ", %s",
						sm_perf_counter_name(i));
			reason_src.err[i] = -1; /* reported */
		}
		printf("%s: n/a: %s\n", names, reason);
	}
}

static void
json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void
json_row(FILE *f, const struct row *r, unsigned shard_err_src)
{
	struct sm_perf reason_src;
	char reason[256], key[64];
	bool first = true;
	unsigned k, i;

	fprintf(f,
		"\"requests\": %" PRIu64 ", \"seconds\": %.6f, \"requests_per_s\": %.1f, "
		"\"io_enters_per_op\": %.6f, \"allocs_per_op\": %.6f, \"tasks_per_op\": %.6f, "
		"\"polls_per_op\": %.6f, \"xmsgs_per_op\": %.6f, \"sleeps_per_op\": %.6f, "
		"\"bytes_per_op\": %.3f",
		r->ops, r->secs, r->secs > 0 ? (double)r->ops / r->secs : 0,
		per_op(r->io_enters, r->ops), per_op(r->allocs, r->ops), per_op(r->tasks, r->ops),
		per_op(r->polls, r->ops), per_op(r->xmsgs, r->ops), per_op(r->sleeps, r->ops),
		per_op(r->bytes, r->ops));
	for (k = 0; k < SM_PERF_NR; k++) {
		snprintf(key, sizeof(key), "%s_per_op", sm_perf_counter_name(k));
		for (i = 0; key[i]; i++)
			if (key[i] == '-')
				key[i] = '_';
		if (r->perf_ok[k])
			fprintf(f, ", \"%s\": %.3f", key, per_op(r->perf[k], r->ops));
		else
			fprintf(f, ", \"%s\": null", key);
	}
	fprintf(f, ", \"unavailable\": {");
	for (i = 0; i < SM_PERF_NR; i++) {
		reason_src.fd[i] = -1;
		reason_src.err[i] = bench->s0[shard_err_src].perf_err[i];
	}
	for (k = 0; k < SM_PERF_NR; k++) {
		if (r->perf_ok[k])
			continue;
		if (sm_perf_unavailable_reason(&reason_src, k, reason, sizeof(reason)) == NULL)
			snprintf(reason, sizeof(reason), "counter read failed");
		fprintf(f, "%s\"%s\": ", first ? "" : ", ", sm_perf_counter_name(k));
		json_str(f, reason);
		first = false;
	}
	fprintf(f, "}");
}

static int
write_json(const char *path)
{
	struct row r, total;
	struct utsname uts;
	unsigned i;
	FILE *f;

	f = fopen(path, "w");
	if (f == NULL) {
		fprintf(stderr, "shardmark bench echo: cannot write %s: %s\n", path,
			strerror(errno));
		return -errno;
	}
	memset(&total, 0, sizeof(total));
	uname(&uts);
	fprintf(f,
		"{\n  \"command\": \"bench\",\n  \"load\": \"echo\",\n  \"version\": \"%s\",\n"
		"  \"network_stack\": \"%s\",\n  \"kernel\": \"%s\",\n  \"shards\": %u,\n"
		"  \"connections\": %u,\n  \"size\": %u,\n  \"pipeline\": %u,\n"
		"  \"duration_s\": %.3f,\n  \"warmup_s\": %.3f,\n  \"per_shard\": [\n",
		SM_VERSION, sm_net_driver()->name, uts.release, bench->nshards, bench->conns,
		bench->size, bench->pipeline, bench->duration_s, bench->warmup_s);
	for (i = 0; i < bench->nshards; i++) {
		row_of(i, &r);
		row_add(&total, &r);
		fprintf(f, "    {\"shard\": %u, \"cpu\": %d, ", i, bench->s0[i].cpu);
		json_row(f, &r, i);
		fprintf(f, "}%s\n", i + 1 < bench->nshards ? "," : "");
	}
	fprintf(f, "  ],\n  \"total\": {");
	json_row(f, &total, 0);
	fprintf(f, "}\n}\n");
	if (fclose(f) != 0) {
		fprintf(stderr, "shardmark bench echo: writing %s: %s\n", path, strerror(errno));
		return -EIO;
	}
	return 0;
}

int
sm_cmd_bench_echo(int argc, char **argv)
{
	static struct bench_ctx b;
	struct sm_runtime_opts ro;
	char err[1024];
	int ret;

	memset(&b, 0, sizeof(b));
	sm_config_defaults(&b.cfg);
	b.duration_s = 5;
	b.warmup_s = 1;
	b.conns = 256;
	b.size = 64;
	b.pipeline = 16;
	ret = sm_cli_parse(
		argc, argv, "bench echo",
		"Run the echo load in-process over loopback on every shard and print\n"
		"requests/s and per-request counters (io_uring_enter calls, allocations,\n"
		"tasks, and hardware counters where the machine has a PMU) per shard.",
		&b.cfg, bench_opts, SM_ARRAY_SIZE(bench_opts), &b, err, sizeof(err));
	if (ret != 0) {
		if (ret < 0)
			fprintf(stderr, "shardmark bench echo: %s\n", err);
		sm_config_free(&b.cfg);
		return ret > 0 ? SM_EXIT_OK : SM_EXIT_USAGE;
	}
	ret = sm_app_prepare(&b.cfg);
	if (ret != 0)
		goto out;
	if (b.port == 0 && sm_app_free_port(&b.port) < 0) {
		fprintf(stderr, "shardmark bench echo: no free loopback port: pass --port\n");
		ret = SM_EXIT_FAIL;
		goto out;
	}
	bench = &b;
	b.echo.max_frame = b.size;
	b.result = SM_EXIT_FAIL;
	sm_app_runtime_opts(&b.cfg, &ro);
	/* The plan is known only once the runtime counts the shards; size
	 * the per-shard arrays for the most it may start. */
	b.nshards = 0;
	b.shards = NULL;
	ro.shard_init = bench_shard_init;
	ro.shard_fini = bench_shard_fini;
	ro.arg = &b;
	{
		cpu_set_t set;
		unsigned max = b.cfg.smp;

		if (max == 0 && sched_getaffinity(0, sizeof(set), &set) == 0)
			max = (unsigned)CPU_COUNT(&set);
		if (b.cfg.cpuset != NULL && b.cfg.smp == 0) {
			uint8_t cpus[CPU_SETSIZE / 8];
			int n = sm_cpuset_parse(b.cfg.cpuset, cpus, CPU_SETSIZE);

			if (n > 0)
				max = (unsigned)n;
		}
		b.nshards = max;
	}
	b.shards = aligned_alloc(SM_CACHE_LINE, b.nshards * sizeof(*b.shards));
	if (b.shards != NULL)
		memset(b.shards, 0, b.nshards * sizeof(*b.shards));
	b.s0 = calloc(b.nshards, sizeof(*b.s0));
	b.s1 = calloc(b.nshards, sizeof(*b.s1));
	b.done0 = calloc(b.nshards, sizeof(*b.done0));
	b.done1 = calloc(b.nshards, sizeof(*b.done1));
	if (!b.shards || !b.s0 || !b.s1 || !b.done0 || !b.done1) {
		fprintf(stderr, "shardmark bench echo: out of memory\n");
		ret = SM_EXIT_FAIL;
		goto free_arrays;
	}
	printf("shardmark bench echo: echo over loopback port %u, %u connections, %u-byte payload, "
	       "pipeline %u\n",
	       b.port, b.conns, b.size, b.pipeline);
	fflush(stdout);
	ret = sm_runtime_run(&ro, err, sizeof(err));
	if (ret < 0) {
		if (strncmp(err, "shard ", 6) != 0)
			fprintf(stderr, "shardmark bench echo: %s\n", err);
		ret = SM_EXIT_FAIL;
		goto free_arrays;
	}
	ret = b.result;
	if (ret == SM_EXIT_OK) {
		print_report();
		if (b.json != NULL && write_json(b.json) < 0)
			ret = SM_EXIT_FAIL;
	}
free_arrays:
	free(b.shards);
	free(b.s0);
	free(b.s1);
	free(b.done0);
	free(b.done1);
out:
	sm_config_free(&b.cfg);
	bench = NULL;
	return ret;
}
