#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Prepare a lab box for shardmark: hugepages, a NIC bound to vfio-pci for
# DPDK, CPU isolation, IRQs off the shard CPUs, the CPU frequency governor.
# Every step checks the current state first and changes only what differs,
# so running it twice is safe; --dry-run prints the exact commands and writes
# it would do and changes nothing (no root needed). See docs/deploy.md.
#   deploy/host-prep.sh [--dry-run] COMMAND [options]
#   deploy/host-prep.sh --help
# HOST_PREP_ROOT=DIR reads and writes DIR/sys, DIR/proc and DIR/run instead of
# the real ones and never runs a command that changes the machine (for tests).
set -euo pipefail

PROG=host-prep
R=${HOST_PREP_ROOT:-}
DRY=0
CMD=""
STATE_DIR=/run/shardmark

usage() {
	cat <<'EOF'
usage: deploy/host-prep.sh [--dry-run] COMMAND [options]

Commands (each takes --dry-run: print what it would change, change nothing):
  hugepages [--pages N] [--size 2M|1G] [--node N]
        reserve N hugepages (default 1024 of 2M, 2 of 1G), on NUMA node N or
        spread over all nodes; mount hugetlbfs for that size if none is
  bind-nic PCI_ADDR [--driver vfio-pci|uio_pci_generic] [--force] [--noiommu]
        give a NIC to DPDK with dpdk-devbind.py (Debian package dpdk); loads the
        driver; refuses the NIC that carries the default route unless --force;
        --noiommu turns on vfio's unsafe no-IOMMU mode (VMs without a vIOMMU)
  unbind-nic PCI_ADDR [--driver KERNEL_DRIVER]
        give it back to its kernel driver (the one it had, else from modalias)
  isolate-cpus LIST
        print the kernel command line (isolcpus, nohz_full, rcu_nocbs) for the
        shard CPUs and how to set it with GRUB: a running kernel cannot change it
  irq-affinity LIST [--nic IFACE] [--irq-cpus LIST]
  irq-affinity --nic IFACE --irq-cpus LIST
        stop irqbalance and move IRQs off the shard CPUs LIST (to the other
        online CPUs, or to --irq-cpus) via /proc/irq/*/smp_affinity_list;
        --nic moves only that interface's IRQs
  governor performance [--cpus LIST]
        set the cpufreq governor (of every online CPU, or of LIST)
  status [--cpus LIST]
        show hugepages, NICs and their drivers, IOMMU, CPU isolation, IRQs on
        the shard CPUs (LIST, default the isolated ones), irqbalance, governors
  all [--config FILE] [--cpus LIST] [--pages N] [--size 2M|1G] [--node N]
      [--nic-pci PCI_ADDR] [--nic IFACE] [--irq-cpus LIST] [--governor G]
      [--network-stack uring|dpdk] [--force] [--noiommu]
        every step above from the environment file FILE (the service's
        /etc/default/shardmark: SHARDMARK_NETWORK_STACK, SHARDMARK_ARGS and the
        HOST_PREP_* keys) and the flags, which win over the file

LIST is a CPU list like 2-9,12. Exit status: 0 done (or nothing to do),
1 a step failed or the machine cannot do it, 2 a usage error.
EOF
}

die() {
	echo "$PROG: $*" >&2
	exit 1
}

usage_error() {
	echo "$PROG: $*" >&2
	echo "run '$0 --help' for the commands and options" >&2
	exit 2
}

note() { echo "$PROG: $*"; }

warn() { echo "$PROG: warning: $*" >&2; }

# quoted CMD...: the command as one shell-quoted line.
quoted() {
	local s
	printf -v s '%q ' "$@"
	echo "${s% }"
}

# run CMD...: run a command that changes the machine, or only print it.
run() {
	if [ "$DRY" = 1 ]; then
		echo "DRY-RUN: $(quoted "$@")"
	elif [ -n "$R" ]; then
		echo "SKIPPED (HOST_PREP_ROOT is set): $(quoted "$@")"
	else
		echo "+ $(quoted "$@")"
		"$@"
	fi
}

# sysfs_write PATH VALUE: write VALUE to a sysfs/procfs file, or only print it.
sysfs_write() {
	local path=$R$1 value=$2 err
	if [ "$DRY" = 1 ]; then
		echo "DRY-RUN: echo $value > $path"
		return 0
	fi
	echo "+ echo $value > $path"
	if ! err=$({ printf '%s\n' "$value" >"$path"; } 2>&1); then
		echo "$PROG: writing $value to $path failed: ${err##*: }" >&2
		return 1
	fi
}

# need_root: a real run writes /sys and /proc.
need_root() {
	if [ "$DRY" = 0 ] && [ -z "$R" ] && [ "$(id -u)" -ne 0 ]; then
		die "$CMD: needs root (it writes /sys and /proc): run it with sudo," \
			"or add --dry-run to see what it would change"
	fi
}

# need_tool NAME PACKAGE: die naming the Debian package when NAME is missing
# (a dry run only warns: it runs nothing).
need_tool() {
	if ! command -v "$1" >/dev/null 2>&1; then
		if [ "$DRY" = 1 ]; then
			warn "$CMD: $1 is not installed (apt-get install $2); a real run needs it"
		else
			die "$CMD: $1 not found: install Debian's $2 package (apt-get install $2)"
		fi
	fi
}

# oneline: the lines of stdin joined with spaces.
oneline() {
	local all
	all=$(tr '\n' ' ')
	echo "${all% }"
}

# names DIR: the names of DIR's entries, space separated.
names() {
	local e out=""
	for e in "$1"/*; do
		[ -e "$e" ] && out="$out${out:+ }${e##*/}"
	done
	echo "$out"
}

readf() {
	local v
	v=$(cat "$R$1" 2>/dev/null) || return 1
	echo "$v"
}

#
# CPU lists
#

