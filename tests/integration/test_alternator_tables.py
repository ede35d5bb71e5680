# SPDX-License-Identifier: BSD-3-Clause
"""Alternator endpoint: table operations through boto3.

CreateTable with hash-only and hash+range keys of every key type (S, N, B),
both billing modes and Tags; DescribeTable's fields; DeleteTable and what a
deleted table answers; ListTables with Limit and pagination; UpdateTable's
billing mode; TagResource/UntagResource/ListTagsOfResource on the ARN that
DescribeTable gives; DescribeEndpoints; and CreateTable's errors (an existing
table, bad names, bad schemas, bad billing options).
"""

import datetime
from decimal import Decimal

import pytest

pytest.importorskip("boto3")

from botocore.exceptions import ClientError  # noqa: E402

from conftest import (alt_create_table, alt_error, alt_expect_error,  # noqa: E402
                      alt_unique_table_name)

KEY_VALUES = {"S": ["alpha", "b\u00e9ta"], "N": [Decimal("7"), Decimal("-3.25")],
              "B": [b"\x00\x01\xff", b"xyz"]}


def describe(dynamodb, name):
    return dynamodb.meta.client.describe_table(TableName=name)["Table"]


def tags_of(dynamodb, arn):
    got = dynamodb.meta.client.list_tags_of_resource(ResourceArn=arn)
    return {t["Key"]: t["Value"] for t in got.get("Tags", [])}


def assert_no_table(dynamodb, name):
    alt_expect_error("ResourceNotFoundException", dynamodb.meta.client.describe_table,
                     TableName=name)


def expect_client_error(fn, **kwargs):
    with pytest.raises(ClientError) as exc:
        fn(**kwargs)
    return exc.value


def check_description(td, name, schema, defs):
    assert td["TableName"] == name
    assert td["TableStatus"] == "ACTIVE"
    assert td["KeySchema"] == schema
    # AttributeDefinitions may come in any order.
    assert sorted(td["AttributeDefinitions"], key=lambda d: d["AttributeName"]) == \
        sorted(defs, key=lambda d: d["AttributeName"])
    created = td["CreationDateTime"]
    assert isinstance(created, datetime.datetime), f"CreationDateTime {created!r}"
    assert created.year >= 2024, f"CreationDateTime {created!r} is not a current date"
    assert isinstance(td["TableArn"], str) and td["TableArn"].startswith("arn:"), td["TableArn"]
    assert td["TableArn"].endswith(name), td["TableArn"]


