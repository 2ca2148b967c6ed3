# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# Sourced by the integration tests of the trainenv plugin, after itest.sh.
#
#   te_build_init              find the build, the one way every integration
#                              test and benchmark does: TE_SRCDIR, TE_BUILDDIR,
#                              TE_PLUGIN (trainenv.so), TE_TOOL (the trainenv
#                              program), TE_HELPER (trainenv-rdzv),
#                              TE_LIBTRAINENV (libtrainenv.so.0), TE_REAL_SRCDIR
#                              and TE_REAL_BUILDDIR (the unstaged trees), and
#                              the short names the tests use: srcdir, builddir,
#                              plugin, tool, helper, libtrainenv; bails out in
#                              one line when one of them is not built
#   use_trainenv [ARG...]      plugstack.conf = "required TE_PLUGIN ARG..."
#   te_last_job_id             the highest job id slurmctld still knows (0: none)
#   te_jobs_after ID           the job ids above ID that slurmctld knows
#   fake_gpus                  $TE_WORK/fake/libcudart.so (the build's stand-in
#                              CUDA runtime) and $TE_WORK/gpus.xml (this
#                              machine's topology, 2 fake GPUs a package);
#                              false when the build or hwloc cannot give them
#   sig_ignored MASK SIGNUM    true when the SigIgn hex MASK has SIGNUM's bit
#   std_sigign                 filter: SigIgn masks, one a line, cut to the
#                              standard signals 1-31 (16 hex digits)
#   wait_for_file FILE SECS    true when FILE exists within SECS
#   wait_gone PATTERN SECS     true when no process matches pgrep -f PATTERN
#   explain_settings TEXT      the setting lines of a --train-explain report,
#                              without the "trainenv: " prefix (as `trainenv env`
#                              prints them)
#   te_tmux ARGS...            tmux on this test's own server (killed at exit)
#   tmux_shell SESSION         a new session running an interactive bash with
#                              the cluster's environment, in TE_WORK
#   tmux_type SESSION TEXT     type TEXT and Enter into SESSION
#   tmux_screen SESSION        what SESSION's pane shows (no blank lines)

# When run from `make check` the driver exports TE_BUILDDIR and TE_SRCDIR.
# Standalone (bash tests/integration/tNN.sh) the build is the current
# directory when it holds the plugin, else the source tree itself (an
# in-tree build), else SRCDIR/_build (tests/check.sh's build). After
# tests/lib/itest.sh these are the staged copies (TE_REAL_* the originals);
# a benchmark that sources only this file gets the trees themselves.
# Works without itest.sh: bails out with bail_out when it is there, else
# prints the line on stderr and exits 1.
# shellcheck disable=SC2034 # the short names are for the tests
te_build_init() {
	local src d f
	src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
	TE_SRCDIR=${TE_SRCDIR:-$src}
	if [ -z "${TE_BUILDDIR:-}" ]; then
		for d in "$PWD" "$TE_SRCDIR" "$TE_SRCDIR/_build"; do
			if [ -f "$d/.libs/trainenv.so" ]; then TE_BUILDDIR=$d; break; fi
		done
	fi
	TE_BUILDDIR=$(cd "${TE_BUILDDIR:-.}" && pwd -P)
	TE_PLUGIN=$TE_BUILDDIR/.libs/trainenv.so
	TE_TOOL=$TE_BUILDDIR/trainenv
	TE_HELPER=$TE_BUILDDIR/trainenv-rdzv
	TE_LIBTRAINENV=$TE_BUILDDIR/.libs/libtrainenv.so.0
	TE_REAL_SRCDIR=${TE_REAL_SRCDIR:-$TE_SRCDIR}
	TE_REAL_BUILDDIR=${TE_REAL_BUILDDIR:-$TE_BUILDDIR}
	export TE_SRCDIR TE_BUILDDIR TE_PLUGIN TE_TOOL TE_HELPER TE_LIBTRAINENV \
		TE_REAL_SRCDIR TE_REAL_BUILDDIR
	srcdir=$TE_SRCDIR builddir=$TE_BUILDDIR plugin=$TE_PLUGIN tool=$TE_TOOL
	helper=$TE_HELPER libtrainenv=$TE_LIBTRAINENV
	for f in "$TE_PLUGIN" "$TE_TOOL" "$TE_HELPER" "$TE_LIBTRAINENV"; do
		[ -e "$f" ] && continue
		f="trainenv is not built (no $f): run make first, or set TE_BUILDDIR"
		if declare -F bail_out >/dev/null; then bail_out "$f"; fi
		echo "$f" >&2
		exit 1
	done
}

use_trainenv() { set_plugstack "required $TE_PLUGIN${*:+ $*}"; }

te_last_job_id() {
	timeout 10 scontrol show jobs -o 2>/dev/null |
		sed -n 's/^JobId=\([0-9]*\) .*/\1/p' | sort -n | tail -n 1 | grep . || echo 0
}

te_jobs_after() { # ID
	timeout 10 scontrol show jobs -o 2>/dev/null |
		sed -n 's/^JobId=\([0-9]*\) .*/\1/p' | awk -v id="$1" '$1 > id' | tr '\n' ' '
}

