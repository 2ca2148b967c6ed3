/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of leaving a straggler out at the next checkpoint
 * (core/straggler/strag_exclude.c): may the named node be excluded, the
 * one line either way, when the checkpoint ends the step, and the fault's
 * why from the naming line. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "straggler/strag_exclude.h"
#include "tap.h"

static struct te_strag_excl_facts ready(void)
{
	struct te_strag_excl_facts f;

	memset(&f, 0, sizeof(f));
	f.spares = 1;
	f.spares_left = 1;
	f.budget = 1;
	f.restarts = 0;
	f.no_shield = NULL;
	f.checkpoint_dir = "/scratch/ck";
	return f;
}

static void decide(void)
{
	struct te_strag_excl_facts f = ready();
	struct te_strag_excl_plan p;
	char dir[700];

	is_int(te_strag_exclude_decide(&f, "n2", &p), 1,
	       "spares, one left, budget, shield, directory: excluded");
	is_str(p.line,
	       "straggler: n2 is excluded at the next checkpoint in "
	       "/scratch/ck",
	       "  the line names the node and the directory");

	f.spares = 0;
	is_int(te_strag_exclude_decide(&f, "n2", &p), 0, "no spares: not");
	is_str(p.line,
	       "straggler: n2 is not excluded: the job has no spare "
	       "node to put in its place (--train-spares)",
	       "  one line why");
	f = ready();
	f.spares_left = 0;
	te_strag_exclude_decide(&f, "n2", &p);
	is_str(p.line,
	       "straggler: n2 is not excluded: no spare node is left "
	       "(--train-spares=K all used)",
	       "no spare left: said");
	f.shrink_nodes = 2; /* --train-shrink=yes, a step of 3 nodes */
	is_int(te_strag_exclude_decide(&f, "n2", &p), 1,
	       "no spare left, --train-shrink: excluded");
	is_str(p.line,
	       "straggler: n2 is excluded at the next checkpoint in "
	       "/scratch/ck; no spare is left: the step starts again on the "
	       "2 nodes left (--train-shrink)",
	       "  the line says the step shrinks");
	f.shrink_nodes = 1;
	te_strag_exclude_decide(&f, "n2", &p);
	like(p.line, "again on the 1 node left (", "  one node: singular");
	f.spares_left = 1;
	f.shrink_nodes = 2;
	te_strag_exclude_decide(&f, "n2", &p);
	is_str(p.line,
	       "straggler: n2 is excluded at the next checkpoint in "
	       "/scratch/ck",
	       "  a spare left: the spare, shrinking not said");
	f = ready();
	f.restarts = 2;
	f.budget = 2;
	is_int(te_strag_exclude_decide(&f, "n2", &p), 0, "budget spent: not");
	is_str(p.line,
	       "straggler: n2 is not excluded: the restart budget is "
	       "spent (2 of 2 restarts done)",
	       "  said with the counts");
	f = ready();
	f.no_shield = "an interactive --pty step is not started again";
	is_int(te_strag_exclude_decide(&f, "n2", &p), 0, "no shield: not");
	is_str(p.line,
	       "straggler: n2 is not excluded: the step cannot start "
	       "again: an interactive --pty step is not started "
	       "again",
	       "  with the shield's reason");
	f = ready();
	f.checkpoint_dir = NULL;
	is_int(te_strag_exclude_decide(&f, "n2", &p), 0, "no directory: not");
	is_str(p.line,
	       "straggler: n2 is not excluded: no checkpoint directory "
	       "to wait for (--train-checkpoint-dir)",
	       "  said");
	f.checkpoint_dir = "";
	is_int(te_strag_exclude_decide(&f, "n2", &p), 0, "  nor an empty one");
	f = ready();
	memset(dir, 'd', sizeof(dir) - 1);
	dir[0] = '/';
	dir[sizeof(dir) - 1] = '\0';
	f.checkpoint_dir = dir;
	is_int(te_strag_exclude_decide(&f, "n2", &p), 0,
	       "a directory too long for the line: not (never half a name)");
	like(p.line, "too long", "  said");
	ok(strlen(p.line) < sizeof(p.line), "  the line fits");
	/* the first reason wins: no spares before the budget */
	f = ready();
	f.spares = 0;
	f.restarts = 5;
	f.checkpoint_dir = NULL;
	te_strag_exclude_decide(&f, "n2", &p);
	like(p.line, "--train-spares)", "several reasons: the first, once");
	f = ready();
	is_int(te_strag_exclude_decide(&f, NULL, &p), 1, "no node name: '?'");
	like(p.line, "straggler: ? is excluded", "  said so");
}

