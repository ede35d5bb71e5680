# SPDX-License-Identifier: BSD-3-Clause
"""CQL endpoint: static columns written, read, deleted and conditioned
without a clustering key (INSERT of static columns only, a partition with
only its static row, DISTINCT, LIMIT, LWT on statics), through the Python
driver's simple and prepared statements. Rewritten after ScyllaDB's
test/cqlpy/cassandra_tests/validation/entities/static_columns_test.py and
operations/insert_update_if_condition_statics_test.py (names given test by
test).
"""

import pytest

pytest.importorskip("cassandra")

from cassandra import InvalidRequest  # noqa: E402

from conftest import cql_new_table as table, cql_rows as rows  # noqa: E402


def test_static_columns(cql_env):
    # testStaticColumns (without the flushes)
    s = cql_env.session
    t = table(cql_env, "(k int, p int, s int static, v int, PRIMARY KEY (k, p))")
    s.execute(f"INSERT INTO {t} (k, s) VALUES (0, 42)")
    assert rows(s, f"SELECT * FROM {t}") == [(0, None, 42, None)]
    r = s.execute(f"SELECT s, writetime(s) FROM {t} WHERE k = 0").one()
    assert r[0] == 42 and r[1] > 0
    ins = s.prepare(f"INSERT INTO {t} (k, p, s, v) VALUES (?, ?, ?, ?)")
    s.execute(ins, [0, 0, 12, 0])
    s.execute(ins, [0, 1, 24, 1])
    assert rows(s, f"SELECT * FROM {t}") == [(0, 0, 24, 0), (0, 1, 24, 1)]
    assert rows(s, f"SELECT * FROM {t} WHERE k = 0 AND p = 0") == [(0, 0, 24, 0)]
    assert rows(s, f"SELECT * FROM {t} WHERE k = 0 AND p IN (0, 1)") == \
        [(0, 0, 24, 0), (0, 1, 24, 1)]
    assert rows(s, f"SELECT p, v FROM {t} WHERE k = 0 AND p = 1") == [(1, 1)]
    assert rows(s, f"SELECT DISTINCT s FROM {t} WHERE k = 0") == [(24,)]
    assert rows(s, f"SELECT s FROM {t} WHERE k = 0") == [(24,), (24,)]
    assert rows(s, f"SELECT s, v FROM {t} WHERE k = 0 AND p = 1") == [(24, 1)]
    s.execute(f"DELETE FROM {t} WHERE k = 0 AND p = 0")
    assert rows(s, f"SELECT * FROM {t}") == [(0, 1, 24, 1)]
    s.execute(f"DELETE s FROM {t} WHERE k = 0")
    assert rows(s, f"SELECT * FROM {t}") == [(0, 1, None, 1)]
    s.execute(f"ALTER TABLE {t} ADD s2 int static")
    assert rows(s, f"SELECT * FROM {t}") == [(0, 1, None, None, 1)]
    s.execute(f"INSERT INTO {t} (k, p, s2, v) VALUES (0, 2, 42, 2)")
    assert rows(s, f"SELECT * FROM {t}") == [(0, 1, None, 42, 1), (0, 2, None, 42, 2)]
    s.execute(f"ALTER TABLE {t} DROP s2")
    assert rows(s, f"SELECT * FROM {t}") == [(0, 1, None, 1), (0, 2, None, 2)]


def test_static_only_insert_prepared(cql_env):
    s = cql_env.session
    t = table(cql_env, "(k int, p int, s int static, v int, PRIMARY KEY (k, p))")
    p = s.prepare(f"INSERT INTO {t} (k, s) VALUES (?, ?)")
    s.execute(p, [1, 10])
    assert rows(s, f"SELECT k, p, s, v FROM {t} WHERE k = 1") == [(1, None, 10, None)]
    with pytest.raises(InvalidRequest, match="Some clustering key parts are missing: p"):
        s.execute(f"INSERT INTO {t} (k, v) VALUES (1, 1)")
    with pytest.raises(InvalidRequest, match="Some clustering key parts are missing: p"):
        s.execute(f"INSERT INTO {t} (k, s, v) VALUES (1, 1, 1)")


