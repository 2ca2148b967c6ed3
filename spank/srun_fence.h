/* SPDX-License-Identifier: GPL-2.0-or-later */
/* srun: the step's PMIx fence algorithm (srun_fence.c). */
#ifndef TE_SRUN_FENCE_H
#define TE_SRUN_FENCE_H

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "launch/fence_choice.h"

/* Decides SLURM_PMIX_FENCE for the step (core/launch/fence_choice.h), sets it and
 * TRAINENV_FENCE in srun's environment (which the step inherits), prints
 * the decision's warning if any. c receives the decision (for
 * --train-explain). Returns 0. */
int te_srun_fence(spank_t sp, struct te_fence_choice *c);

/* srun's own configuration as srun loaded it (slurm.conf with its Include
 * files, or from slurmctld when configless), or NULL: looked up in srun's
 * libslurm (libslurmfull exports it), for the plugin links no Slurm
 * library. Its layout is the one of the headers the plugin was built
 * against, which SPANK_PLUGIN() ties to the running Slurm's release. */
const slurm_conf_t *te_srun_slurm_conf(void);

#endif
