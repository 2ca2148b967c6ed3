/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Restart inside the allocation, the pure part (relaunch.c): which nodes of
 * a job are spares (--train-spares), how a step started without a node
 * count leaves them out, the verdict at a failed step's end (relaunch
 * without the node, relaunch on the same nodes for a transient fault,
 * requeue, stop), the word srun gives its hang-up shield and the command
 * line the shield starts srun again with. */
#ifndef TE_RELAUNCH_H
#define TE_RELAUNCH_H

#include <stddef.h>
#include <stdint.h>

#include "report/recovery.h"

/* The environment a relaunched srun gets from its shield: how many
 * relaunches the job had in this run of its batch script, and the nodes
 * they left out (comma list). Internal: srun takes them out again. */
#define TE_RELAUNCH_COUNT_ENV "TRAINENV_RELAUNCH_COUNT"
#define TE_RELAUNCH_EXCLUDED_ENV "TRAINENV_RELAUNCH_EXCLUDED"
#define TE_RELAUNCH_FIRST_ENV "TRAINENV_RELAUNCH_FIRST"
/* The world size of the job's first step, for the program. */
#define TE_FIRST_WORLD_SIZE_ENV "TRAINENV_FIRST_WORLD_SIZE"

/* A step started without a node count in an allocation with spares: the
 * values srun's environment gets before it reads its options. job_nodes is
 * SLURM_JOB_NUM_NODES, ntasks SLURM_NTASKS (NULL: unset), per_node
 * SLURM_NTASKS_PER_NODE (NULL: unset). */
struct te_spares_env {
	char nodes[16];	 /* the new SLURM_JOB_NUM_NODES / SLURM_NNODES */
	char ntasks[16]; /* the new SLURM_NTASKS / SLURM_NPROCS, "" keep */
	char line[240];	 /* a warning, or "" */
};
/* 1 with env filled, 0 when nothing changes (no spares, no number), -1
 * when the spares leave no node (line says why). */
int te_spares_env(uint32_t spares, const char *job_nodes, const char *ntasks,
		  const char *per_node, struct te_spares_env *env);

/* 1 when s is a comma list of node names (letters, digits, '-', '_',
 * '.'), the only text srun's word to its shield carries. */
int te_relaunch_nodes_ok(const char *s);

/* The verdict at a step's end. */
enum {
	TE_VERDICT_NONE,     /* no failure, or no spares: the requeue decides */
	TE_VERDICT_RELAUNCH, /* start the step again without the node */
	TE_VERDICT_REQUEUE,  /* no relaunch (line says why): the requeue
				decides */
	TE_VERDICT_STOP,     /* neither relaunch nor requeue */
	TE_VERDICT_RELAUNCH_SAME, /* start the step again on the same nodes:
				     a transient fault (--train-transient) */
};

struct te_relaunch_facts {
	uint32_t spares;       /* --train-spares K, 0: off */
	uint64_t budget;       /* restarts allowed (relaunch and requeue) */
	uint32_t restarts;     /* restarts so far, of both kinds */
	const char *no_shield; /* why srun cannot be started again, or
				    NULL when its shield can */
	const char *ending;    /* the job is ending (scancel, its time
				  limit): why, or NULL */
	const char *job_nodes; /* the job's nodes now, comma list; NULL:
				  free_nodes says how many are left */
	uint32_t free_nodes;   /* the job's nodes less the nodes left out
				  and the failed one (job_nodes NULL) */
	const char *excluded;  /* nodes relaunches left out, comma list */
	uint32_t step_nodes;   /* the failed step's node count */
	uint32_t step_tasks;   /* and task count */
	int shrink;	       /* --train-shrink: the nodes left when no
				  spare is */
	const char *transient; /* --train-transient's exit codes (comma
				  list), NULL or "": none */
	const struct te_failrep *fails; /* the step's failure reports */
	size_t nfails;
	int hung; /* the exit watchdog found ranks hung past exit-grace */
};

