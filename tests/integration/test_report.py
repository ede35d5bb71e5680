# SPDX-License-Identifier: BSD-3-Clause
"""`shardmark report` and `shardmark compare` on real results: two stress runs
against a `shardmark serve` (JSON and HDR log each) and two perf-simple-query
runs. The report is opened in headless Chromium (Debian's chromium) and its
screenshot is checked for drawn data: pixels of the runs' colours inside the
plot areas, whose fill (SM_REPORT_PLOT_BG) finds them. compare is checked for
its shape, its verdicts on a real 5x throughput cut and --fail-on-regression's
exit codes; its statistics are unit-tested (tests/benchlib/test_stats_compare.c).
"""

import json
import shutil
import subprocess

import pytest

from conftest import allowed_cpus, cql_free_ports, start_cql_server

STRESS_TIMEOUT = 180
PLOT_BG = (0xf4, 0xf6, 0xfb)  # sm_report_html.h SM_REPORT_PLOT_BG
RUN_COLOURS = [(0x1f, 0x77, 0xb4), (0xd6, 0x27, 0x28)]  # sm_report_run_colour(0), (1)


def run(shardmark_bin, *args, timeout=STRESS_TIMEOUT):
    return subprocess.run([str(shardmark_bin), *map(str, args)], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, errors="replace", timeout=timeout)


def ok(r):
    assert r.returncode == 0, f"rc {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}"
    return r


@pytest.fixture(scope="module")
def server(shardmark_bin, tmp_path_factory):
    srv = start_cql_server(shardmark_bin, tmp_path_factory.mktemp("report"))
    yield srv
    srv.kill()


@pytest.fixture(scope="module")
def stress_runs(shardmark_bin, server, tmp_path_factory):
    """Two 10-second write runs logged every 250 ms (40 intervals: ten leave
    the autocorrelated error of a loaded machine too wide to call even a 5x
    cut), a as fast as it goes, b throttled to a fifth of a's rate, each with
    -log json= and hdrfile=; returns (dir, a's op/s)."""
    d = tmp_path_factory.mktemp("runs")
    common = ["-node", "127.0.0.1", "-port", f"native={server.cql_port}", "-shards", "1"]
    ok(run(shardmark_bin, "stress", "write", "duration=10s", "cl=ONE", "-rate", "threads=8",
           *common, "-log", "interval=250ms", f"json={d / 'a.json'}", f"hdrfile={d / 'a.hdr'}"))
    rate = json.loads((d / "a.json").read_text())["ops_per_s"]
    assert rate > 0
    cap = max(int(rate / 5), 50)
    ok(run(shardmark_bin, "stress", "write", "duration=10s", "cl=ONE", "-rate", "threads=8",
           f"throttle={cap}/s", *common, "-log", "interval=250ms", f"json={d / 'b.json'}",
           f"hdrfile={d / 'b.hdr'}"))
    return d, rate


def psq_json(shardmark_bin, path):
    smp = ["--smp", "2"] + (["--overprovisioned"] if allowed_cpus() < 2 else [])
    ok(run(shardmark_bin, "perf-simple-query", *smp, "--duration", "3", "--json-result", path))


def chromium():
    for name in ("chromium", "chromium-browser"):
        if shutil.which(name):
            return shutil.which(name)
    pytest.skip("no chromium: deploy/install-deps.sh --test installs Debian's chromium")


def screenshot(html, png, tmp_path, height):
    r = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                        "--hide-scrollbars", f"--user-data-dir={tmp_path / 'chromium'}",
                        f"--window-size=1000,{height}", f"--screenshot={png}",
                        f"file://{html}"],
                       capture_output=True, text=True, timeout=120)
    assert png.exists(), f"chromium wrote no screenshot: rc {r.returncode}\n{r.stderr[-2000:]}"


def plot_areas(img):
    """The plot areas as (x0, y0, x1, y1): bands of rows with a long run of
    the plot fill, each as wide as its fill (charts are stacked one per row).
    Grid lines and a flat data line (a throttled run) cross a plot area whole:
    a band bridges gaps of up to 12 rows (charts are 70 rows apart or more)."""
    w, h = img.size
    px = img.load()
    rows = []
    for y in range(h):
        xs = [x for x in range(0, w, 2) if px[x, y][:3] == PLOT_BG]
        rows.append((min(xs), max(xs)) if len(xs) > 100 else None)
    areas, y = [], 0
    while y < h:
        if rows[y] is None:
            y += 1
            continue
        y0, x0, x1, last = y, rows[y][0], rows[y][1], y
        while y < h and (rows[y] is not None or any(rows[k] for k in range(y, min(y + 12, h)))):
            if rows[y] is not None:
                x0, x1, last = min(x0, rows[y][0]), max(x1, rows[y][1]), y
            y += 1
        if last - y0 > 100:
            areas.append((x0, y0, x1, last + 1))
        y = last + 1
    return areas


