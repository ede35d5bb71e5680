# SPDX-License-Identifier: BSD-3-Clause
"""The shardmark command line: help, version, configuration, errors, bench.

Exit codes: 0 success, 2 usage or configuration error, 1 runtime error. Error
messages go to stderr and name the cause and the fix.
"""

import json
import os
import re
import socket
import subprocess

import pytest

from conftest import allowed_cpus, connect, echo, free_port


# --- help and version ---------------------------------------------------------

@pytest.mark.parametrize("args", [["--help"], ["serve", "--help"], ["bench", "--help"]],
                         ids=["top", "serve", "bench"])
def test_help(run_cli, args):
    r = run_cli(*args)
    assert r.returncode == 0, r.stderr
    out = r.stdout + r.stderr
    assert "usage" in out.lower() or "--" in out, out
    if args[0] == "serve":
        assert "--echo-port" in out, out
    if args[0] == "bench":
        assert "--duration" in out, out


def test_version(run_cli):
    r = run_cli("version")
    assert r.returncode == 0, r.stderr
    first = r.stdout.splitlines()[0] if r.stdout else ""
    assert re.match(r"shardmark \S", first), f"version output: {r.stdout!r}"


# --- usage and configuration errors: exit 2 ----------------------------------

def test_unknown_option(run_cli):
    r = run_cli("serve", "--no-such-option", "1")
    assert r.returncode == 2, f"exit {r.returncode}\n{r.stderr}"
    assert "no-such-option" in r.stderr, r.stderr


def test_unknown_command(run_cli):
    r = run_cli("no-such-command")
    assert r.returncode == 2, f"exit {r.returncode}\n{r.stderr}"
    assert "no-such-command" in r.stderr, r.stderr


@pytest.mark.parametrize("args", [["--smp", "abc"], ["--echo-port", "70000"]],
                         ids=["smp-not-a-number", "port-out-of-range"])
def test_bad_option_value(run_cli, args):
    r = run_cli("serve", "--prometheus-port", "0", *args)
    assert r.returncode == 2, f"exit {r.returncode}\n{r.stderr}"
    assert args[0] in r.stderr or args[0].lstrip("-").replace("-", "_") in r.stderr, \
        f"error should name the option: {r.stderr}"


def test_unknown_config_key(run_cli, tmp_path):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("# shardmark test config\n\nno_such_key: 1\n")
    r = run_cli("serve", "--config", cfg, "--prometheus-port", "0")
    assert r.returncode == 2, f"exit {r.returncode}\n{r.stderr}"
    assert "bad.yaml" in r.stderr, f"error should name the file: {r.stderr}"
    assert "unknown key" in r.stderr.lower(), r.stderr
    assert re.search(r"bad\.yaml:3\b|line 3\b", r.stderr), \
        f"error should give line 3: {r.stderr}"


def test_missing_config_file(run_cli, tmp_path):
    cfg = tmp_path / "absent.yaml"
    r = run_cli("serve", "--config", cfg, "--prometheus-port", "0")
    assert r.returncode == 2, f"exit {r.returncode}\n{r.stderr}"
    assert "absent.yaml" in r.stderr, r.stderr


# --- configuration file and overrides ----------------------------------------

def test_config_file_and_override(serve, tmp_path):
    file_port, cli_port, prom_port = free_port(), free_port(), free_port()
    cfg = tmp_path / "shardmark.yaml"
    cfg.write_text(f"smp: 1\nlisten_address: 127.0.0.1\n"
                   f"echo_port: {file_port}\nprometheus_port: {prom_port}\n")

    # Ports from the file alone.
    srv = serve("--config", cfg, echo=False, prometheus=False, ready=False)
    srv.wait_ready(ports=[file_port, prom_port])
    with connect(file_port) as s:
        echo(s, b"from the file")
    srv.stop()

    # The command line overrides the file.
    srv = serve("--config", cfg, echo=cli_port, prometheus=False, ready=False)
    srv.wait_ready(ports=[cli_port, prom_port])
    with connect(cli_port) as s:
        echo(s, b"from the command line")
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", file_port), timeout=5).close()
    srv.stop()


