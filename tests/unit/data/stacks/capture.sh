#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Regenerates the gdb fixtures of tests/unit/hang/test_stacks.c from real
# processes (needs gdb, python3.11-dbg, gcc; run as root or with ptrace
# allowed). The programs run from /tmp/job so that no path of the machine
# that made them lands in the fixtures. Usage: capture.sh [OUTDIR]
set -eu
out=$(cd "${1:-$(dirname "$0")}" && pwd -P)
job=/tmp/job
rm -rf "$job"; mkdir -p "$job"; cd "$job"
cat > train.py <<'PY'
import ctypes, threading, time

def save_final():
    time.sleep(3600)

def writer():
    save_final()

def native_thread():
    libc = ctypes.CDLL(None)
    tid = ctypes.c_ulong()
    libc.pthread_create(ctypes.byref(tid), None,
                        ctypes.cast(libc.pause, ctypes.c_void_p), None)

def common():
    time.sleep(3600)

def main():
    native_thread()
    threading.Thread(target=writer, daemon=True).start()
    common()

main()
PY
cat > blockread.c <<'C'
#include <unistd.h>
static int wait_input(int fd) { char c; return (int)read(fd, &c, 1); }
int main(void) { return wait_input(0) < 0; }
C
gcc -g -O0 -o blockread blockread.c
gcc -O0 -s -o blockread-stripped blockread.c
gdbx() { timeout 30 gdb -p "$1" -batch -nx "${@:2}" \
	-ex 'thread apply all py-bt' -ex 'thread apply all bt' 2>&1; }
/usr/bin/python3 train.py & py=$!
# read() on a FIFO this script holds open for both ends waits for ever.
mkfifo in; exec 3<>in
./blockread <&3 & c=$!
./blockread-stripped <&3 & s=$!
sleep 2
gdbx "$py" > "$out/py_threads.txt"
# Without python3.11-dbg's gdb extension, py-bt is not a command.
gdbx "$py" -iex 'set auto-load python-scripts off' > "$out/py_nodbg.txt"
gdbx "$c" > "$out/c_read.txt"
# Without the C library's debug symbols (libc6-dbg): "from libc.so.6", "??".
gdbx "$s" -iex 'set debug-file-directory /nonexistent' > "$out/c_stripped.txt"
kill "$py" "$c" "$s" 2>/dev/null || true
wait 2>/dev/null || true
rm -rf "$job"
# Another user's process (as nobody, gdb against pid 1): refused.
su nobody -s /bin/bash -c "gdb -p 1 -batch -nx -ex 'thread apply all py-bt' \
	-ex 'thread apply all bt'" > "$out/ptrace_denied.txt" 2>&1 || true
