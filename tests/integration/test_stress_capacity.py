# SPDX-License-Identifier: BSD-3-Clause
"""`shardmark stress` capacity search against a real `shardmark serve --smp 1`:

- `-rate auto threads>= threads<=`: cassandra-stress's thread ramp, one run
  per thread count, its "Running with N threadCount" and "Improvement over"
  lines, the summary table (one row per thread count) and the best one;
- `-rate search`: the open-loop rate steps and the bisection, the curve
  (rate, achieved, p50, p99, p99.9, errors per step) and the answer, in
  text, -log json= and -log steps= (CSV).

Assertions are about structure and the search's invariants (the step phase
climbs, bisection stays inside its bracket, the answer is the highest
passing rate), never about how fast anything runs.
"""

import csv
import json
import re
import subprocess
from html.parser import HTMLParser

import pytest

from conftest import cql_free_ports, http_get, parse_prometheus, start_cql_server

STRESS_TIMEOUT = 180  # a whole search; it takes seconds, this only catches a hang


def describe(r):
    return (f"command: {' '.join(map(str, r.args))}\nexit: {r.returncode}\n"
            f"--- stdout ---\n{r.stdout}\n--- stderr ---\n{r.stderr}")


@pytest.fixture(scope="module")
def server(shardmark_bin, tmp_path_factory):
    srv = start_cql_server(shardmark_bin, tmp_path_factory.mktemp("capacity"), smp=1,
                           ports=cql_free_ports())
    yield srv
    srv.kill()


@pytest.fixture(scope="module")
def stress(server, shardmark_bin):
    def run(*args, timeout=STRESS_TIMEOUT):
        argv = [str(shardmark_bin), "stress", *map(str, args), "-node", "127.0.0.1",
                "-port", f"native={server.cql_port}", "-shards", "1"]
        return subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              errors="replace", timeout=timeout)
    return run


# StressMetrics.summarise: "%Ns, " id, then an interval row.
SUMMARY_ROW = re.compile(r"^ *(?P<threads>\d+) threadCount, total,\s+(?P<ops>\d+),"
                         r"\s+(?P<op_s>\d+),")


def test_rate_auto_ramps_threads_and_summarises(stress, tmp_path):
    js, steps = tmp_path / "auto.json", tmp_path / "auto.csv"
    r = stress("write", "n=3000", "no-warmup", "-rate", "auto", "threads>=4", "threads<=250",
               "-log", f"json={js}", f"steps={steps}")
    assert r.returncode == 0, describe(r)
    out = r.stdout
    # runMulti: 4, 104, 204 (304 > threads<=250 ends it), each announced and run
    ran = [int(x) for x in re.findall(r"^Running with (\d+) threadCount$", out, re.M)]
    assert ran[:2] == [4, 104], describe(r)
    assert all(t <= 250 for t in ran) and ran == sorted(ran), ran
    for t in ran:
        assert f"Running WRITE with {t} threads for 3000 iteration" in out, describe(r)
    assert len(re.findall(r"^Improvement over \d+ threadCount: -?\d+%$", out, re.M)) == \
        len(ran) - 1, describe(r)
    # the summary: a header with the id column, one total row per thread count
    lines = out.splitlines()
    head = [i for i, line in enumerate(lines) if re.match(r"^ *id, type +total ops,", line)]
    assert len(head) == 1, describe(r)
    rows = [SUMMARY_ROW.match(line) for line in lines[head[0] + 1:head[0] + 1 + len(ran)]]
    assert all(rows), describe(r)
    assert [int(m["threads"]) for m in rows] == ran
    assert all(int(m["ops"]) == 3000 for m in rows)
    best = re.search(r"^Best: (\d+) threadCount, (\d+) op/s", out, re.M)
    assert best and int(best[1]) in ran, describe(r)
    assert int(best[2]) == max(int(m["op_s"]) for m in rows)
    assert out.rstrip().endswith("END") and out.count("\nEND\n") == 1, describe(r)
    doc = json.loads(js.read_text())
    assert doc["search"]["kind"] == "threads" and doc["search"]["auto"] is True
    assert [s["threads"] for s in doc["steps"]] == ran
    assert doc["answer"]["threads"] == int(best[1])
    rows = list(csv.DictReader(steps.open()))
    assert [int(x["threads"]) for x in rows] == ran and {x["phase"] for x in rows} == {"ramp"}


