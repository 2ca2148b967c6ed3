/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the hang report's stacks (core/hang/stacks*.c): gdb's real
 * output (tests/unit/data/stacks/, made by capture.sh), noise, garbage and
 * bounds; grouping; rank and node lists; the text and JSON reports; the
 * wire format's round trip and refusals. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hang/stacks.h"
#include "util/strutil.h"
#include "util/sysutil.h"
#include "tap.h"

static char fixture[65536];

static size_t load(const char *name)
{
	char path[512];
	ssize_t n;

	te_snprintf(path, sizeof(path), "%s/%s", TE_STACKDATA, name);
	n = te_read_small(path, fixture, sizeof(fixture), TE_READ_WHOLE);
	if (n < 0) {
		printf("# cannot read %s\n", path);
		fixture[0] = '\0';
		return 0;
	}
	return (size_t)n;
}

static const struct te_frame *fr(const struct te_proc_stack *ps, size_t t,
				 size_t i)
{
	static const struct te_frame none;

	if (t >= ps->nthreads || i >= ps->threads[t].count)
		return &none;
	return &ps->frames[ps->threads[t].first + i];
}

#define FN(ps, t, i) te_frame_str(ps, fr(ps, t, i)->func)
#define FI(ps, t, i) te_frame_str(ps, fr(ps, t, i)->file)
#define LI(ps, t, i) te_frame_str(ps, fr(ps, t, i)->lib)
#define LN(ps, t, i) fr(ps, t, i)->line

static struct te_proc_stack ps, ps2;

