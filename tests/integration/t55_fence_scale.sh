#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 14 on a real cluster of TreeWidth + 2 namespaced nodes (its own,
# TreeWidth left at Slurm's built-in: 50 up to 23.02, 16 from 23.11, so 52
# or 18 nodes): srun picks Slurm's tree fence for a step of TreeWidth or
# more nodes (every task's SLURM_PMIX_FENCE and TRAINENV_FENCE, and
# --train-explain, say so) and the ring below; the launch barrier holds for
# a node 3 s late and the application barrier (`trainenv barrier`, a fence
# without data under the tree) for a node 4 s late: nobody passes before
# the late node is there (timestamps). A user's SLURM_PMIX_FENCE=tree on
# TreeWidth - 1 nodes gets ring and one warning naming the variable, the node count and
# TreeWidth, and the barrier holds. The control shows the check can fail:
# with trainenv off, that same forced tree lets the early nodes
# go before the late one arrives (Slurm's tree is no barrier below
# TreeWidth). The site key fence-tree-min-nodes=off keeps the ring. No node
# is drained, nothing is left running. About a minute on 2 CPUs.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/pmix_common.sh
. "$here/../lib/pmix_common.sh"

# The TreeWidth the cluster runs with: Slurm's built-in (not set in its
# slurm.conf), 50 up to 23.02 and 16 from 23.11.
case $(slurmd -V 2>/dev/null | awk '{ print $2 }') in
2[01].*|22.*|23.0[0-9].*) W=50 ;;
*) W=16 ;;
esac
N=$((W + 2))	# nodes: above TreeWidth

# A test of the PMIx layer: its steps run under srun --mpi=pmix.
te_require_mpi_pmix

plan 33

cluster_up --nodes "$N"
ok $? "a cluster of $N nodes is up" || bail_out "no cluster of $N nodes"
te_build_init
pmix_plugstack
tw=$(timeout 30 scontrol show config | awk '$1 == "TreeWidth" { print $3 }')
is "$tw" "$W" "the cluster's TreeWidth is Slurm's default $W (not set in its slurm.conf)"

# Each task: "HOST START ENTER PASS SLURM_PMIX_FENCE TRAINENV_FENCE RC":
# when its program started, when it entered the application barrier (the
# node named LATE sleeps SECS first) and when it passed it. The late node
# sleeps once every other node has said it enters (a file each, TAG), so
# that the programs' own start skew on 2 CPUs cannot shorten its lateness.
cat >bar.sh <<'SH'
#!/bin/sh
# bar.sh TOOL LATE SECS TAG OTHERS
start=$(date +%s.%N)
if [ "$(hostname)" = "$2" ]; then
	i=0
	while [ "$(ls | grep -c "^entered\.$4\.")" -lt "$5" ] && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	sleep "$3"
	enter=$(date +%s.%N)
else
	enter=$(date +%s.%N)
	: >"entered.$4.$(hostname)"
fi
"$1" barrier --timeout 60
rc=$?
echo "$(hostname) $start $enter $(date +%s.%N) ${SLURM_PMIX_FENCE:-unset} ${TRAINENV_FENCE:-unset} $rc"
SH
chmod 755 bar.sh

# The late node's ENTER against everyone's PASS: "late_enter min_pass".
held() { # FILE LATE
	awk -v late="$2" 'NF == 7 { if ($1 == late) e = $3; if (m == "" || $4 < m) m = $4 }
		END { printf "%.3f %.3f\n", e, m }' "$1"
}
# A <= B, both times (no line from a node is no pass)
before() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > 0 && b > 0 && a <= b) }'; }

# ---------------------------------------------------------------- tree, N nodes
t0=$(date +%s.%N)
TRAINENV_TEST_DELAY=n$((N - 1)):3 te_srun -t 120 --mpi=pmix -N"$N" --train-explain \
	--train-barrier=60 ./bar.sh "$tool" "n$N" 4 tree $((N - 1)) >tree.out 2>tree.err
