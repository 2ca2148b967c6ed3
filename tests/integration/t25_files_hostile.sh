#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Files in places other users can write to (issue 11, findings 4 and 5),
# attacked by user nobody on the real cluster; the jobs are root's.
#   - --train-nccl-dump-dir=DIR (issue 25, item 3): the job's files go to
#     DIR/UID/JOBID. nobody makes DIR/JOBID first for the next job ids (its
#     own directory, or a link into one of its own): the job's files do
#     not go there. nobody makes DIR/UID first (directory or link): the
#     job's files go to one DIR/UID.<12 hex digits> of its own instead, and
#     each node's first task and srun name the squatter (issue 33). Also refused: the job user's own DIR/UID/JOBID writable by
#     others, a DIR others may write to without the sticky bit, a DIR of
#     another user with mode 1777 (and the site's record-dir there), a
#     directory above DIR of another user. A fresh DIR/UID/JOBID in a
#     sticky DIR works.
#   - --train-checkpoint-dir=DIR (shared, sticky): nobody makes the names
#     the nodes' write probes had (job, step, node, pid: for the next
#     thousands of pids): the check still passes, the names being random.
#   - topology-cache=DIR: a cache in a directory that is not root's own is
#     not read (a root-owned export there with fake GPUs stays unused), nor
#     a cache file that is a link to one.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/pmix_common.sh
. "$here/../lib/pmix_common.sh"

plan 42

cluster_up --nodes 3 || bail_out "no cluster"
ok 0 "cluster is up"
te_build_init
pmix_plugstack
NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
NB_UID=$(id -u nobody)
W="-w n[1-3]"

# Directories nobody makes for the next N job ids: DIR/ID, as nobody.
# Prints the first id.
next_ids() { # DIR N MKDIR-ARGS...
	local dir=$1 n=$2 last i
	shift 2
	last=$(te_last_job_id)
	for ((i = 1; i <= n; i++)); do "$@" "$dir/$((last + i))"; done
	echo $((last + 1))
}
# A task that dumps as torch would: into TORCH_NCCL_DEBUG_INFO_TEMP_FILE
# (rank appended) when it is set.
dump_task='f=${TORCH_NCCL_DEBUG_INFO_TEMP_FILE:-}
echo "job $SLURM_JOB_ID ${f:-unset}"
[ -z "$f" ] || echo "rank $SLURM_PROCID dump" >"$f$SLURM_PROCID" 2>/dev/null
true'

# ================================================================ dump dir
dumps=$TE_WORK/dumps
mkdir -m 1777 "$dumps"
loot=$TE_WORK/loot
mkdir -m 777 "$loot" && chown nobody:nogroup "$loot"
warn="^trainenv: warning: --train-nccl-dump-dir:"
no_dumps="; no flight recorder dumps there$"
first_job() { printf '%s\n' "$1" | awk '$1 == "job" { print $2; exit }'; }

# nobody's own directories, mode 777, as DIR/JOBID for the next 20 job ids:
# the job's directory is DIR/UID/JOBID, out of their reach
first=$(next_ids "$dumps" 20 "${NOBODY[@]}" mkdir -m 777)
out=$(te_srun -t 60 -N2 $W --train-nccl-dump-dir="$dumps" sh -c "$dump_task" 2>&1)
job=$(first_job "$out")
[ -n "$job" ] && [ "$job" -ge "$first" ] && [ "$job" -lt $((first + 20)) ] &&
	[ "$(stat -c %u "$dumps/$job")" = "$NB_UID" ]
ok $? "the attack is set: $dumps/${job:-?} was made by nobody before root's job ${job:-?} started" || diag "$out"
is "$(printf '%s\n' "$out" | grep -c "^job $job $dumps/0/$job/nccl_trace_rank_$")" 2 \
	"a DIR/JOBID another user made first does not capture the job: every task dumps into DIR/UID/JOBID" || diag "$out"
is "$(ls -A "$dumps/$job" 2>&1)|$(ls "$dumps/0/$job" 2>&1 | tr '\n' ' ')" \
	"|nccl_trace_rank_0 nccl_trace_rank_1 trainenv.0.json " \
	"... nothing went into nobody's directory; the dumps and srun's record are in the job's own"
