# SPDX-License-Identifier: BSD-3-Clause
"""CQL endpoint: what a hostile client tries, through the Python driver with
its defaults and through raw v4 frames.

Tables wider than any fixed array (thousands of columns) for INSERT, UPDATE,
DELETE, SELECT and conditional writes, simple and prepared, and the column
limit refused at CREATE TABLE; names with a NUL; replication maps naming
unknown data centers; an unknown opcode; a BATCH whose declared statement
count disagrees with its body; trailing bytes after a message; declared
counts far beyond the body. After each, the server still serves.
"""

import struct

import pytest

pytest.importorskip("cassandra")

from cassandra import InvalidRequest  # noqa: E402
from cassandra.protocol import ConfigurationException  # noqa: E402
from cassandra.query import BatchStatement, SimpleStatement  # noqa: E402

from conftest import (CQL_ERR_PROTOCOL, CQL_OP_QUERY, CQL_OP_RESULT,  # noqa: E402
                      cql_assert_serving, cql_expect_error, cql_frame, cql_long_string,
                      cql_query_body, cql_raw_startup, cql_read_error, cql_read_frame,
                      cql_unique_name)

RAW_TIMEOUT = 10.0
WIDE = 3000  # columns besides the key: far past the 256 of the old fixed arrays
MAX_COLUMNS = 65535


@pytest.fixture(scope="module")
def wide(cql_env):
    """cql_env plus a table ks.wide (k int PRIMARY KEY, c0 int, ..., c{WIDE-1} int)."""
    cols = ", ".join(f"c{i} int" for i in range(WIDE))
    cql_env.session.execute(f"CREATE TABLE {cql_env.ks}.wide (k int PRIMARY KEY, {cols})")
    cql_env.table = f"{cql_env.ks}.wide"
    return cql_env


def raw(port):
    s = cql_raw_startup(port)
    s.settimeout(RAW_TIMEOUT)
    return s


# --- wide tables ------------------------------------------------------------


def test_wide_insert_last_column(wide):
    """The brief's reproducer: one INSERT naming the 300th column crashed
    (bool have[256] indexed by column id); now many of them all land."""
    s, t = wide.session, wide.table
    for k in range(60):
        s.execute(f"INSERT INTO {t} (k, c299) VALUES ({k}, {k})")
        s.execute(f"INSERT INTO {t} (k, c{WIDE - 1}) VALUES ({k}, {-k})")
    for k in (0, 31, 59):
        row = s.execute(f"SELECT k, c299, c{WIDE - 1} FROM {t} WHERE k = {k}").one()
        assert (row.k, row.c299, getattr(row, f"c{WIDE - 1}")) == (k, k, -k)
    # Both key checks still work for wide tables.
    cql_expect_error(s, f"INSERT INTO {t} (k, c299, c299) VALUES (1, 1, 2)", InvalidRequest)
    e = cql_expect_error(s, f"INSERT INTO {t} (c299) VALUES (1)", InvalidRequest)
    assert "Some partition key parts are missing: k" in str(e)
    e = cql_expect_error(s, f"INSERT INTO {t} (k, c{WIDE - 1}, c{WIDE - 1}) VALUES (1, 1, 2)",
                         InvalidRequest)
    assert f"Multiple definitions found for column c{WIDE - 1}" in str(e)


