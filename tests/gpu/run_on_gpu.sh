#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs trainenv's GPU checks on a machine that has NVIDIA GPUs, without
# Slurm, and prints what they say (tests/gpu/README.md):
#   1. trainenv-preflight --gpu BUSID for every GPU (or the ones given):
#      the CUDA runtime loaded with dlopen, context, 1 MiB cudaMalloc +
#      cudaMemset + synchronize, free memory; RESULT=ok expected;
#      then once with a bus id that is no GPU: RESULT=fail expected;
#   2. a one-rank NCCL job (nccl_one_rank.c) with trainenv-nccl.so in
#      LD_PRELOAD, as --train-barrier=first-collective sets it, under a
#      one-process PMIx server (Open MPI's mpirun, or PRRTE's prterun): the
#      barrier must run before the first communicator, then NCCL's
#      all_reduce; and the same program without the preload;
#   3. trainenv's NCCL profiler plugin (the stragglers' timing) inside
#      real NCCL: 2000 one-float all_reduces with NCCL_PROFILER_PLUGIN set
#      and without; the plugin must load, and what it counted (its take,
#      as its sender asks it) and the cost per all_reduce against the
#      run without it are printed;
#   4. NCCL RAS (2.24 and later) asked by the hang report's client
#      (tests/gpu/ras_query.c, core/hang/ras_client.c) at a loopback
#      address of the program's own while it holds its communicator:
#      RAS must answer with its protocol line; its lines are printed.
# Usage: tests/gpu/run_on_gpu.sh [--gpu BUSID]... [--builddir DIR]
# Needs: a build tree (make), the CUDA toolkit with NCCL ($CUDA_HOME, else
# /usr/local/cuda), cc; mpirun or prterun for the preload part.
# Exit 0 when every check that could run passed; the output ends with a
# summary line to paste into an issue.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd -P)
build=${TE_BUILDDIR:-}
gpus=()
while [ $# -gt 0 ]; do
	case $1 in
	--gpu) gpus+=("$2"); shift 2 ;;
	--builddir) build=$2; shift 2 ;;
	-h|--help) sed -n '2,27p' "$0"; exit 0 ;;
	*) echo "run_on_gpu.sh: unknown argument '$1' (--help)" >&2; exit 2 ;;
	esac
done
for d in "$build" "$src/_build" "$src"; do
	[ -n "$d" ] && [ -x "$d/trainenv-preflight" ] && { build=$d; break; }
done
[ -x "$build/trainenv-preflight" ] || { echo "run_on_gpu.sh: no trainenv-preflight: build first (make), or --builddir DIR" >&2; exit 2; }
cuda=${CUDA_HOME:-/usr/local/cuda}
work=$(mktemp -d /tmp/trainenv-gpu.XXXXXX)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0 skipped=0 nccl_ok=0
result() { # OK|FAIL|SKIP TEXT
	case $1 in OK) pass=$((pass + 1)) ;; FAIL) fail=$((fail + 1)) ;; *) skipped=$((skipped + 1)) ;; esac
	printf '== %-4s %s\n' "$1" "$2"
}

echo "== machine: $(uname -n), $(uname -r); trainenv build $build"
command -v nvidia-smi >/dev/null &&
	nvidia-smi --query-gpu=index,pci.bus_id,name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/== nvidia-smi: /'

