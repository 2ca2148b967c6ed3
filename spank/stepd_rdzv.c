/* SPDX-License-Identifier: GPL-2.0-or-later */
/* slurmstepd, per task: the launch rendezvous (the node's first task runs
 * trainenv-rdzv for the node, the others follow through files: see
 * stepd_rdzv_client.c) and the first-collective barrier's preload. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "slurm_compat.h"

#include "health/health_storage.h"
#include "launch/rankenv.h"
#include "stepd_rdzv_client.h"
#include "launch/rdzv_plan.h"
#include "util/runcap.h"
#include "stepd_rdzv.h"
#include "stepd_step.h"
#include "util/strutil.h"
#include "util/sysutil.h"

int te_stepd_end_step;

/* A node whose launch helper speaks another protocol cannot take part in
 * the rendezvous as a failed node: what tells rank 0 of a failure before
 * the barrier (a failure file, the helper's --failed, the coordinator's
 * "failed" line) is that very helper, and the coordinator's address and
 * token are only published over PMIx, which slurmstepd must not speak
 * (docs/design.md section 3). The other nodes would wait for the
 * barrier's deadline (te_setting_barrier_s). So under the barrier, once the
 * node's tasks have said why, the task that ran the helper ends the step
 * through slurmctld, as the job's user ending its own step (task_init runs
 * in the task's process, as that user): every other rank is still held
 * at the barrier, none has run. Slurm's RPC is bounded by its
 * MessageTimeout; a refusal goes to the node's log, and the others then
 * wait for the deadline as before. It is sent once the step has been
 * TE_END_STEP_SETTLE_MS here (core/launch/rdzv_plan.h): a node whose slurmstepd
 * was not up yet would miss it and wait for the barrier's deadline. The
 * wait is in this task's process, which fails anyway, not in slurmstepd. */
void te_stepd_end_step_now(void)
{
	te_sleep_ms(te_end_step_wait_ms(te_now_ms() - te_step.since_ms));
	if (te_slurm_signal_step(te_step.job_id, te_step.step_id, SIGKILL) != 0)
		slurm_info(TE_PREFIX "could not end step %u.%u after the "
				     "protocol mismatch: %s",
			   te_step.job_id, te_step.step_id,
			   slurm_strerror(te_slurm_errno()));
}

/* The step has a PMIx server for its tasks (srun --mpi=pmix). */
int te_stepd_has_pmix(spank_t sp)
{
	return te_stepd_getenv(sp, "PMIX_RANK") &&
	       te_stepd_getenv(sp, "PMIX_NAMESPACE");
}

/* --train-barrier=first-collective: the job-wide barrier runs in each
 * process right before its first NCCL communicator, from trainenv-nccl.so
 * in LD_PRELOAD (before the user's own preloads). Its deadline is the
 * site's numeric barrier value, else the row's built-in
 * (te_setting_barrier_s): the site's number is in the policy, not in the
 * encoded settings, so it goes to the tasks as TRAINENV_BARRIER_TIMEOUT,
 * which libtrainenv and the NCCL shim read. */
int te_stepd_preload_nccl_barrier(spank_t sp)
{
	const char *old = te_stepd_getenv(sp, "LD_PRELOAD");
	char lib[TE_VALUE_MAX + 32], val[2 * TE_VALUE_MAX + 40], secs[24];
	int rc = te_stepd_lib_file("trainenv-nccl.so", lib, sizeof(lib));

	if (rc == -2 ||
	    te_snprintf(val, sizeof(val), "%s%s%s", lib, old && *old ? ":" : "",
			old ? old : "") < 0) {
		return te_err(te_stepd_err, sizeof(te_stepd_err),
			      "LD_PRELOAD too "
			      "long for the first-collective barrier");
	}
	if (rc < 0)
		return te_err(te_stepd_err, sizeof(te_stepd_err),
			      "barrier="
			      "first-collective: %s: %s",
			      lib, strerror(errno));
	te_snprintf(secs, sizeof(secs), "%lu",
		    te_setting_barrier_s(&te_plug.cfg, &te_plug.pol));
	spank_setenv(sp, TE_BARRIER_TIMEOUT_ENV, secs, 1);
	spank_setenv(sp, "LD_PRELOAD", val, 1);
	return 0;
}

