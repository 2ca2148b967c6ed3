#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# old_root.sh [--images]: makes or reuses two Debian 11 (bullseye: glibc 2.31, Python 3.9) roots that stand for an older container image, /var/lib/trainenv-roots/old (python3, python3.9-dbg, gcc) and old-nodbg (the same without python3.9-dbg); prints the first's path. --images also packs each into an enroot image, old.sqsh and old-nodbg.sqsh beside them. Exit 0 ready, 1 cannot be made (one line on stderr).
#
# The image-side tests use them: trainenv-nccl.so loaded in a program built
# and run inside the root (tests/unit/test_glibc_baseline.sh asks for the
# GLIBC baseline, tests/integration/t62_nccl_oldroot.sh loads it), and the
# hang report of a rank that runs chrooted into one (t81_stacks_container.sh)
# or in an enroot container of one under pyxis (t83_stacks_pyxis.sh, the
# images: mksquashfs without the compiler, headers and documentation).
# Same approach as root.sh (which makes the Slurm roots trixie and sid):
# debootstrap --variant=minbase from http://deb.debian.org/debian, a stamp
# that names the package list, reused without the network. bullseye is the
# oldest suite the archive still serves (buster's Release is gone: 404).
# The roots are world-readable: the nodes of the local cluster and user
# nobody read them. Run as root. Environment: TE_ROOTS (default
# /var/lib/trainenv-roots), TE_MIRROR (default http://deb.debian.org/debian).
set -euo pipefail
images=
[ "${1:-}" = --images ] && images=1
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
# The enroot images of both roots, packed again when a root was made anew.
pack() {
	local r
	[ -n "$images" ] || return 0
	command -v mksquashfs >/dev/null || { say "no mksquashfs (Debian: squashfs-tools)"; return 1; }
	for r in "$root" "$nodbg"; do
		[ "$(cat "$r.sqsh.stamp" 2>/dev/null)" = "$(cat "$r/etc/trainenv-old-root")" ] && continue
		rm -f "$r.sqsh" "$r.sqsh.stamp"
		mksquashfs "$r" "$r.sqsh.new" -noappend -comp zstd -quiet -wildcards \
			-e usr/lib/gcc usr/include usr/share/doc usr/share/man 'tmp/*' \
			>>"$roots/old.debootstrap.log" 2>&1 || { say "mksquashfs $r failed"; return 1; }
		chmod 0644 "$r.sqsh.new"
		mv -f "$r.sqsh.new" "$r.sqsh"
		cat "$r/etc/trainenv-old-root" >"$r.sqsh.stamp"
		say "packed $r.sqsh ($(du -h "$r.sqsh" | cut -f1))"
	done
}
if ready; then
	exec 8>"$roots/.old.lock"
	flock -w 1800 8 || { say "another old_root.sh held the lock for 30 min"; exit 1; }
	pack || exit 1
	echo "$root"
	exit 0
fi
t0=$(date +%s)
install -d -m 0755 "$roots"
exec 8>"$roots/.old.lock"
flock -w 1800 8 || { say "another old_root.sh held the lock for 30 min"; exit 1; }
if ready; then
	pack || exit 1
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
pack || exit 1
echo "$root"