def test_wide_every_column(wide):
    """Every column at once: INSERT and SELECT * simple and prepared, UPDATE,
    DELETE, conditional writes."""
    s, t = wide.session, wide.table
    names = [f"c{i}" for i in range(WIDE)]
    s.execute(f"INSERT INTO {t} (k, {', '.join(names)}) VALUES "
              f"(1000, {', '.join(str(i) for i in range(WIDE))})")
    ins = s.prepare(f"INSERT INTO {t} (k, {', '.join(names)}) VALUES "
                    f"(?, {', '.join('?' * WIDE)})")
    s.execute(ins, [1001] + [2 * i for i in range(WIDE)])
    row = s.execute(f"SELECT * FROM {t} WHERE k = 1000").one()
    assert [getattr(row, n) for n in names] == list(range(WIDE))
    sel = s.prepare(f"SELECT * FROM {t} WHERE k = ?")
    row = s.execute(sel, [1001]).one()
    assert [getattr(row, n) for n in names] == [2 * i for i in range(WIDE)]
    assert len(row) == WIDE + 1
    # The whole table, paged.
    rows = list(s.execute(SimpleStatement(f"SELECT * FROM {t}", fetch_size=7)))
    assert {r.k for r in rows} >= {1000, 1001}
    # UPDATE and DELETE of the last columns, simple and prepared.
    last = names[-1]
    s.execute(f"UPDATE {t} SET {last} = 7, c{WIDE - 2} = 8 WHERE k = 1000")
    upd = s.prepare(f"UPDATE {t} SET {last} = ? WHERE k = ?")
    s.execute(upd, [9, 1001])
    assert getattr(s.execute(f"SELECT {last} FROM {t} WHERE k = 1000").one(), last) == 7
    assert getattr(s.execute(f"SELECT {last} FROM {t} WHERE k = 1001").one(), last) == 9
    s.execute(f"DELETE {last} FROM {t} WHERE k = 1000")
    dele = s.prepare(f"DELETE {last}, c{WIDE - 2} FROM {t} WHERE k = ?")
    s.execute(dele, [1001])
    row = s.execute(f"SELECT {last}, c{WIDE - 2}, c0 FROM {t} WHERE k = 1001").one()
    assert (getattr(row, last), getattr(row, f"c{WIDE - 2}"), row.c0) == (None, None, 0)
    # Conditional writes read the pre-image of wide rows.
    r = s.execute(f"UPDATE {t} SET {last} = 1 WHERE k = 1000 IF {last} = null AND c0 = 0").one()
    assert r[0] is True
    r = s.execute(f"UPDATE {t} SET {last} = 2 WHERE k = 1000 IF {last} = 5").one()
    assert r[0] is False and getattr(r, last) == 1
    r = s.execute(f"INSERT INTO {t} (k, {last}) VALUES (1000, 3) IF NOT EXISTS").one()
    assert r[0] is False and len(r) == WIDE + 2 and getattr(r, last) == 1
    s.execute(f"DELETE FROM {t} WHERE k = 1000")
    assert s.execute(f"SELECT * FROM {t} WHERE k = 1000").one() is None


def test_wide_select_filters(wide):
    """More WHERE relations than the old used[256] (a fixed limit with an
    invented message) are fine."""
    s, t = wide.session, wide.table
    s.execute(f"INSERT INTO {t} (k, c1) VALUES (5000, 1)")
    rels = " AND ".join(["c1 = 1"] * 300)
    q = f"SELECT k FROM {t} WHERE k = 5000 AND {rels} ALLOW FILTERING"
    assert [r.k for r in s.execute(q)] == [5000]


def test_column_limit_at_create(cql_env):
    s, ks = cql_env.session, cql_env.ks
    cols = ", ".join(f"c{i} int" for i in range(MAX_COLUMNS))  # + k: one too many
    e = cql_expect_error(s, SimpleStatement(f"CREATE TABLE {ks}.too_wide (k int PRIMARY KEY, "
                                            f"{cols})"), InvalidRequest)
    assert f"Table {ks}.too_wide has {MAX_COLUMNS + 1} columns: shardmark allows at most " \
           f"{MAX_COLUMNS} per table" in str(e)
    cql_expect_error(s, f"SELECT * FROM {ks}.too_wide", InvalidRequest)
    # Exactly the limit is a table (and cheap to create: every step is linear).
    cols = ", ".join(f"c{i} int" for i in range(MAX_COLUMNS - 1))
    s.execute(f"CREATE TABLE {ks}.widest (k int PRIMARY KEY, {cols})", timeout=60)
    s.execute(f"INSERT INTO {ks}.widest (k, c{MAX_COLUMNS - 2}) VALUES (1, 42)")
    row = s.execute(f"SELECT * FROM {ks}.widest WHERE k = 1", timeout=60).one()
    assert len(row) == MAX_COLUMNS and getattr(row, f"c{MAX_COLUMNS - 2}") == 42
    s.execute(f"DROP TABLE {ks}.widest")
    cql_assert_serving(cql_env.server.cql_port)


# --- IN lists: ScyllaDB's limits, counted before anything is converted -------


