#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs test programs that speak TAP, counts their checks and ends with the line
#   N passed, N failed
# Usage: run-tests.sh [--log-dir DIR] TEST...
# A TEST is an executable (unit test binary or integration script). Every
# "ok"/"not ok" line is one check. A test that exits non-zero without reporting a
# failed check, or whose plan ("1..N") disagrees with what it ran, counts as one
# failed check, so a crash is never silent. "# SKIP reason" is reported with its
# reason and counted apart; a test that skips as a whole ("1..0 # SKIP reason",
# exit 0) shows as "SKIP  NAME: reason" and counts as one skipped check.
set -u
log_dir=${TE_TEST_LOG_DIR:-tests/logs}
if [ "${1:-}" = "--log-dir" ]; then log_dir=$2; shift 2; fi
mkdir -p "$log_dir"

passed=0 failed=0 skipped=0
failed_names=() skipped_names=()
for t in "$@"; do
	name=${t#./}
	log="$log_dir/$(echo "$name" | tr '/' '_').log"
	start=$(date +%s.%N)
	"$t" >"$log" 2>&1 </dev/null
	rc=$?
	secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f", e-s}')
	read -r p f s plan nrun < <(awk '
		/^ok [0-9]+.*# *SKIP/ { s++; nrun++; next }
		/^ok [0-9]+/          { p++; nrun++; next }
		/^not ok [0-9]+/      { f++; nrun++; next }
		/^1\.\.[0-9]+/        { split($1, a, /\.\./); plan = a[2] + 0; planned = 1 }
		END { printf "%d %d %d %s %d\n", p, f, s, planned ? plan : -1, nrun }' "$log")
	# "1..0" is TAP's plan of a file that skips whole; its reason
	# follows "# SKIP" (or "# skip") on that line.
	whole_skip=$(sed -nE '/^1\.\.0([^0-9]|$)/{s/^1\.\.0 *(# *[Ss][Kk][Ii][Pp]:? *)?//;s/^$/(no reason given)/;p;q}' "$log")
	extra=""
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=$((f + 1)); extra=" (exit status $rc with no failed check)"
	fi
	if [ "$plan" -ge 0 ] && [ "$plan" -ne "$nrun" ]; then
		f=$((f + 1)); extra="$extra (planned $plan checks, ran $nrun)"
	elif [ "$plan" -lt 0 ] && [ "$nrun" -gt 0 ]; then
		f=$((f + 1)); extra="$extra (no plan line: the test stopped early)"
	elif [ "$plan" -lt 0 ] && [ "$nrun" -eq 0 ]; then
		f=$((f + 1)); extra="$extra (ran no check)"
	fi
	passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
	if [ "$f" -gt 0 ]; then
		printf 'FAIL  %-46s %3d ok, %d failed%s  [%ss]\n' "$name" "$p" "$f" "$extra" "$secs"
		# The failed checks first (a CI excerpt may keep only the top),
		# then each with the last 20 comment lines before it and the
		# first 10 after it (diag comes on either side of its check).
		grep -E '^not ok' "$log" | sed 's/^/      /'
		awk '
			/^ok [0-9]+/ { n = 0; after = 0; next }
			/^not ok [0-9]+/ {
				print "--- " $0
				for (i = n > 20 ? n - 20 : 0; i < n; i++) print buf[i % 20]
				n = 0; after = 10; next
			}
			/^#/ { if (after > 0) { print; after--; next } buf[n % 20] = $0; n++ }
		' "$log" | head -200 | sed 's/^/      /'
		echo "      full log: $log"
		failed_names+=("$name")
	elif [ -n "$whole_skip" ] && [ "$nrun" -eq 0 ]; then
		printf 'SKIP  %s: %s  [%ss]\n' "$name" "$whole_skip" "$secs"
		skipped=$((skipped + 1)) skipped_names+=("$name")
	else
		printf 'PASS  %-46s %3d ok%s  [%ss]\n' "$name" "$p" \
			"$( [ "$s" -gt 0 ] && echo ", $s skipped")" "$secs"
	fi
	grep -E '^ok [0-9]+.*# *SKIP' "$log" | sed 's/^ok [0-9]* *-* */      skipped: /'
done

echo
[ "$skipped" -gt 0 ] && echo "$skipped skipped (reasons above)"
[ ${#skipped_names[@]} -gt 0 ] && echo "skipped whole: ${skipped_names[*]}"
[ ${#failed_names[@]} -gt 0 ] && echo "failed tests: ${failed_names[*]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
