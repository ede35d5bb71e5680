# SPDX-License-Identifier: BSD-3-Clause
"""CQL endpoint: aggregates, GROUP BY, SELECT DISTINCT, functions and casts
in the selection, through the DataStax Python driver (simple and prepared).

count(*), count(col), min, max, sum and avg over the numeric types with
ScyllaDB's rules (sums of integers overflow with an error, avg of integers
truncates, decimal sums are exact), an aggregate over no row, GROUP BY a
partition or clustering prefix (with LIMIT and PER PARTITION LIMIT over
groups), SELECT DISTINCT and its checks, native functions of columns
(toDate, toTimestamp, toUnixTimestamp, minTimeuuid, blobAs*, *AsBlob,
token()), CAST between numbers, to text and between time types, type hints,
and the result column names ScyllaDB gives them. Rewritten after ScyllaDB's
test/cqlpy/test_aggregate.py, test_group_by.py, test_distinct.py,
test_cast.py, test_cast_data.py, test_native_functions.py and
cassandra_tests/functions/cast_fcts_test.py and
validation/operations/select_group_by_test.py.
"""

import math
import uuid
from datetime import datetime
from decimal import Decimal

import pytest

pytest.importorskip("cassandra")

from cassandra import InvalidRequest  # noqa: E402
from cassandra.util import Date  # noqa: E402

from conftest import cql_unique_name  # noqa: E402


@pytest.fixture
def table(cql_env):
    def make(schema):
        t = f"{cql_env.ks}.{cql_unique_name('t')}"
        cql_env.session.execute(f"CREATE TABLE {t} {schema}")
        return t
    return make


def invalid(session, query, match, *args):
    with pytest.raises(InvalidRequest, match=match):
        session.execute(query, *args)


