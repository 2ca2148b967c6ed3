#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 36 item 1, last part: a named straggler is left out at the job's
# next checkpoint through the relaunch (--train-straggler-exclude=
# checkpoint), on the real cluster with the tests' stand-in libnccl
# (t92's training loop, strag_train.py, n2's ranks 40 ms late a step):
#  (a) sbatch -N4 with #SBATCH --train-spares=1, srun on 3 nodes x 2 ranks
#      with windows of 2 s, 2 in a row, the checkpoint directory written
#      by rank 0 every 2 s: srun names n2, says it is excluded at the next
#      checkpoint, ends the step once a newer checkpoint is there, and the
#      relaunch starts it again without n2 (n1, n3 and the spare n4), where
#      no node is late and the step runs to its end; the job completes,
#      the step's record says the exclusion and the relaunch's why;
#  (b) exclusion on without spares (srun's own allocation): one line why
#      n2 is not excluded, and the step runs to its end unchanged;
#  (c) no spare left, --train-shrink=yes: sbatch -N3 with one spare, n2
#      and n3 late: the first run (n1, n2) leaves n2 out for the spare n3;
#      the relaunched run (n1, n3) names n3, which is excluded all the
#      same, and the step starts again on n1 alone, where it ends.
# Single-quoted $VARS are for the jobs' shells:
# shellcheck disable=SC2016
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"

te_build_init
standin=$TE_BUILDDIR/tests/integration/.libs/libnccl-standin-prof.so
prof=$TE_BUILDDIR/.libs/libnccl-profiler-trainenv.so
if [ ! -f "$standin" ] || [ ! -f "$prof" ]; then
	echo "1..0 # SKIP build the check programs first (make check-unit): no $standin or $prof"
	exit 0
fi

plan 26

cluster_up --nodes 4 || bail_out "no cluster"
mkdir -m 1777 rec bar ck
set_plugstack "required $plugin helper-dir=$builddir record-dir=$TE_WORK/rec lib-dir=$TE_BUILDDIR/.libs"

cp "$TE_SRCDIR/tests/integration/strag_train.py" strag.py
export STANDIN_LIB=$standin STANDIN_CHANNELS=1 STRAG_SAY=1

# The batch script of (a) and (c): one spare, srun on the others with the
# exclusion on, checkpoints in $TE_WORK/CK, each run of the step its own
# barrier directory under $TE_WORK/BAR (a step ended midway leaves its last
# files there), ITERS steps of the loop, windows of WINDOW s.
job_script() { # FILE CK BAR ITERS WINDOW
	cat >"$1" <<EOF
#!/bin/bash
#SBATCH --train-spares=1
srun --ntasks-per-node=2 --train-straggler=30 --train-straggler-window=$5 \\
	--train-straggler-windows=2 --train-straggler-exclude=checkpoint \\
	--train-checkpoint-dir="\$TE_WORK/$2" \\
	sh -c 'd=\$TE_WORK/$3/\$SLURM_STEP_ID; mkdir -p "\$d" && STANDIN_BARRIER_DIR=\$d exec /usr/bin/python3 "\$TE_WORK/strag.py" $4 0.01 0.04'
echo "batch done"
EOF
}

# ================================================================ (a)
job_script job_a.sh ck bar 400 2
t0=$(date +%s)
export TE_WORK
id=$(SLOW_NODE=n2 STRAG_CKPT_DIR=$TE_WORK/ck STRAG_CKPT_EVERY=2 \
	sbatch --parsable -N4 --ntasks-per-node=2 -t 5 -o "$TE_WORK/a.out" job_a.sh | cut -d';' -f1)
state=$(wait_job_done "$id" 150)
is "$state" COMPLETED "(a) sbatch -N4 --train-spares=1, n2 late, exclusion at the checkpoint: the job completes ($(($(date +%s) - t0)) s)" ||
	diag "$(cat a.out)"
out=$(cat a.out)
like "$out" "(^|\n)trainenv: straggler: n2 \\(ranks 2-3\\) waited least in all_reduce of communicator [0-9a-f]{16}: " \
	"srun names n2" || diag "$out"
is "$(grep -c '^trainenv: straggler: n[0-9]* (ranks' a.out)" 1 "  once: the relaunched step names no node"
n_name=$(grep -n '^trainenv: straggler: n2 (ranks' a.out | head -1 | cut -d: -f1)
n_excl=$(grep -nFx "trainenv: straggler: n2 is excluded at the next checkpoint in $TE_WORK/ck" a.out | head -1 | cut -d: -f1)
[ -n "$n_name" ] && [ -n "$n_excl" ] && [ "$n_excl" -gt "$n_name" ]
ok $? "  then says it is excluded at the next checkpoint, in the directory" || diag "$out"
like "$out" "(^|\n)trainenv: straggler: a checkpoint in $TE_WORK/ck is newer than the naming of n2: srun ends step $id.0 to start it again without n2" \
	"srun ends the step once a newer checkpoint is there"
like "$out" "(^|\n)trainenv: relaunch: node n2 left out: straggler: n2 \\(ranks 2-3\\) waited least .*; the step starts again in this allocation without n2, on 3 nodes with 6 tasks \\(restart 1 of 1\\)" \
	"the step's end blames n2, the straggler, and relaunches without it" || diag "$(grep 'relaunch' a.out)"
like "$out" "(^|\n)trainenv: relaunch: restart 1: the step runs without n2; spares left: none" \
	"  the relaunched srun says so"
