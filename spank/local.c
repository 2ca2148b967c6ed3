/* srun: refuse bad values before anything is allocated, shield the step from
 * the terminal's hang-up, explain the settings, and print the first-failure
 * report. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "failrep.h"
#include "hangup.h"
#include "plugin.h"
#include "rankenv.h"
#include "strutil.h"
#include "submit.h"

static int post_opt_done, user_init_done;

int te_local_post_opt(spank_t sp)
{
	char err[TE_ERR_MAX];

	/* Called once per component of a heterogeneous step. */
	if (post_opt_done++)
		return 0;
	if (te_submit_resolve() < 0)
		return -1;
	if (!te_submit_train_on() || te_plug.cfg.v[TE_S_SIGHUP].word != 0)
		return 0;
	if (te_hangup_is_pty())
		return 0;	/* an interactive shell ends with its terminal */
	/* Must happen before srun starts its signal thread, which turns
	 * SIGHUP into SIGKILL for every task. */
	if (te_hangup_shield(err, sizeof(err)) < 0)
		fprintf(stderr, TE_PREFIX "warning: the step is not protected "
			"from the terminal's hang-up: %s\n", err);
	return 0;
}

static void explain_launcher(spank_t sp)
{
	uint32_t ntasks = 0, nnodes = 0;
	char **argv = NULL, why[160];
	int argc = 0;
	enum te_launch mode;

	spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &ntasks);
	spank_get_item(sp, S_JOB_NNODES, &nnodes);
	if (spank_get_item(sp, S_JOB_ARGV, &argc, &argv) != ESPANK_SUCCESS)
		argc = 0;
	mode = te_launcher_decide(te_plug.cfg.v[TE_S_LAUNCHER].word, argc,
				  argv, ntasks, nnodes, 0, why, sizeof(why));
	fprintf(stderr, TE_PREFIX "launch style: %s (%s%s); %u tasks on %u "
		"nodes; rank environment %s\n",
		mode == TE_LAUNCH_TASK ? "task" : "torchrun", why,
		mode == TE_LAUNCH_TASK && ntasks == nnodes &&
				te_plug.cfg.v[TE_S_LAUNCHER].word == 0 ?
			"; torchrun on nodes where the task has several GPUs" :
			"",
		ntasks, nnodes,
		te_plug.cfg.v[TE_S_RANK_ENV].word == 0 ? "exported" :
							 "not exported");
}

int te_local_user_init(spank_t sp)
{
	char env[64], err[TE_ERR_MAX];

	if (user_init_done++ || !te_plug.resolved)
		return 0;
	if (te_plug.explain) {
		te_submit_explain("step");
		if (te_submit_train_on())
			explain_launcher(sp);
	}
	if (!te_submit_train_on() ||
	    te_plug.cfg.v[TE_S_FAILURE_REPORT].word != 0)
		return 0;
	if (te_failrep_listen(env, sizeof(env), err, sizeof(err)) < 0) {
		fprintf(stderr, TE_PREFIX "warning: no first-failure report "
			"for this step: %s\n", err);
		return 0;
	}
	/* srun copies its environment into the job's after this callback */
	if (spank_setenv(sp, TE_FAILREP_ENV, env, 1) != ESPANK_SUCCESS)
		setenv(TE_FAILREP_ENV, env, 1);
	return 0;
}

int te_local_exit(spank_t sp)
{
	te_failrep_finish(500);
	return 0;
}
