/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the stragglers' pure part (core/straggler/): each rank's
 * bookkeeping (channels, windows, median, eviction), the window summary
 * line (round trip, hostile lines) and srun's detector (one late node of
 * 64 named after k windows and not before, noise names nobody, one late
 * window names nobody, communicators apart, bounds). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "straggler/straggler.h"
#include "tap.h"

#define NODES 64
#define PER_NODE 8
#define MS 1000000ull

static void test_rank_basics(void)
{
	struct te_strag_rank r;
	struct te_strag_stat st[4];

	te_strag_rank_init(&r, 3);
	te_strag_rank_event(&r, 0xabc, 1, TE_STRAG_OP_ALL_REDUCE, 100);
	te_strag_rank_event(&r, 0xabc, 1, TE_STRAG_OP_ALL_REDUCE, 300);
	te_strag_rank_event(&r, 0xabc, 1, TE_STRAG_OP_ALL_REDUCE, 200);
	te_strag_rank_event(&r, 0xabc, 2, TE_STRAG_OP_ALL_REDUCE, 500);
	te_strag_rank_event(&r, 0xabc, 3, TE_STRAG_OP_BROADCAST, 400);
	is_int(te_strag_rank_take(&r, st, 4), 1, "one communicator taken");
	is_int(st[0].count, 3, "3 collectives (channels of one are one)");
	is_int(st[0].mean_ns, 400, "mean of the longest channel waits");
	is_int(st[0].op, TE_STRAG_OP_ALL_REDUCE, "the op most calls were");
	te_strag_rank_event(&r, 0xabc, 3, TE_STRAG_OP_BROADCAST, 900);
	is_int(te_strag_rank_take(&r, st, 4), 0,
	       "a late channel of a collective counted at the window's end "
	       "is not counted again");
	te_strag_rank_event(&r, 0xabc, 4, TE_STRAG_OP_BROADCAST, 900);
	is_int(te_strag_rank_take(&r, st, 4), 1, "the next one is");
	is_int(st[0].count, 1, "in a fresh window");
	is_int(te_strag_rank_take(&r, st, 4), 0, "an empty window: nothing");
	is_str(te_strag_op_name(TE_STRAG_OP_REDUCE_SCATTER), "reduce_scatter",
	       "op name");
	is_int(te_strag_op_of("all_gather", 10), TE_STRAG_OP_ALL_GATHER,
	       "op of its name");
	is_int(te_strag_op_of("all_gathe", 9), -1, "no op of a prefix");
	is_str(te_strag_op_name(99), "other", "an op out of range: other");
}

static void test_rank_median(void)
{
	struct te_strag_rank r;
	struct te_strag_stat st;
	uint64_t i, prev = 0;
	int mono = 1;

	for (i = 1; i < 5000000; i = i * 3 / 2 + 1) {
		mono &= te_strag_bucket(i) >= prev;
		prev = te_strag_bucket(i);
	}
	ok(mono, "buckets grow with the wait");
	is_int(te_strag_bucket(0), 0, "0 ns: bucket 0");
	is_int(te_strag_bucket(~0ull), TE_STRAG_BUCKETS - 1,
	       "huge: the last bucket");
	te_strag_rank_init(&r, 0);
	for (i = 0; i < 101; i++) /* 1.00 to 2.00 ms, median 1.5 ms */
		te_strag_rank_event(&r, 7, i, 0, MS + i * 10000);
	for (i = 101; i < 111; i++) /* outliers pull the mean only */
		te_strag_rank_event(&r, 7, i, 0, 1000 * MS);
	is_int(te_strag_rank_take(&r, &st, 1), 1, "taken");
	ok(st.median_ns > 1500000 * 87 / 100 &&
		   st.median_ns < 1500000 * 113 / 100,
	   "median estimate within 13%% of 1.5 ms (%llu)",
	   (unsigned long long)st.median_ns);
	ok(st.mean_ns > 90 * MS, "the mean has the outliers");
}

