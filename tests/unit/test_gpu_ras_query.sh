#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/gpu/ras_query (what run_on_gpu.sh asks a real NCCL RAS with, the
# hang report's client) against the stand-in RAS (TAP): it reports a
# missing rank and exits 0 when RAS answered, and says "no answer" and
# exits 1 where nothing listens; so that the GPU machine's check, run
# only by hand, builds and works everywhere.
# Environment: TE_BUILDDIR (default: the current directory).
set -u
build=${TE_BUILDDIR:-$PWD}
query=$build/tests/gpu/ras_query
standin=$build/tests/integration/ras_standin
work=$(mktemp -d /tmp/te-rasq.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
n=0
check() { # RC NAME [DETAIL]
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n - $2"; else
		echo "not ok $n - $2"
		[ -n "${3:-}" ] && printf '%s\n' "$3" | sed 's/^/#   /'
	fi
}
echo 1..4
"$standin" 127.0.0.1 0 missing >"$work/standin" 2>&1 &
pid=$!
port=
for _ in $(seq 50); do
	port=$(awk '$1 == "port" { print $2 }' "$work/standin")
	[ -n "$port" ] && break
	sleep 0.1
done
out=$("$query" "127.0.0.1:$port" 3000 2>&1)
check $? "RAS answered (the stand-in, at 127.0.0.1:$port): exit 0" "$out"
grep -q '^NCCL RAS: communicator cf264af53edbe986 (8 ranks): rank 4 missing' <<<"$out"
check $? "the hang report's line names the missing rank" "$out"
grep -q '^ras_query: outcome 0, answered 1, protocol 2, NCCL 2.30.7' <<<"$out"
check $? "and what was parsed: protocol 2, NCCL 2.30.7" "$out"
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
pid=
out=$("$query" "127.0.0.1:$port" 1000 2>&1)
[ $? = 1 ] && grep -q "^NCCL RAS: no answer at 127.0.0.1:$port (nothing listens" <<<"$out"
check $? "nothing listening: exit 1 and the report's one line" "$out"