def in_error(partition, size):
    what = "partition" if partition else "clustering"
    return (f"size of {what}-key IN list or {what}-key cartesian product of IN list {size} "
            f"is greater than maximum 100")


@pytest.fixture(scope="module")
def keyed(cql_env):
    s, ks = cql_env.session, cql_env.ks
    s.execute(f"CREATE TABLE {ks}.kc (k int, c1 int, c2 int, v int, PRIMARY KEY (k, c1, c2))")
    pk = ", ".join(f"p{i} int" for i in range(6))
    s.execute(f"CREATE TABLE {ks}.pk6 ({pk}, v int, PRIMARY KEY (({', '.join(f'p{i}' for i in range(6))})))")
    s.execute(f"INSERT INTO {ks}.pk6 (p0, p1, p2, p3, p4, p5, v) VALUES (0, 0, 0, 0, 0, 0, 1)")
    for c in range(150):
        s.execute(f"INSERT INTO {ks}.kc (k, c1, c2, v) VALUES (1, {c}, {c}, {c})")
    return cql_env


def test_in_limits_partition(keyed):
    s, ks = keyed.session, keyed.ks
    vals = ", ".join(str(i) for i in range(101))
    e = cql_expect_error(s, f"SELECT * FROM {ks}.kc WHERE k IN ({vals})", InvalidRequest)
    assert in_error(True, 101) in str(e)
    e = cql_expect_error(s, f"UPDATE {ks}.kc SET v = 1 WHERE k IN ({vals}) AND c1 = 1 AND c2 = 1",
                         InvalidRequest)
    assert in_error(True, 101) in str(e)
    sel = s.prepare(f"SELECT * FROM {ks}.kc WHERE k IN ?")
    with pytest.raises(InvalidRequest, match=in_error(True, 150)):
        s.execute(sel, [list(range(150))])
    assert len(list(s.execute(sel, [list(range(100))]))) == 150
    # A cartesian product of exactly 2^32 wrapped a 32-bit count to 0: the
    # SELECT returned nothing and the UPDATE wrote nothing, without an error.
    lists = [", ".join(str(i) for i in range(n)) for n in (64, 64, 64, 64, 64, 4)]
    where = " AND ".join(f"p{i} IN ({v})" for i, v in enumerate(lists))
    e = cql_expect_error(s, f"SELECT v FROM {ks}.pk6 WHERE {where}", InvalidRequest)
    assert "greater than maximum 100" in str(e)
    e = cql_expect_error(s, f"UPDATE {ks}.pk6 SET v = 2 WHERE {where}", InvalidRequest)
    assert "greater than maximum 100" in str(e)
    e = cql_expect_error(s, f"DELETE FROM {ks}.pk6 WHERE {where}", InvalidRequest)
    assert "greater than maximum 100" in str(e)
    assert s.execute(f"SELECT v FROM {ks}.pk6 WHERE p0 = 0 AND p1 = 0 AND p2 = 0 AND p3 = 0 "
                     f"AND p4 = 0 AND p5 = 0").one().v == 1


def test_in_limits_clustering(keyed):
    s, ks = keyed.session, keyed.ks
    vals = ", ".join(str(i) for i in range(150))
    e = cql_expect_error(s, f"SELECT v FROM {ks}.kc WHERE k = 1 AND c1 IN ({vals})",
                         InvalidRequest)
    assert in_error(False, 150) in str(e)
    # A multi-column IN of 150 tuples answered with the first 100 and
    # dropped the rest without a word.
    tuples = ", ".join(f"({i}, {i})" for i in range(150))
    e = cql_expect_error(s, f"SELECT v FROM {ks}.kc WHERE k = 1 AND (c1, c2) IN ({tuples})",
                         InvalidRequest)
    assert in_error(False, 150) in str(e)
    tuples = ", ".join(f"({i}, {i})" for i in range(100))
    rows = s.execute(f"SELECT v FROM {ks}.kc WHERE k = 1 AND (c1, c2) IN ({tuples})")
    assert sorted(r.v for r in rows) == list(range(100))
    e = cql_expect_error(s, f"SELECT v FROM {ks}.kc WHERE k = 1 AND c1 IN (1, 2, 3) AND c2 IN "
                         f"({', '.join(str(i) for i in range(40))})", InvalidRequest)
    assert in_error(False, 120) in str(e)


