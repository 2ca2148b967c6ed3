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
#              in _build-NAME/ (tests/releases/enter.sh); unset or "host":
#              this machine's Slurm.
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
slurm=${TE_SLURM:-host}
build=_build
if [ "$slurm" != host ]; then
	build=_build-$slurm
	# Outside the root: make it, then run this script in there.
	if [ "$(cat /etc/trainenv-root 2>/dev/null)" != "$slurm" ]; then
		tests/releases/root.sh "$slurm"
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
		exec tests/releases/enter.sh "$slurm" tests/check.sh
	fi
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
