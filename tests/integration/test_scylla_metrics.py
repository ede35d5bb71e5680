# SPDX-License-Identifier: BSD-3-Clause
"""ScyllaDB's metric names on /metrics, so that its dashboards and tools read
shardmark as they read ScyllaDB.

The Alternator cases are rewritten from ScyllaDB's test/alternator/
test_metrics.py (names in the comments are theirs): a metric is summed over
its shards, and since nothing says that no other request runs meanwhile, a
test checks that a counter grew, or grew by an exact amount where the
operation determines it (units, batch sizes). The CQL cases check ScyllaDB's
cql, transport and storage_proxy names the same way.
"""

import re
import time
import urllib.request

import pytest

pytest.importorskip("boto3")

from conftest import (alt_create_table, alt_expect_error, alt_resource,  # noqa: E402
                      alt_unique_table_name, cql_cluster, cql_create_keyspace,
                      cql_unique_name)

KB = 1024


def metrics_text(srv):
    url = f"http://{srv.host}:{srv.ports[3]}/metrics"
    with urllib.request.urlopen(url, timeout=30) as r:
        assert r.status == 200
        return r.read().decode()


def metric(text, name, labels=None):
    """The sum of @name's samples whose labels include @labels (test_metrics.py's
    get_metric)."""
    total = 0.0
    for line in re.findall("^" + re.escape(name) + "{.*$", text, re.MULTILINE):
        series, value = line.rsplit(" ", 1)
        got = series[len(name) + 1:-1].split(",")
        if labels and any(f'{k}="{v}"' not in got for k, v in labels.items()):
            continue
        total += float(value)
    return total


class Delta:
    """with Delta(srv) as d: ...; then d(name, labels) is how much it grew."""

    def __init__(self, srv):
        self.srv = srv

    def __enter__(self):
        self.before = metrics_text(self.srv)
        return self

    def __exit__(self, *exc):
        self.after = metrics_text(self.srv)
        return False

    def __call__(self, name, labels=None):
        return metric(self.after, name, labels) - metric(self.before, name, labels)


@pytest.fixture(scope="module")
def srv(alternator_server):
    return alternator_server


@pytest.fixture(scope="module")
def table(dynamodb):
    t = alt_create_table(dynamodb)
    yield t
    t.delete()


def rnd():
    return alt_unique_table_name("k")


def op(name):
    return {"op": name}


def item_operations(srv, table):
    """PutItem, GetItem, DeleteItem and UpdateItem of one key; -> their Delta."""
    p = rnd()
    with Delta(srv) as d:
        table.put_item(Item={"p": p})
        table.get_item(Key={"p": p})
        table.delete_item(Key={"p": p})
        table.update_item(Key={"p": p})
    return d


# test_item_operations
def test_item_operations_are_counted(srv, table):
    d = item_operations(srv, table)
    for name in ("PutItem", "GetItem", "DeleteItem", "UpdateItem"):
        assert d("scylla_alternator_operation", op(name)) >= 1, name


# test_batch_write_item, test_batch_get_item, test_scan_operations
def test_batch_and_scan_operations_are_counted(srv, table):
    c = table.meta.client
    with Delta(srv) as d:
        c.batch_write_item(RequestItems={table.name: [{"PutRequest": {"Item": {"p": rnd()}}}]})
        c.batch_get_item(RequestItems={table.name: {"Keys": [{"p": rnd()}],
                                                    "ConsistentRead": True}})
        table.scan(Limit=1)
        table.query(Limit=1, KeyConditionExpression="p=:p",
                    ExpressionAttributeValues={":p": "dog"})
    for name in ("BatchWriteItem", "BatchGetItem", "Scan", "Query"):
        assert d("scylla_alternator_operation", op(name)) >= 1, name


