/* srun: refuse bad values before anything is allocated, shield the step from
 * the terminal's hang-up, explain the settings, and print the first-failure
 * report. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The PMIx layer needs srun's PMIx plugin (srun --mpi=pmix, or
 * MpiDefault=pmix): srun knows its MPI type by now (SLURM_MPI_TYPE). Says
 * once, here, what cannot run without it, instead of once per task.
 * Returns -1 only when the user insists on --train-rdzv=pmix. */
static int pmix_notice(void)
{
	const struct te_config *c = &te_plug.cfg;
	const char *mpi = getenv("SLURM_MPI_TYPE");
	const struct te_value *b = &c->v[TE_S_BARRIER];
	const struct te_value *ck = &c->v[TE_S_CHECKPOINT_DIR];
	char what[TE_VALUE_MAX + 96] = "";

	if (mpi && !strncmp(mpi, "pmix", 4))
		return 0;
	if (c->v[TE_S_RDZV].word == 2)	/* computed: nothing expected */
		return 0;
	if (c->v[TE_S_RDZV].word == 1) {
		fprintf(stderr, TE_PREFIX "error: --train-rdzv=pmix needs PMIx, "
			"but this step's MPI type is '%s': run srun --mpi=pmix "
			"(or set MpiDefault=pmix in slurm.conf)\n",
			mpi ? mpi : "none");
		return -1;
	}
	/* the built-in barrier applies under PMIx only: no need to say */
	if (b->set && b->word < 0 && b->src != TE_SRC_BUILTIN)
		te_appendf(what, sizeof(what), "--train-barrier=%s cannot run",
			   b->text);
	if (c->v[TE_S_VERSION_CHECK].word == 1)
		te_appendf(what, sizeof(what), "%s--train-version-check=fail "
			   "cannot run", what[0] ? "; " : "");
	if (ck->set)
		te_appendf(what, sizeof(what), "%sthe checkpoint directory is "
			   "exported without the shared-storage check",
			   what[0] ? "; " : "");
	if (!what[0])
		return 0;
	fprintf(stderr, TE_PREFIX "warning: the barrier is unavailable: this "
		"step has no PMIx (MPI type '%s'): %s; the tasks start as they "
		"come, with the computed MASTER_ADDR/MASTER_PORT. Fix: srun "
		"--mpi=pmix (or MpiDefault=pmix in slurm.conf)\n",
		mpi ? mpi : "none", what);
	return 0;
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
	if (te_submit_train_on() && pmix_notice() < 0)
		return -1;
	/* Slurm 22.05's mpi/pmix picks its tree algorithm for a fence
	 * without data and its ring algorithm for one with data, per node;
	 * seen with OpenPMIx 4.2.2: the tree fence returned on every node
	 * whose own ranks had arrived without waiting for the other nodes,
	 * and fences of later PMIx clients of a rank now and then failed
	 * with UNPACK-PAST-END. The ring algorithm for every fence is a
	 * real job-wide barrier. The user's (or site's) own value wins. */
	if (te_submit_train_on() && te_plug.cfg.v[TE_S_RDZV].word != 2 &&
	    !getenv("SLURM_PMIX_FENCE") &&
	    spank_setenv(sp, "SLURM_PMIX_FENCE", "ring", 0) != ESPANK_SUCCESS)
		setenv("SLURM_PMIX_FENCE", "ring", 0);
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
