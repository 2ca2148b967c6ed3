# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# Sourced by trainenv's integration tests (bash). Two parts:
#
# TAP, as tests/run-tests.sh reads it:
#   plan N                      print "1..N" first (or let done_testing print it)
#   ok RC "name"                passes when RC is 0:  cmd; ok $? "cmd works"
#   ok_run "name" CMD...        runs CMD, passes on exit 0, shows its output if not
#   is GOT WANT "name"          string equality, shows both on failure
#   like GOT REGEX "name"       extended regex match (grep -E), shows GOT on failure
#   skip "reason" [COUNT]       "ok N # SKIP reason", COUNT times
#   diag MSG...                 "# MSG" lines (comments, ignored by the counter)
#   bail_out MSG                "Bail out! MSG", then exit 1 (the rest cannot run)
#   done_testing                prints the plan if none was, exits 1 if a check failed
#
# The local Slurm cluster (tests/cluster/cluster.sh):
#   cluster_up [--nodes N]      reuse $TE_CLUSTER_DIR when it is healthy (the
#                               make check driver starts one for all tests), else
#                               start a cluster of our own, stopped on EXIT, INT,
#                               TERM and HUP. Exports SLURM_CONF, TE_CLUSTER_DIR,
#                               TE_SHARED (same path on every node) and TE_WORK
#                               (this test's own directory under it, the cwd).
#   cluster_up --nodes N START_ARGS...  always a cluster of our own, started
#                               with cluster.sh start's START_ARGS too
#                               (--configless --login: t31)
#   set_plugstack [LINE...]     rewrite plugstack.conf; the next srun/step reads it;
#                               the original comes back at exit
#   te_srun [-t SECS] ARGS...   srun under `timeout` (default $TE_SRUN_TIMEOUT, 120 s)
#   te_sbatch_wait [-t SECS] ARGS...  sbatch --wait under `timeout`
#   wait_job_done JOBID SECS    wait until the job has ended; prints its state
#   job_field JOBID FIELD       a field of scontrol show job
#   restart_now JOBID N SECS    a job requeued N times: start it in 3 s
#   wait_nodes_idle SECS        wait until every node is idle
#   cluster_exec NODE CMD...    run CMD inside node NODE's namespaces
#   login_exec CMD...           run CMD on the login node (--login) as its
#                               user would: no SLURM_CONF, in TE_WORK
#   node_pgrep NODE ARGS...     pgrep ARGS... (-af: "PID COMMAND LINE") over the
#                               processes of node NODE's own network namespace
#   te_on_exit CMD              run CMD (eval'd) at exit, before the cluster stops
#   te_seconds CMD...           run CMD, set TE_SECONDS to its wall time
#   hup_run NAME DIR N ARGS...  nohup srun ARGS... &, kill -HUP once N tasks
#                               wrote DIR/NAME.started.*; sets rc, done_files
#   mini_rootfs DIR PROGS...    a container root of this machine's PROGS
#   requeue_without_n1 SCRIPT FAKEDIR WHAT  a batch job requeued without
#                               n1, whose pre-flight fails (2 checks)
# Every wait has a deadline: a test never hangs.

_te_lib_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
TE_CLUSTER_SH=${TE_CLUSTER_SH:-$_te_lib_dir/../cluster/cluster.sh}
TE_SRUN_TIMEOUT=${TE_SRUN_TIMEOUT:-120}

_te_n=0
_te_failed=0
_te_planned=
_te_own_cluster=
_te_own_stage=
_te_exit_cmds=()

