/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of restart inside the allocation (core/report/relaunch.c): the
 * spares' environment, the verdict at a failed step's end, srun's word to
 * its shield (with hostile lines), the relaunched command line, the job
 * comment's count, the transient fault (--train-transient) and its
 * relaunch on the same nodes, and the "do not restart" exit code in
 * te_fault_find. */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "report/relaunch.h"
#include "srun/srunargs.h"
#include "util/strutil.h"
#include "tap.h"

static void test_spares_env(void)
{
	struct te_spares_env e;

	is_int(te_spares_env(0, "9", NULL, NULL, &e), 0, "no spares: nothing");
	is_int(te_spares_env(1, NULL, NULL, NULL, &e), 0,
	       "no SLURM_JOB_NUM_NODES: nothing");
	is_int(te_spares_env(1, "9", NULL, NULL, &e), 1, "9 nodes, 1 spare");
	is_str(e.nodes, "8", "the step gets 8 nodes");
	is_str(e.ntasks, "", "no task count: srun's own");
	is_int(te_spares_env(1, "4", "8", NULL, &e), 1, "8 tasks on 4 nodes");
	is_str(e.ntasks, "6", "the same 2 per node on 3 nodes");
	is_int(te_spares_env(2, "4", "8", "2", &e), 1, "per node given");
	is_str(e.ntasks, "4", "2 per node on 2 nodes");
	is_int(te_spares_env(1, "4", "7", NULL, &e), 1, "7 tasks on 4 nodes");
	is_str(e.ntasks, "", "uneven: kept");
	like(e.line, "do not divide", "uneven: said");
	is_int(te_spares_env(4, "4", NULL, NULL, &e), -1, "all nodes spare");
	like(e.line, "leaves none", "said why");
	is_int(te_spares_env(1, "x9", NULL, NULL, &e), 0, "garbage: nothing");
	is_int(te_spares_env(1, "4", "1e3", NULL, &e), 1, "bad ntasks");
	is_str(e.ntasks, "", "bad ntasks: kept");
}

static struct te_fault node_fault(const char *node)
{
	struct te_fault f;

	memset(&f, 0, sizeof(f));
	f.kind = TE_FAULT_NODE;
	te_strlcpy(f.node, node, sizeof(f.node));
	te_strlcpy(f.why, "rank 2 failed its check before training",
		   sizeof(f.why));
	return f;
}

