# SPDX-License-Identifier: BSD-3-Clause
"""Hostile clients against the real server: each class of misbehaviour that
once crashed it, stalled a shard, leaked connections or made it hold memory
without bound. After each: the server answers normal requests correctly, its
memory is back under a bound, and the sanitizers (in the ASan build) printed
nothing.

Run by meson in the normal and the ASan+UBSan build (SHARDMARK_BIN); timing is
never asserted, only outcomes (with generous deadlines for them to happen).
"""

import json
import os
import random
import socket
import struct
import threading
import time

import pytest

from conftest import (CQL_OP_ERROR, CQL_OP_QUERY, CQL_OP_RESULT, CQL_OP_STARTUP, DPDK_TAP,
                      IO_TIMEOUT, alt_assert_serving, alt_raw, connect, cql_assert_serving,
                      cql_frame, cql_parse_error, cql_query_body, cql_raw_startup,
                      cql_read_frame, cql_string_map, http_get, metric_by_shard,
                      parse_prometheus, recv_exact)

# deploy/test.sh's ASan+UBSan stage: its quarantine keeps freed memory and
# its shadow adds to RSS, so RSS bounds are checked in the normal build only.
SANITIZED = bool(os.environ.get("ASAN_OPTIONS"))

SANITIZER_MARKS = ("AddressSanitizer", "LeakSanitizer", "runtime error:",
                   "UndefinedBehaviorSanitizer")

CQL_ERR_PROTOCOL = 0x000A
CQL_ERR_OVERLOADED = 0x1001
CQL_ERR_INVALID = 0x2200


def metrics(srv):
    status, _, body = http_get(srv.prom_port, "/metrics")
    assert status == 200, f"/metrics answered {status}"
    return parse_prometheus(body)


def metric_sum(srv, name):
    return sum(metric_by_shard(metrics(srv), name).values())


