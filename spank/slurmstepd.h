/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The slurmstepd side's entry points (slurmstepd.c), called only from
 * plugin.c's callbacks in the S_CTX_REMOTE context: 0 or -1 as SPANK
 * wants. What the per-task features share is stepd_step.h's. */
#ifndef TE_SLURMSTEPD_H
#define TE_SLURMSTEPD_H

#include <slurm/spank.h>

int te_stepd_post_opt(spank_t sp);
int te_stepd_user_init(spank_t sp);
int te_stepd_task_init_priv(spank_t sp);
int te_stepd_task_init(spank_t sp);
int te_stepd_task_exit(spank_t sp);
int te_stepd_exit(spank_t sp);

#endif
