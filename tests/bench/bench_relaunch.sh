#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Restart inside the allocation against today's requeue (issue 35: goal at
# most 30 s here and at least 10x faster than the requeue), on one local
# 4-node cluster in the same run: a 3-node step whose n2 fails its GPU
# pre-flight (test hook) is started again
#  - by the relaunch (#SBATCH --train-spares=1): srun's shield starts it on
#    n1,n3,n4 in the same job;
#  - by the requeue (--train-requeue=1): the job is requeued without n2 and
#    waits Slurm's credential window (AuthInfo cred_expire, 120 s by
#    default) before it runs again.
# Each time is from the failure (the first failure report's wall clock,
# "exited with code 75 at ...") to the restarted step's rank 0 past the
# launch barrier (the program's first line, its wall clock). Prints both
# and their ratio; not a test. Takes about 3 minutes (the requeue's
# window). Usage: tests/bench/bench_relaunch.sh (as root, from a build
# tree or with TE_BUILDDIR).
# Single-quoted $VARS are for the jobs' shells:
# shellcheck disable=SC2016
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"

unset TE_CLUSTER_DIR
cluster_up --nodes 4 || bail_out "no cluster"
te_build_init
lstopo-no-graphics --of xml --whole-io - >here.xml 2>/dev/null &&
	"$here/../lib/add_gpus.py" here.xml gpus.xml 2
set_plugstack "required $plugin helper-dir=$builddir test-hooks=on bind-topology=$TE_WORK/gpus.xml"

cat >job.sh <<'EOF'
#!/bin/bash
srun --mpi=pmix -N3 --ntasks-per-node=1 --train-preflight=on --train-launcher=task \
	sh -c '[ "$RANK" = 0 ] && echo "started restart=${TRAINENV_RESTART:-0} at $(date +%s.%N)"; true'
EOF

# FILE SECS: waits for the restarted rank 0's line
wait_restarted() {
	local end=$(($(date +%s) + $2))
	until grep -q 'started restart=1' "$1" 2>/dev/null; do
		[ "$(date +%s)" -lt "$end" ] || return 1
		sleep 0.5
	done
}

# FILE: seconds from the failure report to the restarted rank 0
gap() {
	local fail start
	fail=$(grep -m1 -oE 'exited with code 75 at [0-9-]+ [0-9:]+[.][0-9]+' "$1" | sed 's/.* at //')
	start=$(grep -oE 'started restart=1 at [0-9.]+' "$1" | tail -n 1 | awk '{ print $NF }')
	[ -n "$fail" ] && [ -n "$start" ] || { echo "?"; return 1; }
	awk -v a="$(date -d "$fail" +%s.%N)" -v b="$start" 'BEGIN { printf "%.1f", b - a }'
}

id=$(TRAINENV_TEST_PREFLIGHT_FAIL="n2:bench" CUDA_VISIBLE_DEVICES=0,1 \
	sbatch --parsable -N4 -t 10 --train-spares=1 -o "$TE_WORK/relaunch.out" job.sh)
wait_restarted relaunch.out 120
relaunch=$(gap relaunch.out) || diag "$(cat relaunch.out)"

id=$(TRAINENV_TEST_PREFLIGHT_FAIL="n2:bench" CUDA_VISIBLE_DEVICES=0,1 \
	sbatch --parsable -N3 -t 10 --train-requeue=1 --open-mode=append -o "$TE_WORK/requeue.out" job.sh)
wait_restarted requeue.out 400
requeue=$(gap requeue.out) || diag "$(cat requeue.out)"

echo "bench_relaunch: from the failure to the restarted step's rank 0 past the barrier (4 nodes, Slurm $(sinfo -V | awk '{ print $2 }'))"
echo "  relaunch in the allocation (--train-spares=1): $relaunch s"
echo "  requeue without the node (--train-requeue=1):  $requeue s (Slurm's credential window included)"
awk -v a="$relaunch" -v b="$requeue" 'BEGIN { if (a > 0 && b > 0) printf "  ratio requeue/relaunch: %.0fx\n", b / a }'
