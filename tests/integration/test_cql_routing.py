# SPDX-License-Identifier: BSD-3-Clause
"""CQL endpoint: request routing and cross-shard hops.

With --shard-nodes=true each shard is presented as its own CQL node (shard
s at 127.0.0.(s+1), same port) owning the tokens of its token ranges, so the
stock DataStax driver with TokenAwarePolicy sends every request to the
owning shard: 10,000 prepared reads and writes cost zero hops
(shardmark_hops_total, summed over shards, before and after). In the default
single-node mode a round-robin client lands on one shard and about half of
the same requests must hop.
"""

import time

import pytest

pytest.importorskip("cassandra")

from cassandra.cluster import Cluster  # noqa: E402
from cassandra.concurrent import execute_concurrent_with_args  # noqa: E402
from cassandra.metadata import Murmur3Token  # noqa: E402
from cassandra.policies import (DCAwareRoundRobinPolicy, RoundRobinPolicy,  # noqa: E402
                                TokenAwarePolicy)

from conftest import (DPDK_TAP, cql_create_keyspace, cql_unique_name, http_get,  # noqa: E402
                      metric_by_shard, parse_prometheus)

N_SHARDS = 2
IGNORE_MSB = 12
N_OPS = 5_000  # writes, then as many reads
HOPS = "shardmark_hops_total"
REQUESTS = "shardmark_requests_total"


def shard_of_token(token, nr_shards=N_SHARDS, ignore_msb=IGNORE_MSB):
    """ScyllaDB's biased-token-round-robin (dht/token.cc zero_based_shard_of)."""
    b = (token + (1 << 63)) & ((1 << 64) - 1)
    b = (b << ignore_msb) & ((1 << 64) - 1)
    return (b * nr_shards) >> 64


def per_shard(srv, name=HOPS):
    status, _, body = http_get(srv.ports[2], "/metrics")
    assert status == 200, body
    by_shard = metric_by_shard(parse_prometheus(body), name)
    assert set(by_shard) == {str(s) for s in range(N_SHARDS)}, \
        f"{name} should have a sample per shard: {by_shard}"
    return by_shard


def hops(srv):
    return per_shard(srv, HOPS)


def settled_hops(srv, timeout=5.0):
    """Per-shard hops once two readings 0.2 s apart agree (counters may be
    gathered asynchronously); the last reading after `timeout`."""
    deadline = time.monotonic() + timeout
    last = hops(srv)
    while time.monotonic() < deadline:
        time.sleep(0.2)
        now = hops(srv)
        if now == last:
            return now
        last = now
    return last


def wait_for_pools(session, timeout=20.0):
    """Block until the session has an open pool to every host.

    Cluster.connect() returns once one host's pool is up; the others come up
    in the background, and until then TokenAwarePolicy falls back to the
    child policy (a hop) and host-pinned queries fail."""
    deadline = time.monotonic() + timeout
    hosts = session.cluster.metadata.all_hosts()
    while True:
        state = session.get_pool_state()
        missing = [h for h in hosts if state.get(h, {}).get("open_count", 0) == 0]
        if not missing:
            return
        assert time.monotonic() < deadline, f"no connection pool to {missing} after {timeout}s"
        time.sleep(0.05)


def setup_table(session):
    ks = cql_create_keyspace(session, cql_unique_name("route"))
    session.execute(f"CREATE TABLE {ks}.kv (k int PRIMARY KEY, v int)")
    ins = session.prepare(f"INSERT INTO {ks}.kv (k, v) VALUES (?, ?)")
    sel = session.prepare(f"SELECT v FROM {ks}.kv WHERE k = ?")
    assert ins.routing_key_indexes == [0] and sel.routing_key_indexes == [0], \
        "PREPARED must carry pk_indexes (or the driver needs table metadata) for routing"
    return ks, ins, sel


def keys():
    # Spread over the ring: consecutive ints hash all over it.
    return list(range(100_000, 100_000 + N_OPS))


def run_workload(session, ins, sel):
    ks_ = keys()
    results = execute_concurrent_with_args(session, ins, [(k, k * 7) for k in ks_],
                                           concurrency=100, raise_on_first_error=True)
    assert all(ok for ok, _ in results)
    results = execute_concurrent_with_args(session, sel, [(k,) for k in ks_],
                                           concurrency=100, raise_on_first_error=True)
    bad = [(k, res) for k, (ok, res) in zip(ks_, results) if not ok or res.one().v != k * 7]
    assert not bad, f"{len(bad)} reads wrong, first: {bad[:3]}"


@pytest.mark.skipif(DPDK_TAP, reason="--shard-nodes needs an address per shard "
                    "(listen_address + i); the DPDK stack has one IPv4 address and the "
                    "server refuses to listen on the next")
