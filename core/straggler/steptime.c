/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The step time watch (steptime.h): each window's mean step time against
 * the job's own median of its earlier normal windows. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "straggler/steptime.h"
#include "util/strutil.h"

int te_steptime_init(struct te_steptime *st, const struct te_steptime_cfg *cfg)
{
	memset(st, 0, sizeof(*st));
	if (!cfg || cfg->threshold_pct < 1 ||
	    cfg->threshold_pct > TE_STEPTIME_PCT_MAX || cfg->windows < 1 ||
	    cfg->windows > TE_STEPTIME_WINDOWS_MAX)
		return -1;
	st->cfg = *cfg;
	return 0;
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The median of the normal windows kept (the lower middle one of an even
 * count: a figure some window had). */
static uint64_t median(const struct te_steptime *st)
{
	uint64_t v[TE_STEPTIME_KEEP];

	memcpy(v, st->base, st->nbase * sizeof(v[0]));
	qsort(v, st->nbase, sizeof(v[0]), by_value);
	return v[(st->nbase - 1) / 2];
}

static void keep_normal(struct te_steptime *st, uint64_t mean)
{
	st->base[st->next] = mean;
	st->next = (st->next + 1) % TE_STEPTIME_KEEP;
	if (st->nbase < TE_STEPTIME_KEEP)
		st->nbase++;
}

/* The slow row, said, becomes the median: the pace the job now keeps. */
static void new_normal(struct te_steptime *st)
{
	uint32_t n = st->slow_run < TE_STEPTIME_KEEP ? st->slow_run
						     : TE_STEPTIME_KEEP;

	memcpy(st->base, st->slow, n * sizeof(st->base[0]));
	st->nbase = n;
	st->next = n % TE_STEPTIME_KEEP;
	st->slow_run = 0;
	st->slow_sum_ns = 0;
}

int te_steptime_window(struct te_steptime *st, uint64_t span_ns, uint64_t steps,
		       struct te_steptime_verdict *v)
{
	uint64_t mean, med;

	if (st->cfg.windows == 0 || steps == 0 || span_ns == 0)
		return 0; /* not set up, or no step seen: no figure */
	mean = span_ns / steps;
	if (st->nbase < TE_STEPTIME_BASE) {
		keep_normal(st, mean);
		return 0;
	}
	med = median(st);
	/* in double: a mean near 2^64 ns must not wrap the product */
	if ((double)mean * 100.0 <=
	    (double)med * (100.0 + (double)st->cfg.threshold_pct)) {
		st->slow_run = 0;
		st->slow_sum_ns = 0;
		keep_normal(st, mean);
		return 0;
	}
	st->slow[st->slow_run % TE_STEPTIME_KEEP] = mean;
	st->slow_run++;
	st->slow_sum_ns = st->slow_sum_ns > UINT64_MAX - mean
				  ? UINT64_MAX
				  : st->slow_sum_ns + mean;
	if (st->slow_run < st->cfg.windows)
		return 0;
	v->mean_ns = st->slow_sum_ns / st->slow_run;
	v->median_ns = med;
	v->windows = st->slow_run;
	v->threshold_pct = st->cfg.threshold_pct;
	new_normal(st);
	return 1;
}

/* ns as seconds with three decimals ("1.840"). */
static const char *secs(char *buf, size_t len, uint64_t ns)
{
	uint64_t ms = ns / 1000000;

	te_snprintf(buf, len, "%llu.%03llu", (unsigned long long)(ms / 1000),
		    (unsigned long long)(ms % 1000));
	return buf;
}

int te_steptime_line(const struct te_steptime_verdict *v, uint32_t rank,
		     char *buf, size_t len)
{
	char m[32], d[32];
	double ratio = v->median_ns ? (double)v->mean_ns / (double)v->median_ns
				    : 0.0;

	return te_snprintf(buf, len,
			   "step time: rank %u's steps took %s s over the "
			   "last %u window%s, %.2fx its median of %s s (site "
			   "threshold +%u%%)",
			   rank, secs(m, sizeof(m), v->mean_ns), v->windows,
			   v->windows == 1 ? "" : "s", ratio,
			   secs(d, sizeof(d), v->median_ns),
			   v->threshold_pct) < 0
		       ? -1
		       : 0;
}
