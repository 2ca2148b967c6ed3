#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 3.1 on the real cluster, with a real terminal: a step whose srun
# runs in a tmux session keeps running to its end when the session is
# killed (--train-sighup=shield, the built-in, whose tasks keep Slurm's
# signal dispositions; and =ignore, whose tasks also ignore SIGHUP), and is
# killed as before with --train-sighup=default; the same for
# `nohup srun ... &` and kill -HUP.
# Ctrl-C (once: status, twice: abort), Ctrl-Z/fg, SIGTSTP by kill (then fg,
# or SIGCONT by kill) and scancel behave as Slurm documents, with --pty too
# (whose raw terminal sends a typed Ctrl-Z to the task); `srun | cat`
# survives the terminal; --pty and --train=off are not shielded; srun's own
# --ignore-signals (26.05) works through the shield and without it. An srun
# that runs threads before trainenv's init_post_opt (as Slurm 26.05's does;
# here a test plugin's) is shielded as well.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"

plan 118

te_build_init
cluster_up --nodes 3 || bail_out "no cluster"
command -v tmux >/dev/null || bail_out "tmux is needed (tests/deps.sh installs it)"
ok 0 "cluster is up, plugin $TE_PLUGIN"
use_trainenv

# task.sh NAME SECS: tick_task_write's task (tests/lib/itest.sh).
task=$TE_WORK/task.sh
tick_task_write "$task"
# A shielded srun outlives its killed terminal by design: if this test stops
# early, cancel every job it started (rank 0 recorded their ids).
# shellcheck disable=SC2016 # evaluated at exit
te_on_exit 'for f in "$TE_WORK"/*.job; do [ -s "$f" ] && scancel "$(cat "$f")" 2>/dev/null; done'

started() { # NAME: both ranks started (30 s)
	wait_for_file "$TE_WORK/$1.start.0" 30 && wait_for_file "$TE_WORK/$1.start.1" 30
}
finished() { # NAME: both ranks wrote their result (30 s)
	wait_for_file "$TE_WORK/$1.done.0" 30 && wait_for_file "$TE_WORK/$1.done.1" 30
}
job_of() { cat "$TE_WORK/$1.job" 2>/dev/null; }
# The job has ended (30 s) and no rank wrote a result; no srun or task of
# this run is left.
killed() { # NAME
	local st
	st=$(wait_job_done "$(job_of "$1")" 30) || return 1
	sleep 0.5
	[ "$st" != COMPLETED ] && [ ! -e "$TE_WORK/$1.done.0" ] && [ ! -e "$TE_WORK/$1.done.1" ] &&
		wait_gone "$task $1 " 15
}
# The processes whose command line matches PATTERN, parents first: "PID
# PPID SID ROLE", ROLE being top (its parent does not match), child (of
# top) or grandchild.
proc_tree() { # PATTERN
	local p pp sid
	declare -A parent=()
	for p in $(pgrep -f -- "$1"); do
		read -r pp sid < <(ps -o ppid=,sid= -p "$p")
		[ -n "$pp" ] && parent[$p]="$pp $sid"
	done
	for p in $(printf '%s\n' "${!parent[@]}" | sort -n); do
		read -r pp sid <<<"${parent[$p]}"
		if [ -z "${parent[$pp]:-}" ]; then
			echo "$p $pp $sid top"
		elif [ -z "${parent[${parent[$pp]%% *}]:-}" ]; then
			echo "$p $pp $sid child"
		else
			echo "$p $pp $sid grandchild"
		fi
	done
}
# A session with an interactive shell that runs srun: CMD is typed.
in_tmux() { # NAME CMD
	tmux_shell "$1" && tmux_type "$1" "$2"
}
# True when SESSION's screen shows a line matching REGEX within SECS: the
# tasks' output is flowing to the terminal.
screen_shows() { # SESSION REGEX SECS
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		tmux_screen "$1" | grep -Eq -- "$2" && return 0
		sleep 0.1
	done
	return 1
}
ticks='tick [0-9]+ of rank'
rc_of() { # NAME: the "rc=N" line the typed command wrote (30 s)
	wait_for_file "$TE_WORK/$1.rc" 30 && sed -n 's/^rc=//p' "$TE_WORK/$1.rc"
}

