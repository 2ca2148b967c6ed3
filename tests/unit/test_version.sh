#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# One version, one place (TAP): every place that shows trainenv's version
# shows the one configure has, and the release notes and packages name the
# same release.
#
# configure's version (config.h's PACKAGE_VERSION) comes from VERSION and
# git (tools/version.sh); its release part (0.9.0 of 0.9.0-3-gabcdef12)
# is what NEWS.md, debian/changelog and trainenv.spec must name first.
# The built tool, the man page made from etc/trainenv.8 and the plugin are
# checked in the build tree; srun --train=help and --train-explain on the
# cluster (t10_options.sh), the step record and libtrainenv in
# test_version.c and test_steprecord.c.
# Environment: TE_BUILDDIR (default: the current directory), TE_SRCDIR
# (default: this file's checkout).
set -u
build=${TE_BUILDDIR:-$PWD}
src=${TE_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd -P)}
# shellcheck source=../lib/unit_check.sh
. "$src/tests/lib/unit_check.sh"
rc() { "$@" && echo 0 || echo 1; }

ver=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$build/config.h" 2>/dev/null)
proto=$(sed -n 's/^#define TE_PROTOCOL_VERSION \([0-9]*\)$/\1/p' "$src/core/launch/version.h")
rel=${ver%%-*}
check "$(rc test -n "$ver")" "configure's version is in $build/config.h ($ver)"
check "$(rc test -n "$proto")" "core/launch/version.h defines the protocol version ($proto)"

# The version configure took is what tools/version.sh says of VERSION (a
# release part that differs: configure was not made again after VERSION
# changed).
file=$(sed -n 1p "$src/VERSION" 2>/dev/null)
check "$(rc test "$rel" = "$file")" "the release configure has is VERSION's ($file)" "configure: $rel"
out=$(sh "$src/tools/version.sh" "$src")
check "$(rc test "${out%%-*}" = "$file")" "tools/version.sh starts with VERSION's release" "got: $out"
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir "$t/tree" && printf '7.8.9\n' >"$t/tree/VERSION"
out1=$(sh "$src/tools/version.sh" "$t/tree")
printf '7.8.9-4-gabcdef12\n' >"$t/tree/.tarball-version"
out2=$(sh "$src/tools/version.sh" "$t/tree")
printf '7.8.9 bad\n' >"$t/tree/.tarball-version"
out3=$(sh "$src/tools/version.sh" "$t/tree" 2>"$t/err")
check "$(rc test "$out1|$out2|$out3" = "7.8.9|7.8.9-4-gabcdef12|UNKNOWN")" \
	"tools/version.sh out of git: VERSION, then a tarball's .tarball-version; a bad one is UNKNOWN and said" \
	"got: $out1|$out2|$out3"
check "$(rc grep -q 'no usable version' "$t/err")" "  a bad version is said on stderr" "$(cat "$t/err")"

# What the build shows.
want="trainenv $ver (protocol $proto)"
check "$(rc test "$("$build/trainenv" --version 2>&1)" = "$want")" \
	"trainenv --version prints '$want'" "got: $("$build/trainenv" --version 2>&1)"
check "$(rc test "$("$build/trainenv" version 2>&1)" = "$want")" "trainenv version too"
th=$(grep -m1 '^\.TH' "$build/trainenv.8" 2>/dev/null)
check "$(rc grep -q "\"trainenv $ver\"" <<<"$th")" "the man page made for installing names trainenv $ver" "got: $th"
check "$(rc grep -q '^\.TH .*"trainenv @PACKAGE_VERSION@"' "$src/etc/trainenv.8")" \
	"etc/trainenv.8 holds no version of its own (@PACKAGE_VERSION@)"
so=$build/.libs/trainenv.so
if [ -f "$so" ] && command -v strings >/dev/null; then
	check "$(rc grep -qxF "$ver" < <(strings "$so"))" \
		"the plugin (srun --train=help, --train-explain) carries $ver"
else
	echo "ok $((n + 1)) # SKIP no plugin built in $build (or no strings): t10 checks help and explain"
	n=$((n + 1))
fi

# Every helper answers --protocol-version, and one given another protocol
# answers with its own and exits TE_PROTOCOL_EXIT (3): what the plugin
# reads to say a node's helpers do not match it.
answer="trainenv-protocol $proto $ver"
for h in trainenv-rdzv trainenv-preflight trainenv-stacks trainenv-container trainenv; do
	got=$("$build/$h" --protocol-version 2>&1)
	check "$(rc test "$got" = "$answer")" "$h --protocol-version: '$answer'" "got: $got"
