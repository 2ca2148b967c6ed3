/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the step time watch (core/straggler/steptime.c): a steady
 * job says nothing; a checkpoint's one slow window says nothing; K slow
 * windows in a row say it once, then the pace said is the new normal and
 * a further slowdown is said again; noise of both signs below the threshold
 * says nothing; windows without a step break nothing; bad settings are
 * refused; the line. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "straggler/steptime.h"
#include "tap.h"

#define MS 1000000ull

/* A window of `steps` steps of step_ms each. */
static int win(struct te_steptime *st, uint64_t step_ms, uint64_t steps,
	       struct te_steptime_verdict *v)
{
	return te_steptime_window(st, step_ms * MS * steps, steps, v);
}

static void test_config(void)
{
	struct te_steptime st;
	struct te_steptime_cfg c = { 50, 3 };
	struct te_steptime_verdict v;

	is_int(te_steptime_init(&st, &c), 0, "50%% over 3 windows: taken");
	c.threshold_pct = 0;
	is_int(te_steptime_init(&st, &c), -1, "a threshold of 0: refused");
	is_int(win(&st, 100, 10, &v), 0,
	       "  and the refused watch says nothing");
	c.threshold_pct = TE_STEPTIME_PCT_MAX + 1;
	is_int(te_steptime_init(&st, &c), -1, "a threshold too high: refused");
	c.threshold_pct = 50;
	c.windows = 0;
	is_int(te_steptime_init(&st, &c), -1, "0 windows: refused");
	c.windows = TE_STEPTIME_WINDOWS_MAX + 1;
	is_int(te_steptime_init(&st, &c), -1, "too many windows: refused");
	is_int(te_steptime_init(&st, NULL), -1, "no settings: refused");
}

static void test_slowdown(void)
{
	struct te_steptime st;
	struct te_steptime_cfg c = { 50, 3 };
	struct te_steptime_verdict v;
	char line[TE_STEPTIME_LINE_MAX];
	int i, said = 0;

	te_steptime_init(&st, &c);
	for (i = 0; i < 20; i++)
		said += win(&st, 800, 75, &v);
	is_int(said, 0, "20 steady windows of 0.8 s steps: nothing said");
	is_int(win(&st, 2000, 30, &v), 0,
	       "a checkpoint's slow window: nothing");
	is_int(win(&st, 800, 75, &v), 0, "then normal again");
	is_int(win(&st, 1840, 32, &v), 0, "slow window 1 of 3: nothing yet");
	is_int(win(&st, 1840, 32, &v), 0, "slow window 2 of 3: nothing yet");
	is_int(win(&st, 1840, 32, &v), 1, "slow window 3 of 3: the verdict");
	is_int(v.windows, 3, "  3 windows");
	is_int(v.mean_ns, 1840 * MS, "  their mean step time");
	is_int(v.median_ns, 800 * MS, "  against the job's median");
	is_int(te_steptime_line(&v, 0, line, sizeof(line)), 0, "the line");
	is_str(line,
	       "step time: rank 0's steps took 1.840 s over the last 3 "
	       "windows, 2.30x its median of 0.800 s (site threshold +50%)",
	       "  its words");
	said = 0;
	for (i = 0; i < 30; i++)
		said += win(&st, 1840, 32, &v);
	is_int(said, 0, "the slowdown goes on 30 windows: said once only");
	is_int(win(&st, 800, 75, &v), 0, "a faster window is never slow");
	is_int(win(&st, 3700, 16, &v) + win(&st, 3700, 16, &v), 0,
	       "a further slowdown to 3.7 s: 2 windows, nothing yet");
	is_int(win(&st, 3700, 16, &v), 1,
	       "3 windows: said again (the pace said before is the new "
	       "normal, review F1)");
	is_int(v.median_ns, 1840 * MS, "  against the 1.84 s pace");
	/* the review's case: the pace changed for good, then slowed */
	te_steptime_init(&st, &c);
	for (i = 0; i < 10; i++)
		win(&st, 1000, 60, &v);
	said = 0;
	for (i = 0; i < 20; i++)
		said += win(&st, 1600, 40, &v);
	is_int(said, 1, "1.0 s to 1.6 s for good: said once");
	said = 0;
	for (i = 0; i < 5; i++)
		said += win(&st, 3200, 20, &v);
	is_int(said, 1, "then 1.6 s to 3.2 s: said too");
}

