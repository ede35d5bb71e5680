# SPDX-License-Identifier: BSD-3-Clause
"""Shared fixtures for the shardmark integration tests.

The binary under test comes from $SHARDMARK_BIN (meson sets it); without it the
tests fall back to build/app/shardmark/shardmark and skip when that is missing.
Every server is started on free loopback ports and killed at teardown if a
test left it running.
"""

import http.client
import os
import re
import signal
import socket
import struct
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
READY_TIMEOUT = 20.0
EXIT_TIMEOUT = 20.0
IO_TIMEOUT = 30.0

# When every test skipped (no binary, too few CPUs) report "skipped" to meson
# (exit 77) rather than "passed".
_outcomes = {"passed": 0, "failed": 0, "skipped": 0}


def pytest_runtest_logreport(report):
    if report.skipped:
        _outcomes["skipped"] += 1
    elif report.failed:
        _outcomes["failed"] += 1
    elif report.when == "call":
        _outcomes["passed"] += 1


def pytest_sessionfinish(session, exitstatus):
    if exitstatus == 0 and _outcomes["passed"] == 0 and _outcomes["skipped"] > 0:
        session.exitstatus = 77


def allowed_cpus():
    return len(os.sched_getaffinity(0))


def free_port():
    """A TCP port nothing listens on right now (bind to 0, read it, close)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def recv_exact(sock, n):
    """Read exactly n bytes; raise EOFError if the peer closes first."""
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            raise EOFError(f"EOF after {len(buf)} of {n} bytes")
        buf += chunk
    return bytes(buf)


def expect_eof(sock):
    """Assert the peer closes the connection without sending anything more."""
    data = sock.recv(65536)
    assert data == b"", f"expected EOF, got {len(data)} more bytes: {data[:64]!r}"


def frame(payload):
    return struct.pack(">I", len(payload)) + payload


def echo(sock, payload):
    """Send one echo frame and check the reply is the same frame."""
    sock.sendall(frame(payload))
    hdr = recv_exact(sock, 4)
    (n,) = struct.unpack(">I", hdr)
    assert n == len(payload), f"reply length {n:#x}, sent {len(payload)}"
    assert recv_exact(sock, n) == payload, "reply payload differs from request"


def connect(port, timeout=IO_TIMEOUT):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def http_get(port, path, timeout=IO_TIMEOUT):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        body = resp.read().decode("utf-8")
        return resp.status, resp.getheader("Content-Type", ""), body
    finally:
        conn.close()


_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})?\s+(\S+)(?:\s+\S+)?$')
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?')


def parse_prometheus(text):
    """Prometheus text exposition -> list of (name, {label: value}, float)."""
    samples = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = _SAMPLE.match(line)
        assert m, f"not a Prometheus sample line: {line!r}"
        name, labels_text, value = m.groups()
        labels = dict(_LABEL.findall(labels_text or ""))
        samples.append((name, labels, float(value)))
    return samples


def metric_by_shard(samples, name):
    """{shard label: value} for every sample of the metric `name`."""
    return {lab["shard"]: v for n, lab, v in samples if n == name and "shard" in lab}


class Server:
    """One `shardmark serve` process on loopback with free ports."""

    _count = 0

    def __init__(self, binary, workdir, args, echo_port, prom_port):
        Server._count += 1
        self.echo_port = echo_port
        self.prom_port = prom_port
        self.argv = [str(binary), "serve"]
        if echo_port is not None:
            self.argv += ["--echo-port", str(echo_port)]
        if prom_port is not None:
            self.argv += ["--prometheus-port", str(prom_port)]
        self.argv += list(args)
        self.stdout_path = workdir / f"serve-{Server._count}.stdout"
        self.stderr_path = workdir / f"serve-{Server._count}.stderr"
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL,
                                         stdout=out, stderr=err)

    @property
    def pid(self):
        return self.proc.pid

    def stderr(self):
        return self.stderr_path.read_text(errors="replace")

    def describe(self):
        return (f"command: {' '.join(self.argv)}\nexit: {self.proc.poll()}\n"
                f"--- stderr ---\n{self.stderr()}")

    def wait_ready(self, ports=None, timeout=READY_TIMEOUT):
        """Poll until `ports` (default: the echo and Prometheus ports given on
        the command line) accept TCP connections; fail if the process exits."""
        if ports is None:
            ports = [p for p in (self.echo_port, self.prom_port) if p]
        deadline = time.monotonic() + timeout
        pending = list(ports)
        while pending:
            if self.proc.poll() is not None:
                pytest.fail(f"shardmark exited before it was ready\n{self.describe()}")
            try:
                with socket.create_connection(("127.0.0.1", pending[0]), timeout=1):
                    pass
                pending.pop(0)
                continue
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"shardmark ports {pending} not accepting after {timeout}s\n"
                            f"{self.describe()}")
            time.sleep(0.05)
        return self

    def send_signal(self, sig):
        self.proc.send_signal(sig)

    def wait_exit(self, timeout=EXIT_TIMEOUT):
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pytest.fail(f"shardmark did not exit within {timeout}s\n{self.describe()}")

    def stop(self, sig=signal.SIGTERM, timeout=EXIT_TIMEOUT):
        """Signal, wait, and assert a clean exit (code 0)."""
        self.send_signal(sig)
        rc = self.wait_exit(timeout)
        assert rc == 0, f"shardmark exited {rc} after {sig!r}\n{self.describe()}"

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(scope="session")
def shardmark_bin():
    env = os.environ.get("SHARDMARK_BIN")
    if env:
        path = Path(env)
        assert path.is_file() and os.access(path, os.X_OK), \
            f"SHARDMARK_BIN={env} is not an executable file"
        return path
    path = REPO / "build" / "app" / "shardmark" / "shardmark"
    if not path.is_file():
        pytest.skip(f"no shardmark binary: set SHARDMARK_BIN or build {path}")
    return path


@pytest.fixture
def run_cli(shardmark_bin):
    """run_cli(*args, timeout=60) -> CompletedProcess with text stdout/stderr."""
    def run(*args, timeout=60):
        return subprocess.run([str(shardmark_bin), *map(str, args)],
                              stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, errors="replace", timeout=timeout)
    return run


@pytest.fixture
def serve(shardmark_bin, tmp_path):
    """serve(*args, echo=True, prometheus=True, ready=True) -> running Server.

    Ports are free loopback ports passed explicitly; --drain-timeout-ms 5000 and
    --listen-address 127.0.0.1 are added. Pass an int to use that port (0 turns
    the service off), or False to leave the option out so the config file or the
    default decides. wait_ready() polls the ports that were given and non-zero.
    """
    servers = []

    def port_arg(value):
        if value is True:
            return free_port()
        if value is False or value is None:
            return None
        return int(value)

    def start(*args, echo=True, prometheus=True, ready=True):
        echo_port = port_arg(echo)
        prom_port = port_arg(prometheus)
        base = ["--listen-address", "127.0.0.1", "--drain-timeout-ms", "5000"]
        srv = Server(shardmark_bin, tmp_path, base + [str(a) for a in args],
                     echo_port, prom_port)
        servers.append(srv)
        if ready:
            srv.wait_ready()
        return srv

    yield start
    for srv in servers:
        srv.kill()
