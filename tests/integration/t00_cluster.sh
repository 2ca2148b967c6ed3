#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Integration test of the cluster harness itself: the nodes are separate
# hosts as far as the tasks can tell (names, /tmp, network), storage under
# TE_SHARED is shared, PMIx works across nodes, batch jobs work, and a
# rewrite of plugstack.conf reaches the next step.
# Runs standalone (starts and stops its own cluster) or against the cluster
# in $TE_CLUSTER_DIR.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"

plan 34

cluster_up --nodes 3
ok $? "cluster is up" || bail_out "no cluster, nothing else can run"
diag "cluster dir: $TE_CLUSTER_DIR"
wait_nodes_idle 30
ok $? "every node is idle"

nodes=$(sinfo -h -N -o '%N %T' | sort | tr '\n' ' ')
like "$nodes" '^n1 idle n2 idle n3 idle' "sinfo lists n1 n2 n3 idle"

# ---------------------------------------------------------------- hosts
out=$(te_srun -t 60 -N3 hostname | sort | tr '\n' ' ')
is "$out" "n1 n2 n3 " "srun -N3 hostname prints n1 n2 n3"

out=$(for n in n1 n2 n3; do cluster_exec "$n" hostname; done | tr '\n' ' ')
is "$out" "n1 n2 n3 " "cluster.sh exec runs in each node's UTS namespace"

# trainenv's task_init runs as the job's user: jobs of other users must work.
out=$(timeout 60 setpriv --reuid=nobody --regid=nogroup --clear-groups \
	srun -N3 id -un 2>&1 | tr '\n' ' ')
is "$out" "nobody nobody nobody " "an unprivileged user (nobody) runs a 3-node step"

# Node-local /tmp: written on n1, seen again on n1, not seen on n2.
probe=/tmp/te-t00-probe.$$
te_srun -t 60 -w n1 -N1 sh -c "echo from-n1 > $probe"
# srun says "job N queued and waiting for resources" when n1 is still
# completing the step before (slurmctld then starts it on its next 1 s
# loop): seen with 22.05 and 24.11, not what is checked here.
out=$(te_srun -t 60 -w n1 -N1 cat "$probe" 2>&1 |
	grep -v '^srun: job [0-9]* \(queued and waiting for resources\|has been allocated resources\)$')
is "$out" "from-n1" "a file in /tmp on n1 stays there for the next step"
te_on_exit "cluster_exec n1 rm -f $probe"
te_srun -t 60 -w n2 -N1 test ! -e "$probe"
ok $? "n2 does not see n1's /tmp file (private /tmp per node)"
[ ! -e "$probe" ]
ok $? "the root namespace does not see n1's /tmp file either"