# ------------------------------------------------------------------ staging
# Nodes have a private /tmp and user nobody cannot read a mode-700 home, so
# nothing a node or a job reads may come from the checkout (the cluster
# hides it from its nodes to prove that). At source time, unless the caller
# (tests/check-all.sh, tests/demo.sh) already staged one (TE_STAGE), the
# source and build trees are copied to a world-readable directory under
# /var/tmp (tests/lib/stage.sh), removed at exit, and TE_SRCDIR and
# TE_BUILDDIR point there. TE_REAL_SRCDIR and TE_REAL_BUILDDIR keep the
# originals, for tests that build (make distdir, the fuzz targets).
_te_stage() {
	local src build d
	src=${TE_SRCDIR:-$(cd "$_te_lib_dir/../.." && pwd -P)}
	export TE_REAL_SRCDIR=${TE_REAL_SRCDIR:-$src}
	if [ -n "${TE_STAGE:-}" ] && [ -d "$TE_STAGE/build" ]; then
		export TE_REAL_BUILDDIR=${TE_REAL_BUILDDIR:-${TE_BUILDDIR:-}}
		export TE_SRCDIR=$TE_STAGE/src TE_BUILDDIR=$TE_STAGE/build
		return 0
	fi
	build=${TE_BUILDDIR:-}
	if [ -z "$build" ]; then
		for d in "$PWD" "$src" "$src/_build"; do
			if [ -f "$d/.libs/trainenv.so" ]; then build=$d; break; fi
		done
	fi
	# Nothing built: tests that need the build say so (te_build_init).
	[ -n "$build" ] && [ -f "$build/.libs/trainenv.so" ] || return 0
	export TE_REAL_BUILDDIR=$build
	TE_STAGE=$(mktemp -d /var/tmp/te-stage.XXXXXX) || return 1
	_te_own_stage=$TE_STAGE
	trap _te_exit EXIT
	"$_te_lib_dir/stage.sh" "$src" "$build" "$TE_STAGE" >&2 || return 1
	export TE_STAGE TE_SRCDIR=$TE_STAGE/src TE_BUILDDIR=$TE_STAGE/build
}
_te_stage || echo "# could not stage the build under /var/tmp"

# ------------------------------------------------------------------ TAP
plan() {
	_te_planned=$1
	echo "1..$1"
}

diag() {
	local line
	# shellcheck disable=SC2048,SC2086
	printf '%s\n' "$*" | while IFS= read -r line; do echo "# $line"; done
}

ok() { # RC NAME
	local rc=$1
	shift
	_te_n=$((_te_n + 1))
	if [ "$rc" = 0 ]; then
		echo "ok $_te_n - $*"
		return 0
	fi
	echo "not ok $_te_n - $*"
	_te_failed=$((_te_failed + 1))
	local frame=1
	[ "${FUNCNAME[1]:-}" = is ] || [ "${FUNCNAME[1]:-}" = like ] || [ "${FUNCNAME[1]:-}" = ok_run ] && frame=2
	echo "#   failed at ${BASH_SOURCE[$frame]:-?} line ${BASH_LINENO[$((frame - 1))]:-?} (status $rc)"
	return 1
}

ok_run() { # NAME CMD...
	local name=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	ok "$rc" "$name" && return 0
	diag "command: $*"
	diag "$(printf '%s\n' "$out" | tail -n 30)"
	return 1
}

is() { # GOT WANT NAME
	local got=$1 want=$2
	shift 2
	[ "$got" = "$want" ]
	ok $? "$@" && return 0
	diag "got:  '$got'"
	diag "want: '$want'"
	return 1
}

like() { # GOT REGEX NAME
	local got=$1 re=$2
	shift 2
	printf '%s\n' "$got" | grep -Eq -- "$re"
	ok $? "$@" && return 0
	diag "got:  '$got'"
	diag "want a match for /$re/"
	return 1
}

skip() { # REASON [COUNT]
	local i
	for ((i = 0; i < ${2:-1}; i++)); do
		_te_n=$((_te_n + 1))
		echo "ok $_te_n # SKIP $1"
	done
}

bail_out() {
	echo "Bail out! $*"
	_te_failed=$((_te_failed + 1))
	exit 1
}

