# SPDX-License-Identifier: BSD-3-Clause
"""deploy/grafana: the serve dashboard is what make-dashboards.py writes, is
well-formed, and every metric its panels query is on the /metrics of a running
`shardmark serve` (after some CQL traffic, so that per-request counters exist)."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import cql_free_ports, http_get, parse_prometheus, start_cql_server

GRAFANA = Path(__file__).resolve().parents[2] / "deploy" / "grafana"
DASHBOARD = GRAFANA / "shardmark-serve.json"
NAME = re.compile(r"\bshardmark_[a-z0-9_]+")
NAME_RE = re.compile(r'__name__=~"([^"]+)"')


def panels(doc):
    for p in doc["panels"]:
        yield p
        yield from p.get("panels", [])


def test_dashboard_is_generated_and_well_formed(tmp_path):
    out = tmp_path / "serve.json"
    subprocess.run([sys.executable, str(GRAFANA / "make-dashboards.py"), str(out)], check=True,
                   capture_output=True)
    assert json.loads(out.read_text()) == json.loads(DASHBOARD.read_text()), \
        "shardmark-serve.json differs from make-dashboards.py's output: run it and commit"
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
    served = {name for name, _, _ in parse_prometheus(body)}
    families = set(served)
    for n in served:  # a histogram's samples are NAME_bucket, NAME_sum, NAME_count
        for suffix in ("_bucket", "_sum", "_count"):
            if n.endswith(suffix):
                families.add(n[: -len(suffix)])
    missing = []
    for p in panels(json.loads(DASHBOARD.read_text())):
        for t in p.get("targets", []):
            for name in NAME.findall(NAME_RE.sub("", t["expr"])):
                if name not in served and name not in families:
                    missing.append(f"{p['title']}: {name}")
            for rx in NAME_RE.findall(t["expr"]):
                if not any(re.fullmatch(rx, n) for n in served):
                    missing.append(f"{p['title']}: nothing matches {rx}")
    assert not missing, "metrics the dashboard uses that serve does not expose:\n" + \
        "\n".join(missing)


def test_prometheus_config_scrapes_metrics():
    text = (GRAFANA / "prometheus.yml").read_text()
    assert "metrics_path: /metrics" in text and ":9180" in text
