#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 35, restart inside the allocation, on the real cluster (4 nodes):
#  (a) sbatch -N4 with #SBATCH --train-spares=1: a step without a node count
#      runs on 3 nodes (the explain names the spare n4); n2 fails its GPU
#      pre-flight (test hook): srun says the relaunch line, its shield
#      starts the step again without n2 on n1,n3,n4 at once, in the same
#      job (Restarts=0, no requeue), the tasks see TRAINENV_RESTART=1,
#      TRAINENV_EXCLUDED_NODES=n2 and TRAINENV_FIRST_WORLD_SIZE=3, the job
#      completes, its comment keeps the relaunch, and the batch had --no-kill
#      implied (Slurm's NoKill is not shown: the job survives nothing here,
#      the line of (e) says when it is missing);
#  (b) the program's own error: not relaunched, one line, the job fails;
#  (c) a rank's "do not restart" (exit 93): stopped, one line;
#  (d) the budget: --train-spares=1 with n2 and n3 failing: one relaunch,
#      then no spare is left: the line says so (no requeue asked for);
#  (d2) --train-shrink=yes: then on the 2 nodes left, WORLD_SIZE 2;
#  (e) --train-spares on sbatch's command line: the warning that --no-kill
#      is missing; srun --pty: no relaunch, one line;
#  (f) srun --pty, srun -w: not relaunched, one line why;
#  (h) salloc + srun: the same relaunch in the shell's srun;
#  (i) torchrun per node (where this torch's torchrun can start);
#  (j) a rank killed by SIGBUS (the site's requeue-signals): relaunched;
#  (k) scancel while the step runs: no relaunch, nothing left;
#  (l) "save now": with --train-time-signal the ranks still running get its
#      signal at once when n3's rank dies of SIGBUS;
#  (m) --train-transient=42, no spares, a 3-node job: rank 1 exits 42 on the
#      first run only: the step runs again on the same 3 nodes, one line,
#      TRAINENV_RESTART=1, the verdict "relaunch-same" in the record and the
#      entry in the comment; an unlisted code (3): not relaunched, said;
#      42 on every run: one relaunch, then the budget (1) is spent, said;
#      an srun that makes its own allocation: not relaunched, said;
#  (g, last: it kills a node) a node lost mid-run (n3's slurmd and the step's processes there
#      killed, Slurm marks it down after SlurmdTimeout): the job, with
#      --no-kill implied, survives and the step is relaunched on the spare;
#      the time from the kill to the relaunched step's ranks is printed.
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

plan 76

# Our own cluster: (g) kills n3, and Slurm marks a node down after
# SlurmdTimeout (10 s here, 30 s on the shared cluster).
unset TE_CLUSTER_DIR
export TE_SLURM_CONF_EXTRA="SlurmdTimeout=10"
cluster_up --nodes 4
ok $? "cluster is up" || bail_out "no cluster"
te_build_init
lstopo-no-graphics --of xml --whole-io - >here.xml 2>/dev/null &&
	"$here/../lib/add_gpus.py" here.xml gpus.xml 2
ok $? "this machine's topology exported, fake GPUs added"
mkdir -m 1777 rec
set_plugstack "required $plugin helper-dir=$builddir test-hooks=on bind-topology=$TE_WORK/gpus.xml record-dir=$TE_WORK/rec"

unlike() { ! printf '%s\n' "$1" | grep -Eq "$2"; } # TEXT REGEX

submit() { # SBATCH ARGS...: prints the job id
	sbatch --parsable "$@" | cut -d';' -f1
}

# ================================================================ (a)
if te_no_mpi_pmix; then
	skip "$TE_WHY" 22
else
cat >job_a.sh <<'EOF'
#!/bin/bash
#SBATCH --train-spares=1
srun --mpi=pmix --ntasks-per-node=1 --train-preflight=on --train-launcher=task --train-explain \
	--train-checkpoint-dir="$PWD/ck" \
	sh -c 'echo "ran $RANK of $WORLD_SIZE $SLURMD_NODENAME step=$SLURM_STEP_ID restart=${TRAINENV_RESTART:-none} excluded=${TRAINENV_EXCLUDED_NODES:-none} first=${TRAINENV_FIRST_WORLD_SIZE:-none} internal=${TRAINENV_RELAUNCH_COUNT:-no}${TRAINENV_RELAUNCH_EXCLUDED:-no}"
	[ "$RANK" = 0 ] && python3 -c "import sys; sys.path.insert(0, \"$TE_SRCDIR/python\"); import trainenv as t; print(\"py\", t.restart_count(), t.excluded_nodes(), t.first_world_size())"; true'
