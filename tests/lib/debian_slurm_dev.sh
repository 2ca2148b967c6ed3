#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Fetches Debian's own libslurm-dev and libslurm of newer releases (trixie:
# 24.11, sid: 26.05) from Debian's archive and unpacks each into DEST/SUITE
# (usr/include/slurm and the real libslurm.so.N): what the compile matrix
# (tests/unit/test_slurm_releases.sh) builds the plugin against and checks
# its imports with. A private apt configuration: the machine's own apt
# state is not touched. Idempotent: a suite already unpacked is kept.
# Usage: tests/lib/debian_slurm_dev.sh DEST [SUITE...]   (default: trixie sid)
set -euo pipefail
dest=${1:?usage: $0 DEST [SUITE...]}
shift
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(trixie sid)

# The archive this machine's apt uses (deb822 or one-line sources).
mirror=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' \
	/etc/apt/sources.list.d/debian.sources 2>/dev/null | grep -v security | head -n1)
[ -n "$mirror" ] || mirror=$(sed -n 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\(http[^[:space:]]*\).*/\2/p' \
	/etc/apt/sources.list 2>/dev/null | grep -v security | head -n1)
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian

mkdir -p "$dest"
for suite in "${suites[@]}"; do
	case $suite in trixie|sid|forky) ;; *) echo "debian_slurm_dev: unknown suite '$suite' (trixie, sid, forky)" >&2; exit 2;; esac
	out=$dest/$suite
	[ -f "$out/.complete" ] && continue
	apt=$dest/.apt-$suite
	rm -rf "$apt" "$out"
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$out"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite main" \
		>"$apt/sources.list"
	o=(-o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/nonexistent
	   -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache"
	   -o Dir::State::status=/dev/null
	   # sid's Release in the archive's copy is past its Valid-Until
	   -o Acquire::Check-Valid-Until=false -o APT::Sandbox::User=root -q)
	apt-get "${o[@]}" update >/dev/null
	ver=$(apt-cache "${o[@]}" show libslurm-dev | sed -n 's/^Version: //p' | head -n1)
	lib=$(apt-cache "${o[@]}" show "libslurm-dev=$ver" |
		sed -n 's/^Depends:.*\(libslurm[0-9][0-9a-z]*\) (= [^)]*).*/\1/p' | head -n1)
	[ -n "$ver" ] && [ -n "$lib" ] || { echo "debian_slurm_dev: no libslurm-dev in $suite" >&2; exit 1; }
	(cd "$apt" && apt-get "${o[@]}" download "libslurm-dev=$ver" "$lib=$ver" >/dev/null)
	for deb in "$apt"/*.deb; do dpkg-deb -x "$deb" "$out"; done
	echo "$ver" >"$out/.version"
	rm -rf "$apt"
	touch "$out/.complete"
	echo "debian_slurm_dev: $suite libslurm-dev $ver in $out"
done
