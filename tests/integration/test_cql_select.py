# SPDX-License-Identifier: BSD-3-Clause
"""CQL endpoint: SELECT forms and paging, through the DataStax Python driver.

COUNT(*), IN on the partition key, clustering ranges and IN, ORDER BY DESC,
LIMIT, PER PARTITION LIMIT, token() range scans whose union is the table,
ALLOW FILTERING on a regular column; paging 10,000 rows of one partition and
10,000 rows spread over 1,000 partitions with fetch_size 100.
"""

import datetime
import struct

import pytest

pytest.importorskip("cassandra")

from cassandra import InvalidRequest  # noqa: E402
from cassandra.concurrent import execute_concurrent_with_args  # noqa: E402
from cassandra.metadata import Murmur3Token  # noqa: E402
from cassandra.query import SimpleStatement  # noqa: E402

from conftest import (CQL_OP_QUERY, CQL_OP_RESULT, cql_frame, cql_long_string,  # noqa: E402
                      cql_parse_rows, cql_raw_on_shard, cql_read_frame)

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
GRID = 10  # grid table: k in 0..9, c in 0..9, v = 10k + c


def token_of_int(k):
    return Murmur3Token.from_key(struct.pack(">i", k)).value


def insert_all(session, ps, params, concurrency=100):
    results = execute_concurrent_with_args(session, ps, params, concurrency=concurrency,
                                           raise_on_first_error=True)
    assert len(results) == len(params) and all(ok for ok, _ in results)


@pytest.fixture(scope="module")
def grid(cql_env):
    session, ks = cql_env.session, cql_env.ks
    t = f"{ks}.grid"
    session.execute(f"CREATE TABLE {t} (k int, c int, v int, PRIMARY KEY (k, c))")
    ps = session.prepare(f"INSERT INTO {t} (k, c, v) VALUES (?, ?, ?)")
    insert_all(session, ps, [(k, c, 10 * k + c) for k in range(GRID) for c in range(GRID)])
    return t


def kc(rows):
    return [(r.k, r.c) for r in rows]


def test_count(cql_env, grid):
    session, ks = cql_env.session, cql_env.ks
    rs = session.execute(f"SELECT COUNT(*) FROM {grid}")
    assert rs.column_names == ["count"]
    assert rs.one()[0] == GRID * GRID
    assert session.execute(f"SELECT COUNT(*) FROM {grid} WHERE k = 3").one()[0] == GRID
    assert session.execute(f"SELECT count(*) FROM {grid} WHERE k = 3 AND c >= 5").one()[0] == 5
    assert session.execute(f"SELECT COUNT(*) FROM {grid} WHERE k = 99").one()[0] == 0
    assert session.execute(f"SELECT COUNT(1) FROM {grid} WHERE k IN (1, 2)").one()[0] == 2 * GRID
    ps = session.prepare(f"SELECT COUNT(*) FROM {grid} WHERE k = ?")
    assert session.execute(ps, (4,)).one()[0] == GRID
    session.execute(f"CREATE TABLE {ks}.empty (k int PRIMARY KEY, v int)")
    assert session.execute(f"SELECT COUNT(*) FROM {ks}.empty").one()[0] == 0


def test_in_on_partition_key(cql_env, grid):
    session = cql_env.session
    rows = session.execute(f"SELECT k, c FROM {grid} WHERE k IN (1, 3, 5, 42)").all()
    assert sorted(kc(rows)) == [(k, c) for k in (1, 3, 5) for c in range(GRID)]
    assert len(rows) == 3 * GRID, "duplicate rows"
    # Rows of one partition come together, in clustering order.
    for k in (1, 3, 5):
        cs = [r.c for r in rows if r.k == k]
        assert cs == list(range(GRID)), f"partition {k}: {cs}"
    rows = session.execute(f"SELECT k, c, v FROM {grid} WHERE k IN (2, 4) AND c = 3").all()
    assert sorted((r.k, r.c, r.v) for r in rows) == [(2, 3, 23), (4, 3, 43)]
    ps = session.prepare(f"SELECT k, c FROM {grid} WHERE k IN (?, ?) AND c IN (?, ?)")
    rows = session.execute(ps, (7, 8, 9, 0)).all()
    assert sorted(kc(rows)) == [(7, 0), (7, 9), (8, 0), (8, 9)]


