# SPDX-License-Identifier: BSD-3-Clause
"""Alternator endpoint: bad input over raw HTTP.

What boto3 never sends, as raw HTTP/1.1 over http.client and plain sockets:
malformed JSON (SerializationException), JSON that is not an object
(ValidationException), an unknown or missing X-Amz-Target
(UnknownOperationException), a body over 16 MB (413, from the headers
alone), a client that stops mid-body or mid-headers and disconnects, deep
nesting, malformed attribute values, a missing table
(ResourceNotFoundException), the GET / health check, keep-alive and
pipelined requests, and the error reply's shape. After each, a normal
request on another connection still works.
"""

import gzip
import json
import socket
import zlib

import pytest

pytest.importorskip("boto3")

from conftest import (ALT_CONTENT_TYPE, ALT_TARGET_PREFIX, alt_assert_serving,  # noqa: E402
                      alt_create_table, alt_raw, alt_resource, connect, host_of, http_get)

RAW_TIMEOUT = 10.0
DEEP_TIMEOUT = 20.0


@pytest.fixture(scope="module")
def env(alternator_server, dynamodb):
    t = alt_create_table(dynamodb)
    t.put_item(Item={"p": "canary", "v": 1})
    alternator_server.table = t
    yield alternator_server
    t.delete()


def still_serving(env):
    assert env.proc.poll() is None, env.describe()
    alt_assert_serving(env, env.table.name, {"p": {"S": "canary"}})


def request_bytes(port, op, body, extra_headers=(), content_length=None):
    if isinstance(body, str):
        body = body.encode()
    n = len(body) if content_length is None else content_length
    lines = [b"POST / HTTP/1.1", f"Host: {host_of(port)}:{port}".encode(),
             f"Content-Type: {ALT_CONTENT_TYPE}".encode(),
             f"Content-Length: {n}".encode()]
    if op is not None:
        lines.append(f"X-Amz-Target: {ALT_TARGET_PREFIX}{op}".encode())
    lines += [h.encode() for h in extra_headers]
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


def read_response(sock, buf=b""):
    """One HTTP/1.1 response from a socket (after the bytes already read in
    `buf`) -> (status, {header: value}, body, bytes read past it)."""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            raise EOFError(f"connection closed after {buf[:200]!r}")
        buf += chunk
    head, _, rest = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    n = int(headers.get("content-length", "0"))
    while len(rest) < n:
        chunk = sock.recv(65536)
        if not chunk:
            raise EOFError("connection closed inside the body")
        rest += chunk
    return status, headers, rest[:n], rest[n:]


def error_of(body):
    obj = json.loads(body)
    return obj["__type"].rsplit("#", 1)[-1], obj.get("message", "")


# --- bodies -------------------------------------------------------------------------

@pytest.mark.parametrize("body", ['{"TableName": ', "}}}", "}{", "habababa", "{7}",
                                  '{"2":{}', "{,}", '{"a": "b",}', '{"a" "b"}', "{{}}",
                                  '{"TableName": "x"', '"unterminated', "{" * 1000])
def test_malformed_json(env, body):
    r = alt_raw(env, "PutItem", body)
    assert r.status == 400, r
    assert r.error_type == "SerializationException", r
    assert r.headers.get("content-type") == ALT_CONTENT_TYPE, r.headers
    still_serving(env)


@pytest.mark.parametrize("body", ["[1, 2]", "[]", '"a string"', "7", "true", "null"])
def test_json_not_an_object(env, body):
    r = alt_raw(env, "PutItem", body)
    assert r.status == 400, r
    assert r.error_type == "ValidationException", r
    still_serving(env)


def test_empty_body(env):
    r = alt_raw(env, "ListTables", b"")
    assert r.status == 400, r
    assert r.error_type in ("SerializationException", "ValidationException"), r
    still_serving(env)


def test_invalid_utf8(env):
    body = b'{"TableName": "' + env.table.name.encode() + b'", "Item": {"p": {"S": "\xff\xfe"}}}'
    r = alt_raw(env, "PutItem", body)
    assert r.status == 400, r
    assert r.error_type in ("SerializationException", "ValidationException"), r
    still_serving(env)


def test_deeply_nested_json(alternator):
    """200000 levels of JSON nesting (1.2 MB) must not crash or stall the
    server; an error is the expected answer. On a server of its own, so that
    a stalled shard does not spoil the other tests."""
    srv = alternator()
    dynamodb = alt_resource(srv)
    table = alt_create_table(dynamodb)
    deep = '{"":' * 200000 + "{}" + "}" * 200000
    body = ('{"TableName": "' + table.name + '", "Item": {"p": {"S": "deep"}, "a": '
            + deep + "}}")
    r = alt_raw(srv, "PutItem", body, timeout=DEEP_TIMEOUT)
    assert r.status == 400, r
    assert r.error_type in ("SerializationException", "ValidationException"), r
    assert "Item" not in table.get_item(Key={"p": "deep"}, ConsistentRead=True)


