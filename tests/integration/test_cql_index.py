# SPDX-License-Identifier: BSD-3-Clause
"""CQL secondary indexes: CREATE / DROP INDEX (named, unnamed, IF [NOT]
EXISTS, on regular, static, clustering and partition key columns, full() of
frozen collections, local indexes), queries through them (token order,
paging across the index and the base table), index maintenance on every
write path (INSERT, UPDATE, DELETE of cells, rows, ranges and partitions,
TTL, LWT, BATCH), the backfill of an index created on existing rows,
ScyllaDB's refusals, and system_schema.indexes as the Python driver reads
it. Rewritten after ScyllaDB's test/cqlpy/test_secondary_index.py (the
ScyllaDB test's name is given where one is ported); the view table an index
is (<index>_index) is read directly where ScyllaDB's tests do.
"""

import time

import pytest

pytest.importorskip("cassandra")

from cassandra import InvalidRequest  # noqa: E402
from cassandra.query import BatchStatement, SimpleStatement  # noqa: E402

from conftest import cql_new_table as table, cql_rows as rows  # noqa: E402


def name_of(t):
    return t.split(".")[1]


def paged(s, query, fetch_size, *args):
    return [tuple(r) for r in s.execute(SimpleStatement(query, fetch_size=fetch_size), *args)]


def test_partition_order_with_si(cql_env):
    # test_partition_order_with_si: results keep the token order
    s = cql_env.session
    t = table(cql_env, "(pk int PRIMARY KEY, x int)")
    ins = s.prepare(f"INSERT INTO {t} (pk, x) VALUES (?, ?)")
    for i in range(20):
        s.execute(ins, [i, 1])
    tokens = [r[0] for r in s.execute(f"SELECT token(pk) FROM {t}")]
    assert tokens == sorted(tokens) and len(tokens) == 20
    s.execute(f"CREATE INDEX ON {t}(x)")
    # CREATE INDEX answers once the existing rows are in the index
    assert [r[0] for r in s.execute(f"SELECT token(pk) FROM {t} WHERE x = 1")] == tokens
    assert rows(s, f"SELECT pk FROM {t} WHERE x = 2") == []


def test_create_index_if_not_exists(cql_env):
    # test_create_index_if_not_exists and ..._if_not_exists2
    s = cql_env.session
    t = table(cql_env, "(p int PRIMARY KEY, v int, w int)")
    ks = cql_env.ks
    s.execute(f"CREATE INDEX ON {t}(v)")
    with pytest.raises(InvalidRequest, match="duplicate"):
        s.execute(f"CREATE INDEX ON {t}(v)")
    s.execute(f"CREATE INDEX IF NOT EXISTS ON {t}(v)")
    s.execute(f"DROP INDEX {ks}.{name_of(t)}_v_idx")
    s.execute(f"CREATE INDEX xyz ON {t}(v)")
    with pytest.raises(InvalidRequest, match="already exists"):
        s.execute(f"CREATE INDEX xyz ON {t}(v)")
    s.execute(f"CREATE INDEX IF NOT EXISTS xyz ON {t}(v)")
    with pytest.raises(InvalidRequest, match="already exists"):
        s.execute(f"CREATE INDEX IF NOT EXISTS xyz ON {t}(w)")
    with pytest.raises(InvalidRequest, match="duplicate"):
        s.execute(f"CREATE INDEX abc ON {t}(v)")
    s.execute(f"CREATE INDEX IF NOT EXISTS abc ON {t}(v)")
    with pytest.raises(InvalidRequest):
        s.execute(f"DROP INDEX {ks}.abc")
    s.execute(f"DROP INDEX {ks}.xyz")
    s.execute(f'CREATE INDEX "CamelCase" ON {t}(v)')
    with pytest.raises(InvalidRequest, match="already exists"):
        s.execute(f'CREATE INDEX "CamelCase" ON {t}(v)')
    s.execute(f'DROP INDEX {ks}."CamelCase"')
    s.execute(f"DROP INDEX IF EXISTS {ks}.nosuchindex")
    with pytest.raises(InvalidRequest, match="could not be found"):
        s.execute(f"DROP INDEX {ks}.nosuchindex")


def test_index_names_taken(cql_env):
    # test_create_unnamed_index_when_its_name_is_taken, ..._named_...
    s = cql_env.session
    t = table(cql_env, "(p int PRIMARY KEY, v int, w int)")
    ks, n = cql_env.ks, name_of(t)
    s.execute(f"CREATE TABLE {ks}.{n}_v_idx_index (x int PRIMARY KEY)")
    s.execute(f"CREATE INDEX ON {t}(v)")  # takes another name
    s.execute(f"CREATE TABLE {ks}.{n}_named_index (x int PRIMARY KEY)")
    with pytest.raises(InvalidRequest, match="already exists"):
        s.execute(f"CREATE INDEX {n}_named ON {t}(w)")
    s.execute(f"DROP TABLE {ks}.{n}_v_idx_index")
    s.execute(f"DROP TABLE {ks}.{n}_named_index")