def test_clustering_ranges_order_and_limits(cql_env, grid):
    session = cql_env.session

    def cs(where, extra=""):
        return [r.c for r in session.execute(f"SELECT c FROM {grid} WHERE k = 4 {where} {extra}")]

    assert cs("AND c > 2 AND c <= 5") == [3, 4, 5]
    assert cs("AND c >= 7") == [7, 8, 9]
    assert cs("AND c < 2") == [0, 1]
    assert cs("AND c = 6") == [6]
    assert cs("AND c IN (8, 1, 4)") == [1, 4, 8]
    assert cs("AND c > 5 AND c < 5") == []
    assert cs("", "ORDER BY c DESC") == list(range(GRID - 1, -1, -1))
    assert cs("AND c >= 5", "ORDER BY c DESC") == [9, 8, 7, 6, 5]
    assert cs("AND c >= 2 AND c < 8", "ORDER BY c ASC") == [2, 3, 4, 5, 6, 7]
    assert cs("", "LIMIT 3") == [0, 1, 2]
    assert cs("", "ORDER BY c DESC LIMIT 2") == [9, 8]
    assert cs("AND c > 3", "LIMIT 2") == [4, 5]
    ps = session.prepare(f"SELECT c FROM {grid} WHERE k = ? AND c >= ? AND c < ? "
                         "ORDER BY c DESC LIMIT ?")
    assert [r.c for r in session.execute(ps, (4, 2, 9, 3))] == [8, 7, 6]

    assert len(session.execute(f"SELECT * FROM {grid} LIMIT 25").all()) == 25
    rows = session.execute(f"SELECT k, c FROM {grid} PER PARTITION LIMIT 2").all()
    assert sorted(kc(rows)) == [(k, c) for k in range(GRID) for c in (0, 1)]
    rows = session.execute(f"SELECT k, c FROM {grid} PER PARTITION LIMIT 3 LIMIT 10").all()
    assert len(rows) == 10 and all(r.c < 3 for r in rows), kc(rows)
    rows = session.execute(f"SELECT k, c FROM {grid} WHERE k IN (1, 2) PER PARTITION LIMIT 1").all()
    assert sorted(kc(rows)) == [(1, 0), (2, 0)]


