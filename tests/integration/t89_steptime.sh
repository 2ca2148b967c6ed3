#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 36 item 2, the step time watch, on the real cluster: a Python
# program on 2 nodes calls trainenv.heartbeat() once per step, with
# windows of 1 s, 2 slow windows in a row and a threshold of +50%:
#  (a) steps of 0.05 s for 5 s, then of 0.2 s for 5 s: srun says once that
#      rank 0's steps took about 0.2 s, about 4x its median of 0.05 s; the
#      step's record keeps the line ("step_time");
#  (b) steady steps of 0.05 s for 7 s: nothing said;
#  (c) the same slowdown with --train-step-watch=off: nothing said.
# Single-quoted $VARS are for the jobs' shells:
# shellcheck disable=SC2016
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"

plan 7

te_build_init
cluster_up --nodes 2 || bail_out "no cluster"
mkdir -m 1777 rec
set_plugstack "required $plugin record-dir=$TE_WORK/rec"
export PYTHONPATH=$TE_SRCDIR/python TRAINENV_LIBRARY=$TE_BUILDDIR/.libs/libtrainenv.so.0

cat >steps.py <<'EOF'
import sys, time
import trainenv
fast, slow, t_fast, t_slow = map(float, sys.argv[1:5])
for step, seconds in ((fast, t_fast), (slow, t_slow)):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        trainenv.heartbeat()
        time.sleep(step)
trainenv.heartbeat()
EOF
watch=(--train-step-watch-windows=2 --train-step-watch-window=1)

# ================================================================ (a)
te_srun -t 60 -N2 --ntasks-per-node=1 --train-step-watch=50 "${watch[@]}" \
	/usr/bin/python3 steps.py 0.05 0.2 5 5 >a.out 2>a.err
rc=$?
is "$rc" 0 "(a) a step that slows down from 0.05 s to 0.2 s a step runs to its end"
like "$(cat a.err)" "(^|\n)trainenv: step time: rank 0's steps took 0\\.[12][0-9]{2} s over the last 2 windows, [2-4]\\.[0-9]{2}x its median of 0\\.05[0-9] s \\(site threshold \\+50%\\)" \
	"srun says rank 0's slow steps against its own median" || diag "$(cat a.err)"
is "$(grep -c 'step time:' a.err)" 1 "  once, while the slowdown lasts"
id=$(te_last_job_id)
like "$(cat "rec/0/$id/trainenv.0.json" 2>&1)" '"step_time":"step time: rank 0.s steps took ' \
	"  the step's record keeps the line"

# ================================================================ (b)
te_srun -t 60 -N2 --ntasks-per-node=1 --train-step-watch=50 "${watch[@]}" \
	/usr/bin/python3 steps.py 0.05 0.05 4 3 >b.out 2>b.err
rc=$?
is "$rc:$(grep -c 'step time' b.err)" "0:0" "(b) steady steps: nothing said" || diag "$(cat b.err)"

# ================================================================ (c)
te_srun -t 60 -N2 --ntasks-per-node=1 --train-step-watch=off "${watch[@]}" \
	/usr/bin/python3 steps.py 0.05 0.2 5 5 >c.out 2>c.err
rc=$?
is "$rc:$(grep -c 'step time' c.err)" "0:0" "(c) --train-step-watch=off: the slowdown says nothing" || diag "$(cat c.err)"
recf=rec/0/$(te_last_job_id)/trainenv.0.json
[ -s "$recf" ] && ! grep -q step_time "$recf"
ok $? "  and its record has no step_time" || diag "$(cat "$recf" 2>&1)"
