/* SPDX-License-Identifier: BSD-3-Clause */
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sm_common.h"
#include "sm_stats.h"

/*
 * A __thread initializer cannot take the address of another __thread
 * variable, so sm_tls_stats starts NULL and threads that are not shards
 * attach their private block on first use.
 */
__thread struct sm_sw_stats *sm_tls_stats;
static __thread struct sm_sw_stats sm_fallback_stats;

struct sm_sw_stats *
sm_stats_fallback_attach(void)
{
	if (sm_tls_stats == NULL)
		sm_tls_stats = &sm_fallback_stats;
	return sm_tls_stats;
}

void
sm_sw_stats_read(const struct sm_sw_stats *src, struct sm_sw_stats *dst)
{
	memset(dst, 0, sizeof(*dst));
	dst->tasks_run = SM_READ_ONCE(src->tasks_run);
	dst->polls = SM_READ_ONCE(src->polls);
	dst->allocs = SM_READ_ONCE(src->allocs);
	dst->frees = SM_READ_ONCE(src->frees);
	dst->bytes_allocated = SM_READ_ONCE(src->bytes_allocated);
	dst->mem_in_use = SM_READ_ONCE(src->mem_in_use);
	dst->xmsg_sent = SM_READ_ONCE(src->xmsg_sent);
	dst->xmsg_recv = SM_READ_ONCE(src->xmsg_recv);
	dst->bytes_in = SM_READ_ONCE(src->bytes_in);
	dst->bytes_in_copied = SM_READ_ONCE(src->bytes_in_copied);
	dst->bytes_out = SM_READ_ONCE(src->bytes_out);
	dst->conns_opened = SM_READ_ONCE(src->conns_opened);
	dst->conns_closed = SM_READ_ONCE(src->conns_closed);
	dst->io_enters = SM_READ_ONCE(src->io_enters);
	dst->sleeps = SM_READ_ONCE(src->sleeps);
	dst->wakeups_sent = SM_READ_ONCE(src->wakeups_sent);
	dst->timers_fired = SM_READ_ONCE(src->timers_fired);
	dst->requests = SM_READ_ONCE(src->requests);
	dst->hops = SM_READ_ONCE(src->hops);
	dst->requests_forwarded = SM_READ_ONCE(src->requests_forwarded);
	dst->rx_pauses = SM_READ_ONCE(src->rx_pauses);
	dst->conns_timed_out = SM_READ_ONCE(src->conns_timed_out);
	dst->requests_timed_out = SM_READ_ONCE(src->requests_timed_out);
	dst->accept_errors = SM_READ_ONCE(src->accept_errors);
	dst->writes_refused = SM_READ_ONCE(src->writes_refused);
	dst->mem_budget = SM_READ_ONCE(src->mem_budget);
	dst->busy_ns = SM_READ_ONCE(src->busy_ns);
	dst->idle_ns = SM_READ_ONCE(src->idle_ns);
	dst->sleep_ns = SM_READ_ONCE(src->sleep_ns);
	dst->stalls = SM_READ_ONCE(src->stalls);
	for (unsigned b = 0; b < SM_SCHED_LAT_BUCKETS; b++)
		dst->sched_lat[b] = SM_READ_ONCE(src->sched_lat[b]);
	dst->sched_lat_sum_ns = SM_READ_ONCE(src->sched_lat_sum_ns);
}

void
sm_reactor_view(const struct sm_sw_stats *a, const struct sm_sw_stats *b,
		struct sm_reactor_view *out)
{
	struct sm_sw_stats d;
	uint64_t busy = b->busy_ns - a->busy_ns, idle = b->idle_ns - a->idle_ns,
		 sleep = b->sleep_ns - a->sleep_ns, all = busy + idle + sleep;
	unsigned k;

	memset(&d, 0, sizeof(d));
	for (k = 0; k < SM_SCHED_LAT_BUCKETS; k++)
		d.sched_lat[k] = b->sched_lat[k] - a->sched_lat[k];
	out->busy_share = all ? (double)busy / (double)all : 0.0;
	out->sleep_share = all ? (double)sleep / (double)all : 0.0;
	out->stalls = b->stalls - a->stalls;
	out->sched_p99_us = sm_sched_lat_quantile_us(&d, 0.99);
}