static void test_decide(void)
{
	struct te_relaunch_facts f = { .spares = 1,
				       .budget = 2,
				       .job_nodes = "n1,n2,n3,n4",
				       .excluded = "",
				       .step_nodes = 3,
				       .step_tasks = 6 };
	struct te_fault fault = node_fault("n2");
	struct te_relaunch_plan p;

	is_int(te_relaunch_decide(&f, &fault, &p), TE_VERDICT_RELAUNCH,
	       "a spare: relaunch");
	is_str(p.exclude, "n2", "without n2");
	like(p.line, "without n2, on 3 nodes with 6 tasks (restart 1 of 2)",
	     "the line");
	like(p.line, "relaunch: node n2 failed: rank 2 failed its check",
	     "  a failed node: 'failed'");
	fault.slow = 1; /* a straggler srun left out */
	te_strlcpy(fault.why, "straggler: n2 (ranks 2-3) waited least",
		   sizeof(fault.why));
	is_int(te_relaunch_decide(&f, &fault, &p), TE_VERDICT_RELAUNCH,
	       "a straggler left out: relaunch");
	like(p.line, "relaunch: node n2 left out: straggler: n2 (ranks 2-3)",
	     "  'left out', not 'failed'");
	f.excluded = "n2";
	fault = node_fault("n3");
	is_int(te_relaunch_decide(&f, &fault, &p), TE_VERDICT_REQUEUE,
	       "n2 already out, n3 fails: no spare");
	like(p.line, "no spare node is left (2 of the job's nodes free",
	     "said");
	f.job_nodes = "n1,n3,n4,n5,n6";
	is_int(te_relaunch_decide(&f, &fault, &p), TE_VERDICT_RELAUNCH,
	       "Slurm removed n2, n5 n6 free");
	is_str(p.exclude, "n2,n3", "both left out");
	f.restarts = 2;
	is_int(te_relaunch_decide(&f, &fault, &p), TE_VERDICT_STOP,
	       "budget spent: stop");
	like(p.line, "budget is spent (2 of 2", "said");
	f.restarts = 0;
	f.no_shield = "srun runs without its hang-up shield (--pty)";
	is_int(te_relaunch_decide(&f, &fault, &p), TE_VERDICT_REQUEUE,
	       "no shield: the requeue decides");
	like(p.line, "without its hang-up shield (--pty)", "said why");
	f.no_shield = NULL;
	fault.kind = TE_FAULT_PROGRAM;
	is_int(te_relaunch_decide(&f, &fault, &p), TE_VERDICT_STOP,
	       "the program's own error: stop");
	like(p.line, "the program's own error", "said");
	fault.kind = TE_FAULT_STOP;
	is_int(te_relaunch_decide(&f, &fault, &p), TE_VERDICT_STOP,
	       "exit 93: stop");
	fault = node_fault("n3");
	f.ending = "the job was cancelled";
	is_int(te_relaunch_decide(&f, &fault, &p), TE_VERDICT_STOP,
	       "a node's fault in a cancelled job: stop");
	is_str(p.line, "relaunch: stopped: the job was cancelled", "  said");
	f.ending = NULL;
	fault.kind = TE_FAULT_STOP;
	fault.kind = TE_FAULT_NONE;
	is_int(te_relaunch_decide(&f, &fault, &p), TE_VERDICT_NONE,
	       "no failure");
	fault = node_fault("n3");
	f.spares = 0;
	is_int(te_relaunch_decide(&f, &fault, &p), TE_VERDICT_NONE,
	       "no spares: the requeue decides alone");
	f.spares = 1;
	f.excluded = "n2";
	f.job_nodes = NULL;
	f.free_nodes = 3;
	is_int(te_relaunch_decide(&f, &fault, &p), TE_VERDICT_RELAUNCH,
	       "a count from srun's hostlists (a job too big for a list)");
	f.free_nodes = 2;
	is_int(te_relaunch_decide(&f, &fault, &p), TE_VERDICT_REQUEUE,
	       "  one short: no spare");
	f.free_nodes = 2;
	f.shrink = 1;
	is_int(te_relaunch_decide(&f, &fault, &p), TE_VERDICT_RELAUNCH,
	       "no spare, --train-shrink: relaunch on the nodes left");
	ok(p.nodes == 2 && p.tasks == 4, "  2 nodes, 2 tasks each as before");
	like(p.line,
	     "no spare is left: the step starts again in this "
	     "allocation without n3, on the 2 nodes left with 4 tasks",
	     "  said");
	ok(te_relaunch_shrink_to(1, 3, 6, 2) == 2 &&
		   te_relaunch_shrink_to(1, 3, 6, 1) == 1 &&
		   te_relaunch_shrink_to(0, 3, 6, 2) == 0 &&
		   te_relaunch_shrink_to(1, 3, 7, 2) == 0 &&
		   te_relaunch_shrink_to(1, 3, 6, 0) == 0 &&
		   te_relaunch_shrink_to(1, 3, 6, 3) == 0 &&
		   te_relaunch_shrink_to(1, 0, 6, 2) == 0,
	   "shrink_to: fewer nodes left, tasks even: those; else 0");
	f.free_nodes = 1;
	is_int(te_relaunch_decide(&f, &fault, &p), TE_VERDICT_RELAUNCH,
	       "  one node left: relaunch on it");
	like(p.line, "without n3, on the 1 node left with 2 tasks",
	     "  said in the singular");
	f.free_nodes = 2;
	f.step_tasks = 7;
	is_int(te_relaunch_decide(&f, &fault, &p), TE_VERDICT_REQUEUE,
	       "  tasks that do not divide over the nodes: no shrink");
	f.step_tasks = 6;
	f.free_nodes = 0;
	is_int(te_relaunch_decide(&f, &fault, &p), TE_VERDICT_REQUEUE,
	       "  no node left: no shrink");
	f.shrink = 0;
	f.job_nodes = "n1,n3,n4,n5,n6";
	f.spares = 1;
	f.step_nodes = 0;
	is_int(te_relaunch_decide(&f, &fault, &p), TE_VERDICT_REQUEUE,
	       "step size unknown: no relaunch");
}

