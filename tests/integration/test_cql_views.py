# SPDX-License-Identifier: BSD-3-Clause
"""CQL materialized views: CREATE / DROP / ALTER MATERIALIZED VIEW with
ScyllaDB's checks and messages, system_schema.views as the Python driver
reads it, view maintenance on every write path (INSERT, UPDATE, DELETE of
cells, rows, ranges and partitions, TTL, LWT, BATCH), the view key's
regular column changing (the old view row goes), the backfill of a view
created on existing rows, and reads of the view (partition, clustering
restrictions, paging). Rewritten after ScyllaDB's
test/cqlpy/test_materialized_view.py (the ScyllaDB test's name is given
where one is ported).
"""

import time

import pytest

pytest.importorskip("cassandra")

from cassandra import InvalidRequest  # noqa: E402
from cassandra.query import BatchStatement, SimpleStatement  # noqa: E402

from conftest import cql_new_table as table, cql_rows as rows, cql_unique_name  # noqa: E402


def view(env, base, body):
    v = f"{env.ks}.{cql_unique_name('mv')}"
    env.session.execute(f"CREATE MATERIALIZED VIEW {v} AS SELECT {body.replace('BASE', base)}")
    return v


def test_create_and_read(cql_env):
    # test_mv_select_stmt: a view keyed by a regular column, read by its key
    s = cql_env.session
    t = table(cql_env, "(p int, c int, v int, w text, PRIMARY KEY (p, c))")
    v = view(cql_env, t, "* FROM BASE WHERE v IS NOT NULL AND p IS NOT NULL AND c IS NOT NULL "
             "PRIMARY KEY (v, p, c)")
    s.execute(f"INSERT INTO {t} (p, c, v, w) VALUES (1, 2, 3, 'a')")
    s.execute(f"INSERT INTO {t} (p, c, v, w) VALUES (1, 3, 3, 'b')")
    s.execute(f"INSERT INTO {t} (p, c, v, w) VALUES (2, 1, 4, 'c')")
    assert rows(s, f"SELECT * FROM {v} WHERE v = 3") == [(3, 1, 2, 'a'), (3, 1, 3, 'b')]
    assert rows(s, f"SELECT w FROM {v} WHERE v = 3 AND p = 1 AND c > 2") == [('b',)]
    assert sorted(rows(s, f"SELECT v, p, c FROM {v}")) == [(3, 1, 2), (3, 1, 3), (4, 2, 1)]
    with pytest.raises(InvalidRequest, match="Cannot directly modify a materialized view"):
        s.execute(f"INSERT INTO {v} (v, p, c) VALUES (1, 1, 1)")


def test_view_of_key_columns_only(cql_env):
    # Found by fuzz-cql: a view selecting no column outside its key
    # (nsel 0) offset a null scratch array in its backfill and maintenance
    # (clang's UBSan; tests/fuzz/corpus/cql/views-key-columns-only replays
    # it in the fuzz stage); its rows live as long as the base rows.
    s = cql_env.session
    t = table(cql_env, "(pk int, ck text, v blob, s int static, PRIMARY KEY (pk, ck)) "
              "WITH CLUSTERING ORDER BY (ck DESC)")
    s.execute(f"INSERT INTO {t} (pk, ck, v, s) VALUES (1, 'a', 0x01, 7)")
    v = view(cql_env, t, "pk, ck FROM BASE WHERE ck IS NOT NULL PRIMARY KEY (ck, pk) "
             "WITH CLUSTERING ORDER BY (pk DESC)")
    s.execute(f"INSERT INTO {t} (pk, ck, v) VALUES (2, 'a', 0x02)")
    s.execute(f"INSERT INTO {t} (pk, ck) VALUES (3, 'b')")
    deadline = time.monotonic() + 30
    while rows(s, f"SELECT pk FROM {v} WHERE ck = 'a'") != [(2,), (1,)]:
        assert time.monotonic() < deadline, rows(s, f"SELECT * FROM {v}")
        time.sleep(0.05)
    assert rows(s, f"SELECT pk FROM {v} WHERE ck = 'b'") == [(3,)]
    s.execute(f"DELETE FROM {t} WHERE pk = 2 AND ck = 'a'")
    assert rows(s, f"SELECT pk FROM {v} WHERE ck = 'a'") == [(1,)]


