# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# Stand-in sysfs trees for the node-health tests (sourced): the files
# trainenv health reads under --sysfs-root, written the way the kernel
# lays them out.

# An InfiniBand/RoCE port; PHYS and RATE default to a healthy HDR port.
sysfs_ib_port() { # ROOT DEV PORT STATE [PHYS [RATE]]
	local d=$1/class/infiniband/$2/ports/$3
	mkdir -p "$d"
	printf '%s\n' "$4" >"$d/state"
	printf '%s\n' "${5:-5: LinkUp}" >"$d/phys_state"
	printf '%s\n' "${6:-200 Gb/sec (4X HDR)}" >"$d/rate"
}

# A network interface; SPEED (Mb/s) is left out when not given.
sysfs_iface() { # ROOT IF OPERSTATE [SPEED]
	mkdir -p "$1/class/net/$2"
	printf '%s\n' "$3" >"$1/class/net/$2/operstate"
	[ -n "${4:-}" ] && printf '%s\n' "$4" >"$1/class/net/$2/speed"
	return 0
}
