# SPDX-License-Identifier: BSD-3-Clause
"""An appliance group: three `shardmark serve --peers` on 127.0.0.1, .2 and .3
(the same ports) behind one Python driver.

DDL through one member reaches every member before it is answered, and
their schema versions agree; with RoundRobinPolicy (no token awareness)
every read through every member returns what was written through any
member (the coordinator forwards a partition to its owner); with
TokenAwarePolicy nothing is forwarded. Requests over several members'
partitions are refused, and a member that is down is named in the errors.
Timeouts only guard against hangs.
"""

import signal
import time

import pytest

from conftest import (CQL_DRIVER_TIMEOUT, READY_TIMEOUT, Server, cql_free_ports, cql_smp_args,
                      free_port, http_get, metric_by_shard, parse_prometheus)

pytestmark = pytest.mark.skipif(
    __import__("conftest").DPDK_TAP, reason="the group runs on loopback addresses")

ADDRS = ("127.0.0.1", "127.0.0.2", "127.0.0.3")
FORWARDED = ("scylla_storage_proxy_coordinator_reads_remote_node",
             "scylla_storage_proxy_coordinator_total_write_attempts_remote_node")
ROWS = 24


class Group:
    def __init__(self, binary, workdir, native, shard_aware):
        self.binary, self.workdir = binary, workdir
        self.native, self.shard_aware = native, shard_aware
        self.members = []

    def start(self, i):
        """Member i (at ADDRS[i]), listing the others; the caller waits for it."""
        addr = ADDRS[i]
        peers = ",".join(a for a in ADDRS if a != addr)
        srv = Server(self.binary, self.workdir,
                     ["--listen-address", addr, "--drain-timeout-ms", "5000",
                      "--native-transport-port", str(self.native),
                      "--native-shard-aware-transport-port", str(self.shard_aware),
                      "--peers", peers] + cql_smp_args(2),
                     None, free_port())
        srv.host = addr
        if i < len(self.members):
            self.members[i] = srv
        else:
            self.members.append(srv)
        return srv

    def wait(self, srv):
        srv.wait_ready(ports=[self.native, self.shard_aware, srv.prom_port],
                       timeout=READY_TIMEOUT)


@pytest.fixture(scope="module")
def group(shardmark_bin, tmp_path_factory):
    pytest.importorskip("cassandra")
    native, shard_aware, _ = cql_free_ports()
    g = Group(shardmark_bin, tmp_path_factory.mktemp("peers"), native, shard_aware)
    members = g.members
    try:
        for i in range(len(ADDRS)):
            g.start(i)
        for srv in members:
            g.wait(srv)
        yield g
    finally:
        # the members still up stop cleanly (the sanitizer build checks for leaks then)
        unclean = []
        for srv in members:
            if srv.proc.poll() is None:
                srv.send_signal(signal.SIGTERM)
                if srv.wait_exit() != 0:
                    unclean.append(srv.describe())
            srv.kill()
        assert not unclean, "\n".join(unclean)


def cluster(group, policy, hosts=None, **kwargs):
    from cassandra.cluster import Cluster
    return Cluster(contact_points=list(hosts or ADDRS[:1]), port=group.native,
                   load_balancing_policy=policy, connect_timeout=CQL_DRIVER_TIMEOUT,
                   control_connection_timeout=CQL_DRIVER_TIMEOUT,
                   max_schema_agreement_wait=20, **kwargs)


def only(addr):
    """A policy that uses member `addr` alone, whatever it owns."""
    from cassandra.policies import WhiteListRoundRobinPolicy
    return WhiteListRoundRobinPolicy([addr])


@pytest.fixture(scope="module")
def rr(group):
    """A round-robin session through member 1, and one session per member."""
    from cassandra.policies import RoundRobinPolicy
    clusters = []
    try:
        c = cluster(group, RoundRobinPolicy())
        clusters.append(c)
        session = c.connect()
        per_member = {}
        for addr in ADDRS:
            m = cluster(group, only(addr), hosts=[addr])
            clusters.append(m)
            per_member[addr] = m.connect()
        yield session, per_member
    finally:
        for c in clusters:
            c.shutdown()


def forwarded(group):
    """Forwarded requests, summed over every member and shard."""
    total = 0
    for srv in group.members:
        status, _, body = http_get(srv.prom_port, "/metrics")
        assert status == 200, body
        samples = parse_prometheus(body)
        for name in FORWARDED:
            total += sum(metric_by_shard(samples, name).values())
    return total