def test_in_with_order_by_sorts_across_partitions(cql_env, grid):
    # ScyllaDB's select_statement.cc: pk IN with ORDER BY sorts the rows of all
    # partitions by the clustering key (LIMIT after the sort), which a page
    # cannot do: a query that may need paging is refused (cassandra_tests'
    # select_order_by_test.py, testOrderByForInClause / testInOrderByWithoutPaging).
    session = cql_env.session

    def unpaged(q, *args):
        return [(r.k, r.c) for r in session.execute(SimpleStatement(q, fetch_size=None), args)]

    q = f"SELECT k, c FROM {grid} WHERE k IN (5, 1, 3) AND c < 3 ORDER BY c"
    assert unpaged(q) == [(k, c) for c in range(3) for k in (5, 1, 3)]
    assert unpaged(q + " DESC") == [(k, c) for c in (2, 1, 0) for k in (5, 1, 3)]
    assert unpaged(q + " LIMIT 4") == [(5, 0), (1, 0), (3, 0), (5, 1)]
    assert unpaged(q + " DESC LIMIT 2") == [(5, 2), (1, 2)]
    ps = session.prepare(f"SELECT k, c FROM {grid} WHERE k IN ? ORDER BY c DESC LIMIT ?")
    ps.fetch_size = None
    assert [(r.k, r.c) for r in session.execute(ps, ([2, 7], 3))] == [(2, 9), (7, 9), (2, 8)]
    with pytest.raises(InvalidRequest, match="Cannot page queries with both ORDER BY and a IN "
                       "restriction on the partition key; you must either remove the ORDER BY "
                       "or the IN and sort client side, or disable paging for this query"):
        session.execute(SimpleStatement(q, fetch_size=100))
    # at most one row back: no paging needed, no refusal
    rows = session.execute(SimpleStatement(q + " LIMIT 1", fetch_size=100)).all()
    assert [(r.k, r.c) for r in rows] == [(5, 0)]
    rows = session.execute(SimpleStatement(
        f"SELECT k, c FROM {grid} WHERE k IN (4) AND c = 2 ORDER BY c", fetch_size=100)).all()
    assert [(r.k, r.c) for r in rows] == [(4, 2)]
    # computed selections too (testOrderByForInClause, scylladb#9435)
    t = f"{cql_env.ks}.in_order_fn"
    session.execute(f"CREATE TABLE {t} (pk1 int, pk2 int, c int, v text, PRIMARY KEY ((pk1, pk2), c))")
    for pk2, c, v in ((1, 2, "A"), (2, 1, "B"), (3, 3, "C"), (1, 4, "D")):
        session.execute(f"INSERT INTO {t} (pk1, pk2, c, v) VALUES (1, {pk2}, {c}, '{v}')")
    rows = session.execute(SimpleStatement(
        f"SELECT v, ttl(v), c FROM {t} WHERE pk1 = 1 AND pk2 IN (1, 2) ORDER BY c",
        fetch_size=None)).all()
    assert [tuple(r) for r in rows] == [("B", None, 1), ("A", None, 2), ("D", None, 4)]
    rows = session.execute(SimpleStatement(
        f"SELECT v FROM {t} WHERE pk1 = 1 AND pk2 IN (1, 2) ORDER BY c LIMIT 2",
        fetch_size=None)).all()
    assert [r.v for r in rows] == ["B", "A"]
    # without ORDER BY the partitions come one after the other, paged as ever
    rows = session.execute(SimpleStatement(f"SELECT k, c FROM {grid} WHERE k IN (1, 2)",
                                           fetch_size=3)).all()
    assert sorted(kc(rows)) == [(k, c) for k in (1, 2) for c in range(GRID)]


def test_descending_clustering_order_table(cql_env):
    session, ks = cql_env.session, cql_env.ks
    t = f"{ks}.desc_t"
    session.execute(f"CREATE TABLE {t} (k text, c1 int, c2 text, v int, PRIMARY KEY (k, c1, c2)) "
                    "WITH CLUSTERING ORDER BY (c1 DESC, c2 ASC)")
    ps = session.prepare(f"INSERT INTO {t} (k, c1, c2, v) VALUES (?, ?, ?, ?)")
    want = [(c1, c2) for c1 in range(3) for c2 in ("a", "b")]
    for c1, c2 in want:
        session.execute(ps, ("p", c1, c2, 0))
    got = [(r.c1, r.c2) for r in session.execute(f"SELECT c1, c2 FROM {t} WHERE k = 'p'")]
    assert got == sorted(want, key=lambda x: (-x[0], x[1]))
    got = [(r.c1, r.c2) for r in session.execute(
        f"SELECT c1, c2 FROM {t} WHERE k = 'p' ORDER BY c1 ASC, c2 DESC")]
    assert got == sorted(want, key=lambda x: (x[0], [-ord(ch) for ch in x[1]]))
    got = [(r.c1, r.c2) for r in session.execute(
        f"SELECT c1, c2 FROM {t} WHERE k = 'p' AND c1 = 1 AND c2 > 'a'")]
    assert got == [(1, "b")]
    got = [r.c1 for r in session.execute(f"SELECT c1 FROM {t} WHERE k = 'p' AND c1 < 2 LIMIT 3")]
    assert got == [1, 1, 0]


