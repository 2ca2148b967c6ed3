/* SPDX-License-Identifier: GPL-2.0-or-later */
/* srun's side of restart inside the allocation (srun_relaunch.c). */
#ifndef TE_SRUN_RELAUNCH_H
#define TE_SRUN_RELAUNCH_H

#include <stdint.h>

#include "slurm_compat.h"

#include "report/recovery.h"
#include "report/relaunch.h"
#include "straggler/strag_exclude.h"

/* At srun's slurm_spank_init, before srun reads its options: in a job
 * with --train-spares, srun's environment asks for the job's nodes less
 * the spares (and their tasks), for a step given no node count. */
void te_relaunch_srun_early(void);
/* Once srun has read its options: the job's own values back. */
void te_relaunch_srun_restore(void);
/* Why this srun has no shield to start it again (said at a relaunch). */
void te_relaunch_no_shield(const char *why);
/* The effective --train-spares, 0: off. */
int te_relaunch_spares(void);
/* 1 when a failed step may start again: --train-spares, or
 * --train-transient's codes. */
int te_relaunch_on(void);
/* The restart budget without --train-requeue: one per spare, else 1 (a
 * transient fault's relaunch, with no spare). */
uint64_t te_relaunch_budget(void);
/* At user_init, with the job read: the restart count, the nodes left out,
 * the step's size, the explain and warning lines. job_excluded: the job's
 * own excluded nodes (expanded). */
void te_relaunch_srun_init(const job_info_t *j, uint32_t step,
			   const char *job_excluded);
/* The step's nodes (comma list; "" when not known): a node lost from
 * the job (--no-kill: Slurm takes it out of the job) is one of them. */
const char *te_relaunch_step_nodes(void);
/* For a straggler's exclusion (srun_strag_exclude.c), after
 * te_relaunch_srun_init: the spares of a step that is relaunched without
 * a node (0: none, or no relaunch for this step), the job's nodes neither
 * in the step nor left out, the restarts so far and their budget, why
 * srun cannot be started again (NULL: it can), the checkpoint directory.
 * The strings stay valid while srun runs. */
void te_relaunch_excl_facts(struct te_strag_excl_facts *f);
/* Adds the nodes relaunches left out to list (comma list); how many. */
uint32_t te_relaunch_excluded_add(char *list, size_t len);
/* After a relaunched step that is not relaunched again, with the steps'
 * records in record_dir: the job's goodput in one line (trainenv record's
 * first). */
void te_relaunch_srun_goodput(uint32_t job, const char *record_dir,
			      const char *verdict);
/* At the end, for the fault blamed: the verdict (TE_VERDICT_*), said in
 * one line. */
int te_relaunch_srun_decide(const struct te_fault *fault, const job_info_t *j,
			    uint64_t budget, struct te_relaunch_plan *plan);
/* For a relaunch (without the node, or on the same nodes): the job's
 * comment and the shield's word. 0, or -1 (said). */
int te_relaunch_srun_act(const struct te_relaunch_plan *plan,
			 const struct te_fault *fault, const job_info_t *j);

#endif
