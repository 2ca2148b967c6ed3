#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The compile matrix (TAP): the plugin built against every Slurm release
# trainenv supports, from one source (spank/slurm_compat.h holds the
# differences), with this build's flags and warnings as errors; then every
# Slurm and SPANK function it imports checked against that release: declared
# by its headers (all releases) and defined by its real libslurm (Debian 12's
# 22.05 on this machine, Debian's trixie 24.11 and sid 26.05 packages). A
# plugin linked -z now that imports one symbol its Slurm lacks loads in no
# process at all.
# Environment: TE_SRCDIR, TE_BUILDDIR (a configured and built tree, when
#   not run from one);
#   TE_SLURM_HEADERS: the folder of slurm-X.Y.Z.tar.xz header sets
#     (default: the shared/slurm-headers beside the checkout);
#   TE_SLURM_DEBS: where tests/lib/debian_slurm_dev.sh unpacks Debian's
#     libslurm-dev of trixie and sid (default /var/cache/trainenv-slurm-dev;
#     fetched from Debian's archive when missing).
set -u
src=${TE_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd -P)}
# The tree make runs it in (t90's sanitizer build runs it inside the outer
# run, whose TE_BUILDDIR names another tree), else TE_BUILDDIR's.
build=${TE_BUILDDIR:-$PWD}
grep -qs '^te-plugin-release:' "$PWD/Makefile" && build=$PWD
headers=${TE_SLURM_HEADERS:-$(cd "$src/.." && pwd -P)/shared/slurm-headers}
debs=${TE_SLURM_DEBS:-/var/cache/trainenv-slurm-dev}

# shellcheck source=../lib/unit_check.sh
. "$src/tests/lib/unit_check.sh"
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }

# The releases' header sets the matrix must cover (issue 23).
want="22.05.8 23.02.8 23.11.11 24.05.8 24.11.7 25.05.8 25.11.7 26.05.3"

if [ ! -f "$build/Makefile" ] || [ ! -f "$build/.libs/trainenv.so" ]; then
	skip "compile matrix" "no built tree in $build (run it from make check)"
	echo "1..$n"
	exit 0
fi
# The matrix's makes are builds of their own, not jobs of a parallel make
# check that runs this script: without its jobserver flags, which they
# cannot use ("jobserver unavailable: using -j1" would be their output).
tmake() { env -u MAKEFLAGS -u MFLAGS make "$@"; }
# A Makefile older than its Makefile.am is remade first, not in the
# middle of a release's build (whose output must be empty).
tmake -s -C "$build" --no-print-directory Makefile >/dev/null 2>&1
work=$(mktemp -d /var/tmp/te-releases.XXXXXX)
trap 'rm -rf "$work"' EXIT

# One release: NAME INCLUDE_DIR [LIBSLURM]
one_release() {
	local name=$1 inc=$2 lib=${3:-} out=$work/$1/trainenv.so log imports undecl
	mkdir -p "$work/$name"
	if [ -f "$work/$name/build.rc" ]; then	# built by build_release
		log=$(cat "$work/$name/build.log")
		(exit "$(cat "$work/$name/build.rc")")
	else
		log=$(tmake -s -C "$build" --no-print-directory te-plugin-release \
			TE_REL_INCLUDE="$inc" TE_REL_OUT="$out" 2>&1)
	fi
	check $? "Slurm $name: the plugin builds against its headers, no warning" "$log"
	[ -f "$out" ] || return
	[ "$(grep -c . <<<"$log")" = 0 ]
	check $? "Slurm $name: the build printed nothing" "$log"
	got=$(printf '#include <slurm/slurm_version.h>\nSLURM_VERSION_NUMBER\n' |
		cpp -P -isystem "$inc" - 2>/dev/null | tail -n1)
	[ "$((got))" = "$(( ($(cut -d. -f1 <<<"$name") << 16) + ($(cut -d. -f2 <<<"$name") << 8) + $(cut -d. -f3 <<<"$name" | sed 's/-.*//') ))" ]
	check $? "Slurm $name: built against that release's slurm_version.h ($got)"

	# What the plugin takes from its host process: Slurm's and SPANK's API.
	imports=$(nm -D --undefined-only "$out" | awk '{print $NF}' |
		grep -E '^(slurm|spank|slurmdb)_' | sort -u)
	[ -n "$imports" ]
	check $? "Slurm $name: the plugin imports Slurm functions (nm works)"
	# Declared by that release's headers: taking each one's address
	# compiles only if the header declares it (no implicit declaration).
	{
		echo '#include <slurm/spank.h>'
		echo '#include <slurm/slurm.h>'
		echo '#include <slurm/slurm_errno.h>'
		echo 'void *te_imports[] = {'
		sed 's/.*/\t(void *)\&(&),/' <<<"$imports"
		echo '};'
	} >"$work/$name/imports.c"
	undecl=$(cc -c -o "$work/$name/imports.o" -isystem "$inc" -Werror=implicit-function-declaration \
		"$work/$name/imports.c" 2>&1 | grep -o "'[a-z_]*' undeclared" | sort -u)
	[ -z "$undecl" ]
	check $? "Slurm $name: every imported function is declared by its headers" "$undecl"
	if [ -n "$lib" ]; then
		missing=$(comm -23 <(grep -E '^(slurm|slurmdb)_' <<<"$imports") \
			<(nm -D --defined-only "$lib" | awk '{print $NF}' | sort -u))
		[ -z "$missing" ]
		check $? "Slurm $name: every imported slurm_* is in its libslurm ($(basename "$lib"))" "$missing"
	fi
}

