#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 33, item 3: trainenv on a configless cluster with a login node, as
# sites run Slurm 23.11 and later. slurmctld ships slurm.conf and
# plugstack.conf (enable_configless); the compute nodes' slurmd and the
# login node's sackd hold the only copies (no slurm.conf on any node, no
# SLURM_CONF); the login node runs sackd and no slurmd, and the user's
# srun, sbatch and salloc run there. From it: the plugin's options (the
# plugstack.conf that came through configless), the start of a step with
# the rank environment, the hang-up shield (tmux killed, nohup + kill -HUP)
# and the first-failure report (srun, salloc, and a batch job's srun on a
# configless compute node), SrunPortRange as srun loaded it from sackd's
# copy; and a change of plugstack.conf reaching the login node and the
# nodes (scontrol reconfigure). tests/cluster/cluster.sh --configless
# --login builds the cluster.
# Single-quoted $VARS are for the tasks' and the login node's shells:
# shellcheck disable=SC2016
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"

if ! command -v sackd >/dev/null; then
	ver=$(slurmd -V 2>/dev/null | awk '{ print $2 }')
	te_skip_all "Slurm ${ver%.*} has no sackd (23.11+)"
fi
plan 36

te_build_init
command -v tmux >/dev/null || bail_out "tmux is needed (tests/deps.sh installs it)"
# Below the ephemeral ports: a port the kernel picks never lies there.
export TE_SLURM_CONF_EXTRA="SrunPortRange=20300-20399"
cluster_up --nodes 3 --configless --login || bail_out "no configless cluster with a login node"
unset TE_SLURM_CONF_EXTRA
ok 0 "a configless cluster of 3 nodes and a login node (sackd) is up, plugin $TE_PLUGIN"
login_cache=$TE_CLUSTER_DIR/nodes/login/run/slurm/conf
n1_addr=$TE_CLUSTER_NET.11
login_addr=$TE_CLUSTER_NET.9

# ---------------------------------------------------------------- no slurm.conf
login_exec sh -c '[ -z "${SLURM_CONF:-}" ] && [ ! -e /etc/slurm/slurm.conf ] && [ ! -e "$TE_CLUSTER_DIR/etc/slurm.conf" ] && [ -s /run/slurm/conf/slurm.conf ]'
ok $? "login node: no SLURM_CONF, no slurm.conf but sackd's copy in /run/slurm/conf"
[ -n "$(node_pgrep login -x sackd)" ] && [ -z "$(node_pgrep login -x slurmd)" ]
ok $? "login node: sackd runs there, no slurmd"
bad=
for n in n1 n2 n3; do
	cluster_exec "$n" sh -c '[ ! -e /etc/slurm/slurm.conf ] && [ ! -e "$TE_CLUSTER_DIR/etc/slurm.conf" ] && [ "$(readlink /run/slurm/conf)" = "$TE_CLUSTER_DIR/spool/conf-cache" ] && [ -s /run/slurm/conf/slurm.conf ]' || bad="$bad $n"
done
is "$bad" "" "compute nodes: no slurm.conf but the one slurmd fetched (its spool's conf-cache, /run/slurm/conf)"

# ---------------------------------------------------------------- plugstack.conf
# The cluster starts with an empty plugstack.conf: the login node's srun
# knows no --train option. Then the plugin's line, which slurmctld ships.
! login_exec timeout 30 srun --train=help >"$TE_WORK/nohelp.out" 2>&1
ok $? "empty plugstack.conf: srun on the login node knows no --train=help" || diag "$(cat "$TE_WORK/nohelp.out")"
use_trainenv
ok $? "plugstack.conf names the plugin: slurmctld shipped it to sackd and every slurmd (scontrol reconfigure)"
is "$(cat "$login_cache/plugstack.conf")" "required $TE_PLUGIN" "sackd's copy on the login node is it"
out=$(login_exec strace -f -qq -e trace=open,openat -o "$TE_WORK/help.strace" timeout 30 srun --train=help 2>&1)
is "$?" 0 "srun --train=help on the login node exits 0: the plugin came through configless"
opened=$(grep -v ENOENT "$TE_WORK/help.strace" | grep -oE '"/run/slurm/conf/(slurm|plugstack)\.conf"' | sort -u | tr '\n' ' ')
is "$opened" '"/run/slurm/conf/plugstack.conf" "/run/slurm/conf/slurm.conf" ' \
	"that srun read slurm.conf and plugstack.conf from sackd's copies (/run/slurm/conf)" ||
	diag "$(grep -E 'slurm\.conf|plugstack' "$TE_WORK/help.strace" | head -n 20)"
version_line=$("$TE_TOOL" --version 2>&1)
is "$(printf '%s\n' "$out" | head -n 1 | cut -c1-$((${#version_line} + 1)))" "$version_line:" \
	"and prints the usage ('$version_line: ...')" || diag "$(printf '%s\n' "$out" | head -n 3)"

