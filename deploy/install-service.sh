#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Install shardmark as a systemd service: the binary, deploy/host-prep.sh,
# the unit, its environment file and /etc/shardmark/shardmark.yaml (the last
# two only where none exists, so local edits survive), then daemon-reload.
# It starts nothing unless --start. Running it again changes only what
# differs; --dry-run prints what it would do and changes nothing.
#   deploy/install-service.sh [--dry-run] [--start] [--enable] [--binary PATH]
#       [--prefix DIR] [--destdir DIR] [--cpu-affinity LIST]
# See docs/deploy.md.
set -euo pipefail

PROG=install-service
cd "$(dirname "${BASH_SOURCE[0]}")/.."

usage() {
	cat <<'EOF'
usage: deploy/install-service.sh [options]
  --dry-run            print what it would install and run; change nothing
  --binary PATH        the shardmark binary to install (default:
                       build-release/app/shardmark/shardmark from deploy/bench.sh,
                       else PREFIX/bin/shardmark as left by meson install)
  --prefix DIR         install under DIR/bin and DIR/sbin (default /usr/local)
  --destdir DIR        stage every file under DIR (packaging, tests); runs no systemctl
  --cpu-affinity LIST  add a drop-in with CPUAffinity=LIST (needed when the shard
                       CPUs are isolated with isolcpus=)
  --enable             systemctl enable shardmark (start at boot)
  --start              systemctl restart shardmark after installing
Files: PREFIX/bin/shardmark, PREFIX/sbin/shardmark-host-prep,
/etc/systemd/system/shardmark.service, /etc/default/shardmark (if absent),
/etc/shardmark/shardmark.yaml (if absent).
EOF
}

die() {
	echo "$PROG: $*" >&2
	exit 1
}

usage_error() {
	echo "$PROG: $*" >&2
	echo "run '$0 --help' for the options" >&2
	exit 2
}

dry=0 start=0 enable=0 binary="" prefix=/usr/local destdir="" affinity=""
while [ $# -gt 0 ]; do
	case "$1" in
	--dry-run | -n) dry=1; shift ;;
	--start) start=1; shift ;;
	--enable) enable=1; shift ;;
	--binary) binary=${2:?--binary needs a path}; shift 2 ;;
	--binary=*) binary=${1#*=}; shift ;;
	--prefix) prefix=${2:?--prefix needs a directory}; shift 2 ;;
	--prefix=*) prefix=${1#*=}; shift ;;
	--destdir) destdir=${2:?--destdir needs a directory}; shift 2 ;;
	--destdir=*) destdir=${1#*=}; shift ;;
	--cpu-affinity) affinity=${2:?--cpu-affinity needs a CPU list}; shift 2 ;;
	--cpu-affinity=*) affinity=${1#*=}; shift ;;
	-h | --help)
		usage
		exit 0
		;;
	*) usage_error "unknown argument '$1'" ;;
	esac
done

