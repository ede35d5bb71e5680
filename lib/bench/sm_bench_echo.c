/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The echo load's engine (sm_bench_echo.h): client connections on every
 * shard, shard 0's control (connect, warm up, measure), the rows and the
 * JSON result.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "sm_bench_echo.h"

#define TICK_MS 1000
#define CONNECT_POLL_MS 50
#define SEND_BURST 64

static struct sm_bench_echo *bench;

/* ---- client connections (on every shard) ---- */

static void
send_frames(struct sm_bench_echo_conn *bc, uint64_t n)
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
	struct sm_bench_echo_conn *bc = c->ctx;
	struct sm_bench_echo_shard *bs = bc->bs;

	if (err < 0) {
		bc->c = NULL;
		if (bs->first_err == 0)
			bs->first_err = err;
		SM_WRITE_ONCE(bs->failed, bs->failed + 1);
		return;
	}
	SM_WRITE_ONCE(bs->connected, bs->connected + 1);
	send_frames(bc, bench->prm.pipeline);
}

static void
client_received(struct sm_conn *c, const struct sm_iov *iov, unsigned n)
{
	struct sm_bench_echo_conn *bc = c->ctx;
	struct sm_bench_echo_shard *bs = bc->bs;
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
	struct sm_bench_echo_conn *bc = c->ctx;

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
	struct sm_bench_echo_shard *bs = &bench->shards[sm_shard_id()];
	struct sm_connect_opts co = {
		.addr = "127.0.0.1",
		.port = (uint16_t)bench->prm.port,
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
	struct sm_bench_echo_shard *bs = &bench->shards[sm_shard_id()];
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
stop_runtime(void *arg)
{
	(void)arg;
	sm_runtime_stop();
}

/*
 * End the run: every shard closes its clients, then the runtime stops,
 * once all have (so the submission's state comes home and is freed).
 */
static void
finish(int result)
{
	bench->result = result;
	if (sm_submit_to_all(stop_clients, NULL, stop_runtime) == -ENOMEM)
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
			SM_ERR("%u of %u client connections failed: %s", failed, bench->prm.conns,
			       strerror(-err));
			finish(-EIO);
			return;
		}
		if (connected < bench->prm.conns) {
			sm_timer_arm(&bench->timer, CONNECT_POLL_MS);
			return;
		}
		fprintf(bench->prm.out, "%u connections up on %u %s; warming up for %.1f s\n",
			bench->prm.conns, bench->nshards, bench->nshards == 1 ? "shard" : "shards",
			bench->prm.warmup_s);
		fflush(bench->prm.out);
		bench->phase_start_ns = now;
		sm_timer_arm(&bench->timer, (uint64_t)(bench->prm.warmup_s * 1000));
		return;
	}
	if (!bench->measuring) {
		bench->measuring = true;
		take_snapshot(bench->s0, bench->done0);
		bench->phase_start_ns = now;
		bench->last_total = total_completed();
		sm_timer_arm(&bench->timer,
			     SM_MIN((uint64_t)TICK_MS, (uint64_t)(bench->prm.duration_s * 1000)));
		return;
	}
	total = total_completed();
	bench->ticks++;
	if ((double)(now - bench->phase_start_ns) / 1e9 + 0.0005 >= bench->prm.duration_s) {
		take_snapshot(bench->s1, bench->done1);
		fprintf(bench->prm.out, "%7.1fs %12.0f requests/s\n",
			(double)(now - bench->phase_start_ns) / 1e9,
			(double)(total - bench->last_total) * 1e9 /
				(double)(now - bench->phase_start_ns -
					 (uint64_t)(bench->ticks - 1) * TICK_MS * 1000000ull));
		fflush(bench->prm.out);
		finish(0);
		return;
	}
	fprintf(bench->prm.out, "%7.1fs %12" PRIu64 " requests/s\n",
		(double)(now - bench->phase_start_ns) / 1e9,
		(total - bench->last_total) * 1000 / TICK_MS);
	fflush(bench->prm.out);
	bench->last_total = total;
	{
		double left_ms = bench->prm.duration_s * 1000 - (double)bench->ticks * TICK_MS;

		sm_timer_arm(&bench->timer,
			     (uint64_t)(left_ms < TICK_MS ? (left_ms > 1 ? left_ms : 1) : TICK_MS));
	}
}

/* @delta per op over @ops, 0 when no op was done. */
static double
per_op(uint64_t delta, uint64_t ops)
{
	return ops ? (double)delta / (double)ops : 0;
}

#define SW_DELTA(i, f) (b->s1[i].sw.f - b->s0[i].sw.f)

void
sm_bench_echo_row(const struct sm_bench_echo *b, unsigned i, struct sm_bench_echo_row *r)
{
	unsigned c;

	memset(r, 0, sizeof(*r));
	r->ops = b->done1[i] - b->done0[i];
	r->secs = (double)(b->s1[i].when_ns - b->s0[i].when_ns) / 1e9;
	r->io_enters = SW_DELTA(i, io_enters);
	r->allocs = SW_DELTA(i, allocs);
	r->tasks = SW_DELTA(i, tasks_run);
	r->polls = SW_DELTA(i, polls);
	r->xmsgs = SW_DELTA(i, xmsg_sent);
	r->sleeps = SW_DELTA(i, sleeps);
	r->bytes = SW_DELTA(i, bytes_in) + SW_DELTA(i, bytes_out);
	for (c = 0; c < SM_PERF_NR; c++) {
		r->perf_ok[c] = b->s0[i].perf_ok[c] && b->s1[i].perf_ok[c];
		r->perf[c] = r->perf_ok[c] ? b->s1[i].perf[c] - b->s0[i].perf[c] : 0;
	}
}

