#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds the container runtimes the integration tests run trainenv under,
# from their release sources (NVIDIA's enroot and pyxis, kept in
# shared/containers/ beside the checkout, or $TE_SHARED_CONTAINERS), and
# makes a test image. Nothing is downloaded but Debian packages (the image
# is a debootstrap root from Debian's archive).
#
#   enroot   FORCE_GLIBC=1 (glibc instead of their musl submodule); Debian's
#            makeself and linux-libc-dev stand in for the other two
#            submodules. Installed into CACHE/enroot-VERSION (bin, lib,
#            etc, share).
#   pyxis    built against the installed libslurm-dev (one build per Slurm
#            release): CACHE/pyxis-VERSION-slurm-SLURMVERSION/spank_pyxis.so.
#   image    CACHE/images/trainenv-test.sqsh: debootstrap --variant=minbase
#            of the host's Debian release with python3, packed with
#            mksquashfs; its /etc/environment plays an NGC image's ENV
#            (PYTORCH_VERSION, so enroot's PyTorch hook acts, and an NCCL
#            heartbeat of its own), its /etc/rc an imported image's.
#
# Each part is made once and reused while its stamp matches (the sources'
# checksums and this script's version of the recipe); CACHE is
# /var/lib/trainenv-containers (TE_CONTAINERS_CACHE), world-readable, so
# that the nodes of the local cluster and job users can run what is there.
# At the end CACHE/env.sh names what was made (TE_ENROOT_PREFIX,
# TE_PYXIS_SO, TE_CONTAINER_IMAGE, TE_ENROOT_VERSION, TE_PYXIS_VERSION).
#
# Usage: tests/containers/build.sh [--check]
#   --check: build nothing; exit 0 when everything is made, 1 if not.
# Exit status: 0 ready (without the sources, when an earlier run built these
# versions for this Slurm); 77 cannot be built on this machine (one line on
# stderr says why: the sources are absent, not root, a tool is missing);
# 1 a build failed (its log is named).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd -P)
src=$(cd "$here/../.." && pwd -P)
cache=${TE_CONTAINERS_CACHE:-/var/lib/trainenv-containers}
shared=${TE_SHARED_CONTAINERS:-$(cd "$src/.." && pwd -P)/shared/containers}
mirror=${TE_MIRROR:-http://deb.debian.org/debian}
enroot_v=4.1.2
pyxis_v=0.24.0
# Bumped whenever what a part is made of changes: a stale part is remade.
recipe=2
say() { echo "containers: $*" >&2; }
cannot() { say "$*"; exit 77; }

check_only=
[ "${1:-}" = --check ] && check_only=1

enroot_tar=$shared/enroot-$enroot_v.tar.xz
pyxis_tar=$shared/pyxis-$pyxis_v.tar.xz
# shellcheck source-path=SCRIPTDIR source=../lib/dpkg_state.sh
. "$here/../lib/dpkg_state.sh"
slurm_v=
# The version of an installed libslurm-dev only (one removed with its
# configuration kept still has a version in dpkg's database).
te_dpkg_installed libslurm-dev &&
	slurm_v=$(dpkg-query -W -f='${Version}' libslurm-dev 2>/dev/null | sed 's/-[^-]*$//')
if [ -z "$slurm_v" ] || [ ! -f /usr/include/slurm/spank.h ]; then
	cannot "libslurm-dev is not installed (pyxis is built against it; run tests/deps.sh)"
fi
for f in "$enroot_tar" "$pyxis_tar"; do
	[ -r "$f" ] && continue
	# Without the sources, what an earlier run built for these versions
	# (and this Slurm) still serves.
	if [ -f "$cache/env.sh" ] &&
		grep -qs "^enroot $enroot_v " "$cache/enroot-$enroot_v/.stamp" &&
		grep -qs "^pyxis $pyxis_v .* slurm $slurm_v " "$cache/pyxis-$pyxis_v-slurm-$slurm_v/.stamp" &&
		[ -f "$cache/images/trainenv-test.sqsh" ]; then
		say "no $(basename "$f") in $shared: using what was built in $cache"
		exit 0
	fi
	cannot "no $(basename "$f") in $shared (set TE_SHARED_CONTAINERS to the folder of enroot's and pyxis's release sources)"
done
# shellcheck disable=SC1091
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")

enroot_dir=$cache/enroot-$enroot_v
pyxis_dir=$cache/pyxis-$pyxis_v-slurm-$slurm_v
image=$cache/images/trainenv-test.sqsh
sum() { sha256sum "$1" | cut -c1-16; }
enroot_stamp="enroot $enroot_v $(sum "$enroot_tar") recipe $recipe"
pyxis_stamp="pyxis $pyxis_v $(sum "$pyxis_tar") slurm $slurm_v recipe $recipe"
image_stamp="image $codename python3 recipe $recipe"
made() { [ -f "$1/.stamp" ] && [ "$(cat "$1/.stamp")" = "$2" ]; }
image_made() { [ -f "$image" ] && [ -f "$image.stamp" ] && [ "$(cat "$image.stamp")" = "$image_stamp" ]; }

write_env() {
	local tmp=$cache/.env.sh.$$
	cat >"$tmp" <<-EOF
		# written by tests/containers/build.sh
		TE_ENROOT_PREFIX=$enroot_dir
		TE_ENROOT_VERSION=$enroot_v
		TE_PYXIS_SO=$pyxis_dir/spank_pyxis.so
		TE_PYXIS_VERSION=$pyxis_v
		TE_CONTAINER_IMAGE=$image
	EOF
	chmod 644 "$tmp"
	mv -f "$tmp" "$cache/env.sh"
}

if [ -n "$check_only" ]; then
	made "$enroot_dir" "$enroot_stamp" && made "$pyxis_dir" "$pyxis_stamp" &&
		image_made && [ -f "$cache/env.sh" ] && exit 0
	exit 1
fi

[ "$(id -u)" -eq 0 ] || cannot "building needs root (debootstrap, a cache under /var/lib)"
need=(make gcc tar xz sed debootstrap mksquashfs unsquashfs jq parallel zstd pigz setcap makeself flock)
for t in "${need[@]}"; do
	command -v "$t" >/dev/null || cannot "$t is missing (tests/deps.sh installs it)"
done
[ -f /usr/include/linux/capability.h ] || cannot "linux-libc-dev is missing (tests/deps.sh installs it)"
case $cache in
/tmp/* | /dev/shm/*) cannot "TE_CONTAINERS_CACHE must not be under /tmp or /dev/shm: the nodes have their own" ;;
esac

install -d -m 0755 "$cache" "$cache/images"
exec 9>"$cache/.lock"
flock 9
t0=$(date +%s)

# ---------------------------------------------------------------- enroot
build_enroot() {
	local b=$cache/build/enroot-$enroot_v log=$cache/build/enroot.log
	rm -rf "$b" "$enroot_dir"
	install -d "$cache/build"
	tar -C "$cache/build" -xJf "$enroot_tar"
	[ -d "$b/deps/libbsd" ] || { say "enroot: unexpected archive layout"; return 1; }
	# The submodules: Debian's makeself for theirs (used by "enroot
	# bundle" only), linux-libc-dev's headers (in the compiler's default
	# path) for theirs, glibc (FORCE_GLIBC=1) for musl.
	install -D -m 755 "$(command -v makeself)" "$b/deps/makeself/makeself.sh"
	install -d "$b/deps/dist/linux/include"
	touch "$b/deps/linux-headers/.stamp"
	# glibc before 2.38 (Debian 12 has 2.36) lacks strlcpy and strlcat,
	# which musl has: two small ones of our own, added to their libbsd.a
	# and declared to every helper with -include.
	cat >"$b/te-strl.h" <<-'EOF'
		#include <stddef.h>
		size_t strlcpy(char *dst, const char *src, size_t size);
		size_t strlcat(char *dst, const char *src, size_t size);
	EOF
	cat >"$b/te-strl.c" <<-'EOF'
		#include <string.h>
		#include "te-strl.h"
		/* BSD semantics: copy/append at most size - 1 bytes, always
		 * terminate (when size > 0), return the length tried. */
		size_t strlcpy(char *dst, const char *src, size_t size)
		{
			size_t n = strlen(src);

			if (size > 0) {
				size_t k = n < size - 1 ? n : size - 1;

				memcpy(dst, src, k);
				dst[k] = '\0';
			}
			return n;
		}
		size_t strlcat(char *dst, const char *src, size_t size)
		{
			size_t d = strnlen(dst, size);

			if (d == size)
				return d + strlen(src);
			return d + strlcpy(dst + d, src, size - d);
		}
	EOF
	say "enroot $enroot_v: building (FORCE_GLIBC=1; log $log)"
	if ! (cd "$b" && make -C deps FORCE_GLIBC=1 libbsd makeself &&
		gcc -O2 -fPIE -c -o te-strl.o te-strl.c &&
		ar rcs deps/dist/libbsd/libbsd.a te-strl.o &&
		CPPFLAGS="-include $b/te-strl.h" make FORCE_GLIBC=1 prefix="$enroot_dir" install) >"$log" 2>&1; then
		tail -n 20 "$log" >&2
		say "enroot: build failed (log $log)"
		return 1
	fi
	# enroot's optional hooks, as sites running pyxis enable them: the
	# PMIx one (PMIX_*/SLURM_* into the container, the server's
	# directories mounted) and the PyTorch one (MASTER_ADDR, MASTER_PORT,
	# WORLD_SIZE, RANK, LOCAL_RANK from Slurm's variables).
	ln -sf "$enroot_dir/share/enroot/hooks.d/50-slurm-pmi.sh" \
		"$enroot_dir/etc/enroot/hooks.d/50-slurm-pmi.sh"
	ln -sf "$enroot_dir/share/enroot/hooks.d/50-slurm-pytorch.sh" \
		"$enroot_dir/etc/enroot/hooks.d/50-slurm-pytorch.sh"
	"$enroot_dir/bin/enroot" version >/dev/null 2>&1 ||
		{ say "enroot: the installed enroot does not run"; return 1; }
	chmod -R go+rX,go-w "$enroot_dir"
	echo "$enroot_stamp" >"$enroot_dir/.stamp"
}

