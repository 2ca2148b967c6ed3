#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 3.2-3.5 on the real cluster: what every task gets from trainenv.
# Signal dispositions after exec (SigIgn of /proc/self/status), never
# SIGUSR1/SIGUSR2; every timeout knob in its current and legacy variables
# through admin default, option and enforce, as explain shows; the per-job
# dump directory created as the job's user; the rank environment in task and
# torchrun style, the launcher choice, --train-rank-env=no, user variables
# kept, MASTER_PORT per step; the first-failure report; all of it for a
# normal user (nobody) too.
# Single-quoted $VARS here are for the tasks' shells and awk:
# shellcheck disable=SC2016
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"

plan 103

te_build_init
cluster_up --nodes 3 || bail_out "no cluster"
ok 0 "cluster is up, plugin $TE_PLUGIN"
use_trainenv
n1_addr=$TE_CLUSTER_NET.11
as_nobody=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
rank_vars='^(RANK|WORLD_SIZE|LOCAL_RANK|LOCAL_WORLD_SIZE|NODE_RANK|GROUP_RANK|MASTER_ADDR|MASTER_PORT|PET_[A-Z_]*)='

sigign() { # SRUN_ARGS...: the tasks' SigIgn masks (standard signals), sorted, one line
	te_srun -t 60 "$@" grep SigIgn /proc/self/status 2>&1 | cut -f2 | std_sigign | sort -u | tr '\n' ' '
}
bit() { # SIGNUM: the SigIgn bit of a signal, in hex as /proc shows it
	printf '%016x' $(( 1 << ($1 - 1) ))
}
mask_of() { # SIGNUM...: the mask with those bits
	local m=0 s
	for s in "$@"; do m=$(( m | (1 << (s - 1)) )); done
	printf '%016x' "$m"
}

# ---------------------------------------------------------------- signals
is "$(sigign -N3)" "0000000000000000 " "built-in sighup=shield: the tasks' dispositions are Slurm's, nothing ignored"
is "$(sigign -N3 --train-sighup=ignore)" "$(bit 1) " "--train-sighup=ignore: every task starts with SIGHUP ignored, nothing else"
is "$(sigign -N3 --train-sighup=default)" "0000000000000000 " "--train-sighup=default: no task ignores SIGHUP"
is "$(sigign -N2 --train-ignore-signals=PIPE,TTOU)" "$(mask_of 13 22) " "--train-ignore-signals=PIPE,TTOU: PIPE and TTOU ignored, nothing else"
all=$(mask_of 13 21 22 25 28 23)
is "$(sigign -N1 --train-ignore-signals=PIPE,TTIN,TTOU,XFSZ,WINCH,URG)" "$all " "every signal ignore-signals accepts (PIPE TTIN TTOU XFSZ WINCH URG) is ignored"
sig_ignored "$all" 10 || sig_ignored "$all" 12
ok $((! $?)) "SIGUSR1 and SIGUSR2 are never among them"
is "$(sigign -N1 --train-sighup=default --train-ignore-signals=none)" "0000000000000000 " "--train-ignore-signals=none with sighup=default: nothing ignored"
for s in USR1 USR2 SIGUSR1 usr2 PIPE,USR1; do
	out=$(timeout 30 srun -N1 "--train-ignore-signals=$s" true 2>&1)
	rc=$?
	[ "$rc" -eq 255 ] && printf '%s\n' "$out" | grep -q "trainenv: --train-ignore-signals: '[A-Za-z0-9]*' may not be ignored: PyTorch Lightning and submitit"
	ok $? "--train-ignore-signals=$s refused (exit $rc), saying why" || diag "$out"
done
out=$(timeout 30 srun -N1 --train-ignore-signals=HUP true 2>&1)
like "$out" "trainenv: --train-ignore-signals: 'HUP': use sighup=ignore" "--train-ignore-signals=HUP refused: sighup is the knob for it"
use_trainenv ignore-signals=USR1
out=$(timeout 30 srun -N1 true 2>&1)
rc=$?
[ "$rc" -ne 0 ] && printf '%s\n' "$out" | grep -q "trainenv: plugstack.conf argument 1: ignore-signals: 'USR1' may not be ignored"
ok $? "site policy ignore-signals=USR1 refused: srun fails (exit $rc) with the reason" || diag "$out"
use_trainenv ignore-signals=PIPE,TTOU sighup=default
is "$(sigign -N2)" "$(mask_of 13 22) " "site policy ignore-signals=PIPE,TTOU sighup=default: PIPE and TTOU ignored, not HUP"
is "$(sigign -N2 --train-sighup=ignore)" "$(mask_of 1 13 22) " "and --train-sighup=ignore adds HUP"
# A normal user's tasks get the same.
out=$(timeout 60 "${as_nobody[@]}" srun -N2 grep SigIgn /proc/self/status 2>&1 | cut -f2 | std_sigign | sort -u | tr '\n' ' ')
is "$out" "$(mask_of 13 22) " "the same dispositions for a job of user nobody"