/* Rank 0 says once for the step why the node's tasks each run a helper:
 * the step's PMIx directory is not the job user's alone. Slurm made it
 * 0770 before 22.05.10 and 23.02.6 (the CVE-2023-41914 fix, which
 * Debian backported), and the node's tasks only share their arrival files
 * in a directory no other user can write. */
static void say_shared_pmix_dir(const char *dir)
{
	struct stat st;

	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return;
	fprintf(stderr,
		TE_PREFIX
		"note: this step's PMIx directory "
		"(PMIX_SERVER_TMPDIR, mode %04o, owner uid %u) is not private "
		"to the job's user, as Slurm before 22.05.10 and 23.02.6 makes "
		"it: every task runs its own launch helper instead of one per "
		"node (same result, slower launch); a Slurm with the "
		"CVE-2023-41914 fix makes it private\n",
		(unsigned)(st.st_mode & 07777), (unsigned)st.st_uid);
}

/* The test hooks of a task that follows its node's first one
 * (--train-test-hooks=on): TRAINENV_TEST_DELAY holds it back, and
 * TRAINENV_TEST_FAIL_RANK fails it before the barrier (te_stepd_err and
 * why say so). Returns what the task's failure now is: failed, or why. */
static const char *follower_hooks(spank_t sp, uint32_t global_id,
				  const char *failed, char *why, size_t whylen)
{
	char buf[32], rank[16];
	const char *v;
	uint64_t d;

	if ((v = te_hook_value(te_stepd_getenv(sp, "TRAINENV_TEST_DELAY"),
			       te_step.node, buf, sizeof(buf))) &&
	    te_parse_u64(v, 600, &d) == 0)
		sleep((unsigned)d);
	te_snprintf(rank, sizeof(rank), "%u", global_id);
	if (!failed && (v = te_stepd_getenv(sp, "TRAINENV_TEST_FAIL_RANK")) &&
	    !strcmp(v, rank)) {
		te_snprintf(te_stepd_err, sizeof(te_stepd_err),
			    "test hook TRAINENV_TEST_FAIL_RANK: "
			    "rank %s fails before the barrier",
			    v);
		te_strlcpy(why, te_stepd_err, whylen);
		failed = why;
	}
	return failed;
}

/* The job's storage check for the helper (TRAINENV_HEALTH_STORAGE, always
 * set here: the job's own value never reaches the helper) with
 * PMIX_MCA_gds=hash: an environment of its own, or NULL (out of memory:
 * the helper is not run, rather than run with the job's value). */
static char **storage_env(char **envp)
{
	static char val[128]; /* the environment points at it */
	struct te_storage_opts so;
	char **one, **two;

	te_storage_opts_for(te_plug.policy_ok ? te_plug.pol.health.items : "",
			    te_plug.health_opt, te_step.node, &so);
	if (te_storage_env_format(&so, val, sizeof(val)) < 0)
		return NULL;
	one = te_env_with(envp, "PMIX_MCA_gds=hash");
	if (!one)
		return NULL;
	two = te_env_with(one, val);
	free(one);
	return two;
}

/* The node's first task (or every task, without the node's files) runs
 * trainenv-rdzv: 0 with rr filled from its output, or -1 (te_stepd_err
 * says why; the node's other tasks are told through tmpdir). */
static int run_helper(spank_t sp, const struct te_rdzv_plan *plan,
		      const char *tmpdir, const char *failed,
		      struct te_rdzv_result *rr)
{
	struct te_rdzv_argv args;
	char path[TE_VALUE_MAX + 32], err[TE_ERR_MAX];
	char **envp = NULL, **helper_env;
	int rc, lead_lock = -1;

