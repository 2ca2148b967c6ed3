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

#endif
