#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Mixed versions on the cluster (issue 26, item 3): a launch helper of
# another protocol (trainenv-rdzv built with -DTE_PROTOCOL_VERSION=N, N
# the build's protocol less one, or 2 when it is 1: $other) stops
# the step before any rank runs, each task of that node failing with one
# line that names the node, the helper's directory and both protocols and
# versions; on every node at once the step ends at once, and a node whose
# helper Slurm's cancel killed before it answered (n3's, started late)
# names both versions too (issue 33, item 3); on one node (n2)
# too (n2's task ends the step once it has been 2 s there: its helper
# cannot tell rank 0), and the others' ranks never run either, even where
# a node's slurmd starts the step late (n3's slurmd stopped). A node
# whose plugin and helper both speak the other protocol (n2's helper given
# --protocol $other) is named by rank 0 from the nodes' data, with both
# protocols and versions, at once. The same helper of the plugin's own
# protocol runs the step.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/pmix_common.sh
. "$here/../lib/pmix_common.sh"

te_build_init
# The objects are in the build tree itself (the staged copy the nodes see
# holds the programs only).
obuild=$TE_REAL_BUILDDIR
osrc=$TE_REAL_SRCDIR
objs="$obuild/pmix/trainenv_rdzv-rdzv.o $obuild/pmix/trainenv_rdzv-rdzv_ckpt.o $obuild/pmix/trainenv_rdzv-cudart_load.o"
for f in $objs "$obuild/.libs/libtepmix.a" "$obuild/.libs/libtecore.a" "$obuild/config.h"; do
	[ -f "$f" ] || { echo "1..0 # SKIP $f is missing: the other protocol's helper is linked from the build's objects (make)"; exit 0; }
done

# A test of the PMIx layer: its steps run under srun --mpi=pmix.
te_require_mpi_pmix

plan 28

cluster_up --nodes 3
ok $? "cluster is up" || bail_out "no cluster"
ver=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$obuild/config.h")
# the build's protocol, and the other one the test's helper speaks: an
# older one (1 under 2: the plugin refuses yesterday's helper)
proto=$(sed -n 's/^#define TE_PROTOCOL_VERSION \([0-9]*\)$/\1/p' "$osrc/core/launch/version.h")
other=$((proto > 1 ? proto - 1 : proto + 1))

# The helper once more, of protocol $other: core/launch/version.c compiled with the
# override ahead of the convenience libraries (their version.o is then
# not taken).
mkdir -p "$TE_WORK/p2" "$TE_WORK/mixed"
# shellcheck disable=SC2086 # objs is a list
cc -o "$TE_WORK/p2/trainenv-rdzv" -DTE_PROTOCOL_VERSION="$other" -DHAVE_CONFIG_H \
	-I"$obuild" -I"$osrc/core" -I"$osrc/include" "$osrc/core/launch/version.c" \
	$objs "$obuild/.libs/libtepmix.a" "$obuild/.libs/libtecore.a" \
	$(pkg-config --libs pmix) -ldl -lpthread 2>&1 | sed 's/^/# /'
is "$("$TE_WORK/p2/trainenv-rdzv" --protocol-version)" "trainenv-protocol $other $ver" \
	"the protocol-$other helper says so (the build's: $proto)"
# n2's helper is the protocol-$other one, the others the build's.
cat >"$TE_WORK/mixed/trainenv-rdzv" <<EOS
#!/bin/sh
[ "\$(hostname)" = n2 ] && exec "$TE_WORK/p2/trainenv-rdzv" "\$@"
exec "$helper" "\$@"
EOS
chmod 755 "$TE_WORK/mixed/trainenv-rdzv" "$TE_WORK/p2" "$TE_WORK/mixed" "$TE_WORK/p2/trainenv-rdzv"

line_re() { # DIR NODE
	printf '%s' "node $2: trainenv-rdzv in $1 speaks protocol $other \(trainenv ${ver//./\\.}\), the plugin protocol $proto \(trainenv ${ver//./\\.}\): install the same trainenv on every node \(plugin, helpers and libtrainenv\)"
}

