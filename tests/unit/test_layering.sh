#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The barrier's files call one another in one direction (TAP), checked on
# the built objects with nm: a file may use what a file of a lower layer
# defines, never what one of its own layer or a higher one defines. The
# layers (pmix/barrier_int.h says the same):
#   0  barrier_session.c                  the PMIx session and the loop's fds
#   1  barrier_state.c                    the shared state and its helpers
#   2  barrier_client.c barrier_coord.c   the roles: each uses layers 0-1,
#      barrier_followers.c barrier_tree.c  never another role
#   3  barrier.c                          te_barrier_*: calls the roles
# A new pmix/barrier*.c must be given its layer and its prefix here: what
# a file defines for the others starts with the prefix (te_bsess_,
# te_bstate_, te_bclient_, ...), or is barrier.h's API.
# Environment: TE_SRCDIR (default: this file's checkout), TE_BUILDDIR
# (default: the current directory; the checks skip, saying why, when the
# objects are not built there). TE_LAYERING_OBJDIR: read the objects from
# that folder instead (the files barrier*.o).
set -u
src=${TE_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd -P)}
build=${TE_BUILDDIR:-$PWD}

# shellcheck source=../lib/unit_check.sh
. "$src/tests/lib/unit_check.sh"

layer_of() { # FILE (barrier_x, no .c): its layer, or nothing
	case $1 in
	barrier_session) echo 0 ;;
	barrier_state) echo 1 ;;
	barrier_client | barrier_coord | barrier_followers | barrier_tree) echo 2 ;;
	barrier) echo 3 ;;
	esac
}

prefix_of() { # FILE: the prefix of what it defines for the others
	case $1 in
	barrier_session) echo te_bsess_ ;;
	barrier_state) echo te_bstate_ ;;
	barrier_client) echo te_bclient_ ;;
	barrier_coord) echo te_bcoord_ ;;
	barrier_followers) echo te_bfollow_ ;;
	barrier_tree) echo te_btree_ ;;
	barrier) echo te_barrier_ ;;
	esac
}

files=$(cd "$src/pmix" && ls barrier*.c | sed 's/\.c$//')
out=$(for f in $files; do
	[ -n "$(layer_of "$f")" ] || echo "pmix/$f.c has no layer"
	[ -n "$(prefix_of "$f")" ] || echo "pmix/$f.c has no prefix"
done)
check "$([ -z "$out" ] && echo 0 || echo 1)" "every pmix/barrier*.c has its layer and prefix" "$out"

object_of() { # FILE: its object, or nothing
	local d
	if [ -n "${TE_LAYERING_OBJDIR:-}" ]; then
		[ -f "$TE_LAYERING_OBJDIR/$1.o" ] && echo "$TE_LAYERING_OBJDIR/$1.o"
		return
	fi
	for d in "$build/pmix/.libs/libtepmix_la-$1.o" "$build/pmix/libtepmix_la-$1.o"; do
		[ -f "$d" ] && { echo "$d"; return; }
	done
}

missing=$(for f in $files; do [ -n "$(object_of "$f")" ] || echo "$f"; done)
if ! command -v nm >/dev/null || [ -n "$missing" ]; then
	for what in "no role file calls another" "no file calls a higher layer" \
		"the check reads the calls" "every extern carries its file's prefix"; do
		n=$((n + 1))
		echo "ok $n # SKIP $what: no nm, or not built here ($(echo $missing))"
	done
	echo "1..$n"
	[ "$failed" = 0 ]
	exit
fi

# Each file's defined (global) and undefined symbols.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in $files; do
	nm "$(object_of "$f")" | awk '$1 == "U" { print $2 }' | sort -u >"$tmp/$f.U"
	nm --defined-only "$(object_of "$f")" |
		awk '$2 ~ /^[TDBR]$/ { print $3 }' | sort -u >"$tmp/$f.D"
done

# "CALLER CALLEE SYMBOL" for every use across two files.
for a in $files; do
	for b in $files; do
		[ "$a" = "$b" ] && continue
		comm -12 "$tmp/$a.U" "$tmp/$b.D" | sed "s/^/$a $b /"
	done
done >"$tmp/edges"

same=$(while read -r a b s; do
	[ "$(layer_of "$a")" = 2 ] && [ "$(layer_of "$b")" = 2 ] &&
		echo "$a.c calls $b.c's $s"
done <"$tmp/edges")
check "$([ -z "$same" ] && echo 0 || echo 1)" "no role file calls another (the roles use only barrier_state.c and barrier_session.c)" "$same"

up=$(while read -r a b s; do
	[ "$(layer_of "$a")" -lt "$(layer_of "$b")" ] &&
		echo "$a.c (layer $(layer_of "$a")) calls $b.c's $s (layer $(layer_of "$b"))"
done <"$tmp/edges")
check "$([ -z "$up" ] && echo 0 || echo 1)" "no file calls a higher layer" "$up"

# The check can fail: the top calls each role and the roles the layers
# below (what nm lists is what the rules read).
out=$(for a in barrier_client barrier_coord barrier_followers barrier_tree; do
	grep -q "^barrier $a " "$tmp/edges" || echo "barrier.c calls nothing of $a.c"
done
grep -q "^barrier_client barrier_session " "$tmp/edges" ||
	echo "barrier_client.c calls nothing of barrier_session.c"
grep -q " barrier_state " "$tmp/edges" || echo "nothing calls barrier_state.c")
check "$([ -z "$out" ] && echo 0 || echo 1)" "the check reads the calls ($(wc -l <"$tmp/edges") across files)" "$out"

# Names: each file's globals start with its prefix, but for barrier.h's
# API (the session's te_pmix_*, ...); no prefix is another file's.
api=$(grep -ow 'te_[a-z0-9_]*' "$src/pmix/barrier.h" | sort -u)
out=$(for f in $files; do
	p=$(prefix_of "$f")
	while read -r s; do
		case $s in "$p"*) continue ;; esac
		printf '%s\n' "$api" | grep -qx -- "$s" ||
			echo "pmix/$f.c defines $s (neither $p* nor in barrier.h)"
	done <"$tmp/$f.D"
	for g in $files; do
		[ "$f" = "$g" ] || [ "$p" = te_barrier_ ] && continue
		grep "^$p" "$tmp/$g.D" | sed "s|^|pmix/$g.c defines |; s|\$| ($f.c's prefix)|"
	done
done)
check "$([ -z "$out" ] && echo 0 || echo 1)" "every extern carries its file's prefix (pmix/barrier_int.h)" "$out"

echo "1..$n"
[ "$failed" = 0 ]