def test_create_hash_only_and_describe(dynamodb_client, dynamodb):
    name = alt_unique_table_name("hash")
    client = dynamodb_client
    schema = [{"AttributeName": "p", "KeyType": "HASH"}]
    defs = [{"AttributeName": "p", "AttributeType": "S"}]
    resp = client.create_table(TableName=name, KeySchema=schema, AttributeDefinitions=defs,
                               BillingMode="PAY_PER_REQUEST")
    td = resp["TableDescription"]
    assert td["TableName"] == name
    assert td["KeySchema"] == schema
    d = describe(dynamodb, name)
    check_description(d, name, schema, defs)
    assert d["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    table = dynamodb.Table(name)
    table.put_item(Item={"p": "k", "v": 1})
    assert table.get_item(Key={"p": "k"}, ConsistentRead=True)["Item"] == {"p": "k", "v": 1}
    table.delete()
    assert_no_table(dynamodb, name)


@pytest.mark.parametrize("hash_type,range_type", [
    ("S", None), ("N", None), ("B", None),
    ("S", "S"), ("S", "N"), ("S", "B"), ("N", "S"), ("B", "N"), ("N", "B")])
def test_key_types(dynamodb, hash_type, range_type):
    rng = ("c", range_type) if range_type else None
    table = alt_create_table(dynamodb, hash_key=("p", hash_type), range_key=rng)
    try:
        schema = [{"AttributeName": "p", "KeyType": "HASH"}]
        defs = [{"AttributeName": "p", "AttributeType": hash_type}]
        if rng:
            schema.append({"AttributeName": "c", "KeyType": "RANGE"})
            defs.append({"AttributeName": "c", "AttributeType": range_type})
        check_description(describe(dynamodb, table.name), table.name, schema, defs)
        written = []
        for pv in KEY_VALUES[hash_type]:
            for cv in (KEY_VALUES[range_type] if rng else [None]):
                key = {"p": pv} if cv is None else {"p": pv, "c": cv}
                item = dict(key, data=f"{pv!r}/{cv!r}")
                table.put_item(Item=item)
                written.append(item)
        for item in written:
            key = {k: item[k] for k in ("p", "c") if k in item}
            assert table.get_item(Key=key, ConsistentRead=True)["Item"] == item
        got = table.scan(ConsistentRead=True)["Items"]
        assert sorted(i["data"] for i in got) == sorted(i["data"] for i in written)
    finally:
        table.delete()


def test_provisioned_billing_mode(dynamodb):
    table = alt_create_table(dynamodb, BillingMode="PROVISIONED",
                             ProvisionedThroughput={"ReadCapacityUnits": 2,
                                                    "WriteCapacityUnits": 3})
    try:
        d = describe(dynamodb, table.name)
        assert d["TableStatus"] == "ACTIVE"
        if "BillingModeSummary" in d:
            assert d["BillingModeSummary"]["BillingMode"] == "PROVISIONED"
        assert d["ProvisionedThroughput"]["ReadCapacityUnits"] == 2
        assert d["ProvisionedThroughput"]["WriteCapacityUnits"] == 3
        table.put_item(Item={"p": "x"})
        assert table.get_item(Key={"p": "x"}, ConsistentRead=True)["Item"] == {"p": "x"}
    finally:
        table.delete()


def test_pay_per_request_has_zero_throughput(dynamodb):
    table = alt_create_table(dynamodb)
    try:
        d = describe(dynamodb, table.name)
        assert d["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
        if "ProvisionedThroughput" in d:
            assert d["ProvisionedThroughput"]["ReadCapacityUnits"] == 0
            assert d["ProvisionedThroughput"]["WriteCapacityUnits"] == 0
    finally:
        table.delete()


def test_update_table_billing_mode(dynamodb_client, dynamodb):
    client = dynamodb_client
    table = alt_create_table(dynamodb, BillingMode="PROVISIONED",
                             ProvisionedThroughput={"ReadCapacityUnits": 1,
                                                    "WriteCapacityUnits": 1})
    try:
        table.put_item(Item={"p": "kept", "v": "yes"})
        resp = client.update_table(TableName=table.name, BillingMode="PAY_PER_REQUEST")
        assert resp["TableDescription"]["TableName"] == table.name
        d = describe(dynamodb, table.name)
        assert d["TableStatus"] == "ACTIVE"
        assert d["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
        client.update_table(TableName=table.name, BillingMode="PROVISIONED",
                            ProvisionedThroughput={"ReadCapacityUnits": 5,
                                                   "WriteCapacityUnits": 7})
        d = describe(dynamodb, table.name)
        if "BillingModeSummary" in d:
            assert d["BillingModeSummary"]["BillingMode"] == "PROVISIONED"
        assert d["ProvisionedThroughput"]["ReadCapacityUnits"] == 5
        assert d["ProvisionedThroughput"]["WriteCapacityUnits"] == 7
        # The data survives schema-level updates.
        assert table.get_item(Key={"p": "kept"}, ConsistentRead=True)["Item"] == \
            {"p": "kept", "v": "yes"}
    finally:
        table.delete()
    alt_expect_error("ResourceNotFoundException", client.update_table,
                     TableName=table.name, BillingMode="PAY_PER_REQUEST")


def test_delete_table(dynamodb_client, dynamodb):
    client = dynamodb_client
    table = alt_create_table(dynamodb, range_key=("c", "N"))
    name = table.name
    table.put_item(Item={"p": "a", "c": 1, "x": "old"})
    resp = client.delete_table(TableName=name)
    assert resp["TableDescription"]["TableName"] == name
    assert_no_table(dynamodb, name)
    assert name not in client.list_tables()["TableNames"]
    alt_expect_error("ResourceNotFoundException", client.get_item, TableName=name,
                     Key={"p": {"S": "a"}, "c": {"N": "1"}})
    alt_expect_error("ResourceNotFoundException", client.put_item, TableName=name,
                     Item={"p": {"S": "a"}, "c": {"N": "1"}})
    alt_expect_error("ResourceNotFoundException", client.scan, TableName=name)
    alt_expect_error("ResourceNotFoundException", client.delete_table, TableName=name)
    # The same name can be created again, and the new table is empty.
    table = alt_create_table(dynamodb, range_key=("c", "N"), name=name)
    try:
        assert table.scan(ConsistentRead=True)["Items"] == []
        assert "Item" not in table.get_item(Key={"p": "a", "c": 1}, ConsistentRead=True)
    finally:
        table.delete()


def test_list_tables_pagination(dynamodb_client, dynamodb):
    client = dynamodb_client
    mine = [alt_create_table(dynamodb, name=alt_unique_table_name("lst")) for _ in range(5)]
    names = {t.name for t in mine}
    try:
        everything = client.list_tables()["TableNames"]
        assert names <= set(everything)
        assert len(everything) == len(set(everything)), f"duplicates in {everything}"
        for limit in (1, 2, 3, 100):
            seen = []
            start = None
            for _ in range(1000):
                kwargs = {"Limit": limit}
                if start is not None:
                    kwargs["ExclusiveStartTableName"] = start
                page = client.list_tables(**kwargs)
                assert len(page["TableNames"]) <= limit, page
                seen += page["TableNames"]
                start = page.get("LastEvaluatedTableName")
                if start is None:
                    break
                assert start == page["TableNames"][-1], page
            assert start is None, "ListTables pagination did not end"
            assert len(seen) == len(set(seen)), f"limit {limit}: duplicates in {seen}"
            assert set(seen) == set(everything), f"limit {limit}: {seen} vs {everything}"
        alt_expect_error("ValidationException", client.list_tables, Limit=101)
        alt_expect_error("ValidationException", client.list_tables, Limit=0)
    finally:
        for t in mine:
            t.delete()
    left = client.list_tables()["TableNames"]
    assert not names & set(left), f"deleted tables still listed: {names & set(left)}"


def test_tags_at_create_and_tag_untag(dynamodb_client, dynamodb):
    client = dynamodb_client
    initial = [{"Key": "k1", "Value": "v1"}, {"Key": "team", "Value": "storage"}]
    table = alt_create_table(dynamodb, Tags=initial)
    try:
        arn = describe(dynamodb, table.name)["TableArn"]
        assert tags_of(dynamodb, arn) == {"k1": "v1", "team": "storage"}
        assert client.tag_resource(ResourceArn=arn,
                                   Tags=[{"Key": "k2", "Value": "v2"},
                                         {"Key": "k1", "Value": "changed"}]) is not None
        assert tags_of(dynamodb, arn) == {"k1": "changed", "team": "storage", "k2": "v2"}
        # Removing a key that is not there is allowed.
        client.untag_resource(ResourceArn=arn, TagKeys=["team", "no-such-key"])
        assert tags_of(dynamodb, arn) == {"k1": "changed", "k2": "v2"}
        client.untag_resource(ResourceArn=arn, TagKeys=["k1", "k2"])
        assert tags_of(dynamodb, arn) == {}
        # A well-formed ARN of a table that does not exist.
        alt_expect_error("ResourceNotFoundException", client.tag_resource,
                         ResourceArn=arn + "x", Tags=[{"Key": "a", "Value": "b"}])
        alt_expect_error("ResourceNotFoundException", client.list_tags_of_resource,
                         ResourceArn=arn + "x")
        # Something that is not an ARN at all.
        e = expect_client_error(client.tag_resource, ResourceArn="I_do_not_exist",
                                 Tags=[{"Key": "a", "Value": "b"}])
        assert alt_error(e)[0] in ("AccessDeniedException", "ValidationException"), alt_error(e)
        alt_expect_error("ValidationException", client.tag_resource, ResourceArn=arn, Tags=[])
    finally:
        table.delete()


def test_write_isolation_tag_values(dynamodb_client, dynamodb):
    client = dynamodb_client
    table = alt_create_table(dynamodb)
    try:
        arn = describe(dynamodb, table.name)["TableArn"]
        for v in ("f", "forbid", "forbid_rmw", "a", "always", "always_use_lwt", "o",
                  "only_rmw_uses_lwt", "u", "unsafe", "unsafe_rmw"):
            client.tag_resource(ResourceArn=arn, Tags=[{"Key": "system:write_isolation",
                                                        "Value": v}])
            assert tags_of(dynamodb, arn)["system:write_isolation"] == v
        alt_expect_error("ValidationException", client.tag_resource, ResourceArn=arn,
                         Tags=[{"Key": "system:write_isolation", "Value": "bah"}])
        assert tags_of(dynamodb, arn)["system:write_isolation"] == "unsafe_rmw"
        client.untag_resource(ResourceArn=arn, TagKeys=["system:write_isolation"])
        assert "system:write_isolation" not in tags_of(dynamodb, arn)
    finally:
        table.delete()


def test_describe_endpoints(dynamodb, alternator_server):
    got = dynamodb.meta.client.describe_endpoints()
    eps = got["Endpoints"]
    assert len(eps) >= 1
    for ep in eps:
        assert isinstance(ep["Address"], str) and ep["Address"], ep
        assert ep["CachePeriodInMinutes"] > 0, ep
    # Alternator answers with the Host header the request came with.
    assert any(ep["Address"] == f"{alternator_server.host}:{alternator_server.alt_port}"
               for ep in eps), eps


def test_create_existing_table(dynamodb):
    table = alt_create_table(dynamodb)
    try:
        table.put_item(Item={"p": "survivor"})
        e = alt_expect_error("ResourceInUseException", alt_create_table, dynamodb,
                             name=table.name)
        assert "already exists" in alt_error(e)[1]
        # The failed attempt did not disturb the table.
        assert table.get_item(Key={"p": "survivor"}, ConsistentRead=True)["Item"] == \
            {"p": "survivor"}
    finally:
        table.delete()


@pytest.mark.parametrize("name", ["n", "nn", pytest.param("n" * 256, id="n*256"), "nyh@test",
                                  "has space", "sl/ash", "\u00e9t\u00e9_table"])
def test_create_table_bad_names(dynamodb, name):
    alt_expect_error("ValidationException", alt_create_table, dynamodb, name=name)
    assert name not in dynamodb.meta.client.list_tables()["TableNames"]


def test_item_operation_bad_table_name(dynamodb_client, dynamodb):
    client = dynamodb_client
    alt_expect_error("ValidationException", client.put_item, TableName="non!existent!table",
                     Item={"p": {"S": "x"}})
    alt_expect_error("ValidationException", client.put_item, TableName="xx",
                     Item={"p": {"S": "x"}})
    alt_expect_error("ResourceNotFoundException", client.put_item,
                     TableName=alt_unique_table_name("missing"), Item={"p": {"S": "x"}})
    alt_expect_error("ResourceNotFoundException", client.describe_table,
                     TableName=alt_unique_table_name("missing"))


def test_create_table_with_legal_unusual_names(dynamodb):
    for name in (alt_unique_table_name("Dots.And-Dashes"), "abc" + alt_unique_table_name("_")):
        table = alt_create_table(dynamodb, name=name)
        try:
            table.put_item(Item={"p": "v"})
            assert table.get_item(Key={"p": "v"}, ConsistentRead=True)["Item"] == {"p": "v"}
            assert name in dynamodb.meta.client.list_tables()["TableNames"]
        finally:
            table.delete()


@pytest.mark.parametrize("length", [40, 100, 192])
def test_create_table_long_name(dynamodb, length):
    """DynamoDB allows 255 characters; ScyllaDB supports up to 192."""
    prefix = alt_unique_table_name("long")
    name = prefix + "n" * (length - len(prefix))
    table = alt_create_table(dynamodb, name=name)
    try:
        table.put_item(Item={"p": "v"})
        assert table.get_item(Key={"p": "v"}, ConsistentRead=True)["Item"] == {"p": "v"}
        assert describe(dynamodb, name)["TableName"] == name
    finally:
        table.delete()


def _create(dynamodb, schema, defs, **kwargs):
    kwargs.setdefault("BillingMode", "PAY_PER_REQUEST")
    kwargs.setdefault("TableName", alt_unique_table_name("bad"))
    return dynamodb.meta.client.create_table(KeySchema=schema, AttributeDefinitions=defs,
                                             **kwargs)


def test_create_table_bad_schemas(dynamodb):
    name = alt_unique_table_name("bad")
    H = {"AttributeName": "p", "KeyType": "HASH"}
    cases = [
        # two hash keys
        ([H, {"AttributeName": "c", "KeyType": "HASH"}],
         [{"AttributeName": "p", "AttributeType": "S"},
          {"AttributeName": "c", "AttributeType": "S"}]),
        # only range keys
        ([{"AttributeName": "c", "KeyType": "RANGE"}],
         [{"AttributeName": "c", "AttributeType": "S"}]),
        # three keys
        ([H, {"AttributeName": "c", "KeyType": "RANGE"},
          {"AttributeName": "z", "KeyType": "RANGE"}],
         [{"AttributeName": a, "AttributeType": "S"} for a in "pcz"]),
        # key attribute without a definition
        ([H], [{"AttributeName": "z", "AttributeType": "S"}]),
        # key types must be S, N or B
        ([H], [{"AttributeName": "p", "AttributeType": "Q"}]),
        ([H], [{"AttributeName": "p", "AttributeType": "BOOL"}]),
        ([H], [{"AttributeName": "p", "AttributeType": "SS"}]),
        # duplicate attribute definition
        ([H], [{"AttributeName": "p", "AttributeType": "S"},
               {"AttributeName": "p", "AttributeType": "N"}]),
        # definition missing its type / its name
        ([H], [{"AttributeName": "p"}]),
        ([H], [{"AttributeType": "S"}]),
        # no key schema at all
        ([], [{"AttributeName": "p", "AttributeType": "S"}]),
    ]
    for schema, defs in cases:
        e = alt_expect_error("ValidationException", _create, dynamodb, schema, defs, TableName=name)
        assert alt_error(e)[1], f"empty message for {schema} {defs}"
        assert_no_table(dynamodb, name)


def test_create_table_missing_attribute_definitions(dynamodb):
    name = alt_unique_table_name("bad")
    e = alt_expect_error("ValidationException", dynamodb.meta.client.create_table,
                         TableName=name, BillingMode="PAY_PER_REQUEST",
                         KeySchema=[{"AttributeName": "p", "KeyType": "HASH"}])
    assert "ttributeDefinitions" in alt_error(e)[1]
    assert_no_table(dynamodb, name)


def test_create_table_billing_errors(dynamodb):
    name = alt_unique_table_name("bill")
    schema = [{"AttributeName": "p", "KeyType": "HASH"}]
    defs = [{"AttributeName": "p", "AttributeType": "S"}]
    pt = {"ReadCapacityUnits": 10, "WriteCapacityUnits": 10}
    for kwargs in ({"BillingMode": "unknown"}, {"BillingMode": "pay_per_request"},
                   {"BillingMode": "PAY_PER_REQUEST", "ProvisionedThroughput": pt},
                   {"BillingMode": "PROVISIONED"}):
        alt_expect_error("ValidationException", _create, dynamodb, schema, defs,
                         TableName=name, **kwargs)
        assert_no_table(dynamodb, name)
    # Without BillingMode the default is PROVISIONED, which needs throughput.
    alt_expect_error("ValidationException", dynamodb.meta.client.create_table, TableName=name,
                     KeySchema=schema, AttributeDefinitions=defs)
    assert_no_table(dynamodb, name)
    dynamodb.meta.client.create_table(TableName=name, KeySchema=schema,
                                      AttributeDefinitions=defs, ProvisionedThroughput=pt)
    try:
        assert describe(dynamodb, name)["TableStatus"] == "ACTIVE"
    finally:
        dynamodb.meta.client.delete_table(TableName=name)


def test_create_table_bad_write_isolation_tag(dynamodb):
    name = alt_unique_table_name("iso")
    alt_expect_error("ValidationException", alt_create_table, dynamodb, name=name,
                     Tags=[{"Key": "system:write_isolation", "Value": "dog"}])
    assert_no_table(dynamodb, name)
    alt_expect_error("ValidationException", alt_create_table, dynamodb, name=name,
                     Tags=[{"Key": str(i), "Value": str(i)} for i in range(100)])
    assert_no_table(dynamodb, name)


# ScyllaDB's test_tag.py: test_tag_resource_incorrect (50 tags at most, after
# the merge), test_tag_value_length_257_forbidden, test_tag_forbidden_chars;
# test_concurrent_tag (tag changes on two shards at once lose nothing);
# test_provisioned_throughput.py test_create_table_missing_units
def test_tag_rules_and_concurrency(dynamodb, alternator_server):
    import threading
    from conftest import alt_client
    t = alt_create_table(dynamodb)
    c = dynamodb.meta.client
    try:
        arn = c.describe_table(TableName=t.name)["Table"]["TableArn"]
        c.tag_resource(ResourceArn=arn, Tags=[{"Key": str(i), "Value": str(i)} for i in range(30)])
        c.tag_resource(ResourceArn=arn, Tags=[{"Key": str(i), "Value": str(i)}
                                              for i in range(20, 40)])
        alt_expect_error("ValidationException", c.tag_resource, ResourceArn=arn,
                         Tags=[{"Key": str(i), "Value": str(i)} for i in range(40, 60)])
        assert len(c.list_tags_of_resource(ResourceArn=arn)["Tags"]) == 40
        alt_expect_error("ValidationException", c.tag_resource, ResourceArn=arn,
                         Tags=[{"Key": "dog", "Value": "x" * 257}])
        c.tag_resource(ResourceArn=arn, Tags=[{"Key": "dog", "Value": "x" * 256}])
        for bad in ("hi!", "d%g", '"hello"'):
            alt_expect_error("ValidationException", c.tag_resource, ResourceArn=arn,
                             Tags=[{"Key": bad, "Value": "dog"}])
            alt_expect_error("ValidationException", c.tag_resource, ResourceArn=arn,
                             Tags=[{"Key": "dog", "Value": bad}])
        c.tag_resource(ResourceArn=arn, Tags=[{"Key": "ok +-=._:/@ Ѯ", "Value": ""}])
        c.untag_resource(ResourceArn=arn, TagKeys=[str(i) for i in range(40)] + ["dog"])
        lost = []

        def loop(tag):
            cl = alt_client(alternator_server)
            for _ in range(30):
                cl.tag_resource(ResourceArn=arn, Tags=[{"Key": tag, "Value": "Hello"}])
                if tag not in {x["Key"] for x in cl.list_tags_of_resource(ResourceArn=arn)["Tags"]}:
                    lost.append(tag)
                cl.untag_resource(ResourceArn=arn, TagKeys=[tag])
                if tag in {x["Key"] for x in cl.list_tags_of_resource(ResourceArn=arn)["Tags"]}:
                    lost.append("un" + tag)
            cl.close()
        threads = [threading.Thread(target=loop, args=(k,)) for k in "AB"]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert lost == []
        assert c.list_tags_of_resource(ResourceArn=arn)["Tags"] == [
            {"Key": "ok +-=._:/@ Ѯ", "Value": ""}]
    finally:
        t.delete()
    for pt in ({"WriteCapacityUnits": 1}, {"ReadCapacityUnits": 5}):
        alt_expect_error("ValidationException", c.create_table, TableName=alt_unique_table_name(),
                         BillingMode="PROVISIONED", ProvisionedThroughput=pt,
                         KeySchema=[{"AttributeName": "p", "KeyType": "HASH"}],
                         AttributeDefinitions=[{"AttributeName": "p", "AttributeType": "S"}],
                         match="provisionedThroughput.*CapacityUnits")