# ---------------------------------------------------------------- timeout knobs
use_trainenv nccl-monitoring=off nccl-async-errors=tear-down nccl-desync-debug=on \
	nccl-dump-on-timeout=on nccl-trace-buffer=2000 deepspeed-timeout=30 rdzv-timeout=900 \
	nccl-heartbeat=900 enforce=nccl-dump-on-timeout,deepspeed-timeout
knobs='^(TORCH_NCCL_[A-Z_]*|NCCL_[A-Z_]*|DEEPSPEED_TIMEOUT|PET_RDZV_CONF)='
out=$(te_srun -t 60 -N1 --train-explain --train-nccl-heartbeat=1200 --train-nccl-blocking-wait=on \
	--train-nccl-trace-buffer=500 --train-nccl-dump-on-timeout=off --train-deepspeed-timeout=5 \
	sh -c 'env | sort' 2>&1)
# (NCCL_RAS_ADDR is no timeout knob: the step's own RAS address, below)
got=$(printf '%s\n' "$out" | grep -E "$knobs" | grep -v '^NCCL_RAS_ADDR=' | tr '\n' ' ')
is "$got" "DEEPSPEED_TIMEOUT=30 NCCL_ASYNC_ERROR_HANDLING=1 NCCL_BLOCKING_WAIT=1 NCCL_DESYNC_DEBUG=1 TORCH_NCCL_ASYNC_ERROR_HANDLING=1 TORCH_NCCL_BLOCKING_WAIT=1 TORCH_NCCL_DESYNC_DEBUG=1 TORCH_NCCL_DUMP_ON_TIMEOUT=1 TORCH_NCCL_ENABLE_MONITORING=0 TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC=1200 TORCH_NCCL_TRACE_BUFFER_SIZE=500 " \
	"every timeout knob reaches the task, current and legacy (NCCL_*) names, from admin defaults, options and enforce"
like "$out" '^NCCL_RAS_ADDR=127\.[0-9]+\.[0-9]+\.[0-9]+:28[0-9]{3}$' \
	"the task gets its step's own NCCL RAS address, on loopback (the hang report asks RAS there)"
for want in \
	'nccl-heartbeat += 1200 +\(option: --train-nccl-heartbeat\)' \
	'nccl-monitoring += off +\(admin default: plugstack.conf argument 1\)' \
	'nccl-async-errors += tear-down +\(admin default: plugstack.conf argument 2\)' \
	'nccl-blocking-wait += on +\(option: --train-nccl-blocking-wait\)' \
	'nccl-desync-debug += on +\(admin default: plugstack.conf argument 3\)' \
	'nccl-dump-on-timeout += on +\(enforced: plugstack.conf argument 4\)' \
	'nccl-trace-buffer += 500 +\(option: --train-nccl-trace-buffer\)' \
	'deepspeed-timeout += 30 +\(enforced: plugstack.conf argument 6\)' \
	'rdzv-timeout += 900 +\(admin default: plugstack.conf argument 7\)'; do
	like "$out" "^trainenv: $want" "explain: ${want%% *}"
done
is "$(printf '%s\n' "$out" | grep -c 'trainenv: warning: --train-\(nccl-dump-on-timeout\|deepspeed-timeout\)=.* ignored: the site enforces')" 2 "explain warns about both options the site overrides"
is "$(printf '%s\n' "$out" | grep -c '^PET_RDZV_CONF=')" 0 "task launch style: no PET_RDZV_CONF"
out=$(te_srun -t 60 -N1 --train-nccl-async-errors=cleanup-only --train-nccl-desync-debug=off \
	--train-nccl-monitoring=on sh -c 'env | sort' 2>&1 | grep -E "$knobs" | tr '\n' ' ')