def test_count_min_max_sum_avg(cql_env, table):
    """test_aggregate.py test_count_empty_eq, test_count_and_p_empty_eq,
    test_count_empty_in, test_count_specific_column, test_sum_in_partition,
    test_aggregation_inf_nan."""
    s = cql_env.session
    t = table("(p int, c int, v int, d double, dc decimal, vi varint, PRIMARY KEY (p, c))")
    assert list(s.execute(f"SELECT count(*) FROM {t} WHERE p = 1")) == [(0,)]
    assert list(s.execute(f"SELECT min(v) FROM {t} WHERE p = 1")) == [(None,)]
    assert list(s.execute(f"SELECT sum(v), avg(v) FROM {t} WHERE p = 1")) == [(0, 0)]
    assert list(s.execute(f"SELECT p, count(*) FROM {t} WHERE p = 1")) == [(None, 0)]
    assert list(s.execute(f"SELECT count(*), count(v), min(v), sum(v) FROM {t} WHERE p IN ()")) \
        == [(0, 0, None, 0)]
    ins = s.prepare(f"INSERT INTO {t} (p, c, v, d, dc, vi) VALUES (?, ?, ?, ?, ?, ?)")
    for c, v in ((1, 4), (2, 5), (3, 7), (4, None)):
        s.execute(ins, (1, c, v, c / 2, Decimal(c) / 10, 10 ** 30 * c))
    rs = s.execute(f"SELECT count(*), count(v), min(v), max(v), sum(v), avg(v) FROM {t} WHERE p = 1")
    assert rs.column_names == ["count", "system.count(v)", "system.min(v)", "system.max(v)",
                               "system.sum(v)", "system.avg(v)"]
    assert rs.one() == (4, 3, 4, 7, 16, 5)  # avg of ints truncates: 16 / 3
    r = s.execute(s.prepare(f"SELECT sum(d), avg(d), sum(dc), sum(vi), avg(vi) FROM {t} WHERE p = ?"),
                  (1,)).one()
    assert r == (5.0, 1.25, Decimal("1.0"), 10 ** 31, 10 ** 31 // 4)
    # the first row's value for a column that is not aggregated
    assert s.execute(f"SELECT c, max(v) FROM {t} WHERE p = 1").one() == (1, 7)
    s.execute(f"INSERT INTO {t} (p, c, d) VALUES (2, 1, infinity)")
    assert s.execute(f"SELECT sum(d) FROM {t} WHERE p = 2").one()[0] == math.inf
    s.execute(f"INSERT INTO {t} (p, c, d) VALUES (2, 2, -infinity)")
    assert math.isnan(s.execute(f"SELECT sum(d) FROM {t} WHERE p = 2").one()[0])


def test_sum_overflow_and_errors(cql_env, table):
    s = cql_env.session
    t = table("(p int, c int, v int, tx text, PRIMARY KEY (p, c))")
    s.execute(f"INSERT INTO {t} (p, c, v) VALUES (1, 1, 2147483647)")
    s.execute(f"INSERT INTO {t} (p, c, v) VALUES (1, 2, 1)")
    invalid(s, f"SELECT sum(v) FROM {t} WHERE p = 1", "Sum overflow")
    assert s.execute(f"SELECT sum(CAST(v AS bigint)) FROM {t} WHERE p = 1").one()[0] == 2 ** 31
    invalid(s, f"SELECT sum(tx) FROM {t}", "none of its type signatures match")
    invalid(s, f"SELECT max(min(v)) FROM {t}", "aggeregation of an aggregation")
    invalid(s, f"SELECT * FROM {t} WHERE p = sum((int)4)", "Aggregation")
    invalid(s, f"SELECT sum(v) FROM {t} PER PARTITION LIMIT 1",
            "PER PARTITION LIMIT is not allowed with aggregate queries")


def test_group_by(cql_env, table):
    """test_group_by.py, test_aggregate.py test_count_and_group_by_row,
    select_group_by_test.py testGroupByWithRangeNamesQueryWithoutPaging."""
    s = cql_env.session
    t = table("(a int, b int, c int, d int, PRIMARY KEY (a, b, c))")
    ins = s.prepare(f"INSERT INTO {t} (a, b, c, d) VALUES (?, ?, ?, ?)")
    for a in range(1, 4):
        for b in range(1, 4):
            for c in range(1, 3):
                s.execute(ins, (a, b, c, a + b))
    rows = s.execute(f"SELECT a, b, count(*), max(d) FROM {t} WHERE a = 1 GROUP BY a, b").all()
    assert [tuple(r) for r in rows] == [(1, 1, 2, 2), (1, 2, 2, 3), (1, 3, 2, 4)]
    rows = s.execute(f"SELECT a, count(*) FROM {t} WHERE a IN (1, 2) GROUP BY a").all()
    assert sorted(tuple(r) for r in rows) == [(1, 6), (2, 6)]
    # without aggregates: the first row of each group
    rows = s.execute(f"SELECT a, b, c FROM {t} WHERE a = 2 GROUP BY a, b").all()
    assert [tuple(r) for r in rows] == [(2, 1, 1), (2, 2, 1), (2, 3, 1)]
    rows = s.execute(f"SELECT a, b, count(c) FROM {t} WHERE b IN (1, 2) AND c IN (1, 2) "
                     "GROUP BY a, b PER PARTITION LIMIT 1 ALLOW FILTERING").all()
    assert sorted(tuple(r) for r in rows) == [(1, 1, 2), (2, 1, 2), (3, 1, 2)]
    rows = s.execute(f"SELECT a, b FROM {t} WHERE a = 3 GROUP BY a, b LIMIT 2").all()
    assert [tuple(r) for r in rows] == [(3, 1), (3, 2)]
    # an EQ-restricted key column may be left out
    rows = s.execute(f"SELECT a, c, count(*) FROM {t} WHERE a = 1 AND b = 2 GROUP BY a, c").all()
    assert [tuple(r) for r in rows] == [(1, 1, 1), (1, 2, 1)]
    assert s.execute(f"SELECT a, count(*) FROM {t} WHERE a = 9 GROUP BY a").all() == []
    invalid(s, f"SELECT count(*) FROM {t} GROUP BY b", "out of order")
    invalid(s, f"SELECT count(*) FROM {t} GROUP BY d", "Group by non-primary-key column d")
    invalid(s, f"SELECT count(*) FROM {t} GROUP BY z", "Group by unknown column z")
    invalid(s, f"SELECT count(*) FROM {t} GROUP BY a, c", "out of order")


def test_distinct(cql_env, table):
    """test_distinct.py."""
    s = cql_env.session
    t = table("(p int, c int, v int, st int static, PRIMARY KEY (p, c))")
    for p in range(5):
        for c in range(3):
            s.execute(f"INSERT INTO {t} (p, c, v, st) VALUES ({p}, {c}, {c}, {p * 10})")
    assert sorted(r.p for r in s.execute(f"SELECT DISTINCT p FROM {t}")) == list(range(5))
    assert sorted(tuple(r) for r in s.execute(f"SELECT DISTINCT p, st FROM {t}")) == \
        [(p, p * 10) for p in range(5)]
    assert len(s.execute(f"SELECT DISTINCT p FROM {t} LIMIT 3").all()) == 3
    assert s.execute(f"SELECT DISTINCT p FROM {t} WHERE p = 2").all()[0].p == 2
    invalid(s, f"SELECT DISTINCT p, c FROM {t}", r"must only request partition key columns and/or "
            r"static columns \(not c\)")
    invalid(s, f"SELECT DISTINCT st FROM {t}", r"must request all the partition key columns "
            r"\(missing p\)")
    invalid(s, f"SELECT DISTINCT p FROM {t} WHERE c = 1 ALLOW FILTERING",
            "only supports restriction by partition key")
    invalid(s, f"SELECT DISTINCT p FROM {t} WHERE p = 1 GROUP BY p, c", "SELECT DISTINCT")
    invalid(s, f"SELECT DISTINCT p FROM {t} PER PARTITION LIMIT 1",
            "PER PARTITION LIMIT is not allowed with SELECT DISTINCT queries")


def test_functions_in_the_selection(cql_env, table):
    """test_native_functions.py, test_aggregate.py test_timeuuid."""
    s = cql_env.session
    t = table("(a int, b timeuuid, ts timestamp, bl blob, i int, PRIMARY KEY (a, b))")
    s.execute(f"INSERT INTO {t} (a, b, ts, bl, i) VALUES (0, 13814000-1dd2-11ff-8080-808080808080, "
              "'2020-12-01 10:00:00+0000', 0x00000004, 17)")
    s.execute(f"INSERT INTO {t} (a, b) VALUES (0, 6b1b3620-33fd-11eb-8080-808080808080)")
    rs = s.execute(f"SELECT todate(min(b)), todate(max(b)) FROM {t} WHERE a = 0")
    assert rs.column_names == ["system.todate(system.min(b))", "system.todate(system.max(b))"]
    assert rs.one() == (Date("2020-12-01"), Date("2038-09-06"))
    r = s.execute(f"SELECT tounixtimestamp(ts), totimestamp(todate(ts)), blobasint(bl), "
                  f"intasblob(i), token(a) FROM {t} WHERE a = 0 "
                  "AND b = 13814000-1dd2-11ff-8080-808080808080").one()
    assert r[0] == 1606816800000
    assert r[1] == datetime(2020, 12, 1)
    assert r[2:4] == (4, b"\x00\x00\x00\x11")
    assert r[4] == s.execute(f"SELECT token(a) FROM {t} WHERE a = 0 LIMIT 1").one()[0]
    assert s.execute(f"SELECT token(a) FROM {t} LIMIT 1").column_names == ["system.token(a)"]
    mn = s.execute(f"SELECT mintimeuuid(ts) FROM {t} WHERE a = 0 "
                   "AND b = 13814000-1dd2-11ff-8080-808080808080").one()[0]
    assert mn.time == uuid.UUID("13814000-1dd2-11b2-8080-808080808080").time + \
        1606816800000 * 10000
    invalid(s, f"SELECT mintimeuuid(i) FROM {t}", "of type timestamp")
    invalid(s, f"SELECT blobasint(i) FROM {t}", "cannot be passed as argument 0")
    invalid(s, f"SELECT nosuchfunction(i) FROM {t}", "Unknown function")
    # type hints pick an overload, for literals and bind markers
    with pytest.raises(InvalidRequest, match="Ambiguous"):
        s.prepare(f"INSERT INTO {t} (a, b, ts) VALUES (1, now(), todate(?))")
    ps = s.prepare(f"INSERT INTO {t} (a, b, ts) VALUES (1, now(), totimestamp((date)?))")
    s.execute(ps, (Date(2),))
    assert s.execute(f"SELECT ts FROM {t} WHERE a = 1").one().ts == datetime(1970, 1, 3)
    s.execute(f"INSERT INTO {t} (a, b, bl) VALUES (2, now(), token(1234))")
    assert s.execute(f"SELECT bl FROM {t} WHERE a = 2").one().bl == \
        (8821045555241575141).to_bytes(8, "big")


def test_casts(cql_env, table):
    """cast_fcts_test.py testNumericCastsInSelectionClause, testTimeCastsInSelectionClause,
    testOtherTypeCastsInSelectionClause, testCounterCastsInSelectionClause,
    testInvalidQueries; test_cast_data.py test_cast_column_names."""
    s = cql_env.session
    t = table("(a tinyint PRIMARY KEY, b smallint, c int, d bigint, e float, f double, "
              "g decimal, h varint, i int)")
    s.execute(s.prepare(f"INSERT INTO {t} (a, b, c, d, e, f, g, h) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"),
              (1, 2, 3, 4, 5.2, 6.3, Decimal("6.3"), 4))
    rs = s.execute(f"SELECT CAST(b AS int), CAST(c AS int), CAST(d AS double) FROM {t}")
    assert rs.column_names == ["cast(b as int)", "c", "cast(d as double)"]
    assert tuple(s.execute(f"SELECT CAST(e AS int), CAST(f AS tinyint), CAST(g AS bigint), "
                           f"CAST(h AS smallint), CAST(i AS int) FROM {t}").one()) == (5, 6, 6, 4, None)
    assert tuple(s.execute(f"SELECT CAST(a AS text), CAST(e AS text), CAST(f AS ascii), "
                           f"CAST(g AS text), CAST(h AS varchar) FROM {t}").one()) == \
        ("1", "5.2", "6.3", "6.3", "4")
    r = s.execute(f"SELECT CAST(c AS decimal), CAST(f AS decimal), CAST(g AS double), "
                  f"CAST(d AS varint) FROM {t}").one()
    assert r == (Decimal("3"), Decimal("6.3"), 6.3, 4)
    invalid(s, f"SELECT CAST(a AS boolean) FROM {t}", "cannot be cast to")
    t2 = table("(a timeuuid PRIMARY KEY, b timestamp, c date, d time)")
    when = datetime(2015, 5, 21, 11, 3, 2)
    from cassandra.util import uuid_from_time
    s.execute(s.prepare(f"INSERT INTO {t2} (a, b, c, d) VALUES (?, '2015-05-21 11:03:02+00', "
                        "'2015-05-21', '11:03:02')"), (uuid_from_time(when),))
    assert tuple(s.execute(f"SELECT CAST(a AS timestamp), CAST(b AS date), CAST(c AS timestamp) "
                           f"FROM {t2}").one()) == (when, Date("2015-05-21"), datetime(2015, 5, 21))
    assert tuple(s.execute(f"SELECT CAST(b AS text), CAST(c AS text), CAST(d AS text) FROM {t2}").one()) \
        == ("2015-05-21T11:03:02.000Z", "2015-05-21", "11:03:02.000000000")
    t3 = table("(a int PRIMARY KEY, b counter)")
    s.execute(f"UPDATE {t3} SET b = b + 2 WHERE a = 1")
    assert tuple(s.execute(f"SELECT CAST(b AS tinyint), CAST(b AS double), CAST(b AS text) "
                           f"FROM {t3}").one()) == (2, 2.0, "2")
