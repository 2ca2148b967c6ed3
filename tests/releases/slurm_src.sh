#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# slurm_src.sh NAME: builds SchedMD's Slurm from source with PMIx inside a Debian root of tests/releases/root.sh, into a prefix of its own beside the root's Debian Slurm, for TE_SLURM=NAME tests/check.sh.
#
# NAME = slurm26: Slurm 26.05.3 (../shared/slurm-src/slurm-26.05.3.tar.xz
# beside this checkout, or TE_SLURM_TARBALL) in the trixie root, against its
# OpenPMIx 5.0.7 (Debian sid's 7.0 release candidate is refused by 26.05's
# configure, so sid's own 26.05.5 has no mpi/pmix), into /opt/slurm-26.05.3
# of the root: bin, sbin, lib/slurm (the plugins, mpi_pmix.so among them),
# etc. Debian's 24.11 in /usr stays as it is (TE_SLURM=trixie).
#
# Cached: PREFIX/.trainenv-build holds the tarball's sha256, the
# configure line and the versions of the root's build dependencies; a
# prefix whose stamp says the same is reused without building. The build
# runs in the root's /var/tmp and is installed into a staging directory
# that is renamed to PREFIX only once complete, so an interrupted build
# leaves no prefix and the next run builds again.
# The root must exist (root.sh trixie; its packages include Slurm's
# build dependencies, tests/deps.sh). Run as root.
#   slurm_src.sh --where NAME   prints "ROOT PREFIX VERSION" and exits
#   slurm_src.sh --check NAME   exit 0 when the cached build is complete
#                               (outside the root or inside it)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd -P)
top=$(cd "$here/../.." && pwd -P)
mode=build
case ${1:-} in --where | --check) mode=${1#--}; shift ;; esac
name=${1:-}
case $name in
slurm26)
	rootname=trixie version=26.05.3
	pmix=/usr/lib/x86_64-linux-gnu/pmix2 ;;
*) echo "usage: $0 [--where|--check] slurm26" >&2; exit 2 ;;
esac
prefix=/opt/slurm-$version
if [ "$mode" = where ]; then
	echo "$rootname $prefix $version"
	exit 0
fi
root=${TE_ROOTS:-/var/lib/trainenv-roots}/$rootname
inside=0
[ "$(cat /etc/trainenv-root 2>/dev/null)" = "$rootname" ] && root="" inside=1
tarball=${TE_SLURM_TARBALL:-$(cd "$top/.." && pwd -P)/shared/slurm-src/slurm-$version.tar.xz}
say() { echo "slurm_src.sh: $name: $*" >&2; }
# What the stamp holds: a change to either builds again.
# --enable-multiple-slurmd: the cluster harness runs its nodes' slurmd on
# one machine with one munged, so each slurmd decodes the same launch
# credential's signature there; without it 26.05's cred/munge takes the
# second decode for a replay and the launch fails on all nodes but one
# ("_verify_signature: failed decode", srun: "Header lengths are longer
# than data received"). Nothing else of a site's build changes.
configure_line="./configure --prefix=$prefix --with-pmix=$pmix --with-munge=/usr --with-hwloc=/usr --enable-multiple-slurmd --disable-static --disable-dependency-tracking"
# and the root's packages that decide which plugins are built: a root
# that gained or upgraded one (tests/deps.sh) builds again.
build_deps="libpmix-dev libmunge-dev libhwloc-dev libdbus-1-dev libhttp-parser-dev libjson-c-dev"
stamp_of() { # TARBALL
	printf 'slurm %s\ntarball-sha256 %s\nconfigure %s\n' "$version" \
		"$(sha256sum <"$1" | cut -d' ' -f1)" "$configure_line"
	# shellcheck disable=SC2086,SC2016 # the list splits; dpkg-query expands ${...}
	chroot "$root" dpkg-query -W -f='package ${Package} ${Version}\n' $build_deps 2>&1
}
complete() { # the prefix is there, stamped, with what the suite runs
	[ -f "$root$prefix/.trainenv-build" ] && [ -x "$root$prefix/sbin/slurmd" ] &&
		[ -x "$root$prefix/sbin/slurmstepd" ] && [ -x "$root$prefix/bin/srun" ] &&
		[ -f "$root$prefix/lib/slurm/mpi_pmix.so" ]
}
if [ "$mode" = check ]; then
	complete
	exit
fi

[ "$(id -u)" -eq 0 ] || { echo "slurm_src.sh: needs root (the root's files, enter.sh)" >&2; exit 1; }
[ $inside = 0 ] || { say "builds from outside the root only (it enters the root itself)"; exit 1; }
[ "$(cat "$root/etc/trainenv-root" 2>/dev/null)" = "$rootname" ] ||
	{ say "no root in $root: run tests/releases/root.sh $rootname"; exit 1; }
[ -f "$tarball" ] || { say "no Slurm source: $tarball (set TE_SLURM_TARBALL)"; exit 1; }
t0=$(date +%s)
# One build per prefix at a time (two check.sh runs may start together).
exec 8>"$(dirname "$root")/.$name.lock"
flock 8

want=$(stamp_of "$tarball")
if complete && [ "$(cat "$root$prefix/.trainenv-build")" = "$want" ]; then
	say "reused $prefix in $root (Slurm $version, $(($(date +%s) - t0)) s)"
	exit 0
fi

# From scratch: a stale or half-made prefix and build are removed first.
work=/var/tmp/slurm-$version.build
rm -rf "${root:?}$prefix" "${root:?}$work"
mkdir -p "$root$work"
say "building Slurm $version into $prefix of $root (log: $root$work.log)"
tar -C "$root$work" -xJf "$tarball"
[ -x "$root$work/slurm-$version/configure" ] ||
	{ say "$tarball does not unpack to slurm-$version/"; exit 1; }
nproc=$(nproc)
# enter.sh: the root's own namespaces (no network, nothing left running).
build_cmd="set -e; cd $work/slurm-$version
	t=\$(date +%s); $configure_line >$work.log 2>&1
	echo \"configure: \$((\$(date +%s) - t)) s\"
	t=\$(date +%s); make -j$nproc >>$work.log 2>&1
	echo \"make -j$nproc: \$((\$(date +%s) - t)) s\"
	make install DESTDIR=$work/stage >>$work.log 2>&1"
if ! (cd "$top" && "$here/enter.sh" "$rootname" /bin/bash -c "$build_cmd") >&2; then
	tail -n 30 "$root$work.log" >&2
	say "the build failed (log: $root$work.log)"
	exit 1
fi
stage=$root$work/stage$prefix
[ -f "$stage/lib/slurm/mpi_pmix.so" ] ||
	{ say "the build has no mpi/pmix plugin (configure's PMIx check: $root$work.log)"; exit 1; }
printf '%s\n' "$want" >"$stage/.trainenv-build"
mkdir -p "$(dirname "$root$prefix")"
mv "$stage" "$root$prefix"
cp "$root$work.log" "$root$prefix/.trainenv-build.log"
rm -rf "${root:?}$work" "$root$work.log"
complete || { say "installed, but $prefix lacks slurmd, slurmstepd, srun or mpi_pmix.so"; exit 1; }
say "Slurm $version built and installed in $(($(date +%s) - t0)) s: $root$prefix"