# ---------------------------------------------------------------- tmux killed
in_tmux kill-ignore "srun -N2 $task kill-ignore 3; echo rc=\$? >kill-ignore.rc"
started kill-ignore
ok $? "tmux: srun started the step (built-in sighup=shield)"
! sig_ignored "$(std_sigign <"$TE_WORK/kill-ignore.sigign.0")" 1
ok $? "built-in sighup=shield: the task does not ignore SIGHUP (Slurm's dispositions)"
screen_shows kill-ignore "$ticks" 15
ok $? "tmux: the tasks' output reaches the terminal"
te_tmux kill-session -t kill-ignore
! te_tmux has-session -t kill-ignore 2>/dev/null
ok $? "tmux: the session (the terminal) is gone"
finished kill-ignore
ok $? "tmux killed: both ranks ran to their end and wrote their result"
is "$(wait_job_done "$(job_of kill-ignore)" 30)" COMPLETED "tmux killed: the job COMPLETED"
[ ! -e "$TE_WORK/kill-ignore.rc" ]
ok $? "tmux killed: the shell in the terminal did die (it never wrote srun's status)"

in_tmux kill-default "srun -N2 --train-sighup=default $task kill-default 3; echo rc=\$? >kill-default.rc"
started kill-default
ok $? "tmux, --train-sighup=default: the step started"
screen_shows kill-default "$ticks" 15
te_tmux kill-session -t kill-default
killed kill-default
ok $? "tmux killed, --train-sighup=default: the step was killed (Slurm's behaviour): no result, no task left"
diag "job state: $(wait_job_done "$(job_of kill-default)" 5)"

