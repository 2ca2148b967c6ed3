#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# trainenv with Slurm's own OCI containers (srun --container=BUNDLE, oci.conf
# with Debian's crun; issue 24, item 6), on the real cluster. The bundle's
# root is made here: a shell and its libraries copied from this machine,
# and a marker file; its config.json is crun's own (crun spec) sharing the
# node's network and process namespaces, as training needs.
#  Slurm before 23.02 (Debian 12's 22.05) writes the container's
#    environment before any plugin runs: srun says so in one line, once,
#    and the program indeed sees nothing of trainenv's; a step without a
#    container says nothing.
#  23.02 and later (trixie's 24.11): the program in the container sees
#    trainenv's RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT and an enforced
#    heartbeat, as the same step without a container; the failure report
#    names a failed rank; --train-barrier=first-collective says in one line
#    that it does not run there, and no task gets the preload; the
#    binding reaches the program; trainenv stacks finds the ranks under
#    the runtime, with frames from the container's files.
#  Every release: srun's hang-up shield holds for a step in a container,
#    and a batch job whose n1 fails its pre-flight (on the node, before the
#    runtime) is requeued without n1, its restart's ranks in the container.
# crun runs through a wrapper that hides this machine's hybrid cgroup
# mount (crun refuses "cgroups in hybrid mode"), with cgroups off. Debian's
# runc (when installed) runs the same bundle: the container, the rank
# environment (or 22.05's warning) and the hang report.
# shellcheck disable=SC2016 # $VARS in single quotes are the tasks'
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"

n_checks=24
plan $n_checks
if ! command -v crun >/dev/null; then
	skip "crun is not installed (tests/deps.sh installs Debian's crun)" $n_checks
	done_testing
fi

te_build_init
cluster_up --nodes 3 || bail_out "no cluster"
use_trainenv "helper-dir=$TE_BUILDDIR" "lib-dir=$TE_BUILDDIR/.libs" "nccl-heartbeat=900" "enforce=nccl-heartbeat"
rel=$(sinfo -V | awk '{ print $2 }')
# PMIx where this Slurm has it (Debian's 26.05 has no mpi/pmix): the
# launch runs on the node before the runtime, with it or without
mpi=--mpi=pmix
if te_no_mpi_pmix; then
	mpi=--mpi=none
	diag "without PMIx: $TE_WHY"
fi
new_slurm=$(awk -v v="$rel" 'BEGIN { split(v, a, "."); exit !(a[1] > 23 || (a[1] == 23 && a[2] >= 2)) }' && echo 1 || echo 0)

# ---------------------------------------------------------------- the bundle
bundle=$TE_WORK/bundle
root=$bundle/rootfs
# merged /usr, as Debian's: srun names the program by its path here
# (/bin/sh or /usr/bin/sh), and both must be in the container
mini_rootfs "$root" sh env cat sleep || bail_out "cannot make the bundle's root"
echo "te-oci-image" >"$root/etc/te-oci-image"
(cd "$bundle" && crun spec) || bail_out "crun spec failed"
mkdir -p "$TE_WORK/probe" && chmod 1777 "$TE_WORK/probe"
python3 - "$bundle/config.json" "$TE_WORK/probe" <<'EOF' || bail_out "cannot edit config.json"
import json, sys
path = sys.argv[1]
c = json.load(open(path))
c["process"]["terminal"] = False
# the node's network and processes: ranks reach each other, as in training
c["linux"]["namespaces"] = [n for n in c["linux"]["namespaces"]
                            if n["type"] not in ("network", "pid", "cgroup")]
c["mounts"] = [m for m in c["mounts"] if m.get("type") != "cgroup"]
# the test's probe directory (the ranks leave marks there)
c["mounts"].append({"destination": "/probe", "type": "bind",
                    "source": sys.argv[2], "options": ["rbind", "rw"]})
json.dump(c, open(path, "w"), indent=1)
EOF
chmod -R a+rX "$bundle"

