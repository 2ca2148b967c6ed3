#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# trainenv under a real Apptainer (issue 24, item 7), on the real cluster: Debian's apptainer (in the sid root's archive; Debian 12 and trixie have none) runs each task's program from an image built here whose %environment sets RANK=99 and the heartbeat to 5. The program sees trainenv's RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT and enforced heartbeat, as the same step without a container, with and without --cleanenv (trainenv's APPTAINERENV_ copies; without them the image's values win, checked); as root and as an unprivileged user; the failure report names a failed rank; trainenv stacks finds the ranks (with --cleanenv too, through trainenv's TRAINENV_TASK); the binding, the hang-up shield and the pre-flight's result reach the program, and a job whose node fails its pre-flight is requeued without it; the signals trainenv ignores do not (Apptainer resets them), nor does the first-collective barrier, and srun says each once.
# Single-quoted $VARS are for the tasks' shells:
# shellcheck disable=SC2016
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"

n_checks=20
plan $n_checks
if ! command -v apptainer >/dev/null; then
	skip "apptainer is not installed: Debian has it from sid on (tests/deps.sh installs it where the archive has it; TE_SLURM=sid tests/check.sh runs this test)" $n_checks
	done_testing
fi
if [ "$(id -u)" -ne 0 ]; then
	skip "needs root (the cluster, the image)" $n_checks
	done_testing
fi

te_build_init
cluster_up --nodes 3 || bail_out "no cluster"
use_trainenv "helper-dir=$TE_BUILDDIR" "nccl-heartbeat=900" "enforce=nccl-heartbeat"
mpi=--mpi=pmix
if te_no_mpi_pmix; then
	mpi=--mpi=none
	diag "without PMIx: $TE_WHY"
fi

# ---------------------------------------------------------------- the image
# A root of a shell and its libraries copied from this machine, made an
# Apptainer sandbox by apptainer build, with an %environment that sets what
# trainenv decides (as NGC images set NCCL and PyTorch variables).
rootfs=$TE_WORK/rootfs
img=$TE_WORK/image
mini_rootfs "$rootfs" sh env cat sleep || bail_out "cannot make the image's root"
echo te-apptainer-image >"$rootfs/etc/te-apptainer-image"
cat >"$TE_WORK/image.def" <<EOF
Bootstrap: scratch
%setup
    cp -a "$rootfs/." "\$APPTAINER_ROOTFS/"
%environment
    export RANK=99
    export TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC=5
EOF
out=$(timeout 300 apptainer -q build --sandbox "$img" "$TE_WORK/image.def" 2>&1)
rc=$?
chmod -R a+rX "$img" 2>/dev/null
[ "$rc" = 0 ] && [ -f "$img/.singularity.d/env/90-environment.sh" ]
ok $? "apptainer $(apptainer --version | awk '{ print $NF }') builds the image, its %environment setting RANK=99 and the heartbeat to 5" ||
	bail_out "apptainer build failed: $out"
# root here lacks a capability Apptainer asks for (CAP_SYS_RESOURCE is
# not in this machine's bounding set): root runs it in a user namespace
# (--userns), as an unprivileged user always does
ax="apptainer -s exec --userns"

# the image's %environment wins over a variable of the same name, without
# trainenv's APPTAINERENV_ copies: the checks below can fail
out=$(cd /tmp && RANK=3 TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC=900 timeout 60 $ax "$img" sh -c 'echo "$RANK $TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC"' 2>&1)
is "$out" "99 5" "without trainenv, the image's %environment replaces RANK and the heartbeat (what trainenv's copies are for)"

show='echo "env ${SLURM_PROCID:-none} ${RANK:-none} ${WORLD_SIZE:-none} ${MASTER_ADDR:-none} ${MASTER_PORT:-none} ${TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC:-none}"; cat /etc/te-apptainer-image 2>/dev/null || echo on-the-node'
# per rank, with RANK (the second field) in place of SLURM_PROCID (gone
# under --cleanenv), and MASTER_PORT (chosen per step) as "port"
ranks() { grep '^env ' | awk '{ $2 = ""; $6 = ($6 ~ /^[0-9]+$/) ? "port" : $6; print }' | sort; }
base=$(te_srun -t 60 $mpi -N3 --ntasks-per-node=1 sh -c "$show" 2>&1)
[ "$(ranks <<<"$base" | grep -c ' 900$')" = 3 ] || diag "$base"
for clean in "" --cleanenv; do
	out=$(te_srun -t 120 $mpi -N3 --ntasks-per-node=1 $ax $clean "$img" sh -c "$show" 2>&1)
	rc=$?
	[ "$(grep -c '^te-apptainer-image$' <<<"$out")" = 3 ] && [ "$(ranks <<<"$out")" = "$(ranks <<<"$base")" ]
	ok $? "apptainer exec ${clean:-(no option)}: each rank's RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT and the enforced heartbeat are trainenv's, over the image's (rc=$rc)" ||
		diag "$base" "$out"
