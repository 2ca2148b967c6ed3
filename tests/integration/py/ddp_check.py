#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Runs a user example (etc/examples/ddp_gloo.py) unchanged, after printing
what this rank found in its environment, for t22_torch.sh to check:
  env rank=R world=W local_rank=L master=ADDR:PORT group_rank=G pet_nnodes=N
(values "-" when unset). Usage: ddp_check.py EXAMPLE"""
import os
import runpy
import sys

g = os.environ.get
print(f"env rank={g('RANK', '-')} world={g('WORLD_SIZE', '-')} "
      f"local_rank={g('LOCAL_RANK', '-')} "
      f"master={g('MASTER_ADDR', '-')}:{g('MASTER_PORT', '-')} "
      f"group_rank={g('GROUP_RANK', '-')} pet_nnodes={g('PET_NNODES', '-')} "
      f"heartbeat={g('TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC', '-')}", flush=True)
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