static void test_fixtures(void)
{
	unsigned fl;
	size_t n;

	te_stack_init(&ps);
	fl = te_stack_parse_gdb(fixture, load("py_threads.txt"), 1, &ps);
	ok((fl & TE_GDB_DETACHED) && !(fl & TE_GDB_NO_PYBT),
	   "py_threads: ran to the end, py-bt there");
	is_int(ps.nthreads, 2, "py_threads: two threads with Python frames");
	is_int(ps.threads_nopy, 1, "py_threads: the pthread one counted apart");
	is_str(ps.note, "", "py_threads: no note");
	is_int(fr(&ps, 0, 0)->kind, TE_FRAME_PY, "frames are Python frames");
	is_str(FN(&ps, 0, 0), "built-in method sleep",
	       "the built-in called, without its address");
	is_str(FI(&ps, 0, 0), "", "a built-in has no file");
	ok(!strcmp(FN(&ps, 0, 1), "save_final") &&
		   !strcmp(FI(&ps, 0, 1), "/tmp/job/train.py") &&
		   LN(&ps, 0, 1) == 4,
	   "thread 3: save_final at train.py:4 (most recent first)");
	ok(!strcmp(FN(&ps, 0, 2), "writer") && LN(&ps, 0, 2) == 7,
	   "then writer at line 7");
	ok(!strcmp(FN(&ps, 0, 5), "_bootstrap") &&
		   !strcmp(FI(&ps, 0, 5), "/usr/lib/python3.11/threading.py") &&
		   LN(&ps, 0, 5) == 995 && ps.threads[0].count == 6,
	   "the outermost frame last: threading's _bootstrap (6 frames)");
	ok(!strcmp(FN(&ps, 1, 1), "common") && LN(&ps, 1, 1) == 16 &&
		   !strcmp(FN(&ps, 1, 3), "<module>") && LN(&ps, 1, 3) == 23,
	   "main thread: common at 16 ... <module> at 23");
	is_int(ps.threads[1].lwp, 7626, "the thread's LWP read");

	te_stack_init(&ps);
	fl = te_stack_parse_gdb(fixture, load("py_nodbg.txt"), 1, &ps);
	ok(fl & TE_GDB_NO_PYBT, "py_nodbg: gdb said py-bt is undefined");
	is_int(ps.nthreads, 3, "py_nodbg: native frames of all three threads");
	like(ps.note, "python3-dbg", "py_nodbg: the note names the package");
	ok(!strcmp(FN(&ps, 0, 0), "__GI___clock_nanosleep") &&
		   !strcmp(FI(&ps, 0, 0),
			   "../sysdeps/unix/sysv/linux/clock_nanosleep.c") &&
		   LN(&ps, 0, 0) == 48 &&
		   fr(&ps, 0, 0)->addr == 0x7efd246f2545ull,
	   "#0: function, file, line and address");
	ok(!strcmp(FN(&ps, 0, 2), "time_sleep") && fr(&ps, 0, 2)->addr == 0 &&
		   LN(&ps, 0, 2) == 383,
	   "an inlined frame (no address)");
	is_str(FN(&ps, 1, 0), "__libc_pause", "the pthread's pause()");

	te_stack_init(&ps);
	fl = te_stack_parse_gdb(fixture, load("c_read.txt"), 0, &ps);
	ok(ps.nthreads == 1 && ps.threads[0].count == 3,
	   "c_read: one thread, three frames");
	ok(!strcmp(FN(&ps, 0, 0), "__GI___libc_read") && LN(&ps, 0, 0) == 26 &&
		   !strcmp(FN(&ps, 0, 1), "wait_input") &&
		   !strcmp(FI(&ps, 0, 1), "blockread.c") &&
		   LN(&ps, 0, 1) == 2 && !strcmp(FN(&ps, 0, 2), "main"),
	   "c_read: read < wait_input < main");
	is_str(ps.note, "", "c_read: no note (not Python: no py-bt is fine)");

	te_stack_init(&ps);
	te_stack_parse_gdb(fixture, load("c_stripped.txt"), 0, &ps);
	ok(!strcmp(FN(&ps, 0, 0), "read") &&
		   !strcmp(LI(&ps, 0, 0), "libc.so.6") && !FI(&ps, 0, 0)[0],
	   "c_stripped: read () from libc.so.6");
	ok(!strcmp(FN(&ps, 0, 1), "??") && !LI(&ps, 0, 1)[0] &&
		   !strcmp(FN(&ps, 0, 3), "??") &&
		   !strcmp(LI(&ps, 0, 3), "libc.so.6"),
	   "c_stripped: ?? frames, with and without a library");
	is_int(ps.threads[0].count, 6, "c_stripped: six frames");

	te_stack_init(&ps);
	fl = te_stack_parse_gdb(fixture, load("ptrace_denied.txt"), 1, &ps);
	ok((fl & TE_GDB_DENIED) && ps.nthreads == 0,
	   "ptrace refused: no stack");
	is_str(ps.note,
	       "gdb could not attach: ptrace: Operation not permitted.",
	       "ptrace refused: the note quotes gdb");

	/* Cut output: what came is kept, the note says so. */
	n = load("c_read.txt");
	te_stack_init(&ps);
	te_stack_parse_gdb(fixture, n * 3 / 4, 0, &ps);
	ok(ps.nthreads == 1 && ps.threads[0].count >= 1 &&
		   strstr(ps.note, "ended early"),
	   "truncated output: partial, noted");
	te_stack_init(&ps);
	te_snprintf(ps.note, sizeof(ps.note), "gdb timed out after 5 s");
	te_stack_parse_gdb(fixture, n / 2, 0, &ps);
	is_str(ps.note, "gdb timed out after 5 s",
	       "a collector's note is kept");

	/* A real frame whose arguments hold quoted parentheses. */
	load("py_threads.txt");
	{
		char *l = strstr(fixture, " in pyrun_file (");
		char *e = l ? strchr(l, '\n') : NULL;

		while (l && l > fixture && l[-1] != '\n')
			l--;
		te_stack_init(&ps);
		te_stack_parse_gdb(l ? l : "", e ? (size_t)(e - l) : 0, 0, &ps);
		ok(!strcmp(FN(&ps, 0, 0), "pyrun_file") &&
			   !strcmp(FI(&ps, 0, 0), "../Python/pythonrun.c") &&
			   LN(&ps, 0, 0) == 1630,
		   "args with quotes and parentheses");
	}
}

