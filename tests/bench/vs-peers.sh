#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Server CPU per request, shardmark beside the servers lab users know, in one
# run on one machine: Redis GET and SET (redis-benchmark, 64 connections x 16
# pipelined) beside CQL read and write (shardmark stress, 1,024 in flight), and
# nginx returning a fixed 72-byte JSON body beside Alternator GetItem and
# PutItem (wrk, 32 connections, the same request shape for both). Every server
# runs on one shard/worker pinned to SERVER_CPUS, every client on
# CLIENT_CPUS. The server's CPU is its process's utime+stime
# (/proc/PID/stat) over the measured load only, divided by the requests
# the client completed: a cost per request, not a throughput, so a slower
# client does not flatter anyone.
#
#   ratio = peer's µs per request / shardmark's (>= 1.0: shardmark is cheaper)
#
# Installs redis-server, redis-tools, nginx-light and wrk from Debian when
# missing (root). Environment: N (CQL requests per load, default 400000),
# SECONDS_PER_LOAD (wrk and redis durations, default 5), SERVER_CPUS,
# CLIENT_CPUS.
#
#   tests/bench/vs-peers.sh [path/to/shardmark]
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
die() {
	echo "vs-peers.sh: $*" >&2
	exit 2
}
# shellcheck source=bench-common.sh
. "$root/tests/bench/bench-common.sh"
find_shardmark "${1:-}"
split_cpus

N=${N:-400000}
DUR=${SECONDS_PER_LOAD:-5}
need=()
command -v redis-server >/dev/null || need+=(redis-server)
command -v redis-benchmark >/dev/null || need+=(redis-tools)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need+=(nginx-light)
command -v wrk >/dev/null || need+=(wrk)
if [ "${#need[@]}" -gt 0 ]; then
	[ "$(id -u)" = 0 ] || die "needs ${need[*]}: run as root or apt-get install them"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >/dev/null ||
		die "apt-get install ${need[*]} failed"
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

tmp=$(mktemp -d)
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT

free_port() {
	/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# CPU seconds (utime + stime) of process $1 and its threads, children excluded.
cpu_s() {
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); printf "%.4f\n", ($12 + $13) / hz }' "/proc/$1/stat"
}

# The CPU seconds of the processes given, summed.
cpu_sum() {
	local t=0 p
	for p in "$@"; do t=$(awk -v a="$t" -v b="$(cpu_s "$p")" 'BEGIN { printf "%.4f", a + b }'); done
	echo "$t"
}

wait_port() {
	local i
	for ((i = 0; i < 100; i++)); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		sleep 0.1
	done
	die "nothing listens on port $1 (see $tmp/*.log)"
}

results=()
# record NAME REQUESTS CPU_BEFORE CPU_AFTER
record() {
	local us
	us=$(awk -v n="$2" -v a="$3" -v b="$4" 'BEGIN { printf "%.3f", (b - a) * 1e6 / n }')
	results+=("$1|$2|$us")
	printf '  %-34s %10s requests  %8s µs/request\n' "$1" "$2" "$us" >&2
}
us_of() {
	local r
	for r in "${results[@]}"; do [ "${r%%|*}" = "$1" ] && { echo "${r##*|}"; return; }; done
	echo nan
}

echo "vs-peers: server on CPU $SERVER_CPUS, clients on CPU $CLIENT_CPUS; $(nproc) CPUs; $(uname -r)" >&2

# ---- Redis ----
rport=$(free_port)
taskset -c "$SERVER_CPUS" redis-server --port "$rport" --save '' --appendonly no \
	--io-threads 1 >"$tmp/redis.log" 2>&1 &
rpid=$!
pids+=("$rpid")
wait_port "$rport"
taskset -c "$CLIENT_CPUS" redis-benchmark -p "$rport" -t set -n 100000 -P 16 -c 64 -r 100000 -q >/dev/null
for op in get set; do
	n=$((N * 2))
	a=$(cpu_s "$rpid")
	taskset -c "$CLIENT_CPUS" redis-benchmark -p "$rport" -t "$op" -n "$n" -P 16 -c 64 -r 100000 -d 34 -q \
		>"$tmp/redis-$op.out"
	b=$(cpu_s "$rpid")
	record "Redis ${op^^} (-P 16, 64 conns)" "$n" "$a" "$b"
done
kill "$rpid"

# ---- shardmark CQL ----
cport=$(free_port)
aport=$(free_port)
sport=$(free_port)
sapport=$(free_port)
"$bin" serve --smp 1 --cpuset "$SERVER_CPUS" --idle-poll-us 0 --listen-address 127.0.0.1 \
	--native-transport-port "$cport" --native-shard-aware-transport-port "$sapport" \
	--alternator-port "$aport" --prometheus-port "$sport" --api-port 0 >"$tmp/serve.log" 2>&1 &
spid=$!
pids+=("$spid")
wait_port "$cport"
wait_port "$aport"
stress() {
	"$bin" stress --smp 1 --cpuset "$CLIENT_CPUS" "$@" -node 127.0.0.1 -port "native=$cport" \
		-rate threads=1024 >"$tmp/stress.out" 2>&1 || { cat "$tmp/stress.out" >&2; die "stress $* failed"; }
}
stress write "n=$N" -pop "seq=1..$N"
for op in read write; do
	a=$(cpu_s "$spid")
	stress "$op" "n=$N" -pop "seq=1..$N"
	b=$(cpu_s "$spid")
	record "shardmark CQL $op (1,024 in flight)" "$N" "$a" "$b"
done