# cpulist_expand LIST: the CPUs of "2-9,12", one per line; fails on bad syntax.
cpulist_expand() {
	local list=$1 part a b
	[[ $list =~ ^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$ ]] || return 1
	local IFS=,
	for part in $list; do
		a=${part%-*}
		b=${part#*-}
		a=$((10#$a))
		b=$((10#$b))
		[ "$a" -le "$b" ] || return 1
		seq "$a" "$b"
	done | sort -n -u
}

# cpulist_compress: CPUs on stdin (one per line) as a list like 2-9,12.
cpulist_compress() {
	sort -n -u | awk '
		NR == 1 { s = $1; p = $1; next }
		$1 == p + 1 { p = $1; next }
		{ out = out (out ? "," : "") (s == p ? s : s "-" p); s = $1; p = $1 }
		END { if (NR) out = out (out ? "," : "") (s == p ? s : s "-" p); print out }'
}

online_cpus() {
	local l
	l=$(readf /sys/devices/system/cpu/online) || die "cannot read $R/sys/devices/system/cpu/online"
	cpulist_expand "$l"
}

# check_cpulist WHAT LIST: LIST is well formed and every CPU is online.
check_cpulist() {
	local what=$1 list=$2 cpus online c
	cpus=$(cpulist_expand "$list") ||
		usage_error "$CMD: $what '$list' is not a CPU list: write it like 2-9 or 2-5,8 (ranges low-high)"
	online=$(online_cpus)
	for c in $cpus; do
		if ! grep -qx "$c" <<<"$online"; then
			die "$CMD: $what '$list' names CPU $c, which is not online" \
				"(online: $(cpulist_compress <<<"$online")): choose CPUs from that list"
		fi
	done
}

# cpus_minus A B: the CPUs of A not in B (one per line each side).
cpus_minus() {
	comm -23 <(sort <<<"$1") <(sort <<<"$2") | sort -n
}

# cpus_to_mask CPUS: the hex mask (32-bit groups, comma separated) of the CPUs.
cpus_to_mask() {
	local -a words=()
	local c w max=0 i out=""
	for c in $1; do
		w=$((c / 32))
		words[w]=$((${words[w]:-0} | (1 << (c % 32))))
		[ "$w" -gt "$max" ] && max=$w
	done
	for ((i = max; i >= 0; i--)); do
		if [ -z "$out" ]; then
			out=$(printf '%x' "${words[i]:-0}")
		else
			out="$out,$(printf '%08x' "${words[i]:-0}")"
		fi
	done
	echo "$out"
}

# mask_to_cpus MASK: the CPUs of a hex mask like "ff,00000003", one per line.
mask_to_cpus() {
	local hex=${1//,/} i d bit n
	n=${#hex}
	for ((i = 0; i < n; i++)); do
		d=$((16#${hex:n-1-i:1}))
		for bit in 0 1 2 3; do
			if ((d & (1 << bit))); then echo $((i * 4 + bit)); fi
		done
	done
}

#
# hugepages
#

size_kb() {
	case "$1" in
	2M | 2m | 2048k | 2048kB) echo 2048 ;;
	1G | 1g | 1024M | 1048576k | 1048576kB) echo 1048576 ;;
	*) usage_error "$CMD: --size '$1': use 2M or 1G" ;;
	esac
}

# hugetlbfs_mount KB: the mount point of a hugetlbfs with that page size.
hugetlbfs_mount() {
	local kb=$1 deflt dev mnt fs opts size
	deflt=$(awk '/^Hugepagesize:/ { print $2 }' "$R/proc/meminfo" 2>/dev/null || true)
	while read -r dev mnt fs opts _; do
		[ "$fs" = hugetlbfs ] || continue
		size=$deflt
		case ",$opts," in
		*,pagesize=2M,* | *,pagesize=2048k,*) size=2048 ;;
		*,pagesize=1G,* | *,pagesize=1024M,* | *,pagesize=1048576k,*) size=1048576 ;;
		esac
		if [ "$size" = "$kb" ]; then
			echo "$mnt"
			return 0
		fi
	done <"$R/proc/mounts"
	return 1
}

cmd_hugepages() {
	local pages="" size=2M node="" kb dir path cur got mnt want_mnt
	while [ $# -gt 0 ]; do
		case "$1" in
		--pages) pages=${2:?--pages needs a number}; shift 2 ;;
		--pages=*) pages=${1#*=}; shift ;;
		--size) size=${2:?--size needs 2M or 1G}; shift 2 ;;
		--size=*) size=${1#*=}; shift ;;
		--node) node=${2:?--node needs a NUMA node number}; shift 2 ;;
		--node=*) node=${1#*=}; shift ;;
		*) usage_error "hugepages: unknown argument '$1'" ;;
		esac
	done
	kb=$(size_kb "$size")
	if [ -z "$pages" ]; then
		if [ "$kb" = 2048 ]; then pages=1024; else pages=2; fi
	fi
	[[ $pages =~ ^[0-9]+$ ]] || usage_error "hugepages: --pages '$pages' is not a number of pages"
	if [ ! -d "$R/sys/kernel/mm/hugepages/hugepages-${kb}kB" ]; then
		die "hugepages: this kernel or CPU has no ${size} hugepages" \
			"($R/sys/kernel/mm/hugepages/hugepages-${kb}kB is missing;" \
			"1G pages need the CPU flag pdpe1gb): use --size 2M"
	fi
	if [ -n "$node" ]; then
		[[ $node =~ ^[0-9]+$ ]] || usage_error "hugepages: --node '$node' is not a NUMA node number"
		dir=/sys/devices/system/node/node$node/hugepages/hugepages-${kb}kB
		if [ ! -d "$R$dir" ]; then
			die "hugepages: no NUMA node $node (nodes: $(readf /sys/devices/system/node/online || echo 0)):" \
				"pick one of those, or leave out --node to spread the pages over all nodes"
		fi
	else
		dir=/sys/kernel/mm/hugepages/hugepages-${kb}kB
	fi
	path=$dir/nr_hugepages
	need_root
	cur=$(readf "$path") || die "hugepages: cannot read $R$path"
	local where=${node:+NUMA node $node}
	where=${where:-all nodes}
	if [ "$cur" = "$pages" ]; then
		note "hugepages: ok: $pages pages of ${size} already reserved ($where)"
	else
		note "hugepages: $cur -> $pages pages of ${size} ($where)"
		sysfs_write "$path" "$pages"
		if [ "$DRY" = 0 ]; then
			got=$(readf "$path" || echo "?")
			if [ "$got" != "$pages" ]; then
				warn "hugepages: asked for $pages pages of ${size}, the kernel reserved $got" \
					"(memory too fragmented): reserve them at boot instead, with" \
					"'hugepagesz=${size} hugepages=$pages' on the kernel command line"
			fi
		fi
	fi
	# DPDK maps hugepages through a hugetlbfs mount of the same page size.
	if [ "$pages" -gt 0 ]; then
		if mnt=$(hugetlbfs_mount "$kb"); then
			note "hugepages: ok: hugetlbfs for ${size} pages is mounted on $mnt"
		else
			if [ "$kb" = 2048 ]; then want_mnt=/dev/hugepages; else want_mnt=/dev/hugepages1G; fi
			note "hugepages: no hugetlbfs mount for ${size} pages: mounting one on $want_mnt"
			run mkdir -p "$want_mnt"
			run mount -t hugetlbfs -o "pagesize=${size}" nodev "$want_mnt"
		fi
	fi
	if [ "$DRY" = 0 ] && [ "$cur" != "$pages" ]; then
		note "hugepages: this lasts until reboot; to keep it, add 'hugepagesz=${size} hugepages=$pages'" \
			"to the kernel command line (see isolate-cpus for where)"
	fi
}

#
# NICs
#

# pci_normalize ADDR: 0000:03:00.0 form, lower case; fails if malformed.
pci_normalize() {
	local a=${1,,}
	if [[ $a =~ ^[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$ ]]; then
		a=0000:$a
	fi
	[[ $a =~ ^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$ ]] || return 1
	echo "$a"
}

pci_driver() {
	local link
	link=$(readlink "$R/sys/bus/pci/devices/$1/driver" 2>/dev/null) || return 0
	echo "${link##*/}"
}

# pci_ifaces PCI: its network interfaces (a virtio NIC has them one level down).
pci_ifaces() {
	local d
	for d in "$R/sys/bus/pci/devices/$1/net/"* "$R/sys/bus/pci/devices/$1/"virtio*/net/*; do
		[ -e "$d" ] && echo "${d##*/}"
	done
	return 0
}

# net_pci_devices: the PCI addresses of every network-class device.
net_pci_devices() {
	local d class
	for d in "$R/sys/bus/pci/devices/"*; do
		[ -e "$d/class" ] || continue
		class=$(cat "$d/class")
		case "$class" in 0x02*) echo "${d##*/}" ;; esac
	done
	return 0
}