static void test_rank_eviction(void)
{
	struct te_strag_rank r;
	struct te_strag_stat st[TE_STRAG_COMMS + 1];
	unsigned i, n, found1 = 0, found0 = 0, found16 = 0;

	te_strag_rank_init(&r, 0);
	for (i = 0; i < TE_STRAG_COMMS; i++)
		te_strag_rank_event(&r, 100 + i, 1, 0, 1000);
	te_strag_rank_event(&r, 100, 2, 0, 1000); /* comm 0 used again */
	te_strag_rank_event(&r, 100 + TE_STRAG_COMMS, 1, 0, 1000);
	is_int(r.evicted, 1, "a 17th communicator evicts one with data");
	n = (unsigned)te_strag_rank_take(&r, st, TE_STRAG_COMMS + 1);
	is_int(n, TE_STRAG_COMMS, "16 communicators kept");
	for (i = 0; i < n; i++) {
		found0 += st[i].comm_hash == 100;
		found1 += st[i].comm_hash == 101;
		found16 += st[i].comm_hash == 100 + TE_STRAG_COMMS;
	}
	ok(found0 && found16 && !found1,
	   "the oldest (101) went, the one used again and the new one stay");
	is_int(te_strag_rank_take(&r, st, 2), 0, "max bounds the output");
}

/* A summary of node i: PER_NODE ranks from i * PER_NODE, each waiting
 * wait[k] ns on average in 100 collectives. */
static void node_summary(struct te_strag_summary *s, unsigned i,
			 uint32_t window, uint64_t comm, const uint64_t *wait)
{
	struct te_strag_stat st = { comm, 100, 0, 0, 0 };
	unsigned k;

	memset(s, 0, sizeof(*s));
	s->window = window;
	snprintf(s->node, sizeof(s->node), "n%u", i);
	s->comm_hash = comm;
	for (k = 0; k < PER_NODE; k++) {
		st.mean_ns = st.median_ns = wait[k];
		te_strag_summary_add(s, i * PER_NODE + k, &st);
	}
}

static void test_line_round_trip(void)
{
	struct te_strag_summary s, back;
	uint64_t wait[PER_NODE] = { 1,	   22,	   333,	    4444,
				    55555, 666666, 7777777, TE_STRAG_NS_MAX };
	char line[TE_STRAG_LINE_MAX], line2[TE_STRAG_LINE_MAX], err[128];
	struct te_strag_stat st = { 0, 0, 5, 5, 0 };
	int n;

	node_summary(&s, 17, 42, 0x3f2a9c0d12345678ull, wait);
	s.op = TE_STRAG_OP_ALL_GATHER;
	n = te_strag_line_format(&s, line, sizeof(line));
	ok(n > 0, "formatted: %s", line);
	like(line, "strag 1 42 n17 3f2a9c0d12345678 all_gather 8 136:100:1:1 ",
	     "the line's head");
	is_int(te_strag_line_parse(line, (size_t)n, &back, err, sizeof(err)), 0,
	       "parsed back");
	is_int(te_strag_line_format(&back, line2, sizeof(line2)), n,
	       "same length again");
	is_str(line2, line, "round trip");
	ok(!memcmp(&s, &back, sizeof(s)), "the same summary");
	is_int(te_strag_summary_add(&s, 136, &st), -1, "a rank twice: refused");
	memset(&s, 0, sizeof(s));
	strcpy(s.node, "a");
	is_int(te_strag_summary_add(&s, 9, &st), 0, "count 0 added");
	is_int(s.ranks[0].mean_ns, 0, "its wait is 0");
	is_int(te_strag_line_format(&s, line, 10), -1, "buffer too short");
	for (n = 0; n < TE_STRAG_NODE_RANKS - 1; n++)
		te_strag_summary_add(&s, (uint32_t)n + 10, &st);
	is_int(te_strag_summary_add(&s, 99, &st), -1, "17 ranks: refused");
	n = te_strag_line_format(&s, line, sizeof(line));
	ok(n > 0 && te_strag_line_parse(line, (size_t)n, &back, err,
					sizeof(err)) == 0,
	   "16 ranks fit");
}

/* A node's summary cut to lines of a bounded size (the failure report's
 * text: 240 bytes) and joined again by the detector. */
