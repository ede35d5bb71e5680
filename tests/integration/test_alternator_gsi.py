# SPDX-License-Identifier: BSD-3-Clause
"""Alternator: global secondary indexes through boto3.

Rewritten from the cases of ScyllaDB's test/alternator/test_gsi.py and
test_gsi_updatetable.py (the names in the comments are theirs): CreateTable
with GlobalSecondaryIndexes, Query and Scan on an index with pagination,
Select and projections, DynamoDB's checks on written index keys, the view
rows following every kind of write, DescribeTable, and UpdateTable adding
(with a backfill, CREATING then ACTIVE) and deleting an index.

shardmark writes a base item's view rows before the write is acknowledged,
so unlike DynamoDB (eventually consistent GSIs) every read below sees the
writes before it: no retries.
"""

import random
from decimal import Decimal
import string
import threading

import pytest

pytest.importorskip("boto3")

from conftest import (alt_all_pages as full, alt_create_table, alt_error,  # noqa: E402
                      alt_expect_error)


def rnd(n=10):
    return "".join(random.choice(string.ascii_uppercase + string.digits) for _ in range(n))


def frozen(item):
    return frozenset((k, repr(v)) for k, v in item.items())


def multiset(items):
    out = {}
    for i in items:
        out[frozen(i)] = out.get(frozen(i), 0) + 1
    return out


def iquery(table, index, **kwargs):
    return full(table.query, IndexName=index, ConsistentRead=False, **kwargs)


def iscan(table, index, **kwargs):
    return full(table.scan, IndexName=index, ConsistentRead=False, **kwargs)


def eq(attr, value):
    return {attr: {"AttributeValueList": [value], "ComparisonOperator": "EQ"}}


def gsi(name, hash_key, range_key=None, projection=None):
    schema = [{"AttributeName": hash_key, "KeyType": "HASH"}]
    if range_key:
        schema.append({"AttributeName": range_key, "KeyType": "RANGE"})
    return {"IndexName": name, "KeySchema": schema,
            "Projection": {"ProjectionType": "ALL"} if projection is None else projection}


def defs(**types):
    return [{"AttributeName": k, "AttributeType": v} for k, v in types.items()]


def create(dynamodb, hash_key=("p", "S"), range_key=None, extra=None, indexes=(), **kwargs):
    """A table with GSIs @indexes; @extra: the types of index key attributes."""
    d = dict([hash_key] + ([range_key] if range_key else []) + list((extra or {}).items()))
    kwargs.setdefault("AttributeDefinitions", defs(**d))
    if indexes:
        kwargs["GlobalSecondaryIndexes"] = list(indexes)
    name = kwargs.pop("name", None)
    schema = [{"AttributeName": hash_key[0], "KeyType": "HASH"}]
    if range_key:
        schema.append({"AttributeName": range_key[0], "KeyType": "RANGE"})
    from conftest import alt_unique_table_name
    name = name or alt_unique_table_name("gsi")
    dynamodb.meta.client.create_table(TableName=name, KeySchema=schema,
                                      BillingMode="PAY_PER_REQUEST", **kwargs)
    return dynamodb.Table(name)


@pytest.fixture(scope="module")
def t1(dynamodb):
    """Base (p, c); index 'hello' (c, p): the roles reversed."""
    t = create(dynamodb, range_key=("c", "S"), indexes=[gsi("hello", "c", "p")])
    yield t
    t.delete()


@pytest.fixture(scope="module")
def t2(dynamodb):
    """Base p; index 'hello' on the non-key attribute x."""
    t = create(dynamodb, extra={"x": "S"}, indexes=[gsi("hello", "x")])
    yield t
    t.delete()


@pytest.fixture(scope="module")
def t3(dynamodb):
    """Base p; index 'hello' (a, b): two non-key attributes."""
    t = create(dynamodb, extra={"a": "S", "b": "S"}, indexes=[gsi("hello", "a", "b")])
    yield t
    t.delete()


@pytest.fixture(scope="module")
def t5(dynamodb):
    """Base (p, c); index 'hello' (p, x)."""
    t = create(dynamodb, range_key=("c", "S"), extra={"x": "S"}, indexes=[gsi("hello", "p", "x")])
    yield t
    t.delete()


@pytest.fixture(scope="module")
def t6(dynamodb):
    """Six indexes: keys of the three key types, as hash and as range key."""
    t = create(dynamodb, extra={"s": "S", "b": "B", "n": "N"},
               indexes=[gsi("gsi_s", "s"), gsi("gsi_ss", "p", "s"), gsi("gsi_b", "b"),
                        gsi("gsi_sb", "p", "b"), gsi("gsi_n", "n"), gsi("gsi_sn", "p", "n")])
    yield t
    t.delete()


# test_gsi_identical
def test_identical_index(dynamodb):
    t = create(dynamodb, indexes=[gsi("hello", "p")])
    try:
        items = [{"p": rnd(), "x": rnd()} for _ in range(10)]
        with t.batch_writer() as b:
            for i in items:
                b.put_item(i)
        assert multiset(iscan(t, "hello")) == multiset(items)
        alt_expect_error("ValidationException", t.scan, IndexName="wrong")
    finally:
        t.delete()