def test_refusals(cql_env):
    s = cql_env.session
    t = table(cql_env, "(p int, c int, v int, d duration, PRIMARY KEY (p, c))")
    with pytest.raises(InvalidRequest, match="No column definition found for column nosuch"):
        s.execute(f"CREATE INDEX ON {t}(nosuch)")
    with pytest.raises(InvalidRequest,
                       match="Cannot create secondary index on partition key column p"):
        s.execute(f"CREATE INDEX ON {t}(p)")
    with pytest.raises(InvalidRequest, match="not supported on duration columns"):
        s.execute(f"CREATE INDEX ON {t}(d)")
    with pytest.raises(InvalidRequest, match="unconfigured table|does not exist"):
        s.execute(f"CREATE INDEX ON {cql_env.ks}.nosuchtable(v)")
    ct = table(cql_env, "(p int PRIMARY KEY, n counter)")
    with pytest.raises(InvalidRequest, match="not supported on counter tables"):
        s.execute(f"CREATE INDEX ON {ct}(n)")
    with pytest.raises(InvalidRequest,
                       match="Local index definition must contain full partition key only"):
        s.execute(f"CREATE INDEX ON {t}((c), v)")
    with pytest.raises(InvalidRequest, match="Local indexing based on partition key"):
        s.execute(f"CREATE INDEX ON {t}((p), p)")
    s.execute(f"CREATE INDEX ON {t}(v)")
    # test_secondary_index.py: dropping an indexed column
    with pytest.raises(InvalidRequest, match="dependent secondary indexes"):
        s.execute(f"ALTER TABLE {t} DROP v")
    # another restriction than the indexed one still filters
    t2 = table(cql_env, "(p int PRIMARY KEY, v int, w int)")
    s.execute(f"CREATE INDEX ON {t2}(v)")
    with pytest.raises(InvalidRequest, match="ALLOW FILTERING"):
        s.execute(f"SELECT * FROM {t2} WHERE v = 1 AND w = 2")
    s.execute(f"INSERT INTO {t2} (p, v, w) VALUES (1, 1, 2)")
    s.execute(f"INSERT INTO {t2} (p, v, w) VALUES (2, 1, 3)")
    assert rows(s, f"SELECT p FROM {t2} WHERE v = 1 AND w = 2 ALLOW FILTERING") == [(1,)]
    with pytest.raises(InvalidRequest, match="ALLOW FILTERING"):
        s.execute(f"SELECT * FROM {t2} WHERE v > 1")


def test_collections(cql_env):
    s = cql_env.session
    t = table(cql_env, "(p int PRIMARY KEY, fl frozen<list<int>>, l list<int>, v int)")
    with pytest.raises(InvalidRequest, match="frozen collection"):
        s.execute(f"CREATE INDEX ON {t}(fl)")
    with pytest.raises(InvalidRequest, match="keys\\(\\) of frozen collection column fl"):
        s.execute(f"CREATE INDEX ON {t}(keys(fl))")
    with pytest.raises(InvalidRequest, match="only non-frozen collections support values"):
        s.execute(f"CREATE INDEX ON {t}(values(v))")
    with pytest.raises(InvalidRequest, match="full\\(\\) indexes can only be created on frozen"):
        s.execute(f"CREATE INDEX ON {t}(full(l))")
    s.execute(f"CREATE INDEX ON {t}(full(fl))")
    s.execute(f"INSERT INTO {t} (p, fl) VALUES (1, [1, 2])")
    s.execute(f"INSERT INTO {t} (p, fl) VALUES (2, [1, 2, 3])")
    assert rows(s, f"SELECT p FROM {t} WHERE fl = [1, 2]") == [(1,)]
    ix = cql_env.cluster.metadata.keyspaces[cql_env.ks].tables[name_of(t)].indexes
    assert ix[f"{name_of(t)}_fl_idx"].index_options["target"] == "full(fl)"


def test_collection_indexes(cql_env):
    # test_secondary_index.py's collection tests: keys(), values(), entries()
    # of a map, a set's elements, a list's values
    s = cql_env.session
    t = table(cql_env, "(p int, c int, m map<int, text>, st set<int>, l list<text>, "
                       "PRIMARY KEY (p, c))")
    for target in ("keys(m)", "values(m)", "entries(m)", "st", "l"):
        s.execute(f"CREATE INDEX ON {t}({target})")
    with pytest.raises(InvalidRequest, match="keys\\(\\) of column l with non-map type"):
        s.execute(f"CREATE INDEX ON {t}(keys(l))")
    with pytest.raises(InvalidRequest, match="duplicate"):
        s.execute(f"CREATE INDEX ON {t}(values(st))")  # a set's values are its keys
    with pytest.raises(InvalidRequest, match="not implemented"):
        s.execute(f"CREATE INDEX ON {t}((p), m)")
    s.execute(f"INSERT INTO {t} (p, c, m, st, l) "
              "VALUES (1, 1, {1: 'a', 2: 'b'}, {10, 20}, ['x', 'y', 'x'])")
    s.execute(f"INSERT INTO {t} (p, c, m, st, l) VALUES (2, 1, {{2: 'a'}}, {{20}}, ['y'])")
    key = f"SELECT p FROM {t} WHERE m CONTAINS KEY %s"
    val = f"SELECT p FROM {t} WHERE m CONTAINS %s"
    ent = f"SELECT p FROM {t} WHERE m[%s] = %s"
    assert rows(s, key, [1]) == [(1,)]
    assert sorted(rows(s, key, [2])) == [(1,), (2,)]
    assert sorted(rows(s, val, ["a"])) == [(1,), (2,)]
    assert rows(s, ent, [2, "b"]) == [(1,)] and rows(s, ent, [2, "a"]) == [(2,)]
    assert sorted(rows(s, f"SELECT p FROM {t} WHERE st CONTAINS 20")) == [(1,), (2,)]
    assert rows(s, f"SELECT p FROM {t} WHERE l CONTAINS 'x'") == [(1,)]
    # element updates move the entries
    s.execute(f"UPDATE {t} SET m = m + {{3: 'c'}}, st = st - {{20}} WHERE p = 1 AND c = 1")
    s.execute(f"UPDATE {t} SET m[2] = 'z' WHERE p = 2 AND c = 1")
    s.execute(f"DELETE m[1] FROM {t} WHERE p = 1 AND c = 1")
    assert rows(s, key, [1]) == [] and rows(s, key, [3]) == [(1,)]
    assert rows(s, val, ["a"]) == [] and rows(s, val, ["z"]) == [(2,)]
    assert rows(s, ent, [2, "a"]) == [] and rows(s, ent, [2, "z"]) == [(2,)]
    assert rows(s, f"SELECT p FROM {t} WHERE st CONTAINS 20") == [(2,)]
    s.execute(f"UPDATE {t} SET l = ['q'] WHERE p = 1 AND c = 1")
    assert rows(s, f"SELECT p FROM {t} WHERE l CONTAINS 'x'") == []
    assert rows(s, f"SELECT p FROM {t} WHERE l CONTAINS 'q'") == [(1,)]
    s.execute(f"DELETE FROM {t} WHERE p = 2")
    assert rows(s, val, ["z"]) == [] and rows(s, f"SELECT p FROM {t} WHERE st CONTAINS 20") == []
    targets = {i.index_options["target"] for i in
               cql_env.cluster.metadata.keyspaces[cql_env.ks].tables[name_of(t)].indexes.values()}
    assert targets == {"keys(m)", "values(m)", "entries(m)", "keys(st)", "values(l)"}


