#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# trainenv health (pmix/tool_health.c) over stand-in sysfs trees made here
# (TAP): a healthy node exits 0, a port down or slow, an interface down
# or missing exit 1 with the line naming device and value, --json parses
# and says the same, a bad key or option exits 2 naming what is accepted.
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

port() { # ROOT DEV PORT STATE PHYS RATE
	local d=$1/class/infiniband/$2/ports/$3
	mkdir -p "$d"
	printf '%s\n' "$4" >"$d/state"
	printf '%s\n' "$5" >"$d/phys_state"
	printf '%s\n' "$6" >"$d/rate"
}
iface() { # ROOT IF OPERSTATE [SPEED]
	mkdir -p "$1/class/net/$2"
	printf '%s\n' "$3" >"$1/class/net/$2/operstate"
	[ -n "${4:-}" ] && printf '%s\n' "$4" >"$1/class/net/$2/speed"
	return 0
}

good=$tmp/good
port "$good" mlx5_0 1 "4: ACTIVE" "5: LinkUp" "200 Gb/sec (4X HDR)"
port "$good" mlx5_1 1 "4: ACTIVE" "5: LinkUp" "400 Gb/sec (4X NDR)"
iface "$good" eth0 up 25000

out=$("$tool" health --sysfs-root "$good" health_ib_rate=200 health_eth=eth0:25000 2>&1)
rc=$?
check $((rc != 0)) "a healthy stand-in node: exit 0" "rc=$rc $out"
check "$(printf '%s\n' "$out" | grep -c ' pass ' | grep -qx 3; echo $?)" \
	"... one pass line per port and interface" "$out"
check "$(printf '%s\n' "$out" | grep -q 'ib     pass    ib mlx5_0 port 1 ACTIVE LinkUp 200 Gb/s'; echo $?)" \
	"... the port's line names device, state and rate" "$out"
check "$(printf '%s\n' "$out" | head -1 | grep -q '^NODE  *CHECK  *VERDICT  *RESULT$'; echo $?)" \
	"... under a header" "$out"

bad=$tmp/bad
port "$bad" mlx5_0 1 "1: DOWN" "3: Disabled" "200 Gb/sec (4X HDR)"
port "$bad" mlx5_1 1 "4: ACTIVE" "5: LinkUp" "100 Gb/sec (4X EDR)"
iface "$bad" eth0 down
out=$("$tool" health --sysfs-root "$bad" health_ib_rate=200 health_eth=eth0:25000,eth7 2>&1)
rc=$?
check $((rc != 1)) "a port down: exit 1" "rc=$rc $out"
check "$(printf '%s\n' "$out" | grep -q 'ib     fail    ib mlx5_0 port 1 state DOWN (want ACTIVE)'; echo $?)" \
	"... the line names the port and its state" "$out"
check "$(printf '%s\n' "$out" | grep -q 'ib mlx5_1 port 1 rate 100 Gb/s (want at least 200 Gb/s)'; echo $?)" \
	"... a slow port is named with its rate" "$out"
check "$(printf '%s\n' "$out" | grep -q 'eth eth0 operstate down (want up)'; echo $?)" \
	"... an interface down" "$out"
check "$(printf '%s\n' "$out" | grep -q 'eth eth7 no such interface'; echo $?)" \
	"... a missing interface" "$out"

json=$("$tool" health --json --sysfs-root "$bad" health_ib_rate=200 health_eth=eth0 2>&1)
rc=$?
check $((rc != 1)) "--json on the failing node: exit 1" "rc=$rc"
py=$(printf '%s' "$json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
bad = [r["device"] for r in d["results"] if r["verdict"] == "fail"]
print(d["ok"], d["failed"], ",".join(bad))' 2>&1)
check "$([ "$py" = "False 3 mlx5_0 port 1,mlx5_1 port 1,eth0" ]; echo $?)" \
	"... the JSON parses and names the failed devices" "$py
$json"

noib=$tmp/noib
mkdir -p "$noib/class"
out=$("$tool" health --sysfs-root "$noib" 2>&1)
rc=$?
check $((rc != 0)) "a node without InfiniBand or listed interfaces: exit 0" "rc=$rc $out"
check "$(printf '%s\n' "$out" | grep -q 'n/a     ib: not applicable: no InfiniBand device'; echo $?)" \
	"... saying the check does not apply" "$out"

junk=$tmp/junk
port "$junk" mlx5_0 1 "$(printf 'ACT\001IVE')" "5: LinkUp" "fast"
out=$("$tool" health --sysfs-root "$junk" 2>&1)
rc=$?
check $((rc != 1)) "junk in the port's files: exit 1" "rc=$rc $out"
check "$(printf '%s\n' "$out" | grep -qF "state is not 'N: STATE': 'ACT\\x01IVE\\x0a'"; echo $?)" \
	"... quoting the junk on one line" "$out"

out=$("$tool" health --sysfs-root "$good" health=ib,disk 2>&1)
rc=$?
check $((rc != 2)) "an unknown check: exit 2" "rc=$rc $out"
check "$(printf '%s\n' "$out" | grep -q "health: invalid value 'disk'; accepted: a comma-separated list of ib, eth, gpu"; echo $?)" \
	"... naming the key and what is accepted" "$out"
out=$("$tool" health --sysfs-root "$tmp/nothere" 2>&1)
check $(($? != 2)) "--sysfs-root that is not a directory: exit 2" "$out"
out=$("$tool" health --frobnicate 2>&1)
check $(($? != 2)) "an unknown option: exit 2" "$out"
out=$("$tool" health --sysfs-root "$good" health=gpu 2>&1)
rc=$?
check $((rc != 1)) "health=gpu (not built yet): exit 1, never a silent pass" "rc=$rc $out"
out=$("$tool" health --help 2>&1)
check $(($? != 0)) "--help: exit 0" "$out"
check "$(printf '%s\n' "$out" | grep -q -- '--sysfs-root DIR'; echo $?)" "... names --sysfs-root" "$out"
out=$("$tool" --help 2>&1)
check "$(printf '%s\n' "$out" | grep -q '^  health '; echo $?)" "trainenv --help lists health" "$out"
echo "1..$n"
