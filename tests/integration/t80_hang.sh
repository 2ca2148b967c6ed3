#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 13, hang diagnosis, on the real cluster with real Python:
#   (a) --train-exit-grace: 3 nodes x 2 ranks, rank 4 hangs in save_final()
#       while the others exit 0: srun names rank 4, its node and the frame
#       save_final, and the step ends non-zero soon after the grace; no
#       process is left.
#   (b) trainenv stacks JOB.STEP on a running 6-rank step: rank 1 in
#       odd_one(), the others in common(): two groups, rank 1 first.
#   (b') a process each task left behind (adopted by init, the step's
#       environment) is no rank (issue 25, item 6).
#   (c) a C program (sleep) past the grace: native frames.
#   (d) no debugger (TRAINENV_GDB names none): rank, node and state are
#       still there, and the report says what is missing.
#   (e) exit-action=report only reports; the step goes on.
#       The step's JSON record and the report's lie in the dump directory.
#   (a') the same with one torchrun per node: the hung worker's frame, not
#       torchrun's agent (which waits in its exit barrier).
#   (f) --train-stall: a rank that stops calling trainenv.heartbeat() is
#       named with its frame and the step ends; ranks that keep calling it
#       are not reported.
# Single-quoted $VARS are for the tasks' shells:
# shellcheck disable=SC2016
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"

plan 38

te_build_init
cluster_up --nodes 3 || bail_out "no cluster"
ok 0 "cluster is up, plugin $TE_PLUGIN"
command -v gdb >/dev/null || bail_out "gdb is needed (tests/deps.sh installs it)"
use_trainenv "helper-dir=$TE_BUILDDIR"
hang=$TE_SRCDIR/tests/integration/py/hang.py
ready=$TE_CLUSTER_DIR/shared/ready
mkdir -p "$ready" && chmod 1777 "$ready"
wait_ready() { wait_rank_files "$ready" "$@"; } # COUNT SECS

# ================================================================ (a) exit grace
rm -f "$ready"/rank.*
dumps=$TE_CLUSTER_DIR/shared/dumps
mkdir -p "$dumps" && chmod 1777 "$dumps"
te_seconds te_srun -t 120 -N3 --ntasks-per-node=2 --train-exit-grace=10 \
	--train-nccl-dump-dir="$dumps" \
	/usr/bin/python3 "$hang" exit "$ready" >"$TE_WORK/a.out" 2>"$TE_WORK/a.err"
rc=$?
secs=$TE_SECONDS
diag "$(cat "$TE_WORK/a.err")"
[ "$rc" = 143 ]
ok $? "exit-grace: the step ends non-zero, the hung rank by SIGTERM (exit-action=term; rc=$rc)"
awk -v s="$secs" 'BEGIN { exit !(s >= 10 && s < 30) }'
ok $? "exit-grace=10: the step ended after the grace, within 20 s of it (${secs} s)"
grep -qE '^trainenv: exit-grace: 10 s after the first task of step [0-9]+\.0 ended \(rank [0-9] on n[1-3] exited with code 0\), 1 rank still runs:' "$TE_WORK/a.err"
ok $? "srun says the grace is over, which task ended first, and how many ranks still run"
grep -qE '^trainenv: hang: rank 4 on n3 \(1 rank' "$TE_WORK/a.err"
ok $? "the report names rank 4 on n3"
grep -qE 'File ".*hang.py", line [0-9]+, in save_final' "$TE_WORK/a.err"
ok $? "the report shows rank 4's Python frame save_final"
grep -qE 'state S \(sleeping' "$TE_WORK/a.err"
ok $? "the report gives the rank's process state"
grep -qE '^trainenv: exit-grace: ending step [0-9]+\.0 \(exit-action=term' "$TE_WORK/a.err"
ok $? "the step is ended per exit-action (term, the built-in)"
! grep -qE 'hang: rank [0-35]' "$TE_WORK/a.err"
ok $? "the ranks that ended are not in the report"
sleep 1
out=$(left_on_nodes "hang.py exit $ready")
[ -z "$out" ]
ok $? "no process of the step is left on any node" || diag "$out"
job=$(te_last_job_id)
python3 - "$dumps/0/$job/trainenv.0.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["job"] > 0 and r["step"] == 0 and r["end"] >= r["start"], r
assert r["settings"]["exit-grace"] == {"value": "10", "source": "option"}, r
assert r["watchdog"].startswith("rank ") and "exited with code 0" in r["watchdog"], r
assert r["hang_report"] == "trainenv.0.hang.json", r
assert r["failed_tasks"] == 1 and r["first_failure"]["rank"] == 4, r
assert r["first_failure"]["how"] == "signal" and r["first_failure"]["value"] == 15, r
PY
ok $? "the step's record: settings, why the report ran, the first failure (rank 4, SIGTERM)" ||
	diag "$(cat "$dumps/0/$job/trainenv.0.json" 2>&1)"
