# SPDX-License-Identifier: BSD-3-Clause
"""The echo service of `shardmark serve`, driven over loopback.

Protocol: a request is a 4-byte big-endian length N then N bytes; the reply is
the identical frame. Oversize lengths get 0xFFFFFFFF, a 4-byte message length,
a UTF-8 message, then the server closes.

Random data comes from random.Random(seed); the seed is printed (pytest shows
it on failure) and can be fixed with SHARDMARK_TEST_SEED. Timeouts only guard
against hangs: nothing here asserts on speed.
"""

import collections
import os
import random
import re
import selectors
import signal
import socket
import struct
import threading
import time

import pytest

from conftest import (allowed_cpus, connect, echo, expect_eof, frame,
                      http_get, metric_by_shard, parse_prometheus, recv_exact)

MiB = 1 << 20


def make_rng():
    seed = int(os.environ.get("SHARDMARK_TEST_SEED", time.time_ns() % (1 << 32)))
    print(f"random seed: {seed} (rerun with SHARDMARK_TEST_SEED={seed})")
    return random.Random(seed), seed


def two_shards():
    if allowed_cpus() < 2:
        pytest.skip(f"needs 2 allowed CPUs for --smp 2, this process has {allowed_cpus()}")


def some_shards():
    """Two shards where the machine allows it, else one."""
    return str(min(2, allowed_cpus()))


# --- the main load: many connections, random sizes, some pipelining ---------

N_CONNECTIONS = 200
PAYLOAD_BUDGET = 128 * MiB  # bytes sent; the same comes back: ~256 MiB of traffic
LOAD_DEADLINE = 300.0


def log_uniform_size(rng):
    """1 B .. 1 MiB, uniform in log2 so that small and large frames both occur."""
    return max(1, min(MiB, int(2.0 ** rng.uniform(0.0, 20.0))))


def make_plan(rng):
    """Per connection, a list of batches; a batch is a list of payloads sent
    back to back (pipelined when it has more than one) before reading replies."""
    plan = []
    budget = PAYLOAD_BUDGET
    for c in range(N_CONNECTIONS):
        sizes = [log_uniform_size(rng) for _ in range(rng.randint(2, 8))]
        if c == 0:
            sizes[0] = 1  # make sure both extremes occur
        if c == 1:
            sizes[0] = MiB
        batches, i = [], 0
        while i < len(sizes):
            k = rng.choice((1, 1, 2, 3, 4))
            batch = []
            for n in sizes[i:i + k]:
                if n > budget:
                    n = rng.randint(1, 4096)
                budget -= n
                batch.append(rng.randbytes(n))
            batches.append(batch)
            i += k
        plan.append(batches)
    return plan


class EchoClient:
    """One non-blocking connection working through its batches; replies are
    compared byte for byte with the frames sent, in order."""

    def __init__(self, index, sock, batches):
        self.index = index
        self.sock = sock
        self.batches = collections.deque(batches)
        self.tx = collections.deque()  # memoryviews still to send
        self.rx = collections.deque()  # frames whose reply is still expected
        self.rx_off = 0
        self.frames_done = 0
        self.next_batch()

    def next_batch(self):
        for payload in self.batches.popleft():
            wire = memoryview(frame(payload))
            self.tx.append(wire)
            self.rx.append(wire)

    @property
    def done(self):
        return not self.rx and not self.batches

    def events(self):
        return selectors.EVENT_READ | (selectors.EVENT_WRITE if self.tx else 0)

    def on_writable(self):
        while self.tx:
            try:
                sent = self.sock.send(self.tx[0])
            except BlockingIOError:
                return
            if sent < len(self.tx[0]):
                self.tx[0] = self.tx[0][sent:]
                return
            self.tx.popleft()

    def on_readable(self):
        try:
            data = self.sock.recv(256 * 1024)
        except BlockingIOError:
            return
        where = f"connection {self.index}, reply {self.frames_done}"
        assert data, f"{where}: server closed the connection early " \
                     f"(after {self.rx_off} bytes of the reply)"
        data = memoryview(data)
        while data:
            assert self.rx, f"{where}: {len(data)} bytes the client never asked for"
            expected = self.rx[0]
            k = min(len(data), len(expected) - self.rx_off)
            got, want = data[:k], expected[self.rx_off:self.rx_off + k]
            if got != want:
                bad = next(i for i in range(k) if got[i] != want[i])
                pytest.fail(f"{where} (frame of {len(expected) - 4} bytes): byte "
                            f"{self.rx_off + bad} differs: got {got[bad]:#04x}, "
                            f"expected {want[bad]:#04x}")
            self.rx_off += k
            data = data[k:]
            if self.rx_off == len(expected):
                self.rx.popleft()
                self.rx_off = 0
                self.frames_done += 1
                if not self.rx and self.batches:
                    self.next_batch()


