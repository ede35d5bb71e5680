# SPDX-License-Identifier: BSD-3-Clause
"""Alternator: ReturnConsumedCapacity and ReturnItemCollectionMetrics.

Rewritten from the cases of ScyllaDB's test/alternator/test_returnconsumedcapacity.py
(names in the comments are theirs): reads cost one unit per 4 KB of the item
(half when eventually consistent), writes one per 1 KB of the larger of the
old and new item, sizes as DynamoDB counts them (names and values).
"""

from decimal import Decimal

import pytest

pytest.importorskip("boto3")

from conftest import (alt_create_indexed_table, alt_create_table,  # noqa: E402
                      alt_expect_error, alt_unique_table_name)

KB = 1024


@pytest.fixture(scope="module")
def tsb(dynamodb):
    t = alt_create_table(dynamodb, range_key=("c", "B"))
    yield t
    t.delete()


@pytest.fixture(scope="module")
def tss(dynamodb):
    t = alt_create_table(dynamodb, range_key=("c", "S"))
    yield t
    t.delete()


@pytest.fixture(scope="module")
def ts(dynamodb):
    t = alt_create_table(dynamodb)
    yield t
    t.delete()


@pytest.fixture(scope="module")
def tsn(dynamodb):
    t = alt_create_table(dynamodb, range_key=("c", "N"))
    yield t
    t.delete()


def units(r):
    return r["ConsumedCapacity"]["CapacityUnits"]


# test_simple_get_item, test_missing_get_item
def test_simple_get(tsb, tss):
    tsb.put_item(Item={"p": "a", "c": b"x", "att": "v"})
    assert units(tsb.get_item(Key={"p": "a", "c": b"x"}, ConsistentRead=True,
                              ReturnConsumedCapacity="TOTAL")) == 1
    assert units(tsb.get_item(Key={"p": "a", "c": b"x"}, ConsistentRead=False,
                              ReturnConsumedCapacity="TOTAL")) == 0.5
    r = tss.get_item(Key={"p": "none", "c": "none"}, ConsistentRead=True,
                     ReturnConsumedCapacity="TOTAL")
    assert "Item" not in r and units(r) == 1
    assert r["ConsumedCapacity"]["TableName"] == tss.name
    assert units(tss.get_item(Key={"p": "none", "c": "none"},
                              ReturnConsumedCapacity="TOTAL")) == 0.5
    assert "ConsumedCapacity" not in tss.get_item(Key={"p": "none", "c": "none"})
    assert "ConsumedCapacity" not in tss.get_item(Key={"p": "none", "c": "none"},
                                                  ReturnConsumedCapacity="NONE")


# test_invalid_consumed_capacity_type
def test_invalid_mode(tsb):
    alt_expect_error("ValidationException", tsb.get_item, Key={"p": "a", "c": b"x"},
                     ReturnConsumedCapacity="DUMMY")
    alt_expect_error("ValidationException", tsb.put_item, Item={"p": "a", "c": b"x"},
                     ReturnItemCollectionMetrics="DUMMY")


# test_long_get
def test_long_get(tss):
    p, c, val = "pp", "cc", "vv"
    total = len(p) + len(c) + len(val) + len("pcattanother")
    val2 = "a" * (4 * KB - total)
    key = {"p": p, "c": c}
    tss.put_item(Item={"p": p, "c": c, "att": val, "another": val2})
    assert units(tss.get_item(Key=key, ConsistentRead=True, ReturnConsumedCapacity="TOTAL")) == 1
    tss.put_item(Item={"p": p, "c": c, "att": val, "another": val2 + "a"})
    assert units(tss.get_item(Key=key, ConsistentRead=True, ReturnConsumedCapacity="TOTAL")) == 2
    # the whole item counts, whatever the projection returns
    assert units(tss.get_item(Key=key, ProjectionExpression="p, c, att", ConsistentRead=True,
                              ReturnConsumedCapacity="TOTAL")) == 2
    assert units(tss.get_item(Key=key, ProjectionExpression="p, c, att", ConsistentRead=False,
                              ReturnConsumedCapacity="TOTAL")) == 1
    tss.put_item(Item={"p": "q", "c": c, "att": val, "a" * (4 * KB): "x"})
    assert units(tss.get_item(Key={"p": "q", "c": c}, ConsistentRead=True,
                              ReturnConsumedCapacity="TOTAL")) == 2


