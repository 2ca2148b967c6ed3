#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 36 item 3, NCCL's view in the hang report, on the real cluster: 2
# nodes x 2 ranks of a Python program that plays PyTorch's flight recorder
# (tests/integration/py/hangnccl.py: its pipe, and on a byte a dump as
# torch's pickler writes it; rank 3 one all_reduce behind) with
# --train-nccl-dump-dir:
#  (a) --train-exit-grace: rank 0 exits, rank 1 also answers as NCCL RAS
#      at the step's NCCL_RAS_ADDR (rank 3 missing): the report shows RAS's
#      line naming rank 3 and the flight recorder's naming rank 3 behind,
#      above the stacks; the hang record's JSON has both; each rank got
#      the step's own NCCL_RAS_ADDR and the pipe in the dump directory;
#  (b) `trainenv stacks` while rank 2's dump is a pickle that would run
#      os.system("touch MARKER"): refused in one line, the marker never
#      made; no RAS listening: one line;
#  (c) a step without NCCL nor a flight recorder (sleep): the stacks alone;
#  (d) a step inside a step gets its own RAS address, unless the program
#      around it set its own (kept).
# gdb is left out (TRAINENV_GDB names none): the stacks' lines are still
# there, and the test stays short.
# Single-quoted $VARS are for the jobs' shells:
# shellcheck disable=SC2016
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"

plan 16

te_build_init
cluster_up --nodes 2 || bail_out "no cluster"
use_trainenv "helper-dir=$TE_BUILDDIR"
prog=$TE_SRCDIR/tests/integration/py/hangnccl.py
ready=$TE_WORK/ready
dumps=$TE_WORK/dumps
mkdir -m 1777 "$ready" "$dumps"
marker=$TE_WORK/MARKER
export TE_SRCDIR TORCH_NCCL_TRACE_BUFFER_SIZE=2000 TRAINENV_GDB=/nonexistent/gdb

# ================================================================ (a)
te_seconds te_srun -t 60 -N2 --ntasks-per-node=2 --train-exit-grace=4 \
	--train-nccl-dump-dir="$dumps" \
	/usr/bin/python3 "$prog" exit "$ready" "$marker" >a.out 2>a.err
rc=$?
diag "$(cat a.err)"
[ "$rc" -ne 0 ] && awk -v s="$TE_SECONDS" 'BEGIN { exit !(s >= 4 && s < 40) }'
ok $? "(a) the hung step ends after the grace (rc=$rc, $TE_SECONDS s)"
job=$(te_last_job_id)
addr= pipe= temp=
read -r _ addr pipe temp <"$ready/rank.2"
[[ "$addr" =~ ^127\.[0-9]+\.[0-9]+\.[0-9]+:281[0-9][0-9]$ ]] &&
	[ "$pipe" = "$dumps/0/$job/0.fr_pipe_" ] && [ "$temp" = "$dumps/0/$job/nccl_trace_rank_" ]
ok $? "(a) each rank got the step's own NCCL_RAS_ADDR and the pipe in the dump directory ($addr $pipe $temp)"
ras=$(grep -nE '^trainenv: hang: NCCL RAS.*: rank 3 .*missing' a.err | head -1)
[ -n "$ras" ]
ok $? "(a) the report's RAS line names rank 3 missing" || diag "$(grep 'NCCL RAS' a.err)"
fr=$(grep -nE '^trainenv: hang: flight recorder: rank 3 is at all_reduce #1832 \(completed\) of group 0 \(default_pg\), all others at #1833' a.err | head -1)
[ -n "$fr" ]
ok $? "(a) the flight recorder's line names rank 3 one all_reduce behind"
first_stack=$(grep -nE '^trainenv: hang: ranks? [0-9]' a.err | head -1)
[ -n "$first_stack" ] && [ "${ras%%:*}" -lt "${first_stack%%:*}" ] &&
	[ "${fr%%:*}" -lt "${first_stack%%:*}" ]
ok $? "(a) both above the stacks (lines ${ras%%:*}, ${fr%%:*} < ${first_stack%%:*})"
is "$(grep -c '^trainenv: hang: NCCL RAS' a.err)" 1 "(a) RAS's answer is one line"
python3 - "$dumps/0/$job/trainenv.0.hang.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["nccl_ras"]["outcome"] == "answered", r["nccl_ras"]
assert any("rank 3" in l for l in r["nccl_ras"]["lines"]), r["nccl_ras"]
fr = r["flight_recorder"]
assert any(l.startswith("flight recorder: rank 3 is at all_reduce #1832") for l in fr["lines"]), fr
ranks = {x["rank"]: x for x in fr["ranks"]}
assert sorted(ranks) == [1, 2, 3], ranks.keys()
g0 = [g for g in ranks[3]["groups"] if g["group"] == "0"]
assert g0 and g0[0]["seq"] == 1832 and g0[0]["state"] == "completed", ranks[3]
assert r["groups"], r
PY
ok $? "(a) the hang record's JSON: nccl_ras and flight_recorder (ranks 1-3)" ||
	diag "$(head -c 2000 "$dumps/0/$job/trainenv.0.hang.json" 2>&1)"

