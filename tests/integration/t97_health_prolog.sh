#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 34 on the real cluster: the job prolog's node health checks. The
# site's health keys in plugstack.conf, a stand-in sysfs tree per node
# (health_test_root=DIR/%n: a site key, root's file, never the job's
# environment) with n2's InfiniBand port DOWN. A step on n2 fails at once
# with one line naming the node and the check, as a node fault; with the
# site's drain action n2 is drained with trainenv's reason, and the next
# job runs without it; with exclude it is not drained; a user's
# --train-health makes the checks stricter (never drains), runs as the
# user in each task (salloc + srun too) and cannot make them weaker; health_on_fail=fail fails the prolog and the reason stays
# trainenv's; the verdict file goes at the job's end (the epilog).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/sysfs_standin.sh
. "$here/../lib/sysfs_standin.sh"

plan 54

te_build_init
cluster_up --nodes 3 || bail_out "no cluster"
ok 0 "cluster is up, helper $TE_BUILDDIR/trainenv-health"

resume_all() { resume_nodes n1 n2 n3; }
te_on_exit resume_all
wait_nodes_idle 30
ok $? "every node idle at the start"

for n in n1 n3; do sysfs_ib_port "$TE_WORK/hs/$n" mlx5_0 1 "4: ACTIVE"; done
sysfs_ib_port "$TE_WORK/hs/n2" mlx5_0 1 "1: DOWN"
chmod -R a+rX "$TE_WORK/hs"
mkdir -p -m 1777 "$TE_WORK/rec"
site="health=ib health_test_root=$TE_WORK/hs/%n record-dir=$TE_WORK/rec"
reason_re="trainenv: ib mlx5_0 port 1 state DOWN \(want ACTIVE\)"
user_re="node n2: left out of this step by the user's health checks \(--train-health\): ib mlx5_0 port 1 state DOWN \(want ACTIVE\)"
line_re="node n2: left out of this job by the job prolog's health checks: (exclude|drain) ib mlx5_0 port 1 state DOWN \(want ACTIVE\)"
plug() { set_plugstack "required $plugin helper-dir=$builddir $*"; }
verdicts() { # JOBID: the verdict files left for it on n2
	cluster_exec n2 sh -c "ls /run/trainenv/health/ 2>/dev/null | grep -c '^job\.$1\.n2\$'"
}
# The test's nodes share the host's /run (tests/cluster), and job ids
# start at 1 in each cluster: no verdict of an earlier cluster's job 1
# on n2 may be left (the epilog removes them; a killed run may not).
admin_comment() { # JOBID: the job's AdminComment (root's field)
	timeout 10 scontrol show job "$1" 2>/dev/null | sed -n 's/^ *AdminComment=\(.*\)$/\1/p; s/.* AdminComment=\(.*\)$/\1/p' | head -n 1
}
last_job() { timeout 10 scontrol show jobs -o 2>/dev/null | grep -o '^JobId=[0-9]*' | cut -d= -f2 | sort -n | tail -n 1; }
clean_verdicts() { rm -f /run/trainenv/health/job.*.n[123]; }
clean_verdicts
te_on_exit clean_verdicts
# srun -N3 over every node: stdout in out, stderr in err, status in rc.
run3() { # SRUN_ARGS...
	out=$(te_srun -t 90 -N3 "$@" sh -c 'echo "job $SLURM_JOB_ID on $(hostname)"' 2>"$TE_WORK/err")
	rc=$?
	err=$(cat "$TE_WORK/err")
}

# slurmd learns which plugins have a job prolog when it starts (Slurm's
# spank_has_prolog): a site restarts slurmd after adding trainenv to
# plugstack.conf, and so does this test.
plug "$site health_ib_action=exclude"
for n in n1 n2 n3; do
	"$TE_CLUSTER_SH" slurmd --dir "$TE_CLUSTER_DIR" "$n" stop &&
		"$TE_CLUSTER_SH" slurmd --dir "$TE_CLUSTER_DIR" "$n" start >/dev/null || break
done
ok $? "slurmd restarted on n1, n2, n3 with trainenv in plugstack.conf"
wait_nodes_idle 30 >/dev/null

