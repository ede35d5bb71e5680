# SPDX-License-Identifier: BSD-3-Clause
"""Alternator endpoint: Query and Scan through boto3.

Query with KeyConditionExpression (=, <, <=, >, >=, BETWEEN, begins_with)
and the legacy KeyConditions, FilterExpression, ProjectionExpression,
ScanIndexForward=False, Select=COUNT, and Limit with pagination through
ExclusiveStartKey/LastEvaluatedKey collecting every item exactly once. Scan
with FilterExpression, Limit pagination and parallel Segment/TotalSegments
whose union is every item, without duplicates.
"""

from decimal import Decimal

import pytest

pytest.importorskip("boto3")

from conftest import alt_create_table, alt_expect_error  # noqa: E402

NQ = 30            # items in the queried partition
NSCAN = 150        # items in the scan table


@pytest.fixture(scope="module")
def qt(dynamodb):
    """p S hash, c N range: partition 'P' has c = 0..NQ-1 with x = c % 3,
    s = 's<c>', parity 'even'/'odd'; partition 'Q' has three items."""
    t = alt_create_table(dynamodb, range_key=("c", "N"))
    for c in range(NQ):
        t.put_item(Item={"p": "P", "c": c, "x": c % 3, "s": f"s{c:02}",
                         "parity": "odd" if c % 2 else "even"})
    for c in (-1, 0, 1):
        t.put_item(Item={"p": "Q", "c": c, "x": 100})
    yield t
    t.delete()


@pytest.fixture(scope="module")
def st(dynamodb):
    """p S hash, c S range, for begins_with and string order."""
    t = alt_create_table(dynamodb, range_key=("c", "S"))
    for c in ("apple", "apricot", "ap", "a", "banana", "b", "cherry", "Apple", "app\u00e9"):
        t.put_item(Item={"p": "fruit", "c": c})
    yield t
    t.delete()


@pytest.fixture(scope="module")
def scan_table(dynamodb):
    t = alt_create_table(dynamodb)
    for i in range(NSCAN):
        t.put_item(Item={"p": f"k{i:03}", "i": i, "mod": i % 5})
    yield t
    t.delete()


def q(table, expr, values, **kwargs):
    kwargs.setdefault("ConsistentRead", True)
    return table.query(KeyConditionExpression=expr, ExpressionAttributeValues=values, **kwargs)


def cs(items):
    return [int(i["c"]) for i in items]


def paginate(fn, limit, **kwargs):
    """Call fn(Limit=limit, ...) following LastEvaluatedKey; -> (items, pages)."""
    items, pages = [], 0
    start = None
    for _ in range(10000):
        args = dict(kwargs, Limit=limit)
        if start is not None:
            args["ExclusiveStartKey"] = start
        r = fn(**args)
        pages += 1
        assert len(r["Items"]) <= limit, f"{len(r['Items'])} items with Limit {limit}"
        assert r["Count"] == len(r["Items"])
        items += r["Items"]
        start = r.get("LastEvaluatedKey")
        if start is None:
            return items, pages
    pytest.fail("pagination did not end")


# --- Query ------------------------------------------------------------------------

def test_query_partition(qt):
    r = q(qt, "p = :p", {":p": "P"})
    assert cs(r["Items"]) == list(range(NQ))
    assert r["Count"] == NQ and r["ScannedCount"] == NQ
    assert "LastEvaluatedKey" not in r
    assert r["Items"][7] == {"p": "P", "c": 7, "x": 1, "s": "s07", "parity": "odd"}
    assert cs(q(qt, "p = :p", {":p": "Q"})["Items"]) == [-1, 0, 1]
    r = q(qt, "p = :p", {":p": "nosuch"})
    assert r["Items"] == [] and r["Count"] == 0


