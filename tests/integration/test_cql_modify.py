# SPDX-License-Identifier: BSD-3-Clause
"""CQL endpoint: the WHERE forms of UPDATE and DELETE that ScyllaDB accepts
beyond equality: IN on clustering columns (one write per key of the
cartesian product, whole rows or clustering prefixes), with ScyllaDB's
refusals (slices after IN, IN with IF conditions), through the Python
driver's simple and prepared statements. Rewritten after ScyllaDB's
test/cqlpy/cassandra_tests/validation/operations/delete_test.py
(testDeleteWithInClauseOnClusteringColumns and its neighbours) and
update_test.py.
"""

import pytest

pytest.importorskip("cassandra")

from cassandra import InvalidRequest  # noqa: E402

from conftest import cql_new_table as table, cql_rows as rows  # noqa: E402


def fill(s, t):
    p = s.prepare(f"INSERT INTO {t} (p, b, c, v) VALUES (?, ?, ?, ?)")
    for b in range(1, 4):
        for c in range(1, 3):
            s.execute(p, [1, b, c, 10 * b + c])


def test_delete_in_clustering(cql_env):
    s = cql_env.session
    t = table(cql_env, "(p int, b int, c int, v int, PRIMARY KEY (p, b, c))")
    fill(s, t)
    s.execute(f"DELETE FROM {t} WHERE p = 1 AND b IN (1, 2) AND c = 1")
    assert rows(s, f"SELECT b, c FROM {t} WHERE p = 1") == [(1, 2), (2, 2), (3, 1), (3, 2)]
    p = s.prepare(f"DELETE FROM {t} WHERE p = ? AND b IN (?, ?)")
    s.execute(p, [1, 2, 3])
    assert rows(s, f"SELECT b, c FROM {t} WHERE p = 1") == [(1, 2)]
    s.execute(f"DELETE FROM {t} WHERE p IN (1, 2) AND b IN (1, 2) AND c IN (1, 2)")
    assert rows(s, f"SELECT * FROM {t}") == []


def test_update_in_clustering(cql_env):
    s = cql_env.session
    t = table(cql_env, "(p int, b int, c int, v int, PRIMARY KEY (p, b, c))")
    fill(s, t)
    s.execute(f"UPDATE {t} SET v = 0 WHERE p = 1 AND b = 2 AND c IN (1, 2)")
    s.execute(f"UPDATE {t} SET v = 7 WHERE p = 1 AND b IN (3, 4) AND c = 1")
    assert rows(s, f"SELECT b, c, v FROM {t} WHERE p = 1") == \
        [(1, 1, 11), (1, 2, 12), (2, 1, 0), (2, 2, 0), (3, 1, 7), (3, 2, 32), (4, 1, 7)]


def test_in_clustering_refusals(cql_env):
    s = cql_env.session
    t = table(cql_env, "(p int, b int, c int, v int, PRIMARY KEY (p, b, c))")
    with pytest.raises(InvalidRequest, match="A range deletion must restrict the clustering "
                       "columns before the ranged one by equality"):
        s.execute(f"DELETE FROM {t} WHERE p = 1 AND b IN (1, 2) AND c > 1")
    with pytest.raises(InvalidRequest, match="IN on the clustering key columns is not "
                       "supported with conditional deletions"):
        s.execute(f"DELETE FROM {t} WHERE p = 1 AND b = 1 AND c IN (1, 2) IF EXISTS")
    with pytest.raises(InvalidRequest, match="IN on the clustering key columns is not "
                       "supported with conditional updates"):
        s.execute(f"UPDATE {t} SET v = 1 WHERE p = 1 AND b = 1 AND c IN (1, 2) IF v = 1")
    with pytest.raises(InvalidRequest, match="cartesian product"):
        s.execute(f"DELETE FROM {t} WHERE p = 1 AND b IN ({', '.join(map(str, range(11)))}) "
                  f"AND c IN ({', '.join(map(str, range(11)))})")


