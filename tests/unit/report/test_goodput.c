/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of goodput (core/report/goodput.c): made-up step records of
 * one clean step, a relaunch (without a node, on the same nodes), a
 * requeue, records without launch times,
 * garbage and truncated JSON; the shares always add up to the wall time. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "report/goodput.h"
#include "report/steprecord.h"
#include "util/strutil.h"
#include "tap.h"

static char recbuf[8][2048];

/* A record as srun writes it; passed: the barrier's pass, or NULL;
 * verdict/why: the "restart" object, or NULL. */
static const char *rec(int i, unsigned step, const char *start, const char *end,
		       int failed, const char *passed, const char *verdict,
		       const char *why)
{
	char launch[128] = "null", restart[512] = "";

	if (passed)
		te_snprintf(launch, sizeof(launch),
			    "{\"ranks\":8,\"nodes\":2,\"first_node\":\"n1\","
			    "\"last_node\":\"n2\",\"skew_ms\":3,\"passed\":%s}",
			    passed);
	if (verdict)
		te_snprintf(restart, sizeof(restart),
			    ",\"restart\":{\"verdict\":\"%s\",\"why\":\"%s\"}",
			    verdict, why);
	te_snprintf(recbuf[i], sizeof(recbuf[i]),
		    "{\"trainenv\":\"0.9\",\"protocol\":7,\"job\":12,"
		    "\"step\":%u,\"start\":%s,\"end\":%s,\"settings\":{},"
		    "\"failed_tasks\":%d,\"first_failure\":%s,\"launch\":%s,"
		    "\"watchdog\":null,\"hang_report\":null%s}\n",
		    step, start, end, failed,
		    failed ? "{\"rank\":3,\"local_rank\":1,\"node\":\"n2\","
			     "\"how\":\"signal\",\"value\":7,\"time\":"
			     "1700000100.5,\"ended_by_trainenv\":false}"
			   : "null",
		    launch, restart);
	return recbuf[i];
}

static int parse(const char *s, struct te_gp_step *st)
{
	char err[160];

	return te_gp_record_parse(s, strlen(s), st, err, sizeof(err));
}

static int adds_up(const struct te_gp_summary *s)
{
	return s->train_ms + s->init_ms + s->lost_ms + s->other_ms ==
	       s->wall_ms;
}

static void test_clean(void)
{
	struct te_gp_step st[1];
	struct te_gp_summary sum;
	char out[2048];

	is_int(parse(rec(0, 0, "1700000000", "1700000100", 0, "1700000010.25",
			 NULL, NULL),
		     &st[0]),
	       0, "a clean step's record is read");
	is_int(st[0].barrier_known, 1, "its barrier pass is known");
	is_int(te_gp_summarize(st, 1, &sum), 0, "summed up");
	is_int(sum.wall_ms, 100000, "wall 100 s");
	is_int(sum.init_ms, 10250, "initialisation 10.25 s");
	is_int(sum.train_ms, 89750, "training 89.75 s");
	is_int(sum.lost_ms + sum.other_ms, 0, "nothing lost");
	ok(adds_up(&sum), "the shares add up to the wall time");
	is_int(te_gp_text(st, 1, &sum, out, sizeof(out)), 0, "text fits");
	ok(strstr(out, "job 12: 1 step (0 failed), 0 relaunches, 0 "
		       "requeues, 0 stops; wall 100.000 s = training 89.750 "
		       "s + initialisation 10.250 s + lost 0.000 s + other "
		       "0.000 s; training 90% of the wall time\n") == out,
	   "the job's line");
	ok(!strstr(out, "note:"), "no note for a clean step");
}

