# SPDX-License-Identifier: BSD-3-Clause
"""Alternator endpoint: what a hostile client tries, through boto3.

Tag keys that the stored JSON holds with escapes, through TagResource and
UntagResource (UBSan stopped on a memcpy(NULL, src, 0) there); many
concurrent clients creating, deleting and describing one table name on a
two-shard server, which must only ever get DynamoDB's answers.
"""

import threading

import pytest

pytest.importorskip("boto3")

from botocore.exceptions import ClientError  # noqa: E402

from conftest import (alt_client, alt_create_table, alt_error,  # noqa: E402
                      alt_unique_table_name, start_alternator_server)


@pytest.fixture(scope="module")
def two_shards(shardmark_bin, tmp_path_factory):
    srv = start_alternator_server(shardmark_bin, tmp_path_factory.mktemp("alt-hostile"), smp=2)
    yield srv
    srv.kill()


def tags_of(client, arn):
    got = client.list_tags_of_resource(ResourceArn=arn)
    return {t["Key"]: t["Value"] for t in got.get("Tags", [])}


def test_tags_with_escapes(two_shards):
    """boto3 sends non-ASCII as \\u escapes: a stored key that starts with
    one made merge_tags() call sm_json_str(.., NULL, 0, ..), which copied 0
    bytes to NULL before it found the escape."""
    from conftest import alt_resource
    dynamodb = alt_resource(two_shards)
    client = dynamodb.meta.client
    name = alt_unique_table_name("tagesc")
    # (" and \ are outside DynamoDB's tag alphabet: non-ASCII is escaped too)
    alt_create_table(dynamodb, name=name,
                     Tags=[{"Key": "\u00e9t\u00e9", "Value": "summer"},
                           {"Key": "q\u00fcote/", "Value": "\u2713"}])
    arn = client.describe_table(TableName=name)["Table"]["TableArn"]
    client.tag_resource(ResourceArn=arn, Tags=[{"Key": "plain", "Value": "p"}])
    assert tags_of(client, arn) == {"\u00e9t\u00e9": "summer", "q\u00fcote/": "\u2713",
                                    "plain": "p"}
    # The same escaped key again replaces the stored one instead of adding a twin.
    client.tag_resource(ResourceArn=arn, Tags=[{"Key": "\u00e9t\u00e9", "Value": "winter"}])
    client.untag_resource(ResourceArn=arn, TagKeys=["q\u00fcote/"])
    assert tags_of(client, arn) == {"\u00e9t\u00e9": "winter", "plain": "p"}
    client.untag_resource(ResourceArn=arn, TagKeys=["\u00e9t\u00e9"])
    assert tags_of(client, arn) == {"plain": "p"}
    client.delete_table(TableName=name)


THREADS = 12
ROUNDS = 25
EXPECTED = {"ResourceInUseException", "ResourceNotFoundException"}