# ---- exclude: n2 is left out of the job, not drained
run3
[ "$rc" -ne 0 ]
ok $? "exclude: a 3-node step with n2's IB port down fails" || diag "$out" "$err"
like "$err" "$line_re" "... srun shows one line naming n2 and the check"
is "$(printf '%s\n' "$err" | grep -c "left out of this job")" 1 "... one line for the one bad node"
like "$out" "on n1" "... the other nodes' tasks started (n1)"
wait_nodes_idle 30 >/dev/null
is "$(node_is n2)" "idle|none" "... n2 is not drained (exclude: this job only)"
job=$(printf '%s\n' "$out" | sed -n 's/^job \([0-9]*\) on .*/\1/p' | head -n 1)
is "$(verdicts "$job")" 0 "... the verdict file of job ${job:-?} is gone with the job (the epilog)" ||
	diag "$(cluster_exec n2 ls -la /run/trainenv/health/)"
# srun's record of the step carries the verdict slurmstepd sent it
rec=$(cat "$TE_WORK/rec/$(id -u)/$job/trainenv.0.json" 2>/dev/null)
like "$rec" '"node_health":\[\{"node":"n2","verdict":"exclude ib mlx5_0 port 1 state DOWN \(want ACTIVE\)"\}\]' \
	"... the step's record names n2 and its verdict (node_health)" || diag "$rec"
like "$rec" '"first_failure":\{[^}]*"node":"n2","how":"exit","value":75' \
	"... and its first failure is n2's node fault (exit 75)" || diag "$rec"
like "$(admin_comment "$job")" '^trainenv: n2: left out: ib mlx5_0 port 1 state DOWN \(want ACTIVE\) *$' \
	"... the job's AdminComment names n2 and the check" || diag "$(timeout 10 scontrol show job "$job")"

# sbatch with srun inside, as users run jobs: the batch script goes on and
# sees its step fail, with the line in the job's output.
te_sbatch_wait -t 120 -N3 -o "$TE_WORK/batch.out" \
	--wrap 'srun sh -c "echo on \$(hostname)"; echo "srun exit $?"' >/dev/null 2>&1
batch=$(cat "$TE_WORK/batch.out" 2>/dev/null)
like "$batch" "$line_re" "sbatch + srun: the job's output names n2 and the check" || diag "$batch"
like "$batch" "srun exit [1-9]" "... and the batch script sees the step fail"

out=$(te_srun -t 90 -N3 -n6 true 2>&1)
is "$(printf '%s\n' "$out" | grep -c "left out of this job")" 1 \
	"two tasks on n2: still one line for the node" || diag "$out"

run3 -w n1,n3 -N2
is "$rc" 0 "clean nodes pass the checks: a step on n1,n3 runs" || diag "$out" "$err"
is "$(printf '%s\n' "$out" | grep -c ' on n[13]$')" 2 "... on both"

# ---- the user's --train-health
run3 --train-health=ib_action=warn
[ "$rc" -ne 0 ]
ok $? "a user cannot weaken the site's check: --train-health=ib_action=warn refused" || diag "$out"
like "$err" "health_ib_action=warn: below the site's exclude" "... one line naming the key and the site's value"
[ -z "$out" ]
ok $? "... nothing ran (srun stopped before the allocation)"
run3 --train-health=bogus
like "$err" "--train-health: health: invalid value 'bogus'; accepted: a comma-separated list of ib, eth, gpu(, hook)?; or none" \
	"a bad --train-health value: one line naming the option and the accepted values"

plug "$site"
run3
is "$rc" 0 "the site's action warn: the step runs on all three nodes" || diag "$out" "$err"
run3 --train-health=ib_action=exclude
[ "$rc" -ne 0 ]
ok $? "the user's stricter ib_action=exclude: the step fails" || diag "$out" "$err"
like "$err" "$user_re" "... naming n2 and the check (the user's checks, in the step)"
is "$(printf '%s\n' "$err" | grep -c "left out of this step")" 1 "... one line for the one bad node"
wait_nodes_idle 30 >/dev/null
is "$(node_is n2)" "idle|none" "... and a user's option never drains n2"

