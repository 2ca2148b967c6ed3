#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Step kinds of newer Slurm releases (issue 23), on the real cluster of the
# release it runs: srun --external-launcher (23.11+), whose tasks are an MPI
# launcher's daemons, gets no rank environment, binding, rendezvous or
# failure report from trainenv (the ranks the daemons start would inherit
# them), only the timeout and signal policy, and says so with
# --train-explain; srun --async (26.05+) leaves before local_user_init:
# trainenv says in one line that the report, watchdog, requeue and record
# are off, the shield does not fork, and the step still runs with its rank
# environment. Each part states in one line why it does not apply to an
# older release.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"

plan 12

ver=$(slurmd -V 2>/dev/null | awk '{ print $2 }')
at_least() { # MAJOR.MINOR: the cluster's release is that or newer
	awk -v v="$ver" -v w="$1" 'BEGIN { split(v, a, "."); split(w, b, ".");
		exit !(a[1] > b[1] || (a[1] == b[1] && a[2] >= b[2])) }'
}
# An async step is created by the job's own step manager: slurmctld
# refuses one ("Invalid feature specification", stepmgr.c), so 26.05's
# cluster here runs with enable_stepmgr (which needs PrologFlags=contain):
# our own cluster, not the suite's shared one.
if at_least 26.05; then
	unset TE_CLUSTER_DIR
	export TE_SLURM_CONF_EXTRA=$'PrologFlags=contain\nSlurmctldParameters=enable_stepmgr'
fi

te_build_init
cluster_up --nodes 3 || bail_out "no cluster"
ok 0 "cluster is up, plugin $TE_PLUGIN"
use_trainenv nccl-heartbeat=900

# ---------------------------------------------------------------- --external-launcher
if at_least 23.11; then
	show='echo "task=$SLURM_PROCID rank=${RANK:-none} master=${MASTER_ADDR:-none} kind=${TRAINENV_STEP_KIND:-none} hb=${TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC:-none} bind=${TRAINENV_BIND:-none}"; [ "$SLURM_PROCID" != 1 ] || exit 3'
	out=$(timeout -k 10 90 salloc -N2 srun --external-launcher --train-explain -N2 --ntasks-per-node=1 \
		sh -c "$show" 2>&1)
	diag "$out"
	is "$(printf '%s\n' "$out" | grep -c '^task=')" 2 "--external-launcher: both daemons ran"
	is "$(printf '%s\n' "$out" | grep '^task=' | sed 's/task=[0-9]* //' | sort -u)" \
		"rank=none master=none kind=external-launcher hb=900 bind=none" \
		"the daemons get no rank environment and no binding, the site's timeout (heartbeat 900) and the step kind"
	is "$(printf '%s\n' "$out" | grep -cE '^trainenv: rank [0-9]+ \(node')" 0 \
		"a daemon that exits 3 is no rank: no failure report"
	is "$(printf '%s\n' "$out" | grep -c '^trainenv: note: srun --external-launcher: this step.s tasks are an MPI launcher.s daemons, not ranks')" 1 \
		"--train-explain: one line says what trainenv does for the launcher's daemons"
	out=$(timeout -k 10 90 salloc -N2 srun -N2 --ntasks-per-node=1 sh -c 'echo "rank=${RANK:-none} kind=${TRAINENV_STEP_KIND:-none}"' 2>&1)
	is "$(printf '%s\n' "$out" | grep '^rank=' | sort | tr '\n' ' ')" "rank=0 kind=none rank=1 kind=none " \
		"the same srun without --external-launcher: ranks, no step kind"
	out=$(timeout -k 10 90 salloc -N2 env TRAINENV_STEP_KIND=external-launcher srun -N2 --ntasks-per-node=1 \
		sh -c 'echo "rank=${RANK:-none} kind=${TRAINENV_STEP_KIND:-none}"' 2>&1)
	is "$(printf '%s\n' "$out" | grep '^rank=' | sort | tr '\n' ' ')" "rank=0 kind=none rank=1 kind=none " \
		"a step kind inherited from the environment is not srun's: the step still gets ranks"
else
	skip "srun --external-launcher is Slurm 23.11's; this cluster runs $ver" 6
fi

# ---------------------------------------------------------------- --async
if at_least 26.05; then
	rm -f "$TE_WORK"/async.*
	out=$(timeout -k 10 90 salloc -N2 sh -c "srun --async -N2 --ntasks-per-node=1 -o '$TE_WORK/async.%t' \
		sh -c 'echo rank=\${RANK:-none}; sleep 1'; echo srun-rc=\$?; sleep 4" 2>&1)
	diag "$out"
	like "$out" 'srun-rc=0' "--async: srun launched the step and returned"
	is "$(printf '%s\n' "$out" | grep -c '^trainenv: note: srun --async does not stay with the step: its first-failure report, exit watchdog, requeue and step record are off')" 1 \
		"one line says which of trainenv's features need srun to stay"
	is "$(cat "$TE_WORK"/async.* 2>/dev/null | sort | tr '\n' ' ')" "rank=0 rank=1 " \
		"the step still gets its rank environment"
	! printf '%s\n' "$out" | grep -q 'warning: the step is not protected'
	ok $? "no shield for an srun that leaves at once"
else
	skip "srun --async is Slurm 26.05's; this cluster runs $ver" 4
fi

# shellcheck disable=SC2016 # expanded in the node
left=$(for n in n1 n2 n3; do node_pgrep "$n" -af "sleep 1" 2>/dev/null | grep -v pgrep; done)
is "$left" "" "nothing left running"
done_testing
