#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GPU pre-flight (--train-preflight) on the real cluster, without a GPU:
#  (a) a step without GPUs: one "nothing to check" line for the step, the
#      tasks run, and trainenv-preflight is never run (the helper directory
#      holds a wrapper that counts its runs);
#  (b) GPUs in the step (fake NVIDIA GPUs in this machine's topology,
#      bind-topology=, CUDA_VISIBLE_DEVICES=0,1) with the real CUDA runtime
#      of /usr/local/cuda: it loads, finds no driver, and pre-flight says
#      so once; with a stand-in runtime (tests/unit/fake_cudart.c) the
#      success path: TRAINENV_PREFLIGHT and one verbose line per rank;
#  (c) a failing pre-flight (test hook TRAINENV_TEST_PREFLIGHT_FAIL, as if
#      cudaMalloc failed on n2) ends the whole step within seconds despite
#      a 300 s barrier, every task naming node, rank, GPU and error, nothing
#      left running, and the next step runs; TRAINENV_TEST_FAIL_RANK too;
#      without PMIx only the failing node's tasks fail.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/pmix_common.sh
. "$here/../lib/pmix_common.sh"

# Every step here runs under srun --mpi=pmix (the launch checks are the
# PMIx layer's).
te_require_mpi_pmix

plan 44

cluster_up --nodes 3
ok $? "cluster is up" || bail_out "no cluster"
te_build_init
preflight=$builddir/trainenv-preflight
fakelib=$builddir/tests/unit/.libs/libfakecudart.so
[ -x "$preflight" ] || bail_out "build first: no $preflight"
[ -f "$fakelib" ] || bail_out "build the unit tests first (make check-unit): no $fakelib"

# A helper directory whose trainenv-preflight counts its runs.
helpers=$TE_WORK/helpers
count=$TE_WORK/preflight.runs
mkdir -p "$helpers"
ln -s "$builddir/trainenv-rdzv" "$helpers/trainenv-rdzv"
cat >"$helpers/trainenv-preflight" <<EOF
#!/bin/sh
echo "\$SLURMD_NODENAME \$SLURM_PROCID \$*" >>"$count"
exec "$preflight" "\$@"
EOF
chmod 755 "$helpers/trainenv-preflight"
runs() { if [ -f "$count" ]; then wc -l <"$count"; else echo 0; fi; }

# This machine's topology with 2 fake GPUs per package (as t30).
lstopo-no-graphics --of xml --whole-io - >here.xml 2>/dev/null &&
	"$here/../lib/add_gpus.py" here.xml gpus.xml 2
ok $? "this machine's topology exported, fake GPUs added"
topo=$TE_WORK/gpus.xml
plug() { set_plugstack "required $plugin helper-dir=$helpers test-hooks=on bind-topology=$topo $*"; }
plug

# A stand-in CUDA runtime for the success path.
mkdir -p fake && ln -s "$fakelib" fake/libcudart.so
fake=$TE_WORK/fake

nodelog() { # NODE JOBID: trainenv's lines of that step in the node's log
	grep -h "\[$2\.0\] trainenv: " "$TE_CLUSTER_DIR/log/slurmd.$1.log" 2>/dev/null
}
report='printf "ran %s %s %s\n" "$RANK" "$SLURM_JOB_ID" "${TRAINENV_PREFLIGHT:-none}"'

# ---------------------------------------------------------------- off
out=$(te_srun -t 60 --mpi=pmix -N3 --ntasks-per-node=2 sh -c "$report" 2>&1)
is "$(count_lines "$out" '^ran ')" 6 "preflight off (built-in): the step runs"
is "$(count_lines "$out" preflight)" 0 "  and says nothing about it"
is "$(runs)" 0 "  and never runs the check"

# ---------------------------------------------------------------- (a) no GPU in the step
out=$(te_srun -t 60 --mpi=pmix -N3 --ntasks-per-node=2 --train-preflight=on sh -c "$report" 2>&1)
is "$(count_lines "$out" '^ran [0-5] [0-9]+ none$')" 6 "no GPU in the step: all six tasks run, no TRAINENV_PREFLIGHT" ||
	diag "$out"
is "$(count_lines "$out" '^trainenv: preflight: nothing to check on node n1: the step has no GPU there; the tasks run unchecked$')" 1 \
	"one 'nothing to check' line for the step (rank 0's)"