# --- runtime errors: exit 1 ---------------------------------------------------

def test_more_shards_than_cpus_needs_overprovisioned(serve):
    smp = allowed_cpus() + 1
    srv = serve("--smp", smp, ready=False)
    rc = srv.wait_exit()
    assert rc == 1, f"--smp {smp} with {smp - 1} CPUs: exit {rc}\n{srv.describe()}"
    assert "--overprovisioned" in srv.stderr(), srv.describe()

    srv = serve("--smp", smp, "--overprovisioned")
    with connect(srv.echo_port) as s:
        echo(s, b"overprovisioned")
    srv.stop()


def test_echo_port_in_use(serve):
    first = serve("--smp", "1")
    second = serve("--smp", "1", echo=first.echo_port, prometheus=0, ready=False)
    rc = second.wait_exit()
    assert rc == 1, f"second server on port {first.echo_port}: exit {rc}\n{second.describe()}"
    assert "in use" in second.stderr(), second.describe()
    with connect(first.echo_port) as s:
        echo(s, b"first server unaffected")
    first.stop()


# --- bench --------------------------------------------------------------------

def test_bench_echo_json(run_cli, tmp_path):
    if allowed_cpus() < 2:
        pytest.skip(f"needs 2 allowed CPUs for --smp 2, this process has {allowed_cpus()}")
    out = tmp_path / "bench.json"
    r = run_cli("bench", "echo", "--duration", "1", "--smp", "2", "--connections", "16",
                "--size", "64", "--json", out, timeout=120)
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stdout}\n{r.stderr}"
    assert "requests/s" in r.stdout, r.stdout

    report = json.loads(out.read_text())
    assert report["load"] == "echo"
    assert report["shards"] == 2
    per_shard = report["per_shard"]
    assert [s["shard"] for s in per_shard] == [0, 1], per_shard
    for s in per_shard:
        for key in ("requests", "requests_per_s", "allocs_per_op", "tasks_per_op",
                    "io_enters_per_op"):
            assert isinstance(s[key], (int, float)), f"shard {s['shard']} {key}: {s[key]!r}"
        assert "instructions_per_op" in s
        ipo = s["instructions_per_op"]
        if ipo is None:
            unavailable = s.get("unavailable")
            assert isinstance(unavailable, dict) and unavailable, \
                f"shard {s['shard']}: instructions_per_op is null without reasons: {s}"
            for counter, reason in unavailable.items():
                assert isinstance(reason, str) and reason.strip(), (counter, reason)
        else:
            assert isinstance(ipo, (int, float)) and ipo > 0, ipo
    assert report["total"]["requests"] > 0, report["total"]
    assert report["total"]["requests"] == sum(s["requests"] for s in per_shard), report


PSQ_LOADS = ["cql-read", "cql-write", "alternator-forbid_rmw", "alternator-unsafe",
             "alternator-always_use_lwt", "alternator-only_rmw_uses_lwt"]
STRESS_LOADS = ["stress-cql-write", "stress-cql-read", "stress-alternator-forbid_rmw",
                "stress-alternator-unsafe", "stress-alternator-always_use_lwt",
                "stress-alternator-only_rmw_uses_lwt"]
SUITE_LOADS = PSQ_LOADS + ["echo"] + STRESS_LOADS


