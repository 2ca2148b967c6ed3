#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Apptainer's copies of trainenv's variables (issue 24, item 7), on the real cluster: every task also gets APPTAINERENV_NAME and SINGULARITYENV_NAME for each variable trainenv set (rank variables, MASTER_*, the timeout knobs, TRAINENV_*), with the task's values, and none for the user's own variables or LD_PRELOAD. Apptainer is not available here (not packaged by Debian): a stand-in applies its documented rule (--cleanenv: an empty environment, then each APPTAINERENV_NAME as NAME) and the program must see what trainenv decided.
# Single-quoted $VARS are for the tasks' shells:
# shellcheck disable=SC2016
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"

plan 12

te_build_init
cluster_up --nodes 2 || bail_out "no cluster"
use_trainenv "nccl-heartbeat=900" "enforce=nccl-heartbeat"

# Each task writes its own environment to env.RANK and, to inside.RANK,
# what a program started as 'apptainer exec --cleanenv' would see: nothing
# of the task's environment but each APPTAINERENV_NAME as NAME.
cleanenv='env | sort >"$0/env.$SLURM_PROCID"; env | sed -n "s/^APPTAINERENV_//p" | sort >"$0/inside.$SLURM_PROCID"'
rm -f "$TE_WORK"/env.* "$TE_WORK"/inside.*
out=$(MY_VAR=mine APPTAINERENV_RANK=99 te_srun -t 60 -N2 --ntasks-per-node=2 \
	--train-nccl-async-errors=tear-down sh -c "$cleanenv" "$TE_WORK" 2>&1)
ok $? "a 2x2 step runs" || diag "$out"
task_env=$(cat "$TE_WORK"/env.* 2>/dev/null)
inside=$(cat "$TE_WORK"/inside.* 2>/dev/null)
diag "$(grep -E '^(APPTAINER|SINGULARITY)ENV_' "$TE_WORK/env.0" 2>&1 | cut -c1-160)"

for v in RANK WORLD_SIZE LOCAL_RANK MASTER_ADDR MASTER_PORT; do
	a=$(grep -c "^APPTAINERENV_$v=" <<<"$task_env")
	s=$(grep -c "^SINGULARITYENV_$v=" <<<"$task_env")
	[ "$a" = 4 ] && [ "$s" = 4 ] || { echo "# $v: $a APPTAINERENV_, $s SINGULARITYENV_"; false; }
done
ok $? "every task has APPTAINERENV_ and SINGULARITYENV_ copies of RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT"
is "$(grep -E '^(APPTAINER|SINGULARITY)ENV_RANK=' <<<"$task_env" | sed 's/.*=//' | sort | uniq -c | awk '{print $1 "x" $2}' | tr '\n' ' ')" \
	"2x0 2x1 2x2 2x3 " "the copies carry each task's own rank"
is "$(grep -c '^APPTAINERENV_RANK=99$' <<<"$task_env")" 0 "a stale APPTAINERENV_RANK of the user's is replaced"
is "$(grep -c '^APPTAINERENV_TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC=900$' <<<"$task_env")" 4 "the enforced heartbeat (900)"
is "$(grep -c '^SINGULARITYENV_TORCH_NCCL_ASYNC_ERROR_HANDLING=1$' <<<"$task_env")" 4 "a knob of the user's option"
is "$(grep -c '^APPTAINERENV_TRAINENV_SETTINGS=' <<<"$task_env")" 4 "trainenv's own TRAINENV_SETTINGS"
is "$(grep -cE '^(APPTAINER|SINGULARITY)ENV_(MY_VAR|PATH|HOME|LD_PRELOAD|SLURM_[A-Z_]*)=' <<<"$task_env")" 0 \
	"no copy of the user's own variables, PATH, HOME, LD_PRELOAD or Slurm's"

# --cleanenv as Apptainer documents it: the program sees trainenv's values
same=0
for r in 0 1 2 3; do
	want=$(grep -E '^(RANK|WORLD_SIZE|MASTER_ADDR|MASTER_PORT|TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC)=' "$TE_WORK/env.$r" 2>/dev/null)
	got=$(grep -E '^(RANK|WORLD_SIZE|MASTER_ADDR|MASTER_PORT|TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC)=' "$TE_WORK/inside.$r" 2>/dev/null)
	[ "$(wc -l <<<"$want")" = 5 ] && [ "$want" = "$got" ] && same=$((same + 1))
done
is "$same" 4 "after --cleanenv, each task's program has its RANK, WORLD_SIZE, MASTER_* and the heartbeat as trainenv set them"
! grep -q '^MY_VAR=' <<<"$inside" && grep -q '^MY_VAR=mine$' <<<"$task_env"
ok $? "and not the user's MY_VAR (--cleanenv dropped it, trainenv did not bring it)"

out=$(te_srun -t 60 -N1 --train=off sh -c 'env | grep -cE "^(APPTAINER|SINGULARITY)ENV_"; exit 0' 2>&1)
is "$out" 0 "--train=off: no copies"
out=$(te_srun -t 60 -N1 --train-rank-env=no sh -c 'env | grep -cE "^APPTAINERENV_(RANK|MASTER_ADDR)="; exit 0' 2>&1)
is "$out" 0 "--train-rank-env=no: no rank variable, and no copy of one"

done_testing
