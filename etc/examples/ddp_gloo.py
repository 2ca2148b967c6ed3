#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A tiny PyTorch DistributedDataParallel job with the gloo (CPU) backend.

There is no rendezvous code: init_process_group() reads RANK, WORLD_SIZE,
MASTER_ADDR and MASTER_PORT from the environment ("env://"). Under Slurm with
trainenv, every task of `srun` gets them (one task per rank); under torchrun,
torchrun sets them for its workers (trainenv gives torchrun its PET_*
arguments). Run it with train.sbatch or torchrun.sbatch next to this file.
"""
import os
import socket

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()

    # Every rank adds its rank: the sum is 0 + 1 + ... + (world - 1).
    total = torch.tensor([float(rank)])
    dist.all_reduce(total)
    expected = world * (world - 1) // 2

    # One training step of a tiny model on rank-dependent data: DDP averages
    # the gradients, so every rank ends the step with the same weights.
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(4, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.full((8, 4), float(rank + 1))
    loss = torch.nn.functional.mse_loss(model(x), torch.zeros(8, 1))
    loss.backward()
    opt.step()
    mine = model.module.weight.detach().clone()
    weights = [torch.zeros_like(mine) for _ in range(world)]
    dist.all_gather(weights, mine)
    same = all(torch.equal(w, weights[0]) for w in weights)

    print(f"rank {rank}/{world} on {socket.gethostname()} "
          f"(local rank {os.environ.get('LOCAL_RANK')}): "
          f"all_reduce sum {int(total.item())} (expected {expected}), "
          f"weights equal on all ranks after a DDP step: {same}", flush=True)

    # Tear down in order, while every tensor a collective used is still
    # referenced here: torch 1.13's gloo process group can deadlock at
    # interpreter exit when its worker thread drops the last reference to a
    # Python tensor while the main thread, holding the GIL, joins it.
    dist.barrier()
    del model, opt
    dist.destroy_process_group()
    return 0 if int(total.item()) == expected and same else 1


if __name__ == "__main__":
    raise SystemExit(main())
