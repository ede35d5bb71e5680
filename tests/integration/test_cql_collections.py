# SPDX-License-Identifier: BSD-3-Clause
"""CQL endpoint: collection element and slice selection (m[k], s[x], l[i],
m[a..b]), DELETE of a set's element, CONTAINS and CONTAINS KEY in IF
conditions, and UNLOGGED batches of counter updates, through the Python
driver's simple and prepared statements. Rewritten after ScyllaDB's
test/cqlpy/test_select_collection_element.py, cassandra_tests/validation/
entities/collections_test.py and operations/
insert_update_if_condition_collections_test.py (names given test by test).
"""

import pytest

pytest.importorskip("cassandra")

from cassandra import InvalidRequest  # noqa: E402
from cassandra.query import BatchStatement, BatchType  # noqa: E402

from conftest import cql_new_table as table, cql_rows as rows  # noqa: E402


def test_map_and_set_element(cql_env):
    # test_basic_int_key_selection, test_basic_string_key_selection,
    # test_subscript_with_alias, test_frozen_map_subscript, test_set_subscript,
    # test_null_map, test_null_subscript
    s = cql_env.session
    t = table(cql_env, "(p int PRIMARY KEY, m map<int, int>, tm map<text, int>, "
              "fm frozen<map<int, int>>, st set<int>)")
    s.execute(f"INSERT INTO {t} (p, m, tm, fm, st) VALUES (1, {{1: 10, 2: 20}}, "
              "{'aa': 10, 'ab': 20}, {1: 10, 2: 20}, {10, 20})")
    assert rows(s, f"SELECT m[1], m[2], m[3] FROM {t} WHERE p = 1") == [(10, 20, None)]
    assert rows(s, f"SELECT tm['aa'], tm['ac'] FROM {t} WHERE p = 1") == [(10, None)]
    assert rows(s, f"SELECT fm[2] FROM {t} WHERE p = 1") == [(20,)]
    assert rows(s, f"SELECT st[0], st[10], st[20] FROM {t} WHERE p = 1") == [(None, 10, 20)]
    assert rows(s, f"SELECT m[null] FROM {t} WHERE p = 1") == [(None,)]
    r = s.execute(f"SELECT m[1] AS m1, m[2] AS m2 FROM {t} WHERE p = 1").one()
    assert (r.m1, r.m2) == (10, 20)
    p = s.prepare(f"SELECT m[2], st[10] FROM {t} WHERE p = ?")
    assert rows(s, p, [1]) == [(20, 10)]
    s.execute(f"INSERT INTO {t} (p) VALUES (2)")
    assert rows(s, f"SELECT m[1] FROM {t} WHERE p = 2") == [(None,)]
    with pytest.raises(InvalidRequest):
        s.execute(f"SELECT m['x'] FROM {t} WHERE p = 1")
    with pytest.raises(InvalidRequest, match="not a"):
        s.execute(f"SELECT p[2] FROM {t}")


def test_prepared_subscripts(cql_env):
    # test_select_collection_element.py test_prepare_key
    s = cql_env.session
    t = table(cql_env, "(p int PRIMARY KEY, m map<int, int>, st set<text>, l list<int>)")
    s.execute(f"INSERT INTO {t} (p, m, st, l) VALUES (1, {{1: 10, 2: 20}}, {{'a', 'b'}}, "
              "[5, 6])")
    p = s.prepare(f"SELECT m[?] FROM {t} WHERE p = ?")
    assert rows(s, p, [1, 1]) == [(10,)]
    assert rows(s, p, [3, 1]) == [(None,)]
    assert rows(s, p, [None, 1]) == [(None,)]
    p = s.prepare(f"SELECT m[:x1], m[:x2] FROM {t} WHERE p = :key")
    assert rows(s, p, {"x1": 2, "x2": 1, "key": 1}) == [(20, 10)]
    p = s.prepare(f"SELECT st[?], l[?], m[?..?] FROM {t} WHERE p = 1")
    assert rows(s, p, ["b", 1, 2, 9]) == [("b", 6, {2: 20})]


def test_list_element(cql_env):
    # test_list_subscript (ScyllaDB's, not Cassandra's)
    s = cql_env.session
    t = table(cql_env, "(p int PRIMARY KEY, l list<int>)")
    s.execute(f"INSERT INTO {t} (p, l) VALUES (1, [10, 20])")
    assert rows(s, f"SELECT l[0], l[1], l[2], l[10] FROM {t} WHERE p = 1") == \
        [(10, 20, None, None)]


