# SPDX-License-Identifier: BSD-3-Clause
"""CQL endpoint: writes and reads through the DataStax Python driver.

Every CQL type round-trips through prepared statements (bound values) and
unprepared ones (literals in the query text, and the driver's own client-side
interpolation), including nulls, the empty string and unset values; then
counters, collection updates, TTL, USING TIMESTAMP, deletes and batches.
Values are compared as the Python objects the driver returns
(cassandra.util.Date, Time, Duration, SortedSet, OrderedMapSerializedKey, ...).
"""

import datetime
import time
import uuid
from decimal import Decimal

import pytest

pytest.importorskip("cassandra")

from cassandra import ConsistencyLevel as CL  # noqa: E402
from cassandra import InvalidRequest  # noqa: E402
from cassandra.query import (UNSET_VALUE, BatchStatement, BatchType,  # noqa: E402
                             SimpleStatement)
from cassandra.util import Date, Duration, Time  # noqa: E402

from conftest import cql_expect_error  # noqa: E402

COLUMNS = """k int PRIMARY KEY, a ascii, bi bigint, bl blob, bo boolean, d date,
    de decimal, db double, du duration, f float, i4 inet, i6 inet, i int,
    si smallint, t text, tm time, ts timestamp, tu timeuuid, ti tinyint, u uuid,
    vi varint, li list<int>, st set<text>, mp map<text, int>"""
NAMES = ["a", "bi", "bl", "bo", "d", "de", "db", "du", "f", "i4", "i6", "i", "si", "t",
         "tm", "ts", "tu", "ti", "u", "vi", "li", "st", "mp"]

# Each row: column -> (Python value bound/expected, CQL literal).
ROW_TYPICAL = {
    "a": ("hello ascii", "'hello ascii'"),
    "bi": (-9223372036854775808, "-9223372036854775808"),
    "bl": (bytes([0, 1, 2, 0xFE, 0xFF]), "0x000102feff"),
    "bo": (True, "true"),
    "d": (Date(datetime.date(2024, 2, 29)), "'2024-02-29'"),
    "de": (Decimal("-12345678901234567890.123456789"), "-12345678901234567890.123456789"),
    "db": (3.141592653589793, "3.141592653589793"),
    "du": (Duration(14, 3, 4_000_000_005), "1y2mo3d4s5ns"),
    "f": (2.5, "2.5"),
    "i4": ("192.168.1.10", "'192.168.1.10'"),
    "i6": ("2001:db8::ff00:42:8329", "'2001:db8::ff00:42:8329'"),
    "i": (-2147483648, "-2147483648"),
    "si": (-32768, "-32768"),
    "t": ("h\u00e9llo w\u00f6rld \u2713 'q'", "'h\u00e9llo w\u00f6rld \u2713 ''q'''"),
    "tm": (Time("13:45:30.123456789"), "'13:45:30.123456789'"),
    "ts": (datetime.datetime(2024, 2, 29, 12, 34, 56, 789000), "'2024-02-29 12:34:56.789+0000'"),
    "tu": (uuid.UUID("e3f2a1a0-d7a1-11ee-8c90-0242ac120002"), "e3f2a1a0-d7a1-11ee-8c90-0242ac120002"),
    "ti": (-128, "-128"),
    "u": (uuid.UUID("550e8400-e29b-41d4-a716-446655440000"), "550e8400-e29b-41d4-a716-446655440000"),
    "vi": ((1 << 100) + 7, str((1 << 100) + 7)),
    "li": ([3, 1, 2, 1], "[3, 1, 2, 1]"),
    "st": ({"b", "a", "c"}, "{'b', 'a', 'c'}"),
    "mp": ({"x": 1, "y": -2}, "{'y': -2, 'x': 1}"),
}

ROW_EDGES = {
    "a": ("", "''"),
    "bi": (9223372036854775807, "9223372036854775807"),
    "bl": (b"", "0x"),
    "bo": (False, "false"),
    "d": (Date(datetime.date(1969, 7, 20)), "'1969-07-20'"),
    "de": (Decimal("0.001"), "0.001"),
    "db": (-1.5e-300, "-1.5e-300"),
    "du": (Duration(-1, -2, -3), "-1mo2d3ns"),
    "f": (-0.5, "-0.5"),
    "i4": ("10.0.0.1", "'10.0.0.1'"),
    "i6": ("::1", "'::1'"),
    "i": (2147483647, "2147483647"),
    "si": (32767, "32767"),
    "t": ("", "''"),
    "tm": (Time(0), "'00:00:00'"),
    "ts": (datetime.datetime(1960, 1, 1, 0, 0, 0), "'1960-01-01 00:00:00+0000'"),
    "tu": (uuid.UUID("00000000-0000-1000-8000-000000000000"), "00000000-0000-1000-8000-000000000000"),
    "ti": (127, "127"),
    "u": (uuid.UUID(int=0), "00000000-0000-0000-0000-000000000000"),
    "vi": (-(1 << 130), str(-(1 << 130))),
    "li": ([0], "[0]"),
    "st": ({""}, "{''}"),
    "mp": ({"": 0}, "{'': 0}"),
}

