#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
#
# The Python driver's side of tests/bench/stress-vs-drivers.sh: a write or a
# read load on cassandra-stress's keyspace1.standard1 (made by
# `shardmark stress write` first) through the DataStax Python driver
# (Debian's python3-cassandra), with execute_concurrent_with_args() over
# prepared statements, protocol v4 and the driver's default load balancing
# (token-aware over DC-aware round robin).
#
# The keys and cell values are shardmark stress's (lib/stress/sm_stress_load.c:
# sm_stress_key() and sm_stress_value() of population index 1..N), so the
# writes store what `shardmark stress write` stored and the reads can be
# checked against it. Keys and values are made before the measured phase.
#
# Measured phase: one execute_concurrent_with_args() call over N operations
# (results_generator=True: results are consumed as they come, counting the
# rows of reads, and not kept, as a load generator does); client CPU =
# time.process_time() (the whole process's user+sys, every thread: the libev
# event loop thread too) around that loop only; connection setup, preparing,
# the warm-up and the checks are outside it.
#
# Rows are made by the driver's default row factory (named_tuple_factory,
# which builds a namedtuple class for every result: ~0.1 ms a read) unless
# --row-factory tuple asks for plain tuples.
#
#   /usr/bin/python3 tests/bench/driver_load.py write|read --port P [--host H]
#       [--n N] [--concurrency C] [--warmup W] [--row-factory named_tuple|tuple]
#       [--workload standard1|blogposts|ycsb-a|sb-timeseries] [--json FILE]
#
# The other workloads use the tables shardmark's own tools made first
# (stress user with docs/profiles/blogposts.yaml, ycsb load, scylla-bench),
# with the same statements; the driver writes keys of its own and then reads
# them back, counting rows (no value checks):
#   blogposts      write: an UNLOGGED batch of one domain's 10 posts (the
#                  profile's insert); read: the timeline query (10 rows)
#   ycsb-a         write: YCSB's load (INSERT of 10 fields of 100 bytes);
#                  read: workload A's run, 50% reads and 50% one-field
#                  updates of uniformly drawn loaded keys
#   sb-timeseries  write: INSERT (pk, ck, v) of 4-byte values, ck growing
#                  under 100 partitions; read: pk = ? AND ck >= ? LIMIT 1
import argparse
import json
import random
import sys
import time

import cassandra
from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
from cassandra.concurrent import execute_concurrent_with_args
from cassandra.query import PreparedStatement, named_tuple_factory, tuple_factory

M64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
ALPHABET = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
NCOLS = 5
COL_SIZE = 34

WRITE_CQL = ('UPDATE keyspace1.standard1 SET "C0"=?,"C1"=?,"C2"=?,"C3"=?,"C4"=? '
             'WHERE key=?')
READ_CQL = 'SELECT * FROM keyspace1.standard1 WHERE key=?'


def splitmix64(x):
    """(new state, output) of splitmix64 from state x."""
    x = (x + GOLDEN) & M64
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return x, z ^ (z >> 31)


def stress_key(i):
    """sm_stress_key(): 10 bytes of [0-9A-Z] from a hash of index i."""
    x, h = splitmix64(i)
    out = bytearray(10)
    for k in range(10):
        if k == 6:
            x, h = splitmix64(x)
        out[k] = ALPHABET[h % 36]
        h //= 36
    return bytes(out)


def stress_value(i, col, size=COL_SIZE):
    """sm_stress_value(): column col's bytes for index i."""
    x = ((i * GOLDEN) & M64) ^ (col << 56) ^ 0x5BD1E995
    out = bytearray()
    while len(out) < size:
        x, w = splitmix64(x)
        out += w.to_bytes(8, "little")
    return bytes(out[:size])


def write_params(i):
    return tuple(stress_value(i, c) for c in range(NCOLS)) + (stress_key(i),)


BLOG_WRITE = ("UPDATE stresscql.blogposts SET url = ?, title = ?, author = ?, body = ?, "
              "tags = tags + ? WHERE domain = ? AND published_date = ?")
BLOG_READ = ("SELECT url, title, published_date FROM stresscql.blogposts WHERE domain = ? "
             "LIMIT 10")
YCSB_FIELDS = ["field%d" % f for f in range(10)]
YCSB_INSERT = ("INSERT INTO ycsb.usertable (y_id, %s) VALUES (?%s)"
               % (", ".join(YCSB_FIELDS), ", ?" * len(YCSB_FIELDS)))
YCSB_READ = "SELECT * FROM ycsb.usertable WHERE y_id = ? LIMIT 1"
YCSB_UPDATE = "UPDATE ycsb.usertable SET field0 = ? WHERE y_id = ?"
SB_WRITE = "INSERT INTO scylla_bench.test (pk, ck, v) VALUES (?, ?, ?)"
SB_READ = "SELECT ck, v FROM scylla_bench.test WHERE pk = ? AND ck >= ? LIMIT 1"
SB_PARTITIONS = 100
SB_BASE = 1 << 40  # pk and ck far from scylla-bench's own


TEXT_POOL = "".join(random.Random(7).choice("abcdefghijklmnopqrstuvwxyz0123456789")
                    for _ in range(1 << 16))


