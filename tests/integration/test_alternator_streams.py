# SPDX-License-Identifier: BSD-3-Clause
"""Alternator Streams through boto3's `dynamodb` and `dynamodbstreams` clients.

Rewritten from the cases of ScyllaDB's test/alternator/test_streams.py (the
names in the comments are theirs): StreamSpecification in CreateTable and
UpdateTable and its errors, ListStreams, DescribeStream, GetShardIterator
and GetRecords, and the records every write path leaves (PutItem,
UpdateItem, DeleteItem, BatchWriteItem, conditional writes in each write
isolation mode, TTL expiry) with each StreamViewType. Where ScyllaDB's own
Alternator falls short of DynamoDB (xfails there: INSERT against MODIFY, no
record for a write that changes nothing, closed shards), these tests expect
what DynamoDB does. One server for the module; records are polled for with
a deadline, never waited for by sleeping.
"""

import time

import pytest

pytest.importorskip("boto3")

from boto3.dynamodb.types import TypeDeserializer  # noqa: E402

from conftest import (ALT_REGION, alt_boto_kwargs, alt_create_table,  # noqa: E402
                      alt_expect_error, alt_unique_table_name, start_alternator_server)

DEADLINE = 30.0
VIEW_TYPES = ["OLD_IMAGE", "NEW_IMAGE", "KEYS_ONLY", "NEW_AND_OLD_IMAGES"]


@pytest.fixture(scope="module")
def alternator_server(shardmark_bin, tmp_path_factory):
    """The module's server, with 128 MiB per shard: its change logs are bound
    to an eighth of that, which test_trimmed_records fills."""
    srv = start_alternator_server(shardmark_bin, tmp_path_factory.mktemp("streams"),
                                  "--memory", "256M")
    yield srv
    srv.kill()


@pytest.fixture(scope="module")
def streams(alternator_server):
    import boto3
    return boto3.session.Session().client("dynamodbstreams",
                                          **alt_boto_kwargs(alternator_server))


