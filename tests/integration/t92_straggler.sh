#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 36 item 1, stragglers named while training runs, on the real
# cluster: 3 nodes x 2 ranks of a Python program that calls the tests'
# stand-in libnccl's all_reduce in a loop. The stand-in drives trainenv's
# NCCL profiler plugin as NCCL does (nccl_standin_prof.c), and its
# collectives wait for every rank of the communicator (a file per rank,
# STANDIN_BARRIER_DIR), as real kernels wait for the last rank. Windows of
# 1 s, 2 late windows in a row, threshold 50%:
#  (a) srun --train-straggler=50 with n2's ranks 40 ms late at each step:
#      srun names n2 (ranks 2-3), once; the record keeps it;
#  (b) 10 even runs of 3 s and more: no node named (the count is
#      reported);
#  (c) a site's one policy line (straggler=50 in plugstack.conf), sbatch
#      with srun inside, n3 late: n3 named;
#  (d) --train-straggler=off: nothing said, no plugin loaded;
#  (e) the job's own NCCL_PROFILER_PLUGIN: trainenv steps aside in one
#      line and the job's plugin is the one NCCL is given.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"

te_build_init
standin=$TE_BUILDDIR/tests/integration/.libs/libnccl-standin-prof.so
prof=$TE_BUILDDIR/.libs/libnccl-profiler-trainenv.so
if [ ! -f "$standin" ] || [ ! -f "$prof" ]; then
	echo "1..0 # SKIP build the check programs first (make check-unit): no $standin or $prof"
	exit 0
fi

plan 12

cluster_up --nodes 3 || bail_out "no cluster"
mkdir -m 1777 rec
site="required $plugin record-dir=$TE_WORK/rec lib-dir=$TE_BUILDDIR/.libs"
set_plugstack "$site"

cp "$TE_SRCDIR/tests/integration/strag_train.py" strag.py
export STANDIN_LIB=$standin STANDIN_CHANNELS=1
window=(--train-straggler-windows=2 --train-straggler-window=1)
# A run in a fresh barrier directory: CASE SLOW_NODE ITERS EXTRA SRUN_ARGS...
run() {
	local case=$1 slow=$2 iters=$3 extra=$4
	shift 4
	mkdir -m 1777 "bar.$case"
	STANDIN_BARRIER_DIR=$TE_WORK/bar.$case SLOW_NODE=$slow \
		te_srun -t 90 -N3 --ntasks-per-node=2 "$@" \
		/usr/bin/python3 strag.py "$iters" 0.01 "$extra" >"$case.out" 2>"$case.err"
}

# ================================================================ (a)
run a n2 80 0.04 --train-straggler=50 "${window[@]}"
is "$?" 0 "(a) 6 ranks, n2's 40 ms late at each all_reduce: the step runs to its end" ||
	diag "$(cat a.err a.out)"
like "$(cat a.err)" "(^|\n)trainenv: straggler: n2 \\(ranks 2-3\\) waited least in all_reduce of communicator [0-9a-f]{16}: [0-9.]+ (us|ms) a call, the other 2 nodes' median [0-9.]+ ms, for 2 windows in a row \\(2 s\\)" \
	"srun names n2 and its ranks, against the other nodes' waits" || diag "$(cat a.err)"
diag "$(grep 'straggler:' a.err)"
is "$(grep -c 'straggler:' a.err)" 1 "  once, while it stays late"
id=$(te_last_job_id)
like "$(cat "rec/0/$id/trainenv.0.json" 2>&1)" '"straggler":"straggler: n2 \(ranks 2-3\) waited least' \
	"  the step's record keeps the line"

# ================================================================ (b)
named=0 failed=0 shortest=
for i in 1 2 3 4 5 6 7 8 9 10; do
	t0=$(date +%s%N)
	run "b$i" none 300 0 --train-straggler=50 "${window[@]}" || failed=$((failed + 1))
	ms=$((($(date +%s%N) - t0) / 1000000))
	if [ -z "$shortest" ] || [ "$ms" -lt "$shortest" ]; then shortest=$ms; fi
	named=$((named + $(grep -c 'straggler:' "b$i.err")))
done
is "$failed" 0 "(b) 10 even runs of 300 steps each run to their end"
[ "${shortest:-0}" -ge 3000 ]
ok $? "  each 3 windows of 1 s long at least, room for a row of 2 (the shortest: $shortest ms)"
is "$named" 0 "  no node named in 10 even runs: $named namings" ||
	diag "$(grep -h 'straggler:' b*.err)"

# ================================================================ (c)
set_plugstack "$site straggler=50 straggler-windows=2 straggler-window=1"
mkdir -m 1777 bar.c
out=$(STANDIN_BARRIER_DIR=$TE_WORK/bar.c SLOW_NODE=n3 te_sbatch_wait -t 120 \
	-N3 --ntasks-per-node=2 -o "$TE_WORK/c.out" \
	--wrap "srun /usr/bin/python3 $TE_WORK/strag.py 80 0.01 0.04" 2>&1)
is "$?" 0 "(c) a site's one policy line, sbatch with srun inside: the job ends well" ||
	diag "$out" "$(cat c.out)"
like "$(cat c.out)" "(^|\n)trainenv: straggler: n3 \\(ranks 4-5\\) waited least in all_reduce" \
	"  srun inside the batch job names n3" || diag "$(cat c.out)"
set_plugstack "$site"

# ================================================================ (d)
run d n2 80 0.04 --train-straggler=off "${window[@]}"
rc=$?
is "$rc:$(grep -c 'straggler' d.err):$(grep -c 'standin profiler: trainenv' d.out)" "0:0:0" \
	"(d) --train-straggler=off: nothing said, no plugin loaded" || diag "$(cat d.err d.out)"

# ================================================================ (e)
NCCL_PROFILER_PLUGIN=/nonexistent/libnccl-profiler-own.so \
	run e n2 40 0.04 --train-straggler=50 "${window[@]}"
rc=$?
like "$rc:$(cat e.err)" "^0:(.*\n)?trainenv: straggler: this job sets its own NCCL profiler plugin \\(NCCL_PROFILER_PLUGIN=/nonexistent/libnccl-profiler-own.so\\) and NCCL loads one: trainenv's steps aside, no node is named as a straggler" \
	"(e) the job's own profiler plugin: trainenv steps aside in one line" || diag "$(cat e.err)"
is "$(grep -c 'cannot open shared object file' e.out):$(grep -c 'straggler: n' e.err)" "6:0" \
	"  every rank's NCCL was given the job's plugin, none trainenv's" || diag "$(cat e.out)"
