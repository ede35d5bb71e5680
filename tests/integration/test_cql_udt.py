# SPDX-License-Identifier: BSD-3-Clause
"""CQL endpoint: user-defined types and tuples, through the DataStax Python
driver (simple and prepared statements) and the Node.js driver.

CREATE / ALTER (ADD, RENAME) / DROP TYPE with ScyllaDB's checks and
messages; frozen and non-frozen UDT columns, UDTs inside collections, tuples
and other UDTs; field update (SET u.f = ?), field deletion, field selection
(SELECT u.f, u.g.h), WRITETIME and TTL of fields; system_schema.types and
the driver's metadata; tuple<...> columns, tuple literals and tuples from
strings. Rewritten after ScyllaDB's test/cqlpy/test_udt.py,
test_type_tuple.py and cassandra_tests/validation/entities/
user_types_test.py and tuple_type_test.py (the names are given test by test).
"""

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

pytest.importorskip("cassandra")

from cassandra import InvalidRequest  # noqa: E402
from cassandra.protocol import SyntaxException  # noqa: E402
from cassandra.query import UNSET_VALUE  # noqa: E402

from conftest import REPO, cql_unique_name, host_of  # noqa: E402


class Names:
    def __init__(self, env):
        self.env = env

    def table(self, schema):
        t = f"{self.env.ks}.{cql_unique_name('t')}"
        self.env.session.execute(f"CREATE TABLE {t} {schema}")
        return t

    def type(self, fields):
        t = f"{self.env.ks}.{cql_unique_name('ut')}"
        self.env.session.execute(f"CREATE TYPE {t} {fields}")
        return t


@pytest.fixture
def names(cql_env):
    return Names(cql_env)


def invalid(session, query, match, *args):
    with pytest.raises(InvalidRequest, match=match):
        session.execute(query, *args)


def test_create_alter_drop_type(cql_env, names):
    s, ks = cql_env.session, cql_env.ks
    ut = names.type("(a int, b text)")
    short = ut.split(".")[1]
    invalid(s, f"CREATE TYPE {ut} (c int)", f"A user type of name {ut} already exists")
    s.execute(f"CREATE TYPE IF NOT EXISTS {ut} (c int)")
    rows = s.execute(f"SELECT * FROM system_schema.types WHERE keyspace_name = '{ks}' "
                     f"AND type_name = '{short}'").all()
    assert [(r.field_names, r.field_types) for r in rows] == [(["a", "b"], ["int", "text"])]
    s.execute(f"ALTER TYPE {ut} ADD c frozen<tuple<int, text>>")
    s.execute(f"ALTER TYPE {ut} RENAME a TO x AND b TO y")
    r = s.execute(f"SELECT field_names, field_types FROM system_schema.types "
                  f"WHERE keyspace_name = '{ks}' AND type_name = '{short}'").one()
    assert r.field_names == ["x", "y", "c"]
    assert r.field_types == ["int", "text", "frozen<tuple<int, text>>"]
    invalid(s, f"ALTER TYPE {ut} ADD x int", "a field of the same name already exists")
    invalid(s, f"ALTER TYPE {ut} RENAME nope TO z", "Unknown field nope in type")
    invalid(s, f"ALTER TYPE {ut} RENAME x TO y", "Duplicate field name y")
    s.execute(f"DROP TYPE {ut}")
    invalid(s, f"DROP TYPE {ut}", f"No user type named {ut} exists.")
    s.execute(f"DROP TYPE IF EXISTS {ut}")


