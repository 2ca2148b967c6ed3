#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 2 on the real cluster: the --train-* options of srun, sbatch and
# salloc. They are listed under [trainenv] in --help; a bad value stops the
# command before anything is allocated, with one trainenv line naming the
# option and what is accepted; --train=help prints the usage; --train-explain
# names the source of every setting (enforced, option, environment, admin
# default, built-in) and `trainenv env` inside a task says the same;
# --train=off turns everything off unless the site enforces train.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"

# Every setting, in the plugin's order, and what its errors say is accepted
# under the policy below (nccl-heartbeat bounded to 60..3600 by the site).
settings=(train sighup nccl-heartbeat nccl-monitoring nccl-async-errors
	nccl-blocking-wait nccl-desync-debug nccl-dump-on-timeout
	nccl-trace-buffer nccl-dump-dir nccl-diagnostics deepspeed-timeout
	rdzv-timeout launcher
	rank-env port-range ignore-signals failure-report bind bind-smt
	bind-gpus bind-failure rdzv barrier version-check checkpoint-dir
	socket-ifname preflight exit-grace exit-action stall requeue
	time-signal spares shrink transient step-watch step-watch-windows
	step-watch-window straggler straggler-windows straggler-window
	straggler-exclude)
declare -A accepted=(
	[train]='on or off'
	[sighup]='shield, ignore or default'
	[nccl-heartbeat]='60 to 3600 seconds \(site bounds\)'
	[nccl-monitoring]='on or off'
	[nccl-async-errors]='off, tear-down, cleanup-only or skip-cleanup'
	[nccl-blocking-wait]='on or off'
	[nccl-desync-debug]='on or off'
	[nccl-dump-on-timeout]='on or off'
	[nccl-trace-buffer]='0 to 1000000 entries'
	[nccl-dump-dir]='an absolute path'
	[nccl-diagnostics]='on or off'
	[deepspeed-timeout]='1 to 44640 minutes'
	[rdzv-timeout]='1 to 2678400 seconds'
	[launcher]='auto, task or torchrun'
	[rank-env]='yes or no'
	[port-range]='LO-HI with 1024 <= LO <= HI <= 65535'
	[ignore-signals]='none, or a comma-separated list of PIPE, TTIN, TTOU, XFSZ, WINCH, URG'
	[failure-report]='on or off'
	[bind]='none, numa or cores, optionally followed by ,verbose'
	[bind-smt]='all or one'
	[bind-gpus]='all or own'
	[bind-failure]='warn or fail'
	[rdzv]='auto, pmix or computed'
	[barrier]='1 to 604800 seconds, or off or first-collective'
	[version-check]='warn, fail or off'
	[checkpoint-dir]='an absolute path'
	[socket-ifname]='yes or no'
	[preflight]='off, on or verbose'
	[exit-grace]='1 to 604800 seconds, or off'
	[exit-action]='report, term or kill'
	[stall]='1 to 604800 seconds, or off'
	[requeue]='1 to 1000 restarts, or off'
	[time-signal]='SIG@SECONDS with SIG one of USR1, USR2, TERM, INT and SECONDS 1 to 604800 seconds, or off'
	[spares]='1 to 64 nodes, or off'
	[shrink]='yes or no'
	[transient]='a comma-separated list of exit codes 1 to 255 but 75, 93, 126 and 127, or off'
	[step-watch]='1 to 10000 percent, or off'
	[step-watch-windows]='1 to 100 windows'
	[step-watch-window]='1 to 3600 seconds'
	[straggler]='1 to 99 percent, or off'
	[straggler-windows]='1 to 100 windows'
	[straggler-window]='1 to 3600 seconds'
	[straggler-exclude]='off or checkpoint'
)
# Admin-only keys (no option), explained after the options.
admin_keys=(bind-topology topology-cache record-dir barrier-skew-warn requeue-on
	requeue-signals requeue-no-progress fence-tree-min-nodes launch-tree-width helper-dir
	lib-dir test-hooks)
optname() { if [ "$1" = train ]; then echo train; else echo "train-$1"; fi; }

plan 167