def nested_value(levels):
    value = {"S": "leaf"}
    for _ in range(levels):
        value = {"M": {"a": value}}
    return value


def test_attribute_nesting_limit(env):
    """DynamoDB allows 32 levels of nested attribute values: 30 nested maps
    are stored, 40 are refused."""
    r = alt_raw(env, "PutItem", {"TableName": env.table.name,
                                 "Item": {"p": {"S": "deep30"}, "a": nested_value(30)}})
    assert r.status == 200, r
    r = alt_raw(env, "GetItem", {"TableName": env.table.name, "Key": {"p": {"S": "deep30"}},
                                 "ConsistentRead": True})
    assert r.json["Item"]["a"] == nested_value(30)
    r = alt_raw(env, "PutItem", {"TableName": env.table.name,
                                 "Item": {"p": {"S": "deep40"}, "a": nested_value(40)}})
    assert r.status == 400, r
    assert r.error_type in ("ValidationException", "SerializationException"), r
    assert "nest" in r.message.lower(), r
    still_serving(env)


@pytest.mark.parametrize("value", [{"L": "notalist"}, {"M": ["notamap"]}, {"XYZ": "q"},
                                   {"S": 5}, {"N": 5}, {"B": "not base64!"}, {"SS": "x"},
                                   {"NS": [1, 2]}, {"S": None}, "plain", 5, None, []])
def test_malformed_attribute_values(env, value):
    r = alt_raw(env, "PutItem", {"TableName": env.table.name,
                                 "Item": {"p": {"S": "malformed"}, "a": value}})
    assert r.status == 400, (value, r)
    assert r.error_type in ("ValidationException", "SerializationException"), (value, r)
    r = alt_raw(env, "GetItem", {"TableName": env.table.name, "Key": {"p": {"S": "malformed"}},
                                 "ConsistentRead": True})
    assert r.status == 200 and "Item" not in r.json, r
    still_serving(env)


@pytest.mark.parametrize("body", [{"TableName": 5}, {"TableName": ["x"]},
                                  {"TableName": None}, {"Item": {"p": {"S": "x"}}},
                                  {"TableName": "{table}", "Item": "notamap"},
                                  {"TableName": "{table}", "Item": [1]}])
def test_wrong_parameter_types(env, body):
    body = {k: (env.table.name if v == "{table}" else v) for k, v in body.items()}
    r = alt_raw(env, "PutItem", body)
    assert r.status == 400, r
    assert r.error_type in ("ValidationException", "SerializationException"), r
    still_serving(env)


def test_compressed_requests(env):
    """Content-Encoding gzip and deflate bodies are accepted; an unknown
    encoding or a corrupt gzip body is refused."""
    for enc, pack in (("gzip", gzip.compress), ("deflate", zlib.compress)):
        body = json.dumps({"TableName": env.table.name,
                           "Item": {"p": {"S": f"z-{enc}"}, "a": {"S": "y" * 5000}}}).encode()
        r = alt_raw(env, "PutItem", pack(body), headers={"Content-Encoding": enc})
        assert r.status == 200, (enc, r)
        r = alt_raw(env, "GetItem", {"TableName": env.table.name, "Key": {"p": {"S": f"z-{enc}"}},
                                     "ConsistentRead": True})
        assert r.json["Item"]["a"] == {"S": "y" * 5000}, enc
    body = json.dumps({"TableName": env.table.name, "Item": {"p": {"S": "z-bad"}}}).encode()
    r = alt_raw(env, "PutItem", body, headers={"Content-Encoding": "br"})
    assert r.status >= 400 and r.error_type is not None, r
    r = alt_raw(env, "PutItem", gzip.compress(body)[:-8] + b"garbage!",
                headers={"Content-Encoding": "gzip"})
    assert r.status >= 400 and r.error_type is not None, r
    r = alt_raw(env, "GetItem", {"TableName": env.table.name, "Key": {"p": {"S": "z-bad"}},
                                 "ConsistentRead": True})
    assert "Item" not in r.json, "a refused body was applied"
    still_serving(env)


# --- operations ---------------------------------------------------------------------

