#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The scale simulation benchmark (issue 14; not a test): the launch
# rendezvous of thousands of simulated nodes on this one machine, each
# node's real trainenv-rdzv over a stand-in libpmix (tests/bench/sim_pmix.c)
# and loopback TCP (tests/bench/bench_scale.c), one line per size:
#   nodes=N ranks_per_node=P all_done_ms=X rank0_cpu_s=Y rank0_rss_mb=Z max_conns=C
# then the model that turns the measured per-hop costs into datacenter
# latencies (tests/bench/bench_scale_model.c; docs/pmix.md, "Scale").
# A size this machine cannot hold says so ("impossible here: ...").
# Usage: tests/bench/bench_scale.sh [--nodes N] [--ranks-per-node P]
#        [--dir BASE] [--launch-tree-width K] [--checkpoint-dir DIR]
#        [MODEL OPTIONS: --latency-us L --dmodex-us D
#        --stepd-us S --tree-width W]
# Sizes: 128 1024 4096 8192 16384 (--nodes N: N only), 8 ranks per node.
# TE_BUILDDIR: the build directory (else te_build_init finds it:
# tests/lib/trainenv.sh); what the benchmark needs there is built first.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"
te_build_init
build=$TE_BUILDDIR

sizes="128 1024 4096 8192 16384" ppn=8 base=/dev/shm model=() width=() ckpt=()
while [ $# -gt 0 ]; do
	case $1 in
	--nodes) sizes=$2; shift 2 ;;
	--ranks-per-node) ppn=$2; shift 2 ;;
	--launch-tree-width) width=(--launch-tree-width "$2"); shift 2 ;;
	--checkpoint-dir) ckpt=(--checkpoint-dir "$2"); shift 2 ;;
	--dir) base=$2; shift 2 ;;
	--latency-us|--dmodex-us|--stepd-us|--tree-width) model+=("$1" "$2"); shift 2 ;;
	*) echo "usage: $0 [--nodes N] [--ranks-per-node P] [--dir BASE]" \
		"[--launch-tree-width K] [--checkpoint-dir DIR]" \
		"[--latency-us L] [--dmodex-us D] [--stepd-us S] [--tree-width W]" >&2
	   exit 2 ;;
	esac
done

nice make -C "$build" -s trainenv-rdzv tests/bench/bench_scale \
	tests/bench/bench_scale_model tests/bench/simpmix/libpmix.la \
	tests/bench/libsimconnwatch.la >/dev/null || { echo "build failed in $build" >&2; exit 1; }

run_size() { # N: the driver's output for N nodes
	"$build/tests/bench/bench_scale" --helper "$build/trainenv-rdzv" \
		--simlib "$build/tests/bench/simpmix/.libs" \
		--connwatch "$build/tests/bench/.libs/libsimconnwatch.so" \
		--nodes "$1" --ranks-per-node "$ppn" --dir "$base" "${width[@]}" "${ckpt[@]}"
}

echo "trainenv scale simulation: $(nproc) CPUs, $(awk '/MemTotal/ { printf "%.0f GB", $2 / 1048576 }' /proc/meminfo);" \
	"each node one real trainenv-rdzv, PMIx simulated, loopback TCP"
# a parent's cost per message it fans out on this host, before the
# simulation loads the machine
m=$("$build/tests/bench/bench_scale_model" --measure) || exit 1
lines=$(mktemp)
trap 'rm -f "$lines"' EXIT
# rank 0's helper with no other node: the baseline of the per-node costs
run_size 1 | tee -a "$lines" | sed 's/^/baseline: /'
status=0
for n in $sizes; do
	run_size "$n" | tee -a "$lines"
	rc=${PIPESTATUS[0]}
	[ "$rc" = 0 ] || [ "$rc" = 3 ] || status=1
done
echo
"$build/tests/bench/bench_scale_model" --s-us "${m#s_us=}" "${model[@]}" \
	<"$lines" || status=1
exit $status