python3 - "$dumps/0/$job/trainenv.0.hang.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))["groups"]
assert len(g) == 1 and g[0]["ranks"] == [4], g
assert any(f.get("function") == "save_final" for t in g[0]["threads"] for f in t["frames"]), g
PY
ok $? "the hang report's JSON beside it: rank 4 in save_final" ||
	diag "$(head -c 1500 "$dumps/0/$job/trainenv.0.hang.json" 2>&1)"
[ "$(stat -c '%U %a' "$dumps/0/$job/trainenv.0.json")" = "root 600" ]
ok $? "the record is the user's own, mode 600"

# ================================================================ (a') torchrun
# Debian 12's torch 1.13 under Python 3.11 needs torchrun's --redirects and
# --tee set (see t22); torch < 2 spells --nproc_per_node. Debian trixie's
# and sid's torch is built without libuv, and the TCPStore of torchrun's
# static rendezvous asks for it whatever the environment says ("use_libuv
# was requested but PyTorch was build without libuv support"): torchrun
# cannot start there, with or without trainenv.
if ! te_no_torchrun_store; then
	rm -f "$ready"/rank.*
	PET_REDIRECTS=1 PET_TEE=1 te_seconds te_srun -t 180 -N3 --ntasks-per-node=1 --train-exit-grace=10 \
		torchrun --nproc_per_node=2 "$hang" exit "$ready" >"$TE_WORK/t.out" 2>"$TE_WORK/t.err"
	rc=$?
	secs=$TE_SECONDS
	diag "$(grep -v '^\[default' "$TE_WORK/t.err")"
	grep -qE '^trainenv: exit-grace: 10 s after the first task of step [0-9]+\.0 ended \(worker rank [0-9] on n[1-3] ended\), 1 rank still runs:' "$TE_WORK/t.err"
	ok $? "torchrun: the first worker's end starts the grace; one rank still runs"
	grep -qE '^trainenv: hang: rank 4 on n3 \(1 rank' "$TE_WORK/t.err" &&
		grep -qE 'File ".*hang.py", line [0-9]+, in save_final' "$TE_WORK/t.err"
	ok $? "torchrun: the hung worker, rank 4 on n3, with its frame save_final"
	report=$(sed -n '/^trainenv: exit-grace: 10 s after/,/^trainenv: exit-grace: ending step/p' "$TE_WORK/t.err")
	[ -n "$report" ] && ! grep -qE 'hang: rank [0-35] |torch/distributed/elastic' <<<"$report"
	ok $? "torchrun: neither the ended workers nor torchrun's agents are in the report"
	[ "$rc" -ne 0 ] && awk -v s="$secs" 'BEGIN { exit !(s < 60) }'
	ok $? "torchrun: the step ends (rc=$rc, ${secs} s)"
	sleep 1
	out=$(left_on_nodes "hang.py exit $ready")
	[ -z "$out" ] || diag "$out"
else
	skip "$TE_WHY" 4
fi

# ================================================================ (b) trainenv stacks
rm -f "$ready"/rank.*
te_srun -t 120 -N3 --ntasks-per-node=2 /usr/bin/python3 "$hang" stacks "$ready" \
	>"$TE_WORK/b.out" 2>&1 &
bpid=$!
te_on_exit "kill $bpid 2>/dev/null"
wait_ready 6 60
ok $? "6 ranks are in place"
job=$(te_last_job_id)
te_seconds timeout 60 "$TE_TOOL" stacks "$job.0" >"$TE_WORK/b.stacks" 2>"$TE_WORK/b.err"
rc=$?
diag "$(cat "$TE_WORK/b.stacks" "$TE_WORK/b.err")"
ok $rc "trainenv stacks $job.0 runs as the job's user (${TE_SECONDS} s)"
groups=$(grep -cE '^trainenv: hang: ' "$TE_WORK/b.stacks")
is "$groups" 2 "two groups"
head -1 "$TE_WORK/b.stacks" | grep -qE '^trainenv: hang: rank 1 on n1 \(1 rank'
ok $? "the outlier first: rank 1 alone"
grep -qE '^trainenv: hang: ranks 0,2-5 on n1-n3 \(5 ranks' "$TE_WORK/b.stacks"
ok $? "the other five merged: ranks 0,2-5 on n1-n3"
awk '/^trainenv: hang: rank 1 /{g=1} /^trainenv: hang: ranks/{g=2} g==1 && /in odd_one/{a=1} g==2 && /in common/{b=1} END { exit !(a && b) }' "$TE_WORK/b.stacks"
ok $? "rank 1's frame is odd_one, the others' common"
grep -q 'in helper_thread' "$TE_WORK/b.stacks"
ok $? "every thread's Python frames are shown (helper_thread)"
timeout 60 "$TE_TOOL" stacks --json "$job" >"$TE_WORK/b.json" 2>&1
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); g=d["groups"]; assert len(g)==2 and g[0]["ranks"]==[1] and sorted(g[1]["ranks"])==[0,2,3,4,5], g' "$TE_WORK/b.json"
ok $? "--json, and the job's newest step when no step is given" || diag "$(head -c 2000 "$TE_WORK/b.json")"
out=$(timeout 60 setpriv --reuid=nobody --regid=nogroup --clear-groups "$TE_TOOL" stacks "$job.0" 2>&1)
rc=$?
[ "$rc" -ne 0 ] && ! grep -q '^trainenv: hang:' <<<"$out"
ok $? "another user gets no stack of the step (rc=$rc)" || diag "$out"
scancel "$job"
wait "$bpid" 2>/dev/null

