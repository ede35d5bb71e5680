# SPDX-License-Identifier: BSD-3-Clause
"""CQL endpoint: SELECT JSON, toJson(), INSERT JSON (DEFAULT NULL and
DEFAULT UNSET) and fromJson(), through the Python driver's simple and
prepared statements, with ScyllaDB's JSON forms (types/json_utils.cc).
Rewritten after ScyllaDB's test/cqlpy/test_json.py and cassandra_tests/
validation/entities/json_test.py (names given test by test).
"""

import json

import pytest

pytest.importorskip("cassandra")

from cassandra import InvalidRequest  # noqa: E402

from conftest import cql_new_table as table, cql_rows as rows  # noqa: E402


def one_json(s, q, *args):
    r = s.execute(q, *args).one()
    return json.loads(r[0])


def test_select_json_types(cql_env):
    # json_test.py testSelectJsonSyntax / testToJsonFct (the forms of each type)
    s = cql_env.session
    t = table(cql_env, '(k int PRIMARY KEY, "Cap" text, m map<int, text>, st set<text>, '
              "l list<double>, f float, b blob, ts timestamp, u uuid, tu tuple<int, text>, "
              "fm frozen<map<text, int>>, bo boolean, dec decimal, vi varint, d date, v int)")
    s.execute(f'INSERT INTO {t} (k, "Cap", m, st, l, f, b, ts, u, tu, fm, bo, dec, vi, d) '
              "VALUES (1, 'a\"b', {1: 'x', 2: 'y'}, {'p', 'q'}, [1.5], 1.25, 0xcafe, "
              "'2015-05-03 13:30:54.234Z', 01234567-89ab-cdef-0123-456789abcdef, (1, 'z'), "
              "{'a': 1}, true, 1.50, 12345678901234567890, '2015-05-03')")
    r = s.execute(f"SELECT JSON * FROM {t}")
    assert [c for c in r.column_names] == ["[json]"]
    got = json.loads(r.one()[0])
    assert got == {"k": 1, '"Cap"': 'a"b', "m": {"1": "x", "2": "y"}, "st": ["p", "q"],
                   "l": [1.5], "f": 1.25, "b": "0xcafe", "ts": "2015-05-03 13:30:54.234Z",
                   "u": "01234567-89ab-cdef-0123-456789abcdef", "tu": [1, "z"],
                   "fm": {"a": 1}, "bo": True, "dec": 1.5, "vi": 12345678901234567890,
                   "d": "2015-05-03", "v": None}
    assert one_json(s, f"SELECT JSON k, m AS mm FROM {t} WHERE k = 1") == \
        {"k": 1, "mm": {"1": "x", "2": "y"}}
    p = s.prepare(f"SELECT JSON k, v FROM {t} WHERE k = ?")
    assert one_json(s, p, [1]) == {"k": 1, "v": None}
    assert one_json(s, f"SELECT JSON count(*) FROM {t}") == {"count": 1}


def test_to_json(cql_env):
    # json_test.py testToJsonFct
    s = cql_env.session
    t = table(cql_env, "(k int PRIMARY KEY, m map<int, text>, v int, tx text)")
    s.execute(f"INSERT INTO {t} (k, m, v, tx) VALUES (1, {{1: 'x'}}, 5, 'q')")
    r = s.execute(f"SELECT toJson(m), toJson(v), toJson(tx), toJson(k) AS kk FROM {t}")
    assert r.column_names[:2] == ["system.tojson(m)", "system.tojson(v)"]
    assert tuple(r.one()) == ('{"1": "x"}', "5", '"q"', "1")
    with pytest.raises(InvalidRequest):
        s.execute(f"SELECT toJson(m, v) FROM {t}")


