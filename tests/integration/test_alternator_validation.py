# SPDX-License-Identifier: BSD-3-Clause
"""Alternator: DynamoDB's validation and its exact answers, through boto3.

Rewritten from cases of ScyllaDB's test/alternator suite (the names in the
comments are theirs): the legacy QueryFilter and ScanFilter
(test_query_filter.py, test_scan.py), Expected's validation
(test_expected.py), condition and filter checks
(test_condition_expression.py, test_filter_expression.py), request checks
(test_query.py, test_item.py, test_projection_expression.py), the
SerializationException cases and JSON errors (test_manual_requests.py,
test_number.py), limits on names, sizes, nesting and pages (test_limits.py,
test_query.py, test_scan.py) and CreationDateTime (test_table.py).
"""

import random
import string
import time

import pytest

pytest.importorskip("boto3")

from conftest import (alt_all_pages as full, alt_create_table, alt_error,  # noqa: E402
                      alt_expect_error, alt_raw)


def rnd(n=10):
    return "".join(random.choice(string.ascii_uppercase + string.digits) for _ in range(n))


def cond(op, *values):
    return {"AttributeValueList": list(values), "ComparisonOperator": op}


@pytest.fixture(scope="module")
def tables(dynamodb):
    """The module's tables: keyed by a string, a string and a number, bytes."""
    made = {"s": alt_create_table(dynamodb),
            "sn": alt_create_table(dynamodb, range_key=("c", "N")),
            "b": alt_create_table(dynamodb, hash_key=("p", "B"))}
    yield made
    for t in made.values():
        t.delete()


@pytest.fixture(scope="module")
def table_s(tables):
    return tables["s"]


@pytest.fixture(scope="module")
def table_sn(tables):
    return tables["sn"]


@pytest.fixture(scope="module")
def table_b(tables):
    return tables["b"]


@pytest.fixture(scope="module")
def filtered(table_sn):
    """A partition of 20 items with assorted attribute types."""
    p = rnd()
    items = []
    for i in range(20):
        item = {"p": p, "c": i, "x": i % 5, "s": "v" + str(i % 3)}
        if i % 2:
            item["l"] = [i, "a"]
            item["ss"] = {"a", "b" + str(i)}
        items.append(item)
    with table_sn.batch_writer() as b:
        for item in items:
            b.put_item(item)
    return p, items


def query_filter(table, p, filt, **kwargs):
    return full(table.query, ConsistentRead=True,
                KeyConditions={"p": cond("EQ", p)}, QueryFilter=filt, **kwargs)


# ---- QueryFilter and ScanFilter ----

# test_query_filter.py: test_query_filter_eq ... test_query_filter_between and the rest
@pytest.mark.parametrize("op,values,pred", [
    ("EQ", [3], lambda i: i.get("x") == 3),
    ("NE", [3], lambda i: i.get("x") != 3),
    ("LT", [2], lambda i: "x" in i and i["x"] < 2),
    ("LE", [2], lambda i: "x" in i and i["x"] <= 2),
    ("GT", [2], lambda i: "x" in i and i["x"] > 2),
    ("GE", [2], lambda i: "x" in i and i["x"] >= 2),
    ("BETWEEN", [1, 3], lambda i: "x" in i and 1 <= i["x"] <= 3),
    ("IN", [1, 4, 9], lambda i: i.get("x") in (1, 4)),
])
def test_query_filter_comparisons(table_sn, filtered, op, values, pred):
    p, items = filtered
    got = query_filter(table_sn, p, {"x": cond(op, *values)})
    assert got == [i for i in items if pred(i)]


