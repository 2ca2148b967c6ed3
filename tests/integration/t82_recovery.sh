#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 15, recovery, on the real cluster with batch jobs:
#  (a) --train-requeue=2: a 2-node job on n1,n2 whose n1 fails its GPU
#      pre-flight (test hook) is requeued without n1, runs again on n2,n3
#      and completes; scontrol shows Restarts=1 and ExcNodeList=n1; the
#      output has the requeue line (--open-mode=append keeps both runs) and
#      the tasks of the restart see TRAINENV_RESTART=1 and the exclusion;
#  (b) a program's own error is not requeued, and says why;
#  (c) the budget: --train-requeue=1 with two failing nodes stops after one
#      restart, with the line;
#  (d) the progress guard (requeue-on=any, a checkpoint directory that never
#      changes): the third failure stops the requeues, srun exits with 93;
#  (e) --train-time-signal=USR1@100 in a 2-minute job: the Python USR1
#      handler runs about 20 s in, long before the limit;
#  (f) issue 25, items 9 and 10, as user nobody, with an Epilog that keeps
#      the job completing 4 s: srun pauses 3 s after the requeue (test hook
#      TRAINENV_TEST_REQUEUE_PAUSE): the job, watched every 0.1 s, is never
#      eligible (pending or completing, not held) without ExcNodeList=n1:
#      it is requeued held, then excluded, then released by its owner; it
#      never runs on n1 again; the progress guard, whose state in the
#      sticky directory is root's, says it cannot save its own;
#  (g) rank 0's checkpoint probe is mode 0600 while it exists.
# The requeued job would wait Slurm's credential window (121 s) before it
# runs again: the test moves its start time to 3 s from now (scontrol, as
# root). Not to now: slurmd refuses a batch credential no newer than the
# requeue's revocation of the old one, and the job then fails.
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

plan 49

# Our own cluster: the Epilog of (f) (a staged file every node can read).
unset TE_CLUSTER_DIR
export TE_SLURM_CONF_EXTRA="Epilog=$TE_SRCDIR/tests/lib/t82_epilog.sh"
cluster_up --nodes 3
ok $? "cluster is up" || bail_out "no cluster"
te_build_init
lstopo-no-graphics --of xml --whole-io - >here.xml 2>/dev/null &&
	"$here/../lib/add_gpus.py" here.xml gpus.xml 2
ok $? "this machine's topology exported, fake GPUs added"
plug() { set_plugstack "required $plugin helper-dir=$builddir test-hooks=on bind-topology=$TE_WORK/gpus.xml $*"; }
plug

submit() { # SBATCH ARGS...: prints the job id
	sbatch --parsable "$@" | cut -d';' -f1
}

# ================================================================ (a)
if te_no_mpi_pmix; then
	skip "$TE_WHY" 11
else
cat >job_a.sh <<'EOF'
#!/bin/bash
echo "run on $SLURM_JOB_NODELIST"
srun --mpi=pmix --ntasks-per-node=1 --train-preflight=on --train-launcher=task \
	sh -c 'echo "ran $RANK $SLURMD_NODENAME restart=${TRAINENV_RESTART:-none} excluded=${TRAINENV_EXCLUDED_NODES:-none}"'
EOF
id=$(TRAINENV_TEST_PREFLIGHT_FAIL="n1:out of memory" CUDA_VISIBLE_DEVICES=0,1 \
	submit -N2 -t 5 --open-mode=append -o "$TE_WORK/a.out" --train-requeue=2 job_a.sh)
ok $? "a 2-node batch job with --train-requeue=2 is queued ($id)"
restart_now "$id" 1 60
ok $? "n1 fails its pre-flight: the job is requeued (pending, Restarts=1)" || diag "$(cat a.out)"
state=$(wait_job_done "$id" 90)
is "$state" COMPLETED "the restart completes"
out=$(cat a.out)
like "$out" 'run on n\[1-2\]' "the first run was on n1,n2" || diag "$out"
like "$out" '(^|\n)trainenv: requeue: node n1 failed: rank 0 failed its check before training \(exit code 75\); the job is requeued without n1 \(restart 1 of 2\)' \
	"the output names the node, why, and restart 1 of 2" || diag "$out"
