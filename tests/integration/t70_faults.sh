#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Fault injection on the real cluster (issue 7, item 3). Each fault has an
# expected clean outcome: one clear line, no wait past the configured
# deadline (plus a margin), no process of the step left on any node, no
# drained node, and the next step on the same nodes runs.
#   - a node dies during the launch barrier (its slurmd, slurmstepd and
#     tasks killed while the others wait);
#   - a task dies during the barrier: a late one before it arrives, a
#     waiting one after it arrived, a node's rendezvous helper after it
#     registered; a task cannot leave its arrival file;
#   - the rendezvous helper missing, not executable, a directory;
#   - the topology file a FIFO, a directory, unreadable even for root,
#     mode 000 (root reads it), a FIFO in the topology cache;
#   - the nodes' policy file a FIFO, unreadable even for root, failing
#     on read, behind a path through a file; mode 000 (root reads it);
#   - a job environment with 20,000 variables, 128 KiB values, junk in
#     every variable the plugin reads;
#   - two steps of one job launching at the same time;
#   - 20 back-to-back steps: no process, file, socket or descriptor left.
# Already proven elsewhere (docs/RELIABILITY.md): no PMIx server at all
# (t50), malformed topology (t30), bad/missing/huge/binary policy files
# (t11), bad option values (t10). Everything runs as root here, and root
# reads a mode-000 file: "unreadable" is tested with files root cannot
# read either (/proc/sys/vm/drop_caches opens with EACCES for root,
# /proc/self/mem fails on read) and with objects that are no files.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/pmix_common.sh
. "$here/../lib/pmix_common.sh"

# Every step here runs the PMIx launch (srun --mpi=pmix) whose faults
# this test injects.
te_require_mpi_pmix

plan 117

cluster_up --nodes 3 || bail_out "no cluster"
ok 0 "cluster is up"
te_build_init
nodes=(n1 n2 n3)
W="-w n[1-3]"
margin=4	# seconds past a deadline that still count as "at the deadline"

# ---------------------------------------------------------------- helpers
# What is left of job JOB's steps on every node (slurmstepd, tasks, helpers).
step_left() { # JOB
	local n
	for n in "${nodes[@]}"; do
		node_procs "$n" "[s]lurmstepd: \\[$1\\.|[t]rainenv-rdzv (--protocol [0-9]+ )?--job $1 " | sed "s/^/$n: /"
	done
}
# Prefixes each line with the time it was read.
stamp() { while IFS= read -r l; do printf '%s %s\n' "$(date +%s.%N)" "$l"; done; }
# Waits until FILE has at least N lines matching ERE (deadline SECS).
wait_lines() { # FILE ERE N SECS
	local end=$(( $(date +%s) + $4 ))
	while [ "$(grep -cE -- "$2" "$1" 2>/dev/null)" -lt "$3" ]; do
		[ "$(date +%s)" -ge "$end" ] && return 1
		sleep 0.1
	done
}
# Seconds from T0 to the last line matching ERE in a stamped FILE.
last_at() { # FILE ERE T0
	grep -E -- "$2" "$1" | tail -n 1 | awk -v t0="$3" '{ printf "%.1f", $1 - t0 }'
}
# Waits for a background pid (deadline SECS).
wait_pid() { # PID SECS
	local end=$(( $(date +%s) + $2 ))
	while kill -0 "$1" 2>/dev/null; do
		[ "$(date +%s)" -ge "$end" ] && return 1
		sleep 0.1
	done
	wait "$1" 2>/dev/null
	return 0
}
# The helper, the node's first task and its second task of job JOB on NODE
# ("HELPER LEADER FOLLOWER"), once the helper runs (deadline 10 s).
step_tasks() { # NODE JOB
	local end=$(( $(date +%s) + 10 )) h
	while :; do
		h=$(node_procs "$1" "[t]rainenv-rdzv (--protocol [0-9]+ )?--job $2 " | awk 'NR == 1 { print $1 }')
		[ -n "$h" ] && break
		[ "$(date +%s)" -ge "$end" ] && return 1
		sleep 0.1
	done
	# shellcheck disable=SC2016 # expanded inside the node
	cluster_exec "$1" bash -c 'lead=$(ps -o ppid= -p "$1" | tr -d " ")
		stepd=$(ps -o ppid= -p "$lead" | tr -d " ")
		fol=$(pgrep -P "$stepd" | grep -vx "$lead" | head -n 1)
		echo "$1 $lead $fol"' bash "$h"
}
# The running job started after ID (deadline 10 s).
new_job() { # ID
	local end=$(( $(date +%s) + 10 )) j
	while :; do
		j=$(te_jobs_after "$1" | awk '{ print $1 }')
		[ -n "$j" ] && { echo "$j"; return 0; }
		[ "$(date +%s)" -ge "$end" ] && return 1
		sleep 0.1
	done
}
# Every node idle, none drained, no reason set by anyone (deadline 30 s).
nodes_clean() { # WHAT
	local states
	wait_nodes_idle 30
	states=$(timeout 10 sinfo -h -N -o '%N %T %E' | sort -u)
	is "$(printf '%s\n' "$states" | awk '$2 != "idle" || $3 != "none"' | wc -l)" 0 \
		"$1: every node is idle, none drained, no reason set" || diag "$states"
}
crash_re='segfault|segmentation|core dump|dumped core|fatal|abort|assert|drain'

