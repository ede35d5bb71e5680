# SPDX-License-Identifier: BSD-3-Clause
"""CQL endpoint: lightweight transactions through the DataStax Python driver.

Result shape follows ScyllaDB: column 0 is [applied], then the pre-image
columns, present whether applied or not (all table columns for IF [NOT]
EXISTS, the condition columns for IF conditions). SERIAL reads, SERIAL as a
plain write consistency (rejected), and concurrent compare-and-set
increments from 8 threads.
"""

import threading
import time

import pytest

pytest.importorskip("cassandra")

from cassandra import ConsistencyLevel, InvalidRequest  # noqa: E402
from cassandra.query import SimpleStatement  # noqa: E402

from conftest import cql_expect_error  # noqa: E402


@pytest.fixture(scope="module")
def lwt(cql_env):
    t = f"{cql_env.ks}.lwt"
    cql_env.session.execute(f"CREATE TABLE {t} (k int PRIMARY KEY, v int, w text)")
    return t


def test_insert_if_not_exists(cql_env, lwt):
    session = cql_env.session
    rs = session.execute(f"INSERT INTO {lwt} (k, v, w) VALUES (1, 1, 'a') IF NOT EXISTS")
    assert rs.column_names[0] == "[applied]", rs.column_names
    assert rs.column_names == ["[applied]", "k", "v", "w"], \
        f"ScyllaDB convention: [applied] then every column: {rs.column_names}"
    row = rs.one()
    assert row[0] is True and rs.was_applied
    assert tuple(row[1:]) == (None, None, None), f"pre-image of a missing row: {row}"

    rs = session.execute(f"INSERT INTO {lwt} (k, v, w) VALUES (1, 2, 'b') IF NOT EXISTS")
    assert rs.column_names == ["[applied]", "k", "v", "w"]
    row = rs.one()
    assert row[0] is False and not rs.was_applied
    assert tuple(row[1:]) == (1, 1, "a"), f"not applied should return the existing row: {row}"
    assert row.applied is False  # the named tuple's name for [applied]
    assert tuple(session.execute(f"SELECT v, w FROM {lwt} WHERE k = 1").one()) == (1, "a")

    ps = session.prepare(f"INSERT INTO {lwt} (k, v, w) VALUES (?, ?, ?) IF NOT EXISTS")
    assert session.execute(ps, (2, 20, "x")).was_applied
    rs = session.execute(ps, (2, 21, "y"))
    assert not rs.was_applied and tuple(rs.one()[1:]) == (2, 20, "x")


def test_update_if_condition(cql_env, lwt):
    session = cql_env.session
    session.execute(f"INSERT INTO {lwt} (k, v, w) VALUES (10, 1, 'a')")

    rs = session.execute(f"UPDATE {lwt} SET v = 2 WHERE k = 10 IF v = 1")
    assert rs.column_names == ["[applied]", "v"], rs.column_names
    assert rs.was_applied and tuple(rs.one()) == (True, 1)

    rs = session.execute(f"UPDATE {lwt} SET v = 3 WHERE k = 10 IF v = 1")
    assert not rs.was_applied
    assert tuple(rs.one()) == (False, 2), f"not applied should return the current v: {rs.one()}"
    assert session.execute(f"SELECT v FROM {lwt} WHERE k = 10").one().v == 2

    rs = session.execute(f"UPDATE {lwt} SET w = 'b' WHERE k = 10 IF v = 2 AND w = 'a'")
    assert rs.column_names == ["[applied]", "v", "w"], rs.column_names
    assert rs.was_applied and tuple(rs.one()) == (True, 2, "a")
    rs = session.execute(f"UPDATE {lwt} SET w = 'c' WHERE k = 10 IF v > 5")
    assert not rs.was_applied and tuple(rs.one()) == (False, 2)
    rs = session.execute(f"UPDATE {lwt} SET w = 'd' WHERE k = 10 IF w IN ('x', 'b')")
    assert rs.was_applied
    rs = session.execute(f"UPDATE {lwt} SET w = 'e' WHERE k = 10 IF w != 'd'")
    assert not rs.was_applied and tuple(rs.one()) == (False, "d")

    # A condition on a missing row is not applied; its pre-image is null.
    rs = session.execute(f"UPDATE {lwt} SET v = 1 WHERE k = 11 IF v = 1")
    assert not rs.was_applied and tuple(rs.one()) == (False, None)
    assert session.execute(f"SELECT * FROM {lwt} WHERE k = 11").one() is None
    rs = session.execute(f"UPDATE {lwt} SET v = 1 WHERE k = 11 IF v = null")
    assert rs.was_applied, "IF v = null holds for a missing row"

    ps = session.prepare(f"UPDATE {lwt} SET v = ? WHERE k = ? IF v = ?")
    assert session.execute(ps, (5, 10, 2)).was_applied
    rs = session.execute(ps, (6, 10, 2))
    assert not rs.was_applied and tuple(rs.one()) == (False, 5)


