#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# The commitlog's costs (docs/benchmarks.md, issue 24): for the commitlog off,
# periodic and batch, on each directory given (default /dev/shm and /var/tmp:
# tmpfs and the machine's disk),
#   - perf-simple-query --write (in process, no network), median tps;
#   - shardmark stress write over CQL at 256 in flight, op/s, and in batch
#     mode the writes per fdatasync (shardmark_commitlog_records_total /
#     syncs_total);
#   - then kill -9, a restart, and the replay's own line: segments,
#     mutations, bytes, seconds, MB/s.
#     tests/bench/commitlog-bench.sh [path/to/shardmark] [DIR...]
set -eu
bin=${1:-build-release/app/shardmark/shardmark}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- /dev/shm /var/tmp
[ -x "$bin" ] || { echo "no $bin: build first (deploy/bench.sh)" >&2; exit 2; }
N=${N:-300000}
PSQ_SECONDS=${PSQ_SECONDS:-3}
port=${PORT:-29042}
prom=$((port + 3))
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT

serve() { # mode dir log
	"$bin" serve --smp 1 --cpuset 0 --commitlog "$1" --commitlog-directory "$2" \
		--native-transport-port "$port" --native-shard-aware-transport-port $((port + 1)) \
		--alternator-port $((port + 2)) --prometheus-port "$prom" --api-port $((port + 4)) \
		>"$3" 2>&1 &
	pid=$!
	i=0
	until grep -q "serving cql" "$3" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 1800 ] || { cat "$3" >&2; exit 1; }
		sleep 0.1
	done
}

metric_sum() {
	curl -s "http://127.0.0.1:$prom/metrics" | awk -v m="$1" '$1 ~ "^"m"[{]" {s += $2} END {print s + 0}'
}

echo "shardmark: $("$bin" version | head -1)"
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -r)"
for d in "$@"; do
	fs=$(df -T "$d" | awk 'NR == 2 {print $2}')
	for mode in off periodic batch; do
		cl="$d/shardmark-clbench.$$"
		rm -rf "$cl"
		psq=$("$bin" perf-simple-query --smp 1 --cpuset 0 --write --duration "$PSQ_SECONDS" \
			--commitlog "$mode" --commitlog-directory "$cl" 2>&1 |
			awk '/median=/ {print $2}')
		rm -rf "$cl"
		serve "$mode" "$cl" "$tmp/serve.log"
		rate=$("$bin" stress --cpuset 1 write "n=$N" -rate threads=256 -node 127.0.0.1 \
			-port "native=$port" 2>&1 | awk -F: '/^Op rate/ {print $2}' |
			awk '{print $1}')
		per=-
		if [ "$mode" != off ]; then
			recs=$(metric_sum shardmark_commitlog_records_total)
			syncs=$(metric_sum shardmark_commitlog_syncs_total)
			[ "$mode" = batch ] && per=$(awk -v r="$recs" -v s="$syncs" 'BEGIN {printf "%.1f", s ? r / s : 0}')
		fi
		kill -9 "$pid"
		wait "$pid" 2>/dev/null || true
		pid=
		replay=-
		if [ "$mode" != off ]; then
			sleep 1 # the dead process's listeners go with its io_uring
			serve "$mode" "$cl" "$tmp/replay.log"
			replay=$(sed -n 's/.*replay done on [0-9]* shards in parallel: //p' "$tmp/replay.log")
			kill "$pid"
			wait "$pid" 2>/dev/null || true
			pid=
		fi
		rm -rf "$cl"
		printf '%-9s %-6s %-8s psq_write_tps=%-10s stress_write_ops=%-8s writes_per_fsync=%-6s replay: %s\n' \
			"$d" "$fs" "$mode" "$psq" "$rate" "$per" "$replay"
	done
done

# Replay speed with every shard replaying its own log in parallel: a log of
# perf-simple-query --write on 2 shards, replayed by serve --smp 2.
for d in "$@"; do
	cl="$d/shardmark-clbench.$$"
	rm -rf "$cl"
	"$bin" perf-simple-query --smp 2 --write --duration "$PSQ_SECONDS" --commitlog periodic \
		--commitlog-directory "$cl" >"$tmp/psq2.log" 2>&1 ||
		{ echo "$d: perf-simple-query --smp 2 failed:" >&2; tail -5 "$tmp/psq2.log" >&2; }
	sync
	"$bin" serve --smp 2 --commitlog periodic --commitlog-directory "$cl" \
		--native-transport-port "$port" --native-shard-aware-transport-port $((port + 1)) \
		--alternator-port $((port + 2)) --prometheus-port "$prom" --api-port $((port + 4)) \
		>"$tmp/replay2.log" 2>&1 &
	pid=$!
	i=0
	until grep -q "serving cql" "$tmp/replay2.log" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 1200 ] || { cat "$tmp/replay2.log" >&2; exit 1; }
		sleep 0.1
	done
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	pid=
	rm -rf "$cl"
	echo "$d replay, 2 shards: $(sed -n 's/.*replay done on 2 shards in parallel: //p' "$tmp/replay2.log")"
done
