# SPDX-License-Identifier: LGPL-2.1-or-later
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

import ctypes
import os
import subprocess

__all__ = ["BarrierError", "barrier", "excluded_nodes", "first_world_size",
           "heartbeat", "restart_count", "version"]

try:
    from trainenv import _paths
except ImportError:  # running from a source tree
    _paths = None

_ERR_MAX = 1200
_lib = None
# The protocol this module speaks to trainenv's helpers: core/launch/version.h's
# TE_PROTOCOL_VERSION (tests/unit/test_barrier_proxy.sh checks they agree).
_PROTOCOL = 2
_MSG_MAX = 1400
# The longest barrier: the "barrier" row's upper bound in the settings table
# (core/settings/settings.c, te_settings[TE_S_BARRIER].hi = TE_WEEK_S);
# Python cannot include it, so tests/unit/test_barrier_proxy.sh checks this
# against what the built `trainenv barrier --timeout` accepts.
_BARRIER_MAX_S = 604800


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

    timeout: seconds (default: the step's --train-barrier value, else the
    setting's built-in, trainenv(8)).
    Raises BarrierError, with one line naming the ranks and nodes that did
    not arrive, on timeout or when there is no PMIx server.
    """
    t = 0.0 if timeout is None else float(timeout)
    if timeout is not None and not t > 0:
        raise ValueError("timeout must be a positive number of seconds")
    fd = _proxy_fd()
    if fd is not None:
        _proxy_barrier(fd, t)
        return
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


def _proxy_fd():
    """TRAINENV_BARRIER_FD ("FD:INODE"): the socket to this task's barrier
    proxy, which the plugin starts on the node for a step in a container
    (the image then needs neither libtrainenv nor libpmix); None without
    one, or when that descriptor is not that socket (closed, or reused for
    another file by a process that inherited only the variable)."""
    import stat
    fd, sep, ino = os.environ.get("TRAINENV_BARRIER_FD", "").partition(":")
    digits = set("0123456789")
    if not (sep and 1 <= len(fd) <= 5 and 1 <= len(ino) <= 20 and
            set(fd) <= digits and set(ino) <= digits):
        return None
    fd = int(fd)
    if not 3 <= fd <= 65535 or int(ino) == 0:
        return None
    try:
        st = os.fstat(fd)
    except OSError:
        return None
    if not stat.S_ISSOCK(st.st_mode) or st.st_ino != int(ino):
        return None
    return fd


def _proxy_ask(fd, request):
    """Sends request on the task's shared socket fd with a reply channel of
    its own (one end of a fresh socket pair, SCM_RIGHTS): the proxy answers
    there only, so another process of the task never reads this answer,
    nor this one another's. Returns the socket to read the answer from."""
    import array
    import socket
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    # a socket object over the inherited descriptor only for sendmsg, then
    # let go (detach): it must not close the descriptor, nor leave it
    # non-blocking for every holder (a default timeout would)
    blocking = os.get_blocking(fd)
    shared = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET, 0, fd)
    try:
        os.set_blocking(fd, blocking)
        shared.sendmsg([request], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                    array.array("i", [theirs.fileno()]))])
    except OSError:
        mine.close()
        raise
    finally:
        shared.detach()
        theirs.close()
    return mine


def _proxy_barrier(fd, timeout):
    """One request to the proxy, one answer (core/launch/barrier_proxy.h): a new
    barrier for each call ("each"). The proxy keeps the deadline (the given
    one, else the step's); this waits for its answer that long and a minute
    more, or until the proxy is gone (end of file)."""
    import select
    import time
    t = timeout if 0 < timeout <= _BARRIER_MAX_S else 0.0
    wait = (t or float(_BARRIER_MAX_S)) + 60
    mine = None
    try:
        mine = _proxy_ask(fd, b"trainenv-barrier %d %.3f each\n" %
                          (_PROTOCOL, t))
        # the answer on this call's own channel; the shared socket only
        # for the proxy's end (POLLHUP comes without asking)
        poller = select.poll()
        poller.register(mine.fileno(), select.POLLIN)
        poller.register(fd, 0)
        end = time.monotonic() + wait
        while True:
            got = poller.poll(max(0, min(60.0, end - time.monotonic())) * 1000)
            if got:
                break
            if time.monotonic() >= end:
                raise BarrierError("the barrier proxy did not answer in "
                                   "%d s" % wait)
        answer = b""
        if any(f == mine.fileno() for f, _ in got):
            answer = os.read(mine.fileno(), _MSG_MAX + 1)
    except OSError as e:
        raise BarrierError("the barrier proxy (descriptor %d): %s" % (fd, e))
    finally:
        if mine is not None:
            mine.close()
    if answer == b"ok\n":
        return
    text = answer.decode("ascii", "replace")
    if (answer.startswith(b"error ") and answer.endswith(b"\n") and
            answer.count(b"\n") == 1 and len(answer) > 7):
        raise BarrierError("".join(c if c.isprintable() else " "
                                   for c in text[6:-1]))
    if not answer:
        raise BarrierError("the barrier proxy went away before it answered "
                           "(its node's trainenv-container ended)")
    raise BarrierError("an unreadable answer from the barrier proxy "
                       "(%d bytes)" % len(answer))


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


def restart_count():
    """How often this job was started again: relaunches inside the
    allocation (--train-spares) and requeues (--train-requeue) together;
    0 for the first run or without either option."""
    return _env_count("TRAINENV_RESTART", 0)


def excluded_nodes():
    """The nodes the job's restarts left out, in order: a list of names
    (empty when none)."""
    text = os.environ.get("TRAINENV_EXCLUDED_NODES", "")
    return [n for n in text.split(",") if n]


def first_world_size():
    """The number of ranks of this step's first run, before any relaunch
    inside the allocation (--train-spares), or
    WORLD_SIZE's value when trainenv did not set it; None when neither is
    known. A relaunch keeps it: the spare takes the failed node's place."""
    size = _env_count("TRAINENV_FIRST_WORLD_SIZE", None)
    return size if size is not None else _env_count("WORLD_SIZE", None)


def _env_count(name, default):
    text = os.environ.get(name, "")
    return int(text) if text.isdigit() else default


def version():
    """The trainenv version of the loaded library (or of this module)."""
    lib = _library()
    if lib is not None:
        return lib.trainenv_version().decode("ascii", "replace")
    return "unknown"