	if (te_helper_path(TE_RDZV_HELPER, path, sizeof(path)) < 0) {
		te_snprintf(te_stepd_err, sizeof(te_stepd_err),
			    "helper-dir is "
			    "too long");
		goto leader_failed;
	}
	/* the settings travel in the environment (TRAINENV_SETTINGS, set by
	 * export_settings before this), not on the command line */
	te_rdzv_helper_argv(plan, TE_RDZV_HELPER, te_step.job_id,
			    te_step.step_id, failed, &args);
	if (spank_get_item(sp, S_JOB_ENV, &envp) != ESPANK_SUCCESS || !envp) {
		te_snprintf(te_stepd_err, sizeof(te_stepd_err),
			    "cannot read the "
			    "task's environment for the rendezvous");
		goto leader_failed;
	}
	/* The helper is this rank's first PMIx client. With the hash store
	 * its PMIx_Init took 5-12 ms instead of 13-26 ms at 3 x 8 ranks on
	 * 2 CPUs: no attaching of the ds12 and ds21 shared-memory segments
	 * (strace). Every later client of the rank uses hash anyway
	 * (task_init exports it), so nothing else changes. */
	helper_env = storage_env(envp);
	if (!helper_env) {
		te_snprintf(te_stepd_err, sizeof(te_stepd_err),
			    "out of memory for the rendezvous's environment");
		goto leader_failed;
	}
	/* held while this task waits: its followers see it end */
	lead_lock = plan->lead ? te_rdzv_lead_lock(tmpdir) : -1;
	rc = te_rdzv_spawn(path, args.argv, helper_env, plan->timeout_ms, rr,
			   err, sizeof(err));
	free(helper_env);
	if (rc == -2) { /* the one line that names both versions */
		te_snprintf(te_stepd_err, sizeof(te_stepd_err), "node %s: %s",
			    te_step.node, err);
		te_stepd_end_step = plan->barrier_mode;
		goto leader_failed;
	}
	if (rc == -3) { /* not the rendezvous's fault: no hint */
		te_snprintf(te_stepd_err, sizeof(te_stepd_err),
			    "node %s: "
			    "rendezvous: %s",
			    te_step.node, err);
		goto leader_failed;
	}
	if (rc < 0) {
		te_snprintf(te_stepd_err, sizeof(te_stepd_err),
			    "rendezvous: %s "
			    "(--train-rdzv=computed skips the PMIx rendezvous)",
			    err);
		goto leader_failed;
	}
	if (lead_lock >= 0)
		close(lead_lock); /* the node's result is there */
	return 0;
leader_failed:
	/* the node's other tasks wait for this task's result */
	if (plan->lead)
		te_rdzv_leave_error(tmpdir, te_stepd_err);
	if (lead_lock >= 0)
		close(lead_lock);
	return -1;
}

/* The node's result for this task, the helper's or the node's first
 * task's: its warnings and launch skew said, then 1, or -1 when it says
 * the step failed (te_stepd_err; *quiet: rank 0 reports it for the job). */
static int rdzv_result(const struct te_rdzv_result *rr, long skew_warn_ms,
		       int *quiet)
{
	int n;

	for (n = 0; n < rr->nwarn; n++)
		fprintf(stderr, TE_PREFIX "warning: %s\n", rr->warn[n]);
	if (rr->has_launch && te_launch_skew_say(&rr->launch, skew_warn_ms)) {
		char line[TE_RDZV_TEXT_MAX];

		te_launch_skew_line(&rr->launch, line, sizeof(line));
		fprintf(stderr, TE_PREFIX "%s\n", line);
	}
	fflush(stderr);
	if (rr->failed) {
		te_strlcpy(te_stepd_err, rr->error, sizeof(te_stepd_err));
		*quiet = rr->quiet;
		return -1;
	}
	return 1;
}