# default_route_ifaces: interfaces that carry an IPv4 or IPv6 default route.
default_route_ifaces() {
	{
		awk 'NR > 1 && $2 == "00000000" && $8 == "00000000" { print $1 }' \
			"$R/proc/net/route" 2>/dev/null || true
		awk '$1 == "00000000000000000000000000000000" && $2 == "00" && $10 != "lo" { print $10 }' \
			"$R/proc/net/ipv6_route" 2>/dev/null || true
	} | sort -u
}

# routed_ifaces: interfaces with any IPv4 route (dpdk-devbind.py calls those
# active and will not touch them without --force).
routed_ifaces() {
	awk 'NR > 1 { print $1 }' "$R/proc/net/route" 2>/dev/null | sort -u || true
}

iommu_enabled() {
	local g
	for g in "$R/sys/kernel/iommu_groups/"*; do
		[ -e "$g" ] && return 0
	done
	return 1
}

noiommu_enabled() {
	case "$(readf /sys/module/vfio/parameters/enable_unsafe_noiommu_mode 2>/dev/null || true)" in
	Y | y | 1) return 0 ;;
	*) return 1 ;;
	esac
}

find_devbind() {
	local t
	for t in "${DPDK_DEVBIND:-}" dpdk-devbind.py dpdk-devbind /usr/bin/dpdk-devbind.py; do
		[ -n "$t" ] || continue
		if command -v "$t" >/dev/null 2>&1; then
			command -v "$t"
			return 0
		fi
	done
	return 1
}

# check_pci ADDR: normalized, and present in sysfs; prints the normalized form.
check_pci() {
	local raw=$1 pci
	pci=$(pci_normalize "$raw") ||
		usage_error "$CMD: '$raw' is not a PCI address: write it as 0000:03:00.0" \
			"(domain:bus:device.function; list NICs with 'dpdk-devbind.py --status-dev net'" \
			"or 'lspci -D | grep -i ethernet')"
	if [ ! -e "$R/sys/bus/pci/devices/$pci" ]; then
		die "$CMD: no PCI device $pci on this machine: list NICs with" \
			"'deploy/host-prep.sh status', 'dpdk-devbind.py --status-dev net' or" \
			"'lspci -D | grep -i ethernet'"
	fi
	echo "$pci"
}