case "$prefix" in
/*) prefix=${prefix%/} ;;
*) usage_error "--prefix '$prefix' must be an absolute path, e.g. /usr/local" ;;
esac
if [ -n "$destdir" ]; then
	case "$destdir" in
	/*) destdir=${destdir%/} ;;
	*) destdir=$PWD/$destdir ;;
	esac
fi
if [ -n "$affinity" ] && ! [[ $affinity =~ ^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$ ]]; then
	usage_error "--cpu-affinity '$affinity' is not a CPU list: write it like 2-9 or 2-5,8"
fi
if [ -n "$destdir" ] && { [ "$start" = 1 ] || [ "$enable" = 1 ]; }; then
	usage_error "--start and --enable act on this machine's systemd: not with --destdir"
fi

bin_dest=$prefix/bin/shardmark
if [ -z "$binary" ]; then
	if [ -x build-release/app/shardmark/shardmark ]; then
		binary=build-release/app/shardmark/shardmark
	elif [ -x "$destdir$bin_dest" ]; then
		binary=$destdir$bin_dest # meson install put it there already
	else
		die "no shardmark binary: build it with deploy/bench.sh (it leaves" \
			"build-release/app/shardmark/shardmark), or meson setup build-release" \
			"--buildtype=release -Dtests=false && ninja -C build-release, or pass --binary PATH"
	fi
fi
if [ ! -f "$binary" ] || [ ! -x "$binary" ]; then
	die "--binary $binary is not an executable file: check the path"
fi

if [ "$dry" = 0 ] && [ -z "$destdir" ] && [ "$(id -u)" -ne 0 ]; then
	die "installing into $prefix and /etc needs root: run it with sudo," \
		"add --dry-run to see what it would do, or --destdir DIR to stage the files"
fi
if [ "$dry" = 1 ]; then
	echo "$PROG: dry run: nothing is changed; lines starting DRY-RUN: are what a real run would do"
fi

quoted() {
	local s
	printf -v s '%q ' "$@"
	echo "${s% }"
}

run() {
	if [ "$dry" = 1 ]; then
		echo "DRY-RUN: $(quoted "$@")"
	else
		echo "+ $(quoted "$@")"
		"$@"
	fi
}

# install_file MODE SRC DEST [keep] [WHAT]: copy SRC to DESTDIR/DEST unless
# the same bytes are there; with keep, never replace an existing DEST. WHAT
# names a generated SRC in the messages.
install_file() {
	local mode=$1 src=$2 dest=$destdir$3 keep=${4:-} what=${5:-$2} shown
	if [ -e "$dest" ]; then
		if cmp -s "$src" "$dest"; then
			echo "$PROG: ok: $dest is up to date"
			return 0
		fi
		if [ "$keep" = keep ]; then
			echo "$PROG: ok: $dest exists and is kept (the shipped version is $what)"
			return 0
		fi
	fi
	shown=$(quoted "$src")
	[ "$what" = "$src" ] || shown="[$what]"
	if [ "$dry" = 1 ]; then
		echo "DRY-RUN: install -D -m $mode $shown $(quoted "$dest")"
	else
		echo "+ install -D -m $mode $shown $(quoted "$dest")"
		install -D -m "$mode" "$src" "$dest"
	fi
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The unit names /usr/local/bin: follow --prefix.
sed -e "s|/usr/local/bin/shardmark|$bin_dest|g" \
	-e "s|/usr/local/sbin/shardmark-host-prep|$prefix/sbin/shardmark-host-prep|g" \
	deploy/systemd/shardmark.service >"$tmp/shardmark.service"

install_file 0755 "$binary" "$bin_dest"
install_file 0755 deploy/host-prep.sh "$prefix/sbin/shardmark-host-prep"
if [ "$prefix" = /usr/local ]; then
	install_file 0644 deploy/systemd/shardmark.service /etc/systemd/system/shardmark.service
else
	install_file 0644 "$tmp/shardmark.service" /etc/systemd/system/shardmark.service "" \
		"deploy/systemd/shardmark.service (with /usr/local changed to $prefix)"
fi
install_file 0644 deploy/systemd/shardmark.env /etc/default/shardmark keep
# 0640: the file may hold auth_superuser_password
install_file 0640 config/shardmark.yaml /etc/shardmark/shardmark.yaml keep

dropin=/etc/systemd/system/shardmark.service.d/cpu-affinity.conf
if [ -n "$affinity" ]; then
	printf '# Written by deploy/install-service.sh --cpu-affinity\n[Service]\nCPUAffinity=%s\n' \
		"${affinity//,/ }" >"$tmp/cpu-affinity.conf"
	install_file 0644 "$tmp/cpu-affinity.conf" "$dropin" "" \
		"a drop-in with CPUAffinity=${affinity//,/ }"
elif [ -e "$destdir$dropin" ]; then
	echo "$PROG: note: $destdir$dropin sets CPUAffinity from an earlier --cpu-affinity; kept"
fi

if [ -n "$destdir" ]; then
	echo "$PROG: staged under $destdir; on the target run: systemctl daemon-reload"
elif ! command -v systemctl >/dev/null 2>&1 || [ ! -d /run/systemd/system ]; then
	echo "$PROG: systemd is not running here: skipped systemctl daemon-reload" >&2
	if [ "$start" = 1 ] || [ "$enable" = 1 ]; then
		die "--start/--enable need systemd: start it by hand with" \
			"$bin_dest serve --config /etc/shardmark/shardmark.yaml"
	fi
else
	run systemctl daemon-reload
	[ "$enable" = 0 ] || run systemctl enable shardmark.service
	if [ "$start" = 1 ]; then
		run systemctl restart shardmark.service
		[ "$dry" = 1 ] || systemctl --no-pager status shardmark.service || true
	else
		echo "$PROG: not started (pass --start, or: systemctl start shardmark)"
	fi
fi
