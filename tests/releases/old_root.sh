#!/bin/bash
# old_root.sh: makes or reuses two Debian 11 (bullseye: glibc 2.31, Python 3.9) roots that stand for an older container image, /var/lib/trainenv-roots/old (python3, python3.9-dbg, gcc) and old-nodbg (the same without python3.9-dbg); prints the first's path. Exit 0 ready, 1 cannot be made (one line on stderr).
#
# The image-side tests use them: trainenv-nccl.so loaded in a program built
# and run inside the root (tests/unit/test_glibc_baseline.sh asks for the
# GLIBC baseline, tests/integration/t62_nccl_oldroot.sh loads it), and the
# hang report of a rank that runs chrooted into one (t81_stacks_container.sh).
# Same approach as root.sh (which makes the Slurm roots trixie and sid):
# debootstrap --variant=minbase from http://deb.debian.org/debian, a stamp
# that names the package list, reused without the network. bullseye is the
# oldest suite the archive still serves (buster's Release is gone: 404).
# The roots are world-readable: the nodes of the local cluster and user
# nobody read them. Run as root. Environment: TE_ROOTS (default
# /var/lib/trainenv-roots), TE_MIRROR (default http://deb.debian.org/debian).
set -euo pipefail
suite=bullseye
pkgs=python3,python3.9-dbg,gcc,libc6-dev
dbg_pkgs="python3.9-dbg libpython3.9-dbg"
roots=${TE_ROOTS:-/var/lib/trainenv-roots}
mirror=${TE_MIRROR:-http://deb.debian.org/debian}
root=$roots/old
nodbg=$roots/old-nodbg
want="$suite $pkgs"
say() { echo "old_root.sh: $*" >&2; }
[ "$(id -u)" -eq 0 ] || { say "needs root (debootstrap, chroot)"; exit 1; }
ready() {
	[ "$(cat "$root/etc/trainenv-old-root" 2>/dev/null)" = "$want" ] &&
		[ "$(cat "$nodbg/etc/trainenv-old-root" 2>/dev/null)" = "$want nodbg" ]
}
if ready; then
	echo "$root"
	exit 0
fi
t0=$(date +%s)
install -d -m 0755 "$roots"
exec 8>"$roots/.old.lock"
flock -w 1800 8 || { say "another old_root.sh held the lock for 30 min"; exit 1; }
if ready; then
	echo "$root"
	exit 0
fi
command -v debootstrap >/dev/null || {
	say "installing debootstrap"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >/dev/null
}
rm -rf "$root" "$root.new" "$nodbg" "$nodbg.new"
say "debootstrap --variant=minbase --include=$pkgs $suite $root ($mirror)"
log=$roots/old.debootstrap.log
timeout 1800 debootstrap --variant=minbase --include="$pkgs" "$suite" "$root.new" \
	"$mirror" >"$log" 2>&1 || {
	tail -n 5 "$log" >&2
	say "debootstrap failed (log: $log)"
	rm -rf "$root.new"
	exit 1
}
chroot "$root.new" apt-get clean
chmod 0755 "$root.new"
# The copy without Python's debug symbols and gdb scripts: dpkg only, no
# network.
cp -a "$root.new" "$nodbg.new"
# shellcheck disable=SC2086 # two package names
chroot "$nodbg.new" dpkg --purge $dbg_pkgs >>"$log" 2>&1 || {
	say "dpkg --purge $dbg_pkgs failed in $nodbg.new (log: $log)"
	exit 1
}
echo "$want" >"$root.new/etc/trainenv-old-root"
echo "$want nodbg" >"$nodbg.new/etc/trainenv-old-root"
mv "$root.new" "$root"
mv "$nodbg.new" "$nodbg"
say "made $root and $nodbg in $(( $(date +%s) - t0 )) s"
echo "$root"