done_testing() {
	[ -n "$_te_planned" ] || echo "1..$_te_n"
	if [ -n "$_te_planned" ] && [ "$_te_planned" != "$_te_n" ]; then
		diag "planned $_te_planned checks, ran $_te_n"
		exit 1
	fi
	[ "$_te_failed" -eq 0 ] || exit 1
	exit 0
}

te_seconds() { # CMD...: sets TE_SECONDS; returns CMD's status
	local t0 rc
	t0=$(date +%s.%N)
	"$@"
	rc=$?
	# shellcheck disable=SC2034 # read by the test
	TE_SECONDS=$(awk -v s="$t0" -v e="$(date +%s.%N)" 'BEGIN { printf "%.3f", e - s }')
	return $rc
}

# ------------------------------------------------------------------ cluster
te_on_exit() { _te_exit_cmds+=("$1"); }

_te_exit() {
	local rc=$? c
	trap - EXIT INT TERM HUP
	for c in "${_te_exit_cmds[@]}"; do eval "$c"; done
	if [ -n "$_te_own_cluster" ]; then
		"$TE_CLUSTER_SH" stop --dir "$_te_own_cluster" 2>&1 | sed 's/^/# /'
		if [ "$rc" -eq 0 ] && [ "$_te_failed" -eq 0 ]; then
			rm -rf "$_te_own_cluster"
		else
			echo "# cluster logs kept in $_te_own_cluster/log"
		fi
	elif [ -n "${TE_WORK:-}" ] && [ "$rc" -eq 0 ] && [ "$_te_failed" -eq 0 ]; then
		rm -rf "$TE_WORK"
	fi
	[ -n "$_te_own_stage" ] && rm -rf "$_te_own_stage"
	exit "$rc"
}

_te_signal() { # SIGNAL NUMBER
	echo "# interrupted by SIG$1"
	exit $((128 + $2))
}

# True when DIR holds a running cluster with at least NODES usable nodes.
_te_cluster_healthy() { # DIR NODES
	local dir=$1 want=$2 states n
	[ -f "$dir/instance" ] && [ -f "$dir/env.sh" ] || return 1
	states=$(SLURM_CONF="$dir/etc/slurm.conf" timeout 15 sinfo -h -N -o '%N %T' 2>/dev/null) || return 1
	n=$(printf '%s\n' "$states" | grep -cE ' (idle|mixed|allocated|completing)$')
	[ "$n" -ge "$want" ] && [ "$n" -eq "$(printf '%s\n' "$states" | grep -c .)" ]
}

