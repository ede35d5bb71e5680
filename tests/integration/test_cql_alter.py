# SPDX-License-Identifier: BSD-3-Clause
"""CQL endpoint: ALTER TABLE (ADD, DROP, ALTER ... TYPE, RENAME, WITH),
ALTER KEYSPACE and the table properties of CREATE TABLE, checked as ScyllaDB
checks them (cql3/statements/alter_table_statement.cc, cf_prop_defs.cc,
alter_keyspace_statement.cc), through the Python driver's simple and
prepared statements. Rewritten after ScyllaDB's test/cqlpy/
cassandra_tests/validation/operations/alter_test.py and
test/cqlpy/test_alter_table.py (the names are given test by test).
"""

import pytest

pytest.importorskip("cassandra")

from cassandra import InvalidRequest  # noqa: E402
from cassandra.protocol import ConfigurationException, SyntaxException  # noqa: E402

from conftest import cql_new_table as table, cql_rows as rows, cql_unique_name  # noqa: E402

DC = "datacenter1"


def test_drop_column_prepared(cql_env):
    # alter_test.py testDropColumnAsPreparedStatement
    s = cql_env.session
    t = table(cql_env, "(key int PRIMARY KEY, value int)")
    prepared = s.prepare(f"ALTER TABLE {t} DROP value")
    s.execute(f"INSERT INTO {t} (key, value) VALUES (1, 1)")
    assert rows(s, f"SELECT * FROM {t}") == [(1, 1)]
    s.execute(prepared)
    assert rows(s, f"SELECT * FROM {t}") == [(1,)]
    s.execute(f"ALTER TABLE {t} ADD value int")
    assert rows(s, f"SELECT * FROM {t}") == [(1, None)]


def test_add_and_drop_collections(cql_env):
    # testAddList, testDropList, testAddMap, testDropMap, testAlterStatementWithAdd
    s = cql_env.session
    t = table(cql_env, "(id text PRIMARY KEY, content text)")
    s.execute(f"ALTER TABLE {t} ADD myCollection list<text>")
    s.execute(f"INSERT INTO {t} (id, content, myCollection) VALUES ('test', 'first', ['e'])")
    assert rows(s, f"SELECT * FROM {t}") == [("test", "first", ["e"])]
    s.execute(f"ALTER TABLE {t} DROP myCollection")
    assert rows(s, f"SELECT * FROM {t}") == [("test", "first")]
    s.execute(f"ALTER TABLE {t} ADD (m map<text, text>, z int)")
    s.execute(f"UPDATE {t} SET m = {{'1': 'x'}} WHERE id = 'test'")
    assert rows(s, f"SELECT * FROM {t}") == [("test", "first", {"1": "x"}, None)]
    # columns after the key in name order, as ScyllaDB lists them
    t2 = table(cql_env, "(id int PRIMARY KEY, t text)")
    s.execute(f"UPDATE {t2} SET t = '111' WHERE id = 1")
    s.execute(f"ALTER TABLE {t2} ADD l list<text>")
    assert rows(s, f"SELECT * FROM {t2}") == [(1, None, "111")]
    s.execute(f"ALTER TABLE {t2} ADD m map<int, text>")
    assert rows(s, f"SELECT * FROM {t2}") == [(1, None, None, "111")]


def test_drop_and_readd(cql_env):
    # testDropListAndAddListWithSameName, testDropListAndAddMapWithSameName,
    # testDowngradeToCompact
    s = cql_env.session
    t = table(cql_env, "(id text PRIMARY KEY, content text, myCollection list<text>)")
    s.execute(f"INSERT INTO {t} (id, content, myCollection) VALUES ('test', 'first', ['e'])")
    s.execute(f"ALTER TABLE {t} DROP myCollection")
    with pytest.raises(InvalidRequest, match="a collection with the same name and a different "
                       "type has already been used in the past"):
        s.execute(f"ALTER TABLE {t} ADD myCollection map<int, int>")
    s.execute(f"ALTER TABLE {t} ADD myCollection list<text>")
    assert rows(s, f"SELECT * FROM {t}") == [("test", "first", None)]
    s.execute(f"UPDATE {t} SET myCollection = ['second'] WHERE id = 'test'")
    assert rows(s, f"SELECT * FROM {t}") == [("test", "first", ["second"])]
    dropped = rows(s, "SELECT column_name, type FROM system_schema.dropped_columns "
                   "WHERE keyspace_name = %s AND table_name = %s", t.split("."))
    assert dropped == [("mycollection", "list<text>")]