restart_slurmd_n3() {
	"$TE_CLUSTER_SH" slurmd --dir "$TE_CLUSTER_DIR" n3 start >/dev/null 2>&1
	true
}

pmix_plugstack
mapfile -t sizes0 < <(log_sizes)
# slurmstepd crashes reach only the kernel log (shared by every cluster on
# this machine: counted before and after)
segv0=$(dmesg 2>/dev/null | grep -c 'slurmstepd\[[0-9]*\]: segfault')

# ================================================================ a node dies in the barrier
# n3 starts 30 s late (test hook); while n1 and n2 wait at the 8 s
# barrier, n3's slurmd and everything of the step on n3 are killed.
t0=$(date +%s.%N)
before=$(te_last_job_id)
(TRAINENV_TEST_DELAY=n3:30 te_srun -t 120 --mpi=pmix -N3 --ntasks-per-node=2 $W \
	--train-barrier=8 --train-failure-report=off sh -c 'echo ran' 2>&1 | stamp >"$TE_WORK/node.out") &
srun_pid=$!
job=$(new_job "$before")
step_tasks n3 "$job" >/dev/null
ok $? "node death: the step (job ${job:-?}) runs and n3's helper waits out its delay"
te_on_exit restart_slurmd_n3
"$TE_CLUSTER_SH" slurmd --dir "$TE_CLUSTER_DIR" n3 kill
# shellcheck disable=SC2046
kill -KILL $(node_procs n3 "[s]lurmstepd: \\[$job\\.|[t]rainenv-rdzv (--protocol [0-9]+ )?--job $job " | awk '{ print $1 }') 2>/dev/null
is "$(step_left "$job" | grep -c '^n3:')" 0 "node death: n3's slurmd, slurmstepd, tasks and helper are gone"
re='^[0-9.]+ trainenv: error: barrier timed out after 8 s: 4 of 6 ranks arrived; missing: ranks 4-5 \(node n3\)$'
wait_lines "$TE_WORK/node.out" "$re" 4 $((8 + 15))
is "$(grep -cE "$re" "$TE_WORK/node.out")" 4 \
	"node death: the 4 waiting tasks on n1, n2 fail, each naming ranks 4-5 on n3 as missing" ||
	diag "$(cut -d' ' -f2- "$TE_WORK/node.out")"
secs=$(last_at "$TE_WORK/node.out" "$re" "$t0")
awk -v t="${secs:-99}" -v m=$margin 'BEGIN { exit !(t >= 8 && t < 8 + m) }'
ok $? "node death: they fail at the 8 s deadline (last one after ${secs:-?} s of the step)"
is "$(grep -c ' ran$' "$TE_WORK/node.out")" 0 "node death: no task started its program"
restart_slurmd_n3
# srun still waits for n3's tasks, as Slurm does for a node that stopped
# answering; Slurm itself ends the job once it marks n3 down (after
# SlurmdTimeout, 30 s here). What a user does instead: scancel.
scancel "$job" 2>/dev/null
wait_pid "$srun_pid" 30
ok $? "node death: after scancel srun exits"
is "$(step_left "$job")" "" "node death: no process of the step is left on any node"
state=$(timeout 10 scontrol show node n3 | grep -oE 'State=[^ ]+|Reason=.*')
if printf '%s\n' "$state" | grep -qE 'DOWN|NOT_RESPONDING'; then
	diag "n3 after the kill: $state; an admin's fix would be: scontrol update nodename=n3 state=resume"
fi
! printf '%s\n' "$state" | grep -qiE 'DRAIN|trainenv|spank|plugin'
ok $? "node death: n3 is not drained and no reason names trainenv or SPANK ($(echo "$state" | tr '\n' ' '))"
nodes_clean "node death: after slurmd's restart"
# slurmstepd was killed: Slurm's own per-step files of this step stay in
# n3's spool and /tmp (Slurm's, from the SIGKILL); they go with the test.
cluster_exec n3 sh -c "rm -rf '$TE_CLUSTER_DIR'/spool/*.$job.* '$TE_CLUSTER_DIR'/spool/n3_$job.* /tmp/spmix_appdir_*_$job.*"
out=$(te_srun -t 60 --mpi=pmix -N3 --ntasks-per-node=2 $W --train-barrier=20 sh -c 'echo ran' 2>&1)
is "$(printf '%s\n' "$out" | grep -c '^ran$')" 6 "node death: the next step on the same 3 nodes runs (6 tasks, barrier on)" ||
	diag "$out"

