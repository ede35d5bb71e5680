# SPDX-License-Identifier: BSD-3-Clause
"""shardmark perf-simple-query: options and their errors, ScyllaDB's output
lines, the JSON result, and short real runs on 2 shards for each frontend
and write isolation mode (figures measured, never asserted as timings)."""

import json
import re

import pytest

from conftest import allowed_cpus

ITER = re.compile(r"^(\d+\.\d{2}) tps \(\s*(\d+\.\d) allocs/op,\s+(\d+\.\d) logallocs/op,"
                  r"\s+(\d+\.\d) tasks/op,\s+(\d+|n/a) insns/op,\s+(\d+|n/a) cycles/op,"
                  r"\s+(\d+) errors\)$")
SUMMARY = re.compile(r"^throughput:\n\tmean=   [\d.]+ standard-deviation=[\d.]+\n"
                     r"\tmedian= [\d.]+ median-absolute-deviation=[\d.]+\n"
                     r"\tmaximum=[\d.]+ minimum=[\d.]+$", re.M)


def smp_args(n=2):
    return ["--smp", str(n)] + (["--overprovisioned"] if allowed_cpus() < n else [])


def psq(run_cli, *args, timeout=120):
    return run_cli("perf-simple-query", *args, timeout=timeout)


def iterations(out):
    return [ITER.match(line) for line in out.splitlines() if ITER.match(line)]


@pytest.mark.parametrize("args,needle", [
    (["--partitions", "0"], "--partitions: expected an integer"),
    (["--duration", "x"], "--duration: expected an integer"),
    (["--concurrency", "-1"], "--concurrency: expected an integer"),
    (["--shard-aware", "maybe"], "--shard-aware: expected true or false"),
    (["--consistency-level", "MOST"], "--consistency-level: unknown level 'MOST'"),
    (["--alternator", "sometimes"], "Invalid --alternator-write-isolation setting 'sometimes'"),
    (["--collection", "2", "--counters"], "--collection and --counters are mutually exclusive"),
    (["--workload", "write_rmw"], "--workload is for the Alternator frontend"),
    (["--alternator", "o", "--workload", "write_index"], "Alternator's is write_gsi"),
    (["--counters", "--workload", "write_index"], "counter tables have no indexes"),
    (["--alternator", "o", "--workload", "write_view"], "Alternator's is write_gsi"),
    (["--alternator", "o", "--workload", "fly"], "--workload: expected read, write"),
    (["--no-such-option"], "no-such-option"),
])
def test_bad_options(run_cli, args, needle):
    r = psq(run_cli, *args)
    assert r.returncode == 2, r.stderr
    assert needle in r.stderr, r.stderr


def test_help_lists_scylla_options(run_cli):
    r = psq(run_cli, "--help")
    assert r.returncode == 0
    for opt in ("--random-seed", "--partitions", "--write", "--delete", "--counters",
                "--collection", "--duration", "--operations-per-shard", "--concurrency",
                "--query-single-key", "--shard-aware", "--consistency-level", "--stop-on-error",
                "--timeout", "--json-result", "--alternator", "--workload", "--flush",
                "--enable-cache", "--bypass-cache"):
        assert opt in r.stdout, opt
    # The options that mean nothing for an in-memory store say so.
    assert re.search(r"--flush\s.*no effect", r.stdout), r.stdout


