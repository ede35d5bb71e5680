# SPDX-License-Identifier: BSD-3-Clause
"""Alternator endpoint: BatchWriteItem and BatchGetItem through boto3.

BatchWriteItem with 25 puts, with puts and deletes mixed, across two tables
and through boto3's batch_writer; BatchGetItem with 100 keys, a projection,
missing keys and two tables; nothing unprocessed; and the batch errors
(too many items, duplicate keys, a bad item, a missing table), after which
no item of the refused batch was written.
"""

import pytest

pytest.importorskip("boto3")

from conftest import alt_create_table, alt_expect_error  # noqa: E402


@pytest.fixture(scope="module")
def t1(dynamodb):
    t = alt_create_table(dynamodb)
    yield t
    t.delete()


@pytest.fixture(scope="module")
def t2(dynamodb):
    t = alt_create_table(dynamodb, hash_key=("h", "N"), range_key=("r", "S"))
    yield t
    t.delete()


def get(table, k):
    return table.get_item(Key=k, ConsistentRead=True).get("Item")


def put_req(item):
    return {"PutRequest": {"Item": item}}


def del_req(k):
    return {"DeleteRequest": {"Key": k}}


def test_batch_write_25_puts(dynamodb, t1):
    items = [{"p": f"w25_{i}", "v": i, "blob": b"x" * i, "tags": {f"t{i}"}} for i in range(25)]
    r = dynamodb.batch_write_item(RequestItems={t1.name: [put_req(i) for i in items]})
    assert r["UnprocessedItems"] == {}
    for item in items:
        assert get(t1, {"p": item["p"]}) == item


def test_batch_write_put_and_delete(dynamodb, t1, t2):
    for i in range(10):
        t1.put_item(Item={"p": f"pd_{i}", "old": True})
    reqs = [del_req({"p": f"pd_{i}"}) for i in range(0, 10, 2)]
    reqs += [put_req({"p": f"pd_{i}", "new": i}) for i in range(1, 10, 2)]
    reqs += [put_req({"p": f"pd_new_{i}"}) for i in range(5)]
    reqs += [del_req({"p": "pd_never_existed"})]
    r2 = [put_req({"h": i, "r": "x", "v": "t2"}) for i in range(5)]
    r = dynamodb.batch_write_item(RequestItems={t1.name: reqs, t2.name: r2})
    assert r["UnprocessedItems"] == {}
    for i in range(10):
        got = get(t1, {"p": f"pd_{i}"})
        if i % 2 == 0:
            assert got is None, f"pd_{i} should be deleted"
        else:
            assert got == {"p": f"pd_{i}", "new": i}, "a put replaces the whole item"
    for i in range(5):
        assert get(t1, {"p": f"pd_new_{i}"}) == {"p": f"pd_new_{i}"}
        assert get(t2, {"h": i, "r": "x"}) == {"h": i, "r": "x", "v": "t2"}


def test_batch_writer(t1):
    with t1.batch_writer() as bw:
        for i in range(60):
            bw.put_item(Item={"p": f"bw_{i}", "i": i})
    for i in (0, 24, 25, 59):
        assert get(t1, {"p": f"bw_{i}"}) == {"p": f"bw_{i}", "i": i}
    with t1.batch_writer() as bw:
        for i in range(60):
            bw.delete_item(Key={"p": f"bw_{i}"})
    assert all(get(t1, {"p": f"bw_{i}"}) is None for i in (0, 30, 59))


def test_batch_get_100_keys(dynamodb, t1, t2):
    with t1.batch_writer() as bw:
        for i in range(80):
            bw.put_item(Item={"p": f"g_{i}", "i": i, "extra": "e" * 10, "m": {"x": i}})
    with t2.batch_writer() as bw:
        for i in range(15):
            bw.put_item(Item={"h": i, "r": "g", "w": str(i)})
    keys1 = [{"p": f"g_{i}"} for i in range(80)] + [{"p": f"g_missing_{i}"} for i in range(5)]
    keys2 = [{"h": i, "r": "g"} for i in range(15)]
    assert len(keys1) + len(keys2) == 100
    r = dynamodb.batch_get_item(RequestItems={t1.name: {"Keys": keys1, "ConsistentRead": True},
                                              t2.name: {"Keys": keys2, "ConsistentRead": True}})
    assert r.get("UnprocessedKeys", {}) == {}
    got1 = sorted(r["Responses"][t1.name], key=lambda it: int(it["i"]))
    assert got1 == [{"p": f"g_{i}", "i": i, "extra": "e" * 10, "m": {"x": i}} for i in range(80)]
    got2 = sorted(r["Responses"][t2.name], key=lambda it: int(it["h"]))
    assert got2 == [{"h": i, "r": "g", "w": str(i)} for i in range(15)]


