#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# N kill -9 cycles of the batch commitlog, by hand (CI runs 3):
#     tests/bench/commitlog-crash.sh [N] [path/to/shardmark]
# Each cycle starts `shardmark serve --commitlog batch` on the same commitlog
# directory, checks that every write acknowledged before the previous kill is
# there with its value, writes a LWT, a logged batch and 4000 prepared inserts
# with up to 64 in flight through the Python driver, and kills the server
# with SIGKILL after 1000 acknowledgements (the rest still in flight).
# Exits non-zero at the first acknowledged write that did not come back.
set -eu
n=${1:-100}
bin=${2:-build/app/shardmark/shardmark}
[ -x "$bin" ] || { echo "no $bin: build first (meson setup build && ninja -C build)" >&2; exit 2; }
here=$(cd "$(dirname "$0")/../integration" && pwd)
start=$(date +%s)
SHARDMARK_BIN=$(realpath "$bin") SHARDMARK_CRASH_CYCLES=$n /usr/bin/python3 -m pytest -q \
	-p no:cacheprovider "$here/test_commitlog.py" -k batch_kill9_keeps_every_acknowledged_write
echo "commitlog-crash: $n kill -9 cycles in batch mode, no acknowledged write lost ($(($(date +%s) - start)) s)"
