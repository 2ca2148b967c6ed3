/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The shield starts srun again on its word (srun_hangup_relaunch.c). */
#ifndef TE_HANGUP_RELAUNCH_H
#define TE_HANGUP_RELAUNCH_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#include "srun_hangup_exec.h"

struct te_hup_relaunch {
	int word_rd, word_wr; /* the pipe srun's word comes on */
	int out[2]; /* srun's stdout, stderr: the relay's pipes, -1: the
		       shield's own */
	struct te_hup_hold hold; /* the new srun's first words (filled in) */
	sigset_t mask;		 /* srun's own signal mask */
};

/* Reads srun's word. Without one: 0 (srun ended for good). With one:
 * starts srun again and returns its pid (r->hold opened, or all -1), or
 * -1 with a reason. */
pid_t te_hup_relaunch(struct te_hup_relaunch *r, char *err, size_t errlen);

#endif