CURVE_ROW = re.compile(r"^ +(?P<rate>\d+) +(?P<achieved>\d+) +(?P<p50>\d+\.\d+) +"
                       r"(?P<p99>\d+\.\d+) +(?P<p999>\d+\.\d+) +(?P<pct>\d+\.\d+) +"
                       r"(?P<errors>\d+)  (?P<result>pass|FAIL)$")


def check_search(doc, bound_ms):
    """The search's invariants on its steps, whatever the machine measured."""
    steps = doc["steps"]
    assert steps, doc
    for s in steps:
        assert s["pass"] == (s["errors"] == 0 and s["percentile_ms"] <= bound_ms and
                             s["achieved_ops_per_s"] * 100 >= s["target_ops_per_s"] * 90), s
    phase = [s for s in steps if s["phase"] == "step"]
    targets = [s["target_ops_per_s"] for s in phase]
    assert targets == sorted(set(targets)), f"the step phase does not climb: {targets}"
    assert all(s["pass"] for s in phase[:-1]), "a step phase goes on only after a pass"
    # bisection: each step inside the bracket (last pass, first fail) left before it
    lo = max([s["target_ops_per_s"] for s in phase if s["pass"]], default=0)
    fails = [s["target_ops_per_s"] for s in phase if not s["pass"]]
    hi = min(fails) if fails else None
    for s in steps[len(phase):]:
        assert s["phase"] == "bisect" and hi is not None, s
        assert lo < s["target_ops_per_s"] < hi, (lo, s, hi)
        if s["pass"]:
            lo = s["target_ops_per_s"]
        else:
            hi = s["target_ops_per_s"]
    passing = [s["target_ops_per_s"] for s in steps if s["pass"]]
    if passing:
        assert doc["answer"]["ops_per_s"] == max(passing) == lo
    else:
        assert doc["answer"] is None


def test_rate_search_prints_curve_and_answer(stress, tmp_path):
    js, steps = tmp_path / "search.json", tmp_path / "search.csv"
    bound = 50.0
    r = stress("write", "n=1500", "no-warmup", "-rate", "search", "percentile=p99",
               f"bound={bound:g}ms", "start=500/s", "step=500/s", "max=1500/s", "settle=0s",
               "threads=32", "-log", f"json={js}", f"steps={steps}")
    assert r.returncode == 0, describe(r)
    out = r.stdout
    announced = [int(x) for x in re.findall(r"^Step \d+ \((?:step|bisect)\): (\d+) ops/s", out,
                                            re.M)]
    assert announced[0] == 500, describe(r)
    i = out.index("Capacity curve (p99 bound 50.000 ms")
    curve = [CURVE_ROW.match(line) for line in out[i:].splitlines()[2:2 + len(announced)]]
    assert all(curve), describe(r)
    rates = [int(m["rate"]) for m in curve]
    assert rates == sorted(announced), "the curve is every step, by rate"
    answer = re.search(r"^Answer: (?:(\d+) ops/s|none)", out, re.M)
    assert answer, describe(r)
    doc = json.loads(js.read_text())
    assert doc["search"]["kind"] == "rate" and doc["search"]["bound_ms"] == bound
    check_search(doc, bound)
    assert (doc["answer"] or {}).get("ops_per_s") == (int(answer[1]) if answer[1] else None)
    for s in doc["steps"]:
        assert s["ops"] == 1500 and s["p50_ms"] <= s["p99_ms"] <= s["p999_ms"] <= s["max_ms"]
    rows = list(csv.DictReader(steps.open()))
    assert [int(x["target_ops_per_s"]) for x in rows] == announced
    assert {x["result"] for x in rows} <= {"pass", "fail"}


def test_rate_search_with_a_bound_nothing_meets(stress, tmp_path):
    """A 1 us p99 bound fails every step: the search bisects down (800, 400, 200: within resolution 300 of 0) and answers none."""
    js = tmp_path / "none.json"
    r = stress("write", "n=300", "no-warmup", "-rate", "search", "bound=1us", "start=800/s",
               "resolution=300/s", "settle=0s", "threads=8", "-log", f"json={js}")
    assert r.returncode == 0, describe(r)
    doc = json.loads(js.read_text())
    check_search(doc, 0.001)
    assert doc["answer"] is None and not any(s["pass"] for s in doc["steps"])
    assert [s["target_ops_per_s"] for s in doc["steps"]] == [800, 400, 200], doc["steps"]
    assert re.search(r"^Answer: none", r.stdout, re.M), describe(r)


