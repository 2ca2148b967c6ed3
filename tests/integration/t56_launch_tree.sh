#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# PMIx layer, the launch tree (launch-tree-width): on 5 nodes with a width
# of 2 the helpers form a tree two hops deep (n1 the root; n2 and n3 its
# children; n4 and n5 under n2), so every message from n4 and n5 passes
# through n2's helper. The barrier passes and rank 0 names the timeline of
# all 5 nodes; a node under n2 that comes too late is named in the
# deadline's report every waiting task prints; a rank under n2 that fails
# before the barrier fails every task at once, each naming it; a version
# mismatch of the two nodes under n2 is reported once, naming them; rank
# 0's checkpoint probe reaches n4 and n5 through n2 (a shared directory
# passes, a node-local one names the four nodes that cannot see it, and
# when n2 is late n4 and n5 name it); a late
# n2 hides its subtree, and the report says so; nothing is left running.
# The default width (16) runs the same step as a star.
# The three late cases each run on 5 nodes of their own (of 15): Slurm
# 25.05.4 and later keep a late node with its job while mpi/pmix retries
# (31.5 s, up to 3 times), so the cases no longer wait for each other's
# nodes, and the three waits for the nodes' release overlap.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/pmix_common.sh
. "$here/../lib/pmix_common.sh"

# A test of the PMIx layer: its steps run under srun --mpi=pmix.
te_require_mpi_pmix

plan 32

cluster_up --nodes 15
ok $? "cluster is up" || bail_out "no cluster"
te_build_init
pmix_plugstack launch-tree-width=2
before=$(squeue -h -t R | wc -l)

# ---------------------------------------------------------------- fast path
te_seconds eval 'out=$(te_srun -t 60 --mpi=pmix -N5 -w "n[1-5]" --ntasks-per-node=2 \
	--train-barrier=30 --train-explain echo ran 2>&1)'
ok $? "width 2, 5 nodes: the barrier passes" || diag "$out"
is "$(count_lines "$out" '^ran$')" 10 "all ten tasks ran"
is "$(count_lines "$out" '^trainenv: barrier: 10 ranks on 5 nodes; (the last, n[1-5], arrived|all arrived within) ')" 1 \
	"rank 0's task names the timeline of all 5 nodes (through n2 for n4, n5)" ||
	diag "$(printf '%s\n' "$out" | grep '^trainenv:')"
awk -v t="$TE_SECONDS" 'BEGIN { exit !(t < 8) }'
ok $? "no waiting ($TE_SECONDS s for the whole step)"

# ---------------------------------------------------------------- a rank under n2 fails
te_seconds eval 'out=$(TRAINENV_TEST_FAIL_RANK=9 te_srun -t 60 --mpi=pmix -N5 -w "n[1-5]" \
	--ntasks-per-node=2 --train-barrier=30 --train-failure-report=off \
	echo ran 2>&1)'
rc=$?
[ $rc -ne 0 ] && ! printf '%s\n' "$out" | grep -q '^ran'
ok $? "rank 9 (n5) fails before the barrier: no task starts its program" || diag "$out"
awk -v t="$TE_SECONDS" 'BEGIN { exit !(t < 6) }'
ok $? "the others fail at once, not at the 30 s deadline ($TE_SECONDS s)"
is "$(count_lines "$out" '^trainenv: error: rank 9 \(node n5\) failed before the barrier: test hook TRAINENV_TEST_FAIL_RANK: rank 9 fails before the barrier$')" 9 \
	"each of the 9 other tasks names rank 9 on n5 (up through n2, down from n1)" ||
	diag "$out"

