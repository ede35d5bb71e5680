# SPDX-License-Identifier: BSD-3-Clause
"""CQL endpoint: statements ScyllaDB refuses, refused with its messages, and
the filtering forms that need ALLOW FILTERING and work with it, through the
Python driver's simple and prepared statements. Rewritten after ScyllaDB's
test/cqlpy/test_filtering.py, test_null.py and cassandra_tests/validation/
operations/select_limit_test.py and delete_test.py (names given test by
test).
"""

import pytest

pytest.importorskip("cassandra")

from cassandra import InvalidRequest  # noqa: E402

from conftest import cql_new_table as table, cql_rows as rows  # noqa: E402

FILTERING = "Cannot execute this query as it might involve data filtering"


@pytest.fixture(scope="module")
def mc(cql_env):
    t = table(cql_env, "(p int, b int, c int, v int, PRIMARY KEY (p, b, c))")
    p = cql_env.session.prepare(f"INSERT INTO {t} (p, b, c, v) VALUES (?, ?, ?, ?)")
    for r in [(1, 1, 1, 1), (1, 1, 2, 2), (2, 2, 1, 3)]:
        cql_env.session.execute(p, r)
    return t


def test_clustering_restrictions_over_partitions_need_filtering(cql_env, mc):
    # test_filtering.py test_filtering_on_clustering_key (and its neighbours)
    s = cql_env.session
    for q in [f"SELECT * FROM {mc} WHERE b = 1", f"SELECT * FROM {mc} WHERE b > 1",
              f"SELECT * FROM {mc} WHERE token(p) > 0 AND b = 1",
              f"SELECT * FROM {mc} WHERE (b, c) > (1, 1)"]:
        with pytest.raises(InvalidRequest, match=FILTERING):
            s.execute(q)
    assert rows(s, f"SELECT b, c FROM {mc} WHERE b = 1 ALLOW FILTERING") == [(1, 1), (1, 2)]
    assert sorted(rows(s, f"SELECT p, c FROM {mc} WHERE c = 1 ALLOW FILTERING")) == \
        [(1, 1), (2, 1)]
    p = s.prepare(f"SELECT c FROM {mc} WHERE b = ? AND c > ? ALLOW FILTERING")
    assert rows(s, p, [1, 1]) == [(2,)]
    # a partition key restricted: the clustering slice needs nothing
    assert rows(s, f"SELECT c FROM {mc} WHERE p = 1 AND b = 1 AND c > 1") == [(2,)]
    with pytest.raises(InvalidRequest, match="cannot be restricted as preceding column"):
        s.execute(f"SELECT * FROM {mc} WHERE p = 1 AND c = 1")
    assert rows(s, f"SELECT v FROM {mc} WHERE p = 1 AND c = 2 ALLOW FILTERING") == [(2,)]


def test_null_key_restrictions(cql_env, mc):
    # test_null.py test_null_in_where (clustering and partition keys)
    s = cql_env.session
    for q in [f"SELECT * FROM {mc} WHERE p = 1 AND b = null",
              f"SELECT * FROM {mc} WHERE p = null"]:
        with pytest.raises(InvalidRequest, match="Invalid null value in condition for column"):
            s.execute(q)
    p = s.prepare(f"SELECT * FROM {mc} WHERE p = 1 AND b = ?")
    with pytest.raises(InvalidRequest, match="Invalid null value in condition for column b"):
        s.execute(p, [None])


def test_limit_forms(cql_env, mc):
    # select_limit_test.py testPerPartitionLimit and its refusals
    s = cql_env.session
    assert rows(s, f"SELECT p, c FROM {mc} PER PARTITION LIMIT 1") in \
        ([(1, 1), (2, 1)], [(2, 1), (1, 1)])
    for q, msg in [(f"SELECT * FROM {mc} PER PARTITION LIMIT 0", "LIMIT must be strictly "
                    "positive"),
                   (f"SELECT * FROM {mc} LIMIT 0", "LIMIT must be strictly positive"),
                   (f"SELECT DISTINCT p FROM {mc} PER PARTITION LIMIT 1",
                    "PER PARTITION LIMIT is not allowed with SELECT DISTINCT queries"),
                   (f"SELECT count(*) FROM {mc} PER PARTITION LIMIT 1",
                    "PER PARTITION LIMIT is not allowed with aggregate queries.")]:
        with pytest.raises(InvalidRequest, match=msg):
            s.execute(q)


def test_delete_column_needs_the_whole_key(cql_env, mc):
    s = cql_env.session
    with pytest.raises(InvalidRequest, match="Primary key column 'c' must be specified in order "
                       "to delete column 'v'"):
        s.execute(f"DELETE v FROM {mc} WHERE p = 1 AND b = 1")
