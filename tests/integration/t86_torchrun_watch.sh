#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The torchrun watcher (issue 25, item 7), on the real cluster: one
# torchrun per node under --train-exit-grace, rank 3 (n2) hangs while the
# other workers exit. The watcher is what tells srun a worker ended; it
# must (a) wait for its task when another SPANK plugin's task_init keeps
# the task from its program for 3 s (it took the task for gone at its first
# look, a second in, and stopped), and (b) read the task's environment
# whole: with 20,000 variables (over a megabyte) before Slurm's, the step's
# SLURM_JOB_ID lay past what it read, and no process was the step's. Either
# way the grace never started and the hung rank was never reported.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"

te_no_torchrun_store && te_skip_all "$TE_WHY"
command -v gcc >/dev/null || { echo "1..0 # SKIP no gcc to build the slow SPANK plugin"; exit 0; }

plan 6

te_build_init
cluster_up --nodes 2 || bail_out "no cluster"
command -v gdb >/dev/null || bail_out "gdb is needed (tests/deps.sh installs it)"
hang=$TE_SRCDIR/tests/integration/py/hang.py
shared=$TE_CLUSTER_DIR/shared
ready=$shared/ready86
mkdir -p "$ready" && chmod 1777 "$ready"

# Another site's plugin, after trainenv in plugstack.conf, whose task_init
# takes 3 s.
cat >"$TE_WORK/slow.c" <<'EOF'
#include <unistd.h>
#include <slurm/spank.h>
SPANK_PLUGIN(slowinit, 1);
int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	(void)sp; (void)ac; (void)av;
	sleep(3);
	return 0;
}
EOF
gcc -shared -fPIC -o "$shared/slowinit.so" "$TE_WORK/slow.c" 2>"$TE_WORK/gcc.err"
ok $? "a SPANK plugin whose task_init takes 3 s is built" || diag "$(cat "$TE_WORK/gcc.err")"

run_hang() { # LABEL: torchrun per node, rank 3 hangs; srun's stderr in $TE_WORK/LABEL.err
	rm -f "$ready"/rank.*
	PET_REDIRECTS=1 PET_TEE=1 HANG_RANK=3 te_seconds te_srun -t 120 -N2 --ntasks-per-node=1 \
		--train-exit-grace=3 torchrun --nproc_per_node=2 "$hang" exit "$ready" \
		>/dev/null 2>"$TE_WORK/$1.err"
	rc=$?
	diag "$(grep -E '^trainenv: (exit-grace|hang|rank)' "$TE_WORK/$1.err")"
}
reported() { # LABEL: the grace ran out and the report names rank 3 on n2 alone
	grep -qE '^trainenv: exit-grace: 3 s after the first task of step [0-9]+\.0 ended \(worker rank [0-2] on n[12] ended\), 1 rank still runs:' "$TE_WORK/$1.err" &&
		grep -qE '^trainenv: hang: rank 3 on n2 \(1 rank' "$TE_WORK/$1.err" &&
		[ "$(grep -cE '^trainenv: hang: ' "$TE_WORK/$1.err")" = 1 ]
}

# ================================================================ (a) a slow task_init beside
set_plugstack "required $TE_PLUGIN helper-dir=$TE_BUILDDIR" "required $shared/slowinit.so"
run_hang slow
reported slow
ok $? "another plugin's task_init of 3 s: the watcher waits for its task; the report names rank 3 on n2 (rc=$rc, ${TE_SECONDS} s)"
# ended by trainenv (SIGTERM, then SIGKILL for torchrun's agent), not by
# the test's 120 s limit (124, as on the code before)
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && awk -v s="$TE_SECONDS" 'BEGIN { exit !(s < 100) }'
ok $? "  and the step ends, by trainenv (rc=$rc, ${TE_SECONDS} s)"

# ================================================================ (b) 20,000 variables
use_trainenv "helper-dir=$TE_BUILDDIR"
big=$(python3 -c 'for i in range(20000): print("TE_BIG_%05d=a value of some forty bytes, times twenty thousand" % i)')
n=$(wc -l <<<"$big")
ok "$([ "$n" = 20000 ] && echo 0 || echo 1)" "20,000 variables of $(wc -c <<<"$big") bytes"
# shellcheck disable=SC2046
while IFS= read -r v; do export "${v?}"; done <<<"$big"
run_hang big
reported big
ok $? "20,000 variables before Slurm's: the report names rank 3 on n2 (rc=$rc, ${TE_SECONDS} s)"
# ended by trainenv (SIGTERM, then SIGKILL for torchrun's agent), not by
# the test's 120 s limit (124, as on the code before)
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && awk -v s="$TE_SECONDS" 'BEGIN { exit !(s < 100) }'
ok $? "  and the step ends, by trainenv (rc=$rc, ${TE_SECONDS} s)"
while IFS= read -r v; do unset "${v%%=*}"; done <<<"$big"
