#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# "Is this package installed?" (TAP): te_dpkg_installed (tests/lib/
# dpkg_state.sh) on a made-up dpkg database says yes to installed packages
# only, never to one removed with its configuration left (dpkg -l's "rc"),
# half-installed or unpacked; and it is the one place of the tests and tools
# that asks dpkg for a package's Status (t95 took "rc" for installed and
# skipped every check); also on a real package dpkg put in the "rc" state
# in a root of the test's own.
# Environment: TE_SRCDIR (default: this file's checkout).
set -u
src=${TE_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd -P)}
# shellcheck source-path=SCRIPTDIR source=../lib/unit_check.sh
. "$src/tests/lib/unit_check.sh"
rc() { "$@" && echo 0 || echo 1; }
if ! command -v dpkg-query >/dev/null; then
	echo "1..0 # SKIP no dpkg-query here (not a Debian system)"
	exit 0
fi
# shellcheck source-path=SCRIPTDIR source=../lib/dpkg_state.sh
. "$src/tests/lib/dpkg_state.sh"

db=$(mktemp -d)
trap 'rm -rf "$db"' EXIT
mkdir -p "$db/info" "$db/updates"
stanza() { # PACKAGE STATUS
	printf 'Package: %s\nStatus: %s\nVersion: 1.0-1\nArchitecture: all\n' "$1" "$2"
	printf 'Maintainer: Nobody <nobody@example.org>\nDescription: made up\n\n'
}
{
	stanza p-ii "install ok installed"
	stanza p-hi "hold ok installed"
	stanza p-rc "deinstall ok config-files"
	stanza p-pn "purge ok not-installed"
	stanza p-iu "install ok unpacked"
	stanza p-ih "install reinstreq half-installed"
	stanza p-if "install ok half-configured"
} >"$db/status"
export DPKG_ADMINDIR=$db

check "$(rc te_dpkg_installed p-ii)" "installed ('ii') is installed"
check "$(rc te_dpkg_installed p-hi)" "installed and held ('hi') is installed"
check "$(rc te_dpkg_installed p-ii p-hi)" "two installed packages are installed"
for p in p-rc p-pn p-iu p-ih p-if p-unknown; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)
	check "$(te_dpkg_installed "$p" && echo 1 || echo 0)" \
		"$p (${st:-unknown to dpkg}) is not installed"
done
check "$(te_dpkg_installed p-ii p-rc && echo 1 || echo 0)" \
	"an installed package and an 'rc' one are not all installed"
check "$(te_dpkg_installed -- && echo 1 || echo 0)" \
	"a name dpkg-query would take for an option is not installed"

check "$(te_dpkg_known p-rc >/dev/null && echo 0 || echo 1)" \
	"an 'rc' package is known to dpkg (a purge removes its configuration)"
check "$(rc test "$(te_dpkg_known p-rc)" = "deinstall ok config-files")" \
	"te_dpkg_known prints its Status"
check "$(te_dpkg_known p-pn >/dev/null || te_dpkg_known p-unknown >/dev/null && echo 1 || echo 0)" \
	"a purged package and one never seen are not known"

# A real package in the "rc" state, as dpkg itself leaves it: a package of
# one configuration file (a conffile), made here with dpkg-deb, installed
# by dpkg into a root of this test's own (--root, --admindir: the host's
# database and the shared release roots are never touched; no maintainer
# script, so nothing runs in the root) and removed, which keeps the file.
real=$(mktemp -d)
trap 'rm -rf "$db" "$real"' EXIT
in_root() { # dpkg ARGS... in the test's root
	dpkg --root="$real/root" --admindir="$real/root/var/lib/dpkg" \
		--force-not-root --log=/dev/null "$@" >>"$real/dpkg.log" 2>&1
}
mkdir -p "$real/pkg/DEBIAN" "$real/pkg/etc" "$real/root/var/lib/dpkg/info" \
	"$real/root/var/lib/dpkg/updates"
: >"$real/root/var/lib/dpkg/status"
printf 'Package: te-rc-probe\nVersion: 1.0\nArchitecture: all\nMaintainer: trainenv tests <nobody@example.org>\nDescription: one configuration file\n' \
	>"$real/pkg/DEBIAN/control"
echo /etc/te-rc-probe.conf >"$real/pkg/DEBIAN/conffiles"
echo "probe=1" >"$real/pkg/etc/te-rc-probe.conf"
if command -v dpkg-deb >/dev/null && command -v dpkg >/dev/null &&
	dpkg-deb --root-owner-group --build "$real/pkg" "$real/probe.deb" >>"$real/dpkg.log" 2>&1 &&
	in_root -i "$real/probe.deb"; then
	export DPKG_ADMINDIR=$real/root/var/lib/dpkg
	check "$(rc te_dpkg_installed te-rc-probe)" \
		"a real package dpkg installed in the test's root is installed"
	in_root -r te-rc-probe
	check $? "dpkg -r removes it" "$(cat "$real/dpkg.log")"
	st=$(dpkg-query -W -f='${Status}' te-rc-probe 2>/dev/null)
	check "$(rc test "$st" = "deinstall ok config-files" -a -f "$real/root/etc/te-rc-probe.conf")" \
		"... into dpkg's 'rc' state, its configuration file left (Status: $st)"
	check "$(te_dpkg_installed te-rc-probe && echo 1 || echo 0)" \
		"te_dpkg_installed: the real 'rc' package is not installed"
	check "$(rc test "$(te_dpkg_known te-rc-probe)" = "deinstall ok config-files")" \
		"te_dpkg_known: it is known to dpkg, as 'deinstall ok config-files'"
	export DPKG_ADMINDIR=$db
else
	echo "ok $((n + 1)) # SKIP no package could be made and installed in a root of the test's own: $(tail -1 "$real/dpkg.log" 2>/dev/null)"
	n=$((n + 1))
fi

# Every other place asks these two: no script of tests/, tools/ or .ci/
# reads a package's Status from dpkg itself.
others=$(cd "$src" && grep -rnE 'dpkg-query[^|]*Status|dpkg +(-s|--status|-l|--list)\b' \
	tests tools .ci 2>/dev/null | grep -vE '^tests/(lib/dpkg_state|unit/test_dpkg_state)\.sh:' |
	grep -v '^tests/logs/' | grep -vE '^[^:]+:[0-9]+:[[:space:]]*#')
check "$(rc test -z "$others")" "no other place asks dpkg whether a package is installed" "$others"

echo "1..$n"
[ "$failed" -eq 0 ]
