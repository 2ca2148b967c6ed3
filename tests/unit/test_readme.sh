#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The README stays a screen or two and the docs stay linked (TAP):
# README.md is at most 12,288 bytes and links every docs/*.md, the man page,
# etc/examples/, NEWS.md and the tests' READMEs; every relative link of
# README.md and docs/*.md, and every tree path they name in backquotes,
# exists in the tree; docs/architecture.md's
# "## Rooms" names exactly the folders of core/, one line each; no
# --train-NAME option is in a table row of both README.md and a docs/*.md
# (trainenv(8) and --train=help are the one place for options). Each check
# is shown to fail once, on a scratch tree.
# Environment: TE_SRCDIR (default: this file's checkout).
set -u
src=${TE_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd -P)}

# shellcheck source=../lib/unit_check.sh
. "$src/tests/lib/unit_check.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

rc() { "$@" && echo 0 || echo 1; }
max_bytes=12288
# A path of the tree in backquotes, as grep -o finds it.
# shellcheck disable=SC2016
tree_path='`\(spank\|pmix\|core\|docs\|tests\|etc\|include\|python\|debian\|tools\|m4\)/[^` ]*`'

# The targets of FILE's markdown links [text](target), one a line.
links_of() { # FILE
	grep -o '\]([^)[:space:]]*)' "$1" | sed 's/^](//; s/)$//'
}

