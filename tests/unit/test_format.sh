#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The C sources are as .clang-format lays them out (TAP), with the
# clang-format it is pinned to: Debian 12's, major version 14 (another
# major formats differently, so the check then skips, saying so).
# Environment: TE_SRCDIR (default: this file's checkout); TE_CLANG_FORMAT
# (default: clang-format-14, else clang-format).
set -u
src=${TE_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd -P)}
PIN=14

# shellcheck source=../lib/unit_check.sh
. "$src/tests/lib/unit_check.sh"

cf=${TE_CLANG_FORMAT:-}
if [ -z "$cf" ]; then
	cf=clang-format-$PIN
	command -v "$cf" >/dev/null || cf=clang-format
fi
major=$("$cf" --version 2>/dev/null | sed -n 's/.*clang-format version \([0-9]*\)\..*/\1/p')

# The files: C sources and headers of the tree (git's list where the tree
# is a checkout's top, else a find: a tarball unpacked inside another
# checkout, as make distcheck does, is no checkout of its own).
c_files() {
	if [ "$(git -C "$src" rev-parse --show-toplevel 2>/dev/null)" = "$src" ]; then
		git -C "$src" ls-files '*.c' '*.h'
	else
		(cd "$src" && find core spank pmix include tests -name '*.[ch]' | sort)
	fi
}

if [ "$major" != "$PIN" ]; then
	for what in "every C file is as .clang-format lays it out" "the check finds a file laid out otherwise"; do
		n=$((n + 1))
		echo "ok $n # SKIP $what: needs clang-format $PIN (Debian 12's; tests/deps.sh installs it), found: ${major:-none}"
	done
	echo "1..$n"
	exit 0
fi

check "$([ -f "$src/.clang-format" ] && echo 0 || echo 1)" ".clang-format is in the tree"
files=$(c_files)
out=$(cd "$src" && for f in $files; do
	"$cf" --style=file --dry-run --Werror "$f" >/dev/null 2>&1 || echo "$f"
done)
count=$(echo "$files" | wc -w)
check "$([ -z "$out" ] && [ "$count" -gt 100 ] && echo 0 || echo 1)" \
	"every C file is as .clang-format lays it out ($count files; to fix: $cf -i FILE)" "$out"

# The check can fail: a copy of a file with a brace moved is found.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$src/.clang-format" "$tmp/"
printf 'int f(void) {\n\treturn 0;\n}\n' >"$tmp/bad.c"
(cd "$tmp" && "$cf" --style=file --dry-run --Werror bad.c >/dev/null 2>&1)
check "$([ $? != 0 ] && echo 0 || echo 1)" "the check finds a file laid out otherwise (a function's brace on its line)"

echo "1..$n"
[ "$failed" = 0 ]