like "$out" 'NCCL_ASYNC_ERROR_HANDLING=2 .*NCCL_DESYNC_DEBUG=0 .*TORCH_NCCL_ASYNC_ERROR_HANDLING=2 .*TORCH_NCCL_DESYNC_DEBUG=0 .*TORCH_NCCL_ENABLE_MONITORING=1 ' "options map to the variables' values (cleanup-only=2, off=0, on=1)"
out=$(te_srun -t 60 -N1 --train-nccl-async-errors=skip-cleanup printenv TORCH_NCCL_ASYNC_ERROR_HANDLING 2>&1)
is "$out" 3 "--train-nccl-async-errors=skip-cleanup: TORCH_NCCL_ASYNC_ERROR_HANDLING=3"
out=$(te_srun -t 60 -N2 --train-launcher=torchrun printenv PET_RDZV_CONF 2>&1 | sort -u)
is "$out" "timeout=900,join_timeout=900" "torchrun launch style: PET_RDZV_CONF carries rdzv-timeout as timeout and join_timeout"
out=$(te_srun -t 60 -N2 --train-launcher=torchrun --train-rdzv-timeout=120 printenv PET_RDZV_CONF 2>&1 | sort -u)
is "$out" "timeout=120,join_timeout=120" "--train-rdzv-timeout=120 reaches PET_RDZV_CONF"
out=$(env TORCH_NCCL_TRACE_BUFFER_SIZE=7 NCCL_BLOCKING_WAIT=0 timeout 60 srun -N1 sh -c 'echo $TORCH_NCCL_TRACE_BUFFER_SIZE $NCCL_BLOCKING_WAIT $TORCH_NCCL_BLOCKING_WAIT' 2>&1)
is "$out" "7 0 0" "values the user exported are kept (and the current name follows a legacy one)"

# ---------------------------------------------------------------- NCCL's diagnostics
# nccl-diagnostics (issue 34 item 5): NCCL_RUN_DIAGNOSTICS through the
# same rule as the timeout knobs; unset unless someone asks.
diag_of() { # SRUN_ARGS...: every task's NCCL_RUN_DIAGNOSTICS ("unset" if none), sorted, one line
	te_srun -t 60 "$@" sh -c 'echo "${NCCL_RUN_DIAGNOSTICS-unset}"' 2>&1 | sort -u | tr '\n' ' '
}
use_trainenv
is "$(diag_of -N2)" "unset " "nccl-diagnostics: no built-in, no task gets NCCL_RUN_DIAGNOSTICS"
use_trainenv nccl-diagnostics=on
is "$(diag_of -N3)" "1 " "site default nccl-diagnostics=on: NCCL_RUN_DIAGNOSTICS=1 in every task of 3 nodes"
out=$(te_srun -t 60 -N1 --train-explain true 2>&1)
like "$out" '^trainenv: nccl-diagnostics += on +\(admin default: plugstack.conf argument 1\)' "explain: nccl-diagnostics on from the site default"
is "$(NCCL_RUN_DIAGNOSTICS=0 diag_of -N2)" "0 " "NCCL_RUN_DIAGNOSTICS=0 in the job environment beats the site default"
is "$(NCCL_RUN_DIAGNOSTICS=0 diag_of -N2 --train-nccl-diagnostics=on)" "1 " "--train-nccl-diagnostics=on beats the job environment's 0"
is "$(diag_of -N2 --train-nccl-diagnostics=off)" "0 " "--train-nccl-diagnostics=off beats the site default: 0"
out=$(NCCL_RUN_DIAGNOSTICS=2 timeout 30 srun -N1 true 2>&1)
rc=$?
like "$out" "trainenv: NCCL_RUN_DIAGNOSTICS in the job environment \(setting nccl-diagnostics\): invalid value '2'; accepted: on or off" \
	"NCCL_RUN_DIAGNOSTICS=2 in the job environment: refused (exit $rc), naming the variable"
use_trainenv nccl-diagnostics=on enforce=nccl-diagnostics
out=$(NCCL_RUN_DIAGNOSTICS=0 te_srun -t 60 -N2 --train-nccl-diagnostics=off sh -c 'echo "diag=$NCCL_RUN_DIAGNOSTICS"' 2>&1)
is "$(printf '%s\n' "$out" | grep '^diag=' | sort -u)" "diag=1" "enforced nccl-diagnostics=on beats the option off and the job environment's 0"
like "$out" 'trainenv: warning: --train-nccl-diagnostics=off ignored: the site enforces nccl-diagnostics=on' "  and the overridden option gets a warning"
use_trainenv