static void parse_str(const char *s, int is_python)
{
	te_stack_init(&ps);
	te_stack_parse_gdb(s, strlen(s), is_python, &ps);
}

static void test_hostile(void)
{
	static char big[40000];
	size_t i;

	parse_str(
		"warning: something\nThread 1 (LWP 5):\n"
		"#0  0x0000000000401000 in f (s=0x1 \"a) at b.c:1\") at real.c:9\n"
		"Backtrace stopped: corrupt stack?\n"
		"#1  0x0000000000401000 in \n#2  0x12 garbage\n"
		"#3  <signal handler called>\n"
		"#4  0x1 in std::thread::_State_impl<std::tuple<void (*)(int), "
		"int> >::_M_run() () from /usr/lib/x86_64-linux-gnu/libstdc++.so.6\n"
		"#5  0x2 in g (a=\"unclosed) at x.c:7\n",
		0);
	ok(!strcmp(FN(&ps, 0, 0), "f") && !strcmp(FI(&ps, 0, 0), "real.c") &&
		   LN(&ps, 0, 0) == 9,
	   "quotes in arguments do not end them");
	is_str(FN(&ps, 0, 1), "<signal handler called>", "signal frame kept");
	ok(!strcmp(FN(&ps, 0, 2), "std::thread::_State_impl<std::tuple<void "
				  "(*)(int), int> >::_M_run()") &&
		   !strcmp(LI(&ps, 0, 2), "libstdc++.so.6"),
	   "a C++ template name");
	ok(!strcmp(FN(&ps, 0, 3), "g") && !strcmp(FI(&ps, 0, 3), "x.c") &&
		   LN(&ps, 0, 3) == 7,
	   "unbalanced arguments: the last \" at \"");
	is_int(ps.threads[0].count, 4, "garbage frame lines skipped");

	parse_str("Thread 1 (LWP 1):\nTraceback (most recent call first):\n"
		  "  File \"a.py\", line x, in f\n  File \"b\", line 3\n"
		  "  File \"c.py\", line 2, in \x1b[31mred\n"
		  "  File \"d\", line 5, in g\", line 9, in h\n",
		  1);
	ok(ps.threads[0].count == 2 && !strcmp(FN(&ps, 0, 0), "?[31mred") &&
		   !strcmp(FN(&ps, 0, 1), "g\", line 9, in h") &&
		   LN(&ps, 0, 1) == 5,
	   "malformed File lines skipped, control bytes as '?'");
	parse_str("  File \"a.py\", line 1, in f\n", 1);
	is_int(ps.nthreads, 0,
	       "a File line outside a traceback is not a frame");

	for (i = 0, big[0] = '\0'; i < 100; i++)
		te_appendf(big, sizeof(big),
			   "#%zu  0x1 in f%zu () from /l/x.so\n", i, i);
	parse_str(big, 0);
	ok(ps.threads[0].count == TE_STACK_FRAMES && ps.threads[0].cut,
	   "100 frames: %d kept, the thread marked cut", TE_STACK_FRAMES);
	for (i = 0, big[0] = '\0'; i < 20; i++)
		te_appendf(big, sizeof(big),
			   "Thread %zu (LWP %zu):\n#0  0x1 in "
			   "f () at a.c:1\n",
			   i + 1, i + 1);
	parse_str(big, 0);
	ok(ps.nthreads == TE_STACK_THREADS && ps.threads_cut == 4,
	   "20 threads: 16 kept, 4 counted as cut");
	te_snprintf(big, sizeof(big), "#0  0x1 in ");
	for (i = 0; i < 300; i++)
		te_appendf(big, sizeof(big), "x");
	te_appendf(big, sizeof(big), " () at a.c:1\n");
	parse_str(big, 0);
	ok(strlen(FN(&ps, 0, 0)) == TE_STACK_NAME_MAX &&
		   !strcmp(FN(&ps, 0, 0) + TE_STACK_NAME_MAX - 3, "...") &&
		   (fr(&ps, 0, 0)->flags & TE_FRAME_CUT),
	   "a long name cut and marked");
	for (i = 0, big[0] = '\0'; i < 200; i++)
		te_appendf(big, sizeof(big),
			   "%s#0  0x1 in f%zu%0100d () at a.c:1\n",
			   i % 16 ? "" : "Thread 1 (LWP 1):\n", i, 0);
	parse_str(big, 0);
	ok(ps.text_used <= TE_STACK_TEXT && ps.nframes < 200,
	   "distinct long names: the text bound holds (%u frames)",
	   (unsigned)ps.nframes);
	for (i = 0; i < sizeof(big) - 1; i++)
		big[i] = (char)(i * 7919 % 251 + 1);
	big[sizeof(big) - 1] = '\0';
	parse_str(big, 1);
	ok(ps.nframes == 0 && !strcmp(ps.note, "no stack in gdb's output"),
	   "garbage: no frame, and the note says so");
	parse_str("", 1);
	ok(ps.nthreads == 0, "empty output: nothing");
}