static void test_relaunch(void)
{
	struct te_gp_step st[2];
	struct te_gp_summary sum;
	char out[2048];

	/* read out of order: the summary sorts by start */
	is_int(parse(rec(1, 1, "1700000112", "1700000200", 0, "1700000120",
			 NULL, NULL),
		     &st[0]),
	       0, "step 1 read");
	is_int(parse(rec(0, 0, "1700000000", "1700000100", 1, "1700000010",
			 "relaunch",
			 "relaunch: node n2 failed: signal 7; the step starts "
			 "again in this allocation without n2, on 3 nodes "
			 "with 12 tasks (restart 1 of 2)"),
		     &st[1]),
	       0, "failed step 0 with its relaunch verdict read");
	is_str(st[1].without, "n2", "the node left out");
	is_int(te_gp_summarize(st, 2, &sum), 0, "summed up");
	is_int(st[0].step, 0, "sorted by start");
	is_int(sum.wall_ms, 200000, "wall 200 s");
	is_int(sum.train_ms, 90000 + 80000, "training 90 + 80 s");
	is_int(sum.init_ms, 10000 + 8000, "initialisation 10 + 8 s");
	is_int(sum.lost_ms, 12000, "lost 12 s: step 0's end to step 1's start");
	is_int(sum.other_ms, 0, "no other gap");
	ok(adds_up(&sum), "the shares add up to the wall time");
	is_int(st[0].recover_ms, 20000, "20 s from the failure to training");
	is_int(sum.relaunches, 1, "1 relaunch");
	is_int(sum.failures, 1, "1 failure");
	is_int(sum.nnodes, 1, "1 node excluded");
	te_gp_text(st, 2, &sum, out, sizeof(out));
	ok(strstr(out,
		  "job 12: 2 steps (1 failed), 1 relaunch (without n2), "
		  "0 requeues, 0 stops; wall 200.000 s = training "
		  "170.000 s + initialisation 18.000 s + lost 12.000 s "
		  "+ other 0.000 s; training 85% of the wall time\n") == out,
	   "the job's line");
	ok(strstr(out, "failure of step 0 (relaunch without n2): 12.000 s "
		       "from its end to step 1's start, 20.000 s to its "
		       "launch barrier's pass\n") != NULL,
	   "the failure's line");
}

/* a transient fault's relaunch (--train-transient): "relaunch-same" */
static void test_relaunch_same(void)
{
	struct te_gp_step st[2];
	struct te_gp_summary sum;
	char out[2048];

	is_int(parse(rec(0, 0, "1700000000", "1700000100", 1, "1700000010",
			 "relaunch-same",
			 "relaunch: rank 1 exited with code 42, listed as "
			 "transient (--train-transient): the step starts "
			 "again on the same nodes (restart 1 of 1)"),
		     &st[0]),
	       0, "a relaunch on the same nodes is read");
	is_int(st[0].verdict, TE_GP_RELAUNCH, "  a relaunch");
	is_int(st[0].same, 1, "  on the same nodes");
	is_str(st[0].without, "", "  no node left out");
	parse(rec(1, 1, "1700000102", "1700000200", 0, "1700000105", NULL,
		  NULL),
	      &st[1]);
	is_int(te_gp_summarize(st, 2, &sum), 0, "summed up");
	is_int(sum.relaunches, 1, "1 relaunch");
	is_int(sum.nnodes, 0, "no node excluded");
	te_gp_text(st, 2, &sum, out, sizeof(out));
	ok(strstr(out, "failure of step 0 (relaunch on the same nodes): "
		       "2.000 s from its end to step 1's start") != NULL,
	   "the failure's line says so");
}

static void test_requeue_no_launch(void)
{
	struct te_gp_step st[3];
	struct te_gp_summary sum;
	char out[4096];

	/* the first run's step 0 was overwritten by the second run's: what
	 * is left is its step 1 (requeued) and the new run's steps 0 and 1 */
	parse(rec(0, 1, "1700000050", "1700000100", 1, NULL, "requeue",
		  "requeue: node n7 failed; the job is requeued without n7"),
	      &st[0]);
	parse(rec(1, 0, "1700000300", "1700000400", 0, NULL, NULL, NULL),
	      &st[1]);
	parse(rec(2, 1, "1700000410", "1700000500", 1, NULL, "stop",
		  "stop: the program's own exit code 1"),
	      &st[2]);
	is_int(te_gp_summarize(st, 3, &sum), 0, "summed up");
	is_int(sum.wall_ms, 450000, "wall 450 s");
	is_int(sum.init_ms, 0, "no barrier known: no initialisation");
	is_int(sum.train_ms, 50000 + 100000 + 90000, "training: the steps");
	is_int(sum.lost_ms, 200000, "lost: the requeue's 200 s");
	is_int(sum.other_ms, 10000, "other: 10 s between the new run's steps");
	ok(adds_up(&sum), "the shares add up to the wall time");
	is_int(sum.requeues, 1, "1 requeue");
	is_int(sum.stops, 1, "1 stop");
	is_int(sum.runs, 2, "2 runs: the step ids start again");
	is_int(sum.barriers_known, 0, "no barrier pass known");
	is_str(sum.nodes[0], "n7", "the requeue's node");
	te_gp_text(st, 3, &sum, out, sizeof(out));
	ok(strstr(out, "note: 3 of 3 steps do not record") != NULL,
	   "a note on the missing launch times");
	ok(strstr(out, "note: the job was requeued (2 runs seen)") != NULL,
	   "a note on the overwritten records");
	ok(strstr(out, "failure of step 1 (stop): no step after it") != NULL,
	   "the last failure has no step after it");
}