# test_gsi_simple, test_gsi_same_key
def test_reversed_keys(t1):
    items = [{"p": rnd(), "c": rnd(), "x": rnd()} for _ in range(10)]
    c = rnd()
    items += [{"p": rnd(), "c": c, "x": rnd()} for _ in range(5)]
    with t1.batch_writer() as b:
        for i in items:
            b.put_item(i)
    # the base table cannot query by its sort key alone; the index can
    alt_expect_error("ValidationException", t1.query, KeyConditions=eq("c", c))
    got = iquery(t1, "hello", KeyConditions=eq("c", c))
    assert multiset(got) == multiset([i for i in items if i["c"] == c])
    assert multiset(iscan(t1, "hello")) == multiset(full(t1.scan))


# test_gsi_missing_index, test_gsi_missing_table
def test_missing_index_or_table(t1, dynamodb):
    e = alt_expect_error("ValidationException", t1.query, IndexName="wrong_name",
                         KeyConditions=eq("x", 1))
    assert "wrong_name" in alt_error(e)[1]
    alt_expect_error("ValidationException", t1.scan, IndexName="wrong_name", match="wrong_name")
    c = dynamodb.meta.client
    alt_expect_error("ResourceNotFoundException", c.query, TableName="nonexistent_table",
                     IndexName="any_name", KeyConditions=eq("x", 1))
    alt_expect_error("ResourceNotFoundException", c.scan, TableName="nonexistent_table",
                     IndexName="any_name")


# test_gsi_strong_consistency
def test_consistent_read_refused(t1):
    alt_expect_error("ValidationException", t1.query, IndexName="hello", ConsistentRead=True,
                     KeyConditions=eq("c", "x"), match="Consistent")
    alt_expect_error("ValidationException", t1.scan, IndexName="hello", ConsistentRead=True,
                     match="Consistent")


# test_gsi_empty_value, test_gsi_null_value, test_gsi_wrong_type_attribute_*
@pytest.mark.parametrize("value,match", [("", "empty"), (None, "NULL"), (3, "mismatch"),
                                         ({"a": 3}, "mismatch")])
def test_bad_index_key_refused(t2, value, match):
    p = rnd()
    alt_expect_error("ValidationException", t2.put_item, Item={"p": p, "x": value}, match=match)
    alt_expect_error("ValidationException", t2.update_item, Key={"p": p},
                     AttributeUpdates={"x": {"Value": value, "Action": "PUT"}}, match=match)
    alt_expect_error("ValidationException", t2.update_item, Key={"p": p},
                     UpdateExpression="SET x = :v", ExpressionAttributeValues={":v": value},
                     match=match)
    alt_expect_error("ValidationException", t2.meta.client.batch_write_item,
                     RequestItems={t2.name: [{"PutRequest": {"Item": {"p": p, "x": value}}}]},
                     match=match)
    assert "Item" not in t2.get_item(Key={"p": p}, ConsistentRead=True)


# test_gsi_wrong_type_attribute_update: an existing item stays as it was
def test_bad_update_leaves_item(t2):
    p, x = rnd(), rnd()
    t2.put_item(Item={"p": p, "x": x})
    alt_expect_error("ValidationException", t2.update_item, Key={"p": p},
                     AttributeUpdates={"x": {"Value": 3, "Action": "PUT"}}, match="mismatch")
    # a path into a string key is no key value either (test_gsi_wrong_type_attribute_update_nested)
    alt_expect_error("ValidationException", t2.update_item, Key={"p": p},
                     UpdateExpression="SET x.y = :v", ExpressionAttributeValues={":v": 3})
    assert t2.get_item(Key={"p": p}, ConsistentRead=True)["Item"] == {"p": p, "x": x}
    assert iquery(t2, "hello", KeyConditions=eq("x", x)) == [{"p": p, "x": x}]


# test_gsi_empty_value_in_bigger_batch_write, test_gsi_wrong_type_attribute_batch
def test_bad_batch_writes_nothing(t2):
    ps = [rnd() for _ in range(3)]
    for bad in ("", 3):
        items = [{"p": ps[0], "x": rnd()}, {"p": ps[1], "x": bad}, {"p": ps[2], "x": rnd()}]
        alt_expect_error("ValidationException", t2.meta.client.batch_write_item,
                         RequestItems={t2.name: [{"PutRequest": {"Item": i}} for i in items]})
        for p in ps:
            assert "Item" not in t2.get_item(Key={"p": p}, ConsistentRead=True)


# test_gsi_describe, test_gsi_describe_indexstatus, test_gsi_describe_fields
def test_describe(t1):
    d = t1.meta.client.describe_table(TableName=t1.name)["Table"]
    assert len(d["GlobalSecondaryIndexes"]) == 1
    g = d["GlobalSecondaryIndexes"][0]
    assert g["IndexName"] == "hello"
    assert g["Projection"] == {"ProjectionType": "ALL"}
    assert g["KeySchema"] == [{"KeyType": "HASH", "AttributeName": "c"},
                              {"KeyType": "RANGE", "AttributeName": "p"}]
    assert g["IndexArn"] == d["TableArn"] + "/index/hello"
    assert g["IndexStatus"] == "ACTIVE" and "Backfilling" not in g
    assert "IndexSizeBytes" in g and "ItemCount" in g
    assert "LocalSecondaryIndexes" not in d


