#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Run pytest with every server on the DPDK driver (net_tap, --no-huge, the
# userspace TCP/IP stack) and the clients in the kernel on the tap's other
# side: SHARDMARK_TEST_NET=dpdk-tap (see conftest.py), inside a network
# namespace of its own, deleted afterwards. Exit 77 (meson: skipped) when
# that cannot run here: not root, no /dev/net/tun, no ip, no pytest under
# /usr/bin/python3, or $SHARDMARK_BIN built without the DPDK driver.
#   SHARDMARK_BIN=build/app/shardmark/shardmark run_pytest_dpdk.sh TEST_FILE...
py=/usr/bin/python3
skip() {
	echo "skipped: $*"
	exit 77
}
[ "$(id -u)" -eq 0 ] || skip "needs root (a network namespace and tap devices)"
[ -c /dev/net/tun ] || skip "no /dev/net/tun: net_tap cannot create its interface"
command -v ip >/dev/null 2>&1 || skip "no ip command (install iproute2)"
"$py" -c 'import pytest' 2>/dev/null ||
	skip "$py cannot import pytest (install python3-pytest: deploy/install-deps.sh --test)"
[ -n "$SHARDMARK_BIN" ] || skip "SHARDMARK_BIN is not set"
case "$("$SHARDMARK_BIN" version 2>/dev/null)" in
*"DPDK driver: built"*) ;;
*) skip "$SHARDMARK_BIN has no DPDK driver (install libdpdk-dev and rebuild)" ;;
esac

ns="smtest-$$"
ip netns add "$ns" || skip "cannot create a network namespace"
trap 'ip netns del "$ns"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
ip -n "$ns" link set lo up || exit 1
SHARDMARK_TEST_NET=dpdk-tap ip netns exec "$ns" \
	"$py" -m pytest -q -p no:cacheprovider "$@"
