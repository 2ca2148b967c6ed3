#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# PMIx layer, launch barrier (--train-barrier): a PyTorch gloo job whose
# third node starts 20 s late, with a 10 s process-group timeout, fails
# without the barrier and succeeds with it; a rank that never reaches the
# barrier tells rank 0, which fails every other task at once (not at the
# deadline), each with one line naming the failed rank, its node and why,
# and leaves nothing running; a node later than the deadline makes the
# others fail at the deadline naming the missing ranks and node; a missing
# rank 0 is named as such. The launch timeline: past the site's
# barrier-skew-warn (built-in 10 s), or with --train-explain, rank 0's task
# names the node that came last and by how much, once; the step's record
# holds the same.
# The late node and the failing rank come from the helper's test hooks
# (TRAINENV_TEST_DELAY, TRAINENV_TEST_FAIL_RANK; honoured only with the
# site policy test-hooks=on), which act before the helper joins PMIx:
# exactly where a slow node or a task that died early would be.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/pmix_common.sh
. "$here/../lib/pmix_common.sh"

# A test of the PMIx layer: its steps run under srun --mpi=pmix.
te_require_mpi_pmix

plan 33

cluster_up --nodes 3
ok $? "cluster is up" || bail_out "no cluster"
te_build_init
pmix_plugstack
# Debian trixie's torch 2.x has no libuv: init_process_group needs
# USE_LIBUV=0 there (tests/lib/itest.sh).
te_torch_store_env

# ---------------------------------------------------------------- fast path
te_seconds te_srun -t 60 --mpi=pmix -N3 --ntasks-per-node=2 --train-barrier=30 true
ok $? "with every rank on time the barrier passes"
awk -v t="$TE_SECONDS" 'BEGIN { exit !(t < 5) }'
ok $? "and costs no waiting (${TE_SECONDS} s for the whole step)"

# ---------------------------------------------------------------- skewed start
cat >skew.py <<'PY'
# A training start: init_process_group (gloo) with a 10 s timeout, then the
# first collective. torch 1.13's gloo enforces that timeout per store
# operation, and a rank waiting on the store can outlive it (seen: about
# half the runs); NCCL's watchdog would abort such a rank. So the program
# also holds its first collective to the timeout, as the watchdog would.
import datetime, os, socket, sys, time
import torch
import torch.distributed as dist
TIMEOUT = 10
t0 = time.time()
try:
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=TIMEOUT))
    t = torch.ones(1)
    dist.all_reduce(t)
    took = time.time() - t0
    if took > TIMEOUT:
        raise RuntimeError("the first collective took %.1f s, longer than the "
                           "%d s process-group timeout" % (took, TIMEOUT))
    print("rank %s on %s: all_reduce %d after %.1f s" % (
        os.environ["RANK"], socket.gethostname(), t.item(), took), flush=True)
    dist.destroy_process_group()
except Exception as e:
    print("rank %s on %s: FAILED after %.1f s: %s" % (
        os.environ.get("RANK"), socket.gethostname(), time.time() - t0,
        str(e).splitlines()[0][:120]), flush=True)
    sys.exit(1)
PY
# Without the barrier the early ranks enter init_process_group at once and
# hit the 10 s timeout long before n3 arrives (-K: the step ends with the
# first failure instead of waiting for n3 to fail too).
te_seconds eval 'out=$(TRAINENV_TEST_DELAY=n3:20 te_srun -t 90 --mpi=pmix -K1 -N3 \
	--ntasks-per-node=2 --train-barrier=off --train-failure-report=off \
	"$PY" skew.py 2>&1)'
rc=$?
[ $rc -ne 0 ]
ok $? "without the barrier, n3 20 s late and a 10 s PG timeout: the job fails" || diag "$out"
# torch 1.13 says "Socket Timeout", torch 2.x (Debian trixie) "wait timeout
# after 10000ms, keys: ...".
like "$out" "rank [0-3] on n[12]: FAILED after [0-9.]+ s: (Socket Timeout|wait timeout after [0-9]+ms|.*longer than the 10 s process-group timeout)" \
	"an early rank hit the 10 s process-group timeout"
! printf '%s\n' "$out" | grep -qE "rank [0-3] on n[12]: all_reduce"
ok $? "no early rank got through its first collective in time"
diag "without the barrier: $TE_SECONDS s"

te_seconds eval 'out=$(TRAINENV_TEST_DELAY=n3:20 te_srun -t 120 --mpi=pmix -N3 \
	--ntasks-per-node=2 --train-barrier=60 "$PY" skew.py 2>&1)'
