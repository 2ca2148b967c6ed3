#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The tree's layout rules, checked on the sources and on the built objects
# (TAP): core/ is pure (no Slurm, PMIx or CUDA header, only core headers),
# spank/ and pmix/ never include each other's headers, no generated file is
# in git, every C file says what it is in its first line and none is over
# about 700 lines, and the plugin that runs as root in slurmstepd carries none of the
# barrier coordinator's network code.
# Environment: TE_SRCDIR (default: this file's checkout), TE_BUILDDIR
# (default: the current directory; the nm checks skip, saying why, when
# nothing is built there).
set -u
src=${TE_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd -P)}
build=${TE_BUILDDIR:-$PWD}

# shellcheck source=../lib/unit_check.sh
. "$src/tests/lib/unit_check.sh"

# The quoted includes of the C files in DIR: "FILE HEADER" lines.
quoted_includes() {
	grep -Ho '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*"' "$src/$1"/*.[ch] |
		sed -E 's|^'"$src"'/||; s|:[[:space:]]*#[[:space:]]*include[[:space:]]*"| |; s|"$||'
}

# A core header is named by its room: "ROOM/FILE.h" under core/.
core_header() { # HEADER
	case $1 in */*) [ -e "$src/core/$1" ] ;; *) false ;; esac
}

# Headers a side may use: its own, the core's, the public one, config.h.
foreign() { # SIDE: the includes of SIDE's files found in no allowed place
	local side=$1 f h
	quoted_includes "$side" | while read -r f h; do
		[ "$h" = config.h ] && continue
		[ -e "$src/$side/$h" ] || core_header "$h" ||
			[ -e "$src/include/$h" ] && continue
		echo "$f includes \"$h\""
	done
}

out=$(foreign spank)
check "$([ -z "$out" ] && echo 0 || echo 1)" "spank/ includes only its own, core/ and include/ headers" "$out"
out=$(foreign pmix)
check "$([ -z "$out" ] && echo 0 || echo 1)" "pmix/ includes only its own, core/ and include/ headers" "$out"

out=$(for r in "$src"/core/*/; do quoted_includes "core/$(basename "$r")"; done | while read -r f h; do
	[ "$h" = config.h ] || core_header "$h" || echo "$f includes \"$h\""
done)
check "$([ -z "$out" ] && echo 0 || echo 1)" "core/ includes only core/ headers, each named by its room (ROOM/FILE.h)" "$out"
out=$(grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*<\(slurm/\|pmix\|cuda\|nccl\|dlfcn\.h\)' "$src"/core/*/*.[ch])
check "$([ -z "$out" ] && echo 0 || echo 1)" "core/ includes no Slurm, PMIx, CUDA or NCCL header and loads nothing (dlfcn.h)" "$out"

# The check itself can fail: a spank file that includes a PMIx-side header
# is found (a scratch copy of the rule, on a made-up file).
tmp=$(mktemp -d)
mkdir -p "$tmp/spank" "$tmp/pmix" "$tmp/core" "$tmp/include"
printf '#include "barrier.h"\n' >"$tmp/spank/bad.c"
: >"$tmp/pmix/barrier.h"
out=$(src=$tmp foreign spank)
rm -rf "$tmp"
check "$([ "$out" = 'spank/bad.c includes "barrier.h"' ] && echo 0 || echo 1)" \
	"the rule finds a spank/ file that includes a pmix/ header" "got: $out"

if [ -d "$src/.git" ] || [ -f "$src/.git" ]; then
	out=$(git -C "$src" ls-files -- configure 'configure~' Makefile.in config.h.in aclocal.m4 \
		'build-aux/*' 'autom4te.cache/*' '*.o' '*.lo' '*.so' '*.orig' '*.rej' '*~')
	check "$([ -z "$out" ] && echo 0 || echo 1)" "no generated file is in git" "$out"
else
	echo "ok $((n + 1)) # SKIP not a git checkout (a release tarball): nothing to ask git"
	n=$((n + 1))
fi

# Every path the docs, the man page and the code's comments cite is in the
# tree (a file moved or renamed leaves no stale reference). Generated files
# and placeholders are named here.
cited() {
	(cd "$src" && grep -ohE '(^|[^A-Za-z0-9_./-])(spank|pmix|core|docs|tests|etc|include|python)/[A-Za-z0-9_./-]*[A-Za-z0-9_]\.(c|h|md|sh|py|8|example|map|in|xml)\b' \
		README.md docs/*.md etc/trainenv.8 core/*/*.[ch] spank/*.[ch] pmix/*.[ch] \
		tests/*.sh tests/*/*.sh tests/*/*.c tests/unit/*/*.c tests/cluster/README.md Makefile.am 2>/dev/null |
		sed -E 's/^[^a-z]//' | sort -u)
}
out=$(cited | while read -r p; do
	case $p in
	python/trainenv/_paths.py | spank/bad.c | tests/integration/tNN.sh) continue ;;
	# test_spdx.sh's scratch tree
	core/x.c | pmix/y.c | pmix/y.h | pmix/z.h) continue ;;
	esac
	[ -e "$src/$p" ] || echo "cited but not in the tree: $p"