def test_composite_partition_key(cql_env):
    session, ks = cql_env.session, cql_env.ks
    t = f"{ks}.comp"
    session.execute(f"CREATE TABLE {t} (a int, b text, c int, v int, PRIMARY KEY ((a, b), c))")
    ps = session.prepare(f"INSERT INTO {t} (a, b, c, v) VALUES (?, ?, ?, ?)")
    assert ps.routing_key_indexes == [0, 1]
    for a in range(3):
        for b in ("x", "y"):
            for c in range(3):
                session.execute(ps, (a, b, c, a * 100 + c))
    sel = session.prepare(f"SELECT c, v FROM {t} WHERE a = ? AND b = ?")
    assert [tuple(r) for r in session.execute(sel, (2, "y"))] == [(0, 200), (1, 201), (2, 202)]
    assert session.execute(f"SELECT COUNT(*) FROM {t}").one()[0] == 18
    with pytest.raises(InvalidRequest):  # half a partition key needs ALLOW FILTERING
        session.execute(f"SELECT * FROM {t} WHERE a = 1")


def test_token_range_scans_cover_the_table(cql_env, grid):
    session = cql_env.session
    bounds = [INT64_MIN, -6 * 10**18, -2 * 10**18, -1, 0, 10**18, 5 * 10**18, INT64_MAX]
    seen = []
    ps = session.prepare(f"SELECT k, c FROM {grid} WHERE token(k) > ? AND token(k) <= ?")
    for i in range(len(bounds) - 1):
        lo, hi = bounds[i], bounds[i + 1]
        if i == 0:
            rows = session.execute(f"SELECT k, c FROM {grid} WHERE token(k) >= {lo} "
                                   f"AND token(k) <= {hi}").all()
        else:
            rows = session.execute(ps, (lo, hi)).all()
        for r in rows:
            tok = token_of_int(r.k)
            assert lo <= tok <= hi and (i == 0 or tok > lo), \
                f"k={r.k} token {tok} outside ({lo}, {hi}]"
        seen += kc(rows)
    assert len(seen) == len(set(seen)), "a row came back from two token ranges"
    assert sorted(seen) == [(k, c) for k in range(GRID) for c in range(GRID)]
    # One partition's own token range finds exactly it.
    tok = token_of_int(6)
    rows = session.execute(f"SELECT k FROM {grid} WHERE token(k) >= {tok} AND token(k) <= {tok}").all()
    assert {r.k for r in rows} == {6} and len(rows) == GRID
    rows = session.execute(f"SELECT k, c FROM {grid} WHERE token(k) = {tok}").all()
    assert {r.k for r in rows} == {6} and len(rows) == GRID


def test_allow_filtering_on_regular_column(cql_env, grid):
    session = cql_env.session
    rows = session.execute(f"SELECT k, c FROM {grid} WHERE v = 55 ALLOW FILTERING").all()
    assert kc(rows) == [(5, 5)]
    rows = session.execute(f"SELECT k, c FROM {grid} WHERE v >= 95 ALLOW FILTERING").all()
    assert sorted(kc(rows)) == [(9, c) for c in range(5, 10)]
    rows = session.execute(f"SELECT c FROM {grid} WHERE k = 3 AND v > 35 ALLOW FILTERING").all()
    assert [r.c for r in rows] == [6, 7, 8, 9]
    rows = session.execute(f"SELECT k, c FROM {grid} WHERE v < 0 ALLOW FILTERING").all()
    assert rows == []
    assert session.execute(f"SELECT COUNT(*) FROM {grid} WHERE v > 49 ALLOW FILTERING").one()[0] == 50
    with pytest.raises(InvalidRequest):
        session.execute(f"SELECT k, c FROM {grid} WHERE v = 55")


# --- paging ---------------------------------------------------------------------

N_ROWS = 10_000
PAGE = 100


