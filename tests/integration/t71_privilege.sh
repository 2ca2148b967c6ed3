#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Privilege (issue 7, item 4): nothing a user passes changes what runs as
# root, or with root's rights.
#   - The rendezvous helper, the waiting tasks and the files they make
#     (arrival files, rank 0's checkpoint probe, the NCCL dump directory)
#     belong to the job's user: a step of `nobody` is looked at from
#     inside the nodes while it waits at the barrier.
#   - Paths from user input are used with the user's rights only: a
#     root-only (0700) directory given as --train-nccl-dump-dir or
#     --train-checkpoint-dir gets nothing (root's own job, the control,
#     can), and says so; the helper is looked up with the user's rights.
#   - TRAINENV_REPORT points slurmstepd's failure report at a port of the
#     user's choosing: the connection comes from a process of the job's
#     user (its socket's owner, seen in the node while the connect hangs
#     on a listener whose queue is full).
#   - Enforced site values hold against every user means: srun and
#     sbatch options, sbatch inheritance, the environment, --export
#     (ALL, NONE, VAR=), _SLURM_SPANK_OPTION_* set by hand (also through
#     --export, and the SLURM_SPANK_ and SPANK_ forms), a forged
#     TRAINENV_SETTINGS, a variable exported in the batch script, and
#     srun run with the user's own slurm.conf (no trainenv, or trainenv
#     with a policy of the user's own). Checked in what the task gets.
#   - The pre-flight program (--train-preflight) runs as the job's user.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/pmix_common.sh
. "$here/../lib/pmix_common.sh"

plan 40

cluster_up --nodes 3 || bail_out "no cluster"
ok 0 "cluster is up"
te_build_init
nodes=(n1 n2 n3)
W="-w n[1-3]"
NB_UID=$(id -u nobody)
NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
# nobody's working directory (the job's cwd and output)
NB=$TE_WORK/nobody
mkdir -p "$NB" && chown nobody:nogroup "$NB"

# real, effective, saved and file-system uid of a process
uids() { awk '/^Uid:/ { print $2, $3, $4, $5 }' "/proc/$1/status" 2>/dev/null; }
new_job() { # ID: the job started after ID (deadline 10 s)
	local end=$(( $(date +%s) + 10 )) j
	while :; do
		j=$(te_jobs_after "$1" | awk '{ print $1 }')
		[ -n "$j" ] && { echo "$j"; return 0; }
		[ "$(date +%s)" -ge "$end" ] && return 1
		sleep 0.1
	done
}

# The PMIx launch's parts (helpers, checkpoint check, arrival files) need
# srun --mpi=pmix; Debian's Slurm 26.05.5 has none.
if te_no_mpi_pmix; then
	skip "$TE_WHY" 19