ROW_NULLS = {n: (None, "null") for n in NAMES}


def assert_value(col, got, want):
    where = f"column {col}: got {got!r}, want {want!r}"
    if want is None:
        assert got is None, where
    elif col == "st":
        assert got is not None and set(got) == want, where
        assert list(got) == sorted(want), f"{where}: set not in sorted order"
    elif col == "mp":
        assert got is not None and dict(got) == want, where
        assert list(dict(got)) == sorted(want), f"{where}: map not in key order"
    elif col == "li":
        assert got is not None and list(got) == want, where
    elif col == "de":
        assert isinstance(got, Decimal) and got.as_tuple() == want.as_tuple(), where
    elif col in ("d", "tm", "du"):
        assert type(got) is type(want) and got == want, where
    else:
        assert type(got) is type(want) and got == want, where


def assert_row(row, expected, k):
    assert row is not None, f"row k={k} not found"
    assert row.k == k
    for col, (want, _) in expected.items():
        assert_value(col, getattr(row, col), want)


@pytest.fixture(scope="module")
def types_table(cql_env):
    cql_env.session.execute(f"CREATE TABLE {cql_env.ks}.types ({COLUMNS})")
    return f"{cql_env.ks}.types"


ROWS = [("typical", ROW_TYPICAL), ("edges", ROW_EDGES), ("nulls", ROW_NULLS)]


def test_types_prepared_round_trip(cql_env, types_table):
    session = cql_env.session
    ins = session.prepare(f"INSERT INTO {types_table} (k, {', '.join(NAMES)}) "
                          f"VALUES (?, {', '.join('?' for _ in NAMES)})")
    sel = session.prepare(f"SELECT k, {', '.join(NAMES)} FROM {types_table} WHERE k = ?")
    assert [c.name for c in sel.column_metadata] == ["k"]
    for i, (name, row) in enumerate(ROWS):
        k = 100 + i
        session.execute(ins, [k] + [row[n][0] for n in NAMES])
        assert_row(session.execute(sel, (k,)).one(), row, k)
        # The same row read back with an unprepared SELECT *.
        got = session.execute(f"SELECT * FROM {types_table} WHERE k = {k}").one()
        assert_row(got, row, k)


def test_types_unprepared_literals_round_trip(cql_env, types_table):
    session = cql_env.session
    for i, (name, row) in enumerate(ROWS):
        k = 200 + i
        session.execute(f"INSERT INTO {types_table} (k, {', '.join(NAMES)}) "
                        f"VALUES ({k}, {', '.join(row[n][1] for n in NAMES)})")
        got = session.execute(f"SELECT k, {', '.join(NAMES)} FROM {types_table} "
                              f"WHERE k = {k}").one()
        assert_row(got, row, k)
    # UPDATE with literals over an existing row, column by column.
    k = 200
    for n in NAMES:
        session.execute(f"UPDATE {types_table} SET {n} = {ROW_EDGES[n][1]} WHERE k = {k}")
    assert_row(session.execute(f"SELECT * FROM {types_table} WHERE k = {k}").one(), ROW_EDGES, k)


def test_types_driver_interpolation_round_trip(cql_env, types_table):
    """session.execute(query, params) formats values into the query text on
    the client (cassandra.encoder): another literal dialect to parse."""
    session = cql_env.session
    # The encoder has no Duration form; dates and times go as datetime objects.
    names = [n for n in NAMES if n != "du"]
    row = dict(ROW_TYPICAL)
    params = [row[n][0] for n in names]
    params[names.index("d")] = datetime.date(2024, 2, 29)
    params[names.index("tm")] = datetime.time(13, 45, 30, 123456)
    row["tm"] = (Time("13:45:30.123456"), None)
    k = 300
    session.execute(f"INSERT INTO {types_table} (k, {', '.join(names)}) "
                    f"VALUES (%s, {', '.join('%s' for _ in names)})", [k] + params)
    got = session.execute(f"SELECT * FROM {types_table} WHERE k = %s", (k,)).one()
    assert_row(got, {n: row[n] for n in names}, k)
    assert got.du is None


