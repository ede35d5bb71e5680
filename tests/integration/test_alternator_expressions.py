# SPDX-License-Identifier: BSD-3-Clause
"""Alternator endpoint: condition and update expressions through boto3.

ConditionExpression with every function (attribute_exists,
attribute_not_exists, attribute_type, begins_with, contains, size), the
comparators, BETWEEN, IN and AND/OR/NOT precedence on PutItem, UpdateItem
and DeleteItem; ConditionalCheckFailedException and, with
ReturnValuesOnConditionCheckFailure=ALL_OLD, the old item in the error;
UpdateExpression SET (+, -, if_not_exists, list_append, nested paths),
REMOVE, ADD and DELETE; ExpressionAttributeNames/Values that are unused or
undefined; the legacy Expected and AttributeUpdates parameters.
"""

import itertools
from decimal import Decimal

import pytest

pytest.importorskip("boto3")

from botocore.exceptions import ClientError  # noqa: E402

from conftest import alt_create_table, alt_error, alt_expect_error, alt_raw  # noqa: E402

CCF = "ConditionalCheckFailedException"
_ids = itertools.count()


def key():
    return {"p": f"e{next(_ids)}"}


@pytest.fixture(scope="module")
def table(dynamodb):
    t = alt_create_table(dynamodb)
    yield t
    t.delete()


def get(table, k):
    return table.get_item(Key=k, ConsistentRead=True).get("Item")


BASE = {"a": 1, "s": "hello world", "b": b"bin", "ss": {"x", "y"}, "ns": {1, 2},
        "bs": {b"q"}, "l": [1, "two", 3], "m": {"k": "v", "nest": {"deep": 5}},
        "t": True, "nul": None}


@pytest.fixture
def item(table):
    k = key()
    table.put_item(Item=dict(k, **BASE))
    return k


_probe = itertools.count()


def holds(table, k, expr, values=None, names=None):
    """Run an UpdateItem guarded by `expr`; True if it was applied, False on
    ConditionalCheckFailedException (and then the item is unchanged)."""
    before = get(table, k)
    vals = dict(values or {})
    vals[":probe_value"] = next(_probe)
    kwargs = {"ExpressionAttributeValues": vals}
    if names:
        kwargs["ExpressionAttributeNames"] = names
    try:
        table.update_item(Key=k, UpdateExpression="SET probe = :probe_value",
                          ConditionExpression=expr, **kwargs)
    except ClientError as e:
        code, msg = alt_error(e)
        assert code == CCF, f"{expr!r}: {code}: {msg}"
        assert msg == "The conditional request failed", msg
        assert get(table, k) == before, f"{expr!r} failed but changed the item"
        return False
    assert get(table, k)["probe"] == vals[":probe_value"]
    return True


# --- ConditionExpression ------------------------------------------------------