# test_table_operations, test_list_tables_operations, test_describe_endpoints_operations,
# test_tag_operations, test_ttl_operations: failed operations are counted too
def test_table_and_failed_operations_are_counted(srv, dynamodb, table):
    c = table.meta.client
    with Delta(srv) as d:
        t = alt_create_table(dynamodb)
        c.describe_table(TableName=t.name)
        c.update_table(TableName=t.name, BillingMode="PAY_PER_REQUEST")
        t.delete()
        c.list_tables(Limit=1)
        c.describe_endpoints()
        arn = c.describe_table(TableName=table.name)["Table"]["TableArn"]
        c.list_tags_of_resource(ResourceArn=arn)
        c.tag_resource(ResourceArn=arn, Tags=[{"Key": "k", "Value": "dog"}])
        c.untag_resource(ResourceArn=arn, TagKeys=["k"])
        c.describe_time_to_live(TableName=table.name)
        alt_expect_error("ValidationException", c.update_time_to_live, TableName=table.name)
    for name in ("CreateTable", "DescribeTable", "UpdateTable", "DeleteTable", "ListTables",
                 "DescribeEndpoints", "ListTagsOfResource", "TagResource", "UntagResource",
                 "DescribeTimeToLive", "UpdateTimeToLive"):
        assert d("scylla_alternator_operation", op(name)) >= 1, name


# test_streams_operations: counted even when they fail; test_streams_latency: GetRecords'
# latency when it succeeds
def test_streams_operations_are_counted(srv, dynamodb):
    import boto3
    from conftest import alt_boto_kwargs
    streams = boto3.session.Session().client("dynamodbstreams", **alt_boto_kwargs(srv))
    t = alt_create_table(dynamodb, StreamSpecification={
        "StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"})
    try:
        with Delta(srv) as d:
            streams.list_streams(TableName=t.name)
            alt_expect_error("ValidationException", streams.describe_stream, StreamArn="x" * 37)
            alt_expect_error("ValidationException", streams.get_records, ShardIterator="garbage")
            arn = t.meta.client.describe_table(TableName=t.name)["Table"]["LatestStreamArn"]
            shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]
            it = streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"],
                                            ShardIteratorType="LATEST")["ShardIterator"]
            streams.get_records(ShardIterator=it)
        for name in ("ListStreams", "DescribeStream", "GetShardIterator", "GetRecords"):
            assert d("scylla_alternator_operation", op(name)) >= 1, name
        assert d("scylla_alternator_op_latency_count", op("GetRecords")) >= 1
    finally:
        t.delete()


# test_unsupported_operation, test_total_operations
def test_unsupported_and_total_operations(srv):
    body = b"{}"
    req = urllib.request.Request(
        srv.alt_url, data=body, method="POST",
        headers={"X-Amz-Target": "DynamoDB_20120810.BoguousOperationName",
                 "Content-Type": "application/x-amz-json-1.0"})
    with Delta(srv) as d:
        try:
            urllib.request.urlopen(req, timeout=30)
        except urllib.error.HTTPError as e:
            assert e.code == 400
    assert d("scylla_alternator_unsupported_operations") >= 1
    assert d("scylla_alternator_total_operations") >= 1


# test_item_latency
def test_latency_histograms_count_successful_operations(srv, table):
    c = table.meta.client
    ops = ("PutItem", "GetItem", "DeleteItem", "UpdateItem", "BatchWriteItem", "BatchGetItem")
    with Delta(srv) as d:
        p = rnd()
        table.put_item(Item={"p": p})
        table.get_item(Key={"p": p})
        table.delete_item(Key={"p": p})
        table.update_item(Key={"p": p})
        c.batch_write_item(RequestItems={table.name: [{"PutRequest": {"Item": {"p": rnd()}}}]})
        c.batch_get_item(RequestItems={table.name: {"Keys": [{"p": rnd()}]}})
    for name in ops:
        assert d("scylla_alternator_op_latency_count", op(name)) >= 1, name
        assert d("scylla_alternator_op_latency_bucket", {"op": name, "le": "+Inf"}) >= 1
    text = metrics_text(srv)
    # buckets are cumulative, with ScyllaDB's bounds (512 us, then four per power of two)
    for name in ops:
        b = [metric(text, "scylla_alternator_op_latency_bucket", {"op": name, "le": le})
             for le in ("512.000000", "640.000000", "1024.000000", "+Inf")]
        assert b == sorted(b)
    assert 'quantile="0.99"' in text