static struct te_failrep exit_rep(uint32_t rank, const char *node, int code,
				  int64_t sec)
{
	struct te_failrep r;

	memset(&r, 0, sizeof(r));
	r.rank = rank;
	te_strlcpy(r.node, node, sizeof(r.node));
	r.value = code;
	r.sec = sec;
	return r;
}

/* --train-transient: which failures are a transient fault */
static void test_transient_rule(void)
{
	struct te_failrep fails[4];
	const struct te_failrep *first;

	fails[0] = exit_rep(2, "n3", 42, 5);
	fails[1] = exit_rep(1, "n2", 17, 3);
	is_int(te_transient_fault(fails, 2, "17,42", &first), 1,
	       "every failed rank's code listed: transient");
	ok(first == &fails[1], "  the earliest is rank 1");
	is_int(te_transient_fault(fails, 2, "42", &first), 0,
	       "one code not listed: not transient");
	ok(first == NULL, "  no rank named");
	is_int(te_transient_fault(fails, 2, "", &first), 0,
	       "no list: not transient");
	is_int(te_transient_fault(fails, 0, "42", &first), 0,
	       "no failure: not transient");
	fails[2] = exit_rep(0, "n1", SIGKILL, 6);
	fails[2].signaled = 1;
	is_int(te_transient_fault(fails, 3, "17,42", &first), 1,
	       "a rank killed by SIGKILL after the first: the step ending");
	fails[2].value = SIGSEGV;
	is_int(te_transient_fault(fails, 3, "17,42", &first), 0,
	       "a rank killed by SIGSEGV: not transient");
	fails[2].value = SIGTERM;
	fails[2].sec = 1;
	is_int(te_transient_fault(fails, 3, "17,42", &first), 0,
	       "SIGTERM before the first listed exit: the first failure");
	fails[2].by_trainenv = 1;
	is_int(te_transient_fault(fails, 3, "17,42", &first), 1,
	       "a rank trainenv ended (exit-grace): not its own failure");
	fails[3] = exit_rep(3, "n4", 0, 2);
	fails[3].stalled = 1;
	fails[3].value = 600;
	is_int(te_transient_fault(fails, 4, "17,42", &first), 1,
	       "a stall line is no exit");
	fails[0].value = 0;
	is_int(te_transient_fault(fails, 1, "17,42", &first), 0,
	       "exit 0 is no failure");
}

