/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the launch timeline (core/launch/launch_timeline.c): per-node
 * arrivals, the skew, when rank 0's task says it, its line and wire form. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "launch/launch_timeline.h"
#include "util/strutil.h"
#include "tap.h"

static void three_nodes(void)
{
	struct te_timeline t;
	struct te_launch_skew s;
	char line[256];
	int r;

	te_timeline_init(&t);
	te_timeline_skew(&t, &s);
	is_int(s.nnodes, 0, "empty: no node");
	ok(!te_launch_skew_say(&s, 0), "empty: nothing said, even explained");
	/* n1 and n2 at once, n3 20.3 s later; 8 ranks each, interleaved */
	for (r = 0; r < 8; r++) {
		te_timeline_note(&t, "n1", 1000 + r);
		te_timeline_note(&t, "n2", 1100 + r);
	}
	for (r = 0; r < 8; r++)
		te_timeline_note(&t, "n3", 21300 + r);
	te_timeline_skew(&t, &s);
	is_int(s.nranks, 24, "24 ranks");
	is_int(s.nnodes, 3, "3 nodes");
	is_str(s.first, "n1", "n1 arrived first (its last rank first)");
	is_str(s.last, "n3", "n3 arrived last");
	is_int(s.skew_ms, 21307 - 1007, "skew: last ranks of n3 and n1");
	te_launch_skew_line(&s, line, sizeof(line));
	is_str(line,
	       "barrier: 24 ranks on 3 nodes; the last, n3, arrived "
	       "20.3 s after the first",
	       "the line");
	ok(te_launch_skew_say(&s, 10000), "20.3 s >= 10 s: said");
	ok(!te_launch_skew_say(&s, 30000), "20.3 s < 30 s: not said");
	ok(te_launch_skew_say(&s, 0), "explain: said");
	ok(!te_launch_skew_say(&s, -1), "off: never");
	te_timeline_free(&t);
	is_int((int)t.cap, 0, "freed");
}

/* A node is there when its last rank is: a node whose first rank came
 * early but whose last came late is the last node. */
static void node_is_its_last_rank(void)
{
	struct te_timeline t;
	struct te_launch_skew s;

	te_timeline_init(&t);
	te_timeline_note(&t, "a", 0); /* a's first rank: earliest */
	te_timeline_note(&t, "b", 100);
	te_timeline_note(&t, "a", 5000); /* a's last rank: latest */
	te_timeline_skew(&t, &s);
	is_str(s.first, "b", "b complete first");
	is_str(s.last, "a", "a complete last");
	is_int(s.skew_ms, 4900, "4.9 s");
	te_timeline_free(&t);
}

static void ties_and_one_node(void)
{
	struct te_timeline t;
	struct te_launch_skew s;
	char line[256];

	te_timeline_init(&t);
	te_timeline_note(&t, "nb", 7);
	te_timeline_skew(&t, &s);
	ok(!te_launch_skew_say(&s, 0), "one node: nothing to compare");
	te_launch_skew_line(&s, line, sizeof(line));
	is_str(line, "barrier: 1 rank on 1 node", "one node's line");
	te_timeline_note(&t, "nc", 7);
	te_timeline_note(&t, "na", 7);
	te_timeline_skew(&t, &s);
	is_str(s.first, "na", "a tie: the first name is first");
	is_str(s.last, "na", "a tie: the first name is last too");
	is_int(s.skew_ms, 0, "no skew");
	te_launch_skew_line(&s, line, sizeof(line));
	is_str(line, "barrier: 3 ranks on 3 nodes; all arrived within 0.1 s",
	       "no skew: within 0.1 s");
	ok(!te_launch_skew_say(&s, 1), "0 ms < 1 ms: not said");
	te_timeline_free(&t);
}

/* Thousands of nodes: the table grows and keeps every node apart. */
static void many_nodes(void)
{
	struct te_timeline t;
	struct te_launch_skew s;
	char host[32];
	int i, bad = 0;

	te_timeline_init(&t);
	for (i = 0; i < 20000; i++) {
		snprintf(host, sizeof(host), "node%05d", i % 5000);
		if (te_timeline_note(&t, host,
				     (i % 5000) == 4321 ? 90000 : i / 5000) < 0)
			bad++;
	}
	te_timeline_skew(&t, &s);
	is_int(bad, 0, "20,000 notes taken");
	is_int(s.nnodes, 5000, "5,000 nodes");
	is_int(s.nranks, 20000, "20,000 ranks");
	is_str(s.last, "node04321", "the late node");
	is_str(s.first, "node00000", "first: the earliest, first name");
	is_int(s.skew_ms, 90000 - 3, "skew");
	ok(t.nnodes * 2 <= t.cap, "load at most one half");
	te_timeline_free(&t);
}

static void hostile_hosts(void)
{
	struct te_timeline t;
	struct te_launch_skew s;
	char big[200];

	te_timeline_init(&t);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	te_timeline_note(&t, big, 1);
	te_timeline_note(&t, "n1\nWARN=x", 2);
	te_timeline_note(&t, NULL, 3);
	te_timeline_note(&t, "", 4);
	te_timeline_skew(&t, &s);
	is_int(s.nnodes, 1, "bad names are one node '?'");
	is_str(s.last, "?", "named '?'");
	te_timeline_free(&t);
}

static void wire(void)
{
	struct te_launch_skew s = { .nranks = 24,
				    .nnodes = 3,
				    .first = "n1",
				    .last = "n3",
				    .skew_ms = 20300 },
			      back;
	char buf[256];

	ok(te_launch_skew_format(&s, buf, sizeof(buf)) == 0, "format");
	is_str(buf, "24 3 20300 n1 n3", "wire form");
	ok(te_launch_skew_parse(buf, &back) == 0, "parse back");
	ok(!memcmp(&s, &back, sizeof(s)) ||
		   (back.nranks == 24 && back.nnodes == 3 &&
		    back.skew_ms == 20300 && !strcmp(back.first, "n1") &&
		    !strcmp(back.last, "n3")),
	   "round trip");
	ok(te_launch_skew_parse("0 0 0 - -", &back) == 0 && !back.nnodes,
	   "no node: dashes");
	ok(te_launch_skew_format(&s, buf, 8) < 0, "too small a buffer");
	ok(te_launch_skew_parse("24 3 20300 n1", &back) < 0, "short");
	ok(te_launch_skew_parse("24 3 20300 n1 n3 x", &back) < 0, "long");
	ok(te_launch_skew_parse("24 30 1 n1 n3", &back) < 0,
	   "more nodes than ranks");
	ok(te_launch_skew_parse("24 3 -5 n1 n3", &back) < 0, "negative skew");
	ok(te_launch_skew_parse("24 3 999999999999 n1 n3", &back) < 0,
	   "over a week");
	ok(te_launch_skew_parse("24 3 5 n1 n$3", &back) < 0, "bad host");
	ok(te_launch_skew_parse("0 0 5 - -", &back) < 0, "no node, skew");
	ok(te_launch_skew_parse("0 0 0 n1 -", &back) < 0, "no node, a host");
	s.skew_ms = -1;
	ok(te_launch_skew_format(&s, buf, sizeof(buf)) < 0,
	   "negative skew not formatted");
	s.skew_ms = 1;
	te_strlcpy(s.last, "a b", sizeof(s.last));
	ok(te_launch_skew_format(&s, buf, sizeof(buf)) < 0,
	   "bad host not formatted");
}

int main(void)
{
	three_nodes();
	node_is_its_last_rank();
	ties_and_one_node();
	many_nodes();
	hostile_hosts();
	wire();
	return tap_done();
}
