#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Regenerates the container fixtures of tests/unit/hang/test_stacks_files.c from real processes: tests/integration/py/hang.py (stacks mode, rank 1) run in the Debian 11 roots of tests/releases/old_root.sh, read by gdb as pmix/stacks_node.c does (sysroot /proc/PID/root, the root's python3.9-gdb.py), and a rootless one (unshare -r -m, as nobody) read the way it was before (no sysroot). Needs root, gdb, the roots. Usage: capture_container.sh [OUTDIR]
set -eu
out=$(cd "${1:-$(dirname "$0")}" && pwd -P)
here=$(cd "$(dirname "$0")" && pwd -P)
roots=${TE_ROOTS:-/var/lib/trainenv-roots}
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
start() { # ROOT [unshare...]: hang.py in ROOT/tmp/job; its pid in $pid
	mkdir -p "$1/tmp/job/ready"
	cp "$here/../../../integration/py/hang.py" "$1/tmp/job/"
	chmod -R a+rwX "$1/tmp/job"
	local r=$1; shift
	SLURM_PROCID=1 "$@" python3 /tmp/job/hang.py stacks /tmp/job/ready &
	sleep 2
	pid=$(pgrep -n -f '^python3 /tmp/job/hang.py stacks')
	pids+=("$pid")
	[ "$(readlink "/proc/$pid/root")" = "$r" ]
}
gdbx() { # PID [ARGS...]
	timeout 30 gdb -p "$@" -batch -nx -q -iex 'set debuginfod enabled off' \
		-ex 'set pagination off' -ex 'thread apply all py-bt' -ex 'thread apply all bt' 2>&1
}
start "$roots/old" chroot "$roots/old"
gdbx "$pid" "/proc/$pid/exe" -iex "set sysroot /proc/$pid/root" \
	-ex "source /proc/$pid/root/usr/share/gdb/auto-load/usr/bin/python3.9-gdb.py" \
	>"$out/py_container.txt"
start "$roots/old-nodbg" chroot "$roots/old-nodbg"
gdbx "$pid" "/proc/$pid/exe" -iex "set sysroot /proc/$pid/root" >"$out/py_container_nodbg.txt"
# Rootless, in mount and user namespaces of its own: gdb (as the same
# user, without the sysroot) cannot open its files.
start "$roots/old" setpriv --reuid=nobody --regid=nogroup --clear-groups \
	unshare -r -m --root="$roots/old"
setpriv --reuid=nobody --regid=nogroup --clear-groups \
	timeout 30 gdb -p "$pid" -batch -nx -q -iex 'set debuginfod enabled off' \
	-ex 'thread apply all py-bt' -ex 'thread apply all bt' >"$out/py_container_unread.txt" 2>&1
rm -rf "$roots/old/tmp/job" "$roots/old-nodbg/tmp/job"