is "$(count_lines "$out" 'trainenv:')" 1 "and no other trainenv line"
is "$(runs)" 0 "trainenv-preflight was never run (no GPU: nothing to exec)"
job=$(awk '/^ran 0 / { print $3 }' <<<"$out")
like "$(nodelog n3 "$job")" "preflight: nothing to check on node n3: the step has no GPU there" \
	"the other nodes say it in their slurmd log only"

# The same as the site's default (enforced): no option needed.
plug preflight=on enforce=preflight
out=$(te_srun -t 60 --mpi=pmix -N2 --ntasks-per-node=1 --train-preflight=off sh -c "$report" 2>&1)
like "$out" "warning: --train-preflight=off ignored: the site enforces preflight=on" \
	"an enforced site default: the user's off is ignored with a warning"
is "$(count_lines "$out" 'nothing to check')" 1 "  and the check runs (nothing to check here)"
plug

# ---------------------------------------------------------------- (b) GPUs, no driver
cuda=${TE_CUDA_HOME:-/usr/local/cuda}
if ls "$cuda"/lib64/libcudart.so* >/dev/null 2>&1; then
	: >"$count"
	out=$(CUDA_VISIBLE_DEVICES=0,1 te_srun -t 60 --mpi=pmix -N3 --ntasks-per-node=2 \
		--train-preflight=on sh -c "$report" 2>&1)
	is "$(count_lines "$out" '^ran [0-5] [0-9]+ none$')" 6 "GPUs in the step, CUDA runtime but no driver: the tasks run" ||
		diag "$out"
	is "$(runs)" 6 "the check ran once per rank"
	# the PCI bus id after --gpu (the protocol comes first: issue 26)
	is "$(awk '{ for (i = 3; i < NF; i++) if ($i == "--gpu") print $(i + 1) }' "$count" |
		sort | uniq -c | awk '{ print $1 }' | paste -sd,)" "3,3" \
		"  each rank for its own GPU (2 ranks a node: 0000:81:00.0 and 0000:82:00.0)"
	is "$(count_lines "$out" '^trainenv: preflight: nothing to check on node n1: no usable CUDA runtime or driver \(cudaDeviceGetByPCIBusId: .*driver.*; runtime [0-9.]+, driver none\); the tasks run unchecked$')" 1 \
		"'no usable CUDA runtime or driver' said once, with the CUDA error" || diag "$out"
	is "$(count_lines "$out" 'trainenv:')" 1 "and nothing else"
else
	skip "no CUDA runtime at $cuda/lib64 (the CUDA toolkit is needed for this part)" 5
fi

# The success path, with a stand-in runtime first in LD_LIBRARY_PATH.
: >"$count"
out=$(LD_LIBRARY_PATH=$fake CUDA_VISIBLE_DEVICES=0,1 te_srun -t 60 --mpi=pmix -N3 \
	--ntasks-per-node=2 --train-preflight=verbose sh -c "$report" 2>&1)
is "$(count_lines "$out" '^ran [0-5] [0-9]+ gpu=0000:8[12]:00.0 free=[0-9]+ total=85899345920 runtime=12040 driver=12080$')" 6 \
	"a working GPU: every task runs with TRAINENV_PREFLIGHT" || diag "$out"
is "$(count_lines "$out" '^trainenv: preflight: rank [0-5] \(node n[123]\) GPU 0000:8[12]:00.0: ok, 79.4 GiB free of 80.0 GiB, CUDA runtime 12.4, driver 12.8 \([0-9]+ ms\)$')" 6 \
	"verbose: one line per rank in srun's output"
ok "$(grep -q 'rank 5 (node n3) GPU 0000:82:00.0' <<<"$out"; echo $?)" "  rank 5 (local 1 on n3) checked the node's second GPU"

# A GPU that fails for real (in the stand-in runtime): every rank fails.
out=$(TE_FAKE_CUDART_FAIL=cudaDeviceSynchronize:700 LD_LIBRARY_PATH=$fake CUDA_VISIBLE_DEVICES=0,1 \
	te_srun -t 60 --mpi=pmix -N1 --ntasks-per-node=2 --train-preflight=on \
	--train-failure-report=off sh -c "$report" 2>&1)
