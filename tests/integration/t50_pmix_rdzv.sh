#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# PMIx layer, launch rendezvous: under srun --mpi=pmix every task gets rank
# 0's host address and a MASTER_PORT rank 0 verified free in the port
# range (probing past busy ports), optionally the interface that carries
# the route to it; PMIX_MCA_gds=hash for later PMIx clients; user values
# win; torchrun mode gets PET_*. Without PMIx the computed rendezvous is
# used and srun says once that the barrier cannot run. The plugin never
# links libpmix.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/pmix_common.sh
. "$here/../lib/pmix_common.sh"

# A test of the PMIx layer: its steps run under srun --mpi=pmix.
te_require_mpi_pmix

plan 39

cluster_up --nodes 3
ok $? "cluster is up" || bail_out "no cluster"
te_build_init

# ---------------------------------------------------------------- build facts
out=$(ldd "$plugin" 2>&1)
! printf '%s\n' "$out" | grep -qi pmix
ok $? "the plugin does not link libpmix (no PMIx client code in slurmstepd)" || diag "$out"
is "$(head -c 4 "$helper" | od -An -c | tr -d ' ')" '177ELF' \
	"the build tree's trainenv-rdzv is the real program, not a libtool wrapper"
ldd "$helper" | grep -q libpmix
ok $? "the helper links libpmix"

pmix_plugstack
# ---------------------------------------------------------------- rendezvous
show='echo "$SLURM_PROCID $(hostname) $MASTER_ADDR $MASTER_PORT ${PMIX_MCA_gds:-unset}"'
out=$(te_srun -t 60 -Q --mpi=pmix -N3 --ntasks-per-node=2 bash -c "$show" 2>&1)
ok $? "a 6-task PMIx step with the rendezvous runs" || diag "$out"
is "$(printf '%s\n' "$out" | awk '{ print $3, $4 }' | sort -u | wc -l)" 1 \
	"every rank has the same MASTER_ADDR and MASTER_PORT"
rank0_host=$(printf '%s\n' "$out" | awk '$1 == 0 { print $2 }')
addr=$(printf '%s\n' "$out" | awk '$1 == 0 { print $3 }')
port=$(printf '%s\n' "$out" | awk '$1 == 0 { print $4 }')
is "$addr" "$(node_addr "$rank0_host")" "MASTER_ADDR is the address of rank 0's host ($rank0_host)"
[ "$port" -ge 20000 ] && [ "$port" -le 29999 ]
ok $? "MASTER_PORT $port is in the default port range 20000-29999"
is "$(printf '%s\n' "$out" | awk '{ print $5 }' | sort -u)" hash \
	"PMIX_MCA_gds=hash for the application's PMIx client"
[ "$(printf '%s\n' "$out" | awk '{ print $2 }' | sort -u | wc -l)" -eq 3 ]
ok $? "the ranks ran on three nodes"

is "$(count_lines "$out" "PMIx directory.*is not private")" 0 \
	"a private PMIx directory (Debian's Slurm): no note about it"

# Slurm before 22.05.10 and 23.02.6 made the step's PMIx directory 0770
# (CVE-2023-41914): a SPANK plugin ahead of trainenv gives it that mode.
# The node's tasks then each run a helper, and rank 0 says so once.
cc -Wall -Werror -shared -fPIC -o "$TE_WORK/spank_probe.so" "$here/spank_probe.c" 2>&1 | sed 's/^/# /'
set_plugstack "required $TE_WORK/spank_probe.so pmix-dir-mode=0770" \
	"required $plugin helper-dir=$builddir test-hooks=on"
out=$(te_srun -t 60 -Q --mpi=pmix -N3 --ntasks-per-node=2 bash -c "$show" 2>&1)
ok $? "a 6-task step whose PMIx directories are 0770 runs" || diag "$out"
is "$(count_lines "$out" '^trainenv: note: this step.s PMIx directory \(PMIX_SERVER_TMPDIR, mode 0770, owner uid 0\) is not private to the job.s user.*every task runs its own launch helper')" 1 \
	"rank 0 says once that the PMIx directory is not private (mode 0770) and what follows" || diag "$out"
is "$(printf '%s\n' "$out" | grep -v '^trainenv:' | awk '{ print $3, $4 }' | sort -u | wc -l)" 1 \
	"every rank still has the same MASTER_ADDR and MASTER_PORT"