# ---- the user's checks run as the user, in each task of the step: also
# for a step inside an allocation made without them (salloc + srun), and
# with no site check at all (the prolog then runs nothing)
plug "health_test_root=$TE_WORK/hs/%n"
as_nobody=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
# shellcheck disable=SC2016 # expanded by the task's shell
alloc_out=$(cd /tmp && "${as_nobody[@]}" timeout -k 10 90 salloc -N3 \
	srun --train-health='ib;ib_action=exclude' sh -c 'echo "$(id -un) on $(hostname)"' 2>&1)
alloc_rc=$?
[ "$alloc_rc" -ne 0 ]
ok $? "salloc + srun --train-health (user nobody): the step fails" || diag "$alloc_out"
like "$alloc_out" "$user_re" "... naming n2 and the check" || diag "$alloc_out"
like "$alloc_out" "nobody on n1" "... the other nodes' tasks ran, as the user (n1)"
like "$alloc_out" "nobody on n3" "... (n3)"
# n3's port state readable by root only: the check, run as the user, fails
# there; run as root it would pass
chmod 0600 "$TE_WORK/hs/n3/class/infiniband/mlx5_0/ports/1/state"
# shellcheck disable=SC2016
alloc_out=$(cd /tmp && "${as_nobody[@]}" timeout -k 10 90 srun -N2 -w n1,n3 \
	--train-health='ib;ib_action=exclude' sh -c 'echo "on $(hostname)"' 2>&1)
like "$alloc_out" "node n3: left out of this step by the user's health checks \(--train-health\): .*state" \
	"the user's check runs as the user: n3's root-only sysfs file is not read" || diag "$alloc_out"
run3 -w n1,n3 -N2 --train-health='ib;ib_action=exclude'
is "$rc" 0 "... while root's step with the same checks passes there" || diag "$out" "$err"
chmod 0644 "$TE_WORK/hs/n3/class/infiniband/mlx5_0/ports/1/state"
run3 -w n1,n3 -N2 --train-health='ib;ib_rate=400'
is "$rc" 0 "a stricter rate with the action warn: the step runs" || diag "$out" "$err"
like "$err" "warning: node n1: --train-health: ib mlx5_0 port 1 rate 200 Gb/s" \
	"... and each task says the warning" || diag "$err"

# ---- drain: n2 drained with trainenv's reason, the next job runs without it
plug "$site health_ib_action=drain"
run3
[ "$rc" -ne 0 ]
ok $? "drain: the 3-node step fails" || diag "$out" "$err"
like "$err" "$line_re" "... naming n2 and the check"
like "$(node_is n2)" "^drain(ed|ing)\|$reason_re\$" "... n2 is drained with trainenv's reason (draining while the job ends, on 24.11)"
run3 -N2
is "$rc,$(printf '%s\n' "$out" | sed 's/.* on //' | sort | tr '\n' ' ')" "0,n1 n3 " \
	"... the next 2-node job runs on n1 and n3" || diag "$out" "$err"
timeout 10 scontrol update NodeName=n2 State=RESUME
wait_nodes_idle 30 >/dev/null

# ---- the GPU check through the prolog: the stand-in NVML (health_nvml,
# its faults from fake_nvml.conf beside it: the prolog's helper runs with
# a fixed environment) with n2's GPU 1 holding pending remapped rows
mkdir -p "$TE_WORK/nvml"
cp "$builddir/tests/unit/.libs/libfakenvml.so" "$TE_WORK/nvml/libnvidia-ml.so.1"
chmod 0755 "$TE_WORK/nvml/libnvidia-ml.so.1"
printf '* gpus 2\nn2 remap_pending 1\n' >"$TE_WORK/nvml/fake_nvml.conf"
plug "health=gpu health_gpu_count=2 health_nvml=$TE_WORK/nvml/libnvidia-ml.so.1 health_gpu_action=drain"
run3
[ "$rc" -ne 0 ]
ok $? "gpu: n2's GPU 1 with remapped rows pending: the step fails" || diag "$out" "$err"
like "$err" "node n2: left out of this job by the job prolog's health checks: drain gpu 1 remapped rows pending" \
	"... one line naming n2, the GPU and the fault"
