# SPDX-License-Identifier: BSD-3-Clause
"""`shardmark scylla-bench`: scylla-bench's modes and workloads against a real
`shardmark serve --smp 2`, with scylla-bench's flags and output layout
(Configuration, the interval table, Results with raw and c-o fixed
latency), read back the way scylla-cluster-tests' parser reads it
("key: value" lines after "Results").

Reads check every row's v against what the sequential write put there.
Assertions are about behaviour (counts, layout, exit status), never timings.
"""

import re
import subprocess

import pytest

from conftest import allowed_cpus, cql_free_ports, start_cql_server

pytestmark = pytest.mark.skipif(
    allowed_cpus() < 2,
    reason=f"needs 2 allowed CPUs for --smp 2, this process has {allowed_cpus()}")

TIMEOUT = 120
P, C = 50, 40  # partitions, clustering rows


def describe(r):
    return (f"command: {' '.join(map(str, r.args))}\nexit: {r.returncode}\n"
            f"--- stdout ---\n{r.stdout}\n--- stderr ---\n{r.stderr}")


def parse(stdout):
    """scylla-cluster-tests' way: Configuration keys, then Results 'key: value'."""
    conf, res, in_res = {}, {}, False
    for line in stdout.splitlines():
        if line.startswith("Results"):
            in_res = True
            continue
        if ":" not in line or line.startswith("Latency:"):
            continue
        key, _, rest = line.partition(":")
        if not rest.split():
            continue
        (res if in_res else conf)[key.strip()] = rest.split()[0]
    return conf, res


@pytest.fixture(scope="module")
def server(shardmark_bin, tmp_path_factory):
    srv = start_cql_server(shardmark_bin, tmp_path_factory.mktemp("sb"), ports=cql_free_ports())
    yield srv
    srv.kill()


@pytest.fixture(scope="module")
def sb(server, shardmark_bin):
    def run(*args):
        return subprocess.run(
            [str(shardmark_bin), "scylla-bench", "-nodes", "127.0.0.1", "-port",
             str(server.cql_port), "-partition-count", str(P), "-clustering-row-count", str(C),
             "-clustering-row-size", "64", "-concurrency", "8", "-shards", "2", *args],
            stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace",
            timeout=TIMEOUT)
    return run


@pytest.fixture(scope="module")
def written(sb):
    r = sb("-mode", "write", "-workload", "sequential")
    assert r.returncode == 0, describe(r)
    return r


def test_sequential_write_writes_every_row_once(written):
    conf, res = parse(written.stdout)
    assert conf["Mode"] == "write" and conf["Workload"] == "sequential", written.stdout
    assert conf["Partition count"] == str(P) and conf["Clustering rows"] == str(C)
    assert res["Total ops"] == str(P * C) and res["Total rows"] == str(P * C), written.stdout
    assert "Total errors" not in res
    # the interval table's header, as thread_results.go prints it
    assert re.search(r"^ time +ops/s +rows/s errors max +99\.9th 99th +95th +90th +median +mean",
                     written.stdout, re.M), written.stdout
    for block in ("raw latency :", "c-o fixed latency :"):
        assert block in written.stdout, written.stdout
    assert re.search(r"^  99th:\t\t [\d.]+(ns|µs|ms|s) $", written.stdout, re.M), written.stdout


@pytest.mark.parametrize("args,rows_per_op", [
    (["-workload", "sequential", "-rows-per-request", "10"], 10),
    (["-workload", "uniform", "-duration", "1s", "-rows-per-request", "5",
      "-provide-upper-bound"], 5),
    (["-workload", "uniform", "-duration", "1s", "-rows-per-request", "4", "-in-restriction"], 4),
    (["-workload", "uniform", "-duration", "1s", "-rows-per-request", "7", "-no-lower-bound"], 7),
], ids=["sequential", "upper-bound", "in", "no-lower-bound"])
def test_reads_find_and_validate_the_written_rows(sb, written, args, rows_per_op):
    r = sb("-mode", "read", *args)
    assert r.returncode == 0, describe(r)
    conf, res = parse(r.stdout)
    assert conf["Mode"] == "read" and conf["Rows per request"] == str(rows_per_op)
    ops, rows = int(res["Total ops"]), int(res["Total rows"])
    assert ops > 0 and rows == ops * rows_per_op, r.stdout
    assert "Total errors" not in res, r.stdout


def test_reads_of_other_values_are_errors(sb, written):
    r = sb("-mode", "read", "-workload", "sequential", "-clustering-row-size", "65")
    # the last -clustering-row-size wins: 65 bytes expected, 64 written
    _, res = parse(r.stdout)
    assert res.get("Total errors") == str(P * C), describe(r)


@pytest.mark.parametrize("args", [
    ["-mode", "write", "-workload", "uniform", "-duration", "1s", "-rows-per-request", "10"],
    ["-mode", "write", "-workload", "timeseries", "-duration", "1s"],
    ["-mode", "counter_update", "-workload", "sequential"],
    ["-mode", "counter_read", "-workload", "uniform", "-duration", "1s"],
    ["-mode", "scan", "-workload", "sequential", "-partition-count", "10"],
], ids=["uniform-write", "timeseries", "counter-update", "counter-read", "scan"])
def test_modes_run(sb, written, args):
    r = sb(*args)
    assert r.returncode == 0, describe(r)
    _, res = parse(r.stdout)
    assert int(res["Total ops"]) > 0 and "Total errors" not in res, r.stdout


@pytest.mark.parametrize("args,why", [
    (["-workload", "sequential"], "-mode"),
    (["-mode", "delete"], "-mode delete"),
    (["-mode", "write", "-workload", "uniform"], "-duration"),
    (["-mode", "read", "-in-restriction", "-no-lower-bound"], "-in-restriction"),
    (["-mode", "write", "-bogus"], "-bogus"),
])
def test_bad_flags_are_refused(sb, args, why):
    r = sb(*args)
    assert r.returncode == 2, describe(r)
    assert why in r.stderr and r.stderr.startswith("shardmark scylla-bench: "), describe(r)