like "$out" 'run on n\[2-3\]' "the restart runs on n2,n3"
like "$out" 'ran 0 n2 restart=1 excluded=n1' "rank 0 on n2 sees TRAINENV_RESTART=1 and the excluded n1"
like "$out" 'ran 1 n3 restart=1 excluded=n1' "rank 1 on n3 too"
like "$out" 'trainenv: restart 1 of this job; excluded nodes: n1' "the restart says so in its own output"
is "$(job_field "$id" Restarts)" 1 "scontrol show job: Restarts=1"
is "$(job_field "$id" ExcNodeList)" n1 "scontrol show job: ExcNodeList=n1"
fi

# The restart line alone when the output is truncated at the restart (Slurm's default).
# ================================================================ (b)
cat >job_b.sh <<'EOF'
#!/bin/bash
srun --ntasks-per-node=1 sh -c '[ "$RANK" = 1 ] && exit 3; exit 0'
EOF
id=$(submit -N2 -t 5 -o "$TE_WORK/b.out" --train-requeue=2 job_b.sh)
state=$(wait_job_done "$id" 60)
is "$state" FAILED "a program's own error: the job fails" || diag "$(cat b.out)"
like "$(cat b.out)" 'trainenv: requeue: not requeued: rank 1 exited with code 3: the program.s own error \(the site requeues node failures only\)' \
	"and says it is not requeued, and why" || diag "$(cat b.out)"
is "$(job_field "$id" Restarts)" 0 "  Restarts=0"

# ================================================================ (c)
# job_a.sh: under srun --mpi=pmix, as (a).
if te_no_mpi_pmix; then
	skip "$TE_WHY" 4
else
id=$(TRAINENV_TEST_PREFLIGHT_FAIL="n1:bad,n2:bad,n3:bad" CUDA_VISIBLE_DEVICES=0,1 \
	submit -N1 -t 5 --open-mode=append -o "$TE_WORK/c.out" --train-requeue=1 job_a.sh)
restart_now "$id" 1 60
ok $? "--train-requeue=1: the first failure is requeued"
state=$(wait_job_done "$id" 90)
is "$state" FAILED "the second failure ends the job" || diag "$(cat c.out)"
like "$(cat c.out)" 'trainenv: requeue: not requeued: node n[23] failed \(rank 0 failed its check before training \(exit code 75\)\), but the restart budget is spent \(1 of 1 restarts done\)' \
	"  with the budget's line" || diag "$(cat c.out)"
is "$(job_field "$id" Restarts)" 1 "  Restarts=1"
fi

# ================================================================ (d)
plug requeue-on=any requeue-no-progress=1
mkdir -p ckpt && echo weights >ckpt/step-100.pt && chmod -R a+rwX ckpt
# The restart leaves files that are not the job's progress: another user's,
# newer, and trainenv's own (issue 25, item 9): the guard still stops.
cat >job_d.sh <<'EOF'
#!/bin/bash
if [ "${SLURM_RESTART_COUNT:-0}" = 1 ]; then
	echo theirs >"$SLURM_SUBMIT_DIR/ckpt/step-200.pt" && chown nobody "$SLURM_SUBMIT_DIR/ckpt/step-200.pt"
	mkdir -p "$SLURM_SUBMIT_DIR/ckpt/theirs" && echo x >"$SLURM_SUBMIT_DIR/ckpt/theirs/step-300.pt" &&
		chown -R nobody "$SLURM_SUBMIT_DIR/ckpt/theirs" && chown root "$SLURM_SUBMIT_DIR/ckpt/theirs/step-300.pt"
	echo x >"$SLURM_SUBMIT_DIR/ckpt/.trainenv-progress.tmp-0123456789abcdef"
	echo x >"$SLURM_SUBMIT_DIR/ckpt/.trainenv-ckpt-1.0-0123456789abcdef"
fi
srun sh -c 'exit 4'
echo "srun exit $?"
EOF
id=$(submit -N1 -t 5 --open-mode=append -o "$TE_WORK/d.out" --train-requeue=5 \
	--train-checkpoint-dir="$TE_WORK/ckpt" job_d.sh)