# test_batch_write_item_count, test_batch_get_item_count
def test_batch_item_counts(srv, table):
    c = table.meta.client
    with Delta(srv) as d:
        c.batch_write_item(RequestItems={table.name: [
            {"PutRequest": {"Item": {"p": rnd(), "a": "hi"}}},
            {"PutRequest": {"Item": {"p": rnd(), "a": "hi"}}}]})
        c.batch_get_item(RequestItems={table.name: {"Keys": [{"p": rnd()}, {"p": rnd()}]}})
    assert d("scylla_alternator_batch_item_count", op("BatchWriteItem")) == 2
    assert d("scylla_alternator_batch_item_count", op("BatchGetItem")) == 2


# test_batch_write_item_histogram, test_batch_get_item_histogram
def test_batch_item_histograms(srv, table):
    c = table.meta.client
    name = "scylla_alternator_batch_item_count_histogram_bucket"
    with Delta(srv) as d:
        c.batch_write_item(RequestItems={table.name: [
            {"PutRequest": {"Item": {"p": rnd()}}} for _ in range(3)]})
    assert d(name, {"op": "BatchWriteItem", "le": "2.000000"}) == 0
    assert d(name, {"op": "BatchWriteItem", "le": "3.000000"}) == 1
    with Delta(srv) as d:
        for _ in range(2):
            c.batch_get_item(RequestItems={table.name: {
                "Keys": [{"p": rnd()} for _ in range(100)], "ConsistentRead": True}})
    assert d(name, {"op": "BatchGetItem", "le": "86.000000"}) == 0
    assert d(name, {"op": "BatchGetItem", "le": "103.000000"}) == 2


# test_rcu: a consistent read of an item of 4 KB and a byte costs 2 units
def test_read_units(srv, table):
    p, val = rnd(), rnd()
    val2 = "a" * (4 * KB - (len(p) + len(val) + len("pattanother")) + 1)
    table.put_item(Item={"p": p, "att": val, "another": val2})
    with Delta(srv) as d:
        table.get_item(Key={"p": p}, ConsistentRead=True)
    assert d("scylla_alternator_rcu_total") == 2
    with Delta(srv) as d:
        table.get_item(Key={"p": p})  # eventually consistent: half
    assert d("scylla_alternator_rcu_total") == 1


# test_wcu, test_wcu_batch_write_item
def test_write_units(srv, table):
    p, val = rnd(), rnd()
    val2 = "a" * (2 * KB - (len(p) + len(val) + len("pattanother")) + 1)
    with Delta(srv) as d:
        table.put_item(Item={"p": p, "att": val, "another": val2})
    assert d("scylla_alternator_wcu_total", op("PutItem")) == 3
    with Delta(srv) as d:
        table.meta.client.batch_write_item(RequestItems={table.name: [
            {"PutRequest": {"Item": {"p": rnd(), "a": "hi"}}},
            {"PutRequest": {"Item": {"p": rnd(), "a": "a" * KB}}}]})
    assert d("scylla_alternator_wcu_total", op("PutItem")) == 3
    with Delta(srv) as d:
        table.delete_item(Key={"p": p})
        table.update_item(Key={"p": p}, UpdateExpression="SET a = :v",
                          ExpressionAttributeValues={":v": "x"})
    assert d("scylla_alternator_wcu_total", op("DeleteItem")) == 1
    assert d("scylla_alternator_wcu_total", op("UpdateItem")) == 1


def test_filtered_rows(srv, table):
    p = rnd()
    table.put_item(Item={"p": p, "x": 1})
    with Delta(srv) as d:
        r = table.scan(FilterExpression="x = :one", ExpressionAttributeValues={":one": 2})
    assert r["Count"] == 0
    read = d("scylla_alternator_filtered_rows_read_total")
    assert read >= 1
    assert d("scylla_alternator_filtered_rows_matched_total") == 0
    assert d("scylla_alternator_filtered_rows_dropped_total") == read


def test_lwt_writes_are_counted(alternator):
    s = alternator(isolation="always_use_lwt")
    t = alt_create_table(alt_resource(s))
    with Delta(s) as d:
        t.put_item(Item={"p": "a"})
    assert d("scylla_alternator_write_using_lwt") == 1