def test_update_and_delete_if_exists(cql_env, lwt):
    session = cql_env.session
    rs = session.execute(f"UPDATE {lwt} SET v = 1 WHERE k = 20 IF EXISTS")
    assert not rs.was_applied
    assert rs.column_names[0] == "[applied]"
    assert session.execute(f"SELECT * FROM {lwt} WHERE k = 20").one() is None

    session.execute(f"INSERT INTO {lwt} (k, v, w) VALUES (20, 0, 'z')")
    rs = session.execute(f"UPDATE {lwt} SET v = 1 WHERE k = 20 IF EXISTS")
    assert rs.was_applied
    assert rs.column_names == ["[applied]", "k", "v", "w"], rs.column_names
    assert tuple(rs.one()) == (True, 20, 0, "z")
    assert session.execute(f"SELECT v FROM {lwt} WHERE k = 20").one().v == 1

    rs = session.execute(f"DELETE FROM {lwt} WHERE k = 20 IF EXISTS")
    assert rs.was_applied and tuple(rs.one()) == (True, 20, 1, "z")
    assert session.execute(f"SELECT * FROM {lwt} WHERE k = 20").one() is None
    rs = session.execute(f"DELETE FROM {lwt} WHERE k = 20 IF EXISTS")
    assert not rs.was_applied and tuple(rs.one()[1:]) == (None, None, None)

    session.execute(f"INSERT INTO {lwt} (k, v, w) VALUES (21, 7, 'q')")
    rs = session.execute(f"DELETE FROM {lwt} WHERE k = 21 IF v = 8")
    assert not rs.was_applied and tuple(rs.one()) == (False, 7)
    rs = session.execute(f"DELETE w FROM {lwt} WHERE k = 21 IF v = 7")
    assert rs.was_applied
    assert tuple(session.execute(f"SELECT v, w FROM {lwt} WHERE k = 21").one()) == (7, None)


def test_serial_reads_and_serial_write_rejected(cql_env, lwt):
    session = cql_env.session
    session.execute(f"INSERT INTO {lwt} (k, v, w) VALUES (30, 3, 's') IF NOT EXISTS")
    for cl in (ConsistencyLevel.SERIAL, ConsistencyLevel.LOCAL_SERIAL):
        stmt = SimpleStatement(f"SELECT v, w FROM {lwt} WHERE k = 30", consistency_level=cl)
        assert tuple(session.execute(stmt).one()) == (3, "s")
        stmt = SimpleStatement(f"SELECT v FROM {lwt} WHERE k = 31", consistency_level=cl)
        assert session.execute(stmt).one() is None
    ps = session.prepare(f"SELECT v FROM {lwt} WHERE k = ?")
    ps.consistency_level = ConsistencyLevel.SERIAL
    assert session.execute(ps, (30,)).one().v == 3

    # An LWT with LOCAL_SERIAL as its Paxos consistency.
    stmt = SimpleStatement(f"UPDATE {lwt} SET v = 4 WHERE k = 30 IF v = 3",
                           serial_consistency_level=ConsistencyLevel.LOCAL_SERIAL)
    assert session.execute(stmt).was_applied

    for cl in (ConsistencyLevel.SERIAL, ConsistencyLevel.LOCAL_SERIAL):
        stmt = SimpleStatement(f"INSERT INTO {lwt} (k, v) VALUES (32, 1)", consistency_level=cl)
        cql_expect_error(session, stmt, InvalidRequest)
    assert session.execute(f"SELECT * FROM {lwt} WHERE k = 32").one() is None


