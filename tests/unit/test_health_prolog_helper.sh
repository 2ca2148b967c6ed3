#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# trainenv-health --prolog (pmix/tool_health_prolog.c), the job prolog's
# helper, run as root over a stand-in sysfs tree and the stand-in NVML
# (TAP): a job with no GPU on the node never fails for other users'
# processes on the node's GPUs, a job with GPUs does; a node with many
# failures still leaves its verdict, with the lines it prints bounded; a
# passing run removes an earlier job's verdict under the same id; the
# verdict is root's, mode 0644, in 0755 directories; --step (the user's
# own checks, run as the user) prints its lines and never drains or
# writes a verdict. The real cluster:
# tests/integration/t97_health_prolog.sh.
# Environment: TE_BUILDDIR (default: the current directory).
set -u
build=${TE_BUILDDIR:-$PWD}
src=${TE_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd -P)}
helper=$build/trainenv-health
fake=$build/tests/unit/.libs/libfakenvml.so

# shellcheck source-path=SCRIPTDIR source=../lib/unit_check.sh
. "$src/tests/lib/unit_check.sh"

if [ ! -x "$helper" ] || [ ! -f "$fake" ]; then
	echo "1..0 # SKIP $helper or $fake is not built"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "1..0 # SKIP needs root (the verdict is root's, under /run/trainenv/health)"
	exit 0
fi
tmp=$(mktemp -d)
job=$((900000000 + $$))
node=unit$$
verdict=/run/trainenv/health/job.$job.$node
trap 'rm -rf "$tmp"; rm -f "$verdict" /run/trainenv/health/job.$job.$node.*; kill "$holder" 2>/dev/null' EXIT
# shellcheck source-path=SCRIPTDIR source=../lib/sysfs_standin.sh
. "$src/tests/lib/sysfs_standin.sh"
mkdir -p "$tmp/nvml"
ln -s "$fake" "$tmp/nvml/libnvidia-ml.so.1"
sleep 60 &
holder=$!
for _ in $(seq 1 50); do
	[ "$(cat "/proc/$holder/comm" 2>/dev/null)" = sleep ] && break
	sleep 0.1
done
printf '* gpus 2\n* proc 1 %s 2048\n' "$holder" >"$tmp/nvml.conf"
gpu_site="health=gpu health_gpu_action=exclude health_nvml=$tmp/nvml/libnvidia-ml.so.1"

run() { # SITE ARGS...: output in $out, status in $rc
	local site=$1
	shift
	out=$(TE_FAKE_NVML_CONF=$tmp/nvml.conf "$helper" --prolog --job "$job" \
		--allow-uid 4242 --node "$node" --site "$site" "$@" 2>&1)
	rc=$?
}

run "$gpu_site"
check "$rc" "a job with no GPU here, another user's process on GPU 1: passes (exit 0)" "$out"
check "$( [ ! -e "$verdict" ]; echo $?)" "... no verdict" "$out"
run "$gpu_site" --gpus 0,1
check "$((rc != 1))" "the same job given GPUs 0,1: kept out (exit 1)" "rc=$rc $out"
check "$(printf '%s\n' "$out" | grep -q "gpu 1 memory held by pid $holder .*not of this job (fail: exclude)"; echo $?)" \
	"... naming the GPU, the process and the action" "$out"
check "$( [ -f "$verdict" ] && [ "$(stat -c '%u %a' "$verdict")" = "0 644" ]; echo $?)" \
	"... its verdict is root's, mode 0644" "$(stat -c '%u %a' "$verdict" 2>&1)"
check "$( [ "$(stat -c '%u %a' /run/trainenv/health)" = "0 755" ]; echo $?)" \
	"... in root's 0755 directory" "$(stat -c '%u %a' /run/trainenv/health)"

# a passing run under the same id removes the earlier verdict
run "$gpu_site"
check "$rc" "a passing run under the same job id: exit 0" "$out"
check "$( [ ! -e "$verdict" ]; echo $?)" "... and the earlier verdict is gone" "$(ls -l "$verdict" 2>&1)"