@pytest.fixture(scope="module")
def one_partition(cql_env):
    session, ks = cql_env.session, cql_env.ks
    t = f"{ks}.page_one"
    session.execute(f"CREATE TABLE {t} (k int, c int, v text, PRIMARY KEY (k, c))")
    ps = session.prepare(f"INSERT INTO {t} (k, c, v) VALUES (?, ?, ?)")
    insert_all(session, ps, [(0, c, f"value-{c}") for c in range(N_ROWS)])
    return t


N_PARTITIONS = 1_000


@pytest.fixture(scope="module")
def many_partitions(cql_env):
    session, ks = cql_env.session, cql_env.ks
    t = f"{ks}.page_many"
    session.execute(f"CREATE TABLE {t} (k int, c int, v int, PRIMARY KEY (k, c))")
    ps = session.prepare(f"INSERT INTO {t} (k, c, v) VALUES (?, ?, ?)")
    per = N_ROWS // N_PARTITIONS
    insert_all(session, ps, [(k, c, k * per + c) for k in range(N_PARTITIONS) for c in range(per)])
    return t


def test_paging_one_partition(cql_env, one_partition):
    session = cql_env.session
    stmt = SimpleStatement(f"SELECT c, v FROM {one_partition} WHERE k = 0", fetch_size=PAGE)
    rs = session.execute(stmt)
    assert rs.has_more_pages, "10,000 rows with fetch_size 100 should have more pages"
    assert isinstance(rs.paging_state, bytes) and rs.paging_state
    first = [r.c for r in rs.current_rows]
    assert first == list(range(PAGE)), f"first page: {first[:5]}... ({len(first)} rows)"
    state = rs.paging_state

    cs = []
    for r in rs:  # iterating fetches the following pages
        assert r.v == f"value-{r.c}"
        cs.append(r.c)
    assert len(cs) == N_ROWS, f"{len(cs)} rows, expected {N_ROWS}"
    assert len(set(cs)) == N_ROWS, "duplicate rows across pages"
    assert cs == list(range(N_ROWS)), "rows not in clustering order across pages"

    # Resuming from the first page's state gives the second page.
    rs2 = session.execute(stmt, paging_state=state)
    assert [r.c for r in rs2.current_rows] == list(range(PAGE, 2 * PAGE))
    assert rs2.has_more_pages

    # Prepared, descending, a page size that does not divide the row count.
    ps = session.prepare(f"SELECT c FROM {one_partition} WHERE k = ? ORDER BY c DESC")
    bound = ps.bind((0,))
    bound.fetch_size = 333
    rs = session.execute(bound)
    assert rs.has_more_pages and len(rs.current_rows) == 333
    assert [r.c for r in rs] == list(range(N_ROWS - 1, -1, -1))

    # A range and a LIMIT spanning pages.
    stmt = SimpleStatement(f"SELECT c FROM {one_partition} WHERE k = 0 AND c >= 5000 LIMIT 250",
                           fetch_size=PAGE)
    assert [r.c for r in session.execute(stmt)] == list(range(5000, 5250))
    # The last page says there is no more.
    stmt = SimpleStatement(f"SELECT c FROM {one_partition} WHERE k = 0 AND c >= 9950",
                           fetch_size=PAGE)
    rs = session.execute(stmt)
    assert [r.c for r in rs.current_rows] == list(range(9950, N_ROWS))
    assert not rs.has_more_pages and rs.paging_state is None


