# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# What the PMIx benchmarks (tests/bench/bench_pmix.sh, bench_fence.sh)
# share, sourced after tests/lib/itest.sh, trainenv.sh and pmix_common.sh:
# the build check (te_build_init), the plugin in plugstack.conf, the two
# fence programs, and the median and ratio of figures.

# Run from the benchmark's work directory on a running cluster: checks the
# build, loads the plugin and compiles bare_fence and bench_barrier there.
# shellcheck disable=SC2154 # plugin, builddir, srcdir: te_build_init
bench_pmix_setup() {
	local bench=$_te_lib_dir/../bench
	te_build_init
	set_plugstack "required $plugin helper-dir=$builddir" >/dev/null
	read -ra pmix_flags <<<"$(pkg-config --cflags --libs pmix)"
	cc -O2 -o bare_fence "$bench/bare_fence.c" "${pmix_flags[@]}" || exit 1
	cc -O2 -I"$srcdir/include" -o bench_barrier "$bench/bench_barrier.c" \
		-L"$builddir/.libs" -ltrainenv -Wl,-rpath,"$builddir/.libs" || exit 1
}

median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