def test_slices(cql_env):
    # collections_test.py testMapOperation / testSetOperation (the slices)
    s = cql_env.session
    t = table(cql_env, "(k int PRIMARY KEY, m map<text, int>, st set<text>)")
    s.execute(f"INSERT INTO {t} (k, m, st) VALUES (0, {{'a': 1, 'b': 2, 'c': 3}}, "
              "{'a', 'b', 'c'})")
    r = rows(s, f"SELECT m['a'..'b'], m['b'..], m[..'a'], m['d'..'e'], st['b'..'c'] "
             f"FROM {t} WHERE k = 0")
    assert r == [({"a": 1, "b": 2}, {"b": 2, "c": 3}, {"a": 1}, None, {"b", "c"})]


def test_delete_set_element(cql_env):
    s = cql_env.session
    t = table(cql_env, "(k int PRIMARY KEY, st set<int>, v int, f frozen<set<int>>)")
    s.execute(f"INSERT INTO {t} (k, st, v, f) VALUES (1, {{1, 2, 3}}, 1, {{1}})")
    s.execute(f"DELETE st[2] FROM {t} WHERE k = 1")
    p = s.prepare(f"DELETE st[?] FROM {t} WHERE k = ?")
    s.execute(p, [3, 1])
    assert rows(s, f"SELECT st FROM {t} WHERE k = 1") == [({1},)]
    with pytest.raises(InvalidRequest, match="Invalid deletion operation for non collection "
                       "column v"):
        s.execute(f"DELETE v[1] FROM {t} WHERE k = 1")
    with pytest.raises(InvalidRequest, match="Invalid deletion operation for frozen collection "
                       "column f"):
        s.execute(f"DELETE f[1] FROM {t} WHERE k = 1")


def test_contains_conditions(cql_env):
    # insert_update_if_condition_collections_test.py testContainsConditions
    s = cql_env.session
    t = table(cql_env, "(k int PRIMARY KEY, m map<text, int>, st set<int>, l list<int>, v int)")
    s.execute(f"INSERT INTO {t} (k, m, st, l, v) VALUES (0, {{'a': 1}}, {{1, 2}}, [5], 0)")
    assert s.execute(f"UPDATE {t} SET v = 1 WHERE k = 0 IF st CONTAINS 2").one()[0]
    assert not s.execute(f"UPDATE {t} SET v = 2 WHERE k = 0 IF st CONTAINS 7").one()[0]
    assert s.execute(f"UPDATE {t} SET v = 3 WHERE k = 0 IF m CONTAINS KEY 'a' "
                     "AND m CONTAINS 1 AND l CONTAINS 5").one()[0]
    p = s.prepare(f"UPDATE {t} SET v = ? WHERE k = 0 IF m CONTAINS KEY ?")
    assert not s.execute(p, [4, "z"]).one()[0]
    assert s.execute(p, [5, "a"]).one()[0]
    assert rows(s, f"SELECT v FROM {t} WHERE k = 0") == [(5,)]
    with pytest.raises(InvalidRequest, match="Cannot use CONTAINS KEY on non-map column st"):
        s.execute(f"UPDATE {t} SET v = 6 WHERE k = 0 IF st CONTAINS KEY 1")
    with pytest.raises(InvalidRequest, match="Cannot use CONTAINS on non-collection column v"):
        s.execute(f"UPDATE {t} SET v = 6 WHERE k = 0 IF v CONTAINS 1")


def test_unlogged_counter_batch(cql_env):
    # batch_statement.cc validate(): an UNLOGGED batch of counters is accepted
    s = cql_env.session
    t = table(cql_env, "(k int PRIMARY KEY, n counter)")
    n = table(cql_env, "(k int PRIMARY KEY, v int)")
    s.execute(f"BEGIN UNLOGGED BATCH UPDATE {t} SET n = n + 1 WHERE k = 1; "
              f"UPDATE {t} SET n = n + 2 WHERE k = 2; APPLY BATCH")
    b = BatchStatement(batch_type=BatchType.UNLOGGED)
    b.add(s.prepare(f"UPDATE {t} SET n = n + ? WHERE k = ?"), [5, 1])
    s.execute(b)
    assert sorted(rows(s, f"SELECT k, n FROM {t}")) == [(1, 6), (2, 2)]
    with pytest.raises(InvalidRequest, match="Counter and non-counter mutations cannot exist "
                       "in the same batch"):
        s.execute(f"BEGIN UNLOGGED BATCH UPDATE {t} SET n = n + 1 WHERE k = 1; "
                  f"INSERT INTO {n} (k, v) VALUES (1, 1); APPLY BATCH")
    with pytest.raises(InvalidRequest, match="Cannot include a counter statement in a logged "
                       "batch"):
        s.execute(f"BEGIN BATCH UPDATE {t} SET n = n + 1 WHERE k = 1; APPLY BATCH")


