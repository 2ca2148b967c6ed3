/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the hang report at scale (issue 25, items 2 and 5):
 * 2,000 distinct stacks make a complete, correct text and JSON report;
 * the merger stops at the step's rank count; a record over its 64 KiB
 * (16 threads x 16 frames of 120-byte C++ names) is cut, outermost frames
 * first and marked, never dropped; the thread holding the GIL is kept
 * first, before the thread bound. Not timed: tests/bench/bench_stacks
 * prints the times. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hang/stacks.h"
#include "util/strutil.h"
#include "tap.h"

#define N 2000
#define REPORT_MAX (4u * 1024 * 1024) /* pmix/stacks.c's */

static struct te_proc_stack procs[N], ps, back;
static char report[REPORT_MAX];

/* Rank i of N: its own innermost frame, so that every stack differs. */
static void make_proc(struct te_proc_stack *p, int i)
{
	char fn[64];
	int t, f;

	te_stack_init(p);
	p->rank = i;
	p->pid = 10000 + i;
	te_snprintf(p->node, sizeof(p->node), "gpu%04d", i / 8);
	p->state = 'S';
	p->since_ms = 12000;
	p->cpu_ms = 0;
	for (t = 0; t < 2; t++) {
		te_stack_add_thread(p, p->pid + t);
		for (f = 0; f < 6; f++) {
			if (f == 0)
				te_snprintf(fn, sizeof(fn), "wait_for_rank_%d",
					    i);
			else
				te_snprintf(fn, sizeof(fn), "level_%d", f);
			te_stack_add_frame(p, TE_FRAME_PY, fn, strlen(fn),
					   "/w/train.py", 11, (uint32_t)f, NULL,
					   0, 0);
		}
	}
}

/* strstr's first match, found by memmem: under t90's AddressSanitizer
 * strstr reads its whole haystack byte by byte on every call, and this
 * test's thousands of searches in a report of megabytes took 38 s there
 * (0.3 s without). */
static const char *find(const char *hay, const char *needle)
{
	return memmem(hay, strlen(hay), needle, strlen(needle));
}

/* How many times needle occurs in hay. */
static size_t count(const char *hay, const char *needle)
{
	size_t n = 0, k = strlen(needle);

	while ((hay = find(hay, needle))) {
		n++;
		hay += k;
	}
	return n;
}

static void test_reports(void)
{
	char needle[96];
	const char *at, *prev;
	size_t in_order = 0;
	int i;

	for (i = 0; i < N; i++)
		make_proc(&procs[i], N - 1 - i); /* reversed: sorted */
	ok(te_stack_report_text(report, sizeof(report), procs, N) == 0,
	   "text report of 2,000 distinct stacks: complete (returns 0)");
	is_int(count(report, "trainenv: hang: rank "), N,
	       "... 2,000 groups of one rank each");
	is_int(count(report, "more group"), 0, "... none left out");
	for (i = 0, prev = report; i < N; i++) {
		te_snprintf(needle, sizeof(needle),
			    "trainenv: hang: rank %d on "
			    "gpu%04d (1 rank, pid %d)",
			    i, i / 8, 10000 + i);
		at = find(report, needle);
		te_snprintf(needle, sizeof(needle), "in wait_for_rank_%d\n", i);
		if (at && at >= prev && find(at, needle) &&
		    (i == N - 1 ||
		     find(at, needle) < find(at + 1, "trainenv: hang:")))
			in_order++;
		prev = at ? at : prev;
	}
	is_int(in_order, N,
	       "... each rank's group in rank order, with its node, "
	       "pid and its own frame");
	is_int(count(report, "in level_5\n"), 2 * N,
	       "... every thread's frames");

	ok(te_stack_report_json(report, sizeof(report), procs, N) == 0,
	   "JSON report of 2,000 distinct stacks: complete (returns 0)");
	is_int(count(report, "{\"count\":1,\"ranks\":["), N,
	       "... 2,000 groups");
	ok(find(report, "\"more_groups\":0}\n") != NULL, "... none left out");
	for (i = 0, in_order = 0, prev = report; i < N; i++) {
		te_snprintf(needle, sizeof(needle),
			    "{\"count\":1,\"ranks\":[%d],"
			    "\"nodes\":\"gpu%04d\"",
			    i, i / 8);
		at = find(report, needle);
		te_snprintf(needle, sizeof(needle),
			    "\"function\":"
			    "\"wait_for_rank_%d\"",
			    i);
		if (at && at >= prev && find(at, needle) &&
		    (i == N - 1 ||
		     find(at, needle) < find(at + 1, "{\"count\":")))
			in_order++;
		prev = at ? at : prev;
	}
	is_int(in_order, N,
	       "... each rank's group in order, with its own frame");
	is_int(count(report, "{"), count(report, "}"), "... braces balance");
	is_int(count(report, "["), count(report, "]"), "... brackets balance");

	/* a buffer too small: groups left out, and said */
	ok(te_stack_report_text(report, 100000, procs, N) < 0 &&
		   find(report, "more groups\n") != NULL,
	   "a small buffer: the text says how many groups are left out");
	ok(te_stack_report_json(report, 100000, procs, N) < 0 &&
		   !find(report, "\"more_groups\":0}"),
	   "... and the JSON counts them");
}