restart_now "$id" 1 60
ok $? "requeue-on=any: a program error is requeued" || diag "$(cat d.out)"
state=$(wait_job_done "$id" 90)
is "$state" COMPLETED "the second run ends: the guard stopped the requeues (another user's newer file and trainenv's own are no progress)" || diag "$(cat d.out)"
[ "$(stat -c %U ckpt/step-200.pt)" = nobody ] && [ -e ckpt/.trainenv-ckpt-1.0-0123456789abcdef ]
ok $? "  the restart did leave those files" || diag "$(ls -la ckpt)"
like "$(cat d.out)" 'trainenv: requeue: stopped: the newest checkpoint in [^ ]*/ckpt did not change in 1 restart in a row \(site limit requeue-no-progress\); not requeued, srun exits with code 93' \
	"  and says why" || diag "$(cat d.out)"
like "$(cat d.out)" 'srun exit 93' "  srun exits with 93"
is "$(job_field "$id" Restarts)" 1 "  Restarts=1"
like "$(cat ckpt/.trainenv-progress)" "^trainenv-progress 1 $id 1 [0-9]+ 1$" "  the guard's state, in the checkpoint directory"
plug

# ================================================================ (e)
cat >job_e.py <<'EOF'
import signal, sys, time
t0 = time.time()
def on_usr1(sig, frame):
    print(f"USR1 handler ran {time.time() - t0:.0f} s in", flush=True)
    sys.exit(0)
signal.signal(signal.SIGUSR1, on_usr1)
time.sleep(200)
print("no signal", flush=True)
EOF
cat >job_e.sh <<EOF
#!/bin/bash
srun --train-time-signal=USR1@100 $PY $TE_WORK/job_e.py
EOF
te_seconds eval 'id=$(submit -N1 -t 2 -o "$TE_WORK/e.out" job_e.sh); state=$(wait_job_done "$id" 150)'
is "$state" COMPLETED "--train-time-signal=USR1@100 in a 2-minute job: it completes" || diag "$(cat e.out)"
like "$(cat e.out)" 'USR1 handler ran (1[5-9]|2[0-9]) s in' "the Python USR1 handler ran about 20 s in" || diag "$(cat e.out)"
like "$(cat e.out)" 'trainenv: time-signal: sent SIGUSR1 to the step.s tasks, 100 s before the job.s time limit' "  srun said so"
awk -v t="$TE_SECONDS" 'BEGIN { exit !(t < 60) }'
ok $? "  the job ended in $TE_SECONDS s, long before its limit"

# A site default gives way to the job's own --signal; --train-explain says which.
plug time-signal=USR1@100
out=$(te_srun -t 60 -N1 -t 2 --train-explain true 2>&1)
like "$out" 'trainenv: time-signal: SIGUSR1 to every task at [0-9:]+, 100 s before the job.s time limit' \
	"explain: the site's time signal and when it is due" || diag "$out"
out=$(te_srun -t 60 -N1 -t 2 --signal=USR2@100 --train-explain true 2>&1)
like "$out" 'trainenv: time-signal: not armed: the job has its own --signal' \
	"a job's own --signal wins over the site default" || diag "$out"
plug

# ================================================================ (f)
# Issue 25, item 10: no moment in which the requeued job could start again
# on the node it excludes. Item 9: the guard says when it cannot save.
plug requeue-no-progress=3
# job_a.sh: under srun --mpi=pmix, as (a).
if te_no_mpi_pmix; then
	skip "$TE_WHY" 14
else
fdir=$TE_WORK/f && mkdir -p "$fdir/ckpt" && chmod 777 "$fdir" && chmod 1777 "$fdir/ckpt"
echo "root's" >"$fdir/ckpt/.trainenv-progress"	# nobody cannot replace it (sticky)
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
id=$(TRAINENV_TEST_PREFLIGHT_FAIL="n1:out of memory" CUDA_VISIBLE_DEVICES=0,1 TRAINENV_TEST_REQUEUE_PAUSE=3 \
	as_nobody sbatch --parsable -N2 -t 5 --open-mode=append -o "$fdir/out" --train-requeue=2 \
	--train-checkpoint-dir="$fdir/ckpt" job_a.sh | cut -d';' -f1)