def test_unset_and_null_values(cql_env, types_table):
    session = cql_env.session
    ins = session.prepare(f"INSERT INTO {types_table} (k, i, t, li) VALUES (?, ?, ?, ?)")
    k = 400
    session.execute(ins, (k, 7, "seven", [7]))
    # Unset leaves the column alone; null deletes it.
    session.execute(ins, (k, UNSET_VALUE, None, UNSET_VALUE))
    row = session.execute(f"SELECT i, t, li FROM {types_table} WHERE k = {k}").one()
    assert (row.i, row.t, row.li) == (7, None, [7])
    # An empty collection is no collection: it reads back as null.
    session.execute(ins, (k, UNSET_VALUE, UNSET_VALUE, []))
    assert session.execute(f"SELECT li FROM {types_table} WHERE k = {k}").one().li is None
    session.execute(f"UPDATE {types_table} SET st = {{}}, mp = {{}} WHERE k = {k}")
    row = session.execute(f"SELECT st, mp, i FROM {types_table} WHERE k = {k}").one()
    assert (row.st, row.mp, row.i) == (None, None, 7)


def test_floating_point_specials(cql_env):
    session, ks = cql_env.session, cql_env.ks
    session.execute(f"CREATE TABLE {ks}.fp (k int PRIMARY KEY, d double, f float)")
    session.execute(f"INSERT INTO {ks}.fp (k, d, f) VALUES (1, Infinity, -Infinity)")
    session.execute(f"INSERT INTO {ks}.fp (k, d, f) VALUES (2, NaN, NaN)")
    ps = session.prepare(f"INSERT INTO {ks}.fp (k, d, f) VALUES (?, ?, ?)")
    session.execute(ps, (3, float("-inf"), 1e-45))  # the smallest float subnormal
    rows = {r.k: r for r in session.execute(f"SELECT * FROM {ks}.fp")}
    assert rows[1].d == float("inf") and rows[1].f == float("-inf")
    assert rows[2].d != rows[2].d and rows[2].f != rows[2].f, "NaN did not round-trip"
    assert rows[3].d == float("-inf") and rows[3].f == pytest.approx(1.401298464324817e-45)


def test_frozen_list_clustering_column(cql_env):
    session, ks = cql_env.session, cql_env.ks
    session.execute(f"CREATE TABLE {ks}.fl (k int, c frozen<list<int>>, v int, PRIMARY KEY (k, c))")
    ins = session.prepare(f"INSERT INTO {ks}.fl (k, c, v) VALUES (?, ?, ?)")
    keys = [[1, 2], [1], [2], [], [1, 2, 3], [0, 5], [-1]]
    for i, c in enumerate(keys):
        session.execute(ins, (0, c, i))
    session.execute(f"INSERT INTO {ks}.fl (k, c, v) VALUES (0, [7, 7], 70)")
    keys.append([7, 7])
    rows = session.execute(f"SELECT c, v FROM {ks}.fl WHERE k = 0").all()
    # Frozen lists sort element by element (signed ints), a prefix first.
    assert [list(r.c) for r in rows] == sorted(keys), [r.c for r in rows]
    sel = session.prepare(f"SELECT v FROM {ks}.fl WHERE k = ? AND c = ?")
    assert session.execute(sel, (0, [1, 2])).one().v == 0
    assert session.execute(sel, (0, [1, 2, 4])).one() is None
    assert session.execute(f"SELECT v FROM {ks}.fl WHERE k = 0 AND c = [7, 7]").one().v == 70
    rng = session.execute(f"SELECT c FROM {ks}.fl WHERE k = 0 AND c > [1] AND c < [2]").all()
    assert [list(r.c) for r in rng] == [[1, 2], [1, 2, 3]]
    session.execute(f"DELETE FROM {ks}.fl WHERE k = 0 AND c = [1]")
    assert [1] not in [list(r.c) for r in session.execute(f"SELECT c FROM {ks}.fl WHERE k = 0")]


