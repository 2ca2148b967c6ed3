#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every libFuzzer target (tests/fuzz/fuzz_*.c: the policy parser, the
# option values, the environment and the strings the plugin reads, the
# CPU/GPU lists, the helper's pipe protocol, the coordinator's lines from
# PMIx peers) is built with ASan+UBSan and run from the seed corpus for a
# short time: no crash, no sanitizer report, no broken invariant. The long
# campaigns and their figures are in docs/RELIABILITY.md.
# CI's time (its 90 minutes): each target replays its whole seed corpus
# (the inputs that found something before, every run) and then fuzzes for
# 5 s, not 15 (still tens of thousands to millions of executions, what a
# smoke run is for; the search itself is the long campaigns' job:
# tests/fuzz/run.sh SECONDS, make fuzz FUZZ_SECONDS=N, TE_FUZZ_SECONDS=N
# here), and the targets build and run as many at once as there are CPUs,
# their lines checked in their order.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"
te_build_init
# The fuzz targets build in the build tree itself, not its staged copy.
builddir=$TE_REAL_BUILDDIR
secs=${TE_FUZZ_SECONDS:-5}

if ! command -v clang >/dev/null; then
	echo "1..0 # SKIP clang is not installed (tests/deps.sh installs it)"
	exit 0
fi
targets=()
for f in "$here"/../fuzz/fuzz_*.c; do
	t=$(basename "$f" .c)
	targets+=("${t#fuzz_}")
done
plan ${#targets[@]}
out_dir=$(mktemp -d /var/tmp/te-fuzz.XXXXXX)
trap 'rm -rf "$out_dir"' EXIT
jobs=$(nproc)
running=0 pids=()
for t in "${targets[@]}"; do
	if [ "$running" -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
	(TE_BUILDDIR=$builddir TE_FUZZ_DIR=$out_dir "$here/../fuzz/run.sh" "$secs" "$t" >"$out_dir/$t.line" 2>&1) &
	pids+=($!) running=$((running + 1))
done
wait "${pids[@]}"
for t in "${targets[@]}"; do
	line=$(tail -1 "$out_dir/$t.line")
	like "$line" "^fuzz_$t +[0-9]+s +[0-9]+ runs .* no finding$" "fuzz_$t: ${secs}s from the seed corpus, no finding" ||
		diag "$(tail -n 30 "$out_dir/$t.log" 2>/dev/null)"
done
done_testing