uint64_t
sm_sched_lat_quantile_us(const struct sm_sw_stats *st, double q)
{
	uint64_t total = 0, seen = 0, rank;
	unsigned b;

	for (b = 0; b < SM_SCHED_LAT_BUCKETS; b++)
		total += st->sched_lat[b];
	if (total == 0)
		return 0;
	rank = (uint64_t)(q * (double)total + 0.5);
	if (rank < 1)
		rank = 1;
	for (b = 0; b < SM_SCHED_LAT_BUCKETS; b++) {
		seen += st->sched_lat[b];
		if (seen >= rank)
			break;
	}
	return b >= SM_SCHED_LAT_BUCKETS - 1 ? UINT64_MAX : 1ull << b;
}

/* The reason text of a snapshot's unavailable counter, via the perf module. */
static const char *
sm_snap_perf_reason(const struct sm_shard_snapshot *s, enum sm_perf_counter c, char *buf,
		    size_t len)
{
	struct sm_perf tmp;
	unsigned i;

	for (i = 0; i < SM_PERF_NR; i++) {
		tmp.fd[i] = -1;
		tmp.err[i] = 0;
	}
	tmp.err[c] = s->perf_err[c];
	return sm_perf_unavailable_reason(&tmp, c, buf, len);
}

/* Connections can be opened on one shard's count and closed on another's. */
static int64_t
sm_snap_conns_active(const struct sm_shard_snapshot *s)
{
	return (int64_t)(s->sw.conns_opened - s->sw.conns_closed);
}

/*
 * The table. Each column formats its cell into a small buffer; a first pass
 * measures the widest cell so the columns line up for any magnitude.
 */
#define SM_CELL_MAX 32

enum sm_col_kind {
	SM_COL_U64,
	SM_COL_I64,
	SM_COL_SHARD,
	SM_COL_CPU,
	SM_COL_CONNS,
	SM_COL_PERF,
	SM_COL_PERF_MS,
	SM_COL_SHARE,	  /* a reactor time field as a share of busy + idle + sleep */
	SM_COL_SCHED_P99, /* the 99th percentile scheduling latency */
};

struct sm_col {
	const char *title;
	enum sm_col_kind kind;
	size_t off;		   /* offset in struct sm_sw_stats for U64/I64 */
	enum sm_perf_counter perf; /* for PERF/PERF_MS */
};

/* clang-format off */
#define SM_COL_SW(t, f) { t, SM_COL_U64, offsetof(struct sm_sw_stats, f), SM_PERF_NR }
#define SM_COL_P(t, kind, c) { t, kind, 0, c }
/* clang-format on */

static const struct sm_col sm_table_cols[] = {
	{ "shard", SM_COL_SHARD, 0, SM_PERF_NR },
	{ "cpu", SM_COL_CPU, 0, SM_PERF_NR },
	SM_COL_SW("tasks", tasks_run),
	SM_COL_SW("polls", polls),
	SM_COL_SW("allocs", allocs),
	{ "mem_in_use", SM_COL_I64, offsetof(struct sm_sw_stats, mem_in_use), SM_PERF_NR },
	SM_COL_SW("xmsg_sent", xmsg_sent),
	SM_COL_SW("xmsg_recv", xmsg_recv),
	{ "conns", SM_COL_CONNS, 0, SM_PERF_NR },
	SM_COL_SW("bytes_in", bytes_in),
	SM_COL_SW("bytes_out", bytes_out),
	SM_COL_SW("io_enters", io_enters),
	SM_COL_SW("requests", requests),
	SM_COL_SW("hops", hops),
	{ "busy%", SM_COL_SHARE, offsetof(struct sm_sw_stats, busy_ns), SM_PERF_NR },
	{ "sleep%", SM_COL_SHARE, offsetof(struct sm_sw_stats, sleep_ns), SM_PERF_NR },
	SM_COL_SW("stalls", stalls),
	{ "sched_p99(us)", SM_COL_SCHED_P99, 0, SM_PERF_NR },
	SM_COL_P("instructions", SM_COL_PERF, SM_PERF_INSTRUCTIONS),
	SM_COL_P("cycles", SM_COL_PERF, SM_PERF_CYCLES),
	SM_COL_P("cache-misses", SM_COL_PERF, SM_PERF_CACHE_MISSES),
	SM_COL_P("branch-misses", SM_COL_PERF, SM_PERF_BRANCH_MISSES),
	SM_COL_P("task-clock(ms)", SM_COL_PERF_MS, SM_PERF_TASK_CLOCK),
	SM_COL_P("ctx-switches", SM_COL_PERF, SM_PERF_CONTEXT_SWITCHES),
	SM_COL_P("page-faults", SM_COL_PERF, SM_PERF_PAGE_FAULTS),
};

