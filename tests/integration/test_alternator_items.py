# SPDX-License-Identifier: BSD-3-Clause
"""Alternator endpoint: single-item operations through boto3.

PutItem, GetItem, UpdateItem and DeleteItem with every attribute type
(S, N, B, BOOL, NULL, SS, NS, BS, L, M, nested), numbers at DynamoDB's
limits of precision and magnitude and their canonical form, projections
(ProjectionExpression, AttributesToGet), ConsistentRead, every ReturnValues
choice, and the validation errors on bad values and bad keys.
"""

import itertools
from decimal import Decimal

import pytest

pytest.importorskip("boto3")

from botocore.exceptions import ClientError  # noqa: E402

from conftest import alt_create_table, alt_error, alt_expect_error  # noqa: E402

_ids = itertools.count()


def key():
    return f"item{next(_ids)}"


@pytest.fixture(scope="module")
def table_s(dynamodb):
    t = alt_create_table(dynamodb)
    yield t
    t.delete()


@pytest.fixture(scope="module")
def table_sc(dynamodb):
    t = alt_create_table(dynamodb, range_key=("c", "S"))
    yield t
    t.delete()


@pytest.fixture(scope="module")
def table_sn(dynamodb):
    t = alt_create_table(dynamodb, range_key=("c", "N"))
    yield t
    t.delete()


def expect_client_error(fn, **kwargs):
    with pytest.raises(ClientError) as exc:
        fn(**kwargs)
    return exc.value


def get(table, k, **kwargs):
    kwargs.setdefault("ConsistentRead", True)
    return table.get_item(Key=k, **kwargs).get("Item")


# --- types ---------------------------------------------------------------------

def test_put_get_every_type(table_sc):
    k = {"p": key(), "c": "x"}
    values = {
        "s": "hello w\u00f6rld \U0001F600 \"quoted\" \\ back\nslash",
        "empty_s": "",
        "n_int": 42,
        "n_neg": Decimal("-12.345"),
        "n_zero": 0,
        "b": b"\x00\x01\x02binary\xff",
        "empty_b": b"",
        "t": True,
        "f": False,
        "nul": None,
        "ss": {"a", "b", "c d"},
        "ns": {1, Decimal("2.5"), -3},
        "bs": {b"x", b"\x00y", b"zz"},
        "l": ["str", 1, True, None, b"bin", ["nested", 2], {"m": "in list"}, {"a", "b"}],
        "empty_l": [],
        "m": {"s": "v", "n": 3, "deep": {"deeper": {"deepest": [1, {"x": "y"}]}}},
        "empty_m": {},
    }
    item = dict(k, **values)
    table_sc.put_item(Item=item)
    assert get(table_sc, k) == item
    # Eventually consistent reads see it too (one node).
    assert get(table_sc, k, ConsistentRead=False) == item
    # Replacing the item replaces every attribute.
    table_sc.put_item(Item=dict(k, only="this"))
    assert get(table_sc, k) == dict(k, only="this")


def test_low_level_wire_format(dynamodb_client, dynamodb, table_s):
    client = dynamodb_client
    p = key()
    item = {"p": {"S": p}, "n": {"N": "17"}, "b": {"B": b"\x01\x02"}, "bool": {"BOOL": True},
            "nul": {"NULL": True}, "ss": {"SS": ["x", "y"]}, "ns": {"NS": ["1", "2"]},
            "bs": {"BS": [b"q"]}, "l": {"L": [{"S": "a"}, {"N": "1"}]},
            "m": {"M": {"k": {"S": "v"}, "inner": {"M": {"z": {"BOOL": False}}}}}}
    client.put_item(TableName=table_s.name, Item=item)
    got = client.get_item(TableName=table_s.name, Key={"p": {"S": p}}, ConsistentRead=True)["Item"]
    assert set(got) == set(item)
    for name in ("p", "n", "b", "bool", "nul", "l", "m"):
        assert got[name] == item[name], name
    assert sorted(got["ss"]["SS"]) == ["x", "y"]
    assert sorted(got["ns"]["NS"]) == ["1", "2"]
    assert got["bs"]["BS"] == [b"q"]


