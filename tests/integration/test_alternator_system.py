# SPDX-License-Identifier: BSD-3-Clause
"""Alternator: ScyllaDB's extras through boto3 and raw HTTP.

Rewritten from ScyllaDB's test/alternator/test_system_tables.py,
test_scylla.py and test_table.py (names in the comments are theirs): the
read-only .scylla.alternator.<keyspace>.<table> views of system tables,
GET /localnodes, and DescribeContinuousBackups.
"""

import json

import pytest

pytest.importorskip("boto3")

from conftest import (alt_all_pages, alt_create_table, alt_expect_error,  # noqa: E402
                      alt_unique_table_name, http_get)

PREFIX = ".scylla.alternator."


@pytest.fixture(scope="module")
def table(dynamodb):
    t = alt_create_table(dynamodb, range_key=("c", "N"))
    yield t
    t.delete()


def config_read(client, name):
    items = client.query(TableName=PREFIX + "system.config",
                         KeyConditionExpression="#k = :v",
                         ExpressionAttributeNames={"#k": "name"},
                         ExpressionAttributeValues={":v": {"S": name}})["Items"]
    return items[0]["value"]["S"] if items else None


# scylla_config_read() of util.py, test_write_to_config (refused: no
# alternator_allow_system_table_write)
def test_config(dynamodb_client):
    assert float(config_read(dynamodb_client, "alternator_ttl_period_in_seconds")) == 1.0
    assert config_read(dynamodb_client, "alternator_write_isolation") in (
        "forbid_rmw", "unsafe", "always_use_lwt", "only_rmw_uses_lwt")
    assert config_read(dynamodb_client, "no_such_setting") is None
    alt_expect_error("ValidationException", dynamodb_client.update_item,
                     TableName=PREFIX + "system.config",
                     Key={"name": {"S": "alternator_write_isolation"}},
                     UpdateExpression="SET #v = :v", ExpressionAttributeNames={"#v": "value"},
                     ExpressionAttributeValues={":v": {"S": "f"}},
                     match="alternator_allow_system_table_write")
    got = dynamodb_client.get_item(TableName=PREFIX + "system.config",
                                   Key={"name": {"S": "alternator_enforce_authorization"}})
    assert got["Item"]["value"] == {"S": "false"}


# the this_dc and this_rack fixtures of test_scylla.py
def test_local(dynamodb):
    t = dynamodb.Table(PREFIX + "system.local")
    items = t.scan(AttributesToGet=["data_center"])["Items"]
    assert items == [{"data_center": "datacenter1"}]
    assert t.scan(ProjectionExpression="rack")["Items"] == [{"rack": "rack1"}]


# test_fetch_from_system_tables
def test_fetch_from_system_tables(dynamodb_client, table):
    c = dynamodb_client
    tables = alt_all_pages(c.scan, TableName=PREFIX + "system_schema.tables",
                           AttributesToGet=["keyspace_name", "table_name"])
    names = {(i["keyspace_name"]["S"], i["table_name"]["S"]) for i in tables}
    assert ("alternator_" + table.name, table.name) in names
    cols = c.query(TableName=PREFIX + "system_schema.columns",
                   KeyConditionExpression="keyspace_name = :k AND table_name = :t",
                   ExpressionAttributeValues={":k": {"S": "alternator_" + table.name},
                                              ":t": {"S": table.name}})["Items"]
    kinds = {i["column_name"]["S"]: i["kind"]["S"] for i in cols}
    assert kinds == {"p": "partition_key", "c": "clustering", ":attrs": "regular"}
    # legacy KeyConditions, a filter and COUNT
    r = c.query(TableName=PREFIX + "system_schema.columns", Select="COUNT",
                KeyConditions={"keyspace_name": {"ComparisonOperator": "EQ",
                                                 "AttributeValueList": [
                                                     {"S": "alternator_" + table.name}]}},
                FilterExpression="kind = :k", ExpressionAttributeValues={":k": {"S": "clustering"}})
    assert r["Count"] == 1 and r["ScannedCount"] == 3
    # paging: one item a page, all of them in the end
    paged = alt_all_pages(c.scan, TableName=PREFIX + "system_schema.columns", Limit=1)
    assert len(paged) == len(alt_all_pages(c.scan, TableName=PREFIX + "system_schema.columns"))
    ks = alt_all_pages(c.scan, TableName=PREFIX + "system_schema.keyspaces")
    assert {"S": "alternator_" + table.name} in [i["keyspace_name"] for i in ks]


# test_block_access_to_non_system_tables_with_virtual_interface
def test_block_non_system_tables(dynamodb_client, table):
    for name in (f"alternator_{table.name}.{table.name}", "system.nosuch", "nodot", ""):
        alt_expect_error("ResourceNotFoundException", dynamodb_client.scan,
                         TableName=PREFIX + name, match=r"\.scylla\.alternator\.")