def test_invalid_udt_statements(cql_env, names):
    """user_types_test.py testInvalidUDTStatements, testCircularReferences."""
    s, ks = cql_env.session, cql_env.ks
    ut = names.type("(a int)")
    invalid(s, f"CREATE TABLE {ks}.wrong (k {ut} PRIMARY KEY, v int)",
            "Invalid non-frozen user-defined type.*for PRIMARY KEY.*k")
    invalid(s, f"CREATE TABLE {ks}.wrong (k int PRIMARY KEY, v list<{ut}>)",
            f"Non-frozen.*inside collections: list<{ut}>")
    invalid(s, f"CREATE TABLE {ks}.wrong (k int PRIMARY KEY, v map<int, {ut}>)",
            f"Non-frozen.*inside collections: map<int, {ut}>")
    invalid(s, f"CREATE TYPE {ks}.wrong (a int, b {ut})", "A user type cannot contain non-frozen")
    invalid(s, f"CREATE TABLE {ks}.wrong (k int PRIMARY KEY, v frozen<otherks.t>)",
            f"Statement on keyspace {ks} cannot refer to a user type in keyspace otherks")
    invalid(s, f"CREATE TABLE {ks}.wrong (k int PRIMARY KEY, v frozen<{ks}.unknowntype>)",
            f"Unknown type {ks}.unknowntype")
    fr = names.table(f"(a int PRIMARY KEY, b frozen<{ut}>, c int)")
    invalid(s, f"DELETE b.a FROM {fr} WHERE a = 0", "Frozen UDT column b does not support field")
    invalid(s, f"DELETE c.a FROM {fr} WHERE a = 0", "Invalid.*deletion operation for non-UDT column c")
    invalid(s, f"UPDATE {fr} SET b.a = 0 WHERE a = 0", r"Invalid operation \(b.a = 0\) for frozen UDT column b")
    invalid(s, f"UPDATE {fr} SET c.a = 0 WHERE a = 0", r"Invalid operation \(c.a = 0\) for non-UDT column c")
    nf = names.table(f"(a int PRIMARY KEY, b {ut}, c int)")
    invalid(s, f"DELETE b.foo FROM {nf} WHERE a = 0", "UDT column b does not have a field named foo")
    invalid(s, f"UPDATE {nf} SET b.foo = 0 WHERE a = 0", "UDT column b does not have a field named foo")
    invalid(s, f"INSERT INTO {nf} (a, b, c) VALUES (0, {{a: 0, foo: 0}}, 0)",
            "Unknown field 'foo' in value of user defined type")
    with_list = names.type("(bar int, foo list<int>)")
    invalid(s, f"CREATE TABLE {ks}.wrong (k int PRIMARY KEY, v {with_list})",
            "Non-frozen UDTs with nested non-frozen collections are not supported")
    invalid(s, f"DROP TYPE {ut}", f"Cannot drop user type {ut} as it is still used by table")
    outer = names.type(f"(x frozen<{ut}>)")
    invalid(s, f"ALTER TYPE {ut} ADD y frozen<{outer}>", "would create a circular reference")


def test_frozen_and_nonfrozen_columns(cql_env, names):
    s = cql_env.session
    ut = names.type("(a int, b text)")
    t = names.table(f"(k int PRIMARY KEY, f frozen<{ut}>, n {ut})")
    s.execute(f"INSERT INTO {t} (k, f, n) VALUES (1, {{a: 1, b: 'x'}}, {{a: 2}})")
    r = s.execute(f"SELECT f, n FROM {t} WHERE k = 1").one()
    assert (r.f.a, r.f.b, r.n.a, r.n.b) == (1, "x", 2, None)
    # field update and deletion, simple and prepared
    s.execute(f"UPDATE {t} SET n.b = 'y' WHERE k = 1")
    ps = s.prepare(f"UPDATE {t} SET n.a = ? WHERE k = ?")
    s.execute(ps, (3, 1))
    r = s.execute(f"SELECT n.a, n.b, f.b FROM {t} WHERE k = 1").one()
    assert tuple(r) == (3, "y", "x")
    assert s.execute(f"SELECT n.a AS z FROM {t} WHERE k = 1").column_names == ["z"]
    s.execute(f"DELETE n.a FROM {t} WHERE k = 1")
    assert tuple(s.execute(f"SELECT n.a, n.b FROM {t} WHERE k = 1").one()) == (None, "y")
    s.execute(f"DELETE n.b FROM {t} WHERE k = 1")
    assert s.execute(f"SELECT n FROM {t} WHERE k = 1").one().n is None
    # a whole value overwrites every field; bound values and literals with markers
    ins = s.prepare(f"INSERT INTO {t} (k, f, n) VALUES (?, ?, {{a: ?, b: ?}})")
    assert [c.name for c in ins.column_metadata] == ["k", "f", "n.a", "n.b"]
    s.execute(ins, (2, (5, "p"), 6, "q"))
    r = s.execute(f"SELECT f, n FROM {t} WHERE k = 2").one()
    assert (r.f.a, r.f.b, r.n.a, r.n.b) == (5, "p", 6, "q")
    s.execute(f"UPDATE {t} SET n = {{b: 'only'}} WHERE k = 2")
    r = s.execute(f"SELECT n FROM {t} WHERE k = 2").one()
    assert (r.n.a, r.n.b) == (None, "only")
    invalid(s, f"SELECT n.zz FROM {t}", "has no field zz")
    invalid(s, f"SELECT k.a FROM {t}", "Invalid field selection: k of type int is not a user type")


