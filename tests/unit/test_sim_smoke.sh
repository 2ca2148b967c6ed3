#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The scale simulation in small (TAP): 64 simulated nodes of 2 ranks, each
# the real trainenv-rdzv over the stand-in libpmix (tests/bench/bench_scale.c,
# tests/bench/sim_pmix.c); every node's result must say done. Behaviour,
# not timing: the figures are tests/bench/bench_scale.sh's.
# Environment: TE_BUILDDIR (default: the current directory, where
# make check-unit runs it).
set -u
build=${TE_BUILDDIR:-$PWD}
drv=$build/tests/bench/bench_scale
base=/dev/shm
[ -d "$base" ] && [ -w "$base" ] || base=${TMPDIR:-/tmp}
n=0
check() { # RC NAME [DETAIL]
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n - $2"; else
		echo "not ok $n - $2"
		[ -n "${3:-}" ] && printf '%s\n' "$3" | sed 's/^/#   /'
	fi
}
# Every simulated node's helper looks for its rendezvous address on the
# machine's interfaces: with loopback alone (tests/releases/enter.sh's
# network namespace before the cluster's bridge is up, as when only unit
# tests run) it has none, and nothing here could be measured.
if ! ip -o addr show up scope global 2>/dev/null | grep -q .; then
	echo "1..0 # SKIP no up interface with a non-loopback address here: the helper's rendezvous needs one"
	exit 0
fi
echo 1..6
run() { # HELPER NODES: the driver's output (its status in $rc)
	out=$("$drv" --helper "$1" --simlib "$build/tests/bench/simpmix/.libs" \
		--connwatch "$build/tests/bench/.libs/libsimconnwatch.so" \
		--nodes "$2" --ranks-per-node 2 --dir "$base" --barrier 60 2>&1)
	rc=$?
}

run "$build/trainenv-rdzv" 64
check "$rc" "64 simulated nodes x 2 ranks: the driver says every node is done" "$out"
line=$(printf '%s\n' "$out" | head -1)
re='^nodes=64 ranks_per_node=2 all_done_ms=[0-9]+ rank0_cpu_s=[0-9.]+ rank0_rss_mb=[0-9.]+ max_conns=([0-9]+)$'
[[ $line =~ $re ]]
check $? "the size's line has the issue's format" "$line"
conns=${BASH_REMATCH[1]:-0}
[ "$conns" -ge 1 ] && [ "$conns" -le 63 ]
check $? "rank 0's helper held between 1 and 63 connections (got $conns)"
printf '%s\n' "$out" | grep -q '^# nodes_done=64/64 '
check $? "64 of 64 nodes' results say done, with MASTER_ADDR and MASTER_PORT" "$out"
! printf '%s\n' "$out" | grep -q '^# sim_pmix:'
check $? "the helper asked the stand-in libpmix for nothing it does not simulate" "$out"

# the check can fail: a helper that never writes a result is found
run /bin/false 4
[ "$rc" = 1 ] && [[ $out == *"FAILED: 0 of 4 nodes done; first: n1: no result"* ]]
check $? "a helper that leaves no result fails the run, naming the node" "$out"