# test_simple_put_item, test_long_put, test_short_after_long_put
def test_put(tss):
    p, c, val = "p1", "c1", "v1"
    total = len(p) + len(c) + len(val) + len("pcattanother")
    val2 = "a" * (KB - total)
    assert units(tss.put_item(Item={"p": p, "c": c, "att": val, "another": val2},
                              ReturnConsumedCapacity="TOTAL")) == 1
    assert units(tss.put_item(Item={"p": p, "c": c, "att": val, "another": val2 + "a"},
                              ReturnConsumedCapacity="TOTAL")) == 2
    assert units(tss.put_item(Item={"p": "p2", "c": c, "att": val, "a" * KB: val},
                              ReturnConsumedCapacity="TOTAL")) == 2
    assert units(tss.put_item(Item={"p": "p3", "c": c, "att": val, "another": "a" * (2 * KB)},
                              ReturnConsumedCapacity="TOTAL")) == 3
    # with the old item read, the larger of the two counts
    assert units(tss.put_item(Item={"p": "p3", "c": c, "att": val, "another": "a"},
                              ReturnConsumedCapacity="TOTAL", ReturnValues="ALL_OLD")) == 3


# test_long_put_varied_key
def test_put_varied_key(dynamodb):
    name = alt_unique_table_name("cap")
    dynamodb.meta.client.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "p123", "KeyType": "HASH"},
                   {"AttributeName": "c4567", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": "p123", "AttributeType": "S"},
                              {"AttributeName": "c4567", "AttributeType": "S"}])
    t = dynamodb.Table(name)
    try:
        total = 2 + 2 + 2 + len("p123c4567attanother")
        val2 = "a" * (KB - total)
        assert units(t.put_item(Item={"p123": "pp", "c4567": "cc", "att": "vv", "another": val2},
                                ReturnConsumedCapacity="TOTAL")) == 1
        assert units(t.put_item(Item={"p123": "pp", "c4567": "cc", "att": "vv",
                                      "another": val2 + "a"},
                                ReturnConsumedCapacity="TOTAL")) == 2
    finally:
        t.delete()


def num_length(n):
    s = str(n)
    n = len(s) + (1 if "-" in s else 0) + 1
    return int(n / 2 + 1)


# test_number_magnitude_key
def test_number_magnitude(tsn):
    p = "pn"
    for n in (Decimal("3.14"), Decimal("3"), Decimal("3143846.26433832795028841"),
              Decimal("31415926535897932384626433832795028841e30")):
        for num in (-n, n):
            x = "xx"
            total = len(p) + len(x) + num_length(num) + len("pcaval2")
            val2 = "a" * (KB - total - 5)
            assert units(tsn.put_item(Item={"p": p, "c": num, "a": x, "val2": val2},
                                      ReturnConsumedCapacity="TOTAL")) == 1
            assert units(tsn.put_item(Item={"p": p, "c": num, "a": x, "val2": val2 + "a" * 10},
                                      ReturnConsumedCapacity="TOTAL")) == 2


# test_simple_delete_item, test_delete_missing_item, test_long_delete
def test_delete(tsb, tss):
    tsb.put_item(Item={"p": "d", "c": b"x", "att": "v"})
    assert units(tsb.delete_item(Key={"p": "d", "c": b"x"}, ReturnConsumedCapacity="TOTAL")) == 1
    assert units(tsb.delete_item(Key={"p": "d", "c": b"y"}, ReturnConsumedCapacity="TOTAL")) == 1
    total = 2 + 2 + 2 + len("pcattanother")
    tss.put_item(Item={"p": "dd", "c": "cc", "att": "vv", "another": "a" * (1 + 2 * KB - total)})
    assert units(tss.delete_item(Key={"p": "dd", "c": "cc"}, ReturnConsumedCapacity="TOTAL",
                                 ReturnValues="ALL_OLD")) == 3


# test_simple_update_item, test_simple_update_missing_item,
# test_update_item_long_attr, test_long_update
def test_update(tsb, tss):
    k = {"p": "u", "c": b"x"}
    tsb.put_item(Item=dict(k, att="v"))
    kw = dict(UpdateExpression="SET att = :v", ReturnConsumedCapacity="TOTAL")
    assert units(tsb.update_item(Key=k, ExpressionAttributeValues={":v": "w"}, **kw)) == 1
    assert units(tsb.update_item(Key={"p": "u2", "c": b"x"},
                                 ExpressionAttributeValues={":v": "w"}, **kw)) == 1
    total = len("u") + len(b"x") + len("pcatt")
    assert units(tsb.update_item(Key=k, ExpressionAttributeValues={":v": "a" * (2 * KB + 1 - total)},
                                 **kw)) == 3
    total = 2 + 2 + 2 + len("pcattanother")
    tss.put_item(Item={"p": "uu", "c": "cc", "att": "vv", "another": "a" * (1 + 2 * KB - total)})
    assert units(tss.update_item(Key={"p": "uu", "c": "cc"}, UpdateExpression="SET another = :v",
                                 ExpressionAttributeValues={":v": "a"},
                                 ReturnConsumedCapacity="TOTAL", ReturnValues="ALL_OLD")) == 3