def test_udt_with_unset_values(cql_env, names):
    """user_types_test.py testUDTWithUnsetValues."""
    s = cql_env.session
    ut = names.type("(x int, y int)")
    other = names.type(f"(a frozen<{ut}>)")
    t = names.table(f"(k int PRIMARY KEY, v frozen<{ut}>, z frozen<{other}>)")
    invalid(s, s.prepare(f"INSERT INTO {t} (k, v) VALUES (10, {{x: ?, y: ?}})"), "unset",
            (1, UNSET_VALUE))
    invalid(s, s.prepare(f"INSERT INTO {t} (k, v, z) VALUES (10, {{x: ?, y: ?}}, {{a: {{x: ?, y: ?}}}})"),
            "unset", (1, 1, 1, UNSET_VALUE))


def test_writetime_ttl_of_fields(cql_env, names):
    """test_udt.py test_writetime_udt_field, test_ttl_udt_field,
    test_writetime_field_on_wrong_type, test_writetime_ttl_frozen_udt_elements_pk,
    test_writetime_frozen_udt, test_ttl_frozen_udt."""
    s = cql_env.session
    ut = names.type("(a int, b int)")
    t = names.table(f"(p int PRIMARY KEY, x {ut}, f frozen<{ut}>, v int)")
    ts = int(time.time() * 1000000)
    s.execute(f"UPDATE {t} USING TIMESTAMP {ts - 1234} SET x.a = 42 WHERE p = 1")
    s.execute(f"UPDATE {t} USING TIMESTAMP {ts - 1217} SET x.b = 17 WHERE p = 1")
    assert s.execute(f"SELECT WRITETIME(x.a) FROM {t} WHERE p = 1").one()[0] == ts - 1234
    assert s.execute(f"SELECT WRITETIME(x.b) FROM {t} WHERE p = 1").one()[0] == ts - 1217
    s.execute(f"UPDATE {t} USING TTL 3600 SET x.a = 42 WHERE p = 2")
    s.execute(f"UPDATE {t} USING TTL 7200 SET x.b = 17 WHERE p = 2")
    ta, tb = s.execute(f"SELECT TTL(x.a), TTL(x.b) FROM {t} WHERE p = 2").one()
    assert 3500 < ta <= 3600 and 7100 < tb <= 7200
    s.execute(f"UPDATE {t} SET x.a = 99 WHERE p = 2")
    assert s.execute(f"SELECT TTL(x.a) FROM {t} WHERE p = 2").one()[0] is None
    invalid(s, f"SELECT WRITETIME(v.a) FROM {t}", "user type")
    invalid(s, f"SELECT TTL(v.a) FROM {t}", "user type")
    invalid(s, f"SELECT WRITETIME(f.a) FROM {t}", "only valid for non-frozen UDT columns")
    s.execute(f"INSERT INTO {t} (p, f) VALUES (3, {{a: 1, b: 2}}) USING TIMESTAMP {ts - 99} AND TTL 3600")
    wt, ttl = s.execute(f"SELECT WRITETIME(f), TTL(f) FROM {t} WHERE p = 3").one()
    assert wt == ts - 99 and 3500 < ttl <= 3600
    pk = names.table(f"(pk frozen<{ut}> PRIMARY KEY)")
    invalid(s, f"SELECT WRITETIME(pk.a) FROM {pk}", "primary key|PRIMARY KEY")
    invalid(s, f"SELECT TTL(pk.a) FROM {pk}", "primary key|PRIMARY KEY")