static void test_overlap(void)
{
	struct te_gp_step st[3];
	struct te_gp_summary sum;

	/* a relaunched step with --overlap starting before the old one's
	 * end, and a step inside another's time */
	parse(rec(0, 0, "1000", "1100", 1, "1005", "relaunch",
		  "... without n3, ..."),
	      &st[0]);
	parse(rec(1, 1, "1090", "1200", 0, "1095", NULL, NULL), &st[1]);
	parse(rec(2, 2, "1120", "1130", 0, NULL, NULL, NULL), &st[2]);
	is_int(te_gp_summarize(st, 3, &sum), 0, "summed up");
	is_int(sum.wall_ms, 200000, "wall 200 s");
	is_int(sum.init_ms, 5000,
	       "only step 0's initialisation: step 1's pass came inside step 0's time");
	is_int(sum.train_ms, 195000, "shared time counts once");
	ok(adds_up(&sum), "the shares add up to the wall time");
}

static void test_writer_round_trip(void)
{
	struct te_step_record r = { .job = 77, .step = 3 };
	struct te_gp_step st;
	char buf[4096];

	r.start_sec = 1700000000;
	r.end_sec = 1700000042;
	r.restart = "relaunch";
	r.restart_why = "relaunch: node gpu-7 failed; ... without gpu-7, on 3";
	is_int(te_step_record_json(buf, sizeof(buf), &r), 0, "srun's writer");
	is_int(parse(buf, &st), 0, "its record is read");
	is_int(st.job, 77, "job");
	is_int(st.step, 3, "step");
	is_int(st.end_ms - st.start_ms, 42000, "start and end");
	is_int(st.verdict, TE_GP_RELAUNCH, "verdict");
	is_str(st.without, "gpu-7", "without");
	is_int(st.failed, 1, "a relaunch verdict is a failure");
	r.start_ms = 1700000000250LL;
	r.end_ms = 1700000000782LL;
	r.end_sec = 1700000000;
	is_int(te_step_record_json(buf, sizeof(buf), &r), 0,
	       "srun's writer, with milliseconds");
	is_int(parse(buf, &st), 0, "  read");
	is_int(st.end_ms - st.start_ms, 532, "  start_ms and end_ms win");
	is_int(st.start_ms, 1700000000250LL, "  start in ms");
}

/* rec(i) with extra fields (",\"job_start\":..") added at its end. */
static const char *with(int i, const char *extra)
{
	size_t n = strlen(recbuf[i]);

	if (n >= 2 && strlen(extra) + n < sizeof(recbuf[i])) {
		recbuf[i][n - 2] = '\0'; /* its "}\n" */
		te_appendf(recbuf[i], sizeof(recbuf[i]), "%s}\n", extra);
	}
	return recbuf[i];
}

/* the job's start and the work after the newest checkpoint (item 6) */
static void checkpoint_case(const char *newest, int64_t redo_ms,
			    const char *what)
{
	struct te_gp_step st[2];
	struct te_gp_summary sum;
	char extra[160];

	rec(0, 0, "1700000000", "1700000100", 1, "1700000010", "relaunch",
	    "relaunch: node n2 failed: signal 7; ... without n2, on 3 nodes");
	te_snprintf(extra, sizeof(extra),
		    ",\"job_start\":1699999990,\"checkpoint\":{\"dir\":"
		    "\"/ck\",\"newest\":%s}",
		    newest);
	is_int(parse(with(0, extra), &st[0]), 0, "%s: step 0 read", what);
	rec(1, 1, "1700000112", "1700000200", 0, "1700000120", NULL, NULL);
	is_int(parse(with(1, ",\"job_start\":1699999990"), &st[1]), 0,
	       "%s: step 1 read", what);
	is_int(te_gp_summarize(st, 2, &sum), 0, "%s: summed up", what);
	is_int(sum.wall_ms, 210000, "%s: wall 210 s, from the job's start",
	       what);
	is_int(sum.before_ms, 10000, "%s: 10 s before the first step", what);
	is_int(st[0].redo_ms, redo_ms, "%s: %lld ms of training to redo", what,
	       (long long)redo_ms);
	is_int(sum.lost_ms, 12000 + redo_ms, "%s: lost 12 s + the redo", what);
	is_int(sum.train_ms, 170000 - redo_ms, "%s: training less the redo",
	       what);
	is_int(sum.other_ms, 10000, "%s: other: the time before step 0", what);
	ok(adds_up(&sum), "%s: the shares add up to the wall time", what);
}

