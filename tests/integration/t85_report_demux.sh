#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The hang report's records of every node arrive whole and attributed
# (issue 25, item 1), on the real cluster: 3 nodes x 2 ranks, every rank 40
# levels deep in a recursion through functions of long names of its own
# (hang.py deep: rankR_levelNN_..., records of 8+ KiB, far over the 1 KiB
# messages in which slurmstepd forwards output, which srun interleaves).
# `trainenv stacks` (text and --json) and the exit report (--train-exit-
# grace: a 7th rank exits) name all 6 ranks, each on its own node with its
# own 40 frames and no other rank's.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"

plan 9

te_build_init
cluster_up --nodes 3 || bail_out "no cluster"
command -v gdb >/dev/null || bail_out "gdb is needed (tests/deps.sh installs it)"
use_trainenv "helper-dir=$TE_BUILDDIR"
hang=$TE_SRCDIR/tests/integration/py/hang.py
ready=$TE_CLUSTER_DIR/shared/ready85
mkdir -p "$ready" && chmod 1777 "$ready"
wait_ready() { wait_rank_files "$ready" "$@"; } # COUNT SECS

# check_text FILE: every rank 0-5 in a group of its own, on the node its
# rank file names, with 40 frames of its own and none of another rank's.
check_text() {
	python3 - "$1" "$ready" <<'PY'
import os, re, sys
text = open(sys.argv[1]).read().splitlines()
where = {}
for r in range(6):
    pid, node = open(os.path.join(sys.argv[2], f"rank.{r}")).read().split()
    where[r] = node
groups, cur = {}, None
for line in text:
    m = re.match(r"trainenv: hang: (ranks?) (\S+) on (\S+) \(", line)
    if m:
        cur = None
        if m.group(1) == "rank":
            cur = int(m.group(2))
            assert cur not in groups, f"rank {cur} twice"
            groups[cur] = {"node": m.group(3), "frames": []}
        else:
            sys.exit(f"ranks grouped together: {line}")
        continue
    f = re.search(r", in (rank(\d+)_level(\d+)_\w+)", line)
    if f and cur is not None:
        groups[cur]["frames"].append((int(f.group(2)), int(f.group(3))))
bad = []
for r in range(6):
    g = groups.get(r)
    if not g:
        bad.append(f"rank {r} missing")
        continue
    if g["node"] != where[r]:
        bad.append(f"rank {r} on {g['node']}, not {where[r]}")
    own = {lv for rk, lv in g["frames"] if rk == r}
    other = [rk for rk, lv in g["frames"] if rk != r]
    if len(own) != 40 or other:
        bad.append(f"rank {r}: {len(own)} own levels, frames of {sorted(set(other))}")
if bad:
    sys.exit("; ".join(bad))
print(f"6 ranks, 40 frames each, on {sorted(set(where.values()))}")
PY
}

# ================================================================ (a) trainenv stacks
rm -f "$ready"/rank.*
te_srun -t 180 -N3 --ntasks-per-node=2 /usr/bin/python3 "$hang" deep "$ready" >"$TE_WORK/a.out" 2>&1 &
apid=$!
te_on_exit "kill $apid 2>/dev/null"
wait_ready 6 60
ok $? "6 ranks on 3 nodes, each 40 levels deep"
job=$(te_last_job_id)
te_seconds timeout 120 "$TE_TOOL" stacks "$job.0" >"$TE_WORK/a.stacks" 2>"$TE_WORK/a.err"
rc=$?
ok $rc "trainenv stacks $job.0 (${TE_SECONDS} s)" || diag "$(cat "$TE_WORK/a.err")"
out=$(check_text "$TE_WORK/a.stacks" 2>&1)
ok $? "text: every rank whole, on its node, with its own 40 frames ($out)" ||
	diag "$(head -c 3000 "$TE_WORK/a.stacks")"
timeout 120 "$TE_TOOL" stacks --json "$job.0" >"$TE_WORK/a.json" 2>&1
python3 - "$TE_WORK/a.json" <<'PY'
import json, re, sys
groups = json.load(open(sys.argv[1]))["groups"]
assert len(groups) == 6, [g["ranks"] for g in groups]
for g in groups:
    assert len(g["ranks"]) == 1, g["ranks"]
    r = g["ranks"][0]
    names = [f.get("function", "") for t in g["threads"] for f in t["frames"]]
    own = {n for n in names if n.startswith(f"rank{r}_level")}
    other = [n for n in names if re.match(r"rank\d+_level", n) and not n.startswith(f"rank{r}_")]
    assert len(own) == 40 and not other, (r, len(own), other[:3])
PY
ok $? "--json: 6 groups of one rank, each its own 40 frames" || diag "$(head -c 2000 "$TE_WORK/a.json")"
# 20 more times: srun's interleaving is a race
bad=0
for i in $(seq 1 5); do
	timeout 120 "$TE_TOOL" stacks "$job.0" >"$TE_WORK/a.again" 2>&1 &&
		check_text "$TE_WORK/a.again" >/dev/null 2>&1 || bad=$((bad + 1))
done
is "$bad" 0 "5 more reports of the same step: all whole"
scancel "$job"
wait "$apid" 2>/dev/null

# ================================================================ (b) the exit report
# rank 6 (n3) exits once the 6 others are deep: the grace runs out.
rm -f "$ready"/rank.*
EXIT_RANK=6 te_seconds te_srun -t 180 -N3 -n7 --train-exit-grace=3 \
	/usr/bin/python3 "$hang" deep "$ready" >"$TE_WORK/b.out" 2>"$TE_WORK/b.err"
rc=$?
diag "$(grep -E '^trainenv: (exit-grace|hang|rank)' "$TE_WORK/b.err")"
[ "$rc" = 143 ]
ok $? "exit-grace: the step ends by trainenv's SIGTERM (rc=$rc, ${TE_SECONDS} s)"
grep -qE '^trainenv: exit-grace: 3 s after the first task of step [0-9]+\.0 ended \(rank 6 on n3 exited with code 0\), 6 ranks still run:' "$TE_WORK/b.err"
ok $? "the report counts the 6 ranks still running"
out=$(check_text "$TE_WORK/b.err" 2>&1)
ok $? "exit report: every rank whole, on its node, with its own 40 frames ($out)"
n=$(grep -cE '^trainenv: rank [0-5] \(node n[1-3], local rank [0-9]\) was killed by signal 15 \(SIGTERM\) at .*: trainenv ended the step: ranks still ran 3 s after rank 6 on n3 exited with code 0 \(--train-exit-grace=3\)$' "$TE_WORK/b.err")
is "$n" 6 "the failure report: 6 ranks ended by trainenv, none called the first failure"