def test_static_columns_with_distinct(cql_env):
    # testStaticColumnsWithDistinct (without the paging part)
    s = cql_env.session
    t = table(cql_env, "(k int, p int, s int static, PRIMARY KEY (k, p))")
    s.execute(f"INSERT INTO {t} (k, p) VALUES (1, 1)")
    s.execute(f"INSERT INTO {t} (k, p) VALUES (1, 2)")
    assert rows(s, f"SELECT k, s FROM {t}") == [(1, None), (1, None)]
    assert rows(s, f"SELECT DISTINCT k, s FROM {t}") == [(1, None)]
    assert rows(s, f"SELECT DISTINCT s FROM {t} WHERE k = 1") == [(None,)]
    assert rows(s, f"SELECT DISTINCT s FROM {t} WHERE k = 2") == []
    s.execute(f"INSERT INTO {t} (k, p, s) VALUES (2, 1, 3)")
    s.execute(f"INSERT INTO {t} (k, p) VALUES (2, 2)")
    assert sorted(rows(s, f"SELECT DISTINCT k, s FROM {t}"), key=str) == [(1, None), (2, 3)]
    assert rows(s, f"SELECT DISTINCT s FROM {t} WHERE k = 2") == [(3,)]
    with pytest.raises(InvalidRequest):
        s.execute(f"SELECT DISTINCT s FROM {t}")


def test_static_columns_with_limit_and_empty_clustering(cql_env):
    # testStaticColumnsWithLimit, testStaticColumnsWithEmptyClustering,
    # testAlterClusteringAndStatic
    s = cql_env.session
    t = table(cql_env, "(k int, s int static, v int, PRIMARY KEY (k, v))")
    s.execute(f"INSERT INTO {t} (k, s) VALUES (0, 42)")
    for i in range(4):
        s.execute(f"INSERT INTO {t} (k, v) VALUES (0, %s)", [i])
    assert rows(s, f"SELECT * FROM {t} WHERE k = 0 LIMIT 1") == [(0, 0, 42)]
    assert rows(s, f"SELECT * FROM {t} WHERE k = 0 LIMIT 3") == \
        [(0, 0, 42), (0, 1, 42), (0, 2, 42)]
    e = table(cql_env, "(pkey text, ckey text, value text, static_value text static, "
              "PRIMARY KEY (pkey, ckey))")
    s.execute(f"INSERT INTO {e} (pkey, static_value) VALUES ('partition1', 'static value')")
    s.execute(f"INSERT INTO {e} (pkey, ckey, value) VALUES ('partition1', '', 'value')")
    assert rows(s, f"SELECT * FROM {e}") == [("partition1", "", "static value", "value")]
    b = table(cql_env, "(bar int, PRIMARY KEY (bar))")
    with pytest.raises(InvalidRequest):
        s.execute(f"ALTER TABLE {b} ADD bar2 text static")


def test_static_conditions(cql_env):
    # insert_update_if_condition_statics_test.py: conditions on static
    # columns with only the partition key given
    s = cql_env.session
    t = table(cql_env, "(k int, c int, s int static, v int, PRIMARY KEY (k, c))")
    assert s.execute(f"INSERT INTO {t} (k, s) VALUES (1, 1) IF NOT EXISTS").one()[0]
    r = s.execute(f"INSERT INTO {t} (k, s) VALUES (1, 2) IF NOT EXISTS").one()
    assert not r[0] and r.s == 1
    assert s.execute(f"UPDATE {t} SET s = 3 WHERE k = 1 IF s = 1").one()[0]
    assert not s.execute(f"UPDATE {t} SET s = 4 WHERE k = 1 IF s = 1").one()[0]
    assert s.execute(f"UPDATE {t} SET s = 5, v = 5 WHERE k = 1 AND c = 1 IF s = 3").one()[0]
    assert rows(s, f"SELECT * FROM {t} WHERE k = 1") == [(1, 1, 5, 5)]
    assert s.execute(f"DELETE s FROM {t} WHERE k = 1 IF s = 5").one()[0]
    assert rows(s, f"SELECT * FROM {t} WHERE k = 1") == [(1, 1, None, 5)]
