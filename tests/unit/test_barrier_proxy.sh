#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The barrier proxy end to end without Slurm (TAP): the real
# trainenv-container barrier-proxy on one end of a socket pair, the Python
# module and trainenv-nccl.so on the other, as a program in a container
# has them (TRAINENV_BARRIER_FD). Without a PMIx server the barrier
# fails: its reason must come back through the proxy, once per task, and
# the proxy must end when the program's end closes. The barrier itself
# through the proxy, on a cluster in a pyxis container: t40_pyxis.sh.
# Environment: TE_BUILDDIR (default: the current directory), TE_SRCDIR
# (default: this file's checkout).
set -u
build=${TE_BUILDDIR:-$PWD}
src=${TE_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd -P)}
# shellcheck source=../lib/unit_check.sh
. "$src/tests/lib/unit_check.sh"

proxy=$build/trainenv-container
shim=$build/.libs/trainenv-nccl.so
proto=$(sed -n 's/^#define TE_PROTOCOL_VERSION \([0-9]*\)$/\1/p' "$src/core/launch/version.h")
pyproto=$(sed -n 's/^_PROTOCOL = \([0-9]*\)$/\1/p' "$src/python/trainenv/__init__.py")
check "$([ -n "$proto" ] && [ "$proto" = "$pyproto" ] && echo 0 || echo 1)" \
	"the Python module speaks core/launch/version.h's protocol ($pyproto, $proto)"
# the module's one copy of the barrier's bound against the settings
# table's row, as the built tool reports it
pymax=$(sed -n 's/^_BARRIER_MAX_S = \([0-9]*\)$/\1/p' "$src/python/trainenv/__init__.py")
if [ -x "$build/trainenv" ]; then
	cmax=$("$build/trainenv" barrier --timeout 99999999999 2>&1 | sed -n 's/.*in (0, \([0-9]*\)\]$/\1/p')
	check "$([ -n "$pymax" ] && [ "$pymax" = "$cmax" ] && echo 0 || echo 1)" \
		"the Python module's _BARRIER_MAX_S is the barrier row's bound ($pymax, trainenv barrier says $cmax)"
fi
if [ ! -x "$proxy" ] || [ ! -f "$shim" ] || ! command -v python3 >/dev/null; then
	echo "1..$n # SKIP trainenv-container, trainenv-nccl.so or python3 is not there (build first)"
	exit 0
fi

# python3 with a socket pair, the proxy on one end and
# the caller's end in TRAINENV_BARRIER_FD; what it prints, then the
# proxy's exit after the caller's end closed.
out=$(env -i PATH=/usr/bin:/bin PYTHONPATH="$src/python" PROXY="$proxy" \
	SHIM="$shim" PROTO="$proto" python3 - 2>&1 <<'EOF'
import os, socket, subprocess, sys, time
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
p = subprocess.Popen([os.environ["PROXY"], "barrier-proxy", "--fd",
                      str(b.fileno())], pass_fds=[b.fileno()],
                     stdin=subprocess.DEVNULL)
b.close()
os.set_inheritable(a.fileno(), True)
os.environ["TRAINENV_BARRIER_FD"] = "%d:%d" % (a.fileno(), os.fstat(a.fileno()).st_ino)
import trainenv
for i in (1, 2):
    try:
        trainenv.barrier()
        print("py%d ok" % i)
    except trainenv.BarrierError as e:
        print("py%d error %s" % (i, e))
# the shim in a process of its own, given the same socket
r = subprocess.run([sys.executable, "-c",
                    "import ctypes; print('shim rc', ctypes.CDLL(None)."
                    "ncclCommInitRank(None, 1, None, 0))"],
                   env=dict(os.environ, LD_PRELOAD=os.environ["SHIM"]),
                   pass_fds=[a.fileno()], capture_output=True, text=True)
print(r.stdout.strip())
print("shimerr", r.stderr.strip().replace("\n", " | "))
# another protocol, junk
a.send(b"trainenv-barrier %d 0 once\n" % (int(os.environ["PROTO"]) + 1))
print("proto", a.recv(2000).decode())
a.send(b"hello\n")
print("junk", a.recv(2000).decode())
# a stray empty datagram from any process of the task is no end of the
# program's end: the proxy stays and answers the next barrier
a.send(b"")
try:
    trainenv.barrier()
    print("afterempty ok")
except trainenv.BarrierError as e:
    print("afterempty error %s" % e)
# another process of the task asks on the same socket ("once", as an
# older client does, without a reply channel; of another protocol, so
# that its answer differs from a barrier's) and does not read its answer
# yet (it waits for it to be there); then this one asks "each": it must
# get its own answer, never the other's
q = subprocess.run([sys.executable, "-c", """if 1:
    import os, socket, sys
    fd = int(sys.argv[1])
    os.write(fd, b"trainenv-barrier %d 0 once\\n" % int(sys.argv[2]))
    s = socket.socket(fileno=fd)
    s.recv(2000, socket.MSG_PEEK)  # its answer is queued, unread
    s.detach()
    print("asked")""", str(a.fileno()), str(int(os.environ["PROTO"]) + 1)],
                   pass_fds=[a.fileno()], capture_output=True, text=True,
                   timeout=20)
print("other", (q.stdout.strip() + " " + q.stderr.strip()).strip().replace("\n", " | "))
try:
    trainenv.barrier()
    print("own ok")
except trainenv.BarrierError as e:
    print("own error %s" % e)
a.setblocking(False)
try:
    print("left", a.recv(2000).decode().strip())
except BlockingIOError:
    print("left none")
a.setblocking(True)
a.close()
t0 = time.time()
try:
    rc = p.wait(timeout=10)
except subprocess.TimeoutExpired:
    p.kill()
    rc = "still running"
print("proxy exit", rc, "%.1f" % (time.time() - t0))
EOF
)
get() { printf '%s\n' "$out" | sed -n "s/^$1 //p"; }
py1=$(get py1)
check "$(case $py1 in "error "*PMIx*) echo 0 ;; *) echo 1 ;; esac)" \
	"trainenv.barrier() without a PMIx server: the proxy's barrier fails and its reason comes back" "$out"
