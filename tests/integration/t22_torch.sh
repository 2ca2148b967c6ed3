#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 3.6 on the real cluster with real clients: Debian's PyTorch
# (/usr/bin/python3, torch 1.13, CPU) running gloo DistributedDataParallel
# across 3 nodes x 2 ranks
#  - one Slurm task per rank, the script with no rendezvous code (env://);
#  - one torchrun per node, torchrun given nothing but trainenv's PET_*;
#  - --train-rank-env=no, the script doing its own rendezvous;
#  - the user recipes etc/examples/train.sbatch and torchrun.sbatch, through
#    sbatch --wait, exactly as shipped.
# Each rank checks an all_reduce (sum of ranks 0..5 = 15) and that a DDP
# step leaves the same weights on every rank.
# Single-quoted $VARS are for eval (te_seconds):
# shellcheck disable=SC2016
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"

plan 25

te_build_init
cluster_up --nodes 3 || bail_out "no cluster"
ok 0 "cluster is up, plugin $TE_PLUGIN"
/usr/bin/python3 -c 'import torch.distributed as d; assert d.is_available() and d.is_gloo_available()' ||
	bail_out "Debian's python3-torch with gloo is needed (tests/deps.sh installs it)"
use_trainenv nccl-heartbeat=600
examples=$TE_SRCDIR/etc/examples
py=$TE_SRCDIR/tests/integration/py
cp "$examples/ddp_gloo.py" "$examples/train.sbatch" "$examples/torchrun.sbatch" "$TE_WORK/"
n1_addr=$TE_CLUSTER_NET.11
good='all_reduce sum 15 \(expected 15\), weights equal on all ranks after a DDP step: True'
# Debian trixie's and sid's torch 2.x has no libuv: the task-per-rank runs
# get USE_LIBUV=0, the torchrun ones are skipped (tests/lib/itest.sh).
te_torch_store_env
no_torchrun=0
te_no_torchrun_store && no_torchrun=1

# ---------------------------------------------------------------- task per rank
te_seconds eval 'out=$(te_srun -t 180 -N3 --ntasks-per-node=2 /usr/bin/python3 "$py/ddp_check.py" ddp_gloo.py 2>&1)'
rc=$?
ok $rc "gloo DDP, srun -N3 --ntasks-per-node=2, no rendezvous code: every rank exits 0" || diag "$out"
diag "task per rank: $TE_SECONDS s"
is "$(printf '%s\n' "$out" | grep -cE "^rank [0-5]/6 on n[123] .*$good")" 6 "six ranks: all_reduce sum 15 and equal weights after a DDP step"
is "$(printf '%s\n' "$out" | sed -n 's/^env rank=\([0-9]\) world=6 .*/\1/p' | sort | tr '\n' ' ')" "0 1 2 3 4 5 " "the ranks got RANK 0..5 and WORLD_SIZE 6 from trainenv"
is "$(printf '%s\n' "$out" | sed -n 's/^env .* master=\([^:]*\):.*/\1/p' | sort -u)" "$n1_addr" "every rank got MASTER_ADDR $n1_addr (n1)"
is "$(printf '%s\n' "$out" | sed -n 's/^env .* heartbeat=\([^ ]*\)$/\1/p' | sort -u)" 600 "and the site's NCCL heartbeat"
is "$(printf '%s\n' "$out" | sed -n 's/^rank [0-5]\/6 on \(n[123]\) (local rank \([01]\)).*/\1:\2/p' | sort | tr '\n' ' ')" "n1:0 n1:1 n2:0 n2:1 n3:0 n3:1 " "two ranks per node, LOCAL_RANK 0 and 1"

# ---------------------------------------------------------------- torchrun per node
# Debian 12's torch 1.13 under Python 3.11: torchrun's default
# "--redirects 0 --tee 0" fails (Python 3.11's enum iteration skips
# Std.NONE); PET_REDIRECTS/PET_TEE give it working values, as
# etc/examples/torchrun.sbatch does. torch < 2 spells --nproc_per_node.
if [ $no_torchrun = 1 ]; then
	skip "$TE_WHY" 8
else
export PET_REDIRECTS=1 PET_TEE=1
te_seconds eval 'out=$(te_srun -t 180 -N3 --ntasks-per-node=1 --train-explain torchrun --nproc_per_node=2 "$py/ddp_check.py" ddp_gloo.py 2>&1)'
rc=$?
ok $rc "srun -N3 --ntasks-per-node=1 torchrun --nproc_per_node=2: every torchrun exits 0" || diag "$out"
diag "torchrun per node: $TE_SECONDS s"
like "$out" 'trainenv: launch style: torchrun \(auto: the command is torchrun\); 3 tasks on 3 nodes' "explain: torchrun style for the torchrun command"
is "$(printf '%s\n' "$out" | grep -cE "^\[default[01]\]:rank [0-5]/6 on n[123] .*$good")" 6 "six workers (two per torchrun): all_reduce sum 15 and equal weights"
is "$(printf '%s\n' "$out" | sed -n 's/^\[default[01]\]:env rank=\([0-9]\) world=6 .*/\1/p' | sort | tr '\n' ' ')" "0 1 2 3 4 5 " "torchrun gave its workers RANK 0..5 and WORLD_SIZE 6"
is "$(printf '%s\n' "$out" | sed -n 's/^\[default[01]\]:env .* group_rank=\([0-9]\) pet_nnodes=3 .*/\1/p' | sort | tr '\n' ' ')" "0 0 1 1 2 2 " "each torchrun was one node of three (GROUP_RANK from PET_NODE_RANK, PET_NNODES=3)"
is "$(printf '%s\n' "$out" | sed -n 's/^\[default[01]\]:env .* master=\([^:]*\):.*/\1/p' | sort -u)" "$n1_addr" "the workers meet at n1 ($n1_addr, PET_MASTER_ADDR)"
unset PET_REDIRECTS PET_TEE

