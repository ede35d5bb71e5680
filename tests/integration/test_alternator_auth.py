# SPDX-License-Identifier: BSD-3-Clause
"""Alternator authorization: with alternator_enforce_authorization, boto3's
SigV4 signature is verified against the configured key pair, and unsigned,
wrongly signed and unknown-key requests get DynamoDB's errors; without it,
any credentials are accepted."""

import http.client

import pytest

boto3 = pytest.importorskip("boto3")
botocore = pytest.importorskip("botocore")

from conftest import free_port  # noqa: E402


def client(srv, key, secret):
    return boto3.client("dynamodb", endpoint_url=f"http://{srv.host}:{srv.alt_port}",
                        region_name="us-east-1", aws_access_key_id=key,
                        aws_secret_access_key=secret,
                        config=botocore.config.Config(retries={"max_attempts": 0}))


def error_code(fn):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        fn()
    return e.value.response["Error"]["Code"]


def start(serve, *extra):
    port = free_port()
    srv = serve("--smp", "1", "--alternator-port", str(port), *extra, echo=False)
    srv.alt_port = port
    srv.wait_ready(ports=[port])
    return srv


def test_enforced_signatures(serve):
    srv = start(serve, "--alternator-enforce-authorization",
                "--alternator-access-key-id", "k1", "--alternator-secret-access-key", "s3cr3t")
    good = client(srv, "k1", "s3cr3t")
    good.create_table(TableName="auth_t", BillingMode="PAY_PER_REQUEST",
                      KeySchema=[{"AttributeName": "p", "KeyType": "HASH"}],
                      AttributeDefinitions=[{"AttributeName": "p", "AttributeType": "S"}])
    good.put_item(TableName="auth_t", Item={"p": {"S": "x"}, "v": {"N": "1"}})
    assert good.get_item(TableName="auth_t", Key={"p": {"S": "x"}})["Item"]["v"] == {"N": "1"}

    # a wrong secret: ScyllaDB's type (its test_authorization.py test_wrong_password)
    assert error_code(lambda: client(srv, "k1", "wrong").list_tables()) == \
        "UnrecognizedClientException"
    assert error_code(lambda: client(srv, "other", "s3cr3t").list_tables()) == \
        "UnrecognizedClientException"

    conn = http.client.HTTPConnection(srv.host, srv.alt_port, timeout=10)
    conn.request("POST", "/", body="{}",
                 headers={"X-Amz-Target": "DynamoDB_20120810.ListTables",
                          "Content-Type": "application/x-amz-json-1.0"})
    resp = conn.getresponse()
    body = resp.read().decode()
    assert resp.status == 400
    assert "MissingAuthenticationTokenException" in body
    conn.close()
    # The health check needs no signature.
    conn = http.client.HTTPConnection(srv.host, srv.alt_port, timeout=10)
    conn.request("GET", "/")
    resp = conn.getresponse()
    assert resp.status == 200 and resp.read().decode() == f"healthy: {srv.host}:{srv.alt_port}"
    conn.close()
    # The server kept serving the signed client throughout.
    assert "auth_t" in good.list_tables()["TableNames"]


def test_signed_headers_repeated(serve):
    """A SignedHeaders list that names one long header a thousand times gets
    InvalidSignatureException: the canonical request it implies is longer
    than the buffer it is built in (each repeat used to be written past the
    end of it), and the server goes on serving."""
    srv = start(serve, "--alternator-enforce-authorization",
                "--alternator-access-key-id", "k1", "--alternator-secret-access-key", "s3cr3t")
    auth = ("AWS4-HMAC-SHA256 Credential=k1/20240101/us-east-1/dynamodb/aws4_request, "
            "SignedHeaders=" + ";".join(["x-big"] * 1000) + ", Signature=" + "0" * 64)
    for _ in range(3):
        conn = http.client.HTTPConnection(srv.host, srv.alt_port, timeout=10)
        conn.request("POST", "/", body="{}",
                     headers={"X-Amz-Target": "DynamoDB_20120810.ListTables",
                              "Content-Type": "application/x-amz-json-1.0",
                              "X-Amz-Date": "20240101T000000Z", "X-Big": "v" * 8000,
                              "Authorization": auth})
        resp = conn.getresponse()
        body = resp.read().decode()
        conn.close()
        assert resp.status == 400, body
        assert "InvalidSignatureException" in body, body
    assert "TableNames" in client(srv, "k1", "s3cr3t").list_tables()


def test_not_enforced_by_default(serve):
    srv = start(serve)
    assert isinstance(client(srv, "anyone", "anything").list_tables()["TableNames"], list)