# ---------------------------------------------------------------- dump dir
use_trainenv
dumps=$TE_WORK/dumps
mkdir -m 1777 "$dumps"
out=$(timeout 60 "${as_nobody[@]}" srun -N2 "--train-nccl-dump-dir=$dumps" \
	sh -c 'echo "$SLURM_JOB_ID $TORCH_NCCL_DEBUG_INFO_TEMP_FILE"' 2>&1)
job=$(printf '%s\n' "$out" | awk 'NR == 1 { print $1 }')
nb=$(id -u nobody)
is "$(printf '%s\n' "$out" | awk '{ print $2 }' | sort -u)" "$dumps/$nb/$job/nccl_trace_rank_" "dump dir: every task gets TORCH_NCCL_DEBUG_INFO_TEMP_FILE=DIR/UID/JOBID/nccl_trace_rank_"
is "$(stat -c '%U %a %F' "$dumps/$nb/$job" 2>&1)" "nobody 700 directory" "dump dir: DIR/UID/JOBID was created as the job's user (nobody), mode 700"
out=$(env TORCH_NCCL_DEBUG_INFO_TEMP_FILE=/mine/trace_ timeout 60 srun -N1 "--train-nccl-dump-dir=$dumps" printenv TORCH_NCCL_DEBUG_INFO_TEMP_FILE 2>&1)
is "$out" "/mine/trace_" "dump dir: a TORCH_NCCL_DEBUG_INFO_TEMP_FILE the user set is kept"
use_trainenv "nccl-dump-dir=$dumps" enforce=nccl-dump-dir
out=$(env TORCH_NCCL_DEBUG_INFO_TEMP_FILE=/mine/trace_ timeout 60 srun -N1 sh -c 'echo "$SLURM_JOB_ID $TORCH_NCCL_DEBUG_INFO_TEMP_FILE"' 2>&1)
job=${out%% *}
is "$out" "$job $dumps/0/$job/nccl_trace_rank_" "dump dir enforced by the site: the site's directory wins"
use_trainenv

# ---------------------------------------------------------------- rank env, task style
# One line per task, fields separated by "|": 1 SLURM_PROCID 2 SLURM_LOCALID
# 3 SLURM_NODEID 4 host 5 RANK 6 WORLD_SIZE 7 LOCAL_RANK 8 LOCAL_WORLD_SIZE
# 9 NODE_RANK 10 GROUP_RANK 11 MASTER_ADDR 12 MASTER_PORT 13 number of PET_*
probe='echo "$SLURM_PROCID|$SLURM_LOCALID|$SLURM_NODEID|$(hostname)|${RANK-}|${WORLD_SIZE-}|${LOCAL_RANK-}|${LOCAL_WORLD_SIZE-}|${NODE_RANK-}|${GROUP_RANK-}|${MASTER_ADDR-}|${MASTER_PORT-}|$(env | grep -c ^PET_)"'
f() { awk -F'|' "$@"; }
out=$(te_srun -t 60 -N3 --ntasks-per-node=2 sh -c "$probe" 2>&1 | sort -n)
diag "$out"
is "$(printf '%s\n' "$out" | wc -l)" 6 "-N3 --ntasks-per-node=2: six tasks"
is "$(printf '%s\n' "$out" | f '{ print $5 }' | tr '\n' ' ')" "0 1 2 3 4 5 " "RANK: 0..5, one each"
is "$(printf '%s\n' "$out" | f '$5 != $1' | wc -l)" 0 "RANK is Slurm's task id on every task"
is "$(printf '%s\n' "$out" | f '{ print $6, $8 }' | sort -u)" "6 2" "WORLD_SIZE 6 and LOCAL_WORLD_SIZE 2 on every task"
is "$(printf '%s\n' "$out" | f '{ print $7 }' | tr '\n' ' ')" "0 1 0 1 0 1 " "LOCAL_RANK 0/1 on each node"
is "$(printf '%s\n' "$out" | f '$7 != $2' | wc -l)" 0 "LOCAL_RANK is Slurm's local id"
is "$(printf '%s\n' "$out" | f '{ print $4, $9, $10 }' | sort -u | tr '\n' ' ')" "n1 0 0 n2 1 1 n3 2 2 " "NODE_RANK and GROUP_RANK: 0, 1, 2 for n1, n2, n3"
is "$(printf '%s\n' "$out" | f '{ print $11 }' | sort -u)" "$n1_addr" "MASTER_ADDR is n1's address ($n1_addr) on every rank, not a name"
ports=$(printf '%s\n' "$out" | f '{ print $12 }' | sort -u)
[ "$(echo "$ports" | wc -l)" = 1 ] && [ "$ports" -ge 20000 ] && [ "$ports" -le 29999 ]
ok $? "MASTER_PORT is the same on every rank ($ports), in the port range"
is "$(printf '%s\n' "$out" | f '{ print $13 }' | sort -u)" 0 "task style: no PET_* variable"
out=$(te_srun -t 60 -N3 --train-explain true 2>&1)
like "$out" 'trainenv: launch style: task \(auto: one task per rank' "explain: task style, and why"

