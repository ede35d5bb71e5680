# SPDX-License-Identifier: BSD-3-Clause
"""TLS on the CQL ports (client_encryption_options) and on Alternator's HTTPS
port, through the real clients: the Python driver with an ssl_context and
boto3 over https, against the real server. Certificates are made per test
with the openssl command."""

import json
import socket
import ssl
import struct
import subprocess
import time
import urllib.request

import pytest

from conftest import DPDK_TAP, cql_free_ports, free_port, host_of, http_get, parse_prometheus


def openssl(*args):
    subprocess.run(["openssl", *args], check=True, capture_output=True)


@pytest.fixture
def certs(tmp_path):
    """A CA, a server certificate it signed (localhost, 127.0.0.1), a client
    certificate it signed, and a self-signed stranger."""
    d = tmp_path
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-days", "2", "-subj", "/CN=shardmark test CA",
            "-keyout", d / "ca.key", "-out", d / "ca.crt")
    for name, cn in (("server", "localhost"), ("client", "cql client")):
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-subj", f"/CN={cn}", "-keyout", d / f"{name}.key", "-out", d / f"{name}.csr")
        ext = d / f"{name}.ext"
        ext.write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
        openssl("x509", "-req", "-in", d / f"{name}.csr", "-CA", d / "ca.crt", "-CAkey",
                d / "ca.key", "-CAcreateserial", "-days", "2", "-extfile", ext,
                "-out", d / f"{name}.crt")
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-days", "2", "-subj", "/CN=stranger",
            "-keyout", d / "stranger.key", "-out", d / "stranger.crt")
    return d


def tls_args(certs, *extra):
    return ["--client-encryption-options-enabled=true",
            "--client-encryption-options-certificate", certs / "server.crt",
            "--client-encryption-options-keyfile", certs / "server.key", *extra]


def client_context(certs, cert=None):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(str(certs / "ca.crt"))
    ctx.check_hostname = False  # the driver connects to 127.0.0.1 by address
    if cert is not None:
        ctx.load_cert_chain(str(certs / f"{cert}.crt"), str(certs / f"{cert}.key"))
    return ctx


def cluster(port, **kw):
    from cassandra.cluster import Cluster
    return Cluster([host_of(port)], port=port, protocol_version=4, connect_timeout=10,
                   control_connection_timeout=10, **kw)