def test_writetime_and_ttl_of_elements(cql_env):
    # test_select_collection_element.py test_writetime_map_element,
    # test_writetime_map_element_nulls, test_writetime_map_element_null_subscript,
    # test_ttl_map_element, test_ttl_map_element_nulls
    s = cql_env.session
    t = table(cql_env, "(p int PRIMARY KEY, m map<int, int>, st set<text>)")
    s.execute(f"INSERT INTO {t} (p, m, st) VALUES (1, {{1: 10, 2: 20}}, {{'a'}}) "
              "USING TIMESTAMP 1000")
    s.execute(f"UPDATE {t} USING TIMESTAMP 2000 SET m = m + {{2: 30}} WHERE p = 1")
    s.execute(f"UPDATE {t} USING TTL 3600 SET m = m + {{3: 30}} WHERE p = 1")
    r = s.execute(f"SELECT WRITETIME(m[1]), WRITETIME(m[2]), WRITETIME(m[99]), "
                  f"WRITETIME(st['a']), WRITETIME(m[null]), TTL(m[1]), TTL(m[3]) "
                  f"FROM {t} WHERE p = 1").one()
    assert tuple(r[:6]) == (1000, 2000, None, 1000, None, None)
    assert 3500 < r[6] <= 3600
    assert rows(s, f"SELECT WRITETIME(m[1]) FROM {t} WHERE p = 5") == []
    s.execute(f"INSERT INTO {t} (p) VALUES (2)")
    assert rows(s, f"SELECT WRITETIME(m[1]), TTL(m[1]) FROM {t} WHERE p = 2") == [(None, None)]
    with pytest.raises(InvalidRequest, match="non-frozen map or set"):
        s.execute(f"SELECT WRITETIME(m[1..2]) FROM {t} WHERE p = 1")
    # test_writetime_ttl_whole_collection_forbidden, test_writetime_subscript_on_wrong_type,
    # test_ttl_subscript_on_wrong_type, test_writetime_ttl_list_element_forbidden,
    # test_writetime_frozen_map_elements_pk, test_writetime_mixed_map_and_map_element
    for q in ["WRITETIME(m)", "TTL(st)"]:
        with pytest.raises(InvalidRequest, match="non-frozen collection"):
            s.execute(f"SELECT {q} FROM {t} WHERE p = 1")
    o = table(cql_env, "(p int PRIMARY KEY, v int, l list<int>, fm frozen<map<int, int>>)")
    for q, msg in [("WRITETIME(v[3])", " v "), ("TTL(v[3])", " v "),
                   ("WRITETIME(l[0])", "subscript"), ("TTL(l[0])", "subscript"),
                   ("WRITETIME(fm[1])", "subscript")]:
        with pytest.raises(InvalidRequest, match=msg):
            s.execute(f"SELECT {q} FROM {o}")
    k = table(cql_env, "(pk frozen<map<int, int>> PRIMARY KEY)")
    with pytest.raises(InvalidRequest, match="primary key"):
        s.execute(f"SELECT WRITETIME(pk[1]) FROM {k}")
    assert rows(s, f"SELECT m, m[1], m[2], WRITETIME(m[2]), WRITETIME(m[1]) FROM {t} "
                "WHERE p = 1") == [({1: 10, 2: 30, 3: 30}, 10, 30, 2000, 1000)]


def test_nested_subscripts_and_fields(cql_env):
    # test_select_collection_element.py test_nested_key_selection,
    # test_subscript_and_field, test_field_and_subscript,
    # test_field_and_subscript_and_field
    s, ks = cql_env.session, cql_env.ks
    t1, t2, t3 = (f"{ks}.{n}" for n in ("nt_b", "nt_am", "nt_a"))
    s.execute(f"CREATE TYPE IF NOT EXISTS {t1} (b int)")
    s.execute(f"CREATE TYPE IF NOT EXISTS {t2} (a frozen<map<int, frozen<nt_b>>>)")
    s.execute(f"CREATE TYPE IF NOT EXISTS {t3} (a int)")
    t = table(cql_env, "(p int PRIMARY KEY, m map<text, frozen<map<text, int>>>, "
              "mu map<int, frozen<nt_a>>, u nt_am, l list<frozen<list<int>>>)")
    s.execute(f"INSERT INTO {t} (p, m, mu, u, l) VALUES (1, {{'1': {{'a': 10, 'b': 11}}, "
              "'2': {'a': 12}}, {1: {a: 10}}, {a: {1: {b: 10}}}, [[1, 2], [3]])")
    assert rows(s, f"SELECT m['1']['a'], m['1']['b'], m['2']['a'], m['2']['b'] FROM {t} "
                "WHERE p = 1") == [(10, 11, 12, None)]
    assert rows(s, f"SELECT mu[1].a, u.a[1].b, l[0][1] FROM {t} WHERE p = 1") == [(10, 10, 2)]
    with pytest.raises(InvalidRequest, match="has no field z"):
        s.execute(f"SELECT mu[1].z FROM {t} WHERE p = 1")