def test_key_column_change(cql_env):
    # test_mv_update_of_view_key / shadowable tombstone: v moves away and back
    s = cql_env.session
    t = table(cql_env, "(p int PRIMARY KEY, v int, w int)")
    v = view(cql_env, t, "* FROM BASE WHERE v IS NOT NULL PRIMARY KEY (v, p)")
    s.execute(f"INSERT INTO {t} (p, v, w) VALUES (1, 10, 100)")
    s.execute(f"UPDATE {t} SET v = 20 WHERE p = 1")
    assert rows(s, f"SELECT * FROM {v}") == [(20, 1, 100)]
    s.execute(f"UPDATE {t} SET v = 10 WHERE p = 1")
    assert rows(s, f"SELECT * FROM {v}") == [(10, 1, 100)]
    s.execute(f"UPDATE {t} SET w = 7 WHERE p = 1")
    assert rows(s, f"SELECT * FROM {v}") == [(10, 1, 7)]
    s.execute(f"UPDATE {t} SET v = null WHERE p = 1")
    assert rows(s, f"SELECT * FROM {v}") == []
    s.execute(f"UPDATE {t} SET v = 5 WHERE p = 1")
    assert rows(s, f"SELECT * FROM {v}") == [(5, 1, 7)]
    s.execute(f"DELETE FROM {t} WHERE p = 1")
    assert rows(s, f"SELECT * FROM {v}") == []


def test_deletes(cql_env):
    # cell, row, range and partition deletions reach the view
    s = cql_env.session
    t = table(cql_env, "(p int, c int, v int, PRIMARY KEY (p, c))")
    v = view(cql_env, t, "p, c, v FROM BASE WHERE p IS NOT NULL AND c IS NOT NULL "
             "PRIMARY KEY (c, p)")
    for c in range(6):
        s.execute(f"INSERT INTO {t} (p, c, v) VALUES (1, {c}, {c})")
        s.execute(f"INSERT INTO {t} (p, c, v) VALUES (2, {c}, {c})")
    s.execute(f"DELETE v FROM {t} WHERE p = 1 AND c = 0")
    assert rows(s, f"SELECT * FROM {v} WHERE c = 0") == [(0, 1, None), (0, 2, 0)]
    s.execute(f"DELETE FROM {t} WHERE p = 1 AND c = 1")
    assert rows(s, f"SELECT p FROM {v} WHERE c = 1") == [(2,)]
    s.execute(f"DELETE FROM {t} WHERE p = 1 AND c >= 4")
    assert rows(s, f"SELECT p FROM {v} WHERE c = 4") == [(2,)]
    s.execute(f"DELETE FROM {t} WHERE p = 2")
    assert sorted(rows(s, f"SELECT c, p FROM {v}")) == [(0, 1), (2, 1), (3, 1)]


def test_unselected_column_keeps_row(cql_env):
    # test_mv_unselected_column: a row alive through a column the view does
    # not hold is in the view (ScyllaDB's virtual columns)
    s = cql_env.session
    t = table(cql_env, "(p int, c int, x int, y int, PRIMARY KEY (p, c))")
    v = view(cql_env, t, "p, c, x FROM BASE WHERE p IS NOT NULL AND c IS NOT NULL "
             "PRIMARY KEY (c, p)")
    s.execute(f"UPDATE {t} SET y = 1 WHERE p = 1 AND c = 2")
    assert rows(s, f"SELECT * FROM {v}") == [(2, 1, None)]
    s.execute(f"UPDATE {t} SET y = null WHERE p = 1 AND c = 2")
    assert rows(s, f"SELECT * FROM {v}") == []
    s.execute(f"UPDATE {t} SET x = 3 WHERE p = 1 AND c = 2")
    assert rows(s, f"SELECT * FROM {v}") == [(2, 1, 3)]