def test_conditional_batch_spans(cql_env):
    # batch_statement.cc validate(): a conditional batch stays in one table's partition
    from cassandra.query import BatchStatement
    s = cql_env.session
    t = table(cql_env, "(p int, c int, v int, PRIMARY KEY (p, c))")
    o = table(cql_env, "(p int PRIMARY KEY, v int)")
    for q, msg in [(f"INSERT INTO {t} (p, c, v) VALUES (2, 1, 1)",
                    "Batch with conditions cannot span multiple partitions"),
                   (f"INSERT INTO {o} (p, v) VALUES (1, 1)",
                    "Batch with conditions cannot span multiple tables")]:
        with pytest.raises(InvalidRequest, match=msg):
            s.execute(f"BEGIN BATCH INSERT INTO {t} (p, c, v) VALUES (1, 1, 1) IF NOT EXISTS; "
                      f"{q}; APPLY BATCH")
        b = BatchStatement()
        b.add(s.prepare(f"INSERT INTO {t} (p, c, v) VALUES (?, ?, ?) IF NOT EXISTS"), [1, 1, 1])
        b.add(q)
        with pytest.raises(InvalidRequest, match=msg):
            s.execute(b)
    # nothing of a refused batch was written; a one-statement one applies
    assert rows(s, f"SELECT * FROM {t}") == []
    assert s.execute(f"BEGIN BATCH INSERT INTO {t} (p, c, v) VALUES (1, 1, 1) IF NOT EXISTS; "
                     "APPLY BATCH").one()[0]


def test_conditional_batch_of_one_row(cql_env):
    # batch_test.py testBatchWithConditions (the statements on one row): every
    # condition holds or nothing is written, in one Paxos round
    from cassandra.query import BatchStatement
    s = cql_env.session
    t = table(cql_env, "(p int, c int, v int, w int, PRIMARY KEY (p, c))")
    r = s.execute(f"BEGIN BATCH INSERT INTO {t} (p, c, v) VALUES (1, 1, 1) IF NOT EXISTS; "
                  f"UPDATE {t} SET w = 5 WHERE p = 1 AND c = 1; APPLY BATCH").one()
    assert r[0]
    assert not s.execute(f"BEGIN BATCH INSERT INTO {t} (p, c, v) VALUES (1, 1, 2) IF NOT EXISTS; "
                         f"UPDATE {t} SET w = 6 WHERE p = 1 AND c = 1; APPLY BATCH").one()[0]
    assert rows(s, f"SELECT v, w FROM {t} WHERE p = 1") == [(1, 5)]
    assert s.execute(f"BEGIN BATCH UPDATE {t} SET v = 3 WHERE p = 1 AND c = 1 IF v = 1; "
                     f"UPDATE {t} SET w = 7 WHERE p = 1 AND c = 1 IF w = 5; APPLY BATCH").one()[0]
    assert not s.execute(f"BEGIN BATCH UPDATE {t} SET v = 4 WHERE p = 1 AND c = 1 IF v = 3; "
                         f"UPDATE {t} SET w = 8 WHERE p = 1 AND c = 1 IF w = 99; APPLY BATCH"
                         ).one()[0]
    assert rows(s, f"SELECT v, w FROM {t} WHERE p = 1") == [(3, 7)]
    b = BatchStatement()
    b.add(s.prepare(f"UPDATE {t} SET v = ? WHERE p = 1 AND c = 1 IF v = ?"), [9, 3])
    b.add(s.prepare(f"DELETE w FROM {t} WHERE p = 1 AND c = 1"))
    assert s.execute(b).one()[0]
    assert rows(s, f"SELECT v, w FROM {t} WHERE p = 1") == [(9, None)]


