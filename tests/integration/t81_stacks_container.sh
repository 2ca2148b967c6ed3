#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Hang stacks of ranks in containers (issue 24, item 5), on the real cluster: each task runs hang.py with the Python 3.9 of a Debian 11 root (tests/releases/old_root.sh) under unshare --mount --root, chroot, or as user nobody under unshare -r -m --root (a rootless container in its own user and mount namespaces, where gdb without a sysroot opens none of its files). The node's gdb reads each through /proc/PID/root with the root's python3.9-gdb.py: the rank's Python frame in the exit-grace report and in trainenv stacks; without python3.9-dbg in the root, the note says that, not the node's python3.11-dbg.
# Single-quoted $VARS are for the tasks' shells:
# shellcheck disable=SC2016
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP needs root (the cluster, the roots)"
	exit 0
fi
err=$(mktemp) || exit 1
root=$(timeout 1900 "$here/../releases/old_root.sh" 2>"$err")
rc=$?
why=$(tail -n 1 "$err")
rm -f "$err"
if [ "$rc" -ne 0 ] || [ ! -d "$root" ]; then
	echo "1..0 # SKIP no Debian 11 root: ${why:-old_root.sh exited $rc}"
	exit 0
fi
nodbg=$root-nodbg

plan 19

te_build_init
cluster_up --nodes 2 || bail_out "no cluster"
command -v gdb >/dev/null || bail_out "gdb is needed (tests/deps.sh installs it)"
use_trainenv "helper-dir=$TE_BUILDDIR"

# The job's files, at the same path inside both roots (their /tmp): the
# tasks see only their root.
name=$(basename "$(mktemp -u t81.XXXXXX)")
in=/tmp/$name
for r in "$root" "$nodbg"; do
	mkdir -p "$r$in/ready"
	cp "$TE_SRCDIR/tests/integration/py/hang.py" "$r$in/"
	chmod -R a+rX "$r$in"
	chmod 1777 "$r$in/ready"
	te_on_exit "rm -rf '$r$in'"
done
ready=$root$in/ready
wait_ready() { wait_rank_files "$@"; } # DIR COUNT SECS
inside() { # PID: its root is not the node's (nodes share this machine's root)
	[ -d "/proc/$1" ] && [ "$(stat -L -c %d:%i "/proc/$1/root")" != "$(stat -L -c %d:%i /)" ]
}

# ================================================================ (a) exit grace
# Rank 1 hangs in save_final() under unshare --mount --root; rank 0 exits.
te_seconds te_srun -t 120 -N2 --ntasks-per-node=1 --train-exit-grace=5 \
	env HANG_RANK=1 unshare --mount --root="$root" /usr/bin/python3 "$in/hang.py" exit "$in/ready" \
	>"$TE_WORK/a.out" 2>"$TE_WORK/a.err"
rc=$?
diag "$(cat "$TE_WORK/a.err")"
[ "$rc" = 143 ]
ok $? "exit-grace: the step ends, the hung rank by SIGTERM (rc=$rc, ${TE_SECONDS} s)"
grep -qE '^trainenv: hang: rank 1 on n2 \(1 rank' "$TE_WORK/a.err"
ok $? "the report names rank 1 on n2"
grep -qE "File \"$in/hang.py\", line [0-9]+, in save_final" "$TE_WORK/a.err"
ok $? "its Python frame save_final, read from inside its root ($in/hang.py)"
! grep -qE 'python3\.11-dbg|py-bt|native frames only' "$TE_WORK/a.err"
ok $? "no note blames a missing package"

# ================================================================ (b) trainenv stacks
rm -f "$ready"/rank.*
te_srun -t 120 -N2 --ntasks-per-node=2 chroot "$root" /usr/bin/python3 "$in/hang.py" stacks "$in/ready" \
	>"$TE_WORK/b.out" 2>&1 &
bpid=$!
te_on_exit "kill $bpid 2>/dev/null"
wait_ready "$ready" 4 60
ok $? "4 ranks chrooted into the root are in place"
inside "$(cat "$ready/rank.1" 2>/dev/null)"
ok $? "rank 1's root is not its node's"
job=$(te_last_job_id)
te_seconds timeout 60 "$TE_TOOL" stacks "$job.0" >"$TE_WORK/b.stacks" 2>"$TE_WORK/b.err"
rc=$?
diag "$(cat "$TE_WORK/b.stacks" "$TE_WORK/b.err")"
ok $rc "trainenv stacks $job.0 (${TE_SECONDS} s)"
head -1 "$TE_WORK/b.stacks" | grep -qE '^trainenv: hang: rank 1 on n1 \(1 rank' &&
	grep -qE '^trainenv: hang: ranks 0,2-3 on n1-n2 \(3 ranks' "$TE_WORK/b.stacks"
