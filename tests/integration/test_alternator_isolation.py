# SPDX-License-Identifier: BSD-3-Clause
"""Alternator endpoint: write isolation modes.

Both ways of choosing the mode: the server default
(--alternator-write-isolation, one server per mode, full names and
abbreviations) and the per-table tag system:write_isolation (at CreateTable
and through TagResource/UntagResource), each overriding the other. In
forbid_rmw exactly the read-modify-write requests (a condition, an update
that reads, old values returned, Expected, AttributeUpdates ADD) are refused
with a ValidationException about the write isolation policy, leaving the
item alone, while plain writes, batches and reads work; unsafe,
always_use_lwt and only_rmw_uses_lwt run them. Invalid modes are refused.
Under always_use_lwt (and only_rmw_uses_lwt, for RMW) 8 threads doing
conditional and unconditional increments lose no update.
"""

import threading

import pytest

pytest.importorskip("boto3")

from botocore.exceptions import ClientError  # noqa: E402

from conftest import (alt_client, alt_create_table, alt_error, alt_expect_error,  # noqa: E402
                      alt_resource, alt_unique_table_name, start_alternator_server)

RMW_FORBIDDEN = r"write isolation policy"
TAG = "system:write_isolation"


def canonical(mode):
    return {"f": "forbid_rmw", "u": "unsafe", "a": "always_use_lwt",
            "o": "only_rmw_uses_lwt"}[mode[0]]


def get(table, k):
    return table.get_item(Key=k, ConsistentRead=True).get("Item")


BASE = {"a": 1, "m": {"x": 1}, "s": {"x", "y"}}


def rmw_cases(table, k):
    """(label, request, item expected after it ran, Attributes expected or
    None) for requests that need a read before the write."""
    def upd(expr, values=None, **kw):
        if values:
            kw["ExpressionAttributeValues"] = values
        return lambda: table.update_item(Key=k, UpdateExpression=expr, **kw)
    base = dict(k, **BASE)
    return [
        ("PutItem ConditionExpression",
         lambda: table.put_item(Item=dict(k, a=2), ConditionExpression="a = :old",
                                ExpressionAttributeValues={":old": 1}),
         dict(k, a=2), None),
        ("PutItem ReturnValues ALL_OLD",
         lambda: table.put_item(Item=dict(k, a=5), ReturnValues="ALL_OLD"), dict(k, a=5), base),
        ("PutItem Expected",
         lambda: table.put_item(Item=dict(k, a=6), Expected={"a": {"Value": 1}}),
         dict(k, a=6), None),
        ("UpdateItem SET a = a + :one", upd("SET a = a + :one", {":one": 1}),
         dict(base, a=2), None),
        ("UpdateItem ADD", upd("ADD a :one", {":one": 1}), dict(base, a=2), None),
        ("UpdateItem SET nested path", upd("SET m.y = :v", {":v": 2}),
         dict(base, m={"x": 1, "y": 2}), None),
        ("UpdateItem DELETE from set", upd("DELETE s :v", {":v": {"x"}}),
         dict(base, s={"y"}), None),
        ("UpdateItem if_not_exists", upd("SET b = if_not_exists(b, :v)", {":v": 3}),
         dict(base, b=3), None),
        ("UpdateItem ConditionExpression", upd("SET a = :v", {":v": 7, ":one": 1},
                                               ConditionExpression="a = :one"),
         dict(base, a=7), None),
        ("UpdateItem ReturnValues ALL_NEW", upd("SET a = :v", {":v": 7}, ReturnValues="ALL_NEW"),
         dict(base, a=7), dict(base, a=7)),
        ("UpdateItem ReturnValues ALL_OLD", upd("SET a = :v", {":v": 7}, ReturnValues="ALL_OLD"),
         dict(base, a=7), base),
        ("UpdateItem ReturnValues UPDATED_OLD",
         upd("SET a = :v", {":v": 7}, ReturnValues="UPDATED_OLD"), dict(base, a=7), {"a": 1}),
        ("UpdateItem Expected",
         lambda: table.update_item(Key=k, AttributeUpdates={"a": {"Value": 3, "Action": "PUT"}},
                                   Expected={"a": {"Value": 1}}),
         dict(base, a=3), None),
        ("UpdateItem AttributeUpdates ADD",
         lambda: table.update_item(Key=k, AttributeUpdates={"a": {"Value": 1, "Action": "ADD"}}),
         dict(base, a=2), None),
        ("DeleteItem ReturnValues ALL_OLD",
         lambda: table.delete_item(Key=k, ReturnValues="ALL_OLD"), None, base),
        ("DeleteItem ConditionExpression",
         lambda: table.delete_item(Key=k, ConditionExpression="a = :one",
                                   ExpressionAttributeValues={":one": 1}), None, None),
    ]