def test_counters(cql_env):
    session, ks = cql_env.session, cql_env.ks
    session.execute(f"CREATE TABLE {ks}.cnt (k int PRIMARY KEY, c counter, d counter)")
    session.execute(f"UPDATE {ks}.cnt SET c = c + 5 WHERE k = 1")
    session.execute(f"UPDATE {ks}.cnt SET c = c - 2 WHERE k = 1")
    assert session.execute(f"SELECT c FROM {ks}.cnt WHERE k = 1").one().c == 3
    ps = session.prepare(f"UPDATE {ks}.cnt SET c = c + ?, d = d - ? WHERE k = ?")
    session.execute(ps, (-10, 4, 1))
    row = session.execute(f"SELECT c, d FROM {ks}.cnt WHERE k = 1").one()
    assert (row.c, row.d) == (-7, -4)
    for _ in range(20):
        session.execute(ps, (1, 1, 2))
    row = session.execute(f"SELECT c, d FROM {ks}.cnt WHERE k = 2").one()
    assert (row.c, row.d) == (20, -20)
    assert session.execute(f"SELECT c FROM {ks}.cnt WHERE k = 3").one() is None
    # Counters only increment and decrement.
    with pytest.raises(InvalidRequest):
        session.execute(f"UPDATE {ks}.cnt SET c = 1 WHERE k = 1")
    with pytest.raises(InvalidRequest):
        session.execute(f"INSERT INTO {ks}.cnt (k, c) VALUES (9, 1)")


def test_collection_updates(cql_env):
    session, ks = cql_env.session, cql_env.ks
    session.execute(f"CREATE TABLE {ks}.coll (k int PRIMARY KEY, li list<int>, st set<text>, "
                    "mp map<text, int>)")
    t = f"{ks}.coll"
    session.execute(f"INSERT INTO {t} (k, li, st, mp) VALUES (1, [1, 2, 3], {{'a', 'b'}}, "
                    "{'x': 1, 'y': 2})")

    def row():
        return session.execute(f"SELECT li, st, mp FROM {t} WHERE k = 1").one()

    session.execute(f"UPDATE {t} SET li = li + [4, 5] WHERE k = 1")
    assert row().li == [1, 2, 3, 4, 5]
    session.execute(f"UPDATE {t} SET li = [0] + li WHERE k = 1")
    assert row().li == [0, 1, 2, 3, 4, 5]
    session.execute(f"UPDATE {t} SET li = [-2, -1] + li WHERE k = 1")
    assert row().li == [-2, -1, 0, 1, 2, 3, 4, 5]
    session.execute(f"UPDATE {t} SET li = li + [2] WHERE k = 1")
    session.execute(f"UPDATE {t} SET li = li - [2, 4] WHERE k = 1")  # every occurrence
    assert row().li == [-2, -1, 0, 1, 3, 5]
    ps = session.prepare(f"UPDATE {t} SET li = li + ? WHERE k = ?")
    session.execute(ps, ([9], 1))
    assert row().li == [-2, -1, 0, 1, 3, 5, 9]

    session.execute(f"UPDATE {t} SET st = st + {{'c', 'a'}} WHERE k = 1")
    assert set(row().st) == {"a", "b", "c"}
    session.execute(f"UPDATE {t} SET st = st - {{'a', 'zz'}} WHERE k = 1")
    assert set(row().st) == {"b", "c"}
    session.execute(f"UPDATE {t} SET st = st - {{'b', 'c'}} WHERE k = 1")
    assert row().st is None, "a set emptied by removal reads back as null"

    session.execute(f"UPDATE {t} SET mp['z'] = 26 WHERE k = 1")
    session.execute(f"UPDATE {t} SET mp['x'] = 100 WHERE k = 1")
    assert dict(row().mp) == {"x": 100, "y": 2, "z": 26}
    session.execute(f"DELETE mp['y'] FROM {t} WHERE k = 1")
    assert dict(row().mp) == {"x": 100, "z": 26}
    session.execute(f"UPDATE {t} SET mp = mp + {{'w': -1}} WHERE k = 1")
    assert dict(row().mp) == {"w": -1, "x": 100, "z": 26}
    session.execute(f"UPDATE {t} SET mp = mp - {{'x', 'z'}} WHERE k = 1")
    assert dict(row().mp) == {"w": -1}
    ps = session.prepare(f"UPDATE {t} SET mp[?] = ? WHERE k = ?")
    session.execute(ps, ("v", 22, 1))
    assert dict(row().mp) == {"v": 22, "w": -1}

    # Appending to a missing row creates it.
    session.execute(f"UPDATE {t} SET li = li + [1], st = st + {{'n'}}, mp['m'] = 1 WHERE k = 2")
    r = session.execute(f"SELECT li, st, mp FROM {t} WHERE k = 2").one()
    assert (r.li, set(r.st), dict(r.mp)) == ([1], {"n"}, {"m": 1})
    # Overwriting replaces the whole collection.
    session.execute(f"UPDATE {t} SET li = [7], st = {{'o'}}, mp = {{'p': 2}} WHERE k = 2")
    r = session.execute(f"SELECT li, st, mp FROM {t} WHERE k = 2").one()
    assert (r.li, set(r.st), dict(r.mp)) == ([7], {"o"}, {"p": 2})


