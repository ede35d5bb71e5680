# SPDX-License-Identifier: BSD-3-Clause
"""CQL endpoint: errors, malformed input and authentication.

Request errors through the DataStax Python driver (syntax, unknown keyspace,
table or column, wrong literal or bind types), each followed by a normal
query from another session on the same server. Raw v4 frames for what a
driver never sends: EXECUTE of an unknown id (Unprepared 0x2500 carrying the
id), an oversized frame, garbage bytes, a client vanishing mid-frame,
protocol versions above 4. The driver re-preparing against a restarted
server. PasswordAuthenticator with right and wrong credentials.
"""

import os
import socket
import struct
import time

import pytest

pytest.importorskip("cassandra")

from cassandra import AuthenticationFailed, InvalidRequest, OperationTimedOut  # noqa: E402
from cassandra.auth import PlainTextAuthProvider  # noqa: E402
from cassandra.cluster import NoHostAvailable  # noqa: E402
from cassandra.policies import ConstantReconnectionPolicy  # noqa: E402
from cassandra.protocol import ProtocolException, SyntaxException  # noqa: E402
from cassandra.query import SimpleStatement  # noqa: E402

from conftest import (CQL_ERR_BAD_CREDENTIALS, CQL_ERR_PROTOCOL,  # noqa: E402
                      CQL_ERR_UNPREPARED, CQL_HEADER, CQL_OP_AUTH_RESPONSE,
                      CQL_OP_AUTH_SUCCESS, CQL_OP_AUTHENTICATE, CQL_OP_ERROR,
                      CQL_OP_EXECUTE, CQL_OP_OPTIONS, CQL_OP_PREPARE, CQL_OP_QUERY,
                      CQL_OP_RESULT, CQL_OP_STARTUP, CQL_OP_SUPPORTED, connect,
                      cql_assert_serving, cql_cluster, cql_create_keyspace, cql_expect_error,
                      cql_frame, cql_long_string, cql_query_body, cql_raw_startup,
                      cql_read_error, cql_read_frame, cql_short_bytes, cql_string_map,
                      cql_unique_name, expect_eof)

MiB = 1 << 20
RAW_TIMEOUT = 10.0
LOCAL_QUERY = "SELECT release_version FROM system.local WHERE key = 'local'"


@pytest.fixture(scope="module")
def errs(cql_env):
    """cql_env plus a table ks.t (k int PRIMARY KEY, v int, bl blob) and a
    second cluster, for checking from another session after each error."""
    cql_env.session.execute(f"CREATE TABLE {cql_env.ks}.t (k int PRIMARY KEY, v int, bl blob)")
    cql_env.session.execute(f"INSERT INTO {cql_env.ks}.t (k, v) VALUES (1, 1)")
    other = cql_cluster(cql_env.server.cql_port)
    other.connect().shutdown()
    cql_env.other = other
    yield cql_env
    other.shutdown()


def still_serving(env):
    """A new session (new connections) on the same server answers a query."""
    assert env.server.proc.poll() is None, env.server.describe()
    s = env.other.connect()
    try:
        assert s.execute(LOCAL_QUERY).one().release_version
        assert s.execute(f"SELECT v FROM {env.ks}.t WHERE k = 1").one().v == 1
    finally:
        s.shutdown()


def raw(port, startup=True):
    s = cql_raw_startup(port, startup=startup)
    s.settimeout(RAW_TIMEOUT)
    return s


def test_syntax_errors(errs):
    for q in ("SELEKT * FROM system.local",
              f"SELECT * FROM {errs.ks}.t WHERE",
              f"INSERT INTO {errs.ks}.t (k, v) VALUES (1, 2",
              f"UPDATE {errs.ks}.t SET WHERE k = 1",
              f"UPDATE {errs.ks}.t SET v = 1",
              "CREATE TABLE"):
        with pytest.raises(SyntaxException) as exc:
            errs.session.execute(q)
        assert "line 1:" in str(exc.value), f"{q!r}: no position in {exc.value}"
        still_serving(errs)
    with pytest.raises(SyntaxException):
        errs.session.prepare("SELEKT 1")
    still_serving(errs)