# Nothing a node reads may come from the checkout (private /tmp, mode-700
# homes on real clusters): the harness hides it from the nodes, and the
# plugin, helpers and scripts the tests use are a staged copy that every
# user can read (tests/lib/stage.sh).
checkout=${TE_REAL_SRCDIR:-$(cd "$here/../.." && pwd -P)}
cluster_exec n1 test ! -e "$checkout/tests/integration/t00_cluster.sh"
ok $? "node n1 does not see the checkout ($checkout)"
out=$(te_srun -t 60 -Q -N3 sh -c "test -e '$checkout/configure.ac' && echo sees-checkout; hostname" 2>&1 | sort | tr '\n' ' ')
is "$out" "n1 n2 n3 " "no task on any node sees the checkout"
if [ -n "${TE_STAGE:-}" ]; then
	case $TE_STAGE/ in "$checkout"/* | /tmp/*) false ;; esac
	ok $? "the build is staged outside the checkout and /tmp ($TE_STAGE)"
	out=$(timeout 60 setpriv --reuid=nobody --regid=nogroup --clear-groups \
		srun -Q -N3 sh -c "test -r '$TE_BUILDDIR/.libs/trainenv.so' && test -x '$TE_BUILDDIR/trainenv' && test -r '$TE_SRCDIR/etc/examples/ddp_gloo.py' && echo readable" 2>&1 | tr '\n' ' ')
	is "$out" "readable readable readable " "user nobody reads the staged plugin, tool and examples on every node"
else
	skip "nothing is built, so nothing was staged (build first to check the staged copy)" 2
fi

# Shared storage: the same path on every node.
te_srun -t 60 -w n1 -N1 sh -c "echo shared-from-n1 > $TE_WORK/shared-probe"
out=$(te_srun -t 60 -w n2,n3 -N2 cat "$TE_WORK/shared-probe" | tr '\n' ' ')
is "$out" "shared-from-n1 shared-from-n1 " "a file written on n1 under TE_SHARED is read on n2 and n3"

# ---------------------------------------------------------------- network
# Rank 0 on n1 listens on every address; rank 1 on n2 connects to "n1" by
# name (the node's hosts file). Both check that the peer address is not a
# loopback one. Each side has its own deadline.
cat >tcp_probe.py <<'EOF'
import os, socket, sys, time
rank = int(os.environ["SLURM_PROCID"])
port = 20000 + int(os.environ["SLURM_JOB_ID"]) % 20000
if rank == 0:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port)); s.listen(1); s.settimeout(30)
    c, peer = s.accept()
    c.sendall(socket.gethostname().encode())
    print("server %s accepted %s" % (socket.gethostname(), peer[0]))
    sys.exit(1 if peer[0].startswith("127.") else 0)
deadline = time.time() + 30
while True:
    try:
        c = socket.create_connection(("n1", port), timeout=5); break
    except OSError:
        if time.time() > deadline: raise
        time.sleep(0.1)
name = c.recv(100).decode()
print("client %s connected to %s at %s" % (socket.gethostname(), name, c.getpeername()[0]))
sys.exit(1 if c.getpeername()[0].startswith("127.") else 0)
EOF
out=$(te_srun -t 60 -N2 -n2 --ntasks-per-node=1 -w n1,n2 /usr/bin/python3 tcp_probe.py 2>&1)
rc=$?
ok $rc "TCP from n2 to n1 by host name, not over loopback" || diag "$out"
like "$out" "client n2 connected to n1 at $TE_CLUSTER_NET\\.11" "the client reached n1's own address"

out=$(te_srun -t 60 -N3 sh -c 'ip route show default | wc -l' | tr '\n' ' ')
is "$out" "0 0 0 " "no node has a default route"
out=$(te_srun -t 60 -N3 sh -c 'ip route get 192.0.2.1 >/dev/null 2>&1 && echo routable || echo unreachable' | tr '\n' ' ')
is "$out" "unreachable unreachable unreachable " "no node can route to an address outside the cluster subnet"

# ---------------------------------------------------------------- PMIx
# A Slurm built without PMIx has no mpi/pmix plugin (Debian's 26.05.5-1
# dropped it: #1149781): its checks are skipped, with the reason, only
# when srun lists its MPI plugins and pmix is not among them
# (tests/lib/itest.sh's te_no_mpi_pmix, which every test that needs
# mpi/pmix asks).
if ! te_no_mpi_pmix; then
	out=$(te_srun -t 60 --mpi=pmix -N3 -n3 printenv PMIX_RANK 2>&1 | sort | tr '\n' ' ')
	is "$out" "0 1 2 " "srun --mpi=pmix gives every task a PMIx rank"

	te_seconds te_srun -t 60 --mpi=pmix -N3 --ntasks-per-node=2 true
	ok $? "a 6-task PMIx step over 3 nodes completes"
	diag "6-task PMIx step (srun --mpi=pmix -N3 -n6 true): $TE_SECONDS s"

	cat >allreduce.py <<'EOF'
import socket
from mpi4py import MPI
comm = MPI.COMM_WORLD
total = comm.allreduce(comm.Get_rank() + 1)
print("%d %d %s %d" % (comm.Get_rank(), comm.Get_size(), socket.gethostname(), total))
EOF
	# shellcheck disable=SC2016
	te_seconds eval 'out=$(te_srun -t 120 --mpi=pmix -N3 --ntasks-per-node=2 /usr/bin/python3 allreduce.py 2>&1)'
	rc=$?
	ok $rc "mpi4py over srun --mpi=pmix -N3 -n6 (Open MPI, a real PMIx client)" || diag "$out"
	diag "6-task PMIx step (mpi4py allreduce, python start included): $TE_SECONDS s"
	sums=$(printf '%s\n' "$out" | awk '$2 == 6 && $4 == 21' | wc -l)
	hosts=$(printf '%s\n' "$out" | awk '$2 == 6 && $4 == 21 { print $3 }' | sort -u | tr '\n' ' ')
	is "$sums" 6 "all six ranks computed the allreduce sum 21"
	is "$hosts" "n1 n2 n3 " "the ranks ran on three nodes"
else
	skip "$TE_WHY" 5
fi

# ---------------------------------------------------------------- batch
te_sbatch_wait -t 120 -N3 -o "$TE_WORK/batch.out" --wrap 'srun hostname' >/dev/null
ok $? "sbatch --wait runs a 3-node batch job"
out=$(sort "$TE_WORK/batch.out" 2>/dev/null | tr '\n' ' ')
is "$out" "n1 n2 n3 " "the batch job's step ran on n1 n2 n3"
te_sbatch_wait -t 120 -N1 -o /dev/null --wrap 'exit 3' >/dev/null
is "$?" 3 "sbatch --wait returns the job's exit status"

# ---------------------------------------------------------------- plugstack
cc -Wall -Werror -shared -fPIC -o "$TE_WORK/spank_probe.so" "$here/spank_probe.c" 2>&1 | sed 's/^/# /'
ok "${PIPESTATUS[0]}" "the SPANK probe plugin compiles against Slurm's spank.h"
set_plugstack "required $TE_WORK/spank_probe.so value=alpha"
out=$(te_srun -t 60 -N3 printenv TE_SPANK_PROBE 2>&1 | tr '\n' ' ')
is "$out" "alpha alpha alpha " "a plugin added to plugstack.conf runs in the next step's tasks"
set_plugstack "required $TE_WORK/spank_probe.so value=beta"
out=$(te_srun -t 60 -N3 printenv TE_SPANK_PROBE 2>&1 | tr '\n' ' ')
is "$out" "beta beta beta " "a rewrite of plugstack.conf is seen by the next step"
set_plugstack
out=$(te_srun -t 60 -N3 sh -c 'printenv TE_SPANK_PROBE || echo unset' 2>&1 | tr '\n' ' ')
is "$out" "unset unset unset " "an emptied plugstack.conf loads no plugin"

# ---------------------------------------------------------------- node restart
# What failure tests do: stop a node's slurmd, start it again.
"$TE_CLUSTER_SH" slurmd --dir "$TE_CLUSTER_DIR" n3 stop &&
	"$TE_CLUSTER_SH" slurmd --dir "$TE_CLUSTER_DIR" n3 start >/dev/null
ok $? "cluster.sh slurmd n3 stop, then start"
out=$(te_srun -t 60 -w n3 -N1 hostname 2>&1)
is "$out" "n3" "n3 runs steps again after its slurmd restarted"

# ---------------------------------------------------------------- scale, deadlines
te_seconds te_srun -t 120 -N3 -n24 true
ok $? "a 24-task step over 3 nodes completes"
diag "24-task step (srun -N3 -n24 true): $TE_SECONDS s"

te_seconds te_srun -t 3 -N1 sleep 60 2>/dev/null
rc=$?
is "$rc" 124 "te_srun stops a step that outlives its deadline (exit 124)"
diag "3 s deadline hit after $TE_SECONDS s"

done_testing