/* Records of n processes, ranks 0..n-1, world w, and noise between. */
static size_t records(char *buf, size_t len, int n, int w)
{
	size_t off = 0;
	int i;

	for (i = 0; i < n; i++) {
		make_proc(&ps, i);
		ps.world = w;
		if (off + 2048 > len)
			break;
		off += strlen(strcpy(
			buf + off, i % 100 == 7 ? "srun: a stray line\n" : ""));
		if (te_stack_wire_encode(buf + off, len - off, &ps) < 0)
			break;
		off += strlen(buf + off);
	}
	return off;
}

static void test_merge(void)
{
	size_t len = 3000 * 1200, got;
	char *buf = malloc(len);
	struct te_proc_stack *m = NULL;
	int left = 0, good = 0;
	long n, i;

	if (!buf) {
		ok(0, "no memory");
		return;
	}
	got = records(buf, len, 3000, -1);
	n = te_stack_merge(buf, got, 2000, 300, &m, &left);
	for (i = 0; i < n; i++)
		good += m[i].rank == i;
	ok(n == 2000 && left && good == 2000,
	   "merger: 3,000 records of a 2,000-rank step: it stops at 2,000, "
	   "says some were left out (stray lines skipped)");
	n = te_stack_merge(buf, got, 3000, 300, &m, &left);
	ok(n == 3000 && !left, "merger: 3,000 of 3,000: all, nothing left out");

	got = records(buf, len, 16, 16);
	n = te_stack_merge(buf, got, 2, 2, &m, &left);
	ok(n == 16 && !left, "merger: a torchrun step (2 tasks) whose records "
			     "say WORLD_SIZE 16: its 16 ranks");
	/* the job's own processes set WORLD_SIZE: what a record claims
	 * never raises the limit past what the step's tasks can stand for */
	got = records(buf, len, 2100, 1 << 30);
	n = te_stack_merge(buf, got, 2, 2, &m, &left);
	ok(n == 2 * TE_STACK_TASK_WORKERS && left,
	   "merger: records claiming WORLD_SIZE 2^30 in a 2-task step: "
	   "2 x %d (the workers a task may stand for) at most, not what "
	   "2 nodes can send (2 x %d); got %ld",
	   TE_STACK_TASK_WORKERS, TE_STACK_NODE_RANKS, n);
	n = te_stack_merge(buf, got, 4, 1, &m, &left);
	ok(n == 4 * TE_STACK_TASK_WORKERS && left,
	   "merger: 4 tasks on one node: 4 x %d; got %ld",
	   TE_STACK_TASK_WORKERS, n);
	got = records(buf, len, 3, -1);
	n = te_stack_merge(buf, got - 5, 3, 1, &m, &left);
	ok(n == 2 && !left, "merger: a record cut at the end is not taken");
	free(m);
	free(buf);
}

/* 16 threads x 16 frames of 120-byte C++ names (the same stack in every
 * thread, as a pool of workers has). */