def test_ddl_reaches_every_member(group, rr):
    session, per_member = rr
    session.execute("CREATE KEYSPACE grp WITH replication = "
                    "{'class': 'NetworkTopologyStrategy', 'replication_factor': 1}")
    session.execute("CREATE TABLE grp.kv (k int PRIMARY KEY, v text)")
    session.execute("CREATE TABLE grp.wide (p int, c int, v int, PRIMARY KEY (p, c))")
    # applied everywhere before the answer: no waiting for this
    for addr, s in per_member.items():
        tables = {r.table_name for r in
                  s.execute("SELECT table_name FROM system_schema.tables "
                            "WHERE keyspace_name = 'grp'")}
        assert tables == {"kv", "wide"}, (addr, tables)
    # the versions are content digests: equal everywhere; what a member
    # shows for its peers catches up within its poll (a second)
    wait_agreement(per_member)


def wait_agreement(sessions):
    """Poll until every member shows one schema_version, for itself and its peers."""
    deadline = time.monotonic() + READY_TIMEOUT
    while True:
        seen = {}
        for addr, s in sessions.items():
            local = s.execute("SELECT schema_version FROM system.local").one().schema_version
            peers = {r.schema_version for r in
                     s.execute("SELECT schema_version FROM system.peers")}
            seen[addr] = (local, peers)
        if all(p == {l} for l, p in seen.values()) and len({l for l, _ in seen.values()}) == 1:
            return
        assert time.monotonic() < deadline, f"no schema agreement: {seen}"
        time.sleep(0.1)


def test_round_robin_reads_return_writes(group, rr):
    session, per_member = rr
    before = forwarded(group)
    for k in range(ROWS):
        session.execute("INSERT INTO grp.kv (k, v) VALUES (%s, %s)", (k, f"rr{k}"))
    # through each member in turn, prepared (EXECUTE), and a one-partition batch
    for k in range(ROWS, 2 * ROWS):
        s = per_member[ADDRS[k % 3]]
        s.execute(s.prepare("INSERT INTO grp.kv (k, v) VALUES (?, ?)"), (k, f"pm{k}"))
        s.execute("BEGIN BATCH INSERT INTO grp.wide (p, c, v) VALUES (%s, 1, %s); "
                  "INSERT INTO grp.wide (p, c, v) VALUES (%s, 2, %s) APPLY BATCH",
                  (k, k, k, -k))
    for addr, s in per_member.items():
        sel = s.prepare("SELECT v FROM grp.kv WHERE k = ?")
        for k in range(2 * ROWS):
            want = f"rr{k}" if k < ROWS else f"pm{k}"
            got = s.execute("SELECT v FROM grp.kv WHERE k = %s", (k,)).one()
            assert got is not None and got.v == want, (addr, k, got)
            assert s.execute(sel, (k,)).one().v == want, (addr, k)
        for k in range(ROWS, 2 * ROWS):
            rows = [tuple(r) for r in
                    s.execute("SELECT c, v FROM grp.wide WHERE p = %s", (k,))]
            assert rows == [(1, k), (2, -k)], (addr, k, rows)
    # keys spread over the ring: some went to another member than the one asked
    assert forwarded(group) > before


def test_lwt_and_paging_through_any_member(group, rr):
    _, per_member = rr
    a, b, c = (per_member[x] for x in ADDRS)
    for k in range(6):
        r = a.execute("INSERT INTO grp.kv (k, v) VALUES (%s, 'first') IF NOT EXISTS",
                      (1000 + k,)).one()
        assert r[0] is True, r
        r = b.execute("INSERT INTO grp.kv (k, v) VALUES (%s, 'second') IF NOT EXISTS",
                      (1000 + k,)).one()
        assert r[0] is False and r.v == "first", r
    from cassandra.query import SimpleStatement
    for p in range(3):
        a.execute("BEGIN UNLOGGED BATCH " + " ".join(
            f"INSERT INTO grp.wide (p, c, v) VALUES ({5000 + p}, {i}, {i});" for i in range(25))
            + " APPLY BATCH")
        # paged through another member: the owner's paging state comes back to it
        st = SimpleStatement(f"SELECT c FROM grp.wide WHERE p = {5000 + p}", fetch_size=7)
        assert [r.c for r in c.execute(st)] == list(range(25))
    # a conditional batch over several rows goes to the partition's owner whole
    for p in range(6):
        q = (f"BEGIN BATCH INSERT INTO grp.wide (p, c, v) VALUES ({6000 + p}, 1, 1) IF NOT EXISTS; "
             f"INSERT INTO grp.wide (p, c, v) VALUES ({6000 + p}, 2, 2) IF NOT EXISTS; "
             "APPLY BATCH")
        assert [r[0] for r in a.execute(q)] == [True, True]
        assert [r[0] for r in b.execute(q)] == [False, False]
        assert [tuple(r) for r in c.execute(f"SELECT c, v FROM grp.wide WHERE p = {6000 + p}")] \
            == [(1, 1), (2, 2)]