def test_update_and_delete_semantics(cql_env):
    session, ks = cql_env.session, cql_env.ks
    t = f"{ks}.ud"
    session.execute(f"CREATE TABLE {t} (k int, c int, v int, w text, PRIMARY KEY (k, c))")
    # UPDATE of a missing row is an upsert; INSERT over a row overwrites.
    session.execute(f"UPDATE {t} SET v = 1 WHERE k = 1 AND c = 1")
    assert tuple(session.execute(f"SELECT v, w FROM {t} WHERE k = 1 AND c = 1").one()) == (1, None)
    session.execute(f"INSERT INTO {t} (k, c, v, w) VALUES (1, 1, 2, 'x')")
    assert tuple(session.execute(f"SELECT v, w FROM {t} WHERE k = 1 AND c = 1").one()) == (2, "x")
    # Deleting a column keeps the row (it was INSERTed: a row marker).
    session.execute(f"DELETE v FROM {t} WHERE k = 1 AND c = 1")
    assert tuple(session.execute(f"SELECT v, w FROM {t} WHERE k = 1 AND c = 1").one()) == (None, "x")
    session.execute(f"DELETE w FROM {t} WHERE k = 1 AND c = 1")
    assert tuple(session.execute(f"SELECT v, w FROM {t} WHERE k = 1 AND c = 1").one()) == (None, None)
    # A row made only by UPDATE disappears with its last column.
    session.execute(f"UPDATE {t} SET v = 3 WHERE k = 1 AND c = 2")
    session.execute(f"DELETE v FROM {t} WHERE k = 1 AND c = 2")
    assert session.execute(f"SELECT * FROM {t} WHERE k = 1 AND c = 2").one() is None

    for c in range(10):
        session.execute(f"INSERT INTO {t} (k, c, v) VALUES (2, {c}, {c})")
    session.execute(f"DELETE FROM {t} WHERE k = 2 AND c = 3")
    session.execute(f"DELETE FROM {t} WHERE k = 2 AND c >= 7")
    session.execute(f"DELETE FROM {t} WHERE k = 2 AND c > 0 AND c < 2")
    assert [r.c for r in session.execute(f"SELECT c FROM {t} WHERE k = 2")] == [0, 2, 4, 5, 6]
    ps = session.prepare(f"DELETE FROM {t} WHERE k = ? AND c = ?")
    session.execute(ps, (2, 4))
    assert [r.c for r in session.execute(f"SELECT c FROM {t} WHERE k = 2")] == [0, 2, 5, 6]
    session.execute(f"DELETE FROM {t} WHERE k = 2")
    assert session.execute(f"SELECT * FROM {t} WHERE k = 2").all() == []
    # A deleted partition can be written again.
    session.execute(f"INSERT INTO {t} (k, c, v) VALUES (2, 1, 11)")
    assert [tuple(r) for r in session.execute(f"SELECT c, v FROM {t} WHERE k = 2")] == [(1, 11)]


def test_ttl_expiry_and_ttl_writetime_functions(cql_env):
    session, ks = cql_env.session, cql_env.ks
    t = f"{ks}.ttl"
    session.execute(f"CREATE TABLE {t} (k int PRIMARY KEY, v int, w int)")

    session.execute(f"INSERT INTO {t} (k, v, w) VALUES (1, 1, 1) USING TTL 100")
    session.execute(f"INSERT INTO {t} (k, v) VALUES (2, 2) USING TIMESTAMP 123456789")
    session.execute(f"UPDATE {t} USING TTL 200 AND TIMESTAMP 987654321 SET w = 3 WHERE k = 2")
    row = session.execute(f"SELECT TTL(v), WRITETIME(v), TTL(w), WRITETIME(w) FROM {t} WHERE k = 1").one()
    assert 90 <= row[0] <= 100, f"TTL(v) = {row[0]} right after USING TTL 100"
    now_us = time.time() * 1e6
    assert abs(row[1] - now_us) < 600e6, f"WRITETIME(v) = {row[1]} is not about now in microseconds"
    assert 90 <= row[2] <= 100 and row[3] == row[1]
    row = session.execute(f"SELECT TTL(v), WRITETIME(v), TTL(w), WRITETIME(w) FROM {t} WHERE k = 2").one()
    assert tuple(row[:2]) == (None, 123456789)
    assert 190 <= row[2] <= 200 and row[3] == 987654321
    ps = session.prepare(f"INSERT INTO {t} (k, v) VALUES (?, ?) USING TTL ? AND TIMESTAMP ?")
    session.execute(ps, (3, 3, 50, 1000))
    row = session.execute(f"SELECT TTL(v), WRITETIME(v) FROM {t} WHERE k = 3").one()
    assert 40 <= row[0] <= 50 and row[1] == 1000

    # TTL 1: gone within a few seconds (polled, bounded at 10 s).
    session.execute(f"INSERT INTO {t} (k, v) VALUES (10, 10) USING TTL 1")
    session.execute(f"UPDATE {t} USING TTL 1 SET w = 11 WHERE k = 1")
    deadline = time.monotonic() + 10
    while True:
        gone = session.execute(f"SELECT * FROM {t} WHERE k = 10").one() is None
        w = session.execute(f"SELECT w FROM {t} WHERE k = 1").one().w
        if gone and w is None:
            break
        assert time.monotonic() < deadline, \
            f"USING TTL 1 not expired after 10 s: row k=10 present={not gone}, w={w}"
        time.sleep(0.25)
    # The rest of row k=1 (TTL 100) is still there.
    assert session.execute(f"SELECT v FROM {t} WHERE k = 1").one().v == 1


