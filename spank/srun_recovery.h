/* SPDX-License-Identifier: GPL-2.0-or-later */
/* srun's recovery (srun_recovery.c): --train-requeue at the step's end and
 * --train-time-signal while it runs; the decisions are core/report/recovery.h.
 */
#ifndef TE_SRUN_RECOVERY_H
#define TE_SRUN_RECOVERY_H

#include <stddef.h>
#include <stdint.h>
#include <slurm/spank.h>

/* At srun's user_init, once the step's ids are known: reads the job from
 * slurmctld, gives the tasks TRAINENV_RESTART and TRAINENV_EXCLUDED_NODES
 * (with --train-requeue), arms the time signal in a thread of its own
 * (it re-reads the job's end time when due: it may have moved). Returns 1
 * when srun's listener thread must run for it (the failure reports). */
int te_recovery_srun_init(spank_t sp, uint32_t job, uint32_t step);

/* At srun's end, after the failure reports are in: blame and decide (a
 * relaunch inside the allocation, a requeue without the node, or why
 * not), each said in one line. The verdict for the step's record
 * ("relaunch", "relaunch-same", "requeue", "stop"; *why its line), or
 * NULL when there was nothing to decide. */
const char *te_recovery_srun_decide(const char **why);
/* Slurm's start of this run of the job (seconds), from the job srun read
 * at its start when it did, else SLURM_JOB_START_TIME; 0 unknown. */
int64_t te_recovery_job_start(void);
/* Then carry it out: the relaunch's word to the shield, or the requeue.
 * May end srun with exit code 93 when the progress guard stops the
 * requeues. */
void te_recovery_srun_act(void);

#endif
