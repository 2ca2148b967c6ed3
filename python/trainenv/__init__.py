"""trainenv: the job-wide barrier of a Slurm training job, from Python.

Call :func:`barrier` right before the first collective, so that no rank
starts its collective timeout (and PyTorch's NCCL watchdog) long before the
last rank has even started::

    import trainenv
    trainenv.barrier(timeout=600)           # every rank of the step
    torch.distributed.init_process_group("nccl", timeout=...)

It needs a PMIx server (``srun --mpi=pmix`` or ``MpiDefault=pmix``) and
one caller per Slurm task: under torchrun, only ``LOCAL_RANK`` 0 (see the
trainenv documentation). Standard library only: it calls libtrainenv
through ctypes, or the ``trainenv barrier`` command when the library
cannot be loaded.
"""
# SPDX-License-Identifier: LGPL-2.1-or-later

import ctypes
import os
import subprocess

__all__ = ["BarrierError", "barrier", "heartbeat", "version"]

try:
    from trainenv import _paths
except ImportError:  # running from a source tree
    _paths = None

_ERR_MAX = 1200
_lib = None


class BarrierError(RuntimeError):
    """The barrier failed: the message names the missing ranks and nodes."""


def _library():
    global _lib
    if _lib is not None:
        return _lib or None
    candidates = []
    if os.environ.get("TRAINENV_LIBRARY"):
        candidates.append(os.environ["TRAINENV_LIBRARY"])
    if _paths is not None:
        candidates.append(_paths.LIBTRAINENV)
    candidates.append("libtrainenv.so.0")
    for path in candidates:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        lib.trainenv_barrier.argtypes = [ctypes.c_double, ctypes.c_char_p,
                                         ctypes.c_size_t]
        lib.trainenv_barrier.restype = ctypes.c_int
        lib.trainenv_version.argtypes = []
        lib.trainenv_version.restype = ctypes.c_char_p
        lib.trainenv_heartbeat.argtypes = []
        lib.trainenv_heartbeat.restype = None
        _lib = lib
        return lib
    _lib = False
    return None


def _tool():
    if os.environ.get("TRAINENV_BIN"):
        return os.environ["TRAINENV_BIN"]
    if _paths is not None and os.path.exists(_paths.TRAINENV_BIN):
        return _paths.TRAINENV_BIN
    return "trainenv"


def barrier(timeout=None):
    """Wait until every rank of the Slurm step has called barrier().

    timeout: seconds (default: the step's --train-barrier value, else 300).
    Raises BarrierError, with one line naming the ranks and nodes that did
    not arrive, on timeout or when there is no PMIx server.
    """
    t = 0.0 if timeout is None else float(timeout)
    if timeout is not None and not t > 0:
        raise ValueError("timeout must be a positive number of seconds")
    lib = _library()
    if lib is not None:
        buf = ctypes.create_string_buffer(_ERR_MAX)
        if lib.trainenv_barrier(t, buf, _ERR_MAX) != 0:
            raise BarrierError(buf.value.decode("ascii", "replace"))
        return
    cmd = [_tool(), "barrier"]
    if timeout is not None:
        cmd += ["--timeout", repr(t)]
    proc = subprocess.run(cmd, stderr=subprocess.PIPE, check=False)
    if proc.returncode != 0:
        msg = proc.stderr.decode("ascii", "replace").strip()
        raise BarrierError(msg.replace("trainenv barrier: ", "", 1) or
                           "trainenv barrier exited with %d" % proc.returncode)


_beat = None


def heartbeat():
    """Say this rank makes progress: call it once per training step.

    With ``srun --train-stall=SECONDS``, a rank whose last call is older
    than SECONDS is reported by srun (with every rank's stack) and the step
    ends per --train-exit-action. It costs no system call (libtrainenv's
    trainenv_heartbeat(): a clock read and a store; its watchdog thread
    runs whatever the calling thread is blocked in). Without libtrainenv it
    warns once and does nothing.
    """
    global _beat
    if _beat is None:
        lib = _library()
        if lib is not None:
            _beat = lib.trainenv_heartbeat
        else:
            import warnings
            warnings.warn("trainenv.heartbeat(): libtrainenv cannot be "
                          "loaded: no stall watchdog", RuntimeWarning)
            _beat = _nothing
    _beat()


def _nothing():
    pass


def version():
    """The trainenv version of the loaded library (or of this module)."""
    lib = _library()
    if lib is not None:
        return lib.trainenv_version().decode("ascii", "replace")
    return "unknown"
