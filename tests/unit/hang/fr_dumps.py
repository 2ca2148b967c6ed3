#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# Writes the flight recorder dumps tests/unit/hang/test_flightrec reads,
# into OUTDIR, at test time:
#   hang.R.torch  rank R's dump as torch::jit::Pickler writes it (an
#                 emulation of pickler.cpp, opcode for opcode: PROTO 2,
#                 memoized BINUNICODE strings, BININT1/BININT2/BININT/LONG1
#                 8, BINFLOAT, EMPTY_DICT+MARK+SETITEMS, EMPTY_LIST+MARK+
#                 APPENDS, TUPLE2, frames shared by BINPUT/BINGET), checked
#                 here to load with pickle.loads as the same dict;
#   hang.R.p2 .p4 .p5  the same dict by Python's pickle, protocols 2, 4, 5;
#   old.R.torch   a dump of version 1.4 (PyTorch 2.2: seq_id, pg_id);
#   scalars.p2 .p4 .p5  a list of every scalar kind the reader takes;
#   bytes.p5      a bytes value (protocol 2 pickles bytes with a REDUCE);
#   hostile.p2 .p4  a pickle whose loading runs os.system("touch MARKER").
# The hang: 8 ranks; in group 0 (default_pg) rank 4 completed all_reduce
# #1832 and never entered #1833, where all others are (started); rank 0
# also has a p2p send recorded after it; in group 1 (tp) all completed
# broadcast #77.
# Usage: fr_dumps.py OUTDIR MARKER
import os
import pickle
import struct
import sys


class TorchPickler:
    """What torch/csrc/jit/serialization/pickler.cpp emits for an IValue
    made of dicts, lists, tuples, str, int, float, bool and None with
    tag_aggregates off (TraceUtils.h's pickle_str)."""

    def __init__(self):
        self.out = bytearray(b"\x80\x02")
        self.memo_id = 0
        self.strings = {}
        self.shared = {}

    def binput(self):
        if self.memo_id <= 255:
            self.out += b"q" + bytes([self.memo_id])
        else:
            self.out += b"r" + struct.pack("<I", self.memo_id)
        self.memo_id += 1
        return self.memo_id - 1

    def binget(self, i):
        if i <= 255:
            self.out += b"h" + bytes([i])
        else:
            self.out += b"j" + struct.pack("<I", i)

    def push(self, v, shared=()):
        if id(v) in self.shared:
            return self.binget(self.shared[id(v)])
        if v is None:
            self.out += b"N"
        elif v is True or v is False:
            self.out += b"\x88" if v else b"\x89"
        elif isinstance(v, int):
            if 0 <= v <= 255:
                self.out += b"K" + bytes([v])
            elif 0 <= v <= 65535:
                self.out += b"M" + struct.pack("<H", v)
            elif -(2**31) <= v < 2**31:
                self.out += b"J" + struct.pack("<i", v)
            else:
                self.out += b"\x8a\x08" + struct.pack("<q", v)
        elif isinstance(v, float):
            self.out += b"G" + struct.pack(">d", v)
        elif isinstance(v, str):
            if v in self.strings:
                return self.binget(self.strings[v])
            b = v.encode()
            self.out += b"X" + struct.pack("<I", len(b)) + b
            self.strings[v] = self.binput()
        elif isinstance(v, tuple):
            if len(v) <= 3:
                for x in v:
                    self.push(x, shared)
                self.out += [b")", b"\x85", b"\x86", b"\x87"][len(v)]
            else:
                self.out += b"("
                for x in v:
                    self.push(x, shared)
                self.out += b"t"
        elif isinstance(v, list):
            self.out += b"]("
            for x in v:
                self.push(x, shared)
            self.out += b"e"
        elif isinstance(v, dict):
            self.out += b"}("
            for k, x in v.items():
                self.push(k, shared)
                self.push(x, shared)
            self.out += b"u"
        else:
            raise TypeError(type(v))
        if id(v) in shared:  # an IValue with use_count > 1
            self.shared[id(v)] = self.binput()

    def dumps(self, v, shared=()):
        self.push(v, {id(x) for x in shared})
        self.out += b"."
        return bytes(self.out)


