/* SPDX-License-Identifier: GPL-2.0-or-later */
/* slurmstepd, per task: a torchrun task's worker watcher under
 * --train-exit-grace (stepd_watch.c). */
#ifndef TE_STEPD_WATCH_H
#define TE_STEPD_WATCH_H

#include <slurm/spank.h>

void te_stepd_watch_workers(spank_t sp);

#endif
