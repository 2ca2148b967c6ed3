/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The step time watch (issue 36 item 2), the pure part: a job that calls
 * trainenv.heartbeat() once per training step gets its own step time
 * watched, with no other code.
 *
 * Per window (the site's length, e.g. 60 s) the caller gives the time
 * from the window's first heartbeat to its last one and the number of
 * steps between them (heartbeats less one): the window's mean step time,
 * on this process's own clock. A window is slow when its mean is above
 * (100 + threshold_pct)% of the median of the job's own earlier normal
 * windows; `windows` slow windows in a row make a verdict, said once
 * (a checkpoint or an evaluation step spikes one window, not several).
 * Slow windows stay out of the median until the line is said, so that a
 * slowdown is measured against the pace before it; once it is said, the
 * slow row's windows become the median (the new normal: the line is not
 * said again while the pace stays there), so that a further slowdown, or
 * a slowdown after the pace changed for good, is said again. The median
 * is over the last TE_STEPTIME_KEEP normal windows and needs
 * TE_STEPTIME_BASE of them first. A window with no step in it (fewer than
 * two heartbeats) says nothing and breaks no row: a stall is the stall
 * watchdog's, and a step longer than the window has no figure.
 *
 * In synchronous training every rank's step time is the same (the
 * collectives wait for the slowest), so one rank's view is the job's; the
 * stragglers' data (straggler.h) names which node, where it exists.
 * Bounded, no allocation, no lock (one watcher per process). */
#ifndef TE_STEPTIME_H
#define TE_STEPTIME_H

#include <stddef.h>
#include <stdint.h>

#define TE_STEPTIME_KEEP 64 /* normal windows the median is over */
#define TE_STEPTIME_BASE 3  /* normal windows before any judgement */
#define TE_STEPTIME_PCT_MAX 10000u
#define TE_STEPTIME_WINDOWS_MAX 1000u
#define TE_STEPTIME_LINE_MAX 256

struct te_steptime_cfg {
	uint32_t threshold_pct; /* slow: mean > (100 + pct)% of the median;
				   1 to TE_STEPTIME_PCT_MAX */
	uint32_t windows;	/* slow windows in a row for a verdict; 1 to
				   TE_STEPTIME_WINDOWS_MAX */
};

struct te_steptime {
	struct te_steptime_cfg cfg;
	uint64_t base[TE_STEPTIME_KEEP]; /* normal windows' means, ns */
	uint32_t nbase, next;		 /* filled, next slot (a ring) */
	uint32_t slow_run;		 /* slow windows in a row */
	uint64_t slow_sum_ns;		 /* their means' sum */
	uint64_t slow[TE_STEPTIME_KEEP]; /* their means (the last KEEP) */
};

struct te_steptime_verdict {
	uint64_t mean_ns;   /* the slow windows' mean step time */
	uint64_t median_ns; /* the job's own median, before them */
	uint32_t windows;   /* slow windows in a row */
	uint32_t threshold_pct;
};

/* 0, or -1 when cfg is out of range (st is then left unusable). */
int te_steptime_init(struct te_steptime *st, const struct te_steptime_cfg *cfg);

/* One window: span_ns from its first heartbeat to its last, steps the
 * heartbeats less one. 1 when this window makes the verdict (v filled),
 * else 0. */
int te_steptime_window(struct te_steptime *st, uint64_t span_ns, uint64_t steps,
		       struct te_steptime_verdict *v);

/* The line srun says, without the "trainenv: " prefix:
 * "step time: rank 0's steps took 1.840 s over the last 3 windows, 2.30x
 * its median of 0.800 s (site threshold +50%)". 0, or -1 when cut. */
int te_steptime_line(const struct te_steptime_verdict *v, uint32_t rank,
		     char *buf, size_t len);

#endif
