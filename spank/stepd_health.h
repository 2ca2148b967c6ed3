/* SPDX-License-Identifier: GPL-2.0-or-later */
/* slurmstepd, per task: the job prolog's health verdict for this node
 * (stepd_health.c). */
#ifndef TE_STEPD_HEALTH_H
#define TE_STEPD_HEALTH_H

#include <stddef.h>

/* 0 when the job prolog left no verdict against this node for the job;
 * -1 when it did: the task fails as a node fault, line its own error and
 * why the other ranks'. */
int te_stepd_health_verdict(char *line, size_t linelen, char *why,
			    size_t whylen);

/* 1 and the verdict's reason (its first failure) when there is one, for
 * srun's record of the step; else 0. Reads a local file only: fit for
 * task_exit. */
int te_stepd_health_reason(char *reason, size_t len);

/* The user's own checks (--train-health), as the user, with
 * trainenv-health --step: 0 when none failed (or none was asked for, or
 * they could not run: said on the task's stderr); -1 with line and why as
 * te_stepd_health_verdict when one keeps the node out of the step. */
int te_stepd_health_user(char *line, size_t linelen, char *why, size_t whylen);

#endif
