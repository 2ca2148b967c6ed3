#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# PMIx layer, compatibility and the application barrier: with the plugin
# fully on (rendezvous, barrier, checks) the application is still a PMIx /
# MPI program: mpi4py and C MPI (Open MPI) run MPI_Init, an allreduce and
# MPI_Finalize; `trainenv barrier`, trainenv.barrier() (Python) and
# trainenv_barrier() (libtrainenv) run before and after MPI_Init; an
# application barrier that a rank skips fails on the others with the
# report; without PMIx it says how to fix it; make install puts the Python
# module into the prefix's site directory.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/pmix_common.sh
. "$here/../lib/pmix_common.sh"

# A test of the PMIx layer: its steps run under srun --mpi=pmix.
te_require_mpi_pmix

plan 17

cluster_up --nodes 3
ok $? "cluster is up" || bail_out "no cluster"
te_build_init
pmix_plugstack
mkdir -p "$TE_WORK/ckpt"
full=(--mpi=pmix -N3 --ntasks-per-node=2 --train-barrier=30 --train-version-check=warn
      --train-socket-ifname=yes --train-checkpoint-dir="$TE_WORK/ckpt")
# The Python module from the source tree, libtrainenv from the build tree.
export PYTHONPATH=$srcdir/python TRAINENV_LIBRARY=$libtrainenv TRAINENV_BIN=$tool

# ---------------------------------------------------------------- mpi4py
cat >allreduce.py <<'PY'
import socket
from mpi4py import MPI
c = MPI.COMM_WORLD
print("%d %d %s %d" % (c.rank, c.size, socket.gethostname(), c.allreduce(c.rank + 1)), flush=True)
MPI.Finalize()
PY
out=$(te_srun -t 90 "${full[@]}" "$PY" allreduce.py 2>&1)
ok $? "mpi4py (Open MPI) runs under the plugin fully on" || diag "$out"
is "$(printf '%s\n' "$out" | awk '$2 == 6 && $4 == 21' | wc -l)" 6 \
	"MPI_Init, allreduce (sum 21 on all six ranks), MPI_Finalize"

# ---------------------------------------------------------------- C MPI + libtrainenv + tool
cat >cmpi.c <<'C'
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <trainenv/trainenv.h>

static int bar(const char *when)
{
	char err[TRAINENV_ERR_MAX];

	if (trainenv_barrier(20, err, sizeof(err)) == 0)
		return 0;
	fprintf(stderr, "barrier %s MPI_Init: %s\n", when, err);
	return 1;
}

int main(int argc, char **argv)
{
	int rank, size, sum = 0, one;
	char cmd[1024];

	if (bar("before"))
		return 1;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (bar("after"))
		MPI_Abort(MPI_COMM_WORLD, 1);
	/* the command: another PMIx client of this rank, next to MPI's */
	snprintf(cmd, sizeof(cmd), "%s barrier --timeout 20", getenv("TRAINENV_BIN"));
	if (system(cmd) != 0)
		MPI_Abort(MPI_COMM_WORLD, 2);
	one = rank + 1;
	MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	printf("%d %d %d\n", rank, size, sum);
	MPI_Finalize();
	return 0;
}
C
mpicc -Wall -Werror -I"$srcdir/include" -o cmpi cmpi.c -L"$builddir/.libs" -ltrainenv \
	-Wl,-rpath,"$builddir/.libs" 2>&1 | sed 's/^/# /'
ok "${PIPESTATUS[0]}" "a C MPI program links libtrainenv (include/trainenv/trainenv.h)"
# Not after the MPI program has ended: a fence started while Open MPI's
# last fence (in MPI_Finalize) is still settling in Slurm's PMIx server can
# be paired with it (docs/pmix.md: call the barrier before MPI_Finalize).
out=$(te_srun -t 90 "${full[@]}" bash -c '"$TRAINENV_BIN" barrier --timeout 20 && ./cmpi' 2>&1)
ok $? "C MPI with trainenv_barrier() and 'trainenv barrier' before and after MPI_Init" || diag "$out"
is "$(printf '%s\n' "$out" | awk '$2 == 6 && $3 == 21' | wc -l)" 6 "the allreduce is right on all six ranks"