# test_gsi_5_describe_table_schema, test_gsi_2_describe_table_schema
def test_describe_schema(t5, t2):
    d = t5.meta.client.describe_table(TableName=t5.name)["Table"]
    assert d["KeySchema"] == [{"AttributeName": "p", "KeyType": "HASH"},
                              {"AttributeName": "c", "KeyType": "RANGE"}]
    assert d["GlobalSecondaryIndexes"][0]["KeySchema"] == [
        {"AttributeName": "p", "KeyType": "HASH"}, {"AttributeName": "x", "KeyType": "RANGE"}]
    assert multiset(d["AttributeDefinitions"]) == multiset(defs(p="S", c="S", x="S"))
    # the base key the view adds as a clustering column is not the index's range key
    d = t2.meta.client.describe_table(TableName=t2.name)["Table"]
    assert d["GlobalSecondaryIndexes"][0]["KeySchema"] == [
        {"AttributeName": "x", "KeyType": "HASH"}]
    assert multiset(d["AttributeDefinitions"]) == multiset(defs(p="S", x="S"))


# test_update_gsi_pk: the view row follows every change of the key attribute
def test_view_row_follows_writes(t2):
    p, x1, x2, y, z = (rnd() for _ in range(5))
    q = lambda x: iquery(t2, "hello", KeyConditions=eq("x", x))  # noqa: E731
    t2.put_item(Item={"p": p, "x": x1, "y": y, "z": z})
    assert q(x1) == [{"p": p, "x": x1, "y": y, "z": z}]
    y = rnd()
    t2.update_item(Key={"p": p}, AttributeUpdates={"y": {"Value": y, "Action": "PUT"}})
    assert q(x1) == [{"p": p, "x": x1, "y": y, "z": z}]
    t2.update_item(Key={"p": p}, AttributeUpdates={"x": {"Value": x2, "Action": "PUT"}})
    assert q(x1) == []
    assert q(x2) == [{"p": p, "x": x2, "y": y, "z": z}]
    t2.update_item(Key={"p": p}, AttributeUpdates={"x": {"Action": "DELETE"}})
    assert t2.get_item(Key={"p": p}, ConsistentRead=True)["Item"] == {"p": p, "y": y, "z": z}
    assert q(x2) == []
    t2.update_item(Key={"p": p}, UpdateExpression="SET x = :x", ExpressionAttributeValues={":x": x1})
    assert q(x1) == [{"p": p, "x": x1, "y": y, "z": z}]
    t2.delete_item(Key={"p": p})
    assert q(x1) == []


# test_update_gsi_ck
def test_view_row_follows_writes_range(t5):
    p, c, x1, x2 = (rnd() for _ in range(4))
    q = lambda x: iquery(t5, "hello", KeyConditions={**eq("p", p), **eq("x", x)})  # noqa: E731
    t5.put_item(Item={"p": p, "c": c, "x": x1, "y": 1})
    assert q(x1) == [{"p": p, "c": c, "x": x1, "y": 1}]
    t5.update_item(Key={"p": p, "c": c}, AttributeUpdates={"x": {"Value": x2, "Action": "PUT"}})
    assert q(x1) == [] and q(x2) == [{"p": p, "c": c, "x": x2, "y": 1}]
    t5.update_item(Key={"p": p, "c": c}, UpdateExpression="REMOVE x")
    assert q(x2) == []
    t5.delete_item(Key={"p": p, "c": c})
    assert t5.query(IndexName="hello", KeyConditions=eq("p", p))["Items"] == []


# test_gsi_missing_attribute
@pytest.mark.parametrize("op", ["PutItem", "UpdateItem", "BatchWriteItem"])
def test_item_without_key_not_indexed(t2, op):
    p1, x1, p2 = rnd(), rnd(), rnd()
    if op == "PutItem":
        t2.put_item(Item={"p": p1, "x": x1})
        t2.put_item(Item={"p": p2})
    elif op == "UpdateItem":
        t2.update_item(Key={"p": p1}, AttributeUpdates={"x": {"Value": x1, "Action": "PUT"}})
        t2.update_item(Key={"p": p2}, AttributeUpdates={})
    else:
        with t2.batch_writer() as b:
            b.put_item(Item={"p": p1, "x": x1})
            b.put_item(Item={"p": p2})
    assert t2.get_item(Key={"p": p2}, ConsistentRead=True)["Item"] == {"p": p2}
    assert iquery(t2, "hello", KeyConditions=eq("x", x1)) == [{"p": p1, "x": x1}]
    assert not any(i["p"] == p2 for i in iscan(t2, "hello"))


