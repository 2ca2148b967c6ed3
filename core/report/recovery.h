/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Recovery decisions, the pure part: which node a failed step blames, whether
 * the job is requeued without it (--train-requeue), the progress guard's
 * state, and when the time-limit signal is due (--train-time-signal).
 * spank/srun_recovery.c asks Slurm and acts on these decisions. */
#ifndef TE_RECOVERY_H
#define TE_RECOVERY_H

#include <stddef.h>
#include <stdint.h>

#include "report/failrep.h"

/* A task's exit code when its node failed a check before training (GPU
 * pre-flight): the node's fault, not the program's (sysexits' EX_TEMPFAIL). */
#define TE_EXIT_NODE_FAULT 75
/* srun's exit code when the progress guard stopped the requeues: "do not
 * requeue" (as NVIDIA's nvidia-resiliency-ext uses it). A rank that exits
 * with it says the same: the step is neither relaunched nor requeued. */
#define TE_EXIT_NO_PROGRESS 93
#define TE_EXIT_NO_RESTART TE_EXIT_NO_PROGRESS

/* sbatch's side marks a batch job that has its own --signal (Slurm 22.05
 * does not show it to srun): then the time signal is not sent unless the
 * user asked for it on srun or the site enforces it. */
#define TE_JOB_SIGNAL_ENV "TRAINENV_JOB_SIGNAL"

#define TE_NODE_MAX 64
#define TE_EXCLUDE_MAX 1024 /* the job's excluded node list */
#define TE_RECOVERY_LINE_MAX 512

/* What a failed step is blamed on. */
struct te_fault {
	int kind;		/* TE_FAULT_* */
	char node[TE_NODE_MAX]; /* the node at fault (NODE kinds) */
	char why[200];		/* "rank 3 failed its GPU pre-flight" */
	int lost;		/* the node is lost (Slurm sees it down) */
	int slow;		/* a straggler srun left out: no failure */
};
/* What happened to the fault's node, for srun's lines: "failed", or
 * "left out" for a straggler. */
const char *te_fault_verb(const struct te_fault *f);
enum {
	TE_FAULT_NONE,	  /* no failure seen */
	TE_FAULT_NODE,	  /* a node's fault: requeue follows it */
	TE_FAULT_PROGRAM, /* the program's own error */
	TE_FAULT_STOP,	  /* a rank exited TE_EXIT_NO_RESTART: never
			     restarted, whatever else failed */
};

/* The facts srun has at the end of a step. */
struct te_fault_facts {
	const struct te_failrep *fails; /* every failure report, any order */
	size_t nfails;
	const char *lost_node;	/* a node of the step Slurm marked down
					   or not responding, or NULL */
	const char *hang_node;	/* every rank the exit watchdog found
					   still running is on this node */
	const char *strag_node; /* srun ended the step to leave this
				   straggler out (--train-straggler-exclude),
				   or NULL */
	const char *strag_why;	/* then the naming line ("straggler: ...") */
	uint64_t fault_signals; /* requeue-signals: bit per signal */
	int any;		/* requeue-on=any */
};

/* Decides what the step's failure is blamed on: a rank's "do not restart"
 * (exit TE_EXIT_NO_RESTART) first, then a lost node, then the
 * earliest pre-flight failure (exit TE_EXIT_NODE_FAULT), the earliest rank
 * killed by a listed signal, the straggler srun ended the step for (never
 * a lost node: its why is the naming line), the hung node; else the earliest exit that is
 * the program's own (a node fault with requeue-on=any). */
void te_fault_find(const struct te_fault_facts *f, struct te_fault *out);

struct te_requeue_facts {
	int batch;		  /* a batch job (sbatch) */
	int requeue_allowed;	  /* Slurm's requeue flag of the job */
	uint64_t budget;	  /* --train-requeue N (0: off) */
	uint32_t restarts;	  /* the job's restart count so far */
	const char *excluded;	  /* the job's excluded nodes, or "" */
	uint32_t job_nodes;	  /* nodes the job asks for */
	uint32_t partition_nodes; /* nodes of its partition (0: unknown) */
	uint32_t excluded_count;  /* nodes in excluded (after expansion) */
	int expedited; /* Slurm's expedited requeue (25.11+, --requeue=expedite):
			* the requeued job is eligible at once, with no wait
			* for the credential window */
};

struct te_requeue_plan {
	int requeue;			 /* 1: requeue with exclude */
	char exclude[TE_EXCLUDE_MAX];	 /* the new excluded list */
	char line[TE_RECOVERY_LINE_MAX]; /* what srun prints, without prefix */
};

/* Decides the requeue. Always fills line (when there is a failure): either
 * "requeue: node n1 failed: WHY; the job is requeued without n1 (restart 1
 * of 2)" (with "; Slurm's expedited requeue: no credential window" inside
 * the parentheses for an expedited job) or "requeue: not requeued: WHY".
 * Returns plan->requeue. */
int te_requeue_decide(const struct te_requeue_facts *rf,
		      const struct te_fault *fault,
		      struct te_requeue_plan *plan);

/* Progress guard: the state kept in CHECKPOINT_DIR/.trainenv-progress, one
 * line "trainenv-progress 1 JOB RESTART NEWEST_NS STALLS". */
#define TE_PROGRESS_FILE ".trainenv-progress"
#define TE_PROGRESS_LINE_MAX 128
struct te_progress {
	uint32_t job, restart;
	int64_t newest_ns; /* newest checkpoint file's mtime */
	uint32_t stalls;   /* restarts in a row without change */
};
int te_progress_format(const struct te_progress *p, char *buf, size_t len);
int te_progress_parse(const char *line, struct te_progress *p);
/* Names that are trainenv's own in a checkpoint directory (the guard's
 * state, its temporary files, the launch's probe files): never progress. */
#define TE_OWN_FILE_PREFIX ".trainenv-"
/* What the guard makes of one entry of the checkpoint directory: a regular
 * file (is_dir 0) or a directory of owner, looked at by user me. Only the
 * user's own files and directories count: another user's file in a shared
 * directory, or one of trainenv's own, says nothing of this job. */
enum {
	TE_PROGRESS_SKIP,
	TE_PROGRESS_COUNT,
	TE_PROGRESS_DESCEND
};
int te_progress_entry(const char *name, int is_dir, uint32_t owner,
		      uint32_t me);
/* The temporary file the state is written to before its rename: its
 * random part hex (16 lower-case hex digits) makes it unguessable, so
 * another user cannot put a file or link there first. 0, or -1 (hex not
 * 16 hex digits, or len too small). */
#define TE_PROGRESS_TMP_HEX 16
int te_progress_tmp_name(const char *hex, char *name, size_t len);
/* The state after this failure: prev (NULL: none or another job's) and the
 * newest checkpoint now. Returns the new stall count. */
uint32_t te_progress_next(const struct te_progress *prev, uint32_t job,
			  uint32_t restart, int64_t newest_ns,
			  struct te_progress *next);

/* --train-time-signal: the moment (seconds since the epoch) SIG is due, or
 * 0 when never (no end time, or an offset past any time). */
int64_t te_time_signal_at(int64_t end_time, uint64_t secs_before);

#endif
