#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# trainenv-nccl.so in an older image: the shim built here (Debian 12, glibc 2.36) is put in LD_PRELOAD of programs built and run inside a Debian 11 root (glibc 2.31; tests/releases/old_root.sh), where it must load and stand between the program and a stand-in libnccl: the barrier (a stand-in libtrainenv next to the shim) runs once, before NCCL is entered. A shim built without pmix/glibc_compat.h is refused there. No cluster.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP needs root (chroot into the old root)"
	exit 0
fi
te_build_init
shim=$builddir/.libs/trainenv-nccl.so
[ -f "$shim" ] || bail_out "build first: no $shim"
err=$(mktemp) || bail_out "no temporary file"
root=$(timeout 1900 "$here/../releases/old_root.sh" 2>"$err")
rc=$?
why=$(tail -n 1 "$err")
rm -f "$err"
if [ "$rc" -ne 0 ] || [ ! -d "$root" ]; then
	echo "1..0 # SKIP no Debian 11 root: ${why:-old_root.sh exited $rc}"
	exit 0
fi

plan 14

dir=$(mktemp -d "$root/tmp/t62.XXXXXX") || bail_out "no directory in $root/tmp"
te_on_exit "rm -rf '$dir'"
# the harness runs te_on_exit's commands from the EXIT trap that a cluster
# or a stage of the test's own sets; under make check (one stage for all,
# no cluster here) nothing would
trap _te_exit EXIT
in=/tmp/${dir##*/}		# the same directory, seen from inside the root
inroot() { chroot "$root" /usr/bin/env -i PATH=/usr/bin:/bin LANG=C.UTF-8 "$@"; }

glibc=$(inroot ldd --version 2>&1 | head -n 1)
like "$glibc" 'GLIBC 2\.(2[0-9]|3[0-3])[^0-9]' "the root's glibc is older than 2.34 ($glibc)"

mkdir -p "$dir/shim" "$dir/nccl"
cp "$shim" "$dir/shim/trainenv-nccl.so"
cp "$here/nccl_probe.c" "$here/nccl_standin.c" "$dir/"
cp "$here/nccl_standin.h" "$dir/nccl.h"
out=$(inroot sh -ec "cd $in
	gcc -O2 -fPIC -shared -I. -o nccl/libnccl.so.2 nccl_standin.c
	gcc -O2 -fPIC -shared -DTE_STANDIN_BARRIER -o shim/libtrainenv.so.0 nccl_standin.c
	gcc -O2 -I. -o probe nccl_probe.c -L nccl -l:libnccl.so.2 -Wl,-rpath,$in/nccl" 2>&1)
ok $? "the probe, a stand-in libnccl and a stand-in libtrainenv build with the root's gcc" || diag "$out"

out=$(inroot "$in/probe" 2>&1)
like "$out" '^rank 0 first ncclCommInitRank: 0 ' "without the shim the probe reaches the stand-in NCCL" || diag "$out"

# ---------------------------------------------------------------- the shim
run_probe() { # [VAR=VALUE...]: runs the probe with the shim, tracing
	: >"$dir/trace"
	chmod 666 "$dir/trace"
	out=$(inroot RANK=0 WORLD_SIZE=1 TRAINENV_NCCL_TRACE="$in/trace" \
		LD_PRELOAD="$in/shim/trainenv-nccl.so" "$@" "$in/probe" 2>&1)
	rc=$?
	trace=$(cat "$dir/trace")
}
run_probe
ok $rc "the probe runs with the shim in LD_PRELOAD (exit $rc)" || diag "$out"
! grep -qE "cannot be preloaded|version .GLIBC|not found" <<<"$out"
ok $? "the root's ld.so takes the shim without a word" || diag "$out"
is "$(grep -c '^standin trainenv_barrier ' <<<"$out")" 1 "the shim ran the barrier (its libtrainenv next to it) once" || diag "$out"
is "$(grep -c '^standin ncclCommInitRank ' <<<"$out")" 2 "both calls went on to NCCL" || diag "$out"
is "$(awk '{print $2}' <<<"$trace" | tr '\n' ' ')" "barrier-start barrier-done nccl-enter nccl-enter " \
	"the trace: one barrier, then NCCL, in that order" || diag "$trace"
like "$(sed -n 1p <<<"$out")" '^standin trainenv_barrier ' "the barrier came before the first call reached NCCL" || diag "$out"

run_probe STANDIN_BARRIER_FAIL=1
like "$out" 'rank 0: the barrier before the first NCCL communicator failed, NCCL not entered: the stand-in barrier was told to fail' \
	"a failed barrier: one line saying why" || diag "$out"
! grep -q '^standin ncclCommInitRank' <<<"$out" && grep -q 'first ncclCommInitRank: 2 ' <<<"$out"
ok $? "and NCCL is not entered (ncclSystemError)" || diag "$out"

out=$(inroot LD_PRELOAD="$in/shim/trainenv-nccl.so" python3 -c 'import sys; print(sys.version_info[:2])' 2>&1)
is "$out" "(3, 9)" "the root's python3 starts with the shim preloaded"

# ---------------------------------------------------------------- before the fix
# The same source without the old-version bindings, as the shim was built
# before: the root's ld.so stops every program it is preloaded into.
cc -O2 -fPIC -shared -DTE_NO_GLIBC_COMPAT -I"$builddir" -I"$TE_SRCDIR/include" \
	-I"$TE_SRCDIR/core" -DTE_LIBDIR='"/nowhere"' "$TE_SRCDIR/pmix/nccl_preload.c" \
	-o "$dir/shim/unbound.so" -ldl -lpthread 2>"$dir/cc.err"
ok $? "the shim builds on this machine without pmix/glibc_compat.h" || diag "$(cat "$dir/cc.err")"
out=$(inroot LD_PRELOAD="$in/shim/unbound.so" "$in/probe" 2>&1)
rc=$?
[ "$rc" -ne 0 ] && grep -q "version .GLIBC_2.3[4-9]' not found (required by $in/shim/unbound.so)" <<<"$out"
ok $? "built so, it is refused in the root: exit $rc, 'GLIBC_2.34 not found'" || diag "$out"

done_testing