echo "batch done"
EOF
mkdir -p ck && touch -d '-5 seconds' ck/step_100.pt # the newest checkpoint
id=$(TRAINENV_TEST_PREFLIGHT_FAIL="n2:out of memory" CUDA_VISIBLE_DEVICES=0,1 \
	submit -N4 -t 5 -o "$TE_WORK/a.out" job_a.sh)
ok $? "a 4-node batch job with #SBATCH --train-spares=1 is queued ($id)"
state=$(wait_job_done "$id" 120)
is "$state" COMPLETED "the job completes" || diag "$(cat a.out)"
out=$(cat a.out)
like "$out" 'trainenv: spares: n4 sits out of this step \(--train-spares=1\)' \
	"--train-explain names the spare n4" || diag "$out"
like "$out" 'trainenv: relaunch: node n2 failed: rank 1 failed its check before training \(exit code 75\); the step starts again in this allocation without n2, on 3 nodes with 3 tasks \(restart 1 of 1\)' \
	"srun names the node, why, and the relaunch" || diag "$out"
like "$out" 'trainenv: relaunch: restart 1: the step runs without n2; spares left: none' \
	"the relaunched srun says so"
like "$out" 'ran 0 of 3 n1 step=1 restart=1 excluded=n2 first=3 internal=nono' "rank 0 on n1, step 1, sees the restart, n2 excluded and the first world size (and not the shield's own variables)"
like "$out" 'ran 1 of 3 n3 step=1 restart=1' "rank 1 on n3: the spare's neighbour takes n2's rank"
like "$out" 'ran 2 of 3 n4 step=1 restart=1' "rank 2 on the spare n4"
unlike "$out" 'ran [0-9] of [0-9] n2 '
ok $? "no rank ran on n2"
like "$out" "py 1 \\['n2'\\] 3" "  the Python module: restart_count() 1, excluded_nodes() ['n2'], first_world_size() 3"
like "$out" 'batch done' "the batch script goes on after the step"
is "$(job_field "$id" Restarts)" 0 "scontrol show job: Restarts=0 (no requeue)"
like "$(scontrol show job "$id" | grep -o 'Comment=.*')" 'Comment=trainenv: relaunch 1 without n2' "the job's comment keeps the relaunch"
like "$(cat "rec/0/$id/trainenv.0.json" 2>&1)" '"restart":\{"verdict":"relaunch","why":"relaunch: node n2 failed: rank 1 failed' \
	"step 0's record keeps the verdict and its line"
like "$(cat "rec/0/$id/trainenv.0.json" 2>&1)" "\"checkpoint\":\\{\"dir\":\"$TE_WORK/ck\",\"newest\":$(stat -c %Y ck/step_100.pt)[.][0-9]{3}\\}" \
	"  and the checkpoint directory's newest file at the failure (--train-checkpoint-dir)"
like "$(cat "rec/0/$id/trainenv.0.json" 2>&1)" '"job_start":[0-9]+,' "  and the job's start"
unlike "$(cat "rec/0/$id/trainenv.1.json" 2>&1)" '"restart"'
ok $? "  step 1's record has none (it did not fail)"
like "$out" "trainenv: goodput: job $id: 2 steps \\(1 failed\\), 1 relaunch .*; wall [0-9.]+ s = training" \
	"the relaunched srun says the job's goodput at its end" || diag "$(grep goodput a.out)"
like "$(cat "rec/0/$id/trainenv.1.json" 2>&1)" '"skew_ms":[0-9]+,"passed":[0-9]+[.][0-9]{3}\}' \
	"  step 1's record says when its launch barrier passed"