# ---------------------------------------------------------------- start
probe='echo "$SLURM_PROCID $RANK $WORLD_SIZE $LOCAL_RANK $NODE_RANK $MASTER_ADDR $(hostname) $SLURM_SUBMIT_HOST"; [ $SLURM_PROCID = 0 ] && echo "$SLURM_JOB_ID" >"$1"'
out=$(login_exec timeout 120 srun -N3 --ntasks-per-node=2 sh -c "$probe" sh "$TE_WORK/start.job" 2>"$TE_WORK/start.err" | sort -n)
want=""
for r in 0 1 2 3 4 5; do
	want="$want$r $r 6 $((r % 2)) $((r / 2)) $n1_addr n$((r / 2 + 1)) login"$'\n'
done
is "$out" "${want%$'\n'}" "srun from the login node: 6 ranks on n1-n3, RANK, WORLD_SIZE, LOCAL_RANK, NODE_RANK, MASTER_ADDR ($n1_addr), submitted from login" ||
	diag "$(cat "$TE_WORK/start.err")"
like "$(timeout 10 scontrol show job "$(cat "$TE_WORK/start.job" 2>/dev/null)" 2>&1)" 'AllocNode:Sid=login:' \
	"slurmctld has the job from the login node"
# A batch job from the login node: its srun runs on n1, a configless
# compute node, on slurmd's copy of both files.
rm -f "$TE_WORK/batch.out"
login_exec timeout 120 sbatch --wait -N2 -w 'n[1-2]' -o "$TE_WORK/batch.out" \
	--wrap 'srun -N2 sh -c "echo rank \$RANK of \$WORLD_SIZE on \$(hostname)" | sort; srun --train=help | head -n 1' >/dev/null 2>&1
out=$(cat "$TE_WORK/batch.out" 2>/dev/null)
is "$(printf '%s\n' "$out" | grep '^rank')" $'rank 0 of 2 on n1\nrank 1 of 2 on n2' \
	"sbatch from the login node: the batch job's srun (on n1) starts 2 ranks with their environment" || diag "$out"