# test_query_filter_begins_with, _contains, _not_contains, _null, _not_null
def test_query_filter_functions(table_sn, filtered):
    p, items = filtered
    assert query_filter(table_sn, p, {"s": cond("BEGINS_WITH", "v1")}) == \
        [i for i in items if i["s"].startswith("v1")]
    assert query_filter(table_sn, p, {"l": cond("CONTAINS", "a")}) == \
        [i for i in items if "l" in i]
    assert query_filter(table_sn, p, {"ss": cond("CONTAINS", "b3")}) == \
        [i for i in items if "b3" in i.get("ss", ())]
    # NOT_CONTAINS needs the attribute: a missing one does not match
    assert query_filter(table_sn, p, {"ss": cond("NOT_CONTAINS", "b3")}) == \
        [i for i in items if "ss" in i and "b3" not in i["ss"]]
    assert query_filter(table_sn, p, {"l": cond("NULL")}) == [i for i in items if "l" not in i]
    assert query_filter(table_sn, p, {"l": cond("NOT_NULL")}) == [i for i in items if "l" in i]


# test_query_filter_and, test_query_filter_or (ConditionalOperator)
def test_query_filter_conditional_operator(table_sn, filtered):
    p, items = filtered
    f = {"x": cond("EQ", 1), "s": cond("EQ", "v1")}
    assert query_filter(table_sn, p, f) == \
        [i for i in items if i["x"] == 1 and i["s"] == "v1"]
    assert query_filter(table_sn, p, f, ConditionalOperator="AND") == \
        [i for i in items if i["x"] == 1 and i["s"] == "v1"]
    assert query_filter(table_sn, p, f, ConditionalOperator="OR") == \
        [i for i in items if i["x"] == 1 or i["s"] == "v1"]
    alt_expect_error("ValidationException", table_sn.query,
                     KeyConditions={"p": cond("EQ", p)}, QueryFilter=f,
                     ConditionalOperator="XOR")


# test_query_filter_paging: Limit counts the items read, before the filter
def test_query_filter_paging(table_sn, filtered):
    p, items = filtered
    r = table_sn.query(KeyConditions={"p": cond("EQ", p)}, Limit=5, ConsistentRead=True,
                       QueryFilter={"x": cond("EQ", 0)})
    assert r["ScannedCount"] == 5
    assert r["Items"] == [items[0]]
    assert r["LastEvaluatedKey"] == {"p": p, "c": 4}
    assert query_filter(table_sn, p, {"x": cond("EQ", 0)}, Limit=3) == \
        [i for i in items if i["x"] == 0]


# test_query_filter_partition_key_1, _sort_key: keys cannot be filtered
def test_query_filter_on_key(table_sn, filtered):
    p, _ = filtered
    alt_expect_error("ValidationException", query_filter, table_sn, p, {"c": cond("EQ", 3)},
                     match="QueryFilter can only contain non-primary key attributes: "
                           "Primary key attribute: c")
    alt_expect_error("ValidationException", query_filter, table_sn, p,
                     {"c": cond("EQ", 3), "x": cond("EQ", 1)}, match=" key ")


# test_query_filter_and_query_filter_expression, test_scan_filter_and_filter_expression
def test_filter_mixed_with_expressions(table_sn, filtered):
    p, _ = filtered
    alt_expect_error("ValidationException", table_sn.query,
                     KeyConditions={"p": cond("EQ", p)}, QueryFilter={"x": cond("EQ", 1)},
                     FilterExpression="x = :v", ExpressionAttributeValues={":v": 1},
                     match=r"Can not use both expression and non-expression parameters in "
                           r"the same request: Non-expression parameters: \{QueryFilter\} "
                           r"Expression parameters: \{FilterExpression\}")
    alt_expect_error("ValidationException", table_sn.scan,
                     ScanFilter={"x": cond("EQ", 1)}, ProjectionExpression="x",
                     match=r"Non-expression parameters: \{ScanFilter\} Expression "
                           r"parameters: \{ProjectionExpression\}")