@pytest.mark.parametrize("sent,canonical", [
    ("1.50", "1.5"), ("-0.00", "0"), ("0001.23", "1.23"), ("+3", "3"), ("1e2", "100"),
    ("15e-1", "1.5"), ("1E-5", "0.00001"), ("-7.1234", "-7.1234"), ("0e1000", "0"),
    (".123", "0.123")])
def test_number_canonical_form(dynamodb_client, dynamodb, table_s, sent, canonical):
    client = dynamodb_client
    p = key()
    client.put_item(TableName=table_s.name, Item={"p": {"S": p}, "a": {"N": sent}})
    got = client.get_item(TableName=table_s.name, Key={"p": {"S": p}}, ConsistentRead=True)
    assert Decimal(got["Item"]["a"]["N"]) == Decimal(sent)
    assert got["Item"]["a"]["N"] == canonical


def test_number_limits_round_trip(dynamodb_client, dynamodb, table_s):
    client = dynamodb_client
    p = key()
    for num in ["99999999999999999999999999999999999999",       # 38 digits
                "3.1415926535897932384626433832795028841",      # 38 digits
                "314159265358979323846.26433832795028841",
                "31415926535897932384626433832795028841e30",
                "1e125", "-1e125", "9.9999999999999999999999999999999999999e125",
                "1e-130", "-1e-130", "1.2345e-100", "0.000000000000000000001"]:
        client.put_item(TableName=table_s.name, Item={"p": {"S": p}, "a": {"N": num}})
        got = client.get_item(TableName=table_s.name, Key={"p": {"S": p}},
                              ConsistentRead=True)["Item"]["a"]["N"]
        assert Decimal(got) == Decimal(num), f"{num} came back as {got}"


def test_number_key_normalised(table_sn):
    """A number sort key is one key whatever text it was written in."""
    p = key()
    table_sn.put_item(Item={"p": p, "c": Decimal("1.50"), "v": "first"})
    table_sn.put_item(Item={"p": p, "c": Decimal("15e-1"), "v": "second"})
    items = table_sn.query(KeyConditionExpression="p = :p",
                           ExpressionAttributeValues={":p": p}, ConsistentRead=True)["Items"]
    assert items == [{"p": p, "c": Decimal("1.5"), "v": "second"}]
    assert get(table_sn, {"p": p, "c": Decimal("1.5000")})["v"] == "second"


@pytest.mark.parametrize("num,match", [
    ("1e126", "overflow"), ("-1e126", "overflow"), ("11e125", "overflow"),
    ("1e-131", "underflow"), ("0.9e-130", "underflow"),
    ("3.14159265358979323846264338327950288419", "significant"),
    ("123456789012345678901234567890123456789", "significant"),
    ("NaN", "numeric"), ("Infinity", "numeric"), ("-Infinity", "numeric"),
    ("dog", "numeric"), (" 1", "numeric"), ("1 ", "numeric"), ("0x10", "numeric"),
    ("1e", "numeric"), ("", "numeric")])
def test_bad_numbers(dynamodb_client, dynamodb, table_s, num, match):
    client = dynamodb_client
    p = key()
    alt_expect_error("ValidationException", client.put_item, TableName=table_s.name,
                     Item={"p": {"S": p}, "a": {"N": num}}, match=match)
    alt_expect_error("ValidationException", client.update_item, TableName=table_s.name,
                     Key={"p": {"S": p}}, UpdateExpression="SET a = :v",
                     ExpressionAttributeValues={":v": {"N": num}}, match=match)
    alt_expect_error("ValidationException", client.put_item, TableName=table_s.name,
                     Item={"p": {"S": p}, "a": {"NS": ["1", num]}}, match=match)
    assert "Item" not in client.get_item(TableName=table_s.name, Key={"p": {"S": p}},
                                         ConsistentRead=True)