ok $? "user nobody queues a 2-node batch job with --train-requeue=2 ($id)"
# Every 0.1 s: state, reason, restarts, excluded nodes (until it runs again).
: >"$fdir/seen"
moved=0
for ((i = 0; i < 900; i++)); do
	line=$(timeout 10 scontrol show job "$id" 2>/dev/null | tr ' ' '\n' |
		grep -E '^(Priority|JobState|Reason|Restarts|ExcNodeList|StartTime)=' | tr '\n' ' ')
	echo "$line" >>"$fdir/seen"
	case $line in
	# Once pending (Slurm changes no start time of a completing job),
	# its start 3 s from now, not after the requeue's credential window.
	*JobState=PENDING*Restarts=1*)
		if [ $moved = 0 ]; then
			timeout 10 scontrol update jobid="$id" StartTime=now+3 && moved=1
		fi ;;
	*JobState=RUNNING*Restarts=1* | *JobState=COMPLETED* | *JobState=FAILED*) break ;;
	esac
	sleep 0.1
done
# Held: Priority=0. Eligible: pending or still completing, not held.
seen() { awk "$1" "$fdir/seen"; }
held='/Priority=0 / && /Restarts=1 /'
eligible='/JobState=(PENDING|COMPLETING) / && !/Priority=0 / && /Restarts=1 /'
[ -n "$(seen "$held")" ]
ok $? "the requeue holds the job (Priority=0, seen while srun pauses)" || diag "$(uniq "$fdir/seen")"
[ -z "$(seen "$eligible && !/ExcNodeList=n1 /")" ]
ok $? "never eligible again without ExcNodeList=n1" || diag "$(uniq "$fdir/seen")"
[ -n "$(seen "$eligible && /ExcNodeList=n1 /")" ]
ok $? "  released by its owner with it" || diag "$(uniq "$fdir/seen")"
state=$(wait_job_done "$id" 90)
is "$state" COMPLETED "nobody's job is released by its owner and completes" || diag "$(cat "$fdir/out")"
out=$(cat "$fdir/out")
like "$out" 'trainenv: requeue: node n1 failed: rank 0 failed its check before training \(exit code 75\); the job is requeued without n1 \(restart 1 of 2\)' \
	"  the requeue line" || diag "$out"
like "$(printf '%s\n' "$out" | grep '^run on' | tr '\n' ' ')" '^run on n\[1-2\] run on n\[2-3\] $' \
	"  first on n1,n2, then on n2,n3 (and only these two runs)" || diag "$out"
! printf '%s\n' "$out" | grep -q 'ran [01] n1 restart=1'
ok $? "  no rank of the restart on n1"
is "$(job_field "$id" ExcNodeList)" n1 "  ExcNodeList=n1"
is "$(job_field "$id" Restarts)" 1 "  Restarts=1"
! printf '%s\n' "$out" | grep -Eq 'requeue: the job was|refused'
ok $? "  srun says no refusal" || diag "$out"
like "$out" "trainenv: warning: requeue: cannot save the progress guard's state in $fdir/ckpt/.trainenv-progress: Operation not permitted; the next restart does not know this one's checkpoint" \
	"the guard says it cannot save its state (root's file in the sticky directory)" || diag "$out"
is "$(cat "$fdir/ckpt/.trainenv-progress")" "root's" "  root's file is untouched"
is "$(find "$fdir/ckpt" -name '.trainenv-progress.*' | wc -l)" 0 "  and no temporary file is left"
fi
plug

# ================================================================ (g)
# Rank 0's checkpoint probe, while n3 is 5 s late: only its user reads it.
if te_no_mpi_pmix; then
	skip "$TE_WHY" 2
else
mkdir -p "$TE_WORK/g" && chmod 1777 "$TE_WORK/g"
(TRAINENV_TEST_DELAY=n3:5 te_srun -t 60 --mpi=pmix -N3 --ntasks-per-node=2 --train-barrier=20 \
	--train-checkpoint-dir="$TE_WORK/g" true >"$TE_WORK/g.out" 2>&1) &
modes=
for ((i = 0; i < 100; i++)); do
	modes=$(find "$TE_WORK/g" -name '.trainenv-ckpt-*' -printf '%m %u\n' 2>/dev/null)
	[ -n "$modes" ] && break
	sleep 0.05
done
wait
is "$modes" "600 root" "rank 0's probe file is mode 0600" || diag "$(cat "$TE_WORK/g.out")"
is "$(ls -A "$TE_WORK/g")" "" "  and is removed after"
fi
