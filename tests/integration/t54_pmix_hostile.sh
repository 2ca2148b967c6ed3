#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# PMIx layer, the launch coordinator against other users (issue 11): rank
# 0's node runs a TCP coordinator that every node's helper registers with.
# While n3 starts 7 s late (test hook TRAINENV_TEST_DELAY), a process of
# user nobody on n1 holds 100 idle connections to the coordinator (more
# than its pool of strangers, 64: it opens a new one for each that is
# dropped) and sends garbage on a new connection every 20 ms. The launch
# still succeeds with every rank, at most 2 s later than without the
# attack; no stranger's connection lives past about a second, garbage is
# dropped at once, and rank 0's helper does not spin. A helper whose first
# connection is cut before it registered (test hook
# TRAINENV_TEST_COORD_CUT: the coordinator cuts its first connections as a
# flood of strangers could) tries again and gets in.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/pmix_common.sh
. "$here/../lib/pmix_common.sh"

# A test of the PMIx layer: its steps run under srun --mpi=pmix.
te_require_mpi_pmix

plan 24

cluster_up --nodes 3 || bail_out "no cluster"
ok 0 "cluster is up"
te_build_init
pmix_plugstack

# The coordinator's listener on n1: "PORT PID" of trainenv-rdzv's TCP
# listening socket (the helper listens on nothing else).
coord_listener() {
	cluster_exec n1 ss -ltnpH 2>/dev/null |
		awk '/"trainenv-rdzv"/ { n = split($4, a, ":"); p = $0;
			sub(/.*pid=/, "", p); sub(/,.*/, "", p); print a[n], p; exit }'
}
# CPU seconds (user + system) process PID has used so far.
cpu_of() {
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.2f\n", ($12 + $13) / hz }' "/proc/$1/stat" 2>/dev/null
}

# The attacker: another user's process, started inside n1 (its own
# network namespace), as nobody. It prints what it saw when the
# coordinator is gone (refused) or after SECS.
cat >hostile.py <<'PY'
import os, selectors, socket, sys, time
addr, port, secs, nidle = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
garbage = [b"GET / HTTP/1.0\r\n\r\n", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
           b"TEBAR1 " + b"0" * 32 + b" arrived 0 n1\n", b"TEBAR1 zzzz", b"\x00" * 16,
           os.urandom(48)]
sel = selectors.DefaultSelector()
conns = {}
st = dict(opened=0, refused=0, idle_dropped=0, idle_max_age=0.0, garbage=0,
          garbage_dropped=0, garbage_max_age=0.0, held_max=0)
def dial():
    try:
        s = socket.create_connection((addr, port), timeout=1)
    except ConnectionRefusedError:
        st["refused"] += 1
        return None
    except OSError:
        return None
    s.setblocking(False)
    sel.register(s, selectors.EVENT_READ)
    st["opened"] += 1
    return s
end, nidle_now, gi, next_garbage, refused_run = time.monotonic() + secs, 0, 0, 0.0, 0
while time.monotonic() < end and refused_run < 3:
    now = time.monotonic()
    while nidle_now < nidle:
        s = dial()
        if s is None:
            refused_run += 1
            break
        refused_run = 0
        conns[s] = ("idle", time.monotonic())    # its own: dials take time
        nidle_now += 1
    st["held_max"] = max(st["held_max"], nidle_now)
    if now >= next_garbage:
        s = dial()
        if s is not None:
            try:
                s.send(garbage[gi % len(garbage)])
            except OSError:
                pass
            conns[s] = ("garbage", time.monotonic())
            st["garbage"] += 1
            gi += 1
        next_garbage = now + 0.02
    for key, _ in sel.select(0.005):
        s = key.fileobj
        try:
            if s.recv(4096):
                continue    # the coordinator says nothing to strangers
        except OSError:
            pass
        kind, t = conns.pop(s)
        age = time.monotonic() - t
        sel.unregister(s)
        s.close()
        st[kind + "_dropped"] += 1
        st[kind + "_max_age"] = max(st[kind + "_max_age"], age)
        if kind == "idle":
            nidle_now -= 1
for k, v in st.items():
    print(k, round(v, 2) if isinstance(v, float) else v, flush=True)
PY
chmod 644 hostile.py
n1addr=$(node_addr n1)

# ---------------------------------------------------------------- without the attack
te_seconds eval 'out=$(TRAINENV_TEST_DELAY=n3:7 te_srun -t 60 --mpi=pmix -N3 \
	--ntasks-per-node=2 --train-barrier=20 sh -c "echo ran" 2>&1)'
base=$TE_SECONDS
is "$(count_lines "$out" '^ran$')" 6 "n3 7 s late, no attack: all six tasks run ($base s)" || diag "$out"

