#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Benchmark (not a test): does binding slow the launch? Prints, from one run
# on the local 3-node cluster:
#  - the per-task cost of computing and applying a binding and the
#    once-per-step topology load (tests/bench/bench_bind, in-process);
#  - the wall time of `srun -N3 -n24 true` with --train-bind=numa vs
#    --train-bind=none, interleaved, median of N runs each, and the ratio
#    (target: <= 1.05).
# Usage: tests/bench/bench_bind_launch.sh [RUNS]   (from the build tree)
set -u
here=$(cd "$(dirname "$0")" && pwd -P)
runs=${1:-21}
. "$here/../lib/itest.sh" >/dev/null
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"
te_build_init
cluster_up --nodes 3 >/dev/null || { echo "no cluster"; exit 1; }

echo "== in-process costs (median, this machine)"
"$TE_REAL_BUILDDIR/tests/bench/bench_bind" 2>&1 | sed 's/^/   /'

lstopo-no-graphics --of xml --whole-io - >here.xml 2>/dev/null
"$here/../lib/add_gpus.py" here.xml gpus.xml 2

t() { # MODE -> seconds
	local s e
	s=$(date +%s.%N)
	CUDA_VISIBLE_DEVICES=0,1 srun -N3 -n24 --train-bind="$1" true >/dev/null 2>&1 || echo "srun failed ($1)" >&2
	e=$(date +%s.%N)
	awk -v s="$s" -v e="$e" 'BEGIN{printf "%.4f\n", e-s}'
}
median() { sort -n | awk '{a[NR]=$1} END{print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }
measure() { # TITLE
	t numa >/dev/null; t none >/dev/null	# warm-up (fills the cache)
	: >on.txt; : >off.txt
	for _ in $(seq "$runs"); do
		t numa >>on.txt
		t none >>off.txt
	done
	on=$(median <on.txt); off=$(median <off.txt)
	echo "== srun -N3 -n24 true, $1, median of $runs interleaved runs each"
	printf '   binding off (none): %.1f ms\n' "$(awk -v v="$off" 'BEGIN{print v*1000}')"
	printf '   binding on  (numa): %.1f ms\n' "$(awk -v v="$on" 'BEGIN{print v*1000}')"
	awk -v a="$on" -v b="$off" 'BEGIN{printf "   ratio on/off: %.3f (target <= 1.05)\n", a/b}'
}
# Production path: this machine discovered by hwloc, kept in the per-boot
# topology cache after the first step.
set_plugstack "required $builddir/.libs/trainenv.so" >/dev/null
measure "this machine (discovery, then the per-boot cache)"
# Test path: this machine's export with 2 fake GPUs per package.
set_plugstack "required $builddir/.libs/trainenv.so bind-topology=$TE_WORK/gpus.xml" >/dev/null
measure "this machine + 2 fake GPUs (bind-topology XML)"
