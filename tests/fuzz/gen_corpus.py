#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the fuzz harnesses' seed corpora (tests/fuzz/corpus/<name>/).

Each seed is a small, valid (or nearly valid) input in the harness's input
format, made from what the unit and integration tests send: CQL sessions as
v4 frames, HTTP requests, DynamoDB request JSON, expressions with their maps
and an item, and lib/tcpip command streams. The output is deterministic, so
running it again changes nothing unless this file changed. Reproducers of
bugs the fuzzers found (repro-*, added by hand) are kept.
    tests/fuzz/gen_corpus.py
"""

import hashlib
import json
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus")


def write(name, seeds):
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        if not f.startswith("repro-"):
            os.remove(os.path.join(d, f))
    for fname, data in seeds:
        with open(os.path.join(d, fname), "wb") as f:
            f.write(data)


# ---- CQL: control byte, then v4 frames ----

OP_STARTUP, OP_OPTIONS, OP_QUERY, OP_PREPARE, OP_EXECUTE, OP_REGISTER, OP_BATCH, \
    OP_AUTH_RESPONSE = 0x01, 0x05, 0x07, 0x09, 0x0A, 0x0B, 0x0D, 0x0F
ONE, SERIAL = 0x0001, 0x0008


def frame(op, body, stream, flags=0):
    return struct.pack(">BBhBI", 4, flags, stream, op, len(body)) + body


def cstring(s):
    b = s.encode()
    return struct.pack(">H", len(b)) + b


def long_string(s):
    b = s.encode()
    return struct.pack(">I", len(b)) + b


def cbytes(b):
    if b is None:
        return struct.pack(">i", -1)
    return struct.pack(">i", len(b)) + b


def string_map(d):
    return struct.pack(">H", len(d)) + b"".join(cstring(k) + cstring(v) for k, v in d.items())


def params(values=None, page_size=None, paging=None, serial=False, timestamp=None):
    flags, tail = 0, b""
    if values is not None:
        flags |= 0x01
        tail += struct.pack(">H", len(values)) + b"".join(cbytes(v) for v in values)
    if page_size is not None:
        flags |= 0x04
        tail += struct.pack(">i", page_size)
    if paging is not None:
        flags |= 0x08
        tail += cbytes(paging)
    if serial:
        flags |= 0x10
        tail += struct.pack(">H", SERIAL)
    if timestamp is not None:
        flags |= 0x20
        tail += struct.pack(">q", timestamp)
    return struct.pack(">HB", ONE, flags) + tail


def lz4_literals(data):
    """An LZ4 block of literals only (valid, just not compressed)."""
    n = len(data)
    out = bytearray([min(n, 15) << 4])
    if n >= 15:
        rest = n - 15
        while rest >= 255:
            out.append(255)
            rest -= 255
        out.append(rest)
    return bytes(out) + data


class Session:
    """Frames of one connection, numbered streams, LZ4 after STARTUP when asked."""

    def __init__(self, lz4=False, ks=""):
        self.out, self.stream, self.lz4, self.ks = b"", 0, lz4, ks
        opts = {"CQL_VERSION": "3.0.0"}
        if lz4:
            opts["COMPRESSION"] = "lz4"
        self.add(OP_STARTUP, string_map(opts), plain=True)

    def add(self, op, body, plain=False):
        self.stream += 1
        if self.lz4 and not plain:
            body = struct.pack(">I", len(body)) + lz4_literals(body)
            self.out += frame(op, body, self.stream, flags=0x01)
        else:
            self.out += frame(op, body, self.stream)

    def query(self, q, **kw):
        self.add(OP_QUERY, long_string(q) + params(**kw))

    def use(self, ks):
        self.query("USE " + ks)
        self.ks = ks

    def prepare(self, q):
        self.add(OP_PREPARE, long_string(q))
        return hashlib.md5(self.ks.encode() + q.encode()).digest()

    def execute(self, q, values, **kw):
        self.add(OP_EXECUTE, cstring_bytes(hashlib.md5(self.ks.encode() + q.encode()).digest())
                 + params(values=values, **kw))

    def batch(self, stmts, kind=0):
        body = struct.pack(">BH", kind, len(stmts))
        for q, values in stmts:
            body += b"\x00" + long_string(q) + struct.pack(">H", len(values))
            body += b"".join(cbytes(v) for v in values)
        body += struct.pack(">HB", ONE, 0)
        self.add(OP_BATCH, body)


def cstring_bytes(b):
    return struct.pack(">H", len(b)) + b


def i32(v):
    return struct.pack(">i", v)


def i64(v):
    return struct.pack(">q", v)


KS = ("CREATE KEYSPACE ks WITH replication = "
      "{'class': 'SimpleStrategy', 'replication_factor': 1}")

TABLES = {
    "kv": "CREATE TABLE ks.kv (k int PRIMARY KEY, v int, bl blob)",
    "wide": ("CREATE TABLE ks.wide (pk int, ck text, v blob, s int static, "
             "PRIMARY KEY (pk, ck)) WITH CLUSTERING ORDER BY (ck DESC)"),
    "types": ("CREATE TABLE ks.types (k text PRIMARY KEY, a ascii, b bigint, c boolean, "
              "d decimal, e double, f float, g inet, h smallint, i tinyint, j timestamp, "
              "l timeuuid, m uuid, n varint, o date, p time, q duration, r varchar)"),
    "coll": ("CREATE TABLE ks.coll (k int PRIMARY KEY, l list<int>, s set<text>, "
             "m map<text, int>, f frozen<list<int>>)"),
    "cnt": "CREATE TABLE ks.cnt (k int PRIMARY KEY, c counter)",
    "comp": ("CREATE TABLE ks.comp (a int, b text, c int, d int, v text, "
             "PRIMARY KEY ((a, b), c, d))"),
}


def cql_seeds():
    seeds = []

    def session(name, build, ctl=0, lz4=False, tables=("kv",)):
        """A keyspace and @tables, then @build: a list of statements or a function."""
        s = Session(lz4=lz4)
        s.query(KS)
        for t in tables:
            s.query(TABLES[t])
        if callable(build):
            build(s)
        else:
            for q in build:
                s.query(q)
        seeds.append((name, bytes([ctl]) + s.out))

    session("crud", (
        "INSERT INTO ks.kv (k, v, bl) VALUES (1, 2, 0x0102)",
        "UPDATE ks.kv SET v = 3 WHERE k = 1",
        "SELECT * FROM ks.kv WHERE k = 1",
        "DELETE v FROM ks.kv WHERE k = 1",
        "DELETE FROM ks.kv WHERE k = 1",
        "SELECT k, v, writetime(v), ttl(v) FROM ks.kv"))
    session("wide", (
        "INSERT INTO ks.wide (pk, ck, v, s) VALUES (1, 'a', 0x01, 7)",
        "INSERT INTO ks.wide (pk, ck, v) VALUES (1, 'b', 0x02) USING TTL 100",
        "INSERT INTO ks.wide (pk, ck, v) VALUES (1, 'c', 0x03) USING TIMESTAMP 5",
        "SELECT * FROM ks.wide WHERE pk = 1 AND ck > 'a' AND ck <= 'c' ORDER BY ck ASC",
        "SELECT * FROM ks.wide WHERE pk IN (1, 2) LIMIT 2",
        "SELECT DISTINCT pk, s FROM ks.wide",
        "SELECT COUNT(*) FROM ks.wide WHERE pk = 1",
        "SELECT * FROM ks.wide PER PARTITION LIMIT 1",
        "DELETE FROM ks.wide WHERE pk = 1 AND ck >= 'b'",
        "SELECT * FROM ks.wide WHERE token(pk) > -100 AND token(pk) <= 9000000000"),
        tables=("wide",))
    session("types", (
        "INSERT INTO ks.types (k, a, b, c, d, e, f, g, h, i, j, l, m, n, o, p, q, r) VALUES "
        "('x', 'asc', -9223372036854775808, true, 1.5e-3, 1e308, -0.5, '::1', 32767, -128, "
        "'2024-01-02 03:04:05+0000', now(), 123e4567-e89b-12d3-a456-426614174000, "
        "123456789012345678901234567890, '2024-02-29', '12:34:56.789', 1h30m, 'v')",
        "SELECT * FROM ks.types WHERE k = 'x'", "SELECT JSON * FROM ks.types"), tables=("types",))
    session("collections", (
        "INSERT INTO ks.coll (k, l, s, m, f) VALUES (1, [1, 2], {'a', 'b'}, "
        "{'x': 1}, [3])",
        "UPDATE ks.coll SET l = l + [3], s = s - {'a'}, m['z'] = 2 WHERE k = 1",
        "UPDATE ks.coll SET l = [0] + l, l[1] = 9, m = m - {'x'} WHERE k = 1",
        "DELETE l[0], m['z'] FROM ks.coll WHERE k = 1",
        "SELECT * FROM ks.coll WHERE k = 1",
        "SELECT * FROM ks.coll WHERE s CONTAINS 'b' ALLOW FILTERING"),
        tables=("coll",))
    session("index", (
        "INSERT INTO ks.wide (pk, ck, v, s) VALUES (1, 'a', 0x01, 7)",
        "CREATE INDEX ON ks.wide (v)",
        "CREATE INDEX si ON ks.wide (s)",
        "CREATE INDEX lc ON ks.wide ((pk), ck)",
        "CREATE INDEX ON ks.coll (keys(m))",
        "CREATE INDEX ON ks.coll (s)",
        "INSERT INTO ks.wide (pk, ck, v) VALUES (2, 'b', 0x01) USING TTL 100",
        "UPDATE ks.wide SET v = 0x02, s = 8 WHERE pk = 1 AND ck = 'a'",
        "INSERT INTO ks.coll (k, s, m) VALUES (1, {'a', ''}, {'x': 1})",
        "UPDATE ks.coll SET m['y'] = 2, s = s - {'a'} WHERE k = 1",
        "SELECT * FROM ks.wide WHERE v = 0x01",
        "SELECT * FROM ks.wide WHERE s = 8 LIMIT 1",
        "SELECT * FROM ks.wide WHERE pk = 1 AND ck = 'a'",
        "SELECT k FROM ks.coll WHERE m CONTAINS KEY 'y'",
        "SELECT k FROM ks.coll WHERE s CONTAINS ''",
        "DELETE FROM ks.wide WHERE pk = 2",
        "DROP INDEX ks.si",
        "SELECT index_name, options FROM system_schema.indexes",
        "TRUNCATE ks.wide",
        "DROP TABLE ks.coll"),
        tables=("wide", "coll"))
    session("views", (
        "INSERT INTO ks.wide (pk, ck, v, s) VALUES (1, 'a', 0x01, 7)",
        "CREATE MATERIALIZED VIEW ks.bv AS SELECT * FROM ks.wide WHERE v IS NOT NULL AND "
        "ck IS NOT NULL PRIMARY KEY (v, pk, ck)",
        "CREATE MATERIALIZED VIEW IF NOT EXISTS ks.ck AS SELECT pk, ck FROM ks.wide WHERE "
        "ck IS NOT NULL PRIMARY KEY (ck, pk) WITH CLUSTERING ORDER BY (pk DESC)",
        "CREATE MATERIALIZED VIEW ks.bad AS SELECT s FROM ks.wide PRIMARY KEY (pk)",
        "INSERT INTO ks.wide (pk, ck, v) VALUES (2, 'b', 0x01) USING TTL 100",
        "UPDATE ks.wide SET v = 0x02 WHERE pk = 1 AND ck = 'a'",
        "UPDATE ks.wide SET v = null WHERE pk = 2 AND ck = 'b'",
        "SELECT * FROM ks.bv WHERE v = 0x02",
        "SELECT * FROM ks.ck WHERE ck = 'a' AND pk < 5",
        "INSERT INTO ks.bv (v, pk, ck) VALUES (0x01, 1, 'a')",
        "DELETE FROM ks.wide WHERE pk = 1 AND ck >= 'a'",
        "ALTER MATERIALIZED VIEW ks.ck WITH comment = 'c'",
        "SELECT * FROM system_schema.views",
        "DROP TABLE ks.wide",
        "DROP MATERIALIZED VIEW ks.bv",
        "DROP MATERIALIZED VIEW IF EXISTS ks.nope",
        "TRUNCATE ks.wide"),
        tables=("wide",))
    def counters(s):
        for q in ("UPDATE ks.cnt SET c = c + 5 WHERE k = 1",
                  "UPDATE ks.cnt SET c = c - 2 WHERE k = 1", "SELECT c FROM ks.cnt WHERE k = 1"):
            s.query(q)
        s.batch([("UPDATE ks.cnt SET c = c + 1 WHERE k = 2", [])], kind=2)
    session("counters", counters, tables=("cnt",))
    session("composite", (
        "INSERT INTO ks.comp (a, b, c, d, v) VALUES (1, 'x', 1, 2, 'v')",
        "SELECT * FROM ks.comp WHERE a = 1 AND b = 'x' AND (c, d) > (0, 0) AND (c, d) < (5, 5)",
        "SELECT * FROM ks.comp WHERE a = 1 AND b = 'x' AND c IN (1, 2)",
        "SELECT token(a, b), v AS w FROM ks.comp"), tables=("comp",))
    def lwt(s):
        s.query("INSERT INTO ks.kv (k, v) VALUES (5, 1) IF NOT EXISTS")
        s.query("UPDATE ks.kv SET v = 2 WHERE k = 5 IF v = 1", serial=True)
        s.query("UPDATE ks.kv SET v = 3 WHERE k = 5 IF v IN (1, 2) AND bl = null")
        s.query("DELETE FROM ks.kv WHERE k = 5 IF EXISTS")
        s.query("SELECT * FROM ks.kv WHERE k = 5", serial=True)
    session("lwt", lwt)

    def prepared(s):
        s.use("ks")
        qi = "INSERT INTO kv (k, v, bl) VALUES (?, ?, ?)"
        qs = "SELECT * FROM kv WHERE k = ?"
        s.prepare(qi)
        s.prepare(qs)
        s.execute(qi, [i32(1), i32(2), b"\x01\x02"])
        s.execute(qi, [i32(2), None, b""], timestamp=10)
        s.execute(qs, [i32(1)])
        s.execute(qs, [b"\x00"])
    session("prepared", prepared)

    def paging(s):
        for i in range(6):
            s.query(f"INSERT INTO ks.wide (pk, ck, v) VALUES ({i % 2}, 'c{i}', 0x0{i})")
        s.query("SELECT * FROM ks.wide", page_size=2)
        s.query("SELECT * FROM ks.wide WHERE pk = 0", page_size=1,
                paging=b"\x00\x04\x00\x00\x00\x00\x00\x02c1")
    session("paging", paging, tables=("wide",))

    def bound(s):
        s.query("INSERT INTO ks.kv (k, v) VALUES (?, ?)", values=[i32(7), i32(8)])
        s.query("SELECT * FROM ks.kv WHERE k = ?", values=[i32(7)])
        s.query("UPDATE ks.kv USING TTL ? SET v = ? WHERE k = ?",
                values=[i32(60), i32(1), i32(7)])
    session("bound", bound)

    def batches(s):
        s.batch([("INSERT INTO ks.kv (k, v) VALUES (1, 1)", []),
                 ("INSERT INTO ks.kv (k, v) VALUES (?, ?)", [i32(2), i32(2)]),
                 ("DELETE FROM ks.kv WHERE k = 3", [])])
        s.batch([("UPDATE ks.kv SET v = 5 WHERE k = 1 IF v = 1", [])], kind=1)
        s.query("BEGIN BATCH INSERT INTO ks.kv (k, v) VALUES (4, 4); "
                "UPDATE ks.kv SET v = 6 WHERE k = 4 APPLY BATCH")
    session("batch", batches)

    def ddl(s):
        for q in ("ALTER TABLE ks.kv ADD x int", "ALTER TABLE ks.kv DROP x",
                  "CREATE TABLE IF NOT EXISTS ks.kv (k int PRIMARY KEY)",
                  "CREATE TABLE ks.ttl (k int PRIMARY KEY, v int) WITH default_time_to_live = 10",
                  "ALTER KEYSPACE ks WITH durable_writes = true",
                  "TRUNCATE TABLE ks.kv", "DROP TABLE IF EXISTS ks.ttl",
                  "CREATE INDEX ON ks.kv (v)", "DROP KEYSPACE ks",
                  "DROP KEYSPACE IF EXISTS ks"):
            s.query(q)
    session("ddl", ddl)

    def tablets(s):
        for q in ("CREATE KEYSPACE tk WITH replication = {'class': 'NetworkTopologyStrategy', "
                  "'replication_factor': 1} AND tablets = {'enabled': true, 'initial': 3}",
                  "CREATE TABLE tk.t (k int PRIMARY KEY, v int)",
                  "INSERT INTO tk.t (k, v) VALUES (1, 2)", "SELECT * FROM tk.t WHERE k = 1",
                  "SELECT * FROM tk.t WHERE token(k) > 0",
                  "UPDATE tk.t SET v = 3 WHERE k = 1 IF v = 2",
                  "SELECT * FROM system.tablets", "SELECT * FROM system_schema.scylla_keyspaces",
                  "ALTER KEYSPACE tk WITH replication = {'class': 'NetworkTopologyStrategy', "
                  "'replication_factor': 1} AND tablets = {'initial': 8}",
                  "CREATE KEYSPACE tb WITH replication = {'class': 'SimpleStrategy', "
                  "'replication_factor': 1} AND tablets = {'enabled': 'x', 'initial': 'y'}"):
            s.query(q)
    session("tablets", tablets)

    def system(s):
        for q in ("SELECT * FROM system.local WHERE key='local'", "SELECT * FROM system.peers",
                  "SELECT * FROM system.peers_v2",
                  "SELECT * FROM system_schema.keyspaces WHERE keyspace_name = 'ks'",
                  "SELECT * FROM system_schema.tables", "SELECT * FROM system_schema.columns",
                  "SELECT * FROM system_schema.types", "SELECT * FROM system_schema.indexes",
                  "SELECT schema_version FROM system.local WHERE key='local'"):
            s.query(q)
    session("system", system)

    session("lz4", ("INSERT INTO ks.kv (k, v) VALUES (1, 1)", "SELECT * FROM ks.kv"), lz4=True)

    def errors(s):
        for q in ("SELECT * FROMM t", "SELECT * FROM ks.nope", "INSERT INTO ks.kv (k) VALUES ('x')",
                  "UPDATE ks.kv SET WHERE k = 1", "SELECT * FROM ks.kv WHERE v = 1",
                  "CREATE TABLE ks.bad (a int, b int)", "USE nope",
                  "INSERT INTO ks.kv (k, v) VALUES (1, 2) USING TTL -1",
                  "SELECT * FROM ks.kv WHERE k IN (",
                  "BEGIN BATCH SELECT * FROM ks.kv APPLY BATCH"):
            s.query(q)
        s.add(OP_EXECUTE, cstring_bytes(b"\xab" * 16) + params())
    session("errors", errors)

    def session_msgs(s):
        s.add(OP_OPTIONS, b"")
        s.add(OP_REGISTER, struct.pack(">H", 2) + cstring("SCHEMA_CHANGE") +
              cstring("TOPOLOGY_CHANGE"))
        s.query("CREATE TABLE ks.ev (k int PRIMARY KEY)")
    session("register", session_msgs)

    # Authentication: the control byte's bit 5 turns PasswordAuthenticator on.
    s = Session()
    s.add(OP_AUTH_RESPONSE, cbytes(b"\x00cassandra\x00cassandra"))
    s.query("SELECT * FROM system.local")
    seeds.append(("auth", bytes([32]) + s.out))
    s = Session()
    s.add(OP_AUTH_RESPONSE, cbytes(b"\x00cassandra\x00wrong"))
    s.query("SELECT * FROM system.local")
    seeds.append(("auth-wrong", bytes([32]) + s.out))
    # Frames before STARTUP, a bad version, a response frame, garbage, an oversized length.
    seeds.append(("before-startup", b"\x00" + frame(OP_QUERY, long_string("SELECT 1") +
                                                    params(), 1)))
    seeds.append(("version5", b"\x00" + b"\x05\x00\x00\x01\x05\x00\x00\x00\x00"))
    seeds.append(("response-frame", b"\x00" + b"\x84\x00\x00\x01\x02\x00\x00\x00\x00"))
    seeds.append(("garbage", b"\x00GET / HTTP/1.1\r\n\r\n"))
    seeds.append(("too-big", b"\x00" + b"\x04\x00\x00\x01\x07\x7f\xff\xff\xff"))
    # The same session cut into receive buffers of 1, 9 and 333 bytes, two per call.
    s = Session()
    s.query(KS)
    s.query(TABLES["kv"])
    s.query("INSERT INTO ks.kv (k, v) VALUES (1, 1)")
    for ctl in (1, 3 | 8, 5 | 16, 64):
        seeds.append((f"split-{ctl}", bytes([ctl]) + s.out))
    return seeds


# ---- HTTP: cut byte, manners byte, then requests ----

def alt_req(target, body, extra=""):
    return (f"POST / HTTP/1.1\r\nHost: localhost:8000\r\nX-Amz-Target: DynamoDB_20120810.{target}"
            f"\r\nContent-Type: application/x-amz-json-1.0\r\n{extra}"
            f"Content-Length: {len(body)}\r\n\r\n{body}")


def http_seeds():
    reqs = {
        "get": "GET / HTTP/1.1\r\nHost: x\r\n\r\n",
        "get-query": "GET /path/to?x=1&y=%20 HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n",
        "http10": "GET / HTTP/1.0\r\n\r\n",
        "http10-keepalive": ("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"
                             "GET /2 HTTP/1.0\r\n\r\n"),
        "head": "HEAD / HTTP/1.1\r\nHost: x\r\n\r\n",
        "post": alt_req("ListTables", "{}"),
        "pipelined": alt_req("ListTables", "{}") + alt_req("DescribeEndpoints", "{}") +
        "GET /copy HTTP/1.1\r\n\r\n",
        "chunked": ("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                    "5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nTrailer: x\r\n\r\n"),
        "chunked-two": ("POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                        "a\r\n0123456789\r\n0\r\n\r\n"
                        "POST /b HTTP/1.1\r\nContent-Length: 2\r\n\r\nok"),
        "expect": ("POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\nbody"),
        "close": "GET / HTTP/1.1\r\nConnection: close\r\n\r\nGET /never HTTP/1.1\r\n\r\n",
        "absolute-uri": "GET http://example.com/x?y HTTP/1.1\r\n\r\n",
        "absolute-uri-no-path": "GET http://example.com?y HTTP/1.1\r\n\r\n",
        "options-star": "OPTIONS * HTTP/1.1\r\n\r\n",
        "empty-lines": "\r\n\r\nGET / HTTP/1.1\r\n\r\n",
        "many-fields": "GET / HTTP/1.1\r\n" + "".join(f"X-F{i}: v{i}\r\n" for i in range(30))
        + "\r\n",
        "ows": "GET / HTTP/1.1\r\nHost:   spaced   \r\nX-Empty:\r\n\r\n",
        "bad-cl": "POST / HTTP/1.1\r\nContent-Length: 1, 2\r\n\r\nx",
        "dup-cl": "POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc",
        "cl-and-te": "POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
        "te-gzip": "POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
        "obs-fold": "GET / HTTP/1.1\r\nX: a\r\n b\r\n\r\n",
        "bare-lf": "GET / HTTP/1.1\nHost: x\n\n",
        "http2": "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
        "bad-method": "G@T / HTTP/1.1\r\n\r\n",
        "too-large": "POST / HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\n",
        "sigv4": alt_req("GetItem", '{"TableName":"t","Key":{"p":{"S":"a"}}}',
                         "Authorization: AWS4-HMAC-SHA256 Credential=x/20240101/us-east-1/"
                         "dynamodb/aws4_request, SignedHeaders=host;x-amz-date, Signature=ab\r\n"
                         "X-Amz-Date: 20240101T000000Z\r\n"),
        "gzip-body": alt_req("PutItem", "\x1f\x8b\x08\x00", "Content-Encoding: gzip\r\n"),
    }
    seeds = []
    for i, (name, text) in enumerate(sorted(reqs.items())):
        # Vary the cut and the handler's manners across the seeds.
        seeds.append((name, bytes([i % 64, (i * 7) % 64]) + text.encode()))
    return seeds


# ---- JSON ----

def json_seeds():
    docs = {
        "empty-object": "{}",
        "put-item": json.dumps({"TableName": "t", "Item": {
            "p": {"S": "a"}, "n": {"N": "-1.50e+3"}, "b": {"B": "AAEC"}, "t": {"BOOL": True},
            "z": {"NULL": True}, "ss": {"SS": ["x", "y"]}, "ns": {"NS": ["1", "2.5"]},
            "bs": {"BS": ["AA==", "AQ=="]}, "l": {"L": [{"S": "e"}, {"N": "0"}]},
            "m": {"M": {"k": {"S": "v"}, "d": {"M": {"x": {"L": []}}}}}}}),
        "query": json.dumps({"TableName": "t", "KeyConditionExpression": "p = :p",
                             "ExpressionAttributeValues": {":p": {"S": "a"}}, "Limit": 10,
                             "ExclusiveStartKey": {"p": {"S": "a"}}, "ScanIndexForward": False}),
        "escapes": '{"s":"\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00","k\\u0041":1}',
        "utf8": '{"s":{"S":"é€😀"}}',
        "numbers": "[0,-0,1.5,-1e10,1E-7,12345678901234567890,-9223372036854775808,3.0e+2]",
        "literals": "[true,false,null,[],{},[[[]]],{\"a\":{\"b\":{}}}]",
        "dup-keys": '{"a":{"S":"1"},"a":{"N":"2"}}',
        "deep": "[" * 40 + "]" * 40,
        "big-number": '{"n":{"N":"9.9999999999999999999999999999999999999E+125"}}',
        "tiny-number": '{"n":{"N":"1E-130"}}',
        "bad-number": '{"n":{"N":"1e999"}}',
        "number-string": '{"ns":{"NS":["1","01","1.0"]}}',
        "string-set-dup": '{"ss":{"SS":["a","a"]}}',
        "bad-base64": '{"b":{"B":"A==="}}',
        "two-types": '{"x":{"S":"a","N":"1"}}',
        "bad-type": '{"x":{"Q":"a"}}',
        "trailing-comma": '{"a":1,}',
        "unterminated": '{"a":"b',
        "root-string": '"just a string"',
        "whitespace": ' \t\n\r{ "a" : [ 1 , 2 ] }\n',
        "nested-item": json.dumps({"a": {"M": {"b": {"L": [{"M": {"c": {"NS": ["1"]}}}]}}}}),
        "batch": json.dumps({"RequestItems": {"t": [
            {"PutRequest": {"Item": {"p": {"S": "x"}}}},
            {"DeleteRequest": {"Key": {"p": {"S": "y"}}}}]}}),
        "create-table": json.dumps({
            "TableName": "t", "BillingMode": "PAY_PER_REQUEST",
            "KeySchema": [{"AttributeName": "p", "KeyType": "HASH"},
                          {"AttributeName": "c", "KeyType": "RANGE"}],
            "AttributeDefinitions": [{"AttributeName": "p", "AttributeType": "S"},
                                     {"AttributeName": "c", "AttributeType": "N"}]}),
    }
    return [(name, text.encode()) for name, text in sorted(docs.items())]


# ---- expressions: kind byte, text, NUL, request JSON ----

COND, FILTER, KEY, UPDATE, PROJ = 0, 1, 2, 3, 4

ITEM = {"p": {"S": "k"}, "a": {"S": "abc"}, "n": {"N": "5"}, "b": {"B": "AQID"},
        "ss": {"SS": ["x", "y"]}, "ns": {"NS": ["1", "2"]}, "l": {"L": [{"N": "1"}, {"S": "t"}]},
        "m": {"M": {"k": {"S": "v"}, "n": {"M": {"d": {"N": "1"}}}}}, "t": {"BOOL": True}}


def expr_seed(kind, text, values=None, names=None, item=ITEM, sort=False, extra=None):
    req = {"Key": {"pk": {"S": "k"}}}
    if sort:
        req["Key"]["sk"] = {"N": "1"}
    if names:
        req["ExpressionAttributeNames"] = names
    if values:
        req["ExpressionAttributeValues"] = values
    if item is not None:
        req["Item"] = item
    if extra:
        req.update(extra)
    return bytes([kind | (8 if sort else 0)]) + text.encode() + b"\0" + json.dumps(req).encode()


def expr_seeds():
    S, N = (lambda v: {"S": v}), (lambda v: {"N": v})
    seeds = {
        "cond-exists": expr_seed(COND, "attribute_exists(a) AND attribute_not_exists(zz)"),
        "cond-cmp": expr_seed(COND, "n > :lo AND n <= :hi OR a <> :s",
                              {":lo": N("1"), ":hi": N("10"), ":s": S("x")}),
        "cond-between": expr_seed(COND, "n BETWEEN :a AND :b", {":a": N("1"), ":b": N("9")}),
        "cond-in": expr_seed(COND, "a IN (:x, :y, :z)",
                             {":x": S("abc"), ":y": S("q"), ":z": N("1")}),
        "cond-funcs": expr_seed(COND, "begins_with(a, :p) AND contains(ss, :e) AND "
                                "attribute_type(n, :t) AND size(l) = :two",
                                {":p": S("ab"), ":e": S("x"), ":t": S("N"), ":two": N("2")}),
        "cond-nested": expr_seed(COND, "NOT (m.k = :v) AND (#n.d >= :one OR l[1] = :t)",
                                 {":v": S("v"), ":one": N("1"), ":t": S("t")}, {"#n": "m.n"}),
        "cond-names": expr_seed(COND, "#a = :v AND #m.#k = :v", {":v": S("abc")},
                                {"#a": "a", "#m": "m", "#k": "k"}),
        "cond-no-item": expr_seed(COND, "attribute_not_exists(p)", item=None),
        "filter": expr_seed(FILTER, "contains(a, :s) AND size(m) > :z",
                            {":s": S("b"), ":z": N("0")}),
        "key-eq": expr_seed(KEY, "p = :p", {":p": S("k")}),
        "key-range": expr_seed(KEY, "p = :p AND sk BETWEEN :a AND :b",
                               {":p": S("k"), ":a": N("1"), ":b": N("2")}, sort=True),
        "key-begins": expr_seed(KEY, "#p = :p AND begins_with(sk, :x)",
                                {":p": S("k"), ":x": S("a")}, {"#p": "p"}, sort=True),
        "key-or": expr_seed(KEY, "p = :p OR p = :q", {":p": S("k"), ":q": S("j")}),
        "update-set": expr_seed(UPDATE, "SET a = :v, n = n + :one, l[0] = :v, m.k = :v",
                                {":v": S("new"), ":one": N("1")}),
        "update-funcs": expr_seed(UPDATE, "SET l = list_append(l, :l), x = if_not_exists(x, :z)",
                                  {":l": {"L": [{"N": "3"}]}, ":z": N("0")}),
        "update-remove": expr_seed(UPDATE, "REMOVE a, l[1], l[0], m.n.d"),
        "update-add-delete": expr_seed(UPDATE, "ADD n :one, ss :s DELETE ns :d",
                                       {":one": N("1"), ":s": {"SS": ["z"]}, ":d": {"NS": ["1"]}}),
        "update-all": expr_seed(UPDATE, "SET #a = :v REMOVE t ADD c :one DELETE ss :x",
                                {":v": S("q"), ":one": N("2"), ":x": {"SS": ["x", "y"]}},
                                {"#a": "a"}),
        "update-no-item": expr_seed(UPDATE, "SET a = :v, n = :v", {":v": N("1")}, item=None),
        "update-minus": expr_seed(UPDATE, "SET n = :a - n", {":a": N("1e30")}),
        "proj": expr_seed(PROJ, "a, m.k, l[1], #n", names={"#n": "n"}),
        "proj-deep": expr_seed(PROJ, "m.n.d, l[0], l[5], ss"),
        "syntax-error": expr_seed(COND, "a = = :v", {":v": S("x")}),
        "reserved": expr_seed(COND, "size = :v", {":v": N("1")}),
        "undefined": expr_seed(COND, "a = :nope AND #x = :v", {":v": S("x")}),
        "unused": expr_seed(COND, "a = :v", {":v": S("x"), ":w": S("y")}),
        "expected": expr_seed(COND, "", item=ITEM, extra={"Expected": {
            "a": {"Value": S("abc")}, "n": {"ComparisonOperator": "GT",
                                            "AttributeValueList": [N("1")]},
            "zz": {"Exists": False}}}),
        "attribute-updates": expr_seed(UPDATE, "", extra={"AttributeUpdates": {
            "a": {"Action": "PUT", "Value": S("z")}, "n": {"Action": "ADD", "Value": N("1")},
            "ss": {"Action": "DELETE", "Value": {"SS": ["x"]}}, "t": {"Action": "DELETE"}}}),
        "attributes-to-get": expr_seed(PROJ, "", extra={"AttributesToGet": ["a", "l", "none"]}),
        "index-deep": expr_seed(UPDATE, "SET l[2147483647] = :v", {":v": N("1")}),
        "nesting": expr_seed(COND, "((((((((a = :v))))))))", {":v": S("abc")}),
    }
    return sorted(seeds.items())


# ---- lib/tcpip: setup byte, then commands (see fuzz_tcpip.c) ----

def tcp(flow, flags, modes=0, *fields, opts=None, data=None):
    out = bytes([1, flow, flags, modes])
    for f in fields:
        out += f
    if opts is not None:
        out += bytes([len(opts) // 4 - 1]) + opts
    if data is not None:
        out += struct.pack(">H", len(data)) + data[:16]
    return out


def u16(v):
    return struct.pack(">H", v)


def u32(v):
    return struct.pack(">I", v)


SYN, ACK, FIN, RST, PSH = 0x02, 0x10, 0x01, 0x04, 0x08


def tcpip_seeds():
    mss = bytes([2, 4, 0x05, 0xb4])
    ws = bytes([2, 4, 0x05, 0xb4, 1, 3, 3, 7])
    syn = tcp(0, SYN, 3 | 32, u32(1000), u16(65535), opts=mss)
    syn_ws = tcp(0, SYN, 3 | 32, u32(1000), u16(65535), opts=ws)
    ack = tcp(0, ACK, 0, u16(65535))
    data = tcp(0, ACK | PSH, 64, u16(65535), data=b"GET / HTTP/1.1\r\n")
    fin = tcp(0, ACK | FIN, 0, u16(65535))
    send = bytes([4, 0, 0]) + u16(2000)      # the application sends 2001 bytes
    close = bytes([4, 1, 0])
    consume = bytes([4, 3, 0])
    clock = bytes([5]) + u16(8000)          # one second
    jump = bytes([0x85])                     # 70 seconds
    seeds = {
        "handshake": syn + ack,
        "handshake-ws": syn_ws + ack,
        "data": syn + ack + data + data,
        "fin": syn + ack + data + fin + close + ack,
        "app-close": syn + ack + close + clock + fin + ack,
        "send-ack": syn + ack + send + clock + ack + ack,
        "rto": syn + ack + send + clock + clock + clock + ack,
        "zero-window": syn + ack + tcp(0, ACK, 16) + send + clock + clock + ack,
        "rst": syn + ack + tcp(0, RST, 0, u16(0)),
        "rst-bad-seq": syn + ack + tcp(0, RST, 1, u16(100), u16(0)),
        "syn-in-window": syn + ack + tcp(0, SYN, 0, u16(1000)),
        "ooo": syn + ack + tcp(0, ACK, 1 | 64, u16(500), u16(65535), data=b"later") + data,
        "dup-data": syn + ack + data + tcp(0, ACK, 2 | 64, u16(65535), data=b"x"),
        "hold": bytes([4]) + syn + ack + data + data + data + consume,
        "offload": bytes([1]) + syn + ack + data,
        "zero-copy": bytes([2]) + syn + ack + data + fin,
        "two-flows": syn + ack + tcp(1, SYN, 3 | 32, u32(5), u16(1000), opts=mss)
        + tcp(1, ACK, 0, u16(1000)) + data,
        "syn-flood": b"".join(tcp(i, SYN, 3, u32(i * 7), u16(100)) for i in range(8)),
        "time-wait": syn + ack + close + fin + ack + jump + syn,
        "connect": bytes([4, 5]) + tcp(5, SYN | ACK, 0, u16(65535)) + tcp(5, ACK, 0, u16(65535)),
        "arp": bytes([2, 0x07]) + b"\x02\x00\x00\x00\x00\x09" + bytes([2, 0x00, 7]),
        "icmp": bytes([3]) + u16(56) + bytes([8, 0]) + bytes([3]) + u16(10) + bytes([3, 0]),
        "damaged": syn + bytes([0x46]) + u16(47) + bytes([0xff]) + ack + bytes([6]) + u16(13)
        + bytes([0x10]),
        "raw": bytes([0]) + u16(60) + b"\x02\x00\x00\x00\x00\x01\x02\x00\x00\x00\x00\x02\x08\x00"
        + b"\x45\x00\x00\x28" + b"\x00" * 42,
        "unlisten": syn + ack + bytes([7]) + tcp(1, SYN, 3, u32(1), u16(10)) + bytes([0xc7]),
        "clock-steps": syn + ack + send + b"".join(bytes([5]) + u16(v) for v in (1, 320, 8000,
                                                                                  65535)),
    }
    # A setup byte first (0: software checksums, copying receive, consuming app).
    return sorted((k, v if k in ("hold", "offload", "zero-copy") else b"\x00" + v)
                  for k, v in seeds.items())


def main():
    write("cql", cql_seeds())
    write("http", http_seeds())
    write("json", json_seeds())
    write("expr", expr_seeds())
    write("tcpip", tcpip_seeds())
    return 0


if __name__ == "__main__":
    sys.exit(main())