else
	# ================================================================ who runs what
	pmix_plugstack
	ckpt=$NB/ckpt dump=$NB/dump
	mkdir -p "$ckpt" "$dump" && chown nobody:nogroup "$ckpt" "$dump"
	before=$(te_last_job_id)
	(cd "$NB" && TRAINENV_TEST_DELAY=n3:6 timeout -k 10 60 "${NOBODY[@]}" \
		srun --mpi=pmix -N3 --ntasks-per-node=2 $W --train-barrier=30 --train-checkpoint-dir="$ckpt" \
		--train-nccl-dump-dir="$dump" sh -c 'echo "ran $(id -u)"' >"$NB/who.out" 2>&1) &
	pid=$!
	job=$(new_job "$before")
	# every node's helper (n3's sleeps out its delay) and waiting task
	end=$(( $(date +%s) + 10 ))
	while :; do
		helpers=$(for n in "${nodes[@]}"; do node_procs "$n" "[t]rainenv-rdzv (--protocol [0-9]+ )?--job $job " | sed "s/^/$n /"; done)
		probe=$(cd "$ckpt" && for f in .trainenv-ckpt-"$job".*; do [ -e "$f" ] && echo "$f"; done | head -n 1)
		[ "$(printf '%s\n' "$helpers" | grep -c .)" -eq 3 ] && [ -n "$probe" ] && break
		[ "$(date +%s)" -ge "$end" ] && break
		sleep 0.1
	done
	is "$(printf '%s\n' "$helpers" | grep -c .)" 3 "nobody's step (job $job): one rendezvous helper per node is running"
	bad=""
	while read -r n p _; do
		[ -n "${p:-}" ] || continue
		[ "$(uids "$p")" = "$NB_UID $NB_UID $NB_UID $NB_UID" ] || bad="$bad $n:$p:($(uids "$p"))"
	done <<<"$helpers"
	is "$bad" "" "every helper runs as nobody: real, effective, saved and file-system uid $NB_UID"
	# the tasks waiting in task_init are slurmstepd's children: the job's user
	bad="" nt=0
	for n in "${nodes[@]}"; do
		stepd=$(node_procs "$n" "[s]lurmstepd: \\[$job\\.0\\]" | awk '{ print $1 }')
		for s in $stepd; do
			for c in $(pgrep -P "$s"); do
				case $(tr '\0' ' ' </proc/"$c"/cmdline 2>/dev/null) in
				"slurmstepd: [$job.0]"*) nt=$((nt + 1))
					[ "$(uids "$c")" = "$NB_UID $NB_UID $NB_UID $NB_UID" ] || bad="$bad $n:$c:($(uids "$c"))" ;;
				esac
			done
		done
	done
	[ "$nt" -ge 6 ] && [ -z "$bad" ]
	ok $? "the $nt tasks waiting in task_init run as nobody (slurmstepd itself stays root)" || diag "$bad"
	f=$ckpt/$probe
	[ -n "$probe" ] && [ "$(stat -c %u "$f" 2>/dev/null)" = "$NB_UID" ]
	ok $? "rank 0's checkpoint probe file is nobody's (${probe:-none})"
	owners=$(for n in "${nodes[@]}"; do
		# shellcheck disable=SC2016
		cluster_exec "$n" bash -c 'stat -c "%U %a %n" "$1"/spool/pmix."$2".0 "$1"/spool/pmix."$2".0/trainenv-* "$1"/spool/pmix."$2".0/trainenv-arrived/* 2>/dev/null' \
			bash "$TE_CLUSTER_DIR" "$job"; done)
	[ -n "$owners" ] && ! printf '%s\n' "$owners" | awk '$1 != "nobody"' | grep -q .
	ok $? "the step's PMIx directories and the arrival files in them are nobody's" || diag "$owners"
	wait "$pid"
	rc=$?
	out=$(cat "$NB/who.out")
	is "$rc $(printf '%s\n' "$out" | grep -c "^ran $NB_UID$")" "0 6" "once n3 arrives the 6 tasks run as nobody" || diag "$out"
	is "$(ls -A "$ckpt")" "" "the checkpoint check leaves nothing behind"
	is "$(stat -c '%U %a' "$dump/$NB_UID" "$dump/$NB_UID/$job" 2>/dev/null | tr '\n' ' ')" "nobody 700 nobody 700 " "the NCCL dump directory $dump/$NB_UID/$job and the level above are nobody's, mode 700"

	# The pre-flight program (--train-preflight): the plugin runs it from a
	# helper directory whose trainenv-preflight is a wrapper that writes down
	# its own uids, then runs the real one. GPUs in the step: this machine's
	# topology with fake NVIDIA GPUs (as t30, t61); no driver here, so the
	# check only says so and the tasks run.
	pfdir=$TE_WORK/pf
	mkdir -p "$pfdir"
	ln -sf "$helper" "$pfdir/trainenv-rdzv"
	cat >"$pfdir/trainenv-preflight" <<EOF