def rss_bytes(srv):
    with open(f"/proc/{srv.pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def wait_for(what, fn, timeout=20.0, interval=0.1):
    """Poll fn() until it returns something true; fail with `what` after timeout."""
    deadline = time.monotonic() + timeout
    while True:
        v = fn()
        if v:
            return v
        if time.monotonic() > deadline:
            pytest.fail(f"{what} (last: {v!r})")
        time.sleep(interval)


def assert_healthy(srv):
    """Alive, serving CQL and Alternator to new clients, no sanitizer report."""
    assert srv.proc.poll() is None, f"the server died\n{srv.describe()}"
    cql_assert_serving(srv.cql_port)
    alt_assert_serving(srv)
    err = srv.stderr()
    for mark in SANITIZER_MARKS:
        assert mark not in err, f"sanitizer report in the server's stderr:\n{err[-4000:]}"


def wait_connections_idle(srv, extra=1):
    """connections_active falls back to the metrics scrape's own (+ extra)."""
    return wait_for("connections stayed open after their clients left",
                    lambda: metric_sum(srv, "shardmark_connections_active") <= extra,
                    timeout=30)


def rst_close(sock):
    """Close with a reset (SO_LINGER 0), as a crashed client would."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def partial_request(kind):
    if kind == "cql":
        # A QUERY header announcing 100 bytes, then 3 of them.
        return cql_frame(CQL_OP_QUERY, b"\0" * 100, stream=1)[:9 + 3]
    return b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc"


@pytest.fixture
def hostile(alternator):
    """A server with CQL, Alternator and metrics; extra arguments go to serve."""
    def start(*args, smp=2):
        return alternator(*args, smp=smp)
    return start


# --- connections that reset mid-request -----------------------------------


@pytest.mark.skipif(DPDK_TAP, reason="the io_uring receive ring is what this starves")
def test_reset_mid_request_frees_connection_and_buffers(hostile):
    """Incomplete requests held receive buffers; with the ring dry, connections
    reset by their peers were never noticed (and held the buffers the others
    waited for): the shard stopped serving and connections leaked. 16 receive
    buffers, 48 connections each holding a partial request, then all reset."""
    srv = hostile("--rx-buffers", "16")
    for rnd in range(5):
        socks = []
        for kind, port in (("cql", srv.cql_port), ("http", srv.alt_port),
                           ("http", srv.prom_port)):
            for _ in range(16):
                s = connect(port)
                s.sendall(partial_request(kind))
                socks.append(s)
        time.sleep(0.2)
        for s in socks:
            rst_close(s)
    wait_connections_idle(srv)
    assert_healthy(srv)


def test_connection_churn(hostile):
    """2,000 connections that send part of a request and reset at once, from
    8 threads, while a normal client works: none is left open."""
    srv = hostile()
    stop = threading.Event()
    errors = []

    def churn(kind, port, n):
        try:
            for _ in range(n):
                s = connect(port)
                s.sendall(partial_request(kind))
                rst_close(s)
        except OSError as e:  # the server must not refuse; record it
            errors.append(repr(e))

    def worker():
        while not stop.is_set():
            cql_assert_serving(srv.cql_port)

    w = threading.Thread(target=worker)
    w.start()
    threads = [threading.Thread(target=churn, args=(k, p, 250))
               for k, p in (("cql", srv.cql_port), ("http", srv.alt_port),
                            ("http", srv.prom_port), ("cql", srv.shard_port))
               for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    w.join()
    assert not errors, errors[:5]
    wait_connections_idle(srv)
    assert_healthy(srv)


# --- replies nobody reads ---------------------------------------------------


def _pipeline_unread(sock, frames, count):
    """Send `frames` `count` times on `sock` and read nothing; -> sock."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(0.5)
    sent = 0
    data = frames * 64
    try:
        while sent < count:
            sock.sendall(data)
            sent += 64
    except (socket.timeout, OSError):
        pass  # the server stopped reading us: that is the point
    return sock


def test_unread_replies_are_bounded(hostile):
    """Four connections pipeline 20,000 queries each and read nothing: the
    server stops reading them once their unsent replies pass the bound
    (connection_max_unsent_bytes, 256 KiB here), so what it holds for them
    stays small; once they leave, its memory returns."""
    srv = hostile("--connection-max-unsent-bytes", "262144")
    cql_assert_serving(srv.cql_port)
    alt_assert_serving(srv)
    base_mem = metric_sum(srv, "shardmark_mem_in_use_bytes")
    base_rss = rss_bytes(srv)
    query = cql_frame(CQL_OP_QUERY,
                      cql_query_body("SELECT * FROM system.local WHERE key = 'local'"), stream=7)
    startup = cql_frame(CQL_OP_STARTUP, cql_string_map({"CQL_VERSION": "3.0.0"}), stream=1)
    body = json.dumps({}).encode()
    http = (b"POST / HTTP/1.1\r\nHost: x\r\nX-Amz-Target: DynamoDB_20120810.ListTables\r\n"
            b"Content-Type: application/x-amz-json-1.0\r\nContent-Length: "
            + str(len(body)).encode() + b"\r\n\r\n" + body)
    socks = []
    for _ in range(4):
        s = connect(srv.cql_port)
        s.sendall(startup)
        socks.append(_pipeline_unread(s, query, 20000))
    for _ in range(2):
        socks.append(_pipeline_unread(connect(srv.alt_port), http, 20000))
    time.sleep(1.0)
    held = metric_sum(srv, "shardmark_mem_in_use_bytes") - base_mem
    # 6 connections x (256 KiB of replies + what was on its way) plus slack.
    assert held < 64 << 20, f"the server holds {held / 2**20:.0f} MiB for six silent clients"
    assert metric_sum(srv, "shardmark_rx_pauses_total") >= 1
    assert_healthy(srv)
    for s in socks:
        rst_close(s)
    wait_connections_idle(srv)
    wait_for("memory did not return after the clients left",
             lambda: metric_sum(srv, "shardmark_mem_in_use_bytes") - base_mem < 16 << 20)
    # What stays is bounded caches (send buffers, pooled ops), not the burst:
    # the ratio itself is a benchmark figure (docs/benchmarks.md).
    if not SANITIZED:
        wait_for("RSS did not come back under +48 MiB",
                 lambda: rss_bytes(srv) < base_rss + (48 << 20))
    assert_healthy(srv)


# --- slow clients -----------------------------------------------------------


def _trickle(sock, data, gap, until_closed_within):
    """Send a byte every `gap` s; -> (bytes sent, what the server sent back)."""
    sock.settimeout(gap)
    deadline = time.monotonic() + until_closed_within
    got = b""
    i = 0
    while time.monotonic() < deadline:
        try:
            if i < len(data):
                sock.send(data[i:i + 1])
                i += 1
        except OSError:
            break
        try:
            chunk = sock.recv(65536)
            if not chunk:
                return i, got, True
            got += chunk
        except socket.timeout:
            pass
        except OSError:
            return i, got, True
    return i, got, False


def test_slow_clients_are_timed_out(hostile):
    """A byte every 100 ms never finishes a request: CQL answers a protocol
    error and closes after native_transport_frame_timeout_in_ms, HTTP answers
    408 after http_request_timeout_in_ms (Alternator and metrics), and an
    HTTP connection that sends nothing is closed after http_idle_timeout_in_ms."""
    srv = hostile("--native-transport-frame-timeout-in-ms", "1000",
                  "--http-request-timeout-in-ms", "1000",
                  "--http-idle-timeout-in-ms", "1500")
    s = cql_raw_startup(srv.cql_port)
    frame = cql_frame(CQL_OP_QUERY, cql_query_body("SELECT * FROM system.local"), stream=3)
    sent, got, closed = _trickle(s, frame, 0.1, 15)
    assert closed, "a CQL client trickling one byte per 100 ms was never closed"
    assert sent < len(frame)
    _, _, _, opcode, n = struct.unpack(">BBhBI", got[:9])
    assert opcode == CQL_OP_ERROR
    code, msg, _ = cql_parse_error(got[9:9 + n])
    assert code == CQL_ERR_PROTOCOL and "native_transport_frame_timeout_in_ms" in msg, msg
    s.close()

    for port in (srv.alt_port, srv.prom_port):
        s = connect(port)
        req = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Long-Header: " + b"y" * 200 + b"\r\n\r\n"
        sent, got, closed = _trickle(s, req, 0.1, 15)
        assert closed, f"port {port}: a trickling HTTP client was never closed"
        assert got.startswith(b"HTTP/1.1 408"), got[:100]
        s.close()

    s = connect(srv.alt_port)
    s.settimeout(15)
    t0 = time.monotonic()
    assert s.recv(100) == b"", "an idle HTTP connection got data instead of a close"
    assert time.monotonic() - t0 < 14
    s.close()
    assert metric_sum(srv, "shardmark_connections_timed_out_total") >= 4
    assert_healthy(srv)


# --- file descriptors run out -----------------------------------------------


@pytest.mark.skipif(DPDK_TAP, reason="the DPDK stack has no accept(2)")
def test_accept_errors_back_off(shardmark_bin, tmp_path):
    """Under a low open-file limit, 400 clients: accept fails with EMFILE; the
    listener backs off and logs a few lines, not a flood; once the clients
    leave, new ones are served."""
    from conftest import start_alternator_server

    wrapper = tmp_path / "low-nofile.sh"
    wrapper.write_text(f"#!/bin/sh\nulimit -n 160\nexec {shardmark_bin} \"$@\"\n")
    wrapper.chmod(0o755)
    srv = start_alternator_server(wrapper, tmp_path)
    try:
        cql_assert_serving(srv.cql_port)
        socks = []
        for _ in range(400):
            s = socket.socket()
            s.setblocking(False)
            try:
                s.connect((srv.host, srv.cql_port))
            except BlockingIOError:
                pass
            socks.append(s)
        time.sleep(3)
        lines = srv.stderr().count("accept on port")
        assert 1 <= lines <= 3, f"{lines} accept warnings in 3 s"
        assert "raise the open file limit" in srv.stderr()
        for s in socks:
            s.close()
        wait_connections_idle(srv)
        assert metric_sum(srv, "shardmark_accept_errors_total") >= 1
        assert_healthy(srv)
    finally:
        srv.kill()


# --- garbage, oversized and truncated input ---------------------------------


def test_garbage_oversized_and_truncated(hostile):
    """Random bytes, a frame announcing 2 GB, frames cut short, an HTTP request
    with a 1 GB Content-Length: errors or closes, never a crash or a stall."""
    srv = hostile()
    rng = random.Random(1234)
    for _ in range(200):
        for port in (srv.cql_port, srv.alt_port, srv.prom_port):
            s = connect(port)
            s.sendall(bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, 600))))
            rst_close(s)
    s = cql_raw_startup(srv.cql_port)
    s.sendall(struct.pack(">BBhBI", 4, 0, 5, CQL_OP_QUERY, 0x7FFFFFFF))
    _, _, _, opcode, body = cql_read_frame(s)
    assert opcode == CQL_OP_ERROR
    code, msg, _ = cql_parse_error(body)
    assert code == CQL_ERR_PROTOCOL and "too big" in msg, msg
    s.close()
    for cut in (1, 5, 9, 20):
        s = cql_raw_startup(srv.cql_port)
        frame = cql_frame(CQL_OP_QUERY, cql_query_body("SELECT * FROM system.local"), stream=2)
        s.sendall(frame[:cut])
        s.close()
    s = connect(srv.alt_port)
    s.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1073741824\r\n\r\n{}")
    assert s.recv(100).startswith(b"HTTP/1.1 413"), "a 1 GB body was not refused up front"
    s.close()
    assert_healthy(srv)