@pytest.mark.parametrize("op", ["FlyToMoon", "TransactWriteItems", "putitem", "", "PutItem2"])
def test_unknown_operation(env, op):
    r = alt_raw(env, op, {"TableName": env.table.name})
    assert r.status == 400, r
    assert r.error_type == "UnknownOperationException", r
    still_serving(env)


def test_missing_target(env):
    r = alt_raw(env, None, {})
    assert r.status == 400, r
    assert r.error_type == "UnknownOperationException", r
    # The prefix before the '.' is not checked.
    r = alt_raw(env, None, {}, headers={"X-Amz-Target": "Whatever.ListTables"})
    assert r.status == 200, r
    assert env.table.name in r.json["TableNames"]
    still_serving(env)


def test_missing_table(env):
    for op, body in (("GetItem", {"Key": {"p": {"S": "x"}}}),
                     ("PutItem", {"Item": {"p": {"S": "x"}}}),
                     ("DescribeTable", {}), ("DeleteTable", {}), ("Scan", {}),
                     ("Query", {"KeyConditionExpression": "p = :p",
                                "ExpressionAttributeValues": {":p": {"S": "x"}}})):
        r = alt_raw(env, op, dict(body, TableName="no_such_table_here"))
        assert r.status == 400, (op, r)
        assert r.error_type == "ResourceNotFoundException", (op, r)
        assert r.message, (op, r)
    still_serving(env)


def test_reply_shape(env):
    r = alt_raw(env, "DescribeTable", {"TableName": "no_such_table_here"})
    assert r.headers.get("content-type") == ALT_CONTENT_TYPE, r.headers
    assert r.json["__type"] == "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException", r
    assert set(r.json) == {"__type", "message"}, r
    r = alt_raw(env, "PutItem", {"TableName": env.table.name, "Item": {"p": {"S": "shape"}}})
    assert r.status == 200, r
    assert r.json == {}, "a write answers {}"
    assert r.headers.get("content-type") == ALT_CONTENT_TYPE, r.headers
    # TagResource answers with an empty body.
    arn = alt_raw(env, "DescribeTable", {"TableName": env.table.name}).json["Table"]["TableArn"]
    r = alt_raw(env, "TagResource", {"ResourceArn": arn, "Tags": [{"Key": "k", "Value": "v"}]})
    assert r.status == 200 and r.body == b"", r
    r = alt_raw(env, "UntagResource", {"ResourceArn": arn, "TagKeys": ["k"]})
    assert r.status == 200 and r.body == b"", r


# --- HTTP ---------------------------------------------------------------------------

def test_health_check(env):
    status, ctype, body = http_get(env.alt_port, "/")
    assert status == 200
    assert body.strip() == f"healthy: {env.host}:{env.alt_port}"
    for path in ("/abc", "/-", "/index.htm", "/health"):
        status, _, _ = http_get(env.alt_port, path)
        assert 400 <= status <= 404, (path, status)
    still_serving(env)


def test_oversized_body_413(env):
    """Content-Length over 16 MB is refused from the headers alone."""
    s = connect(env.alt_port, timeout=RAW_TIMEOUT)
    try:
        s.sendall(request_bytes(env.alt_port, "PutItem", b"", content_length=20000000))
        status, _, body, _ = read_response(s)
        assert status == 413, (status, body[:200])
    finally:
        s.close()
    still_serving(env)


def test_body_just_under_limit_is_read(env):
    """A 1 MB body is read in full (it is then refused as too large an item
    or accepted, but it gets a JSON answer)."""
    big = "x" * (1 << 20)
    r = alt_raw(env, "PutItem", {"TableName": env.table.name,
                                 "Item": {"p": {"S": "onemb"}, "a": {"S": big}}})
    assert r.status in (200, 400), r
    if r.status == 400:
        assert r.error_type == "ValidationException", r
    still_serving(env)


@pytest.mark.parametrize("cut", ["mid-body", "mid-headers", "after-request-line", "nothing"])
def test_client_disconnects_early(env, cut):
    full = request_bytes(env.alt_port, "PutItem",
                         json.dumps({"TableName": env.table.name,
                                     "Item": {"p": {"S": "cut"}, "a": {"S": "x" * 5000}}}))
    head_len = full.index(b"\r\n\r\n") + 4
    upto = {"mid-body": head_len + 1000, "mid-headers": head_len // 2,
            "after-request-line": full.index(b"\r\n") + 2, "nothing": 0}[cut]
    for _ in range(5):
        s = connect(env.alt_port, timeout=RAW_TIMEOUT)
        if upto:
            s.sendall(full[:upto])
        s.close()
    # An abrupt reset (RST) mid-body too.
    s = connect(env.alt_port, timeout=RAW_TIMEOUT)
    s.sendall(full[:head_len + 10])
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    s.close()
    still_serving(env)
    r = alt_raw(env, "GetItem", {"TableName": env.table.name, "Key": {"p": {"S": "cut"}},
                                 "ConsistentRead": True})
    assert r.status == 200 and "Item" not in r.json, "a cut request was applied"


