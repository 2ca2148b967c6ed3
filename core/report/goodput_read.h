/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A job's step records read from its record directory (goodput_read.c),
 * for the goodput (goodput.h): by `trainenv record` and by srun after a
 * relaunched step. */
#ifndef TE_GOODPUT_READ_H
#define TE_GOODPUT_READ_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "report/goodput.h"

#define TE_GP_WALK_MAX 100000 /* directory entries looked at */

struct te_gp_reading {
	struct te_gp_step *steps; /* room for TE_GP_STEPS_MAX */
	size_t n;		  /* read */
	unsigned bad, other_job, not_owned, not_regular, too_large, over;
	unsigned looked;
};

/* Called for a file named as a record that is none (why: one line). */
typedef void (*te_gp_bad_fn)(const char *name, const char *why, void *ctx);

/* Reads the records "trainenv.STEP.json" of job in the directory dir
 * (taken: closed here): regular files of uid only, never through a link
 * or a FIFO, the whole file or nothing (TE_GP_RECORD_MAX), at most
 * TE_GP_STEPS_MAX records and TE_GP_WALK_MAX entries. 0, or -1 with errno
 * (the directory could not be read). */
int te_gp_read_job(int dir, uint32_t job, uid_t uid, struct te_gp_reading *rd,
		   te_gp_bad_fn bad, void *ctx);

#endif