@pytest.mark.parametrize("expr,values,expected", [
    ("attribute_exists(a)", {}, True),
    ("attribute_exists(nosuch)", {}, False),
    ("attribute_not_exists(nosuch)", {}, True),
    ("attribute_not_exists(a)", {}, False),
    ("attribute_exists(m.k)", {}, True),
    ("attribute_exists(m.nest.deep)", {}, True),
    ("attribute_exists(m.nosuch)", {}, False),
    ("attribute_exists(l[1])", {}, True),
    ("attribute_exists(l[3])", {}, False),
    ("attribute_exists(p)", {}, True),
    ("attribute_type(a, :t)", {":t": "N"}, True),
    ("attribute_type(a, :t)", {":t": "S"}, False),
    ("attribute_type(s, :t)", {":t": "S"}, True),
    ("attribute_type(b, :t)", {":t": "B"}, True),
    ("attribute_type(ss, :t)", {":t": "SS"}, True),
    ("attribute_type(ns, :t)", {":t": "NS"}, True),
    ("attribute_type(bs, :t)", {":t": "BS"}, True),
    ("attribute_type(l, :t)", {":t": "L"}, True),
    ("attribute_type(m, :t)", {":t": "M"}, True),
    ("attribute_type(t, :t)", {":t": "BOOL"}, True),
    ("attribute_type(nul, :t)", {":t": "NULL"}, True),
    ("attribute_type(nosuch, :t)", {":t": "S"}, False),
    ("begins_with(s, :v)", {":v": "hello"}, True),
    ("begins_with(s, :v)", {":v": "world"}, False),
    ("begins_with(b, :v)", {":v": b"bi"}, True),
    ("begins_with(b, :v)", {":v": b"in"}, False),
    ("begins_with(a, :v)", {":v": "1"}, False),
    ("begins_with(nosuch, :v)", {":v": "h"}, False),
    ("contains(s, :v)", {":v": "lo wo"}, True),
    ("contains(s, :v)", {":v": "bye"}, False),
    ("contains(ss, :v)", {":v": "x"}, True),
    ("contains(ss, :v)", {":v": "z"}, False),
    ("contains(ns, :v)", {":v": 2}, True),
    ("contains(bs, :v)", {":v": b"q"}, True),
    ("contains(l, :v)", {":v": "two"}, True),
    ("contains(l, :v)", {":v": 2}, False),
    ("contains(b, :v)", {":v": b"i"}, True),
    ("size(s) = :v", {":v": 11}, True),
    ("size(s) > :v", {":v": 11}, False),
    ("size(b) = :v", {":v": 3}, True),
    ("size(ss) = :v", {":v": 2}, True),
    ("size(l) = :v", {":v": 3}, True),
    ("size(m) = :v", {":v": 2}, True),
    ("size(l) BETWEEN :lo AND :hi", {":lo": 1, ":hi": 3}, True),
    ("a = :v", {":v": 1}, True),
    ("a = :v", {":v": 2}, False),
    ("a = :v", {":v": "1"}, False),
    ("a <> :v", {":v": 2}, True),
    ("a <> :v", {":v": 1}, False),
    ("a < :v", {":v": 2}, True),
    ("a < :v", {":v": 1}, False),
    ("a <= :v", {":v": 1}, True),
    ("a > :v", {":v": 0}, True),
    ("a > :v", {":v": Decimal("1.5")}, False),
    ("a >= :v", {":v": 1}, True),
    ("a < :v", {":v": "2"}, False),
    ("s < :v", {":v": "hellp"}, True),
    ("s >= :v", {":v": "i"}, False),
    ("b < :v", {":v": b"bio"}, True),
    ("m = :v", {":v": {"k": "v", "nest": {"deep": 5}}}, True),
    ("l = :v", {":v": [1, "two", 3]}, True),
    ("ss = :v", {":v": {"y", "x"}}, True),
    ("t = :v", {":v": True}, True),
    ("nosuch = :v", {":v": 1}, False),
    ("nosuch < :v", {":v": 1}, False),
    ("m.nest.deep = :v", {":v": 5}, True),
    ("l[1] = :v", {":v": "two"}, True),
    ("a BETWEEN :lo AND :hi", {":lo": 0, ":hi": 2}, True),
    ("a BETWEEN :lo AND :hi", {":lo": 1, ":hi": 1}, True),
    ("a BETWEEN :lo AND :hi", {":lo": 2, ":hi": 3}, False),
    ("s BETWEEN :lo AND :hi", {":lo": "a", ":hi": "z"}, True),
    ("a IN (:x, :y)", {":x": 0, ":y": 1}, True),
    ("a IN (:x)", {":x": 1}, True),
    ("a IN (:x, :y, :z)", {":x": 0, ":y": 2, ":z": "1"}, False),
    # Precedence: NOT binds tighter than AND, AND tighter than OR.
    ("a = :one OR a = :zero AND s = :nope", {":one": 1, ":zero": 0, ":nope": "no"}, True),
    ("(a = :one OR a = :zero) AND s = :nope", {":one": 1, ":zero": 0, ":nope": "no"}, False),
    ("NOT a = :zero AND a = :two", {":zero": 0, ":two": 2}, False),
    ("NOT (a = :zero AND a = :two)", {":zero": 0, ":two": 2}, True),
    ("NOT a = :one", {":one": 1}, False),
    ("NOT NOT a = :one", {":one": 1}, True),
    ("a = :one AND s = :s AND t = :t", {":one": 1, ":s": "hello world", ":t": True}, True),
    ("a = :zero OR s = :nope OR t = :t", {":zero": 0, ":nope": "no", ":t": True}, True),
    ("attribute_exists(a) AND NOT attribute_exists(nosuch) AND (size(s) > :n OR a = :n)",
     {":n": 100}, False),
    ("attribute_exists(a) AND NOT attribute_exists(nosuch) AND (size(s) > :n OR a = :one)",
     {":n": 100, ":one": 1}, True),
    ("(a = :one)", {":one": 1}, True),
    ("a=:one and s=:s", {":one": 1, ":s": "hello world"}, True),
])
def test_condition_expression(table, item, expr, values, expected):
    assert holds(table, item, expr, values) is expected, expr


def test_condition_with_attribute_names(table, item):
    assert holds(table, item, "#n1 = :v AND attribute_exists(#n2.#n3)", {":v": 1},
                 {"#n1": "a", "#n2": "m", "#n3": "k"})
    table.update_item(Key=item, UpdateExpression="SET #odd = :v",
                      ExpressionAttributeNames={"#odd": "name with space.and.dots"},
                      ExpressionAttributeValues={":v": "x"})
    assert holds(table, item, "#o = :v", {":v": "x"}, {"#o": "name with space.and.dots"})
    # A dotted name without # is a path, not that attribute.
    assert not holds(table, item, "attribute_exists(#a.#b)", None, {"#a": "name with space",
                                                                     "#b": "and"})