def test_ttl(cql_env):
    # test_mv_ttl: a view row expires with its base row
    s = cql_env.session
    t = table(cql_env, "(p int PRIMARY KEY, v int, w int)")
    v = view(cql_env, t, "* FROM BASE WHERE v IS NOT NULL PRIMARY KEY (v, p)")
    s.execute(f"INSERT INTO {t} (p, v, w) VALUES (1, 2, 3) USING TTL 1")
    s.execute(f"INSERT INTO {t} (p, v, w) VALUES (2, 2, 3)")
    assert len(rows(s, f"SELECT * FROM {v}")) == 2
    ttl = rows(s, f"SELECT TTL(w) FROM {v} WHERE v = 2 AND p = 1")
    assert ttl and 0 < ttl[0][0] <= 1
    deadline = time.time() + 10
    while len(rows(s, f"SELECT * FROM {v}")) != 1 and time.time() < deadline:
        time.sleep(0.1)
    assert rows(s, f"SELECT * FROM {v}") == [(2, 2, 3)]


def test_lwt_and_batch(cql_env):
    s = cql_env.session
    t = table(cql_env, "(p int PRIMARY KEY, v int)")
    v = view(cql_env, t, "* FROM BASE WHERE v IS NOT NULL PRIMARY KEY (v, p)")
    s.execute(f"INSERT INTO {t} (p, v) VALUES (1, 1) IF NOT EXISTS")
    s.execute(f"UPDATE {t} SET v = 2 WHERE p = 1 IF v = 1")
    b = BatchStatement()
    b.add(f"INSERT INTO {t} (p, v) VALUES (2, 5)")
    b.add(f"INSERT INTO {t} (p, v) VALUES (3, 5)")
    s.execute(b)
    assert sorted(rows(s, f"SELECT v, p FROM {v}")) == [(2, 1), (5, 2), (5, 3)]


def test_backfill_and_paging(cql_env):
    # test_mv_populating_from_existing_data, read back in pages
    s = cql_env.session
    t = table(cql_env, "(p int, c int, v int, PRIMARY KEY (p, c))")
    ins = s.prepare(f"INSERT INTO {t} (p, c, v) VALUES (?, ?, ?)")
    for p in range(30):
        for c in range(10):
            s.execute(ins, [p, c, p % 3])
    v = view(cql_env, t, "* FROM BASE WHERE v IS NOT NULL AND c IS NOT NULL "
             "PRIMARY KEY (v, p, c) WITH CLUSTERING ORDER BY (p DESC, c ASC)")
    got = [tuple(r) for r in s.execute(SimpleStatement(f"SELECT p, c FROM {v} WHERE v = 1",
                                                       fetch_size=7))]
    want = [(p, c) for p in sorted(range(1, 30, 3), reverse=True) for c in range(10)]
    assert got == want
    assert len([r for r in s.execute(SimpleStatement(f"SELECT * FROM {v}", fetch_size=50))]) == 300


