# shellcheck shell=bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Shared by the benchmark scripts in tests/bench (sourced, not run):
#   find_shardmark [PATH]   sets $bin: PATH, else build-release/, else build/
#   split_cpus              sets cpus (the CPUs this process may use) and
#                           SERVER_CPUS and CLIENT_CPUS (unless given): the
#                           first and the second of them
# The caller defines die() and $root (the repository root).

find_shardmark() {
	bin=${1:-}
	if [ -n "$bin" ]; then
		[ -x "$bin" ] || die "$bin is not an executable"
		bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
		return
	fi
	for b in "${root:?}/build-release/app/shardmark/shardmark" "$root/build/app/shardmark/shardmark"; do
		[ -x "$b" ] && bin=$b && return
	done
	die "no shardmark binary: build first (deploy/bench.sh) or give its path"
}

split_cpus() {
	local parts p c

	cpus=()
	IFS=, read -r -a parts <<<"$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)"
	for p in "${parts[@]}"; do
		if [[ $p == *-* ]]; then
			for ((c = ${p%-*}; c <= ${p#*-}; c++)); do cpus+=("$c"); done
		else
			cpus+=("$p")
		fi
	done
	[ "${#cpus[@]}" -ge 1 ] || die "cannot read the allowed CPUs"
	SERVER_CPUS=${SERVER_CPUS:-${cpus[0]}}
	if [ "${#cpus[@]}" -ge 2 ]; then
		CLIENT_CPUS=${CLIENT_CPUS:-${cpus[1]}}
	else
		CLIENT_CPUS=${CLIENT_CPUS:-${cpus[0]}}
		echo "WARNING: one CPU only: the server and the client share CPU ${cpus[0]}" >&2
	fi
}