static void test_line_part(void)
{
	struct te_strag_summary s, back;
	uint64_t w9 = 123456789,
		 wait[PER_NODE] = { w9, w9, w9, w9, w9, w9, w9, w9 };
	char line[241], err[128];
	unsigned got = 0, lines = 0, ok_all = 1;
	int next = 0;

	node_summary(&s, 17, 42, 0x3f2a9c0d12345678ull, wait);
	while (next >= 0 && (unsigned)next < s.nranks) {
		int from = next;

		next = te_strag_line_part(&s, (unsigned)from, line,
					  sizeof(line));
		if (next <= from)
			break;
		lines++;
		ok_all &= strlen(line) <= 240 &&
			  te_strag_line_parse(line, strlen(line), &back, err,
					      sizeof(err)) == 0 &&
			  back.ranks[0].rank == s.ranks[from].rank &&
			  back.nranks == (unsigned)(next - from);
		got += back.nranks;
	}
	ok(got == PER_NODE && lines >= 2 && ok_all,
	   "8 ranks cut into %u lines of 240 bytes at most, every rank once",
	   lines);
	is_int(te_strag_line_part(&s, PER_NODE, line, sizeof(line)), -1,
	       "past the last rank: -1");
	is_int(te_strag_line_part(&s, 0, line, 20), -1,
	       "a buffer too short for one rank: -1");
}

static void test_line_hostile(void)
{
	static const char *const bad[] = {
		"",
		"strag 2 1 n1 0000000000000001 all_reduce 1 0:1:1:1",
		"strag 1 -1 n1 0000000000000001 all_reduce 1 0:1:1:1",
		"strag 1 +1 n1 0000000000000001 all_reduce 1 0:1:1:1",
		"strag 1 1000000000 n1 0000000000000001 all_reduce 1 0:1:1:1",
		"strag 1 18446744073709551617 n1 0000000000000001 all_reduce 1 "
		"0:1:1:1",
		"strag 1 01 n1 0000000000000001 all_reduce 1 0:1:1:1",
		"strag 1 1 -n1 0000000000000001 all_reduce 1 0:1:1:1",
		"strag 1 1 .n1 0000000000000001 all_reduce 1 0:1:1:1",
		"strag 1 1 n/1 0000000000000001 all_reduce 1 0:1:1:1",
		"strag 1 1 n1 000000000000000A all_reduce 1 0:1:1:1",
		"strag 1 1 n1 000000000000001 all_reduce 1 0:1:1:1",
		"strag 1 1 n1 00000000000000001 all_reduce 1 0:1:1:1",
		"strag 1 1 n1 0000000000000001 allreduce 1 0:1:1:1",
		"strag 1 1 n1 0000000000000001 all_reduce 0",
		"strag 1 1 n1 0000000000000001 all_reduce 17 0:1:1:1",
		"strag 1 1 n1 0000000000000001 all_reduce 2 0:1:1:1",
		"strag 1 1 n1 0000000000000001 all_reduce 1 0:1:1:1 1:1:1:1",
		"strag 1 1 n1 0000000000000001 all_reduce 1 0:1:1:1 ",
		"strag 1 1 n1 0000000000000001 all_reduce 1 0:1:1:1\n",
		"strag 1 1 n1  0000000000000001 all_reduce 1 0:1:1:1",
		"strag 1 1 n1 0000000000000001 all_reduce 1 0:1:1",
		"strag 1 1 n1 0000000000000001 all_reduce 1 0:1:1:1:1",
		"strag 1 1 n1 0000000000000001 all_reduce 1 0:-1:1:1",
		"strag 1 1 n1 0000000000000001 all_reduce 1 0:0:5:0",
		"strag 1 1 n1 0000000000000001 all_reduce 1 16777216:1:1:1",
		"strag 1 1 n1 0000000000000001 all_reduce 1 0:1000000000:1:1",
		"strag 1 1 n1 0000000000000001 all_reduce 1 0:1:1000000000000:1",
		"strag 1 1 n1 0000000000000001 all_reduce 2 5:1:1:1 5:1:1:1",
		"strag 1 1 n1 0000000000000001 all_reduce 2 5:1:1:1 4:1:1:1",
	};
	static const char nul[] = "strag 1 1 n1 0000000000000001 all_reduce 1 "
				  "0:1:1:1\0x";
	static const char good[] = "strag 1 1 n1 0000000000000001 all_reduce "
				   "1 0:1:1:1";
	struct te_strag_summary s;
	char err[128], name[80], line[TE_STRAG_LINE_MAX + 8];
	size_t i;
	int refused = 0;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (te_strag_line_parse(bad[i], strlen(bad[i]), &s, err,
					sizeof(err)) < 0 &&
		    err[0] && s.nranks == 0)
			refused++;
		else
			printf("# accepted or no reason: \"%s\"\n", bad[i]);
	}
	is_int(refused, (int)(sizeof(bad) / sizeof(bad[0])),
	       "%d hostile lines refused, each with a reason", refused);
	ok(te_strag_line_parse(nul, sizeof(nul) - 1, &s, err, sizeof(err)) < 0,
	   "a NUL inside: refused (%s)", err);
	memset(name, 'a', 64);
	name[64] = '\0';
	snprintf(line, sizeof(line),
		 "strag 1 1 %s 0000000000000001 all_reduce 1 0:1:1:1", name);
	ok(te_strag_line_parse(line, strlen(line), &s, err, sizeof(err)) < 0,
	   "a 64-char node name: refused (%s)", err);
	name[63] = '\0';
	snprintf(line, sizeof(line),
		 "strag 1 1 %s 0000000000000001 all_reduce 1 0:1:1:1", name);
	ok(te_strag_line_parse(line, strlen(line), &s, err, sizeof(err)) == 0,
	   "a 63-char one: taken");
	memset(line, ' ', sizeof(line));
	memcpy(line, good, strlen(good));
	ok(te_strag_line_parse(line, strlen(good), &s, err, sizeof(err)) == 0,
	   "the good line: taken");
	ok(te_strag_line_parse(line, TE_STRAG_LINE_MAX, &s, err, sizeof(err)) <
		   0,
	   "1024 bytes: too long (%s)", err);
}