# ---------------------------------------------------------------- versions under n2
nccl=$(cluster_exec n1 "$PY" -c '
import ctypes
try:
    v = ctypes.c_int(); ctypes.CDLL("libnccl.so.2").ncclGetVersion(ctypes.byref(v))
    c = v.value; print("%d.%d.%d" % (c // 10000, c % 10000 // 100, c % 100) if c >= 20900 else "%d.%d.%d" % (c // 1000, c % 1000 // 100, c % 100))
except OSError:
    print("none")')
out=$(TRAINENV_TEST_NVIDIACTL=$(gpu_nodes 5) TRAINENV_TEST_FAKE_NCCL_VERSION=n4:2.1.0,n5:2.1.0 \
	te_srun -t 60 --mpi=pmix \
	-N5 -w "n[1-5]" --ntasks-per-node=2 echo ran 2>&1)
ok $? "a version mismatch under n2 (version-check=warn): the job runs" || diag "$out"
is "$(count_lines "$out" 'version mismatch')" 1 "reported once"
like "$out" "^trainenv: warning: version mismatch: NCCL differs across nodes: $nccl on n1, n2, n3; 2.1.0 on n4, n5$" \
	"naming which nodes have which version, in rank order"

# ---------------------------------------------------------------- checkpoint probe through n2
mkdir -p "$TE_WORK/ckpt56"
out=$(te_srun -t 60 --mpi=pmix -N5 -w "n[1-5]" --ntasks-per-node=2 --train-barrier=30 \
	--train-checkpoint-dir="$TE_WORK/ckpt56" echo ran 2>&1)
ok $? "a shared checkpoint directory: n4 and n5 check rank 0's probe (from n2); the barrier passes" ||
	diag "$out"
is "$(ls -A "$TE_WORK/ckpt56")" "" "the check leaves no file behind"
local_dir=/tmp/te-ckpt56-$$
te_srun -t 60 -N5 -w "n[1-5]" mkdir -p "$local_dir"
te_on_exit "te_srun -t 30 -N5 -w 'n[1-5]' rm -rf $local_dir"
te_seconds eval 'out=$(te_srun -t 60 --mpi=pmix -N5 -w "n[1-5]" --ntasks-per-node=2 --train-barrier=30 \
	--train-checkpoint-dir="$local_dir" --train-failure-report=off echo ran 2>&1)'
[ $? -ne 0 ] && ! printf '%s\n' "$out" | grep -q '^ran'
ok $? "a node-local checkpoint directory fails the step before the program starts ($TE_SECONDS s)" || diag "$out"
awk -v t="$TE_SECONDS" 'BEGIN { exit !(t < 6) }'
ok $? "n2 passes the probe on before its own 3 s of looking: under 6 s ($TE_SECONDS s)"
like "$out" "^trainenv: error: checkpoint dir $local_dir is not one shared directory writable from every node \\(rank 0 is on n1\\): n2, n3, n4, n5: rank 0's probe file is not there" \
	"naming all four other nodes (n4 and n5 through n2)"

# ---------------------------------------------------------------- a leaf too late (n1-n5)
te_seconds eval 'out=$(TRAINENV_TEST_DELAY=n5:6 te_srun -t 60 --mpi=pmix -N5 -w "n[1-5]" \
	--ntasks-per-node=2 --train-barrier=3 --train-failure-report=off true 2>&1)'
[ $? -ne 0 ]
ok $? "n5 (under n2) later than the deadline: the step fails"
is "$(count_lines "$out" '^trainenv: error: barrier timed out after 3 s: 8 of 10 ranks arrived; missing: ranks 8-9 \(node n5\)$')" 8 \
	"each of the 8 waiting tasks says: ranks 8-9 on n5 are missing (n2 passed it up)" ||
	diag "$out"
like "$out" "^trainenv: error: barrier timed out after 3 s: rank 2 \\(node n2\\) (did not arrive|could not be found|stopped waiting)" \
	"n5's tasks, too late, name their parent's node n2"

# ---------------------------------------------------------------- n2 late, with the probe (n6-n10)
# n7 is this step's n2 (its second node): n9 and n10 are under it
out=$(TRAINENV_TEST_DELAY=n7:6 te_srun -t 60 --mpi=pmix -N5 -w "n[6-10]" \
	--ntasks-per-node=2 --train-barrier=3 --train-checkpoint-dir="$TE_WORK/ckpt56" \
	--train-failure-report=off true 2>&1)
[ $? -ne 0 ]
ok $? "n7 (the step's second node) late with a checkpoint directory: the step fails" || diag "$out"
is "$(count_lines "$out" '^trainenv: error: barrier timed out after 3 s: 4 of 10 ranks arrived; missing: ranks 2-3 \(node n7\), ranks 6-7 \(node n9\), ranks 8-9 \(node n10\)$')" 4 \
	"n6's and n8's tasks: n7 and its subtree are missing" || diag "$out"
is "$(count_lines "$out" "^trainenv: error: barrier timed out after 3 s: rank 2 \\(node n7\\), this node's parent in the launch tree, did not pass on rank 0's checkpoint probe ")" 4 \
	"n9's and n10's tasks name their parent n7, which never passed the probe on" || diag "$out"

# ---------------------------------------------------------------- n2 late (n11-n15)
te_seconds eval 'out=$(TRAINENV_TEST_DELAY=n12:6 te_srun -t 60 --mpi=pmix -N5 -w "n[11-15]" \
	--ntasks-per-node=2 --train-barrier=3 --train-failure-report=off true 2>&1)'
[ $? -ne 0 ]
ok $? "n12, a parent (the step's second node), later than the deadline: the step fails"
is "$(count_lines "$out" '^trainenv: error: barrier timed out after 3 s: 4 of 10 ranks arrived; missing: ranks 2-3 \(node n12\), ranks 6-7 \(node n14\), ranks 8-9 \(node n15\)$')" 4 \
	"n11's and n13's tasks: n12 and the subtree only it could speak for are missing" ||
	diag "$out"
is "$(count_lines "$out" '^trainenv: error: barrier timed out after 3 s: rank 2 \(node n12\) (did not arrive|could not be found: PMIx gave no address for it in [0-9]+ s \(it has not arrived, has left, or its node.s PMIx server is not answering\))$')" 4 \
	"n14's and n15's tasks name their parent n12" || diag "$out"

# A late node asked PMIx for its parent's or rank 0's address after their
# step had ended, and a late parent answered its children's earlier
# requests: Slurm 25.05.4 and later keep the node with its job while
# mpi/pmix retries (31.5 s each, up to 3 x 31.5 s); the three waits overlap.
nodes_released 60 "n[1-5]" "after n5's late start"
nodes_released 120 "n[6-10]" "after n7's late start (with the probe)"
nodes_released 120 "n[11-15]" "after n12's late start"

settle "$before" 'trainenv-rdzv|echo ran'
is "$(squeue -h -t R | wc -l)" "$before" "no job of ours is left running"
is "$(leftovers 'trainenv-rdzv|echo ran')" "" "no helper or task process is left on any node"

# ---------------------------------------------------------------- the default width
pmix_plugstack
out=$(te_srun -t 60 --mpi=pmix -N5 -w "n[1-5]" --ntasks-per-node=2 --train-barrier=30 \
	echo ran 2>&1)
ok $? "the built-in width (16): every node under n1, the barrier passes" || diag "$out"
is "$(count_lines "$out" '^ran$')" 10 "all ten tasks ran"

done_testing
