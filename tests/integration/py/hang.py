#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A job whose ranks hang where the hang tests (t80_hang.sh) look for them.
Usage: hang.py MODE [READY_DIR]
  exit    rank HANG_RANK (default 4) enters save_final() and sleeps; the
          others exit 0 at once (after ranks 0..n are all started, so that
          the hung rank is surely running when the first one exits)
  stacks  rank 1 sleeps in odd_one(), the others in common(); a thread of
          each sleeps in helper_thread()
  beat    every rank calls trainenv.heartbeat() every 0.1 s for RUN_FOR
          seconds (default: for ever), then exits 0; rank STALL_RANK
          (default 1, -1: none) stops after 2 s and sleeps in stuck()
  deep    every rank below EXIT_RANK (default: none) sleeps 40 levels deep
          in a recursion through functions of long names of its own
          (rankR_levelNN_...), so that its record is well over 1 KiB; the
          others exit 0 once the deep ones are in place. READY_DIR/rank.R
          holds "PID NODE".
READY_DIR: each rank touches READY_DIR/rank.R once it is where it stays.
The rank is RANK (torchrun) or SLURM_PROCID."""
import os
import sys
import threading
import time

rank = int(os.environ.get("RANK", os.environ.get("SLURM_PROCID", "0")))
mode = sys.argv[1]
ready = sys.argv[2] if len(sys.argv) > 2 else None


def mark():
    if ready:
        with open(os.path.join(ready, f"rank.{rank}"), "w") as f:
            f.write(str(os.getpid()))


def save_final():
    mark()
    time.sleep(3600)


def common():
    mark()
    time.sleep(3600)


def odd_one():
    mark()
    time.sleep(3600)


def helper_thread():
    time.sleep(3600)


def stuck():
    mark()
    time.sleep(3600)


if mode == "exit":
    if rank == int(os.environ.get("HANG_RANK", "4")):
        save_final()
    mark()
    # every rank started (their files), so that the hung one is surely
    # running and the others exit together, whatever the launch skew
    world = int(os.environ.get("WORLD_SIZE", os.environ.get("SLURM_NTASKS", "0")))
    t0 = time.monotonic()
    while ready and world and time.monotonic() - t0 < 60 and len(
            [f for f in os.listdir(ready) if f.startswith("rank.")]) < world:
        time.sleep(0.1)
    time.sleep(1)
    sys.exit(0)
elif mode == "stacks":
    threading.Thread(target=helper_thread, daemon=True).start()
    if rank == 1:
        odd_one()
    else:
        common()
elif mode == "beat":
    import trainenv
    run_for = float(os.environ.get("RUN_FOR", "1e9"))
    stall_rank = int(os.environ.get("STALL_RANK", "1"))
    t0 = time.monotonic()
    while time.monotonic() - t0 < run_for:
        trainenv.heartbeat()
        if rank == stall_rank and time.monotonic() - t0 > 2:
            stuck()
        time.sleep(0.1)
    mark()
elif mode == "deep":
    exit_rank = int(os.environ.get("EXIT_RANK", "-1"))
    if 0 <= exit_rank <= rank:
        while ready and len([f for f in os.listdir(ready)
                             if f.startswith("rank.")]) < exit_rank:
            time.sleep(0.1)
        sys.exit(0)
    node = os.environ.get("SLURMD_NODENAME", "?")

    def bottom():
        if ready:
            with open(os.path.join(ready, f"rank.{rank}"), "w") as f:
                f.write(f"{os.getpid()} {node}")
        time.sleep(3600)

    levels = []
    for level in range(40):
        name = (f"rank{rank}_level{level:02d}_of_a_recursion_with_a_long_"
                f"function_name_that_fills_the_record")
        code = (f"def {name}(n):\n"
                f"    if n == 0:\n"
                f"        bottom()\n"
                f"    else:\n"
                f"        levels[n - 1](n - 1)\n")
        scope = {"levels": levels, "bottom": bottom}
        exec(code, scope)
        levels.append(scope[name])

    levels[39](39)
else:
    sys.exit(f"hang.py: unknown mode {mode}")