rc=$?
ok $rc "with --train-barrier=60 the same job succeeds" || diag "$out"
is "$(count_lines "$out" 'all_reduce 6 after')" 6 "all six ranks computed the all_reduce"
is "$(count_lines "$out" '^trainenv: barrier: 6 ranks on 3 nodes; the last, n3, arrived (19|2[0-9])\.[0-9] s after the first$')" 1 \
	"past barrier-skew-warn (10 s): one line names n3, about 20 s after the first" ||
	diag "$(printf '%s\n' "$out" | grep '^trainenv:')"
awk -v t="$TE_SECONDS" 'BEGIN { exit !(t >= 20) }'
ok $? "the barrier held the early ranks for n3 (step took $TE_SECONDS s)"
is "$(printf '%s\n' "$out" | awk '/all_reduce 6 after/ { if ($7 + 0 >= 10) n++ } END { print n + 0 }')" 0 \
	"once released, every rank got through init_process_group well within 10 s"
diag "with the barrier: $TE_SECONDS s"

# ---------------------------------------------------------------- a rank that fails before the barrier
# It tells rank 0 (a failure file for its node's helper), and rank 0 fails
# the whole step at once: nobody waits for the deadline.
before=$(squeue -h -t R | wc -l)
te_seconds eval 'out=$(TRAINENV_TEST_FAIL_RANK=3 te_srun -t 60 --mpi=pmix -N3 \
	--ntasks-per-node=2 --train-barrier=30 --train-failure-report=off \
	"$PY" -c "print(\"ran\")" 2>&1)'
rc=$?
[ $rc -ne 0 ] && ! printf '%s\n' "$out" | grep -q '^ran'
ok $? "rank 3 fails before the barrier: no task starts its program" || diag "$out"
awk -v t="$TE_SECONDS" 'BEGIN { exit !(t < 5) }'
ok $? "the others fail at once, not at the 30 s deadline ($TE_SECONDS s)"
is "$(count_lines "$out" '^trainenv: error: rank 3 \(node n2\) failed before the barrier: test hook TRAINENV_TEST_FAIL_RANK: rank 3 fails before the barrier$')" 5 \
	"each of the 5 other tasks names rank 3 on n2 and why it failed" ||
	diag "$out"
like "$out" "^trainenv: error: test hook TRAINENV_TEST_FAIL_RANK: rank 3 fails" \
	"rank 3's own task says why it failed"
settle "$before" 'trainenv-rdzv|print\(.ran'
is "$(squeue -h -t R | wc -l)" "$before" "no job of ours is left running"
is "$(leftovers 'trainenv-rdzv|print\(.ran')" "" "no helper or task process is left on any node"

# ---------------------------------------------------------------- a node that comes too late
# The deadline's report: n2 starts 5 s late, the barrier allows 3 s. A
# step that fails at once, timed first: what srun and Slurm take besides
# the waits, on this machine now.
te_seconds eval 'TRAINENV_TEST_FAIL_RANK=0 te_srun -t 60 --mpi=pmix -N3 --ntasks-per-node=2 \
	--train-barrier=3 --train-failure-report=off true >/dev/null 2>&1'
base=$TE_SECONDS
te_seconds eval 'out=$(TRAINENV_TEST_DELAY=n2:5 te_srun -t 60 --mpi=pmix -N3 \
	--ntasks-per-node=2 --train-barrier=3 --train-failure-report=off true 2>&1)'
rc=$?
[ $rc -ne 0 ]
ok $? "a node later than the deadline: the step fails"
is "$(count_lines "$out" '^trainenv: error: barrier timed out after 3 s: 4 of 6 ranks arrived; missing: ranks 2-3 \(node n2\)$')" 4 \
	"each of the 4 waiting tasks says: 4 of 6 arrived, ranks 2-3 on n2 are missing" ||
	diag "$out"
awk -v t="$TE_SECONDS" -v b="$base" 'BEGIN { exit !(t >= 3 && t - b < 5 + 3 + 3) }'
ok $? "n1 and n3 at the deadline, n2 by its own deadline after its late start ($TE_SECONDS s; a step failing at once: $base s)"
# n2 comes when rank 0 has given up: its helper cannot find rank 0's
# coordinator any more (PMIx never answers for rank 0's address, or says
# there is none)
is "$(count_lines "$out" '^trainenv: error: barrier timed out after 3 s: rank 0 \(node n1\) (did not arrive|could not be found: PMIx gave no address for it in [0-9] s \(it has not arrived, has left, or its node.s PMIx server is not answering\))$')" 2 \
	"n2's two tasks, too late, say rank 0 (node n1) is not there" || diag "$out"
