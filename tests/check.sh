#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Installs what the tests need (Debian packages only), builds trainenv in
# _build/ and runs the whole test suite: unit tests, then integration tests on
# a local 3-node Slurm cluster. Ends with the line "N passed, N failed".
# Run as root on Debian 12:   tests/check.sh
# Environment: TE_TESTS=REGEX runs only the matching tests;
#              TE_CONFIGURE_FLAGS adds configure flags;
#              TE_SLURM=trixie|sid runs the same suite against that Debian
#              release's Slurm, inside the Debian root of
#              tests/releases/root.sh NAME (made or reused first), building
#              in _build-NAME/ (tests/releases/enter.sh); TE_SLURM=slurm26:
#              Slurm 26.05.3 built from SchedMD's source with PMIx
#              (tests/releases/slurm_src.sh, built once and cached) in the
#              trixie root, in place of its Debian 24.11; unset or "host":
#              this machine's Slurm.
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
slurm=${TE_SLURM:-host}
build=_build

# Inside the root (enter.sh's private mount namespace, gone at the end):
# the suite runs the Slurm of PREFIX only. Its bin and sbin come first in
# PATH, each program of Debian's Slurm in /usr is PREFIX's by a bind mount
# (a test's `PATH=/usr/bin:/bin`, a job with --export=NONE), so are its
# headers in /usr/include/slurm, and Debian's
# plugin directory (its libslurmfull) is an empty one, so a Debian Slurm
# program that still ran would fail; trainenv is built against PREFIX's
# headers.
use_slurm_prefix() { # PREFIX
	local p=$1 d f
	tests/releases/slurm_src.sh --check "$slurm" ||
		{ echo "check.sh: no complete Slurm build in $p: run tests/releases/slurm_src.sh $slurm outside the root" >&2; exit 1; }
	for d in bin sbin; do
		for f in "$p/$d"/*; do
			[ -e "/usr/$d/${f##*/}" ] && mount --bind "$f" "/usr/$d/${f##*/}"
		done
	done
	# and Debian's headers too: a test that builds a SPANK plugin
	# (t00's probe) builds it for PREFIX's release
	[ -d /usr/include/slurm ] && mount --bind "$p/include/slurm" /usr/include/slurm
	for d in /usr/lib/*/slurm-wlm; do
		[ -d "$d" ] && mount -t tmpfs -o ro,mode=0755 none "$d"
	done
	PATH=$p/sbin:$p/bin:$PATH
	TE_CONFIGURE_FLAGS="--with-slurm=$p --with-slurm-plugindir=$p/lib/slurm ${TE_CONFIGURE_FLAGS:-}"
	export PATH TE_CONFIGURE_FLAGS
	echo "check.sh: $slurm: $(slurmd -V) from $p" >&2
}
# A Slurm built from source (slurm_src.sh) lives in a Debian root's prefix.
rootname=$slurm sprefix=""
case $slurm in slurm26) read -r rootname sprefix _ < <(tests/releases/slurm_src.sh --where "$slurm") ;; esac
if [ "$slurm" != host ]; then
	build=_build-$slurm
	# Outside the root: make it, then run this script in there.
	if [ "$(cat /etc/trainenv-root 2>/dev/null)" != "$rootname" ]; then
		tests/releases/root.sh "$rootname"
		[ -z "$sprefix" ] || tests/releases/slurm_src.sh "$slurm"
		# configure, Makefile.in and config.h.in are made here, by this
		# machine's autotools, as for _build/: the root's newer ones
		# never rewrite what the host's build uses (and make never runs
		# them in there, below).
		stale=0
		[ -x configure ] && [ -f Makefile.in ] && [ -f config.h.in ] || stale=1
		for f in configure.ac Makefile.am m4/*.m4; do
			[ "$f" -nt configure ] || [ "$f" -nt Makefile.in ] || [ "$f" -nt config.h.in ] && stale=1
		done
		if [ $stale = 1 ]; then
			command -v autoreconf >/dev/null ||
				{ echo "check.sh: autoreconf is missing here: run tests/deps.sh" >&2; exit 1; }
			autoreconf -fi >/dev/null
		fi
		exec tests/releases/enter.sh "$rootname" tests/check.sh
	fi
	[ -z "$sprefix" ] || use_slurm_prefix "$sprefix"
fi
tests/deps.sh
# configure holds the version of the commit autoreconf saw
# (tools/version.sh): made again when the tree's version moved on.
if [ "$slurm" = host ] && { [ ! -x configure ] || [ configure.ac -nt configure ] ||
	[ "$(sh tools/version.sh)" != "$(sed -n "s/^PACKAGE_VERSION='\(.*\)'\$/\1/p" configure)" ]; }; then
	autoreconf -fi >/dev/null
fi
mkdir -p "$build"
cd "$build"
# In a root, make treats the host-made files as up to date (-o: a
# Makefile.am edited meanwhile waits for the next run), so configure runs
# again when they changed.
keep=()
if [ "$slurm" != host ]; then
	keep=(-o ../configure -o ../aclocal.m4 -o ../Makefile.in -o ../config.h.in)
fi
if [ ! -f Makefile ] || [ ../configure -nt Makefile ] ||
	{ [ "$slurm" != host ] && { [ ../Makefile.in -nt Makefile ] || [ ../config.h.in -nt Makefile ]; }; }; then
	../configure --prefix=/usr/local ${TE_CONFIGURE_FLAGS:-} >/dev/null
fi
make "${keep[@]}" -j"$(nproc)" >/dev/null
make "${keep[@]}" -s check
