# SPDX-License-Identifier: BSD-3-Clause
"""CQL endpoint: connecting with the DataStax Python driver, system tables,
driver metadata, and DDL (keyspaces and tables: create, drop, truncate).

Everything goes through the real driver (python3-cassandra) with its
defaults: the driver probes protocol versions above 4 and must settle on v4,
loads the schema from system_schema and builds a token map from
system.local/system.peers. Timeouts only guard against hangs.
"""

import pytest

pytest.importorskip("cassandra")

from cassandra import AlreadyExists, InvalidRequest  # noqa: E402
from cassandra import ConfigurationException as DriverConfigurationException  # noqa: E402
from cassandra.metadata import NetworkTopologyStrategy  # noqa: E402
from cassandra.protocol import ConfigurationException  # noqa: E402

from conftest import (CQL_OP_ERROR, CQL_OP_OPTIONS, CQL_OP_QUERY,  # noqa: E402
                      CQL_OP_RESULT, CQL_OP_SUPPORTED, cql_create_keyspace,
                      cql_frame, cql_parse_error, cql_query_body, cql_raw_startup,
                      cql_raw_on_shard, cql_read_frame, cql_unique_name)

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1

# Dropping what does not exist: Invalid (0x2200) or Config_error (0x2300), as
# Cassandra and ScyllaDB differ.
DROP_MISSING = (InvalidRequest, ConfigurationException, DriverConfigurationException)


def test_connect_with_defaults_and_system_local(cql_server, cql_connect):
    srv = cql_server("--cluster-name", "shardmark-it")
    cluster, session = cql_connect(srv)

    assert cluster.protocol_version == 4, \
        f"driver negotiated protocol v{cluster.protocol_version}, expected v4"
    assert cluster.metadata.cluster_name == "shardmark-it"
    hosts = cluster.metadata.all_hosts()
    assert len(hosts) == 1, f"default mode should present one node, driver sees {hosts}"
    assert all(h.is_up for h in hosts), hosts

    row = session.execute("SELECT * FROM system.local WHERE key = 'local'").one()
    assert row is not None, "system.local has no row"
    assert row.cluster_name == "shardmark-it"
    assert row.release_version and row.release_version[0].isdigit(), row.release_version
    assert row.partitioner.endswith("Murmur3Partitioner"), row.partitioner
    assert row.schema_version is not None, "system.local.schema_version is null"
    assert row.data_center, "system.local.data_center is empty"
    tokens = [int(t) for t in row.tokens]
    assert tokens, "system.local.tokens is empty"
    assert all(INT64_MIN <= t <= INT64_MAX for t in tokens), tokens[:10]
    assert len(set(tokens)) == len(tokens), "duplicate tokens"

    token_map = cluster.metadata.token_map
    assert token_map is not None, "driver built no token map (partitioner/tokens unusable)"
    assert len(token_map.ring) == len(tokens)

    # The narrow system.local query the driver also issues.
    row = session.execute("SELECT cluster_name, partitioner, release_version "
                          "FROM system.local WHERE key = 'local'").one()
    assert tuple(row) == ("shardmark-it", row.partitioner, row.release_version)
    assert session.execute("SELECT * FROM system.peers").all() == [], \
        "default mode: system.peers should be empty"


def test_scylla_identity_tables(cql_env):
    """system.scylla_local and system.versions, which ScyllaDB's drivers and
    tools read to tell ScyllaDB from Cassandra (ScyllaDB's docs/dev/
    system_keyspace.md): shardmark says it behaves as ScyllaDB, and what it is."""
    s = cql_env.session
    r = s.execute("SELECT key, version, compatible_version, build_mode, build_id "
                  "FROM system.versions WHERE key = 'local'").one()
    assert r.version.startswith("2025.1.0-shardmark.")
    assert r.compatible_version == s.execute(
        "SELECT release_version FROM system.local WHERE key = 'local'").one()[0]
    assert r.build_mode == "release" and r.build_id.startswith("shardmark-")
    assert s.execute("SELECT value FROM system.scylla_local WHERE key = 'enabled_features'"
                     ).one()[0] == "LWT"
    names = {r[0] for r in s.execute("SELECT table_name FROM system_schema.tables "
                                     "WHERE keyspace_name = 'system'")}
    assert {"scylla_local", "versions", "local", "peers"} <= names


