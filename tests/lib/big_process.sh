#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A process as big as a training job's, for the hang report's gdb (issue 33,
# item 3): Python that loads LIBS generated shared libraries of SYMS
# functions each (every library a different set of names, its own .eh_frame,
# and MB megabytes of read-only data, so LIBS x MB of library mapped), then
# runs THREADS threads: a quarter Python threads asleep in Python frames,
# one Python thread that keeps the GIL busy, the rest native threads (as
# CUDA's, NCCL's and OpenMP's) blocked 40 C frames deep in the generated
# libraries. The libraries are made once per shape in DIR and reused.
# Usage: big_process.sh make DIR LIBS SYMS MB         (prints DIR/SHAPE)
#        big_process.sh run SHAPEDIR THREADS READYFILE [PYTHON]
#   run: execs PYTHON (default python3); READYFILE is written once every
#   thread is in place; the process then waits until killed.
set -eu

make_libs() { # DIR LIBS SYMS MB
	local dir=$1/big-$2x$3x$4 i
	if [ -f "$dir/done" ]; then
		echo "$dir"
		return 0
	fi
	rm -rf "$dir" && mkdir -p "$dir"
	for ((i = 0; i < $2; i++)); do
		# Assembly: cheap to make by the thousand (a C compiler takes
		# minutes); each function has its unwind entry as a compiler's.
		awk -v lib="$i" -v syms="$3" -v mb="$4" 'BEGIN {
			print "\t.text"
			for (j = 0; j < syms; j++) {
				f = sprintf("te_big%d_fn%d", lib, j)
				printf "\t.globl %s\n\t.type %s, @function\n%s:\n", f, f, f
				print "\t.cfi_startproc\n\tpushq %rbp\n\t.cfi_def_cfa_offset 16"
				print "\tmovq %rsp, %rbp\n\tpopq %rbp\n\t.cfi_def_cfa_offset 8\n\tret\n\t.cfi_endproc"
				printf "\t.size %s, .-%s\n", f, f
			}
			printf "\t.section .rodata\n\t.globl te_big%d_data\nte_big%d_data:\n\t.zero %d\n", lib, lib, mb * 1048576
			print "\t.section .note.GNU-stack,\"\",@progbits"
		}' >"$dir/lib$i.s"
		as -o "$dir/lib$i.o" "$dir/lib$i.s" &&
			ld -shared -o "$dir/libtebig$i.so.tmp" "$dir/lib$i.o" || return 1
		# the zeros take no disk
		cp --sparse=always "$dir/libtebig$i.so.tmp" "$dir/libtebig$i.so"
		rm -f "$dir/lib$i.s" "$dir/lib$i.o" "$dir/libtebig$i.so.tmp"
	done
	# The native threads: each calls down 40 frames and blocks there.
	cat >"$dir/threads.c" <<'EOF'
#include <pthread.h>
#include <unistd.h>
static int depth_left(int n)
{
	if (n > 0)
		return depth_left(n - 1) + 1;
	for (;;)
		pause();
	return 0;
}
static void *native_thread(void *arg)
{
	(void)arg;
	depth_left(40);
	return 0;
}
int te_big_native_threads(int n)
{
	pthread_t t;
	int i;

	for (i = 0; i < n; i++)
		if (pthread_create(&t, 0, native_thread, 0))
			return i;
	return n;
}
EOF
	cc -O0 -fno-omit-frame-pointer -shared -fPIC -pthread -o "$dir/libtebigthreads.so" \
		"$dir/threads.c" || return 1
	: >"$dir/done"
	echo "$dir"
}

run_process() { # SHAPEDIR THREADS READYFILE [PYTHON]
	exec "${4:-python3}" - "$1" "$2" "$3" <<'EOF'
import ctypes, glob, os, sys, threading, time
shape, threads, ready = sys.argv[1], int(sys.argv[2]), sys.argv[3]
libs = [ctypes.CDLL(p) for p in sorted(glob.glob(shape + "/libtebig[0-9]*.so"))]
native = ctypes.CDLL(shape + "/libtebigthreads.so")
n_py = max(1, threads // 4)
n_native = max(0, threads - n_py - 2)  # main and the busy one
waiting = threading.Barrier(n_py + 1)

def py_sleeper_inner(depth):
    if depth:
        return py_sleeper_inner(depth - 1)
    waiting.wait()
    while True:
        time.sleep(3600)

def py_sleeper():
    py_sleeper_inner(10)

def busy_holder():
    x = 0
    while True:  # keeps the GIL but for the interpreter's switches
        x = (x * 31 + 7) % 1000003

for _ in range(n_py):
    threading.Thread(target=py_sleeper, daemon=True).start()
waiting.wait()
threading.Thread(target=busy_holder, daemon=True).start()
if native.te_big_native_threads(n_native) != n_native:
    sys.exit("big_process: pthread_create failed")
tmp = os.path.join(os.path.dirname(ready), "." + os.path.basename(ready) + ".tmp")
with open(tmp, "w") as f:
    f.write("%d %d %d\n" % (os.getpid(), len(libs), threading.active_count()))
os.rename(tmp, ready)
while True:
    time.sleep(3600)
EOF
}

case ${1:-} in
make) make_libs "$2" "$3" "$4" "$5" ;;
run) run_process "$2" "$3" "$4" "${5:-}" ;;
*) echo "usage: $0 make DIR LIBS SYMS MB | run SHAPEDIR THREADS READYFILE [PYTHON]" >&2; exit 2 ;;
esac