# test_query_filter_wrong_count (AttributeValueList sizes) and wrong operators
@pytest.mark.parametrize("filt,match", [
    ({"x": cond("EQ")}, "Invalid number of argument\\(s\\) for the EQ ComparisonOperator"),
    ({"x": cond("EQ", 1, 2)}, "Invalid number of argument\\(s\\) for the EQ ComparisonOperator"),
    ({"x": cond("BETWEEN", 1)}, "BETWEEN"),
    ({"x": cond("NULL", 1)}, "NULL"),
    ({"x": cond("IN")}, "IN"),
    ({"x": cond("DOG", 1)}, "comparisonOperator"),
    ({"x": cond("BETWEEN", 3, 1)}, "BETWEEN"),
    ({"x": cond("LT", {"a"})}, "LT"),
    ({"x": cond("BEGINS_WITH", 1)}, "BEGINS_WITH"),
])
def test_query_filter_validation(table_sn, filtered, filt, match):
    p, _ = filtered
    alt_expect_error("ValidationException", query_filter, table_sn, p, filt, match=match)


# test_scan.py::test_scan_filter (ScanFilter, the same conditions on a Scan)
def test_scan_filter(dynamodb):
    t = alt_create_table(dynamodb)
    try:
        items = [{"p": rnd(), "x": i % 4, "y": "a" * (i % 3)} for i in range(30)]
        with t.batch_writer() as b:
            for item in items:
                b.put_item(item)
        key = lambda i: i["p"]  # noqa: E731
        got = full(t.scan, ConsistentRead=True, ScanFilter={"x": cond("GE", 2)})
        assert sorted(got, key=key) == sorted([i for i in items if i["x"] >= 2], key=key)
        got = full(t.scan, ConsistentRead=True, ConditionalOperator="OR",
                   ScanFilter={"x": cond("EQ", 0), "y": cond("EQ", "aa")})
        assert sorted(got, key=key) == \
            sorted([i for i in items if i["x"] == 0 or i["y"] == "aa"], key=key)
        # a Scan may filter on the key, unlike a Query
        p = items[3]["p"]
        assert full(t.scan, ConsistentRead=True, ScanFilter={"p": cond("EQ", p)}) == [items[3]]
    finally:
        t.delete()


# ---- Expected ----

# test_update_expected_1_eq_true ... : the count and type checks of AttributeValueList
@pytest.mark.parametrize("expected,match", [
    ({"a": {"ComparisonOperator": "EQ", "AttributeValueList": [1, 2]}}, "EQ"),
    ({"a": {"ComparisonOperator": "LE", "AttributeValueList": [[1]]}}, "LE"),
    ({"a": {"ComparisonOperator": "CONTAINS", "AttributeValueList": [[1]]}}, "CONTAINS"),
    ({"a": {"ComparisonOperator": "NOT_NULL", "AttributeValueList": [1]}}, "NOT_NULL"),
    ({"a": {"ComparisonOperator": "BETWEEN", "AttributeValueList": [1, "x"]}}, "same type"),
    ({"a": {"ComparisonOperator": "BETWEEN", "AttributeValueList": [3, 1]}}, "BETWEEN"),
    ({"a": {"ComparisonOperator": "IN", "AttributeValueList": []}}, "IN"),
])
def test_expected_validation(table_s, expected, match):
    p = rnd()
    table_s.put_item(Item={"p": p, "a": 1})
    alt_expect_error("ValidationException", table_s.update_item, Key={"p": p},
                     AttributeUpdates={"b": {"Value": 1, "Action": "PUT"}},
                     Expected=expected, match=match)
    assert table_s.get_item(Key={"p": p}, ConsistentRead=True)["Item"] == {"p": p, "a": 1}


