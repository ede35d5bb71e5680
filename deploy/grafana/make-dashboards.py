#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes deploy/grafana/shardmark-serve.json, the Grafana dashboard of
`shardmark serve`'s /metrics, per shard, and shardmark-stress.json, that of a
loader's live /metrics (`shardmark stress --prometheus-port N ...`), per
client shard and op type. Edit the panels here and run
`deploy/grafana/make-dashboards.py [SERVE_OUT [STRESS_OUT]]`;
tests/integration/test_grafana.py checks that the committed files are what it
writes and that every metric a panel uses is on a running server's or
loader's /metrics."""

import json
import sys
from pathlib import Path

DS = {"type": "prometheus", "uid": "${datasource}"}
SEL = 'instance=~"$instance", shard=~"$shard"'
RI = "$__rate_interval"


def rate(name):
    return f"sum by (instance, shard) (rate({name}{{{SEL}}}[{RI}]))"


def gauge(name):
    return f"sum by (instance, shard) ({name}{{{SEL}}})"


def per(num, den):
    return f"{rate(num)} / clamp_min({rate(den)}, 1e-9)"


# (row, [(title, unit, [(expr, legend)], description)])
ROWS = [
    ("Requests", [
        ("Requests per second", "reqps", [(rate("shardmark_requests_total"), "")],
         "Protocol requests completed (CQL and Alternator), per shard."),
        ("Requests timed out per second", "reqps",
         [(rate("shardmark_requests_timed_out_total"), "")], ""),
        ("Cross-shard hops per second", "ops", [(rate("shardmark_hops_total"), "")],
         "Store requests forwarded to the owning shard: a shard-aware client keeps this at 0."),
        ("Hops per request", "none",
         [(per("shardmark_hops_total", "shardmark_requests_total"), "")], ""),
    ]),
    ("Reactor", [
        ("Busy / idle polling / sleep (share of a CPU)", "percentunit", [
            (rate("shardmark_reactor_busy_seconds_total"), "busy {{shard}}"),
            (rate("shardmark_reactor_idle_poll_seconds_total"), "idle poll {{shard}}"),
            (rate("shardmark_reactor_sleep_seconds_total"), "sleep {{shard}}")],
         "Each shard's time: running tasks, spinning for work, blocked in the driver."),
        ("Scheduling latency p99", "s", [(
            "histogram_quantile(0.99, sum by (instance, shard, le) "
            f"(rate(shardmark_reactor_scheduling_latency_seconds_bucket{{{SEL}}}[{RI}])))", "")],
         "How long the oldest ready task waited (the latency the reactor adds)."),
        ("Reactor stalls per second", "ops", [(rate("shardmark_reactor_stalls_total"), "")],
         "Loop rounds longer than blocked_reactor_notify_ms (logged with a backtrace)."),
        ("Tasks per second", "ops", [(rate("shardmark_tasks_run_total"), "")], ""),
        ("Tasks per request", "none",
         [(per("shardmark_tasks_run_total", "shardmark_requests_total"), "")], ""),
        ("Polls, sleeps, wakeups, timers per second", "ops", [
            (rate("shardmark_polls_total"), "polls {{shard}}"),
            (rate("shardmark_sleeps_total"), "sleeps {{shard}}"),
            (rate("shardmark_wakeups_sent_total"), "wakeups sent {{shard}}"),
            (rate("shardmark_timers_fired_total"), "timers {{shard}}")], ""),
        ("Cross-shard messages per second", "ops", [
            (rate("shardmark_xmsg_sent_total"), "sent {{shard}}"),
            (rate("shardmark_xmsg_recv_total"), "received {{shard}}")], ""),
    ]),
    ("Memory", [
        ("Allocations per second", "ops", [
            (rate("shardmark_allocs_total"), "allocs {{shard}}"),
            (rate("shardmark_frees_total"), "frees {{shard}}")], ""),
        ("Allocations per request", "none",
         [(per("shardmark_allocs_total", "shardmark_requests_total"), "")],
         "The goal is 0 in steady state."),
        ("Bytes allocated per second", "Bps",
         [(rate("shardmark_bytes_allocated_total"), "")], ""),
        ("Memory in use and budget", "bytes", [
            (gauge("shardmark_mem_in_use_bytes"), "in use {{shard}}"),
            (gauge("shardmark_mem_budget_bytes"), "budget {{shard}}")],
         "Budget 0: none enforced."),
    ]),
    ("Network", [
        ("Bytes per second", "Bps", [
            (rate("shardmark_bytes_in_total"), "in {{shard}}"),
            (rate("shardmark_bytes_out_total"), "out {{shard}}"),
            (rate("shardmark_bytes_in_copied_total"), "in, copied {{shard}}")], ""),
        ("Connections", "short", [(gauge("shardmark_connections_active"), "")], ""),
        ("Connections opened, closed, timed out per second", "ops", [
            (rate("shardmark_connections_opened_total"), "opened {{shard}}"),
            (rate("shardmark_connections_closed_total"), "closed {{shard}}"),
            (rate("shardmark_connections_timed_out_total"), "timed out {{shard}}"),
            (rate("shardmark_accept_errors_total"), "accept errors {{shard}}")], ""),
        ("Back-pressure per second", "ops", [
            (rate("shardmark_rx_pauses_total"), "rx pauses {{shard}}"),
            (rate("shardmark_writes_refused_total"), "writes refused {{shard}}")], ""),
        ("io_uring: SQEs, CQEs, sends, receives per second", "ops", [
            (rate("shardmark_net_uring_sqes_total"), "SQEs {{shard}}"),
            (rate("shardmark_net_uring_cqes_total"), "CQEs {{shard}}"),
            (rate("shardmark_net_uring_sends_total"), "sends {{shard}}"),
            (rate("shardmark_net_uring_recvs_total"), "recvs {{shard}}"),
            (rate("shardmark_io_enters_total"), "io_uring_enter {{shard}}")],
         "shardmark_net_* is the driver's own: uring here, tcp/nic counters with DPDK."),
        ("io_uring: short sends, buffer starvation per second", "ops", [
            (rate("shardmark_net_uring_short_sends_total"), "short sends {{shard}}"),
            (rate("shardmark_net_uring_rx_buffer_starvation_total"), "rx starvation {{shard}}")],
         ""),
        ("Every driver counter (shardmark_net_*) per second", "ops", [(
            f'sum by (instance, shard, __name__) (rate({{__name__=~"shardmark_net_.+", {SEL}}}[{RI}]))',
            "{{__name__}} {{shard}}")], "Whatever the driver counts, uring or DPDK."),
    ]),
    ("TLS", [
        ("Handshakes per second", "ops", [
            (rate("shardmark_tls_handshakes_total"), "done {{shard}}"),
            (rate("shardmark_tls_handshake_errors_total"), "errors {{shard}}"),
            (rate("shardmark_tls_handshake_timeouts_total"), "timeouts {{shard}}")], ""),
        ("TLS bytes per second", "Bps", [
            (rate("shardmark_tls_bytes_encrypted_total"), "encrypted {{shard}}"),
            (rate("shardmark_tls_bytes_decrypted_total"), "decrypted {{shard}}")], ""),
        ("TLS sends: kernel (kTLS) or user space", "ops", [
            (rate("shardmark_tls_ktls_tx_total"), "kTLS {{shard}}"),
            (rate("shardmark_tls_userspace_tx_total"), "user space {{shard}}")], ""),
    ]),
    ("CPU (perf_event)", [
        ("Task clock (share of a CPU)", "percentunit",
         [(f"{rate('shardmark_perf_task_clock_total')} / 1e9", "")],
         "0 where perf_event is unavailable (shardmark_perf_available)."),
        ("Context switches and page faults per second", "ops", [
            (rate("shardmark_perf_context_switches_total"), "context switches {{shard}}"),
            (rate("shardmark_perf_page_faults_total"), "page faults {{shard}}")], ""),
        ("perf counters readable", "short", [(gauge("shardmark_perf_available"), "")], ""),
    ]),
]