# ---- shardmark Alternator and nginx, both through wrk ----
# ddb HOST:PORT TARGET BODY: one DynamoDB call with dummy credentials (auth off).
ddb() {
	curl -sf -X POST "http://127.0.0.1:$aport/" -H "X-Amz-Target: DynamoDB_20120810.$1" \
		-H 'Content-Type: application/x-amz-json-1.0' \
		-H 'Authorization: AWS4-HMAC-SHA256 Credential=x/20261201/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0' \
		-d "$2" >/dev/null || die "Alternator $1 failed"
}
ddb CreateTable '{"TableName":"peers","KeySchema":[{"AttributeName":"p","KeyType":"HASH"}],"AttributeDefinitions":[{"AttributeName":"p","AttributeType":"S"}],"BillingMode":"PAY_PER_REQUEST"}'
ddb PutItem '{"TableName":"peers","Item":{"p":{"S":"k1"},"v":{"S":"0123456789abcdef0123456789abcdef01"}}}'

# wrk_lua TARGET BODY: a script POSTing BODY as DynamoDB call TARGET.
wrk_lua() {
	cat <<EOF
wrk.method = "POST"
wrk.body = '$2'
wrk.headers["Content-Type"] = "application/x-amz-json-1.0"
wrk.headers["X-Amz-Target"] = "DynamoDB_20120810.$1"
wrk.headers["Authorization"] = "AWS4-HMAC-SHA256 Credential=x/20261201/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0"
EOF
}
# run_wrk NAME URL SCRIPT PIDS...: wrk for DUR seconds, server CPU of PIDS.
run_wrk() {
	local name=$1 url=$2 script=$3 a b n
	shift 3
	a=$(cpu_sum "$@")
	taskset -c "$CLIENT_CPUS" wrk -t1 -c32 -d"${DUR}s" -s "$script" "$url" >"$tmp/wrk.out" 2>&1 ||
		{ cat "$tmp/wrk.out" >&2; die "wrk failed"; }
	b=$(cpu_sum "$@")
	n=$(awk '/requests in/ { print $1 }' "$tmp/wrk.out")
	grep -q "Non-2xx" "$tmp/wrk.out" && { cat "$tmp/wrk.out" >&2; die "$name: non-2xx answers"; }
	record "$name" "$n" "$a" "$b"
}
wrk_lua GetItem '{"TableName":"peers","Key":{"p":{"S":"k1"}}}' >"$tmp/get.lua"
wrk_lua PutItem '{"TableName":"peers","Item":{"p":{"S":"k1"},"v":{"S":"0123456789abcdef0123456789abcdef01"}}}' >"$tmp/put.lua"
run_wrk "shardmark Alternator GetItem" "http://127.0.0.1:$aport/" "$tmp/get.lua" "$spid"
run_wrk "shardmark Alternator PutItem" "http://127.0.0.1:$aport/" "$tmp/put.lua" "$spid"
kill "$spid"

# nginx: one worker on the server CPU, a fixed 72-byte JSON body for any
# POST, as a DynamoDB GetItem answer is (access log off, as shardmark logs
# nothing per request).
nport=$(free_port)
body='{"Item":{"p":{"S":"k1"},"v":{"S":"0123456789abcdef0123456789abcdef01"}}}'
[ "${#body}" = 72 ] || die "the fixed body is ${#body} bytes, not 72"
mkdir -p "$tmp/nginx"
cat >"$tmp/nginx/nginx.conf" <<EOF
worker_processes 1;
worker_cpu_affinity $(awk -v c="$SERVER_CPUS" 'BEGIN { s = "1"; for (i = 0; i < c; i++) s = s "0"; print s }');
daemon off;
master_process on;
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/error.log;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path $tmp/nginx;
	proxy_temp_path $tmp/nginx;
	fastcgi_temp_path $tmp/nginx;
	uwsgi_temp_path $tmp/nginx;
	scgi_temp_path $tmp/nginx;
	server {
		listen 127.0.0.1:$nport;
		keepalive_requests 1000000;
		location / {
			default_type application/x-amz-json-1.0;
			return 200 '$body';
		}
	}
}
EOF
taskset -c "$SERVER_CPUS" "$NGINX" -c "$tmp/nginx/nginx.conf" -p "$tmp/nginx" >"$tmp/nginx.log" 2>&1 &
npid=$!
pids+=("$npid")
wait_port "$nport"
workers=$(pgrep -P "$npid" | tr '\n' ' ')
[ -n "$workers" ] || die "nginx started no worker"
# shellcheck disable=SC2086
run_wrk "nginx fixed 72-byte reply (GetItem)" "http://127.0.0.1:$nport/" "$tmp/get.lua" "$npid" $workers
# shellcheck disable=SC2086
run_wrk "nginx fixed 72-byte reply (PutItem)" "http://127.0.0.1:$nport/" "$tmp/put.lua" "$npid" $workers

ratio() {
	awk -v p="$(us_of "$1")" -v s="$(us_of "$2")" 'BEGIN { if (s > 0) printf "%.2fx", p / s; else print "n/a" }'
}
echo
echo "server CPU per request (µs), server pinned to CPU $SERVER_CPUS, clients to CPU $CLIENT_CPUS"
printf '%-40s %10s   %-40s %10s %8s\n' peer µs/req shardmark µs/req ratio
row() {
	printf '%-40s %10s   %-40s %10s %8s\n' "$1" "$(us_of "$1")" "$2" "$(us_of "$2")" "$(ratio "$1" "$2")"
}
row "Redis GET (-P 16, 64 conns)" "shardmark CQL read (1,024 in flight)"
row "Redis SET (-P 16, 64 conns)" "shardmark CQL write (1,024 in flight)"
row "nginx fixed 72-byte reply (GetItem)" "shardmark Alternator GetItem"
row "nginx fixed 72-byte reply (PutItem)" "shardmark Alternator PutItem"
echo "ratio = peer's µs/request / shardmark's (>= 1.0: shardmark spends less server CPU per request)"
