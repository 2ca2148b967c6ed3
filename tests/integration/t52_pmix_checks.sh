#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# PMIx layer, launch checks: --train-checkpoint-dir is accepted for one
# shared directory (and exported as TRAINENV_CHECKPOINT_DIR) and refused,
# naming the nodes, for a node-local one with the same path on every node;
# a version mismatch (simulated on n3 with the test hook
# TRAINENV_TEST_FAKE_NCCL_VERSION) is reported once, naming which nodes
# have which version; version-check=fail fails the step; off is silent;
# only nodes with a GPU (/dev/nvidiactl) load NCCL and are compared.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/pmix_common.sh
. "$here/../lib/pmix_common.sh"

# A test of the PMIx layer: its steps run under srun --mpi=pmix.
te_require_mpi_pmix

plan 27

cluster_up --nodes 3
ok $? "cluster is up" || bail_out "no cluster"
te_build_init
pmix_plugstack

# ---------------------------------------------------------------- checkpoint dir
mkdir -p "$TE_WORK/ckpt"
out=$(te_srun -t 60 --mpi=pmix -N3 --ntasks-per-node=2 --train-checkpoint-dir="$TE_WORK/ckpt" \
	bash -c 'echo "$TRAINENV_CHECKPOINT_DIR"' 2>&1)
ok $? "a shared checkpoint directory passes the check" || diag "$out"
is "$(printf '%s\n' "$out" | sort | uniq -c | awk '{ print $1, $2 }')" "6 $TE_WORK/ckpt" \
	"every task gets TRAINENV_CHECKPOINT_DIR"
is "$(ls -A "$TE_WORK/ckpt")" "" "the check leaves no file behind"

# /tmp is private to each node: the same path, three directories
local_dir=/tmp/te-ckpt-$$
te_srun -t 60 -N3 mkdir -p "$local_dir"
te_on_exit "te_srun -t 30 -N3 rm -rf $local_dir"
te_seconds eval 'out=$(te_srun -t 60 --mpi=pmix -N3 --ntasks-per-node=2 \
	--train-checkpoint-dir=$local_dir --train-failure-report=off echo ran 2>&1)'
rc=$?
[ $rc -ne 0 ] && ! printf '%s\n' "$out" | grep -q '^ran'
ok $? "a node-local directory (same path on every node) fails the step before the program starts" ||
	diag "$out"
is "$(count_lines "$out" 'is not one shared directory')" 1 "reported once"
like "$out" "^trainenv: error: checkpoint dir $local_dir is not one shared directory writable from every node \\(rank 0 is on n1\\): n2, n3: rank 0's probe file is not there" \
	"naming the nodes that do not see it"
awk -v t="$TE_SECONDS" 'BEGIN { exit !(t < 15) }'
ok $? "fails fast ($TE_SECONDS s)"
is "$(cluster_exec n1 ls -A "$local_dir")" "" "rank 0 removed its probe file"

only_n1=/tmp/te-ckpt-n1-$$
cluster_exec n1 mkdir -p "$only_n1"
te_on_exit "cluster_exec n1 rm -rf $only_n1"
out=$(te_srun -t 60 --mpi=pmix -N3 --ntasks-per-node=2 --train-checkpoint-dir=$only_n1 \
	--train-failure-report=off true 2>&1)
like "$out" "n2, n3: no such directory" "a directory missing on some nodes is named as such"
out=$(te_srun -t 60 --mpi=pmix -N3 --train-checkpoint-dir=/proc/te-none \
	--train-failure-report=off true 2>&1)
like "$out" "checkpoint dir /proc/te-none: rank 0 \\(node n1\\) cannot write there" \
	"a directory rank 0 cannot write to is reported from rank 0"