static void due(void)
{
	const int64_t s = 1000000000LL, t0 = 50 * s; /* srun's monotonic */
	const int64_t old = 1700000000LL * s;	     /* files' mtimes */
	struct te_strag_excl_watch w;

	te_strag_exclude_watch_init(&w);
	is_int(te_strag_exclude_due(&w, -1, t0), 0,
	       "an unreadable directory: not due");
	is_int(te_strag_exclude_due(&w, old, t0 + s), 0,
	       "the first look: what is there is no newer checkpoint");
	is_int(te_strag_exclude_due(&w, old, t0 + 10 * s), 0,
	       "  nor later, unchanged");
	is_int(te_strag_exclude_due(&w, old + 3 * s, t0 + 11 * s), 0,
	       "a newer one, just seen: not yet (it may still be written)");
	is_int(te_strag_exclude_due(&w, old + 4 * s, t0 + 12 * s), 0,
	       "  still growing: not yet");
	is_int(te_strag_exclude_due(&w, -1, t0 + 12 * s + s / 2), 0,
	       "  a look that fails learns nothing");
	is_int(te_strag_exclude_due(&w, old + 4 * s, t0 + 12 * s + s / 2), 0,
	       "  unchanged half a second: not yet");
	is_int(te_strag_exclude_due(&w, old + 4 * s, t0 + 13 * s), 1,
	       "  unchanged a second on srun's clock: due");

	/* the files' clock far from srun's, either way: the same answers */
	te_strag_exclude_watch_init(&w);
	te_strag_exclude_due(&w, 5 * s, t0);
	is_int(te_strag_exclude_due(&w, 6 * s, t0 + s), 0,
	       "a file clock years behind srun's: a newer one seen");
	is_int(te_strag_exclude_due(&w, 6 * s, t0 + 2 * s), 1,
	       "  and due once it holds still");
	te_strag_exclude_watch_init(&w);
	te_strag_exclude_due(&w, 0, t0);
	is_int(te_strag_exclude_due(&w, old * 2, t0 + s), 0,
	       "no checkpoint at the start, one far ahead of srun's clock");
	is_int(te_strag_exclude_due(&w, old * 2, t0 + 2 * s), 1,
	       "  due once it holds still (no comparison with srun's clock)");
	te_strag_exclude_watch_init(&w);
	te_strag_exclude_due(&w, old, t0);
	is_int(te_strag_exclude_due(&w, old - s, t0 + s), 0,
	       "the newest file replaced by an older one");
	is_int(te_strag_exclude_due(&w, old - s, t0 + 5 * s), 0,
	       "  is no newer checkpoint, however long it holds");
}

static void why(void)
{
	const char *line = "straggler: n2 (ranks 2-3) waited least in "
			   "all_reduce of communicator 0123456789abcdef";
	char buf[200], small[24];

	is_int(te_strag_exclude_why(line, buf, sizeof(buf)), strlen(line),
	       "the naming line fits: kept whole");
	is_str(buf, line, "  as is");
	te_strag_exclude_why(line, small, sizeof(small));
	is_str(small, "straggler: n2 (ranks...", "cut at a word, with '...'");
	ok(strlen(small) < sizeof(small), "  within the buffer");
	te_strag_exclude_why("averyveryverylongwordwithoutspaces", small,
			     sizeof(small));
	is_int(strlen(small), sizeof(small) - 1, "one long word: cut in it");
	te_strag_exclude_why(NULL, buf, sizeof(buf));
	is_str(buf, "", "no line: empty");
	te_strag_exclude_why(line, small, 3);
	is_str(small, "", "a buffer of 3: empty");
}

int main(void)
{
	decide();
	due();
	why();
	return tap_done();
}