def plain_cases(table, k):
    """Writes that need no read: allowed in every mode."""
    def upd(expr, values=None, **kw):
        if values:
            kw["ExpressionAttributeValues"] = values
        return lambda: table.update_item(Key=k, UpdateExpression=expr, **kw)
    base = dict(k, **BASE)
    return [
        ("PutItem", lambda: table.put_item(Item=dict(k, a=9)), dict(k, a=9)),
        ("PutItem ReturnValues NONE",
         lambda: table.put_item(Item=dict(k, a=9), ReturnValues="NONE"), dict(k, a=9)),
        ("UpdateItem SET a = :v", upd("SET a = :v", {":v": 9}), dict(base, a=9)),
        ("UpdateItem SET constants", upd("SET a = :x + :y", {":x": 4, ":y": 5}),
         dict(base, a=9)),
        ("UpdateItem REMOVE top-level", upd("REMOVE a, m"), dict(k, s={"x", "y"})),
        ("UpdateItem ReturnValues UPDATED_NEW",
         upd("SET a = :v", {":v": 9}, ReturnValues="UPDATED_NEW"), dict(base, a=9)),
        ("UpdateItem AttributeUpdates PUT/DELETE",
         lambda: table.update_item(Key=k, AttributeUpdates={"a": {"Value": 9, "Action": "PUT"},
                                                            "m": {"Action": "DELETE"}}),
         dict(k, a=9, s={"x", "y"})),
        ("DeleteItem", lambda: table.delete_item(Key=k), None),
        ("DeleteItem ReturnValues NONE", lambda: table.delete_item(Key=k, ReturnValues="NONE"),
         None),
    ]


def check_rmw(table, forbidden):
    for i in range(len(rmw_cases(table, {"p": "-"}))):
        k = {"p": f"{table.name}-rmw{i}"}
        label, request, after, attrs = rmw_cases(table, k)[i]
        table.put_item(Item=dict(k, **BASE))
        if forbidden:
            alt_expect_error("ValidationException", request, match=RMW_FORBIDDEN)
            assert get(table, k) == dict(k, **BASE), f"{label}: refused but changed the item"
            continue
        try:
            r = request()
        except ClientError as e:
            pytest.fail(f"{label} refused: {alt_error(e)}")
        assert get(table, k) == after, label
        if attrs is not None:
            assert r.get("Attributes") == attrs, label


def check_plain(table):
    for i in range(len(plain_cases(table, {"p": "-"}))):
        k = {"p": f"{table.name}-plain{i}"}
        label, request, after = plain_cases(table, k)[i]
        table.put_item(Item=dict(k, **BASE))
        try:
            r = request()
        except ClientError as e:
            pytest.fail(f"{label} refused: {alt_error(e)}")
        assert get(table, k) == after, label
        if label.endswith("UPDATED_NEW"):
            assert r["Attributes"] == {"a": 9}
    # A batch is never read-modify-write.
    # (table.meta.client is the resource's client: it takes Python values.)
    r = table.meta.client.batch_write_item(RequestItems={table.name: [
        {"PutRequest": {"Item": {"p": f"{table.name}-b{i}", "v": i}}}
        for i in range(5)] + [{"DeleteRequest": {"Key": {"p": f"{table.name}-gone"}}}]})
    assert r["UnprocessedItems"] == {}
    assert get(table, {"p": f"{table.name}-b3"}) == {"p": f"{table.name}-b3", "v": 3}
    # Reads work in every mode.
    assert table.query(KeyConditionExpression="p = :p",
                       ExpressionAttributeValues={":p": f"{table.name}-b1"},
                       ConsistentRead=True)["Count"] == 1
    assert table.scan(ConsistentRead=True, Select="COUNT")["Count"] >= 5


# --- the server default -------------------------------------------------------------

class ModeEnv:
    def __init__(self, server, mode, dynamodb):
        self.server, self.mode, self.dynamodb = server, mode, dynamodb
        self.forbid = canonical(mode) == "forbid_rmw"