# test_update_expected_1_exists_*: Exists with ComparisonOperator or without a Value
def test_expected_exists_conflicts(table_s):
    p = rnd()
    table_s.put_item(Item={"p": p, "a": 1})
    upd = {"b": {"Value": 1, "Action": "PUT"}}
    alt_expect_error("ValidationException", table_s.update_item, Key={"p": p},
                     AttributeUpdates=upd,
                     Expected={"a": {"Exists": True, "ComparisonOperator": "EQ",
                                     "AttributeValueList": [1]}})
    alt_expect_error("ValidationException", table_s.update_item, Key={"p": p},
                     AttributeUpdates=upd, Expected={"a": {"Exists": True}})
    alt_expect_error("ValidationException", table_s.update_item, Key={"p": p},
                     AttributeUpdates=upd, Expected={"a": {"Exists": False, "Value": 1}})
    alt_expect_error("ValidationException", table_s.update_item, Key={"p": p},
                     AttributeUpdates=upd,
                     Expected={"a": {"Value": 1, "ComparisonOperator": "EQ"}},
                     match="Cannot combine Value with ComparisonOperator")
    alt_expect_error("ValidationException", table_s.update_item, Key={"p": p},
                     AttributeUpdates=upd, Expected={"a": {}},
                     match="Value must be provided when Exists is true")
    # Exists=False, Exists=True with a Value work
    table_s.update_item(Key={"p": p}, AttributeUpdates=upd, Expected={"z": {"Exists": False}})
    table_s.update_item(Key={"p": p}, AttributeUpdates=upd,
                        Expected={"a": {"Exists": True, "Value": 1}})


# test_update_expected_empty_with_conditional_operator, test_update_expected_and_expression
def test_expected_request_conflicts(table_s):
    p = rnd()
    upd = {"b": {"Value": 1, "Action": "PUT"}}
    alt_expect_error("ValidationException", table_s.update_item, Key={"p": p},
                     AttributeUpdates=upd, Expected={}, ConditionalOperator="OR",
                     match="ConditionalOperator")
    alt_expect_error("ValidationException", table_s.update_item, Key={"p": p},
                     UpdateExpression="SET b = :v", ExpressionAttributeValues={":v": 1},
                     Expected={"a": {"Exists": False}}, match="UpdateExpression")


# ---- condition and filter expressions ----

# test_condition_expression.py::test_update_condition_between (lo > hi),
# test_update_condition_attribute_type (an unknown type)
def test_condition_static_checks(table_s):
    p = rnd()
    table_s.put_item(Item={"p": p, "a": 2})
    alt_expect_error("ValidationException", table_s.update_item, Key={"p": p},
                     UpdateExpression="SET b = :v", ConditionExpression="a BETWEEN :hi AND :lo",
                     ExpressionAttributeValues={":v": 1, ":lo": 1, ":hi": 3},
                     match="BETWEEN")
    alt_expect_error("ValidationException", table_s.update_item, Key={"p": p},
                     UpdateExpression="SET b = :v", ConditionExpression="attribute_type(a, :t)",
                     ExpressionAttributeValues={":v": 1, ":t": "DOG"},
                     match="Invalid attribute type name found; type: DOG")
    alt_expect_error("ValidationException", table_s.update_item, Key={"p": p},
                     UpdateExpression="SET b = :v", ConditionExpression="attribute_type(a, :t)",
                     ExpressionAttributeValues={":v": 1, ":t": 3})


# test_condition_expression.py::test_update_condition_ne: <> on a missing attribute is true
def test_ne_on_missing_attribute(table_s):
    p = rnd()
    table_s.put_item(Item={"p": p, "a": 2})
    table_s.update_item(Key={"p": p}, UpdateExpression="SET b = :v",
                        ConditionExpression="z <> :v", ExpressionAttributeValues={":v": 1})
    assert table_s.get_item(Key={"p": p}, ConsistentRead=True)["Item"]["b"] == 1
    table_s.update_item(Key={"p": p}, AttributeUpdates={"c": {"Value": 1, "Action": "PUT"}},
                        Expected={"z": {"ComparisonOperator": "NE", "AttributeValueList": [1]}})
    assert table_s.get_item(Key={"p": p}, ConsistentRead=True)["Item"]["c"] == 1


# ---- request checks ----

