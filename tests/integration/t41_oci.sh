#!/bin/bash
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
#    that it does not run there, and no task gets the preload.
# crun runs through a wrapper that hides this machine's hybrid cgroup
# mount (crun refuses "cgroups in hybrid mode"), with cgroups off.
# shellcheck disable=SC2016 # $VARS in single quotes are the tasks'
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"

n_checks=10
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
mkdir -p "$root"/{etc,proc,sys,dev,tmp,usr/bin,usr/lib,usr/lib64}
ln -s usr/bin "$root/bin"
ln -s usr/lib "$root/lib"
ln -s usr/lib64 "$root/lib64"
for p in sh env cat sleep; do
	p=$(command -v "$p")
	cp -L "$p" "$root/usr/bin/${p##*/}"
	for lib in $(ldd "$p" | grep -oE '/[^ ]+'); do
		dst=$root/usr${lib#/usr}
		mkdir -p "$(dirname "$dst")"
		cp -L "$lib" "$dst"
	done
done
echo "te-oci-image" >"$root/etc/te-oci-image"
(cd "$bundle" && crun spec) || bail_out "crun spec failed"
python3 - "$bundle/config.json" <<'EOF' || bail_out "cannot edit config.json"
import json, sys
path = sys.argv[1]
c = json.load(open(path))
c["process"]["terminal"] = False
# the node's network and processes: ranks reach each other, as in training
c["linux"]["namespaces"] = [n for n in c["linux"]["namespaces"]
                            if n["type"] not in ("network", "pid", "cgroup")]
c["mounts"] = [m for m in c["mounts"] if m.get("type") != "cgroup"]
json.dump(c, open(path, "w"), indent=1)
EOF
chmod -R a+rX "$bundle"

wrap=$TE_WORK/crun.sh
cat >"$wrap" <<'EOF'
#!/bin/sh
# crun with cgroups off, in a mount namespace without this machine's
# cgroup2 mount at /sys/fs/cgroup/unified (crun refuses hybrid mode)
exec unshare -m --propagation private sh -c \
	'umount -l /sys/fs/cgroup/unified 2>/dev/null; exec crun --cgroup-manager=disabled --root=/tmp/te-crun "$@"' crun "$@"
EOF
chmod 755 "$wrap"
conf=$(dirname "$SLURM_CONF")/oci.conf
cat >"$conf" <<EOF
RunTimeQuery="$wrap state %n.%u.%j.%s.%t"
RunTimeKill="$wrap kill -a %n.%u.%j.%s.%t"
RunTimeDelete="$wrap delete --force %n.%u.%j.%s.%t"
RunTimeRun="$wrap run --bundle %b %n.%u.%j.%s.%t"
EOF
chmod 644 "$conf"
te_on_exit "rm -f '$conf'"

show='echo "env ${SLURM_PROCID:-none} ${RANK:-none} ${WORLD_SIZE:-none} ${MASTER_ADDR:-none} ${MASTER_PORT:-none} ${TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC:-none}"; cat /etc/te-oci-image 2>/dev/null || echo on-the-node'
ranks() { grep '^env ' | sort -n -k2; }
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
	# the hang report does not find the ranks of an OCI step yet: it
	# says so, never "no rank is running"
	before=$(te_last_job_id)
	te_srun -t 120 $mpi -N3 --ntasks-per-node=1 --container="$bundle" sleep 30 >/dev/null 2>&1 &
	spid=$!
	st='' job=''
	for _ in $(seq 1 40); do
		job=$(te_jobs_after "$before" | awk '{ print $1 }')
		[ -n "$job" ] && st=$(timeout 60 "$TE_TOOL" stacks "$job.0" 2>&1) && [ -n "$st" ] && break
		sleep 0.5
	done
	is "$st" "trainenv: no rank of step $job.0 found: it runs in Slurm's OCI containers (srun --container), whose programs the hang report does not find yet" \
		"trainenv stacks on an OCI step says in one line why it finds no rank"
	[ -n "$job" ] && timeout 10 scancel "$job"
	wait "$spid" 2>/dev/null
	skip "Slurm $rel: first-collective in the container is for 23.02 and later" 2
	skip "Slurm $rel: signal dispositions in the container are for 23.02 and later" 1
	skip "Slurm $rel: the pre-flight's result in the container is for 23.02 and later" 1
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
	out=$(te_srun -t 120 $mpi -N3 --ntasks-per-node=1 --container="$bundle" \
		--train-barrier=first-collective sh -c 'echo "preload ${LD_PRELOAD:-none}"' 2>&1)
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
	fakelib=$TE_BUILDDIR/tests/unit/.libs/libfakecudart.so
	if [ -f "$fakelib" ] && lstopo-no-graphics --of xml --whole-io - >"$TE_WORK/here.xml" 2>/dev/null &&
		"$TE_SRCDIR/tests/integration/lib/add_gpus.py" "$TE_WORK/here.xml" "$TE_WORK/gpus.xml" 2; then
		mkdir -p "$TE_WORK/fake" && ln -sf "$fakelib" "$TE_WORK/fake/libcudart.so"
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
fi
out=$(te_srun -t 60 $mpi -N1 sh -c 'exit 0' 2>&1)
is "$(grep -c 'srun --container' <<<"$out")" 0 "a step without a container says nothing of containers"
done_testing