def test_number_arithmetic_is_exact(table_s):
    p = key()
    table_s.update_item(Key={"p": p}, UpdateExpression="SET b = :x + :y",
                        ExpressionAttributeValues={":x": Decimal("1"),
                                                   ":y": Decimal("10000000000000000000000")})
    assert get(table_s, {"p": p})["b"] == Decimal("10000000000000000000001")
    table_s.update_item(Key={"p": p}, UpdateExpression="SET b = :y - :x",
                        ExpressionAttributeValues={":x": Decimal("1"),
                                                   ":y": Decimal("10000000000000000000000")})
    assert get(table_s, {"p": p})["b"] == Decimal("9999999999999999999999")
    table_s.update_item(Key={"p": p}, UpdateExpression="SET b = :x + :y",
                        ExpressionAttributeValues={":x": Decimal("0.1"), ":y": Decimal("0.2")})
    assert get(table_s, {"p": p})["b"] == Decimal("0.3")


def test_number_arithmetic_overflow(dynamodb_client, dynamodb, table_s):
    client = dynamodb_client
    p = key()
    alt_expect_error("ValidationException", client.update_item, TableName=table_s.name,
                     Key={"p": {"S": p}}, UpdateExpression="SET b = :a + :b",
                     ExpressionAttributeValues={":a": {"N": "9e125"}, ":b": {"N": "9e125"}},
                     match="overflow")
    alt_expect_error("ValidationException", client.update_item, TableName=table_s.name,
                     Key={"p": {"S": p}}, UpdateExpression="SET b = :a - :b",
                     ExpressionAttributeValues={":a": {"N": "1e50"}, ":b": {"N": "1"}})
    # Operands of very different magnitudes: the exact sum needs far more
    # than 38 digits (and must not cost unbounded memory or time).
    for a, b in (("1e125", "1"), ("1", "1e-130"), ("9.9e125", "-1e-130")):
        alt_expect_error("ValidationException", client.update_item, TableName=table_s.name,
                         Key={"p": {"S": p}}, UpdateExpression="SET b = :a + :b",
                         ExpressionAttributeValues={":a": {"N": a}, ":b": {"N": b}})
    assert "Item" not in client.get_item(TableName=table_s.name, Key={"p": {"S": p}},
                                         ConsistentRead=True)


# --- CRUD ----------------------------------------------------------------------

def test_crud_cycle(table_sc):
    k = {"p": key(), "c": "c1"}
    assert get(table_sc, k) is None
    table_sc.update_item(Key=k, UpdateExpression="SET a = :a, b = :b",
                         ExpressionAttributeValues={":a": 1, ":b": "two"})
    assert get(table_sc, k) == dict(k, a=1, b="two")
    table_sc.update_item(Key=k, UpdateExpression="REMOVE b SET c2 = :t",
                         ExpressionAttributeValues={":t": True})
    assert get(table_sc, k) == dict(k, a=1, c2=True)
    table_sc.delete_item(Key=k)
    assert get(table_sc, k) is None
    # Deleting a missing item is not an error.
    table_sc.delete_item(Key=k)
    assert get(table_sc, k) is None


def test_empty_items(table_sc):
    # An item with only its key exists: by PutItem, by an empty UpdateItem,
    # and after its last attribute is removed.
    for how in ("put", "update", "remove"):
        k = {"p": key(), "c": how}
        if how == "put":
            table_sc.put_item(Item=k)
        elif how == "update":
            table_sc.update_item(Key=k, AttributeUpdates={})
        else:
            table_sc.put_item(Item=dict(k, a="x"))
            table_sc.update_item(Key=k, UpdateExpression="REMOVE a")
        assert get(table_sc, k) == k, how


def test_attribute_updates_legacy(table_s):
    k = {"p": key()}
    table_s.update_item(Key=k, AttributeUpdates={"a": {"Value": "v", "Action": "PUT"},
                                                 "n": {"Value": 5, "Action": "PUT"},
                                                 "s": {"Value": {"x", "y"}, "Action": "PUT"}})
    assert get(table_s, k) == dict(k, a="v", n=5, s={"x", "y"})
    table_s.update_item(Key=k, AttributeUpdates={"n": {"Value": 3, "Action": "ADD"},
                                                 "s": {"Value": {"x"}, "Action": "DELETE"},
                                                 "a": {"Action": "DELETE"}})
    assert get(table_s, k) == dict(k, n=8, s={"y"})
    alt_expect_error("ValidationException", table_s.update_item, Key=k,
                     AttributeUpdates={"a": {"Value": "v", "Action": "NONEXISTENT"}})