rec=$("$builddir/trainenv" record "$id" --dir "$TE_WORK/rec" 2>&1)
like "$rec" "job $id: 2 steps \\(1 failed\\), 1 relaunch" "trainenv record: 2 steps, 1 failed, 1 relaunch" || diag "$rec"
like "$rec" "lost [0-9.]+ s \\([0-9.]+ s of it training after the newest checkpoint\\) \\+ other" \
	"  the lost time counts the training after the newest checkpoint" || diag "$rec"
# shellcheck disable=SC2001 # a regular expression
sed 's/ ([0-9.]* s of it training after the newest checkpoint)//' <<<"$rec" |
awk '/wall [0-9.]+ s = training/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9.]+$/ && $(i + 1) ~ /^s;?$/) v[++n] = $i }
	END { d = v[1] - v[2] - v[3] - v[4] - v[5]; exit !(n >= 5 && d < 0.002 && d > -0.002) }'
ok $? "  wall = training + initialisation + lost + other, to the millisecond" || diag "$rec"
fi

# ================================================================ (b)
cat >job_b.sh <<'EOF'
#!/bin/bash
#SBATCH --train-spares=1
srun --ntasks-per-node=1 sh -c '[ "$RANK" = 1 ] && exit 3; exit 0'
EOF
id=$(submit -N3 -t 5 -o "$TE_WORK/b.out" job_b.sh)
state=$(wait_job_done "$id" 60)
is "$state" FAILED "a program's own error: the job fails" || diag "$(cat b.out)"
like "$(cat b.out)" 'trainenv: relaunch: not relaunched: rank 1 exited with code 3: the program.s own error' \
	"and says it is not relaunched, and why" || diag "$(cat b.out)"
is "$(grep -c 'srun: ' b.out | tr -d ' ')$(grep -c 'relaunch: restart' b.out)" "$(grep -c 'srun: ' b.out | tr -d ' ')0" "  no second step"

# ================================================================ (c)
cat >job_c.sh <<'EOF'
#!/bin/bash
#SBATCH --train-spares=1
srun --ntasks-per-node=1 sh -c '[ "$RANK" = 1 ] && exit 93; exit 0'
EOF
id=$(submit -N3 -t 5 -o "$TE_WORK/c.out" job_c.sh)
state=$(wait_job_done "$id" 60)
is "$state" FAILED "exit 93: the job ends" || diag "$(cat c.out)"
like "$(cat c.out)" 'trainenv: relaunch: stopped: rank 1 exited with code 93: the program asked not to be restarted' \
	"  one line: the program asked not to be restarted" || diag "$(cat c.out)"

# ================================================================ (d)
if te_no_mpi_pmix; then
	skip "$TE_WHY" 5
else
id=$(TRAINENV_TEST_PREFLIGHT_FAIL="n2:bad,n3:bad" CUDA_VISIBLE_DEVICES=0,1 \
	submit -N4 -t 5 -o "$TE_WORK/d.out" --train-requeue=3 --no-requeue job_a.sh)
state=$(wait_job_done "$id" 120)
ok $? "n2 and n3 fail their pre-flight: the job ends ($state)" || diag "$(cat d.out)"
like "$(cat d.out)" 'relaunch: node n[23] failed.*without n[23], on 3 nodes with 3 tasks \(restart 1 of 3\)' "  the first failure is relaunched" || diag "$(cat d.out)"
like "$(cat d.out)" 'trainenv: relaunch: not relaunched: node n[23] failed \(rank [0-9] failed its check before training \(exit code 75\)\), but no spare node is left \(2 of the job.s nodes free for a step of 3\)' \
	"  the second: no spare left, said" || diag "$(cat d.out)"
like "$(cat d.out)" 'trainenv: requeue: not requeued: node n[23] failed \(.*\), but the job may not be requeued' \
	"  then today's requeue decides (here: --no-requeue)" || diag "$(cat d.out)"
is "$(grep -c 'relaunch: restart' d.out)" 1 "  one relaunch only"
fi

# ================================================================ (d2)
# --train-shrink=yes: n2 then n3 fail; the second relaunch runs on the two
# nodes left, WORLD_SIZE 2, the first run's 3 kept
if te_no_mpi_pmix; then
	skip "$TE_WHY" 3