# Every node's helper of the other protocol.
set_plugstack "required $plugin helper-dir=$TE_WORK/p2 test-hooks=on"
refused_step 60 15 "protocol $other on every node: the step fails at once" --train-failure-report=off
# The first node to fail ends the step (so that nobody waits for the
# barrier): where Slurm's cancel reaches a node before its helper has
# answered (Slurm 24.11 at times), the helper is killed there and that
# node's tasks say so instead, naming their node, never a hint to skip
# PMIx. Each node says one of the two; at least one names the versions.
killed_re='^trainenv: error: node (n[1-3]): rendezvous: the rendezvous helper was killed \(signal 9\) before it answered, not by trainenv: as when Slurm cancels the step \(another node.s line says why\) or the node runs out of memory$'
nproto=$(count_lines "$out" "$(line_re "$TE_WORK/p2" 'n[1-3]')")
nkilled=$(count_lines "$out" "$killed_re")
is "$((nproto + nkilled))" 6 \
	"  each of the 6 tasks says one line naming its node: both versions ($nproto), or its helper killed as the step was cancelled ($nkilled)" || diag "$out"
ok "$([ "$nproto" -ge 2 ] && echo 0 || echo 1)" "  the versions are named by at least the first node's 2 tasks" || diag "$out"
is "$(printf '%s\n' "$out" | sed -nE "s/$killed_re/\1/p; s/^trainenv: error: node (n[1-3]): trainenv-rdzv in .*/\1/p" | sort -u | wc -l)" 3 "  the three nodes are named"
is "$(count_lines "$out" 'skips the PMIx rendezvous')" 0 "  no task suggests skipping the rendezvous"

# Every node's helper of protocol $other, n3's started 5 s late (a node
# slow to start the step, as Slurm 24.11's at times): n1 and n2 end the
# step while n3's helper has not answered, and Slurm's cancel kills it.
# n3's tasks still name both versions: the plugin asks the killed
# helper's protocol once more (before, they said only that it was killed).
mkdir -p "$TE_WORK/slow"
cat >"$TE_WORK/slow/trainenv-rdzv" <<EOS
#!/bin/sh
[ "\$(hostname)" = n3 ] && [ "\$1" = --protocol ] && sleep 5 </dev/null >/dev/null 2>&1
exec "$TE_WORK/p2/trainenv-rdzv" "\$@"
EOS
chmod 755 "$TE_WORK/slow" "$TE_WORK/slow/trainenv-rdzv"
set_plugstack "required $plugin helper-dir=$TE_WORK/slow test-hooks=on"
refused_step 60 15 "protocol $other everywhere, n3's helper late: the step fails before n3's helper answers" --train-failure-report=off
is "$(count_lines "$out" "$(line_re "$TE_WORK/slow" n3)")" 2 "  n3's 2 tasks name both versions, their helper killed by the cancel" || diag "$out"
is "$(count_lines "$out" "$(line_re "$TE_WORK/slow" 'n[1-3]')")" 6 "  and so do all 6 tasks" || diag "$out"
is "$(count_lines "$out" 'was killed')" 0 "  none says only that its helper was killed"

# Only n2's helper of protocol $other, a barrier of 20 s: n2 ends the step
# (before, the others waited for the deadline).
set_plugstack "required $plugin helper-dir=$TE_WORK/mixed test-hooks=on barrier=20"
refused_step 90 8 "protocol $other on n2 only: the step fails well before the 20 s barrier" --train-failure-report=off
ok "$([ "$(count_lines "$out" "$(line_re "$TE_WORK/mixed" n2)")" -ge 1 ] && echo 0 || echo 1)" \
	"  srun's stderr has the line naming n2 and both versions" || diag "$out"
is "$(count_lines "$out" 'node n[13]: trainenv-rdzv in .* speaks protocol')" 0 "  n1 and n3 say no such line"
is "$(count_lines "$out" 'barrier timed out')" 0 "  nobody waited for the barrier's deadline"
diag "n2 only: $(printf '%s\n' "$out" | grep -v '^ran$' | head -8)"