def test_reserved_words(table, item):
    """DynamoDB's reserved words cannot name attributes in expressions;
    ExpressionAttributeNames can."""
    for expr in ("SET first = :v", "SET a = :v REMOVE count",
                 "SET a.data = :v", "SET m.Year = :v"):
        alt_expect_error("ValidationException", update, table, item, expr, {":v": 1},
                         match="reserved keyword")
    alt_expect_error("ValidationException", table.get_item, Key=item,
                     ProjectionExpression="a, name", match="reserved keyword")
    assert not holds(table, item, "attribute_exists(#n)", None, {"#n": "first"})
    update(table, item, "SET #f = :v, #s = :w", {":v": 1, ":w": 2},
           {"#f": "first", "#s": "size"})
    got = get(table, item)
    assert (got["first"], got["size"]) == (1, 2)
    assert holds(table, item, "#f = :v", {":v": 1}, {"#f": "first"})


def test_condition_on_missing_item(table):
    k = key()
    # Create-if-absent.
    table.put_item(Item=dict(k, v=1), ConditionExpression="attribute_not_exists(p)")
    assert get(table, k) == dict(k, v=1)
    e = alt_expect_error(CCF, table.put_item, Item=dict(k, v=2),
                         ConditionExpression="attribute_not_exists(p)")
    assert alt_error(e)[1] == "The conditional request failed"
    assert get(table, k) == dict(k, v=1)
    # Update-if-present on a missing item does not create it.
    k2 = key()
    alt_expect_error(CCF, table.update_item, Key=k2, UpdateExpression="SET v = :v",
                     ConditionExpression="attribute_exists(p)",
                     ExpressionAttributeValues={":v": 1})
    assert get(table, k2) is None
    alt_expect_error(CCF, table.delete_item, Key=k2, ConditionExpression="attribute_exists(p)")


def test_condition_on_put_and_delete(table, item):
    alt_expect_error(CCF, table.put_item, Item=dict(item, a=100), ConditionExpression="a = :v",
                     ExpressionAttributeValues={":v": 2})
    assert get(table, item)["a"] == 1
    table.put_item(Item=dict(item, a=100), ConditionExpression="a = :v",
                   ExpressionAttributeValues={":v": 1})
    assert get(table, item) == dict(item, a=100)
    alt_expect_error(CCF, table.delete_item, Key=item, ConditionExpression="a < :v",
                     ExpressionAttributeValues={":v": 100})
    assert get(table, item) is not None
    table.delete_item(Key=item, ConditionExpression="a >= :v",
                      ExpressionAttributeValues={":v": 100})
    assert get(table, item) is None


def test_condition_expression_errors(table, item):
    bad = [
        ("a = ", {}),                                  # syntax
        ("a = :v AND", {":v": 1}),
        ("a == :v", {":v": 1}),
        ("nosuchfunction(a)", {}),
        ("attribute_exists(a, b)", {}),
        ("attribute_type(a, :t)", {":t": "NOTATYPE"}),
        ("a BETWEEN :hi AND :lo", {":lo": 1, ":hi": 2}),
        ("a IN ()", {}),
        ("size(a)", {}),                               # not a condition
        ("begins_with(a)", {}),
        ("a = :undefined", {":v": 1}),                 # undefined and unused value
        ("#undefined = :v", {":v": 1}),
        ("(((a = :v)))", {":v": 1}),                   # redundant parentheses
        ("", {}),
    ]
    before = get(table, item)
    for expr, values in bad:
        kwargs = {"ExpressionAttributeValues": values} if values else {}
        alt_expect_error("ValidationException", table.put_item, Item=dict(item, a=42),
                         ConditionExpression=expr, **kwargs)
    assert get(table, item) == before