# --- names and options with a NUL ------------------------------------------


def test_nul_in_quoted_names(cql_env):
    """"a\\0b" created a (the name cut at the NUL); now refused, like the
    keyspace and table names ScyllaDB refuses."""
    s, ks = cql_env.session, cql_env.ks
    repl = "{'class': 'NetworkTopologyStrategy', 'replication_factor': 1}"
    e = cql_expect_error(s, f'CREATE KEYSPACE "nul\x00ks" WITH replication = {repl}',
                         InvalidRequest)
    assert 'Invalid name "nul\\0ks": a quoted name may not contain a NUL character' in str(e)
    assert s.execute("SELECT keyspace_name FROM system_schema.keyspaces "
                     "WHERE keyspace_name = 'nul'").one() is None
    cql_expect_error(s, f'CREATE TABLE {ks}."t\x00x" (k int PRIMARY KEY)', InvalidRequest)
    cql_expect_error(s, f'CREATE TABLE {ks}.nulcol (k int PRIMARY KEY, "v\x00w" int)',
                     InvalidRequest)
    assert s.execute(f"SELECT table_name FROM system_schema.tables WHERE keyspace_name = '{ks}' "
                     f"AND table_name IN ('t', 'nulcol')").all() == []
    cql_expect_error(s, f"CREATE TABLE {ks}.nulopt (k int PRIMARY KEY) WITH comment = 'a\x00b'",
                     InvalidRequest)
    cql_expect_error(s, "CREATE KEYSPACE nuldc WITH replication = {'class': "
                     "'NetworkTopologyStrategy', 'datacenter1\x00x': 1}", InvalidRequest)
    # NUL inside string values stays data, as in ScyllaDB.
    s.execute(f"CREATE TABLE {ks}.nulval (k int PRIMARY KEY, t text)")
    s.execute(f"INSERT INTO {ks}.nulval (k, t) VALUES (1, 'a\x00b')")
    assert s.execute(f"SELECT t FROM {ks}.nulval WHERE k = 1").one().t == "a\x00b"


# --- replication maps --------------------------------------------------------


def test_replication_unknown_dcs(cql_env):
    """NetworkTopologyStrategy with 10,000 data centers was accepted and about
    63 of them shown; ScyllaDB refuses a data center the cluster does not
    have, and so does shardmark now."""
    s = cql_env.session
    dcs = ", ".join(f"'dc{i}': 1" for i in range(10000))
    ks = cql_unique_name("manydc")
    e = cql_expect_error(s, f"CREATE KEYSPACE {ks} WITH replication = "
                         f"{{'class': 'NetworkTopologyStrategy', {dcs}}}", ConfigurationException)
    assert "Unrecognized strategy option {dc0} passed to NetworkTopologyStrategy" in str(e)
    e = cql_expect_error(s, f"CREATE KEYSPACE {ks} WITH replication = "
                         "{'class': 'NetworkTopologyStrategy', 'Replication_Factor': 1}",
                         ConfigurationException)
    assert "did you mean (lowercase) 'replication_factor'?" in str(e)
    assert s.execute("SELECT * FROM system_schema.keyspaces WHERE keyspace_name = %s",
                     (ks,)).one() is None
    # The known data center, also with replication_factor (the explicit one wins).
    s.execute(f"CREATE KEYSPACE {ks} WITH replication = {{'class': 'NetworkTopologyStrategy', "
              "'replication_factor': 1, 'datacenter1': 2}")
    row = s.execute("SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = %s",
                    (ks,)).one()
    assert dict(row.replication) == {
        "class": "org.apache.cassandra.locator.NetworkTopologyStrategy", "datacenter1": "2"}
    s.execute(f"DROP KEYSPACE {ks}")