def test_connect_to_keyspace_and_use(cql_server, cql_connect):
    srv = cql_server()
    cluster, session = cql_connect(srv)
    ks = cql_create_keyspace(session, cql_unique_name("use"))
    session.execute(f"CREATE TABLE {ks}.t (k int PRIMARY KEY, v text)")
    session.execute(f"INSERT INTO {ks}.t (k, v) VALUES (1, 'one')")

    session.execute(f"USE {ks}")
    assert session.keyspace == ks
    assert session.execute("SELECT v FROM t WHERE k = 1").one().v == "one"

    # A session opened on the keyspace resolves unqualified names too.
    _, session2 = cql_connect(srv, keyspace=ks)
    assert session2.execute("SELECT v FROM t WHERE k = 1").one().v == "one"
    ps = session2.prepare("SELECT v FROM t WHERE k = ?")
    assert session2.execute(ps, (1,)).one().v == "one"

    with pytest.raises(InvalidRequest):
        session.execute(f"USE {cql_unique_name('nosuch')}")


def test_ddl_keyspace_and_table_lifecycle(cql_env):
    cluster, session = cql_env.cluster, cql_env.session
    ks = cql_unique_name("ddl")
    session.execute(f"CREATE KEYSPACE {ks} WITH replication = "
                    "{'class': 'NetworkTopologyStrategy', 'replication_factor': 1}")

    # The driver refreshed its schema before execute() returned.
    assert ks in cluster.metadata.keyspaces, f"{ks} not in driver metadata after CREATE"
    ks_meta = cluster.metadata.keyspaces[ks]
    strategy = ks_meta.replication_strategy
    assert isinstance(strategy, NetworkTopologyStrategy), \
        f"replication strategy {strategy!r}, expected NetworkTopologyStrategy"
    dcs = {h.datacenter for h in cluster.metadata.all_hosts()}
    assert strategy.dc_replication_factors == {dc: 1 for dc in dcs}, \
        f"replication_factor should be expanded per DC {dcs}: {strategy.dc_replication_factors}"

    row = session.execute("SELECT keyspace_name, durable_writes, replication "
                          "FROM system_schema.keyspaces WHERE keyspace_name = %s", (ks,)).one()
    assert row is not None and row.keyspace_name == ks
    assert row.replication["class"].endswith("NetworkTopologyStrategy"), row.replication
    assert "replication_factor" not in row.replication, row.replication

    # IF NOT EXISTS is a no-op; without it, AlreadyExists names the keyspace.
    session.execute(f"CREATE KEYSPACE IF NOT EXISTS {ks} WITH replication = "
                    "{'class': 'NetworkTopologyStrategy', 'replication_factor': 1}")
    with pytest.raises(AlreadyExists) as exc:
        session.execute(f"CREATE KEYSPACE {ks} WITH replication = "
                        "{'class': 'NetworkTopologyStrategy', 'replication_factor': 1}")
    assert exc.value.keyspace == ks and not exc.value.table

    session.execute(f"CREATE TABLE {ks}.events (p text, c int, v bigint, w blob, "
                    "PRIMARY KEY (p, c)) WITH CLUSTERING ORDER BY (c DESC)")
    table = cluster.metadata.keyspaces[ks].tables.get("events")
    assert table is not None, "table missing from driver metadata after CREATE TABLE"
    assert [c.name for c in table.partition_key] == ["p"]
    assert [c.name for c in table.clustering_key] == ["c"]
    assert list(table.columns) == ["p", "c", "v", "w"], list(table.columns)
    assert table.columns["c"].is_reversed, "clustering order DESC not reflected"
    assert table.columns["v"].cql_type == "bigint"

    session.execute(f"CREATE TABLE IF NOT EXISTS {ks}.events (p text PRIMARY KEY)")
    assert [c.name for c in cluster.metadata.keyspaces[ks].tables["events"].clustering_key] == ["c"]
    with pytest.raises(AlreadyExists) as exc:
        session.execute(f"CREATE TABLE {ks}.events (p text PRIMARY KEY)")
    assert (exc.value.keyspace, exc.value.table) == (ks, "events")

    # TRUNCATE and TRUNCATE TABLE empty the table, which stays usable.
    for form in ("TRUNCATE", "TRUNCATE TABLE"):
        for i in range(5):
            session.execute(f"INSERT INTO {ks}.events (p, c, v) VALUES ('a', {i}, {i})")
        assert session.execute(f"SELECT COUNT(*) FROM {ks}.events").one()[0] == 5
        session.execute(f"{form} {ks}.events")
        assert session.execute(f"SELECT * FROM {ks}.events").all() == [], f"rows after {form}"
    session.execute(f"INSERT INTO {ks}.events (p, c, v) VALUES ('b', 1, 1)")
    assert session.execute(f"SELECT v FROM {ks}.events WHERE p = 'b' AND c = 1").one().v == 1

    session.execute(f"DROP TABLE {ks}.events")
    assert "events" not in cluster.metadata.keyspaces[ks].tables
    with pytest.raises(InvalidRequest):
        session.execute(f"SELECT * FROM {ks}.events")
    with pytest.raises(DROP_MISSING):
        session.execute(f"DROP TABLE {ks}.events")
    session.execute(f"DROP TABLE IF EXISTS {ks}.events")

    # A dropped table can be created again, empty.
    session.execute(f"CREATE TABLE {ks}.events (p text PRIMARY KEY, v int)")
    assert session.execute(f"SELECT * FROM {ks}.events").all() == []

    session.execute(f"DROP KEYSPACE {ks}")
    assert ks not in cluster.metadata.keyspaces
    with pytest.raises(InvalidRequest):
        session.execute(f"SELECT * FROM {ks}.events")
    with pytest.raises(DROP_MISSING):
        session.execute(f"DROP KEYSPACE {ks}")
    session.execute(f"DROP KEYSPACE IF EXISTS {ks}")
    assert session.execute("SELECT * FROM system_schema.keyspaces WHERE keyspace_name = %s",
                           (ks,)).all() == []