rc=$?
[ $rc -ne 0 ] && ! grep -q '^ran ' <<<"$out"
ok $? "a GPU error at synchronize: the tasks fail before the program (exit $rc)"
is "$(count_lines "$out" '^trainenv: error: preflight: rank [01] \(node n1\) GPU 0000:8[12]:00.0: cudaDeviceSynchronize: an illegal memory access was encountered$')" 2 \
	"  each names rank, node, GPU, the CUDA call and its error"

# ---------------------------------------------------------------- (c) failure ends the step fast
before=$(squeue -h -t R | wc -l)
te_seconds eval 'out=$(TRAINENV_TEST_PREFLIGHT_FAIL="n2:out of memory" CUDA_VISIBLE_DEVICES=0,1 \
	te_srun -t 60 --mpi=pmix -N3 --ntasks-per-node=2 --train-preflight=on \
	--train-barrier=300 --train-failure-report=off sh -c "$report; sleep 30" 2>&1)'
rc=$?
[ $rc -ne 0 ] && ! grep -q '^ran ' <<<"$out"
ok $? "pre-flight fails on n2: the step fails, no task starts its program (exit $rc)" || diag "$out"
awk -v t="$TE_SECONDS" 'BEGIN { exit !(t < 10) }'
ok $? "the whole step ended in $TE_SECONDS s, not at the 300 s barrier deadline"
is "$(count_lines "$out" '^trainenv: error: preflight: rank [23] \(node n2\) GPU 0000:8[12]:00.0: cudaMalloc: out of memory$')" 2 \
	"the failing ranks (2, 3 on n2) name node, rank, GPU and error" || diag "$out"
is "$(count_lines "$out" '^trainenv: error: rank [23] \(node n2\) failed before the barrier: preflight: GPU 0000:8[12]:00.0: cudaMalloc: out of memory$')" 4 \
	"every other task gets rank 0's report naming the same" || diag "$out"
is "$(count_lines "$out" '^trainenv: error: rank [23] \(node n2\) failed before the barrier' | sort -u | wc -l)" 1 \
	"  one report, the same on every task (the first failure)"
settle "$before" 'trainenv-rdzv|trainenv-preflight|sleep 30'
is "$(squeue -h -t R | wc -l)" "$before" "no job of ours is left running"
is "$(leftovers 'trainenv-rdzv|trainenv-preflight|sleep 30')" "" "no helper or task process is left on any node"
out=$(LD_LIBRARY_PATH=$fake CUDA_VISIBLE_DEVICES=0,1 te_srun -t 60 --mpi=pmix -N3 \
	--ntasks-per-node=2 --train-preflight=on sh -c "$report" 2>&1)
is "$(count_lines "$out" '^ran [0-5] [0-9]+ gpu=')" 6 "the next step on the same nodes runs and passes its pre-flight"

# The test hook of the PMIx layer takes the same path now.
te_seconds eval 'out=$(TRAINENV_TEST_FAIL_RANK=3 te_srun -t 60 --mpi=pmix -N3 --ntasks-per-node=2 \
	--train-barrier=300 --train-failure-report=off sh -c "$report" 2>&1)'
rc=$?
[ $rc -ne 0 ] && ! grep -q '^ran ' <<<"$out"
ok $? "TRAINENV_TEST_FAIL_RANK=3: the step fails (exit $rc)"
awk -v t="$TE_SECONDS" 'BEGIN { exit !(t < 10) }'
ok $? "  within seconds ($TE_SECONDS s) despite the 300 s barrier"
is "$(count_lines "$out" '^trainenv: error: rank 3 \(node n2\) failed before the barrier: test hook TRAINENV_TEST_FAIL_RANK: rank 3 fails before the barrier$')" 5 \
	"  the 5 other tasks name rank 3 and node n2" || diag "$out"

# Rank 0's own node failing: the coordinator's own rank reports it.
te_seconds eval 'out=$(TRAINENV_TEST_PREFLIGHT_FAIL="n1:out of memory" LD_LIBRARY_PATH=$fake \
	CUDA_VISIBLE_DEVICES=0,1 te_srun -t 60 --mpi=pmix -N3 --ntasks-per-node=2 \
	--train-preflight=on --train-failure-report=off sh -c "$report" 2>&1)'
