/* SPDX-License-Identifier: GPL-2.0-or-later */
/* slurmstepd, per task: --train-straggler's profiler plugin
 * (stepd_straggler.c). */
#ifndef TE_STEPD_STRAGGLER_H
#define TE_STEPD_STRAGGLER_H

#include <slurm/spank.h>

/* NCCL_PROFILER_PLUGIN for a rank of a step that follows stragglers; a
 * job's own is kept (srun said so). in_container: OCI or Apptainer (no
 * trainenv library there: srun said so; pyxis's image gets it from
 * trainenv's enroot mount entries). */
void te_stepd_straggler_env(spank_t sp, int in_container);

#endif
