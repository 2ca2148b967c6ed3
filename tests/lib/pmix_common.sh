# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# Sourced by the PMIx layer's integration tests (t5x_pmix_*.sh and others)
# after itest.sh and trainenv.sh: the plugstack.conf line that loads the
# plugin with the rendezvous helper of the build tree and the test hooks
# on (TRAINENV_TEST_*: documented in docs/pmix.md, never for production),
# and what those tests share. Where the build is (builddir, plugin, helper,
# tool, libtrainenv, srcdir): te_build_init (trainenv.sh).
# shellcheck disable=SC2034
PY=/usr/bin/python3	# Debian's, with torch and mpi4py

# pmix_plugstack [KEY=VALUE...]: the plugin with the build tree's helper.
# shellcheck disable=SC2154 # plugin, builddir, srcdir: te_build_init
pmix_plugstack() {
	set_plugstack "required $plugin helper-dir=$builddir test-hooks=on $*"
}

# The address a node's name resolves to inside that node.
node_addr() { cluster_exec "$1" getent ahostsv4 "$1" | awk 'NR == 1 { print $1 }'; }

# Lines of TEXT matching REGEX.
count_lines() { printf '%s\n' "$1" | grep -cE -- "$2"; }

# A step of 6 tasks on n1-n3 that the launch must refuse (t57, t58): srun
# -t SRUN_SECS --mpi=pmix SRUN_ARGS... sh -c "echo ran". Checks that it
# failed within SECS and that no rank ran; leaves out, rc and TE_SECONDS.
refused_step() { # SRUN_SECS SECS NAME [SRUN_ARGS...]
	local srun_secs=$1 secs=$2 name=$3
	shift 3
	local -a srun_args=("$@")
	# shellcheck disable=SC2016 # expanded by eval, inside te_seconds
	te_seconds eval 'out=$(te_srun -t "$srun_secs" --mpi=pmix -N3 --ntasks-per-node=2 -w "n[1-3]" "${srun_args[@]}" sh -c "echo ran" 2>&1)'
	rc=$?
	[ $rc -ne 0 ] && awk -v t="$TE_SECONDS" -v l="$secs" 'BEGIN { exit !(t < l) }'
	ok $? "$name (exit $rc, $TE_SECONDS s)" || diag "$out"
	is "$(count_lines "$out" '^ran$')" 0 "  no rank ran"
}

# The test hook that gives nodes n1..nN "a GPU" (/dev/null for NVIDIA's
# /dev/nvidiactl): only a node with a GPU takes part in the NCCL and CUDA
# version comparison (docs/pmix.md, "Launch checks").
gpu_nodes() { # N
	local i spec=
	for ((i = 1; i <= $1; i++)); do spec+="${spec:+,}n$i:/dev/null"; done
	printf '%s\n' "$spec"
}

# No process of the PMIx layer or of the test's programs is left in any
# node (the step is over): prints what is left. Only the node's own
# processes count (its network namespace): other clusters may run on the
# same machine.
leftovers() { # PATTERN
	local n
	for n in $(seq 1 "${TE_CLUSTER_NODES:-3}"); do
		node_pgrep "n$n" -af -- "$1" 2>/dev/null |
			grep -v pgrep | sed "s/^/n$n: /"
	done
}

# After a step in which a node started after its parent in the launch tree
# (or rank 0) had given up: that node's helper asks PMIx for the parent's
# address, and Slurm's mpi/pmix sends the request (a direct modex) to a
# node whose step has ended, 7 tries 0.5 s apart, doubling: 31.5 s on the
# thread that serves the node's PMIx clients (pmixp_server.c, _slurm_send;
# no mpi.conf option changes it). A late parent answers its children's
# earlier requests the same way, 31.5 s more for each child whose step has
# ended. Up to 24.11 and 25.05.3 slurmstepd stopped answering slurmd
# before it finalized PMIx, so the node went back at once; from 25.05.4
# and 25.11 (SchedMD's 051e162957) it finalizes PMIx first, which waits
# for those retries, and slurmd keeps the job on the node until then. The
# next step, a job of its own, would queue behind it and its time would
# be that wait: this waits, within SECS, until every node of NODES is
# idle, and says how long it took (about 0 s up to 25.05.3, 31.5 s or a
# multiple of it from 25.05.4).
nodes_released() { # SECS NODES WHAT
	local t0 states
	t0=$(date +%s.%N)
	while :; do
		states=$(timeout 10 sinfo -h -N -n "$2" -o '%N %T' 2>&1)
		if [ -n "$states" ] && ! printf '%s\n' "$states" | grep -vq ' idle$'; then
			TE_SECONDS=$(awk -v s="$t0" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
			ok 0 "$3: $2 idle again within $1 s ($TE_SECONDS s)"
			return 0
		fi
		if awk -v s="$t0" -v e="$(date +%s.%N)" -v l="$1" 'BEGIN { exit !(e - s >= l) }'; then
			ok 1 "$3: $2 idle again within $1 s"
			diag "still not idle:" "$states"
			return 1
		fi
		sleep 0.2
	done
}

# After a step that failed: waits, up to 10 s, until as many jobs of ours
# run as BEFORE and no process matching PATTERN is left on any node
# (slurmstepd ends a moment after srun has the exit codes); the caller's
# checks then say what is left.
settle() { # BEFORE PATTERN
	local i
	for ((i = 0; i < 50; i++)); do
		[ "$(squeue -h -t R | wc -l)" = "$1" ] && [ -z "$(leftovers "$2")" ] && return 0
		sleep 0.2
	done
	return 1
}
