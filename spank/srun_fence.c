/* SPDX-License-Identifier: GPL-2.0-or-later */
/* srun: the step's PMIx fence algorithm (SLURM_PMIX_FENCE), decided by
 * core/launch/fence_choice.c from the step's nodes and the cluster's TreeWidth, and
 * exported with TRAINENV_FENCE for the job side. */
#include "config.h"

#include <dlfcn.h>
#include <slurm/slurm.h>
#include <stdio.h>
#include <stdlib.h>

#include "launch/fence_choice.h"
#include "state.h"
#include "srun_fence.h"

/* A TreeWidth Slurm would use: 1..65533 (NO_VAL16 and INFINITE16 are not) */
static int width_ok(unsigned w)
{
	return w > 0 && w < NO_VAL16;
}

const slurm_conf_t *te_srun_slurm_conf(void)
{
	return dlsym(RTLD_DEFAULT, "slurm_conf");
}

/* The cluster's TreeWidth as slurmstepd will use it, or 0 with *from NULL.
 * First srun's own configuration, already loaded (slurm.conf with its
 * Include files, or fetched from slurmctld when configless): no message to
 * anyone, the same configuration the nodes read. Else slurmctld's, with
 * one RPC, looked up in srun's own libslurm too. */
static unsigned tree_width(const char **from)
{
	const slurm_conf_t *own = te_srun_slurm_conf();
	int (*load)(time_t, slurm_conf_t **) =
		(int (*)(time_t, slurm_conf_t **))dlsym(RTLD_DEFAULT,
							"slurm_load_ctl_conf");
	void (*release)(slurm_conf_t *) = (void (*)(slurm_conf_t *))dlsym(
		RTLD_DEFAULT, "slurm_free_ctl_conf");
	slurm_conf_t *ctl = NULL;
	unsigned w = 0;

	*from = NULL;
	if (own && width_ok(own->tree_width)) {
		*from = "srun's slurm.conf";
		return own->tree_width;
	}
	if (load && release && load((time_t)0, &ctl) == 0 && ctl) {
		if (width_ok(ctl->tree_width)) {
			w = ctl->tree_width;
			*from = "slurmctld";
		}
		release(ctl);
	}
	return w;
}

int te_srun_fence(spank_t sp, struct te_fence_choice *c)
{
	struct te_fence_in in = {
		.site = &te_plug.cfg.v[TE_S_FENCE_TREE_MIN_NODES],
		.env = getenv(TE_FENCE_ENV),
		.decided = getenv(TE_FENCE_DECIDED_ENV),
	};
	uint32_t nnodes = 0;

	if (spank_get_item(sp, S_JOB_NNODES, &nnodes) != ESPANK_SUCCESS)
		nnodes = 0; /* unknown: ring, a barrier on any count */
	in.nnodes = nnodes;
	in.tree_width = tree_width(&in.width_from);
	te_fence_choose(&in, c);
	if (c->warn[0])
		fprintf(stderr, TE_PREFIX "warning: %s\n", c->warn);
	/* srun copies its environment into the step's after this callback;
	 * SLURM_* variables reach the step even with --export=NONE */
	if (spank_setenv(sp, TE_FENCE_ENV, c->value, 1) != ESPANK_SUCCESS)
		setenv(TE_FENCE_ENV, c->value, 1);
	if (spank_setenv(sp, TE_FENCE_DECIDED_ENV, c->value, 1) !=
	    ESPANK_SUCCESS)
		setenv(TE_FENCE_DECIDED_ENV, c->value, 1);
	return 0;
}