def test_return_values_on_condition_check_failure(alternator_server, table, item):
    body = {"TableName": table.name, "Item": {"p": {"S": item["p"]}, "a": {"N": "5"}},
            "ConditionExpression": "a = :v",
            "ExpressionAttributeValues": {":v": {"N": "99"}},
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}
    r = alt_raw(alternator_server, "PutItem", body)
    assert r.status == 400, r
    assert r.error_type == CCF, r
    assert r.message == "The conditional request failed", r
    old = r.json["Item"]
    assert old["p"] == {"S": item["p"]}
    assert old["a"] == {"N": "1"}
    assert old["s"] == {"S": "hello world"}
    assert set(old) == {"p"} | set(BASE)
    # The same for UpdateItem and DeleteItem.
    upd = {"TableName": table.name, "Key": {"p": {"S": item["p"]}},
           "UpdateExpression": "SET a = :n", "ConditionExpression": "a = :v",
           "ExpressionAttributeValues": {":v": {"N": "99"}, ":n": {"N": "7"}},
           "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}
    r = alt_raw(alternator_server, "UpdateItem", upd)
    assert (r.status, r.error_type) == (400, CCF), r
    assert r.json["Item"]["a"] == {"N": "1"}
    dele = {"TableName": table.name, "Key": {"p": {"S": item["p"]}},
            "ConditionExpression": "attribute_not_exists(a)",
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}
    r = alt_raw(alternator_server, "DeleteItem", dele)
    assert (r.status, r.error_type) == (400, CCF), r
    assert r.json["Item"]["l"] == {"L": [{"N": "1"}, {"S": "two"}, {"N": "3"}]}
    # NONE (and the default) carry no item.
    upd["ReturnValuesOnConditionCheckFailure"] = "NONE"
    r = alt_raw(alternator_server, "UpdateItem", upd)
    assert r.error_type == CCF and "Item" not in r.json, r
    del upd["ReturnValuesOnConditionCheckFailure"]
    r = alt_raw(alternator_server, "UpdateItem", upd)
    assert r.error_type == CCF and "Item" not in r.json, r
    # On a missing item there is no old item to return.
    dele["Key"] = {"p": {"S": key()["p"]}}
    dele["ConditionExpression"] = "attribute_exists(a)"
    r = alt_raw(alternator_server, "DeleteItem", dele)
    assert r.error_type == CCF and "Item" not in r.json, r
    # A bad value is refused.
    upd["ReturnValuesOnConditionCheckFailure"] = "ALL_NEW"
    r = alt_raw(alternator_server, "UpdateItem", upd)
    assert (r.status, r.error_type) == (400, "ValidationException"), r
    assert get(table, item) == dict(item, **BASE)


# --- UpdateExpression ----------------------------------------------------------------

def update(table, k, expr, values=None, names=None, **kwargs):
    if values:
        kwargs["ExpressionAttributeValues"] = values
    if names:
        kwargs["ExpressionAttributeNames"] = names
    return table.update_item(Key=k, UpdateExpression=expr, **kwargs)


def test_set_arithmetic(table):
    k = key()
    update(table, k, "SET a = :v", {":v": 10})
    update(table, k, "SET a = a + :one", {":one": 1})
    assert get(table, k)["a"] == 11
    update(table, k, "SET a = a - :v", {":v": Decimal("0.5")})
    assert get(table, k)["a"] == Decimal("10.5")
    update(table, k, "SET b = :x + :y, c = a - a, d = :x - a", {":x": 3, ":y": 4})
    assert get(table, k) == dict(k, a=Decimal("10.5"), b=7, c=0, d=Decimal("-7.5"))
    update(table, k, "SET a = :x - :y", {":x": 1, ":y": 4})
    assert get(table, k)["a"] == -3
    # Arithmetic on a missing attribute or a non-number is an error.
    alt_expect_error("ValidationException", update, table, k, "SET a = nosuch + :one",
                     {":one": 1})
    update(table, k, "SET s = :s", {":s": "str"})
    alt_expect_error("ValidationException", update, table, k, "SET a = s + :one", {":one": 1})
    alt_expect_error("ValidationException", update, table, k, "SET a = :s - :one",
                     {":one": 1, ":s": "x"})
    assert get(table, k)["a"] == -3


def test_if_not_exists(table):
    k = key()
    update(table, k, "SET n = if_not_exists(n, :zero) + :one", {":zero": 0, ":one": 1})
    assert get(table, k)["n"] == 1
    update(table, k, "SET n = if_not_exists(n, :zero) + :one", {":zero": 0, ":one": 1})
    assert get(table, k)["n"] == 2
    update(table, k, "SET fst = if_not_exists(fst, :v)", {":v": "one"})
    update(table, k, "SET fst = if_not_exists(fst, :v)", {":v": "two"})
    assert get(table, k)["fst"] == "one"
    update(table, k, "SET cpy = if_not_exists(nosuch, n)")
    assert get(table, k)["cpy"] == 2


def test_list_append(table):
    k = key()
    update(table, k, "SET l = :l", {":l": ["b"]})
    update(table, k, "SET l = list_append(l, :more)", {":more": ["c", 1]})
    update(table, k, "SET l = list_append(:front, l)", {":front": ["a"]})
    assert get(table, k)["l"] == ["a", "b", "c", 1]
    update(table, k, "SET l2 = list_append(if_not_exists(l2, :empty), :x)",
           {":empty": [], ":x": [{"m": 1}]})
    assert get(table, k)["l2"] == [{"m": 1}]
    update(table, k, "SET s = :s", {":s": "str"})
    alt_expect_error("ValidationException", update, table, k, "SET l = list_append(l, :x)",
                     {":x": "notalist"})
    alt_expect_error("ValidationException", update, table, k, "SET l = list_append(s, :x)",
                     {":x": ["y"]})
    assert get(table, k)["l"] == ["a", "b", "c", 1]


def test_nested_paths(table):
    k = key()
    table.put_item(Item=dict(k, a={"b": [0, 1, {"c": "old", "keep": True}], "oth": "o"},
                             l=["x", "y", "z"]))
    update(table, k, "SET a.b[2].c = :v", {":v": "new"})
    assert get(table, k)["a"] == {"b": [0, 1, {"c": "new", "keep": True}], "oth": "o"}
    update(table, k, "SET a.b[0] = :v, a.added = :w", {":v": "zero", ":w": {"n": 1}})
    assert get(table, k)["a"] == {"b": ["zero", 1, {"c": "new", "keep": True}],
                                  "oth": "o", "added": {"n": 1}}
    # An index past the end appends.
    update(table, k, "SET l[10] = :v", {":v": "end"})
    assert get(table, k)["l"] == ["x", "y", "z", "end"]
    update(table, k, "SET #a.#b[1] = :v", {":v": 100}, {"#a": "a", "#b": "b"})
    assert get(table, k)["a"]["b"][1] == 100
    # A path through something that is not there (or not a map/list) is an error.
    alt_expect_error("ValidationException", update, table, k, "SET nosuch.x = :v", {":v": 1})
    alt_expect_error("ValidationException", update, table, k, "SET a.oth.x = :v", {":v": 1})
    alt_expect_error("ValidationException", update, table, k, "SET a.nosuch.x = :v", {":v": 1})
    alt_expect_error("ValidationException", update, table, k, "SET a[0] = :v", {":v": 1})
    # Two overlapping paths in one update.
    alt_expect_error("ValidationException", update, table, k, "SET a.b = :v, a.b[1] = :v",
                     {":v": 1})
    alt_expect_error("ValidationException", update, table, k, "SET a = :v REMOVE a", {":v": 1})
    alt_expect_error("ValidationException", update, table, k, "SET x = :v, x = :v", {":v": 1})


def test_many_nested_actions(table):
    """Many nested SET and REMOVE actions on one attribute in one expression
    give what applying them one request at a time gives, whether they all
    touch existing members (one rewrite) or one of them does not (an index
    past the end, a new key under a missing map: action by action)."""
    import random
    rnd = random.Random(7)
    base = {"m": {f"k{i}": ({"x": "v", "l": [0, 1, 2]} if i % 2 else "s") for i in range(40)},
            "l": [{"x": i} for i in range(10)], "other": 1}
    for round_ in range(12):
        keys = list(range(40))
        rnd.shuffle(keys)
        idx = list(range(10))
        rnd.shuffle(idx)
        actions, values = [], {}
        for n in range(rnd.randint(2, 30)):
            kind = rnd.randrange(7)
            v = f":v{n}"
            if kind == 0 and keys:
                actions.append(("SET", f"m.k{keys.pop()} = {v}"))
            elif kind == 1:
                actions.append(("SET", f"m.new{n} = {v}"))
            elif kind == 2 and keys:
                actions.append(("REMOVE", f"m.k{keys.pop()}"))
            elif kind == 3 and keys:
                k = keys.pop()
                actions.append(("SET", f"m.k{k}.x = {v}" if k % 2 else f"m.k{k} = {v}"))
            elif kind == 4 and idx:
                actions.append(("SET", f"l[{idx.pop()}].x = {v}"))
            elif kind == 5 and idx:
                actions.append(("SET", f"l[{idx.pop()}] = {v}"))
            elif kind == 6 and round_ % 3 == 0:
                actions.append(("SET", f"l[{20 + n}] = {v}"))  # appends: one by one
            else:
                continue
            if actions[-1][0] == "SET":
                values[v] = {"n": n} if n % 3 else f"val{n}"
        if not actions:
            continue
        one, each = key(), key()
        for k in (one, each):
            table.put_item(Item=dict(k, **base))
        sets = [a for c, a in actions if c == "SET"]
        removes = [a for c, a in actions if c == "REMOVE"]
        expr = ("SET " + ", ".join(sets) if sets else "") + \
            (" REMOVE " + ", ".join(removes) if removes else "")
        update(table, one, expr.strip(), values or None)
        for c, a in [("SET", a) for a in sets] + [("REMOVE", a) for a in removes]:
            used = {p: values[p] for p in values if p in a.split(" = ")[-1].split()}
            update(table, each, f"{c} {a}", used or None)
        got, want = get(table, one), get(table, each)
        got.pop("p"), want.pop("p")
        assert got == want, (expr, values)


def test_remove(table):
    k = key()
    table.put_item(Item=dict(k, a=1, b=2, m={"x": 1, "y": {"z": 2}}, l=[0, 1, 2, 3]))
    update(table, k, "REMOVE a, m.y.z, l[1], l[3]")
    assert get(table, k) == dict(k, b=2, m={"x": 1, "y": {}}, l=[0, 2])
    # Removing what is not there is fine.
    update(table, k, "REMOVE nosuch, m.nosuch, l[10]")
    assert get(table, k) == dict(k, b=2, m={"x": 1, "y": {}}, l=[0, 2])
    update(table, k, "REMOVE b, m, l")
    assert get(table, k) == k


def test_add(table):
    k = key()
    update(table, k, "ADD cnt :v", {":v": 5})
    assert get(table, k)["cnt"] == 5
    update(table, k, "ADD cnt :v", {":v": -7})
    assert get(table, k)["cnt"] == -2
    update(table, k, "ADD ss :v, ns :n", {":v": {"a", "b"}, ":n": {1}})
    update(table, k, "ADD ss :v, ns :n", {":v": {"b", "c"}, ":n": {1, 2}})
    assert get(table, k)["ss"] == {"a", "b", "c"}
    assert get(table, k)["ns"] == {1, 2}
    update(table, k, "ADD bs :v", {":v": {b"x"}})
    assert get(table, k)["bs"] == {b"x"}
    update(table, k, "SET s = :s", {":s": "str"})
    # ADD only takes numbers and sets, of matching types.
    for expr, values in (("ADD s :v", {":v": 1}), ("ADD cnt :v", {":v": "1"}),
                         ("ADD ss :v", {":v": {1}}), ("ADD l :v", {":v": [1]}),
                         ("ADD cnt :v", {":v": {1}})):
        alt_expect_error("ValidationException", update, table, k, expr, values)
    assert get(table, k) == dict(k, cnt=-2, ss={"a", "b", "c"}, ns={1, 2}, bs={b"x"}, s="str")


def test_delete_from_set(table):
    k = key()
    table.put_item(Item=dict(k, ss={"a", "b", "c"}, ns={1, 2, 3}, n=1))
    update(table, k, "DELETE ss :v", {":v": {"a", "zz"}})
    assert get(table, k)["ss"] == {"b", "c"}
    update(table, k, "DELETE ns :v", {":v": {1, 2, 3}})
    assert "ns" not in get(table, k), "a set emptied by DELETE is removed"
    update(table, k, "DELETE nosuch :v", {":v": {"a"}})
    assert "nosuch" not in get(table, k)
    alt_expect_error("ValidationException", update, table, k, "DELETE ss :v", {":v": "b"})
    alt_expect_error("ValidationException", update, table, k, "DELETE ss :v", {":v": {1}})
    alt_expect_error("ValidationException", update, table, k, "DELETE n :v", {":v": {1}})
    assert get(table, k) == dict(k, ss={"b", "c"}, n=1)


def test_large_sets(alternator_server, table):
    """ADD and DELETE on sets of thousands of elements, equality of sets in
    any order, and duplicates refused by value (1 and 1.0 are one number)
    wherever they are, at any size."""
    k = key()
    table.put_item(Item=dict(k, ss={f"s{i}" for i in range(10000)}, ns=set(range(5000)),
                             bs={b"%05d" % i for i in range(3000)}))
    update(table, k, "ADD ss :v DELETE ns :d",
           {":v": {f"s{i}" for i in range(5000, 15000)},
            ":d": {Decimal(f"{i}.0") for i in range(0, 6000, 2)}})
    update(table, k, "DELETE bs :b", {":b": {b"%05d" % i for i in range(1, 3000)}})
    got = get(table, k)
    assert got["ss"] == {f"s{i}" for i in range(15000)}
    assert got["ns"] == set(range(1, 5000, 2))
    assert got["bs"] == {b"00000"}
    assert holds(table, k, "ns = :n", {":n": {Decimal(f"{i}E0") for i in range(4999, 0, -2)}})
    assert not holds(table, k, "ns = :n", {":n": set(range(3, 5001, 2))})

    def put(attr):
        return alt_raw(alternator_server, "PutItem",
                       {"TableName": table.name, "Item": {"p": {"S": "dup"}, "x": attr}})

    many = [str(i) for i in range(20000)]
    for attr in ({"NS": ["1", "2", "1.0"]}, {"NS": ["10E-1", "1"]}, {"NS": many + ["1.00"]},
                 {"SS": ["a", "b", "a"]}, {"SS": [f"s{i}" for i in range(20000)] + ["s7"]},
                 {"BS": ["AAE=", "AAI=", "AAE="]}, {"L": [{"SS": ["x", "x"]}]},
                 {"M": {"m": {"NS": ["5", "5.0"]}}}):
        r = put(attr)
        assert r.status == 400, (attr, r.status, r.body[:200])
        assert "Input collection contains duplicates" in r.json["message"], r.json
    assert put({"NS": many}).status == 200


def test_long_condition_chains(table, item):
    """Conditions chained as long as 4 KB allows evaluate like short ones:
    DynamoDB's 300 NOTs (301 are too many operators), 300 ANDs, 400 ORs, and
    nesting up to the parser's depth limit (deeper is refused, not a crash)."""
    nots = "NOT " * 299 + "a = :one"
    assert not holds(table, item, nots, {":one": 1})
    assert holds(table, item, "NOT " + nots, {":one": 1})
    alt_expect_error("ValidationException", table.update_item, Key=item,
                     UpdateExpression="SET probe = :one",
                     ConditionExpression="NOT NOT " + nots,
                     ExpressionAttributeValues={":one": 1},
                     match="too many operators; operator count: 301")
    ands = " AND ".join(["a = :one"] * 300) + " AND a = :two"
    assert len(ands) <= 4096
    assert not holds(table, item, ands, {":one": 1, ":two": 2})
    assert holds(table, item, ands.replace(":two", ":one"), {":one": 1})
    ors = " OR ".join(["a=:two"] * 400) + " OR a=:one"
    assert len(ors) <= 4096
    assert holds(table, item, ors, {":one": 1, ":two": 2})
    nested = "(a = :one AND " * 150 + "a = :one" + ")" * 150
    assert holds(table, item, nested, {":one": 1})
    deep = "(a = :one AND " * 250 + "a = :one" + ")" * 250
    alt_expect_error("ValidationException", table.update_item, Key=item,
                     UpdateExpression="SET probe = :one", ConditionExpression=deep,
                     ExpressionAttributeValues={":one": 1})


def test_all_clauses_together(table):
    k = key()
    table.put_item(Item=dict(k, a=1, gone="x", cnt=1, ss={"a", "b"}))
    update(table, k, "SET a = a + :one, b = :b REMOVE gone ADD cnt :one DELETE ss :a",
           {":one": 1, ":b": "bee", ":a": {"a"}})
    assert get(table, k) == dict(k, a=2, b="bee", cnt=2, ss={"b"})
    # Clause keywords are case-insensitive; each clause at most once.
    update(table, k, "set a = :v remove b", {":v": 0})
    assert get(table, k) == dict(k, a=0, cnt=2, ss={"b"})
    alt_expect_error("ValidationException", update, table, k, "SET a = :v SET b = :v",
                     {":v": 1})
    alt_expect_error("ValidationException", update, table, k, "SET a = :v, ", {":v": 1})
    alt_expect_error("ValidationException", update, table, k, "UPSERT a = :v", {":v": 1})
    alt_expect_error("ValidationException", update, table, k, "")


def test_unused_and_undefined_placeholders(table):
    k = key()
    table.put_item(Item=dict(k, a=1))
    e = alt_expect_error("ValidationException", update, table, k, "SET a = :v",
                         {":v": 2, ":unused": 3})
    assert "unused" in alt_error(e)[1].lower() or ":unused" in alt_error(e)[1], alt_error(e)
    e = alt_expect_error("ValidationException", update, table, k, "SET a = :v", {":v": 2},
                         {"#unused": "x"})
    assert "unused" in alt_error(e)[1].lower() or "#unused" in alt_error(e)[1], alt_error(e)
    alt_expect_error("ValidationException", update, table, k, "SET a = :undefined",
                     {":v": 2})
    alt_expect_error("ValidationException", update, table, k, "SET #undefined = :v",
                     {":v": 2})
    # Values and names used only by the condition count as used.
    update(table, k, "SET a = :v", {":v": 2, ":c": 1}, {"#a": "a"},
           ConditionExpression="#a = :c")
    assert get(table, k)["a"] == 2
    # Unused ones are refused on GetItem's projection too.
    alt_expect_error("ValidationException", table.get_item, Key=k, ProjectionExpression="a",
                     ExpressionAttributeNames={"#x": "a"})
    alt_expect_error("ValidationException", table.put_item, Item=dict(k, a=5),
                     ExpressionAttributeValues={":x": 1})
    alt_expect_error("ValidationException", table.delete_item, Key=k,
                     ConditionExpression="a = :x", ExpressionAttributeValues={":x": 2, ":y": 3})
    assert get(table, k)["a"] == 2


# --- legacy parameters ------------------------------------------------------------

def test_expected(table):
    k = key()
    table.put_item(Item=dict(k, a=1, s="str"))
    table.put_item(Item=dict(k, a=2, s="str"),
                   Expected={"a": {"ComparisonOperator": "EQ", "AttributeValueList": [1]}})
    assert get(table, k)["a"] == 2
    alt_expect_error(CCF, table.put_item, Item=dict(k, a=3),
                     Expected={"a": {"ComparisonOperator": "EQ", "AttributeValueList": [1]}})
    # The old short forms: Value (equality) and Exists.
    table.update_item(Key=k, AttributeUpdates={"a": {"Value": 3, "Action": "PUT"}},
                      Expected={"a": {"Value": 2}, "nosuch": {"Exists": False}})
    assert get(table, k)["a"] == 3
    alt_expect_error(CCF, table.update_item, Key=k,
                     AttributeUpdates={"a": {"Value": 4, "Action": "PUT"}},
                     Expected={"s": {"Exists": False}})
    # Several conditions: AND by default, OR on request.
    exp = {"a": {"ComparisonOperator": "GT", "AttributeValueList": [100]},
           "s": {"ComparisonOperator": "BEGINS_WITH", "AttributeValueList": ["st"]}}
    alt_expect_error(CCF, table.update_item, Key=k,
                     AttributeUpdates={"a": {"Value": 4, "Action": "PUT"}}, Expected=exp)
    table.update_item(Key=k, AttributeUpdates={"a": {"Value": 4, "Action": "PUT"}},
                      Expected=exp, ConditionalOperator="OR")
    assert get(table, k)["a"] == 4
    for op, args, expected in (("NE", [5], True), ("LE", [4], True), ("LT", [4], False),
                               ("GE", [4], True), ("BETWEEN", [1, 3], False),
                               ("IN", [1, 4], True), ("NULL", [], False),
                               ("NOT_NULL", [], True)):
        cond = {"a": {"ComparisonOperator": op}}
        if args:
            cond["a"]["AttributeValueList"] = args
        try:
            table.update_item(Key=k, AttributeUpdates={"x": {"Value": op, "Action": "PUT"}},
                              Expected=cond)
            ok = True
        except ClientError as e:
            assert alt_error(e)[0] == CCF, (op, alt_error(e))
            ok = False
        assert ok is expected, op
    table.delete_item(Key=k, Expected={"s": {"ComparisonOperator": "CONTAINS",
                                             "AttributeValueList": ["tr"]}})
    assert get(table, k) is None
    alt_expect_error("ValidationException", table.put_item, Item=k,
                     Expected={"a": {"ComparisonOperator": "NOPE", "AttributeValueList": [1]}})


def test_attribute_updates_without_value(table):
    """Only DELETE may leave out the Value, with DynamoDB's message; an ADD
    without one failed as "invalid update" (found by tests/fuzz/fuzz_expr)."""
    k = key()
    table.put_item(Item=dict(k, a=1))
    for action in ("ADD", "PUT"):
        alt_expect_error("ValidationException", table.update_item, Key=k,
                         AttributeUpdates={"a": {"Action": action}},
                         match="^One or more parameter values were invalid: Only DELETE action "
                               "is allowed when no attribute value is specified$")
    assert get(table, k) == dict(k, a=1)
    table.update_item(Key=k, AttributeUpdates={"a": {"Action": "DELETE"}})
    assert get(table, k) == k


def test_attribute_updates_names_are_literal(table):
    """AttributeUpdates names attributes as they are: "#a" is no placeholder
    there; it failed as "invalid update" (found by tests/fuzz/fuzz_expr)."""
    k = key()
    table.update_item(Key=k, AttributeUpdates={"#a": {"Value": 1, "Action": "PUT"},
                                               "#": {"Value": "x", "Action": "PUT"}})
    assert get(table, k) == dict(k, **{"#a": 1, "#": "x"})
    table.update_item(Key=k, AttributeUpdates={"#a": {"Value": 2, "Action": "ADD"},
                                               "#": {"Action": "DELETE"}})
    assert get(table, k) == dict(k, **{"#a": 3})


def test_mixing_old_and_new_parameters(table):
    k = key()
    table.put_item(Item=dict(k, a=1))
    alt_expect_error("ValidationException", table.update_item, Key=k,
                     UpdateExpression="SET a = :v", ExpressionAttributeValues={":v": 2},
                     AttributeUpdates={"b": {"Value": 1, "Action": "PUT"}})
    alt_expect_error("ValidationException", table.update_item, Key=k,
                     UpdateExpression="SET a = :v", ExpressionAttributeValues={":v": 2},
                     Expected={"a": {"Value": 1}})
    alt_expect_error("ValidationException", table.update_item, Key=k,
                     AttributeUpdates={"b": {"Value": 1, "Action": "PUT"}},
                     ConditionExpression="a = :v", ExpressionAttributeValues={":v": 1})
    alt_expect_error("ValidationException", table.put_item, Item=dict(k, a=2),
                     Expected={"a": {"Value": 1}}, ConditionExpression="a = :v",
                     ExpressionAttributeValues={":v": 1})
    assert get(table, k) == dict(k, a=1)