def test_unknown_keyspace_table_column(errs):
    ks = errs.ks
    nosuch_ks = cql_unique_name("nosuch")
    for q in (f"SELECT * FROM {nosuch_ks}.t",
              f"INSERT INTO {nosuch_ks}.t (k) VALUES (1)",
              f"SELECT * FROM {ks}.nosuch_table",
              f"INSERT INTO {ks}.nosuch_table (k) VALUES (1)",
              f"SELECT nosuch_col FROM {ks}.t WHERE k = 1",
              f"INSERT INTO {ks}.t (k, nosuch_col) VALUES (1, 1)",
              f"UPDATE {ks}.t SET nosuch_col = 1 WHERE k = 1",
              "SELECT * FROM t_without_keyspace"):
        cql_expect_error(errs.session, q, InvalidRequest)
        still_serving(errs)
    with pytest.raises(InvalidRequest):
        errs.session.prepare(f"SELECT * FROM {ks}.nosuch_table WHERE k = ?")
    still_serving(errs)


def test_wrong_types_and_bad_values(errs):
    ks = errs.ks
    for q in (f"INSERT INTO {ks}.t (k, v) VALUES ('abc', 1)",
              f"INSERT INTO {ks}.t (k, v) VALUES (2, 'abc')",
              f"INSERT INTO {ks}.t (k, bl) VALUES (2, 123)",
              f"INSERT INTO {ks}.t (k, v) VALUES (2, 99999999999)",
              f"INSERT INTO {ks}.t (k, v) VALUES (2, 1.5)",
              f"SELECT * FROM {ks}.t WHERE k = 'abc'",
              f"INSERT INTO {ks}.t (v) VALUES (2)",
              f"SELECT * FROM {ks}.t WHERE v = 1"):
        cql_expect_error(errs.session, q, InvalidRequest)
        still_serving(errs)
    assert errs.session.execute(f"SELECT * FROM {ks}.t WHERE k = 2").one() is None

    # Prepared: the driver refuses wrong bind types and counts on its side.
    ps = errs.session.prepare(f"INSERT INTO {ks}.t (k, v) VALUES (?, ?)")
    with pytest.raises(TypeError):
        errs.session.execute(ps, ("abc", 1))
    with pytest.raises(ValueError):
        errs.session.execute(ps, (1, 2, 3))
    errs.session.execute(ps, (3, 3))
    assert errs.session.execute(f"SELECT v FROM {ks}.t WHERE k = 3").one().v == 3
    still_serving(errs)


def test_invalid_literals_and_keys(errs):
    ks = errs.ks
    errs.session.execute(f"CREATE TABLE {ks}.lit (k text PRIMARY KEY, a ascii, ti tinyint, "
                         "si smallint, bi bigint, tu timeuuid, d date, ip inet, ts timestamp)")
    for q in (f"INSERT INTO {ks}.lit (k, a) VALUES ('x', '\u00e9')",       # non-ASCII in ascii
              f"INSERT INTO {ks}.lit (k, ti) VALUES ('x', 128)",
              f"INSERT INTO {ks}.lit (k, si) VALUES ('x', -32769)",
              f"INSERT INTO {ks}.lit (k, bi) VALUES ('x', 9223372036854775808)",
              f"INSERT INTO {ks}.lit (k, tu) VALUES ('x', 550e8400-e29b-41d4-a716-446655440000)",
              f"INSERT INTO {ks}.lit (k, d) VALUES ('x', '2023-02-30')",
              f"INSERT INTO {ks}.lit (k, ip) VALUES ('x', '300.1.1.1')",
              f"INSERT INTO {ks}.lit (k, ts) VALUES ('x', 'yesterday-ish')",
              f"INSERT INTO {ks}.lit (k, a) VALUES ('', 'a')",              # empty partition key
              f"INSERT INTO {ks}.lit (k, a) VALUES (null, 'a')",
              f"SELECT * FROM {ks}.lit WHERE k = null"):
        cql_expect_error(errs.session, q, InvalidRequest)
    assert errs.session.execute(f"SELECT * FROM {ks}.lit").all() == []
    ps = errs.session.prepare(f"INSERT INTO {ks}.lit (k, a) VALUES (?, ?)")
    with pytest.raises(InvalidRequest):
        errs.session.execute(ps, (None, "a"))
    assert errs.session.execute(f"SELECT * FROM {ks}.lit").all() == []
    still_serving(errs)


