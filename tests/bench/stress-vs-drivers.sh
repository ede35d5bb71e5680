#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Operations per client CPU-second of three load generators against the same
# shardmark server, same concurrency, same data (cassandra-stress's
# keyspace1.standard1: key blob PRIMARY KEY, "C0".."C4" blobs of 34 bytes,
# 10-byte keys), for a write load and a read load:
#
#   shardmark  `shardmark stress write|read` with one client shard (-shards 1)
#              and threads=C
#   python     the DataStax Python driver (Debian's python3-cassandra, run by
#              /usr/bin/python3): execute_concurrent_with_args() with
#              concurrency C over prepared statements, protocol v4, the
#              driver's default (token-aware) load balancing; one process
#              (tests/bench/driver_load.py)
#   node       the DataStax Node.js driver (npm cassandra-driver, installed
#              into tests/bench/node_modules when missing): C concurrent
#              async loops of prepared executes (tests/bench/driver_load.js)
#
# `shardmark stress write` runs first and creates the schema; the drivers
# reuse the table: they write the rows shardmark stress wrote (the same keys
# and values, population indexes 1..DRIVER_N) with
#   UPDATE keyspace1.standard1 SET "C0"=?,"C1"=?,"C2"=?,"C3"=?,"C4"=? WHERE key=?
# and read them with
#   SELECT * FROM keyspace1.standard1 WHERE key=?
#
# Client CPU, the same way for the three: user+sys CPU time of the client
# over the measured phase only (after connecting, preparing and a warm-up of
# min(50000, n/4) operations, as shardmark stress does):
#   shardmark  its JSON report's client_cpu_s: CPU time of the client shard
#              thread (CLOCK_THREAD_CPUTIME_ID) over the measured phase
#   python     time.process_time() around the measured loop (whole process)
#   node       process.cpuUsage() around the measured loop (whole process)
# Cross-checks, printed under the table: the whole process's user+sys
# (/usr/bin/time; includes start-up, connecting, the warm-up, making keys and
# checks), and for shardmark the whole process's CPU over the measured phase
# (/proc/PID/stat sampled when it prints "Running ..." to its exit).
#
# The server runs `serve --smp 1` pinned to SERVER_CPUS, the clients are
# pinned to CLIENT_CPUS (taskset), on two different CPUs where the machine
# has two or more.
#
#   tests/bench/stress-vs-drivers.sh [path/to/shardmark]
#       (default build-release/app/shardmark/shardmark, then build/...;
#        build with deploy/bench.sh)
#
# Environment:
#   CONCURRENCY=64      in-flight operations of every client
#   N=200000            shardmark stress operations per load
#   DRIVER_N=50000      driver operations per load (at most N: the drivers
#                       read the keys shardmark stress wrote)
#   SERVER_CPUS, CLIENT_CPUS   default: the first and second CPU this
#                       process may use (the same one on a 1-CPU machine)
#   SERVER_SMP=1        server shards
#   PY_TUPLE_READ=1     also run the Python read with tuple_factory rows
#                       (the driver's default named_tuple_factory builds a
#                       namedtuple class per result); 0: skip it
#   PYTHON=/usr/bin/python3  NODE=/usr/bin/node  NPM=npm
#   WORKLOADS="blogposts ycsb-a sb-timeseries"   the workloads beside
#                       standard1 (empty: none), each a write and a read:
#       blogposts      shardmark stress user with docs/profiles/blogposts.yaml
#                      (a clustering row profile): ops(insert=1) (a batch of
#                      a domain's 10 posts) and ops(timeline=1) (10 rows)
#       ycsb-a         shardmark ycsb load / run with config/ycsb/workloada
#                      (recordcount=operationcount=N)
#       sb-timeseries  shardmark scylla-bench -workload timeseries, -mode
#                      write then read, 100 partitions, SB_DURATION (5s) each
#                      the drivers run the same statements on keys of their
#                      own (tests/bench/driver_load.py --workload); shardmark's
#                      figure there is its "Client:" line's busy CPU (reactor
#                      rounds with work, idle polling left out), the drivers'
#                      their process CPU over the measured phase
#   SB_DURATION=5s
#   KEEP=1              keep the work directory (logs, JSON reports)
#
# Exit status: 0 when every row ran; 1 when a step failed (the other rows
# are still printed and the failure is said); 2 for a setup error.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)

