/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The SPANK entry points. Each callback only looks at the context and calls
 * into the file for that context; nothing else lives here, and nothing
 * calls back into this file (the shared state, te_plug, is state.c's). */
#include "config.h"

#include <string.h>

#include "alloc.h"
#include "jobprolog.h"
#include "health/health_prolog.h"
#include "options.h"
#include "slurmstepd.h"
#include "srun.h"
#include "srun/srunargs.h"
#include "state.h"

SPANK_PLUGIN(trainenv, 1);

static int context_wanted(spank_context_t c)
{
	return c == S_CTX_LOCAL || c == S_CTX_ALLOCATOR || c == S_CTX_REMOTE;
}

/* The site's policy from plugstack.conf's arguments into te_plug: the
 * settings, and node health's keys checked by their room. */
static void policy_read(spank_context_t c, int ac, char **av)
{
	static struct te_health_policy hp;
	static struct te_drain_policy dp;
	static struct te_health_prolog_policy pp;

	memset(&te_plug, 0, sizeof(te_plug));
	te_plug.ctx = c;
	te_policy_init(&te_plug.pol);
	te_plug.policy_ok =
		te_policy_args(&te_plug.pol, ac, av, te_plug.policy_err,
			       sizeof(te_plug.policy_err)) == 0 &&
		te_health_site_load(te_plug.pol.health.items, &hp, &dp, &pp,
				    te_plug.policy_err,
				    sizeof(te_plug.policy_err)) == 0;
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	spank_context_t c = spank_context();

	if (!context_wanted(c))
		return 0;
	policy_read(c, ac, av);
	te_srun_argv_set_release(SLURM_VERSION_NUMBER);
	if (c == S_CTX_LOCAL)
		te_srun_init(); /* before srun reads its options */
	if (te_options_register(sp) < 0)
		return c == S_CTX_REMOTE ? 0 : -1;
	if (te_plug.policy_ok)
		return 0;
	slurm_error(TE_PREFIX "%s", te_plug.policy_err);
	/* In slurmstepd a failure here would fail the step launch in a way
	 * that can drain the node: remember it and fail the tasks instead. */
	return c == S_CTX_REMOTE ? 0 : -1;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	switch (spank_context()) {
	case S_CTX_LOCAL:
		return te_srun_post_opt(sp);
	case S_CTX_ALLOCATOR:
		return te_alloc_post_opt(sp);
	case S_CTX_REMOTE:
		return te_stepd_post_opt(sp);
	default:
		return 0;
	}
}

int slurm_spank_local_user_init(spank_t sp, int ac, char **av)
{
	if (spank_context() == S_CTX_LOCAL)
		return te_srun_user_init(sp);
	return 0;
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
	if (spank_context() == S_CTX_REMOTE)
		return te_stepd_user_init(sp);
	return 0;
}

int slurm_spank_task_init_privileged(spank_t sp, int ac, char **av)
{
	if (spank_context() == S_CTX_REMOTE)
		return te_stepd_task_init_priv(sp);
	return 0;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	if (spank_context() == S_CTX_REMOTE)
		return te_stepd_task_init(sp);
	return 0;
}

int slurm_spank_task_exit(spank_t sp, int ac, char **av)
{
	if (spank_context() == S_CTX_REMOTE)
		return te_stepd_task_exit(sp);
	return 0;
}

/* The job prolog and epilog run in a stack of their own (slurmd's
 * `slurmstepd spank prolog`), where slurm_spank_init is never called: the
 * site's policy is read here. A bad one is said, never returned: a failed
 * prolog drains the node for a configuration error. */
static int job_script_policy(int ac, char **av)
{
	policy_read(S_CTX_JOB_SCRIPT, ac, av);
	if (!te_plug.policy_ok)
		slurm_error(TE_PREFIX "%s (job prolog: no health checks)",
			    te_plug.policy_err);
	return te_plug.policy_ok ? 0 : -1;
}

int slurm_spank_job_prolog(spank_t sp, int ac, char **av)
{
	if (spank_context() != S_CTX_JOB_SCRIPT || job_script_policy(ac, av))
		return 0;
	return te_job_prolog(sp);
}

/* The verdict goes whatever the policy says now: a site that turned the
 * checks off or broke its policy since the prolog still leaves none. */
int slurm_spank_job_epilog(spank_t sp, int ac, char **av)
{
	if (spank_context() != S_CTX_JOB_SCRIPT)
		return 0;
	return te_job_epilog(sp);
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	int rc = 0;

	switch (spank_context()) {
	case S_CTX_LOCAL:
		rc = te_srun_exit(sp);
		break;
	case S_CTX_REMOTE:
		rc = te_stepd_exit(sp);
		break;
	default:
		break;
	}
	te_options_free();
	return rc;
}