else
id=$(TRAINENV_TEST_PREFLIGHT_FAIL="n2:bad,n3:bad" CUDA_VISIBLE_DEVICES=0,1 \
	submit -N4 -t 5 -o "$TE_WORK/d2.out" --train-requeue=3 --train-shrink=yes job_a.sh)
state=$(wait_job_done "$id" 120)
like "$(cat d2.out)" 'trainenv: relaunch: node n[23] failed: .*; no spare is left: the step starts again in this allocation without n[23], on the 2 nodes left with 2 tasks \(--train-shrink; restart 2 of 3\)' \
	"--train-shrink=yes: the second failure runs on the 2 nodes left ($state)" || diag "$(cat d2.out)"
like "$(cat d2.out)" 'ran 1 of 2 n4 step=2 restart=2 excluded=n[23],n[23] first=3' "  WORLD_SIZE 2 on n1,n4; TRAINENV_FIRST_WORLD_SIZE keeps 3"
unlike "$(cat d2.out)" 'requeue: '
ok $? "  no requeue"
fi

# ================================================================ (e)
out=$(sbatch -N2 -t 5 -o /dev/null --train-spares=1 --wrap true 2>&1)
like "$out" 'trainenv: warning: --train-spares=1 without --no-kill' \
	"--train-spares on sbatch's command line: the missing --no-kill is said" || diag "$out"
out=$(sbatch -N2 -t 5 -o /dev/null --train-spares=1 --no-kill --wrap true 2>&1)
unlike "$out" 'without --no-kill'
ok $? "  not with --no-kill" || diag "$out"
out=$(printf '#!/bin/bash\n#SBATCH --train-spares=1\ntrue\n' | sbatch -N2 -t 5 -o /dev/null 2>&1)
unlike "$out" 'without --no-kill'
ok $? "  nor in the #SBATCH lines (implied)" || diag "$out"

# ================================================================ (f)
if te_no_mpi_pmix; then
	skip "$TE_WHY" 3
else
sed 's/^srun /srun --pty /' job_a.sh >job_f.sh
id=$(TRAINENV_TEST_PREFLIGHT_FAIL="n2:bad" CUDA_VISIBLE_DEVICES=0,1 \
	submit -N4 -t 5 -o "$TE_WORK/f.out" job_f.sh)
wait_job_done "$id" 60 >/dev/null
like "$(cat f.out)" 'trainenv: relaunch: not relaunched: node n2 failed \(.*\), but an interactive --pty step is not started again' \
	"srun --pty: not relaunched, one line why" || diag "$(cat f.out)"
is "$(grep -c 'relaunch: restart' f.out)" 0 "  no second step"
sed 's/^srun /srun -w n1,n2,n3 /' job_a.sh >job_f2.sh
id=$(TRAINENV_TEST_PREFLIGHT_FAIL="n2:bad" CUDA_VISIBLE_DEVICES=0,1 \
	submit -N4 -t 5 -o "$TE_WORK/f2.out" job_f2.sh)
wait_job_done "$id" 60 >/dev/null
like "$(cat f2.out)" 'trainenv: relaunch: not relaunched: node n2 failed \(.*\), but the step names its nodes \(--nodelist\)' \
	"srun -w: not relaunched, one line why" || diag "$(cat f2.out)"
fi

# ================================================================ (h)
# salloc + srun: the allocation's spares, the relaunch in the shell's srun
if te_no_mpi_pmix; then
	skip "$TE_WHY" 2
else
out=$(TRAINENV_TEST_PREFLIGHT_FAIL="n2:bad" CUDA_VISIBLE_DEVICES=0,1 timeout 120 \
	salloc -N4 --no-kill --train-spares=1 sh -c 'srun --mpi=pmix --ntasks-per-node=1 --train-preflight=on --train-launcher=task \
	sh -c "echo ran \$RANK \$SLURMD_NODENAME restart=\${TRAINENV_RESTART:-0}"' 2>&1)
like "$out" 'trainenv: relaunch: node n2 failed: .*without n2, on 3 nodes' "salloc --train-spares=1 + srun: the shell's srun relaunches without n2" || diag "$out"
like "$out" 'ran 2 n4 restart=1' "  the spare n4 runs the relaunched step's last rank"
fi