die() {
	echo "stress-vs-drivers: $*" >&2
	exit 2
}

# shellcheck source=tests/bench/bench-common.sh
. "$here/bench-common.sh"
find_shardmark "${1:-}"
"$bin" stress help >/dev/null 2>&1 || die "$bin has no working 'stress' command (an old build?)"

CONCURRENCY=${CONCURRENCY:-64}
N=${N:-200000}
DRIVER_N=${DRIVER_N:-50000}
SERVER_SMP=${SERVER_SMP:-1}
PY_TUPLE_READ=${PY_TUPLE_READ:-1}
PYTHON=${PYTHON:-/usr/bin/python3}
NODE=${NODE:-/usr/bin/node}
NPM=${NPM:-npm}
for v in CONCURRENCY N DRIVER_N SERVER_SMP; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v=${!v} is not a positive integer"
done
[ "$DRIVER_N" -le "$N" ] || die "DRIVER_N=$DRIVER_N > N=$N: the drivers read keys 1..DRIVER_N that shardmark stress wrote"
command -v taskset >/dev/null || die "taskset is missing (util-linux)"
[ -x /usr/bin/time ] || die "/usr/bin/time is missing (apt-get install time)"
[ -x "$PYTHON" ] || die "$PYTHON is missing"

split_cpus

tmp=$(mktemp -d "${TMPDIR:-/tmp}/stress-vs-drivers.XXXXXX")
server_pid=
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
		kill -TERM "$server_pid" 2>/dev/null
		for _ in $(seq 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
		kill -0 "$server_pid" 2>/dev/null && kill -KILL "$server_pid" 2>/dev/null
		wait "$server_pid" 2>/dev/null
	fi
	if [ "${KEEP:-0}" = 1 ]; then
		echo "work directory kept: $tmp"
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Free TCP ports (bound to 0 by the kernel, then released).
read -r port_cql port_sa port_prom port_api < <("$PYTHON" - <<'EOF'
import socket
ss = [socket.socket() for _ in range(4)]
for s in ss:
    s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])
EOF
) || die "cannot find free ports"

commands=()
# Print a command as it can be typed again, and remember it.
show() {
	local s
	s=$(printf '%q ' "$@")
	commands+=("${s% }")
	echo "+ ${s% }"
}

# ---- the server ----
server_cmd=(taskset -c "$SERVER_CPUS" "$bin" serve --smp "$SERVER_SMP" --cpuset "$SERVER_CPUS"
	--listen-address 127.0.0.1 --native-transport-port "$port_cql"
	--native-shard-aware-transport-port "$port_sa" --alternator-port 0
	--prometheus-port "$port_prom" --api-port "$port_api" --drain-timeout-ms 2000)
echo "shardmark: $bin ($("$bin" version 2>/dev/null | head -1))"
echo "machine: $(nproc) CPUs allowed (${cpus[*]}); server on CPU(s) $SERVER_CPUS, clients on CPU(s) $CLIENT_CPUS; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "concurrency $CONCURRENCY; shardmark stress n=$N, drivers n=$DRIVER_N per load"
echo
show "${server_cmd[@]}"
"${server_cmd[@]}" >"$tmp/server.log" 2>&1 &
server_pid=$!
up=0
for _ in $(seq 150); do
	kill -0 "$server_pid" 2>/dev/null || break
	if (exec 3<>"/dev/tcp/127.0.0.1/$port_cql") 2>/dev/null; then
		up=1
		break
	fi
	sleep 0.1
done
if [ "$up" != 1 ]; then
	echo "stress-vs-drivers: the server did not start (port $port_cql); its log:" >&2
	tail -20 "$tmp/server.log" >&2
	exit 1
fi