/* A one-thread Python stack: <built-in>, FUNC at train.py:LINE, main. */
static void mk(struct te_proc_stack *p, int rank, const char *node, int pid,
	       const char *func, uint32_t line)
{
	te_stack_init(p);
	p->rank = rank;
	p->pid = pid;
	te_strlcpy(p->node, node, sizeof(p->node));
	p->state = 'S';
	te_strlcpy(p->wchan, "hrtimer_nanosleep", sizeof(p->wchan));
	p->cpu_ms = 0;
	p->since_ms = 12000;
	te_stack_add_thread(p, pid);
	te_stack_add_frame(p, TE_FRAME_PY, "built-in method sleep", 21, "", 0,
			   0, "", 0, 0);
	te_stack_add_frame(p, TE_FRAME_PY, func, strlen(func), "train.py", 8,
			   line, "", 0, 0);
	te_stack_add_frame(p, TE_FRAME_PY, "main", 4, "train.py", 8, 30, "", 0,
			   0);
}

static struct te_proc_stack six[6];
static char out[65536];

static void test_groups(void)
{
	static const char *nodes[6] = { "n1", "n1", "n2", "n2", "n3", "n3" };
	struct te_stack_group g[6];
	size_t order[6], i;
	long ng;

	for (i = 0; i < 6; i++)
		mk(&six[i], (int)i, nodes[i], 100 + (int)i,
		   i == 1 ? "odd_one" : "common", i == 1 ? 9 : 12);
	six[3].frames[0].addr = 0xdead; /* addresses and LWPs never count */
	six[3].threads[0].lwp = 1;
	ng = te_stack_group(six, 6, order, g, 6);
	is_int(ng, 2, "6 ranks: two groups");
	ok(g[0].count == 1 && order[g[0].first] == 1,
	   "the outlier (rank 1) first");
	ok(g[1].count == 5 && order[1] == 0 && order[2] == 2 && order[5] == 5,
	   "then ranks 0,2-5 in rank order");
	te_stack_report_text(out, sizeof(out), six, 6);
	like(out,
	     "trainenv: hang: rank 1 on n1 (1 rank, pid 101): state S "
	     "(sleeping, wchan hrtimer_nanosleep), 12.0 s since the first exit, "
	     "cpu 0.0 s\n",
	     "the outlier's header line");
	like(out, "    File \"train.py\", line 9, in odd_one\n",
	     "its frame, indented");
	like(out,
	     "trainenv: hang: ranks 0,2-5 on n1-n3 (5 ranks): states 5 S "
	     "(sleeping), wchan hrtimer_nanosleep",
	     "the merged group's header");
	ok(strstr(out, "odd_one") < strstr(out, "ranks 0,2-5"),
	   "outliers printed first");
	six[4].cpu_ms = 3250;
	six[5].state = 'R';
	six[5].wchan[0] = '\0'; /* wchans differ: none shown */
	te_stack_report_text(out, sizeof(out), six, 6);
	like(out,
	     "states 4 S (sleeping), 1 R (running), 12.0 s since the first "
	     "exit, cpu 0.0-3.2 s",
	     "states counted, cpu as a range");

	/* Thread order does not matter; lines do; ties by lowest rank. */
	mk(&ps, 7, "n1", 1, "a", 1);
	te_stack_add_thread(&ps, 2);
	te_stack_add_frame(&ps, TE_FRAME_PY, "b", 1, "t.py", 4, 2, "", 0, 0);
	te_stack_init(&ps2);
	te_stack_add_thread(&ps2, 5);
	te_stack_add_frame(&ps2, TE_FRAME_PY, "b", 1, "t.py", 4, 2, "", 0, 0);
	te_stack_add_thread(&ps2, 6);
	for (i = 0; i < 3; i++)
		te_stack_add_frame(&ps2, TE_FRAME_PY,
				   te_frame_str(&ps, ps.frames[i].func),
				   strlen(te_frame_str(&ps, ps.frames[i].func)),
				   te_frame_str(&ps, ps.frames[i].file),
				   strlen(te_frame_str(&ps, ps.frames[i].file)),
				   ps.frames[i].line, "", 0, 0);
	ok(te_stack_same(&ps, &ps2) &&
		   te_stack_hash(&ps) == te_stack_hash(&ps2),
	   "the same threads in another order: the same signature");
	ps2.frames[0].line = 3;
	ok(!te_stack_same(&ps, &ps2), "another line: another signature");
	mk(&six[0], 9, "n1", 1, "x", 1);
	mk(&six[1], 3, "n1", 2, "y", 1);
	mk(&six[2], 5, "n1", 3, "z", 1);
	ng = te_stack_group(six, 3, order, g, 2);
	ok(ng == 3 && order[0] == 1 && order[1] == 2,
	   "groups of one: lowest rank first; only gmax written");
}