cat >"$TE_WORK/crun.sh" <<'EOF'
#!/bin/sh
# crun with cgroups off, in a mount namespace without this machine's
# cgroup2 mount at /sys/fs/cgroup/unified (crun refuses hybrid mode)
exec unshare -m --propagation private sh -c \
	'umount -l /sys/fs/cgroup/unified 2>/dev/null; exec crun --cgroup-manager=disabled --root=/tmp/te-crun "$@"' crun "$@"
EOF
cat >"$TE_WORK/runc.sh" <<'EOF'
#!/bin/sh
exec runc --root=/tmp/te-runc "$@"
EOF
chmod 755 "$TE_WORK/crun.sh" "$TE_WORK/runc.sh"
conf=$(dirname "$SLURM_CONF")/oci.conf
te_on_exit "rm -f '$conf'"
use_runtime() { # crun|runc: oci.conf for it (slurmstepd reads it per step)
	local wrap=$TE_WORK/$1.sh
	cat >"$conf" <<EOF
RunTimeQuery="$wrap state %n.%u.%j.%s.%t"
RunTimeKill="$wrap kill -a %n.%u.%j.%s.%t"
RunTimeDelete="$wrap delete --force %n.%u.%j.%s.%t"
RunTimeRun="$wrap run --bundle %b %n.%u.%j.%s.%t"
EOF
	chmod 644 "$conf"
}
use_runtime crun

show='echo "env ${SLURM_PROCID:-none} ${RANK:-none} ${WORLD_SIZE:-none} ${MASTER_ADDR:-none} ${MASTER_PORT:-none} ${TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC:-none}"; cat /etc/te-oci-image 2>/dev/null || echo on-the-node'
ranks() { grep '^env ' | sort -n -k2; }
# trainenv stacks on a 3-node step sleeping in the container, once it
# says something (and, with WANT, once that matches): its output in $st
oci_stacks() { # [WANT [BUNDLE]]
	local before spid job='' want=${1:-.} b=${2:-$bundle}
	before=$(te_last_job_id)
	te_srun -t 120 $mpi -N3 --ntasks-per-node=1 --container="$b" sleep 60 >/dev/null 2>&1 &
	spid=$!
	st=''
	for _ in $(seq 1 60); do
		job=$(te_jobs_after "$before" | awk '{ print $1 }')
		[ -n "$job" ] && st=$(timeout 60 "$TE_TOOL" stacks "$job.0" 2>&1) &&
			grep -qE "$want" <<<"$st" && break
		sleep 0.5
	done
	stacks_job=$job
	[ -n "$job" ] && timeout 10 scancel "$job"
	wait "$spid" 2>/dev/null
}
no_rank_line() { # JOB
	echo "trainenv: no rank of step $1.0 found: Slurm ${rel%.*} starts the programs in its OCI containers (srun --container) without the step's environment, so the hang report cannot tell their ranks; Slurm 23.02 and later pass it"
}
oci_line='^trainenv: warning: srun --container: Slurm 2[23]\.[0-9]+ writes the OCI container.s environment before any plugin runs, so nothing trainenv sets for the tasks \(rank variables, MASTER_ADDR and MASTER_PORT, timeouts, TRAINENV_\*\) reaches the program in the container; Slurm 23\.02 and later pass it \(or use pyxis\)$'

base=$(te_srun -t 60 $mpi -N3 --ntasks-per-node=1 sh -c "$show" 2>&1)
out=$(te_srun -t 120 $mpi -N3 --ntasks-per-node=1 --container="$bundle" sh -c "$show" 2>&1)
rc=$?
is "$(grep -c '^te-oci-image$' <<<"$out")" 3 "srun --container=BUNDLE: the 3 tasks run in the container (rc=$rc)" || diag "$out"
if [ "$new_slurm" = 0 ]; then
	is "$(grep -cE "$oci_line" <<<"$out")" 1 "Slurm $rel: srun says once that trainenv's settings cannot reach the container" || diag "$out"
	is "$(ranks <<<"$out" | awk '{ print $2, $3, $7 }' | sort -u)" "none none none" \
		"  and indeed the program there sees no RANK and no heartbeat, not even SLURM_PROCID (what the line says)" || diag "$out"
	out=$(SLURM_CONTAINER=$bundle te_srun -t 120 $mpi -N3 --ntasks-per-node=1 sh -c "$show" 2>&1)
	is "$(grep -cE "$oci_line" <<<"$out")" 1 "  the same from SLURM_CONTAINER (srun's variable for --container)" || diag "$out"
	# the hang report cannot tell the ranks of an OCI step here: it
	# says why, never "no rank is running"
	oci_stacks
	is "$st" "$(no_rank_line "$stacks_job")" \
		"trainenv stacks on an OCI step says in one line why it finds no rank"
	skip "Slurm $rel: first-collective in the container is for 23.02 and later" 2
	skip "Slurm $rel: signal dispositions in the container are for 23.02 and later" 1
	skip "Slurm $rel: the pre-flight's result in the container is for 23.02 and later" 1
	skip "Slurm $rel: the ranks of an OCI step are found by the hang report from 23.02" 3
