# SPDX-License-Identifier: BSD-3-Clause
"""network_stack dpdk: shardmark on DPDK's net_tap with --no-huge, talking to
kernel clients (ICMP, the CQL python driver, boto3) through the tap.

The test creates a network namespace and runs shardmark inside it, so the
tap interface DPDK creates is born in the namespace (moving a live tap
between namespaces stops the kernel side from passing frames). The kernel
side of the tap gets 10.231.0.1/24 and shardmark's own stack 10.231.0.2.
Every client runs in the namespace too; nothing touches the host's network.

Skips with the reason when the binary has no DPDK driver, when not root, or
when the namespace or the tap cannot be created. The CQL and Alternator
suites (test_cql_*.py, test_alternator_*.py) also run whole on this path:
run_pytest_dpdk.sh runs them in a namespace of its own with
SHARDMARK_TEST_NET=dpdk-tap, and conftest.py then starts every server on
DPDK behind a tap and /24 of its own (meson: integration-dpdk-cql and
integration-dpdk-alternator). (EAL with --no-huge runs
under AddressSanitizer too, so the ASan build runs these tests.)

The memif tests run two shardmark processes, each on DPDK with its own
stack and no kernel on the data path: `serve` owns net_memif's server side
of a unix socket and `stress` connects as its client; the two stacks find
each other with ARP over the memif link. They need no namespace or tap, and
skip when the binary has no DPDK driver, when not root, or when this DPDK
has no memif PMD.
"""

import contextlib
import os
import re
import subprocess
import time

import pytest

KERNEL_IP = "10.231.0.1"
STACK_IP = "10.231.0.2"
READY_TIMEOUT = 30.0
PY = "/usr/bin/python3"


def _version(binary):
    return subprocess.run([str(binary), "version"], capture_output=True, text=True,
                          timeout=30).stdout


def _ip(*args, check=True):
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30,
                          check=check)


def _nsexec(ns, argv, timeout=60, **kw):
    return subprocess.run(["ip", "netns", "exec", ns, *argv], capture_output=True,
                          text=True, timeout=timeout, **kw)


@pytest.fixture(scope="module")
def dpdk_bin(shardmark_bin):
    if "DPDK driver: built" not in _version(shardmark_bin):
        pytest.skip("this shardmark has no DPDK driver (install libdpdk-dev and rebuild)")
    if os.geteuid() != 0:
        pytest.skip("needs root: creates a network namespace and a tap device")
    if not os.path.exists("/dev/net/tun"):
        pytest.skip("no /dev/net/tun: net_tap cannot create its interface")
    return shardmark_bin


@contextlib.contextmanager
def _namespace(tag):
    name = f"smdpdk-{os.getpid()}-{tag}"
    r = _ip("netns", "add", name, check=False)
    if r.returncode != 0:
        pytest.skip(f"cannot create a network namespace: {r.stderr.strip()}")
    try:
        _ip("-n", name, "link", "set", "lo", "up")
        yield name
    finally:
        _ip("netns", "del", name, check=False)


@pytest.fixture(scope="module")
def netns(dpdk_bin):
    with _namespace("m") as name:
        yield name