# ================================================================ (b)
rm -f "$ready"/rank.*
te_srun -t 60 -N2 --ntasks-per-node=2 --train-nccl-dump-dir="$dumps" \
	/usr/bin/python3 "$prog" hostile "$ready" "$marker" >b.out 2>&1 &
bpid=$!
te_on_exit "kill $bpid 2>/dev/null"
wait_rank_files "$ready" 4 30
ok $? "(b) 4 ranks in place"
job=$(te_last_job_id)
te_seconds timeout 60 "$TE_TOOL" stacks "$job.0" >b.stacks 2>b.err
rc=$?
diag "$(cat b.stacks b.err)"
scancel "$job" 2>/dev/null
ok $rc "(b) trainenv stacks $job.0 ($TE_SECONDS s)"
grep -qE '^trainenv: hang: flight recorder: dump of rank 2 refused \(.*GLOBAL.*refused' b.stacks &&
	grep -qE '^trainenv: hang: flight recorder: rank 3 is at all_reduce #1832' b.stacks
ok $? "(b) rank 2's hostile dump refused in one line; the others read"
sleep 1
[ ! -e "$marker" ]
ok $? "(b) its code never ran (no $marker)"
ras=$(grep -E '^trainenv: hang: NCCL RAS' b.stacks)
[ "$(grep -c . <<<"$ras")" = 1 ] && [[ "$ras" == *"no answer at 127."*"nothing listens"* ]]
ok $? "(b) no RAS listening: one line ($ras)"
wait "$bpid" 2>/dev/null || true

# ================================================================ (c)
rm -f "$ready"/rank.*
unset TORCH_NCCL_TRACE_BUFFER_SIZE
te_srun -t 60 -N2 --ntasks-per-node=1 \
	bash -c 'touch "$1/rank.$SLURM_PROCID"; exec sleep 60' sh "$ready" >c.out 2>&1 &
cpid=$!
te_on_exit "kill $cpid 2>/dev/null"
wait_rank_files "$ready" 2 30
job=$(te_last_job_id)
sleep 0.5
timeout 60 "$TE_TOOL" stacks "$job.0" >c.stacks 2>c.err
rc=$?
diag "$(cat c.stacks c.err)"
scancel "$job" 2>/dev/null
[ "$rc" = 0 ] && grep -qE '^trainenv: hang: ranks 0-1 on n1-n2' c.stacks
ok $? "(c) trainenv stacks on a step of sleep: its ranks"
! grep -qE 'NCCL RAS|flight recorder' c.stacks
ok $? "(c) and not a word of NCCL"
wait "$cpid" 2>/dev/null || true # srun ends by the scancel: its status is no check

# ================================================================ (d)
# A step inside a step whose program set its own NCCL_RAS_ADDR keeps it
# (the outer step's trainenv set one too: TRAINENV_HANG_VARS says which
# value was trainenv's); one that did not set it gets its step's own.
cat >d.sh <<'SH'
#!/bin/sh
echo "outer $NCCL_RAS_ADDR"
srun --overlap -N1 -n1 sh -c 'echo "inner $NCCL_RAS_ADDR"'
export NCCL_RAS_ADDR=127.0.0.1:1
srun --overlap -N1 -n1 sh -c 'echo "own $NCCL_RAS_ADDR"'
SH
chmod 755 d.sh
te_srun -t 60 -N1 -n1 ./d.sh >d.out 2>&1
diag "$(cat d.out)"
outer=$(awk '$1 == "outer" { print $2 }' d.out)
inner=$(awk '$1 == "inner" { print $2 }' d.out)
[[ "$outer" =~ ^127\. ]] && [[ "$inner" =~ ^127\. ]] && [ "$inner" != "$outer" ]
ok $? "(d) a step and a step inside it each have their own RAS address ($outer, $inner)"
is "$(awk '$1 == "own" { print $2 }' d.out)" 127.0.0.1:1 "(d) a step keeps the address its enclosing program set itself"