# test_ttl_stats
def test_expiration_metrics(srv, dynamodb):
    t = alt_create_table(dynamodb)
    try:
        with Delta(srv) as d:
            t.put_item(Item={"p": "gone", "expiration": int(time.time()) - 60})
            t.meta.client.update_time_to_live(
                TableName=t.name,
                TimeToLiveSpecification={"AttributeName": "expiration", "Enabled": True})
            end = time.time() + 60
            while time.time() < end and "Item" in t.get_item(Key={"p": "gone"}):
                time.sleep(0.2)
            assert "Item" not in t.get_item(Key={"p": "gone"})
            # the pass that deleted it ends after its last table
            end = time.time() + 60
            while time.time() < end and metric(metrics_text(srv),
                                               "scylla_expiration_scan_passes") == 0:
                time.sleep(0.2)
        for name in ("scylla_expiration_scan_passes", "scylla_expiration_scan_table",
                     "scylla_expiration_items_deleted"):
            assert d(name) >= 1, name
        # the expiry's own delete is the service's, no client's DeleteItem
        assert d("scylla_alternator_operation", op("DeleteItem")) == 0
    finally:
        t.delete()


# ---- per table: scylla_alternator_table_*, labelled cf and ks, the shards summed ----

def cf(table, **labels):
    return {"cf": table.name, **labels}


# test_table_item_operations
def test_table_item_operations(srv, table):
    d = item_operations(srv, table)
    for name in ("PutItem", "GetItem", "DeleteItem", "UpdateItem"):
        assert d("scylla_alternator_table_operation", cf(table, op=name)) == 1, name
    assert d("scylla_alternator_table_total_operations", cf(table)) == 4
    text = metrics_text(srv)
    # one series per table and operation: the shard label is aggregated away, and the
    # keyspace is the table's
    lines = [ln for ln in text.splitlines()
             if ln.startswith("scylla_alternator_table_operation{")
             and f'cf="{table.name}"' in ln and 'op="PutItem"' in ln]
    assert len(lines) == 1 and "shard=" not in lines[0]
    assert f'ks="alternator_{table.name}"' in lines[0]


# test_table_batch_write_item
def test_table_batch_write_item(srv, table):
    with Delta(srv) as d:
        table.meta.client.batch_write_item(RequestItems={
            table.name: [{"PutRequest": {"Item": {"p": rnd(), "a": "hi"}}}]})
    assert d("scylla_alternator_table_operation", cf(table, op="BatchWriteItem")) == 1


# test_table_batch_write_item_histogram, test_table_batch_get_item_histogram
def test_table_batch_item_histograms(srv, table):
    c = table.meta.client
    name = "scylla_alternator_table_batch_item_count_histogram_bucket"
    with Delta(srv) as d:
        c.batch_write_item(RequestItems={table.name: [
            {"PutRequest": {"Item": {"p": rnd()}}} for _ in range(3)]})
        c.batch_get_item(RequestItems={table.name: {
            "Keys": [{"p": rnd()} for _ in range(3)], "ConsistentRead": True}})
    for o in ("BatchWriteItem", "BatchGetItem"):
        assert d(name, cf(table, op=o, le="2.000000")) == 0, o
        assert d(name, cf(table, op=o, le="3.000000")) == 1, o
        assert d("scylla_alternator_table_batch_item_count", cf(table, op=o)) == 3, o
    with Delta(srv) as d:
        for _ in range(2):
            c.batch_write_item(RequestItems={table.name: [
                {"PutRequest": {"Item": {"p": rnd()}}} for _ in range(25)]})
    assert d(name, cf(table, op="BatchWriteItem", le="24.000000")) == 0
    assert d(name, cf(table, op="BatchWriteItem", le="29.000000")) == 2