# the same as an unprivileged user, for the user's own step
rm -f "$ready"/rank.*
setpriv --reuid=nobody --regid=nogroup --clear-groups timeout 120 srun -N2 --ntasks-per-node=1 \
	/usr/bin/python3 "$hang" stacks "$ready" >/dev/null 2>&1 &
npid=$!
te_on_exit "kill $npid 2>/dev/null"
wait_ready 2 60
job=$(te_last_job_id)
out=$(timeout 60 setpriv --reuid=nobody --regid=nogroup --clear-groups "$TE_TOOL" stacks "$job.0" 2>&1)
grep -qE '^trainenv: hang: rank 1 on n[1-3] \(1 rank' <<<"$out" && grep -q 'in odd_one' <<<"$out" &&
	grep -q 'in common' <<<"$out"
ok $? "user nobody: trainenv stacks on their own step shows their frames" || diag "$out"
scancel "$job"
wait "$npid" 2>/dev/null

# ================================================================ (b') orphans
# Each task leaves a process behind (a data loader whose parent died):
# it keeps the step's environment but is adopted by init. trainenv stacks
# names the two tasks only (issue 25, item 6: it named the orphans too).
rm -f "$ready"/rank.*
te_srun -t 120 -N2 sh -c '(exec sleep 6131 &) ; touch "$1/rank.$SLURM_PROCID"; exec sleep 6132' sh "$ready" \
	>/dev/null 2>&1 &
opid=$!
te_on_exit "kill $opid 2>/dev/null"
wait_ready 2 60
job=$(te_last_job_id)
[ -n "$(left_on_nodes "^sleep 6131$")" ] &&
	timeout 60 "$TE_TOOL" stacks --json "$job.0" >"$TE_WORK/o.json" 2>&1 &&
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); p=[x for g in d["groups"] for x in g["procs"]]; assert sorted(x["rank"] for x in p)==[0,1], p' "$TE_WORK/o.json"
ok $? "a process each task left behind (adopted by init) is not reported: ranks 0 and 1 once each" ||
	diag "$(left_on_nodes "sleep 613")" "$(head -c 2000 "$TE_WORK/o.json")"
scancel "$job"
wait "$opid" 2>/dev/null
for n in n1 n2; do cluster_exec "$n" pkill -f "^sleep 6131$" 2>/dev/null; done

# ================================================================ (c) native frames, (d) no debugger
# Parts (c) to (f) name rank 1's node: pinned to n1,n2, as the previous
# part's job may still be completing on one of them (srun -N2 would then
# take n3 and put rank 1 there: seen once in CI on sid).
te_srun -t 60 -N2 -w n1,n2 --train-exit-grace=3 --train-exit-action=kill sh -c '[ "$SLURM_PROCID" = 1 ] && exec sleep 600; sleep 1' \
	>/dev/null 2>"$TE_WORK/c.err"
rc=$?
diag "$(cat "$TE_WORK/c.err")"
is "$rc" 137 "exit-action=kill: the hung rank dies of SIGKILL"
grep -qE '^trainenv: hang: rank 1 on n2 .*' "$TE_WORK/c.err" &&
	grep -qE 'nanosleep' "$TE_WORK/c.err"
ok $? "a C program: native frames (nanosleep)"
TRAINENV_GDB=/nonexistent/gdb te_srun -t 60 -N2 -w n1,n2 --train-exit-grace=3 --train-exit-action=kill sh -c '[ "$SLURM_PROCID" = 1 ] && exec sleep 600; sleep 1' \
	>/dev/null 2>"$TE_WORK/d.err"
