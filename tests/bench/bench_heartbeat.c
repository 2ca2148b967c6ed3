/* SPDX-License-Identifier: GPL-2.0-or-later */
/* bench_heartbeat: what trainenv_heartbeat() costs a training loop (not a
 * test). Prints, each the median of 9 runs of 2,000,000 calls, the
 * nanoseconds per call of
 *   - an empty function call through a pointer (the floor),
 *   - clock_gettime(CLOCK_MONOTONIC) (the vDSO clock it reads),
 *   - trainenv_heartbeat() without --train-stall (no watchdog),
 *   - trainenv_heartbeat() with TRAINENV_STALL set (watchdog running),
 *   - getppid() (one real system call, for scale),
 * and the ratios to the clock read. The system calls per heartbeat are
 * counted by the test t80 (strace) rather than here. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trainenv/trainenv.h"

#define CALLS 2000000
#define RUNS 9

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void nothing(void)
{
}

static void clock_read(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
}

static void one_syscall(void)
{
	(void)getppid();
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median ns per call of fn. */
static double per_call(void (*volatile fn)(void))
{
	double runs[RUNS];
	int r, i;

	for (r = 0; r < RUNS; r++) {
		double t0 = now_ns();

		for (i = 0; i < CALLS; i++)
			fn();
		runs[r] = (now_ns() - t0) / CALLS;
	}
	qsort(runs, RUNS, sizeof(runs[0]), cmp);
	return runs[RUNS / 2];
}

int main(void)
{
	double empty, clk, hb, hb_watch, sys;

	unsetenv("TRAINENV_STALL");
	empty = per_call(nothing);
	clk = per_call(clock_read);
	hb = per_call(trainenv_heartbeat);
	sys = per_call(one_syscall);
	printf("empty call            %7.1f ns\n", empty);
	printf("clock_gettime (vDSO)  %7.1f ns\n", clk);
	printf("trainenv_heartbeat()  %7.1f ns  (%.2fx the clock read)\n", hb,
	       hb / clk);
	printf("getppid() syscall     %7.1f ns  (%.2fx the clock read)\n", sys,
	       sys / clk);
	/* a second process: the watchdog starts at the first call */
	fflush(stdout);
	if (fork() == 0) {
		setenv("TRAINENV_STALL", "3600", 1);
		hb_watch = per_call(trainenv_heartbeat);
		printf("with the watchdog     %7.1f ns  (%.2fx the clock read)\n",
		       hb_watch, hb_watch / clk);
		return 0;
	}
	wait(NULL);
	return 0;
}
