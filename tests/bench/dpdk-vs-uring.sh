#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The same cassandra-stress load against `shardmark serve --smp 1` over two
# network stacks, to compare what one server shard does per request:
#
#   uring  server and `shardmark stress` on the kernel's TCP over loopback
#          (127.0.0.1), io_uring on both sides
#   dpdk   server and `shardmark stress` each on DPDK with its own lib/tcpip
#          stack, joined by DPDK's net_memif (shared memory, a unix socket to
#          set it up): server 10.77.0.1/24 (role=server), stress 10.77.0.2/24
#          (role=client), ARP over the link, no kernel on the data path.
#          EAL with --no-huge (no hugepages needed); the driver gives each
#          process its own runtime directory.
#
# For each: `stress write n=N` then `stress read n=N` (keys 1..N, reads
# validated), -rate threads=THREADS, -shards 1. The server is pinned to
# SERVER_CPUS and the stress client to CLIENT_CPUS (taskset), different CPUs
# when there are two or more.
#
# Printed per run: requests/s per server shard, service-time p50 and p99
# (stress's JSON report), client CPU per op (the client shard thread's CPU
# over the measured phase: stress's client_cpu_s; on DPDK that thread also
# polls the port), and the server's counters per op over the whole client
# run (warm-up and set-up included): requests, allocations, tasks, and
# server CPU (task-clock) per op. The server's counters come from its
# SIGUSR1 dump (stderr), which works on both stacks: the Prometheus
# endpoint (/metrics) listens through the selected network stack, so over
# DPDK it is on 10.77.0.1 inside the memif link, where the host kernel has
# no route; over io_uring the script also reads /metrics and prints its
# request count as a cross-check.
#
#   tests/bench/dpdk-vs-uring.sh [path/to/shardmark]
#       (default build-release/app/shardmark/shardmark, then build/...)
#
# Environment:
#   THREADS=64  N=200000           the stress load
#   COL=                           stress's -col settings for both loads, e.g.
#                                  COL='size=FIXED(2048)' for 10 KiB writes
#   SERVER_CPUS, CLIENT_CPUS       default: the first and second CPU this
#                                  process may use (the same on a 1-CPU machine)
#   DPDK_MEM=512                   EAL -m (MB) for each process
#   CALLGRIND=0                    1: afterwards run the DPDK server under
#                                  valgrind --tool=callgrind for a short
#                                  write+read (CALLGRIND_N=5000) and print
#                                  the top functions (slow: minutes)
#   KEEP=1                         keep the work directory (logs, JSON)
#
# Needs root (DPDK EAL), a shardmark built with the DPDK driver, taskset.
# Exit status: 0 when every run finished with 0 errors; 1 when one failed
# (the rest still run and print); 2 for a setup error.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)

die() {
	echo "dpdk-vs-uring: $*" >&2
	exit 2
}

# shellcheck source=tests/bench/bench-common.sh
. "$here/bench-common.sh"
find_shardmark "${1:-}"
"$bin" version 2>/dev/null | grep -q "DPDK driver: built" ||
	die "$bin has no DPDK driver (install libdpdk-dev and rebuild)"
[ "$(id -u)" = 0 ] || die "needs root: DPDK EAL"
command -v taskset >/dev/null || die "taskset is missing (util-linux)"

THREADS=${THREADS:-64}
N=${N:-200000}
DPDK_MEM=${DPDK_MEM:-512}
CALLGRIND=${CALLGRIND:-0}
CALLGRIND_N=${CALLGRIND_N:-5000}
COL=${COL:-}
for v in THREADS N DPDK_MEM CALLGRIND_N; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v=${!v} is not a positive integer"
done

split_cpus

SERVER_IP=10.77.0.1
CLIENT_IP=10.77.0.2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dpdk-vs-uring.XXXXXX")
sock=$tmp/memif.sock
server_pid=
# shellcheck disable=SC2317 # called by the EXIT trap and between runs
stop_server() {
	if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
		kill -TERM "$server_pid" 2>/dev/null
		for _ in $(seq 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
		kill -0 "$server_pid" 2>/dev/null && kill -KILL "$server_pid" 2>/dev/null
		wait "$server_pid" 2>/dev/null
	fi
	server_pid=
}
# shellcheck disable=SC2317
cleanup() {
	stop_server
	if [ "${KEEP:-0}" = 1 ]; then
		echo "work directory kept: $tmp"
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

read -r port_cql port_sa port_prom < <(python3 - <<'EOF'
import socket
ss = [socket.socket() for _ in range(3)]
for s in ss:
    s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])
EOF
) || die "cannot find free ports"