class ReportParser(HTMLParser):
    """The report's title (the page's, not the SVG <title> tooltips), its SVG
    charts, and every tag closed as opened."""
    VOID = {"meta", "br", "hr", "img", "input", "link", "col", "wbr", "area", "base",
            "source", "track", "param", "embed"}

    def __init__(self):
        super().__init__()
        self.stack, self.title, self.svgs, self.text, self._in_title = [], "", 0, [], False

    def handle_starttag(self, tag, attrs):
        if tag == "svg":
            self.svgs += 1
        self._in_title = tag == "title" and "svg" not in self.stack
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        if tag == "svg":
            self.svgs += 1

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes {self.stack[-1:]}"
        self.stack.pop()
        self._in_title = False

    def handle_data(self, data):
        if self._in_title:
            self.title += data
        self.text.append(data)


def parse_report(path):
    p = ReportParser()
    p.feed(path.read_text())
    p.close()
    assert not p.stack, f"unclosed tags: {p.stack}"
    return p


def test_graph_writes_a_report_and_adds_revisions(stress, tmp_path):
    """-graph file= title= revision= as cassandra-stress: the first run creates
    the report, a second one with another revision is added to it (the file is
    read back), one with the same revision replaces it."""
    html = tmp_path / "report.html"
    r = stress("write", "n=2000", "no-warmup", "-rate", "threads=8", "-graph", f"file={html}",
               "title=capacity-test", "revision=first")
    assert r.returncode == 0, describe(r)
    assert r.stdout.rstrip().endswith("END"), "the report's line goes to stderr, END stays last"
    p = parse_report(html)
    assert p.title == "capacity-test" and p.svgs >= 2, (p.title, p.svgs)
    assert "first" in p.text and "WRITE" in " ".join(p.text)
    for rev in ("second", "second"):
        r = stress("read", "n=2000", "no-warmup", "-rate", "threads=8", "-graph",
                   f"file={html}", f"revision={rev}")
        assert r.returncode == 0, describe(r)
        assert "report of 2 runs written to" in r.stderr, describe(r)
    p = parse_report(html)
    assert p.title == "capacity-test", "the file's title stays"
    assert "first" in p.text and "second" in p.text and "READ" in " ".join(p.text)


def test_graph_with_a_search_is_refused(stress, tmp_path):
    r = stress("write", "n=10", "-rate", "auto", "-graph", f"file={tmp_path / 'x.html'}")
    assert r.returncode == 2 and "-graph" in r.stderr, describe(r)
    r = stress("write", "n=10", "-graph", "file=x.html", "op=W")
    assert r.returncode == 2 and "op=" in r.stderr, describe(r)


def test_perf_simple_query_html(shardmark_bin, tmp_path):
    html = tmp_path / "psq.html"
    r = subprocess.run([str(shardmark_bin), "perf-simple-query", "--smp", "1", "--duration",
                        "1", "--html", str(html)], stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=STRESS_TIMEOUT)
    assert r.returncode == 0, describe(r)
    p = parse_report(html)
    assert p.title == "shardmark perf-simple-query" and p.svgs >= 1, (p.title, p.svgs)


def server_requests(srv):
    status, _, body = http_get(srv.prom_port, "/metrics")
    assert status == 200
    return sum(v for name, _, v in parse_prometheus(body) if name == "shardmark_requests_total")


def test_failed_warmup_runs_nothing_more(server, stress):
    """A warm-up whose read fails every try ends the run with that read's
    error; the drain that follows starts no operation (it used to start the
    measured phase's n= operations, whose errors could replace the message)."""
    before = server_requests(server)
    r = stress("read", "n=50", "-pop", "dist=UNIFORM(9000001..9000050)", "-rate", "threads=4",
               "-log", "no-settings")
    after = server_requests(server)
    assert r.returncode == 1, describe(r)
    assert "Warming up READ with 12 iterations" in r.stdout, describe(r)
    assert "were never written" in r.stderr, describe(r)
    # the 4 reads in flight when the first failed, 10 tries each, and the setup's
    # few queries (46 here); a drain that ran the workload again sent 40 more
    assert after - before <= 4 * 10 + 15, (before, after)
