# SPDX-License-Identifier: BSD-3-Clause
"""`shardmark stress`: a cassandra-stress compatible load generator, end to end.

Every test runs the real binary against a real `shardmark serve --smp 2` on
loopback (CQL native and shard-aware ports, Alternator, Prometheus):

- cassandra-stress command lines from its documentation run unchanged;
  unsupported ones are refused (exit 2) with an error naming the option;
- the output keeps cassandra-stress's layout (interval header and rows, the
  "Results:" block, END / FAILURE) as the reference stress.md section 2.4
  describes it;
- shard-aware routing costs the server no cross-shard hop, -route none costs
  many (the client's "Routing: N of M" line and the server's
  shardmark_hops_total agree);
- every read is validated against the values its key generates;
- -log json= / hdrfile= and `shardmark stress merge`;
- -mode alternator (PutItem / UpdateItem / conditional UpdateItem, GetItem);
- errors: PasswordAuthenticator, error counts by code, closed ports.

Assertions are about behaviour (counts, layout, exit status), never about
how fast anything runs; the only time-related checks are loose bounds that
define the feature: a -rate fixed= / throttle= run does not exceed its rate
by more than 20 %, and a duration=2s run lasts at least about 2 s. Client shards: always -shards 2, so the run does not
depend on how many CPUs the machine has.
"""

import json
import re
import time
import subprocess

import pytest

from conftest import (allowed_cpus, cql_free_ports, cql_wait_host, free_port, http_get,
                      metric_by_shard, parse_prometheus, start_cql_server)

pytestmark = pytest.mark.skipif(
    allowed_cpus() < 2,
    reason=f"needs 2 allowed CPUs for --smp 2, this process has {allowed_cpus()}")

STRESS_TIMEOUT = 120  # per run; runs take seconds, this only catches a hang
CLIENT_SHARDS = ["-shards", "2"]

# cassandra-stress's periodic table header (stress.md 2.4), exactly.
HEADER = ("type       total ops,    op/s,    pk/s,   row/s,    mean,     med,     .95,"
          "     .99,    .999,     max,   time,   stderr, errors,  gc: #,  max ms,  sum ms,"
          "  sdv ms,      mb")
OP_TYPES = ("WRITE", "READ", "COUNTER_WRITE", "COUNTER_READ")
# "%-10s%10d,%8.0f,%8.0f,%8.0f,%8.1f x6,%7.1f,%9.5f,%7d" + five GC zeros.
ROW = re.compile(
    r"^(?P<type>total|WRITE|READ|COUNTER_WRITE|COUNTER_READ),\s+(?P<ops>\d+),"
    r"\s+(?P<op_s>\d+),\s+(?P<pk_s>\d+),\s+(?P<row_s>\d+),"
    r"(?:\s+\d+\.\d,){6}"
    r"\s+(?P<time>\d+\.\d),\s+(?:\d+\.\d{5}|NaN),\s+(?P<errors>\d+),"
    r"\s+0,\s+0,\s+0,\s+0,\s+0$")

# The Results block (stress.md 2.4): label, value pattern, unit suffix, whether
# a per-op bracket follows.
RATE = r"(?P<v> *[\d,]+)"
LAT = r"(?P<v> *\d+\.\d)"
COUNT = r"(?P<v> *[\d,]+)"
BRACKET = r" \[(?P<b>[^\]]*)\]"
RESULT_LINES = [
    ("op_rate", r"Op rate                   : " + RATE + r" op/s  " + r"\[(?P<b>[^\]]*)\]"),
    ("pk_rate", r"Partition rate            : " + RATE + r" pk/s  " + r"\[(?P<b>[^\]]*)\]"),
    ("row_rate", r"Row rate                  : " + RATE + r" row/s" + BRACKET),
    ("lat_mean", r"Latency mean              : " + LAT + r" ms" + BRACKET),
    ("lat_med", r"Latency median            : " + LAT + r" ms" + BRACKET),
    ("lat_95", r"Latency 95th percentile   : " + LAT + r" ms" + BRACKET),
    ("lat_99", r"Latency 99th percentile   : " + LAT + r" ms" + BRACKET),
    ("lat_999", r"Latency 99\.9th percentile : " + LAT + r" ms" + BRACKET),
    ("lat_max", r"Latency max               : " + LAT + r" ms" + BRACKET),
    ("partitions", r"Total partitions          : " + COUNT + BRACKET),
    ("errors", r"Total errors              : " + COUNT + BRACKET),
    ("gc_count", r"Total GC count            : 0"),
    ("gc_memory", r"Total GC memory           : 0\.000 KiB"),
    ("gc_time", r"Total GC time             :    0\.0 seconds"),
    ("gc_avg", r"Avg GC time               :    NaN ms"),
    ("gc_sdv", r"StdDev GC time            :    0\.0 ms"),
    ("op_time", r"Total operation time      : (?P<v>\d\d:[0-5]\d:[0-5]\d)"),
]
# Java's %,Nd / %,N.0f / %N.1f: at least N wide, right-aligned.
RESULT_WIDTH = {"op_rate": 8, "pk_rate": 8, "row_rate": 8, "partitions": 10, "errors": 10,
                "lat_mean": 6, "lat_med": 6, "lat_95": 6, "lat_99": 6, "lat_999": 6,
                "lat_max": 6}

ROUTING = re.compile(r"^Routing: (\d+) of (\d+) requests went to a connection whose server "
                     r"shard does not own the key \(cross-shard hops on the server\)$", re.M)
ERRORS = re.compile(r"^Errors: \d+ x .+$", re.M)  # our per-code error lines
VALIDATION = re.compile(r"^Read validation: (\d+) rows did not hold the values their key "
                        r"generates$", re.M)


