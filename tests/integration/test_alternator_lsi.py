# SPDX-License-Identifier: BSD-3-Clause
"""Alternator: local secondary indexes through boto3.

Rewritten from the cases of ScyllaDB's test/alternator/test_lsi.py (names in
the comments are theirs): an LSI keeps the base table's partition key and
sorts it by another attribute; it is read strongly consistent, holds every
attribute (so Select=ALL_ATTRIBUTES works whatever its projection, while
the default returns the projection), and has no IndexStatus.
"""

import pytest

pytest.importorskip("boto3")

from conftest import alt_expect_error, alt_unique_table_name  # noqa: E402
from test_alternator_gsi import defs, eq, full, gsi, multiset, rnd  # noqa: E402


def lsi(name, range_key, hash_key="p", projection=None):
    return {"IndexName": name,
            "KeySchema": [{"AttributeName": hash_key, "KeyType": "HASH"},
                          {"AttributeName": range_key, "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"} if projection is None else projection}


def create(dynamodb, lsis, gsis=(), range_key="c", types=None, **kwargs):
    schema = [{"AttributeName": "p", "KeyType": "HASH"}]
    if range_key:
        schema.append({"AttributeName": range_key, "KeyType": "RANGE"})
    name = kwargs.pop("name", None) or alt_unique_table_name("lsi")
    extra = {"LocalSecondaryIndexes": list(lsis)}
    if gsis:
        extra["GlobalSecondaryIndexes"] = list(gsis)
    dynamodb.meta.client.create_table(
        TableName=name, KeySchema=schema, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=defs(**(types or {"p": "S", "c": "S", "b": "S"})), **extra, **kwargs)
    return dynamodb.Table(name)


@pytest.fixture(scope="module")
def t1(dynamodb):
    """Base (p, c); LSI 'hello' (p, b)."""
    t = create(dynamodb, [lsi("hello", "b")])
    yield t
    t.delete()


@pytest.fixture(scope="module")
def tk(dynamodb):
    """Base (p, c); LSI 'hello' (p, b) projecting the keys only."""
    t = create(dynamodb, [lsi("hello", "b", projection={"ProjectionType": "KEYS_ONLY"})])
    yield t
    t.delete()


def q(table, p, b=None, **kwargs):
    cond = eq("p", p)
    if b is not None:
        cond.update(eq("b", b))
    return full(table.query, IndexName="hello", KeyConditions=cond, **kwargs)


# test_lsi_identical
def test_identical(dynamodb):
    t = create(dynamodb, [lsi("hello", "c")], types={"p": "S", "c": "S"})
    try:
        items = [{"p": rnd(), "c": rnd()} for _ in range(10)]
        with t.batch_writer() as w:
            for i in items:
                w.put_item(i)
        assert multiset(full(t.scan, IndexName="hello")) == multiset(items)
        alt_expect_error("ValidationException", t.scan, IndexName="wrong")
    finally:
        t.delete()


# test_lsi_wrong_different_hash, test_lsi_wrong_bad_range, test_lsi_wrong_multiattr,
# test_lsi_wrong_no_sort_key
def test_definition_errors(dynamodb):
    alt_expect_error("ValidationException", create, dynamodb, [lsi("hello", "p", hash_key="b")],
                     match="hash key")
    alt_expect_error("ValidationException", create, dynamodb, [lsi("hello", "p")], match="same")
    one = {"IndexName": "hello", "KeySchema": [{"AttributeName": "p", "KeyType": "HASH"}],
           "Projection": {"ProjectionType": "ALL"}}
    alt_expect_error("ValidationException", create, dynamodb, [one])
    three = lsi("lsi", "c")
    three["KeySchema"].append({"AttributeName": "b", "KeyType": "RANGE"})
    alt_expect_error("ValidationException", create, dynamodb, [three], match=r"\b(?:two|2)\b")
    alt_expect_error("ValidationException", create, dynamodb, [lsi("hello", "c")], range_key=None,
                     types={"p": "S", "c": "S"})
    # test_lsi_and_gsi_same_name
    alt_expect_error("ValidationException", create, dynamodb, [lsi("samename", "b")],
                     gsis=[gsi("samename", "b")], match="Duplicate")
    alt_expect_error("ValidationException", create, dynamodb,
                     [lsi("l%d" % i, "b") for i in range(6)], match="5")


# test_lsi_1, test_lsi_consistent_read
def test_query(t1):
    items = [{"p": rnd(), "c": rnd(), "b": rnd()} for _ in range(10)]
    p = rnd()
    items += [{"p": p, "c": c, "b": b} for c, b in (("c1", "z"), ("c2", "y"), ("c3", "x"))]
    with t1.batch_writer() as w:
        for i in items:
            w.put_item(i)
    assert q(t1, items[0]["p"], items[0]["b"], ConsistentRead=True) == [items[0]]
    # the partition sorted by b, not c
    assert [i["b"] for i in q(t1, p, ConsistentRead=True)] == ["x", "y", "z"]
    got = full(t1.query, IndexName="hello", ConsistentRead=True,
               KeyConditionExpression="p = :p AND b BETWEEN :lo AND :hi",
               ExpressionAttributeValues={":p": p, ":lo": "x", ":hi": "y"})
    assert [i["c"] for i in got] == ["c3", "c2"]


# test_lsi_4, test_lsi_describe, test_lsi_describe_indexstatus, test_lsi_describe_fields
def test_describe(dynamodb):
    t = create(dynamodb, [lsi("hello_x%d" % i, "x%d" % i) for i in range(1, 5)],
               types={"p": "S", "c": "S", "x1": "S", "x2": "S", "x3": "S", "x4": "S"})
    try:
        d = t.meta.client.describe_table(TableName=t.name)["Table"]
        lsis = d["LocalSecondaryIndexes"]
        assert sorted(x["IndexName"] for x in lsis) == ["hello_x1", "hello_x2", "hello_x3",
                                                        "hello_x4"]
        for x in lsis:
            assert x["IndexArn"] == d["TableArn"] + "/index/" + x["IndexName"]
            assert x["Projection"] == {"ProjectionType": "ALL"}
            assert "IndexStatus" not in x and "ProvisionedThroughput" not in x
            assert "IndexSizeBytes" in x and "ItemCount" in x
        item = {"p": rnd(), "c": rnd(), "x1": "a", "x2": "b", "x3": "c", "x4": "d"}
        t.put_item(Item=item)
        for i in range(1, 5):
            assert full(t.query, IndexName="hello_x%d" % i,
                        KeyConditions={**eq("p", item["p"]), **eq("x%d" % i, item["x%d" % i])}) \
                == [item]
    finally:
        t.delete()


# test_lsi_empty_value, test_lsi_null_index, test_lsi_wrong_type_attribute_*
@pytest.mark.parametrize("value,match", [("", "empty"), (None, "NULL"), (3, "mismatch")])
def test_bad_index_key_refused(t1, value, match):
    p, c = rnd(), rnd()
    alt_expect_error("ValidationException", t1.put_item, Item={"p": p, "c": c, "b": value},
                     match=match)
    alt_expect_error("ValidationException", t1.update_item, Key={"p": p, "c": c},
                     AttributeUpdates={"b": {"Value": value, "Action": "PUT"}}, match=match)
    alt_expect_error("ValidationException", t1.meta.client.batch_write_item,
                     RequestItems={t1.name: [
                         {"PutRequest": {"Item": {"p": rnd(), "c": rnd(), "b": rnd()}}},
                         {"PutRequest": {"Item": {"p": p, "c": c, "b": value}}}]},
                     match=match)
    assert "Item" not in t1.get_item(Key={"p": p, "c": c}, ConsistentRead=True)


# test_lsi_get_not_projected_attribute, test_lsi_get_all_projected_attributes
def test_keys_only_projection(tk):
    p, b, d = rnd(), rnd(), rnd()
    item = {"p": p, "c": rnd(), "b": b, "d": d}
    tk.put_item(Item=item)
    assert q(tk, p, b, Select="ALL_ATTRIBUTES") == [item]
    assert q(tk, p, b, AttributesToGet=["d"]) == [{"d": d}]
    keys = {k: item[k] for k in ("p", "c", "b")}
    assert q(tk, p, b) == [keys]
    assert q(tk, p, b, Select="ALL_PROJECTED_ATTRIBUTES") == [keys]


# test_lsi_filter_expression_and_projection_expression
def test_filter_and_projection(t1):
    p = rnd()
    items = [{"p": p, "c": str(i), "b": str(i), "x": i % 2} for i in range(6)]
    with t1.batch_writer() as w:
        for i in items:
            w.put_item(i)
    got = q(t1, p, FilterExpression="x = :one", ProjectionExpression="c",
            ExpressionAttributeValues={":one": 1})
    assert got == [{"c": "1"}, {"c": "3"}, {"c": "5"}]


# test_lsi_and_gsi, test_gsi_and_lsi_same_key
def test_with_gsi(dynamodb):
    t = create(dynamodb, [lsi("lsi", "x")], gsis=[gsi("gsi", "x")],
               types={"p": "S", "c": "S", "x": "S"})
    try:
        item = {"p": rnd(), "c": rnd(), "x": rnd(), "y": rnd()}
        t.put_item(Item=item)
        assert full(t.query, IndexName="lsi",
                    KeyConditions={**eq("p", item["p"]), **eq("x", item["x"])}) == [item]
        assert full(t.query, IndexName="gsi", KeyConditions=eq("x", item["x"])) == [item]
        alt_expect_error("ValidationException", t.meta.client.update_table, TableName=t.name,
                         AttributeDefinitions=defs(y="S"),
                         GlobalSecondaryIndexUpdates=[{"Create": gsi("lsi", "y")}],
                         match="already exists")
        alt_expect_error("ResourceNotFoundException", t.meta.client.update_table,
                         TableName=t.name,
                         GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "lsi"}}])
    finally:
        t.delete()