def test_large_attribute(table_s):
    k = {"p": key()}
    big = "x" * (300 * 1024)
    table_s.put_item(Item=dict(k, big=big))
    assert get(table_s, k)["big"] == big


# --- projections and reads -------------------------------------------------------

def test_projection_expression(table_s):
    k = {"p": key()}
    item = dict(k, a="A", b=2, c={"x": 1, "y": [10, 20, 30], "z": {"deep": "d"}},
                l=["l0", "l1", "l2"], **{"odd name": "o", "dot.ted": "dt"})
    table_s.put_item(Item=item)
    assert get(table_s, k, ProjectionExpression="a") == {"a": "A"}
    assert get(table_s, k, ProjectionExpression="a, b, p") == {"a": "A", "b": 2, "p": k["p"]}
    assert get(table_s, k, ProjectionExpression="c.x, c.y[1], l[2]") == \
        {"c": {"x": 1, "y": [20]}, "l": ["l2"]}
    assert get(table_s, k, ProjectionExpression="c.z.deep") == {"c": {"z": {"deep": "d"}}}
    assert get(table_s, k, ProjectionExpression="#o, #d",
               ExpressionAttributeNames={"#o": "odd name", "#d": "dot.ted"}) == \
        {"odd name": "o", "dot.ted": "dt"}
    # Missing attributes are left out; all missing gives an empty Item.
    assert get(table_s, k, ProjectionExpression="a, nosuch") == {"a": "A"}
    assert table_s.get_item(Key=k, ProjectionExpression="nosuch",
                            ConsistentRead=True).get("Item", {}) == {}
    # Overlapping paths are an error.
    alt_expect_error("ValidationException", table_s.get_item, Key=k,
                     ProjectionExpression="c, c.x")
    alt_expect_error("ValidationException", table_s.get_item, Key=k,
                     ProjectionExpression="a, a")
    alt_expect_error("ValidationException", table_s.get_item, Key=k,
                     ProjectionExpression="a,, b")


def test_attributes_to_get(table_s):
    k = {"p": key()}
    table_s.put_item(Item=dict(k, a=1, b=2, c=3))
    assert get(table_s, k, AttributesToGet=["a", "c"]) == {"a": 1, "c": 3}
    assert get(table_s, k, AttributesToGet=["p"]) == k
    alt_expect_error("ValidationException", table_s.get_item, Key=k,
                     AttributesToGet=["a"], ProjectionExpression="a")


def test_get_item_missing(table_sc):
    assert "Item" not in table_sc.get_item(Key={"p": key(), "c": "none"}, ConsistentRead=True)
    assert "Item" not in table_sc.get_item(Key={"p": key(), "c": "none"}, ConsistentRead=False)


# --- ReturnValues -----------------------------------------------------------------

def test_put_return_values(table_s):
    k = {"p": key()}
    r = table_s.put_item(Item=dict(k, a=1), ReturnValues="ALL_OLD")
    assert "Attributes" not in r
    r = table_s.put_item(Item=dict(k, a=2, b="x"), ReturnValues="ALL_OLD")
    assert r["Attributes"] == dict(k, a=1)
    r = table_s.put_item(Item=dict(k, a=3), ReturnValues="NONE")
    assert "Attributes" not in r
    assert get(table_s, k) == dict(k, a=3)
    for bad in ("ALL_NEW", "UPDATED_OLD", "UPDATED_NEW", "all_old", "DOG"):
        alt_expect_error("ValidationException", table_s.put_item, Item=dict(k, a=9),
                         ReturnValues=bad)
    assert get(table_s, k) == dict(k, a=3)