# --- helpers ------------------------------------------------------------------

def num(s):
    """'  1,234' -> 1234 (cassandra-stress's grouped numbers)."""
    return int(s.strip().replace(",", ""))


def describe(r):
    return (f"command: {' '.join(map(str, r.args))}\nexit: {r.returncode}\n"
            f"--- stdout ---\n{r.stdout}\n--- stderr ---\n{r.stderr}")


def parse_bracket(text):
    """'READ: 8,514 op/s, WRITE: 8,131 op/s' -> {'READ': '8,514', 'WRITE': '8,131'}."""
    out = {}
    for part in text.split(", "):
        m = re.fullmatch(r"([A-Z_]+): (-?[\d,.]+|NaN)(?: (?:op/s|pk/s|row/s|ms))?", part)
        assert m, f"bracket entry {part!r} in [{text}]"
        out[m.group(1)] = m.group(2)
    return out


def interval_rows(stdout):
    """The periodic table: exactly one header, then rows -> list of match dicts."""
    lines = stdout.splitlines()
    headers = [i for i, line in enumerate(lines) if line.startswith("type ")]
    assert len(headers) == 1, f"expected one interval header, got {len(headers)}\n{stdout}"
    assert lines[headers[0]] == HEADER, \
        f"interval header differs from cassandra-stress's:\n{lines[headers[0]]!r}\n{HEADER!r}"
    rows = []
    for line in lines[headers[0] + 1:]:
        if not line.strip():
            break
        m = ROW.match(line)
        assert m, f"interval row not in cassandra-stress's layout: {line!r}"
        # Fixed widths: every row is as long as the header (no field overflows here).
        assert len(line) == len(HEADER), f"row width {len(line)} != {len(HEADER)}: {line!r}"
        rows.append(m.groupdict())
    assert rows, f"no interval rows after the header\n{stdout}"
    assert rows[-1]["type"] == "total", f"the last interval row is not total,\n{stdout}"
    return rows


def parse_results(stdout, end="END"):
    """Check the Results block line by line, in order, then the final END or
    FAILURE; -> {key: (value, {op: value})}."""
    lines = stdout.splitlines()
    assert "Results:" in lines, f"no Results: block\n{stdout}"
    i = lines.index("Results:")
    assert i >= 2 and lines[i - 1] == "" and lines[i - 2] == "", \
        f"Results: must follow two blank lines\n{stdout}"
    got = {}
    for k, (key, pattern) in enumerate(RESULT_LINES):
        line = lines[i + 1 + k] if i + 1 + k < len(lines) else ""
        m = re.fullmatch(pattern, line)
        assert m, f"Results line {k + 1} should match {pattern!r}, got {line!r}\n{stdout}"
        gd = m.groupdict()
        v = gd.get("v")
        if key in RESULT_WIDTH:
            w = RESULT_WIDTH[key]
            assert len(v) >= w and (len(v) == w or not v.startswith(" ")), \
                f"{key}: {v!r} is not right-aligned in {w} columns"
        got[key] = (v.strip() if v is not None else None,
                    parse_bracket(gd["b"]) if gd.get("b") is not None else None)
    rest = lines[i + 1 + len(RESULT_LINES):]
    assert rest[:2] == ["", end], \
        f"expected a blank line and {end} after the Results block, got {rest[:3]}\n{stdout}"
    assert all(not line.strip() for line in rest[2:]), f"output after {end}: {rest[2:]}"
    return got


def hops_total(srv):
    status, _, body = http_get(srv.prom_port, "/metrics")
    assert status == 200, f"/metrics: HTTP {status}"
    by_shard = metric_by_shard(parse_prometheus(body), "shardmark_hops_total")
    assert set(by_shard) == {"0", "1"}, f"shardmark_hops_total by shard: {by_shard}"
    return sum(by_shard.values())


# --- fixtures -----------------------------------------------------------------

@pytest.fixture(scope="module")
def server(shardmark_bin, tmp_path_factory):
    """One `shardmark serve --smp 2` for the module: CQL (.cql_port,
    .shard_port), Alternator (.alt_port), Prometheus (.prom_port)."""
    alt = free_port()
    while alt in (native_ports := cql_free_ports()):
        alt = free_port()
    srv = start_cql_server(shardmark_bin, tmp_path_factory.mktemp("stress"),
                           "--alternator-port", alt, ports=native_ports)
    try:
        cql_wait_host(srv, "127.0.0.1", alt)
    except BaseException:
        srv.kill()
        raise
    srv.alt_port = alt
    yield srv
    srv.kill()


@pytest.fixture(scope="module")
def stress_bin(shardmark_bin):
    def run(*args, timeout=STRESS_TIMEOUT):
        return subprocess.run([str(shardmark_bin), "stress", *map(str, args)],
                              stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              errors="replace", timeout=timeout)
    return run


@pytest.fixture(scope="module")
def cql(server, stress_bin):
    """stress(cmdline...) against the module server's CQL port, 2 client shards."""
    def run(*args, **kw):
        return stress_bin(*args, "-node", "127.0.0.1", "-port", f"native={server.cql_port}",
                          *CLIENT_SHARDS, **kw)
    return run


@pytest.fixture(scope="module")
def alt_stress(server, stress_bin):
    """stress(cmdline...) in -mode alternator against the module server."""
    def run(*args, mode=("-mode", "alternator"), **kw):
        return stress_bin(*args, *mode, "-node", "127.0.0.1", "-port",
                          f"alternator={server.alt_port}", *CLIENT_SHARDS, **kw)
    return run


