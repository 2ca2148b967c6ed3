#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every source file carries its licence as an SPDX line (TAP), and what is
# loaded into users' programs carries LGPL-2.1-or-later, never the GPL.
#
# The licence rule (README "Licence"): GPL-2.0-or-later for the plugin, the
# helpers and the trainenv tool; LGPL-2.1-or-later for core/, include/,
# python/ and for every file built into a library installed for programs
# to load (lib_LTLIBRARIES and pkglib_LTLIBRARIES of Makefile.am:
# libtrainenv, the NCCL preload shim), through the convenience libraries
# they link and the headers those sources include. The set is read from
# Makefile.am each run, so that a file moved into a library cannot keep
# the GPL unnoticed.
# The files: git ls-files in a git checkout, else every file of the
# unpacked tarball (less what configure and the autotools generate).
# Usage: test_spdx.sh [--list-lgpl]   (prints the derived set and exits)
# Environment: TE_SRCDIR (default: this file's checkout).
set -u
src=${TE_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd -P)}
GPL=GPL-2.0-or-later
LGPL=LGPL-2.1-or-later
HEAD_LINES=40

# shellcheck source=../lib/unit_check.sh
. "$src/tests/lib/unit_check.sh"

# Files that need no SPDX line, and why. Expected test outputs and inputs
# (data compared byte for byte or parsed as XML, fuzz corpora), the
# licence texts themselves, documentation in Markdown (covered by
# debian/copyright's stanzas), files whose format has no comment
# (debian/source/format, VERSION) or whose tools own the format
# (debian/changelog, debian/copyright, a dpkg symbols file), and what the
# autotools and configure generate in a tarball.
exempt() { # PATH: 0 when PATH needs no SPDX line
	case $1 in
	*.expected | tests/fuzz/corpus/* | tests/data/topologies/*.xml | \
		tests/unit/data/stacks/*.txt) return 0 ;;
	COPYING | COPYING.LESSER | *.md) return 0 ;;
	VERSION | .tarball-version | debian/source/format | debian/changelog | \
		debian/copyright | debian/*.symbols) return 0 ;;
	configure | Makefile.in | aclocal.m4 | config.h.in | build-aux/* | \
		autom4te.cache/* | m4/libtool.m4 | m4/lt*.m4) return 0 ;;
	# the backups autoconf and autoheader leave (configure~,
	# config.h.in~), seen in a tree staged in a release root
	configure~ | config.h.in~) return 0 ;;
	esac
	return 1
}

list_files() { # the tree's files, relative to $1
	if git -C "$1" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git -C "$1" ls-files
	else
		# less Python's byte-code caches, which the Python tests of a
		# build beside it may be writing at this moment
		(cd "$1" && find . -type f ! -path './_build*' ! -path '*/__pycache__/*' |
			sed 's|^\./||' | sort)
	fi
}

# The line FILE's SPDX line is on (the first one), and the line it belongs
# on: line 1, or line 2 after a "#!" or an XML declaration, where a reader
# and a tool find it at once (the kernel's and REUSE's habit).
spdx_line() { grep -n -m1 'SPDX-License-Identifier: ' "$1" 2>/dev/null | cut -d: -f1; }
spdx_place() { case $(head -c 5 "$1" 2>/dev/null) in '#!'* | '<?xml') echo 2 ;; *) echo 1 ;; esac; }

# The SPDX identifier of FILE (first one in its first HEAD_LINES lines).
spdx_of() {
	head -n "$HEAD_LINES" "$1" 2>/dev/null |
		grep -o -m1 'SPDX-License-Identifier: [A-Za-z0-9.+-]*' |
		sed 's/^SPDX-License-Identifier: //'
}

# The files built into what programs load: the sources of
# lib_LTLIBRARIES and pkglib_LTLIBRARIES, of the .la they link (LIBADD),
# their EXTRA_*_DEPENDENCIES (version scripts), the public headers and
# the Python module, then the quoted includes of all those, transitively.
lgpl_set() { # SRCDIR
	local dir=$1
	awk '
	# Join continuation lines, then collect NAME = / += words.
	{ line = line $0 }
	/\\$/ { sub(/\\$/, " ", line); next }
	{
		if (match(line, /^[A-Za-z0-9_]+[ \t]*\+?=/)) {
			name = line; sub(/[ \t]*\+?=.*$/, "", name)
			val = line; sub(/^[^=]*=/, "", val)
			if (line !~ /^[A-Za-z0-9_]+[ \t]*\+=/) vars[name] = ""
			vars[name] = vars[name] " " val
		}
		line = ""
	}
	function canon(s) { gsub(/[^A-Za-z0-9_]/, "_", s); return s }
	function words(name,    w, i, k, out) {
		out = ""
		k = split(vars[name], w, /[ \t]+/)
		for (i = 1; i <= k; i++) {
			if (w[i] == "") continue
			if (w[i] ~ /^\$\([A-Za-z0-9_]+\)$/) {
				out = out " " words(substr(w[i], 3, length(w[i]) - 3))
			} else out = out " " w[i]
		}
		return out
	}
	function target(la,    c, w, i, k) {
		c = canon(la)
		if (c in seen) return
		seen[c] = 1
		k = split(words(c "_SOURCES") " " words("EXTRA_" c "_DEPENDENCIES"), w, /[ \t]+/)
		for (i = 1; i <= k; i++) if (w[i] != "") print w[i]
		k = split(words(c "_LIBADD"), w, /[ \t]+/)
		for (i = 1; i <= k; i++) if (w[i] ~ /\.la$/) target(w[i])
	}
	END {
		k = split(words("lib_LTLIBRARIES") " " words("pkglib_LTLIBRARIES"), r, /[ \t]+/)
		for (i = 1; i <= k; i++) if (r[i] != "") target(r[i])
		k = split(words("trainenvinclude_HEADERS") " " words("trainenv_py_PYTHON"), r, /[ \t]+/)
		for (i = 1; i <= k; i++) if (r[i] != "") print r[i]
	}' "$dir/Makefile.am" | sed 's|^\$(srcdir)/||' | sort -u >"$tmp/set"
	# Headers they include (quoted), found next to the file, in core/ or
	# in include/, until nothing new comes.
	local before=-1 f h d
	while [ "$(wc -l <"$tmp/set")" != "$before" ]; do
		before=$(wc -l <"$tmp/set")
		while read -r f; do
			case $f in *.c | *.h) ;; *) continue ;; esac
			[ -f "$dir/$f" ] || continue
			d=$(dirname "$f")
			sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$dir/$f" |
				while read -r h; do
					for c in "$d/$h" "core/$h" "include/$h"; do
						[ -f "$dir/$c" ] && { echo "$c"; break; }
					done
				done
		done <"$tmp/set" >"$tmp/more"
		sort -u "$tmp/set" "$tmp/more" -o "$tmp/set"
	done
	cat "$tmp/set"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "${1:-}" = --list-lgpl ]; then
	lgpl_set "$src"
	exit 0
fi

# The files that must be LGPL: the derived set, and core/, include/,
# python/ by decision.
must_be_lgpl() { # SRCDIR FILELIST
	{ lgpl_set "$1"; grep -E '^(core|include|python)/' "$2"; } | sort -u
}

# The three rules over a tree: the files without an SPDX line, the ones
# with another identifier than the two, the LGPL ones that say otherwise.
rules() { # SRCDIR OUTPREFIX
	local dir=$1 out=$2 f id
	list_files "$dir" >"$out.files"
	: >"$out.missing"; : >"$out.unknown"; : >"$out.notlgpl"; : >"$out.place"
	while read -r f; do
		exempt "$f" && continue
		[ -f "$dir/$f" ] || continue
		id=$(spdx_of "$dir/$f")
		case $id in
		'') echo "$f: no SPDX-License-Identifier line in its first $HEAD_LINES lines" >>"$out.missing" ;;
		"$GPL" | "$LGPL") ;;
		*) echo "$f: SPDX-License-Identifier $id (accepted: $GPL, $LGPL)" >>"$out.unknown" ;;
		esac
		[ -z "$id" ] || [ "$(spdx_line "$dir/$f")" = "$(spdx_place "$dir/$f")" ] ||
			echo "$f: the SPDX line is line $(spdx_line "$dir/$f"), not $(spdx_place "$dir/$f")" >>"$out.place"
	done <"$out.files"
	must_be_lgpl "$dir" "$out.files" >"$out.lgpl"
	while read -r f; do
		[ -f "$dir/$f" ] || continue
		exempt "$f" && continue
		id=$(spdx_of "$dir/$f")
		[ "$id" = "$LGPL" ] || [ -z "$id" ] ||
			echo "$f: $id, but it is built into what users' programs load (or is in core/, include/, python/): $LGPL" >>"$out.notlgpl"
	done <"$out.lgpl"
}

rules "$src" "$tmp/tree"
nfiles=$(wc -l <"$tmp/tree.files")
check "$([ -s "$tmp/tree.missing" ] && echo 1 || echo 0)" \
	"every source file has an SPDX-License-Identifier line ($nfiles files)" "$(cat "$tmp/tree.missing")"
check "$([ -s "$tmp/tree.place" ] && echo 1 || echo 0)" \
	"every SPDX line is on line 1 (line 2 after #! or an XML declaration)" "$(cat "$tmp/tree.place")"
check "$([ -s "$tmp/tree.unknown" ] && echo 1 || echo 0)" \
	"every SPDX line names $GPL or $LGPL" "$(cat "$tmp/tree.unknown")"
check "$([ -s "$tmp/tree.notlgpl" ] && echo 1 || echo 0)" \
	"what users' programs load (libtrainenv, the NCCL shim, their sources and headers, include/, python/, core/) is $LGPL" \
	"$(cat "$tmp/tree.notlgpl")"

# The derivation read Makefile.am: the libraries' own files and the ones
# reached through a convenience library and an include are in the set;
# the plugin's, the helpers' and the tool's own are not.
set_out=$(lgpl_set "$src")
missing=
for f in pmix/libtrainenv.c pmix/heartbeat.c pmix/nccl_preload.c pmix/glibc_compat.h \
	pmix/libtrainenv.map pmix/trainenv-nccl.map pmix/barrier.c pmix/barrier_int.h \
	core/util/strutil.c include/trainenv/trainenv.h python/trainenv/__init__.py; do
	printf '%s\n' "$set_out" | grep -qx "$f" || missing="$missing $f"
done
check "$([ -z "$missing" ] && echo 0 || echo 1)" \
	"the library set is derived from Makefile.am ($(printf '%s\n' "$set_out" | wc -l) files)" "missing:$missing"
extra=$(printf '%s\n' "$set_out" | grep -E '^spank/|^pmix/(rdzv|preflight|stacks|tool|container_tool)')
check "$([ -z "$extra" ] && echo 0 || echo 1)" \
	"the library set holds none of the plugin's, helpers' or tool's own files" "$extra"

# The plugin (spank/) and the helpers' and tool's own files are GPL.
out=$(grep -E '^spank/|^pmix/(rdzv|preflight|stacks|tool|container_tool)' "$tmp/tree.files" |
	while read -r f; do
		id=$(spdx_of "$src/$f")
		[ "$id" = "$GPL" ] || echo "$f: ${id:-none}"
	done)
check "$([ -z "$out" ] && echo 0 || echo 1)" "the plugin, the helpers and the tool are $GPL" "$out"

# debian/copyright's LGPL stanza covers exactly those files: each is
# matched by one of its patterns, and each file it names is in the set.
if [ -f "$src/debian/copyright" ]; then
	awk '/^Files:/ { f = 1; pats = "" } f && /^(Files:| )/ { sub(/^Files:/, ""); pats = pats " " $0 }
	     /^Copyright:/ { f = 0 } /^License: LGPL-2\.1\+$/ && pats != "" { print pats; pats = "" }
	     /^$/ { f = 0; pats = "" }' "$src/debian/copyright" | tr ' ' '\n' | grep -v '^$' >"$tmp/deb.pats"
	must_be_lgpl "$src" "$tmp/tree.files" >"$tmp/deb.lgpl"
	out=$(while read -r f; do
		hit=
		while read -r p; do
			# shellcheck disable=SC2254
			case $f in $p) hit=1; break ;; esac
		done <"$tmp/deb.pats"
		[ -n "$hit" ] || echo "$f is LGPL but not in debian/copyright's LGPL-2.1+ stanza"
	done <"$tmp/deb.lgpl"
	grep -v '\*' "$tmp/deb.pats" | while read -r p; do
		grep -qxF "$p" "$tmp/deb.lgpl" || echo "debian/copyright's LGPL-2.1+ stanza names $p, which is not LGPL"
	done)
	check "$([ -s "$tmp/deb.pats" ] && [ -z "$out" ] && echo 0 || echo 1)" \
		"debian/copyright's LGPL-2.1+ stanza names exactly the LGPL files ($(wc -l <"$tmp/deb.pats") patterns)" "$out"
else
	echo "ok $((n + 1)) # SKIP no debian/copyright in $src"
	n=$((n + 1))
fi

# The licence texts at the top of the tree.
check "$(head -5 "$src/COPYING" 2>/dev/null | grep -q 'GNU GENERAL PUBLIC LICENSE' &&
	grep -q 'Version 2, June 1991' "$src/COPYING" && echo 0 || echo 1)" "COPYING is the GPL version 2"
check "$(head -5 "$src/COPYING.LESSER" 2>/dev/null | grep -q 'GNU LESSER GENERAL PUBLIC LICENSE' &&
	grep -q 'Version 2.1, February 1999' "$src/COPYING.LESSER" && echo 0 || echo 1)" \
	"COPYING.LESSER is the LGPL version 2.1"

# The rules can fail: a scratch tree whose library source says GPL, whose
# header has no SPDX line, and whose expected output is exempt.
s=$tmp/scratch
mkdir -p "$s/pmix" "$s/core" "$s/tests"
cat >"$s/Makefile.am" <<'EOF'
noinst_LTLIBRARIES = libx.la
libx_la_SOURCES = core/x.c
lib_LTLIBRARIES = liby.la
liby_la_SOURCES = pmix/y.c \
	pmix/y.h
liby_la_LIBADD = libx.la $(PMIX_LIBS)
EOF
printf '/* y\n * SPDX-License-Identifier: %s */\n#include "z.h"\n' "$GPL" >"$s/pmix/y.c"
printf '/* y.h */\n' >"$s/pmix/y.h"
printf '/* z.h\n * SPDX-License-Identifier: %s */\n' "$GPL" >"$s/pmix/z.h"
printf '/* x\n * SPDX-License-Identifier: %s */\n' "$LGPL" >"$s/core/x.c"
printf '# Makefile.am\n# SPDX-License-Identifier: %s\n' "$GPL" >>"$s/Makefile.am"
printf 'anything\n' >"$s/tests/out.expected"
printf '#!/bin/sh\n# SPDX-License-Identifier: %s\n' "$GPL" >"$s/tests/run.sh"
rules "$s" "$tmp/s"
got="$(cat "$tmp/s.missing" "$tmp/s.notlgpl" | cut -d: -f1 | tr '\n' ' ')"
check "$([ "$got" = "pmix/y.h pmix/y.c pmix/z.h " ] && echo 0 || echo 1)" \
	"the rules name a file without SPDX line and a library's GPL source and included header (not core/x.c, not the .expected)" \
	"got: $got"

got="$(cut -d: -f1 "$tmp/s.place" | LC_ALL=C sort | tr '\n' ' ')"
check "$([ "$got" = "Makefile.am core/x.c pmix/y.c pmix/z.h " ] && echo 0 || echo 1)" \
	"the rules name a file whose SPDX line is not on line 1 (not the script with it on line 2 after #!)" \
	"got: $got"

echo "1..$n"
[ "$failed" = 0 ]
