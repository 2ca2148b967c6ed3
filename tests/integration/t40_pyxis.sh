#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# trainenv under pyxis and enroot (NVIDIA's, built from their release
# sources by tests/containers/build.sh, with enroot's PMIx and PyTorch hooks
# on, as sites run them), on a cluster of its own whose slurmd find that
# enroot first on their PATH (pyxis runs "enroot" from slurmstepd's PATH).
# The image is a Debian root with python3 whose ENV (/etc/environment) sets
# PYTORCH_VERSION (so enroot's PyTorch hook sets MASTER_ADDR, MASTER_PORT,
# WORLD_SIZE...) and TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC=60.
#  trainenv listed first (00-trainenv.conf before pyxis.conf): a 3-node x
#    2-rank step in the image sees RANK, LOCAL_RANK, WORLD_SIZE and
#    MASTER_ADDR as the same step without a container, MASTER_PORT from
#    trainenv's range, the enforced nccl-heartbeat (900, not the image's
#    60), nothing warned; --train-explain says what the container set; the
#    failure report names a failed rank; without trainenv's enroot hook the
#    program sees the container's values and every node warns, naming them;
#    the GPU pre-flight (fake GPUs, a stand-in CUDA runtime) runs before the
#    container and TRAINENV_PREFLIGHT reaches it; a pre-flight that cannot be
#    started fails the step without exit code 75; trainenv stacks finds the
#    six ranks in their containers; --train-straggler names a late node,
#    the profiler plugin loaded in the image.
#  pyxis listed first: the container step fails on every task with the one
#    line that says to list trainenv first; a step without a container runs.
# Skips with one line where the runtimes cannot be built.
# shellcheck disable=SC2016 # $VARS in single quotes are the tasks'
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"

n_checks=56
plan $n_checks

# The runtimes: built once into /var/lib/trainenv-containers, from the
# checkout's script (its sources are beside the checkout, not staged).
real_src=${TE_REAL_SRCDIR:-$(cd "$here/../.." && pwd -P)}
out=$("$real_src/tests/containers/build.sh" 2>&1)
rc=$?
if [ "$rc" = 77 ]; then
	skip "$(printf '%s\n' "$out" | tail -n 1)" $n_checks
	done_testing
fi
[ "$rc" = 0 ] || bail_out "tests/containers/build.sh failed: $(printf '%s\n' "$out" | tail -n 5)"
diag "$(printf '%s\n' "$out" | tail -n 1)"
cache=${TE_CONTAINERS_CACHE:-/var/lib/trainenv-containers}
# shellcheck disable=SC1091
. "$cache/env.sh"
image=$TE_CONTAINER_IMAGE
te_build_init

# An enroot of this run's own, with trainenv's hook (pointing at the staged
# build's trainenv-container) in its hooks.d.
enr=$(mktemp -d /var/tmp/te-enroot.XXXXXX) || bail_out "no /var/tmp directory"
te_on_exit "rm -rf '$enr'"
hook=$enr.hook/99-trainenv.sh
mkdir -p "$enr.hook" && te_on_exit "rm -rf '$enr.hook'"
sed "s|@pkglibexecdir@|$TE_BUILDDIR|" "$TE_SRCDIR/etc/enroot-hook.sh.in" >"$hook"
# trainenv's mount entries: the shim (lib-dir below) and the module
sed "s|@pkglibdir@|$TE_BUILDDIR/.libs|g" "$TE_SRCDIR/etc/enroot-mounts.fstab.in" >"$enr.hook/99-trainenv.fstab"
sed "s|@trainenvpydir@|$TE_SRCDIR/python/trainenv|g" "$TE_SRCDIR/etc/enroot-mounts-python.fstab.in" \
	>"$enr.hook/99-trainenv-python.fstab"
"$real_src/tests/containers/instance.sh" "$enr" "$hook" "$enr.hook/99-trainenv.fstab" \
	"$enr.hook/99-trainenv-python.fstab" ||
	bail_out "tests/containers/instance.sh failed"