pmix_plugstack

# A busy port is skipped: with the range P..P+1 and P taken on rank 0's
# node, whichever port the job id points at, rank 0 must choose P+1.
P=$(( 24000 + RANDOM % 1000 * 2 ))
cluster_exec n1 "$PY" -c "
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('0.0.0.0', $P)); s.listen(1); open('$TE_WORK/busy', 'w').close(); time.sleep(25)" &
busy_pid=$!
for _ in $(seq 50); do [ -e "$TE_WORK/busy" ] && break; sleep 0.1; done
out=$(te_srun -t 60 -Q --mpi=pmix -N3 --ntasks-per-node=2 -w n1,n2,n3 \
	--train-port-range=$P-$((P + 1)) bash -c 'echo $MASTER_PORT' 2>&1)
is "$(printf '%s\n' "$out" | sort -u)" "$((P + 1))" \
	"port $P is busy on rank 0's node: every rank gets $((P + 1))"
cluster_exec n1 "$PY" -c "
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('0.0.0.0', $((P + 1)))); s.listen(1); open('$TE_WORK/busy2', 'w').close(); time.sleep(20)" &
busy2_pid=$!
for _ in $(seq 50); do [ -e "$TE_WORK/busy2" ] && break; sleep 0.1; done
out=$(te_srun -t 60 -Q --mpi=pmix -N3 --ntasks-per-node=2 -w n1,n2,n3 \
	--train-port-range=$P-$((P + 1)) --train-failure-report=off echo ran 2>&1)
rc=$?
[ $rc -ne 0 ] && ! printf '%s\n' "$out" | grep -q '^ran'
ok $? "both ports busy: the tasks fail instead of starting" || diag "$out"
like "$out" "no free port for MASTER_PORT in $P-$((P + 1)) on n1" \
	"and rank 0 says which range on which node"
kill "$busy_pid" "$busy2_pid" 2>/dev/null
wait "$busy_pid" "$busy2_pid" 2>/dev/null

# ---------------------------------------------------------------- interface
# The route's device, or on rank 0's node (route via lo) the device that
# holds MASTER_ADDR.
cat >route_dev.sh <<'SH'
dev=$(ip -o route get "$MASTER_ADDR" | grep -o "dev [^ ]*" | cut -d" " -f2)
[ "$dev" = lo ] && dev=$(ip -o -4 addr | awk -v a="$MASTER_ADDR" 'index($4, a "/") == 1 { print $2 }')
echo "$NCCL_SOCKET_IFNAME $GLOO_SOCKET_IFNAME $dev"
SH
out=$(te_srun -t 60 -Q --mpi=pmix -N3 --ntasks-per-node=2 --train-socket-ifname=yes bash route_dev.sh 2>&1)
is "$(printf '%s\n' "$out" | sort -u)" "eth0 eth0 eth0" \
	"--train-socket-ifname=yes: NCCL/GLOO_SOCKET_IFNAME name each node's interface that carries MASTER_ADDR's route"
out=$(te_srun -t 60 -Q --mpi=pmix -N3 bash -c 'echo ${NCCL_SOCKET_IFNAME:-unset}' 2>&1 | sort -u)
is "$out" unset "socket-ifname defaults to no"

# ---------------------------------------------------------------- user values win
out=$(MASTER_PORT=12345 PMIX_MCA_gds=^ds12 te_srun -t 60 --mpi=pmix -N2 -n2 \
	bash -c 'echo $MASTER_PORT $PMIX_MCA_gds' 2>&1 | sort -u)
is "$out" "12345 ^ds12" "a MASTER_PORT or PMIX_MCA_gds the user set is kept"
out=$(te_srun -t 60 -Q --mpi=pmix -N3 -n3 --train-launcher=torchrun \
	bash -c 'echo $PET_MASTER_ADDR $PET_MASTER_PORT ${MASTER_ADDR:-none}' 2>&1 | sort -u)
like "$out" "^$addr [0-9]+ none$" "torchrun mode: PET_MASTER_ADDR/PORT from the rendezvous, no MASTER_*"
out=$(te_srun -t 60 --mpi=pmix -N2 -n2 --train-rank-env=no \
	bash -c 'echo ${MASTER_ADDR:-none} ${PMIX_MCA_gds:-unset}' 2>&1 | sort -u)