# test_gsi_3_long, test_11801 and its variants, test_17119
def test_two_attribute_key(t3):
    p, z = rnd(), rnd()
    q = lambda a, b: iquery(t3, "hello", KeyConditions={**eq("a", a), **eq("b", b)})  # noqa: E731
    put = lambda **kw: t3.update_item(Key={"p": p}, AttributeUpdates={  # noqa: E731
        k: ({"Action": "DELETE"} if v is None else {"Value": v, "Action": "PUT"})
        for k, v in kw.items()})
    a, b = rnd(), rnd()
    t3.put_item(Item={"p": p, "a": a, "b": b, "z": z})
    assert q(a, b) == [{"p": p, "a": a, "b": b, "z": z}]
    put(b=b)  # the same value: the row stays (#11801)
    assert q(a, b) == [{"p": p, "a": a, "b": b, "z": z}]
    b2 = rnd()
    put(b=b2)
    assert q(a, b) == [] and q(a, b2) == [{"p": p, "a": a, "b": b2, "z": z}]
    put(b=b)  # and back (#17119)
    assert q(a, b2) == [] and q(a, b) == [{"p": p, "a": a, "b": b, "z": z}]
    a3, b3 = rnd(), rnd()
    put(a=a3, b=b3)
    assert q(a, b) == [] and q(a3, b3) == [{"p": p, "a": a3, "b": b3, "z": z}]
    b4 = rnd()
    put(a=None, b=b4)  # without a, no row
    assert q(a3, b3) == [] and q(a3, b4) == []
    a4 = rnd()
    put(a=a4)
    assert q(a4, b4) == [{"p": p, "a": a4, "b": b4, "z": z}]
    put(a=None, b=None)
    put(a=rnd())
    assert not any(i["p"] == p for i in iscan(t3, "hello"))


# test_gsi_4, test_gsi_4_describe
def test_two_indexes(dynamodb):
    t = create(dynamodb, extra={"a": "S", "b": "S"}, indexes=[gsi("hello_a", "a"), gsi("hello_b", "b")])
    try:
        items = [{"p": rnd(), "a": rnd(), "b": rnd()} for _ in range(10)]
        with t.batch_writer() as b:
            for i in items:
                b.put_item(i)
        assert iquery(t, "hello_a", KeyConditions=eq("a", items[3]["a"])) == [items[3]]
        assert iquery(t, "hello_b", KeyConditions=eq("b", items[3]["b"])) == [items[3]]
        names = [g["IndexName"] for g in
                 t.meta.client.describe_table(TableName=t.name)["Table"]["GlobalSecondaryIndexes"]]
        assert sorted(names) == ["hello_a", "hello_b"]
    finally:
        t.delete()


# test_gsi_6 and test_gsi_6_write_*: keys of type S, B and N
def test_key_types(t6):
    p, s, b, n = rnd(), rnd(), bytes(rnd(), "ascii"), 17
    item = {"p": p, "s": s, "b": b, "n": n, "x": rnd()}
    t6.put_item(Item=item)
    got = iquery(t6, "gsi_s", KeyConditions=eq("s", s))
    assert len(got) == 1 and got[0]["b"].value == b and got[0]["n"] == n
    assert len(iquery(t6, "gsi_ss", KeyConditions={**eq("p", p), **eq("s", s)})) == 1
    assert len(iquery(t6, "gsi_b", KeyConditions=eq("b", b))) == 1
    assert len(iquery(t6, "gsi_sb", KeyConditions={**eq("p", p), **eq("b", b)})) == 1
    assert len(iquery(t6, "gsi_n", KeyConditions=eq("n", n))) == 1
    assert len(iquery(t6, "gsi_sn", KeyConditions={**eq("p", p), **eq("n", Decimal("17.0"))})) == 1
    for attr, bad in (("s", b"hi"), ("s", True), ("b", "hi"), ("b", b""), ("n", "hi"),
                      ("n", {"a", "b"})):
        alt_expect_error("ValidationException", t6.put_item, Item={"p": rnd(), attr: bad})