# A release's build alone, its output and status kept in $work/NAME for
# one_release's checks.
build_release() { # NAME INCLUDE_DIR
	mkdir -p "$work/$1"
	tmake -s -C "$build" --no-print-directory te-plugin-release \
		TE_REL_INCLUDE="$2" TE_REL_OUT="$work/$1/trainenv.so" >"$work/$1/build.log" 2>&1
	echo $? >"$work/$1/build.rc"
}

count=0
for v in $want; do [ -f "$headers/slurm-$v.tar.xz" ] && count=$((count + 1)); done
# SchedMD's releases build side by side, as many at once as there are CPUs
# (a release's build is one compiler run: one at a time, this test took
# half a minute); the libraries they all link are made first, once, so no
# two makes write the same file (what that printed counts as the first
# release's output, as when its build made them). Their checks run below,
# in order.
tmake -s -C "$build" --no-print-directory libtecore.la libtebind.la >"$work/libs.log" 2>&1
jobs=$(nproc) running=0 pids=() first=''
for v in $want; do
	t=$headers/slurm-$v.tar.xz
	[ -f "$t" ] || continue
	mkdir -p "$work/h-$v"
	tar -xJf "$t" -C "$work/h-$v"
	if [ "$running" -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
	build_release "$v" "$work/h-$v" &
	pids+=($!) running=$((running + 1)) first=${first:-$v}
done
[ ${#pids[@]} = 0 ] || wait "${pids[@]}"
if [ -n "$first" ] && [ -s "$work/libs.log" ]; then
	cat "$work/libs.log" "$work/$first/build.log" >"$work/first.log"
	mv "$work/first.log" "$work/$first/build.log"
fi

# SchedMD's releases: header sets only (shared/slurm-headers).
if [ "$count" = 0 ]; then
	skip "SchedMD header sets" "none in $headers (set TE_SLURM_HEADERS to the folder of slurm-X.Y.Z.tar.xz)"
fi
for v in $want; do
	t=$headers/slurm-$v.tar.xz
	[ -f "$t" ] || { echo "# no $t: release $v not built" >&2; continue; }
	one_release "$v" "$work/h-$v"
done

# Debian's own builds, with their real libslurm.
if [ ! -f "$debs/trixie/.complete" ] || [ ! -f "$debs/sid/.complete" ]; then
	"$src/tests/lib/debian_slurm_dev.sh" "$debs" >/dev/null 2>&1 ||
		echo "# could not fetch Debian's libslurm-dev of trixie and sid" >&2
fi
for suite in trixie sid; do
	if [ ! -f "$debs/$suite/.complete" ]; then
		for i in 1 2 3 4 5 6; do
			skip "Debian $suite's libslurm-dev ($i)" "not in $debs/$suite and Debian's archive could not be reached"
		done
		continue
	fi
	ver=$(sed 's/-.*//' "$debs/$suite/.version")
	lib=$(ls "$debs/$suite"/usr/lib/*/libslurm.so.[0-9]* 2>/dev/null | head -n1)
	one_release "$ver-debian-$suite" "$debs/$suite/usr/include" "$lib"
done

# This machine's Slurm (what make check built against): its libslurm too.
inc=/usr/include
lib=$(ls /usr/lib/*/libslurm.so.[0-9]* 2>/dev/null | head -n1)
hv=$(printf '#include <slurm/slurm_version.h>\nSLURM_VERSION_NUMBER\n' | cpp -P - 2>/dev/null | tail -n1)
case $hv in 0x*) hv=$(printf "%d.%02d.%d" $(( hv >> 16 )) $(( (hv >> 8) & 255 )) $(( hv & 255 )));; *) hv=;; esac
if [ -n "$lib" ] && [ -n "$hv" ]; then
	one_release "$hv-this-machine" "$inc" "$lib"
else
	for i in 1 2 3 4 5 6; do skip "this machine's Slurm ($i)" "no libslurm or slurm_version.h under /usr"; done
fi

echo "1..$n"
echo "# $n checks, $failed failed"
[ "$failed" = 0 ]
