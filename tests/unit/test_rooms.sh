#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The rooms of core/ and the direction of every call in the tree (TAP).
#
# core/ is a stack of rooms (folders), lowest first in docs/architecture.md's
# "## Rooms" list, the one place that orders them. A file may use a room
# below its own or its own room, never one above: checked on the quoted
# includes ("ROOM/FILE.h") and on the built objects with nm (a symbol a
# file uses and a file of a higher room defines). Across the whole tree
# (core/, spank/, pmix/) calls run one way: the graph of "file A uses a
# symbol file B defines" has no circle, and neither has the graph of the
# headers' includes. core/ holds at most 4 plain files beside its rooms.
# Environment: TE_SRCDIR (default: this file's checkout), TE_BUILDDIR
# (default: the current directory; the object checks skip, saying why,
# when nothing is built there).
set -u
src=${TE_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd -P)}
build=${TE_BUILDDIR:-$PWD}

# shellcheck source=../lib/unit_check.sh
. "$src/tests/lib/unit_check.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The rooms in order, lowest first: "- `core/ROOM/`: its job" lines.
rooms_of() { # ARCHITECTURE_MD
	awk '/^## /{ on = ($0 == "## Rooms") } on' "$1" |
		sed -n 's|^- `core/\([a-z_]*\)/`:.*|\1|p'
}

# An awk program's first rule, given the rooms file first: rank[ROOM] is
# its place (1 = lowest), unset if unlisted. (One awk per rule, not one
# per include or call: that took most of this test's 12 s.)
# shellcheck disable=SC2016 # awk's $0
rank_awk='NR == FNR { if (!($0 in rank)) rank[$0] = NR; next }'

# The quoted includes of core/'s files that name a room above their own:
# "FILE includes ROOM/H.h (ROOM is above FROM)".
include_violations() { # SRCDIR ROOMS_FILE
	local dir=$1 rooms=$2
	(cd "$dir" && grep -Ho '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*"' core/*/*.[ch] 2>/dev/null) |
		sed -E 's|:[[:space:]]*#[[:space:]]*include[[:space:]]*"| |; s|"$||' |
		awk "$rank_awk"'
			$2 ~ /\// { n = split($1, p, "/"); own = p[n - 1]; split($2, q, "/"); hr = q[1]
				if ((own in rank) && (hr in rank) && rank[hr] > rank[own])
					print $1 " includes " $2 " (" hr " is above " own ")" }' "$rooms" -
}

rooms="$tmp/rooms"
rooms_of "$src/docs/architecture.md" >"$rooms"
(cd "$src/core" && ls -d -- */ 2>/dev/null | sed 's|/$||') | sort >"$tmp/folders"
out=$(diff <(sort "$rooms") "$tmp/folders" | sed -n 's/^< /listed but no folder: /p; s/^> /folder not listed: /p')
check "$([ -s "$rooms" ] && [ -z "$out" ] && echo 0 || echo 1)" \
	"docs/architecture.md's rooms are core/'s folders ($(paste -sd" " "$rooms"))" "$out"
out=$(find "$src/core" -maxdepth 1 -type f | wc -l)
check "$([ "$out" -le 4 ] && echo 0 || echo 1)" "core/ holds at most 4 files beside its rooms ($out)"

out=$(include_violations "$src" "$rooms")
check "$([ -z "$out" ] && echo 0 || echo 1)" "no core/ file includes a header of a room above its own" "$out"

# The headers' include graph has no circle (tsort names one).
header_edges() { # SRCDIR: "INCLUDER INCLUDED" for the tree's headers
	local dir=$1
	(cd "$dir" && grep -Ho '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*"' \
		core/*/*.h spank/*.h pmix/*.h 2>/dev/null) |
		sed -E 's|:[[:space:]]*#[[:space:]]*include[[:space:]]*"| |; s|"$||' |
		while read -r f h; do
			case $h in
			*/*) [ -f "$dir/core/$h" ] && echo "$f core/$h" ;;
			*) [ -f "$dir/$(dirname "$f")/$h" ] && echo "$f $(dirname "$f")/$h" ;;
			esac
		done
}
loop=$(header_edges "$src" | tsort 2>&1 >/dev/null)
check "$([ -z "$loop" ] && echo 0 || echo 1)" "the headers' includes have no circle" "$loop"

