#!/bin/bash
# Installs what the tests need (Debian packages only), builds trainenv in
# _build/ and runs the whole test suite: unit tests, then integration tests on
# a local 3-node Slurm cluster. Ends with the line "N passed, N failed".
# Run as root on Debian 12:   tests/check.sh
# Environment: TE_TESTS=REGEX runs only the matching tests;
#              TE_CONFIGURE_FLAGS adds configure flags.
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
tests/deps.sh
if [ ! -x configure ] || [ configure.ac -nt configure ]; then
	autoreconf -fi >/dev/null
fi
mkdir -p _build
cd _build
if [ ! -f Makefile ] || [ ../configure -nt Makefile ]; then
	../configure --prefix=/usr/local ${TE_CONFIGURE_FLAGS:-} >/dev/null
fi
make -j"$(nproc)" >/dev/null
make -s check