# ================================================================ (i)
# torchrun per node: n2's task (its torchrun) fails its pre-flight before
# torchrun starts; the relaunched step runs one torchrun per node again
# (--redirects and --tee: Debian 12's torch 1.13 on Python 3.11 needs them
# set, t22 says why)
if te_no_mpi_pmix || te_no_torchrun_store; then
	skip "${TE_WHY:-no mpi/pmix}" 2
else
cat >worker_i.py <<'EOF'
import os
e = os.environ
print("worker", e["RANK"], "of", e["WORLD_SIZE"], "on", e["SLURMD_NODENAME"],
      "restart=" + e.get("TRAINENV_RESTART", "0"), flush=True)
EOF
cat >job_i.sh <<'EOF'
#!/bin/bash
#SBATCH --train-spares=1
srun --mpi=pmix --ntasks-per-node=1 --train-preflight=on --train-launcher=torchrun \
	torchrun --nproc_per_node=1 --redirects=1 --tee=1 "$TE_WORK/worker_i.py"
EOF
id=$(TRAINENV_TEST_PREFLIGHT_FAIL="n2:bad" CUDA_VISIBLE_DEVICES=0 \
	submit -N4 -t 5 -o "$TE_WORK/i.out" job_i.sh)
state=$(wait_job_done "$id" 120)
like "$(cat i.out)" 'trainenv: relaunch: node n2 failed: .*without n2' "torchrun per node: relaunched without n2 ($state)" || diag "$(cat i.out)"
like "$(cat i.out)" 'worker 2 of 3 on n4 restart=1' "  torchrun on the spare n4 runs worker 2 of 3" || diag "$(cat i.out)"
fi

# ================================================================ (j)
# a rank killed by SIGBUS on n3 (requeue-signals, built-in BUS): n3's fault
cat >job_j.sh <<'EOF'
#!/bin/bash
#SBATCH --train-spares=1
srun --ntasks-per-node=1 sh -c '[ "$SLURMD_NODENAME" = n3 ] && [ "${TRAINENV_RESTART:-0}" = 0 ] && kill -BUS $$
echo "ran $RANK $SLURMD_NODENAME restart=${TRAINENV_RESTART:-0}"'
EOF
id=$(submit -N4 -t 5 -o "$TE_WORK/j.out" job_j.sh)
state=$(wait_job_done "$id" 60)
like "$(cat j.out)" 'trainenv: relaunch: node n3 failed: rank 2 was killed by SIGBUS; the step starts again in this allocation without n3' \
	"a rank killed by SIGBUS on n3: relaunched without n3 ($state)" || diag "$(cat j.out)"
like "$(cat j.out)" 'ran 2 n4 restart=1' "  the spare n4 runs rank 2"

# ================================================================ (k)
# scancel while the step runs: no relaunch, nothing left
cat >job_k.sh <<'EOF'
#!/bin/bash
#SBATCH --train-spares=1
srun --ntasks-per-node=1 sh -c 'touch "$TE_WORK/k.$SLURMD_NODENAME"; exec sleep 61'
EOF
id=$(submit -N4 -t 5 -o "$TE_WORK/k.out" job_k.sh)
wait_for_file "$TE_WORK/k.n3" 30
scancel "$id"
state=$(wait_job_done "$id" 60)
is "$state" CANCELLED "scancel during the step: the job is cancelled" || diag "$(cat k.out)"
sleep 2
is "$(grep -c 'relaunch: restart' k.out)" 0 "  no relaunch" || diag "$(cat k.out)"
is "$(left_on_nodes '[s]leep 61')" "" "  nothing of the step is left on any node"

# ================================================================ (l)
# "save now": with --train-time-signal, n3's SIGBUS sends USR1 to the ranks
# still running; they save (a line) and end; then the relaunch
cat >job_l.sh <<'EOF'
#!/bin/bash
#SBATCH --train-spares=1
#SBATCH --train-time-signal=USR1@60
srun --ntasks-per-node=1 sh -c '
if [ "${TRAINENV_RESTART:-0}" != 0 ]; then echo "ran $RANK $SLURMD_NODENAME restart=$TRAINENV_RESTART"; exit 0; fi
if [ "$SLURMD_NODENAME" = n3 ]; then sleep 2; kill -BUS $$; fi
trap "echo saved $RANK; exit 1" USR1
i=0; while [ $i -lt 60 ]; do sleep 0.5; i=$((i + 1)); done; exit 2'
EOF
id=$(submit -N4 -t 5 -o "$TE_WORK/l.out" job_l.sh)
state=$(wait_job_done "$id" 90)
like "$(cat l.out)" 'trainenv: relaunch: node n3 failed: SIGUSR1 sent to the step.s tasks still running, to save before the step starts again' \
	"a node's fault with --train-time-signal: the others get SIGUSR1 at once ($state)" || diag "$(cat l.out)"