def test_bench_suite_runs_every_load(run_cli, tmp_path):
    """`shardmark bench` with defaults: a row per load, all measured, JSON per load."""
    if allowed_cpus() < 2:
        pytest.skip(f"needs 2 allowed CPUs for --smp 2, this process has {allowed_cpus()}")
    out, csv_out, html = tmp_path / "suite.json", tmp_path / "suite.csv", tmp_path / "suite.html"
    r = run_cli("bench", "--duration", "1", "--smp", "2", "--json", out, "--csv", csv_out,
                "--html", html, timeout=300)
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stdout}\n{r.stderr}"
    rows = {}
    for line in r.stdout.splitlines():
        m = re.match(r"^(\S+)\s+(\d+)\s+(\d+|-)\s+(\d+\.\d{3})\s+(\d+\.\d{3})"
                     r"\s+(\d+|n/a)\s+(\d+|n/a)\s+(\d+\.\d{3}|-)$", line)
        if m:
            rows[m.group(1)] = m.groups()
    assert list(rows) == SUITE_LOADS, r.stdout
    for name, row in rows.items():
        assert int(row[1]) > 0, (name, row)
        if name in PSQ_LOADS:  # one worker task per op (echo and a CQL server run none)
            assert float(row[4]) > 0, f"{name}: tasks/op not measured: {row}"
    if "n/a" in rows["cql-read"][5]:
        assert re.search(r"^insns/op, cycles/op: n/a: \S", r.stdout, re.M), r.stdout

    report = json.loads(out.read_text())
    assert report["command"] == "bench"
    assert [l["name"] for l in report["loads"]] == SUITE_LOADS
    assert all(l["ok"] for l in report["loads"]), report["loads"]
    by_name = {l["name"]: l["result"] for l in report["loads"]}
    assert by_name["cql-read"]["test_properties"] == {"type": "read", "frontend": "cql"}
    assert by_name["cql-write"]["test_properties"]["type"] == "write"
    for mode in ("forbid_rmw", "unsafe", "always_use_lwt", "only_rmw_uses_lwt"):
        props = by_name["alternator-" + mode]["test_properties"]
        assert props == {"type": "write", "frontend": "alternator",
                         "write_isolation": mode}, props
        assert by_name["alternator-" + mode]["stats"]["median tps"] > 0
    assert by_name["echo"]["load"] == "echo"
    assert by_name["echo"]["total"]["requests"] > 0
    entries = {l["name"]: l for l in report["loads"]}
    for name in STRESS_LOADS:
        res = by_name[name]
        assert res["ops"] > 0 and res["errors"] == 0, (name, res)
        assert res["api"] == ("cql" if "-cql-" in name else "alternator"), res
        shards = entries[name]["server_per_shard"]
        assert [x["shard"] for x in shards] == [0, 1], shards
        assert sum(x["requests"] for x in shards) >= res["ops"], (name, shards, res["ops"])
    # token- and shard-aware CQL: no request reaches a shard that does not own its key
    for name in ("stress-cql-write", "stress-cql-read"):
        assert by_name[name]["routing"]["shard_aware"] is True, by_name[name]["routing"]
        assert by_name[name]["routing"]["misrouted"] == 0, by_name[name]["routing"]
        assert sum(x["hops"] for x in entries[name]["server_per_shard"]) == 0, entries[name]
    # the reads found what the write load wrote (validated rows, no errors)
    assert by_name["stress-cql-read"]["read_validation_failures"] == 0
    assert "stress over loopback" in r.stdout, r.stdout
    # --html: shardmark report's page of the suite's JSON, every load in it
    page = html.read_text()
    assert "<title>shardmark bench</title>" in page and "<svg" in page, page[:500]
    for name in SUITE_LOADS:
        assert name in page, name
    # --csv: one header, then every load's intervals in the same columns
    import csv
    rows = list(csv.DictReader(csv_out.open()))
    assert csv_out.read_text().splitlines()[0].startswith("load,interval,seconds,type,")
    loads = [row["load"] for row in rows]
    assert sorted(set(loads)) == sorted(SUITE_LOADS), loads
    for row in rows:
        assert float(row["ops_per_s"]) >= 0 and int(row["interval"]) >= 1, row
        if row["load"] in PSQ_LOADS:
            assert row["tasks_per_op"] and row["p50_ms"] == "", row
        if row["load"] in STRESS_LOADS:
            assert row["type"] in ("total", "WRITE", "READ") and row["p50_ms"], row


