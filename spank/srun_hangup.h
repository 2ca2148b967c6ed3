/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The srun-side hang-up shield (srun_hangup.c). */
#ifndef TE_HANGUP_H
#define TE_HANGUP_H

#include <stddef.h>

/* Moves srun into a new session and turns the calling process into the
 * shield (see srun_hangup.c). Returns 0 where srun carries on: in the forked
 * child, or in the srun that a shield started again (srun_hangup_exec.c); -1
 * with a reason when the shield could not be set up (srun then carries on
 * unshielded, in this process). The shield itself never returns. */
int te_hangup_shield(char *err, size_t errlen);
/* Set before te_hangup_shield: srun may ask its shield to start it again
 * (--train-spares; srun_relaunch.c). */
extern int te_hangup_relaunch_wanted;

/* 1 when srun was asked for an interactive --pty session. */
int te_hangup_is_pty(void);
/* srun's own command line (/proc/self/cmdline, read again), argc. */
int te_srun_argv(char ***argv);

#endif