def test_token_aware_forwards_nothing(group):
    from cassandra.policies import RoundRobinPolicy, TokenAwarePolicy
    c = cluster(group, TokenAwarePolicy(RoundRobinPolicy()))
    try:
        s = c.connect("grp")
        ins = s.prepare("INSERT INTO kv (k, v) VALUES (?, ?)")
        sel = s.prepare("SELECT v FROM kv WHERE k = ?")
        before = forwarded(group)
        for k in range(3000, 3000 + ROWS):
            s.execute(ins, (k, f"ta{k}"))
            assert s.execute(sel, (k,)).one().v == f"ta{k}"
        assert forwarded(group) == before, "token-aware requests were forwarded"
    finally:
        c.shutdown()


def test_several_members_refused(rr):
    from cassandra import InvalidRequest
    session, per_member = rr
    s = per_member[ADDRS[0]]
    with pytest.raises(InvalidRequest, match="appliance group"):
        s.execute("SELECT * FROM grp.kv")
    with pytest.raises(InvalidRequest, match="several members"):
        s.execute("SELECT * FROM grp.kv WHERE k IN (%s)" % ",".join(map(str, range(ROWS))))
    with pytest.raises(InvalidRequest, match="appliance group"):
        s.execute("CREATE INDEX ON grp.kv (v)")


def test_misconfigured_member_refused(group, rr, shardmark_bin, tmp_path):
    """A member whose peers list differs splits the ring otherwise: the
    others refuse its coordinator's connections, so what it sends them fails
    saying why instead of landing on the wrong member."""
    from cassandra.cluster import NoHostAvailable
    from cassandra.protocol import ServerError
    addr = "127.0.0.4"
    srv = Server(shardmark_bin, tmp_path,
                 ["--listen-address", addr, "--drain-timeout-ms", "5000",
                  "--native-transport-port", str(group.native),
                  "--native-shard-aware-transport-port", str(free_port()),
                  "--peers", ADDRS[0]] + cql_smp_args(1), None, free_port())
    srv.host = addr
    try:
        srv.wait_ready(ports=[group.native, srv.prom_port])
        c = cluster(group, only(addr), hosts=[addr])
        try:
            s = c.connect()
            with pytest.raises((ServerError, NoHostAvailable), match="peers lists differ"):
                s.execute("CREATE KEYSPACE grp4 WITH replication = "
                          "{'class': 'NetworkTopologyStrategy', 'replication_factor': 1}")
        finally:
            c.shutdown()
        srv.stop()
    finally:
        srv.kill()
    # the group itself never saw it
    _, per_member = rr
    assert per_member[ADDRS[0]].execute(
        "SELECT keyspace_name FROM system_schema.keyspaces "
        "WHERE keyspace_name = 'grp4'").one() is None


def test_member_down_is_named(group, rr):
    """Last: member 3 stops. Its partitions get Unavailable naming it, DDL
    says where it did not apply, the others' partitions still work; started
    again, the DDL run again with IF NOT EXISTS catches it up."""
    from cassandra import Unavailable
    from cassandra.cluster import NoHostAvailable
    from cassandra.protocol import ServerError
    _, per_member = rr
    s = per_member[ADDRS[0]]
    group.members[2].kill()
    down, up = [], []
    for k in range(ROWS):
        try:
            s.execute("INSERT INTO grp.kv (k, v) VALUES (%s, 'late')", (k,))
            up.append(k)
        except (Unavailable, NoHostAvailable) as e:
            # the driver's retry policy tries the next host: none is left
            assert "Unavailable" in str(e) and "member 127.0.0.3:" in str(e), e
            down.append(k)
    assert down and up, (down, up)
    for k in up:
        assert s.execute("SELECT v FROM grp.kv WHERE k = %s", (k,)).one().v == "late"
    with pytest.raises((ServerError, NoHostAvailable),
                       match=r"127\.0\.0\.3.*Start the members named"):
        s.execute("CREATE TABLE grp.after (k int PRIMARY KEY)")
    # as the error says: start it (empty: no commitlog) and run the DDL again
    group.wait(group.start(2))
    for ddl in ("CREATE KEYSPACE IF NOT EXISTS grp WITH replication = "
                "{'class': 'NetworkTopologyStrategy', 'replication_factor': 1}",
                "CREATE TABLE IF NOT EXISTS grp.kv (k int PRIMARY KEY, v text)",
                "CREATE TABLE IF NOT EXISTS grp.wide (p int, c int, v int, PRIMARY KEY (p, c))",
                "CREATE TABLE IF NOT EXISTS grp.after (k int PRIMARY KEY)"):
        s.execute(ddl)
    c = cluster(group, only(ADDRS[2]), hosts=[ADDRS[2]])
    try:
        wait_agreement({ADDRS[0]: s, ADDRS[1]: per_member[ADDRS[1]], ADDRS[2]: c.connect()})
        for k in down:  # its partitions take writes again, through any member
            s.execute("INSERT INTO grp.kv (k, v) VALUES (%s, 'again')", (k,))
            assert per_member[ADDRS[1]].execute(
                "SELECT v FROM grp.kv WHERE k = %s", (k,)).one().v == "again"
    finally:
        c.shutdown()
