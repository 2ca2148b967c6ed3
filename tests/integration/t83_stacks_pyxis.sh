#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Hang stacks of ranks in pyxis/enroot containers (issue 24, item 5), on a cluster of its own with pyxis 0.24.0 and enroot 4.1.2 (tests/containers/build.sh, as t40 runs them): the image is a Debian 11 root (tests/releases/old_root.sh --images: Python 3.9, glibc 2.31; the node is Debian 12) with python3.9-dbg, or without it. Each rank runs in its own user and mount namespaces; the node's gdb reads it through /proc/PID/root: the rank's Python frame in the exit-grace report and in trainenv stacks, and without python3.9-dbg in the image a note that says so (not the node's python3.11-dbg).
# shellcheck disable=SC2016 # $VARS in single quotes are the tasks'
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"

n_checks=11
if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP needs root (the cluster, the runtimes)"
	exit 0
fi
plan $n_checks

real_src=${TE_REAL_SRCDIR:-$(cd "$here/../.." && pwd -P)}
out=$("$real_src/tests/containers/build.sh" 2>&1)
rc=$?
if [ "$rc" = 77 ]; then
	skip "$(printf '%s\n' "$out" | tail -n 1)" $n_checks
	done_testing
fi
[ "$rc" = 0 ] || bail_out "tests/containers/build.sh failed: $(printf '%s\n' "$out" | tail -n 5)"
out=$(timeout 1900 "$real_src/tests/releases/old_root.sh" --images 2>&1)
if [ $? -ne 0 ]; then
	skip "no Debian 11 image: $(printf '%s\n' "$out" | tail -n 1)" $n_checks
	done_testing
fi
root=$(printf '%s\n' "$out" | tail -n 1)
image=$root.sqsh
nodbg=$root-nodbg.sqsh
cache=${TE_CONTAINERS_CACHE:-/var/lib/trainenv-containers}
# shellcheck disable=SC1091
. "$cache/env.sh"
te_build_init

enr=$(mktemp -d /var/tmp/te-enroot.XXXXXX) || bail_out "no /var/tmp directory"
te_on_exit "rm -rf '$enr'"
"$real_src/tests/containers/instance.sh" "$enr" || bail_out "tests/containers/instance.sh failed"
unset TE_CLUSTER_DIR
export TE_SLURMD_ENV="PATH=$enr/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
cluster_up --nodes 2 || bail_out "no cluster"
for n in n1 n2; do cluster_exec "$n" install -d -m 0755 /tmp/pyxis-run; done
set_plugstack "required $TE_PLUGIN helper-dir=$TE_BUILDDIR" \
	"required $TE_PYXIS_SO runtime_path=/tmp/pyxis-run"

# hang.py and the ranks' marks in a directory every node sees, mounted
# into the container as /job.
job=$TE_WORK/job
mkdir -p "$job/ready"
cp "$TE_SRCDIR/tests/integration/py/hang.py" "$job/"
chmod 1777 "$job/ready"
mounts=--container-mounts=$job:/job
wait_ready() { wait_rank_files "$job/ready" "$@"; } # COUNT SECS

# ================================================================ (a) exit grace
te_seconds te_srun -t 240 -N2 --ntasks-per-node=1 --train-exit-grace=10 \
	--container-image="$image" "$mounts" \
	env HANG_RANK=1 python3 /job/hang.py exit /job/ready >"$TE_WORK/a.out" 2>"$TE_WORK/a.err"
rc=$?
diag "$(cat "$TE_WORK/a.err")"
[ "$rc" = 143 ]
ok $? "exit-grace in the image: the step ends, the hung rank by SIGTERM (rc=$rc, ${TE_SECONDS} s)"
grep -qE '^trainenv: hang: rank 1 on n2 \(1 rank' "$TE_WORK/a.err" &&
	grep -qE 'File "/job/hang.py", line [0-9]+, in save_final' "$TE_WORK/a.err"
ok $? "the report names rank 1 on n2 and its Python frame save_final, read in the container"
! grep -qE 'python3\.11|native frames only|could not read' "$TE_WORK/a.err"
ok $? "no note"

# ================================================================ (b) trainenv stacks
rm -f "$job/ready"/rank.*
te_srun -t 240 -N2 --ntasks-per-node=2 --container-image="$image" "$mounts" \
	python3 /job/hang.py stacks /job/ready >"$TE_WORK/b.out" 2>&1 &
bpid=$!
te_on_exit "kill $bpid 2>/dev/null"
wait_ready 4 150
ok $? "4 ranks in containers of the image are in place"
jobid=$(te_last_job_id)
timeout 90 "$TE_TOOL" stacks "$jobid.0" >"$TE_WORK/b.stacks" 2>&1
diag "$(cat "$TE_WORK/b.stacks")"
head -1 "$TE_WORK/b.stacks" | grep -qE '^trainenv: hang: rank 1 on n1 \(1 rank' &&
	awk '/^trainenv: hang: rank 1 /{g=1} /^trainenv: hang: ranks/{g=2} g==1 && /in odd_one/{a=1} g==2 && /in common/{b=1} END { exit !(a && b) }' "$TE_WORK/b.stacks"
ok $? "trainenv stacks: rank 1 alone in odd_one, first; the others in common"
grep -q 'in helper_thread' "$TE_WORK/b.stacks" && grep -q '"/usr/lib/python3.9/threading.py"' "$TE_WORK/b.stacks"
ok $? "every thread's Python frames, the image's Python 3.9 library among them"
! grep -q 'note:' "$TE_WORK/b.stacks"
ok $? "no note"
timeout 10 scancel "$jobid"
wait "$bpid" 2>/dev/null

# ================================================================ (c) no python3.9-dbg in the image
rm -f "$job/ready"/rank.*
te_srun -t 240 -N1 -n1 --container-image="$nodbg" "$mounts" \
	python3 /job/hang.py stacks /job/ready >/dev/null 2>&1 &
cpid=$!
te_on_exit "kill $cpid 2>/dev/null"
wait_ready 1 150
ok $? "a rank in the image without python3.9-dbg is in place"
jobid=$(te_last_job_id)
timeout 90 "$TE_TOOL" stacks "$jobid.0" >"$TE_WORK/c.stacks" 2>&1
diag "$(cat "$TE_WORK/c.stacks")"
grep -q 'note: python3.9-dbg is missing in the container (no python3.9-gdb.py in it): native frames only' "$TE_WORK/c.stacks"
ok $? "the note names the image's missing python3.9-dbg"
! grep -q 'python3.11' "$TE_WORK/c.stacks" && grep -qE '#0 select \(\) from libc\.so\.6' "$TE_WORK/c.stacks"
ok $? "not the node's python3.11-dbg; native frames named from the image's C library"
timeout 10 scancel "$jobid"
wait "$cpid" 2>/dev/null

out=$(for n in n1 n2; do cluster_exec "$n" pgrep -af "hang.py" 2>/dev/null; done)
[ -z "$out" ]
ok $? "no rank is left on a node" || diag "$out"

done_testing