def test_lwt_batch(cql_env):
    session, ks = cql_env.session, cql_env.ks
    t = f"{ks}.lwt_batch"
    session.execute(f"CREATE TABLE {t} (k int, c int, v int, PRIMARY KEY (k, c))")
    # A batch of one conditional statement.
    rs = session.execute(f"BEGIN BATCH INSERT INTO {t} (k, c, v) VALUES (1, 1, 1) IF NOT EXISTS; "
                         f"APPLY BATCH")
    assert rs.column_names[0] == "[applied]" and rs.was_applied
    rs = session.execute(f"BEGIN BATCH INSERT INTO {t} (k, c, v) VALUES (1, 1, 5) IF NOT EXISTS; "
                         f"APPLY BATCH")
    assert not rs.was_applied
    # Several statements with a condition: applied all together or not at
    # all, or refused outright (shardmark may not support them), never half.
    try:
        rs = session.execute(f"BEGIN BATCH "
                             f"INSERT INTO {t} (k, c, v) VALUES (1, 2, 2) IF NOT EXISTS; "
                             f"INSERT INTO {t} (k, c, v) VALUES (1, 3, 3); "
                             f"APPLY BATCH")
    except InvalidRequest as e:
        assert "not supported" in str(e), e
        assert [tuple(r) for r in session.execute(f"SELECT c, v FROM {t} WHERE k = 1")] == [(1, 1)]
        return
    # a result row per statement (cas_request.cc): the driver's was_applied
    # takes one row for a query string, so read [applied] of the first
    assert rs.one()[0]
    rs = session.execute(f"BEGIN BATCH "
                         f"INSERT INTO {t} (k, c, v) VALUES (1, 1, 10) IF NOT EXISTS; "
                         f"INSERT INTO {t} (k, c, v) VALUES (1, 4, 4); "
                         f"APPLY BATCH")
    assert not rs.one()[0]
    # Nothing of a not-applied batch is written.
    assert [tuple(r) for r in session.execute(f"SELECT c, v FROM {t} WHERE k = 1")] == \
        [(1, 1), (2, 2), (3, 3)]


def test_lwt_on_clustering_rows_and_with_ttl(cql_env):
    session, ks = cql_env.session, cql_env.ks
    t = f"{ks}.lwt_ck"
    session.execute(f"CREATE TABLE {t} (k int, c int, v int, PRIMARY KEY (k, c))")
    assert session.execute(f"INSERT INTO {t} (k, c, v) VALUES (1, 1, 1) IF NOT EXISTS").was_applied
    # Another clustering row of the same partition does not exist yet.
    assert session.execute(f"INSERT INTO {t} (k, c, v) VALUES (1, 2, 2) IF NOT EXISTS").was_applied
    rs = session.execute(f"UPDATE {t} SET v = 10 WHERE k = 1 AND c = 2 IF v = 1")
    assert not rs.was_applied and tuple(rs.one()) == (False, 2)
    assert session.execute(f"UPDATE {t} SET v = 10 WHERE k = 1 AND c = 2 IF v = 2").was_applied
    rows = session.execute(f"SELECT c, v FROM {t} WHERE k = 1").all()
    assert [tuple(r) for r in rows] == [(1, 1), (2, 10)]

    # A row inserted IF NOT EXISTS with a TTL can be inserted again once expired.
    assert session.execute(f"INSERT INTO {t} (k, c, v) VALUES (2, 0, 1) IF NOT EXISTS "
                           "USING TTL 1").was_applied
    deadline = time.monotonic() + 10
    while True:
        rs = session.execute(f"INSERT INTO {t} (k, c, v) VALUES (2, 0, 2) IF NOT EXISTS")
        if rs.was_applied:
            break
        assert time.monotonic() < deadline, "row inserted with TTL 1 still exists after 10 s"
        time.sleep(0.25)
    assert session.execute(f"SELECT v FROM {t} WHERE k = 2 AND c = 0").one().v == 2