# test_gsi_projection_keys_only, test_gsi_projection_include, test_gsi_query_select_2
def test_projections(dynamodb):
    t = create(dynamodb, extra={"x": "S", "z": "S"},
               indexes=[gsi("keys", "x", projection={"ProjectionType": "KEYS_ONLY"}),
                        gsi("incl", "x", projection={"ProjectionType": "INCLUDE",
                                                     "NonKeyAttributes": ["a", "z"]}),
                        gsi("zzz", "z", projection={"ProjectionType": "KEYS_ONLY"})])
    try:
        items = [{"p": rnd(), "x": rnd(), "a": rnd(), "b": rnd(), "z": rnd()} for _ in range(5)]
        items += [{"p": rnd(), "x": rnd(), "b": rnd()} for _ in range(5)]
        with t.batch_writer() as b:
            for i in items:
                b.put_item(i)
        keep = lambda i, ks: {k: v for k, v in i.items() if k in ks}  # noqa: E731
        assert multiset(iscan(t, "keys")) == multiset(keep(i, ("p", "x")) for i in items)
        assert multiset(iscan(t, "incl")) == multiset(keep(i, ("p", "x", "a", "z")) for i in items)
        x = items[0]["x"]
        assert iquery(t, "incl", KeyConditions=eq("x", x), Select="ALL_PROJECTED_ATTRIBUTES") == \
            [keep(items[0], ("p", "x", "a", "z"))]
        assert iquery(t, "incl", KeyConditions=eq("x", x), AttributesToGet=["a"]) == \
            [{"a": items[0]["a"]}]
        alt_expect_error("ValidationException", t.query, IndexName="incl",
                         KeyConditions=eq("x", x), Select="ALL_ATTRIBUTES", match="ALL_ATTRIBUTES")
        alt_expect_error("ValidationException", t.query, IndexName="incl",
                         KeyConditions=eq("x", x), AttributesToGet=["b"], match="project")
        alt_expect_error("ValidationException", t.query, IndexName="incl",
                         KeyConditions=eq("x", x), ProjectionExpression="b", match="project")
        assert "Items" not in t.query(IndexName="incl", KeyConditions=eq("x", x), Select="COUNT")
        proj = {g["IndexName"]: g["Projection"] for g in
                t.meta.client.describe_table(TableName=t.name)["Table"]["GlobalSecondaryIndexes"]}
        assert proj["incl"] == {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["a", "z"]}
        assert proj["keys"] == {"ProjectionType": "KEYS_ONLY"}
    finally:
        t.delete()


# test_gsi_projection_error_*, test_gsi_bad_projection_type, test_gsi_missing_projection_type
@pytest.mark.parametrize("projection,code,match", [
    ({"ProjectionType": "ALL", "NonKeyAttributes": ["a"]}, "ValidationException", "NonKeyAttributes"),
    ({"ProjectionType": "KEYS_ONLY", "NonKeyAttributes": ["a"]}, "ValidationException",
     "NonKeyAttributes"),
    ({"ProjectionType": "INCLUDE"}, "ValidationException", "NonKeyAttributes"),
    ({"ProjectionType": "INCLUDE", "NonKeyAttributes": ["a", "a"]}, "ValidationException",
     "Duplicate"),
    ({"ProjectionType": "INCLUDE", "NonKeyAttributes": ["a", 123]}, "SerializationException", None),
    ({"ProjectionType": "nonsense"}, "ValidationException", "nonsense"),
    ({}, "ValidationException", "ProjectionType"),
])
def test_projection_errors(dynamodb, projection, code, match):
    alt_expect_error(code, create, dynamodb, extra={"x": "S"},
                     indexes=[gsi("hello", "x", projection=projection)], match=match)


# test_gsi_unsupported_names, test_gsi_non_scylla_name, test_gsi_very_long_name_222/256
def test_index_names(dynamodb):
    for name, match in (("n", "3"), ("nn", "3"), ("n" * 256, "nnnnn"), ("nyh@test", "nyh")):
        alt_expect_error("ValidationException", create, dynamodb, indexes=[gsi(name, "p")],
                         match=match)
    t = create(dynamodb, indexes=[gsi(".alternator_test", "p")])
    t.delete()
    from conftest import alt_unique_table_name
    table = alt_unique_table_name("gsi")
    longest = 222 - len(table) - 1
    t = create(dynamodb, name=table, indexes=[gsi("n" * longest, "p")])
    t.delete()
    alt_expect_error("ValidationException", create, dynamodb, name=alt_unique_table_name("gsi"),
                     indexes=[gsi("n" * (longest + 1), "p")], match="total length")


# test_gsi_list_tables: ListTables shows no view
def test_list_tables_hides_views(dynamodb, t1):
    names = []
    r = dynamodb.meta.client.list_tables()
    names += r["TableNames"]
    while "LastEvaluatedTableName" in r:
        r = dynamodb.meta.client.list_tables(ExclusiveStartTableName=r["LastEvaluatedTableName"])
        names += r["TableNames"]
    assert t1.name in names
    assert not any("hello" in n for n in names)


# test_gsi_query_select_1
def test_select(t1):
    c = rnd()
    items = [{"p": rnd(), "c": c, "x": rnd(), "y": rnd()} for _ in range(4)]
    with t1.batch_writer() as b:
        for i in items:
            b.put_item(i)
    q = lambda **kw: iquery(t1, "hello", KeyConditions=eq("c", c), **kw)  # noqa: E731
    assert multiset(q()) == multiset(items)
    assert multiset(q(Select="ALL_PROJECTED_ATTRIBUTES")) == multiset(items)
    assert multiset(q(Select="ALL_ATTRIBUTES")) == multiset(items)
    want = multiset({"y": i["y"]} for i in items)
    assert multiset(q(Select="SPECIFIC_ATTRIBUTES", AttributesToGet=["y"])) == want
    assert multiset(q(ProjectionExpression="#n", ExpressionAttributeNames={"#n": "y"})) == want
    assert "Items" not in t1.query(IndexName="hello", KeyConditions=eq("c", c), Select="COUNT")
    # the base table has no projection to speak of
    alt_expect_error("ValidationException", t1.query, KeyConditions=eq("p", "x"),
                     Select="ALL_PROJECTED_ATTRIBUTES")