def test_bad_paging_state(errs, cql_connect):
    """A paging state the server never issued: an error (Cassandra answers a
    Protocol error, after which the driver drops that connection), or a
    well-formed page; the server keeps serving."""
    stmt = SimpleStatement(f"SELECT * FROM {errs.ks}.t", fetch_size=1)
    for state in (b"garbage", b"\xff" * 64, bytes(16)):
        _, session = cql_connect(errs.server)  # its connection may be dropped
        try:
            rs = session.execute(stmt, paging_state=state)
        except (InvalidRequest, ProtocolException) as e:
            print(f"paging state {state[:8]!r}: {e}")
        else:
            assert all(r.k is not None for r in rs.current_rows)
        still_serving(errs)


def test_errors_on_pipelined_streams(errs):
    """An error answers its own stream; the neighbours still get results."""
    with raw(errs.server.cql_port) as s:
        s.sendall(cql_frame(CQL_OP_QUERY, cql_query_body(LOCAL_QUERY), stream=1)
                  + cql_frame(CQL_OP_QUERY, cql_query_body("SELEKT 1"), stream=2)
                  + cql_frame(CQL_OP_QUERY, cql_query_body(f"SELECT * FROM {errs.ks}.nosuch"), stream=3)
                  + cql_frame(CQL_OP_QUERY, cql_query_body(LOCAL_QUERY), stream=4))
        replies = {}
        for _ in range(4):
            version, _, stream, opcode, body = cql_read_frame(s)
            assert version == 0x84, f"response version byte {version:#04x}"
            replies[stream] = (opcode, body)
        assert sorted(replies) == [1, 2, 3, 4]
        assert replies[1][0] == CQL_OP_RESULT and replies[4][0] == CQL_OP_RESULT
        assert replies[2][0] == CQL_OP_ERROR and struct.unpack(">i", replies[2][1][:4])[0] == 0x2000
        assert replies[3][0] == CQL_OP_ERROR and struct.unpack(">i", replies[3][1][:4])[0] == 0x2200
    still_serving(errs)


def test_unprepared_id_raw(errs):
    port = errs.server.cql_port
    with raw(port) as s:
        qid = os.urandom(16)
        s.sendall(cql_frame(CQL_OP_EXECUTE, cql_short_bytes(qid) + struct.pack(">HB", 1, 0),
                            stream=5))
        version, stream, code, msg, rest = cql_read_error(s)
        assert (version, stream) == (0x84, 5)
        assert code == CQL_ERR_UNPREPARED, f"code {code:#06x}: {msg}"
        (n,) = struct.unpack_from(">H", rest)
        assert rest[2:2 + n] == qid, "Unprepared error must carry the unknown id"
        # The connection stays usable.
        s.sendall(cql_frame(CQL_OP_OPTIONS, stream=6))
        _, _, stream, opcode, _ = cql_read_frame(s)
        assert (stream, opcode) == (6, CQL_OP_SUPPORTED)

        # A real id, prepared here, executes on other connections too (which
        # may be on other shards): ids are the same everywhere.
        s.sendall(cql_frame(CQL_OP_PREPARE, cql_long_string(LOCAL_QUERY), stream=7))
        _, _, stream, opcode, body = cql_read_frame(s)
        assert (stream, opcode) == (7, CQL_OP_RESULT), body[:80]
        (kind,) = struct.unpack_from(">i", body)
        assert kind == 4, f"PREPARE answered with result kind {kind}"
        (n,) = struct.unpack_from(">H", body, 4)
        good_id = body[6:6 + n]
    for i in range(6):
        with raw(port) as s:
            s.sendall(cql_frame(CQL_OP_EXECUTE,
                                cql_short_bytes(good_id) + struct.pack(">HB", 1, 0), stream=i))
            _, _, stream, opcode, body = cql_read_frame(s)
            assert (stream, opcode) == (i, CQL_OP_RESULT), \
                f"connection {i}: EXECUTE of a prepared id got opcode {opcode:#04x} {body[:120]!r}"
            assert struct.unpack_from(">i", body)[0] == 2, "expected Rows"
    still_serving(errs)