def near(c, ref, tol=40):
    return all(abs(a - b) <= tol for a, b in zip(c[:3], ref))


def colour_pixels(img, area, ref):
    x0, y0, x1, y1 = area
    px = img.load()
    return sum(1 for y in range(y0, y1) for x in range(x0, x1) if near(px[x, y], ref))


def test_report_stress_charts_drawn(shardmark_bin, stress_runs, tmp_path):
    Image = pytest.importorskip("PIL.Image", reason="python3-pil (deploy/install-deps.sh --test)")
    d, _ = stress_runs
    html = tmp_path / "report.html"
    r = ok(run(shardmark_bin, "report", d / "a.json", d / "a.hdr", d / "b.json", d / "b.hdr",
               "-o", html, "--title", "a against b"))
    assert "report of 2 runs" in r.stdout
    text = html.read_text()
    # self-contained: nothing to fetch, nothing to run
    assert "<script" not in text and "http://" not in text.replace(
        "http://www.w3.org/2000/svg", "")
    for needle in ("WRITE: throughput over time", "WRITE: latency over time, a",
                   "WRITE: latency over time, b", "WRITE: latency by percentile",
                   "99.999%", "Settings", "Machine", "shardmark 0.", "threads"):
        assert needle in text, needle
    # b ran throttled: its response time (from the intended start) gets a section
    assert "WRITE (response time): throughput over time" in text

    png = tmp_path / "report.png"
    screenshot(html, png, tmp_path, 4000)
    img = Image.open(png).convert("RGB")
    areas = plot_areas(img)
    # throughput, two latency-over-time, distribution (service time), and b's
    # throttled response-time section's charts: at least the first four
    assert len(areas) >= 4, areas
    thr, lat_a, lat_b, dist = areas[:4]
    # both runs drawn in the overlaid charts, inside their plot areas
    for i, ref in enumerate(RUN_COLOURS):
        assert colour_pixels(img, thr, ref) > 100, f"run {i} not drawn in throughput"
        assert colour_pixels(img, dist, ref) > 100, f"run {i} not drawn in distribution"
    # the percentile lines of each run's latency chart: p50 blue, p99 orange, p99.9 red
    for area in (lat_a, lat_b):
        for ref in ((0x1f, 0x77, 0xb4), (0xff, 0x7f, 0x0e), (0xd6, 0x27, 0x28)):
            assert colour_pixels(img, area, ref) > 50, (area, ref)


def test_report_refuses_nonsense(shardmark_bin, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"hello": 1}')
    r = run(shardmark_bin, "report", bad, "-o", tmp_path / "x.html")
    assert r.returncode == 1
    assert "not a shardmark result" in r.stderr
    r = run(shardmark_bin, "report", bad)
    assert r.returncode == 2 and "-o FILE.html" in r.stderr
    r = run(shardmark_bin, "report", tmp_path / "missing.json", "-o", tmp_path / "x.html")
    assert r.returncode == 1 and "No such file" in r.stderr
    trunc = tmp_path / "t.json"
    trunc.write_text('{"ops_by_type": {"WRITE": ')
    r = run(shardmark_bin, "report", trunc, "-o", tmp_path / "x.html")
    assert r.returncode == 1 and "truncated" in r.stderr