# ---------------------------------------------------------------- GPUs
if [ ${#gpus[@]} -eq 0 ]; then
	# NVIDIA display-class PCI functions, as trainenv counts GPUs
	for d in /sys/bus/pci/devices/*; do
		[ "$(cat "$d/vendor" 2>/dev/null)" = 0x10de ] || continue
		case $(cat "$d/class" 2>/dev/null) in 0x0300*|0x0302*|0x0380*) gpus+=("$(basename "$d")") ;; esac
	done
fi
if [ ${#gpus[@]} -eq 0 ]; then
	echo "== no NVIDIA GPU found (sysfs); pass --gpu BUSID to try anyway"
fi

# ---------------------------------------------------------------- 1. pre-flight
for g in "${gpus[@]}"; do
	echo "== trainenv-preflight --gpu $g"
	out=$("$build/trainenv-preflight" --gpu "$g" 2>"$work/pf.err")
	rc=$?
	printf '%s\n' "$out" | sed 's/^/   /'
	[ -s "$work/pf.err" ] && sed 's/^/   stderr: /' "$work/pf.err"
	if [ $rc -eq 0 ] && grep -qx 'RESULT=ok' <<<"$out"; then
		result OK "pre-flight of $g: $(grep -E '^(FREE|TOTAL|RUNTIME|DRIVER|MS)=' <<<"$out" | paste -sd' ')"
	else
		result FAIL "pre-flight of $g (exit $rc): $(grep -E '^(RESULT|CALL|ERROR)=' <<<"$out" | paste -sd' ')"
	fi
done
# a bus id where there is no GPU: the failure path with a real driver
out=$("$build/trainenv-preflight" --gpu 0000:ff:1f.7 2>/dev/null)
printf '%s\n' "$out" | sed 's/^/   /'
if grep -qx 'RESULT=fail' <<<"$out" && grep -q '^CALL=cudaDeviceGetByPCIBusId$' <<<"$out"; then
	result OK "pre-flight of a bus id with no GPU fails at cudaDeviceGetByPCIBusId: $(sed -n 's/^ERROR=//p' <<<"$out")"
elif grep -qx 'RESULT=unavailable' <<<"$out"; then
	result SKIP "no usable CUDA runtime or driver: $(sed -n 's/^ERROR=//p' <<<"$out")"
else
	result FAIL "pre-flight of a bus id with no GPU: $(grep -E '^(RESULT|CALL|ERROR)=' <<<"$out" | paste -sd' ')"
fi

# ---------------------------------------------------------------- 2. NCCL, one rank
if [ ! -f "$cuda/include/nccl.h" ] && [ ! -f /usr/include/nccl.h ]; then
	result SKIP "no nccl.h in $cuda/include or /usr/include: NCCL part not run"
elif ! cc -I"$cuda/include" "$src/tests/gpu/nccl_one_rank.c" -L"$cuda/lib64" \
	-I"$src/pmix" -I"$src/core" -Wl,-rpath,"$cuda/lib64" -lnccl -lcudart -ldl \
	-o "$work/nccl_one_rank" 2>"$work/cc.err"; then
	sed 's/^/   /' "$work/cc.err"
	result FAIL "nccl_one_rank.c does not build against $cuda"
else
	echo "== nccl_one_rank without trainenv"
	out=$("$work/nccl_one_rank" 2>&1); rc=$?
	printf '%s\n' "$out" | sed 's/^/   /'
	if [ $rc -eq 0 ]; then
		result OK "one-rank NCCL all_reduce"
		nccl_ok=1
	else
		result FAIL "one-rank NCCL (exit $rc)"
	fi

	preload=$build/.libs/trainenv-nccl.so
	[ -f "$preload" ] || preload=$build/trainenv-nccl.so
	if command -v mpirun >/dev/null; then
		launch=(mpirun --allow-run-as-root -np 1 -x LD_PRELOAD="$preload" -x TRAINENV_NCCL_TRACE="$work/trace" -x TRAINENV_BARRIER_TIMEOUT=30)
	elif command -v prterun >/dev/null; then
		launch=(prterun -n 1 -x LD_PRELOAD="$preload" -x TRAINENV_NCCL_TRACE="$work/trace" -x TRAINENV_BARRIER_TIMEOUT=30)
	else
		launch=()
	fi
	if [ ! -f "$preload" ]; then
		result FAIL "no trainenv-nccl.so in $build"
	elif [ ${#launch[@]} -eq 0 ]; then
		result SKIP "no mpirun or prterun: no PMIx server for the preload's barrier (apt-get install openmpi-bin)"
	else
		echo "== ${launch[0]} -np 1 nccl_one_rank with LD_PRELOAD=$preload"
		out=$(timeout 120 "${launch[@]}" "$work/nccl_one_rank" 2>&1); rc=$?
		printf '%s\n' "$out" | sed 's/^/   /'
		[ -f "$work/trace" ] && sed 's/^/   trace: /' "$work/trace"
		if [ $rc -eq 0 ] && grep -q ' barrier-done ' "$work/trace" 2>/dev/null &&
			grep -q ' nccl-enter ' "$work/trace" 2>/dev/null; then
			result OK "one-rank NCCL with the preload: barrier, then NCCL"
		else
			result FAIL "one-rank NCCL with the preload (exit $rc)"
		fi
	fi
fi

# ---------------------------------------------------------------- 3. profiler
# The per-call cost of the profiler: "N all_reduces in T us: X us each".
each_us() { sed -n 's/.* all_reduces in .*: \([0-9.]*\) us each$/\1/p' <<<"$1"; }
plugin=$build/.libs/libnccl-profiler-trainenv.so
if [ $nccl_ok = 0 ]; then
	result SKIP "no one-rank NCCL job ran (above): the profiler plugin is not tried"
elif [ ! -f "$plugin" ]; then
	result FAIL "no libnccl-profiler-trainenv.so in $build/.libs"
else
	echo "== nccl_one_rank 0 2000, without and with NCCL_PROFILER_PLUGIN=$plugin"
	base=$("$work/nccl_one_rank" 0 2000 2>&1)
	printf '%s\n' "$base" | sed 's/^/   without: /'
	out=$(NCCL_PROFILER_PLUGIN=$plugin TE_GPU_PROF_LIB=$plugin NCCL_DEBUG=INFO \
		NCCL_DEBUG_SUBSYS=INIT,ENV timeout 120 "$work/nccl_one_rank" 0 2000 2>&1)
	rc=$?
	printf '%s\n' "$out" | grep -iE 'nccl_one_rank|profiler' | sed 's/^/   with: /'
	b=$(each_us "$base") w=$(each_us "$out")
	ratio=$(awk -v b="$b" -v w="$w" 'BEGIN { if (b > 0) printf "%.3f", w / b; else print "?" }')
	if [ $rc -ne 0 ]; then
		result FAIL "one-rank NCCL with the profiler plugin (exit $rc)"
	elif grep -q 'nccl_one_rank: profiler: [0-9]* communicators' <<<"$out"; then
		result OK "the profiler plugin loaded in NCCL: $(grep -m1 'profiler: [0-9]* communicators' <<<"$out" | sed 's/.*profiler: //'); $w us an all_reduce against $b us without: ${ratio}x"
	else
		result FAIL "NCCL did not load the profiler plugin: $(grep -m1 -i 'profiler' <<<"$out")"
	fi
fi

# ---------------------------------------------------------------- 4. RAS
core_lib=$build/.libs/libtecore.a
port=$((28100 + RANDOM % 200))
if [ $nccl_ok = 0 ]; then
	result SKIP "no one-rank NCCL job ran (above): NCCL RAS is not asked"
elif ! cc -I"$src/core" "$src/tests/gpu/ras_query.c" "$core_lib" -o "$work/ras_query" 2>"$work/cc.err"; then
	sed 's/^/   /' "$work/cc.err"
	result FAIL "ras_query.c does not build with $core_lib"
else
	echo "== NCCL RAS at 127.0.0.1:$port while nccl_one_rank holds its communicator"
	NCCL_RAS_ENABLE=1 NCCL_RAS_ADDR=127.0.0.1:$port TE_GPU_HOLD_S=8 \
		"$work/nccl_one_rank" 0 10 >"$work/hold.out" 2>&1 &
	hold=$!
	for _ in $(seq 100); do
		grep -q 'holding the communicator' "$work/hold.out" && break
		kill -0 $hold 2>/dev/null || break
		sleep 0.1
	done
	out=$("$work/ras_query" "127.0.0.1:$port" 10000 2>&1)
	rc=$?
	wait $hold
	sed 's/^/   program: /' "$work/hold.out"
	printf '%s\n' "$out" | sed 's/^/   /'
	if [ $rc -eq 0 ]; then
		result OK "NCCL RAS answered the hang report's client: $(tail -n 1 <<<"$out" | sed 's/^ras_query: //')"
	else
		result FAIL "NCCL RAS did not answer at 127.0.0.1:$port: $(head -n 1 <<<"$out")"
	fi
fi

echo "== summary: $pass passed, $fail failed, $skipped skipped on $(uname -n)"
[ $fail -eq 0 ]