# test_query.py::test_query_attributes_to_get_duplicate, test_item.py::test_getitem_attributes_to_get_empty
def test_attributes_to_get_checks(table_s):
    p = rnd()
    table_s.put_item(Item={"p": p, "a": 1})
    alt_expect_error("ValidationException", table_s.get_item, Key={"p": p},
                     AttributesToGet=["a", "a"], match="Duplicate")
    alt_expect_error("ValidationException", table_s.get_item, Key={"p": p},
                     AttributesToGet=[])
    alt_expect_error("ValidationException", table_s.get_item, Key={"p": p},
                     AttributesToGet=["a"], ProjectionExpression="a")


# test_query.py::test_query_select (Select's rules)
def test_select_conflicts(table_sn, filtered):
    p, items = filtered
    kc = {"p": cond("EQ", p)}
    alt_expect_error("ValidationException", table_sn.query, KeyConditions=kc,
                     Select="SPECIFIC_ATTRIBUTES")
    alt_expect_error("ValidationException", table_sn.query, KeyConditions=kc,
                     Select="ALL_ATTRIBUTES", AttributesToGet=["x"])
    alt_expect_error("ValidationException", table_sn.query, KeyConditions=kc,
                     Select="COUNT", AttributesToGet=["x"])
    alt_expect_error("ValidationException", table_sn.query, KeyConditions=kc,
                     Select="ALL_PROJECTED_ATTRIBUTES")
    alt_expect_error("ValidationException", table_sn.query, KeyConditions=kc, Select="DOG")
    r = table_sn.query(KeyConditions=kc, Select="COUNT", ConsistentRead=True)
    assert r["Count"] == len(items) and "Items" not in r


# test_projection_expression.py::test_projection_expression_path_on_wrong_type,
# test_update_expression.py::test_update_expression_list_index_out_of_range
def test_nested_paths(table_s):
    p = rnd()
    table_s.put_item(Item={"p": p, "a": {"b": 1}, "l": [1, 2], "n": 3})
    got = table_s.get_item(Key={"p": p}, ConsistentRead=True,
                           ProjectionExpression="a[0], l.b, n.x")["Item"]
    assert "Item" not in got or got == {}
    got = table_s.get_item(Key={"p": p}, ConsistentRead=True,
                           ProjectionExpression="l[5], n[0], a.b")["Item"]
    assert got == {"a": {"b": 1}}
    # paths that no item can hold together conflict
    alt_expect_error("ValidationException", table_s.get_item, Key={"p": p},
                     ProjectionExpression="a.b, a[1]", match="conflict")
    # a list index past the end appends, on a non-list fails, REMOVE past the end does nothing
    table_s.update_item(Key={"p": p}, UpdateExpression="SET l[10] = :v",
                        ExpressionAttributeValues={":v": 9})
    assert table_s.get_item(Key={"p": p}, ConsistentRead=True)["Item"]["l"] == [1, 2, 9]
    alt_expect_error("ValidationException", table_s.update_item, Key={"p": p},
                     UpdateExpression="SET n[0] = :v", ExpressionAttributeValues={":v": 9},
                     match="document path")
    table_s.update_item(Key={"p": p}, UpdateExpression="REMOVE l[7]")
    assert table_s.get_item(Key={"p": p}, ConsistentRead=True)["Item"]["l"] == [1, 2, 9]


# test_returnvalues.py::test_update_item_returnvalues_nothing_changed and the like:
# no Attributes when there is nothing to return
def test_returnvalues_without_attributes(table_s):
    p = rnd()
    r = table_s.update_item(Key={"p": p}, UpdateExpression="REMOVE a", ReturnValues="ALL_NEW")
    assert "Attributes" not in r
    r = table_s.update_item(Key={"p": p}, UpdateExpression="REMOVE a", ReturnValues="ALL_OLD")
    assert "Attributes" not in r
    r = table_s.delete_item(Key={"p": p}, ReturnValues="ALL_OLD")
    assert "Attributes" not in r
    r = table_s.put_item(Item={"p": p, "a": 1}, ReturnValues="ALL_OLD")
    assert "Attributes" not in r
    r = table_s.update_item(Key={"p": p}, UpdateExpression="REMOVE z",
                            ReturnValues="UPDATED_OLD")
    assert "Attributes" not in r
    r = table_s.update_item(Key={"p": p}, UpdateExpression="SET a = :v",
                            ExpressionAttributeValues={":v": 2}, ReturnValues="UPDATED_OLD")
    assert r["Attributes"] == {"a": 1}