def test_default_time_to_live(cql_env):
    session, ks = cql_env.session, cql_env.ks
    t = f"{ks}.dttl"
    session.execute(f"CREATE TABLE {t} (k int PRIMARY KEY, v int) WITH default_time_to_live = 1000")
    session.execute(f"INSERT INTO {t} (k, v) VALUES (1, 1)")
    session.execute(f"INSERT INTO {t} (k, v) VALUES (2, 2) USING TTL 20")
    assert 990 <= session.execute(f"SELECT TTL(v) FROM {t} WHERE k = 1").one()[0] <= 1000
    assert 10 <= session.execute(f"SELECT TTL(v) FROM {t} WHERE k = 2").one()[0] <= 20


def test_using_timestamp_ordering(cql_env):
    session, ks = cql_env.session, cql_env.ks
    t = f"{ks}.ts"
    session.execute(f"CREATE TABLE {t} (k int PRIMARY KEY, v int)")

    def v():
        row = session.execute(f"SELECT v FROM {t} WHERE k = 1").one()
        return None if row is None else row.v

    session.execute(f"INSERT INTO {t} (k, v) VALUES (1, 1) USING TIMESTAMP 2000")
    session.execute(f"INSERT INTO {t} (k, v) VALUES (1, 2) USING TIMESTAMP 1000")
    assert v() == 1, "a write with a lower timestamp won"
    session.execute(f"UPDATE {t} USING TIMESTAMP 1999 SET v = 3 WHERE k = 1")
    assert v() == 1
    session.execute(f"UPDATE {t} USING TIMESTAMP 2001 SET v = 4 WHERE k = 1")
    assert v() == 4
    session.execute(f"DELETE FROM {t} USING TIMESTAMP 1500 WHERE k = 1")
    assert v() == 4, "a delete older than the data removed it"
    session.execute(f"DELETE FROM {t} USING TIMESTAMP 3000 WHERE k = 1")
    assert v() is None
    session.execute(f"INSERT INTO {t} (k, v) VALUES (1, 5) USING TIMESTAMP 2500")
    assert v() is None, "a write older than the tombstone resurrected the row"
    session.execute(f"INSERT INTO {t} (k, v) VALUES (1, 6) USING TIMESTAMP 3001")
    assert v() == 6
    # Client-side timestamps (the driver's default) are "now": far above these.
    session.execute(f"INSERT INTO {t} (k, v) VALUES (1, 7)")
    assert v() == 7
    # Prepared with a bound timestamp.
    ps = session.prepare(f"INSERT INTO {t} (k, v) VALUES (?, ?) USING TIMESTAMP ?")
    session.execute(ps, (2, 1, 50))
    session.execute(ps, (2, 2, 40))
    assert session.execute(f"SELECT v, WRITETIME(v) FROM {t} WHERE k = 2").one()[:2] == (1, 50)


