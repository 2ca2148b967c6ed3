#!/bin/bash
# make check's driver: starts ONE local Slurm cluster for all integration
# tests, runs the unit tests and the integration tests through
# tests/run-tests.sh (which ends with "N passed, N failed"), and always tears
# the cluster down.
# Usage: check-all.sh UNIT_TEST... -- INTEGRATION_TEST...
set -u
here=$(cd "$(dirname "$0")" && pwd)
builddir=${TE_BUILDDIR:-$(pwd)}
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
export TE_SRCDIR=${TE_SRCDIR:-$(cd "$here/.." && pwd)}
if [ ${#integ[@]} -gt 0 ]; then
	# The cluster's state lives in the build tree, not /tmp: every node
	# gets a private /tmp of its own.
	export TE_CLUSTER_DIR=$builddir/tests/cluster-run
	"$here/cluster/cluster.sh" stop --dir "$TE_CLUSTER_DIR" >/dev/null 2>&1
	trap '"$here/cluster/cluster.sh" stop --dir "$TE_CLUSTER_DIR" >/dev/null 2>&1' EXIT
	trap 'exit 130' INT TERM
	if ! "$here/cluster/cluster.sh" start --dir "$TE_CLUSTER_DIR" --nodes 3; then
		echo "the local Slurm cluster did not start: every integration test will fail" >&2
	fi
fi
"$here/run-tests.sh" --log-dir "$builddir/tests/logs" "${unit[@]+"${unit[@]}"}" "${integ[@]+"${integ[@]}"}"