static void big_stack(struct te_proc_stack *p)
{
	char fn[TE_STACK_NAME_MAX + 1], fi[TE_STACK_NAME_MAX + 1],
		li[TE_STACK_NAME_MAX + 1];
	int t, f;

	te_stack_init(p);
	p->rank = 5;
	p->pid = 777;
	te_strlcpy(p->node, "n2", sizeof(p->node));
	p->state = 'S';
	for (t = 0; t < 16; t++) {
		te_stack_add_thread(p, 777 + t);
		for (f = 0; f < 16; f++) {
			te_snprintf(fn, sizeof(fn),
				    "c10d::ProcessGroupNCCL::"
				    "WorkNCCL<%02d>::wait(std::chrono::duration"
				    "<long, std::ratio<1l, 1000l> > const&) "
				    "[clone .cold.%02d]",
				    f, f);
			memset(fn + strlen(fn), '*',
			       sizeof(fn) - 1 - strlen(fn));
			fn[TE_STACK_NAME_MAX] = '\0';
			te_snprintf(
				fi, sizeof(fi),
				"/build/pytorch/torch/csrc/"
				"distributed/c10d/ProcessGroupNCCL_%02d.cpp",
				f);
			memset(fi + strlen(fi), '~',
			       sizeof(fi) - 1 - strlen(fi));
			fi[TE_STACK_NAME_MAX] = '\0';
			memset(li, '+', TE_STACK_NAME_MAX);
			li[TE_STACK_NAME_MAX] = '\0';
			te_stack_add_frame(p, TE_FRAME_NATIVE, fn, strlen(fn),
					   fi, strlen(fi), (uint32_t)(100 + f),
					   li, strlen(li),
					   0x7f0000001000ull + f);
		}
	}
}

static void test_cut(void)
{
	static char rec[TE_STACK_RECORD_MAX], big[1 << 20];
	char err[160];
	size_t used, t, j, same = 0, depth;
	int rc;

	big_stack(&ps);
	ok(ps.nthreads == 16 && ps.nframes == 256 &&
		   strlen(te_frame_str(&ps, ps.frames[255].func)) == 120,
	   "a process of 16 threads x 16 frames "
	   "of 120-byte C++ names");
	rc = te_stack_wire_encode(big, sizeof(big), &ps);
	used = strlen(big);
	ok(rc == 0 && used > sizeof(rec),
	   "... whose whole record is over 64 "
	   "KiB (%zu bytes)",
	   used);
	rc = te_stack_wire_encode(rec, sizeof(rec), &ps);
	is_int(rc, 1, "into 64 KiB: written, cut to fit (was: dropped)");
	ok(te_stack_wire_decode(rec, strlen(rec), &used, &back, err,
				sizeof(err)) == 0 &&
		   used == strlen(rec),
	   "... the cut record decodes");
	depth = back.threads[0].count;
	for (t = 0; t < back.nthreads; t++) {
		int ok1 = back.threads[t].count == depth && back.threads[t].cut;

		for (j = 0; j < back.threads[t].count; j++)
			ok1 &= !strcmp(
				te_frame_str(
					&back,
					back.frames[back.threads[t].first + j]
						.func),
				te_frame_str(&ps,
					     ps.frames[ps.threads[t].first + j]
						     .func));
		same += ok1;
	}
	ok(back.nthreads == 16 && same == 16 && depth >= 1 && depth < 16,
	   "... every thread kept, its %zu innermost frames (the outermost cut), "
	   "marked cut",
	   depth);
	like(back.note, "stack cut to fit its record (outermost frames first)",
	     "... and the note says so");
	is_int(back.rank, 5, "... the rank is there");
	ok(te_stack_report_text(report, sizeof(report), &back, 1) == 0 &&
		   find(report, "trainenv: hang: rank 5 on n2") &&
		   find(report, "... more frames not shown") &&
		   find(report, "note: stack cut to fit"),
	   "... and the text report names rank 5, its cut threads and the note");

	te_strlcpy(ps.note, "gdb took more than 8 s", sizeof(ps.note));
	ok(te_stack_wire_encode(rec, sizeof(rec), &ps) == 1 &&
		   te_stack_wire_decode(rec, strlen(rec), &used, &back, err,
					sizeof(err)) == 0 &&
		   !strcmp(back.note,
			   "gdb took more than 8 s; stack cut to fit its "
			   "record (outermost frames first)"),
	   "a note the collector had is kept before it");
	rc = te_stack_wire_encode(rec, 4096, &ps);
	if (rc < 0 || te_stack_wire_decode(rec, strlen(rec), &used, &back, err,
					   sizeof(err)) < 0)
		rc = -1;
	ok(rc == 1 && back.nthreads >= 1 && back.nthreads < 16 &&
		   back.threads[0].count == 1 &&
		   back.threads[back.nthreads - 1].count == 1 &&
		   back.threads_cut == 16 - back.nthreads && back.rank == 5,
	   "into 4 KiB: the innermost frame of the first %u threads, the "
	   "others counted as left out, the rank still listed",
	   (unsigned)back.nthreads);
	ok(te_stack_wire_encode(rec, 600, &ps) == 1 &&
		   te_stack_wire_decode(rec, strlen(rec), &used, &back, err,
					sizeof(err)) == 0 &&
		   back.rank == 5 && back.nframes == 0 &&
		   back.nthreads + back.threads_cut == 16,
	   "into 600 bytes: no frame fits, the rank is still listed");
	ok(te_stack_wire_encode(rec, 100, &ps) < 0 && rec[0] == '\0',
	   "into 100 bytes (not even the proc line): -1, nothing written");
}

