/* SPDX-License-Identifier: GPL-2.0-or-later */
/* slurmstepd, per task: APPTAINERENV_ and SINGULARITYENV_ copies of what
 * trainenv set (spank/stepd_apptainer.c, core/container/apptainer_env.h). */
#ifndef TE_SPANK_APPTAINER_H
#define TE_SPANK_APPTAINER_H

#include <stdint.h>
#include <slurm/spank.h>

/* Last in task_init, once the task's environment is what trainenv
 * decided. */
void te_stepd_apptainer_env(spank_t sp, uint32_t local_id);

#endif