def test_maintenance_regular(cql_env):
    s = cql_env.session
    t = table(cql_env, "(p int, c int, v int, w int, PRIMARY KEY (p, c))")
    s.execute(f"CREATE INDEX ON {t}(v)")
    q = f"SELECT p, c FROM {t} WHERE v = ?"
    sel = s.prepare(q)
    s.execute(f"INSERT INTO {t} (p, c, v) VALUES (1, 1, 10)")
    s.execute(f"INSERT INTO {t} (p, c, v) VALUES (1, 2, 10)")
    s.execute(f"INSERT INTO {t} (p, c, v) VALUES (2, 1, 10)")
    assert sorted(rows(s, sel, [10])) == [(1, 1), (1, 2), (2, 1)]
    s.execute(f"UPDATE {t} SET v = 20 WHERE p = 1 AND c = 1")
    assert sorted(rows(s, sel, [10])) == [(1, 2), (2, 1)]
    assert rows(s, sel, [20]) == [(1, 1)]
    s.execute(f"DELETE v FROM {t} WHERE p = 1 AND c = 2")
    assert rows(s, sel, [10]) == [(2, 1)]
    s.execute(f"DELETE FROM {t} WHERE p = 2 AND c = 1")
    assert rows(s, sel, [10]) == []
    # an older write does not move the index entry
    s.execute(f"INSERT INTO {t} (p, c, v) VALUES (3, 1, 30) USING TIMESTAMP 1000")
    s.execute(f"UPDATE {t} USING TIMESTAMP 500 SET v = 31 WHERE p = 3 AND c = 1")
    assert rows(s, sel, [30]) == [(3, 1)] and rows(s, sel, [31]) == []
    # LWT
    s.execute(f"INSERT INTO {t} (p, c, v) VALUES (4, 1, 40) IF NOT EXISTS")
    assert rows(s, sel, [40]) == [(4, 1)]
    s.execute(f"UPDATE {t} SET v = 41 WHERE p = 4 AND c = 1 IF v = 40")
    assert rows(s, sel, [40]) == [] and rows(s, sel, [41]) == [(4, 1)]
    s.execute(f"UPDATE {t} SET v = 42 WHERE p = 4 AND c = 1 IF v = 40")  # not applied
    assert rows(s, sel, [41]) == [(4, 1)]
    s.execute(f"DELETE FROM {t} WHERE p = 4 AND c = 1 IF EXISTS")
    assert rows(s, sel, [41]) == []
    # BATCH over several partitions (and shards)
    b = BatchStatement()
    ins = s.prepare(f"INSERT INTO {t} (p, c, v) VALUES (?, ?, ?)")
    for p in range(10, 20):
        b.add(ins, [p, 0, 50])
    s.execute(b)
    assert sorted(rows(s, sel, [50])) == [(p, 0) for p in range(10, 20)]
    b = BatchStatement()
    upd = s.prepare(f"UPDATE {t} SET v = 51 WHERE p = ? AND c = 0")
    for p in range(10, 15):
        b.add(upd, [p])
    s.execute(b)
    assert sorted(rows(s, sel, [50])) == [(p, 0) for p in range(15, 20)]
    assert sorted(rows(s, sel, [51])) == [(p, 0) for p in range(10, 15)]
    # the selection, LIMIT and a clustering restriction work as on any read
    assert rows(s, f"SELECT w, v FROM {t} WHERE v = 51 LIMIT 2") == [(None, 51)] * 2
    assert rows(s, f"SELECT count(*) FROM {t} WHERE v = 51") == [(5,)]


def test_partition_and_range_deletion(cql_env):
    # test_partition_deletion, test_range_deletion (fewer rows)
    s = cql_env.session
    t = table(cql_env, "(p int, c1 int, c2 int, v int, PRIMARY KEY (p, c1, c2))")
    s.execute(f"CREATE INDEX ON {t}(c1)")
    ins = s.prepare(f"INSERT INTO {t} (p, c1, c2) VALUES (?, ?, 1)")
    for i in range(300):
        s.execute(ins, [1, i])
        s.execute(ins, [2, i])
    view = f"{t}_c1_idx_index"
    s.execute(f"DELETE FROM {t} WHERE p = 1")
    assert sorted(r.c1 for r in s.execute(f"SELECT c1 FROM {view}")) == list(range(300))
    s.execute(f"DELETE FROM {t} WHERE p = 2 AND c1 > 5 AND c1 < 246")
    assert sorted(r.c1 for r in s.execute(f"SELECT c1 FROM {view}")) == \
        [x for x in range(300) if x <= 5 or x >= 246]
    assert rows(s, f"SELECT p, c1 FROM {t} WHERE c1 = 3") == [(2, 3)]
    assert rows(s, f"SELECT p, c1 FROM {t} WHERE c1 = 7") == []


