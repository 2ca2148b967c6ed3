#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Benchmark of the PMIx layer (not a test): on the local 3-node cluster,
#  1. launch time of srun --mpi=pmix -N3 -n24 with the PMIx rendezvous and
#     the launch barrier on versus off (the plugin loaded both times;
#     median of --runs runs, interleaved);
#  2. latency of one job-wide barrier over 24 ranks, measured inside
#     long-lived processes after warm-up: a bare PMIx_Fence (the baseline),
#     trainenv_barrier() in process (session held, and opened per call),
#     the `trainenv barrier` command (a process per call), and gloo's
#     torch.distributed.barrier();
#  3. how the trainenv barrier grows from 1 to 3 nodes and 2 to 24 ranks.
# Ratios are against baselines measured in the same run.
# Usage: tests/bench/bench_pmix.sh [--runs N] [--iters N] [--ranks-per-node P]
#        [--launch-only]
# --ranks-per-node sets the launch's ranks per node (8): with 1, the
# barrier's release wakes 3 tasks instead of 24 on this machine's CPUs
# (docs/pmix.md, "The launch: where the time went"); --launch-only stops
# after part 1.
# Uses $TE_CLUSTER_DIR when it holds a running cluster, else starts one.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/pmix_common.sh
. "$here/../lib/pmix_common.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/bench_pmix_common.sh
. "$here/../lib/bench_pmix_common.sh"

runs=21 iters=200 ppn=8 launch_only=0
while [ $# -gt 0 ]; do
	case $1 in
	--runs) runs=$2; shift 2 ;;
	--iters) iters=$2; shift 2 ;;
	--ranks-per-node) ppn=$2; shift 2 ;;
	--launch-only) launch_only=1; shift ;;
	*) echo "usage: $0 [--runs N] [--iters N] [--ranks-per-node P] [--launch-only]" >&2; exit 2 ;;
	esac
done
case $ppn in
[1-9] | [1-9][0-9]) ;;
*) echo "$0: --ranks-per-node: invalid value '$ppn'; accepted: 1 to 99" >&2; exit 2 ;;
esac

cluster_up --nodes 3 >/dev/null || { echo "no cluster" >&2; exit 1; }
bench_pmix_setup

secs() { # CMD...: wall seconds of CMD (stdout and stderr dropped)
	local t0
	t0=$(date +%s.%N)
	"$@" >/dev/null 2>&1 || echo "# failed: $*" >&2
	awk -v s="$t0" -v e="$(date +%s.%N)" 'BEGIN { printf "%.4f\n", e - s }'
}

echo "trainenv PMIx layer benchmark: 3 nodes, 24 ranks ($(nproc) CPUs on this machine)"
echo

# ---------------------------------------------------------------- 1. launch
on=(--mpi=pmix -N3 --ntasks-per-node="$ppn" --train-rdzv=pmix --train-barrier=60)
off=(--mpi=pmix -N3 --ntasks-per-node="$ppn" --train-rdzv=computed --train-barrier=off)
srun "${on[@]}" true >/dev/null 2>&1	# warm caches
srun "${off[@]}" true >/dev/null 2>&1
: >launch_on; : >launch_off
for _ in $(seq "$runs"); do
	secs srun "${off[@]}" true >>launch_off
	secs srun "${on[@]}" true >>launch_on
done
t_off=$(median <launch_off)
t_on=$(median <launch_on)
printf '1. launch: srun --mpi=pmix -N3 -n%d true, median of %d runs\n' $((3 * ppn)) "$runs"
printf '   rendezvous+barrier off (--train-rdzv=computed --train-barrier=off)  %7.3f s\n' "$t_off"
printf '   rendezvous+barrier on  (--train-rdzv=pmix --train-barrier=60)       %7.3f s\n' "$t_on"
printf '   ratio on/off: %sx (goal <= 1.02x)\n' "$(ratio "$t_on" "$t_off")"
: >py_on; : >py_off
for _ in $(seq 3); do
	secs srun "${off[@]}" "$PY" -c pass >>py_off
	secs srun "${on[@]}" "$PY" -c pass >>py_on