def test_driver_reprepares_after_server_restart(cql_server, cql_connect):
    srv = cql_server()
    cluster, session = cql_connect(srv, reprepare_on_up=False,
                                   reconnection_policy=ConstantReconnectionPolicy(0.5, None))
    ks = cql_unique_name("restart")

    def schema():
        session.execute(f"CREATE KEYSPACE IF NOT EXISTS {ks} WITH replication = "
                        "{'class': 'NetworkTopologyStrategy', 'replication_factor': 1}")
        session.execute(f"CREATE TABLE IF NOT EXISTS {ks}.t (k int PRIMARY KEY, v int)")

    schema()
    ins = session.prepare(f"INSERT INTO {ks}.t (k, v) VALUES (?, ?)")
    sel = session.prepare(f"SELECT v FROM {ks}.t WHERE k = ?")
    session.execute(ins, (1, 10))
    assert session.execute(sel, (1,)).one().v == 10

    srv.stop()
    srv2 = cql_server(ports=srv.ports)
    deadline = time.monotonic() + 30
    while True:
        try:
            session.execute(LOCAL_QUERY)
            break
        except (NoHostAvailable, OperationTimedOut) as e:
            if time.monotonic() > deadline:
                pytest.fail(f"driver did not reconnect to the restarted server: {e!r}\n"
                            f"{srv2.describe()}")
            time.sleep(0.2)
    schema()
    # The new server has never seen these ids: Unprepared, re-prepare, retry.
    session.execute(ins, (2, 20))
    assert session.execute(sel, (2,)).one().v == 20
    assert srv2.proc.poll() is None


def test_oversized_frame(cql_server):
    srv = cql_server("--native-transport-max-frame-size-in-mb", "1")
    with raw(srv.cql_port) as s:
        # Under the limit: a ~900 KiB query (whitespace padding) is served.
        q = " " * (900 * 1024) + LOCAL_QUERY
        s.sendall(cql_frame(CQL_OP_QUERY, cql_query_body(q), stream=2))
        _, _, stream, opcode, body = cql_read_frame(s)
        assert (stream, opcode) == (2, CQL_OP_RESULT), body[:120]
        # A header claiming 2 MiB: Protocol error, then the close.
        s.sendall(CQL_HEADER.pack(0x04, 0, 3, CQL_OP_QUERY, 2 * MiB))
        _, _, code, msg, _ = cql_read_error(s)
        assert code == CQL_ERR_PROTOCOL, f"code {code:#06x}: {msg}"
        expect_eof(s)
    cql_assert_serving(srv.cql_port)