def test_compare_stress(shardmark_bin, stress_runs, tmp_path):
    d, _ = stress_runs
    a, b = [d / "a.json", d / "a.hdr"], [d / "b.json", d / "b.hdr"]
    r = ok(run(shardmark_bin, "compare", *a, *b))
    print(r.stdout)
    assert "WRITE op/s" in r.stdout and "bootstrap" in r.stdout and "welch" in r.stdout
    out = tmp_path / "cmp.json"
    r = ok(run(shardmark_bin, "compare", *a, *b, "--json", out))
    doc = json.loads(out.read_text())
    assert doc["a"] == "a" and doc["b"] == "b" and doc["confidence"] == 0.99
    figs = {f["name"]: f for f in doc["figures"]}
    thr = figs["WRITE op/s"]
    # b ran at a fifth of a's rate: a change of about -80%, significant, worse
    assert thr["verdict"] == "worse" and thr["significant"], thr
    assert thr["change"] < -0.5 and thr["interval"][1] < 0, thr
    assert figs["WRITE p99"]["method"] == "bootstrap"
    assert figs["WRITE p99"]["p"] is None
    # totals without samples get the change, no verdict
    assert figs["op/s"]["verdict"] == "n/a" and figs["op/s"]["interval"] is None
    # CI's gate: fails on a regression beyond 10%, passes when allowed 95%
    r = run(shardmark_bin, "compare", *a, *b, "--fail-on-regression", "10")
    assert r.returncode == 1 and "--fail-on-regression" in r.stderr, r.stderr
    same = f"{d / 'a.json'},{d / 'a.hdr'}"  # a against itself: joined, so two runs
    r = ok(run(shardmark_bin, "compare", same, same, "--fail-on-regression", "10"))
    assert "0 of" in r.stdout and "significantly worse" in r.stdout
    r = run(shardmark_bin, "compare", *a, *b, "--json", "-")
    assert json.loads(r.stdout)["regressions"] == 0  # no gate given: none counted
    # the JSONs alone find their HDR logs beside them (a.json: a.hdr)
    r = ok(run(shardmark_bin, "compare", d / "a.json", d / "b.json", "--json", "-"))
    figs = {f["name"]: f for f in json.loads(r.stdout)["figures"]}
    assert figs["WRITE op/s"]["method"] == "welch" and figs["WRITE op/s"]["verdict"] == "worse"


def test_compare_and_report_psq(shardmark_bin, tmp_path):
    a, b = tmp_path / "psq-a.json", tmp_path / "psq-b.json"
    psq_json(shardmark_bin, a)
    psq_json(shardmark_bin, b)
    r = ok(run(shardmark_bin, "compare", a, b, "--json", "-"))
    figs = {f["name"]: f for f in json.loads(r.stdout)["figures"]}
    assert figs["tps"]["method"] == "welch (median/MAD)"
    assert figs["tps"]["verdict"] in ("no change", "better", "worse")
    assert "allocs/op" in figs
    html = tmp_path / "psq.html"
    ok(run(shardmark_bin, "report", a, b, "-o", html))
    text = html.read_text()
    assert "server ops" in text and "<th>tps (op/s)</th>" in text


def test_compare_usage(shardmark_bin, tmp_path):
    r = run(shardmark_bin, "compare")
    assert r.returncode == 2 and "two runs" in r.stderr
    r = run(shardmark_bin, "compare", "x", "y", "--confidence", "2")
    assert r.returncode == 2 and "0.5..0.9999" in r.stderr
    r = ok(run(shardmark_bin, "compare", "--help"))
    assert "--fail-on-regression" in r.stdout


def test_report_revisions_added_to_a_file(shardmark_bin, stress_runs, tmp_path):
    """cassandra-stress's -graph file= revision=: each run adds a revision to
    the file; the same revision again replaces it; the title stays."""
    d, _ = stress_runs
    html = tmp_path / "graph.html"
    ok(run(shardmark_bin, "report", d / "a.json", d / "a.hdr", "-o", html, "--revision", "r1",
           "--title", "nightly"))
    r = ok(run(shardmark_bin, "report", d / "b.json", d / "b.hdr", "-o", html, "--revision",
               "r2"))
    assert "report of 2 runs" in r.stdout
    text = html.read_text()
    assert "<title>nightly</title>" in text
    assert "WRITE: latency over time, r1" in text and "WRITE: latency over time, r2" in text
    r = ok(run(shardmark_bin, "report", f"{d / 'b.json'},{d / 'b.hdr'}", "-o", html,
               "--revision", "r1"))
    assert "report of 2 runs" in r.stdout  # r1 replaced, not added
    assert html.read_text().count('data-run="r1" data-file=') == 2  # its JSON and HDR log
    # a file that is not a report of ours is neither read nor overwritten
    other = tmp_path / "notes.html"
    other.write_text("<p>mine</p>")
    r = run(shardmark_bin, "report", d / "a.json", "-o", other, "--revision", "x")
    assert r.returncode == 1 and "not a shardmark report" in r.stderr
    assert other.read_text() == "<p>mine</p>"
    r = run(shardmark_bin, "report", d / "a.json", d / "b.json", "-o", tmp_path / "n.html",
            "--revision", "x")
    assert r.returncode == 2 and "--revision names one run" in r.stderr