rc=$?
[ $rc -ne 0 ] && ! grep -q '^ran ' <<<"$out" && awk -v t="$TE_SECONDS" 'BEGIN { exit !(t < 10) }'
ok $? "pre-flight fails on rank 0's node: the step fails in $TE_SECONDS s"
is "$(count_lines "$out" '^trainenv: error: rank [01] \(node n1\) failed before the barrier: preflight: GPU 0000:8[12]:00.0: cudaMalloc: out of memory$')" 4 \
	"  the 4 tasks on n2 and n3 name rank, node n1, GPU and error" || diag "$out"

# Without PMIx there is no barrier: the failing node's tasks fail alone.
out=$(TRAINENV_TEST_PREFLIGHT_FAIL="n2:out of memory" LD_LIBRARY_PATH=$fake CUDA_VISIBLE_DEVICES=0,1 \
	te_srun -t 60 -N3 --ntasks-per-node=2 --train-preflight=on --train-failure-report=off \
	sh -c "$report" 2>&1)
rc=$?
is "$(count_lines "$out" '^ran [0145] ')" 4 "without PMIx: the tasks on n1 and n3 run" || diag "$out"
is "$(count_lines "$out" '^trainenv: error: preflight: rank [23] \(node n2\) GPU 0000:8[12]:00.0: cudaMalloc: out of memory$')" 2 \
	"  the two on n2 fail, naming GPU and error"
[ $rc -ne 0 ]
ok $? "  and srun reports the failure (exit $rc)"
te_seconds eval 'out=$(TRAINENV_TEST_PREFLIGHT_FAIL="n2:out of memory" LD_LIBRARY_PATH=$fake \
	CUDA_VISIBLE_DEVICES=0,1 te_srun -t 60 -N3 --ntasks-per-node=2 --kill-on-bad-exit=1 \
	--train-preflight=on --train-failure-report=off sh -c "sleep 20 && $report" 2>&1)'
[ "$(count_lines "$out" '^ran ')" = 0 ] && awk -v t="$TE_SECONDS" 'BEGIN { exit !(t < 15) }'
ok $? "  srun --kill-on-bad-exit ends the others ($TE_SECONDS s; as documented)" || diag "$out"

# The test hook is ignored without test-hooks=on.
set_plugstack "required $plugin helper-dir=$helpers bind-topology=$topo"
out=$(TRAINENV_TEST_PREFLIGHT_FAIL="n2:out of memory" LD_LIBRARY_PATH=$fake CUDA_VISIBLE_DEVICES=0,1 \
	te_srun -t 60 --mpi=pmix -N3 --ntasks-per-node=2 --train-preflight=on sh -c "$report" 2>&1)
is "$(count_lines "$out" '^ran [0-5] [0-9]+ gpu=')" 6 "without test-hooks=on the hook is ignored" || diag "$out"

# ---------------------------------------------------------------- versions
# The CUDA runtime's version is part of the cross-node version check
# (n3's faked with the test hook; every node given "a GPU" by another).
plug
out=$(TRAINENV_TEST_NVIDIACTL=$(gpu_nodes 3) TRAINENV_TEST_FAKE_CUDART_VERSION=n3:12.2 \
	te_srun -t 60 --mpi=pmix -N3 \
	--ntasks-per-node=2 true 2>&1)
is "$(count_lines "$out" '^trainenv: warning: version mismatch: CUDA runtime differs across nodes: ([0-9.]+|none) on n1, n2; 12.2 on n3$')" 1 \
	"a CUDA runtime that differs on n3 is reported once, naming the nodes" || diag "$out"

# ---------------------------------------------------------------- the program itself
out=$("$preflight" --gpu 0000:81:00.0 2>/dev/null)
like "$out" '^TRAINENV-PREFLIGHT 1' "trainenv-preflight runs outside Slurm"
ldd "$preflight" | grep -vE 'linux-vdso|ld-linux|libc\.so|libdl\.so' | grep -q .
ok $((!$?)) "it links nothing but libc (and libdl): $(ldd "$preflight" | awk '{ print $1 }' | paste -sd' ')"
! ldd "$builddir/.libs/trainenv.so" | grep -qi cuda
ok $? "the plugin does not link CUDA"

done_testing
