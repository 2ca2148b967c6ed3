#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The first-failure report against other users and a silent network (issue
# 11, findings 1 and 2), and SrunPortRange, on the real cluster:
#   (a) user nobody holds 50 idle connections and sends garbage on 10 more
#       to srun's report port, reconnecting whenever one is closed: a task
#       fails, srun still prints the real report and ends within 3 s of it.
#   (b) srun's report port is blackholed on n1 (packets to it wait in a
#       queue that never drains: the port "never answers"), 24 tasks on n1
#       fail at once: the step ends within 6 s (was one second per task,
#       one after another, in slurmstepd), n1 is not drained, and its slurmd
#       log says the reports were not delivered. Without the blackhole all
#       24 reports arrive.
#   (c) with SrunPortRange in the slurm.conf srun reads, the report port lies
#       inside that range.
# Single-quoted $VARS are for the tasks' shells:
# shellcheck disable=SC2016
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"

plan 18

te_build_init
cluster_up --nodes 3 || bail_out "no cluster"
ok 0 "cluster is up, plugin $TE_PLUGIN"
# shellcheck disable=SC2119 # no policy: the built-ins
use_trainenv
NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
report_re='^trainenv: rank [0-9]+ \(node n[0-9], local rank [0-9]+\) '
now_ms() { date +%s%3N; }

# A task script: rank 0 writes "PORT:TOKEN HOST JOB STEP" to FILE, every
# task waits for GO, then the ranks given fail with code 3.
wait_task() { # FILE GO FAILING-RANKS-REGEX
	printf '%s' "[ \$SLURM_PROCID != 0 ] || { echo \"\$TRAINENV_REPORT \$SLURM_SRUN_COMM_HOST \$SLURM_JOB_ID \$SLURM_STEP_ID\" >$1.tmp && mv $1.tmp $1; }
n=0; while [ ! -e $2 ] && [ \$n -lt 600 ]; do sleep 0.05; n=\$((n + 1)); done
echo \$SLURM_PROCID | grep -qE '^($3)\$' && exit 3; exit 0"
}

# ================================================================ (a) idle and garbage connections
cat >"$TE_WORK/hold.py" <<'EOF'
# Holds IDLE idle connections and GARBAGE ones that sent junk to 127.0.0.1:
# PORT, opening a new one whenever one is closed, for SECS seconds. Prints
# how many connections it has made so far, a line each round.
import os, socket, sys, time
port, idle, garbage, secs = (int(a) for a in sys.argv[1:5])
end = time.time() + secs
made = 0
conns = []

def connect(junk):
    global made
    s = socket.socket()
    s.settimeout(0.5)
    try:
        s.connect(("127.0.0.1", port))
    except OSError:
        return None
    made += 1
    try:
        if junk:
            s.send(b"GET / HTTP/1.0\r\n\r\n" if made % 2 else os.urandom(200))
    except OSError:
        pass
    s.setblocking(False)
    return (s, junk)

while time.time() < end:
    alive = []
    for s, junk in conns:
        try:
            if s.recv(1) == b"":
                s.close()
                continue
        except BlockingIOError:
            pass
        except OSError:
            s.close()
            continue
        alive.append((s, junk))
    conns = alive
    while sum(1 for _, j in conns if not j) < idle and time.time() < end:
        c = connect(False)
        if not c:
            break
        conns.append(c)
    while sum(1 for _, j in conns if j) < garbage and time.time() < end:
        c = connect(True)
        if not c:
            break
        conns.append(c)
    print(made, flush=True)
    time.sleep(0.05)