def test_errors(cql_env):
    # create_view_statement.cc's messages (test_mv_* refusals)
    s = cql_env.session
    ks = cql_env.ks
    t = table(cql_env, "(p int, c int, v int, w int, st int static, m map<int, int>, "
              "PRIMARY KEY (p, c))")
    n = cql_unique_name("mv")

    def bad(body, match):
        with pytest.raises(InvalidRequest, match=match):
            s.execute(f"CREATE MATERIALIZED VIEW {ks}.{n} AS SELECT {body.replace('BASE', t)}")

    bad("p, c FROM BASE WHERE c IS NOT NULL PRIMARY KEY (p)",
        r"without primary key columns from base .* \(c\)")
    bad("p, c, v FROM BASE WHERE c IS NOT NULL PRIMARY KEY (v, p, c)",
        "Primary key column 'v' is required to be filtered by 'IS NOT NULL'")
    bad("p, c FROM BASE WHERE c IS NOT NULL AND v IS NOT NULL AND w IS NOT NULL "
        "PRIMARY KEY ((v, w), p, c)", "Cannot include more than one non-primary key column")
    bad("p, c, st FROM BASE WHERE c IS NOT NULL PRIMARY KEY (c, p)",
        "Unable to include static column 'st'")
    bad("p, c FROM BASE WHERE c IS NOT NULL AND m IS NOT NULL PRIMARY KEY (m, p, c)",
        "Cannot use MultiCell column 'm' in PRIMARY KEY of materialized view")
    bad("p, c, nosuch FROM BASE WHERE c IS NOT NULL PRIMARY KEY (c, p)",
        "Unknown column name detected in CREATE MATERIALIZED VIEW statement: nosuch")
    bad("p AS q, c FROM BASE WHERE c IS NOT NULL PRIMARY KEY (c, p)",
        "Cannot use alias when defining a materialized view")
    bad("p, c FROM BASE WHERE c IS NOT NULL PRIMARY KEY (c, p) WITH default_time_to_live = 5",
        "Cannot set or alter default_time_to_live for a materialized view")
    bad("p, c FROM BASE WHERE c IS NOT NULL PRIMARY KEY (c, p) WITH CLUSTERING ORDER BY (c DESC)",
        "CLUSTERING ORDER BY lists c which is not a clustering column in the view")
    bad("p, c FROM BASE WHERE c IS NOT NULL PRIMARY KEY (c, c, p)",
        "Duplicate entry found in PRIMARY KEY: c")
    ct = table(cql_env, "(p int PRIMARY KEY, n counter)")
    with pytest.raises(InvalidRequest, match="not supported on counter tables"):
        s.execute(f"CREATE MATERIALIZED VIEW {ks}.{n} AS SELECT * FROM {ct} "
                  "WHERE p IS NOT NULL PRIMARY KEY (p)")


