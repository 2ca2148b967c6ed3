#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# trainenv health's site hook (health_hook=PATH, core/health/
# health_hook_run.c) with real hook scripts made here, root-owned (TAP):
# one that passes, one that fails (its first line the reason, also in
# --json), one that hangs (the tool back at the bound, none of its
# processes left), one that writes 1 MiB of junk with control bytes, one
# that is group-writable (refused, not run), a path that does not exist,
# and the hook beside the ib check. Needs root (the hook must be root's).
# Environment: TE_BUILDDIR (default: the current directory, where
# make check-unit runs it).
set -u
build=${TE_BUILDDIR:-$PWD}
src=${TE_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd -P)}
tool=$build/trainenv

# shellcheck source-path=SCRIPTDIR source=../lib/unit_check.sh
. "$src/tests/lib/unit_check.sh"

if [ ! -x "$tool" ]; then
	echo "1..0 # SKIP $tool is not built"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "1..0 # SKIP not root: a hook must be a root-owned file"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 700 "$tmp"

hook() { # NAME MODE BODY: a hook script in $tmp; its path
	printf '#!/bin/sh\n%s\n' "$3" >"$tmp/$1"
	chmod "$2" "$tmp/$1"
	echo "$tmp/$1"
}
run() { # ARGS...: the tool's output in $out, its status in $rc
	out=$("$tool" health health=none "$@" 2>&1)
	rc=$?
}

p=$(hook pass.sh 755 'echo "scratch 12% used"; exit 0')
run "health_hook=$p"
check $((rc != 0)) "a hook that exits 0: exit 0" "rc=$rc $out"
check "$(printf '%s\n' "$out" | grep -qx ".* hook  *pass  *hook: $p: scratch 12% used"; echo $?)" \
	"... its line passes with its first line" "$out"
check "$(printf '%s\n' "$out" | grep -c ' hook ' | grep -qx 1; echo $?)" \
	"... one line, health=none leaves the hook alone running" "$out"

p=$(hook fail.sh 755 'echo "disk /scratch 98% full"; echo "second line"; exit 2')
run "health_hook=$p"
check $((rc != 1)) "a hook that exits 2: exit 1" "rc=$rc $out"
check "$(printf '%s\n' "$out" | grep -qx ".* hook  *fail  *hook: $p: disk /scratch 98% full"; echo $?)" \
	"... its first line is the reason" "$out"
check "$(printf '%s\n' "$out" | grep -q 'second line'; echo $((!$?)))" \
	"... and only its first" "$out"
json=$("$tool" health --json health=none "health_hook=$p" 2>&1)
py=$(printf '%s' "$json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
r = d["results"][0]
print(d["ok"], d["failed"], r["check"], r["verdict"], r["value"], r["device"] == sys.argv[1])' "$p" 2>&1)
check "$([ "$py" = "False 1 hook fail exit 2 True" ]; echo $?)" \
	"... --json: check hook, fail, value 'exit 2', the path as device" "$py
$json"

# A hook that hangs, and a process it started: the tool returns at the
# bound (2 s) and the runner's kill takes both (they stay in the check's
# process group). The marker names them for pgrep (the script run by
# sh, and the sh it started; not the tool, whose arguments hold the path).
marker=te-hook-hang-$$-$RANDOM
p=$(hook "hang-$marker.sh" 755 "sh -c 'sleep 600; true $marker' &
sleep 600")
procs="sh $p|true $marker"
start=$(date +%s%N)
"$tool" health health=none health_timeout=2 "health_hook=$p" >"$tmp/hang.out" 2>&1 &
tool_pid=$!
seen=1
for _ in $(seq 40); do # the marker finds the hook while it runs
	[ "$(pgrep -fc "$procs")" = 2 ] && { seen=0; break; }
	sleep 0.05
done
check "$seen" "a hook that hangs: its two processes are there while it runs" "$(pgrep -af "$procs")"
wait "$tool_pid"
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
out=$(cat "$tmp/hang.out")
check $((rc != 1 || ms > 4000)) "... the tool is back at the bound: exit 1 in $ms ms (at most 4000)" "rc=$rc $out"
check "$(printf '%s\n' "$out" | grep -q 'hook  *error  *hook: no answer within 2000 ms'; echo $?)" \
	"... saying the hook gave no answer in time" "$out"
left=
for _ in $(seq 40); do # at most 2 s for the kill to land
	left=$(pgrep -af "$procs")
	[ -z "$left" ] && break
	sleep 0.05
done
check "$([ -z "$left" ]; echo $?)" "... and none of its processes is left" "$left"

p=$(hook junk.sh 755 "printf 'bad\\001\\033[31m\\000x\\n'
head -c 1048576 /dev/urandom
exit 1")
start=$(date +%s%N)
run "health_hook=$p"
ms=$((($(date +%s%N) - start) / 1000000))
check $((rc != 1)) "a hook writing 1 MiB of junk: exit 1 ($ms ms)" "rc=$rc"
check "$(printf '%s\n' "$out" | LC_ALL=C grep -c '[^[:print:]]' | grep -qx 0; echo $?)" \
	"... the output is printable" "$(printf '%s' "$out" | od -c | head -5)"
check "$(printf '%s\n' "$out" | grep -qF "hook: $p: bad??[31m?x"; echo $?)" \
	"... its first line cleaned, control bytes and NUL as '?'" "$out"
check "$(printf '%s\n' "$out" | grep -c ' hook ' | grep -qx 1; echo $?)" "... on one line" "$out"

p=$(hook gw.sh 775 "touch '$tmp/gw.ran'")
run "health_hook=$p"
check $((rc != 1)) "a group-writable hook: exit 1" "rc=$rc $out"
check "$(printf '%s\n' "$out" | grep -q "hook  *error  *hook: $p is not root-owned and writable by root alone (uid 0, mode 0775): not run"; echo $?)" \
	"... one line saying why" "$out"
check "$([ ! -e "$tmp/gw.ran" ]; echo $?)" "... and it did not run"

run "health_hook=$tmp/nothere.sh"
check $((rc != 1)) "a hook that does not exist: exit 1" "rc=$rc $out"
check "$(printf '%s\n' "$out" | grep -q "hook  *error  *hook: $tmp/nothere.sh cannot be found (No such file or directory): not run"; echo $?)" \
	"... one line saying so" "$out"

run health_hook=relative/check.sh
check $((rc != 2)) "a relative health_hook: exit 2" "rc=$rc $out"
check "$(printf '%s\n' "$out" | grep -q "health_hook: invalid value 'relative/check.sh'; accepted: an absolute path"; echo $?)" \
	"... naming the key and what is accepted" "$out"

# the hook beside another check
# shellcheck source-path=SCRIPTDIR source=../lib/sysfs_standin.sh
. "$src/tests/lib/sysfs_standin.sh"
sysfs_ib_port "$tmp/sys" mlx5_0 1 "4: ACTIVE" "5: LinkUp" "200 Gb/sec (4X HDR)"
out=$("$tool" health --sysfs-root "$tmp/sys" health=ib "health_hook=$tmp/pass.sh" 2>&1)
rc=$?
check "$([ $rc = 0 ] && printf '%s\n' "$out" | grep -q ' ib  *pass ' &&
	printf '%s\n' "$out" | grep -q ' hook  *pass '; echo $?)" \
	"health=ib with a hook: both run and pass" "rc=$rc $out"

out=$("$tool" health --help 2>&1)
check "$(printf '%s\n' "$out" | grep -q 'health_hook=PATH'; echo $?)" "--help names health_hook=" "$out"
echo "1..$n"