/* The launch rendezvous for this task. The node's first task runs
 * trainenv-rdzv, which stands for the node's other tasks; they only say
 * they are here and wait for its result (both through files in the step's
 * private PMIx directory). 1: rr holds the results; 0: no PMIx rendezvous
 * for this step (computed one); -1: the task must fail (te_stepd_err says
 * why; *quiet: rank 0 reports it for the job).
 *
 * failed: this task already failed (the pre-flight), why: then it does
 * not arrive. With a barrier, rank 0 hears of it (a follower leaves a
 * failure file, the node's helper runs with --failed) and fails the whole
 * step at once; without one the task fails alone, and the node's first
 * task still runs the helper for the node's other tasks. */
int te_stepd_rendezvous(spank_t sp, uint32_t local_id, uint32_t global_id,
			struct te_rdzv_result *rr, int *quiet,
			const char *failed)
{
	const struct te_config *c = &te_plug.cfg;
	struct te_rdzv_facts facts = { .local_id = local_id };
	struct te_rdzv_plan plan;
	char err[TE_ERR_MAX], tmpdir[TE_VALUE_MAX + 2], hook_why[96];
	const char *s;

	*quiet = 0;
	facts.has_pmix = te_stepd_has_pmix(sp);
	switch (te_rdzv_wanted(c, facts.has_pmix)) {
	case TE_RDZV_SKIP:
		return 0;
	case TE_RDZV_NO_PMIX:
		return te_err(te_stepd_err, sizeof(te_stepd_err),
			      "rdzv=pmix, but "
			      "this step has no PMIx server: run it with srun "
			      "--mpi=pmix (or MpiDefault=pmix)");
	default:
		break;
	}
	s = te_stepd_getenv(sp, "PMIX_SERVER_TMPDIR");
	facts.nodes_files =
		s && te_strlcpy(tmpdir, s, sizeof(tmpdir)) < sizeof(tmpdir) &&
		te_step.local_tasks > 1 && te_private_dir_ok(tmpdir);
	if (facts.nodes_files && local_id != 0 &&
	    c->v[TE_S_TEST_HOOKS].word == TE_W_ON)
		failed = follower_hooks(sp, global_id, failed, hook_why,
					sizeof(hook_why));
	facts.failed = failed != NULL;
	facts.explain = te_plug.explain;
	te_rdzv_plan_make(c, &facts, &plan);
	{
		struct te_storage_opts so;

		/* the storage check comes before the barrier: its bound on
		 * top of the helper's */
		te_storage_opts_for(te_plug.policy_ok ? te_plug.pol.health.items
						      : "",
				    te_plug.health_opt, te_step.node, &so);
		if (so.bytes && c->v[TE_S_CHECKPOINT_DIR].set)
			plan.timeout_ms += (int)so.bound_s * 1000;
	}
	if (global_id == 0 && !facts.nodes_files && s &&
	    te_step.local_tasks > 1)
		say_shared_pmix_dir(tmpdir);
	switch (plan.role) {
	case TE_RDZV_SKIP:
	case TE_RDZV_NO_PMIX:
		return -1; /* te_rdzv_wanted() said so above */
	case TE_RDZV_FOLLOW_FAILED:
		/* rank 0 fails the step at once: no waiting for the
		 * barrier's deadline */
		if (plan.barrier_mode &&
		    te_rdzv_leave_failed(tmpdir, global_id, failed) < 0)
			slurm_info(TE_PREFIX "rank %u: cannot leave its "
					     "failure file in %s",
				   global_id, tmpdir);
		return -1;
	case TE_RDZV_FAIL_ALONE:
		return -1;
	case TE_RDZV_FOLLOW:
		if (te_rdzv_follow(tmpdir, global_id, plan.timeout_ms, rr, err,
				   sizeof(err)) < 0) {
			return te_err(te_stepd_err, sizeof(te_stepd_err),
				      "rendezvous: %s", err);
		}
		return rdzv_result(rr, plan.skew_warn_ms, quiet);
	case TE_RDZV_RUN_HELPER:
		break;
	}
	if (run_helper(sp, &plan, tmpdir, failed, rr) < 0)
		return -1;
	if (failed)
		return -1; /* the caller reports this task's own failure */
	return rdzv_result(rr, plan.skew_warn_ms, quiet);
}
