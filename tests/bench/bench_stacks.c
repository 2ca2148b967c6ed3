/* SPDX-License-Identifier: GPL-2.0-or-later */
/* bench_stacks: what the hang report's login and node sides cost at scale
 * (issue 25, items 5 and 6; not a test: tests/unit/hang/test_stacks_scale
 * checks the results). Prints, each the median of 5 runs:
 *   - the text and the JSON report of 2,000 ranks with 2,000 distinct
 *     stacks (2 threads of 6 Python frames each), into the 4 MiB buffer
 *     trainenv-stacks uses (issue 25: 2.1 s text, 8.2 s JSON before);
 *   - decoding their 2,000 wire records, as the merger does;
 *   - picking the ranks of a node's process table of 2,048 processes,
 *     every one detached from the others (issue 25: 3.1 s before), and of
 *     256 tasks with 7 data-loader workers each.
 * Usage: bench_stacks [RANKS] */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hang/proctab.h"
#include "hang/stacks.h"
#include "util/strutil.h"

#define RUNS 5
#define REPORT_MAX (4u * 1024 * 1024) /* pmix/stacks.c's */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v)
{
	qsort(v, RUNS, sizeof(*v), cmp_d);
	return v[RUNS / 2];
}

/* Rank i: its own innermost frame, so every stack is distinct. */
static void make_proc(struct te_proc_stack *ps, int i)
{
	char fn[64], file[96];
	int t, f;

	te_stack_init(ps);
	ps->rank = i;
	ps->pid = 10000 + i;
	te_snprintf(ps->node, sizeof(ps->node), "gpu%04d", i / 8);
	ps->state = 'S';
	te_strlcpy(ps->wchan, "futex_wait_queue", sizeof(ps->wchan));
	ps->cpu_ms = i % 7;
	ps->since_ms = 12000 + i;
	for (t = 0; t < 2; t++) {
		te_stack_add_thread(ps, ps->pid + t);
		for (f = 0; f < 6; f++) {
			if (f == 0)
				te_snprintf(fn, sizeof(fn), "wait_for_rank_%d",
					    i);
			else
				te_snprintf(fn, sizeof(fn),
					    "train_loop_level_%d", f);
			te_snprintf(file, sizeof(file),
				    "/home/user/project/model/train_%d.py", t);
			te_stack_add_frame(ps, TE_FRAME_PY, fn, strlen(fn),
					   file, strlen(file),
					   (uint32_t)(10 * f + 3), NULL, 0, 0);
		}
	}
}

static void bench_reports(int n)
{
	struct te_proc_stack *procs = calloc((size_t)n, sizeof(*procs));
	struct te_proc_stack *back = calloc((size_t)n, sizeof(*back));
	char *buf = malloc(REPORT_MAX), *wire = malloc((size_t)n * 4096);
	double t[RUNS], d[RUNS], j[RUNS], t0;
	size_t off = 0, used, tlen = 0, jlen = 0;
	int i, r, trc = 0, jrc = 0, bad = 0;
	char err[160];

	if (!procs || !back || !buf || !wire) {
		printf("no memory\n");
		exit(1);
	}
	for (i = 0; i < n; i++) {
		make_proc(&procs[i], i);
		if (te_stack_wire_encode(wire + off, 4096, &procs[i]) < 0)
			bad++;
		off += strlen(wire + off);
	}
	for (r = 0; r < RUNS; r++) {
		t0 = now_s();
		trc = te_stack_report_text(buf, REPORT_MAX, procs, (size_t)n);
		t[r] = now_s() - t0;
		tlen = strlen(buf);
		t0 = now_s();
		jrc = te_stack_report_json(buf, REPORT_MAX, procs, (size_t)n);
		j[r] = now_s() - t0;
		jlen = strlen(buf);
		t0 = now_s();
		for (i = 0, used = 0; i < n; i++) {
			size_t u;

			if (te_stack_wire_decode(wire + used, off - used, &u,
						 &back[i], err,
						 sizeof(err)) < 0) {
				bad++;
				break;
			}
			used += u;
		}
		d[r] = now_s() - t0;
	}
	printf("report of %d ranks, %d distinct stacks (2 threads x 6 frames):\n",
	       n, n);
	printf("  text: %8.4f s  (%zu bytes, %s)\n", median(t), tlen,
	       trc == 0 ? "complete" : "groups left out");
	printf("  JSON: %8.4f s  (%zu bytes, %s)\n", median(j), jlen,
	       jrc == 0 ? "complete" : "groups left out");
	printf("  decoding the %d wire records (%zu bytes): %8.4f s%s\n", n,
	       off, median(d), bad ? " (errors)" : "");
	free(procs);
	free(back);
	free(buf);
	free(wire);
}

static struct te_proc *table(size_t n)
{
	struct te_proc *t = calloc(n, sizeof(*t));
	size_t i;

	if (!t) {
		printf("no memory\n");
		exit(1);
	}
	for (i = 0; i < n; i++) {
		t[i].pid = (int)(5000 + 3 * i);
		t[i].job = 7;
		t[i].step = 0;
		t[i].rank = -1;
		t[i].state = 'S';
		t[i].is_python = 1;
		te_strlcpy(t[i].node, "n1", sizeof(t[i].node));
	}
	return t;
}

static double time_pick(const struct te_proc *t, size_t n, size_t *got)
{
	static struct te_rank_proc out[TE_PROC_MAX];
	double v[RUNS], t0;
	int r;

	for (r = 0; r < RUNS; r++) {
		t0 = now_s();
		*got = te_proc_pick_ranks(t, n, 7, 0, out, TE_PROC_MAX);
		v[r] = now_s() - t0;
	}
	return median(v);
}

static void bench_pick(void)
{
	struct te_proc *t = table(2048);
	size_t i, got;
	double s;

	/* every process's parent is outside the step (slurmstepd, init) */
	for (i = 0; i < 2048; i++) {
		t[i].ppid = 1;
		t[i].procid = (long)i;
		t[i].parent_kind = TE_PARENT_STEPD;
		t[i].stepd_job = 7;
		t[i].stepd_step = 0;
	}
	s = time_pick(t, 2048, &got);
	printf("picking ranks, 2048 processes each a task: %8.4f s (%zu ranks)\n",
	       s, got);
	/* 256 tasks (children of slurmstepd), each with 7 data loaders */
	for (i = 0; i < 2048; i++) {
		if (i % 8 == 0) {
			t[i].ppid = 2;
			t[i].procid = (long)(i / 8);
		} else {
			t[i].ppid = t[i - i % 8].pid;
			t[i].procid = (long)(i / 8);
			t[i].parent_kind = TE_PARENT_OTHER;
		}
	}
	s = time_pick(t, 2048, &got);
	printf("picking ranks, 256 tasks x 8 processes:          %8.4f s (%zu "
	       "ranks)\n",
	       s, got);
	free(t);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000;

	if (n < 1 || n > 100000)
		n = 2000;
	bench_reports(n);
	bench_pick();
	return 0;
}
