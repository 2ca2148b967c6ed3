#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# spank/ runs one way (TAP): no circle of calls or includes, nothing back up to plugin.c.
# plugin.c owns every slurm_spank_* callback and calls one file per
# context (srun.c, alloc.c, slurmstepd.c); those call their features,
# which call the shared state (stepd_step.c, state.c). So: the graph of
# "file A uses a symbol file B defines" between trainenv.so's objects has
# no circle (tsort names one) and nothing uses plugin.c; the graph of
# quoted includes between spank/'s files (X.c and X.h are one node X) has
# no circle; and the dispatcher's headers (plugin.h, and each context's
# entry points: srun.h, alloc.h, slurmstepd.h) are included by plugin.c
# and the context's own file only.
# Environment: TE_SRCDIR (default: this file's checkout), TE_BUILDDIR
# (default: the current directory; the object checks skip, saying why,
# when the plugin is not built there).
set -u
export LC_ALL=C
src=${TE_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd -P)}
build=${TE_BUILDDIR:-$PWD}

# shellcheck source=../lib/unit_check.sh
. "$src/tests/lib/unit_check.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The context files plugin.c dispatches to; their headers and plugin.h
# are the dispatcher's.
contexts="srun alloc slurmstepd"

# cycle EDGES_FILE ("FROM TO" lines): tsort's words on a circle, or nothing.
cycle() {
	tsort "$1" 2>&1 >/dev/null
}

# "INCLUDER INCLUDED" stems for a spank directory's quoted includes of its
# own headers: X.c and X.h are node X; a header without its .c is a node
# of its own name. No self-edges (X.c includes X.h).
include_edges() { # SPANKDIR
	local dir=$1 f h a b
	(cd "$dir" && grep -Ho '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"/]*\.h"' -- *.c *.h 2>/dev/null) |
		sed -E 's|:[[:space:]]*#[[:space:]]*include[[:space:]]*"| |; s|"$||' |
		while read -r f h; do
			[ -f "$dir/$h" ] || continue
			a=${f%.[ch]} b=${h%.h}
			[ "$a" != "$b" ] && echo "$a $b"
		done | sort -u
}

# "FILE includes HEADER" for a dispatcher's header included by a file
# other than plugin.c and the header's own .c.
dispatch_includes() { # SPANKDIR
	local dir=$1 f h
	(cd "$dir" && grep -Ho '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"/]*\.h"' -- *.c *.h 2>/dev/null) |
		sed -E 's|:[[:space:]]*#[[:space:]]*include[[:space:]]*"| |; s|"$||' |
		while read -r f h; do
			case " plugin $contexts " in *" ${h%.h} "*) ;; *) continue ;; esac
			[ "$f" = plugin.c ] || [ "$f" = "${h%.h}.c" ] ||
				echo "$f includes $h (plugin.c's)"
		done
}

# ---- the sources
include_edges "$src/spank" >"$tmp/inc"
loop=$(cycle "$tmp/inc")
check "$([ -z "$loop" ] && echo 0 || echo 1)" "no circle of includes between spank/'s files" "$loop"

out=$(dispatch_includes "$src/spank")
check "$([ -z "$out" ] && echo 0 || echo 1)" \
	"only plugin.c (and each context's own file) includes the dispatcher's headers" "$out"

out=$(for c in $contexts; do
	grep -q "^plugin $c\$" "$tmp/inc" || echo "plugin.c does not include $c.h"
	[ -f "$src/spank/$c.c" ] || echo "no $c.c in spank/"
done)
check "$([ -z "$out" ] && echo 0 || echo 1)" "plugin.c includes each context's header ($contexts)" "$out"

# The source checks can fail: a scratch spank/ whose a.c and b.c include
# each other's header, and whose c.c includes plugin.h and srun.h.
s="$tmp/scratch"
mkdir -p "$s"
printf '#include "b.h"\n' >"$s/a.c"
printf '#include "a.h"\n' >"$s/b.c"
printf '#include "plugin.h"\n#include "srun.h"\n#include "state.h"\n' >"$s/c.c"
printf '#include "srun.h"\n#include "state.h"\n' >"$s/srun.c"
printf '#include "srun.h"\n#include "plugin.h"\n' >"$s/plugin.c"
touch "$s/a.h" "$s/b.h" "$s/plugin.h" "$s/srun.h" "$s/state.h"
include_edges "$s" >"$tmp/sinc"
loop=$(cycle "$tmp/sinc")
check "$([ -n "$loop" ] && echo 0 || echo 1)" "the include rule finds two files that include each other's header" \
	"edges: $(echo $(cat "$tmp/sinc"))"
