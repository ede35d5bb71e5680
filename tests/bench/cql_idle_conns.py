#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Memory an idle CQL connection costs a running `shardmark serve`.

Opens N connections to the CQL port, takes each through OPTIONS and STARTUP
(so the session is set up and its reply buffers have been used), holds them
idle and reads the server's allocator gauge (shardmark_mem_in_use_bytes,
summed over shards) from the metrics endpoint before and after. Prints the
bytes per connection. Kernel socket memory is not included.

  tests/bench/cql_idle_conns.py --port 9042 --metrics-port 9180 -n 2000
"""

import argparse
import re
import resource
import socket
import struct
import sys
import time
import urllib.request


def mem_in_use(port):
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    return sum(float(v) for v in
               re.findall(r'^shardmark_mem_in_use_bytes\{[^}]*\} (\S+)', text, re.M))


def frame(opcode, body=b"", stream=0):
    return struct.pack(">BBhBI", 4, 0, stream, opcode, len(body)) + body


def recv_frame(s):
    hdr = b""
    while len(hdr) < 9:
        chunk = s.recv(9 - len(hdr))
        if not chunk:
            raise EOFError("server closed the connection")
        hdr += chunk
    (n,) = struct.unpack(">I", hdr[5:9])
    body = b""
    while len(body) < n:
        body += s.recv(n - len(body))
    return hdr[4], body


def startup(s):
    s.sendall(frame(0x05))  # OPTIONS
    op, _ = recv_frame(s)
    assert op == 0x06, f"expected SUPPORTED, got opcode {op:#x}"
    kv = b"".join(struct.pack(">H", len(x)) + x for x in (b"CQL_VERSION", b"3.0.0"))
    s.sendall(frame(0x01, struct.pack(">H", 1) + kv))  # STARTUP
    op, _ = recv_frame(s)
    assert op == 0x02, f"expected READY, got opcode {op:#x}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=9042, help="CQL port")
    ap.add_argument("--metrics-port", type=int, default=9180)
    ap.add_argument("-n", type=int, default=2000, help="connections to open")
    a = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, a.n + 256)), hard))
    before = mem_in_use(a.metrics_port)
    conns = []
    for i in range(a.n):
        s = socket.create_connection((a.host, a.port), timeout=10)
        startup(s)
        conns.append(s)
        if (i + 1) % 500 == 0:
            print(f"  {i + 1} connections", file=sys.stderr)
    time.sleep(0.5)
    after = mem_in_use(a.metrics_port)
    per = (after - before) / a.n
    print(f"connections: {a.n}")
    print(f"mem_in_use before: {before:.0f} B, after: {after:.0f} B")
    print(f"per idle connection: {per:.0f} B")
    for s in conns:
        s.close()


if __name__ == "__main__":
    main()