hosts0=$(sed -n 's/^rank [0-9]* of 6 on \(n[0-9]*\) restart 0$/\1/p' a.out | sort -u | tr '\n' ' ')
hosts1=$(sed -n 's/^rank [0-9]* of 6 on \(n[0-9]*\) restart 1$/\1/p' a.out | sort -u | tr '\n' ' ')
is "$hosts0" "n1 n2 n3 " "  the first run on n1-n3 (n4 the spare)"
is "$hosts1" "n1 n3 n4 " "  the relaunched ranks on n1, n3 and the spare n4, none on n2"
is "$(grep -c '^done rank [0-9] restart 1$' a.out):$(grep -c '^done rank [0-9] restart 0$' a.out)" "6:0" \
	"  the relaunched step runs to its end; the first was ended" || diag "$out"
# the checkpoint that ended the step was written after the naming
ls ck/ckpt_r0_* >/dev/null 2>&1
ok $? "  rank 0 of the first run wrote checkpoints"
like "$out" "batch done" "the batch script goes on after the step"
rec0=$(cat "rec/0/$id/trainenv.0.json" 2>&1)
like "$rec0" "\"straggler_excluded\":\\{\"node\":\"n2\",\"dir\":\"$TE_WORK/ck\"\\}" \
	"step 0's record says it ended to leave the straggler n2 out" || diag "$rec0"
like "$rec0" '"restart":\{"verdict":"relaunch","why":"relaunch: node n2 left out: straggler: n2 \(ranks 2-3\)' \
	"  and the relaunch's verdict, for the straggler" || diag "$rec0"

# ================================================================ (b)
mkdir -m 1777 bar.b
t0=$(date +%s)
STANDIN_BARRIER_DIR=$TE_WORK/bar.b SLOW_NODE=n2 \
	te_srun -t 90 -N3 --ntasks-per-node=2 --train-straggler=30 \
	--train-straggler-window=1 --train-straggler-windows=2 \
	--train-straggler-exclude=checkpoint --train-checkpoint-dir="$TE_WORK/ck" \
	/usr/bin/python3 strag.py 100 0.01 0.04 >b.out 2>b.err
rc=$?
is "$rc:$(grep -c '^done rank' b.out):$(grep -c 'srun ends step' b.err)" "0:6:0" \
	"(b) exclusion on, no spares: the step runs to its end, every rank ($(($(date +%s) - t0)) s)" ||
	diag "$(cat b.err b.out)"
like "$(cat b.err)" "(^|\n)trainenv: straggler: n2 \\(ranks 2-3\\) waited least" \
	"  srun names n2" || diag "$(cat b.err)"
like "$(cat b.err)" "(^|\n)trainenv: straggler: n2 is not excluded: the job has no spare node to put in its place \\(--train-spares\\)(\n|$)" \
	"  and says in one line why it is not excluded" || diag "$(cat b.err)"
is "$(grep -c 'is not excluded' b.err)" 1 "  once"

# ================================================================ (c)
# No spare left, --train-shrink=yes: the relaunch's own rule for a failed
# node (one fewer node, the same tasks a node) serves a straggler too.
mkdir -m 1777 bar.c ck.c
job_script job_c.sh ck.c bar.c 300 1
t0=$(date +%s)
id=$(SLOW_NODE=n2,n3 STRAG_CKPT_DIR=$TE_WORK/ck.c STRAG_CKPT_EVERY=2 \
	sbatch --parsable -N3 --ntasks-per-node=2 -t 5 --train-requeue=2 \
	--train-shrink=yes -o "$TE_WORK/c.out" job_c.sh | cut -d';' -f1)
state=$(wait_job_done "$id" 150)
is "$state" COMPLETED "(c) sbatch -N3 --train-spares=1 --train-shrink=yes, n2 and n3 late: the job completes ($(($(date +%s) - t0)) s)" ||
	diag "$(cat c.out)"
out=$(cat c.out)
like "$out" "(^|\n)trainenv: straggler: n2 is excluded at the next checkpoint in $TE_WORK/ck.c(\n|$)" \
	"  the first run leaves n2 out for the spare n3" || diag "$out"
like "$out" "(^|\n)trainenv: straggler: n3 is excluded at the next checkpoint in $TE_WORK/ck.c; no spare is left: the step starts again on the 1 node left \\(--train-shrink\\)(\n|$)" \
	"  the relaunched run names n3: excluded, no spare left, the step shrinks" || diag "$out"
like "$out" "(^|\n)trainenv: relaunch: node n3 left out: straggler: n3 \\(ranks 2-3\\) waited least .*; no spare is left: the step starts again in this allocation without n3, on the 1 node left with 2 tasks \\(--train-shrink; restart 2 of 2\\)" \
	"  the relaunch leaves n3 out and runs on the node left" || diag "$(grep 'relaunch' c.out)"
hosts1=$(sed -n 's/^rank [0-9]* of 4 on \(n[0-9]*\) restart 1$/\1/p' c.out | sort -u | tr '\n' ' ')
hosts2=$(sed -n 's/^rank [0-9]* of 2 on \(n[0-9]*\) restart 2$/\1/p' c.out | sort -u | tr '\n' ' ')
is "$hosts1" "n1 n3 " "  restart 1 on n1 and the spare n3"
is "$hosts2" "n1 " "  restart 2 on n1 alone, 2 ranks"
is "$(grep -c '^done rank [0-9] restart 2$' c.out):$(grep -c '^done rank [0-9] restart [01]$' c.out)" "2:0" \
	"  the last run ends; the two before were ended" || diag "$out"
like "$out" "batch done" "  the batch script goes on"
