/* SPDX-License-Identifier: GPL-2.0-or-later */
/* slurmd's job prolog and epilog: node health (jobprolog.c). */
#ifndef TE_JOBPROLOG_H
#define TE_JOBPROLOG_H

#include <slurm/spank.h>

/* The node health checks for the job about to run here: 0 (the job
 * starts; a failed node has left a verdict for the job's steps), or -1
 * (trainenv drained the node and the site's health_on_fail=fail: Slurm
 * requeues or cancels the job). */
int te_job_prolog(spank_t sp);
/* Removes the job's verdict file. Always 0. */
int te_job_epilog(spank_t sp);

#endif
