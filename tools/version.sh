#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Prints trainenv's version, without a newline, for configure.ac's AC_INIT.
#
# One version, one place: the file VERSION at the top holds the release
# (0.9.0). A tarball carries .tarball-version (make dist writes it), which
# wins: the tarball has no .git. In a git checkout, what git says is added
# (as gnulib's git-version-gen does): at the tag vVERSION nothing,
# otherwise -N-gSHA (N commits since the tag, or since VERSION last
# changed when there is no tag) and -dirty when a tracked file differs
# from HEAD. The result is a version word of the rendezvous' wire format:
# [A-Za-z0-9._+-], at most 31 characters (core/launch/rdzv_core.h).
# Usage: tools/version.sh [SRCDIR]   (default: this script's checkout)
src=${1:-$(cd "$(dirname "$0")/.." && pwd)}

if [ -s "$src/.tarball-version" ]; then
	v=$(sed -n 1p "$src/.tarball-version")
else
	v=$(sed -n 1p "$src/VERSION" 2>/dev/null)
	# Only the checkout whose top is SRCDIR: a tarball unpacked inside
	# another repository must not take that one's state.
	if [ -n "$v" ] && command -v git >/dev/null 2>&1 &&
		[ "$(git -C "$src" rev-parse --show-toplevel 2>/dev/null)" = "$(cd "$src" && pwd -P)" ]; then
		suffix=
		if d=$(git -C "$src" describe --tags --abbrev=8 --match "v$v" 2>/dev/null); then
			suffix=${d#"v$v"}
		elif since=$(git -C "$src" log -1 --format=%H -- VERSION 2>/dev/null) && [ -n "$since" ]; then
			count=$(git -C "$src" rev-list --count "$since..HEAD" 2>/dev/null)
			[ "${count:-0}" -gt 0 ] &&
				suffix=-$count-g$(git -C "$src" rev-parse --short=8 HEAD)
		fi
		git -C "$src" update-index -q --refresh >/dev/null 2>&1
		git -C "$src" diff-index --quiet HEAD -- 2>/dev/null || suffix=$suffix-dirty
		v=$v$suffix
	fi
fi
case $v in
'' | *[!A-Za-z0-9._+-]*)
	echo "tools/version.sh: no usable version in $src/VERSION or .tarball-version (got '$v')" >&2
	v=UNKNOWN ;;
esac
printf '%.31s' "$v"
