# SPDX-License-Identifier: BSD-3-Clause
"""`shardmark stress user`: cassandra-stress's user mode (YAML profiles), end
to end against a real `shardmark serve --smp 2`.

- the profiles under docs/profiles/ run as their comments give them: the
  insert (batches of clustering rows, collections), the named queries
  (samerow, multirow), each op type reported under its own name in the
  interval table and the Results block, as cassandra-stress does;
- reads of what the insert wrote are validated (a profile that generates
  other values than the ones written fails the run);
- the LWT profile counts applied and not-applied conditions;
- token_range_queries page through the whole ring, split between the client
  shards, and count every row the insert wrote;
- user types and tuples (frozen and not, inside collections, a collection
  inside a user type) get a value in every field, and read back as written;
- -insert overrides the profile's insert; bad profiles and ops(...) are
  refused with an error naming the cause.

Assertions are about behaviour (counts, names, exit status), never timings.
"""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import allowed_cpus, cql_free_ports, start_cql_server

pytestmark = pytest.mark.skipif(
    allowed_cpus() < 2,
    reason=f"needs 2 allowed CPUs for --smp 2, this process has {allowed_cpus()}")

PROFILES = Path(__file__).resolve().parents[2] / "docs" / "profiles"
TIMEOUT = 120  # per run: a hang, not a speed


def describe(r):
    return (f"command: {' '.join(map(str, r.args))}\nexit: {r.returncode}\n"
            f"--- stdout ---\n{r.stdout}\n--- stderr ---\n{r.stderr}")


def results(stdout):
    """The Results block's per-op brackets -> {label: {op: value}}."""
    lines = stdout.splitlines()
    assert "Results:" in lines, stdout
    out = {}
    for line in lines[lines.index("Results:") + 1:]:
        m = re.fullmatch(r"(.+?)\s+:\s+(.*?)\s*(?:\[(.*)\])?", line)
        if not m or not m.group(3):
            continue
        per = {}
        for part in m.group(3).split(", "):
            k, v = part.split(": ", 1)
            per[k] = v.split(" ")[0]
        out[m.group(1)] = per
    return out


def num(s):
    return int(s.replace(",", ""))


@pytest.fixture(scope="module")
def server(shardmark_bin, tmp_path_factory):
    srv = start_cql_server(shardmark_bin, tmp_path_factory.mktemp("stress-user"),
                           ports=cql_free_ports())
    yield srv
    srv.kill()


@pytest.fixture(scope="module")
def user(server, shardmark_bin):
    def run(profile, ops, *args, shards=2):
        return subprocess.run(
            [str(shardmark_bin), "stress", "user", f"profile={profile}", f"ops({ops})", *args,
             "-node", "127.0.0.1", "-port", f"native={server.cql_port}", "-shards",
             str(shards), "-rate", "threads=20"],
            stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace",
            timeout=TIMEOUT)
    return run


@pytest.fixture(scope="module")
def blog_written(user):
    r = user(PROFILES / "blogposts.yaml", "insert=1", "n=2000", "-pop", "seq=1..2000")
    assert r.returncode == 0, describe(r)
    return r


def test_blog_insert_writes_clustering_rows_in_batches(blog_written):
    res = results(blog_written.stdout)
    assert num(res["Total partitions"]["insert"]) == 2000, blog_written.stdout
    # every op writes one domain's 10 posts (cluster: fixed(10), select: fixed(1)/1)
    assert num(res["Row rate"]["insert"]) >= 9 * num(res["Op rate"]["insert"]), \
        blog_written.stdout
    assert blog_written.stdout.rstrip().endswith("END")


def test_blog_queries_reported_by_name_and_validated(user, blog_written, tmp_path):
    out = tmp_path / "r.json"
    r = user(PROFILES / "blogposts.yaml", "singlepost=2,timeline=1", "n=3000", "-pop",
             "seq=1..2000", "-log", f"json={out}")
    assert r.returncode == 0, describe(r)
    res = results(r.stdout)
    assert set(res["Op rate"]) == {"singlepost", "timeline"}, r.stdout
    # with several op types the interval table has a row per type, by name
    assert re.search(r"^singlepost, +\d+,", r.stdout, re.M), r.stdout
    assert re.search(r"^timeline, +\d+,", r.stdout, re.M), r.stdout
    # a point read finds its row; the timeline finds the domain's 10 posts
    assert num(res["Row rate"]["timeline"]) > num(res["Row rate"]["singlepost"]), r.stdout
    j = json.loads(out.read_text())
    assert set(j["ops_by_type"]) == {"singlepost", "timeline"}
    assert j["ops_by_type"]["singlepost"]["rows"] == j["ops_by_type"]["singlepost"]["ops"]
    assert j["ops_by_type"]["timeline"]["rows"] == 10 * j["ops_by_type"]["timeline"]["ops"]
    assert j["read_validation_failures"] == 0 and j["errors"] == 0