out=$(dispatch_includes "$s" | sort | tr '\n' ';')
check "$([ "$out" = "c.c includes plugin.h (plugin.c's);c.c includes srun.h (plugin.c's);" ] && echo 0 || echo 1)" \
	"the dispatcher rule finds another file that includes plugin.h or a context's header, and only that" "got: $out"

# ---- the built objects
object_of() { # DIR STEM: trainenv.la's object for STEM.c (of spank/), or nothing
	local o
	for o in "$1/.libs/trainenv_la-$2.o" "$1/trainenv_la-$2.o" "$1/$2.o"; do
		[ -f "$o" ] && { echo "$o"; return; }
	done
}

# "USER DEFINER SYMBOL" for every use across two objects of the stems.
call_edges() { # DIR STEM...
	local dir=$1 f o
	shift
	for f in "$@"; do
		o=$(object_of "$dir" "$f")
		nm "$o" | awk -v f="$f" '$1 == "U" { print $2, f }'
	done | sort >"$tmp/uses"
	for f in "$@"; do
		o=$(object_of "$dir" "$f")
		nm --defined-only "$o" | awk -v f="$f" '$2 ~ /^[TDBRV]$/ { print $3, f }'
	done | sort >"$tmp/defs"
	join "$tmp/uses" "$tmp/defs" | awk '$2 != $3 { print $2, $3, $1 }' | sort -u
}

stems=$(cd "$src/spank" && ls -- *.c | sed 's/\.c$//')
missing=$(for f in $stems; do [ -n "$(object_of "$build/spank" "$f")" ] || echo "$f"; done)
if ! command -v nm >/dev/null || [ -n "$missing" ]; then
	for what in "no circle of calls between trainenv.so's objects" \
		"nothing uses plugin.c's symbols" "the call rule reads the calls" \
		"the call rule finds two objects that call each other"; do
		n=$((n + 1))
		echo "ok $n # SKIP $what: no nm, or not built here ($(echo $missing | cut -c1-200))"
	done
	echo "1..$n"
	[ "$failed" = 0 ]
	exit
fi

# shellcheck disable=SC2086
call_edges "$build/spank" $stems >"$tmp/calls"
awk '{ print $1, $2 }' "$tmp/calls" | sort -u >"$tmp/callpairs"
loop=$(cycle "$tmp/callpairs")
check "$([ -z "$loop" ] && echo 0 || echo 1)" "no circle of calls between trainenv.so's objects" \
	"$loop
$(awk '{ print $1 " -> " $2 " (" $3 ")" }' "$tmp/calls" | head -40)"

out=$(awk '$2 == "plugin" { print $1 ".c uses plugin.c'"'"'s " $3 }' "$tmp/calls")
check "$([ -z "$out" ] && echo 0 || echo 1)" "nothing uses plugin.c's symbols (the dispatcher is the top)" "$out"

# The check reads the calls: plugin.c calls each context, slurmstepd.c
# its features and the step's state.
out=$(for p in "plugin srun" "plugin alloc" "plugin slurmstepd" "slurmstepd stepd_step" \
	"slurmstepd stepd_rdzv" "stepd_rdzv stepd_step"; do
	grep -qx "$p" "$tmp/callpairs" || echo "no call ${p% *}.c -> ${p#* }.c"
done)
check "$([ -z "$out" ] && echo 0 || echo 1)" "the call rule reads the calls ($(wc -l <"$tmp/callpairs") pairs of files)" "$out"

# It can fail: two scratch objects that call each other.
if command -v "${CC:-cc}" >/dev/null; then
	printf 'int b(int);\nint a(int x) { return x ? b(x - 1) : 0; }\n' >"$tmp/a.c"
	printf 'int a(int);\nint b(int x) { return x ? a(x - 1) : 1; }\n' >"$tmp/b.c"
	mkdir -p "$tmp/objs"
	"${CC:-cc}" -c -o "$tmp/objs/a.o" "$tmp/a.c" && "${CC:-cc}" -c -o "$tmp/objs/b.o" "$tmp/b.c"
	call_edges "$tmp/objs" a b | awk '{ print $1, $2 }' | sort -u >"$tmp/scalls"
	loop=$(cycle "$tmp/scalls")
	check "$([ -n "$loop" ] && echo 0 || echo 1)" "the call rule finds two objects that call each other" \
		"edges: $(echo $(cat "$tmp/scalls"))"
else
	n=$((n + 1))
	echo "ok $n # SKIP the call rule finds two objects that call each other: no C compiler"
fi

echo "1..$n"
[ "$failed" = 0 ]