static void
sm_table_cell(const struct sm_col *col, const struct sm_shard_snapshot *s, char *buf)
{
	const char *sw = (const char *)&s->sw;
	uint64_t u;
	int64_t i;

	switch (col->kind) {
	case SM_COL_SHARD:
		snprintf(buf, SM_CELL_MAX, "%u", s->shard);
		break;
	case SM_COL_CPU:
		if (s->cpu < 0)
			snprintf(buf, SM_CELL_MAX, "-");
		else
			snprintf(buf, SM_CELL_MAX, "%d", s->cpu);
		break;
	case SM_COL_U64:
		memcpy(&u, sw + col->off, sizeof(u));
		snprintf(buf, SM_CELL_MAX, "%" PRIu64, u);
		break;
	case SM_COL_I64:
		memcpy(&i, sw + col->off, sizeof(i));
		snprintf(buf, SM_CELL_MAX, "%" PRId64, i);
		break;
	case SM_COL_CONNS:
		snprintf(buf, SM_CELL_MAX, "%" PRId64, sm_snap_conns_active(s));
		break;
	case SM_COL_PERF:
		if (!s->perf_ok[col->perf])
			snprintf(buf, SM_CELL_MAX, "n/a");
		else
			snprintf(buf, SM_CELL_MAX, "%" PRIu64, s->perf[col->perf]);
		break;
	case SM_COL_PERF_MS:
		if (!s->perf_ok[col->perf])
			snprintf(buf, SM_CELL_MAX, "n/a");
		else
			snprintf(buf, SM_CELL_MAX, "%.1f", (double)s->perf[col->perf] / 1e6);
		break;
	case SM_COL_SHARE: {
		uint64_t all = s->sw.busy_ns + s->sw.idle_ns + s->sw.sleep_ns;

		memcpy(&u, sw + col->off, sizeof(u));
		snprintf(buf, SM_CELL_MAX, "%.1f", all ? 100.0 * (double)u / (double)all : 0.0);
		break;
	}
	case SM_COL_SCHED_P99:
		u = sm_sched_lat_quantile_us(&s->sw, 0.99);
		if (u == 0)
			snprintf(buf, SM_CELL_MAX, "-");
		else if (u == UINT64_MAX)
			snprintf(buf, SM_CELL_MAX, ">%llu", 1ull << (SM_SCHED_LAT_BUCKETS - 2));
		else
			snprintf(buf, SM_CELL_MAX, "<=%" PRIu64, u);
		break;
	}
}

/*
 * The reasons of the table's n/a cells, one line for each reason and set of
 * shards, naming every counter it covers: "  instructions, cycles: n/a on
 * shard(s) 0,1 \u2014 <reason>" (a VM without a PMU gets one line, not one
 * per hardware counter).
 */
#define SM_NOTES_MAX 32

struct sm_note {
	char reason[256];
	char shards[256];
	char counters[256];
};