done)
check "$([ -z "$out" ] && echo 0 || echo 1)" "every file the docs and comments cite is in the tree" "$out"
out=$(cd "$src" && grep -rln --exclude-dir=.git --exclude-dir='_build*' --exclude=test_layout.sh '\bDESIGN\.md' . 2>/dev/null)
check "$([ -z "$out" ] && echo 0 || echo 1)" "nothing cites DESIGN.md, which is not in the tree (docs/design.md is)" "$out"
out=$(cited | wc -l)
check "$([ "$out" -gt 20 ] && echo 0 || echo 1)" "the citation check reads the citations ($out paths)"

# Every C file opens with a comment saying what it is (its first line
# after the SPDX line, which test_spdx.sh puts on line 1), and
# none of the source folders' C files is over about 700 lines.
c_files() {
	(cd "$src" && ls core/*/*.[ch] spank/*.[ch] pmix/*.[ch] include/*/*.h \
		tests/unit/*.[ch] tests/unit/*/*.c tests/fuzz/*.c tests/bench/*.c 2>/dev/null)
}
opening() { # FILE: its first line that is not the SPDX line
	grep -v -m1 '^/\* SPDX-License-Identifier: [^ ]* \*/$' "$1"
}
out=$(c_files | while read -r f; do
	opening "$src/$f" | grep -q '^/\* [^ ]' || echo "$f: $(opening "$src/$f" | cut -c1-60)"
done)
check "$([ -z "$out" ] && echo 0 || echo 1)" "every C file opens with a line saying what it is" "$out"
count=$(c_files | wc -l)
check "$([ "$count" -gt 80 ] && echo 0 || echo 1)" "the opening-line check reads the C files ($count)"
out=$(cd "$src" && wc -l core/*/*.c spank/*.c pmix/*.c | awk '$2 != "total" && $1 > 750 { print $2 ": " $1 " lines" }')
check "$([ -z "$out" ] && echo 0 || echo 1)" "no C file in core/, spank/ or pmix/ is over 750 lines" "$out"

# nm_checks NAME OBJECT FORBIDDEN_ERE WHAT OWN_A OWN_B: OBJECT defines no
# symbol matching FORBIDDEN_ERE; a second check shows the first can fail
# (OBJECT's own OWN_A and OWN_B are listed).
nm_checks() {
	local syms out
	if [ -f "$2" ] && command -v nm >/dev/null; then
		syms=$(nm "$2" 2>/dev/null | awk '{ print $NF }')
		out=$(printf '%s\n' "$syms" | grep -E "$3" | head)
		check "$([ -n "$syms" ] && [ -z "$out" ] && echo 0 || echo 1)" "$1 $4" "$out"
		out=$(printf '%s\n' "$syms" | grep -c -x -e "$5" -e "$6")
		check "$([ "$out" = 2 ] && echo 0 || echo 1)" \
			"the nm check can fail: $1's own functions are listed ($5, $6)"
	else
		echo "ok $((n + 1)) # SKIP no $1 built (or no nm): the object checks need a build"
		echo "ok $((n + 2)) # SKIP no $1 built (or no nm): the object checks need a build"
		n=$((n + 2))
	fi
}
nm_checks trainenv.so "$build/.libs/trainenv.so" \
	'^(te_barrier_|te_b(sess|state|client|coord|follow|tree)_|te_cc_|coord_|te_pmix_)' \
	"(root, in slurmstepd) holds no barrier, coordinator or PMIx session code" \
	te_strlcpy te_bind_compute
nm_checks libtrainenv.so "$(ls "$build"/.libs/libtrainenv.so.[0-9]*.[0-9]* 2>/dev/null | head -1)" \
	'^te_(policy_|resolve$|check_user_value$|failrep_(listen|finish|conn_|sender_))' \
	"(in the user's program) holds no policy parser and none of srun's report listener nor slurmstepd's sender (the stall line's format is its own)" \
	te_config_decode te_barrier_wait

echo "1..$n"
[ "$failed" = 0 ]