def test_ddl(cql_env):
    # test_drop_table_with_mv, test_alter_mv, DROP ... IF EXISTS, IF NOT EXISTS
    s = cql_env.session
    ks = cql_env.ks
    t = table(cql_env, "(p int PRIMARY KEY, v int)")
    n = cql_unique_name("mv")
    q = f"CREATE MATERIALIZED VIEW {ks}.{n} AS SELECT * FROM {t} WHERE v IS NOT NULL PRIMARY KEY (v, p)"
    s.execute(q)
    s.execute(q.replace("VIEW", "VIEW IF NOT EXISTS", 1))
    with pytest.raises(InvalidRequest, match="Cannot drop table when materialized views still depend on it"):
        s.execute(f"DROP TABLE {t}")
    with pytest.raises(InvalidRequest, match="Cannot use DROP TABLE on Materialized View"):
        s.execute(f"DROP TABLE {ks}.{n}")
    with pytest.raises(InvalidRequest, match="Cannot use ALTER TABLE on Materialized View"):
        s.execute(f"ALTER TABLE {ks}.{n} WITH comment = 'x'")
    with pytest.raises(InvalidRequest, match="Cannot use ALTER MATERIALIZED VIEW on Table"):
        s.execute(f"ALTER MATERIALIZED VIEW {t} WITH comment = 'x'")
    with pytest.raises(InvalidRequest, match="Cannot drop column v from base table"):
        s.execute(f"ALTER TABLE {t} DROP v")
    s.execute(f"ALTER MATERIALIZED VIEW {ks}.{n} WITH comment = 'hello'")
    with pytest.raises(InvalidRequest, match="default_time_to_live"):
        s.execute(f"ALTER MATERIALIZED VIEW {ks}.{n} WITH default_time_to_live = 3")
    with pytest.raises(InvalidRequest, match="Secondary indexes are not supported on materialized views"):
        s.execute(f"CREATE INDEX ON {ks}.{n}(p)")
    s.execute(f"INSERT INTO {t} (p, v) VALUES (1, 2)")
    s.execute(f"TRUNCATE {t}")
    assert rows(s, f"SELECT * FROM {ks}.{n}") == []
    # the driver's metadata has the view, its columns, not among the tables
    r = rows(s, "SELECT base_table_name, include_all_columns, where_clause, comment "
             "FROM system_schema.views WHERE keyspace_name = %s AND view_name = %s", [ks, n])
    assert r == [(t.split(".")[1], True, "v IS NOT NULL", "hello")]
    assert rows(s, "SELECT table_name FROM system_schema.tables WHERE keyspace_name = %s "
                "AND table_name = %s", [ks, n]) == []
    assert sorted(rows(s, "SELECT column_name, kind FROM system_schema.columns WHERE "
                       "keyspace_name = %s AND table_name = %s", [ks, n])) == \
        [("p", "clustering"), ("v", "partition_key")]
    cql_env.cluster.refresh_schema_metadata()
    meta = cql_env.cluster.metadata.keyspaces[ks]
    assert n in meta.views and n not in meta.tables
    assert n in meta.tables[t.split(".")[1]].views
    s.execute(f"DROP MATERIALIZED VIEW {ks}.{n}")
    s.execute(f"DROP MATERIALIZED VIEW IF EXISTS {ks}.{n}")
    with pytest.raises(InvalidRequest, match="Cannot drop non existing materialized view"):
        s.execute(f"DROP MATERIALIZED VIEW {ks}.{n}")
    s.execute(f"DROP TABLE {t}")


def test_mv_empty_string_partition_key(cql_env):
    # test_mv_empty_string_partition_key: the view's partition key may be ''
    s = cql_env.session
    t = table(cql_env, "(p int PRIMARY KEY, v text)")
    v = view(cql_env, t, "* FROM BASE WHERE v IS NOT NULL AND p IS NOT NULL PRIMARY KEY (v, p)")
    s.execute(f"INSERT INTO {t} (p, v) VALUES (123, '')")
    assert rows(s, f"SELECT * FROM {v}") == [('', 123)]
    assert rows(s, f"SELECT * FROM {v} WHERE v = ''") == [('', 123)]


def test_view_of_frozen_and_clustering_desc(cql_env):
    # test_mv_frozen_collection / CLUSTERING ORDER BY of the view
    s = cql_env.session
    t = table(cql_env, "(p int, c int, f frozen<list<int>>, PRIMARY KEY (p, c))")
    v = view(cql_env, t, "* FROM BASE WHERE c IS NOT NULL AND f IS NOT NULL "
             "PRIMARY KEY (p, f, c) WITH CLUSTERING ORDER BY (f DESC, c ASC)")
    s.execute(f"INSERT INTO {t} (p, c, f) VALUES (1, 1, [1, 2])")
    s.execute(f"INSERT INTO {t} (p, c, f) VALUES (1, 2, [3])")
    assert rows(s, f"SELECT f, c FROM {v} WHERE p = 1") == [([3], 2), ([1, 2], 1)]
    m = table(cql_env, "(p int PRIMARY KEY, m map<int, int>)")
    with pytest.raises(InvalidRequest, match="non-frozen collection"):
        view(cql_env, m, "* FROM BASE WHERE p IS NOT NULL PRIMARY KEY (p)")
    # a view leaving the map out is fine
    view(cql_env, m, "p FROM BASE WHERE p IS NOT NULL PRIMARY KEY (p)")


