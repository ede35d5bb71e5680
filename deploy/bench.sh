#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Build shardmark optimised (tests off) and run its in-process benchmark.
#   deploy/bench.sh [shardmark bench options...]   e.g. deploy/bench.sh --duration 5
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

deploy/install-deps.sh --build

if [ -d build-release/meson-private ]; then
	meson setup --reconfigure build-release --buildtype=release -Dtests=false
else
	meson setup build-release --buildtype=release -Dtests=false
fi
ninja -C build-release

exec build-release/app/shardmark/shardmark bench "$@"