def test_reads_with_other_values_than_written_fail(user, blog_written, tmp_path):
    # the same schema, other body sizes: the rows read hold what the other profile wrote
    bad = tmp_path / "bad.yaml"
    bad.write_text((PROFILES / "blogposts.yaml").read_text()
                   .replace("gaussian(100..1000)", "gaussian(100..1200)"))
    r = user(bad, "singlepost=1", "n=500", "-pop", "seq=1..2000")
    assert r.returncode != 0, describe(r)
    assert "read validation failed on singlepost" in r.stderr + r.stdout, describe(r)


def test_cqlstress_example_runs(user):
    r = user(PROFILES / "cqlstress-example.yaml", "insert=1", "n=200", "no-warmup")
    assert r.returncode == 0, describe(r)
    res = results(r.stdout)
    # LOGGED batches of uniform(1..50) partitions, 20 to 160 rows each: more rows than ops
    assert num(res["Row rate"]["insert"]) > num(res["Op rate"]["insert"]), r.stdout
    r = user(PROFILES / "cqlstress-example.yaml", "simple1=1,range1=1", "n=1000")
    assert r.returncode == 0, describe(r)
    assert set(results(r.stdout)["Op rate"]) == {"range1", "simple1"}, r.stdout


def test_lwt_profile_counts_applied_and_not_applied(user, tmp_path):
    prof = PROFILES / "lwt.yaml"
    r = user(prof, "insert=1", "n=2000", "-pop", "seq=1..1000")
    assert r.returncode == 0, describe(r)
    m = re.search(r"^LWT insert: (\d+) applied, (\d+) not applied", r.stdout, re.M)
    assert m, describe(r)
    # 2000 inserts over 1000 domains of up to 10 posts: some posts are written twice,
    # and IF title = NULL refuses the second
    assert int(m.group(1)) > 0 and int(m.group(2)) > 0, r.stdout
    out = tmp_path / "lwt.json"
    r = user(prof, "select=1,lwt_update_one_column=1,lwt_update_two_columns=1", "n=3000",
             "serial-cl=SERIAL", "-pop", "seq=1..1000", "-log", f"json={out}")
    assert r.returncode == 0, describe(r)
    j = json.loads(out.read_text())["ops_by_type"]
    one, two = j["lwt_update_one_column"], j["lwt_update_two_columns"]
    # lwt_indicator is never < 0: never applied; the second applies once per row
    assert one["lwt_applied"] == 0 and one["lwt_not_applied"] == one["ops"], j
    assert two["lwt_applied"] > 0 and two["lwt_not_applied"] > 0, j
    assert "lwt_applied" not in j["select"]
    assert re.search(r"^LWT lwt_update_two_columns: \d+ applied", r.stdout, re.M), r.stdout


TRQ_PROFILE = """\
keyspace: trqks
keyspace_definition: |
  CREATE KEYSPACE trqks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
table: rows
table_definition: CREATE TABLE rows (pk bigint, ck int, v text, PRIMARY KEY (pk, ck))
columnspec:
  - name: ck
    cluster: fixed(5)
  - name: v
    size: fixed(20)
token_range_queries:
  all_rows:
    columns: '*'
    page_size: 7
  keys_only:
    columns: pk
"""


def test_token_range_queries_count_every_row_written(user, tmp_path):
    prof = tmp_path / "trq.yaml"
    prof.write_text(TRQ_PROFILE)
    # 300 partitions of 5 clustering rows: 1500 rows in a keyspace of its own
    r = user(prof, "insert=1", "n=300", "no-warmup", "-pop", "seq=1..300")
    assert r.returncode == 0, describe(r)
    for name, page in (("all_rows", 7), ("keys_only", 5000)):
        out = tmp_path / f"{name}.json"
        # n= far above the pages: each shard stops when its share of the ring is read
        r = user(prof, f"{name}=1", "n=1000000", "-log", f"json={out}")
        assert r.returncode == 0, describe(r)
        assert set(results(r.stdout)["Op rate"]) == {name}, r.stdout
        j = json.loads(out.read_text())
        o = j["ops_by_type"][name]
        assert o["rows"] == 1500 and o["errors"] == 0, j
        # one operation a page: pages of 7 rows take at least 1500 / 7 of them
        assert o["ops"] >= 1500 // page, j
    # -tokenrange wrap: the ring again and again, until n= (more pages than one pass has)
    out = tmp_path / "wrap.json"
    r = user(prof, "all_rows=1", "n=2000", "-tokenrange", "wrap", "splits=2", "-log",
             f"json={out}")
    assert r.returncode == 0, describe(r)
    o = json.loads(out.read_text())["ops_by_type"]["all_rows"]
    assert o["ops"] == 2000 and o["rows"] > 1500 and o["errors"] == 0, o


