#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# What TLS costs the server, per request, in one run: CQL read and write at
# 1,024 in flight (shardmark stress, plain and with -transport, to a server
# whose plain ports stay plain and whose TLS twins are beside them),
# Alternator GetItem and PutItem over plain HTTP and over HTTPS (wrk, 32
# connections, keep-alive, so the handshakes are a few and the records are
# what is measured), and the path the server's TLS took (kernel TLS or user
# space, with the reason). Environment: N (CQL requests per load, 200000).
# The server runs one shard pinned to SERVER_CPUS, wrk on CLIENT_CPUS; the
# server's CPU is its utime+stime over each load divided by its requests.
#
#   tests/bench/tls-cost.sh [path/to/shardmark]
# Environment: SECONDS_PER_LOAD (default 5), SERVER_CPUS, CLIENT_CPUS.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
die() {
	echo "tls-cost.sh: $*" >&2
	exit 2
}
# shellcheck source=bench-common.sh
. "$root/tests/bench/bench-common.sh"
find_shardmark "${1:-}"
split_cpus
DUR=${SECONDS_PER_LOAD:-5}
command -v wrk >/dev/null || {
	[ "$(id -u)" = 0 ] || die "needs wrk: apt-get install wrk"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q wrk >/dev/null || die "apt-get install wrk failed"
}
command -v openssl >/dev/null || die "needs the openssl command: apt-get install openssl"