def test_paging_many_partitions(cql_env, many_partitions):
    session = cql_env.session
    per = N_ROWS // N_PARTITIONS
    rs = session.execute(SimpleStatement(f"SELECT k, c, v FROM {many_partitions}", fetch_size=PAGE))
    assert rs.has_more_pages and rs.paging_state
    assert len(rs.current_rows) == PAGE
    rows = [(r.k, r.c, r.v) for r in rs]
    assert len(rows) == N_ROWS, f"{len(rows)} rows, expected {N_ROWS}"
    keys = [(k, c) for k, c, _ in rows]
    assert len(set(keys)) == N_ROWS, "duplicate rows across pages"
    assert set(keys) == {(k, c) for k in range(N_PARTITIONS) for c in range(per)}
    assert all(v == k * per + c for k, c, v in rows)

    # Each partition comes whole, in one run, in clustering order.
    runs = []
    for k, c, _ in rows:
        if not runs or runs[-1][0] != k:
            runs.append((k, []))
        runs[-1][1].append(c)
    assert len(runs) == N_PARTITIONS, "a partition was split into several runs"
    for k, cs in runs:
        assert cs == list(range(per)), f"partition {k}: {cs}"

    # IN over many partitions, paged.
    ks = list(range(0, N_PARTITIONS, 37))
    stmt = SimpleStatement(f"SELECT k, c FROM {many_partitions} WHERE k IN "
                           f"({', '.join(map(str, ks))})", fetch_size=7)
    got = [(r.k, r.c) for r in session.execute(stmt)]
    assert sorted(got) == [(k, c) for k in ks for c in range(per)]


def test_full_scan_in_token_order(cql_env, many_partitions):
    session = cql_env.session
    rs = session.execute(SimpleStatement(f"SELECT k FROM {many_partitions}", fetch_size=PAGE))
    tokens = [token_of_int(r.k) for r in rs]
    assert len(tokens) == N_ROWS
    bad = next((i for i in range(1, len(tokens)) if tokens[i] < tokens[i - 1]), None)
    assert bad is None, f"full scan not in token order at row {bad}: {tokens[bad - 1]} > {tokens[bad]}"


def test_small_pages_and_count(cql_env, grid):
    session = cql_env.session
    rs = session.execute(SimpleStatement(f"SELECT c FROM {grid} WHERE k = 2", fetch_size=1))
    pages = 0
    cs = []
    while True:
        pages += 1
        cs += [r.c for r in rs.current_rows]
        if not rs.has_more_pages:
            break
        rs.fetch_next_page()
    assert cs == list(range(GRID))
    assert GRID <= pages <= GRID + 1, f"{pages} pages of 1 row for {GRID} rows"
    # Aggregates return one row however small the page.
    rs = session.execute(SimpleStatement(f"SELECT COUNT(*) FROM {grid}", fetch_size=3))
    assert [r[0] for r in rs] == [GRID * GRID]


def test_paging_without_page_size_and_changes_between_pages(cql_env, one_partition):
    session, ks = cql_env.session, cql_env.ks
    # No page size: everything in one page.
    rs = session.execute(SimpleStatement(f"SELECT c FROM {one_partition} WHERE k = 0",
                                         fetch_size=None))
    assert not rs.has_more_pages and len(rs.current_rows) == N_ROWS
    # The driver's default page size (5,000).
    assert [r.c for r in session.execute(f"SELECT c FROM {one_partition} WHERE k = 0")] == \
        list(range(N_ROWS))

    # Rows deleted and inserted after the first page: the next pages resume
    # after the last row returned, see the change, and repeat nothing.
    t = f"{ks}.page_changes"
    session.execute(f"CREATE TABLE {t} (k int, c int, PRIMARY KEY (k, c))")
    ps = session.prepare(f"INSERT INTO {t} (k, c) VALUES (?, ?)")
    insert_all(session, ps, [(0, c) for c in range(0, 1000, 2)])
    rs = session.execute(SimpleStatement(f"SELECT c FROM {t} WHERE k = 0", fetch_size=PAGE))
    first = [r.c for r in rs.current_rows]
    assert first == list(range(0, 2 * PAGE, 2))
    session.execute(f"DELETE FROM {t} WHERE k = 0 AND c >= 200 AND c < 300")
    session.execute(f"INSERT INTO {t} (k, c) VALUES (0, 301)")
    session.execute(f"INSERT INTO {t} (k, c) VALUES (0, 1)")  # before the resume point
    got = [r.c for r in rs]
    want = first + sorted([c for c in range(300, 1000, 2)] + [301])
    assert got == want