else
	# (MASTER_PORT is chosen per step: compared as being a number)
	nport() { ranks | awk '{ $6 = ($6 ~ /^[0-9]+$/) ? "port" : $6; print }' | sort -u; }
	[ "$(nport <<<"$base" | grep -c ' 900$')" = 3 ] && [ "$(nport <<<"$out")" = "$(nport <<<"$base")" ]
	ok $? \
		"Slurm $rel: in the container each rank's RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT and the enforced heartbeat are as in the step without one" || diag "$out"
	is "$(grep -c 'trainenv: warning' <<<"$out")" 0 "  and nothing is warned" || diag "$out"
	out=$(te_srun -t 120 $mpi -N3 --ntasks-per-node=1 --container="$bundle" \
		sh -c '[ "$RANK" != 1 ] || exit 7; sleep 1' 2>&1)
	like "$out" '^trainenv: rank 1 \(node n2, local rank 0\) exited with code 7 at .*: the first failure of this step$' \
		"the failure report names rank 1 on n2 in its container"
	# (each task stays 2 s: a node whose step starts a moment after the
	# others' tasks have ended asks their ended steps for rank 0's
	# address and, with first-collective, waits out its barrier's
	# deadline: seen on 24.11, n3's helper killed at srun's 120 s)
	out=$(te_srun -t 120 $mpi -N3 --ntasks-per-node=1 --container="$bundle" \
		--train-barrier=first-collective sh -c 'echo "preload ${LD_PRELOAD:-none}"; sleep 2' 2>&1)
	is "$(grep -c '^trainenv: note: srun --container: --train-barrier=first-collective does not run in an OCI container' <<<"$out")" 1 \
		"first-collective: srun says once that it does not run in an OCI container" || diag "$out"
	is "$(grep '^preload ' <<<"$out" | sort -u)" "preload none" "  and no task gets the preload (no ld.so line per process)" || diag "$out"
	# signal dispositions set in task_init: through the runtime's exec?
	sig='while read -r k v; do [ "$k" = SigIgn: ] && echo "sig $v"; done </proc/self/status'
	out=$(te_srun -t 120 $mpi -N3 --ntasks-per-node=1 --container="$bundle" --train-sighup=ignore \
		--train-ignore-signals=PIPE sh -c "$sig" 2>&1)
	mask=$(sed -n 's/^sig //p' <<<"$out" | sort -u)
	is "$(grep -c '^trainenv: note: srun --container: the OCI runtime starts the program with every signal at its default, so the signals trainenv ignores for the tasks (--train-sighup=ignore, --train-ignore-signals) are not ignored there; srun.s own hang-up shield still holds$' <<<"$out")" 1 \
		"--train-sighup=ignore --train-ignore-signals=PIPE: srun says once that the runtime resets them" || diag "$out"
	[ "$(grep -c '^sig ' <<<"$out")" = 3 ] && [ "$(wc -l <<<"$mask")" = 1 ] &&
		! sig_ignored "$mask" 13
	ok $? "  as indeed: SIGPIPE is not ignored in the container's program (SigIgn $mask; crun starts it afresh)" || diag "$out"
	# the GPU pre-flight runs on the node before the runtime starts; its
	# result reaches the program (fake GPUs, a stand-in CUDA runtime)
	if fake_gpus; then
		use_trainenv "helper-dir=$TE_BUILDDIR" "bind-topology=$TE_WORK/gpus.xml"
		out=$(LD_LIBRARY_PATH=$TE_WORK/fake CUDA_VISIBLE_DEVICES=0,1 te_srun -t 120 $mpi -N3 \
			--ntasks-per-node=1 --train-launcher=task --train-preflight=on --container="$bundle" \
			sh -c 'echo "pf ${RANK:-none} ${TRAINENV_PREFLIGHT:-none}"' 2>&1)
		is "$(grep -cE '^pf [0-2] gpu=0000:8[12]:00.0 free=[0-9]+ total=85899345920 runtime=12040 driver=12080$' <<<"$out")" 3 \
			"the GPU pre-flight runs on the node before the runtime, and TRAINENV_PREFLIGHT reaches each rank in the container" || diag "$out"
		use_trainenv "helper-dir=$TE_BUILDDIR" "lib-dir=$TE_BUILDDIR/.libs" "nccl-heartbeat=900" "enforce=nccl-heartbeat"
	else
		skip "no stand-in CUDA runtime in the build or no hwloc export" 1
	fi
	# the hang report finds the ranks under the runtime (the task is its
	# shell, the program its child) and reads their frames
	oci_stacks '\(3 ranks'
	grep -qE '^trainenv: hang: ranks 0-2 on n1-n3 \(3 ranks' <<<"$st" && grep -qE 'nanosleep' <<<"$st"
	ok $? "trainenv stacks finds the 3 ranks in their containers, with their native frames (sleep's nanosleep)"
	diag "$(head -n 12 <<<"$st")"
	# the same bundle with a PID namespace of its own (crun spec's
	# default): /proc shows the program under its node's pid
	pidns=$TE_WORK/bundle-pidns
	cp -a "$bundle" "$pidns" && python3 - "$pidns/config.json" <<'EOF' || bail_out "cannot edit config.json"