@pytest.fixture(scope="module", params=["forbid_rmw", "u", "always_use_lwt", "o"])
def mode_env(request, shardmark_bin, tmp_path_factory):
    """A server per --alternator-write-isolation value (full names and
    abbreviations); one at a time."""
    srv = start_alternator_server(shardmark_bin, tmp_path_factory.mktemp("iso"),
                                  isolation=request.param)
    try:
        yield ModeEnv(srv, request.param, alt_resource(srv))
    finally:
        srv.kill()


def test_server_default_plain_writes(mode_env):
    table = alt_create_table(mode_env.dynamodb)
    try:
        check_plain(table)
    finally:
        table.delete()


def test_server_default_rmw(mode_env):
    table = alt_create_table(mode_env.dynamodb)
    try:
        check_rmw(table, forbidden=mode_env.forbid)
    finally:
        table.delete()


def test_table_tag_overrides_server_default(mode_env):
    """A forbid_rmw server with an always_use_lwt table runs RMW there; any
    other server with a forbid_rmw table refuses it there; the tag's removal
    restores the default."""
    tag = "always_use_lwt" if mode_env.forbid else "forbid_rmw"
    table = alt_create_table(mode_env.dynamodb, Tags=[{"Key": TAG, "Value": tag}])
    try:
        check_rmw(table, forbidden=not mode_env.forbid)
        check_plain(table)
        arn = table.meta.client.describe_table(TableName=table.name)["Table"]["TableArn"]
        table.meta.client.untag_resource(ResourceArn=arn, TagKeys=[TAG])
        check_rmw(table, forbidden=mode_env.forbid)
    finally:
        table.delete()


# --- the per-table tag on one server ------------------------------------------------

@pytest.mark.parametrize("tag", ["forbid_rmw", "f", "forbid", "unsafe", "unsafe_rmw",
                                 "always_use_lwt", "a", "only_rmw_uses_lwt", "o"])
def test_table_tag_at_create(dynamodb, tag):
    table = alt_create_table(dynamodb, Tags=[{"Key": TAG, "Value": tag}])
    try:
        arn = table.meta.client.describe_table(TableName=table.name)["Table"]["TableArn"]
        tags = table.meta.client.list_tags_of_resource(ResourceArn=arn)["Tags"]
        assert {"Key": TAG, "Value": tag} in tags, "the tag is not hidden"
        check_rmw(table, forbidden=canonical(tag) == "forbid_rmw")
        check_plain(table)
    finally:
        table.delete()


def test_table_tag_changed_live(dynamodb):
    """TagResource switches a table's mode for the next request; an empty
    value and UntagResource fall back to the server default
    (only_rmw_uses_lwt)."""
    table = alt_create_table(dynamodb)
    client = table.meta.client
    arn = client.describe_table(TableName=table.name)["Table"]["TableArn"]
    try:
        check_rmw(table, forbidden=False)
        client.tag_resource(ResourceArn=arn, Tags=[{"Key": TAG, "Value": "forbid_rmw"}])
        check_rmw(table, forbidden=True)
        client.tag_resource(ResourceArn=arn, Tags=[{"Key": TAG, "Value": "unsafe"}])
        check_rmw(table, forbidden=False)
        client.tag_resource(ResourceArn=arn, Tags=[{"Key": TAG, "Value": "f"}])
        check_rmw(table, forbidden=True)
        client.tag_resource(ResourceArn=arn, Tags=[{"Key": TAG, "Value": ""}])
        check_rmw(table, forbidden=False)
        client.tag_resource(ResourceArn=arn, Tags=[{"Key": TAG, "Value": "forbid"}])
        check_rmw(table, forbidden=True)
        client.untag_resource(ResourceArn=arn, TagKeys=[TAG])
        check_rmw(table, forbidden=False)
        # A refused value leaves the mode as it was.
        client.tag_resource(ResourceArn=arn, Tags=[{"Key": TAG, "Value": "f"}])
        alt_expect_error("ValidationException", client.tag_resource, ResourceArn=arn,
                         Tags=[{"Key": TAG, "Value": "bogus"}])
        check_rmw(table, forbidden=True)
    finally:
        table.delete()


@pytest.mark.parametrize("bad", ["dog", "bah", "x", "forbid rmw", "F", "ALWAYS", "z_always"])
def test_invalid_tag_at_create(dynamodb, bad):
    name = alt_unique_table_name("isobad")
    e = alt_expect_error("ValidationException", alt_create_table, dynamodb, name=name,
                         Tags=[{"Key": TAG, "Value": bad}])
    assert bad in alt_error(e)[1] or "write isolation" in alt_error(e)[1], alt_error(e)
    alt_expect_error("ResourceNotFoundException", dynamodb.meta.client.describe_table,
                     TableName=name)


