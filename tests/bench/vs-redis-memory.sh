#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# Memory per partition: shardmark's store against Redis holding the same
# data (issue 26). Redis gets cassandra-stress's standard1 as a hash of five
# 34-byte fields (C0..C4) per 10-byte key, written with redis-cli --pipe;
# its used_memory after the fill minus before, per key, is printed beside
# bench_store mem's bytes per partition at the same count.
#
#   tests/bench/vs-redis-memory.sh [BENCH_STORE] [KEYS]
#
# BENCH_STORE defaults to build-rb/tests/bench/bench_store (a release build
# with the tests: meson setup build-rb --buildtype=release), KEYS to 1000000
# (100000, 1000000 or 5000000: the levels bench_store reports).
# redis-server is installed with apt-get when missing. Timing is not judged.
set -eu

BENCH=${1:-build-rb/tests/bench/bench_store}
KEYS=${2:-1000000}
PY=/usr/bin/python3

case $KEYS in
100000 | 1000000 | 5000000 | 20000000) ;;
*)
	echo "vs-redis-memory: KEYS must be one of bench_store's levels: 100000 1000000 5000000 20000000" >&2
	exit 2
	;;
esac
if [ ! -x "$BENCH" ]; then
	echo "vs-redis-memory: no $BENCH: meson setup build-rb --buildtype=release && ninja -C build-rb tests/bench/bench_store" >&2
	exit 2
fi
if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
	SUDO=
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
	$SUDO apt-get install -y redis-server >/dev/null
fi

# A free port: the kernel picks one.
PORT=$($PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
DIR=$(mktemp -d)
redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$DIR" \
	--daemonize no >"$DIR/redis.log" 2>&1 &
RPID=$!
trap 'kill $RPID 2>/dev/null || true; wait $RPID 2>/dev/null || true; rm -rf "$DIR"' EXIT INT TERM

# Ready when it answers PING (a deadline, not a sleep to wait for).
i=0
until redis-cli -p "$PORT" ping >/dev/null 2>&1; do
	i=$((i + 1))
	if [ $i -gt 100 ]; then
		echo "vs-redis-memory: redis-server did not start:" >&2
		cat "$DIR/redis.log" >&2
		exit 1
	fi
	sleep 0.1
done

used() {
	redis-cli -p "$PORT" info memory | tr -d '\r' | sed -n 's/^used_memory://p'
}

BEFORE=$(used)
# HSET K0<8 bytes of i> C0 v C1 v ... C4 v, in RESP, the key as bench_store's
# ('K0' and i big-endian: binary, so RESP and not the inline protocol).
$PY - "$KEYS" <<'EOF' | redis-cli -p "$PORT" --pipe >"$DIR/pipe.log"
import struct, sys
n = int(sys.argv[1])
out = sys.stdout.buffer
def bulk(b):
    return b"$%d\r\n%s\r\n" % (len(b), b)
buf = []
for i in range(n):
    parts = [b"HSET", b"K0" + struct.pack(">Q", i)]
    for c in range(5):
        parts += [b"C%d" % c, bytes([(i + c) & 0xFF]) * 34]
    buf.append(b"*%d\r\n" % len(parts) + b"".join(bulk(p) for p in parts))
    if len(buf) == 10000:
        out.write(b"".join(buf))
        buf = []
out.write(b"".join(buf))
EOF
AFTER=$(used)
NKEYS=$(redis-cli -p "$PORT" dbsize | tr -d '\r')
if [ "$NKEYS" != "$KEYS" ]; then
	echo "vs-redis-memory: redis holds $NKEYS keys, not $KEYS:" >&2
	cat "$DIR/pipe.log" >&2
	exit 1
fi
REDIS_VER=$(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/')

SM=$("$BENCH" mem "$KEYS" | awk -v n="$KEYS" '$1 == n { print $2 }')
printf 'standard1, %s partitions (10-byte key, five 34-byte cells)\n' "$KEYS"
printf '%-28s %s bytes/partition\n' "shardmark (bench_store mem)" "$SM"
printf '%-28s %s bytes/key (used_memory %s -> %s)\n' \
	"redis $REDIS_VER" "$($PY -c "print(round(($AFTER - $BEFORE) / $KEYS, 1))")" \
	"$BEFORE" "$AFTER"
