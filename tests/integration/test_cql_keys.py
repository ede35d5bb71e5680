# SPDX-License-Identifier: BSD-3-Clause
"""CQL endpoint: every key-capable type as a clustering column (ordering,
ascending and descending, and ranges) and as a partition key (lookups by
literal and by bound value agree: the server serializes literals exactly as
the driver serializes values, or the token, and so the shard, would differ).
"""

import datetime
import random
import uuid
from decimal import Decimal

import pytest

pytest.importorskip("cassandra")

from cassandra.util import Date, Time, uuid_from_time  # noqa: E402

from conftest import cql_unique_name  # noqa: E402

T0 = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)

# type -> (values in CQL order, CQL literal of a value)
ORDERED = {
    "int": ([-2**31, -65536, -1, 0, 1, 255, 2**31 - 1], str),
    "bigint": ([-2**63, -2**32, -1, 0, 1, 2**40, 2**63 - 1], str),
    "smallint": ([-32768, -129, -1, 0, 1, 128, 32767], str),
    "tinyint": ([-128, -1, 0, 1, 127], str),
    "varint": ([-(2**100), -65536, -256, -129, -128, -1, 0, 1, 127, 128, 255, 256, 2**100], str),
    "decimal": ([Decimal("-1E+10"), Decimal("-1.5"), Decimal("-0.001"), Decimal("0"),
                 Decimal("0.001"), Decimal("0.5"), Decimal("2"), Decimal("12345.678")], str),
    "double": ([float("-inf"), -1e300, -1.5, -1e-300, 0.0, 1e-300, 1.5, 1e300, float("inf")],
               lambda v: {float("inf"): "Infinity", float("-inf"): "-Infinity"}.get(v, repr(v))),
    "float": ([float("-inf"), -3.5, -0.25, 0.0, 0.25, 3.5, float("inf")],
              lambda v: {float("inf"): "Infinity", float("-inf"): "-Infinity"}.get(v, repr(v))),
    "text": (["", "A", "B", "a", "ab", "b", "\u00e9", "\u4e2d"], lambda v: "'" + v + "'"),
    "ascii": (["", "A", "Z", "a", "z"], lambda v: "'" + v + "'"),
    "blob": ([b"", b"\x00", b"\x00\x00", b"\x01", b"\x7f", b"\x80", b"\xff", b"\xff\x00"],
             lambda v: "0x" + v.hex()),
    "boolean": ([False, True], lambda v: str(v).lower()),
    "date": ([Date(datetime.date(1, 1, 1)), Date(datetime.date(1969, 12, 31)),
              Date(datetime.date(1970, 1, 1)), Date(datetime.date(2024, 2, 29)),
              Date(datetime.date(9999, 12, 31))], lambda v: f"'{v}'"),
    "timestamp": ([datetime.datetime(1900, 1, 1), datetime.datetime(1969, 12, 31, 23, 59, 59, 999000),
                   datetime.datetime(1970, 1, 1), datetime.datetime(2024, 1, 1, 12, 0, 0, 1000)],
                  lambda v: "'" + v.strftime("%Y-%m-%d %H:%M:%S.") + f"{v.microsecond // 1000:03d}+0000'"),
    "time": ([Time(0), Time(1), Time("12:00:00"), Time("23:59:59.999999999")],
             lambda v: f"'{v}'"),
    "inet": (["1.2.3.4", "10.0.0.1", "127.0.0.1", "192.168.0.1", "255.255.255.255"],
             lambda v: f"'{v}'"),
    "uuid": ([uuid.UUID("00000000-0000-4000-8000-000000000000"),
              uuid.UUID("7fffffff-0000-4000-8000-000000000000"),
              uuid.UUID("80000000-0000-4000-8000-000000000000"),
              uuid.UUID("ffffffff-0000-4000-8000-000000000000")], str),
    # Ordered by time, which is not byte order: time_low (the first 4 bytes)
    # wraps every ~429.5 s.
    "timeuuid": ([uuid_from_time(T0 + datetime.timedelta(seconds=s), node=1, clock_seq=1)
                  for s in (0, 100, 300, 430, 800, 86400)], str),
}


