#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# root.sh NAME: makes or refreshes the Debian root /var/lib/trainenv-roots/NAME (NAME = trixie | sid: Debian's suite) in which TE_SLURM=NAME tests/check.sh runs the suite: debootstrap --variant=minbase, then every package of tests/deps.sh, run inside the root.
#
# Idempotent: a root whose stamp (ROOT/etc/trainenv-root.packages, the list
# tests/deps.sh --list gave when the install succeeded) names the package
# list of the current tests/deps.sh is reused without the network. Anything
# else (no root, an interrupted debootstrap, a changed list) is made or
# completed from Debian's archive. ROOT/etc/trainenv-root holds NAME (how
# tests/check.sh knows it runs inside the root). Only Debian packages, only
# http://deb.debian.org/debian. Run as root. Environment: TE_ROOTS (default
# /var/lib/trainenv-roots), TE_MIRROR (default http://deb.debian.org/debian).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd -P)
name=${1:-}
case $name in
trixie | sid) ;;
*) echo "usage: $0 trixie|sid" >&2; exit 2 ;;
esac
[ "$(id -u)" -eq 0 ] || { echo "root.sh: needs root (debootstrap, chroot)" >&2; exit 1; }
roots=${TE_ROOTS:-/var/lib/trainenv-roots}
mirror=${TE_MIRROR:-http://deb.debian.org/debian}
root=$roots/$name
stamp=$root/etc/trainenv-root.packages
say() { echo "root.sh: $name: $*" >&2; }
t0=$(date +%s)

install -d -m 0755 "$roots"
# One root.sh per root at a time (two check.sh runs may start together).
exec 8>"$roots/.$name.lock"
flock 8

# Runs tests/deps.sh ARGS inside the root: /proc, /sys and /dev mounted for
# the maintainer scripts in a private mount namespace (gone when it ends);
# the script and the one function it sources are copied in, the checkout
# need not be visible.
in_root_deps() { # ARGS...
	install -m 0755 "$here/../deps.sh" "$root/etc/trainenv-root.deps.sh"
	install -m 0644 "$here/../lib/dpkg_state.sh" "$root/etc/trainenv-root.dpkg_state.sh"
	unshare --mount --propagation private /bin/sh -euc '
		r=$1; shift
		mount -t proc proc "$r/proc"
		mount --rbind /sys "$r/sys"
		mount --rbind /dev "$r/dev"
		exec chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
			TE_DPKG_STATE=/etc/trainenv-root.dpkg_state.sh \
			/bin/bash /etc/trainenv-root.deps.sh "$@"' sh "$root" "$@"
}

if [ -f "$stamp" ] && [ -f "$root/etc/trainenv-root" ]; then
	if want=$(in_root_deps --list 2>/dev/null) && [ "$want" = "$(cat "$stamp")" ] &&
		in_root_deps --check >/dev/null 2>&1; then
		say "reused $root ($(wc -l <"$stamp") packages, $(( $(date +%s) - t0 )) s)"
		exit 0
	fi
	say "the package list changed: completing $root"
fi

if [ ! -x "$root/usr/bin/apt-get" ] || [ ! -f "$root/etc/trainenv-root" ]; then
	command -v debootstrap >/dev/null || {
		say "installing debootstrap"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >/dev/null
	}
	# A half-made root (interrupted debootstrap) is made again from scratch.
	rm -rf "$root" "$root.new"
	say "debootstrap --variant=minbase $name $root ($mirror)"
	t1=$(date +%s)
	debootstrap --variant=minbase "$name" "$root.new" "$mirror" >"$roots/$name.debootstrap.log" 2>&1 || {
		tail -n 20 "$roots/$name.debootstrap.log" >&2
		say "debootstrap failed (log: $roots/$name.debootstrap.log)"
		exit 1
	}
	# Services never start inside the root: the harness runs its own daemons.
	printf '#!/bin/sh\n# written by tests/releases/root.sh: no service starts in this root\nexit 101\n' \
		>"$root.new/usr/sbin/policy-rc.d"
	chmod 755 "$root.new/usr/sbin/policy-rc.d"
	# The archive's sid Release file is past its Valid-Until.
	[ "$name" = sid ] && echo 'Acquire::Check-Valid-Until "false";' \
		>"$root.new/etc/apt/apt.conf.d/99trainenv-valid-until"
	cp /etc/resolv.conf "$root.new/etc/resolv.conf" 2>/dev/null || true
	# apt's lists, for tests/deps.sh --list on a release it asks apt about.
	chroot "$root.new" apt-get update -q >/dev/null
	echo "$name" >"$root.new/etc/trainenv-root"
	mv "$root.new" "$root"
	say "debootstrap took $(( $(date +%s) - t1 )) s"
fi

t1=$(date +%s)
rm -f "$stamp"
say "installing the packages of tests/deps.sh (log: $roots/$name.install.log)"
in_root_deps >"$roots/$name.install.log" 2>&1 || {
	tail -n 20 "$roots/$name.install.log" >&2
	say "installing the packages failed (log: $roots/$name.install.log)"
	exit 1
}
want=$(in_root_deps --list)
in_root_deps --check >/dev/null
# The .debs are not kept: the root is a cache of installed packages only.
chroot "$root" apt-get clean
printf '%s\n' "$want" >"$stamp"
say "packages took $(( $(date +%s) - t1 )) s; root ready in $(( $(date +%s) - t0 )) s: $root"