def test_only_column_dropped(cql_env):
    # testAlterOnlyColumnBehaviorWithFlush (without the flush): a row that
    # only had the dropped column is gone
    s = cql_env.session
    t = table(cql_env, "(k int PRIMARY KEY, x int, y int)")
    s.execute(f"UPDATE {t} SET x = 1 WHERE k = 0")
    assert rows(s, f"SELECT * FROM {t}") == [(0, 1, None)]
    s.execute(f"ALTER TABLE {t} DROP x")
    assert rows(s, f"SELECT * FROM {t}") == []
    t = table(cql_env, "(k int PRIMARY KEY, x int, y int)")
    s.execute(f"UPDATE {t} SET x = 1, y = 1 WHERE k = 0")
    s.execute(f"ALTER TABLE {t} DROP x")
    assert rows(s, f"SELECT * FROM {t}") == [(0, 1)]


def test_static_and_drop_with_timestamp(cql_env):
    s = cql_env.session
    t = table(cql_env, "(id int, c1 int, v1 int, todrop int, PRIMARY KEY (id, c1))")
    s.execute(f"INSERT INTO {t} (id, c1, v1, todrop) VALUES (1, 0, 0, 0)")
    s.execute(f"ALTER TABLE {t} DROP (todrop, v1) USING TIMESTAMP 20000")
    s.execute(f"ALTER TABLE {t} ADD s int static")
    s.execute(f"UPDATE {t} SET s = 7 WHERE id = 1")
    assert rows(s, f"SELECT * FROM {t}") == [(1, 0, 7)]
    k = cql_unique_name("t")
    s.execute(f"CREATE TABLE {cql_env.ks}.{k} (a int PRIMARY KEY, b int)")
    with pytest.raises(InvalidRequest, match="Static columns are only useful"):
        s.execute(f"ALTER TABLE {cql_env.ks}.{k} ADD s int static")


def test_alter_errors(cql_env):
    s = cql_env.session
    t = table(cql_env, "(a int, b int, c int, PRIMARY KEY (a, b))")
    name = t.split(".")[1]
    for q, msg in [
        (f"ALTER TABLE {t} ADD a int", "Invalid column name a because it conflicts with a "
         "PRIMARY KEY part"),
        (f"ALTER TABLE {t} ADD c int", "Invalid column name c because it conflicts with an "
         "existing column"),
        (f"ALTER TABLE {t} ADD d counter", r"Cannot add a counter column \(d\) in a non counter "
         "column family"),
        (f"ALTER TABLE {t} DROP z", f"Column z was not found in table {name}"),
        (f"ALTER TABLE {t} DROP b", "Cannot drop PRIMARY KEY part b"),
        (f"ALTER TABLE {t} RENAME z TO y", f"Cannot rename unknown column z in table {name}"),
        (f"ALTER TABLE {t} RENAME a TO b", f"Cannot rename column a to b in table {name}; "
         "another column of that name already exist"),
        (f"ALTER TABLE {t} RENAME c TO d", "Cannot rename non PRIMARY KEY part c"),
        (f"ALTER TABLE {t} ALTER z TYPE int", f"Column z was not found in table {name}"),
        (f"ALTER TABLE {cql_env.ks}.nosuch ADD x int", "unconfigured table nosuch"),
    ]:
        with pytest.raises(InvalidRequest, match=msg):
            s.execute(q)
    with pytest.raises(ConfigurationException, match="Cannot change c from type int to type "
                       "text: types are incompatible."):
        s.execute(f"ALTER TABLE {t} ALTER c TYPE text")
    s.execute(f"ALTER TABLE {t} ALTER c TYPE int")
    with pytest.raises(ConfigurationException, match="Cannot alter table id."):
        s.execute(f"ALTER TABLE {t} WITH id = 'e7a3ea70-4d4a-11ee-8a4b-9c7e4b8f3a2c'")
    with pytest.raises(SyntaxException):
        s.execute(f"ALTER TABLE {t} FROB c")


def test_rename_key_columns(cql_env):
    s = cql_env.session
    t = table(cql_env, "(a int, b int, c int, PRIMARY KEY (a, b))")
    s.execute(f"INSERT INTO {t} (a, b, c) VALUES (1, 2, 3)")
    s.execute(f"ALTER TABLE {t} RENAME a TO x AND b TO y")
    assert rows(s, f"SELECT x, y, c FROM {t} WHERE x = 1 AND y = 2") == [(1, 2, 3)]
    p = s.prepare(f"SELECT c FROM {t} WHERE x = ?")
    assert rows(s, p, [1]) == [(3,)]