done

# an unprivileged user: Apptainer in its own user namespace
out=$(cd /tmp && setpriv --reuid=nobody --regid=nogroup --clear-groups timeout 120 srun $mpi -N3 --ntasks-per-node=1 \
	apptainer -s exec --cleanenv "$img" sh -c "$show" 2>&1)
[ "$(grep -c '^te-apptainer-image$' <<<"$out")" = 3 ] && [ "$(ranks <<<"$out")" = "$(ranks <<<"$base")" ]
ok $? "as user nobody, apptainer exec --cleanenv: the same" || diag "$out"

out=$(te_srun -t 120 $mpi -N3 --ntasks-per-node=1 $ax "$img" sh -c '[ "$RANK" != 1 ] || exit 7; sleep 1' 2>&1)
like "$out" '(^|\n)trainenv: rank 1 \(node n2, local rank 0\) exited with code 7 at .*: the first failure of this step' \
	"the failure report names rank 1 on n2 in its container"

# trainenv stacks: the ranks under apptainer, once all are running; with
# --cleanenv their programs have no Slurm variable, only trainenv's copies
# (TRAINENV_TASK names the task). Control: without its copies, --cleanenv
# leaves nothing that tells the ranks.
probe=$TE_WORK/probe
mkdir -p "$probe" && chmod 1777 "$probe"
apptainer_stacks() { # NAME WRAP... -- APPTAINER_OPTIONS...: trainenv stacks' output in $st
	local name=$1 wrap=() before spid job='' i
	shift
	while [ "$1" != -- ]; do wrap+=("$1"); shift; done
	shift
	rm -f "$probe/$name".*
	before=$(te_last_job_id)
	te_srun -t 120 $mpi -N3 --ntasks-per-node=1 "${wrap[@]}" $ax "$@" --bind "$probe:/probe" "$img" \
		sh -c ": >/probe/$name.\$\$; exec sleep 60" >/dev/null 2>&1 &
	spid=$!
	for i in $(seq 1 600); do
		[ "$(find "$probe" -name "$name.*" | wc -l)" = 3 ] && break
		sleep 0.1
	done
	job=$(te_jobs_after "$before" | awk '{ print $1 }')
	st=$(timeout 60 "$TE_TOOL" stacks "$job.0" 2>&1)
	[ -n "$job" ] && timeout 10 scancel "$job"
	wait "$spid" 2>/dev/null
}
for clean in "" --cleanenv; do
	apptainer_stacks "st$clean" -- $clean
	grep -qE '^trainenv: hang: ranks 0-2 on n1-n3 \(3 ranks' <<<"$st" && grep -q 'nanosleep' <<<"$st"
	ok $? "apptainer exec ${clean:-(no option)}: trainenv stacks finds the 3 ranks in their containers, with sleep's frames"
	diag "$(head -n 6 <<<"$st")"
done
apptainer_stacks ctl env -u APPTAINERENV_TRAINENV_TASK -u SINGULARITYENV_TRAINENV_TASK -- --cleanenv
like "$st" '^trainenv: no rank of step [0-9]+\.0 is running$' \
	"  control: --cleanenv without trainenv's TRAINENV_TASK copies, no rank is found (what TRAINENV_TASK is for)"

# the binding: set on the task before apptainer starts, kept by it
bind='while read -r k v; do [ "$k" = Cpus_allowed_list: ] && c=$v; done </proc/self/status; echo "bind ${RANK:-none} $c ${TRAINENV_BIND:-none}"'
b0=$(te_srun -t 120 $mpi -N1 --ntasks-per-node=2 --train-bind=cores sh -c "$bind" 2>&1)
b1=$(te_srun -t 120 $mpi -N1 --ntasks-per-node=2 --train-bind=cores $ax "$img" sh -c "$bind" 2>&1)
[ "$(grep -c '^bind [01] [0-9]' <<<"$b0")" = 2 ] && [ "$(grep '^bind ' <<<"$b1" | sort)" = "$(grep '^bind ' <<<"$b0" | sort)" ]
ok $? "--train-bind=cores: each rank's CPUs and TRAINENV_BIND in the container are as without one" || diag "$b0" "$b1"

# signals trainenv ignores for the task: Apptainer's starter sets them to
# their defaults (apptainer 1.4.5); srun says so once
sig='while read -r k v; do [ "$k" = SigIgn: ] && echo "sig $v"; done </proc/self/status'
out=$(te_srun -t 120 $mpi -N3 --ntasks-per-node=1 --train-sighup=ignore --train-ignore-signals=PIPE \
	$ax "$img" sh -c "$sig" 2>&1)
