/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Timing for the benchmarks: a monotonic clock in microseconds and in
 * nanoseconds, doubles' order for qsort, and the "median_us mean_us" line
 * rank 0 of the barrier benchmarks (bare_fence.c, bench_barrier.c)
 * prints. */
#ifndef TE_BENCH_STATS_H
#define TE_BENCH_STATS_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static inline double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Sorts dt[0..n) and, on rank 0, prints its median and mean. */
static inline void print_stats(double *dt, int n, int rank0)
{
	double sum = 0;
	int i;

	for (i = 0; i < n; i++)
		sum += dt[i];
	qsort(dt, (size_t)n, sizeof(*dt), cmp_double);
	if (rank0)
		printf("%.1f %.1f\n", dt[n / 2], sum / n);
}

#endif