#!/bin/sh
echo "\$SLURMD_NODENAME \$(awk '/^Uid:/ { print \$2, \$3, \$4, \$5 }' /proc/self/status)" >>"$NB/preflight.uids"
exec "$builddir/trainenv-preflight" "\$@"
EOF
	chmod 755 "$pfdir/trainenv-preflight"
	if [ -x "$builddir/trainenv-preflight" ] && lstopo-no-graphics --of xml --whole-io - >"$TE_WORK/here.xml" 2>/dev/null &&
		"$here/../lib/add_gpus.py" "$TE_WORK/here.xml" "$TE_WORK/gpus.xml" 2; then
		set_plugstack "required $plugin helper-dir=$pfdir bind-topology=$TE_WORK/gpus.xml"
		out=$(cd "$NB" && CUDA_VISIBLE_DEVICES=0,1 timeout 60 "${NOBODY[@]}" srun --mpi=pmix -N3 --ntasks-per-node=2 $W \
			--train-preflight=on sh -c 'echo ran' 2>&1)
		is "$(grep -c . "$NB/preflight.uids" 2>/dev/null)" 6 "nobody's step with GPUs: the pre-flight program ran once per rank" ||
			diag "$out"
		is "$(awk '{ print $2, $3, $4, $5 }' "$NB/preflight.uids" 2>/dev/null | sort -u)" "$NB_UID $NB_UID $NB_UID $NB_UID" \
			"every pre-flight ran as nobody: real, effective, saved and file-system uid"
		pmix_plugstack
	else
		skip "no trainenv-preflight in the build, or no topology to add fake GPUs to" 2
	fi

	# ================================================================ user paths, root's directory
	R=$TE_WORK/rootonly
	mkdir -p "$R" && chmod 700 "$R"
	out=$(cd "$NB" && timeout 60 "${NOBODY[@]}" srun --mpi=pmix -N2 --ntasks-per-node=2 $W --train-nccl-dump-dir="$R" \
		sh -c 'echo ran $TORCH_NCCL_DEBUG_INFO_TEMP_FILE' 2>&1)
	job=$(te_last_job_id)
	is "$(printf '%s\n' "$out" | grep -c '^ran$')" 4 "--train-nccl-dump-dir=<root's 0700 dir> as nobody: the step runs, without TORCH_NCCL_DEBUG_INFO_TEMP_FILE" || diag "$out"
	is "$(printf '%s\n' "$out" | grep -c "^trainenv: warning: --train-nccl-dump-dir: cannot create $R/$NB_UID: Permission denied$")" 2 \
		"... and the first task of each node says it cannot create the directory (the user's rights)" || diag "$out"
	is "$(ls -A "$R")" "" "... and nothing is created there"
	out=$(cd "$NB" && timeout 60 "${NOBODY[@]}" srun --mpi=pmix -N2 --ntasks-per-node=2 $W --train-checkpoint-dir="$R" \
		--train-failure-report=off sh -c 'echo ran' 2>&1)
	rc=$?
	[ $rc -ne 0 ] && ! printf '%s\n' "$out" | grep -q '^ran'
	ok $? "--train-checkpoint-dir=<root's 0700 dir> as nobody: the step fails before the program"
	like "$out" "^trainenv: error: checkpoint dir $R: rank 0 \\(node n1\\) cannot write there" "... saying rank 0 cannot write there"
	is "$(ls -A "$R")" "" "... and nothing is created there"
	out=$(te_srun -t 60 --mpi=pmix -N2 $W --train-nccl-dump-dir="$R" sh -c 'echo ran' 2>&1)
	job=$(te_last_job_id)
	[ -d "$R/0/$job" ] && [ "$(stat -c %U "$R/0/$job")" = root ]
	ok $? "control: root's own job creates $R/0/$job (so the denial above came from nobody's rights)"
	# The helper is looked up and run with the user's rights too.
	mkdir -p "$TE_WORK/hroot" && install -m 755 "$helper" "$TE_WORK/hroot/trainenv-rdzv" && chmod 700 "$TE_WORK/hroot"
	set_plugstack "required $plugin helper-dir=$TE_WORK/hroot"
	out=$(cd "$NB" && timeout 60 "${NOBODY[@]}" srun --mpi=pmix -N2 $W --train-failure-report=off sh -c 'echo ran' 2>&1)
	like "$out" "^trainenv: error: rendezvous: the rendezvous helper $TE_WORK/hroot/trainenv-rdzv: Permission denied" \
		"a helper in a root-only directory: nobody's tasks cannot reach it (they run as nobody)"
	out=$(te_srun -t 60 --mpi=pmix -N2 $W sh -c 'echo ran' 2>&1)
	is "$(printf '%s\n' "$out" | grep -c '^ran$')" 2 "control: root's job runs that helper"
	pmix_plugstack

fi

# ================================================================ the failure report's connection
# The user's own slurm.conf, its plugstack.conf without trainenv: srun
# sets no TRAINENV_REPORT, the user's own value reaches slurmstepd, whose
# trainenv connects to srun's host at the user's port when a task fails.
# A listener there whose accept queue is full keeps the connect in
# SYN-SENT for its 1 s deadline: long enough to read the socket's owner
# in the node's /proc/net/tcp.
pmix_plugstack	# the nodes' trainenv (the sections above may have been skipped)
mine=$NB/slurm.conf
sed "s|^PlugStackConfig=.*|PlugStackConfig=$NB/plugstack.conf|" "$SLURM_CONF" >"$mine"
: >"$NB/plugstack.conf"
chmod 644 "$mine" "$NB/plugstack.conf"
host=$(te_srun -t 30 -N1 -w n1 printenv SLURM_SRUN_COMM_HOST)
cat >"$TE_WORK/fullq.py" <<'PY'
import socket, sys, time
addr, port, secs, ready = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((addr, port)); s.listen(0)
fill = []
for i in range(2):	# never accepted: the queue (backlog 0) is full
    c = socket.socket(); c.setblocking(False)
    try: c.connect((addr, port))
    except BlockingIOError: pass
    fill.append(c)
