#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The hang report shows ranks only (issue 25, item 0), on the real cluster,
# for the ways users run jobs: sbatch + srun, salloc + srun, srun alone,
# sbatch + one torchrun per node, and --train-stall under sbatch. 2 nodes x
# 2 ranks; rank 3 (n2) hangs in save_final() while the others exit 0, or
# rank 1 stops its heartbeat. In each: the report names only that rank (or,
# for a stall, the step's 4 ranks), never trainenv's own processes (the
# collector srun starts inherits the batch step's SLURM_* variables, gdb,
# the overlapping step's tasks); no error line comes from trainenv's own
# commands (scancel answered "Invalid job id specified" for a node whose
# ranks had all ended); the failure report says that trainenv ended the
# step and why, and calls no rank its SIGTERM ended "the first failure"
# (a stall is the first failure).
# Single-quoted $VARS are for the tasks' shells:
# shellcheck disable=SC2016
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"

plan 26

te_build_init
cluster_up --nodes 2 || bail_out "no cluster"
command -v gdb >/dev/null || bail_out "gdb is needed (tests/deps.sh installs it)"
use_trainenv "helper-dir=$TE_BUILDDIR"
hang=$TE_SRCDIR/tests/integration/py/hang.py
ready=$TE_CLUSTER_DIR/shared/ready84
mkdir -p "$ready" && chmod 1777 "$ready"
out_dir=$TE_CLUSTER_DIR/shared/out84
mkdir -p "$out_dir" && chmod 1777 "$out_dir"

# What trainenv's own commands must never print, and its own processes'
# frames, which must never be in a report.
own_errors='^(scancel|scontrol|srun): error: .*(Invalid job id|Kill job error)|^trainenv: .*(failed|still runs: scancel)'
own_frames='te_spawn_capture|core/util/runcap\.c|pmix/stacks\.c|trainenv-stacks|in collect '

# hang_checks LABEL FILE: the exit-grace report of one run names rank 3
# alone, no error of trainenv's, and the failure report's words.
hang_checks() {
	local label=$1 f=$2 hangs
	hangs=$(grep -E '^trainenv: hang: ' "$f")
	[ "$(wc -l <<<"$hangs")" = 1 ] && grep -qE '^trainenv: hang: rank 3 on n2 \(1 rank' <<<"$hangs" &&
		grep -qE 'File ".*hang.py", line [0-9]+, in save_final' "$f" &&
		! grep -qE "$own_frames" "$f"
	ok $? "$label: the report names rank 3 on n2 alone, in save_final; none of trainenv's processes" ||
		diag "$hangs"
	! grep -qE "$own_errors" "$f"
	ok $? "$label: no error line from trainenv's own commands" || diag "$(grep -E "$own_errors" "$f")"
	grep -qE '^trainenv: rank 3 \(node n2, local rank 1\) was killed by signal 15 \(SIGTERM\) at [^:]+:[^:]+:[^:]+: trainenv ended the step: ranks still ran 3 s after rank [0-2] on n[12] exited with code 0 \(--train-exit-grace=3\)$' "$f" &&
		! grep -q 'the first failure of this step' "$f"
	ok $? "$label: rank 3's SIGTERM: 'trainenv ended the step' and why, no 'first failure'" ||
		diag "$(grep -E '^trainenv: rank ' "$f")"
}

# ================================================================ (a) sbatch + srun
rm -f "$ready"/rank.*
cat >"$out_dir/a.sh" <<EOF
#!/bin/bash
HANG_RANK=3 srun --train-exit-grace=3 /usr/bin/python3 $hang exit $ready
EOF
te_seconds te_sbatch_wait -t 150 -N2 --ntasks-per-node=2 -o "$out_dir/a.out" "$out_dir/a.sh" >/dev/null 2>&1
rc=$?
diag "$(cat "$out_dir/a.out")"
[ "$rc" -ne 0 ] && grep -qE '^trainenv: exit-grace: ending step' "$out_dir/a.out"
ok $? "sbatch + srun: the grace runs out and trainenv ends the step (sbatch rc=$rc, ${TE_SECONDS} s)"
hang_checks "sbatch + srun" "$out_dir/a.out"

# ================================================================ (b) salloc + srun
rm -f "$ready"/rank.*
HANG_RANK=3 te_seconds timeout -k 10 150 salloc -N2 --ntasks-per-node=2 \
	srun --train-exit-grace=3 /usr/bin/python3 "$hang" exit "$ready" >"$TE_WORK/b.out" 2>&1
rc=$?
diag "$(cat "$TE_WORK/b.out")"
[ "$rc" -ne 0 ] && grep -qE '^trainenv: exit-grace: ending step' "$TE_WORK/b.out"
ok $? "salloc + srun: trainenv ends the step (rc=$rc, ${TE_SECONDS} s)"
hang_checks "salloc + srun" "$TE_WORK/b.out"

