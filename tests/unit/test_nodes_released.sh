#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The wait for a late node's job to leave its nodes (TAP): nodes_released
# (tests/lib/pmix_common.sh), which t51 and t56 run before timing the step
# after one whose node started after its parent gave up (from Slurm 25.05.4
# slurmd keeps that job on the node while mpi/pmix retries a send to the
# ended step, 31.5 s), against a made-up sinfo: it asks for the given nodes
# only, passes once all of them are idle and says after how long, and
# fails at its bound while one is still completing or sinfo says nothing.
# Environment: TE_SRCDIR (default: this file's checkout).
set -u
src=${TE_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd -P)}
# shellcheck source-path=SCRIPTDIR source=../lib/unit_check.sh
. "$src/tests/lib/unit_check.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/pmix_common.sh
. "$src/tests/lib/pmix_common.sh"

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# itest.sh's TAP functions, recorded instead of printed
ok() { echo "ok=$1 $2" >>"$dir/tap"; [ "$1" = 0 ]; }
diag() { echo "diag $*" >>"$dir/tap"; }
# sinfo: its arguments recorded; "n2 completing" for the first $BUSY
# calls, then every node idle; SILENT=1: says nothing at all
mkdir "$dir/bin"
cat >"$dir/bin/sinfo" <<'EOF'
#!/bin/bash
echo "$*" >>"$STUB_DIR/args"
[ "${SILENT:-0}" = 1 ] && exit 1
n=$(($(cat "$STUB_DIR/calls" 2>/dev/null || echo 0) + 1))
echo "$n" >"$STUB_DIR/calls"
echo "n1 idle"
if [ "$n" -le "${BUSY:-0}" ]; then echo "n2 completing"; else echo "n2 idle"; fi
echo "n3 idle"
EOF
chmod +x "$dir/bin/sinfo"
export PATH="$dir/bin:$PATH" STUB_DIR=$dir

run() { # BUSY SILENT SECS: nodes_released's status, its TAP lines in $dir/tap
	rm -f "$dir/tap" "$dir/calls" "$dir/args"
	BUSY=$1 SILENT=$2 nodes_released "$3" "n[1-3]" "after the late one"
}

rc=0
run 0 0 5 || rc=$?
check "$rc" "every node idle at once: passes"
check "$([ "$(cat "$dir/tap")" = "ok=0 after the late one: n[1-3] idle again within 5 s ($TE_SECONDS s)" ] && echo 0 || echo 1)" \
	"one ok line, naming the nodes, the bound and how long it took" "$(cat "$dir/tap")"
check "$(grep -qx -- "-h -N -n n\[1-3\] -o %N %T" "$dir/args" && echo 0 || echo 1)" \
	"sinfo is asked about the given nodes only" "$(cat "$dir/args")"

rc=0
start=$(date +%s.%N)
run 5 0 10 || rc=$?
took=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { print e - s }')
check "$rc" "a node completing for 5 looks, then idle: passes"
check "$(awk -v t="$took" 'BEGIN { exit !(t >= 0.8 && t < 5) }' && echo 0 || echo 1)" \
	"it waited for the node (0.2 s a look): $took s"
check "$(awk -v t="$TE_SECONDS" 'BEGIN { exit !(t >= 0.8) }' && echo 0 || echo 1)" \
	"and says how long ($TE_SECONDS s)"
check "$([ "$(cat "$dir/calls")" = 6 ] && echo 0 || echo 1)" "one look more than the node was busy" \
	"$(cat "$dir/calls")"

rc=0
start=$(date +%s.%N)
run 1000 0 1 || rc=$?
took=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { print e - s }')
check "$([ "$rc" != 0 ] && echo 0 || echo 1)" "a node still completing at the bound: fails"
check "$(awk -v t="$took" 'BEGIN { exit !(t >= 1 && t < 3) }' && echo 0 || echo 1)" \
	"at its 1 s bound, not later: $took s"
check "$(grep -c '^ok=1 after the late one: n\[1-3\] idle again within 1 s$' "$dir/tap" | grep -qx 1 && echo 0 || echo 1)" \
	"one failed check" "$(cat "$dir/tap")"
check "$(grep -q '^diag still not idle:' "$dir/tap" && grep -qx 'n2 completing' "$dir/tap" && echo 0 || echo 1)" \
	"naming the node that is not idle, and its state" "$(cat "$dir/tap")"

rc=0
run 0 1 1 || rc=$?
check "$([ "$rc" != 0 ] && echo 0 || echo 1)" "sinfo saying nothing: not taken for idle, fails at the bound"

echo "1..$n"
[ "$failed" = 0 ]
