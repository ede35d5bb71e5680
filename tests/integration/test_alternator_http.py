# SPDX-License-Identifier: BSD-3-Clause
"""Alternator: HTTP and authorization details, as DynamoDB answers them.

Rewritten from ScyllaDB's test/alternator/test_compressed_request.py,
test_cors.py, test_http_headers.py and test_authorization.py (names in the
comments are theirs): compressed request bodies, CORS headers, the Date
header, and with alternator_enforce_authorization expired and future-dated
signatures, components without whitespace, and SigV4's whitespace
canonicalization of header values.
"""

import datetime
import gzip
import http.client
import json

import pytest

boto3 = pytest.importorskip("boto3")
botocore = pytest.importorskip("botocore")

from botocore.auth import SigV4Auth  # noqa: E402
from botocore.awsrequest import AWSRequest  # noqa: E402
from botocore.credentials import Credentials  # noqa: E402

from conftest import (ALT_ACCESS_KEY, ALT_SECRET_KEY, alt_create_table,  # noqa: E402
                      alt_raw, free_port)


@pytest.fixture(scope="module")
def table(dynamodb):
    t = alt_create_table(dynamodb, range_key=("c", "S"))
    yield t
    t.delete()


def put_body(table, p):
    return json.dumps({"TableName": table.name,
                       "Item": {"p": {"S": p}, "c": {"S": "x"}}}).encode()


def absent(table, p):
    return "Item" not in table.get_item(Key={"p": p, "c": "x"}, ConsistentRead=True)


def gz(data):
    return gzip.compress(data)


# test_garbage_content_encoding, test_broken_gzip_content,
# test_gzip_request_valid, test_gzip_request_two_gzips,
# test_gzip_request_with_extra_junk, test_gzip_request_with_missing_character,
# test_gzip_request_oversized, test_gzip_request_empty
def test_compressed(alternator_server, table):
    srv = alternator_server
    enc = {"Content-Encoding": "gzip"}
    r = alt_raw(srv, "PutItem", put_body(table, "garbage"),
                headers={"Content-Encoding": "garbage"})
    assert r.status == 500 and absent(table, "garbage")
    r = alt_raw(srv, "PutItem", put_body(table, "notgz"), headers=enc)
    assert r.status == 500 and absent(table, "notgz")
    r = alt_raw(srv, "PutItem", gz(put_body(table, "valid")), headers=enc)
    assert r.status == 200 and not absent(table, "valid")
    b = put_body(table, "two")
    r = alt_raw(srv, "PutItem", gz(b[:10]) + gz(b[10:]), headers=enc)
    assert r.status == 200 and not absent(table, "two")
    r = alt_raw(srv, "PutItem", gz(put_body(table, "junk")) + b"junk", headers=enc)
    assert r.status == 500 and absent(table, "junk")
    r = alt_raw(srv, "PutItem", gz(put_body(table, "short"))[:-1], headers=enc)
    assert r.status == 500 and absent(table, "short")
    big = put_body(table, "big")
    big = big[:-1] + b" " * (20 * 1024 * 1024) + big[-1:]
    r = alt_raw(srv, "PutItem", gz(big), headers=enc)
    assert r.status == 413 and absent(table, "big")
    r = alt_raw(srv, "PutItem", b"", headers=enc)
    assert r.status == 500


CORS = ["Access-Control-Allow-Origin", "Access-Control-Allow-Credentials",
        "Access-Control-Expose-Headers", "Access-Control-Max-Age",
        "Access-Control-Allow-Methods", "Access-Control-Allow-Headers"]


def request(srv, method, headers=None, body=None):
    conn = http.client.HTTPConnection(srv.host, srv.alt_port, timeout=10)
    try:
        conn.request(method, "/", body=body, headers=headers or {})
        resp = conn.getresponse()
        resp.read()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}
    finally:
        conn.close()


# test_cors_not_used, test_cors_allow_origin, test_cors_allow_requested
def test_cors(alternator_server):
    for method in ("OPTIONS", "GET", "POST"):
        _, h = request(alternator_server, method)
        assert not any(c.lower() in h for c in CORS), (method, h)
    asked = {"Origin": "http://example.com/", "Access-Control-Request-Method": "dog",
             "Access-Control-Request-Headers": "cat, meerkat, mouse"}
    for method in ("OPTIONS", "GET", "POST"):
        for headers in ({"Origin": "http://example.com/"}, asked):
            _, h = request(alternator_server, method, headers)
            assert h["access-control-allow-origin"] == "*"
            assert "access-control-expose-headers" in h
            assert ("access-control-max-age" in h) == (method == "OPTIONS")
            if method == "OPTIONS" and headers is asked:
                assert h["access-control-allow-methods"] == "dog"
                assert h["access-control-allow-headers"] == "cat, meerkat, mouse"
            elif method != "OPTIONS":
                assert "access-control-allow-methods" not in h
                assert "access-control-allow-headers" not in h