# ================================================================ (c) srun alone
rm -f "$ready"/rank.*
HANG_RANK=3 te_seconds te_srun -t 150 -N2 --ntasks-per-node=2 --train-exit-grace=3 \
	/usr/bin/python3 "$hang" exit "$ready" >"$TE_WORK/c.out" 2>&1
rc=$?
diag "$(cat "$TE_WORK/c.out")"
[ "$rc" = 143 ]
ok $? "srun alone: the step ends, rank 3 by SIGTERM (rc=$rc, ${TE_SECONDS} s)"
hang_checks "srun alone" "$TE_WORK/c.out"
job=$(te_last_job_id)
sleep 1
is "$(left_on_nodes "hang.py exit $ready" n1 n2)" "" "srun alone: nothing of the step is left on the nodes"

# ================================================================ (d) sbatch + torchrun per node
# (t80 says why torchrun cannot start with Debian trixie's and sid's torch)
if ! te_no_torchrun_store; then
	rm -f "$ready"/rank.*
	cat >"$out_dir/d.sh" <<EOF
#!/bin/bash
export PET_REDIRECTS=1 PET_TEE=1 HANG_RANK=3
srun -n2 --ntasks-per-node=1 --train-exit-grace=5 torchrun --nproc_per_node=2 $hang exit $ready
EOF
	te_seconds te_sbatch_wait -t 180 -N2 --ntasks-per-node=2 -o "$out_dir/d.out" "$out_dir/d.sh" >/dev/null 2>&1
	rc=$?
	grep -v '^\[default' "$out_dir/d.out" >"$TE_WORK/d.out"
	diag "$(cat "$TE_WORK/d.out")"
	hangs=$(grep -E '^trainenv: hang: ' "$TE_WORK/d.out")
	report=$(sed -n '/^trainenv: exit-grace: 5 s after/,/^trainenv: exit-grace: ending step/p' "$TE_WORK/d.out")
	[ "$(wc -l <<<"$hangs")" = 1 ] && grep -qE '^trainenv: hang: rank 3 on n2 \(1 rank' <<<"$hangs" &&
		[ -n "$report" ] && ! grep -qE "$own_frames|torch/distributed/elastic" <<<"$report"
	ok $? "sbatch + torchrun: the report names worker rank 3 on n2 alone, not torchrun's agents nor trainenv's processes (rc=$rc, ${TE_SECONDS} s)" ||
		diag "$hangs"
	! grep -qE "$own_errors" "$TE_WORK/d.out"
	ok $? "sbatch + torchrun: no error line from trainenv's own commands"
	! grep -q 'the first failure of this step' "$TE_WORK/d.out"
	ok $? "sbatch + torchrun: no task trainenv ended is called the first failure"
	sleep 1
	is "$(left_on_nodes "hang.py exit $ready" n1 n2)" "" "sbatch + torchrun: nothing of the step is left"
else
	skip "$TE_WHY" 4
fi

# ================================================================ (e) sbatch + --train-stall
rm -f "$ready"/rank.*
cat >"$out_dir/e.sh" <<EOF
#!/bin/bash
export PYTHONPATH=$TE_SRCDIR/python TRAINENV_LIBRARY=$TE_BUILDDIR/.libs/libtrainenv.so.0 STALL_RANK=1
srun --train-stall=3 /usr/bin/python3 $hang beat $ready
EOF
te_seconds te_sbatch_wait -t 150 -N2 --ntasks-per-node=2 -o "$out_dir/e.out" "$out_dir/e.sh" >/dev/null 2>&1
rc=$?
diag "$(cat "$out_dir/e.out")"
grep -qE '^trainenv: stall: step [0-9]+\.0: rank 1 on n1 sent no heartbeat for [3-9] s \(--train-stall=3\); 4 ranks run:' "$out_dir/e.out"
ok $? "sbatch + stall: srun names rank 1 on n1 and the step's 4 ranks (rc=$rc, ${TE_SECONDS} s)"
ranks=$(sed -nE 's/^trainenv: hang: ranks? ([0-9,-]+) on .*/\1/p' "$out_dir/e.out" | tr '\n' ' ')
hangs=$(grep -cE '^trainenv: hang: ' "$out_dir/e.out")
grep -qE '^trainenv: hang: rank 1 on n1 \(1 rank' "$out_dir/e.out" &&
	[ "$(sed -nE 's/^trainenv: hang: .*\(([0-9]+) ranks?[,)].*/\1/p' "$out_dir/e.out" | awk "{s+=\$1} END {print s}")" = 4 ] &&
	grep -qE 'line [0-9]+, in stuck' "$out_dir/e.out" && ! grep -qE "$own_frames" "$out_dir/e.out"
