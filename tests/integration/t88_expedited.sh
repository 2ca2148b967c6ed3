#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 35 item 5, Slurm's expedited requeue (25.11+, sbatch
# --requeue=expedite with SlurmctldParameters=enable_expedited_requeue)
# under --train-requeue, on the real cluster with batch jobs:
#  (a) a 2-node expedited job on n1,n2 whose n1 fails its GPU pre-flight
#      (test hook) is requeued without n1 by trainenv and runs again on
#      n2,n3 with no credential window: nothing moves its start time (t82
#      has to: 121 s there), the restart begins within 30 s; Restarts=1,
#      ExcNodeList=n1; the line says the requeue is Slurm's expedited one;
#  (b) the program's own error in an expedited job: trainenv does not
#      requeue, and says in one line that Slurm requeues the job held
#      when the batch script exits non-zero; the job is held, not run.
# Skipped on Slurm before 25.11, which has no expedited requeue.
# Single-quoted $VARS are for the jobs' shells:
# shellcheck disable=SC2016
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/pmix_common.sh
. "$here/../lib/pmix_common.sh"

unset TE_CLUSTER_DIR
export TE_SLURM_CONF_EXTRA="SlurmctldParameters=enable_expedited_requeue"
cluster_up --nodes 3 || bail_out "no cluster"
# sinfo -V needs a configuration (22.05's): the cluster's
ver=$(sinfo -V 2>/dev/null | awk '{ print $2 }')
case "$ver" in
2[0-4].* | 25.0[0-9].* | "")
	te_skip_all "Slurm ${ver:-of unknown version}: expedited requeue (sbatch --requeue=expedite) is Slurm 25.11's" ;;
esac

plan 13
te_build_init
lstopo-no-graphics --of xml --whole-io - >here.xml 2>/dev/null &&
	"$here/../lib/add_gpus.py" here.xml gpus.xml 2
set_plugstack "required $plugin helper-dir=$builddir test-hooks=on bind-topology=$TE_WORK/gpus.xml"

submit() { # SBATCH ARGS...: prints the job id
	sbatch --parsable "$@" | cut -d';' -f1
}

# ================================================================ (a)
if te_no_mpi_pmix; then
	skip "$TE_WHY" 8
else
cat >job_a.sh <<'EOF'
#!/bin/bash
echo "run on $SLURM_JOB_NODELIST"
srun --mpi=pmix --ntasks-per-node=1 --train-preflight=on --train-launcher=task \
	sh -c 'echo "ran $RANK $SLURMD_NODENAME restart=${TRAINENV_RESTART:-none} at $(date +%s.%N)"'
EOF
id=$(TRAINENV_TEST_PREFLIGHT_FAIL="n1:out of memory" CUDA_VISIBLE_DEVICES=0,1 \
	submit -N2 -t 5 --requeue=expedite --open-mode=append -o "$TE_WORK/a.out" --train-requeue=2 job_a.sh)
ok $? "a 2-node expedited batch job with --train-requeue=2 is queued ($id)"
state=$(wait_job_done "$id" 90)
is "$state" COMPLETED "the restart completes; nothing moved its start time"
out=$(cat a.out)
like "$out" 'run on n\[1-2\]' "the first run was on n1,n2" || diag "$out"
like "$out" '(^|\n)trainenv: requeue: node n1 failed: rank 0 failed its check before training \(exit code 75\); the job is requeued without n1 \(restart 1 of 2; Slurm'"'"'s expedited requeue: no credential window\)' \
	"the line names the node and the expedited requeue" || diag "$out"
like "$out" 'run on n\[2-3\]' "the restart runs on n2,n3"
is "$(job_field "$id" Restarts)" 1 "scontrol show job: Restarts=1"
is "$(job_field "$id" ExcNodeList)" n1 "scontrol show job: ExcNodeList=n1"
fail=$(grep -m1 -oE 'exited with code 75 at [0-9-]+ [0-9:]+[.][0-9]+' a.out | sed 's/.* at //')
start=$(grep -oE 'ran 0 n2 restart=1 at [0-9.]+' a.out | awk '{ print $NF }')
gap=$(awk -v a="$(date -d "$fail" +%s.%N 2>/dev/null)" -v b="$start" 'BEGIN { if (a > 0 && b > 0) printf "%.1f", b - a; else print "?" }')
awk -v g="$gap" 'BEGIN { exit !(g != "?" && g + 0 < 30) }'
ok $? "the restart's rank 0 ran $gap s after the failure (under 30 s; t82's requeue waits 121 s)"
fi

# ================================================================ (b)
cat >job_b.sh <<'EOF'
#!/bin/bash
srun --ntasks-per-node=1 sh -c '[ "$RANK" = 1 ] && exit 3; exit 0'
EOF
id=$(submit -N2 -t 5 --requeue=expedite -o "$TE_WORK/b.out" --train-requeue=2 job_b.sh)
ok $? "an expedited job whose rank 1 exits 3 is queued ($id)"
for ((i = 0; i < 150; i++)); do
	[ "$(job_field "$id" Restarts)" = 1 ] && [ "$(job_field "$id" JobState)" = PENDING ] && break
	sleep 0.2
done
out=$(cat b.out)
like "$out" '(^|\n)trainenv: requeue: not requeued: rank 1 exited with code 3: the program'"'"'s own error' \
	"trainenv does not requeue the program's own error" || diag "$out"
like "$out" '(^|\n)trainenv: requeue: Slurm'"'"'s expedited requeue \(--requeue=expedite\) requeues this job, held, when the batch script exits non-zero: `scancel '"$id"'` ends it' \
	"and says what Slurm's expedited requeue does next" || diag "$out"
like "$(job_field "$id" Reason)" '^job_requeued_in_held_state$' "Slurm holds the job: Reason=job_requeued_in_held_state (no epilog failed)" ||
	diag "$(scontrol show job "$id")"
scancel "$id"
state=$(wait_job_done "$id" 30)
is "$state" CANCELLED "scancel ends it"