is "$out" "none hash" "--train-rank-env=no: the rendezvous runs, nothing is exported"

# ---------------------------------------------------------------- explain, policy
out=$(te_srun -t 60 --mpi=pmix -N1 --train-explain --train-barrier=30 true 2>&1)
like "$out" 'barrier +=  *30 +\(option' "--train-explain shows barrier"
like "$out" 'rdzv +=  *auto +\(built-in' "--train-explain shows rdzv"
like "$out" 'version-check += +warn' "--train-explain shows version-check"
like "$out" "helper-dir += +$builddir" "--train-explain shows the site's helper-dir"
out=$(te_srun -t 30 --mpi=pmix -N1 --train-helper-dir=/tmp true 2>&1)
[ $? -ne 0 ]
ok $? "helper-dir is not a user option" || diag "$out"
out=$(te_srun -t 30 --mpi=pmix -N1 --train-barrier=soon true 2>&1)
like "$out" "train-barrier: invalid value 'soon'; accepted: 1 to 604800 seconds, or off" \
	"a bad --train-barrier is refused with what is accepted"

set_plugstack "required $plugin helper-dir=/nonexistent"
t0=$(date +%s)
out=$(te_srun -t 60 --mpi=pmix -N2 -n2 --train-failure-report=off echo ran 2>&1)
rc=$?
[ $rc -ne 0 ] && ! printf '%s\n' "$out" | grep -q '^ran' && [ $(( $(date +%s) - t0 )) -lt 20 ]
ok $? "a missing helper fails the tasks at once" || diag "$out"
like "$out" "rendezvous helper /nonexistent/trainenv-rdzv: No such file" \
	"and says which file is missing"
out=$(te_srun -t 60 --mpi=pmix -N2 -n2 --train-rdzv=computed bash -c 'echo ${PMIX_MCA_gds:-unset} $MASTER_PORT' 2>&1 | sort -u)
like "$out" "^unset [0-9]+$" "--train-rdzv=computed skips the helper (and gds=hash)"
pmix_plugstack

# ---------------------------------------------------------------- no PMIx
out=$(te_srun -t 60 -N3 --ntasks-per-node=2 --train-barrier=30 --mpi=none \
	bash -c 'echo "$SLURM_PROCID $MASTER_ADDR $MASTER_PORT ${PMIX_RANK:-nopmix}"' 2>&1)
ok $? "without PMIx the job still runs"
is "$(count_lines "$out" 'barrier is unavailable')" 1 "srun says once that the barrier is unavailable"
like "$out" "barrier is unavailable.*--train-barrier=30 cannot run.*Fix: srun --mpi=pmix" \
	"... naming the option and the fix"
is "$(printf '%s\n' "$out" | grep nopmix | awk '{ print $2, $3 }' | sort -u | wc -l)" 1 \
	"every task has the same computed MASTER_ADDR/MASTER_PORT"
like "$(printf '%s\n' "$out" | grep nopmix | head -1)" " $(node_addr n1) " \
	"the computed MASTER_ADDR is the first node's address"
out=$(te_srun -t 30 -N1 --mpi=none --train-rdzv=pmix echo ran 2>&1)
rc=$?
[ $rc -ne 0 ] && ! printf '%s\n' "$out" | grep -q '^ran'
ok $? "--train-rdzv=pmix without PMIx fails in srun, before launch"
like "$out" "needs PMIx.*srun --mpi=pmix" "saying how to fix it"

# ---------------------------------------------------------------- other user
out=$(timeout 60 setpriv --reuid=nobody --regid=nogroup --clear-groups \
	srun --mpi=pmix -N3 --ntasks-per-node=2 --train-barrier=30 bash -c 'echo $(id -un) $MASTER_ADDR $MASTER_PORT' 2>"$TE_WORK/nobody.err")
is "$(printf '%s\n' "$out" | sort | uniq -c | awk '{ print $1, $2 }')" "6 nobody" \
	"an unprivileged user's 6 ranks get one rendezvous (helper runs as the job user)" ||
	diag "$out" "$(cat "$TE_WORK/nobody.err")"

done_testing