# Sums of the server's counters: requests bytes_in bytes_out.
server_counters() {
	local body
	body=$( (exec 3<>"/dev/tcp/127.0.0.1/$port_prom" &&
		printf 'GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3 && cat <&3) 2>/dev/null) || {
		echo "- - -"
		return
	}
	awk '/^shardmark_requests_total/ { r += $NF } /^shardmark_bytes_in_total/ { i += $NF }
	     /^shardmark_bytes_out_total/ { o += $NF } END { printf "%d %d %d\n", r, i, o }' <<<"$body"
}

# One field of a JSON file (numbers, strings, booleans).
jget() {
	"$PYTHON" -c 'import json, sys
v = json.load(open(sys.argv[1])).get(sys.argv[2])
print("" if v is None else (str(v).lower() if isinstance(v, bool) else v))' "$1" "$2" 2>/dev/null
}

clk_tck=$(getconf CLK_TCK)
failures=()
# rows.tsv: client load ops wall ops_s cpu ops_cpu rows proc_cpu proc_measured_cpu proc_wall
#           srv_requests srv_bytes_in srv_bytes_out note
: >"$tmp/rows.tsv"

# run_client TAG CLIENT LOAD JSON SAMPLE -- command...
# Runs the command under /usr/bin/time with its stdout read line by line
# (shown when it matters); with SAMPLE=1 reads the client's /proc stat when
# it prints "Running " (shardmark stress: the measured phase starts).
run_client() {
	local tag=$1 client=$2 load=$3 json=$4 sample=$5
	shift 6
	local fifo=$tmp/$tag.fifo out=$tmp/$tag.out tfile=$tmp/$tag.time pid='' at='' line rc
	local c0 c1
	show "$@"
	c0=$(server_counters)
	mkfifo "$fifo"
	/usr/bin/time -f '%U %S %e' -o "$tfile" "$@" >"$fifo" 2>"$tmp/$tag.err" &
	local tpid=$!
	while IFS= read -r line; do
		printf '%s\n' "$line" >>"$out"
		if [ "$sample" = 1 ] && [ -z "$pid" ]; then
			pid=$(pgrep -P "$tpid" | head -1)
		fi
		if [ "$sample" = 1 ] && [ -z "$at" ] && [[ $line == Running* ]] && [ -n "$pid" ]; then
			local f
			read -r -a f <"/proc/$pid/stat" 2>/dev/null && at=$((f[13] + f[14]))
		fi
		case $line in
		Client:* | "Op rate"* | "Total errors"* | python* | node*) echo "  $line" ;;
		esac
	done <"$fifo"
	wait "$tpid"
	rc=$?
	c1=$(server_counters)
	rm -f "$fifo"
	if [ "$rc" != 0 ] || [ ! -s "$json" ]; then
		local why
		why=$( (grep -v '^Command exited' "$tmp/$tag.err"; tail -3 "$out") | grep -v '^[[:space:]]*$' | tail -3 | tr '\n' ' ')
		failures+=("$client $load: exit status $rc: $why")
		printf '%s\t%s\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t%s\n' "$client" "$load" "FAILED (exit $rc), see below" >>"$tmp/rows.tsv"
		echo "  FAILED (exit status $rc): $why" >&2
		return 1
	fi
	local u s e pm=-
	read -r u s e < <(grep -E '^[0-9.]+ [0-9.]+ [0-9.:]+$' "$tfile" | tail -1)
	if [ -n "$at" ]; then
		# whole-process CPU at exit minus at "Running": the measured phase plus the report
		pm=$(awk -v u="$u" -v s="$s" -v at="$at" -v hz="$clk_tck" 'BEGIN { printf "%.2f", u + s - at / hz }')
	fi
	local r0 i0 o0 r1 i1 o1
	read -r r0 i0 o0 <<<"$c0"
	read -r r1 i1 o1 <<<"$c1"
	local ops wall ops_s cpu ops_cpu rows
	ops=$(jget "$json" ops)
	wall=$(jget "$json" wall_s)
	[ -n "$wall" ] || wall=$(jget "$json" seconds)
	ops_s=$(jget "$json" ops_per_s)
	cpu=$(jget "$json" client_cpu_s)
	ops_cpu=$(jget "$json" ops_per_client_cpu_s)
	rows=$(jget "$json" rows)
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n' "$client" "$load" "$ops" "$wall" \
		"$ops_s" "$cpu" "$ops_cpu" "$rows" "$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')" \
		"$pm" "$e" "$((r1 - r0))" "$((i1 - i0))" "$((o1 - o0))" >>"$tmp/rows.tsv"
	return 0
}