# --- big batches --------------------------------------------------------------


def test_big_batches(hostile):
    """A 3.3 MB batch of 65,535 INSERTs is refused as ScyllaDB refuses it
    ("Batch too large", batch_size_fail_threshold_in_kb); a batch of 65,535
    small statements is applied, and the memory it took goes back."""
    from cassandra.query import BatchStatement, BatchType
    from conftest import cql_cluster

    srv = hostile()
    cluster = cql_cluster(srv.cql_port)
    try:
        session = cluster.connect()
        session.execute("CREATE KEYSPACE hb WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 1}")
        session.execute("CREATE TABLE hb.t (k int PRIMARY KEY, v text)")
        ins = session.prepare("INSERT INTO hb.t (k, v) VALUES (?, ?)")
        big = BatchStatement(batch_type=BatchType.UNLOGGED)
        for i in range(65535):
            big.add(ins, (i, "x" * 40))
        base_rss = rss_bytes(srv)
        with pytest.raises(Exception, match="Batch too large"):
            session.execute(big, timeout=60)
        small = BatchStatement(batch_type=BatchType.UNLOGGED)
        ins_k = session.prepare("INSERT INTO hb.t (k) VALUES (?)")
        for i in range(65535):
            small.add(ins_k, (i,))
        session.execute(small, timeout=60)
        assert session.execute("SELECT count(*) FROM hb.t").one()[0] == 65535
        peak = rss_bytes(srv) - base_rss
        assert SANITIZED or peak < 400 << 20, \
            f"a 65,535-statement batch left {peak >> 20} MiB of RSS"
    finally:
        cluster.shutdown()
    assert_healthy(srv)