mask=$(sed -n 's/^sig //p' <<<"$out" | sort -u)
is "$(grep -c "^trainenv: note: srun apptainer: Apptainer starts the program with every signal at its default, so the signals trainenv ignores for the tasks (--train-sighup=ignore, --train-ignore-signals) are not ignored there; srun's own hang-up shield still holds$" <<<"$out")" 1 \
	"--train-sighup=ignore --train-ignore-signals=PIPE with srun apptainer: srun says once that Apptainer resets them" || diag "$out"
[ "$(grep -c '^sig ' <<<"$out")" = 3 ] && [ "$(wc -l <<<"$mask")" = 1 ] && ! sig_ignored "$mask" 13
ok $? "  as indeed: SIGPIPE is not ignored in the program (SigIgn $mask)" || diag "$out"
out=$(te_srun -t 60 $mpi -N1 --train-sighup=ignore sh -c 'echo apptainer' 2>&1)
is "$(grep -c 'Apptainer starts' <<<"$out")" 0 "  a step whose command is not apptainer says nothing of it"

# the hang-up shield: srun's side
hup_run hup "$probe" 2 -t 3 $mpi -N2 --ntasks-per-node=1 $ax --bind "$probe:/probe" "$img" sh -c \
	": >/probe/hup.started.\$\$; sleep 15 && : >/probe/hup.done.\$\$"
is "$rc,$done_files" "0,2" "nohup srun apptainer exec & + kill -HUP: srun exits 0 and both ranks in the container finish (the shield)" ||
	diag "$(cat "$TE_WORK/hup.out")"

# the GPU pre-flight runs on the node before apptainer starts; its result
# reaches the program (fake GPUs, a stand-in CUDA runtime), --cleanenv too
if fake_gpus; then
	use_trainenv "helper-dir=$TE_BUILDDIR" "bind-topology=$TE_WORK/gpus.xml"
	out=$(LD_LIBRARY_PATH=$TE_WORK/fake CUDA_VISIBLE_DEVICES=0,1 te_srun -t 120 $mpi -N3 \
		--ntasks-per-node=1 --train-launcher=task --train-preflight=on $ax --cleanenv "$img" \
		sh -c 'echo "pf ${RANK:-none} ${TRAINENV_PREFLIGHT:-none}"' 2>&1)
	is "$(grep -cE '^pf [0-2] gpu=0000:8[12]:00.0 free=[0-9]+ total=85899345920 runtime=12040 driver=12080$' <<<"$out")" 3 \
		"the GPU pre-flight runs on the node before apptainer, and TRAINENV_PREFLIGHT reaches each rank (--cleanenv)" || diag "$out"
	# --train-requeue: n1 fails its pre-flight (test hook) on the node,
	# before apptainer starts (exit code 75); the job is requeued without
	# n1 and its restart's ranks run in the container on n2 and n3
	use_trainenv "helper-dir=$TE_BUILDDIR" "bind-topology=$TE_WORK/gpus.xml" "test-hooks=on"
	cat >"$TE_WORK/rq.sh" <<-EOF
		#!/bin/bash
		srun $mpi --ntasks-per-node=1 --train-launcher=task --train-preflight=on $ax --cleanenv $img \\
			sh -c 'echo "ran \${RANK:-none} restart=\${TRAINENV_RESTART:-none} \$(cat /etc/te-apptainer-image)"'
	EOF
	requeue_without_n1 "$TE_WORK/rq.sh" "$TE_WORK/fake" "steps under apptainer"
	# (without PMIx the first run's rank on n2 runs too, restart=none)
	is "$(grep '^ran .* restart=1 ' <<<"$out" | sort | tr '\n' ' ')" "ran 0 restart=1 te-apptainer-image ran 1 restart=1 te-apptainer-image " \
		"  the restart's 2 ranks run in the container, TRAINENV_RESTART=1 through --cleanenv" || diag "$out"
	use_trainenv "helper-dir=$TE_BUILDDIR" "nccl-heartbeat=900" "enforce=nccl-heartbeat"
else
	skip "no stand-in CUDA runtime in the build or no hwloc export" 4
fi

# first-collective: no trainenv-nccl.so and no PMIx client in the image
out=$(te_srun -t 120 $mpi -N2 --ntasks-per-node=1 --train-barrier=first-collective $ax "$img" \
	sh -c 'echo "preload ${LD_PRELOAD:-none}"' 2>&1)
is "$(grep -c '^trainenv: note: srun apptainer: --train-barrier=first-collective does not run in an Apptainer container (the image has no trainenv-nccl.so and no PMIx client for it): no barrier runs; --train-barrier=SECONDS runs it on the nodes before the program starts$' <<<"$out")" 1 \
	"--train-barrier=first-collective with srun apptainer: srun says once that it does not run there" || diag "$out"
is "$(grep '^preload ' <<<"$out" | sort -u)" "preload none" "  and no task gets the preload" || diag "$out"
done_testing