static void
sm_table_perf_notes(FILE *f, const struct sm_shard_snapshot *snap, unsigned n)
{
	static __thread struct sm_note notes[SM_NOTES_MAX];
	char reason[256], other[256], shards[256];
	unsigned nnotes = 0, k, i, j, m;
	size_t off;

	for (k = 0; k < SM_ARRAY_SIZE(sm_table_cols); k++) {
		enum sm_perf_counter c = sm_table_cols[k].perf;

		if (sm_table_cols[k].kind != SM_COL_PERF && sm_table_cols[k].kind != SM_COL_PERF_MS)
			continue;
		for (i = 0; i < n; i++) {
			bool seen = false;

			if (snap[i].perf_ok[c])
				continue;
			sm_snap_perf_reason(&snap[i], c, reason, sizeof(reason));
			/* Shards sharing a reason were listed with the first of them. */
			for (j = 0; j < i && !seen; j++)
				seen = !snap[j].perf_ok[c] &&
				       strcmp(sm_snap_perf_reason(&snap[j], c, other, sizeof(other)),
					      reason) == 0;
			if (seen)
				continue;
			off = (size_t)snprintf(shards, sizeof(shards), "%u", snap[i].shard);
			for (j = i + 1; j < n && off < sizeof(shards); j++)
				if (!snap[j].perf_ok[c] &&
				    strcmp(sm_snap_perf_reason(&snap[j], c, other, sizeof(other)),
					   reason) == 0)
					off += (size_t)snprintf(shards + off, sizeof(shards) - off,
								",%u", snap[j].shard);
			for (m = 0; m < nnotes; m++)
				if (strcmp(notes[m].reason, reason) == 0 &&
				    strcmp(notes[m].shards, shards) == 0)
					break;
			if (m == nnotes && nnotes == SM_NOTES_MAX) {
				fprintf(f, "  %s: n/a on shard(s) %s \u2014 %s\n",
					sm_perf_counter_name(c), shards, reason);
				continue;
			}
			if (m == nnotes) {
				nnotes++;
				snprintf(notes[m].reason, sizeof(notes[m].reason), "%s", reason);
				snprintf(notes[m].shards, sizeof(notes[m].shards), "%s", shards);
				notes[m].counters[0] = '\0';
			}
			off = strlen(notes[m].counters);
			snprintf(notes[m].counters + off, sizeof(notes[m].counters) - off, "%s%s",
				 off ? ", " : "", sm_perf_counter_name(c));
		}
	}
	for (m = 0; m < nnotes; m++)
		fprintf(f, "  %s: n/a on shard(s) %s \u2014 %s\n", notes[m].counters, notes[m].shards,
			notes[m].reason);
}

void
sm_stats_print_table(FILE *f, const struct sm_shard_snapshot *snap, unsigned n)
{
	int width[SM_ARRAY_SIZE(sm_table_cols)];
	char cell[SM_CELL_MAX];
	unsigned i, k;
	size_t l;

	for (k = 0; k < SM_ARRAY_SIZE(sm_table_cols); k++) {
		width[k] = (int)strlen(sm_table_cols[k].title);
		for (i = 0; i < n; i++) {
			sm_table_cell(&sm_table_cols[k], &snap[i], cell);
			l = strlen(cell);
			if ((int)l > width[k])
				width[k] = (int)l;
		}
	}

	for (k = 0; k < SM_ARRAY_SIZE(sm_table_cols); k++)
		fprintf(f, "%s%*s", k == 0 ? "" : "  ", width[k], sm_table_cols[k].title);
	fputc('\n', f);
	for (i = 0; i < n; i++) {
		for (k = 0; k < SM_ARRAY_SIZE(sm_table_cols); k++) {
			sm_table_cell(&sm_table_cols[k], &snap[i], cell);
			fprintf(f, "%s%*s", k == 0 ? "" : "  ", width[k], cell);
		}
		fputc('\n', f);
	}

	sm_table_perf_notes(f, snap, n);
}

/*
 * Prometheus text exposition. The writer keeps counting past the end of the
 * buffer so the caller learns the size it needs, as with snprintf.
 */
struct sm_out {
	char *buf;
	size_t len;
	size_t pos;
};