def test_token_aware_shard_nodes_zero_hops(cql_server, cql_connect):
    srv = cql_server("--shard-nodes=true")
    cluster, session = cql_connect(
        srv, load_balancing_policy=TokenAwarePolicy(DCAwareRoundRobinPolicy()))
    wait_for_pools(session)

    hosts = cluster.metadata.all_hosts()
    addrs = sorted(h.address for h in hosts)
    assert addrs == [f"127.0.0.{s + 1}" for s in range(N_SHARDS)], \
        f"--shard-nodes=true on {N_SHARDS} shards: driver sees hosts {addrs}"
    assert all(h.is_up for h in hosts), [(h.address, h.is_up) for h in hosts]
    assert len({h.datacenter for h in hosts}) == 1, [h.datacenter for h in hosts]
    tokens = {h.address: 0 for h in hosts}
    for owner in cluster.metadata.token_map.token_to_host_owner.values():
        tokens[owner.address] += 1
    assert all(n > 0 for n in tokens.values()), f"tokens per node: {tokens}"

    # Each node describes itself and the other consistently: contacting
    # 127.0.0.2 first finds the same two nodes with the same token split.
    other = Cluster(contact_points=["127.0.0.2"], port=srv.cql_port, connect_timeout=10,
                    control_connection_timeout=10,
                    load_balancing_policy=TokenAwarePolicy(DCAwareRoundRobinPolicy()))
    try:
        s2 = other.connect()
        wait_for_pools(s2)
        assert sorted(h.address for h in other.metadata.all_hosts()) == addrs
        local = s2.execute("SELECT rpc_address, tokens FROM system.local WHERE key = 'local'",
                           host=[h for h in other.metadata.all_hosts()
                                 if h.address == "127.0.0.2"][0]).one()
        assert str(local.rpc_address) == "127.0.0.2", local.rpc_address
        owners2 = {t.value: h.address for t, h in other.metadata.token_map.token_to_host_owner.items()}
    finally:
        other.shutdown()
    owners1 = {t.value: h.address for t, h in cluster.metadata.token_map.token_to_host_owner.items()}
    assert owners1 == owners2, "the two nodes disagree on who owns which token"
    assert {int(t) for t in local.tokens} == {t for t, a in owners1.items() if a == "127.0.0.2"}

    ks, ins, sel = setup_table(session)

    # The driver's replica for a key is the node of the shard owning its token.
    wrong = []
    for k in keys()[:500]:
        rk = ins.bind((k, 0)).routing_key
        replicas = cluster.metadata.get_replicas(ks, rk)
        want = f"127.0.0.{shard_of_token(Murmur3Token.from_key(rk).value) + 1}"
        if [h.address for h in replicas] != [want]:
            wrong.append((k, [h.address for h in replicas], want))
    assert not wrong, f"{len(wrong)} of 500 keys map to the wrong node, first: {wrong[:5]}"

    before = settled_hops(srv)
    req_before = per_shard(srv, REQUESTS)
    run_workload(session, ins, sel)
    after = settled_hops(srv)
    req_after = per_shard(srv, REQUESTS)
    delta = {s: after[s] - before[s] for s in after}
    served = {s: req_after[s] - req_before[s] for s in req_after}
    print(f"hops before {before}, after {after}; requests per shard {served}")
    assert sum(delta.values()) == 0, \
        f"token-aware routing over shard nodes took cross-shard hops: {delta}"
    # Both shard nodes did their share (the keys hash to both).
    assert all(n >= N_OPS // 2 for n in served.values()), f"requests per shard: {served}"

    # A composite partition key (legacy composite routing key) routes too.
    session.execute(f"CREATE TABLE {ks}.comp (a int, b text, v int, PRIMARY KEY ((a, b)))")
    ins = session.prepare(f"INSERT INTO {ks}.comp (b, v, a) VALUES (?, ?, ?)")
    sel = session.prepare(f"SELECT v FROM {ks}.comp WHERE a = ? AND b = ?")
    assert ins.routing_key_indexes == [2, 0] and sel.routing_key_indexes == [0, 1]
    params = [(f"key-{i}", i, i % 97) for i in range(1000)]
    before = settled_hops(srv)
    assert all(ok for ok, _ in execute_concurrent_with_args(session, ins, params, concurrency=50))
    results = execute_concurrent_with_args(session, sel, [(a, b) for b, _, a in params],
                                           concurrency=50)
    assert [res.one().v for _, res in results] == [v for _, v, _ in params]
    after = settled_hops(srv)
    delta = {s: after[s] - before[s] for s in after}
    assert sum(delta.values()) == 0, f"composite keys took cross-shard hops: {delta}"


def test_round_robin_single_node_hops(cql_server, cql_connect):
    srv = cql_server()
    cluster, session = cql_connect(srv, load_balancing_policy=RoundRobinPolicy())
    assert len(cluster.metadata.all_hosts()) == 1
    _, ins, sel = setup_table(session)

    before = settled_hops(srv)
    run_workload(session, ins, sel)
    deadline = time.monotonic() + 10
    while True:
        after = hops(srv)
        delta = sum(after.values()) - sum(before.values())
        if delta > 1000 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    print(f"hops before {before}, after {after}")
    assert delta > 1000, \
        f"{2 * N_OPS} requests over one connection on {N_SHARDS} shards made only {delta} hops"