sig_ignored() { # MASK SIGNUM
	[ -n "$1" ] && (( (16#$1 >> ($2 - 1)) & 1 ))
}

# Daemons started from GNU make inherit SIG_IGN for glibc's internal
# real-time signals 32 and 33 (make's own dispositions), and so do their
# tasks; a cluster started by systemd has none. trainenv only ever touches
# standard signals: compare those.
std_sigign() { # masks on stdin, one a line
	local m
	while read -r m; do
		[ -n "$m" ] && printf '%016x\n' $(( 16#$m & 0x7fffffff ))
	done
}

wait_for_file() { # FILE SECS
	local deadline
	deadline=$(( $(date +%s) + $2 ))
	until [ -e "$1" ]; do
		[ "$(date +%s)" -ge "$deadline" ] && return 1
		sleep 0.1
	done
}

wait_gone() { # PATTERN SECS
	local deadline
	deadline=$(( $(date +%s) + $2 ))
	while pgrep -f -- "$1" >/dev/null; do
		[ "$(date +%s)" -ge "$deadline" ] && return 1
		sleep 0.1
	done
}

explain_settings() { # TEXT
	printf '%s\n' "$1" | sed -n 's/^trainenv: \([a-z-]* *= .*\)$/\1/p'
}

# ------------------------------------------------------------------ tmux
# One tmux server per test (its own socket): killing it at exit ends every
# session the test made, whatever happened.
_te_tmux_sock=
te_tmux() {
	if [ -z "$_te_tmux_sock" ]; then
		_te_tmux_sock=te-$(basename "$0" .sh)-$$
		te_on_exit "tmux -L '$_te_tmux_sock' kill-server 2>/dev/null; rm -f '${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$_te_tmux_sock'"
		# A server whose last session is killed exits, and a session
		# created at that moment fails ("server exited unexpectedly"):
		# an idle session keeps the server up until the test ends.
		tmux -L "$_te_tmux_sock" -f /dev/null new-session -d -s te-keep \
			sleep 100000 || return 1
	fi
	tmux -L "$_te_tmux_sock" -f /dev/null "$@"
}

tmux_shell() { # SESSION
	te_tmux new-session -d -s "$1" -x 200 -y 50 \
		env -i PATH="$PATH" HOME="${HOME:-/root}" TERM=xterm \
		SLURM_CONF="$SLURM_CONF" PS1='te$ ' \
		bash --norc --noprofile -i || return 1
	tmux_type "$1" "cd '$TE_WORK'"
}

tmux_type() { # SESSION TEXT
	te_tmux send-keys -t "$1" -l "$2" && te_tmux send-keys -t "$1" Enter
}

tmux_screen() { # SESSION
	te_tmux capture-pane -p -t "$1" 2>/dev/null | grep -v '^$'
}

# The sizes of the slurmd logs of the nodes in "${nodes[@]}", one a line;
# then new_logs SIZES... prints what each log got since, "NODE: " first.
# "PID ARGS" of node NODE's own processes whose command line matches ERE
# (one PID namespace for every node and cluster: the network namespace
# tells them apart). Write the ERE so that it does not match itself
# ("[t]rainenv-rdzv").
node_procs() { # NODE ERE
	# shellcheck disable=SC2016 # expanded inside the node
	cluster_exec "$1" bash -c 'me=$(readlink /proc/self/ns/net)
	for p in $(pgrep -f -- "$1"); do
		[ "$(readlink /proc/$p/ns/net 2>/dev/null)" = "$me" ] || continue
		a=$(tr "\0" " " </proc/$p/cmdline 2>/dev/null) && [ -n "$a" ] && echo "$p $a"
	done; true' bash "$2"
}
log_sizes() { local n; for n in "${nodes[@]}"; do stat -c %s "$TE_CLUSTER_DIR/log/slurmd.$n.log"; done; }
new_logs() {
	local n i=0 sizes=("$@")
	for n in "${nodes[@]}"; do
		tail -c +"$(( sizes[i] + 1 ))" "$TE_CLUSTER_DIR/log/slurmd.$n.log" | sed "s/^/$n: /"
		i=$((i + 1))
	done
}

# The hang tests' ranks say where they stay by a file DIR/rank.R each
# (tests/integration/py/hang.py): 0 once COUNT are there, 1 after SECS.
wait_rank_files() { # DIR COUNT SECS
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		[ "$(find "$1" -name 'rank.*' | wc -l)" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

# The processes matching PATTERN on the cluster's nodes NODE... (n1 n2 n3
# when none is named), as "PID COMMAND" lines.
left_on_nodes() { # PATTERN [NODE...]
	local pattern=$1 n nodes
	shift
	nodes=("$@")
	[ ${#nodes[@]} -gt 0 ] || nodes=(n1 n2 n3)
	for n in "${nodes[@]}"; do cluster_exec "$n" pgrep -af "$pattern" 2>/dev/null; done
}

fake_gpus() {
	local lib=$TE_BUILDDIR/tests/unit/.libs/libfakecudart.so
	[ -f "$lib" ] || return 1
	if [ ! -s "$TE_WORK/gpus.xml" ]; then
		lstopo-no-graphics --of xml --whole-io - >"$TE_WORK/here.xml" 2>/dev/null &&
			"$TE_SRCDIR/tests/lib/add_gpus.py" "$TE_WORK/here.xml" "$TE_WORK/gpus.xml" 2 ||
			return 1
	fi
	mkdir -p "$TE_WORK/fake" && ln -sf "$lib" "$TE_WORK/fake/libcudart.so"
}