is "$(grep -c '^saved [01]$' l.out)" 2 "  ranks 0 and 1 saved (their USR1 handler ran)"
like "$(cat l.out)" 'ran 2 n4 restart=1' "  then the step ran again, rank 2 on the spare"

# ================================================================ (m)
# --train-transient: a transient fault is relaunched on the same nodes,
# without spares; CODE is the code rank 1 exits with, ALWAYS=1 on every run
cat >job_m.sh <<'EOF'
#!/bin/bash
#SBATCH --train-transient=42
srun --ntasks-per-node=1 sh -c 'echo "ran $RANK of $WORLD_SIZE $SLURMD_NODENAME step=$SLURM_STEP_ID restart=${TRAINENV_RESTART:-none}"
[ "$RANK" = 1 ] && { [ "${TRAINENV_RESTART:-0}" = 0 ] || [ "$ALWAYS" = 1 ]; } && exit "$CODE"; exit 0'
echo "batch done: srun exited with $?"
EOF
id=$(CODE=42 ALWAYS=0 submit -N3 -t 5 -o "$TE_WORK/m.out" job_m.sh)
state=$(wait_job_done "$id" 60)
is "$state" COMPLETED "--train-transient=42, no spares: rank 1 exits 42 once, the job completes" || diag "$(cat m.out)"
out=$(cat m.out)
like "$out" 'trainenv: relaunch: rank 1 exited with code 42, listed as transient \(--train-transient\): the step starts again on the same nodes \(restart 1 of 1\)' \
	"  srun says the transient fault and the relaunch on the same nodes" || diag "$out"
like "$out" 'trainenv: relaunch: restart 1: the step runs again on the same nodes' "  the relaunched srun says so"
like "$out" 'ran 0 of 3 n1 step=1 restart=1' "  rank 0 on n1 again, step 1, TRAINENV_RESTART=1"
like "$out" 'ran 1 of 3 n2 step=1 restart=1' "  rank 1 on n2 again"
like "$out" 'ran 2 of 3 n3 step=1 restart=1' "  rank 2 on n3 again"
is "$(job_field "$id" Restarts)" 0 "  scontrol show job: Restarts=0 (no requeue)"
like "$(scontrol show job "$id" | grep -o 'Comment=.*')" 'Comment=trainenv: relaunch 1 on the same nodes' "  the job's comment keeps the relaunch on the same nodes"
like "$(cat "rec/0/$id/trainenv.0.json" 2>&1)" '"restart":\{"verdict":"relaunch-same","why":"relaunch: rank 1 exited with code 42, listed as transient' \
	"  step 0's record: the verdict relaunch-same and its line"
like "$out" 'batch done: srun exited with 0' "  the batch script goes on after the step, srun's exit 0"
# a code not listed: the program's own error
id=$(CODE=3 ALWAYS=0 submit -N3 -t 5 -o "$TE_WORK/m2.out" job_m.sh)
state=$(wait_job_done "$id" 60)
like "$(cat m2.out)" 'batch done: srun exited with 3' "--train-transient=42, rank 1 exits 3: srun exits 3 ($state)" || diag "$(cat m2.out)"
like "$(cat m2.out)" 'trainenv: relaunch: not relaunched: rank 1 exited with code 3: the program.s own error \(not a node.s fault, and not every failed rank exited with a code --train-transient lists\)' \
	"  not relaunched, one line why" || diag "$(cat m2.out)"
