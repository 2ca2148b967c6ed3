#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 34 on the real cluster: trainenv health --drain, as Slurm's
# HealthCheckProgram runs it, on each node (cluster_exec, as root) over a
# stand-in sysfs tree (--sysfs-root: an admin's option, never the job's
# environment) with an InfiniBand port DOWN or not. A failing node drains
# itself with reason 'trainenv: ib mlx5_0 port 1 state DOWN (want
# ACTIVE)', a clean one does not; when every node fails, the cap (default
# 10% of 3 nodes: 1 per hour) holds; an admin's drain keeps its reason;
# a healthy check never resumes a node; health_drain=off drains nothing;
# a job then runs without the drained node. The test resumes the nodes
# it drained at its end (trainenv never does).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"

plan 21

te_build_init
cluster_up --nodes 3 || bail_out "no cluster"
ok 0 "cluster is up, tool $TE_TOOL"

resume_all() { resume_nodes n1 n2 n3; }
te_on_exit resume_all
wait_nodes_idle 30
ok $? "every node idle at the start"

# shellcheck source-path=SCRIPTDIR source=../lib/sysfs_standin.sh
. "$here/../lib/sysfs_standin.sh"
sysfs_ib_port "$TE_WORK/good" mlx5_0 1 "4: ACTIVE"
sysfs_ib_port "$TE_WORK/bad" mlx5_0 1 "1: DOWN"
chmod -R a+rX "$TE_WORK/good" "$TE_WORK/bad"
reason="trainenv: ib mlx5_0 port 1 state DOWN (want ACTIVE)"
reason_re="trainenv: ib mlx5_0 port 1 state DOWN \(want ACTIVE\)"

# trainenv health --drain on NODE over TREE: output in out, status in rc.
health() { # NODE TREE ARGS...
	local node=$1 tree=$2
	shift 2
	out=$(cluster_exec "$node" timeout 60 "$TE_TOOL" health --drain \
		--sysfs-root "$TE_WORK/$tree" health=ib "$@" 2>&1)
	rc=$?
}

health n1 good
is "$rc" 0 "a clean node: exit 0" || diag "$out"
is "$(node_is n1)" "idle|none" "... and it is not drained"

health n2 bad
is "$rc" 1 "n2 with its IB port DOWN: exit 1" || diag "$out"
like "$out" "trainenv health: draining n2: $reason_re" "... saying it drains n2 (named by its host name)"
is "$(node_is n2)" "drained|$reason" "... n2 is drained with the trainenv reason"

# Every node now fails: the default cap (10% of 3 nodes, at least 1, per
# 3600 s) is reached by n2's drain.
health n1 bad
is "$rc" 1 "n1 fails too: exit 1" || diag "$out"
like "$out" "n1 not drained: the cap is reached: 1 node drained by trainenv in the last 3600 s \(health_drain_max=10%: 1 of 3 nodes\)" \
	"... the cap holds: one line naming it"
health n3 bad
is "$(node_is n1),$(node_is n3)" "idle|none,idle|none" "every node failing: n1 and n3 stay in service (the cap: 1 node)"

health n1 bad health_drain=off
like "$out" "n1 not drained: draining is off \(health_drain=off\)" "health_drain=off: n1 not drained, one line naming the switch"
is "$(node_is n1)" "idle|none" "... n1 is in service"

health n2 good
is "$rc" 0 "n2's check passing again: exit 0" || diag "$out"
is "$(node_is n2)" "drained|$reason" "... n2 stays drained: trainenv never resumes"

# An admin's drain of n3: kept, whatever the cap.
timeout 10 scontrol update NodeName=n3 State=DRAIN Reason="admin: bad DIMM, ticket 4711"
health n3 bad health_drain_max=3
is "$rc" 1 "an admin-drained n3 failing: exit 1" || diag "$out"
like "$out" "n3 not drained: it is drained with another reason \('admin: bad DIMM, ticket 4711'\), left as it is" \
	"... one line saying the admin's reason is kept"
is "$(node_is n3)" "drained|admin: bad DIMM, ticket 4711" "... the admin's reason is unchanged"
timeout 10 scontrol update NodeName=n3 State=RESUME

# A higher cap lets a second node drain.
health n3 bad health_drain_max=2
like "$out" "draining n3: $reason_re" "health_drain_max=2: a second node (n3) drains"
is "$(node_is n3)" "drained|$reason" "... n3 is drained with the trainenv reason"
timeout 10 scontrol update NodeName=n3 State=RESUME

# A job after n2's drain runs on the other nodes (once n3, just resumed,
# answers again).
for _ in $(seq 1 150); do
	[ "$(timeout 10 sinfo -h -n n1,n3 -N -o '%T' | sort -u)" = idle ] && break
	sleep 0.2
done
out=$(te_srun -t 60 -N2 hostname 2>"$TE_WORK/srun.err")
is "$(printf '%s\n' "$out" | sort | tr '\n' ' ')" "n1 n3 " "a 2-node job runs without the drained n2" || diag "$out" "$(cat "$TE_WORK/srun.err")"
out=$(te_srun -t 20 -N3 --immediate=5 hostname 2>&1)
[ $? -ne 0 ]
ok $? "... and a 3-node job does not get n2 (it cannot start)" || diag "$out"
done_testing
