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
    with pytest.raises(InvalidRequest, match="not supported by shardmark"):
        s.execute(f"BEGIN BATCH UPDATE {t} SET v = 2 WHERE p = 1 AND c = 1 IF v = 1; "
                  f"UPDATE {t} SET v = 2 WHERE p = 1 AND c = 2 IF v = 1; APPLY BATCH")


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