def run_load(port, plan, seed):
    clients = []
    sel = selectors.DefaultSelector()
    try:
        for i, batches in enumerate(plan):
            sock = connect(port)
            sock.setblocking(False)
            clients.append(EchoClient(i, sock, batches))
        for c in clients:
            sel.register(c.sock, c.events(), c)
        active = len(clients)
        deadline = time.monotonic() + LOAD_DEADLINE
        while active:
            if time.monotonic() > deadline:
                stuck = [c.index for c in clients if not c.done]
                pytest.fail(f"seed {seed}: {len(stuck)} connections unfinished after "
                            f"{LOAD_DEADLINE}s (first: {stuck[:10]})")
            for key, ev in sel.select(timeout=1.0):
                c = key.data
                if ev & selectors.EVENT_WRITE:
                    c.on_writable()
                if ev & selectors.EVENT_READ:
                    c.on_readable()
                if c.done:
                    sel.unregister(c.sock)
                    c.sock.close()
                    active -= 1
                else:
                    sel.modify(c.sock, c.events(), c)
    finally:
        for c in clients:
            c.sock.close()
        sel.close()
    return sum(c.frames_done for c in clients)


def test_echo_many_connections(serve):
    two_shards()
    rng, seed = make_rng()
    plan = make_plan(rng)
    n_frames = sum(len(b) for batches in plan for b in batches)
    n_bytes = sum(len(p) for batches in plan for b in batches for p in b)
    print(f"{N_CONNECTIONS} connections, {n_frames} frames, {n_bytes} payload bytes")

    srv = serve("--smp", "2")
    assert run_load(srv.echo_port, plan, seed) == n_frames

    # Counters may be gathered from the shards asynchronously: poll a little
    # for the request count to settle, then assert on the last reading.
    deadline = time.monotonic() + 10
    while True:
        status, _, body = http_get(srv.prom_port, "/metrics")
        assert status == 200, body
        samples = parse_prometheus(body)
        requests = metric_by_shard(samples, "shardmark_requests_total")
        if sum(requests.values()) == n_frames or time.monotonic() > deadline:
            break
        time.sleep(0.1)

    opened = metric_by_shard(samples, "shardmark_connections_opened_total")
    assert opened.get("0", 0) > 0 and opened.get("1", 0) > 0, \
        f"connections not spread over both shards: {opened}"
    assert sum(opened.values()) >= N_CONNECTIONS, opened
    assert sum(requests.values()) == n_frames, \
        f"shardmark_requests_total {requests} != {n_frames} frames sent"
    srv.stop()