def test_create_delete_describe_race(two_shards):
    """CreateTable was a CREATE KEYSPACE and then a CREATE TABLE: a DeleteTable
    of the same name in between dropped the keyspace, and about one
    CreateTable in five failed with "Keyspace 'alternator_...' does not
    exist". Now every answer is a success or DynamoDB's exception."""
    name = alt_unique_table_name("race")
    schema = [{"AttributeName": "p", "KeyType": "HASH"}]
    defs = [{"AttributeName": "p", "AttributeType": "S"}]
    unexpected, counts, lock = [], {}, threading.Lock()
    start = threading.Barrier(THREADS)

    def worker(i):
        client = alt_client(two_shards)
        start.wait()
        for r in range(ROUNDS):
            what = (i + r) % 3
            try:
                if what == 0:
                    client.create_table(TableName=name, KeySchema=schema,
                                        AttributeDefinitions=defs,
                                        BillingMode="PAY_PER_REQUEST")
                    got = "created"
                elif what == 1:
                    client.delete_table(TableName=name)
                    got = "deleted"
                else:
                    td = client.describe_table(TableName=name)["Table"]
                    assert td["TableName"] == name and td["KeySchema"] == schema, td
                    got = "described"
            except ClientError as e:
                got, msg = alt_error(e)
                if got not in EXPECTED:
                    with lock:
                        unexpected.append((what, got, msg))
            except Exception as e:  # noqa: BLE001 - any other failure is a finding
                with lock:
                    unexpected.append((what, type(e).__name__, str(e)))
                got = "error"
            with lock:
                counts[got] = counts.get(got, 0) + 1

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads), "a client hung"
    assert unexpected == [], f"answers other than DynamoDB's: {unexpected[:10]} ({counts})"
    assert counts.get("created", 0) > 0 and counts.get("deleted", 0) > 0, counts
    # Whatever won last, the table is coherent: described, listed and usable,
    # or gone everywhere; and it can be created and dropped once more.
    client = alt_client(two_shards)
    listed = name in client.list_tables()["TableNames"]
    try:
        client.describe_table(TableName=name)
        exists = True
    except ClientError as e:
        assert alt_error(e)[0] == "ResourceNotFoundException"
        exists = False
    assert listed == exists
    if exists:
        client.put_item(TableName=name, Item={"p": {"S": "x"}})
        client.delete_table(TableName=name)
    client.create_table(TableName=name, KeySchema=schema, AttributeDefinitions=defs,
                        BillingMode="PAY_PER_REQUEST")
    client.put_item(TableName=name, Item={"p": {"S": "y"}})
    assert client.get_item(TableName=name, Key={"p": {"S": "y"}})["Item"] == {"p": {"S": "y"}}
    client.delete_table(TableName=name)


# --- fixed arrays that a request's counts used to overrun or cut short -------


@pytest.fixture(scope="module")
def wide_table(two_shards):
    from conftest import alt_resource
    dynamodb = alt_resource(two_shards)
    table = alt_create_table(dynamodb, name=alt_unique_table_name("wide"))
    yield table
    table.delete()


LONG = "x" * 200  # an attribute name that fills 16 KiB of copies in 80 items


def test_scan_filter_on_placeholder_every_item(two_shards, wide_table):
    """Every use of #n copied its name into a 16 KiB buffer: a Scan filter
    on #n ran out after about 80 items of a 200-character name, and every
    later item read as lacking the attribute (silently filtered out)."""
    client = alt_client(two_shards)
    with wide_table.batch_writer() as bw:
        for i in range(400):
            bw.put_item(Item={"p": f"k{i}", LONG: 1, "other": 2})
    n, kw = 0, {}
    while True:
        r = client.scan(TableName=wide_table.name, FilterExpression="#a = :v",
                        ExpressionAttributeNames={"#a": LONG},
                        ExpressionAttributeValues={":v": {"N": "1"}}, **kw)
        n += r["Count"]
        if "LastEvaluatedKey" not in r:
            break
        kw = {"ExclusiveStartKey": r["LastEvaluatedKey"]}
    assert n == 400
    r = client.scan(TableName=wide_table.name, ProjectionExpression="#a",
                    ExpressionAttributeNames={"#a": LONG})
    assert r["Count"] == 400 and all(list(it) == [LONG] for it in r["Items"])


def test_projection_of_many_paths(two_shards, wide_table):
    """A ProjectionExpression of more than 64 paths returned the first 64."""
    client = alt_client(two_shards)
    item = {"p": {"S": "proj"}}
    item.update({f"a{i}": {"N": str(i)} for i in range(300)})
    item["m"] = {"M": {f"f{i}": {"N": str(i)} for i in range(100)}}
    client.put_item(TableName=wide_table.name, Item=item)
    proj = ", ".join([f"a{i}" for i in range(300)] + [f"m.f{i}" for i in range(0, 100, 2)])
    got = client.get_item(TableName=wide_table.name, Key={"p": {"S": "proj"}},
                          ProjectionExpression=proj)["Item"]
    assert sorted(got) == sorted([f"a{i}" for i in range(300)] + ["m"])
    assert sorted(got["m"]["M"]) == sorted(f"f{i}" for i in range(0, 100, 2))
    r = client.scan(TableName=wide_table.name, ProjectionExpression=proj,
                    FilterExpression="p = :p", ExpressionAttributeValues={":p": {"S": "proj"}})
    assert r["Items"] == [got]