def stream_table(dynamodb, view, ck=True, indexed=False, **kwargs):
    keys = [("p", "S")] + ([("c", "S")] if ck else [])
    spec = {"StreamEnabled": True, "StreamViewType": view} if view else {"StreamEnabled": False}
    if indexed:
        # an LSI on k and a GSI on g: their key attributes are the items' too
        name = alt_unique_table_name("sidx")
        dynamodb.meta.client.create_table(
            TableName=name, BillingMode="PAY_PER_REQUEST", StreamSpecification=spec,
            KeySchema=[{"AttributeName": "p", "KeyType": "HASH"},
                       {"AttributeName": "c", "KeyType": "RANGE"}],
            AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"}
                                  for a in ("p", "c", "k", "g")],
            LocalSecondaryIndexes=[{"IndexName": "lsi", "KeySchema": [
                {"AttributeName": "p", "KeyType": "HASH"},
                {"AttributeName": "k", "KeyType": "RANGE"}],
                "Projection": {"ProjectionType": "ALL"}}],
            GlobalSecondaryIndexes=[{"IndexName": "gsi", "KeySchema": [
                {"AttributeName": "g", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"}}])
        return dynamodb.Table(name)
    return alt_create_table(dynamodb, hash_key=keys[0], range_key=keys[1] if ck else None,
                            StreamSpecification=spec, **kwargs)


def arn_of(streams, table):
    s = streams.list_streams(TableName=table.name)["Streams"]
    assert len(s) == 1 and s[0]["TableName"] == table.name
    return s[0]["StreamArn"]


def list_shards(streams, arn):
    # a small Limit exercises DescribeStream's paging (as list_shards() there)
    desc = streams.describe_stream(StreamArn=arn, Limit=1)["StreamDescription"]
    shards = [s["ShardId"] for s in desc["Shards"]]
    while "LastEvaluatedShardId" in desc:
        assert shards[-1] == desc["LastEvaluatedShardId"]
        desc = streams.describe_stream(StreamArn=arn, Limit=1,
                                       ExclusiveStartShardId=desc["LastEvaluatedShardId"]
                                       )["StreamDescription"]
        shards += [s["ShardId"] for s in desc["Shards"]]
    assert len(set(shards)) == len(shards)
    assert shards == sorted(shards)
    last = streams.describe_stream(StreamArn=arn, ExclusiveStartShardId=shards[-1])
    assert last["StreamDescription"]["Shards"] == []
    return shards


def iterators(streams, arn, kind="LATEST"):
    its = [streams.get_shard_iterator(StreamArn=arn, ShardId=s, ShardIteratorType=kind)
           ["ShardIterator"] for s in list_shards(streams, arn)]
    assert len(set(its)) == len(its)
    return its


def fetch(streams, its, out):
    nxt = []
    for it in its:
        r = streams.get_records(ShardIterator=it)
        if "NextShardIterator" in r:
            nxt.append(r["NextShardIterator"])
        out.extend(r["Records"])
    return nxt


def plain(image):
    d = TypeDeserializer()
    return {k: d.deserialize(v) for k, v in image.items()}


def check_events(expected, output, view):
    """compare_events() there: per key, in order; False while some are missing."""
    per_key = {}
    for e in expected:
        per_key.setdefault(tuple(sorted(e[1].items())), []).append(e)
    for rec in output:
        assert rec["eventSource"] == "aws:dynamodb"
        assert rec["awsRegion"] == ALT_REGION
        assert rec["eventVersion"] in ("1.0", "1.1")
        assert "eventID" in rec
        db = rec["dynamodb"]
        key = tuple(sorted(plain(db["Keys"]).items()))
        assert per_key.get(key), f"unexpected record {rec}"
        kind, _, old, new = per_key[key].pop(0)
        assert rec["eventName"] == kind, rec
        assert db["StreamViewType"] == view
        assert "ApproximateCreationDateTime" in db
        assert db["SequenceNumber"].isdecimal()
        assert db["SizeBytes"] > 0
        want_old = old if view in ("OLD_IMAGE", "NEW_AND_OLD_IMAGES") else None
        want_new = new if view in ("NEW_IMAGE", "NEW_AND_OLD_IMAGES") else None
        assert plain(db["OldImage"]) == want_old if want_old is not None \
            else "OldImage" not in db, rec
        assert plain(db["NewImage"]) == want_new if want_new is not None \
            else "NewImage" not in db, rec
    return all(not v for v in per_key.values())


def run_updates(dynamodb, streams, view, updates, ck=True, **kwargs):
    """do_test() there: the stream's records of updates(table, p, c) are the
    events it returns, per key and in order, and nothing else."""
    table = stream_table(dynamodb, view, ck=ck, **kwargs)
    try:
        arn = arn_of(streams, table)
        its = iterators(streams, arn)
        expected = updates(table, "pk" + alt_unique_table_name(), "ck")
        out = []
        end = time.time() + DEADLINE
        while True:
            its = fetch(streams, its, out)
            if check_events(expected, out, view):
                # and nothing more comes after the expected ones
                extra = []
                fetch(streams, its, extra)
                assert extra == []
                return out
            assert time.time() < end, f"missing records: got {out}"
            time.sleep(0.1)
    finally:
        table.delete()


# ---- StreamSpecification, ListStreams, DescribeStream ----

# test_list_streams_create, test_stream_specification
@pytest.mark.parametrize("view", VIEW_TYPES)
def test_create_with_stream(dynamodb, streams, view):
    name = alt_unique_table_name()
    r = dynamodb.meta.client.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "p", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "p", "AttributeType": "S"}],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": view})
    try:
        td = r["TableDescription"]
        assert td["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": view}
        arn, label = td["LatestStreamArn"], td["LatestStreamLabel"]
        s = streams.list_streams(TableName=name)["Streams"]
        assert s == [{"StreamArn": arn, "StreamLabel": label, "TableName": name}]
        desc = dynamodb.meta.client.describe_table(TableName=name)["Table"]
        assert desc["LatestStreamArn"] == arn and desc["LatestStreamLabel"] == label
        assert desc["StreamSpecification"]["StreamViewType"] == view
        # an UpdateTable that changes nothing of the stream describes it too
        up = dynamodb.meta.client.update_table(TableName=name, BillingMode="PAY_PER_REQUEST")
        assert up["TableDescription"]["LatestStreamArn"] == arn
        sd = streams.describe_stream(StreamArn=arn)["StreamDescription"]
        assert sd["StreamArn"] == arn and sd["StreamLabel"] == label
        assert sd["StreamStatus"] == "ENABLED" and sd["StreamViewType"] == view
        assert sd["TableName"] == name
        assert sd["KeySchema"] == [{"AttributeName": "p", "KeyType": "HASH"}]
        sh = sd["Shards"][0]
        assert len(sh["ShardId"]) <= 65
        assert sh["SequenceNumberRange"]["StartingSequenceNumber"].isdecimal()
        # open shards have no end; the shard count never changes, so no shard has a parent
        for sh in sd["Shards"]:
            assert "ParentShardId" not in sh
            assert "EndingSequenceNumber" not in sh["SequenceNumberRange"]
    finally:
        dynamodb.meta.client.delete_table(TableName=name)
    # the table's stream went with it
    alt_expect_error("ResourceNotFoundException", streams.describe_stream, StreamArn=arn)


# test_list_streams_alter
@pytest.mark.parametrize("view", VIEW_TYPES)
def test_enable_with_update_table(dynamodb, streams, view):
    table = stream_table(dynamodb, None)
    try:
        assert "LatestStreamArn" not in table.meta.client.describe_table(
            TableName=table.name)["Table"]
        assert streams.list_streams(TableName=table.name)["Streams"] == []
        r = table.meta.client.update_table(
            TableName=table.name,
            StreamSpecification={"StreamEnabled": True, "StreamViewType": view})
        assert r["TableDescription"]["StreamSpecification"]["StreamViewType"] == view
        assert arn_of(streams, table) == r["TableDescription"]["LatestStreamArn"]
    finally:
        table.delete()


# test_streams_change_type, test_streams_enable_on_enabled, test_streams_disable_on_disabled,
# test_create_streams_wrong_type
def test_update_table_errors(dynamodb, streams):
    table = stream_table(dynamodb, "KEYS_ONLY")
    plain_t = stream_table(dynamodb, None)
    c = dynamodb.meta.client
    try:
        for view in ("KEYS_ONLY", "OLD_IMAGE"):
            alt_expect_error("ValidationException", c.update_table, TableName=table.name,
                             StreamSpecification={"StreamEnabled": True,
                                                  "StreamViewType": view},
                             match="already has an enabled stream")
        alt_expect_error("ValidationException", c.update_table, TableName=plain_t.name,
                         StreamSpecification={"StreamEnabled": False},
                         match="no stream to disable")
        alt_expect_error("ValidationException", c.update_table, TableName=plain_t.name,
                         StreamSpecification={"StreamEnabled": True, "StreamViewType": "Fisk"})
        alt_expect_error("ValidationException", c.update_table, TableName=plain_t.name,
                         StreamSpecification={"StreamEnabled": True})
        alt_expect_error("ValidationException", c.update_table, TableName=plain_t.name,
                         StreamSpecification={"StreamViewType": "KEYS_ONLY"})
        # with an index change in the same request: refused, nothing half done
        alt_expect_error("ValidationException", c.update_table, TableName=plain_t.name,
                         StreamSpecification={"StreamEnabled": True,
                                              "StreamViewType": "KEYS_ONLY"},
                         AttributeDefinitions=[{"AttributeName": "g", "AttributeType": "S"}],
                         GlobalSecondaryIndexUpdates=[{"Create": {
                             "IndexName": "gi", "KeySchema": [{"AttributeName": "g",
                                                               "KeyType": "HASH"}],
                             "Projection": {"ProjectionType": "ALL"}}}])
        assert streams.list_streams(TableName=plain_t.name)["Streams"] == []
        assert "GlobalSecondaryIndexes" not in c.describe_table(TableName=plain_t.name)["Table"]
        alt_expect_error("ValidationException", c.create_table,
                         TableName=alt_unique_table_name(), BillingMode="PAY_PER_REQUEST",
                         KeySchema=[{"AttributeName": "p", "KeyType": "HASH"}],
                         AttributeDefinitions=[{"AttributeName": "p", "AttributeType": "S"}],
                         StreamSpecification={"StreamEnabled": True,
                                              "StreamViewType": "bulle"})
        # the stream's tag is internal: neither listed nor writable
        arn = c.describe_table(TableName=table.name)["Table"]["TableArn"]
        assert c.list_tags_of_resource(ResourceArn=arn)["Tags"] == []
        alt_expect_error("ValidationException", c.tag_resource, ResourceArn=arn,
                         Tags=[{"Key": "system:stream", "Value": "E KEYS_ONLY 1"}])
        alt_expect_error("ValidationException", c.untag_resource, ResourceArn=arn,
                         TagKeys=["system:stream"])
        assert arn_of(streams, table)
    finally:
        table.delete()
        plain_t.delete()


# test_list_streams_paged, test_list_streams_zero_limit, test_list_streams_empty,
# test_list_streams_with_nonexistent_last_stream
def test_list_streams_paging_and_errors(dynamodb, streams):
    tables = [stream_table(dynamodb, "KEYS_ONLY") for _ in range(3)]
    plain_t = stream_table(dynamodb, None)
    try:
        names = {t.name for t in tables}
        seen, start = [], None
        while True:
            kw = {"ExclusiveStartStreamArn": start} if start else {}
            r = streams.list_streams(Limit=1, **kw)
            assert len(r["Streams"]) <= 1
            seen += [s["TableName"] for s in r["Streams"]]
            if "LastEvaluatedStreamArn" not in r:
                break
            start = r["LastEvaluatedStreamArn"]
        assert len(seen) == len(set(seen))
        assert names <= set(seen)
        assert streams.list_streams(TableName=plain_t.name)["Streams"] == []
        alt_expect_error("ValidationException", streams.list_streams, Limit=0)
        alt_expect_error("ValidationException", streams.list_streams, Limit=101)
        alt_expect_error("ValidationException", streams.list_streams,
                         TableName=tables[0].name, ExclusiveStartStreamArn="kossaapaaasdaf")
        alt_expect_error("ResourceNotFoundException", streams.list_streams,
                         TableName="no_such_table_here")
    finally:
        for t in tables + [plain_t]:
            t.delete()


# test_describe_nonexistent_stream, test_describe_stream_with_nonexistent_last_shard,
# test_get_shard_iterator, test_get_shard_iterator_for_nonexistent_stream,
# test_get_shard_iterator_for_nonexistent_shard, test_get_records_nonexistent_iterator
def test_describe_and_iterator_errors(dynamodb, streams):
    table = stream_table(dynamodb, "KEYS_ONLY")
    try:
        arn = arn_of(streams, table)
        alt_expect_error("ValidationException", streams.describe_stream,
                         StreamArn="sdfadfsdfnlfkajakfgjalksfgklasjklasdjfklasdfasdfgasf")
        alt_expect_error("ResourceNotFoundException", streams.describe_stream,
                         StreamArn=arn.replace(table.name, table.name + "x"))
        alt_expect_error("ValidationException", streams.describe_stream, StreamArn=arn, Limit=0)
        r = streams.describe_stream(StreamArn=arn, ExclusiveStartShardId="zzzzzzzzzzzzzzsfasdga")
        assert r["StreamDescription"]["Shards"] == []
        shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]
        sid, seq = shard["ShardId"], shard["SequenceNumberRange"]["StartingSequenceNumber"]
        for kind in ("AT_SEQUENCE_NUMBER", "AFTER_SEQUENCE_NUMBER"):
            assert streams.get_shard_iterator(StreamArn=arn, ShardId=sid, ShardIteratorType=kind,
                                              SequenceNumber=seq)["ShardIterator"]
            alt_expect_error("ValidationException", streams.get_shard_iterator, StreamArn=arn,
                             ShardId=sid, ShardIteratorType=kind)
        for kind in ("TRIM_HORIZON", "LATEST"):
            assert streams.get_shard_iterator(StreamArn=arn, ShardId=sid,
                                              ShardIteratorType=kind)["ShardIterator"]
            alt_expect_error("ValidationException", streams.get_shard_iterator, StreamArn=arn,
                             ShardId=sid, ShardIteratorType=kind, SequenceNumber=seq)
        alt_expect_error("ValidationException", streams.get_shard_iterator,
                         StreamArn="sdfadsfsdfsdgdfsgsfdabadfbabdadsfsdfsdf", ShardId=sid,
                         ShardIteratorType="LATEST")
        alt_expect_error("ResourceNotFoundException", streams.get_shard_iterator, StreamArn=arn,
                         ShardId="semprinidfaasdasfsdvacsdcfsdsvsdvsdv",
                         ShardIteratorType="LATEST")
        alt_expect_error("ValidationException", streams.get_shard_iterator, StreamArn=arn,
                         ShardId=sid, ShardIteratorType="bulle", SequenceNumber=seq)
        alt_expect_error("ValidationException", streams.get_shard_iterator, StreamArn=arn,
                         ShardId=sid, ShardIteratorType="AT_SEQUENCE_NUMBER",
                         SequenceNumber="sdfsafglldfngjdafnasdflgnaldklkafdsgklnasdlv")
        alt_expect_error("ValidationException", streams.get_records,
                         ShardIterator="sdfsdfsgagaddafgagasgasgasdfasdfasdfasdfasdgasdasdg")
        it = streams.get_shard_iterator(StreamArn=arn, ShardId=sid,
                                        ShardIteratorType="LATEST")["ShardIterator"]
        alt_expect_error("ValidationException", streams.get_records, ShardIterator=it, Limit=0)
        alt_expect_error("ValidationException", streams.get_records, ShardIterator=it,
                         Limit=1001)
        # an iterator lives 15 minutes: one issued at the epoch is expired
        old = it[0] + "1" + it[it.index(":"):]
        alt_expect_error("ExpiredIteratorException", streams.get_records, ShardIterator=old)
    finally:
        table.delete()
    # the iterator of a table that is gone
    alt_expect_error("ResourceNotFoundException", streams.get_records, ShardIterator=it)


# ---- records ----

def updates_1(table, p, c):
    """do_updates_1() there: what DynamoDB records, and what it does not."""
    ev = []
    table.put_item(Item={"p": p, "c": c, "x": 2})
    ev.append(["INSERT", {"p": p, "c": c}, None, {"p": p, "c": c, "x": 2}])
    table.put_item(Item={"p": p, "c": c, "x": 2})  # the same item again: nothing
    table.put_item(Item={"p": p, "c": c, "y": 3})
    ev.append(["MODIFY", {"p": p, "c": c}, {"p": p, "c": c, "x": 2}, {"p": p, "c": c, "y": 3}])
    table.delete_item(Key={"p": p, "c": c})
    ev.append(["REMOVE", {"p": p, "c": c}, {"p": p, "c": c, "y": 3}, None])
    table.delete_item(Key={"p": p, "c": c})  # a missing item: nothing
    table.update_item(Key={"p": p, "c": c}, UpdateExpression="SET b = :v",
                      ExpressionAttributeValues={":v": 4})
    ev.append(["INSERT", {"p": p, "c": c}, None, {"p": p, "c": c, "b": 4}])
    table.update_item(Key={"p": p, "c": c}, UpdateExpression="SET x = :v",
                      ExpressionAttributeValues={":v": 5})
    ev.append(["MODIFY", {"p": p, "c": c}, {"p": p, "c": c, "b": 4},
               {"p": p, "c": c, "b": 4, "x": 5}])
    table.update_item(Key={"p": p, "c": c}, UpdateExpression="SET x = :v",
                      ExpressionAttributeValues={":v": 5})  # the same value: nothing
    table.meta.client.batch_write_item(RequestItems={table.name: [
        {"PutRequest": {"Item": {"p": p, "c": c, "x": 5}}}]})
    ev.append(["MODIFY", {"p": p, "c": c}, {"p": p, "c": c, "b": 4, "x": 5},
               {"p": p, "c": c, "x": 5}])
    table.meta.client.batch_write_item(RequestItems={table.name: [
        {"DeleteRequest": {"Key": {"p": p, "c": c}}}]})
    ev.append(["REMOVE", {"p": p, "c": c}, {"p": p, "c": c, "x": 5}, None])
    return ev


# test_streams_1_keys_only, _new_image, _old_image, _new_and_old_images (xfail in ScyllaDB)
@pytest.mark.parametrize("view", VIEW_TYPES)
def test_every_write(dynamodb, streams, view):
    run_updates(dynamodb, streams, view, updates_1)


def updates_images(table, p, c):
    """test_streams_new_and_old_images there: empty items, removed attributes."""
    ev = []
    k = {"p": p, "c": c}
    table.update_item(Key=k, UpdateExpression="SET x = :v", ExpressionAttributeValues={":v": 2})
    ev.append(["INSERT", k, None, dict(k, x=2)])
    table.update_item(Key=k, UpdateExpression="SET y = :v", ExpressionAttributeValues={":v": 3})
    ev.append(["MODIFY", k, dict(k, x=2), dict(k, x=2, y=3)])
    table.update_item(Key=k, UpdateExpression="REMOVE x, y")
    ev.append(["MODIFY", k, dict(k, x=2, y=3), dict(k)])
    table.update_item(Key=k, UpdateExpression="SET z = :v", ExpressionAttributeValues={":v": 4})
    ev.append(["MODIFY", k, dict(k), dict(k, z=4)])
    table.delete_item(Key=k)
    ev.append(["REMOVE", k, dict(k, z=4), None])
    # an UpdateItem with nothing to do creates the (empty) item
    table.update_item(Key=k)
    ev.append(["INSERT", k, None, dict(k)])
    # REMOVE on a missing item leaves it missing: nothing
    table.update_item(Key={"p": p, "c": c + "2"}, UpdateExpression="REMOVE q")
    return ev


# test_streams_new_image, test_streams_new_and_old_images, test_streams_updateitem_old_image,
# test_streams_updateitem_old_image_empty_item
@pytest.mark.parametrize("view", VIEW_TYPES)
def test_images(dynamodb, streams, view):
    run_updates(dynamodb, streams, view, updates_images)


# test_streams_putitem_no_ck_new_items_override_old, test_streams_putitem_deleteitem_no_ck
def test_no_clustering_key(dynamodb, streams):
    def updates(table, p, _):
        k = {"p": p}
        table.put_item(Item={"p": p, "a": 1})
        table.put_item(Item={"p": p, "b": 2})
        table.put_item(Item={"p": p, "a": 3, "b": 4})
        table.put_item(Item={"p": p})
        table.delete_item(Key=k)
        return [["INSERT", k, None, dict(k, a=1)], ["MODIFY", k, dict(k, a=1), dict(k, b=2)],
                ["MODIFY", k, dict(k, b=2), dict(k, a=3, b=4)],
                ["MODIFY", k, dict(k, a=3, b=4), dict(k)], ["REMOVE", k, dict(k), None]]
    run_updates(dynamodb, streams, "NEW_AND_OLD_IMAGES", updates, ck=False)


# test_streams_updateitem_old_image_lsi, test_streams_putitem_new_item_overrides_old_lsi
def test_with_indexes(dynamodb, streams):
    def updates(table, p, c):
        k = {"p": p, "c": c}
        table.update_item(Key=k, UpdateExpression="SET x = :x, k = :k",
                          ExpressionAttributeValues={":x": 2, ":k": "dog"})
        table.update_item(Key=k, UpdateExpression="SET y = :y",
                          ExpressionAttributeValues={":y": 3})
        table.put_item(Item=dict(k, g="gee"))
        return [["INSERT", k, None, dict(k, x=2, k="dog")],
                ["MODIFY", k, dict(k, x=2, k="dog"), dict(k, x=2, k="dog", y=3)],
                ["MODIFY", k, dict(k, x=2, k="dog", y=3), dict(k, g="gee")]]
    out = run_updates(dynamodb, streams, "NEW_AND_OLD_IMAGES", updates, indexed=True)
    assert len(out) == 3


# conditional writes in every write isolation mode (the LWT path records too)
@pytest.mark.parametrize("iso", ["forbid_rmw", "only_rmw_uses_lwt", "always_use_lwt", "unsafe_rmw"])
def test_isolation_modes(dynamodb, streams, iso):
    def updates(table, p, c):
        k = {"p": p, "c": c}
        table.put_item(Item=dict(k, v=1))
        ev = [["INSERT", k, None, dict(k, v=1)]]
        if iso != "forbid_rmw":
            table.put_item(Item=dict(k, v=2), ConditionExpression="v = :one",
                           ExpressionAttributeValues={":one": 1})
            ev.append(["MODIFY", k, dict(k, v=1), dict(k, v=2)])
            # a condition that fails writes nothing, so records nothing
            alt_expect_error("ConditionalCheckFailedException", table.put_item,
                             Item=dict(k, v=3), ConditionExpression="v = :one",
                             ExpressionAttributeValues={":one": 1})
            table.update_item(Key=k, UpdateExpression="ADD v :d",
                              ExpressionAttributeValues={":d": 5})
            ev.append(["MODIFY", k, dict(k, v=2), dict(k, v=7)])
            table.delete_item(Key=k, ConditionExpression="attribute_exists(v)")
            ev.append(["REMOVE", k, dict(k, v=7), None])
        table.meta.client.batch_write_item(RequestItems={table.name: [
            {"PutRequest": {"Item": dict(k, w=1)}}]})
        ev.append(["INSERT" if iso != "forbid_rmw" else "MODIFY", k,
                   None if iso != "forbid_rmw" else dict(k, v=1), dict(k, w=1)])
        return ev
    run_updates(dynamodb, streams, "NEW_AND_OLD_IMAGES", updates,
                Tags=[{"Key": "system:write_isolation", "Value": iso}])


# ---- reading ----

# test_streams_no_records, test_streams_last_result, test_streams_another_result
def test_read_one_then_nothing(dynamodb, streams):
    table = stream_table(dynamodb, "KEYS_ONLY")
    try:
        arn = arn_of(streams, table)
        its = iterators(streams, arn)
        r = streams.get_records(ShardIterator=its[0])
        assert r["Records"] == [] and "NextShardIterator" in r
        k = {"p": "one", "c": "x"}
        table.update_item(Key=k, UpdateExpression="SET x = :v", ExpressionAttributeValues={":v": 5})
        found = [(it, streams.get_records(ShardIterator=it)) for it in its]
        found = [(it, r) for it, r in found if r["Records"]]
        assert len(found) == 1
        r = found[0][1]
        assert len(r["Records"]) == 1 and r["Records"][0]["dynamodb"]["Keys"] == {
            "p": {"S": "one"}, "c": {"S": "x"}}
        r2 = streams.get_records(ShardIterator=r["NextShardIterator"])
        assert r2["Records"] == []
        # the same key again: the same shard, after the first record
        table.update_item(Key=k, UpdateExpression="SET x = :v", ExpressionAttributeValues={":v": 7})
        r3 = streams.get_records(ShardIterator=r2["NextShardIterator"])
        assert len(r3["Records"]) == 1
        assert r3["Records"][0]["dynamodb"]["Keys"]["p"] == {"S": "one"}
        assert int(r3["Records"][0]["dynamodb"]["SequenceNumber"]) > int(
            r["Records"][0]["dynamodb"]["SequenceNumber"])
    finally:
        table.delete()


# test_streams_at_sequence_number, test_streams_after_sequence_number,
# test_streams_trim_horizon, test_streams_starting_sequence_number, Limit
def test_iterator_kinds(dynamodb, streams):
    table = stream_table(dynamodb, "KEYS_ONLY")
    try:
        arn = arn_of(streams, table)
        k = {"p": "seq", "c": "x"}
        for v in range(3):
            table.put_item(Item=dict(k, v=v))
        shards = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]
        recs = []
        for sh in shards:
            it = streams.get_shard_iterator(
                StreamArn=arn, ShardId=sh["ShardId"], ShardIteratorType="AT_SEQUENCE_NUMBER",
                SequenceNumber=sh["SequenceNumberRange"]["StartingSequenceNumber"])["ShardIterator"]
            r = streams.get_records(ShardIterator=it)
            if r["Records"]:
                recs, sid = r["Records"], sh["ShardId"]
        assert [r["eventName"] for r in recs] == ["INSERT", "MODIFY", "MODIFY"]
        seqs = [r["dynamodb"]["SequenceNumber"] for r in recs]
        assert seqs == sorted(seqs, key=int)

        def read(kind, seq=None, **kw):
            args = {"SequenceNumber": seq} if seq else {}
            it = streams.get_shard_iterator(StreamArn=arn, ShardId=sid, ShardIteratorType=kind,
                                            **args)["ShardIterator"]
            return streams.get_records(ShardIterator=it, **kw)

        assert [r["dynamodb"]["SequenceNumber"] for r in read("AT_SEQUENCE_NUMBER", seqs[1])
                ["Records"]] == seqs[1:]
        assert [r["dynamodb"]["SequenceNumber"] for r in read("AFTER_SEQUENCE_NUMBER", seqs[1])
                ["Records"]] == seqs[2:]
        assert [r["dynamodb"]["SequenceNumber"] for r in read("TRIM_HORIZON")["Records"]] == seqs
        assert read("LATEST")["Records"] == []
        # Limit, and NextShardIterator going on from there
        r = read("TRIM_HORIZON", Limit=2)
        assert [x["dynamodb"]["SequenceNumber"] for x in r["Records"]] == seqs[:2]
        r = streams.get_records(ShardIterator=r["NextShardIterator"], Limit=2)
        assert [x["dynamodb"]["SequenceNumber"] for x in r["Records"]] == seqs[2:]
    finally:
        table.delete()