class DpdkServer:
    _count = 0

    def __init__(self, binary, ns, workdir, smp=1, extra=(), dpdk_extra=None):
        DpdkServer._count += 1
        self.ns = ns
        self.tap = f"smtap{os.getpid() % 100000}{DpdkServer._count % 10}"
        self.dpdk_args = (f"--no-huge -m 512 --no-pci --vdev net_tap0,iface={self.tap} "
                          f"--log-level=lib.eal:warning")
        if dpdk_extra:
            # the driver's own options follow a lone "--"
            self.dpdk_args += " -- " + dpdk_extra
        self.argv = [str(binary), "serve", "--network-stack", "dpdk", "--smp", str(smp),
                     "--overprovisioned", "--listen-address", STACK_IP,
                     "--dpdk-args", self.dpdk_args, *extra]
        self.stderr_path = workdir / "serve-dpdk.stderr"
        env = dict(os.environ)
        env.pop("SHARDMARK_CONFIG", None)
        with open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(["ip", "netns", "exec", ns, *self.argv],
                                         stdin=subprocess.DEVNULL, stdout=err, stderr=err,
                                         env=env)

    def stderr(self):
        return self.stderr_path.read_text(errors="replace")

    def describe(self):
        return (f"command: {' '.join(self.argv)}\nexit: {self.proc.poll()}\n"
                f"--- output ---\n{self.stderr()}")

    def wait_ready(self):
        """Wait for the tap, address it, then for the serving line."""
        deadline = time.monotonic() + READY_TIMEOUT
        while _ip("-n", self.ns, "link", "show", self.tap, check=False).returncode != 0:
            if self.proc.poll() is not None:
                pytest.fail(f"shardmark exited before creating the tap\n{self.describe()}")
            if time.monotonic() > deadline:
                pytest.fail(f"no tap {self.tap} after {READY_TIMEOUT}s\n{self.describe()}")
            time.sleep(0.05)
        _ip("-n", self.ns, "addr", "add", f"{KERNEL_IP}/24", "dev", self.tap)
        _ip("-n", self.ns, "link", "set", self.tap, "up")
        while "serving cql" not in self.stderr():
            if self.proc.poll() is not None:
                pytest.fail(f"shardmark exited before serving\n{self.describe()}")
            if time.monotonic() > deadline:
                pytest.fail(f"not serving after {READY_TIMEOUT}s\n{self.describe()}")
            time.sleep(0.05)
        return self

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                return self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                pytest.fail(f"shardmark did not exit on SIGTERM\n{self.describe()}")
        return self.proc.returncode


@pytest.fixture(scope="module", params=[1, 2], ids=["smp1", "smp2"])
def server(request, dpdk_bin, netns, tmp_path_factory):
    srv = DpdkServer(dpdk_bin, netns, tmp_path_factory.mktemp("dpdk"), smp=request.param)
    try:
        srv.wait_ready()
        yield srv
    finally:
        rc = srv.stop()
    assert rc == 0, f"shardmark exited with {rc}\n{srv.describe()}"


def client(ns, code, timeout=90):
    """Run python code in the namespace; fail with its output on error."""
    r = _nsexec(ns, [PY, "-c", code], timeout=timeout)
    assert r.returncode == 0, f"client failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    return r.stdout


PING = f"""
import socket, struct
def csum(b):
    if len(b) % 2: b += b'\\0'
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xffff); s += s >> 16
    return ~s & 0xffff
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
s.settimeout(5)
payload = b'shardmark-ping' * 8
for seq in range(1, 4):
    body = struct.pack('!BBHHH', 8, 0, 0, 0x5d5d, seq) + payload
    body = struct.pack('!BBHHH', 8, 0, csum(body), 0x5d5d, seq) + payload
    s.sendto(body, ('{STACK_IP}', 0))
    while True:
        d, a = s.recvfrom(4096)
        ihl = (d[0] & 0xf) * 4
        t, code, _, ident, rseq = struct.unpack('!BBHHH', d[ihl:ihl + 8])
        if t == 0 and ident == 0x5d5d and rseq == seq:
            assert a[0] == '{STACK_IP}' and d[ihl + 8:] == payload
            break
print('pong')
"""


def test_ping(server):
    assert client(server.ns, PING).strip() == "pong"


