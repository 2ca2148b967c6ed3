#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 2 on the real cluster: the site policy and the one precedence rule,
#   enforced admin value > user option (srun/sbatch, sbatch options inherited
#   by steps) > value already in the job environment > admin default >
#   built-in default,
# each level proven by what a task sees; srun --export variants; bounds that
# refuse (never clamp) options and environment values; and bad admin input:
# plugstack.conf arguments and conf=FILE lines, on srun's side and on the
# nodes' side only (the nodes have a private /tmp), where the step must fail
# cleanly with the reason in srun's output and the slurmd log, without a
# slurmstepd crash or a drained node.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"

plan 131

te_build_init
cluster_up --nodes 3 || bail_out "no cluster"
ok 0 "cluster is up, plugin $TE_PLUGIN"

HB=TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC
unset "$HB" SLURM_EXPORT_ENV SRUN_EXPORT_ENV

# What a task sees, on one line: the heartbeat, the port, whether SIGHUP
# is ignored, then "|" and the sources `trainenv env` gives for the three
# knobs: "hb=900 port=31000 hup=no | sighup:admin default nccl-...".
# PATH is set for --export=NONE steps, which get none.
cat >"$TE_WORK/probe.sh" <<EOF
#!/bin/sh
PATH=/usr/bin:/bin
mask=\$(grep SigIgn /proc/self/status | cut -f2)
hup=no
[ \$(( (0x\$mask) & 1 )) -eq 1 ] && hup=yes
src=\$("$TE_TOOL" env | awk '\$1 == "nccl-heartbeat" || \$1 == "port-range" || \$1 == "sighup" {
	match(\$0, /\\([^()]*\\)\$/); src = substr(\$0, RSTART + 1, RLENGTH - 2)
	sub(/:.*/, "", src); printf " %s:%s", \$1, src }')
echo "hb=\${$HB-unset} port=\${MASTER_PORT-unset} hup=\$hup |\$src"
EOF
chmod 755 "$TE_WORK/probe.sh"
probe=("$TE_WORK/probe.sh")

# ---------------------------------------------------------------- precedence
# built-in: no policy at all.
use_trainenv
out=$(te_srun -t 60 -N1 "${probe[@]}" 2>&1)
port=$(printf '%s\n' "$out" | sed -n 's/.*port=\([0-9]*\).*/\1/p')
like "$out" '^hb=unset port=[0-9]+ hup=no \|' "built-in: no heartbeat variable (left alone), SIGHUP not ignored (built-in sighup=shield)" || diag "$out"
[ -n "$port" ] && [ "$port" -ge 20000 ] && [ "$port" -le 29999 ]
ok $? "built-in: MASTER_PORT $port is in the built-in port range 20000-29999"
like "$out" 'sighup:built-in nccl-heartbeat:not set port-range:built-in' "built-in: trainenv env names the sources"

# admin default beats built-in.
policy=(nccl-heartbeat=900 port-range=31000-31000 sighup=default)
use_trainenv "${policy[@]}"
out=$(te_srun -t 60 -N1 "${probe[@]}" 2>&1)
like "$out" '^hb=900 port=31000 hup=no \|' "admin default beats built-in: heartbeat 900, MASTER_PORT 31000, SIGHUP not ignored" || diag "$out"
like "$out" 'sighup:admin default nccl-heartbeat:admin default port-range:admin default' "admin default: trainenv env names the sources"

# environment beats admin default.
out=$(env "$HB=700" timeout 60 srun -N1 "${probe[@]}" 2>&1)
like "$out" '^hb=700 port=31000 hup=no \|' "the job environment ($HB=700) beats the admin default 900" || diag "$out"
like "$out" 'nccl-heartbeat:environment' "environment: trainenv env names the source"

