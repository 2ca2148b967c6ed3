#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The job prolog's node health time per node (issue 34: goal under 1 s
# with the stand-ins): trainenv-health as the prolog runs it, every check
# on (ib over 4 stand-in ports, eth over 2 interfaces, gpu over 8
# stand-in NVML GPUs with NVLink and the kernel log's XIDs, the site's
# hook), against the same program with the checks off (health=none: its
# start alone; with no health key at all the plugin starts nothing).
# Alternated runs, medians, and the ratio on/off; not a test.
# Usage: tests/bench/bench_health_prolog.sh [--runs N]   (as root, from a
# build tree or with TE_BUILDDIR)
set -u
runs=21
[ "${1:-}" = --runs ] && runs=${2:?--runs needs a number}
build=${TE_BUILDDIR:-$PWD}
src=$(cd "$(dirname "$0")/../.." && pwd -P)
helper=$build/trainenv-health
fake=$build/tests/unit/.libs/libfakenvml.so
for f in "$helper" "$fake"; do
	[ -e "$f" ] || { echo "bench_health_prolog: $f is not built (make check builds the stand-in NVML)" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "bench_health_prolog: run as root (the prolog's user)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source-path=SCRIPTDIR source=../lib/sysfs_standin.sh
. "$src/tests/lib/sysfs_standin.sh"
for d in 0 1 2 3; do sysfs_ib_port "$tmp/sys/n1" "mlx5_$d" 1 "4: ACTIVE"; done
sysfs_iface "$tmp/sys/n1" eth0 up 100000
sysfs_iface "$tmp/sys/n1" eth1 up 100000
mkdir -p "$tmp/nvml" "$tmp/hook"
ln -s "$fake" "$tmp/nvml/libnvidia-ml.so.1"
printf '* gpus 8\n* nvlinks 18\n' >"$tmp/nvml.conf"
printf '#!/bin/sh\necho node fine\n' >"$tmp/hook/check"
chmod 0755 "$tmp/hook/check" "$tmp/hook"
on="health=ib,eth,gpu health_eth=eth0:100000,eth1:100000 health_ib_rate=200"
on+=" health_nvml=$tmp/nvml/libnvidia-ml.so.1 health_nvlink=18 health_xid=on"
on+=" health_hook=$tmp/hook/check health_test_root=$tmp/sys/%n"
off="health=none"

# One run's wall time in ms; the helper must pass (exit 0).
one() { # SITE
	local t0 t1 rc
	t0=$(date +%s%N)
	TE_FAKE_NVML_CONF=$tmp/nvml.conf "$helper" --prolog --job 1 --allow-uid 0 \
		--node n1 --site "$1" >"$tmp/out" 2>&1
	rc=$?
	t1=$(date +%s%N)
	[ "$rc" = 0 ] || { echo "bench_health_prolog: the run failed ($rc):" >&2; cat "$tmp/out" >&2; exit 1; }
	echo $(((t1 - t0) / 1000))
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

one "$on" >/dev/null # warm: the page cache, the watermark
for ((i = 0; i < runs; i++)); do
	one "$off" >>"$tmp/off"
	one "$on" >>"$tmp/on"
done
m_off=$(median <"$tmp/off")
m_on=$(median <"$tmp/on")
awk -v on="$m_on" -v off="$m_off" -v n="$runs" 'BEGIN {
	printf "prolog health per node, %d runs each, median:\n", n
	printf "  checks off (health=none: the helper'"'"'s start): %8.1f ms\n", off / 1000
	printf "  every check on (ib 4 ports, eth 2, gpu 8 + NVLink + XID, hook): %8.1f ms\n", on / 1000
	printf "  on/off: %.2fx; the checks add %.1f ms; goal: on under 1000 ms: %s\n",
		on / off, (on - off) / 1000, on < 1000000 ? "met" : "NOT met"
}'