# A bare `srun torchrun script`: the user's PET_NPROC_PER_NODE (kept, as any
# variable the user sets) and trainenv's PET_* are all torchrun needs.
out=$(env PET_NPROC_PER_NODE=2 PET_REDIRECTS=1 PET_TEE=1 timeout 180 \
	srun -N3 --ntasks-per-node=1 torchrun "$py/ddp_check.py" ddp_gloo.py 2>&1)
rc=$?
ok $rc "srun torchrun SCRIPT with no torchrun argument at all: every torchrun exits 0" || diag "$out"
is "$(printf '%s\n' "$out" | grep -cE "^\[default[01]\]:rank [0-5]/6 on n[123] .*$good")" 6 "six workers: all_reduce sum 15 and equal weights"
fi

# ---------------------------------------------------------------- own rendezvous
te_seconds eval 'out=$(te_srun -t 180 -N3 --ntasks-per-node=2 --train-rank-env=no /usr/bin/python3 "$py/ddp_own_rdzv.py" 2>&1)'
rc=$?
ok $rc "--train-rank-env=no, a script with its own rendezvous: every rank exits 0" || diag "$out"
diag "own rendezvous: $TE_SECONDS s"
is "$(printf '%s\n' "$out" | grep -cE '^own-rdzv rank [0-5]/6 leaked none all_reduce 15 ok True$')" 6 "six ranks: none saw a rank variable from trainenv, all_reduce sum 15"

# ---------------------------------------------------------------- sbatch recipes
# sbatch --wait polls at 2, 10, 42, ... s: the torchrun recipe goes through
# plain sbatch (its end is polled here), then the DDP recipe through
# sbatch --wait, one after the other so that each ends within 10 s.
cd "$TE_WORK" || bail_out "no $TE_WORK"
if [ $no_torchrun = 0 ]; then
	te_seconds eval 'job=$(sbatch --parsable -o "$TE_WORK/torchrun.out" torchrun.sbatch 2>"$TE_WORK/torchrun.sbatch.log")'
	st=$(wait_job_done "${job:-none}" 180)
	echo $? >"$TE_WORK/torchrun.rc"
	diag "torchrun.sbatch: job ${job:-none} $st"
fi
te_seconds eval 'te_sbatch_wait -t 180 -o "$TE_WORK/train.out" train.sbatch >"$TE_WORK/train.sbatch.log" 2>&1; echo $? >"$TE_WORK/train.rc"'
diag "train.sbatch with sbatch --wait: $TE_SECONDS s"
is "$(cat "$TE_WORK/train.rc" 2>&1)" 0 "sbatch --wait etc/examples/train.sbatch: the job succeeds" || diag "$(cat "$TE_WORK/train.sbatch.log" "$TE_WORK/train.out" 2>&1)"
out=$(cat "$TE_WORK/train.out" 2>&1)
is "$(printf '%s\n' "$out" | grep -cE "^rank [0-5]/6 on n[123] .*$good")" 6 "train.sbatch: six ranks, all_reduce sum 15, equal weights"
like "$out" 'trainenv: nccl-heartbeat += 900 +\(option: --train-nccl-heartbeat\)' "train.sbatch: its #SBATCH --train-nccl-heartbeat=900 beats the site default 600 in the step (explain in the job's output)"
like "$out" 'trainenv: launch style: task \(auto: one task per rank\); 6 tasks on 3 nodes' "train.sbatch: one task per rank"
if [ $no_torchrun = 1 ]; then
	skip "$TE_WHY" 3
else
[ "$(cat "$TE_WORK/torchrun.rc")" = 0 ] && [ "$st" = COMPLETED ]
ok $? "sbatch etc/examples/torchrun.sbatch: the job COMPLETED" || diag "$(cat "$TE_WORK/torchrun.sbatch.log" "$TE_WORK/torchrun.out" 2>&1)"
out=$(cat "$TE_WORK/torchrun.out" 2>&1)
is "$(printf '%s\n' "$out" | grep -cE "^\[default[01]\]:rank [0-5]/6 on n[123] .*$good")" 6 "torchrun.sbatch: six workers, all_reduce sum 15, equal weights"
like "$out" 'trainenv: launch style: torchrun \(auto: the command is torchrun\); 3 tasks on 3 nodes' "torchrun.sbatch: one torchrun per node"
fi
wait_gone "ddp_gloo.py" 15
ok $? "no training process is left on any node"

done_testing