@pytest.mark.parametrize("bad", ["bogus", "x", "forbid-rmw"])
def test_invalid_server_mode(alternator, bad):
    srv = alternator(isolation=bad, ready=False)
    rc = srv.wait_exit()
    assert rc != 0, f"shardmark accepted --alternator-write-isolation {bad}\n{srv.describe()}"
    assert bad in srv.stderr(), srv.describe()


# --- concurrency ---------------------------------------------------------------------

THREADS = 8
SUCCESSES_PER_THREAD = 5


def run_threads(target):
    errors = []

    def wrap(i):
        try:
            target(i)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)
    threads = [threading.Thread(target=wrap, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def conditional_increments(port, table_name):
    """8 threads each do SUCCESSES_PER_THREAD read/compare-and-set increments;
    -> (final c, the new values each success returned)."""
    setup = alt_client(port)
    setup.put_item(TableName=table_name, Item={"p": {"S": "ctr"}, "c": {"N": "0"}})
    results = [[] for _ in range(THREADS)]
    attempts = [0] * THREADS

    def worker(i):
        client = alt_client(port)
        k = {"p": {"S": "ctr"}}
        while len(results[i]) < SUCCESSES_PER_THREAD:
            attempts[i] += 1
            assert attempts[i] < 2000, "no progress"
            old = client.get_item(TableName=table_name, Key=k,
                                  ConsistentRead=True)["Item"]["c"]["N"]
            try:
                r = client.update_item(TableName=table_name, Key=k,
                                       UpdateExpression="SET c = c + :one",
                                       ConditionExpression="c = :old",
                                       ExpressionAttributeValues={":one": {"N": "1"},
                                                                  ":old": {"N": old}},
                                       ReturnValues="UPDATED_NEW")
            except ClientError as e:
                code, msg = alt_error(e)
                assert code == "ConditionalCheckFailedException", (code, msg)
                continue
            new = int(r["Attributes"]["c"]["N"])
            assert new == int(old) + 1
            results[i].append(new)
        client.close()
    run_threads(worker)
    final = int(setup.get_item(TableName=table_name, Key={"p": {"S": "ctr"}},
                               ConsistentRead=True)["Item"]["c"]["N"])
    setup.close()
    return final, [v for r in results for v in r]


def check_conditional_increments(port, table_name):
    final, values = conditional_increments(port, table_name)
    assert len(values) == THREADS * SUCCESSES_PER_THREAD
    assert final == len(values), f"c = {final} after {len(values)} successful updates"
    # Each success saw a distinct old value: they were serialized.
    assert sorted(values) == list(range(1, final + 1))


def check_blind_increments(port, table_name, n=15):
    """SET c = c + :one without a condition, from 8 threads: none is lost."""
    setup = alt_client(port)
    setup.put_item(TableName=table_name, Item={"p": {"S": "blind"}, "c": {"N": "0"}})

    def worker(i):
        client = alt_client(port)
        for _ in range(n):
            client.update_item(TableName=table_name, Key={"p": {"S": "blind"}},
                               UpdateExpression="SET c = c + :one",
                               ExpressionAttributeValues={":one": {"N": "1"}})
        client.close()
    run_threads(worker)
    final = int(setup.get_item(TableName=table_name, Key={"p": {"S": "blind"}},
                               ConsistentRead=True)["Item"]["c"]["N"])
    setup.close()
    assert final == THREADS * n


def test_concurrent_increments_always_use_lwt_server(alternator):
    srv = alternator(isolation="always_use_lwt")
    table = alt_create_table(alt_resource(srv))
    check_conditional_increments(srv.alt_port, table.name)
    check_blind_increments(srv.alt_port, table.name)


@pytest.mark.parametrize("tag", ["always_use_lwt", "only_rmw_uses_lwt"])
def test_concurrent_increments_tagged_table(alternator_server, dynamodb, tag):
    table = alt_create_table(dynamodb, Tags=[{"Key": TAG, "Value": tag}])
    try:
        check_conditional_increments(alternator_server.alt_port, table.name)
        check_blind_increments(alternator_server.alt_port, table.name)
    finally:
        table.delete()