# ---- names, sizes, values ----

# test_item.py::test_attribute_allowed_chars: control and Latin-1 characters, NUL too
def test_attribute_allowed_chars(table_s):
    p = rnd()
    s = bytes(range(256)).decode("latin-1")
    for chars in ["abc", " ", "-\\\"'_.:/#&", "\x00", "a\x00b", s]:
        table_s.update_item(Key={"p": p},
                            AttributeUpdates={chars: {"Value": chars, "Action": "PUT"}})
        assert table_s.get_item(Key={"p": p}, ConsistentRead=True)["Item"][chars] == chars
    table_s.put_item(Item={"p": p, s: 1, "x\x00": 2})
    assert table_s.get_item(Key={"p": p}, ConsistentRead=True)["Item"] == \
        {"p": p, s: 1, "x\x00": 2}
    # and updates keep the names they do not touch
    table_s.update_item(Key={"p": p}, UpdateExpression="SET y = :v",
                        ExpressionAttributeValues={":v": 3})
    assert table_s.get_item(Key={"p": p}, ConsistentRead=True)["Item"] == \
        {"p": p, s: 1, "x\x00": 2, "y": 3}


# test_limits.py::test_limit_attribute_length_nonkey_good/_bad
def test_attribute_name_length(table_s):
    p = rnd()
    table_s.put_item(Item={"p": p, "a" * 65535: 1})
    alt_expect_error("ValidationException", table_s.put_item, Item={"p": p, "a" * 65536: 1},
                     match="must be less than 65536 bytes")


# test_limits.py::test_limit_item_size_max: DynamoDB's item size, names and values
def test_item_size_as_dynamodb_counts(table_s):
    p = rnd()
    blob = b"x" * 409500
    table_s.put_item(Item={"p": p, "b": blob})
    assert table_s.get_item(Key={"p": p}, ConsistentRead=True)["Item"]["b"].value == blob
    alt_expect_error("ValidationException", table_s.put_item,
                     Item={"p": p, "b": b"x" * 409600}, match="size")


# test_manual_requests.py::test_base64_missing_padding, test_base64_malformed and the
# UpdateItem ones; test_number.py::test_number_in_json: DynamoDB's SerializationException
def test_serialization_exceptions(dynamodb, table_b, table_s):
    srv = dynamodb.meta.client.meta.endpoint_url.rsplit(":", 1)[1]
    port = int(srv)
    for bad in ["YWJjZGVmZ2g", "YWJj??!!"]:
        r = alt_raw(port, "PutItem", {"TableName": table_b.name, "Item": {"p": {"B": bad}}})
        assert r.status == 400 and r.error_type == "SerializationException", r
        r = alt_raw(port, "PutItem", {"TableName": table_b.name,
                                      "Item": {"p": {"B": "YWJj"}, "v": {"B": bad}}})
        assert r.status == 400 and r.error_type == "SerializationException", r
        r = alt_raw(port, "UpdateItem", {"TableName": table_b.name, "Key": {"p": {"B": "YWJj"}},
                                         "UpdateExpression": "SET v = :v",
                                         "ExpressionAttributeValues": {":v": {"B": bad}}})
        assert r.status == 400 and r.error_type == "SerializationException", r
    for upd in [{"UpdateExpression": "SET a = :v",
                 "ExpressionAttributeValues": {":v": {"N": 123}}},
                {"UpdateExpression": "SET a = :v", "ConditionExpression": "a < :bad",
                 "ExpressionAttributeValues": {":v": {"N": "1"}, ":bad": {"N": 123}}}]:
        r = alt_raw(port, "UpdateItem", dict(TableName=table_s.name, Key={"p": {"S": "x"}},
                                             **upd))
        assert r.status == 400 and r.error_type == "SerializationException", r
    # a well-formed one still works
    r = alt_raw(port, "PutItem", {"TableName": table_b.name, "Item": {"p": {"B": "YWJj"}}})
    assert r.status == 200, r