is "$(grep -c 'relaunch: restart' m2.out)" 0 "  no second step"
# 42 on every run: the budget (1: no --train-requeue, no spares) is spent
id=$(CODE=42 ALWAYS=1 submit -N3 -t 5 -o "$TE_WORK/m3.out" job_m.sh)
state=$(wait_job_done "$id" 60)
like "$(cat m3.out)" 'trainenv: relaunch: not relaunched: rank 1 exited with code 42, listed as transient \(--train-transient\), but the restart budget is spent \(1 of 1 restarts done\)' \
	"42 on every run: one relaunch, then the budget is spent, said ($state)" || diag "$(cat m3.out)"
is "$(grep -c 'relaunch: restart' m3.out)" 1 "  one relaunch only"
# an srun that makes its own allocation: no relaunch, one line why (the
# job is already ending when srun decides, or, before Slurm marks it so,
# the allocation's own)
out=$(timeout 60 srun -N3 --train-transient=42 sh -c '[ "$SLURM_PROCID" = 1 ] && exit 42; exit 0' 2>&1)
like "$out" 'trainenv: relaunch: (stopped: the job is ending|not relaunched: rank 1 exited with code 42, listed as transient \(--train-transient\), but this srun makes its own allocation, which ends with the step)$' \
	"srun -N3 --train-transient=42 outside a job: not relaunched, one line why" || diag "$out"

# ================================================================ (g)
cat >job_g.sh <<'EOF'
#!/bin/bash
#SBATCH --train-spares=1
srun --ntasks-per-node=1 sh -c '
if [ "${TRAINENV_RESTART:-0}" != 0 ]; then
	echo "ran $RANK $SLURMD_NODENAME restart=$TRAINENV_RESTART at $(date +%s.%N)"; exit 0
fi
[ "$SLURMD_NODENAME" = n3 ] && { touch "$1/g.started"; exec sleep 300; }
# the survivors end once Slurm sees n3 gone, as a training program ends on
# its collective timeout
i=0
while [ $i -lt 120 ]; do
	scontrol show node n3 | grep -qE "State=[A-Z_+]*(DOWN|NOT_RESPONDING)" && exit 1
	sleep 1; i=$((i + 1))
done
exit 2' sh "$TE_WORK"
echo "batch done"
EOF
id=$(submit -N4 -t 5 -o "$TE_WORK/g.out" job_g.sh)
wait_for_file "$TE_WORK/g.started" 30
ok $? "a step of 3 nodes runs (job $id)" || diag "$(cat g.out)"
t0=$(date +%s.%N)
"$TE_CLUSTER_SH" slurmd --dir "$TE_CLUSTER_DIR" n3 kill
# shellcheck disable=SC2046
kill -KILL $(node_procs n3 "^[s]lurmstepd: \\[$id\\.|^[s]leep 300" | awk '{ print $1 }') 2>/dev/null
state=$(wait_job_done "$id" 120)
is "$state" COMPLETED "n3 lost: the job survives (--no-kill implied) and completes" ||
	diag "$(cat g.out; ps -eo pid,ppid,stat,etime,args | grep '[s]run'; for p in $(pgrep -x srun); do echo "$p: $(cat /proc/$p/task/*/wchan 2>/dev/null | tr '\0' ' ')"; timeout 30 gdb -p $p -batch -ex 'thread apply all bt' 2>/dev/null | grep -E '^#|^Thread' | head -60; done)"
like "$(cat g.out)" 'trainenv: relaunch: node n3 failed: Slurm lost the node \(down or not responding\); the step starts again in this allocation without n3, on 3 nodes with 3 tasks' \
	"  srun blames the lost node and relaunches" || diag "$(cat g.out)"
like "$(cat g.out)" 'ran 2 n4 restart=1' "  the spare n4 runs the relaunched step's last rank"
unlike "$(cat g.out)" 'ran [0-9] n3 '
ok $? "  nothing ran on n3"
t1=$(grep -o 'ran 0 n1 restart=1 at [0-9.]*' g.out | awk '{ print $NF }')
diag "node lost: $(awk -v a="$t0" -v b="${t1:-0}" 'BEGIN { printf "%.1f", b - a }') s from the kill to the relaunched step's rank 0 (SlurmdTimeout=10)"
"$TE_CLUSTER_SH" slurmd --dir "$TE_CLUSTER_DIR" n3 start >/dev/null 2>&1
scontrol update nodename=n3 state=resume 2>/dev/null
true

done_testing
