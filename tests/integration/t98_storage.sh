#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Node health's storage check (issue 34) in the PMIx launch: with the
# site's health_storage on, every node writes, fsyncs and reads back its
# own file in --train-checkpoint-dir as the job's user; a node made slow
# by the site's test hook (health_test_storage_delay=n2:MS, the namespaced
# nodes share one disk) is named below the fraction of the other nodes'
# median, and under health_storage_action=exclude the step fails; a node
# past the bound (health_timeout) is named with how far it got; a clean
# run passes and leaves no file; a user's weaker --train-health is
# refused at srun.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/pmix_common.sh
. "$here/../lib/pmix_common.sh"

te_require_mpi_pmix

plan 15

cluster_up --nodes 3
ok $? "cluster is up" || bail_out "no cluster"
te_build_init
ckpt=$TE_WORK/ckpt-storage
mkdir -p "$ckpt"
chmod 1777 "$ckpt"

step() { # a 3-node step of 2 tasks each: out, rc
	out=$(te_srun -t 60 --mpi=pmix -N3 --ntasks-per-node=2 -w "n[1-3]" \
		--train-checkpoint-dir="$ckpt" --train-failure-report=off sh -c 'echo ran' 2>&1)
	rc=$?
}

# ---------------------------------------------------------------- clean
# fraction 0.1: three nodes writing at once to one shared disk differ by
# more than half from run to run (t98's first run named one at 0.5)
# (te_seconds keeps step's rc for itself: its status is the step's)
pmix_plugstack
te_seconds step
off_s=$TE_SECONDS
pmix_plugstack health_storage=8M health_storage_fraction=0.1
te_seconds step
rc=$?
diag "a 3-node step: ${off_s} s without the storage check, $TE_SECONDS s with 8 MiB per node"
[ $rc -eq 0 ] && [ "$(count_lines "$out" '^ran$')" = 6 ]
ok $? "health_storage=8M on three healthy nodes: the step runs" || diag "$out"
is "$(count_lines "$out" 'below .* of the other nodes')" 0 "  no node named" || diag "$out"
is "$(ls -A "$ckpt")" "" "  no file left in the checkpoint directory"

# ---------------------------------------------------------------- slow, warn
# fraction 0.1 here too: reads of 8 MiB on the test nodes' one disk come
# from its cache or not (trixie's run read n3 at 195 MB/s against 493,
# 0.4 of it); n2's 150 ms per MiB makes it about 6 MB/s, a hundredth
pmix_plugstack health_storage=8M health_test_storage_delay=n2:150 health_storage_fraction=0.1
step
[ $rc -eq 0 ] && [ "$(count_lines "$out" '^ran$')" = 6 ]
ok $? "n2 slowed, health_storage_action warn (the default): the step runs" || diag "$out"
like "$out" "node n2: checkpoint directory $ckpt: write [0-9]+ MB/s, below 0\\.1 of the other nodes' median \\([0-9]+ MB/s\\)" \
	"  n2 named, with its figure and the others' median"
diag "$(printf '%s\n' "$out" | grep 'below')"
is "$(count_lines "$out" 'node n[13]: checkpoint directory')" 0 "  n1 and n3 not named"

# ---------------------------------------------------------------- slow, exclude
pmix_plugstack health_storage=8M health_test_storage_delay=n2:150 health_storage_fraction=0.1 health_storage_action=exclude
step
[ $rc -ne 0 ] && [ "$(count_lines "$out" '^ran$')" = 0 ]
ok $? "health_storage_action=exclude: the step fails before the program (exit $rc)" || diag "$out"
like "$out" "error: .*node n2: checkpoint directory $ckpt: write [0-9]+ MB/s, below 0\\.1" \
	"  naming n2"

# ---------------------------------------------------------------- the bound
pmix_plugstack health_storage=8M health_test_storage_delay=n3:400 health_timeout=1
step
[ $rc -ne 0 ] && [ "$(count_lines "$out" '^ran$')" = 0 ]
ok $? "n3 past health_timeout=1: the step fails" || diag "$out"
like "$out" "n3: storage: did not finish 8 MiB in 1 s \\(wrote [0-9]+ (MiB|bytes)\\)" \
	"  n3 named with how far it got"
is "$(ls -A "$ckpt")" "" "  no file left behind"

# ---------------------------------------------------------------- user
pmix_plugstack health_storage=8M
out=$(te_srun -t 30 --mpi=pmix -N1 --train-health='storage=off' true 2>&1)
rc=$?
[ $rc -ne 0 ] && printf '%s\n' "$out" | grep -q "health_storage=off: the site writes 8 MiB"
ok $? "a user's --train-health=storage=off refused at srun, naming the site's size" || diag "$out"

out=$(te_srun -t 30 --mpi=pmix -N1 sh -c 'echo ran' 2>&1)
rc=$?
[ $rc -eq 0 ] && printf '%s\n' "$out" | grep -q '^ran$'
ok $? "health_storage on, a step without --train-checkpoint-dir: it runs" || diag "$out"
like "$out" "trainenv: warning: the storage check \\(health_storage\\) is on, but this step has no checkpoint directory: it does not run; give --train-checkpoint-dir=DIR" \
	"  srun says, in one line, that the check does not run"

done_testing
