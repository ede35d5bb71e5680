# SPDX-License-Identifier: BSD-3-Clause
"""Shared fixtures for the shardmark integration tests.

The binary under test comes from $SHARDMARK_BIN (meson sets it); without it the
tests fall back to build/app/shardmark/shardmark and skip when that is missing.
Every server is started on free loopback ports and killed at teardown if a
test left it running.

SHARDMARK_TEST_NET=dpdk-tap (set by run_pytest_dpdk.sh, which runs pytest in
a network namespace of its own) runs every server started through Server on
the DPDK driver instead: `--network-stack dpdk` on net_tap with --no-huge,
shardmark's own TCP/IP stack, and the clients (the CQL driver, boto3, the AWS
CLI, raw sockets) talking to it through the tap. Each server gets its own tap
and /24 (10.(100 + k // 256).(k % 256).0/24: the kernel side .1, the stack .2,
the listen address), so several servers can run at once; a server started
again on the ports of one that exited (a restart) gets that one's address.
Helpers that take a port reach the server that owns it (host_of(port));
srv.host is the address to use. Unset (or "loopback"), everything runs on
kernel loopback (127.0.0.1) through io_uring.
"""

import collections
import http.client
import ipaddress
import json
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

# Where the clients find the servers: "loopback" or "dpdk-tap" (see above).
TEST_NET = os.environ.get("SHARDMARK_TEST_NET") or "loopback"
if TEST_NET not in ("loopback", "dpdk-tap"):
    raise pytest.UsageError(f"SHARDMARK_TEST_NET={TEST_NET!r}: expected loopback or dpdk-tap")
DPDK_TAP = TEST_NET == "dpdk-tap"
if DPDK_TAP and not subprocess.run(["ip", "netns", "identify"], capture_output=True,
                                   text=True).stdout.strip():
    # The taps and their 10.x addresses belong in a namespace, not on the host.
    raise pytest.UsageError("SHARDMARK_TEST_NET=dpdk-tap outside a network namespace: "
                            "run tests/integration/run_pytest_dpdk.sh")
LOOPBACK_HOST = "127.0.0.1"
# EAL memory per DPDK server (--no-huge: plain anonymous memory).
DPDK_MEM_MB = 512

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


_recent_ports = collections.deque(maxlen=64)
_dpdk_ports = set()