# ---------------------------------------------------------------- torchrun style
mkdir -p "$TE_WORK/bin"
cat >"$TE_WORK/bin/torchrun" <<'EOF'
#!/bin/sh
# Not torch's: prints what a per-node launcher would read.
echo "$SLURM_PROCID|${PET_NNODES-}|${PET_NODE_RANK-}|${PET_MASTER_ADDR-}|${PET_MASTER_PORT-}|${PET_NPROC_PER_NODE-none}|${RANK-none}|${MASTER_ADDR-none}|$TRAINENV_LAUNCHER"
EOF
chmod 755 "$TE_WORK/bin/torchrun"
out=$(te_srun -t 60 -N3 --train-explain "$TE_WORK/bin/torchrun" --nproc-per-node=2 train.py 2>&1)
tr_lines=$(printf '%s\n' "$out" | grep -E '^[0-9]' | sort -n)
diag "$tr_lines"
like "$out" 'trainenv: launch style: torchrun \(auto: the command is torchrun\)' "explain: a torchrun command gets the torchrun style, and says why"
is "$(printf '%s\n' "$tr_lines" | f '{ print $1 "=" $3 }' | tr '\n' ' ')" "0=0 1=1 2=2 " "PET_NODE_RANK 0, 1, 2: one per launcher (node)"
is "$(printf '%s\n' "$tr_lines" | f '{ print $2, $4, $6, $7, $8 }' | sort -u)" "3 $n1_addr none none none" "PET_NNODES=3, PET_MASTER_ADDR=$n1_addr; no PET_NPROC_PER_NODE without GPUs; no RANK or MASTER_ADDR"
is "$(printf '%s\n' "$tr_lines" | f '{ print $5 }' | sort -u | wc -l)" 1 "PET_MASTER_PORT is the same for every launcher"
like "$tr_lines" 'torchrun \(auto: the command is torchrun\)$' "TRAINENV_LAUNCHER tells the task the style and why"
out=$(te_srun -t 60 -N3 --train-launcher=task "$TE_WORK/bin/torchrun" 2>&1 | sort -n)
is "$(printf '%s\n' "$out" | f '{ print $2 "/" $7 }' | tr '\n' ' ')" "/0 /1 /2 " "--train-launcher=task overrides the detection: RANK, no PET_*"
out=$(te_srun -t 60 -N2 --train-launcher=torchrun sh -c "$probe" 2>&1 | sort -n)
is "$(printf '%s\n' "$out" | f '{ print $5 "|" $13 }' | sort -u | tr '\n' ' ')" "|4 " "--train-launcher=torchrun for any command: no RANK, four PET_* variables"
out=$(te_srun -t 60 -N2 --train-explain --train-launcher=torchrun true 2>&1)
like "$out" 'trainenv: launch style: torchrun \(launcher=torchrun\)' "explain names the user's launcher choice"