# The checks can fail: a scratch tree whose settings room includes a
# header of launch, which is above it.
s="$tmp/scratch"
mkdir -p "$s/core/util" "$s/core/settings" "$s/core/launch" "$s/docs"
printf '# x\n## Rooms\n- `core/util/`: a\n- `core/settings/`: b\n- `core/launch/`: c\n## Next\n- `core/zzz/`: no\n' >"$s/docs/architecture.md"
# (the scratch paths through $c: test_layout.sh takes a literal path for a
# citation of a file of the tree)
c=core
printf '#include "launch/x.h"\n#include "util/y.h"\n' >"$s/$c/settings/a.c"
rooms_of "$s/docs/architecture.md" >"$tmp/srooms"
out=$(include_violations "$s" "$tmp/srooms")
check "$([ "$out" = "$c/settings/a.c includes launch/x.h (launch is above settings)" ] && echo 0 || echo 1)" \
	"the include rule finds a file that includes a higher room's header, and only that" "got: $out"
check "$([ "$(paste -sd" " "$tmp/srooms")" = 'util settings launch' ] && echo 0 || echo 1)" \
	"the rooms are read from the Rooms section only, in order" "got: $(paste -sd" " "$tmp/srooms")"
printf '#include "b.h"\n' >"$s/$c/util/a.h"
printf '#include "a.h"\n' >"$s/$c/util/b.h"
loop=$(header_edges "$s" | tsort 2>&1 >/dev/null)
check "$([ -n "$loop" ] && echo 0 || echo 1)" "the header rule finds two headers that include each other"

