/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sbatch and salloc: check the settings at submission so that a bad value
 * is refused before the job is queued. The options travel to every step of
 * the job (as _SLURM_SPANK_OPTION_trainenv_* variables) and are checked
 * again there against the policy of the node. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "srun_hangup.h"
#include "alloc.h"
#include "alloc_spares.h"
#include "report/recovery.h"
#include "srun/srunargs.h"
#include "state.h"
#include "submit.h"

int te_alloc_post_opt(spank_t sp)
{
	char **argv = NULL;
	int argc;

	(void)sp;
	if (te_submit_resolve() < 0)
		return -1;
	te_submit_explain("job");
	/* Slurm 22.05 does not show a job's own --signal to its steps: the
	 * job's environment says so, for --train-time-signal (srun). sbatch
	 * takes --signal as srun does; its #SBATCH lines are not seen. */
	argc = te_srun_argv(&argv);
	if (getenv("SBATCH_SIGNAL") || getenv("SALLOC_SIGNAL") ||
	    te_srun_asks_signal(argc, argv))
		setenv(TE_JOB_SIGNAL_ENV, "1", 1);
	if (te_submit_train_on())
		te_alloc_spares_no_kill(argc, argv);
	return 0;
}