cmd_bind_nic() {
	local raw="" driver=vfio-pci force=0 noiommu=0 pci cur ifaces i class tool
	while [ $# -gt 0 ]; do
		case "$1" in
		--driver) driver=${2:?--driver needs a driver name}; shift 2 ;;
		--driver=*) driver=${1#*=}; shift ;;
		--force) force=1; shift ;;
		--noiommu) noiommu=1; shift ;;
		-*) usage_error "bind-nic: unknown option '$1'" ;;
		*)
			[ -z "$raw" ] || usage_error "bind-nic: one PCI address at a time ('$raw', then '$1')"
			raw=$1
			shift
			;;
		esac
	done
	[ -n "$raw" ] || usage_error "bind-nic: give the NIC's PCI address, e.g. bind-nic 0000:03:00.1"
	case "$driver" in
	vfio-pci | uio_pci_generic | igb_uio) ;;
	*) usage_error "bind-nic: --driver '$driver': DPDK uses vfio-pci (or uio_pci_generic, igb_uio)" ;;
	esac
	pci=$(check_pci "$raw")
	class=$(readf "/sys/bus/pci/devices/$pci/class" || echo "?")
	case "$class" in
	0x02*) ;;
	*)
		[ "$force" = 1 ] || die "bind-nic: $pci is not a network device (PCI class $class):" \
			"check the address, or pass --force"
		;;
	esac
	cur=$(pci_driver "$pci")
	if [ "$cur" = "$driver" ]; then
		note "bind-nic: ok: $pci is already bound to $driver"
		return 0
	fi
	case "$cur" in
	mlx4_core | mlx5_core)
		[ "$force" = 1 ] || die "bind-nic: $pci is a Mellanox/NVIDIA NIC ($cur): DPDK's mlx4/mlx5" \
			"drivers run beside the kernel driver (bifurcated), so leave it on $cur" \
			"and give DPDK the address directly; pass --force to bind it anyway"
		;;
	esac
	ifaces=$(pci_ifaces "$pci")
	for i in $ifaces; do
		if grep -qx "$i" <<<"$(default_route_ifaces)"; then
			[ "$force" = 1 ] || die "bind-nic: $pci ($i) carries the default route: binding it" \
				"takes it from the kernel and cuts this machine off the network (and any SSH" \
				"session over it): use another port, or pass --force if you really mean it"
			warn "bind-nic: $pci ($i) carries the default route; binding it anyway (--force)"
		elif grep -qx "$i" <<<"$(routed_ifaces)"; then
			[ "$force" = 1 ] || die "bind-nic: $pci ($i) has IP routes, so dpdk-devbind.py would" \
				"skip it as active: free it first with 'ip addr flush dev $i &&" \
				"ip link set dev $i down', or pass --force"
		fi
	done
	need_root
	if ! tool=$(find_devbind); then
		if [ "$DRY" = 1 ]; then
			warn "bind-nic: dpdk-devbind.py is not installed (apt-get install dpdk); a real run needs it"
			tool=dpdk-devbind.py
		else
			die "bind-nic: dpdk-devbind.py not found: install Debian's dpdk package" \
				"(apt-get install dpdk), or set DPDK_DEVBIND=/path/to/dpdk-devbind.py"
		fi
	fi
	if [ "$driver" = vfio-pci ]; then
		if iommu_enabled; then
			if [ ! -e "$R/sys/bus/pci/devices/$pci/iommu_group" ]; then
				die "bind-nic: $pci is in no IOMMU group although the IOMMU is on:" \
					"check the firmware's VT-d/AMD-Vi settings for that slot"
			fi
			local grp members
			grp=$(readlink "$R/sys/bus/pci/devices/$pci/iommu_group" || echo "?")
			members=$(names "$R/sys/bus/pci/devices/$pci/iommu_group/devices" | tr ' ' '\n' | grep -vx "$pci" | oneline || true)
			if [ -n "$members" ]; then
				warn "bind-nic: IOMMU group ${grp##*/} also holds $members:" \
					"vfio needs every device of the group bound to vfio-pci or to no driver"
			fi
		elif noiommu_enabled; then
			warn "bind-nic: no IOMMU; vfio's unsafe no-IOMMU mode is on (the NIC can DMA anywhere)"
		elif [ "$noiommu" = 1 ]; then
			note "bind-nic: no IOMMU: turning on vfio's unsafe no-IOMMU mode (--noiommu)"
			if [ ! -e "$R/sys/module/vfio" ]; then
				need_tool modprobe kmod
				run modprobe vfio enable_unsafe_noiommu_mode=1
			else
				sysfs_write /sys/module/vfio/parameters/enable_unsafe_noiommu_mode 1
			fi
		else
			die "bind-nic: no IOMMU ($R/sys/kernel/iommu_groups is empty), so vfio-pci cannot" \
				"take the NIC: turn on VT-d/AMD-Vi in the firmware and add 'intel_iommu=on iommu=pt'" \
				"(Intel) or 'amd_iommu=on iommu=pt' (AMD) to the kernel command line, or in a VM" \
				"without a vIOMMU pass --noiommu (vfio's unsafe no-IOMMU mode)"
		fi
	fi
	if [ -e "$R/sys/bus/pci/drivers/$driver" ]; then
		note "bind-nic: ok: driver $driver is loaded"
	else
		need_tool modprobe kmod
		run modprobe "$driver"
	fi
	note "bind-nic: $pci${ifaces:+ ($(oneline <<<"$ifaces"))}: ${cur:-no driver} -> $driver"
	if [ -n "$cur" ]; then
		# unbind-nic gives it back to this driver; /run is empty again after a reboot
		if [ "$DRY" = 1 ]; then
			echo "DRY-RUN: mkdir -p $R$STATE_DIR && echo $cur > $R$STATE_DIR/nic-$pci.driver"
		else
			echo "+ mkdir -p $R$STATE_DIR && echo $cur > $R$STATE_DIR/nic-$pci.driver"
			mkdir -p "$R$STATE_DIR"
			printf '%s\n' "$cur" >"$R$STATE_DIR/nic-$pci.driver"
		fi
	fi
	if [ "$force" = 1 ]; then
		run "$tool" --force --bind="$driver" "$pci"
	else
		run "$tool" --bind="$driver" "$pci"
	fi
	if [ "$DRY" = 0 ] && [ -z "$R" ]; then
		cur=$(pci_driver "$pci")
		[ "$cur" = "$driver" ] || die "bind-nic: $pci is on '${cur:-no driver}' after dpdk-devbind.py:" \
			"see its message above ('dmesg | tail' tells why vfio-pci refused)"
		note "bind-nic: $pci is bound to $driver (undo with: deploy/host-prep.sh unbind-nic $pci)"
	fi
}

# kernel_driver_of PCI: the kernel driver to give the NIC back to.
kernel_driver_of() {
	local pci=$1 d alias mods m
	d=$(cat "$R$STATE_DIR/nic-$pci.driver" 2>/dev/null || true)
	if [ -n "$d" ]; then
		echo "$d"
		return 0
	fi
	alias=$(readf "/sys/bus/pci/devices/$pci/modalias" || true)
	if [ -n "$alias" ] && [ -z "$R" ] && command -v modprobe >/dev/null 2>&1; then
		mods=$(modprobe --resolve-alias "$alias" 2>/dev/null || true)
		for m in $mods; do
			case "$m" in vfio* | uio* | igb_uio) continue ;; esac
			echo "$m"
			return 0
		done
	fi
	return 1
}

cmd_unbind_nic() {
	local raw="" driver="" pci cur tool
	while [ $# -gt 0 ]; do
		case "$1" in
		--driver) driver=${2:?--driver needs a driver name}; shift 2 ;;
		--driver=*) driver=${1#*=}; shift ;;
		-*) usage_error "unbind-nic: unknown option '$1'" ;;
		*)
			[ -z "$raw" ] || usage_error "unbind-nic: one PCI address at a time"
			raw=$1
			shift
			;;
		esac
	done
	[ -n "$raw" ] || usage_error "unbind-nic: give the NIC's PCI address, e.g. unbind-nic 0000:03:00.1"
	pci=$(check_pci "$raw")
	cur=$(pci_driver "$pci")
	if [ -z "$driver" ]; then
		driver=$(kernel_driver_of "$pci") ||
			die "unbind-nic: cannot tell which kernel driver $pci had: pass it with" \
				"--driver (e.g. ixgbe, i40e, ice, igb, e1000e, virtio-pci)"
	fi
	if [ "$cur" = "$driver" ]; then
		note "unbind-nic: ok: $pci is already on its kernel driver $driver"
		return 0
	fi
	need_root
	if ! tool=$(find_devbind); then
		if [ "$DRY" = 1 ]; then
			warn "unbind-nic: dpdk-devbind.py is not installed (apt-get install dpdk); a real run needs it"
			tool=dpdk-devbind.py
		else
			die "unbind-nic: dpdk-devbind.py not found: install Debian's dpdk package" \
				"(apt-get install dpdk), or set DPDK_DEVBIND=/path/to/dpdk-devbind.py"
		fi
	fi
	note "unbind-nic: $pci: ${cur:-no driver} -> $driver"
	run "$tool" --bind="$driver" "$pci"
	if [ -e "$R$STATE_DIR/nic-$pci.driver" ]; then
		if [ "$DRY" = 1 ]; then
			echo "DRY-RUN: rm -f $R$STATE_DIR/nic-$pci.driver"
		else
			echo "+ rm -f $R$STATE_DIR/nic-$pci.driver"
			rm -f "$R$STATE_DIR/nic-$pci.driver"
		fi
	fi
	if [ "$DRY" = 0 ] && [ -z "$R" ]; then
		cur=$(pci_driver "$pci")
		[ "$cur" = "$driver" ] || die "unbind-nic: $pci is on '${cur:-no driver}', not $driver:" \
			"see dpdk-devbind.py's message above and 'dmesg | tail'"
		note "unbind-nic: $pci is back on $driver (interfaces: $(pci_ifaces "$pci" | oneline))"
	fi
}