cluster_up() { # [--nodes N [START_ARGS...]]
	local nodes=3 dir out
	[ "${1:-}" = --nodes ] && { nodes=$2; shift 2; }
	trap _te_exit EXIT
	trap '_te_signal INT 2' INT
	trap '_te_signal TERM 15' TERM
	trap '_te_signal HUP 1' HUP
	# A cluster of another kind (START_ARGS) is never the shared one.
	if [ -n "${TE_CLUSTER_DIR:-}" ] && [ $# -gt 0 ]; then
		diag "a cluster started with $*: not the running one in $TE_CLUSTER_DIR"
	elif [ -n "${TE_CLUSTER_DIR:-}" ]; then
		if _te_cluster_healthy "$TE_CLUSTER_DIR" "$nodes"; then
			diag "using the running cluster in $TE_CLUSTER_DIR"
			dir=$TE_CLUSTER_DIR
		else
			diag "TE_CLUSTER_DIR=$TE_CLUSTER_DIR is not a healthy cluster of $nodes nodes; starting our own"
		fi
	fi
	if [ -z "${dir:-}" ]; then
		# Not under /tmp: every node has a private /tmp.
		dir=$(mktemp -d /var/tmp/te-itest.XXXXXX) || return 1
		_te_own_cluster=$dir
		out=$("$TE_CLUSTER_SH" start --dir "$dir" --nodes "$nodes" \
			${TE_REAL_BUILDDIR:+--hide "$TE_REAL_BUILDDIR"} "$@" 2>&1)
		local rc=$?
		diag "$out"
		[ $rc -eq 0 ] || return $rc
	fi
	# shellcheck disable=SC1091
	. "$dir/env.sh"
	TE_SHARED=$TE_CLUSTER_DIR/shared
	TE_WORK=$(mktemp -d "$TE_SHARED/$(basename "$0" .sh).XXXXXX") || return 1
	chmod 755 "$TE_WORK"
	export TE_SHARED TE_WORK
	cd "$TE_WORK" || return 1
}

# The first call keeps the cluster's plugstack.conf and restores it at exit,
# so that a shared cluster goes to the next test as it came.
_te_plugstack_saved=
set_plugstack() { # [LINE...]
	if [ -z "$_te_plugstack_saved" ]; then
		_te_plugstack_saved=$TE_WORK/.plugstack.conf.orig
		cp "$TE_CLUSTER_DIR/etc/plugstack.conf" "$_te_plugstack_saved" || return 1
		te_on_exit _te_plugstack_restore
	fi
	"$TE_CLUSTER_SH" plugstack --dir "$TE_CLUSTER_DIR" "$@"
}

_te_plugstack_restore() {
	local lines=()
	mapfile -t lines <"$_te_plugstack_saved" &&
		"$TE_CLUSTER_SH" plugstack --dir "$TE_CLUSTER_DIR" "${lines[@]}"
}

cluster_exec() { "$TE_CLUSTER_SH" exec --dir "$TE_CLUSTER_DIR" "$@"; }

# The login node's user has no SLURM_CONF: srun, sbatch and salloc there
# read what sackd cached (/run/slurm/conf). exec keeps the cwd (TE_WORK).
login_exec() { cluster_exec login env -u SLURM_CONF "$@"; }

# The nodes share one PID namespace (a plain pgrep in a node sees every
# node's processes, and other clusters'): a node's own are those of its
# network namespace. The lookup's own shell, whose command line holds ARGS,
# is left out.
node_pgrep() { # NODE PGREP_ARGS...
	local node=$1
	shift
	# shellcheck disable=SC2016 # expanded in the node
	cluster_exec "$node" sh -c 'pgrep --ns $$ --nslist net "$@" | grep -v "^$$\( \|\$\)"' sh "$@"
}

# `timeout` sends TERM, which srun answers by cancelling the step; KILL
# follows 10 s later. Exit status 124 means the deadline was hit.
te_srun() { # [-t SECS] ARGS...
	local secs=$TE_SRUN_TIMEOUT
	[ "${1:-}" = -t ] && { secs=$2; shift 2; }
	timeout -k 10 "$secs" srun "$@"
}

te_sbatch_wait() { # [-t SECS] ARGS...
	local secs=$TE_SRUN_TIMEOUT
	[ "${1:-}" = -t ] && { secs=$2; shift 2; }
	timeout -k 10 "$secs" sbatch --wait "$@"
}

# A field of scontrol show job (JobState, Restarts, ExcNodeList...).
job_field() { # JOBID FIELD
	timeout 10 scontrol show job "$1" 2>/dev/null | grep -o "\b$2=[^ ]*" | head -1 | cut -d= -f2-
}
# Waits for the job to be requeued (pending, Restarts=N), then starts it
# 3 s from now: a requeued batch job waits out Slurm's credential window
# (121 s) otherwise, and slurmd refuses a credential no newer than the
# requeue's revocation of the old one (now would fail the job).
restart_now() { # JOBID RESTARTS SECS
	local i
	for ((i = 0; i < $3 * 5; i++)); do
		if [ "$(job_field "$1" JobState)" = PENDING ] &&
			[ "$(job_field "$1" Restarts)" = "$2" ]; then
			timeout 10 scontrol update jobid="$1" StartTime=now+3 && return 0
		fi
		sleep 0.2
	done
	return 1
}
wait_job_done() { # JOBID SECS
	local id=$1 deadline state
	deadline=$(( $(date +%s) + $2 ))
	while :; do
		state=$(timeout 10 scontrol show job "$id" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)
		case $state in
		PENDING | RUNNING | CONFIGURING | COMPLETING | SUSPENDED | "") ;;
		*) echo "$state"; return 0 ;;
		esac
		if [ "$(date +%s)" -ge "$deadline" ]; then
			echo "${state:-UNKNOWN}"
			return 1
		fi
		sleep 0.2
	done
}

