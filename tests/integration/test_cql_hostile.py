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

from cassandra import ConfigurationException, InvalidRequest  # noqa: E402
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
