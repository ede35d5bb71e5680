#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# Instructions per operation of every perf-simple-query workload, counted by
# valgrind's callgrind (no PMU needed, the same on every machine).
#
# Collection starts off (--collect-atstart=no); perf-simple-query turns it
# on for its measured iteration only (the callgrind client request around
# it), so setup and population are left out and
#     insns/op = Ir / N
# for N requests on one shard: the worker task, the CQL or Alternator
# executor, the store and the reply, plus the reactor loop that runs them
# (one task per request). No network, as in ScyllaDB's tool.
#
#   tests/bench/insns-per-op.sh [path/to/shardmark]     (default build-release, then build)
set -eu

bin=${1:-}
if [ -z "$bin" ]; then
	for b in build-release/app/shardmark/shardmark build/app/shardmark/shardmark; do
		[ -x "$b" ] && bin=$b && break
	done
fi
[ -n "$bin" ] && [ -x "$bin" ] || { echo "no shardmark binary: build first (deploy/bench.sh)" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind is missing: apt-get install valgrind" >&2; exit 2; }

N=${N:-10000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Total instructions (Ir) of one run.
ir() {
	n=$1
	shift
	out="$tmp/cg.out"
	valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$out" "$bin" perf-simple-query \
		--smp 1 --idle-poll-us 0 --blocked-reactor-notify-ms 0 --partitions 1000 --random-seed 1 --operations-per-shard "$n" \
		"$@" >"$tmp/run.log" 2>"$tmp/vg.log" || { cat "$tmp/vg.log" "$tmp/run.log" >&2; exit 1; }
	sed -n 's/^summary: *//p' "$out" | awk '{print $1}'
}

measure() {
	name=$1
	shift
	a=$(ir "$N" "$@")
	awk -v a="$a" -v n="$N" -v name="$name" 'BEGIN { printf "%-44s %10.0f\n", name, a / n }'
}

echo "binary: $bin ($("$bin" version))"
echo "callgrind, 1 shard, concurrency 100, insns/op = Ir of the measured $N requests / $N"
printf '%-44s %10s\n' workload insns/op
measure "CQL read" 
measure "CQL write" --write
measure "CQL delete" --delete
measure "CQL counter write" --counters --write
# the cost of a secondary index on C0: the write's pre- and post-image and the view write
measure "CQL write_index" --workload write_index
# the cost of a materialized view keyed by C0: the pre- and post-image and the view row written whole
measure "CQL write_view" --workload write_view
for mode in forbid_rmw unsafe always_use_lwt only_rmw_uses_lwt; do
	measure "Alternator read ($mode)" --alternator "$mode" --workload read
	measure "Alternator write ($mode)" --alternator "$mode" --workload write
	if [ "$mode" != forbid_rmw ]; then
		measure "Alternator write_rmw ($mode)" --alternator "$mode" --workload write_rmw
	fi
done
# the index, TTL and stream costs: perf-alternator's write_gsi (a GSI on C0), and
# writes with an expiration attribute to a table with TTL on (the scanner runs)
measure "Alternator write_gsi (only_rmw_uses_lwt)" --alternator o --workload write_gsi
measure "Alternator write_ttl (only_rmw_uses_lwt)" --alternator o --workload write_ttl
# the stream's (CDC's) cost: write's UpdateItem, each leaving a NEW_AND_OLD_IMAGES record
measure "Alternator write_stream (only_rmw_uses_lwt)" --alternator o --workload write_stream