# A legacy name counts as the environment too, and the current name is
# filled in from it.
# shellcheck disable=SC2016 # expanded by the task's shell
out=$(env NCCL_ASYNC_ERROR_HANDLING=1 timeout 60 srun -N1 sh -c 'echo "$TORCH_NCCL_ASYNC_ERROR_HANDLING $NCCL_ASYNC_ERROR_HANDLING"; '"$TE_TOOL"' env | grep ^nccl-async' 2>&1)
like "$out" '^1 1$' "the legacy NCCL_ASYNC_ERROR_HANDLING=1 set by the user gives TORCH_NCCL_ASYNC_ERROR_HANDLING=1" || diag "$out"
like "$out" 'nccl-async-errors += tear-down +\(environment: NCCL_ASYNC_ERROR_HANDLING\)' "and trainenv env names the legacy variable as the source"

# option beats environment.
out=$(env "$HB=700" timeout 60 srun -N1 --train-nccl-heartbeat=1200 \
	--train-port-range=32000-32000 --train-sighup=ignore "${probe[@]}" 2>&1)
like "$out" '^hb=1200 port=32000 hup=yes \|' "options beat the environment and the admin defaults: heartbeat 1200, MASTER_PORT 32000, SIGHUP ignored" || diag "$out"
like "$out" 'sighup:option nccl-heartbeat:option port-range:option' "option: trainenv env names the sources"

# enforced beats option.
use_trainenv "${policy[@]}" enforce=nccl-heartbeat,port-range,sighup
out=$(env "$HB=700" timeout 60 srun -N1 --train-nccl-heartbeat=1200 \
	--train-port-range=32000-32000 --train-sighup=ignore "${probe[@]}" 2>&1)
like "$out" '^hb=900 port=31000 hup=no \|' "enforced admin values beat options and environment: heartbeat 900, MASTER_PORT 31000, SIGHUP not ignored" || diag "$out"
like "$out" 'sighup:enforced nccl-heartbeat:enforced port-range:enforced' "enforced: trainenv env names the sources"
is "$(printf '%s\n' "$out" | grep -c 'trainenv: warning: --train-.* ignored: the site enforces')" 3 "one warning per overridden option"

# ---------------------------------------------------------------- sbatch
use_trainenv "${policy[@]}"
cat >"$TE_WORK/job.sh" <<EOF
#!/bin/sh
echo "batch hb=\${$HB-unset}"
srun -N2 ${probe[*]}
srun -N1 --train-nccl-heartbeat=1500 ${probe[*]}
srun -N1 --train-explain ${probe[*]} 2>&1 | grep 'nccl-heartbeat  '
EOF
out=$(te_sbatch_wait -t 90 -N2 -o "$TE_WORK/job.out" --train-nccl-heartbeat=1234 \
	--train-port-range=33000-33000 "$TE_WORK/job.sh" 2>&1)
ok $? "sbatch --train-nccl-heartbeat=1234 runs its job" || diag "$out"
out=$(cat "$TE_WORK/job.out")
like "$out" '^batch hb=1234$' "the batch script gets the sbatch option's heartbeat"
is "$(printf '%s\n' "$out" | grep -c '^hb=1234 port=33000 hup=no | sighup:admin default nccl-heartbeat:option port-range:option$')" 2 "both tasks of a step inherit the sbatch options (heartbeat 1234, port 33000), trainenv env names them as options" || diag "$out"
like "$out" '^hb=1500 port=33000 hup=no \|' "srun's own option beats the inherited sbatch option"
like "$out" 'nccl-heartbeat += 1234 +\(option: --train-nccl-heartbeat\)' "srun --train-explain in the job names the inherited option"

cat >"$TE_WORK/job2.sh" <<EOF
#!/bin/sh
srun -N1 ${probe[*]}
srun -N1 --train-explain true 2>&1 | grep 'nccl-heartbeat  '
EOF
out=$(te_sbatch_wait -t 90 -N1 -o "$TE_WORK/job2.out" "$TE_WORK/job2.sh" 2>&1)
ok $? "sbatch without options runs its job" || diag "$out"
out=$(cat "$TE_WORK/job2.out")
like "$out" '^hb=900 ' "a step in a job gets the admin default"
like "$out" 'nccl-heartbeat:admin default' "and it is still the admin default, not the environment: the batch script's variable was set by trainenv, not the user"
like "$out" 'nccl-heartbeat += 900 +\(admin default' "srun --train-explain in the job agrees"

