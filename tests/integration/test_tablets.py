# SPDX-License-Identifier: BSD-3-Clause
"""Tablets keyspaces (ScyllaDB's tablets = {...}, system.tablets and the
tablets-routing-v1 payload of docs/dev/protocol-extensions.md).

One server (--smp 2, tablets_mode_for_new_keyspaces: enabled) for the
module. Through the Python driver: a tablets keyspace and table, every row
written read back, token-range and paged scans seeing each row once,
system.tablets listing tablet_count rows naming this node and a shard below
--smp, the mode's default and the bad options refused with ScyllaDB's
messages. Through raw v4 frames on the shard-aware port (the source port
picks the shard): a connection that negotiated TABLETS_ROUTING_V1 gets the
payload on a request that lands on a shard not holding the partition's
tablet, and not on one that does; a connection that did not negotiate gets
none.
"""

import random
import socket
import struct
import subprocess
import uuid

import pytest

pytest.importorskip("cassandra")

from cassandra.protocol import ConfigurationException  # noqa: E402
from cassandra.query import SimpleStatement  # noqa: E402

from conftest import (CQL_OP_QUERY, CQL_OP_READY, CQL_OP_RESULT, CQL_OP_STARTUP,  # noqa: E402
                      cql_cluster, cql_frame, cql_query_body, cql_read_frame, cql_string_map,
                      cql_supported, cql_unique_name, start_cql_server)

SMP = 2
ROWS = 300
FLAG_CUSTOM_PAYLOAD = 0x04
PAYLOAD_KEY = "tablets-routing-v1"
NTS = "{'class': 'NetworkTopologyStrategy', 'replication_factor': 1}"


class Env:
    pass


@pytest.fixture(scope="module")
def env(shardmark_bin, tmp_path_factory):
    srv = start_cql_server(shardmark_bin, tmp_path_factory.mktemp("tablets"),
                           "--tablets-mode-for-new-keyspaces", "enabled", smp=SMP)
    cluster = cql_cluster(srv.cql_port)
    try:
        e = Env()
        e.server, e.session = srv, cluster.connect()
        e.ks = cql_unique_name("tk")
        e.session.execute(f"CREATE KEYSPACE {e.ks} WITH replication = {NTS} "
                          "AND tablets = {'enabled': true, 'initial': 5}")
        e.table = f"{e.ks}.t"
        e.session.execute(f"CREATE TABLE {e.table} (k int PRIMARY KEY, v int)")
        ins = e.session.prepare(f"INSERT INTO {e.table} (k, v) VALUES (?, ?)")
        for k in range(ROWS):
            e.session.execute(ins, (k, k * 7))
        e.host_id = e.session.execute("SELECT host_id FROM system.local").one().host_id
        e.table_id = e.session.execute(
            "SELECT id FROM system_schema.tables WHERE keyspace_name = %s AND table_name = 't'",
            (e.ks,)).one().id
        yield e
    finally:
        cluster.shutdown()
        srv.kill()


def tablets_of(env, table_id):
    return list(env.session.execute("SELECT * FROM system.tablets WHERE table_id = %s",
                                    (table_id,)))


def test_every_row_back(env):
    sel = env.session.prepare(f"SELECT v FROM {env.table} WHERE k = ?")
    for k in range(ROWS):
        assert env.session.execute(sel, (k,)).one().v == k * 7
    # a full scan, paged in small pages, sees each row once
    st = SimpleStatement(f"SELECT k, v FROM {env.table}", fetch_size=7)
    seen = [r.k for r in env.session.execute(st)]
    assert sorted(seen) == list(range(ROWS))