@pytest.fixture(scope="module")
def written(cql):
    """cassandra-stress's documented first step: write n=10000 (keys 1..10000,
    -pop seq=1..10000 by default). Later reads of those keys validate."""
    r = cql("write", "n=10000", "cl=ONE", "-rate", "threads=20")
    assert r.returncode == 0, describe(r)
    return r


def ok(r):
    assert r.returncode == 0, describe(r)
    return r


# --- help and refused command lines --------------------------------------------

@pytest.mark.parametrize("args", [["help"], ["--help"], ["-h"], ["-?"]],
                         ids=["help", "--help", "-h", "-?"])
def test_help_exits_0(stress_bin, args):
    r = stress_bin(*args)
    assert r.returncode == 0, describe(r)
    assert r.stdout.startswith("Usage: shardmark stress"), describe(r)
    for word in ("write", "read", "mixed", "counter_write", "counter_read", "-rate", "-pop",
                 "-route", "-shards", "alternator"):
        assert word in r.stdout, f"help does not mention {word}\n{r.stdout}"


@pytest.mark.parametrize("topic,want,not_want", [("write", "n=N[k|m|b]", "-rate threads="),
                                                 ("-rate", "-rate threads=", "n=N[k|m|b]")])
def test_help_topic_prints_that_part(stress_bin, topic, want, not_want):
    """As cassandra-stress's `help write`: only that command's or option's help."""
    r = stress_bin("help", topic)
    assert r.returncode == 0, describe(r)
    assert r.stdout.startswith("Usage: shardmark stress"), describe(r)
    assert want in r.stdout and not_want not in r.stdout, describe(r)


def test_no_arguments_is_a_usage_error(stress_bin):
    r = stress_bin()
    assert r.returncode == 2, describe(r)
    assert "Usage: shardmark stress" in r.stderr, describe(r)
    assert r.stdout == "", describe(r)


@pytest.mark.parametrize("args,names", [
    (["write", "n=10", "-graph", "file=x.html", "op=X"], "op="),
    (["write", "n=10", "-rate", "auto", "threads=4"], "auto"),
    (["write", "n=10", "-rate", "search", "start=10/s"], "bound="),
    (["write", "n=10", "-no-such-option", "x"], "-no-such-option"),
    (["write", "n=10", "-sendto", "127.0.0.1"], "-sendto"),
    (["write", "n=10", "-transport", "truststore=x"], "-transport"),
    (["write", "n=10", "-insert", "partitions=fixed(1)"], "-insert"),
    (["write", "n=10", "-tokenrange", "splits=0"], "-tokenrange"),
    (["write", "err<0.02"], "err<"),
    (["write", "n=10", "-mode", "thrift"], "thrift"),
    (["no_such_command", "n=10"], "no_such_command"),
], ids=["graph-op", "rate-auto-with-threads", "rate-search-without-bound", "unknown-option", "sendto",
        "transport", "insert", "tokenrange", "err-less-than", "thrift", "unknown-command"])
def test_unsupported_options_are_refused(stress_bin, args, names):
    r = stress_bin(*args, "-node", "127.0.0.1")
    assert r.returncode == 2, describe(r)
    assert names in r.stderr, f"the error does not name {names!r}\n{describe(r)}"
    assert r.stderr.startswith("shardmark stress: "), describe(r)
    assert "Results:" not in r.stdout and "END" not in r.stdout, describe(r)


# --- documented command lines run, in cassandra-stress's layout ----------------

def test_write_documented_command_line(written):
    r = written
    out = r.stdout
    assert "******************** Stress Settings ********************" in out, out
    assert "Running WRITE with 20 threads for 10000 iteration" in out, out
    rows = interval_rows(out)
    assert {row["type"] for row in rows} == {"total"}, "one op type: total rows only"
    totals = [int(row["ops"]) for row in rows]
    assert totals == sorted(totals), f"cumulative total ops decrease: {totals}"
    assert totals[-1] == 10000, f"last interval row: {totals[-1]} ops, expected 10000"
    res = parse_results(out)
    assert num(res["partitions"][0]) == 10000, res["partitions"]
    assert res["partitions"][1] == {"WRITE": "10,000"}, res["partitions"]
    assert num(res["errors"][0]) == 0 and res["errors"][1] == {"WRITE": "0"}, res["errors"]
    assert num(res["op_rate"][0]) > 0, res["op_rate"]
    assert set(res["op_rate"][1]) == {"WRITE"}, res["op_rate"]
    # Latencies are ordered: median <= 95th <= 99th <= 99.9th <= max.
    lat = [float(res[k][0]) for k in ("lat_med", "lat_95", "lat_99", "lat_999", "lat_max")]
    assert lat == sorted(lat), f"latency percentiles out of order: {lat}"
    assert not VALIDATION.search(out) and not ERRORS.search(out), out


def test_read_uniform_population(written, cql):
    r = ok(cql("read", "n=5000", "cl=ONE", "-pop", "dist=UNIFORM(1..10000)", "-rate",
               "threads=20"))
    interval_rows(r.stdout)
    res = parse_results(r.stdout)
    assert num(res["partitions"][0]) == 5000, res["partitions"]
    assert res["partitions"][1] == {"READ": "5,000"}, res["partitions"]
    assert num(res["errors"][0]) == 0, res["errors"]
    assert not VALIDATION.search(r.stdout), r.stdout


