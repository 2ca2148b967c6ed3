/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the recovery decisions (core/report/recovery.c): the node a failed
 * step blames, the requeue plan and its lines, the progress guard's state,
 * the time signal's due time. */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "launch/launch_verdict.h"
#include "report/recovery.h"
#include "util/strutil.h"
#include "util/sysutil.h"
#include "tap.h"

static struct te_failrep rep(uint32_t rank, const char *node, int signaled,
			     int value, int64_t sec)
{
	struct te_failrep r;

	memset(&r, 0, sizeof(r));
	r.rank = rank;
	te_strlcpy(r.node, node, sizeof(r.node));
	r.signaled = signaled;
	r.value = value;
	r.sec = sec;
	return r;
}

static void fault_find(void)
{
	struct te_failrep f[6];
	struct te_fault_facts ff;
	struct te_fault out;

	memset(&ff, 0, sizeof(ff));
	ff.fault_signals = 1ULL << SIGBUS;
	ff.fails = f;
	te_fault_find(&ff, &out);
	is_int(out.kind, TE_FAULT_NONE, "no report: no fault");

	/* rank 3 on n2 exits 1 first, rank 0 on n1 fails its pre-flight later */
	f[0] = rep(3, "n2", 0, 1, 100);
	f[1] = rep(0, "n1", 0, TE_EXIT_NODE_FAULT, 105);
	f[2] = rep(1, "n1", 0, 0, 90); /* a clean exit */
	ff.nfails = 3;
	te_fault_find(&ff, &out);
	is_int(out.kind, TE_FAULT_NODE,
	       "a pre-flight failure is a node's fault");
	is_str(out.node, "n1", "even after another rank's own error: n1");
	like(out.why, "rank 0 failed its check before training (exit code 75)",
	     "why names the rank and the code");

	ff.nfails = 1;
	te_fault_find(&ff, &out);
	is_int(out.kind, TE_FAULT_PROGRAM, "exit 1 alone: the program's");
	is_str(out.why, "rank 3 exited with code 1", "its why");
	ff.any = 1;
	te_fault_find(&ff, &out);
	is_int(out.kind, TE_FAULT_NODE, "requeue-on=any: a node's fault");
	is_str(out.node, "n2", "of the failed rank's node");
	ff.any = 0;

	f[1] = rep(5, "n3", 1, SIGBUS, 101);
	f[2] = rep(6, "n3", 1, SIGSEGV, 99);
	ff.nfails = 3;
	te_fault_find(&ff, &out);
	is_str(out.node, "n3", "SIGBUS listed: n3");
	like(out.why, "rank 5 was killed by SIGBUS", "why names the signal");
	ff.fault_signals |= 1ULL << SIGSEGV;
	te_fault_find(&ff, &out);
	like(out.why, "rank 6 was killed by SIGSEGV",
	     "the earliest listed signal");
	ff.fault_signals = 0;
	te_fault_find(&ff, &out);
	is_int(out.kind, TE_FAULT_PROGRAM, "signals not listed: the program's");
	like(out.why, "rank 6 was killed by SIGSEGV", "the earliest failure");

	ff.hang_node = "n4";
	te_fault_find(&ff, &out);
	is_str(out.node, "n4", "a hang on one node blames it");
	like(out.why, "hung past the exit grace", "and says so");
	ff.lost_node = "n9";
	te_fault_find(&ff, &out);
	is_str(out.node, "n9", "a lost node comes first");
	ff.lost_node = "bad node;rm";
	ff.hang_node = NULL;
	te_fault_find(&ff, &out);
	is_int(out.kind, TE_FAULT_PROGRAM,
	       "a node name that is not a word is "
	       "never blamed");

	f[0] = rep(0, "unknown", 0, TE_EXIT_NODE_FAULT, 1);
	f[1] = rep(1, "n1,n2", 0, TE_EXIT_NODE_FAULT, 1);
	ff.nfails = 2;
	ff.lost_node = NULL;
	te_fault_find(&ff, &out);
	is_int(out.kind, TE_FAULT_NONE,
	       "reports from 'unknown' or a list "
	       "name no node");

	f[0] = rep(0, "n1", 0, 3, 1);
	f[0].stalled = 1;
	f[1] = rep(1, "n1", 0, 0, 1);
	f[1].launched = 1;
	te_fault_find(&ff, &out);
	is_int(out.kind, TE_FAULT_NONE,
	       "a stall or the launch timeline is not "
	       "an exit");
}