# test_rcu_per_table, test_wcu_per_table
def test_table_units(srv, table, dynamodb):
    other = alt_create_table(dynamodb)
    try:
        p, val = rnd(), rnd()
        val2 = "a" * (4 * KB - (len(p) + len(val) + len("pattanother")) + 1)
        table.put_item(Item={"p": p, "att": val, "another": val2})
        with Delta(srv) as d:
            table.get_item(Key={"p": p}, ConsistentRead=True)
            other.get_item(Key={"p": p})
        assert d("scylla_alternator_table_rcu_total", cf(table)) == 2
        assert d("scylla_alternator_table_rcu_total", cf(other)) == 0.5
        val2 = "a" * (2 * KB - (len(p) + len(val) + len("pattanother")) + 1)
        with Delta(srv) as d:
            table.put_item(Item={"p": rnd(), "att": val, "another": val2})
            table.meta.client.batch_write_item(RequestItems={table.name: [
                {"PutRequest": {"Item": {"p": rnd(), "a": "hi"}}},
                {"PutRequest": {"Item": {"p": rnd(), "a": "a" * KB}}}]})
        assert d("scylla_alternator_table_wcu_total", cf(table, op="PutItem")) == 6
        assert d("scylla_alternator_table_wcu_total", cf(other, op="PutItem")) == 0
    finally:
        other.delete()


def test_table_latency_and_filtering(srv, table):
    p = rnd()
    table.put_item(Item={"p": p, "x": 1})
    with Delta(srv) as d:
        table.get_item(Key={"p": p})
        r = table.scan(FilterExpression="x = :one", ExpressionAttributeValues={":one": 2})
    assert r["Count"] == 0
    assert d("scylla_alternator_table_op_latency_count", cf(table, op="GetItem")) == 1
    assert d("scylla_alternator_table_op_latency_bucket",
             cf(table, op="GetItem", le="+Inf")) == 1
    assert d("scylla_alternator_table_operation", cf(table, op="Scan")) == 1
    read = d("scylla_alternator_table_filtered_rows_read_total", cf(table))
    assert read >= 1
    assert d("scylla_alternator_table_filtered_rows_dropped_total", cf(table)) == read
    # the tables have no summary (stats.cc), the global one has
    text = metrics_text(srv)
    assert "scylla_alternator_table_op_latency_summary" not in text


def test_dropped_table_frees_its_counters(srv, dynamodb):
    t = alt_create_table(dynamodb)
    for _ in range(4):  # on every shard the requests land on
        t.put_item(Item={"p": rnd()})
    assert f'cf="{t.name}"' in metrics_text(srv)
    t.delete()
    assert f'cf="{t.name}"' not in metrics_text(srv)


# ---- CQL: the query processor, the native transport, the coordinator ----

@pytest.fixture(scope="module")
def cql(srv):
    pytest.importorskip("cassandra")
    cluster = cql_cluster(srv.cql_port)
    session = cluster.connect()
    ks = cql_create_keyspace(session, cql_unique_name("ks"))
    session.execute(f"CREATE TABLE {ks}.t (k int PRIMARY KEY, v int)")
    yield session, f"{ks}.t"
    cluster.shutdown()


def yes(c):
    return {"conditional": c}


def test_cql_statements_are_counted(srv, cql):
    session, t = cql
    with Delta(srv) as d:
        session.execute(f"INSERT INTO {t} (k, v) VALUES (1, 1)")
        session.execute(f"INSERT INTO {t} (k, v) VALUES (2, 2) IF NOT EXISTS")
        session.execute(f"UPDATE {t} SET v = 3 WHERE k = 1")
        session.execute(f"DELETE FROM {t} WHERE k = 2")
        session.execute(f"SELECT * FROM {t} WHERE k = 1")
        session.execute(f"BEGIN BATCH INSERT INTO {t} (k, v) VALUES (5, 5); "
                        f"INSERT INTO {t} (k, v) VALUES (6, 6); APPLY BATCH")
    assert d("scylla_cql_inserts", yes("no")) >= 1
    assert d("scylla_cql_inserts", yes("yes")) == 1
    assert d("scylla_cql_updates", yes("no")) >= 1
    assert d("scylla_cql_deletes", yes("no")) >= 1
    assert d("scylla_cql_reads") >= 1
    assert d("scylla_cql_batches", yes("no")) == 1
    assert d("scylla_cql_statements_in_batches", yes("no")) == 2