# "STATE|REASON" of NODE as the controller has it, the state without its
# flags ('*': not responding yet, which a node just resumed may be).
node_is() { # NODE
	timeout 10 sinfo -h -n "$1" -N -o '%T|%E' | head -n 1 | sed 's/^\([a-z]*\)[^a-z|]*|/\1|/'
}

# Resumes what a test drained (trainenv never resumes a node itself), then
# waits for every node to be idle.
resume_nodes() { # NODE...
	local n
	for n in "$@"; do
		timeout 10 scontrol update NodeName="$n" State=RESUME 2>/dev/null
	done
	wait_nodes_idle 30 >/dev/null
}

wait_nodes_idle() { # SECS
	local deadline states
	deadline=$(( $(date +%s) + $1 ))
	while :; do
		states=$(timeout 10 sinfo -h -N -o '%N %T' 2>&1)
		if [ -n "$states" ] && ! printf '%s\n' "$states" | grep -vq ' idle$'; then
			return 0
		fi
		if [ "$(date +%s)" -ge "$deadline" ]; then
			diag "nodes not idle after $1 s:" "$states"
			return 1
		fi
		sleep 0.2
	done
}

# ------------------------------------------------------------------ features
# What this Slurm and this PyTorch can do, for the checks that need it. Each
# returns 0 when the feature is MISSING and sets TE_WHY to one line saying
# why (for skip, or for a whole test: te_skip_all "$TE_WHY"); 1 when it is
# there, or when the probe itself could not tell (the checks then run and
# say what went wrong).
#   te_no_mpi_pmix              this Slurm has no mpi/pmix plugin (Debian's
#                               26.05.5-1, #1149781): srun --mpi=list
#   te_no_torchrun_store        this torch's TCPStore asks for libuv, which it
#                               was built without (Debian trixie's and sid's
#                               torch 2.x): torchrun's static rendezvous
#                               cannot start, whatever USE_LIBUV says
#   te_require_mpi_pmix         the whole test needs srun --mpi=pmix: before
#                               plan, "1..0 # SKIP why" and exit 0 without it
#   te_skip_all WHY             "1..0 # SKIP WHY", exit 0 (before plan)
#   te_torch_store_env          where te_no_torchrun_store, export USE_LIBUV=0
#                               (what init_process_group's env:// reads)
TE_WHY=

te_skip_all() {
	echo "1..0 # SKIP $*"
	exit 0
}

# srun --mpi=list needs a slurm.conf, not a running cluster: the cluster's
# when there is one, else a minimal one of our own (srun only reads it).
_te_mpi_list= _te_srun_version=
te_no_mpi_pmix() {
	local conf=${SLURM_CONF:-} tmp=
	if [ -z "$_te_mpi_list" ]; then
		if [ -z "$conf" ] || [ ! -r "$conf" ]; then
			conf=${TE_CLUSTER_DIR:+$TE_CLUSTER_DIR/etc/slurm.conf}
		fi
		if [ -z "$conf" ] || [ ! -r "$conf" ]; then
			tmp=$(mktemp -d /var/tmp/te-mpilist.XXXXXX) || return 1
			conf=$tmp/slurm.conf
			printf '%s\n' ClusterName=probe SlurmctldHost=localhost \
				NodeName=localhost 'PartitionName=p Nodes=localhost' >"$conf"
		fi
		_te_mpi_list=$(SLURM_CONF=$conf timeout 30 srun --mpi=list 2>&1)
		# srun --version needs a slurm.conf too.
		_te_srun_version=$(SLURM_CONF=$conf timeout 30 srun --version 2>&1 | head -n 1)
		[ -n "$tmp" ] && rm -rf "$tmp"
	fi
	# Only a list that srun printed and that lacks pmix says "missing".
	if printf '%s\n' "$_te_mpi_list" | grep -q '^MPI plugin types are' &&
		! printf '%s\n' "$_te_mpi_list" | grep -qx '[[:space:]]*pmix'; then
		TE_WHY="this Slurm ($_te_srun_version) has no mpi/pmix plugin (srun --mpi=list)"
		return 0
	fi
	return 1
}

