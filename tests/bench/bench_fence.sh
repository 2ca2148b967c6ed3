#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Benchmark (not a test): Slurm's tree fence against its ring on the same
# nodes, at or above TreeWidth (a local cluster of 52 namespaced nodes by
# default, TreeWidth left at Slurm's default 50, so the tree is a job-wide
# barrier there; tests/integration/t55_fence_scale.sh checks that). In
# long-lived processes after warm-up, rank 0's median and mean per call:
#  - a bare PMIx_Fence without data and one collecting data, with
#    SLURM_PMIX_FENCE=tree and =ring (the user's value, which trainenv keeps
#    from TreeWidth nodes on);
#  - trainenv_barrier() with its session held: the fence trainenv chooses
#    for the step (tree) against the ring forced by the user.
# Each figure is the median over --runs steps, tree and ring interleaved;
# the ratio is ring / tree of the same run.
# Usage: tests/bench/bench_fence.sh [--nodes N] [--runs N] [--iters N]
#        [--ranks-per-node N]
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/pmix_common.sh
. "$here/../lib/pmix_common.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/bench_pmix_common.sh
. "$here/../lib/bench_pmix_common.sh"

nodes=52 runs=3 iters=100 rpn=1
while [ $# -gt 0 ]; do
	case $1 in
	--nodes) nodes=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--iters) iters=$2; shift 2 ;;
	--ranks-per-node) rpn=$2; shift 2 ;;
	*) echo "usage: $0 [--nodes N] [--runs N] [--iters N] [--ranks-per-node N]" >&2; exit 2 ;;
	esac
done

cluster_up --nodes "$nodes" >/dev/null || { echo "no cluster of $nodes nodes" >&2; exit 1; }
bench_pmix_setup
tw=$(timeout 30 scontrol show config | awk '$1 == "TreeWidth" { print $3 }')

# FENCE PROGRAM ARGS...: rank 0's "median_us mean_us"; FENCE "auto" leaves
# SLURM_PMIX_FENCE to trainenv. Checks which fence the step really had.
step() {
	local fence=$1 out got
	shift
	if [ "$fence" = auto ]; then
		out=$(env -u SLURM_PMIX_FENCE srun --mpi=pmix -N"$nodes" --ntasks-per-node="$rpn" \
			sh -c 'echo "fence $SLURM_PMIX_FENCE"; exec "$@"' sh "$@" 2>/dev/null)
	else
		out=$(SLURM_PMIX_FENCE=$fence srun --mpi=pmix -N"$nodes" --ntasks-per-node="$rpn" \
			sh -c 'echo "fence $SLURM_PMIX_FENCE"; exec "$@"' sh "$@" 2>/dev/null)
	fi
	got=$(printf '%s\n' "$out" | awk '$1 == "fence" { print $2 }' | sort -u | tr '\n' ' ')
	[ "$fence" = auto ] || [ "$got" = "$fence " ] || echo "# the step ran with fence '$got', not $fence" >&2
	printf '%s\n' "$out" | grep -v '^fence ' | tail -1
}

echo "Slurm tree vs ring fence: $nodes nodes x $rpn ranks, TreeWidth $tw ($(nproc) CPUs on this machine)"
echo "rank 0, $iters calls per step after 10 of warm-up; median over $runs steps"
echo
printf '   %-44s %12s %12s %12s %12s %7s\n' "" "tree med us" "tree mean" "ring med us" "ring mean" "ring/tree"
row() { # NAME PROGRAM ARGS...: tree (or auto) against ring
	local name=$1 tf=tree r
	shift
	[ "$1" = --auto ] && { tf=auto; shift; }
	: >t.med; : >t.mean; : >r.med; : >r.mean
	for _ in $(seq "$runs"); do
		r=$(step "$tf" "$@"); echo "${r%% *}" >>t.med; echo "${r##* }" >>t.mean
		r=$(step ring "$@"); echo "${r%% *}" >>r.med; echo "${r##* }" >>r.mean
	done
	local tm rm
	tm=$(median <t.med); rm=$(median <r.med)
	printf '   %-44s %12.1f %12.1f %12.1f %12.1f %6sx\n' "$name" "$tm" "$(median <t.mean)" \
		"$rm" "$(median <r.mean)" "$(ratio "$rm" "$tm")"
}
row "bare PMIx_Fence, no data" ./bare_fence "$iters"
row "bare PMIx_Fence collecting data" ./bare_fence "$iters" collect
row "trainenv_barrier(), session held (auto)" --auto ./bench_barrier "$iters" held