def test_insert_json(cql_env):
    # json_test.py testInsertJsonSyntax, testInsertJsonSyntaxDefaultUnset,
    # testInsertJsonSyntaxWithNonNativeMapKeys (frozen keys), test_json.py
    # test_insert_json_null_key (the refusals)
    s = cql_env.session
    t = table(cql_env, '(k int PRIMARY KEY, "Cap" text, m map<int, text>, st set<text>, '
              "l list<double>, b blob, ts timestamp, tu tuple<int, text>, "
              "fk map<frozen<list<int>>, int>, v int)")
    s.execute(f"INSERT INTO {t} JSON '{{\"k\": 1, \"\\\"Cap\\\"\": \"c\", \"m\": {{\"2\": \"y\", "
              "\"1\": \"x\"}, \"st\": [\"q\", \"p\", \"q\"], \"l\": [1.5, 2], \"b\": \"0xcafe\", "
              "\"ts\": \"2015-05-03 13:30:54.234Z\", \"tu\": [1, \"z\"], "
              "\"fk\": {\"[1, 2]\": 3}, \"v\": 7}'")
    r = s.execute(f'SELECT k, "Cap", m, st, l, b, tu, fk, v FROM {t} WHERE k = 1').one()
    assert tuple(r[:7]) + (r[8],) == (1, "c", {1: "x", 2: "y"}, {"p", "q"}, [1.5, 2.0],
                                      b"\xca\xfe", (1, "z"), 7)
    assert [(list(k), v) for k, v in r.fk.items()] == [([1, 2], 3)]
    # a column the object lacks: null, or left alone with DEFAULT UNSET
    s.execute(f"INSERT INTO {t} JSON '{{\"k\": 1, \"v\": 8}}' DEFAULT UNSET")
    assert rows(s, f"SELECT v, m FROM {t} WHERE k = 1") == [(8, {1: "x", 2: "y"})]
    s.execute(f"INSERT INTO {t} JSON '{{\"k\": 1, \"v\": 9}}' DEFAULT NULL")
    assert rows(s, f"SELECT v, m FROM {t} WHERE k = 1") == [(9, None)]
    # keys are case-insensitive unless quoted; numbers may come as strings
    s.execute(f"INSERT INTO {t} JSON '{{\"K\": 2, \"V\": \"12\"}}'")
    assert rows(s, f"SELECT v FROM {t} WHERE k = 2") == [(12,)]
    p = s.prepare(f"INSERT INTO {t} JSON ?")
    s.execute(p, [json.dumps({"k": 3, "st": ["a"], "v": None})])
    assert rows(s, f"SELECT st, v FROM {t} WHERE k = 3") == [({"a"}, None)]
    r = s.execute(f"INSERT INTO {t} JSON '{{\"k\": 3, \"v\": 1}}' IF NOT EXISTS").one()
    assert not r[0]
    for bad, msg in [('{"k": 4, "nope": 9}', "JSON values map contains unrecognized column: nope"),
                     ('{"k": "x"}', "Unable to make int from"),
                     ('[1]', "not a JSON object"),
                     ('garbage', "Could not decode JSON string"),
                     ('{"v": 1}', "Some partition key parts are missing: k"),
                     ('{"k": 4, "b": "cafe"}', "missing 0x prefix")]:
        with pytest.raises(InvalidRequest, match=msg):
            s.execute(f"INSERT INTO {t} JSON '{bad}'")
    # what goes in comes back out
    assert one_json(s, f"SELECT JSON k, m, st FROM {t} WHERE k = 2") == \
        {"k": 2, "m": None, "st": None}


def test_from_json(cql_env):
    # json_test.py testFromJsonFct
    s = cql_env.session
    t = table(cql_env, "(k int PRIMARY KEY, m map<int, text>, v int, tx text, l list<int>)")
    s.execute(f"INSERT INTO {t} (k, m, v, tx) VALUES (1, fromJson('{{\"1\": \"x\"}}'), "
              "fromJson('5'), fromJson('\"abc\"'))")
    assert rows(s, f"SELECT m, v, tx FROM {t} WHERE k = 1") == [({1: "x"}, 5, "abc")]
    s.execute(f"UPDATE {t} SET v = fromJson('null') WHERE k = 1")
    assert rows(s, f"SELECT v FROM {t} WHERE k = 1") == [(None,)]
    p = s.prepare(f"UPDATE {t} SET l = fromJson(?) WHERE k = ?")
    s.execute(p, ["[1, 2]", 1])
    assert rows(s, f"SELECT l FROM {t} WHERE k = 1") == [([1, 2],)]
    with pytest.raises(InvalidRequest, match="Unable to make int"):
        s.execute(f"INSERT INTO {t} (k, v) VALUES (2, fromJson('\"x\"'))")


def test_insert_json_hostile(cql_env):
    """Deep nesting, many keys and broken JSON are refused with a message,
    and the server goes on serving."""
    s = cql_env.session
    t = table(cql_env, "(k int PRIMARY KEY, l list<frozen<list<int>>>, v int)")
    deep = "[" * 20000 + "]" * 20000
    for bad in ['{"k": 1, "l": ' + deep + '}', '{"k": 1, "v": [1]}', '{"k": 1, "v": {}}',
                '{"k": 1', '{"k": 1, "l": [[1, "x"]]}',
                "{" + ", ".join(f'"c{i}": {i}' for i in range(20000)) + "}"]:
        with pytest.raises(InvalidRequest):
            s.execute(f"INSERT INTO {t} JSON %s", [bad])
    s.execute(f"INSERT INTO {t} JSON %s", ['{"k": 1, "l": [[1, 2], []]}'])
    assert rows(s, f"SELECT l FROM {t} WHERE k = 1") == [([[1, 2], []],)]