static void test_transient_decide(void)
{
	struct te_failrep fails[2];
	struct te_relaunch_facts f = { .budget = 1,
				       .excluded = "",
				       .step_nodes = 3,
				       .step_tasks = 3,
				       .transient = "42",
				       .fails = fails,
				       .nfails = 1 };
	struct te_fault fault;
	struct te_relaunch_plan p;

	fails[0] = exit_rep(1, "n2", 42, 3);
	memset(&fault, 0, sizeof(fault));
	fault.kind = TE_FAULT_PROGRAM;
	te_strlcpy(fault.node, "n2", sizeof(fault.node));
	te_strlcpy(fault.why, "rank 1 exited with code 42", sizeof(fault.why));
	is_int(te_relaunch_decide(&f, &fault, &p), TE_VERDICT_RELAUNCH_SAME,
	       "a listed code, no spares: relaunch on the same nodes");
	is_str(p.line,
	       "relaunch: rank 1 exited with code 42, listed as transient "
	       "(--train-transient): the step starts again on the same nodes "
	       "(restart 1 of 1)",
	       "  the line");
	ok(p.nodes == 3 && p.tasks == 3 && !p.exclude[0],
	   "  the same 3 nodes and 3 tasks, no node left out");
	f.spares = 1;
	f.excluded = "n5";
	is_int(te_relaunch_decide(&f, &fault, &p), TE_VERDICT_RELAUNCH_SAME,
	       "with spares too");
	is_str(p.exclude, "n5", "  an earlier relaunch's node stays out");
	f.spares = 0;
	f.excluded = "";
	f.restarts = 1;
	is_int(te_relaunch_decide(&f, &fault, &p), TE_VERDICT_STOP,
	       "budget spent: stop");
	like(p.line,
	     "listed as transient (--train-transient), but the "
	     "restart budget is spent (1 of 1",
	     "  said");
	f.restarts = 0;
	f.no_shield = "an interactive --pty step is not started again";
	is_int(te_relaunch_decide(&f, &fault, &p), TE_VERDICT_REQUEUE,
	       "no shield: not relaunched");
	like(p.line, "but an interactive --pty step", "  said why");
	f.no_shield = NULL;
	fails[0].value = 3;
	te_strlcpy(fault.why, "rank 1 exited with code 3", sizeof(fault.why));
	is_int(te_relaunch_decide(&f, &fault, &p), TE_VERDICT_STOP,
	       "a code not listed: the program's own error");
	like(p.line,
	     "rank 1 exited with code 3: the program's own error (not a "
	     "node's fault, and not every failed rank exited with a code "
	     "--train-transient lists)",
	     "  said");
	fault.kind = TE_FAULT_NODE;
	is_int(te_relaunch_decide(&f, &fault, &p), TE_VERDICT_NONE,
	       "a node's fault without spares: the requeue's");
	fails[0].value = 42;
	fault.lost = 1;
	is_int(te_relaunch_decide(&f, &fault, &p), TE_VERDICT_NONE,
	       "a listed code on a lost node: the node's fault");
	fault.lost = 0;
	f.hung = 1;
	is_int(te_relaunch_decide(&f, &fault, &p), TE_VERDICT_NONE,
	       "ranks hung past exit-grace: the node's fault");
	f.hung = 0;
	fault.kind = TE_FAULT_STOP;
	is_int(te_relaunch_decide(&f, &fault, &p), TE_VERDICT_STOP,
	       "a rank's exit 93 beside: stop");
	fault.kind = TE_FAULT_PROGRAM;
	f.ending = "the job was cancelled";
	is_int(te_relaunch_decide(&f, &fault, &p), TE_VERDICT_STOP,
	       "the job ending: stop");
	f.ending = NULL;
	f.step_nodes = 0;
	is_int(te_relaunch_decide(&f, &fault, &p), TE_VERDICT_REQUEUE,
	       "the step's size unknown: not relaunched");
	f.step_nodes = 3;
	f.transient = NULL;
	is_int(te_relaunch_decide(&f, &fault, &p), TE_VERDICT_NONE,
	       "no list, no spares: the requeue decides alone");
}