static void test_noise(void)
{
	struct te_steptime st;
	struct te_steptime_cfg c = { 50, 2 };
	struct te_steptime_verdict v;
	unsigned seed = 7;
	int i, said = 0;

	te_steptime_init(&st, &c);
	for (i = 0; i < 2000; i++) {
		/* 1 s steps +-25%, both signs: even a median at the
		 * low end leaves the top below +50% */
		seed = seed * 1103515245u + 12345u;
		said += win(&st, 750 + (seed >> 16) % 501, 60, &v);
	}
	is_int(said, 0, "2000 windows of noise within +-25%%: nothing said");
	te_steptime_init(&st, &c);
	for (i = 0; i < 10; i++)
		win(&st, 1000, 60, &v);
	is_int(win(&st, 1500, 40, &v) + win(&st, 1500, 40, &v), 0,
	       "exactly +50%%: not above the threshold");
	is_int(win(&st, 1501, 40, &v) + win(&st, 1501, 40, &v), 1,
	       "just above +50%% for 2 windows: said");
}

static void test_edges(void)
{
	struct te_steptime st;
	struct te_steptime_cfg c = { 20, 1 };
	struct te_steptime_verdict v;
	int i, said = 0;

	te_steptime_init(&st, &c);
	is_int(win(&st, 5000, 1, &v) + win(&st, 100, 1, &v), 0,
	       "the first windows only make the median");
	is_int(te_steptime_window(&st, 0, 0, &v), 0, "no step: nothing");
	is_int(te_steptime_window(&st, 1000, 0, &v), 0,
	       "no step, a span: nothing");
	win(&st, 100, 1, &v);
	for (i = 0; i < 5; i++) /* no steps between slow windows */
		said += te_steptime_window(&st, 0, 0, &v);
	is_int(said, 0, "windows without a step say nothing");
	is_int(win(&st, 1000, 2, &v), 1,
	       "with 1 window for a verdict: the first slow one says it");
	is_int(te_steptime_window(&st, UINT64_MAX, 1, &v), 0,
	       "a huge window after it: no overflow; the new normal (1 "
	       "window) needs 3 before it judges");
	te_steptime_init(&st, &c);
	for (i = 0; i < 3; i++)
		te_steptime_window(&st, UINT64_MAX / 2, 1, &v);
	is_int(te_steptime_window(&st, UINT64_MAX, 1, &v), 1,
	       "means near 2^64 ns compare without wrapping");
	te_steptime_init(&st, &c);
	for (i = 0; i < 200; i++) /* more than the ring keeps */
		win(&st, i < 100 ? 5000 : 100, 1, &v);
	is_int(win(&st, 130, 1, &v), 1,
	       "the median is over the last 64 normal windows only");
}

static void test_line_bounds(void)
{
	struct te_steptime_verdict v = { 1840 * MS, 0, 3, 50 };
	char small[16], line[TE_STEPTIME_LINE_MAX];

	is_int(te_steptime_line(&v, 7, small, sizeof(small)), -1,
	       "a short buffer: -1");
	is_int(te_steptime_line(&v, 7, line, sizeof(line)), 0,
	       "a median of 0: still a line");
	ok(strstr(line, "0.00x its median of 0.000 s") != NULL,
	   "  with no ratio: %s", line);
}

int main(void)
{
	test_config();
	test_slowdown();
	test_noise();
	test_edges();
	test_line_bounds();
	return tap_done();
}
