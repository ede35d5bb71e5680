# SPDX-License-Identifier: BSD-3-Clause
"""ScyllaDB's REST API (api_port): what ScyllaDB's test/cqlpy/nodetool.py and
nodetool itself call (flush, compact, snapshots, autocompaction, the native
transport switch, log levels, status and info), with requests as ScyllaDB's
tests use it, against the real server and the Python driver."""

import socket
import time

import pytest
import requests

from conftest import cql_cluster


def api_url(srv):
    port = srv.argv[srv.argv.index("--api-port") + 1]
    return f"http://{srv.host}:{port}"


@pytest.fixture
def node(cql_server):
    srv = cql_server(smp=2)
    c = cql_cluster(srv.cql_port, protocol_version=4)
    s = c.connect()
    s.execute("CREATE KEYSPACE rest WITH replication = "
              "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    s.execute("CREATE TABLE rest.t (k int PRIMARY KEY, v int)")
    s.execute("INSERT INTO rest.t (k, v) VALUES (1, 2)")
    yield srv, s, api_url(srv)
    c.shutdown()


def error_of(r):
    j = r.json()
    assert set(j) == {"message", "code"}, j
    assert j["code"] == r.status_code, j
    return j["message"]


def test_nodetool_py_calls(node):
    """The calls of ScyllaDB's test/cqlpy/nodetool.py, in its words."""
    srv, s, url = node
    # has_rest_api()
    r = requests.get(f"{url}/column_family/name/keyspace", timeout=5)
    assert r.ok and "rest" in r.json(), r.text
    # flush(cql, table), flush_keyspace(), flush_all()
    assert requests.post(f"{url}/storage_service/keyspace_flush/rest", params={"cf": "t"}).ok
    assert requests.post(f"{url}/storage_service/keyspace_flush/rest").ok
    assert requests.post(f"{url}/storage_service/flush").ok
    # compact(cql, table), with and without flush_memtables
    assert requests.post(f"{url}/storage_service/keyspace_compaction/rest",
                         params={"cf": "t"}).ok
    assert requests.post(f"{url}/storage_service/keyspace_compaction/rest",
                         params={"cf": "t", "flush_memtables": "false"}).ok
    # take_snapshot / del_snapshot
    assert requests.post(f"{url}/storage_service/snapshots/",
                         params={"kn": "rest", "cf": "t", "tag": "snap1", "sf": False}).ok
    tags = [e["key"] for e in requests.get(f"{url}/storage_service/snapshots").json()]
    assert tags == ["snap1"], tags
    r = requests.post(f"{url}/storage_service/snapshots/",
                      params={"kn": "rest", "tag": "snap1"})
    assert r.status_code == 500 and "snap1" in error_of(r)
    assert requests.delete(f"{url}/storage_service/snapshots/",
                           params={"tag": "snap1", "kn": "rest"}).ok
    assert requests.get(f"{url}/storage_service/snapshots").json() == []
    # no_autocompaction_context, for a keyspace and for a table
    for path in ("/storage_service/auto_compaction/rest", "/column_family/autocompaction/rest:t"):
        assert requests.delete(f"{url}{path}").ok, path
        assert requests.post(f"{url}{path}").ok, path
    # setlogginglevel / getlogginglevel
    assert requests.post(f"{url}/system/logger/api", params={"level": "debug"}).ok
    assert requests.get(f"{url}/system/logger/api").json() == "debug"
    assert requests.post(f"{url}/system/logger/api", params={"level": "info"}).ok
    # scylla_log(): a line in the server's log
    assert requests.post(f"{url}/system/log?message=hello%20from%20the%20test&level=info").ok
    # The data is still there: nothing was lost by any of it.
    assert s.execute("SELECT v FROM rest.t WHERE k = 1").one().v == 2
    srv.stop()
    assert "hello from the test" in srv.stderr()


def test_errors_as_scylladb_words_them(node):
    srv, s, url = node
    r = requests.post(f"{url}/storage_service/keyspace_flush/nope")
    assert r.status_code == 400 and error_of(r) == "Can't find a keyspace nope"
    r = requests.post(f"{url}/storage_service/keyspace_flush/rest", params={"cf": "nope"})
    assert r.status_code == 400 and "nope" in error_of(r)
    r = requests.delete(f"{url}/column_family/autocompaction/rest:nope")
    assert r.status_code == 400 and "rest:nope" in error_of(r)
    r = requests.post(f"{url}/system/logger/api", params={"level": "loud"})
    assert r.status_code == 400 and "loud" in error_of(r)
    r = requests.get(f"{url}/no/such/path")
    assert r.status_code == 404 and error_of(r) == "Not found"
    r = requests.put(f"{url}/storage_service/flush")
    assert r.status_code == 405, r.text


def test_status_and_info(node):
    """What nodetool status and nodetool info read (ScyllaDB's test/nodetool)."""
    srv, s, url = node
    local = s.execute("SELECT host_id, listen_address, data_center, rack, tokens "
                      "FROM system.local").one()
    get = lambda p, **kw: requests.get(f"{url}{p}", timeout=5, **kw).json()
    host_ids = get("/storage_service/host_id")
    assert host_ids == [{"key": str(local.listen_address), "value": str(local.host_id)}]
    assert get("/storage_service/hostid/local") == str(local.host_id)
    assert get("/gossiper/endpoint/live") == [str(local.listen_address)]
    assert get("/gossiper/endpoint/down") == []
    for p in ("joining", "leaving", "moving"):
        assert get(f"/storage_service/nodes/{p}") == []
    tokens = get("/storage_service/tokens")
    assert sorted(tokens) == sorted(str(t) for t in local.tokens)
    te = get("/storage_service/tokens_endpoint")
    assert [int(e["key"]) for e in te] == sorted(int(t) for t in tokens)
    assert {e["value"] for e in te} == {str(local.listen_address)}
    assert get("/snitch/datacenter", params={"host": str(local.listen_address)}) == local.data_center
    assert get("/snitch/rack", params={"host": str(local.listen_address)}) == local.rack
    load = get("/storage_service/load_map")
    assert load[0]["key"] == str(local.listen_address) and load[0]["value"] > 0
    own = get("/storage_service/ownership/rest")
    assert float(own[0]["value"]) == 1.0
    r = requests.get(f"{url}/storage_service/ownership/null")
    assert r.status_code == 500 and "ownership information is meaningless" in error_of(r)
    assert get("/storage_service/gossiping") is True
    assert get("/storage_service/rpc_server") is False
    assert get("/storage_service/native_transport") is True
    assert get("/storage_service/load") > 0
    assert get("/storage_service/generation_number") > 1700000000
    assert 0 <= get("/system/uptime_ms") < 3600 * 1000
    tables = get("/column_family/")
    assert {"ks": "rest", "cf": "t", "type": "ColumnFamilies"} in tables
    assert "rest:t" in get("/column_family/name")
    assert "rest" in get("/storage_service/keyspaces")
    assert "system" not in get("/storage_service/keyspaces", params={"type": "user"})


def test_disable_and_enable_binary(node):
    """nodetool disablebinary / enablebinary: the CQL ports close and open again."""
    srv, s, url = node
    assert requests.delete(f"{url}/storage_service/native_transport").ok
    assert requests.get(f"{url}/storage_service/native_transport").json() is False
    with pytest.raises(OSError):
        socket.create_connection((srv.host, srv.cql_port), timeout=2).close()
    # The connection the driver already has still works.
    assert s.execute("SELECT v FROM rest.t WHERE k = 1").one().v == 2
    assert requests.post(f"{url}/storage_service/native_transport").ok
    assert requests.get(f"{url}/storage_service/native_transport").json() is True
    deadline = time.monotonic() + 5
    while True:
        try:
            socket.create_connection((srv.host, srv.cql_port), timeout=2).close()
            break
        except OSError:
            assert time.monotonic() < deadline, "CQL port did not reopen"
            time.sleep(0.05)
    c = cql_cluster(srv.cql_port, protocol_version=4)
    try:
        assert c.connect().execute("SELECT v FROM rest.t WHERE k = 1").one().v == 2
    finally:
        c.shutdown()


def test_a_stall_on_purpose_is_reported(node):
    """POST /debug/stall makes a shard spin: the stall detector reports it
    (within a second, with its backtrace) and counts it, and the shard then
    serves again."""
    srv, s, url = node
    from conftest import http_get, parse_prometheus
    r = requests.post(f"{url}/debug/stall", params={"ms": 80, "shard": 1})
    assert r.ok, r.text
    deadline = time.monotonic() + 5
    while "Reactor stalled for" not in srv.stderr():
        assert time.monotonic() < deadline, srv.stderr()
        time.sleep(0.05)
    line = next(l for l in srv.stderr().splitlines() if "Reactor stalled for" in l)
    assert "on shard 1" in line and "Backtrace: " in line, line
    _, _, body = http_get(srv.prom_port, "/metrics")
    stalls = {lab["shard"]: v for n, lab, v in parse_prometheus(body)
              if n == "shardmark_reactor_stalls_total"}
    assert stalls["1"] >= 1 and stalls["0"] == 0, stalls
    assert s.execute("SELECT v FROM rest.t WHERE k = 1").one().v == 2
    r = requests.post(f"{url}/debug/stall", params={"ms": 999999})
    assert r.status_code == 400 and "10000" in error_of(r)