diag "$(cat "$TE_WORK/d.err")"
grep -qE '^trainenv: hang: rank 1 on n2 .*state S' "$TE_WORK/d.err" &&
	grep -q 'no debugger' "$TE_WORK/d.err"
ok $? "no debugger: rank, node and state, and what is missing"

# ================================================================ (e) exit-action=report
te_srun -t 60 -N2 -w n1,n2 --train-exit-grace=2 --train-exit-action=report sh -c '[ "$SLURM_PROCID" = 1 ] && exec sleep 600; sleep 1' \
	>/dev/null 2>"$TE_WORK/e.err" &
epid=$!
te_on_exit "kill $epid 2>/dev/null"
for ((i = 0; i < 300; i++)); do grep -q '^trainenv: hang: rank 1' "$TE_WORK/e.err" && break; sleep 0.1; done
job=$(te_last_job_id)
sleep 2
state=$(timeout 10 scontrol show step "$job.0" -o 2>/dev/null | grep -o 'State=[A-Z]*')
grep -q '^trainenv: hang: rank 1 on n2' "$TE_WORK/e.err" && [ "$state" = State=RUNNING ] &&
	! grep -q 'ending step' "$TE_WORK/e.err"
ok $? "exit-action=report: the report, and the step still runs ($state)" || diag "$(cat "$TE_WORK/e.err")"
srun_pid=$(pgrep -f -- "^srun -N2 -w n1,n2 --train-exit-grace=2 --train-exit-action=report" | head -1)
kids=$(ps -o stat=,args= --ppid "${srun_pid:-1}" 2>/dev/null)
[ -n "$srun_pid" ] && ! printf '%s\n' "$kids" | grep -q '^Z'
ok $? "exit-action=report: srun reaped the report's process (no zombie while the step goes on)" ||
	diag "srun ${srun_pid:-?}: $kids"
scancel "$job"
wait "$epid" 2>/dev/null

# ================================================================ (f) stall
export PYTHONPATH=$TE_SRCDIR/python TRAINENV_LIBRARY=$TE_BUILDDIR/.libs/libtrainenv.so.0
rm -f "$ready"/rank.*
te_seconds te_srun -t 120 -N2 -w n1,n2 --train-stall=3 /usr/bin/python3 "$hang" beat "$ready" \
	>/dev/null 2>"$TE_WORK/f.err"
rc=$?
secs=$TE_SECONDS
diag "$(cat "$TE_WORK/f.err")"
grep -qE '^trainenv: stall: step [0-9]+\.0: rank 1 on n2 sent no heartbeat for [3-9] s \(--train-stall=3\); 2 ranks run:' "$TE_WORK/f.err"
ok $? "stall: srun names rank 1 on n2, whose heartbeat stopped"
grep -qE 'line [0-9]+, in stuck' "$TE_WORK/f.err" && grep -qE '^trainenv: stall: ending step' "$TE_WORK/f.err"
ok $? "the report shows its frame stuck, and the step is ended"
[ "$rc" = 143 ] && awk -v s="$secs" 'BEGIN { exit !(s < 25) }'
ok $? "the step ends (rc=$rc) soon after the stall (${secs} s)"
rm -f "$ready"/rank.*
RUN_FOR=6 STALL_RANK=-1 te_srun -t 120 -N2 --train-stall=2 /usr/bin/python3 "$hang" beat "$ready" \
	>/dev/null 2>"$TE_WORK/g.err"
rc=$?
[ "$rc" = 0 ] && ! grep -q 'stall' "$TE_WORK/g.err" && [ "$(find "$ready" -name 'rank.*' | wc -l)" = 2 ]
ok $? "ranks that keep calling heartbeat() for 6 s with --train-stall=2 are not reported (rc=$rc)" || diag "$(cat "$TE_WORK/g.err")"

# ================================================================ the heartbeat's cost
# 100,000 calls to trainenv.heartbeat() with the library already loaded:
# the system calls made are those of the same loop without the calls.
cat >"$TE_WORK/hb_count.py" <<'PY'
import sys
import trainenv
trainenv._library()
f = trainenv.heartbeat if sys.argv[2] == "1" else (lambda: None)
for _ in range(int(sys.argv[1])):
    f()
PY
count_syscalls() { # BEAT(0|1)
	env -u TRAINENV_STALL strace -f -c -o "$TE_WORK/strace.$1" /usr/bin/python3 "$TE_WORK/hb_count.py" 100000 "$1" &&
		awk '$NF == "total" { print $4 }' "$TE_WORK/strace.$1"
}
without=$(count_syscalls 0)
with=$(count_syscalls 1)
[ -n "$without" ] && [ -n "$with" ] && [ $((with - without)) -lt 50 ]
ok $? "100,000 heartbeats make no system call: $with system calls with them, $without without"