#
# CPU isolation (boot time only)
#

cmd_isolate_cpus() {
	local list="" cpus online house cmdline want p missing=""
	while [ $# -gt 0 ]; do
		case "$1" in
		-*) usage_error "isolate-cpus: unknown option '$1'" ;;
		*)
			[ -z "$list" ] || usage_error "isolate-cpus: give one CPU list, like 2-9"
			list=$1
			shift
			;;
		esac
	done
	[ -n "$list" ] || usage_error "isolate-cpus: give the shard CPUs, e.g. isolate-cpus 2-9"
	check_cpulist "CPU list" "$list"
	cpus=$(cpulist_expand "$list")
	list=$(cpulist_compress <<<"$cpus")
	online=$(online_cpus)
	house=$(cpus_minus "$online" "$cpus")
	[ -n "$house" ] || die "isolate-cpus: $list is every online CPU: leave at least one" \
		"(better one core and its sibling) for the kernel, IRQs and ssh"
	want="isolcpus=managed_irq,domain,$list nohz_full=$list rcu_nocbs=$list irqaffinity=$(cpulist_compress <<<"$house")"
	cmdline=$(readf /proc/cmdline || true)
	for p in $want; do
		case " $cmdline " in
		*" $p "*) ;;
		*) missing="$missing $p" ;;
		esac
	done
	if [ -z "$missing" ]; then
		note "isolate-cpus: ok: the running kernel was booted with: $want"
		return 0
	fi
	cat <<EOF
$PROG: isolate-cpus: CPU isolation is set when the kernel boots; a running kernel
cannot change it, so this step changes nothing (with or without --dry-run).
Add to the kernel command line, then reboot:

  $want

On Debian with GRUB: append it inside the quotes of GRUB_CMDLINE_LINUX_DEFAULT in
/etc/default/grub, run 'update-grub', reboot, and check /proc/cmdline.
Add 'intel_iommu=on iommu=pt' (or 'amd_iommu=on iommu=pt') there too for vfio-pci,
and 'hugepagesz=1G hugepages=N' for 1G hugepages.

Now: isolated CPUs: $(iso=$(readf /sys/devices/system/cpu/isolated || true); echo "${iso:-none}"); nohz_full: $(nz=$(readf /sys/devices/system/cpu/nohz_full || true); echo "${nz:-none}")
Missing from /proc/cmdline:$missing

With isolcpus, processes start on the other CPUs only: give shardmark the shard
CPUs explicitly (the service's CPUAffinity=, 'install-service.sh --cpu-affinity
$list', or 'taskset -c $list shardmark stress ...' for a loader).
EOF
}

#
# IRQ affinity
#

# irqbalance_pids: pids of running irqbalance processes.
irqbalance_pids() {
	local f
	for f in "$R"/proc/[0-9]*/comm; do
		[ -r "$f" ] || continue
		if [ "$(cat "$f" 2>/dev/null)" = irqbalance ]; then
			f=${f%/comm}
			echo "${f##*/}"
		fi
	done
	return 0
}

# irq_name N: the names of IRQ N's handlers.
irq_name() {
	local d names=""
	for d in "$R/proc/irq/$1/"*/; do
		[ -d "$d" ] || continue
		d=${d%/}
		names="$names${names:+,}${d##*/}"
	done
	echo "${names:-?}"
}

# nic_irqs IFACE: the IRQs of a network interface (MSI vectors, or by name).
nic_irqs() {
	local iface=$1 dev d n
	dev=$R/sys/class/net/$iface/device
	{
		for d in "$dev/msi_irqs" "$dev/../msi_irqs"; do
			if [ -d "$d" ]; then
				names "$d" | tr ' ' '\n'
				break
			fi
		done
		for d in "$R"/proc/irq/[0-9]*/; do
			d=${d%/}
			n=${d##*/}
			case ",$(irq_name "$n")," in
			*"$iface"*) echo "$n" ;;
			esac
		done
		if [ -r "$dev/irq" ] && [ "$(cat "$dev/irq")" != 0 ]; then cat "$dev/irq"; fi
	} | sort -n -u
}