# ---- 1. shardmark stress (creates the schema) ----
echo
echo "== shardmark stress (1 client shard, threads=$CONCURRENCY, n=$N)"
sm_ok=1
for load in write read; do
	if [ "$load" = read ] && [ "$sm_ok" != 1 ]; then
		failures+=("shardmark read: skipped, the write (which makes the data) failed")
		printf 'shardmark\tread\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\tskipped, see below\n' >>"$tmp/rows.tsv"
		continue
	fi
	run_client "sm-$load" shardmark "$load" "$tmp/sm-$load.json" 1 -- \
		taskset -c "$CLIENT_CPUS" "$bin" stress "$load" "n=$N" -rate "threads=$CONCURRENCY" \
		-node 127.0.0.1 -port "native=$port_cql" -shards 1 -log no-settings "json=$tmp/sm-$load.json" ||
		{ [ "$load" = write ] && sm_ok=0; }
	if [ -s "$tmp/sm-$load.json" ]; then
		vf=$(jget "$tmp/sm-$load.json" read_validation_failures)
		er=$(jget "$tmp/sm-$load.json" errors)
		if [ "${vf:-0}" != 0 ] || [ "${er:-0}" != 0 ]; then
			failures+=("shardmark $load: $er errors, $vf read validation failures")
		fi
	fi
done

# ---- 2. the Python driver ----
echo
echo "== Python driver ($PYTHON, python3-cassandra), execute_concurrent_with_args concurrency=$CONCURRENCY, n=$DRIVER_N"
py_runs=("write named_tuple python" "read named_tuple python")
[ "$PY_TUPLE_READ" = 1 ] && py_runs+=("read tuple python(tuple-rows)")
for r in "${py_runs[@]}"; do
	read -r load rf label <<<"$r"
	if [ "$sm_ok" != 1 ]; then
		failures+=("$label $load: skipped, no schema (shardmark stress write failed)")
		printf '%s\t%s\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\tskipped\n' "$label" "$load" >>"$tmp/rows.tsv"
		continue
	fi
	run_client "py-$load-$rf" "$label" "$load" "$tmp/py-$load-$rf.json" 0 -- \
		taskset -c "$CLIENT_CPUS" "$PYTHON" "$here/driver_load.py" "$load" --host 127.0.0.1 \
		--port "$port_cql" --n "$DRIVER_N" --concurrency "$CONCURRENCY" --row-factory "$rf" \
		--json "$tmp/py-$load-$rf.json"
done

# ---- 3. the Node.js driver ----
echo
echo "== Node.js driver ($NODE, npm cassandra-driver), $CONCURRENCY async loops, n=$DRIVER_N"
node_why=
if [ ! -x "$NODE" ] && ! command -v "$NODE" >/dev/null; then
	node_why="$NODE is missing"
elif [ ! -f "$here/node_modules/cassandra-driver/package.json" ]; then
	# --no-package-lock: package.json pins the driver's version; no lock
	# file is left in the source tree.
	commands+=("(cd $(printf '%q' "$here") && $NPM install --no-audit --no-fund --no-package-lock)")
	echo "+ ${commands[-1]}"
	(cd "$here" && "$NPM" install --no-audit --no-fund --no-package-lock) >"$tmp/npm.log" 2>&1
	rc=$?
	if [ "$rc" != 0 ]; then
		node_why="npm install failed (exit status $rc): $(grep -v '^[[:space:]]*$' "$tmp/npm.log" | tail -3 | tr '\n' ' ')"
	elif [ ! -f "$here/node_modules/cassandra-driver/package.json" ]; then
		node_why="npm install did not install cassandra-driver"
	fi