def test_alter_type_keeps_data(cql_env, names):
    """user_types_test.py testAlterUDT, testAlterNonFrozenUDT,
    testAlteringUserTypeNestedWithinMap, testAddFieldToUdt."""
    s = cql_env.session
    ut = names.type("(a int, b text)")
    t = names.table(f"(k int PRIMARY KEY, v {ut}, f frozen<{ut}>, m map<text, frozen<{ut}>>)")
    s.execute(f"INSERT INTO {t} (k, v, f, m) VALUES (0, {{a: 1, b: 'abc'}}, {{a: 1}}, "
              "{'first': {a: 1}})")
    s.execute(f"ALTER TYPE {ut} RENAME b TO foo")
    assert s.execute(f"SELECT v.foo FROM {t}").one()[0] == "abc"
    s.execute(f"UPDATE {t} SET v.foo = 'def' WHERE k = 0")
    assert s.execute(f"SELECT v.foo FROM {t}").one()[0] == "def"
    s.execute(f"ALTER TYPE {ut} ADD c int")
    r = s.execute(f"SELECT v, f, m FROM {t}").one()
    assert (r.v.a, r.v.foo, r.v.c) == (1, "def", None)
    assert (r.f.a, r.f.foo, r.f.c) == (1, None, None)
    assert r.m["first"].a == 1 and r.m["first"].c is None
    s.execute(f"INSERT INTO {t} (k, v, m) VALUES (1, {{a: 3, foo: 'x', c: 0}}, {{'second': {{c: 2}}}})")
    r = s.execute(f"SELECT v.c, m FROM {t} WHERE k = 1").one()
    assert r[0] == 0 and r.m["second"].c == 2
    # every table and type that uses it sees the change
    outer = names.type(f"(inner frozen<{ut}>, n int)")
    t2 = names.table(f"(k int PRIMARY KEY, o frozen<{outer}>)")
    s.execute(f"INSERT INTO {t2} (k, o) VALUES (1, {{inner: {{a: 7}}, n: 1}})")
    s.execute(f"ALTER TYPE {ut} ADD d text")
    assert s.execute(f"SELECT o.inner.a, o.inner.d FROM {t2}").one() == (7, None)


def test_udts_inside_collections_and_tuples(cql_env, names):
    """user_types_test.py testCassandra8105, testNestedUserTypes, testFor7684."""
    s = cql_env.session
    ut1 = names.type("(a int, b int)")
    ut2 = names.type(f"(j frozen<{ut1}>, k int)")
    t = names.table(f"(x int PRIMARY KEY, y set<frozen<{ut2}>>, l list<frozen<{ut2}>>, "
                    f"tu tuple<int, frozen<{ut1}>>)")
    s.execute(f"INSERT INTO {t} (x, y, l, tu) VALUES (1, {{ {{k: 1}} }}, [ {{k: 2}} ], (3, {{a: 4}}))")
    r = s.execute(f"SELECT * FROM {t}").one()
    assert [e.k for e in r.y] == [1] and r.l[0].k == 2 and r.tu[1].a == 4
    nested = names.type("(s set<text>, m map<text, text>, l list<text>)")
    outer = names.type(f"(s set<frozen<{nested}>>,)")
    t2 = names.table(f"(id int PRIMARY KEY, val frozen<{outer}>)")
    s.execute(f"INSERT INTO {t2} (id, val) VALUES (0, " +
              "{s: { {s: {'foo', 'bar'}, m: {'foo': 'bar'}, l: ['foo', 'bar']} }})")
    (elem,) = s.execute(f"SELECT val FROM {t2}").one().val.s
    assert sorted(elem.s) == ["bar", "foo"] and dict(elem.m) == {"foo": "bar"}
    ck = names.type("(x double)")
    t3 = names.table(f"(k int, v frozen<{ck}>, b boolean static, PRIMARY KEY (k, v))")
    s.execute(s.prepare(f"INSERT INTO {t3} (k, v) VALUES (?, {{x: ?}})"), (1, -104.99251))
    s.execute(f"UPDATE {t3} SET b = true WHERE k = 1")
    rows = s.execute(s.prepare(f"SELECT v.x FROM {t3} WHERE k = ? AND v = {{x: ?}}"),
                     (1, -104.99251)).all()
    assert [r[0] for r in rows] == [-104.99251]