# test_simple_batch_get_items, test_multi_table_batch_get_items
def test_batch_get(tsb, ts, tss):
    tsb.put_item(Item={"p": "b1", "c": b"1"})
    tsb.put_item(Item={"p": "b2", "c": b"2"})
    c = tsb.meta.client
    r = c.batch_get_item(RequestItems={tsb.name: {
        "Keys": [{"p": "b1", "c": b"1"}, {"p": "b2", "c": b"2"}], "ConsistentRead": True}},
        ReturnConsumedCapacity="TOTAL")
    assert r["ConsumedCapacity"] == [{"TableName": tsb.name, "CapacityUnits": 2}]
    keys1 = [{"p": f"k{i}"} for i in range(5)]
    for k in keys1:
        ts.put_item(Item=k)
    keys2 = [{"p": f"k{i}", "c": "c"} for i in range(3)]
    for k in keys2:
        tss.put_item(Item=k)
    r = c.batch_get_item(RequestItems={ts.name: {"Keys": keys1, "ConsistentRead": True},
                                       tss.name: {"Keys": keys2, "ConsistentRead": False}},
                         ReturnConsumedCapacity="TOTAL")
    got = {cc["TableName"]: cc["CapacityUnits"] for cc in r["ConsumedCapacity"]}
    assert got == {ts.name: 5, tss.name: 1.5}


# test_simple_batch_write_item, test_multi_table_batch_write_item
def test_batch_write(ts, tss):
    c = ts.meta.client
    r = c.batch_write_item(RequestItems={ts.name: [
        {"PutRequest": {"Item": {"p": "w1", "a": "hi"}}},
        {"PutRequest": {"Item": {"p": "w2", "a": "hi"}}}]}, ReturnConsumedCapacity="TOTAL")
    assert r["ConsumedCapacity"] == [{"TableName": ts.name, "CapacityUnits": 2}]
    tss.put_item(Item={"p": "w", "c": "w"})
    s_items = [{"PutRequest": {"Item": {"p": f"w{i}", "a": "hi"}}} for i in range(3, 6)]
    s_items.append({"PutRequest": {"Item": {"p": "w6", "a": "a" * KB}}})
    items = [{"PutRequest": {"Item": {"p": "w7", "c": "w"}}},
             {"DeleteRequest": {"Key": {"p": "w", "c": "w"}}}]
    r = c.batch_write_item(RequestItems={ts.name: s_items, tss.name: items},
                           ReturnConsumedCapacity="TOTAL")
    got = {cc["TableName"]: cc["CapacityUnits"] for cc in r["ConsumedCapacity"]}
    assert got == {ts.name: 5, tss.name: 2}


def test_query_scan(tss):
    tss.put_item(Item={"p": "qs", "c": "1", "a": "x"})
    r = tss.query(KeyConditionExpression="p = :p", ExpressionAttributeValues={":p": "qs"},
                  ConsistentRead=True, ReturnConsumedCapacity="TOTAL")
    assert r["ConsumedCapacity"] == {"TableName": tss.name, "CapacityUnits": 1}
    r = tss.scan(ReturnConsumedCapacity="TOTAL", Limit=1)
    assert r["ConsumedCapacity"] == {"TableName": tss.name, "CapacityUnits": 0.5}


def test_indexes_mode(dynamodb):
    t = alt_create_indexed_table(dynamodb)
    name = t.name
    try:
        r = t.put_item(Item={"p": "a", "c": "b", "g": "g", "l": "l"},
                       ReturnConsumedCapacity="INDEXES", ReturnItemCollectionMetrics="SIZE")
        assert r["ConsumedCapacity"] == {"TableName": name, "CapacityUnits": 1,
                                         "Table": {"CapacityUnits": 1}}
        m = r["ItemCollectionMetrics"]
        assert m["ItemCollectionKey"] == {"p": "a"}
        assert len(m["SizeEstimateRangeGB"]) == 2
        r = t.query(IndexName="gsi", KeyConditionExpression="g = :g",
                    ExpressionAttributeValues={":g": "g"}, ReturnConsumedCapacity="INDEXES")
        cc = r["ConsumedCapacity"]
        assert cc["CapacityUnits"] == 0.5
        assert cc["GlobalSecondaryIndexes"] == {"gsi": {"CapacityUnits": 0.5}}
        r = t.query(IndexName="lsi", KeyConditionExpression="p = :p",
                    ExpressionAttributeValues={":p": "a"}, ConsistentRead=True,
                    ReturnConsumedCapacity="INDEXES")
        assert r["ConsumedCapacity"]["LocalSecondaryIndexes"] == {"lsi": {"CapacityUnits": 1}}
        # deletes report their item collection too
        r = t.delete_item(Key={"p": "a", "c": "b"}, ReturnItemCollectionMetrics="SIZE")
        assert "ItemCollectionMetrics" in r
    finally:
        t.delete()


def test_no_item_collections_without_lsi(ts):
    r = ts.put_item(Item={"p": "icm"}, ReturnItemCollectionMetrics="SIZE")
    assert "ItemCollectionMetrics" not in r