def test_mixed_ratio(written, cql):
    r = ok(cql("mixed", "ratio(write=1,read=1)", "n=4000", "cl=ONE",
               "-pop", "dist=UNIFORM(1..10000)", "-rate", "threads=20"))
    rows = interval_rows(r.stdout)
    types = {row["type"] for row in rows}
    assert types == {"WRITE", "READ", "total"}, f"interval row types {types}\n{r.stdout}"
    # Each interval: the per-op rows, then total; the per-op totals add up.
    last = {}
    for row in rows:
        if row["type"] == "total":
            assert sum(last.values()) == int(row["ops"]), \
                f"per-op cumulative ops {last} do not add up to total {row['ops']}"
        else:
            last[row["type"]] = int(row["ops"])
    assert int(rows[-1]["ops"]) == 4000, rows[-1]
    res = parse_results(r.stdout)
    assert num(res["partitions"][0]) == 4000, res["partitions"]
    per_op = {k: num(v) for k, v in res["partitions"][1].items()}
    assert set(per_op) == {"READ", "WRITE"} and sum(per_op.values()) == 4000, per_op
    assert per_op["READ"] > 0 and per_op["WRITE"] > 0, per_op
    # The bracket lists op types sorted by name, as cassandra-stress's TreeMap.
    for key, _ in RESULT_LINES:
        if res[key][1] is not None:
            assert list(res[key][1]) == ["READ", "WRITE"], (key, res[key])
    assert num(res["errors"][0]) == 0, res["errors"]


# cassandra-stress keeps op types in a TreeMap (StressMetrics.opTypeToCurrentTimingInterval)
def test_mixed_interval_rows_sorted_like_cassandra_stress(written, cql):
    r = ok(cql("mixed", "ratio(write=1,read=1)", "n=2000", "no-warmup",
               "-pop", "dist=UNIFORM(1..10000)", "-rate", "threads=10", "-log", "no-settings"))
    rows = interval_rows(r.stdout)
    order = [row["type"] for row in rows if row["type"] != "total"]
    groups = [order[i:i + 2] for i in range(0, len(order), 2)]
    assert all(g == ["READ", "WRITE"] for g in groups), f"per-op row order: {order}"


def test_counter_write_then_counter_read(cql):
    w = ok(cql("counter_write", "n=2000", "-rate", "threads=20"))
    res = parse_results(w.stdout)
    assert res["partitions"][1] == {"COUNTER_WRITE": "2,000"}, res["partitions"]
    assert num(res["errors"][0]) == 0, res["errors"]
    # counter_read's default population: GAUSSIAN(1..1000), all written above.
    r = ok(cql("counter_read", "n=1000", "-rate", "threads=20"))
    interval_rows(r.stdout)
    res = parse_results(r.stdout)
    assert res["partitions"][1] == {"COUNTER_READ": "1,000"}, res["partitions"]
    assert num(res["errors"][0]) == 0, res["errors"]
    assert not VALIDATION.search(r.stdout), r.stdout


def test_write_duration(cql):
    r = ok(cql("write", "duration=2s", "no-warmup", "-rate", "threads=20"))
    assert "Running WRITE with 20 threads for 2 seconds" in r.stdout, r.stdout
    rows = interval_rows(r.stdout)
    res = parse_results(r.stdout)
    total = num(res["partitions"][0])
    assert total > 0 and total == int(rows[-1]["ops"]), (total, rows[-1])
    # A duration run lasts at least its duration (a lower bound, not a timing).
    assert float(rows[-1]["time"]) >= 1.9, rows[-1]
    assert num(res["errors"][0]) == 0, res["errors"]
    assert "\x1b" not in r.stdout, "a pipe gets no progress line"


def test_progress_line_on_a_terminal(server, shardmark_bin):
    """On a terminal, a line under the interval rows says how far the run
    is (ops, rate, p99, ETA), redrawn in place and erased before the next
    row, so the rows and the Results block read as they do in a pipe."""
    import os
    import pty
    master, slave = pty.openpty()
    p = subprocess.Popen([str(shardmark_bin), "stress", "write", "duration=3s", "no-warmup",
                          "-rate", "threads=8", "-node", "127.0.0.1", "-port",
                          f"native={server.cql_port}", *CLIENT_SHARDS],
                         stdin=subprocess.DEVNULL, stdout=slave, stderr=subprocess.PIPE,
                         env={**os.environ, "TERM": "xterm"})
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    assert p.wait(timeout=STRESS_TIMEOUT) == 0, p.stderr.read()
    text = out.decode(errors="replace").replace("\r\n", "\n")
    progress = re.findall(r"\r\x1b\[K\[\s*(\d+)%\] (\d+) ops, (\d+) op/s, p99 \d+\.\d{3} ms, "
                          r"ETA 0m0\ds", text)
    assert progress, text[-2000:]
    assert all(0 <= int(pct) <= 100 and int(ops) > 0 for pct, ops, _ in progress), progress
    # erased: what remains once every drawn line is removed parses as in a pipe
    plain = re.sub(r"\r\x1b\[K(\[[^\n\r]*?ETA 0m0\ds)?", "", text)
    assert interval_rows(plain) and parse_results(plain)["partitions"], plain[-2000:]


@pytest.mark.parametrize("kind", ["fixed", "throttle"])
def test_rate_limit(cql, kind):
    rate = 500
    r = ok(cql("write", "n=1000", "-rate", "threads=10", f"{kind}={rate}/s"))
    interval_rows(r.stdout)
    res = parse_results(r.stdout)
    assert num(res["partitions"][0]) == 1000, res["partitions"]
    op_rate = num(res["op_rate"][0])
    assert 0 < op_rate <= 1.2 * rate, f"-rate {kind}={rate}/s ran at {op_rate} op/s"
    assert "Latency from the intended start (response time" in r.stdout, r.stdout
    assert "Latency from the send (service time)" in r.stdout, r.stdout
    which = "first" if kind == "fixed" else "second"
    assert f"(cassandra-stress prints the {which} for -rate {kind}=)" in r.stdout, r.stdout
    # The loader's cost per op is its busy time; the polling between
    # scheduled starts is reported apart as idle.
    m = re.search(r"^Client: 2 shards, 10 threads; loader CPU [\d.]+ s for 1000 ops: "
                  r"busy ([\d.]+) s = ([\d.]+) us/op .*, idle polling ([\d.]+) s$",
                  r.stdout, re.M)
    assert m, r.stdout