def test_replication_many_options_kept(cql_env):
    """SimpleStrategy keeps every option it is given (as ScyllaDB does): all
    of them come back, not the first 63."""
    s = cql_env.session
    ks = cql_unique_name("manyopt")
    opts = ", ".join(f"'opt{i:05d}': '{i}'" for i in range(10000))
    s.execute(f"CREATE KEYSPACE {ks} WITH replication = {{'class': 'SimpleStrategy', "
              f"'replication_factor': 1, {opts}}}")
    row = s.execute("SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = %s",
                    (ks,)).one()
    assert len(row.replication) == 10002
    assert row.replication["opt09999"] == "9999"
    s.execute(f"DROP KEYSPACE {ks}")
    # A table's map option as long as the client likes comes back as given
    # (NullCompactionStrategy checks no option, as ScyllaDB's; the others
    # refuse options they do not know).
    t = cql_unique_name("manymap")
    comp = ", ".join(f"'k{i:04d}': 'v{i}'" for i in range(2000))
    s.execute(f"CREATE TABLE {cql_env.ks}.{t} (k int PRIMARY KEY) WITH compaction = "
              f"{{'class': 'NullCompactionStrategy', {comp}}}")
    row = s.execute("SELECT compaction FROM system_schema.tables WHERE keyspace_name = %s AND "
                    "table_name = %s", (cql_env.ks, t)).one()
    assert len(row.compaction) == 2001 and row.compaction["k1999"] == "v1999"


# --- raw frames: opcodes, BATCH counts, trailing bytes, declared counts ------

CQL_OP_BATCH = 0x0D
CQL_OP_REGISTER = 0x0B
CQL_OP_STARTUP = 0x01
ONE = 0x0001


def batch_body(queries, count=None, kind=0):
    """A BATCH body: `count` (default: len(queries)) then the statements."""
    body = struct.pack(">BH", kind, len(queries) if count is None else count)
    for q in queries:
        body += b"\x00" + cql_long_string(q) + struct.pack(">H", 0)
    return body + struct.pack(">HB", ONE, 0)


def expect_protocol_error(sock, stream, text):
    _, got_stream, code, msg, _ = cql_read_error(sock)
    assert (got_stream, code) == (stream, CQL_ERR_PROTOCOL), (got_stream, hex(code), msg)
    assert text in msg, msg
    assert "(null)" not in msg
    return msg


def query_ok(sock, query, stream):
    sock.sendall(cql_frame(CQL_OP_QUERY, cql_query_body(query), stream=stream))
    _, _, got, opcode, body = cql_read_frame(sock)
    assert (got, opcode) == (stream, CQL_OP_RESULT), body[:200]
    return body


def test_unknown_opcode(cql_env):
    """An unknown opcode read "Invalid (null) message"; ScyllaDB answers
    "Unknown opcode N" (transport/server.cc), also for a response opcode."""
    s = raw(cql_env.server.cql_port)
    for stream, opcode in ((3, 0x42), (4, 0xFF), (5, CQL_OP_RESULT), (6, 0x00)):
        s.sendall(cql_frame(opcode, b"\x00\x01\x02", stream=stream))
        expect_protocol_error(s, stream, f"Unknown opcode {opcode}")
    # The connection goes on.
    query_ok(s, "SELECT release_version FROM system.local", 7)
    s.close()


@pytest.fixture(scope="module")
def batch_table(cql_env):
    cql_env.session.execute(f"CREATE TABLE {cql_env.ks}.bt (k int PRIMARY KEY, v int)")
    return f"{cql_env.ks}.bt"


def test_batch_count_below_statements(cql_env, batch_table):
    """A BATCH that declares 1 statement and sends 3 ran the first and read
    the second as its consistency and flags; now the whole BATCH is refused."""
    s = raw(cql_env.server.cql_port)
    qs = [f"INSERT INTO {batch_table} (k, v) VALUES ({k}, {k})" for k in (1, 2, 3)]
    for count in (1, 2):
        s.sendall(cql_frame(CQL_OP_BATCH, batch_body(qs, count=count), stream=9))
        expect_protocol_error(s, 9, "Invalid BATCH message: bytes after the last statement")
    # More declared than sent: truncated, also refused as a whole.
    s.sendall(cql_frame(CQL_OP_BATCH, batch_body(qs, count=4), stream=10))
    expect_protocol_error(s, 10, "Invalid BATCH message")
    s.sendall(cql_frame(CQL_OP_BATCH, batch_body(qs, count=65535), stream=11))
    expect_protocol_error(s, 11, "Invalid BATCH message")
    rows = cql_env.session.execute(f"SELECT k FROM {batch_table}").all()
    assert rows == [], rows
    # The exact count works.
    s.sendall(cql_frame(CQL_OP_BATCH, batch_body(qs), stream=12))
    _, _, stream, opcode, body = cql_read_frame(s)
    assert (stream, opcode) == (12, CQL_OP_RESULT), body[:200]
    assert sorted(r.k for r in cql_env.session.execute(f"SELECT k FROM {batch_table}")) == \
        [1, 2, 3]
    s.close()