struct te_relaunch_plan {
	int verdict;
	uint32_t nodes, tasks;	      /* the relaunched step's */
	char exclude[TE_EXCLUDE_MAX]; /* excluded + the failed node */
	char line[TE_RECOVERY_LINE_MAX];
};

/* A transient fault (--train-transient): 1 when at least one rank failed
 * on its own and every rank that did exited with a code of codes (a comma
 * list), *first the earliest; else 0. Not on its own: a rank trainenv
 * ended (exit-grace, stall), and a rank killed by SIGKILL or SIGTERM after
 * the first failure (srun or Slurm ending the step). */
int te_transient_fault(const struct te_failrep *fails, size_t n,
		       const char *codes, const struct te_failrep **first);

/* --train-shrink's rule: the nodes a step of step_nodes nodes and
 * step_tasks tasks starts again on when only free_nodes (fewer) are left,
 * the same tasks a node: free_nodes, or 0 when it cannot (shrink off, no
 * node left, or the tasks not evenly over the nodes). */
uint32_t te_relaunch_shrink_to(int shrink, uint32_t step_nodes,
			       uint32_t step_tasks, uint32_t free_nodes);

/* Decides, for a failure blamed by te_fault_find. Fills line for every
 * verdict but NONE. A transient fault (te_transient_fault, on a node that
 * was neither lost nor hung) is relaunched on the same nodes, with or
 * without spares; without spares the other verdicts are NONE (the requeue
 * decides) but the program's own error (STOP, said). Returns
 * plan->verdict. */
int te_relaunch_decide(const struct te_relaunch_facts *f,
		       const struct te_fault *fault,
		       struct te_relaunch_plan *plan);

/* srun's word to its shield, one line: "relaunch 1 RESTART NODES TASKS
 * OVERLAP FIRST EXCLUDE\n" (OVERLAP 0 or 1; FIRST the step's task count
 * in its first run; EXCLUDE: a comma list of node names, "-" for none: a
 * relaunch on the same nodes that no relaunch before left any out). */
#define TE_RELAUNCH_WORD_MAX (TE_EXCLUDE_MAX + 64)
struct te_relaunch_word {
	uint32_t restart; /* the restart this relaunch is */
	uint32_t nodes, tasks;
	int overlap;	/* the old step may still hold the nodes: Slurm keeps
			a step whose lost node never reports its end */
	uint32_t first; /* the step's task count in its first run */
	char exclude[TE_EXCLUDE_MAX];
};
int te_relaunch_word_format(const struct te_relaunch_word *w, char *buf,
			    size_t len);
/* 0, or -1 for anything but one well-formed line. */
int te_relaunch_word_parse(const char *line, struct te_relaunch_word *w);

/* The command line a relaunched srun runs: argv with, before its command,
 * --exclude (the user's own list and w's; none when w's is empty), --nodes,
 * --ntasks,
 * --open-mode=append and, with w->overlap, --overlap. out gets argc + 6
 * entries at most (with its NULL); the new option texts go into buf. The
 * new argc, or -1 (no command, or buf too small). */
int te_relaunch_argv(int argc, char *const *argv,
		     const struct te_relaunch_word *w, char **out, char *buf,
		     size_t len);

/* The job's comment keeps each relaunch, so that the restart count
 * survives a requeue: "trainenv: relaunch N without NODE", or "trainenv:
 * relaunch N on the same nodes" (--train-transient). How many entries of
 * either form are in comment. */
#define TE_RELAUNCH_COMMENT_TAG "trainenv: relaunch "
#define TE_RELAUNCH_COMMENT_SAME " on the same nodes"
#define TE_RELAUNCH_COMMENT_MAX 1000
uint32_t te_relaunch_comment_count(const char *comment);
/* comment (NULL: none) with the entry for restart and node (NULL: on the
 * same nodes) added: 1 with the new comment in out, -1 when it would not
 * fit or comment is not one printable line. */
int te_relaunch_comment_add(const char *comment, uint32_t restart,
			    const char *node, char *out, size_t len);

#endif