unset TE_CLUSTER_DIR
export TE_SLURMD_ENV="PATH=$enr/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
cluster_up --nodes 3 || bail_out "no cluster"
ok 0 "cluster is up; enroot $TE_ENROOT_VERSION and pyxis $TE_PYXIS_VERSION built, image $image"
# pyxis's runtime directory, per node (its slurmd-side init makes it only
# when pyxis is in plugstack.conf at slurmd's start).
for n in n1 n2 n3; do cluster_exec "$n" install -d -m 0755 /tmp/pyxis-run; done
pyxis="required $TE_PYXIS_SO runtime_path=/tmp/pyxis-run"
train="required $TE_PLUGIN helper-dir=$TE_BUILDDIR lib-dir=$TE_BUILDDIR/.libs nccl-heartbeat=900 enforce=nccl-heartbeat"
set_plugstack "$train" "$pyxis"

show='echo "env $SLURM_PROCID $RANK $LOCAL_RANK $WORLD_SIZE $MASTER_ADDR $MASTER_PORT $TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC ${PYTORCH_VERSION:-none} ${NCCL_DEBUG:-none}"; [ "$SLURM_PROCID" != 0 ] || echo "rec ${TRAINENV_CONTAINER:-none}"'
ranks() { grep '^env ' | awk '{ print $2, $3, $4, $5, $6 }' | sort -n; }
field() { grep '^env ' | awk -v f="$1" '{ print $f }' | sort -u | paste -sd, -; }

# ================================================================ trainenv first
base=$(te_srun -t 120 --mpi=pmix -N3 --ntasks-per-node=2 sh -c "$show" 2>&1)
in=$(te_srun -t 180 --mpi=pmix -N3 --ntasks-per-node=2 --container-image="$image" sh -c "$show" 2>"$TE_WORK/in.err")
rc=$?
diag "$(cat "$TE_WORK/in.err")"
ok $rc "a 3x2 step in the image runs (trainenv listed before pyxis)"
is "$(ranks <<<"$in")" "$(ranks <<<"$base")" \
	"in the container each rank's RANK, LOCAL_RANK, WORLD_SIZE and MASTER_ADDR are those of the same step without one"
is "$(ranks <<<"$in" | wc -l)" 6 "  six ranks"
port=$(field 7 <<<"$in")
[[ $port =~ ^[0-9]+$ ]] && [ "$port" -ge 20000 ] && [ "$port" -le 29999 ]
ok $? "MASTER_PORT is trainenv's, the same on every rank, in its range 20000-29999 (got $port; enroot's hook would set 61000 + job % 4536)"
is "$(field 8 <<<"$in")" 900 "the enforced nccl-heartbeat is 900 on every rank (the image's ENV says 60)"
is "$(field 9 <<<"$in"),$(field 10 <<<"$in")" "2.3.0,WARN" \
	"the image's other variables reach the program (PYTORCH_VERSION, NCCL_DEBUG)"
like "$(grep '^rec ' <<<"$in")" '^rec enroot:.*TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC=60.*MASTER_ADDR=n1;MASTER_PORT=6[0-9]+' \
	"TRAINENV_CONTAINER records what the container had set (the image's heartbeat, the PyTorch hook's MASTER_*)"
is "$(grep -c 'trainenv: warning' "$TE_WORK/in.err")" 0 "no warning: the program sees what trainenv decided"

out=$(te_srun -t 180 --mpi=pmix -N3 --ntasks-per-node=2 --train-explain --container-image="$image" sleep 1 2>&1)
like "$out" "^trainenv: container: the container's environment set TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC=60, .*MASTER_ADDR=n1, MASTER_PORT=[0-9]+, WORLD_SIZE=6; trainenv's enroot hook kept trainenv's values$" \
	"--train-explain says what the container's environment set, and that trainenv's values were kept"
like "$out" '^trainenv: container: rank 0 sees every value trainenv decided \([0-9]+ variables\)$' \
	"  and that rank 0's program sees every value trainenv decided"

# The failure report from inside containers.
out=$(te_srun -t 180 --mpi=pmix -N3 --ntasks-per-node=2 --container-image="$image" \
	sh -c '[ "$RANK" != 3 ] || exit 7; sleep 1' 2>&1)
rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]
ok $? "a step whose rank 3 exits 7 fails (rc=$rc)"
like "$out" '^trainenv: rank 3 \(node n2, local rank 1\) exited with code 7 at .*: the first failure of this step$' \
	"the failure report names rank 3 on n2, the first failure"

# Without trainenv's hook: the container's values win, and every node says so.
mv "$enr/etc/enroot/hooks.d/99-trainenv.sh" "$enr.hook/off"
# (a program that ends within a millisecond of its start may end before
# the check reads its environment: these run a second)
in=$(te_srun -t 180 --mpi=pmix -N3 --ntasks-per-node=2 --container-image="$image" sh -c "$show; sleep 1" 2>"$TE_WORK/nohook.err")
mv "$enr.hook/off" "$enr/etc/enroot/hooks.d/99-trainenv.sh"
is "$(field 8 <<<"$in")" 60 "without trainenv's enroot hook the program sees the image's heartbeat (60): what the hook prevents"
is "$(grep -cE "^trainenv: warning: rank [024] \(node n[123]\): the container changed what trainenv decided \(enforced values included\): TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC=60 \(trainenv: 900, enforced\); MASTER_ADDR=n1 \(trainenv: [0-9.]+\); MASTER_PORT=[0-9]+ \(trainenv: [0-9]+\); trainenv's enroot hook did not run" "$TE_WORK/nohook.err")" 3 \
	"  and each node warns once, naming the replaced values and the missing hook" || diag "$(cat "$TE_WORK/nohook.err")"

# Signal dispositions set in task_init survive pyxis's setns and the exec.
sig='echo "sig $RANK $(grep SigIgn /proc/self/status | cut -f2)"'
base_sig=$(te_srun -t 120 --mpi=pmix -N3 --ntasks-per-node=2 --train-sighup=ignore \
	--train-ignore-signals=PIPE sh -c "$sig" 2>&1 | grep '^sig ' | sort)
in_sig=$(te_srun -t 180 --mpi=pmix -N3 --ntasks-per-node=2 --train-sighup=ignore \
	--train-ignore-signals=PIPE --container-image="$image" sh -c "$sig" 2>&1 | grep '^sig ' | sort)
is "$in_sig" "$base_sig" "the ignored signals in the container are those of the same step without one"
mask=$(awk 'NR == 1 { print $3 }' <<<"$in_sig")
sig_ignored "$mask" 1 && sig_ignored "$mask" 13 && [ "$(grep -c . <<<"$in_sig")" = 6 ]
ok $? "  --train-sighup=ignore and --train-ignore-signals=PIPE: SIGHUP and SIGPIPE ignored in every rank (SigIgn $mask)"

# An unprivileged user: enroot in a user namespace, pyxis's seccomp filter.
# (nobody's login shell is nologin, which enroot would run for the
# container's first process: ENROOT_LOGIN_SHELL=no, which pyxis passes on.)
in=$(ENROOT_LOGIN_SHELL=no timeout -k 10 180 setpriv --reuid=nobody --regid=nogroup --clear-groups \
	srun --mpi=pmix -N3 --ntasks-per-node=2 --container-image="$image" \
	sh -c "$show; echo uid \$(id -u)" 2>"$TE_WORK/nobody.err")
ok $? "user nobody: a 3x2 step in the image runs" || diag "$(cat "$TE_WORK/nobody.err")"
is "$(ranks <<<"$in") $(field 8 <<<"$in") $(grep '^uid ' <<<"$in" | sort -u)" "$(ranks <<<"$base") 900 uid 65534" \
	"  each rank sees trainenv's rank variables and the enforced heartbeat, as uid 65534"

# trainenv stacks finds the ranks in their containers.
before=$(te_last_job_id)
te_srun -t 180 --mpi=pmix -N3 --ntasks-per-node=2 --container-image="$image" \
	python3 -c 'import time; time.sleep(40)' >/dev/null 2>&1 &
spid=$!
found='' job=''
for _ in $(seq 1 60); do
	job=$(te_jobs_after "$before" | awk '{ print $1 }')
	if [ -n "$job" ] && out=$(timeout 60 "$TE_TOOL" stacks "$job.0" 2>&1) &&
		grep -qE '^trainenv: hang: ranks 0-5 on n1-n3 \(6 ranks' <<<"$out"; then
		found=1
		break
	fi
	sleep 1