def test_other_replication_forms(cql_env):
    cluster, session = cql_env.cluster, cql_env.session
    dc = next(iter(cluster.metadata.all_hosts())).datacenter
    forms = [
        "{'class': 'SimpleStrategy', 'replication_factor': 1}",
        f"{{'class': 'NetworkTopologyStrategy', '{dc}': 1}}",
        "{'class': 'org.apache.cassandra.locator.NetworkTopologyStrategy', 'replication_factor': 1}",
    ]
    for form in forms:
        ks = cql_unique_name("repl")
        session.execute(f"CREATE KEYSPACE {ks} WITH replication = {form} AND durable_writes = true")
        assert ks in cluster.metadata.keyspaces, form
        session.execute(f"CREATE TABLE {ks}.t (k int PRIMARY KEY, v int)")
        session.execute(f"INSERT INTO {ks}.t (k, v) VALUES (1, 2)")
        assert session.execute(f"SELECT v FROM {ks}.t WHERE k = 1").one().v == 2, form
        session.execute(f"DROP KEYSPACE {ks}")


TYPE_COLUMNS = [
    ("a", "ascii"), ("bi", "bigint"), ("bl", "blob"), ("bo", "boolean"), ("d", "date"),
    ("de", "decimal"), ("db", "double"), ("du", "duration"), ("f", "float"),
    ("ip", "inet"), ("i", "int"), ("si", "smallint"), ("t", "text"), ("tm", "time"),
    ("ts", "timestamp"), ("tu", "timeuuid"), ("ti", "tinyint"), ("u", "uuid"),
    ("vi", "varint"), ("li", "list<int>"), ("st", "set<text>"), ("mp", "map<text, int>"),
    ("fl", "frozen<list<int>>"),
]


def test_table_metadata_column_types(cql_env):
    cluster, session, ks = cql_env.cluster, cql_env.session, cql_env.ks
    cols = ", ".join(f"{n} {t}" for n, t in TYPE_COLUMNS)
    session.execute(f"CREATE TABLE {ks}.typed (k int, c text, {cols}, PRIMARY KEY ((k), c))")
    table = cluster.metadata.keyspaces[ks].tables["typed"]
    got = {n: c.cql_type.replace(" ", "") for n, c in table.columns.items()}
    want = {"k": "int", "c": "text", **{n: t.replace(" ", "") for n, t in TYPE_COLUMNS}}
    assert got == want
    rows = session.execute("SELECT column_name, kind, position, clustering_order "
                           "FROM system_schema.columns WHERE keyspace_name = %s "
                           "AND table_name = 'typed'", (ks,)).all()
    kinds = {r.column_name: (r.kind, r.position, r.clustering_order) for r in rows}
    assert kinds["k"] == ("partition_key", 0, "none"), kinds["k"]
    assert kinds["c"] == ("clustering", 0, "asc"), kinds["c"]
    assert kinds["vi"][0] == "regular" and kinds["vi"][2] == "none", kinds["vi"]


def test_prepared_metadata_routing_indexes(cql_env):
    session, ks = cql_env.session, cql_env.ks
    session.execute(f"CREATE TABLE {ks}.pk3 (a int, b text, c int, v int, PRIMARY KEY ((a, b), c))")
    ps = session.prepare(f"INSERT INTO {ks}.pk3 (c, b, v, a) VALUES (?, ?, ?, ?)")
    assert ps.routing_key_indexes == [3, 1], "pk_indexes: bind index of a, then of b"
    assert [c.name for c in ps.column_metadata] == ["c", "b", "v", "a"]
    assert all(c.keyspace_name == ks and c.table_name == "pk3" for c in ps.column_metadata)
    ps = session.prepare(f"SELECT v FROM {ks}.pk3 WHERE b = ? AND a = ? AND c = ?")
    assert ps.routing_key_indexes == [1, 0]
    assert [c[2] for c in ps.result_metadata] == ["v"]  # (ks, table, name, type)
    ps = session.prepare(f"SELECT * FROM {ks}.pk3 WHERE a = 1 AND b = ?")
    assert not ps.routing_key_indexes, "a literal key component: no complete routing key"