def test_metrics_and_stats_endpoints(serve):
    two_shards()
    srv = serve("--smp", "2")
    with connect(srv.echo_port) as s:
        echo(s, b"hello")

    status, ctype, body = http_get(srv.prom_port, "/metrics")
    assert status == 200, body
    assert ctype.startswith("text/plain"), ctype
    samples = parse_prometheus(body)
    for name in ("shardmark_connections_opened_total", "shardmark_connections_active",
                 "shardmark_requests_total"):
        assert set(metric_by_shard(samples, name)) == {"0", "1"}, \
            f"{name} should have shard=\"0\" and shard=\"1\" samples"
    perf = [(lab, v) for n, lab, v in samples if n == "shardmark_perf_available"]
    assert perf, "no shardmark_perf_available samples"
    assert {lab.get("shard") for lab, _ in perf} == {"0", "1"}
    assert all("counter" in lab and v in (0.0, 1.0) for lab, v in perf), perf

    # The reactor's own view: its time by kind, its stalls, its scheduling latency.
    for name in ("shardmark_reactor_busy_seconds_total", "shardmark_reactor_idle_poll_seconds_total",
                 "shardmark_reactor_sleep_seconds_total", "shardmark_reactor_stalls_total",
                 "shardmark_reactor_scheduling_latency_seconds_count",
                 "shardmark_reactor_scheduling_latency_seconds_sum"):
        assert set(metric_by_shard(samples, name)) == {"0", "1"}, name
    sleep = metric_by_shard(samples, "shardmark_reactor_sleep_seconds_total")
    assert all(v > 0 for v in sleep.values()), f"an idle server sleeps: {sleep}"
    buckets = [(lab, v) for n, lab, v in samples
               if n == "shardmark_reactor_scheduling_latency_seconds_bucket" and lab.get("shard") == "0"]
    assert buckets[-1][0]["le"] == "+Inf", buckets[-1]
    counts = [v for _, v in buckets]
    assert counts == sorted(counts), f"histogram buckets are cumulative: {counts}"
    count = metric_by_shard(samples, "shardmark_reactor_scheduling_latency_seconds_count")["0"]
    assert counts[-1] == count, (counts[-1], count)

    # ScyllaDB's names beside ours, for scylla-monitoring's reactor and memory panels.
    util = metric_by_shard(samples, "scylla_reactor_utilization")
    assert set(util) == {"0", "1"} and all(0 <= v <= 100 for v in util.values()), util
    for name in ("scylla_reactor_tasks_processed", "scylla_reactor_polls",
                 "scylla_reactor_cpu_busy_ms", "scylla_reactor_sleep_time_ms_total",
                 "scylla_memory_malloc_operations", "scylla_memory_allocated_memory"):
        assert set(metric_by_shard(samples, name)) == {"0", "1"}, name

    # io_uring's own counters: what each enter carried, where the kernel ran short.
    for name in ("shardmark_net_uring_sqes_total", "shardmark_net_uring_cqes_total",
                 "shardmark_net_uring_sends_total", "shardmark_net_uring_recvs_total",
                 "shardmark_net_uring_short_sends_total",
                 "shardmark_net_uring_rx_buffer_starvation_total"):
        assert set(metric_by_shard(samples, name)) == {"0", "1"}, name
    assert sum(metric_by_shard(samples, "shardmark_net_uring_sends_total").values()) >= 1
    assert sum(metric_by_shard(samples, "shardmark_net_uring_recvs_total").values()) >= 1

    status, _, body = http_get(srv.prom_port, "/stats")
    assert status == 200, body
    assert "shard" in body.lower(), body
    for col in ("busy%", "sleep%", "stalls", "sched_p99(us)"):
        assert col in body, f"/stats lacks the {col} column: {body}"
    srv.stop()


# --- protocol errors ----------------------------------------------------------

def read_error_frame(sock):
    assert recv_exact(sock, 4) == b"\xff\xff\xff\xff", "expected the 0xFFFFFFFF error marker"
    (n,) = struct.unpack(">I", recv_exact(sock, 4))
    assert 0 < n <= 65536, f"error message length {n}"
    return recv_exact(sock, n).decode("utf-8")


def test_oversize_frame_gets_error_then_eof(serve):
    srv = serve("--smp", "1", "--echo-max-frame", "4096")
    with connect(srv.echo_port) as s:
        echo(s, b"x" * 4096)  # exactly the limit is fine
        s.sendall(struct.pack(">I", 4097))
        msg = read_error_frame(s)
        assert "4096" in msg, f"error message should name the limit: {msg!r}"
        expect_eof(s)
    with connect(srv.echo_port) as s:
        echo(s, b"still serving")
    srv.stop()


def test_oversize_frame_default_limit(serve):
    srv = serve("--smp", "1")
    with connect(srv.echo_port) as s:
        s.sendall(struct.pack(">I", 16 * MiB + 1))
        msg = read_error_frame(s)
        assert msg.strip(), "empty error message"
        expect_eof(s)
    srv.stop()