te_require_mpi_pmix() {
	if te_no_mpi_pmix; then te_skip_all "$TE_WHY"; fi
}

_te_store_probe=
te_no_torchrun_store() {
	[ -n "$_te_store_probe" ] ||
		_te_store_probe=$(timeout 60 /usr/bin/python3 -c 'import torch.distributed as d; d.TCPStore("127.0.0.1", 0, 1, True)' 2>&1; echo "exit $?")
	if grep -q 'use_libuv was requested' <<<"$_te_store_probe"; then
		TE_WHY="torchrun cannot start here: this torch's TCPStore (torchrun's static rendezvous) asks for libuv, which it was built without (Debian's torch 2.x)"
		return 0
	fi
	return 1
}

# init_process_group's env:// and tcp:// rendezvous do read USE_LIBUV
# (torch/distributed/rendezvous.py), torchrun's static one does not: where
# this torch lacks libuv, USE_LIBUV=0 in the environment srun and sbatch
# pass on lets the task-per-rank scripts meet. Nothing changes elsewhere.
te_torch_store_env() {
	if te_no_torchrun_store; then
		export USE_LIBUV=0
		diag "this torch has no libuv: USE_LIBUV=0 for init_process_group"
	fi
}

# FILE NAME SECS, a task for hang-up tests (t20, t31): rank 0 records the
# job id (TE_WORK/NAME.job, which the tests cancel at their end) and srun's
# address (NAME.comm); every rank records its ignored signals
# (NAME.sigign.RANK), announces its start (NAME.start.RANK), prints a line
# every 50 ms for about SECS seconds (srun's output never stops), then
# writes its result file (NAME.done.RANK). A killed task writes none.
tick_task_write() { # FILE
	cat >"$1" <<EOF
#!/bin/sh
name=\$1
n=\$(( \$2 * 20 ))
[ "\$SLURM_PROCID" = 0 ] && echo "\$SLURM_JOB_ID" >"$TE_WORK/\$name.job" && echo "\$SLURM_SRUN_COMM_HOST" >"$TE_WORK/\$name.comm"
grep SigIgn /proc/self/status | cut -f2 >"$TE_WORK/\$name.sigign.\$SLURM_PROCID"
: >"$TE_WORK/\$name.start.\$SLURM_PROCID"
i=0
while [ \$i -lt \$n ]; do
	i=\$((i + 1))
	echo "tick \$i of rank \$SLURM_PROCID"
	sleep 0.05
done
echo "rank \$SLURM_PROCID done after \$i ticks" >"$TE_WORK/\$name.done.\$SLURM_PROCID"
EOF
	chmod 755 "$1"
}