CQL = f"""
from cassandra.cluster import Cluster
from cassandra.policies import WhiteListRoundRobinPolicy
c = Cluster(['{STACK_IP}'], protocol_version=4, connect_timeout=20,
            load_balancing_policy=WhiteListRoundRobinPolicy(['{STACK_IP}']))
s = c.connect()
s.execute("CREATE KEYSPACE IF NOT EXISTS ks WITH replication = "
          "{{'class': 'SimpleStrategy', 'replication_factor': 1}}")
s.execute("CREATE TABLE IF NOT EXISTS ks.t (k int PRIMARY KEY, v text)")
big = 'x' * 100000
for k in range(200):
    s.execute("INSERT INTO ks.t (k, v) VALUES (%s, %s)", (k, big if k == 7 else 'v%d' % k))
for k in range(200):
    rows = list(s.execute("SELECT v FROM ks.t WHERE k = %s", (k,)))
    assert len(rows) == 1 and rows[0].v == (big if k == 7 else 'v%d' % k), (k, rows)
local = s.execute("SELECT listen_address FROM system.local").one()
print('rows ok', local[0])
c.shutdown()
"""


METRICS = f"""
import json, urllib.request
body = urllib.request.urlopen('http://{STACK_IP}:9180/metrics', timeout=20).read().decode()
tot = {{}}
for line in body.splitlines():
    if line.startswith('shardmark_') and not line.startswith('#'):
        name, value = line.split('{{')[0], float(line.rsplit(' ', 1)[1])
        tot[name] = tot.get(name, 0) + value
print(json.dumps(tot))
"""


STATS = f"""
import urllib.request
print(urllib.request.urlopen('http://{STACK_IP}:9180/stats', timeout=20).read().decode())
"""


def metrics(ns):
    """Every shardmark_* metric summed over the shards, from /metrics over DPDK."""
    import json
    return json.loads(client(ns, METRICS))


def bytes_in(ns):
    """(received, of which copied) over every shard."""
    m = metrics(ns)
    return int(m["shardmark_bytes_in_total"]), int(m["shardmark_bytes_in_copied_total"])


def test_cql_python_driver(server):
    before = bytes_in(server.ns)
    out = client(server.ns, CQL)
    assert "rows ok" in out and STACK_IP in out, out
    # Receive is zero-copy: protocols got views of the mbufs. Only what the
    # stack had to reorder is copied, and a tap link does not reorder.
    received, copied = (a - b for a, b in zip(bytes_in(server.ns), before))
    assert received > 100000, received
    assert copied * 20 < received, (received, copied)
    # The driver's own counters: the stack's and the NIC's, per shard.
    m = metrics(server.ns)
    assert m["shardmark_net_tcp_segments_in_total"] > 200, m
    assert m["shardmark_net_rx_zerocopy_bytes_total"] > 100000, m
    assert m["shardmark_net_rx_frames_total"] >= m["shardmark_net_tcp_segments_in_total"], m
    assert m["shardmark_net_nic_rx_missed_total"] >= 0, m
    # testpmd's view: each shard's queue, its bursts, the NIC's extended stats.
    assert m["shardmark_net_queue_rx_packets_total"] > 200, m
    assert m["shardmark_net_queue_tx_packets_total"] > 200, m
    assert m["shardmark_net_queue_rx_bytes_total"] > 100000, m
    bursts = sum(m[f"shardmark_net_rx_bursts_{b}_total"]
                 for b in ("1", "2_3", "4_7", "8_15", "16_31", "32"))
    assert bursts + m["shardmark_net_rx_polls_empty_total"] <= m["shardmark_net_rx_polls_total"], m
    assert bursts > 0, m
    assert m.get("shardmark_nic_xstat", 0) > 0, "no NIC extended statistics on /metrics"
    text = client(server.ns, STATS)
    assert "NIC statistics for port 0" in text, text
    assert "Throughput (since last show)" in text and "Rx-pps:" in text, text
    assert "NIC extended statistics for port 0" in text, text


