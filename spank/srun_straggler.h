/* SPDX-License-Identifier: GPL-2.0-or-later */
/* srun's side of the stragglers (--train-straggler, srun_straggler.c):
 * whether this step follows them, the ranks' window lines into
 * core/straggler/'s detector, its windows closed on srun's clock by the
 * report listener's thread (the only caller after the start), the nodes
 * named in srun's output, the last line kept for the step's record. */
#ifndef TE_SRUN_STRAGGLER_H
#define TE_SRUN_STRAGGLER_H

#include <stdint.h>

#include "report/failrep.h"

/* At local_user_init: 1 when this step follows stragglers (the setting
 * is on, the job has no NCCL profiler plugin of its own, no container);
 * what keeps it off is said in one line. Before the listener starts. */
int te_srun_strag_start(int argc, char **argv);
/* A rank's "straggler" report (its text, the window line). */
void te_srun_strag_report(const struct te_failrep *r);
/* When the current window closes (monotonic ms), 0 when off. */
int64_t te_srun_strag_due(void);
/* Closes the window: names the late nodes (at most a few lines a step). */
void te_srun_strag_close(int64_t now_ms);
/* The last line said (for the record's "straggler"), or NULL. */
const char *te_srun_strag_last(void);

#endif