# 64 ports down: the lines are bounded, the verdict is whole
for i in $(seq 0 63); do sysfs_ib_port "$tmp/sys/$node" "mlx5_$i" 1 "1: DOWN"; done
run "health=ib health_ib_action=exclude health_test_root=$tmp/sys/%n"
check "$((rc != 1))" "64 ports down: kept out (exit 1)" "rc=$rc"
check "$( [ "$(printf '%s\n' "$out" | grep -c '(fail: exclude)')" -le 8 ]; echo $?)" \
	"... at most 8 failure lines printed" "$out"
check "$(printf '%s\n' "$out" | grep -q "more not shown"; echo $?)" "... and a count of the others" "$out"
check "$(grep -q '^exclude ib mlx5_[0-9]* port 1 state DOWN (want ACTIVE)$' "$verdict" &&
	[ "$(wc -l <"$verdict")" -le 18 ]; echo $?)" \
	"... the verdict is written, whole and bounded (16 failure lines)" "$(cat "$verdict" 2>&1)"
check "$( [ -z "$(ls /run/trainenv/health/ | grep "^job\.$job\.$node\.")" ]; echo $?)" \
	"... no temporary file left" "$(ls /run/trainenv/health/)"

# --step: the user's checks, as the user (nobody here), printed for the
# task; nothing drained, no verdict written
rm -f "$verdict"
sysfs_ib_port "$tmp/sys/$node" mlx5_0 1 "4: ACTIVE"
for i in $(seq 1 63); do rm -rf "$tmp/sys/$node/class/infiniband/mlx5_$i"; done
sysfs_ib_port "$tmp/sys/$node" mlx5_1 1 "1: DOWN"
chmod -R a+rX "$tmp"
step() { # SITE USER: output in $out, status in $rc
	out=$(cd / && setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$helper" --step --node "$node" --site "$1" --user "$2" 2>&1)
	rc=$?
}
step "health_test_root=$tmp/sys/%n" "ib;ib_action=exclude"
check "$((rc != 1))" "--step as nobody, a port down, the user's exclude: exit 1" "rc=$rc $out"
is_line() { printf '%s\n' "$out" | grep -qx -- "$1"; echo $?; }
check "$(is_line "exclude ib mlx5_1 port 1 state DOWN (want ACTIVE)")" \
	"... one line 'exclude TEXT' naming the port" "$out"
check "$( [ ! -e "$verdict" ]; echo $?)" "... and no verdict written" "$(ls -l "$verdict" 2>&1)"
step "health=ib health_test_root=$tmp/sys/%n" "ib_rate=400"
check "$rc" "--step: a stricter rate, action warn: exit 0" "rc=$rc $out"
check "$(printf '%s\n' "$out" | grep -q '^warn ib mlx5_0 port 1 rate 200 Gb/s (want at least 400 Gb/s)$'; echo $?)" \
	"... with a warn line" "$out"
step "health=ib health_ib_action=drain health_test_root=$tmp/sys/%n" "ib_rate=100"
check "$((rc != 1))" "--step under the site's drain: kept out of the step (exit 1), never drained" "rc=$rc $out"
check "$(is_line "exclude ib mlx5_1 port 1 state DOWN (want ACTIVE)")" "... the line says exclude" "$out"
step "health=ib health_ib_action=exclude health_test_root=$tmp/sys/%n" "ib_action=warn"
check "$((rc != 2))" "--step: a user's text weaker than the site's: refused (exit 2)" "rc=$rc $out"
step "health=gpu,hook health_hook=/bin/false health_xid=on health_test_root=$tmp/sys/%n" "eth=lo:1"
check "$( [ "$rc" -ne 1 ] && ! printf '%s\n' "$out" | grep -q 'hook\|xid'; echo $?)" \
	"--step runs only what the user touched: no hook, no XIDs (root's)" "rc=$rc $out"
step "health=ib health_test_root=$tmp/sys/%n" ""
check "$( [ "$rc" = 0 ] && [ -z "$out" ]; echo $?)" \
	"--step with an empty --user: nothing of the user's to check (exit 0, silent)" "rc=$rc $out"
echo "1..$n"
[ "$failed" = 0 ]