# ---------------------------------------------------------------- rank-env=no, user values
out=$(te_srun -t 60 -N2 --train-rank-env=no sh -c 'env' 2>&1)
is "$(printf '%s\n' "$out" | grep -cE "$rank_vars")" 0 "--train-rank-env=no: no RANK, WORLD_SIZE, LOCAL_*, NODE_RANK, GROUP_RANK, MASTER_* or PET_*"
out=$(te_srun -t 60 -N2 --train-rank-env=no "$TE_WORK/bin/torchrun" 2>&1)
is "$(printf '%s\n' "$out" | f '{ print $2 $3 $4 $5 }' | sort -u)" "" "--train-rank-env=no with torchrun: no PET_* either"
out=$(te_srun -t 60 -N2 --train-rank-env=no --train-explain --train-nccl-heartbeat=1000 printenv TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC 2>&1)
like "$out" 'rank environment not exported' "explain says the rank environment is not exported"
is "$(printf '%s\n' "$out" | grep -c '^1000$')" 2 "--train-rank-env=no still applies the other settings"
out=$(env MASTER_PORT=1234 RANK=99 MASTER_ADDR=somehost timeout 60 srun -N2 sh -c "$probe" 2>&1 | sort -n)
is "$(printf '%s\n' "$out" | f '{ print $5, $11, $12, $6 }' | sort -u)" "99 somehost 1234 2" "RANK, MASTER_ADDR and MASTER_PORT the user set are not overwritten; the rest is set (WORLD_SIZE 2)"
out=$(env PET_NNODES=7 timeout 60 srun -N2 "$TE_WORK/bin/torchrun" 2>&1 | f '{ print $2, $3 }' | sort -u | tr '\n' ' ')
is "$out" "7 0 7 1 " "a PET_NNODES the user set is not overwritten; PET_NODE_RANK is set"
# A step started from inside a task: the variables the outer step set are
# trainenv's, not the user's, and the inner step sets its own.
cat >"$TE_WORK/nested.sh" <<EOF
#!/bin/sh
echo "outer \$RANK \$WORLD_SIZE \$MASTER_PORT"
srun -N2 -n2 --overlap sh -c 'echo "inner \$RANK \$WORLD_SIZE \$MASTER_PORT"'
EOF
chmod 755 "$TE_WORK/nested.sh"
out=$(te_sbatch_wait -t 90 -N2 -o "$TE_WORK/nested.out" --wrap "srun -N1 -n1 --overlap $TE_WORK/nested.sh" 2>&1)
ok $? "a job with a step inside a step runs" || diag "$out"
out=$(cat "$TE_WORK/nested.out")
diag "$out"
outer=$(printf '%s\n' "$out" | awk '$1 == "outer" { print $4 }')
inner=$(printf '%s\n' "$out" | awk '$1 == "inner" { print $2, $3 }' | sort | tr '\n' ' ')
is "$inner" "0 2 1 2 " "the inner step's tasks get their own RANK (0, 1) and WORLD_SIZE 2, not the outer task's"
inner_port=$(printf '%s\n' "$out" | awk '$1 == "inner" { print $4 }' | sort -u)
[ -n "$outer" ] && [ -n "$inner_port" ] && [ "$outer" != "$inner_port" ]
ok $? "and their own MASTER_PORT ($inner_port, outer $outer)"

# ---------------------------------------------------------------- MASTER_PORT per step
cat >"$TE_WORK/step.sh" <<EOF
#!/bin/sh
# step.sh ME OTHER: announce, wait (15 s) until the other step runs too
: >"$TE_WORK/\$1.\$SLURM_PROCID.started"
i=0
while [ ! -e "$TE_WORK/\$2.\$SLURM_PROCID.started" ] && [ \$i -lt 150 ]; do sleep 0.1; i=\$((i + 1)); done
[ -e "$TE_WORK/\$2.\$SLURM_PROCID.started" ] && both=yes || both=no
echo "\$1 \$SLURM_STEP_ID \$MASTER_PORT overlapped=\$both"
EOF
chmod 755 "$TE_WORK/step.sh"
out=$(te_sbatch_wait -t 90 -N2 --ntasks-per-node=2 -o "$TE_WORK/steps.out" --wrap \
	"srun -N2 -n2 --overlap $TE_WORK/step.sh A B & srun -N2 -n2 --overlap $TE_WORK/step.sh B A & wait" 2>&1)
