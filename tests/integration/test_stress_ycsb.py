# SPDX-License-Identifier: BSD-3-Clause
"""`shardmark ycsb`: YCSB's core workloads against a real `shardmark serve
--smp 2`, with YCSB's command line (`load|run cassandra-cql -P
config/ycsb/workloadX -p key=value -threads N -s`) and its output, read back
by a parser written the way YCSB's own result parsers read it
("[SECTION], Metric, value" lines).

Every read checks the fields it gets against the values of its key (the
load wrote them), so Return=OK counts validated reads. Assertions are about
behaviour (counts, names, exit status), never timings.
"""

import re
import subprocess
from pathlib import Path

import pytest

from conftest import allowed_cpus, cql_free_ports, cql_wait_host, free_port, start_cql_server

pytestmark = pytest.mark.skipif(
    allowed_cpus() < 2,
    reason=f"needs 2 allowed CPUs for --smp 2, this process has {allowed_cpus()}")

WORKLOADS = Path(__file__).resolve().parents[2] / "config" / "ycsb"
TIMEOUT = 120
RECORDS = 3000


def describe(r):
    return (f"command: {' '.join(map(str, r.args))}\nexit: {r.returncode}\n"
            f"--- stdout ---\n{r.stdout}\n--- stderr ---\n{r.stderr}")


def ycsb_results(stdout):
    """{section: {metric: value}} from YCSB's '[SECTION], Metric, value' lines."""
    out = {}
    for line in stdout.splitlines():
        m = re.fullmatch(r"\[([A-Z_-]+)\], ([^,]+), (-?[\d.]+(?:E-?\d+)?)", line)
        if m:
            v = float(m.group(3))
            out.setdefault(m.group(1), {})[m.group(2)] = int(v) if v.is_integer() else v
    return out


@pytest.fixture(scope="module")
def server(shardmark_bin, tmp_path_factory):
    """CQL (.cql_port) and Alternator (.alt_port)."""
    alt = free_port()
    while alt in (native_ports := cql_free_ports()):
        alt = free_port()
    srv = start_cql_server(shardmark_bin, tmp_path_factory.mktemp("ycsb"),
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
def ycsb(server, shardmark_bin):
    def run(phase, workload, *args):
        return subprocess.run(
            [str(shardmark_bin), "ycsb", phase, "cassandra-cql", "-P",
             str(WORKLOADS / workload), "-p", "hosts=127.0.0.1", "-p",
             f"port={server.cql_port}", "-p", f"recordcount={RECORDS}", "-threads", "8",
             "-shards", "2", *args],
            stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace",
            timeout=TIMEOUT)
    return run


@pytest.fixture(scope="module")
def loaded(ycsb):
    r = ycsb("load", "workloada")
    assert r.returncode == 0, describe(r)
    return r


def test_load_inserts_every_record(loaded):
    res = ycsb_results(loaded.stdout)
    assert res["INSERT"]["Operations"] == RECORDS, loaded.stdout
    assert res["INSERT"]["Return=OK"] == RECORDS
    assert res["OVERALL"]["RunTime(ms)"] >= 0 and res["OVERALL"]["Throughput(ops/sec)"] > 0
    for metric in ("AverageLatency(us)", "MinLatency(us)", "MaxLatency(us)",
                   "95thPercentileLatency(us)", "99thPercentileLatency(us)"):
        assert metric in res["INSERT"], loaded.stdout
    assert res["INSERT"]["MinLatency(us)"] <= res["INSERT"]["99thPercentileLatency(us)"] \
        <= res["INSERT"]["MaxLatency(us)"]


WORKLOAD_OPS = [
    ("workloada", {"READ", "UPDATE"}),
    ("workloadb", {"READ", "UPDATE"}),
    ("workloadc", {"READ"}),
    ("workloadd", {"READ", "INSERT"}),
    ("workloade", {"SCAN", "INSERT"}),
    ("workloadf", {"READ", "READ-MODIFY-WRITE"}),
]


def check_run(r, ops, n):
    assert r.returncode == 0, describe(r)
    res = ycsb_results(r.stdout)
    assert set(res) == {"OVERALL"} | ops, r.stdout
    assert sum(res[o]["Operations"] for o in ops) == n, r.stdout
    for o in ops:
        # every read of a loaded key found it and held its key's values
        assert res[o]["Return=OK"] == res[o]["Operations"], r.stdout
        assert "Return=ERROR" not in res[o], r.stdout


@pytest.mark.parametrize("workload,ops", WORKLOAD_OPS)
def test_core_workload_runs_and_reads_validate(ycsb, loaded, workload, ops):
    check_run(ycsb("run", workload, "-p", "operationcount=2000"), ops, 2000)


@pytest.mark.parametrize("dist", ["uniform", "latest", "hotspot", "sequential"])
def test_request_distributions(ycsb, loaded, dist):
    r = ycsb("run", "workloadc", "-p", "operationcount=500", "-p", f"requestdistribution={dist}")
    assert r.returncode == 0, describe(r)
    assert ycsb_results(r.stdout)["READ"]["Return=OK"] == 500, r.stdout


def test_status_lines(ycsb, loaded):
    r = ycsb("run", "workloadb", "-p", "operationcount=1000", "-p", "status.interval=1", "-s")
    assert r.returncode == 0, describe(r)
    assert re.search(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3} \d+ sec: \d+ operations; "
                     r"[\d.]+ current ops/sec;", r.stderr, re.M), r.stderr