# test_config_date_header (its default part), test_server_header (none by default)
def test_date_header(dynamodb, table):
    r = table.get_item(Key={"p": "x", "c": "x"})
    h = r["ResponseMetadata"]["HTTPHeaders"]
    assert "server" not in h
    d = datetime.datetime.strptime(h["date"], "%a, %d %b %Y %H:%M:%S GMT")
    assert d.year >= 2024
    with pytest.raises(botocore.exceptions.ClientError) as e:
        dynamodb.meta.client.describe_table(TableName="nonexistent_table_xxxxx")
    assert "date" in e.value.response["ResponseMetadata"]["HTTPHeaders"]
    assert "content-type" in e.value.response["ResponseMetadata"]["HTTPHeaders"]


@pytest.fixture
def enforced(serve):
    port = free_port()
    srv = serve("--smp", "1", "--alternator-port", str(port), "--alternator-enforce-authorization",
                "--alternator-access-key-id", ALT_ACCESS_KEY,
                "--alternator-secret-access-key", ALT_SECRET_KEY, echo=False)
    srv.alt_port = port
    srv.wait_ready(ports=[port])
    return srv


def signed(srv, op, body, extra=None):
    """Headers of a request signed as boto3 signs it (botocore's SigV4Auth)."""
    url = f"http://{srv.host}:{srv.alt_port}/"
    headers = {"Content-Type": "application/x-amz-json-1.0",
               "X-Amz-Target": "DynamoDB_20120810." + op,
               "Host": f"{srv.host}:{srv.alt_port}"}
    headers.update(extra or {})
    req = AWSRequest(method="POST", url=url, data=body, headers=headers)
    SigV4Auth(Credentials(ALT_ACCESS_KEY, ALT_SECRET_KEY), "dynamodb", "us-east-1").add_auth(req)
    return dict(req.headers.items())


def post(srv, headers, body=b"{}"):
    conn = http.client.HTTPConnection(srv.host, srv.alt_port, timeout=10)
    try:
        conn.putrequest("POST", "/", skip_host=True, skip_accept_encoding=True)
        for k, v in headers.items():
            conn.putheader(k, v)
        conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        resp = conn.getresponse()
        return resp.status, resp.read().decode()
    finally:
        conn.close()


# test_expired_signature, test_signature_too_futuristic, test_no_authorization_header,
# test_wrong_key_access, test_wrong_password, test_authorization_no_whitespace
def test_signatures(enforced):
    srv = enforced
    base = {"Content-Type": "application/x-amz-json-1.0",
            "X-Amz-Target": "DynamoDB_20120810.DescribeEndpoints",
            "Host": f"{srv.host}:{srv.alt_port}"}
    auth = ("AWS4-HMAC-SHA256 Credential=" + ALT_ACCESS_KEY +
            "/2/3/4/aws4_request SignedHeaders=x-amz-date;host Signature=123")
    st, body = post(srv, dict(base, **{"X-Amz-Date": "20170101T010101Z", "Authorization": auth}))
    assert st == 400 and "InvalidSignatureException" in body and "Signature expired" in body
    st, body = post(srv, dict(base, **{"X-Amz-Date": "30200101T010101Z", "Authorization": auth}))
    assert st == 400 and "InvalidSignatureException" in body
    assert "Signature not yet current" in body
    st, body = post(srv, dict(base, **{"X-Amz-Date": "20170101T010101Z"}))
    assert st == 400 and "MissingAuthenticationTokenException" in body
    url = f"http://{srv.host}:{srv.alt_port}"
    for key, secret in (("whatever", ""), (ALT_ACCESS_KEY, "wrong_key")):
        c = boto3.client("dynamodb", endpoint_url=url, region_name="us-east-1",
                         aws_access_key_id=key, aws_secret_access_key=secret or "x",
                         config=botocore.config.Config(retries={"max_attempts": 0}))
        with pytest.raises(botocore.exceptions.ClientError, match="UnrecognizedClientException"):
            c.describe_endpoints()
    # components separated by commas only
    h = signed(srv, "ListTables", b"{}")
    a = h["Authorization"].split()
    h["Authorization"] = a[0] + " " + "".join(a[1:])
    st, body = post(srv, h)
    assert st == 200, body


def test_header_whitespace_canonicalized(enforced):
    """SigV4 signs a header's value trimmed, inner runs of spaces as one: a
    value sent with extra spaces still matches the signature."""
    srv = enforced
    h = signed(srv, "ListTables", b"{}", {"X-Test": "a b c"})
    # botocore signed X-Test too (it signs every header it was given)
    assert "x-test" in h["Authorization"]
    h["X-Test"] = "  a   b \t c  "
    st, body = post(srv, h)
    assert st == 200, body
    h["X-Test"] = "a b d"
    st, body = post(srv, h)
    assert st == 400 and "UnrecognizedClientException" in body