def driver_options(env, t):
    ks, cf = t.split(".")
    env.cluster.refresh_table_metadata(ks, cf)
    return env.cluster.metadata.keyspaces[ks].tables[cf].options


def test_alter_index_interval(cql_env):
    # testAlterIndexInterval, testChangeStrategyWithUnquotedAgrument
    s = cql_env.session
    t = table(cql_env, "(id uuid, album text, data blob, PRIMARY KEY (id))")
    s.execute(f"ALTER TABLE {t} WITH min_index_interval=256 AND max_index_interval=512")
    options = driver_options(cql_env, t)
    assert options["min_index_interval"] == 256
    assert options["max_index_interval"] == 512
    s.execute(f"ALTER TABLE {t} WITH caching = {{}}")
    options = driver_options(cql_env, t)
    assert options["min_index_interval"] == 256
    with pytest.raises(SyntaxException):
        s.execute(f"ALTER TABLE {t} WITH caching = {{'keys' : 'all', 'rows_per_partition' : ALL}}")


def test_default_ttl_by_alter(cql_env):
    s = cql_env.session
    t = table(cql_env, "(k int PRIMARY KEY, v int)")
    s.execute(f"ALTER TABLE {t} WITH default_time_to_live = 1000")
    s.execute(f"INSERT INTO {t} (k, v) VALUES (1, 1)")
    ttl = rows(s, f"SELECT TTL(v) FROM {t} WHERE k = 1")[0][0]
    assert 990 <= ttl <= 1000
    with pytest.raises(ConfigurationException,
                       match=r"default_time_to_live cannot be smaller than 0, \(default 0\)"):
        s.execute(f"ALTER TABLE {t} WITH default_time_to_live = -1")
    c = table(cql_env, "(k int PRIMARY KEY, n counter)")
    with pytest.raises(InvalidRequest, match="Cannot set default_time_to_live on a table with "
                       "counters"):
        s.execute(f"ALTER TABLE {c} WITH default_time_to_live = 10")


@pytest.mark.parametrize("percentile", ["-0", "0", "+0", "0.1", "99.9", "100", "+100"])
def test_valid_percentile_speculative_retry(cql_env, percentile):
    # test_alter_table.py test_valid_percentile_speculative_retry_values
    t = table(cql_env, "(id uuid PRIMARY KEY, value text)")
    cql_env.session.execute(f"ALTER TABLE {t} WITH speculative_retry = '{percentile}PERCENTILE'")


@pytest.mark.parametrize("percentile", ["-1.1", "-0.1", "100.1", "101", "+101", "dog"])
def test_invalid_percentile_speculative_retry(cql_env, percentile):
    # test_alter_table.py test_invalid_percentile_speculative_retry_values
    t = table(cql_env, "(id uuid PRIMARY KEY, value text)")
    p = percentile.upper()
    with pytest.raises(ConfigurationException,
                       match=f"(Invalid value {p}PERCENTILE for PERCENTILE option "
                       f"'speculative_retry'|cannot convert {p}PERCENTILE to speculative_retry)"
                       .replace("+", r"\+").replace(".", r"\.")):
        cql_env.session.execute(f"ALTER TABLE {t} WITH speculative_retry = '{percentile}PERCENTILE'")