@pytest.mark.parametrize("cond,values,expected", [
    ("c = :v", {":v": 10}, [10]),
    ("c = :v", {":v": 1000}, []),
    ("c < :v", {":v": 10}, list(range(10))),
    ("c <= :v", {":v": 10}, list(range(11))),
    ("c > :v", {":v": 25}, list(range(26, NQ))),
    ("c >= :v", {":v": 25}, list(range(25, NQ))),
    ("c > :v", {":v": Decimal("24.5")}, list(range(25, NQ))),
    ("c BETWEEN :a AND :b", {":a": 5, ":b": 9}, list(range(5, 10))),
    ("c BETWEEN :a AND :b", {":a": 7, ":b": 7}, [7]),
    ("c < :v", {":v": -5}, []),
])
def test_query_sort_key_conditions(qt, cond, values, expected):
    r = q(qt, f"p = :p AND {cond}", dict(values, **{":p": "P"}))
    assert cs(r["Items"]) == expected
    # The same with the conditions the other way round and with names.
    r = q(qt, f"{cond.replace('c ', '#c ', 1)} AND #p = :p", dict(values, **{":p": "P"}),
          ExpressionAttributeNames={"#c": "c", "#p": "p"})
    assert cs(r["Items"]) == expected


def test_query_begins_with_and_string_order(st):
    def got(expr, values, **kw):
        return [i["c"] for i in q(st, expr, dict(values, **{":p": "fruit"}), **kw)["Items"]]
    # Strings sort by their UTF-8 bytes.
    assert got("p = :p", {}) == ["Apple", "a", "ap", "apple", "app\u00e9", "apricot", "b",
                                 "banana", "cherry"]
    assert got("p = :p AND begins_with(c, :x)", {":x": "ap"}) == \
        ["ap", "apple", "app\u00e9", "apricot"]
    assert got("p = :p AND begins_with(c, :x)", {":x": "app"}) == ["apple", "app\u00e9"]
    assert got("p = :p AND begins_with(c, :x)", {":x": "z"}) == []
    assert got("p = :p AND begins_with(c, :x)", {":x": "b"}, ScanIndexForward=False) == \
        ["banana", "b"]
    assert got("p = :p AND c BETWEEN :a AND :b", {":a": "ap", ":b": "b"}) == \
        ["ap", "apple", "app\u00e9", "apricot", "b"]


def test_number_sort_key_order(dynamodb):
    """N sort keys sort numerically (sign, magnitude, fraction, exponent),
    not as text."""
    t = alt_create_table(dynamodb, range_key=("c", "N"))
    try:
        nums = [Decimal(x) for x in ("-1e20", "-10", "-1.5", "-0.001", "0", "1e-100", "0.001",
                                     "0.5", "1", "1.01", "2", "9.99", "10", "100.5", "1e20",
                                     "99999999999999999999999999999999999999")]
        for i, n in enumerate(reversed(nums)):
            t.put_item(Item={"p": "n", "c": n, "i": i})
        got = [i["c"] for i in q(t, "p = :p", {":p": "n"})["Items"]]
        assert got == nums
        got = [i["c"] for i in q(t, "p = :p AND c BETWEEN :a AND :b",
                                 {":p": "n", ":a": Decimal("-1.5"), ":b": Decimal("1")})["Items"]]
        assert got == nums[2:9]
        got = [i["c"] for i in q(t, "p = :p AND c < :z", {":p": "n", ":z": 0},
                                 ScanIndexForward=False)["Items"]]
        assert got == list(reversed(nums[:4]))
    finally:
        t.delete()


def test_binary_sort_key_order(dynamodb):
    """B sort keys sort as unsigned bytes; begins_with works on them."""
    t = alt_create_table(dynamodb, range_key=("c", "B"))
    try:
        keys = [b"\x00", b"\x00\x00", b"\x01", b"\x7f", b"\x7f\xff", b"\x80", b"\xfe",
                b"\xff", b"\xff\x00"]
        for k in reversed(keys):
            t.put_item(Item={"p": "b", "c": k})
        got = [bytes(i["c"]) for i in q(t, "p = :p", {":p": "b"})["Items"]]
        assert got == keys
        got = [bytes(i["c"]) for i in q(t, "p = :p AND begins_with(c, :x)",
                                        {":p": "b", ":x": b"\x7f"})["Items"]]
        assert got == [b"\x7f", b"\x7f\xff"]
        got = [bytes(i["c"]) for i in q(t, "p = :p AND c > :x",
                                        {":p": "b", ":x": b"\x7f\xff"})["Items"]]
        assert got == keys[5:]
    finally:
        t.delete()


