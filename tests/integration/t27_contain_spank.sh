#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# SlurmdParameters=contain_spank (Slurm 24.05 and later), on a cluster of
# its own: slurmstepd runs user_init, task_post_fork and task_exit in a
# clone(CLONE_VM) child that shares its memory but not its descriptors.
# The first-failure report (sent from task_exit), the exit watchdog and
# the hang report still work: every failed rank of several steps is
# reported, in order, with the first one marked; a rank left hanging past
# --train-exit-grace is named with its Python frame; no slurmd log line
# says a report could not go. On an older release it says in one line why
# it does not apply.
# shellcheck disable=SC2016 # $VARS in single quotes are the tasks'
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"

plan 13

ver=$(slurmd -V 2>/dev/null | awk '{ print $2 }')
if ! awk -v v="$ver" 'BEGIN { split(v, a, "."); exit !(a[1] > 24 || (a[1] == 24 && a[2] >= 5)) }'; then
	skip "SlurmdParameters=contain_spank is Slurm 24.05's; this cluster runs $ver" 13
	done_testing
	exit 0
fi

te_build_init
# A cluster of our own, whose slurmd run SPANK's per-task calls contained.
unset TE_CLUSTER_DIR
export TE_SLURMD_PARAMS=contain_spank
cluster_up --nodes 3 || bail_out "no cluster"
ok 0 "cluster is up with SlurmdParameters=contain_spank, plugin $TE_PLUGIN"
like "$(timeout 30 scontrol show config | awk '$1 == "SlurmdParameters" { print $3 }')" 'contain_spank' \
	"slurmctld says SlurmdParameters holds contain_spank"
use_trainenv "helper-dir=$TE_BUILDDIR"
report_re='^trainenv: rank [0-9]+ \(node n[0-9], local rank [0-9]+\) '

# Two failures on one node, a second apart: two task_exit calls, each in a
# contained child of its own, three steps in a row.
bad=""
for i in 1 2 3; do
	out=$(te_srun -t 60 -N2 --ntasks-per-node=2 sh -c \
		'case $SLURM_PROCID in 2) exit 3 ;; 3) sleep 1; exit 4 ;; esac; sleep 2' 2>&1)
	reports=$(printf '%s\n' "$out" | grep -E "$report_re")
	printf '%s\n' "$reports" | sed -n 1p |
		grep -qE '^trainenv: rank 2 \(node n2, local rank 0\) exited with code 3 at .*: the first failure of this step$' &&
	printf '%s\n' "$reports" | sed -n 2p |
		grep -qE '^trainenv: rank 3 \(node n2, local rank 1\) exited with code 4 at [^:]*:[^:]*:[0-9.]*$' &&
	[ "$(printf '%s\n' "$reports" | grep -c .)" = 2 ] || bad="$bad step $i: $out"
done
is "$bad" "" "three steps, two failed ranks on n2 each: both reported every time, the first marked"
out=$(te_srun -t 60 -N3 sh -c '[ $SLURM_PROCID != 1 ] || exit 5' 2>&1)
like "$out" '^trainenv: rank 1 \(node n2, local rank 0\) exited with code 5 at .*: the first failure of this step$' \
	"a failure on another node's first task_exit is reported too"
out=$(te_srun -t 60 -N3 --ntasks-per-node=2 true 2>&1)
is "$(printf '%s\n' "$out" | grep -cE '^trainenv: ')" 0 "clean exits: no report"
is "$(cat "$TE_CLUSTER_DIR"/log/slurmd.n*.log | grep -c 'trainenv: .*could not tell srun')" 0 \
	"no slurmd log says a report could not go"

# The exit watchdog and the hang report: rank 3 (n2) hangs in save_final().
command -v gdb >/dev/null || bail_out "gdb is needed (tests/deps.sh installs it)"
ready=$TE_CLUSTER_DIR/shared/ready
mkdir -p "$ready" && chmod 1777 "$ready" && rm -f "$ready"/rank.*
HANG_RANK=3 te_seconds te_srun -t 120 -N2 --ntasks-per-node=2 --train-exit-grace=5 \
	/usr/bin/python3 "$TE_SRCDIR/tests/integration/py/hang.py" exit "$ready" \
	>"$TE_WORK/hang.out" 2>"$TE_WORK/hang.err"
rc=$?
diag "$(cat "$TE_WORK/hang.err")"
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]
ok $? "exit-grace=5: the step ends non-zero by itself (rc=$rc, ${TE_SECONDS} s)"
grep -qE '^trainenv: exit-grace: 5 s after the first task of step [0-9]+\.[0-9]+ ended' "$TE_WORK/hang.err"
ok $? "srun says the grace is over"
grep -qE '^trainenv: hang: rank 3 on n2 \(1 rank' "$TE_WORK/hang.err"
ok $? "the report names the hung rank 3 and its node n2"
grep -qE 'File ".*hang.py", line [0-9]+, in save_final' "$TE_WORK/hang.err"
ok $? "the report shows its Python frame save_final"
# trainenv's own SIGTERM ended rank 3: no rank failed of itself (issue 25,
# item 0: no "first failure" for it, but why trainenv ended the step)
grep -qE '^trainenv: rank 3 \(node n2, local rank 1\) was killed by signal 15 \(SIGTERM\) at .*: trainenv ended the step: ranks still ran 5 s after rank [0-2] on n[12] exited with code 0 \(--train-exit-grace=5\)$' "$TE_WORK/hang.err" &&
	! grep -q 'the first failure of this step' "$TE_WORK/hang.err"
ok $? "the failure report: rank 3 ended by trainenv, and why; no first failure"
left=$(for n in n1 n2; do cluster_exec "$n" pgrep -af "hang.py exit" 2>/dev/null; done)
is "$left" "" "no process of the step is left"
state=$(timeout 10 sinfo -h -o '%T' | sort -u | tr '\n' ' ')
is "$state" "idle " "no node is drained"
done_testing
