/* SPDX-License-Identifier: GPL-2.0-or-later */
/* bench_nccl_profiler: what the NCCL profiler plugin costs per event and
 * per collective (issue 36 asks for at most 1 us per collective), through
 * its v5 entry points as NCCL calls them (dlopen, dlsym), against a
 * baseline loop making the same number of calls through function pointers
 * to empty functions, measured in the same run. A collective is: start,
 * stop, and per channel start, the stop's state, stop; 4 communicators.
 * Prints, each the median of 5 runs:
 *   channels C calls_per_collective K collective_ns X base_ns Y
 *   event_ns E (the plugin's, less the baseline, per call)
 * Usage: bench_nccl_profiler [COLLECTIVES] [CHANNELS] [SO] */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "nccl_profiler.h"
#include "nccl_profiler_abi.h"
#include "bench_stats.h"

#define RUNS 5
#define COMMS 4

/* The baseline's callees: as many calls, doing nothing. */
static volatile int sink;
__attribute__((noinline)) static te_nccl_result_t
empty_start(void *c, void **h, struct te_nccl_descr_v5 *d)
{
	*h = (void *)d;
	sink++;
	return 0;
}
__attribute__((noinline)) static te_nccl_result_t empty_stop(void *h)
{
	sink++;
	return 0;
}
__attribute__((noinline)) static te_nccl_result_t
empty_record(void *h, int s, union te_nccl_state_args *a)
{
	sink++;
	return 0;
}

static double run(const struct te_nccl_profiler_v5 *p, void **ctx, long n,
		  int chans)
{
	struct te_nccl_descr_v5 d = { 0 };
	union te_nccl_state_args a;
	double t0 = now_ns();
	long i;
	int c;

	for (i = 0; i < n; i++) {
		void *coll, *k;

		d.type = TE_NCCL_EV_COLL;
		d.coll.seqNumber = (uint64_t)(i / COMMS);
		d.coll.func = "AllReduce";
		p->startEvent(ctx[i % COMMS], &coll, &d);
		p->stopEvent(coll);
		d.type = TE_NCCL_EV_KERNEL_CH;
		d.parentObj = coll;
		for (c = 0; c < chans; c++) {
			d.kernelCh.channelId = (uint8_t)c;
			d.kernelCh.pTimer = 1000u * (uint64_t)i;
			p->startEvent(ctx[i % COMMS], &k, &d);
			a.kernelCh.pTimer =
				d.kernelCh.pTimer + 5000u + (uint64_t)(i & 255);
			p->recordEventState(k, TE_NCCL_STATE_KERNEL_CH_STOP,
					    &a);
			p->stopEvent(k);
		}
	}
	return (now_ns() - t0) / (double)n;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000;
	int chans = argc > 2 ? atoi(argv[2]) : 2;
	const char *so = argc > 3 ? argv[3] : TE_NPROF_SO;
	struct te_nccl_profiler_v5 base = { "empty",	  NULL,
					    empty_start,  empty_stop,
					    empty_record, NULL };
	struct te_nccl_profiler_v5 *p;
	te_nprof_take_fn take;
	double ev[RUNS], bs[RUNS], calls;
	void *lib, *ctx[COMMS], *bctx[COMMS] = { 0 };
	int mask, i;

	lib = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	p = lib ? dlsym(lib, "ncclProfiler_v5") : NULL;
	take = lib ? (te_nprof_take_fn)dlsym(lib, TE_NPROF_TAKE_SYMBOL) : NULL;
	if (!p || !take || n < 1 || chans < 0 || chans > 64) {
		fprintf(stderr, "bench_nccl_profiler: %s: %s\n", so,
			lib ? "no ncclProfiler_v5 or take" : dlerror());
		return 1;
	}
	for (i = 0; i < COMMS; i++)
		p->init(&ctx[i], 0x100 + (uint64_t)i, &mask, "b", 1, 8, 0,
			NULL);
	for (i = 0; i < RUNS; i++) {
		ev[i] = run(p, ctx, n, chans);
		take(NULL, 0, NULL);
		bs[i] = run(&base, bctx, n, chans);
	}
	qsort(ev, RUNS, sizeof(ev[0]), cmp_double);
	qsort(bs, RUNS, sizeof(bs[0]), cmp_double);
	calls = 2.0 + 3.0 * chans;
	printf("channels %d calls_per_collective %.0f collective_ns %.1f "
	       "base_ns %.1f event_ns %.1f\n",
	       chans, calls, ev[RUNS / 2], bs[RUNS / 2],
	       (ev[RUNS / 2] - bs[RUNS / 2]) / calls);
	for (i = 0; i < COMMS; i++)
		p->finalize(ctx[i]);
	return 0;
}
