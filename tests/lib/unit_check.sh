#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The TAP check of the unit tests written in bash (tests/unit/*.sh): source
# it, then `check RC NAME [DETAIL]` per check and `echo "1..$n"` at the
# end; $failed counts the failed ones.
n=0 failed=0

check() { # RC NAME [DETAIL]
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
		[ -n "${3:-}" ] && printf '%s\n' "$3" | sed 's/^/#   /'
	fi
}