# ---------------------------------------------------------------- versions
# Every node "has a GPU" (the test hook): each one's NCCL is compared
export TRAINENV_TEST_NVIDIACTL
TRAINENV_TEST_NVIDIACTL=$(gpu_nodes 3)
nccl=$(cluster_exec n1 "$PY" -c '
import ctypes
try:
    v = ctypes.c_int(); ctypes.CDLL("libnccl.so.2").ncclGetVersion(ctypes.byref(v))
    c = v.value; print("%d.%d.%d" % (c // 10000, c % 10000 // 100, c % 100) if c >= 20900 else "%d.%d.%d" % (c // 1000, c % 1000 // 100, c % 100))
except OSError:
    print("none")')
diag "NCCL on the nodes: $nccl"
out=$(TRAINENV_TEST_FAKE_NCCL_VERSION=n3:2.1.0 te_srun -t 60 --mpi=pmix -N3 \
	--ntasks-per-node=2 echo ran 2>&1)
ok $? "a version mismatch with version-check=warn (the default) lets the job run" || diag "$out"
is "$(count_lines "$out" 'version mismatch')" 1 "the mismatch is reported once, not once per rank"
like "$out" "^trainenv: warning: version mismatch: NCCL differs across nodes: $nccl on n1, n2; 2.1.0 on n3$" \
	"naming which nodes have which version"
is "$(count_lines "$out" '^ran$')" 6 "all six tasks ran"

out=$(TRAINENV_TEST_FAKE_NCCL_VERSION=n3:2.1.0 te_srun -t 60 --mpi=pmix -N3 \
	--ntasks-per-node=2 --train-version-check=fail --train-failure-report=off echo ran 2>&1)
rc=$?
[ $rc -ne 0 ] && ! printf '%s\n' "$out" | grep -q '^ran'
ok $? "version-check=fail: the step fails before the program starts"
is "$(count_lines "$out" 'version mismatch')" 1 "reported once"
like "$out" "^trainenv: error: version mismatch \\(version-check=fail\\): NCCL differs" \
	"as an error"

out=$(TRAINENV_TEST_FAKE_NCCL_VERSION=n3:2.1.0 te_srun -t 60 --mpi=pmix -N3 \
	--ntasks-per-node=2 --train-version-check=off true 2>&1)
is "$(count_lines "$out" 'version')" 0 "version-check=off: silent"

# Only a node with a GPU loads NCCL, and only those are compared: a
# libnccl.so.2 of our own in LD_LIBRARY_PATH says 2.28.3 on n2 and 2.21.1
# elsewhere. With n2 and n3 given "a GPU", they differ and n1 is not named;
# with no GPU anywhere nothing is loaded (or n2 and n3 would differ); a
# GPU on n2 alone has nothing to differ from.
unset TRAINENV_TEST_NVIDIACTL
mkdir -p "$TE_WORK/fakenccl"
cat >"$TE_WORK/fakenccl/nccl.c" <<'EOF'
#include <string.h>
#include <unistd.h>
int ncclGetVersion(int *v)
{
	char h[64] = "";

	gethostname(h, sizeof(h) - 1);
	*v = strcmp(h, "n2") ? 22101 : 22803;
	return 0;
}
EOF
cc -shared -fPIC -o "$TE_WORK/fakenccl/libnccl.so.2" "$TE_WORK/fakenccl/nccl.c"
ok $? "a libnccl.so.2 of our own is built"
if cluster_exec n1 test -e /dev/nvidiactl || cluster_exec n1 test -e /proc/driver/nvidia/gpus; then
	skip "this machine has an NVIDIA GPU: every node probes its NCCL" 6
else
	out=$(LD_LIBRARY_PATH=$TE_WORK/fakenccl TRAINENV_TEST_NVIDIACTL=n2:/dev/null,n3:/dev/null \
		te_srun -t 60 --mpi=pmix -N3 --ntasks-per-node=2 echo ran 2>&1)
	like "$out" "^trainenv: warning: version mismatch: NCCL differs across nodes: 2\\.28\\.3 on n2; 2\\.21\\.1 on n3(;|$)" \
		"the nodes with a GPU read the NCCL the job would load; n1, without one, is left out"
	is "$(count_lines "$out" '^ran$')" 6 "all six tasks ran"
	out=$(LD_LIBRARY_PATH=$TE_WORK/fakenccl te_srun -t 60 --mpi=pmix -N3 \
		--ntasks-per-node=2 echo ran 2>&1)
	ok $? "without a GPU the step runs" || diag "$out"
	is "$(count_lines "$out" 'version mismatch')" 0 \
		"and no node loads NCCL: nothing differs"
	out=$(LD_LIBRARY_PATH=$TE_WORK/fakenccl TRAINENV_TEST_NVIDIACTL=n2:/dev/null \
		te_srun -t 60 --mpi=pmix -N3 --ntasks-per-node=2 --train-version-check=fail \
		echo ran 2>&1)
	is "$(count_lines "$out" '^ran$')" 6 \
		"GPU and CPU-only nodes of one image: no mismatch, even with version-check=fail" ||
		diag "$out"
	# GPUs given by Slurm (CUDA_VISIBLE_DEVICES here) count, driver or not
	out=$(LD_LIBRARY_PATH=$TE_WORK/fakenccl CUDA_VISIBLE_DEVICES=0 te_srun -t 60 \
		--mpi=pmix -N3 --ntasks-per-node=2 echo ran 2>&1)
	like "$out" "^trainenv: warning: version mismatch: NCCL differs across nodes: 2\\.21\\.1 on n1, n3; 2\\.28\\.3 on n2(;|$)" \
		"a node the step was given a GPU on is probed even without NVIDIA's driver"
fi

set_plugstack "required $plugin helper-dir=$builddir"
out=$(TRAINENV_TEST_NVIDIACTL=$(gpu_nodes 3) TRAINENV_TEST_FAKE_NCCL_VERSION=n3:2.1.0 te_srun -t 60 --mpi=pmix -N3 \
	--ntasks-per-node=2 true 2>&1)
is "$(count_lines "$out" 'version mismatch')" 0 "the test hooks are ignored unless the site policy says test-hooks=on"

done_testing