static void requeue(void)
{
	struct te_requeue_facts rf;
	struct te_requeue_plan plan;
	struct te_fault fault;
	char big[2000];

	memset(&fault, 0, sizeof(fault));
	fault.kind = TE_FAULT_NODE;
	te_strlcpy(fault.node, "n1", sizeof(fault.node));
	te_strlcpy(fault.why, "rank 0 failed its check before training",
		   sizeof(fault.why));
	memset(&rf, 0, sizeof(rf));
	rf.batch = 1;
	rf.requeue_allowed = 1;
	rf.budget = 2;
	rf.excluded = "";
	rf.job_nodes = 2;
	rf.partition_nodes = 3;

	ok(te_requeue_decide(&rf, &fault, &plan) == 1, "requeued");
	is_str(plan.exclude, "n1", "without n1");
	is_str(plan.line,
	       "requeue: node n1 failed: rank 0 failed its check "
	       "before training; the job is requeued without n1 (restart 1 of "
	       "2)",
	       "the line");

	rf.expedited = 1;
	ok(te_requeue_decide(&rf, &fault, &plan) == 1, "expedited: requeued");
	is_str(plan.line,
	       "requeue: node n1 failed: rank 0 failed its check "
	       "before training; the job is requeued without n1 (restart 1 of "
	       "2; Slurm's expedited requeue: no credential window)",
	       "the line says the requeue is Slurm's expedited one");
	rf.expedited = 0;

	rf.restarts = 1;
	rf.excluded = "n1";
	rf.excluded_count = 1;
	te_strlcpy(fault.node, "n2", sizeof(fault.node));
	ok(te_requeue_decide(&rf, &fault, &plan) == 0,
	   "2 nodes excluded of 3 for a 2-node job: not requeued");
	like(plan.line,
	     "not requeued: node n2 failed, but without the 2 "
	     "excluded nodes its partition's 3 nodes could not hold the job's "
	     "2",
	     "the node list exhausted, said");
	rf.partition_nodes = 0;
	ok(te_requeue_decide(&rf, &fault, &plan) == 1, "partition size "
						       "unknown: requeued");
	is_str(plan.exclude, "n1,n2", "excluded list grows");
	like(plan.line, "(restart 2 of 2)", "restart 2 of 2");
	te_strlcpy(fault.node, "n1", sizeof(fault.node));
	ok(te_requeue_decide(&rf, &fault, &plan) == 1 &&
		   !strcmp(plan.exclude, "n1"),
	   "a node already excluded is not added "
	   "twice");

	rf.restarts = 2;
	ok(te_requeue_decide(&rf, &fault, &plan) == 0, "budget spent");
	is_str(plan.line,
	       "requeue: not requeued: node n1 failed (rank 0 failed "
	       "its check before training), but the restart budget is spent (2 "
	       "of 2 restarts done)",
	       "its line");
	rf.restarts = 0;
	rf.batch = 0;
	ok(te_requeue_decide(&rf, &fault, &plan) == 0 &&
		   strstr(plan.line, "only a batch job is requeued"),
	   "not batch");
	rf.batch = 1;
	rf.requeue_allowed = 0;
	ok(te_requeue_decide(&rf, &fault, &plan) == 0 &&
		   strstr(plan.line, "may not be requeued (--no-requeue"),
	   "requeue not allowed");
	rf.requeue_allowed = 1;
	fault.kind = TE_FAULT_PROGRAM;
	te_strlcpy(fault.why, "rank 3 exited with code 1", sizeof(fault.why));
	ok(te_requeue_decide(&rf, &fault, &plan) == 0, "a program error: no");
	is_str(plan.line,
	       "requeue: not requeued: rank 3 exited with code 1: "
	       "the program's own error (the site requeues node failures "
	       "only)",
	       "its line");
	fault.kind = TE_FAULT_NONE;
	ok(te_requeue_decide(&rf, &fault, &plan) == 0 && !plan.line[0],
	   "no failure: nothing said");
	fault.kind = TE_FAULT_NODE;
	rf.budget = 0;
	ok(te_requeue_decide(&rf, &fault, &plan) == 0 && !plan.line[0],
	   "requeue off: nothing said");
	rf.budget = 2;
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	rf.excluded = big;
	ok(te_requeue_decide(&rf, &fault, &plan) == 0 &&
		   strstr(plan.line, "excluded node list is full"),
	   "an excluded list that would overflow: not requeued, said");
}