# --- routing: shard-aware runs cost no hop, -route none costs many ---------------

def test_shard_aware_run_has_no_cross_shard_hops(server, cql):
    before = hops_total(server)
    r = ok(cql("write", "n=5000", "-rate", "threads=20", "-log", "no-settings"))
    after = hops_total(server)
    assert re.search(r"^Routing: token-aware, shard-aware: 2 shards per host through port "
                     rf"{server.shard_port}\b", r.stdout, re.M), r.stdout
    m = ROUTING.search(r.stdout)
    assert m, f"no Routing: N of M line\n{r.stdout}"
    misrouted, routed = int(m.group(1)), int(m.group(2))
    assert misrouted == 0 and routed >= 5000, m.group(0)
    assert after == before, f"server hops grew by {after - before} during a shard-aware run"


def test_route_none_causes_cross_shard_hops(server, cql):
    before = hops_total(server)
    # no-warmup: then every request the client counts is one the server counts.
    r = ok(cql("write", "n=5000", "no-warmup", "-rate", "threads=20", "-route", "none",
               "-log", "no-settings"))
    after = hops_total(server)
    m = ROUTING.search(r.stdout)
    assert m, f"no Routing: N of M line\n{r.stdout}"
    misrouted, routed = int(m.group(1)), int(m.group(2))
    assert routed >= 5000 and misrouted > 0.2 * routed, m.group(0)
    delta = after - before
    assert abs(delta - misrouted) <= 0.1 * misrouted, \
        f"client reports {misrouted} misrouted requests, server hops grew by {delta}"


# --- read validation ---------------------------------------------------------------

def test_reads_of_written_keys_validate(written, cql):
    r = ok(cql("read", "n=2000", "-pop", "seq=1..2000", "-rate", "threads=20"))
    res = parse_results(r.stdout)
    assert num(res["partitions"][0]) == 2000, res["partitions"]
    assert num(res["errors"][0]) == 0, res["errors"]
    assert not VALIDATION.search(r.stdout), r.stdout
    assert not ERRORS.search(r.stdout), r.stdout


def test_reads_of_missing_keys_counted_with_errors_ignore(cql, tmp_path):
    report = tmp_path / "r.json"
    r = cql("read", "n=200", "-pop", "seq=1000001..1000200", "-rate", "threads=10",
            "-errors", "ignore", "-log", "no-settings", f"json={report}")
    assert r.returncode == 0, describe(r)
    m = VALIDATION.search(r.stdout)
    assert m and int(m.group(1)) > 0, f"no Read validation: line\n{r.stdout}"
    # a missing row is told apart from a row with wrong values
    assert re.search(r"^Errors: 200 x read validation failed: no such row$", r.stdout, re.M), \
        r.stdout
    res = parse_results(r.stdout, end="END")
    assert num(res["errors"][0]) == 200, res["errors"]
    assert res["errors"][1] == {"READ": "200"}, res["errors"]
    j = json.loads(report.read_text())
    assert j["errors"] == 200 and j["ops"] == 0 and j["failure"] is False, j
    assert j["read_validation_failures"] > 0, j
    assert [(e["what"], e["count"]) for e in j["errors_by_code"]] == \
        [("read validation failed: no such row", 200)], j["errors_by_code"]


def test_reads_of_missing_keys_fail_the_run(cql):
    r = cql("read", "n=200", "no-warmup", "-pop", "seq=1000001..1000200",
            "-rate", "threads=10", "-log", "no-settings")
    assert r.returncode != 0, describe(r)
    parse_results(r.stdout, end="FAILURE")
    assert VALIDATION.search(r.stdout), r.stdout
    assert "read validation failed on READ" in r.stderr, describe(r)
    assert "-errors ignore" in r.stderr, describe(r)
    # the cause, and the write that fixes it: the same population
    assert "were never written" in r.stderr, describe(r)
    assert "shardmark stress write n=200 -pop seq=1000001..1000200" in r.stderr, describe(r)


def test_read_validation_failure_in_warmup_names_the_cause(cql):
    """A failure in the warm-up ends the run (cassandra-stress: "Failed to
    execute warmup") with the failure's own reason on stderr, not a
    connection closing because the run stops."""
    r = cql("read", "n=200", "-pop", "seq=1000001..1000200", "-rate", "threads=10",
            "-log", "no-settings")
    assert r.returncode != 0, describe(r)
    assert "Warming up READ" in r.stdout, r.stdout
    assert "validation" in r.stderr, describe(r)
    assert "(-pop seq=1000001..1000200) were never written" in r.stderr, describe(r)
    assert "the shard is stopping" not in r.stderr, describe(r)


def test_read_validation_counts_reads_not_tries(cql, tmp_path):
    """200 reads of missing keys, each tried 10 times (retries=9): 200
    validation failures, as many as failed reads, not 2000."""
    report = tmp_path / "r.json"
    r = ok(cql("read", "n=200", "no-warmup", "-pop", "seq=1000001..1000200",
               "-rate", "threads=10", "-errors", "ignore", "-log", "no-settings",
               f"json={report}"))
    m = VALIDATION.search(r.stdout)
    assert m, r.stdout
    assert int(m.group(1)) == 200, m.group(0)
    assert json.loads(report.read_text())["read_validation_failures"] == 200