import json, sys
c = json.load(open(sys.argv[1]))
c["linux"]["namespaces"].append({"type": "pid"})
json.dump(c, open(sys.argv[1], "w"), indent=1)
EOF
	oci_stacks '\(3 ranks' "$pidns"
	grep -qE '^trainenv: hang: ranks 0-2 on n1-n3 \(3 ranks' <<<"$st" && grep -qE 'nanosleep' <<<"$st"
	ok $? "  with a PID namespace in the bundle too" || diag "$st"
	# A program that is pid 1 of its own PID namespace ignores SIGTERM,
	# the signal of RunTimeKill (crun kill -a): the scancel above left
	# crun and the ranks' sleep 60 running, and slurmstepd kept the nodes
	# "completing" until the sleep ended (seen on 24.11: a minute of this
	# test). The test sends SIGKILL to that job's container inits, the
	# children of its crun processes (crun list, run here, found none of
	# them); what it checks is the stacks above, not this cleanup.
	for p in $(pgrep -f "run --bundle .*/oci-job$stacks_job-0/"); do
		pkill -KILL -P "$p"
	done
	# the exit watchdog's report: rank 1 sleeps on after the others ended
	# (once the nodes are free: the time measured is this step's, not a
	# wait for nodes)
	wait_nodes_idle 120 || diag "nodes still busy: $(sinfo -h -N -o '%N %T' | tr '\n' ' ')"
	te_seconds te_srun -t 120 $mpi -N3 --ntasks-per-node=1 --container="$bundle" --train-exit-grace=5 \
		sh -c '[ "$RANK" != 1 ] || exec sleep 100' >"$TE_WORK/eg.out" 2>&1
	rc=$?
	grep -qE '^trainenv: hang: rank 1 on n2 \(1 rank' "$TE_WORK/eg.out" && grep -q 'nanosleep' "$TE_WORK/eg.out" &&
		[ "${TE_SECONDS%.*}" -lt 60 ]
	ok $? "--train-exit-grace=5: the report names rank 1 on n2, in its container, with its frames, and the step ends (rc=$rc, $TE_SECONDS s)" ||
		diag "$(cat "$TE_WORK/eg.out")"