done
[ -n "$found" ]
ok $? "trainenv stacks $job.0 finds the six ranks running in containers on n1-n3" || diag "$out"
[ -n "$job" ] && timeout 10 scancel "$job"
wait "$spid" 2>/dev/null

# ------------------------------------------- the barrier from inside the image
# The image holds neither trainenv nor libpmix. trainenv's enroot mount
# entries (etc/enroot-mounts*.fstab.in, with this build's paths) put
# trainenv-nccl.so and the Python module in every container; each task's
# barrier proxy runs on its node. The probe and a stand-in libnccl (t62's)
# are built here and mounted in with pyxis's --container-mounts.
probe=$TE_WORK/probe
mkdir -p "$probe/nccl"
cp "$here/nccl_standin.h" "$probe/nccl.h"
out=$(gcc -O2 -fPIC -shared -I"$probe" -o "$probe/nccl/libnccl.so.2" "$here/nccl_standin.c" 2>&1 &&
	gcc -O2 -I"$probe" -o "$probe/probe" "$here/nccl_probe.c" -L"$probe/nccl" -l:libnccl.so.2 \
		-Wl,-rpath,/probe/nccl 2>&1)
ok $? "the NCCL probe and a stand-in libnccl build" || diag "$out"
chmod -R a+rX "$probe"
coll() { # VAR=VALUE...: the probe in the image, 3x2, first-collective
	local t0
	: >"$probe/trace"
	chmod 666 "$probe/trace"
	t0=$(date +%s.%N)
	out=$(te_srun -t 180 --mpi=pmix -N3 --ntasks-per-node=2 --container-image="$image" \
		--container-mounts="$probe:/probe" --train-barrier=first-collective \
		env TRAINENV_NCCL_TRACE=/probe/trace "$@" /probe/probe 2>&1)
	rc=$?
	secs=$(awk -v s="$t0" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
	trace=$(cat "$probe/trace")
}
set_plugstack "$train barrier=20" "$pyxis"
coll PROBE_LATE_RANK=3 PROBE_LATE_SECONDS=4
ok $rc "first-collective in the image, rank 3 four seconds late: the step runs" || diag "$out"
is "$(grep -c '^rank [0-5] first ncclCommInitRank: 0 ' <<<"$out")" 6 \
	"  every rank reached (the stand-in) NCCL after the barrier" || diag "$out"
is "$(grep -c ' barrier-done ' <<<"$trace")" 6 "  every rank completed the barrier, through its node's proxy" || diag "$out"
first_release=$(awk '$2 == "barrier-done" { if (m == "" || $3 < m) m = $3 } END { printf "%.6f", m }' <<<"$trace")
# (the late rank sleeps once the others are in the barrier: nccl_probe.c)
early=$(awk '$1 != 3 && $2 == "barrier-start" { if ($3 > m) m = $3 } END { printf "%.6f", m }' <<<"$trace")
late=$(awk '$1 == 3 && $2 == "barrier-start" { print $3 }' <<<"$trace")
# (rank 3 after all the others, so the last arrival)
awk -v l="$late" -v r="$first_release" -v e="$early" 'BEGIN { exit !(r >= l && l - e >= 3) }'
ok $? "  no rank left the barrier before the late rank arrived (the others by $early, rank 3 at $late, first release $first_release)"
is "$(grep -cE 'cannot be preloaded|cannot load|libtrainenv|libpmix' <<<"$out")" 0 \
	"  the shim loaded in the image, which has no libtrainenv or libpmix" || diag "$out"

set_plugstack "$train barrier=8" "$pyxis"
coll PROBE_SKIP_RANK=2 PROBE_SKIP_SECONDS=25
# Each rank fails 8 s after it began the barrier: no sooner than 8 s after
# the first arrival, and not 25 s later, when rank 2 exits. (Measured from
# each rank's own arrival: the containers on the nodes start seconds apart
# on a busy machine.)
waited=$(awk '$2 == "barrier-start" { a[$1] = $3; if (s == "" || $3 < s) s = $3 } $2 == "barrier-failed" { f[$1] = $3 }
	END { for (r in f) { printf "%s%.1f/%.1f", sep, f[r] - s, f[r] - a[r]; sep = "," } }' <<<"$trace")
is "$(awk -v w="$waited" 'BEGIN { n = split(w, a, ","); for (i = 1; i <= n; i++) { split(a[i], t, "/"); if (t[1] < 7.5 || t[2] > 12) n = -1 } print n }')" 5 \
	"rank 2 never comes: the 5 other ranks fail at the barrier's 8 s deadline (s after the first arrival/after their own: $waited)" || diag "$out"
is "$(grep -cE '^trainenv: rank [013-5]: the barrier before the first NCCL communicator failed, NCCL not entered: barrier timed out after 8 s: .*rank 2 \(node n2\)' <<<"$out")" 5 \
	"  the 5 other ranks say so in one line each, naming rank 2 on n2" || diag "$out"
is "$(grep -c '^standin ncclCommInitRank' <<<"$out"),$(grep -c '^rank [013-5] first ncclCommInitRank: 2 ' <<<"$out")" 0,5 \
	"  and none entered NCCL: their calls failed (ncclSystemError)" || diag "$out"

# The Python module in the image, through the proxy (no first-collective).
py="import os, sys, time; sys.path.insert(0, '$TE_SRCDIR/python'); import trainenv; trainenv.barrier(); print('py', trainenv.__file__); time.sleep(4 if os.environ['RANK'] == '3' else 0); t0 = time.time(); trainenv.barrier(); print('py2', os.environ['RANK'], round(time.time() - t0, 1))"
set_plugstack "$train barrier=20" "$pyxis"
out=$(te_srun -t 180 --mpi=pmix -N3 --ntasks-per-node=2 --container-image="$image" python3 -c "$py" 2>&1)
ok $? "trainenv.barrier() in the image: every rank passes" || diag "$out"
is "$(grep -c "^py $TE_SRCDIR/python/trainenv/__init__.py$" <<<"$out")" 6 \
	"  the module came from trainenv's mount entry, on each of the 6 ranks" || diag "$out"
is "$(awk '$1 == "py2" && $2 != 3 && $3 >= 3 { n++ } END { print n + 0 }' <<<"$out")" 5 \
	"  a second trainenv.barrier() is a new barrier: the 5 others wait for rank 3, 4 s late" || diag "$out"

# Stragglers in the image (--train-straggler): the NCCL profiler plugin
# comes in with trainenv's mount entries (lib-dir), as the shim; the
# stand-in libnccl and the loop (tests/integration/strag_train.py) come
# from the staged build and checkout. n2's ranks 40 ms late a step.
standin=$TE_BUILDDIR/tests/integration/.libs/libnccl-standin-prof.so
if [ -f "$standin" ]; then
	mkdir -m 1777 "$TE_WORK/bar"
	out=$(STANDIN_LIB=$standin STANDIN_CHANNELS=1 STANDIN_BARRIER_DIR=/bar SLOW_NODE=n2 \
		te_srun -t 180 --mpi=pmix -N3 --ntasks-per-node=2 --container-image="$image" \
		--container-mounts="$TE_BUILDDIR:$TE_BUILDDIR,$TE_SRCDIR:$TE_SRCDIR,$TE_WORK/bar:/bar" \
		--train-straggler=50 --train-straggler-windows=2 --train-straggler-window=1 \
		python3 "$TE_SRCDIR/tests/integration/strag_train.py" 80 0.01 0.04 2>&1)
	ok $? "stragglers in the image: the step runs" || diag "$out"
	is "$(grep -c '^standin profiler: trainenv v5$' <<<"$out"):$(grep -cE '^trainenv: straggler: n2 \(ranks 2-3\) waited least in all_reduce' <<<"$out")" 6:1 \
		"  each rank's NCCL loaded trainenv's profiler plugin in the image, and srun names n2" || diag "$out"
else
	skip "no stand-in libnccl with a profiler in the build (make check-unit builds it)" 2
fi

# The hang-up shield with a step in the image: srun's side, which the
# container does not change (tasks write through the probe's mount). A
# rank's done file says its sleep ran to its end: "&&", since a shell
# whose sleep was killed a moment before itself could still start touch,
# a process that Slurm's kill (proctrack/linuxproc: the processes it saw)
# misses. For the killed step, the count waits for the sleep's end, so
# that a program that outlived its step is counted.
hup_in_image() { # NAME SRUN_ARGS...
	local name=$1
	shift
	hup_run "$name" "$probe" 2 -t 3 --mpi=pmix -N2 --ntasks-per-node=1 --container-image="$image" \
		--container-mounts="$probe:/probe" "$@" sh -c \
		"touch /probe/$name.started.\$SLURM_PROCID; sleep 15 && touch /probe/$name.done.\$SLURM_PROCID"
}
hup_in_image hup
is "$rc,$done_files" "0,2" "nohup srun --container-image & + kill -HUP: srun exits 0 and both ranks in the image finish (the shield)" ||
	diag "$(cat "$TE_WORK/hup.out")"
hup_in_image hupdef --train-sighup=default
done_files=$(hup_outlived hupdef "$probe" 15)
is "$rc,$done_files" "137,0" "  with --train-sighup=default: srun kills the step and exits 137, as Slurm does; no rank's sleep ran to its end" ||
	diag "$(cat "$TE_WORK/hupdef.out")"

# ---------------------------------------------------------------- pre-flight
if fake_gpus; then
	set_plugstack "$train bind-topology=$TE_WORK/gpus.xml" "$pyxis"
	rep='echo "pf $RANK ${TRAINENV_PREFLIGHT:-none}"; c=$(echo "$TRAINENV_BIND" | sed -n "s/.*cpus=\([^ ]*\).*/\1/p"); echo "bind $RANK ${c:-none} $(grep Cpus_allowed_list /proc/self/status | cut -f2)"'
	out=$(LD_LIBRARY_PATH=$TE_WORK/fake CUDA_VISIBLE_DEVICES=0,1 te_srun -t 180 --mpi=pmix -N3 \
		--ntasks-per-node=2 --train-preflight=verbose --train-bind=cores --container-image="$image" \
		sh -c "$rep" 2>&1)
	is "$(grep -cE '^pf [0-5] gpu=0000:8[12]:00.0 free=[0-9]+ total=85899345920 runtime=12040 driver=12080$' <<<"$out")" 6 \
		"pre-flight with fake GPUs runs on the node before the container, and TRAINENV_PREFLIGHT reaches every rank in it" ||
		diag "$out"
	is "$(grep -cE '^trainenv: preflight: rank [0-5] \(node n[123]\) GPU 0000:8[12]:00.0: ok' <<<"$out")" 6 \
		"  one verbose line per rank"
	is "$(grep -cE '^bind [0-5] ([0-9,-]+) \1$' <<<"$out")" 6 \
		"--train-bind=cores: in the container every rank runs on the CPUs of its TRAINENV_BIND" || diag "$out"
	# A helper directory without trainenv-preflight: the check cannot be
	# started, a configuration error, never the node's fault (exit 75).
	mkdir -p "$TE_WORK/nopf"
	ln -sf "$TE_BUILDDIR/trainenv-rdzv" "$TE_WORK/nopf/trainenv-rdzv"
	ln -sf "$TE_BUILDDIR/trainenv-container" "$TE_WORK/nopf/trainenv-container"
	set_plugstack "required $TE_PLUGIN helper-dir=$TE_WORK/nopf bind-topology=$TE_WORK/gpus.xml" "$pyxis"
	out=$(LD_LIBRARY_PATH=$TE_WORK/fake CUDA_VISIBLE_DEVICES=0,1 te_srun -t 180 --mpi=pmix -N2 \
		--ntasks-per-node=2 --train-preflight=on --container-image="$image" true 2>&1)
	rc=$?
	[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]
	ok $? "a pre-flight that cannot be started fails the step (rc=$rc)"
	like "$out" "trainenv: error: preflight: rank [0-3] \(node n[12]\) GPU [0-9a-f:.]+: cannot run the check: .*/nopf/trainenv-preflight: No such file or directory \(the check could not be started: trainenv's installation or helper-dir, not the node\)" \
		"  saying the check could not be started, not the node's fault"
	is "$(grep -cE 'exit(ed with)? code 75' <<<"$out")" 0 "  and no task exits with 75 (TE_EXIT_NODE_FAULT, which --train-requeue takes for a bad node)" ||
		diag "$out"
	# --train-requeue with steps in the image: n1 fails its pre-flight
	# (test hook) on the node, before pyxis enters the container; the
	# job is requeued without n1 and its restart runs in the image.
	set_plugstack "$train bind-topology=$TE_WORK/gpus.xml test-hooks=on" "$pyxis"
	cat >"$TE_WORK/rq.sh" <<-EOF
		#!/bin/bash
		echo "run on \$SLURM_JOB_NODELIST"
		srun --mpi=pmix --ntasks-per-node=1 --train-preflight=on --container-image=$image \\
			sh -c 'echo "ran \$RANK \$SLURMD_NODENAME restart=\${TRAINENV_RESTART:-none} image=\${PYTORCH_VERSION:-none}"'
	EOF
	requeue_without_n1 "$TE_WORK/rq.sh" "$TE_WORK/fake" "steps in the image"
	is "$(grep '^ran ' <<<"$out" | sort | tr '\n' ' ')" "ran 0 n2 restart=1 image=2.3.0 ran 1 n3 restart=1 image=2.3.0 " \
		"  the restart's ranks run in the image on n2 and n3, TRAINENV_RESTART=1" || diag "$out"
	set_plugstack "$train" "$pyxis"
else
	skip "no stand-in CUDA runtime in the build (make check-unit builds tests/unit/libfakecudart.so) or no hwloc export" 9
fi

# ================================================================ pyxis first
set_plugstack "$pyxis" "$train"
out=$(te_srun -t 180 --mpi=pmix -N3 --ntasks-per-node=2 --container-image="$image" sh -c "$show" 2>&1)
rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]
ok $? "pyxis listed first: the container step fails (rc=$rc)"
is "$(grep -c "^trainenv: error: this task is already in a container (another mount namespace and root than slurmstepd gave it): a plugin listed before trainenv in plugstack.conf, such as pyxis, entered it, and trainenv's helpers and settings must come first; list trainenv's line before that plugin's (for plugstack.conf.d: 00-trainenv.conf)$" <<<"$out")" 6 \
	"  every task says in one line to list trainenv first" || diag "$out"
is "$(grep -c '^env ' <<<"$out")" 0 "  no task ran its program"
is "$(grep -cE 'exit(ed with)? code 75' <<<"$out")" 0 "  no task exits with 75 (a configuration error is no node fault)"
is "$(grep -cE 'rendezvous helper|No such file' <<<"$out")" 0 "  no helper was tried inside the container"
out=$(te_srun -t 120 --mpi=pmix -N3 --ntasks-per-node=2 sh -c "$show" 2>&1)
is "$(ranks <<<"$out")" "$(ranks <<<"$base")" "pyxis first, a step without a container runs as before"

# ================================================================ after
set_plugstack "$train" "$pyxis"
out=$(te_srun -t 180 --mpi=pmix -N1 -n2 --container-image="$image" sh -c "$show" 2>&1)
is "$(field 8 <<<"$out")" 900 "trainenv listed first again: a step in the image runs with the enforced value"
wait_nodes_idle 30
ok $? "every node is idle"
left=$(for n in n1 n2 n3; do
	# shellcheck disable=SC2016 # expanded in the node
	node_pgrep "$n" -af "trainenv-container|enroot|sleep\(40\)" 2>/dev/null |
		grep -v pgrep | sed "s/^/$n: /"
done)
is "$left" "" "no trainenv-container, enroot or program is left on a node"
left=$(for n in n1 n2 n3; do cluster_exec "$n" sh -c 'ls -d /tmp/enroot-data-*/pyxis_* 2>/dev/null'; done)
is "$left" "" "no container root file system is left in the nodes' enroot data directories"
ok 0 "the run's enroot is $enr (removed at exit)"

done_testing