# test_gsi_same_name_forbidden, test_gsi_duplicate_with_different_name,
# test_gsi_key_type_conflict_on_create, test_gsi_invalid_key_types,
# test_gsi_range_key_only_rejected, test_gsi_missing_attribute_definition
def test_definition_errors(dynamodb):
    alt_expect_error("ValidationException", create, dynamodb, extra={"x": "S", "y": "S"},
                     indexes=[gsi("index1", "x"), gsi("index1", "y")], match="Duplicate.*index1")
    t = create(dynamodb, extra={"x": "S"}, indexes=[gsi("index1", "x"), gsi("index2", "x")])
    t.delete()
    alt_expect_error("ValidationException", create, dynamodb,
                     AttributeDefinitions=defs(p="S") + defs(xyz="S") + defs(xyz="N"),
                     indexes=[gsi("i1", "xyz")], match="uplicate.*xyz")
    for bad in ("BOOL", "NULL", "M", "L", "SS", "NS", "BS", "junk"):
        alt_expect_error("ValidationException", create, dynamodb, extra={"x": bad},
                         indexes=[gsi("gsi", "x")], match=f"'{bad}'")
    alt_expect_error("ValidationException", create, dynamodb, extra={"x": "S"},
                     indexes=[{"IndexName": "gsi", "Projection": {"ProjectionType": "ALL"},
                               "KeySchema": [{"AttributeName": "x", "KeyType": "RANGE"}]}],
                     match="HASH")
    alt_expect_error("ValidationException", create, dynamodb, indexes=[gsi("hello", "c")],
                     match="AttributeDefinitions")
    # a definition no key schema uses (test_table.py's spurious definitions)
    alt_expect_error("ValidationException", create, dynamodb, extra={"x": "S", "y": "S"},
                     indexes=[gsi("hello", "x")], match="AttributeDefinitions")


# test_gsi_query_paging, test_gsi_query_exclusivestartkey(_missing_column, _wrong_partition)
def test_paging_and_start_key(t5):
    p = rnd()
    items = [{"p": p, "c": str(i), "x": str(i % 3)} for i in range(23)]
    with t5.batch_writer() as b:
        for i in items:
            b.put_item(i)
    for limit in (1, 2, 17, 100):
        got = full(t5.query, IndexName="hello", KeyConditions=eq("p", p), Limit=limit)
        assert multiset(got) == multiset(items)
    everything = t5.query(IndexName="hello", KeyConditions=eq("p", p))["Items"]
    assert [i["x"] for i in everything] == sorted(i["x"] for i in everything)
    start = {"p": p, "x": "1", "c": "7"}
    after = t5.query(IndexName="hello", KeyConditions=eq("p", p), ExclusiveStartKey=start)["Items"]
    assert after == everything[everything.index(start) + 1:]
    for bad in ({"p": p, "x": "1"}, {"p": p, "c": "7"}, {"c": "7", "x": "1"}):
        alt_expect_error("ValidationException", t5.query, IndexName="hello",
                         KeyConditions=eq("p", p), ExclusiveStartKey=bad, match="[kK]ey")
    alt_expect_error("ValidationException", t5.query, IndexName="hello",
                     KeyConditions=eq("p", "right"),
                     ExclusiveStartKey={"p": "wrong", "c": "d", "x": "c"}, match="starting key")
    alt_expect_error("ValidationException", t5.query, IndexName="hello",
                     KeyConditions={**eq("p", "rp"), **eq("x", "rx")},
                     ExclusiveStartKey={"p": "rp", "c": "d", "x": "wx"}, match="starting key")
    t5.query(IndexName="hello", KeyConditions={**eq("p", "rp"), **eq("x", "rx")},
             ExclusiveStartKey={"p": "rp", "c": "d", "x": "rx"})


# test_faux_range_key_in_keyconditions(expression): the view's extra clustering column is no key
def test_base_key_is_no_index_range_key(t2):
    p, x = rnd(), rnd()
    t2.put_item(Item={"p": p, "x": x})
    alt_expect_error("ValidationException", t2.query, IndexName="hello",
                     KeyConditions={**eq("p", p), **eq("x", x)}, match="key condition")
    alt_expect_error("ValidationException", t2.query, IndexName="hello",
                     KeyConditionExpression="x = :x AND p = :p",
                     ExpressionAttributeValues={":x": x, ":p": p}, match="key condition")


# test_gsi_limit_partition_key_len_2048, test_gsi_limit_sort_key_len_1024
def test_index_key_lengths(t2, t5):
    p = rnd()
    t2.put_item(Item={"p": p, "x": "a" * 2048})
    assert iquery(t2, "hello", KeyConditions=eq("x", "a" * 2048)) == [{"p": p, "x": "a" * 2048}]
    for n in (2049, 65536):
        alt_expect_error("ValidationException", t2.put_item, Item={"p": rnd(), "x": "a" * n},
                         match="2048")
    t5.put_item(Item={"p": p, "c": "c", "x": "b" * 1024})
    alt_expect_error("ValidationException", t5.put_item,
                     Item={"p": p, "c": "d", "x": "b" * 1025}, match="1024")