def text(rng, n):
    """n characters at a random place of a random pool (cheap: made before the measured phase)."""
    off = rng.randrange(len(TEXT_POOL) - n)
    return TEXT_POOL[off:off + n]


def other_ops(session, workload, load, n, rng):
    """[(statement, params)] of n operations, and rows a read expects of each."""
    from cassandra.query import BatchStatement, BatchType
    import uuid
    if workload == "blogposts":
        if load == "write":
            st = session.prepare(BLOG_WRITE)
            ops = []
            for i in range(n):
                b = BatchStatement(batch_type=BatchType.UNLOGGED)
                for k in range(10):
                    b.add(st, (text(rng, 165), text(rng, 105), text(rng, 12), text(rng, 550),
                               {text(rng, 8) for _ in range(2)}, "drv-%d" % i,
                               uuid.UUID(int=(i * 10 + k) << 80 | 1 << 76 | 1 << 63)))
                ops.append((b, None))
            return ops, 0
        st = session.prepare(BLOG_READ)
        return [(st, ("drv-%d" % rng.randrange(n),)) for _ in range(n)], 10
    if workload == "ycsb-a":
        if load == "write":
            st = session.prepare(YCSB_INSERT)
            return [(st, ("drv%d" % i,) + tuple(text(rng, 100) for _ in YCSB_FIELDS))
                    for i in range(n)], 0
        rd, up = session.prepare(YCSB_READ), session.prepare(YCSB_UPDATE)
        ops = []
        for _ in range(n):
            k = "drv%d" % rng.randrange(n)
            ops.append((rd, (k,)) if rng.random() < 0.5 else (up, (text(rng, 100), k)))
        return ops, None  # updates return no rows
    if load == "write":
        st = session.prepare(SB_WRITE)
        return [(st, (SB_BASE + i % SB_PARTITIONS, SB_BASE + i, rng.randbytes(4)))
                for i in range(n)], 0
    st = session.prepare(SB_READ)
    return [(st, (SB_BASE + rng.randrange(SB_PARTITIONS), SB_BASE)) for _ in range(n)], 1