static void test_checkpoint(void)
{
	struct te_gp_step st[2];
	struct te_gp_summary sum;
	char out[2048];

	checkpoint_case("1700000070.000", 30000, "newest at 70 s");
	checkpoint_case("null", 90000, "no checkpoint");
	checkpoint_case("1700000005.5", 90000, "newest before training");
	checkpoint_case("1700000300", 0, "newest after the failure");
	rec(0, 0, "1700000000", "1700000100", 1, "1700000010", "relaunch",
	    "relaunch: node n2 failed: signal 7; ... without n2, on 3 nodes");
	parse(with(0, ",\"job_start\":1699999990,\"checkpoint\":{\"dir\":"
		      "\"/ck\",\"newest\":1700000070}"),
	      &st[0]);
	rec(1, 1, "1700000112", "1700000200", 0, "1700000120", NULL, NULL);
	parse(recbuf[1], &st[1]);
	te_gp_summarize(st, 2, &sum);
	te_gp_text(st, 2, &sum, out, sizeof(out));
	ok(strstr(out, "wall 210.000 s = training 140.000 s + initialisation "
		       "18.000 s + lost 42.000 s (30.000 s of it training "
		       "after the newest checkpoint) + other 10.000 s; "
		       "training 67% of the wall time\n") != NULL,
	   "the job's line: the redo inside the lost time");
	ok(strstr(out, "20.000 s to its launch barrier's pass; 30.000 s of "
		       "its training after the newest checkpoint are lost\n"),
	   "the failure's line: its training after the checkpoint");
	/* a job start after the step's own is not this run's */
	rec(2, 0, "1700000000", "1700000100", 0, NULL, NULL, NULL);
	parse(with(2, ",\"job_start\":1700000050"), &st[0]);
	ok(!st[0].job_start_known, "a job start after the step's: ignored");
	rec(2, 0, "1700000000", "1700000100", 0, NULL, NULL, NULL);
	ok(parse(with(2, ",\"job_start\":\"x\""), &st[0]) < 0,
	   "a job start not a number: not a record");
	rec(2, 0, "1700000000", "1700000100", 1, NULL, "relaunch", "x");
	ok(parse(with(2, ",\"checkpoint\":{\"newest\":-5}"), &st[0]) < 0,
	   "a negative checkpoint time: not a record");
}

static void test_hostile(void)
{
	static const char *const bad[] = {
		"",
		"{",
		"[1,2,3]",
		"{\"trainenv\":\"x\",\"job\":12,\"step\":0,\"start\":10,",
		"{\"trainenv\":\"x\",\"job\":12,\"step\":0,\"start\":10}",
		"{\"trainenv\":\"x\",\"job\":-1,\"step\":0,\"start\":1,\"end\":2}",
		"{\"trainenv\":\"x\",\"job\":1,\"step\":0,\"start\":1e9,\"end\":2}",
		"{\"trainenv\":\"x\",\"job\":1,\"step\":0,\"start\":5,\"end\":2}",
		"{\"trainenv\":\"x\",\"job\":1,\"step\":0,\"start\":\"1\","
		"\"end\":2}",
		"{\"trainenv\":\"x\",\"job\":1,\"step\":0,\"start\":1,\"end\":"
		"999999999999999999999}",
		"{\"trainenv\":\"x\",\"job\":1,\"step\":0,\"start\":1,\"end\":2,"
		"\"restart\":{\"verdict\":\"reboot\"}}",
		"\x01\x02garbage\xff",
	};
	struct te_gp_step st[2];
	struct te_gp_summary sum;
	char err[160], big[TE_GP_RECORD_MAX + 2];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ok(te_gp_record_parse(bad[i], strlen(bad[i]), &st[0], err,
				      sizeof(err)) < 0 &&
			   err[0],
		   "bad record %zu refused: %s", i, err);
	/* every cut of a good record is refused or read, never a crash */
	rec(0, 0, "1700000000", "1700000100", 1, "1700000010", "relaunch",
	    "x without n2");
	for (i = 0; i < strlen(recbuf[0]) - 1; i++)
		if (te_gp_record_parse(recbuf[0], i, &st[0], err,
				       sizeof(err)) == 0)
			break;
	is_int(i, strlen(recbuf[0]) - 1, "no cut of a record is read");
	memset(big, ' ', sizeof(big));
	ok(te_gp_record_parse(big, sizeof(big), &st[0], err, sizeof(err)) < 0,
	   "a record over the bound is refused: %s", err);
	/* a barrier pass outside the step is not taken */
	parse(rec(0, 0, "100", "200", 0, "300", NULL, NULL), &st[0]);
	is_int(st[0].barrier_known, 0, "a pass after the end is unknown");
	is_int(te_gp_summarize(st, 0, &sum), -1, "no step: nothing to sum");
	is_int(te_gp_summarize(st, TE_GP_STEPS_MAX + 1, &sum), -1,
	       "over the bound: refused");
}

int main(void)
{
	test_clean();
	test_relaunch();
	test_relaunch_same();
	test_requeue_no_launch();
	test_overlap();
	test_writer_round_trip();
	test_checkpoint();
	test_hostile();
	return tap_done();
}
