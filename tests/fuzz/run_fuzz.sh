#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Run one libFuzzer harness a bounded number of times, starting from its
# checked-in corpus (never written to: new inputs go to WORKDIR/new), under
# ASan+UBSan. Exits non-zero after a crash, leak, UBSan report or hang and
# prints where the reproducer is and how to replay it.
#   run_fuzz.sh HARNESS CORPUS DICT WORKDIR RUNS [MAX_SECONDS]
set -euo pipefail

if [ "$#" -lt 5 ]; then
	echo "usage: $0 HARNESS CORPUS DICT WORKDIR RUNS [MAX_SECONDS]" >&2
	exit 2
fi
exe=$(realpath "$1") corpus=$2 dict=$3 work=$4 runs=$5 secs=${6:-60}
name=$(basename "$exe")

rm -rf "$work"
mkdir -p "$work/new" "$work/artifacts"
# A fixed seed: the same mutations every run, so a failure here reproduces.
# -timeout: an input that runs a minute is a hang, whatever the load; slow
# inputs are looked for in the long runs (docs/benchmarks.md).
args=(-seed=1 -runs="$runs" -max_total_time="$secs" -timeout=60 -rss_limit_mb=2048
	-artifact_prefix="$work/artifacts/" -print_final_stats=1)
if [ -f "$dict" ]; then
	args+=(-dict="$dict")
fi

status=0
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
	UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
	"$exe" "${args[@]}" "$work/new" "$corpus" >"$work/log" 2>&1 || status=$?
tail -n 40 "$work/log"

repro=$(find "$work/artifacts" -type f | head -n 1)
if [ "$status" -ne 0 ] || [ -n "$repro" ]; then
	echo "run_fuzz: $name failed (exit $status); log: $work/log" >&2
	if [ -n "$repro" ]; then
		echo "run_fuzz: reproducer: $repro" >&2
		echo "run_fuzz: replay with: $exe $repro" >&2
	fi
	exit 1
fi
