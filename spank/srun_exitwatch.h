/* SPDX-License-Identifier: GPL-2.0-or-later */
/* srun's exit watchdog (--train-exit-grace, --train-stall): once a task of
 * the step has ended, the others have the grace to end; a rank whose
 * heartbeat stops says so itself (libtrainenv's watchdog). Either way srun
 * starts the step's hang report (trainenv-stacks), which names every rank
 * still running with its stack and ends the step per --train-exit-action.
 * Task exits and stalls come over the failure report's channel
 * (srun_failrep_listen.c). */
#ifndef TE_EXITWATCH_H
#define TE_EXITWATCH_H

#include <stdint.h>

#include "report/failrep.h"

/* Arms the watchdog for step job.step before the listener starts: grace in
 * seconds (0: exits are not watched), stall_s --train-stall (0: off; only
 * said to the report), action the exit-action word, helper the reporter's
 * path, record_dir (or NULL) where the report's JSON goes too. 0, or -1
 * when a value does not fit. */
int te_exitwatch_arm(uint32_t job, uint32_t step, unsigned grace_s,
		     unsigned stall_s, const char *action, const char *helper,
		     const char *record_dir);

/* The listener thread's side: a task's exit (any status); the monotonic
 * time (ms) the report is due, or 0 when none is; start the report. */
void te_exitwatch_task_exit(const struct te_failrep *r, int64_t now_ms);
void te_exitwatch_stall(const struct te_failrep *r, int64_t now_ms);
/* A torchrun node's workers came back (a restart): the grace started by
 * a worker's end is void, unless the report already ran. */
void te_exitwatch_resumed(void);
int64_t te_exitwatch_due(void);
void te_exitwatch_fire(int64_t now_ms);

/* srun's end: no report after this; a report already started goes on by
 * itself (it ends the step), srun does not wait for it. */
void te_exitwatch_disarm(void);
/* Reaps the report's process once it has ended (never waits); 1 while it
 * still runs. */
int te_exitwatch_reap(void);
/* The report ran and every rank still running was on one node (the only
 * node none of whose tasks had ended; a stalled rank's node): its name,
 * for --train-requeue; else NULL. Asks slurmctld for the step's layout:
 * srun's main thread, at its end, after te_failrep_finish. */
#define TE_EXITWATCH_NODES 4096 /* nodes whose ends are told apart */
const char *te_exitwatch_hang_node(void);
/* Why the hang report ran, or NULL when it did not. */
const char *te_exitwatch_fired(void);
/* The report ran and ends the step (exit-action term or kill): why, as
 * the failure report says it ("rank 3 on n2 sent no heartbeat for 10 s
 * (--train-stall=10)"); NULL otherwise. Ranks that fail from then on were
 * ended by trainenv: none of them is the step's first failure. */
const char *te_exitwatch_ending(void);

#endif