# test_manual_requests.py::test_json_parse_error (the position, as 'at 1'),
# test_exceed_nested_level_a_little
def test_json_errors(dynamodb, table_s):
    port = int(dynamodb.meta.client.meta.endpoint_url.rsplit(":", 1)[1])
    r = alt_raw(port, "PutItem", "{broken json")
    assert r.status == 400 and r.error_type == "SerializationException", r
    assert r.message.endswith("at 1"), r
    nested = {}
    it = nested
    for _ in range(50):
        it["a"] = {}
        it = it["a"]
    e = alt_expect_error("SerializationException", table_s.put_item,
                         Item={"p": rnd(), "nested": nested})
    assert "nested" in alt_error(e)[1]


# test_query.py::test_query_reverse_longish, test_scan.py::test_scan_paging_missing_limit:
# a page ends after 1 MB read, and the next one resumes where it stopped
def test_page_ends_at_one_megabyte(dynamodb, table_sn):
    p = rnd()
    big = "x" * 10240
    n = 200
    with table_sn.batch_writer() as b:
        for i in range(n):
            b.put_item({"p": p, "c": i, "s": big})
    for forward in (True, False):
        r = table_sn.query(KeyConditions={"p": cond("EQ", p)}, ScanIndexForward=forward,
                           ConsistentRead=True)
        got = [i["c"] for i in r["Items"]]
        assert 0 < len(got) < n and "LastEvaluatedKey" in r
        want = list(range(n)) if forward else list(reversed(range(n)))
        assert got == want[:len(got)]
        rest = full(table_sn.query, KeyConditions={"p": cond("EQ", p)},
                    ScanIndexForward=forward, ConsistentRead=True)
        assert [i["c"] for i in rest] == want
    # a filter that drops everything still stops the page at 1 MB read
    r = table_sn.query(KeyConditions={"p": cond("EQ", p)}, ConsistentRead=True,
                       QueryFilter={"s": cond("EQ", "nothing")})
    assert r["Count"] == 0 and 0 < r["ScannedCount"] < n and "LastEvaluatedKey" in r
    t = alt_create_table(dynamodb, hash_key=("p", "N"))
    try:
        with t.batch_writer() as b:
            for i in range(300):
                b.put_item({"p": i, "s": big})
        r = t.scan(ConsistentRead=True)
        assert 0 < len(r["Items"]) < 300 and "LastEvaluatedKey" in r
        assert sorted(i["p"] for i in full(t.scan, ConsistentRead=True)) == list(range(300))
    finally:
        t.delete()


# test_scan.py::test_scan_parallel_with_exclusive_start_key
def test_scan_segment_start_key(table_sn):
    alt_expect_error("ValidationException", table_sn.scan, TotalSegments=1000000, Segment=0,
                     ExclusiveStartKey={"p": "0", "c": 0}, match="Exclusive")


# test_limits.py::test_deeply_nested_expression_4: DynamoDB's 300 operators
def test_too_many_not_operators(table_s):
    p = rnd()
    table_s.put_item(Item={"p": p, "a": 1, "b": 2})
    alt_expect_error("ValidationException", table_s.update_item, Key={"p": p},
                     UpdateExpression="SET z = :v", ConditionExpression="not " * 1000 + "a<b",
                     ExpressionAttributeValues={":v": 2},
                     match="ConditionExpression: The expression contains too many operators")


# test_table.py::test_table_creation_time: CreationDateTime has sub-second resolution
def test_creation_date_time(dynamodb):
    before = time.time()
    t = alt_create_table(dynamodb)
    try:
        created = t.creation_date_time.timestamp()
        assert before - 1 <= created <= time.time() + 1
        # (a whole second exactly: one chance in a million)
        assert created != int(created)
    finally:
        t.delete()

