#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Installs, from Debian's archive only, every package trainenv needs to build
# and to run its unit and integration tests (the local Slurm cluster harness
# in tests/cluster included). Idempotent: when everything is already
# installed it changes nothing and does not touch the network.
# Release-aware (/etc/os-release): the same list on Debian 12 (the host) and
# in the Debian roots of tests/releases/root.sh (trixie, sid), where a few
# names carry the release's versions (clang's sanitizer runtime, Python's
# debug interpreter).
# Usage: tests/deps.sh [--check|--list]   (--check: list what is missing,
#        exit 1 if any; --list: print the package names, one a line)
set -euo pipefail
# te_dpkg_installed (tests/lib/dpkg_state.sh; inside a root, where this
# script is copied alone, tests/releases/root.sh names the copy beside it).
# shellcheck source-path=SCRIPTDIR source=lib/dpkg_state.sh
. "${TE_DPKG_STATE:-$(dirname "$0")/lib/dpkg_state.sh}"

# The default clang's major version and python3's X.Y, for the versioned
# package names: fixed for the releases the suite was run on, else asked
# from apt's lists (the version the clang and python3 packages depend on).
# shellcheck disable=SC1091
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-unknown}")
apt_dep_version() { # PACKAGE PREFIX: the version suffix of PACKAGE's PREFIX<ver> dependency
	apt-cache depends --important "$1" 2>/dev/null |
		sed -n "s/^ *Depends: $2\([0-9][0-9.]*\)\$/\1/p" | head -n1
}
case $codename in
bookworm) clang_v=14 py_v=3.11 ;;
trixie) clang_v=19 py_v=3.13 ;;
*)
	clang_v=$(apt_dep_version clang clang-)
	py_v=$(apt_dep_version python3 python)
	if [ -z "$clang_v" ] || [ -z "$py_v" ]; then
		echo "deps: $codename: cannot tell the clang and Python versions from apt's lists (run apt-get update)" >&2
		exit 1
	fi ;;
esac

packages=(
	# build
	build-essential autoconf automake libtool pkg-config clang "libclang-rt-$clang_v-dev"
	# Slurm, its authentication, and the headers the plugin is built against
	slurmctld slurmd slurm-client munge libslurm-dev
	# PMIx (the mpi/pmix plugin of Slurm and our client side), hwloc
	libpmix-dev libpmix-bin libhwloc-dev hwloc-nox
	# the cluster harness: namespaces, veth/bridge, process tools, timeouts
	iproute2 util-linux procps coreutils tmux
	# t90 tells libasan's own fork deadlock in slurmstepd by its stack;
	# the hang report's stacks: gdb, and py-bt from Python's debug package
	gdb "python$py_v-dbg" strace
	# the Debian and RPM packages (debian/, trainenv.spec; t95 builds them
	# from a git clone)
	debhelper dh-python lintian rpm git
	# real clients run in the integration tests
	python3 python3-torch python3-mpi4py libopenmpi-dev openmpi-bin
	# containers (tests/containers/build.sh: enroot and pyxis from their
	# release sources, a debootstrap image packed with mksquashfs)
	jq parallel squashfs-tools zstd pigz libcap2-bin makeself linux-libc-dev debootstrap
	# Slurm's own OCI containers (t41: srun --container with crun and runc)
	crun
	runc
)
# Apptainer (t29, under a real one): Debian's archive has it from sid on,
# not in Debian 12 or trixie
if [ "$codename" != bookworm ] && [ "$codename" != trixie ] &&
	apt-cache show apptainer >/dev/null 2>&1; then
	packages+=(apptainer)
fi

# Slurm 26.05 built from source with PMIx in the trixie root
# (tests/releases/slurm_src.sh slurm26, TE_SLURM=slurm26): munge's headers
# for auth/munge, D-Bus's for cgroup/v2, http-parser's and json-c's for its HTTP
# parser and JSON serializer (slurmctld and slurmd say an error at start
# without the first, slurmctld refuses to start with it alone)
if [ "$codename" = trixie ]; then
	packages+=(libmunge-dev libdbus-1-dev libhttp-parser-dev libjson-c-dev)
fi

# sackd, the login node's daemon of a configless cluster (t31): Slurm
# 23.11 and later, so not in Debian 12
if [ "$codename" != bookworm ] && apt-cache show sackd >/dev/null 2>&1; then
	packages+=(sackd)
fi

# The layout checks on the host (tests/unit/test_format.sh is pinned to
# Debian 12's clang-format 14; test_functions.sh measures with ctags)
if [ "$codename" = bookworm ]; then
	packages+=(clang-format universal-ctags)
fi

if [ "${1:-}" = --list ]; then
	printf '%s\n' "${packages[@]}"
	exit 0
fi

missing=()
for p in "${packages[@]}"; do
	# A package removed with its config kept (dpkg -l's "rc") is not there.
	te_dpkg_installed "$p" || missing+=("$p")
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
