/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libtrainenv: the job-wide barrier of trainenv for training programs.
 *
 * Call trainenv_barrier() right before the first collective (before
 * torch.distributed.init_process_group, deepspeed.init_distributed, ...)
 * so that no rank enters it, and starts its watchdog, long before the
 * last one. It needs a PMIx server: run the step with `srun --mpi=pmix`
 * (or MpiDefault=pmix). Every rank of the step must call it, in the same
 * order as its other barriers; one process per PMIx rank (see
 * docs/pmix.md for torchrun). It may be called before or after MPI_Init.
 *
 * Link with -ltrainenv. Not thread-safe with itself: calls are
 * serialised. */
#ifndef TRAINENV_H
#define TRAINENV_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Enough for any message of this library. */
#define TRAINENV_ERR_MAX 1200

/* Waits until every rank of the step has called it, at most timeout_s
 * seconds (<= 0: the step's --train-barrier value, else 300 s). Returns 0,
 * or -1 with one line in err, e.g. "barrier timed out after 30 s: 5 of 6
 * ranks arrived; missing: rank 3 (node n2)". After a failure the job
 * should end: the ranks that arrived are no longer in step. */
int trainenv_barrier(double timeout_s, char *err, size_t errlen);

/* Optional: keep the PMIx client open between barriers, so that repeated
 * barriers cost only the fence. trainenv_finalize() closes it; call it
 * before the process exits (Slurm ends the whole step when a PMIx client
 * exits without closing). Nested calls are counted. 0 or -1. */
int trainenv_init(char *err, size_t errlen);
void trainenv_finalize(void);

/* For --train-stall: call it once per training step (it costs no system
 * call: a clock read and a store). Once the step's last call is older than
 * the --train-stall seconds, srun reports this rank as stalled, with every
 * rank's stack, and ends the step per --train-exit-action (see trainenv(8),
 * HANGS). Without --train-stall it only stores the time. Thread-safe. */
void trainenv_heartbeat(void);

/* "0.1.0" */
const char *trainenv_version(void);

#ifdef __cplusplus
}
#endif

#endif
