/* SPDX-License-Identifier: GPL-2.0-or-later */
/* slurmstepd, per task: the launch rendezvous and the first-collective
 * barrier's preload (stepd_rdzv.c). */
#ifndef TE_STEPD_RDZV_H
#define TE_STEPD_RDZV_H

#include <stdint.h>
#include <slurm/spank.h>

#include "launch/rdzv_proto.h"

/* The launch rendezvous for one task (1: rr holds the result; 0: none for
 * this step; -1: the task fails, te_stepd_err says why), whether the step
 * has a PMIx server, and the first-collective barrier's preload. */
int te_stepd_has_pmix(spank_t sp);
int te_stepd_rendezvous(spank_t sp, uint32_t local_id, uint32_t global_id,
			struct te_rdzv_result *rr, int *quiet,
			const char *failed);
int te_stepd_preload_nccl_barrier(spank_t sp);
/* Set by te_stepd_rendezvous when this task's helper speaks another
 * protocol under the barrier: after saying why, the task ends the step
 * (te_stepd_end_step_now), so that the other nodes need not wait for the
 * barrier's deadline. */
extern int te_stepd_end_step;
void te_stepd_end_step_now(void);

#endif
