#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""What 1,000 hostile connections cost the server, and what stays after.

Starts `shardmark serve`, warms it with a few normal requests, then opens
1,000 connections that misbehave: a quarter send part of a request and
reset, a quarter trickle a request a byte at a time, a quarter pipeline CQL
queries and never read, a quarter pipeline Alternator requests and never
read. It prints the server's RSS and accounted heap (shardmark_mem_in_use)
before, while they are connected, and after they have gone, and what each
silent connection costs. A benchmark: it prints figures, asserts nothing.

  tests/bench/hostile_memory.py [path/to/shardmark] [--smp N] [--json] [--pipeline Q]
"""

import argparse
import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def heap(prom):
    text = urllib.request.urlopen(f"http://127.0.0.1:{prom}/metrics", timeout=30).read().decode()
    return sum(float(line.split()[-1]) for line in text.splitlines()
               if line.startswith("shardmark_mem_in_use_bytes{"))


def cql_frame(opcode, body, stream=1):
    return struct.pack(">BBhBI", 4, 0, stream, opcode, len(body)) + body


def cql_startup():
    kv = b"CQL_VERSION"
    v = b"3.0.0"
    return cql_frame(0x01, struct.pack(">H", 1) + struct.pack(">H", len(kv)) + kv
                     + struct.pack(">H", len(v)) + v)


def cql_query(q):
    b = q.encode()
    return cql_frame(0x07, struct.pack(">i", len(b)) + b + struct.pack(">HB", 1, 0), stream=7)


def http_list_tables():
    body = b"{}"
    return (b"POST / HTTP/1.1\r\nHost: x\r\nX-Amz-Target: DynamoDB_20120810.ListTables\r\n"
            b"Content-Type: application/x-amz-json-1.0\r\nContent-Length: 2\r\n\r\n" + body)


def connect(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def flood(s, data, seconds=0.3):
    """Send `data` until the server stops reading us (or `seconds` pass)."""
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.settimeout(0.05)
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            s.sendall(data)
    except (socket.timeout, OSError):
        pass


def reset(s):
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()


def pipeline_case(srv, cql, prom, queries, before, as_json):
    """4 connections pipeline `queries` queries each and read nothing."""
    one = cql_query("SELECT * FROM system.local WHERE key = 'local'")
    socks, sent = [], []
    for _ in range(4):
        s = connect(cql)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.sendall(cql_startup())
        s.settimeout(2)
        n = 0
        try:
            while n < queries:
                s.sendall(one * 100)
                n += 100
        except (socket.timeout, OSError):
            pass
        socks.append(s)
        sent.append(n)
    time.sleep(1)
    during = (rss(srv.pid), heap(prom))
    for s in socks:
        reset(s)
    time.sleep(5)
    after = (rss(srv.pid), heap(prom))
    res = {"queries_sent": sent, "rss": [before[0], during[0], after[0]],
           "heap": [before[1], during[1], after[1]]}
    if as_json:
        print(json.dumps(res, indent=2))
        return
    mib = 1 << 20
    print(f"4 connections pipelining up to {queries} queries each (sent {sent}), reading nothing")
    for name, v in (("before", before), ("during", during), ("after", after)):
        print(f"{name:10} RSS {v[0] / mib:8.1f} MiB   heap {v[1] / mib:8.1f} MiB")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("binary", nargs="?", default="build-release/app/shardmark/shardmark")
    ap.add_argument("--smp", type=int, default=1)
    ap.add_argument("--connections", type=int, default=1000)
    ap.add_argument("--pipeline", type=int, metavar="Q",
                    help="instead: 4 CQL connections each pipelining Q queries, reading nothing "
                         "(issue 14's case: 50000)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--serve-arg", action="append", default=[],
                    help="one more argument for shardmark serve (repeat)")
    a = ap.parse_args()
    if not os.access(a.binary, os.X_OK):
        sys.exit(f"{a.binary}: not an executable (build first, or pass the binary)")
    cql, shard, alt, prom = (free_port() for _ in range(4))
    log = tempfile.TemporaryFile()
    srv = subprocess.Popen([a.binary, "serve", "--smp", str(a.smp), "--overprovisioned",
                            "--native-transport-port", str(cql),
                            "--native-shard-aware-transport-port", str(shard),
                            "--alternator-port", str(alt), "--prometheus-port", str(prom),
                            "--api-port", "0"]
                           + a.serve_arg,
                           stdout=log, stderr=log)
    try:
        for _ in range(100):
            try:
                heap(prom)
                break
            except OSError:
                time.sleep(0.1)
        query = cql_query("SELECT * FROM system.local WHERE key = 'local'") * 64
        http = http_list_tables() * 64
        # Warm: every code path the run takes (their pages count in RSS), pools,
        # caches; then the caches trim at idle, as they will after the run.
        for _ in range(20):
            s = connect(cql)
            s.sendall(cql_startup() + cql_query("SELECT * FROM system.local"))
            s.recv(65536)
            s.close()
            s = connect(alt)
            s.sendall(http_list_tables())
            s.recv(65536)
            s.close()
        for port, data in ((cql, query), (alt, http)):
            s = connect(port)
            flood(s, data, 0.05)
            reset(s)
        time.sleep(3)
        before = (rss(srv.pid), heap(prom))
        if a.pipeline:
            pipeline_case(srv, cql, prom, a.pipeline, before, a.json)
            return
        if os.environ.get("HM_SMAPS"):
            open("/tmp/h/smaps.before", "w").write(open(f"/proc/{srv.pid}/smaps").read())
        n = a.connections // 4
        socks = []
        t0 = time.monotonic()
        for _ in range(n):  # part of a request, then a reset
            s = connect(cql)
            s.sendall(cql_frame(0x07, b"\0" * 100)[:12])
            reset(s)
            s = connect(alt)
            s.sendall(b"POST / HTTP/1.1\r\nContent-Length: 100\r\n\r\nabc")
            reset(s)
        for _ in range(n):  # trickling: one byte so far
            s = connect(alt)
            s.sendall(b"P")
            socks.append(s)
        silent = []
        for _ in range(n):  # CQL pipeliners that never read
            s = connect(cql)
            s.sendall(cql_startup())
            flood(s, query, 0.05)
            silent.append(s)
        for _ in range(n):  # Alternator pipeliners that never read
            s = connect(alt)
            flood(s, http, 0.05)
            silent.append(s)
        time.sleep(1)
        during = (rss(srv.pid), heap(prom))
        opened = time.monotonic() - t0
        for s in socks + silent:
            reset(s)
        for _ in range(int(os.environ.get("HM_WAIT", "5"))):
            time.sleep(1)
            if os.environ.get("HM_TRACE"):
                print("after", rss(srv.pid) >> 20, heap(prom) / (1 << 20), file=sys.stderr)
        after = (rss(srv.pid), heap(prom))
        if os.environ.get("HM_SMAPS"):
            open("/tmp/h/smaps.after", "w").write(open(f"/proc/{srv.pid}/smaps").read())
        per_silent = (during[1] - before[1]) / max(1, len(silent))
        res = {
            "connections": 4 * n, "smp": a.smp, "seconds_to_open": round(opened, 1),
            "rss_before": before[0], "rss_during": during[0], "rss_after": after[0],
            "heap_before": before[1], "heap_during": during[1], "heap_after": after[1],
            "rss_after_over_before": round(after[0] / before[0], 3),
            "heap_per_silent_connection": round(per_silent),
        }
        if a.json:
            print(json.dumps(res, indent=2))
        else:
            mib = 1 << 20
            print(f"{4 * n} hostile connections ({n} reset mid-request, {n} trickling, "
                  f"{2 * n} pipelining without reading), --smp {a.smp}")
            print(f"{'':10} {'RSS MiB':>10} {'heap MiB':>10}")
            for name, v in (("before", before), ("during", during), ("after", after)):
                print(f"{name:10} {v[0] / mib:10.1f} {v[1] / mib:10.1f}")
            print(f"RSS after / before: {res['rss_after_over_before']:.3f}; heap per silent "
                  f"connection while connected: {per_silent / 1024:.0f} KiB")
    finally:
        srv.terminate()
        srv.wait(timeout=30)


if __name__ == "__main__":
    main()
