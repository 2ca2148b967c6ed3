#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Benchmark (not a test): the held trainenv_barrier() against the bare PMIx
# fence over 24 ranks on the local 3-node cluster, interleaved in triples
# (bare fence, this build's library, and optionally another build's
# libtrainenv.so.0 from --against DIR), so that the machine's noise falls
# on all of them alike; prints each triple's rank-0 medians and the
# median of the per-triple ratios. bench_pmix.sh's "session held" line is
# one such pair; this repeats it (docs/pmix.md, "Launch and barrier
# cost").
# Usage: tests/bench/bench_held.sh [--reps N] [--iters N] [--against DIR]
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/pmix_common.sh
. "$here/../lib/pmix_common.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/bench_pmix_common.sh
. "$here/../lib/bench_pmix_common.sh"

reps=15 iters=300 against=""
while [ $# -gt 0 ]; do
	case $1 in
	--reps) reps=$2; shift 2 ;;
	--iters) iters=$2; shift 2 ;;
	--against) against=$2; shift 2 ;;
	*) echo "usage: $0 [--reps N] [--iters N] [--against DIR]" >&2; exit 2 ;;
	esac
done

cluster_up --nodes 3 >/dev/null || { echo "no cluster" >&2; exit 1; }
bench_pmix_setup
if [ -n "$against" ]; then
	# the nodes see the work directory, not the other build
	mkdir -p other && cp -a "$against"/libtrainenv.so* other/ || exit 1
	cc -O2 -I"$srcdir/include" -o bench_barrier_other "$here/bench_barrier.c" \
		-L"$PWD/other" -ltrainenv -Wl,-rpath,"$PWD/other" || exit 1
fi
run24() { srun --mpi=pmix -N3 --ntasks-per-node=8 --train-barrier=60 "$@" 2>/dev/null | tail -1; }
: >held_ratio; : >other_ratio
printf '%-4s %12s %12s %12s   (rank 0 median us per barrier, %d barriers)\n' rep bare held "${against:+other}" "$iters"
for r in $(seq "$reps"); do
	b=$(run24 ./bare_fence "$iters")
	h=$(run24 ./bench_barrier "$iters" held)
	o=""
	[ -n "$against" ] && o=$(run24 ./bench_barrier_other "$iters" held)
	printf '%-4s %12s %12s %12s\n' "$r" "${b%% *}" "${h%% *}" "${o%% *}"
	ratio "${h%% *}" "${b%% *}" >>held_ratio
	echo >>held_ratio
	if [ -n "$against" ]; then
		ratio "${o%% *}" "${b%% *}" >>other_ratio
		echo >>other_ratio
	fi
done
printf 'held / bare fence, median of %d triples: %sx\n' "$reps" "$(grep . held_ratio | median)"
[ -n "$against" ] &&
	printf 'other build held / bare fence, median of %d triples: %sx\n' "$reps" "$(grep . other_ratio | median)"
exit 0