static void
sm_out_printf(struct sm_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
sm_out_printf(struct sm_out *o, const char *fmt, ...)
{
	va_list ap;
	char *dst = NULL;
	size_t room = 0;
	int n;

	if (o->pos < o->len) {
		dst = o->buf + o->pos;
		room = o->len - o->pos;
	}
	va_start(ap, fmt);
	n = vsnprintf(dst, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->pos += (size_t)n;
}

struct sm_prom_metric {
	const char *name;
	const char *type;
	const char *help;
	size_t off; /* offset in struct sm_sw_stats; SIZE_MAX for conns_active */
	bool ns_to_s; /* the field counts nanoseconds: print seconds */
};

/* clang-format off */
#define SM_PROM_C(n, f, h) { "shardmark_" n, "counter", h, offsetof(struct sm_sw_stats, f), false }
/* a counter kept in nanoseconds, exposed in seconds */
#define SM_PROM_S(n, f, h) { "shardmark_" n, "counter", h, offsetof(struct sm_sw_stats, f), true }
/* clang-format on */

static const struct sm_prom_metric sm_prom_metrics[] = {
	SM_PROM_C("tasks_run_total", tasks_run, "Tasks executed by the reactor."),
	SM_PROM_C("polls_total", polls, "Reactor poll rounds."),
	SM_PROM_C("allocs_total", allocs, "Allocations, pool slab growth included."),
	SM_PROM_C("frees_total", frees, "Frees counted on the freeing shard."),
	SM_PROM_C("bytes_allocated_total", bytes_allocated, "Bytes handed out by the allocator."),
	{ "shardmark_mem_in_use_bytes", "gauge",
	  "Bytes allocated minus freed on this shard (may be negative when shards free each "
	  "other's memory).",
	  offsetof(struct sm_sw_stats, mem_in_use) },
	SM_PROM_C("xmsg_sent_total", xmsg_sent, "Cross-shard messages sent."),
	SM_PROM_C("xmsg_recv_total", xmsg_recv, "Cross-shard messages received."),
	SM_PROM_C("bytes_in_total", bytes_in, "Network payload bytes received."),
	SM_PROM_C("bytes_in_copied_total", bytes_in_copied,
		  "Received bytes the network driver copied before protocols saw them (DPDK: data "
		  "the TCP stack reordered; io_uring: 0)."),
	SM_PROM_C("bytes_out_total", bytes_out, "Network payload bytes sent."),
	SM_PROM_C("connections_opened_total", conns_opened, "Connections opened."),
	SM_PROM_C("connections_closed_total", conns_closed, "Connections closed."),
	{ "shardmark_connections_active", "gauge", "Connections open now (opened - closed).",
	  SIZE_MAX },
	SM_PROM_C("io_enters_total", io_enters, "io_uring_enter(2) calls or driver equivalent."),
	SM_PROM_C("sleeps_total", sleeps, "Times the reactor blocked."),
	SM_PROM_C("wakeups_sent_total", wakeups_sent, "Wakeups sent to sleeping shards."),
	SM_PROM_C("timers_fired_total", timers_fired, "Timers fired."),
	SM_PROM_C("requests_total", requests, "Protocol requests completed."),
	SM_PROM_C("hops_total", hops, "Store requests forwarded to the owning shard."),
	SM_PROM_C("requests_forwarded_total", requests_forwarded,
		  "CQL requests forwarded to the appliance group member owning their partition."),
	{ "shardmark_mem_budget_bytes", "gauge",
	  "This shard's memory budget (memory / shards); 0 when no budget is enforced.",
	  offsetof(struct sm_sw_stats, mem_budget) },
	SM_PROM_C("writes_refused_total", writes_refused,
		  "Writes refused because the shard's memory budget was full."),
	SM_PROM_C("rx_pauses_total", rx_pauses,
		  "Times a connection stopped being read because its unsent replies passed "
		  "max_unsent_bytes."),
	SM_PROM_C("connections_timed_out_total", conns_timed_out,
		  "Connections closed by an idle, header or frame timeout."),
	SM_PROM_C("requests_timed_out_total", requests_timed_out,
		  "Requests answered with a timeout error (request_timeout_in_ms and friends)."),
	SM_PROM_C("accept_errors_total", accept_errors,
		  "accept(2) failures (EMFILE, ENFILE, ENOMEM); the listener backs off."),
	SM_PROM_S("reactor_busy_seconds_total", busy_ns,
		  "Reactor time in loop rounds that found work (the reactor's own clock)."),
	SM_PROM_S("reactor_idle_poll_seconds_total", idle_ns,
		  "Reactor time in rounds that found nothing and spun (idle polling, CPU spent on "
		  "nothing)."),
	SM_PROM_S("reactor_sleep_seconds_total", sleep_ns,
		  "Reactor time blocked in its waiter (no CPU)."),
	SM_PROM_C("reactor_stalls_total", stalls,
		  "Loop rounds longer than blocked_reactor_notify_ms (each logged with a backtrace, "
		  "rate-limited)."),
};

static void
sm_prom_family(struct sm_out *o, const char *name, const char *type, const char *help)
{
	sm_out_printf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Label values escape backslash, quote and newline (exposition format rules). */
static void
sm_prom_escaped(struct sm_out *o, const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s == '\\')
			sm_out_printf(o, "\\\\");
		else if (*s == '"')
			sm_out_printf(o, "\\\"");
		else if (*s == '\n')
			sm_out_printf(o, "\\n");
		else
			sm_out_printf(o, "%c", *s);
	}
}

/* The scheduling-latency histogram, per shard, in seconds as Prometheus wants. */
static void
sm_prom_sched_lat(struct sm_out *o, const struct sm_shard_snapshot *snap, unsigned n)
{
	static const char name[] = "shardmark_reactor_scheduling_latency_seconds";
	uint64_t cum, us;
	unsigned i, b;

	sm_prom_family(o, name, "histogram",
		       "How long the oldest ready task waited before the reactor ran it, once per "
		       "task run.");
	for (i = 0; i < n; i++) {
		const struct sm_sw_stats *st = &snap[i].sw;

		cum = 0;
		for (b = 0; b + 1 < SM_SCHED_LAT_BUCKETS; b++) {
			cum += st->sched_lat[b];
			us = 1ull << b;
			sm_out_printf(o, "%s_bucket{shard=\"%u\",le=\"%" PRIu64 ".%06" PRIu64 "\"} %" PRIu64 "\n",
				      name, snap[i].shard, us / 1000000, us % 1000000, cum);
		}
		cum += st->sched_lat[SM_SCHED_LAT_BUCKETS - 1];
		sm_out_printf(o, "%s_bucket{shard=\"%u\",le=\"+Inf\"} %" PRIu64 "\n", name,
			      snap[i].shard, cum);
		sm_out_printf(o, "%s_sum{shard=\"%u\"} %" PRIu64 ".%09" PRIu64 "\n", name,
			      snap[i].shard, st->sched_lat_sum_ns / 1000000000,
			      st->sched_lat_sum_ns % 1000000000);
		sm_out_printf(o, "%s_count{shard=\"%u\"} %" PRIu64 "\n", name, snap[i].shard, cum);
	}
}

static void
sm_prom_perf(struct sm_out *o, const struct sm_shard_snapshot *snap, unsigned n)
{
	char name[64], reason[256];
	const char *cname;
	unsigned c, i, k;
	bool any;

	for (c = 0; c < SM_PERF_NR; c++) {
		any = false;
		for (i = 0; i < n; i++)
			any = any || snap[i].perf_ok[c];
		if (!any)
			continue;
		cname = sm_perf_counter_name(c);
		snprintf(name, sizeof(name), "shardmark_perf_%s_total", cname);
		for (k = 0; name[k] != '\0'; k++) {
			if (name[k] == '-')
				name[k] = '_';
		}
		sm_out_printf(o, "# HELP %s perf event %s%s, user space.\n# TYPE %s counter\n",
			      name, cname, c == SM_PERF_TASK_CLOCK ? " in nanoseconds" : "", name);
		for (i = 0; i < n; i++) {
			if (snap[i].perf_ok[c])
				sm_out_printf(o, "%s{shard=\"%u\"} %" PRIu64 "\n", name,
					      snap[i].shard, snap[i].perf[c]);
		}
	}

	sm_prom_family(o, "shardmark_perf_available", "gauge",
		       "1 when the perf counter could be read on the shard, 0 when unavailable.");
	for (i = 0; i < n; i++) {
		for (c = 0; c < SM_PERF_NR; c++) {
			cname = sm_perf_counter_name(c);
			if (!snap[i].perf_ok[c]) {
				sm_snap_perf_reason(&snap[i], c, reason, sizeof(reason));
				sm_out_printf(o,
					      "# shardmark_perf_unavailable shard=%u counter=%s "
					      "reason=\"",
					      snap[i].shard, cname);
				sm_prom_escaped(o, reason);
				sm_out_printf(o, "\"\n");
			}
			sm_out_printf(o,
				      "shardmark_perf_available{shard=\"%u\",counter=\"%s\"} %d\n",
				      snap[i].shard, cname, snap[i].perf_ok[c] ? 1 : 0);
		}
	}
}

/*
 * ScyllaDB's names for the same counters (Seastar's reactor and memory
 * groups, reactor.cc register_metrics), beside shardmark's, so that
 * scylla-monitoring's dashboards find the reactor and memory panels' data:
 * scylla_reactor_utilization and friends, with the shard label.
 */
struct util_sample {
	uint64_t when_ns, busy_ns, all_ns;
};

static struct {
	pthread_mutex_t lock;
	struct util_sample prev[SM_MAX_SHARDS], cur[SM_MAX_SHARDS];
} util = { .lock = PTHREAD_MUTEX_INITIALIZER };

/*
 * The busy share of the last second or more (Seastar's utilization is its
 * reactor's load over a recent window): samples move at most once a second,
 * so the two formatting passes of one scrape, and scrapes close together,
 * read the same window.
 */
static double
utilization(const struct sm_shard_snapshot *s)
{
	unsigned i = s->shard % SM_MAX_SHARDS;
	struct util_sample now = {
		.when_ns = s->when_ns,
		.busy_ns = s->sw.busy_ns,
		.all_ns = s->sw.busy_ns + s->sw.idle_ns + s->sw.sleep_ns,
	};
	double u;

	pthread_mutex_lock(&util.lock);
	if (now.when_ns - util.cur[i].when_ns >= 1000000000ull || now.all_ns < util.cur[i].all_ns) {
		util.prev[i] = now.all_ns < util.cur[i].all_ns ? (struct util_sample){ 0 } : util.cur[i];
		util.cur[i] = now;
	}
	u = now.all_ns > util.prev[i].all_ns
		    ? 100.0 * (double)(now.busy_ns - util.prev[i].busy_ns) /
			      (double)(now.all_ns - util.prev[i].all_ns)
		    : 0.0;
	pthread_mutex_unlock(&util.lock);
	return u;
}

static void
sm_prom_scylla(struct sm_out *o, const struct sm_shard_snapshot *snap, unsigned n)
{
	static const struct {
		const char *name, *type, *help;
	} fam[] = {
		{ "scylla_reactor_utilization", "gauge", "CPU utilization" },
		{ "scylla_reactor_tasks_processed", "counter", "Total tasks processed" },
		{ "scylla_reactor_polls", "counter", "Number of times pollers were executed" },
		{ "scylla_reactor_cpu_busy_ms", "counter", "Total cpu busy time in milliseconds" },
		{ "scylla_reactor_sleep_time_ms_total", "counter",
		  "Total reactor sleep time (wall clock)" },
		{ "scylla_reactor_awake_time_ms_total", "counter",
		  "Total reactor awake time (wall_clock)" },
		{ "scylla_memory_malloc_operations", "counter", "Total number of malloc operations" },
		{ "scylla_memory_free_operations", "counter", "Total number of free operations" },
		{ "scylla_memory_allocated_memory", "gauge", "Allocated memory size in bytes" },
		{ "scylla_memory_total_memory", "gauge", "Total memory size in bytes" },
		{ "scylla_memory_free_memory", "gauge", "Free memory size in bytes" },
	};
	unsigned f, i;

	for (f = 0; f < SM_ARRAY_SIZE(fam); f++) {
		sm_prom_family(o, fam[f].name, fam[f].type, fam[f].help);
		for (i = 0; i < n; i++) {
			const struct sm_sw_stats *st = &snap[i].sw;
			int64_t used = st->mem_in_use > 0 ? st->mem_in_use : 0;
			double v;

			switch (f) {
			case 0:
				v = utilization(&snap[i]);
				break;
			case 1:
				v = (double)st->tasks_run;
				break;
			case 2:
				v = (double)st->polls;
				break;
			case 3:
				v = (double)(st->busy_ns / 1000000);
				break;
			case 4:
				v = (double)(st->sleep_ns / 1000000);
				break;
			case 5:
				v = (double)((st->busy_ns + st->idle_ns) / 1000000);
				break;
			case 6:
				v = (double)st->allocs;
				break;
			case 7:
				v = (double)st->frees;
				break;
			case 8:
				v = (double)used;
				break;
			case 9: /* no budget: what is in use is all there is to say */
				v = (double)(st->mem_budget > 0 ? st->mem_budget : used);
				break;
			default:
				v = (double)(st->mem_budget > used ? st->mem_budget - used : 0);
				break;
			}
			sm_out_printf(o, "%s{shard=\"%u\"} %.17g\n", fam[f].name, snap[i].shard, v);
		}
	}
}

size_t
sm_stats_format_prometheus(char *buf, size_t len, const struct sm_shard_snapshot *snap, unsigned n)
{
	struct sm_out o = { buf, len, 0 };
	const struct sm_prom_metric *m;
	unsigned i, k;
	uint64_t u;
	int64_t v;

	if (buf != NULL && len > 0)
		buf[0] = '\0';
	for (k = 0; k < SM_ARRAY_SIZE(sm_prom_metrics); k++) {
		m = &sm_prom_metrics[k];
		sm_prom_family(&o, m->name, m->type, m->help);
		for (i = 0; i < n; i++) {
			if (m->off == SIZE_MAX) {
				v = sm_snap_conns_active(&snap[i]);
			} else if (m->off == offsetof(struct sm_sw_stats, mem_in_use)) {
				v = snap[i].sw.mem_in_use;
			} else if (m->off == offsetof(struct sm_sw_stats, mem_budget)) {
				v = snap[i].sw.mem_budget;
			} else {
				memcpy(&u, (const char *)&snap[i].sw + m->off, sizeof(u));
				if (m->ns_to_s)
					sm_out_printf(&o, "%s{shard=\"%u\"} %" PRIu64 ".%09" PRIu64 "\n",
						      m->name, snap[i].shard, u / 1000000000,
						      u % 1000000000);
				else
					sm_out_printf(&o, "%s{shard=\"%u\"} %" PRIu64 "\n", m->name,
						      snap[i].shard, u);
				continue;
			}
			sm_out_printf(&o, "%s{shard=\"%u\"} %" PRId64 "\n", m->name, snap[i].shard,
				      v);
		}
	}
	sm_prom_sched_lat(&o, snap, n);
	sm_prom_perf(&o, snap, n);
	sm_prom_scylla(&o, snap, n);
	return o.pos;
}

void
sm_lat_hist_print(FILE *f, const char *name, const char *labels, unsigned shard,
		  const uint64_t *buckets, uint64_t sum_us, uint64_t count)
{
	const char *sep = labels != NULL && labels[0] != '\0' ? "," : "";
	char sh[32] = "";
	uint64_t cum = 0;
	unsigned b;

	if (labels == NULL)
		labels = "";
	if (shard != SM_LAT_HIST_NO_SHARD)
		snprintf(sh, sizeof(sh), ",shard=\"%u\"", shard);
	for (b = 0; b < SM_LAT_HIST_BUCKETS - 1; b++) {
		cum += buckets[b];
		fprintf(f, "%s_bucket{le=\"%llu.000000\"%s%s%s} %llu\n", name,
			(unsigned long long)sm_lat_hist_bound(b), sep, labels, sh,
			(unsigned long long)cum);
	}
	/* _sum and _count: the labels, then the shard's without its comma when alone */
	fprintf(f,
		"%s_bucket{le=\"+Inf\"%s%s%s} %llu\n"
		"%s_sum{%s%s} %llu\n"
		"%s_count{%s%s} %llu\n",
		name, sep, labels, sh, (unsigned long long)count, name, labels,
		sh + (labels[0] == '\0' && sh[0] != '\0'), (unsigned long long)sum_us, name, labels,
		sh + (labels[0] == '\0' && sh[0] != '\0'), (unsigned long long)count);
}

void
sm_lat_hist_print_summary(FILE *f, const char *name, const char *labels, const uint64_t *buckets,
			  uint64_t sum_us, uint64_t count)
{
	static const double quantiles[] = { 0.5, 0.95, 0.99 };
	const char *sep = labels != NULL && labels[0] != '\0' ? "," : "";
	uint64_t cum, want, bound;
	unsigned q, b;

	if (labels == NULL)
		labels = "";
	for (q = 0; q < SM_ARRAY_SIZE(quantiles) && count > 0; q++) {
		want = (uint64_t)(quantiles[q] * (double)count + 0.5);
		if (want == 0)
			want = 1;
		cum = 0;
		for (b = 0; b < SM_LAT_HIST_BUCKETS - 1; b++) {
			cum += buckets[b];
			if (cum >= want)
				break;
		}
		bound = b < SM_LAT_HIST_BUCKETS - 1 ? sm_lat_hist_bound(b)
						    : 2 * sm_lat_hist_bound(SM_LAT_HIST_BUCKETS - 2);
		fprintf(f, "%s{%s%squantile=\"%g\"} %llu\n", name, labels, sep, quantiles[q],
			(unsigned long long)bound);
	}
	if (labels[0] == '\0')
		fprintf(f, "%s_count %llu\n%s_sum %llu\n", name, (unsigned long long)count, name,
			(unsigned long long)sum_us);
	else
		fprintf(f, "%s_count{%s} %llu\n%s_sum{%s} %llu\n", name, labels,
			(unsigned long long)count, name, labels, (unsigned long long)sum_us);
}
