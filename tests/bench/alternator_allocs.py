#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Allocations per Alternator request on a running `shardmark serve`.

Creates a table, warms up, then sends N PutItem, GetItem, UpdateItem and
conditional UpdateItem requests over one keep-alive HTTP connection and
prints, per request kind, the server's allocation counter delta divided by
the requests (shardmark_allocs_total summed over shards, from the metrics
endpoint). The client's own cost does not enter the figure.

  tests/bench/alternator_allocs.py --port 8000 --metrics-port 9180 -n 2000
"""

import argparse
import http.client
import json
import re
import urllib.request


def allocs(port):
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    return sum(float(v) for v in re.findall(r'^shardmark_allocs_total\{[^}]*\} (\S+)', text, re.M))


def call(conn, op, body):
    conn.request("POST", "/", body=json.dumps(body),
                 headers={"X-Amz-Target": f"DynamoDB_20120810.{op}",
                          "Content-Type": "application/x-amz-json-1.0"})
    r = conn.getresponse()
    data = r.read()
    if r.status != 200:
        raise SystemExit(f"{op}: {r.status} {data[:200]!r}")
    return data


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--metrics-port", type=int, default=9180)
    ap.add_argument("-n", type=int, default=2000)
    a = ap.parse_args()
    conn = http.client.HTTPConnection("127.0.0.1", a.port, timeout=30)
    table = "allocs_bench"
    try:
        call(conn, "DeleteTable", {"TableName": table})
    except SystemExit:
        pass
    call(conn, "CreateTable", {"TableName": table, "BillingMode": "PAY_PER_REQUEST",
                               "KeySchema": [{"AttributeName": "p", "KeyType": "HASH"}],
                               "AttributeDefinitions": [{"AttributeName": "p",
                                                         "AttributeType": "S"}]})
    cols = {f"C{i}": {"S": "x" * 34} for i in range(5)}
    kinds = {
        "PutItem": lambda k: {"TableName": table, "Item": dict(cols, p={"S": k})},
        "GetItem": lambda k: {"TableName": table, "Key": {"p": {"S": k}}},
        "UpdateItem (SET, not RMW)": lambda k: {
            "TableName": table, "Key": {"p": {"S": k}},
            "UpdateExpression": "SET C0 = :v", "ExpressionAttributeValues": {":v": {"S": "y"}}},
        "UpdateItem (condition, RMW)": lambda k: {
            "TableName": table, "Key": {"p": {"S": k}},
            "UpdateExpression": "SET C1 = :v", "ConditionExpression": "attribute_exists(p)",
            "ExpressionAttributeValues": {":v": {"S": "z"}}},
    }
    for name, body in kinds.items():
        op = name.split()[0]
        for i in range(200):  # warm-up: pools and buffers reach their size
            call(conn, op, body(str(i % 100)))
        before = allocs(a.metrics_port)
        for i in range(a.n):
            call(conn, op, body(str(i % 100)))
        after = allocs(a.metrics_port)
        print(f"{name:30s} {(after - before) / a.n:8.3f} allocs/request")
    call(conn, "DeleteTable", {"TableName": table})


if __name__ == "__main__":
    main()