# ================================================================ a task dies in the barrier
# kill_case NAME NODE WHO: n3 starts $kd s late, the barrier is $kb s; WHO on
# NODE (helper, leader or follower of the step) is killed after it
# arrived (or, for n3, during its delay). Sets OUT, SECS and JOB. A task
# that dies while waiting counts as a rank that failed before the
# barrier: the step fails as soon as rank 0 can tell every node (here
# when n3 arrives, $kd s in), never later than the late node's deadline
# ($kd + $kb s). The test finds and kills WHO within n3's delay, and the
# step that fails when n3 arrives ends well before the deadline, both on a
# busy machine. LAST: when the last task said why (its line's stamp), in
# seconds from srun's start.
kd=4 kb=10	# kill_case's late node (s) and barrier (s)
kill_case() { # NAME NODE WHO
	local before job pids h l f victim t0 pid
	before=$(te_last_job_id)
	t0=$(date +%s.%N)
	(TRAINENV_TEST_DELAY=n3:$kd te_srun -t 60 --mpi=pmix -N3 --ntasks-per-node=2 $W \
		--train-barrier=$kb sh -c 'echo ran' 2>&1 | stamp >"$TE_WORK/$1.out") &
	pid=$!
	job=$(new_job "$before")
	pids=$(step_tasks "$2" "$job")
	read -r h l f <<<"$pids"
	case $3 in helper) victim=$h ;; leader) victim=$l ;; *) victim=$f ;; esac
	if [ "$2" != n3 ]; then
		# the node's tasks have arrived: their files are there
		# shellcheck disable=SC2016
		cluster_exec "$2" bash -c 'for i in $(seq 50); do ls "$1"/spool/pmix."$2".0/trainenv-arrived/* >/dev/null 2>&1 && exit 0; sleep 0.1; done; exit 1' \
			bash "$TE_CLUSTER_DIR" "$job" || diag "$1: no arrival file seen on $2"
		sleep 0.5	# and the helper has told rank 0
	fi
	[ -n "$victim" ] && kill -KILL "$victim"
	ok $? "$1: killed the $3 (pid ${victim:-none}) of job $job on $2 while the others wait"
	wait_pid "$pid" 40
	SECS=$(awk -v t0="$t0" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - t0 }')
	LAST=$(awk -v t0="$t0" '$2 == "trainenv:" && $3 == "error:" { l = $1 } END { printf "%.1f", l ? l - t0 : 999 }' "$TE_WORK/$1.out")
	OUT=$(cut -d' ' -f2- "$TE_WORK/$1.out")
	JOB=$job
}
after_kill() { # NAME [LATE]: LATE s more before the late node's barrier starts
	is "$(printf '%s\n' "$OUT" | grep -c '^ran$')" 0 "$1: no task started its program"
	awk -v t="$LAST" -v m=$margin -v l="${2:-0}" -v d=$kd -v b=$kb 'BEGIN { exit !(t < d + b + m + l) }'
	ok $? "$1: every task has said why by the late node's deadline ($kd${2:+ + $2} + $kb s) plus $margin s ($LAST s)"
	# then Slurm ends the step: 2-3 s more when rank 0's node is gone
	awk -v t="$SECS" -v l="$LAST" 'BEGIN { exit !(t - l < 10) }'
	ok $? "$1: srun ends within 10 s of that ($SECS s)"
	# slurmstepd itself may take a while: when rank 0's node is gone,
	# Slurm's PMIx server of a late node retries its message to it for
	# about 20 s before it ends (Slurm's, not trainenv's)
	local end=$(( $(date +%s) + 40 )) t1 left
	t1=$(date +%s.%N)
	while left=$(step_left "$JOB") && [ -n "$left" ] && [ "$(date +%s)" -lt "$end" ]; do
		sleep 0.5
	done
	is "$left" "" "$1: no process of the step is left on any node ($(awk -v s="$t1" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }') s after srun)"
}

kill_case "late task" n3 follower
is "$(printf '%s\n' "$OUT" | grep -cE "^trainenv: error: barrier timed out after $kb s: 5 of 6 ranks arrived; missing: rank 5 \\(node n3\\)$")" 5 \
	"late task killed before it arrived: the 5 others fail at the deadline naming rank 5 on n3" || diag "$OUT"
like "$OUT" '^trainenv: rank 5 \(node n3, local rank 1\) was killed by signal 9 \(SIGKILL\) .*: the first failure of this step$' \
	"late task: srun names it as the first failure"
after_kill "late task"

gone='its task ended while waiting at the barrier'
kill_case "waiting task" n2 follower
is "$(printf '%s\n' "$OUT" | grep -cE "^trainenv: error: rank 3 \(node n2\) failed before the barrier: $gone$")" 5 \
	"waiting task killed after it arrived: the 5 others fail, each naming rank 3 on n2 (not released when n3 arrives)" ||
	diag "$OUT"
awk -v t="$SECS" -v b=$kb 'BEGIN { exit !(t < b) }'
ok $? "waiting task: the step fails before the $kb s deadline ($SECS s)"
after_kill "waiting task"

kill_case "rank 0's follower" n1 follower
is "$(printf '%s\n' "$OUT" | grep -cE "^trainenv: error: rank 1 \(node n1\) failed before the barrier: $gone$")" 5 \
	"rank 0's node: its second task killed while waiting: the 5 others fail naming rank 1 on n1" || diag "$OUT"
after_kill "rank 0's follower"

kill_case "rank 0's task" n1 leader
like "$OUT" "^trainenv: error: rendezvous: this node's first task ended before its rendezvous finished$" \
	"rank 0's task killed while waiting: the other task of n1 fails at once, saying why"
is "$(printf '%s\n' "$OUT" | grep -cE "^trainenv: error: barrier (failed after [0-9.]+ s: rank 0 \\(node n1\\) stopped waiting|timed out after $kb s: rank 0 \\(node n1\\) (did not arrive|could not be found: PMIx gave no address))")" 4 \
	"rank 0's task killed: the 4 tasks on n2, n3 fail naming rank 0 on n1 (its helper died with it)" || diag "$OUT"
# n3's helper starts its barrier about 2 s after it starts when rank 0's
# node is gone (PMIx_Init and the lookup's start; a barrier's deadline
# counts from the rank's arrival): 12.2 to 12.9 s with a 3 s late node
# and a 7 s barrier, in every run here
after_kill "rank 0's task" 2

