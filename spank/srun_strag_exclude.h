/* SPDX-License-Identifier: GPL-2.0-or-later */
/* srun's side of leaving a straggler out (--train-straggler-exclude=
 * checkpoint, srun_strag_exclude.c): at the step's first naming, whether
 * the node is excluded (core/straggler/strag_exclude.c decides, srun says
 * it in one line); then a thread of its own watches the checkpoint
 * directory and ends the step once a new checkpoint is there, and the
 * step's end blames the node so that the relaunch leaves it out. */
#ifndef TE_SRUN_STRAG_EXCLUDE_H
#define TE_SRUN_STRAG_EXCLUDE_H

#include <stdint.h>

#include "straggler/strag_exclude.h"

/* At local_user_init, once the stragglers are followed: the step and
 * what the relaunch knows of it (te_relaunch_excl_facts, whose strings
 * stay valid while srun runs). */
void te_srun_strag_excl_init(uint32_t job, uint32_t step,
			     const struct te_strag_excl_facts *f);
/* The report listener's thread, at each naming: line is the naming line
 * ("straggler: n2 (ranks 2-3) ..."). The step's first naming decides
 * (said in one line); never blocks. */
void te_srun_strag_excl_named(const char *node, const char *line);
/* Once srun is ending the step for the exclusion: why (the ranks' ends
 * that follow are trainenv's doing), else NULL. Any thread. */
const char *te_srun_strag_excl_ending(void);
/* srun's end, before the step's end is decided: the watch stops. */
void te_srun_strag_excl_stop(void);
/* The node srun ended the step for, or NULL; *why the naming line, *dir
 * the checkpoint directory (either may be NULL). */
const char *te_srun_strag_excl_node(const char **why, const char **dir);

#endif