def test_batches(cql_env):
    session, ks = cql_env.session, cql_env.ks
    t, tc = f"{ks}.bt", f"{ks}.btc"
    session.execute(f"CREATE TABLE {t} (k int, c int, v text, PRIMARY KEY (k, c))")
    session.execute(f"CREATE TABLE {tc} (k int PRIMARY KEY, n counter)")
    ins = session.prepare(f"INSERT INTO {t} (k, c, v) VALUES (?, ?, ?)")

    def rows(k):
        return [(r.c, r.v) for r in session.execute(f"SELECT c, v FROM {t} WHERE k = {k}")]

    # Logged batch: prepared and simple statements mixed, one partition.
    b = BatchStatement(batch_type=BatchType.LOGGED)
    for c in range(5):
        b.add(ins, (1, c, f"v{c}"))
    b.add(SimpleStatement(f"UPDATE {t} SET v = 'upd' WHERE k = 1 AND c = 9"))
    # One timestamp for the whole batch: on a tie the larger value wins a
    # cell ('v1' over 'a') and a deletion wins over a write (c = 4).
    b.add(SimpleStatement(f"UPDATE {t} SET v = 'a' WHERE k = 1 AND c = 1"))
    b.add(SimpleStatement(f"DELETE FROM {t} WHERE k = 1 AND c = %s"), (4,))
    session.execute(b)
    assert rows(1) == [(0, "v0"), (1, "v1"), (2, "v2"), (3, "v3"), (9, "upd")]

    # Unlogged batch over several partitions.
    b = BatchStatement(batch_type=BatchType.UNLOGGED)
    for k in range(10, 20):
        b.add(ins, (k, 0, f"k{k}"))
    session.execute(b)
    for k in range(10, 20):
        assert rows(k) == [(0, f"k{k}")]

    # Counter batch, applied twice.
    upd = session.prepare(f"UPDATE {tc} SET n = n + ? WHERE k = ?")
    b = BatchStatement(batch_type=BatchType.COUNTER)
    for k in range(3):
        b.add(upd, (k + 1, k))
    session.execute(b)
    session.execute(b)
    assert {r.k: r.n for r in session.execute(f"SELECT k, n FROM {tc}")} == {0: 2, 1: 4, 2: 6}

    # Text batches, with a batch-wide timestamp.
    session.execute(f"BEGIN BATCH USING TIMESTAMP 1000 "
                    f"INSERT INTO {t} (k, c, v) VALUES (2, 1, 'a'); "
                    f"INSERT INTO {t} (k, c, v) VALUES (3, 1, 'b'); "
                    f"UPDATE {t} SET v = 'c' WHERE k = 2 AND c = 2; "
                    f"APPLY BATCH")
    assert rows(2) == [(1, "a"), (2, "c")] and rows(3) == [(1, "b")]
    wt = session.execute(f"SELECT WRITETIME(v) FROM {t} WHERE k = 2 AND c = 1").one()[0]
    assert wt == 1000
    # An older batch loses to it; a newer one wins.
    session.execute(f"BEGIN UNLOGGED BATCH USING TIMESTAMP 999 "
                    f"INSERT INTO {t} (k, c, v) VALUES (2, 1, 'old'); "
                    f"INSERT INTO {t} (k, c, v) VALUES (3, 1, 'old'); "
                    f"APPLY BATCH")
    assert rows(2)[0] == (1, "a") and rows(3) == [(1, "b")]
    session.execute(f"BEGIN BATCH "
                    f"INSERT INTO {t} (k, c, v) VALUES (2, 1, 'x') USING TIMESTAMP 1001; "
                    f"DELETE FROM {t} USING TIMESTAMP 1001 WHERE k = 3 AND c = 1; "
                    f"APPLY BATCH")
    assert rows(2)[0] == (1, "x") and rows(3) == []
    session.execute(f"BEGIN COUNTER BATCH "
                    f"UPDATE {tc} SET n = n + 10 WHERE k = 0; "
                    f"UPDATE {tc} SET n = n - 1 WHERE k = 5; "
                    f"APPLY BATCH")
    assert {r.k: r.n for r in session.execute(f"SELECT k, n FROM {tc}")} == {0: 12, 1: 4, 2: 6, 5: -1}

    # Counters and regular writes do not mix.
    with pytest.raises(InvalidRequest):
        session.execute(f"BEGIN BATCH UPDATE {tc} SET n = n + 1 WHERE k = 0; "
                        f"INSERT INTO {t} (k, c, v) VALUES (9, 9, 'z'); APPLY BATCH")
    assert rows(9) == []


