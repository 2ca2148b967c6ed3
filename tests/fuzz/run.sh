#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds every libFuzzer target with clang (ASan + UBSan) and runs each for
# SECONDS (default 60), starting from the seed corpus in tests/fuzz/corpus/
# (new inputs go to a scratch copy; the repo's corpus is never changed).
# Prints, per target: runs, executions per second, coverage, findings.
# Usage: tests/fuzz/run.sh [SECONDS] [TARGET...]     (run from anywhere)
# Needs: clang, libclang-rt-dev (tests/deps.sh installs them), a configured
# build tree in _build/ or the source tree (for config.h), or TE_BUILDDIR.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd -P)
secs=${1:-60}
shift || true
build=${TE_BUILDDIR:-}
for d in "$build" "$src/_build" "$src"; do
	[ -n "$d" ] && [ -f "$d/config.h" ] && { build=$d; break; }
done
[ -f "$build/config.h" ] || { echo "fuzz: no config.h: configure first" >&2; exit 2; }
out=${TE_FUZZ_DIR:-$build/tests/fuzz-out}
mkdir -p "$out"
cflags="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -DTE_PKGLIBEXECDIR=\"/usr/libexec/trainenv\" -DTE_LIBDIR=\"/usr/lib\" -DTE_PKGLIBDIR=\"/usr/lib/trainenv\" -I$build -I$src/core -I$src/spank -I$src/include -I$src/pmix"
hw="$(pkg-config --cflags --libs hwloc)"
declare -A srcs=(
	[policy]="core/settings/settings.c core/settings/value.c core/settings/policy.c core/settings/resolve.c core/util/strutil.c"
	[envparse]="core/settings/settings.c core/settings/value.c core/settings/policy.c core/settings/resolve.c core/util/strutil.c core/report/failrep.c core/launch/launch_timeline.c core/srun/portrange.c core/launch/rankenv.c core/srun/srunargs.c core/srun/srunargs_table.c core/srun/exportenv.c core/launch/fence_choice.c core/hang/proc_stat.c core/hang/proctab.c core/util/sysutil.c"
	[cpulist]="core/bind/cpulist.c core/bind/bind.c core/bind/bind_machine.c"
)
declare -A extra=([cpulist]="$hw" [policy]="" [envparse]="-lpthread")
# Targets added by other parts of the tree declare themselves in a
# "// FUZZ-SOURCES: ..." line.
for f in "$src"/tests/fuzz/fuzz_*.c; do
	t=$(basename "$f" .c); t=${t#fuzz_}
	line=$(sed -n 's|^// FUZZ-SOURCES: ||p' "$f")
	[ -n "$line" ] && { srcs[$t]=${line%%|*}; extra[$t]=$(eval echo "${line#*|}"); }
done
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${!srcs[@]}")
status=0
for t in $(printf '%s\n' "${targets[@]}" | sort); do
	bin=$out/fuzz_$t
	files=()
	for s in ${srcs[$t]}; do files+=("$src/$s"); done
	# shellcheck disable=SC2086
	if ! clang $cflags "$src/tests/fuzz/fuzz_$t.c" "${files[@]}" ${extra[$t]} -o "$bin" 2>"$out/$t.build.log"; then
		echo "fuzz_$t: BUILD FAILED"; tail -5 "$out/$t.build.log"; status=1; continue
	fi
	work=$out/corpus-$t
	rm -rf "$work"; mkdir -p "$work"
	[ -d "$src/tests/fuzz/corpus/$t" ] && cp "$src/tests/fuzz/corpus/$t"/* "$work/" 2>/dev/null
	# a target's own input bound: "// FUZZ-MAX-LEN: N" (default 4096)
	maxlen=$(sed -n 's|^// FUZZ-MAX-LEN: *||p' "$src/tests/fuzz/fuzz_$t.c")
	(cd "$out" && "$bin" -max_total_time="$secs" -max_len="${maxlen:-4096}" -print_final_stats=1 \
		-artifact_prefix="$out/crash-$t-" "$work" >"$out/$t.log" 2>&1)
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$t.log")
	eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$out/$t.log")
	cov=$(grep -o 'cov: [0-9]*' "$out/$t.log" | tail -1)
	if [ $rc -ne 0 ]; then
		echo "fuzz_$t: FINDING (exit $rc) after ${runs:-?} runs; see $out/$t.log and $out/crash-$t-*"
		grep -m3 -E 'ERROR|SUMMARY|runtime error' "$out/$t.log"
		status=1
	else
		printf 'fuzz_%-10s %4ss  %10s runs  %8s exec/s  %s  no finding\n' "$t" "$secs" "${runs:-?}" "${eps:-?}" "${cov:-}"
	fi
done
exit $status