# ---------------------------------------------------------------- nohup + kill -HUP
nohup_run() { # NAME SRUN_ARGS...: runs nohup srun in the background; sets pid
	local name=$1
	shift
	nohup srun "$@" "$task" "$name" 2 >"$TE_WORK/$name.out" 2>&1 &
	pid=$!
	te_on_exit "kill -KILL $pid 2>/dev/null"
}
# Waits (30 s) for pid to end; sets rc.
reap() {
	local i
	for ((i = 0; i < 300; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then rc=timeout; return 1; fi
	wait "$pid"
	rc=$?
}

nohup_run hup-ignore -N2
started hup-ignore
ok $? "nohup srun &: the step started"
kill -HUP "$pid"
reap
is "$rc" 0 "nohup srun & + kill -HUP (built-in sighup=shield): srun exits 0"
finished hup-ignore
ok $? "nohup srun & + kill -HUP: both ranks wrote their result"

nohup_run hup-default -N2 --train-sighup=default
started hup-default
ok $? "nohup srun --train-sighup=default &: the step started"
kill -HUP "$pid"
reap
is "$rc" 137 "kill -HUP, --train-sighup=default: srun kills the tasks and exits 137 (Slurm's behaviour)"
like "$(cat "$TE_WORK/hup-default.out")" 'srun: forcing job termination' "srun said it forced the job's termination"
killed hup-default
ok $? "kill -HUP, --train-sighup=default: no result, no task left"

nohup_run hup-off -N2 --train=off
started hup-off
ok $? "nohup srun --train=off &: the step started"
kill -HUP "$pid"
reap
is "$rc" 137 "kill -HUP, --train=off: no shield, srun exits 137"
killed hup-off
ok $? "kill -HUP, --train=off: no result, no task left"

use_trainenv sighup=ignore enforce=sighup
nohup_run hup-enforced -N2 --train-sighup=default
started hup-enforced
ok $? "enforce=sighup, nohup srun --train-sighup=default &: the step started"
kill -HUP "$pid"
reap
is "$rc" 0 "kill -HUP with the site enforcing sighup=ignore: srun exits 0 despite --train-sighup=default"
finished hup-enforced
ok $? "enforce=sighup: both ranks wrote their result"
sig_ignored "$(std_sigign <"$TE_WORK/hup-enforced.sigign.0")" 1
ok $? "sighup=ignore: the tasks start with SIGHUP ignored"
use_trainenv

# ---------------------------------------------------------------- Ctrl-C
# srun(1): "<control-c> will report the state of all tasks associated with
# the srun command. If <control-c> is entered twice within one second, then
# the associated SIGINT signal will be sent to all tasks and a termination
# sequence will be entered". The shielded srun must do exactly what the
# unshielded one does.
# Slurm 26.05 takes a second Ctrl-C for "within 1 sec" only when both fall
# in the same second of the clock (it compares whole seconds; 22.05 within
# 1 s of each other): the first goes early in a second.
second_start() { while (( 10#$(date +%N) > 250000000 )); do sleep 0.02; done; }
ctrl_c() { # NAME COUNT SRUN_ARGS...
	local name=$1 count=$2 k
	shift 2
	# 4 s of ticks: still running after the waits below on a busy CPU
	in_tmux "$name" "srun -N2 $* $task $name 4 2>$name.err; echo rc=\$? >$name.rc"
	started "$name" || return 1
	screen_shows "$name" "$ticks" 15 || return 1
	second_start
	for ((k = 0; k < count; k++)); do
		te_tmux send-keys -t "$name" C-c
		sleep 0.2
	done
}

for mode in shield default; do
	ctrl_c "int1-$mode" 1 "--train-sighup=$mode"
	ok $? "Ctrl-C once ($mode): the step started, its output flows, Ctrl-C sent"
	rc=$(rc_of "int1-$mode")
	is "$rc" 0 "Ctrl-C once ($mode): srun carries on and exits 0"
	err=$(cat "$TE_WORK/int1-$mode.err")
	like "$err" '^srun: interrupt \(one more within 1 sec to abort\)$' "Ctrl-C once ($mode): srun says one more within 1 s aborts"
	like "$err" '^srun: StepId=[0-9]+\.0 tasks 0-1: running$' "Ctrl-C once ($mode): srun reports the state of the tasks"
	finished "int1-$mode"
	ok $? "Ctrl-C once ($mode): both ranks ran to their end"

	ctrl_c "int2-$mode" 2 "--train-sighup=$mode"
	ok $? "Ctrl-C twice ($mode): the step started, its output flows, Ctrl-C sent twice"
	rc=$(rc_of "int2-$mode")
	# srun forwards SIGINT and at once forces the step's termination
	# (SIGKILL): a task dies of whichever arrives first, and srun exits
	# 130 or 137 accordingly, shielded or not.
	[ "$rc" = 130 ] || [ "$rc" = 137 ]
	ok $? "Ctrl-C twice ($mode): srun exits 130 or 137 (status $rc)"
	err=$(cat "$TE_WORK/int2-$mode.err")
	like "$err" '^srun: sending Ctrl-C to StepId=[0-9]+\.0$' "Ctrl-C twice ($mode): srun sends Ctrl-C to the step"
	like "$err" '^srun: forcing job termination$' "Ctrl-C twice ($mode): and forces the step's termination"
	is "$(printf '%s\n' "$err" | grep -cE '^trainenv: rank [01] \(node n[12], local rank 0\) was killed by signal (2 \(SIGINT\)|9 \(SIGKILL\))')" 2 "Ctrl-C twice ($mode): the first-failure report names SIGINT or SIGKILL for both ranks" || diag "$err"
	killed "int2-$mode"
	ok $? "Ctrl-C twice ($mode): no result, no task left"
	te_tmux kill-session -t "int1-$mode" 2>/dev/null
	te_tmux kill-session -t "int2-$mode" 2>/dev/null
done

# ---------------------------------------------------------------- Ctrl-Z, fg
in_tmux stop "srun -N2 $task stop 3"
started stop
ok $? "Ctrl-Z: the step started"
screen_shows stop "$ticks" 15
te_tmux send-keys -t stop C-z
for ((i = 0; i < 50; i++)); do tmux_screen stop | grep -q 'Stopped' && break; sleep 0.1; done
like "$(tmux_screen stop)" 'Stopped +srun -N2' "Ctrl-Z: the shell reports srun stopped"
tmux_type stop "fg; echo rc=\$? >stop.rc"
is "$(rc_of stop)" 0 "fg: srun resumes and exits 0"
finished stop
ok $? "Ctrl-Z, fg: both ranks ran to their end"
te_tmux kill-session -t stop

# ---------------------------------------------------------------- SIGTSTP by kill, --pty
# A stop signal sent to srun (the pid the user sees: the shield's when
# shielded; srun's own with --pty, which is not shielded), then the shell's
# fg (SIGCONT): srun stops, the shell says so, srun goes on and the step
# ends as it would have. The tasks run on meanwhile.
srun_of() { # PATTERN: the srun that runs the step (the shield's child)
	proc_tree "$1" | awk '$4 == "top" { t = $1 } $4 == "child" && !c { c = $1 } END { print (c ? c : t) }'
}
for mode in shield pty; do
	name=tstp-$mode
	if [ "$mode" = pty ]; then
		in_tmux "$name" "srun -N1 --pty $task $name 4"
		wait_for_file "$TE_WORK/$name.start.0" 30
	else
		in_tmux "$name" "srun -N2 $task $name 4"
		started "$name"
	fi
	ok $? "SIGTSTP to srun ($mode): the step started"
	screen_shows "$name" "$ticks" 15
	if [ "$mode" = pty ]; then pat="srun -N1 --pty $task $name"; else pat="srun -N2 $task $name"; fi
	read -r top _ < <(proc_tree "$pat" | awk '$4 == "top"')
	run=$(srun_of "$pat")
	[ "$mode" = pty ] && run=$top
	kill -TSTP "${top:-0}"
	for ((i = 0; i < 50; i++)); do tmux_screen "$name" | grep -q 'Stopped' && break; sleep 0.1; done
	like "$(tmux_screen "$name")" "Stopped +srun -N[12]" "SIGTSTP to srun ($mode): the shell reports srun stopped"
	like "$(ps -o stat= -p "${run:-0}")" '^T' "SIGTSTP to srun ($mode): srun itself is stopped"
	tmux_type "$name" "fg; echo rc=\$? >$name.rc"
	is "$(rc_of "$name")" 0 "SIGTSTP, fg ($mode): srun resumes and exits 0"
	[ -e "$TE_WORK/$name.done.0" ] && { [ "$mode" = pty ] || [ -e "$TE_WORK/$name.done.1" ]; } &&
		[ "$(wait_job_done "$(job_of "$name")" 30)" = COMPLETED ]
	ok $? "SIGTSTP, fg ($mode): the ranks ran to their end, the job COMPLETED"
	te_tmux kill-session -t "$name"
done

# SIGTSTP and SIGCONT both from outside (no fg): the shield passes the
# continue on to srun, which finishes in the background.
in_tmux tstp-cont "srun -N2 $task tstp-cont 6"
started tstp-cont
screen_shows tstp-cont "$ticks" 15
read -r top _ < <(proc_tree "srun -N2 $task tstp-cont" | awk '$4 == "top"')
run=$(srun_of "srun -N2 $task tstp-cont")
kill -TSTP "${top:-0}"
for ((i = 0; i < 50; i++)); do tmux_screen tstp-cont | grep -q 'Stopped' && break; sleep 0.1; done
kill -CONT "${top:-0}"
sleep 0.5
st=$(ps -o stat= -p "${run:-0}")
[ -n "$st" ] && [[ "$st" != T* ]]
ok $? "SIGTSTP then SIGCONT by kill (shield): srun runs again (state $st)"
tmux_type tstp-cont "wait %1; echo rc=\$? >tstp-cont.rc"
rc=$(rc_of tstp-cont)
[ "$rc" = 0 ] && finished tstp-cont
ok $? "SIGTSTP then SIGCONT by kill (shield): srun exits 0 (rc=$rc), both ranks ran to their end"
te_tmux kill-session -t tstp-cont

# Ctrl-Z typed under --pty: srun's terminal is raw, so ^Z goes to the
# task's terminal on the node (Slurm's behaviour), where it stops nothing
# (the task leads an orphaned process group): srun is not stopped.
in_tmux pty-z "srun -N1 --pty $task pty-z 3; echo rc=\$? >pty-z.rc"
wait_for_file "$TE_WORK/pty-z.start.0" 30
screen_shows pty-z "$ticks 0" 15
run=$(proc_tree "srun -N1 --pty $task pty-z" | awk '$4 == "top" { print $1 }')
te_tmux send-keys -t pty-z C-z
sleep 1
st=$(ps -o stat= -p "${run:-0}")
[ -n "$st" ] && [[ "$st" != T* ]] && ! tmux_screen pty-z | grep -q Stopped
ok $? "--pty, Ctrl-Z typed: srun is not stopped (state $st): ^Z goes to the task's terminal"
rc=$(rc_of pty-z)
[ "$rc" = 0 ] && [ -e "$TE_WORK/pty-z.done.0" ]
ok $? "--pty, Ctrl-Z typed: the step runs to its end, srun exits 0 (rc=$rc)"
te_tmux kill-session -t pty-z

# ---------------------------------------------------------------- scancel
# scancel ends a shielded srun as it ends an unshielded one.
declare -A cancel_rc=()
for mode in shield default; do
	name=cancel-$mode
	in_tmux "$name" "srun -N2 --train-sighup=$mode $task $name 20 2>$name.err; echo rc=\$? >$name.rc"
	started "$name"
	ok $? "scancel ($mode): the step started (srun in tmux)"
	scancel "$(job_of "$name")"
	rc=$(rc_of "$name")
	cancel_rc[$mode]=$rc
	[ -n "$rc" ] && [ "$rc" != 0 ]
	ok $? "scancel ($mode): srun exits (status $rc)"
	like "$(cat "$TE_WORK/$name.err")" 'CANCELLED' "scancel ($mode): srun reports the cancellation"
	is "$(wait_job_done "$(job_of "$name")" 30)" CANCELLED "scancel ($mode): the job is CANCELLED"
	killed "$name"
	ok $? "scancel ($mode): no result, no task left"
	te_tmux kill-session -t "$name"
done
is "${cancel_rc[shield]}" "${cancel_rc[default]}" "scancel: the shielded srun exits with the unshielded one's status"

# ---------------------------------------------------------------- | cat
in_tmux pipe "srun -N2 $task pipe 3 | cat"
started pipe
ok $? "srun | cat: the step started"
screen_shows pipe "$ticks" 15
ok $? "srun | cat: the output reaches the terminal through cat"
te_tmux kill-session -t pipe
finished pipe
ok $? "srun | cat, tmux killed (cat dies with it): both ranks ran to their end"
is "$(wait_job_done "$(job_of pipe)" 30)" COMPLETED "srun | cat, tmux killed: the job COMPLETED"

# ---------------------------------------------------------------- --pty
# An interactive session should end with its terminal: not shielded.
in_tmux pty "srun -N1 --pty $task pty 3"
wait_for_file "$TE_WORK/pty.start.0" 30
ok $? "--pty: the step started"
screen_shows pty "$ticks 0" 15
ok $? "--pty: the output reaches the terminal"
tree=$(proc_tree "srun -N1 --pty $task pty")
# srun forks its own shepherd (it cancels the step if srun dies): srun and
# the shepherd, both in the terminal's session, and no shield above srun.
is "$(printf '%s\n' "$tree" | awk '{ print $4 }' | tr '\n' ' ')" "top child " "--pty: srun and its shepherd, no shield (no extra process)" || diag "$tree"
is "$(printf '%s\n' "$tree" | awk '{ print $3 }' | sort -u | wc -l)" 1 "--pty: srun stays in the terminal's session" || diag "$tree"
te_tmux kill-session -t pty
st=$(wait_job_done "$(job_of pty)" 30)
ok $? "--pty: the job ended after the terminal was killed"
sleep 0.5
[ "$st" != COMPLETED ] && [ ! -e "$TE_WORK/pty.done.0" ]
ok $? "--pty: the step was killed with its terminal (state $st, no result)"
wait_gone "$task pty " 15
ok $? "--pty: no srun or task left"

# "--pty" among the command's own arguments is not srun's option: the step
# is shielded like any other and survives its terminal.
in_tmux ptyarg "srun -N2 $task ptyarg 3 --pty"
started ptyarg
ok $? "srun CMD ARGS --pty (the command's argument): the step started"
te_tmux kill-session -t ptyarg
finished ptyarg
ok $? "srun CMD ARGS --pty, tmux killed: shielded, both ranks ran to their end"

# The shield is one extra process: it keeps srun's pid, process group and
# terminal; its child carries on as srun in a session of its own (and forks
# srun's usual shepherd).
in_tmux shape "srun -N1 $task shape 2"
wait_for_file "$TE_WORK/shape.start.0" 30
tree=$(proc_tree "srun -N1 $task shape")
is "$(printf '%s\n' "$tree" | awk '{ print $4 }' | tr '\n' ' ')" "top child grandchild " "shielded srun: the shield, srun below it, srun's shepherd below that" || diag "$tree"
read -r _ _ shield_sid _ < <(printf '%s\n' "$tree" | sed -n 1p)
read -r srun_pid _ srun_sid _ < <(printf '%s\n' "$tree" | sed -n 2p)
[ -n "$srun_sid" ] && [ "$srun_sid" = "$srun_pid" ] && [ "$shield_sid" != "$srun_sid" ]
ok $? "the shield stays in the terminal's session; srun leads a session of its own" || diag "$tree"
wait_for_file "$TE_WORK/shape.done.0" 30
ok $? "and the step ran to its end"
te_tmux kill-session -t shape

# ---------------------------------------------------------------- --ignore-signals
# srun's own --ignore-signals (Slurm 26.05; not in 22.05 or 24.11): srun
# does not pass the listed signals on to the step. Through the shield (which
# passes every signal on to srun) and without it, as without trainenv.
if srun --help 2>&1 | grep -q -- '--ignore-signals'; then
	nohup_run ign-usr1 -N2 --ignore-signals=USR1
	started ign-usr1
	kill -USR1 "$pid"
	reap
	is "$rc" 0 "--ignore-signals=USR1 (shielded), kill -USR1 of srun: srun exits 0"
	finished ign-usr1
	ok $? "--ignore-signals=USR1: both ranks ran to their end"
	nohup_run usr1 -N2
	started usr1
	kill -USR1 "$pid"
	reap
	is "$rc" 138 "without --ignore-signals, kill -USR1 of srun: the tasks die of it, srun exits 138"
	nohup_run ign-usr1-apart -N1 --ignore-signals USR1
	wait_for_file "$TE_WORK/ign-usr1-apart.start.0" 30
	kill -USR1 "$pid"
	reap
	is "$rc" 0 "--ignore-signals USR1 (its value apart: not the command), kill -USR1: srun exits 0"
	nohup_run ign-hup -N2 --train-sighup=default --ignore-signals=HUP
	started ign-hup
	kill -HUP "$pid"
	reap
	is "$rc" 0 "--ignore-signals=HUP --train-sighup=default (no shield), kill -HUP: srun exits 0"
	finished ign-hup
	ok $? "--ignore-signals=HUP, no shield: both ranks ran to their end"
	with=$(timeout 60 srun -N1 --ignore-signals=CONT true 2>&1; echo "rc=$?")
	without=$(timeout 60 srun -N1 --train=off --ignore-signals=CONT true 2>&1; echo "rc=$?")
	grep -q 'cannot be ignored' <<<"$with" && [ "$with" = "$without" ]
	ok $? "--ignore-signals=CONT is refused as without trainenv (same words and status)" ||
		diag "with: $with" "without: $without"
else
	skip "srun $(srun --version 2>/dev/null | awk '{ print $2 }') has no --ignore-signals (Slurm 26.05 has)" 7
fi

# ---------------------------------------------------------------- srun with threads
# Slurm 26.05's srun runs threads before any SPANK callback, and a forked
# copy of it hangs: then the shield's child starts srun again, and srun's
# threads in the shield leave every signal to it. spank_threads.so, listed
# first, gives srun such threads (and handlers that say when one ran) on
# any release.
cc -Wall -Werror -shared -fPIC -pthread -o "$TE_WORK/spank_threads.so" "$here/spank_threads.c" 2>&1 | sed 's/^/# /'
ok "${PIPESTATUS[0]}" "threads: the test plugin compiles"
set_plugstack "required $TE_WORK/spank_threads.so" "required $TE_PLUGIN"
in_tmux thr "srun -N1 $task thr 3"
wait_for_file "$TE_WORK/thr.start.0" 30
tree=$(proc_tree "srun -N1 $task thr")
is "$(printf '%s\n' "$tree" | awk '{ print $4 }' | tr '\n' ' ')" "top child grandchild " "threads: the shield, srun below it, srun's shepherd below that" || diag "$tree"
read -r srun_pid _ srun_sid _ < <(printf '%s\n' "$tree" | sed -n 2p)
[ -n "$srun_pid" ] && [ "$srun_sid" = "$srun_pid" ] && tr '\0' '\n' <"/proc/$srun_pid/environ" | grep -q '^TRAINENV_SHIELD='
ok $? "threads: the shield's child started srun again, in a session of its own"
is "$(cat "/proc/$srun_pid/comm" 2>/dev/null)" srun "threads: and it is named srun (ps, pkill)"
te_tmux send-keys -t thr C-z
for ((i = 0; i < 50; i++)); do tmux_screen thr | grep -q 'Stopped' && break; sleep 0.1; done
like "$(tmux_screen thr)" 'Stopped +srun -N1' "threads, Ctrl-Z: the shell reports srun stopped"
like "$(ps -o stat= -p "$srun_pid")" '^T' "threads, Ctrl-Z: srun itself is stopped"
tmux_type thr "fg; echo rc=\$? >thr.rc"
is "$(rc_of thr)" 0 "threads, fg: srun resumes and exits 0"
wait_for_file "$TE_WORK/thr.done.0" 30
ok $? "threads, Ctrl-Z, fg: the rank ran to its end"
te_tmux kill-session -t thr
out=$(te_srun -t 60 -N1 sh -c 'printenv TRAINENV_SHIELD || echo unset' 2>&1)
is "$out" unset "threads: the tasks do not get the marker"

ctrl_c thr-int2 2
ok $? "threads, Ctrl-C twice: the step started, its output flows, Ctrl-C sent twice"
rc=$(rc_of thr-int2)
[ "$rc" = 130 ] || [ "$rc" = 137 ]
ok $? "threads, Ctrl-C twice: srun exits 130 or 137 (status $rc)"
err=$(cat "$TE_WORK/thr-int2.err")
like "$err" '^srun: sending Ctrl-C to StepId=[0-9]+\.0$' "threads, Ctrl-C twice: srun sends Ctrl-C to the step"
! grep -q spank_threads <<<"$err"
ok $? "threads, Ctrl-C twice: no thread of srun's took the signal"
te_tmux kill-session -t thr-int2

nohup_run thr-usr1 -N1
wait_for_file "$TE_WORK/thr-usr1.start.0" 30
kill -USR1 "$pid"
reap
is "$rc" 138 "threads, kill -USR1 of srun: the task dies of it, srun exits 138"
! grep -q spank_threads "$TE_WORK/thr-usr1.out"
ok $? "threads, kill -USR1: no thread of srun's took the signal"
nohup_run thr-hup -N2
started thr-hup
kill -HUP "$pid"
reap
is "$rc" 0 "threads, nohup srun & + kill -HUP: srun exits 0"
finished thr-hup
ok $? "threads, kill -HUP: both ranks wrote their result"

# srun's own words before the step's options are checked (-v lists them)
# come once, not again from the srun started anew.
n_def=$(te_srun -t 60 -N1 -v --train-sighup=default true 2>&1 | grep -c 'defined options')
n_shield=$(te_srun -t 60 -N1 -v true 2>&1 | grep -c 'defined options')
[ "$n_def" -gt 0 ] && [ "$n_shield" = "$n_def" ]
ok $? "threads: srun -v lists the options as often shielded as not ($n_shield, $n_def)"
# and when the srun started anew ends before that, what it said comes out
set_plugstack "required $TE_WORK/spank_threads.so fail-again" "required $TE_PLUGIN"
out=$(set -o pipefail; timeout 60 srun -N1 true 2>&1 | cat)
is "$?" 1 "threads: an srun started anew that fails before init_post_opt: srun's status, at once"
is "$(grep -c 'failing in the srun started again' <<<"$out")" 1 "threads: and what it said comes out, once" || diag "$out"
use_trainenv

done_testing