ok $? "a job with two concurrent steps runs" || diag "$out"
out=$(sort "$TE_WORK/steps.out")
diag "$out"
is "$(printf '%s\n' "$out" | awk '{ print $4 }' | sort -u)" "overlapped=yes" "the two steps ran at the same time"
pa=$(printf '%s\n' "$out" | awk '$1 == "A" { print $3 }' | sort -u)
pb=$(printf '%s\n' "$out" | awk '$1 == "B" { print $3 }' | sort -u)
[ "$(echo "$pa" | wc -l)" = 1 ] && [ "$(echo "$pb" | wc -l)" = 1 ] && [ -n "$pa" ] && [ -n "$pb" ]
ok $? "each step has one MASTER_PORT on all its ranks (A $pa, B $pb)"
[ "$pa" != "$pb" ]
ok $? "two concurrent steps of one job have different MASTER_PORTs"
# Two jobs sharing a node.
(te_srun -t 60 -N1 -w n1 "$TE_WORK/step.sh" J1 J2 >"$TE_WORK/j1.out" 2>&1 &)
out2=$(te_srun -t 60 -N1 -w n1 "$TE_WORK/step.sh" J2 J1 2>&1)
for ((i = 0; i < 100; i++)); do [ -s "$TE_WORK/j1.out" ] && break; sleep 0.1; done
out1=$(cat "$TE_WORK/j1.out")
diag "$out1" "$out2"
[ "${out1##* }" = overlapped=yes ] && [ "${out2##* }" = overlapped=yes ] && [ "$(echo "$out1" | cut -d' ' -f3)" != "$(echo "$out2" | cut -d' ' -f3)" ]
ok $? "two jobs running on the same node have different MASTER_PORTs"

# ---------------------------------------------------------------- first-failure report
report_re='^trainenv: rank [0-9]+ \(node n[0-9], local rank [0-9]+\) '
# The later rank fails a second after the first has (a file says when),
# whatever the nodes' launch skew.
after_first='n=0; while [ ! -e "$1" ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done; sleep 1'
t0=$(date +%s)
out=$(te_srun -t 60 -N3 sh -c 'case $SLURM_PROCID in 1) : >"$1"; exit 3 ;; 2) '"$after_first"'; kill -TERM $$ ;; esac; sleep 2' sh "$TE_WORK/first.1" 2>&1)
rc=$?
reports=$(printf '%s\n' "$out" | grep -E "$report_re")
diag "$reports"
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]
ok $? "a step with a failing rank fails (exit $rc)"
is "$(printf '%s\n' "$reports" | grep -c .)" 2 "two failed ranks: two report lines, none for the rank that exited 0"
like "$(printf '%s\n' "$reports" | sed -n 1p)" '^trainenv: rank 1 \(node n2, local rank 0\) exited with code 3 at [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}: the first failure of this step$' \
	"rank 1's exit code 3: rank, node, local rank, code, time, and 'the first failure'"
like "$(printf '%s\n' "$reports" | sed -n 2p)" '^trainenv: rank 2 \(node n3, local rank 0\) was killed by signal 15 \(SIGTERM\) at [0-9-]{10} [0-9:.]{12}$' \
	"rank 2's SIGTERM a second later: signal number and name, not 'first'"
