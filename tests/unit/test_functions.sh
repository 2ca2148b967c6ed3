#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# No function of the product code (core/, spank/, pmix/) is over 100 lines
# from its first line to its last, as universal-ctags measures them
# (ctags --fields=+ne: a function's line and its end) (TAP).
# Environment: TE_SRCDIR (default: this file's checkout).
set -u
src=${TE_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd -P)}
MAX=100

# shellcheck source=../lib/unit_check.sh
. "$src/tests/lib/unit_check.sh"

# "LINES NAME FILE" for each function of the C files given.
lengths() { # DIR FILE...
	local dir=$1
	shift
	(cd "$dir" && ctags --fields=+ne -x --_xformat='%N %F %n %e' --kinds-c=f "$@" 2>/dev/null) |
		awk '$4 != "" { print $4 - $3 + 1, $1, $2 }'
}

if ! ctags --version 2>/dev/null | grep -q 'Universal Ctags'; then
	for what in "no function in core/, spank/, pmix/ is over $MAX lines" "the check finds a long function"; do
		n=$((n + 1))
		echo "ok $n # SKIP $what: needs universal-ctags (tests/deps.sh installs it)"
	done
	echo "1..$n"
	exit 0
fi

files=$(cd "$src" && ls core/*/*.c spank/*.c pmix/*.c)
all=$(lengths "$src" $files)
out=$(echo "$all" | awk -v m=$MAX '$1 > m { print $3 ": " $2 " is " $1 " lines" }')
count=$(echo "$all" | wc -l)
check "$([ -z "$out" ] && [ "$count" -gt 500 ] && echo 0 || echo 1)" \
	"no function in core/, spank/, pmix/ is over $MAX lines ($count functions; longest: $(echo "$all" | sort -rn | head -1))" "$out"

# The check can fail: a made-up function of 101 lines is measured so.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{
	echo 'int f(void)'
	echo '{'
	for i in $(seq 97); do echo "	g($i);"; done
	echo '	return 0;'
	echo '}'
} >"$tmp/long.c"
got=$(lengths "$tmp" long.c)
check "$([ "$got" = "101 f long.c" ] && echo 0 || echo 1)" "the check measures a function of 101 lines as 101" "got: $got"

echo "1..$n"
[ "$failed" = 0 ]