def test_delete_return_values(table_s):
    k = {"p": key()}
    r = table_s.delete_item(Key=k, ReturnValues="ALL_OLD")
    assert "Attributes" not in r
    table_s.put_item(Item=dict(k, a=1, s={"x"}))
    r = table_s.delete_item(Key=k, ReturnValues="ALL_OLD")
    assert r["Attributes"] == dict(k, a=1, s={"x"})
    assert get(table_s, k) is None
    table_s.put_item(Item=dict(k, a=1))
    assert "Attributes" not in table_s.delete_item(Key=k, ReturnValues="NONE")
    for bad in ("ALL_NEW", "UPDATED_OLD", "UPDATED_NEW"):
        alt_expect_error("ValidationException", table_s.delete_item, Key=k, ReturnValues=bad)


def test_update_return_values(table_s):
    k = {"p": key()}
    table_s.put_item(Item=dict(k, a=1, b=2, c=3))
    upd = dict(Key=k, UpdateExpression="SET a = :a, d = :d REMOVE c")

    r = table_s.update_item(ExpressionAttributeValues={":a": 10, ":d": 40},
                            ReturnValues="NONE", **upd)
    assert "Attributes" not in r
    table_s.put_item(Item=dict(k, a=1, b=2, c=3))
    r = table_s.update_item(ExpressionAttributeValues={":a": 10, ":d": 40},
                            ReturnValues="ALL_OLD", **upd)
    assert r["Attributes"] == dict(k, a=1, b=2, c=3)
    table_s.put_item(Item=dict(k, a=1, b=2, c=3))
    r = table_s.update_item(ExpressionAttributeValues={":a": 10, ":d": 40},
                            ReturnValues="ALL_NEW", **upd)
    assert r["Attributes"] == dict(k, a=10, b=2, d=40)
    table_s.put_item(Item=dict(k, a=1, b=2, c=3))
    r = table_s.update_item(ExpressionAttributeValues={":a": 10, ":d": 40},
                            ReturnValues="UPDATED_OLD", **upd)
    # The old values of the attributes the update touched (d did not exist).
    assert r["Attributes"] == {"a": 1, "c": 3}
    table_s.put_item(Item=dict(k, a=1, b=2, c=3))
    r = table_s.update_item(ExpressionAttributeValues={":a": 10, ":d": 40},
                            ReturnValues="UPDATED_NEW", **upd)
    # The new values of the attributes the update wrote (c is gone).
    assert r["Attributes"] == {"a": 10, "d": 40}
    assert get(table_s, k) == dict(k, a=10, b=2, d=40)
    # UpdateItem creating the item: nothing old to return.
    k2 = {"p": key()}
    r = table_s.update_item(Key=k2, UpdateExpression="SET a = :a",
                            ExpressionAttributeValues={":a": 1}, ReturnValues="ALL_OLD")
    assert "Attributes" not in r
    k3 = {"p": key()}
    r = table_s.update_item(Key=k3, UpdateExpression="SET a = :a",
                            ExpressionAttributeValues={":a": 1}, ReturnValues="ALL_NEW")
    assert r["Attributes"] == dict(k3, a=1)
    alt_expect_error("ValidationException", table_s.update_item, Key=k3,
                     UpdateExpression="SET a = :a", ExpressionAttributeValues={":a": 1},
                     ReturnValues="EVERYTHING")