# ---------------------------------------------------------------- Python module
cat >pybar.py <<'PY'
import os, socket, sys
import trainenv
trainenv.barrier(timeout=20)              # before MPI_Init
from mpi4py import MPI
c = MPI.COMM_WORLD
s = c.allreduce(c.rank + 1)
trainenv.barrier(timeout=20)              # after MPI_Init
s2 = c.allreduce(1)
print("%d %d %s %d %d" % (c.rank, c.size, socket.gethostname(), s, s2), flush=True)
trainenv.barrier()                        # the default timeout
MPI.Finalize()
PY
out=$(te_srun -t 90 "${full[@]}" "$PY" pybar.py 2>&1)
ok $? "trainenv.barrier() from Python before and after MPI_Init" ||
	diag "$out"
is "$(printf '%s\n' "$out" | awk '$2 == 6 && $4 == 21 && $5 == 6' | wc -l)" 6 \
	"and MPI works in between on all six ranks"

# A rank that skips the application barrier: the others fail with the report.
cat >skip.py <<'PY'
import os, sys, time
import trainenv
if os.environ["SLURM_PROCID"] == "3":
    time.sleep(6)
    sys.exit(0)
t0 = time.time()
try:
    trainenv.barrier(timeout=4)
    print("passed")
except trainenv.BarrierError as e:
    print("after %.1f s: %s" % (time.time() - t0, e), flush=True)
    sys.exit(1)
PY
out=$(te_srun -t 60 --mpi=pmix -N3 --ntasks-per-node=2 --train-failure-report=off "$PY" skip.py 2>&1)
is "$(count_lines "$out" '^after [4-7]\.[0-9] s: barrier timed out after 4 s: 5 of 6 ranks arrived; missing: rank 3 \(node n2\)$')" 5 \
	"an application barrier rank 3 skips: the 5 others raise BarrierError naming rank 3 on n2, in time" ||
	diag "$out"

out=$(te_srun -t 60 -N1 --mpi=none "$PY" -c '
import trainenv
try:
    trainenv.barrier(timeout=5)
except trainenv.BarrierError as e:
    print(e)' 2>&1)
like "$out" "no PMIx server for this process: run the step with srun --mpi=pmix" \
	"without PMIx the application barrier says how to fix it"
out=$(te_srun -t 60 -N1 --mpi=none "$tool" barrier 2>&1)
like "$out" "^trainenv barrier: no PMIx server .* --mpi=pmix" "so does the command"
out=$(env TORCHELASTIC_RUN_ID=x LOCAL_RANK=1 PMIX_RANK=0 PMIX_NAMESPACE=x "$PY" -c '
import trainenv
try:
    trainenv.barrier(timeout=5)
except trainenv.BarrierError as e:
    print(e)' 2>&1)
like "$out" "torchrun worker with LOCAL_RANK=1: .* only LOCAL_RANK 0 may join" \
	"a torchrun worker other than LOCAL_RANK 0 is told why it cannot join"
out=$("$tool" barrier --timeout 0 2>&1)
is "$?" 2 "trainenv barrier --timeout 0 is a usage error"

# ---------------------------------------------------------------- install
inst=$TE_WORK/inst
# a make of its own, not the one running make check
# the real build tree: the staged copy (TE_BUILDDIR) has no source beside it
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -s -C "${TE_REAL_BUILDDIR:-$builddir}" "$@"; }
mk install DESTDIR="$inst" >"$TE_WORK/install.log" 2>&1
ok $? "make install DESTDIR=... works" || diag "$(tail -20 "$TE_WORK/install.log")"
init=$(find "$inst" -path '*/trainenv/__init__.py' | head -1)
makevar() { printf 'print-var:\n\t@echo $(%s)\n' "$1" | mk -f Makefile -f - print-var; }
pythondir=$(makevar pythondir)
prefix=$(makevar prefix)
is "${init#"$inst"}" "$pythondir/trainenv/__init__.py" \
	"the Python module goes into the prefix's Python site directory ($pythondir)"
libdir=$(makevar libdir)
out=$(env -u PYTHONPATH -u TRAINENV_LIBRARY PYTHONPATH="$(dirname "$(dirname "$init")")" "$PY" -c '
import trainenv, trainenv._paths as p; print(p.LIBTRAINENV)')
is "$out" "$libdir/libtrainenv.so.0" "the installed module knows where libtrainenv is installed"
[ -e "$inst$libdir/libtrainenv.so.0" ] && [ -e "$inst$prefix/include/trainenv/trainenv.h" ] &&
	[ -x "$inst$(makevar libexecdir)/trainenv/trainenv-rdzv" ]
ok $? "libtrainenv, its header and the helper are installed"

done_testing
