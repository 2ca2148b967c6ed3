#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# trainenv nodes (pmix/tool_nodes.c) over record directories made here
# (TAP), files chowned to uids 1001-1003: a node that was the first failure
# of jobs of 3 users is named (line, --exclude-list, --json, exit 1) and
# the options move the threshold; one user's forged records (many jobs,
# many steps of one job, another user's directory, a user field) never
# implicate a node; links, a FIFO, a huge file, junk, deep nesting and an
# end in the future are left out and said; only the newest 10000 files by
# mtime are read; usage errors exit 2 with one line naming the option.
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
	echo "1..0 # SKIP needs root to give records to uids 1001-1003"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
now=$(date +%s)

# rec DIR UID JOB STEP END FAILNODE|- LAUNCHFIRST|- LAUNCHLAST [OWNER]
# writes DIR/UID/JOB/trainenv.STEP.json as srun does, owned by OWNER
# (default UID), mtime END.
rec() {
	local d=$1/$2/$3 f ff=null launch=null owner=${9:-$2}
	mkdir -p "$d"
	f=$d/trainenv.$4.json
	[ "$6" != - ] && ff="{\"rank\":3,\"local_rank\":1,\"node\":\"$6\",\"how\":\"signal\",\"value\":7,\"time\":$(($5 - 5)).000010,\"ended_by_trainenv\":false}"
	[ "$7" != - ] && launch="{\"ranks\":8,\"nodes\":2,\"first_node\":\"$7\",\"last_node\":\"$8\",\"skew_ms\":3}"
	printf '{"trainenv":"0.9","protocol":3,"job":%s,"step":%s,"start":%s,"end":%s,"settings":{},"failed_tasks":%s,"first_failure":%s,"launch":%s,"watchdog":null,"hang_report":null}\n' \
		"$3" "$4" $(($5 - 60)) "$5" "$([ "$6" = - ] && echo 0 || echo 1)" "$ff" "$launch" >"$f"
	chown "$owner" "$1/$2" "$d" "$f"
	touch -d "@$5" "$f"
}

run() { # DIR ARGS...: out, err, rc
	out=$(timeout 20 "$tool" nodes "$@" 2>"$tmp/err")
	rc=$?
	err=$(cat "$tmp/err")
}

# --- three users' first failures on n17, among its 10 newest jobs
d=$tmp/three
rec "$d" 1001 101 0 $((now - 1000)) n17 n17 n2
rec "$d" 1002 102 0 $((now - 900)) n17 n1 n17
rec "$d" 1003 103 0 $((now - 800)) n17 n17 n3
rec "$d" 1001 104 0 $((now - 700)) n17 n17 n2
for j in 105 106 107 108 109 110; do
	rec "$d" 1002 $j 0 $((now - 700 + j)) - n17 n2
done
run "$d"
check $((rc != 1)) "three users' failures on n17: exit 1" "rc=$rc $out $err"
check "$([ "$out" = "n17: first failure in 4 of the last 10 jobs on it, 3 users" ]; echo $?)" \
	"... the line names n17, 4 of 10 jobs, 3 users (and no other node)" "$out"
check "$(printf '%s' "$err" | grep -q '^trainenv nodes: 10 records read (10 jobs); left out: 0 links'; echo $?)" \
	"... stderr: 10 records read, nothing left out" "$err"