def test_update_return_values_details(table_s):
    k = {"p": key()}
    table_s.put_item(Item=dict(k, a="hi", b="dog"))
    # Overwriting with the same value still counts as an update.
    r = table_s.update_item(Key=k, UpdateExpression="SET b = :v",
                            ExpressionAttributeValues={":v": "dog"}, ReturnValues="UPDATED_OLD")
    assert r["Attributes"] == {"b": "dog"}
    # Writing only attributes that did not exist: no old values at all.
    r = table_s.update_item(Key=k, UpdateExpression="SET c = :v",
                            ExpressionAttributeValues={":v": 1}, ReturnValues="UPDATED_OLD")
    assert "Attributes" not in r
    # A removed attribute has an old value but no new one.
    r = table_s.update_item(Key=k, UpdateExpression="REMOVE c", ReturnValues="UPDATED_NEW")
    assert "Attributes" not in r
    r = table_s.update_item(Key=k, UpdateExpression="SET a = a", ReturnValues="UPDATED_NEW")
    assert r["Attributes"] == {"a": "hi"}
    # ALL_NEW after a REMOVE leaves the removed attribute out.
    r = table_s.update_item(Key=k, UpdateExpression="REMOVE b", ReturnValues="ALL_NEW")
    assert r["Attributes"] == dict(k, a="hi")
    # The legacy AttributeUpdates with ReturnValues (ADD and DELETE read the item too).
    table_s.put_item(Item=dict(k, n=3, s={2, 4, 6}))
    r = table_s.update_item(Key=k, AttributeUpdates={"n": {"Action": "ADD", "Value": 2}},
                            ReturnValues="ALL_OLD")
    assert r["Attributes"] == dict(k, n=3, s={2, 4, 6})
    r = table_s.update_item(Key=k, AttributeUpdates={"s": {"Action": "DELETE", "Value": {4, 5}}},
                            ReturnValues="ALL_NEW")
    assert r["Attributes"] == dict(k, n=5, s={2, 6})
    r = table_s.update_item(Key=k, AttributeUpdates={"n": {"Action": "PUT", "Value": 0}},
                            ReturnValues="UPDATED_OLD")
    assert r["Attributes"] == {"n": 5}
    assert get(table_s, k) == dict(k, n=0, s={2, 6})


def test_update_nested_return_values(table_s):
    k = {"p": key()}
    table_s.put_item(Item=dict(k, m={"x": 1, "y": 2}))
    r = table_s.update_item(Key=k, UpdateExpression="SET m.x = :v",
                            ExpressionAttributeValues={":v": 5}, ReturnValues="UPDATED_OLD")
    assert r["Attributes"] == {"m": {"x": 1}}
    r = table_s.update_item(Key=k, UpdateExpression="SET m.y = :v",
                            ExpressionAttributeValues={":v": 7}, ReturnValues="UPDATED_NEW")
    assert r["Attributes"] == {"m": {"y": 7}}
    assert get(table_s, k) == dict(k, m={"x": 5, "y": 7})


# --- validation -------------------------------------------------------------------

def test_bad_attribute_values(dynamodb_client, dynamodb, table_s):
    client = dynamodb_client
    p = key()
    # (Malformed JSON shapes that boto3 cannot serialize are in
    # test_alternator_errors.py, sent as raw HTTP.)
    for bad in ({"SS": []}, {"NS": []}, {"BS": []},
                {"SS": ["a", "a"]}, {"NS": ["1", "1"]}, {"BS": [b"x", b"x"]},
                {"N": 5}, {}, {"S": "x", "N": "1"}):
        e = expect_client_error(client.put_item, TableName=table_s.name,
                                 Item={"p": {"S": p}, "a": bad})
        assert alt_error(e)[0] in ("ValidationException", "SerializationException"), \
            (bad, alt_error(e))
        assert "Item" not in client.get_item(TableName=table_s.name, Key={"p": {"S": p}},
                                             ConsistentRead=True), bad
    # Nested empty sets are refused too.
    alt_expect_error("ValidationException", client.put_item, TableName=table_s.name,
                     Item={"p": {"S": p}, "a": {"M": {"x": {"SS": []}}}})
    alt_expect_error("ValidationException", client.put_item, TableName=table_s.name,
                     Item={"p": {"S": p}, "a": {"L": [{"NS": ["2", "2"]}]}})