/* xorshift64*: the same noise every run. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static double uniform(double lo, double hi)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return lo +
	       (hi - lo) *
		       (double)((rng_state * 2685821657736338717ull) >> 11) /
		       9007199254740992.0;
}

static uint64_t base_ns = MS;

static struct te_strag_detector *detector(unsigned k)
{
	struct te_strag_cfg cfg = { 0.5, k, 60, 50000 };

	return te_strag_detect_new(&cfg);
}

/* One window of NODES nodes in communicator comm: every node's ranks wait
 * about base_ns times the node's (1 +- noise) times their own
 * (1 +- noise / 3), the ranks of node late wait late_ns (none:
 * late >= NODES); node skip sends nothing. Each node numbers its windows
 * from its own offset (their clocks do not agree). Returns the verdicts
 * closed, the first in *v. */
static size_t window(struct te_strag_detector *d, uint64_t comm, unsigned w,
		     unsigned late, uint64_t late_ns, unsigned skip,
		     double noise, struct te_strag_verdict *v, size_t max)
{
	struct te_strag_summary s;
	uint64_t wait[PER_NODE];
	unsigned i, k;

	for (i = 0; i < NODES; i++) {
		double node = uniform(1 - noise, 1 + noise);

		for (k = 0; k < PER_NODE; k++) /* the node's and each rank's */
			wait[k] = i == late
					  ? late_ns
					  : (uint64_t)((double)base_ns * node *
						       uniform(1 - noise / 3,
							       1 + noise / 3));
		node_summary(&s, i, w + i * 7919u, comm, wait);
		if (i != skip)
			te_strag_detect_add(d, &s);
	}
	return v ? te_strag_detect_close(d, v, max) : 0;
}

static void test_one_late(void)
{
	struct te_strag_detector *d = detector(5);
	struct te_strag_verdict v[4];
	char line[512];
	unsigned w, before = 0, at5 = 0, after = 0, again = 0;
	size_t n;

	for (w = 1; w <= 12; w++) {
		n = window(d, 0x3f2a9c0d12345678ull, w, 17, MS / 10, NODES, 0.3,
			   v, 4);
		before += w < 5 ? (unsigned)n : 0;
		after += w > 5 ? (unsigned)n : 0;
		if (w == 5 && n == 1 && !strcmp(v[0].node, "n17"))
			at5 = 1;
		if (w == 5)
			te_strag_verdict_line(&v[0], line, sizeof(line));
	}
	is_int(before, 0, "late node: nobody named in windows 1-4");
	ok(at5, "n17 named in window 5, alone");
	is_int(after, 0, "named once, not again while it stays late");
	like(line,
	     "straggler: n17 (ranks 136-143) waited least in all_reduce of "
	     "communicator 3f2a9c0d12345678: 100 us a call, the other 63 "
	     "nodes' median ",
	     "the verdict's line");
	like(line, " ms, for 5 windows in a row (5 minutes)", "its end");
	{
		struct te_strag_verdict one = v[0];
		char l1[512];

		one.windows = 1;
		one.other_nodes = 1;
		te_strag_verdict_line(&one, l1, sizeof(l1));
		like(l1, "the other 1 node's median ",
		     "one other node: singular (%s)", l1);
		like(l1, ", for 1 window in a row (1 minute)",
		     "one window: singular");
	}
	window(d, 0x3f2a9c0d12345678ull, 13, NODES, 0, NODES, 0.3, v, 4);
	for (w = 14; w <= 18; w++)
		again += (unsigned)window(d, 0x3f2a9c0d12345678ull, w, 17,
					  MS / 10, NODES, 0.3, v, 4);
	is_int(again, 1, "named again after one window it recovered");
	te_strag_detect_free(d);
}