def test_ttl(cql_env):
    s = cql_env.session
    t = table(cql_env, "(p int PRIMARY KEY, v int)")
    s.execute(f"CREATE INDEX ON {t}(v)")
    s.execute(f"INSERT INTO {t} (p, v) VALUES (1, 7) USING TTL 2")
    s.execute(f"INSERT INTO {t} (p, v) VALUES (2, 7)")
    view = f"{t}_v_idx_index"
    ttls = [r[0] for r in s.execute(f"SELECT ttl(v) FROM {t} WHERE p = 1")]
    assert (2,) in rows(s, f"SELECT p FROM {t} WHERE v = 7")
    deadline = time.monotonic() + 30
    while rows(s, f"SELECT p FROM {t} WHERE p = 1") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert all(0 < x <= 2 for x in ttls)  # empty when it expired already
    assert rows(s, f"SELECT p FROM {t} WHERE v = 7") == [(2,)]
    # the view row expired with the base cell
    assert rows(s, f"SELECT p FROM {view}") == [(2,)]


def test_key_and_static_columns(cql_env):
    s = cql_env.session
    t = table(cql_env, "(p1 int, p2 int, c1 int, c2 int, s int static, v int, "
                       "PRIMARY KEY ((p1, p2), c1, c2))")
    s.execute(f"CREATE INDEX ON {t}(p1)")
    s.execute(f"CREATE INDEX ON {t}(c2)")
    s.execute(f"CREATE INDEX ON {t}(s)")
    for p2 in range(3):
        for c in range(2):
            s.execute(f"INSERT INTO {t} (p1, p2, c1, c2, v) VALUES (7, {p2}, {c}, {c + 10}, 1)")
    s.execute(f"UPDATE {t} SET s = 5 WHERE p1 = 7 AND p2 = 1")
    assert len(rows(s, f"SELECT * FROM {t} WHERE p1 = 7")) == 6
    assert sorted(rows(s, f"SELECT p2, c1 FROM {t} WHERE c2 = 11")) == [(0, 1), (1, 1), (2, 1)]
    assert sorted(rows(s, f"SELECT p2, c1 FROM {t} WHERE s = 5")) == [(1, 0), (1, 1)]
    s.execute(f"UPDATE {t} SET s = 6 WHERE p1 = 7 AND p2 = 1")
    assert rows(s, f"SELECT p2 FROM {t} WHERE s = 5") == []
    assert len(rows(s, f"SELECT p2 FROM {t} WHERE s = 6")) == 2
    s.execute(f"DELETE FROM {t} WHERE p1 = 7 AND p2 = 0 AND c1 = 1 AND c2 = 11")
    assert sorted(rows(s, f"SELECT p2 FROM {t} WHERE c2 = 11")) == [(1,), (2,)]
    s.execute(f"DELETE FROM {t} WHERE p1 = 7 AND p2 = 2")
    assert sorted(rows(s, f"SELECT p2, c1 FROM {t} WHERE p1 = 7")) == [(0, 0), (1, 0), (1, 1)]
    # test_paging_with_desc_clustering_order2: DISTINCT through the index, a row a page
    assert len(paged(s, f"SELECT DISTINCT p1, p2 FROM {t} WHERE p1 = 7", 1)) == 2


def test_paging_with_desc_clustering_order(cql_env):
    s = cql_env.session
    t = table(cql_env, "(p int, c int, PRIMARY KEY (p, c)) WITH CLUSTERING ORDER BY (c DESC)")
    s.execute(f"CREATE INDEX ON {t}(c)")
    for i in range(3):
        s.execute(f"INSERT INTO {t} (p, c) VALUES ({i}, 42)")
    assert len(paged(s, f"SELECT * FROM {t} WHERE c = 42", 1)) == 3


def test_paging_across_index_and_base(cql_env):
    # more base partitions than one index read takes, several rows each
    s = cql_env.session
    t = table(cql_env, "(p int, c int, x int, PRIMARY KEY (p, c))")
    s.execute(f"CREATE INDEX ON {t}(x)")
    ins = s.prepare(f"INSERT INTO {t} (p, c, x) VALUES (?, ?, ?)")
    want = []
    for p in range(150):
        for c in range(3):
            s.execute(ins, [p, c, 1 if (p + c) % 2 == 0 else 2])
            if (p + c) % 2 == 0:
                want.append((p, c))
    full = rows(s, f"SELECT p, c FROM {t} WHERE x = 1")
    assert sorted(full) == sorted(want) and len(set(full)) == len(full)
    toks = [r[0] for r in s.execute(f"SELECT token(p) FROM {t} WHERE x = 1")]
    assert toks == sorted(toks)
    for fs in (1, 7, 64, 100):
        assert paged(s, f"SELECT p, c FROM {t} WHERE x = 1", fs) == full
    assert rows(s, f"SELECT p, c FROM {t} WHERE x = 1 LIMIT 10") == full[:10]
    assert len(paged(s, f"SELECT p, c FROM {t} WHERE x = 1 LIMIT 150", 13)) == 150