kill_case "n2's first task" n2 leader
like "$OUT" "^trainenv: error: rendezvous: this node's first task ended before its rendezvous finished$" \
	"n2's first task killed while waiting: n2's other task fails at once, saying why"
[ "$(printf '%s\n' "$OUT" | grep -cE '^trainenv: error: rank 2 \(node n2\) failed before the barrier: ')" -eq 4 ] ||
	printf '%s\n' "$OUT" | grep -q 'mpi/pmix_v4: _errhandler'
ok $? "n2's first task killed: the 4 tasks on n1, n3 fail naming rank 2 on n2 (or Slurm's PMIx server ends the step: its client died)" ||
	diag "$OUT"
after_kill "n2's first task"

kill_case "helper" n2 helper
like "$OUT" '^trainenv: error: node n2: rendezvous: the rendezvous helper was killed \(signal 9\) before it answered, not by trainenv' \
	"n2's registered helper killed: n2's tasks say so, naming n2"
is "$(printf '%s\n' "$OUT" | grep -cE "^trainenv: error: rank 2 \(node n2\) failed before the barrier: its node's rendezvous helper went away before every rank arrived$")" 4 \
	"helper killed: the 4 tasks on n1, n3 fail naming n2's helper (not released when n3 arrives)" || diag "$OUT"
after_kill "helper"

# A task that cannot say it is here (its node's arrivals directory is a
# file of root's, made while n3's tasks after the first wait 3 s) leaves a
# failure file instead: the step fails at once, naming it, rather than at
# the barrier's deadline.
before=$(te_last_job_id)
t0=$(date +%s.%N)
(TRAINENV_TEST_DELAY=n3:3 te_srun -t 60 --mpi=pmix -N3 --ntasks-per-node=2 $W \
	--train-barrier=20 sh -c 'echo ran' >"$TE_WORK/noarrive.out" 2>&1) &
pid=$!
job=$(new_job "$before")
# shellcheck disable=SC2016
cluster_exec n3 bash -c 'for i in $(seq 50); do [ -d "$1" ] && exec touch "$1"/trainenv-arrived; sleep 0.05; done; exit 1' \
	bash "$TE_CLUSTER_DIR/spool/pmix.$job.0"
ok $? "no arrival: a file of root's where n3's arrivals directory goes (job $job)"
wait_pid "$pid" 40
secs=$(awk -v t0="$t0" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - t0 }')
out=$(cat "$TE_WORK/noarrive.out")
is "$(printf '%s\n' "$out" | grep -c '^ran$')" 0 "no arrival: no task started its program"
like "$out" "rank 5 \\(node n3\\) failed before the barrier: cannot make [^ ]*/trainenv-arrived: Operation not permitted" \
	"no arrival: the others name rank 5 on n3 and why" 
awk -v t="$secs" 'BEGIN { exit !(t < 3 + 10) }'
ok $? "no arrival: the step fails well before the 20 s deadline ($secs s)"
nodes_clean "task deaths"

# ================================================================ the helper missing or unusable
hx=$TE_WORK/helpers
mkdir -p "$hx/empty" "$hx/noexec" "$hx/isdir/trainenv-rdzv"
install -m 644 "$helper" "$hx/noexec/trainenv-rdzv"
helper_case() { # WHAT DIR REGEX
	local out rc
	set_plugstack "required $plugin helper-dir=$2 test-hooks=on"
	te_seconds eval 'out=$(te_srun -t 60 --mpi=pmix -N2 --ntasks-per-node=2 -w n[1-2] --train-failure-report=off sh -c "echo ran" 2>&1)'
	rc=$?
	[ $rc -ne 0 ] && ! printf '%s\n' "$out" | grep -q '^ran$' &&
		awk -v t="$TE_SECONDS" 'BEGIN { exit !(t < 15) }'
	ok $? "helper $1: the step fails at once (exit $rc, $TE_SECONDS s), no task runs"
	is "$(printf '%s\n' "$out" | grep '^trainenv:' | sort | uniq -c | awk '{ print $1 }')" 4 \
		"helper $1: each of the 4 tasks prints the same one trainenv line" || diag "$out"
	like "$out" "$3" "helper $1: the line says what is wrong"
}
helper_case "missing (empty helper-dir)" "$hx/empty" \
	"^trainenv: error: rendezvous: the rendezvous helper $hx/empty/trainenv-rdzv: No such file or directory"
helper_case "not executable" "$hx/noexec" \
	"^trainenv: error: rendezvous: the rendezvous helper $hx/noexec/trainenv-rdzv is not executable: Permission denied"
helper_case "a directory" "$hx/isdir" \
	"^trainenv: error: rendezvous: the rendezvous helper $hx/isdir/trainenv-rdzv is not a regular file"
nodes_clean "unusable helper"
pmix_plugstack