out=$(env "$HB=700" timeout 90 sbatch --wait -N1 -o "$TE_WORK/job3.out" "$TE_WORK/job2.sh" 2>&1)
ok $? "sbatch with $HB=700 exported runs its job" || diag "$out"
out=$(cat "$TE_WORK/job3.out")
like "$out" '^hb=700 .*nccl-heartbeat:environment' "a variable the user exported to sbatch reaches the steps as the environment level"
like "$out" 'nccl-heartbeat += 700 +\(environment: '"$HB"'\)' "srun --train-explain in the job agrees"

# ---------------------------------------------------------------- --export
# srun --export decides the job environment: trainenv reads what the tasks
# get, and srun's --train-explain must say the same.
export_case() { # WHAT WANT_HB WANT_SOURCE SRUN_ARGS...
	local what=$1 want=$2 src=$3 out ex
	shift 3
	out=$(te_srun -t 60 -N1 --train-explain "$@" "${probe[@]}" 2>&1)
	like "$out" "^hb=$want .*nccl-heartbeat:$src" "$what: the task gets $want ($src)" || diag "$out"
	ex=$(printf '%s\n' "$out" | sed -n 's/^trainenv: nccl-heartbeat *= *\([^ ]*\) *(\([a-z ]*\).*/\1 \2/p')
	is "$ex" "$want $src" "$what: srun's --train-explain says the same"
}
export "$HB=700"
export_case "exported $HB=700, default --export" 700 environment
export_case "exported $HB=700, --export=ALL" 700 environment --export=ALL
export_case "exported $HB=700, --export=NONE" 900 "admin default" --export=NONE
export_case "exported $HB=700, --export=NIL" 900 "admin default" --export=NIL
export_case "--export=$HB=800" 800 environment "--export=$HB=800"
export_case "exported $HB=700, --export=$HB" 700 environment "--export=$HB"
SLURM_EXPORT_ENV=NONE export_case "exported $HB=700, SLURM_EXPORT_ENV=NONE" 900 "admin default"
unset "$HB"
export_case "--export=ALL,$HB=800" 800 environment "--export=ALL,$HB=800"

# ---------------------------------------------------------------- bounds
use_trainenv nccl-heartbeat=900 nccl-heartbeat.min=60 nccl-heartbeat.max=3600
before=$(te_last_job_id)
refused() { # WHAT REGEX CMD...
	local what=$1 re=$2 out rc
	shift 2
	out=$(timeout 60 "$@" 2>&1)
	rc=$?
	[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && printf '%s\n' "$out" | grep -Eq -- "$re"
	ok $? "$what: refused (exit $rc)" || diag "$out"
}
refused "srun --train-nccl-heartbeat=3601" 'trainenv: --train-nccl-heartbeat: 3601 is above the site maximum; accepted: 60 to 3600 seconds \(site bounds\)' \
	srun -N1 --train-nccl-heartbeat=3601 true
refused "srun --train-nccl-heartbeat=59" 'trainenv: --train-nccl-heartbeat: 59 is below the site minimum; accepted: 60 to 3600 seconds \(site bounds\)' \
	srun -N1 --train-nccl-heartbeat=59 true
refused "$HB=3601 in srun's environment" "trainenv: $HB in the job environment \\(setting nccl-heartbeat\\): 3601 is above the site maximum; accepted: 60 to 3600 seconds \\(site bounds\\)" \
	env "$HB=3601" srun -N1 true
refused "$HB=59 in srun's environment" "trainenv: $HB in the job environment \\(setting nccl-heartbeat\\): 59 is below the site minimum" \
	env "$HB=59" srun -N1 true
refused "$HB=soon in srun's environment" "trainenv: $HB in the job environment \\(setting nccl-heartbeat\\): invalid value 'soon'; accepted: 60 to 3600 seconds" \
	env "$HB=soon" srun -N1 true
refused "$HB=3601 in sbatch's environment" "trainenv: $HB in the job environment" \
	env "$HB=3601" sbatch -N1 -o /dev/null --wrap true
refused "sbatch --train-nccl-heartbeat=4000" 'above the site maximum' \
	sbatch -N1 -o /dev/null --train-nccl-heartbeat=4000 --wrap true
is "$(te_jobs_after "$before")" "" "no refused value allocated a job"
# At the maximum and minimum: accepted as given (nothing is clamped).
out=$(te_srun -t 60 -N1 --train-nccl-heartbeat=3600 printenv "$HB" 2>&1)
is "$out" 3600 "--train-nccl-heartbeat=3600 (the maximum) reaches the task as 3600"
out=$(env "$HB=60" timeout 60 srun -N1 printenv "$HB" 2>&1)
is "$out" 60 "$HB=60 (the minimum) reaches the task as 60"
# A value only the job environment has (srun's own has none) is refused by
# the nodes: the step fails with the reason, nothing runs with it.
out=$(te_srun -t 60 -N2 "--export=PATH=/usr/bin:/bin,$HB=5000" sh -c 'echo ran' 2>&1)
rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]
ok $? "--export=$HB=5000 (above the site maximum): the step fails (exit $rc)"
like "$out" "trainenv: (error: )?$HB in the job environment \\(setting nccl-heartbeat\\): 5000 is above the site maximum" "the reason names the variable and the bounds" || diag "$out"
is "$(printf '%s\n' "$out" | grep -c '^ran$')" 0 "no task ran with the refused value"