def test_client_disconnects_mid_frame(serve):
    rng, _ = make_rng()
    srv = serve("--smp", some_shards())
    for i in range(20):
        s = connect(srv.echo_port)
        s.sendall(struct.pack(">I", 1000) + b"0123456789")
        if i % 2:
            # abortive close: RST instead of FIN
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()
    for _ in range(4):
        with connect(srv.echo_port) as s:
            echo(s, rng.randbytes(1000))
    assert srv.proc.poll() is None, srv.describe()
    srv.stop()


# --- signals ------------------------------------------------------------------

def test_sigterm_drains_connections(serve):
    rng, _ = make_rng()
    srv = serve("--smp", some_shards())
    idle = []
    try:
        for _ in range(50):
            s = connect(srv.echo_port)
            echo(s, b"ping")  # accepted and served before the signal
            idle.append(s)
        busy = connect(srv.echo_port)
        idle.append(busy)
        # Served once first: a connection still in the kernel's accept queue
        # when the signal lands is reset with the listener (as with nginx or
        # Seastar), and this test is about requests of served connections.
        echo(busy, b"ping")
        payload = rng.randbytes(MiB)
        busy.sendall(frame(payload))
        srv.send_signal(signal.SIGTERM)

        assert recv_exact(busy, 4) == struct.pack(">I", MiB)
        assert recv_exact(busy, MiB) == payload, "drained reply differs from request"
        for s in idle:
            s.settimeout(20)
            expect_eof(s)
    finally:
        for s in idle:
            s.close()
    rc = srv.wait_exit()
    assert rc == 0, f"exit {rc} after SIGTERM\n{srv.describe()}"


def test_sigterm_while_clients_connect(serve):
    """Connections arriving during the drain (accepted, handed to another
    shard, or refused) must not crash it. Repeated: the window is small."""
    for _ in range(5):
        srv = serve("--smp", some_shards())
        stop = threading.Event()

        def churn():
            while not stop.is_set():
                try:
                    socket.create_connection(("127.0.0.1", srv.echo_port), timeout=5).close()
                except OSError:
                    pass  # refused or reset once the listener is closed

        threads = [threading.Thread(target=churn) for _ in range(4)]
        for t in threads:
            t.start()
        try:
            time.sleep(0.2)  # let connections flow before the signal
            srv.send_signal(signal.SIGTERM)
            rc = srv.wait_exit()
        finally:
            stop.set()
            for t in threads:
                t.join()
        assert rc == 0, f"exit {rc} after SIGTERM during connection churn\n{srv.describe()}"


def test_sigint_exits_cleanly(serve):
    srv = serve("--smp", "1")
    with connect(srv.echo_port) as s:
        echo(s, b"hello")
    srv.stop(signal.SIGINT)


def shard_table_rows(text, nshards):
    """Shard ids found as the first column after a header line naming "shard"."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if "shard" not in line.lower():
            continue
        rows = set()
        for row in lines[i + 1:]:
            first = next((t for t in re.split(r"[\s|]+", row) if t), "")
            if first.isdigit() and int(first) < nshards:
                rows.add(int(first))
        if rows == set(range(nshards)):
            return rows
    return set()


def test_sigusr1_prints_shard_table(serve):
    n = int(some_shards())
    srv = serve("--smp", str(n))
    with connect(srv.echo_port) as s:
        echo(s, b"hello")
    srv.send_signal(signal.SIGUSR1)
    deadline = time.monotonic() + 10
    while not shard_table_rows(srv.stderr(), n):
        assert srv.proc.poll() is None, f"exited on SIGUSR1\n{srv.describe()}"
        if time.monotonic() > deadline:
            pytest.fail(f"no per-shard table (header with 'shard', rows 0..{n - 1}) "
                        f"on stderr after SIGUSR1\n{srv.describe()}")
        time.sleep(0.05)
    with connect(srv.echo_port) as s:
        echo(s, b"still serving")
    srv.stop()