GARBAGE = [
    ("http", b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"),
    ("response frame", CQL_HEADER.pack(0x84, 0, 0, CQL_OP_OPTIONS, 0)),
    ("zeros", bytes(64)),
]


@pytest.mark.parametrize("name,data", GARBAGE, ids=[g[0] for g in GARBAGE])
def test_garbage_gets_error_and_close(errs, name, data):
    with raw(errs.server.cql_port, startup=False) as s:
        s.sendall(data)
        version, _, code, msg, _ = cql_read_error(s)
        assert version & 0x80, f"reply is not a response frame: version byte {version:#04x}"
        assert code == CQL_ERR_PROTOCOL, f"{name}: code {code:#06x}: {msg}"
        expect_eof(s)
    still_serving(errs)


def test_malformed_bodies_get_errors(errs):
    with raw(errs.server.cql_port) as s:
        # A QUERY whose long string claims more bytes than the body has.
        s.sendall(cql_frame(CQL_OP_QUERY, struct.pack(">i", 1000) + b"SELECT", stream=1))
        _, stream, code, msg, _ = cql_read_error(s)
        assert (stream, code) == (1, CQL_ERR_PROTOCOL), f"stream {stream} code {code:#06x}: {msg}"
    with raw(errs.server.cql_port) as s:
        s.sendall(cql_frame(0x55, b"", stream=2))  # no such opcode
        _, stream, code, msg, _ = cql_read_error(s)
        assert code == CQL_ERR_PROTOCOL, f"code {code:#06x}: {msg}"
    with raw(errs.server.cql_port, startup=False) as s:
        # QUERY before STARTUP.
        s.sendall(cql_frame(CQL_OP_QUERY, cql_query_body(LOCAL_QUERY), stream=3))
        _, stream, code, msg, _ = cql_read_error(s)
        assert stream == 3 and code == CQL_ERR_PROTOCOL, f"code {code:#06x}: {msg}"
    still_serving(errs)


def test_disconnect_mid_frame(errs):
    port = errs.server.cql_port
    for i in range(12):
        s = raw(port, startup=(i % 2 == 0))
        if i % 4 < 2:
            s.sendall(CQL_HEADER.pack(0x04, 0, 1, CQL_OP_QUERY, 1000) + b"x" * 500)
        else:
            s.sendall(CQL_HEADER.pack(0x04, 0, 1, CQL_OP_QUERY, 1000)[:5])  # half a header
        if i % 3 == 0:  # abortive close: RST instead of FIN
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()
    still_serving(errs)
    with raw(port) as s:
        s.sendall(cql_frame(CQL_OP_QUERY, cql_query_body(LOCAL_QUERY), stream=9))
        _, _, stream, opcode, _ = cql_read_frame(s)
        assert (stream, opcode) == (9, CQL_OP_RESULT)


@pytest.mark.parametrize("version", [0x05, 0x41, 0x42])
def test_newer_protocol_versions_rejected(errs, version):
    with raw(errs.server.cql_port, startup=False) as s:
        s.sendall(cql_frame(CQL_OP_OPTIONS, stream=0, version=version))
        rversion, stream, code, msg, _ = cql_read_error(s)
        assert rversion == 0x84, f"reply version byte {rversion:#04x}, drivers expect 0x84"
        assert stream == 0
        assert code == CQL_ERR_PROTOCOL, f"code {code:#06x}: {msg}"
        assert "Invalid or unsupported protocol version" in msg, msg
        expect_eof(s)
    still_serving(errs)


def test_old_protocol_version_rejected(errs):
    with raw(errs.server.cql_port, startup=False) as s:
        s.sendall(cql_frame(CQL_OP_OPTIONS, stream=0, version=0x02))
        _, _, code, msg, _ = cql_read_error(s)
        assert code == CQL_ERR_PROTOCOL and "protocol version" in msg.lower(), msg
    still_serving(errs)


# --- authentication -------------------------------------------------------------

USER, PASSWORD = "admin", "s3cret"


def auth_server(cql_server):
    return cql_server("--authenticator", "PasswordAuthenticator",
                      "--auth-superuser-name", USER, "--auth-superuser-password", PASSWORD)


def test_password_authenticator_driver(cql_server, cql_connect):
    srv = auth_server(cql_server)
    _, session = cql_connect(srv, auth_provider=PlainTextAuthProvider(USER, PASSWORD))
    assert session.execute(LOCAL_QUERY).one().release_version
    ks = cql_create_keyspace(session, cql_unique_name("auth"))
    session.execute(f"CREATE TABLE {ks}.t (k int PRIMARY KEY, v int)")
    session.execute(f"INSERT INTO {ks}.t (k, v) VALUES (1, 1)")
    assert session.execute(f"SELECT v FROM {ks}.t WHERE k = 1").one().v == 1

    for provider in (PlainTextAuthProvider(USER, "wrong"),
                     PlainTextAuthProvider("nobody", PASSWORD),
                     None):
        kwargs = {"auth_provider": provider} if provider else {}
        with pytest.raises(NoHostAvailable) as exc:
            cql_connect(srv, **kwargs)
        errors = list(exc.value.errors.values())
        assert errors and all(isinstance(e, AuthenticationFailed) for e in errors), errors
    # The authenticated session is unaffected.
    assert session.execute(f"SELECT v FROM {ks}.t WHERE k = 1").one().v == 1


def sasl_plain(user, password):
    token = b"\0" + user.encode() + b"\0" + password.encode()
    return struct.pack(">i", len(token)) + token


def test_password_authenticator_raw(cql_server):
    srv = auth_server(cql_server)
    for password, ok in ((PASSWORD, True), ("wrong", False)):
        with connect(srv.cql_port, timeout=RAW_TIMEOUT) as s:
            s.sendall(cql_frame(CQL_OP_STARTUP, cql_string_map({"CQL_VERSION": "3.0.0"}), stream=1))
            _, _, stream, opcode, body = cql_read_frame(s)
            assert (stream, opcode) == (1, CQL_OP_AUTHENTICATE), f"opcode {opcode:#04x} {body[:80]!r}"
            (n,) = struct.unpack_from(">H", body)
            assert "PasswordAuthenticator" in body[2:2 + n].decode(), body
            s.sendall(cql_frame(CQL_OP_AUTH_RESPONSE, sasl_plain(USER, password), stream=2))
            if ok:
                _, _, stream, opcode, _ = cql_read_frame(s)
                assert (stream, opcode) == (2, CQL_OP_AUTH_SUCCESS)
                s.sendall(cql_frame(CQL_OP_QUERY, cql_query_body(LOCAL_QUERY), stream=3))
                _, _, stream, opcode, _ = cql_read_frame(s)
                assert (stream, opcode) == (3, CQL_OP_RESULT)
            else:
                _, stream, code, msg, _ = cql_read_error(s)
                assert (stream, code) == (2, CQL_ERR_BAD_CREDENTIALS), f"code {code:#06x}: {msg}"
    with connect(srv.cql_port, timeout=RAW_TIMEOUT) as s:
        # A QUERY before authenticating is refused.
        s.sendall(cql_frame(CQL_OP_STARTUP, cql_string_map({"CQL_VERSION": "3.0.0"}), stream=1))
        assert cql_read_frame(s)[3] == CQL_OP_AUTHENTICATE
        s.sendall(cql_frame(CQL_OP_QUERY, cql_query_body(LOCAL_QUERY), stream=4))
        version, _, stream, opcode, body = cql_read_frame(s)
        assert opcode == CQL_OP_ERROR, f"QUERY before AUTH_RESPONSE answered with {opcode:#04x}"
    cql_assert_serving_auth(srv)


def cql_assert_serving_auth(srv):
    cluster = cql_cluster(srv.cql_port, auth_provider=PlainTextAuthProvider(USER, PASSWORD))
    try:
        assert cluster.connect().execute(LOCAL_QUERY).one().release_version
    finally:
        cluster.shutdown()


def test_name_lengths_and_characters_as_scylladb(errs):
    # schema/schema.hh NAME_LENGTH (192) and the messages of
    # create_keyspace_statement.cc and create_table_statement.cc
    s, ks = errs.session, errs.ks
    long192, long193 = "k" * 192, "k" * 193
    s.execute(f"CREATE KEYSPACE {long192} WITH replication = "
              "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    s.execute(f"CREATE TABLE {long192}.{'t' * 192} (k int PRIMARY KEY)")
    s.execute(f"INSERT INTO {long192}.{'t' * 192} (k) VALUES (1)")
    assert [r.k for r in s.execute(f"SELECT k FROM {long192}.{'t' * 192}")] == [1]
    s.execute(f"DROP KEYSPACE {long192}")
    for q, msg in [
            (f"CREATE KEYSPACE {long193} WITH replication = "
             "{'class': 'SimpleStrategy', 'replication_factor': 1}",
             f"Keyspace names shouldn't be more than 192 characters long (got \"{long193}\")"),
            ("CREATE KEYSPACE \"a-b\" WITH replication = "
             "{'class': 'SimpleStrategy', 'replication_factor': 1}",
             "\"a-b\" is not a valid keyspace name"),
            (f"CREATE TABLE {ks}.{'t' * 193} (k int PRIMARY KEY)",
             f"Table names shouldn't be more than 192 characters long (got \"{'t' * 193}\")"),
            (f"CREATE TABLE {ks}.\"t-1\" (k int PRIMARY KEY)",
             "\"t-1\" is not a valid table name (must be alphanumeric character only: "
             "[0-9A-Za-z]+)")]:
        with pytest.raises(InvalidRequest) as e:
            s.execute(q)
        assert msg in str(e.value), (q, str(e.value))
    still_serving(errs)