def test_trailing_bytes_ignored_as_scylla(cql_env):
    """ScyllaDB reads what a message needs and ignores the rest of the
    body; shardmark does the same for messages other than BATCH."""
    s = raw(cql_env.server.cql_port)
    body = cql_query_body("SELECT release_version FROM system.local") + b"\xde\xad\xbe\xef" * 8
    s.sendall(cql_frame(CQL_OP_QUERY, body, stream=13))
    _, _, stream, opcode, _ = cql_read_frame(s)
    assert (stream, opcode) == (13, CQL_OP_RESULT)
    s.close()


def test_declared_counts_beyond_body(cql_env):
    """Counts far beyond a short body are refused by walking the body, not
    by trusting (or allocating for) the count."""
    s = raw(cql_env.server.cql_port)
    cases = [
        (CQL_OP_QUERY, cql_long_string("SELECT * FROM system.local") +
         struct.pack(">HBH", ONE, 0x01, 65535) + struct.pack(">i", 4) + b"\x00\x00\x00\x01"),
        (CQL_OP_QUERY, cql_long_string("SELECT * FROM system.local") +
         struct.pack(">HBH", ONE, 0x01, 3) + struct.pack(">i", 0x7FFFFFFF)),
        (CQL_OP_REGISTER, struct.pack(">H", 65535) + struct.pack(">H", 13) + b"SCHEMA_CHANGE"),
        (CQL_OP_STARTUP, struct.pack(">H", 65535) + struct.pack(">H", 11) + b"CQL_VERSION"),
        (CQL_OP_BATCH, struct.pack(">BH", 0, 65535) + b"\x00" + struct.pack(">i", 0x7FFFFFF0)),
        (CQL_OP_QUERY, struct.pack(">i", 0x7FFFFFFF) + b"SELECT"),
    ]
    for i, (opcode, body) in enumerate(cases):
        s.sendall(cql_frame(opcode, body, stream=20 + i))
        expect_protocol_error(s, 20 + i, "Invalid")
    query_ok(s, "SELECT release_version FROM system.local", 30)
    s.close()


def shard_memory(srv):
    from conftest import http_get, metric_by_shard, parse_prometheus
    status, _, text = http_get(srv.ports[2], "/metrics")
    assert status == 200
    return sum(metric_by_shard(parse_prometheus(text), "shardmark_mem_in_use_bytes").values())


def test_declared_frame_length_not_allocated(cql_env):
    """A header declaring a 200 MiB body allocated all of it at once; eight
    such connections that send a few bytes each must not cost 1.6 GB."""
    from conftest import connect
    srv = cql_env.server
    before = shard_memory(srv)
    socks = []
    for i in range(8):
        s = connect(srv.cql_port)
        s.sendall(struct.pack(">BBhBI", 4, 0, 1, CQL_OP_QUERY, 200 << 20) + b"x" * 100)
        socks.append(s)
    # Each connection answered one request after its partial frame: every
    # header has been read by then.
    for s in socks:
        c = raw(srv.cql_port)
        query_ok(c, "SELECT release_version FROM system.local", 1)
        c.close()
    grown = shard_memory(srv) - before
    for s in socks:
        s.close()
    assert grown < 64 << 20, f"{grown} bytes held for 8 frames of 100 bytes"
    # An LZ4 body that declares 200 MiB uncompressed in 12 bytes is refused
    # before anything is sized by it.
    c = cql_raw_startup(srv.cql_port, startup=False)
    c.settimeout(RAW_TIMEOUT)
    from conftest import cql_string_map
    c.sendall(cql_frame(CQL_OP_STARTUP, cql_string_map({"CQL_VERSION": "3.0.0",
                                                        "COMPRESSION": "lz4"}), stream=1))
    cql_read_frame(c)
    c.sendall(cql_frame(CQL_OP_QUERY, struct.pack(">I", 200 << 20) + b"\x00" * 8, stream=2,
                        flags=0x01))
    _, _, stream, opcode, _ = cql_read_frame(c)  # compressed: the header is enough
    assert (stream, opcode) == (2, 0x00)
    from conftest import expect_eof
    expect_eof(c)
    c.close()
    cql_assert_serving(srv.cql_port)


