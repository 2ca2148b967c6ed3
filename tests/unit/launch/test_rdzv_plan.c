/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the launch rendezvous planning (core/launch/rdzv_plan.c): each
 * task's role, the barrier seconds and deadline, and the helper's command
 * line, from real resolved settings. No Slurm involved. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch/rankenv.h"
#include "launch/rdzv_args.h"
#include "launch/rdzv_plan.h"
#include "settings/settings.h"
#include "util/strutil.h"
#include "util/runcap.h"
#include "tap.h"
#include "launch/version.h"

static struct te_config cfg;

static const char *no_env(void *ctx, const char *name)
{
	(void)ctx;
	(void)name;
	return NULL;
}

/* Settings as a user's options "name=value ..." give them. */
static int settings(const char *opts)
{
	static char buf[1024];
	const char *user[TE_S_COUNT] = { 0 };
	struct te_policy pol;
	char err[TE_ERR_MAX], *tok, *save = NULL;

	te_policy_init(&pol);
	if (te_policy_finish(&pol, err, sizeof(err)) < 0)
		return -1;
	te_strlcpy(buf, opts, sizeof(buf));
	for (tok = strtok_r(buf, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(tok, '=');
		int id;

		*eq = '\0';
		id = te_setting_find(tok);
		if (id < 0)
			return -1;
		user[id] = eq + 1;
	}
	if (te_resolve(&pol, user, no_env, NULL, NULL, &cfg, err, sizeof(err)) <
	    0) {
		printf("# %s\n", err);
		return -1;
	}
	return 0;
}

static struct te_rdzv_plan plan(int has_pmix, int nodes_files,
				uint32_t local_id, int failed)
{
	struct te_rdzv_facts f = {
		.has_pmix = has_pmix,
		.nodes_files = nodes_files,
		.local_id = local_id,
		.failed = failed,
	};
	struct te_rdzv_plan p;

	te_rdzv_plan_make(&cfg, &f, &p);
	return p;
}

static const char *joined(const struct te_rdzv_argv *a)
{
	static char buf[2048];
	int i;

	buf[0] = '\0';
	for (i = 0; a->argv[i]; i++)
		te_appendf(buf, sizeof(buf), "%s%s", i ? " " : "", a->argv[i]);
	return buf;
}

/* What the helper makes of the plugin's command line a and the settings
 * cfg as the plugin encodes them into TRAINENV_SETTINGS: 0 or -1 (err). */
static int helper_reads(const struct te_rdzv_argv *a, struct te_rdzv_opts *o,
			char *err, size_t errlen)
{
	static char enc[TE_SETTINGS_ENV_MAX];
	char *av[TE_RDZV_ARGV_MAX], **avp = av;
	int argc = 0;

	while (a->argv[argc]) {
		av[argc] = a->argv[argc];
		argc++;
	}
	av[argc] = NULL;
	if (te_protocol_args(&argc, &avp) != -1 ||
	    te_rdzv_args_parse(argc, avp, o, err, errlen) < 0 ||
	    te_config_encode(&cfg, enc, sizeof(enc)) < 0)
		return -1;
	return te_rdzv_opts_settings(o, enc, err, errlen);
}

static void test_roles(void)
{
	struct te_rdzv_plan p;

	is_int(settings("rdzv=computed"), 0, "settings: rdzv=computed");
	is_int(te_rdzv_wanted(&cfg, 1), TE_RDZV_SKIP,
	       "computed: no rendezvous even with PMIx");
	is_int(plan(1, 1, 0, 1).role, TE_RDZV_SKIP,
	       "computed: a failed first task has no rendezvous either");
	is_int(settings("rdzv=pmix"), 0, "settings: rdzv=pmix");
	is_int(te_rdzv_wanted(&cfg, 0), TE_RDZV_NO_PMIX,
	       "rdzv=pmix without a PMIx server: the task fails");
	is_int(plan(0, 0, 0, 0).role, TE_RDZV_NO_PMIX, "same through the plan");
	is_int(settings(""), 0, "settings: built-in");
	is_int(te_rdzv_wanted(&cfg, 0), TE_RDZV_SKIP,
	       "auto without PMIx: skipped (srun said it once)");
	is_int(te_rdzv_wanted(&cfg, 1), TE_RDZV_RUN_HELPER,
	       "auto with PMIx: on");

	p = plan(1, 1, 0, 0);
	ok(p.role == TE_RDZV_RUN_HELPER && p.lead && !p.pass_failed,
	   "node files, first task: runs the helper for the node (--lead)");
	p = plan(1, 1, 3, 0);
	is_int(p.role, TE_RDZV_FOLLOW, "node files, another task: follows");
	p = plan(1, 1, 3, 1);
	is_int(p.role, TE_RDZV_FOLLOW_FAILED,
	       "node files, another task that failed: leaves a failure file");
	p = plan(1, 0, 3, 0);
	ok(p.role == TE_RDZV_RUN_HELPER && !p.lead,
	   "no node files: every task runs its own helper");
	p = plan(1, 1, 0, 1);
	ok(p.role == TE_RDZV_RUN_HELPER && p.lead && p.pass_failed,
	   "barrier, first task failed: still the node's helper, with --failed");

	is_int(settings("barrier=off"), 0, "settings: barrier=off");
	p = plan(1, 0, 0, 1);
	is_int(p.role, TE_RDZV_FAIL_ALONE,
	       "no barrier, no node files, failed: fails alone, no helper");
	p = plan(1, 1, 0, 1);
	ok(p.role == TE_RDZV_RUN_HELPER && p.lead && !p.pass_failed,
	   "no barrier, failed first task: helper for the others, no --failed");
	is_int(settings("barrier=off checkpoint-dir=/ckpt"), 0,
	       "settings: barrier=off checkpoint-dir=/ckpt");
	p = plan(1, 0, 0, 1);
	ok(p.role == TE_RDZV_RUN_HELPER && p.barrier_mode && p.pass_failed,
	   "a checkpoint check is barrier mode: a failed task is passed on");
}

static void test_deadlines(void)
{
	struct te_rdzv_plan p;

	settings("");
	p = plan(1, 0, 0, 0);
	ok(p.barrier_secs == 300 && p.barrier_mode && p.timeout_ms == 320000,
	   "built-in barrier 300 s: deadline 320 s (got %lu s, %d ms)",
	   p.barrier_secs, p.timeout_ms);
	settings("barrier=60 checkpoint-dir=/ckpt");
	p = plan(1, 0, 0, 0);
	is_int(p.timeout_ms, 95000, "barrier 60 s + checkpoint: 60+15+20 s");
	settings("barrier=off");
	p = plan(1, 0, 0, 0);
	ok(p.barrier_secs == 0 && !p.barrier_mode && p.timeout_ms == 320000,
	   "no barrier: rank 0's data within 300+20 s");
	settings("barrier=first-collective");
	p = plan(1, 0, 0, 0);
	ok(p.barrier_secs == 0 && !p.barrier_mode,
	   "first-collective: no launch barrier");
	settings("barrier=604800");
	p = plan(1, 0, 0, 0);
	is_int(p.timeout_ms, 604820000,
	       "the longest barrier fits the deadline");
}

/* The helper's command line: its protocol and the step's facts, never a
 * setting (they travel in TRAINENV_SETTINGS). */
static void test_argv(void)
{
	static const char *const setting_flags[] = {
		"--port-range",	    "--port-start",    "--barrier",
		"--wait",	    "--version-check", "--tree-width",
		"--checkpoint-dir", "--ifname",	       "--test-hooks",
		"--record",
	};
	struct te_rdzv_plan p;
	struct te_rdzv_argv a;
	char want[512];
	size_t i;
	int n;

	settings("port-range=30000-30099 socket-ifname=yes");
	p = plan(1, 1, 0, 0);
	te_rdzv_helper_argv(&p, "trainenv-rdzv", 77, 3, NULL, &a);
	te_snprintf(want, sizeof(want),
		    "trainenv-rdzv --protocol %d --job 77 "
		    "--step 3 --lead",
		    TE_PROTOCOL_VERSION);
	is_str(joined(&a), want,
	       "the node's helper: its protocol first, "
	       "job, step, --lead, and no setting");
	ok(te_master_port(77, 3, 30000, 30099) >= 30000 &&
		   te_master_port(77, 3, 30000, 30099) <= 30099,
	   "the start port is in the range");

	settings(
		"version-check=fail checkpoint-dir=/shared/ck socket-ifname=no "
		"barrier=45");
	p = plan(1, 0, 0, 1);
	te_rdzv_helper_argv(&p, "h", 1, 0, "pre-flight: no GPU", &a);
	te_snprintf(want, sizeof(want),
		    "h --protocol %d --job 1 --step 0 "
		    "--failed pre-flight: no GPU",
		    TE_PROTOCOL_VERSION);
	is_str(joined(&a), want, "a failed task under a barrier: --failed WHY");

	/* every setting the helper uses, set: none of them on the line */
	settings("checkpoint-dir=/c socket-ifname=yes test-hooks=on "
		 "nccl-dump-dir=/d launch-tree-width=4 version-check=off "
		 "port-range=40000-40010 barrier=60");
	p = plan(1, 1, 0, 1);
	te_rdzv_helper_argv(&p, "h", 1, 0, "why", &a);
	for (i = 0; i < sizeof(setting_flags) / sizeof(setting_flags[0]); i++)
		ok(!strstr(joined(&a), setting_flags[i]),
		   "every setting set: no %s on the command line",
		   setting_flags[i]);
	for (n = 0; a.argv[n]; n++)
		;
	ok(n == 10 && n < TE_RDZV_ARGV_MAX,
	   "every flag at once: 10 words, room for the end (got %d)", n);

	settings("barrier=off");
	p = plan(1, 1, 0, 1);
	te_rdzv_helper_argv(&p, "h", 1, 0, "why", &a);
	ok(!strstr(joined(&a), "--failed"),
	   "no barrier: no --failed (nobody waits for it)");
}

/* The launch timeline: when rank 0's task names the last node, and when
 * the helper tells srun for the step's record. */
static void test_timeline(void)
{
	struct te_rdzv_facts f = { .has_pmix = 1, .nodes_files = 1 };
	struct te_rdzv_plan p;
	struct te_rdzv_argv a;
	struct te_rdzv_opts o;
	char err[TE_ERR_MAX];

	settings("");
	te_rdzv_plan_make(&cfg, &f, &p);
	is_int((int)p.skew_warn_ms, 10000, "built-in barrier-skew-warn: 10 s");
	f.explain = 1;
	te_rdzv_plan_make(&cfg, &f, &p);
	is_int((int)p.skew_warn_ms, 0, "--train-explain: always");
	settings("barrier=off");
	te_rdzv_plan_make(&cfg, &f, &p);
	is_int((int)p.skew_warn_ms, -1, "no barrier: never, even explained");
	settings("barrier=off checkpoint-dir=/c");
	f.explain = 0;
	te_rdzv_plan_make(&cfg, &f, &p);
	is_int((int)p.skew_warn_ms, 10000, "a checkpoint check is a barrier");

	settings("");
	te_rdzv_plan_make(&cfg, &f, &p);
	te_rdzv_helper_argv(&p, "h", 1, 0, NULL, &a);
	ok(helper_reads(&a, &o, err, sizeof(err)) == 0 && !o.record,
	   "no record dir: the helper does not record");
	settings("nccl-dump-dir=/dumps");
	te_rdzv_plan_make(&cfg, &f, &p);
	te_rdzv_helper_argv(&p, "h", 1, 0, NULL, &a);
	ok(helper_reads(&a, &o, err, sizeof(err)) == 0 && o.record,
	   "a record dir: the helper records, from the settings (its own "
	   "protocol taken off)");
	settings("nccl-dump-dir=/dumps barrier=off");
	te_rdzv_plan_make(&cfg, &f, &p);
	te_rdzv_helper_argv(&p, "h", 1, 0, NULL, &a);
	ok(helper_reads(&a, &o, err, sizeof(err)) == 0 && !o.record,
	   "no barrier: no timeline, no record");
}

/* What the plugin writes (the command line and TRAINENV_SETTINGS), the
 * helper reads back the same. */
static void test_round_trip(void)
{
	struct te_rdzv_plan p;
	struct te_rdzv_argv a;
	struct te_rdzv_opts o;
	char err[TE_ERR_MAX];

	settings("port-range=40000-40999 version-check=off barrier=90 "
		 "checkpoint-dir=/shared/ck socket-ifname=yes "
		 "launch-tree-width=4");
	p = plan(1, 1, 0, 1);
	te_rdzv_helper_argv(&p, "trainenv-rdzv", 4242, 7,
			    "pre-flight: GPU 0 failed", &a);
	is_int(helper_reads(&a, &o, err, sizeof(err)), 0,
	       "the helper reads the plugin's command line and settings");
	ok(o.job == 4242 && o.step == 7 && o.port_lo == 40000 &&
		   o.port_hi == 40999 &&
		   o.port_start == te_master_port(4242, 7, 40000, 40999),
	   "job and step from the command line; ports from the settings, the "
	   "start port computed from them (te_master_port)");
	ok(o.barrier == 90 && o.vcheck == TE_W_VCHECK_OFF && o.ckpt &&
		   !strcmp(o.ckpt, "/shared/ck") && o.ifname && o.lead &&
		   !o.hooks && o.tree_width == 4,
	   "barrier, version check, checkpoint, interface names, tree width "
	   "from the settings, --lead from the command line");
	ok(o.failed && !strcmp(o.failed, "pre-flight: GPU 0 failed"),
	   "the failure text reads back");
	is_int((int)o.wait, 90, "  its wait: the barrier's seconds");

	settings("");
	p = plan(1, 0, 0, 0);
	te_rdzv_helper_argv(&p, "h", 1, 2, NULL, &a);
	ok(helper_reads(&a, &o, err, sizeof(err)) == 0 && o.barrier == 300 &&
		   o.port_lo == 20000 && o.port_hi == 29999 &&
		   o.vcheck == TE_W_VCHECK_WARN && o.tree_width == 16 &&
		   !o.ckpt && !o.ifname && !o.hooks && !o.lead,
	   "built-in settings: barrier 300, ports 20000-29999, version-check "
	   "warn, tree width 16, nothing else");
	settings("barrier=first-collective test-hooks=on");
	te_rdzv_helper_argv(&p, "h", 1, 2, NULL, &a);
	ok(helper_reads(&a, &o, err, sizeof(err)) == 0 && o.barrier == 0 &&
		   o.wait == 300 && o.hooks,
	   "first-collective: no launch barrier, rank 0's data within the "
	   "row's built-in 300 s; test-hooks=on read");
}

/* The settings the helper is given are the plugin's, or it refuses them:
 * none, forged or out of the table's bounds. */
static void test_helper_settings(void)
{
	static const char *const bad[][2] = {
		{ "barrier:4:604801:x", "barrier" },
		{ "barrier:4:0:x", "barrier" },
		{ "barrier:4:soon:x", "barrier" },
		{ "port-range:4:0-10:x", "port-range" },
		{ "port-range:4:30000-20000:x", "port-range" },
		{ "launch-tree-width:2:1:x", "launch-tree-width" },
		{ "launch-tree-width:2:1025:x", "launch-tree-width" },
		{ "version-check:4:maybe:x", "version-check" },
		{ "checkpoint-dir:4:rel/dir:x", "checkpoint-dir" },
		{ "socket-ifname:4:perhaps:x", "socket-ifname" },
	};
	struct te_rdzv_opts o;
	char err[TE_ERR_MAX];
	size_t i;

	memset(&o, 0, sizeof(o));
	is_int(te_rdzv_opts_settings(&o, NULL, err, sizeof(err)), -1,
	       "no TRAINENV_SETTINGS: the helper refuses");
	like(err, "no TRAINENV_SETTINGS", "  saying so");
	is_int(te_rdzv_opts_settings(&o, "barrier", err, sizeof(err)), -1,
	       "a malformed one: refused");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char want[96];

		te_snprintf(want, sizeof(want),
			    "TRAINENV_SETTINGS: item '%s': ", bad[i][1]);
		is_int(te_rdzv_opts_settings(&o, bad[i][0], err, sizeof(err)),
		       -1, "refused: %s", bad[i][0]);
		like(err, want, "  naming %s", bad[i][1]);
	}
	is_int(te_rdzv_opts_settings(&o,
				     "barrier:4:604800:x "
				     "future-knob:1:x:y",
				     err, sizeof(err)),
	       0, "the longest barrier, and a newer trainenv's item skipped");
	is_int((int)o.barrier, 604800, "  barrier 604800");
	o.job = 9;
	o.step = 1;
	is_int(te_rdzv_opts_settings(&o, "port-range:4:31000-31000:x", err,
				     sizeof(err)),
	       0, "one port");
	ok(o.port_lo == 31000 && o.port_hi == 31000 && o.port_start == 31000,
	   "  its start port is that port");
}