def test_writetime_and_ttl_copied(cql_env):
    # view cells carry their base cells' write times and TTLs
    s = cql_env.session
    t = table(cql_env, "(p int PRIMARY KEY, x int, y int)")
    v = view(cql_env, t, "* FROM BASE WHERE p IS NOT NULL PRIMARY KEY (p)")
    s.execute(f"INSERT INTO {t} (p, x) VALUES (1, 1) USING TIMESTAMP 1000")
    s.execute(f"UPDATE {t} USING TIMESTAMP 2000 AND TTL 500 SET y = 2 WHERE p = 1")
    r = rows(s, f"SELECT x, writetime(x), y, writetime(y), ttl(y) FROM {v} WHERE p = 1")
    assert r[0][:4] == (1, 1000, 2, 2000) and 400 < r[0][4] <= 500
    # an older write loses in the base, so in the view too
    s.execute(f"UPDATE {t} USING TIMESTAMP 1500 SET y = 9 WHERE p = 1")
    assert rows(s, f"SELECT y FROM {v}") == [(2,)]


def test_mv_is_not_null(cql_env):
    # test_mv_is_not_null: a null view key keeps the row out of the view
    s = cql_env.session
    t = table(cql_env, "(p int PRIMARY KEY, v text)")
    v = view(cql_env, t, "* FROM BASE WHERE v IS NOT NULL AND p IS NOT NULL PRIMARY KEY (v, p)")
    s.execute(f"INSERT INTO {t} (p, v) VALUES (123, 'dog')")
    s.execute(f"INSERT INTO {t} (p, v) VALUES (17, null)")
    assert rows(s, f"SELECT * FROM {v}") == [('dog', 123)]
    s.execute(f"UPDATE {t} SET v = null WHERE p = 123")
    assert rows(s, f"SELECT * FROM {v}") == []
    s.execute(f"UPDATE {t} SET v = 'cat' WHERE p = 123")
    assert rows(s, f"SELECT * FROM {v}") == [('cat', 123)]
    s.execute(f"DELETE v FROM {t} WHERE p = 123")
    assert rows(s, f"SELECT * FROM {v}") == []


@pytest.mark.parametrize("build", [False, True])
def test_mv_quoted_column_names(cql_env, build):
    # test_mv_quoted_column_names and test_mv_quoted_column_names_build
    s = cql_env.session
    for col in ['"dog"', '"Dog"', 'DOG', '"to"', '"int"']:
        t = table(cql_env, f"(p int PRIMARY KEY, {col} int)")
        if build:
            s.execute(f"INSERT INTO {t} (p, {col}) VALUES (1, 2)")
        v = view(cql_env, t, f"* FROM BASE WHERE {col} IS NOT NULL AND p IS NOT NULL "
                 f"PRIMARY KEY ({col}, p)")
        if not build:
            s.execute(f"INSERT INTO {t} (p, {col}) VALUES (1, 2)")
        assert rows(s, f"SELECT * FROM {v}") == [(2, 1)]


def test_refusals_from_scylla(cql_env):
    # test_static_columns_are_disallowed, test_is_not_operator_must_be_null,
    # test_is_not_null_forbidden_in_filter, test_mv_select_stmt_bound_values
    from cassandra.protocol import SyntaxException
    s = cql_env.session
    ks = cql_env.ks
    t = table(cql_env, "(p int, c int, v int, s int static, PRIMARY KEY (p, c))")
    n = f"{ks}.{cql_unique_name('mv')}"
    for q in (f"SELECT p, s FROM {t} PRIMARY KEY (p)", f"SELECT * FROM {t} PRIMARY KEY (p)",
              f"SELECT p, s FROM {t} WHERE s IS NOT NULL PRIMARY KEY (s, p)"):
        with pytest.raises(InvalidRequest, match="[Ss]tatic column"):
            s.execute(f"CREATE MATERIALIZED VIEW {n} AS {q}")
    t2 = table(cql_env, "(p int PRIMARY KEY, xyz int)")
    with pytest.raises(SyntaxException, match="NULL"):
        s.execute(f"CREATE MATERIALIZED VIEW {n} AS SELECT * FROM {t2} WHERE p IS NOT 42 "
                  "PRIMARY KEY (p)")
    with pytest.raises(InvalidRequest, match="xyz"):
        s.execute(f"CREATE MATERIALIZED VIEW {n} AS SELECT * FROM {t2} WHERE p IS NOT NULL "
                  "AND xyz IS NOT NULL PRIMARY KEY (p)")
    with pytest.raises(InvalidRequest, match="CREATE MATERIALIZED VIEW"):
        s.execute(f"CREATE MATERIALIZED VIEW {n} AS SELECT * FROM {t2} WHERE p = ? "
                  "PRIMARY KEY (p)")
    s.execute(f"DROP MATERIALIZED VIEW IF EXISTS {n}")