def test_bench_suite_errors(run_cli):
    r = run_cli("bench", "--loads", "cql-read,nosuch")
    assert r.returncode == 2
    assert "unknown load 'nosuch'" in r.stderr and "cql-read" in r.stderr, r.stderr
    r = run_cli("bench", "--duration", "0")
    assert r.returncode == 2 and "--duration" in r.stderr, r.stderr
    r = run_cli("bench", "--smp", "lots")
    assert r.returncode == 2 and "--smp" in r.stderr, r.stderr
    r = run_cli("bench", "--help")
    assert r.returncode == 0
    for name in SUITE_LOADS:
        assert name in r.stdout, (name, r.stdout)


def test_bench_suite_load_failure_names_cause(run_cli):
    """A load that cannot start fails the suite with that load's own reason."""
    r = run_cli("bench", "--loads", "cql-read,echo", "--smp", "1000", timeout=60)
    assert r.returncode == 1, r.stdout
    assert re.search(r"^cql-read\s+FAILED$", r.stdout, re.M), r.stdout
    assert "load cql-read failed" in r.stderr and "--smp" in r.stderr, r.stderr
    assert "stopping after the first load failed" in r.stderr, r.stderr


def test_config_from_environment(shardmark_bin, tmp_path):
    """Without --config, SHARDMARK_CONFIG names the file; its errors say so."""
    good = tmp_path / "env.yaml"
    good.write_text("smp: 1\necho_port: 7777\n")
    env = dict(os.environ, SHARDMARK_CONFIG=str(good))
    r = subprocess.run([str(shardmark_bin), "serve", "--print-config"], env=env,
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert re.search(r"^echo_port: 7777$", r.stdout, re.M), r.stdout
    # --config wins over the environment.
    other = tmp_path / "other.yaml"
    other.write_text("echo_port: 8888\n")
    r = subprocess.run([str(shardmark_bin), "serve", "--config", str(other), "--print-config"],
                       env=env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert re.search(r"^echo_port: 8888$", r.stdout, re.M), r.stdout
    bad = tmp_path / "bad.yaml"
    bad.write_text("smpp: 1\n")
    env["SHARDMARK_CONFIG"] = str(bad)
    r = subprocess.run([str(shardmark_bin), "serve", "--print-config"], env=env,
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 2
    assert "SHARDMARK_CONFIG" in r.stderr and "smpp" in r.stderr, r.stderr


# --- output files are checked before anything runs ---------------------------

@pytest.mark.parametrize("args", [
    ["perf-simple-query", "--json-result", "/nonexistent/p.json"],
    ["bench", "--json", "/nonexistent/dir/b.json"],
    ["bench", "echo", "--json", "/nonexistent/e.json"],
    ["stress", "write", "n=10", "-log", "json=/nonexistent/s.json"],
    ["stress", "write", "n=10", "-log", "hdrfile=/nonexistent/s.hdr"],
    ["stress", "write", "n=10", "-log", "file=/nonexistent/s.txt"],
    ["perf-simple-query", "--csv", "/nonexistent/p.csv"],
    ["bench", "--csv", "/nonexistent/b.csv"],
    ["bench", "--html", "/nonexistent/b.html"],
    ["perf-simple-query", "--html", "/nonexistent/p.html"],
    ["stress", "write", "n=10", "-log", "csv=/nonexistent/s.csv"],
], ids=["psq-json", "bench-json", "bench-echo-json", "stress-json", "stress-hdr", "stress-file",
        "psq-csv", "bench-csv", "bench-html", "psq-html", "stress-csv"])
def test_output_path_checked_first(run_cli, args):
    r = run_cli(*args, timeout=60)
    assert r.returncode == 2, f"exit {r.returncode}\n{r.stdout}\n{r.stderr}"
    assert "/nonexistent" in r.stderr and "mkdir -p /nonexistent" in r.stderr, r.stderr
    # nothing ran: no iteration, no load row, no connection attempt
    assert "tps" not in r.stdout and "Running" not in r.stdout, r.stdout
    assert "cannot connect" not in r.stderr, r.stderr


def test_output_path_is_a_directory(run_cli, tmp_path):
    r = run_cli("perf-simple-query", "--json-result", tmp_path)
    assert r.returncode == 2 and "is a directory" in r.stderr, r.stderr
    # an existing file is kept as it was until the run writes it
    kept = tmp_path / "old.json"
    kept.write_text("old")
    r = run_cli("perf-simple-query", "--json-result", kept, "--no-such-option")
    assert r.returncode == 2 and kept.read_text() == "old", r.stderr


# --- help says what the commands do --------------------------------------------

def test_top_help_names_the_stress_loads(run_cli):
    r = run_cli("--help")
    assert r.returncode == 0
    bench = r.stdout.split("  bench ")[1].split("\n  perf-simple-query")[0]
    assert "stress" in bench and "Alternator writes" in bench, bench


def test_bench_help_duration_for_stress(run_cli):
    r = run_cli("bench", "--help")
    text = " ".join(r.stdout.split())
    assert "stress runs duration=SECONDS" in text, r.stdout


@pytest.mark.parametrize("topic, want, not_want", [
    ("write", "n=N[k|m|b]", "-rate threads=N"),
    ("insert", "write (insert)", "-pop seq="),
    ("-rate", "-rate threads=N", "Command sub-options"),
    ("rate", "-rate threads=N", "-pop seq="),
    ("-pop", "DIST: FIXED(n)", "-rate threads=N"),
])
def test_stress_help_topic(run_cli, topic, want, not_want):
    r = run_cli("stress", "help", topic)
    assert r.returncode == 0, r.stderr
    assert want in r.stdout and not_want not in r.stdout, r.stdout
    whole = run_cli("stress", "help")
    assert len(r.stdout) < len(whole.stdout) / 2


def test_stress_help_unknown_topic(run_cli):
    r = run_cli("stress", "help", "nosuch")
    assert r.returncode == 2 and "nosuch" in r.stderr and "-rate" in r.stderr, r.stderr


def test_version_help(run_cli):
    r = run_cli("version", "--help")
    assert r.returncode == 0 and r.stdout.startswith("usage: shardmark version"), r.stdout
    r = run_cli("version", "extra")
    assert r.returncode == 2 and "extra" in r.stderr, r.stderr


# --- addresses -----------------------------------------------------------------

def test_listen_address_name_is_resolved(serve):
    """--listen-address localhost works, as stress -node localhost does."""
    srv = serve("--smp", "1", "--listen-address", "localhost")
    with connect(srv.echo_port) as s:
        echo(s, b"by name")
    assert re.search(r"echo on 127\.0\.0\.1:\d+", srv.stderr()), srv.describe()
    assert "(1 shard, " in srv.stderr(), srv.describe()
    srv.stop()


def test_ipv6_banner_is_a_url(serve):
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
    except OSError:
        pytest.skip("no IPv6 loopback here")
    srv = serve("--smp", "1", "--listen-address", "::1", echo=False, ready=False)
    srv.host = "::1"
    srv.wait_ready(ports=[srv.prom_port])
    err = srv.stderr()
    assert re.search(r"alternator on http://\[::1\]:\d+ ", err), err
    assert re.search(r"stats on http://\[::1\]:\d+/metrics", err), err
    assert re.search(r"cql on \[::1\]:\d+ ", err), err
    srv.stop()


@pytest.mark.parametrize("args, flag", [
    (["--listen-address", "no-such-host.invalid"], "--listen-address 'no-such-host.invalid'"),
    (["--dpdk-args", "--no-huge"], "--dpdk-args is set"),
    (["--echo-port", "9042", "--native-transport-port", "9042"],
     "--native-transport-port and --echo-port are both 9042"),
])
def test_errors_name_the_flag_used(run_cli, args, flag):
    r = run_cli("serve", "--prometheus-port", "0", *args)
    assert r.returncode == 2, f"exit {r.returncode}\n{r.stderr}"
    assert flag in r.stderr, r.stderr


def test_errors_name_the_key_from_a_file(run_cli, tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("listen_address: no-such-host.invalid\nprometheus_port: 0\n")
    r = run_cli("serve", "--config", cfg)
    assert r.returncode == 2, r.stderr
    assert "listen_address 'no-such-host.invalid' does not resolve" in r.stderr, r.stderr


def test_stress_node_names(run_cli):
    r = run_cli("stress", "write", "n=10", "-node", "no-such-host.invalid", "-log", "no-settings")
    assert r.returncode == 2, r.stderr
    assert "-node no-such-host.invalid does not resolve" in r.stderr, r.stderr


@pytest.mark.parametrize("nofile", [6, 8])
def test_low_open_file_limit_names_the_fix(shardmark_bin, nofile):
    """Too few file descriptors at start (the ring, or a listener): exit 1
    with the fix, as the accept path says it."""
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    ports = [str(free_port()) for _ in range(2)]
    r = subprocess.run([str(shardmark_bin), "serve", "--smp", "1", "--prometheus-port", "0",
                        "--alternator-port", "0", "--native-transport-port", ports[0],
                        "--native-shard-aware-transport-port", ports[1]],
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
                       preexec_fn=limit)
    assert r.returncode == 1, f"exit {r.returncode}\n{r.stderr}"
    assert "Too many open files: raise the open file limit (ulimit -n" in r.stderr, r.stderr


# --- bench progress on a terminal ------------------------------------------------

def test_bench_progress_only_on_a_tty(shardmark_bin, run_cli):
    import pty
    import select

    args = ["bench", "--loads", "echo", "--duration", "1", "--smp", "1"]
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(str(shardmark_bin), [str(shardmark_bin), *args])
    out = b""
    while True:
        r, _, _ = select.select([fd], [], [], 120)
        if not r:
            break
        try:
            data = os.read(fd, 65536)
        except OSError:
            break
        if not data:
            break
        out += data
    _, status = os.waitpid(pid, 0)
    text = out.decode(errors="replace")
    assert os.waitstatus_to_exitcode(status) == 0, text
    # the line names the load, its time and the suite's end, and is rewritten in place
    assert re.search(r"\r\x1b\[K\[1/1\] echo: \d+ s; suite \d+:\d\d, about \d+:\d\d left",
                     text), repr(text)
    # ... and is gone before the row
    assert re.search(r"\r\x1b\[Kecho +\d+", text), repr(text)
    assert "shardmark bench: 1 load, 1 s each, 1 shard" in text, text

    r = run_cli(*args, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "\r" not in r.stdout and "left" not in r.stdout, repr(r.stdout)



def test_psq_csv(run_cli, tmp_path):
    out = tmp_path / "p.csv"
    r = run_cli("perf-simple-query", "--duration", "2", "--smp", "1", "--partitions", "100",
                "--csv", out, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = out.read_text().splitlines()
    assert lines[0] == ("interval,seconds,type,ops_per_s,allocs_per_op,logallocs_per_op,"
                        "tasks_per_op,insns_per_op,cycles_per_op,errors"), lines
    assert [l.split(",")[0] for l in lines[1:]] == ["1", "2"], lines
    assert all(l.split(",")[2] == "read" for l in lines[1:]), lines
    # the old line about compaction, which nothing here does, is gone
    assert "compaction" not in r.stdout, r.stdout


def test_print_config_masks_credentials(run_cli):
    r = run_cli("serve", "--auth-superuser-password", "hunter2",
                "--alternator-secret-access-key", "s3cr3t", "--print-config")
    assert r.returncode == 0, r.stderr
    assert "hunter2" not in r.stdout and "s3cr3t" not in r.stdout, r.stdout
    for key in ("auth_superuser_password", "alternator_secret_access_key"):
        assert re.search(rf'^{key}: "\*\*\*\*\*\*\*\*"  # masked', r.stdout, re.M), r.stdout
    assert re.search(r"^auth_superuser_name: cassandra$", r.stdout, re.M), r.stdout
