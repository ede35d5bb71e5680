#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Install what shardmark needs on Debian 12, and only what is missing.
#   deploy/install-deps.sh [--build|--test]
#     --build  compiler, meson/ninja and the libraries (default)
#     --test   the above plus cmocka, pytest with the CQL and DynamoDB clients, valgrind,
#              clang with libFuzzer for the fuzz build, and headless Chromium with
#              Pillow (the HTML report's screenshot test)
set -euo pipefail

usage() {
	echo "usage: $0 [--build|--test]" >&2
	exit 2
}

mode="build"
case "$#" in
0) ;;
1)
	case "$1" in
	--build) mode="build" ;;
	--test) mode="test" ;;
	-h | --help)
		echo "usage: $0 [--build|--test]"
		exit 0
		;;
	*) usage ;;
	esac
	;;
*) usage ;;
esac

build_pkgs=(gcc libc6-dev meson ninja-build pkg-config liburing-dev libnuma-dev
	libyaml-dev libmimalloc-dev liblz4-dev nettle-dev libjsmn-dev zlib1g-dev libedit-dev
	libgnutls28-dev libisal-dev
	libdpdk-dev)
test_pkgs=(libcmocka-dev python3 python3-pytest python3-cassandra python3-boto3 awscli valgrind
	shellcheck clang libclang-rt-14-dev openssl chromium python3-pil)

pkgs=("${build_pkgs[@]}")
if [ "$mode" = test ]; then
	pkgs+=("${test_pkgs[@]}")
fi

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
	echo "install-deps: dpkg-query/apt-get not found: this script supports Debian 12" \
		"(bookworm); on another system install these yourself: ${pkgs[*]}" >&2
	exit 1
fi

missing=()
for p in "${pkgs[@]}"; do
	# "install ok installed", or "hold ok installed" for a held package
	case "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)" in
	*" ok installed") ;;
	*) missing+=("$p") ;;
	esac
done

if [ "${#missing[@]}" -eq 0 ]; then
	exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
sudo=()
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		sudo=(sudo)
	else
		echo "install-deps: missing packages (${missing[*]}) and not root, with no sudo:" \
			"run this script as root or install them with apt-get" >&2
		exit 1
	fi
fi

"${sudo[@]}" apt-get update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
	apt-get install -y --no-install-recommends "${missing[@]}"