def test_backfill(cql_env):
    # an index created on a table with rows on every shard holds them all
    s = cql_env.session
    t = table(cql_env, "(p int, c int, v text, PRIMARY KEY (p, c))")
    ins = s.prepare(f"INSERT INTO {t} (p, c, v) VALUES (?, ?, ?)")
    for p in range(200):
        s.execute(ins, [p, 0, f"v{p % 4}"])
        s.execute(ins, [p, 1, f"v{(p + 1) % 4}"])
    s.execute(f"CREATE INDEX vi ON {t}(v)")
    got = rows(s, f"SELECT p, c FROM {t} WHERE v = 'v1'")
    assert sorted(got) == sorted([(p, 0) for p in range(200) if p % 4 == 1] +
                                 [(p, 1) for p in range(200) if (p + 1) % 4 == 1])
    assert len(rows(s, f"SELECT p FROM {cql_env.ks}.vi_index")) == 400


def test_local_index(cql_env):
    s = cql_env.session
    t = table(cql_env, "(p int, c int, v int, PRIMARY KEY (p, c))")
    s.execute(f"CREATE INDEX lv ON {t}((p), v)")
    for c in range(5):
        s.execute(f"INSERT INTO {t} (p, c, v) VALUES (1, {c}, {c % 2})")
        s.execute(f"INSERT INTO {t} (p, c, v) VALUES (2, {c}, 1)")
    assert rows(s, f"SELECT c FROM {t} WHERE p = 1 AND v = 1") == [(1,), (3,)]
    with pytest.raises(InvalidRequest, match="ALLOW FILTERING"):
        s.execute(f"SELECT c FROM {t} WHERE v = 1")
    # the view lives with the base partition, clustered by the value
    assert rows(s, f"SELECT p, v, c FROM {cql_env.ks}.lv_index WHERE p = 1") == \
        [(1, 0, 0), (1, 0, 2), (1, 0, 4), (1, 1, 1), (1, 1, 3)]
    s.execute(f"UPDATE {t} SET v = 0 WHERE p = 1 AND c = 1")
    assert rows(s, f"SELECT c FROM {t} WHERE p = 1 AND v = 1") == [(3,)]
    ix = cql_env.cluster.metadata.keyspaces[cql_env.ks].indexes["lv"]
    assert ix.index_options["target"] == '{"pk":["p"],"ck":["v"]}'


def test_metadata_and_drop(cql_env):
    s = cql_env.session
    t = table(cql_env, "(p int PRIMARY KEY, v int, \"Cap\" int)")
    n = name_of(t)
    s.execute(f"CREATE INDEX named ON {t}(v)")
    s.execute(f'CREATE INDEX ON {t}("Cap")')
    got = rows(s, "SELECT index_name, kind, options FROM system_schema.indexes "
                  "WHERE keyspace_name = %s AND table_name = %s", [cql_env.ks, n])
    assert sorted(got) == sorted([("named", "COMPOSITES", {"target": "v"}),
                                  (f"{n}_Cap_idx", "COMPOSITES", {"target": '"Cap"'})])
    cql_env.cluster.refresh_keyspace_metadata(cql_env.ks)
    ksm = cql_env.cluster.metadata.keyspaces[cql_env.ks]
    assert "named" in ksm.indexes and set(ksm.tables[n].indexes) == {"named", f"{n}_Cap_idx"}
    assert "CREATE INDEX named ON" in ksm.tables[n].indexes["named"].as_cql_query()
    # the views are no tables of their own
    assert "named_index" not in ksm.tables
    assert rows(s, "SELECT table_name FROM system_schema.tables WHERE keyspace_name = %s "
                   "AND table_name = 'named_index'", [cql_env.ks]) == []
    s.execute(f"DROP INDEX {cql_env.ks}.named")
    assert rows(s, "SELECT index_name FROM system_schema.indexes WHERE keyspace_name = %s "
                   "AND table_name = %s", [cql_env.ks, n]) == [(f"{n}_Cap_idx",)]
    with pytest.raises(InvalidRequest, match="ALLOW FILTERING"):
        s.execute(f"SELECT * FROM {t} WHERE v = 1")
    s.execute(f"ALTER TABLE {t} DROP v")  # no index depends on it now
    s.execute(f"DROP TABLE {t}")
    assert rows(s, "SELECT index_name FROM system_schema.indexes WHERE keyspace_name = %s "
                   "AND table_name = %s", [cql_env.ks, n]) == []
    # the same names are free again
    s.execute(f"CREATE TABLE {t} (p int PRIMARY KEY, v int)")
    s.execute(f"CREATE INDEX named ON {t}(v)")
    s.execute(f"INSERT INTO {t} (p, v) VALUES (1, 2)")
    assert rows(s, f"SELECT p FROM {t} WHERE v = 2") == [(1,)]


