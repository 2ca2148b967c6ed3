# SPDX-License-Identifier: GPL-2.0-or-later
# A training loop for the stragglers' tests (t92, t40): ITERS steps of
# STEP seconds, EXTRA more on the node SLOW_NODE names, each ending in an
# all_reduce of the tests' stand-in libnccl (STANDIN_LIB), which drives
# NCCL_PROFILER_PLUGIN as NCCL does and, with STANDIN_BARRIER_DIR, waits
# for every rank (nccl_standin_prof.c).
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
late = os.environ.get("SLOW_NODE", "") == os.environ.get("SLURMD_NODENAME")
iters, step, extra = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
for i in range(iters):
    time.sleep(step + (extra if late else 0))
    lib.ncclAllReduce(None, None, 1, 0, 0, comm, None)
lib.ncclCommDestroy(comm)