def test_raw_pipelined_requests(cql_env):
    """1,000 QUERY frames in one send, on distinct streams: each answered
    once, on its stream, whatever the order."""
    q = "SELECT release_version FROM system.local WHERE key = 'local'"
    n = 1000
    with cql_raw_startup(cql_env.server.cql_port) as s:
        s.sendall(b"".join(cql_frame(CQL_OP_QUERY, cql_query_body(q), stream=i) for i in range(n)))
        seen = []
        for _ in range(n):
            version, _, stream, opcode, _ = cql_read_frame(s)
            assert (version, opcode) == (0x84, CQL_OP_RESULT), (version, opcode)
            seen.append(stream)
    assert sorted(seen) == list(range(n))


def raw_query(s, q, stream=2):
    s.sendall(cql_frame(CQL_OP_QUERY, cql_query_body(q), stream=stream))
    _, _, st, opcode, body = cql_read_frame(s)
    assert st == stream
    return opcode, (cql_parse_error(body) if opcode == 0 else body)


def test_shard_aware_port_and_schema_on_every_shard(cql_env):
    session, ks, srv = cql_env.session, cql_env.ks, cql_env.server
    socks = [cql_raw_on_shard(srv.shard_port, s) for s in range(2)]
    try:
        for shard, s in enumerate(socks):
            s.sendall(cql_frame(CQL_OP_OPTIONS, stream=3))
            _, _, _, opcode, body = cql_read_frame(s)
            assert opcode == CQL_OP_SUPPORTED
            assert b"SCYLLA_SHARD\x00\x01\x00\x01" + str(shard).encode() in body, \
                f"source port % 2 = {shard} on the shard-aware port, SUPPORTED says otherwise"
        # A table created through the driver is usable at once on every
        # shard; dropped, it is gone at once on every shard.
        for i in range(5):
            t = f"{ks}.everywhere{i}"
            session.execute(f"CREATE TABLE {t} (k int PRIMARY KEY, v int)")
            for shard, s in enumerate(socks):
                opcode, info = raw_query(s, f"INSERT INTO {t} (k, v) VALUES ({shard}, {i})")
                assert opcode == CQL_OP_RESULT, f"shard {shard} right after CREATE: {info}"
            for shard, s in enumerate(socks):
                opcode, info = raw_query(s, f"SELECT COUNT(*) FROM {t}")
                assert opcode == CQL_OP_RESULT, info
            assert session.execute(f"SELECT COUNT(*) FROM {t}").one()[0] == 2
            session.execute(f"DROP TABLE {t}")
            for shard, s in enumerate(socks):
                opcode, info = raw_query(s, f"SELECT * FROM {t}")
                assert opcode == CQL_OP_ERROR and info[0] == 0x2200, \
                    f"shard {shard} right after DROP: {opcode} {info}"
    finally:
        for s in socks:
            s.close()


def test_prepared_same_text_in_two_keyspaces(cql_env, cql_connect):
    """Prepared ids depend on the keyspace in use: the same unqualified text
    prepared under two keyspaces reads two tables."""
    session, srv = cql_env.session, cql_env.server
    kss = [cql_create_keyspace(session, cql_unique_name("prepks")) for _ in range(2)]
    for i, ks in enumerate(kss):
        session.execute(f"CREATE TABLE {ks}.t (k int PRIMARY KEY, v text)")
        session.execute(f"INSERT INTO {ks}.t (k, v) VALUES (1, 'from {ks}')")
    sessions = [cql_connect(srv, keyspace=ks)[1] for ks in kss]
    stmts = [s.prepare("SELECT v FROM t WHERE k = ?") for s in sessions]
    for _ in range(3):
        for ks, s, ps in zip(kss, sessions, stmts):
            assert s.execute(ps, (1,)).one().v == f"from {ks}"


def test_prepared_statement_after_table_recreated(cql_env):
    session, ks = cql_env.session, cql_env.ks
    t = f"{ks}.recreated"
    session.execute(f"CREATE TABLE {t} (k int PRIMARY KEY, v int)")
    session.execute(f"INSERT INTO {t} (k, v) VALUES (1, 42)")
    sel = session.prepare(f"SELECT v FROM {t} WHERE k = ?")
    assert session.execute(sel, (1,)).one().v == 42
    session.execute(f"DROP TABLE {t}")
    session.execute(f"CREATE TABLE {t} (k int PRIMARY KEY, v text)")
    session.execute(f"INSERT INTO {t} (k, v) VALUES (1, 'text now')")
    # Re-prepared transparently (Unprepared) or answered with the new
    # metadata: either way the text value, not the old int decoding.
    assert session.execute(sel, (1,)).one().v == "text now"
