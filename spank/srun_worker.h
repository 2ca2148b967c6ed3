/* SPDX-License-Identifier: GPL-2.0-or-later */
/* srun's worker threads (srun_worker.c): the time signal's timer
 * (srun_recovery.c) and a straggler's checkpoint watch
 * (srun_strag_exclude.c). One thread and the pipe that wakes it: srun
 * writes a byte to call on it, and closes the pipe at its end, which the
 * thread reads as its end. The thread starts with every signal blocked
 * (srun's own signal thread must receive them, never a worker). */
#ifndef TE_SRUN_WORKER_H
#define TE_SRUN_WORKER_H

#include <pthread.h>

struct te_srun_worker {
	pthread_t thread;
	int wake[2]; /* [0] the worker's, [1] srun's; -1 when stopped */
	int running;
};
#define TE_SRUN_WORKER_INIT        \
	{                          \
		.wake = { -1, -1 } \
	}

/* Starts fn(arg) on a thread of its own: 0, or -1 with errno (nothing
 * left open). */
int te_srun_worker_start(struct te_srun_worker *w, void *(*fn)(void *),
			 void *arg);
/* The worker, for up to ms (< 0: no bound): 1 when srun called on it
 * (a byte to read) or ended it (nothing more to read), 0 at the time. */
int te_srun_worker_wait(struct te_srun_worker *w, int ms);
/* srun's end: the pipe closed, the thread joined (what it is doing it
 * finishes first). Nothing when it never started. */
void te_srun_worker_stop(struct te_srun_worker *w);

#endif