def test_query_reverse(qt):
    r = q(qt, "p = :p", {":p": "P"}, ScanIndexForward=False)
    assert cs(r["Items"]) == list(range(NQ - 1, -1, -1))
    r = q(qt, "p = :p AND c < :v", {":p": "P", ":v": 5}, ScanIndexForward=False)
    assert cs(r["Items"]) == [4, 3, 2, 1, 0]


def test_query_key_conditions_legacy(qt):
    r = qt.query(KeyConditions={"p": {"AttributeValueList": ["P"], "ComparisonOperator": "EQ"},
                                "c": {"AttributeValueList": [25], "ComparisonOperator": "GT"}},
                 ConsistentRead=True)
    assert cs(r["Items"]) == list(range(26, NQ))
    r = qt.query(KeyConditions={"p": {"AttributeValueList": ["P"], "ComparisonOperator": "EQ"},
                                "c": {"AttributeValueList": [3, 6],
                                      "ComparisonOperator": "BETWEEN"}},
                 ConsistentRead=True)
    assert cs(r["Items"]) == [3, 4, 5, 6]
    r = qt.query(KeyConditions={"p": {"AttributeValueList": ["Q"], "ComparisonOperator": "EQ"}},
                 ConsistentRead=True)
    assert cs(r["Items"]) == [-1, 0, 1]
    for op, args, expected in (("LT", [2], [0, 1]), ("LE", [1], [0, 1]), ("GE", [28], [28, 29]),
                               ("EQ", [5], [5])):
        r = qt.query(KeyConditions={"p": {"AttributeValueList": ["P"], "ComparisonOperator": "EQ"},
                                    "c": {"AttributeValueList": args, "ComparisonOperator": op}},
                     ConsistentRead=True)
        assert cs(r["Items"]) == expected, op


def test_query_filter_and_projection(qt):
    r = q(qt, "p = :p", {":p": "P", ":z": 0}, FilterExpression="x = :z")
    assert cs(r["Items"]) == list(range(0, NQ, 3))
    assert r["Count"] == NQ // 3 and r["ScannedCount"] == NQ
    r = q(qt, "p = :p", {":p": "P", ":o": "odd", ":s": "s1"},
          FilterExpression="parity = :o AND begins_with(s, :s)")
    assert cs(r["Items"]) == [11, 13, 15, 17, 19]
    r = q(qt, "p = :p AND c < :v", {":p": "P", ":v": 3}, ProjectionExpression="s, x")
    assert r["Items"] == [{"s": "s00", "x": 0}, {"s": "s01", "x": 1}, {"s": "s02", "x": 2}]
    r = q(qt, "p = :p AND c < :v", {":p": "P", ":v": 2}, ProjectionExpression="#c",
          ExpressionAttributeNames={"#c": "c"})
    assert r["Items"] == [{"c": 0}, {"c": 1}]
    # Legacy AttributesToGet goes with the legacy KeyConditions; DynamoDB
    # refuses it beside an expression, KeyConditionExpression too.
    r = qt.query(KeyConditions={"p": {"AttributeValueList": ["P"], "ComparisonOperator": "EQ"},
                                "c": {"AttributeValueList": [2], "ComparisonOperator": "LT"}},
                 AttributesToGet=["x"], ConsistentRead=True)
    assert r["Items"] == [{"x": 0}, {"x": 1}]
    alt_expect_error("ValidationException", qt.query, KeyConditionExpression="p = :p",
                     ExpressionAttributeValues={":p": "P"}, AttributesToGet=["x"],
                     match="Non-expression parameters: {AttributesToGet} Expression parameters: "
                           "{KeyConditionExpression}")


def test_query_select_count(qt):
    r = q(qt, "p = :p", {":p": "P"}, Select="COUNT")
    assert r["Count"] == NQ
    assert "Items" not in r
    r = q(qt, "p = :p", {":p": "P", ":one": 1}, Select="COUNT", FilterExpression="x = :one")
    assert r["Count"] == NQ // 3 and r["ScannedCount"] == NQ
    assert "Items" not in r
    r = q(qt, "p = :p", {":p": "P"}, Select="ALL_ATTRIBUTES", Limit=1)
    assert r["Items"] == [{"p": "P", "c": 0, "x": 0, "s": "s00", "parity": "even"}]