def test_paging_with_filtering_limits_and_aggregates(cql_env, one_partition, many_partitions):
    session = cql_env.session
    per = N_ROWS // N_PARTITIONS

    def run(q, fetch_size=PAGE):
        return list(session.execute(SimpleStatement(q, fetch_size=fetch_size)))

    # A filter that empties almost every page: the driver keeps paging.
    rows = run(f"SELECT c FROM {one_partition} WHERE k = 0 AND v = 'value-9999' ALLOW FILTERING")
    assert [r.c for r in rows] == [9999]
    rows = run(f"SELECT c FROM {one_partition} WHERE k = 0 AND v > 'value-9990' ALLOW FILTERING")
    assert sorted(r.c for r in rows) == list(range(9991, 10000))
    # Aggregates see every row, not one page.
    assert run(f"SELECT COUNT(*) FROM {one_partition} WHERE k = 0")[0][0] == N_ROWS
    assert run(f"SELECT COUNT(*) FROM {many_partitions}")[0][0] == N_ROWS
    # LIMIT and PER PARTITION LIMIT across page boundaries.
    rows = run(f"SELECT k, c FROM {many_partitions} LIMIT 2500")
    assert len(rows) == 2500 and len(set((r.k, r.c) for r in rows)) == 2500
    rows = run(f"SELECT k, c FROM {many_partitions} PER PARTITION LIMIT 3")
    assert sorted((r.k, r.c) for r in rows) == [(k, c) for k in range(N_PARTITIONS) for c in range(3)]
    rows = run(f"SELECT k, c FROM {many_partitions} PER PARTITION LIMIT 1", fetch_size=7)
    assert sorted((r.k, r.c) for r in rows) == [(k, 0) for k in range(N_PARTITIONS)]
    # A token range, paged.
    cut = token_of_int(500)
    rows = run(f"SELECT k, c FROM {many_partitions} WHERE token(k) > {cut}")
    want = sorted((k, c) for k in range(N_PARTITIONS) if token_of_int(k) > cut for c in range(per))
    assert sorted((r.k, r.c) for r in rows) == want


def test_in_repeated_values(cql_env, grid):
    """Repeated IN values name the same partition or row once (as in
    Cassandra; ScyllaDB fixed the opposite as a bug, scylladb#3713)."""
    session = cql_env.session
    rows = session.execute(f"SELECT k, c FROM {grid} WHERE k IN (1, 1)").all()
    assert sorted(kc(rows)) == [(1, c) for c in range(GRID)], f"{len(rows)} rows for k IN (1, 1)"
    rows = session.execute(f"SELECT c FROM {grid} WHERE k = 2 AND c IN (3, 3, 1)").all()
    assert [r.c for r in rows] == [1, 3]
    ps = session.prepare(f"SELECT c FROM {grid} WHERE k = ? AND c IN ?")
    assert [r.c for r in session.execute(ps, (2, [5, 0, 5]))] == [0, 5]
    ps = session.prepare(f"SELECT k FROM {grid} WHERE k IN ? AND c = 0")
    assert [r.k for r in session.execute(ps, ([4, 4],))] == [4]


def test_in_empty_list(cql_env, grid):
    """An empty IN matches nothing."""
    session = cql_env.session
    assert session.execute(f"SELECT * FROM {grid} WHERE k = 2 AND c IN ()").all() == []
    assert session.execute(f"SELECT * FROM {grid} WHERE k IN ()").all() == []
    ps = session.prepare(f"SELECT c FROM {grid} WHERE k = ? AND c IN ?")
    assert session.execute(ps, (2, [])).all() == []