static void test_noise(void)
{
	struct te_strag_detector *d = detector(3);
	struct te_strag_verdict v[NODES];
	unsigned w, named = 0, early = 0;

	for (w = 1; w <= 10; w++)
		named += (unsigned)window(d, 1, w, NODES, 0, NODES, 0.3, v,
					  NODES);
	is_int(named, 0,
	       "noise of +-30%% on 64 nodes for 10 windows: %u false "
	       "namings",
	       named);
	for (w = 11; w <= 20; w++) /* one node waits 5x longer: early */
		early += (unsigned)window(d, 1, w, 3, 5 * MS, NODES, 0.3, v,
					  NODES);
	is_int(early, 0, "a node that waits longest is never named");
	for (w = 21; w <= 30; w++) /* n8 late in window 25 only */
		named += (unsigned)window(d, 1, w, w == 25 ? 8 : NODES, MS / 10,
					  NODES, 0.3, v, NODES);
	is_int(named, 0, "a node late in one window only is not named");
	te_strag_detect_free(d);
}

static void test_rows_and_comms(void)
{
	struct te_strag_detector *d = detector(3);
	struct te_strag_verdict v[8];
	unsigned w, n_a = 0, n_b = 0, wrong = 0, gap = 0, fast = 0;
	size_t n, i;

	for (w = 1; w <= 4; w++) {
		window(d, 0xa, w, 5, MS / 10, NODES, 0.1, NULL, 0);
		n = window(d, 0xb, w, 9, MS / 10, NODES, 0.1, v, 8);
		for (i = 0; i < n; i++) {
			n_a += v[i].comm_hash == 0xa &&
			       !strcmp(v[i].node, "n5");
			n_b += v[i].comm_hash == 0xb &&
			       !strcmp(v[i].node, "n9");
			wrong += !(v[i].comm_hash == 0xa &&
				   !strcmp(v[i].node, "n5")) &&
				 !(v[i].comm_hash == 0xb &&
				   !strcmp(v[i].node, "n9"));
		}
	}
	ok(n_a == 1 && n_b == 1 && wrong == 0,
	   "two communicators: n5 in one, n9 in the other, nothing else");
	for (w = 1; w <= 5; w++) /* n30 late, but its line lost in window 3 */
		gap += (unsigned)window(d, 0xc, w, 30, MS / 10,
					w == 3 ? 30 : NODES, 0.1, v, 8);
	is_int(gap, 0, "a window without its line breaks the row");
	base_ns = 5000; /* everyone fast: 1 us against 5 us */
	for (w = 1; w <= 5; w++)
		fast += (unsigned)window(d, 0xd, w, 2, 1000, NODES, 0, v, 8);
	base_ns = MS;
	is_int(fast, 0, "a gap under min_gap_ns names nobody");
	te_strag_detect_free(d);
}

/* A node's lines come in out of order: within srun's window the node's
 * later window counts, whatever srun's clock says. */
static void test_order(void)
{
	struct te_strag_detector *d = detector(1);
	struct te_strag_verdict v[4];
	struct te_strag_summary s;
	uint64_t even[PER_NODE] = { MS, MS, MS, MS, MS, MS, MS, MS };
	size_t n;

	window(d, 0xe, 5, 40, MS / 10, NODES, 0.1, NULL, 0);
	node_summary(&s, 40, 4, 0xe, even); /* its window 4, after 5 */
	is_int(te_strag_detect_add(d, &s), 0, "an older line: taken, unused");
	n = te_strag_detect_close(d, v, 4);
	ok(n == 1 && !strcmp(v[0].node, "n40"),
	   "the node's later window (late) counts");
	window(d, 0xf, 6, 40, MS / 10, NODES, 0.1, NULL, 0);
	node_summary(&s, 40, 6 + 40 * 7919 + 1, 0xf, even);
	te_strag_detect_add(d, &s);
	is_int(te_strag_detect_close(d, v, 4), 0,
	       "a newer even line replaces a late one: nobody named");
	te_strag_detect_free(d);
}