def test_chunked_and_lengthless_requests(env):
    """A chunked body is either served or refused, never left hanging; a POST
    without Content-Length is answered too."""
    body = json.dumps({"TableName": env.table.name,
                       "Item": {"p": {"S": "chunked"}, "a": {"S": "c"}}}).encode()
    head = (f"POST / HTTP/1.1\r\nHost: {env.host}:{env.alt_port}\r\n"
            f"Content-Type: {ALT_CONTENT_TYPE}\r\nX-Amz-Target: {ALT_TARGET_PREFIX}PutItem\r\n"
            "Transfer-Encoding: chunked\r\n\r\n").encode()
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + 20]), body[i:i + 20])
                      for i in range(0, len(body), 20)) + b"0\r\n\r\n"
    s = connect(env.alt_port, timeout=RAW_TIMEOUT)
    try:
        s.sendall(head + chunks)
        status, _, reply, _ = read_response(s)
    finally:
        s.close()
    r = alt_raw(env, "GetItem", {"TableName": env.table.name, "Key": {"p": {"S": "chunked"}},
                                 "ConsistentRead": True})
    if status == 200:
        assert r.json["Item"] == {"p": {"S": "chunked"}, "a": {"S": "c"}}
    else:
        assert 400 <= status < 600, (status, reply)
        assert "Item" not in r.json
    s = connect(env.alt_port, timeout=RAW_TIMEOUT)
    try:
        s.sendall((f"POST / HTTP/1.1\r\nHost: {env.host}:{env.alt_port}\r\n"
                   f"X-Amz-Target: {ALT_TARGET_PREFIX}ListTables\r\n\r\n").encode())
        status, _, reply, _ = read_response(s)
        assert status in (200, 400, 411), (status, reply)
    finally:
        s.close()
    still_serving(env)


def test_keep_alive_and_pipelining(env):
    s = connect(env.alt_port, timeout=RAW_TIMEOUT)
    try:
        reqs = [request_bytes(env.alt_port, "PutItem",
                              json.dumps({"TableName": env.table.name,
                                          "Item": {"p": {"S": f"ka{i}"}, "i": {"N": str(i)}}}))
                for i in range(3)]
        # One after the other on one connection.
        leftover = b""
        for req in reqs:
            s.sendall(req)
            status, _, body, leftover = read_response(s)
            assert status == 200 and json.loads(body) == {}, body
            assert leftover == b""
        # Pipelined: all at once, answered in order.
        gets = [request_bytes(env.alt_port, "GetItem",
                              json.dumps({"TableName": env.table.name,
                                          "Key": {"p": {"S": f"ka{i}"}},
                                          "ConsistentRead": True})) for i in range(3)]
        s.sendall(b"".join(gets))
        pending = b""
        answers = []
        for _ in range(3):
            status, _, body, pending = read_response(s, pending)
            assert status == 200, body
            answers.append(json.loads(body)["Item"]["i"]["N"])
        assert answers == ["0", "1", "2"]
    finally:
        s.close()
    still_serving(env)


def test_errors_keep_the_connection(env):
    """API errors are ordinary 400 answers: the connection stays usable."""
    s = connect(env.alt_port, timeout=RAW_TIMEOUT)
    try:
        for _ in range(3):
            s.sendall(request_bytes(env.alt_port, "DescribeTable",
                                    json.dumps({"TableName": "no_such_table_here"})))
            status, _, body, rest = read_response(s)
            assert status == 400 and error_of(body)[0] == "ResourceNotFoundException", body
            assert rest == b""
            s.sendall(request_bytes(env.alt_port, "DescribeTable",
                                    json.dumps({"TableName": env.table.name})))
            status, _, body, rest = read_response(s)
            assert status == 200, body
            assert json.loads(body)["Table"]["TableName"] == env.table.name
    finally:
        s.close()
    still_serving(env)


def test_malformed_then_next_connection(env):
    """After a malformed request the server may close that connection; the
    next connection is served."""
    s = connect(env.alt_port, timeout=RAW_TIMEOUT)
    try:
        s.sendall(request_bytes(env.alt_port, "PutItem", "not json"))
        status, _, body, _ = read_response(s)
        assert status == 400 and error_of(body)[0] == "SerializationException", body
    finally:
        s.close()
    still_serving(env)
