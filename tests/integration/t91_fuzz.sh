#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every libFuzzer target (tests/fuzz/fuzz_*.c: the policy parser, the
# option values, the environment and the strings the plugin reads, the
# CPU/GPU lists, the helper's pipe protocol, the coordinator's lines from
# PMIx peers) is built with ASan+UBSan and run from the seed corpus for a
# short time: no crash, no sanitizer report, no broken invariant. The long
# campaigns and their figures are in docs/RELIABILITY.md.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"
te_build_init
# The fuzz targets build in the build tree itself, not its staged copy.
builddir=$TE_REAL_BUILDDIR
secs=${TE_FUZZ_SECONDS:-15}

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
for t in "${targets[@]}"; do
	line=$(TE_BUILDDIR=$builddir TE_FUZZ_DIR=$out_dir "$here/../fuzz/run.sh" "$secs" "$t" 2>&1 | tail -1)
	like "$line" "^fuzz_$t +[0-9]+s +[0-9]+ runs .* no finding$" "fuzz_$t: ${secs}s from the seed corpus, no finding" ||
		diag "$(tail -n 30 "$out_dir/$t.log" 2>/dev/null)"
done
done_testing
