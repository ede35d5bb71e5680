#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Build shardmark and run every test twice: a normal (debugoptimized) build, then
# an AddressSanitizer + UBSan build; then check that the release build compiles;
# then build the libFuzzer harnesses with clang and run each a bounded number of
# times over its corpus (one test each). Ends with one line
# "N passed, N failed[, N skipped]".
#   deploy/test.sh
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

deploy/install-deps.sh --test

# setup_dir DIR [meson options...]: configure DIR, or reconfigure it if meson
# already configured it.
setup_dir() {
	local dir=$1
	shift
	if [ -d "$dir/meson-private" ]; then
		meson setup --reconfigure "$dir" "$@"
	else
		meson setup "$dir" "$@"
	fi
}

# run_suite DIR: build DIR and run its tests; returns non-zero on any failure.
# The test log is removed first so a failed build is not counted with old results.
run_suite() {
	local dir=$1
	rm -f "$dir/meson-logs/testlog.json"
	ninja -C "$dir" || return 1
	meson test -C "$dir" --print-errorlogs --num-processes 2 || return 1
}

status=0

echo "=== build: debugoptimized ===" >&2
setup_dir build
run_suite build || status=1

echo "=== build-asan: -Db_sanitize=address,undefined ===" >&2
setup_dir build-asan -Db_sanitize=address,undefined -Db_lundef=false
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	run_suite build-asan || status=1

# The quick start's optimised build (deploy/bench.sh): -O3 finds warnings
# -O2 does not, and a user's first command must compile.
echo "=== build-release: --buildtype=release (compile only, as deploy/bench.sh) ===" >&2
setup_dir build-release --buildtype=release -Dtests=false
if ! ninja -C build-release; then
	echo "test.sh: the release build (deploy/bench.sh) does not compile" >&2
	status=1
fi

# The fuzz harnesses (tests/fuzz), instrumented for libFuzzer and ASan+UBSan;
# a crash fails its test and prints the reproducer's path.
echo "=== build-fuzz: -Dfuzz=true (clang, libFuzzer, ASan+UBSan) ===" >&2
rm -f build-fuzz/meson-logs/testlog.json
if CC=clang setup_dir build-fuzz -Dfuzz=true -Dtests=false && ninja -C build-fuzz; then
	meson test -C build-fuzz --suite fuzz --print-errorlogs --num-processes 2 || status=1
else
	echo "test.sh: the fuzz build (build-fuzz, clang) does not compile" >&2
	status=1
fi

# Totals over the runs from meson's JSON test logs (one object per line).
summary=$(/usr/bin/python3 - build/meson-logs/testlog.json build-asan/meson-logs/testlog.json \
	build-fuzz/meson-logs/testlog.json <<'PY'
import json, sys

passed = failed = skipped = 0
for path in sys.argv[1:]:
    try:
        f = open(path, encoding="utf-8")
    except FileNotFoundError:
        continue
    with f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            result = json.loads(line).get("result")
            if result in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif result == "SKIP":
                skipped += 1
            else:
                failed += 1
line = f"{passed} passed, {failed} failed"
if skipped:
    line += f", {skipped} skipped"
print(line)
PY
)
echo "$summary"

case "$summary" in
"0 passed, 0 failed" | "0 passed, 0 failed,"*)
	# Only skips or nothing at all: the suite did not test anything.
	echo "test.sh: no test ran" >&2
	exit 1
	;;
esac
exit "$status"