run --exclude-list "$d"
check "$([ "$rc" = 1 ] && [ "$out" = n17 ]; echo $?)" "--exclude-list: just n17, exit 1" "rc=$rc $out"
run --json "$d"
py=$(printf '%s' "$out" | python3 -c '
import json, sys
j = json.load(sys.stdin)
n = j["nodes"]
print(len(n), n[0]["node"], n[0]["failures"], n[0]["jobs"], n[0]["users"], j["records"], j["min_users"], j["last"])' 2>&1)
check "$([ "$rc" = 1 ] && [ "$py" = "1 n17 4 10 3 10 2 10" ]; echo $?)" \
	"--json: valid, n17 with 4 failures in 10 jobs of 3 users" "rc=$rc $py $out"
run --min-users 4 "$d"
check "$([ "$rc" = 0 ] && [ -z "$out" ]; echo $?)" "--min-users 4: none (3 users), exit 0" "rc=$rc $out"
run --min-users=3 "$d"
check $((rc != 1)) "--min-users=3: n17 still" "rc=$rc $out"
run --min-failures 5 "$d"
check "$([ "$rc" = 0 ] && [ -z "$out" ]; echo $?)" "--min-failures 5: none (4 failures)" "rc=$rc $out"
run --last 6 "$d"
check "$([ "$rc" = 0 ] && [ -z "$out" ]; echo $?)" "--last 6: none (its 6 newest jobs ran clean)" "rc=$rc $out"
run --last 8 "$d"
check "$([ "$rc" = 1 ] && [ "$out" = "n17: first failure in 2 of the last 8 jobs on it, 2 users" ]; echo $?)" \
	"--last 8: 2 failures of 2 users among its 8 newest" "rc=$rc $out"

# --- one user's forged records
d=$tmp/forged
for j in $(seq 200 229); do
	rec "$d" 1001 "$j" 0 $((now - 2000 + j)) n5 - -
done
# a user field, and 1001's files in a directory named 1002, 1003
sed -i 's/"job"/"user":1002,"uid":1002,"job"/' "$d"/1001/2*/trainenv.0.json
rec "$d" 1002 231 0 $((now - 100)) n5 - - 1001
rec "$d" 1003 232 0 $((now - 90)) n5 - - 1001
# one job of 1001 in 20 step records, the same job id of 1002 once
for s in $(seq 0 19); do
	rec "$d" 1001 300 "$s" $((now - 50 + s)) n6 - -
done
rec "$d" 1002 300 0 $((now - 40)) n6 - -
run "$d"
check "$([ "$rc" = 1 ] && [ "$out" = "n6: first failure in 2 of the last 2 jobs on it, 2 users" ]; echo $?)" \
	"forged: n5 (one owner's 32 records) not named; n6 counts (300, 1001) once" "rc=$rc $out"
run --min-users 1 "$d"
check "$(printf '%s\n' "$out" | grep -qx 'n5: first failure in 10 of the last 10 jobs on it, 1 user'; echo $?)" \
	"... --min-users 1: n5 with 1 user (its owner, not the user field or the directory's name)" "$out"
check "$(printf '%s\n' "$out" | head -1 | grep -q '^n6:'; echo $?)" \
	"... worst first: n6 (2 users) before n5 (1 user)" "$out"
run --min-users 1 --min-failures 3 "$d"
check "$([ "$out" = "n5: first failure in 10 of the last 10 jobs on it, 1 user" ]; echo $?)" \
	"... --min-failures 3: n6 (2 failures, not 21) gone" "$out"

# --- hostile files: 1001 and 1002 fail on n17 for real, 1003 only tries
d=$tmp/hostile
rec "$d" 1001 101 0 $((now - 1000)) n17 - -
rec "$d" 1002 102 0 $((now - 900)) n17 - -
rec "$tmp/elsewhere" 1003 103 0 $((now - 800)) n17 - -
mkdir -p "$d/1003/103" "$d/1003/104"
chown 1003 "$d/1003" "$d/1003/103" "$d/1003/104"
ln -s "$tmp/elsewhere/1003/103/trainenv.0.json" "$d/1003/103/trainenv.0.json"
ln -s "$tmp/elsewhere/1003/103" "$d/1003/105"
ln -s "$tmp/elsewhere/1003" "$d/1004"
mkfifo "$d/1003/104/trainenv.1.json"
{
	printf '{"trainenv":"0.9","job":106,"end":%s,"first_failure":{"node":"n17"}}' $((now - 10))
	head -c 300000 /dev/zero | tr '\0' ' '
} >"$d/1003/104/trainenv.2.json"
head -c 5000 /dev/urandom >"$d/1003/104/trainenv.3.json"
head -c 100000 /dev/zero | tr '\0' '[' >"$d/1003/104/trainenv.4.json"
printf '{"trainenv":"0.9","job":107,"end":%s,"first_failure":{"node":"n17"}}' $((now + 90000)) \
	>"$d/1003/104/trainenv.5.json"
printf '{"trainenv":"0.9","job":108,"end":%s,"first_failure":{"node":"n17;reboot"}}' $((now - 5)) \
	>"$d/1003/104/trainenv.6.json"
chown -h 1003 "$d"/1003/*/* "$d/1003/105" "$d/1004"
run --min-users 3 "$d"
check "$([ "$rc" = 0 ] && [ -z "$out" ]; echo $?)" \
	"hostile: --min-users 3 finds none: 1003's link, FIFO, huge, junk, deep, future and bad-name records not counted" "rc=$rc $out $err"
run "$d"
check "$([ "$rc" = 1 ] && [ "$out" = "n17: first failure in 2 of the last 2 jobs on it, 2 users" ]; echo $?)" \
	"... the real failures of 1001 and 1002 still name n17" "rc=$rc $out"
for want in "2 records read" "3 links" "1 not regular files" "1 over 262144 bytes" \
	"3 not step records" "1 ending in the future"; do
	check "$(printf '%s' "$err" | grep -q "$want"; echo $?)" "... stderr says: $want" "$err"
done
# control: the same record of 1003 as a file of its own counts
cp "$tmp/elsewhere/1003/103/trainenv.0.json" "$d/1003/104/trainenv.7.json"
chown 1003 "$d/1003/104/trainenv.7.json"
run --min-users 3 "$d"
check "$([ "$rc" = 1 ] && [ "$out" = "n17: first failure in 3 of the last 3 jobs on it, 3 users" ]; echo $?)" \
	"... control: 1003's record as a regular file of its own makes 3 users" "rc=$rc $out $err"

# --- only the newest 10000 files by mtime
d=$tmp/many
python3 - "$d" "$now" <<'EOF'
import os, sys
d, now = sys.argv[1], int(sys.argv[2])
def rec(uid, job, end, fail, mtime):
    p = f"{d}/{uid}/{job}"
    os.makedirs(p, exist_ok=True)
    ff = "null" if not fail else '{"node":"%s","time":%d}' % (fail, end - 5)
    f = f"{p}/trainenv.0.json"
    with open(f, "w") as o:
        o.write('{"trainenv":"0.9","job":%d,"end":%d,"first_failure":%s,'
                '"launch":{"first_node":"n9","last_node":"n9"}}' % (job, end, ff))
    for x in (f"{d}/{uid}", p, f):
        os.chown(x, uid, -1)
    os.utime(f, (mtime, mtime))
for j in range(10000):
    rec(1002, 1000 + j, now - 5000, None, now - 100)
# newer ends, older files: read only if past the newest 10000
rec(1001, 50, now - 10, "n9", now - 10000)
rec(1003, 51, now - 10, "n9", now - 10000)
EOF
run "$d"
check "$([ "$rc" = 0 ] && [ -z "$out" ]; echo $?)" \
	"10,002 files: the 2 oldest by mtime are not read (n9 not named)" "rc=$rc $out $err"
check "$(printf '%s' "$err" | grep -q "10000 records read.*2 older than the newest 10000"; echo $?)" \
	"... stderr: 10000 read, 2 older left out" "$err"
touch "$d"/1001/50/trainenv.0.json "$d"/1003/51/trainenv.0.json
run "$d"
check "$([ "$rc" = 1 ] && [ "$out" = "n9: first failure in 2 of the last 10 jobs on it, 2 users" ]; echo $?)" \
	"... control: the same 2 made newest: n9 named" "rc=$rc $out $err"

# --- usage
run
check "$([ "$rc" = 2 ] && [ "$err" = "trainenv nodes: no DIR (the record directory; see --help)" ]; echo $?)" \
	"no DIR: exit 2, one line" "rc=$rc $err"
run --min-users 0 "$tmp/three"
check "$([ "$rc" = 2 ] && [ "$err" = "trainenv nodes: --min-users: '0' is not a number from 1 to 100000" ]; echo $?)" \
	"--min-users 0: exit 2 naming the option and its range" "rc=$rc $err"
run --last 1001 "$tmp/three"
check "$([ "$rc" = 2 ] && [ "$err" = "trainenv nodes: --last: '1001' is not a number from 1 to 1000" ]; echo $?)" \
	"--last 1001: exit 2" "rc=$rc $err"
run --min-failures x "$tmp/three"
check "$([ "$rc" = 2 ] && [ "$err" = "trainenv nodes: --min-failures: 'x' is not a number from 1 to 1000" ]; echo $?)" \
	"--min-failures x: exit 2" "rc=$rc $err"
run "$tmp/three" --last
check "$([ "$rc" = 2 ] && [ "$err" = "trainenv nodes: --last needs a number (1 to 1000)" ]; echo $?)" \
	"--last without a value: exit 2" "rc=$rc $err"
run --bogus "$tmp/three"
check "$([ "$rc" = 2 ] && printf '%s' "$err" | grep -q "^trainenv nodes: unknown option '--bogus' (one DIR; options --json, --exclude-list"; echo $?)" \
	"an unknown option: exit 2 listing the options" "rc=$rc $err"
run "$tmp/three" "$tmp/forged"
check "$([ "$rc" = 2 ] && printf '%s' "$err" | grep -q "a second directory"; echo $?)" \
	"two directories: exit 2" "rc=$rc $err"
run --json --exclude-list "$tmp/three"
check "$([ "$rc" = 2 ] && printf '%s' "$err" | grep -q -- "--json and --exclude-list: one or the other"; echo $?)" \
	"--json with --exclude-list: exit 2" "rc=$rc $err"
run "$tmp/none"
check "$([ "$rc" = 2 ] && [ "$err" = "trainenv nodes: $tmp/none: No such file or directory" ]; echo $?)" \
	"a missing DIR: exit 2 naming it" "rc=$rc $err"
mkdir "$tmp/empty"
run "$tmp/empty"
check "$([ "$rc" = 0 ] && [ -z "$out" ]; echo $?)" "an empty DIR: exit 0, nothing printed" "rc=$rc $out"
run --help
check "$([ "$rc" = 0 ] && printf '%s' "$out" | grep -q '^usage: trainenv nodes'; echo $?)" "--help: usage, exit 0" "rc=$rc $out"
out=$("$tool" --help)
check "$(printf '%s' "$out" | grep -q '^  nodes '; echo $?)" "trainenv --help lists nodes" "$out"

echo "1..$n"
exit $((failed > 0))