def test_describe(cql_env, shardmark_bin):
    # shardmark cql's DESCRIBE adds the indexes after the table, as cqlsh does
    import subprocess
    s = cql_env.session
    t = table(cql_env, "(p int, c int, v int, PRIMARY KEY (p, c))")
    s.execute(f"CREATE INDEX ON {t}(v)")
    s.execute(f"CREATE INDEX {name_of(t)}_loc ON {t}((p), v)")
    srv = cql_env.server  # its host: loopback, or the DPDK tap's address
    out = subprocess.run([str(shardmark_bin), "cql", f"{srv.host}:{srv.cql_port}",
                          "-e", f"DESCRIBE TABLE {t}"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    n = name_of(t)
    assert out.stdout.rstrip().endswith(
        f"CREATE INDEX {n}_loc ON {t} ((p), v);\nCREATE INDEX {n}_v_idx ON {t} (v);")


def test_views_belong_to_their_index(cql_env):
    s = cql_env.session
    t = table(cql_env, "(p int, c int, v int, PRIMARY KEY (p, c))")
    s.execute(f"CREATE INDEX ON {t}(v)")
    view = f"{t}_v_idx_index"
    with pytest.raises(InvalidRequest, match="Cannot directly modify a materialized view"):
        s.execute(f"INSERT INTO {view} (v, idx_token, p, c) VALUES (1, 2, 3, 4)")
    with pytest.raises(InvalidRequest, match="Cannot use DROP TABLE on Materialized View"):
        s.execute(f"DROP TABLE {view}")
    with pytest.raises(InvalidRequest, match="Cannot TRUNCATE materialized view directly"):
        s.execute(f"TRUNCATE {view}")
    with pytest.raises(InvalidRequest, match="Cannot use ALTER TABLE on Materialized View"):
        s.execute(f"ALTER TABLE {view} WITH comment = 'x'")
    with pytest.raises(InvalidRequest,
                       match="Cannot rename column c because it has dependent secondary indexes"):
        s.execute(f"ALTER TABLE {t} RENAME c TO c2")
    for i in range(20):
        s.execute(f"INSERT INTO {t} (p, c, v) VALUES ({i}, 0, 1)")
    s.execute(f"TRUNCATE {t}")
    assert rows(s, f"SELECT * FROM {view}") == []
    s.execute(f"INSERT INTO {t} (p, c, v) VALUES (1, 1, 1)")
    assert rows(s, f"SELECT p, c FROM {t} WHERE v = 1") == [(1, 1)]


def test_index_empty_string(cql_env):
    # test_index_empty_string: '' is a value like any other
    s = cql_env.session
    t = table(cql_env, "(p int PRIMARY KEY, v text)")
    s.execute(f"CREATE INDEX ON {t}(v)")
    s.execute(f"INSERT INTO {t} (p, v) VALUES (1, 'hello')")
    s.execute(f"INSERT INTO {t} (p, v) VALUES (2, '')")
    assert rows(s, f"SELECT p FROM {t} WHERE v = ''") == [(2,)]
    s.execute(f"UPDATE {t} SET v = 'x' WHERE p = 2")
    assert rows(s, f"SELECT p FROM {t} WHERE v = ''") == []


@pytest.mark.parametrize("clustering", [False, True])
def test_filter_and_limit(cql_env, clustering):
    # test_filter_and_limit(_clustering) with the index: LIMIT counts the
    # rows after filtering, in one page or in pages of one row
    s = cql_env.session
    if clustering:
        t = table(cql_env, "(pk int, ck int, x int, y int, PRIMARY KEY (pk, ck))")
        ins = s.prepare(f"INSERT INTO {t} (pk, ck, x, y) VALUES (?, ?, 1, ?)")
        for i in range(8):
            s.execute(ins, [i, i % 2, i % 2])
    else:
        t = table(cql_env, "(pk int PRIMARY KEY, x int, y int)")
        ins = s.prepare(f"INSERT INTO {t} (pk, x, y) VALUES (?, 1, ?)")
        for i in range(8):
            s.execute(ins, [i, i % 2])
    s.execute(f"CREATE INDEX ON {t}(x)")
    q = f"SELECT pk FROM {t} WHERE x = 1 AND y = 0"
    assert sorted(rows(s, q + " ALLOW FILTERING")) == [(0,), (2,), (4,), (6,)]
    three = rows(s, q + " LIMIT 3 ALLOW FILTERING")
    assert len(three) == 3 and set(three) <= {(0,), (2,), (4,), (6,)}
    assert paged(s, q + " LIMIT 3 ALLOW FILTERING", 1) == three


def test_filter_cluster_key(cql_env):
    # test_filter_cluster_key
    s = cql_env.session
    t = table(cql_env, "(p int, c1 int, c2 int, PRIMARY KEY (p, c1, c2))")
    s.execute(f"CREATE INDEX ON {t}(c2)")
    s.execute(f"INSERT INTO {t} (p, c1, c2) VALUES (0, 1, 1)")
    s.execute(f"INSERT INTO {t} (p, c1, c2) VALUES (0, 0, 1)")
    assert rows(s, f"SELECT c1, c2 FROM {t} WHERE c1 = 1 AND c2 = 1 ALLOW FILTERING") == [(1, 1)]
    assert rows(s, f"SELECT c1 FROM {t} WHERE c2 = 1") == [(0,), (1,)]


def test_index_weird_chars_in_col_name(cql_env):
    # test_index_weird_chars_in_col_name: the default name keeps word characters only
    s = cql_env.session
    col = "/../x-y.z"
    t = table(cql_env, f'(pk int PRIMARY KEY, "{col}" int)')
    s.execute(f'CREATE INDEX ON {t}("{col}")')
    n = name_of(t)
    assert rows(s, "SELECT index_name FROM system_schema.indexes WHERE keyspace_name = %s "
                   "AND table_name = %s", [cql_env.ks, n]) == [(f"{n}_xyz_idx",)]
    s.execute(f'INSERT INTO {t} (pk, "{col}") VALUES (1, 5)')
    assert rows(s, f'SELECT pk FROM {t} WHERE "{col}" = 5') == [(1,)]


def test_partial_partition_key_with_index(cql_env):
    # the index gives the partitions; a restricted part of the key filters them
    s = cql_env.session
    t = table(cql_env, "(p1 int, p2 int, v int, PRIMARY KEY ((p1, p2)))")
    s.execute(f"CREATE INDEX ON {t}(v)")
    for p1 in range(3):
        for p2 in range(3):
            s.execute(f"INSERT INTO {t} (p1, p2, v) VALUES ({p1}, {p2}, 7)")
    with pytest.raises(InvalidRequest, match="ALLOW FILTERING"):
        s.execute(f"SELECT * FROM {t} WHERE p1 = 1 AND v = 7")
    assert sorted(rows(s, f"SELECT p1, p2 FROM {t} WHERE p1 = 1 AND v = 7 ALLOW FILTERING")) == \
        [(1, 0), (1, 1), (1, 2)]
    assert sorted(rows(s, f"SELECT p2 FROM {t} WHERE p1 IN (0, 2) AND v = 7 ALLOW FILTERING")) == \
        [(0,), (0,), (1,), (1,), (2,), (2,)]
    assert rows(s, f"SELECT p1, p2 FROM {t} WHERE p1 = 1 AND p2 = 2 AND v = 7") == [(1, 2)]


def test_index_list_and_set(cql_env):
    # test_index_list, test_index_set, test_index_map_values (shortened):
    # element by element, whole replacements, duplicates, deletions
    s = cql_env.session
    t = table(cql_env, "(pk int, ck int, l list<int>, st set<int>, m map<int, int>, "
                       "PRIMARY KEY (pk, ck))")
    with pytest.raises(InvalidRequest, match="ALLOW FILTERING"):
        s.execute(f"SELECT pk FROM {t} WHERE l CONTAINS 3")
    for c in ("l", "st", "m"):
        s.execute(f"CREATE INDEX ON {t}({c})")
    with pytest.raises(InvalidRequest, match="ALLOW FILTERING"):
        s.execute(f"SELECT pk FROM {t} WHERE m CONTAINS KEY 3")  # values(m) only

    def has(col, v):
        return rows(s, f"SELECT pk, ck FROM {t} WHERE {col} CONTAINS {v}") == [(1, 2)]

    assert not has("l", 3)
    s.execute(f"UPDATE {t} SET l = l + [7], st = st + {{7}}, m = m + {{10: 7}} "
              "WHERE pk = 1 AND ck = 2")
    s.execute(f"UPDATE {t} SET l = l + [8], st = st + {{8}}, m = m + {{11: 8}} "
              "WHERE pk = 1 AND ck = 2")
    assert all(has(c, v) for c in ("l", "st", "m") for v in (7, 8))
    s.execute(f"UPDATE {t} SET l = l - [7], st = st - {{7}} WHERE pk = 1 AND ck = 2")
    s.execute(f"DELETE m[10] FROM {t} WHERE pk = 1 AND ck = 2")
    assert not any(has(c, 7) for c in ("l", "st", "m"))
    assert all(has(c, 8) for c in ("l", "st", "m"))
    s.execute(f"INSERT INTO {t} (pk, ck, l, st, m) VALUES (1, 2, [2, 5], {{2, 5}}, {{3: 2, 4: 5}})")
    assert all(has(c, v) for c in ("l", "st", "m") for v in (2, 5))
    assert not any(has(c, 8) for c in ("l", "st", "m"))
    # a list holds a value twice: the row is found once, until both are gone
    s.execute(f"UPDATE {t} SET l = l + [2] WHERE pk = 1 AND ck = 2")
    assert has("l", 2)
    s.execute(f"DELETE l[0] FROM {t} WHERE pk = 1 AND ck = 2")
    assert has("l", 2)
    s.execute(f"DELETE l[1] FROM {t} WHERE pk = 1 AND ck = 2")
    assert not has("l", 2) and has("l", 5)
    s.execute(f"UPDATE {t} SET l[0] = 2 WHERE pk = 1 AND ck = 2")
    assert has("l", 2) and not has("l", 5)
    s.execute(f"UPDATE {t} SET l = [], st = {{}} WHERE pk = 1 AND ck = 2")
    assert not has("l", 2) and not has("st", 5)
    s.execute(f"DELETE m FROM {t} WHERE pk = 1 AND ck = 2")
    assert not has("m", 5)


def test_index_collection_wrong_type_and_names(cql_env):
    # test_index_collection_wrong_type, test_index_collection_default_name,
    # test_index_quoted_names (shortened)
    s = cql_env.session
    t = table(cql_env, "(pk int PRIMARY KEY, x int, l list<int>, st set<int>, "
                       "m map<int, int>, tp tuple<int, int>, \"keys(m)\" map<int, int>)")
    n = name_of(t)
    s.execute(f"CREATE INDEX ON {t}(x)")
    for fn in ("keys", "entries", "values"):
        with pytest.raises(InvalidRequest, match=f"{fn}\\(\\)"):
            s.execute(f"CREATE INDEX ON {t}({fn}(x))")
        with pytest.raises(InvalidRequest, match=f"{fn}\\(\\)"):
            s.execute(f"CREATE INDEX ON {t}({fn}(tp))")
    for c in ("l", "st"):
        s.execute(f"CREATE INDEX ON {t}({c})")
        for fn in ("keys", "entries"):
            with pytest.raises(InvalidRequest, match=f"{fn}\\(\\)"):
                s.execute(f"CREATE INDEX ON {t}({fn}({c}))")
        with pytest.raises(InvalidRequest, match="duplicate"):
            s.execute(f"CREATE INDEX ON {t}(values({c}))")
        s.execute(f"DROP INDEX {t}_{c}_idx")
        s.execute(f"CREATE INDEX ON {t}(values({c}))")
    s.execute(f"CREATE INDEX ON {t}(tp)")
    for c in ("tp", "l", "m", "st"):
        with pytest.raises(InvalidRequest, match="full\\(\\)"):
            s.execute(f"CREATE INDEX ON {t}(full({c}))")
    # m, keys(m) and entries(m) are three indexes: m_idx, m_idx_1, m_idx_2
    s.execute(f"CREATE INDEX ON {t}(m)")
    s.execute(f"CREATE INDEX ON {t}(keys(m))")
    s.execute(f"CREATE INDEX ON {t}(entries(m))")
    with pytest.raises(InvalidRequest, match="duplicate"):
        s.execute(f"CREATE INDEX ON {t}(values(m))")
    for i in ("m_idx", "m_idx_1", "m_idx_2"):
        s.execute(f"DROP INDEX {cql_env.ks}.{n}_{i}")
    # a quoted column that looks like a target function
    s.execute(f'CREATE INDEX ON {t}(keys("keys(m)"))')
    s.execute(f'INSERT INTO {t} (pk, "keys(m)", tp) VALUES (1, {{3: 4}}, (5, 6))')
    assert rows(s, f'SELECT pk FROM {t} WHERE "keys(m)" CONTAINS KEY 3') == [(1,)]
    assert rows(s, f"SELECT pk FROM {t} WHERE tp = (5, 6)") == [(1,)]


def full_pages(s, query, page_size):
    """Every page but the last is full (test_index_paging_pk_ck's check): all rows."""
    stmt = SimpleStatement(query, fetch_size=page_size)
    res = s.execute(stmt)
    got = list(res.current_rows)
    while res.paging_state is not None:
        assert len(res.current_rows) == page_size
        res = s.execute(stmt, paging_state=res.paging_state)
        got.extend(res.current_rows)
    assert len(res.current_rows) <= page_size
    return got


def test_index_paging_full_pages(cql_env):
    # test_index_paging_pk_ck, test_index_paging_pk_only, test_index_paging_group_by
    s = cql_env.session
    t1 = table(cql_env, "(p int, c int, x int, PRIMARY KEY (p, c))")
    t2 = table(cql_env, "(p int PRIMARY KEY, x int)")
    t3 = table(cql_env, "(p int, c1 int, c2 int, PRIMARY KEY (p, c1, c2))")
    for t in (t1, t2):
        s.execute(f"CREATE INDEX ON {t}(x)")
    s.execute(f"CREATE INDEX ON {t3}(c1)")
    for i in range(10):
        s.execute(f"INSERT INTO {t1} (p, c, x) VALUES ({i}, {i}, 3)")
        s.execute(f"INSERT INTO {t2} (p, x) VALUES ({i}, 3)")
        s.execute(f"INSERT INTO {t3} (p, c1, c2) VALUES ({i}, 1, {i})")
    s.execute(f"INSERT INTO {t1} (p, c, x) VALUES (17, 17, 2)")
    s.execute(f"INSERT INTO {t2} (p, x) VALUES (17, 2)")
    s.execute(f"INSERT INTO {t3} (p, c1, c2) VALUES (17, 17, 2)")
    for ps in (1, 2, 3, 100):
        for q in (f"SELECT p FROM {t1} WHERE x = 3", f"SELECT p FROM {t2} WHERE x = 3",
                  f"SELECT p FROM {t3} WHERE c1 = 1"):
            assert sorted(full_pages(s, q, ps)) == [(i,) for i in range(10)]


def test_static_column_index_semantics(cql_env):
    # test_static_column_index, _build, _unaffected_by_clustering_row_ops,
    # _all_clustering_rows_moved_by_static_column_update
    s = cql_env.session
    t = table(cql_env, "(pk int, c int, s int STATIC, v int, PRIMARY KEY (pk, c))")
    s.execute(f"INSERT INTO {t} (pk, s) VALUES (9, 5)")
    s.execute(f"CREATE INDEX ON {t}(s)")
    assert rows(s, f"SELECT pk FROM {t} WHERE s = 5") == [(9,)]  # built from a static row
    s.execute(f"INSERT INTO {t} (pk, c, s, v) VALUES (0, 0, 42, 0)")
    for c in range(1, 5):
        s.execute(f"INSERT INTO {t} (pk, c, v) VALUES (0, {c}, {c * 10})")
    assert rows(s, f"SELECT pk FROM {t} WHERE s = 42") == [(0,)] * 5
    s.execute(f"DELETE FROM {t} WHERE pk = 0 AND c = 4")
    assert rows(s, f"SELECT pk FROM {t} WHERE s = 42") == [(0,)] * 4
    s.execute(f"DELETE FROM {t} WHERE pk = 0 AND c >= 1 AND c < 3")
    assert rows(s, f"SELECT pk FROM {t} WHERE s = 42") == [(0,)] * 2
    s.execute(f"DELETE FROM {t} WHERE pk = 0 AND c >= 0 AND c <= 4")
    assert rows(s, f"SELECT pk, c FROM {t} WHERE s = 42") == [(0, None)]  # the static row stays
    s.execute(f"DELETE FROM {t} WHERE pk = 0")
    assert rows(s, f"SELECT pk FROM {t} WHERE s = 42") == []
    for pk in range(2):
        s.execute(f"INSERT INTO {t} (pk, c, s, v) VALUES ({pk}, 0, 0, 0)")
        s.execute(f"INSERT INTO {t} (pk, c, v) VALUES ({pk}, 1, 10)")
    s.execute(f"UPDATE {t} SET s = 1 WHERE pk = 1")
    assert sorted(rows(s, f"SELECT pk, c, v FROM {t} WHERE s = 0")) == [(0, 0, 0), (0, 1, 10)]
    assert sorted(rows(s, f"SELECT pk, c, v FROM {t} WHERE s = 1")) == [(1, 0, 0), (1, 1, 10)]