commands=()
show() {
	local s
	s=$(printf '%q ' "$@")
	commands+=("${s% }")
	echo "+ ${s% }"
}

jget() { # FILE KEY [SUBKEY]
	python3 -c 'import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2:]:
    v = v.get(k) if isinstance(v, dict) else None
print("" if v is None else v)' "$@" 2>/dev/null
}

# The server's SIGUSR1 dumps (its stderr, the log): how many so far, waiting
# for the count, and the counters of the K-th one summed over its shards as
# "tasks allocs requests task_clock_ms" (or "- - - -").
dump_count() { grep -c '^shard  *cpu  *tasks' "$1"; }
dump_take() { # LOG: ask for one more dump and wait for it
	local n
	n=$(dump_count "$1")
	kill -USR1 "$server_pid" 2>/dev/null || return 1
	dump_wait "$1" $((n + 1))
}
dump_wait() { # LOG COUNT
	for _ in $(seq 100); do
		[ "$(dump_count "$1")" -ge "$2" ] && { sleep 0.1; return 0; }
		sleep 0.05
	done
	return 1
}
dump_sum() { # LOG K
	awk -v k="$2" '
	/^shard  *cpu  *tasks/ { d++; inblk = d == k; if (inblk) { n = split($0, h, /  +/)
		for (i = 1; i <= n; i++) col[h[i]] = i }; next }
	inblk && /^ *[0-9]+ / { sub(/^ +/, ""); split($0, f, / +/)
		t += f[col["tasks"]]; a += f[col["allocs"]]; r += f[col["requests"]]
		c += f[col["task-clock(ms)"]]; rows++; next }
	{ inblk = 0 }
	END { if (rows) printf "%d %d %d %.1f\n", t, a, r, c; else print "- - - -" }' "$1"
}