BOTO = f"""
import boto3
from botocore.config import Config
d = boto3.client('dynamodb', endpoint_url='http://{STACK_IP}:8000', region_name='us-east-1',
                 aws_access_key_id='alternator', aws_secret_access_key='secret_pass',
                 config=Config(retries={{'max_attempts': 1}}, connect_timeout=20,
                               read_timeout=30))
d.create_table(TableName='dpdk_items',
               KeySchema=[{{'AttributeName': 'p', 'KeyType': 'HASH'}}],
               AttributeDefinitions=[{{'AttributeName': 'p', 'AttributeType': 'S'}}],
               BillingMode='PAY_PER_REQUEST')
big = 'y' * 200000
for i in range(50):
    d.put_item(TableName='dpdk_items', Item={{'p': {{'S': 'k%d' % i}},
                                             'v': {{'S': big if i == 3 else str(i)}}}})
for i in range(50):
    it = d.get_item(TableName='dpdk_items', Key={{'p': {{'S': 'k%d' % i}}}})['Item']
    assert it['v']['S'] == (big if i == 3 else str(i)), i
n = d.scan(TableName='dpdk_items', Select='COUNT')['Count']
assert n == 50, n
d.delete_table(TableName='dpdk_items')
print('items ok')
"""


def test_boto3_alternator(server):
    assert "items ok" in client(server.ns, BOTO)


def test_many_connections(server):
    """Enough connections that, with two shards, both own some (the steering
    path when the kernel picks the other tap queue)."""
    code = f"""
import socket, struct
socks = []
for i in range(40):
    s = socket.create_connection(('{STACK_IP}', 9042), timeout=20)
    socks.append(s)
# CQL OPTIONS on each: a SUPPORTED reply proves each connection works.
for i, s in enumerate(socks):
    s.sendall(struct.pack('>BBhBi', 4, 0, i, 5, 0))
for s in socks:
    hdr = b''
    while len(hdr) < 9:
        chunk = s.recv(9 - len(hdr))
        assert chunk, 'EOF'
        hdr += chunk
    ver, flags, stream, op, n = struct.unpack('>BBhBi', hdr)
    assert op == 6, op
    body = b''
    while len(body) < n:
        chunk = s.recv(n - len(body))
        assert chunk, 'EOF'
        body += chunk
    s.close()
print('conns ok')
"""
    assert "conns ok" in client(server.ns, code)