def test_static_columns(cql_env):
    session, ks = cql_env.session, cql_env.ks
    t = f"{ks}.stat"
    session.execute(f"CREATE TABLE {t} (k int, c int, s text static, v int, PRIMARY KEY (k, c))")
    session.execute(f"INSERT INTO {t} (k, c, s, v) VALUES (1, 1, 'one', 1)")
    session.execute(f"INSERT INTO {t} (k, c, v) VALUES (1, 2, 2)")
    rows = session.execute(f"SELECT c, s, v FROM {t} WHERE k = 1").all()
    assert [tuple(r) for r in rows] == [(1, "one", 1), (2, "one", 2)]
    session.execute(f"UPDATE {t} SET s = 'uno' WHERE k = 1")
    assert {r.s for r in session.execute(f"SELECT s FROM {t} WHERE k = 1")} == {"uno"}
    # A partition with only its static row reads as one row of nulls but s.
    session.execute(f"UPDATE {t} SET s = 'two' WHERE k = 2")
    assert [tuple(r) for r in session.execute(f"SELECT k, c, s, v FROM {t} WHERE k = 2")] == \
        [(2, None, "two", None)]
    # Deleting the rows keeps the static row.
    session.execute(f"DELETE FROM {t} WHERE k = 1 AND c = 1")
    session.execute(f"DELETE FROM {t} WHERE k = 1 AND c = 2")
    assert [tuple(r) for r in session.execute(f"SELECT k, c, s FROM {t} WHERE k = 1")] == \
        [(1, None, "uno")]


def test_selectors(cql_env, grid):
    session, ks = cql_env.session, cql_env.ks
    rows = session.execute(f"SELECT token(k), k FROM {grid} WHERE k IN (3, 7) AND c = 0").all()
    assert sorted((r[1], r[0]) for r in rows) == sorted((k, token_of_int(k)) for k in (3, 7))
    rs = session.execute(f"SELECT v AS value, c AS ck FROM {grid} WHERE k = 1 AND c = 2")
    assert rs.column_names == ["value", "ck"] and tuple(rs.one()) == (12, 2)
    # now(), uuid() and toTimestamp(now()) as values.
    t = f"{ks}.fn"
    session.execute(f"CREATE TABLE {t} (k int PRIMARY KEY, tu timeuuid, u uuid, ts timestamp)")
    session.execute(f"INSERT INTO {t} (k, tu, u, ts) VALUES (1, now(), uuid(), toTimestamp(now()))")
    session.execute(f"INSERT INTO {t} (k, tu, u, ts) VALUES (2, now(), uuid(), toTimestamp(now()))")
    r1, r2 = (session.execute(f"SELECT tu, u, ts FROM {t} WHERE k = {k}").one() for k in (1, 2))
    assert r1.tu.version == 1 and r1.u.version == 4 and r1.tu != r2.tu and r1.u != r2.u
    assert abs((r1.ts - datetime.datetime.utcnow()).total_seconds()) < 600


def test_paging_state_moves_between_shards(cql_env, one_partition):
    """A page fetched through a connection on one shard continues through a
    connection on the other shard (drivers use any connection for the next
    page), with nothing lost or repeated."""
    q = f"SELECT c FROM {one_partition} WHERE k = 0"
    socks = [cql_raw_on_shard(cql_env.server.shard_port, s) for s in range(2)]
    try:
        got, state, i = [], None, 0
        while True:
            flags = 0x04 | (0x08 if state else 0)
            body = cql_long_string(q) + struct.pack(">HBi", 1, flags, 1000)
            if state:
                body += struct.pack(">i", len(state)) + state
            s = socks[i % 2]
            s.sendall(cql_frame(CQL_OP_QUERY, body, stream=i % 100))
            _, _, _, opcode, rbody = cql_read_frame(s)
            assert opcode == CQL_OP_RESULT, f"page {i} on shard {i % 2}: {rbody[:120]!r}"
            state, rows = cql_parse_rows(rbody)
            got += [struct.unpack(">i", r[0])[0] for r in rows]
            i += 1
            if not state:
                break
            assert i < 100, "paging does not end"
    finally:
        for s in socks:
            s.close()
    assert got == list(range(N_ROWS)), f"{len(got)} rows over {i} pages"