fi
for load in write read; do
	if [ -n "$node_why" ]; then
		failures+=("node $load: row missing: $node_why")
		printf 'node\t%s\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\tMISSING: %.100s\n' "$load" "$node_why" >>"$tmp/rows.tsv"
		continue
	fi
	if [ "$sm_ok" != 1 ]; then
		failures+=("node $load: skipped, no schema (shardmark stress write failed)")
		printf 'node\t%s\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\tskipped\n' "$load" >>"$tmp/rows.tsv"
		continue
	fi
	run_client "node-$load" node "$load" "$tmp/node-$load.json" 0 -- \
		taskset -c "$CLIENT_CPUS" "$NODE" "$here/driver_load.js" "$load" --host 127.0.0.1 \
		--port "$port_cql" --n "$DRIVER_N" --concurrency "$CONCURRENCY" --json "$tmp/node-$load.json"
done
[ -n "$node_why" ] && echo "  Node rows missing: $node_why" >&2

# ---- report ----
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "Results (client CPU = user+sys of the client over the measured phase: shardmark stress's"
echo "client_cpu_s, the client shard thread's CPU time; the drivers' whole process, time.process_time()"
echo "and process.cpuUsage(); rows = rows the reads returned)"
awk -F'\t' '
function num(x, f) { return x == "-" || x == "" ? "-" : sprintf(f, x) }
BEGIN {
	printf "%-22s %-5s %8s %8s %10s %13s %26s %8s\n", "client", "load", "ops", "wall s", "ops/s",
		"client CPU s", "ops per client CPU-second", "rows"
}
{
	if ($15 != "") {
		printf "%-22s %-5s %s\n", $1, $2, $15
		next
	}
	printf "%-22s %-5s %8d %8.3f %10.0f %13.3f %26.0f %8s\n", $1, $2, $3, $4, $5, $6, $7,
		$2 == "read" ? $8 : "-"
	r[$1 " " $2] = $7
}
END {
	print ""
	print "ratios of ops per client CPU-second:"
	split("write read", loads, " ")
	for (k = 1; k <= 2; k++) {
		l = loads[k]
		n = split("python node python(tuple-rows)", cl, " ")
		for (j = 1; j <= n; j++) {
			if (cl[j] == "python(tuple-rows)" && l == "write")
				continue
			a = r["shardmark " l]
			b = r[cl[j] " " l]
			if (a != "" && b != "" && b > 0)
				printf "  %-5s shardmark/%-18s %8.1f\n", l, cl[j], a / b
			else
				printf "  %-5s shardmark/%-18s %8s (a row is missing)\n", l, cl[j], "-"
		}
	}
}' "$tmp/rows.tsv"

echo
echo "Cross-checks: process CPU (user+sys s). measured = the figure above; process-measured ="
echo "shardmark stress's whole process from its \"Running\" line to its exit (all threads, the report"
echo "too; /proc stat, ${clk_tck} Hz ticks); whole process = /usr/bin/time over the whole run (start-up,"
echo "connecting, schema, warm-up, making keys and values, checks). Server side: requests completed"
echo "and payload bytes per request over the whole client run (warm-up and set-up included); EXECUTE"
echo "of a prepared statement is smaller than a QUERY carrying the statement's text."
awk -F'\t' '
BEGIN {
	printf "%-22s %-5s %9s %16s %14s %10s %10s %12s %13s\n", "client", "load", "measured", "process-measured",
		"whole process", "whole wall", "srv reqs", "bytes in/req", "bytes out/req"
}
$15 == "" {
	printf "%-22s %-5s %9.3f %16s %14s %10s %10d %12.1f %13.1f\n", $1, $2, $6, $10, $9, $11, $12,
		($12 > 0 ? $13 / $12 : 0), ($12 > 0 ? $14 / $12 : 0)
}' "$tmp/rows.tsv"