def test_invalid_conditional_statements(cql_env, lwt):
    """IF conditions on key columns, and custom timestamps on conditional
    writes (Paxos picks the timestamp), are refused as in Cassandra and
    ScyllaDB ("Cannot provide custom timestamp for conditional updates")."""
    session = cql_env.session
    session.execute(f"INSERT INTO {lwt} (k, v) VALUES (61, 1)")
    for q in (f"UPDATE {lwt} SET v = 1 WHERE k = 60 IF k = 60",
              f"INSERT INTO {lwt} (k, v) VALUES (60, 1) IF NOT EXISTS USING TIMESTAMP 5",
              f"UPDATE {lwt} USING TIMESTAMP 5 SET v = 2 WHERE k = 61 IF v = 1",
              f"DELETE FROM {lwt} USING TIMESTAMP 5 WHERE k = 61 IF EXISTS"):
        cql_expect_error(session, q, InvalidRequest)
    assert session.execute(f"SELECT * FROM {lwt} WHERE k = 60").one() is None
    assert session.execute(f"SELECT v FROM {lwt} WHERE k = 61").one().v == 1


def test_concurrent_insert_if_not_exists_one_winner(cql_env, lwt):
    session = cql_env.session
    ps = session.prepare(f"INSERT INTO {lwt} (k, v, w) VALUES (?, ?, ?) IF NOT EXISTS")
    winners, errors = [], []

    def attempt(i):
        try:
            rs = session.execute(ps, (40, i, f"t{i}"))
            if rs.was_applied:
                winners.append(i)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(winners) == 1, f"{len(winners)} INSERT IF NOT EXISTS applied: {winners}"
    row = session.execute(f"SELECT v, w FROM {lwt} WHERE k = 40").one()
    assert tuple(row) == (winners[0], f"t{winners[0]}")


N_THREADS = 8
N_INCREMENTS = 25  # applied increments per thread


def test_concurrent_cas_increments(cql_env, lwt, cql_connect):
    """8 threads over 4 driver clusters (so over connections on both shards)."""
    session = cql_env.session
    k = 50
    session.execute(f"INSERT INTO {lwt} (k, v) VALUES ({k}, 0)")
    sessions = [cql_connect(cql_env.server)[1] for _ in range(4)]
    reads, cases = [], []
    for s in sessions:
        read = s.prepare(f"SELECT v FROM {lwt} WHERE k = ?")
        read.consistency_level = ConsistencyLevel.SERIAL
        reads.append(read)
        cases.append(s.prepare(f"UPDATE {lwt} SET v = ? WHERE k = ? IF v = ?"))
    applied = [0] * N_THREADS
    attempts = [0] * N_THREADS
    errors = []

    def worker(i):
        s, read, cas = sessions[i % 4], reads[i % 4], cases[i % 4]
        try:
            while applied[i] < N_INCREMENTS:
                attempts[i] += 1
                if attempts[i] > 100 * N_INCREMENTS:
                    raise AssertionError(f"thread {i}: no progress after {attempts[i]} attempts")
                old = s.execute(read, (k,)).one().v
                if s.execute(cas, (old + 1, k, old)).was_applied:
                    applied[i] += 1
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(f"thread {i}: {e!r}")

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(N_THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    total = sum(applied)
    final = session.execute(SimpleStatement(f"SELECT v FROM {lwt} WHERE k = {k}",
                                            consistency_level=ConsistencyLevel.SERIAL)).one().v
    print(f"{total} applied of {sum(attempts)} CAS attempts")
    assert total == N_THREADS * N_INCREMENTS
    assert final == total, f"v = {final} after {total} applied increments (lost or extra updates)"
    assert session.execute(f"SELECT v FROM {lwt} WHERE k = {k}").one().v == total
