#!/usr/bin/python3
"""A job whose ranks hang where the hang tests (t80_hang.sh) look for them.
Usage: hang.py MODE [READY_DIR]
  exit    rank HANG_RANK (default 4) enters save_final() and sleeps; the
          others exit 0 at once (after ranks 0..n are all started, so that
          the hung rank is surely running when the first one exits)
  stacks  rank 1 sleeps in odd_one(), the others in common(); a thread of
          each sleeps in helper_thread()
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


if mode == "exit":
    if rank == int(os.environ.get("HANG_RANK", "4")):
        save_final()
    mark()
    time.sleep(1)
    sys.exit(0)
elif mode == "stacks":
    threading.Thread(target=helper_thread, daemon=True).start()
    if rank == 1:
        odd_one()
    else:
        common()
else:
    sys.exit(f"hang.py: unknown mode {mode}")