def round_trip(session):
    session.execute("CREATE KEYSPACE IF NOT EXISTS tls WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute("CREATE TABLE IF NOT EXISTS tls.kv (k int PRIMARY KEY, v text)")
    ins = session.prepare("INSERT INTO tls.kv (k, v) VALUES (?, ?)")
    big = "x" * 100000  # several TLS records each way
    for k in range(50):
        session.execute(ins, (k, f"v{k}" if k else big))
    rows = {r.k: r.v for r in session.execute("SELECT k, v FROM tls.kv")}
    assert len(rows) == 50
    assert rows[0] == big and rows[7] == "v7"


def tls_metrics(srv):
    status, _, body = http_get(srv.prom_port, "/metrics")
    assert status == 200, body
    out = {}
    for name, labels, value in parse_prometheus(body):
        if name.startswith("shardmark_tls_"):
            out[name] = out.get(name, 0) + value
    return out


def test_cql_port_itself_speaks_tls(cql_server, certs):
    from cassandra.cluster import NoHostAvailable
    srv = cql_server(*tls_args(certs))
    c = cluster(srv.cql_port, ssl_context=client_context(certs))
    try:
        round_trip(c.connect())
    finally:
        c.shutdown()
    # A plaintext driver cannot talk to a TLS port.
    c = cluster(srv.cql_port)
    with pytest.raises(NoHostAvailable):
        c.connect()
    c.shutdown()
    m = tls_metrics(srv)
    assert m["shardmark_tls_handshakes_total"] >= 1, m
    assert m["shardmark_tls_handshake_errors_total"] >= 1, m
    # Each connection says which path it took: the kernel's, or user space.
    assert (m["shardmark_tls_ktls_tx_total"] + m["shardmark_tls_userspace_tx_total"]
            == m["shardmark_tls_handshakes_total"]), m
    srv.stop()
    if m["shardmark_tls_userspace_tx_total"] > 0:
        assert "kernel TLS unavailable" in srv.stderr() or m["shardmark_tls_ktls_tx_total"] > 0


def cql_options_over_tls(host, port, ctx):
    """The SUPPORTED options of a raw OPTIONS frame over TLS."""
    raw = socket.create_connection((host, port), timeout=10)
    s = ctx.wrap_socket(raw)
    s.sendall(struct.pack(">BBhBi", 4, 0, 1, 5, 0))  # v4 OPTIONS, stream 1
    head = b""
    while len(head) < 9:
        head += s.recv(9 - len(head))
    n = struct.unpack(">i", head[5:9])[0]
    body = b""
    while len(body) < n:
        body += s.recv(n - len(body))
    s.close()
    assert head[4] == 6, f"expected SUPPORTED, got opcode {head[4]}"
    out, off = {}, 2
    for _ in range(struct.unpack(">H", body[:2])[0]):
        kl = struct.unpack(">H", body[off:off + 2])[0]
        key = body[off + 2:off + 2 + kl].decode()
        off += 2 + kl
        vals = []
        for _ in range(struct.unpack(">H", body[off:off + 2])[0]):
            vl = struct.unpack(">H", body[off + 2:off + 4])[0]
            vals.append(body[off + 4:off + 4 + vl].decode())
            off += 2 + vl
        off += 2
        out[key] = vals
    return out


def test_separate_tls_ports_beside_plain_ones(cql_server, certs):
    ssl_port, ssl_shard_port = cql_free_ports(2)
    srv = cql_server(*tls_args(certs, "--native-transport-port-ssl", ssl_port,
                               "--native-shard-aware-transport-port-ssl", ssl_shard_port))
    for p in (ssl_port, ssl_shard_port):
        srv.wait_ready(ports=[p])
    c = cluster(srv.cql_port)  # the plain port stays plain
    try:
        round_trip(c.connect())
    finally:
        c.shutdown()
    c = cluster(ssl_port, ssl_context=client_context(certs))
    try:
        round_trip(c.connect())
    finally:
        c.shutdown()
    # ScyllaDB's drivers find the TLS shard-aware port in SUPPORTED.
    opts = cql_options_over_tls(srv.host, ssl_port, client_context(certs))
    assert opts["SCYLLA_SHARD_AWARE_PORT"] == [str(srv.shard_port)], opts
    assert opts["SCYLLA_SHARD_AWARE_PORT_SSL"] == [str(ssl_shard_port)], opts
    srv.stop()


def test_client_certificate_required(cql_server, certs):
    from cassandra.cluster import NoHostAvailable
    srv = cql_server(*tls_args(certs, "--client-encryption-options-require-client-auth=true",
                               "--client-encryption-options-truststore", certs / "ca.crt"))
    c = cluster(srv.cql_port, ssl_context=client_context(certs))
    with pytest.raises(NoHostAvailable):
        c.connect()
    c.shutdown()
    # A certificate from someone the truststore does not know is refused too.
    c = cluster(srv.cql_port, ssl_context=client_context(certs, cert="stranger"))
    with pytest.raises(NoHostAvailable):
        c.connect()
    c.shutdown()
    c = cluster(srv.cql_port, ssl_context=client_context(certs, cert="client"))
    try:
        round_trip(c.connect())
    finally:
        c.shutdown()
    srv.stop()


def test_scylla_yaml_nested_form(cql_server, certs, tmp_path):
    cfg = tmp_path / "tls.yaml"
    cfg.write_text("client_encryption_options:\n"
                   "  enabled: true\n"
                   f"  certificate: {certs / 'server.crt'}\n"
                   f"  keyfile: {certs / 'server.key'}\n")
    srv = cql_server("--config", cfg)
    c = cluster(srv.cql_port, ssl_context=client_context(certs))
    try:
        round_trip(c.connect())
    finally:
        c.shutdown()
    srv.stop()


def test_bad_certificate_is_a_usage_error(run_cli, certs):
    r = run_cli("serve", "--smp", "1", "--prometheus-port", "0", "--alternator-port", "0",
                "--native-transport-port", free_port(),
                "--native-shard-aware-transport-port", free_port(),
                "--client-encryption-options-enabled=true",
                "--client-encryption-options-certificate", "/nonexistent/server.crt",
                "--client-encryption-options-keyfile", certs / "server.key")
    assert r.returncode == 2, r.stderr
    assert "/nonexistent/server.crt" in r.stderr, r.stderr
    r = run_cli("serve", "--smp", "1", "--client-encryption-options-enabled=true")
    assert r.returncode == 2, r.stderr
    assert "client_encryption_options_certificate" in r.stderr, r.stderr


def test_alternator_https_with_boto3(serve, certs):
    import boto3
    https, plain = free_port(), free_port()
    srv = serve("--smp", "1", "--alternator-port", plain, "--alternator-https-port", https,
                "--alternator-encryption-options-certificate", certs / "server.crt",
                "--alternator-encryption-options-keyfile", certs / "server.key",
                "--native-transport-port", free_port(),
                "--native-shard-aware-transport-port", free_port(), echo=False)
    srv.wait_ready(ports=[https, plain])
    # Over DPDK the server is at an address the certificate does not name:
    # still TLS, without the name check there.
    ddb = boto3.client("dynamodb", endpoint_url=f"https://{srv.host}:{https}",
                       region_name="us-east-1", aws_access_key_id="alternator",
                       aws_secret_access_key="secret_pass",
                       verify=False if DPDK_TAP else str(certs / "ca.crt"))
    ddb.create_table(TableName="tls_t", BillingMode="PAY_PER_REQUEST",
                     KeySchema=[{"AttributeName": "p", "KeyType": "HASH"}],
                     AttributeDefinitions=[{"AttributeName": "p", "AttributeType": "S"}])
    blob = b"\x01" * 300000
    ddb.put_item(TableName="tls_t", Item={"p": {"S": "k"}, "b": {"B": blob}})
    got = ddb.get_item(TableName="tls_t", Key={"p": {"S": "k"}}, ConsistentRead=True)
    assert got["Item"]["b"]["B"] == blob
    # The plain port serves the same tables.
    req = urllib.request.Request(
        f"http://{srv.host}:{plain}/", method="POST", data=json.dumps({}).encode(),
        headers={"X-Amz-Target": "DynamoDB_20120810.ListTables",
                 "Content-Type": "application/x-amz-json-1.0"})
    with urllib.request.urlopen(req, timeout=10) as r:
        assert "tls_t" in json.loads(r.read())["TableNames"]
    # And a plaintext request to the https port gets no HTTP answer.
    with socket.create_connection((srv.host, https), timeout=10) as s:
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        s.settimeout(10)
        data = b""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        assert not data.startswith(b"HTTP/"), data
    srv.stop()


def test_stress_over_tls(cql_server, run_cli, certs):
    """shardmark stress -transport: writes then validated reads over TLS, on the
    TLS twin of the shard-aware port, and a clear error for an untrusted server."""
    ssl_port, ssl_shard_port = cql_free_ports(2)
    srv = cql_server(*tls_args(certs, "--native-transport-port-ssl", ssl_port,
                               "--native-shard-aware-transport-port-ssl", ssl_shard_port))
    srv.wait_ready(ports=[ssl_port, ssl_shard_port])
    for cmd in ("write", "read"):
        r = run_cli("stress", cmd, "n=3000", "-pop", "seq=1..3000", "-node", srv.host,
                    "-port", f"native={ssl_port}", "-rate", "threads=16",
                    "-transport", f"truststore={certs / 'ca.crt'}", timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "Total errors              :          0" in r.stdout, r.stdout
        assert f"through port {ssl_shard_port}" in r.stdout, r.stdout
    r = run_cli("stress", "write", "n=10", "-node", srv.host, "-port", f"native={ssl_port}",
                "-transport", f"truststore={certs / 'stranger.crt'}", timeout=60)
    assert r.returncode != 0
    assert "TLS handshake failed" in r.stderr and "not trusted" in r.stderr.lower(), r.stderr
    r = run_cli("stress", "write", "n=10", "-transport", "store-type=JKS")
    assert r.returncode == 2 and "keytool" in r.stderr, r.stderr
    m = tls_metrics(srv)
    assert m["shardmark_tls_handshakes_total"] >= 2, m
    srv.stop()


def test_stress_alternator_over_https(serve, run_cli, certs):
    https = free_port()
    srv = serve("--smp", "1", "--alternator-https-port", https,
                "--alternator-encryption-options-certificate", certs / "server.crt",
                "--alternator-encryption-options-keyfile", certs / "server.key", echo=False)
    srv.wait_ready(ports=[https])
    r = run_cli("stress", "write", "n=2000", "-mode", "alternator", "-node", srv.host,
                "-port", f"alternator={https}", "-rate", "threads=8",
                "-transport", f"truststore={certs / 'ca.crt'}", timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Total errors              :          0" in r.stdout, r.stdout
    srv.stop()
