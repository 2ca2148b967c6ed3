/* SPDX-License-Identifier: GPL-2.0-or-later */
/* slurmstepd, per task: --train-preflight (stepd_preflight.c). */
#ifndef TE_STEPD_PREFLIGHT_H
#define TE_STEPD_PREFLIGHT_H

#include <stddef.h>
#include <stdint.h>
#include <slurm/spank.h>

/* --train-preflight for one task. 0, or -1 (the task fails: line is its
 * own error, why the others'), or -2 (the same, but the check could not be
 * started: not the node's fault). */
int te_stepd_preflight(spank_t sp, uint32_t local_id, uint32_t global_id,
		       char *line, size_t linelen, char *why, size_t whylen);

#endif