time.sleep(0.2)
open(ready, "w").close()
time.sleep(secs)
PY
report_owner() { # AS (nobody|root): prints the uid that owned the connecting socket
	local port=$(( 40000 + RANDOM % 5000 )) ph lp pp pre=()
	ph=$(printf '%04X' "$port")
	rm -f "$TE_WORK/fq.ready"
	"$PY" "$TE_WORK/fullq.py" "$host" "$port" 30 "$TE_WORK/fq.ready" &
	lp=$!
	wait_for_file "$TE_WORK/fq.ready" 10
	# shellcheck disable=SC2016 # expanded inside the node
	cluster_exec n1 bash -c 'end=$((SECONDS + 20))
		while [ $SECONDS -lt $end ]; do
			u=$(awk -v p=":$1" "\$3 ~ p\"\$\" && \$4 == \"02\" { print \$8; exit }" /proc/net/tcp)
			[ -n "$u" ] && { echo "$u"; exit 0; }
			sleep 0.02
		done; echo none' bash "$ph" >"$TE_WORK/owner" &
	pp=$!
	sleep 0.3
	[ "$1" = nobody ] && pre=("${NOBODY[@]}")
	(cd "$NB" && SLURM_CONF=$mine TRAINENV_REPORT=$port:0123456789abcdef0123456789abcdef \
		timeout 30 "${pre[@]}" srun -N1 -w n1 sh -c 'exit 3' >/dev/null 2>&1)
	wait "$pp"
	kill "$lp" 2>/dev/null
	wait "$lp" 2>/dev/null
	cat "$TE_WORK/owner"
}
log0=$(stat -c %s "$TE_CLUSTER_DIR/log/slurmd.n1.log")
is "$(report_owner nobody)" "$NB_UID" \
	"TRAINENV_REPORT at a port of nobody's choosing: slurmstepd's connection is a socket of nobody (uid $NB_UID)"
like "$(tail -c +"$((log0 + 1))" "$TE_CLUSTER_DIR/log/slurmd.n1.log")" 'trainenv: 1 failure report of step [0-9]+\.0 not delivered to srun: srun did not answer in time' \
	"... and slurmstepd gives up after its 1 s deadline, saying so in the slurmd log"
is "$(report_owner root)" 0 "control: the same for root's job shows uid 0 (the measurement sees the job's user)"

# ================================================================ enforced values
set_plugstack "required $plugin nccl-heartbeat=900 port-range=31000-31000 sighup=ignore train=on enforce=nccl-heartbeat,port-range,sighup,train"
HB=TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC
cat >"$NB/probe.sh" <<EOF
#!/bin/sh
PATH=/usr/bin:/bin
mask=\$(grep SigIgn /proc/self/status | cut -f2)
hup=no
[ \$(( (0x\$mask) & 1 )) -eq 1 ] && hup=yes
src=\$("$tool" env | awk '\$1 == "train" || \$1 == "sighup" || \$1 == "nccl-heartbeat" || \$1 == "port-range" {
	match(\$0, /\\([^()]*\\)\$/); s = substr(\$0, RSTART + 1, RLENGTH - 2); sub(/:.*/, "", s); printf " %s", s }')
echo "P \$(id -un) hb=\${$HB-unset} port=\${MASTER_PORT-unset} hup=\$hup rank=\${RANK-unset} |\$src"
EOF
chmod 755 "$NB/probe.sh"
want="P nobody hb=900 port=31000 hup=yes rank=0 | enforced enforced enforced enforced"
O=_SLURM_SPANK_OPTION_trainenv_train
opts=("${O}_nccl_heartbeat=1200" "${O}_port_range=32000-32000" "${O}_sighup=default" "${O}=off")
enforced() { # WHAT CMD...: run as nobody in NB, check what the task got
	local what=$1 out
	shift
	out=$(cd "$NB" && timeout 60 "${NOBODY[@]}" "$@" 2>&1)
	is "$(printf '%s\n' "$out" | grep '^P ' | sort -u)" "$want" "enforced values hold: $what" ||
		diag "$(printf '%s\n' "$out" | head -n 8)"
}
enforced "no user input (baseline)" srun -N1 ./probe.sh
enforced "srun --train-nccl-heartbeat=1200 --train-port-range=32000-32000 --train-sighup=default --train=off" \
	srun -N1 --train-nccl-heartbeat=1200 --train-port-range=32000-32000 --train-sighup=default --train=off ./probe.sh
