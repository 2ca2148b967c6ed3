/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libnccl-profiler-trainenv.so's own entry point beside NCCL's
 * (nccl_profiler.c): the window's bookkeeping, taken by the plugin's own
 * sender (nccl_profiler_send.c) and by the tests. Found with dlsym, as
 * NCCL finds ncclProfiler_vN. */
#ifndef TE_NCCL_PROFILER_H
#define TE_NCCL_PROFILER_H

#include <stddef.h>
#include <stdint.h>

#include "nccl_profiler_abi.h"
#include "straggler/straggler.h"

/* The plugin's name, as NCCL prints it (NCCL_DEBUG=INFO). */
#define TE_NPROF_NAME "trainenv"
/* What it asks NCCL for: collectives and their kernel channels. */
#define TE_NPROF_MASK (TE_NCCL_EV_COLL | TE_NCCL_EV_KERNEL_CH)
#define TE_NPROF_TAKE_SYMBOL "trainenv_nccl_profiler_take"

/* One communicator's window: the stat of core/straggler/ (its wait per
 * collective), and this process's rank in it. */
struct te_nprof_comm {
	struct te_strag_stat st;
	int32_t rank;	/* -1 when NCCL never said */
	int32_t nranks; /* 0 when NCCL never said (v3) */
};

/* The plugin's counters since it was loaded. */
struct te_nprof_counts {
	uint64_t channels; /* kernel channel events counted */
	uint64_t refused;  /* calls with a handle, context or descriptor
			       not the plugin's, or stale (stopped twice, or
			       overwritten: more in flight than its rings) */
	uint64_t untimed;  /* kernel channels started with a GPU time and
			       stopped without one: not counted */
	uint64_t no_ctx;   /* communicators beyond TE_NPROF_CTXS: not
			       followed */
	uint64_t evicted;  /* communicators evicted by core/straggler/ */
	uint32_t contexts; /* communicators open now */
};

/* Ends the window: writes each communicator with collectives (at most
 * max) to out, and the counters to counts when not NULL; returns how
 * many. */
typedef size_t (*te_nprof_take_fn)(struct te_nprof_comm *out, size_t max,
				   struct te_nprof_counts *counts);
size_t trainenv_nccl_profiler_take(struct te_nprof_comm *out, size_t max,
				   struct te_nprof_counts *counts);

/* The window's sender to srun (nccl_profiler_send.c), started once, by the
 * first communicator, where trainenv's environment asks for it; take is
 * the plugin's (calls run one way: the plugin calls the sender). */
void te_nprof_sender_start(te_nprof_take_fn take);

#endif
