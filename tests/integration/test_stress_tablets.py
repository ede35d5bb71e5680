# SPDX-License-Identifier: BSD-3-Clause
"""`shardmark stress` against tablets keyspaces, end to end: the loader's
side of ScyllaDB's TABLETS_ROUTING_V1 (docs/dev/protocol-extensions.md)
against a real `shardmark serve --smp 2` that stores tables by tablets.

- `-schema tablets=true` creates keyspace1 with tablets; the loader learns
  each tablet from the tablets-routing-v1 payload of the answer to its first
  misrouted request, and every misrouted request is one the server hopped
  (the client's counts and shardmark_hops_total agree);
- once the map is warm (after the warmup), nothing is misrouted and the
  server hops no request: every request goes by tablets;
- a user profile whose keyspace_definition asks for tablets routes the same
  way (the table is the one of the profile's prepared statements: what a
  point read teaches routes the batches of the same table);
- -route none keeps tablets out of routing and says so.

One server for the module; assertions are about counts, never timings.
"""

import json
import re
import subprocess

import pytest

from conftest import (allowed_cpus, cql_supported, http_get, metric_by_shard, parse_prometheus,
                      start_cql_server)

pytestmark = pytest.mark.skipif(
    allowed_cpus() < 2,
    reason=f"needs 2 allowed CPUs for --smp 2, this process has {allowed_cpus()}")

TIMEOUT = 120  # per run: a hang, not a speed
ROUTING = re.compile(r"^Routing: (\d+) of (\d+) requests went to a connection whose server "
                     r"shard does not own the key", re.M)
TABLETS = re.compile(r"^Tablets: (\d+) requests routed by tablets, (\d+) by the ring, (\d+) "
                     r"misrouted \(answered with a tablets-routing-v1 payload\); (\d+) tablets "
                     r"learned, (\d+) held$", re.M)

# keyspace1 with 8 tablets: a warmup of a quarter of n meets each of them on
# every client shard (whichever test creates it first)
SCHEMA = ("-schema", "replication(factor=1)", "tablets(enabled=true,initial=8)")

PROFILE = """\
keyspace: tabks
keyspace_definition: |
  CREATE KEYSPACE tabks WITH replication = {'class': 'NetworkTopologyStrategy', 'replication_factor': 1} AND tablets = {'enabled': true, 'initial': 8};
table: events
table_definition: |
  CREATE TABLE events (id bigint, seq int, payload text, PRIMARY KEY (id, seq))
columnspec:
  - name: id
    population: seq(1..4000)
  - name: seq
    cluster: fixed(2)
  - name: payload
    size: fixed(20)
insert:
  partitions: fixed(1)
  batchtype: UNLOGGED
queries:
  byid:
    cql: SELECT * FROM events WHERE id = ?
    fields: samerow
"""


def describe(r):
    return (f"command: {' '.join(map(str, r.args))}\nexit: {r.returncode}\n"
            f"--- stdout ---\n{r.stdout}\n--- stderr ---\n{r.stderr}")


def hops_total(srv):
    status, _, body = http_get(srv.prom_port, "/metrics")
    assert status == 200, f"/metrics: HTTP {status}"
    return sum(metric_by_shard(parse_prometheus(body), "shardmark_hops_total").values())


def tablets_line(r):
    m = TABLETS.search(r.stdout)
    assert m, f"no Tablets: line\n{describe(r)}"
    return tuple(int(x) for x in m.groups())


@pytest.fixture(scope="module")
def server(shardmark_bin, tmp_path_factory):
    """One `shardmark serve --smp 2`; the module is skipped when the server
    does not offer TABLETS_ROUTING_V1 (a server without tablets)."""
    srv = start_cql_server(shardmark_bin, tmp_path_factory.mktemp("tablets"))
    try:
        offered = "TABLETS_ROUTING_V1" in cql_supported(srv.cql_port)
    except BaseException:
        srv.kill()
        raise
    if not offered:
        srv.kill()
        pytest.skip("the server does not offer TABLETS_ROUTING_V1 in SUPPORTED: no tablets "
                    "on its side to route by")
    yield srv
    srv.kill()


@pytest.fixture(scope="module")
def stress(server, shardmark_bin):
    def run(*args):
        return subprocess.run([str(shardmark_bin), "stress", *map(str, args), "-node",
                               "127.0.0.1", "-port", f"native={server.cql_port}",
                               "-shards", "2"],
                              stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              errors="replace", timeout=TIMEOUT)
    return run