rc=$? took=$(awk -v s="$t0" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
ok $rc "a $N-node step with n$((N - 1)) 3 s late at launch and n$N 4 s late at the application barrier runs ($took s)" ||
	{ diag "$(grep -v '^srun: error: n[0-9]*: task' tree.err | sort | uniq -c | sort -rn | head -20)"
	  diag "the nodes' errors:" "$(grep -h 'error' "$TE_CLUSTER_DIR"/log/slurmd.*.log 2>/dev/null |
		sed 's/^\[[^]]*\] //' | sort | uniq -c | sort -rn | head -20)"; }
is "$(awk 'NF == 7' tree.out | wc -l)" "$N" "every one of the $N tasks reports"
is "$(awk 'NF == 7 { print $5, $6 }' tree.out | sort | uniq -c | awk '{ print $1, $2, $3 }')" \
	"$N tree tree" "every task has SLURM_PMIX_FENCE=tree and TRAINENV_FENCE=tree"
like "$(cat tree.err)" "^trainenv: fence: tree \\($N nodes >= TreeWidth $W \\(srun's slurm.conf\\): Slurm's tree fence is a job-wide barrier" \
	"--train-explain: fence tree, $N nodes >= TreeWidth $W, read from srun's slurm.conf"
is "$(grep -c 'trainenv: fence:' tree.err)" 1 "one fence line"
is "$(grep -c 'trainenv: warning' tree.err)" 0 "no warning"
is "$(awk 'NF == 7 && $7 != 0' tree.out | wc -l)" 0 "every application barrier passed"
min_start=$(awk 'NF == 7 { if (m == "" || $2 < m) m = $2 } END { print m }' tree.out)
before "$(awk -v t="$t0" 'BEGIN { printf "%.3f", t + 3 }')" "$min_start"
ok $? "launch barrier: no program started before n$((N - 1)) came, 3 s late (first start $(awk -v a="$min_start" -v t="$t0" 'BEGIN { printf "%.1f", a - t }') s after srun)"
like "$(cat tree.err)" "trainenv: barrier: $N ranks on $N nodes; the last, n$((N - 1)), arrived [2-9]\\.[0-9] s after the first" \
	"rank 0 names n$((N - 1)) as the last to the launch barrier"
read -r late_enter min_pass < <(held tree.out "n$N")
before "$late_enter" "$min_pass"
ok $? "application barrier (tree, no data): nobody passed before n$N entered (n$N entered at $late_enter, the first passed at $min_pass)" ||
	diag "$(sort -k4 -g tree.out | head -3)"
awk -v e="$late_enter" 'NF == 7 && $1 != late { if ($3 + 3.5 > e) bad++ } END { exit bad > 0 }' late="n$N" tree.out
ok $? "and the others had entered more than 3.5 s before n$N (the barrier really waited)" ||
	diag "$(sort -k3 -g tree.out | tail -3)"

# The boundary: exactly TreeWidth nodes is a tree.
out=$(te_srun -t 60 --mpi=pmix -N"$W" printenv SLURM_PMIX_FENCE 2>&1)
is "$(printf '%s\n' "$out" | sort | uniq -c | awk '{ print $1, $2 }')" "$W tree" "a $W-node step (= TreeWidth) gets tree on every task"

# ---------------------------------------------------------------- below TreeWidth
B=$((W - 1))
SLURM_PMIX_FENCE=tree te_srun -t 120 --mpi=pmix -N"$B" --train-barrier=60 \
	./bar.sh "$tool" "n$B" 4 ring $((B - 1)) >ring.out 2>ring.err
ok $? "a $B-node step with the user's SLURM_PMIX_FENCE=tree runs" || diag "$(tail -5 ring.err)"
is "$(grep -c 'trainenv: warning' ring.err)" 1 "one warning"
like "$(cat ring.err)" "^trainenv: warning: SLURM_PMIX_FENCE=tree ignored: Slurm's tree fence is no job-wide barrier on $B nodes \\(fewer than TreeWidth $W: each node would let its ranks go on their own\\); this step uses ring" \
	"the warning names the variable, the $B nodes and TreeWidth $W"
is "$(awk 'NF == 7 { print $5, $6 }' ring.out | sort | uniq -c | awk '{ print $1, $2, $3 }')" \
	"$B ring ring" "every task has SLURM_PMIX_FENCE=ring and TRAINENV_FENCE=ring"
is "$(awk 'NF == 7 && $7 != 0' ring.out | wc -l)" 0 "every application barrier passed"
read -r late_enter min_pass < <(held ring.out "n$B")
before "$late_enter" "$min_pass"
ok $? "application barrier (ring): nobody passed before n$B entered ($late_enter, first pass $min_pass)" ||
	diag "$(sort -k4 -g ring.out | head -3)"

out=$(te_srun -t 60 --mpi=pmix -N3 --train-explain printenv SLURM_PMIX_FENCE 2>&1)
like "$out" "trainenv: fence: ring \\(3 nodes < TreeWidth $W" "a 3-node step: explained as ring, 3 nodes < TreeWidth"
is "$(printf '%s\n' "$out" | grep -cx ring)" 3 "and its 3 tasks get ring"

# ---------------------------------------------------------------- the control
# trainenv off: nothing checks the user's tree; Slurm's tree on W - 1 nodes
# makes every node its own root, so the early nodes go on their own.
SLURM_PMIX_FENCE=tree te_srun -t 120 --mpi=pmix -N"$B" --train=off \
	./bar.sh "$tool" "n$B" 4 off $((B - 1)) >off.out 2>off.err
ok $? "control: the same $B-node step with --train=off runs" || diag "$(tail -5 off.err)"
is "$(awk 'NF == 7 { print $5, $6 }' off.out | sort -u)" "tree unset" "control: the tasks kept the forced tree, no TRAINENV_FENCE"
read -r late_enter min_pass < <(held off.out "n$B")
before "$min_pass" "$late_enter"
ok $? "control: Slurm's tree on $B nodes let a rank pass (at $min_pass) before n$B entered ($late_enter): the checks above can fail" ||
	diag "$(sort -k4 -g off.out | head -3)"
early=$(awk -v e="$late_enter" 'NF == 7 && $4 < e' off.out | wc -l)
awk -v n="$early" -v b="$B" 'BEGIN { exit !(n >= b - 1) }'
ok $? "control: every other node went early ($early of $((B - 1)))"

# ---------------------------------------------------------------- the site
pmix_plugstack fence-tree-min-nodes=off
out=$(te_srun -t 60 --mpi=pmix -N"$N" --train-explain printenv SLURM_PMIX_FENCE 2>&1)
like "$out" "trainenv: fence: ring \\(the site's fence-tree-min-nodes=off, plugstack.conf argument 3\\)" \
	"site fence-tree-min-nodes=off: explained, with where it was set"
is "$(printf '%s\n' "$out" | grep -cx ring)" "$N" "and the $N tasks get ring"
S=$((W / 3)) M=$((W * 2 / 5))	# 16 and 20 below 50, 5 and 6 below 16
pmix_plugstack fence-tree-min-nodes=$S
out=$(te_srun -t 60 --mpi=pmix -N$M printenv SLURM_PMIX_FENCE 2>&1)
like "$out" "trainenv: warning: the site's fence-tree-min-nodes=$S \\(plugstack.conf argument 3\\) is below TreeWidth $W \\(srun's slurm.conf\\), where Slurm's tree fence is no job-wide barrier: this $M-node step uses ring" \
	"a site value below TreeWidth is raised to it, with a message"
is "$(printf '%s\n' "$out" | grep -cx ring)" $M "and the $M tasks get ring"
out=$(te_srun -t 60 --mpi=pmix -N"$N" printenv SLURM_PMIX_FENCE 2>&1)
is "$(printf '%s\n' "$out" | sort | uniq -c | awk '{ print $1, $2 }')" "$N tree" "with it, $N nodes still get tree, silently"
pmix_plugstack

# ---------------------------------------------------------------- after
wait_nodes_idle 30 >/dev/null
states=$(timeout 10 sinfo -h -N -o '%T %E' | sort | uniq -c | awk '{ $1 = $1; print }')
is "$states" "$N idle none" "every node is idle, none drained, no reason set"
left=$(TE_CLUSTER_NODES=$N leftovers 'bar\.sh|trainenv-rdzv|trainenv barrier')
is "$left" "" "nothing of the steps is left on any node"

done_testing