cmd_irq_affinity() {
	local list="" nic="" irqcpus="" shard online target targetl irqs n cur curcpus moved=0 ok=0 failed=0
	while [ $# -gt 0 ]; do
		case "$1" in
		--nic) nic=${2:?--nic needs an interface name}; shift 2 ;;
		--nic=*) nic=${1#*=}; shift ;;
		--irq-cpus) irqcpus=${2:?--irq-cpus needs a CPU list}; shift 2 ;;
		--irq-cpus=*) irqcpus=${1#*=}; shift ;;
		-*) usage_error "irq-affinity: unknown option '$1'" ;;
		*)
			[ -z "$list" ] || usage_error "irq-affinity: give one CPU list, like 2-9"
			list=$1
			shift
			;;
		esac
	done
	[ -n "$list" ] || [ -n "$irqcpus" ] || usage_error "irq-affinity: give the shard CPUs" \
		"to keep IRQs off (irq-affinity 2-9 [--nic IFACE]) or the CPUs to put them on" \
		"(irq-affinity --nic IFACE --irq-cpus 10-11)"
	online=$(online_cpus)
	if [ -z "$list" ]; then
		# only --irq-cpus: keep the IRQs off every other CPU
		check_cpulist "--irq-cpus" "$irqcpus"
		list=$(cpus_minus "$online" "$(cpulist_expand "$irqcpus")" | cpulist_compress)
		[ -n "$list" ] || usage_error "irq-affinity: --irq-cpus $irqcpus is every online CPU: nothing to move"
	fi
	check_cpulist "shard CPU list" "$list"
	shard=$(cpulist_expand "$list")
	if [ -n "$irqcpus" ]; then
		check_cpulist "--irq-cpus" "$irqcpus"
		target=$(cpulist_expand "$irqcpus")
		if [ -n "$(comm -12 <(sort <<<"$shard") <(sort <<<"$target"))" ]; then
			usage_error "irq-affinity: --irq-cpus $irqcpus overlaps the shard CPUs $list: choose other CPUs"
		fi
	else
		target=$(cpus_minus "$online" "$shard")
	fi
	[ -n "$target" ] || die "irq-affinity: the shard CPUs $list are every online CPU, so IRQs" \
		"have nowhere else to go: leave at least one CPU out of the list"
	targetl=$(cpulist_compress <<<"$target")
	if [ -n "$nic" ]; then
		[ -e "$R/sys/class/net/$nic" ] || die "irq-affinity: no network interface '$nic'" \
			"(interfaces: $(names "$R/sys/class/net")): check 'ip link'"
		irqs=$(nic_irqs "$nic")
		[ -n "$irqs" ] || die "irq-affinity: found no IRQs of $nic (a virtual device, or a NIC" \
			"bound to vfio-pci, has none to move): drop --nic to move every IRQ"
	else
		irqs=$(for n in "$R"/proc/irq/[0-9]*/; do n=${n%/}; echo "${n##*/}"; done | sort -n)
	fi
	need_root
	# irqbalance would move the IRQs back: stop it first.
	local pids
	pids=$(irqbalance_pids)
	if [ -n "$pids" ]; then
		note "irq-affinity: irqbalance is running (pid $(oneline <<<"$pids")): stopping it"
		if command -v systemctl >/dev/null 2>&1 && [ -z "$R" ] && [ -d /run/systemd/system ]; then
			run systemctl stop irqbalance
		else
			# shellcheck disable=SC2086 # one argument per pid
			run kill $pids
		fi
	else
		note "irq-affinity: ok: irqbalance is not running"
	fi
	# New IRQs (a NIC reset, a hotplug) start on the housekeeping CPUs too.
	if [ -z "$nic" ] && [ -e "$R/proc/irq/default_smp_affinity" ]; then
		cur=$(readf /proc/irq/default_smp_affinity || true)
		if [ "$(mask_to_cpus "$cur" | sort -n)" = "$(sort -n <<<"$target")" ]; then
			note "irq-affinity: ok: default_smp_affinity is already $targetl"
		else
			sysfs_write /proc/irq/default_smp_affinity "$(cpus_to_mask "$target")" || true
		fi
	fi
	for n in $irqs; do
		[ -e "$R/proc/irq/$n/smp_affinity_list" ] || continue
		cur=$(readf "/proc/irq/$n/smp_affinity_list" || true)
		curcpus=$(cpulist_expand "$cur" 2>/dev/null || true)
		if [ -z "$(comm -12 <(sort <<<"$shard") <(sort <<<"$curcpus"))" ]; then
			ok=$((ok + 1))
			continue
		fi
		echo "$PROG: irq-affinity: IRQ $n ($(irq_name "$n")): $cur -> $targetl"
		if sysfs_write "/proc/irq/$n/smp_affinity_list" "$targetl" 2>/dev/null; then
			moved=$((moved + 1))
		else
			echo "$PROG: irq-affinity: IRQ $n stays on $cur: the kernel manages it (per-CPU" \
				"or managed queue IRQ) and refuses the write" >&2
			failed=$((failed + 1))
		fi
	done
	if [ "$DRY" = 1 ]; then
		note "irq-affinity: would move $moved IRQ(s) to CPUs $targetl; $ok already off $list"
	else
		note "irq-affinity: moved $moved IRQ(s) to CPUs $targetl; $ok already off $list;" \
			"$failed kernel-managed IRQ(s) left in place"
		note "irq-affinity: this lasts until reboot (or until irqbalance starts again); to keep" \
			"irqbalance running instead, set IRQBALANCE_BANNED_CPULIST=$list in /etc/default/irqbalance"
	fi
}

#
# CPU frequency governor
#

cmd_governor() {
	local gov="" cpus="" c path cur avail changed=0 ok=0 none=0
	while [ $# -gt 0 ]; do
		case "$1" in
		--cpus) cpus=${2:?--cpus needs a CPU list}; shift 2 ;;
		--cpus=*) cpus=${1#*=}; shift ;;
		-*) usage_error "governor: unknown option '$1'" ;;
		*)
			[ -z "$gov" ] || usage_error "governor: give one governor, e.g. governor performance"
			gov=$1
			shift
			;;
		esac
	done
	[ -n "$gov" ] || usage_error "governor: give the governor, e.g. governor performance"
	[[ $gov =~ ^[a-z_]+$ ]] || usage_error "governor: '$gov' is not a governor name (e.g. performance)"
	if [ -n "$cpus" ]; then
		check_cpulist "--cpus" "$cpus"
		cpus=$(cpulist_expand "$cpus")
	else
		cpus=$(online_cpus)
	fi
	need_root
	for c in $cpus; do
		path=/sys/devices/system/cpu/cpu$c/cpufreq/scaling_governor
		if [ ! -e "$R$path" ]; then
			none=$((none + 1))
			continue
		fi
		avail=$(readf "/sys/devices/system/cpu/cpu$c/cpufreq/scaling_available_governors" || echo "$gov")
		case " $avail " in
		*" $gov "*) ;;
		*) die "governor: CPU $c has no '$gov' governor (available: $avail)" ;;
		esac
		cur=$(readf "$path" || true)
		if [ "$cur" = "$gov" ]; then
			ok=$((ok + 1))
		else
			echo "$PROG: governor: CPU $c: $cur -> $gov"
			sysfs_write "$path" "$gov"
			changed=$((changed + 1))
		fi
	done
	if [ "$changed" = 0 ] && [ "$ok" = 0 ]; then
		echo "$PROG: governor: no CPU has cpufreq ($R/sys/devices/system/cpu/cpu*/cpufreq is missing):" \
			"load the platform's cpufreq driver (intel_pstate, amd-pstate, acpi-cpufreq) or set the" \
			"power profile to performance in the firmware; in a VM the host controls the frequency" >&2
		return 1
	fi
	if [ "$DRY" = 1 ]; then
		note "governor: would set $changed CPU(s) to $gov; $ok already $gov"
	else
		if [ "$none" = 0 ]; then
			note "governor: set $changed CPU(s) to $gov; $ok already $gov"
		else
			note "governor: set $changed CPU(s) to $gov; $ok already $gov; $none without cpufreq"
		fi
		[ "$changed" = 0 ] || note "governor: this lasts until reboot; to keep it, add" \
			"'cpufreq.default_governor=$gov' to the kernel command line"
	fi
}

#
# status
#

