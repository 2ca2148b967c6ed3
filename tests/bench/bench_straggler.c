/* SPDX-License-Identifier: GPL-2.0-or-later */
/* bench_straggler: what one collective's event costs a rank's bookkeeping
 * (te_strag_rank_event, core/straggler/; issue 36 asks for at most 1 us),
 * against a baseline loop that does the same work to make the event's
 * arguments and sums them, measured in the same run. Prints, each the
 * median of 5 runs of N events over 8 communicators (2 channel events per
 * collective):
 *   event_ns BASE_NS ratio R
 * Usage: bench_straggler [N] */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "straggler/straggler.h"
#include "bench_stats.h"

#define RUNS 5
#define COMMS 8

/* A wait that changes with i, as real ones do (xorshift). */
static uint64_t wait_of(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return 1000 + (*x & 0xfffff);
}

static double run_events(struct te_strag_rank *r, long n)
{
	struct te_strag_stat st[TE_STRAG_COMMS];
	uint64_t x = 88172645463325252ull;
	double t0 = now_ns();
	long i;

	for (i = 0; i < n; i++)
		te_strag_rank_event(r, 0x1000 + (uint64_t)(i % COMMS),
				    (uint64_t)(i / (2 * COMMS)),
				    TE_STRAG_OP_ALL_REDUCE, wait_of(&x));
	te_strag_rank_take(r, st, TE_STRAG_COMMS);
	return (now_ns() - t0) / (double)n;
}

static volatile uint64_t sink;

static double run_base(long n)
{
	uint64_t x = 88172645463325252ull, sum = 0;
	double t0 = now_ns();
	long i;

	for (i = 0; i < n; i++)
		sum += 0x1000 + (uint64_t)(i % COMMS) +
		       (uint64_t)(i / (2 * COMMS)) + wait_of(&x);
	sink = sum;
	return (now_ns() - t0) / (double)n;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000000;
	double ev[RUNS], base[RUNS];
	struct te_strag_rank r;
	int i;

	if (n < 1)
		n = 1;
	te_strag_rank_init(&r, 0);
	for (i = 0; i < RUNS; i++) {
		base[i] = run_base(n);
		ev[i] = run_events(&r, n);
	}
	qsort(ev, RUNS, sizeof(double), cmp_double);
	qsort(base, RUNS, sizeof(double), cmp_double);
	printf("event_ns %.1f base_ns %.1f ratio %.1f (%ld events, %d "
	       "communicators, median of %d runs)\n",
	       ev[RUNS / 2], base[RUNS / 2],
	       base[RUNS / 2] > 0 ? ev[RUNS / 2] / base[RUNS / 2] : 0.0, n,
	       COMMS, RUNS);
	return 0;
}