# ================================================================ topology unreadable
tx=$TE_WORK/topo
mkdir -p "$tx/dir.xml"
lstopo-no-graphics --of xml --whole-io - >"$tx/good.xml" 2>/dev/null
install -m 000 "$tx/good.xml" "$tx/mode000.xml"
mkfifo "$tx/fifo.xml"
topo_case() { # WHAT FILE REGEX(warning; empty: binds)
	local out rc
	set_plugstack "required $plugin bind-topology=$2"
	te_seconds eval 'out=$(te_srun -t 40 -N1 -n2 -w n1 --train-bind=numa sh -c "echo ran \${TRAINENV_BIND:-unbound}" 2>&1)'
	rc=$?
	[ $rc -eq 0 ] && [ "$(printf '%s\n' "$out" | grep -c '^ran ')" -eq 2 ] &&
		awk -v t="$TE_SECONDS" 'BEGIN { exit !(t < 15) }'
	ok $? "topology $1: the step runs at once ($TE_SECONDS s, exit $rc)" || diag "$out"
	if [ -n "$3" ]; then
		is "$(printf '%s\n' "$out" | grep -cE -- "$3")" 2 "topology $1: each rank says why it runs unbound" || diag "$out"
	else
		is "$(printf '%s\n' "$out" | grep -c '^ran gpu=none numa=')" 2 "topology $1: both ranks are bound" || diag "$out"
	fi
}
topo_case "a FIFO (no writer)" "$tx/fifo.xml" \
	"^trainenv: warning: cannot bind rank [01]: cannot read topology file $tx/fifo.xml: not a regular file; running unbound"
topo_case "a directory" "$tx/dir.xml" \
	"cannot read topology file $tx/dir.xml: Is a directory; running unbound"
topo_case "unreadable for root (/proc/sys/vm/drop_caches, mode 0200)" /proc/sys/vm/drop_caches \
	"cannot read topology file /proc/sys/vm/drop_caches: Permission denied; running unbound"
topo_case "mode 000 (root reads it: not a failure)" "$tx/mode000.xml" ""
# The cache: a FIFO where the cached export should be is not trusted; the
# step discovers and replaces it with a root-owned regular file.
cache=$TE_WORK/topo-cache
mkdir -p "$cache"
mkfifo "$cache/topology-$(cat /proc/sys/kernel/random/boot_id).xml"
set_plugstack "required $plugin topology-cache=$cache"
te_seconds eval 'out=$(te_srun -t 40 -N1 -n1 -w n1 --train-bind=numa sh -c "echo ran \${TRAINENV_BIND:-unbound}" 2>&1)'
like "$out" '^ran gpu=none numa=' "topology cache holding a FIFO: the step binds ($TE_SECONDS s)"
f=$cache/topology-$(cat /proc/sys/kernel/random/boot_id).xml
[ -f "$f" ] && [ "$(stat -c '%u %a' "$f")" = "0 644" ]
ok $? "and the FIFO is replaced by a root-owned export"
is "$(step_left '[0-9]+')" "" "topology faults: no slurmstepd or helper left on any node"
nodes_clean "topology faults"

# ================================================================ policy unreadable on the nodes
# srun (root namespace) reads a good file at /tmp/...; every node reads
# its own /tmp, where the path is each of the following.
pol=/tmp/te-t70-policy.$$
printf 'nccl-heartbeat=900\n' >"$pol"
te_on_exit "rm -f '$pol'"
te_on_exit "for n in ${nodes[*]}; do cluster_exec \$n rm -rf '$pol' '$pol.d'; done"
on_nodes() { local n; for n in "${nodes[@]}"; do cluster_exec "$n" sh -c "$1"; done; }
policy_case() { # WHAT REGEX
	local out rc sizes log
	mapfile -t sizes < <(log_sizes)
	set_plugstack "required $plugin conf=$pol"
	out=$(te_srun -t 40 -N3 $W sh -c 'echo ran' 2>&1)
	rc=$?
	[ $rc -ne 0 ] && [ $rc -ne 124 ] && ! printf '%s\n' "$out" | grep -q '^ran$' &&
		[ "$(printf '%s\n' "$out" | grep -cE "^trainenv: error: $2")" -eq 3 ]
	ok $? "nodes' policy $1: the step fails (exit $rc), each task's stderr says why" || diag "$out"
	sleep 1
	log=$(new_logs "${sizes[@]}")
	[ "$(printf '%s\n' "$log" | grep -E "error: trainenv: $2" | cut -d: -f1 | sort -u | wc -l)" -eq 3 ] &&
		! printf '%s\n' "$log" | grep -Eiq "$crash_re"
	ok $? "nodes' policy $1: every slurmd log has the line, no crash or drain" || diag "$log"
}
on_nodes "rm -f '$pol'; mkfifo '$pol'"
policy_case "a FIFO" "conf=$pol: not a regular file"
on_nodes "rm -f '$pol'; ln -s /proc/sys/vm/drop_caches '$pol'"
policy_case "a symbolic link (to drop_caches)" "conf=$pol: is a symbolic link"
# the special files themselves at the policy's path (bind mounts in each
# node's own mount namespace: a link is refused before it is opened)
on_nodes "rm -f '$pol'; : >'$pol'; mount --bind /proc/sys/vm/drop_caches '$pol'"
policy_case "unreadable for root (drop_caches, mode 0200)" "conf=$pol: cannot open the policy file: Permission denied"
# a process of the node's own (root may read its memory), address 0
on_nodes "umount '$pol'; sleep 300 </dev/null >/dev/null 2>&1 & echo \$! >'$pol.pid'; mount --bind /proc/\$!/mem '$pol'"
policy_case "failing on read (a process's /proc/PID/mem)" "conf=$pol: read: Input/output error"
on_nodes "umount '$pol'; kill \$(cat '$pol.pid'); rm -f '$pol.pid'"
# a path through a file: srun's side has a directory there, the nodes a file
mkdir -p "$pol.d" && printf 'nccl-heartbeat=900\n' >"$pol.d/site.conf"
on_nodes "rm -f '$pol'; rm -rf '$pol.d'; : >'$pol.d'"
pol_saved=$pol
pol=$pol.d/site.conf
policy_case "behind a path through a file" "conf=$pol: cannot open the policy file: Not a directory"
pol=$pol_saved
rm -rf "$pol.d"
on_nodes "rm -f '$pol' '$pol.d'; printf 'nccl-heartbeat=1300\n' >'$pol'; chmod 000 '$pol'"
set_plugstack "required $plugin conf=$pol"
out=$(te_srun -t 40 -N3 $W printenv TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC 2>&1 | sort -u)
is "$out" 1300 "nodes' policy mode 000 (slurmstepd reads it as root): applied, the next step runs"
# srun runs as the user: a policy file the user cannot read stops it
# before anything is allocated (a required plugin never runs without the
# site's policy).
chmod 600 "$pol"
before=$(te_last_job_id)
out=$(cd / && timeout 40 setpriv --reuid=nobody --regid=nogroup --clear-groups srun -N1 true 2>&1)
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] && [ "$(printf '%s\n' "$out" | grep -c 'trainenv:')" -eq 1 ] &&
	printf '%s\n' "$out" | grep -q "^srun: error: trainenv: conf=$pol: cannot open the policy file: Permission denied$" &&
	[ -z "$(te_jobs_after "$before")" ]