is "$(printf '%s\n' "$out" | grep -c 'trainenv: warning')" 0 "... without a warning" || diag "$out"
rm -rf "${dumps:?}"/*

# links to nobody's own directory as DIR/JOBID, for the next 20 job ids
first=$(next_ids "$dumps" 20 "${NOBODY[@]}" ln -s "$loot")
out=$(te_srun -t 60 -N2 $W --train-nccl-dump-dir="$dumps" sh -c "$dump_task" 2>&1)
job=$(first_job "$out")
[ -n "$job" ] && [ -L "$dumps/$job" ]
ok $? "the attack is set: $dumps/${job:-?} was nobody's link to $loot before the job started" || diag "$out"
is "$(printf '%s\n' "$out" | grep -c "^job $job $dumps/0/$job/nccl_trace_rank_$")" 2 \
	"a DIR/JOBID that is another user's link does not capture the job either" || diag "$out"
is "$(ls -A "$loot" 2>&1)" "" "... and nothing was dumped through it"
rm -rf "${dumps:?}"/*

# the per-user level made first by nobody (its own directory, then a
# link): the job's level is DIR/UID.<12 hex digits> instead, one for the
# nodes' tasks and srun, and the squatter is named (issue 33, finding 2)
alt_of() { # OUT JOB: the DIR/UID.<hex> the tasks dumped into
	printf '%s\n' "$1" | sed -n "s|^job $2 \($dumps/0\.[0-9a-f]\{12\}\)/$2/nccl_trace_rank_\$|\1|p" | sort -u
}
"${NOBODY[@]}" mkdir -m 777 "$dumps/0"
out=$(te_srun -t 60 -N2 $W --train-nccl-dump-dir="$dumps" sh -c "$dump_task" 2>&1)
job=$(first_job "$out")
alt=$(alt_of "$out" "$job")
is "$(printf '%s\n' "$out" | grep -c "^job $job ${alt:-none}/$job/nccl_trace_rank_$")" 2 \
	"DIR/UID made first by another user: every task still dumps, into one DIR/UID.<12 hex digits>/JOBID (${alt:-none})" || diag "$out"
is "$(printf '%s\n' "$out" | grep -c "^trainenv: warning: --train-nccl-dump-dir: $dumps/0 belongs to uid $NB_UID, not to the job's user (uid 0): someone else made it; using ${alt:-none} instead$")" 3 \
	"... each node's first task and srun name the squatter and the directory used" || diag "$out"
is "$(stat -c '%U %a' "${alt:-none}" 2>&1) $(ls "${alt:-none}/$job" 2>&1 | tr '\n' ' ')" \
	"root 700 nccl_trace_rank_0 nccl_trace_rank_1 trainenv.0.json " "... the job user's own, with the dumps and srun's record" || diag "$out"
is "$(ls -A "$dumps/0" 2>&1)" "" "... and nothing was made or dumped in the squatter's"
rm -rf "${dumps:?}"/*
"${NOBODY[@]}" ln -s "$loot" "$dumps/0"
out=$(te_srun -t 60 -N2 $W --train-nccl-dump-dir="$dumps" sh -c "$dump_task" 2>&1)
job=$(first_job "$out")
alt=$(alt_of "$out" "$job")
is "$(printf '%s\n' "$out" | grep -c "^trainenv: warning: --train-nccl-dump-dir: $dumps/0 belongs to uid $NB_UID, not to the job's user (uid 0): someone else made it (a symbolic link); using ${alt:-none} instead$")" 3 \
	"DIR/UID another user's link: each node and srun name it and use DIR/UID.<hex> (${alt:-none})" || diag "$out"
is "$(ls -A "$loot" 2>&1)" "" "... and nothing was made or dumped through it"
rm -rf "${dumps:?}"/*

# the job user's own DIR/UID/JOBID, but writable by everyone
mkdir -m 700 "$dumps/0"
first=$(next_ids "$dumps/0" 20 mkdir -m 777)
out=$(te_srun -t 60 -N1 $W --train-nccl-dump-dir="$dumps" sh -c "$dump_task" 2>&1)
job=$(first_job "$out")
is "$(printf '%s\n' "$out" | grep -c '^job [0-9]* unset$')" 1 \
	"the job user's own DIR/UID/JOBID writable by others (mode 777) is not used" || diag "$out"
like "$out" "$warn $dumps/0/$job is writable by group or others \\(mode 0777\\)$no_dumps" \
	"... saying so, with the mode"
rm -rf "${dumps:?}"/*

# a DIR everyone may write to, without the sticky bit
open=$TE_WORK/open-dumps
mkdir -m 777 "$open"
out=$(te_srun -t 60 -N1 $W --train-nccl-dump-dir="$open" sh -c "$dump_task" 2>&1)
is "$(printf '%s\n' "$out" | grep -c '^job [0-9]* unset$')" 1 \
	"a DIR others may write to without the sticky bit is not used (they could swap what is in it)" || diag "$out"
like "$out" "$warn $open is writable by others \\(mode 0777\\) without the sticky bit: others could swap what is in it$no_dumps" \
	"... saying so"
is "$(ls -A "$open")" "" "... and nothing is made in it"

# the issue's attack: DIR is another user's, mode 1777 (sticky does not
# keep its owner from swapping DIR/JOBID and reading the dumps)
theirs=$TE_WORK/theirs
mkdir -m 1777 "$theirs" && chown nobody:nogroup "$theirs"
out=$(te_srun -t 60 -N2 $W --train-nccl-dump-dir="$theirs" sh -c "$dump_task" 2>&1)
is "$(printf '%s\n' "$out" | grep -c '^job [0-9]* unset$')" 2 \
	"a DIR of another user with mode 1777 is not used" || diag "$out"
is "$(printf '%s\n' "$out" | grep -c "$warn $theirs belongs to uid $NB_UID, neither root nor the job's user (uid 0): its owner could swap what is in it$no_dumps")" 2 \
	"... and each node's first task names DIR and whose it is" || diag "$out"
like "$out" "^trainenv: warning: no record of this step: --train-nccl-dump-dir: $theirs belongs to uid $NB_UID" \
	"... and srun writes no record there, saying why"
is "$(ls -A "$theirs")" "" "... nothing is made in it"
# ... nor a directory above DIR that is another user's
mkdir -m 1777 "$theirs/sub"
out=$(te_srun -t 60 -N1 $W --train-nccl-dump-dir="$theirs/sub" sh -c "$dump_task" 2>&1)
like "$out" "$warn $theirs \\(in the path of $theirs/sub\\) belongs to uid $NB_UID" \
	"a directory above DIR that is another user's: not used, naming that directory" || diag "$out"
is "$(ls -A "$theirs/sub")" "" "... nothing is made in DIR"
# ... nor the site's record-dir
pmix_plugstack "record-dir=$theirs"
out=$(te_srun -t 60 -N1 $W sh -c "$dump_task" 2>&1)
is "$(printf '%s\n' "$out" | grep -c "^trainenv: warning: no record of this step: record-dir: $theirs belongs to uid $NB_UID, neither root nor the job's user (uid 0)")" 1 \
	"record-dir= another user's 1777 directory: srun writes no record, one line naming the setting and why" || diag "$out"
is "$(find "$theirs" -mindepth 1 | tr '\n' ' ')" "$theirs/sub " "... nothing is made there"
pmix_plugstack "record-dir=$dumps"
out=$(te_srun -t 60 -N1 $W sh -c "$dump_task" 2>&1)
job=$(first_job "$out")
is "$(stat -c '%U %a' "$dumps/0" "$dumps/0/$job" "$dumps/0/$job/trainenv.0.json" 2>&1 | tr '\n' ' ')" \
	"root 700 root 700 root 600 " "control: record-dir= root's sticky directory: the record is DIR/UID/JOBID/trainenv.0.json, the user's own" || diag "$out"
pmix_plugstack
rm -rf "${dumps:?}"/*

# control: nothing there before the job
out=$(te_srun -t 60 -N2 $W --train-nccl-dump-dir="$dumps" sh -c "$dump_task" 2>&1)
job=$(first_job "$out")
is "$(printf '%s\n' "$out" | grep -c "^job $job $dumps/0/$job/nccl_trace_rank_$")" 2 \
	"control: a fresh DIR/UID/JOBID in a sticky DIR is used by every task" || diag "$out"
is "$(stat -c '%U %a' "$dumps/0" "$dumps/0/$job" 2>&1 | tr '\n' ' ')$(ls "$dumps/0/$job" 2>&1 | tr '\n' ' ')" \
	"root 700 root 700 nccl_trace_rank_0 nccl_trace_rank_1 trainenv.0.json " "... the job user's own (mode 700), and the dumps are there (and srun's record of the step)"
is "$(printf '%s\n' "$out" | grep -c 'trainenv: warning')" 0 "... without a warning"

# ================================================================ checkpoint probe
# Each node's helper checks DIR is writable from there with a probe file.
# nobody makes every name it can guess for the next job (step 0, nodes
# n1-n3, the next 4000 pids) in the shared directory first.
ckpt=$TE_WORK/ckpt
mkdir -m 1777 "$ckpt"
next=$(( $(te_last_job_id) + 1 ))
pid=$(cat /proc/sys/kernel/ns_last_pid)
"${NOBODY[@]}" "$PY" - "$ckpt" "$next" "$pid" <<'EOF'
import os, sys
d, job, pid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for h in ("n1", "n2", "n3"):
    for p in range(pid + 1, pid + 4001):
        os.close(os.open(f"{d}/.trainenv-probe-{job}.0-{h}-{p}", os.O_CREAT | os.O_WRONLY, 0o644))
EOF
guessed=$(find "$ckpt" -mindepth 1 | wc -l)
is "$guessed" 12000 "nobody made 12000 guessed probe names for job $next in the checkpoint directory"
if te_no_mpi_pmix; then
	skip "$TE_WHY" 3
else
	out=$(te_srun -t 60 --mpi=pmix -N3 $W --train-checkpoint-dir="$ckpt" sh -c 'echo "ran $SLURM_JOB_ID"' 2>&1)
	rc=$?
	[ "$rc" -eq 0 ] && [ "$(printf '%s\n' "$out" | grep -c "^ran $next$")" -eq 3 ]
	ok $? "the checkpoint check still passes: the probe names cannot be guessed (srun exit $rc)" || diag "$(printf '%s\n' "$out" | head -n 20)"
	like "$out" "^ran $next$" "... and the job was the one guessed ($next)"
	is "$(find "$ckpt" -mindepth 1 | wc -l) $(find "$ckpt" -mindepth 1 ! -user nobody | wc -l)" "$guessed 0" \
		"... nobody's files are left as they were, and the check leaves nothing of its own"
fi
find "$ckpt" -mindepth 1 -delete

# ================================================================ topology cache
# A cache holding this machine's topology with fake GPUs shows in the
# binding (GPU 0's bus id in TRAINENV_BIND); plain discovery finds no GPU
# here (the rank runs unbound, TRAINENV_BIND unset).
lstopo-no-graphics --of xml --whole-io - >"$TE_WORK/here.xml" 2>/dev/null &&
	"$here/../lib/add_gpus.py" "$TE_WORK/here.xml" "$TE_WORK/gpus.xml" 2
ok $? "this machine's topology exported, fake GPUs added"
boot=$(cat /proc/sys/kernel/random/boot_id)
bind_of() { # CACHE-DIR: TRAINENV_BIND of one task on n1
	pmix_plugstack "topology-cache=$1"
	CUDA_VISIBLE_DEVICES=0 te_srun -t 60 -N1 -n1 -w n1 --train-bind=numa \
		sh -c 'echo "bind ${TRAINENV_BIND:-unset}"' 2>&1
}
trusted=$TE_WORK/tcache
mkdir -m 755 "$trusted"
install -m 644 "$TE_WORK/gpus.xml" "$trusted/topology-$boot.xml"
like "$(bind_of "$trusted")" "^bind gpu=0000:[0-9a-f:.]+ numa=" "control: a root-owned cache in a root-owned directory is read (the fake GPU 0 is bound)"
theirs=$TE_WORK/tcache-nobody
mkdir -m 755 "$theirs" && chown nobody:nogroup "$theirs"
install -m 644 "$TE_WORK/gpus.xml" "$theirs/topology-$boot.xml"
out=$(bind_of "$theirs")
like "$out" "^bind unset$" "a root-owned cache file in nobody's directory is not read (discovery: no GPU, the rank runs unbound)"
is "$(stat -c '%U %a' "$theirs/topology-$boot.xml") $(cmp -s "$TE_WORK/gpus.xml" "$theirs/topology-$boot.xml" && echo same)" \
	"root 644 same" "... nor replaced"
linked=$TE_WORK/tcache-link
mkdir -m 755 "$linked"
ln -s "$trusted/topology-$boot.xml" "$linked/topology-$boot.xml"
out=$(bind_of "$linked")
like "$out" "^bind unset$" "a cache file that is a link to a root-owned export is not read"
[ -f "$linked/topology-$boot.xml" ] && [ ! -L "$linked/topology-$boot.xml" ] &&
	grep -q '<topology' "$linked/topology-$boot.xml" && ! grep -q 'NVIDIA' "$linked/topology-$boot.xml"
ok $? "... and it is replaced by this node's own export (a regular file)"
pmix_plugstack

is "$(sinfo -h -o '%T' | sort -u | paste -sd, -)" "idle" "no node drained"

done_testing