# ---- the built objects
# A source file's objects in the build tree: libtool's and automake's
# names (FILE.o, TARGET-FILE.o, under .libs/ or not).
objects_of() { # SOURCE (core/util/strutil.c)
	local d b o
	d=$(dirname "$1") b=$(basename "$1" .c)
	for o in "$build/$d/$b.o" "$build/$d/.libs/$b.o" "$build/$d"/*-"$b".o "$build/$d"/.libs/*-"$b".o; do
		[ -f "$o" ] && echo "$o"
	done
}

sources=$(cd "$src" && ls core/*/*.c spank/*.c pmix/*.c 2>/dev/null)
# "OBJECT SOURCE" lines, each source's objects found once (and nm run
# once over them all, below: a process per object and per rule took
# most of this test's 12 s)
for f in $sources; do for o in $(objects_of "$f"); do echo "$o $f"; done; done >"$tmp/objects"
missing=$(for f in $sources; do grep -q " $f\$" "$tmp/objects" || echo "$f"; done)
if ! command -v nm >/dev/null || ! command -v tsort >/dev/null || [ -n "$missing" ]; then
	for what in "no core/ file uses a symbol of a room above its own" \
		"no circle of calls between the tree's files" "the object checks read the calls" \
		"no extern symbol shares its name with another file's symbol"; do
		n=$((n + 1))
		echo "ok $n # SKIP $what: no nm or tsort, or not built here ($(echo $missing | cut -c1-200))"
	done
	echo "1..$n"
	[ "$failed" = 0 ]
	exit
fi

# "FILE TYPE SYMBOL" lines: every symbol of each source file's objects
# (nm -A: "OBJECT:VALUE TYPE SYMBOL", "OBJECT:  U SYMBOL" when undefined)
# shellcheck disable=SC2046 # one object path a word
nm -A $(awk '{ print $1 }' "$tmp/objects") 2>/dev/null |
	awk 'NR == FNR { src[$1] = $2; next }
		{ i = index($0, ":"); o = substr($0, 1, i - 1); $0 = substr($0, i + 1)
		  if (NF == 3) print src[o], $2, $3; else if (NF == 2) print src[o], $1, $2 }' "$tmp/objects" - >"$tmp/nm"
# "FILE SYMBOL" lines: what each source file's objects define (global) and
# leave undefined.
awk '$2 ~ /^[TDBR]$/ { print $1, $3 }' "$tmp/nm" | sort -u -k2,2 -k1,1 >"$tmp/defs"
awk '$2 == "U" { print $1, $3 }' "$tmp/nm" | sort -u >"$tmp/uses"
# "USER DEFINER SYMBOL" for a use across two files.
join -1 2 -2 2 <(sort -k2,2 "$tmp/uses") <(sort -k2,2 "$tmp/defs") |
	awk '$2 != $3 { print $2, $3, $1 }' | sort -u >"$tmp/edges"

out=$(awk "$rank_awk"'
	$1 ~ /^core\// && $2 ~ /^core\// {
		na = split($1, pa, "/"); nb = split($2, pb, "/"); ra = pa[na - 1]; rb = pb[nb - 1]
		if ((ra in rank) && (rb in rank) && rank[rb] > rank[ra]) print $1 " uses " $2 "\047s " $3 }' "$rooms" "$tmp/edges")
check "$([ -z "$out" ] && echo 0 || echo 1)" "no core/ file uses a symbol of a room above its own" "$out"

loop=$(awk '{ print $1, $2 }' "$tmp/edges" | sort -u | tsort 2>&1 >/dev/null)
check "$([ -z "$loop" ] && echo 0 || echo 1)" "no circle of calls between the tree's files (core/, spank/, pmix/)" \
	"$loop
$(awk '{ print $1 " -> " $2 " (" $3 ")" }' "$tmp/edges" | grep -F -f <(echo "$loop" | awk '/^tsort: [^-]/ { print $2 }' | sed 's/^/ /') 2>/dev/null | head -20)"
count=$(wc -l <"$tmp/edges")
check "$([ "$count" -gt 100 ] && grep -q '^core/settings/policy.c core/util/strutil.c ' "$tmp/edges" && echo 0 || echo 1)" \
	"the object checks read the calls ($count uses across files, policy.c's of strutil.c among them)"

# An extern symbol's name is its file's alone: no other file defines a
# symbol of that name, extern or static (the programs' main aside). The
# statics come from nm and, as the compiler may inline them away, from
# ctags' functions and file-level variables of the sources.
shared_names() { # DEFS ALL: "NAME (FILE) is also defined in OTHER" lines
	awk '{ print $2, $1 }' "$1" | sort -u |
		join - <(awk '{ print $2, $1 }' "$2" | sort -u) |
		awk '$1 != "main" && $2 != $3 { print $1 " (" $2 ") is also defined in " $3 }'
}
awk '$2 ~ /^[TDBRtdbr]$/ && $3 !~ /\./ { print $1, $3 }' "$tmp/nm" >"$tmp/all"
if ctags --version 2>/dev/null | grep -q 'Universal Ctags'; then
	(cd "$src" && ctags -x --_xformat='%F %N' --kinds-c=fv $sources 2>/dev/null) >>"$tmp/all"
fi
sort -u "$tmp/all" -o "$tmp/all"
out=$(shared_names "$tmp/defs" "$tmp/all")
check "$([ -z "$out" ] && [ -s "$tmp/all" ] && echo 0 || echo 1)" \
	"no extern symbol shares its name with another file's symbol ($(wc -l <"$tmp/all") symbols)" "$out"
printf 'a.c conn_close\na.c te_x\n' >"$tmp/sdefs"
printf 'a.c conn_close\na.c te_x\nb.c conn_close\nb.c main\nc.c main\n' >"$tmp/sall"
out=$(shared_names "$tmp/sdefs" "$tmp/sall")
check "$([ "$out" = "conn_close (a.c) is also defined in b.c" ] && echo 0 || echo 1)" \
	"the rule finds an extern that another file's static shares, and only that" "got: $out"

echo "1..$n"
[ "$failed" = 0 ]