tmp=$(mktemp -d)
spid=
cleanup() {
	[ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

free_port() {
	/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
wait_port() {
	local i
	for ((i = 0; i < 100; i++)); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		sleep 0.1
	done
	cat "$tmp/serve.log" >&2
	die "nothing listens on port $1"
}
cpu_s() {
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); printf "%.4f\n", ($12 + $13) / hz }' "/proc/$1/stat"
}

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
	-subj /CN=localhost -keyout "$tmp/s.key" -out "$tmp/s.crt" 2>/dev/null

http=$(free_port)
https=$(free_port)
prom=$(free_port)
cql=$(free_port)
cql_tls=$(free_port)
N=${N:-200000}
"$bin" serve --smp 1 --cpuset "$SERVER_CPUS" --idle-poll-us 0 --listen-address 127.0.0.1 \
	--native-transport-port "$cql" --native-shard-aware-transport-port "$(free_port)" \
	--native-transport-port-ssl "$cql_tls" \
	--native-shard-aware-transport-port-ssl "$(free_port)" \
	--client-encryption-options-enabled --client-encryption-options-certificate "$tmp/s.crt" \
	--client-encryption-options-keyfile "$tmp/s.key" \
	--alternator-port "$http" --alternator-https-port "$https" \
	--alternator-encryption-options-certificate "$tmp/s.crt" \
	--alternator-encryption-options-keyfile "$tmp/s.key" --prometheus-port "$prom" --api-port 0 \
	>"$tmp/serve.log" 2>&1 &
spid=$!
wait_port "$http"
wait_port "$https"
auth='AWS4-HMAC-SHA256 Credential=x/20261201/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0'
curl -sf -X POST "http://127.0.0.1:$http/" -H 'X-Amz-Target: DynamoDB_20120810.CreateTable' \
	-H "Authorization: $auth" \
	-d '{"TableName":"tls","KeySchema":[{"AttributeName":"p","KeyType":"HASH"}],"AttributeDefinitions":[{"AttributeName":"p","AttributeType":"S"}],"BillingMode":"PAY_PER_REQUEST"}' \
	>/dev/null || die "CreateTable failed"
item='{"p":{"S":"k1"},"v":{"S":"0123456789abcdef0123456789abcdef01"}}'
for op in GetItem PutItem; do
	if [ $op = GetItem ]; then body='{"TableName":"tls","Key":{"p":{"S":"k1"}}}'; else body="{\"TableName\":\"tls\",\"Item\":$item}"; fi
	cat >"$tmp/$op.lua" <<LUA
wrk.method = "POST"
wrk.body = '$body'
wrk.headers["Content-Type"] = "application/x-amz-json-1.0"
wrk.headers["X-Amz-Target"] = "DynamoDB_20120810.$op"
wrk.headers["Authorization"] = "$auth"
LUA
done
curl -sf -X POST "http://127.0.0.1:$http/" -H 'X-Amz-Target: DynamoDB_20120810.PutItem' \
	-H "Authorization: $auth" -d "{\"TableName\":\"tls\",\"Item\":$item}" >/dev/null || die "PutItem failed"

declare -A us
stress() {
	"$bin" stress --smp 1 --cpuset "$CLIENT_CPUS" "$@" -node 127.0.0.1 -rate threads=1024 \
		>"$tmp/stress.out" 2>&1 || { cat "$tmp/stress.out" >&2; die "stress $* failed"; }
}
stress write "n=$N" -pop "seq=1..$N" -port "native=$cql"
for op in read write; do
	for scheme in plain tls; do
		a=$(cpu_s "$spid")
		if [ $scheme = tls ]; then
			stress "$op" "n=$N" -pop "seq=1..$N" -port "native=$cql_tls" -transport "truststore=$tmp/s.crt"
		else
			stress "$op" "n=$N" -pop "seq=1..$N" -port "native=$cql"
		fi
		b=$(cpu_s "$spid")
		us[$op.$scheme]=$(awk -v n="$N" -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", (b - a) * 1e6 / n }')
		printf '  CQL %-5s %-6s %9s requests  %7s µs/request\n' "$op" "$scheme" "$N" "${us[$op.$scheme]}" >&2
	done
done
for op in GetItem PutItem; do
	for scheme in http https; do
		port=$http
		[ $scheme = https ] && port=$https
		a=$(cpu_s "$spid")
		taskset -c "$CLIENT_CPUS" wrk -t1 -c32 -d"${DUR}s" -s "$tmp/$op.lua" "$scheme://127.0.0.1:$port/" \
			>"$tmp/wrk.out" 2>&1 || { cat "$tmp/wrk.out" >&2; die "wrk failed"; }
		b=$(cpu_s "$spid")
		! grep -q Non-2xx "$tmp/wrk.out" || { cat "$tmp/wrk.out" >&2; die "$op over $scheme: errors"; }
		n=$(awk '/requests in/ { print $1 }' "$tmp/wrk.out")
		us[$op.$scheme]=$(awk -v n="$n" -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", (b - a) * 1e6 / n }')
		printf '  %-8s %-6s %9s requests  %7s µs/request\n' "$op" "$scheme" "$n" "${us[$op.$scheme]}" >&2
	done
done
metrics=$(curl -sf "http://127.0.0.1:$prom/metrics")
ktls=$(awk '/^shardmark_tls_ktls_tx_total/ { s += $2 } END { print s + 0 }' <<<"$metrics")
user=$(awk '/^shardmark_tls_userspace_tx_total/ { s += $2 } END { print s + 0 }' <<<"$metrics")
reason=$(sed -n 's/.*kernel TLS unavailable: \([^;]*\);.*/\1/p' "$tmp/serve.log" | head -1)

echo
echo "server CPU per request (µs), 1 shard on CPU $SERVER_CPUS, clients on CPU $CLIENT_CPUS, $(uname -r)"
echo "(CQL: shardmark stress, 1,024 in flight; Alternator: wrk -t1 -c32)"
printf '%-10s %10s %10s %8s\n' request plain TLS TLS/plain
for op in read write; do
	printf '%-10s %10s %10s %8s\n' "CQL $op" "${us[$op.plain]}" "${us[$op.tls]}" \
		"$(awk -v a="${us[$op.plain]}" -v b="${us[$op.tls]}" 'BEGIN { printf "%.2fx", b / a }')"
done
for op in GetItem PutItem; do
	printf '%-10s %10s %10s %8s\n' "$op" "${us[$op.http]}" "${us[$op.https]}" \
		"$(awk -v a="${us[$op.http]}" -v b="${us[$op.https]}" 'BEGIN { printf "%.2fx", b / a }')"
done
echo "TLS connections: $ktls with kernel TLS for sending, $user in user space${reason:+ ($reason)}"