def gsi_create(name, key, type_="S", projection=None):
    return {"AttributeDefinitions": defs(**{key: type_}),
            "GlobalSecondaryIndexUpdates": [{"Create": gsi(name, key, projection=projection)}]}


def wait_active(table, name):
    """Until the index is ACTIVE (asserting every state seen on the way is a legal one)."""
    import time
    for _ in range(2000):
        d = table.meta.client.describe_table(TableName=table.name)["Table"]
        g = [g for g in d.get("GlobalSecondaryIndexes", []) if g["IndexName"] == name]
        assert len(g) == 1
        if g[0]["IndexStatus"] == "ACTIVE":
            assert "Backfilling" not in g[0]
            return
        assert g[0]["IndexStatus"] == "CREATING" and g[0]["Backfilling"] is True
        time.sleep(0.01)
    pytest.fail(f"index {name} did not become ACTIVE")


# test_gsi_backfill: pre-existing items of the right type are indexed, the rest left out
def test_backfill(dynamodb):
    t = create(dynamodb)
    try:
        good = [{"p": rnd(), "x": rnd(), "y": rnd()} for _ in range(300)]
        missing = [{"p": rnd(), "y": rnd()} for _ in range(10)]
        wrong = [{"p": rnd(), "x": i} for i in range(10)]
        empty = [{"p": rnd(), "x": ""}]
        with t.batch_writer() as b:
            for i in good + missing + wrong + empty:
                b.put_item(i)
        r = dynamodb.meta.client.update_table(TableName=t.name, **gsi_create("hello", "x"))
        g = r["TableDescription"]["GlobalSecondaryIndexes"]
        # the answer comes before the backfill starts
        assert g[0]["IndexName"] == "hello"
        assert g[0]["IndexStatus"] == "CREATING" and g[0]["Backfilling"] is True
        wait_active(t, "hello")
        assert multiset(iscan(t, "hello")) == multiset(good)
        assert iquery(t, "hello", KeyConditions=eq("x", good[3]["x"])) == [good[3]]
        # now x is a key: a wrong type is refused, a missing one is fine
        alt_expect_error("ValidationException", t.put_item, Item={"p": rnd(), "x": 3},
                         match="mismatch")
        t.put_item(Item={"p": rnd(), "y": rnd()})
        alt_expect_error("ValidationException", dynamodb.meta.client.update_table,
                         TableName=t.name, **gsi_create("hello", "y"), match="already exists")
    finally:
        t.delete()


# The backfill waits for requests that planned their writes without the
# view, and every write after the view exists keeps it: writes racing the
# UpdateTable leave index and table in agreement.
def test_backfill_with_concurrent_writes(dynamodb, alternator_server):
    from conftest import alt_resource
    t = create(dynamodb)
    stop = threading.Event()
    errors = []

    def writer(seed):
        table = alt_resource(alternator_server).Table(t.name)
        rng = random.Random(seed)
        while not stop.is_set():
            p = f"k{rng.randrange(200)}"
            try:
                if rng.random() < 0.2:
                    table.delete_item(Key={"p": p})
                elif rng.random() < 0.5:
                    table.put_item(Item={"p": p, "x": f"x{rng.randrange(20)}", "v": seed})
                else:
                    table.update_item(Key={"p": p}, UpdateExpression="SET x = :x",
                                      ExpressionAttributeValues={":x": f"x{rng.randrange(20)}"})
            except Exception as e:  # noqa: BLE001
                errors.append(e)
                return
    try:
        for i in range(200):
            t.put_item(Item={"p": f"k{i}", "x": f"x{i % 20}"})
        threads = [threading.Thread(target=writer, args=(s,)) for s in range(3)]
        for th in threads:
            th.start()
        try:
            dynamodb.meta.client.update_table(TableName=t.name, **gsi_create("hello", "x"))
            wait_active(t, "hello")
            for _ in range(20):
                t.put_item(Item={"p": f"k{random.randrange(200)}", "x": "x0"})
        finally:
            stop.set()
            for th in threads:
                th.join()
        assert errors == []
        assert multiset(iscan(t, "hello")) == multiset(i for i in full(t.scan) if "x" in i)
    finally:
        t.delete()


# test_gsi_backfill_with_real_column (the index key is a base key), test_gsi_backfill_oversized_key
def test_backfill_base_key_and_oversized(dynamodb):
    t = create(dynamodb, range_key=("c", "S"))
    try:
        items = [{"p": rnd(), "c": rnd(), "x": "hello"} for _ in range(5)]
        big = {"p": rnd(), "c": rnd(), "x": "a" * 66500}
        with t.batch_writer() as b:
            for i in items + [big]:
                b.put_item(i)
        dynamodb.meta.client.update_table(TableName=t.name, **gsi_create("byc", "c"))
        wait_active(t, "byc")
        assert multiset(iscan(t, "byc")) == multiset(items + [big])
        dynamodb.meta.client.update_table(TableName=t.name, **gsi_create("byx", "x"))
        wait_active(t, "byx")
        assert multiset(iscan(t, "byx")) == multiset(items)
    finally:
        t.delete()


