#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The one answer the tests and tools give to "is this Debian package
# installed?" (source it). dpkg also knows packages that are not installed:
# removed with their configuration kept (dpkg -l's "rc", Status "deinstall ok
# config-files"), half-installed, unpacked but not configured, or failed.
# Only a package whose files are all there and configured counts: Status's
# state "installed" with the flag "ok" ("install ok installed", also when
# held: "hold ok installed"). DPKG_ADMINDIR, where set, is the database
# dpkg-query reads (the unit test's).
#   te_dpkg_installed PKG...   0 when every PKG is installed, 1 otherwise
#   te_dpkg_known PKG          dpkg has a record of PKG, installed or not
#                              (what a purge would remove): prints its
#                              Status and returns 0; 1 when it has none
te_dpkg_known() {
	local st
	st=$(dpkg-query -W -f='${Status}' -- "$1" 2>/dev/null) || return 1
	case $st in
	"" | *" not-installed") return 1 ;;
	esac
	printf '%s\n' "$st"
}

te_dpkg_installed() {
	local p st
	for p in "$@"; do
		st=$(te_dpkg_known "$p") || return 1
		case $st in
		*" ok installed") ;;
		*) return 1 ;;
		esac
	done
	return 0
}