/* gdb's output for a Python process: 20 threads sleeping in Python (16
 * frames each, gdb's order), then the GIL holder (LWP 9020, busy_holder),
 * each thread's py-bt then its bt; with the holder's line when said. */
static size_t gil_output(char *buf, size_t len, int said)
{
	size_t o = 0;
	int t, f;

	if (said)
		o += (size_t)snprintf(buf + o, len - o,
				      "trainenv-gil-holder LWP 9020\n");
	for (t = 0; t <= 20 && o < len; t++) {
		int lwp = t < 20 ? 9000 + t : 9020;

		o += (size_t)snprintf(buf + o, len - o,
				      "\nThread %d (Thread 0x7f%04x (LWP %d) "
				      "\"python3\"):\nTraceback (most recent "
				      "call first):\n",
				      30 - t, t, lwp);
		for (f = 0; f < (t < 20 ? 16 : 3) && o < len; f++)
			o += (size_t)snprintf(
				buf + o, len - o,
				"  File \"/w/train.py\", line %d, in %s\n",
				f + 1,
				t < 20 ? "py_sleeper_inner" : "busy_holder");
	}
	for (t = 0; t <= 20 && o < len; t++)
		o += (size_t)snprintf(buf + o, len - o,
				      "\nThread %d (Thread 0x7f%04x (LWP %d) "
				      "\"python3\"):\n#0  0x00007f in "
				      "__futex_abstimed_wait_common () from "
				      "libc.so.6\n",
				      30 - t, t, t < 20 ? 9000 + t : 9020);
	if (o < len)
		o += (size_t)snprintf(buf + o, len - o,
				      "[Inferior 1 (process 9000) detached]\n");
	return o < len ? o : 0;
}

/* The thread holding the GIL is kept first, whatever the bounds cut. */
static void test_gil_first(void)
{
	static char out[32768];
	size_t n = gil_output(out, sizeof(out), 1);

	ok(n > 0, "gdb's output of 21 Python threads made (%zu bytes)", n);
	te_stack_init(&ps);
	te_stack_parse_gdb(out, n, 1, &ps);
	ok(ps.nthreads == TE_STACK_THREADS && ps.threads_cut == 5,
	   "the 16-thread bound: 16 kept, 5 left out (%u, %u)",
	   (unsigned)ps.nthreads, (unsigned)ps.threads_cut);
	ok(ps.threads[0].lwp == 9020 && ps.threads[0].count == 3 &&
		   !strcmp(te_frame_str(&ps,
					ps.frames[ps.threads[0].first].func),
			   "busy_holder"),
	   "the GIL holder, gdb's last thread, is kept first with its 3 "
	   "frames (first thread: LWP %d)",
	   ps.threads[0].lwp);
	ok(ps.threads[1].lwp == 9000 && ps.threads[15].lwp == 9014,
	   "... then the others in gdb's order (LWP %d .. %d)",
	   ps.threads[1].lwp, ps.threads[15].lwp);
	is_str(ps.note, "", "... with no note");

	n = gil_output(out, sizeof(out), 0);
	te_stack_init(&ps);
	te_stack_parse_gdb(out, n, 1, &ps);
	ok(ps.nthreads == TE_STACK_THREADS && ps.threads[0].lwp == 9000 &&
		   ps.threads[15].lwp == 9015,
	   "without the holder's line: gdb's order, the first 16 threads");
}

int main(void)
{
	test_reports();
	test_merge();
	test_cut();
	test_gil_first();
	return tap_done();
}