cmd_status() {
	local cpus="" d kb pci drv ifs dr grp c g line n cur curcpus hit hits=0 total=0 iso
	while [ $# -gt 0 ]; do
		case "$1" in
		--cpus) cpus=${2:?--cpus needs a CPU list}; shift 2 ;;
		--cpus=*) cpus=${1#*=}; shift ;;
		*) usage_error "status: unknown argument '$1'" ;;
		esac
	done
	[ -z "$cpus" ] || check_cpulist "--cpus" "$cpus"

	echo "== hugepages"
	for d in "$R"/sys/kernel/mm/hugepages/hugepages-*kB; do
		[ -d "$d" ] || continue
		kb=${d##*hugepages-}
		kb=${kb%kB}
		line="  ${kb} kB: $(cat "$d/nr_hugepages") reserved, $(cat "$d/free_hugepages" 2>/dev/null || echo "?") free"
		for n in "$R"/sys/devices/system/node/node[0-9]*/hugepages/hugepages-"${kb}"kB; do
			[ -d "$n" ] || continue
			g=${n%/hugepages/*}
			line="$line; ${g##*/} $(cat "$n/nr_hugepages")"
		done
		if c=$(hugetlbfs_mount "$kb"); then
			line="$line; mounted on $c"
		else
			line="$line; no hugetlbfs mount"
		fi
		echo "$line"
	done

	echo "== NICs (PCI network devices)"
	dr=$(default_route_ifaces | tr '\n' ' ')
	local found=0
	for pci in $(net_pci_devices); do
		found=1
		drv=$(pci_driver "$pci")
		ifs=$(pci_ifaces "$pci" | tr '\n' ' ')
		ifs=${ifs% }
		line="  $pci driver=${drv:-none} if=${ifs:--}"
		for c in $ifs; do
			case " $dr " in *" $c "*) line="$line (default route)" ;; esac
		done
		if [ -e "$R/sys/bus/pci/devices/$pci/iommu_group" ]; then
			grp=$(readlink "$R/sys/bus/pci/devices/$pci/iommu_group" || echo "?")
			line="$line iommu_group=${grp##*/}"
		fi
		g=$(readf "/sys/bus/pci/devices/$pci/numa_node" || true)
		[ -z "$g" ] || [ "$g" = -1 ] || line="$line numa_node=$g"
		echo "$line"
	done
	[ "$found" = 1 ] || echo "  none found"
	if iommu_enabled; then
		echo "  IOMMU: on"
	elif noiommu_enabled; then
		echo "  IOMMU: off; vfio unsafe no-IOMMU mode: on"
	else
		echo "  IOMMU: off (vfio-pci needs intel_iommu=on / amd_iommu=on, or bind-nic --noiommu)"
	fi
	if [ -e "$R/sys/bus/pci/drivers/vfio-pci" ]; then
		echo "  vfio-pci: loaded"
	else
		echo "  vfio-pci: not loaded"
	fi
	if c=$(find_devbind); then echo "  dpdk-devbind: $c"; else echo "  dpdk-devbind: not installed (apt-get install dpdk)"; fi

	echo "== CPU isolation"
	echo "  online: $(readf /sys/devices/system/cpu/online || echo "?")"
	iso=$(readf /sys/devices/system/cpu/isolated || true)
	echo "  isolated: ${iso:-none}"
	echo "  nohz_full: $(readf /sys/devices/system/cpu/nohz_full || echo "none")"
	line=""
	for c in $(readf /proc/cmdline || true); do
		case "$c" in isolcpus=* | nohz_full=* | rcu_nocbs=* | irqaffinity=* | hugepages=* | hugepagesz=* | default_hugepagesz=* | intel_iommu=* | amd_iommu=* | iommu=* | cpufreq.default_governor=*) line="$line $c" ;; esac
	done
	echo "  kernel command line:${line:- (none of isolcpus, nohz_full, rcu_nocbs, hugepages, iommu)}"

	echo "== IRQs"
	if [ -n "$(irqbalance_pids)" ]; then echo "  irqbalance: running"; else echo "  irqbalance: not running"; fi
	echo "  default_smp_affinity: $(readf /proc/irq/default_smp_affinity || echo "?")"
	[ -n "$cpus" ] || cpus=$iso
	if [ -n "$cpus" ]; then
		curcpus=$(cpulist_expand "$cpus")
		for d in "$R"/proc/irq/[0-9]*/; do
			d=${d%/}
			n=${d##*/}
			[ -e "$d/smp_affinity_list" ] || continue
			total=$((total + 1))
			cur=$(cat "$d/smp_affinity_list" 2>/dev/null || true)
			hit=$(comm -12 <(sort <<<"$curcpus") <(cpulist_expand "$cur" 2>/dev/null | sort) || true)
			if [ -n "$hit" ]; then
				hits=$((hits + 1))
				[ "$hits" -le 20 ] && echo "  IRQ $n ($(irq_name "$n")) may run on $cur"
			fi
		done
		[ "$hits" -le 20 ] || echo "  ... and $((hits - 20)) more"
		echo "  $hits of $total IRQs may run on the shard CPUs $cpus"
	else
		echo "  (give --cpus LIST to list the IRQs that may run on the shard CPUs)"
	fi

	echo "== CPU frequency governor"
	line=""
	for c in $(online_cpus); do
		g=$(readf "/sys/devices/system/cpu/cpu$c/cpufreq/scaling_governor" || echo "no-cpufreq")
		line="$line$g"$'\n'
	done
	sort <<<"${line%$'\n'}" | uniq -c | while read -r n g; do
		echo "  $g: $n CPU(s)"
	done
	return 0
}

#
# all
#