ok $? "a policy file the user cannot read (0600): nobody's srun stops with one line, nothing allocated" || diag "$out"
chmod 644 "$pol"
nodes_clean "policy faults"
pmix_plugstack

# ================================================================ huge environments
set_plugstack "required $plugin helper-dir=$builddir test-hooks=on nccl-heartbeat=900 nccl-heartbeat.max=3600"
mapfile -t sizes < <(log_sizes)
te_seconds eval 'out=$(for i in $(seq 1 20000); do export "TE_JUNK_$i=value_$i"; done
	te_srun -t 120 --mpi=pmix -N3 -n3 $W --train-barrier=60 sh -c "echo \$(env | grep -c ^TE_JUNK_) \$MASTER_PORT \$TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC" 2>&1)'
is "$(printf '%s\n' "$out" | awk '$1 == 20000 && $2 > 0 && $3 == 900' | wc -l)" 3 \
	"20,000 variables: the PMIx step runs, every task sees them all, the rendezvous and the policy ($TE_SECONDS s)" ||
	diag "$(printf '%s\n' "$out" | head -5)"
k128=$(head -c 130000 /dev/zero | tr '\0' 7)
out=$(env TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC="$k128" timeout 40 srun -N1 true 2>&1)
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] &&
	[ "$(printf '%s\n' "$out" | grep -c 'trainenv:')" -eq 1 ] &&
	printf '%s\n' "$out" | grep -q 'TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC in the job environment (setting nccl-heartbeat): value longer than 1023 characters'
ok $? "a 130,000-digit TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC: srun refuses it in one line" || diag "$(printf '%s\n' "$out" | cut -c1-200)"
env X="$(head -c 1048576 /dev/zero | tr '\0' x)" true 2>/dev/null
is "$?" 126 "a 1 MiB variable cannot reach srun at all: execve refuses it (E2BIG; Linux's limit is 128 KiB per string)"
out=$(TRAINENV_SETTINGS="$(head -c 130000 /dev/zero | tr '\0' x)" te_srun -t 40 --mpi=pmix -N2 $W \
	sh -c 'echo ${#TRAINENV_SETTINGS} $TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC' 2>&1)
is "$(printf '%s\n' "$out" | awk '$1 < 4096 && $2 == 900' | wc -l)" 2 \
	"a 130,000-byte TRAINENV_SETTINGS: ignored, the tasks get trainenv's own and the policy" || diag "$(printf '%s\n' "$out" | cut -c1-200)"
cvd=$(seq -s, 0 20000 | head -c 65536)
out=$(CUDA_VISIBLE_DEVICES="$cvd" te_srun -t 40 --mpi=pmix -N2 $W --train-bind=numa \
	sh -c 'echo ${#CUDA_VISIBLE_DEVICES} $MASTER_PORT' 2>&1)
is "$(printf '%s\n' "$out" | grep -cE '^65536 [0-9]+$')" 2 "a 64 KiB CUDA_VISIBLE_DEVICES: the step runs, the variable reaches the tasks untouched" ||
	diag "$(printf '%s\n' "$out" | cut -c1-200)"
is "$(printf '%s\n' "$out" | grep -c 'trainenv: warning: cannot bind rank [01]: CUDA_VISIBLE_DEVICES=too-long is not a list of GPU indexes')" 2 \
	"and binding says, per rank, that the list is not one it can use"
junk="n[1-99999999999999999999],$(head -c 60000 /dev/zero | tr '\0' '[')"
addr1=$(node_addr n1)
bad=()
# SLURM_JOB_NODELIST only without PMIx: junk there crashes Slurm 22.05's
# own mpi/pmix in slurmstepd (seen without trainenv, mpi4py's allreduce:
# "_parse_single_range: Too many hosts in range", then a segfault).
for v in SLURM_STEP_NODELIST SLURM_JOB_NODELIST SLURM_NODELIST SLURMD_NODENAME SLURM_SRUN_COMM_HOST \
	TRAINENV_REPORT TRAINENV_RANK_VARS PMIX_SERVER_TMPDIR TRAINENV_TEST_DELAY; do
	mpi=pmix
	[ "$v" = SLURM_JOB_NODELIST ] && mpi=none
	out=$(export "$v=$junk"; te_srun -t 40 --mpi=$mpi -N3 --ntasks-per-node=2 $W --train-barrier=20 \
		sh -c 'echo R $MASTER_ADDR $MASTER_PORT' 2>&1 | grep -v 'barrier is unavailable')
	n=$(printf '%s\n' "$out" | grep '^R ' | sort -u | wc -l)
	first=$(printf '%s\n' "$out" | grep '^R ' | head -n 1 | awk '{ print $2 }')
	if [ "$(printf '%s\n' "$out" | grep -c '^R ')" -ne 6 ] || [ "$n" -ne 1 ]; then
		bad+=("$v: $(printf '%s\n' "$out" | grep -v '^R ' | head -n 2 | cut -c1-150)")
	elif [ "$first" != "$addr1" ]; then
		bad+=("$v: MASTER_ADDR $first")
	fi