def test_cql_read_output_and_json(run_cli, tmp_path):
    out = tmp_path / "r.json"
    r = psq(run_cli, *smp_args(), "--duration", "2", "--partitions", "2000", "--random-seed", "7",
            "--json-result", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "random-seed=7"
    assert lines[1] == ("Running test with config: {partitions=2000, concurrency=100, mode=read, "
                        "frontend=cql, query_single_key=no, counters=no, collection=0, "
                        "shard_aware=yes}")
    assert "Creating 2000 partitions..." in lines
    its = iterations(r.stdout)
    assert len(its) == 2
    for m in its:
        assert float(m.group(1)) > 0, "tps"
        assert int(m.group(7)) == 0, "errors"
        # without a PMU the counters say n/a (and why), never 0
        if m.group(5) == "n/a":
            # once, one line, the cause in words (no errno text)
            assert r.stdout.count("insns/op, cycles/op, cmiss/op and bmiss/op: n/a:") == 1
            assert r.stdout.count("n/a: ") == 1, r.stdout
            assert "No such file or directory" not in r.stdout, r.stdout
    assert SUMMARY.search(r.stdout), r.stdout
    # per-shard table: one row per shard, cross-shard hops counted (0: shard-aware keys)
    rows = [l for l in lines if re.match(r"^[01]\s+\d+", l)]
    assert len(rows) == 2, r.stdout
    assert all(float(row.split()[-1]) == 0 for row in rows), rows
    j = json.loads(out.read_text())
    assert j["parameters"]["concurrency,partitions,cpus,duration"] == "100,2000,2,2"
    for key in ("median tps", "mad tps", "max tps", "min tps", "allocs_per_op",
                "logallocs_per_op", "tasks_per_op", "instructions_per_op", "cpu_cycles_per_op"):
        assert key in j["stats"], key
    assert j["stats"]["median tps"] > 0
    assert j["test_properties"]["type"] == "read"
    assert len(j["per_shard"]) == 2 and sum(s["ops"] for s in j["per_shard"]) > 0
    assert j["machine"]["shards"] == 2


@pytest.mark.parametrize("args,kind", [
    (["--write"], "write"),
    (["--delete"], "delete"),
    (["--counters", "--write"], "write_counters"),
    (["--collection", "3", "--write"], "write"),
    (["--shard-aware", "false"], "read"),
    (["--query-single-key"], "read"),
    (["--workload", "write_index"], "write_index"),
    (["--workload", "write_index", "--shard-aware", "false"], "write_index"),
    (["--workload", "write_view"], "write_view"),
])
def test_cql_modes(run_cli, tmp_path, args, kind):
    out = tmp_path / "r.json"
    r = psq(run_cli, *smp_args(), "--operations-per-shard", "3000", "--partitions", "1000",
            "--json-result", str(out), *args)
    assert r.returncode == 0, r.stdout + r.stderr
    its = iterations(r.stdout)
    assert len(its) == 1 and int(its[0].group(7)) == 0, r.stdout
    j = json.loads(out.read_text())
    assert j["test_properties"]["type"] == kind
    # measured, not constant: per-op figures come from the counters
    assert j["stats"]["tasks_per_op"] > 0
    if "--shard-aware" in args:
        assert sum(s["hops_per_op"] for s in j["per_shard"]) > 0, "random keys must hop"


@pytest.mark.parametrize("mode", ["forbid_rmw", "unsafe", "always_use_lwt", "only_rmw_uses_lwt"])
@pytest.mark.parametrize("workload", ["write", "read", "write_rmw", "write_gsi", "write_ttl",
                                      "write_stream"])
def test_alternator_modes(run_cli, tmp_path, mode, workload):
    out = tmp_path / "r.json"
    r = psq(run_cli, *smp_args(), "--alternator", mode, "--workload", workload,
            "--operations-per-shard", "1500", "--partitions", "500", "--stop-on-error", "false",
            "--json-result", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"frontend=alternator, write_isolation={mode}" in r.stdout
    its = iterations(r.stdout)
    assert len(its) == 1, r.stdout
    errors = int(its[0].group(7))
    if mode == "forbid_rmw" and workload == "write_rmw":
        # the conditional update is read-modify-write: refused, and counted
        assert errors > 0
    else:
        assert errors == 0, r.stdout
    j = json.loads(out.read_text())
    assert j["test_properties"]["frontend"] == "alternator"
    assert j["test_properties"]["write_isolation"] == mode
    assert j["test_properties"]["type"] == workload
    assert f"mode={workload}," in r.stdout


def test_stop_on_error(run_cli):
    r = psq(run_cli, *smp_args(), "--alternator", "forbid_rmw", "--workload", "write_rmw",
            "--operations-per-shard", "500", "--partitions", "100")
    assert r.returncode == 1
    assert "write isolation policy" in r.stderr, r.stderr
