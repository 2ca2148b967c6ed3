#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A gloo DDP job that does its own rendezvous, as scripts written before
trainenv do (and as submitit-style helpers insist on): run with
--train-rank-env=no, it checks that trainenv exported none of the rank
variables, then builds init_method, rank and world size from Slurm's own
variables. Prints one line per rank; exits 1 when anything is wrong."""
import os
import subprocess
import sys

import torch
import torch.distributed as dist

leaked = [v for v in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR",
                      "MASTER_PORT", "PET_NNODES") if v in os.environ]
rank = int(os.environ["SLURM_PROCID"])
world = int(os.environ["SLURM_NTASKS"])
first = subprocess.run(["scontrol", "show", "hostnames",
                        os.environ["SLURM_STEP_NODELIST"]],
                       capture_output=True, text=True,
                       check=True).stdout.split()[0]
port = 15000 + int(os.environ["SLURM_JOB_ID"]) % 5000
dist.init_process_group("gloo", init_method=f"tcp://{first}:{port}",
                        rank=rank, world_size=world)
t = torch.tensor([float(rank)])
dist.all_reduce(t)
ok = not leaked and int(t.item()) == world * (world - 1) // 2
print(f"own-rdzv rank {rank}/{world} leaked {','.join(leaked) or 'none'} "
      f"all_reduce {int(t.item())} ok {ok}", flush=True)
dist.destroy_process_group()
sys.exit(0 if ok else 1)