printf '%s\n' "$out" | cut -c1-$((${#version_line} + 1)) | grep -qxF -- "$version_line:"
ok $? "and knows the plugin's options there (slurmd's copy of plugstack.conf)"

# ---------------------------------------------------------------- failure report
report_re='^trainenv: rank [0-9]+ \(node n[0-9], local rank [0-9]+\) '
out=$(login_exec timeout 120 srun -N3 sh -c '[ $SLURM_PROCID = 0 ] && echo "report=$TRAINENV_REPORT comm=$SLURM_SRUN_COMM_HOST"; [ $SLURM_PROCID = 1 ] && exit 3; sleep 2' 2>&1)
rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]
ok $? "srun from the login node, rank 1 exits 3: the step fails (exit $rc)"
like "$out" '^trainenv: rank 1 \(node n2, local rank 0\) exited with code 3 at [0-9-]{10} [0-9:.]{12}: the first failure of this step$' \
	"srun on the login node prints trainenv's first-failure line (rank, node, code)" || diag "$out"
is "$(printf '%s\n' "$out" | grep -cE "$report_re")" 1 "one line: the ranks that exited 0 are not reported"
is "$(printf '%s\n' "$out" | sed -n 's/^report=.* comm=//p')" "$login_addr" "the tasks report to srun on the login node ($login_addr)"
port=$(printf '%s\n' "$out" | sed -n 's/^report=\([0-9]*\):.*/\1/p')
[ -n "$port" ] && [ "$port" -ge 20300 ] && [ "$port" -le 20399 ]
ok $? "the report port ($port) lies in SrunPortRange=20300-20399, as srun loaded it from sackd's copy" || diag "$out"
out=$(login_exec timeout 120 salloc -N2 srun -N2 sh -c '[ $SLURM_PROCID = 1 ] && kill -KILL $$; sleep 2' 2>&1)
like "$out" '^trainenv: rank 1 \(node n2, local rank 0\) was killed by signal 9 \(SIGKILL\) at .*: the first failure of this step$' \
	"salloc on the login node, its srun there: rank 1's SIGKILL is reported" || diag "$out"
rm -f "$TE_WORK/batch-fail.out"
login_exec timeout 120 sbatch --wait -N3 -o "$TE_WORK/batch-fail.out" \
	--wrap 'srun -N3 sh -c "[ \$SLURM_PROCID = 2 ] && exit 5; sleep 2"' >/dev/null 2>&1
out=$(cat "$TE_WORK/batch-fail.out" 2>/dev/null)
like "$out" '^trainenv: rank 2 \(node n3, local rank 0\) exited with code 5 at .*: the first failure of this step$' \
	"sbatch from the login node: the batch job's srun on n1 reports rank 2 on n3" || diag "$out"

# ---------------------------------------------------------------- hang-up
# task.sh NAME SECS: tick_task_write's task (tests/lib/itest.sh).
task=$TE_WORK/task.sh
tick_task_write "$task"
# hup.sh NAME SRUN_ARGS...: on the login node, nohup srun SRUN_ARGS... &,
# kill -HUP once both ranks started (30 s); prints srun's status (30 s).
cat >"$TE_WORK/hup.sh" <<'EOF'
#!/bin/bash
name=$1
shift
nohup srun "$@" </dev/null >"$name.out" 2>&1 &
pid=$!
for _ in $(seq 300); do [ -e "$name.start.0" ] && [ -e "$name.start.1" ] && break; sleep 0.1; done
kill -HUP "$pid"
for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; echo timeout; exit 1; fi
wait "$pid"
echo $?
EOF
chmod 755 "$task" "$TE_WORK/hup.sh"
# A shielded srun outlives its terminal: cancel what this test started.
te_on_exit 'for f in "$TE_WORK"/*.job; do [ -s "$f" ] && scancel "$(cat "$f")" 2>/dev/null; done'
started() { wait_for_file "$TE_WORK/$1.start.0" 30 && wait_for_file "$TE_WORK/$1.start.1" 30; }
finished() { wait_for_file "$TE_WORK/$1.done.0" 30 && wait_for_file "$TE_WORK/$1.done.1" 30; }
no_result() { sleep 0.5; [ ! -e "$TE_WORK/$1.done.0" ] && [ ! -e "$TE_WORK/$1.done.1" ]; }
# tmux on the login node, its own server (killed at exit)
tmux_sock=te-t31-$$
ltmux() { login_exec tmux -L "$tmux_sock" -f /dev/null "$@"; }
ltmux new-session -d -s te-keep sleep 100000
te_on_exit 'ltmux kill-server 2>/dev/null'
ltmux new-session -d -s hup -x 200 -y 50 env -i PATH="$PATH" HOME=/root TERM=xterm PS1='te$ ' \
	bash --norc --noprofile -i
ltmux send-keys -t hup -l "cd '$TE_WORK'; srun -N2 $task hup 3; echo rc=\$? >hup.rc" && ltmux send-keys -t hup Enter
started hup
ok $? "tmux on the login node: srun started the step"
[ -n "$(node_pgrep login -f "srun -N2 $task hup")" ] && [ "$(cat "$TE_WORK/hup.comm" 2>/dev/null)" = "$login_addr" ]
ok $? "that srun runs on the login node (its process there, the tasks' SLURM_SRUN_COMM_HOST $login_addr)"
ltmux kill-session -t hup
! ltmux has-session -t hup 2>/dev/null
ok $? "tmux: the session (the terminal) is gone"
finished hup
ok $? "terminal killed (built-in sighup=shield): both ranks ran to their end"
is "$(wait_job_done "$(cat "$TE_WORK/hup.job" 2>/dev/null)" 30)" COMPLETED "the job COMPLETED"
[ ! -e "$TE_WORK/hup.rc" ]
ok $? "the shell in the terminal did die (it never wrote srun's status)"
is "$(login_exec "$TE_WORK/hup.sh" hup-default -N2 --train-sighup=default "$task" hup-default 2)" 137 \
	"nohup srun --train-sighup=default & + kill -HUP on the login node: srun kills the step, exits 137 (Slurm's behaviour)"
no_result hup-default
ok $? "--train-sighup=default: no rank wrote its result"
is "$(login_exec "$TE_WORK/hup.sh" hup-shield -N2 "$task" hup-shield 2)" 0 \
	"nohup srun & + kill -HUP on the login node (built-in sighup=shield): srun exits 0"
finished hup-shield
ok $? "shield: both ranks wrote their result"

# ---------------------------------------------------------------- reconfigure
# A site setting added to plugstack.conf reaches sackd (the login node's
# srun enforces it) and the nodes' slurmd (the tasks ignore SIGHUP).
use_trainenv sighup=ignore enforce=sighup
ok $? "plugstack.conf changed (sighup=ignore enforce=sighup): scontrol reconfigure shipped it"
is "$(cat "$login_cache/plugstack.conf")" "required $TE_PLUGIN sighup=ignore enforce=sighup" "sackd's copy is the new one"
is "$(login_exec "$TE_WORK/hup.sh" hup-enforced -N2 --train-sighup=default "$task" hup-enforced 2)" 0 \
	"kill -HUP with the site enforcing sighup=ignore: the login node's srun exits 0 despite --train-sighup=default"
finished hup-enforced
ok $? "enforced: both ranks wrote their result"
sig_ignored "$(std_sigign <"$TE_WORK/hup-enforced.sigign.1")" 1
ok $? "sighup=ignore: the tasks start with SIGHUP ignored (n2's slurmd has the new copy)"
use_trainenv

done_testing