def test_bad_keys(dynamodb_client, dynamodb, table_sc, table_s):
    client = dynamodb_client
    n = table_sc.name
    s = {"S": "x"}
    bad_items = [
        {"p": {"S": ""}, "c": s},                  # empty string key
        {"p": s, "c": {"S": ""}},
        {"p": {"B": b""}, "c": s},                 # empty binary key
        {"p": {"N": "1"}, "c": s},                 # wrong key types
        {"p": s, "c": {"N": "1"}},
        {"p": {"B": b"x"}, "c": s},
        {"p": {"SS": ["x"]}, "c": s},
        {"p": {"BOOL": True}, "c": s},
        {"c": s},                                  # missing keys
        {"p": s},
        {"q": s, "c": s},
    ]
    for item in bad_items:
        alt_expect_error("ValidationException", client.put_item, TableName=n, Item=item)
        key_only = {k: v for k, v in item.items() if k in ("p", "c", "q")}
        alt_expect_error("ValidationException", client.get_item, TableName=n, Key=key_only)
        alt_expect_error("ValidationException", client.delete_item, TableName=n, Key=key_only)
        alt_expect_error("ValidationException", client.update_item, TableName=n, Key=key_only,
                         UpdateExpression="SET a = :v", ExpressionAttributeValues={":v": s})
    # An extra attribute in a Key.
    alt_expect_error("ValidationException", client.get_item, TableName=n,
                     Key={"p": s, "c": s, "spurious": s})
    alt_expect_error("ValidationException", client.get_item, TableName=table_s.name,
                     Key={"p": s, "c": s})
    alt_expect_error("ValidationException", client.delete_item, TableName=table_s.name,
                     Key={"p": s, "c": s})
    alt_expect_error("ValidationException", client.update_item, TableName=table_s.name,
                     Key={"p": s, "c": s}, UpdateExpression="SET a = :v",
                     ExpressionAttributeValues={":v": s})
    # Key attributes cannot be updated.
    alt_expect_error("ValidationException", client.update_item, TableName=n,
                     Key={"p": s, "c": s}, UpdateExpression="SET c = :v",
                     ExpressionAttributeValues={":v": {"S": "y"}})
    alt_expect_error("ValidationException", client.update_item, TableName=n,
                     Key={"p": s, "c": s}, UpdateExpression="REMOVE p")
    assert client.scan(TableName=n, ConsistentRead=True, Select="COUNT",
                       FilterExpression="p = :x", ExpressionAttributeValues={":x": s})["Count"] == 0


def test_largest_keys(table_sc, dynamodb):
    """DynamoDB's largest keys work: 2048-byte hash and 1024-byte sort keys,
    as strings and as binary."""
    k = {"p": "h" * 2048, "c": "c" * 1024}
    table_sc.put_item(Item=dict(k, v=1))
    assert get(table_sc, k) == dict(k, v=1)
    tb = alt_create_table(dynamodb, hash_key=("p", "B"), range_key=("c", "B"))
    try:
        k = {"p": bytes(range(256)) * 8, "c": b"\xff" * 1024}
        tb.put_item(Item=dict(k, v=2))
        assert get(tb, k) == dict(k, v=2)
    finally:
        tb.delete()


def test_key_too_long(table_sc):
    """Over DynamoDB's limits: 2049-byte hash key, 1025-byte sort key."""
    alt_expect_error("ValidationException", table_sc.put_item,
                     Item={"p": "h" * 2049, "c": "c"})
    alt_expect_error("ValidationException", table_sc.put_item,
                     Item={"p": "h", "c": "c" * 1025})


def test_update_removing_from_missing_item(table_s):
    """An update that only removes attributes does not create the item."""
    k = {"p": key()}
    table_s.update_item(Key=k, UpdateExpression="REMOVE a")
    assert get(table_s, k) is None
    table_s.update_item(Key=k, AttributeUpdates={"a": {"Action": "DELETE"}})
    assert get(table_s, k) is None
    table_s.update_item(Key=k)
    assert get(table_s, k) == k


def test_missing_required_parameters(dynamodb_client, dynamodb, table_s):
    client = dynamodb_client
    alt_expect_error("ValidationException", client.put_item, TableName=table_s.name)
    alt_expect_error("ValidationException", client.get_item, TableName=table_s.name)
    alt_expect_error("ValidationException", client.update_item, TableName=table_s.name)
    alt_expect_error("ValidationException", client.delete_item, TableName=table_s.name)
    alt_expect_error("ValidationException", client.get_item, Key={"p": {"S": "x"}})