# ---------------------------------------------------------------- under attack
# attack NIDLE: the launch above, with the attacker on n1 from the moment
# rank 0's coordinator listens. Sets RC, SECS, OUT, CPU (rank 0's helper's
# CPU seconds from 1 s to 4 s into the attack) and the attacker's log.
attack() { # NIDLE
	local step listen port rpid attacker cpu0 cpu1 _
	rm -f attack.rc hostile.log
	(te_seconds eval 'TRAINENV_TEST_DELAY=n3:7 te_srun -t 60 --mpi=pmix -N3 \
		--ntasks-per-node=2 --train-barrier=20 sh -c "echo ran" >attack.out 2>&1'
		echo "$? $TE_SECONDS" >attack.rc) &
	step=$!
	listen=
	for _ in $(seq 100); do
		listen=$(coord_listener)
		[ -n "$listen" ] && break
		sleep 0.1
	done
	read -r port rpid <<<"${listen:-- -}"
	[ -n "$listen" ]
	ok $? "$1 idle: rank 0's coordinator listens on n1 (port $port, helper pid $rpid)"
	cluster_exec n1 setpriv --reuid=nobody --regid=nogroup --clear-groups \
		/usr/bin/python3 "$TE_WORK/hostile.py" "$n1addr" "$port" 30 "$1" >hostile.log 2>&1 &
	attacker=$!
	te_on_exit "kill $attacker 2>/dev/null"
	sleep 1
	cpu0=$(cpu_of "$rpid")
	sleep 3		# n3 arrives about 7 s into the step: the helper still waits
	cpu1=$(cpu_of "$rpid")
	CPU=$(awk -v a="${cpu0:-x}" -v b="${cpu1:-x}" 'BEGIN { if (a != "x" && b != "x") print b - a }')
	for _ in $(seq 600); do kill -0 "$step" 2>/dev/null || break; sleep 0.1; done
	wait "$step"
	read -r RC SECS <attack.rc
	for _ in $(seq 100); do kill -0 "$attacker" 2>/dev/null || break; sleep 0.1; done
	wait "$attacker"
	OUT=$(cat attack.out)
	diag "attacker, $1 idle: $(tr '\n' ' ' <hostile.log)"
}
seen() { awk -v k="$1" '$1 == k { print $2 }' hostile.log; }
launched() { # WHAT
	is "$RC" 0 "$1: the launch succeeds" || diag "$OUT"
	is "$(count_lines "$OUT" '^ran$')" 6 "$1: with every rank, all six tasks run" || diag "$OUT"
	awk -v a="$SECS" -v b="$base" 'BEGIN { exit !(a < b + 2) }'
	ok $? "$1: at most 2 s later than without the attack ($SECS s against $base s)"
}

# 50 idle connections, each opened again when dropped, fit the pool:
# they meet the strangers' deadline.
attack 50
launched "50 idle, garbage"
awk -v n="$(seen opened)" 'BEGIN { exit !(n >= 50) }'
ok $? "the attacker, user nobody, connected to the coordinator ($(seen opened) connections)"
awk -v t="$(seen idle_max_age)" 'BEGIN { exit !(t != "" && t >= 0.9 && t < 2) }'
ok $? "idle strangers are dropped after about a second (longest $(seen idle_max_age) s)"
awk -v n="$(seen garbage)" -v d="$(seen garbage_dropped)" 'BEGIN { exit !(n >= 20 && d >= n - 1) }'
ok $? "every garbage connection was dropped ($(seen garbage_dropped) of $(seen garbage))"
awk -v t="$(seen garbage_max_age)" 'BEGIN { exit !(t != "" && t < 0.5) }'
ok $? "at once (longest $(seen garbage_max_age) s)"
awk -v t="${CPU:-x}" 'BEGIN { exit !(t != "x" && t < 0.5) }'
ok $? "rank 0's helper does not spin under attack (${CPU:-?} s of CPU in 3 s)"

# 100 idle connections: more than the pool holds; each new one pushes out
# the oldest, and the attacker opens another at once (a churn as fast as
# it can connect). n3's helper still gets in.
attack 100
launched "100 idle, garbage"
is "$(seen held_max)" 100 "the attacker held 100 idle connections at once (more than the pool of 64)"
awk -v n="$(seen idle_dropped)" -v o="$(seen opened)" 'BEGIN { exit !(n > 100 && o > 200) }'
ok $? "the coordinator kept pushing the oldest out ($(seen idle_dropped) dropped of $(seen opened))"
awk -v t="${CPU:-x}" 'BEGIN { exit !(t != "x" && t < 2.5) }'
ok $? "rank 0's helper's CPU follows the attacker's pace, no spin (${CPU:-?} s of CPU in 3 s)"
is "$(leftovers 'trainenv-rdzv|hostile\.py')" "" "no helper or attacker process is left on any node"

# ---------------------------------------------------------------- cut before registering
# Rank 0's coordinator cuts the first two connections it accepts: n2's and
# n3's first tries. Each tries again and gets in.
te_seconds eval 'out=$(TRAINENV_TEST_COORD_CUT=n1:2 te_srun -t 60 --mpi=pmix -N3 \
	--ntasks-per-node=2 --train-barrier=20 sh -c "echo ran" 2>&1)'
rc=$?
ok $rc "helpers whose first connection is cut: the launch succeeds" || diag "$out"
is "$(count_lines "$out" '^ran$')" 6 "all six tasks run" || diag "$out"
like "$out" "test hook TRAINENV_TEST_COORD_CUT: rank 0's coordinator cut 2 connections" \
	"the coordinator did cut two connections"
awk -v t="$TE_SECONDS" 'BEGIN { exit !(t < 5) }'
ok $? "and the helpers got in again at once ($TE_SECONDS s for the step)"
is "$(leftovers 'trainenv-rdzv')" "" "no helper is left on any node"

done_testing