def test_large_values(cql_env):
    session, ks = cql_env.session, cql_env.ks
    session.execute(f"CREATE TABLE {ks}.big (k int PRIMARY KEY, b blob, t text)")
    ins = session.prepare(f"INSERT INTO {ks}.big (k, b, t) VALUES (?, ?, ?)")
    sel = session.prepare(f"SELECT b, t FROM {ks}.big WHERE k = ?")
    for k, size in enumerate((1, 64 * 1024, 1 << 20, 8 << 20)):
        blob = bytes((i * 7 + k) & 0xFF for i in range(size))
        text = "\u00e9" * (size // 2)
        session.execute(ins, (k, blob, text))
        row = session.execute(sel, (k,)).one()
        assert row.b == blob, f"{size}-byte blob differs"
        assert row.t == text, f"{size}-character text differs"


def test_consistency_levels(cql_env):
    session, ks = cql_env.session, cql_env.ks
    t = f"{ks}.cl"
    session.execute(f"CREATE TABLE {t} (k int PRIMARY KEY, v int)")
    # With one replica every ordinary level is satisfiable.
    for i, cl in enumerate((CL.ONE, CL.LOCAL_ONE, CL.QUORUM, CL.LOCAL_QUORUM, CL.ALL, CL.ANY,
                            CL.EACH_QUORUM)):
        session.execute(SimpleStatement(f"INSERT INTO {t} (k, v) VALUES ({i}, {i})",
                                        consistency_level=cl))
    for cl in (CL.ONE, CL.LOCAL_ONE, CL.QUORUM, CL.LOCAL_QUORUM, CL.ALL):
        rows = session.execute(SimpleStatement(f"SELECT k, v FROM {t}", consistency_level=cl))
        assert sorted(tuple(r) for r in rows) == [(i, i) for i in range(7)]
    # ANY and EACH_QUORUM are for writes only.
    for cl in (CL.ANY, CL.EACH_QUORUM):
        cql_expect_error(session, SimpleStatement(f"SELECT v FROM {t} WHERE k = 0",
                                                  consistency_level=cl), InvalidRequest)


def test_named_bind_markers(cql_env):
    session, ks = cql_env.session, cql_env.ks
    t = f"{ks}.named"
    session.execute(f"CREATE TABLE {t} (k int, c int, v text, PRIMARY KEY (k, c))")
    ins = session.prepare(f"INSERT INTO {t} (k, c, v) VALUES (:k, :c, :val)")
    assert [c.name for c in ins.column_metadata] == ["k", "c", "val"]
    session.execute(ins, {"val": "x", "k": 1, "c": 2})
    sel = session.prepare(f"SELECT v FROM {t} WHERE k = :k AND c >= :lo AND c <= :hi")
    assert [c.name for c in sel.column_metadata] == ["k", "lo", "hi"]
    assert [r.v for r in session.execute(sel, {"k": 1, "lo": 0, "hi": 5})] == ["x"]


def test_ttl_bounds(cql_env):
    session, ks = cql_env.session, cql_env.ks
    t = f"{ks}.ttlb"
    session.execute(f"CREATE TABLE {t} (k int PRIMARY KEY, v int)")
    session.execute(f"INSERT INTO {t} (k, v) VALUES (1, 1) USING TTL 0")  # 0: no TTL
    assert session.execute(f"SELECT TTL(v) FROM {t} WHERE k = 1").one()[0] is None
    # The largest TTL expires after 2038 (past a 32-bit expiry time): the
    # write is kept (ScyllaDB) or refused (Cassandra's default), never lost.
    for k, (ttl, how) in enumerate(((630720000, "USING TTL"), (400000000, "USING TTL"),
                                    (400000000, "default_time_to_live"))):
        k += 10
        try:
            if how == "USING TTL":
                session.execute(f"INSERT INTO {t} (k, v) VALUES ({k}, {k}) USING TTL {ttl}")
            else:
                session.execute(f"CREATE TABLE {t}{k} (k int PRIMARY KEY, v int) "
                                f"WITH default_time_to_live = {ttl}")
                session.execute(f"INSERT INTO {t}{k} (k, v) VALUES ({k}, {k})")
        except InvalidRequest:
            continue
        row = session.execute(f"SELECT v, TTL(v) FROM {t}{'' if how == 'USING TTL' else k} "
                              f"WHERE k = {k}").one()
        assert row is not None, f"write with {how} {ttl} accepted but the row is gone"
        assert row[0] == k and row[1] > ttl - 100, f"{how} {ttl}: {row}"
    for q in (f"INSERT INTO {t} (k, v) VALUES (3, 3) USING TTL -1",
              f"INSERT INTO {t} (k, v) VALUES (3, 3) USING TTL 630720001",
              f"DELETE FROM {t} USING TTL 10 WHERE k = 1"):
        cql_expect_error(session, q, InvalidRequest)
    assert session.execute(f"SELECT * FROM {t} WHERE k = 3").one() is None