when=$(printf '%s\n' "$reports" | sed -n '1s/.* at \([0-9-]* [0-9:]*\)\..*/\1/p')
t=$(date -d "$when" +%s 2>/dev/null || echo 0)
[ "$t" -ge $((t0 - 2)) ] && [ "$t" -le $(( $(date +%s) + 2 )) ]
ok $? "the time in the report ($when) is when the rank failed"
out=$(te_srun -t 60 -N3 sh -c 'case $SLURM_PROCID in 0) : >"$1"; kill -KILL $$ ;; 2) '"$after_first"'; exit 7 ;; esac' sh "$TE_WORK/first.2" 2>&1)
reports=$(printf '%s\n' "$out" | grep -E "$report_re")
like "$(printf '%s\n' "$reports" | sed -n 1p)" '^trainenv: rank 0 \(node n1, local rank 0\) was killed by signal 9 \(SIGKILL\) at .*: the first failure of this step$' "a signal first: rank 0's SIGKILL is the first failure"
like "$(printf '%s\n' "$reports" | sed -n 2p)" '^trainenv: rank 2 \(node n3, local rank 0\) exited with code 7 at [^:]*:[^:]*:[0-9.]*$' "then rank 2's exit code 7, not first"
out=$(te_srun -t 60 -N3 --ntasks-per-node=2 true 2>&1)
is "$(printf '%s\n' "$out" | grep -cE '^trainenv: ')" 0 "clean exits: no report"
out=$(te_srun -t 60 -N3 --train-failure-report=off sh -c '[ $SLURM_PROCID != 1 ] || exit 3' 2>&1)
like "$out" 'srun: error: n2: task 1: Exited with exit code 3' "--train-failure-report=off: srun still says task 1 failed"
is "$(printf '%s\n' "$out" | grep -cE "$report_re")" 0 "--train-failure-report=off: no trainenv report"
out=$(te_srun -t 60 -N3 --ntasks-per-node=2 sh -c '[ $SLURM_PROCID != 5 ] || exit 4' 2>&1)
like "$out" '^trainenv: rank 5 \(node n3, local rank 1\) exited with code 4 at .*: the first failure of this step$' "the report names the local rank of a second task on a node"
# The node a report names is the node's own: under sbatch the job's
# SLURMD_NODENAME is still the batch host's (n1) when slurmstepd prepares
# the step, and a user may set it to anything.
cat >fail_rank2.sbatch <<'EOF'
#!/bin/sh
srun -N3 --ntasks-per-node=1 sh -c '[ $SLURM_PROCID != 2 ] || exit 6'
EOF
te_sbatch_wait -t 90 -N3 -o "$TE_WORK/fail_rank2.out" fail_rank2.sbatch >/dev/null 2>&1
out=$(cat fail_rank2.out 2>&1)
like "$out" '^trainenv: rank 2 \(node n3, local rank 0\) exited with code 6 at .*: the first failure of this step$' "sbatch + srun: the report names rank 2's node n3, not the batch host" || diag "$out"
# A node's Slurm name is not always its host name (slurmd -N, several
# slurmd per host): the report names Slurm's node. n2's host name becomes
# another for one step, and comes back whatever happens.
cluster_exec n2 hostname host-of-n2
te_on_exit 'cluster_exec n2 hostname n2 2>/dev/null'
is "$(cluster_exec n2 hostname)" host-of-n2 "n2's host name is host-of-n2 for the next step"
out=$(te_srun -t 60 -N3 --ntasks-per-node=1 sh -c '[ $SLURM_PROCID != 1 ] || exit 8' 2>&1)
cluster_exec n2 hostname n2
like "$out" '^trainenv: rank 1 \(node n2, local rank 0\) exited with code 8 at .*: the first failure of this step$' "a node whose host name differs: the report names Slurm's node n2, not host-of-n2" || diag "$out"
is "$(cluster_exec n2 hostname)" n2 "n2's host name is back"
nodes=(n1 n2)
sizes=$(log_sizes)
out=$(SLURMD_NODENAME=$'evil\033[2Jnode' te_srun -t 60 -N2 sh -c '[ $SLURM_PROCID = 0 ] || exit 5' 2>&1)
like "$out" '^trainenv: rank 1 \(node n2, local rank 0\) exited with code 5 at .*: the first failure of this step$' "a SLURMD_NODENAME set by the user does not rename the node in the report"
# shellcheck disable=SC2086 # one size a word
logs=$(new_logs $sizes)
! printf '%s\n' "$logs" | grep -q "evil" && ! printf '%s' "$logs" | grep -q $'\033'
ok $? "nor reaches the slurmd log (no control characters there)" || diag "$logs"

# ---------------------------------------------------------------- a normal user
use_trainenv nccl-heartbeat=900
out=$(timeout 60 "${as_nobody[@]}" srun -N3 sh -c "printf '%s|' \$(id -un); $probe" 2>&1 | sort -t'|' -n -k2)
diag "$out"
is "$(printf '%s\n' "$out" | f '{ print $1, $6, $7, $12 }' | tr '\n' ' ')" "nobody 0 3 $n1_addr nobody 1 3 $n1_addr nobody 2 3 $n1_addr " "user nobody: every task runs as nobody with RANK, WORLD_SIZE and MASTER_ADDR"
out=$(timeout 60 "${as_nobody[@]}" srun -N1 "$TE_TOOL" env 2>&1)
like "$out" '^nccl-heartbeat += 900 +\(admin default: plugstack.conf argument 1\)' "user nobody: trainenv env works in the task"
out=$(timeout 60 "${as_nobody[@]}" srun -N2 sh -c '[ $SLURM_PROCID = 0 ] || exit 5' 2>&1)
like "$out" '^trainenv: rank 1 \(node n2, local rank 0\) exited with code 5 at .*: the first failure of this step$' "user nobody: the first-failure report reaches srun"
out=$(timeout 60 "${as_nobody[@]}" srun -N2 printenv TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC 2>&1 | sort -u)
is "$out" 900 "user nobody: the site's heartbeat"

done_testing