def test_batch_get_projection(dynamodb, t1):
    with t1.batch_writer() as bw:
        for i in range(10):
            bw.put_item(Item={"p": f"pr_{i}", "i": i, "m": {"x": i, "y": "why"}, "drop": "d"})
    keys = [{"p": f"pr_{i}"} for i in range(10)]
    r = dynamodb.batch_get_item(RequestItems={t1.name: {
        "Keys": keys, "ProjectionExpression": "#i, m.x", "ExpressionAttributeNames": {"#i": "i"},
        "ConsistentRead": True}})
    assert r.get("UnprocessedKeys", {}) == {}
    got = sorted(r["Responses"][t1.name], key=lambda it: int(it["i"]))
    assert got == [{"i": i, "m": {"x": i}} for i in range(10)]
    r = dynamodb.batch_get_item(RequestItems={t1.name: {
        "Keys": keys[:3], "AttributesToGet": ["p"], "ConsistentRead": True}})
    assert sorted(i["p"] for i in r["Responses"][t1.name]) == ["pr_0", "pr_1", "pr_2"]
    assert all(set(i) == {"p"} for i in r["Responses"][t1.name])
    # Only missing keys: an empty list for the table.
    r = dynamodb.batch_get_item(RequestItems={t1.name: {"Keys": [{"p": "nope"}]}})
    assert r["Responses"].get(t1.name, []) == []


def test_batch_write_errors(dynamodb, t1, t2):
    cases = [
        # 26 requests
        {t1.name: [put_req({"p": f"e26_{i}"}) for i in range(26)]},
        # the same key twice (put+put, put+delete)
        {t1.name: [put_req({"p": "edup"}), put_req({"p": "edup", "x": 1})]},
        {t1.name: [put_req({"p": "edup2"}), del_req({"p": "edup2"})]},
        # one bad item spoils the batch
        {t1.name: [put_req({"p": "egood"}), put_req({"p": 5})]},
        {t1.name: [put_req({"p": "egood"}), put_req({"q": "no key"})]},
        {t1.name: [put_req({"p": "egood"}), put_req({"p": "ebad", "s": set()})]},
        {t1.name: [put_req({"p": "egood"})], t2.name: [put_req({"h": 1})]},
        # no requests at all / an empty list
        {},
        {t1.name: []},
    ]
    for req in cases:
        alt_expect_error("ValidationException", dynamodb.batch_write_item, RequestItems=req)
    for k in ("e26_0", "e26_25", "edup", "edup2", "egood", "ebad"):
        assert get(t1, {"p": k}) is None, f"{k} written by a refused batch"
    alt_expect_error("ResourceNotFoundException", dynamodb.batch_write_item,
                     RequestItems={"no_such_table_b": [put_req({"p": "x"})]})
    alt_expect_error("ResourceNotFoundException", dynamodb.batch_write_item,
                     RequestItems={"no_such_table_b": [put_req({"p": "x"})],
                                   t1.name: [put_req({"p": "enf"})]})
    assert get(t1, {"p": "enf"}) is None


def test_batch_get_errors(dynamodb, t1):
    for req in ({t1.name: {"Keys": [{"p": f"x{i}"} for i in range(101)]}},
                {t1.name: {"Keys": [{"p": "same"}, {"p": "same"}]}},
                {t1.name: {"Keys": [{"p": 1}]}},
                {t1.name: {"Keys": [{"p": "x", "extra": "y"}]}},
                {t1.name: {"Keys": []}},
                {t1.name: {"Keys": [{"p": "x"}], "ProjectionExpression": "a",
                           "ExpressionAttributeNames": {"#unused": "b"}}},
                {}):
        alt_expect_error("ValidationException", dynamodb.batch_get_item, RequestItems=req)
    alt_expect_error("ResourceNotFoundException", dynamodb.batch_get_item,
                     RequestItems={"no_such_table_b": {"Keys": [{"p": "x"}]}})
