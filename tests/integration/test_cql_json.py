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