GARBAGE = """
import os, random, socket, struct, subprocess
TAP, STACK_IP, KERNEL_IP, SEED = {tap!r}, {stack!r}, {kernel!r}, {seed}
rng = random.Random(SEED)
def csum(b):
    if len(b) % 2: b += b'\\0'
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xffff); s += s >> 16
    return ~s & 0xffff
def ip4(a): return socket.inet_aton(a)
# The stack's MAC, from the kernel's neighbour table after a connection.
socket.create_connection((STACK_IP, 9042), timeout=20).close()
out = subprocess.run(['ip', 'neigh', 'show', STACK_IP, 'dev', TAP], capture_output=True,
                     text=True).stdout.split()
stack_mac = bytes.fromhex(out[out.index('lladdr') + 1].replace(':', ''))
our_mac = bytes.fromhex(open('/sys/class/net/%s/address' % TAP).read().strip().replace(':', ''))
def tcp(sport, dport, seq, ack, flags, opts=b'', data=b''):
    off = (20 + len(opts)) // 4
    th = struct.pack('!HHIIBBHHH', sport, dport, seq, ack, off << 4, flags, 65535, 0, 0) + opts + data
    ph = ip4(KERNEL_IP) + ip4(STACK_IP) + struct.pack('!BBH', 0, 6, len(th))
    c = csum(ph + th)
    return th[:16] + struct.pack('!H', c) + th[18:]
def ipv4(proto, l4, frag=0x4000, ihl=5, ttl=64):
    h = struct.pack('!BBHHHBBH4s4s', (4 << 4) | ihl, 0, 20 + len(l4), rng.getrandbits(16), frag,
                    ttl, proto, 0, ip4(KERNEL_IP), ip4(STACK_IP))
    h = h[:10] + struct.pack('!H', csum(h)) + h[12:]
    return h + l4
def eth(payload, etype=0x0800, dst=None):
    return (dst or stack_mac) + our_mac + struct.pack('!H', etype) + payload
def frame():
    k = rng.randrange(10)
    port = rng.choice([9042, 19042, 8000, 9180, rng.randrange(65536)])
    if k < 5:
        opts = bytes(rng.getrandbits(8) for _ in range(4 * rng.randrange(11)))
        data = bytes(rng.getrandbits(8) for _ in range(rng.choice([0, 0, 9, 200, 1400])))
        f = eth(ipv4(6, tcp(rng.randrange(1024, 65536), port, rng.getrandbits(32),
                            rng.getrandbits(32), rng.getrandbits(8), opts, data)))
    elif k == 5:
        f = eth(ipv4(1, bytes([rng.choice([0, 8, 3, 255])]) + os.urandom(rng.randrange(7, 600))))
    elif k == 6:
        f = eth(struct.pack('!HHBBH', 1, 0x0800, 6, 4, rng.choice([1, 2, 7])) +
                os.urandom(20), 0x0806, rng.choice([None, b'\\xff' * 6]))
    elif k == 7:
        f = eth(ipv4(6, os.urandom(rng.randrange(60)), frag=rng.getrandbits(16),
                     ihl=rng.randrange(16), ttl=rng.randrange(256)))
    elif k == 8:
        f = eth(os.urandom(rng.randrange(1500)), rng.getrandbits(16))
    else:
        f = stack_mac + os.urandom(rng.randrange(1, 1500))
    f = bytearray(f)
    for _ in range(rng.choice([0, 0, 1, 3])):
        i = rng.randrange(14, len(f)) if len(f) > 14 else 0
        if i < len(f): f[i] ^= rng.randrange(1, 256)
    if rng.randrange(5) == 0:
        f = f[:rng.randrange(len(f) + 1)]
    return bytes(f)
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((TAP, 0))
sent = 0
for _ in range({count}):
    f = frame()
    if len(f) < 14: f += b'\\0' * (14 - len(f))
    try:
        s.send(f); sent += 1
    except OSError:
        pass
print('sent', sent)
"""


def test_garbage_frames(server):
    """Thousands of malformed and hostile frames through the tap (damaged
    TCP to every port, with bad options, flags and checksums, bogus ICMP,
    ARP, IP headers and EtherTypes, truncated frames): the server survives
    and then serves the Python driver as before (the fixture also checks it
    exits cleanly)."""
    code = GARBAGE.format(tap=server.tap, stack=STACK_IP, kernel=KERNEL_IP, seed=7, count=5000)
    before = metrics(server.ns)
    out = client(server.ns, code, timeout=120)
    assert "sent" in out and int(out.split()[-1]) > 4000, out
    assert server.proc.poll() is None, server.describe()
    # They reached the stack, and most were thrown away as they should be.
    after = metrics(server.ns)
    got = {k: after[k] - before.get(k, 0) for k in after}
    assert got["shardmark_net_rx_frames_total"] > 4000, got
    assert got["shardmark_net_rx_dropped_total"] + got["shardmark_net_rx_bad_checksum_total"] \
        > 1000, got
    assert got["shardmark_net_tcp_resets_sent_total"] > 100, got
    out = client(server.ns, CQL.replace("range(200)", "range(20)"))
    assert "rows ok" in out, out


FAULTS = ("--rx-drop 2 --tx-drop 2 --rx-dup 10 --tx-dup 10 --rx-reorder 10 "
          "--tx-reorder 10 --rx-delay 5 --tx-delay 5 --delay-us 2000")