void
sm_bench_echo_row_add(struct sm_bench_echo_row *t, const struct sm_bench_echo_row *r)
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
json_row(FILE *f, const struct sm_bench_echo *b, const struct sm_bench_echo_row *r,
	 unsigned shard_err_src)
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
		reason_src.err[i] = b->s0[shard_err_src].perf_err[i];
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

int
sm_bench_echo_write_json(const struct sm_bench_echo *b, const char *path, const char *stack,
			 char *err, size_t errlen)
{
	struct sm_bench_echo_row r, total;
	struct utsname uts;
	unsigned i;
	FILE *f;

	f = fopen(path, "w");
	if (f == NULL) {
		int ret = -errno;

		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return ret;
	}
	memset(&total, 0, sizeof(total));
	uname(&uts);
	fprintf(f,
		"{\n  \"command\": \"bench\",\n  \"load\": \"echo\",\n  \"version\": \"%s\",\n"
		"  \"network_stack\": \"%s\",\n  \"kernel\": \"%s\",\n  \"shards\": %u,\n"
		"  \"connections\": %u,\n  \"size\": %u,\n  \"pipeline\": %u,\n"
		"  \"duration_s\": %.3f,\n  \"warmup_s\": %.3f,\n  \"per_shard\": [\n",
		SM_VERSION, stack, uts.release, b->nshards, b->prm.conns, b->prm.size,
		b->prm.pipeline, b->prm.duration_s, b->prm.warmup_s);
	for (i = 0; i < b->nshards; i++) {
		sm_bench_echo_row(b, i, &r);
		sm_bench_echo_row_add(&total, &r);
		fprintf(f, "    {\"shard\": %u, \"cpu\": %d, ", i, b->s0[i].cpu);
		json_row(f, b, &r, i);
		fprintf(f, "}%s\n", i + 1 < b->nshards ? "," : "");
	}
	fprintf(f, "  ],\n  \"total\": {");
	json_row(f, b, &total, 0);
	fprintf(f, "}\n}\n");
	if (fclose(f) != 0) {
		snprintf(err, errlen, "writing %s: %s", path, strerror(errno));
		return -EIO;
	}
	return 0;
}


/* ---- shards ---- */

int
sm_bench_echo_shard_init(struct sm_bench_echo *b, unsigned shard)
{
	struct sm_bench_echo_shard *bs = &b->shards[shard];
	uint32_t be;
	unsigned i;

	if (sm_shard_count() != b->nshards) {
		SM_ERR("bench planned %u shards but the runtime started %u", b->nshards,
		       sm_shard_count());
		return -EINVAL;
	}
	bs->nconns = b->prm.conns / b->nshards + (shard < b->prm.conns % b->nshards ? 1 : 0);
	bs->conns = sm_calloc(bs->nconns ? bs->nconns : 1, sizeof(*bs->conns));
	bs->frame = sm_sendbuf_new((size_t)b->prm.size + 4);
	if (bs->conns == NULL || bs->frame == NULL)
		return -ENOMEM;
	be = htonl(b->prm.size);
	memcpy(bs->frame->data, &be, 4);
	for (i = 0; i < b->prm.size; i++)
		bs->frame->data[4 + i] = (char)('a' + i % 26);
	bs->frame->len = (size_t)b->prm.size + 4;
	return 0;
}

void
sm_bench_echo_start(struct sm_bench_echo *b)
{
	sm_submit_to_all(start_clients, NULL, NULL);
	sm_timer_init(&b->timer, control_tick, NULL);
	sm_timer_arm(&b->timer, CONNECT_POLL_MS);
}

void
sm_bench_echo_shard_fini(struct sm_bench_echo *b, unsigned shard)
{
	struct sm_bench_echo_shard *bs = &b->shards[shard];

	if (bs->frame != NULL)
		sm_bufseg_put(&bs->frame->seg);
	bs->frame = NULL;
}

void
sm_bench_echo_shard_release(struct sm_bench_echo *b, unsigned shard)
{
	struct sm_bench_echo_shard *bs = &b->shards[shard];

	sm_free(bs->conns);
	bs->conns = NULL;
}

int
sm_bench_echo_init(struct sm_bench_echo *b, const struct sm_bench_echo_params *prm,
		   unsigned max_shards)
{
	memset(b, 0, sizeof(*b));
	bench = b;
	b->prm = *prm;
	b->result = -EIO;
	b->nshards = max_shards;
	/* Before the shards start: the process heap, not a shard's. */
	b->shards = aligned_alloc(SM_CACHE_LINE, b->nshards * sizeof(*b->shards));
	if (b->shards != NULL)
		memset(b->shards, 0, b->nshards * sizeof(*b->shards));
	b->s0 = calloc(b->nshards, sizeof(*b->s0));
	b->s1 = calloc(b->nshards, sizeof(*b->s1));
	b->done0 = calloc(b->nshards, sizeof(*b->done0));
	b->done1 = calloc(b->nshards, sizeof(*b->done1));
	return b->shards && b->s0 && b->s1 && b->done0 && b->done1 ? 0 : -ENOMEM;
}

void
sm_bench_echo_free(struct sm_bench_echo *b)
{
	free(b->shards);
	free(b->s0);
	free(b->s1);
	free(b->done0);
	free(b->done1);
	memset(b, 0, sizeof(*b));
	if (bench == b)
		bench = NULL;
}