# Requests on /metrics (io_uring only: reachable from the host).
metrics_requests() {
	local body
	body=$( (exec 3<>"/dev/tcp/127.0.0.1/$port_prom" &&
		printf 'GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3 && cat <&3) 2>/dev/null) || {
		echo -
		return
	}
	awk '/^shardmark_requests_total/ { r += $NF } END { printf "%d\n", r }' <<<"$body"
}

start_server() { # STACK LOG [wrapper...]
	local stack=$1 log=$2
	shift 2
	local cmd=(taskset -c "$SERVER_CPUS" "$@" "$bin" serve --smp 1 --cpuset "$SERVER_CPUS"
		--alternator-port 0 --drain-timeout-ms 2000)
	if [ "$stack" = uring ]; then
		cmd+=(--listen-address 127.0.0.1 --native-transport-port "$port_cql"
			--native-shard-aware-transport-port "$port_sa" --prometheus-port "$port_prom")
	else
		rm -f "$sock"
		cmd+=(--network-stack dpdk --listen-address "$SERVER_IP" --dpdk-args
			"--no-huge -m $DPDK_MEM --no-pci --vdev net_memif0,role=server,socket=$sock,socket-abstract=no --log-level=lib.eal:warning -- --ipv4 $SERVER_IP/24")
	fi
	show "${cmd[@]}"
	"${cmd[@]}" >"$log" 2>&1 &
	server_pid=$!
	for _ in $(seq 600); do
		kill -0 "$server_pid" 2>/dev/null || break
		grep -q "serving cql" "$log" && return 0
		sleep 0.1
	done
	echo "dpdk-vs-uring: the $stack server did not start; its log:" >&2
	tail -20 "$log" >&2
	stop_server
	return 1
}

failures=()
: >"$tmp/rows.tsv"
ON_RUNNING=:
ON_END=:

run_stress() { # STACK LOAD
	local stack=$1 load=$2 json=$tmp/$1-$2.json out=$tmp/$1-$2.out rc
	local cmd=(taskset -c "$CLIENT_CPUS" "$bin" stress)
	if [ "$stack" = dpdk ]; then
		cmd+=(--network-stack dpdk --dpdk-args
			"--no-huge -m $DPDK_MEM --no-pci --vdev net_memif0,role=client,socket=$sock,socket-abstract=no --log-level=lib.eal:warning -- --ipv4 $CLIENT_IP/24")
	fi
	cmd+=("$load" "n=$N")
	[ "$load" = read ] && cmd+=(-pop "seq=1..$N")
	cmd+=(-rate "threads=$THREADS" -shards 1 -log no-settings "json=$json")
	# shellcheck disable=SC2206 # COL is split into stress's words on purpose
	[ -n "$COL" ] && cmd+=(-col $COL)
	if [ "$stack" = dpdk ]; then
		cmd+=(-node "$SERVER_IP")
	else
		cmd+=(-node 127.0.0.1 -port "native=$port_cql")
	fi
	# Server counters: a SIGUSR1 dump before stress starts (A), one when its
	# measured phase starts (B: it prints "Running ...") and one when it
	# ends (C: stress prints its report, "Client: ..." first; after the
	# exit if it does not). At B and C the script only sends the signal, so
	# as not to take CPU from the run; it reads the dumps afterwards. The
	# table uses C - B; /metrics (io_uring) is read before A and after the
	# exit for the cross-check. ON_RUNNING / ON_END run at B and C (the
	# callgrind run switches instrumentation there).
	local log=$tmp/server-$stack.log n0 m0=- m1=- fifo=$tmp/$stack-$load.fifo line running=0 ended=0
	dump_take "$log"
	n0=$(dump_count "$log")
	[ "$stack" = uring ] && m0=$(metrics_requests)
	show "${cmd[@]}"
	mkfifo "$fifo"
	"${cmd[@]}" >"$fifo" 2>"$tmp/$stack-$load.err" &
	local cpid=$!
	: >"$out"
	while IFS= read -r line; do
		printf '%s\n' "$line" >>"$out"
		if [ "$running" = 0 ] && [[ $line == Running* ]]; then
			running=1
			$ON_RUNNING
			kill -USR1 "$server_pid" 2>/dev/null
		elif [ "$running" = 1 ] && [ "$ended" = 0 ] && [[ $line == Client:* ]]; then
			ended=1
			kill -USR1 "$server_pid" 2>/dev/null
			$ON_END
		fi
	done <"$fifo"
	wait "$cpid"
	rc=$?
	rm -f "$fifo"
	if [ "$ended" = 1 ]; then
		dump_wait "$log" $((n0 + 2))
	else
		$ON_END
		dump_wait "$log" $((n0 + running))
		dump_take "$log"
	fi
	[ "$stack" = uring ] && m1=$(metrics_requests)
	local ca cb cc c0 c1
	ca=$(dump_sum "$log" "$n0")
	cb=$(dump_sum "$log" $((n0 + running)))
	cc=$(dump_sum "$log" $((n0 + running + 1)))
	c0=$cb
	c1=$cc
	[ "$running" = 1 ] || c0='- - - -'
	grep -E '^(Client:|Op rate|Total errors|Read validation|Errors:)' "$out" | sed 's/^/  /'
	local errs vf
	errs=$(jget "$json" errors)
	vf=$(jget "$json" read_validation_failures)
	if [ "$rc" != 0 ] || [ ! -s "$json" ] || [ "${errs:-1}" != 0 ] || [ "${vf:-1}" != 0 ]; then
		failures+=("$stack $load: exit $rc, errors ${errs:-?}, validation failures ${vf:-?}: $(tail -2 "$tmp/$stack-$load.err" | tr '\n' ' ')")
		printf '%s\t%s\tFAILED\n' "$stack" "$load" >>"$tmp/rows.tsv"
		return 1
	fi
	local t0 a0 r0 k0 t1 a1 r1 k1
	read -r t0 a0 r0 k0 <<<"$c0"
	read -r t1 a1 r1 k1 <<<"$c1"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$stack" "$load" \
		"$(jget "$json" ops)" "$(jget "$json" ops_per_s)" \
		"$(jget "$json" service_time p50_ms)" "$(jget "$json" service_time p99_ms)" \
		"$(jget "$json" client_cpu_s)" \
		"$([ "$t0" = - ] || echo $((t1 - t0)))" "$([ "$a0" = - ] || echo $((a1 - a0)))" \
		"$([ "$r0" = - ] || echo $((r1 - r0)))" \
		"$([ "$k0" = - ] || awk -v a="$k0" -v b="$k1" 'BEGIN { printf "%.1f", b - a }')" \
		"$([ "$m0" != - ] && [ "$m1" != - ] && echo "$((m1 - m0)) $(($(cut -d' ' -f3 <<<"$cc") - $(cut -d' ' -f3 <<<"$ca")))")" \
		"$(jget "$json" rows)" >>"$tmp/rows.tsv"
}

echo "shardmark: $bin ($("$bin" version 2>/dev/null | head -1))"
echo "machine: $(nproc) CPUs allowed (${cpus[*]}), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //');" \
	"server on CPU(s) $SERVER_CPUS, stress on CPU(s) $CLIENT_CPUS; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "load: write then read, n=$N, threads=$THREADS, -shards 1; server --smp 1"
for stack in uring dpdk; do
	echo
	echo "== $stack"
	if ! start_server "$stack" "$tmp/server-$stack.log"; then
		failures+=("$stack: the server did not start")
		continue
	fi
	[ "$stack" = dpdk ] && grep -E 'dpdk: port' "$tmp/server-$stack.log" | sed 's/^/  server: /'
	for load in write read; do
		run_stress "$stack" "$load" || [ "$load" = read ] || break
	done
	stop_server
done

echo
echo "Results: one server shard. ops, req/s/shard, p50/p99 (service time) and client us/op (the"
echo "stress shard thread's CPU) are stress's, over its measured phase. Server columns: deltas of the"
echo "server's SIGUSR1 dumps taken when stress prints \"Running\" and its report (the measured phase,"
echo "give or take the script's reaction time), per request the server completed in that window;"
echo "server CPU is its shard thread's task-clock (idle polling included)."
awk -F'\t' '
BEGIN {
	printf "%-6s %-5s %8s %12s %8s %8s %13s %12s %10s %10s %15s\n", "stack", "load", "ops",
		"req/s/shard", "p50 ms", "p99 ms", "client us/op", "srv requests", "allocs/req",
		"tasks/req", "srv CPU us/req"
}
$3 == "FAILED" { printf "%-6s %-5s FAILED (see below)\n", $1, $2; next }
{
	r = $10 != "" && $10 > 0 ? $10 : 0
	printf "%-6s %-5s %8d %12.0f %8.3f %8.3f %13.2f %12s %10s %10s %15s\n", $1, $2, $3, $4,
		$5, $6, $7 * 1e6 / $3, r ? $10 : "-",
		r && $9 != "" ? sprintf("%.2f", $9 / r) : "-",
		r && $8 != "" ? sprintf("%.4f", $8 / r) : "-",
		r && $11 != "" ? sprintf("%.2f", $11 * 1000 / r) : "-"
	if ($12 != "") {
		split($12, m, " ")
		xc[$1 " " $2] = sprintf("%s %s: requests over the whole stress run: /metrics shardmark_requests_total %d, SIGUSR1 dumps %d",
			$1, $2, m[1], m[2])
	}
}
END {
	print ""
	print "Cross-check (io_uring; over DPDK /metrics is only reachable on the memif link):"
	for (k in xc)
		print "  " xc[k]
}' "$tmp/rows.tsv"

if [ "$CALLGRIND" = 1 ]; then
	echo
	echo "== callgrind: the DPDK server under valgrind for write+read n=$CALLGRIND_N"
	if ! command -v valgrind >/dev/null; then
		echo "  skipped: valgrind is missing"
	else
		N_SAVED=$N
		N=$CALLGRIND_N
		# Instrumented only from each run's "Running" line to its end: the
		# measured write and read, not start-up, warm-up or idle time between.
		if start_server dpdk "$tmp/server-dpdk.log" valgrind --tool=callgrind \
			--instr-atstart=no --callgrind-out-file="$tmp/callgrind.out"; then
			ON_RUNNING="callgrind_control -i on $server_pid"
			ON_END="callgrind_control -i off $server_pid"
			run_stress dpdk write >/dev/null
			run_stress dpdk read >/dev/null
			ON_RUNNING=:
			ON_END=:
			stop_server
			local_reqs=$(tail -2 "$tmp/rows.tsv" | awk -F'\t' '$3 != "FAILED" { r += $10 } END { print r + 0 }')
			total_ir=$(callgrind_annotate "$tmp/callgrind.out" 2>/dev/null |
				awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
			[ -n "$total_ir" ] && [ "$local_reqs" -gt 0 ] &&
				echo "  server instructions in the measured phases: $total_ir for $local_reqs requests = $((total_ir / local_reqs)) per request"
			show callgrind_annotate --inclusive=no "$tmp/callgrind.out"
			callgrind_annotate --inclusive=no "$tmp/callgrind.out" 2>/dev/null |
				grep -E 'PROGRAM TOTALS|^ *[0-9,]+ +\(' | head -30
		else
			echo "  skipped: the server did not start under valgrind"
		fi
		N=$N_SAVED
	fi
fi

echo
echo "Commands:"
for c in "${commands[@]}"; do echo "  $c"; done
if [ "${#failures[@]}" -gt 0 ]; then
	echo
	echo "FAILED:"
	for f in "${failures[@]}"; do echo "  $f"; done
	exit 1
fi
exit 0