enforced "$HB=1200 in the environment" env "$HB=1200" srun -N1 ./probe.sh
enforced "$HB=1200 with --export=ALL" env "$HB=1200" srun -N1 --export=ALL ./probe.sh
enforced "$HB=1200 with --export=NONE" env "$HB=1200" srun -N1 --export=NONE ./probe.sh
enforced "--export=$HB=1200" srun -N1 "--export=$HB=1200" ./probe.sh
enforced "_SLURM_SPANK_OPTION_trainenv_train_* set by hand" env "${opts[@]}" srun -N1 ./probe.sh
enforced "_SLURM_SPANK_OPTION_trainenv_train_* through --export" \
	srun -N1 "--export=ALL,${opts[0]},${opts[1]},${opts[2]},${opts[3]}" ./probe.sh
enforced "SLURM_SPANK__SLURM_SPANK_OPTION_* (srun's environment options)" \
	env "${opts[@]/#/SLURM_SPANK_}" srun -N1 ./probe.sh
enforced "SPANK__SLURM_SPANK_OPTION_* (the prolog/epilog form)" env "${opts[@]/#/SPANK_}" srun -N1 ./probe.sh
enforced "a forged TRAINENV_SETTINGS claiming the user's values are the site's" \
	env "$HB=1200" "TRAINENV_SETTINGS=train:5:off:x sighup:5:default:x nccl-heartbeat:5:1200:x port-range:5:32000-32000:x" \
	srun -N1 ./probe.sh
# srun with the user's own slurm.conf: no trainenv at all on srun's side,
# or trainenv with a policy of the user's own; options as variables.
enforced "the user's own slurm.conf without trainenv, options as _SLURM_SPANK_OPTION_*" \
	env SLURM_CONF="$mine" "${opts[@]}" "$HB=1200" srun -N1 ./probe.sh
printf 'required %s nccl-heartbeat=1200 port-range=32000-32000 sighup=default\n' "$plugin" >"$NB/plugstack.conf"
enforced "the user's own slurm.conf with trainenv and the user's policy (no enforce), options given" \
	env SLURM_CONF="$mine" srun -N1 --train-nccl-heartbeat=1200 --train-sighup=default ./probe.sh
: >"$NB/plugstack.conf"
# sbatch: options, the batch script's own export, inheritance by srun
cat >"$NB/job.sh" <<EOF
#!/bin/sh
export $HB=1300
srun -N1 ./probe.sh
srun -N1 --train-nccl-heartbeat=1400 --train=off ./probe.sh
EOF
chmod 755 "$NB/job.sh"
out=$(cd "$NB" && timeout 90 "${NOBODY[@]}" sbatch --wait -N1 -o "$NB/job.out" --train-nccl-heartbeat=1200 \
	--train-port-range=32000-32000 --train-sighup=default --train=off "$NB/job.sh" 2>&1)
ok $? "sbatch with --train-* options as nobody runs its job" || diag "$out"
is "$(grep '^P ' "$NB/job.out" | sort | uniq -c | awk '{ $1 = $1; print }')" "2 $want" \
	"enforced values hold: sbatch options inherited by srun, a variable the batch script exported, srun's own options in the job" ||
	diag "$(cat "$NB/job.out")"

# Bounds (not enforced) hold against a forged TRAINENV_SETTINGS too: it
# only tells which variables an enclosing trainenv step set, and a value
# outside the site's bounds was never one of them.
set_plugstack "required $plugin nccl-heartbeat.max=3600"
forged="TRAINENV_SETTINGS=nccl-heartbeat:2:5000:x"
out=$(cd "$NB" && timeout 60 "${NOBODY[@]}" env "$HB=5000" "$forged" srun -N1 ./probe.sh 2>&1)
rc=$?
[ $rc -ne 0 ] && ! printf '%s\n' "$out" | grep -q '^P ' &&
	printf '%s\n' "$out" | grep -q "trainenv: $HB in the job environment (setting nccl-heartbeat): 5000 is above the site maximum"
ok $? "$HB=5000 with a forged TRAINENV_SETTINGS (site maximum 3600): srun refuses it" || diag "$out"
out=$(cd "$NB" && timeout 60 "${NOBODY[@]}" env SLURM_CONF="$mine" "$HB=5000" "$forged" srun -N1 ./probe.sh 2>&1)
rc=$?
[ $rc -ne 0 ] && ! printf '%s\n' "$out" | grep -q '^P ' &&
	printf '%s\n' "$out" | grep -q "^trainenv: error: $HB in the job environment (setting nccl-heartbeat): 5000 is above the site maximum"
ok $? "... and so do the nodes when srun has no trainenv (the user's own slurm.conf): the task fails, saying why" || diag "$out"

done_testing