def test_order_by_every_term(keyed):
    """Only the first ORDER BY term was looked at: c1 DESC, c2 ASC came back
    fully reversed, and ORDER BY c2 alone reversed by c1. ScyllaDB checks
    every term (select_statement.cc), and so does shardmark now."""
    s, ks = keyed.session, keyed.ks
    s.execute(f"CREATE TABLE {ks}.ord (k int, c1 int, c2 int, PRIMARY KEY (k, c1, c2))")
    for c1 in range(3):
        for c2 in range(3):
            s.execute(f"INSERT INTO {ks}.ord (k, c1, c2) VALUES (1, {c1}, {c2})")
    q = f"SELECT c1, c2 FROM {ks}.ord WHERE k = 1"
    e = cql_expect_error(s, f"{q} ORDER BY c1 DESC, c2 ASC", InvalidRequest)
    assert "only reversing all columns is supported, but column c2 has opposite ordering" \
        in str(e)
    e = cql_expect_error(s, f"{q} ORDER BY c2 DESC", InvalidRequest)
    assert "column c1 doesn't have an ordering or EQ relation" in str(e)
    e = cql_expect_error(s, f"{q} ORDER BY c2 DESC, c1 DESC", InvalidRequest)
    assert "following their declared order in the PRIMARY KEY" in str(e)
    e = cql_expect_error(s, f"{q} ORDER BY nosuch DESC", InvalidRequest)
    assert "Order by on unknown column nosuch" in str(e)
    rows = [(r.c1, r.c2) for r in s.execute(f"{q} ORDER BY c1 DESC, c2 DESC")]
    assert rows == sorted(rows, reverse=True) and len(rows) == 9
    rows = [(r.c1, r.c2) for r in s.execute(f"{q} AND c1 = 1 ORDER BY c2 DESC")]
    assert rows == [(1, 2), (1, 1), (1, 0)]


# --- name lengths -------------------------------------------------------------


def test_long_names(cql_env):
    """Names longer than the fixed buffers they went through: a result column
    named from a long quoted column ("writetime(...)") was cut at 511
    characters. A column name may now have ScyllaDB's 207 characters at most
    (schema::NAME_LENGTH), and the refusal of a longer one names it in full."""
    s, ks = cql_env.session, cql_env.ks
    with pytest.raises(InvalidRequest, match="c" * 700):
        s.execute(f'CREATE TABLE {ks}.longcol (k int PRIMARY KEY, "{"c" * 700}" int)')
    long_col = "c" * 207
    s.execute(f'CREATE TABLE {ks}.longcol (k int PRIMARY KEY, "{long_col}" int)')
    s.execute(f'INSERT INTO {ks}.longcol (k, "{long_col}") VALUES (1, 5)')
    rs = s.execute(f'SELECT writetime("{long_col}"), ttl("{long_col}") FROM {ks}.longcol '
                   f'WHERE k = 1')
    assert rs.column_names == [f"writetime({long_col})", f"ttl({long_col})"]
    # Bind markers are named from their column too ("in(...)" for IN ?).
    p = s.prepare(f'SELECT k FROM {ks}.longcol WHERE k IN ? AND "{long_col}" = ? '
                  'ALLOW FILTERING')
    assert [c.name for c in p.column_metadata] == ["in(k)", long_col]


def test_use_alternator_keyspace(alternator, cql_connect):
    """USE of an Alternator table's keyspace (up to 233 characters) was
    refused as too long (a 64-byte session buffer)."""
    from conftest import alt_client
    srv = alternator()
    name = "t" * 222
    alt_client(srv).create_table(TableName=name,
                                 KeySchema=[{"AttributeName": "p", "KeyType": "HASH"}],
                                 AttributeDefinitions=[{"AttributeName": "p",
                                                        "AttributeType": "S"}],
                                 BillingMode="PAY_PER_REQUEST")
    _, session = cql_connect(srv.cql_port)
    session.execute(f'USE "alternator_{name}"')
    assert session.execute(f'SELECT * FROM "{name}"').all() == []