# ---------------------------------------------------------------- bad plugstack.conf
# srun's side reads the same plugstack.conf: it fails before allocating,
# with one line that says where and which key.
before=$(te_last_job_id)
bad_admin() { # WHAT REGEX PLUGSTACK_ARG...
	local what=$1 re=$2 out rc n
	shift 2
	use_trainenv "$@"
	out=$(timeout 60 srun -N1 true 2>&1)
	rc=$?
	n=$(printf '%s\n' "$out" | grep -c 'trainenv:')
	[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$n" -eq 1 ] &&
		printf '%s\n' "$out" | grep -Eq -- "^srun: error: trainenv: $re"
	ok $? "plugstack.conf $what: srun fails (exit $rc) with one trainenv line" || diag "$out"
}
bad_admin "nccl-heartbeat=abc" "plugstack.conf argument 1: nccl-heartbeat: invalid value 'abc'; accepted: 1 to 2678400 seconds" \
	nccl-heartbeat=abc
bad_admin "unknown key" "plugstack.conf argument 2: unknown key 'heartbeat'; accepted: train, sighup, nccl-heartbeat" \
	sighup=ignore heartbeat=900
bad_admin "not key=value" "plugstack.conf argument 1: 'sighup' is not key=value" \
	sighup
bad_admin "min > max" "plugstack.conf argument 1: nccl-heartbeat.min=600 is greater than nccl-heartbeat.max=300 \\(plugstack.conf argument 2\\)" \
	nccl-heartbeat.min=600 nccl-heartbeat.max=300
bad_admin "default outside the bounds" "plugstack.conf argument 1: nccl-heartbeat=10: the site default is outside the site bounds" \
	nccl-heartbeat=10 nccl-heartbeat.min=60
bad_admin "enforce without a value" "plugstack.conf argument 1: enforce=nccl-heartbeat needs a value: add nccl-heartbeat=VALUE" \
	enforce=nccl-heartbeat
bad_admin "enforce of an unknown key" "plugstack.conf argument 1: enforce=: unknown setting 'hb'" \
	enforce=hb
bad_admin "bounds on a word setting" "plugstack.conf argument 1: launcher.max: only numeric settings have bounds" \
	launcher.max=3
bad_admin "ignore-signals=USR1" "plugstack.conf argument 1: ignore-signals: 'USR1' may not be ignored" \
	ignore-signals=USR1
bad_admin "ignore-signals=PIPE,USR2" "plugstack.conf argument 1: ignore-signals: 'USR2' may not be ignored" \
	ignore-signals=PIPE,USR2
bad_admin "conf=relative/path" "conf=relative/path: the policy file must be an absolute path" \
	conf=relative/path
use_trainenv nccl-heartbeat=abc
out=$(timeout 60 sbatch -N1 -o /dev/null --wrap true 2>&1)
rc=$?
[ "$rc" -ne 0 ] && printf '%s\n' "$out" | grep -q "^sbatch: error: trainenv: plugstack.conf argument 1: nccl-heartbeat: invalid value 'abc'"
ok $? "plugstack.conf nccl-heartbeat=abc: sbatch fails too (exit $rc) with the same line" || diag "$out"
is "$(te_jobs_after "$before")" "" "no bad site policy allocated a job"

# ---------------------------------------------------------------- bad conf=FILE
conf=$TE_WORK/site.conf
bad_conf() { # WHAT REGEX: CONF (the file) is prepared by the caller; sets out
	local what=$1 re=$2 rc n
	use_trainenv "conf=$conf"
	out=$(timeout 60 srun -N1 true 2>&1)
	rc=$?
	n=$(printf '%s\n' "$out" | grep -c 'trainenv:')
	[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$n" -eq 1 ] &&
		printf '%s\n' "$out" | grep -Eq -- "^srun: error: trainenv: $re"
	ok $? "conf=FILE $what: srun fails (exit $rc) with one trainenv line" || diag "$out"
}
printf 'nccl-heartbeat=900\n# a comment\nnccl-heartbeat.max=abc\n' >"$conf"
bad_conf "bad bound on line 3" "$conf:3: nccl-heartbeat.max: invalid bound; accepted: 1 to 2678400$"
printf 'nccl-heartbeat=900\nbogus-key=1\n' >"$conf"
bad_conf "unknown key on line 2" "$conf:2: unknown key; accepted: train, sighup"
printf '\n\nsighup = sometimes # comment\n' >"$conf"
bad_conf "bad value on line 3" "$conf:3: sighup: invalid value; accepted: shield, ignore or default$"
# The file's text is never repeated: the policy file may be one the user
# cannot read (a conf= path others can replace, a link to a root-only
# file). Root-only here; srun runs as root and reads it.
secret=te-secret-$$
printf 'nccl-heartbeat=900\nroot:%s:19000:0:99999:7:::\n' "$secret" >"$conf"
chmod 600 "$conf"
bad_conf "a root-only file that is not a policy" "$conf:2: not key=value$"
seen=$out
printf '%s=1\nsighup=%s\n' "$secret" "$secret" >"$conf"
bad_conf "a root-only file with an unknown key" "$conf:1: unknown key; accepted: "
seen+=$'\n'$out
[ "$(printf '%s\n' "$seen" | grep -c -- "$secret")" -eq 0 ]
ok $? "conf=FILE errors never show the file's text ($secret appears nowhere in srun's output)" || diag "$seen"
printf 'nccl-heartbeat.max=%s\n' "$secret" >"$TE_WORK/root-only.conf"
chmod 600 "$TE_WORK/root-only.conf"
rm -f "$conf"
ln -s "$TE_WORK/root-only.conf" "$conf"
bad_conf "a symbolic link to a root-only file" "conf=$conf: is a symbolic link; the policy file must be named by its own path$"
[ "$(printf '%s\n' "$out" | grep -c -- "$secret")" -eq 0 ]
ok $? "conf=<link>: the linked file's text ($secret) appears nowhere in srun's output" || diag "$out"
rm -f "$conf"
chmod 644 "$TE_WORK/root-only.conf"
ln -s "$TE_WORK/root-only.conf" "$conf"
printf 'nccl-heartbeat=1000\n' >"$TE_WORK/root-only.conf"
bad_conf "a symbolic link to a good policy file" "conf=$conf: is a symbolic link"
rm -f "$conf"
printf 'conf=/etc/other.conf\n' >"$conf"
bad_conf "conf= inside a file" "$conf:1: conf= is only accepted in plugstack.conf"
printf 'nccl-heartbeat=900\nsighup=ignore\001\n' >"$conf"
bad_conf "a control character on line 2" "$conf:2: control or non-ASCII characters$"
printf 'nccl-heartbeat=900\n\000\001\002junk\n' >"$conf"
bad_conf "binary junk" "$conf:2: NUL byte: not a text file"
{ printf 'sighup='; head -c 5000 /dev/zero | tr '\0' x; echo; } >"$conf"
bad_conf "a 5000-character line" "$conf:1: line longer than 4096 characters"
{ for ((i = 0; i < 40000; i++)); do echo "# padding line $i of a policy file that is too big"; done; } >"$conf"
bad_conf "$(stat -c %s "$conf") bytes" "conf=$conf: [0-9]+ bytes, larger than the 1048576 byte limit"
printf 'nccl-heartbeat=900\n' >"$conf"
chmod 666 "$conf"
bad_conf "world-writable" "conf=$conf: writable by group or others \\(mode 0666\\)"
chmod 644 "$conf"
chown nobody "$conf"
bad_conf "owned by nobody" "conf=$conf: owned by uid [0-9]+; the policy file must be owned by root"
chown root "$conf"
rm -f "$conf"
bad_conf "missing" "conf=$conf: cannot open the policy file: No such file or directory"
mkdir "$conf"
bad_conf "a directory" "conf=$conf: not a regular file"
rmdir "$conf"
printf '# site policy\nnccl-heartbeat = 1100\n' >"$conf"
use_trainenv "conf=$conf"
out=$(te_srun -t 60 -N1 printenv "$HB" 2>&1)
is "$out" 1100 "a good conf=FILE works again (the task gets 1100)"

# ---------------------------------------------------------------- nodes only
# conf=/tmp/...: srun (root namespace) reads a good file, every node reads
# its own private /tmp, where the file is bad in each way below. The step
# must fail on the tasks' side with the reason in srun's output and in the
# slurmd log; slurmstepd must not crash; no node may be drained; the next
# step on the same nodes must run.
pol=/tmp/te-policy.$$.conf
printf 'nccl-heartbeat=900\n' >"$pol"
te_on_exit "rm -f '$pol'"
nodes=(n1 n2 n3)
te_on_exit "for n in ${nodes[*]}; do cluster_exec \$n rm -f '$pol' '$pol.secret'; done"
use_trainenv "conf=$pol"

on_nodes() { # SHELL-CMD: run on every node (in its namespaces), as root
	local n
	for n in "${nodes[@]}"; do cluster_exec "$n" sh -c "$1" || return 1; done
}

# What slurmstepd's main() logs at its normal end (src/slurmd/slurmstepd/
# slurmstepd.c): 22.05 "done with job"; 24.11 and 26.05 "done with step",
# or "main: done with step (...)" when the step's or the cleanup's return
# code is not 0 (here the tasks exit 1).
stepd_done='^n[123]: .*\] (done with job|([A-Za-z_]+: )?done with step)'

remote_bad() { # WHAT REGEX (the nodes' file is prepared by the caller); sets out, log
	local what=$1 re=$2 rc sizes i
	mapfile -t sizes < <(log_sizes)
	out=$(te_srun -t 60 -N3 sh -c 'echo ran' 2>&1)
	rc=$?
	[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] &&
		printf '%s\n' "$out" | grep -Eq -- "(^trainenv: error: |^slurmstepd-n[0-9]+: error: trainenv: )$re"
	ok $? "nodes' policy $what: the step fails (exit $rc), tasks' stderr says why" || diag "$out"
	[ "$(printf '%s\n' "$out" | grep -c '^ran$')" -eq 0 ] &&
		[ "$(printf '%s\n' "$out" | grep -cE 'srun: error: n[123]: task [012]: Exited with exit code 1')" -eq 3 ]
	ok $? "nodes' policy $what: no task ran; each of the 3 tasks ended with exit code 1 (not a launch failure)" || diag "$out"
	# slurmstepd logs that it is done when it ends its normal way
	# ($stepd_done): wait for it on each node (up to 10 s).
	for ((i = 0; i < 100; i++)); do
		log=$(new_logs "${sizes[@]}")
		[ "$(printf '%s\n' "$log" | grep -E "$stepd_done" | cut -d: -f1 | sort -u | wc -l)" -eq 3 ] && break
		sleep 0.1
	done
	[ "$(printf '%s\n' "$log" | grep -E "^n[123]: .*error: trainenv: $re" | cut -d: -f1 | sort -u | wc -l)" -eq 3 ]
	ok $? "nodes' policy $what: each node's slurmd log has the trainenv line" || diag "$log"
	[ "$(printf '%s\n' "$log" | grep -E "$stepd_done" | cut -d: -f1 | sort -u | wc -l)" -eq 3 ] &&
		! printf '%s\n' "$log" | grep -Eiq 'segfault|segmentation|core dump|fatal|abort|drain'
	ok $? "nodes' policy $what: slurmstepd ended normally on each node (done with job/step), no crash, fatal error or drain logged" || diag "$log"
	wait_nodes_idle 20
	ok $? "nodes' policy $what: every node is idle, none drained"
}

on_nodes "printf 'nccl-heartbeat=900\nnccl-heartbeat.max=abc\n' >'$pol'"
remote_bad "with a bad line" "$pol:2: nccl-heartbeat.max: invalid bound; accepted"
# A link to a root-only file on the nodes: slurmstepd (root) could read it.
on_nodes "printf 'nccl-heartbeat.max=$secret\n' >'$pol.secret'; chmod 600 '$pol.secret'; rm -f '$pol'; ln -s '$pol.secret' '$pol'"
remote_bad "a symbolic link to a root-only file" "conf=$pol: is a symbolic link"
[ "$(printf '%s\n%s\n' "$out" "$log" | grep -c -- "$secret")" -eq 0 ]
ok $? "nodes' policy a link to a root-only file: its text ($secret) is neither in srun's output nor in any slurmd log" || diag "$out"
on_nodes "rm -f '$pol' '$pol.secret'; printf 'nccl-heartbeat=900\nroot:$secret:19000:0:::\n' >'$pol'; chmod 600 '$pol'"
remote_bad "a root-only file that is not a policy" "$pol:2: not key=value"
[ "$(printf '%s\n%s\n' "$out" "$log" | grep -c -- "$secret")" -eq 0 ]
ok $? "nodes' policy not a policy: its text ($secret) is neither in srun's output nor in any slurmd log" || diag "$out"
on_nodes "rm -f '$pol'"
remote_bad "missing" "conf=$pol: cannot open the policy file: No such file or directory"
on_nodes "printf 'nccl-heartbeat=900\n' >'$pol'; chmod 666 '$pol'"
remote_bad "world-writable" "conf=$pol: writable by group or others"
# Random bytes after one that is not ASCII: random lines may read as
# text (CI's sid once drew a short printable first line: "not key=value").
on_nodes "printf '\200' >'$pol'; head -c 3000 /dev/urandom >>'$pol'; printf '\000' >>'$pol'; chmod 644 '$pol'"
remote_bad "binary junk" "$pol:1: (NUL byte|control or non-ASCII)"
on_nodes "head -c 2000000 /dev/zero | tr '\\0' '#' >'$pol'"
remote_bad "2 MB" "conf=$pol: 2000000 bytes, larger than the 1048576 byte limit"
on_nodes "printf 'nccl-heartbeat=900\n' >'$pol'; chown nobody '$pol'"
remote_bad "owned by nobody" "conf=$pol: owned by uid [0-9]+"

# Good again on the nodes: the next step on the same nodes runs.
on_nodes "printf 'nccl-heartbeat=1300\n' >'$pol'; chown root '$pol'; chmod 644 '$pol'"
out=$(te_srun -t 60 -N3 printenv "$HB" 2>&1 | tr '\n' ' ')
is "$out" "1300 1300 1300 " "the next step on the same nodes runs with the nodes' (good) policy"

done_testing