for f in "$tmp"/py-*.json "$tmp"/node-*.json; do
	[ -s "$f" ] || continue
	"$PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
print("%s %s: %s; %s; protocol v%s; prepared %s%s%s; warm-up %d ops; %d of %d checked rows wrong" % (
    d["client"], d["load"], d["driver"], d.get("load_balancing"), d.get("protocol_version"),
    d.get("prepared"), (", sends " + d["message_type"]) if d.get("message_type") else "",
    (", " + d["connection_class"] + ", " + d["row_factory"]) if d.get("row_factory") else "",
    d["warmup"], d["check_failures"], d["checked"]))' "$f"
done
for load in write read; do
	f=$tmp/sm-$load.json
	[ -s "$f" ] || continue
	echo "shardmark $load: $(grep -m1 '^Warming up' "$tmp/sm-$load.out"); $(jget "$f" errors) errors;" \
		"$(jget "$f" read_validation_failures) read validation failures; $(grep -m1 '^Routing: [0-9]' "$tmp/sm-$load.out")"
done

# ---- the other workloads ----
WORKLOADS=${WORKLOADS-blogposts ycsb-a sb-timeseries}
SB_DURATION=${SB_DURATION:-5s}
: >"$tmp/wl.tsv"
# wl_shardmark WORKLOAD LOAD -- command: run it, keep its "Client:" line's figures.
wl_shardmark() {
	local w=$1 l=$2 out=$tmp/wl-$1-$2.out rc line
	shift 3
	show "$@"
	"$@" >"$out" 2>&1
	rc=$?
	line=$(grep -m1 '^Client: ' "$out")
	echo "  $line"
	if [ "$rc" != 0 ] || [ -z "$line" ]; then
		failures+=("shardmark $w $l: exit status $rc: $(tail -3 "$out" | tr '\n' ' ')")
		printf '%s\t%s\tshardmark\t-\t-\t-\t-\n' "$w" "$l" >>"$tmp/wl.tsv"
		return 1
	fi
	# Client: 1 shard, C threads; loader CPU X s for N ops: busy B s = U us/op (R ops per busy CPU-second), ...
	sed -E 's/.*loader CPU ([0-9.]+) s for ([0-9]+) ops: busy ([0-9.]+) s = [0-9.]+ us\/op \(([0-9]+) ops per busy.*/\2 \1 \3 \4/' <<<"$line" |
		{ read -r n cpu busy r; printf '%s\t%s\tshardmark\t%s\t%s\t%s\t%s\n' "$w" "$l" "$n" "$cpu" "$busy" "$r"; } >>"$tmp/wl.tsv"
}
# wl_driver WORKLOAD LOAD CLIENT -- command (writes JSON to $tmp/wl-CLIENT-WORKLOAD-LOAD.json)
wl_driver() {
	local w=$1 l=$2 c=$3 json=$tmp/wl-$3-$1-$2.json rc
	shift 4
	show "$@"
	"$@" >"$tmp/wl-$c-$w-$l.out" 2>&1
	rc=$?
	echo "  $(tail -1 "$tmp/wl-$c-$w-$l.out")"
	if [ "$rc" != 0 ] || [ ! -s "$json" ]; then
		failures+=("$c $w $l: exit status $rc: $(tail -2 "$tmp/wl-$c-$w-$l.out" | tr '\n' ' ')")
		printf '%s\t%s\t%s\t-\t-\t-\t-\n' "$w" "$l" "$c" >>"$tmp/wl.tsv"
		return 1
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$w" "$l" "$c" "$(jget "$json" ops)" "$(jget "$json" client_cpu_s)" \
		"$(jget "$json" client_cpu_s)" "$(jget "$json" ops_per_client_cpu_s)" >>"$tmp/wl.tsv"
}
sm_common=(-node 127.0.0.1 -port "native=$port_cql" -shards 1 -log no-settings)
for w in $WORKLOADS; do
	echo
	echo "== workload $w"
	for l in write read; do
		case $w:$l in
		blogposts:write) op=insert ;;
		blogposts:read) op=timeline ;;
		esac
		case $w in
		blogposts)
			wl_shardmark "$w" "$l" -- taskset -c "$CLIENT_CPUS" "$bin" stress user \
				"profile=$root/docs/profiles/blogposts.yaml" "ops($op=1)" "n=$N" -pop "seq=1..$N" \
				-rate "threads=$CONCURRENCY" "${sm_common[@]}" ;;
		ycsb-a)
			wl_shardmark "$w" "$l" -- taskset -c "$CLIENT_CPUS" "$bin" ycsb \
				"$([ "$l" = write ] && echo load || echo run)" cassandra-cql -P "$root/config/ycsb/workloada" \
				-p hosts=127.0.0.1 -p "port=$port_cql" -p "recordcount=$N" -p "operationcount=$N" \
				-threads "$CONCURRENCY" -shards 1 ;;
		sb-timeseries)
			wl_shardmark "$w" "$l" -- taskset -c "$CLIENT_CPUS" "$bin" scylla-bench -mode "$l" \
				-workload timeseries -partition-count 100 -duration "$SB_DURATION" -nodes 127.0.0.1 \
				-port "$port_cql" -concurrency "$CONCURRENCY" -shards 1 ;;
		*) die "WORKLOADS: unknown workload '$w' (blogposts, ycsb-a, sb-timeseries)" ;;
		esac
		wl_driver "$w" "$l" python -- taskset -c "$CLIENT_CPUS" "$PYTHON" "$here/driver_load.py" "$l" \
			--workload "$w" --host 127.0.0.1 --port "$port_cql" --n "$DRIVER_N" \
			--concurrency "$CONCURRENCY" --json "$tmp/wl-python-$w-$l.json"
		if [ -z "$node_why" ]; then
			wl_driver "$w" "$l" node -- taskset -c "$CLIENT_CPUS" "$NODE" "$here/driver_load.js" "$l" \
				--workload "$w" --host 127.0.0.1 --port "$port_cql" --n "$DRIVER_N" \
				--concurrency "$CONCURRENCY" --json "$tmp/wl-node-$w-$l.json"
		fi
	done
