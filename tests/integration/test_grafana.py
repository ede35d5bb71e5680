# SPDX-License-Identifier: BSD-3-Clause
"""deploy/grafana: the serve and stress dashboards are what make-dashboards.py
writes, are well-formed, and every metric their panels query is on the
/metrics of a running `shardmark serve` (after some CQL traffic, so that
per-request counters exist) or of a running loader (`shardmark stress
--prometheus-port`, scraped mid-run: its counters grow while it runs)."""

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import cql_free_ports, free_port, http_get, parse_prometheus, start_cql_server

GRAFANA = Path(__file__).resolve().parents[2] / "deploy" / "grafana"
DASHBOARD = GRAFANA / "shardmark-serve.json"
STRESS_DASHBOARD = GRAFANA / "shardmark-stress.json"
NAME = re.compile(r"\bshardmark_[a-z0-9_]+")
NAME_RE = re.compile(r'__name__=~"([^"]+)"')


def panels(doc):
    for p in doc["panels"]:
        yield p
        yield from p.get("panels", [])


def test_dashboard_is_generated_and_well_formed(tmp_path):
    out, out2 = tmp_path / "serve.json", tmp_path / "stress.json"
    subprocess.run([sys.executable, str(GRAFANA / "make-dashboards.py"), str(out), str(out2)],
                   check=True, capture_output=True)
    assert json.loads(out.read_text()) == json.loads(DASHBOARD.read_text()), \
        "shardmark-serve.json differs from make-dashboards.py's output: run it and commit"
    assert json.loads(out2.read_text()) == json.loads(STRESS_DASHBOARD.read_text()), \
        "shardmark-stress.json differs from make-dashboards.py's output: run it and commit"
    stress = json.loads(STRESS_DASHBOARD.read_text())
    for p in panels(stress):
        if p["type"] != "row":
            assert p["targets"] and p["datasource"]["uid"] == "${datasource}", p["title"]
    doc = json.loads(DASHBOARD.read_text())
    ids = [p["id"] for p in panels(doc)]
    assert len(ids) == len(set(ids))
    graphs = [p for p in panels(doc) if p["type"] != "row"]
    assert len(graphs) >= 20
    for p in graphs:
        assert p["targets"] and all(t["expr"] for t in p["targets"]), p["title"]
        assert p["datasource"]["uid"] == "${datasource}"
    titles = " ".join(p["title"] for p in graphs)
    for want in ("Requests", "hops", "Tasks", "Alloc", "Memory", "Bytes", "Scheduling latency",
                 "stalls", "Busy", "io_uring", "Handshakes"):
        assert want.lower() in titles.lower(), want


def test_every_panel_metric_is_served(shardmark_bin, tmp_path):
    srv = start_cql_server(shardmark_bin, tmp_path, ports=cql_free_ports())
    try:
        # some traffic: the driver's connections and requests
        r = subprocess.run([str(shardmark_bin), "stress", "write", "n=2000", "-node", "127.0.0.1",
                            "-port", f"native={srv.cql_port}", "-rate", "threads=4",
                            "-shards", "1"], capture_output=True, text=True, timeout=120,
                           stdin=subprocess.DEVNULL)
        assert r.returncode == 0, r.stdout + r.stderr
        status, _, body = http_get(srv.ports[2], "/metrics")
        assert status == 200
    finally:
        srv.kill()
    missing = dashboard_missing(DASHBOARD, body)
    assert not missing, "metrics the dashboard uses that serve does not expose:\n" + \
        "\n".join(missing)


def dashboard_missing(dashboard, body):
    """The metrics the panels of @dashboard query that the /metrics @body lacks."""
    served = {name for name, _, _ in parse_prometheus(body)}
    families = set(served)
    for n in served:  # a histogram's samples are NAME_bucket, NAME_sum, NAME_count
        for suffix in ("_bucket", "_sum", "_count"):
            if n.endswith(suffix):
                families.add(n[: -len(suffix)])
    missing = []
    for p in panels(json.loads(dashboard.read_text())):
        for t in p.get("targets", []):
            for name in NAME.findall(NAME_RE.sub("", t["expr"])):
                if name not in served and name not in families:
                    missing.append(f"{p['title']}: {name}")
            for rx in NAME_RE.findall(t["expr"]):
                if not any(re.fullmatch(rx, n) for n in served):
                    missing.append(f"{p['title']}: nothing matches {rx}")
    return missing


def ops_done(body):
    """shardmark_stress_ops_total summed over shards and op types, None before any sample."""
    vals = [v for name, _, v in parse_prometheus(body) if name == "shardmark_stress_ops_total"]
    return sum(vals) if vals else None


def test_loader_metrics_live_and_every_stress_panel_metric_is_served(shardmark_bin, tmp_path):
    """A loader with --prometheus-port, scraped while it runs: its operation
    counters grow from one scrape to a later one, the histogram and gauges are
    there per client shard, and the stress dashboard's metrics all exist."""
    srv = start_cql_server(shardmark_bin, tmp_path, smp=1, ports=cql_free_ports())
    port = free_port()
    loader = subprocess.Popen(
        [str(shardmark_bin), "stress", "--prometheus-port", str(port), "write", "duration=30s",
         "no-warmup", "-node", "127.0.0.1", "-port", f"native={srv.cql_port}", "-rate",
         "threads=4", "fixed=500/s", "-shards", "2"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        seen, body, deadline = [], "", time.monotonic() + 60
        while len(seen) < 2 and time.monotonic() < deadline:
            assert loader.poll() is None, loader.communicate()
            try:
                status, _, body = http_get(port, "/metrics")
            except OSError:
                time.sleep(0.1)  # not listening yet
                continue
            assert status == 200
            n = ops_done(body)
            if n and (not seen or n > seen[-1]):
                seen.append(n)
            time.sleep(0.2)
        assert len(seen) == 2 and seen[1] > seen[0], f"counters did not grow: {seen}\n{body}"
        samples = parse_prometheus(body)
        shards = {lb.get("shard") for name, lb, _ in samples
                  if name == "shardmark_stress_ops_total"}
        assert shards == {"0", "1"}, shards
        buckets = [(lb, v) for name, lb, v in samples
                   if name == "shardmark_stress_latency_seconds_bucket"
                   and lb.get("latency") == "response" and lb.get("shard") == "0"]
        counts = [v for _, v in buckets]
        assert buckets and counts == sorted(counts), "buckets are cumulative"
        assert any(name == "shardmark_stress_phase" and lb.get("phase") == "measure" and v == 1
                   for name, lb, v in samples)
        targets = [v for name, _, v in samples
                   if name == "shardmark_stress_rate_target_ops_per_second"]
        assert targets and abs(sum(targets) - 500) < 1, targets
        missing = dashboard_missing(STRESS_DASHBOARD, body)
        assert not missing, "metrics the stress dashboard uses that the loader does not " \
            "expose:\n" + "\n".join(missing)
    finally:
        loader.kill()
        loader.communicate()
        srv.kill()


def test_prometheus_config_scrapes_metrics():
    text = (GRAFANA / "prometheus.yml").read_text()
    assert "metrics_path: /metrics" in text and ":9180" in text