# test_lsi_put_overwrites_lsi_column, test_lsi_update_modifies_index,
# test_lsi_delete_modifies_index
def test_view_follows_writes(t1):
    p, c = rnd(), rnd()
    t1.put_item(Item={"p": p, "c": c, "b": "b1", "z": 1})
    t1.put_item(Item={"p": p, "c": c, "b": "b2"})
    assert q(t1, p) == [{"p": p, "c": c, "b": "b2"}]
    t1.update_item(Key={"p": p, "c": c}, UpdateExpression="SET b = :b, z = :z",
                   ExpressionAttributeValues={":b": "b3", ":z": 3})
    assert q(t1, p) == [{"p": p, "c": c, "b": "b3", "z": 3}]
    t1.update_item(Key={"p": p, "c": c}, UpdateExpression="REMOVE b")
    assert q(t1, p) == []
    t1.update_item(Key={"p": p, "c": c}, UpdateExpression="SET b = :b",
                   ExpressionAttributeValues={":b": "b4"})
    t1.delete_item(Key={"p": p, "c": c})
    assert q(t1, p) == []


# test_lsi_very_long_name_222
def test_long_name(dynamodb):
    name = alt_unique_table_name("lsi")
    longest = 222 - len(name) - 2
    t = create(dynamodb, [lsi("n" * longest, "b")], name=name)
    t.delete()
    alt_expect_error("ValidationException", create, dynamodb, [lsi("n" * (longest + 1), "b")],
                     name=alt_unique_table_name("lsi"), match="total length")


# test_lsi_describe_table_schema_all: every combination of LSI range key
def test_describe_schema_all(dynamodb):
    t = create(dynamodb, [lsi("ic1", "c"), lsi("ix2", "x")], types={"p": "S", "c": "N", "x": "B"})
    try:
        d = t.meta.client.describe_table(TableName=t.name)["Table"]
        got = {x["IndexName"]: x["KeySchema"] for x in d["LocalSecondaryIndexes"]}
        assert got == {"ic1": lsi("ic1", "c")["KeySchema"], "ix2": lsi("ix2", "x")["KeySchema"]}
        assert multiset(d["AttributeDefinitions"]) == multiset(defs(p="S", c="N", x="B"))
    finally:
        t.delete()