FRAMES = [
    {"name": "all_reduce", "filename": "torch/distributed/distributed_c10d.py", "line": 2501},
    {"name": "train_step", "filename": "/home/u/train.py", "line": 88},
]


def entry(rid, pg, seq, op, state, p2p=False):
    name, desc = pg
    return {
        "frames": [FRAMES[0], FRAMES[1]],
        "record_id": rid,
        "pg_id": int(name),
        "process_group": (name, desc),
        "thread_name": "pt_main_thread",
        "thread_id": "140227",
        "collective_seq_id": seq,
        "p2p_seq_id": 3 if p2p else 0,
        "op_id": rid + 1,
        "profiling_name": "nccl:" + op,
        "time_created_ns": 1764480000000000000 + rid * 1000,
        "duration_ms": 0.25,
        "input_sizes": [[1024, 1024]],
        "input_dtypes": ["Float"],
        "output_sizes": [[1024, 1024]],
        "output_dtypes": ["Float"],
        "state": state,
        "time_discovered_started_ns": None if state == "scheduled" else 1764480000000001000,
        "time_discovered_completed_ns": 1764480000000002000 if state == "completed" else None,
        "retired": state == "completed",
        "timeout_ms": 600000,
        "is_p2p": p2p,
    }


def hang_dump(rank):
    dp, tp = ("0", "default_pg"), ("1", "tp")
    last = 1832 if rank == 4 else 1833
    entries = [entry(0, tp, 77, "broadcast", "completed")]
    for seq in range(1828, last + 1):
        state = "started" if seq == 1833 else "completed"
        entries.append(entry(len(entries), dp, seq, "all_reduce", state))
    if rank == 0:
        entries.append(entry(len(entries), dp, 1833, "send", "started", True))
    return {
        "version": "2.10",
        "pg_config": {
            "0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1, 2, 3, 4, 5, 6, 7]"},
            "1": {"name": "1", "desc": "tp", "ranks": "[0, 1, 2, 3, 4, 5, 6, 7]"},
        },
        "comm_lib_version": "2.21.5",
        "pg_status": {
            "0": {"last_enqueued_collective": last, "last_started_collective": last,
                  "last_completed_collective": 1832},
        },
        "entries": entries,
    }


def old_dump(rank):
    """Version 1.4 (PyTorch 2.2): seq_id, pg_id, no process_group."""
    entries = []
    for seq in range(8, 11 - rank):
        entries.append({
            "record_id": seq, "pg_id": 0, "seq_id": seq, "op_id": seq,
            "profiling_name": "nccl:all_reduce", "time_created_ns": 17644800 + seq,
            "input_sizes": [[4]], "output_sizes": [[4]],
            "state": "started" if seq == 10 else "completed",
            "time_discovered_started_ns": 1, "time_discovered_completed_ns": None,
            "retired": False, "frames": [],
        })
    return {"entries": entries, "version": "1.4", "pg_config": {0: [0, 1]}}


class Hostile:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, ("touch " + self.marker,))


SCALARS = [-1, 255, 256, 65536, -(2**31), 2**40, -(2**63), 2**63 - 1, 1.5,
           True, False, None, "\u00fcn\u00ef", ("t", 1), {"k": [1, 2]}]


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def main():
    out, marker = sys.argv[1], sys.argv[2]
    for rank in range(8):
        d = hang_dump(rank)
        torch = TorchPickler().dumps(d, FRAMES)
        if pickle.loads(torch) != d:
            sys.exit("the torch emulation does not load as the dump")
        write(os.path.join(out, "hang.%d.torch" % rank), torch)
        for proto in (2, 4, 5):
            write(os.path.join(out, "hang.%d.p%d" % (rank, proto)),
                  pickle.dumps(d, protocol=proto))
    for rank in range(2):
        write(os.path.join(out, "old.%d.torch" % rank), TorchPickler().dumps(old_dump(rank)))
    for proto in (2, 4, 5):
        write(os.path.join(out, "scalars.p%d" % proto), pickle.dumps(SCALARS, protocol=proto))
    write(os.path.join(out, "bytes.p5"), pickle.dumps(b"by\x00tes", protocol=5))
    for proto in (2, 4):
        write(os.path.join(out, "hostile.p%d" % proto), pickle.dumps(Hostile(marker), protocol=proto))


main()