ok $? "two groups: rank 1 alone, first; ranks 0,2-3"
awk '/^trainenv: hang: rank 1 /{g=1} /^trainenv: hang: ranks/{g=2} g==1 && /in odd_one/{a=1} g==2 && /in common/{b=1} END { exit !(a && b) }' "$TE_WORK/b.stacks"
ok $? "rank 1's frame odd_one, the others' common"
grep -q 'in helper_thread' "$TE_WORK/b.stacks" && grep -q 'threading.py' "$TE_WORK/b.stacks"
ok $? "every thread's Python frames, the root's Python 3.9 library among them"
timeout 60 "$TE_TOOL" stacks --json "$job.0" >"$TE_WORK/b.json" 2>&1
python3 -c 'import json,sys; g=json.load(open(sys.argv[1]))["groups"]; assert len(g)==2 and g[0]["ranks"]==[1] and all(not x.get("note") for x in g), g' "$TE_WORK/b.json"
ok $? "--json: the same groups, no note" || diag "$(head -c 2000 "$TE_WORK/b.json")"
scancel "$job"
wait "$bpid" 2>/dev/null

# ================================================================ (c) no python3.9-dbg in the root
rm -f "$nodbg$in/ready"/rank.*
te_srun -t 120 -N1 -n1 chroot "$nodbg" /usr/bin/python3 "$in/hang.py" stacks "$in/ready" \
	>/dev/null 2>&1 &
cpid=$!
te_on_exit "kill $cpid 2>/dev/null"
wait_ready "$nodbg$in/ready" 1 60
job=$(te_last_job_id)
timeout 60 "$TE_TOOL" stacks "$job.0" >"$TE_WORK/c.stacks" 2>&1
diag "$(cat "$TE_WORK/c.stacks")"
grep -qE '^trainenv: hang: rank 0 on n[1-3] \(1 rank' "$TE_WORK/c.stacks"
ok $? "without python3.9-dbg: rank 0 is reported"
grep -q 'python3.9-dbg is missing in the container (no python3.9-gdb.py in it): native frames only' "$TE_WORK/c.stacks"
ok $? "the note names the root's missing python3.9-dbg"
! grep -q 'python3.11' "$TE_WORK/c.stacks"
ok $? "and not the node's python3.11-dbg"
grep -qE '#0 select \(\) from libc\.so\.6' "$TE_WORK/c.stacks"
ok $? "native frames, named from the root's C library (select; gdb without the sysroot names the node's)"
scancel "$job"
wait "$cpid" 2>/dev/null

# ================================================================ (d) rootless, as nobody
rm -f "$ready"/rank.*
setpriv --reuid=nobody --regid=nogroup --clear-groups timeout 120 srun -N1 -n1 \
	unshare -r -m --root="$root" /usr/bin/python3 "$in/hang.py" stacks "$in/ready" \
	>"$TE_WORK/d.out" 2>&1 &
dpid=$!
te_on_exit "kill $dpid 2>/dev/null"
if wait_ready "$ready" 1 60; then
	ok 0 "user nobody's rank runs in user and mount namespaces of its own"
else
	ok 1 "user nobody's rank runs in user and mount namespaces of its own"
	diag "$(cat "$TE_WORK/d.out")"
fi
job=$(te_last_job_id)
out=$(timeout 60 setpriv --reuid=nobody --regid=nogroup --clear-groups "$TE_TOOL" stacks "$job.0" 2>&1)
diag "$out"
grep -qE '^trainenv: hang: rank 0 on n[1-3] \(1 rank' <<<"$out" && grep -q 'in common' <<<"$out"
ok $? "trainenv stacks as nobody: the rank's Python frame common"
# An admin's node-side collector, run as root on the rank's node for
# nobody's job (as pdsh would: root's srun may not step into another
# user's job): it becomes nobody before it looks at anything of the job's
# (issue 25, item 4), so the container's gdb script runs, with nobody's
# rights; as root it was left out ("run as root for another user ...:
# native frames only").
rnode=$(sed -nE 's/^trainenv: hang: rank 0 on (n[0-9]+) .*/\1/p' <<<"$out")
out=$(cluster_exec "${rnode:-n1}" timeout 60 "$TE_BUILDDIR/trainenv-stacks" --local "$job.0" \
	--uid "$(id -u nobody)" 2>&1)
diag "$out"
grep -qE '^@[0-9]+ frame py [0-9]+ common ' <<<"$out" && ! grep -q 'run%20as%20root' <<<"$out"
ok $? "the node side run as root for nobody's job: the same Python frame, read as nobody"
pid=$(cat "$ready/rank.0" 2>/dev/null)
# The same gdb without the sysroot, as before: it opens none of the files.
old=$(setpriv --reuid=nobody --regid=nogroup --clear-groups \
	timeout 30 gdb -p "${pid:-0}" -batch -nx -q -iex 'set debuginfod enabled off' \
	-ex 'thread apply all py-bt' -ex 'thread apply all bt' 2>&1)
inside "${pid:-0}" && ! grep -q 'in common' <<<"$old" && grep -qE '^#0 .* in \?\? \(\)' <<<"$old"
ok $? "gdb without the sysroot (as it was run before) shows no Python frame, only ?? (pid ${pid:-none})" ||
	diag "$old"
scancel "$job"
wait "$dpid" 2>/dev/null

done_testing