EOF
chmod 644 "$TE_WORK/hold.py"
rm -f "$TE_WORK/a.port" "$TE_WORK/a.go"
te_srun -t 40 -N2 -w n[1-2] sh -c "$(wait_task "$TE_WORK/a.port" "$TE_WORK/a.go" 1)" >"$TE_WORK/a.out" 2>&1 &
srun_pid=$!
wait_for_file "$TE_WORK/a.port" 20
ok $? "(a) the step runs and says its report port"
read -r report _ <"$TE_WORK/a.port" 2>/dev/null
port=${report%%:*}
"${NOBODY[@]}" /usr/bin/python3 "$TE_WORK/hold.py" "${port:-1}" 50 10 25 >"$TE_WORK/a.hold" 2>&1 &
hold_pid=$!
te_on_exit "kill $hold_pid 2>/dev/null"
sleep 2	# the stranger's connections are in place
touch "$TE_WORK/a.go"
t0=$(now_ms)
wait "$srun_pid"
rc=$?
t1=$(now_ms)
kill "$hold_pid" 2>/dev/null
wait "$hold_pid" 2>/dev/null
out=$(cat "$TE_WORK/a.out")
diag "srun ended $((t1 - t0)) ms after the tasks were told to end (exit $rc); nobody made $(tail -n1 "$TE_WORK/a.hold" 2>/dev/null) connections"
[ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] && [ $((t1 - t0)) -le 3000 ]
ok $? "(a) with nobody's 60 connections on its report port, srun ends within 3 s of the tasks ($((t1 - t0)) ms, exit $rc)"
like "$out" '^trainenv: rank 1 \(node n2, local rank 0\) exited with code 3 at .*: the first failure of this step$' \
	"(a) and prints the real report" || diag "$out"
[ "$(tail -n1 "$TE_WORK/a.hold" 2>/dev/null)" -ge 60 ] 2>/dev/null
ok $? "(a) nobody's connections were made (not a test of an empty port)"

# ================================================================ (b) a port that never answers
n1_log=$TE_CLUSTER_DIR/log/slurmd.n1.log
blackhole_off() { cluster_exec n1 tc qdisc del dev eth0 root >/dev/null 2>&1; }
te_on_exit blackhole_off
rm -f "$TE_WORK/b.port" "$TE_WORK/b.go"
log_from=$(stat -c %s "$n1_log" 2>/dev/null || echo 0)
te_srun -t 90 -N1 -n24 -O -w n1 sh -c "$(wait_task "$TE_WORK/b.port" "$TE_WORK/b.go" '[0-9]+')" >"$TE_WORK/b.out" 2>&1 &
srun_pid=$!
wait_for_file "$TE_WORK/b.port" 20
ok $? "(b) 24 tasks run on n1"
read -r report host job stepid <"$TE_WORK/b.port" 2>/dev/null
port=${report%%:*}
# On n1, everything sent to srun's report port goes into a queue served at
# 8 bits a second, filled first: a connection there never completes.
cluster_exec n1 sh -c "tc qdisc add dev eth0 root handle 1: htb default 1 r2q 1000000 &&
	tc class add dev eth0 parent 1: classid 1:1 htb rate 10gbit &&
	tc class add dev eth0 parent 1: classid 1:2 htb rate 8bit ceil 8bit burst 1 cburst 1 &&
	tc filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip dport ${port:-1} 0xffff flowid 1:2" 2>&1 | grep -v '^Warning' >&2
cluster_exec n1 bash -c "for i in \$(seq 20); do head -c 1000 /dev/zero >/dev/udp/$host/${port:-1}; done" 2>/dev/null
cluster_exec n1 timeout 2 bash -c "exec 3<>/dev/tcp/$host/${port:-1}" 2>/dev/null
[ $? -eq 124 ]
ok $? "(b) from n1, srun's report port ($host:$port) does not answer"
touch "$TE_WORK/b.go"
t0=$(now_ms)
wait "$srun_pid"
rc=$?
t1=$(now_ms)
out=$(cat "$TE_WORK/b.out")
diag "the step ended $((t1 - t0)) ms after its 24 tasks were told to fail (exit $rc)"
[ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] && [ $((t1 - t0)) -le 6000 ]
ok $? "(b) 24 tasks fail on n1, srun's port silent: the step ends within 6 s ($((t1 - t0)) ms)"
# srun says it in one line, or in several when the tasks' ends reach it
# at different times ("tasks 0-2,4-16,18-23", then "tasks 3,17")
failed=$(printf '%s\n' "$out" | sed -nE 's/^srun: error: n1: tasks? ([0-9,-]+): Exited with exit code 3$/\1/p' |
	tr ',' '\n' | awk -F- '{ e = NF > 1 ? $2 : $1; for (i = $1; i <= e; i++) print i }' | sort -n | uniq | tr '\n' ' ')
