# SPDX-License-Identifier: BSD-3-Clause
"""Alternator: Time to Live through boto3.

Rewritten from the cases of ScyllaDB's test/alternator/test_ttl.py (names in
the comments are theirs): UpdateTimeToLive and DescribeTimeToLive, their
errors, the internal tag system:ttl_attribute, and expiry by each shard's
background scanner (the server runs with alternator_ttl_period_in_seconds 1,
its default). Expiry is waited for by polling with a generous deadline: the
tests assert what happens, never how fast.
"""

import time
from decimal import Decimal

import pytest

pytest.importorskip("boto3")

from conftest import (alt_all_pages, alt_client, alt_create_indexed_table,  # noqa: E402
                      alt_create_table, alt_expect_error, alt_unique_table_name)

DEADLINE = 60.0
ENABLE = {"AttributeName": "expiration", "Enabled": True}


def wait_for(pred, deadline=DEADLINE):
    end = time.time() + deadline
    while time.time() < end:
        if pred():
            return True
        time.sleep(0.2)
    return pred()


def has(table, key):
    return "Item" in table.get_item(Key=key, ConsistentRead=True)


@pytest.fixture
def table(dynamodb):
    t = alt_create_table(dynamodb)
    yield t
    t.delete()


# test_describe_ttl_without_ttl
def test_describe_without_ttl(table):
    r = table.meta.client.describe_time_to_live(TableName=table.name)
    assert r["TimeToLiveDescription"] == {"TimeToLiveStatus": "DISABLED"}


# test_ttl_enable
def test_enable(table):
    c = table.meta.client
    r = c.update_time_to_live(TableName=table.name, TimeToLiveSpecification=ENABLE)
    assert r["TimeToLiveSpecification"] == ENABLE
    assert c.describe_time_to_live(TableName=table.name)["TimeToLiveDescription"] == {
        "TimeToLiveStatus": "ENABLED", "AttributeName": "expiration"}
    alt_expect_error("ValidationException", c.update_time_to_live, TableName=table.name,
                     TimeToLiveSpecification=ENABLE, match="(active|enabled)")
    alt_expect_error("ValidationException", c.update_time_to_live, TableName=table.name,
                     TimeToLiveSpecification={"AttributeName": "new", "Enabled": True},
                     match="(active|enabled)")


# test_ttl_disable_errors, test_ttl_disable
def test_disable(table):
    c = table.meta.client
    off = {"AttributeName": "expiration", "Enabled": False}
    alt_expect_error("ValidationException", c.update_time_to_live, TableName=table.name,
                     TimeToLiveSpecification=off, match="disabled")
    c.update_time_to_live(TableName=table.name, TimeToLiveSpecification=ENABLE)
    alt_expect_error("ValidationException", c.update_time_to_live, TableName=table.name,
                     TimeToLiveSpecification={"AttributeName": "dog", "Enabled": False},
                     match="different")
    r = c.update_time_to_live(TableName=table.name, TimeToLiveSpecification=off)
    assert r["TimeToLiveSpecification"] == off
    assert c.describe_time_to_live(TableName=table.name)["TimeToLiveDescription"] == {
        "TimeToLiveStatus": "DISABLED"}


# test_update_ttl_errors
def test_update_errors(table):
    c = table.meta.client
    alt_expect_error("ResourceNotFoundException", c.update_time_to_live,
                     TableName=alt_unique_table_name(), TimeToLiveSpecification=ENABLE)
    for name in ("x" * 256, ""):
        alt_expect_error("ValidationException", c.update_time_to_live, TableName=table.name,
                         TimeToLiveSpecification={"AttributeName": name, "Enabled": True},
                         match="length")
    alt_expect_error("ValidationException", c.update_time_to_live, TableName=table.name,
                     TimeToLiveSpecification={"Enabled": True}, match="[aA]ttributeName")
    alt_expect_error("ValidationException", c.update_time_to_live, TableName=table.name,
                     TimeToLiveSpecification={"AttributeName": "hello"}, match="[eE]nabled")
    # DynamoDB: SerializationException for the wrong JSON types
    alt_expect_error("SerializationException", c.update_time_to_live, TableName=table.name,
                     TimeToLiveSpecification={"AttributeName": "hello", "Enabled": "dog"})
    alt_expect_error("SerializationException", c.update_time_to_live, TableName=table.name,
                     TimeToLiveSpecification={"AttributeName": 3, "Enabled": True})
    alt_expect_error("ValidationException", c.update_time_to_live, TableName=table.name)


# test_ttl_tag_is_invisible, test_ttl_tag_is_unwritable
def test_tag_internal(dynamodb):
    tags = [{"Key": "k", "Value": "v"}]
    t = alt_create_table(dynamodb, Tags=tags)
    try:
        c = t.meta.client
        c.update_time_to_live(TableName=t.name,
                              TimeToLiveSpecification={"AttributeName": "x", "Enabled": True})
        arn = c.describe_table(TableName=t.name)["Table"]["TableArn"]
        assert c.list_tags_of_resource(ResourceArn=arn)["Tags"] == tags
        alt_expect_error("ValidationException", c.tag_resource, ResourceArn=arn,
                         Tags=[{"Key": "system:ttl_attribute", "Value": "y"}], match="internal")
        alt_expect_error("ValidationException", c.untag_resource, ResourceArn=arn,
                         TagKeys=["system:ttl_attribute"], match="internal")
        # other tags still change, and TTL stays as it was
        c.tag_resource(ResourceArn=arn, Tags=[{"Key": "k2", "Value": "v2"}])
        assert c.describe_time_to_live(TableName=t.name)["TimeToLiveDescription"] == {
            "TimeToLiveStatus": "ENABLED", "AttributeName": "x"}
    finally:
        t.delete()