# test_block_creating_tables_with_reserved_prefix
def test_block_creating_reserved_prefix(dynamodb):
    for postfix in ("", "a", "xxx", "system_auth.roles", "table_name"):
        alt_expect_error("ValidationException", dynamodb.create_table, TableName=PREFIX + postfix,
                         BillingMode="PAY_PER_REQUEST",
                         KeySchema=[{"AttributeName": "p", "KeyType": "HASH"}],
                         AttributeDefinitions=[{"AttributeName": "p", "AttributeType": "S"}],
                         match=r"\.scylla\.alternator\.")


# test_localnodes, test_localnodes_option_dc, test_localnodes_option_rack
def test_localnodes(alternator_server):
    port = alternator_server.alt_port

    def get(path):
        status, _, body = http_get(port, path)
        assert status == 200
        return json.loads(body)
    nodes = get("/localnodes")
    assert isinstance(nodes, list) and len(nodes) == 1
    assert nodes[0] in alternator_server.alt_url
    assert get("/localnodes?dc=datacenter1") == nodes
    assert get("/localnodes?dc=nonexistent_dc") == []
    assert get("/localnodes?rack=rack1") == nodes
    assert get("/localnodes?rack=nonexistent_rack") == []


# test_describe_continuous_backups_without_continuous_backups,
# test_describe_continuous_backups_nonexistent, test_describe_continuous_backups_missing
def test_describe_continuous_backups(dynamodb_client, table):
    r = dynamodb_client.describe_continuous_backups(TableName=table.name)
    assert r["ContinuousBackupsDescription"] == {
        "ContinuousBackupsStatus": "DISABLED",
        "PointInTimeRecoveryDescription": {"PointInTimeRecoveryStatus": "DISABLED"}}
    alt_expect_error("TableNotFoundException", dynamodb_client.describe_continuous_backups,
                     TableName=alt_unique_table_name())
    alt_expect_error("ValidationException", dynamodb_client.describe_continuous_backups)
    # test_describe_continuous_backups_table_name_arn: TableName may be the table's ARN
    arn = dynamodb_client.describe_table(TableName=table.name)["Table"]["TableArn"]
    got = dynamodb_client.describe_continuous_backups(TableName=arn)
    assert got["ContinuousBackupsDescription"] == r["ContinuousBackupsDescription"]
    assert dynamodb_client.describe_table(TableName=arn)["Table"]["TableName"] == table.name
    dynamodb_client.put_item(TableName=arn, Item={"p": {"S": "arn"}, "c": {"N": "1"}})
    assert "Item" in dynamodb_client.get_item(TableName=arn,
                                              Key={"p": {"S": "arn"}, "c": {"N": "1"}})


def config_write(client, name, value):
    client.update_item(TableName=PREFIX + "system.config", Key={"name": {"S": name}},
                       UpdateExpression="SET #v = :v", ExpressionAttributeNames={"#v": "value"},
                       ExpressionAttributeValues={":v": {"S": value}})


# test_write_to_config, test_scylla_config_temporary, and the live settings of
# test_http_headers.py: test_server_header, test_config_date_header,
# test_config_content_type_header
def test_live_settings(dynamodb_client, table):
    c = dynamodb_client
    limit = config_read(c, "query_tombstone_page_limit")
    config_write(c, "query_tombstone_page_limit", limit + "1")
    assert config_read(c, "query_tombstone_page_limit") == limit + "1"
    config_write(c, "query_tombstone_page_limit", limit)
    alt_expect_error("ValidationException", config_write, c, "query_tombstone_page_limit", "x")
    alt_expect_error("ValidationException", config_write, c,
                     "alternator_http_response_disable_date_header", "maybe")

    def headers(fn=None):
        r = (fn or (lambda: c.get_item(TableName=table.name, Key={"p": {"S": "h"},
                                                                  "c": {"N": "1"}})))()
        return r["ResponseMetadata"]["HTTPHeaders"]

    def error_headers():
        try:
            c.describe_table(TableName="nonexistent_table_xxxxx")
        except Exception as e:  # noqa: BLE001 - the error's headers are what matters
            return e.response["ResponseMetadata"]["HTTPHeaders"]
        raise AssertionError("no error")
    try:
        config_write(c, "alternator_http_response_server_header", "MyServer/1.0")
        assert headers()["server"] == "MyServer/1.0"
        assert error_headers()["server"] == "MyServer/1.0"
        config_write(c, "alternator_http_response_server_header", "Server\x01Name")
        assert headers()["server"] == "ServerName"
        config_write(c, "alternator_http_response_server_header", " ")
        assert "server" not in headers()
        config_write(c, "alternator_http_response_disable_date_header", "true")
        assert "date" not in headers() and "date" not in error_headers()
        config_write(c, "alternator_http_response_disable_content_type_header", "true")
        assert "content-type" not in headers() and "content-type" not in error_headers()
    finally:
        config_write(c, "alternator_http_response_server_header", "")
        config_write(c, "alternator_http_response_disable_date_header", "false")
        config_write(c, "alternator_http_response_disable_content_type_header", "false")
    h = headers()
    assert "server" not in h and "date" in h and "content-type" in h