def test_view_builder_suspend_with_partition_tombstone(cql_env):
    # test_view_builder_suspend_with_partition_tombstone: more rows than one
    # backfill step (128), half of them deleted before the view exists
    s = cql_env.session
    t = table(cql_env, "(pk int, ck int, v int, PRIMARY KEY (pk, ck))")
    ins = s.prepare(f"INSERT INTO {t} (pk, ck, v) VALUES (?, ?, ?)")
    for ck in range(0, 512, 2):
        s.execute(ins, (0, ck, ck))
    s.execute(f"DELETE FROM {t} WHERE pk = 0")
    for ck in range(1, 512, 2):
        s.execute(ins, (0, ck, ck))
    v = view(cql_env, t, "* FROM BASE WHERE v IS NOT NULL AND pk IS NOT NULL AND ck IS NOT NULL "
             "PRIMARY KEY (v, pk, ck)")
    assert sorted(r.v for r in s.execute(f"SELECT * FROM {v}")) == list(range(1, 512, 2))


def test_view_with_index_and_added_column(cql_env):
    # an index and a view on one table, and a column added to the base after
    # the view: it keeps a row alive as the other unselected columns do
    s = cql_env.session
    t = table(cql_env, "(p int, c int, v int, PRIMARY KEY (p, c))")
    s.execute(f"CREATE INDEX ON {t}(v)")
    v = view(cql_env, t, "p, c FROM BASE WHERE c IS NOT NULL PRIMARY KEY (c, p)")
    s.execute(f"ALTER TABLE {t} ADD x int")
    w = view(cql_env, t, "* FROM BASE WHERE c IS NOT NULL AND v IS NOT NULL "
             "PRIMARY KEY (v, c, p)")
    with pytest.raises(InvalidRequest, match="not supported by shardmark yet: ALTER TABLE"):
        s.execute(f"ALTER TABLE {t} ADD y int")
    s.execute(f"UPDATE {t} SET x = 1 WHERE p = 1 AND c = 2")
    assert rows(s, f"SELECT * FROM {v}") == [(2, 1)]
    s.execute(f"UPDATE {t} SET v = 3 WHERE p = 1 AND c = 2")
    assert rows(s, f"SELECT p FROM {t} WHERE v = 3") == [(1,)]
    assert rows(s, f"SELECT v, c, p, x FROM {w}") == [(3, 2, 1, 1)]
    s.execute(f"DELETE x FROM {t} WHERE p = 1 AND c = 2")
    assert rows(s, f"SELECT * FROM {v}") == [(2, 1)]  # v keeps it alive
    s.execute(f"DELETE v FROM {t} WHERE p = 1 AND c = 2")
    assert rows(s, f"SELECT * FROM {v}") == [] and rows(s, f"SELECT * FROM {w}") == []
    with pytest.raises(InvalidRequest, match="not supported by shardmark yet"):
        s.execute(f"ALTER TABLE {t} RENAME c TO cc")
