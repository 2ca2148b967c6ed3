#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# enter.sh NAME CMD...: runs CMD inside the Debian root of tests/releases/root.sh NAME, in the caller's directory of this checkout, which is bind-mounted at its own absolute path; private mount, PID and network namespaces, so that everything mounted or started in there is gone when CMD ends. Exits with CMD's status.
#
# In the root: /proc (of the new PID namespace), /sys (of the new network
# namespace, with the machine's cgroup tree), /dev with a private /dev/shm and
# /dev/pts, a tmpfs on /run and on /tmp, the machine's /etc/hosts and, read
# only, its CUDA toolkit /usr/local/cuda when there is one (not a Debian
# package: t60 and t61 load its NCCL and CUDA runtime); the root's own
# /var/tmp (where the cluster and the staged build live). The network namespace has loopback
# only until the cluster harness adds its bridge: nothing leaves the machine.
# The directories made for the checkout's mount point inside the root are
# removed again at the end when empty. Run as root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd -P)
top=$(cd "$here/../.." && pwd -P)
name=${1:-}
[ $# -ge 2 ] || { echo "usage: $0 trixie|sid CMD..." >&2; exit 2; }
shift
root=${TE_ROOTS:-/var/lib/trainenv-roots}/$name
die() { echo "enter.sh: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root (namespaces, pivot_root)"
[ "$(cat "$root/etc/trainenv-root" 2>/dev/null)" = "$name" ] ||
	die "no root in $root: run tests/releases/root.sh $name"
cwd=$(pwd -P)
case $cwd/ in "$top"/*) ;; *) cwd=$top ;; esac

# The mount point: made inside the root, never through a link that would
# lead out of it; what was made is removed at the end (empty directories).
case $top/ in /tmp/*) made="" ;; *)
	made=$top
	while [ "$made" != / ] && [ ! -e "$root$(dirname "$made")" ]; do made=$(dirname "$made"); done
	[ -e "$root$made" ] && made=""
	mkdir -p "$root$top" ;;
esac
case $top/ in /tmp/*) ;; *)
	[ "$(realpath -m "$root$top")" = "$root$top" ] || die "$root$top leads out of the root (a link)" ;;
esac
cuda=""
if [ -d /usr/local/cuda ]; then
	cuda=$(readlink -f /usr/local/cuda)
	[ -e "$root/usr/local/cuda" ] || { mkdir "$root/usr/local/cuda"; made_cuda=1; }
fi
cleanup() {
	[ -n "${made_cuda:-}" ] && rmdir "$root/usr/local/cuda" 2>/dev/null
	[ -n "$made" ] || return 0
	local d=$top
	while :; do
		rmdir "$root$d" 2>/dev/null || break
		[ "$d" = "$made" ] && break
		d=$(dirname "$d")
	done
}
trap cleanup EXIT

# pid 1 of the new PID namespace: the mounts, then into the root.
in_ns() { # ROOT TOP CWD CUDA CMD...
	set -eu
	local root=$1 top=$2 cwd=$3 cuda=$4
	shift 4
	# The root is a mount point of its own: pivot_root needs one, and
	# `ip -n NS` makes / a slave mount, which a chroot's / must be for that.
	mount --bind "$root" "$root"
	mount -t proc proc "$root/proc"
	mount -t sysfs sysfs "$root/sys"
	mount --rbind /sys/fs/cgroup "$root/sys/fs/cgroup"
	mount --rbind /dev "$root/dev"
	mount -t tmpfs -o mode=1777,nosuid,nodev shm "$root/dev/shm"
	mount -t devpts -o newinstance,gid=5,mode=620,ptmxmode=0666 devpts "$root/dev/pts"
	mount --bind "$root/dev/pts/ptmx" "$root/dev/ptmx"
	mount -t tmpfs -o mode=0755,nosuid,nodev run "$root/run"
	install -d -m 1777 "$root/run/lock"
	mount -t tmpfs -o mode=1777,nosuid,nodev tmp "$root/tmp"
	# The same machine: its host name resolves as outside (Slurm's
	# SlurmctldHost is the machine's host name).
	mount --bind -o ro /etc/hosts "$root/etc/hosts"
	[ -z "$cuda" ] || mount --bind -o ro "$cuda" "$root/usr/local/cuda"
	mkdir -p "$root$top"
	mount --bind "$top" "$root$top"
	ip link set lo up
	# pivot_root, not chroot: the root becomes the mount namespace's own
	# (Apptainer refuses to start in a chroot: "weak chrooted
	# environment"), and the machine's tree, stacked under it by
	# "pivot_root . .", is unmounted. Where pivot_root cannot (this
	# machine's / is not a mount point of its own), chroot.
	cd "$root"
	if pivot_root . . 2>/dev/null; then
		umount -l . || true
		cd /
		exec /bin/bash -c "$(declare -f run_cmd); run_cmd \"\$@\"" run_cmd "$cwd" "$@"
	fi
	exec chroot "$root" /bin/bash -c "$(declare -f run_cmd); run_cmd \"\$@\"" run_cmd "$cwd" "$@"
}

# Still pid 1, inside the root: runs CMD, passes INT, TERM and HUP on to it
# as TERM, reaps what is left to it, exits with CMD's status; the kernel
# then kills whatever still runs in the namespace. CMD starts with INT and
# QUIT at their defaults, as from a terminal: bash starts a command with &
# with both ignored, and that would reach slurmd, slurmstepd and the tasks.
run_cmd() { # CWD CMD...
	cd "$1" || exit 1
	shift
	local child rc
	trap '[ -n "${child:-}" ] && kill -TERM "$child" 2>/dev/null' INT TERM HUP
	exec 3<&0
	env --default-signal=INT,QUIT "$@" <&3 3<&- &
	child=$!
	while :; do
		wait "$child"
		rc=$?
		kill -0 "$child" 2>/dev/null || break
	done
	exit "$rc"
}

# unshare --fork ignores INT and TERM: they go to pid 1 (its child), which
# passes them on to CMD; --kill-child: the same when unshare is killed.
# (fd 3: the caller's stdin, which a command started with & would not get)
exec 3<&0
unshare --mount --propagation private --pid --fork --kill-child=TERM --net \
	/bin/bash -c "$(declare -f in_ns run_cmd); in_ns \"\$@\"" in_ns "$root" "$top" "$cwd" "$cuda" "$@" <&3 3<&- &
upid=$!
trap 'kill -TERM $(pgrep -P "$upid") 2>/dev/null' INT TERM HUP
while :; do
	rc=0
	wait "$upid" || rc=$?
	kill -0 "$upid" 2>/dev/null || break
done
exit "$rc"