def test_skip_read_validation(cql, tmp_path):
    """-errors skip-read-validation: reads of missing keys succeed with no rows."""
    report = tmp_path / "skip.json"
    r = ok(cql("read", "n=300", "-pop", "seq=1000001..1000300", "-rate", "threads=10",
               "-errors", "skip-read-validation", "-log", "no-settings", f"json={report}"))
    res = parse_results(r.stdout)
    assert num(res["partitions"][0]) == 300 and num(res["errors"][0]) == 0, res
    assert num(res["row_rate"][0]) == 0, res["row_rate"]
    assert not VALIDATION.search(r.stdout), r.stdout
    j = json.loads(report.read_text())
    assert j["ops"] == 300 and j["rows"] == 0 and j["errors"] == 0, j
    assert j["read_validation_failures"] == 0, j


def test_lz4_compression(written, cql):
    mode = ["-mode", "native", "cql3", "compression=lz4"]
    w = ok(cql("write", "n=1000", "-pop", "seq=1..1000", "-rate", "threads=10", *mode,
               "-log", "no-settings"))
    res = parse_results(w.stdout)
    assert num(res["partitions"][0]) == 1000 and num(res["errors"][0]) == 0, res
    r = ok(cql("read", "n=1000", "-pop", "seq=1..1000", "-rate", "threads=10", *mode,
               "-log", "no-settings"))
    res = parse_results(r.stdout)
    assert num(res["partitions"][0]) == 1000 and num(res["errors"][0]) == 0, res
    assert not VALIDATION.search(r.stdout), r.stdout


# --- -log json= / hdrfile= and stress merge --------------------------------------

def test_json_report_hdr_log_and_merge(cql, stress_bin, tmp_path):
    from concurrent.futures import ThreadPoolExecutor
    j1, h1, h2 = tmp_path / "run1.json", tmp_path / "run1.hdr", tmp_path / "run2.hdr"
    # Two loaders at the same time, as merge expects (a throttle keeps them both running).
    with ThreadPoolExecutor(2) as ex:
        f1 = ex.submit(cql, "write", "n=3000", "-rate", "threads=10", "throttle=1500/s",
                       "-log", "no-settings", f"hdrfile={h1}", f"json={j1}")
        f2 = ex.submit(cql, "write", "n=2000", "-rate", "threads=10", "throttle=1000/s",
                       "-log", "no-settings", f"hdrfile={h2}")
        r1, r2 = ok(f1.result()), ok(f2.result())
    for r in (r1, r2):
        parse_results(r.stdout)

    j = json.loads(j1.read_text())
    assert j["command"] == "stress write" and j["api"] == "cql", j
    assert j["client_shards"] == 2 and j["threads"] == 10, j
    assert j["ops"] == 3000 and j["rows"] == 3000 and j["errors"] == 0, j
    assert j["failure"] is False and j["read_validation_failures"] == 0, j
    assert j["errors_by_code"] == [], j
    assert j["ops_per_s"] > 0 and j["seconds"] > 0, j
    assert j["client_cpu_s"] > 0 and j["ops_per_client_cpu_s"] > 0, j
    assert j["client_busy_s"] > 0 and j["client_idle_s"] >= 0, j
    assert j["client_busy_us_per_op"] == pytest.approx(j["client_busy_s"] * 1e6 / 3000, rel=1e-3), j
    assert j["rate"] == {"kind": "throttle", "ops_per_s": 1500}, j
    routing = j["routing"]
    assert routing["scylla"] is True and routing["shard_aware"] is True, routing
    assert routing["token_aware"] is True, routing
    assert routing["misrouted"] == 0 and routing["routed"] >= 3000, routing
    m = ROUTING.search(r1.stdout)
    assert m and int(m.group(1)) == routing["misrouted"] and int(m.group(2)) == routing["routed"]
    for hist in (j["service_time"], j["response_time"], j["ops_by_type"]["WRITE"]["service_time"]):
        assert hist["count"] == 3000, hist
        assert 0 < hist["p50_ms"] <= hist["p99_ms"] <= hist["p999_ms"] <= hist["max_ms"], hist
    assert j["ops_by_type"]["WRITE"]["ops"] == 3000, j["ops_by_type"]
    assert set(j["ops_by_type"]) == {"WRITE"}, j["ops_by_type"]

    for h in (h1, h2):
        text = h.read_text()
        assert text.startswith("#"), f"{h}: not an HdrHistogram log:\n{text[:300]}"
        assert re.search(r"^Tag=WRITE-st,", text, re.M), text[:500]
    m = ok(stress_bin("merge", h1, h2))
    lines = m.stdout.splitlines()
    assert lines and lines[0].split()[:3] == ["tag", "count", "op/s"], m.stdout
    counts = {}
    for line in lines[1:]:
        f = line.split()
        if f and re.fullmatch(r"[A-Z_]+-[a-z]+", f[0]):
            counts[f[0]] = int(f[1])
    assert counts.get("WRITE-st") == 5000 and counts.get("WRITE-rt") == 5000, \
        f"merged counts {counts}, expected 3000 + 2000 for WRITE-st and WRITE-rt\n{m.stdout}"


def test_csv_log(written, cql, tmp_path):
    """-log csv=: a header, then a row per interval and op type, and "total"."""
    out = tmp_path / "m.csv"
    ok(cql("mixed", "ratio(write=1,read=1)", "duration=2s", "-rate", "threads=8",
           "-pop", "dist=UNIFORM(1..10000)", "-log", "no-settings", f"csv={out}"))
    lines = out.read_text().splitlines()
    assert lines[0] == ("interval,seconds,type,total_ops,ops_per_s,partitions_per_s,rows_per_s,"
                        "mean_ms,p50_ms,p95_ms,p99_ms,p999_ms,max_ms,errors"), lines[0]
    rows = [l.split(",") for l in lines[1:]]
    assert {r[2] for r in rows} == {"READ", "WRITE", "total"}, rows
    intervals = sorted({int(r[0]) for r in rows})
    assert intervals == list(range(1, len(intervals) + 1)) and len(intervals) >= 2, rows
    assert all(len(r) == 14 for r in rows), rows


