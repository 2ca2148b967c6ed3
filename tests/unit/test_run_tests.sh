#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The test runner's own checks (TAP): tests/run-tests.sh on made-up tests
# shows a file that skips as a whole ("1..0 # SKIP why") as SKIP with its
# reason and counts it as skipped, never as a PASS of 0 checks, and keeps
# the closing line ("N passed, N failed") that .ci/run reads.
# Environment: TE_SRCDIR (default: this file's checkout).
set -u
src=${TE_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd -P)}
# shellcheck source-path=SCRIPTDIR source=../lib/unit_check.sh
. "$src/tests/lib/unit_check.sh"
rc() { "$@" && echo 0 || echo 1; }

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fake() { # NAME BODY: an executable test NAME in the scratch directory
	printf '#!/bin/sh\n%s\n' "$2" >"$scratch/$1"
	chmod +x "$scratch/$1"
}
fake skip_whole.sh 'echo "1..0 # SKIP two widgets are in the rc state"; exit 0'
fake two_ok.sh 'echo 1..3; echo "ok 1 - a"; echo "ok 2 - b"; echo "ok 3 - c # SKIP no c here"'
fake skip_bare.sh 'echo "1..0"'
fake skip_then_fail.sh 'echo "1..0 # SKIP not here"; exit 3'
fake skip_then_ran.sh 'echo "1..0 # SKIP not here"; echo "ok 1 - ran anyway"'
runner() { # TEST...: the runner's output, its exit status last
	(cd "$scratch" && bash "$src/tests/run-tests.sh" --log-dir "$scratch/logs" "$@")
	echo "exit $?"
}

out=$(runner ./skip_whole.sh ./two_ok.sh)
check "$(rc grep -qx 'SKIP  skip_whole.sh: two widgets are in the rc state  \[[0-9.]*s\]' <<<"$out")" \
	"a file that skips as a whole shows as 'SKIP NAME: reason'" "$out"
check "$(grep -qE '^PASS +skip_whole' <<<"$out" && echo 1 || echo 0)" \
	"... and not as a PASS" "$out"
check "$(rc grep -qx '2 skipped (reasons above)' <<<"$out")" \
	"it counts as one skipped check, beside the other file's one" "$out"
check "$(rc grep -qx 'skipped whole: skip_whole.sh' <<<"$out")" \
	"the closing lines name the file that skipped whole" "$out"
check "$(rc grep -qx '2 passed, 0 failed' <<<"$out")" \
	"the closing line keeps its form and counts the passes only" "$out"
check "$(rc test "$(grep -E '^[0-9]+ passed, [0-9]+ failed' <<<"$out" | tail -n 1)" = '2 passed, 0 failed')" \
	"the closing line is the one .ci/run's pattern finds" "$out"
check "$(rc grep -qx 'exit 0' <<<"$out")" "a run of a skip and passes succeeds" "$out"

out=$(runner ./skip_bare.sh)
check "$(rc grep -q '^SKIP  skip_bare.sh: (no reason given)' <<<"$out")" \
	"a bare '1..0' is a skip that says it gave no reason" "$out"

out=$(runner ./skip_then_fail.sh)
check "$(rc grep -q '^FAIL  skip_then_fail.sh .*exit status 3' <<<"$out")" \
	"a whole-file skip that exits non-zero fails" "$out"
check "$(rc grep -qx 'exit 1' <<<"$out")" "... and the run fails" "$out"

out=$(runner ./skip_then_ran.sh)
check "$(rc grep -q '^FAIL  skip_then_ran.sh .*planned 0 checks, ran 1' <<<"$out")" \
	"a '1..0' file that runs checks fails (its plan disagrees)" "$out"

echo "1..$n"
[ "$failed" -eq 0 ]