# test_streams_closed_read (xfail in ScyllaDB: a disabled stream stays readable here)
def test_disabled_stream_stays_readable(dynamodb, streams):
    table = stream_table(dynamodb, "KEYS_ONLY")
    c = dynamodb.meta.client
    try:
        arn = arn_of(streams, table)
        its = iterators(streams, arn)
        table.put_item(Item={"p": "closed", "c": "x"})
        c.update_table(TableName=table.name, StreamSpecification={"StreamEnabled": False})
        assert "LatestStreamArn" not in c.describe_table(TableName=table.name)["Table"]
        assert streams.describe_stream(StreamArn=arn)["StreamDescription"]["StreamStatus"] == \
            "DISABLED"
        assert arn_of(streams, table) == arn
        got = []
        for it in its:
            r = streams.get_records(ShardIterator=it)
            got += r["Records"]
            if r["Records"]:
                # at the end of a closed shard: no next iterator
                r = streams.get_records(ShardIterator=r["NextShardIterator"])
                assert r["Records"] == [] and "NextShardIterator" not in r
        assert len(got) == 1
        # closed shards end at their last record, the empty ones where they start
        shards = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]
        ends = []
        for sh in shards:
            rng = sh["SequenceNumberRange"]
            assert "ParentShardId" not in sh
            assert int(rng["EndingSequenceNumber"]) >= int(rng["StartingSequenceNumber"])
            ends.append(int(rng["EndingSequenceNumber"]) - int(rng["StartingSequenceNumber"]))
        seq = int(got[0]["dynamodb"]["SequenceNumber"])
        start = int(shards[0]["SequenceNumberRange"]["StartingSequenceNumber"])
        assert sorted(ends) == [0] * (len(shards) - 1) + [seq - start]
        # a write now leaves no record in the disabled stream
        table.put_item(Item={"p": "closed", "c": "y"})
        # enabled again: a new stream; the old one stays readable (DynamoDB keeps it a day)
        r = c.update_table(TableName=table.name,
                           StreamSpecification={"StreamEnabled": True,
                                                "StreamViewType": "NEW_IMAGE"})
        arn2 = r["TableDescription"]["LatestStreamArn"]
        assert arn2 != arn
        listed = streams.list_streams(TableName=table.name)["Streams"]
        assert sorted(x["StreamArn"] for x in listed) == sorted([arn, arn2])
        old = streams.describe_stream(StreamArn=arn)["StreamDescription"]
        assert old["StreamStatus"] == "DISABLED" and old["StreamViewType"] == "KEYS_ONLY"
        assert old["Shards"] == shards
        again = []
        for sh in old["Shards"]:
            it = streams.get_shard_iterator(StreamArn=arn, ShardId=sh["ShardId"],
                                            ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
            again += streams.get_records(ShardIterator=it)["Records"]
        assert [x["dynamodb"]["SequenceNumber"] for x in again] == \
            [x["dynamodb"]["SequenceNumber"] for x in got]
        # the new stream records the new writes, the old one none of them
        its2 = iterators(streams, arn2, "TRIM_HORIZON")
        table.put_item(Item={"p": "closed", "c": "z"})
        new = []
        fetch(streams, its2, new)
        assert len(new) == 1 and new[0]["dynamodb"]["NewImage"]["c"] == {"S": "z"}
        # disabled and enabled once more: the oldest goes, the last two stay
        c.update_table(TableName=table.name, StreamSpecification={"StreamEnabled": False})
        r = c.update_table(TableName=table.name,
                           StreamSpecification={"StreamEnabled": True,
                                                "StreamViewType": "KEYS_ONLY"})
        arn3 = r["TableDescription"]["LatestStreamArn"]
        listed = streams.list_streams(TableName=table.name)["Streams"]
        assert sorted(x["StreamArn"] for x in listed) == sorted([arn2, arn3])
        alt_expect_error("ResourceNotFoundException", streams.describe_stream, StreamArn=arn)
        assert streams.describe_stream(StreamArn=arn2)["StreamDescription"]["StreamStatus"] == \
            "DISABLED"
    finally:
        table.delete()


# TTL expiry: a REMOVE record from the service (DynamoDB's userIdentity)
def test_ttl_expiry_record(dynamodb, streams):
    table = stream_table(dynamodb, "NEW_AND_OLD_IMAGES")
    try:
        arn = arn_of(streams, table)
        its = iterators(streams, arn)
        table.meta.client.update_time_to_live(
            TableName=table.name,
            TimeToLiveSpecification={"AttributeName": "expiration", "Enabled": True})
        k = {"p": "ttl", "c": "x"}
        table.put_item(Item=dict(k, expiration=int(time.time()) - 60))
        table.delete_item(Key={"p": "user", "c": "x"})  # nothing: it never existed
        table.put_item(Item={"p": "user", "c": "x"})
        table.delete_item(Key={"p": "user", "c": "x"})
        out = []
        end = time.time() + 60
        while len([r for r in out if r["eventName"] == "REMOVE"]) < 2:
            assert time.time() < end, f"no TTL record: {out}"
            its = fetch(streams, its, out)
            time.sleep(0.2)
        removes = {plain(r["dynamodb"]["Keys"])["p"]: r for r in out if r["eventName"] == "REMOVE"}
        assert removes["ttl"]["userIdentity"] == {"Type": "Service",
                                                  "PrincipalId": "dynamodb.amazonaws.com"}
        assert plain(removes["ttl"]["dynamodb"]["OldImage"])["p"] == "ttl"
        assert "userIdentity" not in removes["user"]
    finally:
        table.delete()


# The log's byte bound: the oldest records go first, and an iterator into
# them says so (TrimmedDataAccessException); TRIM_HORIZON reads what is left.
def test_trimmed_records(dynamodb, streams):
    table = stream_table(dynamodb, "NEW_AND_OLD_IMAGES")
    try:
        arn = arn_of(streams, table)
        k = {"p": "big", "c": "x"}
        table.put_item(Item=dict(k, v="0" * 380000))
        first = None
        for sid in list_shards(streams, arn):
            it = streams.get_shard_iterator(StreamArn=arn, ShardId=sid,
                                            ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
            r = streams.get_records(ShardIterator=it)
            if r["Records"]:
                first, shard = r["Records"][0]["dynamodb"]["SequenceNumber"], sid
        assert first is not None
        # each record holds two images of 380 KB: 25 of them are past 16 MiB
        for i in range(1, 26):
            table.put_item(Item=dict(k, v=str(i % 10) * 380000))
        at = streams.get_shard_iterator(StreamArn=arn, ShardId=shard,
                                        ShardIteratorType="AT_SEQUENCE_NUMBER",
                                        SequenceNumber=first)["ShardIterator"]
        alt_expect_error("TrimmedDataAccessException", streams.get_records, ShardIterator=at)
        it = streams.get_shard_iterator(StreamArn=arn, ShardId=shard,
                                        ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        r = streams.get_records(ShardIterator=it, Limit=1)
        assert len(r["Records"]) == 1
        assert int(r["Records"][0]["dynamodb"]["SequenceNumber"]) > int(first)
        assert r["Records"][0]["eventName"] == "MODIFY"
        # the newest one is there, whole
        last = streams.get_shard_iterator(StreamArn=arn, ShardId=shard,
                                          ShardIteratorType="LATEST")["ShardIterator"]
        table.put_item(Item=dict(k, v="z"))
        r = streams.get_records(ShardIterator=last)
        assert plain(r["Records"][0]["dynamodb"]["NewImage"]) == dict(k, v="z")
        assert len(plain(r["Records"][0]["dynamodb"]["OldImage"])["v"]) == 380000
    finally:
        table.delete()