static void test_lists(void)
{
	static int many[10000];
	static const char *n3[] = { "n3", "n1", "n2", "n1" };
	static const char *pad[] = { "n02",  "n01",   "n03", "n9", "n10",
				     "gpu2", "login", "a",   "a1" };
	int r[] = { -1, 0, 2, 3, 3, 4, 5, 9 };
	char b[64];
	size_t i;

	ok(te_ranks_format(b, sizeof(b), r, 0) == 0 && !b[0], "no ranks: \"\"");
	te_ranks_format(b, sizeof(b), r + 7, 1);
	is_str(b, "9", "one rank");
	te_ranks_format(b, sizeof(b), r, 8);
	is_str(b, "0,2-5,9", "gaps, a duplicate, an unknown rank skipped");
	for (i = 0; i < 10000; i++)
		many[i] = (int)i;
	te_ranks_format(b, sizeof(b), many, 10000);
	is_str(b, "0-9999", "10000 ranks: one range");
	for (i = 0; i < 10000; i++)
		many[i] = (int)i * 2;
	ok(te_ranks_format(b, sizeof(b), many, 10000) < 0 &&
		   strlen(b) < sizeof(b) && !strcmp(b + strlen(b) - 4, ",..."),
	   "10000 scattered ranks: cut with \",...\" (%s)", b);
	ok(te_ranks_format(b, 1, r, 8) < 0 && !b[0], "a 1-byte buffer: \"\"");
	ok(te_ranks_format(b, 0, r, 8) < 0, "a 0-byte buffer: refused");
	te_nodes_format(b, sizeof(b), n3, 4);
	is_str(b, "n1-n3", "n3,n1,n2,n1: n1-n3");
	te_nodes_format(b, sizeof(b), n3, 1);
	is_str(b, "n3", "one node");
	te_nodes_format(b, sizeof(b), pad, 9);
	is_str(b, "a,a1,gpu2,login,n01-n03,n9-n10",
	       "prefixes, widths, names without a number");
	ok(te_nodes_format(b, 12, pad, 9) < 0 && !strcmp(b, "a,a1,..."),
	   "a short buffer: cut at an item");
}