def test_token_ranges_each_row_once(env):
    # four token ranges, one of them across tablet boundaries, cover the ring once
    bounds = [-2**63, -2**62 + 12345, 0, 2**62 - 7, 2**63 - 1]
    seen = []
    first = env.session.execute(
        f"SELECT k FROM {env.table} WHERE token(k) >= %s AND token(k) <= %s",
        (bounds[0], bounds[1]))
    seen += [r.k for r in first]
    for lo, hi in zip(bounds[1:], bounds[2:]):
        st = SimpleStatement(f"SELECT k, token(k) FROM {env.table} "
                             "WHERE token(k) > %s AND token(k) <= %s", fetch_size=11)
        rows = list(env.session.execute(st, (lo, hi)))
        assert all(lo < r[1] <= hi for r in rows)
        seen += [r.k for r in rows]
    assert sorted(seen) == list(range(ROWS))


def test_index_view_lwt(env):
    # the index's and the view's tables are tablets tables too, written from the base's shard
    s, t = env.session, f"{env.ks}.iv"
    s.execute(f"CREATE TABLE {t} (k int PRIMARY KEY, v int, w int)")
    s.execute(f"CREATE INDEX ON {t} (v)")
    s.execute(f"CREATE MATERIALIZED VIEW {env.ks}.iv_by_w AS SELECT k, w FROM {t} "
              "WHERE w IS NOT NULL AND k IS NOT NULL PRIMARY KEY (w, k)")
    for k in range(60):
        s.execute(f"INSERT INTO {t} (k, v, w) VALUES (%s, %s, %s)", (k, k % 6, 1000 + k))
    assert sorted(r.k for r in s.execute(f"SELECT k FROM {t} WHERE v = 2")) == \
        list(range(2, 60, 6))
    assert sorted(r.k for r in s.execute(f"SELECT k FROM {env.ks}.iv_by_w")) == list(range(60))
    assert s.execute(f"SELECT k FROM {env.ks}.iv_by_w WHERE w = 1007").one().k == 7
    # LWT: Paxos on the tablet's shard
    assert s.execute(f"UPDATE {t} SET v = 100 WHERE k = 5 IF v = 5").one()[0] is True
    assert s.execute(f"UPDATE {t} SET v = 101 WHERE k = 5 IF v = 5").one()[0] is False
    assert s.execute(f"SELECT v FROM {t} WHERE k = 5").one().v == 100


def test_system_tablets(env):
    rows = tablets_of(env, env.table_id)
    assert len(rows) == 8  # 'initial': 5 rounded up to a power of two
    assert all(r.tablet_count == 8 and r.keyspace_name == env.ks and r.table_name == "t"
               for r in rows)
    lasts = [r.last_token for r in rows]
    assert lasts == sorted(lasts) and lasts[-1] == 2**63 - 1
    for r in rows:
        assert len(r.replicas) == 1
        host, shard = r.replicas[0]
        assert host == env.host_id and 0 <= shard < SMP
        assert r.new_replicas is None
    # every shard holds some tablet
    assert {r.replicas[0][1] for r in rows} == set(range(SMP))
    # the whole table lists this table's partition too
    everything = list(env.session.execute("SELECT table_id, last_token FROM system.tablets"))
    assert sum(1 for r in everything if r.table_id == env.table_id) == 8
    ks = env.session.execute("SELECT initial_tablets FROM system_schema.scylla_keyspaces "
                             "WHERE keyspace_name = %s", (env.ks,)).one()
    assert ks.initial_tablets == 5