# The hang-up shield, as a user meets it: nohup srun ARGS... & then
# kill -HUP srun once N tasks have written DIR/NAME.started.* (the
# command writes those, and DIR/NAME.done.* when it finished its work);
# srun's output in $TE_WORK/NAME.out. Sets rc (srun's status) and
# done_files (how many tasks finished).
hup_run() { # NAME DIR N SRUN_ARGS...
	local name=$1 dir=$2 n=$3 pid
	shift 3
	rm -f "$dir/$name".*
	nohup srun "$@" >"$TE_WORK/$name.out" 2>&1 &
	pid=$!
	te_on_exit "kill -KILL $pid 2>/dev/null"
	for _ in $(seq 1 600); do
		[ "$(find "$dir" -maxdepth 1 -name "$name.started.*" | wc -l)" -ge "$n" ] && break
		sleep 0.1
	done
	kill -HUP "$pid"
	for _ in $(seq 1 450); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	wait "$pid"
	rc=$?
	done_files=$(find "$dir" -maxdepth 1 -name "$name.done.*" | wc -l)
}

# After hup_run NAME DIR of a step that was to be killed, whose tasks write
# NAME.done.* once their sleep of SECS s has run to its end: waits until
# SECS + 2 s after the first task started, then prints how many did. A
# program that outlived its step is counted; hup_run counts at srun's end.
hup_outlived() { # NAME DIR SECS
	local first
	first=$(stat -c %Y "$2/$1".started.* | sort -n | head -n1)
	sleep "$(awk -v s="$first" -v d="$3" -v n="$(date +%s)" 'BEGIN { w = s + d + 2 - n; print (w > 0 ? w : 0) }')"
	find "$2" -maxdepth 1 -name "$1.done.*" | wc -l
}

# A container root in DIR (merged /usr, as Debian's) holding PROGRAMS from
# this machine and their libraries, for Slurm's OCI bundles and Apptainer
# images that need no archive.
mini_rootfs() { # DIR PROGRAMS...
	local root=$1 p lib dst
	shift
	mkdir -p "$root"/{etc,proc,sys,dev,tmp,var/tmp,root,home,usr/bin,usr/lib,usr/lib64} || return 1
	ln -sfn usr/bin "$root/bin"
	ln -sfn usr/lib "$root/lib"
	ln -sfn usr/lib64 "$root/lib64"
	for p in "$@"; do
		p=$(command -v "$p") || return 1
		cp -L "$p" "$root/usr/bin/${p##*/}" || return 1
		for lib in $(ldd "$p" | grep -oE '/[^ ]+'); do
			dst=$root/usr${lib#/usr}
			mkdir -p "$(dirname "$dst")" && cp -L "$lib" "$dst" || return 1
		done
	done
}

# --train-requeue without a bad node: the batch script SCRIPT (its srun
# asks for --train-preflight=on) runs on 2 nodes with fake GPUs (a
# libcudart.so stand-in in FAKEDIR), and n1's pre-flight fails (the
# plugin's test hook: test-hooks=on in plugstack.conf). Checks, as WHAT
# ("steps in the image"), that the job is requeued without n1 and
# completes, and that the output names n1, its exit code 75 and the
# restart (2 checks); leaves the output of both runs in out.
requeue_without_n1() { # SCRIPT FAKEDIR WHAT
	local id state
	id=$(cd "$TE_WORK" && TRAINENV_TEST_PREFLIGHT_FAIL="n1:out of memory" LD_LIBRARY_PATH=$2 \
		CUDA_VISIBLE_DEVICES=0,1 sbatch --parsable -N2 -t 5 --open-mode=append -o "$TE_WORK/rq.out" \
		--train-requeue=2 "$1" | cut -d';' -f1)
	restart_now "$id" 1 90
	state=$(wait_job_done "$id" 180)
	out=$(cat "$TE_WORK/rq.out" 2>/dev/null)
	is "$state,$(job_field "$id" Restarts),$(job_field "$id" ExcNodeList)" "COMPLETED,1,n1" \
		"--train-requeue, $3, n1's pre-flight fails: the job is requeued without n1 and completes" || diag "$out"
	like "$out" '(^|\n)trainenv: requeue: node n1 failed: rank 0 failed its check before training \(exit code 75\); the job is requeued without n1 \(restart 1 of 2\)' \
		"  the output names n1, its exit code 75 and the restart"
}
