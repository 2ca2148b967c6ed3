#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A job whose ranks hang as an NCCL job does, for t93_hangnccl.sh: each
rank plays PyTorch's flight recorder (its monitor thread's pipe, made with
mkfifo at TORCH_NCCL_DEBUG_INFO_PIPE_FILE<rank>.pipe and opened
O_RDONLY|O_NONBLOCK; on a byte, a dump at TORCH_FR_DUMP_TEMP_FILE<rank>
as torch's pickler writes it: tests/unit/hang/fr_dumps.py), then sleeps.
Rank 3 completed all_reduce #1832 and never entered #1833, where the
others are (started).
Usage: hangnccl.py MODE READY_DIR MARKER
  exit     rank 0 exits once all ranks are in place; rank 1 also answers
           as NCCL RAS at NCCL_RAS_ADDR (2.30's text, rank 3 missing)
  hostile  rank 2's dump is a pickle that runs os.system("touch MARKER")
           when loaded; no RAS
READY_DIR/rank.R: "PID NCCL_RAS_ADDR PIPE_FILE TEMP_FILE" once in place."""
import os
import socket
import sys
import threading
import time


class Namespace:
    pass


def load_fr_dumps():
    """tests/unit/hang/fr_dumps.py's pickler and entries, without running
    its main() (which writes the unit test's dumps)."""
    path = os.path.join(os.environ["TE_SRCDIR"], "tests/unit/hang/fr_dumps.py")
    src = open(path).read().rsplit("\nmain()", 1)[0]
    ns = {"__name__": "fr_dumps"}
    exec(compile(src, path, "exec"), ns)
    m = Namespace()
    m.__dict__.update(ns)
    return m


fr_dumps = load_fr_dumps()

rank = int(os.environ["SLURM_PROCID"])
mode, ready, marker = sys.argv[1:4]
pipe_stem = os.environ.get("TORCH_NCCL_DEBUG_INFO_PIPE_FILE", "")
temp = os.environ.get("TORCH_FR_DUMP_TEMP_FILE",
                      os.environ.get("TORCH_NCCL_DEBUG_INFO_TEMP_FILE", ""))
ras_addr = os.environ.get("NCCL_RAS_ADDR", "")

RAS_REPLY = (
    "NCCL version 2.30.7 compiled with CUDA 12.9\n"
    "CUDA runtime version 12090, driver version 12090\n\n"
    "Job summary\n===========\n\n"
    "  Nodes  Processes         GPUs  Processes     GPUs\n"
    "(total)   per node  per process    (total)  (total)\n"
    "      2          2            1          4        4\n"
    "\nCommunicators... (0.00s)\n=============\n\n"
    "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n"
    "    #  in group  per comm  per node  per comm  in group\n"
    "    0         1         2         2         4         4   RUNNING  INCOMPLETE\n"
    "\nErrors\n======\n\n"
    "#0-0 (cf264af53edbe986) INCOMPLETE\n"
    "  Missing communicator data from 1 rank\n"
    "  Rank 3 -- GPU 1 managed by process 4242 on node 10.0.0.2\n\n"
    "Warnings\n========\n\n")


def ras_server():
    """NCCL RAS's client socket as 2.30 answers: the handshake, OK to
    TIMEOUT, the report to VERBOSE STATUS, then close."""
    host, port = ras_addr.rsplit(":", 1)
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host, int(port)))
    s.listen(8)
    while True:
        c, _ = s.accept()
        c.settimeout(5)
        got = b""
        try:
            while b"STATUS" not in got.upper():
                b = c.recv(4096)
                if not b:
                    break
                got += b
            c.sendall(b"SERVER PROTOCOL 2\nOK\n" + RAS_REPLY.encode())
        except OSError:
            pass
        c.close()


def dump():
    """What rank's flight recorder writes (version 2.10, two groups)."""
    if mode == "hostile" and rank == 2:
        import pickle
        return pickle.dumps(fr_dumps.Hostile(marker), protocol=2)
    dp, tp = ("0", "default_pg"), ("1", "tp")
    entries = [fr_dumps.entry(0, tp, 77, "broadcast", "completed")]
    last = 1832 if rank == 3 else 1833
    for seq in range(1830, last + 1):
        entries.append(fr_dumps.entry(len(entries), dp, seq, "all_reduce",
                                      "started" if seq == 1833 else "completed"))
    d = {"version": "2.10", "comm_lib_version": "2.30.7",
         "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1, 2, 3]"}},
         "entries": entries}
    return fr_dumps.TorchPickler().dumps(d)


def monitor(fd):
    """The monitor thread: a byte in the pipe, a dump."""
    while True:
        time.sleep(0.2)
        try:
            if not os.read(fd, 128):
                continue
        except BlockingIOError:
            continue
        with open(temp + str(rank), "wb") as f:
            f.write(dump())


path = pipe_stem + str(rank) + ".pipe"
if os.path.exists(path):
    os.unlink(path)
os.mkfifo(path, 0o600)
threading.Thread(target=monitor, daemon=True,
                 args=(os.open(path, os.O_RDONLY | os.O_NONBLOCK),)).start()
if mode == "exit" and rank == 1:
    threading.Thread(target=ras_server, daemon=True).start()
with open(os.path.join(ready, "rank.%d" % rank), "w") as f:
    f.write("%d %s %s %s\n" % (os.getpid(), ras_addr, pipe_stem, temp))
if mode == "exit" and rank == 0:
    for _ in range(300):
        if len([n for n in os.listdir(ready) if n.startswith("rank.")]) >= 4:
            break
        time.sleep(0.1)
    sys.exit(0)
time.sleep(3600)
