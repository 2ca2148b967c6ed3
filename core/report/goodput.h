/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Goodput: how a job's wall time went, from its step records (issue 35,
 * item 6). Each record (core/report/steprecord.h) is read into a plain
 * te_gp_step; te_gp_summarize splits the time from the job's start (the
 * earliest "job_start" of the records, else the first step's start) to the
 * last step's end into training, initialisation, time lost after failures
 * and other gaps, which add up to it exactly (milliseconds):
 *
 *   wall = training + initialisation + lost + other
 *
 * training: each step from its launch barrier's pass (its start where the
 * record does not say) to its end; initialisation: its start to that pass;
 * lost: from a failed step's end to the next step's start (detection,
 * relaunch or requeue), and the failed step's training after the newest
 * checkpoint where its record says (the work to be done again: all of the
 * step's training when the directory had none); other: the time before
 * the first step and the other gaps between steps. Time two steps share
 * counts once, for the one that started first. Pure. */
#ifndef TE_GOODPUT_H
#define TE_GOODPUT_H

#include <stddef.h>
#include <stdint.h>

#define TE_GP_STEPS_MAX 4096	      /* records of one job read */
#define TE_GP_RECORD_MAX (256 * 1024) /* srun writes no larger record */
#define TE_GP_NODE_MAX 64	      /* a node name's bytes, NUL included */
#define TE_GP_NODES_MAX 32	      /* excluded nodes kept */
#define TE_GP_SEC_MAX 100000000000LL  /* a time in seconds is below this */

enum te_gp_verdict {
	TE_GP_NONE, /* no "restart" in the record */
	TE_GP_RELAUNCH,
	TE_GP_REQUEUE,
	TE_GP_STOP,
};

struct te_gp_step {
	uint32_t job, step;
	int64_t start_ms, end_ms; /* srun's wall clock */
	/* the launch barrier's pass ("launch":{"passed":SECONDS}); start_ms
	 * when the record does not carry it (barrier_known 0) */
	int64_t barrier_ms;
	int barrier_known;
	int failed; /* a first failure, failed tasks, or a restart verdict */
	enum te_gp_verdict verdict;
	char without[TE_GP_NODE_MAX]; /* "without NODE" of the verdict's line */
	int same; /* a relaunch on the same nodes ("relaunch-same") */
	/* "job_start": Slurm's start of the job's run (job_start_known) */
	int64_t job_start_ms;
	int job_start_known;
	/* "checkpoint": 0 not recorded, 1 its newest file's mtime in
	 * checkpoint_ms, 2 the directory had none */
	int checkpoint_known;
	int64_t checkpoint_ms;
	/* te_gp_summarize's shares of this step */
	int64_t init_ms, train_ms;
	int64_t gap_ms;	    /* the gap after this step, to the next start */
	int64_t recover_ms; /* failed: its end to the next barrier pass */
	int64_t redo_ms;    /* failed: training after the newest checkpoint,
			       counted as lost */
	int has_next;	    /* a step followed (gap_ms, recover_ms) */
};

struct te_gp_summary {
	uint32_t job;
	unsigned nsteps, failures, relaunches, requeues, stops;
	unsigned runs;		 /* step ids starting again: runs of the job */
	unsigned barriers_known; /* steps whose barrier pass is known */
	int64_t first_start_ms, last_end_ms;
	int64_t wall_ms, train_ms, init_ms, lost_ms, other_ms;
	int64_t before_ms; /* the job's start to its first step's, in other */
	int64_t redo_ms;   /* training after the newest checkpoint, in lost */
	unsigned checkpoints_known; /* failed steps whose record says */
	char nodes[TE_GP_NODES_MAX][TE_GP_NODE_MAX]; /* excluded, first seen */
	unsigned nnodes, nodes_more;
};

/* One record s[0..n) (at most TE_GP_RECORD_MAX bytes) into *st: 0, or -1
 * with err one line why (not JSON, not a step record, a field out of
 * range). */
int te_gp_record_parse(const char *s, size_t n, struct te_gp_step *st,
		       char *err, size_t errlen);

/* Sorts steps[0..n) by start (then step id) and fills their shares and
 * *sum. 0, or -1 when n is 0 or over TE_GP_STEPS_MAX. */
int te_gp_summarize(struct te_gp_step *steps, size_t n,
		    struct te_gp_summary *sum);

/* The summary as text, one line per fact, into buf[0..len): the first
 * line the job's, then one per failure, then notes. 0, or -1 when cut. */
int te_gp_text(const struct te_gp_step *steps, size_t n,
	       const struct te_gp_summary *sum, char *buf, size_t len);

#endif