# Relative links of FILES (under SRC) whose target is not there:
# "FILE: TARGET" lines. Web and mail links and bare #anchors are not files.
broken_links() { # SRC FILE...
	local dir=$1 f t p
	shift
	for f in "$@"; do
		links_of "$dir/$f" | while read -r t; do
			case $t in '' | \#* | *://* | mailto:*) continue ;; esac
			p=${t%%#*}
			[ -e "$dir/$(dirname "$f")/$p" ] || echo "$f: $t"
		done
	done
}

# Tree paths FILES (under SRC) name in backquotes (`tests/deps.sh`,
# `core/launch/`) that are not there: "FILE: PATH" lines. A glob matches at
# least one file; a program built from PATH.c counts as there.
missing_paths() { # SRC FILE...
	local dir=$1 f p
	shift
	for f in "$@"; do
		grep -o "$tree_path" \
			"$dir/$f" | tr -d '`' | sort -u | while read -r p; do
			compgen -G "$dir/$p" >/dev/null || [ -e "$dir/$p.c" ] || echo "$f: $p"
		done
	done
}

# What README.md (under SRC) must link and does not: each docs/*.md and
# NEEDED, as README-relative targets.
unlinked() { # SRC NEEDED...
	local dir=$1 d links
	shift
	links=$(links_of "$dir/README.md" | sed 's/#.*//')
	for d in $(cd "$dir" && ls docs/*.md) "$@"; do
		printf '%s\n' "$links" | grep -qxF "$d" || echo "$d"
	done
}

# The rooms docs/architecture.md's "## Rooms" names ("- `core/ROOM/`: ..."),
# in its order; malformed list lines as "bad: LINE".
rooms_listed() { # ARCHITECTURE_MD
	awk '/^## /{ on = ($0 == "## Rooms") } on && /^- /' "$1" |
		sed 's|^- `core/\([a-z_][a-z0-9_]*\)/`: [^ ].*|\1|; t; s|^|bad: |'
}

# Rooms listed and folders of SRC/core/ that differ, "listed twice: R",
# "listed, not a folder: R", "a folder, not listed: R", "bad: LINE".
rooms_diff() { # SRC
	local dir=$1 listed folders
	listed=$(rooms_listed "$dir/docs/architecture.md")
	folders=$(cd "$dir/core" && ls -d -- */ 2>/dev/null | sed 's|/$||' | sort)
	printf '%s\n' "$listed" | grep '^bad: '
	printf '%s\n' "$listed" | grep -v '^bad: ' | sort | uniq -d | sed 's/^/listed twice: /'
	comm -23 <(printf '%s\n' "$listed" | grep -v '^bad: ' | sort -u) \
		<(printf '%s\n' "$folders") | sed '/^$/d; s/^/listed, not a folder: /'
	comm -13 <(printf '%s\n' "$listed" | grep -v '^bad: ' | sort -u) \
		<(printf '%s\n' "$folders") | sed '/^$/d; s/^/a folder, not listed: /'
}

# --train-NAME options in the table rows (lines starting with "|") of FILES.
table_options() { # FILE...
	grep -h '^[[:space:]]*|' "$@" 2>/dev/null |
		grep -o -- '--train-[a-z][a-z0-9-]*[a-z0-9]' | sort -u
}

# Options in a table row of README.md and of a docs/*.md, both under SRC.
options_twice() { # SRC
	comm -12 <(table_options "$1/README.md") <(table_options "$1"/docs/*.md)
}

# ---------------------------------------------------------------- the tree
size=$(wc -c <"$src/README.md")
check "$(rc test "$size" -le "$max_bytes")" "README.md is at most $max_bytes bytes ($size)"

out=$(unlinked "$src" etc/trainenv.8 etc/examples/ NEWS.md tests/cluster/README.md \
	tests/gpu/README.md tests/containers/README.md)
check "$(rc test -z "$out")" "README.md links every docs/*.md ($(cd "$src" && ls docs/*.md | wc -l)), the man page, etc/examples/, NEWS.md and the tests' READMEs" "not linked: $out"

files=$(cd "$src" && ls README.md docs/*.md)
# shellcheck disable=SC2086
out=$(broken_links "$src" $files)
# shellcheck disable=SC2086
count=$(for f in $files; do links_of "$src/$f"; done | grep -cv '://')
check "$(rc test -z "$out" -a "$count" -gt 20)" "every relative link in README.md and docs/*.md is in the tree ($count links)" "$out"
# shellcheck disable=SC2086
out=$(missing_paths "$src" $files)
# shellcheck disable=SC2086
count=$(cd "$src" && grep -ho "$tree_path" $files | sort -u | wc -l)
check "$(rc test -z "$out" -a "$count" -gt 20)" "every tree path README.md and docs/*.md name in backquotes is in the tree ($count paths)" "$out"

out=$(rooms_diff "$src")
check "$(rc test -z "$out")" "docs/architecture.md's \"## Rooms\" names exactly the folders of core/, one line each ($(rooms_listed "$src/docs/architecture.md" | wc -l))" "$out"

out=$(options_twice "$src")
check "$(rc test -z "$out")" "no --train-NAME option is in a table row of both README.md and a docs/*.md" "$out"

# ---------------------------------------------------------------- the checks can fail
# Each on a scratch tree made for it.
s=$tmp/size
mkdir -p "$s"
{ cat "$src/README.md"; head -c "$max_bytes" /dev/zero | tr '\0' x; } >"$s/README.md"
size=$(wc -c <"$s/README.md")
check "$(rc test "$size" -gt "$max_bytes")" "the size check can fail: a README.md padded to $size bytes is over"

# The scratch trees' paths are spelled through $d and $t so that
# test_layout.sh's citation check does not take them for the tree's.
d=docs t=tests
s=$tmp/unlinked
mkdir -p "$s/$d"
printf '# x\n\n[a](%s/a.md) [man](etc/trainenv.8)\n' "$d" >"$s/README.md"
: >"$s/$d/a.md"
: >"$s/$d/b.md"
out=$(unlinked "$s" etc/trainenv.8 NEWS.md)
check "$(rc test "$out" = "$d/b.md
NEWS.md")" "the linked-docs check can fail: a doc and NEWS.md, not linked, are found" "got: $out"

s=$tmp/broken
mkdir -p "$s/$d"
printf '[a](%s/a.md#x) [w](https://example.org/y) [t](#top) [g](%s/gone.md)\n' "$d" "$d" >"$s/README.md"
printf '[r](../README.md) [up](../nothere.md)\n' >"$s/$d/a.md"
out=$(broken_links "$s" README.md "$d/a.md")
check "$(rc test "$out" = "README.md: $d/gone.md
$d/a.md: ../nothere.md")" "the link check can fail: a link to a missing file, from README.md and from docs/, is found" "got: $out"
mkdir -p "$s/$t/unit" "$s/$t/bench"
: >"$s/$t/unit/t_a.sh"
: >"$s/$t/bench/b.c"
printf 'Run `%s/unit/t_*.sh`, `%s/bench/b`, `%s/gone.sh` and `/usr/bin/x`.\n' "$t" "$t" "$t" >"$s/README.md"
out=$(missing_paths "$s" README.md)
check "$(rc test "$out" = "README.md: $t/gone.sh")" "the path check can fail: a path in backquotes that is not in the tree is found (a glob, a built program and an absolute path are not)" "got: $out"

s=$tmp/rooms
mkdir -p "$s/docs" "$s/core/low" "$s/core/high"
printf '## Rooms\n\n- `core/low/`: one\n- `core/gone/`: two\n- core/high: three\n\n## Next\n\n- `core/x/`: not a room line\n' \
	>"$s/docs/architecture.md"
out=$(rooms_diff "$s")
check "$(rc test "$out" = "bad: - core/high: three
listed, not a folder: gone
a folder, not listed: high")" "the rooms check can fail: a malformed line, a listed room with no folder and a folder not listed are found" "got: $out"

s=$tmp/options
mkdir -p "$s/docs"
printf '| `--train-bind=none` | binds |\n\nText --train-stall here.\n' >"$s/README.md"
printf '| option | what |\n| `--train-bind` | binds |\n| `--train-stall` | x |\n' >"$s/docs/x.md"
out=$(options_twice "$s")
check "$(rc test "$out" = "--train-bind")" "the options check can fail: --train-bind in a table row of both is found (--train-stall, in README's text only, is not)" "got: $out"

echo "1..$n"
[ "$failed" = 0 ]