static void test_json(void)
{
	char b[64] = "x";

	ok(te_json_str_append(b, sizeof(b), "a\"b\\c\n\x01\xc3\xa9") == 0,
	   "escaped");
	is_str(b, "x\"a\\\"b\\\\c\\n\\u0001\xc3\xa9\"",
	       "quote, backslash, newline and control bytes escaped, UTF-8 "
	       "kept (test_textbuf has the rest)");
	te_strlcpy(b, "ab", sizeof(b));
	ok(te_json_str_append(b, 8, "abcdefgh") < 0 && !strcmp(b, "ab"),
	   "too long: refused, buffer left as it was");
	for (int i = 0; i < 6; i++)
		mk(&six[i], i, "n1", 100 + i, i == 1 ? "odd_one" : "common", 5);
	te_strlcpy(six[1].note, "tab\there", sizeof(six[1].note));
	ok(te_stack_report_json(out, sizeof(out), six, 6) == 0, "JSON report");
	like(out,
	     "{\"groups\":[{\"count\":1,\"ranks\":[1],\"nodes\":\"n1\","
	     "\"note\":\"tab\\u0009here\"",
	     "the outlier first, note escaped");
	like(out,
	     "\"frames\":[{\"kind\":\"py\",\"function\":\"built-in method "
	     "sleep\",\"file\":\"\",\"line\":0,\"cut\":false}",
	     "frames");
	like(out, "\"ranks\":[0,2,3,4,5]", "the merged group's ranks");
	like(out, "],\"more_groups\":0}\n", "nothing left out");
	ok(te_stack_report_json(out, 700, six, 6) < 0 &&
		   strstr(out, "\"more_groups\":1}\n") && strlen(out) < 700,
	   "a short buffer: groups left out, counted, still closed");
	ok(te_stack_report_json(out, 80, six, 6) < 0 &&
		   !strcmp(out, "{\"groups\":[],\"more_groups\":2}\n"),
	   "no room for a group: an empty list");
	ok(te_stack_report_text(out, 200, six, 6) < 0 &&
		   !strcmp(out, "trainenv: hang: ... 2 more groups\n"),
	   "text: no room: \"... 2 more groups\"");
	ok(te_stack_report_text(out, 450, six, 6) < 0 &&
		   strstr(out, "odd_one") && strstr(out, "... 1 more group\n"),
	   "text: one group fits, the other counted");
	ok(te_stack_report_text(out, 1, six, 6) < 0 && !out[0], "1 byte: \"\"");
}

static int stack_equal(const struct te_proc_stack *a,
		       const struct te_proc_stack *b)
{
	size_t i;

	if (!te_stack_same(a, b) || a->rank != b->rank || a->pid != b->pid ||
	    strcmp(a->node, b->node) || a->state != b->state ||
	    strcmp(a->wchan, b->wchan) || a->cpu_ms != b->cpu_ms ||
	    a->since_ms != b->since_ms || a->threads_nopy != b->threads_nopy ||
	    a->threads_cut != b->threads_cut || a->nframes != b->nframes)
		return 0;
	for (i = 0; i < a->nthreads; i++)
		if (a->threads[i].lwp != b->threads[i].lwp ||
		    a->threads[i].cut != b->threads[i].cut ||
		    a->threads[i].count != b->threads[i].count)
			return 0;
	for (i = 0; i < a->nframes; i++)
		if (a->frames[i].addr != b->frames[i].addr ||
		    a->frames[i].flags != b->frames[i].flags ||
		    a->frames[i].kind != b->frames[i].kind ||
		    strcmp(te_frame_str(a, a->frames[i].func),
			   te_frame_str(b, b->frames[i].func)))
			return 0;
	return 1;
}

static char wire[200000];

static int refused(const char *text, const char *why)
{
	char err[256];
	size_t used;
	int rc = te_stack_wire_decode(text, strlen(text), &used, &ps2, err,
				      sizeof(err));

	if (rc == 0 || !strstr(err, why))
		printf("# rc %d, err \"%s\"\n", rc, err);
	return rc < 0 && strstr(err, why) != NULL;
}