/* Each process of a node sends its own rank's line (the profiler plugin
 * in each rank): lines of one node and window join. */
static void test_per_rank_lines(void)
{
	struct te_strag_detector *d = detector(2);
	struct te_strag_verdict v[4];
	struct te_strag_summary s;
	struct te_strag_stat st = { 0x77, 100, 0, 0, 0 };
	char line[512];
	unsigned w, i, k, named = 0;
	size_t n = 0;

	for (w = 1; w <= 2; w++) {
		for (i = 0; i < NODES; i++)
			for (k = 0; k < PER_NODE; k++) {
				memset(&s, 0, sizeof(s));
				s.window = w + i * 7919u;
				snprintf(s.node, sizeof(s.node), "n%u", i);
				s.comm_hash = 0x77;
				st.mean_ns = st.median_ns =
					i == 17 ? MS / 10
						: (uint64_t)((double)MS *
							     uniform(0.9, 1.1));
				te_strag_summary_add(&s, i * PER_NODE + k, &st);
				te_strag_detect_add(d, &s);
			}
		n = te_strag_detect_close(d, v, 4);
		named += (unsigned)n;
	}
	ok(named == 1 && n == 1 && !strcmp(v[0].node, "n17"),
	   "a rank a line: n17 named after 2 windows, alone");
	te_strag_verdict_line(&v[0], line, sizeof(line));
	like(line, "straggler: n17 (ranks 136-143) waited least",
	     "its 8 ranks joined: %s", line);
	te_strag_detect_free(d);
}

/* Communicators of one node's ranks only (tensor parallel) come every
 * window and name nobody: they never crowd out the data-parallel one. */
static void test_single_node_comms(void)
{
	struct te_strag_detector *d = detector(2);
	struct te_strag_verdict v[4];
	struct te_strag_summary s;
	uint64_t even[PER_NODE] = { MS, MS, MS, MS, MS, MS, MS, MS };
	unsigned w, i, named = 0;

	for (w = 1; w <= 3; w++) {
		for (i = 0; i < 2 * TE_STRAG_MAX_COMMS; i++) {
			node_summary(&s, i, w, 0x1000 + i, even);
			te_strag_detect_add(d, &s);
		}
		named += (unsigned)window(d, 0xd9, w, 7, MS / 10, NODES, 0.1, v,
					  4);
	}
	ok(named == 1 && !strcmp(v[0].node, "n7"),
	   "128 single-node communicators first each window: the 64-node "
	   "one still names n7 (%u named)",
	   named);
	te_strag_detect_free(d);
}

static void test_bounds(void)
{
	struct te_strag_detector *d = detector(3);
	struct te_strag_summary s;
	uint64_t wait[PER_NODE] = { 1, 1, 1, 1, 1, 1, 1, 1 };
	struct te_strag_cfg bad = { 1.0, 3, 60, 0 };
	unsigned i, refused = 0;

	ok(te_strag_detect_new(&bad) == NULL, "threshold 1: refused");
	for (i = 0; i <= TE_STRAG_MAX_NODES; i++) {
		node_summary(&s, i, 1, 1, wait);
		refused += te_strag_detect_add(d, &s) < 0;
	}
	is_int(refused, 1, "node 4097: dropped");
	for (i = 0; i <= TE_STRAG_MAX_COMMS; i++) { /* 2 nodes each */
		node_summary(&s, 0, 1, 100 + i, wait);
		refused += te_strag_detect_add(d, &s) < 0;
		node_summary(&s, 1, 1, 100 + i, wait);
		refused += te_strag_detect_add(d, &s) < 0;
	}
	is_int(refused, 5,
	       "communicators 65 and 66 of 2 nodes each: their lines dropped");
	is_int(te_strag_detect_dropped(d), 5, "and counted");
	te_strag_detect_free(d);
}

static void test_detector(void)
{
	test_one_late();
	test_noise();
	test_rows_and_comms();
	test_order();
	test_per_rank_lines();
	test_single_node_comms();
	test_bounds();
}

int main(void)
{
	test_rank_basics();
	test_rank_median();
	test_rank_eviction();
	test_line_round_trip();
	test_line_part();
	test_line_hostile();
	test_detector();
	return tap_done();
}
