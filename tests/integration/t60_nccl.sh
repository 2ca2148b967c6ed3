#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# --train-barrier=first-collective on the real cluster with the real libnccl
# of the CUDA toolkit (/usr/local/cuda; no GPU here, so NCCL's own call
# fails after the barrier). trainenv-nccl.so, put in LD_PRELOAD by the
# plugin, runs the job-wide barrier right before each process's first
# communicator: every rank must have finished the barrier, after the last
# (late) rank arrived, before any rank enters NCCL; the second communicator
# does not barrier again; a process that never uses NCCL never loads
# libtrainenv or PMIx; a rank that never comes makes the others fail at the
# deadline without entering NCCL.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/pmix_common.sh
. "$here/../lib/pmix_common.sh"

cuda=${TE_CUDA_HOME:-/usr/local/cuda}
if [ ! -f "$cuda/include/nccl.h" ] || ! ls "$cuda"/lib64/libnccl.so* >/dev/null 2>&1; then
	echo "1..0 # SKIP no NCCL at $cuda (the CUDA toolkit with NCCL is needed for this test)"
	exit 0
fi

# Every step here runs under srun --mpi=pmix (the launch checks are the
# PMIx layer's).
te_require_mpi_pmix

plan 20

cluster_up --nodes 3 || bail_out "no cluster"
te_build_init
preload=$builddir/.libs/trainenv-nccl.so
[ -f "$preload" ] || bail_out "build first: no $preload"

cc -I"$cuda/include" "$here/nccl_probe.c" -L"$cuda/lib64" -lnccl \
	-Wl,-rpath,"$cuda/lib64" -o "$TE_WORK/nccl_probe" 2>cc.err
ok $? "the probe builds against the CUDA toolkit's libnccl" || diag "$(cat cc.err)"

pmix_plugstack "lib-dir=$builddir/.libs barrier=20"

# ---------------------------------------------------------------- ordering
trace=$TE_WORK/trace
: >"$trace"
out=$(PROBE_LATE_RANK=4 PROBE_LATE_SECONDS=3 TRAINENV_NCCL_TRACE="$trace" \
	te_srun -t 120 --mpi=pmix -N3 --ntasks-per-node=2 \
	--train-barrier=first-collective "$TE_WORK/nccl_probe" 2>&1)