done
is "${#bad[@]}" 0 "60 KB of junk in each of 9 variables the plugin reads: every step runs, all 6 ranks agree on n1's MASTER_ADDR and a MASTER_PORT" ||
	diag "${bad[@]}"
# The interface the user names is a user choice: junk names none.
te_seconds eval 'out=$(NCCL_SOCKET_IFNAME="$junk" te_srun -t 40 --mpi=pmix -N3 --ntasks-per-node=2 $W \
	--train-barrier=20 --train-failure-report=off sh -c "echo ran" 2>&1)'
[ "$(printf '%s\n' "$out" | grep -c '^ran$')" -eq 0 ] &&
	[ "$(printf '%s\n' "$out" | grep -cE "^trainenv: error: node n[123]: no address for the rendezvous: no up interface with an address matches 'n\[1-9+\],\[+'$")" -eq 6 ] &&
	awk -v t="$TE_SECONDS" 'BEGIN { exit !(t < 15) }'
ok $? "60 KB of junk in NCCL_SOCKET_IFNAME: every task fails at once ($TE_SECONDS s) with one line naming the (cut) pattern" ||
	diag "$(printf '%s\n' "$out" | cut -c1-200 | sort | uniq -c)"
log=$(new_logs "${sizes[@]}")
! printf '%s\n' "$log" | grep -Eiq "$crash_re"
ok $? "huge environments: no crash, fatal error or drain in any slurmd log" || diag "$(printf '%s\n' "$log" | grep -Ei "$crash_re" | head)"
nodes_clean "huge environments"
pmix_plugstack

# ================================================================ two steps at once
# One job, two PMIx steps launched together, each with the barrier; in A
# n2 starts 4 s late, B has no late node. B must not wait for A's late
# node, A must wait for it, and their MASTER_PORTs differ.
cat >"$TE_WORK/two.sh" <<EOF
#!/bin/bash
cd "$TE_WORK"
run() { # NAME
	local t0=\$(date +%s.%N)
	srun --exact -n3 --ntasks-per-node=1 --mpi=pmix --train-barrier=30 \\
		sh -c 'echo \$SLURM_STEP_ID \$SLURM_PROCID \$MASTER_ADDR \$MASTER_PORT' >"\$1.out" 2>&1
	echo "rc=\$? secs=\$(awk -v s=\$t0 -v e=\$(date +%s.%N) 'BEGIN { printf "%.1f", e - s }')" >>"\$1.out"
}
TRAINENV_TEST_DELAY=n2:4 run A &
run B &
wait
EOF
chmod 755 "$TE_WORK/two.sh"
out=$(te_sbatch_wait -t 90 -N3 --ntasks-per-node=2 $W -o "$TE_WORK/two.log" "$TE_WORK/two.sh" 2>&1)
ok $? "two steps at once: the job runs" || diag "$out" "$(cat "$TE_WORK/two.log" 2>/dev/null)"
A=$(cat "$TE_WORK/A.out" 2>/dev/null); B=$(cat "$TE_WORK/B.out" 2>/dev/null)
like "$A" '^rc=0 ' "step A (n2 late) succeeds" || diag "$A"
like "$B" '^rc=0 ' "step B succeeds" || diag "$B"
pa=$(printf '%s\n' "$A" | awk 'NF == 4 { print $4 }' | sort -u)
pb=$(printf '%s\n' "$B" | awk 'NF == 4 { print $4 }' | sort -u)
[ "$(printf '%s\n' "$A" | awk 'NF == 4' | wc -l)" -eq 3 ] && [ "$(printf '%s\n' "$B" | awk 'NF == 4' | wc -l)" -eq 3 ] &&
	[ "$(printf '%s\n' "$pa" | wc -l)" -eq 1 ] && [ "$(printf '%s\n' "$pb" | wc -l)" -eq 1 ]
ok $? "each step's 3 ranks agree on one MASTER_PORT (A: $pa, B: $pb)"
[ -n "$pa" ] && [ "$pa" != "$pb" ]
ok $? "the two steps have different MASTER_PORTs"
sa=$(printf '%s\n' "$A" | sed -n 's/.*secs=//p'); sb=$(printf '%s\n' "$B" | sed -n 's/.*secs=//p')
awk -v a="${sa:-0}" -v b="${sb:-99}" 'BEGIN { exit !(a >= 4 && b < 4) }'
ok $? "each completes its own barrier: A waits for its late n2 (${sa:-?} s), B does not (${sb:-?} s)"