def test_first_requests_teach_the_map(server, stress, tmp_path):
    # no-warmup: every request is counted, the cold ones too
    before = hops_total(server)
    log = tmp_path / "w.json"
    r = stress("write", "n=6000", "no-warmup", *SCHEMA, "-rate", "threads=16", "-log",
               "no-settings", f"json={log}")
    assert r.returncode == 0, describe(r)
    hops = hops_total(server) - before
    by_tablets, by_ring, misrouted, learned, held = tablets_line(r)
    assert by_tablets + by_ring == 6000, describe(r)
    # each misrouted answer taught a tablet, and most requests found one known
    assert 0 < misrouted <= by_ring, describe(r)
    assert learned == misrouted and held > 0, describe(r)
    assert by_tablets > by_ring, describe(r)
    # the server hopped exactly the requests it answered with a payload
    assert hops == misrouted, f"server hops {hops}, payloads {misrouted}\n{describe(r)}"
    m = ROUTING.search(r.stdout)
    assert m and int(m.group(1)) == misrouted and int(m.group(2)) == 6000, describe(r)
    routing = json.loads(log.read_text())["routing"]
    assert routing["tablets"] is True, routing
    assert routing["by_tablets"] == by_tablets and routing["by_ring"] == by_ring, routing
    assert routing["tablet_misrouted"] == misrouted, routing
    assert routing["tablets_learned"] == learned, routing
    assert routing["tablets_malformed"] == 0 and routing["tablets_refused"] == 0, routing


@pytest.mark.parametrize("ordering", ["random", "topological", "neutral"])
def test_warm_map_routes_everything_by_tablets(server, stress, ordering):
    # the warmup (a quarter of n) teaches every client shard every tablet
    before = hops_total(server)
    r = stress("write", "n=4000", *SCHEMA, "-rate", "threads=16", "-route",
               f"ordering={ordering}", "-log", "no-settings")
    assert r.returncode == 0, describe(r)
    hops = hops_total(server) - before
    by_tablets, by_ring, misrouted, learned, held = tablets_line(r)
    assert (by_tablets, by_ring, misrouted) == (4000, 0, 0), describe(r)
    assert held > 0
    m = ROUTING.search(r.stdout)
    assert m and (int(m.group(1)), int(m.group(2))) == (0, 4000), describe(r)
    # only the warmup's cold requests cost the server a hop, each answered
    # with the payload that taught the loader a tablet
    assert hops == learned, f"hops {hops}, tablets learned {learned}\n{describe(r)}"
    # reads of what was written, each validated, go the same way
    r = stress("read", "n=4000", *SCHEMA, "-rate", "threads=16", "-route",
               f"ordering={ordering}", "-log", "no-settings")
    assert r.returncode == 0, describe(r)
    by_tablets, by_ring, misrouted, _, _ = tablets_line(r)
    assert (by_tablets, by_ring, misrouted) == (4000, 0, 0), describe(r)


def test_user_profile_on_tablets(server, stress, tmp_path):
    profile = tmp_path / "tablets.yaml"
    profile.write_text(PROFILE)
    # The inserts are BATCHes, whose answers may carry no payload (this
    # server sends it for single-statement QUERY and EXECUTE): alone they may
    # teach nothing and go by the ring, which must still work.
    r = stress("user", f"profile={profile}", "ops(insert=1)", "n=2000", "-rate", "threads=8",
               "-log", "no-settings")
    assert r.returncode == 0, describe(r)
    by_tablets, by_ring, _, _, _ = tablets_line(r)
    assert by_tablets + by_ring == 2000, describe(r)
    # With the point reads, the warmup teaches the table's tablets and then
    # the batches of the same table go by them too.
    before = hops_total(server)
    r = stress("user", f"profile={profile}", "ops(insert=1,byid=1)", "n=4000", "-rate",
               "threads=8", "-log", "no-settings")
    assert r.returncode == 0, describe(r)
    by_tablets, by_ring, misrouted, learned, _ = tablets_line(r)
    assert (by_tablets, by_ring, misrouted) == (4000, 0, 0), describe(r)
    assert learned > 0, describe(r)
    assert hops_total(server) - before >= learned, describe(r)


def test_route_none_leaves_tablets_out(server, stress):
    r = stress("write", "n=500", *SCHEMA, "-rate", "threads=4", "-route", "none", "-log",
               "no-settings")
    assert r.returncode == 0, describe(r)
    assert "Tablets: not used (routing is not token-aware): every request went by the ring" \
        in r.stdout, describe(r)