def panel(pid, title, unit, targets, desc, x, y):
    return {
        "id": pid, "type": "timeseries", "title": title, "description": desc,
        "datasource": DS, "gridPos": {"h": 8, "w": 12, "x": x, "y": y},
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "options": {"legend": {"displayMode": "list", "placement": "bottom"},
                    "tooltip": {"mode": "multi"}},
        "targets": [{"refId": chr(ord("A") + i), "datasource": DS, "expr": e,
                     "legendFormat": lg or "shard {{shard}}"}
                    for i, (e, lg) in enumerate(targets)],
    }


def var(name, label, query):
    return {"name": name, "label": label, "type": "query", "datasource": DS,
            "query": {"query": query, "refId": name}, "definition": query,
            "includeAll": True, "multi": True, "allValue": ".*", "refresh": 2,
            "current": {"selected": True, "text": ["All"], "value": ["$__all"]}}


def make_dashboard(name, uid, about, rows, var_metric, extra_vars=()):
    panels, pid, y = [], 1, 0
    for row, items in rows:
        panels.append({"id": pid, "type": "row", "title": row, "collapsed": False,
                       "gridPos": {"h": 1, "w": 24, "x": 0, "y": y}, "panels": []})
        pid, y = pid + 1, y + 1
        for i, (title, unit, targets, desc) in enumerate(items):
            panels.append(panel(pid, title, unit, targets, desc, 12 * (i % 2), y + 8 * (i // 2)))
            pid += 1
        y += 8 * ((len(items) + 1) // 2)
    return {
        "title": name, "uid": uid, "schemaVersion": 38,
        "version": 1, "editable": True, "tags": ["shardmark"], "timezone": "",
        "refresh": "10s", "time": {"from": "now-30m", "to": "now"},
        "description": about,
        "templating": {"list": [
            {"name": "datasource", "label": "Prometheus", "type": "datasource",
             "query": "prometheus", "current": {}},
            var("instance", "instance", f"label_values({var_metric}, instance)"),
            var("shard", "shard",
                f'label_values({var_metric}{{instance=~"$instance"}}, shard)'),
            *extra_vars,
        ]},
        "annotations": {"list": []},
        "panels": panels,
    }


def serve_dashboard():
    return make_dashboard(
        "shardmark serve", "shardmark-serve",
        "shardmark serve per shard: requests, hops, reactor, memory, network, TLS "
        "(docs/deploy.md: Monitoring)", ROWS, "shardmark_requests_total")


# The loader: per client shard and op type (op=~"$op").
OSEL = SEL + ', op=~"$op"'


def orate(name, by="instance, shard, op"):
    return f"sum by ({by}) (rate({name}{{{OSEL}}}[{RI}]))"


def lat(q, kind):
    return (f"histogram_quantile({q}, sum by (instance, op, le) "
            f'(rate(shardmark_stress_latency_seconds_bucket{{{OSEL}, latency="{kind}"}}[{RI}])))')


STRESS_ROWS = [
    ("Operations", [
        ("Operations per second", "ops", [(orate("shardmark_stress_ops_total"),
                                          "{{op}} shard {{shard}}")],
         "Operations completed in the measured phase (0 in warm-up), per client shard and op."),
        ("Errors per second", "ops", [(orate("shardmark_stress_errors_total"),
                                      "{{op}} shard {{shard}}")],
         "Operations that failed every try."),
        ("In flight", "short", [(gauge("shardmark_stress_in_flight"), "")],
         "Requests sent and not answered, per client shard (at most threads/shards)."),
        ("Rate target and threads", "short", [
            (gauge("shardmark_stress_rate_target_ops_per_second"), "rate target {{shard}}"),
            ("max by (instance) (shardmark_stress_threads{instance=~\"$instance\"})",
             "threads")],
         "The open-loop rate each shard is paced at (0: closed loop), and the concurrency."),
    ]),
    ("Latency", [
        ("Response time (from the intended start)", "s", [
            (lat(0.5, "response"), "p50 {{op}}"), (lat(0.99, "response"), "p99 {{op}}"),
            (lat(0.999, "response"), "p99.9 {{op}}")],
         "Corrects coordinated omission: what -rate fixed= reports."),
        ("Service time (from the send)", "s", [
            (lat(0.5, "service"), "p50 {{op}}"), (lat(0.99, "service"), "p99 {{op}}"),
            (lat(0.999, "service"), "p99.9 {{op}}")], ""),
        ("Measured phase so far: p99 (HDR)", "s", [(
            "max by (instance, shard, op, latency) (shardmark_stress_latency_quantile_seconds"
            f'{{{OSEL}, quantile="0.99"}})', "{{latency}} {{op}} shard {{shard}}")],
         "The loader's own HDR percentiles over the whole measured phase."),
    ]),
    ("Run", [
        ("Phase", "short", [(
            'max by (instance, phase) (shardmark_stress_phase{instance=~"$instance"}) == 1',
            "{{phase}}")], "control, connect, warmup, settle (a search step), measure, done."),
        ("Capacity search step", "short", [(
            'max by (instance) (shardmark_stress_step{instance=~"$instance"})', "step")],
         "-rate auto / search: the step being run (0: no search)."),
        ("Loader reactor: busy / idle polling (share of a CPU)", "percentunit", [
            (rate("shardmark_reactor_busy_seconds_total"), "busy {{shard}}"),
            (rate("shardmark_reactor_idle_poll_seconds_total"), "idle poll {{shard}}")],
         "Above 90 % busy the loader, not the server, may be the limit."),
        ("Loader allocations per second", "ops", [(rate("shardmark_allocs_total"), "")], ""),
    ]),
]


def stress_dashboard():
    return make_dashboard(
        "shardmark stress", "shardmark-stress",
        "A shardmark stress / ycsb / scylla-bench loader's live metrics (--prometheus-port) "
        "per client shard and op type (docs/stress.md: Live metrics)", STRESS_ROWS,
        "shardmark_stress_ops_total",
        (var("op", "op", 'label_values(shardmark_stress_ops_total{instance=~"$instance"}, op)'),))


if __name__ == "__main__":
    # arguments write elsewhere (the test compares them with the committed files)
    here = Path(__file__).resolve().parent
    outs = [Path(a) for a in sys.argv[1:3]] or [here / "shardmark-serve.json",
                                                here / "shardmark-stress.json"]
    for out, make in zip(outs, (serve_dashboard, stress_dashboard)):
        out.write_text(json.dumps(make(), indent=1) + "\n")
        print(f"wrote {out}")