def test_conditional_batch_over_several_rows(cql_env):
    # cas_request.cc: every statement a row update of the one partition, all
    # conditions hold or nothing is written (one Paxos round), and a result
    # row per statement: [applied], the primary key and the union of the
    # statements' result columns from that row before the batch
    # (batch_statement.cc build_cas_result_set_metadata(); after
    # cassandra_tests/validation/operations/batch_test.py testBatchWithConditions)
    from cassandra.query import BatchStatement
    s = cql_env.session
    t = table(cql_env, "(p int, c int, v int, w int, PRIMARY KEY (p, c))")
    s.execute(f"INSERT INTO {t} (p, c, v) VALUES (1, 1, 1)")
    r = s.execute(f"BEGIN BATCH UPDATE {t} SET v = 2 WHERE p = 1 AND c = 1 IF v = 1; "
                  f"INSERT INTO {t} (p, c, v) VALUES (1, 2, 20) IF NOT EXISTS; "
                  f"INSERT INTO {t} (p, c, v) VALUES (1, 3, 30); APPLY BATCH")
    # (the driver's was_applied wants one row unless the query is a BatchStatement)
    assert r.column_names == ["[applied]", "p", "c", "v", "w"]
    assert [tuple(x) for x in r] == [(True, 1, 1, 1, None), (True, None, None, None, None),
                                     (True, None, None, None, None)]
    assert rows(s, f"SELECT c, v FROM {t} WHERE p = 1") == [(1, 2), (2, 20), (3, 30)]
    # one condition fails: nothing of the batch is written, every row says why
    r = s.execute(f"BEGIN BATCH UPDATE {t} SET v = 3 WHERE p = 1 AND c = 1 IF v = 1; "
                  f"UPDATE {t} SET v = 21 WHERE p = 1 AND c = 2 IF v = 20; "
                  f"DELETE FROM {t} WHERE p = 1 AND c = 3; APPLY BATCH")
    assert r.column_names == ["[applied]", "p", "c", "v"]
    assert [tuple(x) for x in r] == [(False, 1, 1, 2), (False, 1, 2, 20), (False, 1, 3, 30)]
    assert rows(s, f"SELECT c, v FROM {t} WHERE p = 1") == [(1, 2), (2, 20), (3, 30)]
    # IF EXISTS on one row, IF NOT EXISTS on another, prepared and bound
    b = BatchStatement()
    b.add(s.prepare(f"DELETE FROM {t} WHERE p = ? AND c = ? IF EXISTS"), [1, 3])
    b.add(s.prepare(f"INSERT INTO {t} (p, c, v) VALUES (?, ?, ?) IF NOT EXISTS"), [1, 4, 40])
    b.add(s.prepare(f"UPDATE {t} SET w = ? WHERE p = ? AND c = ? IF v = ?"), [7, 1, 2, 20])
    r = s.execute(b)
    assert r.was_applied and len(r.current_rows) == 3
    assert rows(s, f"SELECT c, v, w FROM {t} WHERE p = 1") == \
        [(1, 2, None), (2, 20, 7), (4, 40, None)]
    b = BatchStatement()
    b.add(s.prepare(f"INSERT INTO {t} (p, c, v) VALUES (?, ?, ?) IF NOT EXISTS"), [1, 5, 50])
    b.add(s.prepare(f"INSERT INTO {t} (p, c, v) VALUES (?, ?, ?) IF NOT EXISTS"), [1, 4, 41])
    r = s.execute(b)
    assert not r.was_applied
    assert [tuple(x)[:4] for x in r.current_rows] == [(False, None, None, None), (False, 1, 4, 40)]
    assert rows(s, f"SELECT c, v FROM {t} WHERE p = 1") == [(1, 2), (2, 20), (4, 40)]


def test_conditional_batch_over_several_rows_with_an_index_is_refused(cql_env):
    s = cql_env.session
    t = table(cql_env, "(p int, c int, v int, PRIMARY KEY (p, c))")
    s.execute(f"CREATE INDEX ON {t} (v)")
    with pytest.raises(InvalidRequest, match="not supported by shardmark: conditional batches "
                       "over several rows .* secondary indexes or materialized views"):
        s.execute(f"BEGIN BATCH INSERT INTO {t} (p, c, v) VALUES (1, 1, 1) IF NOT EXISTS; "
                  f"INSERT INTO {t} (p, c, v) VALUES (1, 2, 2) IF NOT EXISTS; APPLY BATCH")
    assert rows(s, f"SELECT * FROM {t}") == []
    # one row still goes, maintaining the index
    assert s.execute(f"BEGIN BATCH INSERT INTO {t} (p, c, v) VALUES (1, 1, 1) IF NOT EXISTS; "
                     f"UPDATE {t} SET v = 2 WHERE p = 1 AND c = 1; APPLY BATCH").one()[0]
    assert rows(s, f"SELECT c FROM {t} WHERE v = 2") == [(1,)]


def test_conditional_batch_with_range_and_partition_deletions(cql_env):
    # batch_test.py testBatchTTLConditionalInteraction: a clustering range
    # deletion beside a condition, one Paxos round (no row of its own to read)
    s = cql_env.session
    t = table(cql_env, "(id int, a int, b int, val int, PRIMARY KEY (id, a, b))")
    for a, b in ((1, 1), (1, 2), (2, 1), (2, 2)):
        s.execute(f"INSERT INTO {t} (id, a, b, val) VALUES (1, {a}, {b}, {10 * a + b})")
    r = list(s.execute(f"BEGIN BATCH DELETE FROM {t} WHERE id = 1 AND a = 2; "
                       f"UPDATE {t} SET val = 0 WHERE id = 1 AND a = 1 AND b = 1 IF val = 11; "
                       "APPLY BATCH"))
    assert [x[0] for x in r] == [True, True]
    assert rows(s, f"SELECT a, b, val FROM {t} WHERE id = 1") == [(1, 1, 0), (1, 2, 12)]
    r = list(s.execute(f"BEGIN BATCH DELETE FROM {t} WHERE id = 1; "
                       f"UPDATE {t} SET val = 5 WHERE id = 1 AND a = 1 AND b = 2 IF val = 99; "
                       "APPLY BATCH"))
    assert [x[0] for x in r] == [False, False]
    assert rows(s, f"SELECT a, b, val FROM {t} WHERE id = 1") == [(1, 1, 0), (1, 2, 12)]