static void progress(void)
{
	struct te_progress p, q, r;
	char line[TE_PROGRESS_LINE_MAX];

	memset(&p, 0, sizeof(p));
	p.job = 42;
	p.restart = 1;
	p.newest_ns = 1700000000123456789LL;
	p.stalls = 1;
	ok(te_progress_format(&p, line, sizeof(line)) == 0, "state formatted");
	is_str(line, "trainenv-progress 1 42 1 1700000000123456789 1\n",
	       "the state line");
	ok(te_progress_parse(line, &q) == 0 && q.job == 42 && q.restart == 1 &&
		   q.newest_ns == p.newest_ns && q.stalls == 1,
	   "parsed back");
	ok(te_progress_parse("trainenv-progress 2 42 1 5 1\n", &q) < 0,
	   "another version refused");
	ok(te_progress_parse("trainenv-progress 1 42 1 -5 1\n", &q) < 0,
	   "a negative time refused");
	ok(te_progress_parse("trainenv-progress 1 42 1 5 1 junk\n", &q) < 0,
	   "trailing junk refused");
	ok(te_progress_parse("trainenv-progress 1 99999999999 1 5 1\n", &q) < 0,
	   "an oversized job id refused");
	ok(te_progress_parse(NULL, &q) < 0, "NULL refused");

	is_int(te_progress_next(NULL, 42, 0, 100, &q), 0, "first failure: 0");
	is_int(te_progress_next(&q, 42, 1, 100, &r), 1,
	       "same newest checkpoint at the next restart: 1 stall");
	is_int(te_progress_next(&r, 42, 2, 100, &q), 2, "again: 2");
	is_int(te_progress_next(&q, 42, 3, 200, &r), 0,
	       "a newer checkpoint: 0");
	is_int(te_progress_next(&r, 43, 4, 200, &q), 0,
	       "another job's state "
	       "does not count");
	r.restart = 5;
	is_int(te_progress_next(&r, 42, 5, 200, &q), 0,
	       "the same restart "
	       "again does not count");
}

/* Issue 25, item 9: what the progress guard counts, and its temporary
 * file's name. */
static void progress_files(void)
{
	char a[64], b[64], hex[TE_PROGRESS_TMP_HEX + 1], probe[128];
	int i, same = 0;

	is_int(te_progress_entry("step-100.pt", 0, 1000, 1000),
	       TE_PROGRESS_COUNT, "the user's own file counts");
	is_int(te_progress_entry("run1", 1, 1000, 1000), TE_PROGRESS_DESCEND,
	       "the user's own directory is looked into");
	is_int(te_progress_entry("step-200.pt", 0, 1001, 1000),
	       TE_PROGRESS_SKIP, "another user's file is no progress");
	is_int(te_progress_entry("run2", 1, 0, 1000), TE_PROGRESS_SKIP,
	       "another user's directory is not looked into");
	is_int(te_progress_entry(TE_PROGRESS_FILE, 0, 1000, 1000),
	       TE_PROGRESS_SKIP, "the guard's state is no progress");
	is_int(te_progress_entry(".trainenv-progress.4242", 0, 1000, 1000),
	       TE_PROGRESS_SKIP, "a temporary state file left behind is none");
	ok(te_ckpt_probe_name(7, 0, "0123456789abcdef", probe, sizeof(probe)) ==
			   0 &&
		   te_progress_entry(probe, 0, 1000, 1000) == TE_PROGRESS_SKIP,
	   "rank 0's checkpoint probe is none (%s)", probe);
	is_int(te_progress_entry(".trainenv-probe-7.0-00ff", 0, 1000, 1000),
	       TE_PROGRESS_SKIP, "a node's probe is none");
	is_int(te_progress_entry(".trainenv-x", 1, 1000, 1000),
	       TE_PROGRESS_SKIP,
	       "a directory of trainenv's is not looked into");
	is_int(te_progress_entry(".hidden.pt", 0, 0, 0), TE_PROGRESS_COUNT,
	       "root's own dot-file counts for root");
	is_int(te_progress_entry("..", 1, 0, 0), TE_PROGRESS_SKIP,
	       "'..' skipped");

	is_int(te_progress_tmp_name("0123456789abcdef", a, sizeof(a)), 0,
	       "the temporary state file's name");
	is_str(a, ".trainenv-progress.tmp-0123456789abcdef",
	       "  beside the state, with 16 random hex digits");
	is_int(te_progress_entry(a, 0, 1000, 1000), TE_PROGRESS_SKIP,
	       "  and is no progress");
	is_int(te_progress_tmp_name("0123456789abcde", a, sizeof(a)), -1,
	       "15 digits refused");
	is_int(te_progress_tmp_name("0123456789abcdeg", a, sizeof(a)), -1,
	       "a non-hex digit refused");
	is_int(te_progress_tmp_name("../../../etc/pwd", a, sizeof(a)), -1,
	       "a path refused");
	is_int(te_progress_tmp_name("0123456789abcdef", a, 20), -1,
	       "a name that does not fit: -1");
	for (i = 0; i < 100; i++) {
		if (te_random_hex(hex, sizeof(hex), TE_PROGRESS_TMP_HEX) < 0 ||
		    te_progress_tmp_name(hex, a, sizeof(a)) < 0 ||
		    te_random_hex(hex, sizeof(hex), TE_PROGRESS_TMP_HEX) < 0 ||
		    te_progress_tmp_name(hex, b, sizeof(b)) < 0 ||
		    !strcmp(a, b))
			same++;
	}
	is_int(same, 0,
	       "100 pairs of names from the kernel's random: all "
	       "made, none the same (nothing another user can guess)");
}

