/* SPDX-License-Identifier: GPL-2.0-or-later */
/* srun's progress guard for --train-requeue (srun_progress.c): the newest
 * checkpoint of the job's checkpoint directory, and the state that counts
 * restarts in a row without a new one. */
#ifndef TE_SRUN_PROGRESS_H
#define TE_SRUN_PROGRESS_H

#include <stdint.h>

#include "slurm_compat.h"

/* The newest mtime (ns) of the user's own regular files in dir and its
 * subdirectories (one level), read as the user, bounded; 0 when none, -1
 * when dir cannot be read. */
int64_t te_progress_newest_checkpoint(const char *dir);
/* The same, in a child srun waits for timeout_ms at most: a directory on a
 * file system that hangs (a stuck NFS server, another user's FUSE mount
 * inside a shared directory) cannot hold srun's end. -1 when it could not
 * read the directory in time (the child is killed and left to end). */
int64_t te_progress_newest_bounded(const char *dir, int timeout_ms);
/* How long srun waits for that scan. */
#define TE_PROGRESS_SCAN_MS 5000

/* The progress guard, at a requeue of job j: 1 when the requeues must stop
 * (said: srun then exits with code 93), else 0. */
int te_progress_srun_stops(const job_info_t *j);

#endif