check "$(case $py1 in "error "*PMIx*) [ "$(get py2)" = "$py1" ] && echo 0 || echo 1 ;; *) echo 1 ;; esac)" \
	"  a second call asks again and gets the same reason" "$out"
check "$([ "$(get 'shim rc')" = 2 ] && echo 0 || echo 1)" \
	"trainenv-nccl.so through the proxy: ncclCommInitRank fails (ncclSystemError) without NCCL being entered" "$out"
shimerr=$(get shimerr)
check "$(case $shimerr in "trainenv: rank ?: the barrier before the first NCCL communicator failed, NCCL not entered: "*PMIx*) echo 0 ;; *) echo 1 ;; esac)" \
	"  and says why in one line, the proxy's reason" "$out"
check "$(case $shimerr in *"cannot load"*|*libtrainenv*) echo 1 ;; *) echo 0 ;; esac)" \
	"  without loading libtrainenv" "$out"
check "$(case $(get proto) in "error trainenv in the container speaks protocol $((proto + 1)), the node's barrier proxy $proto (trainenv "*"): install the same trainenv on every node"*) echo 0 ;; *) echo 1 ;; esac)" \
	"a request of another protocol: the one line naming both" "$out"
check "$([ "$(get junk)" = "error the barrier proxy got no barrier request" ] && echo 0 || echo 1)" \
	"junk: refused in one line" "$out"
check "$([ "$(get afterempty)" = "$py1" ] && echo 0 || echo 1)" \
	"an empty datagram from a process of the task: the proxy stays, the next barrier gets its answer" "$out"
check "$([ "$(get other)" = "asked" ] && [ "$(get own)" = "$py1" ] && echo 0 || echo 1)" \
	"another process's answer waiting on the shared socket: trainenv.barrier() gets its own answer, not the other's" "$out"
check "$(case $(get left) in "error trainenv in the container speaks protocol $((proto + 1))"*) echo 0 ;; *) echo 1 ;; esac)" \
	"  and the other's answer is still there for it" "$out"
check "$(case $(get 'proxy exit') in "0 "*) echo 0 ;; *) echo 1 ;; esac)" \
	"the proxy ends (exit 0) when the program's end of the socket closes" "$out"

# Values that name no proxy: the module and the shim fall back to
# libtrainenv, and never write into another file.
pyfd() { env -i PATH=/usr/bin:/bin PYTHONPATH="$src/python" TRAINENV_BARRIER_FD="$1" python3 -c \
	'import trainenv; print(trainenv._proxy_fd())' 2>&1; }
check "$([ "$(pyfd 1:5)" = None ] && echo 0 || echo 1)" "TRAINENV_BARRIER_FD=1:5 (stdout) is no proxy"
check "$([ "$(pyfd '٣:5')" = None ] && echo 0 || echo 1)" "a non-ASCII digit is no proxy"
ino=$(stat -c %i /dev/null)
out=$(env -i PATH=/usr/bin:/bin PYTHONPATH="$src/python" TRAINENV_BARRIER_FD="7:$ino" python3 -c \
	'import trainenv; print(trainenv._proxy_fd())' 7</dev/null 2>&1)
check "$([ "$out" = None ] && echo 0 || echo 1)" "a descriptor that is a file, not the socket (its inode given): no proxy" "$out"
# The shim in a process that inherited the variable but whose descriptor
# is now a file: the file is left alone (the barrier is libtrainenv's).
f=$(mktemp)
env -i PATH=/usr/bin:/bin LD_PRELOAD="$shim" TRAINENV_BARRIER_FD="7:$(stat -c %i "$f")" \
	python3 -c 'import ctypes; ctypes.CDLL(None).ncclCommInitRank(None, 1, None, 0)' 7>>"$f" >/dev/null 2>&1
check "$([ ! -s "$f" ] && echo 0 || echo 1)" "the shim writes nothing into a file at the descriptor the variable names" "$(head -c 200 "$f")"
rm -f "$f"
echo "1..$n"
[ "$failed" = 0 ]
