#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# trainenv record (pmix/tool_record.c) over a record directory made here
# (TAP): a relaunched job's summary adds up to its wall time and names the
# node left out; a link, a FIFO, junk, another job's record and (as root)
# another user's file are left out and said; (as root) the directories
# are found as the plugin made them: DIR/UID.<hex> when another user made
# DIR/UID (named), another user's DIR refused, a link not followed; usage errors exit 2 with one
# line naming the option; no record exits 1.
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
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
uid=$(id -u)
jd=$tmp/$uid/12
mkdir -p "$jd"

# rec STEP START END FAILED VERDICT|- WHY [JOB]: a record as srun writes it
rec() {
	local ff=null restart=""
	[ "$4" = 1 ] && ff='{"rank":3,"local_rank":1,"node":"n2","how":"signal","value":7,"time":1.5,"ended_by_trainenv":false}'
	[ "$5" != - ] && restart=",\"restart\":{\"verdict\":\"$5\",\"why\":\"$6\"}"
	printf '{"trainenv":"0.9","protocol":7,"job":%s,"step":%s,"start":%s,"end":%s,"settings":{},"failed_tasks":%s,"first_failure":%s,"launch":null,"watchdog":null,"hang_report":null%s}\n' \
		"${7:-12}" "$1" "$2" "$3" "$4" "$ff" "$restart"
}

rec 0 1700000000 1700000100 1 relaunch "relaunch: node n2 failed: signal 7; the step starts again in this allocation without n2, on 3 nodes" >"$jd/trainenv.0.json"
rec 1 1700000112 1700000200 0 - "" >"$jd/trainenv.1.json"
out=$("$tool" record 12 --dir "$tmp" 2>"$tmp/err")
rc=$?
check $((rc != 0)) "a relaunched job: exit 0" "rc $rc: $(cat "$tmp/err")"
want="job 12: 2 steps (1 failed), 1 relaunch (without n2), 0 requeues, 0 stops; wall 200.000 s = training 188.000 s + initialisation 0.000 s + lost 12.000 s + other 0.000 s; training 94% of the wall time"
line1=$(printf '%s\n' "$out" | head -n 1)
check "$([ "$line1" = "$want" ] && echo 0 || echo 1)" "the job's line adds up to the wall time" "$line1"
check "$(printf '%s\n' "$out" | grep -qx "failure of step 0 (relaunch without n2): 12.000 s from its end to step 1's start, 12.000 s to its launch barrier's pass (not recorded: its start)" && echo 0 || echo 1)" \
	"the failure's line" "$out"
check "$(printf '%s\n' "$out" | grep -q '^note: 2 of 2 steps do not record' && echo 0 || echo 1)" "a note on the missing launch times" "$out"
check "$([ ! -s "$tmp/err" ] && echo 0 || echo 1)" "nothing left out: nothing on stderr" "$(cat "$tmp/err")"

# what is left out
ln -s "$jd/trainenv.0.json" "$jd/trainenv.7.json"
mkfifo "$jd/trainenv.8.json"
echo '{"trainenv":' >"$jd/trainenv.9.json"
rec 10 1700000300 1700000400 0 - "" 13 >"$jd/trainenv.10.json"
rec 11 1700000300 1700000400 0 - "" >"$jd/trainenv.11.hang.json"
if [ "$uid" = 0 ]; then
	rec 12 1700000300 1700000400 0 - "" >"$jd/trainenv.12.json"
	chown 1001 "$jd/trainenv.12.json"
fi
out2=$(timeout 20 "$tool" record 12 --dir "$tmp" 2>"$tmp/err")
rc=$?
check "$rc" "left-out files: still exit 0" "rc $rc: $(cat "$tmp/err")"
check "$([ "$(printf '%s\n' "$out2" | head -n 1)" = "$want" ] && echo 0 || echo 1)" \
	"the same summary: nothing left out counted" "$out2"
check "$(grep -q 'trainenv.9.json left out: not JSON' "$tmp/err" && echo 0 || echo 1)" "the junk named" "$(cat "$tmp/err")"
notyours=0
[ "$uid" = 0 ] && notyours=1
check "$(grep -q "2 records read; left out: 1 not step records, 1 of another job, $notyours not yours, 2 not regular files or links" "$tmp/err" && echo 0 || echo 1)" \
	"what was left out is counted" "$(cat "$tmp/err")"