def test_user_types_are_generated_field_by_field(user, server, cql_connect, tmp_path):
    prof = PROFILES / "udt.yaml"
    r = user(prof, "insert=1", "n=300", "no-warmup", "-pop", "seq=1..300")
    assert r.returncode == 0, describe(r)
    out = tmp_path / "byid.json"
    r = user(prof, "byid=1", "n=600", "-pop", "seq=1..300", "-log", f"json={out}")
    assert r.returncode == 0, describe(r)
    j = json.loads(out.read_text())
    # every point read finds its row, whose user-type and tuple cells match the insert
    assert j["ops_by_type"]["byid"]["rows"] == j["ops_by_type"]["byid"]["ops"], j
    assert j["read_validation_failures"] == 0 and j["errors"] == 0, j
    _, s = cql_connect(server, "udtks")
    rows = list(s.execute("SELECT * FROM users"))
    assert len(rows) == 300
    for row in rows:
        for addr in [row.home, row.work] + list(row.past.values() if row.past else []):
            assert addr.street and addr.city and addr.zip is not None, row
        assert 1 <= len(row.phones) <= 4, row
        assert all(ph.kind and ph.number is not None for ph in row.phones), row
        assert row.badge.kind and len(row.loc) == 2, row
    # with another field order the values the read expects are not the ones written
    bad = tmp_path / "bad.yaml"
    bad.write_text(prof.read_text().replace("phone (kind text, number bigint)",
                                            "phone (number bigint, kind text)"))
    r = user(bad, "byid=1", "n=200", "-pop", "seq=1..300")
    assert r.returncode != 0, describe(r)
    assert "read validation failed on byid" in r.stderr + r.stdout, describe(r)


def test_insert_option_overrides_the_profile(user):
    # select-ratio 1/10 of the 10 posts: one row an op instead of ten
    r = user(PROFILES / "blogposts.yaml", "insert=1", "n=300", "no-warmup", "-pop",
             "seq=5001..5300", "-insert", "select-ratio=fixed(1)/10", "batchtype=LOGGED")
    assert r.returncode == 0, describe(r)
    res = results(r.stdout)
    assert num(res["Row rate"]["insert"]) == num(res["Op rate"]["insert"]), r.stdout


@pytest.mark.parametrize("ops,why", [
    ("nosuch=1", "no query named 'nosuch'"),
    ("insert", "name=weight"),
    ("insert=0", "non-zero weight"),
])
def test_bad_ops_are_refused(user, ops, why):
    r = user(PROFILES / "blogposts.yaml", ops, "n=10")
    assert r.returncode == 2, describe(r)
    assert why in r.stderr, describe(r)


@pytest.mark.parametrize("text,why", [
    ("keyspace: k\ntable: t\n", "table_definition"),
    ("keyspace: k\ntable: t\ntable_definition: CREATE TABLE t (a int PRIMARY KEY)\n"
     "columnspec:\n  - name: zz\n    size: fixed(1)\n", "'zz' is not a column"),
    ("keyspace: k\ntable: t\ntable_definition: CREATE TABLE t (a int PRIMARY KEY)\n"
     "columnspec:\n  - name: a\n    size: pareto(1..3)\n", "unknown distribution"),
    ("keyspace: [\n", "not valid YAML"),
])
def test_bad_profiles_are_refused(user, tmp_path, text, why):
    p = tmp_path / "p.yaml"
    p.write_text(text)
    r = user(p, "insert=1", "n=10")
    assert r.returncode == 2, describe(r)
    assert why in r.stderr, describe(r)


def test_missing_profile_names_the_file(user):
    r = user("/nonexistent/profile.yaml", "insert=1", "n=10")
    assert r.returncode == 2, describe(r)
    assert "/nonexistent/profile.yaml" in r.stderr, describe(r)


@pytest.fixture(scope="module")
def stress(server, shardmark_bin):
    def run(*args):
        return subprocess.run(
            [str(shardmark_bin), "stress", *args, "-node", "127.0.0.1", "-port",
             f"native={server.cql_port}", "-shards", "2"],
            stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace",
            timeout=TIMEOUT)
    return run


def test_pop_takes_every_distribution_and_read_lookback(stress):
    r = stress("write", "n=5000", "-pop", "seq=1..5000", "-rate", "threads=20")
    assert r.returncode == 0, describe(r)
    # reads over an inverted exponential population of the written keys all validate
    r = stress("read", "n=3000", "-pop", "dist=~EXP(1..5000)", "-rate", "threads=20")
    assert r.returncode == 0, describe(r)
    assert "~EXP(1..5000)" in r.stdout, r.stdout  # the settings dump names it
    for spec in ("EXTREME(1..5000,2)", "QEXTREME(1..5000,2,8)", "WEIBULL(1..5000,1.5)"):
        r = stress("read", "n=500", "-pop", f"dist={spec}", "-rate", "threads=20")
        assert r.returncode == 0, describe(r)
    # read-lookback: reads take seeds at most 200 below the last write, all written
    r = stress("mixed", "ratio(write=1,read=1)", "n=3000", "-pop", "seq=1..5000",
               "read-lookback=UNIFORM(100..200)", "-rate", "threads=10")
    assert r.returncode == 0, describe(r)
    assert "Total errors              :          0" in r.stdout, r.stdout