ok $? "6 ranks, rank 4 three seconds late: the step runs" || diag "$out"
is "$(grep -c 'first ncclCommInitRank: [1-9]' <<<"$out")" 6 "every rank reached the real NCCL (which fails: no GPU)"
is "$(grep -c ' barrier-start ' "$trace")" 6 "one barrier per process"
is "$(grep -c ' barrier-done ' "$trace")" 6 "every rank completed the barrier"
is "$(grep -cE ' nccl-enter [0-9.]+ ncclCommInitRank$' "$trace")" 12 "both communicator creations of every rank went on to NCCL"
last_arrival=$(awk '$2 == "barrier-start" { if ($3 > m) m = $3 } END { printf "%.6f", m }' "$trace")
first_release=$(awk '$2 == "barrier-done" { if (m == "" || $3 < m) m = $3 } END { printf "%.6f", m }' "$trace")
first_nccl=$(awk '$2 == "nccl-enter" { if (m == "" || $3 < m) m = $3 } END { printf "%.6f", m }' "$trace")
awk -v a="$last_arrival" -v r="$first_release" 'BEGIN { exit !(r >= a) }'
ok $? "no rank left the barrier before the late rank arrived (last arrival $last_arrival, first release $first_release)"
awk -v a="$last_arrival" -v n="$first_nccl" 'BEGIN { exit !(n >= a) }'
ok $? "no rank entered NCCL before every rank was in the barrier (first NCCL entry $first_nccl)"
bad=$(awk '$2 == "barrier-done" { done[$1] = $3 } $2 == "nccl-enter" && !($1 in first) { first[$1] = $3 }
	END { for (r in first) if (!(r in done) || first[r] < done[r]) print r }' "$trace")
is "$bad" "" "each rank entered NCCL only after its own barrier completed"
late=$(awk '$1 == 4 && $2 == "barrier-start" { print $3 }' "$trace")
early=$(awk '$1 == 0 && $2 == "barrier-start" { print $3 }' "$trace")
awk -v l="$late" -v e="$early" 'BEGIN { exit !(l - e >= 2.5) }'
ok $? "the late rank really arrived later (rank 0 at $early, rank 4 at $late)"

# ---------------------------------------------------------------- no NCCL
out=$(te_srun -t 60 --mpi=pmix -N1 -n1 --train-barrier=first-collective \
	sh -c 'echo "preload=$LD_PRELOAD"; grep -c -e libtrainenv -e libpmix /proc/self/maps; grep -o "[^/]*trainenv-nccl.so" /proc/self/maps | sort -u' 2>&1)
like "$out" "preload=$builddir/.libs/trainenv-nccl.so" "the plugin puts trainenv-nccl.so in LD_PRELOAD"
is "$(sed -n 2p <<<"$out")" "0" "a process that never uses NCCL loads neither libtrainenv nor PMIx"
is "$(sed -n 3p <<<"$out")" "trainenv-nccl.so" "only the small preload library is mapped"
out=$(te_srun -t 60 --mpi=pmix -N1 -n1 sh -c 'echo "preload=${LD_PRELOAD:-none}"' 2>&1)
is "$out" "preload=none" "without first-collective there is no preload"

# ---------------------------------------------------------------- missing rank
# Rank 1 stays away past the deadline (25 s). A rank that exits at once
# races Slurm's mpi/pmix: it may cancel the step itself ("Cannot establish
# direct connection"), or stall a node's PMIx server (the next part).
: >"$trace"
start=$(date +%s)
out=$(PROBE_SKIP_RANK=1 PROBE_SKIP_SECONDS=25 TRAINENV_NCCL_TRACE="$trace" te_srun -t 120 --mpi=pmix \
	-N3 --ntasks-per-node=1 --train-barrier=first-collective \
	"$TE_WORK/nccl_probe" 2>&1)
took=$(( $(date +%s) - start ))
is "$(grep -c 'the barrier before the first NCCL communicator failed, NCCL not entered: barrier timed out after 20 s' <<<"$out")" 2 "a rank that never creates a communicator: the others fail at the 20 s deadline, saying so" || diag "$out"
[ "$(grep -c ' nccl-enter ' "$trace")" = 0 ] && [ "$took" -lt 60 ]
ok $? "and nobody entered NCCL; the step ended in ${took}s" || diag "$out"

# ---------------------------------------------------------------- a silent PMIx server
# Slurm's mpi/pmix can leave a node's clients unanswered for a minute (it
# retries a send to a node whose step ended, a rank that exited at once, on
# the thread that serves the clients: seen here, rank 0's commit of its
# address answered after 63 s). Here rank 0's slurmstepd is stopped for
# 30 s as the barrier starts: the 20 s deadline must hold anyway, and the
# reports say what happened.
: >"$trace"
PROBE_SKIP_RANK=1 PROBE_SKIP_SECONDS=25 TRAINENV_NCCL_TRACE="$trace" \
	te_srun -t 120 --mpi=pmix -N3 --ntasks-per-node=1 \
	--train-barrier=first-collective \
	"$TE_WORK/nccl_probe" >"$TE_WORK/silent.out" 2>&1 &
srun_pid=$!
for ((i = 0; i < 300; i++)); do
	grep -q '^0 barrier-start' "$trace" && break
	sleep 0.1
done
# shellcheck disable=SC2016 # expanded in the node
stepd=$(node_pgrep n1 -f "slurmstepd: \[[0-9]+\.0\]")
[ -n "$stepd" ] && cluster_exec n1 kill -STOP $stepd
ok $? "rank 0's slurmstepd stopped as its barrier started (pid ${stepd:-none})"
sleep 30
[ -n "$stepd" ] && cluster_exec n1 kill -CONT $stepd
wait "$srun_pid"
out=$(cat "$TE_WORK/silent.out")
took=$(awk '$2 == "barrier-start" { s[$1] = $3 } $2 == "barrier-failed" { f[$1] = $3 }
	END { printf "%.1f %.1f", f[0] - s[0], f[2] - s[2] }' "$trace")
awk -v t="$took" 'BEGIN { split(t, a, " "); exit !(a[1] >= 19 && a[1] < 23 && a[2] >= 19 && a[2] < 23) }'
ok $? "ranks 0 and 2 failed at the 20 s deadline, not when the server answered (after $took s)" || diag "$(cat "$trace")"
like "$out" "rank 0: the barrier before the first NCCL communicator failed, NCCL not entered: barrier timed out after 20 s: .*missing: rank 1 \\(node n2\\), rank 2 \\(node n3\\) \\(this node's PMIx server has not taken rank 0's address for [0-9]+ s: ranks on other nodes could not find rank 0\\)" \
	"rank 0 says its node's PMIx server did not take its address"
like "$out" "rank 2: .*barrier timed out after 20 s: rank 0 \\(node n1\\) could not be found: PMIx gave no address for it in 1[0-9] s \\(it has not arrived, has left, or its node's PMIx server is not answering\\)" \
	"rank 2 says PMIx did not answer for rank 0's address"

done_testing