def test_table_properties(cql_env):
    s = cql_env.session
    name = f"{cql_env.ks}.{cql_unique_name('t')}"
    for props, exc, msg in [
        ("foo = 1", SyntaxException, "Unknown property 'foo'"),
        ("compaction = {'min_threshold': 4}", ConfigurationException,
         "Missing sub-option 'class' for the 'compaction' option."),
        ("compaction = {'class': 'Foo'}", ConfigurationException,
         "Unable to find compaction strategy class 'Foo'"),
        ("compaction = {'class': 'SizeTieredCompactionStrategy', 'foo': 'bar'}",
         ConfigurationException, "Invalid compaction strategy options"),
        ("bloom_filter_fp_chance = 2", ConfigurationException,
         "bloom_filter_fp_chance must be larger than 6.71e-05 and less than or equal to 1.0"),
        ("comment = {'a': 'b'}", SyntaxException, "It should be a string"),
        ("compaction = 'x'", SyntaxException, "It should be a map"),
        ("caching = {'keys': 'SOME'}", ConfigurationException, "Invalid key value: SOME"),
        ("memtable_flush_period_in_ms = 5", ConfigurationException,
         "memtable_flush_period_in_ms must be 0 or greater than 60000"),
        ("min_index_interval = 0", ConfigurationException,
         "min_index_interval must be greater than 0"),
        ("gc_grace_seconds = 'x'", SyntaxException, "Invalid integer value x for 'gc_grace_seconds'"),
    ]:
        with pytest.raises(exc, match=msg):
            s.execute(f"CREATE TABLE {name} (k int PRIMARY KEY) WITH {props}")
    s.execute(f"CREATE TABLE {name} (k int PRIMARY KEY) WITH compaction = "
              "{'class': 'SizeTieredCompactionStrategy', 'min_threshold': 7} AND "
              "comment = 'hi' AND speculative_retry = '50percentile' AND read_repair_chance = 0")
    ks, cf = name.split(".")
    r = s.execute("SELECT comment, speculative_retry, compaction FROM system_schema.tables "
                  "WHERE keyspace_name = %s AND table_name = %s", [ks, cf]).one()
    assert r.comment == "hi"
    assert r.speculative_retry == "50.0PERCENTILE"
    assert r.compaction["min_threshold"] == "7"


def test_alter_keyspace(cql_env):
    # alter_test.py testCreateAlterKeyspaces (durable_writes, replication),
    # testAlterKeyspaceWithNoOptionThrowsConfigurationException,
    # testAlterKeyspaceWithNTSOnlyAcceptsConfiguredDataCenterNames,
    # testAlterKeyspaceWithMultipleInstancesOfSameDCThrowsSyntaxException, testDoubleWith
    s = cql_env.session
    ks = cql_unique_name("ks")
    s.execute(f"CREATE KEYSPACE {ks} WITH replication = {{'class': 'SimpleStrategy', "
              "'replication_factor': 1}")
    q = "SELECT durable_writes, replication FROM system_schema.keyspaces WHERE keyspace_name = %s"
    s.execute(f"ALTER KEYSPACE {ks} WITH replication = {{'class': 'NetworkTopologyStrategy', "
              f"'{DC}': 1}} AND durable_writes = false")
    r = s.execute(q, [ks]).one()
    assert not r.durable_writes
    assert r.replication == {"class": "org.apache.cassandra.locator.NetworkTopologyStrategy",
                             DC: "1"}
    s.execute(f"ALTER KEYSPACE {ks} WITH durable_writes = true")
    r = s.execute(q, [ks]).one()
    assert r.durable_writes and r.replication[DC] == "1"
    for stmt, exc in [
        (f"ALTER KEYSPACE {ks} WITH replication = {{'class': 'SimpleStrategy'}}",
         ConfigurationException),
        (f"ALTER KEYSPACE {ks} WITH replication = {{'class': 'NetworkTopologyStrategy'}}",
         ConfigurationException),
        (f"ALTER KEYSPACE {ks} WITH replication = {{'replication_factor': 1}}",
         ConfigurationException),
        (f"ALTER KEYSPACE {ks} WITH replication = {{'class': 'NetworkTopologyStrategy', "
         f"'{DC}': 2, '{DC}': 1}}", SyntaxException),
        ("ALTER KEYSPACE WITH WITH DURABLE_WRITES = true", SyntaxException),
        (f"ALTER KEYSPACE {ks} WITH WITH DURABLE_WRITES = true", SyntaxException),
    ]:
        with pytest.raises(exc):
            s.execute(stmt)
    with pytest.raises(ConfigurationException, match="Unrecognized strategy option {INVALID_DC} "
                       "passed to .*NetworkTopologyStrategy"):
        s.execute(f"ALTER KEYSPACE {ks} WITH replication = {{'class': 'NetworkTopologyStrategy', "
                  f"'{DC}': 1, 'INVALID_DC': 1}}")
    with pytest.raises(InvalidRequest, match="Cannot alter system keyspace"):
        s.execute("ALTER KEYSPACE system WITH durable_writes = true")
    with pytest.raises(InvalidRequest, match="Can't find a keyspace nosuch_ks"):
        s.execute("ALTER KEYSPACE nosuch_ks WITH durable_writes = true")
    s.execute(f"DROP KEYSPACE {ks}")