/* --train-straggler-exclude: srun ended the step to leave n2 out; the
 * ranks it ended (SIGTERM) are no fault of theirs */
static void fault_straggler(void)
{
	struct te_failrep f[3];
	struct te_fault_facts ff;
	struct te_fault out;

	memset(&ff, 0, sizeof(ff));
	ff.fault_signals = 1ULL << SIGBUS;
	ff.fails = f;
	f[0] = rep(0, "n1", 1, SIGTERM, 100);
	f[1] = rep(2, "n2", 1, SIGTERM, 100);
	ff.nfails = 2;
	ff.strag_node = "n2";
	ff.strag_why = "straggler: n2 (ranks 2-3) waited least in all_reduce";
	te_fault_find(&ff, &out);
	is_int(out.kind, TE_FAULT_NODE, "a straggler left out: a node's fault");
	is_str(out.node, "n2", "  the straggler, not the first rank ended");
	is_str(out.why, ff.strag_why, "  why: the naming line");
	is_int(out.lost, 0, "  never a lost node (no --overlap)");
	is_int(out.slow, 1, "  a slow node, not a failed one");
	is_str(te_fault_verb(&out), "left out", "  srun's verb: 'left out'");
	ff.nfails = 0;
	te_fault_find(&ff, &out);
	is_str(out.node, "n2", "  with no rank's report at all");
	ff.strag_why = NULL;
	te_fault_find(&ff, &out);
	is_str(out.why, "straggler", "  no line: 'straggler'");
	ff.hang_node = "n3";
	te_fault_find(&ff, &out);
	is_str(out.node, "n2", "  before a hang the step's end caused");
	ff.lost_node = "n4";
	te_fault_find(&ff, &out);
	is_str(out.node, "n4", "  a node lost meanwhile comes first");
	is_int(out.slow, 0, "  and is no straggler");
	is_str(te_fault_verb(&out), "failed", "  srun's verb: 'failed'");
	ff.lost_node = NULL;
	f[0] = rep(1, "n3", 1, SIGBUS, 90);
	ff.nfails = 1;
	te_fault_find(&ff, &out);
	is_str(out.node, "n3", "  as does a rank killed by a listed signal");
	f[0] = rep(1, "n3", 0, TE_EXIT_NO_RESTART, 90);
	te_fault_find(&ff, &out);
	is_int(out.kind, TE_FAULT_STOP, "  and a rank's 'do not restart'");
	ff.nfails = 0;
	ff.hang_node = NULL;
	ff.strag_node = "n2;rm";
	te_fault_find(&ff, &out);
	is_int(out.kind, TE_FAULT_NONE, "  a name that is not a word: none");
}

static void time_signal(void)
{
	is_int(te_time_signal_at(1000, 100), 900, "100 s before the end");
	is_int(te_time_signal_at(0, 100), 0, "no end time: never");
	is_int(te_time_signal_at(1000, (uint64_t)1 << 63), 0,
	       "absurd offsets: never");
}

int main(void)
{
	fault_find();
	fault_straggler();
	requeue();
	progress();
	progress_files();
	time_signal();
	return tap_done();
}