static void test_word(void)
{
	struct te_relaunch_word w = { 3, 8, 16, 0, 16, "n2,n7" }, r;
	char buf[TE_RELAUNCH_WORD_MAX], big[TE_RELAUNCH_WORD_MAX + 8];
	const char *bad[] = {
		"relaunch 1 3 8 16 0 16 n2,n7",	       /* no newline */
		"relaunch 2 3 8 16 0 16 n2\n",	       /* another version */
		"relaunch 1 3 0 16 0 16 n2\n",	       /* no nodes */
		"relaunch 1 3 8 16 0 16 \n",	       /* no list */
		"relaunch 1 3 8 16 0 16 n2;rm -rf\n",  /* not a name */
		"relaunch 1 3 8 16 0 16 n2,,n3\n",     /* empty name */
		"relaunch 1 3 8 16 0 16 n2,\n",	       /* trailing comma */
		"relaunch 1 3 8 16 0 16 n2\nextra\n",  /* two lines */
		"relaunch 1 -3 8 16 0 16 n2\n",	       /* negative */
		"relaunch 1 3 8 999999999 0 16 n2\n",  /* too many tasks */
		"relaunch 1 3 8 16 2 16 n2\n",	       /* overlap not 0/1 */
		"relaunch 1 3 8 16 n2\n",	       /* fields missing */
		"relaunch 1 3 8 16 0 16  n2\n",	       /* two blanks */
		"relaunch 1 3 8 9999999999 0 16 n2\n", /* over 32 bits */
		"relaunch 1 3 8 +16 0 16 n2\n",	       /* a sign */
		"relaunch 1 3 8 16 0 16n2\n",	       /* no blank */
		"",
	};
	size_t i;

	is_int(te_relaunch_word_format(&w, buf, sizeof(buf)), 0, "formatted");
	is_str(buf, "relaunch 1 3 8 16 0 16 n2,n7\n", "the word");
	is_int(te_relaunch_word_parse(buf, &r), 0, "parsed");
	ok(r.restart == 3 && r.nodes == 8 && r.tasks == 16 && r.first == 16 &&
		   !strcmp(r.exclude, "n2,n7"),
	   "round trip");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		is_int(te_relaunch_word_parse(bad[i], &r), -1,
		       "hostile word %zu refused", i);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big, "relaunch 1 1 1 1 0 1 ", 22);
	is_int(te_relaunch_word_parse(big, &r), -1, "too long refused");
	te_strlcpy(w.exclude, "n2 n3", sizeof(w.exclude));
	is_int(te_relaunch_word_format(&w, buf, sizeof(buf)), -1,
	       "a list with a blank is not formatted");
	w.exclude[0] = '\0';
	is_int(te_relaunch_word_format(&w, buf, sizeof(buf)), 0,
	       "the same nodes, none left out: formatted");
	is_str(buf, "relaunch 1 3 8 16 0 16 -\n", "  '-' for no node");
	is_int(te_relaunch_word_parse(buf, &r), 0, "  parsed");
	is_str(r.exclude, "", "  no node left out");
	is_int(te_relaunch_word_parse("relaunch 1 3 8 16 0 16 --\n", &r), 0,
	       "'--' is a node name, as before");
	is_int(te_relaunch_word_parse("relaunch 1 3 8 16 0 16 -,n2\n", &r), 0,
	       "  and '-' in a list");
}

static void test_argv(void)
{
	char *a1[] = { "srun",	 "-N",	     "3",  "--train-spares=1",
		       "python", "train.py", "-N", "5",
		       NULL };
	char *a2[] = { "srun", "-x", "n9", "--", "./prog", NULL };
	char *a3[] = { "srun", "-N3", NULL };
	struct te_relaunch_word w = { 1, 3, 6, 0, 6, "n2" };
	char *out[16], buf[256];
	int n;

	te_srun_argv_set_release(0);
	n = te_relaunch_argv(8, a1, &w, out, buf, sizeof(buf));
	is_int(n, 12, "four options added");
	is_str(out[4], "--exclude=n2", "exclude before the command");
	is_str(out[5], "--nodes=3", "nodes");
	is_str(out[6], "--ntasks=6", "tasks");
	is_str(out[7], "--open-mode=append", "the first run's -o FILE kept");
	is_str(out[8], "python", "then the command");
	is_str(out[10], "-N", "the command's own -N untouched");
	ok(out[12] == NULL, "ends with NULL");
	n = te_relaunch_argv(5, a2, &w, out, buf, sizeof(buf));
	is_int(n, 9, "with --");
	is_str(out[3], "--exclude=n9,n2", "the user's exclude kept");
	is_str(out[7], "--", "-- stays before the command");
	is_str(out[8], "./prog", "the command");
	w.overlap = 1;
	n = te_relaunch_argv(5, a2, &w, out, buf, sizeof(buf));
	is_int(n, 10, "a lost node's step: --overlap too");
	is_str(out[7], "--overlap", "  before the command");
	w.overlap = 0;
	w.exclude[0] = '\0';
	n = te_relaunch_argv(8, a1, &w, out, buf, sizeof(buf));
	is_int(n, 11, "no node left out: no --exclude");
	is_str(out[4], "--nodes=3", "  --nodes first");
	is_str(out[7], "python", "  then the command");
	n = te_relaunch_argv(5, a2, &w, out, buf, sizeof(buf));
	is_str(out[2], "n9", "  the user's own -x n9 stays");
	is_str(out[3], "--nodes=3", "  and no --exclude is added");
	te_strlcpy(w.exclude, "n2", sizeof(w.exclude));
	is_int(te_relaunch_argv(2, a3, &w, out, buf, sizeof(buf)), -1,
	       "no command: refused");
	is_int(te_relaunch_argv(8, a1, &w, out, buf, 20), -1,
	       "no room: refused");
}