def run_other(a):
    """The loads beside standard1: the measured phase as for standard1."""
    from cassandra.concurrent import execute_concurrent
    rng = random.Random(a.seed)
    warmup = min(50000, a.n // 4) if a.warmup < 0 else a.warmup
    kw = {}
    if a.row_factory == "tuple":
        kw["execution_profiles"] = {EXEC_PROFILE_DEFAULT: ExecutionProfile(row_factory=tuple_factory)}
    cluster = Cluster([a.host], port=a.port, protocol_version=4, **kw)
    session = cluster.connect()
    ops, want = other_ops(session, a.workload, a.load, a.n, rng)
    if warmup:
        execute_concurrent(session, ops[:warmup], concurrency=a.concurrency)
    c0 = time.process_time()
    t0 = time.perf_counter()
    errors = rows = 0
    first_error = None
    for ok, res in execute_concurrent(session, ops, concurrency=a.concurrency,
                                      raise_on_first_error=False, results_generator=True):
        if not ok:
            errors += 1
            first_error = first_error or repr(res)
        elif a.load == "read":
            rows += len(res.current_rows)
    t1 = time.perf_counter()
    c1 = time.process_time()
    cluster.shutdown()
    cpu, wall = c1 - c0, t1 - t0
    out = {"client": "python", "driver": "cassandra-driver (python) %s" % cassandra.__version__,
           "workload": a.workload, "load": a.load, "concurrency": a.concurrency,
           "warmup": warmup, "ops": a.n, "errors": errors,
           "first_error": first_error, "rows": rows, "wall_s": wall,
           "ops_per_s": a.n / wall if wall > 0 else 0, "client_cpu_s": cpu,
           "ops_per_client_cpu_s": a.n / cpu if cpu > 0 else 0}
    print("python %s %s: %d ops in %.3f s; client CPU %.3f s = %.0f ops per client CPU-second; "
          "%d errors; %d rows" % (a.workload, a.load, a.n, wall, cpu,
                                  out["ops_per_client_cpu_s"], errors, rows))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    if errors or (want and rows != want * a.n) or (want is None and rows == 0 and a.load == "read"):
        sys.exit("driver_load.py: %d errors (first: %s), %d rows" % (errors, first_error, rows))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("load", choices=("write", "read"))
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--n", type=int, default=50000)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--warmup", type=int, default=-1,
                    help="warm-up operations (default min(50000, n/4), as shardmark stress)")
    ap.add_argument("--check", type=int, default=1000, help="keys checked after the run")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--row-factory", choices=("named_tuple", "tuple"), default="named_tuple",
                    help="named_tuple: the driver's default")
    ap.add_argument("--workload", default="standard1",
                    choices=("standard1", "blogposts", "ycsb-a", "sb-timeseries"))
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    if a.workload != "standard1":
        run_other(a)
        return
    warmup = min(50000, a.n // 4) if a.warmup < 0 else a.warmup
    rng = random.Random(a.seed)

    # Population indexes 1..n, as `shardmark stress write n=N` (seq=1..N):
    # writes in order, reads each key once in a random order.
    idx = list(range(1, a.n + 1))
    if a.load == "read":
        rng.shuffle(idx)
        params = [(stress_key(i),) for i in idx]
    else:
        params = [write_params(i) for i in idx]
    warm = params[:warmup]

    kw = {}
    if a.row_factory == "tuple":
        # The default profile with only the row factory changed (the load
        # balancing policy stays the driver's default).
        kw["execution_profiles"] = {EXEC_PROFILE_DEFAULT: ExecutionProfile(row_factory=tuple_factory)}
    cluster = Cluster([a.host], port=a.port, protocol_version=4, **kw)
    session = cluster.connect()
    stmt = session.prepare(WRITE_CQL if a.load == "write" else READ_CQL)
    lbp = cluster.profile_manager.default.load_balancing_policy
    row_factory = cluster.profile_manager.default.row_factory
    if row_factory not in (named_tuple_factory, tuple_factory):
        sys.exit("driver_load.py: unexpected row factory %r" % (row_factory,))
    if not isinstance(stmt, PreparedStatement):
        sys.exit("driver_load.py: session.prepare() did not return a PreparedStatement")
    # The message execute_concurrent's execute_async() sends for a bound
    # prepared statement: EXECUTE (ExecuteMessage), not QUERY.
    fut = session.execute_async(stmt, params[0])
    msg_type = type(fut.message).__name__
    fut.result()
    if msg_type != "ExecuteMessage":
        sys.exit("driver_load.py: the driver sent %s, not ExecuteMessage" % msg_type)

    if warm:
        execute_concurrent_with_args(session, stmt, warm, concurrency=a.concurrency)

    # Positions whose results are kept for the check after the run.
    check = rng.sample(range(a.n), min(a.check, a.n))
    keep = bytearray(a.n)
    for j in check:
        keep[j] = 1
    kept = {}
    is_read = a.load == "read"

    # ---- measured phase ----
    c0 = time.process_time()
    t0 = time.perf_counter()
    errors = rows = 0
    first_error = None
    j = 0
    for ok, res in execute_concurrent_with_args(session, stmt, params, concurrency=a.concurrency,
                                                raise_on_first_error=False,
                                                results_generator=True):
        if not ok:
            errors += 1
            if first_error is None:
                first_error = repr(res)
        elif is_read:
            rows += len(res.current_rows)
            if keep[j]:
                kept[j] = res
        j += 1
    t1 = time.perf_counter()
    c1 = time.process_time()
    # ---- end of the measured phase ----

    # Check rows against sm_stress_value(): for reads the rows the measured
    # phase returned, for writes a read-back (not measured).
    bad = 0
    if is_read:
        got = [(idx[j], kept.get(j)) for j in check]
    else:
        rd = session.prepare(READ_CQL)
        got = [(idx[j], session.execute(rd, (stress_key(idx[j]),))) for j in check]
    for i, rs in got:
        if rs is None:
            bad += 1
            continue
        r = list(rs.current_rows)
        cols = rs.column_names
        if len(r) != 1:
            bad += 1
            continue
        row = dict(zip(cols, r[0]))
        if row.get("key") != stress_key(i) or any(
                row.get("C%d" % c) != stress_value(i, c) for c in range(NCOLS)):
            bad += 1
    cluster.shutdown()

    cpu = c1 - c0
    wall = t1 - t0
    out = {
        "client": "python",
        "driver": "cassandra-driver (python) %s" % cassandra.__version__,
        "python": sys.version.split()[0],
        "connection_class": cluster.connection_class.__name__,
        "load_balancing": type(lbp).__name__ + "(" + type(getattr(lbp, "_child_policy", None)).__name__ + ")",
        "protocol_version": cluster.protocol_version,
        "row_factory": row_factory.__name__,
        "prepared": True,
        "message_type": msg_type,
        "load": a.load,
        "concurrency": a.concurrency,
        "warmup": warmup,
        "ops": a.n,
        "errors": errors,
        "first_error": first_error,
        "rows": rows,
        "checked": len(check),
        "check_failures": bad,
        "wall_s": wall,
        "ops_per_s": a.n / wall if wall > 0 else 0,
        "client_cpu_s": cpu,
        "ops_per_client_cpu_s": a.n / cpu if cpu > 0 else 0,
    }
    print("python (%s) %s: %d ops in %.3f s = %.0f ops/s; client CPU %.3f s = %.0f ops per client "
          "CPU-second; %d errors; %d rows; %d/%d checked rows wrong; %s, %s, protocol v%d"
          % (row_factory.__name__, a.load, a.n, wall, out["ops_per_s"], cpu, out["ops_per_client_cpu_s"], errors,
             rows, bad, len(check), out["connection_class"], out["message_type"],
             cluster.protocol_version))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    if errors or bad or (a.load == "read" and rows != a.n):
        sys.exit("driver_load.py: %d errors (first: %s), %d rows of %d reads, %d bad rows"
                 % (errors, first_error, rows, a.n if a.load == "read" else 0, bad))


if __name__ == "__main__":
    main()