# ================================================================ 20 back-to-back steps
# Where the plugin and its helper write: the topology cache (a private
# one here: /run/trainenv is shared by every cluster on this machine),
# the step's PMIx directory in the nodes' spool, the nodes' /tmp, the
# shared directory. Also listening sockets and slurmd's descriptors.
cache=$TE_WORK/b2b-cache
set_plugstack "required $plugin helper-dir=$builddir topology-cache=$cache"
snapshot() {
	local n
	for n in "${nodes[@]}"; do
		# shellcheck disable=SC2016
		cluster_exec "$n" bash -c 'echo "tmp: $(ls -A /tmp | tr "\n" " ")"
			echo "spool: $(ls -A "$1/spool" | tr "\n" " ")"
			echo "listen: $(ss -Hltn | awk "{ print \$4 }" | sort | tr "\n" " ")"' bash "$TE_CLUSTER_DIR" |
			sed "s/^/$n /"
	done
	# shellcheck disable=SC2010 # plain names: the tests' own directories
	echo "shared: $(ls -A "$TE_SHARED" | grep -vx "$(basename "$TE_WORK")" | tr '\n' ' ')"
	echo "cache: $(ls -A "$cache" 2>/dev/null | tr '\n' ' ')"
}
descendants() { # PID
	local c
	for c in $(pgrep -P "$1"); do echo "$c"; descendants "$c"; done
}
slurmd_fds() {
	local n p
	for n in "${nodes[@]}"; do
		p=$(node_procs "$n" '^[s]lurmd ' | awk 'NR == 1 { print $1 }')
		echo "$n $(ls /proc/"$p"/fd 2>/dev/null | wc -l)"
	done
}
te_srun -t 60 --mpi=pmix -N3 --ntasks-per-node=2 $W --train-bind=numa true >/dev/null 2>&1	# fills the cache
snap0=$(snapshot)
fds0=$(slurmd_fds)
fails=0 srun_fds=() t_b2b=$(date +%s.%N)
for i in $(seq 1 20); do
	rm -f "$TE_WORK/go"
	te_srun -t 60 --mpi=pmix -N3 --ntasks-per-node=2 $W --train-barrier=30 --train-bind=numa \
		sh -c 'touch "$0/here.$SLURM_PROCID"; for i in $(seq 100); do [ -e "$0/go" ] && break; sleep 0.05; done' \
		"$TE_WORK" >"$TE_WORK/b2b.$i.out" 2>&1 &
	pid=$!
	for _ in $(seq 150); do
		[ "$(ls "$TE_WORK"/here.* 2>/dev/null | wc -l)" -eq 6 ] && break
		sleep 0.1
	done
	sleep 0.2
	# srun and its hang-up shield, every task in its program: every
	# descriptor they hold
	n=0
	for p in $(descendants "$pid"); do
		n=$((n + $(ls /proc/"$p"/fd 2>/dev/null | wc -l)))
	done
	srun_fds+=("$n")
	rm -f "$TE_WORK"/here.*
	touch "$TE_WORK/go"
	wait "$pid" || fails=$((fails + 1))
done
t_b2b=$(awk -v s="$t_b2b" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
is "$fails" 0 "20 back-to-back PMIx steps with the barrier and --train-bind=numa all succeed ($t_b2b s)" ||
	diag "$(cat "$TE_WORK"/b2b.*.out | sort | uniq -c | head)"
is "$(printf '%s\n' "${srun_fds[@]}" | sort -u | wc -l)" 1 "srun's descriptors mid-step are the same in every step (${srun_fds[0]}): nothing grows" ||
	diag "${srun_fds[*]}"
# slurmstepd ends a moment after srun has its exit codes (epilog, the
# accounting message): wait for it, up to 10 s, polling. The program's
# name is matched, not its arguments: the cluster's own path may hold
# "trainenv" (slurmd -f /var/tmp/trainenv-check-*/...)
for _ in $(seq 50); do
	left=$(for n in "${nodes[@]}"; do node_procs "$n" '^([^ ]*/)?[t]rainenv[^/ ]*( |$)|^[s]lurmstepd' | sed "s/^/$n: /"; done)
	[ -z "$left" ] && break
	sleep 0.2
done
is "$left" "" "after 20 steps: no trainenv, trainenv-rdzv or slurmstepd process on any node (within 10 s)"
snap1=$(snapshot)
is "$snap1" "$snap0" "after 20 steps: the nodes' /tmp, spool, listening sockets, the shared directory and the topology cache are as before" ||
	diag "before:" "$snap0" "after:" "$snap1"
is "$(printf '%s\n' "$snap1" | sed -n 's/^cache: //p')" "topology-$(cat /proc/sys/kernel/random/boot_id).xml " \
	"the topology cache holds one export, no temporary file"
fds1=$(slurmd_fds)
is "$fds1" "$fds0" "slurmd's descriptors on every node are as before (it loads the plugin too)"
nodes_clean "20 steps"

# ================================================================ crash check
log=$(new_logs "${sizes0[@]}")
! printf '%s\n' "$log" | grep -Eiq 'segfault|segmentation|core dump|dumped core'
ok $? "no slurmd log mentions a segfault or a core dump during this test" || diag "$(printf '%s\n' "$log" | grep -Ei 'segfault|core' | head)"
if dmesg >/dev/null 2>&1; then
	is "$(dmesg | grep -c 'slurmstepd\[[0-9]*\]: segfault')" "$segv0" \
		"no slurmstepd segfault in the kernel log during this test" ||
		diag "$(dmesg | grep 'slurmstepd\[[0-9]*\]: segfault' | tail -n 3)"
else
	skip "the kernel log is not readable here"
fi

done_testing
