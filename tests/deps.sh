#!/bin/bash
# Installs, from Debian's archive only, every package trainenv needs to build
# and to run its unit and integration tests (the local Slurm cluster harness
# in tests/cluster included). Idempotent: when everything is already
# installed it changes nothing and does not touch the network.
# Usage: tests/deps.sh [--check]   (--check: list what is missing, exit 1 if any)
set -euo pipefail

packages=(
	# build
	build-essential autoconf automake libtool pkg-config clang libclang-rt-14-dev
	# Slurm, its authentication, and the headers the plugin is built against
	slurmctld slurmd slurm-client munge libslurm-dev
	# PMIx (the mpi/pmix plugin of Slurm and our client side), hwloc
	libpmix-dev libpmix-bin libhwloc-dev hwloc-nox
	# the cluster harness: namespaces, veth/bridge, process tools, timeouts
	iproute2 util-linux procps coreutils tmux
	# t90 tells libasan's own fork deadlock in slurmstepd by its stack;
	# the hang report's stacks: gdb, and py-bt from Python's debug package
	gdb python3.11-dbg strace
	# the Debian and RPM packages (debian/, trainenv.spec; t95)
	debhelper dh-python lintian rpm
	# real clients run in the integration tests
	python3 python3-torch python3-mpi4py libopenmpi-dev openmpi-bin
)

missing=()
for p in "${packages[@]}"; do
	# "install ok installed" only: a package removed with its config kept
	# ("deinstall ok config-files") is not there.
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[ "$st" = "install ok installed" ] || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
	echo "deps: all ${#packages[@]} packages present"
	exit 0
fi
echo "deps: missing: ${missing[*]}"
[ "${1:-}" = "--check" ] && exit 1

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: installing needs root (run: sudo $0)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# Recommends stay on (Debian's default), as on the machines the harness was
# verified on.
apt-get install -y -q "${missing[@]}"
# The Debian packages enable and start system munge/slurm services where an
# init system runs; the harness never uses them (it runs its own daemons on
# its own socket and ports), so they are left as Debian set them up.
echo "deps: installed ${missing[*]}"