# the directories held to the plugin's rules (core/report/dumpdir.h)
if [ "$uid" = 0 ] && getent passwd nobody >/dev/null; then
	nb=$(id -u nobody)
	# DIR/UID made first by another user: the plugin wrote to DIR/UID.<hex>
	sq=$tmp/sq
	mkdir -m 1777 "$sq"
	mkdir -p "$sq/$uid/12" "$sq/$uid.0123456789ab/12"
	chmod 700 "$sq/$uid.0123456789ab" "$sq/$uid.0123456789ab/12"
	cp "$jd"/trainenv.0.json "$jd"/trainenv.1.json "$sq/$uid.0123456789ab/12/"
	rec 5 1700000000 1700000001 0 - "" >"$sq/$uid/12/trainenv.5.json"
	chown -R "$nb" "$sq/$uid"
	out3=$("$tool" record 12 --dir "$sq" 2>"$tmp/err")
	rc=$?
	check "$([ $rc = 0 ] && [ "$(printf '%s\n' "$out3" | head -n 1)" = "$want" ] && echo 0 || echo 1)" \
		"DIR/UID another user's: the records in the user's DIR/UID.<hex> are read" "rc $rc: $out3 $(cat "$tmp/err")"
	check "$(grep -q "note: $sq/$uid belongs to uid $nb, not to the job's user (uid $uid): someone else made it; using $sq/$uid.0123456789ab" "$tmp/err" && echo 0 || echo 1)" \
		"... and the squatter is named" "$(cat "$tmp/err")"
	# DIR another user's, writable by all, not sticky: refused
	bad=$tmp/bad
	mkdir -m 777 "$bad"
	cp -r "$tmp/$uid" "$bad/"
	chown "$nb" "$bad"
	chmod 777 "$bad"
	"$tool" record 12 --dir "$bad" >/dev/null 2>"$tmp/err"
	rc=$?
	check "$([ $rc = 2 ] && grep -q "$bad belongs to uid $nb, neither root nor the job's user" "$tmp/err" && echo 0 || echo 1)" \
		"DIR of another user: refused (exit 2), said" "rc $rc: $(cat "$tmp/err")"
	# DIR/UID/JOBID a link: not followed
	ln=$tmp/ln
	mkdir -p -m 700 "$ln/$uid"
	ln -s "$jd" "$ln/$uid/12"
	"$tool" record 12 --dir "$ln" >/dev/null 2>"$tmp/err"
	rc=$?
	check "$([ $rc != 0 ] && grep -q "$ln/$uid/12 is a symbolic link" "$tmp/err" && echo 0 || echo 1)" \
		"DIR/UID/JOBID a link: not followed, said" "rc $rc: $(cat "$tmp/err")"
else
	for k in 1 2 3 4; do
		echo "ok $((n + k)) # SKIP not root or no user nobody: another user's directories cannot be made"
	done
	n=$((n + 4))
fi

# usage
"$tool" record --dir "$tmp" 2>"$tmp/err"
rc=$?
check "$([ $rc = 2 ] && grep -q 'no JOBID' "$tmp/err" && echo 0 || echo 1)" "no JOBID: exit 2, said" "rc $rc: $(cat "$tmp/err")"
"$tool" record 12 2>"$tmp/err"
rc=$?
check "$([ $rc = 2 ] && grep -q -- '--dir DIR is needed' "$tmp/err" && echo 0 || echo 1)" "no --dir: exit 2, said" "rc $rc: $(cat "$tmp/err")"
"$tool" record 12 --dir "$tmp" --jsn 2>"$tmp/err"
rc=$?
check "$([ $rc = 2 ] && grep -q "unknown option.*'--jsn'" "$tmp/err" && echo 0 || echo 1)" "an unknown option named: exit 2" "rc $rc: $(cat "$tmp/err")"
"$tool" record 0 --dir "$tmp" 2>"$tmp/err"
rc=$?
check "$([ $rc = 2 ] && grep -q "JOBID is a job id (1 to 4294967295), not '0'" "$tmp/err" && echo 0 || echo 1)" "a bad JOBID: exit 2, the range said" "rc $rc: $(cat "$tmp/err")"
"$tool" record 99 --dir "$tmp" 2>"$tmp/err"
rc=$?
check "$([ $rc = 1 ] && echo 0 || echo 1)" "no record of the job: exit 1" "rc $rc: $(cat "$tmp/err")"
"$tool" record --help | grep -q 'wall = training + initialisation + lost + other'
check $? "--help prints the formula"
echo "1..$n"
[ "$failed" = 0 ]