def test_tuples(cql_env, names):
    """tuple_type_test.py testTuplePutAndGet, testTupleFromString, testInvalidQueries."""
    s = cql_env.session
    t = names.table("(k int, c int, t frozen<tuple<int, text>>, PRIMARY KEY (k, c))")
    s.execute(f"INSERT INTO {t} (k, c, t) VALUES (0, 0, (3, 'foo'))")
    s.execute(s.prepare(f"INSERT INTO {t} (k, c, t) VALUES (?, ?, ?)"), (0, 1, (4, "bar")))
    s.execute(s.prepare(f"INSERT INTO {t} (k, c, t) VALUES (?, ?, (?, ?))"), (0, 2, 5, None))
    for c, lit in ((3, "'0:0'"), (4, "'1'"), (5, "'1:1\\:1'"), (6, "'@:1'")):
        s.execute(f"INSERT INTO {t} (k, c, t) VALUES (0, {c}, {lit})")
    rows = [(r.c, r.t) for r in s.execute(f"SELECT c, t FROM {t} WHERE k = 0")]
    assert rows == [(0, (3, "foo")), (1, (4, "bar")), (2, (5, None)), (3, (0, "0")),
                    (4, (1, None)), (5, (1, "1:1")), (6, (None, "1"))]
    invalid(s, f"INSERT INTO {t} (k, c, t) VALUES (1, 1, '1:2:3')",
            "Invalid tuple literal: too many elements. Type frozen<tuple<int, text>> expects 2 but got 3")
    t2 = names.table("(k int PRIMARY KEY, t frozen<tuple<int, text, double>>)")
    with pytest.raises(SyntaxException):
        s.execute(f"INSERT INTO {t2} (k, t) VALUES (0, ())")
    invalid(s, f"INSERT INTO {t2} (k, t) VALUES (0, (2, 'foo', 3.1, 'bar'))",
            r"Invalid tuple literal for t: too many elements. Type frozen<tuple<int, text, double>> expects 3 but got 4")
    t3 = names.table("(k int PRIMARY KEY, t frozen<tuple<int, tuple<int, text, double>>>)")
    invalid(s, f"INSERT INTO {t3} (k, t) VALUES (0, (1, (1, '1', 1.0, 1)))",
            r"Invalid tuple literal for t: component 1 is not of type frozen<tuple<int, text, double>>")
    col = s.execute("SELECT type FROM system_schema.columns WHERE keyspace_name = %s "
                    "AND table_name = %s AND column_name = 't'",
                    (cql_env.ks, t3.split(".")[1])).one()
    assert col.type == "frozen<tuple<int, frozen<tuple<int, text, double>>>>"


NODE_SCRIPT = Path(__file__).with_name("cql_types_node.js")


def node_driver():
    node = shutil.which("node")
    modules = os.environ.get("SHARDMARK_NODE_MODULES") or str(REPO / "tests/bench/node_modules")
    if node is None or not Path(modules, "cassandra-driver", "package.json").exists():
        pytest.skip("the Node.js driver is not installed (cd tests/bench && npm install)")
    return node, modules


def test_node_driver_udts_and_tuples(cql_env, names):
    """The Node.js driver decodes and encodes UDTs and tuples, simple and prepared."""
    node, modules = node_driver()
    ut = names.type("(a int, b text, c frozen<list<int>>)")
    t = names.table(f"(k int PRIMARY KEY, n {ut}, f frozen<{ut}>, tu tuple<int, text>)")
    env = dict(os.environ, NODE_PATH=modules)
    out = subprocess.run([node, str(NODE_SCRIPT), host_of(cql_env.server.cql_port),
                          str(cql_env.server.cql_port), t],
                         capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr + out.stdout
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["simple"] == {"k": 1, "n": {"a": 1, "b": "x", "c": None},
                             "f": {"a": 2, "b": None, "c": [1, 2]}, "tu": [3, "y"]}
    assert got["prepared"] == {"k": 2, "n": {"a": 5, "b": "p", "c": [7]},
                               "f": {"a": 6, "b": "q", "c": None}, "tu": [8, "z"]}
    assert got["field"] == [5, "p"]