#define HEAD                                                    \
	"TE-STACK1 proc rank=4 pid=7 node=n3 state=S cpu_ms=0 " \
	"since_ms=-1 wchan=- nopy=0 tcut=0 note=-\n"

static void test_wire(void)
{
	static const char *files[] = { "py_threads.txt", "c_stripped.txt",
				       "c_read.txt" };
	char err[256], big[3000];
	size_t used, i, off;

	for (i = 0; i < 3; i++) {
		te_stack_init(&ps);
		te_stack_parse_gdb(fixture, load(files[i]), 1, &ps);
		ps.rank = (int)i;
		ps.pid = 4242;
		te_strlcpy(ps.node, "node-7.a", sizeof(ps.node));
		ps.state = 'D';
		te_strlcpy(ps.wchan, "io_schedule", sizeof(ps.wchan));
		ps.cpu_ms = 1250;
		ps.since_ms = 12000;
		ok(te_stack_wire_encode(wire, sizeof(wire), &ps) == 0 &&
			   te_stack_wire_decode(wire, strlen(wire), &used, &ps2,
						err, sizeof(err)) == 0 &&
			   used == strlen(wire) && stack_equal(&ps, &ps2),
		   "%s: encode, decode: the same", files[i]);
	}
	mk(&ps, -1, "", 0, "-", 3);
	te_stack_add_frame(&ps, TE_FRAME_NATIVE, "sp ace%\xc3\xa9", 9, "", 0, 0,
			   "lib.so", 6, 0xffffffffffffffffull);
	ps.frames[ps.nframes - 1].flags = TE_FRAME_CUT;
	te_strlcpy(ps.note, "gdb timed out after 5 s", sizeof(ps.note));
	ps.threads_nopy = 3;
	off = 0;
	ok(te_stack_wire_encode(wire, sizeof(wire), &ps) == 0 &&
		   te_stack_wire_encode(wire + strlen(wire),
					sizeof(wire) - strlen(wire),
					&six[2]) == 0,
	   "two records encoded");
	ok(te_stack_wire_decode(wire, strlen(wire), &used, &ps2, err,
				sizeof(err)) == 0 &&
		   stack_equal(&ps, &ps2) && !strcmp(FN(&ps2, 0, 1), "-") &&
		   !strcmp(FN(&ps2, 0, 3), "sp ace%\xc3\xa9"),
	   "\"-\", spaces, %%, non-ASCII, unknown rank, flags: round trip");
	off = used;
	ok(te_stack_wire_decode(wire + off, strlen(wire) - off, &used, &ps2,
				err, sizeof(err)) == 0 &&
		   stack_equal(&six[2], &ps2),
	   "the second record follows");
	ok(te_stack_wire_encode(wire, 100, &ps) < 0, "encode: a small buffer");

	ok(refused("TE-STACK2 proc rank=4\nend\n", "not a \"TE-STACK1 proc\""),
	   "bad magic");
	ok(refused(HEAD "thread lwp=1 cut=0\n", "before its \"end\""),
	   "missing end");
	ok(refused(HEAD "thread lwp=1 cut=0\nend", "before its \"end\""),
	   "end without its newline");
	ok(refused(HEAD "frame py 1 f a.py 0\nend\n", "before any thread"),
	   "a frame before a thread");
	big[0] = '\0';
	te_appendf(big, sizeof(big), HEAD);
	for (i = 0; i < TE_STACK_THREADS + 1; i++)
		te_appendf(big, sizeof(big), "thread lwp=%zu cut=0\n", i);
	ok(refused(big, "more than 16 threads"), "too many threads");
	te_snprintf(wire, sizeof(wire), HEAD "thread lwp=1 cut=0\n");
	for (i = 0; i < TE_STACK_FRAMES + 1; i++)
		te_appendf(wire, sizeof(wire), "frame py %zu f a.py 0\n", i);
	te_appendf(wire, sizeof(wire), "end\n");
	ok(refused(wire, "too many frames"), "too many frames");
	te_snprintf(big, sizeof(big), "TE-STACK1 proc rank=4 pid=7 node=");
	for (i = 0; i < 70; i++)
		te_appendf(big, sizeof(big), "n");
	te_appendf(big, sizeof(big),
		   " state=S cpu_ms=0 since_ms=-1 wchan=- "
		   "nopy=0 tcut=0 note=-\nend\n");
	ok(refused(big, "node"), "an over-long node");
	te_snprintf(big, sizeof(big), HEAD "thread lwp=1 cut=0\nframe py 1 ");
	for (i = 0; i < 121; i++)
		te_appendf(big, sizeof(big), "f");
	te_appendf(big, sizeof(big), " a.py 0\nend\n");
	ok(refused(big, "function"), "an over-long function name");
	memset(big, 'x', 2000);
	big[2000] = '\0';
	ok(refused(big, "over 1536 bytes"), "an over-long line");
	{
		char nul[] = HEAD "thread lwp=1 cut=0\nend\n";
		size_t k = strlen(HEAD) + 3;

		nul[k] = '\0';
		ok(te_stack_wire_decode(nul, sizeof(nul) - 1, &used, &ps2, err,
					sizeof(err)) < 0 &&
			   strstr(err, "NUL"),
		   "a NUL byte");
	}
	ok(refused(HEAD "thread lwp=1 cut=0\nframe py 1 a%0Ab f 0\nend\n",
		   "control byte"),
	   "an encoded newline in a name");
	ok(refused(HEAD "thread lwp=1 cut=0\nframe py 1 a%00b f 0\nend\n",
		   "NUL"),
	   "an encoded NUL in a name");
	ok(refused(HEAD "thread lwp=1 cut=0\nframe py 1 a%zz f 0\nend\n",
		   "escape"),
	   "a bad escape");
	ok(refused("TE-STACK1 proc rank=-2 pid=7 node=n3 state=S cpu_ms=0 "
		   "since_ms=-1 wchan=- nopy=0 tcut=0 note=-\nend\n",
		   "rank"),
	   "rank -2");
	ok(refused("TE-STACK1 proc rank=1 pid=7 node=n3 state=SS cpu_ms=0 "
		   "since_ms=-1 wchan=- nopy=0 tcut=0 note=-\nend\n",
		   "state"),
	   "a two-letter state");
	ok(refused("TE-STACK1 proc rank=1 pid=7 node=n/3 state=S cpu_ms=0 "
		   "since_ms=-1 wchan=- nopy=0 tcut=0 note=-\nend\n",
		   "host"),
	   "a node that is not a host name");
	ok(refused("TE-STACK1 proc pid=7 rank=1 node=n3 state=S cpu_ms=0 "
		   "since_ms=-1 wchan=- nopy=0 tcut=0 note=-\nend\n",
		   "rank="),
	   "keys out of order");
	ok(refused(HEAD "thread  lwp=1 cut=0\nend\n", "empty word"),
	   "two spaces");
	ok(refused("TE-STACK1 proc rank=1 pid=7 node=n3 state=S cpu_ms=0 "
		   "since_ms=-1 wchan=- nopy=0 tcut=0 note=a%C3%A9\nend\n",
		   "note is not printable ASCII"),
	   "a non-ASCII note");
	ok(refused(HEAD "bogus\nend\n", "unknown line"), "an unknown line");
	ok(refused(HEAD "end now\n", "after \"end\""), "text after end");
	ok(refused(HEAD "thread lwp=1 cut=0\nframe native 1x 0 f - - 0\nend\n",
		   "address"),
	   "a bad address");
	ok(refused(HEAD "thread lwp=1 cut=0\nframe py 1 f a.py 2\nend\n",
		   "flags"),
	   "unknown frame flags");
}

int main(void)
{
	test_fixtures();
	test_hostile();
	test_groups();
	test_lists();
	test_json();
	test_wire();
	return tap_done();
}
