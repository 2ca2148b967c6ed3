# SPDX-License-Identifier: GPL-2.0-or-later
# A training loop for the stragglers' tests (t92, t40): ITERS steps of
# STEP seconds, EXTRA more on the nodes SLOW_NODE names (a comma list),
# each ending in an
# all_reduce of the tests' stand-in libnccl (STANDIN_LIB), which drives
# NCCL_PROFILER_PLUGIN as NCCL does and, with STANDIN_BARRIER_DIR, waits
# for every rank (nccl_standin_prof.c). With STRAG_CKPT_DIR, rank 0 writes
# a checkpoint file there every STRAG_CKPT_EVERY seconds (default 3); with
# STRAG_SAY=1 each rank says where it runs and that it finished (t94).
# Usage: strag_train.py ITERS STEP EXTRA
import ctypes
import os
import sys
import time

lib = ctypes.CDLL(os.environ["STANDIN_LIB"])


class UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_char * 128)]


uid = UniqueId(b"strag_train".ljust(128, b"x"))
comm = ctypes.c_void_p()
rank, n = int(os.environ["SLURM_PROCID"]), int(os.environ["SLURM_NTASKS"])
if lib.ncclCommInitRank(ctypes.byref(comm), n, uid, rank) != 0:
    sys.exit(3)
late = os.environ.get("SLURMD_NODENAME") in os.environ.get("SLOW_NODE", "").split(",")
iters, step, extra = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
say = os.environ.get("STRAG_SAY") == "1"
restart = os.environ.get("TRAINENV_RESTART", "0")
if say:
    print("rank %d of %d on %s restart %s"
          % (rank, n, os.environ.get("SLURMD_NODENAME"), restart), flush=True)
ckpt_dir = os.environ.get("STRAG_CKPT_DIR") if rank == 0 else None
every = float(os.environ.get("STRAG_CKPT_EVERY", "3"))
last_ckpt = time.monotonic()
for i in range(iters):
    time.sleep(step + (extra if late else 0))
    lib.ncclAllReduce(None, None, 1, 0, 0, comm, None)
    if ckpt_dir and time.monotonic() - last_ckpt >= every:
        with open(os.path.join(ckpt_dir, "ckpt_r%s_%d.pt" % (restart, i)), "w") as f:
            f.write("step %d\n" % i)
        last_ckpt = time.monotonic()
lib.ncclCommDestroy(comm)
if say:
    print("done rank %d restart %s" % (rank, restart), flush=True)