ok $? "sbatch + stall: the report's groups hold 4 ranks ($ranks in $hangs groups), rank 1 alone in stuck; none of trainenv's processes"
grep -qE '^trainenv: rank 1 \(node n1, local rank 1\) sent no heartbeat for [3-9] s at .*: the first failure of this step$' "$out_dir/e.out"
ok $? "sbatch + stall: rank 1's stall is the first failure" || diag "$(grep -E '^trainenv: rank ' "$out_dir/e.out")"
n=$(grep -cE '^trainenv: rank [023] \(node n[12], local rank [01]\) was killed by signal 15 \(SIGTERM\) at .*: trainenv ended the step: rank 1 on n1 sent no heartbeat for [3-9] s \(--train-stall=3\)$' "$out_dir/e.out")
[ "$n" -ge 1 ] && [ "$(grep -c 'the first failure of this step' "$out_dir/e.out")" = 1 ]
ok $? "sbatch + stall: the ranks trainenv's SIGTERM ended ($n) say so and why; one first failure"
! grep -qE "$own_errors" "$out_dir/e.out"
ok $? "sbatch + stall: no error line from trainenv's own commands"

# ================================================================ (f) the step's record
dumps=$TE_CLUSTER_DIR/shared/dumps84
mkdir -p "$dumps" && chmod 1777 "$dumps"
rm -f "$ready"/rank.*
HANG_RANK=3 te_srun -t 150 -N2 --ntasks-per-node=2 --train-exit-grace=3 --train-nccl-dump-dir="$dumps" \
	/usr/bin/python3 "$hang" exit "$ready" >/dev/null 2>&1
job=$(te_last_job_id)
python3 - "$dumps/0/$job/trainenv.0.json" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))["first_failure"]
assert f["rank"] == 3 and f["how"] == "signal" and f["value"] == 15, f
assert f["ended_by_trainenv"] is True, f
PY
ok $? "the step's record: first_failure rank 3, SIGTERM, ended_by_trainenv true" ||
	diag "$(cat "$dumps/0/$job/trainenv.0.json" 2>&1)"
rm -f "$ready"/rank.*
te_srun -t 60 -N2 --ntasks-per-node=2 --train-nccl-dump-dir="$dumps" bash -c 'exit $((SLURM_PROCID == 2 ? 4 : 0))' >/dev/null 2>&1
job=$(te_last_job_id)
python3 - "$dumps/0/$job/trainenv.0.json" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))["first_failure"]
assert f["rank"] == 2 and f["how"] == "exit" and f["value"] == 4, f
assert f["ended_by_trainenv"] is False, f
PY
ok $? "a failure of its own: ended_by_trainenv false" ||
	diag "$(cat "$dumps/0/$job/trainenv.0.json" 2>&1)"

# ================================================================ (g) a slow slurmctld (item 8)
# slurmctld stops (SIGSTOP) a second after rank 0 exits and stays stopped
# for 8 s: the grace runs out meanwhile (the report waits for slurmctld;
# srun's listener must not: it asked slurmctld for the step's layout there
# before) and rank 1 fails at 5 s. Its failure line comes within 2 s of
# its exit, not after slurmctld is back.
ctld=$(awk '$1 == "slurmctld" { p = $2 } END { print p }' "$TE_CLUSTER_DIR/pids")
rm -f "$ready"/rank.*
python3 - "$TE_WORK/g.lines" "$ready" "$TE_SRUN_TIMEOUT" <<'PY' &
import subprocess, sys, time
out, ready, secs = sys.argv[1], sys.argv[2], sys.argv[3]
script = ('if [ "$SLURM_PROCID" = 0 ]; then touch %s/rank.0; exit 0; fi; sleep 5; exit 7' % ready)
p = subprocess.Popen(["timeout", "-k", "10", secs, "srun", "-N2", "--ntasks-per-node=1",
                      "--train-exit-grace=2", "--train-exit-action=report", "bash", "-c", script],
                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
with open(out, "w") as f:
    for line in p.stderr:
        f.write("%.3f %s" % (time.time(), line))
        f.flush()
    f.write("%.3f srun-rc %d\n" % (time.time(), p.wait()))
PY
gpid=$!
te_on_exit "kill -CONT $ctld 2>/dev/null"
for ((i = 0; i < 300; i++)); do [ -e "$ready/rank.0" ] && break; sleep 0.1; done
sleep 1
kill -STOP "$ctld"
sleep 8
kill -CONT "$ctld"
wait "$gpid"
diag "$(cat "$TE_WORK/g.lines")"
python3 - "$TE_WORK/g.lines" <<'PY'
import datetime, re, sys
for line in open(sys.argv[1]):
    m = re.match(r"(\S+) trainenv: rank 1 \(node n2, local rank 0\) exited with code 7 at (\S+ \S+):", line)
    if m:
        exited = datetime.datetime.strptime(m.group(2), "%Y-%m-%d %H:%M:%S.%f").timestamp()
        late = float(m.group(1)) - exited
        print("%.1f s after the exit" % late)
        sys.exit(0 if late < 2 else 1)
sys.exit("no failure line for rank 1")
PY
ok $? "slurmctld stopped for 8 s: rank 1's failure line comes within 2 s of its exit"
grep -qE '^[0-9.]+ srun-rc 7$' "$TE_WORK/g.lines"
ok $? "and srun ends by itself once slurmctld is back, with rank 1's exit code 7"