done
if [ -s "$tmp/wl.tsv" ]; then
	echo
	echo "Workloads (shardmark: busy CPU of its client shard, from its Client: line; drivers: process CPU"
	echo "over the measured phase; ratios of ops per CPU-second)"
	awk -F'\t' '
	BEGIN { printf "%-14s %-5s %-9s %8s %8s %8s %14s\n", "workload", "load", "client", "ops", "CPU s",
		"busy s", "ops per CPU-s" }
	{
		if ($4 == "-")
			printf "%-14s %-5s %-9s %8s %8s %8s %14s\n", $1, $2, $3, "-", "-", "-", "FAILED"
		else
			printf "%-14s %-5s %-9s %8d %8.3f %8.3f %14.0f\n", $1, $2, $3, $4, $5, $6, $7
		r[$1 " " $2 " " $3] = $7
		if (!(($1 " " $2) in seen)) { seen[$1 " " $2] = 1; order[++n] = $1 " " $2 }
	}
	END {
		for (k = 1; k <= n; k++) {
			a = r[order[k] " shardmark"]
			line = sprintf("  %-20s", order[k])
			split("python node", cl, " ")
			for (j = 1; j <= 2; j++) {
				b = r[order[k] " " cl[j]]
				line = line sprintf("  shardmark/%s %s", cl[j],
					(a != "" && a != "-" && b != "" && b != "-" && b > 0) ? sprintf("%.1f", a / b) : "-")
			}
			print line
		}
	}' "$tmp/wl.tsv"
fi

echo
echo "Commands:"
for c in "${commands[@]}"; do echo "  $c"; done

if [ "${#failures[@]}" -gt 0 ]; then
	echo
	echo "FAILED steps:" >&2
	for f in "${failures[@]}"; do echo "  $f" >&2; done
	exit 1
fi
exit 0