te_build_init
cluster_up --nodes 3 || bail_out "no cluster"
ok 0 "cluster is up, plugin $TE_PLUGIN"

use_trainenv nccl-heartbeat=900 nccl-heartbeat.min=60 nccl-heartbeat.max=3600 \
	deepspeed-timeout=30 enforce=deepspeed-timeout

# ---------------------------------------------------------------- --help
for cmd in srun sbatch salloc; do
	help=$(timeout 30 "$cmd" --help 2>&1)
	missing=()
	# besides the settings: --train-explain and --train-health (the
	# user's own node checks, not a row of the settings table)
	for s in "${settings[@]}" explain health; do
		o=$(optname "$s")
		[ "$s" = explain ] && o=train-explain
		printf '%s\n' "$help" | grep -Eq -- "^ +--$o([= ]|$)" || missing+=("--$o")
	done
	is "${missing[*]}" "" "$cmd --help lists every --train option"
	n=$(printf '%s\n' "$help" | grep -c '\[trainenv\]')
	is "$n" $(( ${#settings[@]} + 2 )) "$cmd --help: each of the $(( ${#settings[@]} + 2 )) options is marked [trainenv]"
done

# ---------------------------------------------------------------- bad values
# A good step first: its job id is the baseline for "nothing allocated".
first_job=$(te_srun -t 60 -N1 printenv SLURM_JOB_ID)
like "$first_job" '^[0-9]+$' "a good srun runs (job $first_job)"

bad_value() { # CMD OPTION VALUE WHAT [REGEX]: REGEX defaults to "accepted: ..."
	local cmd=$1 opt=$2 val=$3 what=$4 re=${5:-} out rc tl n
	[ -n "$re" ] || re="accepted: ${accepted[$opt]}"
	case $cmd in
	srun) out=$(timeout 30 srun -N1 "--$(optname "$opt")=$val" true 2>&1) ;;
	sbatch) out=$(timeout 30 sbatch -N1 -o /dev/null "--$(optname "$opt")=$val" --wrap true 2>&1) ;;
	salloc) out=$(timeout 30 salloc -N1 "--$(optname "$opt")=$val" true 2>&1) ;;
	esac
	rc=$?
	tl=$(printf '%s\n' "$out" | grep 'trainenv:')
	n=$(printf '%s\n' "$out" | grep -c 'trainenv:')
	[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$n" -eq 1 ] &&
		printf '%s\n' "$tl" | grep -q -- "trainenv: --$(optname "$opt"): " &&
		printf '%s\n' "$tl" | grep -Eq -- "$re"
	ok $? "$cmd --$(optname "$opt")=$what: refused (exit $rc), one trainenv line with the option and what is accepted" ||
		diag "$(printf '%s\n' "$out" | cut -c1-300)"
}

# Every option once with junk, through srun and sbatch.
for s in "${settings[@]}"; do bad_value srun "$s" junk junk; done
for s in "${settings[@]}"; do bad_value sbatch "$s" junk junk; done
bad_value salloc sighup junk junk
bad_value salloc nccl-heartbeat 5000 "5000 (above the site maximum)"

# The other kinds of bad input.
bad_value srun sighup "" "(empty)"
bad_value srun nccl-heartbeat "" "(empty)"
bad_value srun nccl-heartbeat 5000 "5000 (above the site maximum)"
out=$(timeout 30 srun -N1 --train-nccl-heartbeat=5000 true 2>&1)
like "$out" 'trainenv: --train-nccl-heartbeat: 5000 is above the site maximum' "the error says the value is above the site maximum (refused, not clamped)"
bad_value srun nccl-heartbeat 30 "30 (below the site minimum)"
out=$(timeout 30 srun -N1 --train-nccl-heartbeat=30 true 2>&1)
like "$out" 'trainenv: --train-nccl-heartbeat: 30 is below the site minimum' "the error says the value is below the site minimum"
bad_value srun nccl-heartbeat 0 "0 (below the hard limit)"
bad_value sbatch nccl-heartbeat 3601 "3601 (above the site maximum)"
bad_value srun deepspeed-timeout 44641 "44641 (above the hard limit)"
bad_value srun nccl-heartbeat "$(printf '90\n0')" "'90<newline>0'"
bad_value srun sighup "$(printf 'ignore\t')" "'ignore<tab>'"
bad_value srun nccl-dump-dir "$(printf '/scratch/\033[31mred')" "'<escape sequence>'"
bad_value srun nccl-heartbeat 99999999999999999999999999 "(a 26-digit number)"
bad_value srun nccl-dump-dir "/$(head -c 5000 /dev/zero | tr '\0' a)" "(a 5001-character path)"
bad_value srun sighup "$(head -c 100000 /dev/zero | tr '\0' x)" "(100000 characters)"
bad_value srun launcher task=torchrun "task=torchrun ('=' inside)"
bad_value srun nccl-heartbeat 900=900 "900=900 ('=' inside)"
bad_value srun port-range 30000-20000 "30000-20000 (reversed)"
bad_value srun ignore-signals USR1 "USR1 (never ignored)" "'USR1' may not be ignored"
bad_value srun nccl-heartbeat -5 "-5"
bad_value srun nccl-heartbeat 0x100 "0x100"

after=$(te_jobs_after "$first_job")
is "$after" "" "no bad value allocated anything (no job id above $first_job)"
next_job=$(te_srun -t 60 -N1 printenv SLURM_JOB_ID)
is "$next_job" "$((first_job + 1))" "the next good srun gets the next job id: no id was used by the refused commands"

# ---------------------------------------------------------------- --train=help
out=$(timeout 30 srun --train=help 2>&1)
rc=$?
is "$rc" 0 "srun --train=help exits 0"
missing=()
for s in "${settings[@]}"; do
	printf '%s\n' "$out" | grep -q -- "^  --$(optname "$s")=" || missing+=("$s")
done
is "${missing[*]}" "" "srun --train=help describes every option"
like "$out" 'Precedence: enforced > option > job environment > site default > built-in' "the usage states the precedence"
like "$out" 'accepted: 60 to 3600 seconds \(site bounds\)' "the usage shows the site's bounds for nccl-heartbeat"
# The version configure gave the build (config.h), and the protocol of
# core/launch/version.h: what --version, the usage and explain say.
cfg_ver=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$TE_REAL_BUILDDIR/config.h")
cfg_proto=$(sed -n 's/^#define TE_PROTOCOL_VERSION \([0-9]*\)$/\1/p' "$TE_REAL_SRCDIR/core/launch/version.h")
version_line="trainenv $cfg_ver (protocol $cfg_proto)"
ok "$([ -n "$cfg_ver" ] && [ -n "$cfg_proto" ] && echo 0 || echo 1)" "configure's version ($cfg_ver) and the protocol ($cfg_proto) are known"
is "$(printf '%s\n' "$out" | head -1 | cut -c1-$((${#version_line} + 1)))" "$version_line:" "srun --train=help starts with '$version_line'" || diag "$(printf '%s\n' "$out" | head -3)"
is "$("$TE_TOOL" --version 2>&1)" "$version_line" "trainenv --version says the same"
# sbatch reads its script before it handles plugin options: give it one.
out=$(timeout 30 sbatch --train=help --wrap true 2>&1)
ok $? "sbatch --train=help exits 0"
like "$out" '--train-explain' "sbatch --train=help prints the usage"
is "$(te_jobs_after "$next_job")" "" "--train=help allocated nothing"

# ---------------------------------------------------------------- explain
# One step that sees all five sources: enforced (deepspeed-timeout),
# option (nccl-trace-buffer), environment (nccl-monitoring), admin default
# (nccl-heartbeat), built-in (launcher), and one knob nobody set.
err=$TE_WORK/explain.err
tasks=$(TORCH_NCCL_ENABLE_MONITORING=0 te_srun -t 60 -N1 --train-explain \
	--train-nccl-trace-buffer=100 --train-deepspeed-timeout=5 "$TE_TOOL" env 2>"$err")
rc=$?
explain=$(cat "$err")
ok $rc "srun --train-explain runs the step" || diag "$explain"
vl=$(printf '%s\n' "$explain" | grep -nxF "trainenv: $version_line" | head -1 | cut -d: -f1)
hl=$(printf '%s\n' "$explain" | grep -n '^trainenv: effective settings' | head -1 | cut -d: -f1)
ok "$([ -n "$vl" ] && [ -n "$hl" ] && [ "$vl" -lt "$hl" ] && echo 0 || echo 1)" "explain says 'trainenv: $version_line' before its settings (line $vl, header $hl)"
is "$(printf '%s\n' "$explain" | grep -cxF "trainenv: $version_line")" 1 "  said once for the step"
like "$explain" '^trainenv: effective settings for this step \(precedence: enforced > option > environment > admin default > built-in\):' "explain starts with a header stating the precedence"
explained=$(explain_settings "$explain")
is "$(printf '%s\n' "$explained" | awk '{ print $1 }' | tr '\n' ' ')" "${settings[*]} ${admin_keys[*]} " "explain prints one line per setting (options, then admin-only keys), each once, in order"
like "$explain" 'trainenv: deepspeed-timeout += 30 +\(enforced: plugstack\.conf argument 4\)' "enforced: deepspeed-timeout 30 from plugstack.conf argument 4"
like "$explain" 'trainenv: warning: --train-deepspeed-timeout=5 ignored: the site enforces deepspeed-timeout=30' "the user's option overridden by the enforced value gets a warning"
like "$explain" 'trainenv: nccl-trace-buffer += 100 +\(option: --train-nccl-trace-buffer\)' "option: nccl-trace-buffer 100 from --train-nccl-trace-buffer"
like "$explain" 'trainenv: nccl-monitoring += off +\(environment: TORCH_NCCL_ENABLE_MONITORING\)' "environment: nccl-monitoring off from TORCH_NCCL_ENABLE_MONITORING=0"
like "$explain" 'trainenv: nccl-heartbeat += 900 +\(admin default: plugstack\.conf argument 1\)' "admin default: nccl-heartbeat 900 from plugstack.conf argument 1"
like "$explain" 'trainenv: launcher += auto +\(built-in\)' "built-in: launcher auto"
like "$explain" 'trainenv: nccl-dump-dir += \(unset\) +\(not set: trainenv leaves it alone\)' "a knob nobody set is shown as left alone"
like "$explain" 'trainenv: launch style: task \(auto: one task per rank.*\); 1 tasks on 1 nodes; rank environment exported' "explain ends with the launch style and why"
is "$tasks" "$explained" "trainenv env inside the task prints the same values and sources as --train-explain"
after=$(te_jobs_after "$next_job")
is "$(echo "$after" | wc -w)" 1 "the explained step was one job, nothing more"
n=$(printf '%s\n' "$tasks" | grep -c '^train ')
is "$n" 1 "the task ran once"

# Policy file lines are named FILE:LINE in explain.
cp_policy=$TE_WORK/policy.conf
printf '# site policy\nnccl-heartbeat=1200\n\nnccl-async-errors=tear-down\n' >"$cp_policy"
use_trainenv "conf=$cp_policy"
out=$(te_srun -t 60 -N1 --train-explain true 2>&1)
like "$out" "nccl-heartbeat += 1200 +\\(admin default: $cp_policy:2\\)" "explain names a policy file value as FILE:LINE (line 2)"
like "$out" "nccl-async-errors += tear-down +\\(admin default: $cp_policy:4\\)" "and the next one as FILE:LINE (line 4)"

# sbatch explains the job's settings at submission.
use_trainenv nccl-heartbeat=900
out=$(te_sbatch_wait -t 60 -N1 -o /dev/null --train-explain --train-nccl-heartbeat=1234 --wrap true 2>&1)
ok $? "sbatch --train-explain submits and runs the job"
like "$out" 'trainenv: effective settings for this job' "sbatch --train-explain prints the job's settings"
like "$out" 'trainenv: nccl-heartbeat += 1234 +\(option: --train-nccl-heartbeat\)' "sbatch --train-explain names the option as the source"

# ---------------------------------------------------------------- --train=off
# shellcheck disable=SC2016 # expanded by the task's shell
probe='printf "%s\n" "SigIgn=$(grep SigIgn /proc/self/status | cut -f2)"; env | grep -E "^(TORCH_NCCL|NCCL_|RANK|WORLD_SIZE|LOCAL_RANK|MASTER_|PET_|DEEPSPEED)" | sort'
on=$(te_srun -t 60 -N2 --train-sighup=ignore sh -c "$probe" 2>&1)
like "$on" 'TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC=900' "trainenv on: the task gets the site's heartbeat"
like "$on" '^RANK=1$' "trainenv on: the task gets RANK"
mask=$(printf '%s\n' "$on" | sed -n 's/^SigIgn=//p' | head -n 1)
sig_ignored "$mask" 1
ok $? "trainenv on, --train-sighup=ignore: the task ignores SIGHUP (SigIgn $mask)"

off=$(te_srun -t 60 -N2 --train=off --train-explain sh -c "$probe" 2>&1)
rc=$?
ok $rc "srun --train=off runs the step"
like "$off" 'trainenv: trainenv is off for this step: no other setting is applied' "explain says trainenv is off"
is "$(printf '%s\n' "$off" | grep -cE '^(TORCH_NCCL|NCCL_|RANK|WORLD_SIZE|LOCAL_RANK|MASTER_|PET_|DEEPSPEED)')" 0 "--train=off: no TORCH_NCCL_*, NCCL_*, rank or PET_* variable in the tasks"
masks=$(printf '%s\n' "$off" | sed -n 's/^SigIgn=//p' | std_sigign | tr '\n' ' ')
is "$masks" "0000000000000000 0000000000000000 " "--train=off: no task ignores SIGHUP (or any other standard signal)"

out=$(te_sbatch_wait -t 60 -N2 -o "$TE_WORK/off.out" --train=off --wrap "srun sh -c '$probe'" 2>&1)
ok $? "sbatch --train=off runs its job" || diag "$out"
out=$(cat "$TE_WORK/off.out")
is "$(printf '%s\n' "$out" | grep -cE '^(TORCH_NCCL|RANK|MASTER_)')" 0 "sbatch --train=off reaches the steps inside the job: no trainenv variable"

use_trainenv train=off nccl-heartbeat=900
out=$(te_srun -t 60 -N1 sh -c "$probe" 2>&1)
is "$(printf '%s\n' "$out" | grep -cE '^(TORCH_NCCL|RANK=)')" 0 "site default train=off: trainenv does nothing"
out=$(te_srun -t 60 -N1 --train=on sh -c "$probe" 2>&1)
like "$out" 'TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC=900' "site default train=off, user --train=on: trainenv works"

use_trainenv nccl-heartbeat=900 sighup=ignore enforce=train
out=$(te_srun -t 60 -N2 --train=off sh -c "$probe" 2>&1)
rc=$?
ok $rc "enforce=train: srun --train=off still runs"
like "$out" 'trainenv: warning: --train=off ignored: the site enforces train=on' "enforce=train: --train=off is ignored with a warning"
like "$out" 'TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC=900' "enforce=train: the tasks still get the heartbeat"
like "$out" '^RANK=1$' "enforce=train: the tasks still get RANK"
mask=$(printf '%s\n' "$out" | sed -n 's/^SigIgn=//p' | head -n 1)
sig_ignored "$mask" 1
ok $? "enforce=train: the tasks still ignore SIGHUP (admin default sighup=ignore)"

# ---------------------------------------------------------------- man page
# Each option is described in one place, trainenv(8) (README.md links it):
# every option srun --train=help lists has its heading there (.B, .BI or .BR
# line, the man page's escaped hyphens).
use_trainenv
opts=$(timeout 30 srun --train=help | awk '/^  --/ { o = $1; sub(/[=[].*/, "", o); print o }' | sort -u)
missing=$(for o in $opts; do
	grep -q "^\.B[IR]\{0,1\} $(printf '%s' "$o" | sed 's/-/\\\\-/g')\([= ]\|\$\)" "$TE_SRCDIR/etc/trainenv.8" || echo "$o"
done)
is "$missing" "" "trainenv(8) has a heading for every option srun --train=help lists ($(echo $opts | wc -w) options)"

done_testing