done
got=$("$build/trainenv-rdzv" --protocol $((proto + 1)) --job 1 2>&1)
code=$?
check "$(rc test "$got|$code" = "$answer|3")" \
	"trainenv-rdzv given protocol $((proto + 1)) answers with its own and exits 3, before anything else" "got: $got|$code"
# A plugin of protocol 1 (before the settings moved to TRAINENV_SETTINGS)
# gives the helper its settings as flags: this helper still answers with
# its own protocol and exits 3, so that plugin prints its one line naming
# both, instead of a "bad argument" from the flags it no longer takes.
got=$(env -u TRAINENV_SETTINGS "$build/trainenv-rdzv" --protocol 1 --job 12 --step 0 \
	--port-range 20000-29999 --port-start 20011 --barrier 300 \
	--version-check warn --tree-width 16 --ifname --lead 2>&1)
code=$?
if [ "$proto" != 1 ]; then
	check "$(rc test "$got|$code" = "$answer|3")" \
		"trainenv-rdzv under a protocol-1 plugin's command line (settings as flags) answers protocol $proto and exits 3" "got: $got|$code"
fi
# --protocol-say: the helpers nobody waits for say it on stderr, one line
for h in trainenv-stacks trainenv-container; do
	out=$(SLURMD_NODENAME=n7 "$build/$h" --protocol-say $((proto + 1)) --exit-report 1.0 2>/dev/null)
	err=$(SLURMD_NODENAME=n7 "$build/$h" --protocol-say $((proto + 1)) --exit-report 1.0 2>&1 >/dev/null)
	code=$?
	dir=$(cd "$build" && pwd -P)
	want="trainenv: error: node n7: $h in $dir speaks protocol $proto (trainenv $ver), the plugin protocol $((proto + 1)): install the same trainenv on every node (plugin, helpers and libtrainenv)"
	check "$(rc test "$out|$err|$code" = "|$want|3")" \
		"$h --protocol-say $((proto + 1)): one line on stderr, nothing on stdout, exit 3" "got: $out|$err|$code"
done

# The release notes and the packages: their newest entry is this release.
# NEWS.md may open with "## Unreleased" (what the next release brings:
# docs/RELEASING.md), then this release's section.
news=$(sed -n 's/^## \([^ ]*\).*/\1/p' "$src/NEWS.md" | head -2 | tr '\n' ' ')
case $news in
Unreleased\ *) news=${news#Unreleased } ;;
esac
news=${news%% *}
check "$(rc test "$news" = "$rel")" "NEWS.md's newest release section is $rel (after an \"Unreleased\" one, if any)" "got: $news"
deb=$(sed -n '1s/^trainenv (\([^)]*\)).*/\1/p' "$src/debian/changelog")
check "$(rc test "${deb%-*}" = "$rel")" "debian/changelog's newest entry is $rel" "got: $deb"
spec=$(sed -n 's/^Version:[[:space:]]*//p' "$src/trainenv.spec")
check "$(rc test "$spec" = "$rel")" "trainenv.spec's Version is $rel" "got: $spec"
specchg=$(sed -n '/^%changelog/,$ s/^\*.* - \([^ -]*\)-[^ ]*$/\1/p' "$src/trainenv.spec" | head -1)
check "$(rc test "$specchg" = "$rel")" "trainenv.spec's newest %changelog entry is $rel" "got: $specchg"
# Every version in debian/changelog has its NEWS.md section.
out=$(sed -n 's/^trainenv (\([^)-]*\).*/\1/p' "$src/debian/changelog" | while read -r v; do
	grep -q "^## $v " "$src/NEWS.md" || echo "$v"
done)
check "$(rc test -z "$out")" "every version in debian/changelog has its section in NEWS.md" "missing: $out"
# No place writes an older release where the version is meant.
out=$(grep -n "trainenv-[0-9][0-9.]*[0-9]" "$src/README.md" "$src/trainenv.spec" "$src/docs/RELEASING.md" 2>/dev/null |
	grep -v "trainenv-$rel\b\|trainenv-VERSION\|trainenv-%{version}")
check "$(rc test -z "$out")" "README, the spec and docs/RELEASING.md name no other release's tarball" "$out"

echo "1..$n"
[ "$failed" = 0 ]
