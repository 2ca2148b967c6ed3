#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Stages what the test cluster's nodes and unprivileged users read (the
# plugin, helpers, tool, libraries, Python module, test scripts and
# examples) into DEST, a world-readable copy under /var/tmp, so that nothing
# depends on where the checkout lives: every node has a private /tmp, user
# nobody cannot read a mode-700 home such as /root, and the cluster hides the
# checkout from its nodes (tests/cluster/cluster.sh --hide) to prove it.
#
# Usage: stage.sh SRCDIR BUILDDIR DEST
#   DEST/src    the source tree (no .git, no build output)
#   DEST/build  the build tree without objects and logs (same layout, so
#               DEST/build/.libs/trainenv.so, DEST/build/trainenv-rdzv, ...)
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 SRCDIR BUILDDIR DEST" >&2; exit 2; }
src=$(cd "$1" && pwd -P)
build=$(cd "$2" && pwd -P)
dest=$3
case $dest in
/tmp/* | /dev/shm/*) echo "stage.sh: DEST must not be under /tmp or /dev/shm: nodes have their own ($dest)" >&2; exit 2 ;;
esac

install -d -m 0755 "$dest" "$dest/src" "$dest/build"
dest=$(cd "$dest" && pwd -P)
# A build directory inside the source tree (tests/check.sh's _build) is
# copied once, as the build.
# Build directories inside the checkout (_build, _build2, ...: the usual
# names) are not sources: a fuzz run or a make in one of them would change
# files under tar.
excl=(--exclude=./.git --exclude=./autom4te.cache --exclude=./tests/logs
	--exclude='./_build*' --exclude='*.o' --exclude='*.lo' --exclude=.deps
	--exclude=./config.log)
case $build/ in
"$src"/*) excl+=("--exclude=./${build#"$src"/}") ;;
esac
case $dest/ in
"$src"/*) excl+=("--exclude=./${dest#"$src"/}") ;;
esac
tar -C "$src" "${excl[@]}" -cf - . | tar -C "$dest/src" --no-same-owner -xf -
tar -C "$build" --exclude=./tests/logs --exclude='*.o' --exclude='*.lo' \
	--exclude=.deps --exclude=./config.log -cf - . |
	tar -C "$dest/build" --no-same-owner -xf -
# Readable and traversable by everyone, writable by root only, whatever
# the umask of the checkout was.
chmod -R u+rwX,go+rX,go-w "$dest"