like "$(node_is n2)" "^drain(ed|ing)\|trainenv: gpu 1 remapped rows pending\$" "... n2 drained with reason 'trainenv: gpu 1 remapped rows pending'"
like "$(node_is n1),$(node_is n3)" "^(idle|mixed|allocated|completing)\|none,(idle|mixed|allocated|completing)\|none\$" \
	"... n1 and n3 (healthy stand-in GPUs) stay in service"
resume_all

# ---- the site's hook: fails on n3 with a reason, hangs on n1
mkdir -p "$TE_WORK/hook"
printf '%s\n' '#!/bin/sh' 'case $(hostname) in' \
	'n3) echo "scratch 98% full on n3"; exit 1 ;;' \
	'n1) [ -e "${0%/*}/hang" ] && exec sleep 600 ;;' 'esac' 'exit 0' >"$TE_WORK/hook/check"
chmod 0755 "$TE_WORK/hook" "$TE_WORK/hook/check"
plug "health_hook=$TE_WORK/hook/check health_hook_action=exclude"
run3
[ "$rc" -ne 0 ]
ok $? "hook: failing on n3, the step fails" || diag "$out" "$err"
like "$err" "node n3: left out of this job by the job prolog's health checks: exclude hook: $TE_WORK/hook/check: scratch 98% full on n3" \
	"... one line naming n3 and the hook's first line"
touch "$TE_WORK/hook/hang"
plug "health_hook=$TE_WORK/hook/check health_hook_action=exclude health_timeout=3"
t0=$(date +%s)
run3 -w n1,n2 -N2
t1=$(date +%s)
like "$err" "node n1: left out of this job by the job prolog's health checks: exclude hook" \
	"a hook that hangs on n1: n1 is left out with one line" || diag "$out"
[ $((t1 - t0)) -lt 30 ]
ok $? "... within the bound (health_timeout=3): the step was over in $((t1 - t0)) s"
rm -f "$TE_WORK/hook/hang"
is "$(node_pgrep n1 -f 'sleep 600' | grep -c .)" 0 "... and nothing of the hook is left on n1"

# ---- every node failing at once (a bad driver rollout): the cap holds
# (10% of 3 nodes: 1), though each node's prolog read the list before the
# others drained: the later ones undo their drains after a second look
for n in n1 n2 n3; do sysfs_ib_port "$TE_WORK/all/$n" mlx5_0 1 "1: DOWN"; done
chmod -R a+rX "$TE_WORK/all"
plug "health=ib health_test_root=$TE_WORK/all/%n health_ib_action=drain"
run3
[ "$rc" -ne 0 ]
ok $? "every node failing at once: the job fails" || diag "$out" "$err"
sleep 2
drained=$(timeout 10 sinfo -h -N -o '%N %T %E' | grep -c ' drain[a-z]* trainenv: ')
is "$drained" 1 "... and only the cap's one node is drained by trainenv" ||
	diag "$(timeout 10 sinfo -h -N -o '%N %T %E')"
# each node read, added and wrote the comment at the same moment, then
# read it again: no node's entry is lost
comment=$(admin_comment "$(last_job)")
is "$(printf '%s\n' "$comment" | grep -o 'trainenv: n[123]: [a-z ]*: ib mlx5_0' | sort -u | wc -l)" 3 \
	"... the job's AdminComment has all three nodes' entries" || diag "$comment"
resume_all

# ---- a bad site key: one line naming it, nothing runs, nothing drains
plug "$site health_ib_action=sometimes"
run3
like "$err" "plugstack.conf: health_ib_action: invalid value 'sometimes'; accepted: drain, exclude, warn" \
	"a bad health key in plugstack.conf: srun says which and what is accepted" || diag "$out"
[ "$rc" -ne 0 ] && [ -z "$out" ]
ok $? "... and nothing runs"

# ---- health_on_fail=fail: the prolog fails, the reason stays trainenv's
plug "$site health_ib_action=drain health_on_fail=fail"
run3
[ "$rc" -ne 0 ]
ok $? "health_on_fail=fail: the job does not run" || diag "$out" "$err"
like "$(node_is n2)" "^drain(ed|ing)\|$reason_re\$" "... n2 is drained with trainenv's reason, not Slurm's 'Prolog error'"
done_testing