def test_merge_refuses_logs_that_did_not_run_together(cql, stress_bin, tmp_path):
    h1, h2 = tmp_path / "a.hdr", tmp_path / "b.hdr"
    ok(cql("write", "n=500", "-rate", "threads=4", "-log", "no-settings", f"hdrfile={h1}"))
    time.sleep(1.5)
    ok(cql("write", "n=500", "-rate", "threads=4", "-log", "no-settings", f"hdrfile={h2}"))
    r = stress_bin("merge", h1, h2)
    assert r.returncode == 1 and "did not run at the same time" in r.stderr, describe(r)
    r = stress_bin("merge", "--allow-disjoint", h1, h2)
    assert r.returncode == 0 and "WARNING: " in r.stderr and "WRITE-st" in r.stdout, describe(r)


def test_merge_errors(stress_bin, tmp_path):
    r = stress_bin("merge")
    assert r.returncode == 2 and "usage: shardmark stress merge" in r.stderr, describe(r)
    missing = tmp_path / "missing.hdr"
    r = stress_bin("merge", missing)
    assert r.returncode == 2 and str(missing) in r.stderr, describe(r)
    garbage = tmp_path / "garbage.hdr"
    garbage.write_text("Tag=WRITE-st,0.000,1.000,1.0,not-base64!!\n")
    r = stress_bin("merge", garbage)
    assert r.returncode != 0 and str(garbage) in r.stderr, describe(r)


# --- Alternator ---------------------------------------------------------------------

def test_alternator_write_then_read_validated(alt_stress, tmp_path):
    w = ok(alt_stress("write", "n=2000", "-rate", "threads=20", "-log", "no-settings"))
    interval_rows(w.stdout)
    res = parse_results(w.stdout)
    assert res["partitions"][1] == {"WRITE": "2,000"} and num(res["errors"][0]) == 0, res
    report = tmp_path / "alt.json"
    r = ok(alt_stress("read", "n=2000", "-pop", "seq=1..2000", "-rate", "threads=20",
                      "-log", "no-settings", f"json={report}"))
    res = parse_results(r.stdout)
    assert res["partitions"][1] == {"READ": "2,000"} and num(res["errors"][0]) == 0, res
    assert not VALIDATION.search(r.stdout), r.stdout
    j = json.loads(report.read_text())
    assert j["api"] == "alternator" and j["ops"] == 2000 and j["errors"] == 0, j
    assert j["read_validation_failures"] == 0, j


@pytest.mark.parametrize("op", ["update", "update-conditional"])
def test_alternator_update_writes(alt_stress, op):
    r = ok(alt_stress("write", "n=1000", "-rate", "threads=10", "-log", "no-settings",
                      mode=("-mode", "alternator", f"op={op}")))
    res = parse_results(r.stdout)
    assert res["partitions"][1] == {"WRITE": "1,000"}, res["partitions"]
    assert num(res["errors"][0]) == 0, res["errors"]
    # What the updates wrote reads back and validates.
    rd = ok(alt_stress("read", "n=1000", "-pop", "seq=1..1000", "-rate", "threads=10",
                       "-log", "no-settings"))
    res = parse_results(rd.stdout)
    assert num(res["errors"][0]) == 0 and not VALIDATION.search(rd.stdout), rd.stdout


def test_alternator_reads_of_missing_items_fail_validation(alt_stress):
    r = ok(alt_stress("read", "n=100", "no-warmup", "-pop", "seq=2000001..2000100",
                      "-rate", "threads=4", "-errors", "ignore", "-log", "no-settings"))
    assert VALIDATION.search(r.stdout), r.stdout
    res = parse_results(r.stdout)
    assert num(res["errors"][0]) == 100, res["errors"]


def test_alternator_read_before_write_names_the_cause(alt_stress):
    r = alt_stress("read", "n=50", "-pop", "dist=UNIFORM(3000001..3000050)", "-rate", "threads=4",
                   "-log", "no-settings")
    assert r.returncode != 0, describe(r)
    assert "(-pop dist=UNIFORM(3000001..3000050)) were never written" in r.stderr, describe(r)
    assert "shardmark stress write n=50 -pop seq=3000001..3000050" in r.stderr, describe(r)


def test_alternator_closed_port(stress_bin):
    port = free_port()
    r = stress_bin("write", "n=100", "-mode", "alternator", "-node", "127.0.0.1",
                   "-port", f"alternator={port}", *CLIENT_SHARDS, "-log", "no-settings")
    assert r.returncode == 1, describe(r)
    assert f"127.0.0.1:{port}" in r.stderr, describe(r)
    assert "Results:" not in r.stdout, describe(r)


def test_cql_closed_port(stress_bin):
    port = free_port()
    r = stress_bin("write", "n=100", "-node", "127.0.0.1", "-port", f"native={port}",
                   *CLIENT_SHARDS, "-log", "no-settings")
    assert r.returncode == 1, describe(r)
    assert f"127.0.0.1:{port}" in r.stderr, describe(r)
    assert "Results:" not in r.stdout, describe(r)


def test_plain_cassandra_protocol_server_fallback():
    pytest.skip("needs a plain (not ScyllaDB-extended) Cassandra-protocol server, which "
                "this machine does not have")


# --- errors: authentication, counts by code -------------------------------------------

