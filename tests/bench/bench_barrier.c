/* SPDX-License-Identifier: GPL-2.0-or-later */
/* bench_barrier ITERS held|percall: ITERS trainenv_barrier() calls in one
 * long-lived process after 10 of warm-up; rank 0 prints "median_us
 * mean_us" per call. held: trainenv_init() keeps the PMIx client open (the
 * barrier itself); percall: each call opens and closes it (the default). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_stats.h"
#include <trainenv/trainenv.h>

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 100,
	    held = argc > 2 && !strcmp(argv[2], "held"), i;
	char err[TRAINENV_ERR_MAX];
	double *dt;
	const char *rank = getenv("PMIX_RANK");

	if (iters < 1 || !(dt = calloc((size_t)iters, sizeof(*dt))))
		return 2;
	if (held && trainenv_init(err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	for (i = -10; i < iters; i++) {
		double t0 = now_us();

		if (trainenv_barrier(60, err, sizeof(err)) < 0) {
			fprintf(stderr, "%s\n", err);
			if (held)
				trainenv_finalize();
			return 1;
		}
		if (i >= 0)
			dt[i] = now_us() - t0;
	}
	if (held)
		trainenv_finalize();
	print_stats(dt, iters, rank && !strcmp(rank, "0"));
	return 0;
}