# ---------------------------------------------------------------- pyxis
build_pyxis() {
	local b=$cache/build/pyxis-$pyxis_v log=$cache/build/pyxis.log
	rm -rf "$b" "$pyxis_dir"
	install -d "$cache/build" "$pyxis_dir"
	tar -C "$cache/build" -xJf "$pyxis_tar"
	say "pyxis $pyxis_v: building against Slurm $slurm_v (log $log)"
	if ! make -C "$b" >"$log" 2>&1; then
		tail -n 20 "$log" >&2
		say "pyxis: build failed (log $log)"
		return 1
	fi
	install -m 644 "$b/spank_pyxis.so" "$pyxis_dir/spank_pyxis.so"
	echo "$pyxis_stamp" >"$pyxis_dir/.stamp"
}

# ---------------------------------------------------------------- image
build_image() {
	local root=$cache/build/image-root log=$cache/build/image.log
	rm -rf "$root" "$image" "$image.stamp"
	install -d "$cache/build"
	say "image: debootstrap --variant=minbase $codename with python3 ($mirror; log $log)"
	if ! debootstrap --variant=minbase --include=python3 "$codename" "$root" "$mirror" >"$log" 2>&1; then
		tail -n 20 "$log" >&2
		say "image: debootstrap failed (log $log)"
		return 1
	fi
	# What an image imported from a registry has: its ENV in
	# /etc/environment (enroot reads it), and an /etc/rc that sources
	# /etc/rc.local (pyxis writes 'exec "$@"' there) and runs the command.
	cat >"$root/etc/environment" <<-'EOF'
		PYTORCH_VERSION=2.3.0
		TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC=60
		NCCL_DEBUG=WARN
		TE_TEST_IMAGE=1
	EOF
	cat >"$root/etc/rc" <<-'EOF'
		# /etc/rc of the trainenv test image (tests/containers/build.sh)
		cd / || exit 1
		if [ -s /etc/rc.local ]; then
		    . /etc/rc.local
		fi
		if [ $# -gt 0 ]; then
		    exec "$@"
		fi
		exec /bin/sh
	EOF
	: >"$root/etc/rc.local"
	# No device nodes, as in an image from a registry: enroot mounts the
	# node's /dev, and an unprivileged user's unsquashfs cannot make them
	# ("could not create character device ... because you're not
	# superuser!", and enroot create fails).
	find "$root/dev" -mindepth 1 -delete
	# Smaller and quicker to unpack on every node: no apt lists, caches,
	# documentation or locales.
	rm -rf "$root/var/lib/apt/lists"/* "$root/var/cache/apt"/*.bin \
		"$root/var/cache/apt/archives"/*.deb "$root/usr/share/doc"/* \
		"$root/usr/share/man"/* "$root/usr/share/locale"/* "$root/usr/share/info"/*
	if ! mksquashfs "$root" "$image.new" -noappend -comp zstd -quiet >>"$log" 2>&1; then
		say "image: mksquashfs failed (log $log)"
		return 1
	fi
	chmod 644 "$image.new"
	mv -f "$image.new" "$image"
	echo "$image_stamp" >"$image.stamp"
	rm -rf "$root"
}

made "$enroot_dir" "$enroot_stamp" || build_enroot || exit 1
made "$pyxis_dir" "$pyxis_stamp" || build_pyxis || exit 1
image_made || build_image || exit 1
rm -rf "$cache/build"/enroot-* "$cache/build"/pyxis-*
chmod go+rX "$cache" "$cache/images"
write_env
say "ready in $cache ($(( $(date +%s) - t0 )) s): enroot $enroot_v, pyxis $pyxis_v (Slurm $slurm_v), image $(du -h "$image" | cut -f1)"