is "$failed" "$(seq -s ' ' 0 23) " "(b) srun says each of the 24 tasks exited with code 3" || diag "$out"
blackhole_off
wait_nodes_idle 30
state=$(timeout 10 sinfo -h -n n1 -o %T 2>&1)
like "$state" '^idle$' "(b) n1 is not drained (state $state)"
for _ in $(seq 50); do
	tail -c +"$((log_from + 1))" "$n1_log" 2>/dev/null | grep -q "of step $job.$stepid not delivered" && break
	sleep 0.1
done
logged=$(tail -c +"$((log_from + 1))" "$n1_log" 2>/dev/null | grep "not delivered to srun")
like "$logged" "failure reports of step $job\\.$stepid not delivered to srun: srun did not answer in time at $host:$port" \
	"(b) n1's slurmd log says the reports were not delivered, once for the step" || diag "$logged"

# The same 24 failures with srun answering: every one is reported.
t0=$(now_ms)
out=$(te_srun -t 60 -N1 -n24 -O -w n1 sh -c 'exit 3' 2>&1)
t1=$(now_ms)
is "$(printf '%s\n' "$out" | grep -cE "$report_re")" 24 "(b) srun answering: 24 failed tasks on a node, 24 report lines ($((t1 - t0)) ms)"
is "$(printf '%s\n' "$out" | grep -cE "$report_re.*: the first failure of this step$")" 1 "(b) one of them the first"

# ================================================================ (c) SrunPortRange
# slurm.conf as srun reads it (SLURM_CONF), with a range below the
# ephemeral ports, where a port the kernel picks never lies.
conf=$TE_WORK/slurm-portrange.conf
{ cat "$SLURM_CONF"; echo "SrunPortRange=20100-20199"; } >"$conf"
chmod 644 "$conf"
out=$(SLURM_CONF=$conf te_srun -t 60 -N2 -w n[1-2] sh -c '[ $SLURM_PROCID = 0 ] && echo "report=$TRAINENV_REPORT"; [ $SLURM_PROCID = 0 ] || exit 4' 2>&1)
port=$(printf '%s\n' "$out" | sed -n 's/^report=\([0-9]*\):.*/\1/p')
[ -n "$port" ] && [ "$port" -ge 20100 ] && [ "$port" -le 20199 ]
ok $? "(c) SrunPortRange=20100-20199: the report port ($port) lies inside it" || diag "$out"
like "$out" '^trainenv: rank 1 \(node n2, local rank 0\) exited with code 4 at .*: the first failure of this step$' \
	"(c) and the report comes through it"
# The range as srun itself loaded it: here from an Include file, as from
# slurmctld on a configless login node (the file is then under
# /run/slurm/conf, not SLURM_CONF): never from reading slurm.conf again.
echo "SrunPortRange=20200-20299" >"$TE_WORK/portrange.inc"
{ cat "$SLURM_CONF"; echo "Include $TE_WORK/portrange.inc"; } >"$conf"
chmod 644 "$conf" "$TE_WORK/portrange.inc"
out=$(SLURM_CONF=$conf te_srun -t 60 -N2 -w n[1-2] sh -c '[ $SLURM_PROCID = 0 ] && echo "report=$TRAINENV_REPORT"; [ $SLURM_PROCID = 0 ] || exit 4' 2>&1)
port=$(printf '%s\n' "$out" | sed -n 's/^report=\([0-9]*\):.*/\1/p')
[ -n "$port" ] && [ "$port" -ge 20200 ] && [ "$port" -le 20299 ]
ok $? "(c) SrunPortRange=20200-20299 from an Include file: the report port ($port) lies inside it" || diag "$out"
like "$out" '^trainenv: rank 1 \(node n2, local rank 0\) exited with code 4 at .*: the first failure of this step$' \
	"(c) and the report comes through it"
out=$(te_srun -t 60 -N1 -w n1 sh -c 'echo "report=$TRAINENV_REPORT"' 2>&1)
port=$(printf '%s\n' "$out" | sed -n 's/^report=\([0-9]*\):.*/\1/p')
[ -n "$port" ] && { [ "$port" -lt 20100 ] || [ "$port" -gt 20299 ]; }
ok $? "(c) without it, any port ($port)"

done_testing