done
printf '   with a Python task (python3 -c pass), median of 3: off %.3f s, on %.3f s, ratio %sx\n' \
	"$(median <py_off)" "$(median <py_on)" "$(ratio "$(median <py_on)" "$(median <py_off)")"
echo
[ "$launch_only" = 1 ] && exit 0

# ---------------------------------------------------------------- 2. latency
# rank 0's "median_us mean_us" per barrier
run24() { srun --mpi=pmix -N3 --ntasks-per-node=8 --train-barrier=60 "$@" 2>/dev/null | tail -1; }
# The baseline is the bare fence trainenv's barrier uses: without data,
# Slurm's ring algorithm (SLURM_PMIX_FENCE=ring, set by the plugin on 3
# nodes, fewer than TreeWidth: there Slurm's tree fence is no job-wide
# barrier, docs/pmix.md; tests/bench/bench_fence.sh times the tree).
bare=$(run24 ./bare_fence "$iters")
bare_collect=$(run24 ./bare_fence "$iters" collect)
held=$(run24 ./bench_barrier "$iters" held)
percall=$(run24 ./bench_barrier $((iters / 4)) percall)
# the nodes see the work directory, not the checkout
cp "$here/gloo_barrier.py" . || exit 1
gloo=$(run24 "$PY" ./gloo_barrier.py "$iters")
cmd=$(srun --mpi=pmix -N3 --ntasks-per-node=8 --train-barrier=60 bash -c '
	"$0" barrier || exit 1
	t0=$(date +%s%N)
	for i in $(seq 20); do "$0" barrier || exit 1; done
	[ "$SLURM_PROCID" = 0 ] && echo "$(( ($(date +%s%N) - t0) / 20000 ))"' "$tool" 2>/dev/null | tail -1)
b=${bare%% *}
g=${gloo%% *}
row() { # NAME "median mean"
	local m=${2%% *}
	printf '   %-52s %9.1f %9.1f   %6s %6s\n' "$1" "$m" "${2##* }" "$(ratio "$m" "$b")" "$(ratio "$m" "$g")"
}
printf '2. one barrier over 24 ranks on 3 nodes, %d iterations after warm-up, rank 0\n' "$iters"
printf '   %-52s %9s %9s   %6s %6s\n' "" "median us" "mean us" "/fence" "/gloo"
row "bare PMIx_Fence, no data, ring (the baseline)" "$bare"
row "bare PMIx_Fence collecting data" "$bare_collect"
row "trainenv_barrier() in process, session held" "$held"
row "trainenv_barrier() in process, PMIx opened per call" "$percall"
row "gloo torch.distributed.barrier()" "$gloo"
row "'trainenv barrier' command (a process per call)" "$cmd $cmd"
echo

# ---------------------------------------------------------------- 3. scaling
printf '3. growth: trainenv_barrier() in process (session held) vs bare fence, median us\n'
printf '   %-22s %10s %10s %8s\n' "nodes x ranks/node" "trainenv" "fence" "ratio"
for cfg in "1 2" "1 8" "3 1" "3 2" "3 4" "3 8"; do
	set -- $cfg
	t=$(srun --mpi=pmix -N"$1" --ntasks-per-node="$2" ./bench_barrier "$iters" held 2>/dev/null | tail -1)
	f=$(srun --mpi=pmix -N"$1" --ntasks-per-node="$2" ./bare_fence "$iters" 2>/dev/null | tail -1)
	printf '   %-22s %10.1f %10.1f %8s\n' "$1 x $2 = $(($1 * $2)) ranks" "${t%% *}" "${f%% *}" "$(ratio "${t%% *}" "${f%% *}")"
done