# n2's helper asked PMIx for rank 0's address after n1's step had ended:
# from Slurm 25.05.4 n2 stays with this job while mpi/pmix retries that
# (31.5 s); the next step is timed from when the nodes are free
nodes_released 60 "n[1-3]" "after n2's late start"

# ---------------------------------------------------------------- rank 0 missing
te_seconds eval 'out=$(TRAINENV_TEST_FAIL_RANK=0 te_srun -t 60 --mpi=pmix -N3 \
	--ntasks-per-node=2 --train-barrier=30 --train-failure-report=off true 2>&1)'
rc=$?
[ $rc -ne 0 ]
ok $? "rank 0 fails before the barrier: the step fails"
is "$(count_lines "$out" '^trainenv: error: rank 0 \(node n1\) failed before the barrier: test hook TRAINENV_TEST_FAIL_RANK: rank 0 fails before the barrier$')" 5 \
	"the 5 other ranks, rank 1 on rank 0's node too, name rank 0 (node n1)" || diag "$out"
awk -v t="$TE_SECONDS" 'BEGIN { exit !(t < 5) }'
ok $? "at once, not at the 30 s deadline ($TE_SECONDS s)"

# ---------------------------------------------------------------- skew within the deadline, report of who waited
# A slow node that arrives in time: the report never shows, the step runs.
te_seconds eval 'out=$(TRAINENV_TEST_DELAY=n2:3 te_srun -t 60 --mpi=pmix -N3 \
	--ntasks-per-node=2 --train-barrier=20 bash -c "echo ran" 2>&1)'
is "$(count_lines "$out" '^ran$')" 6 "a node 3 s late within a 20 s barrier: all six tasks run" ||
	diag "$out"
awk -v t="$TE_SECONDS" 'BEGIN { exit !(t >= 3 && t < 10) }'
ok $? "they start together once n2 is there, long before the 20 s deadline ($TE_SECONDS s)"
is "$(count_lines "$out" '^trainenv: barrier:')" 0 \
	"3 s is under barrier-skew-warn's 10 s: no timeline line" || diag "$out"

# ---------------------------------------------------------------- the timeline, explained and recorded
rec=$TE_WORK/records
mkdir -p "$rec"
out=$(TRAINENV_TEST_DELAY=n2:3 te_srun -t 60 --mpi=pmix -N3 --ntasks-per-node=2 \
	--train-barrier=20 --train-explain --train-nccl-dump-dir="$rec" \
	bash -c "echo ran" 2>&1)
ok $? "--train-explain, n2 3 s late: the step runs" || diag "$out"
is "$(count_lines "$out" '^trainenv: barrier: 6 ranks on 3 nodes; the last, n2, arrived [2-5]\.[0-9] s after the first$')" 1 \
	"--train-explain: the line whatever the skew, once, naming n2" ||
	diag "$(printf '%s\n' "$out" | grep '^trainenv: barrier')"
json=$(cat "$rec"/0/*/trainenv.0.json 2>&1)
"$PY" - "$json" <<'PY'
import json, sys
l = json.loads(sys.argv[1])["launch"]
ok = (l["ranks"] == 6 and l["nodes"] == 3 and l["last_node"] == "n2" and
      l["first_node"] in ("n1", "n3") and 2000 <= l["skew_ms"] < 6000)
sys.exit(0 if ok else 1)
PY
ok $? "the step's record holds the timeline: 6 ranks, 3 nodes, n2 last, 2-6 s (3 s late, less the nodes' own launch skew)" ||
	diag "$json"
out=$(te_srun -t 60 --mpi=pmix -N3 --ntasks-per-node=2 --train-barrier=20 \
	--train-explain bash -c "echo ran" 2>&1)
is "$(count_lines "$out" '^trainenv: barrier: 6 ranks on 3 nodes; (all arrived within 0\.1 s|the last, n[1-3], arrived [0-2]\.[0-9] s after the first)$')" 1 \
	"--train-explain, every node on time: the line says so" ||
	diag "$(printf '%s\n' "$out" | grep '^trainenv: barrier')"
out=$(te_srun -t 60 --mpi=pmix -N3 --ntasks-per-node=2 --train-barrier=off \
	--train-explain bash -c "echo ran" 2>&1)
is "$(count_lines "$out" '^trainenv: barrier:')" 0 \
	"no launch barrier: no timeline line, even explained" || diag "$out"
rm -rf "$rec"

done_testing