def test_describe(env, shardmark_bin):
    # the shell writes ScyllaDB's " AND tablets = {...}" back from scylla_keyspaces
    out = subprocess.run([str(shardmark_bin), "cql", f"127.0.0.1:{env.server.cql_port}", "-e",
                          f"DESCRIBE KEYSPACE {env.ks}"], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    assert "AND durable_writes = true AND tablets = {'initial': 5};" in out, out


def test_mode_and_options(env):
    s = env.session
    # tablets_mode_for_new_keyspaces: enabled gives NetworkTopologyStrategy tablets...
    dflt = cql_unique_name("tkd")
    s.execute(f"CREATE KEYSPACE {dflt} WITH replication = {NTS}")
    s.execute(f"CREATE TABLE {dflt}.t (k int PRIMARY KEY)")
    tid = s.execute("SELECT id FROM system_schema.tables WHERE keyspace_name = %s",
                    (dflt,)).one().id
    rows = tablets_of(env, tid)
    assert len(rows) == 4 * SMP and len({r.replicas[0][1] for r in rows}) == SMP
    # ...not SimpleStrategy, and not a keyspace that says so
    for name, opts in ((cql_unique_name("tks"),
                        "{'class': 'SimpleStrategy', 'replication_factor': 1}"),
                       (cql_unique_name("tkv"), NTS + " AND tablets = {'enabled': false}")):
        s.execute(f"CREATE KEYSPACE {name} WITH replication = {opts}")
        s.execute(f"CREATE TABLE {name}.t (k int PRIMARY KEY)")
        tid = s.execute("SELECT id FROM system_schema.tables WHERE keyspace_name = %s",
                        (name,)).one().id
        assert tablets_of(env, tid) == []
        assert s.execute("SELECT * FROM system_schema.scylla_keyspaces "
                         "WHERE keyspace_name = %s", (name,)).one() is None
    # ALTER KEYSPACE cannot switch the flavour
    with pytest.raises(Exception, match="Cannot alter replication strategy vnode/tablets"):
        s.execute(f"ALTER KEYSPACE {env.ks} WITH replication = {NTS} "
                  "AND tablets = {'enabled': false}")


@pytest.mark.parametrize("opts,message", [
    ("{'enabled': 'yes'}", "Tablets enabled value must be true or false; found: yes"),
    ("{'initial': 'many'}", "Initial tablets value should be numeric; found many"),
    ("{'initial': 3, 'max': 4}", "Unrecognized tablets option max"),
    ("{'initial': 100000}", "Initial tablets value 100000 is over shardmark's limit"),
])
def test_bad_options(env, opts, message):
    with pytest.raises(ConfigurationException, match=message):
        env.session.execute(f"CREATE KEYSPACE {cql_unique_name('bad')} WITH replication = "
                            f"{NTS} AND tablets = {opts}")


def test_simple_strategy_refused(env):
    with pytest.raises(ConfigurationException,
                       match="SimpleStrategy doesn't support tablet replication"):
        env.session.execute(
            f"CREATE KEYSPACE {cql_unique_name('bad')} WITH replication = "
            "{'class': 'SimpleStrategy', 'replication_factor': 1} AND tablets = {'enabled': true}")


# --- the payload, through raw frames ----------------------------------------------


def shard_conn(port, shard, tablets):
    """A raw connection to the shard-aware port landing on `shard` (source port % SMP)."""
    for _ in range(200):
        p = random.randrange(20000, 60000)
        if p % SMP != shard:
            continue
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", p))
            s.connect(("127.0.0.1", port))
        except OSError:
            s.close()
            continue
        s.settimeout(10.0)
        opts = {"CQL_VERSION": "3.0.0"}
        if tablets:
            opts["TABLETS_ROUTING_V1"] = ""
        s.sendall(cql_frame(CQL_OP_STARTUP, cql_string_map(opts), stream=1))
        assert cql_read_frame(s)[3] == CQL_OP_READY
        return s
    pytest.fail("no free source port for the shard")


def query(s, text, stream=2):
    """-> (flags, payload dict or None, result body)."""
    s.sendall(cql_frame(CQL_OP_QUERY, cql_query_body(text), stream=stream))
    _, flags, got, opcode, body = cql_read_frame(s)
    assert (got, opcode) == (stream, CQL_OP_RESULT), body[:200]
    if not flags & FLAG_CUSTOM_PAYLOAD:
        return flags, None, body
    (n,), off, payload = struct.unpack_from(">H", body), 2, {}
    for _ in range(n):
        (kl,) = struct.unpack_from(">H", body, off)
        key = body[off + 2:off + 2 + kl].decode()
        off += 2 + kl
        (vl,) = struct.unpack_from(">i", body, off)
        payload[key] = body[off + 4:off + 4 + vl]
        off += 4 + vl
    return flags, payload, body[off:]


def decode_tablet(b):
    """tuple<bigint, bigint, list<tuple<uuid, int>>> -> (first, last, [(uuid, shard)])."""
    assert struct.unpack_from(">iqiq", b, 0)[0::2] == (8, 8)
    first, last = struct.unpack_from(">q", b, 4)[0], struct.unpack_from(">q", b, 16)[0]
    (ln,) = struct.unpack_from(">i", b, 24)
    assert ln == len(b) - 28
    (count,) = struct.unpack_from(">i", b, 28)
    off, replicas = 32, []
    for _ in range(count):
        (el,) = struct.unpack_from(">i", b, off)
        assert struct.unpack_from(">i", b, off + 4)[0] == 16
        host = uuid.UUID(bytes=bytes(b[off + 8:off + 24]))
        assert struct.unpack_from(">i", b, off + 24)[0] == 4
        (shard,) = struct.unpack_from(">i", b, off + 28)
        replicas.append((host, shard))
        off += 4 + el
    assert off == len(b)
    return first, last, replicas


def owner_of(env, k):
    token = env.session.execute(f"SELECT token(k) FROM {env.table} WHERE k = %s",
                                (k,)).one()[0]
    first = -2**63
    for r in tablets_of(env, env.table_id):
        if first < token <= r.last_token or (token == first == -2**63):
            return token, first, r.last_token, r.replicas[0][1]
        first = r.last_token
    pytest.fail(f"no tablet holds token {token}")


def test_supported_advertises_extension(env):
    assert "TABLETS_ROUTING_V1" in cql_supported(env.server.cql_port)


def test_payload_on_misrouted_only(env):
    port = env.server.shard_port
    for k in (1, 2, 3, 250):
        token, first, last, owner = owner_of(env, k)
        other = (owner + 1) % SMP
        # the owning shard: no payload, the row
        good = shard_conn(port, owner, True)
        flags, payload, _ = query(good, f"SELECT v FROM {env.table} WHERE k = {k}")
        assert payload is None
        # another shard: served (the row comes back), with the tablet
        bad = shard_conn(port, other, True)
        flags, payload, body = query(bad, f"SELECT v FROM {env.table} WHERE k = {k}")
        assert payload is not None and set(payload) == {PAYLOAD_KEY}
        assert struct.pack(">i", k * 7) in body
        f, l_, replicas = decode_tablet(payload[PAYLOAD_KEY])
        assert (f, l_) == (first, last) and f < token <= l_
        assert replicas == [(env.host_id, owner)]
        # a write gets it too, and is applied
        _, payload, _ = query(bad, f"UPDATE {env.table} SET v = {k * 7} WHERE k = {k}", 3)
        assert payload is not None and decode_tablet(payload[PAYLOAD_KEY])[:2] == (first, last)
        # not negotiated: never
        plain = shard_conn(port, other, False)
        assert query(plain, f"SELECT v FROM {env.table} WHERE k = {k}")[1] is None
        for s in (good, bad, plain):
            s.close()
    # a vnode table never carries it, misrouted or not
    vn = cql_unique_name("vn")
    env.session.execute(f"CREATE KEYSPACE {vn} WITH replication = {NTS} "
                        "AND tablets = {'enabled': false}")
    env.session.execute(f"CREATE TABLE {vn}.t (k int PRIMARY KEY, v int)")
    for shard in range(SMP):
        s = shard_conn(port, shard, True)
        for k in range(8):
            assert query(s, f"SELECT v FROM {vn}.t WHERE k = {k}")[1] is None
        s.close()