# The same, with n3's slurmd stopped until n2 has said why: Slurm drops a
# signal for a step whose slurmstepd is not up yet on a node, and srun
# sends it again only KillWait + 2 s later. n2 ends the step once the step
# has been 2 s on n2 (TE_END_STEP_SETTLE_MS), so n3's tasks, started
# late, are ended too (before, n3 waited for the barrier's deadline).
n3d=$(awk '$1 == "slurmd.n3" { p = $2 } END { print p }' "$TE_CLUSTER_DIR/pids")
nodes=(n2 n3)	# log_sizes, new_logs
# The last step's job must have left n3 first: while n3 is still
# completing it, the controller holds this job until n3's stopped slurmd
# answers, and n2 has nothing to say meanwhile.
wait_nodes_idle 60 || bail_out "nodes not idle before n3's slurmd is stopped"
mapfile -t sizes < <(log_sizes)
kill -STOP "$n3d"
te_on_exit "kill -CONT $n3d 2>/dev/null"
t0=$(date +%s.%N)
te_srun -t 90 --mpi=pmix -N3 --ntasks-per-node=2 -w n[1-3] --train-failure-report=off \
	sh -c "echo ran" >"$TE_WORK/late.out" 2>&1 &
spid=$!
for ((i = 0; i < 200; i++)); do
	new_logs "${sizes[@]}" | grep -q "^n2: .*speaks protocol $other" && break
	sleep 0.05
done
n2said=$i
sleep 0.3	# Slurm's signal, were it sent now, would reach n3's stopped slurmd
kill -CONT "$n3d"
wait "$spid"
secs=$(awk -v s="$t0" -v e="$(date +%s.%N)" 'BEGIN { printf "%.3f", e - s }')
n3new=$(new_logs "${sizes[@]}" | grep '^n3: ')
ok "$([ "$n2said" -lt 200 ] && echo 0 || echo 1)" "n3's slurmd stopped: n2 said why meanwhile" ||
	diag "$(new_logs "${sizes[@]}" | grep '^n2: ')"
awk -v t="$secs" 'BEGIN { exit !(t < 10) }'
ok $? "  the step ends well before the 20 s barrier, n3 started late ($secs s)" ||
	diag "$(cat "$TE_WORK/late.out")" "$n3new"
is "$(count_lines "$(cat "$TE_WORK/late.out"; printf "\n%s" "$n3new")" 'barrier timed out')" 0 "  n3 did not wait for the barrier's deadline"

# n2 all of the other protocol (its plugin would pass --protocol $other:
# the wrapper does): n2's helper runs and says so in its node's data; rank 0
# rejects the step at once, naming n2 and the others with both versions.
cat >"$TE_WORK/mixed/trainenv-rdzv" <<EOS
#!/bin/sh
if [ "\$(hostname)" = n2 ] && [ "\$1" = --protocol ]; then
	shift 2
	exec "$TE_WORK/p2/trainenv-rdzv" --protocol $other "\$@"
fi
exec "$helper" "\$@"
EOS
refused_step 90 8 "n2 of protocol $other throughout: rank 0 fails the step at once" --train-failure-report=off
want="node n2 speaks protocol $other \(trainenv ${ver//./\\.}\), nodes n1, n3 protocol $proto \(trainenv ${ver//./\\.}\): install the same trainenv on every node \(plugin, helpers and libtrainenv\)"
ok "$([ "$(count_lines "$out" "$want")" -ge 1 ] && echo 0 || echo 1)" \
	"  one line names n2, n1 and n3 with both protocols and versions" || diag "$out"
is "$(count_lines "$out" 'barrier timed out')" 0 "  nobody waited for the barrier's deadline"

# The same wrapper with the build's helper everywhere: the step runs.
sed -i 's/= n2 ]/= nowhere ]/' "$TE_WORK/mixed/trainenv-rdzv"
grep -q nowhere "$TE_WORK/mixed/trainenv-rdzv" || bail_out "the wrapper was not changed"
out=$(te_srun -t 60 -Q --mpi=pmix -N3 --ntasks-per-node=2 -w n[1-3] sh -c "echo ran" 2>&1)
ok $? "the plugin's own protocol on every node: the step runs" || diag "$out"
is "$(count_lines "$out" '^ran$')" 6 "  all 6 ranks ran"
is "$(count_lines "$out" 'speaks protocol')" 0 "  and nothing is said about protocols"