cmd_all() {
	local config="" cpus="" pages="" size="" node="" nic_pci="" nic="" irqcpus="" gov="" stack="" force=0 noiommu=0
	local f_cpus="" f_pages="" f_size="" f_node="" f_pci="" f_drv="" f_nic="" f_irqcpus="" f_gov="" f_stack="" f_args=""
	local nicdrv=vfio-pci
	while [ $# -gt 0 ]; do
		case "$1" in
		--config) config=${2:?--config needs a file}; shift 2 ;;
		--cpus) cpus=${2:?--cpus needs a CPU list}; shift 2 ;;
		--pages) pages=${2:?--pages needs a number}; shift 2 ;;
		--size) size=${2:?--size needs 2M or 1G}; shift 2 ;;
		--node) node=${2:?--node needs a NUMA node}; shift 2 ;;
		--nic-pci) nic_pci=${2:?--nic-pci needs a PCI address}; shift 2 ;;
		--nic) nic=${2:?--nic needs an interface}; shift 2 ;;
		--irq-cpus) irqcpus=${2:?--irq-cpus needs a CPU list}; shift 2 ;;
		--governor) gov=${2:?--governor needs a governor}; shift 2 ;;
		--network-stack) stack=${2:?--network-stack needs uring or dpdk}; shift 2 ;;
		--force) force=1; shift ;;
		--noiommu) noiommu=1; shift ;;
		*) usage_error "all: unknown argument '$1'" ;;
		esac
	done
	if [ -n "$config" ]; then
		[ -r "$config" ] || die "all: cannot read the config file $config: check the path" \
			"(the service's is /etc/default/shardmark, from deploy/systemd/shardmark.env)"
		local line key val lineno=0
		while IFS= read -r line || [ -n "$line" ]; do
			lineno=$((lineno + 1))
			line=${line#"${line%%[![:space:]]*}"}
			line=${line%"${line##*[![:space:]]}"}
			case "$line" in '' | '#'* | ';'*) continue ;; esac
			[[ $line == *=* ]] || die "all: $config:$lineno: expected KEY=VALUE, got '$line'"
			key=${line%%=*}
			val=${line#*=}
			case "$val" in
			\"*\") val=${val#\"} val=${val%\"} ;;
			\'*\') val=${val#\'} val=${val%\'} ;;
			esac
			case "$key" in
			SHARDMARK_NETWORK_STACK) f_stack=$val ;;
			SHARDMARK_ARGS) f_args=$val ;;
			HOST_PREP_CPUS) f_cpus=$val ;;
			HOST_PREP_HUGEPAGES) f_pages=$val ;;
			HOST_PREP_HUGEPAGE_SIZE) f_size=$val ;;
			HOST_PREP_HUGEPAGE_NODE) f_node=$val ;;
			HOST_PREP_NIC_PCI) f_pci=$val ;;
			HOST_PREP_NIC_DRIVER) f_drv=$val ;;
			HOST_PREP_IRQ_NIC) f_nic=$val ;;
			HOST_PREP_IRQ_CPUS) f_irqcpus=$val ;;
			HOST_PREP_GOVERNOR) f_gov=$val ;;
			HOST_PREP_*) die "all: $config:$lineno: unknown key $key: the keys are HOST_PREP_CPUS," \
				"HOST_PREP_HUGEPAGES, HOST_PREP_HUGEPAGE_SIZE, HOST_PREP_HUGEPAGE_NODE," \
				"HOST_PREP_NIC_PCI, HOST_PREP_NIC_DRIVER, HOST_PREP_IRQ_NIC, HOST_PREP_IRQ_CPUS," \
				"HOST_PREP_GOVERNOR" ;;
			*) ;;
			esac
		done <"$config"
	fi
	# The shard CPUs: --cpus, else HOST_PREP_CPUS, else --cpuset in SHARDMARK_ARGS.
	if [ -z "$cpus" ] && [ -z "$f_cpus" ] && [ -n "$f_args" ]; then
		local -a words
		local i
		read -r -a words <<<"$f_args"
		for ((i = 0; i < ${#words[@]}; i++)); do
			case "${words[i]}" in
			--cpuset) f_cpus=${words[i + 1]:-} ;;
			--cpuset=*) f_cpus=${words[i]#*=} ;;
			esac
		done
	fi
	cpus=${cpus:-$f_cpus}
	pages=${pages:-$f_pages}
	size=${size:-${f_size:-2M}}
	node=${node:-$f_node}
	nic_pci=${nic_pci:-$f_pci}
	nicdrv=${f_drv:-vfio-pci}
	nic=${nic:-$f_nic}
	irqcpus=${irqcpus:-$f_irqcpus}
	gov=${gov:-${f_gov:-performance}}
	stack=${stack:-${f_stack:-uring}}
	case "$stack" in
	uring | dpdk) ;;
	*) usage_error "all: network stack '$stack': use uring or dpdk" ;;
	esac
	[ -z "$cpus" ] || check_cpulist "shard CPU list" "$cpus"
	need_root
	note "all: network stack $stack; shard CPUs ${cpus:-(not set)}${config:+; from $config}"

	echo "== governor"
	if [ "$gov" = none ]; then
		note "all: governor: skipped (HOST_PREP_GOVERNOR=none)"
	elif ! cmd_governor "$gov"; then
		warn "all: governor: skipped, see above"
	fi

	echo "== hugepages"
	if [ -z "$pages" ] && [ "$stack" = dpdk ]; then
		if [ "$(size_kb "$size")" = 2048 ]; then pages=1024; else pages=2; fi
	fi
	if [ -z "$pages" ]; then
		note "all: hugepages: skipped (network stack uring needs none; set HOST_PREP_HUGEPAGES or --pages)"
	else
		cmd_hugepages --pages "$pages" --size "$size" ${node:+--node "$node"}
	fi

	echo "== IRQ affinity"
	if [ -z "$cpus" ]; then
		note "all: irq-affinity: skipped (no shard CPUs: set HOST_PREP_CPUS, --cpuset in SHARDMARK_ARGS, or --cpus)"
	else
		cmd_irq_affinity "$cpus" ${nic:+--nic "$nic"} ${irqcpus:+--irq-cpus "$irqcpus"}
	fi

	echo "== NIC"
	if [ -z "$nic_pci" ]; then
		note "all: bind-nic: skipped (no NIC: set HOST_PREP_NIC_PCI or --nic-pci)"
	elif [ "$stack" != dpdk ]; then
		note "all: bind-nic: skipped: network stack $stack serves through the kernel's driver;" \
			"$nic_pci is bound only for dpdk"
	else
		local -a bargs=("$nic_pci" --driver "$nicdrv")
		[ "$force" = 0 ] || bargs+=(--force)
		[ "$noiommu" = 0 ] || bargs+=(--noiommu)
		cmd_bind_nic "${bargs[@]}"
	fi

	echo "== CPU isolation"
	if [ -z "$cpus" ]; then
		note "all: isolate-cpus: skipped (no shard CPUs)"
	else
		cmd_isolate_cpus "$cpus"
	fi
}

#
# main
#

args=()
for a in "$@"; do
	case "$a" in
	--dry-run | -n) DRY=1 ;;
	-h | --help)
		usage
		exit 0
		;;
	*) args+=("$a") ;;
	esac
done
[ "${#args[@]}" -gt 0 ] || usage_error "give a command: hugepages, bind-nic, unbind-nic, isolate-cpus, irq-affinity, governor, status or all"
CMD=${args[0]}
args=("${args[@]:1}")
[ "$DRY" = 0 ] || echo "$PROG: dry run: nothing is changed; lines starting DRY-RUN: are what a real run would do"
case "$CMD" in
hugepages) cmd_hugepages "${args[@]}" ;;
bind-nic) cmd_bind_nic "${args[@]}" ;;
unbind-nic) cmd_unbind_nic "${args[@]}" ;;
isolate-cpus) cmd_isolate_cpus "${args[@]}" ;;
irq-affinity) cmd_irq_affinity "${args[@]}" ;;
governor) cmd_governor "${args[@]}" ;;
status) cmd_status "${args[@]}" ;;
all) cmd_all "${args[@]}" ;;
*) usage_error "unknown command '$CMD': use hugepages, bind-nic, unbind-nic, isolate-cpus, irq-affinity, governor, status or all" ;;
esac
