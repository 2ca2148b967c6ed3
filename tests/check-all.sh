#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# make check's driver: stages the build where every node and user can read
# it (tests/lib/stage.sh), starts ONE local Slurm cluster for all
# integration tests, runs the unit tests and the integration tests through
# tests/run-tests.sh (which ends with "N passed, N failed"), and always tears
# the cluster down.
# Usage: check-all.sh UNIT_TEST... -- INTEGRATION_TEST...
set -u
here=$(cd "$(dirname "$0")" && pwd -P)
builddir=$(cd "${TE_BUILDDIR:-$(pwd)}" && pwd -P)
unit=() integ=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do unit+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
integ=("$@")

# Run only the tests whose path matches TE_TESTS (a regex), if given.
if [ -n "${TE_TESTS:-}" ]; then
	sel=()
	for t in "${unit[@]}"; do [[ $t =~ $TE_TESTS ]] && sel+=("$t"); done
	unit=("${sel[@]+"${sel[@]}"}"); sel=()
	for t in "${integ[@]}"; do [[ $t =~ $TE_TESTS ]] && sel+=("$t"); done
	integ=("${sel[@]+"${sel[@]}"}")
fi

export TE_BUILDDIR=$builddir
export TE_SRCDIR=${TE_SRCDIR:-$(cd "$here/.." && pwd -P)}
if [ ${#integ[@]} -gt 0 ]; then
	# Not in the checkout nor under /tmp: every node has a private /tmp,
	# user nobody cannot read a mode-700 home, and the cluster hides the
	# checkout and the build tree from its nodes. One directory per build
	# tree, so that two checkouts can run their suites side by side.
	dir=/var/tmp/trainenv-check-$(printf '%s' "$builddir" | sha256sum | cut -c1-8)
	export TE_CLUSTER_DIR=$dir/cluster
	"$here/cluster/cluster.sh" stop --dir "$TE_CLUSTER_DIR" >/dev/null 2>&1
	rm -rf "$dir/stage"
	install -d -m 0755 "$dir"
	trap '"$here/cluster/cluster.sh" stop --dir "$TE_CLUSTER_DIR" >/dev/null 2>&1' EXIT
	trap 'exit 130' INT TERM
	if ! "$here/lib/stage.sh" "$TE_SRCDIR" "$builddir" "$dir/stage"; then
		echo "could not stage the build in $dir/stage: every integration test will fail" >&2
	fi
	export TE_STAGE=$dir/stage TE_REAL_BUILDDIR=$builddir TE_REAL_SRCDIR=$TE_SRCDIR
	if ! "$here/cluster/cluster.sh" start --dir "$TE_CLUSTER_DIR" --nodes 3 --hide "$builddir"; then
		echo "the local Slurm cluster did not start: every integration test will fail" >&2
	fi
fi
"$here/run-tests.sh" --log-dir "$builddir/tests/logs" "${unit[@]+"${unit[@]}"}" "${integ[@]+"${integ[@]}"}"
