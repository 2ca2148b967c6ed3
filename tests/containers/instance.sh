#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Makes DEST an enroot installation of its own for one test run, from the
# build tests/containers/build.sh made (CACHE/env.sh): DEST/bin/enroot is
# the built one with its configuration directory moved to DEST/etc/enroot
# (enroot reads its configuration from a path fixed at build time; pyxis
# clears the environment it runs enroot with), the helpers and library
# are the build's. DEST/etc/enroot holds enroot's hooks, mounts and
# environment files as the build installed them (with the PMIx and PyTorch
# hooks enabled), plus each HOOK given (a NAME.fstab goes to mounts.d),
# and an enroot.conf whose runtime,
# data and cache paths are per node and per user (under /tmp, which every
# node of the local cluster has of its own, named by uid).
#
# Usage: instance.sh DEST [HOOK...]
# DEST must be world-readable and not under /tmp (the nodes and job users
# run it); it is made, or replaced.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd -P)
[ $# -ge 1 ] || { echo "usage: $0 DEST [HOOK...]" >&2; exit 2; }
dest=$1
shift
cache=${TE_CONTAINERS_CACHE:-/var/lib/trainenv-containers}
[ -f "$cache/env.sh" ] || { echo "instance.sh: $cache/env.sh is missing: run $here/build.sh" >&2; exit 1; }
# shellcheck disable=SC1091
. "$cache/env.sh"
pre=$TE_ENROOT_PREFIX
case $dest in
/tmp/* | /dev/shm/*) echo "instance.sh: DEST must not be under /tmp or /dev/shm: nodes have their own" >&2; exit 2 ;;
esac

rm -rf "$dest"
install -d -m 0755 "$dest" "$dest/bin" "$dest/etc"
cp -a "$pre/etc/enroot" "$dest/etc/enroot"
sed -e "s;$pre/etc/enroot;$dest/etc/enroot;g" "$pre/bin/enroot" >"$dest/bin/enroot"
chmod 0755 "$dest/bin/enroot"
for f in "$pre"/bin/enroot-*; do
	ln -s "$f" "$dest/bin/$(basename "$f")"
done
for h in "$@"; do
	case $h in
	*.fstab) install -m 0644 "$h" "$dest/etc/enroot/mounts.d/$(basename "$h")" ;;
	*) install -m 0755 "$h" "$dest/etc/enroot/hooks.d/$(basename "$h")" ;;
	esac
done
# ${UID}: enroot evaluates the values as the user it runs as.
cat >"$dest/etc/enroot/enroot.conf" <<-'EOF'
	# written by tests/containers/instance.sh: per node (/tmp) and per user
	ENROOT_RUNTIME_PATH /tmp/enroot-run-${UID}
	ENROOT_CACHE_PATH /tmp/enroot-cache-${UID}
	ENROOT_DATA_PATH /tmp/enroot-data-${UID}
	ENROOT_TEMP_PATH /tmp
	ENROOT_MOUNT_HOME no
	ENROOT_ROOTFS_WRITABLE yes
EOF
chmod -R go+rX,go-w "$dest"