def test_password_authenticator(serve, stress_bin):
    native, shard_aware, prom = cql_free_ports()
    srv = serve("--smp", "2", "--native-transport-port", native,
                "--native-shard-aware-transport-port", shard_aware,
                "--authenticator", "PasswordAuthenticator",
                "--auth-superuser-name", "bob", "--auth-superuser-password", "s3cret",
                echo=False, prometheus=prom, ready=False)
    srv.wait_ready(ports=[native, shard_aware, prom])
    base = ["write", "n=500", "-rate", "threads=4", "-node", "127.0.0.1",
            "-port", f"native={native}", *CLIENT_SHARDS]

    r = stress_bin(*base, "-log", "no-settings")
    assert r.returncode == 1, describe(r)
    assert "authentication" in r.stderr and "password=" in r.stderr, describe(r)
    assert "Results:" not in r.stdout, describe(r)

    r = stress_bin(*base, "-mode", "native", "cql3", "user=bob", "password=wrong",
                   "-log", "no-settings")
    assert r.returncode == 1, describe(r)
    assert "0x0100" in r.stderr or "incorrect" in r.stderr, describe(r)
    assert "Results:" not in r.stdout, describe(r)

    r = ok(stress_bin(*base, "-mode", "native", "cql3", "user=bob", "password=s3cret"))
    assert "Username: bob" in r.stdout, r.stdout
    res = parse_results(r.stdout)
    assert num(res["partitions"][0]) == 500 and num(res["errors"][0]) == 0, res


def test_errors_counted_by_code(serve, stress_bin, tmp_path):
    """forbid_rmw refuses every conditional UpdateItem with HTTP 400."""
    alt, native, shard_aware, prom = cql_free_ports(4)
    srv = serve("--smp", "2", "--alternator-port", alt, "--native-transport-port", native,
                "--native-shard-aware-transport-port", shard_aware,
                "--alternator-write-isolation", "forbid_rmw",
                echo=False, prometheus=prom, ready=False)
    srv.wait_ready(ports=[alt, prom])
    base = ["write", "n=100", "no-warmup", "-rate", "threads=4",
            "-mode", "alternator", "op=update-conditional", "-node", "127.0.0.1",
            "-port", f"alternator={alt}", *CLIENT_SHARDS]

    report = tmp_path / "errors.json"
    r = ok(stress_bin(*base, "-errors", "ignore", "-log", "no-settings", f"json={report}"))
    assert re.search(r"^Errors: 100 x HTTP 400$", r.stdout, re.M), r.stdout
    res = parse_results(r.stdout)
    assert num(res["errors"][0]) == 100 and res["errors"][1] == {"WRITE": "100"}, res["errors"]
    assert num(res["partitions"][0]) == 0, res["partitions"]
    j = json.loads(report.read_text())
    assert j["errors"] == 100 and j["ops"] == 0, j
    assert j["errors_by_code"] == [{"code": 400, "what": "HTTP 400", "count": 100}], j

    r = stress_bin(*base, "-log", "no-settings")
    assert r.returncode == 1, describe(r)
    parse_results(r.stdout, end="FAILURE")
    assert "HTTP 400" in r.stderr, describe(r)


class DropNthProxy:
    """A TCP proxy in front of the server's CQL port that closes the
    accepted connections numbered in @drop (0 is the first) at once and
    forwards the others both ways."""

    def __init__(self, port, drop):
        import socket
        import threading
        self.port_to, self.drop, self.accepted = port, set(drop), 0
        self.ls = socket.socket()
        self.ls.bind(("127.0.0.1", 0))
        self.ls.listen(64)
        self.port = self.ls.getsockname()[1]
        self.threading, self.socket = threading, socket
        threading.Thread(target=self.accept_loop, daemon=True).start()

    def pump(self, a, b):
        try:
            while (data := a.recv(65536)):
                b.sendall(data)
        except OSError:
            pass
        for s in (a, b):
            try:
                s.shutdown(self.socket.SHUT_RDWR)
            except OSError:
                pass

    def accept_loop(self):
        while True:
            try:
                c, _ = self.ls.accept()
            except OSError:
                return
            n, self.accepted = self.accepted, self.accepted + 1
            if n in self.drop:
                c.close()
                continue
            up = self.socket.create_connection(("127.0.0.1", self.port_to))
            for a, b in ((c, up), (up, c)):
                self.threading.Thread(target=self.pump, args=(a, b), daemon=True).start()

    def close(self):
        self.ls.close()


def test_a_connection_failing_its_setup_is_dialled_again(server, stress_bin):
    # connection 0 is the control connection; 1 is a worker's, closed before STARTUP
    proxy = DropNthProxy(server.cql_port, drop=[1])
    try:
        r = stress_bin("write", "n=200", "-node", "127.0.0.1", "-port",
                       f"native={proxy.port}", "-route", "no-shard-aware", *CLIENT_SHARDS)
    finally:
        proxy.close()
    assert r.returncode == 0, describe(r)
    assert "failed during its setup" in r.stderr and "try 2 of 3" in r.stderr, r.stderr
    assert parse_results(r.stdout)["partitions"][0].replace(",", "") == "200", r.stdout


def test_a_connection_failing_every_setup_fails_the_run(server, stress_bin):
    proxy = DropNthProxy(server.cql_port, drop=range(1, 1000))
    try:
        r = stress_bin("write", "n=200", "-node", "127.0.0.1", "-port",
                       f"native={proxy.port}", "-route", "no-shard-aware", *CLIENT_SHARDS)
    finally:
        proxy.close()
    assert r.returncode != 0, describe(r)
    assert "try 3 of 3" in r.stderr and "connections failed" in r.stderr, r.stderr