# test_ttl_expiration (without its fixed duration: done once the expected
# items are gone), on 2 shards so items of both are expired
def test_expiration(table, dynamodb_client):
    now = int(time.time())
    p0 = "p0"
    table.put_item(Item={"p": p0, "expiration": now - 60})  # before TTL was enabled
    table.meta.client.update_time_to_live(TableName=table.name,
                                          TimeToLiveSpecification=ENABLE)
    keep = {
        "p1": {"p": "p1"},                                   # no attribute
        "p3": {"p": "p3", "expiration": 162777600},          # more than 5 years ago
        "p6": {"p": "p6", "expiration": now + 3600},         # in the future
        "p7": {"p": "p7", "expiration": str(now - 60)},      # a string, not a number
        "p10": {"p": "p10", "expiration": {"N": "x"}},       # a map, not a number
    }
    gone = {
        "p2": {"p": "p2", "expiration": now - 60},
        "p9": {"p": "p9", "expiration": Decimal(str(time.time() - 60))},
    }
    for i in list(keep.values()) + list(gone.values()):
        table.put_item(Item=i)
    dynamodb_client.put_item(TableName=table.name, Item={
        "p": {"S": "p8"}, "expiration": {"N": str((now - 60) // 10) + "e1"}})
    gone["p8"] = None
    gone["p0"] = None
    many = [f"m{i}" for i in range(40)]  # spread over both shards
    with table.batch_writer() as w:
        for p in many:
            w.put_item(Item={"p": p, "expiration": now - 30})
    # expired but not yet deleted items are still readable (as in DynamoDB):
    # nothing asserted about that, the scanner may be quick

    def done():
        return not any(has(table, {"p": p}) for p in list(gone) + many)

    assert wait_for(done)
    for p in keep:
        assert has(table, {"p": p}), p


# test_ttl_expiration_with_rangekey
def test_expiration_with_rangekey(dynamodb):
    t = alt_create_table(dynamodb, range_key=("c", "S"))
    try:
        t.meta.client.update_time_to_live(TableName=t.name, TimeToLiveSpecification=ENABLE)
        t.put_item(Item={"p": "a", "c": "1"})
        t.put_item(Item={"p": "a", "c": "2", "expiration": int(time.time()) - 60})
        assert wait_for(lambda: not has(t, {"p": "a", "c": "2"}))
        assert has(t, {"p": "a", "c": "1"})
    finally:
        t.delete()


# test_ttl_expiration_hash, test_ttl_expiration_range,
# test_ttl_expiration_hash_wrong_type (a key attribute as the expiration time)
def test_expiration_key_attributes(dynamodb):
    th = alt_create_table(dynamodb, hash_key=("p", "N"))
    tr = alt_create_table(dynamodb, range_key=("c", "N"))
    ts = alt_create_table(dynamodb)
    try:
        now = int(time.time())
        for t, attr in ((th, "p"), (tr, "c"), (ts, "p")):
            t.meta.client.update_time_to_live(
                TableName=t.name, TimeToLiveSpecification={"AttributeName": attr,
                                                           "Enabled": True})
        th.put_item(Item={"p": now - 60})
        th.put_item(Item={"p": now + 3600})
        tr.put_item(Item={"p": "x", "c": now - 60})
        tr.put_item(Item={"p": "x", "c": now + 3600})
        ts.put_item(Item={"p": str(now - 60)})
        assert wait_for(lambda: not has(th, {"p": now - 60})
                        and not has(tr, {"p": "x", "c": now - 60}))
        assert has(th, {"p": now + 3600})
        assert has(tr, {"p": "x", "c": now + 3600})
        assert has(ts, {"p": str(now - 60)})
    finally:
        for t in (th, tr, ts):
            t.delete()


# test_ttl_expiration_gsi_lsi, test_ttl_expiration_lsi_key
def test_expiration_gsi_lsi(dynamodb):
    t = alt_create_indexed_table(dynamodb)
    name = t.name
    c = dynamodb.meta.client
    try:
        c.update_time_to_live(TableName=name, TimeToLiveSpecification=ENABLE)
        item = {"p": "p", "c": "c", "g": "g", "l": "l"}
        t.put_item(Item=item)

        def alive():
            return (has(t, {"p": "p", "c": "c"}),
                    bool(alt_all_pages(t.query, IndexName="gsi",
                                       KeyConditionExpression="g = :g",
                                       ExpressionAttributeValues={":g": "g"})),
                    bool(alt_all_pages(t.query, IndexName="lsi",
                                       KeyConditionExpression="p = :p AND l = :l",
                                       ExpressionAttributeValues={":p": "p", ":l": "l"})))
        time.sleep(1.5)  # a scanner pass at least: a live item stays
        assert alive() == (True, True, True)
        t.put_item(Item=dict(item, expiration=int(time.time()) - 60))
        assert wait_for(lambda: alive() == (False, False, False))
    finally:
        t.delete()


# test_ttl_expiration_long: more items than one scanner step, several
# partitions of 100 rows, one expired row in each
def test_expiration_long(dynamodb, alternator_server):
    t = alt_create_table(dynamodb, hash_key=("p", "N"), range_key=("c", "N"))
    n = 12
    try:
        t.meta.client.update_time_to_live(TableName=t.name, TimeToLiveSpecification=ENABLE)
        now = int(time.time())
        with t.batch_writer() as w:
            for p in range(n):
                for c in range(100):
                    w.put_item(Item={"p": p, "c": c,
                                     "expiration": now - 60 if c == 0 else now + 3600})
        client = alt_client(alternator_server)

        def count():
            return len(alt_all_pages(client.scan, TableName=t.name, ConsistentRead=True))
        assert wait_for(lambda: count() == 99 * n)
        client.close()
    finally:
        t.delete()