def assert_same(typ, got, want):
    if typ == "decimal":
        assert [g.as_tuple() for g in got] == [w.as_tuple() for w in want], (got, want)
    else:
        assert list(got) == list(want), (got, want)


@pytest.mark.parametrize("typ", sorted(ORDERED))
def test_clustering_order_and_partition_lookups(cql_env, typ):
    session, ks = cql_env.session, cql_env.ks
    values, lit = ORDERED[typ]
    rng = random.Random(typ)
    shuffled = list(enumerate(values))
    rng.shuffle(shuffled)

    t = f"{ks}.{cql_unique_name('ck_' + typ)}"
    session.execute(f"CREATE TABLE {t} (k int, c {typ}, i int, PRIMARY KEY (k, c))")
    td = f"{ks}.{cql_unique_name('ckd_' + typ)}"
    session.execute(f"CREATE TABLE {td} (k int, c {typ}, i int, PRIMARY KEY (k, c)) "
                    "WITH CLUSTERING ORDER BY (c DESC)")
    for table in (t, td):
        ps = session.prepare(f"INSERT INTO {table} (k, c, i) VALUES (0, ?, ?)")
        for n, (i, v) in enumerate(shuffled):
            if n % 2:
                session.execute(ps, (v, i))
            else:
                session.execute(f"INSERT INTO {table} (k, c, i) VALUES (0, {lit(v)}, {i})")

    rows = session.execute(f"SELECT c, i FROM {t} WHERE k = 0").all()
    assert [r.i for r in rows] == list(range(len(values))), \
        f"{typ} clustering order: got {[r.c for r in rows]}"
    assert_same(typ, [r.c for r in rows], values)
    rows = session.execute(f"SELECT c, i FROM {t} WHERE k = 0 ORDER BY c DESC").all()
    assert [r.i for r in rows] == list(range(len(values)))[::-1]
    rows = session.execute(f"SELECT c, i FROM {td} WHERE k = 0").all()
    assert [r.i for r in rows] == list(range(len(values)))[::-1], \
        f"{typ} DESC clustering order: got {[r.c for r in rows]}"

    # Ranges with literal and bound bounds.
    lo, hi = 1, len(values) - 2
    for table, order in ((t, 1), (td, -1)):
        q = f"SELECT i FROM {table} WHERE k = 0 AND c > {lit(values[lo])} AND c <= {lit(values[hi])}"
        got = [r.i for r in session.execute(q)]
        assert got == list(range(lo + 1, hi + 1))[::order], f"{typ} range on {table}: {got}"
        ps = session.prepare(f"SELECT i FROM {table} WHERE k = 0 AND c >= ? AND c < ?")
        got = [r.i for r in session.execute(ps, (values[lo], values[hi]))]
        assert got == list(range(lo, hi))[::order], f"{typ} bound range on {table}: {got}"

    # As a partition key: written by literal, found by bound value, and the
    # other way round.
    tp = f"{ks}.{cql_unique_name('pk_' + typ)}"
    session.execute(f"CREATE TABLE {tp} (p {typ} PRIMARY KEY, i int)")
    ins = session.prepare(f"INSERT INTO {tp} (p, i) VALUES (?, ?)")
    sel = session.prepare(f"SELECT i FROM {tp} WHERE p = ?")
    for i, v in enumerate(values):
        if typ in ("text", "ascii", "blob") and not v:
            continue  # a partition key may not be empty
        if i % 2:
            session.execute(ins, (v, i))
            row = session.execute(f"SELECT i FROM {tp} WHERE p = {lit(v)}").one()
        else:
            session.execute(f"INSERT INTO {tp} (p, i) VALUES ({lit(v)}, {i})")
            row = session.execute(sel, (v,)).one()
        assert row is not None and row.i == i, f"{typ} partition key {v!r} not found"
