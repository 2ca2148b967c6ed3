# SPDX-License-Identifier: GPL-2.0-or-later
# gloo_barrier.py ITERS: ITERS torch.distributed.barrier() calls (gloo) in
# one long-lived process after 10 of warm-up; rank 0 prints "median_us
# mean_us" per call.
import os, sys, time
import torch.distributed as dist

iters = int(sys.argv[1]) if len(sys.argv) > 1 else 100
dist.init_process_group("gloo")
dt = []
for i in range(-10, iters):
    t0 = time.perf_counter()
    dist.barrier()
    if i >= 0:
        dt.append((time.perf_counter() - t0) * 1e6)
if dist.get_rank() == 0:
    s = sorted(dt)
    print("%.1f %.1f" % (s[len(s) // 2], sum(dt) / len(dt)), flush=True)
dist.destroy_process_group()
