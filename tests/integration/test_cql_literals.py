# SPDX-License-Identifier: BSD-3-Clause
"""CQL endpoint: names, keys and literals at ScyllaDB's limits, and ties at
one timestamp as ScyllaDB resolves them, through the Python driver's simple
and prepared statements. Rewritten after ScyllaDB's test/cqlpy/
test_name_limits.py (names given test by test), test_timestamp.py and
cassandra_tests/validation/entities/timestamp_test.py.
"""

import datetime

import pytest

pytest.importorskip("cassandra")

from cassandra import InvalidRequest  # noqa: E402
from cassandra.protocol import SyntaxException  # noqa: E402

from conftest import cql_new_table as table, cql_rows as rows, cql_unique_name  # noqa: E402

# ScyllaDB's schema::NAME_LENGTH today (test/cqlpy/test_name.py: 192 for keyspaces, tables,
# views and indexes); column names are not held to it there (test_column_name_500):
# shardmark keeps them to its own 207 (the fixed buffers names go through)
NAME_MAX_LENGTH = 192
COLUMN_NAME_MAX_LENGTH = 207


def padded_name(length):
    u = cql_unique_name("n")
    return u + "x" * (length - len(u))


def test_table_and_keyspace_name_length(cql_env):
    # test_table_name_length_eq_scylla_limit, test_table_name_length_gt_the_scylla_limit,
    # test_table_name_length_500, test_keyspace_name_length_eq_scylla_limit,
    # test_keyspace_name_length_gt_than_scylla_limit, test_column_name_length_*
    s, ks = cql_env.session, cql_env.ks
    name = padded_name(NAME_MAX_LENGTH)
    s.execute(f"CREATE TABLE {ks}.{name} (p int PRIMARY KEY, x int)")
    s.execute(f"INSERT INTO {ks}.{name} (p, x) VALUES (1, 1)")
    assert rows(s, f"SELECT * FROM {ks}.{name}") == [(1, 1)]
    s.execute(f"DROP TABLE {ks}.{name}")
    for n in (NAME_MAX_LENGTH + 1, 500):
        long = padded_name(n)
        with pytest.raises(InvalidRequest, match=long):
            s.execute(f"CREATE TABLE {ks}.{long} (p int PRIMARY KEY, x int)")
    kname = padded_name(NAME_MAX_LENGTH)
    s.execute(f"CREATE KEYSPACE {kname} WITH replication = {{'class': 'SimpleStrategy', "
              "'replication_factor': 1}")
    s.execute(f"DROP KEYSPACE {kname}")
    long = padded_name(NAME_MAX_LENGTH + 1)
    with pytest.raises(InvalidRequest, match=long):
        s.execute(f"CREATE KEYSPACE {long} WITH replication = {{'class': 'SimpleStrategy', "
                  "'replication_factor': 1}")
    col = padded_name(COLUMN_NAME_MAX_LENGTH)
    table(cql_env, f"(p int PRIMARY KEY, {col} int)")
    col = padded_name(COLUMN_NAME_MAX_LENGTH + 1)
    with pytest.raises(InvalidRequest, match=col):
        table(cql_env, f"(p int PRIMARY KEY, {col} int)")


def test_name_characters(cql_env):
    # test_table_name_contains_disallowed_character(_in_quotes),
    # test_table_name_starts_with_underscore(_in_quotes)
    s, ks = cql_env.session, cql_env.ks
    with pytest.raises(SyntaxException):
        s.execute(f"CREATE TABLE {ks}._table_name_starting_with_underscore (p int PRIMARY KEY)")
    s.execute(f'CREATE TABLE {ks}."_table_name_starting_with_underscore" (p int PRIMARY KEY)')
    with pytest.raises(InvalidRequest, match='"table-name-with-dash"'):
        s.execute(f'CREATE TABLE {ks}."table-name-with-dash" (p int PRIMARY KEY)')


def test_empty_strings_in_compound_partition_key(cql_env):
    # empty_values_test.py: only a single-column key may not be empty
    s = cql_env.session
    t = table(cql_env, "(a text, b text, v int, PRIMARY KEY ((a, b)))")
    s.execute(f"INSERT INTO {t} (a, b, v) VALUES ('', '', 1)")
    p = s.prepare(f"INSERT INTO {t} (a, b, v) VALUES (?, ?, ?)")
    s.execute(p, ["", "x", 2])
    assert rows(s, f"SELECT v FROM {t} WHERE a = '' AND b = ''") == [(1,)]
    assert sorted(rows(s, f"SELECT * FROM {t}")) == [("", "", 1), ("", "x", 2)]
    one = table(cql_env, "(a text PRIMARY KEY, v int)")
    with pytest.raises(InvalidRequest, match="Key may not be empty"):
        s.execute(f"INSERT INTO {one} (a, v) VALUES ('', 1)")


def test_timestamps_with_zone_names(cql_env):
    s = cql_env.session
    t = table(cql_env, "(k int PRIMARY KEY, t timestamp)")
    want = datetime.datetime(2015, 5, 3, 13, 30, 54)
    for i, lit in enumerate(["2015-05-03 13:30:54 UTC", "2015-05-03 13:30:54 GMT",
                             "2015-05-03 15:30:54 GMT+02:00", "2015-05-03 13:30:54Z",
                             "2015-05-03 13:30:54 +0000"]):
        s.execute(f"INSERT INTO {t} (k, t) VALUES ({i}, '{lit}')")
        assert rows(s, f"SELECT t FROM {t} WHERE k = {i}") == [(want,)]


@pytest.mark.parametrize("lit, months, days, nanos", [
    ("P1Y2M", 14, 0, 0),
    ("P0001-02-03T04:05:06", 14, 3, 14706000000000),
    ("P2W", 0, 14, 0),
    ("PT1H30M", 0, 0, 5400000000000),
    ("1y2mo3w4d5h6m7s8ms9us10ns", 14, 25, 18367008009010),
])
def test_durations(cql_env, lit, months, days, nanos):
    s = cql_env.session
    t = table(cql_env, "(k int PRIMARY KEY, d duration)")
    s.execute(f"INSERT INTO {t} (k, d) VALUES (1, {lit})")
    d = s.execute(f"SELECT d FROM {t} WHERE k = 1").one()[0]
    assert (d.months, d.days, d.nanoseconds) == (months, days, nanos)


def test_same_timestamp_ties(cql_env):
    # ScyllaDB's compare_atomic_cell_for_merge(): tombstone > expiring > live,
    # then the greater value
    s = cql_env.session
    t = table(cql_env, "(k int PRIMARY KEY, v int)")
    s.execute(f"INSERT INTO {t} (k, v) VALUES (1, 1) USING TIMESTAMP 10")
    s.execute(f"INSERT INTO {t} (k, v) VALUES (1, 2) USING TIMESTAMP 10")
    s.execute(f"INSERT INTO {t} (k, v) VALUES (1, 1) USING TIMESTAMP 10")
    assert rows(s, f"SELECT v FROM {t} WHERE k = 1") == [(2,)]
    s.execute(f"INSERT INTO {t} (k, v) VALUES (2, 5) USING TIMESTAMP 10")
    s.execute(f"INSERT INTO {t} (k, v) VALUES (2, 3) USING TIMESTAMP 10 AND TTL 1000")
    v, ttl = s.execute(f"SELECT v, ttl(v) FROM {t} WHERE k = 2").one()
    assert v == 3 and 0 < ttl <= 1000
    s.execute(f"DELETE v FROM {t} USING TIMESTAMP 10 WHERE k = 2")
    assert rows(s, f"SELECT v FROM {t} WHERE k = 2") == [(None,)]
