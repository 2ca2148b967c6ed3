/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the step's JSON record (core/report/steprecord.c): fields, the
 * first failure of each kind, escaping, a buffer too small. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "report/steprecord.h"
#include "tap.h"
#include "launch/version.h"

static const char *no_env(void *ctx, const char *name)
{
	(void)ctx;
	(void)name;
	return NULL;
}

int main(void)
{
	static char buf[64 * 1024];
	struct te_policy pol;
	struct te_config cfg;
	const char *user[TE_S_COUNT] = { 0 };
	struct te_failrep f = { .rank = 4,
				.local_rank = 0,
				.node = "n3",
				.signaled = 1,
				.value = 9,
				.sec = 1700000000,
				.usec = 42 };
	struct te_step_record r = { .job = 77,
				    .step = 2,
				    .cfg = &cfg,
				    .start_sec = 1700000000,
				    .end_sec = 1700000100 };
	char err[TE_ERR_MAX], name[48];

	te_policy_init(&pol);
	te_policy_finish(&pol, err, sizeof(err));
	user[TE_S_EXIT_GRACE] = "10";
	user[TE_S_NCCL_DUMP_DIR] = "/dumps/a\"b\\c";
	ok(te_resolve(&pol, user, no_env, NULL, NULL, &cfg, err, sizeof(err)) ==
		   0,
	   "settings resolve");

	is_int(te_step_record_json(buf, sizeof(buf), &r), 0, "a clean step");
	{
		char want[96];

		snprintf(want, sizeof(want),
			 "{\"trainenv\":\"%s\",\"protocol\":%d,",
			 PACKAGE_VERSION, TE_PROTOCOL_VERSION);
		ok(strncmp(buf, want, strlen(want)) == 0,
		   "  opens with the configured version and the protocol");
	}
	like(buf,
	     "\"job\":77,\"step\":2,\"start\":1700000000,\"end\":1700000100,",
	     "  job, step, srun's start and end");
	like(buf, "\"exit-grace\":{\"value\":\"10\",\"source\":\"option\"}",
	     "  a setting: its value and where it came from");
	like(buf, "\"nccl-dump-dir\":{\"value\":\"/dumps/a\\\"b\\\\c\"",
	     "  quotes and backslashes escaped");
	like(buf, "\"sighup\":{\"value\":\"shield\",\"source\":\"built-in\"}",
	     "  a built-in too");
	ok(!strstr(buf, "\"nccl-heartbeat\""), "  an unset knob is left out");
	like(buf,
	     "\"failed_tasks\":0,\"first_failure\":null,\"launch\":null,"
	     "\"watchdog\":null,\"hang_report\":null}\n",
	     "  no failure, no timeline, no watchdog: nulls");
	ok(buf[0] == '{' && !strchr(buf, '\n')[1], "  one object, one line");

	{
		struct te_launch_skew l = { .nranks = 24,
					    .nnodes = 3,
					    .first = "n1",
					    .last = "n3",
					    .skew_ms = 20312 };

		r.launch = &l;
		is_int(te_step_record_json(buf, sizeof(buf), &r), 0,
		       "a step with its launch timeline");
		like(buf,
		     "\"launch\":{\"ranks\":24,\"nodes\":3,\"first_node\":"
		     "\"n1\",\"last_node\":\"n3\",\"skew_ms\":20312},",
		     "  ranks, nodes, first and last node, skew");
		l.nnodes = 0;
		l.nranks = 0;
		l.skew_ms = 0;
		te_step_record_json(buf, sizeof(buf), &r);
		like(buf,
		     "\"launch\":{\"ranks\":0,\"nodes\":0,\"first_node\":"
		     "null,\"last_node\":null,\"skew_ms\":0}",
		     "  no node: null names");
		r.launch_passed_ms = 1796000000007LL;
		te_step_record_json(buf, sizeof(buf), &r);
		like(buf, "\"skew_ms\":0,\"passed\":1796000000.007}",
		     "  when the barrier passed, srun's wall clock in s.ms");
		r.launch_passed_ms = 0;
		r.launch = NULL;
	}
	{
		struct te_config c2 = cfg;

		is_str(te_record_dir(&c2), "/dumps/a\"b\\c",
		       "record dir: the dump dir first");
		c2.v[TE_S_NCCL_DUMP_DIR].set = 0;
		ok(te_record_dir(&c2) == NULL, "record dir: none by default");
		te_value_parse(TE_S_RECORD_DIR, "/site/rec", 0,
			       &c2.v[TE_S_RECORD_DIR], err, sizeof(err));
		c2.v[TE_S_RECORD_DIR].set = 1;
		is_str(te_record_dir(&c2) ? te_record_dir(&c2) : "(null)",
		       "/site/rec", "record dir: the site's record-dir");
		te_value_parse(TE_S_RECORD_DIR, "off", 0,
			       &c2.v[TE_S_RECORD_DIR], err, sizeof(err));
		ok(te_record_dir(&c2) == NULL, "record-dir=off: none");
	}
	{ /* the job prolog's verdicts slurmstepd sent */
		struct te_failrep h[2] = {
			{ .health = 1,
			  .node = "n2",
			  .text = "ib mlx5_0 port 1 "
				  "state DOWN" },
			{ .health = 1, .node = "n5", .text = "gpu 1 \"x\"" },
		};

		r.health = h;
		r.nhealth = 2;
		is_int(te_step_record_json(buf, sizeof(buf), &r), 0,
		       "a step with two nodes the job prolog left out");
		like(buf,
		     "\"hang_report\":null,\"node_health\":[{\"node\":\"n2\","
		     "\"verdict\":\"ib mlx5_0 port 1 state DOWN\"},{\"node\":"
		     "\"n5\",\"verdict\":\"gpu 1 \\\"x\\\"\"}]}\n",
		     "  node_health: each node and its verdict, escaped");
		r.nhealth = 0;
		te_step_record_json(buf, sizeof(buf), &r);
		ok(!strstr(buf, "node_health"),
		   "  none: the field is left out");
		r.health = NULL;
	}
	{ /* the goodput's job start and the checkpoint at a restart */
		ok(!strstr(buf, "job_start") && !strstr(buf, "checkpoint"),
		   "no job start, no checkpoint directory: neither field");
		r.job_start_sec = 1699999990;
		r.restart = "relaunch";
		r.restart_why = "relaunch: node n2 failed";
		r.checkpoint_dir = "/ck/\"x";
		r.checkpoint_ms = 1700000050123LL;
		is_int(te_step_record_json(buf, sizeof(buf), &r), 0,
		       "a relaunched step with a checkpoint directory");
		like(buf, "\"end\":1700000100,\"job_start\":1699999990,",
		     "  the job's start");
		like(buf,
		     "\"why\":\"relaunch: node n2 failed\"},\"checkpoint\":"
		     "{\"dir\":\"/ck/\\\"x\",\"newest\":1700000050.123}}\n",
		     "  the checkpoint directory, escaped, and its newest file");
		r.strag_excluded = "n2";
		r.strag_excluded_dir = "/ck/\"x";
		te_step_record_json(buf, sizeof(buf), &r);
		like(buf,
		     "\"straggler_excluded\":{\"node\":\"n2\",\"dir\":"
		     "\"/ck/\\\"x\"},\"checkpoint\":",
		     "  a straggler's exclusion: its node and directory");
		r.strag_excluded = r.strag_excluded_dir = NULL;
		te_step_record_json(buf, sizeof(buf), &r);
		ok(!strstr(buf, "straggler_excluded"), "  none: left out");
		r.checkpoint_ms = 0;
		te_step_record_json(buf, sizeof(buf), &r);
		like(buf, "\"newest\":null}", "  none there: null");
		r.job_start_sec = 0;
		r.restart = r.restart_why = r.checkpoint_dir = NULL;
	}
	r.first = &f;
	r.nfailed = 3;
	r.watchdog = "rank 1 on n1 exited with code 0";
	r.hang_report = "trainenv.2.hang.json";
	is_int(te_step_record_json(buf, sizeof(buf), &r), 0,
	       "a step that hung");
	like(buf,
	     "\"failed_tasks\":3,\"first_failure\":{\"rank\":4,"
	     "\"local_rank\":0,\"node\":\"n3\",\"how\":\"signal\",\"value\":9,"
	     "\"time\":1700000000.000042,\"ended_by_trainenv\":false}",
	     "  the first failure");
	f.by_trainenv = 1;
	te_step_record_json(buf, sizeof(buf), &r);
	like(buf,
	     "\"value\":9,\"time\":1700000000.000042,"
	     "\"ended_by_trainenv\":true}",
	     "  one trainenv's own signal ended (exit-grace): marked so");
	f.by_trainenv = 0;
	like(buf,
	     "\"watchdog\":\"rank 1 on n1 exited with code 0\","
	     "\"hang_report\":\"trainenv.2.hang.json\"}",
	     "  why the hang report ran, and its file");
	f.signaled = 0;
	f.stalled = 1;
	f.value = 31;
	te_step_record_json(buf, sizeof(buf), &r);
	like(buf, "\"how\":\"stall\",\"value\":31", "  a stall");
	f.stalled = 0;
	f.ended = 1;
	f.value = 0;
	te_step_record_json(buf, sizeof(buf), &r);
	like(buf, "\"how\":\"ended\"", "  a torchrun worker's end");

	is_int(te_step_record_json(buf, 100, &r), -1, "too small a buffer: -1");
	is_int(te_step_record_json(buf, 0, &r), -1, "no buffer: -1");
	te_step_record_name(name, sizeof(name), 5, 0);
	is_str(name, "trainenv.5.json", "the record's name");
	te_step_record_name(name, sizeof(name), 5, 1);
	is_str(name, "trainenv.5.hang.json", "the hang report's name");
	return tap_done();
}