fi

# ---------------------------------------------------------------- binding
# The binding is set on the task before the runtime starts. A runtime that
# resets the affinity it starts the program with (crun since 1.9.2 with
# cgroups, 1.28 always) undoes its CPUs: srun says so once; TRAINENV_BIND
# reaches the program as without a container (23.02 and later).
bind='while read -r k v; do [ "$k" = Cpus_allowed_list: ] && c=$v; done </proc/self/status; echo "bind ${SLURM_PROCID:-none} $c ${TRAINENV_BIND:-none}"; cat /etc/te-oci-image 2>/dev/null; true'
bind_line='^trainenv: note: srun --container: --train-bind binds each task before the OCI runtime starts, and a runtime that resets the CPU affinity of the program it starts \(crun since 1\.9\.2, newer runc\) leaves the rank on all the CPUs of the container.s cpuset'"$([ "$new_slurm" = 1 ] && echo ' \(TRAINENV_BIND still names the CPUs trainenv chose\)')"'$'
# (Slurm 22.05 fails to launch two containers of a step on one node:
# "Task launch ... failed: Unspecified error"; one there)
tpn=$((1 + new_slurm))
b0=$(te_srun -t 120 $mpi -N1 --ntasks-per-node=$tpn --train-bind=cores sh -c "$bind" 2>&1)
b1=$(te_srun -t 120 $mpi -N1 --ntasks-per-node=$tpn --train-bind=cores --container="$bundle" sh -c "$bind" 2>&1)
[ "$(grep -cE "$bind_line" <<<"$b1")" = 1 ] && [ "$(grep -c 'srun --container' <<<"$b0")" = 0 ] &&
	[ "$(grep -c '^te-oci-image$' <<<"$b1")" = $tpn ]
ok $? "--train-bind=cores in a container: srun says once that a runtime may reset the CPUs (and not without one)" ||
	diag "$b0" "$b1"
cpus() { grep '^bind ' | sort | awk '{ print $3 }' | paste -sd ' '; }
diag "crun $(crun --version | awk 'NR == 1 { print $3 }'): the ranks' CPUs: $(cpus <<<"$b1") in the container, $(cpus <<<"$b0") without"
if [ "$new_slurm" = 1 ]; then
	[ "$(grep '^bind ' <<<"$b0" | grep -c ' numa=')" = 2 ] &&
		[ "$(grep '^bind ' <<<"$b1" | awk '{ print $2, $4 }' | sort)" = "$(grep '^bind ' <<<"$b0" | awk '{ print $2, $4 }' | sort)" ]
	ok $? "  and each rank's TRAINENV_BIND in the container is as without one" || diag "$b0" "$b1"
else
	skip "Slurm $rel: TRAINENV_BIND in the container is for 23.02 and later" 1
fi

# ---------------------------------------------------------------- shield
# srun's hang-up shield is srun's side: a container does not change it.
# A done file says the rank's sleep ran to its end ("&&": Slurm's kill,
# proctrack/linuxproc, kills the sleep a moment before its shell, which
# would otherwise write the file in between).
probe=$TE_WORK/probe
hup_in_container() { # NAME SRUN_ARGS...
	local name=$1
	shift
	hup_run "$name" "$probe" 2 -t 3 $mpi -N2 --ntasks-per-node=1 --container="$bundle" "$@" sh -c \
		": >/probe/$name.started.\$\$; sleep 15 && : >/probe/$name.done.\$\$"
}
hup_in_container hup
is "$rc,$done_files" "0,2" "nohup srun --container & + kill -HUP: srun exits 0 and both ranks in the container finish (the shield)" ||
	diag "$(cat "$TE_WORK/hup.out")"
hup_in_container hupdef --train-sighup=default
is "$rc" 137 "  with --train-sighup=default: srun kills the step and exits 137, as Slurm does" ||
	diag "$(cat "$TE_WORK/hupdef.out")"
is "$(hup_outlived hupdef "$probe" 15)" 0 "  no rank's program in its container outlived the step (its sleep's end)"