static void test_comment(void)
{
	char out[TE_RELAUNCH_COMMENT_MAX + 64], big[1200];

	is_int(te_relaunch_comment_count(NULL), 0, "no comment");
	is_int(te_relaunch_comment_count("site text"), 0, "the site's");
	is_int(te_relaunch_comment_add(NULL, 1, "n2", out, sizeof(out)), 1,
	       "first entry");
	is_str(out, "trainenv: relaunch 1 without n2", "its text");
	is_int(te_relaunch_comment_add("site; trainenv: relaunch 1 without n2",
				       2, "n3", out, sizeof(out)),
	       1, "second");
	is_str(out,
	       "site; trainenv: relaunch 1 without n2; trainenv: relaunch 2 "
	       "without n3",
	       "appended");
	is_int(te_relaunch_comment_count(out), 2, "counted");
	is_int(te_relaunch_comment_add("(null)", 1, "n2", out, sizeof(out)), 1,
	       "squeue's (null)");
	is_str(out, "trainenv: relaunch 1 without n2", "is no comment");
	is_int(te_relaunch_comment_add("a\nb", 1, "n2", out, sizeof(out)), -1,
	       "two lines: never written back");
	is_int(te_relaunch_comment_add("x", 1, "n2,n3", out, sizeof(out)), -1,
	       "one node only");
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	is_int(te_relaunch_comment_add(big, 1, "n2", out, sizeof(out)), -1,
	       "too long: not written");
	is_int(te_relaunch_comment_add("trainenv: relaunch 1 without n2", 2,
				       NULL, out, sizeof(out)),
	       1, "a relaunch on the same nodes");
	is_str(out,
	       "trainenv: relaunch 1 without n2; trainenv: relaunch 2 on the "
	       "same nodes",
	       "  its entry");
	is_int(te_relaunch_comment_count(out), 2, "  counted");
	is_int(te_relaunch_comment_count("trainenv: relaunch 1 on the same "
					 "nodes; trainenv: relaunch 2 on the "
					 "same nodes"),
	       2, "two on the same nodes");
	is_int(te_relaunch_comment_count("see trainenv: relaunch notes; "
					 "trainenv: relaunch 3 without ; "
					 "trainenv: relaunch x without n2; "
					 "trainenv: relaunch 1 without n2"),
	       1, "only well-formed entries count");
}

static void test_no_restart_code(void)
{
	struct te_failrep fails[2];
	struct te_fault_facts ff = { 0 };
	struct te_fault fault;

	memset(fails, 0, sizeof(fails));
	te_strlcpy(fails[0].node, "n1", sizeof(fails[0].node));
	fails[0].rank = 0;
	fails[0].value = TE_EXIT_NODE_FAULT;
	fails[0].sec = 1;
	te_strlcpy(fails[1].node, "n2", sizeof(fails[1].node));
	fails[1].rank = 3;
	fails[1].value = TE_EXIT_NO_RESTART;
	fails[1].sec = 2;
	ff.fails = fails;
	ff.nfails = 2;
	ff.lost_node = "n4";
	te_fault_find(&ff, &fault);
	is_int(fault.kind, TE_FAULT_STOP, "exit 93 wins over a node's fault");
	like(fault.why, "rank 3 exited with code 93", "names the rank");
	ff.nfails = 1;
	te_fault_find(&ff, &fault);
	is_int(fault.kind, TE_FAULT_NODE, "without it: the lost node");
	is_int(fault.lost, 1, "  marked lost");
}

int main(void)
{
	test_spares_env();
	test_decide();
	test_transient_rule();
	test_transient_decide();
	test_word();
	test_argv();
	test_comment();
	test_no_restart_code();
	return tap_done();
}