def test_reads_of_other_values_are_errors(ycsb, loaded):
    # the load wrote 100-byte fields: reads that expect 99 find others
    r = ycsb("run", "workloadc", "-p", "operationcount=200", "-p", "fieldlength=99")
    res = ycsb_results(r.stdout)
    assert res["READ"]["Return=ERROR"] == 200, describe(r)
    assert "read validation failed" in r.stdout, r.stdout


def test_ordered_inserts_and_writeallfields(ycsb):
    r = ycsb("load", "workloada", "-p", "insertorder=ordered", "-p", "table=ordered_t",
             "-p", "recordcount=500")
    assert r.returncode == 0, describe(r)
    r = ycsb("run", "workloada", "-p", "insertorder=ordered", "-p", "table=ordered_t",
             "-p", "recordcount=500", "-p", "operationcount=500", "-p", "writeallfields=true")
    assert r.returncode == 0, describe(r)
    res = ycsb_results(r.stdout)
    assert res["READ"]["Return=OK"] + res["UPDATE"]["Return=OK"] == 500, r.stdout


@pytest.mark.parametrize("args,why", [
    (["-p", "requestdistribution=pareto"], "requestdistribution=pareto"),
    (["-p", "readallfields=false"], "readallfields=false"),
    (["-bogus"], "-bogus"),
])
def test_bad_command_lines_are_refused(ycsb, args, why):
    r = ycsb("run", "workloada", *args)
    assert r.returncode == 2, describe(r)
    assert why in r.stderr and r.stderr.startswith("shardmark ycsb: "), describe(r)


# --- the dynamodb binding against Alternator ------------------------------------

@pytest.fixture(scope="module")
def dynamo(server, shardmark_bin):
    def run(phase, workload, *args):
        return subprocess.run(
            [str(shardmark_bin), "ycsb", phase, "dynamodb", "-P", str(WORKLOADS / workload),
             "-p", f"dynamodb.endpoint=http://127.0.0.1:{server.alt_port}",
             "-p", "dynamodb.primaryKey=firstname", "-p", f"recordcount={RECORDS}",
             "-threads", "8", "-shards", "2", *args],
            stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace",
            timeout=TIMEOUT)
    return run


@pytest.fixture(scope="module")
def dynamo_loaded(dynamo):
    r = dynamo("load", "workloada")
    assert r.returncode == 0, describe(r)
    assert ycsb_results(r.stdout)["INSERT"]["Return=OK"] == RECORDS, r.stdout
    return r


@pytest.mark.parametrize("workload,ops", WORKLOAD_OPS)
def test_dynamodb_core_workloads(dynamo, dynamo_loaded, workload, ops):
    check_run(dynamo("run", workload, "-p", "operationcount=1000"), ops, 1000)


def test_dynamodb_scans_validate_every_item(dynamo, dynamo_loaded):
    r = dynamo("run", "workloade", "-p", "operationcount=200", "-p", "insertproportion=0",
               "-p", "scanproportion=1", "-p", "fieldlength=99")
    assert ycsb_results(r.stdout)["SCAN"]["Return=ERROR"] == 200, describe(r)