# --- the memory budget --------------------------------------------------------


def test_memory_budget_refuses_writes_keeps_reads(hostile):
    """--memory 256M: a write load runs until writes are refused (CQL
    Overloaded, Alternator RequestLimitExceeded, naming the budget); reads and
    deletes still work, nothing is half-applied, the process stays under its
    budget."""
    from cassandra import OperationTimedOut
    from cassandra.cluster import NoHostAvailable
    from conftest import alt_client, cql_cluster

    srv = hostile("--memory", "256M")
    budget = metric_by_shard(metrics(srv), "shardmark_mem_budget_bytes")
    assert all(v > 0 for v in budget.values()), budget
    cluster = cql_cluster(srv.cql_port)
    refused = None
    try:
        session = cluster.connect()
        session.execute("CREATE KEYSPACE mb WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 1}")
        session.execute("CREATE TABLE mb.t (k int PRIMARY KEY, v blob)")
        ins = session.prepare("INSERT INTO mb.t (k, v) VALUES (?, ?)")
        blob = os.urandom(8192)
        written = []
        k = 0
        while refused is None and k < 200000:
            futures = [(k + i, session.execute_async(ins, (k + i, blob))) for i in range(64)]
            for key, f in futures:
                try:
                    f.result()
                    written.append(key)
                except OperationTimedOut as e:
                    pytest.fail(f"write {key}: {e!r}")
                except Exception as e:  # the refusal we are waiting for
                    # (the driver reports Overloaded as NoHostAvailable)
                    if isinstance(e, NoHostAvailable) and "memory budget" not in str(e):
                        pytest.fail(f"write {key}: {e!r}")
                    refused = e
            k += 64
        assert refused is not None, "256M never filled up"
        assert "memory budget" in str(refused) and "--memory" in str(refused), refused
        # (DPDK's EAL memory, --dpdk-args -m, is outside the budget.)
        assert DPDK_TAP or SANITIZED or rss_bytes(srv) < 256 << 20, \
            f"RSS {rss_bytes(srv) >> 20} MiB over --memory 256M"
        # Reads of what was acknowledged, then deletes, still work.
        sel = session.prepare("SELECT v FROM mb.t WHERE k = ?")
        for key in written[:200] + written[-200:]:
            row = session.execute(sel, (key,)).one()
            assert row is not None and row.v == blob, f"acknowledged write {key} lost"
        dele = session.prepare("DELETE FROM mb.t WHERE k = ?")
        for key in written[:500]:
            session.execute(dele, (key,))
        assert session.execute(sel, (written[0],)).one() is None
        # Alternator writes are refused the same way, with DynamoDB's type.
        client = alt_client(srv)
        try:
            client.create_table(TableName="mbt",
                                KeySchema=[{"AttributeName": "p", "KeyType": "HASH"}],
                                AttributeDefinitions=[{"AttributeName": "p",
                                                       "AttributeType": "S"}],
                                BillingMode="PAY_PER_REQUEST")
        except Exception:
            pass  # a full budget may refuse the table too: the error is the point
        r = alt_raw(srv, "PutItem", json.dumps(
            {"TableName": "mbt", "Item": {"p": {"S": "x" * 1000}}}).encode())
        if r.status == 400:
            assert r.error_type in ("RequestLimitExceeded", "ResourceNotFoundException"), r
    finally:
        cluster.shutdown()
    assert metric_sum(srv, "shardmark_writes_refused_total") >= 1
    assert srv.proc.poll() is None
    assert DPDK_TAP or SANITIZED or rss_bytes(srv) < 256 << 20
    err = srv.stderr()
    for mark in SANITIZER_MARKS:
        assert mark not in err, err[-4000:]


def test_memory_budget_too_small_is_a_usage_error(run_cli):
    r = run_cli("serve", "--memory", "10M", "--smp", "1", "--prometheus-port", "0",
                "--alternator-port", "0")
    assert r.returncode == 2, r
    assert "too small" in r.stderr and "--memory" in r.stderr, r.stderr
    r = run_cli("serve", "--memory", "lots")
    assert r.returncode == 2 and "expected a size like 4G" in r.stderr, r.stderr