def free_port():
    """A TCP port nothing listens on right now (bind to 0, read it, close).

    The kernel may hand the same port out again once it is released, so a
    server given several free_port() calls could get one port twice; ports
    handed out recently in this process are skipped. In dpdk-tap mode no
    kernel socket holds a server's ports, so no port is handed out twice in
    a process at all: host_of(port) then names one server."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if DPDK_TAP:
            if port not in _dpdk_ports:
                _dpdk_ports.add(port)
                return port
        elif port not in _recent_ports:
            _recent_ports.append(port)
            return port


# port -> the Server last started with it (for helpers given a bare port).
_port_owner = {}


def host_of(port):
    """The address of the server listening on `port` (127.0.0.1 on loopback)."""
    srv = _port_owner.get(port)
    return srv.host if srv is not None else LOOPBACK_HOST


def local_host_of(port):
    """The client side's own address towards the server on `port`."""
    srv = _port_owner.get(port)
    return srv.local_host if srv is not None else LOOPBACK_HOST


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
    s = socket.create_connection((host_of(port), port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def http_get(port, path, timeout=IO_TIMEOUT):
    conn = http.client.HTTPConnection(host_of(port), port, timeout=timeout)
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
    """One `shardmark serve` process on loopback with free ports (in dpdk-tap
    mode: on DPDK behind a tap of its own, at .host)."""

    _count = 0

    def __init__(self, binary, workdir, args, echo_port, prom_port):
        Server._count += 1
        self.echo_port = echo_port
        self.prom_port = prom_port
        self.host = self.local_host = LOOPBACK_HOST
        self.net = self.tap = None
        self.argv = [str(binary), "serve"]
        if echo_port is not None:
            self.argv += ["--echo-port", str(echo_port)]
        if prom_port is not None:
            self.argv += ["--prometheus-port", str(prom_port)]
        # The CQL and Alternator ports default to 9042, 19042 and 8000: give
        # each server its own free ones unless the test chose them (or a
        # config file it passes does: then it names the ports itself).
        given = " ".join(str(a) for a in args)
        if "--config" not in given:
            for opt in ("--native-transport-port", "--native-shard-aware-transport-port",
                        "--alternator-port", "--api-port"):
                if opt not in given:
                    self.argv += [opt, str(free_port())]
        self.argv += list(args)
        if DPDK_TAP:
            self._dpdk_argv()
        for port in self._ports():
            _port_owner[port] = self
        self.stdout_path = workdir / f"serve-{Server._count}.stdout"
        self.stderr_path = workdir / f"serve-{Server._count}.stderr"
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL,
                                         stdout=out, stderr=err)
        if DPDK_TAP:
            self._dpdk_wire()

    _PORT_OPTS = ("--echo-port", "--prometheus-port", "--native-transport-port",
                  "--native-shard-aware-transport-port", "--alternator-port", "--api-port",
                  "--native-transport-port-ssl", "--native-shard-aware-transport-port-ssl",
                  "--alternator-https-port")

    def _ports(self):
        """The non-zero ports on the command line."""
        ports = []
        for i, a in enumerate(self.argv):
            name, eq, value = a.partition("=")
            if name in self._PORT_OPTS:
                value = value if eq else (self.argv[i + 1] if i + 1 < len(self.argv) else "")
                if value.isdigit() and int(value):
                    ports.append(int(value))
        return ports

    # dpdk-tap: net k -> the Server that has it (a net is reused by a restart).
    _nets = {}

    def _dpdk_argv(self):
        """Pick this server's /24 and tap; put the DPDK options on argv."""
        for port in self._ports():
            prev = _port_owner.get(port)
            if (prev is not None and prev.net is not None and prev.proc.poll() is not None
                    and Server._nets.get(prev.net) is prev):
                self.net = prev.net  # started again where it was
                break
        else:
            self.net = len(Server._nets)
        Server._nets[self.net] = self
        base = f"10.{100 + self.net // 256}.{self.net % 256}"
        self.local_host, self.host = f"{base}.1", f"{base}.2"
        self.tap = f"smtap{Server._count}"  # at most 15 characters
        assert len(self.tap) <= 15, self.tap
        argv, i = [], 0
        while i < len(self.argv):
            a = self.argv[i]
            if a == "--listen-address":
                i += 2
                continue
            if not a.startswith("--listen-address="):
                argv.append(a)
            i += 1
        dpdk_args = (f"--no-huge -m {DPDK_MEM_MB} --no-pci --vdev net_tap0,iface={self.tap} "
                     "--log-level=lib.eal:warning")
        # Without RX interrupts an idle DPDK shard wakes every 200 us, and
        # pinned (idle_poll_us 200) it spins between wakes: two idle shards
        # took 85% of a CPU, 13% with --overprovisioned, which the clients on
        # the same CPUs need.
        if "--overprovisioned" not in argv:
            argv.append("--overprovisioned")
        self.argv = argv + ["--listen-address", self.host, "--network-stack", "dpdk",
                            "--dpdk-args", dpdk_args]

    def _dpdk_wire(self):
        """Wait for DPDK to create the tap (or for the process to exit: some
        tests start servers meant to fail), then give the kernel side its
        address and bring it up."""
        deadline = time.monotonic() + READY_TIMEOUT
        while not os.path.exists(f"/sys/class/net/{self.tap}"):
            if self.proc.poll() is not None:
                return
            if time.monotonic() > deadline:
                self.kill()
                pytest.fail(f"no tap {self.tap} after {READY_TIMEOUT}s\n{self.describe()}")
            time.sleep(0.02)
        for cmd in (["addr", "add", f"{self.local_host}/24", "dev", self.tap],
                    ["link", "set", self.tap, "up"]):
            r = subprocess.run(["ip", *cmd], capture_output=True, text=True, timeout=30)
            if r.returncode != 0 and self.proc.poll() is None:
                self.kill()
                pytest.fail(f"ip {' '.join(cmd)}: {r.stderr.strip()}\n{self.describe()}")

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
                with socket.create_connection((self.host, pending[0]), timeout=1):
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
    --listen-address 127.0.0.1 (dpdk-tap: the server's own address) are
    added. Pass an int to use that port (0 turns the service off), or False to
    leave the option out so the config file or the default decides.
    wait_ready() polls the ports that were given and non-zero.
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


# --- CQL native protocol: servers, driver sessions, raw frames ---------------
#
# The CQL tests use the DataStax Python driver (python3-cassandra) under
# /usr/bin/python3; it is imported lazily so that the other test files do not
# need it.

CQL_DRIVER_TIMEOUT = 10.0
CQL_BASE_ARGS = ["--listen-address", "127.0.0.1", "--drain-timeout-ms", "5000"]


def cql_smp_args(smp=2):
    """--smp N, plus --overprovisioned when fewer than N CPUs are allowed."""
    args = ["--smp", str(smp)]
    if allowed_cpus() < smp:
        args.append("--overprovisioned")
    return args


def cql_free_ports(n=3):
    """n distinct free loopback ports."""
    ports = []
    while len(ports) < n:
        p = free_port()
        if p not in ports:
            ports.append(p)
    return tuple(ports)


def cql_wait_host(srv, host, port, timeout=READY_TIMEOUT):
    """Poll until host:port accepts TCP connections (e.g. 127.0.0.2 with
    --shard-nodes true); fail if the process exits."""
    deadline = time.monotonic() + timeout
    while True:
        if srv.proc.poll() is not None:
            pytest.fail(f"shardmark exited before {host}:{port} was ready\n{srv.describe()}")
        try:
            with socket.create_connection((host, port), timeout=1):
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"{host}:{port} not accepting after {timeout}s\n{srv.describe()}")
        time.sleep(0.05)


def _cql_argv(smp, native, shard_aware, args):
    return (cql_smp_args(smp)
            + ["--native-transport-port", str(native),
               "--native-shard-aware-transport-port", str(shard_aware)]
            + [str(a) for a in args])


def _cql_ready(srv, native, shard_aware, prom, args):
    if any(str(a) in ("--shard-nodes", "--shard-nodes=true") for a in args):
        # One node per shard: no shard-aware port (the driver is not shard
        # aware; each node is one shard already).
        srv.wait_ready(ports=[native, prom])
        cql_wait_host(srv, str(ipaddress.IPv4Address(srv.host) + 1), native)
    else:
        srv.wait_ready(ports=[native, shard_aware, prom])


@pytest.fixture
def cql_server(serve):
    """cql_server(*args, smp=2, ports=None, ready=True) -> Server serving CQL.

    Built on `serve`: free native, shard-aware and Prometheus ports (or the
    (native, shard_aware, prometheus) tuple given, e.g. to restart on the
    same ports), no echo port; waits for all three (not the shard-aware port
    with --shard-nodes=true). The Server gets .cql_port, .shard_port and
    .ports attributes. With "--shard-nodes=true" it also waits for
    127.0.0.2:native (the address after srv.host). Restarted on the ports
    of a server that exited, it is at that server's address (dpdk-tap).
    """
    def start(*args, smp=2, ports=None, ready=True):
        native, shard_aware, prom = ports if ports is not None else cql_free_ports()
        srv = serve(*_cql_argv(smp, native, shard_aware, args),
                    echo=False, prometheus=prom, ready=False)
        srv.cql_port, srv.shard_port, srv.ports = native, shard_aware, (native, shard_aware, prom)
        if ready:
            _cql_ready(srv, native, shard_aware, prom, args)
        return srv

    return start


def start_cql_server(binary, workdir, *args, smp=2, ports=None):
    """A CQL server outside the function-scoped `serve` fixture (for module
    fixtures); the caller kills it."""
    native, shard_aware, prom = ports if ports is not None else cql_free_ports()
    srv = Server(binary, workdir, CQL_BASE_ARGS + _cql_argv(smp, native, shard_aware, args),
                 None, prom)
    srv.cql_port, srv.shard_port, srv.ports = native, shard_aware, (native, shard_aware, prom)
    try:
        _cql_ready(srv, native, shard_aware, prom, args)
    except BaseException:
        srv.kill()
        raise
    return srv


def cql_cluster(port, **kwargs):
    """A driver Cluster for the server on `port` (127.0.0.1:port on loopback)
    with driver defaults (no protocol version pinned; schema and token
    metadata on) and modest timeouts."""
    from cassandra.cluster import Cluster
    kwargs.setdefault("connect_timeout", CQL_DRIVER_TIMEOUT)
    kwargs.setdefault("control_connection_timeout", CQL_DRIVER_TIMEOUT)
    return Cluster(contact_points=[host_of(port)], port=port, **kwargs)


def _port_of(target):
    return target if isinstance(target, int) else target.cql_port


@pytest.fixture
def cql_connect():
    """cql_connect(server_or_port, keyspace=None, **cluster_kwargs) ->
    (cluster, session); every cluster is shut down at teardown, also when
    connect() failed."""
    pytest.importorskip("cassandra")
    clusters = []

    def connect(target, keyspace=None, **kwargs):
        cluster = cql_cluster(_port_of(target), **kwargs)
        clusters.append(cluster)
        session = cluster.connect(keyspace)
        return cluster, session

    yield connect
    for cluster in clusters:
        cluster.shutdown()


class CqlEnv:
    """A module's shared server, cluster, session and keyspace."""

    def __init__(self, server, cluster, session, keyspace):
        self.server = server
        self.cluster = cluster
        self.session = session
        self.ks = keyspace


_cql_names = [0]


def cql_unique_name(prefix):
    """A keyspace/table name not used before in this process."""
    _cql_names[0] += 1
    return f"{prefix}_{os.getpid()}_{_cql_names[0]}"


def cql_new_table(env, schema):
    """A new table `schema` ("(k int PRIMARY KEY, ...)") in env's keyspace: its ks.name."""
    t = f"{env.ks}.{cql_unique_name('t')}"
    env.session.execute(f"CREATE TABLE {t} {schema}")
    return t


def cql_rows(session, query, *args):
    """The rows of `query` as tuples."""
    return [tuple(r) for r in session.execute(query, *args)]


def cql_create_keyspace(session, name):
    session.execute(f"CREATE KEYSPACE {name} WITH replication = "
                    "{'class': 'NetworkTopologyStrategy', 'replication_factor': 1}")
    return name


@pytest.fixture(scope="module")
def cql_env(shardmark_bin, tmp_path_factory):
    """One server (--smp 2), driver session and keyspace for a whole module."""
    pytest.importorskip("cassandra")
    workdir = tmp_path_factory.mktemp("cql")
    srv = start_cql_server(shardmark_bin, workdir)
    cluster = cql_cluster(srv.cql_port)
    try:
        session = cluster.connect()
        ks = cql_create_keyspace(session, cql_unique_name("ks"))
        yield CqlEnv(srv, cluster, session, ks)
    finally:
        cluster.shutdown()
        srv.kill()


def cql_assert_serving(port, keyspace=None):
    """A fresh cluster (new connections) runs a normal query on the server."""
    cluster = cql_cluster(port)
    try:
        session = cluster.connect()
        row = session.execute("SELECT release_version FROM system.local WHERE key = 'local'").one()
        assert row is not None and row.release_version, "system.local has no release_version"
        if keyspace:
            session.execute(f"SELECT * FROM system_schema.tables WHERE keyspace_name = '{keyspace}'")
    finally:
        cluster.shutdown()


# Raw native-protocol v4 frames (for what a driver cannot send).

CQL_HEADER = struct.Struct(">BBhBI")  # version, flags, stream, opcode, length
CQL_OP_ERROR = 0x00
CQL_OP_STARTUP = 0x01
CQL_OP_READY = 0x02
CQL_OP_AUTHENTICATE = 0x03
CQL_OP_OPTIONS = 0x05
CQL_OP_SUPPORTED = 0x06
CQL_OP_QUERY = 0x07
CQL_OP_RESULT = 0x08
CQL_OP_PREPARE = 0x09
CQL_OP_EXECUTE = 0x0A
CQL_OP_AUTH_RESPONSE = 0x0F
CQL_OP_AUTH_SUCCESS = 0x10
CQL_ERR_PROTOCOL = 0x000A
CQL_ERR_BAD_CREDENTIALS = 0x0100
CQL_ERR_UNPREPARED = 0x2500


def cql_frame(opcode, body=b"", stream=0, version=0x04, flags=0):
    return CQL_HEADER.pack(version, flags, stream, opcode, len(body)) + body


def cql_string(s):
    b = s.encode("utf-8")
    return struct.pack(">H", len(b)) + b


def cql_long_string(s):
    b = s.encode("utf-8")
    return struct.pack(">i", len(b)) + b


def cql_short_bytes(b):
    return struct.pack(">H", len(b)) + b


def cql_string_map(d):
    return struct.pack(">H", len(d)) + b"".join(cql_string(k) + cql_string(v) for k, v in d.items())


def cql_read_frame(sock):
    """-> (version, flags, stream, opcode, body)."""
    version, flags, stream, opcode, n = CQL_HEADER.unpack(recv_exact(sock, CQL_HEADER.size))
    return version, flags, stream, opcode, recv_exact(sock, n)


def cql_parse_error(body):
    """ERROR body -> (code, message, rest of the body)."""
    (code,) = struct.unpack_from(">i", body, 0)
    (n,) = struct.unpack_from(">H", body, 4)
    return code & 0xFFFFFFFF, body[6:6 + n].decode("utf-8", "replace"), body[6 + n:]


def cql_read_error(sock):
    """Read one frame, assert it is an ERROR; -> (header version, stream, code, message, rest)."""
    version, _, stream, opcode, body = cql_read_frame(sock)
    assert opcode == CQL_OP_ERROR, f"expected ERROR, got opcode {opcode:#04x} body {body[:64]!r}"
    code, msg, rest = cql_parse_error(body)
    return version, stream, code, msg, rest


def cql_raw_startup(port, startup=True):
    """A raw connection, after STARTUP/READY unless startup=False."""
    s = connect(port)
    if startup:
        s.sendall(cql_frame(CQL_OP_STARTUP, cql_string_map({"CQL_VERSION": "3.0.0"}), stream=1))
        _, _, stream, opcode, body = cql_read_frame(s)
        assert (stream, opcode) == (1, CQL_OP_READY), \
            f"STARTUP answered with opcode {opcode:#04x} on stream {stream}: {body[:80]!r}"
    return s


def cql_query_body(query, consistency=0x0001, flags=0):
    return cql_long_string(query) + struct.pack(">HB", consistency, flags)


def cql_supported(port, host=None):
    """OPTIONS on a raw connection -> the SUPPORTED multimap as a dict."""
    with socket.create_connection((host or host_of(port), port), timeout=IO_TIMEOUT) as s:
        s.sendall(cql_frame(CQL_OP_OPTIONS, stream=1))
        _, _, stream, opcode, body = cql_read_frame(s)
    assert (stream, opcode) == (1, CQL_OP_SUPPORTED), f"OPTIONS answered with {opcode:#04x}"
    out, off = {}, 2
    for _ in range(struct.unpack_from(">H", body)[0]):
        (n,) = struct.unpack_from(">H", body, off)
        key = body[off + 2:off + 2 + n].decode()
        off += 2 + n
        vals = []
        (m,) = struct.unpack_from(">H", body, off)
        off += 2
        for _ in range(m):
            (n,) = struct.unpack_from(">H", body, off)
            vals.append(body[off + 2:off + 2 + n].decode())
            off += 2 + n
        out[key] = vals
    return out


def cql_raw_on_shard(port, shard, nr_shards=2):
    """A raw connection to the shard-aware port from a source port that picks
    `shard` (source port % nr_shards, ports 49152-65535), after STARTUP."""
    for p in range(49152 + shard, 65536, nr_shards):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.bind((local_host_of(port), p))
            s.connect((host_of(port), port))
        except OSError:
            s.close()
            continue
        s.settimeout(IO_TIMEOUT)
        s.sendall(cql_frame(CQL_OP_STARTUP, cql_string_map({"CQL_VERSION": "3.0.0"}), stream=1))
        _, _, _, opcode, body = cql_read_frame(s)
        assert opcode == CQL_OP_READY, f"STARTUP answered with {opcode:#04x}: {body[:80]!r}"
        return s
    pytest.fail("no free source port for the shard-aware port")


def cql_parse_rows(body):
    """A Rows RESULT body -> (paging_state or None, rows as lists of raw cell
    bytes or None). Handles simple column types only."""
    kind, flags, ncols = struct.unpack_from(">iii", body)
    assert kind == 2, f"result kind {kind}, expected Rows"
    off = 12
    paging_state = None
    if flags & 0x02:
        (n,) = struct.unpack_from(">i", body, off)
        paging_state = body[off + 4:off + 4 + n]
        off += 4 + n
    if not flags & 0x04:
        def skip_string(o):
            return o + 2 + struct.unpack_from(">H", body, o)[0]
        if flags & 0x01:
            off = skip_string(skip_string(off))
        for _ in range(ncols):
            if not flags & 0x01:
                off = skip_string(skip_string(off))
            off = skip_string(off)
            (tid,) = struct.unpack_from(">H", body, off)
            assert tid not in (0x0000, 0x0020, 0x0021, 0x0022, 0x0030, 0x0031), "simple types only"
            off += 2
    (nrows,) = struct.unpack_from(">i", body, off)
    off += 4
    rows = []
    for _ in range(nrows):
        row = []
        for _ in range(ncols):
            (n,) = struct.unpack_from(">i", body, off)
            off += 4
            row.append(None if n < 0 else body[off:off + n])
            off += max(n, 0)
        rows.append(row)
    return paging_state, rows


def cql_expect_error(session, query, exc_types):
    """Run `query` and assert it fails with one of `exc_types`; the failure
    message names the query (pytest.raises alone would not, in a loop)."""
    try:
        rs = session.execute(query)
    except exc_types as e:
        return e
    rows = rs.all() if rs is not None else None
    pytest.fail(f"expected {exc_types} for {query!r}, "
                f"got a result: {rows!r:.300}")


# --- Alternator (DynamoDB API over HTTP): servers, boto3, raw requests --------
#
# The Alternator tests use Debian's boto3/botocore (python3-boto3) and the AWS
# CLI (awscli, /usr/bin/aws) against `shardmark serve --alternator-port P`.
# Signatures are not checked by default, so any credentials do.

ALT_WRITE_ISOLATION_MODES = ("forbid_rmw", "unsafe", "always_use_lwt", "only_rmw_uses_lwt")
ALT_ACCESS_KEY = "alternator"
ALT_SECRET_KEY = "secret_pass"
ALT_REGION = "us-east-1"
ALT_CONTENT_TYPE = "application/x-amz-json-1.0"
ALT_TARGET_PREFIX = "DynamoDB_20120810."
ALT_ERR_PREFIX = "com.amazonaws.dynamodb.v20120810#"
ALT_TIMEOUT = 30.0


def _alt_argv(smp, ports, isolation, args):
    alt, native, shard_aware = ports
    argv = cql_smp_args(smp) + ["--alternator-port", str(alt),
                                "--native-transport-port", str(native),
                                "--native-shard-aware-transport-port", str(shard_aware)]
    if isolation is not None:
        argv += ["--alternator-write-isolation", str(isolation)]
    return argv + [str(a) for a in args]


def _alt_attach(srv, alt, native, shard_aware, prom):
    srv.alt_port = alt
    srv.alt_url = f"http://{srv.host}:{alt}"
    srv.cql_port, srv.shard_port = native, shard_aware
    srv.ports = (alt, native, shard_aware, prom)
    return srv


def start_alternator_server(binary, workdir, *args, isolation=None, smp=2):
    """An Alternator server outside the function-scoped `serve` fixture (for
    module fixtures); free Alternator, CQL and Prometheus ports, waits for the
    Alternator and Prometheus ports. The caller kills it."""
    alt, native, shard_aware, prom = cql_free_ports(4)
    srv = Server(binary, workdir,
                 CQL_BASE_ARGS + _alt_argv(smp, (alt, native, shard_aware), isolation, args),
                 None, prom)
    _alt_attach(srv, alt, native, shard_aware, prom)
    try:
        srv.wait_ready(ports=[alt, prom])
    except BaseException:
        srv.kill()
        raise
    return srv


@pytest.fixture
def alternator(serve):
    """alternator(*args, isolation=None, smp=2, ready=True) -> Server serving
    Alternator on free ports (.alt_port, .alt_url); built on `serve`, so it is
    killed at teardown. isolation=None leaves --alternator-write-isolation out."""
    pytest.importorskip("boto3")

    def start(*args, isolation=None, smp=2, ready=True):
        alt, native, shard_aware, prom = cql_free_ports(4)
        srv = serve(*_alt_argv(smp, (alt, native, shard_aware), isolation, args),
                    echo=False, prometheus=prom, ready=False)
        _alt_attach(srv, alt, native, shard_aware, prom)
        if ready:
            srv.wait_ready(ports=[alt, prom])
        return srv

    return start


@pytest.fixture(scope="module")
def alternator_server(shardmark_bin, tmp_path_factory):
    """One Alternator server (--smp 2, default write isolation) per module."""
    pytest.importorskip("boto3")
    srv = start_alternator_server(shardmark_bin, tmp_path_factory.mktemp("alternator"))
    yield srv
    srv.kill()


def alt_boto_config(**kwargs):
    """No retries (a failure shows at once), modest timeouts and, as ScyllaDB's
    Alternator suite does, no client-side parameter validation so that the
    server's own validation is what the tests see."""
    import botocore.config
    kwargs.setdefault("retries", {"max_attempts": 0})
    kwargs.setdefault("connect_timeout", ALT_TIMEOUT)
    kwargs.setdefault("read_timeout", ALT_TIMEOUT)
    kwargs.setdefault("parameter_validation", False)
    return botocore.config.Config(**kwargs)


def _alt_port_of(target):
    return target if isinstance(target, int) else target.alt_port


def alt_boto_kwargs(target, **config):
    port = _alt_port_of(target)
    return dict(endpoint_url=f"http://{host_of(port)}:{port}",
                region_name=ALT_REGION, aws_access_key_id=ALT_ACCESS_KEY,
                aws_secret_access_key=ALT_SECRET_KEY, config=alt_boto_config(**config))


def alt_resource(target, **config):
    """boto3.resource('dynamodb') for a server or port."""
    import boto3
    return boto3.session.Session().resource("dynamodb", **alt_boto_kwargs(target, **config))


def alt_client(target, **config):
    """boto3.client('dynamodb') for a server or port (thread-safe, unlike a resource)."""
    import boto3
    return boto3.session.Session().client("dynamodb", **alt_boto_kwargs(target, **config))


@pytest.fixture(scope="module")
def dynamodb(alternator_server):
    """boto3 DynamoDB resource on the module's Alternator server; .meta.client
    is the low-level client."""
    return alt_resource(alternator_server)


_alt_names = [0]


def alt_unique_table_name(prefix="alt"):
    """A table name not used before in this process (letters, digits, _)."""
    _alt_names[0] += 1
    return f"{prefix}_{os.getpid()}_{_alt_names[0]}"


def alt_create_table(dynamodb, hash_key=("p", "S"), range_key=None, name=None, **kwargs):
    """CreateTable (PAY_PER_REQUEST unless BillingMode is given) with the given
    (name, type) keys; -> the boto3 Table."""
    name = name or alt_unique_table_name()
    schema = [{"AttributeName": hash_key[0], "KeyType": "HASH"}]
    defs = [{"AttributeName": hash_key[0], "AttributeType": hash_key[1]}]
    if range_key is not None:
        schema.append({"AttributeName": range_key[0], "KeyType": "RANGE"})
        defs.append({"AttributeName": range_key[0], "AttributeType": range_key[1]})
    kwargs.setdefault("BillingMode", "PAY_PER_REQUEST")
    dynamodb.meta.client.create_table(TableName=name, KeySchema=schema,
                                      AttributeDefinitions=defs, **kwargs)
    return dynamodb.Table(name)


def alt_create_indexed_table(dynamodb, prefix="idx"):
    """A table keyed (p, c) with LSI 'lsi' on (p, l) and GSI 'gsi' on g, all
    strings, projecting everything; -> the boto3 Table."""
    name = alt_unique_table_name(prefix)
    dynamodb.meta.client.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "p", "KeyType": "HASH"},
                   {"AttributeName": "c", "KeyType": "RANGE"}],
        LocalSecondaryIndexes=[{"IndexName": "lsi", "KeySchema": [
            {"AttributeName": "p", "KeyType": "HASH"}, {"AttributeName": "l", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"}}],
        GlobalSecondaryIndexes=[{"IndexName": "gsi", "KeySchema": [
            {"AttributeName": "g", "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"}}],
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"}
                              for a in ("p", "c", "g", "l")])
    return dynamodb.Table(name)


def alt_all_pages(fn, **kwargs):
    """All items of a Query or Scan (fn: the table's or client's query or
    scan), following LastEvaluatedKey."""
    r = fn(**kwargs)
    items = r["Items"]
    while "LastEvaluatedKey" in r:
        r = fn(ExclusiveStartKey=r["LastEvaluatedKey"], **kwargs)
        items += r["Items"]
    return items


def alt_error(exc_info_or_error):
    """A ClientError (or pytest ExceptionInfo of one) -> (code, message)."""
    e = getattr(exc_info_or_error, "value", exc_info_or_error)
    err = e.response.get("Error", {})
    return err.get("Code"), err.get("Message", "")


def alt_expect_error(code, fn, *args, match=None, **kwargs):
    """Call fn(*args, **kwargs), assert it raises a ClientError with error code
    `code` (and a message matching the regex `match`); -> the ClientError."""
    from botocore.exceptions import ClientError
    try:
        result = fn(*args, **kwargs)
    except ClientError as e:
        got, msg = alt_error(e)
        assert got == code, f"expected {code}, got {got}: {msg}"
        if match is not None:
            assert re.search(match, msg), f"{code} message {msg!r} does not match {match!r}"
        return e
    pytest.fail(f"expected {code} from {getattr(fn, '__name__', fn)}({kwargs!r:.300}), "
                f"got a result: {result!r:.300}")


class AltReply:
    """A raw Alternator HTTP reply."""

    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body
        try:
            self.json = json.loads(body.decode("utf-8")) if body else None
        except ValueError:
            self.json = None

    @property
    def error_type(self):
        """'ValidationException' from '__type', or None."""
        if isinstance(self.json, dict) and "__type" in self.json:
            return self.json["__type"].rsplit("#", 1)[-1]
        return None

    @property
    def message(self):
        if isinstance(self.json, dict):
            return self.json.get("message", self.json.get("Message", ""))
        return ""

    def __repr__(self):
        return f"AltReply({self.status}, {self.body[:300]!r})"


def alt_raw(target, op, body, headers=None, method="POST", path="/", timeout=ALT_TIMEOUT):
    """One raw HTTP request on a fresh connection. `op` is the operation (the
    X-Amz-Target is 'DynamoDB_20120810.<op>'; None sends no X-Amz-Target);
    `body` a dict/list (sent as JSON), str or bytes. -> AltReply."""
    port = _alt_port_of(target)
    conn = http.client.HTTPConnection(host_of(port), port, timeout=timeout)
    try:
        if isinstance(body, (dict, list)):
            payload = json.dumps(body).encode()
        elif isinstance(body, str):
            payload = body.encode()
        else:
            payload = body
        hdrs = {"Content-Type": ALT_CONTENT_TYPE}
        if op is not None:
            hdrs["X-Amz-Target"] = ALT_TARGET_PREFIX + op
        hdrs.update(headers or {})
        conn.request(method, path, body=payload, headers=hdrs)
        resp = conn.getresponse()
        data = resp.read()
        return AltReply(resp.status, {k.lower(): v for k, v in resp.getheaders()}, data)
    finally:
        conn.close()


def alt_assert_serving(target, table=None, key=None):
    """A new client (new connection) lists tables and, given a table and a
    key, reads that item."""
    client = alt_client(target)
    try:
        names = client.list_tables()["TableNames"]
        if table is not None:
            assert table in names, f"{table} missing from ListTables {names}"
            if key is not None:
                got = client.get_item(TableName=table, Key=key, ConsistentRead=True)
                assert "Item" in got, f"item {key} missing from {table}"
    finally:
        client.close()


@pytest.fixture(scope="module")
def dynamodb_client(alternator_server):
    """A plain boto3 DynamoDB client (wire format {'S': ...}) on the module's
    server. Not dynamodb.meta.client: a resource's client converts Python
    values itself, so it would wrap {'S': 'x'} into a map."""
    client = alt_client(alternator_server)
    yield client
    client.close()