def test_cql_batch_messages_are_counted(srv, cql):
    from cassandra.query import BatchStatement
    session, t = cql
    ins = session.prepare(f"INSERT INTO {t} (k, v) VALUES (?, ?)")
    b = BatchStatement()
    for i in range(3):
        b.add(ins, (10 + i, i))
    with Delta(srv) as d:
        session.execute(b)
    assert d("scylla_cql_batches", yes("no")) == 1
    assert d("scylla_cql_statements_in_batches", yes("no")) == 3
    assert d("scylla_transport_cql_requests_count", {"kind": "BATCH"}) == 1
    assert d("scylla_storage_proxy_coordinator_write_latency_count") >= 1


def test_transport_metrics(srv, cql):
    session, t = cql
    sel = session.prepare(f"SELECT v FROM {t} WHERE k = ?")
    with Delta(srv) as d:
        for i in range(5):
            session.execute(sel, (i,))
        session.execute(f"SELECT v FROM {t} WHERE k = 1")
    assert d("scylla_transport_cql_requests_count", {"kind": "EXECUTE"}) == 5
    assert d("scylla_transport_cql_requests_count", {"kind": "QUERY"}) >= 1
    assert d("scylla_transport_requests_served") >= 6
    text = metrics_text(srv)
    assert metric(text, "scylla_transport_current_connections") >= 1
    assert metric(text, "scylla_transport_connections") >= 1
    assert metric(text, "scylla_transport_requests_serving") >= 0


def test_coordinator_latencies(srv, cql):
    session, t = cql
    with Delta(srv) as d:
        session.execute(f"INSERT INTO {t} (k, v) VALUES (20, 1)")
        session.execute(f"SELECT v FROM {t} WHERE k = 20")
        session.execute(f"SELECT v FROM {t}")
        session.execute(f"UPDATE {t} SET v = 2 WHERE k = 20 IF v = 1")
    name = "scylla_storage_proxy_coordinator_"
    assert d(name + "write_latency_count") >= 1
    assert d(name + "read_latency_count") >= 1
    assert d(name + "cas_write_latency_count") == 1
    assert d(name + "write_latency_bucket", {"le": "+Inf"}) >= 1
    text = metrics_text(srv)
    assert re.search(r'^scylla_storage_proxy_coordinator_write_latency_summary\{quantile="0.99"\} \d+$',
                     text, re.MULTILINE)


# replica/table.cc: scylla_column_family_{read,write}_latency per table (cf, ks), the shards
# summed; their _count is the table's reads and writes
def test_column_family_latencies(srv, cql):
    session, t = cql
    ks = t.split(".")[0]
    session.execute(f"CREATE TABLE {ks}.cf2 (k int PRIMARY KEY, v int)")
    ins = session.prepare(f"INSERT INTO {ks}.cf2 (k, v) VALUES (?, ?)")
    labels = {"cf": "cf2", "ks": ks}
    with Delta(srv) as d:
        for k in range(4):  # prepared and bound on the shards they land on
            session.execute(ins, (k, k))
        session.execute(f"UPDATE {ks}.cf2 SET v = 9 WHERE k = 1")
        session.execute(f"SELECT * FROM {ks}.cf2 WHERE k = 1")
        session.execute(f"SELECT * FROM {ks}.cf2")
        session.execute(f"SELECT * FROM {t} WHERE k = 1")
    assert d("scylla_column_family_write_latency_count", labels) == 5
    assert d("scylla_column_family_read_latency_count", labels) == 2
    assert d("scylla_column_family_write_latency_bucket", {**labels, "le": "+Inf"}) == 5
    assert d("scylla_column_family_read_latency_count", {"cf": "t", "ks": ks}) == 1
    text = metrics_text(srv)
    lines = [ln for ln in text.splitlines()
             if ln.startswith("scylla_column_family_write_latency_count{") and 'cf="cf2"' in ln]
    assert len(lines) == 1 and "shard=" not in lines[0]
    assert 'scylla_column_family_write_latency_summary{cf="cf2"' in text
    # the system keyspaces have none, as in ScyllaDB
    session.execute("SELECT * FROM system.local")
    assert 'ks="system' not in metrics_text(srv)
    # a dropped table's counters go with it
    session.execute(f"DROP TABLE {ks}.cf2")
    assert 'cf="cf2"' not in metrics_text(srv)