/* The helper's environment: one variable replaced or added. */
static void test_env_with(void)
{
	char *env[] = { "A=1",
			"PMIX_MCA_gds=ds21",
			"PMIX_MCA_gdsx=y",
			"PMIX_MCA_gds=ds12",
			"B=2",
			NULL };
	char *none[] = { NULL };
	char **e = te_env_with(env, "PMIX_MCA_gds=hash");

	ok(e && !strcmp(e[0], "A=1") && !strcmp(e[1], "PMIX_MCA_gds=hash") &&
		   !strcmp(e[2], "PMIX_MCA_gdsx=y") && !strcmp(e[3], "B=2") &&
		   !e[4],
	   "env_with: the value replaces the first entry, drops the "
	   "duplicate, leaves a longer name alone");
	free(e);
	e = te_env_with(none, "PMIX_MCA_gds=hash");
	ok(e && !strcmp(e[0], "PMIX_MCA_gds=hash") && !e[1],
	   "env_with: added to an empty environment");
	free(e);
	e = te_env_with(NULL, "X=1");
	ok(e && !strcmp(e[0], "X=1") && !e[1], "env_with: NULL environment");
	free(e);
}

static void test_end_step_wait(void)
{
	ok(te_end_step_wait_ms(0) == TE_END_STEP_SETTLE_MS,
	   "end of the step: a step just launched here waits the whole "
	   "settling time");
	ok(te_end_step_wait_ms(150) == TE_END_STEP_SETTLE_MS - 150,
	   "end of the step: 150 ms on the node: the rest of it");
	ok(te_end_step_wait_ms(TE_END_STEP_SETTLE_MS - 1) == 1,
	   "end of the step: 1 ms short: 1 ms");
	ok(te_end_step_wait_ms(TE_END_STEP_SETTLE_MS) == 0 &&
		   te_end_step_wait_ms(3600000) == 0 &&
		   te_end_step_wait_ms(INT64_MAX) == 0,
	   "end of the step: at or past the settling time: at once");
	ok(te_end_step_wait_ms(-5) == TE_END_STEP_SETTLE_MS &&
		   te_end_step_wait_ms(INT64_MIN) == TE_END_STEP_SETTLE_MS,
	   "end of the step: a clock that went back: the whole settling "
	   "time, never more");
}

int main(void)
{
	test_end_step_wait();
	test_env_with();
	test_timeline();
	test_roles();
	test_deadlines();
	test_argv();
	test_round_trip();
	test_helper_settings();
	return tap_done();
}