def test_update_wide_items(two_shards, wide_table):
    """An item of more than 1024 attributes could not be updated (the
    working set was a fixed array: "invalid update"); UPDATED_NEW named the
    first 64 actions only; more than 64 REMOVE l[i] took the rest out in the
    wrong order (each removal shifting the next)."""
    client = alt_client(two_shards)
    key = {"p": {"S": "upd"}}
    item = dict(key)
    item.update({f"b{i}": {"N": str(i)} for i in range(1500)})
    item["l"] = {"L": [{"N": str(i)} for i in range(200)]}
    client.put_item(TableName=wide_table.name, Item=item)
    sets = ", ".join(f"b{i} = :v" for i in range(100))
    r = client.update_item(TableName=wide_table.name, Key=key, UpdateExpression=f"SET {sets}",
                           ExpressionAttributeValues={":v": {"N": "-1"}},
                           ReturnValues="UPDATED_NEW")
    assert sorted(r["Attributes"]) == sorted(f"b{i}" for i in range(100))
    removes = ", ".join(f"l[{i}]" for i in range(0, 200, 2))  # 100 of them
    client.update_item(TableName=wide_table.name, Key=key, UpdateExpression=f"REMOVE {removes}")
    got = client.get_item(TableName=wide_table.name, Key=key)["Item"]
    assert [int(x["N"]) for x in got["l"]["L"]] == list(range(1, 200, 2))
    assert len(got) == 1 + 1500 + 1
    assert got["b99"] == {"N": "-1"} and got["b100"] == {"N": "100"}


def test_unused_placeholders_past_256(two_shards, wide_table):
    """Only the first 256 ExpressionAttributeNames were checked for use: an
    unused one after them was accepted. Thousands unused are listed at once."""
    from conftest import alt_expect_error
    client = alt_client(two_shards)
    names = {f"#n{i}": f"a{i}" for i in range(300)}
    alt_expect_error("ValidationException", client.get_item, TableName=wide_table.name,
                     Key={"p": {"S": "proj"}}, ProjectionExpression=", ".join(list(names)[:299]),
                     ExpressionAttributeNames=names, match=r"unused in expressions: keys: \{#n299\}")
    many = {f"#u{i}": "a" for i in range(20000)}
    many["#a"] = "a0"
    alt_expect_error("ValidationException", client.get_item, TableName=wide_table.name,
                     Key={"p": {"S": "proj"}}, ProjectionExpression="#a",
                     ExpressionAttributeNames=many, match="unused in expressions")


def test_batch_write_many_tables(two_shards):
    """A BatchWriteItem of 25 writes over 20 tables is valid DynamoDB; it was
    refused for naming more than 16 tables."""
    client = alt_client(two_shards)
    names = [alt_unique_table_name("bt") for _ in range(20)]
    for n in names:
        client.create_table(TableName=n, KeySchema=[{"AttributeName": "p", "KeyType": "HASH"}],
                            AttributeDefinitions=[{"AttributeName": "p", "AttributeType": "S"}],
                            BillingMode="PAY_PER_REQUEST")
    req = {n: [{"PutRequest": {"Item": {"p": {"S": f"{i}"}}}}] for i, n in enumerate(names)}
    req[names[0]] += [{"PutRequest": {"Item": {"p": {"S": f"x{i}"}}}} for i in range(5)]
    assert client.batch_write_item(RequestItems=req)["UnprocessedItems"] == {}
    for i, n in enumerate(names):
        assert client.get_item(TableName=n, Key={"p": {"S": f"{i}"}})["Item"] == \
            {"p": {"S": f"{i}"}}
        client.delete_table(TableName=n)
