#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What goes into container images must load under glibc 2.17 (TAP): the highest GLIBC_x.y that trainenv-nccl.so (and the NCCL profiler plugin) requires (objdump -T), the libraries its old-version symbols need, and the check itself against the shim built without pmix/glibc_compat.h. x86_64 (elsewhere: skipped, saying why).
#
# What must load in a container and what not: trainenv-nccl.so is put in
# LD_PRELOAD of every process of a --train-barrier=first-collective task,
# inside the image too, and ld.so stops a program whose preload needs a
# newer glibc than the image's (t62 shows it): it is held to 2.17 (EL7, the
# oldest glibc NCCL and PyTorch images still use). libtrainenv is loaded by
# the shim only at the first communicator, and it needs libpmix (with
# libevent, hwloc, munge) of the build machine, which an image does not
# have whatever its glibc: it is not held to the baseline, and its versions
# are printed for information. The plugin, the helpers and the tool run on
# the node, outside the image.
# Environment: TE_BUILDDIR (default: the current directory, where make
# check-unit runs it), TE_SRCDIR (default: this checkout), CC.
set -u
build=${TE_BUILDDIR:-$PWD}
src=${TE_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd -P)}
shim=$build/.libs/trainenv-nccl.so
base=2.17
n=0
check() { # RC NAME [DETAIL]
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n - $2"; else
		echo "not ok $n - $2"
		[ -n "${3:-}" ] && printf '%s\n' "$3" | sed 's/^/#   /'
	fi
}
# The highest GLIBC_x.y an object requires (its dynamic symbols' versions).
glibc_max() { # FILE
	objdump -T "$1" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/^GLIBC_//' |
		sort -uV | tail -n 1
}
# 0 when version A <= B.
le() { [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -n 1)" = "$1" ]; }

if [ "$(uname -m)" != x86_64 ]; then
	echo "1..0 # SKIP the 2.17 baseline is checked on x86_64 only (this is $(uname -m))"
	exit 0
fi
if ! command -v objdump >/dev/null; then
	echo "1..0 # SKIP no objdump (Debian: binutils)"
	exit 0
fi
echo 1..9

[ -f "$shim" ]
check $? "the shim is built ($shim)"
max=$(glibc_max "$shim" 2>/dev/null)
le "${max:-99}" "$base"
check $? "trainenv-nccl.so requires GLIBC_$max at most (the baseline: $base)" \
	"$(objdump -T "$shim" 2>&1 | grep -E 'GLIBC_2\.(1[89]|[2-9][0-9])')"

# Before glibc 2.34 the old dl* and pthread_once live in libdl and
# libpthread: a program that links neither (most) must get them from the
# shim's own NEEDED entries.
needed=$(objdump -p "$shim" 2>/dev/null | awk '$1 == "NEEDED" { print $2 }' | tr '\n' ' ')
if objdump -T "$shim" | grep -qE '\b(dlsym|dlopen|dladdr|dlerror)$'; then
	grep -q 'libdl\.so\.2' <<<"$needed"
	check $? "it imports dl* and lists libdl.so.2 as NEEDED ($needed)"
else
	check 1 "it imports no dl* (it calls dlsym(RTLD_NEXT)): the check is out of date"
fi
if objdump -T "$shim" | grep -qE '\bpthread_[a-z_]+$'; then
	grep -q 'libpthread\.so\.0' <<<"$needed"
	check $? "it imports pthread_* and lists libpthread.so.0 as NEEDED ($needed)"
else
	check 0 "it imports no pthread_* (libpthread.so.0 not needed)"
fi
! objdump -T "$shim" | grep -E 'GLIBC_PRIVATE|\(GLIBC_2\.34\)|GLIBC_2\.3[5-9]|GLIBC_2\.[4-9][0-9]'
check $? "no GLIBC_PRIVATE or GLIBC_2.34+ symbol"

# The check itself: the same source without the bindings, as it was built
# before, must fail it on a build machine with glibc 2.34 or newer.
host=$(ldd --version 2>&1 | sed -n '1s/.* \([0-9][0-9]*\.[0-9][0-9]*\)$/\1/p')
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
if le 2.34 "${host:-0}"; then
	${CC:-cc} -O2 -fPIC -shared -DTE_NO_GLIBC_COMPAT -I"$build" -I"$src/include" \
		-I"$src/core" -DTE_LIBDIR='"/nowhere"' "$src/pmix/nccl_preload.c" \
		-o "$tmp/unbound.so" -ldl -lpthread 2>"$tmp/cc.err"
	unbound=$(glibc_max "$tmp/unbound.so" 2>/dev/null)
	[ -n "$unbound" ] && ! le "$unbound" "$base"
	check $? "without pmix/glibc_compat.h the shim requires GLIBC_${unbound:-?}: the check fails it" \
		"$(cat "$tmp/cc.err")"
else
	echo "ok $((n += 1)) # SKIP this machine's glibc ($host) is older than 2.34: nothing to bind"
fi

# The NCCL profiler plugin loads into the same programs, in images too
# (NCCL dlopens it by NCCL_PROFILER_PLUGIN): held to the same baseline.
prof=$build/.libs/libnccl-profiler-trainenv.so
[ -f "$prof" ]
check $? "the profiler plugin is built ($prof)"
max=$(glibc_max "$prof" 2>/dev/null)
le "${max:-99}" "$base" &&
	! objdump -T "$prof" | grep -qE 'GLIBC_PRIVATE|\(GLIBC_2\.34\)|GLIBC_2\.3[5-9]|GLIBC_2\.[4-9][0-9]'
check $? "libnccl-profiler-trainenv.so requires GLIBC_$max at most, no GLIBC_PRIVATE or 2.34+" \
	"$(objdump -T "$prof" 2>&1 | grep -E 'GLIBC_2\.(1[89]|[2-9][0-9])|GLIBC_PRIVATE')"

lib=$build/.libs/libtrainenv.so.0
if [ -f "$lib" ]; then
	echo "# libtrainenv.so.0 requires GLIBC_$(glibc_max "$lib") and" \
		"$(objdump -p "$lib" | awk '$1 == "NEEDED" && $2 ~ /pmix/ { print $2 }'):" \
		"not an image's library (see the first lines)"
fi
# The header binds nothing on another architecture by mistake.
grep -q '__x86_64__' "$src/pmix/glibc_compat.h" &&
	grep -q '"GLIBC_2.2.5"' "$src/pmix/glibc_compat.h"
check $? "pmix/glibc_compat.h names x86_64's first version, GLIBC_2.2.5"