def test_fault_injection(dpdk_bin, tmp_path):
    """Drops, duplicates, reordering and delays on both DPDK paths: TCP
    recovers and every value reads back intact."""
    with _namespace("f") as ns:
        srv = DpdkServer(dpdk_bin, ns, tmp_path, smp=2, dpdk_extra=FAULTS)
        try:
            srv.wait_ready()
            assert "fault injection on" in srv.stderr()
            code = CQL.replace("range(200)", "range(30)").replace("* 100000", "* 300000")
            out = client(ns, code, timeout=240)
            assert "rows ok" in out, out
            # Reordered and duplicated frames took the copying path.
            received, copied = bytes_in(ns)
            assert 0 < copied < received, (received, copied)
            # Drops on both paths: the stack retransmitted, and /metrics says so.
            m = metrics(ns)
            assert m["shardmark_net_tcp_retransmits_total"] > 0, m
            assert m["shardmark_net_tcp_out_of_order_total"] > 0, m
        finally:
            rc = srv.stop()
    assert rc == 0, f"shardmark exited with {rc}\n{srv.describe()}"


def test_missing_address_is_explained(dpdk_bin):
    """Without an address for the stack, shardmark says what to set."""
    r = subprocess.run([str(dpdk_bin), "serve", "--network-stack", "dpdk",
                        "--dpdk-args", "--no-huge -m 128 --no-pci"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert "listen_address" in r.stderr and "--ipv4" in r.stderr, r.stderr


def test_no_port_is_explained(dpdk_bin, tmp_path):
    """EAL starts but finds no port: the message names the fixes."""
    r = subprocess.run([str(dpdk_bin), "serve", "--network-stack", "dpdk", "--smp", "1",
                        "--overprovisioned", "--listen-address", STACK_IP,
                        "--dpdk-args", "--no-huge -m 128 --no-pci"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert "no network port" in r.stderr and "--vdev" in r.stderr, r.stderr


# ---- two processes over net_memif: shardmark stress against shardmark serve ----

MEMIF_SERVER_IP = "10.77.0.1"
MEMIF_CLIENT_IP = "10.77.0.2"
STRESS_TIMEOUT = 300  # per run; a clean run takes seconds, this only catches a hang
VALIDATION = re.compile(r"^Read validation: ", re.M)
PER_CODE_ERRORS = re.compile(r"^Errors: \d+ x .+$", re.M)
TOTAL_ERRORS = re.compile(r"^Total errors +: +([\d,]+) ", re.M)
PARTITIONS = re.compile(r"^Total partitions +: +([\d,]+) ", re.M)


def _memif_args(role, sock, ip, driver_extra=""):
    args = (f"--no-huge -m 512 --no-pci "
            f"--vdev net_memif0,role={role},socket={sock},socket-abstract=no "
            f"--log-level=lib.eal:warning -- --ipv4 {ip}/24")
    return args + (" " + driver_extra if driver_extra else "")


def _runtime_dir(pid):
    """The per-process EAL runtime directory the driver picks with --no-huge."""
    return f"/var/run/dpdk/shardmark-{pid}"


class MemifServer(DpdkServer):
    """`shardmark serve --smp N` on DPDK, net_memif server side of @sock."""

    def __init__(self, binary, workdir, sock, driver_extra="", smp=1):
        self.sock = sock
        self.dpdk_args = _memif_args("server", sock, MEMIF_SERVER_IP, driver_extra)
        self.argv = [str(binary), "serve", "--network-stack", "dpdk", "--smp", str(smp),
                     "--overprovisioned", "--listen-address", MEMIF_SERVER_IP,
                     "--dpdk-args", self.dpdk_args]
        self.stderr_path = workdir / "serve-memif.stderr"
        env = dict(os.environ)
        env.pop("SHARDMARK_CONFIG", None)
        with open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=err,
                                         stderr=err, env=env)

    def wait_ready(self):
        deadline = time.monotonic() + READY_TIMEOUT
        while "serving cql" not in self.stderr():
            if self.proc.poll() is not None:
                out = self.stderr()
                if "could not create a device" in out or "no network port" in out:
                    line = next((ln for ln in out.splitlines() if "memif" in ln.lower()
                                 or "shardmark:" in ln), out.strip())
                    pytest.skip(f"this DPDK cannot create net_memif0: {line.strip()}")
                pytest.fail(f"shardmark exited before serving\n{self.describe()}")
            if time.monotonic() > deadline:
                pytest.fail(f"not serving after {READY_TIMEOUT}s\n{self.describe()}")
            time.sleep(0.05)
        return self


@pytest.fixture(scope="module")
def memif_bin(shardmark_bin):
    if "DPDK driver: built" not in _version(shardmark_bin):
        pytest.skip("this shardmark has no DPDK driver (install libdpdk-dev and rebuild)")
    if os.geteuid() != 0:
        pytest.skip("needs root: DPDK EAL (memif's shared memory and its unix socket)")
    return shardmark_bin


@contextlib.contextmanager
def _memif_server(binary, workdir, tag, driver_extra="", smp=1):
    # a short path: unix socket names are limited to 107 bytes
    sock = f"/tmp/smmemif-{os.getpid()}-{tag}.sock"
    with contextlib.suppress(FileNotFoundError):
        os.unlink(sock)
    srv = MemifServer(binary, workdir, sock, driver_extra, smp)
    try:
        srv.wait_ready()
        yield srv
    finally:
        rc = srv.stop()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(sock)
    assert rc == 0, f"shardmark serve exited with {rc}\n{srv.describe()}"
    assert not os.path.exists(_runtime_dir(srv.proc.pid)), \
        "the server left its EAL runtime directory behind"


def _memif_stress(binary, srv, leading, command, driver_extra=""):
    """Run `shardmark stress LEADING... --network-stack dpdk --dpdk-args (memif
    client) COMMAND -node server`; return the CompletedProcess and pid."""
    argv = [str(binary), "stress", *leading, "--network-stack", "dpdk", "--overprovisioned",
            "--dpdk-args", _memif_args("client", srv.sock, MEMIF_CLIENT_IP, driver_extra),
            *command, "-node", MEMIF_SERVER_IP, "-rate", "threads=32"]
    env = dict(os.environ)
    env.pop("SHARDMARK_CONFIG", None)
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, errors="replace", env=env)
    try:
        out, err = proc.communicate(timeout=STRESS_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"stress did not finish in {STRESS_TIMEOUT}s\n{' '.join(argv)}\n"
                    f"{out}\n{err}\n--- server ---\n{srv.stderr()}")
    r = subprocess.CompletedProcess(argv, proc.returncode, out, err)
    return r, proc.pid


# The DPDK client's own TCP stack reports its recovery work.
NETWORK = re.compile(r"^Network \(dpdk, this loader\): (\d+) TCP retransmissions \(\d+ "
                     r"timeouts\), \d+ out-of-order segments, \d+ frames steered to another "
                     r"shard, \d+ missed by the NIC$", re.M)


def _assert_clean_run(r, srv, n):
    """Assert 0 errors and n validated partitions; returns the client's TCP
    retransmissions."""
    what = (f"command: {' '.join(r.args)}\nexit: {r.returncode}\n--- stdout ---\n{r.stdout}"
            f"\n--- stderr ---\n{r.stderr}\n--- server ---\n{srv.stderr()}")
    assert r.returncode == 0, what
    assert r.stdout.rstrip().endswith("END"), what
    m = TOTAL_ERRORS.search(r.stdout)
    assert m and m.group(1) == "0", what
    m = PARTITIONS.search(r.stdout)
    assert m and int(m.group(1).replace(",", "")) == n, what
    assert not VALIDATION.search(r.stdout), what
    assert not PER_CODE_ERRORS.search(r.stdout), what
    assert "Client: 1 shard, " in r.stdout, what
    m = NETWORK.search(r.stdout)
    assert m, what
    return int(m.group(1))


@pytest.mark.parametrize("server_smp", [1, 2], ids=["server-smp1", "server-smp2"])
def test_stress_over_memif(memif_bin, tmp_path, server_smp):
    """write n=20000 then read every key back, validated, between two DPDK
    processes; both EAL instances run at once in their own runtime dirs.
    With a 2-shard server against the 1-shard client, the sides' queue
    counts differ (the driver uses one memif queue pair) and the server's
    second shard learns the client's MAC from ARP copied to it by shard 0."""
    n = 20000
    with _memif_server(memif_bin, tmp_path, f"s{server_smp}", smp=server_smp) as srv:
        assert os.path.isdir(_runtime_dir(srv.proc.pid)), srv.describe()
        r, pid = _memif_stress(memif_bin, srv, [], ["write", f"n={n}", "-shards", "1"])
        _assert_clean_run(r, srv, n)
        assert "net_memif" in r.stderr, r.stderr
        assert not os.path.exists(_runtime_dir(pid)), "stress left its runtime dir"
        # --smp before the command instead of -shards: the same single shard
        r, pid = _memif_stress(memif_bin, srv, ["--smp", "1"],
                               ["read", f"n={n}", "-pop", f"seq=1..{n}"])
        _assert_clean_run(r, srv, n)
        assert not os.path.exists(_runtime_dir(pid)), "stress left its runtime dir"
        # the server is still up and still owns its own runtime directory
        assert srv.proc.poll() is None and os.path.isdir(_runtime_dir(srv.proc.pid))


MEMIF_FAULTS = ("--rx-drop 0.5 --tx-drop 0.5 --rx-dup 1 --tx-dup 1 --rx-reorder 1 "
                "--tx-reorder 1 --rx-delay 1 --tx-delay 1 --delay-us 500")


def test_stress_over_memif_with_faults(memif_bin, tmp_path):
    """Drops, duplicates, reordering and delays on both sides' DPDK paths:
    TCP recovers, 0 errors, every read validated, and the client's report
    counts its retransmissions. (Each lost segment that fast retransmit
    cannot repair costs the driver's 200 ms minimum RTO, so the run is kept
    short.)"""
    n = 3000
    with _memif_server(memif_bin, tmp_path, "f", MEMIF_FAULTS) as srv:
        assert "fault injection on" in srv.stderr()
        r, _ = _memif_stress(memif_bin, srv, [], ["write", f"n={n}", "-shards", "1"],
                             MEMIF_FAULTS)
        retransmits = _assert_clean_run(r, srv, n)
        assert "fault injection on" in r.stderr, r.stderr
        r, _ = _memif_stress(memif_bin, srv, [],
                             ["read", f"n={n}", "-pop", f"seq=1..{n}", "-shards", "1"],
                             MEMIF_FAULTS)
        retransmits += _assert_clean_run(r, srv, n)
        assert retransmits > 0, "0.5% drops on the client's TX path, yet no retransmission"



def test_stress_leading_options_are_checked(shardmark_bin):
    """Configuration options before the stress command go through the same
    checks as serve's (no DPDK needed: they fail before any driver starts)."""
    def stress(*args):
        env = dict(os.environ)
        env.pop("SHARDMARK_CONFIG", None)
        return subprocess.run([str(shardmark_bin), "stress", *args], capture_output=True,
                              text=True, timeout=60, env=env)

    r = stress("--netwrk-stack", "dpdk", "write", "n=10")
    assert r.returncode == 2 and "did you mean '--network-stack'" in r.stderr, r.stderr
    r = stress("--dpdk-args", "--no-huge", "write", "n=10")
    assert r.returncode == 2 and "network_stack" in r.stderr, r.stderr
    r = stress("--smp", "1", "--network-stack", "uring")
    assert r.returncode == 2 and "give a command" in r.stderr, r.stderr
    r = stress("--network-stack", "dpdk", "--help")
    assert r.returncode == 0 and "shardmark stress" in r.stdout, r.stderr