# ---------------------------------------------------------------- requeue
# n1 fails its pre-flight (test hook) on the node, before the runtime
# starts: exit code 75, and the job is requeued without n1; the restart's
# ranks run in the container on n2 and n3.
if fake_gpus; then
	use_trainenv "helper-dir=$TE_BUILDDIR" "bind-topology=$TE_WORK/gpus.xml" "test-hooks=on"
	cat >"$TE_WORK/rq.sh" <<-EOF
		#!/bin/bash
		srun $mpi --ntasks-per-node=1 --train-launcher=task --train-preflight=on --container=$bundle \
			sh -c 'echo "ran \${RANK:-none} \${SLURMD_NODENAME:-none} restart=\${TRAINENV_RESTART:-none} \$(cat /etc/te-oci-image)"'
	EOF
	requeue_without_n1 "$TE_WORK/rq.sh" "$TE_WORK/fake" "steps in OCI containers"
	if [ "$new_slurm" = 1 ]; then
		# (without PMIx the first run's rank on n2 runs too, restart=0)
		is "$(grep '^ran .* restart=1 ' <<<"$out" | sort | tr '\n' ' ')" "ran 0 n2 restart=1 te-oci-image ran 1 n3 restart=1 te-oci-image " \
			"  the restart's ranks run in the container on n2 and n3, TRAINENV_RESTART=1" || diag "$out"
	else
		# 22.05 gives every container srun's environment (the batch
		# script's, TRAINENV_RESTART with it), not the tasks'
		is "$(grep -cE '^ran none .* te-oci-image$' <<<"$out")" 2 \
			"  the restart's 2 ranks run in the container (without the tasks' environment: Slurm $rel)" || diag "$out"
	fi
	use_trainenv "helper-dir=$TE_BUILDDIR" "lib-dir=$TE_BUILDDIR/.libs" "nccl-heartbeat=900" "enforce=nccl-heartbeat"
else
	skip "no stand-in CUDA runtime in the build or no hwloc export" 3
fi

# ---------------------------------------------------------------- runc
if command -v runc >/dev/null; then
	use_runtime runc
	out=$(te_srun -t 120 $mpi -N3 --ntasks-per-node=1 --container="$bundle" sh -c "$show" 2>&1)
	rc=$?
	is "$(grep -c '^te-oci-image$' <<<"$out")" 3 "runc: the 3 tasks run in the container (rc=$rc)" || diag "$out"
	if [ "$new_slurm" = 0 ]; then
		[ "$(grep -cE "$oci_line" <<<"$out")" = 1 ] &&
			[ "$(ranks <<<"$out" | awk '{ print $2, $3, $7 }' | sort -u)" = "none none none" ]
		ok $? "runc: srun's one line on Slurm $rel, and no RANK there" || diag "$out"
		oci_stacks
		is "$st" "$(no_rank_line "$stacks_job")" "runc: trainenv stacks says why it finds no rank"
	else
		[ "$(nport <<<"$out")" = "$(nport <<<"$base")" ] && [ "$(grep -c 'trainenv: warning' <<<"$out")" = 0 ]
		ok $? "runc: each rank's RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT and heartbeat as without a container" || diag "$out"
		oci_stacks '\(3 ranks'
		grep -qE '^trainenv: hang: ranks 0-2 on n1-n3 \(3 ranks' <<<"$st" && grep -qE 'nanosleep' <<<"$st"
		ok $? "runc: trainenv stacks finds the 3 ranks, with their native frames" || diag "$st"
		b1=$(te_srun -t 120 $mpi -N1 --ntasks-per-node=2 --train-bind=cores --container="$bundle" sh -c "$bind" 2>&1)
		diag "runc $(runc --version | awk 'NR == 1 { print $3 }'): the ranks' CPUs: $(cpus <<<"$b1") in the container, $(cpus <<<"$b0") without"
	fi
	use_runtime crun
else
	skip "runc is not installed (tests/deps.sh installs Debian's runc)" 3
fi
out=$(te_srun -t 60 $mpi -N1 sh -c 'exit 0' 2>&1)
is "$(grep -c 'srun --container' <<<"$out")" 0 "a step without a container says nothing of containers"
done_testing