# test_gsi_delete, test_gsi_creates_and_deletes
def test_delete_and_recreate(dynamodb):
    t = create(dynamodb, extra={"x": "S"}, indexes=[gsi("gsi1", "x")])
    c = dynamodb.meta.client
    try:
        items = [{"p": rnd(), "x": rnd(), "y": rnd()} for _ in range(10)]
        with t.batch_writer() as b:
            for i in items:
                b.put_item(i)
        c.update_table(TableName=t.name, **gsi_create("gsi2", "y"))
        wait_active(t, "gsi2")
        c.update_table(TableName=t.name, GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "gsi1"}}])
        d = c.describe_table(TableName=t.name)["Table"]
        assert [g["IndexName"] for g in d["GlobalSecondaryIndexes"]] == ["gsi2"]
        alt_expect_error("ValidationException", t.query, IndexName="gsi1",
                         KeyConditions=eq("x", items[3]["x"]), match="gsi1")
        assert iquery(t, "gsi2", KeyConditions=eq("y", items[3]["y"])) == [items[3]]
        # x is no key now: any type goes
        t.put_item(Item={"p": "n", "x": 7})
        alt_expect_error("ResourceNotFoundException", c.update_table, TableName=t.name,
                         GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "gsi1"}}])
        t.delete_item(Key={"p": "n"})
        c.update_table(TableName=t.name, **gsi_create("gsi1", "x"))
        wait_active(t, "gsi1")
        assert iquery(t, "gsi1", KeyConditions=eq("x", items[3]["x"])) == [items[3]]
    finally:
        t.delete()


# test_updatetable_empty, test_gsi_updatetable_errors, test_updatetable_delete_missing_gsi,
# test_gsi_key_type_conflict_on_update, test_gsi_updatetable_spurious_attribute_definitions
def test_update_table_errors(dynamodb):
    t = create(dynamodb, extra={"xyz": "S"}, indexes=[gsi("index1", "xyz")])
    c = dynamodb.meta.client
    try:
        alt_expect_error("ValidationException", c.update_table, TableName=t.name, match="UpdateTable")
        alt_expect_error("ValidationException", c.update_table, TableName=t.name,
                         GlobalSecondaryIndexUpdates=[], match="UpdateTable")
        alt_expect_error("ValidationException", c.update_table, TableName=t.name,
                         GlobalSecondaryIndexUpdates=[{}], match="GlobalSecondaryIndexUpdate")
        alt_expect_error("ValidationException", c.update_table, TableName=t.name,
                         AttributeDefinitions=defs(x="N"),
                         GlobalSecondaryIndexUpdates=[{"Create": gsi("ind", "x"),
                                                       "Delete": {"IndexName": "xyz"}}],
                         match="one")
        alt_expect_error("LimitExceededException", c.update_table, TableName=t.name,
                         AttributeDefinitions=defs(x="N"),
                         GlobalSecondaryIndexUpdates=[{"Create": gsi("i1", "x")},
                                                      {"Delete": {"IndexName": "i2"}}])
        alt_expect_error("ResourceNotFoundException", c.update_table, TableName=t.name,
                         GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "nonexistent"}}])
        alt_expect_error("ValidationException", c.update_table, TableName=t.name,
                         **gsi_create("index2", "xyz", "N"), match="redefined")
        alt_expect_error("ValidationException", c.update_table, TableName=t.name,
                         GlobalSecondaryIndexUpdates=[{"Create": gsi("index2", "xyz")}],
                         match="AttributeDefinitions")
        alt_expect_error("ValidationException", c.update_table, TableName=t.name,
                         AttributeDefinitions=defs(x="S", y="S"),
                         GlobalSecondaryIndexUpdates=[{"Create": gsi("gsi2", "x")}],
                         match="AttributeDefinitions")
        longest = 222 - len(t.name) - 1
        c.update_table(TableName=t.name, **gsi_create("n" * longest, "p"))
        wait_active(t, "n" * longest)
        alt_expect_error("ValidationException", c.update_table, TableName=t.name,
                         **gsi_create("m" * (longest + 1), "p"), match="total length")
    finally:
        t.delete()


# test_delete_table_description_with_si: DeleteTable describes no indexes
def test_delete_table_description(dynamodb):
    t = create(dynamodb, extra={"x": "S"}, indexes=[gsi("hello", "x")])
    got = t.delete()["TableDescription"]
    for k in ("KeySchema", "AttributeDefinitions", "GlobalSecondaryIndexes", "CreationDateTime"):
        assert k not in got


# An index's ARN names no table: tags are for tables (test_tag.py::test_tag_lsi_gsi)
def test_index_arn_has_no_tags(t1):
    arn = t1.meta.client.describe_table(TableName=t1.name)["Table"]["GlobalSecondaryIndexes"][0]["IndexArn"]
    alt_expect_error("ValidationException", t1.meta.client.list_tags_of_resource, ResourceArn=arn,
                     match="[Rr]esource ?[Aa]rn")