@pytest.mark.parametrize("limit", [1, 7, 10, NQ - 1, NQ, 1000])
@pytest.mark.parametrize("forward", [True, False])
def test_query_pagination(qt, limit, forward):
    items, pages = paginate(qt.query, limit, KeyConditionExpression="p = :p",
                            ExpressionAttributeValues={":p": "P"}, ConsistentRead=True,
                            ScanIndexForward=forward)
    expected = list(range(NQ)) if forward else list(range(NQ - 1, -1, -1))
    assert cs(items) == expected
    assert pages >= -(-NQ // limit)


def test_query_pagination_with_filter(qt):
    items, _ = paginate(qt.query, 4, KeyConditionExpression="p = :p",
                        ExpressionAttributeValues={":p": "P", ":z": 0}, FilterExpression="x = :z",
                        ConsistentRead=True)
    assert cs(items) == list(range(0, NQ, 3))


def test_query_errors(dynamodb_client, dynamodb, qt):
    client = dynamodb_client
    for expr, values in (("c = :v", {":v": 1}),                  # no hash key condition
                         ("p < :p", {":p": "P"}),                 # hash needs =
                         ("p = :p OR c = :v", {":p": "P", ":v": 1}),
                         ("p = :p AND x = :v", {":p": "P", ":v": 1}),   # not a key
                         ("p = :p AND c = :v AND c = :v", {":p": "P", ":v": 1}),
                         ("p = :p AND begins_with(c, :v)", {":p": "P", ":v": 1}),  # N key
                         ("p = :p AND c <> :v", {":p": "P", ":v": 1}),
                         ("p = :p", {":p": 5}),                   # wrong type
                         ("p = :p AND", {":p": "P"}),
                         ("p = :p", {":p": "P", ":unused": 1})):
        alt_expect_error("ValidationException", qt.query, KeyConditionExpression=expr,
                         ExpressionAttributeValues=values)
    alt_expect_error("ValidationException", qt.query)
    alt_expect_error("ValidationException", qt.query, KeyConditionExpression="p = :p",
                     ExpressionAttributeValues={":p": "P"}, Limit=0)
    alt_expect_error("ValidationException", qt.query, KeyConditionExpression="p = :p",
                     ExpressionAttributeValues={":p": "P"}, Select="NOPE")
    alt_expect_error("ValidationException", qt.query, KeyConditionExpression="p = :p",
                     ExpressionAttributeValues={":p": "P"},
                     KeyConditions={"p": {"AttributeValueList": ["P"],
                                          "ComparisonOperator": "EQ"}})
    alt_expect_error("ResourceNotFoundException", client.query, TableName="no_such_table_q",
                     KeyConditionExpression="p = :p",
                     ExpressionAttributeValues={":p": {"S": "P"}})


# --- Scan -------------------------------------------------------------------------

def keys_of(items):
    return [i["p"] for i in items]


ALL_KEYS = sorted(f"k{i:03}" for i in range(NSCAN))


def test_scan_all(scan_table):
    r = scan_table.scan(ConsistentRead=True)
    items = r["Items"]
    while "LastEvaluatedKey" in r:   # a server may page by size
        r = scan_table.scan(ConsistentRead=True, ExclusiveStartKey=r["LastEvaluatedKey"])
        items += r["Items"]
    assert sorted(keys_of(items)) == ALL_KEYS
    assert {i["p"]: i["i"] for i in items} == {f"k{i:03}": i for i in range(NSCAN)}


@pytest.mark.parametrize("limit", [1, 13, 50, NSCAN, 1000])
def test_scan_pagination(scan_table, limit):
    items, _ = paginate(scan_table.scan, limit, ConsistentRead=True)
    got = keys_of(items)
    assert len(got) == len(set(got)), "an item came twice"
    assert sorted(got) == ALL_KEYS


def test_scan_filter_projection_count(scan_table):
    expected = sorted(f"k{i:03}" for i in range(NSCAN) if i % 5 == 2)
    items, _ = paginate(scan_table.scan, 17, ConsistentRead=True, FilterExpression="#m = :two",
                        ExpressionAttributeNames={"#m": "mod"},
                        ExpressionAttributeValues={":two": 2})
    assert sorted(keys_of(items)) == expected
    r = scan_table.scan(ConsistentRead=True, FilterExpression="i < :v",
                        ExpressionAttributeValues={":v": 10}, ProjectionExpression="i")
    items = r["Items"]
    while "LastEvaluatedKey" in r:
        r = scan_table.scan(ConsistentRead=True, FilterExpression="i < :v",
                            ExpressionAttributeValues={":v": 10}, ProjectionExpression="i",
                            ExclusiveStartKey=r["LastEvaluatedKey"])
        items += r["Items"]
    assert sorted(int(i["i"]) for i in items) == list(range(10))
    assert all(set(i) == {"i"} for i in items)
    total = 0
    r = {"LastEvaluatedKey": None}
    while "LastEvaluatedKey" in r:
        kwargs = {"ExclusiveStartKey": r["LastEvaluatedKey"]} if r["LastEvaluatedKey"] else {}
        r = scan_table.scan(ConsistentRead=True, Select="COUNT", FilterExpression="#m = :z",
                            ExpressionAttributeNames={"#m": "mod"},
                            ExpressionAttributeValues={":z": 0}, **kwargs)
        assert "Items" not in r
        total += r["Count"]
    assert total == NSCAN // 5


def test_scan_filter_resolves_names_for_every_item(dynamodb):
    """#names resolve the same for the last item of a page as for the first,
    however many items and however long the names (each resolution used to
    take a copy of the name, until the op's buffer ran out and later items
    silently stopped matching)."""
    t = alt_create_table(dynamodb)
    long_name = "n" * 2000
    with t.batch_writer() as w:
        for i in range(60):
            w.put_item(Item={"p": f"r{i:02}", long_name: i % 2, "m": {long_name: 1}})
    r = t.scan(ConsistentRead=True, FilterExpression="#a = :one AND #m.#a = :one",
               ProjectionExpression="p, #m.#a",
               ExpressionAttributeNames={"#a": long_name, "#m": "m"},
               ExpressionAttributeValues={":one": 1})
    assert "LastEvaluatedKey" not in r
    assert sorted(i["p"] for i in r["Items"]) == [f"r{i:02}" for i in range(1, 60, 2)]
    assert all(i["m"] == {long_name: 1} for i in r["Items"])
    t.delete()


@pytest.mark.parametrize("total", [1, 2, 3, 4, 7])
def test_parallel_scan(scan_table, total):
    seen = []
    for seg in range(total):
        items, _ = paginate(scan_table.scan, 40, ConsistentRead=True, Segment=seg,
                            TotalSegments=total)
        seen += keys_of(items)
    assert len(seen) == len(set(seen)), "an item is in two segments"
    assert sorted(seen) == ALL_KEYS


def test_parallel_scan_segments_split(scan_table):
    """With 4 segments of 150 items, the work is actually split (no segment
    holds every item)."""
    sizes = []
    for seg in range(4):
        items, _ = paginate(scan_table.scan, 1000, Segment=seg, TotalSegments=4,
                            ConsistentRead=True)
        sizes.append(len(items))
    assert sum(sizes) == NSCAN
    assert max(sizes) < NSCAN, sizes


def test_scan_hash_range_pagination(qt):
    items, _ = paginate(qt.scan, 4, ConsistentRead=True)
    got = [(i["p"], int(i["c"])) for i in items]
    assert len(got) == len(set(got))
    assert sorted(got) == sorted([("P", c) for c in range(NQ)] + [("Q", c) for c in (-1, 0, 1)])
    # Within a partition a scan returns the rows in sort key order.
    assert [c for p, c in got if p == "P"] == list(range(NQ))


def test_scan_errors(scan_table):
    for kwargs in ({"Segment": 0}, {"TotalSegments": 2}, {"Segment": 2, "TotalSegments": 2},
                   {"Segment": -1, "TotalSegments": 2}, {"Segment": 0, "TotalSegments": 0},
                   {"Segment": 0, "TotalSegments": 1000001}, {"Limit": 0},
                   {"Select": "NOPE"}, {"FilterExpression": "i <"},
                   {"FilterExpression": "i = :v"},
                   {"FilterExpression": "i = :v", "ExpressionAttributeValues": {":v": 1, ":w": 2}},
                   {"ExclusiveStartKey": {"nokey": "x"}}):
        alt_expect_error("ValidationException", scan_table.scan, **kwargs)
